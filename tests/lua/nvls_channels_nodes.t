-- The NVLS channels NCCL gives a Blackwell communicator by release and
-- span (engine/comm_algo.c nvls_nch; NVIDIA/nccl src/transport/nvls.cc,
-- "#define NVLS_NCHANNELS_SM100 32", "#define NVLS_NCHANNELS_SM100_NVL
-- 24"): 2.25.1 to 2.26.x run 32 on every SM100 communicator; 2.27.3 to
-- 2.29.x 32 across hosts and 24 in one; from 2.30.3
-- (ncclNvlsTreeSm100Tuning) 32 on 2 nodes and 24 on 3 or more with NICs
-- of 48 to 96 GB/s (NDR 400 Gb/s: 50).  nvlink5 holds 24 and 32
-- (nccl.nvls_channels, nccl.nvls_channels_nodes).  Across nodes the count
-- sets NVLS_TREE's proxy posts: each of the 2 log2(nodes) network steps
-- waits for the posts of the k - 1 channels after the first, k =
-- min(channels, ceil(S / 32 KiB)), 1 us each on Intel hosts
-- (getNetOverhead), which bound the streaming time from below.
local t = require "tap"
local gp = require "gpuplan"
local comm = require "gpuplan.comm"

local cat = gp.catalog()
local MiB = 2 ^ 20

local function topo(nodes, scaleup, gpu)
  return comm.from_fabrics({ scaleup = scaleup, gpus_per_node = 8, nodes = nodes, nics = 8,
                             nic_fabric = "ib-ndr-400", gpu = cat.gpus[gpu],
                             cpu_vendor = "intel" }, cat)
end
local function ar(bytes, nodes, nccl, algo, scaleup, gpu)
  return gp.comm { op = "all_reduce", bytes = bytes, gpus = 8 * nodes, nccl = nccl,
                   topology = topo(nodes, scaleup or "nvlink5", gpu or "b200"), algo = algo }
end

-- 2 x 8 B200, 8 NDR NICs a node, NCCL 2.26.2 (dstack's Lambda pair), 1
-- MiB: NVLS_TREE, latency hwLat NVLINK NVLSTree 25 + 2 x log2(2) x 14 (the
-- Simple network step) = 53 us; 1 MiB fills all 32 channels (32 KiB
-- each), so each of the 2 steps waits for 31 more posts of 1 us: 62 us,
-- more than the streaming time and fill: 115 us in all (the log: 115.58,
-- 114.44 and 118.25 us at 1, 2 and 4 MiB; with 24 channels 53 + 46 = 99).
-- Sums of the constants, so 1e-9 relative.
local r = ar(MiB, 2, "2.26.2")
t.is(r.algo .. "/" .. r.proto, "nvls/simple", "2 x 8 B200, 1 MiB, NCCL 2.26.2: NVLS_TREE")
t.near(r.latency, 53e-6, 1e-9, "NVLS_TREE latency: 25 + 2 x 14 us")
t.near(r.bw_time, 2 * 31 * 1e-6, 1e-9, "32 channels: 2 steps x 31 posts x 1 us")
t.near(r.time, 115e-6, 1e-9, "1 MiB: 53 + 62 = 115 us")

-- 2.29.2 keeps 32 across hosts: the same 62 us of posts.
t.near(ar(MiB, 2, "2.29.2", "nvls").bw_time, 62e-6, 1e-9, "2.29.2, 2 nodes: 32 channels")

-- 4 nodes, 2 x log2(4) = 4 steps: 2.29.2 gives 32 channels, 4 x 31 x 1 =
-- 124 us of posts; 2.30.7 gives 24 on NICs of 50 GB/s (48 <= nicBw <
-- 96), 4 x 23 x 1 = 92 us.
t.near(ar(MiB, 4, "2.29.2", "nvls").bw_time, 124e-6, 1e-9, "2.29.2, 4 nodes: 32 channels")
t.near(ar(MiB, 4, "2.30.7", "nvls").bw_time, 92e-6, 1e-9, "2.30.7, 4 nodes, NDR: 24 channels")

-- Hopper (nvlink4) holds no count across nodes: 16 channels everywhere,
-- 2 x 15 x 1 = 30 us on 2 nodes at 1 MiB (nvls_tree_post.t).
t.near(ar(MiB, 2, "2.26.2", "nvls", "nvlink4", "h100-sxm").bw_time, 30e-6, 1e-9,
       "H100 pair: 16 channels, 2 x 15 posts")

-- A fabric's nvls_channels_nodes must be an integer 0..64: a bad value is
-- an error naming the field, not a silent count.
local bad = topo(2, "nvlink5", "b200")
bad.up_nccl = { nvls_channels = 24, nvls_channels_nodes = 2.5, nvls_efficiency = 0.74 }
local ok, err = pcall(gp.comm, { op = "all_reduce", bytes = MiB, gpus = 16, topology = bad })
t.ok(not ok and tostring(err):match("nvls_channels_nodes"), "nvls_channels_nodes 2.5: refused, named")

t.done_testing()
