-- gpuplan.version: the one reader of a release ("X.Y", "X.Y.Z", a leading
-- "v", a release candidate "rcN") behind every release rule (gpuplan.
-- predict.infer's vLLM, SGLang and TensorRT-LLM rules, gpuplan.infer's
-- vllm_version, gpuplan.comm's NCCL releases).
-- Run with ./gpuplan run tests/lua/version.t.
local t = require "tap"
local version = require "gpuplan.version"

-- The parts, as written
local p = version.parse("0.11.0rc2")
t.ok(p and p.major == 0 and p.minor == 11 and p.patch == 0 and p.rc == 2 and p.parts == 3
     and p.series == "0.11" and not p.plain, "0.11.0rc2: 0, 11, 0, rc 2, not plain")
p = version.parse("v0.5.0")
t.ok(p and p.major == 0 and p.minor == 5 and p.patch == 0 and p.rc == nil and not p.plain,
     "v0.5.0: a tag's v read, not plain")
p = version.parse("0.4")
t.ok(p and p.patch == 0 and p.parts == 2 and p.plain, "0.4: patch 0, two parts, plain")
p = version.parse("2.20.")
t.ok(p and p.parts == 2 and not p.plain, "2.20.: a trailing dot is text after the release")
t.ok(version.parse("0.4.2.post1").plain == false, "0.4.2.post1: read, not plain")
for _, bad in ipairs { "abc", "1", "", ".5", "v", "x1.2" } do
  t.is(version.parse(bad), nil, ("%q: no release"):format(bad))
end
t.is(version.parse(0.5), nil, "a number is not a release (0.10 would read 0.1)")

-- The number: MAJOR x 10000 + MINOR x 100 + PATCH (NCCL_VERSION_CODE's form)
t.is(version.number("0.4.2"), 402, "0.4.2 -> 402")
t.is(version.number("2.20.5"), 22005, "2.20.5 -> 22005")
t.is(version.number("2.20"), 22000, "2.20 -> 22000")
t.is(version.number("1.0.0rc4"), 10000, "a candidate's number is its release's")

-- The order: a candidate before its release, after the release before it
t.is(version.compare("0.11.0rc1", "0.11.0"), -1, "0.11.0rc1 < 0.11.0")
t.is(version.compare("0.11.0rc1", "0.10.2"), 1, "0.11.0rc1 > 0.10.2")
t.is(version.compare("0.11.0rc1", "0.11.0rc2"), -1, "rc1 < rc2")
t.is(version.compare("0.11", "0.11.0"), 0, "0.11 = 0.11.0")
t.is(version.compare("v0.6.0", "0.6.0"), 0, "v0.6.0 = 0.6.0")
t.is(version.compare("0.9.0", "0.10.0"), -1, "0.9.0 < 0.10.0 (numbers, not text)")
t.is(version.compare("abc", "0.1.0"), nil, "no release: nil")
t.is(version.before("0.13.9", "0.14.0"), true, "0.13.9 before 0.14.0")
t.is(version.before("0.14.0", "0.14.0"), false, "0.14.0 not before itself")
t.is(version.before("1.0.0rc4", "1.0.0"), true, "1.0.0rc4 before 1.0.0")
t.is(version.before(nil, "1.0.0"), nil, "nothing: nil")

-- A user's vllm_version stays exactly X.Y.Z (gp.infer refuses v and rc),
-- and NCCL's release exactly X.Y or X.Y.Z
local comm = require "gpuplan.comm"
t.is(comm.nccl_code("2.20.5"), 22005, "nccl 2.20.5: 22005")
t.is(comm.nccl_code("v2.20.5"), nil, "nccl v2.20.5: refused")
t.is(comm.nccl_code("2.20."), nil, "nccl 2.20.: refused as no release")
local infer = require "gpuplan.infer"
t.ok(infer.v0_sampler_kernels({ top_p = true }, "0.5.0") ~= nil, "v0 sampler 0.5.0: counted")
t.is(infer.v0_sampler_kernels({ top_p = true }, "0.5.0rc1"), nil, "v0 sampler 0.5.0rc1: refused")
t.is(infer.v0_sampler_kernels({ top_p = true }, "0.5"), nil, "v0 sampler 0.5: refused (X.Y.Z)")

t.done_testing()
