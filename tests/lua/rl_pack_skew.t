-- gp.rl's packed sequences over the DP ranks: NeMo RL's packer deals its
-- bins out in turn (shard_idx = bin_idx % shards), as many bins a rank,
-- not as many tokens, and each pass waits for the rank with the most
-- (engine/rl.c rl_pack_skew, rl_sched.c rl_skewed).
-- Run with ./gpuplan run tests/lua/rl_pack_skew.t.
local t = require "tap"
local gp = require "gpuplan"

local with, phase = t.with, t.phase

-- Qwen2.5-7B GRPO on 8 H100s (dp 8), 64 x 8 = 512 samples, one optimizer
-- step, packed into bins of C = 4096 tokens.  Uniform responses 100..1900
-- (mean 1000, variance 1800^2 / 12 = 270000) after a 100-token prompt:
-- E[L] = 1100, no sequence above C / 2, so the tokens set the bin count,
-- F = 512 x 1100 / 4096 = 137.5 bins, deviation s = sqrt(512 x 270000) /
-- 4096 = 2.870496.  The first rank's bins, E[max(1, ceil(X / 8))] =
-- 1 + sum_j Phi((137.5 - 8 j) / s): 15 terms of 1 (j <= 15), then
-- Phi(3.3096) = 0.999533, Phi(0.52255) = 0.699359, Phi(-2.2644) =
-- 0.011774: 17.710666, B = 141.685330 bins of the fluid fill 4096
-- tokens (under the cap (512 - B + B / 8) x 8 x 1100 / B, which does
-- not bind), against the mean rank's 512 x 1100 / 8:
-- f = 141.685330 x 4096 / (512 x 1100) = 1.030439.
local base = { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 8, zero = 1, recompute = "full",
               prompts = 64, group = 8, prompt_len = 100, response_len = 1000,
               response_max = 1900, response_dist = "uniform", pack_tokens = 4096 }
local r = gp.rl(base)
local f = 1.030439

t.is(r.pack_bins, 144, "the bins priced: ceil(137.5 / 8) x 8")
-- The update's forward and backward at the busiest rank's tokens, its
-- gradient reduction and optimizer step not (no fp32 logits, no
-- per-sequence loss here: the phase is the one step).  Tolerance 1e-6
-- relative: f is rounded to six places.
local u = r.update.parts
local per = r.update.step_s - u.optimizer - u.dp_comm - u.zero_gather
t.is(r.opt_steps, 1, "512 samples, one mini-batch: one optimizer step")
t.near(phase(r, "actor_update").seconds, r.update.step_s + (f - 1) * per,
  1e-6 * r.update.step_s, "packed: the update waits for the busiest rank")
-- The log-probability forwards pack the same mini-batch (no
-- logprob_pack_tokens): the same rank, the whole forward stretched.
t.near(phase(r, "logprob").seconds, f * r.forward.step_s, 1e-6 * r.forward.step_s,
  "packed: the log-probability pass waits for the busiest rank")

