# What a fifth walk (rl, plan's outputs, the guide, the scripts) found: an
# answer that was wrong, silent or malformed.  One block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';
use File::Temp ();

my ($c, $o, $e);

# 1. merge --top above the shards' --top printed a list that was not the
# search's best: each shard keeps only its best max(--top, 2), so the 3rd
# best of the whole search may sit in a shard's dropped tail.  llama3-8b
# pretraining on 16 H100s, 3 shards of --top 1 (each keeps 2): merge
# --top 6 left out the whole search's 3rd best (TP2 DP8 ZeRO-1 SP mb1
# none) and filled in layouts from 7th place down.  Now refused; --top 2
# (what the shards hold) still merges to the plan's own best 2.
{
    my $dir = File::Temp::tempdir(CLEANUP => 1);
    my @job = ('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '16');
    my @files;
    for my $k (1 .. 3) {
        ($c, $o, $e) = run_gp(@job, '--top', '1', '--shard', "$k/3", '--format', 'json');
        is($c, 0, "shard $k/3 runs") or diag $e;
        write_file("$dir/s$k.jsonl", $o);
        push @files, "$dir/s$k.jsonl";
    }
    ($c, $o, $e) = run_gp('merge', @files, '--top', '6');
    is($c, 1, 'merge --top 6 of shards that kept 2: exit 1');
    is($o, '', 'merge --top 6: no list printed');
    like($e, qr/^gpuplan: merge: --top 6 is more than the 2 each shard kept \(the plan's --top 1\)/m,
         'merge --top 6: says what the shards kept') or diag $e;
    my ($c2, $whole) = run_gp(@job, '--top', '2');
    ($c, $o, $e) = run_gp('merge', @files, '--top', '2');
    is($c, 0, 'merge --top 2 (what each shard kept) runs') or diag $e;
    my @w = (split /\n/, $whole)[3, 4];
    my @m = (split /\n/, $o)[3, 4];
    is_deeply(\@m, \@w, 'merge --top 2: the same two layouts as the plan run whole');
}

done_testing();
