-- A padded micro-batch under transformers' FlashAttention-2 (pad_mask):
-- LlamaModel.forward keeps the 2-D mask when it holds a 0, and
-- LlamaFlashAttention2's _upad_input gathers q, k and v into the varlen
-- layout (index_first_axis) and pad_input scatters the output back;
-- the backward gathers the output's gradient and scatters q's, k's and
-- v's (engine/train_layer.c layer_extras).  Run with
-- ./gpuplan run tests/lua/pad_mask.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(8)

local op = t.op
-- Llama-2-7B's shape (MHA: q, k and v each hidden wide) on one A100.
local job = { model = "llama2-7b", gpu = "a100-sxm-80gb", gpus = 1, method = "full",
              seq = 1024, batch = 1, global_batch = 1, stack = "hf", kernels = "eager",
              recompute = "full" }
local on1 = gp.train(t.with(job, { pad_mask = true }))
local on2 = gp.train(t.with(job, { pad_mask = true, batch = 2, global_batch = 2 }))
local off = gp.train(job)

t.ok(op(off, "pad_mask") == nil, "no padding mask: flash_attn_func, no gathers")
t.ok(on1.step_s > off.step_s, "the gathers and scatters lengthen the step")

-- Each kernel costs bytes / r + c (r the streaming rate, c its fill
-- and launch).  Doubling the micro-batch's tokens T cancels c: the
-- forward moves 5 q + 4 kv elements of T hidden (q's, k's and v's
-- gathers 2 each, pad_input's zeros 1 and index_put 2), with MHA 9 T h
-- A; the residual adds move 2 x 3 T h A = 6 T h A, so the increments
-- stand 9 : 6 = 1.5.  The backward moves 5 q + 6 kv = 11 T h A:
-- 11 : 9 against the forward.  1e-6: rounding only.
local pf = op(on2, "pad_mask").fwd - op(on1, "pad_mask").fwd
local pb = op(on2, "pad_mask").bwd - op(on1, "pad_mask").bwd
local rf = op(on2, "residual").fwd - op(on1, "residual").fwd
t.near(pf / rf, 9 / 6, 1e-6, "forward: 9 T h A moved against the residual adds' 6")
t.near(pb / pf, 11 / 9, 1e-6, "backward: 11 T h A against the forward's 9")

-- GQA (Llama 3 8B: 32 query heads, 8 kv heads of 128): kv = q / 4, so
-- the forward moves 5 + 4/4 = 6 q-widths and the backward 5 + 6/4 =
-- 6.5: 13 : 12.
local g = t.with(job, { model = "llama3-8b", pad_mask = true })
local g1, g2 = gp.train(g), gp.train(t.with(g, { batch = 2, global_batch = 2 }))
t.near((op(g2, "pad_mask").bwd - op(g1, "pad_mask").bwd) /
       (op(g2, "pad_mask").fwd - op(g1, "pad_mask").fwd), 6.5 / 6, 1e-6,
       "GQA: the kv gathers a quarter of q's")

-- The path is transformers' FlashAttention-2 on its eager modules: a
-- fused stack, or no flash (the mask added to the eager scores), is
-- refused rather than ignored.
t.raises(function() gp.train(t.with(job, { pad_mask = true, stack = "megatron",
                                           kernels = "fused" })) end,
         "train: pad_mask is transformers' FlashAttention-2 path under a padding mask; with "
         .. "kernels = fused (stack = megatron) there is none: give kernels = eager",
         "fused kernels: refused", true)
t.raises(function() gp.train(t.with(job, { pad_mask = true, flash = false })) end,
         "train: pad_mask prices transformers' FlashAttention-2 gathers of a padded "
         .. "micro-batch: it needs flash", "without flash: refused", true)
t.raises(function() gp.train(t.with(job, { pad_mask = "yes" })) end,
         "pad_mask must be true or false (got string 'yes')", "a non-boolean is refused", true)
