-- gpuplan validate CASES.json...
local validate = require "gpuplan.validate"
local catalog = require "gpuplan.catalog"
local report = require "gpuplan.report"
local cli = require "gpuplan.cli"

local C = {
  summary = "predict published measurements and report the error per case and per kind",
  usage = [[
usage: gpuplan validate [CASES.json...] [--format text|markdown|csv|json] [--kind K]
                        [--summary | --coverage | --ranges | --explain ID]

  Predicts every case (format: validation/SCHEMA.md; the published cases
  ship as validation/cases.json) with the models that exist and prints
  predicted / measured / error per case, the cases not predicted with the
  reason, then per kind the count and the median and 90th-percentile
  absolute error; the collectives also over the cases of 1 MiB and more
  apart ("collective >= 1 MiB": bandwidth-bound sizes, without the
  small-message latency cases).  Without a file: the shipped
  validation/cases.json.  --kind keeps one kind (train, memory, infer,
  collective, rl).  --summary prints only the per-kind table.
  --explain ID prints one case as the Lua script of the job it was
  priced as: the planner call (gp.train, gp.infer, gp.rl, gp.memory,
  gp.comm) with every option the case set or the predictor assumed, and
  the read of the result its metric is compared with; its comments give
  the source, measured, predicted, the 80% range, where the time goes and
  the defaults.  `gpuplan run` runs it (it prints the prediction); edited,
  it is the case's job on another card, layout or option.
  Each predicted case carries its 80% range (predicted_lo, predicted_hi):
  a case of the shipped record from the other shipped cases of its kind
  and regime (leave-one-out), any other case from the shipped error model
  validation/ranges.lua, as a job like it gets in train, plan, rl and
  infer.  --coverage prints per kind the cases with a range, the share
  whose measured value lies inside it and the mean width (hi - lo) /
  predicted.  --ranges prints the error model of the cases given (what
  `make ranges` writes to validation/ranges.lua).
  csv: one table, a row per case (id, kind, metric, measured, predicted,
  error, predicted_lo, predicted_hi, reason, defaults; predicted and error
  empty where not predicted); the per-kind table is --summary --format
  csv.  json: an array of the same rows (--summary: of {kind, cases,
  predicted, median, p90, coverage}; --coverage: of {kind, predicted,
  ranged, coverage, width}).]],
  options = { format = "format", kind = "string", summary = "flag", coverage = "flag",
              ranges = "flag", explain = "string" },
}

local ranges = require "gpuplan.ranges"

local function pct(v) return string.format("%+.1f%%", v * 100) end

-- Which rows are cases of the shipped record: those whose id the shipped
-- validation/cases.json holds (all of them when it is the file given).
local function record_ids(args)
  local shipped = require("gpuplan.config").root .. "/validation/cases.json"
  local ids = {}
  local ok, cases = pcall(validate.read, shipped)
  if ok then for _, c in ipairs(cases) do ids[c.id] = true end end
  return function(r) return ids[r.id] == true end
end
local function num(v)
  if v >= 100 then return string.format("%.0f", v) end
  return string.format("%.3g", v)
end

-- A kind with no range has no coverage (report.null): shown as "-".
local function pct_abs(v)
  if type(v) ~= "number" then return "-" end
  return string.format("%.1f%%", v * 100)
end

-- The fraction format of a summary's columns: csv carries fractions (a
-- spreadsheet's numbers), the tables percent.
local function frac_of(format)
  return format == "csv" and "%.6f" or pct_abs
end

-- --coverage: the 80% ranges' coverage and width by kind.
local function print_coverage(summary, format)
  local csv, frac = format == "csv", frac_of(format)
  local out = {}
  for _, s in ipairs(summary) do
    if s.predicted > 0 then
      out[#out + 1] = { kind = s.kind, predicted = s.predicted, ranged = s.ranged,
                        coverage = s.coverage or report.null, width = s.width or report.null }
    end
  end
  report.print(out, { format = format,
    title = "80% ranges by kind (shipped cases: leave-one-out)", columns = {
    { key = "kind" }, { key = "predicted" }, { key = "ranged", label = "with range" },
    { key = "coverage", label = csv and "coverage" or "measured inside", fmt = frac },
    { key = "width", label = csv and "mean width" or "mean width (hi-lo)/pred", fmt = frac } } })
