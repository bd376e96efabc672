-- Review of session 76's release reader and refusals: the fixes it made,
-- each a test that fails on the tree before it.
-- Run with ./gpuplan run tests/lua/review76.t.
local t = require "tap"
local gp = require "gpuplan"
local version = require "gpuplan.version"
local infer = require "gpuplan.infer"

-- 1. gpuplan.version.compare ordered by MAJOR x 10000 + MINOR x 100 +
-- PATCH, so a part of 100 or more ran into the one above: "0.4.100"
-- (400 + 100 = 500) equalled "0.5.0" (500), "1.100.0" (10000 + 10000)
-- equalled "2.0.0" (20000).  Now part by part.
t.is(version.compare("0.4.100", "0.5.0"), -1, "0.4.100 < 0.5.0 (patch 100 is no minor)")
t.is(version.compare("1.100.0", "2.0.0"), -1, "1.100.0 < 2.0.0 (minor 100 is no major)")
t.is(version.before("0.4.100", "0.5.0"), true, "... before() the same")

-- The edge cases every release rule reads (each the order a rule relies
-- on; the numbers are the parts as written):
t.is(version.compare("0.4.2", "0.4.10"), -1, "0.4.2 < 0.4.10 (patch 2 < 10, not text)")
t.is(version.compare("v0.6.3.post1", "0.6.3"), 0, "v0.6.3.post1 = 0.6.3 (v and .post1 read off)")
t.is(version.compare("2.19.3", "2.19"), 1, "2.19.3 > 2.19 (2.19 = 2.19.0)")
-- a date-like release (an NGC container's "25.04") is after every 0.x:
-- no "before 0.8.0" (V0) or "before 0.14.0" rule takes it
t.is(version.before("25.04", "0.8.0"), false, "25.04 not before 0.8.0")
t.is(version.before("25.04", "0.14.0"), false, "25.04 not before 0.14.0")
t.is(version.before(nil, "0.8.0"), nil, "no release: nil, never an order")

-- 2. The case reader's source.version is gpuplan.version's plain form (one
-- rule, where it held a pattern of its own): X.Y or X.Y.Z taken, a tag's
-- v, a candidate, a suffix, a trailing dot or nothing refused naming the
-- field.
local base = t.shipped_case("llamacpp-pr4766-codellama7b-f16-rtx4090-tg128")
for _, ok_ver in ipairs { "0.3", "0.3.0", "25.04" } do
  local c = t.copy(base); c.source.version = ok_ver
  local ok, e = t.read_case(c)
  t.ok(ok, ("source.version %q: read"):format(ok_ver))
  if not ok then t.diag(e) end
  t.is(version.plain(ok_ver), true, ("... and plain to gpuplan.version"):format(ok_ver))
end
for _, bad in ipairs { "v0.5.0", "0.11.0rc1", "0.6.3.post1", "2.20.", "" } do
  local c = t.copy(base); c.source.version = bad
  local ok, e = t.read_case(c)
  t.ok(not ok and e:find("field 'source.version': expected a release as \"0.3.0\" "
    .. "(major.minor[.patch]), got \"" .. bad .. "\"", 1, true) ~= nil,
    ("source.version %q: refused naming the field"):format(bad))
  t.is(version.plain(bad), false, ("... and not plain to gpuplan.version"):format(bad))
end

-- 3. vllm_version: a counted release written with a tag's v, an rc or a
-- suffix was told "counted for releases 0.4.2 to 0.6.3 only", which the
-- release it names is; now it is told the form, at the script's line.
local function v0(ver)
  return gp.infer { model = "llama3-8b", gpu = "h100-sxm", runtime = "vllm",
                    sampling = "top_p", vllm_version = ver }
end
t.raises_here(function() v0("v0.5.0") end, "vllm_version v0.5.0: the V0 sampler's kernels are "
  .. "counted for releases 0.4.2 to 0.6.3 only (X.Y.Z): give the release alone, 0.5.0 (no tag's "
  .. "v, rc or suffix)", "vllm_version v0.5.0: told the plain form, at the script's line")
t.raises_here(function() v0("0.6.3.post1") end, "give the release alone, 0.6.3",
  "vllm_version 0.6.3.post1: told 0.6.3")
-- a release outside the counted ones is told the range alone (0.9.0 is V1)
local ok, e = pcall(v0, "v0.9.0")
t.ok(not ok and tostring(e):find("0.6.3 only (X.Y.Z)", 1, true)
     and not tostring(e):find("give the release alone", 1, true),
     "vllm_version v0.9.0: the range, no plain form to give")
-- an empty string was printed as nothing ("vllm_version : the V0 ...")
t.raises_here(function() v0("") end, "vllm_version '': the V0 sampler's",
  "vllm_version '': shown as ''")

-- NCCL's release the same way: "v2.20.5" (the tag NCCL's repository
-- names it by) was told only the form; it is told the release, plain.
local comm = require "gpuplan.comm"
local _, why, unparsed = comm.nccl_code("v2.20.5")
t.is(why, "must be a release 'major.minor[.patch]' such as '2.20.5': give the release alone, "
  .. "2.20.5 (no tag's v, rc or suffix)", "nccl v2.20.5: told 2.20.5")
