-- Composer's train metrics (metric_losses): after each micro-batch's
-- backward Composer 0.16 updates every train metric with the kept
-- logits (trainer.py _train_microbatch -> _eval_train_metrics, under
-- torch.no_grad() and the run's autocast); llm-foundry's MPT has two,
-- LanguageCrossEntropy and LanguagePerplexity, each a plain
-- torch.nn.CrossEntropyLoss(reduction='sum') (composer/metrics/nlp.py).
-- Run with ./gpuplan run tests/lua/metric_losses.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(9)

-- Llama 3 8B (vocabulary 128256), one sequence of 4096 tokens on one
-- H100 SXM, one micro-batch: T V = 4096 x 128256 = 525.3M logits.  Each
-- metric autocasts them to fp32 (cross_entropy is on the CUDA autocast
-- float32 list: read A = 2, write 4) and runs log_softmax (read and write
-- 4) and nll_loss (a gather of T): 14 B a logit, forward only.  Two
-- metrics: 28 B x 525.3M = 14.71 GB at H100's streaming rate 3.35 TB/s x
-- 0.84 (the catalog's hbm fraction) = 2.814 TB/s: 5.227 ms.  The four
-- passes add their fill and launch, a few microseconds each (under 1% of
-- it): tolerance 2%.
local job = { model = "llama3-8b", gpu = "h100-sxm", gpus = 1, method = "pretrain",
              stack = "hf", kernels = "fused", seq = 4096, batch = 1, global_batch = 1 }
local on = gp.train(t.with(job, { metric_losses = 2 }))
local off = gp.train(job)
local want = 2 * 14 * 4096 * 128256 / (3.35e12 * 0.84)
t.near(on.step_s - off.step_s, want, 0.02, "two train metrics: 14 B a logit each, forward only")
-- One metric costs half of two (the same passes, once).
local one = gp.train(t.with(job, { metric_losses = 1 }))
t.near(one.step_s - off.step_s, want / 2, 0.02, "one metric: half")
-- Two micro-batches of one sequence: the metrics run after each.
local on2 = gp.train(t.with(job, { metric_losses = 2, global_batch = 2 }))
local off2 = gp.train(t.with(job, { global_batch = 2 }))
t.near(on2.step_s - off2.step_s, 2 * want, 0.02, "paid per micro-batch")
-- A count: a fraction, a negative, more than 8 or a boolean are refused.
for _, v in ipairs { 1.5, -1, 9, true } do
  t.raises(function() gp.train(t.with(job, { metric_losses = v })) end,
           "metric_losses must be a whole number 0..8", "metric_losses " .. tostring(v) .. " refused",
           true)
end

-- The llm-foundry profile (predict/train.lua) sets two for an MPT row.
local case = {
  id = "t", kind = "train",
  model = { name = "MPT-1B", positions = "learned", layers = 24, hidden = 2048, heads = 16,
            kv_heads = 16, ffn_hidden = 8192, ffn_gated = false, vocab = 50368,
            tied_embeddings = true, params_b = 1.3 },
  hardware = { gpu = "a100-sxm-80gb", gpus = 8, gpus_per_node = 8 },
  parallel = { tp = 1, pp = 1, dp = 8, zero = 3, fsdp = "full_shard", micro_batch = 14,
               global_batch = 448, recompute = "none" },
  workload = { seq_len = 2048, precision = "bf16", method = "pretrain",
               framework = "llm-foundry" },
  measured = { metric = "tokens_per_s_per_gpu", value = 24000 },
  source = { title = "MosaicML llm-foundry MPT training benchmarks" },
}
local seen = t.handed(case)
t.ok(seen and seen.metric_losses == 2, "llm-foundry: MPT's two train metrics")
-- The default is none (a stack without Composer's metrics): 0 prices the
-- job as leaving the option out does, to the last bit.
t.ok(gp.train(t.with(job, { metric_losses = 0 })).step_s == off.step_s, "0 is the default")
