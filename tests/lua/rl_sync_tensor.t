-- gp.rl's sync_tensor_time: a weight sync that exports the trainer's
-- weights one tensor at a time (verl's Megatron export into vLLM's
-- load_weights) pays that time per tensor of the model's checkpoint
-- (gpuplan.rl.weight_tensors) on top of its bytes, on the step's path.
-- Run with ./gpuplan run tests/lua/rl_sync_tensor.t.
local t = require "tap"
local gp = require "gpuplan"
local rl = require "gpuplan.rl"

local with, phase = t.with, t.phase
local cat = gp.catalog()

-- Qwen2.5-7B: 28 layers of 2 norms, q, k, v, o and a gated MLP (gate,
-- up, down) = 9 each, the embedding, the final norm and its untied LM
-- head: 28 x 9 + 3 = 255.
t.is(rl.weight_tensors(cat:get("models", "qwen2.5-7b")), 255,
  "a dense model's tensors: 9 a layer and 3 more")
-- DeepSeek-V3: 61 layers of 2 norms and MLA's 7 (q_a, its norm, q_b,
-- kv_a, its norm, kv_b, o), 3 dense MLPs of 3, 58 MoE layers of a router,
-- 256 experts x 3 and one shared MLP of 3, and 3 more: 549 + 9 + 58 x
-- 772 + 3 = 45,337.
t.is(rl.weight_tensors(cat:get("models", "deepseek-v3")), 45337,
  "DeepSeek-V3's tensors: MLA, 58 MoE layers of 256 experts")

-- 1 ms a tensor: the weight sync and the colocated step each 0.255 s
-- longer (exact up to rounding: 1e-9 relative).
local base = { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 8, zero = 3, recompute = "full",
               prompts = 64, group = 8, response_len = 1024 }
local r0, r1 = gp.rl(base), gp.rl(with(base, { sync_tensor_time = 1e-3 }))
t.near(phase(r1, "weight_sync").seconds - phase(r0, "weight_sync").seconds, 0.255, 1e-9,
  "sync_tensor_time: 255 tensors x 1 ms on the weight sync")
t.near(r1.step_s - r0.step_s, 0.255, 1e-9, "sync_tensor_time: on the colocated step's path")
t.raises(function() gp.rl(with(base, { sync_tensor_time = -1 })) end, "sync_tensor_time",
  "a negative time is refused, naming the option", true)
t.done_testing()
