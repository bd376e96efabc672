-- fp8's host work beyond its kernels (engine/train_layer.c TE_FP8_*):
-- Transformer Engine PR #3523 times a module's CPU work on GB200, BF16
-- against MXFP8.  In units of the bf16 Linear's forward (59.19 us, one
-- host launch in the model) fp8 adds (114.51 - 59.19) / 59.19 = 0.935
-- to a Linear's forward and ((440.93 - 114.51) - (311.30 - 59.19)) /
-- 59.19 = 1.255 to its backward.  A grouped linear pays that share once
-- for the module; unless the scaling is delayed (one fused cast for all)
-- it then casts each further expert's rows in split_quantize's C++ loop,
-- a quantize call's host work each: TE PR #3137 times one on an Arm host
-- at 19.82 us, 19.82 / 59.19 = 0.335 of a launch, forward (the input)
-- and backward (dY).
-- Run with ./gpuplan run tests/lua/fp8_host.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(7)

local op = t.op
-- x86 host driving B200s: one launch is GP_EAGER_OP_TIME, 24.84 us, times
-- the DGX B200's host_op_scale 1.118 (a Blackwell GPU's launches cost its
-- host that much more than a Hopper's: catalog/systems/nvidia-hgx.lua),
-- 27.77 us; the expert GEMMs' host time (TE_EXPERT_GEMM) scales alike.
local hs = 1.118
local h = 24.84e-6 * hs
local fwd, bwd = (114.51 - 59.19) / 59.19, ((440.93 - 114.51) - (311.30 - 59.19)) / 59.19
local cast = 19.82 / 59.19

-- Qwen3-30B-A3B on 8 B200s, EP 8, one 4096-token sequence a micro-batch:
-- 16 local experts, their GEMMs too small to hide the host's launches
-- (the alltoall dispatcher waits on the host every layer), so the
-- layer's forward and backward cost the host's time.
-- The grouped MLP's fp8 padding copies (moe_fp8_pad copy, the alltoall
-- dispatcher's default) are held off: their host launches are the
-- padding's, not the modules' fp8 share (tests/lua/moe_fp8_pad.t).
-- capacity_factor 1: every rank runs the mean rows (the padded buffer), which the counts here take; the dropless default's chance skew is tests/lua/moe_balance.t's
local job = { model = "qwen3-30b-a3b", capacity_factor = 1, gpu = "b200", gpus = 8, ep = 8, batch = 1,
              seq = 4096, global_batch = 8, stack = "megatron", zero = 1,
              precision = "fp8", moe_fp8_pad = "none" }
local function run(x) return gp.train(t.with(job, x)) end
-- What a pass costs when its host binds: its kernels plus the host's
-- wait, the host's own time.
local function host(r, pass)
  local s = 0
  for _, o in ipairs(r.ops) do s = s + o[pass] end
  return s
end
-- The backward waits for nothing on the GPU (the dispatcher keeps its
-- splits on the host), so its host also hides under the layer's
-- backward all-to-alls, which without EP overlap sit on the GPU's path:
-- the two of the tokens' hidden states (dispatch and combine, each the
-- rank's 4096 tokens x top-8 copies x h 2048 x 2 B = 128 MiB a rank)
-- and the router probabilities' gradient (moe_probs activation,
-- Megatron's default: one bf16 value a token copy, 4096 x 8 x 2 B = 64
-- KiB), each one all-to-all over the DGX B200's 8 GPUs as gp.comm prices
-- it (NVLink, p2p: 311.4 us and 9.3 us), 632.1 us together.
local function a2a(bytes)
  return gp.comm { system = "dgx-b200", op = "all_to_all", bytes = bytes }.time
end
local a2a_bwd = 2 * a2a(4096 * 8 * 2048 * 2) + a2a(4096 * 8 * 2)

local d, b = run { fp8_scaling = "delayed" }, run { fp8_scaling = "block" }
t.ok(a2a_bwd > 600e-6 and a2a_bwd < 660e-6, "the backward's all-to-alls: 632 us")
t.ok(op(d, "host_wait").fwd > 0 and op(b, "host_wait").bwd > 0,
     "the layer's host binds both passes (the case the test needs)")
-- Block scales quantize each of the 16 experts' rows apart in both expert
-- GEMMs (moe_up, moe_down; neither norm-fused), delayed scaling once
-- each: (16 - 1) x 2 casts more, each a C++ quantize call's host work:
-- 30 x 0.335 x 27.77 us = 279.0 us forward, and the same for dY's
-- casts backward.  1e-9: the same sums.
t.near(host(b, "fwd") - host(d, "fwd"), 30 * cast * h, 1e-9,
       "block: a further expert's cast a quantize call, forward")
t.near(host(b, "bwd") - host(d, "bwd"), 30 * cast * h, 1e-9,
       "block: and dY's, backward")

-- Against bf16 the delayed-scaling layer adds one share per quantizing
-- module: the grouped linears' two fused casts (Linear, 0.935), o_proj
-- (Linear) and qkv (norm-fused LayerNormLinear: (135.42 - 83.48) /
-- 59.19 = 0.878): 3 x 0.935 + 0.878 = 3.684 launches forward.  Its
-- kernels differ too, so compare the host's own time: forward launches
-- x h plus the expert GEMMs' (unchanged).
local j16 = t.with(job, { precision = "bf16" })
j16.moe_fp8_pad = nil
local bf = gp.train(j16)
local fwd_ln = (135.42 - 83.48) / 59.19
t.near(host(d, "fwd") - host(bf, "fwd"), (3 * fwd + fwd_ln) * h, 1e-9,
       "delayed: one share a quantizing module, the norm-fused qkv's own")
t.ok(op(bf, "host_wait").fwd > 0, "bf16's forward binds on the host too")
-- The backward: 3 x 1.255 + 1.166 (LayerNormLinear) = 4.931 launches,
-- 136.9 us, beside the expert GEMMs' host and the modules' own Python
-- backward (TE_BWD_HOST, TE PR #3523: qkv's LayerNormLinear (397.73 -
-- 83.48) / 59.19 = 5.309, o_proj and the two grouped linears (311.30 -
-- 59.19) / 59.19 = 4.259 each: 18.087 launches, 502.3 us), which bf16
-- pays too.
local bwd_ln = ((518.67 - 135.42) - (397.73 - 83.48)) / 59.19
local hb_bf = 2 * 32 * 0.267e-3 / 8 * hs
  + ((397.73 - 83.48) + 3 * (311.30 - 59.19)) / 59.19 * h
t.near(host(d, "bwd"), hb_bf + (3 * bwd + bwd_ln) * h - a2a_bwd, 1e-9,
       "delayed backward: the expert GEMMs', the modules' and fp8's host, less its all-to-alls")

t.done_testing()
