-- autocast: fp32 weights trained under torch.autocast (nanoVLM's loop,
-- "with torch.autocast(device_type='cuda', dtype=torch.bfloat16)" over a
-- model left in fp32).  The residual stream is fp32 (the embedding's
-- weight is, and fp32 + bf16 promotes), so each norm keeps fp32 tensors,
-- and each linear keeps its own bf16 cast of its input (autocast caches
-- only the casts of leaf tensors, the weights); the loss runs log_softmax
-- in fp32 (engine/memory_act.c act_autocast, memory_train.c).
-- Run with ./gpuplan run tests/lua/autocast.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(9)

-- SmolLM2-135M's shape (nanoVLM's LM): h = 576, 30 layers, q, k, v and
-- gate, up separate linears (split_proj both); one H100, 128 tokens.
local H, L, V, S = 576, 30, 49153, 128
local job = {
  model = { id = "smollm2-135m-autocast-probe", layers = L, hidden = H, heads = 9, kv_heads = 3,
            head_dim = 64, ffn_hidden = 1536, ffn_gated = true, vocab = V,
            tied_embeddings = true, split_proj = "both" },
  gpu = "h100-sxm", gpus = 1, seq = S, batch = 8, method = "full", optimizer = "adamw",
  precision = "bf16", recompute = "none",
}
local function comp(r, name)
  for _, c in ipairs(r.components) do if c.name == name then return c.bytes end end
  return 0
end
local function mem(x) return gp.memory(t.with(job, x)) end

local r0, r1 = mem {}, mem { autocast = true }
local tok = S * 8
-- Per layer and token, against the stack's eager bf16 modules (A = 2):
--   two RMSNorms: fp32 input 4 + the 2-byte normalised copy = 6 each,
--     under autocast the input 4 + the fp32 normalised tensor 4 = 8 each: +4 h
--   q, k, v: one 2-byte input -> three casts: +4 h
--   gate, up: one 2-byte input -> two casts: +2 h
-- = 10 h bytes, nothing else in the layer changes (the linears' outputs
-- are bf16).  Exact arithmetic: tolerance 1e-9 relative.
t.near((comp(r1, "activations") - comp(r0, "activations")) / (L * tok * H), 10, 1e-9,
       "a layer keeps 10 h bytes a token more under autocast (norms +4 h, q/k/v +4 h, gate/up +2 h)")
-- The loss: the eager modules' 6 B a logit (bf16 logits and their copy)
-- against A + 3 x 4 = 14 (the bf16 logits the caller holds, log_softmax's
-- fp32 output, nll_loss's and log_softmax's fp32 gradients), and the final
-- norm 8 B against 6: (14 - 6) V + 2 h a token.
t.near((comp(r1, "logits") - comp(r0, "logits")) / tok, 8 * V + 2 * H, 1e-9,
       "the loss: 14 B a logit against 6, the final norm +2 h")
t.ok(comp(r1, "weights") == comp(r0, "weights") and comp(r1, "optimizer") == comp(r0, "optimizer"),
     "the states are the recipe's either way (mixed-16)")

-- Fused projections (no split_proj): one cast each of the attention's and
-- the MLP's input, as the 16-bit input was: the norms' +4 h only.
local jf = t.with(job, { autocast = true })
jf.model = t.with(job.model, {}); jf.model.split_proj = nil
local j0 = t.with(job, {}); j0.model = jf.model
t.near((comp(gp.memory(jf), "activations") - comp(gp.memory(j0), "activations")) / (L * tok * H),
       4, 1e-9, "fused projections: the fp32 norms' +4 h alone")

-- Full recompute keeps each layer's input, the fp32 stream: 4 B against
-- 2, +2 h a layer and token over the stored inputs; the one layer re-run
-- in the backward adds its own (larger) working set, so only a bound.
local f0, f1 = mem { recompute = "full" }, mem { recompute = "full", autocast = true }
t.ok(comp(f1, "activations") - comp(f0, "activations") >= 2 * L * tok * H - 1,
     "full recompute: the kept layer inputs are fp32")

-- Refused: not a boolean; a precision with no cast; LoRA's frozen base.
local function refused(x, what)
  local ok, err = pcall(gp.memory, t.with(job, x))
  return not ok and tostring(err):find(what, 1, true) ~= nil
end
t.ok(refused({ autocast = "yes" }, "autocast"), "a non-boolean autocast is refused by name")
t.ok(refused({ autocast = true, precision = "fp32" }, "autocast"), "fp32 precision: no cast, refused")
t.ok(refused({ autocast = true, method = "lora" }, "autocast"), "LoRA: refused")
t.ok(refused({ autocast = true, stack = "megatron" }, "autocast"), "megatron's bf16 weights: refused")
