-- The token embedding looked up as a one-hot matmul (emb_matmul): Praxis'
-- emb_lookup with lookup_style 'matmul', which Paxml's GPT configs set
-- (EMBEDDING_LOOKUP_STYLE = 'matmul'), builds the T x V one-hot in the
-- 16-bit type and multiplies it by the table; the table's gradient is the
-- transposed product.  Run with ./gpuplan run tests/lua/emb_matmul.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(6)

-- Paxml's GPT 126M shape (configs.py GPT126MBase: 12 layers of 768,
-- vocabulary 50304, seq 2048) on one H100 SXM, one micro-batch of 4
-- sequences: T = 8192 tokens.  The two GEMMs are 2 T V h FLOPs each:
-- F = 4 x 8192 x 50304 x 768 = 1.266e12 FLOP; the one-hot written is
-- T V A = 8192 x 50304 x 2 B = 824 MB and the table's gradient added is
-- V h (A + 4) = 232 MB (fp32 main grad).  What it replaces, the gather
-- (2 T h A = 25 MB), its scatter (T h (A + 4) = 38 MB) and the zeroed
-- table (V h A = 77 MB), is under 0.05 ms at the card's bandwidth.
-- Bounds, not a point: no GEMM runs above the dense bf16 peak (989
-- TFLOP/s) and the one-hot's write (its own iota-compare kernel, before
-- the GEMM) no faster than the 3.35 TB/s peak, so the step grows by at
-- least F / 989e12 + 824 MB / 3.35e12 = 1.28 + 0.25 ms less the gather's
-- 0.05 ms (either GEMM left out, the growth is under 1.4 ms); and these
-- shapes (M 8192, N 768, K 50304 forward;
-- M 50304, N 768, K 8192 back, every dimension a multiple of 128 but
-- V = 393 x 128) run at no less than half the peak, the bytes at no less
-- than half the 3.35 TB/s, so it grows by at most F / 494.5e12 + 1.056 GB
-- / 1.675e12 = 2.56 + 0.63 = 3.19 ms.
local model = { id = "gpt-126m-pax", layers = 12, hidden = 768, heads = 12, kv_heads = 12,
                head_dim = 64, ffn_hidden = 3072, ffn_gated = false, ffn_act = "gelu",
                vocab = 50304, tied_embeddings = true, positions = "learned", norm = "layer" }
local job = { model = model, gpu = "h100-sxm", gpus = 1, method = "pretrain", stack = "megatron",
              seq = 2048, batch = 4, global_batch = 4, kernels = "fused" }
local off = gp.train(job)
local on = gp.train(t.with(job, { emb_matmul = true }))
local d = on.step_s - off.step_s
local F = 4 * 8192 * 50304 * 768
t.ok(d >= F / 989e12 + 8192 * 50304 * 2 / 3.35e12 - 0.05e-3,
     string.format("at least the GEMMs and the one-hot's write at the peaks (%.3f ms)", d * 1e3))
t.ok(d <= F / 494.5e12 + (8192 * 50304 * 2 + 50304 * 768 * 6) / 1.675e12,
     string.format("at most the GEMMs at half the peak and the bytes at half the bandwidth "
                   .. "(%.3f ms)", d * 1e3))
-- Paid once per micro-batch: two micro-batches of 4 sequences grow the
-- step by twice as much (the lookup runs per micro-batch; tolerance 1%
-- for the optimizer's and gradient reduction's share, which do not move).
local off2 = gp.train(t.with(job, { global_batch = 8 }))
local on2 = gp.train(t.with(job, { global_batch = 8, emb_matmul = true }))
t.near(on2.step_s - off2.step_s, 2 * d, 0.01, "paid per micro-batch")
-- A frozen table (LoRA) has no gradient GEMM: the growth is the forward's
-- alone, one GEMM of F / 2 and the one-hot, under the full job's.
local lo_off = gp.train(t.with(job, { method = "lora" }))
local lo_on = gp.train(t.with(job, { method = "lora", emb_matmul = true }))
t.ok(lo_on.step_s - lo_off.step_s < 0.65 * d,
     "LoRA: the forward's GEMM alone, about half of the full job's")
t.raises(function() gp.train(t.with(job, { emb_matmul = "yes" })) end,
         "train: emb_matmul must be true or false (got string 'yes')",
         "a non-boolean is refused, naming it", true)

-- The case field (SCHEMA.md workload.emb_matmul) reaches gp.train.
local case = {
  id = "t", kind = "train",
  model = { name = "GPT 126M", positions = "learned", layers = 12, hidden = 768, heads = 12,
            kv_heads = 12, head_dim = 64, ffn_hidden = 3072, ffn_gated = false, ffn_act = "gelu",
            vocab = 50304, tied_embeddings = true, params_b = 0.126 },
  hardware = { gpu = "h100-sxm", gpus = 8, gpus_per_node = 8 },
  parallel = { tp = 1, pp = 1, dp = 8, micro_batch = 4, global_batch = 32 },
  workload = { seq_len = 2048, precision = "bf16", method = "pretrain", emb_matmul = true },
  measured = { metric = "tokens_per_s_per_gpu", value = 150000 },
  source = { title = "t" },
}
local seen = t.handed(case)
t.ok(seen and seen.emb_matmul == true, "workload.emb_matmul is gp.train's emb_matmul")