t.is(unparsed, true, "... still text that is no release (a usage error on the command line)")
_, why = comm.nccl_code("2.x")
t.is(why, "must be a release 'major.minor[.patch]' such as '2.20.5'", "nccl 2.x: the form alone")
-- a release past the integers said as written, not formatted as one
-- (string.format's %d raised "number has no integer representation")
_, why = comm.nccl_code("v2.99999999999999999999")
t.like(why, "give the release alone, 2.99999999999999999999 (no tag's v", "nccl v2.(20 nines): "
  .. "said as written", true)
-- a series ("2.19") is a release of two parts, read as its first patch
-- release by gp.comm (2.19.1, NCCL tags no 2.19.0): its code is 21900 =
-- 2 x 10000 + 19 x 100
t.is(comm.nccl_code("2.19"), 21900, "nccl 2.19: 21900")

-- 4. One test of a shared expert (gp.infer's refusal and default,
-- validate's vLLM 0.11.0 rule): DeepSeek-V3 has one (n_shared_experts 1),
-- Mixtral routed experts only, Llama 3 no MoE.
local cat = gp.catalog()
t.is(infer.has_shared_expert(cat.models["deepseek-v3"]), true, "deepseek-v3: a shared expert")
t.is(infer.has_shared_expert(cat.models["mixtral-8x7b"]), false, "mixtral-8x7b: none")
t.is(infer.has_shared_expert(cat.models["llama3-8b"]), false, "llama3-8b: none")
t.is(infer.has_shared_expert(nil), false, "no model: none, no error")

-- 5. A case file reaches cuda_graphs through the same refusal as --cuda-
-- graphs and the Lua key: a llama.cpp case stating workload.cuda_graphs
-- true on a layer split (pp 2) is not predicted, its reason gp.infer's
-- (no graph is priced under a split, engine/infer.c infer_step).
do
  local c = t.copy(base)
  c.hardware.gpus, c.parallel.pp, c.workload.cuda_graphs = 2, 2, true
  local ok, cases = t.read_case(c)
  t.ok(ok, "a case with cuda_graphs true and pp 2: read")
  local pred, why = require("gpuplan.predict.infer")(ok and cases[1] or c, cat)
  if not t.ok(pred == nil and tostring(why):find("cuda_graphs = true with pp 2: llama.cpp's "
      .. "one-token CUDA graph is priced on one GPU only", 1, true) ~= nil,
      "... not predicted, for gp.infer's reason") then
    t.diag(pred ~= nil and "predicted" or tostring(why))
  end
end

-- 6. gp.infer_plan's search past one GPU with cuda_graphs = true: its
-- own TP sizes were refused as a split the caller gave ("cuda_graphs =
-- true with tp 8"); now priced as the engine prices a split, so the plan
-- is the default's (cuda_graphs true there too).  Llama 3 70B int4 on RTX
-- 4090s: TP1 cannot hold ~35 GB of 4-bit weights in 24 GB, so a TP2
-- replica, as many GPUs either way.
do
  local job = { model = "llama3-70b", gpu = "rtx-4090", runtime = "llama.cpp", weights = "int4",
                target = 500 }
  local base_plan = gp.infer_plan(job)
  local okp, p = pcall(gp.infer_plan, t.with(job, { cuda_graphs = true }))
  if not t.ok(okp, "infer_plan with cuda_graphs = true: searched") then t.diag(p) end
  t.is(okp and p.gpus, base_plan.gpus, "... the default's GPU count")
  t.is(okp and p.layout, base_plan.layout, "... and its replica")
  -- a split the caller gives is still refused, naming it
  t.raises_here(function() gp.infer_plan(t.with(job, { cuda_graphs = true, tp = 2 })) end,
    "cuda_graphs = true with tp 2", "infer_plan with cuda_graphs = true and tp 2: refused")
end

t.done_testing()
