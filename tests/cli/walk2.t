# What a second hardening walk (the machine-readable outputs a script or
# notebook consumes: --format json/csv and the Lua API) found: a value a
# script could not use as it is.  One block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';
use JSON::PP ();

my ($c, $o, $e);

# 1. guide --format json gave each card's price as a string ("0.95", the
# text's cell, with the guide mark "*" glued on), and no section said what
# unit a key is in (hbm, link, price: the text's column headers say it,
# the JSON dropped them).  Now a price is a number, the mark is
# price_guide, and each section carries its columns' labels.
{
    ($c, $o, $e) = run_gp('guide', '--format', 'json');
    is($c, 0, 'guide --format json: exit 0') or diag $e;
    my $d = eval { JSON::PP::decode_json($o) };
    ok($d, 'guide --format json parses') or diag $@;
    my $cards = $d->[0];
    my ($h100) = grep { $_->{gpu} eq 'h100-sxm' } @{$cards->{rows}};
    ok($h100, 'the cards section has h100-sxm');
    # a JSON number decodes to a scalar without the string flag: its
    # JSON::PP re-encoding has no quotes
    like(JSON::PP->new->canonical->encode([$h100->{price}]), qr/^\[[0-9.]+\]$/,
         'guide json: price is a number, not a string');
    my %label = map { $_->{key} => $_->{label} } @{$cards->{columns} || []};
    is($label{price}, 'USD/GPU-h', 'guide json: the price column states its unit');
    is($label{hbm}, 'HBM TB/s', 'guide json: the hbm column states its unit');
    # the text still shows the same two decimals
    ($c, $o, $e) = run_gp('guide');
    like($o, qr/^h100-sxm\s.*\s\d+\.\d\d\s+\S/m, 'guide text: price with two decimals');
}

done_testing();
