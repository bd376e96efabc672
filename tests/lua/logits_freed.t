-- logits_freed: the training loop drops its logits before backward
-- (torchtune's _loss_step, "del logits"), so under a frozen output layer
-- the loss's and the head's backward free them before the last layer is
-- re-run: the step holds the larger of the logits and the re-run, not
-- their sum (engine/memory_train.c).  Run with
-- ./gpuplan run tests/lua/logits_freed.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(7)

local function comp(r, name)
  for _, c in ipairs(r.components) do if c.name == name then return c.bytes end end
  return 0
end

-- Llama 3.2 3B as torchtune's README "Optimization flags" rows train it:
-- one A100, 2 sequences of 4096 (T = 8192 tokens), full recompute,
-- LoRA rank 64, 2.25 B a logit (the torchtune profile's).  The logits
-- term is T x (2 B x h for the final norm's input + V x 2.25) = 8192 x
-- (6144 + 288576) = 2,414,346,240 B; the re-run of one layer is smaller
-- (0.7 GiB), so with logits_freed the re-run adds nothing.
local job = { model = "llama3.2-3b", gpu = "a100-sxm-80gb", gpus = 1, method = "lora",
              lora_rank = 64, lora_targets = "q,v,o,gate,up,down", seq = 4096, batch = 2,
              recompute = "full", kernels = "fused", stack = "hf", recipe = "bf16",
              logit_bytes = 2.25, eager_norm = false }
local on, off = gp.memory(t.with(job, { logits_freed = true })), gp.memory(job)
-- The logits are priced the same either way (sums of doubles: 1e-12).
t.near(comp(on, "logits"), 8192 * (2 * 3072 + 128256 * 2.25), 1e-12,
  "the logits: the final norm's input and 2.25 B a logit")
t.near(comp(on, "logits"), comp(off, "logits"), 1e-12, "logits_freed does not change the logits")
t.ok(comp(off, "recompute") > 0, "without it the layer re-run adds to the logits")
t.is(comp(on, "recompute"), 0, "with it the re-run, smaller than the logits, adds nothing")
-- The peak drops by exactly the re-run's bytes (1e-12 relative).
t.near(off.allocated - on.allocated, comp(off, "recompute"), 1e-12,
  "the peak loses the re-run")

-- A trained head (full fine-tune) makes its V x h weight gradient in the
-- head's backward: the rule does not apply, nothing moves.
local full = { model = "llama3.2-3b", gpu = "a100-sxm-80gb", gpus = 1, method = "full",
               seq = 4096, batch = 2, recompute = "full", kernels = "fused", stack = "hf",
               recipe = "bf16", logit_bytes = 2.25, eager_norm = false }
t.is(gp.memory(t.with(full, { logits_freed = true })).allocated, gp.memory(full).allocated,
  "a trained head: unchanged")

-- Where the re-run is larger than the logits (a short vocabulary: 32000
-- entries at 2.25 B, 8192 x (6144 + 72000) = 640 MB, under the 3B
-- layer's re-run), the step keeps the re-run less the logits it replaces:
-- the peak is logits + re-run - logits = the re-run, i.e. the peak drops
-- by the logits (1e-12 relative).
local sv = t.with(job, { model = { layers = 28, hidden = 3072, heads = 24, kv_heads = 8,
  ffn_hidden = 8192, ffn_gated = true, vocab = 32000, norm = "rms", tied_embeddings = true } })
local son, soff = gp.memory(t.with(sv, { logits_freed = true })), gp.memory(sv)
t.near(soff.allocated - son.allocated, comp(soff, "logits"), 1e-12,
  "a re-run larger than the logits: the peak drops by the logits")
