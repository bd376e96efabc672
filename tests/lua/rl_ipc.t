-- gp.rl's colocated weight sync through a CUDA-IPC staging buffer
-- (ipc_transfer; engine/rl.c rl_ipc_transfers): every trainer rank
-- streams the whole 16-bit model to the engine rank on its GPU through
-- two halves of a buffer of 0.3 of the GPU's free memory, each hand-off
-- a fixed cost; and NeMo RL's per-hand-off time
-- (gpuplan.rl.NEMO_RL_IPC_TRANSFER), derived from its DeepSeek-V3 refit.
-- Run with ./gpuplan run tests/lua/rl_ipc.t.
local t = require "tap"
local gp = require "gpuplan"
local rl = require "gpuplan.rl"

local with, phase = t.with, t.phase

local function sync(r) return phase(r, "weight_sync").seconds end

local function component(mem, name)
  for _, c in ipairs(mem.components) do
    if c.name == name then return c.bytes end
  end
end

-- Qwen2.5-32B colocated on one DGX H100, trained at TP 2 and ZeRO-3 (DP
-- 4), its engines at TP 2.  Hand: the stream is 32,763,876,352 x 2 =
-- 65,527,752,704 B.  The free memory at the refit is the device's
-- 83,792,127,590 B (the capacity 84,932,978,278 less the CUDA context,
-- library workspace and communication buffers, 1,140,850,688; the
-- planning margin is no allocation) less the trainer's weights,
-- 65,527,752,704 / 2 / 4 = 8,190,969,088, and the engine's, 65,527,752,704
-- / 2 = 32,763,876,352: 42,837,282,150 B.  A half-buffer is 0.3 x that /
-- 2 = 6,425,592,322.5 B; 65,527,752,704 / 6,425,592,322.5 = 10.2, so 11
-- hand-offs, 1.1 s at 0.1 s each.
local base = { model = "qwen2.5-32b", gpu = "h100-sxm", gpus = 8, tp = 2, zero = 3,
               recompute = "full", prompts = 64, group = 8, prompt_len = 512,
               response_len = 2048, response_max = 8192, offload_states = true,
               ref_host = true }
local r0 = gp.rl(base)
local r1 = gp.rl(with(base, { ipc_transfer = 0.1 }))
local total = gp.params("qwen2.5-32b").total
local mu = r1.memory.update
t.is(total, 32763876352, "Qwen2.5-32B's parameters")
t.is(component(mu, "weights"), total * 2 / 2 / 4, "the trainer's weights: TP 2, ZeRO-3 over 4")
t.is(r1.rollout.weights, total * 2 / 2, "the engine's: TP 2")
local free = mu.usable + mu.margin - total * 2 / 8 - total
t.near(free, 42837282150, 1 / 42837282150, "free at the refit: the device's less both weights")
t.is(r1.ipc_transfers, math.ceil(total * 2 / (0.3 * free / 2)), "ceil(stream / half-buffer)")
t.is(r1.ipc_transfers, 11, "11 hand-offs")
t.is(r0.ipc_transfers, 0, "not given: none")
t.near(sync(r1) - sync(r0), 11 * 0.1, 1e-12, "the weight sync: 11 x 0.1 s longer")
t.near(r1.step_s - r0.step_s, 1.1, 1e-9, "and the colocated step with it")
-- The planning margin changes the budget, not the device's free memory.
t.is(gp.rl(with(base, { ipc_transfer = 0.1, margin = 0 })).ipc_transfers, 11,
     "margin 0: the same 11")

-- A GB200's Grace takes the host's times 2.75 times (host_op_scale), and
-- its 186 GB leave a larger buffer: fewer hand-offs, each 0.275 s.
local g0 = gp.rl(with(base, { gpu = "gb200" }))
local g1 = gp.rl(with(base, { gpu = "gb200", ipc_transfer = 0.1 }))
t.ok(g1.ipc_transfers > 0 and g1.ipc_transfers < 11, "GB200: fewer hand-offs")
t.near(sync(g1) - sync(g0), g1.ipc_transfers * 0.275, 1e-12, "each at Grace's 2.75 x")

