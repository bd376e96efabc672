-- gp.rl's gae_ops: PPO's advantage estimate as a Python loop over the
-- response positions, once per training micro-batch (DeepSpeed-Chat's
-- ppo_trainer.get_advantages_and_returns, OpenRLHF's and verl's GAE),
-- each op an eager op's host time, added to the actor's update.
-- Run with ./gpuplan run tests/lua/rl_gae.t.
local t = require "tap"
local gp = require "gpuplan"

local with, phase = t.with, t.phase

t.plan(7)

-- PPO on Qwen2.5-7B, 8 H100s colocated, ZeRO-3 (dp 8), micro-batch 4;
-- 64 prompts x 8 = 512 samples, every response 1024 tokens (fixed: the
-- loop's width is the response length).
local base = { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 8, algo = "ppo", zero = 3,
               recompute = "full", prompts = 64, group = 8, response_len = 1024,
               batch = 4 }
local r0 = gp.rl(base)
local r5 = gp.rl(with(base, { gae_ops = 5 }))
t.is(r0.gae_host, 0, "gae_ops 0: no loop")
-- Calls: 512 samples / (dp 8 x micro-batch 4) = 16 micro-batches a rank,
-- one epoch; each loops 1024 positions x 5 ops x GP_EAGER_OP_TIME
-- 24.84 us (engine/common.h): 16 x 1024 x 5 x 24.84e-6 = 2.0349 s.
local want = 16 * 1024 * 5 * 24.84e-6
t.ok(math.abs(r5.gae_host - want) < 1e-9 * want,
  string.format("gae_host = 16 x 1024 x 5 x 24.84 us = %.4f s (got %.4f)", want, r5.gae_host))
t.ok(math.abs(phase(r5, "actor_update").seconds - phase(r0, "actor_update").seconds - want)
  < 1e-9 * want, "the loop adds to the actor's update")
t.is(phase(r5, "critic_update").seconds, phase(r0, "critic_update").seconds,
  "the actor-shaped critic does not repeat it")
t.is(r5.gae_ops, 5, "gae_ops in the result, as given")

-- Refusals.
local ok, e = pcall(gp.rl, with(base, { algo = "grpo", gae_ops = 5 }))
t.ok(not ok and tostring(e):find("gae_ops is PPO's advantage estimate", 1, true),
  "GRPO has no value function: refused")
ok, e = pcall(gp.rl, with(base, { gae_ops = -1 }))
t.ok(not ok and tostring(e):find("gae_ops", 1, true), "a negative count is refused")
