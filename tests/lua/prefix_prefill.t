-- vLLM V0's Triton prefix-prefill kernel for the prompt chunks (gp.infer
-- prefix_prefill, engine/infer.c fa2_prompt_nosplit, roof_op.no_split):
-- context_attention_fwd launches "grid = (batch, head,
-- triton.cdiv(max_input_len, BLOCK))" with BLOCK = 128, and each program
-- walks all the keys before its query block, so the keys are never split
-- and a chunk with few query heads a GPU leaves most compute units idle.
-- The validate predictor turns it on where V0's ROCm backend runs it: a
-- vLLM V0 case on an AMD card with chunked prefill on.
-- Run with ./gpuplan run tests/lua/prefix_prefill.t.
local t = require "tap"
local gp = require "gpuplan"
local predict = require "gpuplan.predict.infer"

local function attn(r) return assert(t.op(r.prefill, "attention"), "no attention row") end

-- Llama 3.1 405B at TP 8 on MI300X: 128 query heads / 8 = 16 a GPU, 8 KV
-- heads / 8 = 1 a GPU.  A prompt of 65024 tokens whose first 64512 come
-- from the prefix cache leaves 512 new ones: one 512-token chunk, as V0's
-- 512-token budget cuts a long prompt.  Its attention is one GEMM-like op
-- (model_ops.c op_attn, GQA packed): m = 512 x 16 = 8192 rows, n = 128,
-- k = 64512 cached keys + the chunk's causal mean, count = 1 KV head.
-- Tiles: 8192 / 128 = 64 (n one tile) -- the kernel's 16 heads x 4
-- query blocks of 128.  Without a split they run in ceil(64 / 304) = 1
-- wave on the 304 CUs: 64 / 304 busy; the K loop's fill is past the
-- reference depth (roofline.c wave_eff: min(1, k_fill(k) / k_fill(8192))
-- = 1 for k > 8192), so the shape factor is 64 / 304 = 0.2105263.
-- 1e-9 relative: the same arithmetic in C.
local q = { model = "llama3.1-405b", gpu = "mi300x", gpus = 8, tp = 8, input = 65024,
            output = 150, prefix_hit = 64512 / 65024, runtime = "vllm",
            chunked_prefill = true, max_num_tokens = 512, max_batch = 256, requests = 1 }
local on, off = gp.infer(t.with(q, { prefix_prefill = true })), gp.infer(q)
t.near(attn(on).shape_eff, 64 / 304, 1e-9,
       "405B TP 8 on MI300X, a 512-token chunk after 64512 cached keys: 64 programs, 64/304 CUs")
-- Without it the library reading may split the 64.5K keys to fill the
-- CUs (wave_eff's best split-K): a much higher shape factor.
t.ok(attn(off).shape_eff > 0.8, "prefix_prefill off: the split-K reading fills the CUs")
t.is(attn(on).flop, attn(off).flop, "the attention's FLOP do not move")
t.ok(on.ttft_s > off.ttft_s, "... the chunk's attention takes longer: TTFT up")
-- The decode steps are untouched (the kernel runs prompt tokens only).
t.is(on.decode.gpu_time, off.decode.gpu_time, "decode step unchanged")

-- Many query heads a GPU fill the CUs without a split: Llama 3.1 70B on one
-- MI300X (64 query heads, 8 KV heads: m = 512 x 8 = 4096 rows a KV head,
-- 32 tiles x 8 = 256 programs, one wave of 304, 256 / 304 = 0.842).
local l70 = t.with(q, { model = "llama3.1-70b", gpus = 1, tp = 1, input = 8704,
                        prefix_hit = 8192 / 8704, prefix_prefill = true })
t.near(attn(gp.infer(l70)).shape_eff, 256 / 304, 1e-9,
       "Llama 3.1 70B TP 1: 256 programs, 256/304 CUs")

-- Refusals: another runtime's steps, or no chunked prefill (V0 then
-- prefills whole prompts on its flash-attention kernel).
t.raises(function() gp.infer(t.with(q, { runtime = "sglang", prefix_prefill = true })) end,
         "prefix_prefill = true picks vLLM V0's prompt-chunk attention kernel: --runtime vllm only",
         "another runtime: refused", true)
local whole = t.with(q, { chunked_prefill = false, prefix_prefill = true })
whole.max_num_tokens = nil
t.raises(function() gp.infer(whole) end, "chunked_prefill = false prefills whole prompts",
         "no chunked prefill: refused", true)

-- The validate predictor: a vLLM 0.6.3 case of a 128K-context model on
-- MI300X (V0 turns chunked prefill on, ROCm until vllm PR #11146) takes
-- it; the same case on an H200 (V0's FLASH_ATTN backend, flash-attn's
-- varlen kernel) does not, nor an MI300X case from 0.6.5 (no chunked
-- prefill by default on ROCm).
local function case(gpu, ver)
  return { model = { layers = 126, hidden = 16384, heads = 128, kv_heads = 8, head_dim = 128,
                     ffn_hidden = 53248, ffn_gated = true, vocab = 128256, max_seq = 131072 },
           hardware = { gpu = gpu, gpus = 8 }, parallel = { tp = 8 },
           workload = { framework = "vllm", weight_dtype = "bf16", input_len = 10000,
                        output_len = 150, num_requests = 1 },
           measured = { metric = "output_tokens_per_s" },
           source = { title = "vLLM serving", version = ver } }
end
local PP = "prefix_prefill (vLLM V0 on ROCm"
t.ok(t.said(predict(case("mi300x", "0.6.3"), gp.catalog()), PP, true), "vLLM 0.6.3 on MI300X: on")
t.ok(not t.said(predict(case("h200-sxm", "0.6.3"), gp.catalog()), PP, true), "... not on an H200")
t.ok(not t.said(predict(case("mi300x", "0.6.5"), gp.catalog()), PP, true),
     "... not on MI300X from 0.6.5 (chunked prefill off by default there)")

t.done_testing()
