-- Megatron-Core's alltoall token dispatcher moves the tokens through
-- memory-bound kernels of its own beside the all-to-alls: the permute of
-- the local tokens into their k copies, the received rows sorted by
-- local expert and back, the unpermute summing the k copies
-- (engine/train_layer.c moe_permute_costs: 2 u + 2 us + 4 ur bytes each
-- pass, u = Tn h A, us = k u, ur the received rows).  HybridEP does
-- them inside its dispatch and combine; DeepEP leaves the local permute
-- to Megatron-Core.  The experts' up
-- projection casts the dispatched bf16 tokens to fp8 in a kernel of its
-- own: no norm writes them (gemm_costs).  Transformer Engine's grouped
-- linear casts each expert's rows apart unless the scaling is delayed
-- (expert_loop): one kernel an expert for block scales, three for
-- current scaling, each with a memory-bound kernel's fixed part.
-- Run with ./gpuplan run tests/lua/train_moe_permute.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(10)

local op = t.op
-- H100 SXM streams at 3.35e12 B/s x 0.84 (the hopper arch's hbm).
local bw = 3.35e12 * 0.84
-- Qwen3-30B-A3B: hidden 2048, 128 experts, top 8; one sequence a
-- micro-batch on each GPU (tp 1), bf16 activations (A = 2 B).
local h, k = 2048, 8
-- capacity_factor 1: every rank runs the mean rows (the padded buffer), which the counts here take; the dropless default's chance skew is tests/lua/moe_balance.t's
local job = { model = "qwen3-30b-a3b", capacity_factor = 1, gpu = "h100-sxm", gpus = 8, ep = 8, batch = 1,
              global_batch = 8, stack = "megatron", zero = 1 }
local function run(x) return gp.train(t.with(job, x)) end

local s4, s8 = run { seq = 4096 }, run { seq = 8192 }
-- A balanced router at capacity factor 1: ur = us = k u.  The bytes are
-- 2 u + 2 k u + 4 k u = 50 u; doubling the tokens adds 50 u of
-- u = 4096 h 2 = 16.78 MB: 838.9 MB / 2.814e12 B/s = 298.1 us.  The
-- kernel's fixed fill and launch cancel in the difference: float
-- rounding only, 1e-6.
local u = 4096 * h * 2
t.near(op(s8, "moe_permute").fwd - op(s4, "moe_permute").fwd, 50 * u / bw, 1e-6,
       "alltoall: 2 u + 2 us + 4 ur bytes of permutes a forward")
t.near(op(s4, "moe_permute").bwd, op(s4, "moe_permute").fwd, 1e-12,
       "the backward's reverse kernels move the same bytes")
-- One local expert a GPU (EP 128 of 128 experts): no sort by local
-- expert, 2 u + 2 k u = 18 u a pass.  Against EP 8: 32 u less.
local e1 = gp.train(t.with(job, { seq = 4096, gpus = 128, ep = 128, global_batch = 128 }))
t.near(op(s4, "moe_permute").fwd - op(e1, "moe_permute").fwd, 32 * u / bw, 1e-6,
       "one local expert: the two sorts drop out (32 u)")
-- HybridEP permutes inside its own kernels.
t.is(op(run { seq = 4096, moe_dispatcher = "flex", moe_flex_backend = "hybridep" },
        "moe_permute"), nil, "HybridEP: no permute kernels of the dispatcher's own")
-- DeepEP delivers a token once to each rank holding any of its experts
-- and Megatron-Core permutes the received rows into their expert copies
-- and back (moe_deepep_permute_costs): 2 (rr + ur) bytes a pass, rr = f u
-- received, f = 8 (1 - prod_{i<8} (112 - i) / (128 - i)) = 5.34 of the 8
-- picks reach a rank (16 local experts of 128), ur = k u = 8 u copies.
-- Doubling the tokens adds 2 (f + 8) u / bw; fixed parts cancel: 1e-6.
local miss = 1
for i = 0, 7 do miss = miss * (112 - i) / (128 - i) end
local f = 8 * (1 - miss)
local d4 = run { seq = 4096, moe_dispatcher = "flex" }
local d8 = run { seq = 8192, moe_dispatcher = "flex" }
t.near(op(d8, "moe_permute").fwd - op(d4, "moe_permute").fwd, 2 * (f + 8) * u / bw, 1e-6,
       "DeepEP: Megatron-Core's local permute and unpermute, 2 (rr + ur) bytes a pass")
-- Without expert parallelism there is no dispatcher's exchange to price.
t.is(op(gp.train(t.with(job, { seq = 4096, ep = 1 })), "moe_permute"), nil, "EP 1: none")

-- fp8: the experts' input is cast by the grouped linear, not by a norm.
-- Current scaling then reads the cast's input once more for its amax,
-- 2 B per element of the Tk x h dispatched rows (Tk = 4096 x 8), where a
-- norm-fused cast would have taken 3 B more (the norm's bf16 write and
-- the cast's read): 32768 x 2048 x 2 / 2.814e12 = 47.7 us; and its
-- amax, scale and cast run per expert (below): 47 kernels more than
-- delayed scaling's one fused cast.
local fix = 3.9e-6 + 1e-6 + 1 / bw
-- (moe_fp8_pad none throughout: block scales pad each expert's rows to
-- 32 where the others pad to 16, which the wgrads' depth would show.)
local f8 = { seq = 4096, precision = "fp8", moe_fp8_pad = "none" }
local d = run(f8)
local c = run(t.with(f8, { fp8_scaling = "current" }))
t.near(op(c, "moe_up").fwd - op(d, "moe_up").fwd, 4096 * k * h * 2 / bw + 47 * fix, 1e-6,
       "moe_up: an unfused cast, current scaling adds one read of its input")

-- The per-expert casts.  EP 8 puts 16 of the 128 experts on each GPU,
-- all touched.  A kernel's fixed part on H100 is ROOF_MEM_FILL 3.9 us +
-- graph_launch 1 us (+ its one byte at 2.814e12 B/s): 4.9 us.  Block
-- scales cast in 16 kernels, not one: 15 kernels more, 73.5 us, in the
-- forward (the input) and the backward (dY); and their cast to both
-- copies moves 0.706 B an element more (engine/train_layer.c
-- MXFP8_BOTH_EXTRA, tests/lua/fp8_scaling.t): the 32768 x 768 input,
-- 6.3 us, and the 32768 x 2048 dY, 16.8 us.  1e-9: the same sums.
local mx = (52.34e-6 - 3.9e-6) * 7.67e12 * 0.85 / (8192 * 8192) - 4
local b = run(t.with(f8, { fp8_scaling = "block" }))
t.near(op(b, "moe_down").fwd - op(d, "moe_down").fwd, 15 * fix + 4096 * k * 768 * mx / bw, 1e-9,
       "block: a cast kernel per expert, 15 more than delayed's one, both copies")
t.near(op(b, "moe_down").bwd - op(d, "moe_down").bwd, 15 * fix + 4096 * k * h * mx / bw, 1e-9,
       "block: dY's casts too")
-- Current scaling: amax, scale and cast kernels per expert, 48 against
-- one, and the amax's read of the 32768 x 768 input (moe_down's):
-- 47 x 4.9 us + 32768 x 768 x 2 / 2.814e12 = 248.2 us.
t.near(op(c, "moe_down").fwd - op(d, "moe_down").fwd,
       47 * fix + 4096 * k * 768 * 2 / bw, 1e-9,
       "current: three kernels an expert, and the amax read")

t.done_testing()
