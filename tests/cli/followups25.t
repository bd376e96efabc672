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

# 6. `gpuplan run missing.lua` said only "cannot open script": the
# system's reason is said (io.open's strerror text).  `catalog check
# FILE` printed "not a directory: FILE" without gpuplan's prefix, which
# every other line of its own carries (a file's error leads with its
# file:line instead, as a compiler's does).
{
    ($c, $o, $e) = run_gp('run', "$tmp/missing.lua");
    is($c, 1, 'run missing.lua: exit 1');
    like($e, qr/^gpuplan: cannot open script '\Q$tmp\E\/missing\.lua': No such file or directory$/m,
         'the reason is said') or diag $e;
    open(my $fh, '>', "$tmp/one.cat") or die; print $fh "x\n"; close $fh;
    mkdir "$tmp/cat"; open($fh, '>', "$tmp/cat/x.lua") or die; print $fh "gpu { id = }\n"; close $fh;
    ($c, $o, $e) = run_gp('catalog', 'check', "$tmp/one.cat");
    is($c, 1, 'catalog check FILE: exit 1');
    my @l = split /\n/, $e;
    is($l[0], "gpuplan: not a directory: $tmp/one.cat", 'its first line has the prefix') or diag $e;
    ($c, $o, $e) = run_gp('catalog', 'check', "$tmp/cat");
    like($e, qr/^\Q$tmp\E\/cat\/x\.lua:1: /m, "a file's error still leads with its file:line") or diag $e;
}

done_testing();
