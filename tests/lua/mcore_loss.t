-- Megatron-Core's native fused cross-entropy (gp.train's mcore_loss):
-- cross_entropy_loss_fusion with cross_entropy_fusion_impl 'native' runs
-- megatron/core/fusions/fused_cross_entropy.py, four jit_fuser graphs
-- (torch.compile from torch 2.2, megatron/core/jit.py), each returning or
-- mutating a T x V/tp fp32 tensor (core_v0.9.0): forward read A, write 4
-- (the .float() copy and its max), read 4 write 4 (subtract, exp, sum),
-- read 4 write 4 (div_): A + 20 B a logit; backward read 4 write 4 (the
-- in-place mul_) and write A (the bf16 cast): A + 8.  A one-kernel fused
-- loss, the default, moves A + 8 and A + 4 (engine/train_layer.c
-- train_ends_costs).
-- Run with ./gpuplan run tests/lua/mcore_loss.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(6)

-- Llama 3 8B on one H100 (no collectives), the megatron stack, 2
-- micro-batches of one 4096-token sequence, bf16 (A = 2 B a logit).
local job = { model = "llama3-8b", gpu = "h100-sxm", gpus = 1, stack = "megatron",
              batch = 1, global_batch = 2, seq = 4096, precision = "bf16",
              recompute = "none", margin = 0 }
local dev = gp.roofline { gpu = "h100-sxm" }.device
-- One memory-bound pass on the roofline (engine/roofline.c roof_eval, as
-- tests/lua/fsdp1_upcast.t): bytes / (mem_bw x hbm) + ROOF_MEM_FILL
-- (3.9 us) + the graph-launch gap.
local BW = dev.mem_bw * dev.hbm
local function K(bytes) return bytes / BW + 3.9e-6 + dev.graph_launch end

local base = gp.train(job)
local mc = gp.train(t.with(job, { mcore_loss = true }))
-- Hand derivation: L = 4096 x 128256 logits a micro-batch (TP 1), 2
-- micro-batches on the step's path, each with one forward and one
-- backward loss pass:
-- mc - base = 2 x (K(22 L) - K(10 L) + K(10 L) - K(6 L)) = 2 x (K(22 L) - K(6 L)).
-- Tolerance 1e-6 relative: the same sums in another order.
local L = 4096 * 128256
t.near((mc.step_s - base.step_s) / (2 * (K(22 * L) - K(6 * L))), 1, 1e-6,
  "mcore_loss: the native fused loss's four graphs over fp32 logits")

-- With unfused_loss the op-by-op loss stands whatever mcore_loss says
-- (A + 36 and A + 12: the same step with or without mcore_loss).
local u = gp.train(t.with(job, { unfused_loss = true }))
local um = gp.train(t.with(job, { unfused_loss = true, mcore_loss = true }))
t.near(um.step_s / u.step_s, 1, 1e-12, "unfused_loss: the op-by-op loss, mcore_loss or not")
-- and it is dearer than the native fused one: 2 x (K(38 L) + K(14 L)
-- - K(22 L) - K(10 L)) > 0.
t.ok(u.step_s > mc.step_s, "the op-by-op loss costs more than the native fused one")

-- mcore_loss names the loss train_ends_costs prices for compiled kernels:
-- under eager kernels, beside eager_loss or Liger's fused_linear_ce it
-- priced another loss and took the flag in silence; each is refused.
t.raises(function() gp.train(t.with(job, { mcore_loss = true, stack = "hf", kernels = "eager" })) end,
  "mcore_loss is Megatron-Core's vocab-parallel cross-entropy; with kernels = eager",
  "mcore_loss under eager kernels refused", true)
t.raises(function() gp.train(t.with(job, { mcore_loss = true, eager_loss = true })) end,
  "mcore_loss (Megatron-Core's vocab-parallel cross-entropy) and eager_loss",
  "mcore_loss with eager_loss refused", true)
t.raises(function() gp.train(t.with(job, { mcore_loss = true, stack = "hf", kernels = "fused",
    fused_linear_ce = true })) end,
  "and fused_linear_ce (Liger-Kernel's head and loss in one) are two different losses",
  "mcore_loss with fused_linear_ce refused", true)
