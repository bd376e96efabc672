-- Chunked prefill where a case or job does not state it: the runtime's own
-- default for its release (issue 22).  vLLM V1's step budget
-- (max_num_batched_tokens, its API server's) by release and card: PR
-- #12369's rule in 0.8.0-0.8.4 (8192 on an H100/H200 by name, else 2048),
-- #17073's in 0.8.5 (8192 at 70 GiB or more), today's (gp.infer's
-- M.vllm_limits) from 0.9.0, a date standing in for the release; SGLang's
-- chunked_prefill_size by card memory under --enable-mixed-chunk; and the
-- shipped cases whose sources set it state it.
-- Run: ./gpuplan run tests/lua/chunked_defaults.t
local t = require "tap"
local gp = require "gpuplan"
local infer = require "gpuplan.infer"
local validate = require "gpuplan.validate"
local predict = require "gpuplan.predict.infer"
local cat = gp.catalog()
t.plan(29)

local function has(res, pat)
  for _, d in ipairs(res.defaults) do if d:find(pat, 1, true) then return true end end
  return false
end

-- A Llama 3 8B serving case run by vLLM (workload.framework), 2048 in /
-- 256 out, 64 requests, at the release or date given.
local function vcase(src, gpu, wl)
  local w = { weight_dtype = "bf16", input_len = 2048, output_len = 256, num_requests = 64,
              framework = "vllm" }
  for k, x in pairs(wl or {}) do w[k] = x end
  src.title = "vLLM serving benchmark"
  return { id = "v1", kind = "infer",
           model = { layers = 32, hidden = 4096, heads = 32, kv_heads = 8, ffn_hidden = 14336,
                     ffn_gated = true, vocab = 128256 },
           hardware = { gpu = gpu, gpus = 1 }, parallel = { tp = 1 }, workload = w,
           measured = { metric = "output_tokens_per_s", value = 1 }, source = src }
end
local function budget(src, gpu, wl)
  local p = assert(predict(vcase(src, gpu, wl), cat))
  return p.job.max_num_tokens, p
end

-- 0.8.0-0.8.4: #12369's test is the device's name.
local n, p = budget({ version = "0.8.3" }, "mi325x")
t.is(n, 2048, "vLLM 0.8.3 on an MI325X (256 GB, not an H100/H200): 2048")
t.ok(has(p, "max_num_tokens=2048 (vLLM V1 release 0.8.3, vllm PR #12369"), "... said, with the PR")
t.is((budget({ version = "0.8.3" }, "h100-sxm")), 8192, "vLLM 0.8.3 on an H100: 8192")
t.is((budget({ version = "0.8.0" }, "a100-sxm-80gb")), 2048, "vLLM 0.8.0 on an 80 GB A100: 2048")
-- 0.8.5: #17073's test is the memory, 70 GiB or more, A100 80GB included.
n, p = budget({ version = "0.8.5" }, "a100-sxm-80gb")
t.is(n, 8192, "vLLM 0.8.5 on an 80 GB A100: 8192 (70 GiB or more)")
t.ok(has(p, "vllm PR #17073"), "... said, with the PR")
t.is((budget({ version = "0.8.5" }, "l40s")), 2048, "vLLM 0.8.5 on a 48 GB L40S: 2048")
-- 0.9.0 on: the profile leaves it to gp.infer's rule (A100 back at 2048),
-- which says it.
n, p = budget({ version = "0.9.0" }, "a100-sxm-80gb")
t.is(n, nil, "vLLM 0.9.0: no release rule from the profile")
t.ok(has(p, "max_num_tokens=2048 (vLLM's API server's on a100-sxm-80gb"),
     "... gp.infer's own: 2048 on an A100")
-- A date stands in for the release: V1 from 2025-03-18, #17073 from
-- 2025-04-23, #17885 from 2025-05-09.
n, p = budget({ date = "2025-04-02" }, "mi325x")
t.is(n, 2048, "a V1 run of 2025-04-02 on an MI325X: 2048")
t.ok(has(p, "vLLM V1 run of 2025-04-02, vllm PR #12369"), "... said, with the date")
t.is((budget({ date = "2025-05-01" }, "mi325x")), 8192, "a run of 2025-05-01 on an MI325X: 8192")
t.is((budget({ date = "2025-05-09" }, "mi325x")), nil, "a run of 2025-05-09: today's rule")
-- What the case states wins: its own budget, or no chunked prefill (then
-- gp.infer's budget for that, the model's context); V0 has its own rule.
t.is((budget({ version = "0.8.3" }, "mi325x", { max_num_tokens = 4096 })), 4096,
     "a stated max_num_tokens wins")
