-- A ring across nodes leaves each node from its last GPU.  NCCL relays
-- that send through the GPU by the NIC the ring entered by (PXN, on by
-- default), so the node's links carry one hop a rank as inside a node;
-- RCCL keeps PXN off, so the last GPU sends through its own NIC and, with
-- a NIC a GPU, a rank's links carry (g - 1) / g of its ring bytes
-- (catalog/FORMAT.md, ccl_pxn; engine/comm_algo.c ring_up_share).
local t = require "tap"
local gp = require "gpuplan"
local comm = require "gpuplan.comm"
local cat = gp.catalog()
local GiB = 2 ^ 30

-- The catalog: RCCL's generations say so, NVIDIA's do not.
t.is(cat.archs.cdna2.ccl_pxn, false, "CDNA 2: RCCL keeps PXN off")
t.is(cat.archs.cdna3.ccl_pxn, false, "CDNA 3: RCCL keeps PXN off")
t.is(cat.archs.cdna4.ccl_pxn, false, "CDNA 4: RCCL keeps PXN off")
t.is(cat.archs.hopper.ccl_pxn, nil, "Hopper: NCCL's PXN")

local function node(gpu, up, nodes, nics)
  return comm.from_fabrics({ scaleup = up, gpus_per_node = 8, nodes = nodes, nics = nics,
                             nic_fabric = nics > 0 and "roce-400" or nil,
                             gpu = cat.gpus[gpu], cpu_vendor = "amd" }, cat)
end
t.is(node("mi300x", "xgmi4", 2, 8).pxn_off, true, "an MI300X node: pxn_off")
t.is(comm.topology("dgx-h100", 2).pxn_off, false, "a DGX H100: PXN")

local function ring(topo, bytes, gpus)
  return gp.comm { op = "all_reduce", bytes = bytes, gpus = gpus, topology = topo, algo = "ring" }
end

-- 2 x 8 MI300X on eight 400G RoCE NICs, 16 GiB, the Simple ring: its
-- bytes 2 x 15/16 x S cross the slower of the links and the NICs.  The
-- links: xGMI 448 GB/s x 0.709 (catalog xgmi4: 7 x the slowest link) =
-- 317.632 GB/s, carrying 7/8 of a rank's bytes with PXN off, so 317.632
-- x 8/7 = 363.0; the NICs 8 x 50 x 0.90 (roce-400) = 360 GB/s.  PXN off:
-- 2 x 15/16 x 16 GiB / 360e9 = 89.478 ms (busbw 360 less the latency);
-- PXN on: / 317.632e9 = 101.43 ms.
-- 1e-9 s: the same arithmetic, rounding only.
local S = 16 * GiB
local two = node("mi300x", "xgmi4", 2, 8)
local off = ring(two, S, 16)
t.is(off.algo .. "/" .. off.proto, "ring/simple", "16 GiB: the Simple ring")
t.near(off.bw_time, 2 * 15 / 16 * S / 360e9, 1e-9, "PXN off: the NICs bind, not the links")
two.pxn_off = false
local on = ring(two, S, 16)
t.near(on.bw_time, 2 * 15 / 16 * S / 317.632e9, 1e-9, "PXN on: the links bind at their one-node rate")

-- Four NICs for eight GPUs: half the ranks never send to a NIC and carry
-- all of their ring bytes over the links, so the share is 1 even with PXN
-- off.  With the NICs made fast (200 GB/s each, no PCIe cap: 4 x 200 x
-- 0.9 = 720 GB/s) the links bind at 317.632 GB/s either way.
local four = node("mi300x", "xgmi4", 2, 4)
four.nic_bw, four.nic_path_bw = 200e9, 0
t.near(ring(four, S, 16).bw_time, 2 * 15 / 16 * S / 317.632e9, 1e-9,
       "fewer NICs than GPUs: the links carry every byte")

-- One node: nothing leaves it, the ring is the link's (2 x 7/8 x S / 317.632e9).
local one = node("mi300x", "xgmi4", 1, 0)
t.near(ring(one, S, 8).bw_time, 2 * 7 / 8 * S / 317.632e9, 1e-9, "one node: the links' rate")

-- The field is checked as the other topology booleans are.
t.raises(function() ring({ gpus_per_node = 8, nodes = 1, up_kind = "nvlink", up_bw = 448e9,
                           pxn_off = "yes" }, GiB, 8) end,
         "pxn_off", "a non-boolean pxn_off is refused, naming it", true)

-- A catalog arch's ccl_pxn is a boolean, refused otherwise at the field.
local schema = require "gpuplan.schema"
local v, e = schema.check({ id = "cdna-bad", name = "x", launch_overhead = "4us",
                            achievable = { gemm = { bf16 = 0.7 }, hbm = 0.8, reason = "x",
                                           source = "y" }, ccl_pxn = "yes" }, schema.arch)
t.ok(v == nil and e and e.path == "ccl_pxn", "ccl_pxn = \"yes\": refused at the field")

t.done_testing()
