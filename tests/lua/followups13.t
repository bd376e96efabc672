-- Small items last round's reviewers found (followups13): one block a fix.
-- Run with ./gpuplan run tests/lua/followups13.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(1)

-- 1. Liger's fused linear cross-entropy runs whole chunks (ops/fused_
-- linear_cross_entropy.py at v0.8.0: "num_chunks = triton.cdiv(BT,
-- chunk_size)", the last "end_idx = min((chunk_id + 1) * chunk_size,
-- BT)"), each re-reading the head's weight; train_layer.c priced T / ch
-- chunks, so a token past a whole chunk cost 1/ch of one.  A model with V
-- = 4 h (h 4096, V 16384): inc_factor 4, and at T = 3072 and 3073 the
-- chunk is next_power_of_2(ceil(T / 4)) = 1024 rows (768 and 769 rounded
-- up): 3 whole chunks, then 3 and one of 1 row.  That row's chunk reads
-- the V x h weight in its logits and input-gradient GEMMs (2 B a weight
-- each), writes its weight gradient (2 B) and adds it in fp32 (3 A + 8 =
-- 14 B): 20 V h = 1.342 GB at 3.35 TB/s x 0.84 (H100 SXM, the catalog's
-- hbm fraction) = 0.477 ms.  The layers are the same with and without
-- the option (recompute none, one micro-batch), so the step's difference
-- on - off moves, from 3072 to 3073 tokens, by that chunk less the
-- unfused head's one more token: 10% tolerance for the four kernels'
-- launch gaps and the 1-row chunk's activations (T / ch pricing moved it
-- by under 1 us).
do
  local tiny = { name = "tiny", layers = 2, hidden = 4096, heads = 32, kv_heads = 8,
                 head_dim = 128, ffn_hidden = 14336, ffn_gated = true, vocab = 16384,
                 tied_embeddings = false, params_b = 0.5 }
  local job = { model = tiny, gpu = "h100-sxm", gpus = 1, method = "full", stack = "hf",
                kernels = "fused", batch = 1, global_batch = 1, recompute = "none" }
  local function d(T)
    return gp.train(t.with(job, { seq = T, fused_linear_ce = true })).step_s
      - gp.train(t.with(job, { seq = T })).step_s
  end
  local V, h = 16384, 4096
  local want = 20 * V * h / (3.35e12 * 0.84)
  t.near(d(3073) - d(3072), want, 0.10, "a token past 3 whole chunks: one more chunk, its weight read")
end
