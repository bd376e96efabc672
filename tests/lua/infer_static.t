-- One static batch (gp.infer's batching = "static"; engine/infer_run.c
-- run_times): TensorRT-LLM's gptSessionBenchmark, the benchmark of its
-- performance pages up to 0.9.0, runs a batch of B requests to completion
-- -- the B prompts in one context pass, then output - 1 decode steps of
-- the whole batch in lockstep -- and reports "tokensPerSec = batchSize *
-- maxNewTokens / (averageLatency / 1000)" over the whole generate() call.
-- This file derives that time from the engine's own step prices and
-- checks the refusals of what a static batch cannot be.
-- Run with ./gpuplan run tests/lua/infer_static.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(19)

-- Llama 2 7B in FP8 on one H100 SXM, 84 prompts of 2048 tokens, 128 out:
-- the 0.9.0 page's prompt-heavy row.  B = 84, P = 2048, L = 128.
local B, P, L = 84, 2048, 128
local job = { model = "llama2-7b", gpu = "h100-sxm", weights = "fp8", kv = "fp8",
              input = P, output = L, batch = B, runtime = "trtllm",
              kv_policy = "max", batching = "static" }
local s = gp.infer(job)
t.ok(s.fits, "the static batch of 84 x (2048 + 128) FP8 tokens fits one H100")

-- The same engine priced with its prompts in steps of their own
-- (chunked_prefill = false) and a budget that holds the whole batch's
-- prompts (max_num_tokens = B x P = 172032), decoding at exactly B (the
-- one captured size B: no padding): its prefill share is the context
-- pass of the B prompts over B, its itl_s the decode step at batch B and
-- the run's mean context P + L / 2.  The static run is then, by hand,
--   T = B x share + (L - 1) x itl,   tokens/s = B x L / T
-- (the first token of each request comes from the context pass).  The
-- same step prices in another order: within 1e-9 relative.
local ref = gp.infer { model = "llama2-7b", gpu = "h100-sxm", weights = "fp8", kv = "fp8",
                       input = P, output = L, batch = B, runtime = "trtllm",
                       kv_policy = "max", margin = 0, chunked_prefill = false,
                       max_num_tokens = B * P, graph_sizes = { B } }
local T = B * ref.prefill_share_s + (L - 1) * ref.itl_s
t.near(s.tokens_per_s, B * L / T, 1e-9,
  "static: B x L / (B x share + (L - 1) x itl) = " .. string.format("%.1f", B * L / T))
-- Every request's first token comes when the batch's context pass ends.
t.near(s.ttft_s, B * ref.prefill_share_s, 1e-9, "static: TTFT is the whole batch's context pass")
-- No prompt between a user's tokens: the loaded gap is the step itself.
t.near(s.itl_load_s, s.itl_s, 1e-12, "static: itl_load is the decode step")

-- The same requests as a trtllm-bench burst (in-flight batching, prompts
-- riding in the decode steps at trtllm-bench's budget, a step that carries
-- them off the graph, the batch filling and draining): another price.
local burst = gp.infer { model = "llama2-7b", gpu = "h100-sxm", weights = "fp8", kv = "fp8",
                         input = P, output = L, batch = B, runtime = "trtllm",
                         kv_policy = "max", requests = B, max_num_tokens = 2560 }
t.ok(math.abs(burst.tokens_per_s / s.tokens_per_s - 1) > 0.01,
  string.format("in-flight burst %.1f vs static %.1f tokens/s: the benchmarks differ",
    burst.tokens_per_s, s.tokens_per_s))

-- Several static batches back to back run at one batch's rate.
local three = gp.infer(t.with(job, { requests = 3 * B }))
t.near(three.tokens_per_s, s.tokens_per_s, 1e-12, "three static batches: one batch's rate")

-- The defaults say the batch's budget and gptSession's memory rule.
local said = table.concat(s.defaults, "; ")
t.ok(said:find("max_num_tokens=172032 (batching static", 1, true), "defaults: max_num_tokens B x P")
t.ok(said:find("margin=0.00 (batching static", 1, true), "defaults: the contiguous cache's margin")

-- Refusals, each naming what to give.
local function refused(extra, want, what)
  local ok, err = pcall(gp.infer, t.with(job, extra))
  t.ok(not ok and tostring(err):find(want, 1, true), what .. ": " .. tostring(err))
end
do
  local nb = t.with(job, { concurrency = 8 })
  nb.batch = nil
  local ok, err = pcall(gp.infer, nb)
  t.ok(not ok and tostring(err):find("give batch = N", 1, true), "no batch: " .. tostring(err))
end
refused({ chunked_prefill = true }, "give chunked_prefill or batching static", "chunked_prefill")
refused({ pp = 2, gpus = 2 }, "give pp = 1", "pipeline stages")
refused({ requests = 100 }, "give a multiple of 84", "requests not a multiple of the batch")
refused({ max_num_tokens = 8192 }, "max_num_tokens of 172032 or more", "a budget below the batch's prompts")
refused({ output_dist = "exp" }, "give output_dist mean", "spread outputs")
refused({ batching = "dynamic" }, "batching must be continuous or static", "an unknown batching")
-- The contiguous cache holds input + output a sequence: kv_policy mean
-- contradicts it, and a static run left to its default reserves the
-- whole length (the same price as kv_policy max).
refused({ kv_policy = "mean" }, "give kv_policy max or leave it out", "kv_policy mean")
do
  local nk = t.with(job, {})
  nk.kv_policy = nil
  t.near(gp.infer(nk).tokens_per_s, s.tokens_per_s, 1e-12, "static: the whole length held, as kv_policy max")
end

-- The batch search and the sweep choose the batch themselves: a static
-- batch is refused by name there, not asked for the batch they drop.
do
  local tp = t.with(job, { target = 1000 })
  tp.batch = nil
  local ok, err = pcall(gp.infer_plan, tp)
  t.ok(not ok and tostring(err):find("the target search chooses the batch itself", 1, true)
    and not tostring(err):find("give batch = N", 1, true), "infer_plan: " .. tostring(err))
  ok, err = pcall(require("gpuplan.infer").sweep, job)
  t.ok(not ok and tostring(err):find("the batch sweep chooses the batch itself", 1, true),
    "sweep: " .. tostring(err))
end
