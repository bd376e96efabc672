-- vLLM's and SGLang's Triton fused MoE multiplies fp8 experts on Hopper
-- at no more than 0.594 of the card's bf16 GEMM rate (lua/gpuplan/
-- infer.lua M.moe_fp8_bf16_x: vLLM PR #23280's Triton block-fp8 GEMM
-- against torch's bf16 on one H100); the engine caps the op's compute
-- rate at that multiple of the 16-bit rate at its shape (roofline.h
-- roof_op.bf16_x).
-- Run with ./gpuplan run tests/lua/moe_triton_fp8.t.
local t = require "tap"
local gp = require "gpuplan"
local core = require "gpuplan.core"

t.plan(9)

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
t.near(row(on, "qkv").t_compute, row(off, "qkv").t_compute, 1e-15,
       "the dense qkv keeps the fp8 rate")
-- bf16 weights are not capped: the cap is the fp8 kernel's.
local b16 = t.with(job, { weights = "bf16" })
local a = gp.infer(b16)
infer.moe_fp8_bf16_x.vllm = nil
local b = gp.infer(b16)
infer.moe_fp8_bf16_x.vllm = saved
t.near(row(a, "moe_up").t_compute, row(b, "moe_up").t_compute, 1e-15,
       "bf16 experts keep their rate")
