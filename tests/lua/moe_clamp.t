-- A clamped gated activation (model ffn_clamp: GPT-OSS's swiglu_limit 7.0,
-- Megatron-Core's activation_func_clamp_value) on the routed experts:
-- Megatron-Core's weighted_bias_quick_geglu_impl clamps the two halves of
-- fc1's output and torch.cats them back outside its fused Function
-- (engine/train_layer.c moe_clamp_costs): forward three memory-bound
-- kernels, 8 a elements, a the activation's output elements; backward
-- PyTorch's clamp_backward (ge, le, logical_and_ and where on the
-- two-sided half, le and where on the other, bool masks of 1 B, and a
-- scalar zero filled for each) and chunk's cat, a (11 A + 8) bytes at A
-- bytes an activation; and again in the backward under moe_act
-- recompute.
-- Run with ./gpuplan run tests/lua/moe_clamp.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(5)

local op = t.op
-- H100 SXM streams at 3.35e12 B/s x 0.84 (the hopper arch's hbm).
local bw = 3.35e12 * 0.84
-- gpt-oss-120b: top 4 of 128 experts 2880 wide; one sequence a
-- micro-batch on each of 8 GPUs (tp 1, ep 8), bf16 activations (2 B).
-- capacity_factor 1: every rank runs the mean rows (the padded buffer), which the counts here take; the dropless default's chance skew is tests/lua/moe_balance.t's
local job = { model = "gpt-oss-120b", capacity_factor = 1, gpu = "h100-sxm", gpus = 8, ep = 8, batch = 1,
              global_batch = 8, stack = "megatron", zero = 1, precision = "bf16",
              method = "pretrain" }
local function run(x) return gp.train(t.with(job, x)) end
local s4, s8 = run { seq = 4096 }, run { seq = 8192 }

-- A balanced router at capacity factor 1: a = Tn k ffn per GPU.  Doubling
-- the tokens adds 4096 x 4 x 2880 = 47,185,920 output elements; the
-- forward moves 8 of them each, 2 B apiece: 754.97 MB / 2.814e12 B/s =
-- 268.3 us.  The backward, per element of a half: x_linear's ge and le
-- (2 + 1 B each), logical_and_ (3), where (1 + 2 + 2); x_glu's le (3) and
-- where (5); chunk's cat (8, both halves' gradients read and written):
-- 30 B, 11 x 2 + 8: 1.4156 GB / 2.814e12 B/s = 503.1 us.  The kernels'
-- fixed fills (and the two one-element zeros) cancel in the difference:
-- float rounding only, 1e-6.
local da = 4096 * 4 * 2880
t.near(op(s8, "moe_clamp").fwd - op(s4, "moe_clamp").fwd, 8 * da * 2 / bw, 1e-6,
       "forward: two clamps of a half each and the cat, 8 a elements moved")
t.near(op(s8, "moe_clamp").bwd - op(s4, "moe_clamp").bwd, 30 * da / bw, 1e-6,
       "backward: clamp_backward's masks and wheres and chunk's cat, 30 B a element")

-- Without the clamp the op is not there, and nothing else in the layer
-- moves: the step differs by the clamp's forward and backward over the
-- layers and micro-batches alone (no recompute here).
local m = {}
for key, x in pairs(gp.catalog():get("models", "gpt-oss-120b")) do m[key] = x end
m.ffn_clamp = nil
local n4 = gp.train(t.with(job, { seq = 4096, model = m }))
t.is(op(n4, "moe_clamp"), nil, "no ffn_clamp: no clamp op")
t.near(op(n4, "moe_act").fwd, op(s4, "moe_act").fwd, 1e-12,
       "the fused activation itself is unchanged by the clamp")

-- Under moe_act recompute the clamp re-runs with the activation: the
-- recompute part grows by its forward over the 36 layers and the one
-- micro-batch (tolerance 1e-6: the same op times, float rounding).
local rc = run { seq = 4096, recompute = "selective", recompute_modules = "moe_act" }
local rn = gp.train(t.with(job, { seq = 4096, model = m, recompute = "selective",
                                  recompute_modules = "moe_act" }))
local function part(r, name) return t.parts(r)[name] end  -- tap.lua's parts
t.near(part(rc, "recompute") - part(rn, "recompute"), 36 * op(rc, "moe_clamp").fwd, 1e-6,
       "moe_act recompute re-runs the clamp's forward in every layer")
