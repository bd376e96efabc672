-- gp.rl's gen_empty_cache: the framework's torch.cuda.empty_cache() calls
-- around each generate call (verl's FSDP hybrid worker: 4), each
-- gpuplan.rl.EMPTY_CACHE of host time, on the weight sync's path -- once
-- for the step's rollout and once more for each validation batch.
-- Run with ./gpuplan run tests/lua/rl_gen_empty_cache.t.
local t = require "tap"
local gp = require "gpuplan"
local rl = require "gpuplan.rl"

local with, phase = t.with, t.phase

-- peft PR #2894: (65 - 45) s / 250 steps = 0.080 s an empty_cache().
t.near(rl.EMPTY_CACHE, 0.080, 1e-12, "the measured rate of one empty_cache()")

local base = { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 8, zero = 3, recompute = "full",
               prompts = 64, group = 8, response_len = 1024 }
-- 4 calls x 0.080 s = 0.32 s on the weight sync and the colocated step
-- (exact up to rounding: 1e-9 relative).
local r0, r1 = gp.rl(base), gp.rl(with(base, { gen_empty_cache = 4 }))
t.near(phase(r1, "weight_sync").seconds - phase(r0, "weight_sync").seconds, 0.32, 1e-9,
  "gen_empty_cache: 4 x 0.080 s on the weight sync")
t.near(r1.step_s - r0.step_s, 0.32, 1e-9, "gen_empty_cache: on the colocated step's path")
-- With a validation pass of 100 prompts in batches of 30 every 2 steps:
-- ceil(100 / 30) = 4 generate calls every 2 steps, 2 a step, each 0.32 s
-- more: 0.32 + 2 x 0.32 = 0.96 s a step.
local v = { val_every = 2, val_prompts = 100, val_batch = 30 }
local v0, v1 = gp.rl(with(base, v)), gp.rl(with(base, with(v, { gen_empty_cache = 4 })))
t.near(v1.step_s - v0.step_s, 0.96, 1e-9,
  "gen_empty_cache: each validation batch is a generate call of its own")
t.raises(function() gp.rl(with(base, { gen_empty_cache = -1 })) end, "gen_empty_cache",
  "a negative count is refused, naming the option", true)
-- a count of calls: half a call is no call the framework makes.
t.raises(function() gp.rl(with(base, { gen_empty_cache = 0.5 })) end,
  "gen_empty_cache must be a whole number", "a fractional count is refused", true)
-- The count is a hybrid worker's switch between training and generation:
-- a rollout on GPUs of its own makes none (verl d7c3d12's trainer runs
-- only the hybrid engine; at b178a3c a rollout-only worker skips the
-- switch, "For rollout only, we do not switch context."), so separate
-- pools refuse it, naming the option; without it they price as before.
local sep = with(base, { gpus = 16, rollout_gpus = 8 })
t.raises(function() gp.rl(with(sep, { gen_empty_cache = 4 })) end,
  "gen_empty_cache counts the torch.cuda.empty_cache() calls of a hybrid worker",
  "gen_empty_cache with rollout_gpus is refused", true)
t.raises(function() gp.rl(with(base, { colocated = false, gpus = 16, gen_empty_cache = 4 })) end,
  "gen_empty_cache", "gen_empty_cache with colocated = false is refused", true)
t.ok(gp.rl(with(sep, { gen_empty_cache = 0 })).step_s > 0,
  "gen_empty_cache 0 (none) beside rollout_gpus is accepted")
t.done_testing()
