# Items earlier helpers left (followups25): one block a fix.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
require './tests/cli/lib.pl';

my ($c, $o, $e);
my $tmp = tempdir(CLEANUP => 1);

# 5. A list option read "0x8" as 8 (Lua's tonumber takes hexadecimal)
# where --batch 0x10 was a usage error: every count typed is decimal,
# so a hexadecimal list entry is refused the same way (exit 2).
{
    ($c, $o, $e) = run_gp(qw(train llama3-8b --gpu h100-sxm --gpus 8 --batch 0x10));
    is($c, 2, 'train --batch 0x10: a usage error');
    for my $bad (['--gpus', '0x8'], ['--gpus', '8,0x10'], ['--micro-batch', '1,0x2']) {
        ($c, $o, $e) = run_gp(qw(plan llama3-8b --gpu h100-sxm), ($bad->[0] eq '--gpus' ? () : qw(--gpus 8)), @$bad);
        is($c, 2, "plan $bad->[0] $bad->[1]: a usage error, as --batch 0x10 is") or diag $o;
        like($e, qr/^gpuplan: plan: \Q$bad->[0]\E.*'\Q$bad->[1]\E'/m, 'naming the option and its value') or diag $e;
    }
    ($c, $o, $e) = run_gp(qw(comm --gpu h100-sxm --max 0x10));
    is($c, 2, 'comm --max 0x10: a usage error') or diag $e;
    ($c, $o, $e) = run_gp(qw(plan llama3-8b --gpu h100-sxm --gpus 8,16 --top 1));
    is($c, 0, 'plan --gpus 8,16 (decimal) still reads') or diag $e;
}

done_testing();
