-- NCCL does not rank PXN against the direct path: at NCCL_P2P_PXN_LEVEL's
-- default 2 a send to another node's rank goes through the NIC of the
-- local GPU on the peer's rail, relayed by that GPU, whenever it reaches
-- the NIC at PXB or better and the sender over NVLink (NVIDIA/nccl
-- v2.27.7-1 src/graph/search.cc ncclTopoGetNetDev).  So an all-to-all
-- across NVLink nodes prices pxn where the library runs it, even where
-- the direct path would cost less (efa-100's plugin takes one receive a
-- call, so PXN groups no posts and only adds its NVLink step); a forced
-- p2p (NCCL_PXN_DISABLE=1) still prices; RCCL (pxn_off) and NCCL before
-- 2.12.7 have no PXN (engine/comm_algo.c comm_pxn_routes).
local t = require "tap"
local gp = require "gpuplan"
local comm = require "gpuplan.comm"
local cat = gp.catalog()
local MiB = 2 ^ 20

local function p5(nodes)
  return comm.from_fabrics({ scaleup = "nvlink4", gpus_per_node = 8, nodes = nodes, nics = 32,
                             nic_fabric = "efa-100", gpu = cat.gpus["h100-sxm"],
                             cpu_vendor = "amd" }, cat)
end
local function a2a(topo, extra)
  local a = { op = "all_to_all", bytes = 32 * MiB, gpus = 16, topology = topo, nccl = "2.27.7" }
  for k, v in pairs(extra or {}) do a[k] = v end
  return gp.comm(a)
end

-- 2 x 8 P5 at 32 MiB, AMD hosts (a Simple network post 3 x 2 us,
-- tuning.cc getNetOverhead), one receive a call (max_recvs 1): pxn's
-- latency is the Simple base 8.4 us + 2 NVLink steps of 3.4 (to the rail
-- GPU, and NCCL's in-node step) + the network step 31.3 (20 + 11.3
-- Simple) + 8 remote peers x 1 post x 6 us = 94.5 us; the direct path's
-- is one NVLink step less, 91.1 us.  Tolerance
-- 1e-6 relative: float rounding.
local topo = p5(2)
local r = a2a(topo)
t.is(r.algo, "pxn", "P5: NCCL relays the remote sends (pxn), not ranked against p2p")
t.near(r.latency, 94.5e-6, 1e-6, "pxn: 8.4 + 2 x 3.4 + 31.3 + 8 x 6 = 94.5 us")
local d = a2a(topo, { algo = "p2p" })
t.is(d.algo, "p2p", "a forced p2p (NCCL_PXN_DISABLE=1) still prices")
t.near(d.latency, 91.1e-6, 1e-6, "p2p: 8.4 + 3.4 + 31.3 + 8 x 6 = 91.1 us")
t.ok(d.time < r.time, "the direct path is the cheaper one here, yet not what NCCL runs")

-- RCCL keeps PXN off (pxn_off): the direct path, and a forced pxn is
-- refused naming why.
local amd = p5(2)
amd.pxn_off = true
t.is(a2a(amd).algo, "p2p", "pxn_off: the direct path")
t.raises(function() a2a(amd, { algo = "pxn" }) end,
  "pxn is off in this collective library (the topology's pxn_off; pxn_off = false prices "
  .. "NCCL_PXN_DISABLE=0)", "pxn_off: a forced pxn refused, naming the key that turns it on", true)

-- NCCL 2.11.4 has no PXN path: the direct path.
t.is(a2a(topo, { nccl = "2.11.4" }).algo, "p2p", "NCCL 2.11.4: no PXN, p2p")

-- One node: nothing to relay; the all-to-all stays p2p.
t.is(a2a(topo, { gpus = 8 }).algo, "p2p", "one node: p2p")

t.done_testing()
