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
  unknown_field = "unknown_field.lua:1: gpu 'unknown': field 'colour': unknown field",
  wrong_unit = "wrong_unit.lua:1: gpu 'wrongunit': field 'mem_bw': bad bandwidth '1TB'",
  negative_memory = "negative_memory.lua:1: gpu 'negative': field 'memory': bad bytes '-48GB': must not be negative",
  duplicate = "duplicate.lua:6: duplicate gpu 'dup' (first defined at",
  os_execute = "os_execute.lua:2: undeclared name 'os'",
  io_open = "io_open.lua:2: undeclared name 'io'",
  require = "require.lua:2: undeclared name 'require'",
  loop = "loop.lua:2: catalog file runs too long",
  string_meta = "string_meta.lua:3: undeclared name 'getmetatable'",
  link_no_dir = "link_no_dir.lua:1: fabric 'nodir': field 'bw': bad link bandwidth '900GB/s': say 'bidir'",
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
local f = io.open("/tmp/gpuplan-sandbox-escaped", "r")
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
t.done_testing()
