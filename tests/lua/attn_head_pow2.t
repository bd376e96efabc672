-- A fused attention kernel that tiles the head dim at the next power of
-- two: HazyResearch's Triton FlashAttention (flash_attn/flash_attn_triton.py,
-- v1.0.4: "BLOCK_HEADDIM = max(triton.next_power_of_2(d), 16)" in its
-- forward and backward launches), the kernel Megatron-DeepSpeed's
-- --use-flash-attn-triton and llm-foundry's attn_impl triton run.  Its
-- MMAs are the padded tile's: head dim 96 costs what 128 does
-- (engine/roofline.c head_block_use).  FlashAttention-2's CUDA kernels are
-- compiled per head dim (hdim96 among them): not padded.
-- Run with ./gpuplan run tests/lua/attn_head_pow2.t.
local t = require "tap"
local gp = require "gpuplan"
local rf = require "gpuplan.roofline"

t.plan(5)

t.is(rf.device("a100-sxm-40gb", nil, "triton").attn_head_pow2, true, "triton pads the head dim")
t.is(rf.device("a100-sxm-40gb", nil, "fa2").attn_head_pow2, nil, "fa2 does not")

-- The same attention work at two head dims: hidden 1536 as 16 heads of 96
-- or 12 heads of 128, one 32768-token sequence on one A100.  The core's
-- FLOPs are 4 s^2 x hidden (causal: half) either way, and at 32k both
-- head dims' shape terms are capped at their reference (the kernel's
-- 16k-and-past rate), so the forward's and backward's times differ only
-- by the tile: 128 / 96 = 4/3 for triton, 1 for fa2.  Tolerance 1e-4
-- (relative): the op's memory traffic (Q, K, V, O read and written once)
-- enters through the roofline's overlap of compute and memory, a few
-- parts in 1e6 here.
local function attn(heads, kernel)
  local r = gp.train{ gpu = "a100-sxm-40gb", gpus = 1, seq = 32768, batch = 1,
    global_batch = 1, recompute = "full", precision = "bf16", attn_kernel = kernel,
    model = { layers = 2, hidden = 1536, heads = heads, kv_heads = heads,
              ffn_hidden = 6144, vocab = 32000, ffn_gated = false, norm = "layer" } }
  return t.op(r, "attention")
end
local t96, t128 = attn(16, "triton"), attn(12, "triton")
t.near(t96.fwd / t128.fwd, 128 / 96, 1e-4, "triton forward: head dim 96 at 128's time")
t.near(t96.bwd / t128.bwd, 128 / 96, 1e-4, "triton backward: head dim 96 at 128's time")
local f96, f128 = attn(16, "fa2"), attn(12, "fa2")
t.near(f96.fwd / f128.fwd, 1, 1e-4, "fa2: head dim 96 at 128's rate, the same time")
