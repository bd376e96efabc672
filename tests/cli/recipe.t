# A precision recipe and an optimizer gpuplan does not ship, added as a
# user catalog file (tests/fixtures/catalog/recipe/new.lua): fit and train
# read every figure from the record, no C.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
require './tests/cli/lib.pl';

local $ENV{XDG_CONFIG_HOME} = '/nonexistent';
local $ENV{GPUPLAN_CATALOG} = 'tests/fixtures/catalog/recipe';

sub comp { my ($json, $k) = @_; $json =~ /"bytes":([0-9.]+),"name":"\Q$k\E"/ ? $1 : undef }

# llama2-7b has N = 6,738,415,616 parameters (the engine's count, which
# tests/lua/models.t checks against the published 6.74B).  On one GPU at
# ZeRO 0 nothing shards: each state is N x the record's bytes -- weights
# 2, grads 2, master 4, optimizer 1 state (Lion) x 1 B (the recipe's fp8
# state) -- exact integers.
my $N = 6738415616;
my ($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'h100-sxm', '--recipe', 'fp8-states',
                         '--optimizer', 'lion', '--kernels', 'fused', '--format', 'json');
is($c, 0, 'fit with the user recipe and optimizer') or diag $e;
is(comp($o, 'weights'), 2 * $N, 'weights: 2 B/param');
is(comp($o, 'grads'), 2 * $N, 'grads: 2 B/param');
is(comp($o, 'master'), 4 * $N, 'master: 4 B/param');
is(comp($o, 'optimizer'), 1 * 1 * $N, "optimizer: Lion's 1 state x the recipe's 1 B");
like($o, qr/"recipe":"fp8-states"/, 'the result names the recipe');

# Saved activations at the recipe's 1 B per element against mixed-16's 2:
# every element-sized tensor halves; what does not scale (a few MiB of
# fixed-size buffers) keeps the ratio within 0.5 .. 0.51.  Fused kernels:
# the eager RMSNorm's fp32 upcast is 4 B whatever the recipe.
my $a1 = comp($o, 'activations');
($c, my $o16, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'h100-sxm', '--recipe', 'mixed-16',
                           '--kernels', 'fused', '--format', 'json');
my $a2 = comp($o16, 'activations');
my $r = $a1 / $a2;
ok($r >= 0.5 && $r <= 0.51, "activations at 1 B/element: $r of mixed-16's");

# train, 8 GPUs at ZeRO 1: master and optimizer states shard over DP 8,
# 4N/8 and N/8 (exact); the DP gradient reduction moves the recipe's
# `reduce` (4 B/param) where mixed-16 moves 2: twice the time (the
# bandwidth term dominates a 13-27 GB reduction; 1% for the latency).
sub dp_comm { my ($json) = @_; $json =~ /"hidden":([0-9.e-]+),"name":"dp_comm","seconds":([0-9.e-]+)/ ? $1 + $2 : undef }
($c, $o, $e) = run_gp('train', 'llama2-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '1',
                      '--recipe', 'fp8-states', '--optimizer', 'lion', '--format', 'json');
is($c, 0, 'train with the user recipe and optimizer') or diag $e;
is(comp($o, 'master'), 4 * $N / 8, 'train: master sharded over DP 8');
is(comp($o, 'optimizer'), $N / 8, 'train: optimizer states sharded over DP 8');
my $t4 = dp_comm($o);
($c, $o16, $e) = run_gp('train', 'llama2-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '1',
                        '--recipe', 'mixed-16', '--format', 'json');
my $t2 = dp_comm($o16);
ok(defined $t4 && defined $t2 && abs($t4 / $t2 - 2) < 0.02,
   "DP reduction at the recipe's 4 B/param: twice mixed-16's (" . ($t4 // 'undef') . " s)");

# Unknown names are refused naming the input and the nearest ones.
($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'h100-sxm', '--recipe', 'fp8-state');
is($c, 2, 'an unknown recipe is a usage error: exit 2');
like($e, qr/unknown recipe 'fp8-state' \(did you mean [^)]*fp8-states/, 'unknown recipe named, nearest suggested');
($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'h100-sxm', '--optimizer', 'lionn');
is($c, 2, 'an unknown optimizer is a usage error: exit 2');
like($e, qr/unknown optimizer 'lionn' \(did you mean lion/, 'unknown optimizer named');

# A bad record says where.
my $bad = tempdir(CLEANUP => 1);
write_file("$bad/bad.lua", <<'EOF');
recipe { id = "nothing", weights = 0, grads = 2, master = 4, state = 4, reduce = 2,
  activations = 2, offload = 2, source = "t" }
optimizer { id = "many", states = 40, source = "t" }
EOF
($c, $o, $e) = run_gp('catalog', 'check', $bad);
is($c, 1, 'a bad recipe fails the check');
like($e, qr/bad\.lua:1: recipe 'nothing': field 'weights': must be positive/, 'zero weights named with file:line');
like($e, qr/bad\.lua:3: optimizer 'many': field 'states': must be <= 16/, 'too many states named');

done_testing();
