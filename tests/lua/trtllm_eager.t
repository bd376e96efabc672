-- TensorRT-LLM's PyTorch flow without CUDA graphs in the MoE serving model
-- (gp.infer's enforce_eager with runtime trtllm; lua/gpuplan/infer.lua
-- M.eager_host_ops.trtllm, engine/serve_step.c eager_floor): before
-- TensorRT-LLM PR #5480 (2025-06-25) PyTorchConfig's use_cuda_graph was
-- False by default, so every op of a step was dispatched from Python and
-- the host's dispatch is a floor under each step.
-- Run with ./gpuplan run tests/lua/trtllm_eager.t.
local t = require "tap"
local gp = require "gpuplan"
local infer = require "gpuplan.infer"

t.plan(9)

-- The op count of modeling_deepseekv3.py at 9b931c0f: 22 a dense layer and
-- 30 a MoE layer at TP > 1 (three all-reduces among them), DeepSeek-V3's 61
-- layers of which 3 dense: (3 x 22 + 58 x 30) / 61 = 1806 / 61.
local v3 = require("gpuplan").catalog():get("models", "deepseek-v3")
t.near(infer.eager_host_ops.trtllm(v3, 8), 1806 / 61, 1e-12,
       "DeepSeek-V3 at TP 8: (3 x 22 + 58 x 30) / 61 ops a layer")
-- at TP 1 the three all-reduce calls of a MoE layer and the one of a dense
-- layer's o_proj are not made (fused ones become plain norms):
-- (3 x 21 + 58 x 29) / 61
t.near(infer.eager_host_ops.trtllm(v3, 1), (3 * 21 + 58 * 29) / 61, 1e-12,
       "... at TP 1: one op fewer a layer")
t.is(infer.eager_host_ops.trtllm(gp.catalog():get("models", "llama2-7b"), 1), nil,
     "no count for a dense model")

-- DeepSeek-V3 fp8 on 8 H200, TP 8 with experts EP 4 x TP 2, one sequence
-- a GPU: the graph step is ~16.8 ms, under the host's dispatch, so the
-- step is the host's (61 x 1806 / 61 + 10 outer ops) x 24.84 us
-- (GP_EAGER_OP_TIME) = 1816 x 24.84 us = 45.109 ms exactly (1e-9 s: the
-- floor is the host's sum when it binds).
local function run(extra)
  local a = { model = "deepseek-v3", gpu = "h200-sxm", gpus = 8, tp = 8, ep = 4,
              weights = "fp8", input = 3200, output = 800, batch = 1, runtime = "trtllm" }
  for k, v in pairs(extra or {}) do a[k] = v end
  return gp.infer(a)
end
local e, g = run { enforce_eager = true }, run()
t.near(e.decode.time, 1816 * 24.84e-6, 1e-9, "eager decode step = 1816 host ops x 24.84 us")
t.ok(g.decode.time < e.decode.time / 2, "with its graphs the step is well under the host floor")
-- At 16 sequences a GPU the GPU's step exceeds the floor: the floor
-- adds nothing beyond the stream launches (a step at least the graph's).
local eb, gb = run { enforce_eager = true, batch = 16 }, run { batch = 16 }
t.ok(eb.decode.time >= gb.decode.time and eb.decode.time > 1816 * 24.84e-6,
     "a GPU-bound eager step: its own time, above the floor")

-- Refusals: the MoE serving model takes enforce_eager for trtllm only.
t.raises(function() run { enforce_eager = true, runtime = "sglang" } end,
         "runtime vllm and trtllm only", "enforce_eager with runtime sglang: refused")
t.raises(function() run { enforce_eager = true, runtime = "vllm" } end,
         "prices its own steps under CUDA graphs, but for runtime trtllm",
         "enforce_eager with the MoE serving model on vllm: refused")
-- A MoE model of another shape (Mixtral: no MLA) has no count: refused,
-- naming the Lua key that gives one.
t.raises(function() run { enforce_eager = true, model = "mixtral-8x7b" } end,
         "counted for a DeepSeek-V3-shaped model (MLA and MoE) only; give the count as "
           .. "host_ops_per_layer", "enforce_eager, trtllm, Mixtral: refused", true)
