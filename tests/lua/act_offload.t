-- activation_offload_layers: Megatron-Core's CPU activation offloading
-- (cpu_offloading_num_layers; Transformer Engine's offload context,
-- engine/train.c act_offload_time, engine/memory_train.c).  The saved
-- activations of the first N of L layers cross the GPU's host link, each
-- layer's copy inside a window of about L / N layers' compute (TE's
-- layer_window_map), forward and backward; what a copy outlasts its
-- window by is added.  N - 1 layers' activations leave the GPU.
-- Run with ./gpuplan run tests/lua/act_offload.t.
local t = require "tap"
local gp = require "gpuplan"
local comm = require "gpuplan.comm"

t.plan(17)

local function train(o)
  local b = { model = "llama3.2-1b", gpu = "b200", gpus = 1, seq = 8192, batch = 1,
              global_batch = 1, stack = "megatron", recompute = "none", precision = "bf16" }
  for k, v in pairs(o) do b[k] = v end
  return gp.train(b)
end

-- Llama 3.2 1B (16 layers, hidden 2048) on one B200, seq 8192: a layer's
-- saved activations, act_layer (about 0.62 GB), over the B200's PCIe Gen5
-- x16 host link (16 x 0.985 GB/s x 4 x 0.8 = 50.4 GB/s, gpuplan.comm
-- pcie_bw) take t = act_layer / 50.4e9, about 12 ms, more than two layers'
-- backward (the layer's ~1.3 TFLOP forward, 2.6 backward, run in a few ms
-- on a B200): every window is exposed, so a window of w layers costs
-- (t - w lf) forward and (t - w lb) backward.
--   N = 15 (q = 16 // 15 = 1, r = 1): 15 windows of one layer;
--   N = 8  (q = 2, r = 0): window 0 of one layer (the copy starts after
--          layer 0), 7 of two.
-- Their difference: 15 (2t - lf - lb) - [(2t - lf - lb) + 7 (2t - 2lf - 2lb)]
--   = 2 (15 - 8) t = 14 t, lf and lb cancelling; one micro-batch a step.
local r0 = train {}
local r8 = train { activation_offload_layers = 8 }
local r15 = train { activation_offload_layers = 15 }
local bw = comm.host_link_bw(gp.catalog():get("gpus", "b200"))
t.near(bw, 16 * 0.985e9 * 4 * 0.8, 1e-12, "B200's host link: PCIe Gen5 x16, 50.4 GB/s")
local tc = r15.memory.act_layer / bw
t.ok(tc > 0.005 and tc < 0.05, string.format("a layer's copy %.1f ms", tc * 1e3))
-- Tolerance 1e-9 relative: the same sums in double precision.
t.near(r15.step_s - r8.step_s, 14 * tc, 1e-9, "step(N 15) - step(N 8) = 14 t (every window exposed)")
t.ok(r8.step_s > r0.step_s, "the exposed copies slow the step")
t.ok(t.said(r8, "activation offload over the host link at 50%.4 GB/s"),
     "the defaults line states the link's rate")
-- Memory: nl - N + 1 layers resident at the forward's last layer, so
-- activations fall by exactly (N - 1) x act_layer (1e-9: the same sum).
local a0 = t.part(r0.memory, "activations")
t.near(a0 - t.part(r15.memory, "activations"), 14 * r15.memory.act_layer, 1e-9,
       "N 15: 14 layers' activations leave the GPU")
t.near(a0 - t.part(r8.memory, "activations"), 7 * r8.memory.act_layer, 1e-9,
       "N 8: 7 layers' activations leave the GPU")

-- gp.memory takes the same key: the same (N - 1) x act_layer.
local m0 = gp.memory { model = "llama3.2-1b", gpu = "b200", seq = 8192, stack = "megatron",
                       recompute = "none", method = "pretrain" }
local m8 = gp.memory { model = "llama3.2-1b", gpu = "b200", seq = 8192, stack = "megatron",
                       recompute = "none", method = "pretrain", activation_offload_layers = 8 }
t.near(t.part(m0, "activations") - t.part(m8, "activations"), 7 * m8.act_layer, 1e-9,
       "gp.memory, N 8: 7 layers' activations leave the GPU")

-- Hidden: Llama 3 8B (32 layers, hidden 4096) offloading N = 2 has windows
-- of 15 and 16 layers, each layer's forward ~2.5x the 1B's at 2x its
-- bytes: 15 layers' compute far outlasts a copy, nothing is added.
local h0 = train { model = "llama3-8b" }
local h2 = train { model = "llama3-8b", activation_offload_layers = 2 }
t.is(h2.step_s, h0.step_s, "N 2 of 32: the copies hide under 15-16 layers' compute")

-- Megatron-Core's refusals, named by the key.
t.raises(function() train { activation_offload_layers = 16 } end,
  "activation_offload_layers 16: Megatron-Core offloads fewer layers than the model's 16",
  "N = the model's layers is refused", true)
t.raises(function() train { activation_offload_layers = 4, recompute = "full" } end,
  "activation_offload_layers needs recompute = none (got recompute = full)",
  "recompute is refused", true)
-- A module list is selective's (Megatron-Core reads it under that
-- granularity alone): with none (the offload's) it is refused, and given
-- alone it makes the job selective, refused with the offload as selective
-- is; a search over none and selective with it keeps selective alone,
-- every layout carrying the list.
t.raises(function() train { activation_offload_layers = 4, recompute_modules = "layernorm" } end,
  "recompute_modules applies to recompute = selective",
  "none with a module list is refused", true)
t.raises(function() gp.train { model = "llama3-8b", gpu = "b200", gpus = 1, seq = 8192,
    global_batch = 1, stack = "megatron", precision = "bf16", activation_offload_layers = 4,
    recompute_modules = "layernorm" } end,
  "activation_offload_layers needs recompute = none (got recompute = selective)",
  "a module list alone (selective's) is refused", true)
t.raises(function() gp.sweep { model = "llama3-8b", gpu = "b200", gpus = { 2 }, seq = 8192,
    global_batch = 8, recompute = { "none", "selective" }, recompute_modules = "core_attn",
    activation_offload_layers = 4 } end,
  "activation_offload_layers needs no recompute_modules (got core_attn",
  "a search with a module list is refused", true)
t.raises(function() train { model = "llama3-8b", gpus = 2, pp = 2, activation_offload_layers = 4 } end,
  "activation_offload_layers needs pp = 1 (got pp 2)", "pipeline parallelism is refused", true)
t.raises(function() train { activation_offload_layers = 4, stack = "hf", precision = "bf16" } end,
  "activation_offload_layers is Megatron-Core's cpu_offloading", "another stack is refused", true)
t.raises(function() train { activation_offload_layers = 0 } end,
  "activation_offload_layers", "0 is refused", true)
