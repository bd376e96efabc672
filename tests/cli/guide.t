# The default guide: `gpuplan` with no arguments.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my ($c, $o, $e) = run_gp();
is($c, 0, 'gpuplan with no arguments exits 0') or diag $e;
is($e, '', 'nothing on stderr');
like($o, qr/^== The cards/m, 'section: the cards');
like($o, qr/^== Does it fit on one card\?/m, 'section: fit');
like($o, qr/^== One node talking/m, 'section: collectives');
like($o, qr/^== Which card for which job/m, 'section: which card for which job');
# Scenarios A-F, each a row with a recommendation and its runner-up.
my ($quick) = $o =~ /^== Which card for which job.*?\n(.*?)\n\n/ms;
my @sc = grep { /^[A-F] / } split /\n/, $quick;
is(scalar @sc, 7, 'seven rows: A (two), B, C, D, E, F');
for my $row (@sc) {
    my ($name) = $row =~ /^(\S+ [^ ]+ [^ ]+)/;
    unlike($row, qr/nothing fits/, "$name: a card runs it");
    # The runner-up is ranked after the recommendation: it costs more.
    like($row, qr/: \d+% more cost/, "$name: the runner-up costs more");
}
# Outside China (USD, the default) the export variants have no offer to
# rent: they are named, not recommended.
unlike($quick, qr/h800|a800|\bh20\b/, 'USD: no China-market card recommended');
like($o, qr/^  prices: .* no offer there for a800-sxm-80gb, h20, h800-sxm \(China-market cards: --currency CNY\)$/m,
     'USD: the China-market cards are named');
# 7B full fine-tune with AdamW mixed precision: 16 B/param x 6.74e9 = 108 GB
# of model states alone, so it cannot fit an 80 GB A100.
like($o, qr/^7B full FT.*\s+no \+\d+G\s+no \+\d+G/m, '7B full FT does not fit a 4090 or an A100');
# H800's NVLink is 400 GB/s bidirectional = 200 per direction.
like($o, qr/^h800-sxm\s.*\s200\s/m, 'H800 link 200 GB/s per direction');
like($o, qr/^hgx-h800\s+8\s+nvlink4-h800\s/m, 'H800 node row');

($c, $o, $e) = run_gp('run', 'scripts/guide.lua', '--format', 'json');
is($c, 0, 'json guide exits 0');
like($o, qr/^\[\{"columns":\[\{"key":/, 'json guide is one array of sections (each with its columns)');

($c, $o, $e) = run_gp('run', 'scripts/guide.lua', '--currency', 'CNY', '--format', 'csv');
is($c, 0, 'CNY prices');
like($o, qr/CNY\/GPU-h/, 'CNY column');

# --currency CNY: a price quoted in USD is converted and says so; the
# market column names where each price is from.
($c, $o, $e) = run_gp('run', 'scripts/guide.lua', '--currency', 'CNY');
my ($cards) = $o =~ /^== The cards.*?\n(.*?)\n\n/ms;
my @rows = grep { /^[a-z]/ && !/^GPU/ } split /\n/, $cards;
is(scalar @rows, 8, 'eight cards');
my @silent = grep { /\s(us|global|overseas)\s*$/ } @rows;
is(scalar @silent, 0, 'no US/global price shown in CNY without saying it was converted');
like($cards, qr/^h20\s.*\s6\.98\s+cn$/m, 'h20: 6.98 CNY/h from the China market (AutoDL)');
like($cards, qr/^a100-sxm-80gb\s.*\s6\.67\s+us, converted from \$0\.95\/h$/m,
     'a100: the US $0.95/h, converted at 7.0197 and labelled');
like($o, qr/^converted prices: USD to CNY at 7\.0197 CNY\/USD, 2026-01-08 /m, 'the rate and its date');
# A buyer in China ranks China-market prices: the H800 and its kin, and
# the cards without a China-market offer named.
my ($cnq) = $o =~ /^== Which card for which job.*?\n(.*?)\n\n/ms;
like($cnq, qr/^A 7B multimodal SFT.*\sh800-sxm\s/m, 'CNY: H800 recommended for A');
unlike($cnq, qr/b200|h100|h200/, 'CNY: no card without a China-market offer');
like($o, qr/^  prices: the cheapest offer of each card in the cn market, in CNY; no offer there for b200, h100-sxm, h200-sxm$/m,
     'CNY: the market and the cards without an offer');
($c, $o, $e) = run_gp('run', 'scripts/guide.lua', '--currency', 'CNY', '--market', 'cn');
like($o, qr/^a100-sxm-80gb\s.*\s6\.68\s+cn$/m, '--market cn: the AutoDL 6.68 CNY');
like($o, qr/^h100-sxm\s.*\s-\s+-$/m, '--market cn: no China-market H100 price');
($c, $o, $e) = run_gp('run', 'scripts/guide.lua', '--market', 'mars');
is($c, 2, 'an unknown market is a usage error');
like($e, qr/^gpuplan: guide: --market: no price in the catalog is from 'mars' \(markets: cn, global, overseas, us\)$/m,
     'and lists the markets');
# USD (the default): a CNY price is converted the other way, and says so.
($c, $o, $e) = run_gp();
like($o, qr/^h20\s.*\s0\.99\s+cn, converted from 6\.98CNY\/h$/m, 'h20 in USD: 6.98 / 7.0197, labelled');

($c, $o, $e) = run_gp('run', 'scripts/guide.lua', '--currency', 'XYZ');
is($c, 2, 'unknown currency is a usage error');
like($e, qr/^gpuplan: guide: --currency: no exchange rate for 'XYZ'/m, 'currency named');
($c, $o, $e) = run_gp('run', 'scripts/guide.lua', '--format', 'xml');
is($c, 2, 'bad format is a usage error');
($c, $o, $e) = run_gp('run', 'scripts/guide.lua', 'extra');
is($c, 2, 'a stray argument is a usage error');
like($e, qr/unexpected argument 'extra'/, 'the argument is named');
# The help: "Without a command, runs the default guide" and "common
# options: --format ..."; `gpuplan --format markdown` said "unknown command
# '--format'".  Options without a command are the guide's, its errors
# naming it "guide" (not the installed script's path).
{
    my ($cg, $og, $eg) = run_gp('run', 'scripts/guide.lua', '--format', 'markdown', '--currency', 'CNY');
    my ($ct, $ot, $et) = run_gp('--format', 'markdown', '--currency', 'CNY');
    is($ct, 0, 'gpuplan --format markdown --currency CNY: exit 0') or diag $et;
    is($ot, $og, 'the guide with those options');
    ($ct, $ot, $et) = run_gp('--foo');
    is($ct, 2, 'gpuplan --foo: a usage error');
    is($et, "gpuplan: guide: unknown option '--foo'\n", "named as the guide's option, no path");
    ($ct, $ot, $et) = run_gp('--market', 'mars');
    like($et, qr/^gpuplan: guide: --market: no price in the catalog is from 'mars'/m, 'the guide\'s own refusal');
}

done_testing();
