-- gp.rl's critic_batch: PPO's critic cutting its own micro-batches of N
-- whole sequences while the actor cuts by tokens (verl's
-- critic.ppo_micro_batch_size_per_gpu with critic.use_dynamic_bsz off,
-- its default, beside actor.use_dynamic_bsz).  The critic's forward
-- ("values") and update ("critic_update") are then its own passes, at the
-- actor's layout with micro_batch N over sequences at the mean length.
-- Run with ./gpuplan run tests/lua/rl_critic_batch.t.
local t = require "tap"
local gp = require "gpuplan"

local with, phase = t.with, t.phase

t.plan(8)

local base = { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 8, zero = 3, algo = "ppo",
               prompts = 256, group = 4, prompt_len = 100, response_len = 200,
               response_max = 1024, global_batch = 256, token_batch = 12000 }
local r0 = gp.rl(base)
local rc = gp.rl(with(base, { critic_batch = 1 }))
-- the same job with the actor itself at one sequence a micro-batch, no
-- token cuts: its forward and update are what the critic's passes are
-- priced as (a critic of the actor's shape, the actor's layout)
local r1 = gp.rl(with(base, { token_batch = 0, batch = 1 }))

-- Without critic_batch the critic runs the actor's passes: values = the
-- old log-prob forward, critic_update = actor_update (no GAE loop, no
-- EMA, no fp32 logits here).  Same arithmetic: 1e-9.
t.near(phase(r0, "values").seconds, phase(r0, "logprob").seconds, 1e-9,
  "default: the critic's forward is the actor's")
t.near(phase(r0, "critic_update").seconds, phase(r0, "actor_update").seconds, 1e-9,
  "default: the critic's update is the actor's")
-- Hand: with critic_batch 1 the critic's passes are the batch-1 job's
-- actor passes (same layout, 1 sequence at 100 + 200 tokens each).
t.near(phase(rc, "values").seconds, phase(r1, "logprob").seconds, 1e-9,
  "critic_batch 1: values = the forward at one sequence a micro-batch")
t.near(phase(rc, "critic_update").seconds, phase(r1, "actor_update").seconds, 1e-9,
  "critic_batch 1: critic_update = the update at one sequence a micro-batch")
-- and the actor keeps its own token cuts
t.near(phase(rc, "actor_update").seconds, phase(r0, "actor_update").seconds, 1e-12,
  "the actor's update unchanged")
-- Under FSDP (ZeRO-3) every micro-batch gathers the whole model: 1024
-- samples / 8 ranks = 128 micro-batches a rank against a few 12000-token
-- bins, so the critic's forward is slower, not faster.
t.ok(phase(rc, "values").seconds > phase(r0, "values").seconds,
  "one sequence a micro-batch: the critic's forward slower than the token cuts")
t.raises(function() gp.rl(with(base, { algo = "grpo", critic_batch = 1 })) end,
  "critic_batch is PPO's critic's micro-batch", "critic_batch under GRPO refused", true)
-- A critic on GPUs of its own (critic_gpus) is priced by that group's
-- passes, which critic_batch does not reach (engine/rl.c): refused by
-- name, where it once changed nothing in silence.
t.raises(function() gp.rl(with(base, { gpus = 16, critic_gpus = 8, critic_batch = 1 })) end,
  "with critic_gpus (the critic on a group of its own) it is not priced",
  "critic_batch with critic_gpus refused", true)
