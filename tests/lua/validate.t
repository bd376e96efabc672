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
  "wrong_kind.json: case 'wrong-kind': unknown kind 'training' (train, memory, infer, collective)",
  "a kind outside the four named", true)

-- An encoder-decoder case: the shipped T0 3B case gives no layer fields,
-- so it is not predicted and the reason names every missing field; the
-- same case with the T5 v1.1 XL shape (encoder_layers given) is predicted.
local cat = require("gpuplan").catalog()
local t0
for _, c in ipairs(v.read("validation/cases.json")) do
  if c.id == "peft-mem-t0-3b-lora-ds-offload" then t0 = c end
end
row = v.predict(t0, cat)
t.is(row.reason, "model layers, hidden, heads, vocab, ffn_hidden, encoder_layers not given: "
  .. "architecture unknown (the case states params_b only; an encoder-decoder needs both "
  .. "stacks' layer counts)", "T0 3B: the missing fields named")
for k, x in pairs { layers = 24, encoder_layers = 24, hidden = 2048, heads = 32, head_dim = 64,
                    ffn_hidden = 5120, ffn_gated = true, vocab = 32128 } do
  t0.model[k] = x
end
t0.workload.input_len, t0.workload.output_len = 64, 4
row = v.predict(t0, cat)
t.ok(row.predicted and row.predicted > 0, "T0 3B with its shape: predicted")
t.done_testing()
