# --price 0: a free card is a legitimate input.  Every command that prices
# GPU-hours takes it the same way -- cost 0, shown as 0 -- and a comparison
# that divides by a cost says the winner's is 0 instead of printing a
# percentage of 0 ("-nan% less cost per token", as infer's cards printed).
# Before, train showed "cost 0", while infer dropped its cost line and plan
# showed "-", as for a card with no price, and a budget at price 0 was
# refused ("a budget needs a price").
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my ($c, $o, $e);

# train: cost = tokens x GPU-seconds a token x price = 0.
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '3',
                      '--tokens', '1e9', '--price', '0');
is($c, 0, 'train --price 0 exits 0') or diag $e;
like($o, qr/; cost 0 USD at 0\.00 USD\/GPU-h$/m, 'train: cost 0');

# infer, one card: cost per 1M tokens = 0 x gpus / 3600 / tokens/s x 1e6 = 0;
# tokens/s per price has no value at price 0, and says why.
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--price', '0');
is($c, 0, 'infer --price 0 exits 0') or diag $e;
like($o, qr/^cost per 1M output tokens\s+0\.000 USD$/m, 'infer: cost per token 0');
like($o, qr/^tokens\/s per USD\/h\s+- \(price 0: the GPUs are free\)$/m,
     'infer: tokens/s per price is not a number at price 0');
unlike($o, qr/nan|inf/i, 'infer: no nan or inf');

# infer, two cards, both free: the cost comparison is "the same (both 0)",
# the winner the faster one ("N% slower" below 2x, "N.Nx slower" from 2x:
# the A100's per-user rate is under half the H100's since it counts the
# prompts' steps).
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm,a100-sxm-80gb', '--price', '0');
is($c, 0, 'infer cards --price 0 exits 0') or diag $e;
like($o, qr/winner h100-sxm \(cost per token\)/, 'infer cards: ranked by cost, the tie by speed');
like($o, qr/^a100-sxm-80gb .*0\.000 USD\s+yes\s+the same \(both 0\), [\d.]+(?:%|x) slower per user$/m,
     'infer cards: both free, said so');
unlike($o, qr/nan|inf/i, 'infer cards: no nan or inf');

# infer --target: the GPUs for a throughput, at cost 0.
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--price', '0', '--target', '10000');
is($c, 0, 'infer --target --price 0 exits 0') or diag $e;
like($o, qr/\s0\.000 USD$/m, 'infer --target: cost 0');

# plan: cost 0 in every row, not "-" (no price).
($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--tokens', '1e9',
                      '--price', '0');
is($c, 0, 'plan --price 0 exits 0') or diag $e;
my @rows = grep { /^h100-sxm\s+8\s/ } split /\n/, $o;
ok(@rows && !(grep { !/\s0\s+USD\s/ } @rows), 'plan: every row costs 0 USD') or diag $o;

# plan with a budget: a free card meets any budget.
($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--tokens', '1e9',
                      '--price', '0', '--budget', '$5');
is($c, 0, 'plan --price 0 --budget exits 0') or diag $e;
like($o, qr/^h100-sxm\s+8\s.*\s0\s+USD\s/m, 'plan: a free card is within a $5 budget');

# plan --per-card, both free: cheapest ties go to the faster card, and the
# loser's cost against the winner's 0 is "the same (both 0)".
($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'a100-sxm-80gb,h100-sxm', '--gpus', '8',
                      '--tokens', '1e9', '--price', '0', '--per-card', '--policy', 'cheapest');
is($c, 0, 'plan --per-card --price 0 exits 0') or diag $e;
like($o, qr/^winner: h100-sxm x 8/m, 'plan per card: the faster free card wins');
like($o, qr/^a100-sxm-80gb .*slower, the same \(both 0\)$/m, 'plan per card: both free, said so');
unlike($o, qr/nan|inf/i, 'plan per card: no nan or inf');

