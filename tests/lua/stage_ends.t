-- first_stage_layers / last_stage_layers: Megatron-Core's uneven
-- pipeline split (num_layers_in_first_pipeline_stage,
-- num_layers_in_last_pipeline_stage).  The ends given hold their
-- counts, the other stages the remaining layers evenly; gp.train's
-- stage_layers is the most loaded stage's count.  verl's DeepSeek-V3
-- recipe runs num_layers_in_last_pipeline_stage=6 at PP 12.
-- Run with ./gpuplan run tests/lua/stage_ends.t.
local t = require "tap"
local gp = require "gpuplan"
local validate = require "gpuplan.validate"

t.plan(23)

-- Llama 3 8B: 32 layers, on PP 4 (TP 2, 8 GPUs), Megatron stack.
local function train(o)
  local base = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, pp = 4, tp = 2,
                 seq = 4096, global_batch = 64, stack = "megatron" }
  for k, v in pairs(o) do base[k] = v end
  return pcall(gp.train, base)
end

-- Uniform: 32 / 4 = 8 layers on every stage.
local _, u = train {}
t.is(u.stage_layers, 8, "uniform: 32 / 4 = 8 layers a stage")
-- last 5: the other three stages (32 - 5) / 3 = 9 each; the most
-- loaded stage holds 9 (exact integer count).
local _, l5 = train { last_stage_layers = 5 }
t.is(l5.stage_layers, 9, "last_stage_layers 5: (32 - 5) / 3 = 9 on the others")
-- first 2, last 6: the two middle stages (32 - 8) / 2 = 12 each.
local _, f2 = train { first_stage_layers = 2, last_stage_layers = 6 }
t.is(f2.stage_layers, 12, "first 2 + last 6: (32 - 8) / 2 = 12 in the middle")
-- 12 layers on the bottleneck stage against 8 (plus the head): the step
-- takes longer than the uniform split's.
t.ok(f2.step_s > u.step_s, "the 12-layer middle stage slows the step")

-- Refusals, each naming the option.
local ok, e = train { last_stage_layers = 4 }
t.ok(not ok and tostring(e):find("last_stage_layers 4 leaves 28 of the model's 32 layers "
  .. "for 3 other stages", 1, true), "28 layers do not divide over 3 stages: refused")
ok, e = train { pp = 1, tp = 8, last_stage_layers = 4 }
t.ok(not ok and tostring(e):find("last_stage_layers applies to pipeline stages", 1, true),
  "pp 1: refused")
ok, e = train { last_stage_layers = 5, stack = "deepspeed" }
t.ok(not ok and tostring(e):find("stack = deepspeed partitions by its own rule", 1, true),
  "DeepSpeed's pipeline: refused")
-- Under interleaving the counts are a rank's totals over its chunks (a
-- pipeline_model_parallel_layout summed by rank): PP 4 VP 2, last 5 ->
-- ranks 0..2 hold (32 - 5) / 3 = 9 each, the most loaded 9 (exact).
ok, e = train { last_stage_layers = 5, vpp = 2 }
t.ok(ok and e.stage_layers == 9, "interleaved: last 5 -> (32 - 5) / 3 = 9 a rank")
-- The same ranks as 1F1B's last 5, the bubble (tsum - tmax) / vpp half
-- of 1F1B's (train.c step_sum; the stages' times alike): a shorter step.
t.ok(ok and e.step_s < l5.step_s, "interleaved: last 5's bubble halved, a shorter step than 1F1B's")

-- The verl DeepSeek-V3 case states the recipe's LAST_LAYER 6: 61 layers,
-- PP 12, the first eleven stages (61 - 6) / 11 = 5 each and the last 6
-- with the LM head -- a heavier bottleneck than the uniform split's, so
-- the actor update is slower and verl's perf/mfu/actor lower.
local cases = validate.read("validation/cases.json")
local base
for _, c in ipairs(cases) do
  if c.id == "verl-0.5-grpo-deepseek-v3-h20-96-mfu" then base = c end
end
t.ok(base and base.parallel.last_stage_layers == 6, "the verl DeepSeek-V3 row states LAST_LAYER 6")
local cat = gp.catalog()
local with = validate.predict(base, cat)
local c = {}
for k, v in pairs(base) do c[k] = v end
c.parallel = t.with(base.parallel, {})
c.parallel.last_stage_layers = nil
local without = validate.predict(c, cat)
t.ok(with.predicted < without.predicted,
  string.format("6 layers on the last stage: mfu %.3f below the uniform split's %.3f",
    with.predicted, without.predicted))

