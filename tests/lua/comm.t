-- gp.comm: topology from the catalog, overrides, nccl-tests conventions,
-- errors.  Expected numbers are derived from the catalog's own fabric
-- entries, so a catalog edit moves the expectation with it.
local t = require "tap"
local gp = require "gpuplan"
local comm = require "gpuplan.comm"
local core = require "gpuplan.core"

local cat = gp.catalog()
local GiB = 2 ^ 30

-- gp.comm is gpuplan.comm.comm behind the one-table check (init.lua's
-- one_table: a second argument refused, an inherited table flattened):
-- the same collective, to the bit.
local a = { gpu = "h100-sxm", bytes = 2 ^ 20 }
t.is(gp.comm(a).time, comm.comm(a).time, "gp.comm prices as gpuplan.comm.comm")

-- Topology of two DGX H100: fields straight from nvlink4 and ib-ndr-400.
local nvl4, ndr = cat.fabrics.nvlink4, cat.fabrics["ib-ndr-400"]
local topo = comm.topology("dgx-h100", 2)
t.is(topo.gpus_per_node, 8, "dgx-h100 has 8 GPUs per node")
t.is(topo.nodes, 2, "two nodes")
t.is(topo.up_bw, nvl4.bw, "scale-up bw is the fabric's per-direction bw")
t.is(topo.up_achievable, nvl4.achievable, "achievable from the fabric")
t.is(topo.up_nvls, true, "nvlink4 reduces in the switch (NVLS)")
t.is(topo.up_kind, "nvlink", "nvlink kind")
t.is(topo.nics, 8, "8 NICs per node")
t.is(topo.nic_bw, ndr.bw, "NIC bw from ib-ndr-400")
t.is(topo.nic_sharp, false, "SHARP off unless asked (NCCL CollNet default)")
t.is(comm.topology("pcie-8x-4090").up_kind, "pcie", "pcie fabric kind")
t.is(comm.topology("pcie-8x-4090").up_crosses_cpu, true, "4090 box crosses the CPU")

-- Overrides: strings with units or SI numbers; unknown fields refused.
t.is(comm.topology("dgx-h100", 1, { up_bw = "200GB/s per-dir" }).up_bw, 200e9,
     "override with units")
t.is(comm.topology("dgx-h100", 1, { up_bw = 400e9 }).up_bw, 400e9,
     "override in SI")
t.raises(function() comm.topology("dgx-h100", 1, { up_bandwidth = 1 }) end,
         "unknown topology field 'up_bandwidth'", "unknown override refused", true)
t.raises(function() comm.topology("dgx-h1000") end, "unknown system 'dgx-h1000'",
         "unknown system named", true)
-- A bad unit string names the field it was given for, not only the text.
t.raises(function() comm.topology("dgx-h100", 1, { tree_ch_bw2 = "40GB/z" }) end,
         "comm: topology.tree_ch_bw2: bad bandwidth '40GB/z'", "bad unit: the field named", true)

-- 8 x A100 ring all-reduce of 1 GiB: busbw = S x 1.75 / time with
-- time = 56 us (Simple ring latency, 8.4 + 14 x (0.6 + 2.8) us) +
-- S x 1.75 / (bw x achievable); the latency is < 1% of the time, so busbw
-- is within 1% of the fabric's achievable bandwidth.
local nvl3 = cat.fabrics.nvlink3
local r = gp.comm { op = "all_reduce", bytes = GiB, gpus = 8, system = "dgx-a100" }
t.is(r.algo, "ring", "a100 all_reduce 1 GiB: ring")
t.near(r.busbw, nvl3.bw * nvl3.achievable, 0.01, "a100 busbw ~ bw x achievable")
t.near(r.busbw, r.algbw * 2 * 7 / 8, 1e-12, "busbw = algbw x 2(n-1)/n")
t.near(r.algbw, GiB / r.time, 1e-12, "algbw = bytes / time")

-- Halving achievable halves the bandwidth term: busbw -> 0.5 x bw x ach.
-- 0.1%: the same 56 us ring latency against 8 GiB x 1.75 / (300e9 x 0.77
-- / 2) = 130 ms is 0.04% of the time.
local r2 = gp.comm { op = "all_reduce", bytes = 8 * GiB, gpus = 8, system = "dgx-a100",
                     up_achievable = nvl3.achievable / 2 }
t.near(r2.busbw, nvl3.bw * nvl3.achievable / 2, 0.001, "achievable override used")

-- A800: 400 GB/s bidirectional = 200 GB/s per direction.  1%: the 56 us
-- ring latency against 8 GiB x 1.75 / (200e9 x 0.80) = 94 ms is 0.06%.
local a800 = cat.fabrics[cat.systems["hgx-a800"].scaleup]
t.is(a800.bw, 200e9, "A800 NVLink is 200 GB/s per direction")
r = gp.comm { op = "all_reduce", bytes = 8 * GiB, system = "hgx-a800" }
t.near(r.busbw, 200e9 * a800.achievable, 0.01, "a800 busbw ~ 200 GB/s x achievable")

-- 16 GPUs of a one-node system span two nodes.
r = gp.comm { op = "all_reduce", bytes = GiB, gpus = 16, system = "dgx-h100" }
t.ok(r.nodes == 2 and r.ppn == 8, "16 gpus of dgx-h100: 2 x 8")

-- Placed groups: where the ranks sit.  8 GPUs over 8 nodes is one GPU in
-- each node, not one full node.
r = gp.comm { op = "all_reduce", bytes = GiB, gpus = 8, nodes = 8, system = "dgx-h100" }
t.ok(r.nodes == 8 and r.ppn == 1, "gpus = 8, nodes = 8: 8 nodes x 1 GPU")
-- One GPU per node drives only its own NIC, over its own PCIe link:
-- dgx-a100 has one ib-hdr-200 NIC per GPU (25 GB/s x 0.96 = 24 GB/s) and
-- PCIe Gen4 x16 (16 x 0.985 x 2 x 0.8 = 25.2 GB/s); so at every size the
-- busbw stays under the one NIC's 24 GB/s, never the 8 NICs' 192 (the old
-- 361 GB/s on dgx-h100 came from all 8 NICs of each node on one GPU).
local hdr = cat.fabrics["ib-hdr-200"]
local one_nic = hdr.bw * hdr.achievable
local under = true
for _, s in ipairs(comm.sizes(1024, 16 * GiB, 4)) do
  local q = gp.comm { op = "all_reduce", bytes = s, gpus = 8, gpus_per_node = 1, system = "dgx-a100" }
  under = under and q.nodes == 8 and q.busbw <= one_nic * (1 + 1e-12)
end
t.ok(under, "gpus_per_node = 1: busbw <= one NIC at every size")
-- 16 GiB: the ring's latency ((8.4 + 14 x 14) x 1.4 = 286 us) is 0.02% of
-- 1.75 x 16 GiB / 24 GB/s = 1.25 s, so busbw = 24 GB/s within 0.1%.
r = gp.comm { op = "all_reduce", bytes = 16 * GiB, gpus = 8, gpus_per_node = 1, system = "dgx-a100" }
t.near(r.busbw, one_nic, 0.001, "one GPU per node: one HDR NIC's 24 GB/s")
-- The topology carries the GPU's PCIe path and the NVLS_TREE head ceiling.
t.near(comm.topology("dgx-h100").nic_path_bw, 16 * 0.985e9 * 4 * 0.8, 1e-12,
       "dgx-h100: PCIe Gen5 x16 path to the NICs, 50.4 GB/s")
t.is(comm.topology("dgx-h100").nvls_tree_bw2, nvl4.nvls_tree_bw.nodes2,
     "NVLS_TREE head ceiling from the nvlink4 fabric")
-- and the host's DRAM at what streaming reaches: pcie-8x-4090's 2 x 8
-- channels of DDR4-3200 (409.6 GB/s) x 0.8 = 327.68 GB/s.
t.near(comm.topology("pcie-8x-4090").host_mem_bw, 409.6e9 * 0.8, 1e-12,
       "pcie-8x-4090: host DRAM 0.8 x 409.6 GB/s")
-- A user's host with 100 GB/s of DRAM: 8 staged flows of r B/s move 2r each
-- through it, r <= 100 / 16 = 6.25 GB/s, below the staged Gen4 link's
-- 32 x 0.8 x 0.5 = 12.8; 8 GiB hides the latency (tolerance 1%).
r = gp.comm { op = "all_reduce", bytes = 8 * GiB, gpus = 8,
              topology = comm.topology("pcie-8x-4090", 1, { host_mem_bw = 100e9 }) }
t.near(r.busbw, 6.25e9, 0.01, "staged PCIe ring: host DRAM / (2 x 8 flows)")
t.raises(function() gp.comm { op = "all_reduce", bytes = 1, gpus = 12, nodes = 8, system = "dgx-h100" } end,
         "12 gpus do not split evenly over 8 nodes", "uneven placement refused", true)
-- One rank moves nothing over a link: every op is refused alike (send_recv
-- was by the engine; the others priced 0 us under a ring that never ran).
for _, op in ipairs { "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast",
                      "reduce", "send_recv" } do
  t.raises(function() gp.comm { op = op, bytes = 8, gpus = 1, gpu = "rtx-4090" } end,
           "gpus 1: a collective needs >= 2 gpus", op .. " over one GPU refused", true)
end
t.raises(function() gp.comm { op = "all_reduce", bytes = 8, gpus_per_node = 1, nodes = 1, system = "dgx-h100" } end,
         "gpus 1: a collective needs >= 2 gpus", "one rank by placement refused too", true)
t.raises(function() gp.comm { op = "all_reduce", bytes = 1, gpus_per_node = 9, system = "dgx-h100" } end,
         "gpus_per_node 9 exceeds the node's 8 GPUs", "too many per node refused", true)
t.raises(function() gp.comm { op = "all_reduce", bytes = 1, gpus = 64, nodes = 4, system = "dgx-h100" } end,
         "64 gpus over 4 nodes is 16 per node, more than the node's 8", "overfull nodes refused", true)
t.raises(function() gp.comm { op = "all_reduce", bytes = 1, gpus = 8, gpus_per_node = 2, nodes = 2,
                              system = "dgx-h100" } end,
         "8 gpus are not 2 nodes x 2 gpus_per_node", "inconsistent placement refused", true)
t.raises(function() gp.comm { op = "all_reduce", bytes = 1, gpus_per_node = 1.5, system = "dgx-h100" } end,
         "gpus_per_node must be an integer", "fractional gpus_per_node refused", true)

-- all_gather: bytes are the total buffer; busbw = algbw x (n-1)/n.
r = gp.comm { op = "allgather", bytes = GiB, system = "dgx-a100" }
t.is(r.op, "all_gather", "op alias allgather")
t.near(r.busbw, r.algbw * 7 / 8, 1e-12, "all_gather busbw factor 7/8")

-- Small message: latency, tens of microseconds at most, never 0.
-- 8 bytes on NVLink: LL ring 6.6 + 14 x 0.6 us (nvlink latency) = 15 us.
-- 1e-3: the bandwidth term, 8 B on one of nvlink4's 24 channels at NCCL's LL
-- rate per channel, 8 / (0.5 x 450e9 x 0.82 / 24 x 8/14) = 1.8 ns, is 1.2e-4
-- of the time.
r = gp.comm { op = "all_reduce", bytes = 8, system = "dgx-h100" }
t.near(r.time, 6.6e-6 + 14 * nvl4.latency, 1e-3, "8-byte all_reduce = LL ring latency")

