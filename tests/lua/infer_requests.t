-- A finite run (gp.infer's requests; engine/infer_run.c run_finite): the
-- requests are issued at once and tokens/s is their output over the run,
-- from the first request's start to the last one's end, as trtllm-bench
-- reports its Total Output Throughput.  The batch fills over the first
-- steps (the prompts share max_num_tokens with the decodes) and empties
-- over the last ones, at a smaller batch than the steady state's.
-- Run with ./gpuplan run tests/lua/infer_requests.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(18)

-- TensorRT-LLM mixes prompts into its decode steps by default (gp.infer's
-- M.mixes); chunked_prefill = false keeps the prefill steps apart, the
-- pricing this file derives by hand.
local job = { model = "llama3.1-8b", gpu = "h100-sxm", weights = "fp8", input = 1000,
              output = 200, runtime = "trtllm", max_num_tokens = 4096,
              chunked_prefill = false }
local steady = gp.infer(job)

-- One request: its prompt's prefill (the prefill share: the pb-prompt
-- batch's time over its pb prompts) gives the first token, then output - 1
-- decode steps at batch 1: 200 / (share + 199 x itl_batch1).  The same
-- arithmetic in another order: within 1e-9.
local one = gp.infer(t.with(job, { requests = 1 }))
t.near(one.tokens_per_s, 200 / (one.prefill_share_s + 199 * one.itl_batch1_s), 1e-9,
  "one request: its prefill and 199 decode steps at batch 1")

-- One request where the prompt rides in the decodes' forward pass
-- (chunked_prefill; infer_run.c mixed_time): the first step carries the
-- whole 256-token prompt and no decode, one step of 256 tokens -- what
-- every token pays in an eager step of 256 decodes (its rows but
-- attention, logits and sample), the prompt's own attention (the prefill
-- of one prompt) and the logits and sampling of the one sequence -- then
-- 199 decode steps at batch 1 on the graph: 200 / (t0 + 199 x
-- itl_batch1).  256 tokens is a point of the run's price table (powers
-- of 2), so the rows are the table's: within 1e-9.
local cjob = { model = "llama3.1-8b", gpu = "h100-sxm", weights = "fp8", input = 256,
               output = 200, max_num_tokens = 4096, chunked_prefill = true }
local k256 = gp.infer(t.with(cjob, { batch = 256, chunked_prefill = false, runtime = "kernels" }))
local k1 = gp.infer(t.with(cjob, { batch = 1, chunked_prefill = false, runtime = "kernels" }))
local function row(ops, name)
  local x = 0
  for _, o in ipairs(ops) do if o.name == name then x = x + o.total end end
  return x
end
local t0 = k256.itl_s - row(k256.ops, "attention") - row(k256.ops, "logits") -
  row(k256.ops, "sample") + row(k256.prefill_ops, "attention") + row(k1.ops, "logits") +
  row(k1.ops, "sample")
local c1 = gp.infer(t.with(cjob, { requests = 1 }))
t.near(c1.tokens_per_s, 200 / (t0 + 199 * c1.itl_batch1_s), 1e-9,
  "one request, prompt in a mixed step: one step of its 256 tokens, 199 decodes")

-- TensorRT-LLM without chunked context (its default; gp.infer's
-- M.whole_prompts) takes a prompt into a step only whole, where it fits
-- the budget the decodes leave (engine/infer_run.c run_finite).  Two
-- 3000-token prompts and a one-token output at max_num_tokens 4096: the
-- 4096 tokens hold one whole prompt (floor(4096 / 3000) = 1), so the run
-- is two steps of one prompt each, twice the one-request run: 2 x 1 /
-- (2 x t1) = 1 / t1, the same tokens/s as one request, within 1e-9 (the
-- same table rows).  Split freely (chunked_prefill = true) the steps are
-- 4096 and 1904 prompt tokens, another price (mixed_time is not linear in
-- the tokens: a chunk's attention, the table's segments): it differs.
local wjob = { model = "llama3.1-8b", gpu = "h100-sxm", weights = "fp8", input = 3000,
               output = 1, max_num_tokens = 4096, runtime = "trtllm" }
local w1 = gp.infer(t.with(wjob, { requests = 1 }))
local w2 = gp.infer(t.with(wjob, { requests = 2 }))
t.near(w2.tokens_per_s, w1.tokens_per_s, 1e-9,
  "whole prompts: two 3000-token prompts at 4096 a step are two one-prompt steps")
local f2 = gp.infer(t.with(wjob, { requests = 2, chunked_prefill = true }))
t.ok(math.abs(f2.tokens_per_s / w1.tokens_per_s - 1) > 1e-6,
  "chunked_prefill = true splits the second prompt: another price")

-- Two waves of the batch: the first requests start one prompt after
-- another (4096 tokens a step hold 4 of the 1000-token prompts beside the
-- decodes) and the last ones drain alone: slower than the steady state.
local two = gp.infer(t.with(job, { requests = 2 * steady.batch }))
t.ok(two.tokens_per_s < steady.tokens_per_s, "two waves: below the steady state")
t.ok(two.tokens_per_s > 0.5 * steady.tokens_per_s, "two waves: the fill and drain cost less than half")

-- A run of 10^6 requests is all steady state: the fill and the drain take
-- about 2 x 200 steps of the run's 10^6 x 200 / batch (batch in the
-- hundreds: ~10^6 steps), < 0.1%; the cohorts' window (a 256th of a
-- request's life) adds < 0.4%: within 0.5%.
local long = gp.infer(t.with(job, { requests = 1000000 }))
t.near(long.tokens_per_s, steady.tokens_per_s, 0.005, "10^6 requests: the steady state")

