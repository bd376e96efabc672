-- Transformer Engine's linears gather in fp8 under an fp8 recipe, both
-- ways, and reduce in 16 bits: v1.9 _LayerNormLinear.forward writes the
-- norm in fp8 and then gathers ln_out (Userbuffers or
-- gather_along_first_dim), its backward re-gathers that fp8 ln_out, and
-- grad_output_preprocess casts dY to fp8 before the row-parallel gather
-- ("FP8 case with gather: unfused bgrad, cast, transpose for efficient
-- gather"); initialize_ub: "AllGather buffers use fp8 when using fp8
-- recipe".  engine/train_layer.c te_fp8_gather.
-- Run with ./gpuplan run tests/lua/te_fp8_gather.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(5)

local op = t.op

-- Llama 3 8B at TP 8 with SP on Megatron-Core (TE modules), four
-- 8192-token sequences (T = 32768): a pass has two all-gathers and two
-- reduce-scatters of the T x h buffer, 32768 x 4096 x 2 B = 268 MB in
-- bf16, c each (NVLink-bound, about 0.67 ms): 4 c a pass.  Under fp8 the
-- two gathers carry 134 MB, about c / 2: 2 (c/2 + c) = 3 c a pass, 0.75
-- of bf16's, forward and backward alike; 2% for the collectives' fixed
-- latency, which does not halve.
local job = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, tp = 8, sp = true,
              method = "pretrain", stack = "megatron", seq = 8192, batch = 4,
              global_batch = 4, recompute = "none" }
local bf = op(gp.train(job), "tp_comm")
local r8 = gp.train(t.with(job, { precision = "fp8" }))
local f8 = op(r8, "tp_comm")
t.near(f8.fwd, 0.75 * bf.fwd, 0.02, "TE fp8: the forward's gathers in one byte, 3 c of 4 c")
-- The backward (train_layer.c async_tp_bwd): the two row-parallel
-- linears' gathers of dY in fp8 on the path, and for qkv and mlp_up the
-- bf16 reduce-scatter of the input gradient under the wgrad half and the
-- fp8 re-gather of the kept ln_out shard under the dgrad half, each
-- ov(x, w) = x - min(x, w) + 0.189 min(x, w).  From the forwards: rs = c
-- = bf.fwd / 4 (ag = rs in bf16 at these bytes), ag8 = f8.fwd / 2 - c.
-- The same arithmetic: 1e-9.
local c = bf.fwd / 4
local ag8 = f8.fwd / 2 - c
-- (tap.lua sp_bwd: 2 ag + the sum over qkv and mlp_up of ov(rs, w) +
-- ov(rg, w), w half the linear's backward; here ag = rg = ag8, rs = c)
t.near(f8.bwd, t.sp_bwd(r8, ag8, c, ag8), 1e-9, "TE fp8: the backward's gathers and re-gathers in one byte")
-- Current scaling gathers quantized too (TE 2.x gather_along_first_dim
-- with the input quantizer): the same 3 c.
local cs = op(gp.train(t.with(job, { precision = "fp8", fp8_scaling = "current" })), "tp_comm")
t.near(cs.fwd, f8.fwd, 1e-12, "TE current scaling: the same fp8 gathers")
-- Block scaling (priced as MXFP8) gathers its E8M0 scales with the data,
-- one byte per 32 elements: c/2 x (1 + 1/32) per gather, 2 (c/2 x 33/32
-- + c) = 3.03125 c -- 3.03125 / 3 = 1.0104 of the per-tensor fp8 pass;
-- 1% for the latency share, which does not grow with the bytes.
local bs = op(gp.train(t.with(job, { precision = "fp8", fp8_scaling = "block" })), "tp_comm")
t.near(bs.fwd, 1.0104 * f8.fwd, 0.01, "block-scaled fp8 gathers its scales too")
-- A MoE layer's second gather is the dispatcher's (Megatron-Core's own,
-- 16-bit): Mixtral 8x7B at TP 8 with SP, T = 32768, h 4096 -- the same c:
-- 2 ((c/2 + c)/2 + c) = 3.5 c of 4 c, 0.875; 2% for the latency.
local mx = t.with(job, { model = "mixtral-8x7b" })   -- the same layout and tokens
local mb = op(gp.train(mx), "tp_comm")
local m8 = op(gp.train(t.with(mx, { precision = "fp8" })), "tp_comm")
t.near(m8.fwd, 0.875 * mb.fwd, 0.02, "MoE: the attention's gather in fp8, the dispatcher's in bf16")
