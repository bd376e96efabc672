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

t.plan(18)

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

-- The result says which phase the grads component holds, and the bytes
-- per parameter before sharding count the grads as that component does
-- (gpuplan fit's "model states" line): the backward's partition 2 B, so
-- 2 + 2 + 4 + 8 = 16 B/param, not the recipe's 20; stage 2 accumulating
-- holds two, 4 B (18); stage 2's step 2 + 2 + 4 = 8 B (22).  Exact.
t.is(z3.grad_phase, "backward", "zero 3 backward: grad_phase")
t.is(z3.state_bytes.grads .. "/" .. z3.state_bytes.total, "2.0/16.0",
  "zero 3 backward: 2 B of grads, 16 B/param")
local z2a = mem { zero = 2, microbatches = 4 }
t.is(z2a.state_bytes.grads .. "/" .. z2a.state_bytes.total, "4.0/18.0",
  "zero 2 accumulating: 4 B of grads, 18 B/param")
t.is(z2s.grad_phase .. " " .. z2s.state_bytes.grads .. "/" .. z2s.state_bytes.total,
  "step 8.0/22.0", "zero 2 step: 8 B of grads, 22 B/param")
-- Stage 3's step on one GPU, per element: (2 N + 6e9) / N = 2.890...;
-- tolerance: rounding only.
t.near(one.state_bytes.grads, (2 * N + 6e9) / N, 1e-12, "zero 3 step, one sub-group: per element")
-- Where the ZeRO optimizer's gradients do not apply (fp32 weights; zero
-- 1's BF16_Optimizer) the recipe's bytes stand and no phase is named.
local f32 = mem { zero = 3, precision = "fp32" }
t.is(tostring(f32.grad_phase) .. " " .. f32.state_bytes.grads, "nil 4.0",
  "zero 3 fp32: the recipe's 4 B, no phase")
local z1 = mem { zero = 1 }
t.is(tostring(z1.grad_phase) .. " " .. z1.state_bytes.grads, "nil 6.0",
  "zero 1: BF16_Optimizer's 6 B, no phase")

-- An RL step's rollout state runs between the optimizer step and the next
-- backward (engine/rl_mem.c rl_ds_between): no fp32 gradient, only what
-- stage 3 keeps from init, its 16-bit partition buffer (2 B an element)
-- and its flat bucket (reduce_bucket_size 5e8 x 2 B = 1e9 B), named
-- "idle".  Llama 3 8B (8,030,261,248 parameters) over 8 GPUs at ZeRO-3,
-- g = N / 8: grads 2 g, state_bytes.grads 2.  Rounding only, 1e-12.
local rl = gp.memory { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, zero = 3,
  method = "grpo", stack = "deepspeed", prompts = 64, group = 8, prompt_len = 1024,
  response_len = 1024, recompute = "full" }
local g8 = 8030261248 / 8
t.ok(rl.rl_state == "rollout" and rl.grad_phase == "idle" and
     math.abs(rl.state_bytes.grads - 2) < 1e-12 and
     math.abs(comp(rl, "grads") - 2 * g8) < 1e-12 * comp(rl, "grads") and
     math.abs(comp(rl, "param_gather") - 1e9) < 1e-12 * 1e9,
     "RL rollout state: stage 3's kept 16-bit partition and bucket, no fp32 gradient")

-- The log-prob forwards run between steps too (rl_mem.c rl_ds_between on
-- the forward state): at ZeRO-2 no gradient lives there -- the step frees
-- the partition and backward() makes the buckets anew -- where the
-- update, 8 micro-batches of 1, holds averaged_gradients and
-- grads_in_partition, 4 B a partition element.  Llama 2 7B on 8 H100s,
-- colocated: the update's grads 4 g, the forward's none.  Exact.
local rlj = { model = "llama2-7b", gpu = "h100-sxm", gpus = 8, stack = "deepspeed", zero = 2,
  prompts = 64, group = 8, prompt_len = 1024, response_len = 2048, batch = 8 }
local r8 = gp.rl(rlj)
t.ok(r8.memory.update.grad_phase == "backward" and
     math.abs(comp(r8.memory.update, "grads") - 4 * g) < 1e-12 * 4 * g and
     r8.memory.forward.grad_phase == "idle" and comp(r8.memory.forward, "grads") == 0,
     "RL forward state, zero 2: no gradient between steps (the update's 4 g is the backward's)")
-- The rollout engine's share (rl_mem.c rl_rollout_cap) counts the same
-- idle state beside its pool, not the update's phase: with one
-- micro-batch of 64 the update holds 2 g, with 8 it holds 4 g, and the
-- KV budget is the same to the byte (counting the update's grads would
-- take 2 g x (1 + the reserve's fragmentation), about 1.7 GB, from the
-- accumulating one).
local r64 = gp.rl(t.with(rlj, { batch = 64 }))
t.ok(math.abs(comp(r64.memory.update, "grads") - 2 * g) < 1e-12 * 2 * g and
     r64.rollout.kv_budget == r8.rollout.kv_budget,
     "RL rollout KV budget, zero 2: the same whatever the update's accumulation")
