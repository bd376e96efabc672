-- An rl case's MoE token dispatcher (validation/SCHEMA.md
-- parallel.moe_dispatcher, moe_flex_backend, moe_flex_sms) reaches the
-- trainer gp.rl prices, as a train case's reaches gp.train: verl's
-- Qwen3-30B-A3B recipe runs "moe_token_dispatcher_type=flex" with
-- "moe_enable_deepep=True", and its rows were priced with the alltoall
-- dispatcher while the case format could not say so.
-- Run with ./gpuplan run tests/lua/rl_case_dispatcher.t.
local t = require "tap"
local gp = require "gpuplan"
local rl = require "gpuplan.rl"
local predict = require "gpuplan.predict.rl"
local V = require "gpuplan.validate"

t.plan(7)

local cat = gp.catalog()
-- The options the predictor hands gp.rl, caught as it makes them.
local orig, seen_o, seen_r = rl.rl, nil, nil
rl.rl = function(o) seen_o = o; seen_r = orig(o); return seen_r end

local base
for _, c in ipairs(V.read("validation/cases.json")) do
  if c.id == "verl-0.5-grpo-qwen3-30b-a3b-h20-8-mfu" then base = c end
end
t.ok(base and base.parallel.moe_dispatcher == "flex",
  "the shipped verl 30B-A3B case states the recipe's flex dispatcher")

local function with_parallel(extra)
  local c = t.with(base, {})
  c.parallel = t.with(base.parallel, extra)
  return c
end

-- The dispatcher and its backend pass through as the case states them.
local p = predict(base, cat)
t.is(seen_o.moe_dispatcher, "flex", "moe_dispatcher flex reaches gp.rl")
local flex_s = t.phase(seen_r, "actor_update").seconds
predict(with_parallel { moe_flex_backend = "hybridep", moe_flex_sms = 24 }, cat)
t.is(seen_o.moe_flex_backend, "hybridep", "moe_flex_backend reaches gp.rl")
t.is(seen_o.moe_flex_sms, 24, "moe_flex_sms reaches gp.rl")

-- Without it, gp.rl's default (alltoall): a different trainer, so a
-- different actor update (DeepEP's kernels and its fused permute against
-- NCCL's all-to-all and the dispatcher's permute passes) -- this fails if
-- the field is read but not passed on.
local c0 = t.with(base, {})
c0.parallel = {}
for k, v in pairs(base.parallel) do if k ~= "moe_dispatcher" then c0.parallel[k] = v end end
predict(c0, cat)
t.is(seen_o.moe_dispatcher, nil, "no dispatcher stated: gp.rl's default")
t.ok(math.abs(t.phase(seen_r, "actor_update").seconds - flex_s) > 1e-6 * flex_s,
  "flex and alltoall price different actor updates")
t.ok(p and p.value > 0, "the flex case is predicted")
rl.rl = orig
