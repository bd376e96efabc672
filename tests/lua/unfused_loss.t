-- Megatron-Core's unfused vocab-parallel cross-entropy (unfused_loss):
-- tensor_parallel/cross_entropy.py at core_r0.8.0, taken when
-- cross_entropy_loss_fusion is off (its default there), runs the loss as
-- PyTorch ops over the fp32 logits: float(), max, subtract, exp, sum and
-- divide forward, the multiply by the incoming gradient and the cast back
-- in the backward.  Run with ./gpuplan run tests/lua/unfused_loss.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(6)

-- Llama 3 8B (vocabulary 128256), one sequence of 4096 tokens on one
-- H100 SXM, one micro-batch: the loss covers T V = 4096 x 128256 =
-- 525.3M logits.  Unfused it moves A + 36 = 38 B a logit forward and
-- A + 12 = 14 B back, where the fused loss moves A + 8 = 10 and A + 4 =
-- 6: (28 + 8) x 525.3M = 18.91 GB more per micro-batch, at H100's
-- streaming rate 3.35 TB/s x 0.84 (the catalog's hbm fraction) = 2.814
-- TB/s: 6.72 ms.  Each pass is one kernel either way, so the memory
-- pipeline's fill cancels; tolerance 2% for the rounding of the rate.
local job = { model = "llama3-8b", gpu = "h100-sxm", gpus = 1, method = "pretrain",
              stack = "megatron", seq = 4096, batch = 1, global_batch = 1 }
local on = gp.train(t.with(job, { unfused_loss = true }))
local off = gp.train(job)
local want = 36 * 4096 * 128256 / (3.35e12 * 0.84)
t.near(on.step_s - off.step_s, want, 0.02, "unfused: 28 B more a logit forward, 8 back")
-- Two micro-batches of one sequence: the loss runs twice.
local on2 = gp.train(t.with(job, { unfused_loss = true, global_batch = 2 }))
local off2 = gp.train(t.with(job, { global_batch = 2 }))
t.near(on2.step_s - off2.step_s, 2 * want, 0.02, "paid per micro-batch")
-- The eager Hugging Face loss is its own chain (train_ends_costs): the
-- switch names Megatron-Core's path, which eager modules do not run, so
-- asking for both is refused rather than ignored.
t.raises(function() gp.train(t.with(job, { unfused_loss = true, kernels = "eager" })) end,
         "train: unfused_loss is Megatron-Core's vocab-parallel cross-entropy; with kernels = "
         .. "eager (stack = megatron) the loss is already Hugging Face's, op by op: give kernels = "
         .. "fused", "eager kernels: refused, naming both", true)
t.raises(function() gp.train(t.with(job, { unfused_loss = "yes" })) end,
         "unfused_loss must be true or false (got string 'yes')", "a non-boolean is refused", true)

-- The Megatron-Core profile (predict/train.lua) for a case whose source
-- names Megatron-Core: TE's fused attention, the README's overlaps and
-- the unfused loss (core_r0.8.0 defaults), not the 2021 papers'
-- Megatron-LM (unfused softmax, no distributed optimizer).
local train = require "gpuplan.train"
local predict = require "gpuplan.predict.train"
local seen
local orig = train.train
train.train = function(o) seen = o; return orig(o) end
local case = {
  id = "t", kind = "train",
  model = { name = "GPT-1.7B", positions = "learned", layers = 24, hidden = 2048, heads = 16,
            kv_heads = 16, ffn_hidden = 8192, ffn_gated = false, vocab = 131072,
            tied_embeddings = false, params_b = 1.7 },
  hardware = { gpu = "h100-sxm", gpus = 48, gpus_per_node = 8, inter_node = "ib-ndr-400",
               nics_per_node = 8 },
  parallel = { tp = 1, pp = 1, dp = 48, zero = 1, global_batch = 192 },
  workload = { seq_len = 4096, precision = "bf16", method = "pretrain",
               framework = "megatron-core" },
  measured = { metric = "mfu_tflops_per_gpu", value = 408.8 },
  source = { title = "NVIDIA Megatron-LM README (Megatron-Core r0.8.0 on H100)" },
}
predict(case, gp.catalog())
t.ok(seen and seen.unfused_loss == true and seen.flash == true and seen.dropout == true
     and seen.overlap_grad_reduce == true and seen.grad_reduce == "fp32",
     "Megatron-Core: unfused loss, TE attention, dropout 0.1, overlapped fp32 reduce")
case.source.title = "Megatron-LM (Narayanan et al., SC'21)"
case.workload.framework = "megatron-lm"
seen = nil
predict(case, gp.catalog())
train.train = orig
-- The 2021 papers' Megatron-LM ran the same op-by-op loss (mpu/
-- cross_entropy.py on "output.float()" at the SC21 scripts' commit
-- 6985e58) under its own profile: unfused softmax attention, no overlap.
t.ok(seen and seen.unfused_loss == true and seen.flash == false
     and seen.overlap_param_gather == false,
     "Megatron-LM 2021: its own profile, the loss unfused there too")
