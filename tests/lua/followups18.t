-- followups18: code hygiene and small correctness items.
local t = require "tap"
local gp = require "gpuplan"

local M, H = "llama3-8b", "h100-sxm"

-- 1. The scaling base's cache (gpuplan.sweep scaling_base): one key
-- writer serves the options and the catalog entries.  The base searches
-- are counted by the calls gpuplan.sweep makes to its own sweep with
-- scaling = false (the base's search alone is run so).  An unchanged
-- re-run finds its base kept (no search); an in-place edit of the model
-- misses (one search or more); an edit of the prose (notes), which prices
-- nothing, is left out of the key and hits; undoing the edit hits the
-- first base again.
do
  local S = require "gpuplan.sweep"
  local searches, orig = 0, S.sweep
  S.sweep = function(o)
    if o.scaling == false then searches = searches + 1 end
    return orig(o)
  end
  -- a job no other test here sweeps (gpus 32, seq 1024): its base is new
  local job = { model = M, gpu = H, gpus = 32, seq = 1024, top = 1 }
  local ok, err = pcall(function()
    gp.sweep(job)
    local first = searches
    t.ok(first >= 1, "the first sweep searched its base (" .. first .. " searches)")
    gp.sweep(job)
    t.is(searches, first, "an unchanged re-run: the base kept, no search")
    local entry = gp.catalog():get("models", M)
    local layers, notes = entry.layers, entry.notes
    entry.layers = layers * 2
    local ok2, e2 = pcall(gp.sweep, job)
    entry.layers = layers
    t.ok(ok2, "the sweep after an in-place edit ran " .. tostring(e2))
    t.ok(searches > first, "an in-place edit of the model's layers misses the kept base")
    local edited = searches
    entry.notes = "a note that prices nothing"
    local ok3 = pcall(gp.sweep, job)
    entry.notes = notes
    t.ok(ok3, "the sweep after a notes edit ran")
    t.is(searches, edited, "an edit of the notes (prose) hits: left out of the key")
    gp.sweep(job)
    t.is(searches, edited, "the edit undone: the first base kept, no search")
  end)
  S.sweep = orig
  if not ok then error(err, 0) end
end

t.done_testing()