-- The log-probability forwards packed apart (logprob_pack_tokens 8192,
-- NeMo RL's logprob_mb_tokens): the step's 512 samples into bins of 8192,
-- F = 512 x 1100 / 8192 = 68.75, s = sqrt(512 x 270000) / 8192 = 1.435248;
-- E[max(1, ceil(X / 8))] = 1 + 7 (Phi at >= 8.88) + Phi(3.3096) = 0.999533
-- + Phi(-2.2644) = 0.011774 = 9.011307, B = 72.090456 bins of 8192 tokens
-- (the cap, 54799 tokens, does not bind): f = 72.090456 x 8192 / (512 x
-- 1100) = 1.048588, where the update's bins of 4096 give 1.030439.
-- Tolerance 1e-6 relative: f rounded to six places.
local rl8 = gp.rl(with(base, { logprob_pack_tokens = 8192 }))
t.near(phase(rl8, "logprob").seconds, 1.048588 * rl8.forward.step_s, 1e-6 * rl8.forward.step_s,
  "packed apart: the log-probability forwards' own bins")
-- A pipeline pads every bin to C: the ranks are even, but the step's
-- bins are a draw.  pp 2 (dp 4): F = 137.5 rounds up to 140 priced;
-- E[max(1, ceil(X / 4))] = 1 + 31 + Phi at 128..148 (0.999533, 0.972319,
-- 0.699359, 0.191904, 0.011774, 0.000127) = 34.875009, B = 139.500035:
-- 139.500035 / 140 = 0.996429 (below 1: the draws fall short of 140 more
-- often than they pass it).
local rp = gp.rl(with(base, { pp = 2 }))
t.near(phase(rp, "logprob").seconds, 0.996429 * rp.forward.step_s, 1e-6 * rp.forward.step_s,
  "packed under a pipeline: the expected bins over the priced")

-- One rank, or every response as long, waits for nobody.
local r1 = gp.rl(with(base, { gpus = 4, tp = 4 }))
t.is(phase(r1, "logprob").seconds, r1.forward.step_s, "packed on one rank: even")
local rf = gp.rl(with(base, { response_dist = "fixed", response_max = 1000 }))
t.is(phase(rf, "logprob").seconds, rf.forward.step_s, "packed fixed lengths: even")
-- Without packing the forwards are the mean rank's.
local r0 = gp.rl(with(base, { pack_tokens = 0 }))
t.is(phase(r0, "logprob").seconds, r0.forward.step_s, "unpacked: the mean rank's")
-- Long sequences set the bin count: responses uniform 100..3900
-- (response_min 100, mean 2000) after the 100-token prompt, E[L] = 2100,
-- q = P(L > C / 2) = (3900 - 1948) / 3800 = 0.513684 of them one a bin:
-- 512 q = 263.006316 bins, above the tokens' 512 x 2100 / 4096 = 262.5,
-- so the draw's deviation is the long ones' count's, sqrt(512 q (1 - q))
-- = 11.309471 (the tokens' would be sqrt(512 x 3800^2 / 12) / 4096 =
-- 6.06).  On 64 ranks (gpus 64), where the deviation decides how often
-- the draw passes 256 bins: E[max(1, ceil(X / 64))] = 1 + 3 (Phi at 17.6,
-- 11.9, 6.28: 1 within 1e-9)
-- + Phi((263.006316 - 256) / 11.309471 = 0.61951) = 0.732210 (the rest
-- below 1e-6) = 4.732210, B = 302.861414 bins; the fluid fill 512 x 2100
-- / 263.006316 = 4088.1148 tokens a bin (the cap (512 - B + B / 64) x 64
-- x 2100 / B = 94909 does not bind): f = 302.861414 x 4088.1148 / (512 x
-- 2100) = 1.151537 (half the deviation would give 1.190501).  Tolerance
-- 1e-6 relative: f rounded to six places.
local long = with(base, { response_len = 2000, response_min = 100, response_max = 3900 })
local rl = gp.rl(with(long, { gpus = 64 }))
t.near(phase(rl, "logprob").seconds, 1.151537 * rl.forward.step_s, 1e-6 * rl.forward.step_s,
  "packed long sequences: the long ones' count sets the draw")
-- A sequence a bin: one prompt of 8 (mb 8) on the 8 ranks, the same
-- lengths.  q = 0.513684 again: F = 8 q = 4.109474 bins, s = sqrt(8 q
-- (1 - q)) = 1.413684; E[max(1, ceil(X / 8))] = 1 + Phi(-2.7517) =
-- 1.002964, x 8 = 8.02 bins, more than the 8 sequences: B = 8, one
-- sequence a bin ("Each bin must contain at least one sequence").  The
-- first rank's one bin holds at most 8 - 8 + 1 = 1 sequence, E[L] = 2100
-- tokens, not the fluid fill 8 x 2100 / 4.109474 = 4088 (which would
-- price f = 8 / 4.109474 = 1.9467): f = 8 x 2100 / (8 x 2100) = 1.
local one = gp.rl(with(long, { prompts = 1 }))
t.near(phase(one, "logprob").seconds, one.forward.step_s, 1e-9 * one.forward.step_s,
  "packed a sequence a bin: the busiest rank holds one sequence, the mean's")
t.done_testing()
