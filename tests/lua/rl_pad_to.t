-- gp.rl's pad_to, critic_pad_to and critic_token_batch: verl's batches
-- without use_remove_padding hold every sequence in max_prompt_length +
-- max_response_length slots, the attention over the real tokens (the
-- GEMMs pay the padding); verl's critic with use_dynamic_bsz cuts its
-- passes at its own ppo_max_token_len_per_gpu of real tokens.
-- Run with ./gpuplan run tests/lua/rl_pad_to.t.
local t = require "tap"
local gp = require "gpuplan"

local with, phase = t.with, t.phase
local function secs(r, name) return phase(r, name).seconds end

-- Fixed lengths: every sequence is 104 + 256 = 360 tokens.
local base = { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 8, zero = 3, recompute = "full",
               prompts = 256, group = 2, prompt_len = 104, response_len = 256,
               response_dist = "fixed", batch = 4 }

-- pad_to = 360 pads nothing: the slots a sequence are its tokens (360 /
-- 360 = 1) and the attention's keys scale by 360 / 360 = 1, so every
-- phase is the unpadded one (exact up to rounding: 1e-12 relative).
local r0, r1 = gp.rl(base), gp.rl(with(base, { pad_to = 360 }))
t.near(r1.step_s, r0.step_s, 1e-12, "pad_to at the sequence's own length changes nothing")
-- Twice the slots (720): the GEMMs run over twice the tokens, the
-- attention over the same real ones: the update and the log-probability
-- forward take longer, by less than twice (the attention and the
-- optimizer do not grow).
local r2 = gp.rl(with(base, { pad_to = 720 }))
t.ok(secs(r2, "actor_update") > secs(r0, "actor_update") * 1.2,
  "pad_to 720: the update's GEMMs over twice the slots")
t.ok(secs(r2, "actor_update") < secs(r0, "actor_update") * 2.0,
  "pad_to 720: no more than twice the unpadded update")
t.ok(secs(r2, "logprob") > secs(r0, "logprob"), "pad_to 720: the forwards are padded too")
t.near(secs(r2, "rollout"), secs(r0, "rollout"), 1e-12, "pad_to leaves the rollout alone")
t.raises(function() gp.rl(with(base, { pad_to = 300 })) end, "pad_to",
  "below the longest sequence (360) it is refused, naming the option", true)
t.raises(function() gp.rl(with(base, { pad_to = 720, rank_skew = true })) end, "rank_skew",
  "padded shares are even: rank_skew is refused beside it", true)

-- PPO's critic: its own token cuts.  With critic_token_batch 1440 = 4 x
-- 360 real tokens a cut at fixed lengths, the cuts hold the same 4
-- sequences as critic_batch 4: the same critic phases (1e-9 relative).
local ppo = with(base, { algo = "ppo", group = 1, prompts = 512 })
local c4 = gp.rl(with(ppo, { critic_batch = 4 }))
local ct = gp.rl(with(ppo, { critic_token_batch = 1440 }))
t.near(secs(ct, "values"), secs(c4, "values"), 1e-9,
  "critic_token_batch 1440: cuts of 4 fixed-length sequences, as critic_batch 4")
t.near(secs(ct, "critic_update"), secs(c4, "critic_update"), 1e-9,
  "critic_token_batch 1440: the same critic update as critic_batch 4")
-- Padded to 720 slots the critic's cuts hold the same 4 real sequences
-- in twice the slots: longer values and update, the actor's phases alone.
local cp = gp.rl(with(ppo, { critic_token_batch = 1440, critic_pad_to = 720 }))
t.ok(secs(cp, "values") > secs(ct, "values") * 1.2, "critic_pad_to 720: the critic's forward "
  .. "over twice the slots")
t.ok(secs(cp, "critic_update") > secs(ct, "critic_update") * 1.2,
  "critic_pad_to 720: the critic's update over twice the slots")
t.near(secs(cp, "actor_update"), secs(ct, "actor_update"), 1e-12,
  "critic_pad_to pads the critic only")
t.raises(function() gp.rl(with(ppo, { critic_pad_to = 720 })) end, "critic_pad_to",
  "critic_pad_to without the critic's own micro-batches is refused", true)
t.raises(function() gp.rl(with(ppo, { critic_token_batch = 1440, critic_batch = 4 })) end,
  "critic_token_batch", "critic_token_batch and critic_batch together are refused", true)
t.raises(function() gp.rl(with(base, { critic_token_batch = 1440 })) end, "critic_token_batch",
  "critic_token_batch is PPO's", true)
-- Token slots are whole: half a slot is refused, naming the option.
t.raises(function() gp.rl(with(base, { pad_to = 720.5 })) end, "pad_to must be a whole number",
  "a fractional pad_to is refused", true)
t.raises(function() gp.rl(with(ppo, { critic_token_batch = 1440, critic_pad_to = 720.5 })) end,
  "critic_pad_to must be a whole number", "a fractional critic_pad_to is refused", true)
t.done_testing()
