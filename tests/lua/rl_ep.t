-- gp.rl with expert parallelism in the rollout engine (rollout_ep: vLLM's
-- enable_expert_parallel): each expert whole on one of the engine's GPUs,
-- its steps priced by the serving model's MoE step (engine/rollout.c;
-- tests/c/t_rl.c checks that step against serve_step_time by hand).  Run
-- with ./gpuplan run tests/lua/rl_ep.t.
local t = require "tap"
local gp = require "gpuplan"

local with = t.with

-- Qwen3-30B-A3B (128 experts, top-8) GRPO on 8 H200s, colocated, one
-- engine of TP 8.
local base = { model = "qwen3-30b-a3b", gpu = "h200-sxm", gpus = 8, tp = 1, ep = 8, zero = 3,
               recompute = "full", offload_states = true, rollout_tp = 8, prompts = 64,
               group = 8, prompt_len = 512, response_len = 2048 }
local tp = gp.rl(base)
local ep = gp.rl(with(base, { rollout_ep = 8 }))
t.is(tp.rollout_ep, 1, "rollout_ep defaults to 1 (experts sliced by the rollout TP)")
t.is(ep.rollout_ep, 8, "rollout_ep 8 in the result")
-- Colocated, the step is the sum of its phases; only the rollout's
-- prefill and decode change with the engine's EP (its memory is the same:
-- 128 / 8 whole experts per GPU = a 1/8 slice of each), so the steps
-- differ by exactly the rollouts' difference (1e-9: sums of the same
-- floating-point terms in another order).
t.ok(ep.rollout.decode ~= tp.rollout.decode, "another decode with EP")
t.is(ep.rollout.kv_budget, tp.rollout.kv_budget, "the same engine memory")
t.near(ep.step_s - tp.step_s, (ep.rollout.prefill + ep.rollout.decode)
  - (tp.rollout.prefill + tp.rollout.decode), 1e-9, "step difference = the rollout's")

-- rl_job: the step of a job with rollout_ep is gp.rl's, and a job's step
-- may change it.
local job = gp.rl_job(with(base, { rollout_ep = 8 }))
t.is(job:step {}.step_s, ep.step_s, "rl_job with rollout_ep = gp.rl's")
t.is(gp.rl_job(base):step { rollout_ep = 8 }.step_s, ep.step_s,
  "rl_job: step { rollout_ep = 8 } = gp.rl's")

-- What an engine's EP cannot be.
t.raises(function() gp.rl(with(base, { rollout_ep = 4 })) end,
  "rl: rollout_ep 4 must equal rollout_tp (8: each expert whole on one of the engine's GPUs) "
  .. "or be 1 (the experts sliced by its TP)", "rollout_ep other than the rollout tp", true)
t.raises(function() gp.rl(with(base, { model = "qwen3-8b", ep = 1, rollout_ep = 8 })) end,
  "rl: rollout_ep 8 given for a dense model", "rollout_ep on a dense model", true)
t.raises(function() gp.rl(with(base, { rollout_ep = 0 })) end, "rollout_ep", "rollout_ep 0", true)
t.raises(function()
  gp.rl(with(base, { rollout_ep = 8, rollout_engine = "hybrid", rollout_tp = nil }))
end, "rl: rollout_ep is the expert parallelism of a vLLM or SGLang engine", "hybrid engine", true)

-- DP attention in the engine (rollout_dp_attention: SGLang's
-- --enable-dp-attention): the attention weights whole on every GPU, so
-- the weights grow and the KV budget shrinks by the same bytes (exact by
-- construction; 1e-6 relative for the sums' rounding); all 512 samples
-- start together here, every rank prefilling at once: no stall.
local dp = gp.rl(with(base, { rollout_ep = 8, rollout_dp_attention = true }))
t.is(dp.rollout_dp_attention, true, "rollout_dp_attention in the result")
t.ok(dp.rollout.weights > ep.rollout.weights, "DP attention holds the attention weights whole")
t.near(ep.rollout.kv_budget - dp.rollout.kv_budget, dp.rollout.weights - ep.rollout.weights,
  1e-6, "... taken from the KV budget")
t.is(dp.rollout.queued, false, "512 samples start together")
t.is(dp.rollout.prefill_stall, 1, "... so no rank waits for another's prompt")
t.is(ep.rollout.prefill_stall, 1, "TP attention: no stall")

-- 8192 samples of 1024 + 4096 tokens wait for room: the prompts admitted
-- while the engine decodes stall every rank.  Q = prompts x (1 - batch /
-- samples) distinct prompts arrive over the decode's steps; each rank
-- prefills its own in chunks of max_num_batched_tokens / 8 (16384, vLLM's
-- default on a card of >= 70 GiB, rl.engine_limits; SGLang divides it over
-- the DP ranks): p = Q x 1024 / (16384 x steps), stall (1 - (1 - p)^8) / p
-- (serve_prefill_stall; tests/c/t_serve.c checks the rule by hand).
-- Exact but for rounding (1e-9).
local big = with(base, { prompts = 512, group = 16, prompt_len = 1024, response_len = 4096,
                         rollout_ep = 8 })
local q_tp = gp.rl(big)
local q_dp = gp.rl(with(big, { rollout_dp_attention = true }))
local o = q_dp.rollout
t.ok(o.queued and q_tp.rollout.queued, "8192 samples queue")
local Q = o.prompts * (1 - o.batch / o.samples)
local p = Q * 1024 / (16384 * o.steps)
t.near(o.prefill_stall, (1 - (1 - p) ^ 8) / p, 1e-9, "queued prompts stall every rank: "
  .. string.format("%.2f x their own prefill", o.prefill_stall))
t.ok(o.prefill_stall > 7 and o.prefill_stall <= 8, "... near the 8 ranks, prompts being rare")
t.is(q_tp.rollout.prefill_stall, 1, "TP attention queued: every rank runs every prompt, no stall")

-- What DP attention needs.
t.raises(function() gp.rl(with(base, { rollout_dp_attention = true })) end,
  "rl: rollout_dp_attention needs rollout_ep = rollout_tp > 1 (the experts over the engine's GPUs)",
  "DP attention without rollout_ep", true)
t.raises(function() gp.rl(with(base, { rollout_ep = 8, rollout_dp_attention = "yes" })) end,
  "rl: rollout_dp_attention must be true or false (got string 'yes')", "a non-boolean", true)
t.done_testing()
