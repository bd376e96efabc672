-- A vision-language model's tower in the training step: one image per
-- sequence unless told (the declared default), its forward always, its
-- backward (input and weight gradients) only when it trains.
-- Run with ./gpuplan run tests/lua/vision_tower.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(13)

-- LLaVA-1.5-7B fine-tuned on 8 A100s, one sequence a GPU, no recompute:
-- the tower (CLIP ViT-L/14-336) and its mlp2x_gelu projector on the only
-- stage, on the step's critical path.
local job = { model = "llava-1.5-7b", gpu = "a100-sxm-80gb", gpus = 8, seq = 2048,
              recompute = "none" }
local frozen = gp.train(job)
local trained = gp.train(t.with(job, { train_vision = true }))
local none = gp.train(t.with(job, { images = 0 }))

-- Nothing said about images: one per sequence, and the defaults say so.
local said
for _, d in ipairs(frozen.defaults) do said = said or d:match("^images=(%d+)") end
t.is(said, "1", "the defaults line states images=1")
t.is(frozen.vision_patches, 576, "one image of (336/14)^2 = 576 patches a micro-batch")
t.is(none.vision_s, 0, "images = 0: the tower runs nothing")

-- FLOPs per image (engine/model.c model_vision_flops_per_image), CLIP
-- ViT-L/14-336 (24 layers, h 1024, GELU MLP 4096, 576 patches):
--   per patch per layer 2 (4h^2 + 2hf) + 4 * 576 * h = 27.52e6,
--   x 24 x 576 = 380.4e9; patch conv 2 * 3 * 14^2 * 1024 * 576 = 0.69e9;
--   projector 2 * 20,979,712 * 576 = 24.17e9.
-- Frozen: the tower's forward, the projector's forward and weight
-- gradient: 381.1 + 2 * 24.17 = 429.4e9.  Trained: all three passes
-- (forward, input and weight gradients) of both, but the patch
-- embedding's input gradient (its input is pixels): 3 * 405.3 - 0.69 =
-- 1215e9.  Ratio 2.83; the time ratio differs from it by the attention
-- backward's and the elementwise passes' other efficiencies: 2.4-3.2.
local ratio = trained.vision_s / frozen.vision_s
t.ok(ratio > 2.4 and ratio < 3.2,
  string.format("a trained tower costs ~2.83x a frozen one (got %.2f)", ratio))
-- On the critical path: the compute part grows by exactly what the
-- tower's backward adds (exact but for rounding), and the optimizer's
-- pass by the tower's share of the parameters it steps (the same bytes
-- a parameter: 303.5M more on the frozen run's trainable count; 1%).
local function part(r, name) return t.parts(r)[name] end  -- tap.lua's parts
t.near(part(trained, "compute") - part(frozen, "compute"),
  trained.vision_s - frozen.vision_s, 1e-6, "the compute part grows by the tower's backward")
t.near(part(trained, "optimizer") / part(frozen, "optimizer"),
  trained.memory.trainable / frozen.memory.trainable, 0.01,
  "the optimizer steps the tower's parameters too")
t.ok(frozen.step_s - none.step_s > 0.9 * frozen.vision_s,
  "the frozen tower's forward is in the step")

-- What trains: a trained tower adds its 303.5M parameters (CLIP ViT-L
-- vision model without the text side) to the trainable count.
t.ok(trained.memory.trainable - frozen.memory.trainable > 3.0e8,
  "a trained tower's parameters train (gradients, optimizer states)")

-- A tower trained on nothing is a contradiction: a one-line error.
local ok, err = pcall(gp.train, t.with(job, { images = 0, train_vision = true }))
t.ok(not ok and tostring(err):match("train_vision: no image reaches the tower"),
  "train_vision with images = 0 is refused: " .. tostring(err))
-- RL prices no tower: its default stays none (rl refuses images).
local rl = require("gpuplan.options").default("images", { model = { vision = {} } })
t.is(rl, 1, "the declared default for a vision-language model is 1")

-- A resampler after the tower (Qwen-VL: OpenCLIP ViT-bigG/14 at 448 px,
-- its attn_pool's 256 queries cross-attending to the patches): every ViT
-- layer runs over the whole (448/14)^2 = 32^2 = 1024-patch grid, the LLM
-- sees 256 tokens.  LoRA freezes the tower: forward only.
local qvl = { id = "qwen-vl-shape", layers = 32, hidden = 4096, heads = 32, kv_heads = 32,
  ffn_hidden = 11008, ffn_gated = true, vocab = 151936, tied_embeddings = false,
  vision = { layers = 48, hidden = 1664, heads = 16, ffn_hidden = 8192, ffn_gated = false,
             image_size = 448, patch_size = 14, merge = 1, tokens_per_image = 256,
             projector_params = 91791360 } }
local qjob = { model = qvl, gpu = "a100-sxm-80gb", gpus = 1, seq = 2048, method = "lora",
               recompute = "full" }
local resampled = gp.train(qjob)
t.is(resampled.vision_patches, 1024, "Qwen-VL's tower encodes its 32^2 = 1024 patches, not 256")
-- The same tower whose 1024 patches each became a token (no resampler):
-- the ViT's work is the same; only the projector GEMM's rows differ,
-- 2 * 91.79M * (1024 - 256) = 141e9 FLOP an image of the tower's
-- forward, 48 x 1024 x (2 (4 h^2 + 2 h f) + 4 x 1024 h) = 4.11e12 FLOP
-- (h 1664, f 8192): the resampled tower costs (4.11 + 0.05) / (4.11 +
-- 0.19) = 0.97 of it; above 0.9 leaves the projector's other efficiency
-- room, where pricing 256 patches gave ~0.25.
local whole = gp.train(t.with(qjob, { model = t.with(qvl, {
  vision = t.with(qvl.vision, { tokens_per_image = 1024 }) }) }))
local r = resampled.vision_s / whole.vision_s
t.ok(r > 0.9 and r < 1.0, string.format("the ViT's time does not shrink with the resampler's "
  .. "tokens (ratio %.3f, 0.97 by FLOPs)", r))
local media = require("gpuplan.vlm").media(qvl, { images = 1 })
t.ok(media.tokens_per_unit == 256 and media.patches_per_unit == 1024,
  "vlm.media: 256 tokens from 1024 patches an image")
