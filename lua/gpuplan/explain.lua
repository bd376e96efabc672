-- gpuplan.explain: a validation case as the job gpuplan priced it as.
--
-- `gpuplan validate --explain ID` (gp.validate.explain) prints one case as
-- a Lua script that `gpuplan run` runs: the planner call (gp.train,
-- gp.infer, gp.rl, gp.memory or gp.comm) with every option the case's
-- predictor set -- what the case states and the defaults it assumed for
-- what the case leaves out -- and the read of the result the case's metric
-- is compared with.  Its comments carry the case: the source, the measured
-- and predicted figures, the 80% range, where the step's time goes and the
-- defaults.  Run as it stands it prints the prediction; changed, it is the
-- case's job under another option, card or layout.

local units = require "gpuplan.units"

local M = {}

local IDENT = "^[%a_][%w_]*$"
local KEYWORDS = {}
for w in ([[and break do else elseif end false for function goto if in local nil not or
  repeat return then true until while]]):gmatch("%a+") do KEYWORDS[w] = true end

-- A number as Lua reads it back to the same double: the shortest %g that
-- does, integers as integers.
local function number(x)
  if x ~= x or x == math.huge or x == -math.huge then
    error("explain: a job's number is not finite (" .. tostring(x) .. ")", 0)
  end
  if math.type(x) == "integer" then return string.format("%d", x) end
  -- an integral double (a JSON number) as the integer a user writes
  if x == math.floor(x) and math.abs(x) < 2 ^ 53 then return string.format("%.0f", x) end
  for p = 1, 17 do
    local s = string.format("%." .. p .. "g", x)
    if tonumber(s) == x then return s end
  end
  return string.format("%.17g", x)
end

-- The catalog id of t where t is the loaded catalog's own entry (a card
-- the predictor fetched): the script names it, as a user would.
local function catalog_id(t, cat)
  if not cat or type(t.id) ~= "string" then return nil end
  for _, tbl in pairs(cat) do
    if type(tbl) == "table" and rawget(tbl, t.id) == t then return t.id end
  end
  return nil
end

local function key_of(k)
  if type(k) == "string" and k:match(IDENT) and not KEYWORDS[k] then return k end
  if math.type(k) == "integer" then return "[" .. k .. "]" end
  if type(k) == "string" then return "[" .. string.format("%q", k) .. "]" end
  error("explain: a job's table has a key Lua cannot write back (" .. tostring(k) .. ")", 0)
end

-- A value as a Lua constructor, indented by `ind`.
local function value(x, cat, ind, seen)
  local t = type(x)
  if t == "string" then return string.format("%q", x) end
  if t == "number" then return number(x) end
  if t == "boolean" then return tostring(x) end
  if t ~= "table" then
    error("explain: a job holds a " .. t .. ", which a script cannot write", 0)
  end
  local id = catalog_id(x, cat)
  if id then return string.format("%q", id) end
  if seen[x] then error("explain: a job's table refers to itself", 0) end
  seen[x] = true
  local n, keys = #x, {}
  for k in pairs(x) do
    if not (math.type(k) == "integer" and k >= 1 and k <= n) then keys[#keys + 1] = k end
  end
  table.sort(keys, function(a, b)
    local ta, tb = type(x[a]) == "table", type(x[b]) == "table"
    if ta ~= tb then return tb end   -- scalars first, then the tables
    return tostring(a) < tostring(b)
  end)
  local inner, parts = ind .. "  ", {}
  for i = 1, n do parts[#parts + 1] = value(x[i], cat, inner, seen) end
  local flat = n > 0 and #keys == 0
  for _, k in ipairs(keys) do
    parts[#parts + 1] = key_of(k) .. " = " .. value(x[k], cat, inner, seen)
  end
  seen[x] = nil
  if #parts == 0 then return "{}" end
  local one = "{ " .. table.concat(parts, ", ") .. " }"
  if flat and #one + #ind <= 96 and not one:find("\n") then return one end
  return "{\n" .. inner .. table.concat(parts, ",\n" .. inner) .. ",\n" .. ind .. "}"
end
M.value = function(x, cat) return value(x, cat, "", {}) end

-- Comment lines: each line of s after "-- ", wrapped at 78 columns.
local function comment(out, s)
  for line in (units.oneline(s) .. " "):gmatch("(.-)%s+") do
    if #out.cur + #line + 1 > 75 and out.cur ~= "" then
      out[#out + 1] = "-- " .. out.cur
      out.cur = line
    else
      out.cur = out.cur == "" and line or out.cur .. " " .. line
    end
  end
  if out.cur ~= "" then out[#out + 1] = "-- " .. out.cur end
  out.cur = ""
end

local function fmt(x)
  if math.abs(x) >= 100 then return string.format("%.0f", x) end
  return string.format("%.4g", x)
end

-- The script of a case and its predicted row (gp.validate.predict's,
-- ranges attached or not).  Raises, naming the case, when the row was not
-- predicted.
function M.script(case, row, cat)
  if type(case) ~= "table" or type(row) ~= "table" then
    error("explain: needs a case and its predicted row", 2)
  end
  if not row.predicted then
    error(string.format("validate: case '%s' is not predicted (%s): there is no job to explain",
      units.oneline(tostring(case.id)), row.reason or "no reason given"), 0)
  end
  if not row.job or not row.call then
    error(string.format("validate: the %s predictor does not say its job (case '%s')",
      tostring(case.kind), units.oneline(tostring(case.id))), 0)
  end
  local out = { cur = "" }
  comment(out, string.format("gpuplan validate --explain %s", case.id))
  local src = case.source or {}
  local s = {}
  for _, k in ipairs { "title", "url", "date" } do
    if type(src[k]) == "string" and src[k] ~= "" then s[#s + 1] = src[k] end
  end
  if #s > 0 then comment(out, "source: " .. table.concat(s, ", ")) end
  comment(out, string.format("%s, %s: measured %s%s, predicted %s (%+.1f%%)%s", case.kind,
    row.metric, fmt(row.measured), row.unit and (" " .. row.unit) or "", fmt(row.predicted),
    100 * row.error, row.predicted_lo and string.format(", 80%% range %s-%s",
      fmt(row.predicted_lo), fmt(row.predicted_hi)) or ""))
  if row.detail then comment(out, "priced: " .. row.detail) end
  if row.defaults then comment(out, "assumed (the case does not say): " .. row.defaults) end
  local job = {}
  for k, x in pairs(row.job) do if k ~= "cat" then job[k] = x end end
  out[#out + 1] = 'local gp = require "gpuplan"'
  out[#out + 1] = "local r = gp." .. row.call .. value(job, cat, "", {})
  if row.shows then
    out[#out + 1] = "print(" .. row.shows .. ")  -- the case's " .. row.metric
  else
    comment(out, "the case's " .. row.metric .. ": " .. (row.reads or "read from r"))
  end
  out[#out + 1] = "return r"
  return table.concat(out, "\n") .. "\n"
end

return M