end

-- The summary by kind (--summary, and the end of the text report).
local function print_summary(summary, format)
  local csv, frac = format == "csv", frac_of(format)
  if format == "json" then
    report.print(summary, { format = "json", columns = { "kind", "cases", "predicted", "median",
      "p90", "coverage" } })
    return
  end
  report.print(summary, { format = format, title = "Summary by kind (|predicted - measured| / measured)", columns = {
    { key = "kind" }, { key = "cases" }, { key = "predicted" },
    { key = "median", label = csv and "median abs error" or "median |err|", fmt = frac },
    { key = "p90", label = csv and "p90 abs error" or "p90 |err|", fmt = frac },
    { key = "coverage", label = "in 80% range", fmt = frac } } })
end

-- Every case's row as data: csv or json.
local function print_rows(rows, format)
  if format == "csv" then
    report.print(rows, { format = "csv", columns = {
      { key = "id" }, { key = "kind" }, { key = "metric" },
      { key = "measured", fmt = "%.15g" }, { key = "predicted", fmt = "%.6g" },
      { key = "error", fmt = "%.6f" }, { key = "predicted_lo", fmt = "%.6g" },
      { key = "predicted_hi", fmt = "%.6g" }, { key = "reason" }, { key = "defaults" } } })
    return
  end
  report.print(rows, { format = "json", columns = { "id", "kind", "metric", "measured",
    "predicted", "error", "predicted_lo", "predicted_hi", "reason", "defaults" } })
end

