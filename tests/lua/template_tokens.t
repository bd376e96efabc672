-- A serving case's chat template tokens (validation/SCHEMA.md
-- workload.template_tokens): a client on a chat endpoint (vllm bench
-- serve --backend openai-chat) counts each prompt before the server wraps
-- it in the model's chat template, so the log's input_len is short of
-- what the engine prefills by the template's tokens (Qwen3's: 8).  The
-- infer predictor hands gp.infer input_len + template_tokens, for one
-- model's replicas and the MoE serving model alike; the reader refuses a
-- non-whole count and another kind's case; the shipped gpustack rows,
-- whose notes quote --backend openai-chat, state Qwen3's 8 and
-- DeepSeek-R1-0528's 3 (BOS, <｜User｜>, <｜Assistant｜>; 2 on ShareGPT).
-- Run: ./gpuplan run tests/lua/template_tokens.t
local t = require "tap"
local gp = require "gpuplan"
local validate = require "gpuplan.validate"
local predict = require "gpuplan.predict.infer"
local cat = gp.catalog()
t.plan(17)

-- Qwen3-32B (the shipped rows' model record) on one A100 80GB under vLLM
-- 0.11.0, a burst of 1000 prompts of 128 tokens, 4 out (the gpustack
-- page's short-prompt run).
local QWEN3_32B = { layers = 64, hidden = 5120, heads = 64, kv_heads = 8, head_dim = 128,
                    ffn_hidden = 25600, ffn_gated = true, vocab = 151936, qk_norm = true,
                    max_seq = 40960 }
local function case(wl)
  local w = { weight_dtype = "bf16", input_len = 128, output_len = 4, num_requests = 1000,
              framework = "vllm" }
  for k, x in pairs(wl or {}) do w[k] = x end
  return { id = "template", kind = "infer", model = QWEN3_32B,
           hardware = { gpu = "a100-sxm-80gb", gpus = 1 }, parallel = { tp = 1 },
           workload = w, measured = { metric = "output_tokens_per_s", value = 1 },
           source = { title = "gpustack performance lab", version = "0.11.0" } }
end

-- Stated: the job prefills 128 + 8 = 136 tokens a request, and the case
-- prices exactly as one whose input_len is 136 (the same job; tolerance
-- 1e-12 relative: the same arithmetic twice).
do
  local p = assert(predict(case { template_tokens = 8 }, cat))
  local q = assert(predict(case { input_len = 136 }, cat))
  local bare = assert(predict(case(), cat))
  t.is(p.job.input, 136, "template_tokens 8: gp.infer's input = 128 + 8")
  t.near(p.value / q.value, 1, 1e-12,
         string.format("... priced as input_len 136 (%.2f = %.2f tokens/s)", p.value, q.value))
  -- 6% more prompt tokens in a prefill-bound burst: slower, not faster
  t.ok(p.value < bare.value,
       string.format("... slower than the bare 128-token prompt (%.2f < %.2f tokens/s)",
                     p.value, bare.value))
end

-- Past the model's context: gp.infer refuses the input it was handed
-- (128 + 40960 = 41088 tokens + 4 out over Qwen3-32B's 40960), and the
-- reason reads it back to the case's two fields.
do
  local p, why = predict(case { template_tokens = 40960 }, cat)
  t.ok(p == nil and tostring(why):find("workload.input_len 128 + workload.template_tokens "
       .. "40960", 1, true), "over max_seq: the reason names both fields: " .. tostring(why))
end

-- vLLM V0 (a case of 0.6.3) decodes off its CUDA graph past 8192 tokens
-- of context (gpuplan.infer M.v0_graph_max_context), and the predictor
-- says so where the job's context passes it: 8000 + 200 template tokens +
-- 100 out = 8300 does, the bare 8000 + 100 = 8100 does not (the note read
-- input_len alone, so the template's tokens never counted).
do
  local function noted(wl)
    local c = case(wl)
    c.workload.input_len, c.workload.output_len, c.workload.num_requests = 8000, 100, nil
    c.workload.batch = 1
    c.source.version = "0.6.3"
    local p = assert(predict(c, cat))
    for _, d in ipairs(p.defaults) do
      if d:find("graph_max_context=8192", 1, true) then return true end
    end
    return false
  end
  t.ok(noted { template_tokens = 200 }, "V0, 8000 + 200 + 100 tokens: graph_max_context said")
  t.ok(not noted(), "V0, 8000 + 100 tokens: not said")
end

-- The MoE serving model (gpuplan.serve) takes the same input: a Mixtral-
-- shaped model at TP 8 EP 8 with 8 template tokens prices as its 136-token
-- prompt (tolerance as above).
do
  local function moe(wl)
    local c = case(wl)
    c.model = { layers = 32, hidden = 4096, heads = 32, kv_heads = 8, ffn_hidden = 14336,
                ffn_gated = true, vocab = 32000,
                moe = { experts = 8, top_k = 2, expert_ffn_hidden = 14336 } }
    c.hardware = { gpu = "h100-sxm", gpus = 8 }
    c.parallel = { tp = 8, ep = 8 }
    c.workload.num_requests, c.workload.batch = nil, 64
    return c
  end
  local p = assert(predict(moe { template_tokens = 8 }, cat))
  local q = assert(predict(moe { input_len = 136 }, cat))
  t.is(p.job.input, 136, "MoE serving: input = 128 + 8")
  t.near(p.value / q.value, 1, 1e-12, "... priced as input_len 136")
end

-- The case reader: a whole number of tokens; 2.5 and 0 refused naming the
-- field, and so is a case without input_len; a train case that states it
-- refused.
do
  local read = t.read_case
  t.ok((read(case { template_tokens = 8 })), "an infer case with template_tokens 8 reads")
  local ok, err = read(case { template_tokens = 2.5 })
  t.ok(not ok and err:find("workload.template_tokens", 1, true),
       "template_tokens 2.5: refused naming the field: " .. tostring(err))
  ok, err = read(case { template_tokens = 0 })
  t.ok(not ok and err:find("workload.template_tokens", 1, true),
       "template_tokens 0: refused naming the field: " .. tostring(err))
  -- without the client's count it adds to: refused, not dropped (the
  -- predictor assumed a 128-token prompt and left the template out)
  local bare = case { template_tokens = 8 }
  bare.workload.input_len = nil
  ok, err = read(bare)
  t.ok(not ok and err:find("workload.template_tokens", 1, true)
       and err:find("workload.input_len", 1, true),
       "template_tokens without input_len: refused naming both: " .. tostring(err))
  local tr = case { template_tokens = 8 }
  tr.kind, tr.workload.method = "train", "pretrain"
  tr.workload.num_requests = nil
  tr.measured = { metric = "mfu", value = 0.4 }
  ok, err = read(tr)
  t.ok(not ok and err:find("workload.template_tokens", 1, true) and
       err:find("only infer cases", 1, true),
       "a train case's workload.template_tokens: refused, naming it: " .. tostring(err))
end

-- Every shipped gpustack Qwen3 row quotes the chat client and states
-- Qwen3's 8 tokens (a case states what its source states).
do
  local quoted, stated = 0, 0
  for _, c in ipairs(validate.read("validation/cases.json")) do
    if c.id:find("^gpustack%-") and c.id:find("qwen3", 1, true) and type(c.notes) == "string"
       and c.notes:find("--backend openai-chat", 1, true) then
      quoted = quoted + 1
      if c.workload.template_tokens == 8 then stated = stated + 1 end
    end
  end
  t.is(quoted, 60, "sixty gpustack Qwen3 rows quote vllm bench serve --backend openai-chat")
  t.is(stated, quoted, "... and each states workload.template_tokens 8")
end

-- The fifteen DeepSeek-R1-0528 rows of the same lab and client state the
-- DeepSeek-V3 family template's 3 (BOS, <｜User｜>, <｜Assistant｜>), 2 on
-- a ShareGPT row (that sampler's tokenizer(prompt) counts the BOS).
do
  local quoted, stated = 0, 0
  for _, c in ipairs(validate.read("validation/cases.json")) do
    if c.id:find("^gpustack%-") and c.id:find("deepseek-r1", 1, true) and type(c.notes) == "string"
       and c.notes:find("--backend openai-chat", 1, true) then
      quoted = quoted + 1
      local want = c.id:find("sharegpt", 1, true) and 2 or 3
      if c.workload.template_tokens == want then stated = stated + 1 end
    end
  end
  t.is(quoted, 15, "fifteen gpustack DeepSeek-R1 rows quote vllm bench serve --backend openai-chat")
  t.is(stated, quoted, "... and each states workload.template_tokens 3 (ShareGPT: 2)")
end
