-- The catalog loader: sandbox, schema errors with file:line and field,
-- layering (user dirs add and override entries).
local t = require "tap"
local catalog = require "gpuplan.catalog"

local F = "tests/fixtures/catalog/"

local cat, errs = catalog.load { F .. "good" }
t.is(#errs, 0, "good fixture loads without errors")
local g = cat.gpus["testgpu-48g"]
t.ok(g ~= nil, "fixture GPU is in the catalog")
-- GiB(48) -> "48GiB" -> 48 * 2^30 = 51,539,607,552 bytes.
t.is(g.memory, 51539607552, "unit helper GiB() in a catalog file")
t.is(g.mem_bw, 1e12, "mem_bw in B/s")
t.is(g.peak.bf16, 100e12, "peak bf16 in FLOP/s")
t.is(g._file, F .. "good/tiny.lua", "entry records its file")
-- `gpu {` opens on line 16 of tiny.lua.
t.is(g._line, 16, "entry records the line of its constructor")
-- "100GB/s bidir" is 50 GB/s per direction.
t.is(cat.fabrics.testlink.bw, 50e9, "link bandwidth stored per direction")
t.is(cat:achievable(g).hbm, 0.85, "GPU without achievable uses its arch's")
t.raises(function() cat:get("gpus", "testgpu") end,
  "unknown gpu 'testgpu' (did you mean testgpu-48g?)", "unknown id suggests", true)

-- Each broken file yields exactly one error naming file:line (and field).
local _, bad = catalog.load { F .. "good", F .. "bad" }
local by = {}
for _, e in ipairs(bad) do
  local file = e:match("bad/([%w_]+)%.lua")
  if file then by[file] = (by[file] or 0) + 1 end
end
local expect = {
  syntax = "syntax.lua:2: '}' expected",
  missing_field = "missing_field.lua:1: gpu 'missing': field 'name': required field is missing",
  unknown_field = "unknown_field.lua:2: gpu 'unknown': field 'colour': unknown field",
  wrong_unit = "wrong_unit.lua:3: gpu 'wrongunit': field 'mem_bw': bad bandwidth '1TB'",
  negative_memory = "negative_memory.lua:3: gpu 'negative': field 'memory': bad bytes '-48GB': must not be negative",
  duplicate = "duplicate.lua:6: duplicate gpu 'dup' (first defined at",
  os_execute = "os_execute.lua:2: undeclared name 'os'",
  io_open = "io_open.lua:2: undeclared name 'io'",
  require = "require.lua:2: undeclared name 'require'",
  loop = "loop.lua:2: catalog file runs too long",
  string_meta = "string_meta.lua:2: string method 'rep' is not available in catalog files",
  table_key = "table_key.lua:1: gpu 'tkey': keys must be field names, found a number key (2) and a table key",
  -- FP16 accumulation is at most twice the stored FP32-accumulate peak
  -- (schema.lua gpu.acc16_x: GeForce's halved rate, 1..2)
  acc16_x = "acc16_x.lua:4: gpu 'acc16': field 'acc16_x': must be <= 2, got 3",
  link_no_dir = "link_no_dir.lua:3: fabric 'nodir': field 'bw': bad link bandwidth '900GB/s': say 'bidir'",
}
local names = {}
for k in pairs(expect) do names[#names + 1] = k end
table.sort(names)
for _, k in ipairs(names) do
  local found = false
  for _, e in ipairs(bad) do found = found or e:find(expect[k], 1, true) ~= nil end
  t.ok(found and by[k] == 1, "one clear error for bad/" .. k .. ".lua")
end
t.is(#bad, #names, "no other errors")
-- os_execute.lua would create this file in the working directory.
local f = io.open("sandbox-escaped.tmp", "r")
t.ok(f == nil, "os.execute in a catalog file did not run")
if f then f:close() end

-- Overrides: a later directory replaces an entry by id and says so.
local c2, e2 = catalog.load { F .. "good", F .. "override" }
t.is(#e2, 0, "override layer loads")
local p = c2.prices["testgpu-48g/acme/us"]
t.is(p.price.amount, 0.99, "later directory's price wins")
t.is(p._overrides[1], F .. "good/tiny.lua:24", "override records what it replaced")

-- Cross references are checked after all layers.
local c3, e3 = catalog.load { F .. "override" }
t.like(e3[1], "price 'testgpu-48g/acme/us': field 'gpu': unknown gpu 'testgpu-48g'",
  "dangling reference names the entry and field", true)

t.raises(function() catalog.load { F .. "nope" } ; error(select(2, catalog.load { F .. "nope" })[1], 0) end,
  "no such directory", "missing directory is an error")

-- Escape attempts: each file of escape/ yields exactly one error, naming
-- file:line, and leaves nothing behind (no entry, no changed string
-- library, no memory limit).
local _, esc = catalog.load { F .. "good", F .. "escape" }
local eexpect = {
  concat_bomb = "concat_bomb.lua:3: catalog file uses too much memory",
  rep_bomb = "rep_bomb.lua:2: string method 'rep' is not available in catalog files",
  pattern = "pattern.lua:4: string method 'find' is not available in catalog files",
  dump = "dump.lua:2: string method 'dump' is not available in catalog files",
  mutate = "mutate.lua:4: attempt to index a nil value (local 'g')",
  nan_helper = "nan_helper.lua:3: GB() expects a finite number",
  include = "include.lua:3: undeclared name 'include'",
  recursion = "recursion.lua:2: stack overflow",
  non_table = "non_table.lua:2: gpu{...} expects a table, got a string",
  env_meta = "env_meta.lua:3: assignment to global 'os'",
}
local enames, eby = {}, {}
for k in pairs(eexpect) do enames[#enames + 1] = k end
table.sort(enames)
for _, e in ipairs(esc) do
  local file = e:match("escape/([%w_]+)%.lua")
  if file then eby[file] = (eby[file] or 0) + 1 end
end
for _, k in ipairs(enames) do
  local found = false
  for _, e in ipairs(esc) do found = found or e:find(F .. "escape/" .. eexpect[k], 1, true) == 1 end
  if not t.ok(found and eby[k] == 1, "escape/" .. k .. ".lua: one clear error") then
    for _, e in ipairs(esc) do if e:find(k, 1, true) then t.diag(e) end end
  end
end
t.is(#esc, #enames, "no other errors from escape/")
t.is(("ab"):rep(2), "abab", "string methods are back after loading")
local config = require "gpuplan.config"
t.is(config.memory(), 0, "no memory limit left after loading")

-- Cases that need a scratch directory.
local lfs = require "lfs"
local scratch = t.scratch()
local tmp, put, clean = scratch.dir, scratch.put, scratch.clean

-- Nothing but constructors and unit helpers: every standard global that
-- could reach code, files, metatables or the interpreter is undeclared.
for _, name in ipairs { "_G", "coroutine", "debug", "dofile", "getmetatable",
    "io", "load", "loadfile", "os", "package", "pcall", "rawget", "rawset",
    "require", "setmetatable", "string", "collectgarbage", "print" } do
  put("g.lua", "local x = " .. name .. "\n")
  local _, eg = catalog.load { tmp }
  t.like(eg[1], "g.lua:1: undeclared name '" .. name .. "'", "no " .. name, true)
end
clean()

-- 0/0 in a plain number or fraction field: named, spelled "nan".
put("nan.lua", [[
fabric { id = "nanlink", name = "x", scope = "scaleup", kind = "nvlink", bw = "100GB/s bidir",
  latency = "1us", achievable = 0 / 0, achievable_reason = "t", source = "t" }
]])
local _, en = catalog.load { tmp }
t.is(en[1], tmp .. "/nan.lua:2: fabric 'nanlink': field 'achievable': expected a fraction in (0, 1], got nan",
  "NaN fraction refused, same text on every platform")
clean()

-- A huge value is quoted by its start only: one line stays one line.
put("long.lua", [[
local s = "X"
for _ = 1, 20 do s = s .. s end
gpu { id = s, name = "x", vendor = "T", arch = "testarch", memory = "48GB",
  mem_bw = "1TB/s", peak = { bf16 = "100TFLOPS" }, source = "t" }
]])
local _, elong = catalog.load { tmp }
-- The message quotes the id twice, each cut to its first 60 characters
-- (the entry's name in catalog.lua, the bad value in schema.lua), around
-- 102 characters of fixed text: "/long.lua:3: gpu '" 18, "...': field
-- 'id': expected a lower-case id (a-z, 0-9, '.', '-', '_', '/'), got " 79,
-- '"' 1 and '"...' 4.  After the temporary directory's path that is
-- 120 + 102 = 222 characters, not the 1 MB id.
t.ok(#elong == 1 and #elong[1] == #tmp + 222, "a 1 MB id gives a short message")
t.like(elong[1], "long.lua:3: gpu '" .. ("X"):rep(60) .. "...': field 'id': expected a lower-case id",
  "naming the entry by the start of its id", true)
clean()

-- A precompiled chunk is refused ("t" mode), whatever its extension.
put("binary.lua", string.dump(function() return 1 end))
local _, eb = catalog.load { tmp }
t.like(eb[1], "binary.lua: attempt to load a binary chunk", "binary chunk refused", true)
clean()

-- The table a file passed to a constructor is copied: editing it after
-- validation changes nothing in the catalog.
put("later_edit.lua", [[
local t = { id = "edited", name = "x", vendor = "T", arch = "testarch",
  memory = "48GB", mem_bw = "1TB/s", peak = { bf16 = "100TFLOPS" }, source = "t" }
gpu(t)
t.memory = "-1GB"
t.peak.bf16 = "1TFLOPS"
]])
local ce, ee = catalog.load { F .. "good", tmp }
t.is(#ee, 0, "a file that edits its own table after gpu{} loads")
t.is(ce.gpus.edited._raw.memory, "48GB", "the raw fields are a copy")
t.is(ce.gpus.edited._raw.peak.bf16, "100TFLOPS", "nested raw fields are a copy")
clean()

-- Time: a loop of expensive instructions stays under the instruction
-- budget but not under the CPU-time limit (lowered here to keep the test
-- short; each 4 MB concatenation is ~1 ms).
put("slow.lua", [[
local s = "x"
for _ = 1, 22 do s = s .. s end
for _ = 1, 1000000 do local u = s .. s end
]])
local saved = catalog.limits.seconds
catalog.limits.seconds = 0.05
local _, es = catalog.load { tmp }
catalog.limits.seconds = saved
t.like(es[1], "slow.lua:3: catalog file runs too long", "CPU time limit", true)
clean()

-- A directory symlink that loops back is walked once.
put("one.lua", [[
arch { id = "looparch", name = "x", launch_overhead = "1us",
  achievable = { hbm = 0.8, reason = "t", source = "t" } }
]])
lfs.link(".", tmp .. "/loop", true)
local cl, el = catalog.load { tmp }
t.is(#el, 0, "a symlink loop is not an error")
t.ok(cl.archs.looparch ~= nil and #cl.files == 1, "and each file is read once")
scratch.remove()
t.done_testing()
