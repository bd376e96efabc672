# A buyer's walk (session 75, walk3): the questions an ML engineer asks
# before renting, from the command line, and what each answer or refusal
# got wrong before.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

# 1. "50k samples of 2k tokens for 3 epochs": --samples takes the count
# as --tokens takes one (a decimal suffix), where it said "expects a
# number".  50k x 2048 (seq) x 3 = 3.072e8 tokens, exactly as 50000.
my @qlora = ('train', 'llama3-8b', '--gpu', 'rtx-4090', '--method', 'qlora');
my ($c, $o, $e) = run_gp(@qlora, '--samples', '50k', '--epochs', '3');
is($c, 0, '--samples 50k: exit 0') or diag $e;
like($o, qr/tokens=3\.072e\+08 \(--samples 50000 x 2048 \(seq: each sample a whole sequence\) x --epochs 3\)/,
  '--samples 50k is 50000 samples on the defaults line');
like($o, qr/^time to train 3\.07e\+08 tokens: /m, 'and the run is 3.07e8 tokens');
# the conflict with --tokens shows --samples as typed (it said 50000.0
# for 5e4) and by its flag
($c, $o, $e) = run_gp(@qlora, '--samples', '5e4', '--tokens', '1e9');
is($c, 2, '--samples with --tokens: a usage error');
like($e, qr/^gpuplan: train: --tokens 1e9 and --samples 5e4 both set the run's tokens/m,
  'names both flags, each as typed');
($c, $o, $e) = run_gp(@qlora, '--samples', '50x');
is($c, 2, '--samples 50x: a usage error');
# its own examples, not --tokens' (2e12, 1.5T are token totals, not a
# dataset), with every suffix its reader takes (G and T too: 2T below)
like($e, qr/--samples must be a count of samples: a number \(50000\) or one with a suffix K, M, B \(or G\) or T \(50k, 2M, 1\.5B\) \(got '50x'\)/,
  'says what a count of samples is');
($c, $o, $e) = run_gp(@qlora, '--samples', '1.5');
is($c, 1, '--samples 1.5: refused');
like($e, qr/--samples must be a whole number 1\.\.1e15, or one with a suffix K, M, B \(or G\) or T \(50k\) \(got 1\.5\)/,
  'a whole number, as typed');
# 2T samples x 2048 tokens = 4.096e15 tokens, past the engine's 1e15: it
# named --tokens, which the user had not given
($c, $o, $e) = run_gp(@qlora, '--samples', '2T');
is($c, 1, '--samples 2T: past 1e15 tokens, refused');
like($e, qr/--samples 2T x 2048 tokens a sample x --epochs 1 is 4\.096e\+15 tokens, past 1e\+15/,
  'names the samples, not --tokens');
unlike($e, qr/--tokens/, 'and no --tokens');

# 2. "comm all-reduce 1 GiB on 16 H100": the collective typed as an
# argument and the size as --size were refused with nothing of --op or
# --min/--max; "32 users" as --users named nothing.
($c, $o, $e) = run_gp('comm', 'all-reduce', '--system', 'dgx-h100', '--nodes', '2');
is($c, 2, 'comm all-reduce: a usage error');
like($e, qr/^gpuplan: comm: no arguments \(got 'all-reduce'\): the collective is --op all_reduce$/m,
  'points at --op with the canonical name');
