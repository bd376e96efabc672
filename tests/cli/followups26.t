# Items the last reviews left (followups26): one block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my ($c, $o, $e);

# 1. The node-spanning warnings said "at least 1 ranks on each": a group
# that keeps one rank on a node says "1 rank".  12 GPUs in 3-GPU nodes
# under tp 4: ranks 0-3 sit on node 0 (0-2) and node 1 (3), so a group
# keeps 1 rank on its poorer node.
{
    ($c, $o, $e) = run_gp(qw(train llama3-70b --gpu h100-sxm --gpus 12 --gpus-per-node 3 --tp 4));
    like($o, qr/^warnings: tp_leaves_node \(tp 4 spans 2 nodes, at least 1 rank on each:/m,
         'tp 4 on 3-GPU nodes: "1 rank", singular') or diag $o, $e;
}

# 3. validate --explain's did-you-mean listed every id holding the text,
# alphabetically: '' and 'x' "meant" the first six ids
# (accelerate-opt30b..., amd-accept-...).  The nearest ids are offered
# (holding it whole, then a few edits away, then a long shared
# beginning); where none is near, where to find the ids.
{
    for my $q ('', 'x') {
        ($c, $o, $e) = run_gp('validate', '--explain', $q);
        is($c, 2, "validate --explain '$q': a usage error");
        unlike($e, qr/did you mean/, '... with no id "meant" by it') or diag $e;
        like($e, qr/`gpuplan validate --format csv` lists the ids/, '... and says where the ids are');
    }
    ($c, $o, $e) = run_gp(qw(validate --explain mi300x-8g-1MiB));
    like($e, qr/did you mean (?:amd-accept-allreduce-mi300x-8g-1MiB|coll-allreduce-mi300x-8g-1MiB-aac8), (?:amd-accept-allreduce-mi300x-8g-1MiB|coll-allreduce-mi300x-8g-1MiB-aac8)\?/,
         'a part of an id: the ids that hold it, only those') or diag $e;
    ($c, $o, $e) = run_gp(qw(validate --explain torchtitan2506-h20O));
    like($e, qr/did you mean torchtitan2506-h200-llama31-8b-fsdp32, /,
         'a typo: the ids sharing the longest beginning first') or diag $e;
}

# 8. plan's help said "The job as for `gpuplan train`" while its --method
# default is pretrain where train's is full (and with it --stack, --seq
# and --global-batch): the help says the default that applies, as the
# defaults line of a plan does.
{
    ($c, $o, $e) = run_gp(qw(plan --help));
    like($o, qr/The job as for `gpuplan train`, but pretraining unless --method says\s+otherwise \(train's default is full\)/,
         'plan --help: pretraining unless --method says otherwise') or diag $o;
    ($c, $o, $e) = run_gp(qw(plan llama3-8b --gpu h100-sxm --gpus 8 --top 1));
    like($o, qr/^defaults: method=pretrain, .*stack=megatron/m, '... as its defaults line says') or diag $o, $e;
}

# 11. fit's text said the --seq past the model's context (max_seq) where
# its --format json did not; train's JSON carries it as context_note.
{
    ($c, $o, $e) = run_gp(qw(fit llama3-8b --gpu h100-sxm --seq 1048576 --format json));
    like($o, qr/"context_note":"seq 1048576 is past llama3-8b's stated context of 8192 tokens \(max_seq\)/,
         'fit --format json: the context note, as train\'s JSON') or diag $o, $e;
    ($c, $o, $e) = run_gp(qw(fit llama3-8b --gpu h100-sxm --seq 8192 --format json));
    unlike($o, qr/context_note/, '... and none within the context');
}

# 9. A hybrid stack under the hf stack's default eager kernels was refused
# as "--kernels eager: ... give --kernels fused" to a user who gave no
# --kernels: the message says the value is the stack's default, and
# names --stack megatron (which runs Megatron-Core's MambaMixer).
{
    ($c, $o, $e) = run_gp(qw(train nemotron-3-nano-30b-a3b --gpu h100-sxm --gpus 8));
    is($c, 2, 'a hybrid stack, no --stack or --kernels: a usage error');
    like($e, qr/^gpuplan: train: --kernels not given: stack hf \(the default stack\) runs eager kernels by default, .* give --stack megatron$/m,
         '... saying where eager came from and suggesting --stack megatron') or diag $e;
    ($c, $o, $e) = run_gp(qw(train nemotron-3-nano-30b-a3b --gpu h100-sxm --gpus 8 --stack hf));
    like($e, qr/stack hf runs eager kernels by default, .* give --stack megatron or --kernels fused$/m,
         '--stack hf given: either way out') or diag $e;
    ($c, $o, $e) = run_gp(qw(train nemotron-3-nano-30b-a3b --gpu h100-sxm --gpus 8 --stack megatron));
    is($c, 0, '--stack megatron runs it') or diag $e;
    ($c, $o, $e) = run_gp(qw(train nemotron-3-nano-30b-a3b --gpu h100-sxm --gpus 8 --stack megatron --kernels eager));
    like($e, qr/--kernels eager: a hybrid stack/, 'eager given: the engine\'s refusal, naming the given value') or diag $e;
}

# 10. plan --optimizer muon --offload optimizer blamed "--zero 0", which
# the user did not give: Muon on stack megatron makes the searched ZeRO
# list 0 alone (Megatron-Core's Muon refuses the distributed optimizer),
# and offload needs a ZeRO stage.  The searched default loses its 0; left
# empty, the message says it was the default and why.
{
    ($c, $o, $e) = run_gp(qw(plan llama3-70b --gpu h100-sxm --gpus 8 --optimizer muon --offload optimizer));
    is($c, 2, 'plan muon + offload optimizer: a usage error');
    unlike($e, qr/--zero 0 cannot/, '... not blaming a --zero 0 not given') or diag $e;
    like($e, qr/the searched ZeRO stages \(no zero list given\) are 0 alone: Megatron-Core's Muon refuses the distributed optimizer/,
         '... saying the list is the searched default, and why') or diag $e;
    ($c, $o, $e) = run_gp(qw(plan llama3-70b --gpu h100-sxm --gpus 8 --offload optimizer --zero), "0,1");
    like($e, qr/--zero 0 cannot be searched with it/, 'a --zero 0 given: still named') or diag $e;
}

# 5. comm's size bounds (--min -5, --min 2, --max 5000PB, --min above
# --max) exited 2 while every other out-of-range value exits 1: a value
# that reads but lies outside the bounds exits 1; one that does not read
# (--min 1x) stays a usage error, exit 2.
{
    for my $a (['--min', '-5'], ['--min', '2'], ['--max', '5000PB'], ['--min', '1GiB', '--max', '1MiB']) {
        ($c, $o, $e) = run_gp('comm', '--gpu', 'h100-sxm', @$a);
        is($c, 1, "comm @$a: out of range, exit 1") or diag $e;
        like($e, qr/^gpuplan: comm: .*--(?:min|max)/m, '... naming the bound') or diag $e;
    }
    ($c, $o, $e) = run_gp(qw(comm --gpu h100-sxm --min 1x));
    is($c, 2, 'comm --min 1x: malformed, a usage error (exit 2)');
}

# 6. plan --gpus 8,8 was an error while --gpu h100-sxm,h100-sxm was a
# note (priced once): one rule for a value listed twice in any list
# option -- refused, naming the option and the value, exit 1 (the rule of
# --gpus, --zero, --micro-batch and --recompute lists).
{
    for my $a (['--gpu', 'h100-sxm,h100-sxm', '--gpus', '8'], ['--gpu', 'h100-sxm', '--gpus', '8,8']) {
        ($c, $o, $e) = run_gp('plan', 'llama3-8b', @$a);
        is($c, 1, "plan @$a: refused, exit 1") or diag $e;
        like($e, qr/^gpuplan: plan: --gpus? lists '?(?:h100-sxm|8)'? twice$/m, '... naming the option and the value') or diag $e;
    }
}

# 4. --kv FP8 was read (kv is declared fold) while --optimizer Muon was an
# unknown optimizer: one rule, in options.normal, for every option whose
# value is a name (not a file's): a name the option reads is taken in
# either case; text that is no name stays as typed in the refusal.
{
    for my $a (['--optimizer', 'Muon'], ['--stack', 'Megatron'], ['--kernels', 'Fused']) {
        ($c, $o, $e) = run_gp(qw(train llama3-8b --gpu h100-sxm --gpus 8), @$a);
        is($c, 0, "train @$a: read as " . lc($a->[1])) or diag $e;
    }
    ($c, $o, $e) = run_gp(qw(train llama3-8b --gpu h100-sxm --gpus 8 --stack BOGUS));
    is($c, 2, '--stack BOGUS: an unknown name, exit 2');
    like($e, qr/unknown stack 'BOGUS' \(expected megatron\|deepspeed\|hf\)/, '... quoted as typed, with the names') or diag $e;
}

done_testing();
