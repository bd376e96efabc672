# followups8: hardening follow-ups.  One block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';
use JSON::PP ();
use File::Temp ();

my ($c, $o, $e);
my $dir = File::Temp::tempdir(CLEANUP => 1);

# 1. A dense model's `infer --target` table had no TTFT column, where the
# MoE table has "TTFT ms" (text) and ttft_s (csv/json).  It has both now,
# and the value is gp.infer_plan's ttft_s for the same job: one replica's
# TTFT at the chosen batch (the same engine call, so equal up to the
# printed digits: 1e-12 relative).
{
    ($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--target', '5000');
    is($c, 0, 'dense --target: runs') or diag $e;
    like($o, qr/^target tok\/s\s+ITL limit ms\s+GPUs\s+replica\s+batch\/replica\s+tok\/s\s+ITL ms\s+TTFT ms\s+cost\/Mtok$/m,
         'dense --target text: a TTFT ms column, after ITL ms as in the MoE table') or diag $o;
    ($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--target', '5000', '--format', 'json');
    my $row = (eval { JSON::PP::decode_json($o) } || [{}])->[0];
    my $lua = "$dir/ttft.lua";
    write_file($lua, <<'LUA');
local gp = require "gpuplan"
local p = gp.infer_plan{ model = "llama3-8b", gpu = "h100-sxm", target = 5000 }
print(string.format("%.17g", p.ttft_s))
LUA
    ($c, my $lo, $e) = run_gp('run', $lua);
    is($c, 0, 'gp.infer_plan runs') or diag $e;
    ok(defined $row->{ttft_s} && $row->{ttft_s} > 0, 'dense --target json: ttft_s, a positive time')
        or diag $o;
    ok(defined $row->{ttft_s} && abs($row->{ttft_s} / $lo - 1) < 1e-12,
       "dense --target json: ttft_s is gp.infer_plan's ($lo)") or diag $o;
}

# 3. plan --format json --top 1 wrote two "result" lines (docs/plan.md:
# "no more results than --top"): merge needs each shard's second best for
# its runner-up line.  Now the result lines are --top's, and --top 1's
# second best is a line of kind runner_up; merging two --top 1 shards
# still gives the whole search's table and runner-up line.
{
    my @job = ('plan', 'llama2-7b', '--gpu', 'h100-sxm', '--gpus', '8');
    ($c, $o, $e) = run_gp(@job, '--top', '1', '--format', 'json');
    is($c, 0, 'plan --top 1 json: runs') or diag $e;
    # the line's own kind (a result's nested train record has one too)
    my @kinds = map { (JSON::PP::decode_json($_) // {})->{kind} // '?' } split /\n/, $o;
    is_deeply(\@kinds, ['plan', 'result', 'runner_up'], '--top 1: the plan, one result, its runner-up')
        or diag $o;
    ($c, $o, $e) = run_gp(@job, '--top', '3', '--format', 'json');
    @kinds = map { (JSON::PP::decode_json($_) // {})->{kind} // '?' } split /\n/, $o;
    is_deeply(\@kinds, ['plan', ('result') x 3], '--top 3: three results, no runner_up line') or diag $o;
    my @files;
    for my $k (1, 2) {
        ($c, $o, $e) = run_gp(@job, '--top', '1', '--shard', "$k/2", '--format', 'json');
        write_file("$dir/s$k.jsonl", $o);
        push @files, "$dir/s$k.jsonl";
    }
    my ($cw, $whole) = run_gp(@job, '--top', '1');
    ($c, $o, $e) = run_gp('merge', @files);
    is($c, 0, 'merge of two --top 1 shards runs') or diag $e;
    my ($wr) = $whole =~ /^(runner-up .*)$/m;
    my ($mr) = $o =~ /^(runner-up .*)$/m;
    ok(defined $wr, 'the whole search names its runner-up') or diag $whole;
    is($mr, $wr, 'the merge names the same runner-up, in the same words') or diag $o;
    is((split /\n/, $o)[3], (split /\n/, $whole)[3], 'and the same best layout');
    ($c, $o, $e) = run_gp('merge', @files, '--format', 'json');
    @kinds = map { (JSON::PP::decode_json($_) // {})->{kind} // '?' } split /\n/, $o;
    is_deeply(\@kinds, ['plan', 'result', 'runner_up'], "merge's JSON: the same lines as plan's");
    # a runner_up line in a --top 5 shard is not one plan writes
    ($c, $o, $e) = run_gp(@job, '--format', 'json');
    my @l = split /\n/, $o;
    (my $ru = $l[-1]) =~ s/"kind":"result"(?!.*"kind":"result")/"kind":"runner_up"/;
    write_file("$dir/bad.jsonl", join("\n", @l[0 .. $#l - 1], $ru) . "\n");
    ($c, $o, $e) = run_gp('merge', "$dir/bad.jsonl");
    is($c, 1, 'a runner_up line in a --top 5 shard: refused');
    like($e, qr/bad\.jsonl:\d+: a runner_up line is a --top 1 shard's second best/, '... named') or diag $e;
}

# 4. The runner-up line named the part whose share grew most even when
# no share grew as shown: llama2-13b on 64 x h100-sxm/h800-sxm said "its
# dp_comm is 0% of the step against 0%".  Now it names a part only where
# the shown percentages differ (and the runner-up's is the larger), and
# otherwise ends after the time and cost.  TP 1 keeps the h800 twin of the
# best layout the runner-up (with Megatron's 1F1B sends exposed, TP 2 SP on
# h100 is faster than both PP 2 layouts, and the PP 2 runner-up's bubble
# differs from the best's as shown).
{
    ($c, $o, $e) = run_gp('plan', 'llama2-13b', '--gpu', 'h100-sxm,h800-sxm', '--gpus', '64',
                          '--tp-max', '1');
    is($c, 0, 'llama2-13b on h100/h800: runs') or diag $e;
    my ($line) = $o =~ /^(runner-up .*)$/m;
    # Since the 1F1B parameter-gather chain (overlap_param_gather without
    # interleaving) the h800's slower gathers show as 1% of its step against
    # 0%: a part may be named, but only one whose shown shares differ.
    like($line // '', qr/^runner-up h800-sxm x 64 \(.*\): [\d.]+% more time per token(?:; its \w+ is \d+% of the step against \d+%)?$/,
         'the runner-up line: the time, then at most one part') or diag $o;
    my ($mine, $best) = ($line // '') =~ /its \w+ is (\d+)% of the step against (\d+)%$/;
    ok(!defined $mine || $mine > $best, 'no part named where none differs as shown') or diag $line;
    for my $job (['llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8'],
                 ['llama3-70b', '--gpu', 'h100-sxm', '--gpus', '64']) {
        ($c, $o, $e) = run_gp('plan', @$job);
        my ($x, $y) = $o =~ /^runner-up .*; its \S+ is (\d+)% of the step against (\d+)%$/m;
        ok(defined $x && $x > $y, "$job->[0]: a part still named where it differs ($x% > $y%)")
            or diag $o;
    }
}

done_testing();
