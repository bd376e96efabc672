-- gpuplan.sweep.money, the parser of --budget and policy.monthly's budget.
-- Before: "1000EUR" was refused as "expected an amount like $50k" (the
-- number pattern ate the E of EUR as an exponent), "1.2M$" -- the form
-- the parser's own comment names -- was refused, "1000XYZ" failed later
-- as "no exchange rate for currency XYZ" without naming the budget, and
-- "0" read "expected an amount like $50k".
-- Run with ./gpuplan run tests/lua/money_parse.t.
local t = require "tap"
local money = require("gpuplan.sweep").money

t.plan(14)

local function amount(v)
  local ok, m = pcall(money, v, "budget", "USD")
  if not ok then return m end
  return m.amount, m.currency
end
local function err(v)
  local ok, m = pcall(money, v, "budget", "USD")
  return not ok and tostring(m) or "accepted"
end

-- 1.2 x 1e6 (M) in USD ($ after the amount)
local a, c = amount("1.2M$")
t.ok(a == 1.2e6 and c == "USD", "1.2M$ is 1,200,000 USD")
-- 5e+3 = 5000: an exponent with digits after it is still one
a, c = amount("5e+3USD")
t.ok(a == 5000 and c == "USD", "5e+3USD is 5000 USD")
a, c = amount("100k CNY")
t.ok(a == 1e5 and c == "CNY", "100k CNY is 100,000 CNY")
a, c = amount("50000")
t.ok(a == 5e4 and c == "USD", "a bare amount is in the default currency")
t.like(err("1000EUR"), "budget '1000EUR': no exchange rate for EUR in the catalog %(CNY, USD%)",
       "EUR is a currency the catalog has no rate for, not a malformed number")
t.like(err("1000XYZ"), "budget '1000XYZ': no exchange rate for XYZ", "the budget is named")
t.like(err("0"), "budget '0': must be a positive amount", "0 is an amount, and refused as 0")
t.like(err("$0"), "must be a positive amount", "$0 likewise")
t.like(err("1e"), "expected an amount like", "1e: no digits after e, and 'e' is no currency")
t.like(err("$5CNY"), "expected an amount like", "two currencies")
t.like(err("abc"), "expected an amount like", "no number")

-- The rates are the job's catalog's: a currency that a catalog given as
-- cat = ... adds is converted, where it was refused as having no rate
-- (the check read the built-in catalog).  EUR at 0.9 a dollar: 900 EUR is
-- 1000 USD (cat:convert), exact.
do
  local gp = require "gpuplan"
  local s = t.scratch()
  s.put("eur.lua", 'currency { id = "EUR", per_usd = 0.9, date = "2026-01-01", '
    .. 'source = "test rate" }\n')
  local cat = gp.catalog { dirs = { require("gpuplan.config").root .. "/catalog", s.dir } }
  local ok, m = pcall(money, "900EUR", "budget", "USD", cat)
  t.ok(ok and m.amount == 900 and m.currency == "EUR", "900EUR with a catalog that has EUR: "
    .. (ok and "taken" or tostring(m)))
  t.near(cat:convert(m, "USD"), 1000, 1e-12, "converted at the catalog's rate: 900 / 0.9 USD")
  -- gp.sweep with that catalog and a EUR budget runs (it was refused).
  local okw, r = pcall(gp.sweep, { model = "llama2-7b", gpu = { "h100-sxm" }, gpus = "8",
    tokens = 1e9, budget = "1000000EUR", cat = cat })
  t.ok(okw and type(r.results) == "table", "gp.sweep{cat = ..., budget in EUR} runs: "
    .. (okw and "ran" or tostring(r)))
  s.remove()
end
