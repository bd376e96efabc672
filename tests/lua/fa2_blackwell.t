-- FlashAttention-2 on GB200: the flash-attn package's Ampere kernel
-- (sm80 mma.sync, not Blackwell's tcgen05 MMAs), which Transformer
-- Engine falls back to on Blackwell where cuDNN declines the shape (head
-- dim above 128 before TE 2.5).  Its fractions come from cudnn-frontend's
-- B200 benchmark (flash-attn at Llama 3.1's 128 / 8 heads, 8192 causal:
-- forward 5.499 ms at 399.9 TFLOP/s, backward 17.288 ms at 318.0), less
-- the host dispatch the blackwell arch takes off cuDNN's calls (0.095,
-- 0.137 ms), as a share of B200's 2250, carried to GB200 by the entry's
-- 1.044 x B200 (x 2250 x 1.044 / 2500): forward 399.9 x 5.499 / 5.404 /
-- 2500 x 1.044 = 0.1700, backward 318.0 x 17.288 / 17.151 / 2500 x 1.044
-- = 0.1339 (catalog/gpus/nvidia-blackwell.lua, gb200).
-- Run with ./gpuplan run tests/lua/fa2_blackwell.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(11)

-- The fractions follow from the two measurements, to the rounding.
-- The device table holds them times the blackwell arch's sustained
-- attention factor 0.85.  Tolerance 0.001: the catalog rounds to three
-- places.
local fwd = 399.925 * 5.499 / (5.499 - 0.095) / 2500 * 1.044
local bwd = 318.004 * 17.288 / (17.288 - 0.137) / 2500 * 1.044
local dev = require("gpuplan.roofline").device("gb200", nil, "fa2")
t.near(dev.attn_fwd / 0.85, fwd, 0.001 / fwd, "fwd 0.170 from the B200 timing")
t.near(dev.attn_bwd / 0.85, bwd, 0.001 / bwd, "bwd 0.134 from the B200 timing")

-- Llama 3 8B (32 layers, 32 heads of 128) on one GB200, one 8192-token
-- sequence, nothing recomputed, the eager stack (no layout copies for
-- either kernel): the two kernels differ only in the attention core.
-- Per layer the causal forward is F/2 with F = 4 s^2 (heads x head_dim)
-- = 4 x 8192^2 x 4096, the backward 2.5 x that; both at the blackwell
-- arch's sustained attention factor 0.85 of the 2500 TFLOP/s peak, P =
-- 2125e12:
--   32 x F/2 x (1/(P 0.170) + 2.5/(P 0.134) - 1/(P 0.52) - 2.5/(P 0.40))
--   = 0.1355 s.
-- Tolerance 0.5%: each pass adds one launch to either kernel alike and
-- the rest of the step is the same.
local job = { model = "llama3-8b", gpu = "gb200", gpus = 1, method = "full",
              seq = 8192, batch = 1, global_batch = 1, recompute = "none", stack = "hf" }
local F = 4 * 8192 ^ 2 * 4096
local P = 2500e12 * 0.85
local cudnn = gp.train(t.with(job, { attn_kernel = "cudnn" }))
local fa2 = gp.train(t.with(job, { attn_kernel = "fa2" }))
local want = 32 * 0.5 * F * (1 / (P * 0.170) + 2.5 / (P * 0.134) - 1 / (P * 0.52) - 2.5 / (P * 0.40))
t.near(fa2.step_s - cudnn.step_s, want, 0.005, "GB200: FlashAttention-2 against cuDNN")

-- The eager stack's default stays the arch's cuDNN on Blackwell: PyTorch's
-- SDPA puts cuDNN first on sm100 once its cuDNN is new enough
-- (sdp_utils.cpp check_prefer_cudnn_attention), and the line says so.
local plain = gp.train(job)
t.near(plain.step_s, cudnn.step_s, 1e-12, "eager GB200 without a kernel: cuDNN, as before")
local noted = false
for _, d in ipairs(plain.defaults) do
  if d:find("PyTorch's SDPA takes cuDNN first on sm100", 1, true) then noted = true end
