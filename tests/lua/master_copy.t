-- Megatron's optimizers step the fp32 master and copy it to the 16-bit
-- weights in a pass of their own (master_copy; DistributedOptimizer.
-- _copy_main_params_to_model_params, "shard_model_param.data.copy_(
-- shard_main_param)", megatron/core/optimizer/distrib_optimizer.py): the
-- master read again, 4 B a parameter beside the weights' write the fused
-- step already counts.  Run with ./gpuplan run tests/lua/master_copy.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(7)

-- A step part's seconds, 0 when the step has none (tap.lua's parts).
local function part(r, name) return t.parts(r)[name] or 0 end
-- Llama 3.2 1B on one A100-80GB, one micro-batch: the optimizer step is
-- memory-bound over every parameter, P = 1.2358B (tests/lua/bf16_hp_acc.t
-- derives it), at the A100's streaming rate 2.039 TB/s x 0.85 (the
-- catalog's hbm fraction).  The copy reads the fp32 master: 4 B x P more
-- (megatron-18's master is 4 B).  Tolerance 2%: roofline.c adds the
-- memory pipeline's fill.
local job = { model = "llama3.2-1b", gpu = "a100-sxm-80gb", gpus = 1, method = "pretrain",
              stack = "megatron", recipe = "megatron-18", seq = 2048, batch = 1,
              global_batch = 1, precision = "bf16" }
local P = 1.2358e9
local rate = 2.039e12 * 0.85
local on = gp.train(t.with(job, { master_copy = true }))
local off = gp.train(t.with(job, { master_copy = false }))
t.near(part(on, "optimizer") - part(off, "optimizer"), 4 * P / rate, 0.02,
       "the copy after Adam reads the fp32 master: 4 B a parameter")
-- The megatron stack's default is the copy (Megatron's own optimizers).
local dflt = gp.train(job)
t.near(part(dflt, "optimizer"), part(on, "optimizer"), 1e-12, "on by default with stack megatron")
-- With 16-bit main grads (grad_reduce bf16: the fp32 copy of each grad
-- Adam steps) the copy is the same 4 B.
local on16 = gp.train(t.with(job, { master_copy = true, grad_reduce = "bf16" }))
local off16 = gp.train(t.with(job, { master_copy = false, grad_reduce = "bf16" }))
t.near(part(on16, "optimizer") - part(off16, "optimizer"), 4 * P / rate, 0.02,
       "bf16 main grads: the same 4 B a parameter")
-- Sharded by the distributed optimizer (zero 1 over 8 GPUs) the copy is
-- the shard's: P / 8 x 4 B.  Same tolerance.
local z1 = t.with(job, { gpus = 8, zero = 1, global_batch = 8 })
local zon = gp.train(t.with(z1, { master_copy = true }))
local zoff = gp.train(t.with(z1, { master_copy = false }))
t.near(part(zon, "optimizer") - part(zoff, "optimizer"), 4 * P / 8 / rate, 0.02,
       "zero 1: the shard's copy, P / 8 parameters")
-- Off the megatron stack the option is refused, naming it; the hf
-- stack's default leaves its foreach AdamW step as it was.
local ok, err = pcall(gp.train, t.with(job, { stack = "hf", master_copy = true }))
t.ok(not ok and tostring(err):find("master_copy", 1, true), "stack hf: refused, naming master_copy")
local ok2, err2 = pcall(gp.train, t.with(job, { kernels = "eager", master_copy = true }))
t.ok(not ok2 and tostring(err2):find("kernels = fused", 1, true),
     "kernels eager: refused, naming the kernels it needs")
local hf = gp.train(t.with(job, { stack = "hf" }))
local hf0 = gp.train(t.with(job, { stack = "hf", master_copy = false }))
t.near(part(hf, "optimizer"), part(hf0, "optimizer"), 1e-12, "stack hf: off by default")
