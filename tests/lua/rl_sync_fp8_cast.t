-- gp.rl's sync_fp8_cast: NeMo RL's fp8 generation (fp8.load_weights,
-- r0.4.0 to r0.6.0) receives the trainer's 16-bit weights and casts each fp8
-- linear's whole tensor to fp8 on every engine rank
-- (cast_tensor_to_fp8_blockwise), 49 bytes of memory traffic per element
-- (engine/rl_sync.c RL_FP8_CAST_BYTES).
-- Run with ./gpuplan run tests/lua/rl_sync_fp8_cast.t.
local t = require "tap"
local gp = require "gpuplan"

local with, phase = t.with, t.phase

-- Qwen2.5-7B at TP 2 on one DGX H100, its engine at TP 2 in fp8: the cast
-- adds to the weight sync the memory time of the linears' weights
-- (attention 0.822e9 + MLP 5.703e9 parameters; not the embedding, the LM
-- head or the norms) at 49 B each, 3.197e11 B, on one H100: gp.roofline's
-- time of an op of those bytes and no FLOP (at 2.814e12 B/s, about 0.114 s,
-- and a graph launch).  Everything else of the sync is the same, so the
-- difference is that op's time, exact up to rounding (1e-9 relative).
local base = { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 8, tp = 2,
               prompts = 64, group = 8, response_len = 1024, rollout_tp = 2,
               rollout_weights = "fp8" }
local r0, r1 = gp.rl(base), gp.rl(with(base, { sync_fp8_cast = true }))
local p = gp.params(gp.catalog():get("models", "qwen2.5-7b"))
local bytes = (p.attention + p.dense_mlp + p.experts) * 49
local want = gp.roofline { gpu = "h100-sxm", op = { flop = 0, bytes = bytes } }.op.time
t.near(phase(r1, "weight_sync").seconds - phase(r0, "weight_sync").seconds, want, 1e-9 * want,
  "the cast: 49 B per linear weight at the H100's memory rate")
t.ok(want > 0.1 and want < 0.13, "about 3.2e11 B at 2.8e12 B/s: 0.11 s")
t.is(r1.sync_fp8_cast, true, "as given")
t.is(r0.sync_fp8_cast, false, "default: the weights arrive as the engine holds them")
-- Separate pools: the cast follows the broadcast, on the engine's ranks.
local sep = with(base, { colocated = false, rollout_gpus = 4, gpus = 8, tp = 2 })
local s0, s1 = gp.rl(sep), gp.rl(with(sep, { sync_fp8_cast = true }))
t.near(phase(s1, "weight_sync").seconds - phase(s0, "weight_sync").seconds, want, 1e-9 * want,
  "separate pools: the same cast on each engine rank")
-- Only an fp8 engine casts to fp8.
local ok, err = pcall(gp.rl, with(base, { rollout_weights = "bf16", sync_fp8_cast = true }))
t.ok(not ok and tostring(err):find("sync_fp8_cast is the engine's cast", 1, true),
  "a bf16 engine: refused, naming the option")
local ok2, err2 = pcall(gp.rl, with(base, { sync_fp8_cast = 1 }))
t.ok(not ok2 and tostring(err2):find("sync_fp8_cast must be true or false", 1, true),
  "not a boolean: refused")
t.done_testing()
