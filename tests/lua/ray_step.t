-- gp.infer's ray_step (lua/gpuplan/infer.lua M.v0_ray_step; engine/infer.c
-- engine_time): vLLM before vllm PR #4894 ran its tensor-parallel workers
-- under Ray and submitted each step to every worker as a Ray task, waiting
-- on ray.get for the results; vllm PR #3763 times Ray's executor at 3.6 ms
-- a step (A100 80GB, TP 2, Llama-2-7B, 2000 tokens: 24.2 s against 17.0 s
-- under the multiprocessing executor, #3466).  The validation predictor sets it for a vLLM
-- case of a release before 0.4.3 on more than one GPU (predict/infer.lua's
-- vllm profile).
-- Run with ./gpuplan run tests/lua/ray_step.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(13)

-- Qwen2-7B's dimensions on two A100s at TP 2, vLLM, 128 in and 128 out.
local model = { id = "qwen2-7b-test", layers = 28, hidden = 3584, heads = 28, kv_heads = 4,
  head_dim = 128, ffn_hidden = 18944, ffn_gated = true, vocab = 152064,
  tied_embeddings = false, max_seq = 32768, norm = "rms" }
local function run(extra)
  local a = { model = model, gpu = "a100-sxm-80gb", gpus = 2, tp = 2, runtime = "vllm",
              input = 128, output = 128, batch = 1 }
  for k, v in pairs(extra or {}) do a[k] = v end
  return gp.infer(a)
end

-- The task's time adds to each decode step whole, the GPU idle through it:
-- the batch-1 ITL grows by exactly ray_step (1e-12 s: the same sums in both
-- runs but the added 2.0e-3).
local base, ray = run(), run({ ray_step = 2.0e-3 })
t.near(ray.itl_batch1_s - base.itl_batch1_s, 2.0e-3, 1e-12 / 2.0e-3,
  "batch 1: the step grows by ray_step, 2.0 ms")
-- Once a step, not a sequence: at batch 8 the step grows by the same 2.0 ms
-- (one task a worker whatever the batch).
local b8, r8 = run({ batch = 8 }), run({ batch = 8, ray_step = 2.0e-3 })
t.near(r8.itl_s - b8.itl_s, 2.0e-3, 1e-12 / 2.0e-3, "batch 8: the same 2.0 ms, once a step")
-- 0 is no executor cost: the same price to the bit.
t.is(run({ ray_step = 0 }).itl_batch1_s, base.itl_batch1_s, "ray_step = 0: unchanged")

-- The constant is the PR's own arithmetic: (24.2 - 17.0) s / 2000 steps,
-- Ray's executor against the multiprocessing one on the same two A100s.
t.near(require("gpuplan.infer").v0_ray_step, (24.2 - 17.0) / 2000, 1e-12,
  "M.v0_ray_step: (24.2 - 17.0) s over 2000 steps, 3.6 ms")

-- Refusals: another runtime, a negative time, the MoE serving model.
t.raises(function() run({ runtime = "sglang", ray_step = 2e-3 }) end,
  "ray_step is vLLM's", "ray_step on runtime sglang: refused")
t.raises(function() run({ ray_step = -1 }) end, "ray_step", "ray_step = -1: refused")
-- One GPU a replica runs no Ray workers (vLLM's GPUExecutor): refused, not
-- priced in silence.
t.raises(function() run({ gpus = 1, tp = 1, ray_step = 2e-3 }) end,
  "replica is one GPU", "ray_step on one GPU: refused")
-- A release from 0.4.3 on (vllm PR #4894's worker loop) has no task a
-- step: refused by the release it names; 0.4.2 takes it.
t.raises(function() run({ ray_step = 2e-3, vllm_version = "0.6.3", sampling = "random" }) end,
  "from 0.4.3 vLLM's Ray workers run their own loop", "ray_step with vllm_version 0.6.3: refused",
  true)
t.ok(pcall(run, { ray_step = 2e-3, vllm_version = "0.4.2", sampling = "random" }),
  "ray_step with vllm_version 0.4.2: priced")
t.raises(function() gp.infer({ model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 2, tp = 2,
    ep = 2, runtime = "vllm", input = 128, output = 128, ray_step = 2e-3 }) end,
  "not by the MoE serving model", "ray_step with ep: refused")
-- The same given as a numeric string, which the option's check reads as
-- its number: refused too (it was priced on the MoE serving model).
t.raises(function() gp.infer({ model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 2, tp = 2,
    ep = 2, runtime = "vllm", input = 128, output = 128, ray_step = "2e-3" }) end,
  "not by the MoE serving model", "ray_step \"2e-3\" with ep: refused")

-- The predictor's rule: a vLLM case of release 0.4.2 at TP 2 takes it, said;
-- 0.4.3 at TP 2 and 0.4.2 at TP 1 do not.
do
  local predict = require "gpuplan.predict.infer"
  local function case(version, tp)
    return { model = model, hardware = { gpu = "a100-sxm-80gb", gpus = tp },
             parallel = { tp = tp }, measured = { metric = "output_tokens_per_s" },
             workload = { weight_dtype = "bf16", input_len = 1, output_len = 2048,
                          concurrency = 1, num_requests = 1, framework = "vllm" },
             source = { title = "Qwen2 speed benchmark, vLLM", version = version } }
  end
  local function said(version, tp)
    local r, why = predict(case(version, tp), gp.catalog())
    assert(r, why)
    for _, d in ipairs(r.defaults) do
      if d:find("ray_step=3.6 ms (vLLM before 0.4.3 on 2 GPUs", 1, true) then return true end
    end
    return false
  end
  t.ok(said("0.4.2", 2), "0.4.2 at TP 2: ray_step=3.6 ms said")
  t.ok(not said("0.4.3", 2) and not said("0.4.2", 1),
    "0.4.3 at TP 2 and 0.4.2 at TP 1: no Ray task priced")
end