n, p = budget({ version = "0.8.3" }, "mi325x", { chunked_prefill = false })
t.ok(n == nil and not has(p, "PR #12369"), "chunked_prefill false: no chunked budget")
n, p = budget({ version = "0.6.3" }, "mi325x")
t.ok(n == nil and not has(p, "PR #12369"), "a V0 release: not V1's rule")
-- The budget is priced: one 8000-token prompt alone goes in
-- ceil(8000 / 2048) = 4 chunks under 0.8.3's 2048 on an MI325X, in one step
-- under 0.9.0's 8192 (today's rule on a 256 GB card), each chunk a pass over
-- the weights, so its TTFT is the longer.
do
  local old = assert(predict(vcase({ version = "0.8.3" }, "mi325x",
    { input_len = 8000, num_requests = 1, concurrency = 1 }), cat))
  local new = assert(predict(vcase({ version = "0.9.0" }, "mi325x",
    { input_len = 8000, num_requests = 1, concurrency = 1 }), cat))
  local m_old, m_new = old.job.max_num_tokens, 8192
  t.is(m_old, 2048, "the 8000-token run at 0.8.3: 2048 a step")
  local a = gp.infer { model = vcase({}, "mi325x").model, gpu = "mi325x", runtime = "vllm",
                       input = 8000, output = 256, concurrency = 1, max_num_tokens = m_old }
  local b = gp.infer { model = vcase({}, "mi325x").model, gpu = "mi325x", runtime = "vllm",
                       input = 8000, output = 256, concurrency = 1, max_num_tokens = m_new }
  t.ok(a.ttft_s > b.ttft_s, string.format("... a TTFT of 4 chunks (%.1f ms) over one step's "
       .. "(%.1f ms)", a.ttft_s * 1e3, b.ttft_s * 1e3))
  t.ok(new.job.max_num_tokens == nil, "... and 0.9.0 leaves gp.infer's 8192")
end

-- SGLang: with --enable-mixed-chunk (chunked_prefill) the step's budget is
-- its chunked_prefill_size, by the card's memory in MiB: < 35 GiB 2048,
-- < 60 GiB 4096, < 160 GiB 8192, else 16384 (server_args.py).  The edges:
local G = 2 ^ 30
t.is(infer.sglang_chunk { memory = 35 * G - 1 }, 2048, "SGLang: just under 35 GiB, 2048")
t.is(infer.sglang_chunk { memory = 35 * G }, 4096, "... 35 GiB, 4096")
t.is(infer.sglang_chunk { memory = 60 * G }, 8192, "... 60 GiB, 8192")
t.is(infer.sglang_chunk { memory = 160 * G }, 16384, "... 160 GiB, 16384")
do
  local r = gp.infer { model = "qwen3-8b", gpu = "h20", runtime = "sglang", chunked_prefill = true,
                       input = 4000, output = 100, concurrency = 8 }
  t.ok(has(r, "max_num_tokens=8192 (SGLang's chunked_prefill_size on h20"),
       "SGLang mixed chunk on a 96 GB H20: 8192, said")
  -- and priced: the same job at an explicit 2048 on an L4 (24 GB, SGLang's
  -- 2048) prices alike, to the last bit (the same budget reaches the engine)
  local l4 = gp.infer { model = "qwen3-8b", gpu = "l4", runtime = "sglang", chunked_prefill = true,
                        input = 4000, output = 100, concurrency = 2 }
  local l4x = gp.infer { model = "qwen3-8b", gpu = "l4", runtime = "sglang", chunked_prefill = true,
                         input = 4000, output = 100, concurrency = 2, max_num_tokens = 2048 }
  t.near(l4.ttft_s, l4x.ttft_s, 1e-12, "SGLang on an L4: the 2048 budget is priced")
  local apart = gp.infer { model = "qwen3-8b", gpu = "h20", runtime = "sglang", input = 4000,
                           output = 100, concurrency = 8 }
  t.ok(not has(apart, "SGLang's chunked_prefill_size"), "SGLang without mixed chunk: not said")
end

-- The shipped cases whose sources set it state it, each with its quote:
-- AMD's MLPerf v5.1 vLLM configs and Dell's v6.0 MI300X one
-- 'enable_chunked_prefill: False' (3 + 1), NVIDIA's harness
-- 'enable_chunked_context': True (v5.1 5, v6.0 7), the Qwen docs' SGLang runs
-- 'enable enable_mixed_chunk=True'.
do
  local quotes = {
    { "'enable_chunked_prefill: False'", false, 4 },
    { "'enable_chunked_context': True", true, 12 },
    { "enable enable_mixed_chunk=True", true, 6 },
  }
  for _, q in ipairs(quotes) do
    local quoted, stated = 0, 0
    for _, c in ipairs(validate.read("validation/cases.json")) do
      if c.kind == "infer" and type(c.notes) == "string" and c.notes:find(q[1], 1, true) then
        quoted = quoted + 1
        if c.workload.chunked_prefill == q[2] then stated = stated + 1 end
      end
    end
    t.ok(quoted == q[3] and stated == quoted,
         string.format("%d cases quote %s, %d state chunked_prefill %s", quoted, q[1], stated,
                       tostring(q[2])))
  end
end
