-- Delayed scaling's amax reduction (engine/train_stage.c amax_reduce):
-- Transformer Engine reduces the rank's amaxes over Megatron-Core's
-- fp8_group (the stage's TP x DP x CP ranks) once when a chunk's
-- fp8_autocast exits and once in the backward of its first fp8 module,
-- each a blocking all_reduce (async_op=False).  Current and block
-- scaling run none.  Priced as tp_comm seconds.
-- Run with ./gpuplan run tests/lua/fp8_amax_reduce.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(4)

local function part(r, name) return t.parts(r)[name] end  -- tap.lua's parts

-- Llama 3 8B on two DGX H100 nodes, TP 1, PP 1, DP 16: no TP collective,
-- so tp_comm is the amax reduction alone.  Global batch 64 over DP 16 is
-- 4 micro-batches; each runs one chunk forward and backward: 2 all-reduces
-- of 32 layers x 4 linears x 5 amaxes x 4 B = 2560 B over the 16 ranks
-- (2 nodes, 8 a node) -- 4 x 2 x t, t what gp.comm prices for that
-- collective (NCCL's tree with LL, about 26 us).  Tolerance 1e-9: the same
-- collective model on the same placement.
local job = { model = "llama3-8b", gpu = "h100-sxm", gpus = 16, tp = 1, pp = 1,
              method = "pretrain", stack = "megatron", seq = 8192, batch = 1,
              global_batch = 64, recompute = "none", precision = "fp8" }
local c16 = gp.comm{ system = "dgx-h100", nodes = 2, bytes = 2560, op = "all_reduce" }
local d = gp.train(t.with(job, { fp8_scaling = "delayed" }))
t.near(part(d, "tp_comm"), 4 * 2 * c16.time, 1e-9, "delayed: 2 amax all-reduces a micro-batch")
local cur = gp.train(t.with(job, { fp8_scaling = "current" }))
t.is(part(cur, "tp_comm"), 0.0, "current scaling reduces no amax history")
local bf = gp.train(t.with(job, { precision = "bf16" }))
t.is(part(bf, "tp_comm"), 0.0, "bf16: no fp8 recipe, no reduction")

-- Interleaved: 32 GPUs, PP 2 with 2 chunks a stage, DP 16.  A stage holds
-- 16 layers: 16 x 4 x 5 x 4 = 1280 B over its 16 DP ranks (2 nodes).
-- Global batch 64 / DP 16 = 4 micro-batches, each 2 chunks x 2 passes:
-- 4 x 4 x t.  Same tolerance.
local pj = t.with(job, { gpus = 32, pp = 2, vpp = 2 })
local c8 = gp.comm{ system = "dgx-h100", nodes = 2, bytes = 1280, op = "all_reduce" }
local p = gp.train(t.with(pj, { fp8_scaling = "delayed" }))
t.near(part(p, "tp_comm"), 4 * 4 * c8.time, 1e-9, "interleaved: one per chunk per pass")
