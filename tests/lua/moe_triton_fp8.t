-- vLLM's and SGLang's Triton fused MoE multiplies fp8 experts on Hopper
-- at no more than 0.594 of an H100's bf16 GEMM rate per SM (lua/gpuplan/
-- infer.lua M.moe_fp8_bf16_x: vLLM PR #23280's Triton block-fp8 GEMM
-- against torch's bf16 on one H100); the engine caps the op's compute
-- rate at a multiple of the card's 16-bit rate at its shape (roofline.h
-- roof_op.bf16_x), which infer.lua scales by the cards' bf16 peaks per
-- SM.
-- Run with ./gpuplan run tests/lua/moe_triton_fp8.t.
local t = require "tap"
local gp = require "gpuplan"
local core = require "gpuplan.core"

t.plan(15)

-- A Hopper-like device by hand: bf16 989 TFLOP/s at 0.8 (791.2), fp8
-- 1979 at 0.7 (1385.3), 132 SMs.
local dev = { peak = { bf16 = 989e12, fp8 = 1979e12 },
              gemm = { bf16 = 0.8, fp8 = 0.7 }, mem_bw = 3.35e12,
              hbm = 0.84, launch = 4e-6, graph_launch = 1e-6, sms = 132 }
-- A compute-bound fp8 GEMM: 4096^3, 1 MB moved.
local g = { flop = 2 * 4096 ^ 3, bytes = 1e6, m = 4096, n = 4096,
            k = 4096, prec = "fp8" }
local function with(x)
  local o = {}
  for k, v in pairs(g) do o[k] = v end
  for k, v in pairs(x) do o[k] = v end
  return o
end
local plain = core.roof_op(dev, g)
local capped = core.roof_op(dev, with { bf16_x = 0.594 })
-- The same tiles either way, so the compute times are in the ratio of
-- the two rates: (1979 x 0.7) / (0.594 x 989 x 0.8) = 1385.3 / 469.97
-- = 2.94764 (exact arithmetic; 1e-9 for rounding).
t.is(capped.shape_eff, plain.shape_eff, "the cap leaves the tiles alone")
t.near(capped.t_compute / plain.t_compute, 1979 * 0.7 / (0.594 * 989 * 0.8), 1e-9,
       "bf16_x 0.594: compute at 0.594 of the bf16 rate, not the fp8 one")
-- A cap above the precision's own rate (4 x 791.2 > 1385.3) changes
-- nothing: it only ever lowers the rate.
t.near(core.roof_op(dev, with { bf16_x = 4 }).t_compute, plain.t_compute, 1e-12,
       "a cap above the fp8 rate leaves it")
t.raises(function() core.roof_op(dev, with { bf16_x = -1 }) end, "bf16_x",
         "a negative bf16_x is refused by name", true)
t.raises(function() core.roof_op(dev, with { bf16_x = 5 }) end, "bf16_x",
         "a bf16_x past 4 is refused by name", true)
-- A cap below 0.01 (roofline.h ROOF_BF16_X_MIN, the smallest achievable
-- fraction a device may give) is refused: a denormal one made the rate
-- 4e-309 FLOP/s and the op's time NaN.
t.raises(function() core.roof_op(dev, with { bf16_x = 5e-324 }) end,
         "bf16_x must be 0 or in [0.01, 4]", "a denormal bf16_x is refused by name", true)

