-- DeepSpeed's stage 2 gradient bucket passes (gp.train on the deepspeed
-- stack; engine/train_stage.c ds_bucket_time): each micro-batch copies
-- the gradients into the reduce bucket and divides them there, and with
-- zero_reduce allreduce flattens the bucket again and copies this rank's
-- slices back, besides the collective.
-- Run with ./gpuplan run tests/lua/ds_buckets.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(10)

local part = t.step_part

-- megatron-gpt-1.7b (24 layers, h 2304, biases on every linear, plain 4h
-- MLP, tied embedding with 2048 learned positions) on one DGX H100, dp 8,
-- 4 micro-batches of 1, every overlap off, bf16 gradients reduced in bf16.
local h, L, mbs, dp = 2304, 24, 4, 8
local base = { model = "megatron-gpt-1.7b", gpu = "h100-sxm", gpus = 8, method = "pretrain",
  seq = 2048, zero = 2, stack = "deepspeed", global_batch = 8 * mbs, batch = 1,
  recompute = "none", overlap_param_gather = false, overlap_grad_reduce = false,
  grad_reduce = "bf16", precision = "bf16" }
local function with(extra) return gp.train(t.with(base, extra)) end
local function coll(op, bytes)
  return gp.comm { op = op, bytes = bytes, gpus = 8, system = "dgx-h100" }.time
end
local dev = gp.roofline { gpu = "h100-sxm" }.device
-- A memory-bound kernel on the roofline (engine/roofline.c roof_eval):
-- bytes / (mem_bw x hbm) + ROOF_MEM_FILL (3.9 us) + the graph-launch gap
-- (1 us on Hopper: dev.graph_launch).  The passes of one layer (or one
-- end) are priced as one such kernel.
local BW = dev.mem_bw * dev.hbm
local function passes(n, elems) return n * 2 * 2 * elems / BW + 3.9e-6 + dev.graph_launch end

-- Hand derivation.  A layer holds P = 12h^2 + 13h parameters, the
-- embedding E = (51200 + 2048) h.  ZeRO 2 reduces every layer's and the
-- embedding's bf16 gradients (2 B an element) each micro-batch, nothing
-- under the backward, the layers' in DeepSpeed's buckets of
-- reduce_bucket_size S = 5e8 elements (its default): every weight is
-- below S, so a bucket spans S / P layers and a layer's share is P / S
-- of a reduction of 2S bytes (train_stage.c ds_reduce_time; P = 63.7M, so
-- 0.127 of one).  dp_comm is mbs x (L x ((P/S) RS(2S) + B(P)) + RS(2E) +
-- B(E)).  B(n), DeepSpeed's passes over the bucket
-- (stage_1_and_2.py): the hook's copy into it and average_tensor's div_,
-- two reads and writes of 2 B, and copy_grads_in_partition's copy of
-- this rank's 1/dp: 2 + 1/8 passes.  Tolerance 1e-5 relative: the
-- engine's layer parameter count agrees with 12h^2 + 13h to about 1e-6.
local P = 12 * h * h + 13 * h
local E = (51200 + 2048) * h
local S = 5e8
local rs = with {}
local want = mbs * (L * (P / S * coll("reduce_scatter", 2 * S) + passes(2 + 1 / dp, P)) +
  coll("reduce_scatter", 2 * E) + passes(2 + 1 / dp, E))
t.near(part(rs, "dp_comm").seconds / want, 1, 1e-5,
  "zero 2 (reduce_scatter, DeepSpeed <= 0.12.3): bucket copy, div_ and the partition's copy")

-- With use_multi_rank_bucket_allreduce (zero_reduce allreduce, DeepSpeed
-- 0.12.4 on): allreduce_bucket's flatten (a whole pass) and the copy of
-- this rank's slices back (1/dp more): 3 + 2/8 passes, and the
-- collective an all-reduce of the same bytes.  Tolerance as above.
local ar = with { zero_reduce = "allreduce" }
local want_ar = mbs * (L * (P / S * coll("all_reduce", 2 * S) + passes(3 + 2 / dp, P)) +
  coll("all_reduce", 2 * E) + passes(3 + 2 / dp, E))
