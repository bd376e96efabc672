-- gp.rl's fwd_bwd_scale: the training engine's forward and backward
-- compute, its recompute and the pipeline bubble they set, times K, in
-- both passes (the update and the log-probability forwards) and nothing
-- else (engine/rl.c rl_pass_scale).  NeMo RL's profile sets 1.1, the low
-- end of the 1.1-1.3x its issue #2129 measures for its Megatron passes
-- against Megatron-LM's (lua/gpuplan/predict/rl.lua).
-- Run with ./gpuplan run tests/lua/rl_fwd_bwd_scale.t.
local t = require "tap"
local gp = require "gpuplan"

local with, phase = t.with, t.phase

-- Qwen2.5-7B GRPO on 8 H100s, colocated, pp 2 so the pass has a bubble.
local base = { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 8, zero = 1, pp = 2,
               recompute = "full", prompts = 64, group = 8, prompt_len = 100,
               response_len = 1000 }
local r1 = gp.rl(base)
local r2 = gp.rl(with(base, { fwd_bwd_scale = 1.25 }))

-- Each pass's step grows by (K - 1) x (compute + recompute + bubble) of
-- the unscaled pass: K = 1.25 adds a quarter of those three parts.
-- Tolerance 1e-9 relative: the same sums in another order.
for _, pass in ipairs { "update", "forward" } do
  local p = r1[pass].parts
  local grow = 0.25 * (p.compute + (p.recompute or 0) + (p.bubble or 0))
  t.ok(grow > 0, pass .. ": the pass has compute to scale")
  t.near(r2[pass].step_s, r1[pass].step_s + grow, 1e-9 * r1[pass].step_s,
    pass .. ": step + 0.25 x (compute + recompute + bubble)")
  t.near(r2[pass].parts.compute, 1.25 * p.compute, 1e-9 * p.compute,
    pass .. ": its compute part x 1.25")
  -- The communication parts are not the framework's passes: unchanged.
  t.near(r2[pass].parts.dp_comm, p.dp_comm, 1e-12, pass .. ": dp_comm unchanged")
end
-- The rollout is the inference engine's, not the training passes'.
t.near(phase(r2, "rollout").seconds, phase(r1, "rollout").seconds,
  1e-9 * phase(r1, "rollout").seconds, "the rollout unchanged")
t.is(r2.fwd_bwd_scale, 1.25, "the result says the multiple it was given")
t.is(r1.fwd_bwd_scale, 1, "and 1 where none was given")
-- 1 is the unscaled step exactly.
t.is(gp.rl(with(base, { fwd_bwd_scale = 1 })).step_s, r1.step_s, "K = 1: the step as priced")

-- Bad values: a clear error naming the key.
for _, bad in ipairs { 0.5, 11, "x", 0 / 0 } do
  local ok, err = pcall(gp.rl, with(base, { fwd_bwd_scale = bad }))
  t.ok(not ok and tostring(err):find("fwd_bwd_scale must be", 1, true) ~= nil,
    "fwd_bwd_scale = " .. tostring(bad) .. " refused: " .. tostring(err))
end
t.done_testing()
