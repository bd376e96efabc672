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

-- 2. Megatron's --recompute-method block --recompute-num-layers n under
-- the interleaved schedule re-runs the first n layers of each model
-- chunk (Megatron-Core recompute.py loops over a TransformerBlock's
-- num_layers_per_pipeline_rank = len(self.layers), one chunk's layers
-- under vpp), not n of the rank.  Llama 3 8B's 32 layers at pp 2, vpp 2:
-- chunks of 8, so n = 4 re-runs 2 ranks x 2 chunks x 4 = 16 of the 32
-- layers, share 0.5 (it was counted n x pp / L = 8 / 32 = 0.25).  The
-- hardware FLOPs are the model's plus the re-run forward's (engine/
-- train.c phase_flops: hw = model + tokens x layer_fwd x share), so
-- hw(n = 4) = model + 0.5 x (hw(every layer) - model), and equal to
-- 1F1B's n = 8 (8 of each rank's 16: share 0.5 too).  Tolerance 1e-12
-- relative: the same sums in another order.
do
  local base = { model = M, gpu = H, gpus = 8, tp = 4, pp = 2, recompute = "full",
                 batch = 1, global_batch = 64 }
  local vpp4 = gp.train(t.with(base, { vpp = 2, recompute_layers = 4 }))
  local all = gp.train(t.with(base, { vpp = 2 }))
  local want = vpp4.model_flops + 0.5 * (all.hw_flops - all.model_flops)
  t.near(vpp4.hw_flops / want, 1, 1e-12, "vpp 2, recompute_layers 4: 4 of each chunk, half the layers re-run")
  local f8 = gp.train(t.with(base, { recompute_layers = 8 }))
  t.near(vpp4.hw_flops / f8.hw_flops, 1, 1e-12, "... the FLOPs of 1F1B's recompute_layers 8")
  local f4 = gp.train(t.with(base, { recompute_layers = 4 }))
  t.near(f4.hw_flops / (f4.model_flops + 0.25 * (all.hw_flops - all.model_flops)), 1, 1e-12,
    "1F1B, recompute_layers 4: 4 of each rank's 16, a quarter")
end

-- ... and the memory: at vpp 2 each chunk of 8 with recompute_layers 8
-- re-runs whole, every layer of the stage, so the activations are full
-- recompute's exactly (it kept 16 - 8 = 8 layers' full activations, as
-- if the rank were one block); recompute_layers 4 lies between full
-- recompute and none.
do
  local base = { model = M, gpu = H, gpus = 8, tp = 4, pp = 2, vpp = 2, schedule = "interleaved",
                 recompute = "full", batch = 1 }
  local function act(extra)
    for _, c in ipairs(gp.memory(t.with(base, extra)).components) do
      if c.name == "activations" then return c.bytes end
    end
  end
  local full = act {}
  t.is(act { recompute_layers = 8 }, full, "vpp 2, recompute_layers 8: both chunks whole, full recompute's bytes")
  local four, none = act { recompute_layers = 4 }, act { recompute = "none" }
  t.ok(four > full and four < none, string.format(
    "vpp 2, recompute_layers 4: between full (%.0f) and none (%.0f): %.0f", full, none, four))
end

