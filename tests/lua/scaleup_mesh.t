-- A scale-up fabric that is a full mesh of direct links (a catalog fabric's
-- mesh_peers, the topology's up_mesh_peers): Gaudi's boxes wire 21 ports to
-- the 7 peers, 3 each, so a group of g cards of the box moves its data over
-- (g - 1) / 7 of the links (docs.habana.ai, Intel Gaudi Network
-- Configuration: "using 21/7=3 scale-up ports for each connection inside
-- the box").  Expectations are ratios against the same topology with the
-- mesh switched off (up_mesh_peers = 0: every group at the whole bw), so
-- the catalog's bw and achievable cancel.
local t = require "tap"
local gp = require "gpuplan"

local cat = gp.catalog()
local GiB = 2 ^ 30

t.is(cat.fabrics["gaudi2-roce"].mesh_peers, 7, "gaudi2-roce: 7 peers, 3 ports each")
t.is(cat.fabrics["gaudi3-roce"].mesh_peers, 7, "gaudi3-roce: 7 peers, 3 ports each")
t.is(cat.fabrics.nvlink4.mesh_peers, nil, "an NVSwitch fabric is no mesh")

local function ar(n, extra)
  local a = { gpu = "gaudi2", gpus = n, op = "all_reduce", bytes = GiB }
  for k, v in pairs(extra or {}) do a[k] = v end
  return gp.comm(a)
end

t.is(ar(2).topology.up_mesh_peers, 7, "the gaudi2 topology carries the fabric's mesh")

-- A 1 GiB all-reduce is bandwidth-bound: time = L + X / share, with L the
-- fixed per-call latency the model prices (the ring's hops and NCCL's
-- per-step terms, about 20 us on 2 cards) and X the transfer at the whole
-- bw (4.2 ms on 2 cards, 6.4 ms on 4).  L is under 0.5% of X, so the ratio
-- to the switch's time falls short of 1 / share by under 0.5%; tolerance
-- 1%.
--   2 cards: share 1/7 -> time x 7
--   4 cards: share 3/7 -> time x 7/3
--   8 cards: share 7/7 -> unchanged, to the bit
t.near(ar(2).time / ar(2, { up_mesh_peers = 0 }).time, 7, 0.01,
       "TP 2 pair on the mesh: 1/7 of the links, 7x the time")
t.near(ar(4).time / ar(4, { up_mesh_peers = 0 }).time, 7 / 3, 0.01,
       "4 cards of 8: 3 of 7 peers' links, 7/3 the time")
t.is(ar(8).time, ar(8, { up_mesh_peers = 0 }).time,
     "all 8 cards use every link: as a switch")

-- Bad input names the field.
t.raises(function() ar(2, { up_mesh_peers = -1 }) end,
         "up_mesh_peers must be an integer in 0..1024", "negative mesh refused", true)
t.raises(function() ar(2, { up_mesh_peers = 1.5 }) end,
         "up_mesh_peers must be an integer", "fractional mesh refused", true)
-- A full mesh of 8 cards links each to its 7 others: 3 peers is no full
-- mesh, and the model (g - 1 = 7 >= 3: no scaling) priced it as a switch
-- in silence.
t.raises(function() ar(2, { up_mesh_peers = 3 }) end,
         "up_mesh_peers 3: a full mesh links each GPU to the node's 7 others",
         "a mesh of fewer peers than the node's other cards refused", true)

t.done_testing()
