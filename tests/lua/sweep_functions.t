-- gp.sweep's where and policy functions read the candidate the search
-- returns.  One that overwrote a figure (c.gpus = 0) changed the row the
-- search printed -- gpus 0 beside a layout of 8 -- in silence; such a
-- write is refused, naming the field, and a field of the function's own
-- (gp.policy.monthly's per_month) is still added.  gp.policy.monthly's
-- budget is checked when the policy is made, not at each layout.
-- Run with ./gpuplan run tests/lua/sweep_functions.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(13)

local job = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, tokens = 1e9, top = 3 }

t.raises(function()
  gp.sweep(t.with(job, { policy = function(c) c.gpus = 0; return 1 end }))
end, "sweep: the policy function changed the candidate's gpus (8 to 0)", "a policy that writes gpus", true)
t.raises(function()
  gp.sweep(t.with(job, { where = function(c) c.tokens_per_s = -1; return true end }))
end, "sweep: the where function changed the candidate's tokens_per_s", "a where that writes tokens_per_s",
  true)

-- A field of its own is the function's to add, and comes back.
local r = gp.sweep(t.with(job, { policy = function(c) c.mine = c.gpus * 2; return 1 / c.tokens_per_s end }))
t.is(r.results[1].mine, 16, "a field of the policy's own: 8 GPUs x 2")
t.is(r.results[1].gpus, 8, "the search's gpus as it found them")
-- monthly adds per_month = price x gpus x 24 x 30 ($1/h: 8 x 720 = 5760)
local m = gp.sweep(t.with(job, { price = 1, policy = gp.policy.monthly { budget = "$10k" } }))
t.near(m.results[1].per_month, 5760, 1e-12, "monthly's per_month: 1 x 8 x 24 x 30")

t.raises(function() gp.policy.monthly { budget = -1 } end,
  "policy.monthly: budget must be a positive amount", "a negative monthly budget, when made", true)
t.raises(function() gp.policy.monthly { budget = 0 / 0 } end,
  "policy.monthly: budget must be a positive amount", "a NaN monthly budget, when made", true)
t.raises(function() gp.policy.monthly("$5k") end,
  "budget is required (got string '$5k', not a table)", "a string for the table", true)

-- gp.policy.monthly prices with the job's catalog (gp.sweep's cat), not
-- the built-in one.  A user catalog adds EUR at 0.9 a dollar and a card,
-- t-gpu, offered at 2 EUR/h; the buyer pays in EUR.  8 GPUs a month:
-- 2 x 8 x 24 x 30 = 11,520 EUR.  "12kEUR" was refused when made (no EUR
-- rate in the built-in catalog), and a USD budget raised "no exchange
-- rate for currency EUR" at the first layout.
do
  local s = t.scratch()
  s.put("user.lua", 'currency { id = "EUR", per_usd = 0.9, date = "2026-01-01", '
    .. 'source = "test rate" }\n'
    .. 'gpu { id = "t-gpu", name = "x", vendor = "T", arch = "hopper", memory = GiB(80), '
    .. 'mem_bw = "3TB/s", peak = { bf16 = "900TFLOPS" }, scaleup = { fabric = "nvlink4", '
    .. 'domain = 8 }, source = "t", achievable = { gemm = { bf16 = 0.7 }, hbm = 0.8, '
    .. 'reason = "t", source = "t" } }\n'
    .. 'price { id = "t-gpu/t/global", gpu = "t-gpu", provider = "T", provider_kind = '
    .. '"specialty", region = "global", price = "2EUR/h", date = "2026-06", source = "t" }\n')
  local cat = gp.catalog { dirs = { require("gpuplan.config").root .. "/catalog", s.dir } }
  local ujob = { model = "llama3-8b", gpu = "t-gpu", gpus = 8, tokens = 1e9, top = 3,
                 cat = cat, currency = "EUR" }
  local function monthly(b)
    local ok, r = pcall(gp.sweep, t.with(ujob, { policy = gp.policy.monthly { budget = b } }))
    return ok and r or { results = {}, err = tostring(r) }
  end
  local eur = monthly("12kEUR")
  t.near(eur.results[1] and eur.results[1].per_month or 0 / 0, 11520, 1e-9,
    "a EUR budget of the user's catalog: 2 EUR x 8 x 720 = 11,520 EUR a month "
      .. (eur.err or ""))
  t.is(eur.results[1] and eur.results[1].currency, "EUR", "... in the buyer's EUR")
  -- $13k at 0.9 is 11,700 EUR, over 11,520: kept; $12k is 10,800: dropped.
  -- The rate is the user catalog's (the built-in one has none for EUR).
  local r13, r12 = monthly("$13k"), monthly("$12k")
  t.ok(#r13.results > 0, "$13k = 11,700 EUR holds 11,520 EUR a month " .. (r13.err or ""))
  t.is(#r12.results, 0, "$12k = 10,800 EUR does not " .. (r12.err or ""))
  -- A currency neither catalog has is refused, naming the budget.
  t.like(monthly("5kXYZ").err, "policy.monthly: budget '5kXYZ': no exchange rate for XYZ",
    "an unknown currency, against the job's catalog")
  s.remove()
end
