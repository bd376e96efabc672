-- A board power limit below the TDP (gp.train's power_limit; the
-- catalog's power_limit, the card's default): the sustained tensor clock
-- falls to ((L - static) / (TDP - static)) ^ (1 / exponent) of the TDP's
-- (roofline.lua clock_at; catalog/archs.lua hopper power_curve: static
-- 140 W, exponent 2.63, from the H100 PCIe / SXM5 MAMF rates), and the
-- GEMM and attention fractions with it; memory-bound kernels keep their
-- rate.  Run with ./gpuplan run tests/lua/power_limit.t.
local t = require "tap"
local gp = require "gpuplan"
local roofline = require "gpuplan.roofline"

t.plan(37)

local cat = gp.catalog()
local hopper = cat.archs.hopper
local g96 = cat:get("gpus", "h100-sxm-96gb")
t.is(hopper.power_curve.static, 140, "hopper power_curve: 140 W static draw")
t.is(hopper.power_curve.exponent, 2.63, "hopper power_curve: exponent 2.63")
t.ok(g96.tdp == 700 and g96.power_limit == 500,
     "h100-sxm-96gb: 700 W TDP, shipped at a 500 W default limit (torchtitan's Grand Teton)")

-- The clock at 500 W: (500 - 140) / (700 - 140) = 360 / 560 = 0.642857;
-- 0.642857 ^ (1 / 2.63) = exp(ln 0.642857 / 2.63) = exp(-0.441833 / 2.63)
-- = exp(-0.167997) = 0.845356.  1e-6: the rounding of that hand value.
local c500, l500 = roofline.clock_at(g96, hopper, nil)
t.near(c500, 0.845356, 1e-6, "500 W (the card's default): 0.845 of the 700 W clock")
t.is(l500, 500, "the limit priced is the card's default")
-- 600 W: (460 / 560) ^ (1 / 2.63) = 0.821429 ^ 0.380228 = 0.927934
t.near(roofline.clock_at(g96, hopper, 600), 0.927934, 1e-6, "600 W: 0.928 of it")
t.is(roofline.clock_at(g96, hopper, 700), 1, "at the TDP: the TDP's clock")

-- Blackwell (catalog/archs.lua blackwell power_curve): a B200's 137 W
-- idle draw, the GH100 exponent 2.63.  The torchao MXFP8 table's 750 W
-- cap on its 1000 W TDP: (750 - 137) / (1000 - 137) = 613 / 863 =
-- 0.710313; exp(ln 0.710313 / 2.63) = exp(-0.342050 / 2.63) =
-- exp(-0.130057) = 0.878045.  1e-6: the rounding of that hand value.
local bw = cat.archs.blackwell
local b200 = cat:get("gpus", "b200")
t.ok(bw.power_curve.static == 137 and bw.power_curve.exponent == 2.63,
     "blackwell power_curve: 137 W static draw, exponent 2.63")
t.near(roofline.clock_at(b200, bw, 750), 0.878045, 1e-6, "b200 at 750 W: 0.878 of the 1000 W clock")
t.is(roofline.clock_at(b200, bw, nil), 1, "b200: no default limit below its TDP")
-- The step slows by at most 1 / 0.878045 (all of it tensor work) and by
-- more than 1 (the GEMMs and attention slow).
local bjob = { model = "llama3-8b", gpu = "b200", gpus = 8, seq = 8192, zero = 3, cat = cat }
local b750 = gp.train(t.with(bjob, { power_limit = 750 })).step_s / gp.train(bjob).step_s
t.ok(b750 > 1.05 and b750 <= 1 / 0.878045 + 1e-9, "b200 train at 750 W: slower, by at most the clock")
local h100 = cat:get("gpus", "h100-sxm")
t.is(roofline.clock_at(h100, hopper, nil), 1, "h100-sxm: no default limit below its TDP")

-- The device table: bf16 GEMM = 0.80 (MAMF) x 0.82 (sustained) x
-- 0.845356 = 0.554554; cuDNN's forward 0.53 x 0.82 x 0.845356 =
-- 0.367392; the streaming fraction stays 0.84.  1e-6: the hand rounding.
local d = roofline.device(g96, cat)
t.near(d.gemm.bf16, 0.80 * 0.82 * 0.845356, 1e-6, "bf16 GEMM fraction at the 500 W clock")
t.near(d.attn_fwd, 0.53 * 0.82 * 0.845356, 1e-6, "attention forward at the 500 W clock")
t.is(d.hbm, 0.84, "the streaming fraction keeps its rate")

-- The step: one job at 700, 500 and 300 W.  A kernel priced as its
-- tensor work at the clock plus a fixed part, t(f) = K / f + c, gives
-- (t(300) - t(500)) / (t(500) - t(700)) = (1/f300 - 1/f500) / (1/f500 - 1)
-- whatever K and c: f500 = 0.845356, f300 = (160 / 560) ^ (1 / 2.63) =
-- 0.621055, so (1.610164 - 1.182933) / 0.182933 = 2.33544.
local job = { model = "llama3-8b", gpu = "h100-sxm-96gb", gpus = 8, seq = 8192, zero = 3,
              cat = cat }
local r = {}
for _, pl in ipairs { 700, 500, 300 } do r[pl] = gp.train(t.with(job, { power_limit = pl })) end
local f300 = (160 / 560) ^ (1 / 2.63)
local want = (1 / f300 - 1 / c500) / (1 / c500 - 1)
t.near(want, 2.33544, 1e-5, "the hand value of the ratio")
local function ratio(name, dir)
  local a, b, c = t.op(r[700], name)[dir], t.op(r[500], name)[dir], t.op(r[300], name)[dir]
  return (c - b) / (b - a)
