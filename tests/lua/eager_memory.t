-- What autograd keeps follows the modules that run (lua/gpuplan/memory.lua
-- prepare_stack): Hugging Face's eager modules driven by DeepSpeed's
-- engine (gp.train stack = "deepspeed", kernels = "eager", what the
-- validation's DeepSpeed profile runs) keep what they keep under the hf
-- stack -- silu(gate) beside gate and up, each RMSNorm's fp32 upcast, and
-- the fp32 logits -- and fused
-- kernels on the hf stack (torch.compile) keep neither.
-- Run with ./gpuplan run tests/lua/eager_memory.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(9)

local function comp(r, name)
  for _, c in ipairs(r.memory.components) do if c.name == name then return c.bytes end end
  return 0
end

-- LLaMA-2-7B (h 4096, SwiGLU f 11008, 32 layers, vocab 32000) on 8
-- A800s, ZeRO 2, one 4096-token sequence a micro-batch, flash attention
-- (the default: no s^2 tensor, so eager_softmax changes nothing).
local base = { model = "llama2-7b", gpu = "a800-sxm-80gb", gpus = 8, method = "full",
  zero = 2, stack = "deepspeed", seq = 4096, batch = 1, global_batch = 64, recompute = "none" }
local eager = gp.train(t.with(base, { kernels = "eager" }))
local fused = gp.train(t.with(base, { kernels = "fused" }))

-- Per layer, eager SiLU(gate) * up keeps silu(gate) as well: 1 x f x 2 B
-- x 4096 tokens = 11008 x 2 x 4096 = 90,177,536 B; and each of the two
-- RMSNorms keeps its fp32 upcast (4 B) and the normalised bf16 tensor its
-- weight multiplies (2 B) where a fused norm keeps its 2-byte input: 4 B
-- more an element, 2 x 4 x 4096 x 4096 = 134,217,728 B.  Exact (whole
-- bytes).
t.is(eager.memory.act_layer - fused.memory.act_layer, 11008 * 2 * 4096 + 2 * 4 * 4096 * 4096,
  "deepspeed + eager modules: silu(gate) beside gate and up, the norms' fp32 upcast")
-- The loss keeps 6 B a logit with the eager modules (the bf16 logits'
-- fp32 copy and the 16-bit ones), 4 fused: 2 x 32000 x 4096 =
-- 262,144,000 B more; the final norm keeps 4 B an element more as a
-- layer's does, 4 x 4096 x 4096 = 67,108,864 B.  Exact.
t.is(comp(eager, "logits") - comp(fused, "logits"), 2 * 32000 * 4096 + 4 * 4096 * 4096,
  "deepspeed + eager modules: the logits as Hugging Face's loss keeps them")
-- The same modules under the hf stack keep the same activations.
local hf = gp.train(t.with(base, { stack = "hf", kernels = "eager", zero = 0, gpus = 1,
  global_batch = 8 }))
t.is(hf.memory.act_layer, eager.memory.act_layer, "the same eager layer on the hf stack")
-- hf with fused kernels (torch.compile, Liger) keeps the fused layer's.
local hff = gp.train(t.with(base, { stack = "hf", kernels = "fused", zero = 0, gpus = 1,
  global_batch = 8 }))
t.is(hff.memory.act_layer, fused.memory.act_layer, "fused kernels on the hf stack: the fused layer")
-- An explicit eager_swiglu still wins over the kernels.
local off = gp.train(t.with(base, { kernels = "eager", eager_swiglu = false,
  eager_norm = false }))
t.is(off.memory.act_layer, fused.memory.act_layer,
  "eager_swiglu = false and eager_norm = false win over kernels")
-- eager_norm alone: the two norms' 4 B an element, 2 x 4 x 4096 x 4096 =
-- 134,217,728 B a layer over the fused layer with eager_swiglu.  Exact.
local fn = gp.train(t.with(base, { kernels = "fused", eager_norm = true }))
t.is(fn.memory.act_layer - fused.memory.act_layer, 2 * 4 * 4096 * 4096,
  "eager_norm: each RMSNorm keeps its fp32 upcast and the normalised tensor")
-- A frozen norm weight (LoRA on q and v) keeps no normalised copy for its
-- gradient: the fp32 upcast only, 4 - 2 = 2 B an element more than the
-- fused norm, 2 x 2 x 4096 x 4096 = 67,108,864 B a layer.  Exact.
local lb = t.with(base, { method = "lora", lora_rank = 8, lora_targets = "q,v", zero = 0,
  gpus = 1, global_batch = 8, stack = "hf" })
local le = gp.train(t.with(lb, { kernels = "fused", eager_norm = true }))
local lf = gp.train(t.with(lb, { kernels = "fused" }))
t.is(le.memory.act_layer - lf.memory.act_layer, 2 * 2 * 4096 * 4096,
  "eager_norm under LoRA: the fp32 upcast, no copy for a frozen weight")
-- LLaMA-2's norms are RMSNorm; a LayerNorm model (GPT) keeps what the
-- fused norm keeps with eager_norm (nn.LayerNorm is one kernel).
local gpt = { model = "megatron-gpt-1.7b", gpu = "a800-sxm-80gb", gpus = 1, method = "full",
  stack = "hf", seq = 2048, batch = 1, global_batch = 1, recompute = "none", kernels = "fused" }
t.is(gp.train(t.with(gpt, { eager_norm = true })).memory.act_layer,
  gp.train(gpt).memory.act_layer, "eager_norm leaves a LayerNorm model alone")
-- Without kernels the stack says which: deepspeed's default is eager
-- (transformers' modules, as the Trainer / Accelerate hand them to it).
local dflt = gp.train(base)
t.is(dflt.memory.act_layer, eager.memory.act_layer, "deepspeed without kernels: eager, as its time")

t.done_testing()
