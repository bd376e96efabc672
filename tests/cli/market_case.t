# --market in either case reaches a price region of either case.  b1ea14c6
# lower-cased the name given, which served the catalog's own regions (cn,
# us) but left a user catalog's "EU" unreachable: --market EU and --market
# eu both said "no price in the catalog is from it (markets: EU, cn, ...)".
# The price a region spelt EU quotes, 3 USD/h, is the fixture's own.
use strict;
use warnings;
use Test::More tests => 10;
require './tests/cli/lib.pl';

my $F = 'tests/fixtures/catalog/region_case';
local $ENV{GPUPLAN_CATALOG} = $F;
local $ENV{XDG_CONFIG_HOME} = '/nonexistent';
my @job = ('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8');
for my $m ('EU', 'eu') {
    my ($rc, $out, $err) = run_gp(@job, '--market', $m);
    is($rc, 0, "--market $m: runs") or diag $err;
    like($out, qr{price=3\.00 USD/GPU-h \(h100-sxm/acme/eu, EU\)},
         "--market $m: the EU region's price");
}
# The catalog's own lower-case regions stay reachable in upper case.
my ($rc, $out, $err) = run_gp(@job, '--market', 'US');
is($rc, 0, '--market US: runs') or diag $err;
like($out, qr{price=[\d.]+ USD/GPU-h \(h100-sxm/[^,]+, us\)}, '--market US: a us price');
# An unknown market is still refused, by the name given.
($rc, $out, $err) = run_gp(@job, '--market', 'XX');
is($rc, 1, '--market XX: exit 1');
like($err, qr/--market 'XX': no price in the catalog is from it \(markets: EU, cn, global, overseas, us\)/,
     '--market XX: names it and the markets');
# The guide script reads --market by the same rule.
($rc, $out, $err) = run_gp('run', 'scripts/guide.lua', '--market', 'eu');
is($rc, 0, 'guide --market eu: runs') or diag $err;
like($out, qr/^h100-sxm .* 3\.00  EU\s*$/m, 'guide --market eu: the EU price of h100-sxm');
