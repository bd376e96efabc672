-- gp.rl's rank_skew: verl balances a step's batch over the DP ranks
-- (trainer.balance_batch) but each rank cuts its share into mini-batches
-- in order, so a mini-batch's share is an unbalanced draw and every
-- optimizer step waits for the busiest rank (engine/rl_lengths.c
-- rl_rank_skew, rl_sched.c rl_skewed).
-- Run with ./gpuplan run tests/lua/rl_rank_skew.t.
local t = require "tap"
local gp = require "gpuplan"

local with, phase = t.with, t.phase

-- Qwen2.5-7B GRPO on 8 H100s, ZeRO-1 (dp 8), 64 x 8 = 512 samples in
-- mini-batches of 128: each rank trains k = 128 / 8 = 16 of them a step.
-- Uniform responses 200..1800 (mean 1000, sd 1600 / sqrt(12) = 461.88)
-- after a 100-token prompt (mean 1100): the busiest of 8 ranks trains
-- 1 + z(8) 461.88 / (1100 sqrt(16)) = 1.149710 of the mean's tokens,
-- z(8) = 1.42618 (Blom's plotting position through Shore's inverse
-- normal, the C test's derivation).
local base = { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 8, zero = 1, recompute = "full",
               prompts = 64, group = 8, prompt_len = 100, response_len = 1000,
               response_max = 1800, response_dist = "uniform", global_batch = 128 }
local r0, r1 = gp.rl(base), gp.rl(with(base, { rank_skew = true }))
local f = 1.149710

-- The update's forward and backward stretch by f; its gradient
-- reduction and optimizer step (what does not scale with the tokens) do
-- not.  Four optimizer steps a step.  Tolerance 1e-5 (relative): f is
-- rounded to six places, 1e-6 of f - 1 = 0.15 is 7e-6.
local u = r0.update.parts
local per = r0.update.step_s - u.optimizer - u.dp_comm - u.zero_gather
t.is(r0.opt_steps, 4, "512 samples in mini-batches of 128: 4 optimizer steps")
t.near(phase(r1, "actor_update").seconds - phase(r0, "actor_update").seconds,
  4 * (f - 1) * per, 1e-5,
  "rank_skew: each step's forward and backward at the busiest rank's tokens")
-- The forwards over the whole step's batch are balanced: unchanged.
t.is(phase(r1, "logprob").seconds, phase(r0, "logprob").seconds,
  "rank_skew: the log-probability pass over the balanced batch is unchanged")
-- One rank (dp 1: 4 GPUs at tp 4) or every response as long (fixed lengths)
-- waits for nobody.
t.is(phase(gp.rl(with(base, { rank_skew = true, gpus = 4, tp = 4 })), "actor_update").seconds,
  phase(gp.rl(with(base, { gpus = 4, tp = 4 })), "actor_update").seconds, "rank_skew: one rank is even")
local fixed = { response_dist = "fixed", response_max = 1000 }
t.is(phase(gp.rl(with(with(base, fixed), { rank_skew = true })), "actor_update").seconds,
  phase(gp.rl(with(base, fixed)), "actor_update").seconds, "rank_skew: equal lengths are even")
-- Padded sequences are even shares, packed ones price their own skew
-- (rl_pack_skew.t): refused together.
t.raises(function() gp.rl(with(base, { rank_skew = true, pad = true })) end,
  "rl: pad makes every rank's share even; rank_skew is each rank's unbalanced share",
  "rank_skew with pad", true)
t.raises(function() gp.rl(with(base, { rank_skew = true, pack_tokens = 4096 })) end,
  "rl: pack_tokens deals its bins out evenly and prices the busiest rank's tokens itself",
  "rank_skew with pack_tokens", true)
t.raises(function() gp.rl(with(base, { rank_skew = 1 })) end, "rank_skew",
  "rank_skew must be a boolean", true)
t.done_testing()
