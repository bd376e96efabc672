-- The TTFT under a steady concurrency (gp.infer's concurrency without
-- requests; engine/infer_run.c loaded_ttft).  vLLM V1's scheduler gives
-- each step max_num_batched_tokens, the running decodes first ("# First,
-- schedule the RUNNING requests."), then the waiting prompts' chunks in
-- what is left ("# Next, schedule the WAITING requests. ... while
-- self.waiting and token_budget > 0"; vllm/v1/core/sched/scheduler.py).
-- A request joining the steady state waits the residual of the step in
-- flight, E[T^2] / (2 E[T]), then runs its prompt in ceil(P / (budget -
-- decodes)) mixed steps: ttft_s = ttft_wait_s + ttft_steps x ttft_step_s.
-- One request a replica and bursts keep their own TTFT.
-- Run with ./gpuplan run tests/lua/loaded_ttft.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(16)

-- Budget-bound: 6144-token prompts, 2 out (one decode step), a 2048-token
-- budget.  mixed_steps' budget-bound state decodes D = 2048 x 1 / (6144
-- + 1) = 0.3333 a step beside k = 2048 - D = 2047.67 prompt tokens, every
-- step mixed (f = 1) at one time tc, and its tokens/s is B (D / B) x
-- output / (steps x tc) = D x 2 / tc: tc = 2 D / tokens_per_s.  So the
-- residual is tc / 2 (every step alike), the prompt runs in ceil(6144 /
-- 2047.67) = ceil(3.0005) = 4 steps, each at tc (its chunk 6144 / 4 =
-- 1536 <= k: the step is the steady state's): ttft_s = 4.5 tc.  The same
-- prices summed in another order: 1e-9.
local job = { model = "llama3.1-8b", gpu = "h100-sxm", weights = "fp8", input = 6144,
              output = 2, runtime = "vllm", max_num_tokens = 2048 }
local bb = gp.infer(t.with(job, { concurrency = 8 }))
local D = 2048 * 1 / (6144 + 1)
local tc = 2 * D / bb.tokens_per_s
t.ok(bb.ttft_loaded == true, "8 in flight on one vLLM replica: ttft_s is the loaded TTFT")
t.is(bb.ttft_steps, 4, "prompt of 6144 in a budget of 2048 less 0.33 decodes: ceil(3.0005) = 4 steps")
t.near(bb.ttft_step_s, tc, 1e-9, string.format("each step the mixed step tc = 2 D / tokens/s = %.3f ms", tc * 1e3))
t.near(bb.ttft_wait_s, tc / 2, 1e-9, "the wait: half a step where every step is alike")
t.near(bb.ttft_s, 4.5 * tc, 1e-9, "ttft_s = tc / 2 + 4 tc = 4.5 tc")
-- one prompt alone is kept: the same as the run at concurrency 1 (1e-12:
-- the same figure)
local one = gp.infer(t.with(job, { concurrency = 1 }))
t.ok(one.ttft_loaded == nil and one.ttft_one_s == nil, "concurrency 1: one prompt's TTFT, no loaded one")
t.near(bb.ttft_one_s, one.ttft_s, 1e-12, "ttft_one_s is one prompt's prefill alone")

-- Not budget-bound: the issue's example, Llama 3 8B on an H100, 1000 in /
-- 500 out, 256 in flight, vLLM's 8192-token budget.  The prompt fits the
-- 8192 - 256 = 7936 tokens the decodes leave: one step.  The wait is the
-- residual over decode-only steps (itl_s) and mixed ones (ttft_step_s,
-- at least the steady state's mixed step): between itl_s / 2 and
-- ttft_step_s / 2 (E[T^2] / 2 E[T] lies between the halves of its
-- shortest and longest step).  Sum: 1e-9 as above.
local ex = gp.infer{ model = "llama3-8b", gpu = "h100-sxm", input = 1000, output = 500,
                     concurrency = 256, runtime = "vllm" }
t.is(ex.ttft_steps, 1, "1000 prompt tokens in 8192 - 256: one step")
t.ok(ex.ttft_wait_s >= ex.itl_s / 2 * (1 - 1e-9) and ex.ttft_wait_s <= ex.ttft_step_s / 2 * (1 + 1e-9),
  string.format("the wait %.2f ms lies between half a decode step (%.2f) and half a mixed step (%.2f)",
                ex.ttft_wait_s * 1e3, ex.itl_s / 2 * 1e3, ex.ttft_step_s / 2 * 1e3))
t.near(ex.ttft_s, ex.ttft_wait_s + ex.ttft_step_s, 1e-9, "ttft_s = wait + one mixed step")
-- the step carries the prompt beside 256 decodes: longer than the prompt
-- alone, so the loaded TTFT exceeds one prompt's (the issue: 27.6 ms at
-- every concurrency)
t.ok(ex.ttft_s > ex.ttft_one_s, string.format("loaded %.2f ms > one prompt %.2f ms",
  ex.ttft_s * 1e3, ex.ttft_one_s * 1e3))

-- A long prompt: 20000 tokens in 8192 less 8 decodes = 8184: ceil(2.44) = 3.
local long = gp.infer{ model = "llama3.1-8b", gpu = "h100-sxm", input = 20000, output = 2019,
                       concurrency = 8, runtime = "vllm" }
t.is(long.ttft_steps, 3, "20000 prompt tokens in 8192 - 8: three steps")

-- A burst (requests sent at once, more than one a replica) keeps its
-- walk's TTFT (burst_ttft.t), one prompt's alone as ttft_one_s.
local burst = gp.infer(t.with(job, { concurrency = 8, requests = 8 }))
t.ok(burst.ttft_loaded == nil and burst.ttft_p50_s ~= nil, "a burst keeps the burst's TTFT")
t.near(burst.ttft_one_s, one.ttft_s, 1e-12, "... and one prompt's as ttft_one_s")

-- gp.infer_plan's TTFT is the one its ttft_max bounds, one prompt's
-- prefill (infer.gpus_for's, what `infer --target` prints), not the loaded
-- TTFT at the batch it picks: a limit one prompt meets (27.6 ms < 40 ms)
-- while the chosen batch's loaded TTFT is past it planned a deployment
-- whose ttft_s read above its own ttft_max.  1e-12: the same figure.
local plan = gp.infer_plan{ model = "llama3-8b", gpu = "h100-sxm", runtime = "vllm", target = 5000,
                            input = 1000, output = 500, ttft_max = 0.040 }
local at = gp.infer{ model = "llama3-8b", gpu = "h100-sxm", runtime = "vllm", input = 1000,
                     output = 500, gpus = plan.gpus, batch = plan.batch }
t.near(plan.ttft_s, at.ttft_one_s, 1e-12, string.format("infer_plan's ttft_s: one prompt's %.2f ms",
  plan.ttft_s * 1e3))
t.ok(at.ttft_loaded and at.ttft_s > 0.040 and plan.ttft_s <= 0.040,
  string.format("within its ttft_max, where the batch's loaded TTFT (%.1f ms) is not", at.ttft_s * 1e3))
