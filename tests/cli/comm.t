# gpuplan comm: the nccl-tests-like table, csv, SVG, and its errors.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
require './tests/cli/lib.pl';

my ($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--nodes', '2', '--op', 'all_reduce');
is($c, 0, 'comm exits 0');
like($o, qr/^all_reduce on 16 x h100-sxm on 2 x dgx-h100$/m, 'title names the GPUs, then the systems they sit in');
like($o, qr/^\s*size \(B\)\s+count\s+time \(us\)\s+algbw \(GB\/s\)\s+busbw \(GB\/s\)\s+algorithm\s+protocol\s+80% range \(us\)$/m,
     'table header');
# the 80% range and the defaults, as every other command prints them
like($o, qr/^ranges: where 80% of published runs like this landed \(\d+ cases: vendor=NVIDIA\/style=all_reduce\/scale=nodes\/gen=hopper\)$/m,
     'the ranges line names the regime');
like($o, qr/^defaults: nccl=2\.30\.7 \(the latest release modelled: its tuner picks the algorithm and protocol\), nvls=auto \(NCCL_NVLS_ENABLE's default: this node's NVLink switch multicasts, so the tuner may pick NVLS\), nics=8 a node \(ib-ndr-400, dgx-h100's\)$/m,
     'the defaults line: NCCL, NVLS, NICs');
my @data = grep { /^\s*\d/ } split /\n/, $o;
is(scalar @data, 31, '8 B .. 8 GiB doubling is 31 rows');
like($data[0], qr/^\s*8\s+2\s/, 'first row is 8 bytes = 2 floats');
like($data[-1], qr/^\s*8589934592\s/, 'last row is 8 GiB');
is($e, '', 'nothing on stderr');

($c, $o, $e) = run_gp('comm', '--system', 'dgx-a100', '--format', 'csv', '--min', '1MiB', '--max', '4MiB');
is($c, 0, 'csv exits 0');
my @lines = split /\n/, $o;
# (the time's 80% range last, gpuplan.ranges' time_lo and time_hi in us)
is($lines[0], 'bytes,count,time_us,algbw_gbps,busbw_gbps,algo,proto,time_lo_us,time_hi_us', 'csv header: the keys, units in the names');
is(scalar @lines, 4, 'header + 3 sizes (1, 2, 4 MiB)');
my $good = 1;
for my $l (@lines[1 .. $#lines]) {
    my @f = split /,/, $l;
    $good &&= @f == 9 && $f[0] =~ /^\d+$/ && $f[2] =~ /^[\d.]+$/ && $f[4] =~ /^[\d.]+$/ && $f[2] > 0;
}
ok($good, 'csv rows parse: 9 fields, numbers where numbers belong');
my @f = split /,/, $lines[1];
is($f[0], 1048576, 'first csv size is 1 MiB');
# busbw = algbw x 2(n-1)/n = algbw x 1.75 on 8 GPUs (2-decimal rounding)
ok(abs($f[4] - 1.75 * $f[3]) < 0.02, 'busbw = 1.75 x algbw');

($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--op', 'all_rdeuce');
is($c, 2, 'bad --op is a usage error (exit 2)');
like($e, qr/^gpuplan: comm: --op: unknown op 'all_rdeuce'/, 'bad --op named');

($c, $o, $e) = run_gp('comm', '--system', 'dgx-h1000');
is($c, 1, 'unknown system exits 1');
like($e, qr/^gpuplan: comm: --system: unknown system 'dgx-h1000'/, 'error names the argument');

($c, $o, $e) = run_gp('comm');
is($c, 2, 'missing --system is a usage error');
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--algo', 'magic');
is($c, 2, 'bad --algo is a usage error');
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--max', 'lots');
is($c, 2, 'bad --max is a usage error');
# 12 GPUs of 8-GPU nodes: the launcher fills 8 + 4 (engine/comm.h
# gp_group), priced on the node of 4, and the title says so.
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--gpus', '12');
is($c, 0, '12 GPUs of 8-GPU nodes: priced') or diag $e;
like($o, qr/^all_reduce on 12 x h100-sxm on 2 x dgx-h100 \(8 GPUs each, 4 on the last\)$/m,
     'the last node partial, said');

# --nodes with --gpus places the ranks: 8 over 8 nodes is one GPU each,
# on one NIC (ib-ndr-400: 50 GB/s x 0.94 = 47 GB/s), not one node's NVLS.
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--nodes', '8', '--gpus', '8',
                      '--min', '1GiB', '--max', '1GiB');
is($c, 0, '--nodes 8 --gpus 8 exits 0');
like($o, qr/^all_reduce on 8 x h100-sxm on 8 x dgx-h100 \(1 GPU each\)$/m, '8 nodes x 1 GPU');
my ($row) = grep { /^\s*1073741824\s/ } split /\n/, $o;
my @col = split ' ', $row // '';
ok(@col == 8 && $col[4] <= 47.0 && $col[4] > 40, "busbw within one NIC's 47 GB/s (got $col[4])");
is($col[5], 'ring', 'a ring across the 8 nodes');
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--nodes', '3', '--gpus', '8');
is($c, 2, '8 GPUs over 3 nodes: a usage error (--gpus and --nodes), exit 2');
like($e, qr/^gpuplan: comm: 8 gpus do not split evenly over 3 nodes/m, 'and says why');

my $dir = tempdir(CLEANUP => 1);
($c, $o, $e) = run_gp('comm', '--system', 'dgx-a100', '--svg', "$dir/bw.svg",
                      '--systems', 'dgx-a100,hgx-a800,dgx-h100,hgx-h800,hgx-h20');
is($c, 0, 'svg exits 0');
ok(-s "$dir/bw.svg", 'svg written');
ok(!-e "$dir/bw.svg.tmp", 'no temporary file left');
open(my $fh, '<', "$dir/bw.svg") or die;
my $svg = do { local $/; <$fh> };
close $fh;
like($svg, qr/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" /, 'an SVG document');
is(scalar(() = $svg =~ /<path /g), 5, 'one line per system');
like($svg, qr/>hgx-h800 \(8 GPUs\)</, 'legend names the systems');
like($svg, qr/>busbw \(GB\/s\)</, 'y axis labelled');
like($svg, qr/>1MiB</, 'x axis labelled in sizes');
unlike($svg, qr/>2KiB</, 'powers of two between are not labelled');
($c, $o, $e) = run_gp('comm', '--system', 'dgx-a100', '--svg', "$dir/none/bw.svg");
is($c, 1, 'unwritable svg path exits 1');
ok(!-e "$dir/none/bw.svg", 'nothing half-written');

# A bad id in --systems is found before anything is printed or written.
my $d2 = tempdir(CLEANUP => 1);
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--systems', 'dgx-h100,no-such', '--svg', "$d2/c.svg");
is($c, 1, 'bad --systems id: exit 1');
like($e, qr/^gpuplan: comm: --systems: unknown system 'no-such'/, 'names the option and the id');
is($o, '', 'nothing printed before the error');
ok(!-e "$d2/c.svg", 'no chart written');
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', 'extra');
is($c, 2, 'comm with an argument: usage error');
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--svg', $d2);
is($c, 1, '--svg to a directory: exit 1');
like($e, qr/^gpuplan: comm: --svg: cannot write '\Q$d2\E': it is a directory/m, 'names the path');
# 3,000,000 nodes x 8 GPUs = 24M ranks > 2^24 = 16,777,216, the engine's
# bound; the largest allowed is 2^24 / 8 = 2,097,152 nodes.
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--nodes', '3000000');
is($c, 2, 'too many ranks: usage error');
like($e, qr/^gpuplan: comm: --nodes must be in 1\.\.2097152 for dgx-h100/m, 'names --nodes and its bound');
# --gpus-per-thread N (nccl-tests -g N): one thread launches N kernels an
# iteration, 4.2 us each (lua/gpuplan/comm.lua), so 8 B on one DGX A100
# driven by one thread takes 8 x 4.2 = 33.60 us where NCCL's LL ring takes
# 6.6 + 14 x 0.6 = 15.00 us; 1 GiB (8.19 ms) is untouched.  Exact to the
# printed 2 decimals.
($c, $o, $e) = run_gp('comm', '--system', 'dgx-a100', '--min', '8', '--max', '8', '--format', 'csv');
like($o, qr/^8,2,15\.00,/m, '8 B, one GPU per thread: the LL ring, 15.00 us');
($c, $o, $e) = run_gp('comm', '--system', 'dgx-a100', '--min', '8', '--max', '8', '--format', 'csv',
                      '--gpus-per-thread', '8');
is($c, 0, '--gpus-per-thread 8 exits 0');
like($o, qr/^8,2,33\.60,/m, '8 B, 8 GPUs per thread: 8 launches x 4.2 us = 33.60 us');
($c, $o, $e) = run_gp('comm', '--system', 'dgx-a100', '--min', '1GiB', '--max', '1GiB', '--format', 'csv',
                      '--gpus-per-thread', '8');
like($o, qr/^1073741824,268435456,8190\.41,/m, '1 GiB: the GPUs, not the launches, set the time');
# Its range is the declaration's (gpuplan.options), checked as every job
# command's values are: exit 1, naming the flag, the range and the value.
($c, $o, $e) = run_gp('comm', '--system', 'dgx-a100', '--gpus-per-thread', '0');
is($c, 1, '--gpus-per-thread 0: refused');
like($e, qr/^gpuplan: comm: --gpus-per-thread must be a whole number 1\.\.16777216 \(got 0\)$/m,
     'names the flag, its range and the value');
($c, $o, $e) = run_gp('comm', '--system', 'dgx-a100', '--gpus-per-thread', '9');
is($c, 1, '--gpus-per-thread above the ranks: exit 1');
like($e, qr/^gpuplan: comm: --gpus-per-thread 9 exceeds the 8 gpus$/m, 'names the flag and both counts');
unlike($e, qr/traceback|\.lua:\d/, 'no traceback, no internal file:line');
($c, $o, $e) = run_gp('comm', '--system', 'dgx-a100', '--gpus-per-thread', 'x');
is($c, 2, '--gpus-per-thread x: usage error');
# --nccl X.Y.Z: that release's tuner picks the algorithm.  2 x DGX H100 at
# 1 MiB: the latest ranks NVLS_TREE's network step at 20.9 us and keeps the
# LL128 tree (61.22 us, its bandwidth term the LL128 tree's ceiling of 8
# channels x min(41.4 x 120/128, 36.7) GB/s on 2 H100 nodes: 2 x 1 MiB /
# 293.6 GB/s / tree factor 0.6 = 11.90 us, over the NVLink chain's 10.10;
# its 2 network hops
# each carry NCCL's 18000 B LL128 step whole, 19200 B on a 47 GB/s NDR NIC:
# 0.82 us); 2.20.5 ranks it at 14 us and runs NVLS_TREE: 25 +
# 2 x 14 = 53 us of latency and its 2 network steps' 15 further proxy
# posts at 1 us (16 NVLS channels, Intel hosts, one message a step), 30
# us: 83.00 us.
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--nodes', '2', '--min', '1MiB', '--max', '1MiB',
                      '--format', 'csv');
like($o, qr/^1048576,262144,61\.22,.*,tree,ll128,[\d.]+,[\d.]+$/m, '2 x DGX H100, 1 MiB, latest NCCL: the LL128 tree');
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--nodes', '2', '--min', '1MiB', '--max', '1MiB',
                      '--format', 'csv', '--nccl', '2.20.5');
is($c, 0, '--nccl 2.20.5 exits 0');
like($o, qr/^1048576,262144,83\.00,.*,nvls,simple,[\d.]+,[\d.]+$/m, '--nccl 2.20.5: NVLS_TREE, 53 + 30 us of posts');
# NVLS_TREE's 64 KiB chunk cap on 4 or more nodes came with NCCL 2.19.3
# (NVIDIA/nccl 8c6c5951: "if (info->comm->nNodes >= 4) chunkSize =
# 65536;"): 4 x DGX H100 at 8 GiB runs 8 GiB / (16 x 8 x 64 KiB) = 1024
# loops a block there, 512 at 2.19.1 (128 KiB chunks): 512 more loops'
# steps at 3.7 us, 1894.4 us, less the fill they shorten, 3 x intra / 1024
# with intra = 8 GiB x 1.125 / (450e9 x 0.82 x 0.85) = 30.81 ms: 90.26
# us; 1804.14 us apart (0.01 us: the csv's rounding).
my %t;
for my $v ('2.19.1', '2.19.3') {
    ($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--nodes', '4', '--min', '8GiB',
                          '--max', '8GiB', '--algo', 'nvls', '--format', 'csv', '--nccl', $v);
    is($c, 0, "4 nodes NVLS_TREE --nccl $v exits 0") or diag $e;
    ($t{$v}) = $o =~ /^8589934592,\d+,([\d.]+),/m;
}
ok(abs($t{'2.19.3'} - $t{'2.19.1'} - 1804.14) < 0.02,
   "2.19.3 caps the chunk at 64 KiB, 2.19.1 does not: 1804.14 us apart (got "
   . ($t{'2.19.3'} - $t{'2.19.1'}) . ")");
# PXN first ships in NCCL 2.12.7 (its tag: "Add network communication
# through another GPU connected with NVLink (PXN)"), so 2.10.3 runs a 1 MiB
# all_to_all over 2 x DGX A100 as p2p: each GPU posts to the 8 remote peers
# itself, at 6 us a post (AMD hosts, 2 us, x 3 for Simple: tuning.cc
# getNetOverhead, "netOverhead *= 3"), where PXN's grouped receives post once
# (8 GPUs a node, IB's 8 receives a call) and cross one more NVLink step
# (0.6 + 2.8 us): p2p is 8 x 6 - 6 - 3.4 = 38.60 us slower, 95.65 against
# the latest's 57.05 (the bandwidth terms are the same remote half).
# count is nccl-tests' per-peer count of an all_to_all (src/alltoall.cu:
# "*paramcount = (count/nranks) & ~(16/eltSize - 1)", printed as
# "args->nbytes / wordSize(type)"): 1048576 / 4 / 16 ranks = 16384.
($c, $o, $e) = run_gp('comm', '--system', 'dgx-a100', '--nodes', '2', '--op', 'all_to_all',
                      '--min', '1MiB', '--max', '1MiB', '--format', 'csv');
like($o, qr/^1048576,16384,57\.05,.*,pxn,simple,[\d.]+,[\d.]+$/m, '2 x DGX A100 all_to_all, latest NCCL: pxn');
($c, $o, $e) = run_gp('comm', '--system', 'dgx-a100', '--nodes', '2', '--op', 'all_to_all',
                      '--min', '1MiB', '--max', '1MiB', '--format', 'csv', '--nccl', '2.10.3');
is($c, 0, '--nccl 2.10.3 exits 0');
like($o, qr/^1048576,16384,95\.65,.*,p2p,simple,[\d.]+,[\d.]+$/m, '--nccl 2.10.3: p2p, no PXN before 2.12.7');
($c, $o, $e) = run_gp('comm', '--system', 'dgx-a100', '--nodes', '2', '--op', 'all_to_all',
                      '--algo', 'pxn', '--nccl', '2.10.3');
is($c, 1, '--algo pxn --nccl 2.10.3: exit 1');
like($e, qr/^gpuplan: comm: --algo pxn needs NCCL 2\.12\.7 or later$/m, '... naming the release') or diag $e;
# Text that is no release is "a value the option cannot parse", a usage
# error (docs/output.md), exit 2 with the usage line, as --memory abc is
# since leftovers10 (it exited 1); a release out of range (9.9.9) parses
# and stays exit 1.
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--nccl', '9.9.9');
is($c, 1, '--nccl 9.9.9: out of range, exit 1');
# --nvls on with a release before NVLS (NCCL 2.17.1's notes: "Add new NVLS
# algorithm for allreduce using NVLink SHARP") is refused, exit 1 as
# --algo nvls on that release is, naming the flag; it priced the ring.
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--nvls', 'on', '--nccl', '2.16.2');
is($c, 1, '--nvls on --nccl 2.16.2: exit 1');
like($e, qr/^gpuplan: comm: --nvls on \(NCCL_NVLS_ENABLE=1\) needs NCCL 2\.17\.1 or later, the first with NVLS; NCCL 2\.16\.2 has none: give a later release, or --nvls auto or off$/m,
     '--nvls on --nccl 2.16.2: the refusal') or diag $e;
is($o, '', '--nvls on --nccl 2.16.2: no table');
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--nccl', '2.x');
is($c, 2, '--nccl 2.x: a usage error, exit 2');
like($e, qr/\nusage: gpuplan comm /, '--nccl 2.x: the usage line') or diag $e;
like($e, qr/^gpuplan: comm: --nccl must be a release 'major\.minor\[\.patch\]' such as '2\.20\.5' \(got "2\.x"\)$/m,
     'names the flag and the value');
unlike($e, qr/traceback|\.lua:\d/, 'no traceback, no internal file:line');
# --nics N: the node's NICs, fewer than its GPUs sharing them.  2 x DGX
# A100 (8 HDR NICs a node, 25 GB/s each at 0.96 achievable: catalog
# ib-hdr-200) run the 8 GiB ring at the node's NIC rate, 8 x 25 x 0.96 =
# 192 GB/s busbw streaming; with --nics 4 it is 4 x 25 x 0.96 = 96.  The
# ring's latency (about 0.3 ms of 84 and 168 ms: 0.4% and 0.2%) takes each
# a little below, so the tolerances are 1 and 0.5 GB/s below the streaming
# figure, and the two differ by 2x within 1%.
($c, $o, $e) = run_gp('comm', '--system', 'dgx-a100', '--nodes', '2', '--min', '8GiB', '--max', '8GiB',
                      '--format', 'csv');
my ($bus8) = $o =~ /^8589934592,\d+,[\d.]+,[\d.]+,([\d.]+),ring,simple,[\d.]+,[\d.]+$/m;
ok(defined $bus8 && $bus8 > 191.0 && $bus8 <= 192.0, "8 NICs a node: ~192 GB/s busbw (got @{[$bus8 // 'none']})");
($c, $o, $e) = run_gp('comm', '--system', 'dgx-a100', '--nodes', '2', '--min', '8GiB', '--max', '8GiB',
                      '--format', 'csv', '--nics', '4');
is($c, 0, '--nics 4 exits 0');
my ($bus4) = $o =~ /^8589934592,\d+,[\d.]+,[\d.]+,([\d.]+),ring,simple,[\d.]+,[\d.]+$/m;
ok(defined $bus4 && $bus4 > 95.5 && $bus4 <= 96.0, "--nics 4: ~96 GB/s busbw (got @{[$bus4 // 'none']})");
ok(defined $bus8 && defined $bus4 && abs($bus8 / $bus4 - 2) < 0.01, 'half the NICs, half the ring');
# --nics is one declaration for comm and the job commands: one range, one
# message (comm's own check said "must be in 0..16777216" with exit 2,
# train's "must be a whole number 0..16777216" with exit 1).
($c, $o, $e) = run_gp('comm', '--system', 'dgx-a100', '--nics', '-1');
is($c, 1, '--nics -1: refused');
like($e, qr/^gpuplan: comm: --nics must be a whole number 0\.\.16777216 \(got -1\)$/m,
     'names the flag and the value');
my ($c2, $o2, $e2) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--nics', '-1');
(my $same = $e2) =~ s/^gpuplan: train: /gpuplan: comm: /;
is($e, $same, 'the same words as gpuplan train --nics -1');
($c, $o, $e) = run_gp('comm', '--system', 'dgx-a100', '--nodes', '2', '--nics', '0', '--min', '1MiB', '--max', '1MiB');
is($c, 1, '--nics 0 across nodes: exit 1');
like($e, qr/^gpuplan: comm: 2 nodes need --nics > 0 to talk$/m, 'names the flag');
($c, $o, $e) = run_gp('comm', '--system', 'pcie-8x-4090', '--nodes', '2', '--nics', '2', '--min', '1MiB',
                      '--max', '1MiB');
is($c, 1, '--nics on a system without a NIC fabric: exit 1');
like($e, qr/^gpuplan: comm: --nics 2: system pcie-8x-4090 names no NIC fabric/m, 'names the flag and the system');
unlike($e, qr/traceback|\.lua:\d/, 'no traceback, no internal file:line');
# --gpu ID: the node built from the GPU alone.  An H100 PCIe's is its
# bridged pair: 2 ranks at the bridge's 300 GB/s x 0.69 = 207 GB/s, 206.40
# at 1 GiB (its latency, 8.4 + 2 x 3.4 us of NCCL's Simple ring, is 0.3% of
# the 5.2 ms): the figure the validation case prices.
($c, $o, $e) = run_gp('comm', '--gpu', 'h100-pcie', '--min', '1GiB', '--max', '1GiB', '--format', 'csv');
is($c, 0, '--gpu h100-pcie exits 0');
like($o, qr/^1073741824,268435456,[\d.]+,206\.\d\d,206\.\d\d,ring,simple,[\d.]+,[\d.]+$/m, 'the bridged pair: 206 GB/s busbw');
($c, $o, $e) = run_gp('comm', '--gpu', 'h100-pcie', '--min', '1GiB', '--max', '1GiB');
like($o, qr/^all_reduce on 2 x h100-pcie \(1 node x 2 GPUs\)$/m, 'title names the GPU and its pair');
# --fabric ID: 4 RTX 4090s with P2P on (pcie4-p2p) against the box's
# host-staged pcie4.  Exact: the same rows as the Lua API's.
($c, $o, $e) = run_gp('comm', '--system', 'pcie-8x-4090', '--gpus', '4', '--min', '1GiB', '--max', '1GiB',
                      '--format', 'csv');
my ($staged) = $o =~ /^1073741824,\d+,[\d.]+,[\d.]+,([\d.]+),/m;
($c, $o, $e) = run_gp('comm', '--system', 'pcie-8x-4090', '--gpus', '4', '--min', '1GiB', '--max', '1GiB',
                      '--format', 'csv', '--fabric', 'pcie4-p2p');
is($c, 0, '--fabric pcie4-p2p exits 0');
my ($p2p) = $o =~ /^1073741824,\d+,[\d.]+,[\d.]+,([\d.]+),/m;
ok(defined $staged && defined $p2p && $p2p > $staged, "P2P on beats staging through the host ($p2p > $staged)");
($c, $o, $e) = run_gp('comm', '--gpu', 'rtx-4090', '--gpus', '4', '--min', '1GiB', '--max', '1GiB',
                      '--format', 'csv', '--fabric', 'pcie4-p2p');
my ($built) = $o =~ /^1073741824,\d+,[\d.]+,[\d.]+,([\d.]+),/m;
is($built, $p2p, '--gpu rtx-4090 --fabric pcie4-p2p prices as the system does');
($c, $o, $e) = run_gp('comm', '--gpu', 'h100-pcie', '--system', 'dgx-a100');
is($c, 2, '--gpu with --system: usage error');
like($e, qr/^gpuplan: comm: give --system \(or --systems\) or --gpu, not both$/m, 'names both flags');
($c, $o, $e) = run_gp('comm', '--gpu', 'h100-pcie', '--fabric', 'ib-ndr-400');
is($c, 1, 'a scale-out --fabric: exit 1');
like($e, qr/^gpuplan: comm: --fabric 'ib-ndr-400' is a scaleout fabric; the GPUs of a node join over a scale-up one \(/m,
     'names the flag, the fabric and the choices');
($c, $o, $e) = run_gp('comm', '--gpu', 'h100-pciex');
is($c, 2, 'unknown --gpu: a usage error, exit 2');
like($e, qr/^gpuplan: comm: --gpu: unknown gpu 'h100-pciex' \(did you mean/m, 'names the flag and suggests');
($c, $o, $e) = run_gp('comm', '--gpu', 'h100-pcie', '--gpus', '4');
is($c, 1, 'a GPU-built node across nodes: exit 1');
like($e, qr/^gpuplan: comm: 4 gpus span 2 nodes of the 2-GPU node built from --gpu h100-pcie, which has no NICs: give --system ID/m,
     'says why and what to give');
($c, $o, $e) = run_gp('comm', '--gpu', 'h100-pcie', '--nics', '2');
is($c, 1, '--nics on a GPU-built node: exit 1');
like($e, qr/^gpuplan: comm: --nics 2: the node built from --gpu h100-pcie has no NIC fabric/m, 'names both flags');
unlike($e, qr/traceback|\.lua:\d/, 'no traceback, no internal file:line');
# The flags come from gpuplan.options: a misspelt one is refused with the
# nearest (the parser said only "unknown option"), 'node' is comm's --nodes
# (not --system, which 'node' stands for in the job commands), and a job
# command given comm's flag says whose it is.
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--node', '2');
is($c, 2, '--node: usage error');
like($e, qr/^gpuplan: comm: unknown option '--node' \(did you mean '--nodes'\?\)$/m, 'suggests --nodes');
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--gpus-per-threads', '2');
like($e, qr/^gpuplan: comm: unknown option '--gpus-per-threads' \(did you mean '--gpus-per-thread'\?\)$/m,
     'suggests --gpus-per-thread');
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--fabric', 'nvlink4');
like($e, qr/^gpuplan: train: unknown option '--fabric' \(an option of gpuplan comm\)$/m,
     'train --fabric: an option of gpuplan comm');
# --help: each flag once, its help from the declaration.
($c, $o, $e) = run_gp('comm', '--help');
is($c, 0, 'comm --help exits 0');
for my $f (qw(system gpu fabric nodes gpus op algo nics gpus-per-thread nccl min max format svg systems)) {
    is(scalar(() = $o =~ /^  --\Q$f\E /mg), 1, "--help lists --$f once");
}
like($o, qr/^  --nics N +NICs per node; fewer NICs than GPUs share them/m,
     "--nics: the job commands' help, with comm's note");
# --systems without --svg printed the first system's table and dropped
# the others in silence: a usage error naming --svg.
($c, $o, $e) = run_gp('comm', '--systems', 'dgx-a100,dgx-h100');
is($c, 2, '--systems without --svg: a usage error');
like($e, qr/^gpuplan: comm: --systems names the lines of the --svg chart: give --svg FILE/m,
     'naming what it is for');
# One rank: every row was 0 us under an algorithm that never ran (and
# send_recv alone was refused): every op is refused alike, naming --gpus,
# out of range (exit 1).
for my $op (qw(all_reduce all_gather reduce_scatter all_to_all broadcast reduce send_recv)) {
  ($c, $o, $e) = run_gp('comm', '--gpu', 'rtx-4090', '--gpus', '1', '--op', $op, '--max', '16');
  is($c, 1, "comm --gpus 1 --op $op: exit 1");
  like($e, qr/^gpuplan: comm: --gpus 1: a collective needs >= 2 gpus/m, "... $op names --gpus");
  is($o, '', "... $op prints no table");
}
# ... and --help says so where --gpus is declared (one declaration: the
# help, docs/cli.md and the man page agree)
($c, $o, $e) = run_gp('comm', '--help');
like($o, qr/^  --gpus N +ranks, at least 2 \(a collective over one GPU moves\s+nothing: refused\)/m,
     'comm --help: --gpus takes at least 2');
($c, $o, $e) = run_gp('comm', '--gpu', 'h100-sxm', '--gpus', '2', '--max', '16');
is($c, 0, 'two ranks still priced');

# --nccl 2.12 names the 2.12 releases, the first of which (2.12.7) is
# PXN's: the gate passes as it does for 2.12.7, and 2.11 (2.11.4) stays
# refused; 2.17 (2.17.1, NVLS's first) takes --nvls on.
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--nodes', '2', '--op', 'all_to_all',
                      '--algo', 'pxn', '--nccl', '2.12', '--max', '16');
is($c, 0, 'comm --algo pxn --nccl 2.12: the 2.12 line has PXN');
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--nodes', '2', '--op', 'all_to_all',
                      '--algo', 'pxn', '--nccl', '2.11', '--max', '16');
is($c, 1, 'comm --algo pxn --nccl 2.11: refused');
like($e, qr/^gpuplan: comm: --algo pxn needs NCCL 2\.12\.7 or later$/m, '... naming the release needed');
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--nvls', 'on', '--nccl', '2.17', '--max', '16');
is($c, 0, 'comm --nvls on --nccl 2.17: the 2.17 line has NVLS');

done_testing();
