-- PyTorch FSDP issues a unit's forward all-gather from the host, at that
-- unit's pre-forward hook (forward_prefetch off, Accelerate's and the
-- wrapper's default), and the host gets there while the previous unit's
-- kernels still run -- unless the layer's forward waits for the GPU on
-- the host, as the Hugging Face MoE loop's torch.nonzero does: then only
-- what the GPU has left after the last wait hides the next gather
-- (engine/train_stage.c fsdp_fwd_window).  The backward's collectives
-- follow overlap_grad_reduce alone under FSDP (fsdp_bwd_overlap).
-- Run with ./gpuplan run tests/lua/fsdp_fwd_gather.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(5)

local tau = 24.84e-6   -- common.h GP_EAGER_OP_TIME: an x86 host's launch
local function ag(model)
  local L = 2 * gp.params(model).per_layer_max
  return gp.comm { op = "all_gather", bytes = L, gpus = 32, system = "dgx-h100" }.time
end
local part = t.step_part  -- the part's table (seconds, hidden, ...)
local op = t.op

-- Llama 3 70B, FSDP1 full_shard over 32 H100s (4 DGX H100 nodes), one
-- sequence of 2048 tokens, the eager modules, the backward's traffic on
-- the path (overlap_grad_reduce off).  A layer's forward (about 6.8 ms)
-- outlasts its gather of 2 x 855.65M bytes (about 4.8 ms), so each
-- layer's gather but the first (which precedes the first forward) hides
-- whole: 79 ag(L) hidden (1e-6: the engine's own collective model).
local job = { model = "llama3-70b", gpu = "h100-sxm", gpus = 32, zero = 3, fsdp = "full_shard",
              batch = 1, global_batch = 32, seq = 2048, recompute = "full", method = "full",
              stack = "hf", kernels = "eager", overlap_param_gather = true,
              overlap_grad_reduce = false, margin = 0 }
local on = gp.train(job)
t.near(part(on, "zero_gather").hidden, 79 * ag("llama3-70b"), 1e-6,
  "FSDP, no host wait in the layer: each gather under the forward before it")

-- The backward's gathers and reduce-scatters do not move with the
-- forward's flag: dp_comm the same with overlap_param_gather off (1e-12).
local off = gp.train(t.with(job, { overlap_param_gather = false }))
t.near(part(on, "dp_comm").seconds, part(off, "dp_comm").seconds, 1e-12,
  "FSDP: the backward follows overlap_grad_reduce alone")

-- DeepSpeed's stage 3 keeps its rule: either flag puts the backward's
-- traffic under the backward, so some of it hides.
local ds = gp.train(t.with(job, { stack = "deepspeed", fsdp = false }))
t.ok(part(ds, "dp_comm").hidden > 0, "DeepSpeed stage 3: overlap_param_gather hides backward traffic")

-- Mixtral 8x7B, the same job, four sequences of 4096 tokens: GPU-bound,
-- each expert's stretch is 3 tau + g1 (its GPU work begins when the host
-- has launched torch.where's rest, the gather and w1 after its sync:
-- tests/lua/hf_moe_loop.t), g1 = (moe_up + moe_act + moe_down) forward /
-- 8 plus the expert's own kernels of the block (where, the two gathers,
-- the product, index_add_: 5 kernels of 4.9 us and, over T = 16384 tokens
-- and R = 2 T rows, h 4096, A 2 B, (8 x 2 T x 8 + R (48 + 3 A + 4 A h + S
-- A h)) / 2.814e12 B/s for the 8, S = 2.304 / 0.207 x 9/8 the atomic
-- index_add_'s streamed bytes an element, hf_moe_loop.t), while the host launches the stretch's 10 ops
-- in 10 tau.  The next layer's gather is issued when the host is done:
-- 3 tau + g1 - 10 tau of GPU work left to hide it, below ag(L) (about
-- 7.8 ms) -- 31 layers (1e-6: the same sums).
local mjob = t.with(job, { model = "mixtral-8x7b", seq = 4096, batch = 4, global_batch = 128 })
local mx = gp.train(mjob)
local T, A, h = 16384, 2, 4096
local S = 2.304 / 0.207 * (1 + 1 / 8)
local gx = (8 * 2 * T * 8 + 2 * T * (48 + 3 * A + 4 * A * h + S * A * h)) / (3.35e12 * 0.84)
  + 8 * 5 * 4.9e-6
local g1 = (op(mx, "moe_up").fwd + op(mx, "moe_act").fwd + op(mx, "moe_down").fwd + gx) / 8
t.near(part(mx, "zero_gather").hidden, 31 * (g1 - 7 * tau), 1e-6,
  "the HF MoE loop: only the last expert's GPU tail hides the next gather")

-- The fused kernels (one grouped GEMM call, no Python loop) wait nowhere:
-- the forward (about 25 ms) hides each gather whole.  A Mixtral layer
-- gathers its experts (45097.16M / 32 layers) and the rest
-- (per_layer_max less them) as two collectives (train_stage.c
-- kind_colls): 31 x (ag(2 x dense) + ag(2 x experts)) (1e-6).
local MP = gp.params("mixtral-8x7b")
local ex = MP.experts / 32
local function ag32(b) return gp.comm { op = "all_gather", bytes = b, gpus = 32, system = "dgx-h100" }.time end
local fu = gp.train(t.with(mjob, { kernels = "fused" }))
t.near(part(fu, "zero_gather").hidden, 31 * (ag32(2 * (MP.per_layer_max - ex)) + ag32(2 * ex)), 1e-6,
  "fused MoE kernels: each gather under the forward before it")