-- 3a. The moe table's refusals read one way, naming the key as the
-- script wrote it (model.moe.X) with its range: dense_layers past the
-- layers said "moe.dense_layers must be in 0..layers (4), got 9" (the
-- engine's words, no "model."), -1 "model.moe.dense_layers must be an
-- integer in 0..2147483647 (got -1)", where layer_step said
-- "model.moe.layer_step must be in 1..layers (4), got 5".
do
  local function tiny(moe)
    local e = { experts = 8, top_k = 2, ffn_hidden = 256 }
    for k, v in pairs(moe) do e[k] = v end
    return { name = "tiny-moe", layers = 4, hidden = 512, heads = 8, kv_heads = 8,
             ffn_hidden = 1024, vocab = 32000, moe = e }
  end
  local function mem(moe) return function() gp.memory { model = tiny(moe), gpu = H } end end
  t.raises(mem { dense_layers = 9 }, "model.moe.dense_layers must be in 0..layers (4), got 9",
    "dense_layers past the layers, as the script wrote it", true)
  t.raises(mem { dense_layers = -1 }, "model.moe.dense_layers must be in 0..layers (4), got -1",
    "dense_layers below 0: the same words", true)
  -- a fraction names the same range (it read "must be an integer in
  -- 0..2147483647", a second range for the one field)
  t.raises(mem { dense_layers = 1.5 }, "model.moe.dense_layers must be an integer in 0..layers (4), got 1.5",
    "dense_layers a fraction: the same range", true)
  t.raises(mem { layer_step = 0.5 }, "model.moe.layer_step must be an integer in 1..layers (4), got 0.5",
    "layer_step a fraction: its range too", true)
  t.raises(mem { dense_layers = 0 / 0 }, "model.moe.dense_layers must be an integer in 0..layers (4), got NaN",
    "dense_layers NaN: the same range, NaN as scripts show it", true)
  t.raises(mem { layer_step = 5 }, "model.moe.layer_step must be in 1..layers (4), got 5",
    "layer_step past the layers: the same words", true)
  t.raises(mem { top_k = 9 }, "model.moe.top_k must be in 1..experts (8), got 9",
    "top_k past the experts: model.moe.top_k", true)
  t.raises(mem { dense_layers = 4 }, "model.moe.dense_layers (4) leaves no MoE layer among the 4 layers",
    "every layer dense: named without the layer_step the script did not write", true)
  t.raises(mem { dense_layers = 3, layer_step = 3 },
    "model.moe.dense_layers (3) and layer_step (3) leave no MoE layer among the 4 layers",
    "a step that leaves no MoE layer names both", true)
end

-- 3b. comm's sizes print as its table prints them, whole bytes as
-- integers: a float bound (2^34 is one) read "17179869184.0", and gp.comm's
-- bytes came back as the float it was given.
do
  local comm = require "gpuplan.comm"
  t.raises(function() comm.sweep { min = 2 ^ 34, gpu = H, gpus = 8 } end,
    "comm: min 17179869184 B (16GiB) is above max 8589934592 B (8GiB, the default): give min at most max",
    "sweep min past the default max: integer bytes and GiB", true)
  t.raises(function() comm.sweep { min = 2 ^ 33, max = 2 ^ 32, gpu = H, gpus = 8 } end,
    "comm: min 8589934592 B (8GiB) is above max 4294967296 B (4GiB): give min at most max",
    "sweep min past max", true)
  -- h100-sxm's 80 GiB cannot hold two 64 GiB buffers
  t.raises(function() comm.sweep { min = 2 ^ 33, max = 2 ^ 36, gpu = H, gpus = 8 } end,
    "comm: max 68719476736: a message of 68719476736 B needs", "max past the card: an integer", true)
  t.raises(function() comm.sweep { min = 1, max = 2 ^ 51, gpu = H, gpus = 8 } end,
    "comm: max must be a size of 1 B to 2^50 B (1 PiB), got 2251799813685248", "max past 2^50", true)
  local rows = comm.sweep { min = 2 ^ 32, max = 2 ^ 33, gpu = H, gpus = 8 }
  t.is(math.type(rows[#rows].bytes), "integer", "a sweep row's bytes: an integer")
  t.is(tostring(rows[#rows].bytes), "8589934592", "... printed 8589934592")
  local r = gp.comm { bytes = 2 ^ 33, gpu = H, gpus = 8 }
  t.is(tostring(r.bytes), "8589934592", "gp.comm bytes = 2^33: 8589934592, not 8589934592.0")
  t.is(gp.comm { bytes = 1000.5, gpu = H, gpus = 8 }.bytes, 1000.5, "a fractional volume stays as given")
end

t.done_testing()
