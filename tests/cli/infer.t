# gpuplan infer / roofline: the summary table, json, sweep + SVG, errors.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
require './tests/cli/lib.pl';

my ($c, $o, $e) = run_gp('infer', 'llama3-70b', '--gpu', 'h100-sxm', '--gpus', '2', '--tp', '2',
                         '--weights', 'fp8', '--concurrency', '64', '--price', '$2.99/h');
is($c, 0, 'infer exits 0');
like($o, qr/^llama3-70b on 2 x h100-sxm \(tp 2, pp 1\), fp8 weights, bf16 KV, in 2048 \/ out 256$/m, 'title');
like($o, qr/^batch per replica\s+64 \(x 1 replica\)$/m, 'batch from concurrency');
like($o, qr/^ITL at batch\s+\d+\.\d\d ms \(\d+\.\d\d-\d+\.\d\d\)$/m, 'ITL in ms, with its 80% range');
like($o, qr/^cost per 1M output tokens\s+\d+\.\d+ USD \(\d+\.\d+-\d+\.\d+\)$/m, 'cost per token, with its range');
like($o, qr/^ranges\s+where 80% of published runs like this landed \(\d+ cases: vendor=NVIDIA\/stack=graphs\S*\)$/m,
     'where the ranges come from');
is($e, '', 'nothing on stderr');

($c, $o, $e) = run_gp('infer', 'llama2-13b', '--gpu', 'h200-sxm', '--batch', '1', '--input', '1',
                      '--output', '2', '--format', 'json');
is($c, 0, 'json exits 0');
# 13B bf16 on H200 at batch 1 (catalog h200-sxm 4.8 TB/s, its measured hbm 0.89;
# GEMV rate 0.94 of streaming, 3.9 us fill + 1 us graph launch per kernel,
# engine/roofline.c).  Weights read per token:
# (40 x (4 h^2 + 3 h f + 2h) + V h) x 2 B, h 5120, f 13824, V 32000
# = 25,704,038,400 B; / (4.8e12 x 0.89 x 0.94 = 4.016e12 B/s) = 6.401 ms,
# + 364 kernels (9 per layer + 4) x 4.9 us = 1.784 ms -> 8.185 ms,
# 1 / 8.185 ms = 122.18 tok/s.  0.5%: the hand sum leaves out the
# activation and one-token KV bytes (16 MB, 0.06%) and the non-GEMM ops'
# streaming at 0.89 rather than 0.84 of the bandwidth (engine: 122.12).
my $w13 = (40 * (4 * 5120**2 + 3 * 5120 * 13824 + 2 * 5120) + 32000 * 5120) * 2;
my $itl13 = $w13 / (4.8e12 * 0.89 * 0.94) + 364 * 4.9e-6;
my ($tps) = $o =~ /"stream_tokens_per_s":\s*([\d.]+)/;
ok(defined $tps && abs($tps * $itl13 - 1) < 0.005, '13B H200 batch-1 decode 122.18 tok/s')
    or diag($o);

my $dir = tempdir(CLEANUP => 1);
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--weights', 'fp8',
                      '--sweep-batch', '--svg', "$dir/sweep.svg");
is($c, 0, 'sweep exits 0');
# "mean ITL ms": the gap a user sees, whose inverse tok/s/user is
like($o, qr/^batch\s+ITL ms\s+mean ITL ms\s+tok\/s\/user\s+tok\/s system\s+tok\/s\/GPU$/m, 'sweep header');
ok(-s "$dir/sweep.svg", 'sweep SVG written');
ok(!-e "$dir/sweep.svg.tmp", 'no temporary file left');
# --output 1 runs no decode step (the one token is the prefill's): the
# sweep's rows have no ITL, so its plot (tokens/s against ITL) would be
# empty axes.  Refused before anything is written.
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--output', '1',
                      '--sweep-batch', '--svg', "$dir/one.svg");
is($c, 2, '--svg with --output 1: a usage error');
like($e, qr/--output 1 runs no decode step: there is no ITL to plot/, '... saying why');
ok(!-e "$dir/one.svg", '... and no SVG written');

($c, $o, $e) = run_gp('roofline', '--gpu', 'h100-sxm', '--model', 'llama3-8b', '--svg', "$dir/roof.svg");
is($c, 0, 'roofline exits 0');
# H100 SXM bf16 row (catalog h100-sxm: 989 TFLOPS dense, 3.35 TB/s; hopper
# arch: gemm bf16 0.80 at the sustained-load 0.82, hbm 0.84), each printed
# to 0.1:
#   dense 989.0; achievable 989 x 0.80 x 0.82 = 648.78 TFLOP/s;
#   ridge at peak 989e12 / 3.35e12 = 295.22 FLOP/B;
#   ridge achievable 648.78e12 / (3.35e12 x 0.84 = 2.814e12) = 230.55 FLOP/B.
like($o, qr/^bf16\s+989\.0\s+648\.8\s+295\.2\s+230\.6$/m, 'H100 bf16 ridge 295.2 at peak');
# --model without --svg: the operators as a table.  Llama 3 8B qkv in bf16
# (K 4096, N 6144): prefill of 2048 tokens 2 M N K / (2 (K N + M K + M N))
# = 1117.1 FLOP/B (compute), decode at batch 1 K N / (K N + K + N) = 1.0.
($c, $o, $e) = run_gp('roofline', '--gpu', 'h100-sxm', '--model', 'llama3-8b');
is($c, 0, 'roofline --model without --svg exits 0');
like($o, qr/^bf16\s+989\.0\s+648\.8\s+295\.2\s+230\.6$/m, 'the ridge table first');
like($o, qr/^phase\s+op\s+calls\s+FLOP\/B\s+TFLOP\/s\s+bound\s+us per call$/m, 'the operators table');
like($o, qr/^prefill\s+qkv\s+32\s+1117\.1\s+[\d.]+\s+compute\s/m, 'prefill qkv: 1117.1 FLOP/B, compute-bound');
like($o, qr/^decode\s+qkv\s+32\s+1\.0\s+[\d.]+\s+memory\s/m, 'decode qkv: 1.0 FLOP/B, memory-bound');
($c, $o, $e) = run_gp('roofline', '--gpu', 'h100-sxm', '--model', 'llama3-70b');
is($c, 0, 'a model that does not fit one GPU is an answer');
like($o, qr/^llama3-70b does not fit one h100-sxm: needs [\d.]+ GB per GPU.*; no operators to place$/m, 'says so');
($c, $o, $e) = run_gp('roofline', '--gpu', 'h100-sxm', '--batch', '4');
is($c, 2, '--batch without --model is a usage error');
my $svg = do {
    open(my $fh, '<', "$dir/roof.svg") or die;
    local $/;
    my $text = <$fh>;
    close $fh;
    $text;
};
like($svg, qr/arithmetic intensity \(FLOP\/byte\)/, 'x axis labelled');
like($svg, qr/decode \(batch 1\)/, 'decode ops in the legend');

($c, $o, $e) = run_gp('infer', 'llama2-7b', '--gpu', 'rtx-4090', '--memory', '6GB');
is($c, 0, 'does not fit is an answer: exit 0');
like($o, qr/\Adoes not fit: needs [\d.]+ GB per GPU.*try --weights int4.*\n\S+ on 1 x rtx-4090/, 'the verdict leads: what it needs and what helps, then the deployment');
($c, $o, $e) = run_gp('infer', 'llama2-7b', '--gpu', 'rtx-4090', '--memory', '6GB', '--offload',
                      '--batch', '1', '--input', '512', '--output', '128');
is($c, 0, 'fits with --offload');
like($o, qr/^layers in host memory\s+\d+ /m, 'reports offloaded layers');

