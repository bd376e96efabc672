#!/usr/bin/env lua
-- The MoE serving model's max_batch (gp.infer's, --max-batch): the
-- engine batches max_batch sequences over an attention group -- a TP
-- instance's GPUs together, one GPU with DP attention -- which holds
-- B x a of them at a batch per GPU B (serve_plan.c itl_at: "its B x tp
-- sequences"), so B <= max_batch / a (engine/serve.h batch_cap;
-- TensorRT-LLM's min-latency "--max_batch_size 1 --tp 8" is B = 1/8).
-- Before, serve.c capped B itself at max_batch: max_batch 8 on EP16 with
-- TP16 attention decoded 8 x 16 = 128 sequences an instance, and a batch
-- over it was refused as "the KV budget holds 8 per GPU".  On that code
-- tests 1 and 2 fail and test 3 stops the run (its results had no
-- kv_seqs); 4 (the KV named), 5 (concurrency 9 ran) and 8 (batch 8 a
-- GPU) fail by the figures above.  Test 5 now holds concurrency 9 to
-- the queue (8 run, one waits), where the code before refused it.
-- Run with ./gpuplan run tests/lua/moe_max_batch.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(12)

local base = { model = "deepseek-v3", gpu = "h200-sxm", gpus = 16, ep = 16 }

-- 1-3. TP16 attention, max_batch 8: B = 8 / 16 = 0.5 a GPU, 8 in the
-- instance (0.5 x 16); the KV holds more (its own figure, kv_seqs, is
-- what it was without the cap).  Exact: 8 / 16 and 0.5 x 16 are exact
-- in binary floating point.
local free = gp.infer(base)
local r = gp.infer(t.with(base, { max_batch = 8 }))
t.is(r.batch_per_gpu, 0.5, "TP16 attention, max_batch 8: 8 / 16 = 0.5 a GPU")
t.is(r.batch, 8, "... 8 sequences in the instance (0.5 x 16), not 8 x 16 = 128")
t.ok(r.kv_seqs == free.kv_seqs and r.kv_seqs > 8,
     "... the KV's own figure (kv_seqs " .. tostring(r.kv_seqs) .. ") is the uncapped run's")

-- 4. A batch of 1 a GPU is 16 sequences in the instance, over 8: refused
-- naming max_batch, not the KV.
local x = gp.infer(t.with(base, { max_batch = 8, batch = 1 }))
t.ok(not x.fits and x.why:find("over max_batch 8", 1, true) and not x.why:find("KV", 1, true),
     "batch 1 a GPU over max_batch 8 is refused naming max_batch: " .. tostring(x.why))
-- 5. 8 in flight (concurrency 8: 0.5 a GPU) is exactly the cap: runs;
-- 9 (0.5625 a GPU) is over it: 8 run at once (the cap, 0.5 a GPU) and
-- the ninth waits in the scheduler's queue, as gp.infer's concurrency
-- past its batch (engine infer_queue_batch); it was refused.
local c8 = gp.infer(t.with(base, { max_batch = 8, concurrency = 8 }))
local c9 = gp.infer(t.with(base, { max_batch = 8, concurrency = 9 }))
t.ok(c8.fits and c9.fits and c9.batch_per_gpu == 0.5 and c9.batch == 8 and
     c9.tokens_per_s == c8.tokens_per_s,
     "concurrency 8 (0.5 a GPU) runs; 9 runs 8 at once, the throughput of 8")

-- 6. DP attention: an attention group is one GPU, each rank's engine its
-- own max_batch (B <= 8 / 1), 8 x 16 = 128 in the instance.
local d = gp.infer(t.with(base, { max_batch = 8, dp_attention = true }))
t.ok(d.batch_per_gpu == 8 and d.batch == 128, "DP attention: 8 a GPU, 128 an instance")

-- 7-8. An ITL bound searches below the cap: with a bound of 1 s, met at
-- every batch here (free's ITL at its whole KV batch is under 0.2 s),
-- the search takes the cap, 0.5 a GPU.
t.ok(free.itl_s < 0.2, "free ITL under 0.2 s: " .. free.itl_s)
local i = gp.infer(t.with(base, { max_batch = 8, itl_max = "1s" }))
t.is(i.batch_per_gpu, 0.5, "itl_max 1 s with max_batch 8: the cap, 0.5 a GPU")

-- 9. The default max_batch (TensorRT-LLM's 2048, 128 a GPU on TP16)
-- is over what the KV holds here: the batch is the KV's, as before.
t.ok(free.kv_seqs / 16 < 128 and free.batch == free.kv_seqs and
     free.max_batch_kv == free.kv_seqs, "default max_batch binds nothing: the KV's batch")

-- 10-11. Qwen3-30B-A3B, EP8 with TP8 attention on 8 H100, max_batch 8:
-- 8 / 8 = 1 a GPU, 8 an instance; max_batch_kv the instance's 8.
local q = gp.infer { model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 8, ep = 8, max_batch = 8 }
t.ok(q.batch_per_gpu == 1 and q.batch == 8, "qwen3-30b-a3b EP8 TP8 attention: 1 a GPU, 8 an instance")
t.ok(q.max_batch_kv == 8 and q.max_batch_kv_per_gpu == 1 and q.kv_seqs > 8,
     "... max_batch_kv 8 (1 a GPU), the KV holding more")

-- 12. The text says the KV's figure and the engine's cap where it binds.
local out = io.popen("./gpuplan infer deepseek-v3 --gpu h200-sxm --gpus 16 --ep 16 --max-batch 8 2>&1")
local text = out:read("a")
out:close()
t.ok(text:find("batch per GPU              0.5 (KV holds " .. (r.kv_seqs // 16)
     .. "; the engine batches at most 8 an instance; x 1 instances)", 1, true),
     "the text: 0.5 a GPU, the KV's figure and the cap")
