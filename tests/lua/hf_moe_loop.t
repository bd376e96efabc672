-- The Hugging Face modules' MoE block runs its experts one at a time in
-- Python, each after "idx, top_x = torch.where(expert_mask[expert_idx])",
-- a nonzero that syncs the host with the GPU (engine/train_layer.c
-- HF_MOE_ROUTE_OPS, HF_EXPERT_OPS): the host cannot launch ahead across
-- the experts, so each expert's stretch takes the longer of its launches
-- and its GPU work, begun once the host has launched the expert's first
-- linear (HF_EXPERT_LEAD_OPS).  The block's own kernels beyond the gate
-- and the experts' MLPs -- the routing, the token gather, the product
-- with the routing weights, index_add_ (element-wise atomic adds), and
-- their gradients -- are priced from their bytes (hf_moe_costs) as the op
-- moe_index.
-- Run with ./gpuplan run tests/lua/hf_moe_loop.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(8)

local tau = 24.84e-6   -- common.h GP_EAGER_OP_TIME: an x86 host's launch
local op = t.op
local fwd = t.fwd_total

-- Mixtral 8x7B, Hugging Face FSDP on 8 H100s, the eager kernels.
local job = { model = "mixtral-8x7b", gpu = "h100-sxm", gpus = 8, zero = 3, fsdp = "full_shard",
              method = "full", stack = "hf", kernels = "eager", margin = 0 }

-- Four sequences of 4096 tokens: every expert's GEMMs (about 4096 rows
-- each) outlast its ten launches, and attention's work the rest's
-- launches, so each of the 8 experts waits for three launches after its
-- sync (torch.where's, the gather's, w1's) and the layer's forward waits
-- 8 x 3 tau for the host (1e-9: the same sums).
local big = gp.train(t.with(job, { seq = 4096, batch = 4, global_batch = 32 }))
t.near(op(big, "host_wait").fwd, 8 * 3 * tau, 1e-9, "GPU-bound: three launches an expert")

-- The block's kernels (moe_index), T = 16384 tokens, K = 2 of E = 8
-- experts, R = T K rows, h = 4096, A = 2 B; fp32 routing (4 B), int64
-- indices (8 B).  H100 SXM streams at 3.35e12 x 0.84 B/s, and a kernel
-- pays the fill 3.9 us and the 1 us graph-launch gap
-- (tests/lua/unfused_act.t).  Forward: the softmax (A + 4) E, topk 4 E
-- + 12 K, the sum 4 K + 4, the divide 8 K + 4, the cast (4 + A) K, the
-- output's zeros A h, one_hot's zeros 8 K E and scatter 16 K, a token,
-- in 8 kernels; each expert's where (8 K T + 16 a row), gather (8 + 2 A
-- h a row), weights' gather (16 + 2 A), product (2 A h + A) and
-- index_add_ (8 + S A h: its atomic adds at S = 2.304 / 0.207 x (1 +
-- 1/8) of an element's bytes, HF_INDEX_ADD_STREAM, against the 3 A h a
-- plain read-read-write pass would stream), 5 kernels: R (48 + 3 A + 4 A
-- h + S A h) + 8 K T E.
-- Backward: per expert index_select (8 + 2 A h a row), grad x weights
-- (2 A h + A), grad x output (3 A h) and its sum (A h + A), the weights'
-- zeros (T K A) and accumulate (16 + 2 A a row), w1's and w3's input
-- gradients summed (3 A h a row), the gather's zeros (T A h) and
-- accumulate (8 + 3 A h a row), the sum into the input's gradient (3 T
-- A h), 10 kernels: R (32 + 4 A + 14 A h) + E T (K A + 4 A h); the
-- routing's five, T ((4 + A) K + 20 K + 4 E + 12 K + (8 + A) E).
-- 1e-6: float rounding.
local bw, k1 = 3.35e12 * 0.84, 3.9e-6 + 1e-6
local T, K, E, h, A = 16384, 2, 8, 4096, 2
local R = T * K
local route = T * ((A + 4) * E + 4 * E + 12 * K + 4 * K + 4 + 8 * K + 4 + (4 + A) * K + A * h
                   + 8 * K * E + 16 * K)
