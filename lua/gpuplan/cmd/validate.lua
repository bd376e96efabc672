-- gpuplan validate CASES.json...
local validate = require "gpuplan.validate"
local catalog = require "gpuplan.catalog"
local report = require "gpuplan.report"
local cli = require "gpuplan.cli"

local C = {
  summary = "predict published measurements and report the error per case and per kind",
  usage = [[
usage: gpuplan validate CASES.json... [--format text|markdown|csv|json] [--kind K]

  Predicts every case (format: shared/validation/SCHEMA.md) with the models
  that exist and prints predicted / measured / error per case, the cases
  not predicted with the reason, then per kind the count and the median and
  90th-percentile absolute error.  --kind keeps one kind (train, memory,
  infer, collective).  json: an array of {id, kind, metric, measured,
  predicted, error, reason, defaults}.]],
  options = { format = "format", kind = "string" },
}

local function pct(v) return string.format("%+.1f%%", v * 100) end
local function num(v)
  if v >= 100 then return string.format("%.0f", v) end
  return string.format("%.3g", v)
end

function C.run(opts, args)
  if #args == 0 then error(cli.usage("validate: missing CASES.json"), 0) end
  if opts.kind and not validate.kinds[opts.kind] then
    error(cli.usage("validate: --kind must be train, memory, infer or collective"), 0)
  end
  local cases, seen = {}, {}
  for _, path in ipairs(args) do
    for _, c in ipairs(validate.read(path, seen)) do
      if not opts.kind or c.kind == opts.kind then cases[#cases + 1] = c end
    end
  end
  -- A broken catalog is an error naming its file and line, as in every
  -- command: predictions against part of a catalog would be wrong.
  local cat = catalog.get()
  local rows = {}
  for _, c in ipairs(cases) do rows[#rows + 1] = validate.predict(c, cat) end
  table.sort(rows, function(a, b)
    if a.kind ~= b.kind then return a.kind < b.kind end
    return a.id < b.id
  end)
  local format = opts.format or "text"
  if format == "json" then
    for _, r in ipairs(rows) do
      r.predicted = r.predicted or report.null
      r.error = r.error or report.null
      r.reason = r.reason or report.null
      r.defaults = r.defaults or report.null
    end
    report.print(rows, { format = "json", columns = { "id", "kind", "metric", "measured",
      "predicted", "error", "reason", "defaults" } })
    return 0
  end
  local predicted, missing = {}, {}
  for _, r in ipairs(rows) do
    if r.error then predicted[#predicted + 1] = r else missing[#missing + 1] = r end
  end
  report.print(predicted, { format = format, title = format == "text" and "Predicted cases" or "Predicted cases", columns = {
    { key = "id" }, { key = "kind" }, { key = "metric" },
    { key = "measured", fmt = num }, { key = "predicted", fmt = num },
    { key = "error", fmt = pct }, { key = "defaults", label = "defaults used", align = "left" } } })
  io.stdout:write("\n")
  report.print(missing, { format = format, title = "Not predicted", columns = {
    { key = "id" }, { key = "kind" }, { key = "metric" }, { key = "reason", align = "left" } } })
  io.stdout:write("\n")
  local summary = validate.summarise(rows)
  report.print(summary, { format = format, title = "Summary by kind (|predicted - measured| / measured)", columns = {
    { key = "kind" }, { key = "cases" }, { key = "predicted" },
    { key = "median", label = "median |err|", fmt = function(v) return string.format("%.1f%%", v * 100) end },
    { key = "p90", label = "p90 |err|", fmt = function(v) return string.format("%.1f%%", v * 100) end } } })
  return 0
end

return C
