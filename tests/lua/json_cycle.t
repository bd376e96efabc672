-- gp.json of a table that contains itself: one error at the caller's line.
-- It overflowed the stack inside report.lua ("report.lua:108: stack
-- overflow").  A table met twice but not inside itself is not a cycle:
-- it is written each time.
-- Run with ./gpuplan run tests/lua/json_cycle.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(6)
local cyc = { a = 1 }
cyc.self = cyc
local ok, e = pcall(function() return gp.json(cyc) end)
t.ok(not ok and tostring(e):find("cannot encode a table that contains itself as JSON", 1, true) ~= nil,
  "a cycle is refused (" .. tostring(e) .. ")")
t.like(tostring(e), "json_cycle%.t:%d+:", "at the caller's line")
local shared = { 1, 2 }
t.is(gp.json { a = shared, b = { shared } }, '{"a":[1,2],"b":[[1,2]]}', "a table met twice, not a cycle")

-- A resolved job's step result (a userdata with :table()): encoded as its
-- table, whole or inside another table; it was refused ("cannot encode a
-- userdata as JSON").  A userdata without :table() still is.
local job = gp.train_job { model = "llama3-8b", gpu = "h100-sxm", gpus = 8 }
local r = job:step {}
t.is(gp.json(r), gp.json(r:table()), "gp.json(job:step{}) = gp.json(r:table())")
t.is(gp.json { step = r }, gp.json { step = r:table() }, "and inside a table")
ok, e = pcall(gp.json, io.stdout)
t.ok(not ok and tostring(e):find("cannot encode a userdata as JSON", 1, true) ~= nil,
  "a file handle (no :table()) is refused")
