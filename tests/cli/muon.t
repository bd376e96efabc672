# --optimizer muon (catalog/recipes.lua): Muon's states and its step, on
# the CLI; gp.memory's figures are tests/lua/memory.t's, the Newton-Schulz
# FLOPs of one matrix tests/c/t_memory.c's.
use strict;
use warnings;
use Test::More;
use JSON::PP;
require './tests/cli/lib.pl';

local $ENV{XDG_CONFIG_HOME} = '/nonexistent';

sub comp { my ($d, $k) = @_; for (@{$d->{components}}) { return $_->{bytes} if $_->{name} eq $k } undef }
sub part { my ($d, $k) = @_; for (@{$d->{parts}}) { return $_->{seconds} if $_->{name} eq $k } undef }

# llama2-7b: P = 6,738,415,616 parameters; of them the embedding and the
# output layer 2 x 32000 x 4096 = 262,144,000 and the norms 65 x 4096 =
# 266,240 (32 layers' two and the final one): S = 262,410,240.  Muon in
# mixed-16's fp32 states on one GPU: 4 B (momentum) x P + 4 B more (Adam's
# second state) x S = 4 x 7,000,825,856 = 28,003,303,424 B, exact.
my $P = 6738415616;
my $S = 262410240;
my ($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'h100-sxm', '--optimizer', 'muon',
                         '--format', 'json');
is($c, 0, 'fit --optimizer muon') or diag $e;
my $d = decode_json($o);
is(comp($d, 'optimizer'), 4 * ($P + $S), "Muon: 4 B/param, Adam's 8 on the embedding, output and norms");
is(comp($d, 'master'), 4 * $P, 'the master is the recipe\'s 4 B/param');
($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'h100-sxm', '--optimizer', 'muon');
like($o, qr/^model states: 12\.0 B\/param before sharding \(weights 2 \+ grads 2 \+ master 4 \+ optimizer 4 \(8 on the embedding, output layer and norms\); recipe mixed-16\)/m,
     'the states line names the AdamW share');

# train over 8 GPUs at ZeRO 0 on the megatron stack: dist_muon's
# layer-wise sharding puts the master and the states of 1/8 of the
# parameters on each rank, and all-gathers the updated bf16 parameters
# after the step.  (The hf and deepspeed stacks step it whole at ZeRO 0:
# tests/lua/muon_stacks.t.)
($c, $o, $e) = run_gp('train', 'llama2-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--stack', 'megatron',
                      '--optimizer', 'muon', '--format', 'json');
is($c, 0, 'train --optimizer muon over 8 GPUs') or diag $e;
$d = decode_json($o);
is($d->{zero}, 0, 'ZeRO 0');
is(comp($d->{memory}, 'optimizer'), 4 * ($P + $S) / 8, 'states sharded over DP 8 at ZeRO 0');
is(comp($d->{memory}, 'master'), 4 * $P / 8, 'master sharded over DP 8 at ZeRO 0');
ok(part($d, 'zero_gather') > 0, 'the updated parameters all-gathered');
# Newton-Schulz (mem_ns_flops, 5 steps, s the smaller dimension:
# 5 x 2 (2 s^2 l + s^3)) a layer: q, k, v and o 4096 x 4096 each
# (muon_split_qkv), 30 x 4096^3 = 2,061,584,302,080 each; fc1 22016 x
# 4096 (gate and up fused) 8,074,538,516,480; fc2 4096 x 11008
# 4,380,866,641,920: 20,701,742,366,720 a layer, x 32 layers / 8 ranks
# = 82,806,969,466,880 FLOP a rank, 0.0837 s at the H100's 989 TFLOP/s
# bf16 peak: the optimizer part is at least that.  At most twice that
# (the GEMMs at half the peak or better: 4096-wide bf16 GEMMs) plus
# 0.05 s for the sharded momentum/Adam pass and the gradient buffer
# (memory-bound, about 30 B a parameter at 3.35 TB/s: 0.06 s unsharded).
my $ns = 82806969466880 / 989e12;
($c, $o, $e) = run_gp('train', 'llama2-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--stack', 'megatron',
                      '--optimizer', 'adamw', '--format', 'json');
my $da = decode_json($o);
my $t = part($d, 'optimizer');
ok($t >= $ns && $t <= 2 * $ns + 0.05, "optimizer step $t s holds the Newton-Schulz GEMMs (>= $ns s)");
ok(part($da, 'zero_gather') == 0, 'AdamW at ZeRO 0: no parameter gather');

# An unknown optimizer is refused naming the input and the nearest one.
($c, $o, $e) = run_gp('train', 'llama2-7b', '--gpu', 'h100-sxm', '--optimizer', 'muonn');
is($c, 2, 'an unknown optimizer is a usage error: exit 2');
like($e, qr/--optimizer: unknown optimizer 'muonn' \(did you mean muon\?\)/, 'unknown optimizer named, muon suggested');

# Megatron-Core's Muon refuses the distributed optimizer (muon.py: "muon with
# dist optimizer is not supported."): on stack megatron a ZeRO stage is a
# usage error naming both flags, in train, fit and plan; zero 0 is priced.
for my $cmd (['train', '--gpus', '8'], ['fit', '--gpus', '8'], ['plan', '--gpus', '8']) {
    ($c, $o, $e) = run_gp($cmd->[0], 'llama2-7b', '--gpu', 'h100-sxm', @$cmd[1 .. 2],
                          '--method', 'pretrain', '--stack', 'megatron', '--optimizer', 'muon',
                          '--zero', '1');
    is($c, 2, "$cmd->[0]: muon at --zero 1 on megatron is a usage error");
    like($e, qr/--optimizer muon with --zero 1 on stack megatron: Megatron-Core's Muon refuses the distributed optimizer/,
         "$cmd->[0]: the refusal names --optimizer and --zero");
}
($c, $o, $e) = run_gp('train', 'llama2-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--method', 'pretrain',
                      '--stack', 'megatron', '--optimizer', 'muon', '--zero', '0');
is($c, 0, 'muon at --zero 0 on megatron is priced');
($c, $o, $e) = run_gp('train', 'llama2-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--method', 'pretrain',
                      '--stack', 'deepspeed', '--optimizer', 'muon', '--zero', '1');
is($c, 0, "muon at --zero 1 on deepspeed is priced (DeepSpeed's ZeRO stage 1/2 optimizer runs it)");

done_testing();
