-- parallel.recompute_layers in a validation case: Megatron's block
-- recompute (recompute_method block, recompute_num_layers N), the same
-- as gp.train's recompute_layers.  The shipped Megatron-Bridge H100
-- Llama 3 8B row runs its config's recompute_num_layers = 5.
-- Run with ./gpuplan run tests/lua/case_recompute_layers.t.
local t = require "tap"
local gp = require "gpuplan"
local validate = require "gpuplan.validate"

t.plan(5)

local cases = validate.read("validation/cases.json")
local base
for _, c in ipairs(cases) do
  if c.id == "mbridge2511-h100-llama3-8b" then base = c end
end
t.ok(base and base.parallel.recompute == "full" and base.parallel.recompute_layers == 5,
     "the H100 8B row states its config's block recompute of 5 layers")

local function with_par(over, drop)
  local c = {}
  for k, v in pairs(base) do c[k] = v end
  c.parallel = t.with(base.parallel, over)
  if drop then c.parallel[drop] = nil end
  return c
end
local cat = gp.catalog()
local r5 = validate.predict(base, cat)
local r32 = validate.predict(with_par { recompute_layers = 32 }, cat)
local rn = validate.predict(with_par({ recompute = "none" }, "recompute_layers"), cat)
-- 5 of 32 layers re-run their forward: slower than none, faster than
-- all 32 (recompute full without a count).
t.ok(r5.predicted < rn.predicted, "5 recomputed layers: fewer tokens/s than none")
t.ok(r5.predicted > r32.predicted, "5 recomputed layers: more tokens/s than all 32")
-- The forward is about a third of a layer's forward + backward, so 5 of 32
-- layers recomputed cost about 5/32 x 1/3 = 5% of the layers' time: the
-- ratio none / 5 lies within 1.02..1.08 (the rest of the step -- ends,
-- gathers, optimizer -- does not recompute).
local ratio = rn.predicted / r5.predicted
t.ok(ratio > 1.02 and ratio < 1.08, string.format("none / 5 layers = %.3f, about 1 + 5/96", ratio))
local bad = validate.predict(with_par { recompute = "none", recompute_layers = 5 }, cat)
t.like(bad.reason, "recompute_layers applies to recompute = full (got recompute = none)",
       "recompute_layers without full recompute is refused", true)
