-- Predict an `infer` validation case (validation/SCHEMA.md) with
-- gpuplan.infer: output_tokens_per_s (whole system, steady state),
-- decode_tokens_per_s (one stream: 1 / ITL), itl_ms, ttft_ms; MoE serving
-- cases (EP, DP attention, one pool, MTP: gpuplan.serve) also
-- output_tokens_per_s_per_gpu (the decode pool) and
-- input_tokens_per_s_per_gpu (the prefill pool).
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

-- A MoE serving case (expert parallelism, DP attention, one pool measured
-- alone, MTP): gp.infer with gpuplan.serve's options.  A pool measured on
-- its own ("assuming unlimited resources for the non-tested phase", as the
-- SGLang and DeepSeek figures are) is the decode or prefill pool of a
-- disaggregated deployment whose other pool has the same layout; the
-- metric is that pool's tokens/s per GPU.
local function serve_case(case, cat, model, defaults)
  local hw, par, wl = case.hardware or {}, case.parallel or {}, case.workload or {}
  local metric = case.measured.metric
  local phase = v(wl.phase)
  if metric == "input_tokens_per_s_per_gpu" then phase = "prefill" end
  if metric == "output_tokens_per_s_per_gpu" and phase == nil then phase = "decode" end
  local tp = v(par.tp) or v(par.ep) or v(hw.gpus) or 1
  local a = {
    model = model, gpu = hw.gpu, cat = cat, tp = tp, ep = v(par.ep) or 1,
    dp_attention = v(par.dp_attention) == true,
    two_batch_overlap = v(wl.two_batch_overlap),
    redundant_experts = v(par.redundant_experts), imbalance = v(wl.imbalance),
    weights = v(wl.weight_dtype) or v(wl.precision) or "bf16", kv = v(wl.kv_dtype),
    input = v(wl.input_len), output = v(wl.output_len) or 2,
    mtp = v(wl.mtp), acceptance = v(wl.acceptance),
    prefill_tokens = v(wl.prefill_tokens), runtime = runtime_of(case),
    nics = v(hw.nics_per_node), nic_fabric = v(hw.inter_node),
    disagg = phase ~= nil, gpus = 2 * tp, prefill_gpus = phase ~= nil and tp or nil,
  }
  if a.nics and not a.nic_fabric then a.nics = nil end
  if not a.input then return nil, "workload.input_len not given" end
  local itl = v(wl.itl_max_ms)
  if phase == "prefill" then
    a.batch = 1        -- the decode pool is not measured
  elseif v(wl.batch) then
    a.batch = v(wl.batch)
  elseif itl then
    a.itl_max = itl / 1e3
  else
    return nil, "a decode case needs workload.batch (per GPU) or itl_max_ms"
  end
  local ok, r = pcall(infer.infer, a)
  if not ok then return nil, require("gpuplan.cli").clean(r) end
  if not r.fits then return nil, "does not fit: " .. tostring(r.why) end
  for _, d in ipairs(r.defaults) do defaults[#defaults + 1] = d end
  local pick = {
    output_tokens_per_s_per_gpu = r.decode_per_gpu,
    input_tokens_per_s_per_gpu = r.prefill_per_gpu,
    itl_ms = r.itl_s * 1e3, output_tokens_per_s = r.tokens_per_s,
  }
  if pick[metric] == nil then return nil, "metric " .. tostring(metric) .. " is not a MoE serving metric" end
  defaults[#defaults + 1] = string.format("batch=%d per GPU", r.batch)
  return { value = pick[metric], defaults = defaults }
end

-- Cases the MoE serving model answers: EP > 1, DP attention, a pool
-- measured alone, MTP, or a per-GPU pool metric.
local function is_serve(case)
  local par, wl = case.parallel or {}, case.workload or {}
  local m = case.measured and case.measured.metric
  return (v(par.ep) or 1) > 1 or v(par.dp_attention) == true or v(wl.phase) ~= nil or
    (v(wl.mtp) or 0) > 0 or m == "output_tokens_per_s_per_gpu" or
    m == "input_tokens_per_s_per_gpu"
end

return function(case, cat)
  local model, why = model_of(case.model or {})
  if not model then return nil, why end
  local hw, par, wl = case.hardware or {}, case.parallel or {}, case.workload or {}
  local metric = case.measured and case.measured.metric
  if is_serve(case) then
    if not v(hw.gpu) then return nil, "hardware.gpu not given" end
    local defaults = {}
    local _, rnote = runtime_of(case)
    defaults[1] = rnote
    return serve_case(case, cat, model, defaults)
  end
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
