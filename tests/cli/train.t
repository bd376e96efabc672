# gpuplan train: the step table, the summary lines, formats and errors; and
# scripts/h800_vs_h100.lua, whose conclusion must follow from its table.
use strict;
use warnings;
use Test::More;
use JSON::PP qw(decode_json);
require './tests/cli/lib.pl';

my @job = ('llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '1',
           '--seq', '4096', '--method', 'pretrain', '--recompute', 'full',
           '--global-batch', '64');
my ($c, $o, $e) = run_gp('train', @job, '--tokens', '1e12', '--price', '$2.00/h');
is($c, 0, 'train exits 0');
like($o, qr/^llama3-8b on 8 x h100-sxm \(tp 1, pp 1, dp 8, cp 1, zero 1\), pretrain bf16, seq 4096, global batch 64 \(8 micro-batches of 1\)$/m,
     'title names the layout and the batch');
like($o, qr/^part\s+seconds\s+share\s+hidden \(s\)\s+80% range$/m, 'part table header');
like($o, qr/^compute\s+\d+\.\d{4}\s+\d+\.\d%/m, 'compute row');
like($o, qr/^step\s+\d+\.\d{4}\s+100\.0%/m, 'step row');
like($o, qr/^throughput: \d+ tokens\/s \(\d+-\d+\), \d+ per GPU; MFU \d+\.\d%, HFU \d+\.\d% of 989 TFLOPS bf16 dense/m,
     'throughput line against the dense peak');
like($o, qr/^memory: \d+\.\d GiB of 79\.1 GiB per GPU; fits: yes/m, 'memory verdict');
unlike($o, qr/does not fit|if it fit/, 'a layout that fits has no "if it fit"');
# days x 24 h x 8 GPUs x $2/h; the line states both.
my ($days, $dlo, $dhi, $cost, $clo, $chi) = $o =~ /^time to train 1e\+12 tokens: ([\d.]+) days \(([\d.]+)-([\d.]+)\) on 8 GPUs; cost (\d+) USD \((\d+)-(\d+)\) at 2\.00 USD\/GPU-h$/m;
ok(defined $days, 'time and cost line, each with its 80% range');
ok(abs($cost - $days * 24 * 8 * 2) <= $cost * 0.002 + 1, 'cost = days x 24 x GPUs x price (rounding)');
# The ranges: the regime the ranges line names (megatron pretraining,
# dense, pure data parallel on one node: pooled up to
# stack=megatron/moe=dense) has factors lo, hi in validation/ranges.lua;
# days and cost are both times, so both are value x lo .. value x hi
# (to their printed roundings: 0.05 day, 1 USD, over the value's 0.05 and
# 0.5 relative).
my ($regime) = $o =~ /^ranges: where 80% of published runs like this landed \(\d+ cases: (\S+)\)$/m;
ok(defined $regime, 'the ranges line names the regime') or diag $o;
my ($flo, $fhi) = do {
    open my $fh, '<', 'validation/ranges.lua' or die;
    my $t = do { local $/; <$fh> };
    my ($train) = $t =~ /\n    train = \{\n(.*?)\n    \},/s;
    my $k = quotemeta($regime // '');
    $train =~ /\["$k"\] = \{ cases = \d+, lo = ([\d.]+), hi = ([\d.]+)/;
};
ok(defined $flo && abs($dlo - $days * $flo) <= 0.05 + 0.0005 * $days * $flo
   && abs($dhi - $days * $fhi) <= 0.05 + 0.0005 * $days * $fhi,
   'days range = days x the regime\'s factors') or diag "$days $dlo $dhi $flo $fhi";
ok(defined $flo && abs($clo - $cost * $flo) <= 1 + 0.0005 * $cost * $flo
   && abs($chi - $cost * $fhi) <= 1 + 0.0005 * $cost * $fhi,
   'cost range = cost x the same factors');
like($o, qr/^defaults: .*system=dgx-h100/m, 'defaults name the node');
unlike($o, qr/^defaults: .*global_batch=/m, 'a global batch given is not a default');
# The default global batch is the kind's count rounded up to a multiple
# of dp x batch: 128 fine-tuning sequences on dp 6 are 22 x 6 = 132, and
# the defaults say it was rounded (they said "132 (128 sequences per
# step)", and at dp 16777216 "16777216 (128 sequences per step)").
{
    my ($cg, $og, $eg) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '6', '--zero', '1');
    like($og, qr/global_batch=132 \(128 sequences per step, rounded up to a multiple of dp x batch = 6\)/,
         'dp 6: 128 rounded up to 132, said');
    ($cg, $og, $eg) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '1');
    like($og, qr/global_batch=128 \(128 sequences per step\),/, 'dp 8: 128 as it is');
}

# Hybrid sharding says so in the title: its shard groups are the node's
# (a DGX H100 node: 8 GPUs; 16 GPUs are 2 nodes of them).
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '16',
                      '--fsdp', 'hybrid_shard', '--global-batch', '64');
is($c, 0, 'train --fsdp hybrid_shard exits 0') or diag $e;
like($o, qr/^llama3-8b on 16 x h100-sxm \(tp 1, pp 1, dp 16, cp 1, fsdp hybrid_shard \(= zero 3 hybrid in 8-GPU nodes\)\)/m,
     'hybrid_shard: the title names the strategy and the shard group');
# The title names the sharding the user asked for: shard_grad_op with the
# gradients synced once a step prices as ZeRO 1 (memory.sharding), and
# says both.
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '16',
                      '--fsdp', 'shard_grad_op', '--grad-sync', 'step');
is($c, 0, 'train --fsdp shard_grad_op --grad-sync step exits 0') or diag $e;
like($o, qr/^llama3-8b on 16 x h100-sxm \(tp 1, pp 1, dp 16, cp 1, fsdp shard_grad_op, grad-sync step \(= zero 1\)\),/m,
     'title: fsdp shard_grad_op, grad-sync step (= zero 1), not a bare "zero 1"');
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '16', '--zero', '1');
like($o, qr/^llama3-8b on 16 x h100-sxm \(tp 1, pp 1, dp 16, cp 1, zero 1\),/m,
     'title: --zero 1 without FSDP stays "zero 1"');
