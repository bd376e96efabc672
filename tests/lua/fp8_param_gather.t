-- fp8_param_gather (engine/train.c gather_bytes): the distributed
-- optimizer's once-a-step parameter all-gather moves the Transformer
-- Engine linears' weights in 1 byte (Megatron-LM's --fp8-param-gather,
-- "perform the param all-gather in fp8"; NeMo's fp8_params, whose
-- MegatronDistributedFusedAdam syncs the Float8Tensor buckets with
-- "param_sync_dtype=torch.uint8"); the embeddings and norms stay 2 bytes.
-- Run with ./gpuplan run tests/lua/fp8_param_gather.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(8)

local function part(r, name) return t.parts(r)[name] end  -- tap.lua's parts

-- Llama 3 8B on two DGX H100 nodes, TP 1, PP 1,
-- DP 16, ZeRO 1, no overlap: the whole gather is zero_gather, one
-- all-gather of the stage.  E = 8030261248 elements (gp.params total);
-- the linears: 32 layers x (q 4096 x 4096 + k, v 4096 x 1024 each + o
-- 4096 x 4096 + gate, up, down 3 x 4096 x 14336) = 32 x 218103808 =
-- 6979321856 elements; the rest (two 128256 x 4096 embeddings, 65 norms
-- of 4096) is E - L = 1050939392.  bf16 gather: 2 E bytes; fp8: 2 E - L
-- (L at 1 B, the rest at 2).  Tolerance 1e-9: the same collective model on
-- the same placement.
local job = { model = "llama3-8b", gpu = "h100-sxm", system = "dgx-h100", gpus = 16,
              tp = 1, pp = 1, zero = 1, method = "pretrain", stack = "megatron", seq = 2048,
              batch = 1, global_batch = 16, recompute = "none", precision = "fp8",
              overlap_grad_reduce = false, overlap_param_gather = false }
local E, L = 8030261248, 32 * (4096 * 4096 * 2 + 4096 * 1024 * 2 + 3 * 4096 * 14336)
t.is(gp.params("llama3-8b").total, E, "the stage's elements")
local function c(bytes)
  return gp.comm{ system = "dgx-h100", nodes = 2, op = "all_gather", bytes = bytes }.time
end
local off = gp.train(job)
local on = gp.train(t.with(job, { fp8_param_gather = true }))
t.near(part(off, "zero_gather"), c(2 * E), 1e-9, "off: the whole stage in bf16")
t.near(part(on, "zero_gather"), c(2 * E - L), 1e-9,
       "on: the linears in fp8, the embeddings and norms in bf16")
t.ok(on.step_s < off.step_s, "a smaller gather, a shorter step")
-- No distributed optimizer, no gather: the flag changes nothing.
t.near(gp.train(t.with(job, { zero = 0, fp8_param_gather = true })).step_s,
       gp.train(t.with(job, { zero = 0 })).step_s, 1e-12, "zero 0: nothing to gather")
t.raises(function() gp.train(t.with(job, { precision = "bf16", fp8_param_gather = true })) end,
         "train: fp8_param_gather needs precision fp8 (got bf16)",
         "a bf16 run is refused, named", true)
-- An unstated precision is the default's, bf16, and said so (it read
-- "got nil").
local nop = t.with(job, { fp8_param_gather = true })
nop.precision = nil
t.raises(function() gp.train(nop) end,
         "needs precision fp8 (got bf16, the default)",
         "an unstated precision is refused as the default's", true)
-- ZeRO 3 gathers each layer's weights in the forward and backward, not
-- the once-a-step gather the flag prices in 1 byte: refused, where it
-- changed nothing in silence.
t.raises(function() gp.train(t.with(job, { zero = 3, fp8_param_gather = true })) end,
         "train: fp8_param_gather with zero 3",
         "zero 3 is refused, named", true)
