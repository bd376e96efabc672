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
