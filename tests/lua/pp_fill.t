-- The interleaved pipeline's fill and drain wait on its transfers even
-- where overlap_p2p hides them in the steady state: Megatron-Core's
-- warm-up (schedules.py forward_backward_pipelining_with_interleaving)
-- runs (pp - rank - 1) x 2 + (v - 1) x pp forwards, chunk (k / pp) % v,
-- each waiting on its input; a micro-batch's next chunk comes back round
-- the pp-stage ring (pp hops) while the stage runs the round's pp
-- forwards, so the last stage's first backward starts (v pp - 1)
-- transfers late, and the cool-down mirrors it: 2 (v pp - 1) c a step
-- (engine/train.c step_sum).  Run with ./gpuplan run tests/lua/pp_fill.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(3)

local function part(r, name) return t.parts(r)[name] end  -- tap.lua's parts

-- Llama 3 8B (32 layers) on one H100 node: TP 2, PP 4, VP 2 (4 layers a
-- chunk), 16 micro-batches of one 8192-token sequence.  c, one hop's
-- send/recv, from the run with overlap_p2p off: its PP part is the
-- whole 2 v c a micro-batch (pp_gat 0 with SP), c = pp_comm / (2 v m).
local v, pp, m = 2, 4, 16
local job = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, tp = 2, pp = pp, vpp = v,
              sp = true, method = "pretrain", seq = 8192, batch = 1, global_batch = m,
              zero = 1, stack = "megatron" }
local on = gp.train(t.with(job, { overlap_p2p = true }))
local off = gp.train(t.with(job, { overlap_p2p = false }))
local c = part(off, "pp_comm") / (2 * v * m)
t.ok(c > 0, "the pipeline's hop is priced")

-- Bubble, on less off: on adds the fill and drain's 2 (v pp - 1) c; off
-- carries each pass's transfer in every stage's micro-batch time, of
-- which on exposes 0.189 (OVERLAP_SLOWDOWN), so off's (tsum - tmax) / v
-- is larger by (pp - 1) x (1 - 0.189) x 2 v c / v.  Every stage holds
-- the same hop, so the difference is exactly that: 1e-6 relative (the
-- sums' rounding).
local want = (2 * (v * pp - 1) - 2 * (pp - 1) * (1 - 0.189)) * c
t.near(part(on, "bubble") - part(off, "bubble"), want, 1e-6,
       "overlapped sends still delay the interleaved fill and drain")

-- 1F1B on the Megatron stack exposes its sends (no overlap to hide
-- them): the fill term is not added beside them.  gp.train turns
-- overlap_p2p off there, so the engine's guard (train_int.h p2p_hides)
-- is reached only by a layout that keeps the stack's default on: a job
-- resolved at pp 1 then stepped at pp 4 without vpp, as a plan's 1F1B
-- layouts are.  Its step (a job's step carries no parts) must be
-- gp.train's (same arithmetic: 1e-9); without the guard its bubble
-- gains 2 (pp - 1) c.
local f1 = t.with(job, { vpp = 1 })
local a = gp.train(f1)
local j = gp.train_job { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, sp = true,
                         method = "pretrain", seq = 8192, batch = 1, global_batch = m, zero = 1,
                         stack = "megatron" }
local b = j:step { tp = 2, pp = pp }
t.near(b.step_s, a.step_s, 1e-9,
       "1F1B: no fill term beside its exposed sends")
