-- unfused_permute with moe_dispatcher allgather: Megatron-Core's
-- all-gather dispatcher before its fused permute (core_v0.6.0's
-- MoEAllGatherTokenDispatcher) moves the token rows with element-wise
-- torch.gather and scatter over index maps expanded to the hidden width,
-- and three of its passes add with atomics (engine/train_layer.c
-- moe_allgather_unfused_costs, ATOMIC_SCATTER_SLOWDOWN).
-- Run with ./gpuplan run tests/lua/allgather_unfused_permute.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(7)

local op = t.op
-- H100 SXM streams at 3.35e12 B/s x 0.84 (the hopper arch's hbm).
local bw = 3.35e12 * 0.84
-- Mixtral 8x7B (hidden 4096, 8 experts, top 2) on 8 H100s at TP 8 with
-- sequence parallelism and no expert parallelism, one sequence a
-- micro-batch, bf16 activations (A = 2 B): the dispatcher gathers all T
-- tokens of the TP group (Tn = T / 8 a rank, x TP 8 x EP 1).
local h, k = 4096, 2
local job = { model = "mixtral-8x7b", gpu = "h100-sxm", gpus = 8, tp = 8, sp = true, ep = 1,
              batch = 1, global_batch = 1, stack = "megatron", zero = 1,
              moe_dispatcher = "allgather" }
local function run(x) return gp.train(t.with(job, x)) end

-- Fused (the default), the all-gather dispatcher's local permutation has
-- no op of its own (its all-gather and reduce-scatter are priced apart).
t.ok(op(run { seq = 4096 }, "moe_permute") == nil,
     "fused: no permutation op on the all-gather dispatcher")

-- The bytes a layer, with g the gathered tokens' bytes (T h 2) and r the
-- token-expert pairs' (k g / EP = 2 g).  Forward: the two gathers 2 r
-- each, zeros_like r, the scatter 2 r, the scores' multiply 2 r, the
-- global zeros g -- 9 r + g = 19 g -- and the scatter_add's rows r + g =
-- 3 g, atomic.  Backward: the scatter_add's and the scatter's gradients
-- (gathers, 2 r each), the multiply's 2 r and the scores' gradient's read
-- 2 r, the two gather gradients' zeros r and g -- 9 r + g = 19 g -- and
-- their scatter_adds, atomic, r + r and r + g = 7 g.  An atomic pass takes
-- 2.304 / 0.207 = 11.13x its rows' streaming time (DLBlas PR #66).  The
-- op's fixed fill cancels between two lengths: from 4096 to 8192 tokens g
-- grows by 4096 x 4096 x 2 B = 33.55 MB, the forward by (22 + 10.13 x 3)
-- g / bw = 52.4 g / 2.814e12 B/s = 624.7 us, the backward by (26 + 10.13
-- x 7) g / bw = 96.9 g / bw = 1155.4 us.  1e-6: float rounding.
local stall = 2.304 / 0.207 - 1
local g = 4096 * h * 2
local a = run { seq = 4096, unfused_permute = true }
local b = run { seq = 8192, unfused_permute = true }
t.near(op(b, "moe_permute").fwd - op(a, "moe_permute").fwd, (22 + stall * 3) * g / bw, 1e-6,
       "forward: 9 r + g streamed and the scatter_add's r + g at the atomic stall")
t.near(op(b, "moe_permute").bwd - op(a, "moe_permute").bwd, (26 + stall * 7) * g / bw, 1e-6,
       "backward: 9 r + g streamed and the two gather gradients' scatter_adds, atomic")

-- Expert parallelism 2 (8 GPUs: TP 4 x EP 2 over DP 2): the dispatcher
-- gathers over TP x EP, 4 x 2 x Tn = 2 T tokens (g doubles), and the
-- local experts' pairs are k x 2 T / EP 2 = 2 T rows (r = g, where at EP
-- 1 r = 2 g): from 4096 to 8192 tokens the forward grows by (9 r + g + r
-- + g streamed, the r + g atomic) = (12 + 10.13 x 2) x 2 x 33.55 MB /
-- 2.814e12 B/s = 769.3 us.  capacity_factor 1 holds each rank at its
-- mean rows (dropless, the default, adds the busiest rank's chance skew:
-- tests/c/t_moe_skew.c).  1e-6: float rounding.
do
  local e2 = { tp = 4, ep = 2, global_batch = 2, unfused_permute = true, capacity_factor = 1 }
  local a2 = run(t.with(e2, { seq = 4096 }))
  local b2 = run(t.with(e2, { seq = 8192 }))
  t.near(op(b2, "moe_permute").fwd - op(a2, "moe_permute").fwd, (12 + stall * 2) * 2 * g / bw,
         1e-6, "EP 2: the TP x EP group's tokens gathered, the local experts' pairs moved")
end

-- The alltoall dispatcher's own unfused path is untouched by this (its
-- test: unfused_permute.t); the flex and einsum dispatchers still refuse it.
t.raises(function() run { unfused_permute = true, moe_dispatcher = "flex" } end,
  "moe_dispatcher flex permutes otherwise: give moe_dispatcher = alltoall or allgather",
  "flex refused", true)
t.raises(function() run { unfused_permute = true, moe_dispatcher = "einsum", stack = "deepspeed" } end,
  "moe_dispatcher einsum permutes otherwise", "einsum refused", true)
t.ok(op(run { seq = 4096, unfused_permute = true }, "moe_permute").fwd > 0,
     "allgather accepts unfused_permute")
