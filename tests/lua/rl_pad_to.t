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
-- attention over the same real ones.  The engine's work (model_flops,
-- training's 3 passes: forward + backward of activations and weights) is
-- derived by hand from qwen2.5-7b's config (catalog/models/qwen.lua: L =
-- 28 layers, d = 3584, kv = 4 x 128 = 512, ffn 18944 gated, vocab 152064
-- untied): the GEMMs' forward per token slot is 2 x (L (2 d^2 + 2 d kv +
-- 3 d ffn) + d V) = 1.4140e10 FLOPs; the attention's (QK^T and PV, 2
-- FLOPs a multiply-add each) is 4 L d per key, over attn keys a token.
-- Unpadded: 512 sequences x 360 slots, 360 keys a token.  Padded to 720:
-- 512 x 720 slots, the real tokens' attention spread over the slots:
-- 360 x 360 / 720 = 180 keys a slot.  Without that spreading (720 keys a
-- slot) the update's work is 0.12% more than the derivation: the check's
-- 1e-9 relative tolerance is double rounding over a handful of products,
-- far below that 1.2e-3.
local L, d, kv, ffn, V = 28, 3584, 512, 18944, 152064
local gemm = 2 * (L * (2 * d * d + 2 * d * kv + 3 * d * ffn) + d * V)
local function flops(slots, keys) return 512 * slots * (gemm + 4 * L * d * keys) end
local r2 = gp.rl(with(base, { pad_to = 720 }))
t.near(r0.update.model_flops, 3 * flops(360, 360), 1e-9,
  "unpadded update: 3 passes over 512 x 360 tokens, 360 keys each")
t.near(r2.update.model_flops, 3 * flops(720, 180), 1e-9,
  "pad_to 720: the update's GEMMs over 720 slots, the attention over the 360 real tokens")
t.near(r2.forward.model_flops, flops(720, 180), 1e-9,
  "pad_to 720: the log-probability forward likewise (one pass)")
-- The padded work takes longer than the unpadded (the GEMMs' work is
-- 1.99x: 2 x (gemm + 4 L d 180) / (gemm + 4 L d 360)); no bound is put
-- on the time ratio itself, the kernels' efficiency over the wider
-- micro-batch being the engine's per-op pricing, not derived here.
t.ok(secs(r2, "actor_update") > secs(r0, "actor_update"),
  "pad_to 720: the update takes longer than the unpadded")
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
-- in twice the slots, each attending over its 360 real tokens: the same
-- rows as the critic's fixed micro-batches of 4 (critic_batch 4) padded
-- to 720, whose attention spreading the actor's derivation above pins;
-- without the token cuts' own spreading (720 keys a slot) the values
-- phase differs.  Tolerance 1e-9 relative: the same work priced through
-- two paths, double rounding only.
local cp = gp.rl(with(ppo, { critic_token_batch = 1440, critic_pad_to = 720 }))
local cb = gp.rl(with(ppo, { critic_batch = 4, critic_pad_to = 720 }))
t.near(secs(cp, "values"), secs(cb, "values"), 1e-9,
  "critic_pad_to 720: the token cuts' forward is critic_batch 4's padded one")
t.near(secs(cp, "critic_update"), secs(cb, "critic_update"), 1e-9,
  "critic_pad_to 720: the token cuts' update is critic_batch 4's padded one")
t.ok(secs(cp, "values") > secs(ct, "values"), "critic_pad_to 720: the critic's forward "
  .. "over twice the slots takes longer")
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
