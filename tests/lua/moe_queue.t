#!/usr/bin/env lua
-- The MoE serving model (gpuplan.serve) with a concurrency past what its
-- KV holds: it queues the extra requests as gp.infer's one-model path
-- does (engine infer_queue_batch, the one rule both take: the running
-- batch is the concurrency's share, at most what the KV and max_batch
-- hold; vLLM's, SGLang's and TensorRT-LLM's schedulers keep the rest
-- waiting), not "batch N per GPU does not fit".  On the code before,
-- tests 2-5 and 9-10 fail (the 2C run did not fit); a batch asked past
-- the KV (test 7) and one sequence past it (test 8) are refused on both.
-- Tests 11-14: a burst (requests) has no more than its requests in
-- flight whatever the concurrency, on both paths; on the code before,
-- 11 and 13 fail (concurrency 4800 over a burst of 64 that all run read
-- "the other 4736 wait").
-- Run with ./gpuplan run tests/lua/moe_queue.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(14)

local function note(r)
  for _, d in ipairs(r.defaults or {}) do if d:find("^concurrency=") then return d end end
end

-- DeepSeek-V3 on 16 x H800, EP16, DP attention, 1000 in / 1000 out: one
-- instance of 16 GPUs, each its own attention group.
local base = { model = "deepseek-v3", gpu = "h800-sxm", gpus = 16, ep = 16,
               dp_attention = true, input = 1000, output = 1000 }

-- 1. The capacity C by hand.  A sequence's MLA cache a token: 61 layers x
-- (kv_lora_rank 512 + qk_rope_head_dim 64) x 2 bytes (bf16) = 70272 B,
-- whole on each DP-attention GPU; kv policy mean admits input + output /
-- 2 = 1500 tokens: 105,408,000 B.  The GPU's budget (kv_budget, the
-- engine's: the card less weights, buffers, workspace and margin) over
-- it, floored, is the batch a GPU holds; C = that x 16 GPUs.
local free = gp.infer(base)
local per_gpu = math.floor(free.kv_budget / (1500 * 70272))
local C = per_gpu * 16
t.ok(free.fits and free.batch_per_gpu == per_gpu and free.batch == C,
     string.format("the KV holds %d a GPU (budget %.4g B / 105408000 B), C = %d an instance",
                   per_gpu, free.kv_budget, C))

-- 2-5. Concurrency 2C: C run at once (the running batch capped at the
-- KV's, C / 16 a GPU), C wait; the throughput, ITL and TTFT are those of
-- a C batch (a concurrency of exactly C), the same engine figures at the
-- same batch: equal to the last bit (tolerance 1e-12, rounding only).
local q = gp.infer(t.with(base, { concurrency = 2 * C }))
local c = gp.infer(t.with(base, { concurrency = C }))
t.ok(q.fits and q.batch == C and q.batch_per_gpu == per_gpu,
     string.format("concurrency %d: a running batch of %d (%d a GPU)", 2 * C, C, per_gpu))
t.near(q.tokens_per_s, c.tokens_per_s, 1e-12, "... the throughput of a C batch")
t.near(q.itl_s, c.itl_s, 1e-12, "... its ITL")
t.is(note(q), string.format("concurrency=%d: %d run at once (%d a replica, %d a GPU, what its KV "
  .. "holds), the other %d wait", 2 * C, C, C, per_gpu, C), "... and says how many wait")

-- 6. All C run: no such line, as gp.infer says none.
t.is(note(c), nil, "concurrency C: all run, no queue line")

-- 7. A batch asked (not a concurrency) past the KV is still refused: the
-- user fixed the step's batch.
local b = gp.infer(t.with(base, { batch = 2 * per_gpu }))
t.ok(not b.fits and b.why:find("does not fit: the KV budget holds " .. per_gpu, 1, true),
     "batch 2C a GPU is refused: " .. tostring(b.why))

-- 8. Not one sequence fits (a 150000-token prompt: 155000 x 70272 B =
-- 10.9 GB of KV against the GPU's budget of under 8 GB): refused, at any
-- concurrency.
local n = gp.infer(t.with(base, { input = 150000, output = 10000, concurrency = 32 }))
t.ok(not n.fits and n.why:find("one sequence's KV", 1, true),
     "not one sequence fits: refused: " .. tostring(n.why))

-- 9-10. TP attention (8 x H200, EP8, TP8 attention: one attention group
-- of 8 GPUs, a GPU's batch B is B x 8 sequences of the group): 2C in
-- flight run C, the throughput of the KV-bound batch.
local tb = { model = "deepseek-v3", gpu = "h200-sxm", gpus = 8, ep = 8, input = 3200, output = 3200 }
local tf = gp.infer(tb)
local tq = gp.infer(t.with(tb, { concurrency = 2 * tf.batch }))
t.ok(tq.fits and tq.batch == tf.batch and tq.batch_per_gpu == tf.batch_per_gpu,
     string.format("TP8 attention, concurrency %d: %d run (%s a GPU)", 2 * tf.batch, tf.batch,
                   tostring(tf.batch_per_gpu)))
t.near(tq.tokens_per_s, tf.tokens_per_s, 1e-12, "... at the throughput of the KV-bound batch")

-- 11-12. A burst of 64 under concurrency 4800 on the MoE serving model:
-- 64 in flight, 4 a GPU, all run (the KV holds more), so no line; a burst
-- of 3 C under concurrency 2 C: 2 C in flight, C run, C wait (the burst's
-- requests past the concurrency are not in flight yet).
t.is(note(gp.infer(t.with(base, { requests = 64, concurrency = 4800 }))), nil,
     "burst of 64 at concurrency 4800: all 64 run, no queue line")
t.is(note(gp.infer(t.with(base, { requests = 3 * C, concurrency = 2 * C }))),
     string.format("concurrency=%d: %d run at once (%d a replica, %d a GPU, what its KV "
       .. "holds), the other %d wait", 2 * C, C, C, per_gpu, C),
     "burst of 3C at concurrency 2C: C run, C wait")

-- 13-14. The same on gp.infer's one-model path (Llama 3 8B on one H100:
-- a burst of 64 runs at once under the engine's max_batch, whose default
-- is above 64; concurrency 4800 without a burst keeps its queue line).
local dense = { model = "llama3-8b", gpu = "h100-sxm", input = 1000, output = 1000 }
local d64 = gp.infer(t.with(dense, { requests = 64, concurrency = 4800 }))
t.ok(d64.fits and d64.batch == 64 and note(d64) == nil,
     "one-model burst of 64 at concurrency 4800: 64 run, no queue line: " .. tostring((note(d64))))
local dq = gp.infer(t.with(dense, { concurrency = 4800 }))
t.ok(dq.fits and note(dq) == string.format("concurrency=4800: %d run at once (%d a replica, "
  .. "what its KV holds), the other %d wait", dq.batch, dq.batch, 4800 - dq.batch),
     "one-model concurrency 4800 without a burst: " .. tostring((note(dq))))
