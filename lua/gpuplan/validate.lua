-- gpuplan.validate: predict published measurements and score the models.
--
-- Case files follow validation/SCHEMA.md (a JSON array of cases).
-- For each case of kind K the predictor lua/gpuplan/predict/K.lua is asked
-- for a value in the case's metric; a kind without a predictor, or a case a
-- predictor declines, is listed with the reason.  Errors are
-- (predicted - measured) / measured; per kind the report gives the count,
-- the median and the 90th percentile of |error| (nearest-rank).

-- A decoder of our own: strict numbers (no NaN, Infinity or hex, which
-- JSON does not have), without changing the shared module's settings.
local cjson = require("cjson").new()
cjson.decode_invalid_numbers(false)

local M = {}

M.kinds = { train = "training", memory = "memory", infer = "inference",
            collective = "collective", rl = "RL fine-tuning" }

-- JSON null -> nil, recursively.
local function strip_nulls(v)
  if v == cjson.null then return nil end
  if type(v) == "table" then
    for k, x in pairs(v) do v[k] = strip_nulls(x) end
  end
  return v
end

-- Read one case file; raises "FILE: problem".  seen (optional, shared
-- between the files of one run): id -> { file, index }, so an id given
-- twice is an error naming both places.
function M.read(path, seen)
  seen = seen or {}
  local f, err = io.open(path, "rb")
  if not f then error(string.format("cannot open case file '%s': %s", path, err), 0) end
  local text, rerr = f:read("a")
  f:close()
  if not text then error(string.format("cannot read case file '%s': %s", path, rerr), 0) end
  local ok, data = pcall(cjson.decode, text)
  if not ok then error(string.format("%s: invalid JSON: %s", path, tostring(data)), 0) end
  -- cjson decodes [] and {} alike: ask the text.
  if type(data) ~= "table" or not text:match("^%s*%[") then
    error(string.format("%s: expected a JSON array of cases", path), 0)
  end
  strip_nulls(data)
  for i, c in ipairs(data) do
    local where = string.format("%s: case %d", path, i)
    if type(c) ~= "table" then error(where .. ": not an object", 0) end
    if type(c.id) ~= "string" then error(where .. ": missing 'id'", 0) end
    where = string.format("%s: case '%s'", path, c.id)
    local first = seen[c.id]
    if first and first[1] == path and first[2] == i then
      error(string.format("%s: the file is given twice", path), 0)
    elseif first then
      error(string.format("%s (case %d) repeats the id of %scase %d", where, i,
        first[1] == path and "" or first[1] .. " ", first[2]), 0)
    end
    seen[c.id] = { path, i }
    if not M.kinds[c.kind] then
      error(string.format("%s: unknown kind '%s' (train, memory, infer, collective, rl)", where, tostring(c.kind)), 0)
    end
    local m = c.measured
    if type(m) ~= "table" or type(m.metric) ~= "string" or type(m.value) ~= "number" then
      error(where .. ": 'measured' needs a metric and a numeric value", 0)
    end
    if not (m.value > 0 and m.value < math.huge) then
      error(where .. ": measured value must be a positive finite number", 0)
    end
    c._file = path
  end
  return data
end

local predictors = {}

local function predictor(kind)
  if predictors[kind] == nil then
    local name = "gpuplan.predict." .. kind
    local ok, mod = pcall(require, name)
    if ok then
      predictors[kind] = mod
    elseif tostring(mod):find("module '" .. name .. "' not found", 1, true) then
      predictors[kind] = false
    else
      error(mod, 0)
    end
  end
  return predictors[kind]
end

-- Predict one case.  Returns a result row.
function M.predict(case, cat)
  local row = { id = case.id, kind = case.kind, metric = case.measured.metric,
                measured = case.measured.value, unit = case.measured.unit }
  local p = predictor(case.kind)
  if not p then
    row.reason = "no " .. M.kinds[case.kind] .. " model yet"
    return row
  end
  if not cat then
    row.reason = "catalog did not load"
    return row
  end
  local ok, res, why = pcall(p, case, cat)
  if not ok then
    row.reason = "prediction failed: " .. tostring(type(res) == "table" and res.msg or res)
  elseif type(res) ~= "table" or type(res.value) ~= "number" then
    row.reason = why or "not predicted"
  elseif res.value ~= res.value or res.value == math.huge or res.value < 0 then
    row.reason = "prediction is not a finite non-negative number"
  else
    row.predicted = res.value
    row.error = (res.value - row.measured) / row.measured
    if res.defaults and #res.defaults > 0 then row.defaults = table.concat(res.defaults, "; ") end
    row.detail = res.detail
  end
  return row
end

-- Nearest-rank percentile of a sorted list (q in (0, 1]).
function M.percentile(sorted, q)
  local n = #sorted
  if n == 0 then return nil end
  local k = math.ceil(q * n)
  if k < 1 then k = 1 end
  return sorted[k]
end

-- Per-kind summary rows: kind, cases, predicted, median, p90 (fractions).
function M.summarise(rows)
  local by = {}
  for _, r in ipairs(rows) do
    local s = by[r.kind] or { kind = r.kind, cases = 0, predicted = 0, errs = {} }
    by[r.kind] = s
    s.cases = s.cases + 1
    if r.error then
      s.predicted = s.predicted + 1
      s.errs[#s.errs + 1] = math.abs(r.error)
    end
  end
  local out = {}
  for _, k in ipairs { "train", "memory", "infer", "collective", "rl" } do
    local s = by[k]
    if s then
      table.sort(s.errs)
      s.median = M.percentile(s.errs, 0.5)
      s.p90 = M.percentile(s.errs, 0.9)
      s.errs = nil
      out[#out + 1] = s
    end
  end
  return out
end

return M
