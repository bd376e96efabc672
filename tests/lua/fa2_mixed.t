-- vLLM V1's mixed steps on FlashAttention-2 (gp.infer fa2_mixed, engine
-- infer_cfg.mixed_kv_per_qhead, infer_run.c mixed_decode_cfg): a step that
-- carries prompt chunks runs its decodes' attention in one varlen call,
-- whose split-KV kernel gives each query head of a sequence its own thread
-- block reading its KV head's whole cache, so such a step reads a GQA
-- decode's cache heads/kv_heads times; the decode-only step (FA2 folds the
-- group there) and the prompt tokens are untouched.  On by default for
-- runtime vllm's own mixing on ampere and ada cards (FA3 on Hopper packs
-- the group), refused off vLLM and over a latent (MLA) cache.
-- Run with ./gpuplan run tests/lua/fa2_mixed.t.
local t = require "tap"
local gp = require "gpuplan"

-- Qwen3-32B (64 query heads, 8 KV heads, 64 layers) on one A100, vLLM V1's
-- defaults (2048-token budget there), a steady state of 16 sequences,
-- 1024 in / 128 out.
local q = { model = "qwen3-32b", gpu = "a100-sxm-80gb", gpus = 1, input = 1024, output = 128,
            runtime = "vllm", batch = 16 }
local on, off = gp.infer(q), gp.infer(t.with(q, { fa2_mixed = false }))
local row = t.op
local function said(r, pat)
  for _, d in ipairs(r.defaults) do if d:find(pat, 1, true) then return true end end
  return false
end

-- The steady state by hand (infer_run.c mixed_steps, the branch under the
-- budget): room = 2048 - 16 = 2032 tokens, so a 1024-token prompt is one
-- chunk; a slot turns over in n = 127 decode steps + 1 = 128 steps; the
-- share f = 16 / 128 x 1 = 0.125 of the steps carries the prompts
-- (k = 16 x 1024 / 128 / f = 1024 tokens) beside dm = 16 - 16 / (128 f) =
-- 15 decodes, and tokens/s = B x output / (n ((1 - f) itl + f tc)).  Only
-- the mixed step's time tc moves, by its 15 decodes' attention read 8 times
-- instead of once; that kernel is the one gp.infer prices for vLLM's
-- per-query-head PagedAttention decode (paged_decode, engine/infer.c
-- mmha_decode) at the same batch and context (1024 + 128 / 2 = 1088), so
--   1/tps(on) - 1/tps(off) = n f dtc / (B output) = dtc / 128,
-- dtc = attention(paged, batch 15) - attention(flash, batch 15).
-- 1e-9 relative: the same sums.
local p15 = gp.infer(t.with(q, { batch = 15, paged_decode = true }))
local f15 = gp.infer(t.with(q, { batch = 15, fa2_mixed = false }))
t.is(p15.decode.ctx, 1088, "the decode context: 1024 + 128 / 2")
local dtc = row(p15.decode, "attention").total - row(f15.decode, "attention").total
local got = 1 / on.tokens_per_s - 1 / off.tokens_per_s
t.near(got, dtc / 128, 1e-9 * got, string.format(
  "steady state: 1/tps moves by the mixed step's 15 decodes read 8 times, / 128 (%.4g s)", dtc))
t.ok(on.tokens_per_s < off.tokens_per_s, "... slower with the per-head reads")
-- The cache part of those reads: 15 sequences x 1088 tokens x 8 KV heads x
-- 128 x 2 (K, V) x 2 B = 66,846,720 B a layer, read 8 times: 7 x that more
-- (Q and O, 15 x 64 x 128 x 2 x 2 B, read once either way).  Exact.
t.is(row(p15.decode, "attention").bytes - row(f15.decode, "attention").bytes, 7 * 66846720,
     "the per-head kernel reads the 15 decodes' cache 7 times more")
-- The decode-only step (max_seqlen_q == 1: FA2 folds the group) and the
-- prompt are untouched.
t.is(on.decode.gpu_time, off.decode.gpu_time, "decode-only step unchanged")
t.is(on.prefill.gpu_time, off.prefill.gpu_time, "prefill unchanged")
t.ok(said(on, "fa2_mixed (vLLM V1 on FlashAttention-2, ampere: a step with prompt chunks reads "
          .. "each decode's cache 8 times, once per query head)"),
     "the defaults line says the kernel and the factor (64 / 8 query heads a KV head)")
