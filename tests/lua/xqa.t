-- TensorRT-LLM without XQA (gp.infer xqa = false, engine/infer.c
-- mmha_decode): the masked MHA kernel runs one thread block per query
-- head, each reading its KV head's whole cache, so a GQA model's decode
-- attention reads the cache heads/kv_heads times, multiplied on the fp32
-- vector units; prefill, MHA models and other runtimes are untouched or
-- refused.  And the validation predictor's release rule (predict/infer.lua,
-- TensorRT-LLM profile): before 0.6 a GQA run is priced without XQA.
local t = require "tap"
local gp = require "gpuplan"
local infer = require "gpuplan.infer"

local function run(extra)
  local a = { model = "llama2-70b", gpu = "h200-sxm", weights = "fp8", kv = "fp8",
              runtime = "trtllm", batch = 64, input = 128, output = 2048 }
  for k, v in pairs(extra or {}) do a[k] = v end
  return infer.infer(a)
end
local row = t.op    -- a phase's op row by name (tap.lua)
local function said(r, pat)
  for _, d in ipairs(r.defaults) do if d:find(pat, 1, true) then return true end end
  return false
end

-- Llama 2 70B (64 query heads, 8 KV heads of 128, 80 layers) on one H200,
-- FP8 KV, a decode step of 64 sequences at context ctx (the decode
-- phase's, q = 1, so the mean KV length is ctx).  One layer's attention
-- moves Q in and O out, 64 x 64 x (128 + 128) x 2 B = 2,097,152 B, and
-- the cache: K and V of 8 heads of 128 at 1 B, 2048 B a token, 64 x ctx x
-- 2048 B with XQA; without it each of the 8 query heads of a group reads
-- it again: 8 x 64 x ctx x 2048 B.  Exact (1e-9 relative): the same sum.
local on, off = run(), run { xqa = false }
local ctx = off.decode.ctx
t.is(on.decode.ctx, ctx, "the same decode context with and without XQA")
local act = 64 * 64 * 256 * 2
local a_on, a_off = row(on.decode, "attention"), row(off.decode, "attention")
t.near(a_on.bytes, act + 64 * ctx * 2048, 1e-9, "XQA: the cache read once a step")
t.near(a_off.bytes, act + 8 * 64 * ctx * 2048, 1e-9,
       "no XQA: the cache read 8 times (64 query heads / 8 KV heads)")
t.is(a_off.flop, a_on.flop, "... the same FLOP (already counted per query head)")
-- The masked MHA kernel's dot products are FMAs on the CUDA cores: the
-- H200's fp32 vector peak, 67 TFLOP/s (catalog h200-sxm), not a tensor
-- rate; XQA's tensor-core path runs above it.
t.near(a_off.compute_rate, 67e12, 1e-9, "no XQA: attention on the fp32 vector units")
t.ok(a_on.compute_rate > 67e12, "... XQA on the tensor cores")
t.is(a_off.bound, "memory", "... and memory-bound (2 FLOP per cache byte read)")
-- Only the attention moves: the step's GPU time grows by the 80 layers'
-- attention difference and nothing else (1e-12 s: float sums).
t.near(off.decode.gpu_time - on.decode.gpu_time, a_off.total - a_on.total, 1e-12,
       "only the decode attention changes")
t.ok(off.tokens_per_s < on.tokens_per_s / 1.5, "... a long decode runs well under half as fast")
-- The prompt's attention runs the context kernel (FMHA), not the masked
-- MHA kernel: the prefill phase is the same to the byte.
t.is(row(off.prefill, "attention").bytes, row(on.prefill, "attention").bytes,
     "prefill attention untouched")
t.ok(said(off, "xqa=false: TensorRT-LLM's masked MHA kernel, one thread block a query head: "
          .. "the KV cache read 8 times a decode step (8 query heads a KV head)"),
     "the defaults line says the kernel and the factor")
t.ok(not said(on, "xqa"), "with XQA (the default) nothing is said")

-- The group on a rank is its query heads over its KV heads, a KV head
-- replicated where there are fewer than TP ranks (model_kv_heads_rank): a
-- model of 32 query heads and 2 KV heads (head 128) at TP 4 holds 32 / 4 =
-- 8 query heads and 1 KV head a rank, so 8, not the model's 16.  Its
-- attention's Q and O: 16 x 8 x 256 x 2 B; the cache part 8 times XQA's.
local gqa2 = { layers = 32, hidden = 4096, heads = 32, kv_heads = 2, ffn_hidden = 14336,
               ffn_gated = true, vocab = 32000 }
local t4 = run { model = gqa2, gpus = 4, tp = 4, batch = 16 }
local t4n = run { model = gqa2, gpus = 4, tp = 4, batch = 16, xqa = false }
local b4, b4n = row(t4.decode, "attention"), row(t4n.decode, "attention")
local act4 = 16 * 8 * 256 * 2
t.near(b4n.bytes - act4, 8 * (b4.bytes - act4), 1e-9,
       "TP 4 over 2 KV heads: a KV head a rank serves 8 query heads, the cache read 8 times")
t.ok(said(t4n, "read 8 times a decode step (8 query heads a KV head)"),
     "... as the defaults line says")

-- The note says the factor the engine priced (its result's kv_reads,
-- engine/infer.c infer_kv_reads), not a rule of its own: Llama 2 70B (64
-- query heads, 8 KV heads of 128) on GB200 NVL72 (one NVLink domain, so TP
-- 16 is a TP group), 16 sequences.  A rank holds 64 / tp query heads and
-- max(1, 8 / tp) KV heads (a KV head replicated past 8 ranks): the group
-- is 64/8 = 8 at TP 1, 32/4 = 8 at TP 2, 8/1 = 8 at TP 8, 4/1 = 4 at TP 16.
-- The attention's Q and O per layer: 16 x (64 / tp) x (128 + 128) x 2 B;
-- the rest of its bytes is the cache, read kv_reads times without XQA.
-- Exact (1e-9 relative): the same sums.
for _, c in ipairs { { 1, 8 }, { 2, 8 }, { 8, 8 }, { 16, 4 } } do
  local tp, group = c[1], c[2]
  local sys = { model = "llama2-70b", gpu = "gb200", system = "gb200-nvl72", gpus = tp,
                tp = tp, batch = 16 }
  local x = run(sys)
  sys.xqa = false
  local nx = run(sys)
  local n
  for _, d in ipairs(nx.defaults) do
    n = n or tonumber(d:match("^xqa=false: .*the KV cache read (%S+) times a decode step %(%1 query heads a KV head%)"))
  end
  local ax, anx = row(x.decode, "attention"), row(nx.decode, "attention")
  local actp = 16 * (64 / tp) * 256 * 2
  t.is(n, group, string.format("TP %d: the note says %d query heads a KV head", tp, group))
  t.near((anx.bytes - actp) / (ax.bytes - actp), n or 0, 1e-9 * group,
         string.format("TP %d: ... and the decode attention is priced reading the cache that "
                       .. "many times", tp))
end

-- MHA (Llama 2 13B: 40 heads, 40 KV heads): a group of one reads the
-- cache once either way, so nothing moves.
local m_on = run { model = "llama2-13b" }
local m_off = run { model = "llama2-13b", xqa = false }
t.is(m_off.tokens_per_s, m_on.tokens_per_s, "MHA: the same throughput without XQA")
t.ok(said(m_off, "xqa=false: no change for a model of one query head a KV head (MHA)"),
     "... and the defaults line says why")

-- Refused: another runtime (XQA is TensorRT-LLM's), a non-boolean, a
-- latent (MLA) cache, the MoE serving model's own steps.
t.raises(function() run { runtime = "vllm", xqa = false } end,
         "xqa = false picks TensorRT%-LLM's generation attention.*runtime trtllm only %(got runtime vllm%)",
         "xqa on vLLM: refused")
t.raises(function() run { runtime = "graphs", xqa = true } end,
         "runtime trtllm only %(got runtime graphs%)", "xqa on the plain graphs runtime: refused")
t.raises(function() run { xqa = "no" } end, "xqa must be true or false", "xqa not a boolean: refused")
t.raises(function() run { model = "deepseek-v3", gpus = 8, tp = 8, xqa = false } end,
         "latent %(MLA%) cache is not modelled", "xqa = false on an MLA model: refused")
t.raises(function() run { model = "deepseek-v3", gpus = 16, ep = 16, xqa = false } end,
         "the MoE serving model (chosen by ep = 16) prices its own attention",
         "xqa = false with the MoE serving model: refused, naming what chose it", true)

-- The predictor's TensorRT-LLM release rule.  XQA reached the main branch
-- on 2023-12-01 (version 0.6.0) behind TRTLLM_ENABLE_XQA and was on by
-- default from 0.8: a release before 0.6, or a run of no release dated
-- before 2023-12-01, is priced without it on a GQA model; 0.7 (the
-- Falcon180B-H200 blog's v0.7a, XQA's own figure) keeps it; an MHA model
-- is left alone.
do
  local predict = require "gpuplan.predict.infer"
  -- (the MHA variant at batch 8: 64 of its 1.3 MB-a-token sequences
  -- would not fit)
  local function case(src, kv_heads, fw)
    local b = kv_heads and 8 or 64
    return { model = { layers = 80, hidden = 8192, heads = 64, kv_heads = kv_heads or 8,
                       ffn_hidden = 28672, ffn_gated = true, vocab = 32000 },
             hardware = { gpu = "h200-sxm", gpus = 1 }, parallel = { tp = 1 },
             workload = { weight_dtype = "fp8", batch = b, input_len = 128, output_len = 2048,
                          num_requests = b, framework = fw or "trtllm" },
             measured = { metric = "output_tokens_per_s" },
             source = src }
  end
  local function off(src, kv_heads, fw)
    local r, why = predict(case(src, kv_heads, fw), gp.catalog())
    assert(r, why)
    for _, d in ipairs(r.defaults) do
      if d:find("xqa=false (TensorRT-LLM before 0.6", 1, true) then return true, r.value end
    end
    return false, r.value
  end
  local title = "TensorRT-LLM H200 blog"
  local v05, p05 = off { title = title, version = "0.5.0" }
  local v07, p07 = off { title = title, version = "0.7.0" }
  t.ok(v05 and not v07, "0.5.0: no XQA; 0.7.0: XQA")
  -- One entry says it: the profile's reason joined to gp.infer's note (the
  -- kernel, and the 8 reads of 64 query heads over 8 KV heads), not two
  -- entries each saying xqa=false.
  do
    local r = assert(predict(case { title = title, version = "0.5.0" }, gp.catalog()))
    local said = {}
    for _, d in ipairs(r.defaults) do
      if d:find("xqa", 1, true) then said[#said + 1] = d end
    end
    t.ok(#said == 1 and said[1]:find("xqa=false (TensorRT-LLM before 0.6: no XQA kernel): "
           .. "TensorRT-LLM's masked MHA kernel", 1, true)
         and said[1]:find("read 8 times a decode step", 1, true),
         "the reason and the engine's note in one defaults entry")
  end
  t.ok(p05 < p07 / 1.5, "... and 0.5.0's long decode is priced well under 0.7.0's")
  t.ok(not (off({ title = title, version = "0.5.0" }, 64)), "an MHA model keeps its price")
  t.ok(off { title = title, date = "2023-11-15" }, "no release, dated 2023-11-15: no XQA")
  t.ok(not off { title = title, date = "2023-12-15" }, "no release, dated 2023-12-15: XQA")
  t.ok(not off { title = title }, "neither release nor date: XQA")
  t.ok(off { title = title, version = "v0.5.0" }, "a release written v0.5.0 is 0.5.0: no XQA")
  t.ok(off { title = title, version = "main", date = "2023-11-15" },
       "a version that is no release: the date says (before 2023-12-01: no XQA)")
  t.ok(not off({ title = "vLLM benchmark_throughput.py", version = "0.2.1" }, nil, "vllm"),
       "the rule is TensorRT-LLM's alone")
end

-- The predictor's XQA shape rule (predict/infer.lua, TensorRT-LLM
-- profile): a release from 0.6 to 0.10 ran XQA only where its runner's
-- support test passed -- 0.10.0.dev2024043000's DecoderXQARunner::shouldUse,
-- "head_size != 128 && head_size != 256" and "nbQHeadsPerKV != 8 &&
-- nbQHeadsPerKV != 1" refused, nbQHeadsPerKV one rank's query heads over
-- its KV heads -- and a GQA model of any other shape decoded on the masked
-- MHA kernel.  Each case below changes one thing from the 70B-like model
-- above (80 layers, hidden 8192, FP8 on one H200).
do
  local predict = require "gpuplan.predict.infer"
  local function case(version, heads, kv_heads, tp)
    tp = tp or 1
    -- (the MHA variant at batch 8, as above: 64 would not fit)
    local b = heads == kv_heads and 8 or 64
    return { model = { layers = 80, hidden = 8192, heads = heads, kv_heads = kv_heads,
                       ffn_hidden = 28672, ffn_gated = true, vocab = 32000 },
             hardware = { gpu = "h200-sxm", gpus = tp }, parallel = { tp = tp },
             workload = { weight_dtype = "fp8", batch = b, input_len = 128, output_len = 2048,
                          num_requests = b, framework = "trtllm" },
             measured = { metric = "output_tokens_per_s" },
             source = { title = "TensorRT-LLM performance overview", version = version } }
  end
  -- the defaults entry that says the shape rule priced it, or nil
  local function shape(...)
    local r, why = predict(case(...), gp.catalog())
    assert(r, why)
    for _, d in ipairs(r.defaults) do
      if d:find("XQA runs 8 query heads a KV head", 1, true) then return d end
    end
  end
  -- 64 query heads over 8 KV heads, head size 8192 / 64 = 128: XQA's shape
  t.is(shape("0.10.0", 64, 8), nil, "0.10.0, 8 query heads a KV head at head size 128: XQA")
  -- 64 over 16: 4 a KV head (Mixtral's and Mistral's group)
  local g4 = shape("0.10.0", 64, 16)
  t.ok(g4 and g4:find("xqa=false (TensorRT-LLM 0.10.0: XQA runs 8 query heads a KV head at "
         .. "head size 128 or 256 only; this model has 4 query heads a KV head at head size "
         .. "128): TensorRT-LLM's masked MHA kernel", 1, true)
       and g4:find("the KV cache read 4 times a decode step", 1, true),
       "0.10.0, 4 query heads a KV head: the masked MHA kernel, the cache read 4 times")
  -- 128 over 16: a group of 8, but head size 8192 / 128 = 64 (Falcon 180B's)
  local h64 = shape("0.10.0", 128, 16)
  t.ok(h64 and h64:find("this model has 8 query heads a KV head at head size 64)", 1, true),
       "0.10.0, head size 64: the masked MHA kernel though the group is 8")
  -- the group is a rank's: 64 query heads over 4 KV heads is 16 on one GPU
  -- but at TP 8 a rank holds 64 / 8 = 8 query heads and one (replicated)
  -- KV head, 8 a KV head: XQA's shape
  t.ok(shape("0.10.0", 64, 4, 1), "64 over 4 KV heads on one GPU: 16 a KV head, no XQA")
  t.is(shape("0.10.0", 64, 4, 8), nil, "... at TP 8, 8 a KV head on a rank: XQA")
  t.ok(shape("0.7.0", 64, 16), "0.7.0 (XQA's first releases): the same test")
  t.is(shape("0.11.0", 64, 16), nil, "after 0.10 (not read): left to XQA")
  t.is(shape(nil, 64, 16), nil, "no release: left to XQA")
  t.is(shape("0.10.0", 64, 64), nil, "MHA: one query head a KV head reads the cache once")
  -- before 0.6 the no-XQA rule says it, not this one
  t.is(shape("0.5.0", 64, 16), nil, "0.5.0: the no-XQA-kernel rule, not the shape rule")
end

t.done_testing()
