# A GPU generation gpuplan does not ship, added as catalog files only
# (tests/fixtures/catalog/newgen/gen.lua: an arch, a scale-up fabric with
# its own NCCL terms, a network, a GPU and a node on GPUPLAN_CATALOG):
# comm, train and infer answer from its data, no C and no built-in table.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
require './tests/cli/lib.pl';

my $NEW = 'tests/fixtures/catalog/newgen';
local $ENV{XDG_CONFIG_HOME} = '/nonexistent';
local $ENV{GPUPLAN_CATALOG} = $NEW;

sub num { my ($json, $k) = @_; $json =~ /"\Q$k\E":(-?[0-9.eE+-]+)/ ? $1 : undef }

# comm, NVLS forced, 1 GiB all-reduce on the node's 8 GPUs: comm.c prices
# NVLS as nvls_latency + S (1 + 1/g) / (bw x achievable x nvls_efficiency)
# x the pipeline's fill (1 + 2/k) = 10 us + 2^30 x 9/8 / (1000e9 x 0.8 x
# 0.5) s x (1 + 2/256) = 10 + 3019.89888 x 1.0078125 us = 3053.49184 us,
# all from the fixture's nccl block: k = 2^30 / (nvls_channels 4 x 8 heads
# x 128 KiB chunks) = 256 loops a block (2^30 is not below 64 x 4 x 8 x
# 128 KiB = 2^28, so the chunk stays 128 KiB).  The defaults, 25 us, 0.85
# and 16 channels (k = 64), would give 1856.9 us.  Tolerance 1e-6 us: the
# same arithmetic, printed in full.
my ($c, $o, $e) = run_gp('comm', '--system', 'nextnode', '--algo', 'nvls',
                         '--min', '1GiB', '--max', '1GiB', '--format', 'json');
is($c, 0, 'comm on the new node') or diag $e;
my $t = num($o, 'time_us');
ok(defined $t && abs($t - 3053.49184) < 1e-6, "NVLS from the fabric's nccl block: 3053.49184 us")
    or diag "got $o";

# The ring (what comm picks at 1 GiB): 8.4 us base (Simple) + 2(g-1) = 14
# steps of (latency 1 us + nccl.ring_simple 4 us) + 2(g-1)/g S / (bw x
# achievable) = 8.4 + 70 + 1.75 x 2^30 / 800e9 s = 78.4 + 2348.81024 us.
# The default ring_simple (2.8 us) would give 2410.41024 us.
($c, $o, $e) = run_gp('comm', '--system', 'nextnode', '--min', '1GiB', '--max', '1GiB',
                      '--format', 'json');
$t = num($o, 'time_us');
ok(defined $t && abs($t - 2427.21024) < 1e-6 && $o =~ /"algo":"ring","proto":"simple"/,
   "ring steps from the fabric's nccl block: 2427.21024 us") or diag "got $o";

# The arch's SMs reach the GPU that gives none (the wave model's count).
my $dir = tempdir(CLEANUP => 1);
write_file("$dir/sms.lua", 'print(require("gpuplan.roofline").device("nextgpu").sms)' . "\n");
($c, $o, $e) = run_gp('run', "$dir/sms.lua");
is($o, "100\n", "the GPU's SMs come from its arch entry") or diag $e;

# train: llama2-7b on the 8-GPU node.  The step cannot beat its FLOPs at
# the arch's achievable fraction: step_s >= model_flops / (8 x 4e15 x
# 0.5), so MFU <= 0.5; and the layout is a plain DP-8 data-parallel run of
# a 7B model, whose attention, norms, optimizer and one all-reduce of the
# grads keep it within 3x of that bound (gpuplan's own H100 DP-8 runs of
# the model sit at 1.5-2.5x).
($c, $o, $e) = run_gp('train', 'llama2-7b', '--gpu', 'nextgpu', '--gpus', '8', '--format', 'json');
is($c, 0, 'train on the new GPU') or diag $e;
my ($step, $flops, $mfu) = (num($o, 'step_s'), num($o, 'model_flops'), num($o, 'mfu'));
my $bound = $flops / (8 * 4e15 * 0.5);
ok($step >= $bound && $step <= 3 * $bound, "step $step s within 1..3x the compute bound $bound s");
ok($mfu > 0 && $mfu <= 0.5, "MFU $mfu at most the arch's gemm fraction 0.5");
like($o, qr/"system=nextnode"/, 'the user system is the node it trains on');

