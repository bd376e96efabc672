-- Hardening round 77 (gp.* from Lua).
-- Run with ./gpuplan run tests/lua/harden77.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(16)

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
-- sums would move the last digits).  The figures are re-printed where the
-- pricing of a step moves (a prompt's attention under vLLM on Hopper at
-- FA3's catalog record, infer.c fused_attn), the walk unchanged.  (Timed on the shared 2-core
-- machine, user CPU: Llama 3.1 8B, 100K requests of 128 in / 4096 out,
-- 5.2 s -> 2.9 s; Qwen3 32B on one H100, the same burst, 7.2 s -> 3.6 s.)
local walks = {
  { "8B, 3000 of 128 in / 4096 out", "5724.4233293600582",
    { model = "llama3.1-8b", gpu = "h100-sxm", runtime = "vllm", input = 128, output = 4096,
      requests = 3000 } },
  { "8B, 3001 of 2048 / 2048, half the prompt cached", "4274.1688007946059",
    { model = "llama3.1-8b", gpu = "h100-sxm", runtime = "vllm", input = 2048, output = 2048,
      requests = 3001, prefix_hit = 0.5 } },
  { "Qwen3 32B, 2000 of 128 / 4096 (a small cache: a short running list)",
    "452.59361966208706",
    { model = "qwen3-32b", gpu = "h100-sxm", runtime = "vllm", input = 128, output = 4096,
      requests = 2000 } },
  { "70B fp8 TP 2, two replicas, 777 requests (a fractional share each)",
    "4300.9471908579944",
    { model = "llama3.1-70b", gpu = "h100-sxm", gpus = 4, tp = 2, weights = "fp8",
      runtime = "vllm", input = 1000, output = 3000, requests = 777 } },
  { "8B, 2000 at concurrency 700", "5736.2695149218607",
    { model = "llama3.1-8b", gpu = "h100-sxm", runtime = "vllm", input = 128, output = 4096,
      requests = 2000, concurrency = 700 } },
}
for _, w in ipairs(walks) do
  local r = gp.infer(w[3])
  t.ok(t.said(r, "^kv_policy=preempt"), w[1] .. ": walked (kv_policy preempt)")
  t.is(string.format("%.17g", r.tokens_per_s), w[2], w[1] .. ": tokens/s as before, to the bit")
end

-- 2. gp.prices.said_price and gp.prices.unsaid (docs/lua.md) given what is
-- no defaults-line string raised "attempt to index a number value (local
-- 'd')" or "attempt to get length of a nil value" at a line of
-- lua/gpuplan/prices.lua.  Refused at the script's line, naming the
-- argument; a bad list is left as it was.
t.raises_here(function() local _ = gp.prices.said_price(5) end,
  "prices.said_price: entry must be a defaults-line string", "said_price(5): named, here")
t.raises_here(function() local _ = gp.prices.unsaid() end,
  "prices.unsaid: defaults must be a list of defaults-line strings", "unsaid(): named, here")
local bad = { "price=2 USD/GPU-h", 5, "kv=bf16" }
t.raises_here(function() local _ = gp.prices.unsaid(bad) end,
  "prices.unsaid: defaults[2] must be a string (got 5)", "unsaid({..., 5, ...}): the entry named")
t.is(#bad == 3 and bad[1] == "price=2 USD/GPU-h" and bad[3] == "kv=bf16", true,
  "... and the list left whole")
-- the use the docs give: market and price entries (a sweep's "CARD:
-- price=..." too) dropped in place, the others kept in order
local d = { "market=us", "kv=bf16", "price=2 USD/GPU-h", "h100-sxm: price=3 USD/GPU-h", "tp=1" }
t.is(table.concat(gp.prices.unsaid(d), ";"), "kv=bf16;tp=1", "unsaid keeps the others")
t.is(gp.prices.said_price("price=2 USD/GPU-h"), true, "said_price of a price entry")
