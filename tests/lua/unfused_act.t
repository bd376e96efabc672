-- unfused_act: Megatron-Core's MLP with bias_activation_fusion off (the
-- TransformerConfig default, which Megatron-Bridge's Qwen3 providers and
-- NeMo 2.0's Qwen3 configs keep) runs the gated activation as PyTorch
-- ops -- silu, then the product -- and in the experts multiplies the
-- router's probabilities in the router's dtype (moe_router_dtype) and
-- casts back, and with fc1's bias adds it first (engine/train_layer.c
-- act_unfused_costs).
-- Run with ./gpuplan run tests/lua/unfused_act.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(14)

local op = t.op
-- H100 SXM streams at 3.35e12 B/s x 0.84 (the hopper arch's hbm); a
-- kernel that moves bytes pays the memory pipeline's fill, 3.9 us
-- (engine/roofline.c ROOF_MEM_FILL), and the 1 us graph-launch gap
-- (catalog/archs.lua hopper graph_launch_overhead).
local bw, k1 = 3.35e12 * 0.84, 3.9e-6 + 1e-6

-- Llama 3 8B (ffn 14336), one 4096-token micro-batch, bf16 (A = 2 B).
local dense = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, batch = 1, seq = 4096,
                global_batch = 8, stack = "megatron", zero = 1 }
local function runj(j, x) return gp.train(t.with(j, x)) end

-- el = 4096 x 14336 ffn elements.  Forward, two kernels: silu reads the
-- gate and writes its output (2 el A), the product reads both and writes
-- one (3 el A): 5 el A = 587.2 MB / 2.814e12 B/s = 208.7 us + 2 x 4.9
-- us.  Backward, autograd's three (grad x up, grad x silu, silu's own),
-- 3 el A each: 1056.9 MB, 375.6 us + 3 x 4.9 us.  1e-6: float rounding.
do
  local el, A = 4096 * 14336, 2
  local u = runj(dense, { unfused_act = true })
  t.near(op(u, "mlp_act").fwd, 5 * el * A / bw + 2 * k1, 1e-6,
         "unfused SwiGLU forward: silu and the product, 5 el A in two kernels")
  t.near(op(u, "mlp_act").bwd, 9 * el * A / bw + 3 * k1, 1e-6,
         "backward: three kernels of 3 el A")
  local f = runj(dense, {})
  t.ok(op(u, "mlp_act").fwd > op(f, "mlp_act").fwd and
       op(u, "mlp_act").bwd > op(f, "mlp_act").bwd,
       "longer both ways than the fused kernel (6 and 9 B an ffn element)")
end

-- With a bias on fc1 (model linear_bias, Megatron-DeepSpeed's and
-- Megatron-Core's "intermediate_parallel + bias_parallel" before the
-- unfused glu): one more kernel each way, the add reading and writing
-- fc1's 2 el outputs (4 el A = 469.8 MB, 166.9 us + 4.9 us) and back the
-- bias gradient's sum reading 2 el (2 el A, 83.5 us + 4.9 us).  Forward
-- 5 el A + 4 el A = 9 el A in 3 kernels (375.6 us + 14.7 us), backward
-- 9 el A + 2 el A = 11 el A in 4 (459.1 us + 19.6 us).  Without the
-- bias nothing more (the tests above).  1e-6: float rounding.
do
  local el, A = 4096 * 14336, 2
  local biased = { id = "llama3-8b-bias", name = "Llama 3 8B with linear biases",
    layers = 32, hidden = 4096, heads = 32, kv_heads = 8, head_dim = 128, ffn_hidden = 14336,
    ffn_gated = true, vocab = 128256, norm = "rms", linear_bias = true, max_seq = 8192,
    params_b = 8.03 }
  local u = runj(dense, { model = biased, unfused_act = true })
  t.near(op(u, "mlp_act").fwd, 9 * el * A / bw + 3 * k1, 1e-6,
         "fc1's bias: its add before silu and the product")
  t.near(op(u, "mlp_act").bwd, 11 * el * A / bw + 4 * k1, 1e-6,
         "fc1's bias: its gradient's sum after the three")
