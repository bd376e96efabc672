-- measured.statistic: the statistic of a latency's samples the source
-- reports (validation/SCHEMA.md).  vLLM's benchmark prints a mean and a
-- median of every token gap of the run ("median_itl_ms =
-- np.median(itls)", vllm/benchmarks/serve.py calculate_metrics): the
-- few gaps that carry another request's prompt chunk lengthen the mean,
-- not the median, which is the decode step at the batch.
-- Run: ./gpuplan run tests/lua/case_statistic.t
local t = require "tap"
local gp = require "gpuplan"
local cat = gp.catalog()
local pi = require "gpuplan.predict.infer"
t.plan(10)

-- Llama 3.1 8B on one H100 under vLLM 0.19.1, 8 streams of 20000-token
-- prompts and 2019-token answers, 150 requests (the vLLM blog's FP8
-- KV-cache post, Table 4's setup).
local function case(stat, metric)
  return { id = "stat-case", kind = "infer",
           model = { layers = 32, hidden = 4096, heads = 32, kv_heads = 8, head_dim = 128,
                     ffn_hidden = 14336, ffn_gated = true, vocab = 128256, max_seq = 131072 },
           hardware = { gpu = "h100-sxm", gpus = 1 }, parallel = { tp = 1 },
           workload = { framework = "vllm", weight_dtype = "bf16", input_len = 20000,
                        output_len = 2019, concurrency = 8, num_requests = 150 },
           measured = { metric = metric or "itl_ms", value = 15, statistic = stat },
           source = { title = "vLLM blog", version = "0.19.1" } }
end

-- 1-2. The median reads gp.infer's itl_s, the mean (absent or "mean")
-- its itl_load_s: the same job's two results, so equal to rounding.
local med = assert(pi(case("median"), cat))
local mean = assert(pi(case(nil), cat))
local mean2 = assert(pi(case("mean"), cat))
local r = assert(gp.infer(med.job))
t.near(med.value, r.itl_s * 1e3, 1e-9, "median ITL: the decode step at the batch (itl_s)")
t.ok(mean.value == mean2.value and math.abs(mean.value / (r.itl_load_s * 1e3) - 1) < 1e-9,
     "mean ITL, stated or not: the gap with the prompts between (itl_load_s)")

-- 3. The mean exceeds the median by the prompts' share.  By hand: while a
-- request decodes its 2019 tokens the 8 slots turn over once, 8 prompts
-- of 20000 tokens, each ~0.55 s on an H100 (2 x 8.03e9 x 20000 = 321
-- TFLOP of weights plus ~105 TFLOP of causal attention, 4 x 32 x 4096 x
-- 20000^2 / 2, at ~770 TFLOP/s dense bf16): 8 x 0.55 / 2018 = 2.2 ms a
-- gap.  Tolerance: 1 to 4 ms, the prefill rate and the chunks' overlap
-- with the decodes (each chunk step carries the 7 others' tokens) not
-- known closer by hand.
local d = mean.value - med.value
t.ok(d > 1 and d < 4, string.format("mean - median ITL = %.2f ms (hand: ~2.2)", d))
t.is(med.shows, "r.itl_s * 1e3",
     "the explain reads itl_s for a median")

-- 4-5. A median of a rate is no statistic a benchmark prints: refused
-- naming the field; an unknown statistic is refused with the list.
local ok, e = t.read_case(case("median", "output_tokens_per_s"))
t.ok(not ok and e:find("field 'measured.statistic'", 1, true) ~= nil,
     "a median output_tokens_per_s is refused: " .. tostring(e))
local ok2, e2 = t.read_case(case("p99"))
t.ok(not ok2 and e2:find("measured.statistic", 1, true) ~= nil, "'p99' is refused: " .. tostring(e2))

-- 6-7. MoE serving (an expert weight format routes the case to
-- gpuplan.serve): the median reads the decode step a token (tpot_s), the
-- mean the gap with the prompts (itl_s).
local function moe(stat)
  local c = case(stat)
  c.model = { layers = 24, hidden = 2880, heads = 64, kv_heads = 8, head_dim = 64,
              ffn_hidden = 2880, ffn_gated = true, vocab = 201088, max_seq = 131072,
              moe = { experts = 32, top_k = 4, shared_experts = 0, expert_ffn_hidden = 2880,
                      dense_layers = 0 } }
  c.workload.expert_weight_dtype = "mxfp4"
  return c
end
local mm = assert(pi(moe("median"), cat))
local ma = assert(pi(moe(nil), cat))
local job = assert(gp.infer(mm.job))
t.near(mm.value, job.tpot_s * 1e3, 1e-9, "MoE median ITL: the decode step a token (tpot_s)")
t.near(ma.value, job.itl_s * 1e3, 1e-9, "MoE mean ITL: the gap with the prompts (itl_s)")

-- 8. A median TTFT reads the one TTFT gp.infer prices, as the mean does,
-- and the defaults line says so (exact: the same job, the same read).
local mt = assert(pi(case("median", "ttft_ms"), cat))
local at = assert(pi(case(nil, "ttft_ms"), cat))
t.ok(mt.value == at.value and table.concat(mt.defaults, "; "):find("median TTFT read as ttft_s",
     1, true) ~= nil, "median TTFT: the mean's figure, said on the defaults line")

-- 9. The shipped median cases read.
local n = 0
for _, c in ipairs(require("gpuplan.validate").read("validation/cases.json")) do
  if c.measured.statistic == "median" then n = n + 1 end
end
t.ok(n >= 8, "shipped cases stating a median: " .. n)