# tp 8 leaves one data-parallel rank in each node: nothing is sharded.
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '16', '--tp', '8',
                      '--sp', '--fsdp', 'hybrid_shard', '--global-batch', '64');
like($o, qr/^warnings: zero_dp1 \(ZeRO-3 over shard groups of one rank \(one data-parallel rank in each 8-GPU node under hybrid sharding\) shards nothing\)/m,
     'hybrid_shard with one rank a node: the warning says why');
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '16',
                      '--fsdp', 'hybrid', '--global-batch', '64');
isnt($c, 0, 'an unknown fsdp strategy fails');
like($e, qr/fsdp must be full_shard, shard_grad_op or hybrid_shard \(got 'hybrid'\)/,
     'and names the strategies');
unlike($e, qr/\.lua:\d+/, 'without an internal file:line');
# A misspelt recompute policy is the user's key, not the engine's argument
# ("bad argument #4 to 'gpuplan.core.train'" before).
($c, $o, $e) = run_gp('train', @job[0 .. 4], '--recompute', 'fool');
isnt($c, 0, 'an unknown recompute policy fails');
like($e, qr/recompute must be none, selective, full, op or auto \(got 'fool'\)/,
     'and names the policies');
unlike($e, qr/bad argument|core\.train/, 'without the engine\'s argument position');

