-- The last gradient bucket of a once-a-step reduction (ZeRO 0/1) holds at
-- least the input embedding (engine/train.c phase_post, train_stage.c
-- stage_base's tail): its gradient is the backward's last, so its
-- reduce-scatter cannot hide under the backward, nor its parameter
-- all-gather under the next forward, which reads it first.
-- Run with ./gpuplan run tests/lua/dp_tail.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(11)

-- A Llama-shaped model of 16 layers (h 4096, 32 heads of 128, 8 KV heads,
-- gated FFN 14336, RMSNorm, untied output layer) on two DGX H100 nodes,
-- dp 16, tp = pp = 1, ZeRO 1 on the megatron stack, bf16 gradients
-- reduced in bf16; the same job with the DP overlaps off is the
-- reference whose dp_comm and zero_gather are the whole collectives.
local L, h, kv, hd, f = 16, 4096, 8, 128, 14336
local function run(vocab, on)
  return gp.train { gpu = "h100-sxm", gpus = 16, method = "pretrain", seq = 4096, batch = 1,
    global_batch = 64, recompute = "none", zero = 1, stack = "megatron", precision = "bf16",
    grad_reduce = "bf16", overlap_grad_reduce = on, overlap_param_gather = on,
    model = { layers = L, hidden = h, heads = 32, kv_heads = kv, ffn_hidden = f,
              ffn_gated = true, vocab = vocab, tied_embeddings = false, norm = "rms" } }
end

-- Hand derivation.  The GPU holds P = L (h (h + 2 kv hd) + h^2 + 3 h f +
-- 2h) + 2 V h + h parameters (qkv, o, the gated MLP's three matrices,
-- two norms a layer; the embedding and the output layer, V h each; the
-- final norm).  The last bucket is b = max(40e6, V h) / P of the step's
-- reduction D (Megatron-Core's 40M-parameter default bucket, or the
-- embedding's when larger), exposed whole; the rest, (1 - b) D, hides
-- under the last micro-batch's backward (it fits: D is tens of ms, the
-- backward over a hundred) at the measured slowdown s = 0.189 of each
-- hidden second (train_int.h OVERLAP_SLOWDOWN).  So with the overlap on
-- dp_comm = b D + s (1 - b) D and its hidden seconds (1 - b) D; the
-- gather G the same under the next step's first forward.
-- V = 128256: V h = 525.3M > 40M, b = 525.3M / 4540.5M = 0.1157.
-- V = 8192: V h = 33.6M < 40M, b = 40M / 3556.9M = 0.0112 (the bucket
-- the step priced before the embedding's floor).
-- Tolerance 1e-9 relative: the same double arithmetic in another order.
local s = 0.189
local function part(r, n) return t.step_part(r, n) end
for _, V in ipairs { 128256, 8192 } do
  local P = L * (h * (h + 2 * kv * hd) + h * h + 3 * h * f + 2 * h) + 2 * V * h + h
  local b = math.max(4e7, V * h) / P
  local off, on = run(V, false), run(V, true)
  local D, G = part(off, "dp_comm").seconds, part(off, "zero_gather").seconds
  t.near(part(on, "dp_comm").seconds, b * D + s * (1 - b) * D, 1e-9,
    ("vocab %d: the last bucket's reduce-scatter (b = %.4f) exposed, the rest hidden"):format(V, b))
  t.near(part(on, "dp_comm").hidden, (1 - b) * D, 1e-9,
    ("vocab %d: all but the last bucket under the backward"):format(V))
  t.near(part(on, "zero_gather").seconds, b * G + s * (1 - b) * G, 1e-9,
    ("vocab %d: the embedding's bucket gathered before the first forward"):format(V))
  t.near(part(on, "zero_gather").hidden, (1 - b) * G, 1e-9,
    ("vocab %d: the other buckets' gathers under the forward"):format(V))
end

-- Full recompute re-runs each layer's forward inside the backward, just
-- before that layer's backward (PyTorch's checkpoint: the re-run is the
-- autograd node's own backward), so the gradient buckets reduced on the
-- side stream run beside the recompute too: the window the reduction
-- hides under is the last micro-batch's backward plus its recompute.
-- InternLM-7B's 1024-GPU row of one micro-batch of 2 x 2048 tokens (its
-- FLOPS-testing table: the same step, 1.750 s checkpointed and 1.746 s
-- not) on 4 x 100 Gb RoCE a node: the all-reduce (over a second) outlasts
-- the backward either way, so the recompute's R seconds hide whole: the
-- exposed dp_comm falls by (1 - s) R and its hidden seconds grow by R.
-- Tolerance 1e-9 relative: the same double arithmetic in another order.
local function intern(rc)
  return gp.train { gpu = "a100-sxm-80gb", gpus = 1024, gpus_per_node = 8,
    nic_fabric = "roce-100", nics = 4, tp = 1, pp = 1, zero = 1, zero_group = 8,
    zero_reduce = "allreduce", batch = 2, global_batch = 2048, seq = 2048, precision = "bf16",
    method = "pretrain", attn_kernel = "fa1", recompute = rc,
    model = { layers = 32, hidden = 4096, heads = 32, kv_heads = 32, head_dim = 128,
              ffn_hidden = 11008, ffn_gated = true, vocab = 103168, tied_embeddings = false,
              norm = "rms" } }
end
local none, full = intern("none"), intern("full")
local R = part(full, "recompute").seconds
t.ok(R > 0 and part(none, "dp_comm").seconds > 0.5 * R,
  "InternLM-7B 1024 GPUs: a recompute to hide, and more exposed reduction than it")
t.near(part(none, "dp_comm").seconds - part(full, "dp_comm").seconds, (1 - s) * R, 1e-9,
  "full recompute: the exposed reduction falls by (1 - s) x the recompute")
t.near(part(full, "dp_comm").hidden - part(none, "dp_comm").hidden, R, 1e-9,
  "full recompute: the recompute's seconds hide the reduction")
