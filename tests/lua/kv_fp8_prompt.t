-- A prompt's attention over an FP8 KV cache under vLLM's FlashAttention-3
-- on Hopper (infer_cfg.kv_fp8_prompt_x, lua/gpuplan/infer.lua
-- M.kv_fp8_prompt_x): the fork's two-level FP8 accumulation holds the
-- prefill kernel at the 16-bit rate up to head dim 128 (vllm-project/
-- flash-attention PR #122's table: head dim 128, 684.11 against 737.22
-- and 684.83 against 695.77 TFLOP/s; the vLLM FP8 KV-cache post's
-- "slight TTFT speedups" after the retuning) and at half of it above
-- (head dim 256: 278.25 against 557.51).  Before, the prompt's attention
-- ran at the FP8 tensor rate, 1.78x the 16-bit one.  Decode steps keep
-- their rate (the cache's bytes halve).  Both serving paths: gp.infer's
-- dense step (infer.c, roof_op.bf16_x) and the MoE serving step
-- (serve_row.c sx_attn_row).
-- Run: ./gpuplan run tests/lua/kv_fp8_prompt.t
local t = require "tap"
local gp = require "gpuplan"
t.plan(7)

-- Llama 3.1 8B's shape (meta-llama/Llama-3.1-8B config.json), head dim
-- 128; wide: the same layer count at 16 heads of 256 (head dim 256).
local function llama(wide)
  return { layers = 32, hidden = 4096, heads = wide and 16 or 32, kv_heads = 8,
           head_dim = wide and 256 or 128, ffn_hidden = 14336, ffn_gated = true,
           vocab = 128256, max_seq = 131072 }
end
-- One prompt of 8192 tokens on one H100, one stream: its prefill's
-- attention row (prefill.ops "attention") and the result.
local function prompt_attn(kv, runtime, wide)
  local r = assert(gp.infer{ model = llama(wide), gpu = "h100-sxm", gpus = 1, tp = 1,
                             runtime = runtime, kv = kv, input = 8192, output = 2, batch = 1 })
  return t.op(r.prefill, "attention"), r
end

-- 1. Head dim 128 under vLLM: the FP8 prompt attention is held to 1.0 x
-- the 16-bit rate at the same shape (the cap is kv_fp8_prompt_x x peak
-- bf16 x the bf16 GEMM fraction x the op's shape efficiency, the very
-- product the bf16 row computes at): the two rows' rates are equal.
-- Tolerance 1e-9: the same arithmetic on the same shape.
local a16, r16 = prompt_attn("bf16", "vllm")
local a8, r8 = prompt_attn("fp8", "vllm")
t.near(a8.compute_rate, a16.compute_rate, 1e-9,
       string.format("vLLM FA3, head dim 128: FP8 prompt attention at the bf16 rate (%.1f TFLOP/s)",
                     a16.compute_rate / 1e12))

-- 2. Said on the defaults line, and only with an FP8 cache.
t.ok(t.said(r8, "FP8 prompt attention at 1x the 16-bit rate", true) and
     not t.said(r16, "FP8 prompt attention", true),
     "the defaults line says the FP8 prompt attention's rate with kv fp8 alone")

-- 3. Without the accumulation (TensorRT-LLM's FP8 context FMHA, no cap)
-- the prompt attention keeps the FP8 tensor rate: H100 SXM peak fp8 1979
-- / bf16 989 TFLOP/s times the hopper GEMM fractions 0.71 / 0.80 =
-- 1.776 (the sustained clock factor multiplies both peaks alike and the
-- shape efficiency is the same op's).  Tolerance 1e-3: the catalog's
-- peaks are 1979 and 989 to four figures.
local t16 = prompt_attn("bf16", "trtllm")
local t8 = prompt_attn("fp8", "trtllm")
t.near(t8.compute_rate / t16.compute_rate, 1979 / 989 * 0.71 / 0.80, 1e-3,
       string.format("TensorRT-LLM, head dim 128: FP8 prompt attention at %.3f x bf16",
                     t8.compute_rate / t16.compute_rate))

-- 4. Head dim 256 under vLLM: 0.50 x the 16-bit rate (PR #122's 278.25 /
-- 557.51 = 0.499, kept as 0.50).  Tolerance 1e-9 as in 1.
local w16 = prompt_attn("bf16", "vllm", true)
local w8 = prompt_attn("fp8", "vllm", true)
t.near(w8.compute_rate / w16.compute_rate, 0.50, 1e-9,
       "vLLM FA3, head dim 256: FP8 prompt attention at 0.50 x bf16")

-- 5. The decode step keeps the FP8 cache's gain: its attention row is
-- memory-bound at one stream, a layer reading 8193 keys x 8 KV heads x
-- 128 x (K, V) = 33.6 MB at 2 bytes, 16.8 MB at 1, at about 2.65 TB/s
-- (12.7 and 6.3 us), plus about 4.9 us a layer of launch and pipeline
-- fill alike: FP8 / bf16 = 11.2 / 17.6 = 0.64.  Asserted under 0.7 (the
-- streaming rate and the query's traffic move it by a few points); a cap
-- on the decode too would have left it at 1.
local d16, d8 = t.op(r16.decode, "attention"), t.op(r8.decode, "attention")
t.ok(d8.total < 0.7 * d16.total,
     string.format("decode attention: FP8 %.3f ms, bf16 %.3f ms (%.2f)", d8.total * 1e3,
                   d16.total * 1e3, d8.total / d16.total))

-- 6-7. The MoE serving step (gpt-oss-20b's shape, openai/gpt-oss-20b
-- config.json: head dim 64, MXFP4 experts) takes the same cap on its
-- prompt chunk's attention row (serve_row.c sx_attn_row: kv_fp8_prompt_x
-- x peak bf16 x the FA3 fraction x the shape term, the bf16 row's
-- product): equal rates, tolerance 1e-9.  Its decode row keeps the FP8
-- gain, under 0.7 of bf16's as in 5 (memory-bound at one stream, the
-- fixed launch and fill alike in both).
local function oss(kv)
  return assert(gp.infer{
    model = { layers = 24, hidden = 2880, heads = 64, kv_heads = 8, head_dim = 64,
              ffn_hidden = 2880, ffn_gated = true, vocab = 201088, max_seq = 131072,
              moe = { experts = 32, top_k = 4, shared_experts = 0, ffn_hidden = 2880,
                      dense_layers = 0 } },
    gpu = "h100-sxm", gpus = 1, tp = 1, ep = 1, expert_weights = "mxfp4", runtime = "vllm",
    kv = kv, input = 20000, output = 2, concurrency = 1 })
end
local o16, o8 = oss("bf16"), oss("fp8")
local p16, p8 = t.op(o16.prefill, "attention"), t.op(o8.prefill, "attention")
t.near(p8.compute_rate, p16.compute_rate, 1e-9,
       string.format("MoE step, vLLM FA3, head dim 64: FP8 prompt attention at the bf16 rate (%.1f TFLOP/s)",
                     p16.compute_rate / 1e12))
local q16, q8 = t.op(o16.decode, "attention"), t.op(o8.decode, "attention")
t.ok(q8.total < 0.7 * q16.total,
     string.format("MoE decode attention: FP8 %.4f ms, bf16 %.4f ms", q8.total * 1e3,
                   q16.total * 1e3))

