-- A prompt's attention on the kernel the runtime runs (infer_cfg
-- prompt_attn_fused, engine/infer.c fused_attn, lua/gpuplan/infer.lua
-- M.prompt_attn_kernel_of): vLLM V1's FlashAttention backend runs FA3 on
-- Hopper ("fa_version = 3 if (device_capability.major == 9 and
-- is_fa_version_supported(3)) else 2", fa_utils.py), so gp.infer's dense
-- step prices its prompt attention at the catalog's FA3 record (the hopper
-- arch's attention.fa3.fwd 0.713 at the sustained clock 0.82, with
-- roofline.c roof_attn_eff's shape terms against the record's 8192-token
-- causal reference), as the MoE serving step and training do.  Before it
-- priced the op as a GEMM of its shape at the bf16 GEMM fraction.
-- Run: ./gpuplan run tests/lua/prompt_attn_fa3.t
local t = require "tap"
local gp = require "gpuplan"
t.plan(6)

-- Llama 3.1 8B's shape (meta-llama/Llama-3.1-8B config.json), head dim 128.
local llama = { layers = 32, hidden = 4096, heads = 32, kv_heads = 8, head_dim = 128,
                ffn_hidden = 14336, ffn_gated = true, vocab = 128256, max_seq = 131072 }
-- One prompt of `input` tokens on one card, one stream: its prefill's
-- attention row and the result.
local function prompt(runtime, gpu, input, extra)
  local a = { model = llama, gpu = gpu, gpus = 1, tp = 1, runtime = runtime,
              input = input, output = 2, batch = 1 }
  for k, v in pairs(extra or {}) do a[k] = v end
  local r = assert(gp.infer(a))
  return t.op(r.prefill, "attention"), r
end

-- 1. vLLM on an H100 SXM, one causal 8192-token prompt: the record's own
-- conditions (causal, 8192 tokens, head dim 128), so the shape factor is
-- 1 and the rate is peak bf16 x fa3.fwd x sustained attention:
-- 989 x 0.713 x 0.82 = 578.229 TFLOP/s (catalog/gpus/nvidia-hopper.lua
-- h100-sxm peak, catalog/archs.lua hopper).  Tolerance 1e-6: the
-- product of the catalog's own figures.
local v, rv = prompt("vllm", "h100-sxm", 8192)
t.near(v.compute_rate, 989e12 * 0.713 * 0.82, 1e-6,
       string.format("vLLM on H100, 8k causal prompt: FA3 rate %.2f TFLOP/s",
                     v.compute_rate / 1e12))
t.near(v.shape_eff, 1.0, 1e-9, "at the record's reference shape the shape factor is 1")

-- 2. TensorRT-LLM (its own FMHA, no catalog record) keeps the GEMM of the
-- op's shape: peak bf16 x the hopper bf16 GEMM fraction 0.80 x the
-- sustained GEMM clock 0.82 x the op's GEMM shape efficiency.
-- Tolerance 1e-9: the same arithmetic.
local g, rg = prompt("trtllm", "h100-sxm", 8192)
t.near(g.compute_rate, 989e12 * 0.80 * 0.82 * g.shape_eff, 1e-9,
       string.format("TensorRT-LLM: the GEMM of its shape (%.2f TFLOP/s, shape %.3f)",
                     g.compute_rate / 1e12, g.shape_eff))

-- 3. The prompt costs more under vLLM's FA3 than at the GEMM rate (578.2
-- against about 619.6 TFLOP/s): the attention row is compute-bound in
-- both, so its time scales with the inverse rates.  Tolerance 5e-3: the
-- GEMM path's time also carries its K loop's walk and the hypot overlap
-- of its memory time (roofline.c), the fused path the longer of the two
-- and the launch (0.24% of the ratio here).
t.near(v.total / g.total, g.compute_rate / v.compute_rate, 5e-3,
       string.format("vLLM's prompt attention %.3f ms against %.3f at the GEMM rate",
                     v.total * 1e3, g.total * 1e3))

-- 4. Said on the defaults line under vLLM on Hopper only.
t.ok(t.said(rv, "prompt attention on FlashAttention-3's measured rate", true) and
     not t.said(rg, "prompt attention on FlashAttention-3", true),
     "the defaults line names the prompt attention's kernel under vLLM on Hopper alone")

-- 5. vLLM on an A100 runs FA2 (fa_utils.py: "else 2"), whose record is a
-- training rate not taken for serving here: the GEMM of the op's shape,
-- the rate TensorRT-LLM's row gets on the same card.  Tolerance 1e-9:
-- the same arithmetic.
local a = prompt("vllm", "a100-sxm-80gb", 8192)
local at = prompt("trtllm", "a100-sxm-80gb", 8192)
t.near(a.compute_rate, at.compute_rate, 1e-9,
       "vLLM on A100: the prompt attention stays at the GEMM of its shape")
