-- kernels = "liger": the Hugging Face modules with Liger-Kernel's Triton
-- RMSNorm, RoPE and SwiGLU in place of theirs, everything else eager
-- (engine/train_layer.c liger_elem; lua/gpuplan/memory.lua for what
-- autograd keeps).  The per-op byte counts are tests/c/t_train.c's; these
-- check the declaration path and how the value combines with the rest.
-- Run with ./gpuplan run tests/lua/liger.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(9)

-- LLaMA-2-7B (h 4096, SwiGLU f 11008, 32 layers, vocab 32000) on 8
-- H100s, ZeRO 2 under the hf stack, one 4096-token sequence, flash.
local base = { model = "llama2-7b", gpu = "h100-sxm", gpus = 8, method = "full", zero = 2,
  stack = "hf", seq = 4096, batch = 1, global_batch = 64, recompute = "none" }
local eager = gp.train(t.with(base, { kernels = "eager" }))
local fused = gp.train(t.with(base, { kernels = "fused" }))
local liger = gp.train(t.with(base, { kernels = "liger" }))

-- Memory: Liger's SwiGLU saves a and b ("ctx.save_for_backward(a, b)",
-- silu recomputed), its RMSNorm X, W and the rows' rstd (no fp32 copy):
-- the fused layer's activations exactly (flash: no score tensor).
t.is(liger.memory.act_layer, fused.memory.act_layer,
  "liger keeps the fused layer's activations (no silu(gate), no fp32 norm input)")
-- Without fused_linear_ce the loss is still Hugging Face's: 6 B a logit
-- as eager (the logits' fp32 copy beside the 16-bit ones); the final
-- norm is Liger's (the fused norm's bytes), so the eager final norm's 4 B
-- an element more, 4 x 4096 x 4096 = 67,108,864 B, is gone.  Exact.
t.is(t.part(eager.memory, "logits") - t.part(liger.memory, "logits"), 4 * 4096 * 4096,
  "liger: Hugging Face's loss keeps its logits, the final norm Liger's")
-- Unfused attention stays eager (Liger replaces no attention): the eager
-- softmax's fp32 copy is kept, as eager modules with eager_swiglu and
-- eager_norm off keep it.
local nf = { flash = false, seq = 1024 }
t.is(gp.train(t.with(base, t.with(nf, { kernels = "liger" }))).memory.act_layer,
  gp.train(t.with(base, t.with(nf, { kernels = "eager", eager_swiglu = false,
    eager_norm = false }))).memory.act_layer,
  "liger with unfused attention: the eager softmax's copy stays")

-- Time: the step lies between the fused and the eager one (Liger fuses
-- three of the eager modules' operators, not the rest).
t.ok(fused.step_s < liger.step_s and liger.step_s < eager.step_s,
  "liger's step between the fused and the eager one")
-- The parts Liger leaves alone are the eager modules' own: the SDPA
-- output's copy and the q/k/v and gate/up dgrad sums.  Exact.
t.is(t.op(liger, "eager_copies").bwd, t.op(eager, "eager_copies").bwd,
  "liger: the eager copies and dgrad sums stay")
t.is(t.op(liger, "qkv").fwd, t.op(eager, "qkv").fwd, "liger: q, k and v apart, as eager")
-- SwiGLU: Liger's forward moves 6 B an ffn element (read a, b; write c),
-- its backward 10 B (read dc, a, b; write da, db); the fused op 6 and 9.
-- Each is one kernel, bytes / R + K on the same device, so the backward
-- less the forward is 4 Ef / R for Liger and 3 Ef / R fused: a ratio of
-- 4/3 (float rounding only: 1e-9).
local lg, fu = t.op(liger, "mlp_act"), t.op(fused, "mlp_act")
t.near((lg.bwd - lg.fwd) / (fu.bwd - fu.fwd), 4 / 3, 1e-9,
  "Liger's SwiGLU backward: 10 B an ffn element against the fused 9")
-- On Hopper (no eager derate) its forward is the fused op's: 6 B, 1 kernel.
t.near(lg.fwd, fu.fwd, 1e-9, "Liger's SwiGLU forward: the fused op's 6 B")

-- A bad value names the values there are.
t.raises(function() gp.train(t.with(base, { kernels = "ligr" })) end,
  "train: kernels must be eager, fused or liger (got string 'ligr')", "kernels: a bad value",
  true)

t.done_testing()
