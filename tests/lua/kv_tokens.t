-- The KV pool an engine reported, stated (gp.infer's kv_tokens; a case's
-- workload.kv_tokens and workload.margin): the sequences held are the
-- pool over each one's tokens, in place of the pool the memory rule
-- leaves; the MoE serving model refuses it by name; a case hands both
-- fields to gp.infer.
-- Run: ./gpuplan run tests/lua/kv_tokens.t
local t = require "tap"
local gp = require "gpuplan"
local predict = require "gpuplan.predict.infer"
local cat = gp.catalog()
t.plan(14)

-- The NV-benchmark RAG run: Llama 3.1 8B bf16 on one RTX 5090 under vLLM,
-- 3,500 in, 500 out, 64 in flight; the server's vllm:cache_config_info
-- "kv_cache_size_tokens": "83632" (5227 blocks x 16).
local base = { model = "llama3.1-8b", gpu = "rtx-5090", runtime = "vllm",
               input = 3500, output = 500, concurrency = 64 }
local r0 = gp.infer(base)
local r = gp.infer(t.with(base, { kv_tokens = 83632 }))
-- Hand derivation: vLLM V1 preempts (kv_policy preempt), so a running
-- sequence holds input + output / 2 = 3,500 + 250 = 3,750 tokens on
-- average; 83,632 / 3,750 = 22.30 -> 22 sequences (the run's
-- vllm:num_requests_running p50 was 22).  Exact: a floor of integers.
t.is(r.max_batch_kv, 22, "kv_tokens 83632: floor(83632 / 3750) = 22 sequences")
t.is(r.batch, 22, "... the running batch of 64 in flight: the 22 it holds")
-- The pool's bytes: Llama 3.1 8B's KV a token is K and V x 32 layers x
-- 8 KV heads x 128 dims x 2 B = 131,072 B; x 83,632 = 10,961,813,504 B.
-- Tolerance 1e-12 relative: one product and one quotient in doubles.
t.near(r.kv_budget, 83632 * 2 * 32 * 8 * 128 * 2, 1e-12,
       "KV budget: 83632 tokens x 131072 B = 10.96 GB")
-- The rule's own pool is larger (margin 0.10 of the card, gp.infer's
-- non-KV memory 16.95 GB): more sequences than the run's.
t.ok(r0.max_batch_kv > r.max_batch_kv,
     "without kv_tokens: the rule's pool, " .. tostring(r0.max_batch_kv) .. " sequences")
t.ok(r.tokens_per_s < r0.tokens_per_s, "... fewer sequences, fewer tokens a second")

-- A scheduler that reserves the whole length (kv_policy max): 83,632 /
-- 4,000 = 20.9 -> 20 sequences.
local rm = gp.infer(t.with(base, { kv_tokens = 83632, kv_policy = "max" }))
t.is(rm.max_batch_kv, 20, "kv_policy max: floor(83632 / 4000) = 20 sequences")

-- Bad values: refused naming the option.
t.raises(function() gp.infer(t.with(base, { kv_tokens = 0 })) end, "kv_tokens", "kv_tokens 0 refused")
t.raises(function() gp.infer(t.with(base, { kv_tokens = -5 })) end, "kv_tokens",
         "kv_tokens -5 refused")
t.raises(function() gp.infer(t.with(base, { kv_tokens = "many" })) end, "kv_tokens",
         "kv_tokens 'many' refused")
-- The MoE serving model sizes its own pool: refused by name.
t.raises(function()
  gp.infer { model = "mixtral-8x7b", gpu = "h100-sxm", gpus = 8, tp = 8, ep = 8, batch = 32,
             kv_tokens = 100000 }
end, "kv_tokens is the KV pool of one model", "MoE serving: kv_tokens refused")

-- A case states both (workload.kv_tokens, workload.margin): they reach
-- gp.infer, and the pool is the stated one.
local function case(wl)
  local w = { framework = "vllm", weight_dtype = "bf16", input_len = 3500, output_len = 500,
              concurrency = 64, max_batch = 256 }
  for k, x in pairs(wl) do w[k] = x end
  return { id = "kvpool", kind = "infer",
           model = { layers = 32, hidden = 4096, heads = 32, kv_heads = 8, head_dim = 128,
                     ffn_hidden = 14336, ffn_gated = true, vocab = 128256 },
           hardware = { gpu = "rtx-5090", gpus = 1 }, parallel = { tp = 1 },
           workload = w, measured = { metric = "output_tokens_per_s", value = 1 },
           source = { title = "vLLM" } }
end
local p = assert(predict(case { kv_tokens = 83632, margin = 1 - 0.8675233414220872 }, cat))
t.is(p.job.kv_tokens, 83632, "case: workload.kv_tokens reaches gp.infer")
t.near(p.job.margin, 1 - 0.8675233414220872, 1e-15, "case: workload.margin reaches gp.infer")
t.is(gp.infer(p.job).max_batch_kv, 22, "case: the stated pool holds 22 sequences")
-- The case reader takes both fields on an infer case.
t.ok((t.read_case(case { kv_tokens = 83632, margin = 0.13 })), "an infer case with both reads")
