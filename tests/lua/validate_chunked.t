-- A serving case's chunked prefill (validation/SCHEMA.md
-- workload.chunked_prefill; gp.infer's chunked_prefill, the one option
-- behind --chunked-prefill): TensorRT-LLM's chunked context
-- (--enable_chunked_prefill) cuts a prompt longer than max_num_tokens into
-- chunks that ride in the decode steps, where without it the runtime
-- takes a prompt only whole and refuses one over the budget.  The infer
-- predictor hands the stated value to gp.infer, the MoE serving model
-- refuses it by name, the reader refuses a non-boolean and another kind's
-- case, and the shipped gpustack trtllm-serve rows state it (the three 32K
-- rows, refused before, priced).
-- Run: ./gpuplan run tests/lua/validate_chunked.t
local t = require "tap"
local gp = require "gpuplan"
local validate = require "gpuplan.validate"
local predict = require "gpuplan.predict.infer"
local cat = gp.catalog()
t.plan(15)

-- Qwen3-32B (the shipped rows' model record) on one A100 80GB, served by
-- TensorRT-LLM (workload.framework) at trtllm-serve's budget, 8192 tokens
-- a step, with 32000-token prompts.
local QWEN3_32B = { layers = 64, hidden = 5120, heads = 64, kv_heads = 8, head_dim = 128,
                    ffn_hidden = 25600, ffn_gated = true, vocab = 151936, qk_norm = true,
                    max_seq = 40960 }
local function case(wl, metric)
  local w = { weight_dtype = "bf16", input_len = 32000, output_len = 79, num_requests = 4,
              max_batch = 2048, max_num_tokens = 8192, framework = "trtllm" }
  for k, x in pairs(wl or {}) do w[k] = x end
  return { id = "chunked", kind = "infer", model = QWEN3_32B,
           hardware = { gpu = "a100-sxm-80gb", gpus = 1 }, parallel = { tp = 1 },
           workload = w, measured = { metric = metric or "output_tokens_per_s", value = 1 },
           source = { title = "TensorRT-LLM v1.2.0rc1 trtllm-serve" } }
end

-- Not stated: TensorRT-LLM's default, whole prompts, and a 32000-token
-- prompt over the 8192-token budget is refused, naming what to give.
do
  local p, why = predict(case(), cat)
  t.ok(p == nil and tostring(why):find("is below the prompt (input 32000 tokens)", 1, true)
       and tostring(why):find("give chunked_prefill", 1, true),
       "no chunked_prefill: the 32K prompt over max_num_tokens 8192 refused: " .. tostring(why))
end

-- Stated true: priced, the key reaching gp.infer.
local pc = assert(predict(case { chunked_prefill = true }, cat))
t.ok(pc.job.chunked_prefill == true, "chunked_prefill true reaches gp.infer")
t.ok(pc.value > 0, "... and the run is priced: " .. pc.value .. " tokens/s")
-- Stated false is the runtime's own default: refused alike.
t.ok(predict(case { chunked_prefill = false }, cat) == nil, "chunked_prefill false: refused as unstated")

-- The TTFT of one 32000-token prompt in chunks (engine/infer_run.c
-- chunked_ttft): n = ceil(32000 / 8192) = 4 steps of q = 32000 / 4 = 8000
-- prompt tokens, each a forward pass of its 8000 tokens (the chunk's
-- GEMMs) whose attention runs over the keys before it and its own, the
-- chunks' ends on average at (32000 + 8000) / 2 = 20000 keys.  That one
-- step is the prefill of a 20000-token prompt of which 12000 tokens are
-- found in the prefix cache (prefix_hit 0.6): 8000 new tokens over a mean
-- 20000-key context, priced by the same infer_step.  So TTFT(chunked) =
-- 4 x TTFT(20000 in, prefix_hit 0.6), the latter in one step (8000 <=
-- 8192 tokens).  Tolerance 1e-9 relative: the same step priced twice.
-- One request (num_requests 1): a burst's TTFT is its requests' mean,
-- each behind the prompts ahead of it (below).
do
  local p = assert(predict(case({ chunked_prefill = true, num_requests = 1 }, "ttft_ms"), cat))
  local one = gp.infer { model = QWEN3_32B, gpu = "a100-sxm-80gb", runtime = "trtllm",
                         input = 20000, prefix_hit = 0.6, output = 79, batch = 1,
                         max_num_tokens = 8192, chunked_prefill = true }
  t.near(p.value / (one.ttft_s * 1e3), 4, 4e-9,
         string.format("TTFT = 4 chunks of 8000 tokens at a 20000-key mean (%.1f ms = 4 x %.1f)",
                       p.value, one.ttft_s * 1e3))
  -- and not the whole prompt in one step: the chunks' weight reads and
  -- their attention over the prefix are priced, not a ratio of a whole
  -- prefill (which 4 x the 8000-token step at 20000 keys is not)
  local whole = gp.infer { model = QWEN3_32B, gpu = "a100-sxm-80gb", runtime = "trtllm",
                           input = 32000, output = 79, batch = 1, max_num_tokens = 32768 }
  t.ok(math.abs(p.value / (whole.ttft_s * 1e3) - 1) < 0.05,
       string.format("... within 5%% of the whole prompt's one step (%.1f ms): the chunks' "
                     .. "linears sum to its tokens, their attention to its causal attention",
                     whole.ttft_s * 1e3))
  -- The case's burst of 4 such prompts sent at once (num_requests 4):
  -- first come, first served at 8192 tokens a step (the running
  -- requests' decodes counted), the prompts are whole at the ends of
  -- steps 4, 8, 12 and 16 (32000 k <= 8192 s less the decodes), so the
  -- mean TTFT is 10 full steps against the one prompt's 4 of 8000
  -- tokens: at least 10 / 4 x 8192 / 8000 = 2.56 times it; at most 3.5
  -- (the steps also decode the requests already running, at 32000 and
  -- more keys, and run off the graph: mixed_time).
  local b = assert(predict(case({ chunked_prefill = true }, "ttft_ms"), cat))
  t.ok(b.value / p.value >= 2.56 and b.value / p.value <= 3.5,
       string.format("a burst of 4: mean TTFT %.1f ms = %.2f x one prompt's (FCFS: 10 steps "
                     .. "against 4)", b.value, b.value / p.value))
end

-- The MoE serving model chunks by prefill_tokens: a case that states
-- chunked_prefill true is refused by name, not priced without it.
do
  local c = case { chunked_prefill = true, batch = 32 }
  c.workload.max_num_tokens, c.workload.num_requests = nil, nil
  c.model = { layers = 32, hidden = 4096, heads = 32, kv_heads = 8, ffn_hidden = 14336,
              ffn_gated = true, vocab = 32000,
              moe = { experts = 8, top_k = 2, expert_ffn_hidden = 14336 } }
  c.workload.input_len = 1024
  c.hardware = { gpu = "h100-sxm", gpus = 8 }
  c.parallel = { tp = 8, ep = 8 }
  local p, why = predict(c, cat)
  t.ok(p == nil and tostring(why):find("chunked_prefill", 1, true),
       "MoE serving: chunked_prefill true refused by name: " .. tostring(why))
end

-- The case reader: a boolean (the option's type, declared once); a string
-- is refused naming the field; a train case that states it is refused.
do
  -- tap's read_case: c read as `gpuplan validate` reads a file of it
  local read = t.read_case
  t.ok((read(case { chunked_prefill = true })), "an infer case with chunked_prefill true reads")
  local ok, err = read(case { chunked_prefill = "yes" })
  t.ok(not ok and err:find("workload.chunked_prefill", 1, true),
       "chunked_prefill \"yes\": refused naming the field: " .. err)
  local tr = case { chunked_prefill = true }
  tr.kind, tr.workload.method = "train", "pretrain"
  tr.workload.max_batch, tr.workload.max_num_tokens, tr.workload.num_requests = nil, nil, nil
  tr.measured = { metric = "mfu", value = 0.4 }
  ok, err = read(tr)
  t.ok(not ok and err:find("workload.chunked_prefill", 1, true) and
       err:find("only infer cases", 1, true),
       "a train case's workload.chunked_prefill: refused, naming it: " .. err)
end

-- The shipped gpustack TensorRT-LLM 32K rows (trtllm-serve ...
-- --enable_chunked_prefill, quoted in their notes) state it and are
-- priced where they were refused.
do
  local ids = {
    ["gpustack-trtllm120rc1-qwen3-14b-a100-32000in-99out-100req"] = true,
    ["gpustack-trtllm120rc1-qwen3-32b-a100-32000in-79out-100req"] = true,
    ["gpustack-trtllm120rc1-qwen3-32b-fp8-h100-32000in-78out-100req"] = true,
  }
  local seen, priced = 0, 0
  for _, c in ipairs(validate.read("validation/cases.json")) do
    if ids[c.id] then
      seen = seen + 1
      if c.workload.chunked_prefill == true and c.notes:find("--enable_chunked_prefill", 1, true)
         and predict(c, cat) then
        priced = priced + 1
      end
    end
  end
  t.is(seen, 3, "the three 32K rows are shipped")
  t.is(priced, 3, "... each states chunked_prefill true, quotes the flag, and is priced")
end

-- Every shipped case whose notes quote a trtllm-serve command with
-- --enable_chunked_prefill states it (the twelve gpustack 'optimized'
-- rows, 32K, 4K, 2K and 128 input on three pages): a case states what its
-- source states.
do
  local quoted, stated = 0, 0
  for _, c in ipairs(validate.read("validation/cases.json")) do
    if type(c.notes) == "string" and c.notes:find("trtllm%-serve [^']*%-%-enable_chunked_prefill'") then
      quoted = quoted + 1
      if c.workload.chunked_prefill == true then stated = stated + 1 end
    end
  end
  t.is(quoted, 12, "twelve rows quote trtllm-serve ... --enable_chunked_prefill")
  t.is(stated, quoted, "... and each states workload.chunked_prefill true")
end
