-- One ITL rule for gp.infer and gp.infer_plan: the mean gap between a
-- user's tokens is the decode step plus the other B - 1 sequences'
-- prompts run between its tokens (engine infer_itl_loaded), in gpuplan.infer's
-- model (itl_load_s) and the MoE serving model (itl_s) alike; a target's
-- ITL limit bounds it; a MoE model as plain TP replicas is planned with
-- the model gp.infer prices it with, so the plan and gp.infer at the
-- plan's GPUs and batch agree; imbalance and eplb alike with a target.
local t = require "tap"
local gp = require "gpuplan"

local q = { model = "qwen3-30b-a3b", gpu = "rtx-4090", weights = "awq" }
local function with(x) return t.with(q, x) end

-- gp.infer, qwen3-30b-a3b awq on 4 RTX 4090 as two TP2 replicas of 58
-- (newuser7's deployment).  A replica's cycle, in which its 58 sequences
-- each finish a request of 2048 in / 256 out, is 58 x 256 x 2 replicas /
-- tokens_per_s (the engine's tokens/s is that over the prefill shares and
-- the 255 decode steps); its time beyond 255 steps of itl_s is the
-- prompts', 57 of 58 of them between one user's tokens:
--   itl_load = itl + (cycle - 255 itl) x 57 / (58 x 255).
-- The same arithmetic in the engine: to 1e-9 (rounding only).
local r = gp.infer(with { gpus = 4, tp = 2, batch = 58 })
t.ok(r.fits and not r.moe, "TP2 replicas of a MoE model: gpuplan.infer's model")
local cycle = 58 * 256 * 2 / r.tokens_per_s
t.near(r.itl_load_s, r.itl_s + (cycle - 255 * r.itl_s) * 57 / (58 * 255), 1e-9,
       "itl_load = itl + (cycle - 255 itl) x 57 / (58 x 255)")
-- the prompts are not free: 58 x 2048 prompt tokens a cycle, at least
-- several ms a token on a 4090 (base: 2187 tok/s against 58 x 2 / 26.7 ms
-- = 4343 decode-only), so well above the step
t.ok(r.itl_load_s > 1.5 * r.itl_s, "the prompts between a user's tokens lengthen its mean ITL")

-- One sequence: its own prompt is its TTFT, no other prompt falls between
-- its tokens: the decode step exactly.
local r1 = gp.infer(with { gpus = 2, tp = 2, batch = 1 })
t.near(r1.itl_load_s, r1.itl_s, 1e-12, "batch 1: the mean ITL is the decode step")

-- The MoE serving model, colocated: DeepSeek-V3 fp8 on 16 H200, EP16 with
-- DP attention, batch 64 a GPU, 4096 in / 1536 out.  A GPU's cycle for its
-- 64 requests is 64 x 1536 / per_gpu; beyond 1535 tokens at tpot it is the
-- prompts' (and the eager launches of the steps carrying them).  The 16
-- ranks step together, so a user waits for the prompts of the instance's
-- 64 x 16 = 1024 sequences but its own:
--   itl = tpot + (cycle - 1535 tpot) x 1023 / (1024 x 1535).  To 1e-9.
local s = gp.infer { model = "deepseek-v3", gpu = "h200-sxm", weights = "fp8", gpus = 16,
                     ep = 16, dp_attention = true, batch = 64, input = 4096, output = 1536 }
t.ok(s.moe and s.fits and not s.disagg, "EP16 colocated: the MoE serving model")
local sc = 64 * 1536 / s.per_gpu
t.near(s.itl_s, s.tpot_s + (sc - 1535 * s.tpot_s) * 1023 / (1024 * 1535), 1e-9,
       "serving ITL = tpot + (cycle - 1535 tpot) x 1023 / (1024 x 1535): the same rule")

-- The target for the same TP2 replicas: planned with gpuplan.infer's
-- model, so gp.infer at the plan's GPUs and batch gives its tokens/s and
-- mean ITL exactly (serve_target priced them with the serving model's
-- steps: 2330 tok/s at 50.0 ms, where gp.infer said 2187 at 26.7 ms).
local p = gp.infer_plan(with { tp = 2, target = 2000 })
t.is(p.layout, "TP2", "the plan keeps the TP2 replica")
local g = gp.infer(with { tp = 2, gpus = p.gpus, batch = p.batch })
t.near(g.tokens_per_s, p.tokens_per_s, 1e-12, "plan and gp.infer: the same tokens/s")
t.near(g.itl_load_s, p.itl_s, 1e-12, "plan and gp.infer: the same mean ITL")
-- the limit binds the mean ITL: within 50 ms at the batch, past it one
-- more (the KV holds 120 a replica, so the ITL is what stops it)
t.ok(p.itl_s <= 0.050, "the plan's mean ITL is within the 50 ms limit")
local g1 = gp.infer(with { tp = 2, gpus = 2, batch = p.batch + 1 })
t.ok(g1.itl_load_s > 0.050, "one more sequence a replica breaks the limit")

-- The MoE serving plan reads itl_s the serving model's way: within the
-- limit too (ep = 2: without a layout the search now takes TP1
-- replicas, newuser9).
local ps = gp.infer_plan(with { target = 2000, ep = 2 })
t.ok(ps.itl_s <= 0.050 and ps.result.moe, "the serving plan's ITL is within the limit")

-- imbalance and eplb alike with a target: both taken without a layout
-- (they price whatever EP layout the search picks), both refused with a
-- TP layout (no all-to-all to price).
local ok1 = pcall(gp.infer_plan, with { target = 2000, imbalance = 1.2 })
local ok2 = pcall(gp.infer_plan, with { target = 2000, eplb = true })
t.ok(ok1 and ok2, "imbalance and eplb: both taken with a target and no layout")
local ok3, e3 = pcall(gp.infer_plan, with { target = 2000, tp = 2, imbalance = 1.2 })
local ok4, e4 = pcall(gp.infer_plan, with { target = 2000, tp = 2, eplb = true })
t.ok(not ok3 and not ok4, "imbalance and eplb: both refused with a TP layout")
t.like(tostring(e3), "applies with expert parallelism", "imbalance's refusal says why", true)
t.like(tostring(e4), "applies with expert parallelism", "eplb's refusal says why", true)
-- a given imbalance prices the searched EP layout: a hotter GPU is no
-- faster (the same or more GPUs, or fewer tokens/s on as many)
local hot = gp.infer_plan(with { target = 2000, imbalance = 3 })
local cool = gp.infer_plan(with { target = 2000, imbalance = 1 })
t.ok(hot.gpus > cool.gpus or (hot.gpus == cool.gpus and hot.tokens_per_s <= cool.tokens_per_s),
     "imbalance 3 costs the searched layout against 1")

t.done_testing()
