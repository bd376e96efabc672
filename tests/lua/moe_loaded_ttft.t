-- The MoE serving model's TTFT under a steady load (engine/serve_plan.c
-- coloc_loaded): the rule gp.infer's chunked-prefill engines take, the same
-- C function (engine/infer_run.c infer_loaded_ttft).  A request joining
-- the steady state waits the residual of the step in flight, E[T^2] /
-- (2 E[T]) over the steady state's steps (a share f of them carrying
-- prompt tokens at tc, the others at td), then runs its prompt in
-- ceil(P / room) steps: ttft_s = ttft_wait_s + ttft_steps x ttft_step_s.
-- It reported one prompt's full prefill steps at every load; one prompt's
-- stays as ttft_one_s (ttft_one_steps steps).
-- Run with ./gpuplan run tests/lua/moe_loaded_ttft.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(16)

-- 1. Prefill steps of their own (SGLang, this model's default runtime,
-- without --enable-mixed-chunk), TP attention (no DP stall: coloc_stall
-- 1).  DeepSeek-V3 fp8 on 8 H200 as EP8 with TP8 attention, 20000 in /
-- 201 out, 32 in flight (what the KV holds: batch_per_gpu 4, checked): B
-- = 4 a GPU, an attention group (the instance) of a = 8 GPUs holds 32.  The steady state: every 200 decode
-- steps (output - 1, no MTP) the group's 32 prompts of 20000 tokens run
-- in full prefill steps of 8192 (SGLang's chunked_prefill_size on an H200,
-- a card under 160 GiB: gpuplan.infer M.sglang_chunk, the serving model's
-- prefill_tokens where none is given), x = 32 x 20000 / (200 x 8192) =
-- 0.3906 prefill steps a decode step, a share f = x / (1 + x) = 0.2809
-- of the steps at tc = the prefill step (prefill.time), the rest at the
-- decode step td = step_ms + eager_s.  The prompt: room 8192 (a step of
-- its own), ceil(20000 / 8192) = 3 steps of tc.  Tolerance 1e-9
-- relative: the same sums in another order.
local job = { model = "deepseek-v3", weights = "fp8", gpu = "h200-sxm", gpus = 8, tp = 8, ep = 8,
              runtime = "sglang", input = 20000, output = 201 }
local r = gp.infer(t.with(job, { concurrency = 32 }))
local x = 32 * 20000 / (200 * 8192)
local f = x / (1 + x)
local tc = r.prefill.time
local td = r.step_ms / 1e3 + r.eager_s
local wait = ((1 - f) * td * td + f * tc * tc) / (2 * ((1 - f) * td + f * tc))
t.ok(r.ttft_loaded == true and r.batch_per_gpu == 4,
  "32 in flight on an EP8 instance, 4 a GPU: ttft_s is the loaded TTFT")
t.is(r.ttft_steps, 3, "20000 prompt tokens in prefill steps of 8192: 3")
t.near(r.ttft_step_s, tc, 1e-12, "each a prefill step of its own (prefill.time)")
t.near(r.ttft_wait_s, wait, 1e-9, string.format("the wait: E[T^2] / 2 E[T] = %.2f ms (f %.4f, "
  .. "tc %.1f ms, td %.2f ms)", wait * 1e3, f, tc * 1e3, td * 1e3))
t.near(r.ttft_s, wait + 3 * tc, 1e-9, string.format("ttft_s = wait + 3 tc = %.1f ms", r.ttft_s * 1e3))
-- one prompt's full prefill steps are kept: 3 tc, what ttft_s was at
-- every load; the loaded TTFT is above it by the wait (not that figure)
t.near(r.ttft_one_s, 3 * tc, 1e-12, "ttft_one_s: one prompt's 3 prefill steps")
t.is(r.ttft_one_steps, 3, "... ttft_one_steps 3")
t.ok(r.ttft_s > r.ttft_one_s * (1 + 1e-6),
  string.format("under load %.1f ms, not one prompt's %.1f ms", r.ttft_s * 1e3, r.ttft_one_s * 1e3))

-- 2. One request an instance (concurrency 1 on TP8: B = 1/8 a GPU):
-- nothing in flight to wait for, one prompt's steps as before (exact).
local c1 = gp.infer(t.with(job, { concurrency = 1 }))
t.ok(c1.ttft_loaded == nil and c1.ttft_one_s == nil, "concurrency 1: no loaded TTFT")
t.near(c1.ttft_s, 3 * c1.prefill.time, 1e-12, "concurrency 1: one prompt's 3 prefill steps")

-- 3. A runtime that mixes the chunk into the decodes' step (vLLM V1,
-- TensorRT-LLM: serve.lua's mixed steps).  The step's budget holds the
-- decodes first (vLLM's scheduler; SGLang's mixed chunk passes
-- running_bs as mixed_with_decode_tokens, "self.rem_chunk_tokens -=
-- mixed_with_decode_tokens"): prefill_tokens 4096 less the group's 32
-- decodes leaves 4064 for a 4090-token prompt, ceil(4090 / 4064) = 2
-- steps, where one prompt alone takes ceil(4090 / 4096) = 1.  Each is the
-- steady state's chunk step (ttft_step_s, the mixed step of the decodes
-- and a full chunk, off the graph), a share f = eager_steps of the decode
-- steps, the others the decode step (step_ms).  1e-9 as above.
local mj = t.with(job, { runtime = "vllm", input = 4090, prefill_tokens = 4096, concurrency = 32 })
local m = gp.infer(mj)
local mf, ts, md = m.eager_steps, m.ttft_step_s, m.step_ms / 1e3
local mwait = ((1 - mf) * md * md + mf * ts * ts) / (2 * ((1 - mf) * md + mf * ts))
t.is(m.ttft_steps, 2, "vLLM: 4090 prompt tokens in 4096 less 32 decodes: 2 steps")
t.is(m.ttft_one_steps, 1, "... one prompt's full prefill steps: 1")
t.ok(ts > md, string.format("a step with a chunk (%.1f ms) is longer than the decode step (%.2f ms)",
  ts * 1e3, md * 1e3))
t.near(m.ttft_s, mwait + 2 * ts, 1e-9, string.format("ttft_s = wait %.2f ms + 2 x %.1f ms",
  mwait * 1e3, ts * 1e3))

-- 4. A burst (requests sent at once, no concurrency below them) keeps its
-- walk's TTFT (serve_plan.c burst), one prompt's as ttft_one_s.
local b = gp.infer(t.with(job, { requests = 32 }))
t.ok(b.ttft_loaded == nil and b.ttft_one_s ~= nil, "a burst keeps the burst's TTFT")
t.near(b.ttft_one_s, r.ttft_one_s, 1e-12, "... and one prompt's as ttft_one_s")
