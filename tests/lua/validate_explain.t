-- gpuplan validate --explain / gp.validate.explain: every predicted case of
-- the shipped record, written as the Lua script of its job and run again,
-- gives the prediction the case was scored with.  The script is the
-- predictor's own options table written back as Lua (gpuplan.explain), so
-- the two runs price the same job: the read must agree to 1e-12 of the
-- value (a number written back with the shortest %g that reads back the
-- same double, so nothing is rounded; the slack is only for the
-- last-bit order of a sum).  A case that is not predicted has no script
-- and says why, naming the case.
local t = require "tap"
local validate = require "gpuplan.validate"
local gp = require "gpuplan"

local root = require("gpuplan.config").root
local cases = validate.read(root .. "/validation/cases.json")
local cat = gp.catalog()

local checked, bad, kinds = 0, {}, {}
for _, c in ipairs(cases) do
  local row = validate.predict(c, cat)
  if row.predicted then
    local ok, script = pcall(validate.explain, c, cat, row)
    local got
    if ok then
      local printed = {}
      local env = setmetatable({ print = function(...) printed[#printed + 1] = { ... } end },
                               { __index = _G })
      local chunk, lerr = load(script, "=" .. c.id, "t", env)
      if not chunk then
        ok, got = false, lerr
      else
        local ok2, r = pcall(chunk)
        if not ok2 then
          ok, got = false, tostring(type(r) == "table" and r.msg or r)
        elseif row.shows then
          got = printed[1] and printed[1][1]
        else
          got = row.read(r)
        end
      end
    else
      got = script
    end
    checked = checked + 1
    kinds[c.kind] = (kinds[c.kind] or 0) + 1
    if not ok or type(got) ~= "number" or
       math.abs(got - row.predicted) > 1e-12 * math.abs(row.predicted) then
      bad[#bad + 1] = string.format("%s: predicted %s, script %s", c.id,
                                    tostring(row.predicted), tostring(got))
    end
  end
end
t.ok(checked > 500, "the shipped record's predicted cases were explained (" .. checked .. ")")
for _, k in ipairs { "train", "memory", "infer", "collective", "rl" } do
  t.ok((kinds[k] or 0) > 0, "cases of kind " .. k .. " explained")
end
t.is(#bad, 0, "every script reproduces its prediction")
for i = 1, math.min(#bad, 10) do t.diag(bad[i]) end

-- The script's head: the case, its figures and the call.
local c1
for _, c in ipairs(cases) do if c.kind == "train" then c1 = c break end end
local s = validate.explain(c1, cat)
t.like(s, "^%-%- gpuplan validate %-%-explain " .. c1.id:gsub("%p", "%%%0"), "names the case")
t.like(s, "measured [%d.]+", "states the measured figure")
t.like(s, "\nlocal r = gp%.train{", "the planner call")
t.like(s, "\nreturn r\n$", "returns the result")

-- Not predicted: an error naming the case, not a script.
local ok, err = pcall(validate.explain, { id = "x-1", kind = "train", model = {},
  hardware = { gpu = "h100-sxm" }, measured = { metric = "step_time_s", value = 1 } }, cat)
t.ok(not ok, "a case that is not predicted has no script")
t.like(tostring(err), "case 'x%-1' is not predicted", "the error names the case")

-- Misuse, named at the caller's line as gp.validate.explain's: before,
-- a bad case raised "validate.lua:687: validate.predict: ...", a catalog
-- of another type failed inside a predictor ("prediction failed:
-- predict/collective.lua:27: attempt to index a number value"), and
-- another case's row gave this case's script with that case's figures.
local function raises_here(fn, pat, name)
  local ok2, e = pcall(fn)
  t.ok(not ok2 and tostring(e):find(pat, 1, true) ~= nil
       and not tostring(e):find("validate%.lua:") and not tostring(e):find("predict/"),
       name .. " (" .. tostring(e) .. ")")
end
local c2
for _, c in ipairs(cases) do if c.kind == "infer" then c2 = c break end end
raises_here(function() validate.explain(c1.id, cat) end,
  "validate.explain: case must be a case as gp.validate.read returns (got string", "an id for the case")
raises_here(function() validate.explain(c1, 5) end,
  "validate.explain: cat must be a catalog, as gp.catalog() returns (got 5)", "a number for the catalog")
raises_here(function() validate.predict(c1, "cat") end,
  "validate.predict: cat must be a catalog", "predict: a string for the catalog")
raises_here(function() validate.explain(c1, cat, validate.predict(c2, cat)) end,
  "validate.explain: row must be the case's own row, as gp.validate.predict(case, cat) returns "
  .. "(got the row of case '" .. c2.id .. "')", "another case's row")
raises_here(function() validate.explain(c1, cat, 5) end,
  "validate.explain: row must be the case's own row", "a number for the row")
raises_here(function() validate.summarise { {} } end,
  "validate.summarise: row 1 has no kind", "summarise: a row without a kind")
raises_here(function() validate.read(nil) end,
  "validate.read: path must be a case file's name (got nil)", "read: no path")
-- the error is at the caller's line
local ok3, e3 = pcall(function() validate.explain(c1, 5) end)
t.like(tostring(e3), "^[^:]*validate_explain%.t:%d+: ", "the position is the caller's line")
t.done_testing()
