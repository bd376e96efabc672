# gpuplan validate: the report frame and its JSON form.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my ($c, $o, $e) = run_gp('validate', 'tests/fixtures/validation/mini.json');
is($c, 0, 'validate exits 0');
like($o, qr/^Not predicted$/m, 'lists the cases not predicted');
like($o, qr/^mini-unknown-predictor\s+collective\s+busbw_gbps\s+\S/m, 'unpredicted case has a reason');
like($o, qr/^kind\s+cases\s+predicted\s+median \|err\|\s+p90 \|err\|\s+in 80% range$/m, 'summary header');
like($o, qr/^train\s+1\s+\d/m, 'summary counts the training case');

($c, $o, $e) = run_gp('validate', 'tests/fixtures/validation/mini.json', '--format', 'json');
is($c, 0, 'json exits 0');
like($o, qr/^\[\n \{"id":"mini-unknown-predictor".*\n \{"id":"mini-train","kind":"train","metric":"hfu_tflops_per_gpu","measured":137,"predicted":/, 'json rows carry id, kind, metric, measured, predicted');
like($o, qr/"error":/, 'json has error');
like($o, qr/"reason":/, 'json has reason');

# Without a file: the shipped cases (validation/cases.json).  492: the
# entries of kind "collective" in that file, counted with a JSON reader:
# the 413 before, 21 held-out rows of PPIO's 4 x RTX 4090 P2P run
# (yiguCM/pptest_driver's README table, 1 KiB to 1 GiB, one row each)
# and 58 held-out rows of dstack's Lambda B200 and Crusoe A100 pages (29
# each, 8 B to 2 GiB); a count, so exact (it moves when collective cases
# are added).
($c, $o, $e) = run_gp('validate', '--summary');
is($c, 0, 'no case file: the shipped cases');
like($o, qr/^collective\s+492\s+492\s/m, 'all 492 collective cases of validation/cases.json');
# 780: the entries of kind "infer" in that file, counted with a JSON
# reader: the 658 before, 84 TensorRT-LLM 0.11.0 perf-overview twins of
# the 0.10.0 rows, 35 added for issue 22 from two new sources
# (tenstorrent/tt-inference-server's GPU reference issues 143 and 356,
# 14 single-stream TPOT rows; SemiAnalysis InferenceX issue 870 and
# PR 1053, 21 rows), and llama.cpp PR 4766's 3 pp 512 rows (one RTX
# 4090). 775 predicted: the 653 before, the 84 twins, all 35 new ones
# (issue 356's DeepSeek-R1 rows on 16 H100 run SGLang TP 16 over two
# nodes, which gp.infer prices since TP may span whole nodes under
# sglang and vllm) and the 3 pp 512 rows.
# 812: and 32 more for issue 22 (AMD's "Performance results with AMD ROCm
# software" page, the vLLM throughput table: Llama 3.1 70B and 405B FP8 at
# TP 8 on 8 MI300X, four shapes in each of four stored copies whose image
# runs the V1 engine), all 32 predicted: 807.
# 836: and 24 held-out rows for issue 22 (Argonne's LLM-Inference-Bench,
# Plots/All_results.csv: vLLM 0.6.1 fixed batches, Llama 3 8B / 70B and
# Llama 2 70B on H100 SXM, A100 SXM4 40GB and MI300X, 128 and 1024 in = out,
# batch 1 and the largest of 64/32/16), all 24 predicted: 831.
# 866: and 30 held-out rows for issue 22 (the SGLang cookbook's section 5.1
# speed benchmarks, sgl-project/sgl-cookbook at 7b5bd9c: Llama 3.1 70B on
# 8 A100 6, Qwen3-235B-A22B 9 and DeepSeek-R1-0528 9 and gpt-oss-120b 2 on
# 8 B200, DeepSeek-V3 on 8 MI300X 2, Nemotron 3 Nano on one B200 2).  28
# predicted: 859; the two DeepSeek-V3 rows run DP attention on 8 ranks at
# concurrency 1 and 100, which the MoE serving model refuses (whole
# requests a rank: a multiple of 8).
# 889: and 23 held-out rows for issue 22 (dstack's Llama 3.1 405B BF16 on
# 8 MI300X, dstackai/benchmarks at 06c957a amd/tgi_vs_vllm/vllm/data: the
# vLLM 0.6.3.dev burst tables, 12 short-prompt, 7 10000-token and 4
# single-prompt rows), all 23 predicted (TP 8 in one node): 882.
# 883: the dstack TensorRT-LLM 3200 in / 6400 out row at concurrency 128,
# which the MoE serving model refused above its KV-bound batch, is priced
# now that it queues the requests the KV cache cannot hold.
# 908: and 19 held-out rows for issue 22 (MLPerf Inference v6.0's
# llama2-70b-99 Offline on one node of B300, B200, H200 NVL, MI355X, MI300X
# or MI325X, gbeezybez/inference_results_v6.0 at 232fbf9), 18 predicted:
# 901; Dell_MangoBoost's MI355X at a 1000 W cap is refused (the cdna4 arch
# gives no power curve to price a limit below the 1400 W TDP).
# 924: and 16 held-out rows for issue 22 (AIPerf's comprehensive-benchmarking
# guide, ai-dynamo/aiperf at 008dd37: Qwen3-0.6B on eight vLLM 0.11.0
# replicas on H200 at concurrency 10 to 500), 3 predicted: 904; the 13 at
# concurrency 10, 50, 100 and 500 were refused by the planner (a concurrency
# that does not split evenly over the 8 replicas).  917: those 13 priced as
# the router splits them (ceil(N/8) on N mod 8 replicas, floor on the rest).
# 946: and 22 held-out rows for issue 22 (QuanTuring-AI/NV-benchmark
# vol1-nim: Llama 3.1 8B on one RTX 5090 under NIM 2.0.12), all predicted:
# 939; 1006: and 60 (FreedomIntelligence/AccelMark at 5797fc4, Suite A
# results/verified: Llama-3-8B-Instruct on ten catalog cards), all
# predicted: 999.
like($o, qr/^infer\s+1006\s+999\s/m, 'all 1006 infer cases, 999 predicted');
($c, $o, $e) = run_gp('validate', 'tests/fixtures/validation/bad_json.json');
is($c, 1, 'bad JSON exits 1');
like($e, qr/^gpuplan: tests\/fixtures\/validation\/bad_json.json:2: invalid JSON: .* at column 1$/m, 'bad JSON names the file and line');
($c, $o, $e) = run_gp('validate', 'tests/fixtures/validation/mini.json', '--kind', 'bogus');
is($c, 2, 'bad --kind is a usage error');

# No cases at all: the frame, exit 0; JSON an empty array.
($c, $o, $e) = run_gp('validate', 'tests/fixtures/validation/empty.json');
is($c, 0, 'an empty case list exits 0');
like($o, qr/^Summary by kind/m, 'and prints the frame');
($c, $o, $e) = run_gp('validate', 'tests/fixtures/validation/empty.json', '--format', 'json');
is($o, "[]\n", 'empty JSON array');
# The same id in two files is one case too many.
($c, $o, $e) = run_gp('validate', 'tests/fixtures/validation/mini.json', 'tests/fixtures/validation/duplicate.json', 'tests/fixtures/validation/mini_again.json');
is($c, 1, 'an id repeated across files exits 1');
like($e, qr/^gpuplan: tests\/fixtures\/validation\/duplicate.json:2: case 'twice' \(case 2\) repeats the id of case 1$/m, 'both places named');
($c, $o, $e) = run_gp('validate', 'tests/fixtures/validation/mini.json', 'tests/fixtures/validation/mini_again.json');
like($e, qr/^gpuplan: tests\/fixtures\/validation\/mini_again.json:1: case 'mini-train' \(case 1\) repeats the id of tests\/fixtures\/validation\/mini.json case 1$/m, 'across files: both files named');
($c, $o, $e) = run_gp('validate', 'tests/fixtures/validation/mini.json', 'tests/fixtures/validation/mini.json');
like($e, qr/^gpuplan: tests\/fixtures\/validation\/mini.json: the file is given twice$/m, 'a file given twice');
($c, $o, $e) = run_gp('validate', 'tests/fixtures/validation/inf_value.json');
is($c, 1, 'a non-finite measurement exits 1');
unlike($e, qr/traceback/, 'without a traceback');

# The cases ship with the project: the README's line works from a clone.
($c, $o, $e) = run_gp('validate', 'validation/cases.json');
is($c, 0, 'validation/cases.json validates') or diag $e;
like($o, qr/^collective\s+492\s/m, 'all 492 collective cases counted (413 + 21 PPIO + 58 dstack rows, as above)');
ok(-f 'validation/SCHEMA.md', 'validation/SCHEMA.md ships with the cases');

# 80% ranges (lua/gpuplan/ranges.lua).  --coverage: per kind the cases
# with a range and the share of them inside it, leave-one-out.
($c, $o, $e) = run_gp('validate', '--coverage');
is($c, 0, 'validate --coverage exits 0') or diag $e;
like($o, qr/^kind\s+predicted\s+with range\s+measured inside\s+mean width/m, 'coverage header');
# 781: the 760 before, torchtitan PR #1196's two eager B200 rows, and
# 19 fine-tuning rows added for issue 25 (MLPerf's four AMD Llama 2 70B
# LoRA rows, NeMo AutoModel's six LoRA rows, torchtune's eight, MiniGPT-4);
# 808: and 27 more from four sources (VectorLM's 18 FSDP rows, FlagPerf's
# five FlagScale Megatron rows and its four Aquila2-7B layouts);
# 828: and 20 more for issue 25 (KempnerForge's MFU-scaling report, 11
# FSDP2 rows, and its 175B run on 360 H200s; the Megatron-MoE-ModelZoo
# Qwen3 long-context table's 8 cells, forced-balance and dropless);
# 833: and 5 more for issue 25 item 5 (the Hugging Face PEFT method
# comparison's Llama 3.2 3B runs on one L40S: four plain-LoRA rows and the
# full fine-tune);
# 841: and 8 more for issue 25 (XTuner's speed benchmark page,
# docs/zh_cn/acceleration/benchmark.rst: its Yi-34B-200K and Llama2-70B
# rows, full fine-tunes under DeepSpeed ZeRO-3 and sequence parallel on
# 32 A100s);
# 867: and 26 more for issue 25 (nanotron's benchmark diagram,
# docs/benchmark_summary.svg at c2528430: every cell of its best
# configurations, four Llama shapes of 1.34B-80B on 1 to 64 nodes of 8
# H100s under DP x TP x PP and ZeRO-0/1);
# 868: and 1 more for issue 25 (JAX-Toolbox's MaxText README: its one
# LLaMA2-7B row, FSDP 8 on one DGX H100);
# 879: and 11 more for issue 25 (the NeMo Megatron launcher README 22.08,
# section 7.1.2: GPT-3 5B on 1-32 nodes and 175B on 8-128 nodes of DGX
# A100);
# 888: and 9 more for issue 25 (MLPerf Training v4.1, NVIDIA's own gpt3
# and llama2_70b_lora results, one case per system directory);
# 908: and 20 more for issue 25 (dgxc-benchmarking 25.02 ft_llama3: every
# column of its eight tables, Llama 3 8B SFT/LoRA x BF16/FP8 on 8/16/32
# H100 = 12, 70B SFT x 2 precisions on 32 = 2, 70B LoRA x 2 on 8/16/32 = 6);
# 918: and 10 more for issue 25, a held-out set (Megatron-Bridge's 26.06.01
# Pre-Training table: DeepSeekV3, GPT OSS 120B, Qwen3 30B-A3B, Qwen3
# 235B-A22B and Nemotron 3 Nano, 5 models x GB300/GB200 = 10; its four
# Nemotron 3 Super rows left out);
# 932: and 14 more for issue 25, a held-out set (MLPerf Training v5.0's
# llama31_405b: every result directory of the round, one case each: NVIDIA
# 5 H100 + 2 GB200, IBM+CoreWeave+NVIDIA 5 GB200, Nebius 2 H200 = 14);
# 939: and 7 more for issue 25, a held-out set (NeMo AutoModel v0.5.0's
# Pre-Training table on DGX-H100: Nemotron V3 Nano, DeepSeek V3 on 1024
# and 256 GPUs, Kimi K2, Qwen3 MoE 30B, GPT-OSS 20B and 120B = 7; its
# Llama3 70B row already shipped, its Nemotron V3 Super row left out);
# 944: and 5 more for issue 25, a held-out set (MaxText's A3 Llama2-7B
# table: 1, 2, 4, 8 and 16 VMs of 8 H100s = 5);
# 946: and 2 more for issue 25, a held-out set (DeepSpeedExamples'
# bf16_master_weight table: fp32 and bf16 master weights = 2 step cases;
# its 2 peak-memory cases count as memory);
# 950: and 4 more for issue 25 (pytorch/ao torchao/float8/README.md at
# 49cb18a66: Llama 3 8B on 8 H100 and 8 MI300X, bf16 and float8 = 4);
# 967: and 17 more (AnswerDotAI/fsdp_qlora benchmarks_03_2024.md at 4cd6923:
# every results row on a catalog card = 17);
# 969: and 2 more (PyTorch/Nebius's DeepSeek-V3 671B on 256 B200 under
# torchtitan, BF16 with the standard all-to-all and with DeepEP = 2);
# 973: and 4 more (ms-swift examples/train/flash_attention_3 on 4 H20:
# Qwen2.5-7B ZeRO-3 and Qwen3-30B-A3B LoRA, FA2 and FA3 = 4);
# 979: and 6 rows of XTuner's Megatron MoE guide the file did not hold
# (its four DeepEP capacity rows left out: their unpadded token dropping
# is no case field).
# The coverage table counts the predicted cases: 976 of the 979, as the
# Nemotron V3 Nano row (a hybrid stack under FSDP, ZeRO 3) is refused
# with its reason, "a hybrid stack (model.hybrid_pattern) is priced at
# ZeRO 0 or 1", and the two RTX 6000 Ada rows with theirs, "no attention
# kernel measurements for rtx-6000-ada"; each of the 976 has a range.
like($o, qr/^train\s+976\s+976\s+\d+\.\d%\s+\d+\.\d%$/m, 'train: 976 predicted cases (979 less the three refused), each with a range');
# JSON rows carry the range; every shipped predicted case has one.
($c, $o, $e) = run_gp('validate', '--format', 'json');
my @lo = $o =~ /"predicted_lo":([-0-9.e+]+),"predicted_hi":([-0-9.e+]+)/g;
my $npred = () = $o =~ /"predicted":[0-9]/g;
ok($npred > 60 && @lo == 2 * $npred, "all $npred predicted cases carry predicted_lo and predicted_hi");
my $ordered = 1;
for (my $i = 0; $i < @lo; $i += 2) { $ordered = 0 unless $lo[$i] < $lo[$i + 1] }
ok($ordered, 'predicted_lo < predicted_hi in every row');
# A case not in the shipped record is scored with the shipped model, as a
# job like it would be: this copy of megatron2021-t1-gpt-39.1b (Megatron,
# dense, PP 2 on 512 A100s: regime
# vendor=NVIDIA/stack=megatron/moe=dense/style=pipeline/scale=cluster/gen=ampere,
# which has its own factors since the NeMo launcher 22.08 rows gave the
# A100 cells of that regime enough cases; lo .. hi in validation/ranges.lua)
# predicts a rate, so predicted_lo =
# predicted / hi and predicted_hi = predicted / lo (the file's 3
# decimals: within 1e-9 of those).
($c, $o, $e) = run_gp('validate', 'tests/fixtures/validation/not_shipped.json', '--format', 'json');
my ($p, $plo, $phi) = $o =~ /"predicted":([0-9.e+]+),.*"predicted_lo":([0-9.e+]+),"predicted_hi":([0-9.e+]+)/;
my ($rlo, $rhi) = do {
    open my $fh, '<', 'validation/ranges.lua' or die;
    my $t = do { local $/; <$fh> };
    ($t) = $t =~ /\n    train = \{\n(.*?)\n    \},/s;
    $t =~ /\["vendor=NVIDIA\/stack=megatron\/moe=dense\/style=pipeline\/scale=cluster\/gen=ampere"\] = \{ cases = \d+, lo = ([0-9.]+), hi = ([0-9.]+)/;
};
ok(defined $plo && abs($plo - $p / $rhi) < 1e-9 * $p && abs($phi - $p / $rlo) < 1e-9 * $p,
   'a case not shipped: the shipped regime\'s range') or diag "$p $plo $phi $rlo $rhi";
# --ranges prints the error model: what `make ranges` writes.
($c, $o, $e) = run_gp('validate', '--ranges');
my $file = do { open my $fh, '<', 'validation/ranges.lua' or die; local $/; <$fh> };
is($o, $file, 'validate --ranges prints validation/ranges.lua');
($c, $o, $e) = run_gp('validate', '--ranges', '--format', 'json');
is($c, 2, '--ranges takes no --format');
like($e, qr/--ranges prints a Lua data file; it takes no --format/, 'and says so');

# The README figures check fails when a kind is worse than stated: a copy
# of the README whose infer median says 5.0% makes it fail, naming the kind.
{
    use File::Temp qw(tempdir);
    my $dir = tempdir(CLEANUP => 1);
    open my $in, '<', 'README.md' or die;
    my $text = do { local $/; <$in> };
    close $in;
    ok($text =~ s/^\| infer \| (\d+) \| (\d+) \| [\d.]+% \|/| infer | $1 | $2 | 5.0% |/m,
       'doctored README: infer median set to 5.0%');
    write_file("$dir/README.md", $text);
    my $out = `./gpuplan run tests/lua/validate_figures.t $dir/README.md 2>&1`;
    isnt($? >> 8, 0, 'the figures check fails against it');
    like($out, qr/^not ok \d+ - infer: median [\d.]+% not worse than the README's 5\.0%$/m,
         'and names the kind and both figures');
    $text =~ s/^\| infer \| (\d+) \| (\d+) \|/"| infer | $1 | " . ($2 - 1) . " |"/me;
    write_file("$dir/README.md", $text);
    $out = `./gpuplan run tests/lua/validate_figures.t $dir/README.md 2>&1`;
    like($out, qr/^not ok \d+ - infer: predicted as the README states$/m,
         'a predicted count the README does not state fails too');
}
# --summary, --coverage and --ranges are one view each: two given printed
# one and dropped the other in silence; now a usage error naming both.
for my $two (['--summary', '--coverage'], ['--coverage', '--ranges'], ['--summary', '--ranges']) {
    ($c, $o, $e) = run_gp('validate', 'tests/fixtures/validation/mini.json', @$two);
    is($c, 2, "validate @$two: a usage error");
    like($e, qr/^gpuplan: validate: \Q$two->[0] and $two->[1]\E do not go together/m,
         "validate @$two: names both");
    is($o, '', "validate @$two: prints nothing");
}

# source.commit is a git commit (7 to 40 hex digits); anything else is
# refused naming the case and the field, exit non-zero.
{
    my $dir = File::Temp::tempdir(CLEANUP => 1);
    my $case = '[{"id": "c1", "kind": "memory", '
      . '"model": {"name": "llama3-8b"}, "hardware": {"gpu": "h100-sxm", "gpus": 8}, '
      . '"workload": {"method": "pretrain", "seq_len": 2048, "micro_batch": 1}, '
      . '"parallel": {"dp": 8}, '
      . '"measured": {"metric": "peak_memory_gib", "value": 40, "unit": "GiB"}, '
      . '"source": {"title": "t", "id": "x", "commit": "tip-of-main"}}]';
    write_file("$dir/bad.json", $case);
    my ($c, $o, $e) = run_gp('validate', "$dir/bad.json");
    isnt($c, 0, 'validate: a source.commit that is not hex exits non-zero');
    like($e, qr/case 'c1': field 'source\.commit': expected a git commit as "9dec370"/,
         'and names the case and the field');
}

# --explain ID: the case as the script of its job; gpuplan run runs it and
# prints the prediction validate scored (the same value, as validate's csv
# writes it to 6 digits).
{
    my $id = 'torchtitan2506-h200-llama31-8b-fsdp64';
    my ($c, $o, $e) = run_gp('validate', '--explain', $id);
    is($c, 0, 'validate --explain: exit 0');
    like($o, qr/^-- gpuplan validate --explain \Q$id\E$/m, 'the script names the case');
    like($o, qr/^local r = gp\.train\{$/m, 'and calls the planner');
    my $dir = File::Temp::tempdir(CLEANUP => 1);
    write_file("$dir/job.lua", $o);
    my ($c2, $o2) = run_gp('run', "$dir/job.lua");
    is($c2, 0, 'the script runs');
    my ($c3, $csv) = run_gp('validate', '--kind', 'train', '--format', 'csv');
    my ($pred) = $csv =~ /^\Q$id\E,train,[^,]*,[^,]*,([^,]*),/m;
    ok(defined $pred && $o2 =~ /^([\d.e+-]+)$/m && abs($1 - $pred) <= 1e-5 * $pred,
       'and prints the predicted value validate scored');
    ($c, $o, $e) = run_gp('validate', '--explain', 'torchtitan2506-h200');
    is($c, 2, 'an unknown id: a usage error');
    like($e, qr/no case 'torchtitan2506-h200' in the shipped cases .*did you mean .*\Q$id\E/,
         'naming the id and the cases that contain it');
    ($c, $o, $e) = run_gp('validate', 'tests/fixtures/validation/mini.json', '--explain',
                          'mini-train');
    is($c, 1, 'a case not predicted: an error');
    like($e, qr/case 'mini-train' is not predicted \(.*\): there is no job to explain/,
         'saying why');
    is($o, '', 'and no script');
    for my $with (['--format', 'csv'], ['--kind', 'train'], ['--summary']) {
        ($c, $o, $e) = run_gp('validate', '--explain', $id, @$with);
        is($c, 2, "--explain with $with->[0]: a usage error");
        is($o, '', "--explain with $with->[0]: prints nothing");
    }
}

# A user's case file written from SCHEMA.md, one field wrong at a time:
# an id of the wrong type read as "missing 'id'", no kind as "unknown kind
# 'nil'"; an mfu of 1.5 (a percentage or TFLOP/s mistaken) and a unit
# that is not the metric's were predicted as if right.
{
    use File::Temp qw(tempdir);
    my $vdir = tempdir(CLEANUP => 1);
    my $case = sub {
        my (%o) = @_;
        my $id = exists $o{id} ? $o{id} : '"user-train-1"';
        my $kind = exists $o{kind} ? $o{kind} : '"train"';
        my $value = $o{value} // '0.45';
        my $unit = $o{unit} // '"fraction"';
        my @f = ('"model": {"name": "Llama 3 8B", "layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8, '
                 . '"ffn_hidden": 14336, "ffn_gated": true, "vocab": 128256, "params_b": 8.03}',
                 '"hardware": {"gpu": "h100-sxm", "gpus": 8, "gpus_per_node": 8}',
                 '"parallel": {"tp": 1, "pp": 1, "dp": 8, "zero": 1, "micro_batch": 1, "global_batch": 64, "recompute": "none"}',
                 '"workload": {"seq_len": 8192, "precision": "bf16", "method": "pretrain"}',
                 qq{"measured": {"metric": "mfu", "value": $value, "unit": $unit}},
                 '"source": {"title": "my run", "where": "log", "id": "internal"}');
        unshift @f, qq{"id": $id} if defined $id;
        unshift @f, qq{"kind": $kind} if defined $kind;
        my $path = "$vdir/c" . int(rand(1e9)) . ".json";
        open(my $fh, '>', $path) or die $!;
        print $fh '[{' . join(', ', @f) . '}]';
        close $fh;
        return $path;
    };
    my ($cv, $ov, $ev) = run_gp('validate', $case->());
    is($cv, 0, 'a user case as SCHEMA.md writes it: predicted') or diag $ev;
    like($ov, qr/^user-train-1\s+train\s+mfu\s+0\.45\s/m, 'and listed');
    for my $t ([{ id => '5' }, qr/: case 1: field 'id': expected a string, got 5$/m],
               [{ id => undef }, qr/: case 1: missing 'id'$/m],
               [{ kind => undef }, qr/: case 'user-train-1': missing 'kind' \(train, memory, infer, collective, rl\)$/m],
               [{ value => '1.5' }, qr/: case 'user-train-1': field 'measured.value': mfu is a fraction of the peak, at most 1 \(got 1\.5; /m],
               [{ unit => '"%"' }, qr/: case 'user-train-1': field 'measured.unit': '%', but mfu's unit is 'fraction'$/m]) {
        my ($o, $re) = @$t;
        my $what = join(', ', map { "$_ = " . ($o->{$_} // 'absent') } sort keys %$o);
        ($cv, $ov, $ev) = run_gp('validate', $case->(%$o));
        is($cv, 1, "validate, $what: exit 1");
        like($ev, $re, "validate, $what: names the field");
    }
    # --ranges of a user's file: the header said "from validation/cases.json"
    my $f = $case->();
    ($cv, $ov, $ev) = run_gp('validate', $f, '--ranges');
    is($cv, 0, 'validate FILE --ranges: exit 0') or diag $ev;
    like($ov, qr/^-- \(gpuplan validate --ranges\) from \Q$f\E; do not edit\.$/m, '--ranges names the file it read');
    ($cv, $ov, $ev) = run_gp('validate', '--ranges');
    like($ov, qr/^-- \(gpuplan validate --ranges\) from validation\/cases\.json; do not edit\.$/m,
         'and the shipped record without one');
}

# A collective case on one GPU: NCCL copies locally and nccl-tests' busbw
# is 0 there, so a measured busbw was scored against a prediction of 0 as
# a -100% error in the kind's statistics.  Not predicted, saying why.
{
    use File::Temp qw(tempdir);
    my $cdir = tempdir(CLEANUP => 1);
    open(my $fh, '>', "$cdir/one.json") or die $!;
    print $fh '[{"id": "u-col-1", "kind": "collective", "hardware": {"gpu": "h100-sxm", "gpus": 1, "gpus_per_node": 8}, '
        . '"collective": "all_reduce", "bytes": 1e9, "measured": {"metric": "busbw_gbps", "value": 400, "unit": "GB/s"}, '
        . '"source": {"title": "x", "where": "y", "id": "z"}}]';
    close $fh;
    my ($cc, $oc, $ec) = run_gp('validate', "$cdir/one.json");
    is($cc, 0, 'validate a one-GPU collective case: exit 0') or diag $ec;
    # the refusal placed at the case's line (harden79b: FILE:LINE: case 'ID': its words)
    like($oc, qr/^u-col-1\s+collective\s+busbw_gbps\s+\Q$cdir\E\/one\.json:1: case 'u-col-1': one GPU: nothing crosses a link/m, 'not predicted, saying why');
    unlike($oc, qr/-100\.0%/, 'no -100% error');
}

# A serving case with a training method: the train predictor refuses
# "method 'infer'", the infer one priced a "lora" case as serving.
{
    use File::Temp qw(tempdir);
    my $idir = tempdir(CLEANUP => 1);
    for my $m ('lora', 'infer') {
        open(my $fh, '>', "$idir/$m.json") or die $!;
        print $fh '[{"id": "u-inf-' . $m . '", "kind": "infer", "model": {"name": "Llama 3 8B", "layers": 32, '
            . '"hidden": 4096, "heads": 32, "kv_heads": 8, "ffn_hidden": 14336, "ffn_gated": true, "vocab": 128256, '
            . '"params_b": 8.03}, "hardware": {"gpu": "h100-sxm", "gpus": 1}, "parallel": {"tp": 1}, '
            . '"workload": {"precision": "bf16", "method": "' . $m . '", "batch": 8, "input_len": 1024, "output_len": 128}, '
            . '"measured": {"metric": "output_tokens_per_s", "value": 1000, "unit": "tokens/s"}, '
            . '"source": {"title": "x", "where": "y", "id": "z"}}]';
        close $fh;
    }
    my ($ci, $oi, $ei) = run_gp('validate', "$idir/lora.json");
    like($oi, qr/^u-inf-lora\s+infer\s+output_tokens_per_s\s+\Q$idir\E\/lora\.json:1: case 'u-inf-lora': field 'workload\.method': workload\.method 'lora' is not serving/m,
         'an infer case with method lora: not predicted, saying why');
    ($ci, $oi, $ei) = run_gp('validate', "$idir/infer.json");
    like($oi, qr/^u-inf-infer\s+infer\s+output_tokens_per_s\s+1000\s+\d+/m, 'with method infer: predicted');
}

# A MoE serving case states its batch per GPU (workload.batch); the
# defaults line says the GPU's batch, not the replica's: the Ant Group
# EP16 bs1 decode row is batch 1 per GPU (a replica of 16 GPUs holds 16,
# which the line once printed as "batch=16 per GPU").
($c, $o, $e) = run_gp('validate', '--format', 'csv');
my ($ant) = $o =~ /^(ant-dsr1-h20-ep16-decode-bs1-mtp1,.*)$/m;
like($ant // '', qr/batch=1 per GPU"$/, 'MoE case defaults: batch=1 per GPU (the case\'s, not the replica\'s 16)');

done_testing();
