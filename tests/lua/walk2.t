-- A script's walk over the Lua API (the second hardening walk): every
-- result a plain table cjson serialises, and a key the API does not take
-- refused at the script's line.  Run with ./gpuplan run tests/lua/walk2.t.
local t = require "tap"
local gp = require "gpuplan"
local cjson = require "cjson"

local check = t.raises_here

-- 1. A price table's misspelt key ({amount = 1, currncy = "EUR"}) priced
-- the amount in the buyer's currency in silence, where every other table
-- the API takes refuses a key it does not know.
check(function() gp.train { model = "llama3-8b", gpu = "h100-sxm", gpus = 8,
                            price = { amount = 1, currncy = "EUR" } } end,
      "train: price: unknown key 'currncy' (did you mean 'currency'?)",
      "gp.train: a price table's misspelt key is refused")
check(function() gp.infer { model = "llama3-8b", gpu = "h100-sxm", price = { amount = 1, foo = 2 } } end,
      "infer: price: unknown key 'foo' (amount, currency)",
      "gp.infer: a price table's unknown key is refused, naming the keys it takes")
-- a quote (gp.prices.cheapest) is a price as it is: its other fields
-- (id, entry, market, ...) are the quote's
do
  local q = gp.prices.cheapest(gp.catalog(), "h100-sxm")
  local ok, r = pcall(gp.train, { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, price = q })
  t.ok(ok, "gp.train takes a gp.prices.cheapest quote as its price")
  if ok then t.is(r.price, q.amount, "the quote's amount is the price") end
  ok = pcall(gp.train, { model = "llama3-8b", gpu = "h100-sxm", gpus = 8,
                         price = { amount = 14, currency = "CNY" } })
  t.ok(ok, "gp.train takes {amount, currency}")
end

-- 2. Every result of the docs' calls is a plain table: cjson encodes it
-- (no function, userdata or cycle; NaN would fail cjson's encode).
for _, c in ipairs {
  { "memory", gp.memory, { model = "llama3-8b", gpu = "h100-sxm" } },
  { "train", gp.train, { model = "llama3-8b", gpu = "h100-sxm", gpus = 8 } },
  { "sweep", gp.sweep, { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, top = 3 } },
  { "rl", gp.rl, { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, zero = 3 } },
  { "infer", gp.infer, { model = "llama3-8b", gpu = "h100-sxm" } },
  { "comm", gp.comm, { op = "all_reduce", bytes = 2 ^ 30, gpus = 8, system = "dgx-h100" } },
} do
  local r = c[2](c[3])
  local ok, s = pcall(cjson.encode, r)
  t.ok(ok and type(s) == "string", "gp." .. c[1] .. ": cjson encodes the result")
end

t.done_testing()
