# Claims in the README's prose that the fenced examples do not show, each
# recomputed from what it describes: the packages `make deps` installs,
# the conversion rate the prices quote, and the serving example's figures
# without the prefix cache.  A change to any of them fails here until the
# sentence is edited.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

open my $fh, '<', 'README.md' or die "README.md: $!";
my $readme = do { local $/; <$fh> };
close $fh;
(my $flat = $readme) =~ s/\s+/ /g;

# 1. "`make deps` installs the Debian packages with apt-get when any is
# missing: PKG ..." -- the Makefile's DEPS, in its order.
open my $mk, '<', 'Makefile' or die "Makefile: $!";
my $makefile = do { local $/; <$mk> };
close $mk;
my ($deps) = $makefile =~ /^DEPS\s*:=\s*((?:.*\\\n)*.*)$/m;
$deps =~ s/\\\n/ /g;
$deps = join ' ', split ' ', $deps;
my ($said) = $flat =~ /with apt-get when any is missing: ([^)]*)\)/;
is($said, $deps, "README: make deps installs the Makefile's DEPS");

# 2. The conversion rate a converted price quotes ("the PBOC central
# parity (7.0197 CNY/USD, 2026-01-08)") is the catalog's.
my ($c, $o, $e);
my $lua = 'local c = require("gpuplan").catalog{dirs = {"catalog"}}.currencies.CNY '
        . 'io.write(string.format("%.4f CNY/USD, %s", c.per_usd, c.date))';
{
    my ($lf, $lp) = File::Temp::tempfile(SUFFIX => '.lua', UNLINK => 1);
    print $lf $lua;
    close $lf;
    ($c, $o, $e) = run_gp('run', $lp);
}
is($c, 0, 'the catalog\'s CNY rate reads') or diag $e;
ok(index($flat, "central parity ($o)") >= 0, "README: the rate is the catalog's ($o)");

# 3. The prefix-cache example: "one prompt's TTFT falls from T ms (L ms
# under load: ...) and the tokens/s rise from N without it" -- the same
# command without --prefix-hit.
my ($ttft, $load, $tps) = $flat =~ /one prompt's TTFT falls from ([\d.]+) ms \(([\d.]+) ms under load:[^)]*\) and the tokens\/s rise from (\d+) without it/;
ok(defined $ttft, 'README: the prefix-cache paragraph states the figures without it');
($c, $o, $e) = run_gp('infer', 'llama3.1-8b', '--gpu', 'h100-sxm', '--runtime', 'vllm',
                      '--input', '2048', '--output', '256');
is($c, 0, 'the serving example without --prefix-hit runs') or diag $e;
my ($t0) = $o =~ /^TTFT \(one prompt\)\s+([\d.]+) ms/m;
my ($l0) = $o =~ /^TTFT \(under load\)\s+([\d.]+) ms/m;
my ($n0) = $o =~ /^tokens\/s system\s+(\d+)/m;
is($ttft, $t0, 'README: one prompt\'s TTFT without the prefix cache is the command\'s');
is($load, $l0, 'README: the TTFT under load without the prefix cache is the command\'s');
is($tps, $n0, 'README: the tokens/s without the prefix cache are the command\'s');

done_testing();