-- Forced algorithm; refusal names why.
r = gp.comm { op = "all_reduce", bytes = GiB, system = "dgx-h100", algo = "ring" }
t.is(r.algo, "ring", "forced ring")
t.raises(function() gp.comm { op = "all_reduce", bytes = GiB, system = "dgx-a100", algo = "nvls" } end,
         "nvls needs an NVLink switch", "nvls refused on A100", true)

-- Sweep: 8 B .. 8 GiB doubling is 31 sizes, time growing.  NCCL's tuner
-- picks the algorithm by its own estimate, so where it leaves the LL ring
-- for NVLS (2 MiB) the larger message can run a little faster (32.68 ->
-- 32.52 us): at most 5% dips.
local rows = comm.sweep { op = "all_reduce", system = "dgx-h100" }
t.is(#rows, 31, "8B..8GiB is 31 sizes")
local mono = true
for i = 2, #rows do mono = mono and rows[i].time > 0.95 * rows[i - 1].time end
t.ok(mono, "time grows with size (dips under 5%)")
-- What NCCL picks on one 8 x H100 node: "8B~1MB: uses Algo RING proto LL;
-- 2MB~16GB uses Algo NVLS proto SIMPLE" (nccl-tests#309, NCCL_DEBUG on an
-- HGX H100).  NVLS at 1 MiB would be faster (25 us + 1.125 MiB over
-- 450 x 0.82 x 0.85 GB/s = 28.8 us against the LL ring's 32.7), but NCCL's
-- tuner ranks the LL ring at its Hopper ceiling of 141 GB/s busbw
-- (catalog/archs.lua nccl_ll_max_bw) and keeps it.
local at = {}
for _, row in ipairs(rows) do at[row.bytes] = row end
t.is(at[2^20].algo .. "/" .. at[2^20].proto, "ring/ll", "1 MiB on 8 x H100: LL ring")
t.is(at[2^21].algo .. "/" .. at[2^21].proto, "nvls/simple", "2 MiB on 8 x H100: NVLS")
t.is(comm.topology("dgx-h100").ll_max_bw, 141e9, "Hopper's LL ceiling from its arch")
-- The hosts' CPU maker from the system: DGX A100 runs AMD EPYC 7742s, where
-- NCCL posts network messages at 2 us (1 us on Intel).  A 2-node 8-byte LL
-- ring's last step ends a chain of 2(n-1) = 30 hops, two turns of the
-- 16-rank ring less two hops inside a node, so 2N = 4 of them cross the
-- network: 6.6 + 26 x 2.0 + 4 x 2.7 = 69.4 us on it (NCCL 2.30.7's tuner
-- counts 2(N-1) = 2: 6.6 + 28 x 2.0 + 2 x 2.7 = 68.0).
t.is(comm.topology("dgx-a100").host_amd, true, "dgx-a100: AMD hosts")
t.is(comm.topology("dgx-h100").host_amd, false, "dgx-h100: Intel hosts")
-- How NCCL moves NVLink p2p data, from the GPU: the A100 (compute capability
-- 8.0) reads from the sender, the H100 writes into the receiver
-- (catalog/FORMAT.md, nccl_p2p_read).  A 1 GiB send/recv on 8 GPUs runs on
-- 32 channels (32 x 14 GB/s = 448 GB/s), so the link binds: by writes the
-- ring's whole rate, 900/2 GB/s x 0.82 = 369 GB/s on a DGX H100; by reads
-- 0.83 of 600/2 x 0.77 = 231 GB/s, 191.73 GB/s, on a DGX A100.  The terms
-- are exact products: 1e-9.
t.is(comm.topology("dgx-a100").p2p_read, true, "dgx-a100: NCCL reads p2p data")
t.is(comm.topology("dgx-h100").p2p_read, false, "dgx-h100: NCCL writes p2p data")
t.near(gp.comm { op = "send_recv", bytes = 2^30, gpus = 8, system = "dgx-h100" }.bw_time,
       2^30 / 369e9, 1e-9, "dgx-h100 send_recv 1 GiB: S / 369 GB/s (writes)")
t.near(gp.comm { op = "send_recv", bytes = 2^30, gpus = 8, system = "dgx-a100" }.bw_time,
       2^30 / (231e9 * 0.83), 1e-9, "dgx-a100 send_recv 1 GiB: S / (231 GB/s x 0.83) (reads)")
-- Mid-size sends run on their channels, not the link (comm_algo.c
-- p2p_ch_bw; catalog arch nccl_p2p_nvl_ch_bw).  8 ranks share NCCL's 32
-- p2p channels, 4 a peer; a 64 MiB send keeps them (64 MiB / 4 = 16 MiB,
-- not over the 16 MiB part limit): on a DGX H100 (writes) 4 x 20.6 GB/s =
-- 82.4 GB/s (the 8 x H100 sendrecv_perf log, NCCL 2.29.2: 81.82 GB/s),
-- under the link's 369, so S / 82.4e9 = 814.4 us; on a DGX A100 (reads, no
-- Ampere figure) 4 x 14 = 56 GB/s, 1198.4 us.  Without the arch's figure
-- the H100 falls back to 14 too.  Exact products: 1e-9.
t.is(gp.catalog().archs.hopper.nccl_p2p_nvl_ch_bw, 20.6e9, "Hopper's p2p channel rate")
t.is(gp.catalog().archs.ampere.nccl_p2p_nvl_ch_bw, nil, "no Ampere p2p channel rate")
t.near(gp.comm { op = "send_recv", bytes = 64 * 2^20, gpus = 8, system = "dgx-h100" }.bw_time,
       64 * 2^20 / 82.4e9, 1e-9, "dgx-h100 send_recv 64 MiB: S / (4 x 20.6 GB/s)")
t.near(gp.comm { op = "send_recv", bytes = 64 * 2^20, gpus = 8, system = "dgx-a100" }.bw_time,
       64 * 2^20 / 56e9, 1e-9, "dgx-a100 send_recv 64 MiB: S / (4 x 14 GB/s)")
do
  local topo = comm.topology("dgx-h100")
  t.is(topo.p2p_nvl_ch_bw, 20.6e9, "dgx-h100's topology carries the arch's figure")
  topo.p2p_nvl_ch_bw = 0
  t.near(gp.comm { op = "send_recv", bytes = 64 * 2^20, gpus = 8, topology = topo }.bw_time,
         64 * 2^20 / 56e9, 1e-9, "p2p_nvl_ch_bw 0: NCCL's 14 GB/s a channel")
  topo.p2p_nvl_ch_bw = -1
  t.raises(function() gp.comm { op = "send_recv", bytes = 64 * 2^20, gpus = 8, topology = topo } end,
           "p2p_nvl_ch_bw must be a finite number >= 0", "a negative rate is refused, naming the field",
           true)
end
-- The all-to-all inside a node takes the same split (comm_algo.c
-- a2a_link_eff): 8 ranks, 8 GiB, each of the 7 peers gets S/8 = 1 GiB, whose
-- channels double from 4 (the pool's 32 / 8) to 32 (1 GiB / 4 = 256 MiB over
-- the 16 MiB part limit), 32 x 14 GB/s = 448 GB/s a peer (2.40 ms), so what
-- the GPU sends in all, 7/8 S, binds at its share of the ring's rate.  By
-- writes (dgx-h100) with a peer's channels doubled: 0.94 of 369 GB/s =
-- 346.86 GB/s, 21.67 ms (the 8 x H100 alltoall_perf plateau, 348.03 GB/s
-- busbw, NCCL 2.29.2, xxrjun/nccl-tests-cluster @455de4f); by reads
-- (dgx-a100): 0.83 of 231 GB/s = 191.73 GB/s, 39.20 ms.  Exact products:
-- 1e-9.
local S8 = 8 * GiB
t.near(gp.comm { op = "all_to_all", bytes = S8, gpus = 8, system = "dgx-h100" }.bw_time,
       7 / 8 * S8 / (369e9 * 0.94), 1e-9,
       "dgx-h100 all_to_all 8 GiB: 7/8 S / (369 GB/s x 0.94) (writes)")
t.near(gp.comm { op = "all_to_all", bytes = S8, gpus = 8, system = "dgx-a100" }.bw_time,
       7 / 8 * S8 / (231e9 * 0.83), 1e-9,
       "dgx-a100 all_to_all 8 GiB: 7/8 S / (231 GB/s x 0.83) (reads)")
-- Where the NICs sit behind the GPU's NVLink-C2C to its Grace (GB200: the
-- catalog's host_link), NCCL before 2.27.3 sees a PHB path to them and runs
-- no LL128 across nodes (tuning.cc v2.26.2-1: "typeInter <= PATH_PXB ||
-- (minCompCap >= 90 && typeInter <= PATH_PXN)"; 2.27.3 makes it P2C).
t.is(comm.topology("gb200-nvl72").nic_c2c, true, "gb200-nvl72: NICs behind NVLink-C2C")
t.is(comm.topology("dgx-h100").nic_c2c, false, "dgx-h100: PCIe NICs")
-- 2 x DGX H100 (NVLS off), 4 MiB: NCCL 2.26.2 runs the LL128 tree; with the
-- NICs behind C2C the same release has no LL128 across nodes (Simple), and
-- 2.27.3 has it back: the LL128 tree at the same time, to the bit.
local function c2c(nccl, flag)
  return gp.comm { system = "dgx-h100", nodes = 2, bytes = 4 * 2 ^ 20, nvls = "off",
                   nccl = nccl, nic_c2c = flag }
end
local pcie, old, new = c2c("2.26.2", false), c2c("2.26.2", true), c2c("2.27.3", true)
t.is(pcie.proto, "ll128", "2 x dgx-h100 4 MiB, NCCL 2.26.2, PCIe NICs: LL128 (" .. pcie.algo .. ")")
t.ok(old.proto ~= "ll128", "... NICs behind C2C, 2.26.2: no LL128 (" .. old.algo .. "/" .. old.proto .. ")")
t.ok(new.proto == "ll128" and new.time == pcie.time, "... 2.27.3: LL128 again, same time")
-- One node: no network path, LL128 stays (the 72 GPUs of a GB200 NVL72,
-- 512 MiB, NVLS off, 2.26.2: the LL128 ring, as with nic_c2c false).
local one = { system = "gb200-nvl72", gpus = 72, bytes = 512 * 2 ^ 20, nccl = "2.26.2", nvls = "off" }
local r72 = gp.comm(one)
one.nic_c2c = false
t.ok(r72.proto == "ll128" and r72.time == gp.comm(one).time,
     "one node: LL128 stays, nic_c2c moves nothing (" .. r72.algo .. "/" .. r72.proto .. ")")
r = gp.comm { op = "all_reduce", bytes = 8, gpus = 16, system = "dgx-a100", nodes = 2, algo = "ring" }
t.near(r.latency, 69.4e-6, 1e-9, "2 x DGX A100: 8 B LL ring 69.4 us, 2N network hops")
-- All-gather: a chain of n-1 = 15 hops, a turn less one hop inside a node,
-- crosses N = 2 times: 6.6 + 13 x 2.0 + 2 x 2.7 = 38.0 us.
r = gp.comm { op = "all_gather", bytes = 8, gpus = 16, system = "dgx-a100", nodes = 2, algo = "ring" }
t.near(r.latency, 38.0e-6, 1e-9, "2 x DGX A100: 8 B LL all-gather ring 38.0 us, N network hops")
-- One rank a node: every hop crosses, 2(n-1) = 2(N-1) = 2 of them, each
-- at the tree's network step NCCL gives one rank a node (5.0 us,
-- "ppn == 1 ? hwLat[NCCL_HW_NET][NCCL_ALGO_TREE][p]"): 6.6 + 2 x 5.0 = 16.6 us.
r = gp.comm { op = "all_reduce", bytes = 8, gpus = 2, system = "dgx-a100", nodes = 2, algo = "ring" }
t.near(r.latency, 16.6e-6, 1e-9, "2 x 1 A100: 8 B LL ring 16.6 us, 2(N-1) network hops")

