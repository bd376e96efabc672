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

done_testing();
