-- job:step{...} refuses the layouts gp.train refuses under the options
-- that hold for one sharding only (zero_reduce allreduce and zero3_gather
-- per_param: DeepSpeed's; ckpt_outside_fsdp: FSDP's), by the same rule
-- (gpuplan.train's sharding_rule): a step that turned fsdp on, or moved
-- zero or the recompute away from what the option needs, was priced.
-- Run with ./gpuplan run tests/lua/job_sharding.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(14)

local AR = "step: zero_reduce allreduce is DeepSpeed's stage 1 and 2: it needs zero 1 or 2 "
  .. "without fsdp"
local PP = "step: zero3_gather per_param is DeepSpeed's stage 3: it needs zero 3 without fsdp"
local CK = "step: ckpt_outside_fsdp is a checkpoint around each FSDP unit: it needs fsdp = "
  .. "full_shard (zero 3) and recompute = full"

-- DeepSpeed's ZeRO on one DGX H100 (the deepspeed stack: no FSDP unless
-- a step asks for it).
local ds = { model = "megatron-gpt-1.7b", gpu = "h100-sxm", gpus = 8, method = "pretrain",
  seq = 2048, stack = "deepspeed", global_batch = 32, batch = 1, recompute = "none" }

local ar = gp.train_job(t.with(ds, { zero = 1, zero_reduce = "allreduce" }))
t.ok(ar:step { zero = 2 }.step_s > 0, "allreduce: a zero 2 step without fsdp is priced")
t.raises(function() ar:step { fsdp = "shard_grad_op" } end, AR, "allreduce: zero 2 with fsdp",
  true)
t.raises(function() ar:step { zero = 3 } end, AR, "allreduce: zero 3", true)
t.raises(function() ar:step { zero = 0 } end, AR, "allreduce: zero 0", true)
-- gp.train says the same of that layout (one rule).
t.raises(function() gp.train(t.with(ds, { zero = 2, fsdp = "shard_grad_op", zero_reduce = "allreduce" }))
  end, "train: zero_reduce allreduce is DeepSpeed's stage 1 and 2", "gp.train: the same", true)

local pp = gp.train_job(t.with(ds, { zero = 3, zero3_gather = "per_param" }))
t.ok(pp:step { batch = 2 }.step_s > 0, "per_param: a zero 3 step without fsdp is priced")
t.raises(function() pp:step { fsdp = true } end, PP, "per_param: zero 3 with fsdp", true)
t.raises(function() pp:step { zero = 1 } end, PP, "per_param: zero 1", true)

-- FSDP full_shard with its checkpoint outside each unit.
local fs = gp.train_job { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, method = "pretrain",
  seq = 4096, zero = 3, fsdp = "full_shard", recompute = "full", ckpt_outside_fsdp = true,
  global_batch = 16, batch = 1 }
t.ok(fs:step { batch = 2 }.step_s > 0, "ckpt_outside_fsdp: a full_shard step is priced")
t.raises(function() fs:step { fsdp = false } end, CK .. " (got zero 3 without fsdp on the ",
  "ckpt_outside_fsdp: fsdp false", true)
t.raises(function() fs:step { recompute = "selective" } end, CK
  .. " (got zero 3, recompute = selective)", "ckpt_outside_fsdp: selective recompute", true)
-- A zero 2 step is gp.train's full_shard at zero 2, which the strategy
-- refuses before ckpt_outside_fsdp is asked (as gp.train does).
t.raises(function() fs:step { zero = 2 } end, "step: fsdp full_shard is zero 3, not 2",
  "ckpt_outside_fsdp: zero 2", true)

-- An RL job's actor step: the same rule.
local rl = gp.rl_job { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 16, prompts = 64,
  group = 8, response_len = 2048, zero = 1, stack = "deepspeed", zero_reduce = "allreduce" }
t.ok(rl:step { zero = 2 }.step_s > 0, "rl allreduce: a zero 2 actor step is priced")
t.raises(function() rl:step { fsdp = "shard_grad_op" } end, AR, "rl allreduce: zero 2 with fsdp",
  true)