end
t.ok(noted, "... and the defaults line says why (SDPA's cuDNN-first rule on sm100)")

-- The dgxc 25.05 Nemotron-4 340B GB200 rows state it (head dim 192 on
-- TE bee4649): validate prices them slower than with the default
-- cuDNN.  Their attention is about 2% of the FLOPs but runs at a third
-- of cuDNN's rate, so the step grows by a few percent: more than 3%.
local V = require "gpuplan.validate"
local cat = require("gpuplan.catalog").get()
local case
for _, c in ipairs(V.read("validation/cases.json")) do
  if c.id == "dgxc2505-gb200-nemotron4-340b-bf16-128g" then case = c end
end
local stated = V.predict(case, cat).predicted
local wl = {}
for k, v in pairs(case.workload) do wl[k] = v end
wl.attn_kernel = nil
local dflt = V.predict(t.with(case, { workload = wl }), cat).predicted
t.ok(stated > 1.03 * dflt, string.format(
  "Nemotron-4 340B on 128 GB200: FlashAttention-2 %.3f s against cuDNN %.3f s", stated, dflt))

-- B200 carries the timing itself (catalog/gpus/nvidia-blackwell.lua,
-- b200): the same two measurements less the same host dispatch, as a
-- share of B200's own 2250 -- forward 399.9 x 5.499 / 5.404 / 2250 =
-- 0.1809, backward 318.0 x 17.288 / 17.151 / 2250 = 0.1425 -- times the
-- arch's sustained factor 0.85.  Tolerance 0.001: three places.
local bfwd = 399.925 * 5.499 / (5.499 - 0.095) / 2250
local bbwd = 318.004 * 17.288 / (17.288 - 0.137) / 2250
local bdev = require("gpuplan.roofline").device("b200", nil, "fa2")
t.near(bdev.attn_fwd / 0.85, bfwd, 0.001 / bfwd, "b200 fwd 0.181 from its own timing")
t.near(bdev.attn_bwd / 0.85, bbwd, 0.001 / bbwd, "b200 bwd 0.142 from its own timing")
-- Head dim 64 (Llama 3.2 1B: 16 layers, 32 heads of 64): FlashAttention-2
-- issues its MMAs at 0.181 of the SM's 8192 FLOP a clock, so its 16
-- exponentials a clock balance them at 0.181 x 8192 / 64 = 23 (its own
-- exp_dim), not at the tcgen05 kernels' 89: at 64 it runs at its head-dim-
-- 128 rate.  Per layer the causal forward is 2 x 8192^2 x (32 x 64) =
-- 2.749e11 FLOP at 0.170 of 2125e12: 7.611e-4 s; the backward 2.5 x that
-- at 0.134: 2.414e-3 s (at the arch's 89 they would be 89 / 64 = 1.39 x
-- these).  Tolerance 0.5%: one launch a pass (about 1e-6 s) on top.
local small = t.with(job, { model = "llama3.2-1b", attn_kernel = "fa2" })
local attn
for _, o in ipairs(gp.train(small).ops) do if o.name == "attention" then attn = o end end
local Fh = 2 * 8192 ^ 2 * (32 * 64)
t.near(attn.fwd, Fh / (P * 0.170), 0.005, "head dim 64: FlashAttention-2's forward at its own rate")
t.near(attn.bwd, 2.5 * Fh / (P * 0.134), 0.005, "head dim 64: its backward at its own rate")

-- Blackwell Ultra (b300) has no timing of it: asked for, it is refused
-- by name rather than priced at another die's rate.
local ok, err = pcall(gp.train, t.with(job, { gpu = "b300", attn_kernel = "fa2" }))
t.ok(not ok and tostring(err):match("fa2"), "b300 refuses fa2 by name: " .. tostring(err))
