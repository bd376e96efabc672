-- The TP output head gathered to Replicate before a plain cross-entropy
-- (replicated_logits; KempnerForge's "Output head: ColwiseParallel (split
-- vocab, gather to Replicate for loss)" and training/loss.py's
-- F.cross_entropy over the gathered bf16 logits): what the loss's backward
-- holds (engine/memory_train.c).  Run with
-- ./gpuplan run tests/lua/replicated_logits.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(3)

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

