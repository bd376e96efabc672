-- Megatron-Core's rope when YaRN scales cos and sin (model
-- rope_attention_factor != 1: gpt-oss-120b's 0.1 ln 32 + 1 = 1.3466).  Its
-- fused rope does not take the factor (core_v0.17.0 rope_utils.py
-- apply_rotary_pos_emb: "mscale ... is not supported by TE's fused RoPE.
-- Using unfused implementation."), so on the megatron stack q and k each
-- run _apply_rotary_pos_emb_bshd's PyTorch kernels (engine/train_layer.c
-- rope_unfused_costs): t * cos, -x2, cat, * sin, + and the final cat's
-- copy forward, 12 elements moved per q/k element; autograd's 15
-- backward.  The fused op moves 2 and 3.
-- Run with ./gpuplan run tests/lua/rope_yarn.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(7)

local op = t.op
-- H100 SXM streams at 3.35e12 B/s x 0.84 (the hopper arch's hbm).
local bw = 3.35e12 * 0.84
-- gpt-oss-120b: 64 query and 8 KV heads of 64 on each of 8 GPUs (tp 1,
-- ep 8), one sequence a micro-batch, bf16 activations (2 B).
local job = { model = "gpt-oss-120b", gpu = "h100-sxm", gpus = 8, ep = 8, batch = 1,
              global_batch = 8, stack = "megatron", zero = 1, precision = "bf16",
              method = "pretrain" }
local m1 = {}
for key, x in pairs(gp.catalog():get("models", "gpt-oss-120b")) do m1[key] = x end
m1.rope_attention_factor = nil
local function run(x) return gp.train(t.with(job, x)) end
local y4, y8 = run { seq = 4096 }, run { seq = 8192 }

-- q and k: (64 + 8) x 64 = 4608 elements a token; seq 8192 adds 4096
-- tokens: 18,874,368 elements.  Forward 12 elements moved each, 2 B:
-- 452,984,832 B / 2.814e12 B/s = 160.97 us; backward 15: 201.2 us.  The
-- kernels' fixed fills cancel in the difference: float rounding only,
-- 1e-6.
local de = 4096 * 4608
t.near(op(y8, "rope_kv").fwd - op(y4, "rope_kv").fwd, 12 * de * 2 / bw, 1e-6,
       "forward: the eager rope on q and k and the cat's copy, 12 elements moved")
t.near(op(y8, "rope_kv").bwd - op(y4, "rope_kv").bwd, 15 * de * 2 / bw, 1e-6,
       "backward: autograd's rope kernels, 15 elements moved")

-- Without the factor (or at 1) the fused op: 2 elements forward, and the
-- unfused one costs more than it by more than the 10 extra elements'
-- streaming time alone (10 x 2 B x 18,874,368 / 2.814e12 = 134 us at seq
-- 4096: the fused op is memory-bound too).
local f4 = gp.train(t.with(job, { seq = 4096, model = m1 }))
local m2 = t.with(m1, { rope_attention_factor = 1 })
local g4 = gp.train(t.with(job, { seq = 4096, model = m2 }))
t.near(op(g4, "rope_kv").fwd, op(f4, "rope_kv").fwd, 1e-12,
       "rope_attention_factor 1 is no scale: the fused rope")
t.ok(op(y4, "rope_kv").fwd - op(f4, "rope_kv").fwd > 10 * de * 2 / bw,
     "the scaled rope's forward exceeds the fused one by its extra traffic")

-- Only Megatron-Core falls back: the hf stack's eager modules run the
-- rope unfused either way (Hugging Face's kernel list, without the cat),
-- and with fused kernels outside Megatron (deepspeed stack) the factor
-- changes nothing.
local d_y = run { seq = 4096, stack = "deepspeed", kernels = "fused" }
local d_f = gp.train(t.with(job, { seq = 4096, model = m1, stack = "deepspeed",
                                   kernels = "fused" }))
t.near(op(d_y, "rope_kv").fwd, op(d_f, "rope_kv").fwd, 1e-12,
       "outside the megatron stack the factor does not unfuse the rope")
t.near(op(d_y, "rope_kv").fwd, op(f4, "rope_kv").fwd, 1e-12,
       "there the rope is the fused op megatron runs without the factor")

-- A bad factor is refused with the field's name.
local ok, err = pcall(gp.train, t.with(job, { seq = 4096,
  model = t.with(m1, { rope_attention_factor = 0 }) }))
t.ok(not ok and tostring(err):find("rope_attention_factor", 1, true) ~= nil,
     "rope_attention_factor 0 is an error naming the field")
