-- A burst on the MoE serving model (gp.infer's requests with ep,
-- dp_attention ...; engine/serve_plan.c burst): the requests are sent at
-- once and tokens/s is their output over the run, through infer_burst,
-- the mechanism gp.infer's finite runs take (tests/lua/infer_requests.t).
-- Run with ./gpuplan run tests/lua/serve_burst.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(8)

local job = { model = "deepseek-v3", gpu = "h800-sxm", gpus = 16, ep = 16, dp_attention = true,
              input = 512, output = 3 }

-- 16 requests on 16 GPUs with DP attention: one a GPU (batch 1).  Its
-- 512-token prompt (under prefill_tokens, 16384) is the first step,
-- alone, priced as the steady state prices a prompt (serve_plan.c
-- prompt_cost: (share - experts) x stall + experts); then output - 1 = 2
-- decode steps at batch 1 (tpot each): 16 x 3 / (prompt + 2 tpot).  The
-- same arithmetic in another order: within 1e-9.
local one = gp.infer(t.with(job, { requests = 16 }))
t.is(one.batch_per_gpu, 1, "16 requests on 16 GPUs: batch 1 a GPU")
local prompt = (one.prefill_share_s - one.prefill_experts_s) * one.prefill_stall +
  one.prefill_experts_s
t.near(one.tokens_per_s, 48 / (prompt + 2 * one.tpot_s), 1e-9,
  "one request a GPU: its prompt step and 2 decode steps at batch 1")

-- 32 requests, 2 a GPU: it0 admits both and prefills both (1024 prompt
-- tokens fit one 16384-token chunk step: 2 prompts' time, no decode),
-- then 2 decode steps at batch 2 (tpot at batch 2, the steady state's
-- step at the batch it runs): 32 x 3 / (2 prompt + 2 tpot(2)).
local two = gp.infer(t.with(job, { requests = 32 }))
t.is(two.batch_per_gpu, 2, "32 requests on 16 GPUs: batch 2 a GPU")
local prompt2 = (two.prefill_share_s - two.prefill_experts_s) * two.prefill_stall +
  two.prefill_experts_s
t.near(two.tokens_per_s, 96 / (2 * prompt2 + 2 * two.tpot_s), 1e-9,
  "two requests a GPU: both prompts in one step, then 2 decode steps at batch 2")

-- A long burst (20 batches' worth) is mostly full-batch steps: within 5%
-- of the steady state (same batch, the KV's).  Not below it of necessity:
-- at the mean lengths a wave of requests ends in one step and the next
-- wave's prompts fill few steps, where the steady state spreads them over
-- its steps, each then off the CUDA graph (serve_plan.c eager_cost).
local steady = gp.infer(t.with(job, { output = 256 }))
local many = gp.infer(t.with(job, { output = 256, requests = 16 * steady.batch_per_gpu * 20 }))
t.ok(math.abs(many.tokens_per_s / steady.tokens_per_s - 1) < 0.05,
  string.format("20 batches' burst %.0f tok/s: within 5%% of the steady state's %.0f",
    many.tokens_per_s, steady.tokens_per_s))

-- Disaggregated pools' split of a burst is not known: refused, by name.
local ok, err = pcall(gp.infer, t.with(job, { ep = 8, disagg = true, requests = 100 }))
t.ok(not ok and tostring(err):match("requests with disagg: a burst is priced colocated"),
  "requests with disagg: refused by name")
-- A count below 1 is refused by the one option's rule.
ok, err = pcall(gp.infer, t.with(job, { requests = 0 }))
t.ok(not ok and tostring(err):match("requests must be"), "requests 0: refused by name")
-- Fewer requests than attention groups (8 on 16 GPUs with DP attention:
-- 0.5 a group): half the groups would step with no sequence, which the
-- serving step does not price; it said "serve_step_time: batch must be at
-- least one sequence ... (got 0.5 per GPU)" and failed.  Now a no-fit
-- answer naming the requests and the groups.
local few = gp.infer(t.with(job, { requests = 8 }))
t.ok(few.fits == false and tostring(few.why):match("requests 8 is fewer than the 16 attention groups"),
  "8 requests on 16 DP-attention groups: not priced, said")
