-- fp8_scaling: where an fp8 run's cast scales come from.  Current scaling
-- (Transformer Engine's Float8CurrentScaling, torchao's tensorwise) reads
-- each tensor once more for its amax before the cast, and the norm before
-- qkv / mlp_up writes its 16-bit output for the cast instead of fp8
-- (engine/train_layer.c, gemm_costs).
-- Run with ./gpuplan run tests/lua/fp8_scaling.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(16)

local job = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, seq = 4096,
              global_batch = 8, method = "pretrain", precision = "fp8", zero = 1 }

local op = t.op

local d = gp.train(job)
local c = gp.train(t.with(job, { fp8_scaling = "current" }))
local b = gp.train(t.with(job, { fp8_scaling = "block" }))

-- H100 SXM streams at 3.35e12 B/s x 0.84 (the hopper arch's hbm) =
-- 2.814e12 B/s.  One micro-batch of 4096 tokens on one GPU (tp 1).
local bw = 3.35e12 * 0.84
local T, h, kv, ffn = 4096, 4096, 1024, 14336

-- o_proj's input (T x h, bf16) is cast by a kernel of its own: current
-- scaling adds one read of it, 2 B per element: T h 2 / bw = 11.92 us.
-- The transfers differ by that alone (same kernels, same fills), so the
-- difference is exact up to float rounding: 1e-6.
t.near(op(c, "o_proj").fwd - op(d, "o_proj").fwd, T * h * 2 / bw, 1e-6,
       "o_proj forward: + one 2-byte read of its input for the amax")
-- Backward casts dY (T x h) the same way: the same extra read.
t.near(op(c, "o_proj").bwd - op(d, "o_proj").bwd, T * h * 2 / bw, 1e-6,
       "o_proj backward: + one 2-byte read of dY")
-- mlp_up's input comes from the norm: delayed writes 1 B more per element
-- (the transposed fp8 copy, the cast fused into the norm); current writes
-- the norm in bf16 then casts it (read 2, write 1 + 1 = 4 B): 3 B more
-- per element, T h 3 / bw = 17.88 us.
t.near(op(c, "mlp_up").fwd - op(d, "mlp_up").fwd, T * h * 3 / bw, 1e-6,
       "mlp_up forward: the norm's cast unfused, 3 B more per element")
-- Its dY is gate and up, T x 2 ffn: one 2-byte read more.
t.near(op(c, "mlp_up").bwd - op(d, "mlp_up").bwd, T * 2 * ffn * 2 / bw, 1e-6,
       "mlp_up backward: + one read of dY (T x 2 ffn)")
-- qkv's dY: T x (h + 2 kv).
t.near(op(c, "qkv").bwd - op(d, "qkv").bwd, T * (h + 2 * kv) * 2 / bw, 1e-6,
       "qkv backward: + one read of dY (T x (h + 2 kv))")
-- Block scales are made in the cast kernel: one read, as delayed; but the
-- cast to both copies (rowwise, and columnwise for the wgrad) runs below
-- the streaming rate (engine/train_layer.c MXFP8_BOTH_EXTRA: Transformer
-- Engine's MXFP8 quantize of a bf16 8192 x 8192 on B200, 52.34 us for
-- both copies, ROCm/TransformerEngine PR #598's baseline column): at
-- B200's 7.67e12 x 0.85 B/s less the 3.9 us fixed part, (52.34 - 3.9) us
-- moves 4.706 B an element where 4 are priced, 0.706 B more.  o_proj's
-- input (T x h) and its dY (T x h) each pay it: T h 0.706 / bw = 4.21 us.
local mx = (52.34e-6 - 3.9e-6) * 7.67e12 * 0.85 / (8192 * 8192) - 4
t.near(op(b, "o_proj").fwd - op(d, "o_proj").fwd, T * h * mx / bw, 1e-6,
       "block: o_proj's input cast to both copies, 0.706 B an element more")
t.near(op(b, "o_proj").bwd - op(d, "o_proj").bwd, T * h * mx / bw, 1e-6,
       "block: o_proj's dY cast to both copies, 0.706 B an element more")
-- A block-scaled norm output is not written by the norm: Transformer
-- Engine's layernorm_fwd / rmsnorm_fwd (v2.9 to v2.14,
-- extensions/normalization.cpp) fuse the cast only for a delayed-scaling
-- quantizer (or an MXFP8 one under NVTE_NORM_FWD_USE_CUDNN) and otherwise
-- stay "UNFUSED": the norm writes bf16, a cast reads it (2 B) and writes
-- both copies (1 + 1 B and the 0.706 above), as current scaling's
-- (which gets its amax from the norm, no extra read).  So mlp_up's and
-- qkv's forward under block scaling are current scaling's plus the
-- both-copies surplus on their input (T x h): T h 0.706 / bw = 4.21 us
-- each; same kernels, same fills: 1e-6.
t.near(op(b, "mlp_up").fwd - op(c, "mlp_up").fwd, T * h * mx / bw, 1e-6,
       "block: the norm before mlp_up writes bf16, then a cast to both copies")
t.near(op(b, "qkv").fwd - op(c, "qkv").fwd, T * h * mx / bw, 1e-6,
       "block: the norm before qkv writes bf16, then a cast to both copies")
-- The weights' fp8 copies, cast once per step, are both copies too (TE's
-- weight quantizers take "rowwise=True, columnwise=columnwise_usage", the
-- dgrad's).  Only the layers' linears have fp8 copies (Transformer Engine
-- modules); the embedding, the output layer (a 16-bit GEMM) and the norms
-- stay 16-bit (engine/train.c phase_post).  llama3-8b (tp 1, pp 1): 32
-- layers of q, k, v, o (h (h + 2 kv) + h h = 41,943,040) and gate, up,
-- down (3 h ffn = 176,160,768): 32 x 218,103,808 = 6.979e9 weights, not
-- the catalog's 8.030e9 (its 2 x 128256 x 4096 embedding and head, and
-- the norms, are not cast).  Each pays the 0.706 B surplus once a step:
-- P 0.706 / bw = 1.75 ms of the optimizer part; one memory pass either
-- way (same fill), so exact up to float rounding: 1e-9 relative.
local L = 32
local P = L * (h * (h + 2 * kv) + h * h + 3 * h * ffn)
t.near(t.step_part(b, "optimizer").seconds - t.step_part(d, "optimizer").seconds,
       P * mx / bw, 1e-9,
       "block: the linears' once-a-step cast writes both copies, 0.706 B more each")
