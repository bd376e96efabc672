-- Fuzz target: the catalog loader across a search path of many files
-- (issue 19.6, 19.12, 19.13).  Each input is one to three directories of
-- one to twenty generated files (tests/lua/catalog_gen.lua) with code that
-- spends a share of the whole catalog's budgets: loops, strings built by
-- doubling, tables held, many constructor calls, long and control-character
-- strings, source padding, recursion.  The budgets are lowered so that
-- inputs cross them often.  Properties of every load:
--   it never raises, and leaves no memory limit and the whole string
--   library behind;
--   every error is one clean line naming a file or directory of the path;
--   at most one error is a budget's, and no file after the one it names
--   was run (none in cat.files, no error names one);
--   the files read and the entries made stay within the budgets;
--   every string the catalog holds is text of at most schema.STRING_MAX;
--   the load ends within the budget's seconds (plus one for the checks
--   after the files run, which the budget does not cover).
local t = require "tap"
local fz = require "fuzz"
local gen = require "catalog_gen"
local catalog = require "gpuplan.catalog"
local schema = require "gpuplan.schema"
local config = require "gpuplan.config"

catalog.limits = { instructions = 200000, seconds = 1, bytes = 16 * 1024 * 1024 }
catalog.budget = { files = 30, source = 96 * 1024, instructions = 800000, seconds = 2,
                   bytes = 24 * 1024 * 1024, entries = 40 }

-- What a file may spend beyond its entries.  The loop costs ~75,000
-- counted instructions, the doubling makes a 1 MiB string, the table holds
-- ~2 MB while the file runs, the padding is 8 KB of source.
local heavy = {
  "local n = 0 for i = 1, 30000 do n = n + 1 end",
  "local s = 'x' for _ = 1, 20 do s = s .. s end",
  "local t = {} for i = 1, 20000 do t[i] = { i } end",
  "for i = 1, 12 do gpu { id = 'fz-many-' .. i } end",
  "local function f() f() end f()",
  "local function f(n) return 1 + f(n + 1) end f(1)",
  "-- " .. ("p"):rep(8 * 1024),
  "local t = {} for i = 1, 1e9 do t[i] = i end",
}
-- Names that are too long, exactly long enough, or not text.
local names = { '"' .. ("n"):rep(schema.STRING_MAX) .. '"', '"' .. ("n"):rep(schema.STRING_MAX + 1) .. '"',
                '"a\\27[31mb"', '"a\\0b"', '"a\\nb"', '"tab\\there"', '"ok"' }

local function file_text()
  local s = gen.file_text()
  if math.random(3) == 1 then s = s:gsub('name = "x"', function() return "name = " .. fz.pick(names) end) end
  if math.random(2) == 1 then s = fz.pick(heavy) .. "\n" .. s end
  return s
end

-- Every string in an entry's raw fields.
local function strings(v, out)
  if type(v) == "string" then out[#out + 1] = v
  elseif type(v) == "table" then
    for _, k in ipairs(fz.keys(v)) do strings(v[k], out) end
  end
  return out
end

local scratch = t.scratch()
local F = "tests/fixtures/catalog/good"
local n = fz.start("catalog search path", 60)
local budget_errors = 0
for i = 1, n do
  local dirs, order, listing = { F }, {}, {}
  for d = 1, math.random(3) do
    local dir = string.format("%s/d%d", scratch.dir, d)
    require("lfs").mkdir(dir)
    dirs[#dirs + 1] = dir
    for f = 1, math.random(20) do
      local name = string.format("d%d/f%02d.lua", d, f)
      local text = file_text()
      scratch.put(name, text)
      listing[#listing + 1] = "-- " .. name .. "\n" .. text
    end
  end
  local input = table.concat(listing, "\n")
  local t0 = os.clock()
  local ok, cat, errs = pcall(catalog.load, dirs)
  local took = os.clock() - t0
  if not ok then
    fz.finding("catalog.load raised: " .. tostring(cat), input)
  else
    -- Load order: the fixture's files, then ours in path order.
    for _, f in ipairs(cat.files) do order[f] = true end
    local crossed
    for _, e in ipairs(errs) do
      local why = fz.unclean(e)
      if why then fz.finding(why .. ": " .. e, input) break end
      if not (e:find(scratch.dir, 1, true) or e:find(F, 1, true)) then
        fz.finding("error names no file of the path: " .. e, input) break
      end
      if e:find("the budget for all the files of the search path", 1, true) then
        if crossed then fz.finding("two budget errors: " .. e, input) break end
        crossed = e:match("^(.-%.lua)")
        budget_errors = budget_errors + 1
      end
    end
    if crossed then
      for _, f in ipairs(cat.files) do
        if f > crossed and f:find(scratch.dir, 1, true) then
          fz.finding("file " .. f .. " ran after the budget was crossed at " .. crossed, input)
          break
        end
      end
      for _, e in ipairs(errs) do
        local f = e:match("^(.-%.lua)")
        if f and f > crossed and f:find(scratch.dir, 1, true) then
          fz.finding("an error of a file after the budget: " .. e, input) break
        end
      end
    end
    if #cat.files > catalog.budget.files then
      fz.finding(#cat.files .. " files read, budget " .. catalog.budget.files, input)
    end
    local entries = 0
    for _, kind in ipairs(fz.keys(schema.kinds)) do
      local tbl = cat[schema.kinds[kind]]
      for _, id in ipairs(fz.keys(tbl)) do
        entries = entries + 1
        for _, s in ipairs(strings(tbl[id]._raw, {})) do
          if #s > schema.STRING_MAX or s:find("%c") then
            fz.finding(string.format("%s '%s' holds a string of %d bytes%s", kind, id, #s,
              s:find("%c") and " with a control character" or ""), input)
          end
        end
      end
    end
    if entries > catalog.budget.entries then
      fz.finding(entries .. " entries held, budget " .. catalog.budget.entries, input)
    end
    if took > catalog.budget.seconds + 1 then
      fz.finding(string.format("the load took %.2f s", took), input)
    end
  end
  if config.memory() ~= 0 then fz.finding("a memory limit left behind", input) end
  if ("ab"):rep(2) ~= "abab" then fz.finding("the string library left sandboxed", input) end
  scratch.clean()
end
t.diag(string.format("%d of %d search paths crossed a budget", budget_errors, n))
t.ok(budget_errors > 0 and budget_errors < n, "some inputs crossed a budget, some did not")
scratch.remove()
fz.finish()
t.done_testing()
