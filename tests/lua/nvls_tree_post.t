-- NVLS_TREE's proxy posts across nodes are single network posts
-- (engine/comm_algo.c nvls_tree_posts): an NVLS_TREE step is one slice,
-- one message ("int chunkSteps = (info->protocol == NCCL_PROTO_SIMPLE &&
-- info->algorithm == NCCL_ALGO_RING) ? info->chunkSteps : 1;", the same
-- for sliceSteps, NCCL enqueue.cc calcCollChunking v2.18.3-1 to
-- v2.27.7-1), so each post costs NCCL's getNetOverhead (1 us on Intel
-- hosts, 2 us on AMD, tuning.cc), not the x3 NCCL gives the Simple ring's
-- two-slice step.  Each of the 2 log2(nodes) network steps waits for the
-- posts of the k - 1 channels after the first, k = min(16 NVLS channels,
-- ceil(S / 32 KiB)); the posts bound the streaming time from below.
local t = require "tap"
local gp = require "gpuplan"
local comm = require "gpuplan.comm"

local cat = gp.catalog()
local MiB = 2 ^ 20

local function topo(nodes, vendor)
  return comm.from_fabrics({ scaleup = "nvlink4", gpus_per_node = 8, nodes = nodes, nics = 8,
                             nic_fabric = "ib-ndr-400", gpu = cat.gpus["h100-sxm"],
                             cpu_vendor = vendor }, cat)
end
local function ar(bytes, nodes, vendor, algo)
  return gp.comm { op = "all_reduce", bytes = bytes, gpus = 8 * nodes, nccl = "2.26.2",
                   topology = topo(nodes, vendor), algo = algo }
end

-- 2 x 8 H100, 8 NDR NICs a node, Intel hosts, NCCL 2.26.2, 1 MiB: NCCL's
-- tuner runs NVLS_TREE (25 + 2 x 14 = 53 us and S over 266.7 GB/s: 56.9
-- us, ahead of the LL128 tree's 60.4).  Its time: latency hwLat NVLINK
-- NVLSTree 25 + 2 x log2(2) x 14 (the tree's Simple network step) = 53
-- us; 1 MiB fills all 16 channels (32 KiB each at least), so each of the
-- 2 network steps waits for 15 more posts of 1 us: 30 us, more than the
-- streaming time and fill at 1 MiB: 83 us in all (dstack's Nebius pair
-- measures 87.1 us out of place, nccl-tests#309's XE9680 pair 71.9).
-- The terms are sums of the constants, so 1e-9 relative.
local r = ar(MiB, 2, "intel")
t.is(r.algo .. "/" .. r.proto, "nvls/simple", "2 x 8 H100, 1 MiB, NCCL 2.26.2: NVLS_TREE")
t.near(r.latency, 53e-6, 1e-9, "NVLS_TREE latency: 25 + 2 x 14 us")
t.near(r.bw_time, 2 * 15 * 1e-6, 1e-9, "2 steps x 15 posts x 1 us (one message a step)")
t.near(r.time, 83e-6, 1e-9, "1 MiB: 53 + 30 = 83 us")

-- AMD hosts: NCCL's post is 2 us (getNetOverhead), 2 x 15 x 2 = 60 us.
local amd = ar(MiB, 2, "amd", "nvls")
t.near(amd.bw_time, 2 * 15 * 2e-6, 1e-9, "AMD hosts: 2 x 15 posts x 2 us")

-- 64 KiB holds data in 2 channels: one more post a step, 2 x 1 x 1 us,
-- over a streaming time and fill under 2 us.
local small = ar(64 * 1024, 2, "intel", "nvls")
t.near(small.bw_time, 2e-6, 1e-9, "64 KiB: 2 channels, 1 more post a step")

-- 4 nodes: 2 x log2(4) = 4 network steps, 25 + 4 x 14 = 81 us of latency
-- and 4 x 15 x 1 = 60 us of posts at 1 MiB: 141 us.
local four = ar(MiB, 4, "intel", "nvls")
t.near(four.latency, 81e-6, 1e-9, "4 nodes: 25 + 4 x 14 us")
t.near(four.bw_time, 60e-6, 1e-9, "4 nodes, 1 MiB: 4 steps x 15 posts x 1 us")

t.done_testing()