-- A fraction of a prompt token in a mixed step pays that share of one
-- token's prompt attention (infer_run.c mixed_time), as a fraction of a
-- decode pays that share of one's.  One request of a 1-token prompt over
-- g replicas is 1 / g of a request each (run_finite's fluid N): its one
-- mixed step carries 1 / g prompt token, at batch and head <= 1 priced as
-- one token's (the table's first point), its decode steps at batch
-- ceil(1 / g) = 1 as g = 1's.  So the run's time t_g = requests x output /
-- tokens_per_s differs from t_1 only by the prompt attention A of one
-- token: t_1 - t_g = (1 - 1 / g) A, and (t_1 - t_4) / (t_1 - t_2) =
-- 0.75 / 0.5 = 1.5 (before, a fraction paid a whole token's: t_g = t_1).
-- Within 1e-6: the ratio of two differences of times near 29 ms.
local fjob = { model = "llama3-8b", gpu = "h100-sxm", runtime = "vllm", input = 1,
               output = 4, requests = 1, batch = 1 }
local ft = {}
for _, g in ipairs { 1, 2, 4 } do
  ft[g] = 4 / gp.infer(t.with(fjob, { gpus = g })).tokens_per_s
end
t.ok(ft[1] - ft[2] > 0, "half a prompt token in a mixed step: less than a whole one's attention")
t.near((ft[1] - ft[4]) / (ft[1] - ft[2]), 1.5, 1e-6,
  "a fraction of a prompt token pays that share of one token's attention")

-- The same batch and steps: only the throughput is the run's.
t.is(two.itl_s, steady.itl_s, "the decode step at batch is the steady state's")

t.raises(function() gp.infer(t.with(job, { requests = 0 })) end, "requests",
  "requests = 0: refused, naming it")
-- The MoE serving model prices a finite run too (serve_plan.c burst, the
-- same infer_burst; its steps by hand in tests/lua/serve_burst.t): 100
-- requests on 16 GPUs are fewer than the steady state's batch, so the run
-- delivers fewer tokens/s than it.
local moe = { model = "deepseek-v3", gpu = "h800-sxm", gpus = 16, ep = 16, dp_attention = true }
local moe_run = gp.infer(t.with(moe, { requests = 100 }))
t.ok(moe_run.tokens_per_s > 0 and moe_run.tokens_per_s < gp.infer(moe).tokens_per_s,
  "MoE serving options: 100 requests priced, under the steady state's tokens/s")

-- Fewer requests than the steady state's batch: a replica never batches
-- more sequences than it holds, ceil(requests / replicas).  The steady
-- job above holds 1000 + 200 tokens a sequence, far more than 10 in the
-- KV budget, so the batch is the requests': 10 on one GPU, ceil(10 / 2)
-- = 5 a replica on two.  Its ITL is a step at that batch, and the rate a
-- user sees is 1 / the mean gap between its tokens, itl_load_s (it was
-- the KV-bound batch's, beside the run's throughput of 10; then 1 / ITL,
-- the decode step alone: tests/lua/user_rate.t).
t.ok(steady.batch > 10, "the steady state batches more than 10")
local ten = gp.infer(t.with(job, { requests = 10 }))
t.is(ten.batch, 10, "10 requests: a batch of 10")
t.ok(ten.itl_s < steady.itl_s, "its ITL is a smaller batch's than the steady state's")
t.near(ten.stream_tokens_per_s, 1 / ten.itl_load_s, 1e-9, "a user sees 1 / the mean gap between its tokens")
local two = gp.infer(t.with(job, { requests = 10, gpus = 2 }))
t.is(two.batch, 5, "10 requests over 2 replicas: 5 a replica")

-- docs/serving.md gives the finite run's cost on a shipped case:
-- "(trtllm-bench's Qwen3-30B-A3B on one B200, 3,000 requests of 1000/1000
-- tokens at a batch of 1,566: N% under it)", the
-- trtllm-bench row of Qwen3-30B-A3B on one B200 (its workload states
-- num_requests 3000; the batch, 1,566, is the predictor's, said on its
-- defaults).  Priced as shipped and with num_requests taken out (the
-- steady state), the share under is the sentence's N, to whole points.
do
  local validate = require "gpuplan.validate"
  local cat = gp.catalog { dirs = { "catalog" } }
  local id = "trtllm-qwen3-30b-a3b-b200-tp1-fp4-1000-1000"
  local case
  for _, c in ipairs(validate.read("validation/cases.json")) do
    if c.id == id then case = c end
  end
  local run = case and validate.predict(case, cat)
  local ok, st = pcall(function()
    local copy = {}
    for k, v in pairs(case) do copy[k] = v end
    copy.workload = {}
    for k, v in pairs(case.workload) do copy.workload[k] = v end
    copy.workload.num_requests = nil
    return validate.predict(copy, cat)
  end)
  local fh = assert(io.open("docs/serving.md", "rb"))
  local doc = fh:read("a"):gsub("%s+", " ")
  fh:close()
  local said = ok and run and run.predicted and st.predicted and string.format(
    "Qwen3-30B-A3B on one B200, 3,000 requests of 1000/1000 tokens at a batch of 1,566: "
      .. "%.0f%% under it)",
    100 * (1 - run.predicted / st.predicted))
  t.ok(said and doc:find(said, 1, true) ~= nil,
    "docs/serving.md: " .. tostring(said or st))
end
