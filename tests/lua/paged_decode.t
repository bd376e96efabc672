-- vLLM's PagedAttention decode kernel (gp.infer paged_decode, engine/infer.c
-- mmha_decode, the per-query-head kernel TensorRT-LLM's xqa = false also
-- prices): paged_attention_v1/_v2 run one thread block per query head, each
-- reading its KV head's whole cache, so a GQA model's decode attention reads
-- the cache heads/kv_heads times, multiplied on the fp32 vector units;
-- prefill, MHA models and other runtimes are untouched or refused.
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
local function row(phase, name)
  for _, o in ipairs(phase.ops) do if o.name == name then return o end end
end
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
t.near(a_f.bytes, 3584 + ctx * 512, 1e-9 * a_f.bytes, "flash-attn's decode: the cache read once a step")
t.near(a_p.bytes, 3584 + 7 * ctx * 512, 1e-9 * a_p.bytes,
       "PagedAttention: the cache read 7 times (14 query heads / 2 KV heads)")
t.is(a_p.flop, a_f.flop, "... the same FLOP (already counted per query head)")
-- The kernel's dot products are FMAs on the CUDA cores (qk_dot_): the
-- A100's fp32 vector peak, 19.5 TFLOP/s (catalog a100-sxm-80gb).
t.near(a_p.compute_rate, 19.5e12, 1e-9 * 19.5e12, "PagedAttention: on the fp32 vector units")
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

t.done_testing()
