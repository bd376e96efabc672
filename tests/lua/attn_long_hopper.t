-- Hopper's fused kernels past 8k tokens (catalog/archs.lua
-- HOPPER_CAUSAL_LONG, the hopper arch's cudnn and fa3 `long`): a causal
-- prompt's forward + backward runs faster as the prompt grows, the mask's
-- diagonal and uneven rows weighing less.  cuDNN 9.19 on an H200 at Llama
-- 3.1's heads (cudnn-frontend sdpa_benchmark_training, causal): 566.7 /
-- 602.9 / 608.1 TFLOP/s at 8k / 16k / 32k; held past 32k.
-- Run with ./gpuplan run tests/lua/attn_long_hopper.t.
local t = require "tap"
local gp = require "gpuplan"
local catalog = require "gpuplan.catalog"
local rf = require "gpuplan.roofline"

t.plan(7)

local cb = catalog.load { require("gpuplan.config").root .. "/catalog" }

-- The device table carries the curve as rates over the 8k one (the
-- default reference: neither entry states a seq).  Shown as text: the
-- ratios are the catalog's quotients, exact to the 12 digits printed.
local function curve(l)
  if not l then return "none" end
  local out = {}
  for _, p in ipairs(l) do out[#out + 1] = string.format("%d:%.12g", p[1], p[2]) end
  return table.concat(out, " ")
end
local want_curve = string.format("16384:%.12g 32768:%.12g", 602.9 / 566.7, 608.1 / 566.7)
local f3 = rf.device("h200-sxm", cb, "fa3")
t.is(tostring(f3.attn_ref_q) .. " " .. curve(f3.attn_long), "nil " .. want_curve,
  "h200 fa3: the 8k reference, cuDNN's 16k and 32k rates over its 8k one")
t.is(curve(rf.device("h100-sxm", cb, "cudnn").attn_long), want_curve,
  "h100 cudnn: the same curve (the hopper arch's)")
t.is(rf.device("h200-sxm", cb, "fa2").attn_long, nil, "h200 fa2: no curve (flat past its reference)")

-- End to end: Llama 3 8B (32 layers, 32 heads of 128) on one H200, one
-- sequence, nothing recomputed, fa3 against fa2: the steps differ only in
-- the attention core.  Per layer the causal forward is F/2 = 2 s^2 x 4096
-- FLOP, the backward 2.5 x that.  Both kernels' fractions carry the
-- hopper arch's sustained 0.82 of the 989 TFLOP/s peak; fa3 0.713 /
-- 0.618, fa2 0.39 / 0.345.  Past 8k the shape terms are capped at 1 for
-- both, so at s tokens fa3 runs at its curve's c(s) and fa2 at 1:
--   diff(s) = 32 x F/2 x [ (1/0.713 + 2.5/0.618) / c(s)
--                          - (1/0.39 + 2.5/0.345) ] / (0.82 x 989e12).
-- Tolerance 0.5%: each pass adds one graph_launch to either kernel alike,
-- and the rest of the step is the same.
local job = { model = "llama3-8b", gpu = "h200-sxm", gpus = 1, method = "full",
              batch = 1, global_batch = 1, recompute = "none", stack = "hf" }
local function diff(s)
  local a = gp.train(t.with(job, { seq = s, attn_kernel = "fa3" }))
  local b = gp.train(t.with(job, { seq = s, attn_kernel = "fa2" }))
  return a.step_s - b.step_s
end
local function want(s, c)
  return 32 * 2 * s ^ 2 * 4096 * ((1 / 0.713 + 2.5 / 0.618) / c
    - (1 / 0.39 + 2.5 / 0.345)) / (0.82 * 989e12)
end
-- At the reference the curve is 1: the fractions as they stand.
t.near(diff(8192), want(8192, 1), 0.005, "H200 8k: fa3 at its fractions (curve 1)")
t.near(diff(16384), want(16384, 602.9 / 566.7), 0.005, "H200 16k: fa3 at cuDNN's 16k rise")
t.near(diff(32768), want(32768, 608.1 / 566.7), 0.005, "H200 32k: fa3 at cuDNN's 32k rise")
-- Past the last point the curve is held: 64k takes the 32k ratio.
t.near(diff(65536), want(65536, 608.1 / 566.7), 0.005, "H200 64k: held at the 32k point")
