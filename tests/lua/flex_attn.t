-- PyTorch's FlexAttention (attn_kernel flex: torch.compile's Triton
-- templates for torch.nn.attention.flex_attention), priced as its
-- published ratio to FlashAttention-2 on the card it was timed on
-- (catalog/archs.lua, the ampere and hopper entries' flex):
--   A100: "FlexAttention achieves 90% of FlashAttention2's performance in
--   the forward pass and 85% in the backward pass" (pytorch.org/blog/
--   flexattention, 2024-08);
--   H100: "forward performance ... is ~25% faster than FlashAttention2,
--   while backward performance ... is ~3% faster than FlashAttention2"
--   (the GTC 2025 session abstract, "PyTorch at GTC 2025").
-- Run with ./gpuplan run tests/lua/flex_attn.t.
local t = require "tap"
local gp = require "gpuplan"
local rf = require "gpuplan.roofline"

t.plan(13)

-- The device's fractions: flex over fa2 on the same card is the source's
-- ratio (the sustained factor multiplies both and cancels).  Tolerance
-- 1e-9: the catalog's numbers are the products written out (0.9 x 0.61 =
-- 0.549, 0.85 x 0.53 = 0.4505, 1.25 x 0.39 = 0.4875), only rounding is
-- left -- except H100's backward, 1.03 x 0.345 = 0.35535 written 0.355:
-- 0.355 / 0.345 = 1.02899, within 1e-3 of 1.03.
local function ratio(gpu)
  local f, a = rf.device(gpu, nil, "flex"), rf.device(gpu, nil, "fa2")
  return f.attn_fwd / a.attn_fwd, f.attn_bwd / a.attn_bwd
end
local af, ab = ratio("a100-sxm-80gb")
t.near(af, 0.90, 1e-9, "A100 forward: 90% of FlashAttention-2")
t.near(ab, 0.85, 1e-9, "A100 backward: 85% of FlashAttention-2")
local hf, hb = ratio("h100-sxm")
t.near(hf, 1.25, 1e-9, "H100 forward: ~25% faster than FlashAttention-2")
t.near(hb, 1.03, 1e-3, "H100 backward: ~3% faster than FlashAttention-2")

-- Absolute, by hand: the hopper arch's sustained attention factor 0.82
-- (1500 / 1830 MHz) times 0.4875 = 0.39975 forward and times 0.355 =
-- 0.2911 backward of the dense bf16 peak.
local h = rf.device("h100-sxm", nil, "flex")
t.near(h.attn_fwd, 0.82 * 0.4875, 1e-9, "H100 flex forward fraction 0.82 x 0.4875")
t.near(h.attn_bwd, 0.82 * 0.355, 1e-9, "H100 flex backward fraction 0.82 x 0.355")
t.is(h.attn_head_pow2, true, "flex pads the head dim to a power of two (QK_HEAD_DIM_ROUNDED)")

-- A training step's attention op: the same job on one H100 under fa2 and
-- flex.  Causal 8192-token sequences, head dim 128: no length curve,
-- narrow-head curve or padding applies to either kernel at this shape,
-- so the op's compute-bound times stand in the inverse ratio of the
-- fractions: forward 1 / 1.25 = 0.8, backward 0.345 / 0.355 = 0.97183.
-- Tolerance 1e-3 (relative): Q, K, V, O's memory traffic enters through
-- the roofline's overlap of compute and memory, far below that here.
local function attn(kernel)
  local r = gp.train{ gpu = "h100-sxm", gpus = 1, seq = 8192, batch = 1,
    global_batch = 1, recompute = "full", precision = "bf16", attn_kernel = kernel,
    model = { layers = 2, hidden = 2048, heads = 16, kv_heads = 16,
              ffn_hidden = 8192, vocab = 32000, ffn_gated = false, norm = "layer" } }
  return t.op(r, "attention")
end
local fx, f2 = attn("flex"), attn("fa2")
t.near(fx.fwd / f2.fwd, 0.8, 1e-3, "H100 attention forward: flex at 0.8 of fa2's time")
t.near(fx.bwd / f2.bwd, 0.345 / 0.355, 1e-3, "H100 attention backward: flex at 0.972 of fa2's")

-- Not measured on another arch: refused, naming what the arch has.
t.raises(function() rf.device("mi300x", nil, "flex") end,
  "no measurement of attention kernel 'flex' on mi300x", "flex refused on CDNA 3", true)
t.raises(function() rf.device("b200", nil, "flex") end,
  "no measurement of attention kernel 'flex' on b200", "flex refused on Blackwell", true)

-- The shipped cases whose source says FlexAttention state it.
for _, id in ipairs { "automodel050-h100-gpt-oss-20b-bf16-ep8-fsdp8",
                      "automodel050-h100-gpt-oss-120b-bf16-ep64-fsdp64" } do
  t.is(t.shipped_case(id).workload.attn_kernel, "flex", id .. ": 'TE + DeepEP + FlexAttn'")
end

t.done_testing()
