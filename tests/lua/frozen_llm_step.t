-- The step of a vision-language model's alignment stage (train_llm = false:
-- LLaVA-1.5's stage 1, MiniGPT-4's stage 1): the language model and the
-- tower frozen, the projector alone trained, the loss at the LLM's output.
-- Pins what the audit of issue 25 item 6 checked against PyTorch autograd:
-- every LLM layer runs its backward for the input gradient alone (no weight
-- gradient), the frozen tower runs its forward alone and is not recomputed.
-- Run with ./gpuplan run tests/lua/frozen_llm_step.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(12)

-- LLaVA-1.5-7B's stage 1 as scripts/v1_5/pretrain.sh runs it (8 A100s,
-- ZeRO-2, 32 samples a GPU, HF gradient checkpointing).
local job = { model = "llava-1.5-7b", gpu = "a100-sxm-80gb", gpus = 8, zero = 2,
              stack = "deepspeed", seq = 600, images = 1, batch = 32, global_batch = 256,
              recompute = "full" }
local full = gp.train(job)
local s1 = gp.train(t.with(job, { train_llm = false }))

-- A frozen nn.Linear (requires_grad False) gets only its input gradient,
-- dX = dY W: the forward's M x N x K again (2 x tokens x in x out FLOPs),
-- so backward / forward = 1.  A trained one adds dW = dY^T X, the same
-- FLOPs again: 2.  Tolerance: the backward GEMMs' transposed operand
-- layouts are priced at their own efficiency (1.00-1.07 here), so 1 +-10%
-- and 2 +-10%.
for _, name in ipairs { "qkv", "o_proj", "mlp_up", "mlp_down" } do
  local o = t.op(s1, name)
  local r = o.bwd / o.fwd
  t.ok(r > 0.9 and r < 1.1,
       string.format("frozen %s: input gradient alone, backward/forward %.3f ~ 1", name, r))
end
do
  local o = t.op(full, "mlp_up")
  local r = o.bwd / o.fwd
  t.ok(r > 1.8 and r < 2.2,
       string.format("trained mlp_up: input and weight gradients, backward/forward %.3f ~ 2", r))
end
-- A frozen RMSNorm (HF's eager LlamaRMSNorm, "self.weight * hidden_states
-- .to(input_dtype)") runs its backward for the input gradient alone:
-- autograd forms the weight's gradient (grad * h, summed over tokens) only
-- where the weight requires grad.  The eager backward moves 84 B an
-- element with bf16 activations (train_layer.c rms_bwd, 2 B a 16-bit and
-- 4 B an fp32 transfer: 4+6+2+6+8+12+4+4+8+12+12+6, and 8 B a token row);
-- grad * h (read 2, write 1) and its sum (read 1) are 6 + 2 = 8 B of it,
-- so frozen / trained = 76 / 84 = 0.905 (the row term, 8 B in 4096
-- elements, moves it by 1e-4).
-- Tolerance 1%: each kernel's launch fill (roofline.c) is not per byte.
do
  local r = t.op(s1, "attn_norm").bwd / t.op(full, "attn_norm").bwd
  t.ok(math.abs(r / (76 / 84) - 1) < 0.01,
       string.format("frozen attn_norm: no weight gradient, backward %.4f of the trained one's ~ 76/84", r))
end
-- The input gradient through attention needs attention's whole backward
-- (dQ, dK, dV), trained weights or not: the same time in both.
do
  t.near(t.op(s1, "attention").bwd, t.op(full, "attention").bwd, 1e-9, "attention's backward: the same with the LLM frozen")
end

-- The frozen tower (train_vision false in both runs): its forward alone
-- (LLaVA's CLIPVisionTower.forward runs under @torch.no_grad(); nothing
-- below the projector takes a gradient), the same whether the LLM trains
-- or not, and not re-run by the LLM's gradient checkpointing (HF wraps the
-- decoder layers): equal with recompute none.
local s1nr = gp.train(t.with(job, { train_llm = false, recompute = "none" }))
t.near(s1.vision_s, full.vision_s, 1e-9, "the frozen tower: the same forward in both")
t.near(s1.vision_s, s1nr.vision_s, 1e-9, "the frozen tower: not recomputed")
-- A trained tower (train_vision true) under full recompute: forward, input
-- and weight gradients (two forward-sized GEMMs) and the recompute's
-- forward, 4x the forward's GEMMs, attention's backward 2.5x: at least 3x.
local s1v = gp.train(t.with(job, { train_llm = false, train_vision = true }))
t.ok(s1v.vision_s > 3 * s1.vision_s,
     string.format("a trained tower costs %.2fx the frozen one's forward (> 3)",
                   s1v.vision_s / s1.vision_s))

-- The frozen LLM's forward is the trained one's: the same per-layer forward.
t.near(t.layer_fwd(s1), t.layer_fwd(full), 1e-9, "the frozen LLM's forward is unchanged")
-- And the step: the full run's less the weight gradients, so below it.
t.ok(s1.step_s < full.step_s, "no weight gradients: the stage-1 step is the shorter")
