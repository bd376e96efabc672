-- Report rendering: aligned text, markdown, CSV, JSON; deterministic.
local t = require "tap"
local report = require "gpuplan.report"

local rows = {
  { gpu = "h100-sxm", bw = 3.35e12, note = "a, \"b\"" },
  { gpu = "a100-sxm-80gb", bw = 2.039e12 },
}
local cols = { { key = "gpu", label = "GPU" },
               { key = "bw", label = "TB/s", fmt = function(v) return string.format("%.3f", v / 1e12) end },
               { key = "note" } }

t.is(report.render(rows, { columns = cols }),
  "GPU             TB/s  note\n" ..
  "-------------  -----  ------\n" ..
  "h100-sxm       3.350  a, \"b\"\n" ..
  "a100-sxm-80gb  2.039  -\n", "text: aligned, numbers right, missing '-'")
t.is(report.render(rows, { columns = cols, format = "markdown" }),
  "| GPU           |  TB/s | note   |\n" ..
  "| ------------- | ----: | ------ |\n" ..
  "| h100-sxm      | 3.350 | a, \"b\" |\n" ..
  "| a100-sxm-80gb | 2.039 | -      |\n", "markdown table")
t.is(report.render(rows, { columns = cols, format = "csv" }),
  "GPU,TB/s,note\nh100-sxm,3.350,\"a, \"\"b\"\"\"\na100-sxm-80gb,2.039,\n", "csv quoting")
t.is(report.render(rows, { columns = cols, format = "json" }),
  "[\n {\"gpu\":\"h100-sxm\",\"bw\":3350000000000,\"note\":\"a, \\\"b\\\"\"},\n" ..
  " {\"gpu\":\"a100-sxm-80gb\",\"bw\":2039000000000,\"note\":null}\n]\n", "json keeps raw numbers, null for missing")
t.is(report.json { b = 1, a = { 1.5, "x" }, _hidden = 1 }, "{\"a\":[1.5,\"x\"],\"b\":1}", "json: sorted keys, _private skipped")
t.is(report.json(0.1), "0.1", "json: shortest round-trip-ish float")
t.raises(function() report.render(rows, { format = "xml" }) end, "unknown format 'xml'", "unknown format", true)
-- The same input renders the same bytes twice (no table-order dependence).
local a = report.render({ { z = 1, a = 2, m = 3 } })
t.is(a, report.render({ { m = 3, z = 1, a = 2 } }), "default columns sorted")
t.done_testing()