end
-- Attention is its tensor work at the clock and nothing else: 1e-9.
t.near(ratio("attention", "fwd"), want, 1e-9, "attention forward: its time at 1/clock")
t.near(ratio("attention", "bwd"), want, 1e-9, "attention backward: its time at 1/clock")
-- A GEMM's time is not purely K / f + c (the wave and memory terms of
-- its shape blend in, roofline.c): within 2% (measured 0.3%).
t.near(ratio("mlp_up", "fwd"), want, 0.02, "mlp_up: its time at about 1/clock")
-- Memory-bound kernels: the same time at every limit.
t.is(t.op(r[300], "residual").fwd, t.op(r[700], "residual").fwd, "residual add: unchanged")
t.is(t.op(r[300], "attn_norm").fwd, t.op(r[700], "attn_norm").fwd, "RMSNorm: unchanged")
t.ok(r[300].step_s > r[500].step_s and r[500].step_s > r[700].step_s,
     "the step grows as the limit falls")

-- No power_limit: the card's default, 500 W, said in the defaults line.
local def = gp.train(job)
t.is(def.step_s, r[500].step_s, "h100-sxm-96gb without power_limit: its 500 W default")
t.ok(t.said(def, "^power_limit=500W %(h100%-sxm%-96gb's default limit, TDP 700W: tensor clock 0%.845 "),
     "the defaults line says the limit and the clock")
-- A card at its TDP: power_limit equal to it changes nothing.
local base = t.with(job, { gpu = "h100-sxm" })
t.is(gp.train(t.with(base, { power_limit = 700 })).step_s, gp.train(base).step_s,
     "h100-sxm at power_limit 700 (its TDP): the same step")

-- Refusals, naming the option.
t.raises(function() gp.train(t.with(job, { power_limit = 800 })) end,
         "power_limit 800 W is above h100-sxm-96gb's TDP, 700 W", "above the TDP: refused", true)
t.raises(function() gp.train(t.with(job, { power_limit = 120 })) end,
         "at or below the board's static draw, 140 W", "below the static draw: refused", true)
t.raises(function() gp.train(t.with(job, { gpu = "a100-sxm-80gb", power_limit = 300 })) end,
         "arch 'ampere' gives no power_curve", "an arch without a curve: refused", true)

-- Serving: the prefill's GEMMs are tensor-bound, a batch-1 decode step
-- streams the weights.  TTFT of a 2048-token prompt grows by at most
-- 1 / 0.845356 = 1.1829 (all of it tensor work) and more than 1; the
-- batch-1 ITL stays within 0.1% (its few tensor-bound FLOPs).
local ia = gp.infer { model = "llama3-8b", gpu = "h100-sxm", batch = 1, power_limit = 500, cat = cat }
local ib = gp.infer { model = "llama3-8b", gpu = "h100-sxm", batch = 1, cat = cat }
t.ok(ia.ttft_s / ib.ttft_s > 1.05 and ia.ttft_s / ib.ttft_s <= 1 / c500 + 1e-9,
     "infer at 500 W: the prefill slows, at most by the clock")
t.near(ia.itl_s, ib.itl_s, 1e-3, "infer at 500 W: a batch-1 decode step keeps its time")

-- A case states it (hardware.power_limit): torchtitan's 8B row on 8
-- Grand Teton H100s, "We used the default 500W power limit".  Stated or
-- not, 500 W (the card's default); at 700 W the same row is faster, by
-- less than 1 / 0.845356 (its memory-bound kernels and communication
-- keep their time).
local doc = t.shipped_cases()
local case
for _, c in ipairs(doc.cases or doc) do
  if c.id == "torchtitan2412-h100-llama31-8b-8gpu-fsdp" then case = c end
end
local predict = require "gpuplan.predict.train"
t.is(case.hardware.power_limit, 500, "the case states the source's 500 W")
local stated = predict(case, cat).value
case.hardware.power_limit = nil
local unstated = predict(case, cat).value
case.hardware.power_limit = 700
local at_tdp = predict(case, cat).value
t.ok(stated == unstated and at_tdp / stated > 1.05 and at_tdp / stated < 1 / c500,
     "the case's power_limit handed on: 700 W gives more tokens/s, by less than the clock")

-- With its unit, as the other quantities (gpuplan.units power): "500W",
-- "0.5kW" and the bare number 500 are one limit, the same step exactly.
t.is(gp.train(t.with(job, { power_limit = "500W" })).step_s, r[500].step_s, "power_limit '500W' = 500")
t.is(gp.train(t.with(job, { power_limit = "0.5kW" })).step_s, r[500].step_s, "power_limit '0.5kW' = 500")
t.raises(function() gp.train(t.with(job, { power_limit = "500V" })) end,
         "power_limit: bad power '500V': unknown unit 'V' (use W or kW)", "a unit not of power: refused", true)
-- Out of its range (1..1e5 W, options.lua): the bounds in W, and a value
-- with its unit shown as typed and as read (0.5 W), not "(got string
-- '0.5W')".
t.raises(function() gp.train(t.with(job, { power_limit = "0.5W" })) end,
         "power_limit must be a number in [1, 100000] W (got '0.5W' = 0.5 W)",
         "below the range, with its unit: the bounds' unit and the value read", true)
t.raises(function() gp.train(t.with(job, { power_limit = 0 })) end,
         "power_limit must be a number in [1, 100000] W (got 0)", "a bare 0 W: refused", true)
