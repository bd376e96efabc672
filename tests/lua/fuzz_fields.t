-- Fuzz target: catalog entries and validation cases, one field at a time,
-- systematically (tests/lua/fuzz_options.t does the same for options).
-- A GPU and a model entry (tests/lua/catalog_gen.lua's templates over the
-- good fixture, and the shipped h100-sxm and llama3-8b as their files
-- write them, over the shipped catalog), each field on its own line of a
-- user catalog file loaded as a user's search path is, and one validation case
-- of each kind (tests/fixtures/validation/fuzz_base.json), read as
-- `gpuplan validate FILE` reads one: each field in turn deleted, given a
-- value of the wrong type, a negative one, and ones that make a NaN (0,
-- 0/0, 1/0, 1e300).  Properties: the file is refused with an error that
-- names it and a line (FILE:N), clean (one line, no position inside
-- gpuplan); or, where the change is legal (an optional field dropped, a
-- value in range), the entry goes through the commands and the case is
-- predicted as a finite number or declined with a clean reason.
-- GPUPLAN_FUZZ_ALL=1 lists every finding on stderr.
local t = require "tap"
local fz = require "fuzz"
local catalog = require "gpuplan.catalog"
local memory = require "gpuplan.memory"
local roofline = require "gpuplan.roofline"
local validate = require "gpuplan.validate"
local cjson = require "cjson"
local gen = require "catalog_gen"

local F = "tests/fixtures/catalog/good"
local scratch = t.scratch()
local recipes = t.scratch()
do
  local fh = assert(io.open("catalog/recipes.lua", "rb"))
  recipes.put("recipes.lua", fh:read("a"))
  fh:close()
end
catalog.limits = { instructions = 200000, seconds = 1, bytes = 16 * 1024 * 1024 }
local tiny = { id = "fz-tiny", layers = 2, hidden = 64, heads = 4, ffn_hidden = 128, vocab = 100 }

local function finite(x) return type(x) == "number" and x == x and x > -math.huge and x < math.huge end

fz.start("fields", 1)
local runs = 0

-- ---- catalog entries ---------------------------------------------------
-- Replacement values (Lua source) by mutation: a wrong type for a number
-- or a string, a negative, the NaN makers.
local CAT_MUTATIONS = { "<delete>", '"x"', "{ x = 1 }", "-1", "0", "0/0", "1/0", "1e300" }

local function template(kind, id)
  for _, tpl in ipairs(gen.templates) do
    local idf
    for _, f in ipairs(tpl[2]) do if f[1] == "id" then idf = f[2] end end
    if tpl[1] == kind and idf == '"' .. id .. '"' then return tpl[2] end
  end
end

local function commands(cat, e, kind)
  if kind == "gpu" then
    local r = roofline.roofline { gpu = e, cat = cat }
    for p, x in pairs(r.ridges) do
      assert(finite(x.achievable), "ridge " .. p .. " is " .. tostring(x.achievable))
    end
    local m = memory.memory { model = tiny, gpu = e, cat = cat }
    assert(finite(m.total), "memory total " .. tostring(m.total))
  else
    local m = memory.memory { model = e, capacity = 80e9, cat = cat }
    assert(finite(m.total), "memory total " .. tostring(m.total))
    m = memory.memory { model = e, capacity = 80e9, method = "infer", cat = cat }
    assert(finite(m.total), "inference memory total " .. tostring(m.total))
  end
end

