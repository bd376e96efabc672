-- Which step part holds which FSDP collective (engine/train_stage.c
-- kind_block, ends_block, fsdp_copies).  Run with ./gpuplan run
-- tests/lua/fsdp_part_split.t.
--
-- Under full_shard a layer is gathered twice a micro-batch, for its
-- forward and again for its backward, and its gradients are reduce-
-- scattered once.  zero_gather holds the forward's gathers alone; the
-- backward's gathers run beside the reduce-scatters, under the backward
-- (--overlap-grad-reduce), and are booked with them in dp_comm.  So with
-- fp32 reduction (torchtitan's MixedPrecisionPolicy reduce_dtype) dp_comm
-- holds a gather and a reduce-scatter of twice the gather's bytes a
-- layer, zero_gather one gather: about 3 to 1 in seconds for the same
-- ring rate, not a reduce-scatter priced slower than a gather.
local t = require "tap"
local gp = require "gpuplan"

t.plan(4)

local part = t.step_part

-- Llama 3 8B on two DGX A100 nodes (16 ranks, 8 x 200 Gb/s InfiniBand a
-- node), torchtitan's FSDP2 on PyTorch modules (stack hf, fsdp_version 2),
-- one micro-batch of 2048 tokens a rank, no recompute, every overlap off
-- (nothing hidden: each part's seconds are its collectives and copies
-- whole), gradients reduced in fp32.
local r = gp.train { model = "llama3-8b", gpu = "a100-sxm-80gb", system = "dgx-a100", gpus = 16,
  method = "pretrain", stack = "hf", fsdp = "full_shard", fsdp_version = 2, grad_reduce = "fp32",
  seq = 2048, batch = 1, global_batch = 16, recompute = "none",
  overlap_grad_reduce = false, overlap_param_gather = false }

-- The pieces, each priced as the engine prices it: a collective on the
-- same 16 ranks (gp.comm, nccl-tests' sizes: the whole buffer), and a
-- memory-bound pass of b bytes at the A100's streaming rate (the
-- roofline's op).  A layer holds Pl = 218,112,000 parameters (h 4096:
-- q 4096 x 4096, k and v 1024 x 4096 each, o 4096 x 4096, the gated MLP
-- 3 x 4096 x 14336, two RMSNorms of 4096: gp.params' per_layer_max); the
-- ends, FSDP2's root, the embedding E and the untied output layer H of
-- 525,336,576 each.
local P = gp.params("llama3-8b")
local Pl, E, H, L = P.per_layer_max, P.embedding, P.lm_head, 32
local function c(op, bytes)
  return gp.comm { op = op, bytes = bytes, gpus = 16, system = "dgx-a100" }.time
end
local function pass(bytes)
  return gp.roofline { gpu = "a100-sxm-80gb", op = { flop = 0, bytes = bytes } }.op.time
end
t.is(Pl, 218112000, "llama3-8b: 218,112,000 parameters a layer")

-- A reduce-scatter and an all-gather of the same bytes over the same
-- ranks move the same data on the ring ((n-1)/n of the buffer through
-- each rank): the same seconds.  Here 4 Pl bytes, one layer's fp32
-- gradients.  Tolerance 1e-12 relative: the same arithmetic.
t.near(c("reduce_scatter", 4 * Pl), c("all_gather", 4 * Pl), 1e-12,
  "reduce-scatter and all-gather of one layer's fp32 gradient bytes: the same time")

-- zero_gather: each layer's forward gather of its 2 Pl bf16 bytes and
-- FSDP2's copy-out of it (foreach_all_gather_copy_out: read and write
-- 2 B a weight, pass(4 Pl)), and the ends' gathers with their copy-outs
-- (the root is gathered once a micro-batch and kept to the backward).
--   zero_gather = L (AG(2 Pl) + pass(4 Pl)) + AG(2E) + pass(4E) + AG(2H) + pass(4H)
-- dp_comm: each layer's backward gather with its copy-out, its fp32
-- reduce-scatter of 4 Pl bytes and FSDP2's copy-in (read the bf16
-- gradient, write fp32: pass(6 Pl)), and the ends' reduce-scatters and
-- copy-ins (no second gather of the ends).
--   dp_comm = L (AG(2 Pl) + pass(4 Pl) + RS(4 Pl) + pass(6 Pl))
--             + RS(4E) + pass(6E) + RS(4H) + pass(6H)
-- Tolerance 1e-5 relative: the roofline's op carries an eager launch
-- where the step's passes carry a graph launch, a fraction of a
-- microsecond apart on each of the passes (about 0.1 us of 0.27 s here).
local zg = L * (c("all_gather", 2 * Pl) + pass(4 * Pl)) +
  c("all_gather", 2 * E) + pass(4 * E) + c("all_gather", 2 * H) + pass(4 * H)
local dp = L * (c("all_gather", 2 * Pl) + pass(4 * Pl) + c("reduce_scatter", 4 * Pl) + pass(6 * Pl)) +
  c("reduce_scatter", 4 * E) + pass(6 * E) + c("reduce_scatter", 4 * H) + pass(6 * H)
t.near(part(r, "zero_gather").seconds / zg, 1, 1e-5,
  "zero_gather: the forward's gathers and copy-outs alone")
t.near(part(r, "dp_comm").seconds / dp, 1, 1e-5,
  "dp_comm: the backward's gathers with the fp32 reduce-scatters and their copies")
