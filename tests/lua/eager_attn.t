-- Hugging Face's eager attention, kernel by kernel (engine/train_price.c
-- train_attn_time, engine/memory_act.c): the softmax PyTorch runs for the
-- 16-bit type, the clamp of transformers' 2023 modules (attn_clamp) and
-- OPT's scaling of q instead of the scores (attn_scale_q), GPT-2's
-- torch.where causal mask before the additive one (attn_where), its
-- q, k and v copied by torch.matmul from c_attn's views and OPT's by its
-- own .contiguous() (attn_head_copies).
-- Run with ./gpuplan run tests/lua/eager_attn.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(28)

-- LLaMA-2-7B (32 heads of 128) on one A100, one 512-token sequence a
-- micro-batch, the hf stack's eager modules with the unfused attention,
-- no dropout.  The attention op (engine/model_ops.c op_attn, unfused) is
-- 32 batched 512 x 512 x 128 matmul pairs: FLOP 2 T kv heads (dqk + dv)
-- = 2 x 512 x 512 x 32 x 256 = 4,294,967,296 forward, twice that
-- backward; its own transfers act = T heads (dqk + dv) + 4 heads q kv =
-- 4,194,304 + 33,554,432 = 37,748,736 elements of A = 2 B (twice that
-- backward), and the eager kernels' bytes a score on top (s2 = 32 x 512 x
-- 512 = 8,388,608 scores):
--   forward  7A + 4 + (A + 4) - 4A = 16, + 8 when the softmax converts
--            to fp32 first (bf16; fp16's softmax converts inside);
--   backward 6A + 12 + 2 (A + 4) - 8A = 20, - 8 when the softmax
--            backward writes fp16 itself;
--   attn_clamp   + 2A forward, + 9A + 4 backward;
--   eager_softmax = false (softmax on the 16-bit scores, no dtype:
--            Baichuan's modeling_baichuan.py) in place of the first two:
--            forward QK^T A, scale 2A, mask 2A, softmax 2A, PV A = 8A,
--            less op_attn's 4A: 4A = 8; backward dP A, softmax 3A, scale
--            2A, dQ dK dV 3A = 9A, less 8A: A = 2;
--   attn_scale_q + 2A (q - s2) each way, q = 512 x 4096 elements;
--   attn_where   + 2A each way (the where reads and writes the scores;
--            backward where(condition, grad, 0) reads and writes dS);
--   attn_head_copies + 2A (q + k + v) backward (each gradient copied
--            back from [b, heads, s, d] to the projections' layout by the
--            view's backward), and forward the same: "matmul" when a
--            micro-batch holds more than one sequence (matmul's reshape of
--            the [b, heads, s, d] views to the bmm's [b x heads, s, d]
--            copies each), "contiguous" always (OPT's _shape); q = k = v =
--            b x 512 x 4096 elements (32 kv heads: no GQA).  At batch 2 every count above doubles (s2,
--            q, FLOP, ACT: 64 batched matmul pairs).
-- Each pass is one roofline op (engine/train_price.c train_t_op: CUDA
-- graphs' launch gap), priced here by gp.roofline on the same numbers:
-- equal up to the order of the sums (relative 1e-9).
local base = { model = "llama2-7b", gpu = "a100-sxm-80gb", gpus = 1, method = "full",
  seq = 512, batch = 1, global_batch = 1, flash = false, dropout = false, stack = "hf",
  precision = "bf16", recompute = "none" }
local s2, q = 32 * 512 * 512, 512 * 4096
local FLOP, ACT = 2 * 512 * 512 * 32 * 256, 512 * 32 * 256 + 4 * 32 * 512 * 512
local function roof(flop, bytes, prec, mb)
  return gp.roofline { gpu = "a100-sxm-80gb", op = { flop = flop, bytes = bytes, m = 512,
    n = 512, k = 128, count = 32 * mb, prec = prec, graphs = true } }.op.time
end
local function want(prec, extra)
  local mb = extra.batch or 1
  local s2, q, FLOP, ACT = mb * s2, mb * q, mb * FLOP, mb * ACT
  local fwd = 16 + (prec == "bf16" and 8 or 0)
  local bwd = 20 - (prec == "fp16" and 8 or 0)
  if extra.eager_softmax == false then fwd, bwd = 8, 2 end
  local f, b = 2 * ACT + fwd * s2, 4 * ACT + bwd * s2
  if extra.attn_clamp then f, b = f + 4 * s2, b + 22 * s2 end
  if extra.attn_scale_q then f, b = f + 4 * (q - s2), b + 4 * (q - s2) end
  if extra.attn_where then f, b = f + 4 * s2, b + 4 * s2 end
  if extra.attn_head_copies then
    b = b + 2 * 2 * 3 * q
    if mb > 1 or extra.attn_head_copies == "contiguous" then f = f + 2 * 2 * 3 * q end
  end
  return roof(FLOP, f, prec, mb), roof(2 * FLOP, b, prec, mb)
end
local function attn(extra)
  local r = gp.train(t.with(base, extra))
  local op = t.op(r, "attention")
  if op then return op.fwd, op.bwd, r end
end
local function check(extra, what)
  local f, b = attn(extra)
  local wf, wb = want(extra.precision or "bf16", extra)
  t.ok(math.abs(f / wf - 1) < 1e-9 and math.abs(b / wb - 1) < 1e-9,
    string.format("%s (forward %.6g s want %.6g, backward %.6g want %.6g)", what, f, wf, b, wb))
end

check({}, "bf16: the softmax converts to fp32 first")
check({ precision = "fp16" }, "fp16: the softmax converts inside, both ways")
check({ attn_clamp = true }, "attn_clamp: torch.max's pass and its five backward kernels")
check({ attn_scale_q = true }, "attn_scale_q: q scaled, not the scores")
check({ attn_clamp = true, attn_scale_q = true, precision = "fp16" },
  "OPT's fp16 attention of 2023: all three")
check({ eager_softmax = false }, "eager_softmax false: one 16-bit softmax kernel each way")
check({ eager_softmax = false, attn_clamp = true, precision = "fp16" },
  "Baichuan's attention: clamp and a 16-bit softmax (fp16 the same bytes)")
check({ eager_softmax = false, attn_where = true, precision = "fp16" },
  "transformers 4.12's GPT-2 attention: the where's pass each way, a 16-bit softmax")
check({ batch = 2, global_batch = 2, eager_softmax = false, precision = "fp16" },
  "two sequences a micro-batch, no copies stated: every count doubles")
check({ eager_softmax = false, attn_where = true, attn_head_copies = "matmul",
        precision = "fp16" },
  "GPT-2's views at one sequence: matmul flattens them as views, the gradients copied back")
check({ batch = 2, global_batch = 2, eager_softmax = false, attn_where = true,
        attn_head_copies = "matmul", precision = "fp16" },
  "GPT-2's views at two sequences: q, k, v copied forward too")
check({ attn_clamp = true, attn_scale_q = true, attn_head_copies = "contiguous",
        precision = "fp16" },
  "OPT's _shape at one sequence: its .contiguous() copies q, k, v forward all the same")
-- What it keeps: the 16-bit softmax output alone, 4 B a score less than
-- the fp32 output beside its copy (memory_act.c core: 4 + A against A).
t.is(select(3, attn { eager_softmax = false }).memory.act_layer,
  select(3, attn {}).memory.act_layer - 4 * s2, "eager_softmax false keeps A a score, not 4 + A")
-- The clamp keeps its input, the masked scores: A = 2 B a score more per
-- layer, exact (whole bytes).
local _, _, r0 = attn {}
local _, _, r1 = attn { attn_clamp = true }
t.is(r1.memory.act_layer - r0.memory.act_layer, 2 * s2, "attn_clamp: the masked scores kept")
t.is(select(3, attn { attn_scale_q = true }).memory.act_layer, r0.memory.act_layer,
  "attn_scale_q keeps nothing more (a scalar product saves no operand)")
-- The where's backward needs only its condition, the [1, 1, s, s] mask
-- slice, not the scores: nothing more a score is kept.
t.is(select(3, attn { attn_where = true }).memory.act_layer, r0.memory.act_layer,
  "attn_where keeps no scores (its backward reads the mask alone)")
-- The bmm keeps matmul's copies in place of the c_attn output's views:
-- as many elements, nothing more kept.
t.is(select(3, attn { batch = 2, global_batch = 2, attn_head_copies = "matmul" })
  .memory.act_layer, select(3, attn { batch = 2, global_batch = 2 }).memory.act_layer,
  "attn_head_copies keeps nothing more (the copies in place of the views)")

-- Errors name the option.
t.raises(function() gp.train(t.with(base, { flash = true, attn_scale_q = true })) end,
  "train: attn_scale_q changes the eager attention's pass over the scores: it needs flash = "
    .. "false", "attn_scale_q with a fused attention kernel", true)
-- gpuplan.memory's refusals open with the caller's name, as gp.train's
-- own do ("train: attn_scale_q ..." above): attn_clamp's read without it.
t.raises(function() gp.train(t.with(base, { flash = true, attn_clamp = true })) end,
  "train: attn_clamp is the eager attention's torch.max over the masked scores: it needs "
    .. "flash = false", "attn_clamp with a fused attention kernel, opening with train:", true)
t.raises(function() gp.sweep { model = "llama2-7b", gpu = "a100-sxm-80gb", gpus = 1,
                               stack = "hf", flash = true, attn_clamp = true } end,
  "sweep: attn_clamp is the eager attention's", "gp.sweep names itself", true)
t.raises(function() gp.memory { model = "llama2-7b", gpu = "a100-sxm-80gb", flash = true,
                                attn_clamp = true } end,
  "attn_clamp is the eager attention's", "gp.memory's words as they were (fit's too)", true)
-- A refusal gpuplan.memory wrote as its own ("memory: model is required")
-- names the function called.
t.raises(function() gp.train { gpu = "h100-sxm" } end, "train: model is required",
  "gp.train without a model: train:, not memory:", true)
t.raises(function() gp.train(t.with(base, { kernels = "fused", attn_scale_q = true })) end,
  "attn_scale_q is Hugging Face's eager attention", "attn_scale_q with fused kernels")
t.raises(function() gp.train(t.with(base, { flash = true, attn_where = true })) end,
  "train: attn_where changes the eager attention's pass over the scores: it needs flash = "
    .. "false", "attn_where with a fused attention kernel", true)
t.raises(function() gp.train(t.with(base, { kernels = "fused", attn_where = true })) end,
  "attn_where is Hugging Face's eager attention", "attn_where with fused kernels")
t.raises(function() gp.train(t.with(base, { flash = true, attn_head_copies = "matmul" })) end,
  "train: attn_head_copies changes the eager attention's pass over the scores: it needs "
    .. "flash = false", "attn_head_copies with a fused attention kernel", true)
t.raises(function() gp.train(t.with(base, { attn_head_copies = "view" })) end,
  "train: attn_head_copies must be matmul or contiguous (got string 'view')", "attn_head_copies unknown",
  true)
t.raises(function() gp.train(t.with(base, { attn_scale_q = "yes" })) end,
  "attn_scale_q must be true or false", "attn_scale_q not a boolean")

t.done_testing()
