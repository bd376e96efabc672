-- gp.rl's sync_tp_first: NeMo RL v0.3.0's refit (refit_utils.py
-- gather_params) gathers each tensor whole over TP, then broadcasts it over
-- the pipeline, so every GPU receives the whole model; the default moves the
-- stages' TP slices over the pipeline (Megatron-Bridge's export).
-- Run with ./gpuplan run tests/lua/rl_sync_tp_first.t.
local t = require "tap"
local gp = require "gpuplan"

local with, phase = t.with, t.phase

-- Qwen2.5-7B at TP 2 x PP 2 on one DGX H100 (dp 2), the engine at TP 2: the
-- default gathers the TP slices over the PP pair (2P / tp, P the model's
-- parameters, 2 B each); whole tensors gather the stage's share over the TP
-- pair (2P / pp) and the whole model over the PP pair (2P).  Both groups are
-- two ranks of the node's NVLink switch, priced as gp.comm prices two ranks
-- of a DGX H100; the engine's copy (2P / 2 read and written) is the same in
-- both, so the weight sync's difference is the collectives' (exact up to
-- rounding: 1e-9 relative).
local base = { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 8, tp = 2, pp = 2,
               recompute = "full", prompts = 64, group = 8, response_len = 1024,
               rollout_tp = 2 }
local r0, r1 = gp.rl(base), gp.rl(with(base, { sync_tp_first = true }))
local P2 = gp.params(gp.catalog():get("models", "qwen2.5-7b")).total * 2
local function ag(b)
  return gp.comm { system = "dgx-h100", op = "all_gather", bytes = b, gpus = 2 }.time
end
local want = ag(P2 / 2) + ag(P2) - ag(P2 / 2)
t.near(phase(r1, "weight_sync").seconds - phase(r0, "weight_sync").seconds, want, 1e-9 * want,
  "whole tensors: + TP gather of 2P/pp + PP gather of 2P - PP gather of 2P/tp")
t.is(r1.sync_tp_first, true, "as given")
-- One stage and TP 1: nothing to gather either way.
local one = { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 8, zero = 3, recompute = "full",
              prompts = 64, group = 8, response_len = 1024 }
t.is(phase(gp.rl(with(one, { sync_tp_first = true })), "weight_sync").seconds,
  phase(gp.rl(one), "weight_sync").seconds, "TP 1, PP 1: the same sync")
t.done_testing()
