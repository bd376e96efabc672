-- A decode step that carries prompt tokens runs without the CUDA graph
-- (engine/infer_run.c eager_step): TensorRT-LLM's PyTorch flow graphs a
-- batch only when it holds no context request, SGLang captures decode
-- batches only.  Its kernels are launched from the stream, at the
-- device's launch cost instead of its graph launch (catalog/archs.lua:
-- 4 us and 1 us on Hopper), once per kernel of the step.
-- Run with ./gpuplan run tests/lua/infer_eager.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(5)

local dev = gp.roofline { gpu = "h100-sxm" }.device
-- The kernels of a decode step: every operator row's instances, one
-- launch each (roofline.c adds one launch to each instance's time).
local function kernels(r)
  local n = 0
  for _, o in ipairs(r.ops) do n = n + o.count end
  return n
end
local extra = dev.launch - dev.graph_launch

-- TensorRT-LLM mixes prompts into its decode steps by default (gp.infer's
-- M.mixes); chunked_prefill = false keeps the prefill steps apart, the
-- pricing this file derives by hand.
local job = { model = "llama3.1-8b", gpu = "h100-sxm", weights = "fp8", input = 1000,
              output = 200, runtime = "trtllm", max_num_tokens = 4096,
              chunked_prefill = false }
local r = gp.infer(job)

-- Steady state: B requests bring B prompts of 1000 tokens per 199 decode
-- steps, in the 4096 - B tokens a step has beside its B decodes:
-- B x 1000 / (199 x (4096 - B)) of the steps carry prompt tokens (B = 457
-- here: 0.631).  The same arithmetic: within 1e-12.
t.near(r.eager_steps, r.batch * 1000 / (199 * (4096 - r.batch)), 1e-12,
  "steady state: the share of steps that prefill beside their decodes")
-- Those steps launch the step's kernels (356 for this 32-layer model) at
-- 4 - 1 = 3 us more each, at the batch itself, where the graph's decode
-- step runs at the captured size the batch pads to (trtllm-bench's list:
-- 457 -> 512, engine/infer_run.c graph_step): eager_s = share x (ITL(B)
-- + 356 x 3 us - ITL_graph), ITL(B) the step at B where B is captured.
-- Launches add exactly to a kernel's time: within 1e-9.
local exact = gp.infer(t.with(job, { batch = r.batch, graph_sizes = tostring(r.batch) }))
t.near(r.eager_s, r.eager_steps * (exact.itl_s + kernels(r) * extra - r.itl_s), 1e-9,
  "eager_s: their kernels' launches from the stream, over every step")
-- Throughput: B x 200 tokens in B prefill shares and 199 decode steps,
-- each eager_s longer on average: within 1e-9.
t.near(r.tokens_per_s, r.batch * 200 / (r.batch * r.prefill_share_s +
  199 * (r.itl_s + r.eager_s)), 1e-9, "steady state: the eager steps in the throughput")

-- A runtime without graphs launches every step from the stream already:
-- no step is counted apart.
t.is(gp.infer(t.with(job, { runtime = "llama.cpp" })).eager_steps, 0,
  "kernels runtime: no step counted apart")

-- A finite run of two requests at batch 2 with max_num_tokens 1000, one
-- 1000-token prompt a step (run_finite, followed by hand):
--   step 0: both admitted, prompt 1 prefilled (one share), no decode;
--   step 1: request 1 decodes (batch 1) beside 999 tokens of prompt 2
--           (0.999 share): off the graph, ITL_e(1);
--   step 2: 2 decodes beside prompt 2's last token (0.001 share): ITL_e(2);
--   steps 3-199: 197 graphed steps at batch 2, ITL(2); request 1's 199th
--           decode is step 199;
--   steps 200, 201: the rest of request 2 (its cohorts of 0.999 and
--           0.001 of a request) at batch 1, ITL(1).
-- t = 2 share + ITL_e(1) + ITL_e(2) + 197 ITL(2) + 2 ITL(1), ITL_e(b) =
-- ITL(b) + kernels x 3 us; tokens/s = 2 x 200 / t, within 1e-9.
local small = t.with(job, { max_num_tokens = 1000 })
local run = gp.infer(t.with(small, { concurrency = 2, requests = 2 }))
local b1 = gp.infer(t.with(small, { concurrency = 1 }))
local b2 = gp.infer(t.with(small, { concurrency = 2 }))
local e1 = b1.itl_s + kernels(b1) * extra
local e2 = b2.itl_s + kernels(b2) * extra
t.near(run.tokens_per_s, 400 / (2 * run.prefill_share_s + e1 + e2 + 197 * b2.itl_s +
  2 * b1.itl_s), 1e-9, "finite run: the two steps that prefill beside decodes run off the graph")
