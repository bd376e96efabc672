-- The TP output head gathered to Replicate before a plain cross-entropy
-- (replicated_logits; KempnerForge's "Output head: ColwiseParallel (split
-- vocab, gather to Replicate for loss)" and training/loss.py's
-- F.cross_entropy over the gathered bf16 logits): what the loss's backward
-- holds (engine/memory_train.c) and what the step pays (engine/
-- train_layer.c train_ends_costs).  Run with
-- ./gpuplan run tests/lua/replicated_logits.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(8)

local function comp(r, name)
  for _, c in ipairs(r.components) do if c.name == name then return c.bytes end end
  return 0
end
local V = 128256

-- Memory.  llama3-8b, tp 4 on 8 GPUs, 2 sequences of 4096 (T = 8192
-- tokens), kernels fused (so not the eager 6 B default).  The loss's
-- backward holds four T x V tensors in the logits' 16-bit type (A = 2):
-- the logits the loop keeps, log_softmax's saved output, nll_loss's
-- gradient and log_softmax's gradient, 4 A = 8 B a logit, where a stated
-- logit_bytes = 4 holds 4: the difference T x V x 4 = 8192 x 128256 x 4 =
-- 4,202,692,608 B (the head's h terms are the same in both).  Sums of
-- doubles: 1e-12 relative.
local lb = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, tp = 4, seq = 4096, batch = 2,
             kernels = "fused", stack = "hf", replicated_logits = true }
local function near(got, want, what) t.near(got, want, 1e-12, what) end
near(comp(gp.memory(lb), "logits") - comp(gp.memory(t.with(lb, { logit_bytes = 4 })), "logits"),
  8192 * V * 4, "replicated: 4 x 2 B a logit at the loss's backward, not one fp32 copy")
-- fp32 activations (act_bytes 4: the logits and the loss in fp32): 4 x 4
-- = 16 B a logit, 12 more than the stated 4: T x V x 12.
local f32 = t.with(lb, { act_bytes = 4 })
near(comp(gp.memory(f32), "logits") - comp(gp.memory(t.with(f32, { logit_bytes = 4 })), "logits"),
  8192 * V * 12, "fp32 logits: 4 x 4 B a logit")
-- Eager kernels keep their own default (6 B a logit), replicated or not.
local eg = t.with(lb, { kernels = "eager" })
near(comp(gp.memory(eg), "logits"), comp(gp.memory(t.with(eg, { logit_bytes = 6 })), "logits"),
  "eager kernels: the eager loss's 6 B a logit stands")

-- Step.  llama3-8b, one sequence of 4096 on 4 H200 SXM, tp 4 with SP,
-- kernels fused.  The gather is an all-gather of T x V x A = 4096 x 128256
-- x 2 = 1,050,673,152 B over the TP group on the critical path: the TP
-- part grows by gp.comm's time for that collective on those 4 GPUs (the
-- same collective model; 1e-9 relative).
local job = { model = "llama3-8b", gpu = "h200-sxm", gpus = 4, tp = 4, sp = true,
              method = "pretrain", stack = "hf", kernels = "fused", seq = 4096, batch = 1,
              global_batch = 1 }
local function part(r, name) return t.parts(r)[name] end  -- tap.lua's parts
local on, off = gp.train(t.with(job, { replicated_logits = true })), gp.train(job)
local ag = gp.comm{ op = "all_gather", gpu = "h200-sxm", gpus = 4, bytes = 4096 * V * 2 }.time
t.near(part(on, "tp_comm") - part(off, "tp_comm"), ag, 1e-9,
  "the head's all-gather of T x V x A over TP")
-- Compute: the fused vocab-parallel loss moves (A + 8) + (4 + A) = 16 B a
-- logit over T x V/4; the plain bf16 loss over all V moves 2 A forward
-- (log_softmax) and A + 3 A back (nll's zero fill, log_softmax's
-- backward), 12 B, plus funcol's torch.cat into place (read and write T x
-- V x A) and the gradient slice's .clone() (read and write T x V/4 x A):
-- 4096 x 128256 x (12 + 4 + 1 - 16/4) = 6,829,375,488 B more, at the
-- H200's 4.8 TB/s x 0.89 (the catalog's hbm fraction) = 4.272 TB/s:
-- 1.5986 ms.  The extra passes add their fill and launch, a few
-- microseconds each: tolerance 2%.
local want = 4096 * V * 13 / (4.8e12 * 0.89)
t.near(part(on, "compute") - part(off, "compute"), want, 0.02,
  "the loss over all V, the cat and the clone: 13 B a logit more")
-- Two micro-batches: the gather and the loss run twice, the difference
-- exactly doubles (nothing else differs between the pairs; 1e-9 relative).
local on2 = gp.train(t.with(job, { replicated_logits = true, global_batch = 2 }))
local off2 = gp.train(t.with(job, { global_batch = 2 }))
t.near(on2.step_s - off2.step_s, 2 * (on.step_s - off.step_s),
  1e-9, "paid per micro-batch")
-- tp 1: nothing gathers; the plain bf16 loss (12 B a logit) against the
-- fused loss's 16 over the same T x V: 4096 x 128256 x 4 B less, 0.4919
-- ms at 4.272 TB/s.  Tolerance 3%: the plain loss's three passes against
-- two, each with its fill and launch, on a difference this small.
local j1 = t.with(job, { gpus = 1, tp = 1, sp = false })
local d1 = gp.train(t.with(j1, { replicated_logits = true })).step_s - gp.train(j1).step_s
local w1 = -4096 * V * 4 / (4.8e12 * 0.89)
t.near(d1, w1, 0.03, "tp 1: the plain bf16 loss, no gather")

-- The train predictor hands workload.replicated_logits to gp.train (it
-- was read by the memory predictor alone).
local case = {
  id = "t", kind = "train",
  model = { name = "Llama 3.1 8B", layers = 32, hidden = 4096, heads = 32, kv_heads = 8,
            ffn_hidden = 14336, ffn_gated = true, vocab = 128256, tied_embeddings = false,
            params_b = 8.03 },
  hardware = { gpu = "h200-sxm", gpus = 8, gpus_per_node = 4 },
  parallel = { tp = 4, pp = 1, dp = 2, sp = true, zero = 3, fsdp = "full_shard",
               fsdp_version = 2, micro_batch = 1, global_batch = 2, recompute = "full" },
  workload = { seq_len = 4096, precision = "bf16", method = "pretrain", kernels = "fused",
               replicated_logits = true },
  measured = { metric = "step_time_s", value = 1 },
  source = { title = "t" },
}
local seen = t.handed(case)
t.ok(seen and seen.replicated_logits == true, "the train predictor passes replicated_logits")
