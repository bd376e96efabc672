-- Userbuffers' split GEMMs (engine/train_layer.c ub_chunks) and
-- tp_overlap_aggregate.  Transformer Engine's TP overlap (v1.10,
-- comm_gemm_overlap.h) runs a ring-exchange all-gather's GEMM as one GEMM
-- per rank's chunk (split_gemm_overlap_ag: tp GEMMs of m / tp rows; with
-- "aggregate", tp / 2 of 2 m / tp) and a pipelined reduce-scatter's as
-- num_splits GEMMs (split_gemm_overlap_rs, 4 by initialize_ub's default):
-- qkv and fc1 forward and proj and fc2 dgrad are ring exchanges, proj and
-- fc2 forward pipelined, the rest bulk (one GEMM).  Each chunk reads the
-- whole weight; the chunks share the SMs (three streams): one roofline op
-- of count c, m / c rows, c weights' bytes.
-- Run with ./gpuplan run tests/lua/tp_overlap_aggregate.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(9)

-- Llama 3.1 70B's layer on one DGX H100 (TP 8, SP), one 8192-token
-- micro-batch in bf16 (no fp8 casts in the GEMM ops), 4 layers.
local m = { name = "llama31-70b-4l", layers = 4, hidden = 8192, heads = 64, kv_heads = 8,
            head_dim = 128, ffn_hidden = 28672, ffn_gated = true, vocab = 128256,
            tied_embeddings = false }
local job = { model = m, gpu = "h100-sxm", gpus = 8, tp = 8, pp = 1, sp = true, batch = 1,
              seq = 8192, global_batch = 1, stack = "megatron", precision = "bf16",
              recompute = "none", method = "pretrain", tp_overlap = true }
local ub = gp.train(job)
local one = gp.train(t.with(job, { tp_overlap = false }))
local agg = gp.train(t.with(job, { tp_overlap_aggregate = true }))

local function part(r, name)
  for _, p in ipairs(r.parts) do if p.name == name then return p end end
end
-- The roofline of one GEMM: M rows gathered (8192 tokens), N x K the
-- rank's weight in 2 B, the input and output once, as c chunks of M / c
-- rows (count c, the weight read c times).
local M = 8192
local function g(n, k, c)
  return gp.roofline { gpu = "h100-sxm", op = { flop = 2 * M * n * k,
    bytes = c * n * k * 2 + (M * k + M * n) * 2, m = M / c, n = n, k = k, count = c,
    prec = "bf16" } }.op.time
end
local function x(n, k, c) return g(n, k, c) - g(n, k, 1) end
-- The rank's GEMMs (N x K): qkv 1280 x 8192 ((64 + 2 x 8) x 128 / 8),
-- proj 8192 x 1024 (dgrad 1024 x 8192), fc1 7168 x 8192 (2 x 28672 / 8),
-- fc2 8192 x 3584 (dgrad 3584 x 8192).  Ring exchanges (qkv, fc1
-- forward; proj, fc2 dgrad) in tp = 8 chunks, the pipelined reduce-
-- scatters (proj, fc2 forward) in 4; the bulk ones (qkv, fc1 dgrad and
-- the wgrads) one GEMM.  A layer adds their sum, 4 layers x 1 micro-batch.
local function extra(ring)
  return x(1280, 8192, ring) + x(7168, 8192, ring) + x(8192, 1024, 4) + x(8192, 3584, 4) +
    x(1024, 8192, ring) + x(3584, 8192, ring)
end
local d = part(ub, "compute").seconds - part(one, "compute").seconds
t.ok(extra(8) > 0, "the split GEMMs are slower than one")
-- The same roofline terms summed in another order: 1e-9 relative.
t.ok(math.abs(d / (4 * extra(8)) - 1) < 1e-9, "compute grows by the split GEMMs' time")
-- The per-op listing keeps the one GEMM (the phase's layers serve both
-- overlaps): qkv's forward is the unsplit roofline, 1e-12.
t.ok(math.abs(t.op(ub, "qkv").fwd / g(1280, 8192, 1) - 1) < 1e-12,
     "the op list prices one GEMM")
-- aggregate: tp / 2 = 4 chunks of 2048 rows on the ring exchanges, the
-- pipelined ones unchanged.
local da = part(agg, "compute").seconds - part(one, "compute").seconds
t.ok(math.abs(da / (4 * extra(4)) - 1) < 1e-9, "aggregate: the ring exchanges in tp / 2 GEMMs")
t.ok(da < d, "fewer, larger chunks cost less")
-- Without SP there is no Userbuffers path (TE's ub_overlap flags all
-- need sequence_parallel): tp_overlap adds no compute.  1e-12 relative.
local nsp = gp.train(t.with(job, { sp = false, tp_overlap = false }))
local nsp_ub = gp.train(t.with(job, { sp = false }))
t.ok(math.abs(part(nsp_ub, "compute").seconds - part(nsp, "compute").seconds) <
     1e-12 * part(nsp, "compute").seconds, "no SP: no split")

-- Refusals: without Userbuffers or SP there is no ring exchange.
local function err(o)
  local ok, e = pcall(gp.train, t.with(job, o))
  return ok and "" or tostring(e)
end
t.like(err { tp_overlap_aggregate = true, tp_overlap = false },
       "tp_overlap_aggregate is a setting of the TP overlap's Userbuffers: it needs tp_overlap",
       "without tp_overlap refused")
t.like(err { tp_overlap_aggregate = true, sp = false },
       "tp_overlap_aggregate splits sequence parallelism's gathered GEMMs: it needs sp",
       "without sp refused")
-- One TP rank: no ring to exchange over (and Megatron turns SP off at
-- tp 1); it priced as nothing, in silence.
t.like(err { tp_overlap_aggregate = true, tp = 1, gpus = 1 },
       "it needs tp > 1 (got tp 1)", "tp 1 refused", true)
