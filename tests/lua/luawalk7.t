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

-- The keys of a result table its reference (results.BY_NAME[name].help)
-- does not name, sorted and joined ("" when it names them all).  A key is
-- named where it stands as a word of its own: a plain substring search let
-- "batch" pass inside "mean_batch" and "kv" inside "kv_budget".
local function unnamed_keys(tbl, name)
  local help, out = results.BY_NAME[name].help, {}
  for k in pairs(tbl) do
    if not help:find("%f[%w_]" .. k .. "%f[^%w_]") then out[#out + 1] = k end
  end
  table.sort(out)
  return table.concat(out, " ")
end

-- 1. gp.sweep's stats: every key a card's stats table has is named in the
-- reference (errors, unplaced, ungrouped, expert_cut and cache_hits were
-- returned, unnamed; expert_cut is the count a MoE zero_group skips).
do
  local s = gp.sweep { model = "mixtral-8x7b", gpu = "h100-sxm", gpus = 64, tokens = 1e9,
                       zero_group = 2 }
  t.is(unnamed_keys(s.stats["h100-sxm"], "stats"), "",
    "sweep: every stats key is named in the reference")
end

-- 2. gp.memory: the serving keys of a training step.  ctx, chunk_tokens and
-- kv_free_fraction size an inference replica's KV and workspace
-- (memory.lua prepare_infer reads them only under method infer); with
-- method full they were taken and dropped, where block and kv were
-- refused.  Refused the same way now.
for _, k in ipairs { "ctx", "chunk_tokens", "kv_free_fraction", "concurrency" } do
  local o = { model = "llama3-8b", gpu = "h100-sxm" }
  o[k] = k == "kv_free_fraction" and 0.5 or k == "concurrency" and 4 or 4096
  check(function() gp.memory(o) end, "memory: " .. k .. " applies to method infer (got full)",
    "memory: " .. k .. " on a training step is refused")
end
do -- still taken where it applies: the KV pool is 0.5 of the free memory
  local r = gp.memory { model = "llama3-8b", gpu = "h100-sxm", method = "infer", ctx = 4096,
                        kv_free_fraction = 0.5 }
  t.is(r.method, "infer", "memory: kv_free_fraction and ctx under method infer")
end

-- 3. kv_free_fraction's range is (0, 1]: 0 read "must be in (0, 1]" while
-- 1.5 and -0.1 read "must be a number in [0, 1]", which names 0 as good.
for _, v in ipairs { 0, 1.5, -0.1 } do
  check(function() gp.infer { model = "llama3-8b", gpu = "h100-sxm", kv_free_fraction = v } end,
    "infer: kv_free_fraction must be a number in (0, 1] (got " .. tostring(v) .. ")",
    "infer: kv_free_fraction " .. tostring(v) .. " names the range (0, 1]")
end

-- 4. margin and kv_free_fraction together: with the fraction the margin is
-- the rest of the free memory (memory.h mem_kv_margin never reads the
-- caller's), so margin = 0.2 beside kv_free_fraction = 0.5 was dropped:
-- llama3-8b on an H100 held the same 33.6e9 B of KV as the fraction alone.
for _, call in ipairs {
  { "infer", function() gp.infer { model = "llama3-8b", gpu = "h100-sxm", margin = 0.2,
                                   kv_free_fraction = 0.5 } end },
  { "infer_plan", function() gp.infer_plan { model = "deepseek-v3", gpu = "h200-sxm", target = 1e5,
                                   margin = 0.1, kv_free_fraction = 0.9 } end },
  { "memory", function() gp.memory { model = "llama3-8b", gpu = "h100-sxm", method = "infer",
                                   margin = 0.2, kv_free_fraction = 0.5 } end },
} do
  t.raises(call[2], call[1] .. ": margin and kv_free_fraction are two rules for the KV pool",
    call[1] .. ": margin beside kv_free_fraction is refused", true)
end
do -- each alone still prices: the fraction's pool is smaller than margin 0.2's here
  local a = gp.infer { model = "llama3-8b", gpu = "h100-sxm", margin = 0.2 }
  local b = gp.infer { model = "llama3-8b", gpu = "h100-sxm", kv_free_fraction = 0.5 }
  t.ok(b.kv_budget < a.kv_budget, "infer: margin alone and kv_free_fraction alone each price")
end

-- 5. gp.fit, the command line's fit: gp.memory.  It listed all the
-- functions, where gp.plan names gp.sweep.
check(function() return gp.fit end, "gp.fit: gpuplan has no such function or module "
  .. "(did you mean gp.memory?)", "gp.fit names gp.memory")

-- 6. The reference of gp.infer_plan said "the cheapest MoE serving
-- deployment", while it plans a dense model's replicas too (infer.lua
-- replicas_for, the command line's --target for a dense model): llama3-8b
-- at 20000 tok/s on H100 is 8 TP1 replicas.
do
  local api
  for _, f in ipairs(require("gpuplan.api").FUNCTIONS) do
    if f.name == "gp.infer_plan" then api = f end
  end
  t.like(api.help, "a dense model's replicas", "infer_plan reference: dense models named", true)
  local p = gp.infer_plan { model = "llama3-8b", gpu = "h100-sxm", target = 20000 }
  t.is(p.layout .. " x " .. p.gpus, "TP1 x 8", "infer_plan: a dense model's replicas")
end

-- 7. gp.rl's rollout table: the reference named preemptions (the key is
-- preempted) and left out prompts, queued, longest, steps, mean_batch,
-- itl_first, itl_last, recompute, weights, workspace and gen_tokens_per_s;
-- its counts longest and steps were floats (1024.0).  qwen3-8b GRPO on 4
-- rollout GPUs of 32: 1024-token responses, every sample decoded at once,
-- so 1024 decode steps.
do
  local r = gp.rl { model = "qwen3-8b", gpu = "h100-sxm", gpus = 32, zero = 3, algo = "ppo",
                    critic_model = "qwen3-8b", reward_model = "qwen3-8b", critic_gpus = 8,
                    reward_gpus = 8, ref_gpus = 8, rollout_gpus = 4 }
  t.is(unnamed_keys(r.rollout, "rollout"), "",
    "rl: every rollout key is named in the reference")
  t.ok(not results.BY_NAME.rollout.help:find("preemptions", 1, true),
    "rl: the reference names no preemptions key")
  t.is(math.type(r.rollout.steps), "integer", "rl: rollout.steps an integer")
  t.is(math.type(r.rollout.longest), "integer", "rl: rollout.longest an integer")
  t.is(r.rollout.steps, 1024, "rl: 1024 decode steps")
end

-- 8. gp.memory's margin, budget and usable as the reference states them.
-- It said margin is a fraction, budget "usable less the margin" and usable
-- "what a framework can allocate"; the engine's (memory.h gp_mem_result)
-- margin is bytes (0.1 of the H100's 84932978278 B usable_memory:
-- 8493297827.8 B), budget capacity less it, and usable the budget less
-- the context and workspaces (so usable < budget).  Exact up to one
-- rounding (1e-12 relative).
do
  local r = gp.memory { model = "llama3-8b", gpu = "h100-sxm", method = "infer", margin = 0.1 }
  t.is(results.BY_NAME.margin.unit, "B", "memory: margin declared in bytes")
  t.near(r.margin, 0.1 * r.capacity, 1e-12, "memory: margin = 0.1 x capacity, bytes")
  t.near(r.budget, r.capacity - r.margin, 1e-12, "memory: budget = capacity - margin")
  t.ok(r.usable < r.budget, "memory: usable is the budget less the context and workspaces")
  t.like(results.BY_NAME.budget.help, "capacity less the margin", "memory: budget's reference", true)
end

-- 9. MoE gp.infer's memory table: expert_slots is a count of routed
-- experts a GPU holds, not bytes as the reference said of every key, and
-- it was a float.  deepseek-v3 (256 routed experts) at EP16: 256 / 16 =
-- 16 a GPU.
do
  local r = gp.infer { model = "deepseek-v3", gpu = "h200-sxm", gpus = 16, ep = 16 }
  t.is(math.type(r.memory.expert_slots), "integer", "infer moe: memory.expert_slots an integer")
  t.is(r.memory.expert_slots, 16, "infer moe: 256 experts over EP16, 16 a GPU")
  t.is(unnamed_keys(r.memory, "memory"), "",
    "infer moe: every memory key is named in the reference")
end

-- 10. gp.sweep{ep = v}: a searched dimension given a value is refused with
-- the bound to give instead; a value that is no bound (-1, 0.5, NaN) was
-- offered as one ("e.g. ep_max = -nan").  A whole value still is.
for _, v in ipairs { -1, 0.5, 0 / 0 } do
  local ok, e = pcall(gp.sweep, { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, ep = v })
  t.like(not ok and e or "", "sweep: ep is searched, not given; bound it with ep_max",
    "sweep: ep = " .. tostring(v) .. " refused", true)
  t.ok(not tostring(e):find("e.g.", 1, true), "sweep: ep = " .. tostring(v) .. " offers no bad bound")
end
check(function() gp.sweep { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, ep = 8.0 } end,
  "bound it with ep_max (e.g. ep_max = 8)", "sweep: ep = 8.0 offers ep_max = 8")

-- 11. gp.infer{memory = ...}: past the engine's bound it was refused as
-- "capacity must be a positive number of bytes up to 1e+15", a key the
-- call never wrote; now by its own range, as capacity's (gp.train).
for _, v in ipairs { 1e300, "2PB", -1 } do
  check(function() gp.infer { model = "llama3-8b", gpu = "h100-sxm", memory = v } end,
    "infer: memory must be a size in (0B, 1000TB]", "infer: memory " .. tostring(v))
end

-- 12. gp.infer{kv = 0/0}: the refusal quoted the value as the C library
-- prints it ('-nan', '-nan' or 'nan' by platform), not as gpuplan shows
-- a value (NaN).  gp.rl's rollout engine reads kv the same way.
check(function() gp.infer { model = "llama3-8b", gpu = "h100-sxm", kv = 0 / 0 } end,
  "infer: unknown kv dtype NaN (expected bf16|fp16|fp8|int8|fp4|int4|fp32)", "infer: kv NaN shown as NaN")
check(function() gp.rl { model = "qwen3-8b", gpu = "h100-sxm", gpus = 8, zero = 3, kv = 0 / 0 } end,
  "rl: rollout: unknown kv dtype NaN", "rl: kv NaN shown as NaN")

-- 13. MoE serving (gp.infer with a serving option): pp and flash = false
-- were taken and dropped.  engine/serve*.c prices ep x tp layouts and
-- sets the fused attention itself: deepseek-v3 on 16 H200 at EP16 gave
-- 2626 tok/s at pp 1, 2, 3 and 4 and with flash = false alike.
check(function() gp.infer { model = "deepseek-v3", gpu = "h200-sxm", gpus = 16, ep = 16, pp = 2 } end,
  "infer: pp 2: the MoE serving model (ep 16) runs no pipeline stages", "infer moe: pp refused")
check(function() gp.infer { model = "deepseek-v3", gpu = "h200-sxm", gpus = 16, ep = 16,
                            flash = false } end,
  "infer: flash = false: the MoE serving model (ep 16) prices the runtimes' fused attention",
  "infer moe: flash = false refused")
do -- pp 1 and flash = true are what it prices: taken
  local a = gp.infer { model = "deepseek-v3", gpu = "h200-sxm", gpus = 16, ep = 16 }
  local b = gp.infer { model = "deepseek-v3", gpu = "h200-sxm", gpus = 16, ep = 16, pp = 1,
                       flash = true }
  t.is(b.tokens_per_s, a.tokens_per_s, "infer moe: pp 1 and flash true price the same step")
end

t.done_testing()
