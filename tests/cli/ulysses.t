# --ulysses N on the command line (its prices in tests/lua/ulysses.t):
# the flag on train, rl and fit, the layout it prints, its refusals and
# their exit codes (usage 2, a rule of the model's heads 1).
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my @train = ('train', 'llama3-8b', '--gpu', 'h100-sxm', '--stack', 'hf', '--fsdp', 'full_shard',
             '--seq', '8192');

# 8 GPUs over groups of 4: dp = 8 / 4 = 2, the group named on the title
{
    my ($c, $o, $e) = run_gp(@train, '--gpus', '8', '--ulysses', '4');
    is($c, 0, 'train --ulysses 4: exit 0');
    like($o, qr/\(tp 1, pp 1, dp 2, ulysses 4, fsdp full_shard/, 'title: dp 2, ulysses 4');
    like($o, qr/^cp_comm\s/m, 'its all-to-alls are a step part');
}
# rl: the actor's layout the same
{
    my ($c, $o) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--ulysses', '4',
                         '--fsdp', 'full_shard');
    is($c, 0, 'rl --ulysses 4: exit 0');
    like($o, qr/\(train tp 1, pp 1, dp 2, ulysses 4, fsdp full_shard/, 'rl title: dp 2, ulysses 4');
}
# fit takes it (the memory of the same layout), and its title names the
# split after dp as train's does: ulysses N, or cp N, nothing without one
{
    my ($c, $o) = run_gp('fit', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--ulysses', '4',
                     '--seq', '8192');
    is($c, 0, 'fit --ulysses 4: exit 0');
    like($o, qr/^llama3-8b on h100-sxm x8, method full \(dp 2, ulysses 4\)$/m,
         'fit title: dp 2, ulysses 4');
    ($c, $o) = run_gp('fit', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '16', '--cp', '2',
                      '--tp', '2');
    is($c, 0, 'fit --cp 2: exit 0');
    like($o, qr/^llama3-8b on h100-sxm x16, method full \(dp 4, cp 2\)$/m, 'fit title: dp 4, cp 2');
    ($c, $o) = run_gp('fit', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '16');
    like($o, qr/^llama3-8b on h100-sxm x16, method full \(dp 16\)$/m, 'fit title: dp alone');
}
# --help of train and rl lists it
for my $cmd ('train', 'rl') {
    my ($c, $o) = run_gp($cmd, '--help');
    like($o, qr/--ulysses N\s+DeepSpeed-Ulysses sequence parallelism/, "$cmd --help: --ulysses");
}

# Refusals: the GPUs not a whole number of groups, ulysses beside cp or
# cp-rotate: usage errors, exit 2; heads the group does not divide: exit 1.
my @bad = (
    [['--gpus', '6', '--ulysses', '4'], 2, qr/^gpuplan: train: --gpus 6 is not a multiple of tp\*pp\*ulysses = 4$/m],
    [['--gpus', '8', '--ulysses', '2', '--cp', '2'], 2, qr/^gpuplan: train: --ulysses 2 and --cp 2: /m],
    [['--gpus', '8', '--ulysses', '2', '--cp-rotate', 'allgather'], 2, qr/^gpuplan: train: --cp-rotate moves a CP ring's K and V; --ulysses 2 /m],
    [['--gpus', '8', '--ulysses', 'x'], 2, qr/--ulysses/],
    [['--gpus', '8', '--ulysses', '0'], 1, qr/^gpuplan: train: --ulysses must be a whole number/m],
);
for my $b (@bad) {
    my ($c, $o, $e) = run_gp(@train, @{$b->[0]});
    is($c, $b->[1], "@{$b->[0]}: exit $b->[1]");
    like($e, $b->[2], "@{$b->[0]}: names the flags");
}
# qwen2.5-7b: 28 heads, 4 kv heads
{
    my ($c, $o, $e) = run_gp('train', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '8',
                             '--ulysses', '8');
    is($c, 1, 'ulysses 8 over 28 heads: exit 1');
    like($e, qr/^gpuplan: train: --ulysses 8 must divide the 28 attention heads/m, '... says so');
    ($c, $o, $e) = run_gp('train', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '7',
                          '--ulysses', '7');
    is($c, 1, 'ulysses 7 against 4 kv heads: exit 1');
    like($e, qr/--ulysses 7 and the 4 kv heads: one must divide the other/, '... says so');
    ($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '8',
                          '--ulysses', '8');
    is($c, 1, 'rl: ulysses 8 over 28 heads: exit 1');
    like($e, qr/^gpuplan: rl: --ulysses 8 must divide the 28 attention heads/m, 'rl: says so');
    ($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '6',
                          '--ulysses', '4');
    is($c, 2, 'rl: gpus 6 at ulysses 4: exit 2');
    like($e, qr/--gpus 6 is not a multiple of tp\*pp\*ulysses = 4/, 'rl: says so');
}
# unfused attention: verl's Ulysses patches the flash-attention forward
# alone; --no-flash given is a usage error
{
    my ($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8',
                             '--ulysses', '2', '--no-flash');
    is($c, 2, 'ulysses with --no-flash: exit 2');
    like($e, qr/^gpuplan: train: --ulysses 2 is verl's replacement of the flash-attention forward .* unfused \(--no-flash\)/m,
         '... names both flags') or diag $e;
}
# plan searches Ulysses groups with --ulysses-max (engine/sweep.c
# ok_ulysses); a group is searched, not given: --ulysses is not plan's
{
    my ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--ulysses', '4');
    is($c, 2, 'plan --ulysses: exit 2');
}
# llama3-8b at 64k tokens on 16 H100s, FSDP: the fastest layout is a
# Ulysses group of 8 (tests/lua/sweep_ulysses.t: gp.train's step), shown
# where CP would be; --ulysses-max 0 and text refused as --cp-max's are.
my @plan = ('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '16', '--seq', '65536',
            '--stack', 'hf', '--fsdp', 'full_shard', '--ulysses-max', '16');
{
    my ($c, $o, $e) = run_gp(@plan, '--top', '3');
    is($c, 0, 'plan --ulysses-max 16: exit 0');
    like($o, qr/^h100-sxm\s+16\s+TP1 U8 DP2 full_shard mb1 none\s+82\.61 /m, 'TP1 U8 DP2 first, 82.61 s');
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '16', '--ulysses-max', '0');
    is($c, 1, '--ulysses-max 0: exit 1');
    like($e, qr/^gpuplan: plan: --ulysses-max must be a whole number 1\.\.16777216 \(got 0\)$/m, '... names the flag');
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '16', '--ulysses-max', 'x');
    is($c, 2, '--ulysses-max x: exit 2');
    ($c, $o) = run_gp('plan', '--help');
    like($o, qr/--ulysses-max N\s+the largest DeepSpeed-Ulysses group to try/, 'plan --help: --ulysses-max');
}
# Shards of the search merge to its answer (merge checks tp x pp x cp x
# ulysses x dp = gpus of each result line)
{
    my $dir = File::Temp::tempdir(CLEANUP => 1);
    for my $k (1 .. 2) {
        my ($c, $o, $e) = run_gp(@plan, '--top', '3', '--format', 'json', '--shard', "$k/2");
        is($c, 0, "shard $k/2: exit 0");
        open(my $fh, '>', "$dir/s$k.jsonl") or die; print $fh $o; close $fh;
    }
    my ($c, $o, $e) = run_gp('merge', "$dir/s1.jsonl", "$dir/s2.jsonl");
    is($c, 0, 'merge: exit 0') or diag $e;
    like($o, qr/^h100-sxm\s+16\s+TP1 U8 DP2 full_shard mb1 none\s+82\.61 /m, 'merged: TP1 U8 DP2 first');
}

