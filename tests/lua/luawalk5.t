-- A researcher scripting gpuplan in Lua (round 6): every gp.* function
-- with normal and odd-but-valid inputs.  Each case below was answered
-- with a float count, a dropped key, a message naming an internal file or
-- a CLI flag, or a disagreement with the CLI; it must be refused naming
-- the Lua key (and the script's line), and what is accepted must read as
-- the CLI reads the same job.  Run with ./gpuplan run tests/lua/luawalk5.t.
local t = require "tap"
local gp = require "gpuplan"

local check = t.raises_here

-- 1. gp.infer's cached_tokens is a count: prefix_hit 0.5 of a 2048-token
-- prompt is 0.5 x 2048 = 1024 tokens, returned as the float 1024.0.
do
  local r = gp.infer { model = "llama3-8b", gpu = "h100-sxm", input = 2048, output = 256, prefix_hit = 0.5 }
  t.is(math.type(r.cached_tokens), "integer", "cached_tokens: an integer where whole")
  t.is(r.cached_tokens, 1024, "cached_tokens = 0.5 x 2048 = 1024")
end

-- 2. gp.infer_plan's MoE search prices prefix_hit in its prefill pool
-- (engine infer_new_prompt): at hit 0.5 the pool computes half of each
-- prompt, so the plan needs fewer GPUs than without (it was dropped in
-- silence before: the same GPUs either way).
do
  local h = gp.infer_plan { model = "deepseek-v3", gpu = "h200-sxm", target = 1e5, prefix_hit = 0.5 }
  local n = gp.infer_plan { model = "deepseek-v3", gpu = "h200-sxm", target = 1e5 }
  t.ok(h.gpus < n.gpus, string.format("infer_plan: the MoE search prices prefix_hit (%d GPUs against %d)",
    h.gpus, n.gpus))
end
-- a dense model's replicas take it (gp.infer prices them)
do
  local r = gp.infer_plan { model = "llama3-8b", gpu = "h100-sxm", target = 1e4, prefix_hit = 0.5 }
  t.is(r.result.cached_tokens, 1024, "infer_plan: a dense model's replicas skip the cached prefill")
end

-- 3. What the CLI's --target refuses beside it, gp.infer_plan refuses too:
-- batch was overwritten, requests dropped, and a dense model's concurrency
-- read "give batch = N or concurrency = N, not both" with no batch given.
for _, k in ipairs { "batch", "concurrency", "requests", "prefill_gpus" } do
  for _, m in ipairs { "llama3-8b", "deepseek-v3" } do
    check(function() gp.infer_plan { model = m, gpu = "h200-sxm", target = 1e4, [k] = 8 } end,
      "infer_plan: " .. k .. " does not go with target, as the CLI's --" .. k:gsub("_", "-"),
      "infer_plan: " .. k .. " refused (" .. m .. ")")
  end
end
-- 4. Counts given as floats (as JSON and a division give them) came back
-- as floats: gp.train's global_batch 64.0 and micro_batch 2.0, gp.infer's
-- input 1024.0 and output 128.0; and rl_job:step{}:table()'s gpus 16.0,
-- samples and generated 512.0 (64 prompts x 8 samples, gp.rl's default).
do
  local r = gp.train { model = "llama3-8b", gpu = "h100-sxm", gpus = 8.0, seq = 4096.0,
                       global_batch = 64.0, batch = 2.0, tp = 2.0 }
  t.is(math.type(r.global_batch), "integer", "train: global_batch 64.0 -> 64")
  t.is(math.type(r.micro_batch), "integer", "train: batch 2.0 -> micro_batch 2")
  -- a fraction stays a fraction (an average of uneven micro-batches)
  local r2 = gp.infer { model = "llama3-8b", gpu = "h100-sxm", gpus = 2.0, tp = 2.0,
                        input = 1024.0, output = 128.0 }
  t.is(math.type(r2.input), "integer", "infer: input 1024.0 -> 1024")
  t.is(math.type(r2.output), "integer", "infer: output 128.0 -> 128")
  local j = gp.rl_job { model = "llama3-8b", gpu = "h100-sxm", gpus = 16.0, prompts = 64.0,
                        prompt_len = 512.0, response_len = 1024.0 }
  local s = j:step {}:table()
  for _, k in ipairs { "gpus", "samples", "generated" } do
    t.is(math.type(s[k]), "integer", "rl_job step :table(): " .. k .. " an integer")
  end
  t.is(s.samples, 512, "rl_job: 64 prompts x 8 samples = 512")
end

-- 5. gp.comm's message had no upper bound: bytes = 1e30 was priced at
-- 3.6e18 s, where the command refuses a size past 2^50 B (1 PiB,
-- docs/output.md "Value bounds").  2^50 itself is still priced.
check(function() gp.comm { system = "dgx-h100", bytes = 1e30 } end,
  "comm: bytes must be at most 2^50 B (1 PiB) (got 1e+30)", "comm: bytes past 1 PiB refused")
t.ok(gp.comm { system = "dgx-h100", bytes = 2 ^ 50 }.time > 0, "comm: 2^50 B is priced")

-- 6. gp.sweep{policy = "cheapest"} (the CLI's --policy name) was refused
-- without saying what was given or which table to give; the name is now
-- taken as the CLI takes it (tests/lua/walkfix76.t), and a string that
-- is no name is refused with the names.
check(function() gp.sweep { model = "llama3-8b", gpu = "h100-sxm", policy = "fewest" } end,
  "sweep: policy must be a gp.policy.* table, a function or a name (got string 'fewest': fastest, cheapest, fewest-gpus or best-per-dollar",
  "sweep: a string that is no policy name is told the names")

-- 7. gp.roofline's op.count is the GEMMs of the shape m x n x k that flop
-- and bytes total (engine/roofline.h: a batched GEMM, priced by its
-- waves).  An op without a shape took count = 2 and priced it as count 1,
-- in silence; with a shape, more GEMMs fill more of the SMs.
check(function() gp.roofline { gpu = "h100-sxm", op = { flop = 1e12, bytes = 1e9, count = 2 } } end,
  "roofline: op.count counts the GEMMs of the shape m x n x k", "roofline: count without a shape refused")
do
  -- 128^3 GEMMs: one is one 128x128 tile on 132 SMs; 64 fill 64 of them,
  -- so the shape efficiency rises with count (strictly: not a tolerance)
  local function eff(c)
    return gp.roofline { gpu = "h100-sxm", op = { flop = 2 * 128 ^ 3 * c, bytes = 6 * 128 ^ 2 * c,
      m = 128, n = 128, k = 128, count = c } }.op.shape_eff
  end
  t.ok(eff(64) > eff(1), "roofline: count with a shape is read (64 GEMMs fill more SMs than 1)")
end

-- 8. gp.infer{gpu = 5} and gp.roofline{gpu = 5} were told the catalog's
-- "gpu must be an id, a string", naming no function, though both take a
-- gpu table too; gp.train says "train: gpu must be an id or a table".
check(function() gp.infer { model = "llama3-8b", gpu = 5 } end,
  "infer: gpu must be an id or a table (got 5)", "infer: gpu = 5 named")
check(function() gp.roofline { gpu = true } end,
  "roofline: gpu must be an id or a table (got true)", "roofline: gpu = true named")

-- 9. capacity beside a gpu: gp.train{gpu = "h100-sxm", capacity = ...}
-- said "train: gpu is required" (the card was dropped once a capacity was
-- given), though the reference promised only that gp.memory may leave gpu
-- out.  Now the card is timed and the capacity is its memory: the same
-- step as without, and the memory's capacity is the one given
-- (40 GiB = 40 x 2^30 = 42949672960 B, exact).
do
  local a = gp.train { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, zero = 3 }
  local b = gp.train { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, zero = 3, capacity = "40GiB" }
  t.is(b.step_s, a.step_s, "train: gpu and capacity: the card's step")
  t.is(b.memory.capacity, 40 * 2 ^ 30, "... and the given capacity")
  check(function() gp.train { model = "llama3-8b", capacity = "40GiB" } end,
    "train: gpu is required (capacity sets the memory per GPU", "train: capacity without a gpu says why")
end
-- and capacity past the engine's bound (1e15 B) was refused by the
-- engine's reader with no function named
check(function() gp.memory { model = "llama3-8b", capacity = 1e30 } end,
  "memory: capacity must be a size in (0B, 1000TB] (got 1e+30 = 1e+18TB)", "memory: capacity bound named")

t.done_testing()
