-- cuDNN's fused attention by release (gp.train's cudnn; catalog/archs.lua
-- HOPPER_CUDNN_RELEASES, the hopper arch's cudnn `releases`): a run that
-- states its cuDNN release runs the table of the newest release the
-- catalog times at or before it, a factor on the kernel's rate by causal
-- prompt length (engine/roofline.c attn_release); no release stated, or
-- one before every table, prices the fractions as they stand.
-- Run with ./gpuplan run tests/lua/cudnn_release.t.
local t = require "tap"
local gp = require "gpuplan"
local catalog = require "gpuplan.catalog"
local rf = require "gpuplan.roofline"

t.plan(12)

local cb = catalog.load { require("gpuplan.config").root .. "/catalog" }

local function curve(l)
  if not l then return "none" end
  local out = {}
  for _, p in ipairs(l) do out[#out + 1] = string.format("%d:%.12g", p[1], p[2]) end
  return table.concat(out, " ")
end
local function dev(gpu, k, rel)
  local d = rf.device(gpu, cb, k, nil, nil, rel)
  return curve(d.attn_rel) .. " (" .. tostring(d.attn_release) .. ")"
end

-- The catalog's points as the device carries them: 9.9's (the Llama-3.2-1B
-- loop's differences, 1.025 up to 4k, 1.070 from 8k) for 9.9 to 9.18,
-- 9.19's (its kernel table over 9.1's: 502.4 / 467.9 at 4k, 566.7 / 490.3
-- at 8k) from 9.19 on.
t.is(dev("h100-sxm", "cudnn", "9.11"), "4096:1.025 8192:1.07 (9.9)",
  "h100 cudnn 9.11 (the Model Zoo's image): the 9.9 table")
t.is(dev("h200-sxm", "cudnn", "9.20"), "4096:1.074 8192:1.156 (9.19)",
  "h200 cudnn 9.20 (NeMo 26.04): the 9.19 table")
t.is(dev("h100-sxm", "cudnn", "9.18.0"), "4096:1.025 8192:1.07 (9.9)",
  "9.18.0: a patch release compares by its parts, before 9.19")
t.is(dev("h100-sxm", "cudnn", "9.2"), "none (nil)",
  "9.2 (before every table): the reference release, the fractions as they stand")
t.is(dev("h100-sxm", "fa3", "9.19"), "none (nil)", "fa3: no cuDNN release applies")
t.is(dev("h100-sxm", "cudnn", nil), "none (nil)", "no release stated: unchanged")

-- End to end: Llama 3 8B on one H200, one sequence, cuDNN's kernel, the
-- step at a stated release against the same step unstated: they differ
-- only in the attention core, whose time A at the reference divides by
-- the factor x: diff = A (1 - 1/x).  At 8k the shape terms are 1 and A =
-- 32 layers x F/2 x (1/0.53 + 2.5/0.45) / (0.82 x 989e12), F/2 = 2 s^2 x
-- 4096 (32 heads of 128) the causal forward.  Tolerance 0.5%: the rest of
-- the step is the same, each pass's launches alike.
local job = { model = "llama3-8b", gpu = "h200-sxm", gpus = 1, method = "full", batch = 1,
              global_batch = 1, recompute = "none", stack = "hf", attn_kernel = "cudnn" }
local function diff(s, rel)
  local a = gp.train(t.with(job, { seq = s }))
  local b = gp.train(t.with(job, { seq = s, cudnn = rel }))
  return a.step_s - b.step_s
end
local a8 = 32 * 2 * 8192 ^ 2 * 4096 * (1 / 0.53 + 2.5 / 0.45) / (0.82 * 989e12)
t.near(diff(8192, "9.19"), a8 * (1 - 1 / 1.156), 0.005, "H200 8k, cuDNN 9.19: A (1 - 1/1.156)")
t.near(diff(8192, "9.11"), a8 * (1 - 1 / 1.070), 0.005, "H200 8k, cuDNN 9.11: A (1 - 1/1.070)")
-- Between points the factor is linear in log2 of the length: at 6144,
-- log2(6144 / 4096) = 0.585, 9.19's x = 1.074 + 0.082 x 0.585 = 1.1220,
-- 9.9's 1.025 + 0.045 x 0.585 = 1.0513; A at 6k (shape terms below 1)
-- cancels in the quotient of the two differences:
-- (1 - 1/1.1220) / (1 - 1/1.0513) = 2.227.  Tolerance 0.5% as above.
local l = math.log(6144 / 4096, 2)
local x19, x9 = 1.074 + 0.082 * l, 1.025 + 0.045 * l
t.near(diff(6144, "9.19") / diff(6144, "9.11"), (1 - 1 / x19) / (1 - 1 / x9), 0.005,
  "H200 6k: the factors read between 4k and 8k in log2 of the length")
-- Past the last point held: 32k takes 8k's factor, over the kernel's own
-- length curve (1.073 of 8k's rate at 32k), so A(32k) = 16 x A(8k) / 1.073.
t.near(diff(32768, "9.19"), 16 * a8 / (608.1 / 566.7) * (1 - 1 / 1.156), 0.005,
  "H200 32k, cuDNN 9.19: held at the 8k factor, over the length curve")

-- A release that is none: refused naming the option.
t.raises(function() gp.train(t.with(job, { seq = 4096, cudnn = "nine" })) end,
  "cudnn must be a release", "cudnn 'nine' refused, naming the option", true)
-- The case reader takes workload.cudnn as a release, and refuses another.
local c = t.shipped_case("mzoo-bp-h100-qwen3-235b-a22b-bf16-16k-tp4-cp1-forcebal")
c.workload.cudnn = "9.x"
local ok, e = t.read_case(c)
t.ok(not ok and e:find("cuDNN release", 1, true) ~= nil, "a case's cudnn '9.x' refused: " .. e)
