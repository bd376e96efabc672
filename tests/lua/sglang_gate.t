-- SGLang's fused MoE gate (gpuplan.infer M.fused_grouped_topk, engine/
-- infer.c moe_route): from 0.4.6 SGLang routes DeepSeek's grouped top-k
-- in one kernel (sgl-kernel moe_fused_gate, sglang PR #5371: "Only one
-- kernel now."), where the native torch.compile'd path launches 9; the
-- moe_align_block_size kernels (3) are the same either way.
-- Run: ./gpuplan run tests/lua/sglang_gate.t
local t = require "tap"
local gp = require "gpuplan"
t.plan(21)

local base = { gpu = "h200-sxm", gpus = 8, tp = 8, weights = "fp8", runtime = "sglang",
              input = 1024, output = 1024, concurrency = 8, model = "deepseek-v3" }
local function run(extra) return gp.infer(t.with(base, extra)) end
local function op(r, name) return t.op(r.decode, name) end

-- DeepSeek-V3: 58 MoE layers.  Fused: 1 gate + 3 align kernels a layer,
-- 58 x 4 = 232; native: (9 + 3) x 58 = 696.  Counts are exact.
local on, off = run(), run({ fused_grouped_topk = false })
t.is(op(on, "moe_route").count, 58 * 4, "SGLang's default: 58 x (1 gate + 3 align) kernels")
t.is(op(off, "moe_route").count, 58 * 12, "fused_grouped_topk = false: 58 x (9 + 3)")
-- Each routing kernel is priced alike (the logits' bytes, the fill, the
-- launch), so the step saves 8 x 58 of them: 464 x the one kernel's time
-- (1e-9 relative: the sums of float products).
local one = op(on, "moe_route").time
t.near(off.decode.gpu_time - on.decode.gpu_time, 464 * one, 1e-9,
       "the step 464 routing kernels shorter")
-- The default is said for an MLA MoE model on SGLang, not where stated.
t.ok(t.said(on, "fused_grouped_topk (SGLang's from 0.4.6", true), "the fused gate said as assumed")
t.ok(not t.said(off, "fused_grouped_topk (", true), "stated off: not said")
-- vLLM's default stays the native path (its fused kernel is opt-in here).
local v = gp.infer(t.with(base, { runtime = "vllm" }))
t.is(op(v, "moe_route").count, 58 * 12, "runtime vllm: the native 9 + 3 by default")
t.is(op(gp.infer(t.with(base, { runtime = "vllm", fused_grouped_topk = true })), "moe_route").count,
     58 * 4, "runtime vllm with fused_grouped_topk: 1 + 3")
-- Refused where nothing prices it: another runtime, and not a boolean.
t.ok(not pcall(run, { runtime = "trtllm", fused_grouped_topk = true }),
     "fused_grouped_topk under TensorRT-LLM: refused")
t.ok(not pcall(run, { fused_grouped_topk = "yes" }), "not a boolean: refused")
-- and on a model without a grouped-top-k router, where it would change
-- nothing: a softmax-routed MoE (Mixtral) and a dense model.
t.raises(function() run({ model = "mixtral-8x7b", fused_grouped_topk = true }) end,
         "fused_grouped_topk given for a model without a grouped-top-k MoE router",
         "a softmax-routed MoE: refused by name", true)
t.raises(function() run({ model = "llama3-8b", weights = "bf16", fused_grouped_topk = false }) end,
         "llama3-8b has no MoE layers", "a dense model: refused", true)

-- The predictor's release rule (predict/infer.lua's sglang profile): a
-- case of SGLang 0.4.5 or before, or of no release dated before PR
-- #5371 (2025-04-14), is priced with the native 9; later ones keep the
-- default.  The case: InferenceX's H200 TP 8 row, its release changed.
local predict = require "gpuplan.predict.infer"
local all = require("gpuplan.validate").read("validation/cases.json")
local case
for _, c in ipairs(all) do
  if c.id == "inferencex870-dsr1-fp8-sglang0507-8xh200-tp8-1k1k-c8-tpot" then case = c end
end
t.ok(case ~= nil, "the InferenceX H200 case is in the file")
local function job(src)
  local c = t.with(case, { source = t.with(case.source, src) })
  return assert(predict(c, gp.catalog())).job
end
t.is(job({}).fused_grouped_topk, nil, "0.5.7: the default (one kernel)")
t.is(job({ version = "0.4.5" }).fused_grouped_topk, false, "0.4.5: the native 9")
t.is(job({ version = "0.4.6" }).fused_grouped_topk, nil, "0.4.6: the default")
local nover = t.with(case.source, { date = "2025-03-18" })
nover.version = nil
t.is(assert(predict(t.with(case, { source = nover }), gp.catalog())).job.fused_grouped_topk,
     false, "no release, dated 2025-03-18: the native 9")

-- The MoE serving model prices the fused gate as its one moe_topk row;
-- fused_grouped_topk = false adds the native path's 8 more a MoE layer
-- (serve.lua M.NATIVE_GROUPED_TOPK_EXTRA) as routing-metadata rows:
-- 58 x 8 = 464 kernels (DP attention, 8 H200).  Counts exact.
local sv = { gpu = "h200-sxm", gpus = 8, tp = 8, dp_attention = true, weights = "fp8",
             runtime = "sglang", input = 1024, output = 1024, concurrency = 64,
             model = "deepseek-v3" }
local sop = t.op
local s_on = gp.infer(sv)
local s_off = gp.infer(t.with(sv, { fused_grouped_topk = false }))
t.ok(sop(s_on, "moe_route_meta") == nil, "serving model, SGLang's default: moe_topk alone")
t.is(sop(s_off, "moe_route_meta").count, 58 * 8, "fused_grouped_topk = false: 58 x 8 more kernels")
t.ok(s_off.decode.time > s_on.decode.time, "the native routing's step is longer")

-- The release rule holds on the MoE serving model's cases too (predict/
-- infer.lua serve_case calls the sglang profile): dstack's SGLang
-- 0.4.3.post2 row (DP attention, 8 H200) is priced with the native 9,
-- and the same row stated as 0.4.6 keeps the one kernel.
local dstack
for _, c in ipairs(all) do
  if c.id == "dstack-dsr1-h200-sglang-tp8-3200in-800out-c64" then dstack = c end
end
t.is(assert(predict(dstack, gp.catalog())).job.fused_grouped_topk, false,
     "dstack's SGLang 0.4.3 serving row: the native 9")
t.is(assert(predict(t.with(dstack, { source = t.with(dstack.source, { version = "0.4.6" }) }),
     gp.catalog())).job.fused_grouped_topk, nil, "the same row as 0.4.6: the default")
