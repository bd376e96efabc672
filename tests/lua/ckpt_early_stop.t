-- ckpt_early_stop: full recompute as PyTorch's non-reentrant checkpoint
-- (torch >= 2.1, CheckpointImpl.NO_REENTRANT), which stops re-running a
-- block once the last tensor its forward saved is packed again -- the MLP
-- down projection's input, packed before that GEMM runs -- so the down
-- projection and the closing residual add are not recomputed
-- (engine/train_layer.c early_stop_tail).  llm-foundry's profile sets it
-- where a case checkpoints.
-- Run with ./gpuplan run tests/lua/ckpt_early_stop.t.
local t = require "tap"
local gp = require "gpuplan"
local validate = require "gpuplan.validate"

t.plan(11)

local parts = t.parts

-- Llama 2 7B (32 layers) on 8 A100s, FSDP full_shard, full recompute, 4
-- sequences of 2048 tokens a micro-batch, 2 micro-batches (global 64).
-- The recompute part is layers x micro-batches x what one layer re-runs:
-- with the early stop it shrinks by 32 x 2 x (mlp_down's forward + half
-- the residual op's forward, the two adds priced together), read from
-- the result's own per-op rows; nothing else changes.  Tolerance 1e-9:
-- the same sums in another order.
local job = { model = "llama2-7b", gpu = "a100-sxm-80gb", gpus = 8, zero = 3,
              fsdp = "full_shard", batch = 4, global_batch = 64, seq = 2048,
              recompute = "full", stack = "hf", margin = 0 }
local full = gp.train(job)
local early = gp.train(t.with(job, { ckpt_early_stop = true }))
local tail = t.op(full, "mlp_down").fwd + t.op(full, "residual").fwd / 2
t.near(parts(full).recompute - parts(early).recompute, 32 * 2 * tail, 1e-9,
  "the down projection and one residual add, each layer and micro-batch, are not re-run")
t.near(parts(early).compute, parts(full).compute, 1e-12, "the forward and backward unchanged")
t.near(full.step_s - early.step_s, 32 * 2 * tail, 1e-9, "the step shorter by that alone")

-- Where something after the down projection saves a tensor, or the
-- linears are custom autograd Functions that save after their kernels,
-- the whole forward re-runs: fp8 linears (H100), a MoE block (Mixtral).
local h = t.with(job, { gpu = "h100-sxm", precision = "fp8" })
t.near(gp.train(t.with(h, { ckpt_early_stop = true })).step_s, gp.train(h).step_s, 1e-12,
  "fp8 linears: nothing left out")
local moe = t.with(job, { model = "mixtral-8x7b", gpus = 16, ep = 1, global_batch = 32,
                          batch = 1, seq = 1024 })
t.near(gp.train(t.with(moe, { ckpt_early_stop = true })).step_s, gp.train(moe).step_s, 1e-12,
  "a MoE block: nothing left out")

-- Refused where there is no full recompute for it to shorten.
t.raises(function() gp.train(t.with(job, { ckpt_early_stop = true, recompute = "none" })) end,
  "ckpt_early_stop is how PyTorch's non-reentrant checkpoint re-runs a block: it needs "
  .. "recompute = full (got recompute = none)", "no recompute", true)
t.raises(function() gp.train(t.with(job, { ckpt_early_stop = true, recompute = "selective" })) end,
  "it needs recompute = full (got recompute = selective)", "selective recompute", true)
t.raises(function() gp.train(t.with(job, { ckpt_early_stop = "yes" })) end,
  "train: ckpt_early_stop must be true or false (got string 'yes')", "a string refused", true)
-- A plan searches the recompute: the flag prices its full layouts.
t.ok(pcall(gp.sweep, { model = "llama2-7b", gpu = "a100-sxm-80gb", gpus = 8, top = 1,
  ckpt_early_stop = true }), "a plan takes it")

-- llm-foundry's profile: on where the table's row checkpoints, and only
-- there.
local cat = gp.catalog()
local rows = {}
for _, c in ipairs(validate.read("validation/cases.json")) do rows[c.id] = c end
local ck = validate.predict(rows["llmfoundry-a100-80-mpt13b-s1024-8gpu"], cat)
local no = validate.predict(rows["llmfoundry-a100-80-mpt13b-s2048-8gpu"], cat)
t.ok(ck.defaults:find("ckpt_early_stop=true (Composer's CheckpointImpl.NO_REENTRANT", 1, true),
  "llm-foundry's checkpointed row: the non-reentrant checkpoint")
t.ok(not no.defaults:find("ckpt_early_stop", 1, true), "its row without checkpointing: none")
