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
-- CSV heads each column with its key (the JSON name), not its label.
t.is(report.render(rows, { columns = cols, format = "csv" }),
  "gpu,bw,note\nh100-sxm,3.350,\"a, \"\"b\"\"\"\na100-sxm-80gb,2.039,\n", "csv quoting")
local named = { cols[1], { key = "bw", label = "TB/s", fmt = cols[2].fmt, csv = "bw_tbps" } }
t.is(report.render(rows, { columns = named, format = "csv" }),
  "gpu,bw_tbps\nh100-sxm,3.350\na100-sxm-80gb,2.039\n", "csv: a column names its header")
t.is(report.render(rows, { columns = cols, format = "json" }),
  "[\n {\"gpu\":\"h100-sxm\",\"bw\":3350000000000,\"note\":\"a, \\\"b\\\"\"},\n" ..
  " {\"gpu\":\"a100-sxm-80gb\",\"bw\":2039000000000,\"note\":null}\n]\n", "json keeps raw numbers, null for missing")
t.is(report.json { b = 1, a = { 1.5, "x" }, _hidden = 1 }, "{\"a\":[1.5,\"x\"],\"b\":1}", "json: sorted keys, _private skipped")
t.is(report.json(0.1), "0.1", "json: shortest round-trip-ish float")
t.raises(function() report.render(rows, { format = "xml" }) end, "unknown format 'xml'", "unknown format", true)
-- The same input renders the same bytes twice (no table-order dependence).
local a = report.render({ { z = 1, a = 2, m = 3 } })
t.is(a, report.render({ { m = 3, z = 1, a = 2 } }), "default columns sorted")

-- Awkward cells.  Text and markdown tables stay one line per row; CSV
-- quotes; JSON escapes control characters and writes non-finite numbers
-- as null (JSON has no NaN).
local odd = {
  { s = "a|b", n = 0 / 0 },
  { s = "two\nlines", n = 1 / 0 },
  { s = "tab\there", n = -1 / 0 },
  { s = "ctl\1x", n = 1.5 },
}
local oc = { { key = "s" }, { key = "n", fmt = "%.1f" } }
t.is(report.render(odd, { columns = oc }),
  "s             n\n" ..
  "---------  ----\n" ..
  "a|b         nan\n" ..
  "two lines   inf\n" ..
  "tab here   -inf\n" ..
  "ctl x       1.5\n", "text: control characters become spaces, NaN is 'nan' (never '-nan')")
t.is(report.render(odd, { columns = oc, format = "markdown" }),
  "| s            |    n |\n" ..
  "| ------------ | ---: |\n" ..
  "| a\\|b         |  nan |\n" ..
  "| two<br>lines |  inf |\n" ..
  "| tab here     | -inf |\n" ..
  "| ctl x        |  1.5 |\n", "markdown: pipes escaped, newline as <br>")
t.is(report.render(odd, { columns = oc, format = "csv" }),
  "s,n\na|b,nan\n\"two\nlines\",inf\ntab\there,-inf\nctl\1x,1.5\n", "csv: newline quoted, NaN spelled 'nan'")
t.is(report.render(odd, { columns = { { key = "s" }, { key = "n" } }, format = "json" }),
  "[\n {\"s\":\"a|b\",\"n\":null},\n {\"s\":\"two\\nlines\",\"n\":null},\n" ..
  " {\"s\":\"tab\\there\",\"n\":null},\n {\"s\":\"ctl\\u0001x\",\"n\":1.5}\n]\n",
  "json: control characters escaped, non-finite numbers null")
t.is(report.render({ { n = 0 / 0 }, { n = 2 } }), "  n\n---\nnan\n  2\n", "default format: nan")

-- Width is what a terminal shows: CJK characters take two columns,
-- combining marks none; bytes that are not UTF-8 count one each.
local wide = { { a = "中文", b = 1 }, { a = "e\204\129", b = 2 }, { a = "x\255y", b = 3 } }
t.is(report.render(wide),
  "a     b\n" ..
  "----  -\n" ..
  "中文  1\n" ..
  "e\204\129     2\n" ..
  "x\255y   3\n", "text: display width")

-- JSON numbers: the shortest form that reads back as the same double.
t.is(report.json { 0.1, 1 / 3, 2 ^ 53, 2 ^ 63, 1e300, 1e-7, -0.0 },
  "[0.1,0.3333333333333333,9007199254740992,9.223372036854776e+18,1e+300,1e-07,0]",
  "json: round-trip numbers")
t.is(report.json("bad\255utf8"), "\"bad\239\191\189utf8\"", "json: invalid UTF-8 becomes U+FFFD")
t.is(report.json { a = { 0 / 0, 1 / 0 } }, "{\"a\":[null,null]}", "json: nested non-finite numbers are null")

-- SVG text is XML 1.0 text (issue 19.12): an ESC, a NUL or a ^A in a title,
-- an axis or a series name become U+FFFD; tab and newline stay.  Without
-- it the chart was not well-formed ("PCDATA invalid Char value 27").
local plot = require("gpuplan.svg").plot { title = "a\27[31mb\0c\td", x = { label = "x\1" },
                                           y = { label = "y" } }
plot:line({ { 1, 1 }, { 2, 2 } }, { name = "s\27x" })
local chart = plot:render()
t.ok(not chart:find("[%z\1-\8\11\12\14-\31]"), "svg: no C0 control but tab, newline, return")
t.ok(chart:find("a\239\191\189[31mb\239\191\189c\td", 1, true) ~= nil,
  "svg: the title's ESC and NUL shown as U+FFFD, its tab kept")
-- A text table's left-aligned last column draws its rule under its cells
-- of at most 80 columns, not under one long cell (infer's "assumed" row
-- drew ~500 dashes): here the 11-character "short value" and not the
-- 200-character cell.
do
  local long = string.rep("x", 200)
  local txt = report.render({ { k = "a", v = "short value" }, { k = "b", v = long } },
    { columns = { { key = "k", label = "quantity" }, { key = "v", label = "value" } } })
  local rule = txt:match("\n(%-[%- ]*)\n")
  t.is(rule, string.rep("-", 8) .. "  " .. string.rep("-", 11), "text: the last rule spans the cells that fit")
  t.ok(txt:find(long, 1, true) ~= nil, "text: the long cell printed whole")
  local md = report.render({ { k = "b", v = long } },
    { format = "markdown", columns = { { key = "k", label = "quantity" }, { key = "v", label = "value" } } })
  t.ok(md:find(string.rep("-", 200), 1, true) ~= nil, "markdown: the rule still spans every cell")
end
t.done_testing()