-- Errors name the argument.
t.raises(function() gp.comm { op = "all_rdeuce", bytes = 1, system = "dgx-h100" } end,
         "unknown op 'all_rdeuce'", "unknown op", true)
t.raises(function() gp.comm { op = "all_reduce", bytes = -1, system = "dgx-h100" } end,
         "bytes must be a number >= 0", "negative bytes", true)
t.raises(function() gp.comm { op = "all_reduce", bytes = 0 / 0, system = "dgx-h100" } end,
         "bytes must be a number >= 0", "NaN bytes", true)
t.raises(function() gp.comm { op = "all_reduce", bytes = 1, gpus = 0, system = "dgx-h100" } end,
         "gpus must be >= 1", "zero gpus", true)
-- 12 GPUs of 8-GPU nodes: the launcher fills 8 + 4 (engine/comm.h gp_group),
-- and the collective prices on the node of 4.
do
  local r = gp.comm { op = "all_reduce", bytes = GiB, gpus = 12, system = "dgx-h100" }
  t.ok(r.nodes == 2 and r.ppn == 4, "12 gpus of dgx-h100: 8 + 4, priced on the 4")
end
t.raises(function() gp.comm { op = "all_reduce", bytes = 1 } end,
         "give system = ID, gpu = ID or topology", "no topology", true)
t.raises(function() core.comm_cost({ gpus_per_node = "8" }, "all_reduce", 1, 8) end,
         "topology.gpus_per_node must be a number", "binding names the field", true)
t.raises(function() core.comm_cost({ gpus_per_node = 8, up_bw = 1e9, up_kind = "pci" },
                                   "all_reduce", 1, 8) end,
         "topology.up_kind must be 'nvlink' or 'pcie'", "binding: unknown link kind", true)
t.raises(function() core.comm_cost({ gpus_per_node = 8, up_bw = 1e9, up_achievable = 0 },
                                   "all_reduce", 1, 8) end,
         "scale-up achievable must be in (0, 1]", "kernel range check", true)

-- Predictor: a synthetic case, and a case it must decline.
local predict = require "gpuplan.predict.collective"
local case = { kind = "collective", collective = "all_reduce", bytes = 8 * GiB,
               hardware = { gpu = "a100-sxm-80gb", gpus = 8, gpus_per_node = 8 },
               measured = { metric = "busbw_gbps", value = 230 } }
local p = predict(case, cat)
-- 0.2%: the predicted busbw is the ring's, whose 56 us latency against
-- 8 GiB x 1.75 / (300e9 x 0.77) = 65 ms is 0.09% of the time.
t.near(p.value, nvl3.bw * nvl3.achievable / 1e9, 0.002, "predictor: GB/s from the gpu's fabric")
case.hardware.gpu = "no-such-gpu"
local none, why = predict(case, cat)
t.ok(none == nil and why:find("unknown gpu", 1, true), "predictor declines unknown gpu")

-- The NCCL release whose tuner picks the algorithm.  Codes as NCCL's
-- NCCL_VERSION_CODE: 2 x 10000 + 20 x 100 + 5.
t.is(comm.nccl_code("2.20.5"), 22005, "nccl 2.20.5: code 22005")
t.is(comm.nccl_code("2.28"), 22800, "nccl 2.28: patch 0")
-- A source that names no release but its date: the newest tagged by then
-- (2.21.5 was tagged 2024-04-02, 2.18.6 on 2023-10-10 after 2.19.3).
t.is(comm.nccl_at("2024-04-01"), "2.20.5", "2024-04-01: 2.20.5")
t.is(comm.nccl_at("2024-04-02"), "2.21.5", "2024-04-02: 2.21.5")
t.is(comm.nccl_at("2023-10-10"), "2.19.3", "2023-10-10: 2.19.3, not 2.18.6")
t.is(comm.nccl_at("2018-01-01"), nil, "before the first release: none")
-- 2 x 8 H20 with 8 NDR NICs, 1 MiB: the latest tuner (20.9 us a NVLS_TREE
-- step) keeps the tree; NCCL 2.20.5's (14 us) runs NVLS_TREE, whose 2
-- network steps wait for 15 more proxy posts each (16 NVLS channels, 1 us
-- a post on Intel hosts, one message an NVLS_TREE step): 30 us over its
-- 53 us latency.
local h20 = comm.from_fabrics({ scaleup = "nvlink4", gpus_per_node = 8, nodes = 2, nics = 8,
                                nic_fabric = "ib-ndr-400", gpu = cat.gpus.h20 }, cat)
local latest = gp.comm { op = "all_reduce", bytes = 2 ^ 20, gpus = 16, topology = h20 }
local old = gp.comm { op = "all_reduce", bytes = 2 ^ 20, gpus = 16, topology = h20, nccl = "2.20.5" }
t.is(latest.algo, "tree", "H20 2 x 8, 1 MiB, latest NCCL: tree")
t.is(old.algo, "nvls", "H20 2 x 8, 1 MiB, NCCL 2.20.5: NVLS_TREE")
t.near(old.bw_time, 30e-6, 1e-9, "NVLS_TREE 1 MiB: the proxy's 2 x 15 x 1 us of posts")
-- The ring's network steps as the release counted them: 2 x HGX H800 at
-- 256 KiB, the LL ring's latency counts its chain's 4 network steps, 6.6 +
-- 26 x 1.0 + 4 x 2.7 = 43.4 us, and 12.6 us of bytes: 56.0 us.  NCCL 2.23.4
-- ranks it with 2(N-1) = 2 (40.0 + 12.6 = 52.6 us), ahead of the LL128
-- tree's 54.8, and runs the ring; 2.22.3 counted 2N = 4 (56.0) and runs
-- the tree.
local h800 = { op = "all_reduce", bytes = 2 ^ 18, system = "hgx-h800", nodes = 2 }
h800.nccl = "2.23.4"
local r23 = gp.comm(h800)
h800.nccl = "2.22.3"
local r22 = gp.comm(h800)
t.is(r23.algo .. "/" .. r23.proto, "ring/ll", "NCCL 2.23.4, 2 x H800, 256 KiB: the LL ring")
t.near(r23.time, 56.0e-6, 1e-3, "the ring's time counts its chain's 4 network steps")
t.is(r22.algo .. "/" .. r22.proto, "tree/ll128", "NCCL 2.22.3 counted 2N ring steps: the tree")
for _, bad in ipairs { "2.20.x", "3.0.1", "v2.20.5", 2.2 } do
  t.raises(function() gp.comm { op = "all_reduce", bytes = 1, system = "dgx-h100", nccl = bad } end,
           "comm: nccl must be", "nccl " .. tostring(bad) .. " refused, named", true)
end
-- The predictor takes the release from source.version, or assumes it from
-- source.date and says so.
local hcase = { kind = "collective", collective = "all_reduce", bytes = 2 ^ 20,
                hardware = { gpu = "h20", gpus = 16, gpus_per_node = 8,
                             inter_node = "ib-ndr-400", nics_per_node = 8 },
                measured = { metric = "busbw_gbps", value = 16.14 },
                source = { date = "2024-04-01" } }
local hp = predict(hcase, cat)
t.ok(table.concat(hp.defaults, ";"):find("nccl=2.20.5 (assumed: the newest NCCL release at "
     .. "the source's date 2024-04-01)", 1, true), "predictor: nccl assumed from the date, said")
t.ok(hp.detail:find("^nvls/"), "predictor: 2.20.5 runs NVLS_TREE at 1 MiB")
hcase.source = { version = "2.28.9", date = "2024-04-01" }
hp = predict(hcase, cat)
t.ok(hp.detail:find("^tree/"), "predictor: a stated release wins over the date")
-- A date before the oldest release modelled (2.3.7, 2018-10-24) names no
-- tuner: the case is not predicted, and says why, rather than priced
-- silently with the latest.
hcase.source = { date = "2018-01-15" }
local hn, hwhy = predict(hcase, cat)
t.ok(hn == nil and tostring(hwhy):find("source.date 2018-01-15 precedes the oldest NCCL "
     .. "release modelled (2.3.7, tagged 2018-10-24): give source.version", 1, true),
     "predictor: a date before 2.3.7 is refused, naming it")
-- source.date is read as a day of the calendar: a month or day that does
-- not exist is refused by path, not compared with the NCCL tags' dates as
-- a string; 2024-02-29 (a leap day) is read.
local function read_date(date)
  return t.read_case { id = "date-test", kind = "collective", collective = "all_reduce",
                       bytes = 1024, hardware = { gpu = "h20", gpus = 8 },
                       measured = { metric = "busbw_gbps", value = 1 }, source = { date = date } }
end
for _, bad in ipairs { "2024-13-01", "2024-04-31", "2023-02-29", "2024-00-10", "2024-4-1",
                       20240401 } do
  local okr, e = read_date(bad)
  t.ok(not okr and e:find("case 'date-test': field 'source.date': expected a date as "
       .. '"2024-04-01" (YYYY-MM-DD), got ' .. (type(bad) == "string"
       and string.format("%q", bad) or tostring(bad)), 1, true),
       "source.date " .. tostring(bad) .. " refused, named")
end
t.ok((read_date("2024-02-29")), "source.date 2024-02-29 (a leap day) read")


-- The NCCL terms: a fabric's nccl block (nvlink5 gives NCCL's Blackwell
-- NVLS efficiency, 0.74), else the kind's defaults (nvlink4: 0.85; its block
-- gives only its channels).
t.is(comm.topology("dgx-b200").up_nccl.nvls_efficiency, 0.74, "nvlink5's own NVLS efficiency")
t.is(comm.topology("dgx-h100").up_nccl.nvls_efficiency, nil, "nvlink4 keeps the default NVLS terms")
-- nvlink4's channels are what NCCL's search gives 18 Hopper links (search.cc,
-- connect.cc, 2.18-2.30.7): 18 x 20.6 = 370.8 GB/s holds 6 channels at the
-- Hopper table's first speed, 60 GB/s (360); 50, 40 and 30 GB/s give no
-- more (350, 360, 360) and 24 is below 0.49 x 60, so the search keeps 6;
-- ncclTopoDupChannels doubles them (60 >= 50) to 12 at 30 and
-- ncclTopoPostset to 24.  Not two a link (36, capped at 32): that is
-- Ampere's table (12 x 20 = 240: 6 at 40 -> 24), whose dgx-a100 keeps 24.
t.is(comm.topology("dgx-h100").up_nccl.channels, 24, "nvlink4: NCCL's 24 channels on 18 links")
t.is(comm.topology("dgx-a100").up_nccl.channels, 24, "nvlink3: NCCL's 24 channels on 12 links")
-- NVLS on one DGX H100, 1 GiB: nvls_latency + S (1 + 1/8) / (450e9 x
-- achievable x eff) (engine/comm.c); with up_nccl overriding eff to 0.5
-- and the latency to 5 us the bandwidth term is 0.85 / 0.5 = 1.7 times
-- the default's.  Both pay the NVLS pipeline's fill: 16 blocks x 8 heads x
-- 128 KiB chunks = 16 MiB a loop, 64 loops in 1 GiB: x (1 + 2/64).  1e-12
-- relative: the same arithmetic.
local bw = nvl4.bw * nvl4.achievable
local fill = 1 + 2 / 64
local d = gp.comm { op = "all_reduce", bytes = GiB, system = "dgx-h100", algo = "nvls" }
local o = gp.comm { op = "all_reduce", bytes = GiB, system = "dgx-h100", algo = "nvls",
                    up_nccl = { nvls_efficiency = 0.5, nvls_latency = 5e-6 } }
