-- RCCL's LL network step on CDNA 3 and 4 nodes: the AMD build fills its
-- tuner's hardware latencies from its own tuning table, whose network row
-- gives the LL tree 10.5 us and the LL ring 9.5 us a step (NCCL: 5.0 and
-- 2.7); the catalog archs' ccl_net_lat, the topology's nic_nccl tree_ll /
-- ring_ll (catalog/FORMAT.md; lua/gpuplan/comm.lua net_steps).
local t = require "tap"
local gp = require "gpuplan"
local comm = require "gpuplan.comm"
local cat = gp.catalog()

-- The catalog: CDNA 3 and 4 carry RCCL's figures, NVIDIA's generations
-- and CDNA 2 (older RCCL tables: tree LL 12.5 in ROCm 6.1/6.2) do not.
-- 1e-12: the unit conversion only.
t.near(cat.archs.cdna3.ccl_net_lat.tree_ll, 10.5e-6, 1e-12, "CDNA 3: RCCL's LL tree network step")
t.near(cat.archs.cdna3.ccl_net_lat.ring_ll, 9.5e-6, 1e-12, "CDNA 3: RCCL's LL ring network step")
t.near(cat.archs.cdna4.ccl_net_lat.tree_ll, 10.5e-6, 1e-12, "CDNA 4: the same table row")
t.is(cat.archs.hopper.ccl_net_lat, nil, "Hopper: NCCL's own")
t.is(cat.archs.cdna2.ccl_net_lat, nil, "CDNA 2: not taken")

local function two_nodes(gpu, up)
  return comm.from_fabrics({ scaleup = up, gpus_per_node = 8, nodes = 2, nics = 8,
                             nic_fabric = "roce-400", gpu = cat.gpus[gpu],
                             cpu_vendor = "amd" }, cat)
end

-- The topology's step terms are RCCL's figure less the NIC's latency
-- (the engine prices a network step as the link's latency plus the
-- term): roce-400's 2.7 us -> 10.5 - 2.7 = 7.8 us, 9.5 - 2.7 = 6.8 us.
local two = two_nodes("mi355x", "xgmi-mi355x")
t.near(two.nic_nccl.tree_ll, 7.8e-6, 1e-12, "2 x MI355X: tree LL term 10.5 - 2.7 us")
t.near(two.nic_nccl.ring_ll, 6.8e-6, 1e-12, "2 x MI355X: ring LL term 9.5 - 2.7 us")
t.near(two_nodes("mi300x", "xgmi4").nic_nccl.tree_ll, 7.8e-6, 1e-12, "2 x MI300X: the same")
t.is(comm.topology("dgx-h100", 2).nic_nccl, nil, "a DGX H100 pair: NCCL's defaults")
t.is(cat.fabrics["roce-400"].nccl, nil, "the fabric's own terms are left as they were")

-- 2 x 8 MI355X, 8 B: the LL tree crosses the network once up and once
-- down (2 x floor(log2 2) = 2 network steps), so RCCL's step prices it
-- 2 x (10.5 - 5.0) = 11.0 us above NCCL's (hisohara/ai-scripts AAC14,
-- RCCL 2.26.6: 41.16 us measured; 41.4 priced, 30.4 with NCCL's).
-- 1e-9: the same arithmetic, rounding only.
local function run(topo, algo)
  return gp.comm { op = "all_reduce", bytes = 8, gpus = 16, topology = topo, algo = algo }
end
local a = run(two, "tree")
local saved = two.nic_nccl
two.nic_nccl = {}
local b = run(two, "tree")
t.is(a.proto .. "/" .. b.proto, "ll/ll", "8 B: the LL tree both ways")
t.near(a.time - b.time, 11.0e-6, 1e-9, "RCCL's LL tree step adds 2 x (10.5 - 5.0) us")
-- The LL ring crosses the network 2 (N - 1) x 2 = 4 times a pass: at
-- least 4 x (9.5 - 2.7) = 27.2 us more (the proxy's wait per network
-- step, ring_net_extra, carries the step too: more, not less).
local ra = (function() two.nic_nccl = saved; return run(two, "ring") end)()
two.nic_nccl = {}
local rb = run(two, "ring")
two.nic_nccl = saved
t.ok(ra.time - rb.time >= 27.2e-6 - 1e-9, "RCCL's LL ring step adds at least 4 x (9.5 - 2.7) us")
t.is(run(two).algo .. "/" .. run(two).proto, "tree/ll", "8 B: the tuner's pick is the LL tree")

t.done_testing()
