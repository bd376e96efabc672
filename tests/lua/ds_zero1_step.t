-- DeepSpeed's ZeRO-1 optimizer step (gp.memory on the deepspeed stack;
-- engine/memory_deepspeed.c mem_ds_zero_phases).  Stage 1 is the same
-- class as stage 2 (stage_1_and_2.py, partition_gradients false) with the
-- same step(): "single_grad_partition = self.flatten(self.averaged_
-- gradients[i]).to(self.single_partition_of_fp32_groups[i].dtype)", where
-- averaged_gradients are narrow views of this rank's partition of the
-- 16-bit .grad (get_flat_partition(..., return_tensor_list=True)) and the
-- epilogue's "self.zero_grad(set_to_none=True)" dropped the rest.  The
-- invariant it restores: the same job needs no less memory at ZeRO-1
-- than at ZeRO-2, whose step holds exactly those three tensors (found by
-- a random-job check: fp16 Llama 3.1 8B on 2 H200s read 89.3 GB at
-- ZeRO-1 and 102.3 GB at ZeRO-2).
-- Run with ./gpuplan run tests/lua/ds_zero1_step.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(10)

local function comp(r, name) return t.part(r, name) end

-- Llama 2 7B (6,738,415,616 parameters, every one trained) on 8 A800s in
-- fp16 (recipe mixed-16: 2 B weights and grads, the ZeRO optimizer's
-- class; bf16 at ZeRO 0/1 is BF16_Optimizer, another class, below).
-- The partition: g = N / 8 elements.
local base = { model = "llama2-7b", gpu = "a800-sxm-80gb", gpus = 8, stack = "deepspeed",
  method = "full", precision = "fp16" }
local function mem(extra) return gp.memory(t.with(base, extra)) end
local N = 6738415616
local g = N / 8

-- 128 tokens, one sequence: the backward holds the whole 16-bit gradient
-- (2 N = 13.48 GB) and some activations; the step holds the partition's
-- .grad views (2 g), their flat copy (2 g) and the fp32 gradient (4 g):
-- 8 g, with the activations gone -- the peak only when 8 g > 2 N + act.
-- At 8 ranks 8 g = N = 6.74 GB: the backward stays the peak.
-- Tolerance 1e-9 relative: exact but for rounding.
local z1 = mem { zero = 1, seq = 128, batch = 1, recompute = "none" }
t.ok(comp(z1, "activations") > 0, "zero 1 on 8 ranks: the backward (with activations) is the peak")
t.near(comp(z1, "grads"), 2 * N, 1e-9, "zero 1 backward: the whole 16-bit .grad")
-- The backward's flat bucket: stage_1_and_2.py backward() makes buf_0 of
-- reduce_bucket_size (5e8) elements of the 16-bit dtype at every stage
-- (contiguous_gradients defaults true): 5e8 x 2 B = 1e9 B.  Tolerance as
-- above.
t.near(comp(z1, "param_gather"), 1e9, 1e-9, "zero 1 backward: the 5e8-element ipg bucket")

-- On 2 ranks g = N / 2: the step's 8 g = 4 N = 26.95 GB outweighs the
-- backward's 2 N + activations: grads 8 g, no activations listed.
local g2 = N / 2
local s1 = mem { zero = 1, gpus = 2, seq = 128, batch = 1, recompute = "none" }
t.near(comp(s1, "grads"), 8 * g2, 1e-9, "zero 1 step: 16-bit partition, its flat copy, fp32")
t.is(comp(s1, "activations"), 0, "zero 1 step: the activations are gone")
t.is(comp(s1, "param_gather"), 0, "zero 1 step: the bucket is released before it")
t.is(s1.grad_phase, "step", "zero 1: grad_phase says the step")

-- The invariant: ZeRO-2 shards what ZeRO-1 holds whole, and its step is
-- the same: not more memory at stage 2 than at stage 1 (the ZeRO-2 step
-- holds the same 8 g; the bucket is freed before it).
local s2 = mem { zero = 2, gpus = 2, seq = 128, batch = 1, recompute = "none" }
t.ok(s2.total <= s1.total * (1 + 1e-12),
  string.format("zero 2 total %.4g <= zero 1 total %.4g", s2.total, s1.total))

-- bf16 at ZeRO 1 is DeepSpeed's BF16_Optimizer (recipe deepspeed-bf16,
-- master_shard0): its .grad plus a flat fp32 accumulation, 6 B a
-- parameter of the whole stage, unchanged: 6 N.
local bf = mem { zero = 1, gpus = 2, seq = 128, batch = 1, recompute = "none", precision = "bf16" }
t.is(bf.recipe, "deepspeed-bf16", "bf16 zero 1 is BF16_Optimizer")
t.near(comp(bf, "grads"), 6 * N, 1e-9, "BF16_Optimizer: bf16 .grad + fp32 accumulation, whole")
