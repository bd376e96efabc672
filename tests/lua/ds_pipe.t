-- DeepSpeed's pipeline engine (the deepspeed stack with PP > 1):
-- its TrainSchedule moves an activation and a gradient one after the
-- other at every step, four blocking transfers a micro-batch where
-- Megatron's 1F1B batches each send with the opposite receive (two); and
-- under BF16_Optimizer it all-reduces the tied embedding's fp32 gradient
-- (_exec_reduce_tied_grads: "weight._hp_grad if self.bfloat16_enabled()").
-- Run with ./gpuplan run tests/lua/ds_pipe.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(4)

local function part(r, name) return t.parts(r)[name] end  -- tap.lua's parts

-- Llama 3.2 1B (tied embeddings) over two pipeline stages of one A100
-- node, TP 1, 8 micro-batches of one 2048-token sequence.  With TP 1
-- nothing is all-gathered after a receive (pp_gat 0), so the PP part is
-- the sends alone: 2 x sr a micro-batch on Megatron's schedule with its
-- overlap off, 2 x 2 sr on DeepSpeed's -- exactly twice, the same
-- transfer priced the same (1e-9 relative: the same sums).
local job = { model = "llama3.2-1b", gpu = "a100-sxm-80gb", gpus = 2, pp = 2, tp = 1,
              method = "full", seq = 2048, batch = 1, global_batch = 8, zero = 1 }
local ds = gp.train(t.with(job, { stack = "deepspeed" }))
local mg = gp.train(t.with(job, { stack = "megatron", overlap_p2p = false }))
t.ok(part(mg, "pp_comm") > 0, "Megatron's schedule prices its sends")
t.near(part(ds, "pp_comm"), 2 * part(mg, "pp_comm"), 1e-9,
       "DeepSpeed's schedule: each step's two transfers one after the other")

-- DP 1, so the DP part is the tied embedding's all-reduce alone between
-- the two end stages: 128256 x 2048 = 262.7M elements, fp32 (4 B) under
-- BF16_Optimizer (the deepspeed-bf16 recipe, the stack's bf16 default)
-- and the 16-bit reduce dtype (2 B) under mixed-16: twice the bytes.
-- Tolerance 1%: the collective's latency term does not double (about
-- 0.3% of the 2-byte all-reduce over NVLink).
local bf = gp.train(t.with(job, { stack = "deepspeed" }))
local m16 = gp.train(t.with(job, { stack = "deepspeed", recipe = "mixed-16" }))
t.is(bf.recipe, "deepspeed-bf16", "bf16 on DeepSpeed runs BF16_Optimizer")
t.near(part(bf, "dp_comm"), 2 * part(m16, "dp_comm"), 0.01,
       "BF16_Optimizer all-reduces the tied embedding's fp32 gradient")
