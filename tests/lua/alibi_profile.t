-- ALiBi models on the Hugging Face modules run unfused attention: the
-- train predictor's DeepSpeed profile states flash=false for a model
-- whose positions are ALiBi (transformers' BloomAttention and
-- MptAttention have no SDPA path; Baichuan's remote modeling_baichuan.py
-- takes SDPA only with xformers installed).  Baichuan's own eager code
-- (the clamp after the ALiBi mask, the softmax on the bf16 scores) is the
-- case's to state (workload.attn_clamp, workload.eager_softmax): no
-- model is recognised by its shape.
-- Run with ./gpuplan run tests/lua/alibi_profile.t.
local t = require "tap"
local gp = require "gpuplan"
local validate = require "gpuplan.validate"

t.plan(10)

local cases = validate.read("validation/cases.json")
local base
for _, c in ipairs(cases) do
  if c.id == "flagperf-baichuan2-13b-ds-zero1-h800x16-s2048-mb1-gas64" then base = c end
end
t.ok(base and base.kind == "train" and base.model.positions == "alibi",
  "FlagPerf's Baichuan2-13B DeepSpeed row ships, an ALiBi model")
local cat = gp.catalog()
local r = validate.predict(base, cat)
t.ok(r.predicted and r.defaults:find("stack profile=deepspeed", 1, true)
  and r.defaults:find("flash=false (ALiBi", 1, true), "unfused attention under the DeepSpeed profile")
t.ok(not r.defaults:find("attn_clamp", 1, true) and not r.defaults:find("eager_softmax", 1, true),
  "the case states Baichuan's clamp and 16-bit softmax: not defaults")

local function with(case, model, notes)
  local c = {}
  for k, v in pairs(case) do c[k] = v end
  c.model = {}
  for k, v in pairs(case.model) do c.model[k] = v end
  for k, v in pairs(model) do c.model[k] = v end
  if notes then c.notes = notes end
  return c
end
-- The same case without the two workload fields: the profile's Hugging
-- Face defaults (transformers' softmax(dtype=float32), no clamp) -- a
-- different step, so the fields reach the prediction; neither appears as
-- a default (the profile does not guess a model's code from its shape).
local plain = with(base, {})
plain.workload = {}
for k, v in pairs(base.workload) do plain.workload[k] = v end
plain.workload.attn_clamp, plain.workload.eager_softmax = nil, nil
local b = validate.predict(plain, cat)
t.ok(b.predicted and b.defaults:find("flash=false (ALiBi", 1, true)
  and not b.defaults:find("attn_clamp", 1, true) and not b.defaults:find("eager_softmax", 1, true)
  and b.predicted ~= r.predicted,
  string.format("without the fields: unfused, no clamp, the fp32 softmax (%.0f vs %.0f tokens/s/GPU)",
    b.predicted, r.predicted))
-- A rotary model of the same shape keeps the fused kernel: its step is
-- shorter (more tokens/s), the s^2 passes gone (the eager-code fields
-- cleared: a fused kernel has no clamp to state).
local rope = validate.predict(with(plain, { positions = "rope" }), cat)
t.ok(rope.predicted and not rope.defaults:find("flash=false", 1, true),
  "a rotary model of the same shape: the fused attention")
t.ok(rope.predicted > b.predicted, string.format("fused %.0f tokens/s/GPU > unfused %.0f",
  rope.predicted, b.predicted))
-- The same rule is gp.train's own default (gpuplan.options' flash), not
-- only the validation profile's: BLOOM-176B (ALiBi) on the hf stack's
-- eager kernels runs unfused and says why; the fused kernels keep the
-- fused attention; a rotary model on the eager kernels keeps it too; a
-- stated flash wins.
local job = { model = "bloom-176b", gpu = "a100-sxm-80gb", gpus = 64, zero = 3, seq = 2048,
  stack = "hf", method = "full" }
local function defaults(o) return table.concat(gp.train(o).defaults, "; ") end
t.ok(defaults(job):find("flash=false (ALiBi on the Hugging Face modules", 1, true),
  "gp.train: ALiBi on the eager kernels, unfused by default")
t.ok(defaults(t.with(job, { kernels = "fused" })):find("flash=true", 1, true),
  "gp.train: ALiBi on the fused kernels keeps the fused attention")
t.ok(defaults(t.with(job, { model = "llama2-70b" })):find("flash=true", 1, true),
  "gp.train: a rotary model on the eager kernels keeps it")
t.ok(not defaults(t.with(job, { flash = true })):find("flash=", 1, true),
  "gp.train: a stated flash is not a default")

t.done_testing()
