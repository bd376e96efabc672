-- DeepSpeed's stage 3 under full recompute releases, after a layer's
-- recompute forward, the weights whose backward lies beyond
-- stage3_max_reuse_distance (1e9) gathered elements, and gathers them
-- again for the backward (engine/train_stage.c reuse_regather).
-- Run with ./gpuplan run tests/lua/zero3_reuse.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(6)

local parts = t.parts

-- Llama 3 70B's layer (Hugging Face modules, forward order): q 8192^2 =
-- 67,108,864, k and v 8192 x 1024 = 8,388,608 each, o 67,108,864, gate,
-- up and down 8192 x 28672 = 234,881,024 each.  A weight's reuse
-- distance is twice its later weights: down 0, up 469.8M, gate 939.5M --
-- all under 1e9, kept; o 2 x 704.6M = 1.41e9 and q, k, v beyond it --
-- released.  The share re-gathered: (q + k + v + o) / the layer's
-- weights = 150,994,944 / 855,638,016 = 3/17 = 0.176471.
local q, kv, f = 8192 * 8192, 8192 * 1024, 8192 * 28672
local r = (2 * q + 2 * kv) / (2 * q + 2 * kv + 3 * f)
t.near(r, 3 / 17, 1e-12, "q, k, v and o: 3/17 of the layer")

-- 32 H100s, ZeRO-3 on the deepspeed stack, both overlaps off, one
-- micro-batch: with full recompute the backward's gathers grow by r of
-- each layer's gather (bandwidth-bound: the released weights' bytes; the
-- layer's 855.65M 16-bit weights as gp.comm prices them) against a run
-- without recompute, whose communication is otherwise the same.  1e-6:
-- the same collectives.
local P = gp.params("llama3-70b")
local ag = gp.comm { op = "all_gather", bytes = 2 * P.per_layer_max, gpus = 32,
                     system = "dgx-h100" }.time
local job = { model = "llama3-70b", gpu = "h100-sxm", gpus = 32, zero = 3, batch = 1,
              global_batch = 32, seq = 1024, method = "full", stack = "deepspeed", margin = 0 }
local full = parts(gp.train(t.with(job, { recompute = "full" })))
local none = parts(gp.train(t.with(job, { recompute = "none" })))
t.near(full.dp_comm - none.dp_comm, 80 * r * ag, 1e-6, "the released weights gathered again")

-- FSDP keeps its own rule (a checkpoint inside the unit: two gathers),
-- and a 7B layer (202M elements: every distance under 1e9) releases
-- nothing.
local fs = t.with(job, { stack = "hf", fsdp = "full_shard", overlap_param_gather = false,
                         overlap_grad_reduce = false })
t.near(parts(gp.train(t.with(fs, { recompute = "full" }))).dp_comm,
  parts(gp.train(t.with(fs, { recompute = "none" }))).dp_comm, 1e-9, "FSDP: none again")
local small = t.with(job, { model = "llama2-7b", gpus = 8 })
t.near(parts(gp.train(t.with(small, { recompute = "full" }))).dp_comm,
  parts(gp.train(t.with(small, { recompute = "none" }))).dp_comm, 1e-9, "a 7B layer: none again")

-- A layer with experts on the Hugging Face modules (transformers'
-- MixtralSparseMoeBlock): attention, the router's gate, then the experts
-- one at a time, each its w1, w3 and w2.  Mixtral 8x7B's layer: q and o
-- 4096^2 = 16,777,216, k and v 4096 x 1024 = 4,194,304, the gate 4096 x
-- 8 = 32,768, 24 expert matrices of 4096 x 14336 = 58,720,256.  In
-- reverse, expert matrix j (0 first: expert 7's w2) is kept while 2 j x
-- 58,720,256 < 1e9, j <= 8 (experts 7, 6, 5); the 15 of experts 4..0 and
-- the gate, o, v, k, q beyond: 15 x 58,720,256 + 32,768 + 41,943,040 =
-- 922,779,648 of 1,451,261,952 elements.
local fe = 4096 * 14336
local mq, mkv = 4096 * 4096, 4096 * 1024
local mr = (15 * fe + 4096 * 8 + 2 * mq + 2 * mkv) / (24 * fe + 4096 * 8 + 2 * mq + 2 * mkv)
t.near(mr, 922779648 / 1451261952, 1e-12, "Mixtral: experts 4..0, the gate and attention, 0.636")

-- On 32 H100s the backward's gathers grow by mr of each of the 32 layers'
-- gather.  The layer's gather as gp.comm prices its bytes in one
-- all-gather (the layer's 1.451G 16-bit weights); the engine issues the
-- experts' gather as a collective of its own and adds the flat buffers'
-- copies (train_stage.c per-layer collectives): 2% (measured 1.2%).
-- Before: 0 (the layers with experts kept every weight).
local MP = gp.params("mixtral-8x7b")
local mag = gp.comm { op = "all_gather", bytes = 2 * MP.per_layer_max, gpus = 32,
                      system = "dgx-h100" }.time
local mjob = t.with(job, { model = "mixtral-8x7b" })
local mfull = parts(gp.train(t.with(mjob, { recompute = "full" })))
local mnone = parts(gp.train(t.with(mjob, { recompute = "none" })))
t.near(mfull.dp_comm - mnone.dp_comm, 32 * mr * mag, 0.02,
  "Mixtral: the released experts and attention gathered again")
