-- Transformer Engine's context-parallel ring (cp_rotate p2p) runs its
-- first step causal and the other cp - 1 without a mask
-- (AttnFuncWithCPAndKVP2P: "diagonal", then "lower-triangle" /
-- "upper-triangle" with attn_mask_type "no_mask"), each step the same
-- cq^2 / 2 scores (cq = seq / cp); the no-mask steps run at the
-- kernel's measured rate without a mask at cq / sqrt(2) over its causal
-- rate at cq (catalog/archs.lua HOPPER_*_UNMASKED; engine/train_price.c).
-- Run with ./gpuplan run tests/lua/cp_unmasked.t.
local t = require "tap"
local gp = require "gpuplan"
local catalog = require "gpuplan.catalog"
local rf = require "gpuplan.roofline"

t.plan(9)

local cb = catalog.load { require("gpuplan.config").root .. "/catalog" }

-- The device carries the measured rates as the catalog gives them.
local dc = rf.device("h100-sxm", cb, "cudnn")
t.is(table.concat(dc.attn_unmasked[3], " "), "8192 691 644 594 541",
  "h100 cudnn: cuDNN 9.19's 8k row (no_mask / top_left, forward / backward)")
t.is(rf.device("h100-sxm", cb, "triton").attn_unmasked, nil,
  "h100 triton: none measured (steps at the causal rate)")

-- The attention op of one layer, forward and backward (s), under a job.
local function attn(o)
  local r = gp.train(o)
  for _, op in ipairs(r.ops) do
    if op.name == "attention" then return op.fwd, op.bwd end
  end
end
-- Llama 3 8B on 8 H100s, Megatron, 64k tokens, CP 4 (cq = 16384): the
-- p2p ring against PyTorch's all-gather rotater, whose steps this does
-- not touch; the kernel's time is the same otherwise (the memory side
-- and the launch are far below the compute at these lengths: tolerance
-- 0.2%, the graph launch of a 10+ ms kernel).
local job = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, seq = 65536, cp = 4,
              method = "full", batch = 1, global_batch = 2, recompute = "none",
              stack = "megatron" }
local function ratio(kernel)
  local pf, pb = attn(t.with(job, { attn_kernel = kernel, cp_rotate = "p2p" }))
  local af, ab = attn(t.with(job, { attn_kernel = kernel, cp_rotate = "allgather" }))
  return pf / af, pb / ab
end
-- FlashAttention-2 (FA3 paper, forward, head dim 128): no mask 370 at 8k
-- and 16k, so 370 at cq / sqrt(2) = 11585; causal 335 at 16k.  The
-- backward takes the forward's ratio.  (1 + 3 x 335 / 370) / 4.
local f, b = ratio("fa2")
t.near(f, (1 + 3 * 335 / 370) / 4, 0.002, "fa2 forward: 1 causal step, 3 at 370 / 335")
t.near(b, (1 + 3 * 335 / 370) / 4, 0.002, "fa2 backward: the forward's ratio")
-- cuDNN 9.19 (H200, sdpa_benchmark_training): no mask at 11585 tokens,
-- half way in log2 between 8k and 16k: forward (691 + 702) / 2 = 696.5,
-- backward (594 + 612) / 2 = 603; causal at 16384: 673 / 579.
f, b = ratio("cudnn")
t.near(f, (1 + 3 * 673 / 696.5) / 4, 0.002, "cudnn forward: no mask 696.5 against causal 673")
t.near(b, (1 + 3 * 579 / 603) / 4, 0.002, "cudnn backward: no mask 603 against causal 579")

-- A kernel without a no-mask measurement (the Triton one on Hopper) runs
-- every step at its causal rate: the two rotations price the same kernel
-- (tolerance 1e-9: the same arithmetic).
f, b = ratio("triton")
t.near(f + b, 2, 1e-9, "triton: no measurement, no change")

-- Bad curves are refused when the catalog loads, naming the field: lengths
-- that do not grow (roofline.lua), and a no-mask rate over the causal one
-- past the engine's bound of 4 (roofline.c attn_unmasked_check; the
-- measured quotients are 0.98-1.36).
local scratch = t.scratch()
local function refused(points, expect, desc)
  scratch.put("a.lua", string.format([[
arch { id = "su", name = "x", launch_overhead = "4us",
  achievable = { gemm = { bf16 = 0.8 }, hbm = 0.85, reason = "t", source = "t",
    attention = { kernel = "fa2", fa2 = { fwd = 0.6, bwd = 0.5, unmasked = %s } } } }
]], points))
  local _, e = catalog.load { scratch.dir }
  t.like(e[1] or "", expect, desc, true)
  scratch.clean()
end
local row = "{ seq = 4096, fwd = 370, bwd = 300, causal_fwd = 335, causal_bwd = %d }"
refused("{ " .. row:format(280) .. ", " .. row:format(280) .. " }",
  "field 'achievable.attention.fa2.unmasked': point 2 (seq 4096) must be longer than point 1 "
    .. "(seq 4096)", "lengths that do not grow: refused")
refused("{ " .. row:format(30) .. " }",
  "unmasked backward point 1: its rate over the causal one must be in [0.01, 4] (got 10)",
  "a backward 10x the causal rate: refused by the engine's check")
scratch.remove()