-- Lua source of a plain value (keys sorted: the same text every run).
local function source(v)
  if type(v) == "string" then return string.format("%q", v) end
  if type(v) == "number" then
    return math.type(v) == "integer" and tostring(v) or string.format("%.17g", v)
  end
  if type(v) ~= "table" then return tostring(v) end
  local parts = {}
  for _, k in ipairs(fz.keys(v)) do
    local key = type(k) == "string" and k:match("^[%a_][%w_]*$") and k or ("[" .. source(k) .. "]")
    parts[#parts + 1] = key .. " = " .. source(v[k])
  end
  return "{ " .. table.concat(parts, ", ") .. " }"
end

-- A shipped entry as its file wrote it (its _raw table), under a new id,
-- as fields { name, source }.
local function shipped(plural, id, new_id)
  local raw = catalog.get()[plural][id]._raw
  local fields = { { "id", string.format("%q", new_id) } }
  for _, k in ipairs(fz.keys(raw)) do
    if k ~= "id" then fields[#fields + 1] = { k, source(raw[k]) } end
  end
  return fields
end

local loaded_ok = 0
-- the templates over the good fixture; shipped entries (h100-sxm,
-- llama3-8b: every field a real entry has) over the shipped catalog
for _, spec in ipairs { { "gpu", "fz-gpu", "gpus" }, { "model", "fz-model", "models" },
                        { "gpu", "fz-h100", "gpus", "h100-sxm" },
                        { "model", "fz-llama", "models", "llama3-8b" } } do
  local kind, id, plural, from = spec[1], spec[2], spec[3], spec[4]
  local fields = from and shipped(plural, from, id) or assert(template(kind, id), "no template " .. id)
  local dirs = from and { "catalog", scratch.dir } or { F, recipes.dir, scratch.dir }
  for fi, f in ipairs(fields) do
    if f[1] ~= "id" then
      for _, mut in ipairs(CAT_MUTATIONS) do
        -- two comment lines, the constructor, then a field a line: the
        -- mutated field on line 3 + fi
        local lines = { "-- fuzz_fields", "-- " .. f[1] .. " = " .. mut, kind .. " {" }
        for j, g in ipairs(fields) do
          if j ~= fi then lines[#lines + 1] = "  " .. g[1] .. " = " .. g[2] .. ","
          elseif mut ~= "<delete>" then lines[#lines + 1] = "  " .. g[1] .. " = " .. mut .. "," end
        end
        lines[#lines + 1] = "}"
        local text = table.concat(lines, "\n") .. "\n"
        local path = scratch.put("f.lua", text)
        local shown = string.format("%s %s: %s = %s", kind, id, f[1], mut)
        runs = runs + 1
        local ok, cat, errs = pcall(catalog.load, dirs)
        if not ok then
          fz.finding("catalog.load raised: " .. tostring(cat), shown)
        elseif #errs > 0 then
          local e = errs[1]
          local why = fz.unclean(e)
          if why then fz.finding(why .. ": " .. e, shown)
          elseif not e:find(path .. ":%d+") and not e:find(path, 1, true) then
            fz.finding("error does not name the file: " .. e, shown)
          elseif not e:find(path:gsub("%p", "%%%0") .. ":%d+") then
            fz.finding("error names no line: " .. e, shown)
          end
        else
          loaded_ok = loaded_ok + 1
          if os.getenv("GPUPLAN_FUZZ_ALL") then io.stderr:write("LOADED ", shown, "\n") end
          local e = cat[plural][id]
          if not e then
            fz.finding("loaded without errors, no entry", shown)
          else
            local okc, err = pcall(commands, cat, e, kind)
            if not okc then fz.finding("loaded, a command refused: " .. tostring(err), shown) end
          end
        end
        scratch.clean()
      end
    end
  end
end
t.diag(string.format("%d catalog files loaded (legal changes) and went through the commands", loaded_ok))

-- ---- validation cases --------------------------------------------------
local fh = assert(io.open("tests/fixtures/validation/fuzz_base.json", "rb"))
local bases = cjson.decode(fh:read("a"))
fh:close()

-- One base case a kind.
local by_kind, kinds = {}, {}
for _, c in ipairs(bases) do
  if not by_kind[c.kind] then by_kind[c.kind] = c; kinds[#kinds + 1] = c.kind end
end

-- The field paths of a case: every key, and the keys of its tables one
-- level down (model.layers, hardware.gpus, measured.value).
local function paths(c)
  local out = {}
  for _, k in ipairs(fz.keys(c)) do
    if k ~= "id" then
      out[#out + 1] = { k }
      if type(c[k]) == "table" and c[k] ~= cjson.null then
        for _, k2 in ipairs(fz.keys(c[k])) do out[#out + 1] = { k, k2 } end
      end
    end
  end
  return out
end

local CASE_MUTATIONS = { "<delete>", "<wrong>", -1, 0, 1e300 }
local predicted, declined = 0, 0
for _, kind in ipairs(kinds) do
  local base = by_kind[kind]
  for _, p in ipairs(paths(base)) do
    for _, mut in ipairs(CASE_MUTATIONS) do
      local c = fz.copy(base)
      local node = c
      for i = 1, #p - 1 do node = node[p[i]] end
      local k = p[#p]
      local old = node[k]
      if mut == "<delete>" then node[k] = nil
      elseif mut == "<wrong>" then node[k] = (type(old) == "string") and 5 or "x"
      else node[k] = mut end
      -- a case a line, this one on line 2
      local text = "[\n" .. fz.json(c, cjson.null) .. "\n]\n"
      local path = scratch.put("cases.json", text)
      local shown = string.format("%s case %s: %s = %s", kind, base.id, table.concat(p, "."),
        tostring(mut))
      runs = runs + 1
      local okr, got = pcall(validate.read, path)
      if not okr then
        local why = fz.unclean(got)
        if why then fz.finding(why .. ": " .. tostring(got), shown)
        elseif not tostring(got):find(path:gsub("%p", "%%%0") .. ":%d+") then
          fz.finding("error names no FILE:line: " .. tostring(got), shown)
        end
      else
        for _, cc in ipairs(got) do
          local okp, row = pcall(validate.predict, cc, catalog.get())
          if not okp then
            fz.finding("predict raised: " .. tostring(row), shown)
          elseif row.predicted ~= nil then
            predicted = predicted + 1
            if not (finite(row.predicted) and finite(row.error)) then
              fz.finding("prediction not finite: " .. tostring(row.predicted), shown)
            end
          else
            declined = declined + 1
            if os.getenv("GPUPLAN_FUZZ_ALL") then io.stderr:write("DECLINED ", shown, ": ", tostring(row.reason), "\n") end
            local why = fz.bad_reason(row.reason)
            if why then
              fz.finding("reason is an internal error (" .. why .. "): " .. tostring(row.reason),
                shown)
            end
          end
        end
      end
      os.remove(path)
    end
  end
end
t.diag(string.format("cases: %d predicted, %d declined with a reason", predicted, declined))
if os.getenv("GPUPLAN_FUZZ_ALL") then
  for _, f in ipairs(fz.findings) do io.stderr:write(f.what, "\n  ", f.input, "\n") end
end
scratch.remove()
recipes.remove()
fz.finish(runs)
t.done_testing()
