-- Liger-Kernel's fused linear cross-entropy (fused_linear_ce; engine/
-- memory_train.c, train_layer.c train_ends_costs; ops/fused_linear_
-- cross_entropy.py at v0.8.0): the output layer and the loss run chunk by
-- chunk in the forward, "chunk_size = triton.next_power_of_2(triton.cdiv(
-- BT, inc_factor))" with "inc_factor = triton.cdiv(V, H)", so the stage
-- holds one chunk of logits, never all of them, beside grad_input (T x h),
-- the fp32 loss_1d (T), grad_weight (V x h, 16-bit) and, while the chunk
-- lives, the chunk's 16-bit weight-gradient product and its fp32 copy (V x
-- h x 6).  Run with ./gpuplan run tests/lua/fused_linear_ce.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(16)

-- a component's bytes: tap's part (0 when none)
local comp = t.part

-- Llama 3 8B: V = 128256, h = 4096, so inc_factor = ceil(31.31) = 32.
-- Layers fused (stack hf, kernels fused): the final norm keeps its 16-bit
-- input (2 B), A = 2, no fp32 upcast.
local job = { model = "llama3-8b", gpu = "h200-sxm", gpus = 1, method = "full", stack = "hf",
              kernels = "fused", recompute = "full", batch = 1 }
