-- FSDP1's views of a unit's parameters in each forward: after a unit's
-- flat parameter is gathered, FullyShardedDataParallel points each of the
-- unit's original parameters at its slice on the host
-- (_use_unsharded_flat_param: "elif in_forward:
-- self._use_unsharded_views(as_params=False)"), 6.112 ms for 400
-- parameters with the default setattr in pytorch PR #96958: 15.28 us a
-- parameter (engine/train_layer.c FSDP1_VIEW_S), on the layer's forward
-- host path.  FSDP2 (fully_shard) runs no such loop, and nothing else of
-- a layer's own costs reads fsdp_version (its copies are priced on the
-- stage, engine/train_stage.c fsdp_copies), so a host-bound layer's
-- host_wait differs between the two by exactly the loop.
-- Run with ./gpuplan run tests/lua/fsdp1_views.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(8)

local VIEW_S = 6.112e-3 / 400

-- Qwen2.5-0.5B's shape on 8 H100s, Hugging Face's eager modules, FSDP
-- full_shard, micro-batches of 4 x 768 tokens, full recompute: the play-
-- verl PPO row's actor update, whose layers' forward is bound by the
-- host (its dispatch outlasts the GPU's work, so host_wait is positive).
local M = { ffn_gated = true, ffn_hidden = 4864, head_dim = 64, heads = 14, hidden = 896,
            id = "qwen2.5-0.5b-shape", kv_heads = 2, layers = 24, norm = "rms",
            split_proj = "both", tied_embeddings = true, vocab = 151936 }
local job = { model = M, gpu = "h100-sxm", gpus = 8, seq = 768, batch = 4, global_batch = 512,
              stack = "hf", kernels = "eager", fsdp = "full_shard", recompute = "full",
              margin = 0 }
-- (no host_wait op where the GPU never waits for the host)
local function wait(r) local o = t.op(r, "host_wait") return o and o.fwd or 0 end

local v1 = gp.train(t.with(job, { fsdp_version = 1 }))
local v2 = gp.train(t.with(job, { fsdp_version = 2 }))
t.ok(wait(v2) > 0, "the layer's forward is host-bound without the loop")
-- q, k, v and o (split_proj both keeps q, k, v apart; no biases), gate,
-- up and down, the two RMSNorms' weights: 9 parameters a layer, 9 x
-- 15.28 us = 137.5 us more host time a layer's forward.  Tolerance 1e-9
-- relative: the same sums.
t.near((wait(v1) - wait(v2)) / (9 * VIEW_S), 1, 1e-9,
  "FSDP1: 9 parameters' views a layer's forward")

-- Qwen2's q, k and v carry biases (qkv_bias): 12 parameters.
local b1 = gp.train(t.with(job, { fsdp_version = 1, model = t.with(M, { qkv_bias = true }) }))
local b2 = gp.train(t.with(job, { fsdp_version = 2, model = t.with(M, { qkv_bias = true }) }))
t.near((wait(b1) - wait(b2)) / (12 * VIEW_S), 1, 1e-9,
  "q, k and v biases: 12 parameters' views")

-- Fused projections (split_proj none): qkv, o, gate_up, down and the two
-- norms, 6 parameters.
local f1 = gp.train(t.with(job, { fsdp_version = 1, model = t.with(M, { split_proj = "none" }) }))
local f2 = gp.train(t.with(job, { fsdp_version = 2, model = t.with(M, { split_proj = "none" }) }))
t.near((wait(f1) - wait(f2)) / (6 * VIEW_S), 1, 1e-9,
  "fused qkv and gate_up: 6 parameters' views")

-- LayerNorms (a gain and a bias each) and Qwen3's q and k norms
-- (qk_norm): the two layer norms and the two head norms, 4 norms of 2
-- tensors, 8, and the 7 linears: 15 parameters (one count with ZeRO's
-- gather copies, engine/train_layer.c train_layer_tensors).
local q1 = gp.train(t.with(job, { fsdp_version = 1,
  model = t.with(M, { norm = "layer", qk_norm = true }) }))
local q2 = gp.train(t.with(job, { fsdp_version = 2,
  model = t.with(M, { norm = "layer", qk_norm = true }) }))
t.near((wait(q1) - wait(q2)) / (15 * VIEW_S), 1, 1e-9,
  "LayerNorms with q and k norms: 15 parameters' views")
-- GPT-J's one norm a layer (shared_norm: ln_1 feeds the attention and
-- the MLP of a parallel layer), a LayerNorm, and biases on every linear (linear_bias): 2
-- norm tensors and 7 linears with their 7 biases, 16.
local j1 = gp.train(t.with(job, { fsdp_version = 1,
  model = t.with(M, { norm = "layer", shared_norm = true, parallel_attn = true,
    linear_bias = true }) }))
local j2 = gp.train(t.with(job, { fsdp_version = 2,
  model = t.with(M, { norm = "layer", shared_norm = true, parallel_attn = true,
    linear_bias = true }) }))
t.near((wait(j1) - wait(j2)) / (16 * VIEW_S), 1, 1e-9,
  "one shared LayerNorm, biased linears: 16 parameters' views")

-- One GPU, parameters not offloaded: nothing is gathered, so no unit
-- is unsharded and the loop is not priced.
local o1 = gp.train(t.with(job, { fsdp_version = 1, gpus = 1, global_batch = 4 }))
local o2 = gp.train(t.with(job, { fsdp_version = 2, gpus = 1, global_batch = 4 }))
t.is(wait(o1), wait(o2), "nothing gathered: no views priced")

-- A GPU-bound forward (micro-batches of 8 x 4096 tokens) hides the loop
-- under its kernels: the layer's host_wait is 0 either way.
local g1 = gp.train(t.with(job, { fsdp_version = 1, seq = 4096, batch = 8 }))
t.is(wait(g1), 0, "a GPU-bound forward hides the views")
