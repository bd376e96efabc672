-- A user scripting gpuplan in Lua (round 9): a card of their own given as
-- a table where an id goes.  Run with ./gpuplan run tests/lua/luawalk9.t.
local t = require "tap"
local gp = require "gpuplan"

local check = t.raises_here

-- 1. A card with no compute peak (peak = {}): the catalog refuses such a
-- file ("device has no compute peak"), but a script's table passed the
-- schema and each command said something else -- train "bf16 training
-- needs bf16 tensor cores; gpu x has none (fp16 instead)" and, with
-- precision fp16, "no peak in fp16 (give --precision bf16)", each pointing
-- at the other; infer "device has no compute peak", naming neither the card
-- nor the field; roofline returned a table.  Now every call refuses the
-- entry at the script's line, naming the field.
do
  local function card()
    return { id = "mine", memory = "80GiB", mem_bw = "3.35TB/s", arch = "hopper", peak = {},
             scaleup = { fabric = "nvlink4", domain = 8 } }
  end
  local want = "gpu 'mine': field 'peak': no compute peak"
  check(function() local _ = gp.train { model = "llama3-8b", gpu = card(), gpus = 8 } end, want, "gp.train: a card with no peak is refused naming peak")
  check(function() local _ = gp.train { model = "llama3-8b", gpu = card(), gpus = 8, precision = "fp16" } end, want, "gp.train precision fp16: the same refusal")
  check(function() local _ = gp.infer { model = "llama3-8b", gpu = card() } end, want, "gp.infer: names the card and the field")
  check(function() local _ = gp.memory { model = "llama3-8b", gpu = card() } end, want, "gp.memory")
  check(function() local _ = gp.roofline { gpu = card() } end, want, "gp.roofline: refused, not a roofline without roofs")
  -- a card with one peak still prices (the schema's other checks unchanged)
  local g = card()
  g.peak = { bf16 = "989TFLOPS" }
  local ok, r = pcall(gp.infer, { model = "llama3-8b", gpu = g })
  t.ok(ok and r.itl_s > 0, "a card with a bf16 peak prices")
  if not ok then t.diag(r) end
end

-- 2. A ranking policy's budget given as text that is no amount
-- (gp.policy.fastest{budget = "abc"}) made a policy: its form was not
-- checked, though a numeric budget's was, and gp.sweep refused it later
-- at the sweep's line.  Now refused where the policy is made, as
-- gp.policy.monthly's budget is; a currency stays the sweep's catalog's
-- to convert (one the built-in catalog lacks is not refused here).
do
  check(function() local _ = gp.policy.fastest { budget = "abc" } end, "policy.fastest: budget 'abc': expected an amount like $50k", "policy.fastest: a budget that is no amount, at its line")
  check(function() local _ = gp.policy.cheapest { budget = "$-5k" } end, "policy.cheapest: budget '$-5k': must be a positive amount", "policy.cheapest: a negative budget text")
  local ok, p = pcall(gp.policy.fastest, { budget = "50kXYZ" })
  t.ok(ok and p.budget == "50kXYZ", "a currency of a user's catalog is left to the sweep")
  ok, p = pcall(gp.policy.fewest_gpus, { budget = "$50k" })
  t.ok(ok and p.key == "gpus", "a well-formed budget makes the policy")
end

t.done_testing()