t.near(part(ar, "dp_comm").seconds / want_ar, 1, 1e-5,
  "zero 2 allreduce: the flatten and the slices' copy back added")

-- The passes scale with the micro-batches: twice the micro-batches at
-- the same micro-batch size, twice the dp_comm (every term above is per
-- micro-batch).  Tolerance 1e-9: the same sums, doubled.
local rs2 = with { global_batch = 2 * 8 * mbs }
t.near(part(rs2, "dp_comm").seconds / part(rs, "dp_comm").seconds, 2, 1e-9,
  "per micro-batch: twice the micro-batches, twice the passes")

-- Stage 1 reduces once a step, and by an all-reduce in every DeepSpeed
-- version (engine.py turns contiguous gradients off at stage 1 through
-- v0.12, so allreduce_bucket runs dist.all_reduce; later use_multi_rank_
-- bucket_allreduce; engine/train.c step_allreduce), whatever zero_reduce
-- says: the one all-reduce of the whole model, 2 Ptot bytes, Ptot = L P
-- + E + 2h (the final LayerNorm).  With the mixed-16 recipe (DeepSpeed's
-- ZeRO optimizer on the bf16 model) the flat bucket's passes come with
-- it (engine/train.c ds_flat_passes; stage_1_and_2.py allreduce_bucket's
-- "self.flatten(bucket)" and div_, allreduce_and_copy's "buf.copy_(
-- synced)"): 3 reads and writes of 2 B over Ptot, priced as one
-- memory-bound kernel.  Tolerance 1e-5 relative, as above.
local Ptot = L * P + E + 2 * h
local m16 = { recipe = "mixed-16" }
local z1 = coll("all_reduce", 2 * Ptot) + passes(3, Ptot)
t.near(part(with(t.with(m16, { zero = 1 })), "dp_comm").seconds / z1, 1, 1e-5,
  "zero 1: the all-reduce and the flat bucket's three passes")
t.near(part(with(t.with(m16, { zero = 1, zero_reduce = "allreduce" })), "dp_comm").seconds / z1,
  1, 1e-5, "zero 1 allreduce: the same")
t.raises(function() with(t.with(m16, { zero = 1, zero_reduce = "reduce_scatter" })) end,
  "zero_reduce reduce_scatter: DeepSpeed's ZeRO stage 1 reduces gradients by an all-reduce",
  "zero 1 reduce_scatter: DeepSpeed's stage 1 has none, refused", true)
-- ZeRO 0: engine.py's own allreduce_bucket, the same all-reduce, flatten
-- and copy back, and the average's mul_ between them: 3 passes.
-- Tolerance as above.
t.near(part(with(t.with(m16, { zero = 0 })), "dp_comm").seconds / z1, 1, 1e-5,
  "zero 0: the all-reduce and three passes")
-- bf16 at stage 1 with its default recipe runs BF16_Optimizer, whose flat
-- fp32 buffers go to the all-reduce as they are: the all-reduce alone
-- (its fp32 accumulation's copies are the stage's, train_stage.c).
t.near(part(with { zero = 1 }, "dp_comm").seconds / coll("all_reduce", 2 * Ptot), 1, 1e-5,
  "zero 1 under BF16_Optimizer: the all-reduce alone")
-- The megatron stack's ZeRO 1 (Megatron-Core's distributed optimizer)
-- reduce-scatters the same 2 Ptot bytes from its contiguous buffer, no
-- flat copy: each rank receives its shard.  Tolerance as above.
t.near(part(with { zero = 1, stack = "megatron" }, "dp_comm").seconds /
  coll("reduce_scatter", 2 * Ptot), 1, 1e-5, "megatron zero 1: a reduce-scatter alone")

-- The megatron stack's zero 2 (a distributed optimizer's reduce-scatter
-- straight from its gradient buffer): the collectives alone, per
-- micro-batch, no bucket passes (ds_bucket_time is the deepspeed
-- stack's).  Tolerance 1e-5 relative, as above.
local mg = with { stack = "megatron" }
t.near(part(mg, "dp_comm").seconds / (mbs * (L * coll("reduce_scatter", 2 * P) +
  coll("reduce_scatter", 2 * E))), 1, 1e-5, "megatron stack zero 2: no bucket passes")
