-- vLLM's PagedAttention decode kernel (gp.infer paged_decode, engine/infer.c
-- mmha_decode, the per-query-head kernel TensorRT-LLM's xqa = false also
-- prices): paged_attention_v1/_v2 run one thread block per query head, each
-- reading its KV head's whole cache, so a GQA model's decode attention reads
-- the cache heads/kv_heads times, multiplied on the fp32 vector units;
-- prefill, MHA models and other runtimes are untouched or refused.  And the
-- validation predictor's release rule (predict/infer.lua, vLLM profile):
-- before 0.4.3 (flash-attn's decode relanded 2024-05-19) a GQA run decodes
-- on the PagedAttention kernel.
local t = require "tap"
local gp = require "gpuplan"
local infer = require "gpuplan.infer"

-- Qwen2-0.5B's attention (config.json: 14 query heads, 2 KV heads, hidden
-- 896 so head_dim 64, 24 layers), one sequence on an A100, a 30720-token
-- prompt: the Qwen2 speed benchmark's row.
local qwen05 = { layers = 24, hidden = 896, heads = 14, kv_heads = 2, ffn_hidden = 4864,
                 ffn_gated = true, vocab = 151936, tied_embeddings = true }
local function run(extra)
  local a = { model = qwen05, gpu = "a100-sxm-80gb", weights = "bf16", runtime = "vllm",
              batch = 1, input = 30720, output = 2048 }
  for k, v in pairs(extra or {}) do a[k] = v end
  return infer.infer(a)
end
local row = t.op    -- a phase's op row by name (tap.lua)
local function said(r, pat)
  for _, d in ipairs(r.defaults) do if d:find(pat, 1, true) then return true end end
  return false
end

-- One GQA decode step, by hand.  One layer's attention moves Q in and O
-- out, batch x heads x (64 + 64) x 2 B = 1 x 14 x 128 x 2 = 3,584 B, and
-- the cache: K and V of 2 KV heads of 64 at 2 B (bf16), 2 x 2 x 64 x 2 =
-- 512 B a token, ctx x 512 B with flash-attn's decode (the group folded
-- into one tile); on the PagedAttention kernel each of the 14 / 2 = 7
-- query heads of a group reads it again: 7 x ctx x 512 B.  At the decode
-- phase's mean context ctx (30720 + 2048 / 2 = 31744 tokens) that is
-- 3,584 + 16,252,928 B against 3,584 + 113,770,496 B.  Exact (1e-9
-- relative): the same sums.
local flash, paged = run(), run { paged_decode = true }
local ctx = paged.decode.ctx
t.is(flash.decode.ctx, ctx, "the same decode context on either kernel")
local a_f, a_p = row(flash.decode, "attention"), row(paged.decode, "attention")
t.near(a_f.bytes, 3584 + ctx * 512, 1e-9, "flash-attn's decode: the cache read once a step")
t.near(a_p.bytes, 3584 + 7 * ctx * 512, 1e-9,
       "PagedAttention: the cache read 7 times (14 query heads / 2 KV heads)")
t.is(a_p.flop, a_f.flop, "... the same FLOP (already counted per query head)")
-- The kernel's dot products are FMAs on the CUDA cores (qk_dot_): the
-- A100's fp32 vector peak, 19.5 TFLOP/s (catalog a100-sxm-80gb).
t.near(a_p.compute_rate, 19.5e12, 1e-9, "PagedAttention: on the fp32 vector units")
t.is(a_p.bound, "memory", "... and memory-bound (2 FLOP per cache byte read, one per query head)")
t.near(paged.decode.gpu_time - flash.decode.gpu_time, a_p.total - a_f.total, 1e-12,
       "only the decode attention changes")
t.is(row(paged.prefill, "attention").bytes, row(flash.prefill, "attention").bytes,
     "prefill attention untouched (flash-attn's prompt kernel either way)")
t.ok(said(paged, "paged_decode: vLLM's PagedAttention kernel, one thread block a query head: "
          .. "the KV cache read 7 times a decode step (7 query heads a KV head), on the CUDA cores"),
     "the defaults line says the kernel and the factor")
t.ok(not said(flash, "paged_decode"), "without it nothing is said")

-- MHA (Llama 2 13B: 40 heads, 40 KV heads): a group of one reads the
-- cache once either way, so nothing moves.
local m_f = run { model = "llama2-13b", input = 1024, output = 256 }
local m_p = run { model = "llama2-13b", input = 1024, output = 256, paged_decode = true }
t.is(m_p.tokens_per_s, m_f.tokens_per_s, "MHA: the same throughput on either kernel")
t.ok(said(m_p, "paged_decode: no change for a model of one query head a KV head (MHA): the "
          .. "PagedAttention kernel reads its cache once, as flash-attn's decode would"),
     "... and the defaults line says why")

