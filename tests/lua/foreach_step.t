-- foreach_step: torch.optim's AdamW on its foreach path (optimizer_impl
-- foreach, stated) makes one copy of the second moment at its step,
-- "exp_avg_sq_sqrt = torch._foreach_sqrt(device_exp_avg_sqs)"
-- (torch/optim/adamw.py _multi_tensor_adamw); where the activations are
-- small the step, not the backward, is the peak (engine/memory_train.c
-- foreach_step_phase).  nanoVLM's measured VRAM at batch 1 is that step.
-- Run with ./gpuplan run tests/lua/foreach_step.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(11)

-- SmolLM2-135M's shape (nanoVLM's LM), one H100, 128 tokens, full training.
local job = {
  model = { id = "smollm2-135m-probe", layers = 30, hidden = 576, heads = 9, kv_heads = 3,
            head_dim = 64, ffn_hidden = 1536, ffn_gated = true, vocab = 49153,
            tied_embeddings = true },
  gpu = "h100-sxm", gpus = 1, seq = 128, method = "full", optimizer = "adamw",
  optimizer_impl = "foreach", precision = "bf16", recompute = "none",
}
local function comp(r, name)
  for _, c in ipairs(r.components) do if c.name == name then return c.bytes end end
  return 0
end
local function mem(x) return gp.memory(t.with(job, x)) end

-- Batch 1: 128 tokens of activations (tens of MB) against a step copy of
-- the second moment, 4 B a parameter (mixed-16's fp32 states, 8 B for the
-- two): the step is the peak.  The parameters P = weights / 2 (bf16); the
-- states stay 8 P and the step's workspace is 4 P.  Exact: the same
-- parameter count in both.
local r1 = mem { batch = 1 }
local P = comp(r1, "weights") / 2
t.ok(P > 1e8, "the probe has its ~135M parameters")
t.near(comp(r1, "optimizer") / P, 8, 1e-9, "batch 1: the states as they were (8 B)")
t.near(comp(r1, "workspace") / P, 4, 1e-9, "batch 1: the step's copy of the second moment (4 B)")
t.is(comp(r1, "activations"), 0, "batch 1: the step is the peak, the backward's tensors gone")

-- Not stated (or fused): no copy, the backward's breakdown.
local j0 = t.with(job, { batch = 1 })
j0.optimizer_impl = nil
local r0 = gp.memory(j0)
t.is(comp(r0, "workspace"), 0, "optimizer_impl not stated: no step copy")
t.ok(comp(r0, "activations") > 0, "optimizer_impl not stated: the backward's activations")

-- Batch 256: 32768 tokens of activations (GBs) outgrow the 0.5 GB copy:
-- the backward is the peak, the states alone (8 B a parameter).
local r256 = mem { batch = 256 }
t.is(comp(r256, "workspace"), 0, "batch 256: no step copy, the backward the peak")
t.ok(comp(r256, "activations") > 4 * P, "batch 256: the activations held")

-- DeepSpeed's ZeRO optimizer (its own fused Adam on flat partitions) and
-- LoRA (the adapters' states, a few MB) make no such copy here.
t.near(comp(mem { batch = 1, stack = "deepspeed", zero = 2, gpus = 2 }, "optimizer") / P, 4, 1e-9,
       "deepspeed ZeRO 2 over 2 GPUs: half the 8 B states, no step copy")
local rl = mem { batch = 1, method = "lora" }
t.is(comp(rl, "workspace"), 0, "LoRA: the adapters' states only, no copy priced")

-- A value outside fused|foreach|loop is refused, naming the option.
local ok, err = pcall(gp.memory, t.with(job, { batch = 1, optimizer_impl = "fast" }))
t.ok(not ok and tostring(err):find("optimizer_impl", 1, true), "a bad optimizer_impl is refused by name")
