-- A static-shape runtime's bucketed KV (engine infer_cfg.kv_bucket,
-- infer_run.c infer_decode_ctx; lua/gpuplan/infer.lua M.kv_bucket): on
-- Gaudi under the graph-captured runtime (optimum-habana's run_generation
-- --use_hpu_graphs with --bucket_size 128 --bucket_internal) a decode
-- step attends its sequence's KV up to the next multiple of 128 tokens,
-- at most the cache's input + output.  This file checks the decode's
-- context on Gaudi and elsewhere and the defaults line that says it.
-- Run with ./gpuplan run tests/lua/infer_kv_bucket.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(13)

local job = { model = "llama3.1-8b", gpu = "gaudi3", weights = "fp8", kv = "fp8",
              input = 128, output = 128, batch = 1536 }

-- Llama 3.1 8B on one Gaudi 3, 128 in / 128 out: decode steps j = 1 ..
-- 127 attend 128 + j = 129 .. 255 tokens, each rounded up to 256 (the
-- cache's whole 128 + 128): the decode is priced at 256, exactly.
local r = gp.infer(job)
t.is(r.decode.ctx, 256, "gaudi3 128/128: every decode step attends 256 tokens")
-- 128 / 2048: the buckets 256 .. 2048 take 128 steps each and 2176 (17 x
-- 128, the whole cache) the last 127: (128 x 128 x (2 + ... + 16) + 127 x
-- 2176) / 2047 = 2488192 / 2047 = 1215.53 (1152 unbucketed).  1e-12: the
-- same sum.
local long = gp.infer(t.with(job, { output = 2048, batch = 768 }))
t.near(long.decode.ctx, 2488192 / 2047, 1e-12, "gaudi3 128/2048: 2488192 / 2047")
-- What the bucket costs: the decode's attention reads the 256-token KV of
-- every sequence, K and V of 8 heads x 128 in fp8 (1 B), 1536 x 256 x 8
-- x 128 x 2 = 805,306,368 B a layer, and its query and output, 1536 x
-- 4096 x 2 B each, 25,165,824 B: 830,472,192 B (603,979,776 + the same
-- 25,165,824 at the unbucketed 192).  1e-12: the same products.
local attn
for _, o in ipairs(r.decode.ops) do if o.name == "attention" then attn = o end end
t.near(attn and attn.bytes or 0, 1536 * 256 * 8 * 128 * 2 + 2 * 1536 * 4096 * 2, 1e-12,
  "gaudi3 128/128: the attention reads 830,472,192 B a layer")

-- The same jobs on an H100 keep the plain mean: 128 + 128 / 2 = 192 and
-- 128 + 2048 / 2 = 1152, and say no bucket.
local h = gp.infer(t.with(job, { gpu = "h100-sxm", batch = 256 }))
t.is(h.decode.ctx, 192, "h100: 128 + 128 / 2 = 192")
local hl = gp.infer(t.with(job, { gpu = "h100-sxm", output = 2048, batch = 64 }))
t.is(hl.decode.ctx, 1152, "h100: 128 + 2048 / 2 = 1152")

-- The defaults say it on Gaudi, and only there.
t.ok(table.concat(r.defaults, "; "):find("kv_bucket=128", 1, true), "gaudi3: kv_bucket=128 said")
t.ok(not table.concat(h.defaults, "; "):find("kv_bucket", 1, true), "h100: no kv_bucket")

-- kv_bucket given (gp.infer's option, --kv-bucket): 0 prices each step at
-- its own length on Gaudi too, 128 + 128 / 2 = 192, and says nothing; a
-- bucket of at least the cache's 128 + 2048 = 2176 tokens reads the whole
-- cache every step (optimum-habana without the bucket flags): 2176.
-- Exact: the same closed form.
local g0 = gp.infer(t.with(job, { kv_bucket = 0 }))
t.is(g0.decode.ctx, 192, "gaudi3 kv_bucket 0: 192, the plain mean")
t.ok(not table.concat(g0.defaults, "; "):find("kv_bucket", 1, true), "given: not said")
t.is(gp.infer(t.with(job, { output = 2048, batch = 768, kv_bucket = 4096 })).decode.ctx, 2176,
  "gaudi3 kv_bucket 4096 at 128/2048: the whole 2176-token cache every step")
-- A fraction or a negative is refused, naming the key.
t.raises(function() gp.infer(t.with(job, { kv_bucket = 1.5 })) end,
  "kv_bucket must be a whole number of tokens", "kv_bucket 1.5 refused", true)
-- The MoE serving model (engine/serve*.c) attends each sequence's own
-- length: on Gaudi it says no bucket, and refuses one given.
local moe = { model = "mixtral-8x7b", gpu = "gaudi3", gpus = 8, ep = 8, input = 128, output = 128 }
t.ok(not table.concat(gp.infer(moe).defaults, "; "):find("kv_bucket", 1, true),
  "the MoE serving model on Gaudi: no kv_bucket said")
t.raises(function() gp.infer(t.with(moe, { kv_bucket = 128 })) end,
  "kv_bucket: the MoE serving model (chosen by ep = 8) attends each sequence's own KV length",
  "the MoE serving model refuses kv_bucket", true)
