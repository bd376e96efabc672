-- Transformer Engine's CK / aiter fused attention on CDNA 3 (catalog/
-- archs.lua cdna3 attention, kernel "ck"): AMD's own MI300X table
-- (ROCm/aiter op_tests/cpp/mha/README.md, bf16, head dim 128, causal, 64
-- query / 8 KV heads, batch 1, 8192 tokens) has the v3 forward at 518.29
-- and the backward with fp32 dQ atomics at 433.285 TFLOPS of 1307.4:
-- 0.396 / 0.331, where the attention was priced as a GEMM of its shape
-- before (about 672 TFLOP/s both ways).
-- Run with ./gpuplan run tests/lua/attn_ck_cdna3.t.
local t = require "tap"
local gp = require "gpuplan"
local catalog = require "gpuplan.catalog"
local rf = require "gpuplan.roofline"

t.plan(7)

local cb = catalog.load { require("gpuplan.config").root .. "/catalog" }

-- Both CDNA 3 boards take the arch's entry; no sustained factor (none
-- measured on CDNA 3), so the fractions stand as stored.  Exact.
local d = rf.device("mi300x", cb)
t.is(string.format("%s %.12g %.12g", d.attn_kernel, d.attn_fwd, d.attn_bwd), "ck 0.396 0.331",
  "mi300x: ck at the aiter table's forward and a32 backward fractions")
local d3 = rf.device("mi325x", cb)
t.is(string.format("%s %.12g %.12g", d3.attn_kernel, d3.attn_fwd, d3.attn_bwd), "ck 0.396 0.331",
  "mi325x: the same die, the arch's entry")
-- The length curve: forward + backward together in the FA convention,
-- 3.5 / (1/fwd + 2.5/bwd): 454.6 at 8192, 464.3 at 10240, 442.3 at
-- 16384, as rates over the 8k one.  Exact (the catalog's quotients).
local pts = {}
for _, p in ipairs(d.attn_long or {}) do pts[#pts + 1] = string.format("%d:%.12g", p[1], p[2]) end
t.is(table.concat(pts, " "), string.format("10240:%.12g 16384:%.12g", 464.3 / 454.6, 442.3 / 454.6),
  "mi300x ck: the table's 10k and 16k rates over its 8k one")

-- End to end: Llama 2 70B (64 heads of 128) on one MI300X, one causal
-- sequence of s tokens.  A layer's causal forward counts the unmasked
-- half, F = 2 s^2 x 64 x 128 (at 8192: 1.0995e12 FLOP), the backward
-- 2.5 F; at the reference the shape terms are 1, so the forward takes
-- F / (0.396 x 1307.4e12) = 2.1238 ms and the backward 2.5 F / (0.331 x
-- 1307.4e12) = 6.3520 ms.  Tolerance 0.5%: each pass adds the arch's 4 us
-- launch (0.19% of the forward).
local job = { model = "llama2-70b", gpu = "mi300x", gpus = 1, method = "full", seq = 8192,
              batch = 1, global_batch = 1, recompute = "none", stack = "megatron",
              flash = true, precision = "bf16" }
local function attn(s)
  local r = gp.train(t.with(job, { seq = s }))
  for _, o in ipairs(r.ops) do if o.name == "attention" then return o end end
end
local P = 1307.4e12
local function F(s) return 2 * s ^ 2 * 64 * 128 end
local a8 = attn(8192)
t.near(a8.fwd, F(8192) / (0.396 * P), 0.005, "MI300X 8k: forward at 0.396 of the peak")
t.near(a8.bwd, 2.5 * F(8192) / (0.331 * P), 0.005, "MI300X 8k: backward at 0.331 of the peak")
-- At 16384 the curve's 442.3 / 454.6 = 0.973 slows both passes alike
-- (the table's 16k backward falls to 412.04 while its forward rises to
-- 541.55; the curve holds their FA-convention sum).
local c16 = 442.3 / 454.6
local a16 = attn(16384)
t.near(a16.fwd, F(16384) / (0.396 * P * c16), 0.005, "MI300X 16k: forward on the table's curve")
t.near(a16.bwd, 2.5 * F(16384) / (0.331 * P * c16), 0.005, "MI300X 16k: backward on the table's curve")
