-- recompute_modules "mlpwi" (MaxText's save_dot_except_mlpwi and
-- save_dot_except_mlp remat policies, MaxText/layers/models.py): the dense
-- MLP's gate and up projections and its activation re-run in the backward,
-- the down projection not (no backward op reads its output).  The job is the
-- dgxc-benchmarking 24.11.1 MaxText Llama 2 70B recipe at 64 H100s (FSDP 64,
-- 2 sequences of 4096 a GPU, one micro-batch a step; XLA's fused kernels:
-- kernels "fused", as the recipe's case states).
-- Run with ./gpuplan run tests/lua/recompute_mlpwi.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(8)

local base = { model = "llama2-70b", gpu = "h100-sxm", gpus = 64, tp = 1, pp = 1,
               zero = 3, fsdp = "full_shard", batch = 2, global_batch = 128, seq = 4096,
               precision = "bf16", kernels = "fused", recompute = "selective",
               recompute_modules = "layernorm,core_attn" }
local r0 = gp.train(base)
local r1 = gp.train(t.with(base, { recompute_modules = "layernorm,core_attn,mlpwi" }))
local function part(r, n)
  for _, p in ipairs(r.parts) do if p.name == n then return p.seconds end end
  return 0
end
local function fwd(r, n)
  for _, o in ipairs(r.ops) do if o.name == n then return o.fwd end end
  error("no op " .. n)
end

-- FLOPs: every one of the 80 layers runs its gate and up projections again,
-- 2 x 8192 x 28672 weights, 2 FLOPs per weight per token, over the step's
-- 128 x 4096 tokens: 128 x 4096 x 2 x 80 x 2 x 8192 x 28672.  Exact but for
-- rounding (1e-9).
t.near(r1.hw_flops - r0.hw_flops, 128 * 4096 * 2 * 80 * 2 * 8192 * 28672, 1e-9,
       "mlpwi: the gate and up projections' FLOPs again")
t.ok(r1.model_flops == r0.model_flops, "mlpwi: the model FLOPs unchanged")
-- Time: one micro-batch a step, so the recompute part is 80 times the
-- re-run ops' forward seconds -- the two norms and the attention before, the
-- gate/up GEMM and the activation with mlpwi; the down projection's forward
-- (mlp_down) is not among them.  1e-9: the same sums.
t.near(part(r0, "recompute"), 80 * (fwd(r0, "attn_norm") + fwd(r0, "mlp_norm") +
         fwd(r0, "attention")), 1e-9, "layernorm, core_attn: the norms and the attention")
t.near(part(r1, "recompute") - part(r0, "recompute"),
       80 * (fwd(r1, "mlp_up") + fwd(r1, "mlp_act")), 1e-9,
       string.format("mlpwi: the gate/up GEMM and the activation again (%.3f -> %.3f s)",
         part(r0, "recompute"), part(r1, "recompute")))
-- Memory: the MLP's own tensors, 3 x 28672 x 2 = 172032 B a token (a fused
-- SwiGLU's gate and up, and the down projection's input), over 2 x 4096
-- tokens, drop out of act_layer (exact derivation in
-- tests/c/t_recomp_mlpwi.c).  1e-9: the same sums.
t.near(r0.memory.act_layer - r1.memory.act_layer, 2 * 4096 * 172032, 1e-9,
       "mlpwi: a layer keeps 172032 B a token fewer")
-- The recipe's job does not fit 80 GB without it (what the recipe states
-- it runs, at XLA_PYTHON_CLIENT_MEM_FRACTION 0.94); it does with it.
t.ok(not r0.fits and r1.fits, "the recipe's policy is what makes the job fit")
t.raises(function() gp.train(t.with(base, { model = "mixtral-8x7b", gpus = 64,
                                            recompute_modules = "mlpwi" })) end,
         "recompute_modules: mlpwi needs dense MLP layers; every layer of mixtral-8x7b is MoE",
         "mlpwi on a model of MoE layers only: refused, naming the model", true)
t.raises(function() gp.train(t.with(base, { recompute = "full",
                                            recompute_modules = "mlpwi" })) end,
         "recompute_modules applies to recompute = selective",
         "mlpwi with full recompute: refused", true)
