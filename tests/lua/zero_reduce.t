-- The collective ZeRO 1 and 2 reduce gradients with (gp.train's
-- zero_reduce; engine/train_stage.c kind_colls, train.c phase_post).
-- Run with ./gpuplan run tests/lua/zero_reduce.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(11)

local part = t.step_part

-- megatron-gpt-1.7b (24 layers, h 2304, LayerNorm, biases on every
-- linear, plain 4h MLP) on one DGX H100, dp 8, 4 micro-batches of 1,
-- every overlap off, bf16 gradients reduced in bf16.
local h, L, mbs = 2304, 24, 4
local base = { model = "megatron-gpt-1.7b", gpu = "h100-sxm", gpus = 8, method = "pretrain",
  seq = 2048, zero = 2, stack = "deepspeed", global_batch = 8 * mbs, batch = 1,
  recompute = "none", overlap_param_gather = false, overlap_grad_reduce = false,
  grad_reduce = "bf16", precision = "bf16" }
local function with(extra) return gp.train(t.with(base, extra)) end
local function coll(op, bytes)
  return gp.comm { op = op, bytes = bytes, gpus = 8, system = "dgx-h100" }.time
end

-- Hand derivation.  A layer holds P = 12h^2 + 13h parameters (qkv 3h^2,
-- output h^2, MLP 8h^2, 13 vectors of h: biases and two LayerNorms).
-- ZeRO 2 reduces each layer's 2P bytes of bf16 gradients every
-- micro-batch, in DeepSpeed's buckets of S = 5e8 elements (its default
-- reduce_bucket_size): a layer's share is P / S of a reduction of 2S
-- bytes (tests/lua/ds_buckets.t); with nothing under the backward the
-- reductions all add to dp_comm.  allreduce replaces each reduce_scatter
-- by an all_reduce of the same bytes (gp.comm's prices on the 8 GPUs of
-- a DGX H100), so dp_comm grows by L x mbs x (P/S) (AR(2S) - RS(2S)) and
-- nothing else in the step moves.  The embedding's gradients too (its
-- word and 2048 position tables, (51200 + 2048) h; tied, so no output
-- layer of its own), each micro-batch (train_stage.c ends_block).
-- On the deepspeed stack allreduce also makes DeepSpeed's bucket do
-- 1 + 1/8 more passes of 2 B an element (allreduce_bucket's flatten and
-- the copy of this rank's slices back: tests/lua/ds_buckets.t), a read
-- and a write each at the H100's streaming rate (the kernels' fixed
-- parts cancel).  Tolerance 1e-5 relative: the engine's own layer
-- parameter count (from the model's shape) agrees with 12h^2 + 13h to
-- about 1e-6 of the collectives' time.
local P = 12 * h * h + 13 * h
local E = (51200 + 2048) * h
local dev = gp.roofline { gpu = "h100-sxm" }.device
local flat = (1 + 1 / 8) * 2 * 2 / (dev.mem_bw * dev.hbm)
local rs, ar = with {}, with { zero_reduce = "allreduce" }
local S = 5e8
local grow = L * mbs * (P / S * (coll("all_reduce", 2 * S) - coll("reduce_scatter", 2 * S)) +
  flat * P) +
  mbs * (coll("all_reduce", 2 * E) - coll("reduce_scatter", 2 * E) + flat * E)
t.near((part(ar, "dp_comm").seconds - part(rs, "dp_comm").seconds) / grow, 1, 1e-5,
  "zero 2 allreduce: each micro-batch's layer reductions cost an all-reduce and the flatten")
t.near(ar.step_s - rs.step_s, grow, 1e-5, "and only dp_comm moves")
t.is(with { zero_reduce = "reduce_scatter" }.step_s, rs.step_s, "reduce_scatter is the default")

-- ZeRO 1 reduces once per step, after the last micro-batch: the whole
-- model's 2 Ptot bytes in one collective, Ptot = L P + (V + s) h + 2h
-- (Narayanan et al. 2021 eq. 2's layers and the tied embedding with its
-- 2048 learned positions, V 51200, and the final LayerNorm), so dp_comm
-- grows by AR(2 Ptot) - RS(2 Ptot) once, whatever the micro-batches.
-- On the megatron stack (its contiguous buffer: no flat copies around
-- the collective).  Tolerance 1e-5 relative, as above.
local z1rs = with { zero = 1, stack = "megatron" }
local z1ar = with { zero = 1, stack = "megatron", zero_reduce = "allreduce" }
local Ptot = L * P + (51200 + 2048) * h + 2 * h
t.near(part(z1ar, "dp_comm").seconds - part(z1rs, "dp_comm").seconds,
  coll("all_reduce", 2 * Ptot) - coll("reduce_scatter", 2 * Ptot), 1e-5,
  "zero 1 allreduce: one all-reduce of the whole model a step")
-- DeepSpeed's stage 1 all-reduces in every version (engine/train.c
-- step_allreduce: contiguous gradients off at stage 1 through v0.12, so
-- allreduce_bucket's dist.all_reduce; use_multi_rank_bucket_allreduce
-- after), so on the deepspeed stack a zero 1 step left to its default
-- is the stated all-reduce's: exactly the same sums.
t.is(with { zero = 1 }.step_s, with { zero = 1, zero_reduce = "allreduce" }.step_s,
  "deepspeed zero 1: an all-reduce unless told otherwise")

-- Refusals name the user's key.
t.raises(function() with { zero_reduce = "reduce" } end,
  "zero_reduce must be reduce_scatter or allreduce (got string 'reduce')", "unknown value", true)
t.raises(function() with { zero_reduce = "allreduce", zero = 3 } end,
  "zero_reduce allreduce is DeepSpeed's stage 1 and 2: it needs zero 1 or 2 without fsdp",
  "allreduce at zero 3", true)
t.raises(function() with { zero_reduce = "allreduce", fsdp = "shard_grad_op", stack = nil } end,
  "zero_reduce allreduce is DeepSpeed's stage 1 and 2: it needs zero 1 or 2 without fsdp",
  "allreduce with fsdp", true)

-- DeepSpeed's stage 1 all-reduces in every version: a stated
-- reduce_scatter on that stack at zero 1 is refused, not priced as the
-- all-reduce it would get; at zero 2 it is DeepSpeed's own collective.
t.raises(function() with { zero_reduce = "reduce_scatter", zero = 1, stack = "deepspeed" } end,
  "zero_reduce reduce_scatter: DeepSpeed's ZeRO stage 1 reduces gradients by an all-reduce",
  "reduce_scatter stated at deepspeed's zero 1", true)
t.ok(pcall(with, { zero_reduce = "reduce_scatter", zero = 2, stack = "deepspeed" }),
  "reduce_scatter stated at deepspeed's zero 2: priced")

-- A case states it in parallel.zero_reduce (validation/SCHEMA.md): the
-- DeepSpeed 0.14.2 ZeRO-2 row predicts fewer tokens/s with it than the
-- same row without it.
local v = require "gpuplan.validate"
local cat = gp.catalog()
local z2
for _, c in ipairs(v.read("validation/cases.json")) do
  if c.id == "ds0142-a800-llama7b-s4096-zero2-nockpt-mb1" then z2 = c end
end
local stated = v.predict(z2, cat).predicted
z2.parallel.zero_reduce = nil
t.ok(stated < v.predict(z2, cat).predicted, "the case's allreduce is priced")