end

-- Qwen3-30B-A3B (top 8 of 128 experts of ffn 768, no shared expert) at
-- EP 8 on 8 GPUs, one 4096-token micro-batch a rank: with balanced
-- routing a rank's experts receive T k = 32768 rows, el = 32768 x 768 =
-- 25.17 M expert ffn elements.  The probabilities multiply the
-- activation (moe_probs activation, the megatron stack's).  In the
-- activations' dtype (q = A = 2) the product is one kernel, 2 el A, and
-- its backward three (grad x probs 2 el A, grad x activation 3 el A, the
-- sum over the ffn el A); in fp64 (q = 8) the product is written in q and
-- cast back: forward el (A + q) + el (q + A), two kernels, where q = A
-- moved 2 el A in one: 2 el q / bw + 4.9 us more, 402.7 + 4.9 us.  Back:
-- 3 el A + 7 el q in five kernels against 6 el A in three: el (7 q - 3
-- A) / bw + 2 x 4.9 us = 447.4 + 9.8 us.  1e-6: float rounding.
do
  -- capacity_factor 1: every rank runs the mean rows (the padded buffer), which the counts here take; the dropless default's chance skew is tests/lua/moe_balance.t's
  local moe = { model = "qwen3-30b-a3b", capacity_factor = 1, gpu = "h100-sxm", gpus = 8, ep = 8, batch = 1,
                seq = 4096, global_batch = 8, stack = "megatron", zero = 1 }
  local el, A, q = 4096 * 8 * 768, 2, 8
  local a = runj(moe, { unfused_act = true })
  local d = runj(moe, { unfused_act = true, moe_router_dtype = "fp64" })
  t.near(op(d, "moe_act").fwd - op(a, "moe_act").fwd, 2 * el * q / bw + k1, 1e-6,
         "fp64 probabilities: the product written in fp64 and cast back")
  t.near(op(d, "moe_act").bwd - op(a, "moe_act").bwd, el * (7 * q - 3 * A) / bw + 2 * k1,
         1e-6, "and its backward's five kernels against three")
  -- fp32 (q = 4): forward 2 el q / bw + 4.9 us over q = A.
  local s = runj(moe, { unfused_act = true, moe_router_dtype = "fp32" })
  t.near(op(s, "moe_act").fwd - op(a, "moe_act").fwd, 2 * el * 4 / bw + k1, 1e-6,
         "fp32 probabilities: half fp64's bytes")
end

-- Where it would change nothing, refused by name.
t.raises(function() runj(dense, { unfused_act = true, stack = "hf" }) end,
  "train: unfused_act is Megatron-Core's MLP without bias_activation_fusion; with "
    .. "kernels = eager (stack = hf)", "eager modules refused", true)
t.raises(function() runj(dense, { unfused_act = true, model = "gpt3-175b", gpus = 64,
                                  tp = 8, pp = 8 }) end,
  "train: unfused_act prices a gated activation's two kernels; gpt3-175b's MLP is not gated",
  "a model without a gated MLP refused", true)
t.raises(function() runj(dense, { moe_router_dtype = "fp64" }) end,
  "train: moe_router_dtype is a MoE router's; llama3-8b has no experts", "a dense model refused",
  true)
-- (fp64 prices the router's own GEMMs in float64 too, tests/lua/
-- router_fp64.t; fp32 keeps Transformer Engine's 16-bit GEMM and only
-- costs in the unfused activation)
t.raises(function()
  runj(dense, { model = "qwen3-30b-a3b", ep = 8, moe_router_dtype = "fp32" }) end,
  "train: moe_router_dtype fp32 prices the probabilities' product in the experts' unfused "
    .. "activation: it needs unfused_act", "fp32 without unfused_act refused", true)
t.raises(function() runj(dense, { unfused_act = "yes" }) end,
  "train: unfused_act must be true or false (got string 'yes')", "a string refused", true)
t.raises(function()
  runj(dense, { model = "qwen3-30b-a3b", ep = 8, unfused_act = true, moe_router_dtype = "bf16" })
  end, "moe_router_dtype", "an undeclared dtype refused", true)
