-- Block-scaled fp8 GEMMs (fp8_scaling block on Blackwell: MXFP8, an E8M0
-- scale per 32 elements of K) run at the catalog's achievable.block_scaled
-- share of the per-tensor fp8 GEMM's rate (engine/train_layer.c
-- gemm_costs; catalog/archs.lua blackwell: 6.812 / 7.161 = 0.951, Transformer
-- Engine's GEMM profiling guide on a B300, kernels only).
-- Run with ./gpuplan run tests/lua/block_scaled.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(6)

local op = t.op
local cat = gp.catalog()
local job = { model = "llama3-8b", gpu = "b200", gpus = 8, zero = 1, seq = 4096,
              global_batch = 8, method = "pretrain", precision = "fp8", fp8_scaling = "block",
              cat = cat }

local arch = cat.archs.blackwell.achievable
t.is(arch.block_scaled.fp8, 0.951, "blackwell: block-scaled fp8 GEMMs at 0.951 of per-tensor")

local with = gp.train(job)
local saved = arch.block_scaled
arch.block_scaled = nil
local without = gp.train(job)
local cur0 = gp.train(t.with(job, { fp8_scaling = "current" }))
arch.block_scaled = saved
local cur = gp.train(t.with(job, { fp8_scaling = "current" }))

-- mlp_down's forward on one GPU (tp 1, one 4096-token micro-batch):
-- m = 4096 tokens, n = h = 4096, k = ffn = 14336, 2 m n k = 4.810e11 FLOP.
-- B200: fp8 peak 4.5e15 x its MAMF fraction 0.76 x the blackwell arch's
-- sustained 0.80; 32 x 32 = 1024 tiles of 128 on 148 SMs, 7 waves:
-- 1024 / 1036 (no split-K does better; the K loop is deeper than the
-- 8192 the fraction was measured at, no fill loss).  t_c = 177.88 us; at
-- 0.951 of that rate 1 / 0.951 - 1 = 5.15% more: 9.17 us.  The casts
-- around it are the same kernels, so the difference is the GEMM's alone;
-- tolerance 3%: the roofline's overlap with the GEMM's memory side
-- (t_m / t_c about 0.2: sqrt(1 + 0.2^2) - 1 = 2% of t_c, less at the
-- longer t_c).
local tc = 2 * 4096 * 4096 * 14336 / (4.5e15 * 0.76 * 0.80 * 1024 / 1036)
local dfwd = op(with, "mlp_down").fwd - op(without, "mlp_down").fwd
t.near(dfwd, tc * (1 / 0.951 - 1), 0.03,
       "mlp_down forward: its GEMM at 0.951 of the per-tensor rate")
-- Backward: dgrad and wgrad, the same FLOPs each, both at that share:
-- about twice the forward's difference (their shapes' wave terms differ
-- from the forward's by a few percent: 10%).
t.near(op(with, "mlp_down").bwd - op(without, "mlp_down").bwd, 2 * dfwd, 0.1,
       "mlp_down backward: dgrad and wgrad at the same share")
-- Nothing else of the step moves with it but the GEMMs: the attention
-- core (bf16 in both) is the same.
t.is(op(with, "attention").fwd, op(without, "attention").fwd, "attention: not a block-scaled GEMM")
-- Current scaling's GEMMs are per-tensor: the share does not touch them
-- (the same step with and without it in the catalog).
t.is(cur.step_s, cur0.step_s, "current scaling: per-tensor GEMMs, the share not applied")
-- Hopper's entries give no share (its 1x128 blockwise GEMMs are not
-- measured against per-tensor): an H100 run's block scaling is unchanged.
t.is(cat.archs.hopper.achievable.block_scaled, nil, "hopper: no block-scaled share stated")
