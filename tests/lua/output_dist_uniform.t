-- output_dist uniform (gp.infer; engine/infer_run.c infer_output_quantiles
-- and infer_burst): SGLang bench_serving's random dataset at its default
-- --random-range-ratio 0 draws each request's prompt and output length
-- uniformly from 1 to the length it is given, so a burst's outputs run
-- from 1 to twice their mean less one and it lasts until its longest end.
-- Run with ./gpuplan run tests/lua/output_dist_uniform.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(9)

-- 80 requests of 500 / 500 tokens, 16 in flight, to SGLang on one H100
-- (the cookbook blocks' shape: 80 prompts at --max-concurrency 16).
local job = { model = "llama3.1-8b", gpu = "h100-sxm", runtime = "sglang", input = 500,
              output = 500, requests = 80, concurrency = 16 }
local mean = gp.infer(job)
local uni = gp.infer(t.with(job, { output_dist = "uniform" }))

-- The longest is 2 x 500 - 1 = 999 (uniform 1 .. L has mean (L + 1) / 2).
t.ok(t.said(uni, "^output_dist=uniform: outputs uniform from 1 to 999 tokens %(mean 500%), "
  .. "prompts from 1 to 999"), "uniform says its range: 1 to 2 x 500 - 1 = 999")

-- The walk's decode steps: 80 requests of 1 .. 999 tokens, 16 at a time,
-- take 1.200 x their tokens / 16 steps (the fluid walk with a share under
-- one request charged its share of a step; 1.185 drawn one request at a
-- time, a discrete count over 200 seeds), every request at 500 exactly
-- 1.000.  The steps of the thinned batch are no dearer than the full
-- one's, so the decode time grows by at most 1.200; the prompts, which
-- arrive one by one as the short answers end where the mean's come 16 at
-- a time, add prefill steps of their own (SGLang runs a prompt as its own
-- extend batch): at most 0.1 more.  The lower end: the thinned steps here
-- cost at least itl_batch1 / itl = 0.92 of a full one, so at least 1 +
-- 0.2 x 0.92 / 2 = 1.09 -- half of it, for the tail steps the prompts'
-- mixing already holds in the mean run.
local r = mean.tokens_per_s / uni.tokens_per_s
t.ok(r > 1.09 and r < 1.30, string.format(
  "uniform: the burst takes 1.09-1.30 x the mean's time (%.3f)", r))

-- One request in flight: they run one after another, each a prefill and
-- its decodes at batch 1, linear in its length: the spread's run is the
-- mean's, exactly (engine: infer_burst prices the mean where B <= 1).
local one = t.with(job, { concurrency = 1, requests = 10 })
t.is(gp.infer(t.with(one, { output_dist = "uniform" })).tokens_per_s, gp.infer(one).tokens_per_s,
  "one at a time: the uniform run is the mean's")

-- The MoE serving model (serve_plan.c burst) takes the same classes: a
-- DeepSeek-V3 burst on 8 H200 at EP 8, 16 in flight, is slower uniform
-- than at the mean.
local moe = { model = "deepseek-v3", gpu = "h200-sxm", gpus = 8, tp = 8, ep = 8,
              weights = "fp8", input = 500, output = 500, requests = 80, concurrency = 16 }
t.ok(gp.infer(t.with(moe, { output_dist = "uniform" })).tokens_per_s
  < gp.infer(moe).tokens_per_s, "MoE serving: the uniform burst is slower than the mean's")

-- Bad input: a clear error naming the argument.
t.raises(function() gp.infer(t.with(job, { output = 1, output_dist = "uniform" })) end,
  "output_dist uniform spreads outputs from 1 to twice their mean less one: output 1",
  "an output of 1 leaves nothing to spread", true)
local steady = t.with(job, { output_dist = "uniform" })
steady.requests = nil
t.raises(function() gp.infer(steady) end,
  "output_dist uniform spreads the outputs of a burst: give requests = N",
  "the steady state has no burst to spread", true)
local static = t.with(job, { output_dist = "uniform", batching = "static", batch = 16 })
static.concurrency = nil
t.raises(function() gp.infer(static) end,
  "output_dist uniform with batching static", "a static batch takes no spread", true)

-- Outputs past the context: Llama 3 8B holds 8192 tokens; a prompt of 2048
-- and outputs of mean 3073 reach 2 x 3073 - 1 = 6145, 2048 + 6145 = 8193,
-- one past it (refused, naming the longest output and the most that fits,
-- (8192 - 2048 + 1) / 2 = 3072); 3072 reaches 6143, 8191: priced.
local ctx = { model = "llama3-8b", gpu = "h100-sxm", input = 2048, requests = 64,
              output_dist = "uniform" }
t.raises(function() gp.infer(t.with(ctx, { output = 3073 })) end,
  "output_dist uniform: outputs reach 6145 tokens (twice the mean 3073 less one), past "
  .. "llama3-8b's context of 8192 tokens less the input 2048 (give an output of 3072 at most)",
  "outputs past the model's context: refused", true)
t.ok(gp.infer(t.with(ctx, { output = 3072 })).tokens_per_s > 0, "the longest that fits: priced")
