# What a buyer reads: a small job's time and cost are not printed as 0,
# and a card that misses the deadline or the budget by a little does not
# read as meeting it.  Before, train printed "0.0 days (0.0-0.0) ...
# cost 0 USD (0-0) at 1.80 USD/GPU-h" for a LoRA run of 1M tokens, plan
# ranked a cheapest search whose every row read "0 (0-0)", rl "1 steps
# in 0.0 hours ... cost 0 USD", and plan --per-card said "misses the
# deadline (3.0 days)" under --deadline 3d and "over the budget (1049
# USD)" under --budget 1048.59 (gpuplan.units.amount_fmt, past_fmt).
use strict;
use warnings;
use Test::More;
use JSON::PP;
require './tests/cli/lib.pl';

my ($c, $o, $e);

# train: cost = train_s x gpus x price / 3600, from the JSON's own train_s
# (days x 86400); the text shows it to two significant digits.
my @job = ('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '1', '--method', 'lora',
           '--tokens', '1e6', '--price', '1.80');
($c, $o, $e) = run_gp(@job, '--format', 'json');
is($c, 0, 'train json exits 0') or diag $e;
my $j = decode_json($o);
my $cost = $j->{days} * 86400 * 1 * 1.80 / 3600;
# tolerance: the JSON's cost is the same product, to rounding
ok(abs($j->{cost} - $cost) < 1e-9 * $cost, "train: cost = days x 24 x 1 GPU x 1.80 ($cost)");
ok($cost > 0.01 && $cost < 1, 'the job costs cents: the case this test is about');
($c, $o, $e) = run_gp(@job);
is($c, 0, 'train exits 0') or diag $e;
my ($shown) = $o =~ /; cost (\S+) USD \(/;
ok(defined $shown && $shown > 0, 'train: the cost is not shown as 0') or diag $o;
# two significant digits: within 5% of the exact cost (0.045: half a unit
# of the last digit is 0.0005, about 1%)
ok(defined $shown && abs($shown - $cost) <= 0.05 * $cost, "train: shown $shown ~ $cost");
# the time in the unit its magnitude picks (units.duration_unit): a job
# under an hour in minutes, days x 1440
my ($t, $unit) = $o =~ /time to train 1e\+06 tokens: (\S+) (days|hours|minutes)/;
ok(defined $t && $t > 0, 'train: the time is not shown as 0.0') or diag $o;
my %per_day = (days => 1, hours => 24, minutes => 1440);
# tolerance: two significant digits shown, half a unit of the last within 5%
ok(defined $unit && abs($t - $j->{days} * $per_day{$unit}) <= 0.05 * $j->{days} * $per_day{$unit},
   "train: $t $unit is the JSON's days in that unit");

# rl, one step at a price of 0.01: cost = step_s x 8 GPUs x 0.01 / 3600.
@job = ('rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '3',
        '--recompute', 'full', '--steps', '1', '--price', '0.01');
($c, $o, $e) = run_gp(@job, '--format', 'json');
is($c, 0, 'rl json exits 0') or diag $e;
$j = decode_json($o);
$cost = $j->{step_s} * 8 * 0.01 / 3600;
ok(abs($j->{cost} - $cost) < 1e-9 * $cost, "rl: cost = step_s x 8 x 0.01 / 3600 ($cost)");
($c, $o, $e) = run_gp(@job);
like($o, qr/^run: 1 step in /m, 'rl: one step, not "1 steps"') or diag $o;
($shown) = $o =~ /^run: .*; cost (\S+) USD/m;
ok(defined $shown && $shown > 0 && abs($shown - $cost) <= 0.05 * $cost,
   'rl: the run cost shown to two digits, not 0') or diag $o;

# plan ranked by cost: the rows differ in cost and are not all "0".
($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm,a100-sxm-80gb', '--gpus', '1,2',
                      '--method', 'lora', '--tokens', '1e7', '--policy', 'cheapest');
is($c, 0, 'plan exits 0') or diag $e;
unlike($o, qr/\s0 \(0-0\)\s/, 'plan: no cost shown as 0 (0-0)') or diag $o;
unlike($o, qr/\s0\.0 \(0\.0-0\.0\)\s/, 'plan: no days shown as 0.0 (0.0-0.0)');

# plan --per-card: the h100 layout misses 3 days by under 0.05 days, and
# one costs just over a budget set 0.002 USD under it.
my @pc = ('plan', 'llama3-8b', '--gpu', 'h100-sxm,h200-sxm', '--tokens', '2e10', '--per-card');
($c, $o, $e) = run_gp(@pc, '--deadline', '3d', '--format', 'json');
is($c, 0, 'plan --per-card --deadline json exits 0') or diag $e;
my ($h100) = grep { ($_->{gpu} // '') eq 'h100-sxm' } map { decode_json($_) } split /\n/, $o;
ok($h100 && !$h100->{meets_deadline} && $h100->{days} < 3.05,
   'h100 misses 3 days by less than the one decimal shows (the case this test is about)');
($c, $o, $e) = run_gp(@pc, '--deadline', '3d');
my ($miss) = $o =~ /misses the deadline \((\S+) days\)/;
ok(defined $miss && $miss > 3, "the miss reads as past 3 days ($miss)") or diag $o;
my $budget = sprintf('%.3f', $h100->{cost} - 0.002);
($c, $o, $e) = run_gp(@pc, '--budget', $budget);
my ($over) = $o =~ /^h100-sxm .*over the budget \((\S+) USD\)/m;
# read at its own decimals, the budget must not print as the shown cost
# (before: "1049" for a cost of 1048.592 over a budget of 1048.590)
my $dec = defined $over && $over =~ /\.(\d+)$/ ? length $1 : 0;
ok(defined $over && $over > $budget && $over ne sprintf("%.${dec}f", $budget),
   "the cost over a budget of $budget reads as over it ($over)") or diag $o;

# A price given in another currency than the buyer's is converted at the
# catalog's rate and says so, as a catalog offer does: $2/h for a CNY
# buyer is 2 x 7.0197 = 14.04 CNY/GPU-h (catalog/currency.lua, PBOC
# central parity 2026-01-08).  Before: "at 14.04 CNY/GPU-h", no rate.
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'a100-sxm-80gb', '--gpus', '8', '--zero', '3',
                      '--tokens', '1e9', '--price', '$2/h', '--currency', 'CNY');
is($c, 0, 'train --price $2/h --currency CNY exits 0') or diag $e;
like($o, qr/; cost \S+ CNY \(.*\) at 14\.04 CNY\/GPU-h$/m, 'train: 2 x 7.0197 = 14.04 CNY');
like($o, qr/price=14\.04 CNY\/GPU-h \(converted from \$2\.00\/h at 7\.0197 CNY\/USD, 2026-01-08\)/,
     'train: the conversion and its rate are said');
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'a100-sxm-80gb', '--price', '14CNY/h',
                      '--currency', 'USD');
is($c, 0, 'infer --price 14CNY/h --currency USD exits 0') or diag $e;
# 14 / 7.0197 = 1.9944 -> 1.99
like($o, qr/price=1\.99 USD\/GPU-h \(converted from 14\.00CNY\/h at 7\.0197 CNY\/USD/,
     'infer: 14 CNY in USD, said');

# plan without --gpus searches 8 GPUs only.  A 36-hour deadline for 2e10
# tokens of llama3-8b: at 8 h100s the best layout takes 3.03 days (above),
# 16 would take about half; before, it read "no layout fits within the
# deadline and budget" and no line said that only 8 GPUs were tried.
($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--tokens', '2e10',
                      '--deadline', '36h');
is($c, 0, 'plan --deadline 36h exits 0') or diag $e;
like($o, qr/^no layout of 8 GPUs \(the default --gpus; --gpus 8\.\.64 tries more counts\) fits within/m,
     'plan: the miss names the one count searched') or diag $o;
like($o, qr/^defaults: .*gpus=8 \(--gpus 8\.\.64 tries more counts\)/m, 'plan: gpus=8 is a default said');
($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--tokens', '2e10',
                      '--deadline', '36h', '--gpus', '8,16');
like($o, qr/^h100-sxm\s+16\s/m, 'plan: with --gpus 8,16 a 16-GPU layout meets it') or diag $o;
unlike($o, qr/gpus=8 \(/, 'plan: no default said when --gpus is given');

# plan --per-card --format csv: the cost is a number and the currency a
# column, as plan's own CSV has them (it was "0.42 USD" in one cell).
# h100-sxm x2 at 1.80: 0.0049 days x 24 x 2 x 1.80 = 0.42 USD.
($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm,h800-sxm', '--gpus', '2',
                      '--method', 'lora', '--tokens', '1e7', '--per-card', '--format', 'csv',
                      '--price', '1.80');
is($c, 0, 'plan --per-card csv exits 0') or diag $e;
my @lines = split /\n/, $o;
like($lines[0], qr/^gpu,gpus,layout,step_s,mfu,days,cost,currency,mem_gib,loses$/,
     'per-card csv: cost and currency are columns');
my ($d, $cc, $cur) = $lines[1] =~ /^h100-sxm,2,[^,]+,[^,]+,[^,]+,([^,]+),([^,]+),([^,]+),/;
ok(defined $cc && $cc =~ /^[\d.]+$/ && $cur eq 'USD', "per-card csv: cost $cc is a number") or diag $o;
# tolerance: days and cost are each printed to two significant digits
ok(defined $cc && abs($cc - $d * 24 * 2 * 1.80) <= 0.02 * $cc, 'per-card csv: cost = days x 24 x 2 x 1.80');

# train's and rl's CSV carry the run's totals on every row (as fit's CSV
# carries its verdict): before, the parts only, and no cost.  train:
# cost = days x 24 x 8 GPUs x 1.80; rl: cost = hours x 8 x 1.80.
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--tokens', '1e9',
                      '--price', '1.80', '--format', 'csv');
is($c, 0, 'train csv exits 0') or diag $e;
@lines = split /\n/, $o;
my @h = split /,/, $lines[0];
my %col; @col{@h} = (0 .. $#h);
ok(defined $col{cost} && defined $col{days} && defined $col{currency}, 'train csv: cost, days, currency')
  or diag $lines[0];
my @f = split /,/, $lines[-1];
# tolerance: %.6g cells, 1e-5 relative
ok(defined $col{cost} && abs($f[$col{cost}] - $f[$col{days}] * 24 * 8 * 1.80) <= 1e-5 * $f[$col{cost}],
   'train csv: cost = days x 24 x 8 x 1.80');
($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '3',
                      '--recompute', 'full', '--steps', '10', '--price', '1.80', '--format', 'csv');
is($c, 0, 'rl csv exits 0') or diag $e;
@lines = split /\n/, $o;
@h = split /,/, $lines[0];
%col = (); @col{@h} = (0 .. $#h);
@f = split /,/, $lines[1];
ok(defined $col{cost} && abs($f[$col{cost}] - $f[$col{hours}] * 8 * 1.80) <= 1e-5 * $f[$col{cost}],
   'rl csv: cost = hours x 8 x 1.80') or diag $o;

done_testing();
