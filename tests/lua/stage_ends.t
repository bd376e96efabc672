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

t.plan(10)

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
t.ok(not ok and tostring(e):find("stack deepspeed partitions by its own rule", 1, true),
  "DeepSpeed's pipeline: refused")
ok, e = train { last_stage_layers = 5, vpp = 2 }
t.ok(not ok and tostring(e):find("without interleaving (vpp 2)", 1, true),
  "interleaved: refused")

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
