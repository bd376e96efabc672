# followups27: what a new user tries first, on the latest features.  One
# block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my ($c, $o, $e);

# 1. --gpus 16 --gpus-per-node 3: priced with the last node partial, as a
# launcher places ranks (torchrun, Slurm --ntasks-per-node; engine/
# layout.h layout_fill_of) and as gpuplan comm names "8 GPUs each, 4
# on the last"; the defaults line says it.  ceil(16 / 3) = 6 nodes, 5
# full, 16 - 15 = 1 GPU on the last.
for my $cmd (qw(train plan rl)) {
    ($c, $o, $e) = run_gp($cmd, qw(llama3-8b --gpu h100-sxm --gpus 16 --gpus-per-node 3));
    is($c, 0, "$cmd --gpus 16 --gpus-per-node 3: priced") or diag $e;
    like($o, qr/^defaults: .*nodes: 6 \(16 GPUs fill 5 nodes of 3 and 1 GPU on the last, as a launcher places ranks in order/m,
         "$cmd: the partial last node said") or diag $o;
}
($c, $o, $e) = run_gp(qw(train llama3-8b --gpu h100-sxm --gpus 15 --gpus-per-node 3));
unlike($o, qr/GPUs fill/, 'train --gpus 15 --gpus-per-node 3: whole nodes, nothing said');
# infer and fit take no --gpus-per-node (a replica's TP group sits in one
# node): refused naming where it applies
for my $cmd (qw(infer fit)) {
    ($c, $o, $e) = run_gp($cmd, qw(llama3-8b --gpu h100-sxm --gpus 16 --gpus-per-node 3));
    is($c, 2, "$cmd --gpus-per-node: a usage error");
    like($e, qr/unknown option '--gpus-per-node' \(an option of gpuplan train, plan and rl\)/, "$cmd: says whose option it is");
}
# comm: an even spread that does not divide is refused (--nodes is a
# placement); --gpus alone fills nodes and names the partial one
($c, $o, $e) = run_gp(qw(comm --system dgx-h100 --gpus 16 --nodes 3));
is($c, 2, 'comm --gpus 16 --nodes 3: a usage error');
like($e, qr/16 gpus do not split evenly over 3 nodes/, 'comm: names both');
($c, $o, $e) = run_gp(qw(comm --system dgx-h100 --gpus 20 --op all-reduce --max 1MiB));
like($o, qr/on 3 x dgx-h100 \(8 GPUs each, 4 on the last\)/, 'comm --gpus 20: the partial last node said') or diag $e;

# 2. --mamba-ssm-cache-dtype: the SSM state of a hybrid stack, vLLM's
# mamba_ssm_cache_dtype (fp32 by default for Nemotron-H).  Nemotron 3
# Nano at 64 sequences of 2304 tokens: KV 6,144 B x 2304 = 14,155,776 B a
# sequence; the state fp32 23 x (4 x 524,288 + 2 x 18,432) = 49,082,368
# B, bf16 23 x (2 x 524,288 + 2 x 18,432) = 24,965,120 B.  fit's kv_cache
# row in GiB (2 decimals): 64 x 63,238,144 / 2^30 = 3.77; 64 x 39,120,896
# / 2^30 = 2.33.
{
    my @nano = qw(fit nemotron-3-nano-30b-a3b --gpu h100-sxm --method infer --batch 64 --seq 2304);
    ($c, $o, $e) = run_gp(@nano);
    like($o, qr/^kv_cache\s+3\.77\s/m, 'fit --method infer: KV + fp32 state') or diag $o;
    like($o, qr/^defaults: .*mamba_ssm_cache_dtype=fp32 \(vLLM's for Nemotron-H/m, 'the default said');
    ($c, $o, $e) = run_gp(@nano, '--mamba-ssm-cache-dtype', 'bf16');
    like($o, qr/^kv_cache\s+2\.33\s/m, '--mamba-ssm-cache-dtype bf16 halves the SSM state') or diag $o;
    ($c, $o, $e) = run_gp(qw(infer nemotron-3-nano-30b-a3b --gpu h100-sxm --mamba-ssm-cache-dtype float16));
    is($c, 2, 'a value outside fp32|bf16|fp16: a usage error');
    like($e, qr/--mamba-ssm-cache-dtype must be fp32, bf16 or fp16 \(got 'float16'\)/, '... naming the values');
    ($c, $o, $e) = run_gp(qw(infer llama3-8b --gpu h100-sxm --mamba-ssm-cache-dtype bf16));
    is($c, 2, 'on a model without Mamba layers: refused');
    like($e, qr/--mamba-ssm-cache-dtype bf16 given for llama3-8b, which has no Mamba layers/, '... not ignored');
    ($c, $o, $e) = run_gp(qw(fit nemotron-3-nano-30b-a3b --gpu h100-sxm --mamba-ssm-cache-dtype bf16));
    like($e, qr/--mamba-ssm-cache-dtype applies to --method infer/, 'fit of training: not a training option');
    # model params: the state as infer holds it
    ($c, $o, $e) = run_gp(qw(model params nemotron-3-nano-30b-a3b));
    like($o, qr/^mamba_state_bytes\s+49082368\s+-\s+Mamba state per sequence as vLLM keeps it: SSM fp32, conv bf16/m,
         'model params: the fp32 SSM state infer prices, not a bf16 one') or diag $o;
}

# 3. --recompute-modules moe under the default recompute none rebuilt
# every MoE block while the defaults line said only "recompute=none".
# Megatron-Core reads the list under recompute_granularity "selective"
# alone (recompsel): the list alone is selective and says so; none with
# a list is a usage error naming both options.
{
    my @q = qw(train qwen3-30b-a3b --gpu h100-sxm --gpus 8 --ep 8);
    ($c, $o, $e) = run_gp(@q, '--recompute-modules', 'moe');
    is($c, 0, 'recompute_modules moe alone: priced') or diag $e;
    like($o, qr/^defaults: .*recompute=selective \(--recompute-modules given/m,
         'the defaults say the list makes the policy selective') or diag $o;
    ($c, $o, $e) = run_gp(@q);
    unlike($o, qr/--recompute-modules given/, 'no list: nothing said');
    ($c, $o, $e) = run_gp(@q, '--recompute-modules', 'moe', '--recompute', 'none');
    is($c, 2, 'recompute none with a list: a usage error');
    like($e, qr/--recompute-modules applies to --recompute selective/, 'naming both options') or diag $e;
}

# 4. gp.train's system = 7 (Lua): "train: system must be an id or a
# table (got 7)" (tests/lua/followups27.t); the command line reads --system
# 7 as an id and looks it up.
($c, $o, $e) = run_gp(qw(train llama3-8b --gpu h100-sxm --gpus 8 --system 7));
is($c, 2, 'train --system 7: a usage error');
like($e, qr/--system: unknown system '7'/, '... an unknown id, named');

done_testing();
