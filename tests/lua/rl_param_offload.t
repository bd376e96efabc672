-- gp.rl's param_offload: verl's megatron.param_offload copies the actor's
-- 16-bit weights out to host memory after each of its three phases a step
-- (the rollout's export, the log-probabilities, the update:
-- offload_megatron_model_to_cpu, ".cpu().pin_memory()") and back before
-- each (engine/rl_sched.c RL_PARAM_OUTS).
-- Run with ./gpuplan run tests/lua/rl_param_offload.t.
local t = require "tap"
local gp = require "gpuplan"

local with, phase, part = t.with, t.phase, t.part

-- Qwen2.5-7B GRPO on 8 H100s, ZeRO-3 (the weights sharded 8 ways).
local base = { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 8, zero = 3, recompute = "full",
               prompts = 64, group = 8, response_len = 1024 }
local cat = gp.catalog()
-- The host link: the H100's PCIe Gen5 x16, as gp.rl takes it.
local hb = require("gpuplan.train").pcie_bw(cat.gpus["h100-sxm"])
local D2H = 1.4e9  -- into fresh pageable memory (pytorch PR #138018's A100 nsys)

-- Alone: 3 copies out at the pageable rate, 3 back at the link's,
-- w = the actor's 16-bit weights per GPU.
local r0, r1 = gp.rl(base), gp.rl(with(base, { param_offload = true }))
local w = part(r1.memory.update, "weights")
t.ok(w > 0, "the actor's weights per GPU")
t.near(phase(r1, "offload").seconds - phase(r0, "offload").seconds, 3 * w * (1 / D2H + 1 / hb),
  1e-9, "param_offload: 3 w / 1.4 GB/s + 3 w / the link")

-- With offload_states, which already moves them once each way at the
-- link's rate: that round trip is replaced, 3 w / D2H + 3 w / hb - 2 w / hb.
local s0 = gp.rl(with(base, { offload_states = true }))
local s1 = gp.rl(with(base, { offload_states = true, param_offload = true }))
t.near(phase(s1, "offload").seconds - phase(s0, "offload").seconds,
  3 * w / D2H + w / hb, 1e-9, "with offload_states: the weights' round trip replaced")
-- (a sum of the same phases: equal but for the last bits)
t.near(s1.step_s - s0.step_s, phase(s1, "offload").seconds - phase(s0, "offload").seconds, 1e-9,
  "the step grows by that, colocated")

-- Bad input: one line naming the key.
t.raises(function() gp.rl(with(base, { param_offload = 1 })) end,
  "param_offload", "a non-boolean is refused, named", true)
t.raises(function() gp.rl(with(base, { param_offload = true, rollout_gpus = 4 })) end,
  "param_offload applies to one colocated pool", "separate pools: refused", true)

t.done_testing()
