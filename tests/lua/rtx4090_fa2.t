-- FlashAttention-2 on the RTX 4090: the card's own attention record
-- (catalog/gpus/nvidia-ada.lua, rtx-4090 achievable.attention), from
-- apache/tvm tl_doc/flash_perf.md at bd6f9570 ("The flash-attention
-- performance on RTX-4090 GPU ... SEQ_LEN is fixed to 2k, All matmul use
-- fp16->fp32 mma"): causal, head dim 128, forward 151.19 and backward
-- 99.23 TFLOP/s, over the same card's MAMF 178.5 TFLOP/s (the gemm entry
-- holds the card at its 165.2 spec, 1.0): 0.847 and 0.556.
-- Before it, a training job naming fa2 on the card was refused ("no
-- attention kernel measurements for rtx-4090 (arch ada)").
-- Run with ./gpuplan run tests/lua/rtx4090_fa2.t.
local t = require "tap"
local gp = require "gpuplan"
local rf = require "gpuplan.roofline"

t.plan(7)

-- The device's fractions, by hand: 151.19 / 178.5 = 0.8470 forward,
-- 99.23 / 178.5 = 0.5559 backward; no sustained factor on the card or the
-- ada arch (1).  Tolerance 1e-9: the catalog writes the quotients
-- rounded to three places, 0.847 and 0.556.
local d = rf.device("rtx-4090", nil, "fa2")
t.is(d.attn_kernel, "fa2", "rtx-4090: FlashAttention-2 is the card's default kernel")
t.near(d.attn_fwd, 0.847, 1e-9, "forward 151.19 / 178.5 = 0.847 of the spec-clock peak")
t.near(d.attn_bwd, 0.556, 1e-9, "backward 99.23 / 178.5 = 0.556")
t.is(d.attn_ref_q, 2048, "read at the table's one length, 2k tokens")
-- The kernel-to-GEMM ratio the source's card shows is kept: the gemm
-- fraction is 1.0, so the forward's share of the GEMM rate is 0.847
-- (151.19 / 178.5), tolerance 1e-3 for the three-place rounding.
t.near(d.attn_fwd / d.gemm.bf16, 151.19 / 178.5, 1e-3, "forward over the card's GEMM: the measured 0.847")

-- The other AD102 cards keep no record (power-bound at 300-350 W, no
-- FlashAttention rate measured on them): naming fa2 there is still refused.
local ok, err = pcall(rf.device, "rtx-6000-ada", nil, "fa2")
t.ok(not ok and tostring(err):find("no attention kernel measurements for rtx%-6000%-ada"),
  "rtx-6000-ada: fa2 still refused (no measurement)")

-- A training step naming fa2 on the card is priced (it was refused).
local r = gp.train{ gpu = "rtx-4090", gpus = 1, seq = 2048, batch = 1, global_batch = 1,
  recompute = "full", precision = "bf16", attn_kernel = "fa2",
  model = { layers = 2, hidden = 2048, heads = 16, kv_heads = 16,
            ffn_hidden = 8192, vocab = 32000, ffn_gated = false, norm = "layer" } }
t.ok(r.step_s and r.step_s > 0, "gp.train on rtx-4090 with attn_kernel fa2: a step is priced")
