-- A user scripting gpuplan in Lua (round 8): the surfaces of the last
-- sessions (zero_group on MoE, infer's target and replicas, the runtimes'
-- margins, nvls, rl's engine_released and engine_cleanup, max_batch_kv_per_gpu,
-- the ranges on every result).  Each case below was answered wrongly (a
-- field the reference does not name, a refusal that names no key, a Lua
-- answer that disagrees with the command line's); it must be refused naming
-- the key, or answer as documented.  Run with ./gpuplan run tests/lua/luawalk7.t.
local t = require "tap"
local gp = require "gpuplan"
local results = require "gpuplan.results"

local check = t.raises_here

-- 1. gp.sweep's stats: every key a card's stats table has is named in the
-- reference (errors, unplaced, ungrouped, expert_cut and cache_hits were
-- returned, unnamed; expert_cut is the count a MoE zero_group skips).
do
  local s = gp.sweep { model = "mixtral-8x7b", gpu = "h100-sxm", gpus = 64, tokens = 1e9,
                       zero_group = 2 }
  local help = results.BY_NAME.stats.help
  local unnamed = {}
  for k in pairs(s.stats["h100-sxm"]) do
    if not help:find(k, 1, true) then unnamed[#unnamed + 1] = k end
  end
  table.sort(unnamed)
  t.is(table.concat(unnamed, " "), "", "sweep: every stats key is named in the reference")
end

t.done_testing()
