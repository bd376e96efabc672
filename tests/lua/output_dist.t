-- A burst whose outputs spread around their mean (gp.infer's output_dist;
-- engine/infer_run.c infer_output_quantiles and infer_burst): a benchmark
-- client that draws its prompts from ShareGPT asks each request for its own
-- answer length, so the burst lasts until its longest outputs end while the
-- batch thins out.  Without output_dist (or with "mean") every request is
-- priced at the mean, as before.
-- Run with ./gpuplan run tests/lua/output_dist.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(11)

-- 1000 requests of 216 / 197 tokens sent at once to vLLM on one H100
-- (the gpustack ShareGPT logs' means), all held at once (max_num_seqs
-- 1024).
local job = { model = "llama3.1-8b", gpu = "h100-sxm", runtime = "vllm", input = 216,
              output = 197, requests = 1000 }
local mean = gp.infer(job)
local named = gp.infer(t.with(job, { output_dist = "mean" }))
local share = gp.infer(t.with(job, { output_dist = "sharegpt" }))

t.is(named.tokens_per_s, mean.tokens_per_s, "output_dist mean is the default: the same run")
t.ok(t.said(mean, "^output_dist=mean: every request of the burst at output 197 tokens"),
  "a burst without output_dist says it prices every request at the mean")
t.ok(t.said(share, "^output_dist=sharegpt: outputs exponential around 197 tokens, none past "
  .. "1832"), "sharegpt: its limit is 2048 - 216 = 1832 tokens")

-- The longest of 1000 exponential outputs of mean 197 is at survival
-- 0.5 / 1000: 197 ln(2000) = 1497 tokens (the scale theta solves theta (1 -
-- e^{-1832 / theta}) = 197: 197 (1 + 9e-5)).  It alone decodes its last
-- steps, each no faster than a decode step at batch 1, so the run lasts at
-- least its 1496 decode steps x itl_batch1: tokens/s at most 1000 x 197 /
-- (1496 x itl_batch1).  Taken at 1482 steps (1% under: its window of
-- ceil(1497 / 256) = 6 steps and the rescale to the mean) the bound holds
-- with room.
local bound = 1000 * 197 / (1482 * share.itl_batch1_s)
t.ok(share.tokens_per_s <= bound, string.format(
  "sharegpt: the longest output's steps bound the run (%.0f <= %.0f tokens/s)",
  share.tokens_per_s, bound))
t.ok(share.tokens_per_s < 0.8 * mean.tokens_per_s,
  "spread outputs: the burst's tokens/s well under the mean lengths'")

-- exp caps the lengths at the model's context less the prompt (131072 -
-- 216), far above the longest of 1000 (1497): the same classes as
-- sharegpt's but for theta's e^{-1832 / 197} = 9e-5, which the rescale to
-- the mean takes out; within 1e-3.
local ex = gp.infer(t.with(job, { output_dist = "exp" }))
t.near(ex.tokens_per_s, share.tokens_per_s, 1e-3,
  "exp: the same spread where the cap is far above the longest")

-- The MoE serving model (serve_plan.c burst) takes the same classes: a
-- DeepSeek-V3 burst on 8 H200 at EP 8 is slower spread than at the mean.
local moe = { model = "deepseek-v3", gpu = "h200-sxm", gpus = 8, tp = 8, ep = 8,
              weights = "fp8", input = 219, output = 201, requests = 1000 }
local mm = gp.infer(moe)
local ms = gp.infer(t.with(moe, { output_dist = "sharegpt" }))
t.ok(ms.tokens_per_s < 0.8 * mm.tokens_per_s,
  "MoE serving: a spread burst's tokens/s well under the mean lengths'")

-- Bad input: a clear error naming the argument.
t.raises(function() gp.infer(t.with(job, { output_dist = "zipf" })) end,
  "output_dist must be mean, exp, sharegpt or uniform", "an unknown distribution is refused", true)
local steady = t.with(job, { output_dist = "sharegpt" })
steady.requests = nil
t.raises(function() gp.infer(steady) end,
  "output_dist sharegpt spreads the outputs of a burst: give requests = N",
  "the steady state has no burst to spread", true)
t.raises(function() gp.infer(t.with(job, { output = 1900, output_dist = "sharegpt" })) end,
  "outputs of mean 1900 cannot spread below its limit of 1832 tokens",
  "a mean above ShareGPT's limit is refused", true)
t.raises(function() gp.infer(t.with(job, { output_dist = 3 })) end,
  "output_dist", "a number is refused naming the field", true)
