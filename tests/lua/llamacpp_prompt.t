-- llama.cpp's prompt path as its May 2024 build (b2824) ran it
-- (lua/gpuplan/infer.lua M.wo_unfused_above, M.ubatch, M.score_bytes):
-- quantized linears of a step above MMQ_MAX_BATCH_SIZE (32) tokens are
-- dequantised to F16 by a kernel of their own before cuBLAS (engine
-- infer.c wo_unfused_above); with FlashAttention off each score element
-- moves 24 bytes over every key of the ubatch's context (infer.c
-- unfused_scores, scores_whole); a prompt runs as n_ubatch (512) graphs,
-- the ubatches of each n_batch (2048) call pipelined over a layer split
-- (infer_run.c ubatch_ttft).
-- The byte counts are exact products of the engine's own: tap's near
-- takes a relative tolerance, 1e-9 (a tolerance of 1 let a 16-byte
-- score or a 2-byte compute buffer pass).
-- Run with ./gpuplan run tests/lua/llamacpp_prompt.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(16)

-- Llama 3 8B's shape (the llama-bench cases' model).
local M = { ffn_gated = true, ffn_hidden = 14336, head_dim = 128, heads = 32, hidden = 4096,
  id = "llama3-8b-test", kv_heads = 8, layers = 32, norm = "rms", split_proj = "both",
  tied_embeddings = false, vocab = 128256 }

local function run(x)
  return gp.infer(t.with({ gpu = "rtx-4090", output = 2, concurrency = 1, model = M,
                           runtime = "llama.cpp" }, x))
end
local function op(r, phase, name)
  for _, o in ipairs(r[phase].ops) do if o.name == name then return o end end
end