# rl: cost per step and per 1k prompts 0.
($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '3',
                      '--price', '0', '--steps', '10');
is($c, 0, 'rl --price 0 exits 0') or diag $e;
like($o, qr/^cost: 0\.000 USD .*per step, 0\.00 USD .*per 1k prompts at 0\.00 USD\/GPU-h$/m,
     'rl: cost 0');

# plan --shard and merge: a shard of free cards is a plan's output, and the
# merged ranking is the whole search's.  Before, merge refused the lines
# ("result field 'price' must be > 0"), and best-per-dollar's score of a
# free card (-tokens/s / (gpus x 0) = -inf, written as null) was refused.
{
    use File::Temp qw(tempdir);
    my $dir = tempdir(CLEANUP => 1);
    my @pj = ('plan', 'llama3-8b', '--gpu', 'h100-sxm,a100-sxm-80gb', '--gpus', '8',
              '--tokens', '1e9', '--price', '0');
    for my $pol ('cheapest', 'best-per-dollar') {
        for my $k (1, 2) {
            my ($sc, $so, $se) = run_gp(@pj, '--policy', $pol, '--shard', "$k/2", '--format', 'json');
            write_file("$dir/s$k.json", $so);
        }
        ($c, $o, $e) = run_gp('merge', "$dir/s1.json", "$dir/s2.json");
        is($c, 0, "merge of free-card shards ($pol) exits 0") or diag $e;
        my (undef, $whole) = run_gp(@pj, '--policy', $pol);
        my $strip = sub { join "\n", grep { !/^(searched|defaults)\b/ } split /\n/, $_[0] };
        is($strip->($o), $strip->($whole), "merge ($pol): the whole search's table");
    }
}

# One range for a price in every command: 0 (free) or 1e-6 to 1e15 per
# GPU-hour, what the engine prices.  Before, 1e-7 was refused by infer
# alone (train, plan and rl showed "cost 0 (0-0)"), and 1e16 was refused by
# plan as a layout's fault ("h100-sxm x 8 (TP1 DP8 ...): price must be").
for my $p ('1e-7', '1e16') {
    for my $cmd (['train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '3', '--tokens', '1e9'],
                 ['infer', 'llama3-8b', '--gpu', 'h100-sxm'],
                 ['plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--tokens', '1e9'],
                 ['rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '3']) {
        ($c, $o, $e) = run_gp(@$cmd, '--price', $p);
        is($c, 1, "$cmd->[0] --price $p: refused");
        like($e, qr/^gpuplan: $cmd->[0]: --price must be 0 \(the GPUs are free\) or from 1e-06 to 1e\+15 USD per GPU-hour/m,
             "$cmd->[0] --price $p: one message, naming --price");
    }
}

# The pictures: a cost of 0 has no place on a log axis, so a free card's
# layouts were counted in the Pareto chart's note ("300 layouts") and drawn
# nowhere (the only circles were the legend's 2).  The cost axis is linear
# then, each layout a circle, and the note says why.
{
    use File::Temp qw(tempdir);
    my $dir = tempdir(CLEANUP => 1);
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm,a100-sxm-80gb', '--gpus', '8..16',
                          '--tokens', '1e9', '--price', '0', '--svg', "$dir/z");
    is($c, 0, 'plan --price 0 --svg exits 0') or diag $e;
    open(my $fh, '<', "$dir/z-pareto.svg") or die;
    my $svg = do { local $/; <$fh> };
    my ($n) = $svg =~ /(\d+) layouts; the line joins/;
    my $circles = () = $svg =~ /<circle/g;
    ok(defined $n && $circles >= $n, "every layout drawn ($circles circles for $n layouts)");
    like($svg, qr/price 0: a free card's layouts cost 0/, 'the note says why the axis is linear');
    unlike($svg, qr/nan|inf/i, 'no nan or inf in the chart');
}

done_testing();
