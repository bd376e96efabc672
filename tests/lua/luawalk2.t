-- A user who scripts gpuplan: extends the catalog from Lua, drives every
-- planner, reads the results and writes files.  Each misuse below was
-- answered with a wrong figure, a Lua runtime error, a table's address or
-- no position; it must be refused naming the key and the script's line,
-- and what is accepted must price as the same job given another way.
-- Run with ./gpuplan run tests/lua/luawalk2.t.
local t = require "tap"
local gp = require "gpuplan"

local check = t.raises_here
local H = "h100-sxm"
local function copy(e) local c = {} for k, v in pairs(e) do c[k] = v end return c end

-- 1. A copy of a catalog entry, edited by the script, carries the entry's
-- _kind and was taken as checked: memory = 0, sms = 0, tdp = "x" and a
-- misspelt mem_bww were priced in silence, and usable_memory = 1e15 took
-- infer's batch from 205 to 2048.  A copy is checked by the schema as a
-- script's own table is; an unedited copy prices as the id does.
do
  local e = gp.catalog():get("gpus", H)
  local g = copy(e); g.usable_memory = 1e15
  check(function() gp.infer { model = "llama3-8b", gpu = g } end, "gpu 'h100-sxm': field 'usable_memory': larger than memory", "infer: an edited copy's usable_memory past its memory")
  g = copy(e); g.memory = 0
  check(function() gp.train { model = "llama3-8b", gpu = g, gpus = 8 } end, "gpu 'h100-sxm': field 'memory': must be positive, got 0", "train: an edited copy's memory = 0")
  g = copy(e); g.mem_bww = 5
  check(function() gp.memory { model = "llama3-8b", gpu = g } end, "field 'mem_bww': unknown field (did you mean 'mem_bw'?)", "memory: an edited copy's misspelt field")
  g = copy(e); g._kind = nil
  -- the catalog's bookkeeping (_file, _line ...) is not a field the
  -- script wrote: a copy without _kind is not refused for _file
  local a, b = gp.train { model = "llama3-8b", gpu = H, gpus = 8 }, gp.train { model = "llama3-8b", gpu = g, gpus = 8 }
  t.is(b.step_s, a.step_s, "an unedited copy (less _kind) gives the id's train step exactly")
  local x, y = gp.infer { model = "llama3-8b", gpu = H }, gp.infer { model = "llama3-8b", gpu = copy(e) }
  t.is(y.tokens_per_s, x.tokens_per_s, "... and an unedited copy the id's infer tokens/s")
  t.is(y.batch, x.batch, "... and its batch")
  -- the live entry itself is still taken as it is (no check per call)
  t.is(gp.train { model = "llama3-8b", gpu = e, gpus = 8 }.step_s, a.step_s, "the catalog's own entry prices as its id")
end

t.done_testing()
