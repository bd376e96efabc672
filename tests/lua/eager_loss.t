-- The loss left out of torch.compile (eager_loss): torchtitan compiles
-- each TransformerBlock alone, and from e8977b0 (December 2024, "TODO:
-- compiling loss function causes CUDA errors, turning off for now") to
-- PR #1033 (April 2025) its F.cross_entropy(pred.flatten(0, 1).float(),
-- ...) ran op by op: the fp32 cast, log_softmax and nll_loss forward,
-- nll's gradient, log_softmax's backward and the cast back.  Run with
-- ./gpuplan run tests/lua/eager_loss.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(11)

-- Llama 3 8B (vocabulary 128256), one sequence of 4096 tokens on one
-- H100 SXM, one micro-batch, layers compiled (stack hf, kernels fused):
-- the loss covers T V = 4096 x 128256 = 525.3M logits.  Eager it moves
-- forward the cast (read A = 2, write 4) and log_softmax (read and write
-- 4): 6 + 8 B a logit in two passes, where the fused loss moves A + 8 =
-- 10 in one; backward nll's zero-filled gradient (4), log_softmax's
-- backward (read two fp32, write one: 12) and the cast back (6), 22 B in
-- three passes against 6 in one.  So 4 + 16 = 20 B more a logit, 10.51
-- GB per micro-batch, at H100's streaming rate 3.35 TB/s x 0.84 (the
-- catalog's hbm fraction) = 2.814 TB/s: 3.73 ms.  The three extra passes
-- add their fill and launch, a few microseconds each (under 1% of it):
-- tolerance 2%.
local job = { model = "llama3-8b", gpu = "h100-sxm", gpus = 1, method = "pretrain",
              stack = "hf", kernels = "fused", seq = 4096, batch = 1, global_batch = 1 }
local on = gp.train(t.with(job, { eager_loss = true }))
local off = gp.train(job)
local want = 20 * 4096 * 128256 / (3.35e12 * 0.84)
t.near(on.step_s - off.step_s, want, 0.02, "eager loss: 4 B more a logit forward, 16 back")
-- Two micro-batches of one sequence: the loss runs twice.
local on2 = gp.train(t.with(job, { eager_loss = true, global_batch = 2 }))
local off2 = gp.train(t.with(job, { global_batch = 2 }))
t.near(on2.step_s - off2.step_s, 2 * want, 0.02, "paid per micro-batch")
-- With every operator eager the loss is already op by op; asking for it
-- twice, or beside Megatron-Core's own unfused loss, is refused.
t.raises(function() gp.train(t.with(job, { eager_loss = true, kernels = "eager" })) end,
         "train: eager_loss is a loss left out of the compiled layers; with kernels = eager "
         .. "(stack = hf) every operator already runs op by op: give kernels = fused",
         "eager kernels: refused", true)
t.raises(function() gp.train(t.with(job, { eager_loss = true, unfused_loss = true })) end,
         "are two different losses: give one", "with unfused_loss: refused", true)
t.raises(function() gp.train(t.with(job, { eager_loss = 1 })) end,
         "eager_loss must be true or false", "a non-boolean is refused", true)

-- The torchtitan profile (predict/train.lua) sets it for a case that
-- names a commit of that window (source.commit 9dec370, the end-2024
-- benchmarks'), and not for a later one, whose loss compiles again.
local train = require "gpuplan.train"
local predict = require "gpuplan.predict.train"
local seen
local orig = train.train
train.train = function(o) seen = o; return orig(o) end
local case = {
  id = "t", kind = "train",
  model = { name = "Llama 3.1 8B", layers = 32, hidden = 4096, heads = 32, kv_heads = 8,
            ffn_hidden = 14336, ffn_gated = true, vocab = 128256, tied_embeddings = false,
            params_b = 8.03 },
  hardware = { gpu = "h100-sxm", gpus = 8, gpus_per_node = 8 },
  parallel = { tp = 1, pp = 1, dp = 8, zero = 3, fsdp = "full_shard", fsdp_version = 2,
               micro_batch = 1, global_batch = 8, recompute = "op" },
  workload = { seq_len = 8192, precision = "bf16", method = "pretrain",
               framework = "torchtitan" },
  measured = { metric = "tokens_per_s_per_gpu", value = 6000 },
  source = { title = "torchtitan benchmarks", commit = "9dec370" },
}
predict(case, gp.catalog())
local at_9dec370 = seen and seen.eager_loss
case.source.commit = "820504e"
seen = nil
predict(case, gp.catalog())
train.train = orig
t.ok(at_9dec370 == true, "torchtitan 9dec370: the loss outside torch.compile")
t.ok(seen and seen.eager_loss == nil, "torchtitan 820504e: the loss compiled")

-- A case that names no commit but dates its source: the window's days
-- (case.lua EAGER_LOSS_DAYS, e8977b0 2024-12-18 to bbb1b616 2025-04-02)
-- stand for the commit.  torchao's float8 README H100 table, 2025-03-12,
-- "torchtitan version: `0.0.2`": inside, the loss eager; the day PR #1033
-- landed and after: compiled; no date: compiled (nothing to read).
-- (t.handed: the options the predictor hands gp.train, caught)
case.source.commit = nil
case.source.date = "2025-03-12"
seen = t.handed(case)
t.ok(seen and seen.eager_loss == true, "no commit, source.date 2025-03-12: the loss outside torch.compile")
case.source.date = "2025-04-02"
seen = t.handed(case)
t.ok(seen and seen.eager_loss == nil, "no commit, source.date 2025-04-02 (bbb1b616's day): compiled")
case.source.date = nil
seen = t.handed(case)
t.ok(seen and seen.eager_loss == nil, "no commit, no date: compiled")
-- The memory predictor takes the same window: 12 B a logit held at the
-- backward's start (memory.lua), so its logit_bytes is 12 on the dated
-- case.  Read off the defaults line the predictor writes.
local pm = require "gpuplan.predict.memory"
local mcase = {}
for k, v in pairs(case) do mcase[k] = v end
mcase.kind = "memory"
mcase.measured = { metric = "peak_reserved_gib", value = 48 }
mcase.source = { title = "torchao float8 README", date = "2025-03-12" }
local r = pm(mcase, gp.catalog())
local d = type(r) == "table" and table.concat(r.defaults or {}, "; ") or ""
t.ok(d:find("logit_bytes=12", 1, true) ~= nil, "memory: logit_bytes 12 on the dated case")

