-- attn_kernel efficient: PyTorch SDPA's memory-efficient backend, what
-- SDPA runs when a Hugging Face model hands it its causal-and-padding
-- mask.  It computes every tile of the s x s score square (the mask hides
-- which tiles are empty), at its own measured rate: A100 0.31 of the
-- 16-bit peak forward and backward (FA2 paper Fig. 4, xformers without a
-- causal mask, head_dim 128, 4k tokens: 96 of 312 TFLOP/s), Hopper 0.16
-- (the A100 ratio to FlashAttention-2 applied to FA2's H100 rate).
-- Run with ./gpuplan run tests/lua/attn_square.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(6)

-- Llama 3 8B (32 layers, 32 heads of 128) on one GPU, one 8192-token
-- sequence, nothing recomputed: the two kernels differ only in the
-- attention core.  Per layer the forward's two matmuls over the whole
-- square are F = 4 s^2 (heads x head_dim) = 4 x 8192^2 x 4096 =
-- 1.0995e12 FLOP, the backward 2.5 F (the FA convention).
--   efficient: 3.5 F / (312e12 x 0.31) = 39.79 ms a layer;
--   fa2 (causal): the half square, F/2 / (312e12 x 0.61) + 2.5 F/2 /
--   (312e12 x 0.53) = 11.20 ms a layer;
-- over 32 layers 0.9148 s apart.  At 8192 tokens both run at their
-- measured rates (the shape term is 1 at the 8k reference).  Tolerance
-- 0.5%: each pass adds one graph_launch to either kernel alike, and the
-- rest of the step is the same.
local job = { model = "llama3-8b", gpu = "a100-sxm-80gb", gpus = 1, method = "full",
              seq = 8192, batch = 1, global_batch = 1, recompute = "none", stack = "hf" }
local F = 4 * 8192 ^ 2 * 4096
local eff = gp.train(t.with(job, { attn_kernel = "efficient" }))
local fa2 = gp.train(t.with(job, { attn_kernel = "fa2" }))
local want = 32 * (3.5 * F / (312e12 * 0.31) -
  0.5 * F * (1 / (312e12 * 0.61) + 2.5 / (312e12 * 0.53)))
t.near(eff.step_s - fa2.step_s, want, 0.005, "A100: the whole square at 0.31 against FA2's causal half")

-- H100: efficient 0.16, fa2 0.39 / 0.345, both at the sustained 0.82 of
-- the 989 TFLOP/s peak (catalog/archs.lua hopper): 32 x (3.5 F /
-- (989e12 x 0.16 x 0.82) - F/2 (1/(989e12 x 0.39 x 0.82) + 2.5 /
-- (989e12 x 0.345 x 0.82))) = 0.7362 s.  Same tolerance.
local hj = t.with(job, { gpu = "h100-sxm" })
local heff = gp.train(t.with(hj, { attn_kernel = "efficient" }))
local hfa2 = gp.train(t.with(hj, { attn_kernel = "fa2" }))
local P = 989e12 * 0.82
local hwant = 32 * (3.5 * F / (P * 0.16) - 0.5 * F * (1 / (P * 0.39) + 2.5 / (P * 0.345)))
t.near(heff.step_s - hfa2.step_s, hwant, 0.005, "H100: the whole square at 0.16 x 0.82")

-- The kernel is memory-efficient: no s^2 tensor kept, the memory of any
-- fused kernel.
t.near(eff.memory.total, fa2.memory.total, 1e-12, "memory as FlashAttention's")

-- A GPU whose arch has no measurement of it is refused, naming the kernel
-- and what the arch has.
t.raises(function() gp.train(t.with(job, { gpu = "b200", attn_kernel = "efficient" })) end,
  "no measurement of attention kernel 'efficient' on b200", "b200: no measurement", true)
-- ... and names the caller's line once, not once more inside "train: ".
local _, em = pcall(gp.train, t.with(job, { gpu = "b200", attn_kernel = "efficient" }))
local _, npos = tostring(em):gsub("%.t:%d+: ", "")
t.is(npos, 1, "the caller's line named once: " .. tostring(em))

-- A case file may state it (workload.attn_kernel), as the DeepCompile
-- benchmark's code implies: validate predicts the case with the kernel,
-- fewer tokens a second than with the arch's own (cuDNN on Hopper).
local V = require "gpuplan.validate"
local cat = require("gpuplan.catalog").get()
local case
for _, c in ipairs(V.read("validation/cases.json")) do
  if c.id == "dscompile-h100x32-llama3-70b-zero3-mb1-s2048" then case = c end
end
local stated = V.predict(case, cat).predicted
local wl = {}
for k, v in pairs(case.workload) do wl[k] = v end
wl.attn_kernel = nil
local plain = V.predict(t.with(case, { workload = wl }), cat).predicted
t.ok(stated < 0.97 * plain, "the DeepCompile case's stated kernel slows it: "
  .. string.format("%.1f against %.1f tokens/s", stated, plain))