t.near(d.time, 25e-6 + GiB * 1.125 / (bw * 0.85) * fill, 1e-12, "NVLS at the default 0.85 and 25 us")
t.near(o.time, 5e-6 + GiB * 1.125 / (bw * 0.5) * fill, 1e-12, "NVLS at the topology's own terms")
t.raises(function() gp.comm { op = "all_reduce", bytes = 1e6, system = "dgx-h100",
  up_nccl = { nvls_eff = 0.5 } } end, "comm: up_nccl: unknown field 'nvls_eff'",
  "a misspelled nccl term is named", true)
t.raises(function() gp.comm { op = "all_reduce", bytes = 1e6, system = "dgx-h100",
  up_nccl = { nvls_efficiency = 2 } } end, "nvls_efficiency must be in (0, 1] (got 2)",
  "an NVLS efficiency out of range is refused", true)

-- nvlink3 (8 x A100) carries LL128 at its measured 0.60 of the link, not
-- 120/128 (catalog/fabrics/nvlink.lua).  At 16 MiB NCCL's tuner runs the
-- ring with LL128 either way (its estimate keeps 0.92 of the link), so the
-- two differ by the bandwidth term alone: 16 MiB x 1.75 x (1 / (231e9 x
-- 0.60) - 1 / (231e9 x 120/128)) = 211.8 - 135.6 = 76.3 us (bw 300e9 x
-- achievable 0.77).  1e-9 relative: the same arithmetic.
local nvl3 = cat.fabrics.nvlink3
t.is(comm.topology("dgx-a100").up_nccl.ll128_efficiency, 0.60, "nvlink3's own LL128 share")
local S16 = 16 * 2 ^ 20
local a_meas = gp.comm { op = "all_reduce", bytes = S16, system = "dgx-a100" }
local a_nom = gp.comm { op = "all_reduce", bytes = S16, system = "dgx-a100",
                        up_nccl = { ll128_efficiency = 120 / 128 } }
t.is(a_meas.proto, "ll128", "16 MiB on a DGX A100: LL128")
t.is(a_nom.proto, "ll128", "16 MiB at 120/128: LL128 too")
local a3 = nvl3.bw * nvl3.achievable
t.near(a_meas.time - a_nom.time, 1.75 * S16 * (1 / (a3 * 0.60) - 1 / (a3 * 120 / 128)),
       1e-9, "LL128's share moves the bandwidth term alone")
t.raises(function() gp.comm { op = "all_reduce", bytes = 1e6, system = "dgx-a100",
  up_nccl = { ll128_efficiency = 0 } } end, "ll128_efficiency must be in (0, 1] (got 0)",
  "an LL128 share out of range is refused", true)