-- The report as tables: the predicted cases, those not predicted, the
-- summary.
local function print_report(rows, summary, format)
  local predicted, missing = {}, {}
  for _, r in ipairs(rows) do
    if r.error then
      if r.predicted_lo then r.range = num(r.predicted_lo) .. "-" .. num(r.predicted_hi) end
      predicted[#predicted + 1] = r
    else
      missing[#missing + 1] = r
    end
  end
  -- An empty table printed as its title and a header over no rows (a
  -- file whose cases were all predicted showed "Not predicted" and
  -- "id  kind  metric  reason" with nothing under them): one line says so.
  local function table_or_none(rows, title, columns)
    if #rows == 0 then
      io.stdout:write(format == "markdown" and "### " .. title .. "\n\nnone\n" or title .. ": none\n")
    else
      report.print(rows, { format = format, title = title, columns = columns })
    end
    io.stdout:write("\n")
  end
  table_or_none(predicted, "Predicted cases", {
    { key = "id" }, { key = "kind" }, { key = "metric" },
    { key = "measured", fmt = num }, { key = "predicted", fmt = num },
    { key = "error", fmt = pct }, { key = "range", label = "80% range" },
    { key = "defaults", label = "defaults used", align = "left" } })
  table_or_none(missing, "Not predicted", {
    { key = "id" }, { key = "kind" }, { key = "metric" }, { key = "reason", align = "left" } })
  print_summary(summary, format)
end

function C.run(opts, args)
  local named = #args > 0
  if #args == 0 then
    args = { require("gpuplan.config").root .. "/validation/cases.json" }
  end
  if opts.kind and not validate.kinds[opts.kind] then
    error(cli.usage(string.format("validate: --kind must be train, memory, infer, collective "
      .. "or rl (got '%s')", tostring(opts.kind))), 0)
  end
  -- One view at a time (the usage's [--summary | --coverage | --ranges]):
  -- with two, one was printed and the other dropped in silence.
  local views = {}
  for _, v in ipairs { "summary", "coverage", "ranges", "explain" } do
    if opts[v] then views[#views + 1] = "--" .. v end
  end
  if #views > 1 then
    error(cli.usage("validate: " .. table.concat(views, " and ") .. " do not go together "
                    .. "(one of --summary, --coverage, --ranges, --explain)"), 0)
  end
  if opts.explain and opts.format and opts.format ~= "text" then
    error(cli.usage("validate: --explain prints a Lua script; it takes no --format"), 0)
  end
  if opts.explain and opts.kind then
    error(cli.usage("validate: --explain and --kind do not go together (the case has its "
                    .. "own kind)"), 0)
  end
  local cases, seen = {}, {}
  for _, path in ipairs(args) do
    local read = validate.read(path, seen)
    -- an empty array printed empty tables with exit 0: a filter that
    -- kept nothing looked like a run that predicted nothing wrong
    if #read == 0 then
      io.stderr:write(string.format("gpuplan: note: validate: %s holds no cases\n",
        require("gpuplan.units").oneline(path)))
    end
    for _, c in ipairs(read) do
      if not opts.kind or c.kind == opts.kind then cases[#cases + 1] = c end
    end
  end
  if #cases == 0 and opts.kind and #args > 0 then
    io.stderr:write(string.format("gpuplan: note: validate: no %s case in %s\n", opts.kind,
      require("gpuplan.units").oneline(table.concat(args, ", "))))
  end
  -- A broken catalog is an error naming its file and line, as in every
  -- command: predictions against part of a catalog would be wrong.
  local cat = catalog.get()
  local target
  if opts.explain then
    -- The case's own kind is predicted whole: a shipped case's 80% range
    -- is left out of the others of its kind (leave-one-out).
    local ids = {}
    for _, c in ipairs(cases) do
      ids[#ids + 1] = c.id
      if c.id == opts.explain then target = c end
    end
    if not target then
      -- The ids nearest what was typed, nearest first: those that hold
      -- it whole (3 characters or more: one letter is in most ids), then
      -- a few typos away (edit distance up to a third of its length),
      -- then a long shared beginning.  It listed every id holding the
      -- text, alphabetically, so '' and 'x' "meant" the first six ids.
      local q = opts.explain:lower()
      local distance = require("gpuplan.args").distance
      local limit = #q // 3
      local near, rank = {}, {}
      for _, id in ipairs(ids) do
        local lid = id:lower()
        local p = 0
        while p < #q and p < #lid and q:byte(p + 1) == lid:byte(p + 1) do p = p + 1 end
        local d = limit > 0 and distance(q, lid, limit) or limit + 1
        local r = (#q >= 3 and lid:find(q, 1, true)) and { 0, #lid }
          or d <= limit and { 1, d }
          or (p >= 6 and p * 2 >= #q) and { 2, -p } or nil
        if r then near[#near + 1], rank[id] = id, r end
      end
      table.sort(near, function(x, y)
        local a, b = rank[x], rank[y]
        if a[1] ~= b[1] then return a[1] < b[1] end
        if a[2] ~= b[2] then return a[2] < b[2] end
        return x < y
      end)
      while #near > 6 do table.remove(near) end
      error(cli.usage(string.format("validate: --explain: no case '%s' in %s%s",
        require("gpuplan.units").oneline(opts.explain),
        named and table.concat(args, ", ") or "the shipped cases (validation/cases.json)",
        #near > 0 and (" (did you mean " .. table.concat(near, ", ") .. "?)")
          or " (`gpuplan validate --format csv` lists the ids)")), 0)
    end
    local same = {}
    for _, c in ipairs(cases) do if c.kind == target.kind then same[#same + 1] = c end end
    cases = same
  end
  local rows = {}
  for _, c in ipairs(cases) do rows[#rows + 1] = validate.predict(c, cat) end
  table.sort(rows, function(a, b)
    if a.kind ~= b.kind then return a.kind < b.kind end
    return a.id < b.id
  end)
  local format = opts.format or "text"
  if opts.ranges then
    if opts.format and format ~= "text" then
      error(cli.usage("validate: --ranges prints a Lua data file; it takes no --format"), 0)
    end
    -- the files given, not the shipped record the header named always
    io.stdout:write(ranges.generate(rows, named and table.concat(args, ", ") or nil))
    return 0
  end
  ranges.attach(rows, record_ids(args))
  if target then
    for _, r in ipairs(rows) do
      if r.id == target.id then
        io.stdout:write((validate.explain(target, cat, r)))
        return 0
      end
    end
  end
  local summary = validate.summarise(rows)
  if opts.coverage then
    print_coverage(summary, format)
  elseif opts.summary then
    print_summary(summary, format)
  elseif format == "csv" or format == "json" then
    print_rows(rows, format)
  else
    print_report(rows, summary, format)
  end
  return 0
end

return C