local V, h = 128256, 4096
-- The logits component with the fused loss:
--   T (2 h + 2 h + 4) + chunk V 2 + V h (2 + 2 + 4)
-- (final-norm input, grad_input, loss_1d; the chunk; grad_weight, the
-- chunk's mm product and its fp32 copy).  The engine sums these byte
-- counts: exact to rounding, tolerance 1e-9.
local function want(T, chunk, head_trains)
  return T * (4 * h + 4) + chunk * V * 2 + (head_trains and V * h * 8 or 0)
end
-- seq 8192: ceil(8192 / 32) = 256, a power of two: chunk 256.
local r = gp.memory(t.with(job, { seq = 8192, fused_linear_ce = true }))
t.near(comp(r, "logits"), want(8192, 256, true), 1e-9, "seq 8192: a chunk of 256 tokens")
-- seq 100000: ceil(100000 / 32) = 3125, next power of two 4096.
r = gp.memory(t.with(job, { seq = 100000, fused_linear_ce = true }))
t.near(comp(r, "logits"), want(100000, 4096, true), 1e-9,
       "seq 100000: 3125 rows rounded up to a chunk of 4096")
-- seq 262144 (the ml-engineering 256K run): 8192 a chunk.  Without the
-- option the whole logits: T (2 h + 2 h + 4 V) (kernels fused: 4 B a
-- logit, logit_bytes' default) = 262144 x 529,408 = 138.78 GB, against
-- 4.30 + 2.10 + 4.20 = 10.60 GB fused.
r = gp.memory(t.with(job, { seq = 262144, fused_linear_ce = true }))
local off = gp.memory(t.with(job, { seq = 262144 }))
t.near(comp(r, "logits"), want(262144, 8192, true), 1e-9, "seq 262144: a chunk of 8192")
t.near(comp(off, "logits"), 262144 * (4 * h + 4 * V), 1e-9, "without it: all the fp32 logits")
-- A frozen head (LoRA): no grad_weight, no product; grad_input is still
-- held (the adapters below want it), so the final norm's input and it stay.
r = gp.memory(t.with(job, { seq = 8192, fused_linear_ce = true, method = "lora" }))
t.near(comp(r, "logits"), want(8192, 256, false), 1e-9, "LoRA: the head's weight gradient is none")

-- Time.  A model whose vocabulary is no wider than its hidden size has
-- inc_factor 1 and one chunk of every token: the same three GEMMs, so the
-- step moves by the loss's bytes alone.  The fused loss (kernels fused)
-- moves A + 8 = 10 B a logit forward and 4 + A = 6 back; Liger's kernel 3 A
-- = 6 (two reads of the 16-bit row, the gradient stored in place), and
-- its grad_weight accumulate 3 A + 8 = 14 B a weight (the product's fp32
-- copy, then the add).  T = 65536, V = h = 4096 on one H100 SXM:
-- (16 - 6) T V - 14 V h = 2,684,354,560 - 234,881,024 = 2,449,473,536 B
-- less, at 3.35 TB/s x 0.84 (the catalog's hbm fraction) = 2.814 TB/s:
-- 0.870 ms.  The kernels' fill and launch (a few microseconds, the
-- loss now one kernel where it was two) stay within 2%.
local tiny = { name = "tiny", layers = 2, hidden = 4096, heads = 32, kv_heads = 8,
               head_dim = 128, ffn_hidden = 14336, ffn_gated = true, vocab = 4096,
               tied_embeddings = false, params_b = 0.5 }
local tj = { model = tiny, gpu = "h100-sxm", gpus = 1, method = "full", stack = "hf",
             kernels = "fused", seq = 65536, batch = 1, global_batch = 1 }
local on = gp.train(t.with(tj, { fused_linear_ce = true }))
local plain = gp.train(tj)
t.near(plain.step_s - on.step_s, (10 * 65536 * 4096 - 14 * 4096 * 4096) / (3.35e12 * 0.84), 0.02,
       "one chunk: the loss's bytes alone move")

-- Bad input is refused, naming the argument.
t.raises(function() gp.memory(t.with(job, { seq = 8192, fused_linear_ce = 1 })) end,
         "fused_linear_ce must be true or false", "a non-boolean is refused", true)
t.raises(function() gp.memory(t.with(job, { seq = 8192, fused_linear_ce = true, logit_bytes = 4 })) end,
         "logit_bytes (bytes a logit over the whole logits) does not apply with it",
         "with logit_bytes: refused", true)

-- The case field reaches both predictors: a case stating
-- workload.fused_linear_ce hands it to gp.train and gp.memory.
local train, memory = require "gpuplan.train", require "gpuplan.memory"
local seen = {}
local otrain, omem = train.train, memory.memory
train.train = function(o) seen.train = o.fused_linear_ce; return otrain(o) end
memory.memory = function(o) seen.memory = o.fused_linear_ce; return omem(o) end
local case = {
  id = "t", kind = "train",
  model = { name = "Llama 3.1 8B", layers = 32, hidden = 4096, heads = 32, kv_heads = 8,
            ffn_hidden = 14336, ffn_gated = true, vocab = 128256, tied_embeddings = false,
            params_b = 8.03 },
  hardware = { gpu = "h200-sxm", gpus = 8, gpus_per_node = 8 },
  parallel = { tp = 1, pp = 1, dp = 8, zero = 3, micro_batch = 1, global_batch = 8,
               recompute = "full", offload = "optimizer" },
  workload = { seq_len = 32768, precision = "bf16", method = "full", fused_linear_ce = true },
  measured = { metric = "step_time_s", value = 7 },
  source = { title = "t" },
}
require("gpuplan.predict.train")(case, gp.catalog())
case.kind = "memory"
case.measured = { metric = "peak_memory_gib", value = 30 }
pcall(require("gpuplan.predict.memory"), case, gp.catalog())
train.train, memory.memory = otrain, omem
t.ok(seen.train == true and seen.memory == true, "workload.fused_linear_ce: both predictors")

-- Refused where Liger's loss cannot be the one run (train.lua): with
-- another loss named the engine priced Liger's alone (train_layer.c
-- train_ends_costs: its branch replaces the head and loss), the other
-- taken in silence; on
-- Megatron-Core's GPTModel no Liger patch reaches the head.  DeepSpeed
-- drives transformers' own modules, so it runs.
local flce = { model = "llama3.1-8b", gpu = "h100-sxm", gpus = 8, fused_linear_ce = true }
t.raises(function() gp.train(t.with(flce, { kernels = "fused", eager_loss = true })) end,
  "fused_linear_ce (Liger-Kernel's head and loss in one) and eager_loss", "with eager_loss: give one", true)
t.raises(function() gp.train(t.with(flce, { stack = "megatron" })) end,
  "fused_linear_ce is Liger-Kernel's, which patches transformers' models; stack = megatron",
  "with stack megatron: refused", true)
t.ok(gp.train(t.with(flce, { stack = "deepspeed" })).step_s > 0, "with stack deepspeed: priced")

-- The refusal is the memory model's, so every surface that takes the
-- flag says it: gp.memory (fit) priced Liger's chunked logits under
-- stack megatron, where gp.train refused the same pair.
t.raises(function() gp.memory(t.with(flce, { stack = "megatron" })) end,
  "memory: fused_linear_ce is Liger-Kernel's, which patches transformers' models; stack = megatron",
  "gp.memory with stack megatron: refused as gp.train refuses it", true)
t.ok(gp.memory(t.with(flce, { stack = "deepspeed" })).total > 0, "gp.memory with stack deepspeed: priced")
-- A stack nobody gave (method pretrain's default, megatron) is named as
-- the default, not as a stack = megatron the caller wrote.
local ok, e = pcall(gp.train, t.with(flce, { method = "pretrain" }))
t.ok(not ok and tostring(e):find("the default stack of method = pretrain, megatron, runs "
  .. "Megatron-Core's own output layer and loss: give stack = hf or deepspeed", 1, true) ~= nil,
  "the default stack named as the method's default (" .. tostring(e) .. ")")
t.ok(not tostring(e):find("; stack = megatron", 1, true), "... not as a stack = megatron given")
