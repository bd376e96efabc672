-- A fused attention kernel's rate at a narrow head dim
-- (achievable.attention.<kernel>.narrow; engine/roofline.c attn_narrow).
-- FlashAttention-1's CUDA kernel -- and HazyResearch's Triton kernel
-- llm-foundry runs, which the catalog prices at its bars -- run head dim
-- 64 faster than 128: on an A100, causal, forward + backward, 58 / 55,
-- 70 / 62, 77 / 69, 87 / 76, 92 / 80, 97 / 83 TFLOP/s at 512 to 16k
-- tokens (FA2 paper Fig. 4c / 4d, the "FlashAttention" bars); on an H100
-- 104 / 98, 123 / 109, 136 / 108, 138 / 126, 149 / 135, 156 / 137
-- (flash2_h100_fwd_bwd_benchmark.png).  FlashAttention-2 has no such
-- curve: every head dim at its head-dim-128 fractions.
-- Run with ./gpuplan run tests/lua/attn_narrow.t.
local t = require "tap"
local gp = require "gpuplan"
local catalog = require "gpuplan.catalog"
local rf = require "gpuplan.roofline"

t.plan(10)

local cb = catalog.load { require("gpuplan.config").root .. "/catalog" }

-- The device table carries the head dim and the bars' ratios.  (Shown as
-- text: the ratios are the catalog's quotients, exact to the 12 digits
-- printed.)
local function curve(d)
  if not d.attn_narrow then return "none" end
  local out = { tostring(d.attn_narrow_dim) }
  for _, p in ipairs(d.attn_narrow) do out[#out + 1] = string.format("%d:%.12g", p[1], p[2]) end
  return table.concat(out, " ")
end
local function want(dim, bars)
  local out = { tostring(dim) }
  for _, b in ipairs(bars) do out[#out + 1] = string.format("%d:%.12g", b[1], b[2] / b[3]) end
  return table.concat(out, " ")
end
local a100 = { { 512, 58, 55 }, { 1024, 70, 62 }, { 2048, 77, 69 }, { 4096, 87, 76 },
               { 8192, 92, 80 }, { 16384, 97, 83 } }
t.is(curve(rf.device("a100-sxm-80gb", cb, "triton")), want(64, a100),
  "a100 triton: FlashAttention-1's head dim 64 bars over its 128 ones")
t.is(curve(rf.device("a100-sxm-80gb", cb, "fa1")), want(64, a100), "a100 fa1: the same bars")
t.is(curve(rf.device("h100-sxm", cb, "triton")), want(64, { { 512, 104, 98 }, { 1024, 123, 109 },
  { 2048, 136, 108 }, { 4096, 138, 126 }, { 8192, 149, 135 }, { 16384, 156, 137 } }),
  "h100 triton: the H100 figure's FlashAttention-1 bars")
t.is(curve(rf.device("a100-sxm-80gb", cb, "fa2")), "none", "a100 fa2: no narrow curve")

-- The same attention work at two head dims: hidden 1536 as 24 heads of
-- 64 or 12 heads of 128, one causal sequence on one A100.  The core's
-- FLOPs are 4 s^2 x hidden (causal: half) either way, and past the 4k
-- reference both head dims' shape terms are capped at 1 and take the
-- same length curve, so the times differ only by the narrow ratio:
-- at 32k, past the last bar, held at 16k's, 83 / 97 of head dim 128's
-- time; at 12k, linear in log2 q between the 8k and 16k ratios:
--   r = 92/80 + (97/83 - 92/80) x log2(12288 / 8192), time 1 / r.
-- fa2: the same time.  Tolerance 1e-4 (relative): the op's memory
-- traffic (Q, K, V, O read and written once) enters through the
-- roofline's overlap of compute and memory, a few parts in 1e6 here.
local function attn(heads, kernel, seq)
  local r = gp.train{ gpu = "a100-sxm-80gb", gpus = 1, seq = seq, batch = 1,
    global_batch = 1, recompute = "full", precision = "bf16", attn_kernel = kernel,
    model = { layers = 2, hidden = 1536, heads = heads, kv_heads = heads,
              ffn_hidden = 6144, vocab = 32000, ffn_gated = false, norm = "layer" } }
  return t.op(r, "attention")
end
local t64, t128 = attn(24, "triton", 32768), attn(12, "triton", 32768)
t.near(t64.fwd / t128.fwd, 83 / 97, 1e-4, "triton 32k forward: head dim 64 at 97/83 of 128's rate")
t.near(t64.bwd / t128.bwd, 83 / 97, 1e-4, "triton 32k backward: the same ratio")
local r12 = 92 / 80 + (97 / 83 - 92 / 80) * math.log(12288 / 8192, 2)
local m64, m128 = attn(24, "triton", 12288), attn(12, "triton", 12288)
t.near(m64.fwd / m128.fwd, 1 / r12, 1e-4, "triton 12k: the ratio interpolated in log2 q")
local f64, f128 = attn(24, "fa2", 32768), attn(12, "fa2", 32768)
t.near(f64.fwd / f128.fwd, 1, 1e-4, "fa2: head dim 64 at 128's rate, the same time")

-- A curve whose lengths do not grow is refused when the catalog loads,
-- naming the field; a ratio past the engine's bound (4) too.
local scratch = t.scratch()
local function arch_with(points)
  return string.format([[
arch { id = "sa", name = "x", launch_overhead = "4us",
  achievable = { gemm = { bf16 = 0.8 }, hbm = 0.85, reason = "t", source = "t",
    attention = { kernel = "fa2", fa2 = { fwd = 0.6, bwd = 0.5 },
      triton = { fwd = 0.3, bwd = 0.25, narrow = { dim = 64, points = %s } } } } }
]], points)
end
scratch.put("a.lua", arch_with("{ { seq = 4096, tflops = 87, wide = 76 }, "
  .. "{ seq = 4096, tflops = 92, wide = 80 } }"))
local _, e1 = catalog.load { scratch.dir }
t.like(e1[1] or "", "field 'achievable.attention.triton.narrow': point 2 (seq 4096) must be "
  .. "longer than point 1 (seq 4096)", "lengths that do not grow: refused", true)
scratch.clean()
scratch.put("b.lua", arch_with("{ { seq = 4096, tflops = 400, wide = 76 } }"))
local _, e2 = catalog.load { scratch.dir }
t.like(e2[1] or "", "its rate over the head dim 128 one must be in [0.01, 4] (got 5.26316)",
  "a 5.3x ratio: refused by the engine's check", true)
scratch.remove()
