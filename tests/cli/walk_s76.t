# What a walk as a new buyer (an ML engineer deciding what to rent) found
# from the README's first screen: a message that did not name the word
# that went wrong, a size nccl-tests takes and comm refused, a suggestion
# that named the wrong option, a chart's tooltip without its unit, and a
# budget question with no next step.  One block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my ($c, $o, $e);

# 1. A value typed as two words ("--itl-max 50 ms", "--tokens 1 B"): the
# second word became a second MODEL, refused as "infer: one MODEL at a
# time" without naming it.  Now the word, the option and its value are
# named, and a unit is said to go with its number.
($c, $o, $e) = run_gp('infer', 'llama3.1-70b', '--gpu', 'h100-sxm', '--tp', '2', '--itl-max', '50', 'ms');
is($c, 2, 'infer --itl-max 50 ms: a usage error');
like($e, qr/^gpuplan: infer: one MODEL at a time \('ms' follows --itl-max 50: an option takes one value, a number and its unit written together, as 50ms\)$/m,
     'names the stray unit and the joined form') or diag $e;
($c, $o, $e) = run_gp('train', 'llama3.1-70b', '--gpu', 'h100-sxm', '--gpus', '8', '--tokens', '1', 'B');
like($e, qr/^gpuplan: train: expected one MODEL id \('B' follows --tokens 1: an option takes one value, a number and its unit written together, as 1B\)$/m,
     'train --tokens 1 B') or diag $e;
# a word that is no unit: the option named, no joined form offered
($c, $o, $e) = run_gp('train', 'llama3.1-70b', '--gpu', 'h100-sxm', '--tokens', '1', 'billion');
like($e, qr/^gpuplan: train: expected one MODEL id \('billion' follows --tokens 1: an option takes one value\)$/m,
     'train --tokens 1 billion: no 1billion offered') or diag $e;
# a list typed with a space: the second count named
($c, $o, $e) = run_gp('plan', 'llama3.1-8b', '--gpu', 'h100-sxm', '--gpus', '8', '16');
like($e, qr/^gpuplan: plan: expected one MODEL id \('16' follows --gpus 8: an option takes one value\)$/m,
     'plan --gpus 8 16') or diag $e;
# the only argument after an option's value is the model, not a stray
# word: roofline's own message stands alone
($c, $o, $e) = run_gp('roofline', '--gpu', 'h100-sxm', 'llama3-8b');
like($e, qr/give it as --model llama3-8b$/m, 'roofline: its own message, unchanged') or diag $e;

# 2. comm --max 1G, as nccl-tests' -e 1G is typed: nccl-tests reads a
# number and one letter K, M or G (either case) as powers of 1024
# (src/common.cu parsesize).  --min 512M --max 1g: 512 x 1024^2 =
# 536870912 and 1024^3 = 1073741824 bytes, two rows (sizes double).
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--min', '512M', '--max', '1g');
is($c, 0, 'comm --min 512M --max 1g: taken') or diag $e;
my @sizes = $o =~ /^\s*(\d+)\s+\d+\s+[\d.]+/mg;
is_deeply(\@sizes, [536870912, 1073741824], 'nccl-tests sizes: powers of 1024') or diag $o;
# "1GB" stays the units' 10^9 bytes (8 doublings from 2^0 would not
# land on it: --min 1GB --max 1GB is the one size 1000000000)
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--min', '1GB', '--max', '1GB');
like($o, qr/^\s*1000000000\s/m, '1GB is 10^9 bytes') or diag $o . $e;
# a form neither reads: the message names the nccl-tests form too
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--max', '1gb');
is($c, 2, 'comm --max 1gb: a usage error');
like($e, qr/^gpuplan: comm: --max expects a size like 8, 1MiB, 4GB or 1G \(as nccl-tests -e 1G: 1024\^3 B\), got '1gb'$/m,
     'names the forms') or diag $e;

