-- Swapped small-M GEMM tiles on Hopper (engine/roofline.c, the swapped
-- tiles above k_fill): a library GEMM of m <= 256 tokens may put them on
-- wgmma's N side in steps of 8 (catalog hopper mma_n_step = 8) with the
-- weight rows on 64- or 128-row tiles; the model keeps the cheaper of that
-- and the 64/128-row M tiles.  Rows: the FP8 linears of a Llama 3.3 70B
-- layer on an H200 (the calibration table in roofline.c).
local t = require "tap"
local core = require "gpuplan.core"
local roofline = require "gpuplan.roofline"

local d = roofline.device("h200-sxm")
local d0 = {}
for k, v in pairs(d) do d0[k] = v end
d0.mma_n_step = nil                 -- the same card without swapped tiles

t.is(d.mma_n_step, 8, "h200-sxm: mma_n_step 8 from the hopper arch")

-- qkv, o, up, down of one layer (n x k), M tokens, fp8 in, bf16 out.
local shapes = { { 10240, 8192 }, { 8192, 8192 }, { 57344, 8192 }, { 8192, 28672 } }
local function op(m, n, k, extra)
  local o = { flop = 2 * m * n * k, bytes = n * k + 2 * m * k + 2 * m * n,
              m = m, n = n, k = k, prec = "fp8", graphs = true }
  for key, v in pairs(extra or {}) do o[key] = v end
  return o
end
local function layer(dev, m)
  local s = 0
  for _, sh in ipairs(shapes) do s = s + core.roof_op(dev, op(m, sh[1], sh[2])).time end
  return s
end

-- Hand derivation of the shape factors at M = 200 (132 SMs; fill(k) =
-- k / (k + 128), relative to fill(8192) = 8192 / 8320, at most 1).
-- Swapped: tokens edge 200 = 25 x 8 (no padding), weight rows in 128-row
-- tiles (every n here is a multiple of 128), so the tile factor is 1 and
-- only waves and split-K remain:
local function fill(k) return math.min(1, (k / (k + 128)) / (8192 / 8320)) end
local eff = {
  -- qkv: 80 tiles; split 3 -> 240 CTAs in 2 waves of 132
  240 / 264 * fill(8192 / 3),
  -- o: 64 tiles; split 2 -> 128 CTAs in 1 wave
  128 / 132 * fill(4096),
  -- up: 448 tiles; split 2 -> 896 CTAs in 7 waves (924 slots)
  896 / 924 * fill(4096),
  -- down: 64 tiles; split 2 -> 128 CTAs, slices 14336 deep (fill 1)
  128 / 132 * fill(14336),
}
-- Tolerance 1e-9: the same arithmetic in another order.
for i, sh in ipairs(shapes) do
  local r = core.roof_op(d, op(200, sh[1], sh[2]))
  t.ok(math.abs(r.shape_eff - eff[i]) < 1e-9,
       string.format("M=200 %dx%d: shape_eff %.6f, by hand %.6f", sh[1], sh[2], r.shape_eff, eff[i]))
end
-- Without the swap, 200 tokens take four 64-row tiles (256 rows): up is
-- 200/256 x 1792 tiles in 14 waves (1848 slots), no split better.
t.ok(math.abs(core.roof_op(d0, op(200, 57344, 8192)).shape_eff - 200 / 256 * 1792 / 1848) < 1e-9,
     "M=200 up without mma_n_step: the 64-row tiles, 200/256 x 1792/1848")

-- The row's time by hand: per GEMM t = overlap(tc, tm) + graph launch,
-- tc = FLOP / (fp8 peak x gemm fraction x shape_eff) (the device's rate,
-- the catalog's fp8 peak at the sustained clock), tm = bytes /
-- (mem_bw hbm 0.94) + 3.9 us (ROOF_GEMV_BW, ROOF_MEM_FILL: h200-sxm gives
-- no stream fraction), overlap = hypot when tc >= tm, else tm + (tc/tm)^2
-- (hypot - tm) (roof_overlap).  Tolerance 1e-9 relative: same formulas.
t.is(d.stream, nil, "h200-sxm: no fp8 stream fraction (ROOF_GEMV_BW applies)")
local rate = d.peak.fp8 * d.gemm.fp8
local hand = 0
for i, sh in ipairs(shapes) do
  local o = op(200, sh[1], sh[2])
  local tc = o.flop / (rate * eff[i])
  local tm = o.bytes / (d.mem_bw * d.hbm * 0.94) + 3.9e-6
  local hi, lo = math.max(tc, tm), math.min(tc, tm)
  local h = math.sqrt(hi * hi + lo * lo)
  hand = hand + (tc >= tm and h or tm + (tc / tm) ^ 2 * (h - tm)) + d.graph_launch
end
local model200 = layer(d, 200)
t.ok(math.abs(model200 / hand - 1) < 1e-9,
     string.format("M=200 layer %.1f us, by hand %.1f us", model200 * 1e6, hand * 1e6))

-- Against the measurement (roofline.c: 303.8 us at M = 200, 306.4 at 192):
-- no 64-row step from 192 to 200.  The swapped model prices 200 within 4%
-- of 192 (200/192 of the FLOP, both memory-near); the 64-row tiles priced
-- it 20% above.
local r200, r192 = model200 / layer(d, 192), layer(d0, 200) / layer(d0, 192)
t.ok(r200 < 1.04, string.format("M=200 / M=192 layer: %.3f (measured 0.99)", r200))
t.ok(r192 > 1.15, string.format("... the 64-row tiles' step was %.3f", r192))

-- Ops that state their own M tile (DeepGEMM's 64 rows) keep it.
local mt = op(200, 57344, 8192, { m_tile = 64 })
t.is(core.roof_op(d, mt).shape_eff, core.roof_op(d0, mt).shape_eff,
     "m_tile 64: unchanged by mma_n_step")
-- Above 256 tokens (the widest N) nothing swaps.
t.is(core.roof_op(d, op(264, 57344, 8192)).shape_eff,
     core.roof_op(d0, op(264, 57344, 8192)).shape_eff, "M=264: no swap above N 256")

-- A decode batch of 1-16 keeps the 16-wide edge (ROOF_MIN_EDGE; vLLM's
-- CUTLASS fp8 M16 config, Marlin): M = 8 prices as without the swap.
t.is(core.roof_op(d, op(8, 57344, 8192)).shape_eff,
     core.roof_op(d0, op(8, 57344, 8192)).shape_eff, "M=8: the 16-row edge, no 8-step swap")
-- A dequantising weight-only kernel (Marlin's 16-row tiles) keeps its
-- own tiles at M = 200.
local wo = op(200, 57344, 8192, { dequant = 4 })
t.is(core.roof_op(d, wo).shape_eff, core.roof_op(d0, wo).shape_eff,
     "dequant op: its kernel's tiles, no swap")

-- A bad step is refused with the field named.
for _, bad in ipairs { 3.5, 257, -8 } do
  local dd = {}
  for k, v in pairs(d0) do dd[k] = v end
  dd.mma_n_step = bad
  t.raises(function() core.roof_op(dd, op(8, 128, 128)) end, "mma_n_step",
           "mma_n_step " .. bad .. " refused", true)
end

t.done_testing()
