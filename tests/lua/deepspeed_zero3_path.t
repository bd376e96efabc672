-- DeepSpeed ZeRO-3 (the train predictor's deepspeed profile) prices its
-- hook-issued gathers and reduce-scatters on the step's path, as gp.train's
-- own deepspeed stack default does: DeepSpeed's DeepCompile benchmark
-- measures a step of computation plus traffic (lua/gpuplan/predict/
-- train.lua, the profile's comment).  Below stage 3 overlap_comm stays
-- DeepSpeed's default, off.
-- Run with ./gpuplan run tests/lua/deepspeed_zero3_path.t.
local t = require "tap"
local gp = require "gpuplan"
local validate = require "gpuplan.validate"

t.plan(6)

local cat = gp.catalog()
local row
for _, c in ipairs(validate.read("validation/cases.json")) do
  if c.id == "dscompile-h100x32-llama3-70b-zero3-mb1-s1024" then row = c end
end
t.ok(row and row.parallel.zero == 3, "DeepSpeed's 32-GPU ZeRO-3 row ships")
local r = validate.predict(row, cat)
t.ok(r.predicted and r.defaults:find("stack profile=deepspeed", 1, true)
  and r.defaults:find("overlap_param_gather=false (DeepSpeed stage 3", 1, true)
  and r.defaults:find("overlap_grad_reduce=false (DeepSpeed stage 3", 1, true),
  "the profile states both ZeRO-3 overlaps off, with why")

-- The same job through gp.train: the profile's prediction is the job with
-- both overlaps off (identity, to rounding), and gp.train's deepspeed
-- default is that job too.
local job = {
  model = "llama3-70b", gpu = "h100-sxm", gpus = 32, zero = 3, batch = 1,
  global_batch = 32, seq = 1024, recompute = "full", precision = "bf16",
  method = "full", stack = "deepspeed", kernels = "eager", margin = 0,
  attn_kernel = "efficient",   -- the row's workload.attn_kernel
}
local function run(extra)
  local o = {}
  for k, v in pairs(job) do o[k] = v end
  for k, v in pairs(extra or {}) do o[k] = v end
  return gp.train(o)
end
local off = run { overlap_param_gather = false, overlap_grad_reduce = false }
local on = run { overlap_param_gather = true, overlap_grad_reduce = true }
local dflt = run()
local function hidden(res)
  local h = 0
  for _, p in ipairs(res.parts) do h = h + (p.hidden or 0) end
  return h
end
-- The catalog's llama3-70b is the row's model (80 x 8192, 64/8 heads,
-- 28672 SwiGLU, vocab 128256), so the values agree to rounding; 1e-9.
t.near(r.predicted, off.tokens_per_s_gpu, 1e-9, "the row is priced with both overlaps off")
t.near(dflt.step_s, off.step_s, 1e-12, "gp.train's deepspeed default is the same job")
-- Nothing is hidden off; on, each collective's hidden part h costs only
-- the slowdown of the compute beside it (OVERLAP_SLOWDOWN 0.189, arXiv
-- 2507.03114), so taking the overlap away adds (1 - 0.189) h a step (one
-- micro-batch a step here).  Tolerance 1e-9: the same terms summed.
t.is(hidden(off), 0, "off: no hidden seconds")
t.near(off.step_s - on.step_s, (1 - 0.189) * hidden(on), 1e-9,
  "off - on = (1 - 0.189) x the seconds on hid")
