-- Hardening follow-ups left by the day's walks (newuser6, luawalk3,
-- review54): an inconsistency between two ways of asking the same
-- question, or a refusal that did not name what the user gave.  One
-- block a fix.  Run with ./gpuplan run tests/lua/followups4.t.
local t = require "tap"
local gp = require "gpuplan"

local check = t.raises_here

-- 1. gp.train_job{schedule = "dualpipe"} with no pipeline was taken
-- (its own layout unchecked until a step), where gp.train with the same
-- options refuses, and a job's vpp without pp is refused at once.
do
  local o = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, schedule = "dualpipe" }
  local want = "train: dualpipe needs an even pp of 2 or more and no vpp (got pp 1, vpp 1)"
  check(function() gp.train(o) end, want, "gp.train refuses dualpipe at pp 1")
  check(function() gp.train_job(o) end, want, "gp.train_job refuses it the same way")
  -- an even pipeline is taken, and the job's step prices as gp.train
  -- (the same C step: exact equality)
  local job = gp.train_job(t.with(o, { pp = 2, tp = 2 }))
  t.is(job:step {}.step_s, gp.train(t.with(o, { pp = 2, tp = 2 })).step_s,
    "gp.train_job at pp 2: its step is gp.train's")
end

t.done_testing()
