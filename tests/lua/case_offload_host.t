-- A train case states the offloaded optimizer's host step as its source
-- runs it: parallel.delayed_update (ZeRO-Offload's one-step delayed
-- update) and parallel.host_threads (the CPU threads a rank steps it on),
-- gp.train's options of those names (validation/SCHEMA.md).  Before,
-- the case format had neither, so a published DPU run could not say so
-- and was priced with the optimizer's host step on the critical path.
-- Run with ./gpuplan run tests/lua/case_offload_host.t.
local t = require "tap"
local gp = require "gpuplan"
local cjson = require "cjson"
local validate = require "gpuplan.validate"
local predict = require "gpuplan.predict.train"
local train = require "gpuplan.train"

t.plan(10)

-- The DeepSpeed ZeroFlow blog's Qwen2.5-3B row: ZeRO-2, optimizer on the
-- CPU, 2 A100-40GB.
local case = assert(t.shipped_case("dsblog-zenflow-qwen25-3b-a100-40g-2g-zero2-offload-bindcores"))
t.is(case.parallel.offload, "optimizer", "the row offloads the optimizer")
local par = validate.case_schema.fields.parallel.fields
t.ok(par.delayed_update ~= nil and par.host_threads ~= nil,
  "parallel.delayed_update and parallel.host_threads are case fields")
-- host_threads is a count: 0 threads step nothing
t.ok(not pcall(par.host_threads.check, 0, "parallel.host_threads"),
  "parallel.host_threads 0 is refused")

-- and follows gp.train's declaration of host_threads (one place for the
-- values both accept): declared with a range of 1..4, a case's 5 is
-- refused where the count() beside it took it
do
  local options = require "gpuplan.options"
  local d = options.get("host_threads")
  local saved = d.range
  d.range = { 1, 4 }
  package.loaded["gpuplan.validate"] = nil
  local ok, v = pcall(require, "gpuplan.validate")
  d.range = saved
  package.loaded["gpuplan.validate"] = validate
  local f = ok and v.case_schema.fields.parallel.fields.host_threads
  local path = "parallel.host_threads"
  t.ok(f and pcall(f.check, 4, path) and not pcall(f.check, 5, path),
    "parallel.host_threads takes the option's declared range")
end

-- The predictor hands each on as gp.train's option (watched at the call).
local orig, handed = train.train, nil
train.train = function(o) handed = { o.delayed_update, o.host_threads }; return orig(o) end
local cat = gp.catalog()
local plain = predict(case, cat)
t.is(handed[1] == nil and handed[2] == nil, true, "unstated: neither option handed on")
local dpu_case = cjson.decode(cjson.encode(case))
dpu_case.parallel.delayed_update = true
local dpu = predict(dpu_case, cat)
t.is(handed[1], true, "delayed_update handed on")
local one_case = cjson.decode(cjson.encode(case))
one_case.parallel.host_threads = 1
local one = predict(one_case, cat)
t.is(handed[2], 1, "host_threads handed on")
train.train = orig

-- Their effect is gp.train's: the delayed update takes the host step off
-- the critical path (the step no longer waits for the CPU's Adam and its
-- copies), so the measured rate is predicted faster, never slower; one
-- thread a rank steps the optimizer slower than the node's cores shared
-- by the two ranks (the host's DRAM bound alone), so the rate falls.
-- (the row's metric is a rate, tokens_per_s_per_gpu, or a step time:
-- compared through the step each prediction priced)
local function step(p) return p.job and tonumber(p.detail:match("^step ([%d.e+-]+) s")) end
t.ok(step(dpu) < step(plain),
  string.format("delayed update: a shorter step (%.4g -> %.4g s)", step(plain), step(dpu)))
t.ok(step(one) > step(plain),
  string.format("one host thread: a longer step (%.4g -> %.4g s)", step(plain), step(one)))
-- and the validated row itself is unchanged: the shipped case states neither
t.is(case.parallel.delayed_update, nil, "the shipped row states no delayed update")
