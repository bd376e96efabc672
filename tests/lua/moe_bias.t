-- The routed experts' fc2 bias (model linear_bias: GPT-OSS), which
-- Megatron-Core adds after the grouped GEMM one local expert at a time
-- (TEGroupedMLP._apply_bias: t + b * p per expert, then torch.cat):
-- engine/train_layer.c moe_bias_costs, forward 6 R bytes (b * p writes R,
-- the add moves 3 R, the cat 2 R), backward 8 R (the bias's and the
-- probability's gradients, 3 R each, and the split's gradient, PyTorch's
-- split_with_sizes_backward: a cat of the experts' row gradients, 2 R),
-- R the routed rows' bytes at the model's width; two kernels a local
-- expert and the cat forward.
-- Under the flex dispatcher the probabilities are fp32 (HybridEP and
-- DeepEP upcast them: token_dispatcher.py "self.token_probs =
-- self.token_probs.float()"), so b * p, the add and the cat run in fp32
-- and a cast back follows: forward 28 B an element of the rows, backward
-- 40 B (the casts' gradients, the two products in fp32 and the split's
-- cat in bf16).
-- Run with ./gpuplan run tests/lua/moe_bias.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(7)

local op = t.op
-- H100 SXM streams at 3.35e12 B/s x 0.84 (the hopper arch's hbm).
local bw = 3.35e12 * 0.84
-- gpt-oss-120b (linear_bias): top 4 of 128 experts, hidden 2880; one
-- sequence a micro-batch on each of 8 GPUs (tp 1, ep 8: 16 local
-- experts), bf16 activations (2 B).
-- capacity_factor 1: every rank runs the mean rows (the padded buffer), which the counts here take; the dropless default's chance skew is tests/lua/moe_balance.t's
local job = { model = "gpt-oss-120b", capacity_factor = 1, gpu = "h100-sxm", gpus = 8, ep = 8, batch = 1,
              global_batch = 8, stack = "megatron", zero = 1, precision = "bf16",
              method = "pretrain" }
local function run(x) return gp.train(t.with(job, x)) end
local s4, s8 = run { seq = 4096 }, run { seq = 8192 }

-- A balanced router at capacity factor 1: R = Tn k h A.  Doubling the
-- tokens adds 4096 x 4 x 2880 x 2 B = 94.37 MB of rows; the forward
-- moves 6 of them: 566.2 MB / 2.814e12 B/s = 201.2 us, the backward 8:
-- 755.0 MB, 268.3 us.
-- Every local expert is touched at either length (16 of 16), so the
-- kernels and their fills are the same and cancel: float rounding, 1e-6.
local dR = 4096 * 4 * 2880 * 2
t.near(op(s8, "moe_bias").fwd - op(s4, "moe_bias").fwd, 6 * dR / bw, 1e-6,
       "forward: b * p, the add and the cat, 6 R")
t.near(op(s8, "moe_bias").bwd - op(s4, "moe_bias").bwd, 8 * dR / bw, 1e-6,
       "backward: the bias's and the probabilities' gradients and the split's cat, 8 R")

-- Without the biases there is no such op, and the GEMM itself is the same.
local m = {}
for key, x in pairs(gp.catalog():get("models", "gpt-oss-120b")) do m[key] = x end
m.linear_bias = nil
local n4 = gp.train(t.with(job, { seq = 4096, model = m }))
t.is(op(n4, "moe_bias"), nil, "no linear_bias: no per-expert bias op")
t.near(op(n4, "moe_down").fwd, op(s4, "moe_down").fwd, 1e-12,
       "the grouped GEMM is unchanged by its bias")

-- The flex dispatcher: fp32 probabilities.  Per element of the rows the
-- forward moves 4 (b * p) + 2 + 8 (the add) + 8 (the cat) + 6 (the cast
-- back) = 28 B, the backward 6 (the cast's gradient) + 6 (t's gradient
-- cast back) + 12 + 12 (the two products and their sums, fp32) + 4 (the
-- split's cat of the bf16 row gradients) = 40 B, against 12 and 16 with
-- bf16 ones.  Doubling the tokens adds 4096 x 4 x
-- 2880 elements of rows; kernels and fills cancel as above: 1e-6.
local f4, f8 = run { seq = 4096, moe_dispatcher = "flex" },
               run { seq = 8192, moe_dispatcher = "flex" }
local dN = 4096 * 4 * 2880
t.near(op(f8, "moe_bias").fwd - op(f4, "moe_bias").fwd, 28 * dN / bw, 1e-6,
       "flex forward: fp32 b * p, add and cat, then the cast back, 28 B an element")
t.near(op(f8, "moe_bias").bwd - op(f4, "moe_bias").bwd, 40 * dN / bw, 1e-6,
       "flex backward: the casts' gradients, the fp32 products and the split's cat, 40 B an element")
-- The kernel count: at 4096 tokens the rows are dN elements, so the
-- bf16 forward is 12 dN / bw plus 2 x 16 + 1 = 33 launches, which gives
-- one launch's time; the flex forward adds the cast's kernel: 28 dN / bw
-- plus 34 of them.  Float rounding: 1e-6 relative.
local launch = (op(s4, "moe_bias").fwd - 12 * dN / bw) / 33
t.near(op(f4, "moe_bias").fwd, 28 * dN / bw + 34 * launch, 1e-6 * op(f4, "moe_bias").fwd,
       "flex forward: 34 kernels (two a local expert, the cat, the cast back)")
