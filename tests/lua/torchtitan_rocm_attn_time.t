-- What the torchtitan MI300X rows (torchaofp8-mi300xx8-llama3-8b-fsdp2-*)
-- price their SDPA at: the catalog's CDNA3 CK (aiter v3 asm) rates, the
-- fastest attention measured on the card.  The kernel those runs executed
-- is AOTriton's (PyTorch's ROCm FLASH_ATTENTION backend unless the user
-- picks CK; at 2.9.0.dev20250811 AOTriton 0.10b, whose gfx942 kernels are
-- Triton's, AITER's asm ones only from 0.11b), for which no published
-- MI300X rate was found (docs/validation.md, the torchao float8 section).
-- This pins the priced attention the negative there reasons from: if it
-- moves, the rate a slower AOTriton would need to close the rows' gap
-- (about 79 TFLOP/s forward + backward) moves with it.
-- Run with ./gpuplan run tests/lua/torchtitan_rocm_attn_time.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(3)

-- The bf16 row's job as `gpuplan validate --explain` prints it (no
-- attn_kernel: off NVIDIA the torchtitan profile names none).
local r = gp.train{
  batch = 1, cp = 1, ep = 1, flash = true, fsdp = "full_shard", fsdp_root_gathered = true,
  fsdp_version = 2, global_batch = 8, gpu = "mi300x", gpus = 8, gpus_per_node = 8,
  grad_reduce = "fp32", kernels = "fused", kv_repeat = true, margin = 0,
  method = "pretrain", pp = 1, precision = "bf16", recompute = "op", seq = 8192,
  sp = false, split_proj = true, stack = "hf", tp = 1, zero = 3,
  model = { ffn_gated = true, ffn_hidden = 14336, heads = 32, hidden = 4096,
            id = "Llama 3 8B", kv_heads = 8, layers = 32, norm = "rms",
            split_proj = "both", tied_embeddings = false, vocab = 128256 },
}
local attn
for _, op in ipairs(r.ops) do if op.name == "attention" then attn = op end end

-- Forward, one layer: causal attention at 8192 tokens, 32 heads of 128,
-- the FA convention's unmasked half of 4 s^2 h d: 2 x 8192^2 x 4096 =
-- 5.4976e11 FLOP, at CK's forward 518.29 TFLOP/s (aiter README, MI300X,
-- 8192 causal; 0.3964 of 1307.4) = 1.0607 ms.  Tolerance 1%: the catalog
-- rounds the fraction to 0.396 and the long-sequence curve rescales it
-- by its ratio at 8192 (both within 0.3%).
t.near(attn and attn.fwd or 0, 5.4976e11 / 518.29e12, 0.01,
       "mi300x attention forward: CK's 518 TFLOP/s")
-- Backward: 2.5 x the forward's FLOP (5 matmuls against 2) = 1.3744e12 at
-- CK's fp32-atomic backward 433.285 TFLOP/s = 3.172 ms; same tolerance.
t.near(attn and attn.bwd or 0, 2.5 * 5.4976e11 / 433.285e12, 0.01,
       "mi300x attention backward: CK's 433 TFLOP/s")
-- The step's attention: 32 layers x (1.0607 + 3.172) ms = 0.1354 s, about
-- a sixth of the 0.879 s step and a fifth of the 0.644 s the bf16 row's
-- measured 1.524 s (8192 / 5376.5) leaves over it.  Tolerance 1%, as above.
t.near(attn and 32 * (attn.fwd + attn.bwd) or 0,
       32 * (5.4976e11 / 518.29e12 + 2.5 * 5.4976e11 / 433.285e12), 0.01,
       "mi300x attention a step: 0.135 s at CK's rates")
