-- What an eighth new-user walk found in the Lua API (an ML platform lead
-- driving gpuplan from a script as well as the CLI: gp.train, gp.sweep,
-- gp.infer, gp.infer_plan, gp.rl, gp.comm).  Each misuse was answered by
-- a Lua runtime error or a silent nil; it must be refused at the
-- script's line, naming what to call.  Run with ./gpuplan run.
local t = require "tap"
local gp = require "gpuplan"

local check = t.raises_here

-- 1. gp.plan (the CLI's command is plan) was nil: "attempt to call a nil
-- value (field 'plan')".  The search is gp.sweep.
check(function() return gp.plan { model = "llama2-7b", gpu = "h100-sxm", gpus = 8 } end,
  "gp.plan: gpuplan has no such function or module (did you mean gp.sweep?)", "gp.plan names gp.sweep")
check(function() return gp.trian end,
  "gp.trian: gpuplan has no such function or module (did you mean gp.train?)", "a misspelt function: the nearest")
check(function() return gp.zzzzzz end,
  "gp.zzzzzz: gpuplan has no such function or module (its functions: gp.memory, gp.train, ",
  "nothing near: the functions listed")
-- The modules and functions gpuplan has still load.
t.ok(type(gp.sweep) == "function" and type(gp.units.fmt) == "function"
  and type(gp.policy.fastest) == "function", "gp.sweep, gp.units and gp.policy still load")

t.done_testing()
