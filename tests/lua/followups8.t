-- followups8: hardening follow-ups.  Each section: the input, the old
-- answer, and what is checked.
local t = require "tap"
local gp = require "gpuplan"

-- 2. gp.infer_plan's batch is declared "sequences decoded together per
-- replica" (results.lua).  The TP-replica route returned that (mixtral-8x7b
-- on h100-sxm at 1000 tok/s: 421, one TP8 replica's), but a serving-model
-- plan returned the serving model's batch a GPU: qwen3-30b-a3b on h100-sxm
-- at 2000 tok/s, "EP8, TP8 attention", returned 72 where its instance of
-- 8 GPUs decodes 72 x 8 = 576 together.  Now both are a replica's: the
-- serving plan's batch = its result's (a GPU's, gp.infer's own table) x
-- the instance's tp GPUs, exactly (integers).
do
  -- (ep = 8: the search alone now takes TP2 replicas, newuser9)
  local p = gp.infer_plan { model = "qwen3-30b-a3b", gpu = "h100-sxm", target = 2000, ep = 8 }
  local r = p.result
  t.ok(r.moe and r.ep > 1 and r.tp > 1, "qwen3-30b-a3b, 2000 tok/s: a serving-model EP layout ("
       .. p.layout .. ")")
  t.is(p.batch, r.batch_per_gpu * r.tp, "its batch is the decode instance's: a GPU's x tp")
  t.is(p.batch, r.batch, "gp.infer's batch is the same replica's (followups9)")
  -- the pool's sequences in flight: replicas x a replica's batch = GPUs x
  -- a GPU's batch
  t.is(p.batch * (p.decode_gpus // r.tp), r.batch_per_gpu * p.decode_gpus,
       "replicas x batch = decode GPUs x batch a GPU")
  -- the same for a disaggregated plan (decode pool of several instances)
  local d = gp.infer_plan { model = "deepseek-v3", gpu = "h200-sxm", weights = "fp8",
                            target = 20000 }
  t.ok(d.disagg and d.decode_gpus > d.result.tp, "deepseek-v3, 20000 tok/s: disaggregated, "
       .. d.decode_gpus .. " decode GPUs")
  t.is(d.batch, d.result.batch_per_gpu * d.result.tp, "deepseek-v3: a decode instance's batch")
  -- and the TP-replica route keeps its replica's batch: gp.infer at the
  -- plan's GPUs and that batch is the plan (followups7 checks the figures)
  local m = gp.infer_plan { model = "mixtral-8x7b", gpu = "h100-sxm", target = 1000 }
  local g = gp.infer { model = "mixtral-8x7b", gpu = "h100-sxm", gpus = m.gpus,
                       tp = m.result.tp, batch = m.batch }
  t.is(g.batch, m.batch, "mixtral-8x7b TP replicas: gp.infer's batch a replica = the plan's")
  t.near(g.tokens_per_s, m.tokens_per_s, 1e-12, "and its tokens/s (same engine call)")
end

-- 6. sweep_run's count of layouts past a GPU's memory compared each
-- brief step's total with r.mem.budget, which a brief step never writes:
-- the value the sweep's first, whole step left.  Now each layout's budget
-- is its own capacity less the margin (mem_budget, the formula mem_finish
-- writes).  llama3-70b on 8 h100-sxm fits no layout (bf16 weights and
-- Adam states are ~170 GB a GPU at best), so every layout is past the
-- budget: gpu_budget = capacity x (1 - margin), with gp.train's capacity
-- (84.93e9 B usable) -- 76.44e9 at the 10% default, 67.95e9 at 20%.
-- Tolerance 1e-12 relative: the same two operations, rounding only.
do
  local a = { model = "llama3-70b", gpu = "h100-sxm", gpus = 8 }
  local cap = gp.train(t.with(a, { tp = 8 })).memory.capacity
  for _, margin in ipairs { 0.10, 0.20 } do
    local r = gp.sweep(t.with(a, { margin = margin }))
    local st = r.stats["h100-sxm"]
    t.is(st.fitting, 0, "margin " .. margin .. ": nothing fits")
    t.is(st.past_gpu, st.layouts, "margin " .. margin .. ": every layout counted past the GPU")
    t.near(st.gpu_budget, cap - margin * cap, 1e-12,
           "margin " .. margin .. ": the budget is capacity x (1 - margin)")
  end
end

t.done_testing()
