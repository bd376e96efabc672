-- Ulysses' all-to-alls where the model repeats K and V to every query
-- head before the attention kernel (kv_repeat): XTuner's Llama dispatch
-- (xtuner/model/modules/dispatch/llama.py at 7575f2c91) runs
-- "key_states = repeat_kv(key_states, self.num_key_value_groups)" ahead
-- of flash_attn_wo_mask, which "@sequence_parallel_wrapper" wraps with
-- the all-to-alls of q, k and v as handed in: K and V travel query wide.
-- Run with ./gpuplan run tests/lua/ulysses_kv_repeat.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(4)

-- Llama 2 70B's shape (64 query heads, 8 KV heads of 128) on 32 A100s
-- in nodes of 8, Ulysses 16, 32768 tokens a sequence (T = 2048 a rank).
local llama70 = { layers = 80, hidden = 8192, heads = 64, kv_heads = 8, head_dim = 128,
                  ffn_hidden = 28672, ffn_gated = true, vocab = 32000, norm = "rms",
                  tied_embeddings = false }
local job = { model = llama70, gpu = "a100-sxm-80gb", gpus = 32, gpus_per_node = 8,
              stack = "deepspeed", kernels = "eager", zero = 3, ulysses = 16, tp = 1, pp = 1,
              seq = 32768, batch = 1, global_batch = 2, recompute = "full", flash = true,
              method = "full", precision = "bf16" }
local function cp(j)
  for _, p in ipairs(gp.train(j).parts) do
    if p.name == "cp_comm" then return p.seconds end
  end
end
local mha = t.with(llama70, { kv_heads = 64 })
-- With the repeat, K's and V's buffers are q's width, T x 8192 x 2 B:
-- exactly the buffers of the same shape with 64 KV heads (no repeat
-- there: heads = kv heads), whose exchange prices q, k, v and o at one
-- width.  Tolerance 1e-9: the same four collectives of the same sizes.
t.near(cp(t.with(job, { kv_repeat = true })), cp(t.with(job, { model = mha })), 1e-9,
       "kv_repeat: K and V exchanged query wide, as an MHA model's")
-- Without it the 8 KV heads are repeated only to the group (verl's
-- "repeats = max(ulysses_sp_size // key_states.size(2), 1)" = 2): K and
-- V a quarter of q's width each (2 x 8 / 64), buffers q + k + v + o =
-- 2.5 q against 4 q.  Each all-to-all is bandwidth-bound at these sizes
-- (q's 33.6 MB a rank), so the ratio is near 4 / 2.5 = 1.6; tolerance
-- 5% for the collectives' per-call latency, which does not scale.
local on, off = cp(t.with(job, { kv_repeat = true })), cp(job)
t.ok(off > 0, "Ulysses 16 prices its all-to-alls")
t.near(on / off, 4 / 2.5, 0.05, "the repeat: 4 q-wide buffers against 2.5")
-- An MHA model has nothing to repeat: the flag leaves its exchange alone.
t.near(cp(t.with(job, { model = mha, kv_repeat = true })), cp(t.with(job, { model = mha })), 1e-12,
       "MHA: nothing repeated")
