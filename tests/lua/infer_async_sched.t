-- runtime vllm with async_scheduling = false (lua/gpuplan/infer.lua
-- M.engine_host, engine/infer.c engine_time): vLLM V1 before v0.14.0
-- schedules, prepares the inputs and reads the sampled tokens back between
-- two GPU steps, so every step waits for that host work: gp.rl's figures
-- for the same engine (rl.lua ENGINE_HOST), 0.43 ms a step and
-- (5.5 - 0.43) ms / 256 = 19.8 us per sequence in it (vllm issue #10634's
-- 5-6 ms gap between decodes at batch 256; vllm PR #42131's fixed part).
-- Run with ./gpuplan run tests/lua/infer_async_sched.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(20)

-- Llama 3.1 70B FP8 on eight MI300X at TP 8, batch 128 (the ROCm vLLM
-- 0.10.0 table's shape): the run without the host work and with it.
local function run(extra)
  local a = { model = "llama3.1-70b", gpu = "mi300x", gpus = 8, tp = 8, weights = "fp8",
              batch = 128, input = 128, output = 2048, runtime = "vllm" }
  for k, v in pairs(extra or {}) do a[k] = v end
  return gp.infer(a)
end
local base, async, sync = run(), run({ async_scheduling = true }), run({ async_scheduling = false })

-- The step at batch 128 grows by 0.43e-3 + 128 x (5.5e-3 - 0.43e-3) / 256
-- = 0.43e-3 + 128 x 19.805e-6 = 2.965 ms; the graph's padding and the
-- GPU's rows are the same in both runs, so the difference is the host
-- work alone (1e-9 s: float rounding of two sums of ~18 ms).
local want = 0.43e-3 + 128 * (5.5e-3 - 0.43e-3) / 256
t.ok(math.abs((sync.itl_s - base.itl_s) - want) < 1e-9,
  string.format("batch 128: the step grows by 0.43 ms + 128 x 19.8 us = %.4f ms (got %.4f)",
    want * 1e3, (sync.itl_s - base.itl_s) * 1e3))
-- At batch 1: 0.43e-3 + 19.805e-6 = 0.4498 ms.
local want1 = 0.43e-3 + (5.5e-3 - 0.43e-3) / 256
t.ok(math.abs((sync.itl_batch1_s - base.itl_batch1_s) - want1) < 1e-9,
  string.format("batch 1: the step grows by %.4f ms (got %.4f)", want1 * 1e3,
    (sync.itl_batch1_s - base.itl_batch1_s) * 1e3))
-- Not stated is today's vLLM (async from v0.14.0): nothing added, as true.
t.is(async.itl_s, base.itl_s, "async_scheduling = true: no host work added (the default's step)")
local said = false
for _, d in ipairs(sync.defaults) do
  said = said or d:find("async_scheduling=false", 1, true) ~= nil
end
t.ok(said, "the host work said among the defaults")
-- Not stated, the assumption is said (a run of vLLM before 0.14.0 pays
-- the host work); stated true, it is the run's own, not assumed; another
-- runtime has no such line.
local function says(r, s)
  for _, d in ipairs(r.defaults) do
    if d:find(s, 1, true) then return true end
  end
  return false
end
t.ok(says(base, "async_scheduling=true (vLLM's default from v0.14.0"),
  "unstated on vLLM: async_scheduling=true said among the defaults")
t.ok(not says(async, "async_scheduling="), "stated true: not listed as assumed")
-- (SGLang: the case's card is an MI300X, on which TensorRT-LLM does not run)
t.ok(not says(run({ runtime = "sglang" }), "async_scheduling"), "sglang: no async_scheduling line")
-- Unstated, the MoE serving model assumes none (no line); stated false it
-- carries it (below).
t.ok(not says(gp.infer({ model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 2, tp = 2, ep = 2,
    runtime = "vllm", input = 128, output = 128 }), "async_scheduling"),
  "the MoE serving model (ep 2): no async_scheduling line")
-- A run naming its release by vllm_version names a V0 one (0.4.2 to
-- 0.6.3, the sampler's), which never schedules ahead of the GPU: the host
-- work is priced unless the run says async_scheduling = true.  At batch 1
-- the step grows by 0.43 ms + 1 x 19.8 us = 0.4498 ms over the same run
-- stated true (1e-9 s: float rounding of two sums of ~10 ms).
local v0 = run({ vllm_version = "0.6.3", sampling = "random" })
local v0a = run({ vllm_version = "0.6.3", sampling = "random", async_scheduling = true })
t.ok(says(v0, "async_scheduling=false (vllm_version 0.6.3: V0"),
  "vllm_version 0.6.3: async_scheduling=false said, naming the release")
t.ok(math.abs((v0.itl_batch1_s - v0a.itl_batch1_s) - want1) < 1e-9,
  string.format("vllm_version 0.6.3 at batch 1: %.4f ms more than stated true (got %.4f)",
    want1 * 1e3, (v0.itl_batch1_s - v0a.itl_batch1_s) * 1e3))

-- The steady state's throughput falls with the step: batch x output over
-- its time.  Checked against the ITL's ratio only loosely (the prompts'
-- share of the run differs by the host work of their steps too): within
-- 1% of base x base.itl_s / sync.itl_s.
local ratio = sync.tokens_per_s / (base.tokens_per_s * base.itl_s / sync.itl_s)
t.ok(math.abs(ratio - 1) < 0.01,
  string.format("tokens/s fall with the step (ratio to the ITL's %.4f)", ratio))

-- A burst of 128 requests (finite run): its chunked steps carry the host
-- work per emitting sequence, not per prompt token: 128 prompts of 16
-- computed tokens ride in the decodes' steps; a per-token price would add
-- 0.43 ms + 2048 x 19.8 us = 41 ms to such a step.  The run's time grows by
-- about the 2048 steps' host work, 2048 x 2.965 ms = 6.07 s of ~37 s:
-- within 5% of it.
local fb = run({ requests = 128, prefix_hit = 0.875 })
local fs = run({ requests = 128, prefix_hit = 0.875, async_scheduling = false })
local grow = 128 * 2048 / fs.tokens_per_s - 128 * 2048 / fb.tokens_per_s
t.ok(math.abs(grow / (2048 * want) - 1) < 0.05,
  string.format("a 128-request burst grows by ~2048 steps' host work (%.2f s, want %.2f)",
    grow, 2048 * want))

-- Refusals: another runtime, a value not a boolean.
t.raises(function() run({ runtime = "sglang", async_scheduling = false }) end,
  "async_scheduling is vLLM's", "async_scheduling on runtime sglang: refused")
t.raises(function() run({ async_scheduling = "no" }) end,
  "async_scheduling must be true or false", "async_scheduling = \"no\": refused")
-- The MoE serving model (ep, ...) carries the same host work on each
-- decode step (engine/serve_step.c serve_step_time): one engine core
-- schedules an attention group's sequences.  TP attention at tp 2 with 32
-- a GPU: the instance's 64, 0.43e-3 + 64 x 19.805e-6 = 1.6975 ms; DP
-- attention: each rank's own engine core, 32 sequences, 0.43e-3 + 32 x
-- 19.805e-6 = 1.0638 ms.  The GPU's part is the same in both runs, so the
-- difference is the host work alone (1e-9 s: float rounding of ~20 ms).
local function moe(extra)
  local a = { model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 2, tp = 2, ep = 2,
              runtime = "vllm", input = 128, output = 128, batch = 32 }
  for k, v in pairs(extra or {}) do a[k] = v end
  return gp.infer(a)
end
local step = (5.5e-3 - 0.43e-3) / 256
local m0, m1 = moe(), moe({ async_scheduling = false })
t.ok(math.abs((m1.tpot_s - m0.tpot_s) - (0.43e-3 + 64 * step)) < 1e-9,
  string.format("MoE serving, TP attention: the step grows by 0.43 ms + 64 x 19.8 us (got %.4f ms)",
    (m1.tpot_s - m0.tpot_s) * 1e3))
local d0, d1 = moe({ dp_attention = true }), moe({ dp_attention = true, async_scheduling = false })
t.ok(math.abs((d1.tpot_s - d0.tpot_s) - (0.43e-3 + 32 * step)) < 1e-9,
  string.format("MoE serving, DP attention: the step grows by 0.43 ms + 32 x 19.8 us (got %.4f ms)",
    (d1.tpot_s - d0.tpot_s) * 1e3))
-- The engine's own check: a negative host time is refused by name.
t.raises(function()
  local model, d, c = require("gpuplan.infer").setup({ model = "llama3.1-8b", gpu = "h100-sxm",
    input = 128, output = 128, runtime = "vllm" })
  c.engine_host_step = -1e-3
  return require("gpuplan.core").infer(model, d, c)
end, "engine_host_step", "engine_host_step < 0: refused by the engine")

-- The predictor's rule for the MoE serving model (predict/infer.lua
-- serve_case): a shipped vLLM 0.11.0 expert-parallel burst (gpustack,
-- Qwen3-235B-A22B FP8 on 8 H100s, TP 8 EP 8) takes async_scheduling =
-- false, said; the same case at 0.14.0 (async by default) and a case
-- stating chunked_prefill false (V0, whose host work the rule does not
-- set) do not, and price the same as each other.  Its throughput is
-- lower with the host work on every decode step (the engine's figure is
-- derived above; here the rule is what is checked: a strict order, and
-- 0.14.0 against chunked_prefill false to the bit, the same job).
do
  local validate = require "gpuplan.validate"
  local predict = require "gpuplan.predict.infer"
  local cat = gp.catalog()
  local id = "gpustack-vllm0110-qwen3-235b-fp8-h100-tp8-ep8-sharegpt-984req"
  local c
  for _, x in ipairs(validate.read("validation/cases.json")) do
    if x.id == id then c = x end
  end
  assert(c, id .. " is shipped")
  local r11 = assert(predict(c, cat))
  local said = false
  for _, d in ipairs(r11.defaults) do
    said = said or d:find("async_scheduling=false", 1, true) ~= nil
  end
  t.ok(said, "MoE serving, vLLM 0.11.0 case: async_scheduling=false said")
  c.source.version = "0.14.0"
  local r14 = assert(predict(c, cat))
  t.ok(r11.value < r14.value, string.format("0.11.0 prices fewer tokens/s than 0.14.0 "
    .. "(%.1f < %.1f)", r11.value, r14.value))
  c.source.version, c.workload.chunked_prefill = "0.11.0", false
  t.is(assert(predict(c, cat)).value, r14.value,
    "chunked_prefill false (V0): no V1 host work, as 0.14.0")
end
