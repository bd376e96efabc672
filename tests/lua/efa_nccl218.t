-- The P5 EFA rules by NCCL release, for the data-parallel all-reduce of
-- nanotron's 8.86B TP 8 cells (validation/cases.json
-- nanotron-bench-8.86b-{16,32}n-dp*-tp8-*-z0): one rank a node, 8 groups
-- sharing a node's 32 EFA adapters, one ncclAllReduce a fp32 gradient
-- tensor of dp_bucket 5679808 elements (22719232 B).  The run's NCCL is
-- PyTorch 2.1's 2.18.1 (the job's conda env "2-1-cu121").
--
-- What 2.18.1 does on a P5 (NVIDIA/nccl v2.18.1-1, aws/aws-ofi-nccl
-- v1.7.x-aws of 2023):
--  * no tuner plugin: 2.18.1 has no tuner API (misc/tuner.cc and
--    NCCL_TUNER_PLUGIN come with 2.19.1); aws-ofi-nccl's tuner first ships
--    in v1.8.0-aws (2024-02, "nccl_ofi_tuner: Tuner component", 2024-01-25).
--    The region tuner is gated to 2.21 already (engine/comm.c region_pick)
--    and needs 8 ranks a node anyway: it never prices these groups.
--  * NCCL's own tuner ranks with the plugin's reported latency added to each
--    network step (search.cc "graph->latencyInter = net->net.latency",
--    tuning.cc "interLat = hwLat[NCCL_HW_NET][a][p] +
--    graphs[a]->latencyInter", twice with Simple), 75 us on p5.48xlarge
--    (platform-aws.c v1.7.1-aws platform_data_map ".latency = 75.0"); the
--    engine ranks with efa-100's 20 us.  Every plugin since reports the
--    same 75 us on p5 (v1.9.2, v1.13.2, v1.16.3), so whichever the cluster
--    had, 2.18.1 ranks with it.  The pick does not move (below).
--  * LL128 across nodes: 2.18.1 enables it on Hopper where the NIC path is
--    PXN or closer ("minCompCap >= 90 && graphs[a]->typeInter <=
--    PATH_PXN"), and the plugin forces NCCL_PROTO=simple only where the EFA
--    endpoint refuses 128-byte in-order writes (platform-aws.c
--    configure_nccl_proto: "such as on P4d/P4e"); on P5 AWS's own regions
--    run LL128 (nccl_ofi_regions.cpp), so the endpoint takes it.
--  * the plugin's RDMA protocol (rails joined, efa-100 rails = true) is the
--    default on EFA with more NICs than GPUs from v1.7 (nccl_ofi_net.c:
--    "num_accelerators < ofi_ndevices" -> "RDMA"), one receive a call
--    (NCCL_OFI_MAX_RECVS 1) as in v1.16.3.
--
-- NCCL 2.18.1's estimate by hand (tuning.cc ncclTopoTuneModel at
-- v2.18.1-1), 16 ranks over 16 nodes (ppn 1, so nRanks/nNodes - 1 = 0 hops
-- inside a node), S = 22719232 B, c the graph's channels at b = 48 GB/s a
-- channel (sm90SpeedArrayInter's top, search.cc: a joined 400 Gb/s device),
-- Hopper's caps a channel beyond 2 nodes: perChMaxTreeBws 33.0,
-- ll128MaxBwPerCh 36.7; latencies baseLat + steps x (hwLat NET + 75):
--   Tree/Simple: busBw min(0.92 x 48, 33.0) = 33.0 c; algbw x 0.5 = 16.5 c;
--                lat 0 + 2 x log2(16) x (28 + 2 x 75) = 1424 us
--   Tree/LL128:  33.0 x 120/128 = 30.9 c (under 36.7 c); algbw 15.5 c;
--                lat 14.0 + 8 x (8.5 + 75) = 682 us
--   Ring/LL128:  min(48 x 0.7 (ppn < 2), 36.7) = 33.6 c; algbw x 16/30 =
--                17.9 c; lat 14.0 + 32 x (4.0 + 75) - 2 x (a few us) = 2540
--                us (nInterSteps 2 nNodes = 32 against nsteps 30)
--   Ring/Simple: lat 8.4 + 32 x (14.0 + 2 x 75) > 5000 us
-- Tree/LL128 leaves Tree/Simple only past 742 us / ((1/15.5 - 1/16.5) /
-- c GB/s) = 0.18 c GB and Ring/LL128 past 1858 us / ((1/15.5 - 1/17.9) /
-- c GB/s) = 0.21 c GB; at 22.7 MB (c >= 1) NCCL 2.18.1 runs Tree/LL128
-- (on 32 nodes the tree's latency grows by one level, the ring's by 16
-- network steps: the same), the pair the engine takes at every release.
-- So no release rule moves these cells: their price is the tree's rate,
-- which efa-100's tree_share halves on 3 nodes or more, a rate (the
-- HyperPod P5 rows measure about half a full-rate tree inside AWS's
-- Tree/LL128 region), not a tuner's pick.
-- Run: ./gpuplan run tests/lua/efa_nccl218.t
local t = require "tap"
local comm = require "gpuplan.comm"
local core = require "gpuplan.core"
t.plan(8)

local S = 5679808 * 4          -- nanotron dp_bucket: fp32 elements x 4 B
local function group(nodes, version, share)
  local topo = comm.from_fabrics({ scaleup = "nvlink4", gpus_per_node = 8, nodes = nodes,
                                   nics = 32, nic_fabric = "efa-100", gpu = "h100-sxm" })
  topo.nccl_version = version
  if share then
    -- a copy: nic_nccl is the catalog's own table
    local n = {}
    for k, v in pairs(topo.nic_nccl) do n[k] = v end
    n.tree_share = share
    topo.nic_nccl = n
  end
  -- 16 (32) ranks, one a node, 8 groups sharing each node's NICs (the TP 8
  -- layout's DP groups, gp.train's groups.dp_cp: per_node 1, sharing 8)
  return core.comm_cost(topo, "all_reduce", S, nodes, nil, 1, 8)
end

for _, nn in ipairs { 16, 32 } do
  local old, new = group(nn, 21801, nil), group(nn, 0, nil)
  t.is(old.algo .. "/" .. old.proto, "tree/ll128",
       nn .. " nodes, NCCL 2.18.1: Tree/LL128, as its own tuner ranks it by hand (header)")
  t.is(new.algo .. "/" .. new.proto, "tree/ll128",
       nn .. " nodes, the latest release: the same pair")
  -- no release gate applies to a one-rank-a-node group: the same price
  t.near(old.time, new.time, 1e-12, nn .. " nodes: 2.18.1 prices the tensor as the latest")
  -- The tree's network term 2 S / (rate x tree_share): the rank's 4 of the
  -- node's 32 adapters, 4 x 12.5 GB/s x 0.85 (efa-100 achievable) = 42.5
  -- GB/s; halving the rate adds at least 2 S / 42.5e9 = 1069 us (the other
  -- terms do not shrink).  Lower bound only: channels and the tree's
  -- per-size factor add to it.
  local full = group(nn, 21801, 1.0)
  t.ok(old.time - full.time >= 2 * S / 42.5e9 * (1 - 1e-9),
       string.format("%d nodes: tree_share 0.5 costs %.0f us a tensor, >= 1069", nn,
                     (old.time - full.time) * 1e6))
end
