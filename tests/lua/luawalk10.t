-- A user scripting gpuplan in Lua (round 10): extending the catalog and
-- reading results.  Run with ./gpuplan run tests/lua/luawalk10.t.
local t = require "tap"
local gp = require "gpuplan"

-- 1. currency { id = "USD", per_usd = 2 } was accepted and read by
-- nothing: every conversion takes 1 for USD (rates are units per US
-- dollar), so the user's figure was silently ignored and the catalog's
-- currencies read "CNY, USD, USD".  Now refused at the entry's file:line.
do
  local s = t.scratch()
  s.put("usd.lua", 'currency { id = "USD", per_usd = 2, date = "2026-11-02", source = "x" }\n')
  t.raises(function() return gp.catalog { dirs = { "catalog", s.dir } } end,
    "usd.lua:1: currency 'USD': field 'id': USD needs no currency entry", "a USD entry is refused", true)
  -- another currency still loads and converts: 2 USD at 0.92 EUR/USD = 1.84 EUR
  s.clean()
  s.put("eur.lua", 'currency { id = "EUR", per_usd = 0.92, date = "2026-11-02", source = "x" }\n')
  local cat = gp.catalog { dirs = { "catalog", s.dir } }
  t.near(cat:convert({ amount = 2, currency = "USD" }, "EUR"), 1.84, 1e-12, "EUR converts")
  s.remove()
end

t.done_testing()