-- PCIe with GPU peer-to-peer stages nothing in host memory: a 4-card
-- ring at 1 GiB runs at the link's achievable rate, pcie4-p2p's 32e9 x
-- 0.80 = 25.6 GB/s of bus bandwidth less the latency term (24 x 6.7 us
-- + 8.4 us of 1.6e9 B / 25.6e9 = 63 ms: 0.26%), where the host-staged
-- pcie4 runs at 43.0 / 2 / 38.5 = 0.5584 of it (HOST_STAGED_BW: two
-- RTX 5090s without P2P, nccl-tests#287), 25.6e9 x 0.5584 = 14.30 GB/s,
-- and doubles the hop latency.  Tolerance 0.5%: the latency terms.
do
  local cm = require "gpuplan.comm"
  local p2p = cm.from_fabrics({ scaleup = "pcie4-p2p", gpus_per_node = 4 })
  local staged = cm.from_fabrics({ scaleup = "pcie4", gpus_per_node = 4 })
  t.is(p2p.up_crosses_cpu, false, "pcie4-p2p does not cross the CPU")
  local a = gp.comm { op = "all_reduce", bytes = GiB, gpus = 4, topology = p2p }
  local b = gp.comm { op = "all_reduce", bytes = GiB, gpus = 4, topology = staged }
  t.near(a.busbw, 25.6e9, 0.005, "P2P PCIe ring at the link's achievable rate")
  t.near(b.busbw, 25.6e9 * 43.0 / 2 / 38.5, 0.005,
    "host-staged PCIe at the measured both-ways share of it")
end

-- EFA (two P5s: 8 H100 on NVLink 4 and 32 x 100 Gb/s EFA adapters each).
-- AWS's tuner plugin prices an EFA network step at 20 us (catalog efa-100),
-- not InfiniBand's 2.7.  8 bytes run NCCL's LL tree: 6.8 + 2 x (7 x 0.6
-- (NVLink hops) + 20 + 2.3 (the tree's extra at a network hop, NCCL's
-- hwLat NET TREE LL 5.0 less the ring's 2.7)) = 59.8 us; on InfiniBand the
-- same tree is 25.2 us.  Published runs on two P5s take 65-88 us at 8 B
-- (validation/cases.json, coll-allreduce-h100-sxm-16g-efa-8B-*).
-- Tolerance 1e-3: the bandwidth term of 8 bytes.
do
  local efa = cat.fabrics["efa-100"]
  t.near(efa.latency, 20e-6, 1e-9, "efa-100: AWS's tuner's 20 us a network step")
  local p5 = comm.from_fabrics({ scaleup = "nvlink4", gpus_per_node = 8, nodes = 2,
                                 gpu = "h100-sxm", nic_fabric = "efa-100", nics = 32 })
  local ib = comm.from_fabrics({ scaleup = "nvlink4", gpus_per_node = 8, nodes = 2,
                                 gpu = "h100-sxm", nic_fabric = "ib-ndr-400", nics = 8 })
  local e = gp.comm { op = "all_reduce", bytes = 8, gpus = 16, topology = p5 }
  local i = gp.comm { op = "all_reduce", bytes = 8, gpus = 16, topology = ib }
  t.is(e.algo .. "/" .. e.proto, "tree/ll", "8 B on two P5s: LL tree")
  t.near(e.time, 59.8e-6, 1e-3, "8 B on two P5s: 6.8 + 2 x (4.2 + 20 + 2.3) us")
  t.near(i.time, 25.2e-6, 1e-3, "the same tree on InfiniBand: 2.7 us a step")
end

-- One thread driving several GPUs (nccl-tests -g N) launches N kernels an
-- iteration, 4.2 us each (comm.LAUNCH_PER_GPU, from nccl-tests#123): 8 B
-- on one DGX A100 costs max(NCCL's LL ring 6.6 + 14 x 0.6 = 15 us, 8 x 4.2
-- = 33.6 us) = 33.6 us, its busbw scaled to the new time; 1 GiB (8.19 ms)
-- keeps its time.  1e-9: the same arithmetic.
do
  t.near(comm.LAUNCH_PER_GPU, 4.2e-6, 1e-12, "4.2 us a launch")
  local one = gp.comm { op = "all_reduce", bytes = 8, system = "dgx-a100" }
  local g8 = gp.comm { op = "all_reduce", bytes = 8, system = "dgx-a100", gpus_per_thread = 8 }
  t.near(one.time, 15e-6, 1e-3, "8 B, a GPU a thread: NCCL's LL ring")
  t.is(one.launch_bound, false, "and the GPUs set the time")
  t.near(g8.time, 8 * 4.2e-6, 1e-9, "8 B, 8 GPUs a thread: 8 launches")
  t.is(g8.launch_bound, true, "the launches set the time")
  t.near(g8.busbw / g8.algbw, 1.75, 1e-9, "busbw keeps 2(n-1)/n of algbw")
  t.near(g8.algbw, 8 / (8 * 4.2e-6), 1e-9, "algbw = bytes / the launch floor")
  local big = gp.comm { op = "all_reduce", bytes = GiB, system = "dgx-a100", gpus_per_thread = 8 }
  local big1 = gp.comm { op = "all_reduce", bytes = GiB, system = "dgx-a100" }
  t.near(big.time, big1.time, 1e-12, "1 GiB: the floor does not bind")
  t.raises(function() gp.comm { op = "all_reduce", bytes = 8, system = "dgx-a100",
    gpus_per_thread = 16 } end, "comm: gpus_per_thread 16 exceeds the 8 gpus",
    "more GPUs a thread than ranks is refused", true)
  t.raises(function() gp.comm { op = "all_reduce", bytes = 8, system = "dgx-a100",
    gpus_per_thread = 1.5 } end, "comm: gpus_per_thread must be an integer (got 1.5)",
    "a fractional count is refused", true)
  -- One thread drives the GPUs of its own node: 16 ranks over two DGX
  -- A100s cannot be one thread's.
  t.raises(function() gp.comm { op = "all_reduce", bytes = 8, system = "dgx-a100", gpus = 16,
    gpus_per_thread = 16 } end, "comm: gpus_per_thread 16 exceeds the 8 gpus a node holds",
    "more GPUs a thread than a node holds is refused", true)
  -- Every thread drives as many GPUs (nccl-tests' ranks are processes x
  -- threads x -g): 3 a thread cannot make a node of 8.
  t.raises(function() gp.comm { op = "all_reduce", bytes = 8, system = "dgx-a100",
    gpus_per_thread = 3 } end, "comm: gpus_per_thread 3 does not divide the 8 gpus a node runs",
    "a count that does not divide the node's GPUs is refused", true)
  -- A count given as a string is shown as one, not as the integer it reads as.
  t.raises(function() gp.comm { op = "all_reduce", bytes = 8, system = "dgx-a100",
    gpus_per_thread = "2" } end, 'comm: gpus_per_thread must be an integer (got string "2")',
    "a string count is refused, shown quoted", true)
end

-- NCCL's tuner on 2 nodes (search.cc pass 2, tuning.cc): a ring's graph
-- runs at its NICs' speed (bwIntra = bwInter), a tree's intra speed rises
-- to twice its network speed, and the tree's busBw is capped at graph
-- channels x perChMaxTreeBw (Ampere N2: 23.6 GB/s, catalog/archs.lua).
-- 2 x 8 A100 with 4 x 100 Gb/s NICs (p4de's EFA): bn = 4 x 12.5 x 0.85 =
-- 42.5 GB/s; ring algbw 42.5 x 16/30 = 22.7; tree 0.5 x min(0.92 x 85,
-- 4 channels x 23.6) = 39.1 GB/s: NCCL runs the tree (the 2 x p4de log in
-- aws-samples/awsome-distributed-training reaches 78.3 GB/s busbw at 2 GiB,
-- above the 50 GB/s a ring could carry over 4 x 100 Gb/s).  With 4 x 200
-- Gb/s (nccl-tests#100's HGX A100s, ring at 91 GB/s): ring 94 x 16/30 =
-- 50.1, tree capped at 0.5 x 94.4 = 47.2: the ring stays.
do
  local cat = gp.catalog()
  local function two(nic)
    return comm.from_fabrics({ scaleup = "nvlink3", gpus_per_node = 8, nodes = 2, nics = 4,
                               nic_fabric = nic, gpu = "a100-sxm-80gb" }, cat)
  end
  t.is(cat.archs.ampere.nccl_tree_ch_bw.nodes2, 23.6e9, "Ampere's tree channel ceiling, 2 nodes")
  local efa = gp.comm { op = "all_reduce", bytes = 2 * GiB, gpus = 16, topology = two("efa-100") }
  t.is(efa.algo, "tree", "4 x 100 Gb/s on 2 nodes: NCCL's tuner picks the tree")
  local hdr = gp.comm { op = "all_reduce", bytes = 8 * GiB, gpus = 16, topology = two("ib-hdr-200") }
  t.is(hdr.algo, "ring", "4 x 200 Gb/s: the tree's channel ceiling keeps the ring")
  local nocap = two("ib-hdr-200")
  nocap.tree_ch_bw2 = 0
  t.is(gp.comm { op = "all_reduce", bytes = 8 * GiB, gpus = 16, topology = nocap }.algo, "tree",
    "without the ceiling the tree would win there")
end

-- NCCL's tuner ranks the LL128 ring across nodes at no more than its
-- graph's channels x perChMaxRingLL128Bw (catalog arch
-- nccl_ring_ll128_ch_bw, Hopper 36.7 GB/s).  A P5's joined EFA are 8
-- devices of 400 Gb/s, 8 search channels (not doubled: < 50 GB/s with
-- more than 4): LL128 at min(0.92 x 340, 8 x 36.7) = 293.6 GB/s of bus
-- bandwidth against Simple's 340 (32 x 12.5 GB/s x 0.85), 0.86 where 0.92
-- alone left LL128 at 0.92.  All_gather on 16 x 8 P5 at 2 GiB, 16 MiB a
-- rank: the estimate's bandwidth terms differ by S x 127/128 x (1/293.6 -
-- 1/340) = 990 us, over the ~600 us more latency the Simple ring's 127
-- steps carry (1175 against 577 us), so NCCL runs Simple there -- where
-- the source's curves dip on 2, 4 and 8 nodes (16 MiB a rank;
-- docs/validation.md) -- while at 0.92 alone the difference, S x 127/128
-- x (1/312.8 - 1/340) = 545 us, is under it and LL128 would stay.
do
  local cat = gp.catalog()
  t.is(cat.archs.hopper.nccl_ring_ll128_ch_bw, 36.7e9, "Hopper's LL128 ring channel ceiling")
  t.is(cat.archs.ampere.nccl_ring_ll128_ch_bw, 20e9, "Ampere's LL128 ring channel ceiling")
  local function p5(cap)
    local topo = comm.from_fabrics({ scaleup = "nvlink4", gpus_per_node = 8, nodes = 16, nics = 32,
                                     nic_fabric = "efa-100", gpu = cat.gpus["h100-sxm"],
                                     cpu_vendor = "amd" }, cat)
    topo.ring_ll128_ch_bw = cap
    return gp.comm { op = "all_gather", bytes = 2 * GiB, gpus = 128, topology = topo }
  end
  local capped, free = p5(36.7e9), p5(0)
  t.is(capped.proto, "simple", "P5 16 nodes, 2 GiB all_gather: the ceiling ranks Simple first")
  t.is(free.proto, "ll128", "without the ceiling LL128 would stay")
  t.raises(function() p5(-1) end, "ring_ll128_ch_bw must be a finite number >= 0",
           "a negative ceiling is refused, naming the field", true)
end

-- NCCL caps the LL128 tree's bus bandwidth again, at its graph's channels
-- x perChMaxTreeLL128Bw, after taking 120/128 of the tree's capped busBw
-- (tuning.cc; catalog arch nccl_tree_ll128_ch_bw, Hopper 36.7 GB/s on 2
-- nodes, 29.0 on 3 or more), and the block that drives each tree moves no
-- more (tree_sm_time).  256 MiB tree/LL128 all_reduce on 16 x 8 P5 (tree
-- factor 1 at 2^22 x 64 B; a region holds the tree on LL128, tree_share
-- 1 so the channels bind): 8 search channels x min(36 x 120/128 = 33.75,
-- 29) GB/s: 2S / (8 x 29e9) = 2314.2 us, against 2S / (8 x 36e9) =
-- 1988.4 us without it (2S / (8 x 36e9 x 120/128): NCCL takes 120/128
-- of the tree's ceiling with or without the LL128 figure).  On 2 nodes
-- min(41.4 x 120/128 = 38.81, 36.7) =
-- 36.7 GB/s: 2S / (8 x 36.7e9) = 1828.6 us, over the NICs' S / 318.75
-- GB/s = 842.1 us.  With an A100's ceilings on the same nodes (3 or more)
-- the tree's x 120/128 binds: min(17.8 x 120/128 = 16.69, 20) GB/s,
-- 2S / (8 x 16.69e9) = 4021.5 us.  Tolerance 1 ns: the
-- hand figures are exact but for float rounding.
do
  -- EFA's NCCL terms with a region that picks the LL128 tree at every
  -- size and rank count (the tuner's choice forced; one place for both
  -- uses below)
  local function ll128_region(topo)
    local n = {}
    for k, v in pairs(cat.fabrics["efa-100"].nccl) do n[k] = v end
    n.tree_share = 1
    n.regions = { { algo = "tree", proto = "ll128",
      vertices = { { 0, 1 }, { 2 ^ 40, 1 }, { 2 ^ 40, 2 ^ 20 }, { 0, 2 ^ 20 } } } }
    topo.nic_nccl = n
  end
  local function ll128_tree(nodes, cap, gpu)
    local topo = comm.from_fabrics({ scaleup = "nvlink4", gpus_per_node = 8, nodes = nodes,
                                     nics = 32, nic_fabric = "efa-100",
                                     gpu = cat.gpus[gpu or "h100-sxm"], cpu_vendor = "amd" }, cat)
    ll128_region(topo)
    if cap then topo.tree_ll128_ch_bw2, topo.tree_ll128_ch_bw3 = cap, cap end
    -- On 2 nodes AWS's tuner leaves the choice to NCCL's (no region):
    -- the tree is forced there, and NCCL's ranking keeps it on LL128.
    local r = gp.comm { op = "all_reduce", bytes = 256 * 2 ^ 20, gpus = 8 * nodes, topology = topo,
                        algo = nodes == 2 and "tree" or nil }
    assert(r.algo == "tree" and r.proto == "ll128", r.algo .. "/" .. r.proto)
    return r
  end
  local S256 = 256 * 2 ^ 20
  t.is(cat.archs.hopper.nccl_tree_ll128_ch_bw.nodes3, 29e9, "Hopper's LL128 tree channel ceiling, 3+ nodes")
  t.is(cat.archs.ampere.nccl_tree_ll128_ch_bw.nodes2, 20e9, "Ampere's LL128 tree channel ceiling, 2 nodes")
  t.near(ll128_tree(16).bw_time, 2 * S256 / (8 * 29e9), 1e-9,
         "P5 16 nodes, LL128 tree: 8 channels x 29 GB/s")
  t.near(ll128_tree(16, 0).bw_time, 2 * S256 / (8 * 36e9 * 120 / 128), 1e-9,
         "without the LL128 ceiling: the tree ceiling's 8 x 36 GB/s x 120/128")
  t.near(ll128_tree(2).bw_time, 2 * S256 / (8 * 36.7e9), 1e-9,
         "P5 2 nodes, LL128 tree: 8 channels x 36.7 GB/s, over the NICs' rate")
  t.near(ll128_tree(16, nil, "a100-sxm-80gb").bw_time, 2 * S256 / (8 * 17.8e9 * 120 / 128), 1e-9,
         "A100's ceilings on the same nodes: the tree's 17.8 GB/s x 120/128 under LL128's 20")
  t.raises(function() ll128_tree(16, -1) end, "tree_ll128_ch_bw2 must be a finite number >= 0",
           "a negative ceiling is refused, naming the field", true)
  -- The ceilings are NCCL's tuner: where only the LL128 figure is given
  -- it binds alone, 2S / (8 x 29e9) = 2314.2 us (it was dropped with the
  -- tree's figure absent, leaving the NICs' 2S / 318.75e9 = 1684.3 us).
  local h = comm.from_fabrics({ scaleup = "nvlink4", gpus_per_node = 8, nodes = 16, nics = 32,
                                nic_fabric = "efa-100", gpu = cat.gpus["h100-sxm"],
                                cpu_vendor = "amd" }, cat)
  local function forced(topo)
    ll128_region(topo)
    local r = gp.comm { op = "all_reduce", bytes = S256, gpus = 128, topology = topo }
    assert(r.algo == "tree" and r.proto == "ll128", r.algo .. "/" .. r.proto)
    return r
  end
  h.tree_ch_bw3 = 0
  t.near(forced(h).bw_time, 2 * S256 / (8 * 29e9), 1e-9,
         "the LL128 figure alone: 8 channels x 29 GB/s")
  -- RCCL compiles NCCL's per-channel caps out of its AMD build (its
  -- bwRatio tables instead, ROCm/rccl src/graph/tuning.cc) and HCCL runs
  -- no NCCL protocol: the catalog gives AMD's and Gaudi's archs no
  -- figure, and an MI300X node on the same NICs runs its LL128 tree at
  -- its links' rate: xGMI's 448 GB/s x 0.709 (7 x the slowest link,
  -- catalog xgmi4) x 120/128 = 297.78 GB/s, under the NICs' 318.75,
  -- 2S / 297.78e9 = 1802.9 us -- where Hopper's ceiling would give
  -- 2314.2 us.
  local amd = comm.from_fabrics({ scaleup = "xgmi4", gpus_per_node = 8, nodes = 16, nics = 32,
                                  nic_fabric = "efa-100", gpu = cat.gpus["mi300x"],
                                  cpu_vendor = "amd" }, cat)
  t.ok(amd.tree_ch_bw3 == nil and amd.tree_ll128_ch_bw3 == nil, "an MI300X's topology: no "
    .. "NCCL tree ceiling")
  -- RCCL runs LL128 only with ll128Enabled (tests/lua/rccl_ll128.t); as
  -- RCCL_LL128_FORCE_ENABLE=1 would, turn it on to reach the LL128 tree.
  amd.ll128_off = false
  t.near(forced(amd).bw_time, 2 * S256 / (448e9 * 0.709 * 120 / 128), 1e-9,
         "MI300X (RCCL): the LL128 tree at its links' rate, no NCCL channel ceiling")
end

-- gpu = ID: the node built from the GPU alone.  An H100 PCIe's is its
-- bridged pair (catalog: scaleup nvlink-bridge, domain 2): 2 ranks, the
-- bridge's per-direction rate and achievable fraction.  A 2-rank ring
-- all-reduce's busbw is the link's rate for a large message: 300 GB/s x
-- 0.69 = 207 GB/s, less its latency (tens of us of the 5.2 ms 1 GiB
-- takes): within 1%.
do
  local bridge = cat.fabrics["nvlink-bridge"]
  local r = gp.comm { op = "all_reduce", bytes = GiB, gpu = "h100-pcie" }
  t.is(r.gpus, 2, "gpu = h100-pcie: its bridged pair, 2 ranks")
  t.is(r.topology.up_bw, bridge.bw, "the bridge's per-direction bandwidth")
  t.is(r.topology.up_achievable, bridge.achievable, "the bridge's achievable fraction")
  t.is(r.gpu, "h100-pcie", "the result names the GPU")
  local streaming = bridge.bw * bridge.achievable
  t.ok(r.busbw < streaming and r.busbw > 0.99 * streaming,
       string.format("1 GiB on the pair: %.1f GB/s, just under %.1f", r.busbw / 1e9, streaming / 1e9))
  -- fabric = ID joins the node's GPUs over another scale-up fabric: 4 RTX
  -- 4090s of a pcie-8x-4090 box with P2P on (pcie4-p2p) take the P2P
  -- link's rate and no longer stage through the host.
  local p2p = cat.fabrics["pcie4-p2p"]
  local staged = gp.comm { op = "all_reduce", bytes = GiB, system = "pcie-8x-4090", gpus = 4 }
  local direct = gp.comm { op = "all_reduce", bytes = GiB, system = "pcie-8x-4090", gpus = 4,
                           fabric = "pcie4-p2p" }
  t.is(direct.topology.up_bw, p2p.bw, "fabric: the P2P link's bandwidth")
  t.is(direct.topology.up_crosses_cpu, p2p.crosses_cpu == true, "fabric: its own host path")
  t.is(staged.topology.up_crosses_cpu, true, "without it the box stages through the host")
  t.ok(direct.busbw > staged.busbw, "P2P on is faster than staging through the host")
  -- the same node built from the GPU: 8 cards on its PCIe generation
  local built = gp.comm { op = "all_reduce", bytes = GiB, gpu = "rtx-4090", gpus = 4,
                          fabric = "pcie4-p2p" }
  t.is(built.time, direct.time, "gpu = rtx-4090 over pcie4-p2p prices as the system does")
  t.raises(function() gp.comm { op = "all_reduce", bytes = 1, system = "dgx-a100", gpu = "a100-sxm-80gb" } end,
    "comm: give one of system = ID, gpu = ID or topology = {...} (got system and gpu)",
    "system and gpu together refused", true)
  t.raises(function() gp.comm { op = "all_reduce", bytes = 1, gpu = "h100-pcie", fabric = "ib-ndr-400" } end,
    "comm: fabric 'ib-ndr-400' is a scaleout fabric", "a scale-out fabric refused", true)
  t.raises(function() gp.comm { op = "all_reduce", bytes = 1, gpu = "h100-pcie", fabric = "nvlink-brige" } end,
    "comm: fabric: unknown fabric 'nvlink-brige'", "an unknown fabric named", true)
  t.raises(function() gp.comm { op = "all_reduce", bytes = 1, gpu = "h100-pcie", fabric = 3 } end,
    "comm: fabric must be a catalog fabric id (got 3)", "a fabric that is not an id", true)
  t.raises(function() gp.comm { op = "all_reduce", bytes = 1, gpu = "h100-pciex" } end,
    "comm: gpu: unknown gpu 'h100-pciex'", "an unknown gpu named", true)
  -- NICs on a GPU-built node with no NIC rate: refused naming both keys
  -- (with nic_bw given, they run at it).
  t.raises(function() gp.comm { op = "all_reduce", bytes = 1, gpu = "h100-sxm", nics = 2 } end,
    "comm: nics = 2: the node built from gpu h100-sxm has no NIC fabric for them to run on: "
      .. "give nic_bw (B/s a NIC) or system = ID", "nics without a NIC rate on a GPU-built node", true)
  -- NICs given by their rate alone run at the achievable fraction a
  -- catalog node's NICs of that rate get: 50 GB/s is ib-ndr-400's rate,
  -- the fabric of dgx-h100, so 2 x 8 H100 with 2 such NICs a node price
  -- as dgx-h100 with nics = 2 does (the same NVLink node; the ring at
  -- 8 GiB runs at the NICs' 2 x 50e9 x 0.94 = 94 GB/s busbw, less under
  -- 1% of latency).  Tolerance 0.1%: the two nodes differ only in the
  -- GPU's PCIe path to its NICs, which does not bind here.
  local ndr = cat.fabrics["ib-ndr-400"]
  local byrate = gp.comm { op = "all_reduce", bytes = 8 * GiB, gpu = "h100-sxm", gpus = 16,
                           nodes = 2, nics = 2, nic_bw = ndr.bw, algo = "ring" }
  local sys2 = gp.comm { op = "all_reduce", bytes = 8 * GiB, system = "dgx-h100", gpus = 16,
                         nodes = 2, nics = 2, algo = "ring" }
  t.is(byrate.topology.nic_achievable, ndr.achievable, "nic_bw alone: ib-ndr-400's fraction")
  t.near(byrate.busbw, sys2.busbw, 1e-3, "nic_bw alone prices as the catalog node")
  t.ok(byrate.busbw <= 2 * ndr.bw * ndr.achievable and byrate.busbw > 0.99 * 2 * ndr.bw * ndr.achievable,
    "nic_bw alone: the ring at 2 x 50e9 x 0.94, not at line rate")
  local line = gp.comm { op = "all_reduce", bytes = 8 * GiB, gpu = "h100-sxm", gpus = 16,
                         nodes = 2, nics = 2, nic_bw = ndr.bw, nic_achievable = 1,
                         algo = "ring" }
  t.is(line.topology.nic_achievable, 1, "nic_achievable given wins")
  t.ok(line.busbw > byrate.busbw, "at line rate it is faster")
  t.raises(function() gp.comm { op = "all_reduce", bytes = 1, gpu = "h100-pcie", gpus = 4 } end,
    "comm: 4 gpus span 2 nodes of the 2-GPU node built from gpu h100-pcie, which has no NICs",
    "a GPU-built node has no NICs to reach another", true)
  t.raises(function() gp.comm { op = "all_reduce", bytes = 1, fabric = "pcie5",
                                topology = { gpus_per_node = 2, up_kind = "pcie", up_bw = 1e10 } } end,
    "comm: fabric joins a system's or a gpu's node", "fabric with a topology table refused", true)
end

-- A misspelled argument is an error naming it, not a silent default.
t.raises(function() gp.comm { op = "all_reduce", bytes = 1e6, system = "dgx-h100", tp_size = 2 } end,
  "comm: unknown option 'tp_size'", "comm: misspelled argument named", true)
t.raises(function() require("gpuplan.comm").sweep { op = "all_reduce", system = "dgx-h100", nodez = 2 } end,
  "comm: unknown option 'nodez'", "comm sweep: misspelled argument named", true)
-- gp.comm's keys are declared in gpuplan.options (command comm): the
-- nearest is suggested (one edit: 'node' is nodes, not the system that
-- 'node' stands for in gp.train), a job function's key says whose it is,
-- and cat, the catalog key of every other function, is taken (docs/lua.md
-- said cat; only catalog was).
t.raises(function() gp.comm { op = "all_reduce", bytes = 1e6, system = "dgx-h100", node = 2 } end,
  "comm: unknown option 'node' (did you mean 'nodes'?)", "comm: node -> nodes", true)
t.raises(function() gp.comm { op = "all_reduce", bytes = 1e6, system = "dgx-h100", nic_bww = 1 } end,
  "comm: unknown option 'nic_bww' (did you mean 'nic_bw'?)", "comm: a topology field suggested", true)
t.raises(function() gp.comm { op = "all_reduce", bytes = 1e6, system = "dgx-h100", tp = 2 } end,
  "comm: unknown option 'tp' (an option of gp.memory, gp.train, gp.rl and gp.infer)",
  "comm: a job key says whose", true)
t.raises(function() gp.train { model = "llama3-8b", gpu = "h100-sxm", nodes = 2 } end,
  "train: unknown option 'nodes' (an option of gp.comm)", "train: gp.comm's key says whose", true)
do
  local a = { op = "all_reduce", bytes = 2 ^ 20, system = "dgx-h100", nodes = 2 }
  local plain = gp.comm(a).time
  a.cat = gp.catalog()
  t.is(gp.comm(a).time, plain, "comm: cat = gp.catalog() taken, the same price")
  a.cat, a.catalog = nil, gp.catalog()
  t.is(gp.comm(a).time, plain, "comm: catalog = gp.catalog() still taken")
end

-- aws-ofi-nccl's RDMA protocol shows NCCL a P5's 32 x 100 Gb/s EFA as 8
-- devices of 400 Gb/s (efa-100's nccl.rails): 8 -> 16 ring channels rather
-- than 32 at 12 GB/s, so each GPU's proxy posts k = 16 / 8 = 2 sends a ring
-- step where it posted one.  32 MiB all_gather on 32 x 8 H100 (LL128 ring):
-- the 256 - 1 - 32 = 223 steps inside the nodes each wait for the second
-- post, 2 us on AMD hosts, less what it overlaps, the device moving the
-- first channel's 32 MiB / (256 x 16) = 8192 B at 4 x 12.5 GB/s x 0.85 x
-- 120/128 = 0.2056 us: 223 x (2 - 0.2056) us = 400.2 us more than with the
-- NICs seen one by one.  Tolerance 0.1 us: the hand figure's rounding.
-- The network here is a 2 us one (InfiniBand-like), so that NCCL's window
-- (below) stays under the posts: (2 + 1.3 + 2 x 3 + 2 x 2) / 8 = 1.66 us
-- joined, (2 + 1.3 + 2 + 2 x 2) / 8 = 1.16 us apart, both under the 2 us
-- post.
local p5 = comm.from_fabrics({ scaleup = "nvlink4", gpus_per_node = 8, nodes = 32, nics = 32,
                               nic_fabric = "efa-100", gpu = cat.gpus["h100-sxm"],
                               cpu_vendor = "amd" }, cat)
local p5_nccl, p5_lat = p5.nic_nccl, p5.nic_latency
p5.nic_latency = 2e-6
local joined = gp.comm { op = "all_gather", bytes = 32 * 2 ^ 20, gpus = 256, topology = p5 }
p5.nic_nccl = nil
local apart = gp.comm { op = "all_gather", bytes = 32 * 2 ^ 20, gpus = 256, topology = p5 }
t.is(joined.algo .. "/" .. joined.proto, "ring/ll128", "P5 32 MiB all_gather: the LL128 ring")
t.is(apart.algo .. "/" .. apart.proto, "ring/ll128", "the same ring with the NICs apart")
t.near(joined.time - apart.time, 223 * (2e-6 - 8192 / (4 * 12.5e9 * 0.85 * 120 / 128)), 1e-7,
       "P5's joined rails: a second post on each of the 223 steps inside the nodes")

-- NCCL's window on a network connection (ring_window): 8 slots, each
-- turning over once per round trip of the data step (20 us + LL128's 1.3
-- us), the receiver's control message back (20 us), the completion of
-- each (efa-100's nccl.completion, 3 us) and the posts of the receive
-- and of the send, 2 us each (AMD hosts), each proxy posting its two
-- channels' (subs') one after the other (net.cc recvProxyProgress and
-- sendProxyProgress loop over args->nsubs), the second less the 0.2056
-- us it overlaps (above): 2 x 2 x (2 - 0.2056 / 2) = 7.5888 us, so
-- (21.3 + 3 + 20 + 3 + 7.5888) / 8 = 6.8611 us a step, and the step's own
-- bytes in the round trip: the 32 MiB all_gather on 32 x 8 P5 moves 32 MiB
-- x 255/256 across the nodes' 32 x 12.5 GB/s x 0.85 x 120/128 = 318.75
-- GB/s in 104.857 us, 0.41121 us a step, 0.0514 us over eight: 6.9125
-- us, over what the engine prices a step inside a node at -- its posts, 2
-- x (2 - 0.2056) + 0.2056 = 3.7944 us (above), and its transfer, 0.41 us.
-- (One post a side, as before the proxy's subs were counted, gives
-- 6.4639 us.)  Without the completion the round trip is 6 us shorter: 223
-- x 0.75 us = 167.25 us less.  The whole latency: LL128's 14 us base, the
-- 223 steps inside the nodes at 6.9125 us and 32 network steps at 21.3
-- us.
-- Tolerances relative: 1e-6 for the exact difference (float rounding),
-- 1e-4 where the figures are rounded.
p5.nic_nccl, p5.nic_latency = p5_nccl, p5_lat
local function ag(bytes, nccl)
  p5.nic_nccl = nccl
  return gp.comm { op = "all_gather", bytes = bytes, gpus = 256, topology = p5 }
end
local with_done = ag(32 * 2 ^ 20, p5_nccl)
local no_done = {}
for k, v in pairs(p5_nccl) do no_done[k] = v end
no_done.completion = 0
local without_done = ag(32 * 2 ^ 20, no_done)
t.near(with_done.latency - without_done.latency, 223 * 2 * 3e-6 / 8, 1e-6,
       "P5 window: each completion adds 3 us / 8 to each of the 223 steps inside the nodes")
t.near(with_done.latency, 14e-6 + 223 * 6.9125e-6 + 32 * 21.3e-6, 1e-4,
       "P5 window: the 223 steps inside the nodes at 6.9125 us, not their posts' 3.7944")
-- At 2 GiB a step's transfer (6.7 ms / 255 = 26 us) is far over the
-- window (6.4 + 26 / 8 = 9.7 us): the window hides.
t.is(ag(2 * GiB, p5_nccl).time, ag(2 * GiB, no_done).time,
     "P5 2 GiB all_gather: the step's transfer hides the window")
p5.nic_nccl = p5_nccl

-- A Simple ring step takes four of the eight slots (NCCL's
-- ALLGATHER_CHUNKSTEPS = NCCL_STEPS / 2: two slices of NCCL_STEPS / 4),
-- so a connection holds two steps and each waits for half the round trip
-- (ring_inflight).  256 MiB all_gather on 2 x 8 P5 runs the Simple ring
-- (NCCL's tuner, which has no window, ranks it under LL128 there).  Round
-- trip: the Simple network step 20 + 11.3 us, the control message back 20
-- us, two completions of 3 us and two Simple posts of 3 x 2 us (AMD):
-- 69.3 us, half 34.65; the step's transfer t = bwt / 15 (S x 15/16 over
-- the 32 x 12.5 x 0.85 = 340 GB/s of NICs: 49.35 us), half of it in the
-- round trip.  Each of the 15 - 2 steps inside the nodes waits 34.65 +
-- t/2 - t = 9.97 us beyond its transfer; with one slot a step (LL128's
-- eighth) it would wait nothing, 8.66 + t/8 being under t.  The whole
-- latency: Simple's 8.4 us base, the 2 network steps at 31.3 us, the 13
-- steps inside at their 2 Simple posts' 6 us (the second post hides
-- under the 24.7 us transfer of the first channel's slice) and the 13
-- waits.  Without the completions half of 6 us less on each of the 13
-- steps: 39 us.  Tolerances: 1e-9 s on the exact difference (float
-- rounding), 1e-8 s on the sum of rounded catalog figures.
do
  local p2 = comm.from_fabrics({ scaleup = "nvlink4", gpus_per_node = 8, nodes = 2, nics = 32,
                                 nic_fabric = "efa-100", gpu = cat.gpus["h100-sxm"],
                                 cpu_vendor = "amd" }, cat)
  local function ag2(nccl)
    p2.nic_nccl = nccl
    return gp.comm { op = "all_gather", bytes = 256 * 2 ^ 20, gpus = 16, topology = p2 }
  end
  local nccl2 = p2.nic_nccl
  local r = ag2(nccl2)
  local nd = {}
  for k, v in pairs(nccl2) do nd[k] = v end
  nd.completion = 0
  local r0 = ag2(nd)
  t.is(r.algo .. "/" .. r.proto, "ring/simple", "P5 2-node 256 MiB all_gather: the Simple ring")
  local step = r.bw_time / 15
  t.near(step, 256 * 2 ^ 20 * 15 / 16 / (32 * 12.5e9 * 0.85) / 15, 1e-12,
         "P5 2-node 256 MiB all_gather: a step's transfer over the 340 GB/s of NICs")
  t.near(r.latency, 8.4e-6 + 2 * 31.3e-6 + 13 * 6e-6 + 13 * (69.3e-6 / 2 + step / 2 - step), 1e-8,
         "P5 Simple ring: each of the 13 steps inside the nodes waits for half a slot's round trip")
  t.near(r.latency - r0.latency, 13 * 6e-6 / 2, 1e-9,
         "P5 Simple ring: two 3 us completions over the two steps in flight, 13 steps")
end

-- The tree's SM ceiling follows the NICs NCCL sees (tree_sm_time): each
-- channel is one block driving one tree, a search channel's pair at most
-- the arch's perChMaxTreeBw (H100 across 3+ nodes: 36 GB/s).  P5 joined:
-- 8 devices of 400 Gb/s -> 8 search channels at 48 GB/s (not doubled:
-- Hopper, < 50 GB/s with more than 4), so 256 MiB all_reduce on 16 x 8
-- H100 (tree/LL128, tree factor 1 at 2^22 x 64 B; the LL128 ceiling set
-- to 0 below, so NCCL's 120/128 of the tree's applies) takes 2S / (8 x
-- 36e9 x 120/128) = 1988.4 us where the NICs alone give 2S / (32 x
-- 12.5e9 x 0.85 x 120/128) = 1684.3 us: 304.1 us more, the latency
-- unchanged.  With the 32 rails
-- apart (100 Gb/s, 12 GB/s each) the 32 channels' 1152 GB/s sit far over
-- the NICs, and the ceiling changes nothing.  Tolerance 0.1 us: the hand
-- figures' rounding.
local function tree_time(topo, ceiling)
  topo.tree_ch_bw3 = ceiling
  return gp.comm { op = "all_reduce", bytes = 256 * 2 ^ 20, gpus = 128, topology = topo,
                   algo = "tree" }.time
end
local p5t = comm.from_fabrics({ scaleup = "nvlink4", gpus_per_node = 8, nodes = 16, nics = 32,
                                nic_fabric = "efa-100", gpu = cat.gpus["h100-sxm"],
                                cpu_vendor = "amd" }, cat)
-- These blocks price the tree's other terms; its LL128 ceiling
-- (tree_ll128_ch_bw) has a block of its own below.
p5t.tree_ll128_ch_bw3 = 0
local S = 256 * 2 ^ 20
-- efa-100's nccl block less its tree_share (below), so the ceiling shows.
local function nccl_with(over)
  local n = {}
  for k, v in pairs(cat.fabrics["efa-100"].nccl) do n[k] = v end
  for k, v in pairs(over) do n[k] = v end
  return n
end
local efa_nccl = p5t.nic_nccl
p5t.nic_nccl = nccl_with { tree_share = 1 }
t.near(tree_time(p5t, 36e9) - tree_time(p5t, 0),
       2 * S / (8 * 36e9 * 120 / 128) - 2 * S / (32 * 12.5e9 * 0.85 * 120 / 128), 1e-7,
       "P5 joined rails: the tree's 8 channels x 36 GB/s x 120/128 bound 256 MiB under the "
         .. "NICs' rate")
p5t.nic_nccl = nil
t.is(tree_time(p5t, 36e9), tree_time(p5t, 0),
     "P5 rails apart: 32 channels x 36 GB/s are over the NICs, the ceiling changes nothing")

-- AWS's cost model for P5 prices the all-reduce tree at half the ring's
-- network rate (efa-100's nccl.tree_share 0.5, nccl_ofi_model.cpp "/ 2").
-- 256 MiB tree all_reduce on 16 x 8 P5 (LL128, tree factor 1): each node
-- sends 2S across the network at half of 32 x 12.5 GB/s x 0.85 x 120/128 =
-- 318.75 GB/s, 2 x 2S / 318.75e9 = 3368.6 us, over the 8 x 36 GB/s x
-- 120/128 ceiling's 2S / 270e9 = 1988.4 us; the latency is unchanged.  Tolerance
-- 1 ns: the hand figure is exact but for float rounding.
p5t.nic_nccl = efa_nccl
p5t.tree_ch_bw3 = 36e9
local half = gp.comm { op = "all_reduce", bytes = S, gpus = 128, topology = p5t, algo = "tree" }
p5t.nic_nccl = nccl_with { tree_share = 1 }
local full = gp.comm { op = "all_reduce", bytes = S, gpus = 128, topology = p5t, algo = "tree" }
t.is(half.proto, "ll128", "P5 256 MiB tree: LL128")
t.near(half.bw_time, 2 * 2 * S / (32 * 12.5e9 * 0.85 * 120 / 128), 1e-9,
       "P5 tree at half the ring's network rate: 4S / 318.75 GB/s")
t.near(full.bw_time, 2 * S / (8 * 36e9 * 120 / 128), 1e-9,
       "at the full rate the SM ceiling binds, 120/128 of it with LL128")
t.is(half.latency, full.latency, "the share moves the bandwidth term alone")
-- On 2 nodes AWS's model is not consulted and each node is root of one
-- tree and leaf of the other: the share changes nothing there.
local function two_nodes(n)
  p5t.nic_nccl = n
  return gp.comm { op = "all_reduce", bytes = S, gpus = 16, topology = p5t, algo = "tree" }.time
end
t.is(two_nodes(efa_nccl), two_nodes(nccl_with { tree_share = 1 }), "P5 2 nodes: the tree at the full rate")

-- Each network hop of the tree carries its first step whole
-- (tree_net_fill): NCCL's LL128 tree chunk on 16 x 8 P5 over 16 channels
-- (nstepsLL128 = 1 + 4 + 0.8 = 5.8) is 72000 B at 32 MiB (576000 halved
-- while 32 MiB / (16 chunk) < 5.8 x 64 / 8 = 46.4 and chunk > 131072) and
-- 288000 B at 256 MiB (58 >= 46.4 after one halving); on the wire x
-- 128/120: 76800 B, under the plugin's 128 KiB stripe, on one 100 Gb/s
-- NIC (12.5e9 x 0.85), and 307200 B, ceil(307200 / 131072) = 3 stripes
-- lowered to 2 (a divisor of the 4 rails).  The latencies differ by the 2
-- log2 16 = 8 hops' crossings alone: 8 x (307200 / (2 x 10.625e9) - 76800
-- / 10.625e9) = 8 x 7.2282 = 57.83 us.  Tolerance 1 ns: exact but for
-- float rounding.
p5t.nic_nccl = efa_nccl
local function tree_at(bytes)
  return gp.comm { op = "all_reduce", bytes = bytes, gpus = 128, topology = p5t, algo = "tree" }
end
local t32, t256 = tree_at(32 * 2 ^ 20), tree_at(S)
t.is(t32.proto .. "/" .. t256.proto, "ll128/ll128", "P5 tree fill: both sizes run LL128")
t.near(t256.latency - t32.latency, 8 * (307200 / (2 * 12.5e9 * 0.85) - 76800 / (12.5e9 * 0.85)), 1e-9,
       "P5 tree: each of the 8 network hops carries its first step whole, on the rails it is striped over")
-- The striped step leaves through the one GPU's path to its NICs
-- (nic_path_bw caps the rails' sum, comm_algo.c net_msg_time).  With that
-- path at 15 GB/s -- above one NIC's 10.625 GB/s, so the 32 MiB step's
-- single stripe and the per-NIC and per-node rates stay as they are
-- (comm.c caps those only above the path) -- the 256 MiB step's two
-- stripes cross at 15 GB/s, not 21.25: 8 x (307200 / 15e9 - 76800 /
-- 10.625e9) = 8 x 13.252 = 106.0 us.  Same 1 ns.
local path0 = p5t.nic_path_bw
p5t.nic_path_bw = 15e9
local c32, c256 = tree_at(32 * 2 ^ 20), tree_at(S)
p5t.nic_path_bw = path0
t.near(c256.latency - c32.latency, 8 * (307200 / 15e9 - 76800 / (12.5e9 * 0.85)), 1e-9,
       "P5 tree: the striped step no faster than the GPU's path to its NICs")
-- The other protocols' steps (tree_net_step_bytes): LL's 32 KiB chunk
-- (NCCL's DEFAULT_LL_BUFFSIZE / NCCL_STEPS, 8-byte lines of 4 data bytes:
-- x 2 on the wire) and Simple's 512 KiB (DEFAULT_BUFFSIZE 4 MiB /
-- NCCL_STEPS 8).  A channel's share below the chunk is one step.  On the
-- same P5 over 16 channels: LL at 32 MiB: min(32768, 2 MiB) x 2 = 65536
-- B, one stripe, 65536 / 10.625e9 = 6.168 us a hop; at 256 KiB: 16384 x
-- 2 = 32768 B, 3.084 us.  Simple at 256 MiB: 524288 B, four 128 KiB
-- stripes; at 2 MiB 131072 B, one stripe, 12.34 us.  Striped over the
-- rails a chunk of 256 or 512 KiB crosses in the same time, so the
-- path is held at 15 GB/s (above): 524288 / 15e9 = 34.95 us.  Each
-- difference is the 8 hops' crossings (the rest of the latency does not
-- depend on the size); 1 ns.
-- The protocol is set by a tuner region over every size and rank count
-- (nic_nccl.regions, as AWS's tuner sets it).
local function tree_proto(bytes, proto)
  p5t.nic_nccl = nccl_with { regions = { { algo = "tree", proto = proto,
    vertices = { { 0, 1 }, { 2 ^ 40, 1 }, { 2 ^ 40, 2 ^ 20 }, { 0, 2 ^ 20 } } } } }
  local r = gp.comm { op = "all_reduce", bytes = bytes, gpus = 128, topology = p5t }
  p5t.nic_nccl = efa_nccl
  assert(r.algo == "tree" and r.proto == proto, r.algo .. "/" .. r.proto)
  return r
end
t.near(tree_proto(32 * 2 ^ 20, "ll").latency - tree_proto(256 * 2 ^ 10, "ll").latency,
       8 * (65536 - 32768) / (12.5e9 * 0.85), 1e-9, "P5 tree, LL: a 32 KiB chunk, twice on the wire")
p5t.nic_path_bw = 15e9
local sl = tree_proto(S, "simple").latency - tree_proto(2 * 2 ^ 20, "simple").latency
p5t.nic_path_bw = path0
t.near(sl, 8 * (524288 / 15e9 - 131072 / (12.5e9 * 0.85)), 1e-9,
       "P5 tree, Simple: a 512 KiB chunk")

-- AWS's region tuner (efa-100's nccl.regions, nccl_ofi_regions.cpp
-- v1.16.3, 8 ranks a node): on 16 x 8 P5 (128 ranks) 32 and 256 MiB lie
-- in the Tree/LL128 polygon (its edge from (301989888, 128) up: 256 MiB =
-- 268435456 < 301989888); 4 GiB lies on the NVLS_TREE polygon's bottom
-- edge y = 128 from 2 GiB to 6 GiB (an edge is inside); 8 GiB lies in the
-- Ring/Simple polygon (right of its edge from (2684354560, 64) to
-- (8053063680, 160): at y = 128 that edge is at 6.5e9 B).  On 2 nodes the
-- tuner leaves the choice to NCCL, and NCCL 2.20 does not load the
-- bundled tuner: NCCL's own pick there (the engine's: NVLS at 32 MiB, not
-- the region's tree).
p5t.nic_nccl = efa_nccl
local function pick(gpus, bytes, nccl)
  local r = gp.comm { op = "all_reduce", bytes = bytes, gpus = gpus, topology = p5t, nccl = nccl }
  return r.algo .. "/" .. r.proto
end
t.is(pick(128, 32 * 2 ^ 20), "tree/ll128", "P5 128 ranks 32 MiB: the region's Tree/LL128")
t.is(pick(128, S), "tree/ll128", "P5 128 ranks 256 MiB: Tree/LL128")
t.is(pick(128, 4 * GiB), "nvls/simple", "P5 128 ranks 4 GiB: on NVLS_TREE's edge")
t.is(pick(128, 8 * GiB), "ring/simple", "P5 128 ranks 8 GiB: Ring/Simple")
t.is(pick(16, 32 * 2 ^ 20), "nvls/simple", "P5 2 nodes: NCCL's own pick, not the region's")
t.is(pick(128, 32 * 2 ^ 20, "2.20.5"), "nvls/simple", "NCCL 2.20.5: no bundled tuner, NCCL's own pick")

-- A bad region is an error naming it.
p5t.nic_nccl = nccl_with { regions = { { algo = "tre", proto = "ll128", vertices = { { 0, 1 }, { 1, 1 }, { 1, 2 } } } } }
t.raises(function() gp.comm { op = "all_reduce", bytes = 1, gpus = 128, topology = p5t } end,
  "topology.nic_nccl.regions[1].algo: unknown algorithm 'tre'", "an unknown region algorithm named", true)
p5t.nic_nccl = nccl_with { regions = { { algo = "tree", proto = "ll128", vertices = { { 0, 1 }, { 1, 1 } } } } }
t.raises(function() gp.comm { op = "all_reduce", bytes = 1, gpus = 128, topology = p5t } end,
  "topology.nic_nccl.regions[1].vertices: 3..24 of them (got 2)", "a region of 2 vertices refused", true)
-- The regions' vertices share one pool of 64 (GP_REGION_POINTS): three
-- regions of 22 vertices each (66) are refused at the third, naming it.
local function poly(nv)
  local v = {}
  for i = 1, nv do v[i] = { i, 1 + i % 2 } end
  return v
end
p5t.nic_nccl = nccl_with { regions = {
  { algo = "tree", proto = "ll128", vertices = poly(22) },
  { algo = "ring", proto = "ll128", vertices = poly(22) },
  { algo = "ring", proto = "simple", vertices = poly(22) } } }
t.raises(function() gp.comm { op = "all_reduce", bytes = 1, gpus = 128, topology = p5t } end,
  "topology.nic_nccl.regions[3].vertices: at most 64 vertices over all the regions together (got 66)",
  "more vertices than the pool holds refused, naming the region", true)
p5t.nic_nccl = nccl_with { tree_share = 0 }
t.raises(function() gp.comm { op = "all_reduce", bytes = 1, gpus = 128, topology = p5t } end,
  "nic nccl tree_share must be in (0, 1] (got 0)", "tree_share 0 refused", true)
p5t.nic_nccl = nccl_with { completion = -1e-6 }
t.raises(function() gp.comm { op = "all_reduce", bytes = 1, gpus = 128, topology = p5t } end,
  "nic nccl completion must be 0..1 s (got -1e-06)", "a negative completion refused", true)
p5t.nic_nccl = nccl_with { max_recvs = 0 }
t.raises(function() gp.comm { op = "all_to_all", bytes = 1, gpus = 128, topology = p5t } end,
  "topology.nic_nccl.max_recvs must be an integer in 1..64 (got 0)", "max_recvs 0 refused, named", true)

-- PXN groups the receives of a node's GPUs only as far as the network
-- plugin takes several in one call (maxRecvs): efa-100's aws-ofi-nccl
-- takes one ("#define NCCL_OFI_MAX_RECVS 1", v1.16.3), so a P5 GPU posts
-- for each of its 248 remote peers, where NCCL's IB transport (8) would
-- post 31 times.  32 MiB all_to_all on 32 x 8 P5 (AMD hosts, 2 us a
-- post): NCCL relays every remote send through the rail GPU whatever
-- the plugin (P2P_PXN_LEVEL 2, search.cc ncclTopoGetNetDev), so both run
-- pxn; a post is NCCL's Simple network overhead, 3 x 2 us on AMD
-- (tuning.cc getNetOverhead, "netOverhead *= 3"); with 1: 8.4 us base + 2 x
-- 3.4 NVLink steps + 31.3 network step (20 + 11.3 Simple) + 248 x 6 =
-- 1534.5 us; with 8: 8.4 + 2 x 3.4 + 31.3 + 31 x 6 = 232.5 us.  The
-- bandwidth term is the same (S x 248/256 over the GPU's 42.5 GB/s).  Tolerance 1e-6 relative: float rounding.
do
  local p5a = comm.from_fabrics({ scaleup = "nvlink4", gpus_per_node = 8, nodes = 32, nics = 32,
                                  nic_fabric = "efa-100", gpu = cat.gpus["h100-sxm"],
                                  cpu_vendor = "amd" }, cat)
  t.is(p5a.nic_nccl.max_recvs, 1, "efa-100: the plugin takes one receive a call")
  local one = gp.comm { op = "all_to_all", bytes = 32 * 2 ^ 20, gpus = 256, topology = p5a }
  p5a.nic_nccl.max_recvs = 8
  local eight = gp.comm { op = "all_to_all", bytes = 32 * 2 ^ 20, gpus = 256, topology = p5a }
  t.is(one.algo .. "/" .. eight.algo, "pxn/pxn", "max_recvs 1 and 8: pxn, NCCL's relay")
  t.near(one.latency, 1534.5e-6, 1e-6, "max_recvs 1: 248 posts, 1534.5 us")
  t.near(eight.latency, 232.5e-6, 1e-6, "max_recvs 8: 31 grouped posts, 232.5 us")
  t.near(one.bw_time, eight.bw_time, 1e-12, "the bandwidth term stays")
end

-- The node a training step prices its collectives on (comm.node_spec, as
-- gp.train builds it from a system or a card) carries the card's NCCL
-- ceilings, as gpuplan comm's node does: on Hopper the LL protocol's
-- per-channel cap and the tree's (catalog/archs.lua nccl_ll_max_bw,
-- nccl_tree_ch_bw).  It had none: the same all-reduce was priced by two
-- rules, one for gp.comm and one for the step.
do
  local cat = gp.catalog()
  local h100 = cat:get("gpus", "h100-sxm")
  local hopper = cat.archs.hopper
  for _, sys in ipairs { false, true } do
    local spec = comm.node_spec(sys and cat:get("systems", "dgx-h100") or nil, h100,
                                function() end, "train", {})
    local topo = comm.from_fabrics(spec, cat)
    local what = sys and "a system's node" or "a card's node"
    t.is(topo.ll_max_bw, hopper.nccl_ll_max_bw, what .. ": the arch's LL ceiling")
    t.is(topo.tree_ch_bw2, hopper.nccl_tree_ch_bw.nodes2, what .. ": the arch's tree ceiling")
  end
end

-- A sweep's sizes are whole bytes, as nccl-tests' size_t sizes
-- (src/common.cu parsesize cast to size_t): a factor that is not whole
-- rounds each size down (1, 1.5 -> 1 -> 2, 3, 4.5 -> 4, 6, 9).
t.is(table.concat(comm.sizes(1, 9, 1.5), " "), "1 2 3 4 6 9", "a fractional factor's sizes are whole bytes")
t.ok(comm.comm { op = "all_reduce", bytes = 1, gpu = "h100-sxm", gpus = 8 }.time > 0,
  "1 B (one int8) is priced")
-- gp.comm's bytes is a volume of any element type, >= 0: 0 B moves
-- nothing and costs nothing (exactly 0 s); 3 B is three int8 elements,
-- priced above 1 B.  The comm command's sizes are nccl-tests' float
-- messages, at least 4 B (tests/cli/followups4.t): one rule, the element.
t.is(comm.comm { op = "all_reduce", bytes = 0, gpu = "h100-sxm", gpus = 8 }.time, 0,
  "0 B: no time")
t.ok(comm.comm { op = "all_reduce", bytes = 3, gpu = "h100-sxm", gpus = 8 }.time
  > comm.comm { op = "all_reduce", bytes = 1, gpu = "h100-sxm", gpus = 8 }.time,
  "3 B (three int8) above 1 B")

t.done_testing()
