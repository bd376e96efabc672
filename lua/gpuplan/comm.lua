-- gpuplan.comm: collective communication cost (nccl-tests conventions).
--
--   local gp = require "gpuplan"
--   local r = gp.comm{ op = "all_reduce", bytes = 2^30, gpus = 16, system = "dgx-h100" }
--   print(r.time, r.algbw / 1e9, r.busbw / 1e9, r.algo, r.proto)
--
-- The engine (engine/comm.c) prices ring, double binary tree, NVLS, SHARP,
-- hierarchical, p2p and PXN algorithms with LL/LL128/Simple protocols and
-- runs the pair NCCL's tuner ranks cheapest by its own estimate (its time
-- is that pair's price; hierarchical only when forced).  Sizes follow nccl-tests: the
-- total buffer for all_gather/reduce_scatter, the per-rank send buffer for
-- all_to_all, the message otherwise.  time in s, algbw/busbw in B/s.
--
-- A topology is a flat table of SI numbers (the fields of gp_topo in
-- engine/comm.h):
--   gpus_per_node, nodes, up_kind = "nvlink"|"pcie", up_bw (B/s per
--   direction per GPU), up_latency (s per hop), up_achievable, up_nvls,
--   up_crosses_cpu, up_mesh_peers, nics (per node), nic_bw (B/s per direction per NIC),
--   nic_latency, nic_achievable, nic_sharp, nic_path_bw (B/s one GPU
--   pushes to the NICs: its PCIe link), nic_gdr_off (no GPUDirect RDMA between
--   the GPU and its NICs: the network data is staged through host memory,
--   nic_path_bw carrying it at the host-staged share), nvls_tree_bw2 / nvls_tree_bw3 (bus
--   B/s one NVLS_TREE head carries on 2 / 3+ nodes), up_nccl / nic_nccl
--   (the fabrics' `nccl` blocks: NCCL's step latencies, NVLS terms and
--   LL128's share, SI numbers, over the link kind's defaults;
--   catalog/FORMAT.md),
--   host_mem_bw (B/s of host DRAM; traffic staged through host memory
--   shares it), ll_max_bw (NCCL's ceiling on LL's bus B/s on one node for
--   the GPU's generation, which its tuner ranks LL by: the arch's
--   nccl_ll_max_bw), tree_ch_bw2 / tree_ch_bw3 (NCCL's ceiling on the bus
--   B/s one tree channel carries across 2 / 3+ nodes, which its tuner ranks
--   the tree by: the arch's nccl_tree_ch_bw), tree_ll128_ch_bw2 /
--   tree_ll128_ch_bw3 (the same with LL128: the arch's
--   nccl_tree_ll128_ch_bw), ring_ll128_ch_bw (NCCL's
--   ceiling on the bus B/s one ring channel carries with LL128, which its
--   tuner ranks LL128 by across nodes: the arch's nccl_ring_ll128_ch_bw),
--   p2p_nvl_ch_bw (B/s one p2p channel moves to a peer it writes to over
--   NVLink: the arch's nccl_p2p_nvl_ch_bw; absent, NCCL's 14 GB/s),
--   host_amd (the nodes' CPUs
--   are AMD x86: NCCL posts network messages slower there; the system's
--   cpu_vendor), p2p_read (NCCL reads NVLink peer-to-peer data from the
--   sender rather than writing it into the receiver: the GPU's
--   nccl_p2p_read), nic_c2c (the NICs hang off the host CPU the GPU
--   reaches over NVLink-C2C: the GPU's host_link; before NCCL 2.27.3
--   no LL128 across nodes), ll128_off (the collective library runs no
--   LL128 on the part: RCCL on CDNA 3 and 4, the arch's nccl_ll128),
--   pxn_off (the collective library relays no send through a NIC's own
--   GPU, so a ring leaves a node from its last GPU's NIC: RCCL, the arch's
--   ccl_pxn), base_lat_ll / base_lat_ll128 / base_lat_simple (the collective
--   library's per-call base latency, s, where it is not NCCL's: the
--   arch's ccl_base_lat, RCCL's 12 / 12 / 17 us on AMD Instinct)
-- built by M.topology from catalog `system` and `fabric` entries; any field
-- can be overridden (numbers in SI, or strings with units: "450GB/s per-dir",
-- "0.6us").
--
-- Where the ranks sit: `gpus` ranks over `nodes` nodes, gpus / nodes in
-- each (gp.comm{gpus = 8, nodes = 8}: one GPU in each of 8 nodes), or
-- `gpus_per_node` of each node's GPUs; without either the ranks fill whole
-- nodes.  A group on part of a node drives only its own GPUs' NICs and
-- PCIe links (engine/comm.h, gp_group).

local units = require "gpuplan.units"
local version = require "gpuplan.version"

local M = {}

M.ops = { "all_reduce", "all_gather", "reduce_scatter", "all_to_all",
          "broadcast", "reduce", "send_recv" }
M.algos = { "ring", "tree", "nvls", "sharp", "hierarchical", "p2p", "pxn" }
-- gp.comm's nvls: NCCL_NVLS_ENABLE's three settings (M.comm); the
-- --nvls option's declared values (gpuplan.options) are this list.
M.NVLS_MODES = { "auto", "on", "off" }

local op_alias = { allreduce = "all_reduce", allgather = "all_gather",
                   reducescatter = "reduce_scatter", alltoall = "all_to_all",
                   sendrecv = "send_recv", bcast = "broadcast" }

local function is_in(list, v)
  for _, x in ipairs(list) do if x == v then return true end end
  return false
end

-- Canonical op name or an error naming the choices.
function M.op_name(op)
  if type(op) ~= "string" then
    error("comm: op must be a string (one of " .. table.concat(M.ops, ", ") .. ")", 3)
  end
  local k = op:lower():gsub("-", "_")
  k = op_alias[k:gsub("_", "")] or k
  if not is_in(M.ops, k) then
    error("comm: unknown op '" .. op .. "' (one of " .. table.concat(M.ops, ", ") .. ")", 3)
  end
  return k
end

local function core() return require "gpuplan.core" end
local function catalog(cat) return cat or require("gpuplan").catalog() end

-- Field kinds for overrides given as strings with units.
local field_kind = {
  up_bw = "link", nic_bw = "link", up_latency = "time", nic_latency = "time",
  nic_path_bw = "bandwidth", nvls_tree_bw2 = "bandwidth", nvls_tree_bw3 = "bandwidth",
  host_mem_bw = "bandwidth", ll_max_bw = "bandwidth",
  tree_ch_bw2 = "bandwidth", tree_ch_bw3 = "bandwidth", ring_ll128_ch_bw = "bandwidth",
  p2p_nvl_ch_bw = "bandwidth",
  tree_ll128_ch_bw2 = "bandwidth", tree_ll128_ch_bw3 = "bandwidth",
  base_lat_ll = "time", base_lat_ll128 = "time", base_lat_simple = "time",
  tree_tune_ch_bw2 = "bandwidth", tree_tune_ch_bw3 = "bandwidth",
}
local topo_fields = {
  gpus_per_node = "int", nodes = "int", up_kind = "string", up_bw = "number",
  up_latency = "number", up_achievable = "number", up_nvls = "boolean",
  up_crosses_cpu = "boolean", up_mesh_peers = "int", nics = "int", nic_bw = "number",
  nic_latency = "number", nic_achievable = "number", nic_sharp = "boolean",
  nic_path_bw = "number", nvls_tree_bw2 = "number", nvls_tree_bw3 = "number",
  host_mem_bw = "number", ll_max_bw = "number", host_amd = "boolean",
  p2p_read = "boolean", nic_c2c = "boolean", ll128_off = "boolean", pxn_off = "boolean",
  nic_gdr_off = "boolean",
  base_lat_ll = "number", base_lat_ll128 = "number", base_lat_simple = "number",
  tree_ch_bw2 = "number", tree_ch_bw3 = "number", ring_ll128_ch_bw = "number",
  tree_ll128_ch_bw2 = "number", tree_ll128_ch_bw3 = "number", p2p_nvl_ch_bw = "number",
  tree_tune_ch_bw2 = "number", tree_tune_ch_bw3 = "number", tree_tune_until = "int",
  up_nccl = "table", nic_nccl = "table",
}
M.topology_fields = topo_fields

local function apply_overrides(t, o, strict)
  for k, v in pairs(o or {}) do
    local ty = topo_fields[k]
    if ty then
      -- a field of topology = {...} by its path; a top-level key (gp.comm's
      -- own nvls_tree_bw2 = ...) by its name, as the call wrote it
      local name = strict and "topology." .. k or k
      if type(v) == "string" and field_kind[k] then
        -- name the field: units.parse's message names only the text
        local okp, pv = pcall(units.parse, v, field_kind[k])
        if not okp then
          error("comm: " .. name .. ": " .. tostring(pv):gsub("^[^\n]-%.lua:%d+: ", ""), 3)
        end
        v = pv
      end
      if type(v) == "number" and (v ~= v or v == math.huge or v == -math.huge) then
        error("comm: " .. name .. " must be finite (got " .. require("gpuplan.args").shown(v) .. ")", 3)
      end
      if ty == "int" and math.type(v) ~= "integer" then
        -- a whole float past 2^63 has no integer (math.tointeger: nil),
        -- and was read as the field left out: topology.nodes = 1e300
        -- raised "attempt to compare number with nil" from this file
        if type(v) == "number" and v == math.floor(v) and math.tointeger(v) then v = math.tointeger(v)
        else error("comm: " .. name .. " must be an integer (got " .. require("gpuplan.args").shown(v) .. ")", 3) end
      elseif (ty == "number" and type(v) ~= "number") or (ty ~= "int" and ty ~= "number" and type(v) ~= ty) then
        error("comm: " .. name .. " must be a " .. ty .. " (got " .. type(v) .. ")", 3)
      end
      -- a share of a link's rate: the engine's link check refused it as
      -- "scale-up achievable" or "nic achievable", no key the call wrote
      -- (tests/lua/fuzz_options.t); said here by its name
      if (k == "up_achievable" or k == "nic_achievable") and not (v > 0 and v <= 1) then
        error("comm: " .. name .. " must be in (0, 1] (got " .. require("gpuplan.args").shown(v)
          .. ")", 3)
      end
      -- a link's rate and latency, in the engine's bounds (engine/
      -- comm_topo.c link_check: LINK_MIN_BW 1 B/s, LINK_MAX_BW 1e18 B/s,
      -- LINK_MAX_LAT 1 s), which it said as "scale-up bandwidth" or "nic
      -- latency", no key the call wrote; and a NIC's only on more than one
      -- node, so nic_bw = -1 on one node was taken unread
      if (k == "up_bw" or k == "nic_bw") and not (v >= 1 and v <= 1e18) then
        error("comm: " .. name .. " must be 1 B/s to 1e18 B/s (got "
          .. require("gpuplan.args").shown(v) .. ")", 3)
      end
      -- the node count and its GPUs: at least one, at most the engine's
      -- count bound (engine/common.h GP_COUNT_MAX, 2^24).  topology.nodes
      -- = -1 was refused as "comm: gpus -8: a collective needs >= 2 gpus",
      -- a gpus the call never gave, computed from it.
      if (k == "nodes" or k == "gpus_per_node") and not (v >= 1 and v <= 1 << 24) then
        error("comm: " .. name .. " must be an integer in 1..16777216 (got "
          .. require("gpuplan.args").shown(v) .. ")", 3)
      end
      if (k == "up_latency" or k == "nic_latency") and not (v >= 0 and v <= 1) then
        error("comm: " .. name .. " must be 0 to 1 s (got " .. require("gpuplan.args").shown(v)
          .. ")", 3)
      end
      t[k] = v
    elseif strict then
      -- the nearest field named, as every other table's misspelt key is
      local names = {}
      for n in pairs(topo_fields) do names[#names + 1] = n end
      table.sort(names)
      local near = type(k) == "string" and require("gpuplan.args").nearest(k, names)
      -- with no near name, the fields it takes (as args.check_keys says
      -- every other table's): "unknown topology field 'gpus'" alone left
      -- the script to find them in docs/lua.md; a gp.comm option given
      -- inside the table (gpus, the ranks) is named as one
      local tail = near and " (did you mean '" .. near .. "'?)"
        or (k == "gpus" or k == "bytes" or k == "op" or k == "algo")
          and string.format(" (%s is gp.comm's own option: give it beside topology, "
            .. "gp.comm{topology = {...}, %s = ...})", k, k)
        or " (" .. table.concat(names, ", ") .. ")"
      error("comm: unknown topology field '" .. tostring(k) .. "'" .. tail, 3)
    end
  end
  return t
end

-- The PCIe bandwidth per direction of a GPU's host link, B/s: 0.985 GB/s
-- per lane at Gen3 (8 GT/s, 128b/130b), doubling per generation, at 0.8 for
-- TLP headers and flow control (PCI-SIG base specification); nil when the
-- catalog gives no PCIe link.  It bounds what the GPU pushes to its NICs
-- (GPUDirect RDMA reads the GPU's memory over this link) and host offload.
function M.pcie_bw(g)
  if not g or not g.pcie or not g.pcie.gen then return nil end
  return (g.pcie.lanes or 16) * 0.985e9 * 2 ^ (g.pcie.gen - 3) * 0.8
end

-- The rate a GPU's copies to and from host memory reach, B/s per
-- direction: a superchip's own CPU link where the catalog gives one
-- (gpu.host_link: GB200's NVLink-C2C), else its PCIe link (M.pcie_bw);
-- nil when the catalog gives neither.
function M.host_link_bw(g)
  if g and g.host_link and g.host_link.bw then return g.host_link.bw end
  return M.pcie_bw(g)
end

-- The host DRAM bandwidth the node's CPUs stream at, B/s: v (the caller's
-- host_bw: a number or "200GB/s"), else 0.8 of the catalog system's
-- theoretical host_mem_bw (streaming reads and writes reach ~0.8 of it:
-- STREAM on DDR4/DDR5 servers), else 60 GB/s (0.8 of dual-channel
-- DDR5-4800, 76.8 GB/s: the workstation case), said through
-- default(text) with why (what reads it).  who names the caller in the
-- error.  llama.cpp's offloaded layers and the offloaded optimizer step
-- read it.
function M.host_bw(v, sys, default, who, why)
  if v ~= nil then
    if type(v) == "string" then
      local n, msg = require("gpuplan.options").quantity("host_bw", v)
      if msg then error(who .. ": " .. msg, 0) end
      v = n
    end
    if type(v) ~= "number" or v ~= v or v <= 0 or v == math.huge then
      error(string.format("%s: host_bw must be a positive bandwidth (got %s)", who,
        require("gpuplan.args").shown(v)), 0)
    end
    return v
  end
  v = sys and sys.host_mem_bw and sys.host_mem_bw * 0.8 or 60e9
  default(string.format("host_bw=%.0fGB/s (%s)", v / 1e9, why))
  return v
end

-- The spec of a node for from_fabrics: the catalog system's (its scale-up
-- fabric, GPUs, NICs and their fabric), or one built from the GPU alone
-- (its NVLink domain, or its PCIe generation, and no NICs), with the
-- caller's o.gpus_per_node, o.nics and o.nic_fabric (checked by the
-- caller) applied.  What the caller did not give of a built node is said
-- through default(text).  who names the caller in errors.  spec.name says
-- which node it is ("system 'dgx-h100'", "the node built from h800-pcie
-- (pcie5, no catalog system)") for the caller's messages.
function M.node_spec(sys, gpu, default, who, o, gpus)
  o = o or {}
  local spec
  local fab = not sys and (gpu.scaleup and gpu.scaleup.fabric or (gpu.pcie and ("pcie" .. gpu.pcie.gen)))
  if not sys and not fab and gpus == 1 then
    -- A job of one GPU (gpus: the most the caller's job spans, nil where
    -- it does not say) on a card whose entry states no link: no
    -- collective and no hand-off crosses a link, so the node is that one
    -- GPU, with no fabric to price (the engine needs a link's rate only
    -- on a node of more than one GPU, lgp_totopo's topology.up_bw).
    -- Refusing it ("has no scale-up fabric") asked for a system the job
    -- does not use.
    spec = { gpus_per_node = 1, nics = 0,
             name = string.format("the node built from %s (one GPU, no link)", gpu.id) }
    default(string.format("one GPU, no link (%s's entry states no scale-up fabric nor pcie)",
      gpu.id))
  elseif sys then
    spec = { scaleup = sys.scaleup, gpus_per_node = sys.gpus, nics = sys.nics,
             nic_fabric = sys.nic_fabric, cpu_vendor = sys.cpu_vendor,
             host_gpus = sys.host_gpus, name = "system '" .. sys.id .. "'" }
  else
    if not fab then
      -- the card's own fields first: a script's gpu table is held by no
      -- catalog system, so "give system = ID" alone was a dead end there
      -- ("system 'dgx-h100' holds h100-sxm, not tiny")
      -- (infer's refusal of the same card says both)
      error(string.format("%s: gpu '%s' has no scale-up fabric; give system = ID, or scaleup "
        .. "or pcie in the gpu's entry (scaleup = {fabric = ID, domain = N})", who, gpu.id), 0)
    end
    spec = { scaleup = fab, gpus_per_node = gpu.scaleup and gpu.scaleup.domain or 8, nics = 0,
             name = string.format("the node built from %s (%s, no catalog system)", gpu.id, fab) }
  end
  -- The card itself: from_fabrics reads its arch's NCCL ceilings and its PCIe
  -- path to the NICs, as gpuplan comm's node has them.
  spec.gpu = gpu
  -- A node holds what its system (or the GPU's scale-up domain) holds:
  -- more GPUs per node than that are not one node of it (100 H100s on a
  -- DGX H100 priced as one NVLink node).  gpuplan comm refuses the same.
  if o.gpus_per_node ~= nil and math.type(o.gpus_per_node) == "integer"
      and o.gpus_per_node > spec.gpus_per_node then
    error(string.format("%s: gpus_per_node %d exceeds the %d GPUs of a node of %s (give a "
      .. "system with larger nodes)", who, o.gpus_per_node, spec.gpus_per_node, spec.name:gsub("^the ", "")), 0)
  end
  if o.gpus_per_node ~= nil then spec.gpus_per_node = o.gpus_per_node end
  -- The node's host DRAM, what its GPUs' offloaded states share
  -- (engine/memory.h mem_host_fit): the system's host_memory.  A rack
  -- whose NVLink domain spans hosts (host_gpus) has it by tray, so a
  -- node of fewer of its GPUs holds their trays' share; a server used
  -- on fewer of its GPUs keeps its whole DRAM.  A node built from the
  -- GPU alone, or a user system without host_memory, has none known:
  -- nothing is checked (its defaults line says so, train.lua).
  if sys and sys.host_memory then
    spec.host_memory = sys.host_memory
    if sys.host_gpus and sys.host_gpus < sys.gpus then
      spec.host_memory = sys.host_memory * spec.gpus_per_node / sys.gpus
    end
  end
  if o.nics ~= nil then spec.nics, spec.nics_given = o.nics, true end
  if o.nic_fabric ~= nil then
    -- A NIC's fabric is a network (scope scaleout), as the catalog holds a
    -- system's nic_fabric to (catalog.lua check_refs): nic_fabric =
    -- "nvlink4" or "pcie5" was priced as the nodes' network (llama3-8b on
    -- 16 H100s, ZeRO-3: 2.2961 s against ib-ndr-400's 2.2969), with
    -- nothing said.
    -- An id the catalog lacks, or no id (nic_fabric = 5), was refused by
    -- the lookup in from_fabrics in the catalog's words, "unknown fabric
    -- 'x'" and "fabric must be an id", naming no key a script gave
    -- (tests/lua/fuzz_options.t): said here under its key.
    local args = require("gpuplan.args")
    if type(o.nic_fabric) ~= "string" then
      error(string.format("%s: nic_fabric must be an id, a string (got %s)", who,
        args.shown(o.nic_fabric)), 0)
    end
    local okf, ef = pcall(catalog(o.cat).get, catalog(o.cat), "fabrics", o.nic_fabric)
    if not okf then
      -- (the lookup's words after the key, as --gpu's "unknown gpu 'x'";
      -- without the position a script's catalog object gave them)
      local why = tostring(ef):gsub("^[^%s:]+:%d+: ", "", 1)
      error(args.usage(string.format("%s: nic_fabric: %s", who, why)), 0)
    end
    local f = type(o.nic_fabric) == "string" and catalog().fabrics[o.nic_fabric]
    if f and f.scope ~= "scaleout" then
      local fabs = {}
      for _, id in ipairs(catalog():ids("fabrics")) do
        if catalog().fabrics[id].scope == "scaleout" then fabs[#fabs + 1] = id end
      end
      error(require("gpuplan.args").usage(string.format("%s: nic_fabric '%s' is a scale-up "
        .. "fabric (scope %s), not a network between nodes (scale-out fabrics: %s)", who,
        o.nic_fabric, tostring(f.scope), table.concat(fabs, ", "))), 0)
    end
    spec.nic_fabric = o.nic_fabric
  end
  if (spec.nics or 0) > 0 and not spec.nic_fabric then
    error(string.format("%s: nics = %s needs nic_fabric", who, tostring(spec.nics)), 0)
  end
  if not sys and spec.scaleup then
    local said = {}
    if o.gpus_per_node == nil then said[#said + 1] = "gpus_per_node=" .. spec.gpus_per_node end
    if o.nics == nil then said[#said + 1] = "nics=0" end
    if #said > 0 then
      default(string.format("%s (%s on %s%s)", table.concat(said, ", "), gpu.id, spec.scaleup,
        spec.nics > 0 and "" or ", no NICs"))
    end
  end
  return spec
end

-- The error of a job of `gpus` GPUs that spans several nodes of a node
-- spec (node_spec's) without NICs, or nil when it fits or has NICs; it
-- names the node and what to give.
function M.no_nics(spec, gpus, who, cat)
  local g = spec.gpus_per_node
  if (spec.nics or 0) > 0 or gpus <= g then return nil end
  local fabs = {}
  for _, id in ipairs(catalog(cat):ids("fabrics")) do
    if catalog(cat).fabrics[id].scope == "scaleout" then fabs[#fabs + 1] = id end
  end
  -- nics = 0 given over a system with NICs: the user took them away,
  -- which "system 'hgx-h20' has no NICs" denied (its entry lists 8).
  -- (A node without a NIC fabric needs one too: the message below.)
  if spec.nics_given and spec.nic_fabric then
    return string.format("%s: %d GPUs span %d nodes of %d, but nics = 0 leaves %s no NICs to "
      .. "reach the others: give nics = N above 0", who, gpus, -(-gpus // g), g, spec.name)
  end
  return string.format("%s: %d GPUs span %d nodes of %d, but %s has no NICs: give nics = N "
    .. "and nic_fabric = ID (scale-out fabrics: %s), or a system with NICs", who, gpus, -(-gpus // g), g, spec.name, table.concat(fabs, ", "))
end

-- Whether the arch's collective library runs no LL128 (its nccl_ll128 =
-- false: RCCL on CDNA 3 and 4 enables LL128 only where a Rome model of
-- the node sets ll128Enabled; catalog/FORMAT.md): the topology's ll128_off.
function M.ll128_off(arch)
  return arch ~= nil and arch.nccl_ll128 == false
end

-- Whether the arch's collective library relays no send through a NIC's
-- own GPU (its ccl_pxn = false: RCCL keeps PXN off by default;
-- catalog/FORMAT.md): the topology's pxn_off.
function M.pxn_off(arch)
  return arch ~= nil and arch.ccl_pxn == false
end

-- The collective library's base latencies where the arch gives its own
-- (ccl_base_lat: RCCL's baseLat on AMD Instinct); nil leaves NCCL's.
function M.set_base_lat(t, arch)
  local b = arch and arch.ccl_base_lat
  if b then t.base_lat_ll, t.base_lat_ll128, t.base_lat_simple = b.ll, b.ll128, b.simple end
end

-- The NIC fabric's NCCL terms, with the LL network step of the arch's
-- collective library where it gives its own (ccl_net_lat: RCCL's hwLat
-- NET row on AMD Instinct, catalog/FORMAT.md).  The engine prices a
-- network step as the link's latency plus the step term (engine/
-- comm_topo.c: NCCL's hwLat less the link's latency), so the term is the
-- library's figure less the NIC's latency.  A fresh table: the fabric's
-- own is left as it is.
function M.net_steps(nic, arch)
  local h = arch and arch.ccl_net_lat
  if not h then return nic.nccl end
  local n = {}
  for k, v in pairs(nic.nccl or {}) do n[k] = v end
  local lat = nic.latency or 0
  n.tree_ll = math.max(0, h.tree_ll - lat)
  n.ring_ll = math.max(0, h.ring_ll - lat)
  return n
end

-- Topology from fabric entries: spec = { scaleup = fabric id, gpus_per_node,
-- nodes, nics, nic_fabric = fabric id or nil, sharp = true to enable SHARP
-- where the NIC fabric has it, gpu = gpu entry or id (its PCIe link bounds
-- the path to the NICs), cpu_vendor = "intel" | "amd" | "arm" (the hosts'
-- CPUs, as a system's cpu_vendor), host_gpus = the GPUs of one host where a
-- node is an NVLink domain of several (a system's host_gpus) }.  Returns the
-- flat table.
function M.from_fabrics(spec, cat)
  cat = catalog(cat)
  -- no scale-up fabric: a node of one GPU (node_spec), no link to price
  local up = spec.scaleup and cat:get("fabrics", spec.scaleup) or {}
  local t = {
    gpus_per_node = spec.gpus_per_node, nodes = spec.nodes or 1,
    up_kind = up.kind, up_bw = up.bw, up_latency = up.latency or 0,
    up_achievable = up.achievable or 1,
    up_nvls = up.in_switch_reduction == "nvls",
    up_crosses_cpu = up.crosses_cpu == true, up_mesh_peers = up.mesh_peers or 0,
    nics = 0, up_nccl = up.nccl,
  }
  if t.up_nvls and up.nvls_tree_bw then
    t.nvls_tree_bw2, t.nvls_tree_bw3 = up.nvls_tree_bw.nodes2, up.nvls_tree_bw.nodes3
  end
  local gpu = spec.gpu
  if type(gpu) == "string" then gpu = cat:get("gpus", gpu) end
  t.nic_path_bw = M.pcie_bw(gpu)
  local arch = gpu and gpu.arch and cat.archs[gpu.arch]
  t.ll_max_bw = arch and arch.nccl_ll_max_bw or nil
  if arch and arch.nccl_tree_ch_bw then
    t.tree_ch_bw2, t.tree_ch_bw3 = arch.nccl_tree_ch_bw.nodes2, arch.nccl_tree_ch_bw.nodes3
  end
  -- The row NCCL's tuner ranked the tree by before it retuned the
  -- generation (the arch's nccl_tree_ch_bw_before): ranks only.
  local before = arch and arch.nccl_tree_ch_bw_before
  if before then
    t.tree_tune_ch_bw2, t.tree_tune_ch_bw3 = before.nodes2, before.nodes3
    t.tree_tune_until = M.nccl_code(before.release)
  end
  if arch and arch.nccl_tree_ll128_ch_bw then
    t.tree_ll128_ch_bw2 = arch.nccl_tree_ll128_ch_bw.nodes2
    t.tree_ll128_ch_bw3 = arch.nccl_tree_ll128_ch_bw.nodes3
  end
  t.ring_ll128_ch_bw = arch and arch.nccl_ring_ll128_ch_bw or nil
  t.p2p_nvl_ch_bw = arch and arch.nccl_p2p_nvl_ch_bw or nil
  t.host_amd = spec.cpu_vendor == "amd"
  t.p2p_read = gpu ~= nil and gpu.nccl_p2p_read == true
  -- A superchip's GPU (gpu.host_link: GB200's NVLink-C2C to its Grace)
  -- reaches the node's NICs through that CPU, a PHB path to NCCL before
  -- 2.27.3 (engine/comm_algo.c comm_price: no LL128 across nodes).
  t.nic_c2c = gpu ~= nil and gpu.host_link ~= nil
  t.ll128_off = M.ll128_off(arch)
  t.pxn_off = M.pxn_off(arch)
  M.set_base_lat(t, arch)
  -- a job's node (node_spec): the DRAM its offload is held against; not a
  -- collective's field, so not one gpuplan comm takes
  t.host_memory = spec.host_memory
  -- A node that is an NVLink domain of several hosts: training places its
  -- groups in equal shares a domain (engine/layout.h layout_fill_place).
  if spec.host_gpus and spec.host_gpus < spec.gpus_per_node then
    t.host_gpus = spec.host_gpus
  end
  if spec.nic_fabric and (spec.nics or 0) > 0 then
    local nic = cat:get("fabrics", spec.nic_fabric)
    t.nics = spec.nics
    t.nic_bw, t.nic_latency = nic.bw, nic.latency or 0
    t.nic_achievable = nic.achievable or 1
    t.nic_nccl = M.net_steps(nic, arch)
    -- SHARP only when asked: NCCL's CollNet is off by default
    -- (NCCL_COLLNET_ENABLE=0) and needs the SHARP plugin and the switches'
    -- aggregation manager, so a fabric that can reduce usually does not.
    t.nic_sharp = spec.sharp == true and nic.in_switch_reduction == "sharp"
  end
  return t
end

-- M.topology(system_id, nodes, overrides [, cat]): the topology of `nodes`
-- copies of a catalog system (default 1), with overrides applied
-- (nic_sharp = true enables SHARP on a fabric that has it).
-- system_id may also be a system entry table.
function M.topology(system_id, nodes, overrides, cat)
  cat = catalog(cat)
  local sys = type(system_id) == "table" and system_id or cat:get("systems", system_id)
  local t = M.from_fabrics({ scaleup = sys.scaleup, gpus_per_node = sys.gpus,
                             nodes = nodes or 1, nics = sys.nics,
                             nic_fabric = sys.nic_fabric, gpu = sys.gpu,
                             cpu_vendor = sys.cpu_vendor }, cat)
  -- The host's DRAM, at what streaming reaches (M.host_bw's 0.8): traffic
  -- staged through host memory shares it (engine/comm.c).
  if sys.host_mem_bw then t.host_mem_bw = sys.host_mem_bw * 0.8 end
  return apply_overrides(t, overrides, true)
end

-- NCCL's releases, each with the date of its tag (NVIDIA/nccl tags
-- v2.X.Y-1 and their commits' dates), for a run whose source names no
-- release: M.nccl_at.
M.NCCL_RELEASES = {
  { "2.3.7", "2018-10-24" }, { "2.4.2", "2019-01-29" }, { "2.4.6", "2019-04-05" },
  { "2.4.7", "2019-05-10" }, { "2.4.8", "2019-06-25" }, { "2.5.6", "2019-11-19" },
  { "2.5.7", "2020-01-16" }, { "2.6.4", "2020-03-20" }, { "2.7.3", "2020-06-08" },
  { "2.7.5", "2020-06-26" }, { "2.7.6", "2020-06-26" }, { "2.7.8", "2020-07-27" },
  { "2.8.3", "2020-11-17" }, { "2.8.4", "2021-02-09" }, { "2.9.6", "2021-04-12" },
  { "2.9.8", "2021-05-10" }, { "2.9.9", "2021-05-12" }, { "2.10.3", "2021-07-08" },
  { "2.11.4", "2021-09-08" }, { "2.12.7", "2022-03-02" }, { "2.12.10", "2022-03-30" },
  { "2.12.12", "2022-05-13" }, { "2.13.4", "2022-07-11" }, { "2.14.3", "2022-08-18" },
  { "2.15.1", "2022-09-27" }, { "2.15.5", "2022-10-25" }, { "2.16.2", "2022-11-30" },
  { "2.16.5", "2023-02-02" }, { "2.17.1", "2023-03-01" }, { "2.18.1", "2023-04-18" },
  { "2.18.3", "2023-06-14" }, { "2.18.5", "2023-08-23" }, { "2.18.6", "2023-10-10" },
  { "2.19.1", "2023-09-26" }, { "2.19.3", "2023-09-26" }, { "2.19.4", "2023-11-13" },
  { "2.20.3", "2024-02-13" }, { "2.20.5", "2024-02-26" }, { "2.21.5", "2024-04-02" },
  { "2.22.3", "2024-06-19" }, { "2.23.4", "2024-09-16" }, { "2.24.3", "2025-01-07" },
  { "2.25.1", "2025-01-27" }, { "2.26.2", "2025-03-12" }, { "2.26.3", "2025-04-22" },
  { "2.26.5", "2025-04-22" }, { "2.26.6", "2025-05-20" }, { "2.27.3", "2025-05-29" },
  { "2.27.5", "2025-06-18" }, { "2.27.6", "2025-07-11" }, { "2.27.7", "2025-07-24" },
  { "2.28.3", "2025-09-02" }, { "2.28.7", "2025-10-17" }, { "2.28.9", "2025-11-10" },
  { "2.29.2", "2025-12-24" }, { "2.29.3", "2026-02-03" }, { "2.29.7", "2026-02-27" },
  { "2.30.3", "2026-04-14" }, { "2.30.4", "2026-04-22" }, { "2.30.7", "2026-06-04" },
}

-- NCCL_VERSION_CODE of a release "2.20.5" (or "2.20": patch 0), 22005;
-- nil and a reason for anything else, and true as a third result where s
-- is no release at all ("abc": text that cannot parse, where "9.9.9"
-- parses and is out of range).
function M.nccl_code(s)
  -- gpuplan.version's reader, exactly X.Y or X.Y.Z (no "v", no rc: NCCL
  -- names its releases "2.20.5"); its number is NCCL_VERSION_CODE's form
  local r = version.parse(s)
  if not (r and r.plain) then
    -- a release with a tag's v, an rc or a suffix ("v2.20.5", the tag
    -- NCCL's repository names it by) was told only the form: say the
    -- release it names, written plain
    return nil, "must be a release 'major.minor[.patch]' such as '2.20.5'"
      .. (r and ": give the release alone, " .. r.release .. " (no tag's v, rc or suffix)" or ""),
      true
  end
  local code = version.number(r)
  if r.major ~= 2 or r.minor > 99 or r.patch > 99 then
    return nil, "must be an NCCL 2.x release, minor and patch below 100"
  end
  return code
end

-- Whether release s ("2.20.5", or "2.20": that minor's) is one of
-- M.NCCL_RELEASES: the tuner rules gp.comm follows are those releases';
-- past the newest (2.99) or between tags (2.20.9) no source says what it
-- picks.  nil and the releases known, by minor ("2.4.2/6/7/8"), when not.
function M.nccl_known(s)
  local groups, order = {}, {}
  for _, r in ipairs(M.NCCL_RELEASES) do
    if r[1] == s or version.parse(r[1]).series == s then return true end
    local m, p = r[1]:match("^(%d+%.%d+)%.(%d+)$")
    if not groups[m] then groups[m] = {}; order[#order + 1] = m end
    table.insert(groups[m], p)
  end
  local parts = {}
  for _, m in ipairs(order) do parts[#parts + 1] = m .. "." .. table.concat(groups[m], "/") end
  return nil, string.format("%s is not an NCCL release gpuplan knows (known: %s)", s,
    table.concat(parts, ", "))
end

-- The newest NCCL release tagged on or before date "YYYY-MM-DD"
-- (M.NCCL_RELEASES), nil before the first.
function M.nccl_at(date)
  local best, code
  for _, r in ipairs(M.NCCL_RELEASES) do
    local c = M.nccl_code(r[1])
    if r[2] <= date and (not code or c > code) then best, code = r[1], c end
  end
  return best
end

-- M.comm{op=, bytes=, gpus=, system= | gpu= | topology=, fabric=, nodes=,
-- gpus_per_node=, algo=, gpus_per_thread=, nccl=, nvls=, <topology fields>}: one
-- collective.  The node is the system's, or the one built from the GPU
-- alone (its NVLink domain joined by its scale-up fabric, an H100 PCIe's
-- bridged pair; or 8 cards on its PCIe generation; no NICs: node_spec),
-- or the topology table's; `fabric` (a scale-up fabric id) joins the
-- node's GPUs in place of its own (pcie4-p2p: 4090s with P2P on); `nodes` and
-- `gpus_per_node` say where the ranks sit (see the top of this file);
-- `gpus_per_thread` how many GPUs one thread drives (nccl-tests -g,
-- M.launch_floor); `nccl` the NCCL release ("2.20.5") whose tuner picks
-- the algorithm (default: the latest modelled); `nvls` "auto" (NCCL's
-- default), "off" (NCCL_NVLS_ENABLE=0: no NVLS nor NVLS_TREE) or "on".  Returns {op, bytes, gpus, time,
-- latency, bw_time, algbw, busbw, algo, proto, nodes, ppn, system,
-- launch_bound}.
-- The keys M.comm takes are gp.comm's options, declared once in
-- gpuplan.options (command comm): these arguments and every topology
-- field; anything else is a misspelling that would otherwise price a
-- different collective in silence.  M.sweep takes min, max and factor too.
local SWEEP_ARGS = { min = true, max = true, factor = true }

local shown = require("gpuplan.args").shown

-- A size as comm's output writes it: whole bytes as an integer, as its
-- table's size (B) column does -- 2^33, a float, was shown "8589934592.0"
-- -- anything else as shown() gives it.
local function size_int(v)
  if type(v) == "number" and v == math.floor(v) and math.abs(v) < 2 ^ 63 then
    return string.format("%d", v)
  end
  return shown(v)
end

-- A bound of a sweep in bytes, with its binary size past a KiB as the
-- command line takes it ("17179869184 B (16GiB)"), a default said so.
local function size_said(v, default)
  if type(v) ~= "number" or v ~= math.floor(v) or math.abs(v) >= 2 ^ 63 then return shown(v) end
  local u = v >= 1024 ^ 5 and "PiB" or v >= 1024 ^ 4 and "TiB" or v >= 1024 ^ 3 and "GiB"
    or v >= 1024 ^ 2 and "MiB" or v >= 1024 and "KiB" or nil
  local notes = {}
  if u then notes[#notes + 1] = require("gpuplan.units").fmt_bytes(v, u) end
  if default then notes[#notes + 1] = "the default" end
  return string.format("%d B", v) .. (#notes > 0 and " (" .. table.concat(notes, ", ") .. ")" or "")
end

local function check_args(a, sweep)
  if type(a) ~= "table" then error("comm: expected a table of arguments", 3) end
  local options = require "gpuplan.options"
  local bad = options.unknown(a, "comm", sweep and function(k) return SWEEP_ARGS[k] end or nil)
  if bad ~= nil then
    error(options.unknown_message("comm", bad, "comm",
      sweep and { "min", "max", "factor" } or nil), 3)
  end
  -- algo in either case (declared fold: NCCL_ALGO=Ring as NCCL spells
  -- it), as the command line reads it and the resolve step of the other
  -- planners writes its folded names back
  if type(a.algo) == "string" then rawset(a, "algo", (options.normal("algo", a.algo, "comm"))) end
  for _, k in ipairs { "cat", "catalog" } do
    if a[k] ~= nil then
      local _, msg = options.check(k, a[k], "comm")
      if msg then error("comm: " .. msg, 3) end
    end
  end
end

-- A count argument (an integer in 1..2^24, the engine's bound) or nil;
-- raises naming it.
local function count_arg(a, k)
  local v = a[k]
  if v == nil then return nil end
  if math.type(v) ~= "integer" then
    v = type(v) == "number" and v == math.floor(v) and math.tointeger(v) or nil
    -- a string shown as one: "8" would read as the integer it is not
    local got = type(a[k]) == "string" and string.format("string %q", a[k])
      or require("gpuplan.args").shown(a[k])
    if not v then error("comm: " .. k .. " must be an integer (got " .. got .. ")", 4) end
  end
  if v < 1 then error("comm: " .. k .. " must be >= 1 (got " .. tostring(a[k]) .. ")", 4) end
  if v > 2 ^ 24 then
    error("comm: " .. k .. " must be at most 16777216 (got " .. tostring(a[k]) .. ")", 4)
  end
  return v
end

-- Ranks, nodes and ranks per node of the collective on nodes of G GPUs:
-- gpus over `nodes` nodes evenly, or `gpus_per_node` of each node, or
-- filling whole nodes.  Returns gpus, per_node (nil: fill nodes), nodes.
local function placement(a, G, topo_nodes)
  local gpus, nodes, per = count_arg(a, "gpus"), count_arg(a, "nodes"), count_arg(a, "gpus_per_node")
  if per and per > G then
    error(string.format("comm: gpus_per_node %d exceeds the node's %d GPUs", per, G), 3)
  end
  if per then
    nodes = nodes or (gpus and -(-gpus // per)) or topo_nodes or 1
    gpus = gpus or per * nodes
    if gpus ~= per * nodes then
      error(require("gpuplan.args").usage(string.format("comm: %d gpus are not %d nodes x %d "
        .. "gpus_per_node", gpus, nodes, per)), 3)
    end
    return gpus, per, nodes
  end
  if nodes and gpus then
    if gpus % nodes ~= 0 then
      error(require("gpuplan.args").usage(string.format("comm: %d gpus do not split evenly "
        .. "over %d nodes", gpus, nodes)), 3)
    end
    per = gpus // nodes
    if per > G then
      error(string.format("comm: %d gpus over %d nodes is %d per node, more than the node's %d",
                          gpus, nodes, per, G), 3)
    end
    return gpus, per, nodes
  end
  if nodes then return G * nodes, G, nodes end
  gpus = gpus or G * (topo_nodes or 1)
  return gpus, nil, math.max(1, -(-gpus // G))
end

-- One thread driving several GPUs (nccl-tests -g N, "nGpus N" per thread)
-- launches their kernels one after another, so an iteration takes no less
-- than N launches, whatever the GPUs' own time: "your higher latency ... is
-- due to using multiple GPUs per node (-g 8) instead of one GPU per process
-- ... due to the CUDA latency overheads of single process jobs" (NCCL
-- maintainer, nccl-tests#333).  Per GPU, 4.2 us: a DGX A100's 8-128 B ring
-- all-reduce on one channel with -g N takes 16.88, 20.8, 25.2, 29.5 and
-- 33.7 us for N = 4..8 (nccl-tests#123), N x 4.16-4.22 us, where NCCL's
-- own latency model gives 6.6 + 2(N-1) x 0.6 = 10.2-15 us.
M.LAUNCH_PER_GPU = 4.2e-6

-- Raise a priced collective r (bytes) to the launch floor of gpt GPUs per
-- thread: time, latency, algbw and busbw (busbw keeps its ratio to algbw);
-- r.launch_bound says whether the floor set the time.
function M.launch_floor(r, bytes, gpt)
  local floor = (gpt or 1) > 1 and gpt * M.LAUNCH_PER_GPU or 0
  r.launch_bound = r.time < floor
  if not r.launch_bound then return r end
  local bus = r.algbw > 0 and r.busbw / r.algbw or 0
  r.latency = r.latency + (floor - r.time)
  r.time = floor
  r.algbw = bytes / floor
  r.busbw = r.algbw * bus
  return r
end

-- The topology of one node for M.comm: the catalog system's (a.system),
-- or the one built from the GPU alone (a.gpu), with a.fabric's scale-up
-- fabric joining its GPUs where given.
-- The catalog systems of a card that have NICs, for a refusal that
-- sends the user to one: ": dgx-h100 (8 x ib-ndr-400)", or "" where none
-- (or the catalog cannot be read: the refusal stands without the list).
function M.systems_with_nics(gid, cat_arg)
  local with = {}
  local okc, cat = pcall(catalog, cat_arg)
  if okc and type(gid) == "string" then
    for _, id in ipairs(cat:ids("systems")) do
      local sy = cat.systems[id]
      if sy.gpu == gid and (sy.nics or 0) > 0 and sy.nic_fabric then
        with[#with + 1] = string.format("%s (%d x %s)", id, sy.nics, sy.nic_fabric)
      end
    end
  end
  return #with > 0 and (": " .. table.concat(with, ", ")) or ""
end

local function node_topology(a)
  local cat = catalog(a.cat or a.catalog)
  local fab
  if a.fabric ~= nil then
    if type(a.fabric) ~= "string" then
      error("comm: fabric must be a catalog fabric id (got " .. require("gpuplan.args").shown(a.fabric) .. ")", 0)
    end
    local okf, f = pcall(cat.get, cat, "fabrics", a.fabric)
    if not okf then error("comm: fabric: " .. tostring(f):gsub("^[^\n:]-:%d+: ", ""), 0) end
    if f.scope ~= "scaleup" then
      local ups = {}
      for _, id in ipairs(cat:ids("fabrics")) do
        if cat.fabrics[id].scope == "scaleup" then ups[#ups + 1] = id end
      end
      error(string.format("comm: fabric '%s' is a %s fabric; the GPUs of a node join over a "
        .. "scale-up one (%s)", a.fabric, tostring(f.scope), table.concat(ups, ", ")), 0)
    end
    fab = a.fabric
  end
  if a.system ~= nil then
    local sys = type(a.system) == "table" and require("gpuplan.catalog").entry("system", a.system)
      or cat:get("systems", a.system)
    if fab then
      local copy = {}
      for k, v in pairs(sys) do copy[k] = v end
      copy.scaleup, sys = fab, copy
    end
    return M.topology(sys, 1, nil, cat)
  end
  local gpu = a.gpu
  if type(gpu) ~= "table" then
    local okg, g = pcall(cat.get, cat, "gpus", gpu)
    if not okg then error("comm: gpu: " .. tostring(g):gsub("^[^\n:]-:%d+: ", ""), 0) end
    gpu = g
  else
    local okg, g = pcall(require("gpuplan.catalog").entry, "gpu", gpu)
    if not okg then error("comm: " .. tostring(g), 0) end
    gpu = g
  end
  local spec = M.node_spec(nil, gpu, function() end, "comm")
  spec.scaleup, spec.gpu, spec.nodes = fab or spec.scaleup, gpu, 1
  return M.from_fabrics(spec, cat)
end

-- The achievable fraction of a NIC known by its rate bw (B/s a
-- direction) alone: that of the NIC fabric of that rate which the
-- catalog's systems use most, else of the NIC fabric they use most.
function M.nic_achievable(bw, cat)
  cat = catalog(cat)
  local used = {}
  for _, id in ipairs(cat:ids("systems")) do
    local f = cat.systems[id].nic_fabric
    if f and (cat.systems[id].nics or 0) > 0 then used[f] = (used[f] or 0) + 1 end
  end
  local best, most
  for _, id in ipairs(cat:ids("fabrics")) do
    local f, n = cat.fabrics[id], used[id] or 0
    if n > 0 then
      if f.bw == bw and (best == nil or n > used[best.id]) then best = f end
      if most == nil or n > used[most.id] then most = f end
    end
  end
  local f = best or most
  return f and f.achievable or 1
end

-- nccl-tests' own -b/-e sizes, a number and one letter K, M or G in
-- either case, are powers of 1024 (NVIDIA/nccl-tests src/common.cu
-- parsesize: "case 'G': case 'g': units = 1024*1024*1024"): v's bytes
-- where v is such a string, else nil ("1GB" stays the units' 10^9).  The
-- one reader of the form: gp.comm's bytes and the comm command's
-- --min/--max (which keeps its own rule that a sweep's size is whole)
-- both call it; gp.comm{bytes = "1G"} was "unknown unit 'G'" where the
-- command took --min 1G.
function M.nccl_size(v)
  if type(v) ~= "string" then return nil end
  local num, letter = v:match("^%s*(%d+%.?%d*)([kKmMgG])%s*$")
  local pw = letter and ({ k = 1, m = 2, g = 3 })[letter:lower()]
  return pw and tonumber(num) * 1024 ^ pw or nil
end

-- The size and count nccl-tests prints for a requested size (-b/-e/-f)
-- of op over nranks ranks of 4-byte floats (the command's type): it runs
-- the collective on a whole number of elements, per rank where the op
-- splits its buffer, and prints what it ran (NVIDIA/nccl-tests 2.19.6,
-- a0b82b2, src/common.cu setupArgs: "count = size / wordSize(type)",
-- then "writeBenchmarkLinePreamble(max(args->sendBytes,
-- args->expectedBytes), args->nbytes / wordSize(type), ...)" with
-- "args->nbytes = paramCount * wordSize(type)").  Per collective, its
-- GetCollByteCount: all_reduce, broadcast, reduce and sendrecv
-- "*sendcount = count; *recvcount = count; ... *paramcount =
-- *sendcount" (src/all_reduce.cu, broadcast.cu, reduce.cu, sendrecv.cu);
-- all_gather "size_t base = (count/nranks) & ~(16/eltSize - 1);
-- *sendcount = base; *recvcount = base*nranks; ... *paramcount = base"
-- (src/all_gather.cu), reduce_scatter the same with send and receive
-- swapped (src/reduce_scatter.cu); alltoall "*paramcount =
-- (count/nranks) & ~(16/eltSize - 1); *sendcount =
-- nranks*(*paramcount)" (src/alltoall.cu).  So all_reduce of 7 B runs
-- and prints 4 B, count 1; all_gather of 8 B over 8 ranks 0 B, count 0
-- (a quarter of a float a rank, rounded down to 16 B a rank).  Returns
-- the bytes and the count (per rank for the split ops, as printed).
function M.nccl_tests_size(op, bytes, nranks)
  local count = bytes // 4
  if op == "all_gather" or op == "reduce_scatter" or op == "all_to_all" then
    -- 16/eltSize - 1 = 3: a rank's share rounded down to 4 floats (16 B)
    local base = (count // nranks) - (count // nranks) % 4
    return base * nranks * 4, base
  end
  return count * 4, count
end

function M.comm(a)
  check_args(a, false)
  local op = M.op_name(a.op or "all_reduce")
  local bytes = a.bytes
  -- a string the parser does not read is named as the key it was given
  -- under, as gp.comm's up_bw and gp.infer's memory are ("bad bytes
  -- '1kg'" alone named neither the function nor the key)
  if type(bytes) == "string" then
    local ok, v = units.try(bytes, "bytes")
    if not ok then
      local n = M.nccl_size(bytes)
      if not n then
        error("comm: bytes: " .. tostring(v) .. ", or nccl-tests' 1K, 1M, 1G (powers of 1024)", 2)
      end
      v = n
    end
    bytes = v
  end
  -- A byte volume, not necessarily whole: gp.comm prices what the engine
  -- prices inside a step, whose per-rank shares are averages (a ZeRO-3
  -- bucket over 7 peers, an expert's mean tokens), and tests hold the two
  -- equal.  nccl-tests' sizes are whole (parsesize cast to size_t,
  -- src/common.cu): the command's --min/--max and M.sizes are.
  if type(bytes) ~= "number" or bytes ~= bytes or bytes < 0 or bytes == math.huge then
    error("comm: bytes must be a number >= 0 (got " .. require("gpuplan.args").shown(a.bytes)
          .. ")", 2)
  end
  -- The sweep's bound (M.SWEEP_MAX_BYTES, 2^50 B: docs/output.md "Value
  -- bounds"), the message of one collective alike: 1e30 B was priced at
  -- 3.6e18 s, where the command's --max refuses past 1 PiB.
  if bytes > 2 ^ 50 then
    error("comm: bytes must be at most 2^50 B (1 PiB) (got " .. size_int(a.bytes) .. ")", 2)
  end
  local given = {}
  for _, k in ipairs { "system", "gpu", "topology" } do
    if a[k] ~= nil then given[#given + 1] = k end
  end
  if #given > 1 then
    error(require("gpuplan.args").usage("comm: give one of system = ID, gpu = ID or "
      .. "topology = {...} (got " .. table.concat(given, " and ") .. ")"), 2)
  end
  if a.topology and a.fabric ~= nil then
    error(require("gpuplan.args").usage("comm: fabric joins a system's or a gpu's node; a "
      .. "topology table gives its own up_* fields"), 2)
  end
  local topo
  if a.topology ~= nil and type(a.topology) ~= "table" then
    -- pairs() over it said "bad argument #1 to 'for iterator'"
    error("comm: topology must be a table of the topology's fields (got "
      .. require("gpuplan.args").shown(a.topology) .. "); a catalog node is system = ID", 2)
  end
  if a.topology then
    topo = apply_overrides({}, a.topology, true)
  elseif a.system ~= nil or a.gpu ~= nil then
    local okn, t = pcall(node_topology, a)
    -- A catalog error (a table: the search path's bad file, loaded on
    -- this first use) names its own file:line; its position was stripped
    -- as if gpuplan's and the script's line put in its place, so a
    -- script's gp.comm named its own line for a catalog file's mistake.
    if not okn and type(t) == "table" then error(t, 0) end
    if not okn then error(tostring(t):gsub("^[^\n]-%.lua:%d+: ", ""), 2) end
    topo = t
  else
    error("comm: give system = ID, gpu = ID or topology = {...}", 2)
  end
  -- Top-level topology fields override the node's; nodes and
  -- gpus_per_node say where the ranks sit instead (placement).
  local over = {}
  for k, v in pairs(a) do
    if topo_fields[k] and k ~= "nodes" and k ~= "gpus_per_node" then over[k] = v end
  end
  apply_overrides(topo, over, false)
  if math.type(topo.gpus_per_node) ~= "integer" or topo.gpus_per_node < 1 then
    error("comm: the topology needs gpus_per_node >= 1", 2)
  end
  local gpus, per, nodes = placement(a, topo.gpus_per_node,
                                     a.topology and a.topology.nodes or nil)
  -- One rank moves nothing over a link: NCCL runs a single rank's
  -- collective as a copy from the send to the receive buffer within the
  -- GPU (src/enqueue.cc ncclLaunchOneRank), which no link model prices.
  -- Every op is refused alike (send_recv already was, by the engine),
  -- rather than a table of 0 us and 0 GB/s under an algorithm that never
  -- runs.
  if gpus < 2 then
    error(string.format("comm: gpus %d: a collective needs >= 2 gpus (one rank moves nothing "
      .. "over a link; NCCL runs it as a copy within the GPU)", gpus), 2)
  end
  -- enough nodes for the ranks asked (the system is one node), unless the
  -- topology table fixed its node count
  if not (a.topology and a.topology.nodes) then
    topo.nodes = math.max(topo.nodes or 1, nodes)
  end
  -- A node built from a GPU has no NICs to reach another.  The refusal
  -- names the catalog systems of that card that have them: a user with
  -- "16 H100 on two nodes, 400G IB x8" was sent to "a catalog system with
  -- NICs" and left to find that dgx-h100 is one (comm has no
  -- --nic-fabric, which train, plan, rl and infer take).
  if a.gpu ~= nil and nodes > 1 and (topo.nics or 0) == 0 then
    local gid = type(a.gpu) == "table" and tostring(a.gpu.id) or a.gpu
    error(string.format("comm: %d gpus span %d nodes of the %d-GPU node built from gpu %s, "
      .. "which has no NICs: give system = ID (a catalog system with NICs%s)", gpus, nodes,
      topo.gpus_per_node, gid, M.systems_with_nics(gid, a.cat or a.catalog)), 2)
  end
  -- A catalog system without NICs (the PCIe servers: nics = 0, no
  -- nic_fabric) cannot span nodes either. The engine's "2 nodes need nics
  -- > 0 to talk" sent the user to --nics, which such a system then refuses
  -- for want of a NIC fabric: name the system and what it lacks.
  if a.system ~= nil and nodes > 1 and (topo.nics or 0) == 0 and a.nics == nil then
    local sid = type(a.system) == "table" and tostring(a.system.id) or a.system
    error(string.format("comm: %d gpus span %d nodes of %d, but system %s has no NICs (its "
      .. "catalog entry lists none%s): give system = ID (a catalog system with NICs)", gpus,
      nodes, topo.gpus_per_node, sid, topo.nic_bw and "" or ", nor a NIC fabric"), 2)
  end
  -- NICs given to a node built from a GPU have no fabric to run at: say
  -- so, as gpuplan comm does for --nics with --gpu, rather than the
  -- binding's "topology.nic_bw is required".
  if a.gpu ~= nil and (topo.nics or 0) > 0 and topo.nic_bw == nil then
    error(string.format("comm: nics = %d: the node built from gpu %s has no NIC fabric for "
      .. "them to run on: give nic_bw (B/s a NIC) or system = ID (a catalog system with NICs)",
      topo.nics, type(a.gpu) == "table" and tostring(a.gpu.id) or a.gpu), 2)
  end
  -- NICs given to a node built from a GPU by their rate alone run at the
  -- achievable fraction a catalog node's NICs of that rate get, not at
  -- line rate: the fabric of that rate that the catalog's systems use
  -- (ib-ndr-400's 0.94 for 50 GB/s: nccl-tests reach 46-49 GB/s per NDR
  -- NIC, nccl-tests#290 and #267; ib-hdr-200's 0.96 for 25 GB/s: 192 GB/s
  -- ring busbw on DGX A100's 8 HDR NICs, nccl#1576), else that of the NIC
  -- fabric they use most.  nic_achievable given in the call wins.
  if a.gpu ~= nil and (topo.nics or 0) > 0 and a.nic_achievable == nil then
    topo.nic_achievable = M.nic_achievable(topo.nic_bw, catalog(a.cat))
  end
  if a.algo ~= nil and not is_in(M.algos, a.algo) then
    -- a table was quoted by its address ("unknown algo 'table: 0x55...'")
    error("comm: " .. (type(a.algo) == "string" and "unknown algo '" .. a.algo .. "'"
      or "algo must be a string (got " .. require("gpuplan.args").shown(a.algo) .. ")") .. " (one of " .. table.concat(M.algos, ", ") .. ")", 2)
  end
  -- NVLink SHARP as NCCL_NVLS_ENABLE sets it (NCCL src/transport/nvls.cc
  -- ncclNvlsInit, NCCL_PARAM(NvlsEnable, "NVLS_ENABLE", 2)): 2, NCCL's
  -- default, asks the driver whether the GPU multicasts
  -- (CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED) -- the node's up_nvls, "auto";
  -- 0 leaves comm->nvlsSupport 0, so the tuner disables NVLS and NVLS_TREE
  -- and picks among the others (tuning.cc) -- "off"; 1 sets it without
  -- asking -- "on", refused here where the switch has no multicast (NCCL's
  -- own multicast set-up would fail there).
  if a.nvls ~= nil then
    if type(a.nvls) ~= "string" or not is_in(M.NVLS_MODES, a.nvls) then
      error("comm: nvls must be one of " .. table.concat(M.NVLS_MODES, ", ") .. " (got "
        .. require("gpuplan.args").shown(a.nvls) .. ")", 2)
    end
    if a.nvls == "off" then
      if a.up_nvls == true then
        error("comm: nvls off contradicts up_nvls = true: give one", 2)
      end
      -- two settings that contradict each other: a usage error (the
      -- command line's exit 2, its flags named there)
      if a.algo == "nvls" then
        error(require("gpuplan.args").usage("comm: algo nvls needs NVLS, which nvls off "
          .. "disables (NCCL_NVLS_ENABLE=0)"), 2)
      end
      topo.up_nvls = false
    elseif a.nvls == "on" and not topo.up_nvls then
      error("comm: nvls on (NCCL_NVLS_ENABLE=1) needs a scale-up switch that reduces "
        .. "in-network (NVLink SHARP multicast); this node's " .. tostring(topo.up_kind or "link")
        .. " has none", 2)
    end
  end
  local gpt = count_arg(a, "gpus_per_thread")
  if gpt and gpt > gpus then
    error(string.format("comm: gpus_per_thread %d exceeds the %d gpus", gpt, gpus), 2)
  end
  -- One thread drives GPUs of its own process, on its own node.
  local ppn = per or math.min(gpus, topo.gpus_per_node)
  if gpt and gpt > ppn then
    error(string.format("comm: gpus_per_thread %d exceeds the %d gpus a node holds: one "
      .. "thread drives the GPUs of its own node", gpt, ppn), 2)
  end
  -- nccl-tests runs -g GPUs in every thread of every process (its ranks
  -- are processes x threads x -g): a node's GPUs are whole threads'.
  if gpt and ppn % gpt ~= 0 then
    error(string.format("comm: gpus_per_thread %d does not divide the %d gpus a node runs: "
      .. "every thread drives as many", gpt, ppn), 2)
  end
  if a.nccl ~= nil then
    local code, why, unparsed = M.nccl_code(a.nccl)
    if not code then
      local got = type(a.nccl) == "string" and string.format("%q", a.nccl) or require("gpuplan.args").shown(a.nccl)
      local msg = "comm: nccl " .. why .. " (got " .. got .. ")"
      -- text that is no release is a value the option cannot parse: a
      -- usage error on the command line, exit 2 (docs/output.md), as
      -- --memory abc is; a release out of range (9.9.9) stays exit 1
      if unparsed and type(a.nccl) == "string" then msg = require("gpuplan.args").usage(msg) end
      error(msg, 2)
    end
    local known, which = M.nccl_known(a.nccl)
    if not known then error("comm: nccl " .. which, 2) end
    -- "2.12" names that minor's releases, and NCCL tags no X.Y.0: its
    -- first release (2.12.7) is the one it means, not 2.12.0, which
    -- would fall below the gates its own first release passes (pxn's
    -- 2.12.7, CollNet's 2.6.4, SHARP all_gather's 2.18.1).
    if version.parse(a.nccl).parts == 2 then
      for _, r in ipairs(M.NCCL_RELEASES) do
        if version.parse(r[1]).series == a.nccl then
          code = M.nccl_code(r[1]); break
        end
      end
    end
    -- NCCL before 2.17.1 has no NVLS (its release notes, 2.17.1: "Add new
    -- NVLS algorithm for allreduce using NVLink SHARP (intra-node only)"),
    -- nor the NCCL_NVLS_ENABLE that nvls on sets: refused as algo nvls is
    -- on that release (engine/comm_algo.c nvls_release), not priced as the
    -- ring in silence.
    if a.nvls == "on" and code < 21701 then
      error("comm: nvls on (NCCL_NVLS_ENABLE=1) needs NCCL 2.17.1 or later, the first with "
        .. "NVLS; NCCL " .. a.nccl .. " has none: give a later release, or nvls auto or off", 2)
    end
    topo.nccl_version = code
  end
  local ok, r = pcall(core().comm_cost, topo, op, bytes, gpus, a.algo, per)
  if not ok then
    -- the engine names a field by its table, topology.up_mesh_peers; a
    -- top-level key (up_mesh_peers = -1) by the name the call wrote
    r = tostring(r):gsub("^topology%.([%w_]+)", function(f)
      if over[f] ~= nil then return f end
    end)
    error("comm: " .. r, 2)
  end
  M.launch_floor(r, bytes, gpt)
  -- whole bytes an integer (2^33 given as a float printed "8589934592.0")
  r.op, r.bytes, r.gpus = op, math.tointeger(bytes) or bytes, gpus
  r.system = type(a.system) == "string" and a.system or nil
  -- the card's id as docs/lua.md promises it, also where system = ID
  -- names the node (it read nil then, though the system has one card)
  local card = a.gpu
  if card == nil and a.system ~= nil then
    local ok, sys = pcall(function()
      return type(a.system) == "table" and a.system or catalog(a.cat or a.catalog):get("systems", a.system)
    end)
    card = ok and type(sys) == "table" and sys.gpu or nil
  end
  r.gpu = type(card) == "string" and card or (type(card) == "table" and card.id) or nil
  r.topology = topo
  r.defaults = M.defaults_of(a, topo, r)
  -- The 80% range of the time (and the rates), from the validated
  -- collective cases like it (gpuplan.ranges, validation/ranges.lua), as
  -- every other command's answer has one: the regime the collective
  -- predictor files a case under (predict/collective.lua: the op, the
  -- card, the ranks and the ranks a node).
  local ranges = require "gpuplan.ranges"
  ranges.apply("collective", { op = op, gpu = type(card) == "table" and card or r.gpu,
    gpus = gpus, gpus_per_node = -(-gpus // r.nodes) }, r, a.cat or a.catalog)
  return r
end

-- What a collective assumed that the call did not give, in the words of
-- the other commands' "defaults" line: the NCCL release whose tuner picks
-- (the latest modelled), NVLink SHARP as NCCL_NVLS_ENABLE's default leaves
-- it on this node, and the NICs a node (the system's; none on a node built
-- from a card).  A topology table states its own links: only the release
-- and NVLS are said.
-- An AMD or Intel card's library is its maker's, RCCL or HCCL
-- (catalog/archs.lua: "AMD and Gaudi run RCCL and HCCL, whose tuners are
-- not NCCL's"), priced by the NCCL release's model with the arch's own
-- base latencies where it gives them (M.set_base_lat): the line said
-- "nccl=2.30.7" alone, and "this node's nvlink does not multicast" of an
-- MI300X's xGMI, the fabric's kind where its id names it.
M.VENDOR_CCL = { AMD = "RCCL", Intel = "HCCL" }

function M.defaults_of(a, topo, r)
  local d = {}
  local cat = a.cat or a.catalog
  local sys = a.system ~= nil and (type(a.system) == "table" and a.system or
    select(2, pcall(function() return catalog(cat):get("systems", a.system) end)))
  local card = type(a.gpu) == "table" and a.gpu or (r.gpu and select(2, pcall(function()
    return catalog(cat):get("gpus", r.gpu)
  end)))
  local ccl = type(card) == "table" and M.VENDOR_CCL[card.vendor]
  if a.nccl == nil then
    local last = M.NCCL_RELEASES[#M.NCCL_RELEASES][1]
    d[#d + 1] = string.format("nccl=%s (the latest release modelled: its tuner picks the "
      .. "algorithm and protocol%s)", last, ccl and string.format("; %s runs %s, priced by "
      .. "this model", card.vendor, ccl) or "")
  end
  if a.nvls == nil then
    -- the scale-up fabric by its id (xgmi4, nvlink4), as the system or
    -- the card's entry names it
    local up = type(sys) == "table" and sys.scaleup or (type(card) == "table" and
      type(card.scaleup) == "table" and card.scaleup.fabric) or topo.up_kind or "link"
    d[#d + 1] = topo.up_nvls and "nvls=auto (NCCL_NVLS_ENABLE's default: this node's NVLink "
      .. "switch multicasts, so the tuner may pick NVLS)" or string.format("nvls=auto "
      .. "(NCCL_NVLS_ENABLE's default: this node's %s does not multicast, so no NVLS)",
      tostring(up))
  end
  if a.topology == nil and a.nics == nil then
    local fab = type(sys) == "table" and sys.nic_fabric or nil
    if (topo.nics or 0) > 0 then
      d[#d + 1] = string.format("nics=%d a node (%s%s's%s)", topo.nics,
        fab and (fab .. ", ") or "", tostring(type(sys) == "table" and sys.id or "the node"),
        r.nodes > 1 and "" or "; one node: none crossed")
    else
      d[#d + 1] = string.format("nics=0 (%s: one node)", a.gpu ~= nil and
        "the node built from the card" or "the system lists none")
    end
  end
  return d
end

-- The largest message a sweep goes to, 2^50 B (1 PiB): a thousand times
-- the memory of any GPU, whose buffers nccl-tests' -e sizes are; and the
-- most rows one sweep makes (nccl-tests -f 2 from 1 B to 1 PiB is 51).
M.SWEEP_MAX_BYTES = 2 ^ 50
M.SWEEP_MAX_SIZES = 4096


-- Sizes lo, lo*f, lo*f^2 ... <= hi (nccl-tests -f 2: factor 2).  Raises
-- "comm: ..." for a range that is not 1 <= lo <= hi <= SWEEP_MAX_BYTES, a
-- factor that is not a finite number > 1 (the sizes would never pass hi)
-- or a range that makes more than SWEEP_MAX_SIZES sizes.  Sizes are
-- whole bytes, as nccl-tests' size_t sizes are: a step by a factor that
-- is not whole (nccl-tests' -f is an integer) rounds down, 1.5 to 1.
function M.sizes(lo, hi, factor, default_hi)
  factor = factor or 2
  local function size(name, v)
    if type(v) ~= "number" or v ~= v or v < 1 or v > M.SWEEP_MAX_BYTES then
      error(string.format("comm: %s must be a size of 1 B to 2^50 B (1 PiB), got %s",
        name, size_int(v)), 0)
    end
  end
  size("min", lo)
  size("max", hi)
  if hi < lo then
    error(string.format("comm: min %s is above max %s: give min at most max", size_said(lo),
      size_said(hi, default_hi)), 0)
  end
  if type(factor) ~= "number" or factor ~= factor or factor <= 1 or factor == math.huge then
    error("comm: factor must be a finite number > 1 (got " .. shown(factor) .. ")", 0)
  end
  -- log(hi/lo)/log(f) + 1 sizes, counted before any is made.
  local n = math.floor(math.log(hi / lo) / math.log(factor) + 1e-9) + 1
  if n > M.SWEEP_MAX_SIZES then
    error(string.format("comm: min %s .. max %s by factor %s makes %d sizes (at most %d)",
      size_int(lo), size_int(hi), shown(factor), n, M.SWEEP_MAX_SIZES), 0)
  end
  local out, s = {}, math.floor(lo)
  while s <= hi and #out < M.SWEEP_MAX_SIZES do
    out[#out + 1] = s
    local nx = math.floor(s * 1.0 * factor)
    s = math.tointeger(nx) or nx
    if s == out[#out] then s = s + 1 end
  end
  return out
end

-- The card of a sweep's ranks (gpu = ID or table, or the system's), or
-- nil: a topology table names none, and a bad id is M.comm's to refuse.
local function card_of(a)
  local cat = catalog(a.cat or a.catalog)
  local ok, g = pcall(function()
    if a.gpu ~= nil then return type(a.gpu) == "table" and a.gpu or cat:get("gpus", a.gpu) end
    if a.system ~= nil then
      local sys = type(a.system) == "table" and a.system or cat:get("systems", a.system)
      return type(sys.gpu) == "table" and sys.gpu or cat:get("gpus", sys.gpu)
    end
  end)
  return ok and type(g) == "table" and g or nil
end

-- The largest message nccl-tests runs on a card: it holds a send and a
-- receive buffer of the largest size on every GPU ("cudaMalloc(sendbuff,
-- nbytes); cudaMalloc(recvbuff, nbytes)", src/common.cu AllocateBuffs),
-- a third with its data check on (-c 1, the default), and caps the size
-- ("Reducing maxBytes to %ld due to memory limitation") at "(maxMem -
-- reserveMem - 1*GB) / (datacheck ? 3 : 2)", reserveMem "1GiB of memory
-- for each 16GiB installed, but ... a max of 4GiB", maxMem the device's
-- total memory (gpuplan.memory.capacity).  This is the bound with the data
-- check off, the most any run of it reaches; nil where the card is not
-- known or its memory unreadable.
function M.max_message(g)
  if type(g) ~= "table" then return nil end
  local ok, cap = pcall(require("gpuplan.memory").capacity, g)
  if not ok or type(cap) ~= "number" or cap <= 0 then return nil end
  local GiB = 1024 ^ 3
  local reserve = math.min(math.ceil(cap / (16 * GiB)) * GiB, 4 * GiB)
  return math.max(0, (cap - reserve - GiB) / 2), cap
end

-- The sweep's top size when max is not given: nccl-tests' -e 8G.
M.DEFAULT_MAX = 8 * 1024 ^ 3

-- One row per size: the nccl-tests table.
function M.sweep(a)
  check_args(a, true)
  local rows = {}
  local g = card_of(a)
  local most, cap = M.max_message(g)
  -- max not given: the default top, 8 GiB, is nccl-tests' own -e 8G;
  -- on a card whose buffers cannot hold two of it nccl-tests runs on to
  -- the bound ("Reducing maxBytes to %ld due to memory limitation",
  -- src/common.cu), and so does the sweep (a 16 GB card tops out at
  -- 4 GiB) -- refusing a sweep the user never sized said "max nil".
  local hi, lo = a.max, a.min or 8
  if hi == nil then
    hi = M.DEFAULT_MAX
    if most and hi > most and type(lo) == "number" and lo <= most then
      hi = math.floor(most)
    end
  end
  local sizes = M.sizes(lo, hi, a.factor, a.max == nil)
  -- A size past the card's memory was priced as if it ran (8 TB messages
  -- on 80 GiB cards): refused, naming max (or a min past the bound when
  -- max was not given) and the largest that fits.
  if most and sizes[#sizes] > most then
    local which = a.max == nil and a.min ~= nil and "min" or "max"
    local said = which == "min" and size_int(a.min) or a.max == nil and "8 GiB (the default)"
      or size_int(a.max)
    error(string.format("comm: %s %s: a message of %s B needs a send and a receive buffer of "
      .. "its size on each GPU (nccl-tests' AllocateBuffs), %.1f GiB, past %s's %.1f GiB; "
      .. "give %s at most %d B (%.2f GiB: its memory less nccl-tests' reserve of %d GiB and "
      .. "1 GiB, halved)", which, said, size_int(sizes[#sizes]), 2 * sizes[#sizes] / 1024 ^ 3,
      tostring(g.id or g.name or "the card"), cap / 1024 ^ 3, which, math.floor(most),
      most / 1024 ^ 3, math.floor(math.min(math.ceil(cap / 16 / 1024 ^ 3), 4) + 0.5)), 0)
  end
  for _, s in ipairs(sizes) do
    local args = {}
    for k, v in pairs(a) do args[k] = v end
    args.bytes, args.min, args.max, args.factor = s, nil, nil, nil
    rows[#rows + 1] = M.comm(args)
  end
  return rows
end

-- A misuse found anywhere inside names the caller's line (gpuplan.args).
return require("gpuplan.args").api_module(M)