# infer: one decode step of llama2-7b at batch 1 reads every weight once:
# ITL >= 13,476,831,232 B / (10e12 B/s x 0.8 hbm) = 1.6846 ms; the KV
# cache of a 2048-token prompt (1 GiB) and the per-op launches add less
# than as much again, so ITL < 3x the bound.  The capacity is the GPU's
# 200 GiB x 0.989 = 212.4 GB.
($c, $o, $e) = run_gp('infer', 'llama2-7b', '--gpu', 'nextgpu', '--format', 'json');
is($c, 0, 'infer on the new GPU') or diag $e;
my $itl = num($o, 'itl_batch1_s');
my $floor = 13476831232 / (10e12 * 0.8);
ok($itl >= $floor && $itl < 3 * $floor, "ITL $itl s within 1..3x the weight-streaming bound $floor s");
like($o, qr/memory=212\.4GB \(memory x 0\.989\)/, "capacity from the new GPU's memory");

# A fabric's kind is read, never guessed from its id: a scale-up fabric
# named like PCIe that says kind = "nvlink" is NVLink to the comm model.
my $cat = tempdir(CLEANUP => 1);
write_file("$cat/pcielike.lua", <<'EOF');
fabric {
  id = "pcie9", name = "A link named like PCIe", scope = "scaleup", kind = "nvlink",
  bw = "100GB/s per-dir", latency = "1us", achievable = 0.8, achievable_reason = "t",
  source = "t",
}
EOF
write_file("$dir/kind.lua",
  'print(require("gpuplan.comm").from_fabrics({ scaleup = "pcie9", gpus_per_node = 2 }).up_kind)' . "\n");
{
    local $ENV{GPUPLAN_CATALOG} = "$NEW:$cat";
    ($c, $o, $e) = run_gp('run', "$dir/kind.lua");
    is($o, "nvlink\n", "the fabric's kind, not its id") or diag $e;
}

# Bad data says where: a kind that does not fit the scope, an unknown
# field in the nccl block, an efficiency out of range.
my $bad = tempdir(CLEANUP => 1);
write_file("$bad/bad.lua", <<'EOF');
fabric { id = "netlink", name = "x", scope = "scaleup", kind = "network", bw = "1GB/s bidir",
  latency = "1us", achievable = 0.5, achievable_reason = "t", source = "t" }
fabric { id = "typo", name = "x", scope = "scaleup", kind = "nvlink", bw = "1GB/s bidir",
  latency = "1us", achievable = 0.5, achievable_reason = "t", source = "t",
  nccl = { nvls_eff = 0.7, source = "t" } }
fabric { id = "over", name = "x", scope = "scaleup", kind = "nvlink", bw = "1GB/s bidir",
  latency = "1us", achievable = 0.5, achievable_reason = "t", source = "t",
  nccl = { nvls_efficiency = 1.5, source = "t" } }
EOF
($c, $o, $e) = run_gp('catalog', 'check', $bad);
is($c, 1, 'a bad fabric fails the check');
like($e, qr/bad\.lua:1: fabric 'netlink': field 'kind': 'network' does not fit scope 'scaleup'/,
     'kind against scope, with file:line');
like($e, qr/bad\.lua:5: fabric 'typo': field 'nccl\.nvls_eff': unknown field/,
     'unknown nccl field named, at its line');
like($e, qr/bad\.lua:8: fabric 'over': field 'nccl\.nvls_efficiency': expected a fraction/,
     'efficiency out of range named, at its line');

done_testing();
