-- first_token_lag (gp.infer; gpuplan.options' declaration with its
-- sources) and the vllm profile's use of it (workload.server
-- async-llm-engine, SCHEMA.md): vLLM V0's async output processor hands a
-- step's outputs on inside the next step, and its in-process
-- AsyncLLMEngine wakes the client when that step ends, so a prompt's first
-- token reaches it one decode step after the prefill.
-- Run: ./gpuplan run tests/lua/first_token_lag.t
local t = require "tap"
local gp = require "gpuplan"
local predict = require "gpuplan.predict.infer"
local cat = gp.catalog()
t.plan(12)

-- AccelMark's interactive scenario on one H100: one request at a time,
-- the median prompt 194 + 11 template tokens, answers of 347.
local job = { model = "llama3-8b", gpu = "h100-sxm", runtime = "vllm", input = 205,
              output = 347, concurrency = 1 }
local r0 = gp.infer(job)
local r1 = gp.infer(t.with(job, { first_token_lag = 1 }))
local r2 = gp.infer(t.with(job, { first_token_lag = 2 }))

-- Each lagged step is the decode step at the run's batch, here 1: TTFT =
-- prefill + lag x itl_s, exact (one addition), the decode untouched.
t.ok(math.abs(r1.ttft_s - (r0.ttft_s + r0.itl_s)) < 1e-12, string.format(
  "lag 1: ttft %.3f ms = %.3f + one step %.3f ms", r1.ttft_s * 1e3, r0.ttft_s * 1e3,
  r0.itl_s * 1e3))
t.ok(math.abs(r2.ttft_s - (r0.ttft_s + 2 * r0.itl_s)) < 1e-12, "lag 2: two steps")
t.is(r1.itl_s, r0.itl_s, "the decode step itself is unchanged")
t.is(r1.tokens_per_s, r0.tokens_per_s, "the rate is priced as before (one step in ~347)")

-- The vllm profile: a V0 release (0.7.3) on the in-process AsyncLLMEngine
-- lags one step; the same case on the OpenAI server (no workload.server),
-- on a V0 release without the async output processor (0.5.4, before 0.6.0)
-- or on V1 (0.19.1) does not.
local function case(server, ver, gpu)
  return { id = "lag", kind = "infer",
           model = { layers = 32, hidden = 4096, heads = 32, kv_heads = 8, head_dim = 128,
                     ffn_hidden = 14336, ffn_gated = true, vocab = 128256, max_seq = 8192 },
           hardware = { gpu = gpu or "h100-sxm", gpus = 1 }, parallel = { tp = 1 },
           workload = { framework = "vllm", weight_dtype = "bf16", input_len = 194,
                        template_tokens = 11, output_len = 347, concurrency = 1,
                        server = server },
           measured = { metric = "ttft_ms", value = 20, statistic = "median" },
           source = { title = "AccelMark", version = ver } }
end
local p = assert(predict(case("async-llm-engine", "0.7.3"), cat))
t.is(p.job.first_token_lag, 1, "V0 0.7.3 in process: first_token_lag 1")
-- ROCm too: vLLM 0.6.x's DeviceConfig names a ROCm device "cuda"
-- ("if current_platform.is_cuda_alike(): self.device_type = \"cuda\""),
-- which verify_async_output_proc keeps on; the dstack405b rows' MI300X
-- server (vllm serve --disable-frontend-multiprocessing, 0.6.3).
t.is(assert(predict(case("async-llm-engine", "0.6.3", "mi300x"), cat)).job.first_token_lag, 1,
  "V0 0.6.3 on an MI300X in process: first_token_lag 1")
t.is(assert(predict(case(nil, "0.7.3"), cat)).job.first_token_lag, nil,
  "the OpenAI server's MQLLMEngine: no lag")
t.is(assert(predict(case("async-llm-engine", "0.5.4"), cat)).job.first_token_lag, nil,
  "before 0.6.0: no async output processor, no lag")
t.is(assert(predict(case("async-llm-engine", "0.19.1"), cat)).job.first_token_lag, nil,
  "V1: no lag")

-- Bad input: a clear error naming the argument.
t.raises(function() gp.infer(t.with(job, { first_token_lag = -1 })) end,
  "first_token_lag must be a whole number", "a negative lag is refused", true)
t.raises(function() gp.infer(t.with(job, { first_token_lag = 1, output = 1 })) end,
  "first_token_lag 1 waits on decode steps, but output 1 runs none", "no decode step to wait on", true)
-- The MoE serving model's result never read it (3 lagged steps gave the
-- same TTFT as none): refused there, naming it.
t.raises(function() gp.infer({ model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 8, ep = 8,
    tp = 8, runtime = "vllm", first_token_lag = 3 }) end,
  "first_token_lag 3 is priced for one model on its replicas", "the MoE serving model refuses it",
  true)