($c, $o, $e) = run_gp('train', @job, '--format', 'json');
is($c, 0, 'json exits 0');
like($o, qr/"step_s":/, 'json has the step');
like($o, qr/"parts":\[/, 'json has the parts');

# Scaling is measured from the smallest count that fits (tests/lua/train.t
# checks which: 4 H100s for this 8B job), or from --scaling-base, named.
($c, $o, $e) = run_gp('train', @job, '--scaling', '--gpus', '16', '--global-batch', '128');
like($o, qr/^scaling efficiency: \d\.\d\d against 4 GPUs \(the smallest count that fits, TP\d.*: \d+ tokens\/s per GPU there\)/m,
     'scaling line names the base');
($c, $o, $e) = run_gp('train', @job, '--scaling-base', '8', '--gpus', '16', '--global-batch', '128');
like($o, qr/^scaling efficiency: \d\.\d\d against 8 GPUs \(scaling_base, /m, '--scaling-base 8');
($c, $o, $e) = run_gp('train', @job, '--scaling-base', '8', '--global-batch', '128', '--format', 'json');
like($o, qr/"scaling":\{[^}]*"base":"scaling_base"[^}]*"gpus":8/, 'json: the base named');

# A layout that does not fit (the same job with selective recompute keeps
# 79.9 GiB of activations and states on a 79.1 GiB card): the verdict leads,
# each figure is labelled "if it fit", the JSON says fits false at its top;
# exit 0, a well-formed question answered no.
my @nofit = map { $_ eq 'full' ? 'selective' : $_ } @job;
($c, $o, $e) = run_gp('train', @nofit, '--tokens', '1e12', '--price', '$2.00/h');
is($c, 0, 'a layout that does not fit is an answer: exit 0');
like($o, qr/\Adoes not fit: memory: needs [\d.]+ GiB per GPU, short by [\d.]+ GiB; .*what it would take if it fit\n/,
     'the verdict is the first line');
like($o, qr/^throughput \(if it fit\): /m, 'throughput labelled');
like($o, qr/^time to train 1e\+12 tokens \(if it fit\): [\d.]+ days \([\d.]+-[\d.]+\) on 8 GPUs; cost \d+ USD/m, 'time and cost labelled');
unlike($o, qr/^(throughput|time to train [^(]*):/m, 'no unlabelled figure');
($c, $o, $e) = run_gp('train', @nofit, '--format', 'json');
like($o, qr/\A\{.*"fits":false/s, 'json: fits false at the top level');
like($o, qr/"why":"memory: needs [\d.]+ GiB per GPU/, 'json: and why');

# Errors: usage (2) and job errors (1), each naming the input.
($c, $o, $e) = run_gp('train', 'llama3-8b');
is($c, 2, 'missing --gpu is a usage error');
like($e, qr/--gpu ID is required/, 'says so');
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'a100-sxm-80gb', '--precision', 'fp8');
is($c, 1, 'fp8 on A100 exits 1');
like($e, qr/fp8 training needs fp8 tensor cores/, 'and says why');
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--global-batch', '12');
is($c, 2, 'a global batch that does not divide: a usage error, exit 2');
like($e, qr/--global-batch 12 is not a multiple of dp x batch = 8 x 1/, 'names the numbers');
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--kv', 'fp8');
is($c, 2, '--kv is not a training option');
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--tokens', 'lots');
is($c, 2, '--tokens must be a number');
unlike($e, qr/\.lua:\d+/, 'no internal file:line in the message');

# A job across nodes without NICs names the node and the options to give;
# once they are given the defaults stop saying "no NICs".
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h800-pcie', '--gpus', '64');
is($c, 1, 'no NICs across nodes exits 1');
like($e, qr/the node built from h800-pcie \(pcie5, no catalog system\) has no NICs: give --nics N and --nic-fabric ID \(scale-out fabrics: /, 'names the node and the flags');
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h800-pcie', '--gpus', '64',
                       '--nics', '4', '--nic-fabric', 'roce-400');
is($c, 0, 'with --nics and --nic-fabric it runs');
like($o, qr/^defaults: .*gpus_per_node=8 \(h800-pcie on pcie5\)/m, 'the built node is named');
unlike($o, qr/no NICs/, 'and no longer "no NICs"');

# The study script: its conclusion follows from its table.
($c, $o, $e) = run_gp('run', 'scripts/h800_vs_h100.lua');
is($c, 0, 'h800_vs_h100 runs');
my %step;
for my $line (split /\n/, $o) {
    if ($line =~ /^\s*(\d+)\s+(TP\d(?: PP\d)?)\s+\d+\s+(h[18]00-sxm)\s+([\d.]+)\s/) {
        $step{"$1 $2 $3"} = $4;
    }
}
is(scalar keys %step, 18, '3 counts x 3 layouts x 2 cards');
for my $n (64, 512) {
    # The table prints steps to 0.01 s: the ratio of the printed steps
    # matches the printed penalty to 0.2 percentage points.
    my $pen = 100 * ($step{"$n TP8 h800-sxm"} / $step{"$n TP8 h100-sxm"} - 1);
    my ($said) = $o =~ /^\s+$n GPUs: TP8 \+([\d.]+)%/m;
    ok(defined $said && abs($said - $pen) < 0.2,
       "$n GPUs: the TP8 penalty is the ratio of the table's steps");
}
# One figure when both ends round alike ("14%"), else a range ("26-28%").
my ($lo, $hi) = $o =~ /TP8: H800 is (\d+)(?:-(\d+))?% slower than H100 -- (?:inside|below|above|overlapping)/;
ok(defined $lo, 'a TP8 conclusion');
my $span = defined $hi ? "$lo-$hi" : $lo;
$hi //= $lo;
my $verdict = ($lo >= 20 && $hi <= 35) ? 'inside' : 'other';
like($o, qr/TP8: H800 is $span% slower than H100 -- \Q@{[$verdict eq 'inside' ? 'inside' : '']}\E/,
     'the TP8 verdict matches its range');
like($o, qr/On 8 GPUs no layout fits/, 'says when nothing fits');
like($o, qr/ZeRO-1 at DP 1 shards nothing/, 'says when ZeRO-1 does nothing');
for my $n (64, 512) {
    my $wins = $step{"$n TP4 PP2 h800-sxm"} < $step{"$n TP8 h800-sxm"} ? 'TP4 x PP2 wins' : 'TP8 wins';
    like($o, qr/$n H800: TP4 x PP2 takes [\d.]+ s a step against TP8's [\d.]+ s \($wins/,
         "$n H800: the winner follows the table");
}

# --no-train-llm: a vision-language model's alignment stage (LLaVA's
# stage 1), the title says the LLM is frozen; a model with no tower is
# refused in one line naming the option.
($c, $o, $e) = run_gp('train', 'llava-1.5-7b', '--gpu', 'a100-sxm-80gb', '--gpus', '8',
                      '--zero', '2', '--seq', '610', '--images', '1', '--batch', '32',
                      '--global-batch', '256', '--recompute', 'full', '--no-train-llm');
is($c, 0, 'train --no-train-llm exits 0') or diag $e;
like($o, qr/^llava-1\.5-7b on 8 x a100-sxm-80gb .*\), full \(LLM frozen\) bf16, seq 610/m,
     'the title says the LLM is frozen');
($c, $o, $e) = run_gp('train', 'llama2-7b', '--gpu', 'a100-sxm-80gb', '--no-train-llm');
isnt($c, 0, '--no-train-llm without a vision tower fails');
like($e, qr/^gpuplan: train: --no-train-llm freezes .*llama2-7b has no vision tower$/m,
     'one line naming the option and the model');

# An attention kernel outside the declared list is refused by the option,
# naming the flag and every kernel it takes (gpuplan.roofline's list); the
# --help line spells the same list.
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8',
                      '--attn-kernel', 'sdpa');
isnt($c, 0, 'an unknown --attn-kernel fails');
like($e, qr/^gpuplan: train: --attn-kernel must be fa1, fa2, fa3, fa4, cudnn, triton, efficient, ck or flex \(got 'sdpa'\)$/m,
     'one line naming the flag and the kernels');
($c, $o, $e) = run_gp('train', '--help');
like($o, qr/--attn-kernel K\s+fa1\|fa2\|fa3\|fa4\|cudnn\|triton\|efficient\|ck\|flex\s+\(efficient:/,
     '--help lists the same kernels');
# transformers' modules on Hopper: SDPA's flash backend (FlashAttention-2),
# not the arch's cuDNN kernel, unless --attn-kernel names it.
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--stack', 'hf');
is($c, 0, 'hf stack on H100 exits 0') or diag $e;
like($o, qr/attn_kernel=fa2 \(transformers' modules: /, 'hf stack: FlashAttention-2 said, with why');
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--stack', 'hf',
                      '--attn-kernel', 'cudnn');
unlike($o, qr/attn_kernel=/, 'hf stack with --attn-kernel cudnn: stated, not a default');

# --price takes a bare amount, as its help says ("2.49, '$2.49/h' or a
# catalog price id"): the buyer's currency, the same cost as '$2.49/h'.
my @priced = ('llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--tokens', '1e12');
my ($c1, $o1, $e1) = run_gp('train', @priced, '--price', '2.49');
my ($c2, $o2, $e2) = run_gp('train', @priced, '--price', '$2.49/h');
is($c1, 0, '--price 2.49 is accepted') or diag $e1;
my ($cost1) = $o1 =~ /; cost (\d+ USD) .* at 2\.49 USD\/GPU-h$/m;
my ($cost2) = $o2 =~ /; cost (\d+ USD) .* at 2\.49 USD\/GPU-h$/m;
ok(defined $cost1 && defined $cost2 && $cost1 eq $cost2, "--price 2.49 costs what '\$2.49/h' does")
  or diag "$o1\n$o2";
($c, $o, $e) = run_gp('train', @priced, '--price', '-1');
like($e, qr/^gpuplan: train: --price must be a non-negative number \(got -1\)$/m,
     'a negative --price: one line naming it');

# --unfused-act: Megatron-Core's MLP without bias_activation_fusion runs
# its SwiGLU as two kernels (and autograd's three back), so the same step
# takes longer; --moe-router-dtype fp64 adds the experts' fp64 product.
{
    my @j = ('train', 'qwen3-30b-a3b', '--gpu', 'h100-sxm', '--gpus', '8', '--ep', '8',
             '--seq', '4096', '--stack', 'megatron', '--format', 'json');
    my @s;
    for my $x ([], ['--unfused-act'], ['--unfused-act', '--moe-router-dtype', 'fp64']) {
        my ($rc, $out, $err) = run_gp(@j, @$x);
        is($rc, 0, "train @$x: runs") or diag $err;
        push @s, $out =~ /"step_s"\s*:\s*([\d.eE+-]+)/ ? $1 : 0;
    }
    ok($s[1] > $s[0], '--unfused-act: a longer step than the fused activation');
    ok($s[2] > $s[1], '--moe-router-dtype fp64: longer again');
}

# --lora-rank without --method lora priced an adapter under "full bf16";
# now one line naming the option and the methods it applies to.
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8',
                      '--lora-rank', '16');
isnt($c, 0, '--lora-rank with the default method fails');
like($e, qr/^gpuplan: train: --lora-rank applies to method lora\|qlora \(got full\)$/m,
     'naming the option and its methods');
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8',
                      '--lora-rank', '16', '--method', 'lora');
is($c, 0, '--lora-rank with --method lora runs') or diag $e;
like($o, qr/^llama3-8b on 8 x h100-sxm .*\), lora bf16,/m, 'a LoRA step, titled so');

