-- The validation harness: reading cases, percentiles, summaries.
local t = require "tap"
local v = require "gpuplan.validate"

local cases = v.read("tests/fixtures/validation/mini.json")
t.is(#cases, 2, "reads a case array")
t.is(cases[1].parallel.tp, 1, "fields survive")
t.is(cases[1].notes, nil, "JSON null becomes nil")
t.raises(function() v.read("tests/fixtures/validation/bad_case.json") end,
  "bad_case.json: case 'x': 'measured' needs a metric and a numeric value", "incomplete case named", true)
t.raises(function() v.read("tests/fixtures/validation/bad_json.json") end,
  "bad_json.json: invalid JSON", "bad JSON named", true)
t.raises(function() v.read("tests/fixtures/validation/none.json") end,
  "cannot open case file", "missing file named", true)

-- Nearest-rank percentile: for {1..10}, p50 is the 5th value, p90 the 9th.
local s = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 }
t.is(v.percentile(s, 0.5), 5, "median, nearest rank")
t.is(v.percentile(s, 0.9), 9, "p90, nearest rank")
t.is(v.percentile({}, 0.5), nil, "empty list has no percentile")

-- Summary: errors +10% and -30% -> |err| sorted {0.1, 0.3}: median 0.1
-- (rank ceil(0.5*2) = 1), p90 0.3 (rank ceil(0.9*2) = 2).
local rows = {
  { kind = "infer", error = 0.1 }, { kind = "infer", error = -0.3 },
  { kind = "infer", reason = "no inference model yet" },
}
local sum = v.summarise(rows)
t.is(sum[1].cases, 3, "summary counts every case")
t.is(sum[1].predicted, 2, "summary counts predicted ones")
t.near(sum[1].median, 0.1, 1e-12, "median |error|")
t.near(sum[1].p90, 0.3, 1e-12, "p90 |error|")

-- A predictor's refusal and a missing predictor both come back as reasons.
local row = v.predict({ id = "c", kind = "train", measured = { metric = "mfu", value = 0.5 } }, nil)
t.ok(row.predicted == nil and row.reason ~= nil, "unpredicted case has a reason")

-- Numbers JSON does not have, and shapes that are not a case list.
local V = "tests/fixtures/validation/"
t.raises(function() v.read(V .. "nan_value.json") end,
  "nan_value.json: invalid JSON", "NaN is not JSON", true)
t.raises(function() v.read(V .. "inf_value.json") end,
  "inf_value.json: case 'inf-value': measured value must be a positive finite number",
  "1e999 overflows to infinity: refused", true)
t.raises(function() v.read(V .. "object.json") end,
  "object.json: expected a JSON array of cases", "an empty object is not an empty array", true)
t.is(#v.read(V .. "empty.json"), 0, "an empty array is no cases")
t.raises(function() v.read(V .. "duplicate.json") end,
  "duplicate.json: case 'twice' (case 2) repeats the id of case 1", "duplicate id named", true)
t.raises(function() v.read("tests/fixtures/validation") end,
  "cannot read case file 'tests/fixtures/validation'", "a directory named", true)
t.raises(function() v.read(V .. "wrong_kind.json") end,
  "wrong_kind.json: case 'wrong-kind': unknown kind 'training' (train, memory, infer, collective, rl)",
  "a kind outside the five named", true)
t.done_testing()