-- gp.infer: the expert GEMMs of an fp8 MoE under vLLM on an H100 take
-- the cap, the dense linears do not.  One 1024-token prompt of
-- Qwen3-30B-A3B on one GPU, priced under vLLM with the cap and with it
-- off (infer.lua's table entry cleared): the moe_up row's compute time
-- grows by the ratio of the H100's fp8 rate to 0.594 of its bf16 rate
-- (the catalog's peaks and GEMM fractions, sustained factor included in
-- both), the qkv row's not at all.
local infer = require "gpuplan.infer"
local job = { model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 1, tp = 1,
              weights = "fp8", runtime = "vllm", input = 1024, output = 16,
              batch = 1 }
local function row(r, name)
  for _, o in ipairs(r.prefill_ops) do if o.name == name then return o end end
end
local on = gp.infer(job)
local saved = infer.moe_fp8_bf16_x.vllm
infer.moe_fp8_bf16_x.vllm = nil
local off = gp.infer(job)
infer.moe_fp8_bf16_x.vllm = saved
local d = require("gpuplan.roofline").device("h100-sxm")
local fp8, bf16 = d.peak.fp8 * d.gemm.fp8, d.peak.bf16 * d.gemm.bf16
t.ok(0.594 * bf16 < fp8, "on the H100 the cap is below the fp8 rate")
t.near(row(on, "moe_up").t_compute / row(off, "moe_up").t_compute,
       fp8 / (0.594 * bf16), 1e-9, "moe_up: fp8 rate / (0.594 x bf16 rate)")
-- 1e-15 (here, for the bf16 experts and the H20 below): rows the cap does
-- not touch are priced from the same inputs, equal but for the last bit.
t.near(row(on, "qkv").t_compute, row(off, "qkv").t_compute, 1e-15,
       "the dense qkv keeps the fp8 rate")
-- gp.infer of job o with vLLM's cap in place and taken out: the two results.
local function capped_and_not(o)
  local a = gp.infer(o)
  infer.moe_fp8_bf16_x.vllm = nil
  local b = gp.infer(o)
  infer.moe_fp8_bf16_x.vllm = saved
  return a, b
end
-- bf16 weights are not capped: the cap is the fp8 kernel's.
local a, b = capped_and_not(t.with(job, { weights = "bf16" }))
t.near(row(a, "moe_up").t_compute, row(b, "moe_up").t_compute, 1e-15,
       "bf16 experts keep their rate")

-- The multiple per card: 0.594 x (989e12 / 132) / (bf16 peak / SMs).
-- The H200 has the H100's SM and peak: 0.594 (exact arithmetic, 1e-12).
-- The H20 (148 TFLOP/s over 78 SMs): 0.594 x 7.4924e12 / 1.8974e12 =
-- 2.3456, above its fp8 / bf16 rate ratio, so its experts keep their
-- fp8 rate.
local function dev_of(id) return require("gpuplan.roofline").device(id) end
t.near(infer.moe_fp8_bf16_x_of("vllm", "hopper", "fp8", dev_of("h200-sxm")), 0.594, 1e-12,
       "H200: the H100's multiple")
t.near(infer.moe_fp8_bf16_x_of("sglang", "hopper", "fp8", dev_of("h20")),
       0.594 * (989e12 / 132) / (148e12 / 78), 1e-9, "H20: scaled by the bf16 peaks per SM")
local c20, u20 = capped_and_not(t.with(job, { gpu = "h20" }))
t.near(row(c20, "moe_up").t_compute, row(u20, "moe_up").t_compute, 1e-15,
       "H20: the fp8 rate binds before the cap")

-- gpuplan.serve's step (speculative decoding takes it): SGLang's experts
-- sliced by TP alone (ep 1) run the Triton kernel and take the cap; with
-- ep 8 DeepEP hands them to DeepGEMM and they keep the fp8 rate.  The
-- experts_up row's compute time, cap on / cap off, on the H200: the
-- H200's fp8 rate / (0.594 x its bf16 rate), and 1 at ep 8.
local d200 = dev_of("h200-sxm")
local ratio200 = d200.peak.fp8 * d200.gemm.fp8 / (0.594 * d200.peak.bf16 * d200.gemm.bf16)
local function experts_up(ep)
  local sj = { model = "deepseek-v3", gpu = "h200-sxm", gpus = 8, tp = 8, ep = ep,
               weights = "fp8", runtime = "sglang", input = 2048, output = 64, mtp = 1 }
  local a = row(gp.infer(sj), "experts_up")
  local sv = infer.moe_fp8_bf16_x.sglang
  infer.moe_fp8_bf16_x.sglang = nil
  local b = row(gp.infer(sj), "experts_up")
  infer.moe_fp8_bf16_x.sglang = sv
  return a.t_compute / b.t_compute
end
t.near(experts_up(1), ratio200, 1e-9, "serve, ep 1: the experts at the Triton cap")
-- At ep 8 the ratio of two equal times: 1, 1e-12 for rounding.
t.near(experts_up(8), 1, 1e-12, "serve, ep 8: DeepGEMM's experts keep the fp8 rate")
