-- SGLang's gpt-oss defaults on Blackwell (lua/gpuplan/infer.lua
-- M.sglang_ar_norm_fusion, lua/gpuplan/serve.lua M.SGLANG_MXFP4_PAD;
-- engine serve_cfg.ar_norm_fused, serve_a2a.c sx_ar_fused): its server
-- sets enable_flashinfer_allreduce_fusion for GptOssForCausalLM on
-- Blackwell without DP attention, so each TP all-reduce and the residual
-- add + RMSNorm after it run as one FlashInfer kernel (8.7 us on 8 B200s,
-- SGLang PR 7621, plus the wire time of FlashInfer's one- or two-shot form),
-- the norm kernels gone;
-- and it runs the MXFP4 experts on FlashInfer's TRT-LLM MoE, whose
-- weights Mxfp4MoEMethod pads to multiples of 256 (the intermediate after
-- the TP split).  Neither on Hopper, nor under vLLM.
-- Run: ./gpuplan run tests/lua/sglang_ar_fusion.t
local t = require "tap"
local gp = require "gpuplan"
t.plan(13)

-- gpt-oss-120b's shape (openai/gpt-oss-120b config.json): 36 layers, 18
-- of them sliding (window 128), 128 experts top-4, MXFP4 experts.
local model = { layers = 36, hidden = 2880, heads = 64, kv_heads = 8, head_dim = 64,
                ffn_hidden = 2880, ffn_gated = true, norm = "rms", vocab = 201088,
                max_seq = 131072, sliding_window = { size = 129, layers = 18 },
                moe = { experts = 128, top_k = 4, shared_experts = 0, ffn_hidden = 2880,
                        dense_layers = 0 } }
local function run(runtime, gpu, tp)
  return assert(gp.infer{ model = model, gpu = gpu, gpus = tp, tp = tp, ep = 1,
                          expert_weights = "mxfp4", runtime = runtime, input = 256,
                          output = 256, concurrency = 1 })
end
local function said(r, pat) return t.said(r, pat, true) end

local b = run("sglang", "b200", 8)

-- 1-2. The norms run inside the all-reduce's kernel: no attn_norm or
-- mlp_norm row in the decode step (exact: rows present or not).
t.ok(t.op(b.decode, "attn_norm") == nil and t.op(b.decode, "mlp_norm") == nil,
     "SGLang, B200 TP 8: no attn_norm / mlp_norm rows (fused into the all-reduce)")
t.ok(said(b, "ar_norm_fusion"), "SGLang, B200: the defaults line says the fusion")

-- 3. The TP all-reduces: 36 MoE layers x 2, each 8.7 us + the one-stage
-- wire time of one token's 2880 x 2 B = 5760 B from 7 peers at 0.720 x
-- the B200's NVLink (900e9 B/s: 7 x 5760 / 648e9 = 0.0622 us), so 72 x
-- 8.762 us = 0.6309 ms.  Tolerance 1%: the wire part is 0.7% of it, so a
-- catalog link rate other than 900 GB/s moves it less than that.
t.near(b.tp_comm_ms, 72 * (8.7 + 7 * 5760 / (0.72 * 900e9) * 1e6) * 1e-3, 0.01,
       string.format("SGLang, B200 TP 8: TP all-reduces %.4f ms", b.tp_comm_ms))

-- 4-5. Hopper keeps its norms and NCCL's all-reduce (the server sets the
-- fusion for GptOss on Blackwell only); vLLM on B200 too (SGLang's
-- default, not vLLM's).
local h = run("sglang", "h100-sxm", 8)
t.ok(t.op(h.decode, "attn_norm") ~= nil and not said(h, "ar_norm_fusion"),
     "SGLang, H100: attn_norm kept, no fusion")
local v = run("vllm", "b200", 8)
t.ok(t.op(v.decode, "mlp_norm") ~= nil and not said(v, "ar_norm_fusion"),
     "vLLM, B200: mlp_norm kept, no fusion")

-- 6. The unfused all-reduces cost more a call than the fused kernel plus
-- the norm it absorbed (NCCL's 8-GPU latency alone is above 8.7 us):
-- B200 TP 8 without fusion (vLLM's path prices the same collectives)
-- has a longer step.
t.ok(v.itl_s > b.itl_s, string.format("B200 TP 8 step: SGLang fused %.3f ms < vLLM %.3f ms",
     b.itl_s * 1e3, v.itl_s * 1e3))

-- 7-8. The FlashInfer MXFP4 experts' padding: at TP 8 a GPU holds
-- 2880 / 8 = 360 of each expert's intermediate, padded to 512, and the
-- hidden 2880 to 3072, so one token's 4 expert rows multiply 2 x 4 x
-- 3072 x (2 x 512) FLOP in the up GEMM = 25,165,824 (exact: integers);
-- vLLM's TRT-LLM path is not this model's pad (2 x 4 x 2880 x 720 =
-- 16,588,800).
t.is(t.op(b.decode, "experts_up").flop, 2 * 4 * 3072 * 1024,
     "SGLang, B200 TP 8: experts_up at the padded 3072 x 2 x 512")
t.is(t.op(v.decode, "experts_up").flop, 2 * 4 * 2880 * 720,
     "vLLM, B200 TP 8: experts_up at 2880 x 2 x 360")

-- 9. The defaults line names the padding.
t.ok(said(b, "padded to a multiple of 256"), "SGLang, B200: the padding said")

-- 10-11. With the experts' all-to-all (ep 8, a2a deepep given) the MoE
-- tokens are reduce-scattered and gathered around the exchange, no
-- all-reduce for the norm to join: the norm rows stay and the defaults
-- line says no fusion (serve_a2a.c sx_ar_fused, one test for the rows and
-- the collectives; before it the rows went while the collectives stayed
-- unfused).
local e = assert(gp.infer{ model = model, gpu = "b200", gpus = 8, tp = 8, ep = 8,
                           a2a = "deepep", two_batch_overlap = false,
                           expert_weights = "mxfp4", runtime = "sglang", input = 256,
                           output = 256, concurrency = 1 })
t.ok(t.op(e.decode, "attn_norm") ~= nil and t.op(e.decode, "mlp_norm") ~= nil,
     "SGLang, B200 TP 8, ep 8 with DeepEP: attn_norm / mlp_norm kept")
t.ok(not said(e, "ar_norm_fusion"), "... and no fusion said")

-- 12-13. FlashInfer picks one-shot or two-shot itself (use_oneshot None:
-- from 0.5.0 one-shot while tokens x 2880 x 2 x 8 x 2 B is at most 42 MiB
-- at TP 8, _should_use_oneshot).  A prefill step of 1024 tokens: 90 MiB,
-- two-shot, each all-reduce 8.7 us + 2 x 7/8 x 1024 x 5760 B / (0.617 x
-- 900e9 B/s) = 8.7 + 18.588 us, 72 of them (36 layers x 2); one of 400
-- tokens: 21.1 MiB, one-shot, 8.7 + 7 x 400 x 5760 / (0.720 x 900e9) =
-- 8.7 + 24.889 us.  1e-6: the same arithmetic in C, B200's NVLink at the
-- catalog's 900 GB/s a direction (the one-shot form priced throughout
-- made the 1024-token all-reduce 72.4 us, 2.7x).
local function prefill_ar(n)
  local r = assert(gp.infer{ model = model, gpu = "b200", gpus = 8, tp = 8, ep = 1,
                             prefill_tokens = n, expert_weights = "mxfp4",
                             runtime = "sglang", input = n, output = 256, concurrency = 1 })
  return r.prefill.tp_comm / 72
end
t.near(prefill_ar(1024), 8.7e-6 + 2 * 7 / 8 * 1024 * 5760 / (0.617 * 900e9), 1e-6,
       "a 1024-token prefill at TP 8: FlashInfer's two-shot fused all-reduce")
t.near(prefill_ar(400), 8.7e-6 + 7 * 400 * 5760 / (0.720 * 900e9), 1e-6,
       "a 400-token prefill at TP 8: one-shot (21.1 MiB, under 42)")
