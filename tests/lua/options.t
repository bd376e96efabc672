-- gp.options: script parameters declared as data.
local t = require "tap"
local gp = require "gpuplan"

local P = { gpus = { "GPU count", 8 }, gpu = { "GPU id", "h100-sxm" },
            margin = { "safety margin", 0.1 }, dry_run = { "only plan", false } }
local o = gp.options(P, { [0] = "s.lua" })
t.ok(o.gpus == 8 and o.gpu == "h100-sxm" and o.margin == 0.1 and o.dry_run == false, "defaults")
o = gp.options(P, { [0] = "s.lua", "--gpus", "16", "--gpu=h20", "--margin", "0.2", "--dry-run", "extra" })
t.ok(o.gpus == 16 and o.gpu == "h20" and o.margin == 0.2 and o.dry_run == true, "parsed values")
t.is(math.type(o.gpus), "integer", "integer option stays an integer")
t.is(o[0][1], "extra", "positional arguments kept")
t.raises(function() gp.options(P, { [0] = "s.lua", "--gpus", "many" }) end,
  "option '--gpus' expects an integer, got 'many'", "bad value names the argument", true)
t.raises(function() gp.options(P, { [0] = "s.lua", "--nodes", "2" }) end,
  "unknown option '--nodes'", "unknown option named", true)
t.done_testing()