# 3. A switch spelt out or misspelt with its --no- ('rl
# --no-reference-model') named nothing; a Lua key spelt out word by word
# ('refrence_model') was matched to 'model', its last word.
($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h800-sxm', '--gpus', '16', '--no-reference-model');
like($e, qr/unknown option '--no-reference-model' \(did you mean '--no-ref-model'\?\)/,
     'rl --no-reference-model: --no-ref-model') or diag $e;
($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h800-sxm', '--gpus', '16', '--no-colocate');
like($e, qr/\(did you mean '--no-colocated'\?\)/, 'rl --no-colocate: --no-colocated') or diag $e;
my $lua = "local gp = require 'gpuplan'\n"
  . "gp.rl{ model = 'qwen2.5-7b', gpu = 'h800-sxm', gpus = 16, refrence_model = true }\n";
my $f = File::Temp->new(SUFFIX => '.lua');
print $f $lua;
close $f;
($c, $o, $e) = run_gp('run', $f->filename);
like($e, qr/rl: unknown option 'refrence_model' \(did you mean 'ref_model'\?\)/,
     'gp.rl{refrence_model}: ref_model, not model') or diag $e;

# 4. plan --format html: the bars' tooltips said "dp_comm: 1e-02" and
# "weights: 14.96", no unit.  Now each is in its axis's unit, to three
# significant digits.
($c, $o, $e) = run_gp('plan', 'llama3.1-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--tokens', '1B',
                      '--format', 'html');
is($c, 0, 'plan --format html') or diag $e;
like($o, qr/<title>weights: [\d.]+ GiB<\/title>/, 'memory bars: GiB') or diag $o;
like($o, qr/<title>compute: [\d.]+ seconds<\/title>/, 'step bars: seconds');
unlike($o, qr/<title>[a-z_]+: \d+e-\d+/, 'no 1e-02 in a tooltip');

# 5. "I have 50k USD: how many tokens does it buy?" -- --budget without
# --tokens is refused (a budget bounds a run's cost); the refusal now
# says how to answer the question.
($c, $o, $e) = run_gp('plan', 'llama3.1-8b', '--gpu', 'b200,h200-sxm', '--budget', '$50k');
is($c, 2, 'plan --budget without --tokens: a usage error');
like($e, qr/--budget needs --tokens \(the run's size, e\.g\. 2e12\) or --samples N; to see how many tokens the budget buys, price 1B tokens \(--tokens 1B --per-card, without --budget\) and divide the budget by each card's cost/,
     'says what to run') or diag $e;
($c, $o, $e) = run_gp('plan', 'llama3.1-8b', '--gpu', 'b200', '--deadline', '30d');
unlike($e, qr/budget buys/, '--deadline alone: no budget advice') or diag $e;

# 6. fit, the "does it fit?" command, said "fits: no" and its largest
# term and no next step, where train prices what would fit.  Llama 3.1
# 70B QLoRA on 8 H100 at recompute none: short by 33.2 GiB, activations
# 59.4 GiB.  Each variant quoted must be what fit says when run with it
# (the same gp.memory: equal to the printed 0.1 GiB).
my @job = ('fit', 'llama3.1-70b', '--gpu', 'h100-sxm', '--gpus', '8', '--method', 'qlora');
($c, $o, $e) = run_gp(@job);
is($c, 0, 'fit: a job that does not fit is an answer') or diag $e;
like($o, qr/^fits: no/m, 'the verdict');
my ($line) = $o =~ /^(would fit \(priced\): .*)$/m;
ok($line, 'fit says what would fit') or diag $o;
$line //= '';
for my $v (['--recompute', 'full'], ['--zero', '3']) {
    my ($gib) = $line =~ /\Q$v->[0] $v->[1]\E \(([\d.]+) GiB per GPU\)/;
    ok(defined $gib, "@$v priced on the line") or next;
    my ($c2, $o2) = run_gp(@job, @$v);
    my ($total) = $o2 =~ /^total\s+([\d.]+)/m;
    ok(defined $total && abs($gib - $total) < 0.051, "@$v: its own run's total ($gib vs "
       . ($total // 'none') . ")");
    like($o2, qr/^fits: yes/m, "@$v fits when run");
}
# one variant tried alone and missing: said of it, no "none of"
($c, $o, $e) = run_gp('fit', 'llama3.1-70b', '--gpu', 'h100-sxm', '--gpus', '1', '--method', 'full');
like($o, qr/^--recompute full does not fit either \(priced\)$/m, 'one variant: its own words') or diag $o;
# a job that fits: no hint
($c, $o, $e) = run_gp('fit', 'llama3.1-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '3');
unlike($o, qr/would fit|fit either/, 'fits: no hint') or diag $o;

# 7. "Serve Qwen3-235B-A22B FP8 at 100 req/s (256 output tokens each:
# 25600 output tok/s): which card, how many?" -- infer --target over a
# list of cards was refused.  Now each card's plan is the one-card
# --target search's (the same gpuplan.serve plan): its GPUs and cost per
# Mtok must equal what the one-card run prints (exact: the same search
# on the same inputs, printed at the same precision).
my @t = ('--weights', 'fp8', '--target', '25600');
($c, $o, $e) = run_gp('infer', 'qwen3-235b-a22b', '--gpu', 'h100-sxm,b200,h20', @t);
is($c, 0, 'infer --target over three cards') or diag $e;
like($o, qr/^qwen3-235b-a22b: GPUs for 25600 output tok\/s on each card, ITL <= 50 ms; winner \S+ x \d+ \(cost per token\)$/m,
     'the title names the target, the limit and the winner') or diag $o;
for my $g (qw(h100-sxm b200)) {
    my ($gpus, $cost) = $o =~ /^\Q$g\E\s+(\d+)\s.*?\s([\d.]+) USD\s/m;
    my ($c1, $o1) = run_gp('infer', 'qwen3-235b-a22b', '--gpu', $g, @t);
    my ($gpus1, $cost1) = $o1 =~ /^\s+25600\s+50\.0\s+(\d+)\s.*\s([\d.]+) USD$/m;
    ok(defined $gpus && defined $gpus1, "$g: both runs read") or diag "$o\n$o1";
    is($gpus, $gpus1, "$g: the GPUs of its own --target run");
    is($cost, $cost1, "$g: the cost per Mtok of its own --target run");
}
# h20 has no offer for a USD buyer: after the priced cards, said why
like($o, qr/^h20\s+\d+\s.*no price in the buyer's market/m, 'h20: planned, no price') or diag $o;
my @order = $o =~ /^(h100-sxm|b200|h20)\s/mg;
is($order[-1], 'h20', 'the unpriced card after the priced ones');
# a card that cannot hold the model: its reason, last
($c, $o, $e) = run_gp('infer', 'qwen3-235b-a22b', '--gpu', 'l4,h100-sxm', @t);
is($c, 0, 'a card that cannot serve it: still an answer');
like($o, qr/^l4\s+-\s.*no layout meets ITL 50 ms/m, 'l4: its reason') or diag $o;
($c, $o, $e) = run_gp('infer', 'qwen3-235b-a22b', '--gpu', 'h100-sxm,h100-sxm', @t);
like($e, qr/--gpu lists 'h100-sxm' twice/, 'a card named twice: refused') or diag $e;
($c, $o, $e) = run_gp('infer', 'qwen3-235b-a22b', '--gpu', 'h100-sxm,b200', @t, '--format', 'json');
like($o, qr/"per_card":\[/, 'json: the cards') or diag $o;

done_testing();
