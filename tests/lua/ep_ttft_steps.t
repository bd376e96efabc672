-- The MoE serving model's one-prompt TTFT, what it is: the prompt's new
-- tokens in full prefill steps of prefill_tokens an attention group, no
-- queueing (engine/serve_plan.c prompt_steps); under load the same steps
-- after the step in flight (coloc_loaded).  gp.infer says its steps, their
-- tokens and the group, so the CLI's row can label it (a user read a bare
-- "TTFT" the same at 32 and 256 requests).
-- Run: prove --exec './gpuplan run' tests/lua/ep_ttft_steps.t
local t = require "tap"
local gp = require "gpuplan"

local job = { model = "deepseek-v3", gpu = "h200-sxm", gpus = 16, ep = 16, input = 20000,
              batch = 1 }
local r = gp.infer(job)
-- ceil(20000 / 16384) = 2 steps; TP16 attention: a group of 16 GPUs
t.is(r.ttft_steps, 2, "a 20000-token prompt: 2 steps of 16384")
t.is(r.prefill_tokens, 16384, "the default prefill_tokens")
t.is(r.ttft_group, 16, "TP16 attention: the group is the instance's 16 GPUs")
-- ceil(20000 / 8192) = 3 steps, each half the tokens
local h = gp.infer(t.with(job, { prefill_tokens = 8192 }))
t.is(h.ttft_steps, 3, "prefill_tokens 8192: 3 steps")
-- DP attention: each GPU its own attention, a group of one
local dp = gp.infer(t.with(job, { dp_attention = true }))
t.is(dp.ttft_group, 1, "DP attention: a one-GPU group")
-- a prefix hit leaves new tokens only: 20000 - 8000 = 12000, one step
local p = gp.infer(t.with(job, { prefix_hit = 0.4 }))
t.is(p.ttft_steps, 1, "a 40% prefix hit: 12000 new tokens, one step")
-- One prompt's full prefill steps (ttft_one_s, ttft_one_steps) take no
-- queueing: they do not move with the batch.  A batch decoding in flight
-- (16 and 48 sequences an instance) makes ttft_s the loaded TTFT
-- (serve_plan.c coloc_loaded): the step in flight, then the prompt's
-- steps, so above one prompt's.
local b = gp.infer(t.with(job, { batch = 3 }))
t.ok(r.ttft_loaded and b.ttft_loaded, "a batch in flight: the loaded TTFT")
t.is(r.ttft_one_steps, 2, "one prompt's: 2 steps of 16384")
t.near(b.ttft_one_s, r.ttft_one_s, 1e-12, "the same one-prompt TTFT at batch 1 and 3 a GPU")
t.ok(r.ttft_s > r.ttft_one_s and b.ttft_s > r.ttft_one_s, "the loaded TTFT above one prompt's")
t.done_testing()
