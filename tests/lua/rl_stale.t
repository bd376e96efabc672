-- gp.rl: rollouts k steps ahead of training (staleness k >= 2: NeMo RL's
-- async GRPO with max_trajectory_age_steps k and in-flight weight
-- updates).  Its collector keeps up to prompts x k groups in flight and a
-- refit does not wait for them, so an engine never drains between steps:
-- a step's samples cost the larger of the engine's streaming time and its
-- drain alone over k (engine/rollout.c roll_steady, roll_alone).  Run with
-- ./gpuplan run tests/lua/rl_stale.t.
local t = require "tap"
local gp = require "gpuplan"

local with, phase = t.with, t.phase

local H = t.harmonic -- H_n, the n-th harmonic number

-- Llama 3.2 1B, 8 rollout engines of one H100 and 8 training GPUs; 64
-- prompts x 8 = 512 samples, n = 64 an engine.
local base = { model = "llama3.2-1b", gpu = "h100-sxm", gpus = 16, prompts = 64, group = 8,
               prompt_len = 256, rollout_gpus = 8 }

-- Fixed lengths L = 1000: every sequence runs 1000 steps.  k steps' batches
-- in flight are k n = 64 k sequences running together (the 1B's KV cache
-- holds 512 of 1256 tokens), each step's n of them n L / (k n) = 1000 / k
-- of the engine's steps.  The same k n sequences on one engine one step
-- off (window 1: 8 / k engines of 64 k samples, run all at once) decode in
-- 1000 steps at that batch: a step's share is that decode over k.  The
-- context differs by half a token (the stream's steady p + L / 2, the
-- drain's midpoint p + L / 2 + 1/2): 1e-3 relative.
local fixed = with(base, { response_len = 1000, response_dist = "fixed" })
for _, k in ipairs { 2, 4, 8 } do
  local r = gp.rl(with(fixed, { staleness = k }))
  local one = gp.rl(with(fixed, { staleness = 1, rollout_gpus = 8 // k, gpus = 8 + 8 // k }))
  t.is(one.rollout.samples, 64 * k, string.format("window 1 on %d engines: %d samples each",
       8 // k, 64 * k))
  t.near(r.rollout.steps, 1000 / k, 1e-12,
         string.format("staleness %d: 64 x 1000 tokens at batch %d, 1000 / %d steps", k, 64 * k, k))
  t.is(r.rollout.batch, 64 * k, string.format("staleness %d: %d running", k, 64 * k))
  t.near(r.rollout.decode, one.rollout.decode / k, 1e-3,
         string.format("staleness %d: the decode of %d together, over %d", k, 64 * k, k))
end

-- Exponential lengths of mean 200 clipped at 4096 (response_clip 0: the
-- exponential alone, theta = 200 (1 + 1.3e-9)).  One step off an engine
-- drains its 64 to their longest, theta H_64 = 948.8 steps, its batch
-- falling as they end.  Streaming at k = 2 would need only 64 x 200 / 128
-- = 100 steps at batch 128, less than that drain's 474 steps' share: the
-- latency bound holds, each step's batch given its k steps: the drain
-- over k, its steps and seconds exactly (1e-12).  One step off with
-- refits that wait for the engines (refit_drain), each step's batch
-- drains alone.
local ex = with(base, { response_len = 200, response_max = 4096, response_clip = 0 })
local e1 = gp.rl(with(ex, { staleness = 1, refit_drain = true }))
t.near(e1.rollout.steps, 200 * H(64), 1e-6, "one step off: the longest of 64, 200 H_64 steps")
for _, k in ipairs { 2, 3, 4 } do
  local r = gp.rl(with(ex, { staleness = k }))
  t.near(r.rollout.decode, e1.rollout.decode / k, 1e-12,
         string.format("staleness %d: the batch's drain over %d steps", k, k))
  t.near(r.rollout.steps, 200 * H(64) / k, 1e-6,
         string.format("staleness %d: 200 H_64 / %d steps a step", k, k))
end
-- k = 8: 512 running, 64 x 200 / 512 = 25 steps a step; the stream at
-- batch 512 now beats the drain's 948.8 / 8 = 118.6 steps.  k = 64: 4096
-- in flight, vLLM's max_batch on an H100 (1024) running: 64 x 200 /
-- 1024 = 12.5 steps, the rest queued.
local e8 = gp.rl(with(ex, { staleness = 8 }))
t.is(e8.rollout.batch, 512, "staleness 8: 8 x 64 running")
t.near(e8.rollout.steps, 64 * 200 / 512, 1e-12, "staleness 8: 25 steps a step")
t.near(e8.rollout.mean_batch, 512, 1e-12, "its tokens over its steps: the batch")
t.is(e8.rollout.tail, 0, "streaming: no tail")
local e64 = gp.rl(with(ex, { staleness = 64 }))
t.is(e64.rollout.batch, 1024, "staleness 64: max_batch 1024 running")
t.ok(e64.rollout.queued, "the rest of the 4096 queued")
t.near(e64.rollout.steps, 64 * 200 / 1024, 1e-12, "staleness 64: 12.5 steps a step")
-- A cache that holds fewer than the k n in flight runs what it holds at
-- the running set's steady context, p + E[L^2] / (2 E[L]) = 256 + 1000 / 2
-- = 756 tokens for fixed lengths, each token 16 layers x 8 KV heads x 64
-- x 2 (K, V) x 2 B = 32,768 B: floor(budget / (32768 x 756)) running (171
-- at rollout_memory 0.1), the step's 64 x 1000 tokens over them.
local kv = gp.rl(with(fixed, { staleness = 8, rollout_memory = 0.1 }))
local fit = math.floor(kv.rollout.kv_budget / (32768 * 756))
t.ok(fit < 512 and kv.rollout.queued, "rollout_memory 0.1: fewer than 8 x 64 fit")
t.is(kv.rollout.batch, fit, "the KV budget at the steady context sets the batch")
t.near(kv.rollout.steps, 64 * 1000 / fit, 1e-12, "64 x 1000 tokens at that batch")
-- Exponential lengths (mean 1000 clipped at 16384, the exponential alone)
-- at rollout_memory 0.15, four steps ahead: the engine never restarts, so
-- its running set is the steady, length-biased one, p + E[L^2] / (2 E[L])
-- tokens a sequence (E[L^2] the result's response_m2), more than 256
-- sequences started together would hold at their peak (their short
-- responses end first): floor(budget / (32768 x held)) = 206 of the 4 x
-- 64 run, not all 256.
local st = gp.rl(with(base, { response_len = 1000, response_max = 16384, response_clip = 0,
                              rollout_memory = 0.15, staleness = 4 }))
local held = 256 + st.response_m2 / (2 * 1000)
local steady = math.floor(st.rollout.kv_budget / (32768 * held))
t.ok(steady < 256, "rollout_memory 0.15: fewer than 4 x 64 at the steady context")
t.is(st.rollout.batch, steady, "the steady running set sets the batch")
t.near(st.rollout.steps, 64 * 1000 / steady, 1e-12, "64 x 1000 tokens at that batch")
-- A stream's step is no cheaper than the drain's first (full) step: the
-- batch larger, the context the running set's mean.
t.ok(e8.rollout.itl_first >= e1.rollout.itl_first, "the streaming step at batch 512")

-- The schedule is the one-step-off one: the longer pool, then the refit,
-- which stalls both (in-flight updates pause the engines' steps while
-- the weights land).
local function train_s(r)
  local s = 0
  for _, p in ipairs(r.phases) do if p.pool == "train" then s = s + p.seconds end end
  return s
end
for _, r in ipairs { e8, e64 } do
  t.near(r.step_s, math.max(phase(r, "rollout").seconds, train_s(r))
         + phase(r, "weight_sync").seconds, 1e-12,
         "step = max(rollout, training) + the weight sync")
end
t.ok(e8.step_s <= e1.step_s, "more steps ahead is never slower")

-- Without in-flight weight updates (refit_drain: NeMo RL's
-- prepare_for_refit then "waiting for all pending generations to
-- complete") each refit drains the engines and the collector starts one
-- step's batch after it: k steps ahead is one step ahead, to the second.
local d8 = gp.rl(with(ex, { staleness = 8, refit_drain = true }))
t.is(d8.rollout.decode, e1.rollout.decode, "refit_drain: the rollout of one step off")
t.is(d8.step_s, e1.step_s, "refit_drain: the step of one step off")
t.ok(d8.refit_drain and d8.staleness == 8, "the result says staleness 8, refits draining")
t.raises(function() gp.rl(with(ex, { staleness = 0, refit_drain = true })) end,
         "refit_drain applies to separate pools at staleness >= 1 (got staleness 0)",
         "refit_drain at staleness 0 refused", true)
t.raises(function() gp.rl({ model = "llama3.2-1b", gpu = "h100-sxm", gpus = 8, prompts = 64,
                            group = 8, prompt_len = 256, response_len = 200,
                            refit_drain = true }) end,
         "refit_drain applies to separate pools at staleness >= 1 (got colocated)",
         "refit_drain colocated refused", true)

-- One step off with in-flight weight updates (the default; NeMo RL's
-- one-step-off recipes set in_flight_weight_updates): the collector
-- starts the next step's groups as the step's finish, one a prompt, so
-- an engine runs at what a step's n = 64 samples fill (B = 64, the KV
-- cache holding more) and a step costs the larger of its tokens at that
-- batch, 64 x 200 / 64 = 200 steps, and its last group's longest, the
-- longest of 8: 200 H_8 = 543.57 steps -- less than the 948.8 of the
-- batch drained alone.  Every step at batch 64 and the running context:
-- the decode is the steps at the first step's time, exactly (1e-12);
-- steps to 1e-6 (theta).
local f1 = gp.rl(with(ex, { staleness = 1 }))
t.is(f1.rollout.batch, 64, "in flight, one step off: a step's 64 running")
t.near(f1.rollout.steps, 200 * H(8), 1e-6, "the longest of a group of 8, 200 H_8 steps")
t.near(f1.rollout.decode, f1.rollout.steps * f1.rollout.itl_first, 1e-12,
       "each at the running batch's step")
t.is(f1.rollout.tail, 0, "its tail under the next step's groups")
t.ok(f1.rollout.decode < e1.rollout.decode, "shorter than the batch drained alone")
t.ok(not f1.refit_drain and f1.staleness == 1, "the result: one step off, refits not draining")
-- max_batch 16: the stream is the longer, 64 x 200 / 16 = 800 steps at
-- batch 16 (exact, 1e-12), still shorter than the drain at that batch.
local f16 = gp.rl(with(ex, { staleness = 1, max_batch = 16 }))
local d16 = gp.rl(with(ex, { staleness = 1, max_batch = 16, refit_drain = true }))
t.is(f16.rollout.batch, 16, "max_batch 16: 16 running")
t.near(f16.rollout.steps, 64 * 200 / 16, 1e-12, "the stream: 800 steps at batch 16")
t.ok(f16.rollout.decode < d16.rollout.decode, "under the drain at that batch")
-- One group an engine (8 prompts x 64, n = group = 64): its last group is
-- the whole batch, which at the running batch's step would take longer
-- than draining as its responses end; the drain is kept, to the second.
local g1 = gp.rl(with(ex, { prompts = 8, group = 64 }))
local gd = gp.rl(with(ex, { prompts = 8, group = 64, refit_drain = true }))
t.is(g1.rollout.decode, gd.rollout.decode, "one group an engine: the drain")
t.is(g1.step_s, gd.step_s, "and its step")
t.raises(function() gp.rl(with(ex, { staleness = 8, refit_drain = 1 })) end,
         "rl: refit_drain must be true or false (got 1)", "refit_drain not a boolean", true)

-- Refusals: a staleness is a whole number of steps of separate pools.
t.raises(function() gp.rl(with(ex, { staleness = 1.5 })) end,
         "staleness must be a whole number", "1.5 steps refused", true)
t.raises(function() gp.rl(with(ex, { staleness = -1 })) end,
         "staleness", "-1 steps refused", true)
t.raises(function() gp.rl({ model = "llama3.2-1b", gpu = "h100-sxm", gpus = 8, prompts = 64,
                             group = 8, response_len = 200, staleness = 8 }) end,
         "staleness applies to separate pools", "colocated: no staleness", true)

t.done_testing()
