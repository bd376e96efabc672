# gpuplan infer with the MoE serving options, --target on a MoE model, and
# scripts/moe_serving.lua (the study runs here as a test: its conclusions
# must follow from its own tables).
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my @ds = ('infer', 'deepseek-v3', '--weights', 'fp8', '--input', '4096', '--output', '1536');

my ($c, $o, $e) = run_gp(@ds, '--gpu', 'h20', '--gpus', '16', '--ep', '16', '--dp-attention',
                         '--batch', '32', '--two-batch-overlap');
is($c, 0, 'EP16 DP attention on 16 H20: exit 0') or diag $e;
like($o, qr/^deepseek-v3 on 16 x h20: EP16, DP attention, two-batch overlap, fp8 weights/m,
     'title names the layout');
# No redundant experts given: the runtimes' default, none (SGLang's
# --ep-num-redundant-experts 0), so 256 / 16 = 16 slots x 58 layers x 3 x
# 7168 x 2048 B = 40.87 GB of routed experts: 16 x 2.55 GB per slot (all
# layers), 59.xx GB in all; 65.xx with DeepSeek's 32 redundant (18 slots).
like($o, qr/^weights per GPU\s+59\.\d\d GB \(experts 16\.0 x 2\.55 GB, shared 2\.55 GB, attention 11\.41 GB/m,
     'weights by part: 16 expert slots (none redundant), shared, attention whole');
like($o, qr/redundant_experts=0 \(the runtimes' default: SGLang's, vLLM's, TensorRT-LLM's 0; /,
     'the assumed line says the redundant slots and the rule');
# 32 x 8 x 7168 x 1.03125 B = 1.89 MB per MoE layer, half over the NICs.
like($o, qr/^dispatch \/ combine\s+[\d.]+ \/ [\d.]+ us per MoE layer \(1\.89 MB out, 50% leaves the node\)$/m,
     'dispatch bytes and the share leaving the node');
like($o, qr/^batch per GPU\s+32 /m, 'batch per GPU');
is($e, '', 'nothing on stderr');

# --expert-weights: the routed experts in their own format, the rest at
# --weights.  EP48 on GB200 with fp4 experts: 6 slots x 58 layers x 3 x 7168
# x 2048 x 4.5 / 8 B = 1.44 GB per slot, attention at fp8 (11.41 GB).
($c, $o, $e) = run_gp('infer', 'deepseek-v3', '--weights', 'fp8', '--expert-weights', 'fp4',
                      '--gpu', 'gb200', '--gpus', '48', '--ep', '48', '--dp-attention',
                      '--batch', '64', '--input', '2000', '--output', '100');
is($c, 0, '--expert-weights fp4: exit 0') or diag $e;
like($o, qr/^deepseek-v3 on 48 x gb200: EP48, DP attention.*, fp8 weights \(fp4 experts\), /m,
     'the title names both formats');
like($o, qr/^weights per GPU\s+[\d.]+ GB \(experts 6\.0 x 1\.44 GB, shared 2\.55 GB, attention 11\.41 GB/m,
     'fp4 experts, fp8 shared expert and attention');
($c, $o, $e) = run_gp('infer', 'deepseek-v3', '--expert-weights', 'fp5', '--gpu', 'gb200',
                      '--gpus', '48', '--ep', '48');
is($c, 2, '--expert-weights fp5: a name none of its formats, a usage error');
like($e, qr/^gpuplan: infer: --expert-weights: unknown weight format 'fp5' \(expected [^)]*\)\nusage: gpuplan infer /,
     'one line naming the value, then the usage line');

# --single-batch-overlap: the title says the decode's overlap as it says
# two-batch overlap's (it said neither), and two-batch overlap when the
# open choice keeps that instead.
($c, $o, $e) = run_gp(@ds, '--gpu', 'h100-sxm', '--gpus', '16', '--ep', '16', '--dp-attention',
                      '--single-batch-overlap', '--no-two-batch-overlap');
is($c, 0, '--single-batch-overlap: exit 0') or diag $e;
like($o, qr/^deepseek-v3 on 16 x h100-sxm: EP16, DP attention, single-batch overlap, /m,
     'the title names single-batch overlap');
($c, $o, $e) = run_gp(@ds, '--gpu', 'h100-sxm', '--gpus', '16', '--ep', '16', '--dp-attention',
                      '--single-batch-overlap', '--no-two-batch-overlap', '--format', 'json');
like($o, qr/"layout":"EP16, DP attention, single-batch overlap"/, '... and the json layout');

# Left open, the overlap is run both ways and the faster kept: within 50 ms
# on 16 H800 two micro-batches (each reading every weight) leave a batch of 2
# per GPU, one micro-batch 3 (tests/lua/serve.t compares them).  Both stay
# small because, colocated, every step also waits for the prompt chunks of
# all 16 DP ranks (serve_plan.c coloc_stall).
($c, $o, $e) = run_gp(@ds, '--gpu', 'h800-sxm', '--gpus', '16', '--ep', '16', '--dp-attention',
                      '--kv', 'fp8', '--itl-max', '50');
like($o, qr/^deepseek-v3 on 16 x h800-sxm: EP16, DP attention, fp8 weights/m,
     'small batches: one micro-batch');
like($o, qr/^assumed .*--no-two-batch-overlap \(faster here/m, 'and the reason, assumed');
my ($nb) = $o =~ /^batch per GPU\s+(\d+) /m;
ok(defined $nb && $nb >= 3, 'a batch of 3 within 50 ms, more than two micro-batches reach');

# One stream on an H20: DeepGEMM's 64-row tiles make its fp8 GEMMs compute-
# bound (tests/lua/serve.t derives it); --swap-ab puts the routed experts'
# masked grouped GEMM on 32-row blocks, which cuts their padded work by a
# third at DeepGEMM's block_n (64 x 192 blocks against 32 x 256, the same
# waves; the experts are a third of this step, the dense linears keep
# their tiles): the step 5-30% shorter.  By hand: the experts' up and down
# GEMMs take 58 x (121 + 62) us = 10.6 ms of the 30.3 ms step (35%);
# a third off them bounds the step at 1 / (1 - 0.35 / 3) = 1.13x, and
# their fixed fill and memory share keep it under that (30.28 against
# 27.68 ms when written, 1.094x).  The band's floor, 1.05, fails a swap
# that prices nothing; its ceiling, 1.3, fails one that also moved the
# dense linears' tiles.
my @one = (@ds, '--gpu', 'h20', '--gpus', '16', '--ep', '16', '--dp-attention', '--kv', 'fp8',
           '--batch', '1', '--no-two-batch-overlap');
($c, $o, $e) = run_gp(@one);
like($o, qr/^assumed .*--no-swap-ab \(DeepGEMM's fp8 GEMMs on Hopper: 64-row tiles/m,
     'the tile rule among the assumptions');
my ($s64) = $o =~ /^decode step\s+([\d.]+) ms/m;
($c, $o, $e) = run_gp(@one, '--swap-ab');
my ($s16) = $o =~ /^decode step\s+([\d.]+) ms/m;
unlike($o, qr/swap_ab=/, '--swap-ab given: not assumed');
ok(defined $s64 && defined $s16 && $s64 > 1.05 * $s16 && $s64 < 1.3 * $s16,
   "batch 1: 64-row tiles $s64 ms, the experts on 32-row blocks $s16 ms");

($c, $o, $e) = run_gp(@ds, '--gpu', 'h200-sxm', '--gpus', '8', '--ep', '8', '--dp-attention',
                      '--batch', '16');
like($o, qr/\(\d+\.\d\d MB out, 0% leaves the node\)/, 'EP8 in one node: nothing leaves it');

# DeepSeek's deployment, its experts placed by EPLB (--eplb): without it
# the colocated instance's hottest GPU receives several times a prefill
# chunk's mean routed tokens, and their activations no longer fit.
($c, $o, $e) = run_gp(@ds, '--gpu', 'h800-sxm', '--gpus', '96', '--ep', '64', '--dp-attention',
                      '--disagg', '--prefill-gpus', '32', '--prefill-ep', '16', '--prefill-tp', '16',
                      '--itl-max', '50', '--price', '2', '--eplb');
is($c, 0, 'disaggregated: exit 0') or diag $e;
like($o, qr/^pools\s+prefill 32 GPUs \(EP16, DP attention, two-batch overlap, \d+ prompt tok\/s each\) : decode 64 GPUs/m,
     'the two pools');
like($o, qr/^colocated instead\s+\d+ tok\/s per GPU at ITL/m, 'the colocated comparison');
like($o, qr/^TTFT \(full prefill steps\)\s+[\d.]+ ms \([\d.]+-[\d.]+\); 1 step of 16384 prompt tokens a one-GPU attention group \(the prompt's 4096 and others'\), no queueing; KV transfer [\d.]+ ms$/m, 'TTFT with the KV transfer');
like($o, qr/^ITL\s+(\d+\.\d\d) ms \([\d.]+-[\d.]+\)$/m, 'ITL');
my ($itl) = $o =~ /^ITL\s+(\d+\.\d\d) ms/m;
ok(defined $itl && $itl <= 50, 'within --itl-max');
like($o, qr/^cost per 1M output tokens\s+\d+\.\d+ USD \([\d.]+-[\d.]+\)$/m, 'cost');

($c, $o, $e) = run_gp(@ds, '--gpu', 'h800-sxm', '--target', '100000', '--itl-max', '50');
is($c, 0, '--target on a MoE model: exit 0') or diag $e;
like($o, qr/^target tok\/s\s+ITL limit ms\s+GPUs\s+decode\s+prefill/m, 'the plan table');
my ($gpus, $tps) = $o =~ /^\s+100000\s+50\.0\s+(\d+)\s.*?\s(\d+)\s+[\d.]+\s+\d+\s+\S+$/m;
ok(defined $tps && $tps >= 100000, 'the plan delivers the target');

($c, $o, $e) = run_gp(@ds, '--gpu', 'h800-sxm', '--gpus', '16', '--ep', '16', '--dp-attention',
                      '--format', 'json');
is($c, 0, 'json exits 0');
like($o, qr/"moe":true/, 'json marks the MoE serving model');
like($o, qr/"dispatch_bytes":/, 'json carries the all-to-all');

# Errors: exit 1 naming the argument; usage errors (options that do not
# go together) exit 2.
($c, $o, $e) = run_gp(@ds, '--gpu', 'h20', '--gpus', '16', '--tp', '16', '--ep', '6');
is($c, 2, 'ep neither tp, 1 nor a divisor of tp: a usage error, exit 2');
like($e, qr/^gpuplan: infer: --ep 6: the experts are split over the whole instance/m, 'ep named');
($c, $o, $e) = run_gp(@ds, '--gpu', 'h20', '--gpus', '16', '--tp', '16', '--ep', '8',
                      '--dp-attention');
is($c, 2, 'ep inside tp with DP attention: a usage error, exit 2');
like($e, qr/^gpuplan: infer: --ep 8: .*with TP attention/m, 'the rule named');
# --ep dividing --tp with TP attention: TensorRT-LLM's --tp 8 --ep 4, four
# groups of experts each sliced over two GPUs (the experts' TP 2).
($c, $o, $e) = run_gp('infer', 'deepseek-v3', '--weights', 'fp8', '--gpu', 'h200-sxm', '--gpus',
                      '8', '--tp', '8', '--ep', '4', '--concurrency', '1', '--input', '1024',
                      '--output', '2048', '--mtp', '3', '--runtime', 'trtllm');
is($c, 0, '--tp 8 --ep 4: exit 0') or diag $e;
like($o, qr/^deepseek-v3 on 8 x h200-sxm: TP8, experts EP4 x TP2, fp8 weights/m,
     'the title names the experts\' split');
# SGLang with MTP runs 48 requests at once unless told (server_args.py:
# "Max running requests is reset to 48 for speculative decoding"): a
# burst of 1000 on TP8 decodes 48 / 8 = 6 a GPU, and the same server
# without drafts, reported beside it, decodes the burst's 1000 / 8 = 125.
($c, $o, $e) = run_gp('infer', 'deepseek-v3', '--weights', 'fp8', '--gpu', 'h200-sxm', '--gpus',
                      '8', '--tp', '8', '--mtp', '1', '--runtime', 'sglang', '--input', '219',
                      '--output', '201', '--requests', '1000');
is($c, 0, 'SGLang MTP burst: exit 0') or diag $e;
like($o, qr/^batch per GPU\s+6 \(KV holds \d+; the engine batches at most 48 an instance/m,
     'the running-request cap binds: 6 a GPU, 48 an instance');
like($o, qr/^without MTP\s+\d+ tok\/s system, \d+ per GPU \(batch 125 per GPU, ITL [\d.]+ ms\): MTP loses, giving 0\.\d\dx$/m,
     'the run without drafts beside it, and which way MTP goes');
like($o, qr/max running requests 48 an instance while it speculates/, 'the cap is said');
# --target with --mtp: the same search without drafts on its own line.
($c, $o, $e) = run_gp('infer', 'deepseek-v3', '--weights', 'fp8', '--gpu', 'h200-sxm', '--input',
                      '1024', '--output', '1024', '--target', '20000', '--itl-max', '50',
                      '--mtp', '1');
is($c, 0, '--target --mtp: exit 0') or diag $e;
like($o, qr/^without MTP: \d+ GPUs \(decode [^)]+\), \d+ tok\/s at ITL [\d.]+ ms; MTP needs more GPUs$/m,
     'the plan without drafts beside it');
($c, $o, $e) = run_gp('infer', 'qwen3-235b-a22b', '--gpu', 'h200-sxm', '--gpus', '8', '--ep', '8',
                      '--mtp', '1');
is($c, 1, 'MTP without the module: exit 1');
like($e, qr/has no MTP module/, 'says so');
($c, $o, $e) = run_gp(@ds, '--gpu', 'h20', '--ep', '16', '--sweep-batch');
is($c, 2, '--sweep-batch with MoE serving: usage error');
($c, $o, $e) = run_gp(@ds, '--gpu', 'h20', '--gpus', '16', '--ep', '16', '--a2a', 'mpi');
is($c, 1, 'unknown --a2a: exit 1');
like($e, qr/a2a must be 'deepep', 'nccl' or 'none'/, 'names the choices');

# The study.
($c, $o, $e) = run_gp('run', 'scripts/moe_serving.lua');
is($c, 0, 'scripts/moe_serving.lua exits 0') or diag $e;
is($e, '', 'nothing on stderr');
my ($plain) = $o =~ /^(deepseek-v3, 4096 in \/ 1536 out: GPUs for 100000 output tok\/s at ITL <= 50 ms, no EPLB\n.*?)\n\n/ms;
ok(defined $plain, 'the plan table');
my %g;
for my $l (split /\n/, $plain // '') {
    $g{$1} = $2 if $l =~ /^(h20|h800-sxm|h200-sxm)\s+(\d+)\s/;
}
is(scalar keys %g, 3, 'three cards planned');
my ($min) = sort { $g{$a} <=> $g{$b} } keys %g;
like($o, qr/^Fewest GPUs for 100000 tok\/s: \Q$min\E \(/m, 'the conclusion names the fewest-GPU card');
for my $k (keys %g) {
    like($o, qr/^Fewest GPUs .*\b\Q$k\E $g{$k}\b/m, "conclusion repeats ${k}: $g{$k} GPUs");
}
my %cost;
for my $l (split /\n/, $plain // '') {
    $cost{$1} = $2 if $l =~ /^(h20|h800-sxm|h200-sxm)\s.*\s(\d+\.\d{3})\s+\S/;
}
my ($cheap) = sort { $cost{$a} <=> $cost{$b} } keys %cost;
like($o, qr/^Cheapest per million output tokens: \Q$cheap\E at \Q$cost{$cheap}\E USD\.$/m,
     'the conclusion names the cheapest card at its table cost');
my ($gap) = $o =~ /^(H800 vs H100 .*?)\n\n/ms;
my ($maxgap, $at) = (-1, '');
for my $l (split /\n/, $gap // '') {
    if ($l =~ /^(decode|prefill)\s+(\d+)\s+[\d.]+%\s+\d+\s+\d+\s+(-?[\d.]+)%/) {
        ($maxgap, $at) = ($3, "$1 EP$2") if $3 > $maxgap;
    }
}
ok($maxgap >= 0, 'the H800 gap table');
if ($maxgap >= 0.5) {
    like($o, qr/^H800's largest gap to H100 is \Q$maxgap\E% at \Q$at\E /m,
         'the gap conclusion follows the table');
} else {
    like($o, qr/^H800 matches H100 within 0\.5% at every EP size shown/m,
         'the gap conclusion follows the table');
}
# --eplb: DeepSeek's deployment, the experts placed from the traffic; each
# card's hottest GPU receives less, so no card needs more GPUs.
($c, $o, $e) = run_gp('run', 'scripts/moe_serving.lua', '--eplb');
is($c, 0, 'moe_serving --eplb exits 0') or diag $e;
my ($eplb) = $o =~ /^(deepseek-v3, 4096 in \/ 1536 out: GPUs for 100000 output tok\/s at ITL <= 50 ms, experts placed by EPLB\n.*?)\n\n/ms;
ok(defined $eplb, '--eplb: the title says the placement');
for my $l (split /\n/, $eplb // '') {
    next unless $l =~ /^(h20|h800-sxm|h200-sxm)\s+(\d+)\s/;
    ok($2 <= $g{$1}, "--eplb: $1 on $2 GPUs, without $g{$1}");
}
($c, $o, $e) = run_gp('run', 'scripts/moe_serving.lua', '--format', 'csv');
is($c, 0, 'csv exits 0');
like($o, qr/^section,GPU,GPUs,/, 'csv: one table with a section column');
($c, $o, $e) = run_gp('run', 'scripts/moe_serving.lua', '--target', '0');
is($c, 2, 'a bad --target is a usage error');
# --disagg --output 1 (tests/lua/serve.t derives the figures): the
# decode pool keeps one whole instance (8 of 40), no ITL, and the system
# rate is the prefill pool's 32 GPUs x 7613 prompt tok/s / 2048 = 119
# (EPLB off, the runtimes' default: the hottest GPU's share slows both pools).
# The decode pool's 379 first tokens/s a GPU: batch 16 (what the KV holds
# beside the weights, buffers and the fixed reserve) / a 42.18 ms step.
# --margin 0: bf16 weights (169.56 GB a GPU) do not fit beside the default
# 10% margin of B200's 191.1 GB (tests/lua/serve.t).
($c, $o, $e) = run_gp('infer', 'deepseek-v3', '--gpu', 'b200', '--gpus', '40', '--ep', '8',
                      '--disagg', '--output', '1', '--margin', '0', '--weights', 'bf16');
is($c, 0, 'disagg output 1: exit 0') or diag $e;
like($o, qr/^pools\s+prefill 32 GPUs \(.*\) : decode 8 GPUs \(379 tok\/s each\)/m,
     'disagg output 1: decode pool of one instance, 379 first tokens/s a GPU');
like($o, qr/^ITL\s+- \(output 1: no decode step\)$/m, 'disagg output 1: no ITL');
like($o, qr/^tokens\/s system\s+119 /m, 'disagg output 1: the prefill pool binds');
unlike($o, qr/\b(?:nan|-?inf)\b/i, 'disagg output 1: no NaN or inf');
($c, $o, $e) = run_gp('infer', 'deepseek-v3', '--gpu', 'b200', '--gpus', '40', '--ep', '8',
                      '--disagg', '--output', '1', '--prefill-gpus', '40');
isnt($c, 0, 'disagg: no GPU left for decode is refused');
like($e, qr/--prefill-gpus 40 must be whole decode instances of 8/, '... naming --prefill-gpus');

# The margin is priced on the MoE path too (serve.c kv_margin, the dense
# path's mem_kv_margin): Qwen3-30B-A3B EP8 on 8 H100 SXM, --margin 0 vs 0.3.
# 0.3 x 84,932,978,278 B = 25.48 GB less room per GPU, at 427,819,008 B of
# admitted KV per sequence (mean length 2176 of 2304 tokens) 59.56 sequences;
# the activations and DeepEP buffer each one adds are a few MB, under 10%
# of that: the batch falls by 53 to 60 per GPU (the old code gave 177 both).
my %mb;
for my $m ('0', '0.3') {
    ($c, $o, $e) = run_gp('infer', 'qwen3-30b-a3b', '--gpu', 'h100-sxm', '--gpus', '8',
                          '--ep', '8', '--margin', $m);
    is($c, 0, "moe --margin $m exits 0");
    ($mb{$m}) = $o =~ /^batch per GPU\s+(\d+) \(KV holds/m;
}
ok(defined $mb{0} && defined $mb{0.3} && $mb{0} - $mb{0.3} >= 53 && $mb{0} - $mb{0.3} <= 60,
   "moe: --margin 0.3 holds 53-60 fewer sequences per GPU than --margin 0 ($mb{0} -> $mb{0.3})");

# The MoE serving model's one-prompt TTFT is the prompt's prefill steps,
# each full (prefill_tokens an attention group, others' prompts filling
# it), with no queueing: the same at 16 and 48 requests, where the row
# read a bare "TTFT" beside the dense path's "TTFT (one prompt)".  Its
# label says what it is.  A 20000-token prompt over 16384-token steps:
# ceil(20000 / 16384) = 2 steps; TP16 attention (no --dp-attention): a
# TP16 group.  16 and 48 requests: 1 and 3 a GPU, what the KV holds at
# that prompt.  Under that steady concurrency the TTFT is a request's
# joining it (engine/serve_plan.c coloc_loaded, gp.infer's rule): the step
# in flight, then the same 2 steps, its own row first, and it rises with
# the load (more of the steps in flight are prefill steps).
{
    my (%ttft, %load);
    for my $n (16, 48) {
        ($c, $o, $e) = run_gp('infer', 'deepseek-v3', '--gpu', 'h200-sxm', '--gpus', '16', '--ep', '16',
                              '--input', '20000', '--concurrency', $n);
        is($c, 0, "EP16 at $n requests: exit 0") or diag $e;
        like($o, qr/^TTFT \(full prefill steps\)\s+([\d.]+) ms; 2 steps of 16384 prompt tokens a TP16 attention group \(the prompt's 20000 and others'\), no queueing$/m,
             "EP16 at $n requests: the one-prompt TTFT row names its steps");
        ($ttft{$n}) = $o =~ /^TTFT \(full prefill steps\)\s+([\d.]+) ms/m;
        like($o, qr/^TTFT \(under load\)\s+[\d.]+ ms \([\d.]+-[\d.]+\); the step in flight [\d.]+ ms, then 2 steps of [\d.]+ ms\nTTFT \(full prefill steps\)/m,
             "EP16 at $n requests: the loaded TTFT's row, its parts, before one prompt's");
        ($load{$n}) = $o =~ /^TTFT \(under load\)\s+([\d.]+) ms/m;
    }
    is($ttft{16}, $ttft{48}, 'no queueing: the same one-prompt TTFT at 16 and 48 requests, as its row says');
    ok($load{16} > $ttft{16} && $load{48} > $load{16},
       "under load: above one prompt's and rising with it ($ttft{16} < $load{16} < $load{48} ms)");
}

done_testing();
