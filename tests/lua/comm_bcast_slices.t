-- A broadcast's or reduce's Simple ring runs one thread-block loop per
-- 512 KiB slice (BROADCAST_SLICESTEPS = REDUCE_SLICESTEPS = 1 of the 4 MiB /
-- 8 Simple buffer, NCCL src/include/collectives.h) where all-reduce and
-- all-gather run one per 1 MiB (NCCL_STEPS / 4 = 2 steps); the rates the
-- engine streams at carry the latter, so each extra loop is priced at
-- NCCL's Simple ring step on NVLink, hwLat[NVLINK][RING][SIMPLE] = 3.4 us
-- (engine/comm_algo.c ring_slice_loops).
local t = require "tap"
local gp = require "gpuplan"

local GiB = 2 ^ 30
local function at(op, bytes)
  local r = gp.comm { op = op, bytes = bytes, system = "dgx-h100", nodes = 4,
                       algo = "ring" }
  assert(r.proto == "simple", op .. " " .. bytes .. ": " .. r.proto)
  return r
end

-- 4 x dgx-h100 (8 NDR NICs a node -> 16 ring channels).  Between 4 and
-- 8 GiB a channel's share grows by 4 GiB / 16 = 256 MiB: 512 more loops of
-- 512 KiB against 256 more of 1 MiB, so the broadcast's marginal time is
-- the all-gather's streaming of the same bytes (its 4 GiB x 31/32 at the
-- same bus rate, so x 32/31) plus 256 x 3.4 us = 870.4 us.  The latency
-- terms do not depend on the size here (the window wait is 0 once the
-- transfer outlasts it), so the difference is exact to rounding: 1e-9
-- relative.
local db = at("broadcast", 8 * GiB).time - at("broadcast", 4 * GiB).time
local dg = at("all_gather", 8 * GiB).time - at("all_gather", 4 * GiB).time
t.near(db - dg * 32 / 31, 256 * 3.4e-6, 1e-9,
       "broadcast: 256 extra loops of 3.4 us between 4 and 8 GiB")
-- reduce runs the same slices: the same price as broadcast, to the bit.
t.is(at("reduce", 8 * GiB).time, at("broadcast", 8 * GiB).time,
     "reduce prices as broadcast (REDUCE_SLICESTEPS 1 too)")
-- Around one slice a channel (16 channels x 512 KiB = 8 MiB): 8 MiB runs
-- k = max(1, 8 MiB / 8 MiB) = 1 loop against max(1, 0.5) = 1, no extra;
-- 16 MiB runs 2 against 1, one extra of 3.4 us.  Read on the streaming
-- term (bw_time; the latency here still moves with the size, through the
-- proxy's posts and the window): 8 MiB streams at the bus rate alone (the
-- all-gather's 4 -> 8 GiB difference x 32/31 per 4 GiB), and 16 MiB is
-- twice that plus 3.4 us.  Both run Simple (asserted in at); 1e-9 relative.
local MiB = 2 ^ 20
local per_byte = dg * 32 / 31 / (4 * GiB)
local b8, b16 = at("broadcast", 8 * MiB).bw_time, at("broadcast", 16 * MiB).bw_time
t.near(b8, 8 * MiB * per_byte, 1e-9, "8 MiB over 16 channels: one slice each, no extra loop")
t.near(b16 - 2 * b8, 3.4e-6, 1e-9, "16 MiB: two slices a channel, one extra loop of 3.4 us")
t.done_testing()
