-- Predict an `infer` validation case (validation/SCHEMA.md) with
-- gpuplan.infer: output_tokens_per_s (whole system, steady state),
-- decode_tokens_per_s (one stream: 1 / ITL), itl_ms, ttft_ms.
--
-- What the case does not state is a documented default, listed in
-- `defaults`:
--   kv dtype bf16 (the engines' default unless KV quantisation is enabled);
--   input 128 / output 256 tokens when not given;
--   runtime from the framework the case names (runtime_of below); the engine limits of gpuplan.infer (max_num_tokens 8192,
--   max_batch 2048, KV reserved for input + output per sequence).

local infer = require "gpuplan.infer"
local case_ = require "gpuplan.predict.case"
local v, model_of = case_.v, case_.model

-- Runtime implied by the framework the case names (source title/id and
-- notes): a general rule on the tool, never on a case id.  Python-eager
-- tools (HF transformers generate, "Python eager") -> eager-pytorch, LitGPT
-- -> litgpt (eager with the ops of LitGPT's own block);
-- NIM (measured over HTTP, e.g. with AIPerf) -> nim-http; TensorRT-LLM,
-- vLLM, SGLang -> their names; otherwise a CUDA-graph serving engine.
local runtime_rules = {   -- whole words (Lua frontier patterns), first match wins
  { "litgpt", "litgpt" }, { "lit%-gpt", "litgpt" }, { "transformers", "eager-pytorch" },
  { "python eager", "eager-pytorch" }, { "pytorch eager", "eager-pytorch" },
  { "nim", "nim-http" }, { "tensorrt%-llm", "trtllm" }, { "trtllm", "trtllm" },
  { "vllm", "vllm" }, { "sglang", "sglang" },
}
local function runtime_of(case)
  local rt, word = case_.framework(case, runtime_rules)
  if rt then return rt, "runtime=" .. rt .. " (framework named: " .. word .. ")" end
  return "graphs", "runtime=graphs (serving engine assumed)"
end

return function(case, cat)
  local model, why = model_of(case.model or {})
  if not model then return nil, why end
  local hw, par, wl = case.hardware or {}, case.parallel or {}, case.workload or {}
  local metric = case.measured and case.measured.metric
  local pick = {
    output_tokens_per_s = function(r) return r.tokens_per_s end,
    decode_tokens_per_s = function(r) return r.stream_tokens_per_s end,
    itl_ms = function(r) return r.itl_s * 1e3 end,
    ttft_ms = function(r) return r.ttft_s * 1e3 end,
  }
  if not pick[metric] then return nil, "metric " .. tostring(metric) .. " is not an infer metric" end
  if not v(hw.gpu) then return nil, "hardware.gpu not given" end
  local defaults = {}
  local runtime, rnote = runtime_of(case)
  defaults[#defaults + 1] = rnote
  local a = {
    model = model, gpu = hw.gpu, gpus = v(hw.gpus) or 1, tp = v(par.tp) or 1,
    pp = v(par.pp) or 1, weights = v(wl.weight_dtype) or v(wl.precision) or "bf16",
    kv = v(wl.kv_dtype), runtime = runtime, cat = cat,
    input = v(wl.input_len), output = v(wl.output_len),
  }
  if not a.input then a.input = 128; defaults[#defaults + 1] = "input=128" end
  if not a.output then a.output = 256; defaults[#defaults + 1] = "output=256" end
  local batch = v(wl.batch) or v(par.micro_batch)
  local conc = v(wl.concurrency)
  if conc then a.concurrency = conc elseif batch then a.batch = batch end
  local ok, r = pcall(infer.infer, a)
  if not ok then return nil, require("gpuplan.cli").clean(r) end
  if not r.fits then return nil, "does not fit: " .. tostring(r.why) end
  for _, d in ipairs(r.defaults) do defaults[#defaults + 1] = d end
  defaults[#defaults + 1] = string.format("batch=%d", r.batch)
  return { value = pick[metric](r), defaults = defaults }
end
