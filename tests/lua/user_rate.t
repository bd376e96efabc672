-- One user's tokens/s (gp.infer's stream_tokens_per_s, the CLI's "tokens/s
-- per user") is 1 / the mean gap between its tokens, itl_load_s: the
-- decode step and the other requests' prompts that run between them.  It
-- was 1 / itl_s, the decode step alone, so at a loaded batch the users'
-- rates summed past the system's output: Llama 3.1 70B fp8, TP2 on two
-- H100s, 32 users of 2048 in / 512 out read 41.9 tok/s a user (x 32 =
-- 1341) against 955 tok/s system.  The MoE path (serve_plan.c) and the
-- benchmarks' per-user figure (AIPerf's "Output Token Throughput Per
-- User" = 1 / (request latency - TTFT) / (output - 1)) take the mean gap.
-- Run with ./gpuplan run tests/lua/user_rate.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(10)

local job = { model = "llama3.1-70b", gpu = "h100-sxm", gpus = 2, tp = 2, weights = "fp8",
              input = 2048, output = 512 }

-- One sequence: no other prompt runs between its tokens (infer_itl_loaded
-- returns the step at B = 1), so the rate is 1 / the decode step.
local one = gp.infer(t.with(job, { batch = 1 }))
t.near(one.itl_load_s, one.itl_s, 1e-12, "batch 1: the mean gap is the decode step")
t.near(one.stream_tokens_per_s, 1 / one.itl_s, 1e-12, "batch 1: 1 / ITL")

-- 32 users on the one replica.
local r = gp.infer(t.with(job, { concurrency = 32 }))
t.is(r.batch, 32, "32 users: a batch of 32 on the one replica")
t.near(r.stream_tokens_per_s, 1 / r.itl_load_s, 1e-12, "32 users: 1 / the mean gap")
t.ok(r.itl_load_s > 1.2 * r.itl_s, "the prompts between a user's tokens lengthen the gap (33.3 ms against 23.9 here)")
-- The users' rates against the system's: with C the replica's cycle
-- (B prefill shares and the output - 1 = 511 steps, infer_run.c
-- run_times), tokens_per_s = B x 512 / C and itl_load = itl + x (B - 1)
-- / (B x 511), x = C - 511 itl the prompts' time; so B x rate /
-- tokens_per_s = (511 / 512) x C / (C - x / B), between 511/512 = 0.998
-- (x = 0) and 0.998 x 32/31 = 1.030 (x = C).  Under 1 / itl_s it was
-- 41.9 x 32 / 955 = 1.40.
local ratio = r.batch * r.stream_tokens_per_s / r.tokens_per_s
t.ok(ratio >= 511 / 512 - 1e-9 and ratio <= 511 / 512 * 32 / 31 + 1e-9,
  string.format("32 users' rates sum to the system's output (ratio %.4f in [0.998, 1.030])", ratio))

-- The MoE path already took the mean gap: its itl_s holds the prefill
-- stalls (engine/serve_plan.c), and its rate is 1 / that.
local moe = gp.infer{ model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 2, tp = 2, ep = 2,
                      input = 2048, output = 512, concurrency = 32 }
t.near(moe.stream_tokens_per_s, 1 / moe.itl_s, 1e-12, "MoE: 1 / its ITL (prefill stalls in it)")
t.near(moe.itl_load_s, moe.itl_s, 1e-12, "MoE: its mean gap (itl_load_s) is that ITL")

-- The batch sweep's rows (infer --sweep-batch: its "mean ITL ms" column
-- beside tok/s/user) carry the mean gap whose inverse the rate is; at
-- batch 1 it is the decode step.
local rows = require("gpuplan.infer").sweep(job)
t.near(rows[1].itl_load_s, rows[1].itl_s, 1e-12, "sweep, batch 1: the mean gap is the step")
local last = rows[#rows]
t.near(last.stream_tokens_per_s * last.itl_load_s, 1, 1e-12,
  string.format("sweep, batch %d: tok/s/user x mean ITL = 1", last.batch))
