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
like($o, qr/^== Serving/m, 'section: serving');
# 7B full fine-tune with AdamW mixed precision: 16 B/param x 6.74e9 = 108 GB
# of model states alone, so it cannot fit an 80 GB A100.
like($o, qr/^7B full FT.*\s+no \+\d+G\s+no \+\d+G/m, '7B full FT does not fit a 4090 or an A100');
# H800's NVLink is 400 GB/s bidirectional = 200 per direction.
like($o, qr/^h800-sxm\s.*\s200\s/m, 'H800 link 200 GB/s per direction');
like($o, qr/^hgx-h800\s+8\s+nvlink4-h800\s/m, 'H800 node row');

($c, $o, $e) = run_gp('run', 'scripts/guide.lua', '--format', 'json');
is($c, 0, 'json guide exits 0');
like($o, qr/^\[\{"rows":\[/, 'json guide is one array of sections');

($c, $o, $e) = run_gp('run', 'scripts/guide.lua', '--currency', 'CNY', '--format', 'csv');
is($c, 0, 'CNY prices');
like($o, qr/CNY\/GPU-h/, 'CNY column');

($c, $o, $e) = run_gp('run', 'scripts/guide.lua', '--currency', 'XYZ');
is($c, 2, 'unknown currency is a usage error');
like($e, qr/^gpuplan: guide: --currency: no exchange rate for 'XYZ'/m, 'currency named');
($c, $o, $e) = run_gp('run', 'scripts/guide.lua', '--format', 'xml');
is($c, 2, 'bad format is a usage error');
($c, $o, $e) = run_gp('run', 'scripts/guide.lua', 'extra');
is($c, 2, 'a stray argument is a usage error');
like($e, qr/unexpected argument 'extra'/, 'the argument is named');
done_testing();
