-- MLA's projections as Megatron-Core runs them: four Transformer Engine
-- modules (q_down, q_up, kv_down, kv_up; without a q LoRA q_proj, kv_down,
-- kv_up) where the op list has one norm-fused qkv (engine/train_layer.c
-- mla_te_modules).  Run with ./gpuplan run tests/lua/mla_te_modules.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(3)

local base = require("gpuplan.catalog").get().models["deepseek-v3"]
-- DeepSeek-V3 on 8 GB200s, EP 8, one 512-token sequence: the layer's
-- forward is the host's launches (a few ms of host ops against well under
-- a ms of GPU work), so a module more is its host time more.
local function layer(q_lora, o)
  local m = t.copy(base)
  m.mla.q_lora_rank = q_lora
  local a = { model = m, gpu = "gb200", gpus = 8, ep = 8, seq = 512, batch = 1, global_batch = 8,
              stack = "megatron", zero = 1, kernels = "fused" }
  for k, v in pairs(o or {}) do a[k] = v end
  return (t.layer_fwd(gp.train(a)))
end
-- With a q LoRA the extra modules are q_down and kv_down (plain) and a
-- second norm-fused up projection; without one q_proj and kv_down
-- (plain): one norm-fused module apart, one host op forward, GB200's
-- unbound 2.75 x GP_EAGER_OP_TIME 24.84 us = 68.31 us.  Tolerance 1e-9 s:
-- a difference of exact products of constants.
local op = 2.75 * 24.84e-6
t.near(layer(1536) - layer(0), op, 1e-9, "q LoRA: one more norm-fused module, one host op")
-- In MXFP8 the module adds its quantizing share too (TE PR #3523 on GB200:
-- LayerNormLinear 135.42 us forward in MXFP8 against 83.48 in BF16, in
-- units of the BF16 Linear's 59.19).
local mx = { precision = "fp8", fp8_scaling = "block" }
t.near(layer(1536, mx) - layer(0, mx), op * (1 + (135.42 - 83.48) / 59.19), 1e-9,
  "MXFP8: the module's fp8 share with it")
-- Attention captured in a CUDA graph replays the modules' launches: the
-- q LoRA changes the forward by its GPU time only (well under a host op).
local g = { cuda_graph_scope = { "attn" } }
t.ok(math.abs(layer(1536, g) - layer(0, g)) < 0.2 * op, "graphed attention: no host op apart")
