-- scripts/check_claims.lua: the verdict and the likely cause of every seed
-- claim, plus the causes the seed claims do not exercise. Tolerance for
-- "agree" is the script's 3% (marketing rounding); the ratios below are
-- derived by hand from the catalog figures.
local t = require "tap"
local gp = require "gpuplan"

local C = assert(loadfile("scripts/check_claims.lua"))("--lib")
local cat = gp.catalog { dirs = { "catalog" } }
local claims = C.load_claims("scripts/claims/seed_guides.lua")
local rows = C.check(cat, claims)
t.is(#rows, 22, "22 seed claims checked")

local by = {}
for _, r in ipairs(rows) do by[r.gpu .. " " .. r.field] = r end

local function pin(key, verdict, cause, name)
  local r = by[key]
  if not t.ok(r ~= nil, key .. " present") then return end
  t.is(r.verdict, verdict, name .. ": " .. verdict)
  if cause then t.like(r.cause, cause, name .. ": cause", true) end
end

-- A100 80GB: "2.0 TB/s" vs 2.039: ratio 0.981, inside 3% -> rounding.
pin("a100-sxm-80gb mem_bw", "agree", "rounding", "A100 2.0 TB/s")
t.near(by["a100-sxm-80gb mem_bw"].ratio, 2.0 / 2.039, 1e-9, "A100 bw ratio 2.0/2.039")
pin("a100-sxm-80gb peak.bf16", "agree", nil, "A100 312 bf16")
-- 600 GB/s printed = 2 x 300 per direction.
pin("a100-sxm-80gb scaleup.bw", "agree", "bidirectional", "A100 NVLink 600")
pin("a100-sxm-80gb memory", "agree", "binary", "A100 '80GB' = 80 GiB")
pin("a800-sxm-80gb scaleup.bw", "agree", "bidirectional", "A800 NVLink 400")
pin("h100-sxm mem_bw", "agree", nil, "H100 3.35 TB/s")
pin("h100-sxm peak.bf16", "agree", nil, "H100 989")
pin("h100-sxm scaleup.bw", "agree", "bidirectional", "H100 NVLink 900")
pin("h100-sxm memory", "agree", "binary", "H100 '80GB' = 80 GiB")
pin("h800-sxm scaleup.bw", "agree", "bidirectional", "H800 NVLink 400")
pin("h20 memory", "agree", "binary", "H20 '96GB' = 96 GiB")
pin("h20 mem_bw", "agree", nil, "H20 4.0 TB/s")
-- 74 = the H20 tf32 peak; 74/148 = 0.5.
pin("h20 peak.bf16", "disagree", "TF32 vs BF16", "H20 bf16 74")
t.near(by["h20 peak.bf16"].ratio, 0.5, 1e-9, "H20 74/148 = 0.5")
pin("h20 scaleup.bw", "agree", "bidirectional", "H20 NVLink 900")
-- 192 / 180 = 1.067: not rounding; the launch figure.
pin("b200 memory", "disagree", "launch vs shipping", "B200 192 GB")
-- 8.0 / 7.67 = 1.043: outside 3%; the launch part's 8192-bit bus.
pin("b200 mem_bw", "disagree", "launch vs shipping", "B200 8.0 TB/s")
t.near(by["b200 mem_bw"].ratio, 8.0 / 7.67, 1e-9, "B200 bw ratio 8.0/7.67")
-- 4.5 / 2.25 = 2: the sparse figure.
pin("b200 peak.bf16", "disagree", "sparse vs dense", "B200 4.5 PF")
t.near(by["b200 peak.bf16"].ratio, 2, 1e-9, "B200 4.5/2.25 = 2")
pin("b200 scaleup.bw", "agree", "bidirectional", "B200 NVLink 1800")
pin("h200-sxm memory", "agree", "binary", "H200 '141GB' = 141 GiB")
pin("h200-sxm mem_bw", "agree", nil, "H200 4.8 TB/s")
-- 78 = 4 x 19.5 (A100 fp32): the vector FP16 rate.
pin("a100-sxm-80gb peak.fp16", "disagree", "non-tensor", "A100 fp16 78")
t.like(by["a100-sxm-80gb peak.fp16"].cause, "4 x the fp32", "A100 78 = 4 x fp32", true)
-- 495 vs 989: 0.5005; equals tf32 494.5 and is half the dense peak
-- (1979 sparse -> 989 dense -> 495): both causes are named.
pin("h200-sxm peak.fp16", "disagree", "TF32 vs FP16", "H200 fp16 495")
t.like(by["h200-sxm peak.fp16"].cause, "halved twice", "H200 495: double halving named", true)

-- Causes the seed claims do not exercise.
local function one(c) return C.check_one(cat, c) end
local r = one { gpu = "h100-sxm", field = "scaleup.bw", claim = "900GB/s per-dir" }
t.is(r.verdict, "disagree", "900 labelled per-dir disagrees")
t.like(r.cause, "2-way sum", "bidirectional figure labelled per direction", true)
r = one { gpu = "h100-sxm", field = "scaleup.bw", claim = "450GB/s" }
t.ok(r.verdict == "agree" and r.cause:find("per direction", 1, true) ~= nil,
  "450 without qualifier read as per direction")
-- H100 PCIe has 2.0 TB/s: a claim of 2.0 for the SXM part names the sibling.
r = one { gpu = "h100-sxm", field = "mem_bw", claim = "2.0TB/s" }
t.is(r.verdict, "disagree", "H100 SXM 2.0 TB/s disagrees")
t.like(r.cause, "h100-pcie", "names the h100-pcie variant", true)
r = one { gpu = "h100-sxm", field = "peak.bf16", claim = "1979TFLOPS" }
t.like(r.cause, "sparse vs dense", "1979 for H100 bf16 is the sparse figure", true)
-- 3.5% off is outside the 3% tolerance.
r = one { gpu = "h100-sxm", field = "mem_bw", claim = "3.467TB/s" }
t.is(r.verdict, "disagree", "3.5% off disagrees")
t.like(r.cause, "unexplained", "no known cause -> unexplained", true)
r = one { gpu = "h20", field = "memory", claim = "141GB" }
t.like(r.cause, "141 GB HBM3e H20 variant", "H20 141 GB variant named", true)

-- A user entry written in decimal GB (against catalog/FORMAT.md): the
-- claim "96GB" read as 96 GiB is 2^30/10^9 = 1.074 above 96e9 -> named.
local dec = { id = "dec-96", memory = 96e9, peak = {} }
local fake = { get = function() return dec end, ids = function() return {} end,
               fabrics = {} }
r = C.check_one(fake, { gpu = "dec-96", field = "memory", claim = "96GB" })
t.is(r.verdict, "disagree", "decimal-GB entry vs a '96GB' claim disagrees")
t.near(r.ratio, 2 ^ 30 / 1e9, 1e-12, "ratio 2^30/10^9")
t.like(r.cause, "GB vs GiB", "and names the GB/GiB reading", true)

-- Bad input: clear errors, never a silent row.
t.raises(function() one { gpu = "h100", field = "mem_bw", claim = "3TB/s" } end,
  "unknown gpu 'h100'", "unknown gpu id")
t.raises(function() one { gpu = "h100-sxm", field = "speed", claim = "3TB/s" } end,
  "unknown field 'speed'", "unknown field")
t.raises(function() one { gpu = "h100-sxm", field = "mem_bw", claim = "3 parsecs" } end,
  "bad bandwidth", "claim without a bandwidth unit")
t.raises(function() one { gpu = "h100-sxm", field = "peak.bf16", claim = "nanTFLOPS" } end,
  "bad compute", "NaN claim rejected")
t.raises(function() C.check(cat, { { gpu = "h20", field = "memory" } }) end,
  "claim #1: needs gpu, field and claim", "claim without a figure")
t.raises(function() C.load_claims("tests/fixtures/no-such-claims.lua") end,
  "cannot open claims file", "missing claims file")

-- A directory opens but does not read: an error naming it, not a
-- traceback from load(nil).
t.raises(function() C.load_claims("scripts") end,
  "cannot read claims file scripts", "claims path that is a directory", true)

t.done_testing()
