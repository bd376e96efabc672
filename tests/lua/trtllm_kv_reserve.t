#!/usr/bin/env lua
-- TensorRT-LLM's capacity scheduler defaults to GUARANTEED_NO_EVICT: a
-- request starts only when the KV blocks for its prompt and its whole
-- output are free (kv_policy max).  The rule lives in one place,
-- gpuplan.infer's M.kv_reserve, read by gp.infer's setup, and so by one
-- model's replicas and the MoE serving model (gpuplan.serve) alike, with
-- one defaults line; a kv_policy the user gives wins, and a static batch
-- keeps its own rule.  On the code before, the MoE serving model priced
-- runtime trtllm at kv_policy mean (tests 1-2 and 5-7 fail: no line, a
-- batch of 140 a GPU where 105 fit), and gp.infer's one-model path
-- outside the validation profile did too (tests 9-11 fail).
-- Run with ./gpuplan run tests/lua/trtllm_kv_reserve.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(13)

local LINE = "kv_policy=max (GUARANTEED_NO_EVICT, the capacity scheduler default)"
local function said(r, pat)
  for _, d in ipairs(r.defaults or {}) do if d:find(pat, 1, true) then return d end end
end
local function queue(r)
  for _, d in ipairs(r.defaults or {}) do if d:find("^concurrency=") then return d end end
end

-- DeepSeek-V3 on 16 x H800, EP16, DP attention, 1000 in / 1000 out: one
-- instance of 16 GPUs, each its own attention group (the MoE serving
-- model).  A sequence's MLA cache a token: 61 layers x (kv_lora_rank 512
-- + qk_rope_head_dim 64) x 2 bytes (bf16) = 70272 B, whole on each
-- DP-attention GPU.
local MLA = 61 * (512 + 64) * 2
local base = { model = "deepseek-v3", gpu = "h800-sxm", gpus = 16, ep = 16,
               dp_attention = true, input = 1000, output = 1000, runtime = "trtllm" }

-- 1-2. Runtime trtllm, kv_policy not given: max, said on the defaults line.
-- The capacity by hand: under max a sequence holds input + output = 2000
-- tokens, 2000 x 70272 B = 140,544,000 B; the GPU's KV pool (kv_budget, the
-- engine's: 0.90 of the memory free once the model is loaded, runtime
-- trtllm's kv_free_fraction) over it, floored, is the batch a GPU holds
-- (the run's own budget, about 14.8 GB: 105 a GPU, 1680 the instance).
local mx = gp.infer(base)
local per_max = math.floor(mx.kv_budget / (2000 * MLA))
t.is(said(mx, "kv_policy="), LINE, "MoE serving model, runtime trtllm: the defaults line")
t.ok(mx.fits and mx.batch_per_gpu == per_max and mx.batch == 16 * per_max,
     string.format("... capacity kv_budget / (2000 x %d B) = %d a GPU (budget %.4g B), got %s",
                   MLA, per_max, mx.kv_budget, tostring(mx.batch_per_gpu)))

-- 3-4. kv_policy mean given: the user's wins, no default line; a sequence
-- holds input + output / 2 = 1500 tokens, 105,408,000 B: the pool over
-- it, floored (about 140 a GPU).  The pools of the two runs are the same
-- card less the same weights and buffers, within 0.5% (the budget's
-- workspace follows the batch's step tokens, which differ by batch).
local mn = gp.infer(t.with(base, { kv_policy = "mean" }))
local per_mean = math.floor(mn.kv_budget / (1500 * MLA))
t.ok(mn.fits and mn.batch_per_gpu == per_mean and said(mn, "kv_policy=") == nil,
     string.format("kv_policy mean given: kv_budget / (1500 x %d B) = %d a GPU, no default line",
                   MLA, per_mean))
t.ok(per_mean > per_max and math.abs(mn.kv_budget / mx.kv_budget - 1) < 0.005,
     string.format("... more than under max (%d > %d), from the same pool", per_mean, per_max))

-- 5-6. kv_policy max given: the same run as the default, and no line (the
-- user said it): the same figures to the last bit (tolerance 1e-12).
local gx = gp.infer(t.with(base, { kv_policy = "max" }))
t.ok(gx.batch == mx.batch and said(gx, "kv_policy=") == nil, "kv_policy max given: no line")
t.near(gx.tokens_per_s, mx.tokens_per_s, 1e-12, "... the default's throughput")

-- 7. A concurrency past the max capacity queues at it (engine
-- infer_queue_batch): 2400 in flight, 16 x per_max run.
local q = gp.infer(t.with(base, { concurrency = 2400 }))
t.is(queue(q), string.format("concurrency=2400: %d run at once (%d a replica, %d a GPU, what its "
  .. "KV holds), the other %d wait", 16 * per_max, 16 * per_max, per_max, 2400 - 16 * per_max),
  "concurrency 2400: what the max policy holds runs, the rest wait")

-- 8. Runtime sglang keeps kv_policy mean (its own line).
local sg = gp.infer(t.with(base, { runtime = "sglang" }))
t.is(said(sg, "kv_policy="), "kv_policy=mean", "runtime sglang: kv_policy=mean")

-- 9-11. One model's replicas (Llama-3.1-8B on one H100), runtime trtllm:
-- the same line from the same rule; mean given wins and holds more (1500
-- tokens a sequence against 2000: the KV pool is the same, the batch
-- larger).
local d = { model = "llama3.1-8b", gpu = "h100-sxm", input = 1000, output = 1000,
            runtime = "trtllm" }
local dx = gp.infer(d)
local dm = gp.infer(t.with(d, { kv_policy = "mean" }))
t.is(said(dx, "kv_policy="), LINE, "one model, runtime trtllm: the same defaults line")
t.ok(said(dm, "kv_policy=") == nil and dm.batch > dx.batch,
     string.format("... kv_policy mean given wins: batch %d > %d", dm.batch, dx.batch))
-- 11. The pool over 2000 tokens a sequence of 32 layers x 8 KV heads x 128
-- x 2 (K, V) x 2 bytes = 131072 B a token, floored.
t.is(dx.batch, math.floor(dx.kv_budget / (2000 * 32 * 8 * 128 * 2 * 2)),
     "... the max batch: kv_budget / (2000 x 131072 B)")

-- 12-13. A static batch keeps its rule: its contiguous cache holds the
-- whole length whatever the runtime (no kv_policy line of the runtime's),
-- and kv_policy mean with it is still refused.
local st = gp.infer(t.with(d, { batching = "static", batch = 8 }))
t.ok(st.fits and said(st, "kv_policy=") == nil and said(st, "input + output KV held a sequence"),
     "static batch: its own rule, no runtime kv_policy line")
local ok, err = pcall(gp.infer, t.with(d, { batching = "static", batch = 8, kv_policy = "mean" }))
t.ok(not ok and tostring(err):find("kv_policy mean with batching static", 1, true),
     "static batch with kv_policy mean: refused: " .. tostring(err))
