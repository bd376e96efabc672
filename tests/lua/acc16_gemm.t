-- llama.cpp's cuBLAS GEMMs in FP16 accumulation (lua/gpuplan/infer.lua
-- M.acc16_gemm; engine infer.c acc16_convert): at its May 2024 build
-- ggml_cuda_op_mul_mat_cublas multiplies 16-bit (and, above
-- MMQ_MAX_BATCH_SIZE 32 tokens, dequantised) weights with
-- CUBLAS_COMPUTE_16F, which an RTX 4090 runs at twice its stored
-- FP32-accumulate 16-bit peak (the catalog's acc16_x 2: 330.3 against
-- 165.2 TFLOPS dense), and converts each linear's F32 input to F16 and
-- its F16 output to F32 in kernels of their own, on every card.
-- Rates and byte counts are exact products of the engine's own: tap's
-- near takes a relative tolerance, 1e-9 (rounding only).
-- Run with ./gpuplan run tests/lua/acc16_gemm.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(11)

-- Llama 3 8B's shape (the llama-bench cases' model).
local M = { ffn_gated = true, ffn_hidden = 14336, head_dim = 128, heads = 32, hidden = 4096,
  id = "llama3-8b-test", kv_heads = 8, layers = 32, norm = "rms", split_proj = "both",
  tied_embeddings = false, vocab = 128256 }

local function run(x)
  return gp.infer(t.with({ gpu = "rtx-4090", output = 2, concurrency = 1, model = M,
                           runtime = "llama.cpp", flash = false }, x))
end
local function ops(r, phase, name)
  local l = {}
  for _, o in ipairs(r[phase].ops) do if o.name == name then l[#l + 1] = o end end
  return l
end

-- A 512-token F16 prompt: qkv at 2 x 165.2e12 x gemm fraction 1.0 x its
-- shape efficiency (the FP16-accumulate rate, 330.4e12 at a whole wave).
local p = run { input = 512, weights = "fp16" }
local qkv = ops(p, "prefill", "qkv")[1]
t.near(qkv.compute_rate, 2 * 165.2e12 * qkv.shape_eff, 1e-9,
       "prompt qkv at the FP16-accumulate rate (2 x 165.2 TFLOPS x shape eff)")
-- The conversions, in the order the linears come (qkv first): qkv is
-- wq, wk and wv apart, 3 matmuls a layer x 32 layers = 96, each reading
-- the 512 x 4096 input at 4 B and writing it at 2: 512 x 4096 x 6 =
-- 12,582,912 B; their outputs, 4096 + 2 x 1024 = 6144 columns split
-- three ways, 512 x 6144 / 3 x 6 = 6,291,456 B each.
local fin, fout = ops(p, "prefill", "f16_input"), ops(p, "prefill", "f32_output")
t.near(fin[1].bytes, 512 * 4096 * 6, 1e-9, "qkv's input: 512 x 4096 x (4 + 2) B")
t.is(fin[1].count, 96, "qkv's input converted by wq, wk and wv apart: 3 x 32 layers")
t.near(fout[1].bytes, 512 * 6144 / 3 * 6, 1e-9, "qkv's output: 512 x 6144 / 3 x (2 + 4) B")
-- A gated MLP's gate and up are ffn_gate and ffn_up apart: 2 x 32 = 64
-- conversions of the 4096-wide input (fin[3]: after qkv's and o_proj's).
t.is(fin[3].count, 64, "mlp_up's input converted by ffn_gate and ffn_up apart")

-- A one-token decode step runs no cuBLAS GEMM: no conversion, and its
-- qkv at no more than the stored 165.2e12.
t.is(#ops(p, "decode", "f16_input"), 0, "decode: no conversion passes")
t.ok(ops(p, "decode", "qkv")[1].compute_rate <= 165.2e12 * (1 + 1e-9),
     "decode qkv not at the FP16-accumulate rate")

-- Quantized weights: 32 tokens stay on MMQ (no conversion), 33 go to
-- dequantize + cuBLAS 16F (conversions, the doubled rate).
local q32 = run { input = 32, weights = 4.9 }
local q33 = run { input = 33, weights = 4.9 }
t.is(#ops(q32, "prefill", "f16_input"), 0, "Q4: 32 tokens stay on MMQ")
t.ok(#ops(q33, "prefill", "f16_input") > 0, "Q4: 33 tokens go to dequantize + cuBLAS 16F")

-- A card with no FP16-accumulate rate of its own (the A100's is the
-- FP32-accumulate one) converts the same but keeps its rate: qkv at
-- 312e12 x its gemm fraction x shape eff, never above 312e12.
local a = gp.infer { gpu = "a100-sxm-80gb", output = 2, concurrency = 1, model = M,
                     runtime = "llama.cpp", flash = false, input = 512, weights = "fp16" }
t.is(#ops(a, "prefill", "f16_input"), 4, "A100: the conversions still priced (qkv, o_proj, mlp_up, mlp_down)")
t.ok(ops(a, "prefill", "qkv")[1].compute_rate <= 312e12 * (1 + 1e-9),
     "A100: qkv not above its stored 16-bit peak")
