-- RCCL runs no LL128 on CDNA 3 and 4 nodes: its LL128 enable rule needs
-- topo->ll128Enabled, which only a matching Rome model or
-- RCCL_LL128_FORCE_ENABLE sets (catalog/FORMAT.md, nccl_ll128;
-- engine/comm_algo.c comm_price).
local t = require "tap"
local gp = require "gpuplan"
local comm = require "gpuplan.comm"
local cat = gp.catalog()
local MiB = 2 ^ 20

-- The catalog: CDNA 3 and 4 say so, NVIDIA's generations and CDNA 2 (two
-- of RCCL's MI250 Rome models set ll128Enabled=1) do not.
t.is(cat.archs.cdna3.nccl_ll128, false, "CDNA 3: RCCL runs no LL128 by default")
t.is(cat.archs.cdna4.nccl_ll128, false, "CDNA 4: RCCL runs no LL128 by default")
t.is(cat.archs.cdna2.nccl_ll128, nil, "CDNA 2: left as the links allow")
t.is(cat.archs.hopper.nccl_ll128, nil, "Hopper: NCCL's LL128 rule alone")

local function node(gpu, up, nodes, nics)
  return comm.from_fabrics({ scaleup = up, gpus_per_node = 8, nodes = nodes, nics = nics,
                             nic_fabric = nics > 0 and "roce-400" or nil,
                             gpu = cat.gpus[gpu], cpu_vendor = "amd" }, cat)
end

-- The topology carries it from the GPU's arch.
t.is(node("mi300x", "xgmi4", 1, 0).ll128_off, true, "an MI300X node: ll128_off")
t.is(node("mi355x", "xgmi-mi355x", 2, 8).ll128_off, true, "an MI355X node: ll128_off")
t.is(comm.topology("dgx-h100", 2).ll128_off, false, "a DGX H100: LL128 stays")

-- One MI300X node, 16 MiB: the ring's Simple moves 2 (n-1)/n S over the
-- link at xGMI's 448 GB/s x 0.709 (catalog xgmi4: 7 x the slowest
-- link), 2 x 7/8 x 16 MiB / 317.632e9 = 92.434 us; with LL128 allowed
-- (RCCL_LL128_FORCE_ENABLE) the same ring runs LL128 at 120/128 of it,
-- 98.597 us.  1e-9: the same
-- arithmetic, rounding only.
local function run(topo, bytes, gpus)
  return gp.comm { op = "all_reduce", bytes = bytes, gpus = gpus, topology = topo }
end
local one = node("mi300x", "xgmi4", 1, 0)
local r = run(one, 16 * MiB, 8)
t.is(r.proto ~= "ll128", true, "one MI300X node, 16 MiB: no LL128 (" .. r.algo .. "/" .. r.proto .. ")")
t.near(r.bw_time, 2 * 7 / 8 * 16 * MiB / (448e9 * 0.709), 1e-9, "ring/simple at the link's rate")
one.ll128_off = false
local f = run(one, 16 * MiB, 8)
t.is(f.proto, "ll128", "with ll128Enabled forced: LL128")
t.near(f.bw_time, 2 * 7 / 8 * 16 * MiB / (448e9 * 0.709 * 120 / 128), 1e-9,
       "LL128 carries 120 of each 128 bytes")

-- Two MI355X nodes over eight 400G RoCE NICs (hisohara/ai-scripts AAC14,
-- RCCL 2.26.6, 16 MiB measured in 261.6 us): without LL128 the tuner's
-- pick is a Simple or LL one, and it takes longer than the LL128 tree
-- the engine priced before (no tolerance: an order, not a figure).
local two = node("mi355x", "xgmi-mi355x", 2, 8)
local a = run(two, 16 * MiB, 16)
t.is(a.proto ~= "ll128", true, "2 x 8 MI355X, 16 MiB: no LL128 (" .. a.algo .. "/" .. a.proto .. ")")
two.ll128_off = false
local b = run(two, 16 * MiB, 16)
t.is(b.proto, "ll128", "the same with ll128Enabled: LL128")
t.ok(a.time > b.time, "without LL128 it takes longer")

-- RCCL's per-call base latency (catalog cdna3/cdna4 ccl_base_lat, RCCL's
-- baseLat 12 / 12 / 17 us against NCCL's ring 6.6 / 14 / 8.4): one
-- MI300X node's 8 B all-reduce runs the LL ring either way, so the two
-- prices differ by exactly 12 - 6.6 = 5.4 us.  1e-9: rounding only.
local small = node("mi300x", "xgmi4", 1, 0)
t.near(small.base_lat_ll, 12e-6, 1e-12, "an MI300X node: RCCL's 12 us LL base")
t.near(small.base_lat_simple, 17e-6, 1e-12, "an MI300X node: RCCL's 17 us Simple base")
t.is(comm.topology("dgx-h100", 1).base_lat_ll, nil, "a DGX H100: NCCL's own")
local rb = run(small, 8, 8)
small.base_lat_ll, small.base_lat_ll128, small.base_lat_simple = 0, 0, 0
local nb = run(small, 8, 8)
t.is(rb.algo .. "/" .. rb.proto, "ring/ll", "8 B, RCCL's base: the LL ring")
t.is(nb.algo .. "/" .. nb.proto, "ring/ll", "8 B, NCCL's base: the LL ring")
t.near(rb.time - nb.time, 5.4e-6, 1e-9, "RCCL's base adds 12 - 6.6 us")
t.raises(function() small.base_lat_ll = -1e-6; run(small, 8, 8) end,
         "base_lat_ll must be a finite number of seconds", "a negative base latency is refused", true)

-- The field is checked as the other topology booleans are.
t.raises(function() run({ gpus_per_node = 8, nodes = 1, up_kind = "nvlink", up_bw = 448e9,
                          ll128_off = "yes" }, MiB, 8) end,
         "ll128_off", "a non-boolean ll128_off is refused, naming it", true)

t.done_testing()
