-- DeepSpeed's BF16_Optimizer (the deepspeed-bf16 recipe at ZeRO 0/1)
-- folds every micro-batch's bf16 gradients into its fp32 buffers after
-- the backward, "hp_grad.data.add_(lp.grad.data.to(hp_grad.dtype)...)"
-- (deepspeed/runtime/bf16_optimizer.py update_hp_grads): 18 B per
-- trained parameter a micro-batch (cast 2 + 4, add 4 + 4 + 4).
-- Run with ./gpuplan run tests/lua/bf16_hp_acc.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(7)

-- Llama 3.2 1B on one A100-80GB, 4 micro-batches of one 2048-token
-- sequence.  On one GPU ZeRO 2 shards nothing and gathers nothing, so
-- ZeRO 1 and 2 price the same step but for the pass (ZeRO 2 runs
-- DeepSpeed's ZeRO optimizer, not BF16_Optimizer).  The GPU holds every
-- parameter: 4 x 18 B x P at the A100's streaming rate, 2.039 TB/s x 0.85
-- (the catalog's hbm fraction).  Tolerance 2%: roofline.c adds the
-- memory pipeline's fill to the kernel.
local job = { model = "llama3.2-1b", gpu = "a100-sxm-80gb", gpus = 1, method = "full",
              seq = 2048, batch = 1, global_batch = 4, recipe = "deepspeed-bf16",
              stack = "deepspeed" }
local z1 = gp.train(t.with(job, { zero = 1 }))
local z2 = gp.train(t.with(job, { zero = 2 }))
-- Llama 3.2 1B (16 layers, hidden 2048, 32 heads of 64, 8 KV heads,
-- SwiGLU 8192, vocab 128256, tied): the embedding 128256 x 2048 =
-- 262.67M and per layer q and o 2 x 2048^2, k and v 2 x 2048 x 512, the
-- MLP 3 x 2048 x 8192 and two norms of 2048 -- 60.83M x 16 = 973.1M; the
-- final norm 2048: P = 1.2358B (tied: one table).
local layer = 2 * 2048 * 2048 + 2 * 2048 * 512 + 3 * 2048 * 8192 + 2 * 2048
local P = 128256 * 2048 + 16 * layer + 2048
t.ok(math.abs(P - 1.2358e9) < 1e6, "Llama 3.2 1B: 1.2358B parameters")
local want = 4 * 18 * P / (2.039e12 * 0.85)
-- ZeRO 2's step runs stage_1_and_2.py's own passes over its partition
-- (all P on one GPU), 40 B in bf16 (engine/train.c ds_step_passes: the
-- norm 18, flatten and cast 10, unscale 8, the master's read 4), which
-- BF16_Optimizer's ZeRO 1 step does not: the steps differ by 4 x 18 - 40 B.
local want_step = (4 * 18 - 40) * P / (2.039e12 * 0.85)
t.near(z1.step_s - z2.step_s, want_step, 0.02,
       "ZeRO 1: four micro-batches' passes over 1.24B grads, less ZeRO 2's step passes")
local function part(r, name) return t.parts(r)[name] end  -- tap.lua's parts
t.near(part(z1, "compute") - part(z2, "compute"), want, 0.02, "priced as compute")

-- No pass where BF16_Optimizer is not the optimizer: another recipe at
-- ZeRO 1, or LoRA (the adapters' grads alone).
local m16 = gp.train(t.with(job, { zero = 1, recipe = "mixed-16" }))
local m16z2 = gp.train(t.with(job, { zero = 2, recipe = "mixed-16" }))
t.near(m16.step_s, m16z2.step_s, 1e-9, "mixed-16: ZeRO 1 and 2 the same on one GPU")
local l1 = gp.train(t.with(job, { zero = 1, method = "lora" }))
local l2 = gp.train(t.with(job, { zero = 2, method = "lora" }))
t.near(l1.step_s, l2.step_s, 1e-9, "LoRA: no pass over the frozen base")

-- gp.sweep prices each layout as gp.train does, across ZeRO stages too:
-- searching ZeRO 1 and 2 together, a ZeRO-2 layout enumerated right after
-- its ZeRO-1 twin reused that one's phase, BF16_Optimizer's pass included
-- (the sweep's memo, train_step_next's TRAIN_NEXT_REUSE), so Llama 3 8B's
-- TP2 DP4 ZeRO-2 mb4 step read 1.741 s where gp.train says 1.638: the
-- 4 micro-batches' passes over its 4.0B parameters.  Every row against
-- gp.train with the row's layout; the same sums, so 1e-9 relative.
local sw = gp.sweep { model = "llama3-8b", gpu = "h100-sxm", gpus = "8", stack = "deepspeed",
                      seq = 2048, global_batch = 64, top = 400, zero = { 1, 2 } }
local bad, z2 = {}, 0
for _, c in ipairs(sw.results) do
  if c.zero == 2 then z2 = z2 + 1 end
  local r = gp.train { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, stack = "deepspeed",
    seq = 2048, global_batch = 64, zero = c.zero, batch = c.micro_batch, recompute = c.recompute,
    tp = c.tp, pp = c.pp, sp = c.sp, vpp = c.vpp, overlap_grad_reduce = c.overlap_grad_reduce,
    tp_overlap = c.tp_overlap }
  if math.abs(r.step_s - c.step_s) > 1e-9 * r.step_s then
    bad[#bad + 1] = string.format("%s: sweep %.4f, train %.4f", c.layout, c.step_s, r.step_s)
  end
end
t.ok(z2 > 10, "the sweep ranks ZeRO-2 layouts beside ZeRO-1 ones (" .. z2 .. ")")
t.is(table.concat(bad, "; "), "", "every row's step is gp.train's for its layout")
