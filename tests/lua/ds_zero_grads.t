-- DeepSpeed's ZeRO optimizer at stages 2 and 3 (gp.memory on the
-- deepspeed stack; engine/memory_deepspeed.c mem_ds_zero_phases): with
-- ZeRO on the gradients accumulate in the model dtype, the fp32 gradient
-- exists only in the optimizer step, and the peak is the larger of the
-- backward (activations + 16-bit partition) and the step (no
-- activations; the 16-bit partition, its flattened copy and the fp32
-- gradient together).
-- Run with ./gpuplan run tests/lua/ds_zero_grads.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(8)

local function comp(r, name) return t.part(r, name) end

-- Llama 2 7B (6,738,415,616 parameters, every one trained) on 8 A800s,
-- bf16 (DeepSpeed's default for a bf16 model under ZeRO: grad_accum_dtype
-- = the model dtype, 2 B), 8 ranks: g = 6738415616 / 8 partition elements.
local base = { model = "llama2-7b", gpu = "a800-sxm-80gb", gpus = 8, stack = "deepspeed",
  method = "full", seq = 4096, batch = 2, recompute = "full" }
local function mem(extra) return gp.memory(t.with(base, extra)) end
local N = 6738415616
local g = N / 8

-- ZeRO-3, micro-batch 2 at 4096 tokens, checkpointed: the backward is the
-- peak.  Its gradients are grad_partitions_flat_buffer alone, 2 B an
-- element of the partition: 2 g = 1.685 GB (the recipe's 6 B, .grad plus
-- an fp32 accumulation, is BF16_Optimizer's, which ZeRO 2/3 does not
-- use).  Exact but for rounding: 1e-9 relative.
local z3 = mem { zero = 3 }
t.ok(comp(z3, "activations") > 0, "zero 3, 4096 tokens x 2: the backward is the peak")
t.near(comp(z3, "grads"), 2 * g, 1e-9, "zero 3 backward: the 16-bit gradient partition")

-- ZeRO-2 with 4 micro-batches a step: from the second micro-batch on the
-- epilogue's averaged_gradients (the first micro-batch's partition) and
-- the new grads_in_partition live together, 2 + 2 B an element; a step
-- of one micro-batch holds the one, 2 B.  Tolerance as above.
t.near(comp(mem { zero = 2, microbatches = 4 }, "grads"), 4 * g, 1e-9,
  "zero 2 accumulating: averaged_gradients + grads_in_partition")
t.near(comp(mem { zero = 2, microbatches = 1 }, "grads"), 2 * g, 1e-9,
  "zero 2, one micro-batch: grads_in_partition alone")

-- At 128 tokens the step is the peak: stage 2's flatten(...).to(fp32)
-- holds the partition (2), its flat copy (2) and the fp32 gradient (4),
-- 8 g = 6.74 GB; the activations are gone (not listed), and so is the
-- flat bucket (_release_ipg_buffers at the backward's end).  Tolerance
-- as above.
local z2s = mem { zero = 2, seq = 128, batch = 1, recompute = "none" }
t.near(comp(z2s, "grads"), 8 * g, 1e-9, "zero 2 step: 16-bit partition, its flat copy, fp32")
t.is(comp(z2s, "activations") + comp(z2s, "param_gather"), 0,
  "zero 2 step: no activations, no bucket")

-- ZeRO-3 on one GPU: the step builds the fp32 gradient one sub-group of
-- sub_group_size = 1e9 elements at a time (config.py), so the partition
-- (all N) stays 2 B and only 1e9 elements get the copy and the fp32 one:
-- 2 N + 6e9 B; stage 3 keeps its flat bucket, reduce_bucket_size 5e8 x
-- 2 B = 1e9 B.  Tolerance as above.
local one = mem { zero = 3, gpus = 1, seq = 128, batch = 1, recompute = "none" }
t.near(comp(one, "grads"), 2 * N + 6e9, 1e-9, "zero 3 step: one 1e9-element sub-group in fp32")
t.near(comp(one, "param_gather"), 1e9, 1e-9, "zero 3 step: the flat bucket stays")
