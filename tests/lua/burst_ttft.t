-- A burst's time to first token (gp.infer's requests; engine/infer_run.c
-- run_finite, infer_burst_ttft): every request is sent at once, the engine
-- takes their prompts first come, first served within a step's token
-- budget, so request k's first token comes at the end of the step that
-- completes its prompt, behind the k - 1 prompts ahead of it.  ttft_s is
-- the mean over the requests (vLLM's benchmark client times each from its
-- send: "ttft = time.perf_counter() - st"); ttft_one_s keeps one prompt's.
-- Run with ./gpuplan run tests/lua/burst_ttft.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(17)

-- Whole prompts apart from the decodes (chunked_prefill false), a step's
-- budget max_num_tokens = the prompt: one prompt a step, and one output
-- token (the prefill's own: no decode step shares a step).  Each step is
-- then the prefill of one prompt, the unloaded TTFT t (the prefill share
-- of a batch of floor(1024 / 1024) = 1 prompt is that prompt's prefill),
-- and the 4 requests' first tokens come at t, 2t, 3t, 4t: mean 2.5 t.
-- The same prices summed in another order: 1e-9.
local job = { model = "llama3.1-8b", gpu = "h100-sxm", weights = "fp8", input = 1024,
              output = 1, runtime = "trtllm", max_num_tokens = 1024,
              chunked_prefill = false }
local alone = gp.infer(job)
local b4 = gp.infer(t.with(job, { requests = 4 }))
t.near(b4.ttft_one_s, alone.ttft_s, 1e-12, "a burst keeps one prompt's TTFT as ttft_one_s")
t.near(b4.ttft_s, 2.5 * alone.ttft_s, 1e-9,
  string.format("4 prompts, one a step: mean TTFT (1 + 2 + 3 + 4) / 4 t = 2.5 x %.2f ms",
                alone.ttft_s * 1e3))
-- numpy's median of t, 2t, 3t, 4t is 2.5 t, its 99th percentile at
-- (4 - 1) x 0.99 = 2.97: 3t + 0.97 t = 3.97 t (1e-9, as above).
t.near(b4.ttft_p50_s, 2.5 * alone.ttft_s, 1e-9, "... its median 2.5 t")
t.near(b4.ttft_p99_s, 3.97 * alone.ttft_s, 1e-9, "... its P99 3.97 t")
-- 8 prompts: (8 + 1) / 2 = 4.5 t.
local b8 = gp.infer(t.with(job, { requests = 8 }))
t.near(b8.ttft_s, 4.5 * alone.ttft_s, 1e-9, "8 prompts, one a step: mean 4.5 t")
-- Two a step (max_num_tokens 2048): prompts 1-2 in step 1, 3-4 in step 2,
-- each step the prefill of two prompts, p2 (its prefill_share x 2): mean
-- (p2 + p2 + 2 p2 + 2 p2) / 4 = 1.5 p2.
local two = gp.infer(t.with(job, { requests = 4, max_num_tokens = 2048 }))
t.near(two.ttft_s, 1.5 * 2 * two.prefill_share_s, 1e-9,
  "4 prompts, two a step: mean 1.5 x the two-prompt prefill")

-- Not a burst: one request (the unloaded figure, unchanged, no
-- ttft_one_s), or a client concurrency below the burst (it sends the next
-- as one ends: its wait is not the burst's queue).
local b1 = gp.infer(t.with(job, { requests = 1 }))
t.ok(b1.ttft_s == alone.ttft_s and b1.ttft_one_s == nil and b1.ttft_p50_s == nil,
  "one request: the unloaded TTFT")
local c2 = gp.infer(t.with(job, { requests = 4, concurrency = 2 }))
t.ok(c2.ttft_s == alone.ttft_s and c2.ttft_one_s == nil,
  "concurrency 2 below a burst of 4: the unloaded TTFT")
local c4 = gp.infer(t.with(job, { requests = 4, concurrency = 4 }))
t.near(c4.ttft_s, b4.ttft_s, 1e-12, "concurrency 4, the whole burst: the burst's mean")

-- Beyond the batch the cache or max_batch holds, the later requests wait
-- for earlier ones to end (waves): at max_batch 2 with 50 output tokens,
-- A and B prefill in steps 1 and 2, A decodes in steps 2-50 and leaves,
-- B in 3-51; C enters in step 51 and D in 52, so C and D wait about 49
-- and 50 decode steps more than with room for all four (where every
-- prompt is whole by step 4): the mean rises by about (49 + 50) / 4 =
-- 24.75 steps.  Checked as more than 20 batch-1 decode steps (a step of
-- one or two decodes takes at least the batch-1 step; the margin covers
-- the prompts' steps the two walks share differently).
local w = gp.infer(t.with(job, { requests = 4, output = 50, max_batch = 2 }))
local nw = gp.infer(t.with(job, { requests = 4, output = 50 }))
t.ok(w.ttft_s > nw.ttft_s + 20 * w.itl_batch1_s,
  string.format("waves: max_batch 2, the last two wait ~49 decode steps (%.1f ms against "
                .. "%.1f, a decode %.2f ms)", w.ttft_s * 1e3, nw.ttft_s * 1e3,
                w.itl_batch1_s * 1e3))

-- The MoE serving model's colocated burst (serve_plan.c burst) takes the
-- same walk: its mean is above one prompt's, which it keeps as ttft_one_s;
-- a concurrency below the burst is a steady load: the loaded TTFT
-- (serve_plan.c coloc_loaded, gp.infer's rule), one prompt's as
-- ttft_one_s.  The run without requests decodes the KV's batch in
-- flight, so its one prompt's TTFT is its ttft_one_s too.
local moe = { model = "deepseek-v3", weights = "fp8", gpu = "h200-sxm", gpus = 8, tp = 8, ep = 8,
              runtime = "sglang", input = 219, output = 201 }
local m1 = gp.infer(moe)
local one = m1.ttft_one_s
local mb = gp.infer(t.with(moe, { requests = 1000 }))
t.ok(one and mb.ttft_one_s == one and mb.ttft_s > 2 * one and not mb.ttft_loaded,
  string.format("MoE serving, 1000 at once: mean %.0f ms over one prompt's %.0f",
                mb.ttft_s * 1e3, one * 1e3))
local mc = gp.infer(t.with(moe, { requests = 1000, concurrency = 104 }))
t.ok(mc.ttft_loaded and mc.ttft_one_s == one and mc.ttft_s > one,
  "MoE serving, concurrency 104 below the burst: the steady load's TTFT, one prompt's kept")
-- A step of prompt tokens alone runs the forward once, its weights read
-- as a one-sequence decode step reads them: a burst of 2 one-token prompts
-- (one step of 2 tokens, both first tokens at its end) has a TTFT of at
-- least that step, the decode step of concurrency 1 (one sequence of the
-- TP8 group, itl_s).  On the code before, the step was priced as 2 of the
-- chunk step's 16384 tokens, 2 / 16384 x 426 ms = 52 us, under any
-- forward.  Exact bound (the walk's floor is that same table entry; 1e-12
-- for rounding).
local tiny = t.with(moe, { input = 1, output = 2 })
local tb = gp.infer(t.with(tiny, { requests = 2 }))
local t1 = gp.infer(t.with(tiny, { concurrency = 1 }))
t.ok(tb.ttft_s >= t1.itl_s * (1 - 1e-12),
  string.format("MoE serving, 2 one-token prompts at once: TTFT %.3f ms, at least a forward "
                .. "(the one-sequence step, %.3f ms)", tb.ttft_s * 1e3, t1.itl_s * 1e3))
-- ttft_max bounds one prompt's prefill steps, not a burst's mean: with
-- requests it is refused, naming both (it passed a bound under the mean
-- it showed); without requests it still bounds one prompt's.
t.raises(function() gp.infer(t.with(moe, { requests = 1000, ttft_max = 2 * m1.ttft_s })) end,
  "ttft_max with requests", "MoE serving: ttft_max with requests refused", true)
t.ok(gp.infer(t.with(moe, { ttft_max = 2 * m1.ttft_s })).fits,
  "MoE serving: ttft_max without requests bounds one prompt's TTFT, as before")
-- The result's fields are declared (results.lua), so JSON and docs carry them.
local by = require("gpuplan.results").BY_NAME
t.ok(by.ttft_one_s and by.ttft_p50_s and by.ttft_p99_s, "ttft_one_s, ttft_p50_s and ttft_p99_s "
  .. "are declared result fields")

-- A case's median TTFT of a burst reads the burst's median (ttft_p50_s).
local predict = require "gpuplan.predict.infer"
local function case(stat)
  return { id = "burst", kind = "infer",
           model = { name = "m", layers = 32, hidden = 4096, heads = 32, kv_heads = 8,
                     head_dim = 128, ffn_hidden = 14336, ffn_gated = true, vocab = 128256,
                     max_seq = 8192 },
           hardware = { gpu = "h100-sxm", gpus = 1 }, parallel = { tp = 1 },
           workload = { weight_dtype = "bf16", input_len = 1024, output_len = 64,
                        num_requests = 256, framework = "vllm" },
           measured = { metric = "ttft_ms", value = 1, statistic = stat },
           source = { title = "t", version = "0.11.0" } }
end
local cat = gp.catalog()
local pm = assert(predict(case(nil), cat))
local pmed = assert(predict(case("median"), cat))
t.ok(pmed.value > 0 and pmed.value ~= pm.value and pmed.shows == "r.ttft_p50_s * 1e3",
  string.format("a burst's median TTFT: %.1f ms (mean %.1f)", pmed.value, pm.value))
