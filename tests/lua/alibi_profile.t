-- ALiBi models on the Hugging Face modules run unfused attention: the
-- train predictor's DeepSpeed profile states flash=false for a model
-- whose positions are ALiBi (transformers' BloomAttention and
-- MptAttention have no SDPA path; Baichuan's remote modeling_baichuan.py
-- takes SDPA only with xformers installed), and for the Baichuan-13B
-- shape (40 layers of 5120) its own eager code: the clamp after the ALiBi
-- mask and the softmax on the bf16 scores (eager_softmax false).
-- Run with ./gpuplan run tests/lua/alibi_profile.t.
local t = require "tap"
local gp = require "gpuplan"
local validate = require "gpuplan.validate"

t.plan(6)

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
t.ok(r.defaults:find("attn_clamp=true", 1, true) and r.defaults:find("eager_softmax=false", 1, true),
  "the Baichuan-13B shape: its clamp and its 16-bit softmax")

local function with(case, model, notes)
  local c = {}
  for k, v in pairs(case) do c[k] = v end
  c.model = {}
  for k, v in pairs(case.model) do c.model[k] = v end
  for k, v in pairs(model) do c.model[k] = v end
  if notes then c.notes = notes end
  return c
end
-- Another ALiBi shape (BLOOM-7B1's 30 layers of 4096, 32 heads): unfused,
-- with transformers' own softmax(dtype=float32) and no clamp -- neither
-- Baichuan setting applies.
local b = validate.predict(with(base, { layers = 30, hidden = 4096, heads = 32, kv_heads = 32,
  ffn_gated = false, ffn_hidden = 16384, vocab = 250880, params_b = 7.07 }), cat)
t.ok(b.predicted and b.defaults:find("flash=false (ALiBi", 1, true)
  and not b.defaults:find("attn_clamp", 1, true) and not b.defaults:find("eager_softmax", 1, true),
  "an ALiBi shape other than Baichuan's: unfused, no clamp, the fp32 softmax")
-- A rotary model of the same shape keeps the fused kernel: its step is
-- shorter (more tokens/s), the s^2 passes gone.
local rope = validate.predict(with(base, { positions = "rope" }), cat)
t.ok(rope.predicted and not rope.defaults:find("flash=false", 1, true),
  "a rotary model of the same shape: the fused attention")
t.ok(rope.predicted > r.predicted, string.format("fused %.0f tokens/s/GPU > unfused %.0f",
  rope.predicted, r.predicted))
t.done_testing()
