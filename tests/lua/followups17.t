-- followups17: reviewers' user-facing problems, one block a fix.
local t = require "tap"
local gp = require "gpuplan"

local M, H = "llama3-8b", "h100-sxm"

-- 1. A gp.* call never writes into the caller's table: the resolve step
-- reads names in either case and text numbers (gpuplan.options M.normal)
-- and wrote what it read back into the options, so after gp.infer(o) a
-- script's o.weights read "fp8" where it wrote "FP8".
do
  local o = { model = M, gpu = H, weights = "FP8", kv = "FP8", runtime = "VLLM",
              input = "512", output = "128" }
  local r = gp.infer(o)
  t.ok(r ~= nil, "gp.infer ran with FP8/VLLM as typed")
  t.is(o.weights, "FP8", "gp.infer left o.weights as the script wrote it")
  t.is(o.kv, "FP8", "gp.infer left o.kv as written")
  t.is(o.runtime, "VLLM", "gp.infer left o.runtime as written")
  t.is(o.input, "512", "gp.infer left o.input a string")
  local tr = { model = M, gpu = H, gpus = 8, seq = "4096", precision = "BF16" }
  gp.train(tr)
  t.is(tr.seq, "4096", "gp.train left o.seq a string")
  t.is(tr.precision, "BF16", "gp.train left o.precision as written")
  local mo = { model = M, gpu = H, seq = "2048", precision = "BF16" }
  gp.memory(mo)
  t.is(mo.seq, "2048", "gp.memory left o.seq as written")
  -- an options table that inherits: its own keys stay, the base unwritten
  local base = { model = M, gpu = H, weights = "FP8" }
  local child = setmetatable({ kv = "FP8" }, { __index = base })
  gp.infer(child)
  t.is(rawget(child, "kv"), "FP8", "an inheriting table's own key stays as written")
  t.is(base.weights, "FP8", "its base's key stays as written")
end

-- 3. Hybrid sharding on a node part-filled: refused in gp.train's words
-- (fsdp = hybrid_shard, gpus = 12), not the engine's placement error.
t.raises(function() gp.train { model = M, gpu = H, gpus = 12, stack = "hf", fsdp = "hybrid_shard" } end,
  "fsdp = hybrid_shard shards within each node of 8 GPUs, but gpus = 12 leaves a node part-filled",
  "gp.train hybrid_shard on 12 GPUs of 8-GPU nodes", true)

-- 5. A number of bytes past the card is shown as a size: 9e10 B is 90 GB
-- (9e10 / 1e9) and 83.819 GiB (9e10 / 2^30 = 83.8190...), not "9e+10".
t.raises(function() gp.infer { model = M, gpu = H, memory = 9e10 } end,
  "infer: memory 90GB (83.819GiB) is more than h100-sxm's 80GiB", "memory 9e10 shown in GB and GiB", true)
t.raises(function() gp.infer { model = M, gpu = H, memory = 5e15 } end,
  "infer: memory must be a size in (0B, 1000TB] (got 5e+15 = 5000TB)", "memory 5e15: its range in TB", true)

-- 7. The search skips the Ulysses that gp.train refuses (one rule,
-- gpuplan.memory ulysses_unfused): on the hf stack with the attention
-- unfused, verl's Ulysses (its flash-attention forward) does not run, and
-- plan ranked U2 and U4 layouts that train then refused.
do
  local job = { model = M, gpu = H, gpus = 8, stack = "hf", ulysses_max = 4, top = 50 }
  local function most_u(r)
    local u = 1
    for _, c in ipairs(r.results) do u = math.max(u, c.ulysses or 1) end
    return u
  end
  local fused = gp.sweep(job)
  t.ok(most_u(fused) > 1, "hf stack, flash: Ulysses layouts searched (the control)")
  local unfused = gp.sweep(t.with(job, { flash = false }))
  t.is(most_u(unfused), 1, "hf stack, flash = false: no Ulysses layout")
  local said = false
  for _, d in ipairs(unfused.defaults or {}) do said = said or d:find("ulysses_max 4 not searched", 1, true) ~= nil end
  t.ok(said, "... and the defaults say ulysses_max was not searched")
  for _, c in ipairs(unfused.results) do
    local ok = pcall(gp.train, { model = M, gpu = H, gpus = 8, stack = "hf", flash = false,
      tp = c.tp, pp = c.pp, ulysses = c.ulysses })
    t.ok(ok, "train takes the searched layout " .. c.layout)
    break
  end
end

-- 8. The scaling base kept by content: a script that edits a catalog
-- entry in place and sweeps again gets the edited model's base, the one
-- a fresh catalog holding the same edit gives (the key was the catalog's
-- identity, so the second sweep divided by the unedited model's base).
do
  local job = { model = M, gpu = H, gpus = 16, top = 1 }
  local before = gp.sweep(job).results[1]
  local entry = gp.catalog():get("models", M)
  local layers = entry.layers
  entry.layers = layers * 2
  local ok, edited = pcall(gp.sweep, job)
  entry.layers = layers
  t.ok(ok, "sweep after the in-place edit ran")
  local fresh = gp.catalog { dirs = { "catalog" } }
  fresh:get("models", M).layers = layers * 2
  local want = gp.sweep(t.with(job, { cat = fresh })).results[1]
  t.ok(edited.results[1].step_s > before.step_s * 1.5, "the edited model (twice the layers) is slower")
  -- the same job on the same (edited) catalog content: the same numbers
  t.near(edited.results[1].scaling, want.scaling, 1e-12,
    "its scaling efficiency against the edited model's base, as a fresh catalog's")
  t.is(edited.results[1].scaling_base, want.scaling_base, "... the same base count")
  t.near(gp.sweep(job).results[1].scaling, before.scaling, 1e-12,
    "the edit undone: the first base again")
end

t.done_testing()
