# Small ones a new user met: each said the wrong thing or nothing.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my ($c, $o, $e);

# --budget 0 (or below) is an amount: what is wrong is its size.  Before:
# "expected an amount like $50k", as for a word that is no amount.
for my $b ('0', '$0', '0k', '-5k') {
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--tokens', '1e12', '--budget', $b);
    isnt($c, 0, "--budget $b: refused");
    like($e, qr/^gpuplan: plan: --budget '\Q$b\E': must be a positive amount \(a free card, --price 0, meets any budget\)$/m, "--budget $b: must be positive") or diag $e;
}
($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--tokens', '1e12', '--budget', 'abc');
like($e, qr/--budget 'abc': expected an amount like \$50k/, '--budget abc: still not an amount');

# A card listed twice (h100-sxm,h100-sxm, perhaps a slip for
# h100-sxm,h200-sxm) was priced once with a note on stderr, where a count
# listed twice (--gpus 8,8) was an error: one rule for every list
# (followups26), a value listed twice is refused, naming it (exit 1).
($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm,h100-sxm');
is($c, 1, 'plan --gpu h100-sxm,h100-sxm: refused') or diag $e;
like($e, qr/^gpuplan: plan: --gpu lists 'h100-sxm' twice$/m, 'plan: naming the card');
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm,h200-sxm,h100-sxm,h100-sxm');
is($c, 1, 'infer --gpu with a repeat: refused') or diag $e;
like($e, qr/^gpuplan: infer: --gpu lists 'h100-sxm' twice$/m, 'infer: naming the card');
is($o, '', 'infer: no rows');
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm,h200-sxm');
is($e, '', 'two different cards: no note');

# comm --nccl: a release the table of NCCL tags does not hold has no tuner
# rules to follow.  Before: 2.99 priced as the newest.
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--nccl', '2.99');
isnt($c, 0, 'comm --nccl 2.99: refused');
like($e, qr/--nccl 2\.99 is not an NCCL release gpuplan knows \(known: 2\.3\.7, .*2\.20\.3\/5, .*2\.30\.3\/4\/7\)/,
     'comm --nccl 2.99: the releases known') or diag $e;
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--nccl', '2.20.9');
isnt($c, 0, 'comm --nccl 2.20.9 (no such tag): refused');
for my $v ('2.20.5', '2.20') {
    ($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--nccl', $v);
    is($c, 0, "comm --nccl $v: a release (or its minor) known") or diag $e;
}

# infer --offload when the weights fit: no layer is in host memory, so the
# host memory and the link it would copy over are not assumptions of the
# answer.  Before: "host_memory=32GB, pcie_bw=50.4GB/s (offloaded layers
# copied ...)" beside "layers in host memory 0".
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--offload');
like($o, qr/^layers in host memory\s+0 /m, 'llama3-8b on an H100: nothing offloaded');
unlike($o, qr/host_memory|pcie.bw/, 'so no host memory or link on the assumed line');
($c, $o, $e) = run_gp('infer', 'llama3-70b', '--gpu', 'rtx-4090', '--offload', '--runtime', 'vllm',
                      '--weights', '4.85', '--batch', '1');
like($o, qr/^layers in host memory\s+47 /m, 'llama3-70b on a 4090: 47 layers offloaded');
like($o, qr/^assumed .*host_memory=32GB, pcie bw: 25\.2GB\/s/m, 'its host memory and link said');

# --zero-reduce reduce_scatter on the deepspeed stack at --zero 1 was
# priced as an all-reduce without a word (DeepSpeed's stage 1 has no
# reduce-scatter path): refused, a usage error naming the flags.
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--stack', 'deepspeed',
                      '--zero', '1', '--zero-reduce', 'reduce_scatter');
is($c, 2, 'deepspeed --zero 1 --zero-reduce reduce_scatter: a usage error') or diag $e;
like($e, qr/^gpuplan: train: --zero-reduce reduce_scatter: DeepSpeed's ZeRO stage 1 reduces gradients by an all-reduce in every version \(it has no reduce-scatter path\): state --zero 2, --zero-reduce allreduce, or another stack$/m,
     'names the flag and what to state instead') or diag $e;
is($o, '', 'no step printed');

# --zero-reduce reduce_scatter at --zero 0 (the default) was priced as
# DDP's all-reduce without a word: no stack reduce-scatters without ZeRO.
# Refused on every stack, a usage error naming the flags; a plan over
# layouts still takes it (its zero 0 layouts all-reduce, the rest follow).
for my $stack (qw(megatron deepspeed hf)) {
  ($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--stack', $stack,
                        '--zero-reduce', 'reduce_scatter');
  is($c, 2, "$stack --zero 0 --zero-reduce reduce_scatter: a usage error") or diag $e;
  like($e, qr/^gpuplan: train: --zero-reduce reduce_scatter is ZeRO's \(stages 1 to 3\) or FSDP's: at --zero 0 every rank keeps whole gradients and all-reduces them; state --zero 1, 2 or 3$/m,
       "... $stack: names the flags and what to state") or diag $e;
}
($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero-reduce', 'reduce_scatter');
is($c, 0, 'plan --zero-reduce reduce_scatter: layouts ranked') or diag $e;

done_testing();
