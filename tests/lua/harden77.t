-- Hardening round 77 (gp.* from Lua).
-- Run with ./gpuplan run tests/lua/harden77.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(10)

-- 1. vLLM V1's preemption walk (engine/infer_run.c infer_burst_preempt)
-- spent most of a long burst summing the waiting list's prefix-cache
-- tokens every step (pre_reuse): the list holds every preempted cohort,
-- hundreds in a 100K-request burst, and all but the newest one or two
-- hold none (their blocks reused first).  The sum now stops at the last
-- cohort that holds any, and the step's counts and its advance are
-- taken in the passes that already visit each running cohort.  The sums
-- run over the same nonzero terms in the same order, so every walk is
-- the old walk to the bit: these figures are the old code's, printed
-- with 17 significant digits (no tolerance: any reordering of the float
-- sums would move the last digits).  (Timed on the shared 2-core
-- machine, user CPU: Llama 3.1 8B, 100K requests of 128 in / 4096 out,
-- 5.2 s -> 2.9 s; Qwen3 32B on one H100, the same burst, 7.2 s -> 3.6 s.)
local walks = {
  { "8B, 3000 of 128 in / 4096 out", "5726.218443020517",
    { model = "llama3.1-8b", gpu = "h100-sxm", runtime = "vllm", input = 128, output = 4096,
      requests = 3000 } },
  { "8B, 3001 of 2048 / 2048, half the prompt cached", "4278.1121482293465",
    { model = "llama3.1-8b", gpu = "h100-sxm", runtime = "vllm", input = 2048, output = 2048,
      requests = 3001, prefix_hit = 0.5 } },
  { "Qwen3 32B, 2000 of 128 / 4096 (a small cache: a short running list)",
    "452.66123477100939",
    { model = "qwen3-32b", gpu = "h100-sxm", runtime = "vllm", input = 128, output = 4096,
      requests = 2000 } },
  { "70B fp8 TP 2, two replicas, 777 requests (a fractional share each)",
    "4302.3224510123191",
    { model = "llama3.1-70b", gpu = "h100-sxm", gpus = 4, tp = 2, weights = "fp8",
      runtime = "vllm", input = 1000, output = 3000, requests = 777 } },
  { "8B, 2000 at concurrency 700", "5737.9792670739798",
    { model = "llama3.1-8b", gpu = "h100-sxm", runtime = "vllm", input = 128, output = 4096,
      requests = 2000, concurrency = 700 } },
}
for _, w in ipairs(walks) do
  local r = gp.infer(w[3])
  t.ok(t.said(r, "^kv_policy=preempt"), w[1] .. ": walked (kv_policy preempt)")
  t.is(string.format("%.17g", r.tokens_per_s), w[2], w[1] .. ": tokens/s as before, to the bit")
end