# --microbatches sets the global batch (4 x dp 8 x batch 1 = 32): it was
# handed to the memory alone while the step ran the default's 16.
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8',
                      '--microbatches', '4');
is($c, 0, '--microbatches 4 runs') or diag $e;
like($o, qr/, global batch 32 \(4 micro-batches of 1\)$/m, 'global batch 4 x 8 x 1 = 32');
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8',
                      '--microbatches', '4', '--global-batch', '64');
like($e, qr/^gpuplan: train: --microbatches 4 and --global-batch 64 disagree: the global batch is the micro-batches x dp x batch = 4 x 8 x 1 = 32$/m,
     'a --global-batch that disagrees: one line naming both');

# --stack deepspeed runs transformers' modules unless told otherwise (the
# Trainer / Accelerate hand them to DeepSpeed): kernels=eager, said on the
# defaults line, the same step as --kernels eager given (stage 3's module
# hooks with it); --kernels fused (Megatron-DeepSpeed) is another step and
# no kernels default.
my @ds = ('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '3',
          '--stack', 'deepspeed', '--seq', '2048', '--global-batch', '64');
my ($cd, $od) = run_gp(@ds);
is($cd, 0, 'deepspeed stack: runs');
like($od, qr/^defaults: .*kernels=eager \(stack deepspeed: transformers' modules/m,
     'deepspeed stack: kernels=eager listed as a default, with why');
my ($ce, $oe) = run_gp(@ds, '--kernels', 'eager');
my ($cf, $of) = run_gp(@ds, '--kernels', 'fused');
my ($sd) = $od =~ /^step\s+([\d.]+)/m;
my ($se) = $oe =~ /^step\s+([\d.]+)/m;
my ($sf) = $of =~ /^step\s+([\d.]+)/m;
is($sd, $se, 'deepspeed stack: the default step is --kernels eager\'s');
ok(defined $sf && $sf < $sd, 'deepspeed stack: --kernels fused (Megatron-DeepSpeed) is faster, no hooks');
unlike($of, qr/^defaults: .*kernels=/m, 'kernels given: not a default');


# --fsdp-version: FSDP on the hf stack is FSDP1 unless told (Accelerate's
# plugin default), said on the defaults line; --fsdp-version 2 (fully_shard)
# adds its copy-outs and copy-in on the compute stream, a longer step;
# refused off the hf stack and outside 1..2, naming the flag.
my @fv = ('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '16', '--fsdp', 'full_shard',
          '--seq', '4096', '--global-batch', '64');
my ($cv, $ov) = run_gp(@fv);
is($cv, 0, 'fsdp: runs');
like($ov, qr/^defaults: .*fsdp_version=1 \(FSDP1: Accelerate's FSDP plugin/m,
     'fsdp: fsdp_version=1 listed as a default, with why');
my (undef, $ov1) = run_gp(@fv, '--fsdp-version', '1');
my (undef, $ov2) = run_gp(@fv, '--fsdp-version', '2');
my ($s0) = $ov =~ /^step\s+([\d.]+)/m;
my ($s1) = $ov1 =~ /^step\s+([\d.]+)/m;
my ($s2) = $ov2 =~ /^step\s+([\d.]+)/m;
is($s0, $s1, 'fsdp: the default step is --fsdp-version 1\'s');
ok(defined $s2 && $s2 > $s1, 'fsdp: --fsdp-version 2 is longer (copies on the compute stream)');
unlike($ov2, qr/^defaults: .*fsdp_version=/m, 'fsdp_version given: not a default');
my ($cb, undef, $eb) = run_gp(@fv, '--fsdp-version', '3');
isnt($cb, 0, '--fsdp-version 3: refused');
like($eb, qr/^gpuplan: train: --fsdp-version must be a whole number 1\.\.2 \(got 3\)$/m,
     '--fsdp-version 3: names the flag and its range');
($cb, undef, $eb) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '16',
                          '--zero', '3', '--stack', 'deepspeed', '--fsdp-version', '2');
like($eb, qr/^gpuplan: train: --fsdp-version is PyTorch FSDP's \(1 or 2\): it needs --stack hf with fsdp/m,
     '--fsdp-version on stack deepspeed: refused, naming the flag');

# --activation-offload-layers (Megatron-Core's cpu_offloading_num_layers):
# Llama 3.2 1B on one B200 at seq 8192, every copy exposed (its 50.4 GB/s
# PCIe link against a few ms of a layer's compute; tests/lua/act_offload.t
# derives it): offloading slows the step and the defaults line names the
# link's rate; bad values are refused naming the flag.
my @off = ('llama3.2-1b', '--gpu', 'b200', '--seq', '8192', '--global-batch', '1',
           '--stack', 'megatron', '--recompute', 'none');
my ($c0, $o0) = run_gp('train', @off);
my ($c8, $o8) = run_gp('train', @off, '--activation-offload-layers', '8');
is($c8, 0, '--activation-offload-layers 8 exits 0');
my ($so0) = $o0 =~ /^step\s+([\d.]+)/m;
my ($s8) = $o8 =~ /^step\s+([\d.]+)/m;
ok(defined $so0 && defined $s8 && $s8 > $so0, 'the exposed copies lengthen the step');
like($o8, qr/activation offload over the host link at 50\.4 GB\/s a direction/,
     'the defaults line states the host link');
my ($cz, undef, $ez) = run_gp('train', @off, '--activation-offload-layers', '0');
isnt($cz, 0, '--activation-offload-layers 0: non-zero exit');
like($ez, qr/^gpuplan: train: --activation-offload-layers must be a whole number/m,
     '--activation-offload-layers 0: refused, naming the flag');
my ($cr, undef, $er) = run_gp('train', @off[0 .. 8], '--recompute', 'full',
                              '--activation-offload-layers', '4');
isnt($cr, 0, '--activation-offload-layers with --recompute full: non-zero exit');
like($er, qr/^gpuplan: train: --activation-offload-layers needs --recompute none \(got --recompute full\)/m,
     'recompute full refused, naming both flags');

# --checkpoint-offload (checkpoint_wrapper(offload_to_cpu=True), DeepSpeed's
# cpu_checkpointing): Llama 3 8B on one A100 at seq 2048, one micro-batch;
# tests/lua/ckpt_offload.t derives the step's 2 x 32 x 16 MiB / 25.216 GB/s
# = 42.6 ms.  The host memory line shows the 32 checkpoints (0.50 GiB);
# without --recompute full it is refused naming both flags (exit 2).
my @ck = ('llama3-8b', '--gpu', 'a100-sxm-80gb', '--seq', '2048', '--global-batch', '1',
          '--stack', 'hf');
my ($ck0, $ok0) = run_gp('train', @ck, '--recompute', 'full');
my ($ck1, $ok1) = run_gp('train', @ck, '--recompute', 'full', '--checkpoint-offload');
is($ck1, 0, '--checkpoint-offload exits 0');
my ($sk0) = $ok0 =~ /^step\s+([\d.]+)/m;
my ($sk1) = $ok1 =~ /^step\s+([\d.]+)/m;
ok(defined $sk0 && defined $sk1 && abs(($sk1 - $sk0) - 0.0426) < 0.0002,
   'the copies add 42.6 ms (shown to 0.1 ms)');
like($ok1, qr/host memory \(offload\): 0\.50 GiB per GPU .*activations 0\.50 GiB/,
     'the host holds the 32 checkpoints');
like($ok1, qr/checkpoint offload over the host link at 25\.2 GB\/s a direction/,
     'the defaults line states the host link');
like($ok1, qr/--no-checkpoint-offload-streams \(the copies on the compute stream/,
     'the defaults line states where the copies run (the 42.6 ms is the compute-stream way)');
my ($ckn, undef, $ekn) = run_gp('train', @ck, '--checkpoint-offload');
is($ckn, 2, '--checkpoint-offload without --recompute full: exit 2');
like($ekn, qr/^gpuplan: train: --checkpoint-offload moves the checkpoints full recompute keeps .*give --recompute full \(got --recompute none\)/m,
     'refused, naming both flags');
# --checkpoint-offload-streams is a way of running --checkpoint-offload's
# copies: without it, refused naming both flags, a usage error (exit 2) as
# the other options that do not go together; a value after it is refused.
my ($cks, undef, $eks) = run_gp('train', @ck, '--recompute', 'full', '--checkpoint-offload-streams');
is($cks, 2, '--checkpoint-offload-streams without --checkpoint-offload: exit 2');
like($eks, qr/^gpuplan: train: --checkpoint-offload-streams runs the copies of --checkpoint-offload on a side stream: it needs --checkpoint-offload$/m,
     'refused, naming both flags as flags');
my ($ckv, undef, $ekv) = run_gp('train', @ck, '--recompute', 'full', '--checkpoint-offload',
                                '--checkpoint-offload-streams=yes');
is($ckv, 2, '--checkpoint-offload-streams=yes: exit 2');
like($ekv, qr/option '--checkpoint-offload-streams' takes no value/, 'it takes no value');
# fit: the checkpoints on the host leave the model states on the GPU, so
# the grads row keeps no ZeRO-Offload note (it read "DeepSpeed gradient
# bucket (5e8 elements)" at the full 14.96 GiB of bf16 grads) and the
# states line still gives the per-GPU figure: 16 B/param unsharded.
my ($cfo, $ofo) = run_gp('fit', 'llama3-8b', '--gpu', 'a100-sxm-80gb', '--seq', '2048',
                       '--stack', 'hf', '--recompute', 'full', '--checkpoint-offload');
is($cfo, 0, 'fit --checkpoint-offload exits 0');
unlike($ofo, qr/DeepSpeed gradient bucket/, 'fit: no ZeRO-Offload note on the grads row');
like($ofo, qr/^model states: 16\.0 B\/param .*, 16\.00 B\/param on this GPU after sharding$/m,
     'fit: the states line gives the per-GPU figure (nothing of the states offloaded)');

# --pad-mask (transformers' FlashAttention-2 path under a padding mask):
# Llama 2 7B on one A100 with the eager modules; the varlen gathers and
# scatters (tests/lua/pad_mask.t derives their bytes) lengthen the step,
# and a fused stack is refused naming both flags.
my @pm = ('llama2-7b', '--gpu', 'a100-sxm-80gb', '--seq', '1024', '--global-batch', '1',
          '--method', 'full', '--stack', 'hf', '--recompute', 'full');
my ($cp0, $op0) = run_gp('train', @pm);
my ($cp1, $op1) = run_gp('train', @pm, '--pad-mask');
is($cp1, 0, '--pad-mask exits 0');
my ($sp0) = $op0 =~ /^step\s+([\d.]+)/m;
my ($sp1) = $op1 =~ /^step\s+([\d.]+)/m;
ok(defined $sp0 && defined $sp1 && $sp1 > $sp0, '--pad-mask: the gathers lengthen the step');
my ($cpf, undef, $epf) = run_gp('train', @pm, '--stack', 'megatron', '--pad-mask');
isnt($cpf, 0, '--pad-mask on a fused stack: non-zero exit');
like($epf, qr/^gpuplan: train: --pad-mask is transformers' FlashAttention-2 path under a padding mask; with --kernels fused \(--stack megatron\)/m,
     '--pad-mask on megatron: refused, naming the flags');

# --master-copy / --no-master-copy (Megatron's optimizer copying its fp32
# master to the 16-bit weights after Adam: the master read again, 4 B a
# parameter; tests/lua/master_copy.t derives it): on by default with
# --stack megatron, so turning it off shortens the step; a value is
# refused, naming the flag; on the hf stack it is refused too.
my @mcp = ('llama3.2-1b', '--gpu', 'a100-sxm-80gb', '--gpus', '1', '--stack', 'megatron',
           '--method', 'pretrain', '--batch', '1', '--global-batch', '1', '--seq', '2048');
my ($cm0, $om0) = run_gp('train', @mcp);
my ($cm1, $om1) = run_gp('train', @mcp, '--no-master-copy');
is($cm1, 0, '--no-master-copy exits 0');
my ($sm0) = $om0 =~ /^optimizer\s+([\d.]+)/m;
my ($sm1) = $om1 =~ /^optimizer\s+([\d.]+)/m;
ok(defined $sm0 && defined $sm1 && $sm1 < $sm0, 'without the copy the optimizer step is shorter');
my ($cmv, undef, $emv) = run_gp('train', @mcp, '--master-copy=yes');
isnt($cmv, 0, '--master-copy=yes: non-zero exit');
like($emv, qr/master-copy/, '--master-copy=yes: refused, naming the flag');
my ($cmh, undef, $emh) = run_gp('train', @mcp, '--stack', 'hf', '--master-copy');
isnt($cmh, 0, '--master-copy with --stack hf: non-zero exit');
like($emh, qr/master_copy|master-copy/, '--master-copy with --stack hf: refused, naming it');

# --reduce-bucket-size / --prefetch-bucket-size (DeepSpeed's ZeRO buckets,
# stack deepspeed; tests/lua/ds_bucket_size.t derives them): Llama 2 7B at
# ZeRO-3 on 8 A800s.  A 1e7-element bucket reduces each of a layer's seven
# weights alone where the default 5e8 bucket spans layers: dp_comm grows;
# its flat buffer is (5e8 - 1e7) x 2 B = 0.91 GiB smaller, so memory drops;
# --prefetch-bucket-size 0 leaves the forward's gathers in the open even
# with --overlap-param-gather; the defaults line states DeepSpeed's
# defaults; the hf stack has no such
# config; a bad value names the flag.
{
    my @ds = ('llama2-7b', '--gpu', 'a800-sxm-80gb', '--gpus', '8', '--zero', '3',
              '--stack', 'deepspeed', '--seq', '4096', '--batch', '2', '--global-batch', '64');
    my ($c0, $o0) = run_gp('train', @ds);
    my ($c1, $o1, $e1) = run_gp('train', @ds, '--reduce-bucket-size', '1e7');
    is($c1, 0, '--reduce-bucket-size 1e7 exits 0') or diag $e1;
    my ($d0) = $o0 =~ /^dp_comm\s+([\d.]+)/m;
    my ($d1) = $o1 =~ /^dp_comm\s+([\d.]+)/m;
    ok(defined $d0 && defined $d1 && $d1 > $d0, 'seven reductions a layer: dp_comm grows');
    my ($m0) = $o0 =~ /^memory: ([\d.]+) GiB/m;
    my ($m1) = $o1 =~ /^memory: ([\d.]+) GiB/m;
    ok(defined $m0 && defined $m1 && abs(($m0 - $m1) - 0.91) <= 0.11,
       'the smaller bucket holds 0.91 GiB less (to the printed 0.1 GiB)') or diag "$m0 $m1";
    like($o0, qr/reduce_bucket_size=5e8 \(DeepSpeed's default, zero\/config\.py\), prefetch_bucket_size=5e7/,
         'the defaults line states DeepSpeed\'s buckets');
    my ($cq, $oq) = run_gp('train', @ds, '--overlap-param-gather');
    my ($cp, $op) = run_gp('train', @ds, '--overlap-param-gather', '--prefetch-bucket-size', '0');
    is($cp, 0, '--prefetch-bucket-size 0 exits 0');
    my ($zq) = $oq =~ /^zero_gather\s+([\d.]+)/m;
    my ($zp) = $op =~ /^zero_gather\s+([\d.]+)/m;
    ok(defined $zq && defined $zp && $zp > $zq,
       'nothing prefetched: the forward gathers stay in the open under --overlap-param-gather');
    # The stage3_* keys at ZeRO 2: DeepSpeed reads them at stage 3 only,
    # so the option would change nothing; refused as --zero3-gather
    # per_param is, naming the flag and the stage (train and fit).
    my @z2 = map { $_ eq '3' ? '2' : $_ } @ds;
    for my $f ('--prefetch-bucket-size', '--max-live-parameters', '--max-reuse-distance') {
        for my $cmd ('train', 'fit') {
            my @a = $cmd eq 'fit' ? @z2[0 .. $#z2 - 2] : @z2;  # fit takes no --global-batch
            my ($cz, undef, $ez) = run_gp($cmd, @a, $f, '1e7');
            isnt($cz, 0, "$cmd $f at --zero 2: non-zero exit");
            like($ez, qr/\Q$f\E is DeepSpeed's stage 3 .*needs --zero 3 \(got --zero 2\)/,
                 "$cmd $f at --zero 2: refused, naming the flag and the stage");
        }
    }
}

# --max-live-parameters / --max-reuse-distance (DeepSpeed's ZeRO-3 gathered
# window; tests/lua/ds_live_window.t derives it): the same Llama 2 7B job.
# By default 1e9 parameters are live plus the output layer that crosses
# the limit (V h = 131,072,000); at 3e8 live and a reuse distance of 0 the
# window is 3e8 + V h, so memory drops by 7e8 x 2 B = 1.30 GiB (to the
# printed 0.1 GiB); the defaults line states both; the hf stack has no
# such config; a bad value names the flag.
{
    my @ds = ('llama2-7b', '--gpu', 'a800-sxm-80gb', '--gpus', '8', '--zero', '3',
              '--stack', 'deepspeed', '--seq', '4096', '--batch', '2', '--global-batch', '64');
    my ($c0, $o0) = run_gp('train', @ds);
    my ($c1, $o1, $e1) = run_gp('train', @ds, '--max-live-parameters', '3e8',
                                '--max-reuse-distance', '0');
    is($c1, 0, '--max-live-parameters 3e8 --max-reuse-distance 0 exits 0') or diag $e1;
    my ($m0) = $o0 =~ /^memory: ([\d.]+) GiB/m;
    my ($m1) = $o1 =~ /^memory: ([\d.]+) GiB/m;
    ok(defined $m0 && defined $m1 && abs(($m0 - $m1) - 1.30) <= 0.11,
       'a 3e8 live limit holds 1.30 GiB less (to the printed 0.1 GiB)') or diag "$m0 $m1";
    like($o0, qr/max_live_parameters=1e9 \(DeepSpeed's default, zero\/config\.py\), max_reuse_distance=1e9/,
         'the defaults line states DeepSpeed\'s limits');
    # Every DeepSpeed ZeRO config flag: the hf stack has no such config,
    # and a negative size or count is refused; both errors name the flag.
    for my $f ('--reduce-bucket-size', '--prefetch-bucket-size', '--max-live-parameters',
               '--max-reuse-distance') {
        my ($ch, undef, $eh) = run_gp('train', @ds, '--stack', 'hf', $f, '3e8');
        isnt($ch, 0, "$f with --stack hf: non-zero exit");
        like($eh, qr/\Q$f\E is DeepSpeed's ZeRO config/, "$f with --stack hf: refused, naming the flag");
        my ($cn, undef, $en) = run_gp('train', @ds, $f, '-5');
        isnt($cn, 0, "$f -5: non-zero exit");
        like($en, qr/\Q$f\E must be a number/, "$f -5: refused, naming the flag");
    }
}

# --async-tp-allreduce (Megatron's asynchronous TP all-reduce): GPT-3
# 175B at TP 8 with four sequences a micro-batch hides both backward
# all-reduces under the weight-gradient GEMMs (tests/lua/async_tp_allreduce.t
# derives it): the step shortens against --no-async-tp-allreduce, and on
# the megatron stack it is the default (Transformer Engine's and
# Megatron-Core's linears): the same step without the flag; a value is
# refused, naming the flag.
my @atp = ('gpt3-175b', '--gpu', 'a100-sxm-80gb', '--gpus', '8', '--tp', '8', '--stack',
           'megatron', '--method', 'pretrain', '--batch', '4', '--global-batch', '4',
           '--recompute', 'full');
my ($ca0, $oa0) = run_gp('train', @atp, '--no-async-tp-allreduce');
my ($ca1, $oa1) = run_gp('train', @atp, '--async-tp-allreduce');
my ($cad, $oad) = run_gp('train', @atp);
is($ca1, 0, '--async-tp-allreduce exits 0');
my ($sa0) = $oa0 =~ /^step\s+([\d.]+)/m;
my ($sa1) = $oa1 =~ /^step\s+([\d.]+)/m;
my ($sad) = $oad =~ /^step\s+([\d.]+)/m;
ok(defined $sa0 && defined $sa1 && $sa1 < $sa0, 'the hidden all-reduces shorten the step');
ok(defined $sad && $sad == $sa1, 'the megatron stack runs it by default');
my ($cav, undef, $eav) = run_gp('train', @atp, '--async-tp-allreduce=yes');
isnt($cav, 0, '--async-tp-allreduce=yes: non-zero exit');
like($eav, qr/async-tp-allreduce/, '--async-tp-allreduce=yes: refused, naming the flag');

# --numa-bind: on a GB200 rack (host_op_scale 2.75, host_op_scale_bound
# 2.0) a host-bound MoE step is shorter bound; --no-numa-bind is the
# default's step; on DGX H100 (no bound factor) nothing changes.
{
    my @moe = ('qwen3-30b-a3b', '--gpus', '8', '--ep', '8', '--seq', '512', '--batch', '1',
               '--global-batch', '8', '--stack', 'megatron', '--zero', '1');
    my %s;
    for my $g ('gb200', 'h100-sxm') {
        for my $f ('', '--numa-bind', '--no-numa-bind') {
            my ($c, $o) = run_gp('train', @moe, '--gpu', $g, ($f ? ($f) : ()));
            is($c, 0, "$g $f: exits 0");
            ($s{"$g$f"}) = $o =~ /^step\s+([\d.]+)/m;
        }
    }
    ok($s{'gb200--numa-bind'} < $s{'gb200'}, 'GB200 --numa-bind: a shorter step');
    is($s{'gb200--no-numa-bind'}, $s{'gb200'}, 'GB200 --no-numa-bind: the default (unbound)');
    is($s{'h100-sxm--numa-bind'}, $s{'h100-sxm'}, 'H100 --numa-bind: unchanged');
}

# --offload: train prints what the host holds, the line and figures
# gpuplan fit prints for the same job (tests/cli/fit.t derives them:
# Llama-2-7B, ZeRO-3 over 8 GPUs, params and optimizer offloaded, 15.69 GiB
# per GPU, 125.51 GiB for the 8); no line without an offload.
{
    my @job = ('llama2-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '3',
               '--offload', 'params+optimizer');
    my ($c, $o, $e) = run_gp('train', @job);
    is($c, 0, 'train --offload params+optimizer') or diag $e;
    my $line = qr/^host memory \(offload\): 15\.69 GiB per GPU \(weights 1\.57 \+ grads 4\.71 \+ master 3\.14 \+ optimizer 6\.28 GiB\), 125\.51 GiB for the 8 GPUs$/m;
    like($o, $line, 'train --offload: the host memory per GPU, by kind, and for the job');
    my ($fc, $fo) = run_gp('fit', @job);
    like($fo, $line, 'the same line as fit prints');
    ($c, $o, $e) = run_gp('train', 'llama2-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '3');
    unlike($o, qr/^host memory/m, 'no offload: no host memory line');
}

# --power-limit: the boards' limit in W (roofline.lua clock_at).  The
# Grand Teton H100 ships at 500 W of its 700 W TDP: the defaults line says
# so; 600 W (clock (460 / 560) ^ (1 / 2.63) = 0.928 of the TDP's against
# 0.845 at 500) runs the step faster; above the TDP and a bare word are
# refused, naming the flag.
{
    my @job = ('llama3-8b', '--gpu', 'h100-sxm-96gb', '--gpus', '8', '--zero', '3');
    my ($c, $o, $e) = run_gp('train', @job);
    is($c, 0, 'train on h100-sxm-96gb') or diag $e;
    like($o, qr/power_limit=500W \(h100-sxm-96gb's default limit, TDP 700W: tensor clock 0\.845 of the TDP's\)/,
         'the card\'s 500 W default limit, said with its clock');
    my ($s500) = $o =~ /^step\s+([\d.]+)/m;
    ($c, $o, $e) = run_gp('train', @job, '--power-limit', '600');
    is($c, 0, 'train --power-limit 600') or diag $e;
    my ($s600) = $o =~ /^step\s+([\d.]+)/m;
    ok($s600 < $s500, "600 W: a shorter step ($s600 s) than 500 W ($s500 s)");
    unlike($o, qr/power_limit=/, 'a stated limit is not a default');
    ($c, $o, $e) = run_gp('train', @job, '--power-limit', '800');
    is($c, 1, 'above the TDP: exit 1');
    like($e, qr/--power-limit 800 W is above h100-sxm-96gb's TDP, 700 W/, 'the flag and the TDP named');
    ($c, $o, $e) = run_gp('train', @job, '--power-limit', '5OO');
    # docs/output.md: "A usage error is a command line that cannot be
    # read as a question: ... a value the option cannot parse" -- exit 2,
    # as --memory 6X; 800 (parses, above the TDP) stays exit 1 above.
    is($c, 2, 'not a power: exit 2, as --memory 6X');
    like($e, qr/^gpuplan: train: --power-limit: bad power '5OO': unknown unit 'OO' \(use W or kW\)$/m,
         'the flag and the units named');
    # With its unit, as --memory and --host-bw take theirs (gpuplan.units
    # power): 600W and 0.6kW are the 600 of the bare number, to the digit.
    for my $v ('600W', '0.6kW') {
        ($c, $o, $e) = run_gp('train', @job, '--power-limit', $v);
        is($c, 0, "train --power-limit $v") or diag $e;
        my ($s) = $o =~ /^step\s+([\d.]+)/m;
        is($s, $s600, "--power-limit $v: the step of 600 W");
    }
}

# 20 GPUs on 8-GPU nodes: the launcher fills 8 + 8 + 4 (engine/
# layout_fill.c), and each group is priced where it sits.  Equal shares a
# node (engine/layout.c in_node: the largest divisor of 20 a node holds,
# 5) needed 4 nodes of the job's 3 and the job was refused.  DP 20 at
# stride 1: ranks 0-7, 8-15, 16-19, 3 nodes, 4 on the last.  TP 4 x DP 5:
# the DP group of TP rank 0 is ranks 0, 4, 8, 12, 16 on nodes 0, 0, 1, 1,
# 2 (2 + 2 + 1), and the 4 DP groups each have ranks on every node.
{
    my ($c20, $o20, $e20) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '20',
                                   '--zero', '3', '--format', 'json');
    is($c20, 0, '20 GPUs on 8-GPU nodes: priced') or diag $e20;
    my $g = decode_json($o20)->{groups}{dp};
    is_deeply($g, { ranks => 20, nodes => 3, per_node => 4, sharing => 1 },
              'DP 20: 8 + 8 + 4 on 3 nodes, 4 on the poorest');
    ($c20, $o20, $e20) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '20',
                                '--tp', '4', '--format', 'json');
    is($c20, 0, 'TP 4 x DP 5 on 20 GPUs: priced') or diag $e20;
    my $r = decode_json($o20);
    is_deeply($r->{groups}{dp}, { ranks => 5, nodes => 3, per_node => 1, sharing => 4 },
              'DP 5: 2 + 2 + 1 on 3 nodes, 4 groups a node');
    is_deeply($r->{groups}{tp}, { ranks => 4, nodes => 1, per_node => 4, sharing => 2 },
              'TP 4: inside a node');
    # TP 8 on nodes of 6 (48 GPUs): group 0 is ranks 0-5 + 6-7, group 1
    # 8-11 + 12-15, group 2 16-17 + 18-23: 2 nodes each, 2 ranks on the
    # poorer one, 2 groups on nodes 1 and 2; the warning says "at least".
    ($c20, $o20, $e20) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '48',
                                '--tp', '8', '--gpus-per-node', '6', '--format', 'json');
    is($c20, 0, 'TP 8 on nodes of 6: priced') or diag $e20;
    is_deeply(decode_json($o20)->{groups}{tp}, { ranks => 8, nodes => 2, per_node => 2, sharing => 2 },
              'TP 8 on nodes of 6: 6 + 2, 4 + 4, 2 + 6');
    ($c20, $o20, $e20) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '48',
                                '--tp', '8', '--gpus-per-node', '6');
    like($o20, qr/tp 8 spans 2 nodes, at least 2 ranks on each/, 'the warning: uneven shares');
}

# --precision fp32 (the help lists it) was refused on every card as
# "fp32 training needs fp32 tensor cores; this device has none": fp32 has
# no tensor cores, no arch carries a measured fp32 GEMM rate, and the
# sentence named neither the card nor what to give.  tf32 on a V100 (no
# tf32 peak) likewise.  fit, memory only, still takes fp32.
for my $x (['h100-sxm', 'fp32', qr/^gpuplan: train: fp32 training is not priced on h100-sxm: the catalog has no measured GEMM rate for fp32 on arch hopper \(give --precision tf32: fp32 weights, tensor-core matmuls\)$/m],
           ['v100-sxm2-32gb', 'tf32', qr/^gpuplan: train: tf32 training is not priced on v100-sxm2-32gb: the catalog has no peak in tf32 \(give --precision fp16\)$/m]) {
    my ($g, $p, $re) = @$x;
    my ($cx, $ox, $ex) = run_gp('train', 'llama3-8b', '--gpu', $g, '--gpus', '8', '--precision', $p);
    is($cx, 1, "train --gpu $g --precision $p: exit 1");
    like($ex, $re, "train --gpu $g --precision $p: names the card and what to give");
}
{
    my ($cx, $ox, $ex) = run_gp('fit', 'llama3-8b', '--gpu', 'h100-sxm', '--precision', 'fp32');
    is($cx, 0, 'fit --precision fp32: memory, priced') or diag $ex;
    ($cx, $ox, $ex) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--precision', 'fp4');
    like($ex, qr/unknown precision 'fp4' \(expected bf16\|fp16\|fp8\|fp32\|tf32\)$/m, 'the list of precisions has tf32');
}

# --method grpo to train or plan pointed a command-line user at "gp.rl",
# a Lua function: the command is gpuplan rl.
{
    my ($cx, $ox, $ex) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--method', 'grpo');
    is($cx, 1, 'plan --method grpo: exit 1');
    like($ex, qr/is not a training step \(pretrain\|full\|lora\|qlora; an RL step: gpuplan rl, gp\.rl\)$/m,
         'names the command that plans an RL step');
}

done_testing();
