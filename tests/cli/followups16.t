# followups16: user-facing consistency, one block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my ($c, $o, $e);

# 1. An unknown option is worded once (gpuplan.args unknown_option) on
# every command, with the nearest option it takes: roofline, catalog,
# validate, model and merge declared no hint and named none.
for my $cmd (qw(fit train plan rl infer comm roofline catalog validate model merge)) {
    ($c, $o, $e) = run_gp($cmd, '--formt', 'csv');
    is($c, 2, "$cmd --formt: a usage error, exit 2");
    like($e, qr/^gpuplan: \Q$cmd\E: unknown option '--formt' \(did you mean '--format'\?\)$/m,
         "$cmd --formt names --format") or diag $e;
}

done_testing();
