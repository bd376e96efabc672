# comm's default --max on a card too small for it.  3840e1b6 refused a
# sweep whose top message cannot fit two nccl-tests buffers on the card;
# with --max not given the top is the default 8 GiB, so on a 16 GB card
# `gpuplan comm --gpu ID` with no size at all was refused ("--max 8GiB
# (the default): ...", and gp.comm's sweep said "max nil").  nccl-tests
# itself runs on, reducing its maxBytes to what fits ("Reducing maxBytes
# to %ld due to memory limitation", src/common.cu), and so does the sweep.
#
# The fixture card's usable memory is 16160MiB = 16,944,988,160 B.
# nccl-tests' bound with its data check off (comm.lua max_message):
# reserve min(ceil(16160 MiB / 16 GiB) GiB, 4 GiB) = 1 GiB, less 1 GiB
# more, halved: (16944988160 - 2 x 1073741824) / 2 = 7,398,752,256 B.
# Sizes double from 8 B: 8 x 2^29 = 4,294,967,296 is the last at or
# under it (8 x 2^30 = 8 GiB is over), so the sweep ends at 4 GiB.
use strict;
use warnings;
use Test::More tests => 12;
require './tests/cli/lib.pl';

local $ENV{GPUPLAN_CATALOG} = 'tests/fixtures/catalog/small_card';
local $ENV{XDG_CONFIG_HOME} = '/nonexistent';
my ($c, $o, $e);

($c, $o, $e) = run_gp(qw(comm --gpu v100-16g-test));
is($c, 0, 'no --max on a 16 GB card: runs') or diag $e;
like($o, qr/^4294967296 +1073741824 .*\n(?!\d)/m, '... its last row is 4 GiB') or diag $o;
unlike($o, qr/^8589934592 /m, '... no 8 GiB row');
like($o, qr/^largest message 4294967296 B, not the default --max 8GiB's 8589934592 B: nccl-tests holds a send and a receive buffer of the largest on each GPU, and two of 8589934592 B do not fit v100-16g-test \(nccl-tests reduces its maxBytes alike\)$/m,
     '... and says why the sweep stops there') or diag $o;

# csv: the rows alone, no sentence among them
($c, $o, $e) = run_gp(qw(comm --gpu v100-16g-test --format csv));
is($c, 0, '--format csv: runs') or diag $e;
unlike($o, qr/largest message/, '... no sentence in the csv');

# A --max given is the user's: past the bound it is refused as before.
($c, $o, $e) = run_gp(qw(comm --gpu v100-16g-test --max 8GiB));
is($c, 1, '--max 8GiB given: exit 1');
like($e, qr/^gpuplan: comm: --max 8GiB: a message of 8589934592 B .* give --max at most 7398752256 B /m,
     '... naming --max and the bound') or diag $e;

# --min past the bound with no --max: the min is what to change.
($c, $o, $e) = run_gp(qw(comm --gpu v100-16g-test --min 8GiB));
is($c, 1, '--min 8GiB alone: exit 1');
like($e, qr/^gpuplan: comm: --min 8GiB: a message of 8589934592 B .* give --min at most 7398752256 B /m,
     '... naming --min, not the --max never given') or diag $e;

# The Lua sweep without max alike: 30 rows, 8 B .. 2^32 B (2^3 .. 2^32).
my $tmp = File::Temp::tempdir(CLEANUP => 1);
my $f = "$tmp/sweep.lua";
open(my $fh, '>', $f) or die; print $fh <<'LUA'; close $fh;
local rows = require("gpuplan.comm").sweep { gpu = "v100-16g-test", op = "all_reduce" }
print(#rows, string.format("%d", rows[#rows].bytes))
LUA
($c, $o, $e) = run_gp('run', $f);
is($c, 0, 'Lua sweep, no max: runs') or diag $e;
is($o, "30\t4294967296\n", '... 30 sizes, the last 4 GiB');
