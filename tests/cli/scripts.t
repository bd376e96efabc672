# The example scripts of scripts/: each runs, and each conclusion it prints
# follows from the rows it printed (recomputed here from the table).
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
require './tests/cli/lib.pl';

my $dir = tempdir(CLEANUP => 1);
sub rows_of {
    my ($text, $first) = @_;
    return map { [ split /\s{2,}/ ] } grep { /$first/ } split /\n/, $text;
}

# grid_sweep.lua: the Pareto front, sooner rows dearer, never dominated.
my ($c, $o, $e) = run_gp('run', 'scripts/grid_sweep.lua', '--svg', "$dir/front.svg");
is($c, 0, 'grid_sweep runs') or diag $e;
my @front = rows_of($o, qr/^(a100-sxm-80gb|h100-sxm|h200-sxm|b200)\s+\d+\s/);
ok(@front >= 2, 'a front of several layouts');
my $ok = 1;
for my $i (1 .. $#front) {
    # sorted by days; each next one must be strictly cheaper, or the
    # previous one would dominate it
    $ok &&= $front[$i][3] >= $front[$i - 1][3] && $front[$i][4] < $front[$i - 1][4];
}
ok($ok, 'along the front time rises and cost falls: no row dominates another');
like($o, qr/^Fastest: \Q$front[0][1]\E x \Q$front[0][0]\E \(/m, 'fastest: the first row');
like($o, qr/cheapest: \Q$front[-1][1]\E x \Q$front[-1][0]\E \(/m, 'cheapest: the last row');
ok(-s "$dir/front.svg", 'the plot is written');

# budget_policy.lua: the monthly arithmetic and the policy's constraints.
($c, $o, $e) = run_gp('run', 'scripts/budget_policy.lua', '--monthly', '30kCNY');
is($c, 0, 'budget_policy runs') or diag $e;
# 8 GPUs x 8.88 CNY/h (AutoDL, the catalog's China-market H800) x 24 h x
# 30 days = 51,148.8 CNY a month; 30,000 CNY rents them 30000 / (8 x
# 8.88 x 24) = 17.6 days a month.
like($o, qr/8 GPUs cost 51149 CNY a month at 8\.88 CNY\/GPU-h: the budget rents them 17\.6 days a month/,
     'the month of 8 H800s and the days the budget buys');
my ($gd, $months) = $o =~ /in ([\d.]+) days of the 8 GPUs: ([\d.]+) calendar months/;
ok(defined $gd && abs($months - $gd / 17.6) < 0.051, 'calendar months = run days / days a month');
like($o, qr/gp\.policy\.monthly: 8 x h800-sxm cost more than the budget a month/,
     'the monthly policy refuses a budget below a month of the GPUs');
my @pol = rows_of($o, qr/^(h800-sxm|a800-sxm-80gb|h20)\s+\d+\s/);
ok(@pol >= 1, 'the custom policy keeps layouts');
ok(!(grep { $_->[3] < 0.4 || $_->[1] > 64 } @pol), 'every kept layout has MFU >= 0.4 on <= 64 GPUs');
my @costs = map { $_->[5] } @pol;
ok(!(grep { $_ < $costs[0] } @costs), 'the first is the cheapest');
like($o, qr/chosen: \Q$pol[0][1]\E x \Q$pol[0][0]\E/, 'and it is the one chosen');

# a100_vs_h200.lua: the ratios it states are the table's.
($c, $o, $e) = run_gp('run', 'scripts/a100_vs_h200.lua');
is($c, 0, 'a100_vs_h200 runs') or diag $e;
my @inf = rows_of($o, qr/^llama3\.1-\S+\s+\d+ x /);
is(scalar @inf, 6, 'six setups');
my %best;
for my $r (@inf) {
    my ($model, $setup, $alone, $users, $all, $per, $cost) = @$r;
    my ($gpu) = $setup =~ /x (\S+)/;
    $best{$model}{$gpu} = $r if !$best{$model}{$gpu} || $cost < $best{$model}{$gpu}[6];
}
for my $model (qw(llama3.1-8b llama3.1-70b)) {
    my ($a, $h) = ($best{$model}{'a100-sxm-80gb'}, $best{$model}{'h200-sxm'});
    my ($ratio) = $o =~ /^\Q$model\E: one H200 \(.*?\) serves as much as ([\d.]+) A100s/m;
    ok(defined $ratio && abs($ratio - $h->[5] / $a->[5]) < 0.051, "$model: the A100s one H200 replaces");
    my $cheaper = $a->[6] < $h->[6] ? $a : $h;
    like($o, qr/^\Q$model\E: .*cheapest per token: \Q$cheaper->[1]\E at \Q$cheaper->[6]\E/m,
         "$model: the cheaper per token is the table's");
}

# custom_catalog.lua: the user's node and price, checked like catalog/.
($c, $o, $e) = run_gp('run', 'scripts/custom_catalog.lua', '--dir', "$dir/cat");
is($c, 0, 'custom_catalog runs') or diag $e;
ok(-s "$dir/cat/my-cluster.lua", 'the catalog file is written where asked');
($c, my $co, $e) = run_gp('catalog', 'check', "$dir/cat");
is($c, 0, 'and it checks') or diag $e;
my @cc = rows_of($o, qr/^(hgx-h800|my-h800-4nic)\s/);
is(scalar @cc, 2, 'stock and own node');
is($cc[1][6], '7.50', 'own node at the contract price');
my $pct = 100 * abs($cc[1][2] / $cc[0][2] - 1);
my ($said) = $o =~ /step is ([\d.]+)% (longer|shorter)/;
ok(defined $said && abs($said - $pct) < 0.2, 'the step difference stated is the table\'s');
# A price that is no price names --price (exit 2): it failed in the
# catalog file written from it, a temporary file the user never named.
($c, $o, $e) = run_gp('run', 'scripts/custom_catalog.lua', '--price', 'cheap');
is($c, 2, 'a bad --price: usage error');
like($e, qr/^gpuplan: custom_catalog: --price 'cheap': bad price 'cheap'/m, 'names --price');
($c, $o, $e) = run_gp('run', 'scripts/custom_catalog.lua', '--price', '0CNY/h');
like($e, qr/^gpuplan: custom_catalog: --price '0CNY\/h': must be positive/m, 'a price of 0: names --price');
# A price the catalog cannot take (no rate for XYZ): the catalog's error,
# naming the file, the line and the entry -- and the temporary directory
# is removed (it was left behind).
($c, $o, $e) = run_gp('run', 'scripts/custom_catalog.lua', '--price', '7.5XYZ/h');
is($c, 1, 'a bad price in the user catalog: exit 1');
like($e, qr/^gpuplan: the user catalog does not check: \S+\/my-cluster\.lua:\d+: price 'h800-sxm\/my-contract'/m,
     'the error names the file, the line and the entry');
my ($tmpd) = $e =~ /check: (\S+)\/my-cluster\.lua/;
ok(defined $tmpd && !-e $tmpd, 'the temporary directory is removed');

# a100_vs_h200.lua: a job gp.infer refuses is the script's error, not a
# table of '-' under exit 0 (an --output of 0, an --input past the
# models' 128k context); a speed that is no speed is refused.
for my $x (['--output', '0', 1, qr/^gpuplan: \S*a100_vs_h200\.lua:\d+: infer: output must be a whole number of tokens/m],
           ['--input', '200000', 1, qr/^gpuplan: \S*a100_vs_h200\.lua:\d+: infer: input 200000 \+ output 512 tokens exceed llama3\.1-8b's context/m],
           ['--min-speed', '-1', 2, qr/^gpuplan: a100_vs_h200: --min-speed must be a positive rate \(tokens\/s\), got -1$/m]) {
    ($c, $o, $e) = run_gp('run', 'scripts/a100_vs_h200.lua', $x->[0], $x->[1]);
    is($c, $x->[2], "a100_vs_h200 $x->[0] $x->[1]: exit $x->[2]");
    like($e, $x->[3], "a100_vs_h200 $x->[0] $x->[1]: says why");
    is($o, '', "a100_vs_h200 $x->[0] $x->[1]: no table of dashes");
}

# grid_sweep with GPU counts that place no layout (144 GB200s, whose NVL72
# domains keep equal shares, engine/layout.h layout_fill_place: every split
# of Llama 3 8B has a PP of 9 at a stride 72 does not divide) or none that
# fits memory (1 GPU): an empty table said only "0 fitting layouts".  (20
# H100s on 8-GPU nodes place now: the launcher's 8 + 8 + 4.)
{
    my ($cg, $og, $eg) = run_gp('run', 'scripts/grid_sweep.lua', '--gpus', '144', '--gpu', 'gb200');
    is($cg, 0, 'grid_sweep gb200 --gpus 144: exit 0') or diag $eg;
    like($og, qr/^gb200: no layout: no split of the GPU counts divides the model, the node and the batch and places its groups in the job's nodes \(\d+ splits did not place\)$/m,
         'says the card had no layout, and why');
    ($cg, $og, $eg) = run_gp('run', 'scripts/grid_sweep.lua', '--gpus', '20', '--gpu', 'h100-sxm');
    like($og, qr/^h100-sxm\s+20\s+TP1 PP5 DP4 /m, '20 H100s: PP 5 placed 2 + 2 + 1');
    ($cg, $og, $eg) = run_gp('run', 'scripts/grid_sweep.lua', '--gpus', '1', '--gpu', 'h100-sxm');
    like($og, qr/^h100-sxm: \d+ layouts, none fits memory$/m, '1 GPU: layouts, none fits');
}

done_testing();