# The hint names only the levers not pulled yet.
($c, $o, $e) = run_gp('infer', 'llama3.1-405b', '--gpu', 'rtx-4090');
like($o, qr/; try --weights int4, --kv fp8, more GPUs with --tp or --offload$/m,
     'nothing set: every lever suggested');
($c, $o, $e) = run_gp('infer', 'llama3.1-405b', '--gpu', 'rtx-4090', '--weights', 'int4',
                      '--kv', 'fp8', '--offload');
like($o, qr/; try more GPUs with --tp or more host memory with --host-memory \(the 32\.00 GB is assumed\)$/m,
     'int4, fp8 KV and --offload set: not suggested again (the default host memory said: walk7.t 18)');
unlike($o, qr/try[^\n]*(--weights|--kv|--offload\b)/, 'no --weights/--kv/--offload in that hint');
# A stated count of host layers that leaves the GPU short: raising it helps.
($c, $o, $e) = run_gp('infer', 'llama2-13b', '--gpu', 'rtx-4090', '--offload', '--offload-layers', '3');
like($o, qr/^does not fit: needs [\d.]+ GB per GPU even with 3 of its 40 layers in host memory, .*; try --weights int4, --kv fp8, more GPUs with --tp or a larger --offload-layers$/m,
     '--offload-layers too few: the count and the lever named');
# The host short instead (Llama 3 8B's 10 of 32 layers, 4.46 GB, in 1 GB):
# more host layers would need more, so raising the count is not offered;
# every layer of the stage already there: nothing left to raise.
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'rtx-4090', '--offload', '--offload-layers', '10',
                      '--host-memory', '1GB');
like($o, qr/^does not fit: offloading 10 of 32 layers needs [\d.]+ GB of host memory, has 1\.00 GB; try /m,
     '--offload-layers past the host memory: the host named');
unlike($o, qr/larger --offload-layers/, '... and a larger count not offered');
($c, $o, $e) = run_gp('infer', 'llama3-70b', '--gpu', 'rtx-4090', '--offload', '--offload-layers', '80',
                      '--memory', '2GB');
like($o, qr/^does not fit: needs [\d.]+ GB per GPU even with 80 of its 80 layers in host memory/m,
     'every layer on the host and still short');
unlike($o, qr/larger --offload-layers|--host-memory/,
       '... and neither a larger count nor more host memory offered (the GPU is short)');
($c, $o, $e) = run_gp('infer', 'llama2-13b', '--gpu', 'rtx-4090', '--offload-layers', '3');
is($c, 2, '--offload-layers without --offload refused: a usage error, as --host-memory is');
like($e, qr/^gpuplan: infer: --offload-layers needs --offload \(it places layers in host memory\)$/m,
     '... naming the option');
($c, $o, $e) = run_gp('infer', 'llama3.1-405b', '--gpu', 'rtx-4090', '--weights', 'nf4-dq',
                      '--kv', 'int8', '--target', '100', '--tp', '1');
# (--tp 1: the searched TP's hint is --pp, tests/cli/densetarget.t)
like($o, qr/^does not fit: .*; try more GPUs with --tp or --offload$/m,
     'the --target path uses the same hint (nf4-dq and int8 KV count as pulled)');

# --weights: one rule for fit and infer (gpuplan.memory.weight_format).
# llama2-7b at 4.85 bits: 6,476,005,376 linear weights x 4.85/8 =
# 3,926,078,259.2 B + embedding and lm_head 2 x 32000 x 4096 x 2 B =
# 524,288,000 B + norms 266,240 x 2 B = 532,480 B -> 4.4509e9 B = 4.45 GB
# in fit; infer stores the norms at 4.85 bits too (161,408 B): 4.4505e9,
# also 4.45 GB at two decimals.
($c, $o, $e) = run_gp('infer', 'llama2-7b', '--gpu', 'h100-sxm', '--weights', '4.85');
is($c, 0, 'infer accepts GGUF-style bits per weight');
like($o, qr/^weights per GPU\s+4\.45 GB$/m, 'infer: 4.85 bits -> 4.45 GB of weights');
($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'h100-sxm', '--method', 'infer', '--weights', '4.85');
like($o, qr/^weights\s+4\.15\s+4\.45\s*$/m, 'fit: the same 4.45 GB (4.15 GiB)');
($c, $o, $e) = run_gp('infer', 'llama2-7b', '--gpu', 'h100-sxm', '--weights', 'gptq-g64');
is($c, 0, 'infer accepts the group variants fit accepts');
($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'h100-sxm', '--method', 'infer', '--weights', 'mxfp4');
is($c, 0, 'fit accepts the formats infer accepts (mxfp4)');
($c, $o, $e) = run_gp('infer', 'llama2-7b', '--gpu', 'h100-sxm', '--weights', '40');
is($c, 1, 'bits out of range: exit 1');
like($e, qr/^gpuplan: infer: --weights: 40 bits per weight is out of \[1, 32\]$/m, 'names the value');

($c, $o, $e) = run_gp('infer', 'llama3-8b');
is($c, 2, 'missing --gpu: usage error');
like($e, qr/--gpu ID is required/, 'names the missing option');
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--weights', 'int3');
is($c, 2, 'bad weight format: a usage error, exit 2');
like($e, qr/unknown weight format 'int3'/, 'names the format');
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--svg', 'x.svg');
is($c, 2, '--svg without --sweep-batch is a usage error');
($c, $o, $e) = run_gp('roofline');
is($c, 2, 'roofline without --gpu: usage error');

# A target the model cannot serve (one replica does not fit) is an answer,
# as in plain infer: "does not fit", exit 0.
# (--tp 1 given: the TP search finds TP8 replicas of 6 GB GPUs)
($c, $o, $e) = run_gp('infer', 'llama2-7b', '--gpu', 'rtx-4090', '--memory', '6GB', '--target', '1000',
                      '--tp', '1');
is($c, 0, '--target for a model that does not fit: exit 0');
like($o, qr/^does not fit: needs [\d.]+ GB per GPU/m, '--target says it does not fit');
is($e, '', '--target not fitting: nothing on stderr');

# --target in the buyer's currency: h20 at AutoDL's 6.98 CNY/h; cost per
# 1M tokens = 6.98 x GPUs / 3600 / (tokens/s) x 1e6, to the printed 0.001.
($c, $o, $e) = run_gp('infer', 'llama3-70b', '--gpu', 'h20', '--tp', '4', '--weights', 'fp8',
                      '--target', '5000', '--currency', 'CNY');
is($c, 0, '--target --currency CNY exits 0');
like($o, qr/cost\/Mtok/, 'the cost column names no currency sign');
unlike($o, qr/\$/, 'no $ anywhere');
my ($tg, $ttps, $tcost) = $o =~ /^\s+5000\s+50\.0\s+(\d+)\s+TP4\s+\d+\s+(\d+)\s+[\d.]+\s+\d+\s+([\d.]+) CNY$/m;
ok(defined $tcost && abs($tcost - 6.98 * $tg / 3600 / $ttps * 1e6) < 0.002, 'cost/Mtok = 6.98 x GPUs / 3600 / tok/s x 1e6 CNY')
    or diag $o;
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--market', 'mars');
is($c, 1, 'infer --market unknown: an error');
like($e, qr/^gpuplan: infer: --market 'mars': no price in the catalog is from it/, 'naming it');

# --gpu A,B,C: the same deployment on each card side by side (tests/lua/
# cards.t checks each row is gp.infer's on that card), ranked by cost per
# token; a card the model does not fit last, with why.
($c, $o, $e) = run_gp('infer', 'llama3-70b', '--gpu', 'h200-sxm,h100-sxm,rtx-4090', '--weights', 'fp8',
                      '--tp', '2', '--gpus', '2', '--concurrency', '32');
