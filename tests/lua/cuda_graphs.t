-- Transformer Engine's CUDA graphs of parts of a layer (gp.train's
-- cuda_graph_scope, Megatron-Core's cuda_graph_scope with
-- cuda_graph_impl "transformer_engine"): the captured kernels cost the
-- host one replay of two calls in place of their launches one by one.
-- Run with ./gpuplan run tests/lua/cuda_graphs.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(13)

local function host_wait(r)
  for _, o in ipairs(r.ops) do if o.name == "host_wait" then return o.fwd end end
  return 0
end
local function part(r, name) return t.parts(r)[name] end  -- tap.lua's parts

-- Qwen3-30B-A3B on 8 B200 (x86 host: 24.84 us a launch, x 1.118 driving
-- a Blackwell GPU -- the DGX B200's host_op_scale -- = tau, 27.77 us),
-- EP8, one 4096-token micro-batch, alltoall dispatcher: the MoE layer's
-- forward is host-bound (1.66 ms of host wait) with or without the graphs.
local tau = 24.84e-6 * 1.118
local job = { model = "qwen3-30b-a3b", gpu = "b200", gpus = 8, ep = 8, method = "pretrain",
              seq = 4096, global_batch = 512, precision = "fp8", fp8_scaling = "block" }
local r0 = gp.train(job)
-- moe_router and moe_preprocess capture the MLP's norm 1, the router GEMM
-- 1, the router's ops 11 and alltoall's preprocess 8: 21 launches become
-- the replay's 2, 19 x 27.77 us = 527.65 us less host wait (1e-9: the
-- same sums).
local r1 = gp.train(t.with(job, { cuda_graph_scope = "moe_router,moe_preprocess" }))
t.near(host_wait(r0) - host_wait(r1), 19 * tau, 1e-9,
       "moe_router,moe_preprocess: 21 launches in one replay of 2")
-- attn adds the input norm, qkv, Qwen3's q_layernorm and k_layernorm
-- (model qk_norm), rope, attention, o_proj and the residual add (8) to
-- the same capture, and with them the fp8 host share of the two
-- quantizing modules it holds (train_layer.c TE_FP8_*: qkv, a
-- LayerNormLinear, (135.42 - 83.48) / 59.19 = 0.878 of a launch; o_proj,
-- a Linear, (114.51 - 59.19) / 59.19 = 0.935): 9.813 x 27.77 us =
-- 272.5 us less.
local r2 = gp.train(t.with(job, { cuda_graph_scope = { "attn", "moe_router", "moe_preprocess" } }))
t.near(host_wait(r1) - host_wait(r2),
       (8 + (135.42 - 83.48) / 59.19 + (114.51 - 59.19) / 59.19) * tau, 1e-9,
       "attn: 8 more launches and their fp8 share in the same replay")
-- The backward replays the capture too: the graphed modules' Python
-- backward goes with it (TE PR #3523, in launches: qkv's LayerNormLinear
-- (397.73 - 83.48) / 59.19 = 5.309, o_proj's Linear (311.30 - 59.19) /
-- 59.19 = 4.259), and their fp8 share of the backward, 1.166 + 1.255:
-- 11.989 x 27.77 us = 333.0 us less.
local function host_wait_b(r)
  for _, o in ipairs(r.ops) do if o.name == "host_wait" then return o.bwd end end
  return 0
end
t.near(host_wait_b(r1) - host_wait_b(r2),
       ((397.73 - 83.48) + (311.30 - 59.19)
        + ((518.67 - 135.42) - (397.73 - 83.48)) + ((440.93 - 114.51) - (311.30 - 59.19)))
         / 59.19 * tau, 1e-9, "attn: their backward host and fp8 share replayed too")
-- flex's preprocess is 3 launches, not 8: 14 x 27.77 us with the router's.
local f0 = gp.train(t.with(job, { moe_dispatcher = "flex" }))
local f1 = gp.train(t.with(job, { moe_dispatcher = "flex",
                                  cuda_graph_scope = "moe_router,moe_preprocess" }))
t.near(host_wait(f0) - host_wait(f1), 14 * tau, 1e-9,
       "flex: its 3 preprocess launches graphed")
-- The graphs move no bytes: the expert all-to-all is unchanged.
t.near(part(r2, "ep_comm"), part(r0, "ep_comm"), 1e-12, "graphs leave the all-to-all alone")
-- A GPU-bound forward gains nothing: Qwen3-30B-A3B on 8 H100 at 8
-- micro-batch sequences (65536 tokens) waits on no host.
local big = t.with(job, { gpu = "h100-sxm", batch = 8, precision = "bf16", fp8_scaling = false })
big.fp8_scaling = nil
t.near(gp.train(t.with(big, { cuda_graph_scope = "attn" })).step_s, gp.train(big).step_s, 1e-12,
       "GPU-bound: the same step")

local function err(o)
  local ok, e = pcall(gp.train, t.with(job, o))
  return not ok and tostring(e) or ""
end
t.like(err { cuda_graph_scope = "mlp" }, "unknown scope 'mlp' %(expected attn, moe_router, "
       .. "moe_preprocess, mamba or full_iteration%)", "an unknown scope is named")
t.like(err { model = "llama3-8b", cuda_graph_scope = "moe_router" },
       "moe_router needs a MoE model; llama3%-8b has no experts", "MoE scopes need experts")
t.like(err { cuda_graph_scope = { "attn", 3 } }, "cuda_graph_scope%[2%] must be a scope name",
       "a list's entries are names")
-- full_iteration (Megatron-Core's whole forward-backward graph) replays
-- every layer: no host wait either way.  The host-bound job above (one
-- 4096-token micro-batch a GPU, GA = 512 / 8 = 64, 48 MoE layers, PP 1)
-- waits r0's host_wait forward and backward in each layer of each
-- micro-batch, so its compute part loses exactly 64 x 48 x (fwd + bwd)
-- of them (the same sums: 1e-9), and the step the same (nothing else
-- moves).
local rf = gp.train(t.with(job, { cuda_graph_scope = "full_iteration" }))
local function hw_fb(r)
  for _, o in ipairs(r.ops) do if o.name == "host_wait" then return o.fwd + o.bwd end end
  return 0
end
t.is(hw_fb(rf), 0, "full_iteration: no host wait in the layer")
t.near(part(r0, "compute") - part(rf, "compute"), 64 * 48 * hw_fb(r0), 1e-9,
       "full_iteration: the step loses every layer's host wait, both ways")
t.like(err { cuda_graph_scope = "attn,full_iteration" }, "full_iteration captures the whole "
       .. "forward%-backward step, every layer's scopes with it: give it alone",
       "full_iteration with a layer scope refused")
-- Eager modules launch each op themselves: no fused layer to capture, so
-- a scope would change nothing; refused rather than ignored.
t.like(err { cuda_graph_scope = "attn", kernels = "eager" },
       "cuda_graph_scope captures Transformer Engine's fused kernels; with kernels = eager",
       "graphs with eager kernels refused")
