-- eager_norm = false under kernels = "eager": the eager modules with every
-- RMSNorm as one Triton kernel each way (torchtitan's norm_type
-- "fused_rmsnorm", FusedRMSNorm in torchtitan/models/norms.py: one
-- _rms_norm_fwd_kernel and one _rms_norm_bwd_kernel_sm a call; engine/
-- train_layer.c fused_rms_norm), the rest eager.  Liger-Kernel's RMSNorm
-- moves the same bytes, so the two share the kernel's price.
-- Run with ./gpuplan run tests/lua/fused_norm.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(11)

-- LLaMA-2-7B (h 4096, SwiGLU f 11008, 32 layers, vocab 32000) on 8 A100
-- 80GB, ZeRO 2 under the hf stack, one 4096-token sequence, flash.
local base = { model = "llama2-7b", gpu = "a100-sxm-80gb", gpus = 8, method = "full",
  zero = 2, stack = "hf", seq = 4096, batch = 1, global_batch = 64, recompute = "none" }
local eager = gp.train(t.with(base, { kernels = "eager" }))
local fn = gp.train(t.with(base, { kernels = "eager", eager_norm = false }))
local liger = gp.train(t.with(base, { kernels = "liger" }))
local fused = gp.train(t.with(base, { kernels = "fused" }))

-- The norm is the fused kernel Liger's RMSNorm is priced as: forward 2 A
-- an element and 4 B a row, backward 3 A and 4 B a row.  Same bytes,
-- same device: equal to the last bit.
t.is(t.op(fn, "attn_norm").fwd, t.op(liger, "attn_norm").fwd,
  "fused_rmsnorm: the norm's forward is one kernel, Liger's")
t.is(t.op(fn, "mlp_norm").bwd, t.op(liger, "mlp_norm").bwd,
  "fused_rmsnorm: the norm's backward is one kernel, Liger's")
-- Each is bytes / R + K on the same device, so backward less forward is
-- the A-byte element more (3 A - 2 A) over T x h elements, A T h / R, the
-- rows' 4 B cancelling; Liger's SwiGLU moves 5 A against 3 A over T x f:
-- 2 A T f / R.  Their ratio is h / (2 f) = 4096 / 22016 (float rounding
-- only: 1e-9).
local nm, sw = t.op(fn, "attn_norm"), t.op(liger, "mlp_act")
t.near((nm.bwd - nm.fwd) / (sw.bwd - sw.fwd), 4096 / (2 * 11008), 1e-9,
  "fused_rmsnorm: backward reads dY and X and writes dX, one A-byte element more")
-- The eager RMSNorm (8 kernels forward, 13 backward: tests/c/t_train.c)
-- costs more both ways.
t.ok(t.op(eager, "attn_norm").fwd > nm.fwd and t.op(eager, "attn_norm").bwd > nm.bwd,
  "fused_rmsnorm: cheaper than the eager module both ways")
-- The rest stays eager: the SwiGLU (silu and the product apart), the
-- rotary, the SDPA output copy and the dgrad sums.  Exact.
t.is(t.op(fn, "mlp_act").bwd, t.op(eager, "mlp_act").bwd, "fused_rmsnorm: SwiGLU stays eager")
t.is(t.op(fn, "rope_kv").fwd, t.op(eager, "rope_kv").fwd, "fused_rmsnorm: rotary stays eager")
t.is(t.op(fn, "eager_copies").bwd, t.op(eager, "eager_copies").bwd,
  "fused_rmsnorm: the eager copies and dgrad sums stay")
t.ok(liger.step_s < fn.step_s and fn.step_s < eager.step_s,
  "fused_rmsnorm: the step between Liger's (three fused modules) and the eager one")

-- Memory: the fused norm keeps its 2-byte input and the rows' rstd, not
-- the eager module's fp32 upcast and normalised tensor: 4 B an element
-- less for each of the layer's two norms, 2 x 4 x 4096 x 4096 =
-- 134,217,728 B.  Exact (whole bytes).
t.is(eager.memory.act_layer - fn.memory.act_layer, 2 * 4 * 4096 * 4096,
  "fused_rmsnorm: no fp32 copy kept")

-- Under fused kernels (Megatron / Transformer Engine, torch.compile) the
-- norm is fused already: eager_norm moves no time there, either way.
t.is(gp.train(t.with(base, { kernels = "fused", eager_norm = false })).step_s, fused.step_s,
  "kernels fused: eager_norm false changes no time")
t.is(gp.train(t.with(base, { kernels = "fused", eager_norm = true })).step_s, fused.step_s,
  "kernels fused: eager_norm true is what autograd keeps, no time")

t.done_testing()
