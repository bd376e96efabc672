-- DeepSpeed-Chat's training runs (DeepSpeedExamples applications/
-- DeepSpeed-Chat, 2023) ran transformers' OPT modules of the time, whose
-- attention is bmm, an fp32 softmax, bmm: the train predictor's
-- deepspeed-chat profile states flash=false on top of the DeepSpeed
-- profile; the RL predictor's step 3 takes the same rules, its actor and
-- critic trained by the same ZeRO engine (rlhf_engine.py).
-- Run with ./gpuplan run tests/lua/dschat_profile.t.
local t = require "tap"
local gp = require "gpuplan"
local validate = require "gpuplan.validate"

t.plan(7)

local cases = validate.read("validation/cases.json")
local base
for _, c in ipairs(cases) do
  if c.id == "dschat-step1-opt1.3b-sft-v100-16" then base = c end
end
t.ok(base and base.kind == "train", "the DeepSpeed-Chat step-1 SFT row ships")
local cat = gp.catalog()
local r = validate.predict(base, cat)
t.ok(r.predicted and r.defaults:find("stack profile=deepspeed-chat", 1, true)
  and r.defaults:find("flash=false", 1, true), "predicted with the deepspeed-chat profile")
-- The DeepSpeed profile's own settings still apply (ZeRO-2 reduces after
-- the backward: overlap_comm is DeepSpeed's default at stage 3 only).
t.ok(r.defaults:find("overlap_grad_reduce=false", 1, true), "the DeepSpeed profile rides along")
-- Stated as DeepSpeed's generic profile: fused attention, fewer bytes on
-- the s^2 scores, so a shorter step.
local c = {}
for k, v in pairs(base) do c[k] = v end
c.workload = {}
for k, v in pairs(base.workload) do c.workload[k] = v end
c.workload.framework = "deepspeed"
local g = validate.predict(c, cat)
t.ok(g.predicted < r.predicted, string.format("eager OPT attention %.3f s > fused %.3f s",
  r.predicted, g.predicted))

-- Step 3 (the RL predictor) prices its actor's and critic's updates by
-- the same rules: the DeepSpeed stack, its unfused modules, no
-- overlap_comm below stage 3, OPT's eager attention.
local step3
for _, x in ipairs(cases) do
  if x.id == "dschat-step3-opt1.3b-critic-opt350m-v100-16" then step3 = x end
end
t.ok(step3 and step3.kind == "rl", "the DeepSpeed-Chat step-3 PPO row ships")
local p3 = validate.predict(step3, cat)
t.ok(p3.predicted and p3.defaults:find("stack=deepspeed (DeepSpeed ZeRO engine)", 1, true)
  and p3.defaults:find("kernels=eager", 1, true)
  and p3.defaults:find("overlap_grad_reduce=false (overlap_comm off", 1, true)
  and p3.defaults:find("flash=false", 1, true), "step 3 takes the train profile's rules")
-- and its range regime is the deepspeed stack's, as step 1's is
t.is(p3.regime and p3.regime.stack, "deepspeed", "step 3's regime: stack deepspeed")
