-- Lua argument errors that named no function or no key as written.
-- gp.comm's topology fields, given at the top level or inside
-- topology = {...}: an error names the field as the call wrote it
-- (up_mesh_peers at the top level, topology.up_mesh_peers in the table),
-- whichever check -- the Lua type check or the engine's range -- refuses it.
-- Run with ./gpuplan run tests/lua/arg_names_walk.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(9)

local function top(extra)
  local a = { system = "dgx-h100", op = "all_reduce", bytes = 1048576 }
  for k, v in pairs(extra) do a[k] = v end
  return gp.comm(a)
end
local function nested(extra)
  local topo = { gpus_per_node = 8, nodes = 1, up_kind = "nvlink", up_bw = "450GB/s per-dir",
                 up_latency = "0.6us", up_achievable = 0.8 }
  for k, v in pairs(extra) do topo[k] = v end
  return gp.comm { topology = topo, op = "all_reduce", bytes = 1048576 }
end

-- The engine's range check said topology.up_mesh_peers of a top-level key.
t.raises(function() top { up_mesh_peers = -1 } end,
         "comm: up_mesh_peers must be an integer in 0..1024 (got -1)",
         "top level: the engine's range names the key as written", true)
t.raises(function() top { up_nccl = { nvls_eff = 0.5 } } end,
         "comm: up_nccl: unknown field 'nvls_eff'", "top level: up_nccl as written", true)
-- The Lua type checks said up_mesh_peers / ll128_off of a topology table's field.
t.raises(function() nested { up_mesh_peers = 2.5 } end,
         "comm: topology.up_mesh_peers must be an integer (got 2.5)",
         "topology table: the integer check keeps the path", true)
t.raises(function() nested { ll128_off = 1 } end,
         "comm: topology.ll128_off must be a boolean (got number)",
         "topology table: the type check keeps the path", true)
t.raises(function() nested { up_mesh_peers = -1 } end,
         "comm: topology.up_mesh_peers must be an integer in 0..1024 (got -1)",
         "topology table: the engine's range keeps the path", true)
t.raises(function() top { ll128_off = "yes" } end,
         "comm: ll128_off must be a boolean (got string)", "top level: the type check", true)
-- topology given as a string: pairs() over it raised "bad argument #1 to
-- 'for iterator'", naming no key.
t.raises(function() return gp.comm { topology = "dgx-h100", bytes = 1048576 } end,
         "comm: topology must be a table of the topology's fields (got string 'dgx-h100')",
         "topology not a table: named", true)
-- gp.roofline's model = 3 was told the catalog's "model must be an id, a
-- string", no function named (as its gpu once was).
t.raises(function() return gp.roofline { gpu = "h100-sxm", model = 3 } end,
         "roofline: model must be an id or a table (got 3)", "roofline: model = 3 named", true)
-- sizes (the comm command's sweep) said nothing of gp.comm's bytes.
t.raises(function() return gp.comm { system = "dgx-h100", sizes = { 1024 } } end,
         "comm: unknown option 'sizes' (did you mean 'bytes'?)", "comm: sizes -> bytes", true)
