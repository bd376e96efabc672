-- The memory side of kv_repeat: torchtitan's Llama hands
-- F.scaled_dot_product_attention the q-wide copies repeat_kv makes of K
-- and V, and the attention keeps what it is handed for its backward, so
-- K and V are saved query-wide (memory_act.c act_attention).  Run with
-- ./gpuplan run tests/lua/kv_repeat_memory.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(9)

-- Llama 3 8B (32 layers, 32 query heads and 8 KV heads of 128: q = 4096,
-- kv = 1024 elements a token), one sequence of T = 4096 tokens on one
-- H100, A = 2 B (bf16).  Per layer the saved K and V grow from 2 kv to
-- 2 q: T (2 q - 2 kv) A = 4096 x 6144 x 2 = 50,331,648 B.  The engine's
-- figures are sums of these byte counts: exact up to float rounding
-- (tolerance 1e-9, relative).
local job = { model = "llama3-8b", gpu = "h100-sxm", gpus = 1, method = "pretrain",
              seq = 4096, batch = 1, recompute = "none" }
local per_layer = 4096 * (2 * 4096 - 2 * 1024) * 2
local function more(o)
  local j = t.with(job, o or {})
  local off = gp.memory(j)
  local on = gp.memory(t.with(j, { kv_repeat = true }))
  return on.allocated - off.allocated, on.act_layer - off.act_layer
end
local function near(got, want, what) t.near(got, want, 1e-9, what) end

-- No recompute: every layer keeps the copies, 32 x 50.3 MB = 1.61 GB.
local all, layer = more()
near(layer, per_layer, "a layer keeps K and V query-wide: T (2 q - 2 kv) A")
near(all, 32 * per_layer, "no recompute: 32 layers of it")
-- Unfused attention (the math path's QK^T and PV matmuls keep their
-- operands, the same q-wide K and V): the same.
near((more { flash = false }), 32 * per_layer, "unfused attention: the same")
-- Full recompute keeps the layer input only; the copies come back in the
-- one layer re-run for its backward: 50.3 MB once.
near((more { recompute = "full" }), per_layer, "full recompute: one layer's re-run")
-- Op SAC keeps the mm and SDPA outputs (act_op_saved), not SDPA's inputs:
-- the copies are rebuilt with the rest of one layer, 50.3 MB once.
near((more { recompute = "op" }), per_layer, "op SAC: one layer's rebuilt set")
-- Two TP ranks: q = 2048 and kv = 512 a rank, 4096 x 3072 x 2 x 32 =
-- 805,306,368 B.
near((more { tp = 2, gpus = 2 }), 32 * 4096 * (2 * 2048 - 2 * 512) * 2,
     "tp 2: the rank's heads")
-- Llama 2 7B has as many KV heads as query heads: nothing to copy.
t.is((more { model = "llama2-7b" }), 0.0, "MHA: nothing more")
t.raises(function() gp.memory(t.with(job, { kv_repeat = 1 })) end,
         "kv_repeat must be true or false", "a non-boolean is refused", true)

-- The memory predictor sizes a torchtitan case on the train profile's
-- stack: a GQA model gets kv_repeat.
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
  parallel = { tp = 1, pp = 1, dp = 8, zero = 3, fsdp = "full_shard",
               micro_batch = 1, global_batch = 8, recompute = "op" },
  workload = { seq_len = 8192, precision = "bf16", method = "pretrain",
               framework = "torchtitan" },
  measured = { metric = "peak_reserved_gib", value = 60 },
  source = { title = "torchtitan benchmarks" },
}, gp.catalog())
memory.memory = orig
t.ok(seen and seen.kv_repeat == true, "torchtitan memory case, GQA: kv_repeat")
