-- The memory side of PyTorch's context_parallel ring (cp_rotate allgather
-- or alltoall; engine/memory_train.c cp_ring_bytes): while a layer's
-- attention backward runs, _templated_ring_attention_backward holds the
-- K/V chunks its rotater brings (allgather: every rank's), a contiguous
-- and a concatenated copy of K and V, three fp32 copies of the K/V
-- gradients on their all-to-all ring and the fp32 query gradient.  The
-- logits are freed before any layer's backward, so the stage holds the
-- larger of the two: the layer re-run grows by what the ring needs
-- beyond the logits.  Run with ./gpuplan run tests/lua/cp_ring_memory.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(8)

local function comp(r, name)
  for _, c in ipairs(r.components) do
    if c.name == name then return c.bytes end
  end
  return 0
end

-- Llama 3 8B (q = o = 4096 elements a token, kv = 1024 each for K and
-- V), 131072 tokens over cp = 32 ranks: tok = 4096 a rank, A = 2 B.  With
-- kv_repeat K and V are handed query-wide: kvb = tok (q + o) A = 4096 x
-- 8192 x 2 = 67,108,864 B; the fp32 query gradient 4 tok q =
-- 67,108,864 B too.
--   allgather: (cp + 2) kvb + 3 x 4 / A kvb + 4 tok q = (34 + 6 + 1) kvb
--              = 2,751,463,424 B;
--   alltoall:  (3 + 6 + 1) kvb = 671,088,640 B.
-- logit_bytes 0.5 keeps the logits (the result's own component) below
-- both, so the difference to Transformer Engine's p2p ring (not priced:
-- no change) is ring - logits.  The engine sums these byte counts: exact
-- up to float rounding (1e-9 relative).
local job = { model = "llama3-8b", gpu = "h200-sxm", gpus = 32, cp = 32, seq = 131072,
              method = "pretrain", batch = 1, recompute = "full", kv_repeat = true,
              logit_bytes = 0.5 }
local kvb = 4096 * 8192 * 2
local function grows(o)
  local base = gp.memory(t.with(job, t.with(o or {}, { cp_rotate = "p2p" })))
  local ring = gp.memory(t.with(job, o or {}))
  return comp(ring, "recompute") - comp(base, "recompute"), comp(base, "logits")
end
local function near(got, want, what) t.near(got, want, 1e-9, what) end

local g, logits = grows { cp_rotate = "allgather" }
near(g, 41 * kvb - logits, "allgather: every rank's K/V chunk, two copies, 3 fp32 dK/dV, fp32 dQ")
g, logits = grows { cp_rotate = "alltoall" }
near(g, 10 * kvb - logits, "alltoall: the chunk in hand, the one sent and the one arriving")
-- Without repeat_kv SDPA gets K and V at the kv heads: kvb = 4096 x 2048
-- x 2 = 16,777,216 B, the query gradient stays 67,108,864 B:
-- 40 x 16,777,216 + 67,108,864 = 738,197,504 B.
g, logits = grows { cp_rotate = "allgather", kv_repeat = false }
near(g, 40 * kvb / 4 + kvb - logits, "no repeat_kv: K and V at the kv heads")
-- The logits at 4 B each (gpuplan's default) outweigh the alltoall
-- ring's 671 MB: the stage's peak is the loss's, nothing grows.
t.is((grows { cp_rotate = "alltoall", logit_bytes = 4 }), 0.0,
     "logits larger than the ring's buffers: the loss's peak, unchanged")
-- cp 1: no ring.
t.is((grows { cp_rotate = "allgather", cp = 1, gpus = 1, seq = 4096 }), 0.0, "cp 1: no ring")
-- The bytes land in the allocated total too.
local a = gp.memory(t.with(job, { cp_rotate = "allgather" }))
local b = gp.memory(t.with(job, { cp_rotate = "p2p" }))
near(a.allocated - b.allocated, 41 * kvb - comp(b, "logits"), "in the allocated total")
t.raises(function() gp.memory(t.with(job, { cp_rotate = "ring" })) end,
         "cp_rotate", "an unknown rotater is refused, naming the option", true)

-- The memory predictor sizes a torchtitan case on the train profile's
-- stack: a job with a CP ring gets context_parallel_rotate_method's
-- default, allgather.
local memory = require "gpuplan.memory"
local predict = require "gpuplan.predict.memory"
local seen
local orig = memory.memory
memory.memory = function(o) seen = o; return orig(o) end
predict({
  id = "t", kind = "memory",
  model = { name = "Llama 3.1 8B", layers = 32, hidden = 4096, heads = 32, kv_heads = 8,
            ffn_hidden = 14336, ffn_gated = true, vocab = 128256, tied_embeddings = false,
            params_b = 8.03 },
  hardware = { gpu = "h100-sxm", gpus = 8, gpus_per_node = 8 },
  parallel = { tp = 1, pp = 1, dp = 1, cp = 8, zero = 3, fsdp = "full_shard",
               micro_batch = 1, global_batch = 1, recompute = "full" },
  workload = { seq_len = 262144, precision = "bf16", method = "pretrain",
               framework = "torchtitan" },
  measured = { metric = "peak_reserved_gib", value = 80 },
  source = { title = "torchtitan benchmarks" },
}, gp.catalog())
memory.memory = orig
t.ok(seen and seen.cp_rotate == "allgather", "torchtitan memory case, cp 8: cp_rotate allgather")
