-- One rule for context parallelism's sequence (engine/layout.c
-- layout_check_cp_seq): Megatron-LM's get_batch_on_this_cp_rank splits
-- each sequence into 2 x cp chunks, two a rank, to balance causal
-- attention, and its view fails unless 2 cp divides seq.  The search
-- (gp.sweep, `plan`) skipped such layouts, while gp.train priced cp 2 at
-- seq 8191 (it refused only seq < cp).
-- Run with ./gpuplan run tests/lua/cp_seq_rule.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(8)

local job = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, stack = "megatron" }
local function with(o)
  local x = {}
  for k, v in pairs(job) do x[k] = v end
  for k, v in pairs(o) do x[k] = v end
  return x
end

-- 8190 = 2 x 4095: a multiple of 2 x cp for cp 1 only (4095 is odd);
-- 8192 a multiple of 2 x 2 = 4.
t.raises(function() gp.train(with { cp = 2, seq = 8190 }) end,
  "cp 2 needs seq a multiple of 2 x cp = 4", "gp.train: seq 8190 at cp 2 refused", true)
t.raises(function() gp.train(with { cp = 2, seq = 8191 }) end,
  "got seq 8191", "gp.train: seq 8191 at cp 2 refused, naming the seq", true)
t.ok(gp.train(with { cp = 2, seq = 8192 }).step_s > 0, "gp.train: seq 8192 at cp 2 priced")
t.ok(gp.train(with { cp = 1, seq = 8191 }).step_s > 0, "gp.train: cp 1 takes any seq")

-- train_job's steps: the same rule
local j = gp.train_job(with { seq = 8190 })
t.raises(function() j:step { cp = 2 } end, "cp 2 needs seq a multiple of 2 x cp = 4",
  "train_job step: refused alike", true)

-- The search lists no layout gp.train refuses: at seq 8190 only cp 1
-- (cp_max 4); at 8192 cp 2 and 4 appear.
local function cps(seq)
  local r = gp.sweep(with { seq = seq, cp_max = 4, top = 1000 })
  local seen = {}
  for _, x in ipairs(r.results) do seen[x.cp] = true end
  return seen
end
local a, b = cps(8190), cps(8192)
t.ok(a[1] and not a[2] and not a[4], "sweep at seq 8190: cp 1 only")
t.ok(b[2] or b[4], "sweep at seq 8192: a CP layout")

-- RL's training sequence is a mean of its lengths (prompt + expected
-- response), not one length: the rule is not asked of it
local okr, r = pcall(gp.rl, { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 16, cp = 2,
  prompt_len = 1000, response_len = 1001 })
-- (train_seq 1000 + 1001 = 2001, odd: no multiple of 2 x 2)
t.ok(okr and r.cp == 2 and r.train_seq == 2001, "gp.rl with cp 2 at train_seq 2001: priced")