-- split_ends: Megatron-Core's account_for_embedding_in_pipeline_split and
-- account_for_loss_in_pipeline_split, the embedding and the loss each in
-- a layer's place.  Llama 3 8B's 32 layers on PP 2: 34 slots, 17 a
-- stage, the first giving one to the embedding and the last one to the
-- loss -- 16 layers on each.
local okse, se = train { pp = 2, tp = 4, split_ends = true }
t.is(okse and se.stage_layers, 16, "split_ends, pp 2: (32 + 2) / 2 = 17 slots, 16 layers a stage")
-- Where the lighter stages go: Llama 2 13B's 40 layers on PP 3 split
-- uniformly 14, 13, 13 (the first L mod p stages one more), the first
-- stage the slowest (14 layers and the embedding); with split_ends 42
-- slots, 14 a stage: 13, 14, 13, the middle one the slowest.
local function train13(o)
  local base = { model = "llama2-13b", gpu = "h100-sxm", gpus = 6, pp = 3, tp = 2,
                 seq = 4096, global_batch = 48, stack = "megatron" }
  for k, v in pairs(o) do base[k] = v end
  return pcall(gp.train, base)
end
local _, u13 = train13 {}
local _, s13 = train13 { split_ends = true }
t.ok(u13.stage == 0 and s13.stage == 1 and s13.stage_layers == 14,
  "split_ends on PP 3: 13, 14, 13 layers, the middle stage the slowest (uniform: the first)")
-- One slot a model chunk: pp 2 x vpp 17 = 34 chunks, more than the 32
-- layers, which only the ends' own chunks allow.
local okv, sev = train { pp = 2, tp = 4, split_ends = true, vpp = 17 }
t.ok(okv, "split_ends: pp 2 x vpp 17 = 34 chunks over 32 layers and the two ends")
local ok2, e2 = train { pp = 2, tp = 4, vpp = 17 }
t.ok(not ok2 and tostring(e2):find("pp 2 x vpp 17 model chunks exceed the 32 layers", 1, true),
  "without split_ends 34 chunks exceed the layers: refused")
-- The interleaved bubble is (tsum - tmax) / vpp (Narayanan et al. 2021),
-- the stages' times the same at vpp 1 and 17: 1/17 of vpp 1's (5%: the
-- model prices it from the stage times it sums), plus the fill and
-- drain's wait on the overlapped transfers, 2 (v pp - 1) c = 2 x 33 c
-- (engine/train.c step_sum; tests/lua/pp_fill.t), c one hop: the PP
-- part's hidden time over its 2 v c a micro-batch.
local function bubble(r)
  for _, p in ipairs(r.parts) do if p.name == "bubble" then return p.seconds end end
end
local function pp_hidden(r)
  for _, p in ipairs(r.parts) do if p.name == "pp_comm" then return p.hidden end end
end
local hop = pp_hidden(sev) / (2 * 17 * sev.microbatches)
t.near(bubble(sev), bubble(se) / 17 + 2 * (17 * 2 - 1) * hop, 0.05,
       "vpp 17: the bubble is 1/17 of vpp 1's and the fill's transfers")
-- Megatron-Core's own checks, each refused in one line.
ok, e = train { split_ends = true }
t.ok(not ok and tostring(e):find("split_ends: the 32 layers and the two ends (34) do not "
  .. "divide over pp 4", 1, true), "34 slots over pp 4: refused")
ok, e = train { pp = 2, tp = 4, split_ends = true, vpp = 3 }
t.ok(not ok and tostring(e):find("a stage's 17 slots do not divide into vpp 3", 1, true),
  "17 slots into 3 chunks: refused")
ok, e = train { pp = 2, tp = 4, split_ends = true, last_stage_layers = 16 }
t.ok(not ok and tostring(e):find("follow from it; give one or the other", 1, true),
  "with the ends' own counts: refused")
ok, e = train { pp = 1, tp = 8, split_ends = true }
t.ok(not ok and tostring(e):find("split_ends applies to pipeline stages", 1, true), "pp 1: refused")
ok, e = train { pp = 2, tp = 4, split_ends = "yes" }
t.ok(not ok and tostring(e):find("split_ends must be true or false (got string 'yes')", 1,
  true), "a string: refused, shown as one")

-- The Llama 3 405B row: its stack profile takes sec. 3.3.2's pipeline,
-- the embedding and the loss in chunks of their own and one slot a
-- chunk: V = (126 + 2) / 16 = 8.  The paper's bubble ratio (PP - 1) /
-- (V M) at M = 16: 15 / 128 against V = 2's 15 / 32, so the row's MFU
-- rises over the same layout priced with V = 2 and no ends' chunks.
do
  local l3
  for _, c in ipairs(cases) do
    if c.id == "llama3-405b-16384gpu-cp1" then l3 = c end
  end
  local r = validate.predict(l3, cat)
  t.ok(r.defaults:find("split_ends=true (", 1, true) and r.defaults:find("vpp=8 (", 1, true),
    "Llama 3 405B: split_ends and V = 128 / 16 = 8 from sec. 3.3.2")
  local c2 = {}
  for k, v in pairs(l3) do c2[k] = v end
  c2.parallel = t.with(l3.parallel, { vpp = 2, split_ends = false })
  local v2 = validate.predict(c2, cat)
  t.ok(r.predicted > v2.predicted, string.format("V = 8: mfu %.0f above V = 2's %.0f",
    r.predicted, v2.predicted))
end