t.ok(not said(off, "fa2_mixed"), "fa2_mixed = false: nothing said")

-- An ada card (L40S, compute capability 8.9: FA2 as well) takes it by
-- default; Hopper (FA3, its varlen kernel packs the group) does not, and
-- the option forces it there.
local l40s = t.with(q, { gpu = "l40s" })
t.ok(said(gp.infer(l40s), "fa2_mixed (vLLM V1 on FlashAttention-2, ada"), "L40S: on by default")
local h = t.with(q, { gpu = "h100-sxm" })
local h_def, h_off, h_on = gp.infer(h), gp.infer(t.with(h, { fa2_mixed = false })),
  gp.infer(t.with(h, { fa2_mixed = true }))
t.is(h_def.tokens_per_s, h_off.tokens_per_s, "H100: off by default")
t.ok(not said(h_def, "fa2_mixed"), "... and not said")
t.ok(h_on.tokens_per_s < h_def.tokens_per_s, "fa2_mixed = true prices it on an H100 too")
-- The factor is the engine's count of query heads a KV head serves on a
-- rank (infer_mixed_kv_reads, the rule kv_reads follows), not the model's
-- heads / kv_heads: Qwen3-30B-A3B has 32 query heads and 4 KV heads, so
-- on one GPU 32 / 4 = 8; at tp 8 a rank holds 32 / 8 = 4 query heads and
-- one KV head (replicated: fewer KV heads than ranks), 4 / 1 = 4.
local moe = { model = "qwen3-30b-a3b", gpu = "a100-sxm-80gb", input = 1024, output = 128,
              runtime = "vllm", batch = 16 }
t.ok(said(gp.infer(t.with(moe, { gpus = 1 })), "cache 8 times, once per query head"),
     "Qwen3-30B-A3B on one GPU: 32 / 4 = 8 reads")
t.ok(said(gp.infer(t.with(moe, { gpus = 8, tp = 8 })), "cache 4 times, once per query head"),
     "... at tp 8: 4 query heads over one replicated KV head, 4 reads")
-- A target's search (infer_gpus_for) says the same factor.
local qt = t.with(q, { target = 2000 })
qt.gpus, qt.batch = nil, nil
local plan = gp.infer_plan(qt)
local pd = plan.result and plan.result.defaults or plan.defaults or {}
local found = false
for _, d in ipairs(pd) do
  if d:find("fa2_mixed (vLLM V1 on FlashAttention-2, ampere: a step with prompt chunks reads "
            .. "each decode's cache 8 times", 1, true) then found = true end
end
t.ok(found, "infer_plan's target search: the same note, 8 reads")
-- An 8-bit KV cache: vLLM's FlashAttention backend refuses it off FA3 on
-- Hopper ("FlashAttention does not support fp8 kv-cache on this device")
-- and vLLM runs another backend, which reads the cache once: off by
-- default, and the same throughput as fa2_mixed = false; asked for,
-- refused naming the cache.
local q8 = t.with(q, { kv = "fp8" })
local r8 = gp.infer(q8)
t.ok(not said(r8, "fa2_mixed"), "kv fp8 on an A100: off by default, nothing said")
t.is(r8.tokens_per_s, gp.infer(t.with(q8, { fa2_mixed = false })).tokens_per_s,
     "... priced as fa2_mixed = false")
t.raises(function() gp.infer(t.with(q8, { fa2_mixed = true })) end,
         "fa2_mixed = true with kv = fp8: vLLM's FlashAttention-2 backend takes a 16-bit KV cache "
           .. "only", "fa2_mixed with an fp8 KV cache: refused", true)
