-- gp.infer's v0_step (lua/gpuplan/infer.lua M.v0_host_step; engine/infer.c
-- engine_time): vLLM 0.4's engine work between the GPU's steps beyond V1's
-- figures (async_scheduling = false), from vllm PR #3763's one-GPU row
-- ("Using 80GB A100s, with llama-2-7b openai completion API. Single request
-- with 5 input tokens, 2000 generated tokens", "| TP=1 | 24.2 | 0 |").  The
-- validation predictor sets it for a vLLM case of a 0.4.x release
-- (predict/infer.lua's vllm profile).
-- Run with ./gpuplan run tests/lua/v0_step.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(20)

-- The PR's job: Llama-2-7B on one A100 80GB, vLLM with its CUDA graphs
-- (0.4's default), 5 tokens in, 2000 out, one request.
local function pr_job(extra, batch)
  local a = { model = "llama2-7b", gpu = "a100-sxm-80gb", gpus = 1, runtime = "vllm",
              async_scheduling = false, input = 5, output = 2000 }
  if batch then a.batch = batch else a.requests, a.concurrency = 1, 1 end
  for k, v in pairs(extra or {}) do a[k] = v end
  return gp.infer(a)
end

-- The constant reproduces its source: with it the job takes 2000 /
-- tokens_per_s = 24.2 s, the row's time.  Tolerance 0.5%: the constant is
-- rounded to 10 us of 12.1 ms (0.08%), and the prompt's one prefill step
-- (5 tokens) sits in the same run; a change of the GPU's price for this
-- job moves it out, and then M.v0_host_step must be derived again.
local m = require("gpuplan.infer").v0_host_step
local with = pr_job({ v0_step = m })
t.near(2000 / with.tokens_per_s, 24.2, 0.005, "PR #3763's TP=1 job with v0_step: 24.2 s")
-- The constant is the row's step less the price without it: 12.10 - 10.32 ms.
t.near(m, 24.2 / 2000 - 10.32e-3, 1e-12, "M.v0_host_step: 12.10 ms - 10.32 ms = 1.78 ms")
local without = pr_job()
t.near(without.itl_batch1_s, 10.32e-3, 0.005, "the job priced without it: 10.32 ms a step")

-- The same table's two-GPU rows, priced with it: "TP=2 with #3466 (without
-- Ray) | 17.0" (the multiprocessing executor, no executor cost priced) and
-- "TP=2 | 24.2" (Ray's, ray_step = M.v0_ray_step = (24.2 - 17.0) / 2000).
-- Hand: the TP 2 step prices at 8.21 ms with v0_step (GPU 5.65 ms, its
-- all-reduces 0.33 ms, 0.45 + 1.78 ms of host), 2000 of them 16.4 s; Ray's
-- 3.6 ms more, 23.6 s.  Tolerance 5%: what stays is the multiprocessing
-- executor's own hand-off (17.0 - 16.4 s, 0.3 ms a step), which nothing
-- prices.
local function tp2(extra)
  local a = { model = "llama2-7b", gpu = "a100-sxm-80gb", gpus = 2, tp = 2, runtime = "vllm",
              async_scheduling = false, input = 5, output = 2000, requests = 1,
              concurrency = 1, v0_step = m }
  for k, v in pairs(extra or {}) do a[k] = v end
  return 2000 / gp.infer(a).tokens_per_s
end
t.near(tp2(), 17.0, 0.05, "PR #3763's TP=2 without Ray: 17.0 s")
t.near(tp2({ ray_step = require("gpuplan.infer").v0_ray_step }), 24.2, 0.05,
  "PR #3763's TP=2 under Ray: 24.2 s")

-- It adds to each step whole (the GPU idle through it): the batch-1 ITL
-- grows by exactly v0_step (1e-12 relative: the same sums but the added term).
t.near(with.itl_batch1_s - without.itl_batch1_s, m, 1e-9, "the step grows by v0_step")
-- Once a step, not a sequence: at batch 8 the same 1.78 ms.
local b8, v8 = pr_job({}, 8), pr_job({ v0_step = m }, 8)
t.near(v8.itl_s - b8.itl_s, m, 1e-9, "batch 8: the same 1.78 ms, once a step")
-- 0 is no cost: the same price to the bit.
t.is(pr_job({ v0_step = 0 }).itl_batch1_s, without.itl_batch1_s, "v0_step = 0: unchanged")

-- Refusals: another runtime, async scheduling on, a release not 0.4.
t.raises(function() gp.infer({ model = "llama2-7b", gpu = "a100-sxm-80gb",
    runtime = "sglang", input = 5, output = 2000, batch = 1, v0_step = m }) end,
  "v0_step is vLLM's", "v0_step on runtime sglang: refused")
t.raises(function() pr_job({ async_scheduling = true, v0_step = m }) end,
  "never overlaps", "v0_step with async_scheduling on: refused")
-- Said on, a vllm_version does not switch it off: the refusal names
-- async_scheduling = false alone (it also offered "or a vllm_version").
do
  local ok, e = pcall(pr_job, { async_scheduling = true, v0_step = m, vllm_version = "0.4.2",
                                sampling = "random" })
  e = tostring(e)
  t.ok(not ok and e:find("give async_scheduling = false, or no v0_step", 1, true) ~= nil,
    "async_scheduling = true with vllm_version 0.4.2: refused, naming async_scheduling only: "
    .. e)
end
t.raises(function() pr_job({ v0_step = m, vllm_version = "0.6.3", sampling = "random" }) end,
  "the figure is vLLM 0.4's", "v0_step with vllm_version 0.6.3: refused")
-- The MoE serving model (ep) does not price it: refused, given as a number
-- or as a numeric string the option's check reads as one (the string was
-- priced on the serving model).
for _, v in ipairs { m, "1.78e-3" } do
  t.raises(function() gp.infer({ model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 2, tp = 2,
      ep = 2, runtime = "vllm", async_scheduling = false, input = 128, output = 128,
      v0_step = v }) end,
    "not by the MoE serving model", "v0_step " .. type(v) .. " with ep: refused")
end

-- The predictor's rule: a vLLM case of release 0.4.2 takes it, said; 0.6.3
-- does not.
do
  local predict = require "gpuplan.predict.infer"
  local model = { id = "qwen2-7b-test", layers = 28, hidden = 3584, heads = 28, kv_heads = 4,
    head_dim = 128, ffn_hidden = 18944, ffn_gated = true, vocab = 152064,
    tied_embeddings = false, max_seq = 32768, norm = "rms" }
  local function said(version, date)
    local r, why = predict({ model = model, hardware = { gpu = "a100-sxm-80gb", gpus = 1 },
      parallel = { tp = 1 }, measured = { metric = "output_tokens_per_s" },
      workload = { weight_dtype = "bf16", input_len = 1, output_len = 2048, concurrency = 1,
                   num_requests = 1, framework = "vllm" },
      source = { title = "Qwen2 speed benchmark, vLLM", version = version, date = date } },
      gp.catalog())
    assert(r, why)
    for _, d in ipairs(r.defaults) do
      if d:find("v0_step=1.78 ms (vLLM 0.4", 1, true) then return true end
    end
    return false
  end
  t.ok(said("0.4.2"), "0.4.2: v0_step=1.78 ms said")
  t.ok(not said("0.6.3"), "0.6.3: no v0_step")
  -- The release window's edges: 0.4.0 and 0.4.3 take it, 0.3.3 and 0.5.0
  -- do not; a case of no release by its date, from v0.4.0's 2024-03-30 to
  -- the day before v0.5.0's 2024-06-11.
  t.ok(said("0.4.0") and said("0.4.3"), "0.4.0 and 0.4.3: v0_step said")
  t.ok(not said("0.3.3") and not said("0.5.0"), "0.3.3 and 0.5.0: no v0_step")
  t.ok(said(nil, "2024-03-30") and said(nil, "2024-06-10"),
    "dated 2024-03-30 and 2024-06-10, no release: v0_step said")
  t.ok(not said(nil, "2024-03-29") and not said(nil, "2024-06-11") and not said(nil, nil),
    "dated 2024-03-29 or 2024-06-11, or neither release nor date: no v0_step")
end
