-- ZeRO-3 on a model built outside deepspeed.zero.Init (gp.memory's and
-- gp.train's zero_init false; engine/memory_deepspeed.c
-- mem_ds_whole_init): DeepSpeed's engine moves the whole 16-bit model
-- onto every GPU before stage 3 partitions it, so the GPU's peak is at
-- least that moment.
-- Run with ./gpuplan run tests/lua/ds_zero_init.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(13)

-- Llama-3.1-8B on 8 H200s, DeepSpeed ZeRO-3 with the AdamW states on the
-- host, full recompute, Liger's fused loss, one 8192-token sequence a
-- GPU: the ml-engineering benchmark's 8K job (validation/cases.json
-- mlengineering-upgrade-llama31-8b-h200-8g-zero3-offload-ac-s8k-mem).
local model = { ffn_gated = true, ffn_hidden = 14336, head_dim = 128, heads = 32, hidden = 4096,
  id = "llama31-8b", kv_heads = 8, layers = 32, norm = "rms", split_proj = "both",
  tied_embeddings = false, vocab = 128256 }
local base = { model = model, gpu = "h200-sxm", gpus = 8, zero = 3, tp = 1, pp = 1, batch = 1,
  microbatches = 1, seq = 8192, method = "full", precision = "bf16", recompute = "full",
  offload = "optimizer", stack = "deepspeed", fused_linear_ce = true, kernels = "fused",
  margin = 0 }
local function mem(extra) return gp.memory(t.with(base, extra)) end

-- Hand derivation.  The model's parameters: the embedding and the untied
-- output layer, V h = 128256 x 4096 = 525,336,576 each; a layer q and o
-- h^2 = 16,777,216 each, k and v h x 1024 = 4,194,304 each, gate, up,
-- down h x 14336 = 58,720,256 each and two norms of h: 218,112,000, x 32
-- = 6,979,584,000; the final norm h.  In all N = 8,030,261,248, 16-bit:
-- 16,060,522,496 B.  The first parameter (embed_tokens) is partitioned
-- while the rest is still whole: its partition V h / 8 = 65,667,072
-- elements, 131,334,144 B.  The moment: 16,191,856,640 B.  Exact (every
-- term an integer count of bytes).
local N = 2 * 128256 * 4096 + 32 * (2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336
  + 2 * 4096) + 4096
t.is(N, 8030261248, "Llama-3.1-8B holds 8,030,261,248 parameters")
local whole = 2 * N + 2 * (128256 * 4096 / 8)
local built, arrived = mem {}, mem { zero_init = false }
t.is(arrived.allocated, whole, "zero_init false: the whole 16-bit model and the embedding's "
  .. "partition, 16,191,856,640 B")
t.is(t.part(arrived, "weights"), whole, "the moment is all weights")
t.is(t.part(arrived, "activations"), 0, "nothing of training exists yet at that moment")
t.ok(built.allocated < whole, "under zero.Init the training step's peak is the smaller here")
t.is(arrived.whole_init, true, "the result says the peak is the whole model's arrival")
t.is(built.whole_init, nil, "and says nothing of it under zero.Init")

-- At 64K tokens the training step's own peak (the checkpointed layer
-- inputs alone: 32 x 65536 x 4096 x 2 B = 17.2e9 B) passes the whole
-- model: zero_init changes nothing.  Exact: the same breakdown.
local long = { seq = 65536 }
t.is(mem(t.with(long, { zero_init = false })).allocated, mem(long).allocated,
  "past the whole model's bytes the step's own peak stands")

-- ZeRO 2 keeps the whole 16-bit model on every GPU anyway: nothing to add.
-- Exact: the same breakdown.
t.is(mem { zero = 2, zero_init = false }.allocated, mem { zero = 2 }.allocated,
  "ZeRO 2: the whole model is its steady state, the option adds nothing")

-- Refusals name the option: another stack has no zero.Init; LoRA's base
-- arrival is not modelled.
local ok, err = pcall(mem, { stack = "hf", zero_init = false })
t.ok(not ok and tostring(err):find("zero_init", 1, true),
  "stack hf: zero_init refused, naming it")
ok, err = pcall(mem, { method = "lora", lora_rank = 16, zero_init = false })
t.ok(not ok and tostring(err):find("zero_init", 1, true),
  "LoRA: zero_init false refused, naming it")
-- The stack named as the caller gave it, or as the method's default:
-- with none given the refusal read "stack = hf has no such option" (on
-- the command line "--stack hf", never typed), as fused_linear_ce's did.
ok, err = pcall(gp.memory, { model = model, gpu = "h200-sxm", gpus = 8, method = "full",
  zero_init = false })
t.like(tostring(err), "the default stack of method = full, hf, has no such option",
  "no stack given: the method's default stack named as such", true)
ok, err = pcall(gp.memory, { model = model, gpu = "h200-sxm", gpus = 8, method = "full",
  stack = "megatron", zero_init = false })
t.like(tostring(err), "; stack = megatron has no such option", "a stack given: named as given",
  true)
