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
  local p = gp.infer_plan { model = "qwen3-30b-a3b", gpu = "h100-sxm", target = 2000 }
  local r = p.result
  t.ok(r.moe and r.ep > 1 and r.tp > 1, "qwen3-30b-a3b, 2000 tok/s: a serving-model EP layout ("
       .. p.layout .. ")")
  t.is(p.batch, r.batch * r.tp, "its batch is the decode instance's: a GPU's x tp")
  -- the pool's sequences in flight: replicas x a replica's batch = GPUs x
  -- a GPU's batch
  t.is(p.batch * (p.decode_gpus // r.tp), r.batch * p.decode_gpus,
       "replicas x batch = decode GPUs x batch a GPU")
  -- the same for a disaggregated plan (decode pool of several instances)
  local d = gp.infer_plan { model = "deepseek-v3", gpu = "h200-sxm", weights = "fp8",
                            target = 20000 }
  t.ok(d.disagg and d.decode_gpus > d.result.tp, "deepseek-v3, 20000 tok/s: disaggregated, "
       .. d.decode_gpus .. " decode GPUs")
  t.is(d.batch, d.result.batch * d.result.tp, "deepseek-v3: a decode instance's batch")
  -- and the TP-replica route keeps its replica's batch: gp.infer at the
  -- plan's GPUs and that batch is the plan (followups7 checks the figures)
  local m = gp.infer_plan { model = "mixtral-8x7b", gpu = "h100-sxm", target = 1000 }
  local g = gp.infer { model = "mixtral-8x7b", gpu = "h100-sxm", gpus = m.gpus,
                       tp = m.result.tp, batch = m.batch }
  t.is(g.batch, m.batch, "mixtral-8x7b TP replicas: gp.infer's batch a replica = the plan's")
  t.near(g.tokens_per_s, m.tokens_per_s, 1e-12, "and its tokens/s (same engine call)")
end

t.done_testing()
