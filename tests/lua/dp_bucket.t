-- dp_bucket (engine/train.c dp_bucketed): the once-a-step data-parallel
-- gradient reduce-scatter and the distributed optimizer's parameter
-- all-gather run one collective a bucket of dp_bucket elements, as apex's
-- DistributedFusedAdam (3c19f106) reduce-scatters each bucket in
-- _start_bucket_grad_sync and all-gathers each in step(); 0 or absent: the
-- stage's in one message.
-- Run with ./gpuplan run tests/lua/dp_bucket.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(8)

local function part(r, name) return t.parts(r)[name] end  -- tap.lua's parts

-- Llama 3 8B on two DGX A100 nodes, TP 1, PP 1, DP 16, ZeRO 1, neither
-- overlap: the whole reduction is dp_comm and the whole gather
-- zero_gather.  E = 8030261248 elements (gp.params total), fp32 gradient
-- reduction (4 B), bf16 gather (2 B).  B = 26214400 (apex's bucket_cap_mb
-- 100 over 4 B): floor(E / B) = 306 full buckets and E - 306 B = 8650848
-- elements left, each priced as gp.comm prices that collective on the 16
-- ranks of 2 nodes.  Tolerance 1e-9: the same collective model on the same
-- placement.
local job = { model = "llama3-8b", gpu = "a100-sxm-80gb", system = "dgx-a100", gpus = 16,
              tp = 1, pp = 1, zero = 1, method = "pretrain", stack = "megatron", seq = 2048,
              batch = 1, global_batch = 16, recompute = "none", grad_reduce = "fp32",
              overlap_grad_reduce = false, overlap_param_gather = false }
local E, B = 8030261248, 26214400
t.is(gp.params("llama3-8b").total, E, "the stage's elements")
local full = math.floor(E / B)
local rest = E - full * B
local function c(op, bytes)
  return gp.comm{ system = "dgx-a100", nodes = 2, op = op, bytes = bytes }.time
end
local one = gp.train(job)
local b = gp.train(t.with(job, { dp_bucket = B }))
t.near(part(one, "dp_comm"), c("reduce_scatter", E * 4), 1e-9,
       "no bucket: one reduce-scatter of the whole stage")
t.near(part(b, "dp_comm"), full * c("reduce_scatter", B * 4) + c("reduce_scatter", rest * 4),
       1e-9, "306 bucket reduce-scatters and the rest")
t.near(part(b, "zero_gather"), full * c("all_gather", B * 2) + c("all_gather", rest * 2),
       1e-9, "306 bucket all-gathers of the bf16 parameters and the rest")
-- A bucket as large as the stage is one message; 0 is none.
t.near(gp.train(t.with(job, { dp_bucket = 2 * E })).step_s, one.step_s, 1e-12,
       "a bucket larger than the stage: one message")
t.near(gp.train(t.with(job, { dp_bucket = 0 })).step_s, one.step_s, 1e-12, "0: one message")
t.raises(function() gp.train(t.with(job, { dp_bucket = -1 })) end,
         "train: dp_bucket must be a whole number 0..1000000000000000 (got -1)",
         "a negative bucket is refused, named", true)
-- A bucket is a whole number of elements: half an element priced
-- 2 x 8030261248 collectives a step (a 1.2e6 s step) where it is no
-- bucket apex can build.
t.raises(function() gp.train(t.with(job, { dp_bucket = 0.5 })) end,
         "train: dp_bucket must be a whole number 0..1000000000000000 (got 0.5)",
         "a fraction of an element is refused, named", true)