-- Refused: another runtime (the kernel is vLLM's), a non-boolean, a latent
-- (MLA) cache, the MoE serving model's own steps.
t.raises(function() run { runtime = "trtllm", paged_decode = true } end,
         "paged_decode = true picks vLLM's decode attention.*runtime vllm only %(got runtime trtllm%)",
         "paged_decode on TensorRT-LLM: refused")
t.raises(function() run { runtime = "graphs", paged_decode = false } end,
         "runtime vllm only %(got runtime graphs%)", "paged_decode on the plain graphs runtime: refused")
t.raises(function() run { paged_decode = "yes" } end, "paged_decode must be true or false",
         "paged_decode not a boolean: refused")
t.raises(function() run { model = "deepseek-v3", gpu = "h200-sxm", gpus = 8, tp = 8, weights = "fp8",
                          input = 128, output = 128, paged_decode = true } end,
         "latent %(MLA%) cache is not modelled", "paged_decode on an MLA model: refused")
t.raises(function() run { model = "deepseek-v3", gpu = "h200-sxm", gpus = 16, ep = 16,
                          paged_decode = true } end,
         "the MoE serving model (chosen by ep = 16) prices its own attention",
         "paged_decode with the MoE serving model: refused, naming what chose it", true)

-- The predictor's vLLM release rule: flash-attn's decode relanded on
-- 2024-05-19 (vllm PR #4907); 0.4.2 (2024-05-05) decodes on the
-- PagedAttention kernel, 0.4.3 (2024-06-01) on flash-attn's.  A run of no
-- release dated before 2024-05-19 is priced on PagedAttention; an MHA
-- model is left alone; TensorRT-LLM's cases are not vLLM's.
do
  local predict = require "gpuplan.predict.infer"
  local function case(src, kv_heads, fw, input)
    src.title = src.title or "Qwen2 speed benchmark, vLLM"
    local m = {}
    for k, v in pairs(qwen05) do m[k] = v end
    m.kv_heads, m.max_seq = kv_heads or 2, 32768
    return { model = m, hardware = { gpu = "a100-sxm-80gb", gpus = 1 }, parallel = { tp = 1 },
             workload = { weight_dtype = "bf16", input_len = input or 30720, output_len = 2048,
                          concurrency = 1, num_requests = 1, framework = fw or "vllm" },
             measured = { metric = "output_tokens_per_s" },
             source = src }
  end
  local function on(src, kv_heads, fw, input)
    local r, why = predict(case(src, kv_heads, fw, input), gp.catalog())
    assert(r, why)
    for _, d in ipairs(r.defaults) do
      if d:find("paged_decode (vLLM before 0.4.3", 1, true) then return true, r.value end
    end
    return false, r.value
  end
  local v042, p042 = on { version = "0.4.2" }
  local v043, p043 = on { version = "0.4.3" }
  t.ok(v042 and not v043, "0.4.2: PagedAttention decode; 0.4.3: flash-attn's")
  -- At 30720 both releases run V0's decode off the CUDA graph (the mean
  -- context 31744 is past max_context_len_to_capture 8192: gp.infer's
  -- graph_max_context), and the 0.5B's eager step is the host's dispatch,
  -- (24 x 10 + 10) x 24.84 us = 6.21 ms, over either GPU time: the same
  -- price.  At 6144 (contexts 6144-8192, on the graph) the GPU's step
  -- shows the re-reads: a layer's cache at the mean context 7168, 2 x 2
  -- KV heads x 64 x 2 B x 7168 = 3,670,016 B, read 7 times (PagedAttention:
  -- 14 / 2 query heads a KV head) against once, so 24 x 6 x 3,670,016 =
  -- 528 MB more a step, 0.305 ms at 2.039 TB/s x 0.85.  0.4.3's request
  -- takes 8.16 s (4.0 ms a step: 2.2 ms of GPU, where the ~300 kernels'
  -- fixed costs dominate a 0.5B decode, not its ~1 GB read, and 1.78 ms
  -- of vLLM 0.4's host work, v0_step, which both releases take), so
  -- 0.4.2's takes 2047 x 0.305 ms = 0.62 s more, its tokens/s 1.076 times
  -- under.  The bound 1.05 fails a model without the re-reads (1.0) and
  -- one with half of them (1.038).
  local _, q042 = on({ version = "0.4.2" }, nil, nil, 6144)
  local _, q043 = on({ version = "0.4.3" }, nil, nil, 6144)
  t.ok(q042 < q043 / 1.05, string.format("... and 0.4.2's decode at 6144 is priced under "
    .. "0.4.3's (%.1f against %.1f tokens/s)", q042, q043))
  -- The same by the step: the request's time apart over its 2047 decode
  -- steps is the 528 MB at the HBM rate, 0.305 ms.  2%: the engine reads
  -- the cache at its attention op's own memory rate (0.86 of 2.039 TB/s
  -- on this op, not the flat 0.85: 1.1% apart).
  t.near((2048 / q042 - 2048 / q043) / 2047, 24 * 6 * 3670016 / (2.039e12 * 0.85), 0.02,
    "0.4.2's step: 6 more reads of the cache, 528 MB at the HBM rate")
  t.ok(math.abs(p042 / p043 - 1) < 1e-9, "at 30720 both run off the graph, host-bound: one price")
  -- One entry says it: the profile's reason joined to gp.infer's note.
  do
    local r = assert(predict(case { version = "0.4.2" }, gp.catalog()))
    local n = {}
    for _, d in ipairs(r.defaults) do
      if d:find("paged_decode", 1, true) then n[#n + 1] = d end
    end
    t.ok(#n == 1 and n[1]:find("paged_decode (vLLM before 0.4.3: no flash-attn decode): "
           .. "vLLM's PagedAttention kernel", 1, true)
         and n[1]:find("read 7 times a decode step", 1, true),
         "the reason and the engine's note in one defaults entry")
  end
  t.ok(not (on({ version = "0.4.2" }, 14)), "an MHA model keeps its price")
  t.ok(on { version = "0.2.1" }, "0.2.1: PagedAttention decode")
  t.ok(on { date = "2024-05-18" }, "no release, dated 2024-05-18: PagedAttention decode")
  t.ok(not on { date = "2024-05-19" }, "no release, dated 2024-05-19: flash-attn's decode")
  t.ok(not on {}, "neither release nor date: flash-attn's decode")
  t.ok(not on { version = "0.4.10" }, "0.4.10 is after 0.4.3, not before it")
  t.ok(not on({ title = "TensorRT-LLM benchmark", version = "0.4.2" }, nil, "trtllm"),
       "the rule is vLLM's alone")
end

-- The ROCm release rule (predict/infer.lua, vLLM profile): vLLM's V0 ROCm
-- backend ran flash attention on prompts only and decoded on
-- PagedAttention.forward_decode until AMD's custom paged attention came
-- upstream (vllm PR #8310, 2024-09-13, after v0.6.1): a stated release
-- before 0.6.2 on an AMD card decodes on the PagedAttention kernel.  A case
-- of no stated release on an AMD card is not placed by its date (AMD's own
-- fork had the custom kernel from 2024-05-30); an NVIDIA card of 0.6.1
-- decodes on flash-attn's.
do
  local predict = require "gpuplan.predict.infer"
  -- Llama 3 8B (config.json: 32 layers, 32 query heads, 8 KV heads of 128)
  local l3 = { layers = 32, hidden = 4096, heads = 32, kv_heads = 8, head_dim = 128,
               ffn_hidden = 14336, ffn_gated = true, vocab = 128256, tied_embeddings = false,
               max_seq = 8192 }
  local function case(gpu, src)
    return { model = l3, hardware = { gpu = gpu, gpus = 1 }, parallel = { tp = 1 },
             workload = { weight_dtype = "fp16", precision = "fp16", input_len = 6144,
                          output_len = 2048, batch = 1, num_requests = 1, framework = "vllm" },
             measured = { metric = "output_tokens_per_s" }, source = src }
  end
  local function rocm(gpu, src)
    local r, why = predict(case(gpu, src), gp.catalog())
    assert(r, why)
    for _, d in ipairs(r.defaults) do
      if d:find("paged_decode (vLLM on ROCm before 0.6.2", 1, true) then return true, r.value, d end
    end
    return false, r.value
  end
  local on061, p061, d061 = rocm("mi300x", { version = "0.6.1" })
  local on062, p062 = rocm("mi300x", { version = "0.6.2" })
  t.ok(on061 and not on062, "MI300X: 0.6.1 decodes on the PagedAttention kernel, 0.6.2 not")
  t.ok(d061 and d061:find("the KV cache read 4 times a decode step (4 query heads a KV head), "
         .. "on the vector ALUs", 1, true), "... the note says the factor and an AMD card's units")
  t.ok(not rocm("mi300x", { date = "2024-08-28" }), "no release on an AMD card: not placed by its date")
  t.ok(not rocm("a100-sxm-80gb", { version = "0.6.1" }), "0.6.1 on an NVIDIA card: flash-attn's decode")
  -- By the step: at 6144 in, 2048 out, one sequence (contexts 6144-8192,
  -- on the graph) the mean context is 7168; a layer's cache 2 x 8 KV heads
  -- x 128 x 2 B = 4096 B a token, read 32 / 8 = 4 times against once: 3
  -- more reads x 32 layers x 7168 x 4096 B = 2.82 GB a step, 0.626 ms at
  -- 5.3 TB/s x 0.85.  3%: the engine reads the cache at its attention op's
  -- own memory rate, 2.2% above the flat 0.85 here; a model with half the
  -- re-reads is 50% off.  0.6.1 also builds on ROCm 6.1, whose HIP replays
  -- the decode graph node by node (graph_per_node, tests/lua/
  -- graph_per_node.t): the step's 9 x 32 + 4 = 292 kernels at the CDNA 3
  -- stream launch (4 us), not its graph launch (1 us), 0.876 ms more.
  t.near((2048 / p061 - 2048 / p062) / 2047,
    3 * 32 * 7168 * 4096 / (5.3e12 * 0.85) + 292 * 3e-6, 0.03,
    "0.6.1's step on MI300X: 3 more reads of the cache at the HBM rate, 292 stream launches")
end

t.done_testing()
