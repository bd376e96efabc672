-- DeepSpeed without ZeRO in fp16 (gp.memory on the deepspeed stack, zero 0;
-- engine/memory_deepspeed.c mem_ds_fp16_step).  DeepSpeed wraps the
-- optimizer in its FP16 optimizers (engine.py _configure_fp16_optimizer,
-- v0.14.2), whose step builds the fp32 gradient whole beside the 16-bit
-- .grad:
--  - FP16_Optimizer (DeepSpeed's FusedAdam, what a ds_config AdamW builds):
--    "_flatten_dense_tensors([... p.grad.to(data_type) for p in group])",
--    the per-parameter fp32 copies (4 B) and their flat concatenation (4 B)
--    beside the 16-bit .grad (2 B), dropped only after ("p.grad = None"):
--    10 B per element;
--  - FP16_UnfusedOptimizer (a client optimizer, e.g. SGD): "fp32_param.grad
--    = fp16_param.grad.to(fp32_param.dtype)" per parameter, the 16-bit .grad
--    kept: 6 B.
-- The invariant it restores: at dp 1 ZeRO-1 shards nothing, and its step
-- (8 B: partition views, flat copy, fp32) read more than ZeRO-0's 2 B --
-- found by a random-job check (megatron-gpt-39b fp16, TP 2 on 2 MI355X:
-- ZeRO-0 346.9 GB, ZeRO-1 452.7 GB).
-- Run with ./gpuplan run tests/lua/ds_zero0_fp16_step.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(11)

-- Llama 2 7B (6,738,415,616 parameters, all trained) on one A800 in fp16,
-- 128 tokens, one sequence: activations ~0.8 GB, far below the step's
-- fp32 tensors.  Tolerance 1e-9 relative: exact but for rounding.
local N = 6738415616
local base = { model = "llama2-7b", gpu = "a800-sxm-80gb", gpus = 1, stack = "deepspeed",
  method = "full", precision = "fp16", seq = 128, batch = 1, recompute = "none" }
local function mem(extra) return gp.memory(t.with(base, extra)) end

local z0 = mem { zero = 0 }
t.near(t.part(z0, "grads"), 10 * N, 1e-9, "zero 0 fp16 step: 16-bit .grad + fp32 copies + flat fp32 = 10 N")
t.is(t.part(z0, "activations"), 0, "zero 0 fp16 step: the activations are gone")
t.is(z0.grad_phase, "step", "zero 0 fp16: grad_phase says the step")
t.near(z0.state_bytes.grads, 10, 1e-12, "state_bytes.grads: 10 B a parameter at the step")

-- SGD is a client optimizer: FP16_UnfusedOptimizer, 2 + 4 = 6 N.
local sgd = mem { zero = 0, optimizer = "sgd" }
t.near(t.part(sgd, "grads"), 6 * N, 1e-9, "zero 0 fp16, SGD (unfused): 16-bit .grad + fp32 .grad = 6 N")

-- The invariant: ZeRO-1 at dp 1 (its step 8 N: partition views 2, flat
-- copy 2, fp32 4, nothing sharded) is not more memory than ZeRO-0, whose
-- master and states are the same and whose step holds 10 N.
local z1 = mem { zero = 1 }
t.near(t.part(z1, "grads"), 8 * N, 1e-9, "zero 1 at dp 1: its step's 8 N")
t.ok(z1.total <= z0.total * (1 + 1e-12),
  string.format("zero 1 total %.4g <= zero 0 total %.4g at dp 1", z1.total, z0.total))

-- A backward heavier than the step keeps the recipe's 16-bit gradient:
-- seq 4096, 8 sequences, no recompute saves ~196 GB of activations, more
-- than the step's 8 N = 53.9 GB extra.
local big = mem { zero = 0, seq = 4096, batch = 8 }
t.near(t.part(big, "grads"), 2 * N, 1e-9, "zero 0 fp16, activations dominate: the 16-bit .grad, 2 N")
t.is(big.grad_phase, nil, "zero 0 fp16, activations dominate: no step phase")

-- Not DeepSpeed's FP16 optimizers: bf16 runs BF16_Optimizer (6 N, the
-- recipe's), and the hf stack's torch optimizer keeps the recipe's 2 N.
local bf = mem { zero = 0, precision = "bf16" }
t.near(t.part(bf, "grads"), 6 * N, 1e-9, "bf16 zero 0 is BF16_Optimizer: 6 N, unchanged")
local hf = mem { zero = 0, stack = "hf" }
t.near(t.part(hf, "grads"), 2 * N, 1e-9, "hf stack fp16: the recipe's 2 N, unchanged")
