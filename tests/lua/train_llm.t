-- train_llm = false: a vision-language model's alignment stage (LLaVA's
-- stage 1, tune_mm_mlp_adapter): the language model frozen, the projector
-- (and the tower with train_vision) alone trained.
-- Run with ./gpuplan run tests/lua/train_llm.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(8)

local function comp(r, name)
  for _, c in ipairs(r.memory.components) do
    if c.name == name then return c.bytes end
  end
  return 0
end

-- LLaVA-1.5-7B's stage 1 as its scripts/v1_5/pretrain.sh runs it: 8 A100s,
-- ZeRO-2, 32 samples a GPU of one image and a short caption (~600 tokens).
local job = { model = "llava-1.5-7b", gpu = "a100-sxm-80gb", gpus = 8, zero = 2,
              stack = "deepspeed", seq = 600, images = 1, batch = 32, global_batch = 256,
              recompute = "full" }
local full = gp.train(job)
local stage1 = gp.train(t.with(job, { train_llm = false }))

-- What trains: the projector alone, 1024 x 4096 + 4096 + 4096 x 4096 +
-- 4096 = 20,979,712 (mlp2x_gelu from CLIP's 1024 to the LLM's 4096).
t.is(stage1.memory.trainable, 20979712, "the projector alone trains")

-- Its gradients, fp32 master and optimizer states are the projector's,
-- sharded over 8 as the full run's are (ZeRO-2 shards all three), at the
-- full run's bytes a parameter: the full run trains everything but the
-- frozen tower (full.memory.trainable).  Exact but for rounding.
local states = { "grads", "master", "optimizer" }
local per = 0
for _, k in ipairs(states) do per = per + comp(full, k) end
per = per / (full.memory.trainable / 8)
local got = 0
for _, k in ipairs(states) do got = got + comp(stage1, k) end
t.near(got, 20979712 / 8 * per, 1e-6, "the projector's states, sharded as the full run's")
-- The weights stay whole: the frozen LLM is held in 16 bits.
t.is(comp(stage1, "weights"), comp(full, "weights"), "the frozen LLM's weights are still held")

-- The step: the frozen LLM still runs its backward for the input gradient
-- (the projector's gradient comes through every layer) but computes no
-- weight gradients: model FLOPs 2 a weight a token instead of 3 (the frozen
-- tower and the projector the same in both), so about 2/3 of the full
-- step's -- a little over, attention's backward being 2.5x its forward
-- either way; tolerance 0.6-0.7.
t.ok(stage1.step_s < full.step_s, "no weight gradients: faster than the full step")
t.ok(stage1.model_flops < full.model_flops * 0.7 and stage1.model_flops > full.model_flops * 0.6,
     "model FLOPs about 2/3 of the full step's (forward and input gradient, no weight gradient)")

-- Refused: a model without a tower, LoRA (which freezes the base already),
-- a non-boolean.
t.raises(function() gp.train { model = "llama2-7b", gpu = "a100-sxm-80gb", train_llm = false } end,
  "llama2-7b has no vision tower", "no tower: refused", true)
t.raises(function() gp.train(t.with(job, { method = "lora", train_llm = false })) end,
  "LoRA/QLoRA already freeze the base", "LoRA: refused", true)
t.raises(function() gp.train(t.with(job, { train_llm = "no" })) end,
  "train_llm", "a non-boolean: refused", true)