-- A 512-token prompt at 4.9 bits a weight: each linear's weights pass
-- through wo_dequant, read at 4.9 / 8 B and written at 2 B: qkv's
-- 4096 x (32 + 2 x 8) x 128 = 25,165,824 weights x (0.6125 + 2) =
-- 65,745,715.2 B a layer (exact: the engine's own product).
local q = run { input = 512, weights = 4.9 }
local d = op(q, "prefill", "wo_dequant")
t.ok(d ~= nil, "512 tokens > MMQ_MAX_BATCH_SIZE: dequantize + cuBLAS")
t.near(d and d.bytes or 0, 25165824 * (4.9 / 8 + 2), 1e-9, "qkv's dequant: weights x (bits/8 + 2) B")
-- The bound itself: "#define MMQ_MAX_BATCH_SIZE 32" -- 32 tokens stay on
-- MMQ, 33 leave it for dequantize + cuBLAS.
t.is(op(run { input = 32, weights = 4.9 }, "prefill", "wo_dequant"), nil,
     "32 tokens = MMQ_MAX_BATCH_SIZE: MMQ, no dequant pass")
t.ok(op(run { input = 33, weights = 4.9 }, "prefill", "wo_dequant") ~= nil,
     "33 tokens: dequant pass")
-- A one-sequence decode step (1 token <= 32): MMVQ/MMQ, no pass.
t.is(op(q, "decode", "wo_dequant"), nil, "decode of one sequence: no dequant pass")
-- The generic kernels runtime keeps the mainloop dequantisation.
t.is(op(run { input = 512, weights = 4.9, runtime = "kernels" }, "prefill", "wo_dequant"), nil,
     "runtime kernels: no dequant pass")

-- FlashAttention off, 512 tokens (one ubatch, keys 512 whole): the
-- attention op's bytes a layer = act x 2 + cache reads:
--   q, k, v, out: 512 x 32 x (128 + 128) elements x 2 B = 8,388,608
--   scores: 24 B x 32 heads x 512 x 512 = 201,326,592
--   cache: 512 keys x 2 x 8 x 128 elements x 2 B = 2,097,152
-- = 211,812,352 (exact).
local nf = run { input = 512, weights = "fp16", flash = false }
t.near(op(nf, "prefill", "attention").bytes, 8388608 + 201326592 + 2097152, 1e-9,
       "unfused llama.cpp scores: 24 B each over the whole context")
-- With flash (the default) no score traffic: 8,388,608 + the causal
-- mean's cache, (512 - 511/2) x 4096 B = 1,050,624.
t.near(op(run { input = 512, weights = "fp16" }, "prefill", "attention").bytes,
       8388608 + 256.5 * 4096, 1e-9, "flash: no scores, causal mean keys")
-- Another runtime with flash off keeps op_attn's 4 transfers at 2 B
-- over the causal mean (kernels: 256.5 keys): 8,388,608 + 8 x 32 x 512
-- x 256.5 + 256.5 x 4096 = 43,056,128.
t.near(op(run { input = 512, weights = "fp16", flash = false, runtime = "kernels" }, "prefill",
          "attention").bytes, 8388608 + 8 * 32 * 512 * 256.5 + 256.5 * 4096, 1e-9,
       "runtime kernels, flash off: 8 B a score, causal mean")

-- Ubatches: a 4096-token prompt is 8 ubatches of 512, pipelined over pp
-- 4 across both calls (no synchronisation between llama_decode calls)
-- at the spacing the streams' launch queues allow (tests/lua/
-- llamacpp_pipe.t): 8 layers x 43 + 5 = 349 launches a GPU, m = 1000 /
-- 349 = 2.865, 1 + (4 - 3x) = 1.865, x = 1.045; (4 + 7 x 1.045) / 4 =
-- 2.829 stage-passes against 8 passes on one GPU: 0.3536.  The pp run's
-- pass adds 3 activation hops a ubatch (512 x 4096 x 2 B = 4 MiB over
-- PCIe, ~0.2 ms each against a ~40 ms pass): 3% tolerance.
local one = run { input = 4096, weights = "fp16" }
local four = run { input = 4096, weights = "fp16", gpus = 4, pp = 4 }
t.near(four.ttft_s / one.ttft_s, 2.829 / 8, 0.03, "pp 4: calls pipeline their ubatches")
-- 8 ubatches on one GPU against one 4096-token pass: the weights are
-- read 8 times and the attention runs ubatch by ubatch; at least the
-- one pass.
local kern = run { input = 4096, weights = "fp16", runtime = "kernels" }
t.ok(one.ttft_s >= kern.ttft_s, "ubatches cost at least the one pass")
-- The generic kernels runtime: no pipeline (one pass through 4 stages,
-- about the one-GPU time: within 3% for the hops).
local kern4 = run { input = 4096, weights = "fp16", runtime = "kernels", gpus = 4, pp = 4 }
t.near(kern4.ttft_s / kern.ttft_s, 1, 0.03, "runtime kernels: no pipeline")
-- Prompt of one ubatch: n = 1 call of 1, (1 + 3) / 4 = 1 pass: no gain.
local s1, s4 = run { input = 512, weights = "fp16" }, run { input = 512, weights = "fp16", gpus = 4, pp = 4 }
t.near(s4.ttft_s / s1.ttft_s, 1, 0.03, "one ubatch: nothing to pipeline")
-- An infer case's workload.flash reaches gp.infer (the llama-bench
-- rows state flash_attn = 0): the infer predictor reads it.
t.ok(require("gpuplan.validate").WORKLOAD_READ.flash.infer, "infer cases read workload.flash")

-- The compute buffer (infer_run.c mem_cfg): one ubatch's graph at F32
-- and, flash off, one layer's F32 scores over the context.  8B, n_ctx
-- 8191 + 1 = 8192, two GPUs:
--   512 x 4 B x (2 x 4096 + 4096 + 1024 + 1024 + 4096 + 3 x 14336)
--     = 125,829,120 (residual and norm, q, k, v, o, gate/up/product)
--   + one sequence's fp32 logits row 128256 x 4 = 513,024
--   + scores 512 x 8192 x 32 heads x 4 B = 536,870,912
-- = 663,213,056 B (the logs' "compute buffer size = 640.01 MiB" is
-- 671,098,880: 1.2% more, ggml-alloc's own layout; exact here).
local w = run { input = 8191, output = 1, weights = "fp16", gpus = 2, pp = 2, flash = false }
t.near(w.workspace, 125829120 + 513024 + 536870912, 1e-9, "llama.cpp's compute buffer, flash off")
-- Flash on: no scores.
local wf = run { input = 8191, output = 1, weights = "fp16", gpus = 2, pp = 2 }
t.near(wf.workspace, 125829120 + 513024, 1e-9, "llama.cpp's compute buffer, flash on")
