-- gp.infer_plan (infer --target) under a runtime without expert
-- parallelism (gpuplan.serve NO_EXPERT_PARALLEL: llama.cpp, ExLlamaV2,
-- gpt-fast, LitGPT, eager PyTorch).  gp.infer refuses a MoE layout of
-- several GPUs under them (serve.lua M.setup), but the target search
-- planned one anyway: qwen3-235b-a22b on H100 under llama.cpp at 20000
-- tokens/s was "32 x EP16, DP attention" decode pools with a TP8 prefill
-- pool, layouts only SGLang's, vLLM's and TensorRT-LLM's engines run.
-- Such a runtime's own split is TP replicas (the dense search, gp.infer's
-- tp without the serving options), so that is what the plan counts; a
-- serving option beside it is refused as gp.infer refuses it.
-- Run with ./gpuplan run tests/lua/no_ep_target.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(7)

local job = { model = "qwen3-235b-a22b", gpu = "h100-sxm", runtime = "llama.cpp", target = 20000 }
local p = gp.infer_plan(job)
t.is(p.disagg, false, "llama.cpp: no disaggregated pools")
t.is(p.prefill_gpus, 0, "... no prefill pool")
t.ok(tostring(p.layout):match("^TP%d+$") ~= nil, "... a TP replica: " .. tostring(p.layout))
t.is(p.result.ep or 1, 1, "... without expert parallelism")
-- the plan is gp.infer's pricing of that deployment (what gp.infer with
-- the plan's tp, gpus and batch says), as the dense search's plans are
local r = gp.infer { model = job.model, gpu = job.gpu, runtime = job.runtime, tp = p.result.tp,
                     gpus = p.gpus, batch = p.batch }
t.is(r.tokens_per_s, p.tokens_per_s, "... priced as gp.infer prices that deployment")
-- a serving option under it: refused naming the runtime and the option
t.raises(function() gp.infer_plan(t.with(job, { dp_attention = true })) end,
  "infer_plan: runtime llama.cpp runs no expert parallelism", "dp_attention under llama.cpp: refused",
  true)
-- a serving engine still gets the serving search (its EP layouts)
local s = gp.infer_plan(t.with(job, { runtime = "sglang" }))
t.ok(s.gpus > 0, "sglang: the serving search plans (" .. tostring(s.layout) .. ")")
