-- DeepSpeed's DeepCompile benchmark runs PyTorch FSDP through Hugging Face
-- Accelerate as its baseline, so its FSDP rows' text names DeepSpeed too:
-- the train predictor's accelerate-fsdp profile (stack hf, the Hugging
-- Face modules' eager kernels, Accelerate's bf16 reduce_dtype, its
-- backward's traffic on the path as DeepSpeed ZeRO-3's) must win over the DeepSpeed
-- one for them, and the ZeRO3 rows of the same source keep the DeepSpeed
-- profile.
-- Run with ./gpuplan run tests/lua/accelerate_fsdp_profile.t.
local t = require "tap"
local gp = require "gpuplan"
local validate = require "gpuplan.validate"

t.plan(5)

local cat = gp.catalog()
local rows = {}
for _, c in ipairs(validate.read("validation/cases.json")) do rows[c.id] = c end
local fsdp = rows["dscompile-h100x32-llama3-70b-fsdp-mb1-s1024"]
local z3 = rows["dscompile-h100x32-llama3-70b-zero3-mb1-s1024"]
t.ok(fsdp and z3 and fsdp.parallel.fsdp == "full_shard", "both rows of the benchmark ship")
local rf = validate.predict(fsdp, cat)
t.ok(rf.predicted and rf.defaults:find("stack profile=accelerate-fsdp", 1, true)
  and rf.defaults:find("stack=hf (", 1, true)
  and rf.defaults:find("grad_reduce=bf16 (", 1, true)
  and rf.defaults:find("kernels=eager (", 1, true),
  "the FSDP row: Accelerate's FSDP on the Hugging Face modules, bf16 reduce")
t.ok(not rf.defaults:find("stack=deepspeed", 1, true), "and not DeepSpeed's stack")
-- FSDP1's forward gathers run under the forward (issued from each unit's
-- pre-forward hook while the previous unit's kernels run); the backward's
-- gathers and reduce-scatters are on the path, as DeepSpeed ZeRO-3's.
t.ok(rf.defaults:find("overlap_param_gather=true (FSDP's forward gathers", 1, true)
  and rf.defaults:find("overlap_grad_reduce=false (Accelerate", 1, true),
  "Accelerate's FSDP: forward gathers hidden, the backward's traffic on the path")
local rz = validate.predict(z3, cat)
t.ok(rz.predicted and rz.defaults:find("stack profile=deepspeed", 1, true),
  "the ZeRO3 row of the same source keeps the DeepSpeed profile")
