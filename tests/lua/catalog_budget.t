-- The whole catalog's budget (issue 19.6, 19.12, 19.13): what all the
-- files of the search path may spend together (files, bytes of source,
-- instructions, seconds, memory, entries), the length and the characters
-- of every catalog string, and what a file that recurses without end or
-- exhausts memory is told.  Budgets are lowered here so that small files
-- cross them; tests/cli/hardening.t replays the issue's files at the
-- real budgets.
local t = require "tap"
local catalog = require "gpuplan.catalog"
local schema = require "gpuplan.schema"
local config = require "gpuplan.config"

local scratch = t.scratch()
local tmp, put, clean = scratch.dir, scratch.put, scratch.clean

-- A GPU entry the schema and the commands accept, with fields replaced.
local function gpu(id, extra)
  return string.format('gpu { id = "%s", name = "x", vendor = "T", arch = "hopper", '
    .. 'memory = GiB(48), mem_bw = "1TB/s", peak = { bf16 = "100TFLOPS" }, source = "t", '
    .. 'achievable = { gemm = { bf16 = 0.7 }, hbm = 0.8, reason = "t", source = "t" }%s }\n',
    id, extra or "")
end

-- Load tmp with budget[k] = v; returns the errors and the files read.
local function with(k, v)
  local saved = catalog.budget[k]
  catalog.budget[k] = v
  local cat, errs = catalog.load { tmp }
  catalog.budget[k] = saved
  local read = {}
  for _, f in ipairs(cat.files) do
    if f:sub(1, #tmp) == tmp then read[#read + 1] = f:sub(#tmp + 2) end
  end
  return errs, table.concat(read, " ")
end

local tail = ", the budget for all the files of the search path; no later file is read"

-- Files: four under a budget of two: the third is named.
for _, n in ipairs { "a", "b", "c", "d" } do put(n .. ".lua", "-- " .. n .. "\n") end
local errs, read = with("files", 2)
t.is(errs[1], tmp .. "/c.lua: the search path holds more than 2 catalog files" .. tail,
  "files: the file past the budget named, with the budget")
t.is(#errs, 1, "files: one error, d.lua is not read")
t.is(read, "a.lua b.lua", "files: the two before it loaded")
clean()

-- Source: three files of 1,000 bytes against 2,500: the third crosses.
for _, n in ipairs { "a", "b", "c" } do put(n .. ".lua", "--" .. ("x"):rep(997) .. "\n") end
errs, read = with("source", 2500)
t.is(errs[1], tmp .. "/c.lua: the catalog files together exceed 0 MiB of source" .. tail,
  "source: the file past the budget named")
t.is(read, "a.lua b.lua", "source: the two before it loaded")
clean()

-- Instructions: each file loops 100,000 times, two VM instructions an
-- iteration and the hook's own (which count too, ~14 a check of every
-- 100): ~233,000 as measured.  A budget of 600,000 is crossed by the
-- third file (~698,000), not by the second (~465,000).
for _, n in ipairs { "a", "b", "c", "d" } do
  put(n .. ".lua", "local n = 0\nfor i = 1, 100000 do n = n + 1 end\n")
end
errs, read = with("instructions", 600000)
t.is(errs[1], tmp .. "/c.lua:2: the catalog files together run more than 600000 "
  .. "instructions or 5 s" .. tail, "instructions: the file and line past the budget")
t.is(#errs, 1, "instructions: d.lua is not read")
t.is(read, "a.lua b.lua", "instructions: the two before it loaded")

-- Seconds: the same files against a budget of 0 s: spent before the first
-- one runs (listing, reading and compiling it took more than 0 s of CPU),
-- or at its first hook if the clock did not move by then.
errs = with("seconds", 0)
t.like(errs[1], "^" .. tmp:gsub("%p", "%%%0") .. "/a%.lua:?%d*: the catalog files together run "
  .. "more than 20000000 instructions or 0 s, the budget", "seconds: the file past the budget named")
t.is(#errs, 1, "seconds: no later file is read")
clean()

-- The budget crossed while a constructor checks its entry: most of a
-- file of 300 GPU entries' instructions are the schema's check of each
-- (gpuplan's own code, counted against the file), so a budget of 100,000
-- runs out inside one.  The check waits for the entry to be recorded and
-- stops the file at its next check: one error, the budget's, naming the
-- file and a line -- not the entry's problem "gpu 'g7': ...the budget..."
-- followed by a second budget error when the file went on.
local many = {}
for i = 1, 300 do many[i] = gpu("g" .. i) end
put("e.lua", table.concat(many))
errs = with("instructions", 100000)
t.like(errs[1], "^" .. tmp:gsub("%p", "%%%0") .. "/e%.lua:%d+: the catalog files together run "
  .. "more than 100000 instructions", "an entry's check crossing the budget: the budget's error")
t.is(#errs, 1, "an entry's check crossing the budget: one error")
clean()

-- Entries: three files of two GPUs each under a budget of 3: the second
-- file's second entry (line 2) is the fourth.
for _, n in ipairs { "a", "b", "c" } do put(n .. ".lua", gpu(n .. "1") .. gpu(n .. "2")) end
errs, read = with("entries", 3)
t.is(errs[1], tmp .. "/b.lua:2: the catalog files together define more than 3 entries" .. tail,
  "entries: the file and line of the entry past the budget")
t.is(#errs, 1, "entries: c.lua is not read")
clean()

-- Memory: a file building a 4 MiB string (its 2 MiB half alive beside it)
-- against a whole budget of 4 MiB, far under the file's own 64 MiB.
put("a.lua", "local s = 'x'\nfor _ = 1, 22 do s = s .. s end\n")
put("b.lua", "-- b\n")
errs, read = with("bytes", 4 * 1024 * 1024)
t.is(errs[1], tmp .. "/a.lua:2: the catalog files together use more than 4 MiB of memory" .. tail,
  "memory: the file past the budget named")
t.is(#errs, 1, "memory: b.lua is not read")
t.is(config.memory(), 0, "memory: no limit left behind")
-- What the files keep counts, not only what one file builds: five files
-- each keeping ~1 MiB of distinct 4,000-byte notes in 250 entries (the
-- strings, the entries' tables and their copies) against 3 MiB.
clean()
for i = 1, 5 do
  local src = {}
  for j = 1, 250 do
    src[j] = gpu(string.format("g%d-%d", i, j),
      string.format(", notes = '%04d%s'", j, ("n"):rep(3996)))
  end
  put(string.format("m%d.lua", i), table.concat(src))
end
errs, read = with("bytes", 3 * 1024 * 1024)
t.like(errs[1], "^" .. tmp:gsub("%p", "%%%0") .. "/m%d%.lua:?%d*: the catalog files together "
  .. "use more than 3 MiB of memory", "memory kept by the files counts")
t.ok(#errs == 1 and read:match("^m1%.lua") and not read:match("m5"),
  "memory: the files before it loaded, none after (" .. read .. ")")
clean()

-- Strings: at most schema.STRING_MAX bytes, ids schema.ID_MAX, text only.
put("s.lua", gpu("ok-max", string.format(", notes = '%s'", ("n"):rep(schema.STRING_MAX)))
  .. gpu("long-name", string.format(", notes = '%s'", ("n"):rep(schema.STRING_MAX + 1)))
  .. gpu(("i"):rep(schema.ID_MAX + 1))
  .. 'gpu { id = "esc", name = "A\\27[31mB", vendor = "T", arch = "hopper", memory = GiB(48), '
  .. 'mem_bw = "1TB/s", peak = { bf16 = "100TFLOPS" }, source = "t" }\n'
  .. gpu("nul", ", notes = 'a\\0b'") .. gpu("nl", ", notes = 'a\\nb'"))
local cat
cat, errs = catalog.load { "catalog", tmp }
t.ok(cat.gpus["ok-max"] ~= nil, "a string of exactly 4096 bytes is accepted")
t.is(errs[1], tmp .. "/s.lua:2: gpu 'long-name': field 'notes': longer than 4096 bytes (got 4097)",
  "a longer one: file, line, field and limit")
t.is(errs[2], tmp .. "/s.lua:3: gpu '" .. ("i"):rep(60) .. "...': field 'id': longer than "
  .. "128 bytes (got 129)", "an id of 129 bytes")
t.is(errs[3], tmp .. '/s.lua:4: gpu \'esc\': field \'name\': control character "\\27" at byte 2 '
  .. "(text only)", "an ESC in a name: refused at the catalog")
t.is(errs[4], tmp .. '/s.lua:5: gpu \'nul\': field \'notes\': control character "\\0" at byte 2 '
  .. "(text only)", "a NUL")
t.is(errs[5], tmp .. '/s.lua:6: gpu \'nl\': field \'notes\': control character "\\n" at byte 2 '
  .. "(text only)", "a newline")
clean()

-- Recursion without end and memory exhausted: the file and its line, no
-- position inside gpuplan, no limit left behind.
-- Which of the stack's million slots and the memory limit runs out first
-- depends on the frame's size: either is named with the file's line.
local deep = "^" .. tmp:gsub("%p", "%%%0") .. "/r%.lua:1: (.*)$"
local deep_msgs = {
  ["stack overflow (a function that calls itself without end?)"] = true,
  ["catalog file uses too much memory (limit 64 MiB)"] = true,
}
put("r.lua", "local function f() f() end\nf()\n")
_, errs = catalog.load { tmp }
t.ok(deep_msgs[(errs[1] or ""):match(deep)], "a function calling itself forever: the file's line")
t.is(#errs, 1, "one error")
clean()
put("r.lua", "local function f(n)\n  return 1 + f(n + 1)\nend\nf(1)\n")
_, errs = catalog.load { tmp }
t.is(errs[1], tmp .. "/r.lua:2: stack overflow (a function that calls itself without end?)",
  "a stack overflow: the file's line and what it means")
clean()
put("r.lua", "local function f() local t = { f() } return t end\nf()\n")
_, errs = catalog.load { tmp }
t.ok(deep_msgs[(errs[1] or ""):match(deep)], "recursion through a table constructor: the file's line")
if not deep_msgs[(errs[1] or ""):match(deep)] then t.diag(errs[1]) end
t.is(config.memory(), 0, "no memory limit left behind")
clean()
put("m.lua", "local t = {}\nfor i = 1, 1e9 do t[i] = { i } end\n")
_, errs = catalog.load { tmp }
t.is(errs[1], tmp .. "/m.lua:2: catalog file uses too much memory (limit 64 MiB)",
  "a memory bomb: the file and line")
clean()

scratch.remove()
t.done_testing()
