-- A fused attention kernel's length curve past the prompt its catalog
-- fractions were read at (achievable.attention.<kernel>.seq and .long;
-- engine/roofline.c roof_attn_eff).  The Triton FlashAttention
-- llm-foundry runs keeps speeding up past 8k tokens where
-- FlashAttention-2 is near its top: its comparator, FlashAttention-1,
-- runs 76 / 80 / 83 TFLOP/s at 4k / 8k / 16k on an A100 (FA2 paper Fig.
-- 4d, causal, head dim 128) and 126 / 135 / 137 on an H100
-- (flash2_h100_fwd_bwd_benchmark.png).
-- Run with ./gpuplan run tests/lua/attn_long.t.
local t = require "tap"
local gp = require "gpuplan"
local catalog = require "gpuplan.catalog"
local rf = require "gpuplan.roofline"

t.plan(13)

local cb = catalog.load { require("gpuplan.config").root .. "/catalog" }

-- The device table carries the curve as rates over the reference's: A100
-- read at 4k, 80/76 at 8k and 83/76 at 16k; H100 at the 8k default, 137/135
-- at 16k; FlashAttention-2 on the A100 its own bars of the same figure,
-- 189/182 at 16k over the 8k reference (its entry states no seq).
-- (Shown as text: the ratios are the catalog's quotients, exact to the
-- 12 digits printed.)
local function curve(l)
  if not l then return "none" end
  local out = {}
  for _, p in ipairs(l) do out[#out + 1] = string.format("%d:%.12g", p[1], p[2]) end
  return table.concat(out, " ")
end
local a = rf.device("a100-sxm-80gb", cb, "triton")
t.is(a.attn_ref_q, 4096, "a100 triton: read at 4k tokens")
t.is(curve(a.attn_long), string.format("8192:%.12g 16384:%.12g", 80 / 76, 83 / 76),
  "a100 triton: FlashAttention-1's 8k and 16k bars over its 4k one")
local h = rf.device("h100-sxm", cb, "triton")
t.is(tostring(h.attn_ref_q) .. " " .. curve(h.attn_long),
  string.format("nil 16384:%.12g", 137 / 135), "h100 triton: the 8k reference, 137/135 at 16k")
local a2 = rf.device("a100-sxm-80gb", cb, "fa2")
t.is(tostring(a2.attn_ref_q) .. " " .. curve(a2.attn_long),
  string.format("nil 16384:%.12g", 189 / 182), "a100 fa2: the 8k reference, 189/182 at 16k")

-- End to end: Llama 3 8B (32 layers, 32 heads of 128) on one A100, one
-- 16384-token sequence, nothing recomputed, triton against fa2: the steps
-- differ only in the attention core.  Per layer the causal forward is
-- F/2 = 2 s^2 (heads x head_dim) = 2 x 16384^2 x 4096 = 2.199e12 FLOP,
-- the backward 2.5 x that.  At 16k both kernels' shape terms are past
-- their references (capped at 1); triton runs at its 16k bar, 83/76 of
-- its 4k fractions 0.27 / 0.235, fa2 at its 16k bar, 189/182 of its
-- fractions 0.61 / 0.53 (FA2 paper Fig. 4d, the same figure):
--   32 x F/2 x [ (1/0.27 + 2.5/0.235) / (312e12 x 83/76)
--                - (1/0.61 + 2.5/0.53) / (312e12 x 189/182) ] = 1.5814 s.
-- Tolerance 0.5%: each pass adds one graph_launch to either kernel alike,
-- and the rest of the step is the same.
local job = { model = "llama3-8b", gpu = "a100-sxm-80gb", gpus = 1, method = "full",
              seq = 16384, batch = 1, global_batch = 1, recompute = "none", stack = "hf" }
local half = 2 * 16384 ^ 2 * 4096
local tri = gp.train(t.with(job, { attn_kernel = "triton" }))
local fa2 = gp.train(t.with(job, { attn_kernel = "fa2" }))
local want = 32 * half * ((1 / 0.27 + 2.5 / 0.235) / (312e12 * 83 / 76)
  - (1 / 0.61 + 2.5 / 0.53) / (312e12 * 189 / 182))
t.near(tri.step_s - fa2.step_s, want, 0.005,
  "A100 16k: triton at its 16k bar against fa2 at its own")
-- Past the last bar both curves are held: at 32k the same difference
-- scales with s^2, x4 (no bar says how much further either kernel climbs).
local tri32 = gp.train(t.with(job, { seq = 32768, attn_kernel = "triton" }))
local fa232 = gp.train(t.with(job, { seq = 32768, attn_kernel = "fa2" }))
t.near(tri32.step_s - fa232.step_s, 4 * want, 0.005, "A100 32k: held at the 16k bar")

-- FlashAttention-1's own CUDA kernel (fa1, flash-attn 1.x: InternLM's
-- first release pins v1.0.5) is the figure's FlashAttention bar itself:
-- read at 4k as triton is, with the same 8k and 16k bars (the A100
-- holds its clock: no sustained factor on Ampere, so the fractions are
-- the catalog's 0.27 / 0.235 as they stand).
local f1 = rf.device("a100-sxm-80gb", cb, "fa1")
t.is(string.format("%s %.12g %.12g %s", f1.attn_ref_q, f1.attn_fwd, f1.attn_bwd,
  curve(f1.attn_long)), string.format("4096 %.12g %.12g 8192:%.12g 16384:%.12g",
  0.27, 0.235, 80 / 76, 83 / 76),
  "a100 fa1: FlashAttention's 4k bar 76 = 0.27 / 0.235, its 8k and 16k bars over it")
-- The same 16k step as triton's above: fa1 against fa2 differs by the
-- same 1.5814 s (same fractions, same curve; tolerance as there).
local fa1 = gp.train(t.with(job, { attn_kernel = "fa1" }))
t.near(fa1.step_s - fa2.step_s, want, 0.005,
  "A100 16k: fa1 at its 16k bar against fa2 at its own")
-- Nobody measured FlashAttention-1 on Hopper in the catalog: named,
-- with the kernels the arch has.
local okh, eh = pcall(rf.device, "h100-sxm", cb, "fa1")
t.ok(not okh, "h100 fa1: refused")
t.like(tostring(eh), "no measurement of attention kernel 'fa1' on h100%-sxm %(hopper has fa2, fa3, "
  .. "cudnn, triton, efficient, flex%)", "h100 fa1: the refusal names the kernels hopper has")

-- A curve whose first point is not at the reference length, or whose
-- lengths do not grow, is refused when the catalog loads, naming the
-- field.
local scratch = t.scratch()
local function arch_with(long, seq)
  return string.format([[
arch { id = "sa", name = "x", launch_overhead = "4us",
  achievable = { gemm = { bf16 = 0.8 }, hbm = 0.85, reason = "t", source = "t",
    attention = { kernel = "fa2", fa2 = { fwd = 0.6, bwd = 0.5 },
      triton = { fwd = 0.3, bwd = 0.25%s, long = %s } } } }
]], seq and (", seq = " .. seq) or "", long)
end
scratch.put("a.lua", arch_with("{ { seq = 4096, tflops = 76 }, { seq = 8192, tflops = 80 } }"))
local _, e1 = catalog.load { scratch.dir }
t.like(e1[1] or "", "a.lua:4: arch 'sa': field 'achievable.attention.triton.long': its first "
  .. "point (seq 4096) must stand at the length its fractions were read at (seq 8192)",
  "a first point off the reference: refused", true)
scratch.clean()
scratch.put("b.lua", arch_with("{ { seq = 4096, tflops = 76 }, { seq = 4096, tflops = 80 } }", 4096))
local _, e2 = catalog.load { scratch.dir }
t.like(e2[1] or "", "field 'achievable.attention.triton.long': point 2 (seq 4096) must be longer "
  .. "than point 1 (seq 4096)", "lengths that do not grow: refused", true)
scratch.clean()
scratch.put("c.lua", arch_with("{ { seq = 4096, tflops = 76 }, { seq = 8192, tflops = 400 } }", 4096))
local _, e3 = catalog.load { scratch.dir }
t.like(e3[1] or "", "its rate over the reference's must be in [0.01, 4] (got 5.26316)",
  "a 5.3x rise: refused by the engine's check", true)
scratch.remove()
