-- gp.infer's MoE serving batch is a replica's, as results.lua declares
-- batch ("sequences decoded together per replica") and as gp.infer_plan
-- and a dense model's gp.infer return it.  The batch argument stays a
-- GPU's (SGLang's "batch size per GPU"): result.batch_per_gpu.  Before,
-- gp.infer{qwen3-30b-a3b, 8 x h100-sxm, ep 8, batch 16} returned batch
-- 16 while its instance of tp = 8 GPUs decodes 16 x 8 = 128 together.
local t = require "tap"
local gp = require "gpuplan"

local a = { model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 8, ep = 8, batch = 16 }
local r = gp.infer(a)
t.ok(r.moe and r.fits and r.tp == 8, "qwen3-30b-a3b EP8 on 8 h100-sxm: the serving model, tp 8")
t.is(r.batch_per_gpu, 16, "batch_per_gpu: the batch argument")
-- 16 a GPU x tp 8 GPUs of the instance (exact integers)
t.is(r.batch, 128, "batch: the decode instance's, 16 x 8")
-- the sequences in flight: instances x a replica's batch = GPUs x a GPU's
t.is(r.instances * r.batch, r.decode_gpus * r.batch_per_gpu, "instances x batch = GPUs x batch_per_gpu")

-- a card list (gp.infer's per-card rows) carries the same replica's batch
local c = gp.infer(t.with(a, { gpu = { "h100-sxm", "h200-sxm" } }))
for _, x in ipairs(c.per_card) do
  t.is(x.batch, 128, x.gpu .. ": the per-card row's batch is a replica's")
end

-- disaggregated: the colocated comparison's batch is a replica's of the
-- same decode layout (coloc.batch = coloc.batch_per_gpu x tp)
local d = gp.infer { model = "deepseek-v3", gpu = "h800-sxm", gpus = 96, ep = 64, dp_attention = true,
                     disagg = true, prefill_gpus = 32, prefill_ep = 16, prefill_tp = 16,
                     weights = "fp8", input = 4096, output = 1536, batch = 32 }
t.ok(d.fits and d.coloc and d.coloc.fits and d.tp == 64,
     "deepseek-v3 disaggregated on 96 h800-sxm, batch 32: colocated fits, tp 64")
-- 32 a GPU x 64 GPUs of the DP-attention instance = 2048 (exact integers);
-- coloc.batch was 32
t.is(d.coloc.batch_per_gpu, 32, "coloc.batch_per_gpu: the batch given")
t.is(d.coloc.batch, 2048, "coloc.batch: 32 x 64, a replica's")
t.is(d.batch, 2048, "batch: 32 x 64")
t.done_testing()
