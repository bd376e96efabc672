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
-- Lua's tonumber would read "0x10" as 16; a command line's counts are decimal.
t.raises(function() gp.options(P, { [0] = "s.lua", "--gpus", "0x10" }) end,
  "option '--gpus' expects an integer, got '0x10'", "hexadecimal integer refused", true)
t.raises(function() gp.options(P, { [0] = "s.lua", "--margin", "0x1p-3" }) end,
  "option '--margin' expects a number, got '0x1p-3'", "hexadecimal number refused", true)
t.raises(function() gp.options(P, { [0] = "s.lua", "--nodes", "2" }) end,
  "unknown option '--nodes'", "unknown option named", true)
-- the nearest parameter named, in the command line's spelling: '--margin'
-- is one edit from '--margn', '--dry-run' one from '--dry-rn'
t.raises(function() gp.options(P, { [0] = "s.lua", "--margn", "2" }) end,
  "s.lua: unknown option '--margn' (did you mean '--margin'?)", "nearest parameter named", true)
t.raises(function() gp.options(P, { [0] = "s.lua", "--dry-rn" }) end,
  "(did you mean '--dry-run'?)", "nearest written with '-'", true)

-- A flag that defaults to true can be turned off with --no-NAME.
local Q = { fp8 = { "use fp8", true }, gpus = { "GPU count", 8 } }
t.is(gp.options(Q, { [0] = "s.lua" }).fp8, true, "flag default true")
t.is(gp.options(Q, { [0] = "s.lua", "--no-fp8" }).fp8, false, "--no-fp8 turns it off")
t.raises(function() gp.options(Q, { [0] = "s.lua", "--no-gpus" }) end,
  "unknown option '--no-gpus'", "--no- only for flags", true)
t.raises(function() gp.options(Q, { [0] = "s.lua", "--no-fp8=1" }) end,
  "option '--no-fp8' takes no value", "--no-NAME takes no value", true)
-- Empty values and a malformed declaration are named.
t.raises(function() gp.options(Q, { [0] = "s.lua", "--gpus=" }) end,
  "option '--gpus' needs a value", "empty value refused", true)
t.raises(function() gp.options({ gpus = 8 }, { [0] = "s.lua" }) end,
  "gp.options: parameter 'gpus' must be {description, default}", "bad declaration named", true)
t.done_testing()
