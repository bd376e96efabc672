-- newuser9: what a lab's compute lead found from Lua.  Each section: the
-- input, the old answer, and what is checked.
local t = require "tap"
local gp = require "gpuplan"

-- 1. A job's zero_group N is N data-parallel ranks at every step's layout,
-- as gp.train places it (hsdp = N x tp GPUs).  gp.train_job and gp.rl_job
-- held the job's hsdp, N x the job's tp (1), so a step at tp 2 sharded
-- over N / 2 ranks: llama3-8b on 64 h200-sxm, zero 3, zero_group 8, tp 2
-- stepped 0.8125 s (gp.train's zero_group 4) where gp.train says 0.8016.
-- Now the step equals gp.train's of the same layout: the same engine step
-- on the same config, so 1e-12 (rounding only).
do
  local a = { model = "llama3-8b", gpu = "h200-sxm", gpus = 64, zero = 3, zero_group = 8 }
  local j = gp.train_job(a)
  for _, tp in ipairs { 1, 2, 4 } do
    local s = j:step { zero = 3, tp = tp }
    local g = gp.train(t.with(a, { tp = tp }))
    t.near(s.step_s, g.step_s, 1e-12, "train_job zero_group 8 at tp " .. tp .. " = gp.train's")
  end
  local g4 = gp.train(t.with(a, { tp = 2, zero_group = 4 }))
  t.ok(math.abs(j:step { zero = 3, tp = 2 }.step_s - g4.step_s) > 1e-6,
       "and not gp.train's zero_group 4 (what the job priced before)")
  -- a step whose dp x cp the group does not divide is refused, as gp.train's
  local ok, e = pcall(function() return j:step { zero = 3, tp = 8, pp = 2 } end)
  t.ok(not ok and tostring(e):find("zero_group 8 must divide the data%-parallel group dp x cp = 4"),
       "a step the group does not divide: refused (" .. tostring(e) .. ")")
  -- gp.rl_job alike: qwen2.5-7b on 16 h200-sxm, zero 3, zero_group 4
  local r = { model = "qwen2.5-7b", gpu = "h200-sxm", gpus = 16, zero = 3, zero_group = 4 }
  local rj = gp.rl_job(r)
  for _, tp in ipairs { 1, 2 } do
    t.near(rj:step { tp = tp }.step_s, gp.rl(t.with(r, { tp = tp })).step_s, 1e-12,
           "rl_job zero_group 4 at tp " .. tp .. " = gp.rl's")
  end
end

t.done_testing()
