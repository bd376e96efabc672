-- gp.prices and cat:convert misused from a script: one message naming the
-- function and the argument, never a line of gpuplan's own files.  Before:
-- cheapest(cat, gpu, 5) "prices.lua:61: attempt to index a number value";
-- per_hour(cat, nil, gpu, buyer) without its default function "prices.lua:198:
-- attempt to call a nil value"; rate(cat, "XYZ") "prices.lua:265: attempt to
-- index a nil value"; cat:convert(nil) "catalog.lua:256: ..."; and
-- cat:convert{amount = NaN} returned -nan.
-- Run with ./gpuplan run tests/lua/prices_api.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(8)
local cat = gp.catalog()
local buyer = gp.prices.buyer(cat, {}, "test")

local function refused(fn, pat, name)
  local ok, e = pcall(fn)
  t.ok(not ok and tostring(e):find(pat, 1, true) ~= nil and not tostring(e):find("%.lua:%d+: attempt"),
       name .. " (" .. tostring(e) .. ")")
end
refused(function() return gp.prices.cheapest(cat, "h100-sxm", 5) end,
  "prices.cheapest: opts must be a table", "cheapest: a number for opts")
refused(function() return gp.prices.default_price(cat, "h100-sxm", buyer, 5) end,
  "prices.default_price: default must be a function(text) (got 5)", "default_price: a number for default")
refused(function() return gp.prices.rate(cat, "XYZ", "USD") end,
  "prices.rate: no exchange rate in the catalog for", "rate: an unknown currency")
refused(function() return cat:convert(nil, "USD") end,
  "convert: price must be {amount = a number", "convert: nil")
refused(function() return cat:convert({ amount = 0 / 0, currency = "USD" }, "CNY") end,
  "convert: price.amount must be a finite number (got NaN)", "convert: a NaN amount")

-- No default function: the price is the buyer's offer, said to nobody.
-- The same amount as with one (gp.prices.cheapest's, in USD).
local said = {}
local with = gp.prices.per_hour(cat, nil, "h100-sxm", buyer, function(s) said[#said + 1] = s end)
local without = gp.prices.per_hour(cat, nil, "h100-sxm", buyer)
t.is(without, with, "per_hour without a default function: the same offer")
t.ok(#said > 0, "with one: the assumption is said")
t.is(without, gp.prices.cheapest(cat, "h100-sxm", { currency = "USD", markets = buyer.markets }).amount,
  "the cheapest offer in the buyer's markets")