-- Refused where it has no meaning: separate pools broadcast the weights;
-- the hybrid engine generates with the actor's own; out of range.
t.raises(function()
  gp.rl(with(base, { ipc_transfer = 0.1, rollout_gpus = 4, offload_states = false })) end,
         "rl: ipc_transfer is a colocated weight sync's", "separate pools", true)
t.raises(function() gp.rl(with(base, { ipc_transfer = 0.1, rollout_engine = "hybrid" })) end,
         "rl: ipc_transfer hands vLLM's workers the weights", "hybrid", true)
t.raises(function() gp.rl(with(base, { ipc_transfer = -1 })) end,
         "rl: ipc_transfer must be seconds per hand-off, 0 to 60", "negative", true)

-- NeMo RL's per-hand-off time: "the complete DeepSeek-V3 refitting takes
-- ~35 seconds with over 175 distinct IPC transfers" (NeMo RL PR #1267,
-- its author in review).  On the performance recipe's layout
-- (grpo-deepseek-v3-32n8g: PP16, EP16, 256 H100s, colocated, vLLM TP 32)
-- gp.rl prices the rest of the refit at 10.0898 s: its bytes and 45,337
-- tensors at NEMO_RL_EXPORT_TENSOR (1e-4 s: the derivation rounds to 0.1
-- ms).  175 hand-offs at the derived time make up the 35 s.  If the
-- transfers' pricing changes, this fails, and the constant must be
-- derived again.
local dsv3 = { model = "deepseek-v3", gpu = "h100-sxm", gpus = 256, tp = 1, pp = 16, ep = 16,
               first_stage_layers = 3, last_stage_layers = 2, recompute = "full",
               colocated = true, offload_states = true, rollout_tp = 32, prompts = 32,
               group = 16, prompt_len = 110, response_len = 701, response_max = 1426,
               stack = "megatron", zero = 1, rollout_memory = 0.6, nic_fabric = "ib-ndr-400",
               nics = 8, gpus_per_node = 8, sync_tensor_time = rl.NEMO_RL_EXPORT_TENSOR }
local d0 = gp.rl(dsv3)
t.near(sync(d0), 10.0898, 1e-4, "DeepSeek-V3's colocated refit without the hand-offs: 10.0898 s")
t.near(10.0898 + 175 * rl.NEMO_RL_IPC_TRANSFER, 35, 1e-12, "175 hand-offs make PR #1267's 35 s")
-- The 10.0898 s by parts: the bytes' transfers 5.7798 s (gp.rl's price,
-- sync_tensor_time 0; pinned to 1e-4 as above, so that a change of the
-- transfers' pricing shows here and not only in the sum) and 45,337
-- tensors x (14 - 9.6900) / 45,337 s = 4.3100 s of export: 10.0898 s.
-- The export's share is one product (1e-9 relative).
local bare = sync(gp.rl(with(dsv3, { sync_tensor_time = 0 })))
t.near(bare, 5.7798, 1e-4, "the refit's bytes alone: 5.7798 s")
t.near(sync(d0) - bare, 45337 * rl.NEMO_RL_EXPORT_TENSOR, 1e-9,
       "and 45,337 tensors at the export time: 4.3100 s")
-- gp.rl's own count on that layout, and at TP 64 (the engine's weights
-- half as large but for MLA's down-projections, held whole on every
-- rank: infer.c mla_decode; more free memory), as the constant's comment
-- states.
local d1 = gp.rl(with(dsv3, { ipc_transfer = rl.NEMO_RL_IPC_TRANSFER }))
t.is(d1.ipc_transfers, 273, "TP 32: 273 hand-offs")
t.is(gp.rl(with(dsv3, { ipc_transfer = rl.NEMO_RL_IPC_TRANSFER, rollout_tp = 64 })).ipc_transfers,
     167, "TP 64: 167")
t.near(sync(d1) - sync(d0), 273 * rl.NEMO_RL_IPC_TRANSFER, 1e-9, "each at the derived time")
t.done_testing()
