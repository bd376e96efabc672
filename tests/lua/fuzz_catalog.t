-- Fuzz target: the catalog loader (sandbox, schema, the commands'
-- checks).  Generated catalog files -- valid entries with fields removed,
-- retyped, pushed to extremes, code that loops, nests or builds strings,
-- text cut or garbled -- are loaded on top of the good fixture.
-- Properties: loading never raises; every error names the generated file
-- in one line without a position inside gpuplan; and when a file loads
-- without errors, the commands accept every entry it defines (memory and
-- roofline on its models and GPUs, comm on its systems and fabrics,
-- conversion of its prices): `catalog check` said ok only to those.
local t = require "tap"
local fz = require "fuzz"
local catalog = require "gpuplan.catalog"
local memory = require "gpuplan.memory"
local roofline = require "gpuplan.roofline"
local comm = require "gpuplan.comm"

local gen = require "catalog_gen"

local F = "tests/fixtures/catalog/good"
local tiny = { id = "fz-tiny", layers = 2, hidden = 64, heads = 4, ffn_hidden = 128, vocab = 100 }
local scratch = t.scratch()
-- The shipped recipes and optimizers (catalog data the training commands
-- read) under the generated files, as a user's files sit over them.
local recipes = t.scratch()
do
  local fh = assert(io.open("catalog/recipes.lua", "rb"))
  recipes.put("recipes.lua", fh:read("a"))
  fh:close()
end
-- Limits lowered so that a runaway file costs milliseconds, not seconds.
catalog.limits = { instructions = 200000, seconds = 1, bytes = 16 * 1024 * 1024 }

-- The commands on every entry of a file that loaded cleanly.
local function commands(cat, defined)
  for _, id in ipairs(fz.keys(cat.models)) do
    local m = cat.models[id]
    if defined(m) then
      local r = memory.memory { model = m, capacity = 80e9, cat = cat }
      assert(r.total == r.total and r.total < math.huge, "memory total of " .. id .. " is not finite")
      memory.memory { model = m, capacity = 80e9, method = "infer", cat = cat }
    end
  end
  for _, id in ipairs(fz.keys(cat.gpus)) do
    local g = cat.gpus[id]
    if defined(g) then
      roofline.roofline { gpu = g, cat = cat }
      memory.memory { model = tiny, gpu = g, cat = cat }
    end
  end
  for _, id in ipairs(fz.keys(cat.systems)) do
    local s = cat.systems[id]
    if defined(s) then
      comm.comm { op = "all_reduce", bytes = 2 ^ 20, system = s, catalog = cat }
    end
  end
  for _, id in ipairs(fz.keys(cat.fabrics)) do
    local f = cat.fabrics[id]
    if defined(f) and f.scope == "scaleup" then
      comm.comm { op = "all_gather", bytes = 2 ^ 20, gpus = 2,
                  topology = comm.from_fabrics({ scaleup = f.id, gpus_per_node = 2 }, cat) }
    end
  end
  for _, id in ipairs(fz.keys(cat.prices)) do
    local p = cat.prices[id]
    if defined(p) then
      local v = cat:convert(p.price)
      assert(v == v and v < math.huge, "price " .. id .. " converts to " .. tostring(v))
    end
  end
end

local n = fz.start("catalog", 250)
local clean_loads = 0
for i = 1, n do
  local text = gen.file_text()
  local path = scratch.put("f" .. i .. ".lua", text)
  local ok, cat, errs = pcall(catalog.load, { F, recipes.dir, scratch.dir })
  if not ok then
    fz.finding("catalog.load raised: " .. tostring(cat), text)
  elseif #errs > 0 then
    for _, e in ipairs(errs) do
      local why = fz.unclean(e)
      if why then fz.finding(why .. ": " .. e, text) break end
      -- At its start, or as the definition an entry elsewhere now
      -- trips over (an override of a fabric the good fixture uses).
      if not e:find(path, 1, true) then fz.finding("error does not name the file: " .. e, text) break end
    end
  else
    clean_loads = clean_loads + 1
    local okc, e = pcall(commands, cat, function(x) return x._file == path end)
    if not okc then fz.finding("check said ok, a command refused: " .. tostring(e), text) end
  end
  scratch.clean()
end
t.diag(string.format("%d of %d files loaded without errors and went through the commands",
  clean_loads, n))
scratch.remove()
recipes.remove()
fz.finish()
t.ok(require("gpuplan.config").memory() == 0, "no memory limit left behind")
t.is(("ab"):rep(2), "abab", "the string library is whole again")
t.done_testing()