# Megatron-Core's Ulysses is Transformer Engine's a2a CP, not priced: the
# refusal names the user's flags and offers --cp; verl's FSDP workers run
# no pipeline: --ulysses beside --pp on --stack hf refused naming both
# (gpuplan.memory ulysses_refusal; tests/lua/ulysses_stack.t)
{
    my ($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8',
        '--stack', 'megatron', '--ulysses', '2');
    is($c, 2, 'train --stack megatron --ulysses 2: exit 2');
    like($e, qr/^gpuplan: train: --ulysses 2 with --stack megatron: .*give --cp 2 \(the p2p ring\), or --stack hf or --stack deepspeed/m,
        '... names --ulysses and --stack, offers --cp 2');
    ($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8',
        '--stack', 'hf', '--ulysses', '2', '--pp', '2');
    is($c, 2, 'train --stack hf --ulysses 2 --pp 2: exit 2');
    like($e, qr/^gpuplan: train: --ulysses 2 with --pp 2 and --stack hf: verl's Ulysses runs on its FSDP workers/m,
        '... names --ulysses, --pp and --stack');
    # nor TP beside Ulysses there (verl's mesh is dp x sp alone), and
    # DeepSpeed's pipeline grid has no sequence axis
    ($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8',
        '--stack', 'hf', '--tp', '2', '--ulysses', '2');
    is($c, 2, 'train --stack hf --tp 2 --ulysses 2: exit 2');
    like($e, qr/^gpuplan: train: --ulysses 2 with --tp 2 and --stack hf: verl's Ulysses runs on its FSDP workers, .*with no tensor parallelism; give --tp 1 or --ulysses 1$/m,
        '... names --ulysses, --tp and --stack');
    ($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8',
        '--stack', 'deepspeed', '--pp', '2', '--ulysses', '2');
    is($c, 2, 'train --stack deepspeed --pp 2 --ulysses 2: exit 2');
    like($e, qr/^gpuplan: train: --ulysses 2 with --pp 2 and --stack deepspeed: DeepSpeed's pipeline engine .*give --pp 1 or --ulysses 1$/m,
        '... names --ulysses, --pp and --stack');
}

# plan's defaults line names options by their flags, as its errors do
# (gpuplan.options flags_named): it read "ulysses_max 4 not searched ...
# on stack megatron", Lua keys the command line does not take; gp.sweep's
# defaults keep the Lua keys.
{
    my ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8',
        '--ulysses-max', '4', '--top', '1');
    is($c, 0, 'plan --ulysses-max 4 on stack megatron: exit 0') or diag $e;
    like($o, qr/^defaults: .*\(--ulysses-max 4 not searched: .* train refuses on --stack megatron\)(, [^(]*\([^)]*\))*$/m,
        '... the defaults line names --ulysses-max and --stack');
    unlike($o, qr/ulysses_max|on stack /, '... no Lua key');
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8',
        '--ulysses-max', '4', '--stack', 'hf', '--no-flash', '--top', '1');
    like($o, qr/\(--ulysses-max 4 not searched: .*unfused on --stack hf, which train refuses\)/,
        '... and on stack hf without flash attention');
}

done_testing();
