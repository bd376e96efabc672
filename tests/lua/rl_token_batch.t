-- gp.rl's token_batch: verl's dynamic batch size (use_dynamic_bsz) cuts
-- each DP rank's share of a mini-batch into micro-batches by tokens,
-- ceil(its tokens / (ppo_max_token_len_per_gpu x cp)) of them
-- (verl/utils/seqlen_balancing.py rearrange_micro_batches), the count
-- the ranks' largest (engine/rl.c rl_token_bins).
-- Run with ./gpuplan run tests/lua/rl_token_batch.t.
local t = require "tap"
local gp = require "gpuplan"

local with, phase = t.with, t.phase

-- Qwen2.5-7B GRPO on 8 H100s, ZeRO-1 (dp 8), 64 x 8 = 512 samples in
-- mini-batches of 128: each rank trains k = 128 / 8 = 16 of them an
-- optimizer step, 16 x (100 + 1000) = 17600 tokens (uniform responses
-- 200..1800, mean 1000).
local base = { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 8, zero = 1, recompute = "full",
               prompts = 64, group = 8, prompt_len = 100, response_len = 1000,
               response_max = 1800, response_dist = "uniform", global_batch = 128 }
local r0 = gp.rl(base)
local r = gp.rl(with(base, { token_batch = 4096 }))
-- ceil(17600 / 4096) = 5 micro-batches a rank, 40 over the 8 ranks, each
-- 17600 / 5 = 3520 tokens.  Counts and a quotient of whole numbers:
-- exact up to rounding (1e-12).
t.is(r.token_batch, 4096, "token_batch as given")
t.is(r.pack_bins, 40, "ceil(16 x 1100 / 4096) = 5 micro-batches a rank, x 8 ranks")
t.near(r.train_seq, 3520, 1e-12, "each 17600 / 5 tokens")
t.is(r.update.microbatches, 5, "the update runs 5 micro-batches a rank")
t.is(r0.token_batch, 0, "not given: 0")
t.is(r0.update.microbatches, 16, "without it: batch 1, 16 micro-batches of one sequence")
-- Fewer, longer micro-batches do the same FLOPs in fewer launches: the
-- update is not slower than 16 one-sequence micro-batches.
t.ok(phase(r, "actor_update").seconds < phase(r0, "actor_update").seconds,
  "5 micro-batches of 3520 tokens train faster than 16 of 1100")
-- The busiest of 8 ranks (rank_skew) trains 1.149710 times the mean's
-- tokens (tests/lua/rl_rank_skew.t): 20235 tokens, still 5 micro-batches.
t.is(gp.rl(with(base, { token_batch = 4096, rank_skew = true })).pack_bins, 40,
  "rank_skew: ceil(1.14971 x 17600 / 4096) = 5 a rank")
-- ... and with 3600-token micro-batches 20235 / 3600 = 5.62: 6 a rank,
-- where the mean rank's 17600 / 3600 = 4.89 would need 5.
t.is(gp.rl(with(base, { token_batch = 3600, rank_skew = true })).pack_bins, 48,
  "rank_skew: the count is the busiest rank's, ceil(20235 / 3600) = 6")
t.is(gp.rl(with(base, { token_batch = 3600 })).pack_bins, 40, "even ranks: ceil(17600 / 3600) = 5")
-- Under context parallelism a micro-batch holds token_batch x cp tokens
-- (megatron_actor.py: max_token_len = ppo_max_token_len_per_gpu x
-- context_parallel_size): cp 2, dp 4, k = 32 samples = 35200 tokens,
-- ceil(35200 / 8192) = 5 a rank, 20 in all, 7040 tokens each.
local rc = gp.rl(with(base, { token_batch = 4096, cp = 2 }))
t.is(rc.pack_bins, 20, "cp 2: ceil(35200 / (4096 x 2)) = 5 a rank, x 4 ranks")
t.near(rc.train_seq, 7040, 1e-12, "cp 2: 35200 / 5 tokens a micro-batch")
-- Under pp 2 (dp 4) the micro-batches are not padded to token_batch
-- (verl sets variable_seq_lengths): ceil(35200 / 4096) = 9, 35200 / 9.
local rp = gp.rl(with(base, { token_batch = 4096, pp = 2 }))
t.is(rp.pack_bins, 36, "pp 2: ceil(35200 / 4096) = 9 a rank, x 4 ranks")
t.near(rp.train_seq, 35200 / 9, 1e-12, "pp 2: not padded to 4096")
-- The longest sequence must fit (rearrange_micro_batches asserts it).
t.raises(function() gp.rl(with(base, { token_batch = 1800 })) end,
  "rl: token_batch 1800 x cp 1 is below the longest sequence, 100 prompt + 1800 response tokens",
  "token_batch below the longest sequence", true)
t.raises(function() gp.rl(with(base, { token_batch = 4096, pad = true })) end,
  "rl: token_batch cuts micro-batches of sequences at their own lengths by tokens; pad = true "
    .. "pads them to the limit", "token_batch with pad", true)
t.raises(function() gp.rl(with(base, { token_batch = 4096, pack_tokens = 4096 })) end,
  "pack_tokens packs them into first-fit bins", "token_batch with pack_tokens", true)
t.raises(function() gp.rl(with(base, { token_batch = -1 })) end,
  "rl: token_batch must be a whole number of tokens, 0..16777216 (got -1)", "token_batch -1", true)
t.raises(function() gp.rl(with(base, { token_batch = 4096.5 })) end,
  "rl: token_batch must be a whole number of tokens, 0..16777216 (got 4096.5)", "token_batch 4096.5", true)
t.done_testing()