($c, $o, $e) = run_gp('comm', 'h100-sxm');
like($e, qr/give it as --gpu h100-sxm/, 'a card as the argument still points at --gpu');
for my $k ('--size', '--bytes', '--message-size') {
  ($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', $k, '1GiB');
  is($c, 2, "comm $k: a usage error");
  like($e, qr/unknown option '\Q$k\E' \(the command line sweeps sizes: --min SIZE --max SIZE, both the same for one size/,
    "comm $k: says --min and --max");
}
# the one size it asks for: 1 GiB, one row
($c, $o, $e) = run_gp('comm', '--op', 'all-reduce', '--system', 'dgx-h100', '--nodes', '2',
  '--min', '1GiB', '--max', '1GiB');
is($c, 0, 'comm --min 1GiB --max 1GiB: exit 0') or diag $e;
is(scalar(() = $o =~ /^1073741824 /mg), 1, 'one row, of 1073741824 B');
like($o, qr/^defaults: nccl=/m, 'with its defaults line');
like($o, qr/^ranges: where 80% of published runs like this landed/m, 'and its ranges line');
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--users', '32');
is($c, 2, 'infer --users: a usage error');
like($e, qr/unknown option '--users' \(did you mean '--concurrency'\?\)/, 'names --concurrency');

# 3. "Mixtral 8x22B on 4 H200", "DeepSeek-R1 on 2 x 8 H100": a model the
# catalog lacks offered only its nearest other model ("did you mean
# mixtral-8x7b?"), never the import that makes it one.  An id the catalog
# has, written otherwise, keeps its one suggestion alone.
# (mixtral-8x22b is in the catalog since, 4. below: a size it lacks)
($c, $o, $e) = run_gp('fit', 'qwen2.5-110b', '--gpu', 'h200-sxm');
is($c, 2, 'unknown model: a usage error');
like($e, qr/^gpuplan: fit: unknown model 'qwen2\.5-110b' \(did you mean qwen2\.5-14b, [^?]*\? Or import its config\.json: gpuplan model import CONFIG\.json --id ID > DIR\/ID\.lua, with DIR on \$GPUPLAN_CATALOG\)$/m,
  'the nearest and the import');
($c, $o, $e) = run_gp('infer', 'zzz-model', '--gpu', 'h200-sxm');
like($e, qr/unknown model 'zzz-model' \(see 'gpuplan catalog list models', or import its config\.json: gpuplan model import/,
  'no near id: the list and the import');
($c, $o, $e) = run_gp('fit', 'Llama-3-8B', '--gpu', 'h200-sxm');
like($e, qr/unknown model 'Llama-3-8B' \(did you mean llama3-8b\?\)$/m, 'a catalog id written otherwise: that id alone');

# 4. The two models of those questions, in the catalog.  Mixtral 8x22B by
# hand: attention a layer 6144 x 6144 x 2 (q, o) + 6144 x 1024 x 2 (k, v)
# = 88,080,384; an expert 3 x 6144 x 16384 = 301,989,888, eight of them;
# router 6144 x 8; norms 2 x 6144; 56 layers, plus 2 x 32000 x 6144
# embeddings and the final norm: 140,620,634,112 in all, exact.
($c, $o, $e) = run_gp('model', 'params', 'mixtral-8x22b');
is($c, 0, 'model params mixtral-8x22b: exit 0') or diag $e;
like($o, qr/^total\s+140620634112\s/m, 'mixtral-8x22b: 140.6B parameters (hand count above)');
# active: the same less six of the eight experts a layer:
# 140,620,634,112 - 56 x 6 x 301,989,888 = 39,152,031,744
like($o, qr/^active\s+39152031744\s/m, 'and 39.2B active (top 2 of 8)');
# 4 x H200 at 32k, TP 4: bf16 weights 2 x 140.6e9 / 4 = 70.31 GB a GPU;
# KV 56 layers x 2 x 8 heads x 128 x 2 B = 229,376 B a token
($c, $o, $e) = run_gp('fit', 'mixtral-8x22b', '--gpu', 'h200-sxm', '--gpus', '4', '--tp', '4',
  '--method', 'infer', '--seq', '32768');
is($c, 0, 'fit mixtral-8x22b on 4 x h200 at 32k: exit 0') or diag $e;
like($o, qr/^fits: yes/m, 'fits');
($c, $o, $e) = run_gp('model', 'params', 'deepseek-r1');
like($o, qr/^total\s+671026404352\s/m, 'deepseek-r1: deepseek-v3\'s 671.0B (the same config.json)');
# 2 x 8 H100 under SGLang, TP 16 over the two nodes: fp8 weights 671e9 /
# 16 = 41.9e9 and the dense parts' 16-bit remainder: 42.93 GB a GPU
($c, $o, $e) = run_gp('infer', 'deepseek-r1', '--gpu', 'h100-sxm', '--gpus', '16', '--tp', '16',
  '--runtime', 'sglang');
is($c, 0, 'infer deepseek-r1 on 16 x h100 TP 16: exit 0') or diag $e;
like($o, qr/^weights per GPU\s+42\.93 GB$/m, 'deepseek-v3\'s weights a GPU');
like($o, qr/tp 16 over 2 nodes of 8 \(SGLang's --tp N --nnodes M\)/, 'the defaults say TP crosses the nodes');

# 5. "H100, H200 or B200 for this model?": infer compares cards by a list
# in --gpu (gp.infer{gpu = {...}}); --per-card, plan's view, named plan as
# if infer could not, and lua.md's per_card read as a key of gp.infer.
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm,b200', '--per-card');
is($c, 2, 'infer --per-card: a usage error');
like($e, qr/unknown option '--per-card' \(infer compares cards by --gpu alone: --gpu h100-sxm,h200-sxm,b200\)/,
  'says --gpu a,b,c compares');
my $lua = do { my $f = File::Temp->new(SUFFIX => '.lua'); print $f
  "local gp = require 'gpuplan'\n"
  . "print(select(2, pcall(gp.infer, { model = 'llama3-8b', gpu = 'h100-sxm', per_card = {'b200'} })))\n"
  . "local r = gp.infer{ model = 'llama3-8b', gpu = {'h100-sxm', 'b200'} }\n"
  . "print(#r.per_card, r.winner)\n"; close $f; $f };
($c, $o, $e) = run_gp('run', "$lua");
is($c, 0, 'the Lua comparison runs') or diag $e;
like($o, qr/unknown option 'per_card' \(gp\.infer compares cards given gpu = a list: gpu = \{'h100-sxm', 'b200'\}, its result's per_card\)/,
  'gp.infer{per_card = ...}: says gpu = a list');
like($o, qr/^2\t\S+$/m, 'gpu = a list of two: two rows and a winner');

# 6. "Which card for my 50k-sample QLoRA, 3 epochs?": plan is "the job as
# for gpuplan train" but refused --samples as an option of train only.
# The run is the same 50,000 x 2048 x 3 = 3.072e8 tokens, ranked by cost
# as a run of --tokens is.
my @plan = ('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '1,8', '--method', 'qlora');
($c, $o, $e) = run_gp(@plan, '--samples', '50k', '--epochs', '3');
is($c, 0, 'plan --samples 50k --epochs 3: exit 0') or diag $e;
like($o, qr/tokens=3\.072e\+08 \(--samples 50000 x 2048 \(seq: each sample a whole sequence\) x --epochs 3\)/,
  'the run on the defaults line');
like($o, qr/policy=cheapest \(--samples: the run's cost at each card's price/, 'ranked by cost, said why');
# the same ranking as --tokens 307200000: the winner's layout and time alike
my ($c2, $o2, $e2) = run_gp(@plan, '--tokens', '307200000');
my ($w1) = $o =~ /^(h100-sxm .*)$/m;
my ($w2) = $o2 =~ /^(h100-sxm .*)$/m;
is($w1, $w2, 'the first row is the one --tokens 307200000 gives');
($c, $o, $e) = run_gp(@plan, '--samples', '50k', '--deadline', '12h');
is($c, 0, '--deadline with --samples: the run has a size') or diag $e;
($c, $o, $e) = run_gp(@plan, '--budget', '10');
like($e, qr/--budget needs --tokens \(the run's size, e\.g\. 2e12\) or --samples N/, 'a budget names both sizes');
($c, $o, $e) = run_gp(@plan, '--samples', '5e4', '--tokens', '1B');
is($c, 2, 'plan: --samples with --tokens refused, as train does');
($c, $o, $e) = run_gp(@plan, '--samples', '50k', '--format', 'json');
like($o, qr/"samples":50000\b/, 'the JSON job carries the count, not the text (merge compares jobs)');

done_testing();
