-- The MoE serving model's prompt chunk where none is given (serve.lua
-- prefill_tokens): the runtime's own step budget, the rule gp.infer's
-- replicas take for max_num_tokens (gpuplan.infer M.step_budget).  It
-- priced every runtime's chunk at 16384, where vLLM's V1 API server takes
-- max_num_batched_tokens 8192 a step on an H100 (vllm/engine/arg_utils.py
-- get_batch_defaults: >= 70 GiB and not an A100, OPENAI_API_SERVER 8192).
-- Run with ./gpuplan run tests/lua/moe_step_budget.t.
local t = require "tap"
local gp = require "gpuplan"
local infer = require "gpuplan.infer"

t.plan(9)

-- gpt-oss-120b on one H200 (141 GB: >= 70 GiB, not an A100) under vLLM,
-- the shape of the vLLM FP8 KV-cache post's gpt-oss run; expert_weights
-- picks the serving model.
local job = { model = "gpt-oss-120b", gpu = "h200-sxm", gpus = 1, runtime = "vllm",
              expert_weights = "mxfp4", input = 20000, output = 2019, concurrency = 8 }
local r = gp.infer(job)
t.is(r.prefill_tokens, 8192, "vLLM on an H200: max_num_batched_tokens 8192 a step, not 16384")
t.ok(t.said(r, "prefill_tokens=8192 (vLLM's API server's on h200-sxm", true),
  "... said in the defaults")
-- 20000 prompt tokens in steps of 8192 less the 8 decodes (8184 of room):
-- ceil(20000 / 8184) = 3 steps under load, ceil(20000 / 8192) = 3 alone
t.is(r.ttft_steps, 3, "20000 tokens in 8184 a step beside 8 decodes: 3 steps")
t.is(r.ttft_one_steps, 3, "one prompt alone: ceil(20000 / 8192) = 3 steps")
-- the serving model reads no max_num_tokens: the dense path's vLLM
-- budget is not said (it read "max_num_tokens=131072 (vLLM without
-- chunked prefill ...)" beside "mixed steps")
t.ok(not t.said(r, "max_num_tokens=", true), "no max_num_tokens in the serving model's defaults")

-- a budget given wins (exact: the value passed through)
local g = gp.infer(t.with(job, { prefill_tokens = 16384 }))
t.is(g.prefill_tokens, 16384, "prefill_tokens given: 16384 as given")

-- SGLang: its chunked_prefill_size by the card's memory (server_args.py
-- _handle_gpu_memory_settings): 8192 under 160 GiB (H200, 141 GB), 16384
-- at or above (B200, 180 GB)
t.is(infer.step_budget("sglang", { memory = "141GB", name = "H200" }), 8192,
  "SGLang on a 141 GB card: 8192")
t.is(infer.step_budget("sglang", { memory = "180GB", name = "B200" }), 16384,
  "SGLang on a 180 GB card: 16384")
-- another runtime: nil, the engine's default (serve.c 16384)
t.is(infer.step_budget("trtllm", { memory = "80GB", name = "H100" }), nil,
  "TensorRT-LLM: no rule here, the engine's default")
