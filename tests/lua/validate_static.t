-- A serving case's static batch (validation/SCHEMA.md workload.batching;
-- gp.infer's batching, the one option behind --batching): TensorRT-LLM's
-- gptSessionBenchmark runs one batch to completion, its prompts in one
-- context pass and the batch decoding in lockstep.  The infer predictor
-- hands the stated value to gp.infer (and on TensorRT-LLM leaves
-- trtllm-bench's tuned limits and the paged pool's fraction unread), the
-- MoE serving model refuses it by name, the reader refuses another value
-- and another kind's case, and every shipped case quoting
-- gptSessionBenchmark states it.
-- Run: ./gpuplan run tests/lua/validate_static.t
local t = require "tap"
local gp = require "gpuplan"
local validate = require "gpuplan.validate"
local predict = require "gpuplan.predict.infer"
local cat = gp.catalog()
t.plan(10)

-- GPT-J 6B in FP8 on one H100 SXM, 64 prompts of 2048 tokens, 128 out,
-- TensorRT-LLM (the 0.9.0 page's row).
local GPTJ = { layers = 28, hidden = 4096, heads = 16, kv_heads = 16, head_dim = 256,
               ffn_hidden = 16384, ffn_gated = false, vocab = 50400, tied_embeddings = false,
             }
local function case(wl)
  local w = { framework = "trtllm", weight_dtype = "fp8", kv_dtype = "fp8", batch = 64,
              input_len = 2048, output_len = 128, num_requests = 64, batching = "static" }
  for k, x in pairs(wl or {}) do w[k] = x end
  return { id = "static", kind = "infer", model = GPTJ,
           hardware = { gpu = "h100-sxm", gpus = 1 }, parallel = { tp = 1 },
           workload = w, measured = { metric = "output_tokens_per_s", value = 1 },
           source = { title = "TensorRT-LLM 0.9.0 performance.md", version = "0.9.0" } }
end

-- Stated: the key reaches gp.infer, and the price is gp.infer's static
-- batch at the profile's settings, stated directly: FP8 KV, the whole
-- length held a sequence, margin 0 (gptSession's contiguous cache), the
-- budget the batch's 64 x 2048 prompt tokens -- the same call, so within
-- 1e-12 relative.
do
  local p = assert(predict(case(), cat))
  t.is(p.job.batching, "static", "batching static reaches gp.infer")
  t.ok(p.job.max_batch == nil and p.job.kv_free_fraction == nil,
       "... with trtllm-bench's limits and the paged pool's fraction left unread")
  local r = gp.infer { model = GPTJ, gpu = "h100-sxm", weights = "fp8", kv = "fp8",
                       input = 2048, output = 128, batch = 64, requests = 64,
                       runtime = "trtllm", batching = "static" }
  t.near(p.value, r.tokens_per_s, 1e-12,
         string.format("priced as gp.infer's static batch: %.1f tokens/s", p.value))
  -- Not stated: trtllm-bench's in-flight burst, another price.
  local c = case()
  c.workload.batching = nil
  local q = assert(predict(c, cat))
  t.ok(math.abs(q.value / p.value - 1) > 0.01,
       string.format("unstated: the in-flight burst, %.1f tokens/s", q.value))
end

-- The MoE serving model: refused by name, not priced without it.
do
  local c = case { batch = 32, num_requests = 32 }
  c.model = { layers = 32, hidden = 4096, heads = 32, kv_heads = 8, ffn_hidden = 14336,
              ffn_gated = true, vocab = 32000,
              moe = { experts = 8, top_k = 2, expert_ffn_hidden = 14336 } }
  c.hardware = { gpu = "h100-sxm", gpus = 8 }
  c.parallel = { tp = 8, ep = 8 }
  local p, why = predict(c, cat)
  t.ok(p == nil and tostring(why):find("batching static", 1, true),
       "MoE serving: batching static refused by name: " .. tostring(why))
end

-- The case reader: one of the option's values; another kind's case that
-- states it is refused.
do
  local read = t.read_case
  t.ok((read(case())), "an infer case with batching static reads")
  local ok, err = read(case { batching = "inflight" })
  t.ok(not ok and err:find("workload.batching", 1, true),
       "batching \"inflight\": refused naming the field: " .. tostring(err))
  local tr = case()
  tr.kind, tr.workload.method = "train", "pretrain"
  tr.workload.num_requests = nil
  tr.measured = { metric = "mfu", value = 0.4 }
  ok, err = read(tr)
  t.ok(not ok and err:find("workload.batching", 1, true) and err:find("only infer cases", 1, true),
       "a train case's workload.batching: refused, naming it: " .. tostring(err))
end

-- Every shipped case whose notes quote gptSessionBenchmark (the
-- performance pages of 0.5 and 0.9.0, the 2023 blogs) states the static
-- batch: a case states what its source states.
do
  local quoted, stated = 0, 0
  for _, c in ipairs(validate.read("validation/cases.json")) do
    if type(c.notes) == "string" and c.notes:find("gptSessionBenchmark", 1, true) then
      quoted = quoted + 1
      if c.workload.batching == "static" then stated = stated + 1 end
    end
  end
  t.ok(quoted >= 40, quoted .. " shipped rows name gptSessionBenchmark")
  t.is(stated, quoted, "... and each states workload.batching static")
end
