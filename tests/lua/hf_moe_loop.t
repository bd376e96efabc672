-- The Hugging Face modules' MoE block runs its experts one at a time in
-- Python, each after "idx, top_x = torch.where(expert_mask[expert_idx])",
-- a nonzero that syncs the host with the GPU (engine/train_layer.c
-- HF_MOE_ROUTE_OPS, HF_EXPERT_OPS): the host cannot launch ahead across
-- the experts, so each expert's stretch takes the longer of its launches
-- and its GPU work begun one launch after the sync.
-- Run with ./gpuplan run tests/lua/hf_moe_loop.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(4)

local tau = 24.84e-6   -- common.h GP_EAGER_OP_TIME: an x86 host's launch
local function op(r, name)
  for _, o in ipairs(r.ops) do if o.name == name then return o end end
end
local function fwd(r)
  local s = 0
  for _, o in ipairs(r.ops) do s = s + o.fwd end
  return s
end

-- Mixtral 8x7B, Hugging Face FSDP on 8 H100s, the eager kernels.
local job = { model = "mixtral-8x7b", gpu = "h100-sxm", gpus = 8, zero = 3, fsdp = "full_shard",
              method = "full", stack = "hf", kernels = "eager", margin = 0 }

-- Four sequences of 4096 tokens: every expert's GEMMs (about 4096 rows
-- each) outlast its ten launches, and attention's work the rest's
-- launches, so each of the 8 experts waits one launch after its sync
-- and the layer's forward waits 8 x tau for the host (1e-9: the same
-- sums).
local big = gp.train(t.with(job, { seq = 4096, batch = 4, global_batch = 32 }))
t.near(op(big, "host_wait").fwd, 8 * tau, 1e-9, "GPU-bound: one launch an expert")

-- One sequence of 16 tokens: the host's launches outlast everything.
-- The rest of the layer: the two RMSNorms 8 each, q, k, v 3, rope 10 (5
-- for q and 5 for k), attention 1, o_proj 1, the router's linear 1, its
-- softmax, topk, sum, /=, .to, zeros and one_hot 7, the two residual
-- adds 2, the attention output's copy 1: 42 launches.  Each expert: w1
-- and w3 2, SiLU and the product 2, w2 1, and the loop's where, index,
-- routing weights' index and multiply, index_add_ 5: 10.  The forward
-- is (42 + 8 x 10) x tau = 122 x tau (1e-9).
local small = gp.train(t.with(job, { seq = 16, batch = 1, global_batch = 8 }))
t.near(fwd(small), 122 * tau, 1e-9, "host-bound: 42 launches and 8 experts of 10")
-- ... and does not move with the tokens while the host bounds it.
local small2 = gp.train(t.with(job, { seq = 32, batch = 1, global_batch = 8 }))
t.near(fwd(small2), fwd(small), 1e-12, "host-bound: the same at 32 tokens")

-- The fused kernels (one grouped GEMM call, no Python loop) keep the
-- host ahead of the GPU: no wait at 4096 x 4.
local fused = gp.train(t.with(job, { seq = 4096, batch = 4, global_batch = 32, kernels = "fused" }))
local hw = op(fused, "host_wait")
t.near(hw and hw.fwd or 0, 0, 0, "fused: no wait")
