-- param_gather_chain (engine/train.c post_of): under Megatron's 1F1B
-- schedule (no interleaving) the distributed optimizer's overlapped
-- parameter all-gather runs stage by stage.  Megatron-LM's arguments.py
-- sets "args.align_param_gather = False" without interleaving, a stage
-- past the first keeps one bucket ("if pp_rank > 0: self.bucket_size =
-- None", distributed_data_parallel.py at core_v0.13.0), and the forward
-- pre-hook dispatches and waits on it when the stage's first forward
-- starts, after its input arrived: the gathers of stages 1 .. pp - 1 add
-- up along the warm-up.  Without the overlap the optimizer step gathers
-- every stage at once (the largest stage's gather).
-- Run with ./gpuplan run tests/lua/param_gather_chain.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(6)

local function part(r, name) return t.parts(r)[name] end  -- tap.lua's parts

-- Llama 3 8B on one DGX H100, TP 1, PP 4 (8 layers a stage), DP 2.
-- A layer: 218103808 linear elements (fp8_param_gather.t) + 2 norms of
-- 4096 = 218112000; stages 1 and 2: 8 of them, 1744896000; stage 0 adds
-- the 128256 x 4096 = 525336576 embedding (2270232576), stage 3 the
-- output layer and the final norm (2270236672).  bf16 gathers: 2 bytes an
-- element, over the 2 DP ranks (one node).
local job = { model = "llama3-8b", gpu = "h100-sxm", system = "dgx-h100", gpus = 8,
              tp = 1, pp = 4, zero = 1, method = "pretrain", stack = "megatron", seq = 2048,
              batch = 1, global_batch = 16, recompute = "none",
              overlap_grad_reduce = false, overlap_param_gather = false }
local function c(elems)
  return gp.comm{ system = "dgx-h100", gpus = 2, op = "all_gather", bytes = 2 * elems }.time
end
local L = 8 * (218103808 + 2 * 4096)
local G0, G1, G2, G3 = c(L + 525336576), c(L), c(L), c(L + 525336576 + 4096)
local off = gp.train(job)
local on = gp.train(t.with(job, { overlap_param_gather = true }))
-- Off: the step's one gather of every stage at once, the largest (stage
-- 3).  Tolerance 1e-5 relative: the same collective model; the engine's
-- count of the last stage may differ from the one above by a norm (4096
-- elements, 1.8e-6 of it).
t.near(part(off, "zero_gather"), G3, 1e-5, "off: the largest stage's gather")
-- On: stages 1-3 whole and one after another, plus stage 0's exposed
-- share (its first bucket and what its first forward does not hide, 0 ..
-- G0): G1 + G2 + G3 <= zero_gather <= G0 + G1 + G2 + G3.
local lo, hi = G1 + G2 + G3, G0 + G1 + G2 + G3
local z = part(on, "zero_gather")
t.ok(z >= lo * (1 - 1e-6) and z <= hi * (1 + 1e-6),
     string.format("on, 1F1B: the stages' gathers in a row (%.4g in [%.4g, %.4g])", z, lo, hi))
t.ok(on.step_s > off.step_s, "on, 1F1B: a longer step than the step's one gather")
-- Interleaved (vpp 2): align_param_gather stays on, every stage launches
-- its gathers at the step's start and hides them under its forwards: no
-- chain, no more than the largest stage's gather.
local ivon = gp.train(t.with(job, { vpp = 2, overlap_param_gather = true }))
t.ok(part(ivon, "zero_gather") <= G3 * (1 + 1e-6), "interleaved: no chain")
-- PP 1: one stage, nothing to chain; the overlap hides part of the gather.
local one = t.with(job, { pp = 1, global_batch = 16 })
t.ok(part(gp.train(t.with(one, { overlap_param_gather = true })), "zero_gather") <=
     part(gp.train(one), "zero_gather") * (1 + 1e-9), "pp 1: the overlap costs nothing")
-- ZeRO 0: no distributed optimizer, nothing gathered either way.
t.is(part(gp.train(t.with(job, { zero = 0, overlap_param_gather = true })), "zero_gather") or 0,
     0, "zero 0: no gather")
