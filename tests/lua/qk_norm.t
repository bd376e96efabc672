-- QK-norm (model qk_norm: Qwen3's q_norm and k_norm, Megatron-Core's
-- qk_layernorm): an RMSNorm over each query head and each KV head after
-- the projection, before rope (engine/model_ops.c qk_norm).  It is priced
-- where each stack runs it: one fused memory-bound pass over q and k each
-- way in Megatron-Core training (q_layernorm and k_layernorm, two TENorm
-- kernels), Hugging Face's eight-kernel RMSNorm on q and on k under eager
-- PyTorch (train_layer.c qk_norm_kernels), and a kernel over q and k in a
-- decode step (infer.c, serve_step.c), none under TensorRT-LLM, which
-- normalises inside its rope kernel.  The rollout engine's eager launch
-- count and the refit's tensor count grow by the two norms a layer.
-- Run with ./gpuplan run tests/lua/qk_norm.t.
local t = require "tap"
local gp = require "gpuplan"
local rl = require "gpuplan.rl"

t.plan(9)

local op = t.op
-- H100 SXM streams at 3.35e12 B/s x 0.84 (the hopper arch's hbm).
local bw = 3.35e12 * 0.84
local cat = gp.catalog()
local q8 = cat:get("models", "qwen3-8b")
local function without(m)
  local c = {}
  for k, x in pairs(m) do c[k] = x end
  c.qk_norm = nil
  return c
end

-- Qwen3-8B: 32 query heads and 8 KV heads of 128 on one GPU (tp 1), one
-- sequence a micro-batch, bf16 activations (2 B).  Doubling the sequence
-- from 4096 to 8192 adds 4096 x (32 + 8) x 128 = 20,971,520 q and k
-- elements; the fused norm reads and writes each once forward (4 B an
-- element: 83.89 MB / 2.814e12 B/s = 29.81 us) and moves 1.5 times that
-- backward (the gradient and the input read, the gradient written).  The
-- kernels' fixed fills cancel in the difference: float rounding, 1e-6.
local job = { model = "qwen3-8b", gpu = "h100-sxm", gpus = 8, batch = 1, global_batch = 8,
              stack = "megatron", zero = 1, precision = "bf16", method = "pretrain" }
local function run(x) return gp.train(t.with(job, x)) end
local s4, s8 = run { seq = 4096 }, run { seq = 8192 }
local de = 4096 * (32 + 8) * 128
t.near(op(s8, "qk_norm").fwd - op(s4, "qk_norm").fwd, 2 * de * 2 / bw, 1e-6,
       "Megatron: q and k read and written once forward")
t.near(op(s8, "qk_norm").bwd - op(s4, "qk_norm").bwd, 3 * de * 2 / bw, 1e-6,
       "Megatron: 1.5 times the forward's bytes backward")

-- Without the field the op is not there, and rope is unchanged.
local n4 = run { seq = 4096, model = without(q8) }
t.is(op(n4, "qk_norm"), nil, "no qk_norm: no qk_norm op")
t.near(op(n4, "rope_kv").fwd, op(s4, "rope_kv").fwd, 1e-12, "rope itself is unchanged")

-- Eager Hugging Face (Qwen3RMSNorm = LlamaRMSNorm's kernels): forward
-- 36 B an element (to(fp32) 2 + 4, pow 8, mean 4, the product 8, to(bf16)
-- 4 + 2, weight * 4) and 16 B a head row (+ eps and rsqrt over the fp32
-- mean, 8 each), rows = elements / 128: (36 + 16 / 128) x 20,971,520 B /
-- 2.814e12 B/s = 269.2 us more at the doubled sequence.
local e4 = run { seq = 4096, stack = "hf", kernels = "eager" }
local e8 = run { seq = 8192, stack = "hf", kernels = "eager" }
t.near(op(e8, "qk_norm").fwd - op(e4, "qk_norm").fwd, (36 + 16 / 128) * de / bw, 1e-6,
       "eager: the RMSNorm's eight kernels on q and on k")

-- A decode step of 32 sequences on one GPU: q and k of 32 tokens read
-- and written, 2 x 32 x 40 x 128 x 2 B = 655,360 B a layer.
local inf = gp.infer { model = "qwen3-8b", gpu = "h100-sxm", batch = 32, input = 1024,
                       output = 2, runtime = "vllm" }
local row
for _, o in ipairs(inf.decode.ops) do if o.name == "qk_norm" then row = o end end
t.is(row and row.bytes, 2 * 32 * 40 * 128 * 2, "decode: q and k of the step's tokens, 2 B each way")

-- TensorRT-LLM normalises q and k inside its rope kernel
-- (fuse_qk_norm_rope): no qk_norm row, the rope's the same bytes.
local trt = gp.infer { model = "qwen3-8b", gpu = "h100-sxm", batch = 32, input = 1024,
                       output = 2, runtime = "trtllm" }
local trow
for _, o in ipairs(trt.decode.ops) do if o.name == "qk_norm" then trow = o end end
t.is(trow, nil, "TensorRT-LLM: the norm inside the rope kernel, no kernel of its own")

-- vLLM's eager launches a layer: attention 6 + the two norms, the dense
-- MLP's 4 (Llama's 10).
t.is(rl.eager_ops_per_layer(q8, 1), 12, "vLLM eager: q_norm and k_norm two more launches a layer")

-- An MLA model normalises its latents instead: asking for both is refused.
local ok, err = pcall(gp.train, t.with(job, { seq = 4096, model = (function()
  local m = {}
  for k, x in pairs(cat:get("models", "deepseek-v3")) do m[k] = x end
  m.qk_norm = true
  return m
end)(), gpus = 64, ep = 8 }))
t.ok(not ok and tostring(err):find("qk_norm", 1, true), "qk_norm with mla: an error naming it")
