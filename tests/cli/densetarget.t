# A dense model's `infer --target` searches the replica's TP, as the MoE
# target does, and gp.infer_plan runs the same search (one Lua function,
# gpuplan.infer replicas_for).  It planned only the given --tp (1 by
# default): Llama 3 70B in bf16 on h200-sxm answered "does not fit" (141 GB
# of weights on one GPU) where TP4 replicas serve 20000 tok/s on 76 GPUs.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';
use JSON::PP ();
use File::Temp ();

my ($c, $o, $e);
my @job = ('llama3-70b', '--gpu', 'h200-sxm', '--target', '20000');

sub plan_of {
    my ($c, $o, $e) = run_gp('infer', @_, '--format', 'json');
    is($c, 0, "infer @_: runs") or diag $e;
    my $r = eval { JSON::PP::decode_json($o) } || [];
    return ref $r eq 'ARRAY' ? $r->[0] : $r;
}

# Each fixed TP: GPUs = tp x ceil(target / one replica's tok/s), the
# replica at the largest batch whose mean ITL is within 50 ms
# (engine/infer_run.c infer_gpus_for).  One replica's tok/s is the row's
# tokens_per_s / replicas; from gp.infer at that tp and batch:
#   TP2, batch 26:  20182.78 / 39 = 517.5 tok/s -> ceil(38.65) = 39 -> 78 GPUs
#   TP4, batch 55:  20975.81 / 19 = 1104.0    -> ceil(18.12) = 19 -> 76 GPUs
#   TP8, batch 97:  21342.34 / 11 = 1940.2    -> ceil(10.31) = 11 -> 88 GPUs
# TP1 does not fit: 141.11 GB of weights over the 135.10 GB usable.  The
# fewest is TP4's 76.  Counts are integers: exact.
my %fixed;
for my $tp (2, 4, 8) {
    my $r = plan_of(@job, '--tp', $tp);
    $fixed{$tp} = $r->{gpus};
    is($r->{layout}, "TP$tp", "--tp $tp: the given TP kept");
    my $per = $r->{tokens_per_s} / ($r->{gpus} / $tp);
    my $need = 20000 / $per;
    my $rep = int($need) == $need ? $need : int($need) + 1;
    is($r->{gpus}, $tp * $rep, "--tp $tp: GPUs = tp x ceil(target / a replica's tok/s)");
}
is_deeply(\%fixed, { 2 => 78, 4 => 76, 8 => 88 }, 'the hand-derived counts');
($c, $o, $e) = run_gp('infer', @job, '--tp', '1');
like($o, qr/^does not fit: needs 144\.55 GB per GPU/m, '--tp 1: does not fit, as before');

# Without --tp: the fewest GPUs over TP1..TP8 (a node), TP4's 76.
my $s = plan_of(@job);
is($s->{gpus}, 76, 'searched: 76 GPUs (the fewest of 78, 76, 88)');
is($s->{layout}, 'TP4', 'searched: TP4 replicas');
is($s->{batch}, 55, 'searched: TP4\'s batch');
($c, $o, $e) = run_gp('infer', @job);
like($o, qr/^\s+20000\s+50\.0\s+76\s+TP4\s+55\s/m, 'text: 76 GPUs of TP4 replicas') or diag $o;

# gp.infer_plan: the same search, the same answer (it called gp.infer's
# gpus_for at tp 1 and so refused, as the CLI said "does not fit").
my $dir = File::Temp::tempdir(CLEANUP => 1);
my $lua = "$dir/plan.lua";
write_file($lua, <<'LUA');
local gp = require "gpuplan"
local p = gp.infer_plan{ model = "llama3-70b", gpu = "h200-sxm", target = 20000 }
print(p.gpus, p.layout, p.batch, string.format("%.17g", p.tokens_per_s))
local q = gp.infer_plan{ model = "llama3-70b", gpu = "h200-sxm", target = 20000, tp = 2 }
print(q.gpus, q.layout)
LUA
($c, $o, $e) = run_gp('run', $lua);
is($c, 0, 'gp.infer_plan: runs') or diag $e;
my @l = split /\n/, $o;
# The count, TP and batch exactly; tok/s to 1e-12 of itself: the CLI's row
# and the C search (infer_gpus_for) reach the same rate by different
# arithmetic (19 x one replica's 1103.99 tok/s: ...050528 against
# ...050531 at 17 digits), an ulp apart, not a different plan.
my @f = split /\t/, $l[0];
is(join("\t", @f[0 .. 2]), "76\tTP4\t55", 'gp.infer_plan: the CLI\'s plan') or diag $o;
ok(abs($f[3] - $s->{tokens_per_s}) <= 1e-12 * $s->{tokens_per_s},
   "gp.infer_plan: the CLI's tok/s to 1e-12 ($f[3] against $s->{tokens_per_s})");
is($l[1], "78\tTP2", 'gp.infer_plan tp = 2: the given TP kept');

# A pipeline replica stays the caller's: --pp without --tp is not searched.
my $p = plan_of(@job, '--pp', '2', '--tp', '4');
is($p->{layout}, 'TP4 PP2', '--tp 4 --pp 2: the given replica, named with its PP');

# Nothing of one node fits: the answer names the largest TP tried, and the
# hint a pipeline (TP past a node is refused).  Llama 3.1 405B nf4 on
# 24 GB RTX 4090s: 26.95 GB of weights a GPU at TP8.
($c, $o, $e) = run_gp('infer', 'llama3.1-405b', '--gpu', 'rtx-4090', '--weights', 'nf4-dq',
                      '--kv', 'int8', '--target', '100');
is($c, 0, 'no TP fits: an answer, exit 0');
like($o, qr/^does not fit: TP8 \(a node, the largest TP tried\): needs [\d.]+ GB per GPU .*; try more GPUs with --pp or --offload$/m,
     'names TP8 and hints --pp') or diag $o;

done_testing();
