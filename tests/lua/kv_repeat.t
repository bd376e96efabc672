-- K and V repeated to every query head before the attention kernel
-- (kv_repeat): torchtitan's Llama runs "keys = repeat_kv(xk, self.n_rep)"
-- and the same for values before F.scaled_dot_product_attention, an
-- expand then reshape, i.e. a copy.  Run with ./gpuplan run
-- tests/lua/kv_repeat.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(8)

-- Llama 3 8B (32 layers, 32 query heads and 8 KV heads of 128: q = 4096,
-- kv = 1024 elements a token), one sequence of T = 4096 tokens on one
-- H100 SXM, no recompute, layers compiled (stack hf, kernels fused), A =
-- 2 B.  Per layer: forward 2 q A T = 67.1 MB (K's rope written q wide,
-- V copied), backward (4 q - 2 kv) A T = 117.4 MB (query-wide dK and dV
-- from the attention, their sums over the repeats); 32 layers: 5.905 GB
-- at H100's streaming rate 3.35 TB/s x 0.84 (the catalog's hbm fraction)
-- = 2.814 TB/s, 2.099 ms, and 64 passes more, each the memory pipeline's
-- fill (3.9 us, roofline.c ROOF_MEM_FILL) and a graph launch (1 us,
-- roofline's h100-sxm graph_launch): 0.314 ms.  Tolerance 1%: the rate
-- is the catalog's, the rest exact.
local job = { model = "llama3-8b", gpu = "h100-sxm", gpus = 1, method = "pretrain",
              stack = "hf", kernels = "fused", seq = 4096, batch = 1, global_batch = 1,
              recompute = "none" }
local function extra(j)
  local on = gp.train(t.with(j, { kv_repeat = true }))
  return on.step_s - gp.train(j).step_s
end
local rate = 3.35e12 * 0.84
local fill = 64 * (3.9e-6 + 1e-6)
t.near(extra(job), 32 * (2 * 4096 + 4 * 4096 - 2 * 1024) * 2 * 4096 / rate + fill, 0.01,
       "compiled: 2 q forward, 4 q - 2 kv backward, a token and layer")
-- Eager: K and V each a copy of their own (read kv, write q) and the sums
-- unfused (read q, write kv): 2 (kv + q) forward, 4 q backward; 6.98 GB.
t.near(extra(t.with(job, { kernels = "eager" })),
       32 * (2 * (1024 + 4096) + 4 * 4096) * 2 * 4096 / rate + fill, 0.01,
       "eager: 2 (kv + q) forward, 4 q backward")
-- Full recompute re-runs the forward copy: 32 x 67.1 MB more, 0.763 ms,
-- and 32 fills and launches, 0.157 ms.
local full = t.with(job, { recompute = "full" })
t.near(extra(full) - extra(job), 32 * 2 * 4096 * 2 * 4096 / rate + 32 * (3.9e-6 + 1e-6), 0.01,
       "full recompute: the forward copy again")
-- Llama 2 7B has as many KV heads as query heads: nothing to repeat.
t.is(extra(t.with(job, { model = "llama2-7b" })), 0.0, "MHA: no copy")
-- Unfused attention is handed the same copies: repeat_kv runs before
-- F.scaled_dot_product_attention whatever backend takes the tensors, and
-- the math path's QK^T and PV matmuls write query-wide dK and dV
-- (train_layer.c kv_repeat_costs).  The same figures as the flash ones
-- above, compiled and eager (the copy's passes do not depend on the
-- attention kernel).
t.near(extra(t.with(job, { flash = false })),
       32 * (2 * 4096 + 4 * 4096 - 2 * 1024) * 2 * 4096 / rate + fill, 0.01,
       "unfused attention, compiled: the same copy")
t.near(extra(t.with(job, { flash = false, kernels = "eager" })),
       32 * (2 * (1024 + 4096) + 4 * 4096) * 2 * 4096 / rate + fill, 0.01,
       "unfused attention, eager: the same copy")
t.raises(function() gp.train(t.with(job, { kv_repeat = "yes" })) end,
         "kv_repeat must be true or false", "a non-boolean is refused", true)

-- The torchtitan profile sets it for a GQA model.
local train = require "gpuplan.train"
local predict = require "gpuplan.predict.train"
local seen
local orig = train.train
train.train = function(o) seen = o; return orig(o) end
predict({
  id = "t", kind = "train",
  model = { name = "Llama 3.1 8B", layers = 32, hidden = 4096, heads = 32, kv_heads = 8,
            ffn_hidden = 14336, ffn_gated = true, vocab = 128256, tied_embeddings = false,
            params_b = 8.03 },
  hardware = { gpu = "h100-sxm", gpus = 8, gpus_per_node = 8 },
  parallel = { tp = 1, pp = 1, dp = 8, zero = 3, fsdp = "full_shard", fsdp_version = 2,
               micro_batch = 1, global_batch = 8, recompute = "op" },
  workload = { seq_len = 8192, precision = "bf16", method = "pretrain",
               framework = "torchtitan" },
  measured = { metric = "tokens_per_s_per_gpu", value = 6000 },
  source = { title = "torchtitan benchmarks" },
}, gp.catalog())
train.train = orig
t.ok(seen and seen.kv_repeat == true, "torchtitan, GQA: kv_repeat")
