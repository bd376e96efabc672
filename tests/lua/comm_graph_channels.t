-- The channels NCCL's search finds across nodes fit the GPU's NVLink
-- (engine/comm_algo.c net_graph_fit): each channel takes its speed off
-- every GPU's links (search.cc followPath), so an NVL72 rack of 72 NICs
-- does not get 72 tree channels.  The rack is the CoreWeave GB200 case's
-- topology (validation/cases.json coreweave-gb200-nvl72-20rack-*).
local t = require "tap"
local gp = require "gpuplan"

local GiB = 2 ^ 30
local function rack(nics, nodes, extra)
  local topo = {
    gpus_per_node = 72, nodes = nodes, nics = nics, nic_bw = 50e9, nic_achievable = 0.94,
    nic_latency = 2.7e-6, nic_c2c = true, nic_path_bw = 50.432e9, up_kind = "nvlink",
    up_bw = 900e9, up_achievable = 0.76, up_latency = 6e-7, up_nvls = true,
    tree_ch_bw2 = 42.8e9, tree_ch_bw3 = 24e9, tree_ll128_ch_bw2 = 31.67e9,
    tree_ll128_ch_bw3 = 20e9, ll_max_bw = 282e9, ring_ll128_ch_bw = 40e9,
    up_nccl = { nvls_channels = 24, nvls_efficiency = 0.74 },
  }
  local job = { op = "all_reduce", gpus = 72 * nodes, nvls = "off", nccl = "2.26.2",
    algo = "tree", topology = topo }
  for k, v in pairs(extra or {}) do job[k] = v end
  return gp.comm(job)
end

-- 20 racks, 72 NICs a rack, 16 GiB on the tree.  NVLink: 0.76 x 900 =
-- 684 GB/s a GPU.  The search at 48 GB/s fits floor(684 / 48) = 14
-- channels (672), at 45 15 (675), at 42 16 (672), at 40 17 (680), at 30
-- 22 (660), at 24 28 (672); 22 is below .49 of 48: 17 channels at 40.
-- One block a channel carries at most 24 GB/s of bus bandwidth across 3
-- or more nodes (tree_ch_bw3): busbw <= 17 x 24 = 408 GB/s, algbw 204,
-- 16 GiB in 84.2 ms; the tree's latency (under 1 ms: 2 (71 NVLink hops +
-- 4 network hops)) adds about 1%.  Before, all 72 NICs were channels and
-- the NVLink rate bound it: algbw 342, busbw 684.  Tolerance 2%: the
-- latency share.
local r = rack(72, 20, { bytes = 16 * GiB })
t.near(r.busbw, 408e9 * 1439 / 1440, 0.02, "20 x NVL72, 72 NICs: tree busbw at 17 channels x 24 GB/s")
t.ok(r.busbw < 408e9, "and not above the channels' cap")

-- 8 NICs a rack: 8 x 48 = 384 GB/s fits the NVLink's 684, so the search
-- keeps one channel a NIC at 48: the cap is 8 x 24 = 192 GB/s of busbw,
-- the same as before this rule (the fit only binds where the NICs outrun
-- the NVLink).  Tolerance 2%: the latency share at 16 GiB.
local few = rack(8, 20, { bytes = 16 * GiB })
t.near(few.busbw, 192e9 * 1439 / 1440, 0.02, "20 x NVL72, 8 NICs: 8 channels x 24 GB/s")

-- The tuner keeps the tree at 2 GiB on 20 racks (its ring's 2 x 1439
-- steps cost it about 14 ms of latency).
local auto = rack(72, 20, { bytes = 2 * GiB, algo = nil })
t.is(auto.algo, "tree", "20 x NVL72 2 GiB, nvls off: NCCL's tuner runs the tree")
t.done_testing()
