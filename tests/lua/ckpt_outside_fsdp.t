-- ckpt_outside_fsdp: an activation checkpoint around each FSDP unit
-- (transformers' gradient_checkpointing_enable on FSDP1-wrapped decoder
-- layers) gathers a unit three times a micro-batch -- the forward, the
-- recompute forward (which frees it again), the backward -- where a
-- checkpoint inside the unit gathers it twice (fairscale issue #777).
-- Run with ./gpuplan run tests/lua/ckpt_outside_fsdp.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(10)

local parts = t.parts

-- Llama 3 70B on 32 H100s (4 DGX H100 nodes), FSDP full_shard, full
-- recompute, 2 micro-batches of 1024 tokens, both overlaps off: the
-- third gather is one more all-gather of each layer's 16-bit weights
-- (855.65M x 2 B, gp.params) on the 32 ranks a micro-batch, on the path:
-- dp_comm grows by 2 x 80 x AG and nothing else moves (gp.comm prices
-- the same collective: 1e-6).
local P = gp.params("llama3-70b")
local ag = gp.comm { op = "all_gather", bytes = 2 * P.per_layer_max, gpus = 32,
                     system = "dgx-h100" }.time
local job = { model = "llama3-70b", gpu = "h100-sxm", gpus = 32, zero = 3, fsdp = "full_shard",
              batch = 1, global_batch = 64, seq = 1024, recompute = "full", method = "full",
              stack = "hf", overlap_param_gather = false, overlap_grad_reduce = false,
              margin = 0 }
local two = gp.train(job)
local three = gp.train(t.with(job, { ckpt_outside_fsdp = true }))
t.near(parts(three).dp_comm - parts(two).dp_comm, 2 * 80 * ag, 1e-6,
  "a third gather of every layer, each micro-batch")
t.near(three.step_s - two.step_s, 2 * 80 * ag, 1e-6, "and only it")

-- With overlap on it stays on the path: the backward's pre-backward hook
-- asks for the unit when its backward is due.
local on = t.with(job, { overlap_param_gather = true, overlap_grad_reduce = true })
t.near(gp.train(t.with(on, { ckpt_outside_fsdp = true })).step_s - gp.train(on).step_s,
  2 * 80 * ag, 1e-6, "exposed with overlap on too")

-- Refused where there is no checkpoint around a resharded unit.
t.raises(function() gp.train(t.with(job, { ckpt_outside_fsdp = true, recompute = "none" })) end,
  "it needs fsdp = full_shard (zero 3) and recompute = full (got zero 3, recompute = none)",
  "no recompute", true)
t.raises(function() gp.train(t.with(job, { ckpt_outside_fsdp = true, fsdp = "shard_grad_op",
  zero = 2 })) end, "ckpt_outside_fsdp is a checkpoint around each FSDP unit", "shard_grad_op", true)
-- DeepSpeed's stage 3 (zero 3 on the deepspeed stack) has no FSDP unit:
-- the refusal says the zero 3 it got is not FSDP's.
t.raises(function() gp.train(t.with(job, { ckpt_outside_fsdp = true, fsdp = false,
  stack = "deepspeed" })) end, "(got zero 3 without fsdp on the deepspeed stack, recompute = full)",
  "zero 3 without fsdp: named as such", true)
-- A case file's numbers arrive as floats (cjson): the zero stage is named
-- as written, 1, not 1.0.
t.raises(function() gp.train(t.with(job, { ckpt_outside_fsdp = true, fsdp = false,
  zero = 1.0 })) end, "(got zero 1, recompute = full)", "zero 1.0 named as 1", true)
-- Not a boolean: refused, the value shown as given.
t.raises(function() gp.train(t.with(job, { ckpt_outside_fsdp = "yes" })) end,
  "train: ckpt_outside_fsdp must be true or false (got string 'yes')", "a string refused", true)
-- A plan searches the recompute, but without a stated FSDP full_shard no
-- layout it prices is an FSDP unit: refused, not ignored; with it the
-- plan runs.
local sw = { model = "llama3-70b", gpu = "h100-sxm", gpus = 32, top = 1, stack = "hf",
             ckpt_outside_fsdp = true }
t.raises(function() gp.sweep(sw) end,
  "a plan prices it only with fsdp = full_shard given (got no fsdp)", "plan without fsdp", true)
t.ok(pcall(gp.sweep, t.with(sw, { fsdp = "full_shard" })), "plan with fsdp full_shard")
