-- stage_layers through a job's memo: the layout holds the list as a
-- count and a pointer into a store its caller owns (engine/layout.h
-- gp_stage_store: the job's for its own list, the step's call for a
-- step's), and the phase memo keeps its own copy of the entries and
-- compares a config's list by them (engine/train_prep.c phase_key).  A job that steps
-- from one list to another and back, and to none, prices each step as
-- gp.train prices that layout alone (no memo): a list mistaken for
-- another (a memo key that compared equal) or a list lost (a pointer to
-- storage refilled or gone) would show as a different step.  And a job's result
-- outlives the job: collected, its result still reads, and a new job
-- with the same list prices the same step.
-- Run with ./gpuplan run tests/lua/stage_layers_memo.t.
local t = require "tap"
local gp = require "gpuplan"

-- Llama 3 8B (32 layers) on 16 H100s, PP 4, TP 2 (DP 2: the ZeRO stages
-- move the step), 64 micro-batches of 1, as tests/lua/stage_layers.t.
local base = { model = "llama3-8b", gpu = "h100-sxm", gpus = 16, pp = 4, tp = 2,
               seq = 4096, global_batch = 64, stack = "megatron" }
-- 9,9,5,9 shares its first two entries with 9,9,8,6, which are all the
-- split's other fields say of a list (memory_layout.c: n0 = v[0], m =
-- v[1]), so only the list itself tells the two apart where the phase
-- keeps its stage records (train_prep.c phase_stages): its last stage
-- (9 layers and the head) is the slowest where 9,9,8,6's first is.
local lists = { "9,9,8,6", "9,9,5,9", "10,8,8,6", "9,9,8,6", false, "6,9,9,8", "9,9,5,9" }

t.plan(6)

-- Every step of the job (lists in this order, each under ZeRO 0..3, the
-- ZeRO stage innermost as a sweep takes it, so consecutive steps share
-- the memo's phase) against gp.train of its layout alone.  Exact: the
-- same train_step on the same config.
local job = gp.train_job(base)
local n, bad, first, r = 0, 0, nil, nil
local seen = {}
for _, l in ipairs(lists) do
  for zero = 0, 3 do
    local s = { tp = 2, pp = 4, zero = zero }
    local o = t.with(base, { zero = zero })
    if l then s.stage_layers, o.stage_layers = l, l end
    r = job:step(s, r)
    local a = gp.train(o)
    n = n + 1
    seen[string.format("%.17g", r.step_s)] = true
    if r.step_s ~= a.step_s or r.mem_bytes ~= a.memory.total then
      bad = bad + 1
      first = first or string.format("%s zero %d: step %.17g, alone %.17g", tostring(l), zero,
        r.step_s, a.step_s)
    end
  end
end
t.ok(bad == 0, string.format("%d steps from list to list and back priced as gp.train alone (%d differ%s)",
  n, bad, first and ("; " .. first) or ""))
-- the lists move the step (so a list taken for another could not pass):
-- 5 layouts (9,9,8,6; 9,9,5,9; 10,8,8,6; uniform; 6,9,9,8) x 4 ZeRO
-- stages give 20 steps at most; 8 at least (two ZeRO figures a layout)
-- shows that the layouts and ZeRO stages both move it (19 at the
-- writing: two of the 20 coincide)
local distinct = 0
for _ in pairs(seen) do distinct = distinct + 1 end
t.ok(distinct >= 8, string.format("the lists and ZeRO stages give %d distinct steps (>= 8)", distinct))

-- A result outlives its job: the job collected, the result reads as it
-- did, and a new job with the same list prices the same step.
local kept, want
do
  local j2 = gp.train_job(t.with(base, { gpus = 8 }))
  kept = j2:step { tp = 2, pp = 4, stage_layers = "9,9,8,6" }
  want = kept.step_s
end
collectgarbage()
collectgarbage()
t.ok(kept.step_s == want and kept.stage_layers == 9,
  "the job collected: its result reads the same step and 9 layers on the slowest stage")
local j3 = gp.train_job(t.with(base, { gpus = 8 }))
t.ok(j3:step({ tp = 2, pp = 4, stage_layers = "9,9,8,6" }).step_s == want,
  "a new job with 9,9,8,6: the same step")

-- A job made with a list keeps it in its own store: after steps with
-- lists of their own, one refused part way (its list read, then gpus
-- 16 not a multiple of tp 3 x pp 4 = 12: lgp_job_step), and a
-- collection, a step that gives none prices the job's list as gp.train
-- does.  Exact: the same train_step on the same config.
local own = t.with(base, { stage_layers = "9,9,5,9" })
local j4 = gp.train_job(own)
j4:step { tp = 2, pp = 4, stage_layers = "9,9,8,6" }
local okr, err = pcall(j4.step, j4, { tp = 3, pp = 4, stage_layers = "10,8,8,6" })
t.ok(not okr and tostring(err):find("not a multiple", 1, true),
  "a step refused after its list was read: " .. tostring(err))
j4:step { tp = 2, pp = 4, zero = 1, stage_layers = "6,9,9,8" }
collectgarbage()
local alone = gp.train(own)
t.ok(j4:step({ tp = 2, pp = 4 }).step_s == alone.step_s,
  "the job's own 9,9,5,9 after those steps: gp.train's step")

t.done_testing()
