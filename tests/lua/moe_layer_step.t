-- moe.layer_step: MoE layers interleaved with dense ones (Llama 4
-- Maverick's interleave_moe_layer_step 2), through the Lua API: the
-- catalog entry, the training FLOPs, the expert all-to-all count, a
-- pipeline stage's weights, serving's weights, and the errors a bad step
-- gets.  The engine's exact counts are tests/c/t_moe_step.c's.
-- Run with ./gpuplan run tests/lua/moe_layer_step.t.
local t = require "tap"
local gp = require "gpuplan"
local core = require "gpuplan.core"
local schema = require "gpuplan.schema"

t.plan(14)

-- Exact integer counts below 2^53 summed in doubles: 1e-12 is the last
-- bits' rounding.
local EXACT = 1e-12

-- The catalog's Maverick reaches the engine with its step: 400,711,848,960
-- parameters (t_moe_step.c's hand count: 24 MoE layers of 129 experts of
-- 3 x 5120 x 8192, 24 dense of 3 x 5120 x 16384, 48 attention layers,
-- embedding and head); every layer MoE it would be 784.2B.
local mav = gp.catalog():get("models", "llama4-maverick")
t.is(schema.moe_layers(mav), 24, "catalog llama4-maverick: 24 MoE layers (Lua count)")
t.near(core.model_params(mav).total, 400711848960, EXACT, "catalog llama4-maverick: 400.71B")

-- A tiny step-2 model: 4 layers, h 64, 4 heads of 16, SwiGLU dense 256,
-- 4 experts of 128, top-1, V 1000: layers 1 and 3 MoE.
local function tiny(step, dense)
  return { layers = 4, hidden = 64, heads = 4, ffn_hidden = 256, ffn_gated = true,
    vocab = 1000, moe = { experts = 4, top_k = 1, ffn_hidden = 128, layer_step = step,
    dense_layers = dense } }
end
local job = { gpu = "h100-sxm", gpus = 8, ep = 4, seq = 128, global_batch = 64 }

-- Model FLOPs of a step: tokens x 3 (forward + backward) x the forward a
-- token.  Matmul weights a token passes: attention 4 x 4 x 64^2 = 65,536;
-- dense MLP 2 layers x 3 x 64 x 256 = 98,304; MoE 2 layers x (router
-- 64 x 4 + one expert 3 x 64 x 128) = 49,664; logits 64,000: 277,504.
-- Forward: 2 x 277,504 + attention over the whole 128-token sequence
-- (the hf stack's count, no causal half) 4 layers x 4 x 128 x 4 x 16 =
-- 131,072 -> 686,080 a token; 64 x 128 = 8192 tokens:
-- 8192 x 3 x 686,080 = 16,861,102,080.
local r2 = gp.train(t.with(job, { model = tiny(2) }))
t.is(r2.tokens_per_step, 8192, "tiny: 8192 tokens a step")
t.near(r2.model_flops, 16861102080, EXACT, "tiny step 2: model FLOPs by hand")

-- The expert all-to-all runs in the MoE layers only: every layer MoE
-- (step 1) sends the same dispatch and combine a layer in twice the
-- layers (4 against 2), so the step-2 model's is half, exactly (same
-- experts, tokens and EP group; only the count differs).
local r1 = gp.train(t.with(job, { model = tiny(1) }))
t.ok(t.parts(r2).ep_comm > 0, "tiny step 2: an expert all-to-all")
t.near(t.parts(r2).ep_comm, t.parts(r1).ep_comm / 2, 1e-9,
  "tiny: step 2's all-to-all is half of every layer's")

-- A pipeline stage holds the experts of its own MoE layers.  pp 2 of 4
-- layers: step 2 puts one MoE layer (1 or 3) on each stage; the last
-- (the heavier, with the head) holds attention and norms of 2 layers
-- (65,536 + 576) / 2 = 33,056, one dense MLP 49,152, one MoE layer's
-- router 256 and experts 4 x 24,576 = 98,304, the head 64,000:
-- 244,768.  Two dense layers first (dense_layers 2, step 1) put both MoE
-- layers on it: 33,056 + 2 x 98,560 + 64,000 = 294,176.
local mem = { gpu = "h100-sxm", gpus = 2, pp = 2, seq = 128 }
local m2 = gp.memory(t.with(mem, { model = tiny(2) }))
local md = gp.memory(t.with(mem, { model = tiny(1, 2) }))
t.is(m2.params, 244768, "pp 2, step 2: the last stage's weights by hand")
t.is(md.params, 294176, "pp 2, 2 dense layers first: both MoE layers on the last stage")

-- Serving reads the weights of 24 MoE layers, not 48: Maverick over
-- TP 8 holds 400,711,848,960 x 2 B / 8 = 100,177,962,240 B a GPU.
local inf = gp.infer { model = "llama4-maverick", gpu = "h200-sxm", tp = 8 }
t.near(inf.weights_gpu, 100177962240, EXACT, "infer llama4-maverick tp 8: weights a GPU")

-- Bad steps: named, at the script's line.
local bad = tiny(0)
t.raises_here(function() gp.train(t.with(job, { model = bad })) end,
  "model.moe.layer_step must be in 1..layers (4), got 0", "layer_step 0 refused")
bad = tiny(5)
-- the same field, the same words, past the layers (followups16)
t.raises_here(function() gp.train(t.with(job, { model = bad })) end,
  "model.moe.layer_step must be in 1..layers (4), got 5", "layer_step past the layers refused")
-- 3 dense layers, then every third: layer 2 would be, but is dense, and
-- layer 3 is not a third.
bad = tiny(3, 3)
t.raises_here(function() gp.memory(t.with(mem, { model = bad })) end,
  "model.moe.dense_layers (3) and layer_step (3) leave no MoE layer among the 4 layers",
  "a step that leaves no MoE layer refused")
bad = tiny(2.5)
t.raises_here(function() gp.infer { model = bad, gpu = "h100-sxm" } end,
  "model.moe.layer_step", "a fractional step refused")
t.is(schema.moe_layers(tiny(2, 1)), 2, "Lua count: dense 1 + step 2 of 4 -> layers 1, 3")