-- Attention sinks (gpt-oss-120b, attn_sinks): vLLM's FlashAttention
-- backend takes them on FA3 only ("sink not supported on compute
-- capability < 9.0"), so on an A100 another backend runs: off by default,
-- priced as fa2_mixed = false; asked for, refused naming the sinks.
local oss = { model = "gpt-oss-120b", gpu = "a100-sxm-80gb", gpus = 4, tp = 4, input = 1024,
              output = 128, runtime = "vllm", batch = 16 }
local ro = gp.infer(oss)
t.ok(not said(ro, "fa2_mixed"), "gpt-oss-120b (attention sinks) on A100s: off by default")
t.is(ro.tokens_per_s, gp.infer(t.with(oss, { fa2_mixed = false })).tokens_per_s,
     "... priced as fa2_mixed = false")
t.raises(function() gp.infer(t.with(oss, { fa2_mixed = true })) end,
         "fa2_mixed = true with gpt-oss-120b's attention sinks (attn_sinks)",
         "fa2_mixed with attention sinks: refused", true)
-- chunked_prefill = true stated is what vLLM V1 does by itself: the same
-- mixed steps and kernel, so the same answer (it was off there, so saying
-- the default moved Qwen3-32B's throughput by the whole effect).
local stated = gp.infer(t.with(q, { chunked_prefill = true }))
t.is(stated.tokens_per_s, on.tokens_per_s, "chunked_prefill = true given: V1's mixing, on as by default")
t.ok(said(stated, "fa2_mixed (vLLM V1 on FlashAttention-2, ampere"), "... and said")
-- A V0 release (vllm_version, its sampler's): V0 runs the decodes in a
-- call of their own, off.
t.ok(not said(gp.infer(t.with(q, { vllm_version = "0.6.3", sampling = "random" })), "fa2_mixed"),
     "vllm_version 0.6.3 (V0): off")
-- MHA (Llama 2 13B: 40 heads, 40 KV heads): a group of one reads the cache
-- once either way.
local m = t.with(q, { model = "llama2-13b" })
t.is(gp.infer(m).tokens_per_s, gp.infer(t.with(m, { fa2_mixed = false })).tokens_per_s,
     "MHA: the same throughput either way")
t.ok(not said(gp.infer(m), "fa2_mixed"), "... and nothing said")
-- A latent (MLA) cache is not priced so by default (vLLM's MLA backends).
local mla = { model = "deepseek-v3", gpu = "a100-sxm-80gb", gpus = 16, tp = 8, pp = 2,
              weights = "fp8", runtime = "vllm", input = 1024, output = 128, batch = 16 }
local ok_mla, r_mla = pcall(gp.infer, mla)
t.ok(ok_mla and not said(r_mla, "fa2_mixed"), "MLA model on an A100: not on by default")

-- Refused: another runtime, a non-boolean, an MLA cache, the MoE serving
-- model's own steps.
t.raises(function() gp.infer(t.with(q, { runtime = "trtllm", fa2_mixed = true })) end,
         "fa2_mixed = true picks vLLM V1's attention kernel in its mixed steps: --runtime vllm "
           .. "only (got runtime trtllm)", "fa2_mixed on TensorRT-LLM: refused", true)
t.raises(function() gp.infer(t.with(q, { fa2_mixed = "yes" })) end,
         "fa2_mixed must be true or false", "fa2_mixed not a boolean: refused", true)
-- Without chunked prefill there is no mixed step to price it in: asked
-- for, refused rather than ignored (the same throughput either way).
t.raises(function() gp.infer(t.with(q, { batch = 4, chunked_prefill = false, fa2_mixed = true })) end,
         "fa2_mixed = true prices vLLM V1's steps that carry prompt chunks beside decodes: "
           .. "chunked_prefill = false runs none", "fa2_mixed without chunked prefill: refused", true)
t.raises(function() gp.infer(t.with(mla, { fa2_mixed = true })) end,
         "a latent (MLA) cache runs on vLLM's MLA backends", "fa2_mixed on an MLA model: refused",
         true)
t.raises(function() gp.infer { model = "deepseek-v3", gpu = "a100-sxm-80gb", gpus = 16, ep = 16,
                               runtime = "vllm", fa2_mixed = true } end,
         "the MoE serving model (chosen by ep = 16) prices its own attention",
         "fa2_mixed with the MoE serving model: refused, naming what chose it", true)

-- A card FlashAttention-2 does not run on (compute capability below 8.0:
-- a V100), and chunked_prefill = false, where no step carries a prompt
-- chunk beside decodes (the stated kernel changed nothing there).
t.raises(function() gp.infer(t.with(q, { model = "llama3-8b", gpu = "v100-sxm2-32gb",
                                          fa2_mixed = true })) end,
         "fa2_mixed: FlashAttention-2 needs compute capability 8.0 (Ampere or later); "
           .. "v100-sxm2-32gb (volta)", "fa2_mixed on a V100: refused", true)
t.raises(function() gp.infer(t.with(q, { fa2_mixed = true, chunked_prefill = false })) end,
         "fa2_mixed = true prices vLLM V1's steps that carry prompt chunks beside decodes: "
           .. "chunked_prefill = false runs none", "fa2_mixed without chunked prefill: refused",
         true)
t.ok(pcall(gp.infer, t.with(q, { fa2_mixed = false, chunked_prefill = false })),
     "fa2_mixed = false without chunked prefill: true of such steps, taken")

-- paged_decode puts every decode on vLLM's PagedAttention kernel (per
-- query head in any step): the default is off there and unsaid, the same
-- throughput as before, and a stated
-- fa2_mixed, either value, is refused (it changed nothing).
do
  local p = { model = "llama3-8b", gpu = "a100-sxm-80gb", runtime = "vllm", paged_decode = true }
  local r = gp.infer(p)
  t.ok(not said(r, "fa2_mixed"), "paged_decode: no fa2_mixed note, its own kernel")
  -- every decode read per query head either way: the default's own
  -- FA2 reads (paged_decode off, fa2_mixed on) price the mixed steps as
  -- paged_decode does; only its decode-only steps read more
  t.ok(r.tokens_per_s <= gp.infer(t.with(p, { paged_decode = false })).tokens_per_s,
       "paged_decode: no faster than the FA2 default")
  for _, v in ipairs { true, false } do
    t.raises(function() gp.infer(t.with(p, { fa2_mixed = v })) end,
             "fa2_mixed = " .. tostring(v) .. " says how FlashAttention-2 reads a mixed step's "
               .. "decodes; paged_decode runs every decode on vLLM's PagedAttention kernel",
             "fa2_mixed = " .. tostring(v) .. " with paged_decode: refused", true)
  end
end

-- A V0 release (vllm_version) runs a step's decodes in a FlashAttention
-- call of their own: fa2_mixed = true beside it is refused (it priced V1's
-- call there); false is what that release does, taken.
t.raises(function() gp.infer(t.with(q, { vllm_version = "0.6.3", sampling = "random",
                                          fa2_mixed = true })) end,
         "fa2_mixed = true prices vLLM V1's one varlen call of a mixed step; vllm_version 0.6.3 "
           .. "names a V0 release", "fa2_mixed = true with a V0 release: refused", true)
t.ok(pcall(gp.infer, t.with(q, { vllm_version = "0.6.3", sampling = "random", fa2_mixed = false })),
     "fa2_mixed = false with a V0 release: taken")

-- The validation predictor's vLLM V0 turns chunked prefill on for a
-- context over 32K (chunked_prefill = true, a 512-token budget); V0's
-- decodes run in a FlashAttention call of their own, so on an A100 the
-- case states fa2_mixed = false (the stated chunking would now turn the
-- V1 default on).  OCI's 405B MI300X row (vLLM of 2024-10, 16 requests)
-- moved to an A100.
do
  local validate = require "gpuplan.validate"
  local cat = gp.catalog()
  local base
  for _, c in ipairs(validate.read("validation/cases.json")) do
    if c.id == "oci-vllm-llama31-405b-mi300x-tp8-fp8-128-128-bs16" then base = c end
  end
  local copy = t.copy
  local c = copy(base)
  c.id, c.hardware.gpu = "oci-405b-on-a100", "a100-sxm-80gb"
  local r = validate.predict(c, cat)
  t.ok(r.defaults:find("vLLM V0 turns chunked prefill on", 1, true), "V0 long-context chunking")
  local script = validate.explain(c, cat, r)
  t.ok(script:find("fa2_mixed = false,", 1, true), "the V0 case states fa2_mixed = false")
  -- the script is the prediction's own job (equal to rounding: 1e-9), and
  -- the same job with FA2's mixed reads prices slower: the guard matters
  local run = function(src)
    local f = assert(load(src, "=explain", "t", setmetatable({ print = function() end }, { __index = _G })))
    return f().tokens_per_s
  end
  local with_fa2 = run(script:gsub("fa2_mixed = false,", "fa2_mixed = true,"))
  t.ok(math.abs(run(script) - r.predicted) < 1e-9 * r.predicted and with_fa2 < r.predicted,
       string.format("V0: %.4g tok/s, not V1's mixed FA2 reads (%.4g)", r.predicted, with_fa2))
end

t.done_testing()
