-- A Megatron-Core MoE layer with expert parallelism launches, besides its
-- GEMMs, the router's top-k and the alltoall dispatcher's bookkeeping from
-- Python (engine/train_layer.c MOE_DISPATCH_OPS, 32 ops), and its host
-- waits on the device for the all-to-all's splits: a layer of few tokens
-- costs the host's launches, not the GPU's work.
-- Run with ./gpuplan run tests/lua/train_moe_dispatch.t.
local t = require "tap"
local gp = require "gpuplan"

-- Qwen3-30B-A3B on 8 H100s, one 512-token sequence a micro-batch: a
-- layer's GPU work is well under its launches' host time.
local function layer_fwd(ep)
  local r = gp.train { model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 8, ep = ep, seq = 512,
                       batch = 1, global_batch = 8, stack = "megatron", zero = 1 }
  return t.layer_fwd(r)
end
local op = 24.84e-6  -- GP_EAGER_OP_TIME: the host's time per launched op
-- The layer's op list launches 12 kernels (norms 2, qkv, rope, attention,
-- o_proj, router, the two expert GEMMs, the activation, residual adds 2);
-- with EP the dispatcher's 32 more: the forward is (12 + 32) x 24.84 us.
local f8, w8 = layer_fwd(8)
t.ok(w8 > 0, "EP 8: the host is the bound (a host_wait op)")
t.near(f8, (12 + 32) * op, 1e-9, "EP 8: a layer's forward = 44 launches x 24.84 us")
-- Without EP the dispatcher skips the all-to-all and its splits: not
-- charged; the 12 launches' 0.30 ms.
local f1, w1 = layer_fwd(1)
t.near(f1, math.max(f1 - w1, 12 * op), 1e-9,
  "EP 1: the slower of its GPU work and the op list's 12 launches")
t.ok(f1 < f8, "EP 1 is not charged the dispatcher's launches")

t.done_testing()
