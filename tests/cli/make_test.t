# make test's knobs (README "Building"): JOBS, the test files run at
# once, and CLI_TESTS, the CLI files run.  A JOBS that is no count
# reached prove as -jabc (read as -j -a -b -c: "TAP::Harness::Archive is
# required") and a CLI_TESTS file that is not there as prove's Perl
# stack trace; both are now refused by the Makefile before anything
# builds, naming the variable and the value given.  The make run here
# stops while reading the Makefile, so it builds and runs nothing.
use strict;
use warnings;
use Test::More;

# The make that runs these tests (make test) passes its own settings to
# a make started inside it: start this one clean.
delete @ENV{qw(MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES)};

sub mk {
    my $out = `make -s @_ 2>&1`;
    return ($? >> 8, $out);
}

for my $j ('abc', '0', '-1', '', '2x') {
    my ($c, $out) = mk('test', "JOBS='$j'");
    is($c, 2, "make test JOBS='$j': refused");
    like($out, qr/\*\*\* make test: JOBS must be a whole number of test files run at once, 1 or more \(got '\Q$j\E'\)/,
         "... naming JOBS and '$j'");
    unlike($out, qr/TAP|prove/, '... before prove runs');
}
my ($c, $out) = mk('test', "CLI_TESTS=''");
is($c, 2, 'make test CLI_TESTS= (no file): refused');
like($out, qr/\*\*\* make test: CLI_TESTS names no file/, '... saying so');
($c, $out) = mk('test', "CLI_TESTS='tests/cli/basic.t tests/cli/no_such.t'");
is($c, 2, 'make test CLI_TESTS naming a missing file: refused');
like($out, qr/\*\*\* make test: CLI_TESTS: no such file: tests\/cli\/no_such\.t\./, '... naming the file');
unlike($out, qr/basic\.t/, '... and only it');
# check, make test's other name, the same
($c, $out) = mk('check', "JOBS=abc");
is($c, 2, 'make check JOBS=abc: refused too');
# The values README shows pass the check (-n: what would run, nothing run).
($c, $out) = mk('-n', 'test', 'JOBS=1', 'CLI_TESTS=tests/cli/basic.t');
is($c, 0, 'make -n test JOBS=1 CLI_TESTS=tests/cli/basic.t: accepted') or diag $out;
like($out, qr/prove -j1 tests\/cli\/basic\.t/, '... prove runs that file one at a time');

done_testing();