local S = 2.304 / 0.207 * (1 + 1 / 8)
local per = R * (48 + 3 * A + 4 * A * h + S * A * h) + 8 * K * T * E
t.near(op(big, "moe_index").fwd, (route + per) / bw + (8 + 5 * E) * k1, 1e-6,
  "moe_index forward: the routing, and per expert where, gathers, product, atomic index_add_")
local back = R * (32 + 4 * A + 14 * A * h) + E * T * (K * A + 4 * A * h)
  + T * ((4 + A) * K + 20 * K + 4 * E + 12 * K + (8 + A) * E)
t.near(op(big, "moe_index").bwd, back / bw + (10 * E + 5) * k1, 1e-6,
  "moe_index backward: E whole-input zeros and sums, the rows' gradients")

-- DeepSpeed stage 3 (no FSDP), the same GPU-bound job: before w1's
-- launch the host also runs the forward pre-hooks of the expert module
-- (2: PostBackwardFunctionModule's apply, fetch's wait_stream) and of w1
-- (7: those and fetch's event query, handle wait, event record, the
-- prefetch's torch.empty and all-gather launch), so each expert waits 3
-- + 2 + 7 = 12 launches: 8 x 12 tau (1e-9).
local ds = gp.train(t.with(job, { seq = 4096, batch = 4, global_batch = 32, stack = "deepspeed",
                                  fsdp = false }))
t.near(op(ds, "host_wait").fwd, 8 * 12 * tau, 1e-9, "DeepSpeed stage 3: twelve launches an expert")

-- One sequence of 16 tokens: the host's launches outlast everything.
-- The rest of the layer: the two RMSNorms 8 each, q, k, v 3, rope 10 (5
-- for q and 5 for k), attention 1, o_proj 1, the router's linear 1, its
-- softmax, topk, sum, /=, .to, zeros and one_hot 7, the two residual
-- adds 2, the attention output's copy 1: 42 launches.  Each expert: w1
-- and w3 2, SiLU and the product 2, w2 1, and the loop's where, index,
-- routing weights' index and multiply, index_add_ 5: 10.  And before the
-- layer's first kernel FSDP1 (the hf stack's full_shard) points the
-- unit's 31 parameters at its gathered flat parameter (q, k, v, o, the
-- two norms, the router's gate and the 8 experts' w1, w3, w2;
-- engine/train_layer.c FSDP1_VIEW_S, 6.112 ms / 400 each).  The forward
-- is (42 + 8 x 10) x tau + 31 x 15.28 us = 122 x tau + 0.474 ms (1e-9).
local VIEW_S = 6.112e-3 / 400
local small = gp.train(t.with(job, { seq = 16, batch = 1, global_batch = 8 }))
t.near(fwd(small), 122 * tau + 31 * VIEW_S, 1e-9,
  "host-bound: 42 launches, 8 experts of 10 and FSDP1's 31 views")
-- ... and does not move with the tokens while the host bounds it.
local small2 = gp.train(t.with(job, { seq = 32, batch = 1, global_batch = 8 }))
t.near(fwd(small2), fwd(small), 1e-12, "host-bound: the same at 32 tokens")

-- The fused kernels (one grouped GEMM call, no Python loop) keep the
-- host ahead of the GPU: no wait at 4096 x 4.
local fused = gp.train(t.with(job, { seq = 4096, batch = 4, global_batch = 32, kernels = "fused" }))
local hw = op(fused, "host_wait")
t.near(hw and hw.fwd or 0, 0, 0, "fused: no wait")
t.is(op(fused, "moe_index"), nil, "fused: no Hugging Face block kernels")
