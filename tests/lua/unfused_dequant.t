-- Weight-only weights dequantised by a kernel of their own (gp.infer
-- unfused_dequant, engine infer_cfg.wo_unfused): DeepSpeed's
-- quantized_initialization (ZeRO-Inference's --quant_bits 4) wraps F.linear
-- so that each weight is dequantised into a new fp16 tensor, which a plain
-- 16-bit GEMM then multiplies (inference/quantization/utils.py
-- wrap_quantized_functional, DeepSpeed v0.10.3).
-- Run with ./gpuplan run tests/lua/unfused_dequant.t.
package.path = "tests/lua/?.lua;" .. package.path
local t = require "tap"
local gp = require "gpuplan"

local h, f = 7168, 28672
local q = {
  gpu = "rtx-a6000", weights = 4.5, kv = "fp16", batch = 8, input = 512, output = 32,
  runtime = "eager-pytorch",
  model = { id = "OPT-30B", layers = 48, hidden = h, heads = 56, kv_heads = 56,
            ffn_hidden = f, ffn_gated = false, ffn_act = "relu", vocab = 50272,
            tied_embeddings = true, positions = "learned", norm = "layer" },
}
local fused = gp.infer(q)
local unf = gp.infer(t.with(q, { unfused_dequant = true }))

local function rows(r, name)
  local out = {}
  for _, o in ipairs(r.ops) do if o.name == name then out[#out + 1] = o end end
  return out
end
local function row(r, name) return rows(r, name)[1] end

-- One dequantisation pass before each of the layer's four linears (qkv,
-- o_proj, mlp_up, mlp_down), 48 layers each; none where it is fused.
local dq = rows(unf, "wo_dequant")
t.is(#dq, 4, "a dequantisation pass before each of the four linears")
t.is(#rows(fused, "wo_dequant"), 0, "none when dequantised in the GEMM")
t.is(dq[1].count, 48, "once a layer each step")
-- qkv's: 3 h^2 = 154,140,672 weights read at 4.5 bits (0.5625 B) and
-- written at 2 B: 154140672 x 2.5625 = 394,985,472 B (exact in binary).
t.near(dq[1].bytes, 3 * h * h * (4.5 / 8 + 2), 1e-12, "qkv's pass: 3h^2 x (0.5625 + 2) B")
-- Its time: a memory-bound pass, its bytes at the RTX A6000's 768 GB/s
-- (catalog mem_bw) x Ampere's hbm 0.85 plus the launch (4 us) and the
-- memory pipeline's fill (roofline.c ROOF_MEM_FILL 3.9 us):
-- 394,985,472 / 652.8e9 + 7.9 us = 612.96 us.  1e-9: one division.
t.near(dq[1].time, 3 * h * h * (4.5 / 8 + 2) / (768e9 * 0.85) + 7.9e-6, 1e-9,
       "qkv's pass: its bytes at the achievable HBM rate, 612.96 us")
-- mlp_up's: h f = 205,520,896 weights x 2.5625 B.
t.near(dq[3].bytes, h * f * (4.5 / 8 + 2), 1e-12, "mlp_up's pass: h f x 2.5625 B")
-- The GEMM then reads the 16-bit copy: qkv's bytes grow by 3h^2 x (2 -
-- 0.5625) = 221,577,216 B (activations unchanged).
t.near(row(unf, "qkv").bytes - row(fused, "qkv").bytes, 3 * h * h * (2 - 4.5 / 8), 1e-12,
       "qkv's GEMM reads the 16-bit copy")
-- The step is slower: each linear's weights cost 0.5625 + 2 + 2 B of HBM
-- traffic instead of 0.5625, so a weight-bound decode step takes more
-- than 4x the linears' fused time, less than 8x (the pass at the
-- elementwise rate, the GEMM at its own).
local lin_fused, lin_unf = 0, 0
for _, n in ipairs({ "qkv", "o_proj", "mlp_up", "mlp_down" }) do
  lin_fused = lin_fused + row(fused, n).time
  lin_unf = lin_unf + row(unf, n).time
end
for _, o in ipairs(dq) do lin_unf = lin_unf + o.time end
t.ok(lin_unf > 4 * lin_fused and lin_unf < 8 * lin_fused,
     string.format("linears' decode time x%.2f (4..8: 4.5625 / 0.5625 B a weight = 8.1, "
                   .. "less the fixed activation and launch terms)", lin_unf / lin_fused))
t.ok(unf.decode.time > fused.decode.time, "the decode step is slower")

-- 16-bit weights have nothing to dequantise: refused, naming the option.
t.raises(function() gp.infer(t.with(q, { weights = "fp16", unfused_dequant = true })) end,
         "unfused_dequant dequantises weight-only weights", "refused with 16-bit weights", true)
t.raises(function() gp.infer(t.with(q, { unfused_dequant = 1 })) end,
         "unfused_dequant", "must be a boolean", true)

-- MLA's absorbed decode prices its own linears: refused there, by name.
t.raises(function() gp.infer({ model = "deepseek-v3", gpu = "h200-sxm", gpus = 8, tp = 8,
                               weights = 4.5, unfused_dequant = true }) end,
         "unfused_dequant: an unfused weight dequantisation is not priced for an MLA model",
         "refused for an MLA model", true)

t.done_testing()