-- Current scaling reads each of those weights once more for its amax
-- (2 B): P 2 / bw = 4.96 ms more optimizer part, the same 1e-9.
t.near(t.step_part(c, "optimizer").seconds - t.step_part(d, "optimizer").seconds,
       P * 2 / bw, 1e-9,
       "current: the linears' once-a-step cast reads them once more for the amax")
t.ok(c.step_s > d.step_s, "current scaling's step is longer")

-- An fp8 step left without fp8_scaling takes its declared default and
-- says so (it was assumed silently); a bf16 step has no casts to scale.
local function said(r, text)
  for _, s in ipairs(r.defaults) do if s == text then return true end end
  return false
end
t.ok(said(d, "fp8_scaling=delayed"), "fp8 without fp8_scaling: 'fp8_scaling=delayed' assumed")
t.ok(not said(gp.train(t.with(job, { precision = "bf16" })), "fp8_scaling=delayed"),
  "bf16: no fp8_scaling assumed")
t.raises(function() gp.train(t.with(job, { fp8_scaling = "tensorwise" })) end,
  "fp8_scaling must be delayed, current or block", "an unknown scaling is refused")
t.raises(function() gp.train(t.with(job, { precision = "bf16", fp8_scaling = "current" })) end,
  "needs precision = fp8", "fp8_scaling without fp8 is refused")
