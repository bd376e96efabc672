# What a fifth walk (rl, plan's outputs, the guide, the scripts) found: an
# answer that was wrong, silent or malformed.  One block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';
use File::Temp ();
use JSON::PP ();

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

# 2. scripts/a100_vs_h200.lua --output 1: one output token is the
# prefill's, gp.infer gives no per-user speed (nil), and the script died
# comparing it ("attempt to compare nil with number", a traceback).  Now
# refused naming --output; --output 2 still prints its table.
($c, $o, $e) = run_gp('run', 'scripts/a100_vs_h200.lua', '--output', '1');
is($c, 2, 'a100_vs_h200 --output 1: a usage error');
unlike($e, qr/traceback|attempt to/, 'a100_vs_h200 --output 1: no Lua traceback') or diag $e;
like($e, qr/^gpuplan: a100_vs_h200: --output 1 is the prefill's token alone/m,
     'a100_vs_h200 --output 1: names --output') or diag $e;
($c, $o, $e) = run_gp('run', 'scripts/a100_vs_h200.lua', '--output', '2');
is($c, 0, 'a100_vs_h200 --output 2 runs') or diag $e;
like($o, qr/^llama3\.1-8b\s+1 x h200-sxm fp8\s+\d/m, 'a100_vs_h200 --output 2: a row with a speed');

# 3. scripts/custom_catalog.lua --dir in a missing directory died on an
# assert with a traceback.  Now the error names --dir and the reason.
{
    my $dir = File::Temp::tempdir(CLEANUP => 1);
    ($c, $o, $e) = run_gp('run', 'scripts/custom_catalog.lua', '--dir', "$dir/no/such");
    is($c, 1, 'custom_catalog --dir under a missing directory: exit 1');
    unlike($e, qr/traceback/, 'custom_catalog --dir: no traceback') or diag $e;
    like($e, qr/^gpuplan: custom_catalog: --dir '\Q$dir\E\/no\/such': cannot make the directory: /m,
         'custom_catalog --dir: names --dir') or diag $e;
}

# 4. rl --rollout-gpus auto held 0.5 GiB less per GPU than the same split
# given: the trainer's config was read for one replica (tp*pp*cp = 1 GPU),
# whose reserve has no NCCL buffers (engine/memory.c: 0.5 GiB with more
# than one GPU), and the split search kept it.  llama3-8b GRPO, ZeRO-3, 16
# H100s: auto picks rollout 8 + training 8; before, its peak was 30.4 GiB
# against 30.9 GiB for --rollout-gpus 8 (every phase 0.5 GiB apart).  Now
# the JSON of the two is the same but for nothing: peak, phases, KV budget.
{
    my @job = ('rl', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '16', '--zero', '3',
               '--format', 'json');
    my ($ca, $auto, $ea) = run_gp(@job, '--rollout-gpus', 'auto');
    my ($cg, $given, $eg) = run_gp(@job, '--rollout-gpus', '8');
    is($ca, 0, 'rl --rollout-gpus auto runs') or diag $ea;
    is($cg, 0, 'rl --rollout-gpus 8 runs') or diag $eg;
    my ($a, $g) = (JSON::PP::decode_json($auto), JSON::PP::decode_json($given));
    like(join(' ', map { "$_->{pool}:$_->{gpus}" } @{ $a->{phases} }), qr/^rollout:8 train:8/,
         'auto picks rollout 8 + training 8');
    # exact: the same split through the same engine code, so the same
    # double; the 0.5 GiB it was off is 536870912 bytes
    is($a->{peak_memory}, $g->{peak_memory}, 'auto: the peak memory of the split given');
    is(join(',', map { $_->{mem_bytes} } @{ $a->{phases} }),
       join(',', map { $_->{mem_bytes} } @{ $g->{phases} }), 'auto: every phase\'s memory too');
}

# 5. plan --svg with an empty BASE ('' or '.svg', whose .svg is dropped)
# or a directory ('DIR/') wrote '-pareto.svg', '-memory.svg' and
# '-step.svg' (or DIR/-pareto.svg ...) and said nothing.  Now refused
# before the search; a named BASE still writes its three files.
{
    my $dir = File::Temp::tempdir(CLEANUP => 1);
    for my $base ('', '.svg', "$dir/") {
        ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--svg', $base);
        is($c, 2, "plan --svg '$base': a usage error");
        like($e, qr/^gpuplan: plan: --svg '\Q$base\E': BASE is the start of the files' names/m,
             "plan --svg '$base': names --svg") or diag $e;
    }
    ok(!-e "-pareto.svg" && !-e "$dir/-pareto.svg", 'no -pareto.svg written');
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--svg', "$dir/p.svg");
    is($c, 0, 'plan --svg DIR/p.svg runs') or diag $e;
    ok(-s "$dir/p-pareto.svg" && -s "$dir/p-memory.svg" && -s "$dir/p-step.svg",
       'plan --svg DIR/p.svg: its three files');
}

done_testing();
