-- fp16 on the megatron stack: the loss scaler's unscale of the fp32 main
-- grads is a pass of its own before the gradient norm ("torch._amp_
-- foreach_non_finite_check_and_unscale_(main_grads, ...)", Megatron-LM
-- megatron/optimizer/optimizer.py _unscale_main_grads_and_check_for_nan),
-- 8 B a parameter (read and write 4); and the 16-bit main grads of an
-- fp16 model (Megatron-LM's 2021 runs) are copied twice around the
-- data-parallel reduction -- flattened, divided, copied back (local DDP's
-- allreduce_gradients; torch DDP's Reducer the same) -- 3 x (2 + 2) B.
-- Run with ./gpuplan run tests/lua/fp16_megatron_optimizer.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(3)

-- A step part's seconds, 0 when the step has none (tap.lua's parts).
local function part(r, name) return t.parts(r)[name] or 0 end
-- Llama 3.2 1B on one A100-80GB, one micro-batch: the optimizer step is
-- memory-bound over every parameter, P = 1.2358B (tests/lua/bf16_hp_acc.t
-- derives it), at the A100's streaming rate 2.039 TB/s x 0.85 (the
-- catalog's hbm fraction).  fp16 against bf16, both with 16-bit main grads
-- (grad_reduce of the precision's type) and the megatron-18 recipe: the
-- same step but for the unscale (8 B) and the reduction's copies (12 B):
-- 20 B x P.  Tolerance 2%: roofline.c adds the memory pipeline's fill.
local job = { model = "llama3.2-1b", gpu = "a100-sxm-80gb", gpus = 1, method = "pretrain",
              stack = "megatron", recipe = "megatron-18", seq = 2048, batch = 1,
              global_batch = 1 }
local P = 1.2358e9
local rate = 2.039e12 * 0.85
local h16 = gp.train(t.with(job, { precision = "fp16", grad_reduce = "fp16" }))
local b16 = gp.train(t.with(job, { precision = "bf16", grad_reduce = "bf16" }))
t.near(part(h16, "optimizer") - part(b16, "optimizer"), 20 * P / rate, 0.02,
       "fp16 with 16-bit main grads: unscale 8 B and the reduction's copies 12 B a parameter")
-- fp32 main grads (grad_reduce fp32): Megatron's contiguous buffer, no
-- copies around the collective; the unscale alone, 8 B x P.
local h32 = gp.train(t.with(job, { precision = "fp16", grad_reduce = "fp32" }))
local b32 = gp.train(t.with(job, { precision = "bf16", grad_reduce = "fp32" }))
t.near(part(h32, "optimizer") - part(b32, "optimizer"), 8 * P / rate, 0.02,
       "fp16 with fp32 main grads: the unscale alone")
-- Not on the other stacks: DeepSpeed's fp16 optimizer is its own path
-- (opt_bytes_of prices only the megatron stack's).
local ds = { stack = "deepspeed", recipe = "mixed-16" }
local dh = gp.train(t.with(job, t.with(ds, { precision = "fp16" })))
local db = gp.train(t.with(job, t.with(ds, { precision = "bf16" })))
t.near(part(dh, "optimizer"), part(db, "optimizer"), 1e-9, "deepspeed: no megatron unscale pass")
