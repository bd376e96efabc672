# Output files named on the command line: where they land, and refusals
# that name the file before anything is written.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
require './tests/cli/lib.pl';

my $dir = tempdir(CLEANUP => 1);
my @job = ('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--tokens', '1e9');
my ($c, $o, $e);

# plan --svg BASE writes BASE-pareto.svg, BASE-memory.svg, BASE-step.svg.
# A BASE given as a file name (plan.svg) wrote plan.svg-pareto.svg ...;
# its .svg is dropped.
($c, $o, $e) = run_gp(@job, '--svg', "$dir/plan.svg");
is($c, 0, 'plan --svg plan.svg exits 0') or diag $e;
ok(-s "$dir/plan-$_.svg", "plan.svg: plan-$_.svg written") for qw(pareto memory step);
ok(!-e "$dir/plan.svg-pareto.svg", 'no plan.svg-pareto.svg');
($c, $o, $e) = run_gp(@job, '--per-card', '--svg', "$dir/cards.SVG");
is($c, 0, 'plan --per-card --svg cards.SVG exits 0') or diag $e;
ok(-s "$dir/cards-cards.svg", 'per card: cards-cards.svg');
# a BASE without .svg is used as given
($c, $o, $e) = run_gp(@job, '--svg', "$dir/run1");
ok(-s "$dir/run1-pareto.svg", 'a BASE without .svg: run1-pareto.svg');

# One of the three files cannot be written (a directory is in its place):
# refused before any of them is written, naming it.
mkdir "$dir/b-step.svg";
($c, $o, $e) = run_gp(@job, '--svg', "$dir/b");
is($c, 1, 'a blocked third file exits 1');
like($e, qr/cannot write '\Q$dir\E\/b-step\.svg': it is a directory/, 'and names it');
ok(!-e "$dir/b-pareto.svg" && !-e "$dir/b-memory.svg", 'and none of the three is written');

# An SVG written under another extension (chart.png, r.txt) went there in
# silence; it is refused before anything is printed, naming the file.  A
# name without an extension, or .SVG, is taken as given.
for my $cmd (['roofline', '--gpu', 'h100-sxm'],
             ['comm', '--gpu', 'h100-sxm', '--gpus', '8'],
             ['infer', 'llama3-8b', '--gpu', 'h100-sxm', '--sweep-batch']) {
    ($c, $o, $e) = run_gp(@$cmd, '--svg', "$dir/chart.png");
    is($c, 1, "$cmd->[0] --svg chart.png exits 1");
    like($e, qr/cannot write '\Q$dir\E\/chart\.png': it ends in \.png, but the file is SVG \(name it \.svg\)/,
         "$cmd->[0]: says why");
    is($o, '', "$cmd->[0]: nothing printed");
    ok(!-e "$dir/chart.png", "$cmd->[0]: nothing written");
}
($c, $o, $e) = run_gp('roofline', '--gpu', 'h100-sxm', '--svg', "$dir/roof.SVG");
is($c, 0, 'roofline --svg roof.SVG exits 0') or diag $e;
ok(-s "$dir/roof.SVG", 'roof.SVG written');
($c, $o, $e) = run_gp('roofline', '--gpu', 'h100-sxm', '--svg', "$dir/roofchart");
ok($c == 0 && -s "$dir/roofchart", 'a name without an extension: written');

done_testing();
