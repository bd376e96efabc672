-- FlashAttention-3 on Hopper at the rate it was measured at inside a
-- training step (catalog/archs.lua hopper, achievable.attention.fa3):
-- ml-engineering's 8k step decomposition on 8 x H200 (Llama-3.1-8B, 32
-- query / 8 KV heads of 128, one causal 8192-token sequence, ZeRO-2, no
-- recompute, flash-attn-3 3.0.0) gives the attention bucket 447 TFLOP/s
-- counted as 6 s^2 d h L (forward 2 s^2 d h, backward twice it), which in
-- the FA convention (backward 2.5 x the forward) is 447 x 3.5 / 3 = 521.5
-- TFLOP/s for forward and backward together.
-- Run with ./gpuplan run tests/lua/fa3_hopper_rate.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(3)

-- The same job as the decomposition's (the
-- mlengineering-decompose-llama31-8b-h200-8g-zero2-s8k case).  Per layer
-- the causal forward is F = 2 s^2 d h = 2 x 8192^2 x 128 x 32 = 5.4976e11
-- FLOP, the backward 2.5 F.  At 8192 tokens the shape term is 1 (the
-- catalog's 8k reference), so the kernel runs at its fractions of the
-- sustained peak, 0.82 x 989 = 810.98 TFLOP/s: forward 0.713 (578.2),
-- backward 0.618 (501.2), together 3.5 F / (F/578.2 + 2.5 F/501.2) =
-- 521.1 TFLOP/s, the measured 521.5 less the fractions' rounding.
-- Tolerance 0.5%: the fractions are rounded to three
-- places (0.07%) and each pass adds a 1-4 us launch to a 1-3 ms kernel
-- (0.3% at most).
local r = gp.train { model = "llama3.1-8b", gpu = "h200-sxm", gpus = 8, stack = "deepspeed",
                     zero = 2, seq = 8192, batch = 1, global_batch = 8, recompute = "none",
                     attn_kernel = "fa3", kernels = "eager" }
local a = t.op(r, "attention")
local F = 2 * 8192 ^ 2 * 128 * 32
t.near(3.5 * F / (a.fwd + a.bwd) / 1e12, 521.5, 0.005,
  "H200 FA3 forward + backward: the 8k decomposition's 521.5 TFLOP/s")

-- Split in the FlashAttention-3 paper's forward : backward proportion
-- (0.60 : 0.52, both scaled by 1.189): the backward's rate is 0.618 /
-- 0.713 of the forward's, so its time is 2.5 x 0.713 / 0.618 = 2.884 x
-- the forward's.  Same tolerance.
t.near(a.bwd / a.fwd, 2.5 * 0.713 / 0.618, 0.005, "backward : forward as the paper's proportion")

-- The H100 SXM is the same Hopper die at the same 700 W: the same rate
-- (the arch's entry; neither GPU overrides the attention fractions).
-- 1e-9: the same arithmetic.
local h = gp.train { model = "llama3.1-8b", gpu = "h100-sxm", gpus = 8, stack = "deepspeed",
                     zero = 2, seq = 8192, batch = 1, global_batch = 8, recompute = "none",
                     attn_kernel = "fa3", kernels = "eager" }
t.near(t.op(h, "attention").fwd, a.fwd, 1e-9, "H100 SXM: the arch's rate too")
