-- The Megatron paper's ZeRO-3 row (Narayanan et al. 2021, DeepSpeed
-- stage 3 of March-April 2021, v0.3.12-16) prices its gathers and its
-- gradient reduce-scatter on the step's path: those releases call
-- torch.cuda.synchronize() at every submodule's parameter fetch
-- (stage3.py fetch_sub_module -> _synchronize_communication), which waits
-- for the reduction stream too (lua/gpuplan/predict/train.lua, the
-- megatron-lm profile's comment).
-- Run with ./gpuplan run tests/lua/megatron2021_zero3_sync.t.
local t = require "tap"
local gp = require "gpuplan"
local validate = require "gpuplan.validate"

t.plan(3)

local cat = gp.catalog()
local row
for _, c in ipairs(validate.read("validation/cases.json")) do
  if c.id == "megatron2021-t2-zero3-174.6b-384gpu" then row = c end
end
t.ok(row and row.parallel.zero == 3 and row.parallel.overlap_grad_reduce == nil,
  "the paper's ZeRO-3 row ships and states no overlap of its own")

local r = validate.predict(row, cat)
t.ok(r.predicted and r.defaults:find("stack profile=megatron-lm", 1, true)
  and r.defaults:find("overlap_param_gather=false (DeepSpeed v0.3.12-16", 1, true)
  and r.defaults:find("overlap_grad_reduce=false (DeepSpeed v0.3.12-16", 1, true),
  "the profile states both ZeRO-3 overlaps off, with the release's reason")

-- The same row stating overlap_grad_reduce true (a case's value wins over
-- the profile's) hides part of the reduce-scatter under the backward and
-- so predicts more TFLOP/s: the profile's false is what prices it on the
-- path.  An inequality, not a value: how much is hidden is the overlap
-- model's (tests/lua/deepspeed_zero3_path.t checks that identity).
local on = {}
for k, v in pairs(row) do on[k] = v end
on.parallel = {}
for k, v in pairs(row.parallel) do on.parallel[k] = v end
on.parallel.overlap_grad_reduce = true
local ron = validate.predict(on, cat)
t.ok(ron.predicted and ron.predicted > r.predicted,
  "overlapped, the reduce-scatter would hide: more TFLOP/s than the profile's")

