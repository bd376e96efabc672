-- torchao's float8 tensor parallelism (tensorwise scaling on PyTorch's
-- modules: torchtitan's apply_tp with float8) all-gathers the forward's
-- inputs in float8: PrepareFloat8ModuleInput casts "before the all-gather
-- (i.e. Shard -> Replicate)" (torchao/float8/float8_tensor_parallel.py).
-- The backward's gathers and the reduce-scatters stay 16-bit.
-- Run with ./gpuplan run tests/lua/float8_tp_gather.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(4)

local op = t.op

-- Llama 3 8B at TP 8 with SP, four 8192-token sequences (T = 32768): a
-- pass has two all-gathers and two reduce-scatters of the T x h buffer,
-- 32768 x 4096 x 2 B = 268 MB in bf16, c each (NVLink-bound, about 0.67
-- ms).  In float8 the forward's two gathers carry 134 MB, about c / 2:
-- forward 2 (c/2 + c) = 3 c, backward 4 c -- 0.75 of it; 2% for the
-- collectives' fixed latency, which does not halve.
local job = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, tp = 8, sp = true,
              method = "pretrain", stack = "hf", kernels = "fused", seq = 8192, batch = 4,
              global_batch = 4, recompute = "none" }
local bf = op(gp.train(job), "tp_comm")
local f8 = op(gp.train(t.with(job, { precision = "fp8", fp8_scaling = "current" })), "tp_comm")
t.near(f8.bwd, bf.bwd, 1e-12, "the backward's collectives stay 16-bit")
t.near(f8.fwd, 0.75 * f8.bwd, 0.02, "the forward's all-gathers in one byte: 3 c of 4 c")
-- Transformer Engine's modules (the megatron stack) gather in fp8 both
-- ways (tests/lua/te_fp8_gather.t): the forward's fp8 gather, ag8 =
-- m8.fwd / 2 - c with c = bf.fwd / 4 the 16-bit reduce-scatter, is the
-- backward's too -- the row-parallel linears' two on the path, and the
-- column-parallel linears' re-gathers beside their reduce-scatters
-- (train_layer.c async_tp_bwd), ov(x, w) = x - min(x, w) + 0.189 min(x, w)
-- under each linear's dgrad or wgrad half.  The same arithmetic: 1e-9.
local mj = t.with(job, { stack = "megatron", precision = "fp8", fp8_scaling = "current" })
local mr = gp.train(mj)
local m8 = op(mr, "tp_comm")
local mc = bf.fwd / 4
local mag = m8.fwd / 2 - mc
-- (tap.lua sp_bwd: 2 ag + the sum over qkv and mlp_up of ov(rs, w) +
-- ov(rg, w), w half the linear's backward; here ag = rg = mag, rs = mc)
t.near(m8.bwd, t.sp_bwd(mr, mag, mc, mag), 1e-9, "megatron fp8: the same gathers both ways")
-- Block scaling is not torchao's tensorwise TP: 16-bit gathers.
local b8 = op(gp.train(t.with(job, { precision = "fp8", fp8_scaling = "block" })), "tp_comm")
t.near(b8.fwd, b8.bwd, 1e-12, "block-scaled fp8: 16-bit gathers")