is($c, 0, 'infer with a list of cards exits 0') or diag $e;
like($o, qr/^card\s+GPUs\s+layout\s+batch\s+TTFT ms\s+ITL ms\s+mean ITL ms\s+tok\/s\/user\s+tok\/s\/GPU\s+cost\/Mtok\s+fits\s+against the winner$/m,
     'the per-card columns');
my @irow = grep { /^(h200-sxm|h100-sxm|rtx-4090)\s+\d+\s/ } split /\n/, $o;
is(scalar @irow, 3, 'a row per card');
my @icost = map { /\s([\d.]+) USD\s/ ? $1 : 9e99 } @irow;
ok($icost[0] <= $icost[1], 'the cheapest per token first');
like($irow[0], qr/\(the winner\)$/, 'the winner');
like($irow[2], qr/^rtx-4090\s.*\sno\s+does not fit$/, 'what does not fit last');
like($o, qr/^rtx-4090 does not fit: needs [\d.]+ GB per GPU/m, 'and why');
($c, $o, $e) = run_gp('infer', 'llama3-70b', '--gpu', 'h200-sxm,h100-sxm', '--format', 'json');
like($o, qr/\A\{.*"per_card":\[/s, 'json: one object with per_card');
# --target with several cards: each card's plan side by side
# (tests/cli/walk_s76.t checks its figures against the one-card runs)
($c, $o, $e) = run_gp('infer', 'llama3-70b', '--gpu', 'h200-sxm,h100-sxm', '--target', '1000');
is($c, 0, '--target with several cards: each card planned') or diag $e;
like($o, qr/^$_\s+\d+\s/m, "--target: a row for $_") or diag $o for qw(h200-sxm h100-sxm);
($c, $o, $e) = run_gp('infer', 'llama3-70b', '--gpu', 'h200-sxm,,h100-sxm');
is($c, 2, 'an empty id in the list: a usage error');

# Options the chosen mode would ignore are usage errors, not silent no-ops.
for my $bad (['--itl-max', '10'], ['--ops', '--sweep-batch'], ['--sweep-batch', '--target', '100'],
             ['--sweep-batch', '--batch', '4'], ['--sweep-batch', '--concurrency', '4'],
             ['--host-bw', '5GB/s'], ['--host-memory', '64GB'], ['--target', '100', '--batch', '4'],
             ['--target', '100', '--gpus', '4'], ['--sweep-batch', '--requests', '100'],
             ['--target', '100', '--requests', '100'],
             # a static batch is priced at its one --batch, which these choose
             ['--batching', 'static', '--sweep-batch'], ['--batching', 'static', '--target', '100']) {
    ($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', @$bad);
    is($c, 2, "infer @$bad: usage error");
    like($e, qr/^gpuplan: infer: --/, "infer @$bad: names the option");
}
# ... and a static batch says the search chooses the batch, not "give --batch N"
# (which --target and --sweep-batch then refuse).
for my $m (['--sweep-batch'], ['--target', '100']) {
    ($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--batching', 'static', @$m);
    like($e, qr/^gpuplan: infer: --batching static prices the one batch it is given; the (batch sweep|target search) chooses the batch itself/,
         "infer --batching static @$m: the search's own refusal");
}
($c, $o, $e) = run_gp('infer', 'llama3-8b', 'llama3-70b', '--gpu', 'h100-sxm');
is($c, 2, 'infer with two models: usage error');

# --requests N (gp.infer's requests): a finite run.  One request is its
# prompt's prefill (prefill_share_s) and output - 1 = 199 decode steps at
# batch 1: tokens/s = 200 / (share + 199 x itl_batch1), the engine's own
# figures from the same JSON (1e-9 relative: the same arithmetic in
# another order).  A count below 1 or not whole names the flag; the MoE
# serving model prices it colocated (below).
# TensorRT-LLM mixes prompts into decode steps by default (gp.infer's
# M.mixes); --no-chunked-prefill keeps the prefill apart, the formula
# checked here.
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--runtime', 'trtllm',
                      '--weights', 'fp8', '--input', '1000', '--output', '200',
                      '--requests', '1', '--no-chunked-prefill', '--format', 'json');
is($c, 0, '--requests 1: exit 0');
my %rq = map { my ($v) = $o =~ /"$_":([-\d.eE+]+)/; ($_ => $v) }
    qw(tokens_per_s prefill_share_s itl_batch1_s);
ok(defined $rq{tokens_per_s} && abs($rq{tokens_per_s} * ($rq{prefill_share_s}
   + 199 * $rq{itl_batch1_s}) / 200 - 1) < 1e-9, '--requests 1: one prefill and 199 decode steps');
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--requests', '0');
is($c, 1, '--requests 0: exit 1');
like($e, qr/^gpuplan: infer: --requests must be a whole number/, '--requests 0: names the flag');
# With the MoE serving options (colocated) a burst too (serve_plan.c
# burst, through infer_burst).  16 requests on 16 GPUs with DP attention:
# one a GPU, batch 1; its prompt of 512 tokens (under prefill_tokens) is
# the first step, alone, priced as the steady state prices a prompt
# (prompt_cost: the rank's own part stalled, the experts' not:
# (share - experts) x stall + experts), then its one decode step at batch
# 1 (tpot): 16 x 2 / (prompt + tpot).  The same arithmetic in another
# order: within 1e-9.
($c, $o, $e) = run_gp('infer', 'deepseek-v3', '--gpu', 'h800-sxm', '--gpus', '16', '--ep', '16',
                      '--dp-attention', '--requests', '16', '--input', '512', '--output', '2',
                      '--format', 'json');
is($c, 0, '--requests with the MoE serving options: exit 0');
my %sv = map { my ($v) = $o =~ /"$_":([-\d.eE+]+)/; ($_ => $v) }
    qw(tokens_per_s prefill_share_s prefill_experts_s prefill_stall tpot_s batch_per_gpu);
ok(defined $sv{tokens_per_s} && $sv{batch_per_gpu} == 1 &&
   abs($sv{tokens_per_s} * (($sv{prefill_share_s} - $sv{prefill_experts_s}) * $sv{prefill_stall}
   + $sv{prefill_experts_s} + $sv{tpot_s}) / 32 - 1) < 1e-9,
   '--requests 16 on EP16 DP attention: one prompt step and one decode step at batch 1');
($c, $o, $e) = run_gp('infer', 'deepseek-v3', '--gpu', 'h800-sxm', '--gpus', '16', '--ep', '8',
                      '--dp-attention', '--disagg', '--requests', '100');
is($c, 2, '--requests with --disagg: a usage error, exit 2');
like($e, qr/^gpuplan: infer: --requests with disagg: a burst is priced colocated/,
     '... naming the option and why');

# --chunked-prefill (gp.infer's chunked_prefill): the prompts ride in the
# decode steps within max_num_tokens a step (engine/infer_run.c
# mixed_steps).  64 requests of 2048 in / 256 out at the default budget
# 8192: the room beside the decodes is 8192 - 64 = 8128 tokens, a prompt
# fits in ceil(2048 / 8128) = 1 chunk, and a sequence's slot of the
# batch turns over in its prompt's step and 255 decode steps, 64 prompts
# every 256 steps, so 64 / 256 = 0.25 of the steps carry one (off the
# graph).  Without the flag the prompts are prefilled apart and the steps
# that hold their share are 64 x 2048 / (255 x 8128) = 0.063239.  The
# same arithmetic as the engine's: 1e-12.
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--batch', '64',
                      '--chunked-prefill', '--format', 'json');
is($c, 0, '--chunked-prefill: exit 0');
my ($ck) = $o =~ /"eager_steps":([-\d.eE+]+)/;
ok(defined $ck && abs($ck - 64 / 256) < 1e-12, '--chunked-prefill: a prompt chunk in 64 / 256 of the steps')
    or diag($o);
like($o, qr/max_num_tokens=8192 \(TensorRT-LLM's; the chunked prefill's tokens a step\)/,
     '--chunked-prefill: the assumed budget is said');
# --runtime vllm takes vLLM's own budget, its API server's default
# (EngineArgs.get_batch_defaults): 8192 on a card of >= 70 GiB other than
# an A100, else 2048; not TensorRT-LLM's.  On an A100 the room beside the 64
# decodes is 2048 - 64 = 1984 tokens, a 2048-token prompt takes
# ceil(2048 / 1984) = 2 chunks, a slot turns over in 2 + 255 = 257 steps,
# and 64 x 2048 / 257 = 510 tokens a step fit in 1984, so 64 / 257 x 2 =
# 128 / 257 of the steps carry a chunk (at 8192: 64 / 256).  The engine's arithmetic: 1e-12.
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'a100-sxm-80gb', '--batch', '64',
                      '--runtime', 'vllm', '--format', 'json');
is($c, 0, '--runtime vllm on an A100: exit 0');
($ck) = $o =~ /"eager_steps":([-\d.eE+]+)/;
ok(defined $ck && abs($ck - 128 / 257) < 1e-12, "--runtime vllm on an A100: vLLM's 2048 a step, 2 chunks a prompt")
    or diag($o);
like($o, qr/max_num_tokens=2048 \(vLLM's API server's on a100-sxm-80gb; the chunked prefill's tokens a step\)/,
     "--runtime vllm: vLLM's budget is said");
unlike($o, qr/TensorRT-LLM's; the chunked/, "--runtime vllm: not TensorRT-LLM's");
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--batch', '64',
                      '--runtime', 'vllm', '--format', 'json');
like($o, qr/max_num_tokens=8192 \(vLLM's API server's on h100-sxm;/,
     "--runtime vllm on an H100: vLLM's 8192");
# Without chunked prefill vLLM raises its budget to max_model_len (the
# model's context, 131072 for Llama 3.1): the steps that hold the prompts'
# prefill share are 64 x 2048 / (255 x (131072 - 64)), as below at 8192.
($c, $o, $e) = run_gp('infer', 'llama3.1-8b', '--gpu', 'h100-sxm', '--batch', '64',
                      '--runtime', 'vllm', '--no-chunked-prefill', '--format', 'json');
($ck) = $o =~ /"eager_steps":([-\d.eE+]+)/;
ok(defined $ck && abs($ck - 64 * 2048 / (255 * (131072 - 64))) < 1e-12,
   "--runtime vllm --no-chunked-prefill: vLLM's budget is max_model_len") or diag($o);
like($o, qr/max_num_tokens=131072 \(vLLM without chunked prefill: max_model_len/,
     '... and said');
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--batch', '64', '--format', 'json');
my ($nk) = $o =~ /"eager_steps":([-\d.eE+]+)/;
ok(defined $nk && abs($nk - 64 * 2048 / (255 * 8128)) < 1e-12, 'without it: the prefill apart');
($c, $o, $e) = run_gp('infer', 'deepseek-v3', '--gpu', 'h800-sxm', '--gpus', '16', '--ep', '16',
                      '--dp-attention', '--chunked-prefill');
is($c, 2, '--chunked-prefill with the MoE serving options: a usage error, exit 2');
like($e, qr/^gpuplan: infer: --chunked-prefill is priced for one model on its replicas; the MoE serving model always chunks its prompts itself, --prefill-tokens a step \(default: the runtime's step budget, else 16384\): give --prefill-tokens instead$/m,
     '... naming the flag and what to give');
($c, $o, $e) = run_gp('infer', '--help');
like($o, qr/^  --chunked-prefill  prompts ride in the decode steps/m, 'infer --help: --chunked-prefill');

# --max-num-tokens (gp.infer's max_num_tokens) sets that budget from the
# command line.  At 1024 the room beside the 64 decodes is 1024 - 64 = 960
# tokens, a 2048-token prompt takes ceil(2048 / 960) = 3 chunks, a slot
# turns over in 3 + 255 = 258 steps, and the 64 / 258 prompts a step need
# 64 x 2048 / 258 = 508 tokens < 960, so 64 / 258 x 3 = 192 / 258 =
# 0.744186 of the steps carry a chunk.  The
# engine's arithmetic: 1e-12.
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--batch', '64',
                      '--chunked-prefill', '--max-num-tokens', '1024', '--format', 'json');
is($c, 0, '--max-num-tokens: exit 0');
($ck) = $o =~ /"eager_steps":([-\d.eE+]+)/;
ok(defined $ck && abs($ck - 192 / 258) < 1e-12, '--max-num-tokens 1024: 3 chunks a prompt, 192 / 258 of the steps')
    or diag($o);
unlike($o, qr/max_num_tokens=8192/, '--max-num-tokens given: no assumed budget');
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--max-num-tokens', '0');
is($c, 1, '--max-num-tokens 0: exit 1');
like($e, qr/--max-num-tokens/, '... naming the flag');
# A budget below the prompt where the prompt is not chunked leaves it no
# step to run in (vLLM refuses max_num_batched_tokens below max_model_len
# without chunked prefill, TensorRT-LLM's LLM API a prompt over
# max_num_tokens): refused, naming the flag, where it was priced as one
# prompt a prefill step.  Runtime trtllm takes prompts whole unless
# --chunked-prefill is given; vllm (V1) always chunks: priced.
for my $rt ([], ['--runtime', 'trtllm'], ['--runtime', 'vllm', '--no-chunked-prefill']) {
  ($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', @$rt, '--max-num-tokens', '16');
  is($c, 2, "--max-num-tokens 16 below the 2048-token prompt (@$rt): a usage error, exit 2");
  like($e, qr/^gpuplan: infer: --max-num-tokens \(16\) is below the prompt \(--input 2048 tokens\): without chunked prefill no step can hold that prompt .*give --chunked-prefill, or --max-num-tokens of 2048 or more$/m,
       '... naming the flag and what to give');
}
for my $rt (['--runtime', 'vllm'], ['--runtime', 'trtllm', '--chunked-prefill']) {
  ($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', @$rt, '--max-num-tokens', '1024');
  is($c, 0, "--max-num-tokens 1024 below the prompt, chunked (@$rt): exit 0");
}
# The MoE serving model reads no step budget (its prompts go
# prefill_tokens a step): refused, not ignored.
($c, $o, $e) = run_gp('infer', 'deepseek-v3', '--gpu', 'h800-sxm', '--gpus', '16', '--ep', '16',
                      '--dp-attention', '--max-num-tokens', '4096');
is($c, 2, '--max-num-tokens with the MoE serving options: a usage error, exit 2');
like($e, qr/^gpuplan: infer: --max-num-tokens is the step budget of one model on its replicas; the MoE serving model does not read it: its prompts go --prefill-tokens a step \(default: the runtime's step budget, else 16384\): give --prefill-tokens instead$/m,
     '... naming the flag and what to give');
($c, $o, $e) = run_gp('infer', '--help');
like($o, qr/^  --max-num-tokens N  the engine's tokens per step at most/m, 'infer --help: --max-num-tokens');

# An SVG that cannot be written: exit 1 naming the path, nothing left.
my $ro = tempdir(CLEANUP => 1);
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--sweep-batch', '--svg', $ro);
is($c, 1, '--svg to a directory: exit 1');
like($e, qr/^gpuplan: infer: --svg: cannot write '\Q$ro\E': it is a directory/m, 'names the path');
ok(!-e "$ro.tmp", 'no temporary file left beside it');
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--sweep-batch', '--svg', "$ro/no/such/x.svg");
is($c, 1, '--svg under a missing directory: exit 1');
like($e, qr/^gpuplan: infer: --svg: cannot write '\Q$ro\E\/no\/such\/x\.svg': its directory '\Q$ro\E\/no\/such' does not exist$/m, 'names the path and the missing directory');
is($o, '', 'and printed nothing before (the table came first)');

# roofline: the model options only shape the chart's points; without
# --model they were ignored in silence.  A bad --model is found before the
# table is printed.
for my $bad (['--weights', 'int4'], ['--batch', '4'], ['--input', '512']) {
    ($c, $o, $e) = run_gp('roofline', '--gpu', 'h100-sxm', @$bad);
    is($c, 2, "roofline @$bad without --model: usage error");
    like($e, qr/^gpuplan: roofline: --\w+ needs --model/, "roofline @$bad: names the option");
}
($c, $o, $e) = run_gp('roofline', '--gpu', 'h100-sxm', 'extra');
is($c, 2, 'roofline with an argument: usage error');
($c, $o, $e) = run_gp('roofline', '--gpu', 'h100-sxm', '--model', 'no-such', '--svg', "$ro/r.svg");
is($c, 2, 'roofline --model unknown: exit 2, an unknown catalog id (a usage error)');
is($o, '', 'nothing printed before the error');
ok(!-e "$ro/r.svg", 'no chart written');
# --margin: the option of fit, with its range; an 80-layer model never
# offloads more than its 80 layers (it once said "offloading 88 layers").
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--margin', '1.5');
is($c, 1, 'infer --margin out of range is an error');
like($e, qr/--margin must be a number in \[0, 1\) \(got 1\.5\)/, '... and says the range');
# Llama 3.1 70B: 80 layers and a 128k context, so 100,000 prompt tokens
# are a request it takes (Llama 2's 4096 refuses them).
($c, $o, $e) = run_gp('infer', 'llama3.1-70b', '--gpu', 'rtx-4090', '--offload',
                      '--input', '100000', '--output', '256');
like($o, qr/^does not fit: offloading (\d+) of 80 layers needs/m, 'offload counts layers of 80');
ok($o =~ /offloading (\d+) of 80/ && $1 <= 80, '... never more than 80');

# fit and infer share one inference-memory model: the same sequences for
# the same job (8B fp8 on H200, 2048 + 256/2 tokens held per sequence: 435,
# derived in tests/lua/infer.t).
($c, $o, $e) = run_gp('fit', 'llama3.1-8b', '--gpu', 'h200-sxm', '--method', 'infer',
                      '--weights', 'fp8', '--ctx', '2176', '--batch', '64');
like($o, qr/^max concurrent sequences at this context: 435;/m, 'fit: 435 sequences');
($c, $o, $e) = run_gp('infer', 'llama3.1-8b', '--gpu', 'h200-sxm', '--weights', 'fp8',
                      '--input', '2048', '--output', '256');
like($o, qr/^KV budget per GPU\s+124\.36 GB \(435 sequences\)$/m, 'infer: the same 435');


# --in / --out are now --input / --output, gp.infer's names: the old
# spelling is refused, naming the new one.
($c, $o, $e) = run_gp('infer', 'llama2-7b', '--gpu', 'h100-sxm', '--in', '512');
is($c, 2, '--in is a usage error');
like($e, qr/^gpuplan: infer: unknown option '--in' \(did you mean '--input'\?\)$/m,
     '... naming --input');
is($o, '', '... and prints no answer');
($c, $o, $e) = run_gp('infer', 'llama2-7b', '--gpu', 'h100-sxm', '--out', '64');
like($e, qr/^gpuplan: infer: unknown option '--out' \(did you mean '--output'\?\)$/m,
     '--out names --output');
($c, $o, $e) = run_gp('infer', '--help');
like($o, qr/^  --input N +prompt tokens per request \(default 2048, or the model's\n +context less --output where that is shorter\)$/m,
     'infer --help: --input');
like($o, qr/^  --output N +generated tokens per request \(default 256\)$/m, 'infer --help: --output');

# --itl-max is milliseconds in (0, 1 h]: a 0 typed was quoted back as the
# string the command passed on ("got string '0ms'"), and 1e300 as
# "1.0000000000000001e+300ms".  Both now name the flag, its unit and bound,
# and the text as typed (1e300, not the 1e+300 it reads as).
for my $bad (['0', '0'], ['1e300', '1e300']) {
    ($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--target', '1000',
                          '--itl-max', $bad->[0]);
    is($c, 1, "--itl-max $bad->[0]: exit 1");
    like($e, qr/^gpuplan: infer: --itl-max must be a number of milliseconds in \(0, 3600000\] \(got $bad->[1]\)$/m,
         "--itl-max $bad->[0]: names the flag, its unit and its bound");
}

# --itl-max stated at its default is the same search as left out: a dense
# model's --target takes it as its own limit.  It read as a MoE serving
# option (serve.wants), which dropped vLLM's chunked prefill (vLLM V1
# always chunks): with --itl-max 50 142 GPUs, batch 377, "max_num_tokens=
# 8192 (vLLM without chunked prefill ...)"; without it 146 GPUs, batch 100.
{
    my @job = ('infer', 'llama3-8b', '--gpu', 'a100-sxm-80gb', '--tp', '2', '--input', '2048',
               '--output', '128', '--runtime', 'vllm', '--target', '100000');
    my ($c1, $o1, $e1) = run_gp(@job);
    my ($c2, $o2, $e2) = run_gp(@job, '--itl-max', '50');
    is($c2, 0, '--target --itl-max 50: exit 0') or diag $e2;
    is($o2, $o1, '--itl-max 50 said: the same answer as the default 50');
    like($o2, qr/--chunked-prefill \(vLLM V1 always chunks/, '--itl-max keeps vLLM\'s chunked prefill');
}

# --sweep-batch --svg for a model that does not fit: no curve, and the
# answer says the file was not written (it was left out in silence).
{
    my $d = tempdir(CLEANUP => 1);
    ($c, $o, $e) = run_gp('infer', 'llama2-70b', '--gpu', 'h100-sxm', '--sweep-batch', '--svg', "$d/c.svg");
    is($c, 0, 'a sweep that does not fit: an answer');
    like($o, qr/^does not fit: .*; no curve, so nothing written to \Q$d\E\/c\.svg$/m,
         'it says the SVG was not written');
    ok(!-e "$d/c.svg", 'and no file is there');
}

# A TP group past a node's scale-up fabric: it was the collective's
# refusal, "16 gpus exceed the topology (1 nodes x 8 gpus)", naming
# neither --tp nor what to give.  8 GPUs an H100 node: --tp 16 is two
# nodes, --tp 8 --pp 2 the same 16 GPUs; an H100 PCIe pair is 2.
for my $x ([['--gpu', 'h100-sxm', '--tp', '16'], 16, 8, 'h100-sxm', 8, 2],
           [['--gpu', 'h100-pcie', '--tp', '4'], 4, 2, 'h100-pcie', 2, 2]) {
    my ($a, $tp, $per, $id, $t2, $p2) = @$x;
    ($c, $o, $e) = run_gp('infer', 'llama3-8b', @$a);
    is($c, 1, "infer @$a: exit 1");
    like($e, qr/^gpuplan: infer: --tp $tp is more than the $per GPUs of a $id node, whose scale-up fabric the TP group's all-reduces run on; for more GPUs a replica give pp \(--tp $t2, --pp $p2\), or --runtime sglang or vllm, whose TP group spans whole nodes over their NICs \(tp a multiple of $per\)$/m,
         "infer @$a: names --tp, the node and what to give");
}
# SGLang documents --tp 16 --nnodes 2 on two 8-GPU H200 nodes
# (sgl-project/sglang benchmark/deepseek_v3/README.md): that runtime's
# group spans the nodes, its all-reduces over the system's NICs.
($c, $o, $e) = run_gp('infer', 'deepseek-v3', '--gpu', 'h200-sxm', '--gpus', '16', '--tp', '16', '--runtime', 'sglang');
is($c, 0, 'infer deepseek-v3 --tp 16 --runtime sglang on H200s: priced') or diag $e;
like($o, qr/tp 16 over 2 nodes of 8 \(SGLang's --tp N --nnodes M\): the TP all-reduces cross 8 x ib-ndr-400 NICs a node/,
     'the defaults say the group spans two nodes over their NICs');
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--tp', '8', '--pp', '2');
is($c, 0, 'infer --tp 8 --pp 2: 16 GPUs a replica, priced') or diag $e;

# --ep without --tp sets the instance (tp = ep): the engine's refusals of
# that tp named a --tp the user never gave -- "--tp 3 does not divide the
# 128 attention heads" for `--gpus 8 --ep 3`, "--gpus 8 is not a multiple
# of the instance (--tp 16)" for `--ep 16`.  Mixtral has 32 heads: 6 does
# not divide them; 8 GPUs are no multiple of 3.
for my $x ([['--gpus', '8', '--ep', '3'],
            qr/^gpuplan: infer: --gpus 8 is not a multiple of --ep 3, the instance's GPUs \(without tp, the experts' split sets the instance\)$/m],
           [['--gpus', '6', '--ep', '6'],
            qr/^gpuplan: infer: --ep 6 without tp runs attention TP over the instance's 6 GPUs, and 6 must divide the 32 attention heads: give --dp-attention, or tp with ep dividing it$/m]) {
    my ($a, $re) = @$x;
    ($c, $o, $e) = run_gp('infer', 'mixtral-8x7b', '--gpu', 'h100-sxm', @$a);
    # --gpus against --ep: options that do not go together (exit 2); the
    # heads that --ep must divide are the model's (exit 1)
    my $want = $a->[1] eq '8' ? 2 : 1;
    is($c, $want, "infer mixtral @$a: exit $want");
    like($e, $re, "infer mixtral @$a: names --ep, not a --tp the user did not give");
    unlike($e, qr/--tp \d/, "infer mixtral @$a: no --tp N");
}
($c, $o, $e) = run_gp('infer', 'mixtral-8x7b', '--gpu', 'h100-sxm', '--gpus', '8', '--ep', '8');
is($c, 0, 'infer mixtral --gpus 8 --ep 8: priced') or diag $e;

# roofline places a model's operators through gp.infer, whose refusals
# read as another command's, by Lua keys, with an output the user never
# gave ("gpuplan: infer: batch must be ...", "input 100000 + output 1
# tokens exceed ..."): roofline's own words and flags now.
for my $x ([['--batch', '0'], qr/^gpuplan: roofline: --batch must be a number in \[1, 16777216\] \(got 0\)$/m],
           [['--input', '0'], qr/^gpuplan: roofline: --input must be a whole number of tokens, 1\.\.16777216 \(got 0\)$/m],
           [['--input', '100000'], qr/^gpuplan: roofline: --input 100000 tokens and the decoded one exceed llama3-8b's context of 8192 tokens \(max_seq\); llama3\.1-8b of the same family and shape holds it \(context 131072\)$/m],
           [['--weights', 'fp32'], qr/^gpuplan: roofline: --weights 'fp32': serving multiplies/m]) {
    my ($a, $re) = @$x;
    ($c, $o, $e) = run_gp('roofline', '--gpu', 'h100-sxm', '--model', 'llama3-8b', @$a);
    is($c, 1, "roofline @$a: exit 1");
    like($e, $re, "roofline @$a: roofline's words and flags");
    unlike($e, qr/infer:|output 1/, "roofline @$a: no 'infer:' nor an output never given");
}

# --target with an --itl-max no layout meets: a MoE model's search said
# "gpuplan: infer_plan: ... (--batch 1 takes 14.9 ms)", naming the Lua
# function and a --batch the user never gave.
($c, $o, $e) = run_gp('infer', 'deepseek-v3', '--gpu', 'h200-sxm', '--target', '10000', '--itl-max', '1',
                      '--weights', 'fp8');
is($c, 1, 'infer deepseek-v3 --target --itl-max 1: exit 1');
like($e, qr/^gpuplan: infer: no layout meets ITL 1 ms: no batch meets ITL 1 ms \(one sequence alone takes [\d.]+ ms\)$/m,
     'the command\'s prefix, no --batch');
# A dense model's --target searches in engine/infer_run.c (infer_gpus_for),
# which said "(batch 1 takes longer)": the same words as the MoE search,
# with the time of one sequence alone.
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--target', '1000', '--itl-max', '1');
is($c, 1, 'infer llama3-8b --target --itl-max 1: exit 1');
like($e, qr/^gpuplan: infer: no batch meets ITL 1 ms \(one sequence alone takes [\d.]+ ms\)$/m,
     'a dense model says it in the same words');

# --system of another card: train and plan refuse it; infer priced an
# H100's serving with a DGX A100's host memory, NICs and NVLink domain in
# silence.
for my $a (['llama3-8b'], ['mixtral-8x7b', '--gpus', '8', '--ep', '8']) {
    ($c, $o, $e) = run_gp('infer', @$a, '--gpu', 'h100-sxm', '--system', 'dgx-a100');
    is($c, 1, "infer @$a --gpu h100-sxm --system dgx-a100: exit 1");
    like($e, qr/^gpuplan: infer: --system 'dgx-a100' holds a100-sxm-80gb, not h100-sxm$/m, 'names the system and both cards');
}
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--system', 'dgx-h100');
is($c, 0, 'infer --system dgx-h100 on an H100: priced') or diag $e;

# --offload on a model whose weights fit offloads nothing: the table read
# as if the option were ignored (no row for it).
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--offload');
is($c, 0, 'infer llama3-8b --offload: exit 0') or diag $e;
like($o, qr/^layers in host memory\s+0 \(the weights fit on the GPU\)$/m, 'says none went to host memory');
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm');
unlike($o, qr/layers in host memory/, 'without --offload: no such row');

# --itl-max -1 said "must be a number in [0, inf]" (the duration kind's
# range, in seconds), 0 "(0, 3600000]" milliseconds: one range now.
for my $v ('-1', '0', '1e300') {
    ($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--target', '1000', '--itl-max', $v);
    is($c, 1, "infer --itl-max $v: exit 1");
    like($e, qr/^gpuplan: infer: --itl-max must be a number of milliseconds in \(0, 3600000\] \(got \S+\)$/m,
         "infer --itl-max $v: one range, in milliseconds");
}

# --no-xqa: TensorRT-LLM's masked MHA kernel (engine/infer.c mmha_decode).
# Llama 2 70B at TP 1: 64 query heads over 8 KV heads, the cache read 8
# times a decode step, said on the assumed line; on another runtime the
# flag is refused, exit 1, naming it.
($c, $o, $e) = run_gp('infer', 'llama2-70b', '--gpu', 'h200-sxm', '--weights', 'fp8', '--kv', 'fp8',
                      '--runtime', 'trtllm', '--batch', '64', '--input', '128', '--output', '2048',
                      '--no-xqa');
is($c, 0, 'infer --no-xqa: exit 0');
like($o, qr/xqa=false: TensorRT-LLM's masked MHA kernel, one thread block a query head: the KV cache read 8 times a decode step \(8 query heads a KV head\), on the CUDA cores/,
     '--no-xqa: the assumed line says the kernel and the factor');
($c, $o, $e) = run_gp('infer', 'llama2-70b', '--gpu', 'h200-sxm', '--runtime', 'vllm', '--no-xqa');
is($c, 2, 'infer --no-xqa --runtime vllm: a usage error, exit 2');
like($e, qr/^gpuplan: infer: --no-xqa picks TensorRT-LLM's generation attention .*--runtime trtllm only \(got runtime vllm\)$/m,
     '--no-xqa on vLLM: refused, naming the flag and the runtime');
# --no-xqa-hopper: XQA's HMMA kernel on Hopper (releases before 0.10), a
# TensorRT-LLM kernel: refused under another runtime, naming the flag.
($c, $o, $e) = run_gp('infer', 'llama3.1-8b', '--gpu', 'h100-sxm', '--weights', 'fp8', '--kv',
                      'fp8', '--runtime', 'vllm', '--no-xqa-hopper');
is($c, 2, 'infer --no-xqa-hopper --runtime vllm: a usage error, exit 2');
like($e, qr/^gpuplan: infer: --no-xqa-hopper picks TensorRT-LLM's XQA kernel on Hopper .*--runtime trtllm only \(got runtime vllm\)$/m,
     '--no-xqa-hopper on vLLM: refused, naming the flag and the runtime');

# --paged-decode: vLLM's PagedAttention decode kernel, the same per-query-head
# reads (engine/infer.c mmha_decode).  Qwen2.5 7B: 28 query heads over 4 KV
# heads, the cache read 28 / 4 = 7 times a decode step, said on the assumed
# line; on another runtime the flag is refused, exit 2, naming it.
($c, $o, $e) = run_gp('infer', 'qwen2.5-7b', '--gpu', 'a100-sxm-80gb', '--runtime', 'vllm',
                      '--batch', '1', '--input', '30720', '--output', '2048', '--paged-decode');
is($c, 0, 'infer --paged-decode: exit 0');
like($o, qr/paged_decode: vLLM's PagedAttention kernel, one thread block a query head: the KV cache read 7 times a decode step \(7 query heads a KV head\), on the CUDA cores/,
     '--paged-decode: the assumed line says the kernel and the factor');
($c, $o, $e) = run_gp('infer', 'qwen2.5-7b', '--gpu', 'a100-sxm-80gb', '--runtime', 'trtllm', '--paged-decode');
is($c, 2, 'infer --paged-decode --runtime trtllm: a usage error, exit 2');
like($e, qr/^gpuplan: infer: --paged-decode picks vLLM's decode attention .*--runtime vllm only \(got runtime trtllm\)$/m,
     '--paged-decode on TensorRT-LLM: refused, naming the flag and the runtime');

# --[no-]fa2-mixed: vLLM V1's mixed steps on FlashAttention-2 read a decode's
# cache once per query head (engine/infer_run.c mixed_decode_cfg).  On by
# default for runtime vllm's own mixing on an ampere card: Qwen2.5 7B's 28
# query heads over 4 KV heads, 28 / 4 = 7 reads, said on the assumed line;
# --no-fa2-mixed says nothing and prices the reads once (faster).  Refused,
# naming the flag: another runtime (exit 2), --no-chunked-prefill (no mixed
# step to price it in, exit 2), --kv fp8 (vLLM's FlashAttention backend
# refuses an 8-bit cache off Hopper: another backend runs, exit 2; off by
# default there), an MLA model (exit 1).
my @fq = ('infer', 'qwen2.5-7b', '--gpu', 'a100-sxm-80gb', '--runtime', 'vllm',
          '--batch', '16', '--input', '1024', '--output', '128');
($c, $o, $e) = run_gp(@fq);
is($c, 0, 'infer --runtime vllm on an A100: exit 0') or diag $e;
like($o, qr/--fa2-mixed \(vLLM V1 on FlashAttention-2, ampere: a step with prompt chunks reads each decode's cache 7 times, once per query head\)/,
     'fa2_mixed by default: the assumed line says the kernel and the factor');
my ($tps_on) = $o =~ /^tokens\/s system\s+([\d.]+)/m;
($c, $o, $e) = run_gp(@fq, '--no-fa2-mixed');
is($c, 0, 'infer --no-fa2-mixed: exit 0') or diag $e;
unlike($o, qr/fa2-mixed/, '--no-fa2-mixed: nothing said');
my ($tps_off) = $o =~ /^tokens\/s system\s+([\d.]+)/m;
ok(defined $tps_on && defined $tps_off && $tps_off > $tps_on,
   "--no-fa2-mixed: more tokens/s (" . ($tps_off // '?') . " against " . ($tps_on // '?') . ")");
($c, $o, $e) = run_gp('infer', 'qwen2.5-7b', '--gpu', 'a100-sxm-80gb', '--runtime', 'trtllm', '--fa2-mixed');
is($c, 2, 'infer --fa2-mixed --runtime trtllm: a usage error, exit 2');
like($e, qr/^gpuplan: infer: --fa2-mixed picks vLLM V1's attention kernel in its mixed steps: --runtime vllm only \(got runtime trtllm\)$/m,
     '--fa2-mixed on TensorRT-LLM: refused, naming the flag and the runtime');
($c, $o, $e) = run_gp(@fq, '--no-chunked-prefill', '--fa2-mixed');
is($c, 2, 'infer --fa2-mixed --no-chunked-prefill: a usage error, exit 2');
like($e, qr/^gpuplan: infer: --fa2-mixed prices vLLM V1's steps that carry prompt chunks beside decodes: --no-chunked-prefill runs none/m,
     '--fa2-mixed without chunked prefill: refused, naming both flags');
($c, $o, $e) = run_gp(@fq, '--kv', 'fp8', '--fa2-mixed');
is($c, 2, 'infer --fa2-mixed --kv fp8: a usage error, exit 2');
like($e, qr/^gpuplan: infer: --fa2-mixed with --kv fp8: vLLM's FlashAttention-2 backend takes a 16-bit KV cache only/m,
     '--fa2-mixed with an fp8 cache: refused, naming both flags');
($c, $o, $e) = run_gp(@fq, '--kv', 'fp8');
unlike($o, qr/fa2-mixed/, '--kv fp8: fa2_mixed off by default (vLLM runs another backend)');
($c, $o, $e) = run_gp('infer', 'deepseek-v3', '--gpu', 'a100-sxm-80gb', '--gpus', '16', '--tp', '8', '--pp', '2',
                      '--weights', 'fp8', '--runtime', 'vllm', '--fa2-mixed');
is($c, 1, 'infer --fa2-mixed on an MLA model: exit 1');
like($e, qr/^gpuplan: infer: --fa2-mixed: a latent \(MLA\) cache runs on vLLM's MLA backends/m,
     '--fa2-mixed on an MLA model: refused, naming the flag');

# --sampling: what the requests' sampling parameters add to vLLM V0's sampler
# (lua/gpuplan/infer.lua M.v0_sampler_kernels).  vLLM 0.6.3 with the Qwen2.5
# speed benchmark's settings: penalties 22 + top_p 13 + random 2 = 37
# kernels a step beyond greedy's, said on the assumed line; each one pass
# over 152064 fp32 logits (1,216,512 B at 2039e9 x 0.85 B/s = 0.702 us) +
# 3.9 us fill + 1 us launch = 5.602 us, 37 x 5.602 = 0.207 ms on the 9.98
# ms greedy step; and --vllm-version names a V0 release, whose engine
# schedules between the GPU's steps (--no-async-scheduling unless stated):
# 0.43 ms + 1 x (5.5 - 0.43) / 256 ms = 0.450 ms more, 10.63 ms (9.977 +
# 0.207 + 0.450 = 10.634, rounded to 0.01 ms as printed).  Without
# --vllm-version, or on another runtime, a usage error naming the flag.
($c, $o, $e) = run_gp('infer', 'qwen2.5-7b', '--gpu', 'a100-sxm-80gb', '--runtime', 'vllm',
                      '--batch', '1', '--input', '1', '--output', '2048');
like($o, qr/^ITL at batch 1\s+9\.98 ms/m, 'greedy (no --sampling): 9.98 ms a token');
unlike($o, qr/sampling=/, '... and nothing said of sampling');
($c, $o, $e) = run_gp('infer', 'qwen2.5-7b', '--gpu', 'a100-sxm-80gb', '--runtime', 'vllm',
                      '--batch', '1', '--input', '1', '--output', '2048',
                      '--sampling', 'random,top_p,penalties', '--vllm-version', '0.6.3');
is($c, 0, 'infer --sampling --vllm-version: exit 0') or diag $e;
like($o, qr/^ITL at batch 1\s+10\.63 ms/m, '--sampling random,top_p,penalties on 0.6.3: 10.63 ms a token');
like($o, qr/sampling=random,top_p,penalties: 37 kernels a step beyond greedy sampling's \(vLLM 0\.6\.3's V0 sampler, outside the CUDA graph\)/,
     '--sampling: the assumed line says the count and the release');
($c, $o, $e) = run_gp('infer', 'qwen2.5-7b', '--gpu', 'a100-sxm-80gb', '--runtime', 'vllm',
                      '--sampling', 'penalties');
is($c, 2, 'infer --sampling without --vllm-version: a usage error, exit 2');
like($e, qr/^gpuplan: infer: --sampling penalties: give --vllm-version, the vLLM release whose V0 sampler runs it \(0\.4\.2 to 0\.6\.3\)$/m,
     '... naming the flag it needs');
($c, $o, $e) = run_gp('infer', 'qwen2.5-7b', '--gpu', 'a100-sxm-80gb', '--runtime', 'sglang',
                      '--sampling', 'top_p', '--vllm-version', '0.6.3');
is($c, 2, 'infer --sampling --runtime sglang: a usage error, exit 2');
like($e, qr/--runtime vllm only \(got runtime sglang\)/, '... naming the runtime');
($c, $o, $e) = run_gp('infer', 'qwen2.5-7b', '--gpu', 'a100-sxm-80gb', '--runtime', 'vllm',
                      '--sampling', 'top_p', '--vllm-version', '0.8.0');
is($c, 2, 'infer --vllm-version 0.8.0 (V1): a usage error, exit 2');
like($e, qr/--vllm-version 0\.8\.0: the V0 sampler's kernels are counted for releases 0\.4\.2 to 0\.6\.3 only/,
     '... naming the releases counted');

# --output 1: no decode step runs (the one token is the prefill's), so its
# ITL and per-user rate are not applicable: "-" in text, null in JSON,
# empty in CSV (were 31.86 ms and 31.4 tok/s of a step that never runs).
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--output', '1');
is($c, 0, 'infer --output 1: exit 0') or diag $e;
like($o, qr/^ITL at batch\s+- \(output 1: no decode step\)$/m, '--output 1: ITL at batch -');
like($o, qr/^tokens\/s per user\s+- \(output 1: no decode step\)$/m, '--output 1: tokens/s per user -');
like($o, qr/^TTFT \(one prompt\)\s+\d/m, '--output 1: TTFT still priced');
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--output', '1', '--format', 'json');
like($o, qr/"itl_s":null/, '--output 1 json: itl_s null');
like($o, qr/"stream_tokens_per_s":null/, '--output 1 json: stream_tokens_per_s null');
unlike($o, qr/"itl_s_lo"/, '--output 1 json: no range for it');
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--output', '2', '--format', 'json');
like($o, qr/"itl_s":0\.0\d+/, '--output 2 json: a decode step, an ITL');

# The MoE serving model likewise at --output 1 (Mixtral on 8 H200, EP8):
# no decode step, so "-" for its ITL and per-user rate (were 65.79 ms and
# 15.2 tok/s), null in JSON, and the target table's ITL cell empty.
($c, $o, $e) = run_gp('infer', 'mixtral-8x7b', '--gpu', 'h200-sxm', '--ep', '8', '--gpus', '8',
                      '--output', '1');
is($c, 0, 'MoE infer --output 1: exit 0') or diag $e;
like($o, qr/^ITL\s+- \(output 1: no decode step\)$/m, 'MoE --output 1: ITL -');
like($o, qr/^tokens\/s per user\s+- \(output 1: no decode step\)$/m, 'MoE --output 1: tokens/s per user -');
($c, $o, $e) = run_gp('infer', 'mixtral-8x7b', '--gpu', 'h200-sxm', '--ep', '8', '--gpus', '8',
                      '--output', '1', '--format', 'json');
like($o, qr/"itl_s":null/, 'MoE --output 1 json: itl_s null');
like($o, qr/"tpot_s":null/, 'MoE --output 1 json: tpot_s null');
unlike($o, qr/"itl_batch1_s"/, 'MoE --output 1 json: no one-model field added');
($c, $o, $e) = run_gp('infer', 'mixtral-8x7b', '--gpu', 'h200-sxm', '--ep', '8', '--output', '1',
                      '--target', '1000', '--itl-max', '1', '--format', 'json');
is($c, 0, 'MoE --output 1 --target --itl-max 1: not refused by a step that never runs') or diag $e;
like($o, qr/"itl_s":null/, '... and its ITL null (itl_s, gp.infer_plan\'s key)');

# --prefix-hit: a share of the prompt tokens, [0, 1]; a value out of it, or
# no number, is refused naming the flag, with a non-zero exit.
for my $bad ('-0.1', '1.5', 'half') {
    ($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--prefix-hit', $bad);
    isnt($c, 0, "--prefix-hit $bad: non-zero exit");
    like($e, qr/--prefix-hit/, "--prefix-hit $bad: the error names the flag") or diag $e;
}
# The MoE serving model prices it (the same rule, engine/infer.h
# infer_new_prompt): 0.5 of 4096 is 2048 tokens from the cache, in the title;
# out of [0, 1] it is refused there too, naming the flag.
($c, $o, $e) = run_gp('infer', 'mixtral-8x7b', '--gpu', 'h200-sxm', '--ep', '8', '--gpus', '8',
                      '--input', '4096', '--prefix-hit', '0.5');
is($c, 0, 'MoE serving --prefix-hit 0.5: priced') or diag $e;
like($o, qr/in 4096 \/ out \d+ \(2048 of the prompt from the prefix cache\)/,
     '... its title says the 2048 cached tokens') or diag $o;
($c, $o, $e) = run_gp('infer', 'mixtral-8x7b', '--gpu', 'h200-sxm', '--ep', '8', '--gpus', '8',
                      '--prefix-hit', '1.5');
isnt($c, 0, 'MoE serving --prefix-hit 1.5: non-zero exit');
like($e, qr/--prefix-hit/, '... the error names the flag') or diag $e;

# A GGUF type as --weights: each tensor at llama.cpp's type for it
# (src/llama-quant.cpp: output Q6_K, token_embd Q4_K, attn_v and ffn_down
# Q6_K in half the layers), 4.91 GB for Llama 3 8B's 4.92 GB Q4_K_M file
# (tests/lua/gguf_types.t derives it), where --weights 4.89 with 16-bit
# ends read 6.37 GB; llama.cpp's f16 KV cache named as it names it.
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'rtx-4090', '--runtime', 'llama.cpp', '--weights', 'Q4_K_M');
is($c, 0, 'infer --weights Q4_K_M: exit 0') or diag $e;
like($o, qr/^llama3-8b on 1 x rtx-4090 \(tp 1, pp 1\), Q4_K_M weights, fp16 KV,/m, 'the title names the type and f16 KV');
like($o, qr/^weights per GPU\s+4\.91 GB$/m, '4.91 GB of weights');
like($o, qr/weights=Q4_K_M \(llama\.cpp's mix, src\/llama-quant\.cpp: 4\.8 bits a layer weight, attn_v and ffn_down Q6_K in half the layers, output\.weight Q6_K at 6\.562, token_embd Q4_K at 4\.5\)/,
     'the defaults say the mix');
like($o, qr/kv=fp16 \(llama\.cpp's default cache type: common\.h cache_type_k = GGML_TYPE_F16\)/, 'and the KV default');

done_testing();
