-- Model-FLOP conventions: an MFU or model TFLOP/s case is compared with
-- the source's own count, so the stack profile says which count its
-- framework logs.  embed_flops: nanoGPT's estimate_mfu (6N over every
-- parameter, the input embedding's too), which the fms-fsdp README names
-- for its MFU.  no_router_flops: Megatron-LM's and Megatron-Bridge's
-- num_floating_point_operations, which have no router term.  causal_flops
-- on a megatron-core case dated on or after 2025-03-06 (Megatron-LM
-- 8873b55d6a halved the core-attention term).
-- Run with ./gpuplan run tests/lua/mfu_conventions.t.
local t = require "tap"
local gp = require "gpuplan"
local validate = require "gpuplan.validate"

t.plan(8)

local function train(o)
  local base = { gpu = "h100-sxm", gpus = 8, seq = 4096, global_batch = 64 }
  for k, v in pairs(o) do base[k] = v end
  return gp.train(base)
end

-- Llama 2 7B (catalog: vocab 32000, hidden 4096, untied head): the input
-- embedding adds 2 V h FLOPs a token forward, 6 V h = 6 x 32000 x 4096 =
-- 786,432,000 a token trained.  Exact integers in doubles: 1e-9 relative.
local a = train { model = "llama2-7b" }
local b = train { model = "llama2-7b", embed_flops = true }
local per_tok = (b.model_flops - a.model_flops) / a.tokens_per_step
t.ok(math.abs(per_tok / 786432000 - 1) < 1e-9,
  string.format("embed_flops adds 6 V h a token: %.0f (hand: 786,432,000)", per_tok))
-- A convention of the count alone: the priced step does not move.
t.ok(a.step_s == b.step_s, "embed_flops leaves the priced step as it is")

-- Qwen3-30B-A3B (48 MoE layers, hidden 2048, 128 experts): the router
-- gate is 2 h E FLOPs a token forward a layer, 6 x 48 x 2048 x 128 =
-- 75,497,472 a token trained.
local m0 = train { model = "qwen3-30b-a3b", ep = 8 }
local m1 = train { model = "qwen3-30b-a3b", ep = 8, no_router_flops = true }
per_tok = (m0.model_flops - m1.model_flops) / m0.tokens_per_step
t.ok(math.abs(per_tok / 75497472 - 1) < 1e-9,
  string.format("no_router_flops takes 6 l h E a token out: %.0f (hand: 75,497,472)", per_tok))
t.ok(m0.step_s == m1.step_s, "no_router_flops leaves the priced step as it is")

-- The profiles that say so.
local cat = gp.catalog()
local rows = {}
for _, c in ipairs(validate.read("validation/cases.json")) do rows[c.id] = c end
local function has(p, s) return p.defaults:find(s, 1, true) ~= nil end
local ibm = validate.predict(rows["ibm-fsdp-compile-blog-llama2-70b-h100-464"], cat)
t.ok(ibm.predicted and has(ibm, "embed_flops=true (MFU by nanoGPT"),
  "fms-fsdp: the MFU counts the input embedding (nanoGPT's 6N)")
local dsv3 = rows["mlm-dsv3-gb200-guide-mxfp8-hybridep-970"]
local pd = validate.predict(dsv3, cat)
t.ok(pd.predicted and has(pd, "causal_flops=true (megatron-core num_floating_point_operations since 2025-03-06")
  and has(pd, "no_router_flops=true ("),
  "megatron-core run of 2025-11: causal attention at half, no router")
local p080 = validate.predict(rows["mcore080-h100-gpt-7.1b-weak"], cat)
t.ok(p080.predicted and not has(p080, "causal_flops=") and not has(p080, "no_router_flops="),
  "megatron-core core_r0.8.0 GPT (no date, dense): the whole square, no router rule")
-- The day before the change: the square again.
local copy = t.copy
local early = copy(dsv3)
early.source.date = "2025-03-05"
local pe = validate.predict(early, cat)
t.ok(pe.predicted and not has(pe, "causal_flops="),
  "megatron-core run dated 2025-03-05: causal_flops not set")
