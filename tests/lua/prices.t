-- Money: the CNY rate, the China-market prices and how a price is chosen
-- and labelled (gpuplan.prices).  Built-in catalog only, so a user catalog
-- cannot change the outcome.
local t = require "tap"
local gp = require "gpuplan"
local prices = require "gpuplan.prices"

local cat = gp.catalog { dirs = { "catalog" } }

-- The rate is a central bank's: PBOC central parity, dated.
local cny = cat.currencies.CNY
t.is(cny.per_usd, 7.0197, "CNY per USD: PBOC central parity 7.0197")
t.is(cny.date, "2026-01-08", "dated 2026-01-08")
t.like(cny.source, "central parity", "source: the central parity", true)
t.like(cny.source, "China Foreign Exchange Trade System", "published by CFETS", true)

-- H20 has a dated price, in the China market: AutoDL 6.98 CNY/h (2026-03).
local h20 = prices.cheapest(cat, "h20", { currency = "CNY" })
t.ok(h20 ~= nil, "h20 has a price")
t.is(h20.amount, 6.98, "h20 6.98 CNY per GPU-hour")
t.is(h20.market, "cn", "from the China market")
t.is(h20.converted, false, "shown as quoted")
t.is(prices.origin(h20), "cn", "origin: cn")
t.is(h20.entry.date, "2026-03", "dated 2026-03")

-- The same price in USD is converted and says so: 6.98 / 7.0197 = 0.99435.
-- Two divisions of doubles: 1e-12 relative.
local h20usd = prices.cheapest(cat, "h20", { currency = "USD" })
t.near(h20usd.amount, 6.98 / 7.0197, 1e-12, "h20 in USD = 6.98 / 7.0197")
t.is(h20usd.converted, true, "converted")
t.is(prices.origin(h20usd), "cn, converted from 6.98CNY/h", "origin names the quoted price")
t.is(prices.rate(cat, "CNY", "USD"), "7.0197 CNY/USD, 2026-01-08", "the rate it used")

-- A100 80GB in CNY: the US long-tail $0.95/h x 7.0197 = 6.6687 CNY is
-- below AutoDL's 6.68 CNY: the cheapest is a US price, converted -- and
-- labelled as such, never passed off as a CNY price.
local a100 = prices.cheapest(cat, "a100-sxm-80gb", { currency = "CNY" })
t.near(a100.amount, 0.95 * 7.0197, 1e-12, "a100: $0.95 x 7.0197 CNY")
t.is(a100.market, "us", "from the US market")
t.is(prices.origin(a100), "us, converted from $0.95/h", "and says it was converted")
-- Kept to the China market: AutoDL's 6.68 CNY.
local a100cn = prices.cheapest(cat, "a100-sxm-80gb", { currency = "CNY", market = "cn" })
t.is(a100cn.amount, 6.68, "a100 in market cn: 6.68 CNY (AutoDL)")
t.is(a100cn.id, "a100-sxm-80gb/autodl/cn", "the AutoDL entry")
t.is(prices.cheapest(cat, "h100-sxm", { market = "cn" }), nil, "no China-market H100 price")

-- Every China-market entry is priced in CNY and dated; the seed guides'
-- CNY ranges are their own entries (8-20 CNY for A100 80GB, 20-40 H800).
local bad = {}
for _, id in ipairs(cat:ids("prices")) do
  local p = cat.prices[id]
  if p.region == "cn" and (p.price.currency ~= "CNY" or p.date == "") then bad[#bad + 1] = id end
end
t.is(table.concat(bad, ","), "", "every cn price is in CNY with a date")
local g = cat.prices["a100-sxm-80gb/guide/cn"]
t.is(g.range[1].amount .. "-" .. g.range[2].amount, "8-20", "guide A100 range 8-20 CNY")
t.is(g.provider_kind, "guide", "a rule of thumb, not an offer")
local h800 = cat.prices["h800-sxm/guide/cn"]
t.is(h800.range[1].amount .. "-" .. h800.range[2].amount, "20-40", "guide H800 range 20-40 CNY")
-- A dated offer beats a guide's rule of thumb even when the guide is lower:
-- H800 AutoDL 8.88 CNY is the price, not the guide's 30 (nor its 20 low end).
t.is(prices.cheapest(cat, "h800-sxm", { currency = "CNY" }).id, "h800-sxm/autodl/cn",
     "h800: the dated AutoDL offer")
-- A guide price is used only when there is nothing else, and flagged.
local only_guide = { settings = cat.settings, currencies = cat.currencies,
  prices = { x = cat.prices["h800-sxm/guide/cn"] }, convert = cat.convert,
  ids = function() return { "x" } end }
local q = prices.cheapest(only_guide, "h800-sxm", { currency = "CNY" })
t.ok(q and q.guide, "only a guide price: used, flagged guide")

t.raises(function() prices.quote(cat, "nope") end, "unknown price 'nope'", "unknown price id", true)
-- The buyer (one rule for every command and the guide): the currency is
-- the caller's, else GPUPLAN_CURRENCY (empty under make test), else the
-- currency a price is given in, else the settings' (USD); the markets the
-- caller's, else cn for a CNY buyer, us,global,overseas for any other.
local function set(b) local k = {} for m in pairs(b.markets) do k[#k + 1] = m end
  table.sort(k) return table.concat(k, ",") end
local b = prices.buyer(cat, {}, "t")
t.is(b.currency .. " " .. set(b), "USD global,overseas,us", "default: a USD buyer, open markets")
t.is(b.said, "a USD buyer", "and says why")
b = prices.buyer(cat, { currency = "CNY" }, "t")
t.is(b.currency .. " " .. set(b), "CNY cn", "a CNY buyer rents in cn")
b = prices.buyer(cat, { market = "us, global" }, "t")
t.is(set(b) .. " " .. tostring(b.said), "global,us nil", "markets given: those, nothing said")
t.is(prices.buyer(cat, { price = "6.98CNY/h" }, "t").currency, "CNY",
     "a price in CNY makes a CNY buyer")
t.is(prices.buyer(cat, { price = "h800-sxm/autodl/cn" }, "t").currency, "CNY",
     "so does a catalog price id quoted in CNY")
t.raises(function() prices.buyer(cat, { currency = "XYZ" }, "t") end,
  "t: currency 'XYZ': no exchange rate in the catalog (CNY, USD)", "unknown currency", true)
-- named as given, not as upper-cased to look it up
t.raises(function() prices.buyer(cat, { currency = "xyz" }, "t") end,
  "t: currency 'xyz': no exchange rate in the catalog (CNY, USD)", "unknown currency, as given", true)
t.raises(function() prices.buyer(cat, { market = "mars" }, "t") end,
  "t: market 'mars': no price in the catalog is from it (markets: cn, global, overseas, us)",
  "unknown market", true)
-- H800 is offered in China only: a USD buyer gets no offer, and why.
local q8, why8 = prices.offer(cat, "h800-sxm", prices.buyer(cat, {}, "t"))
t.ok(q8 == nil, "h800: no offer for a USD buyer")
t.is(why8, "no offer for h800-sxm in us,global,overseas (it is offered in cn: --market cn or --price)",
     "and where it is offered")

-- gp.infer takes the buyer's price when none is given.  Llama 3 8B on one
-- H100, batch 8: h100-sxm's cheapest open-market offer is $1.80/h
-- (aiapiplaybook, global), so cost per 1M tokens = 1.80 x 1 GPU / 3600 /
-- (tokens/s) x 1e6 (engine/infer.c); the same with currency = "CNY" has no
-- China-market H100 offer, and h20 in CNY is AutoDL's 6.98.
local r = gp.infer { model = "llama3-8b", gpu = "h100-sxm", batch = 8, cat = cat }
t.near(r.cost_per_mtok, 1.80 / 3600 / r.tokens_per_s * 1e6, 1e-12, "infer: $1.80/h by default")
t.is(r.currency, "USD", "in USD")
local rc = gp.infer { model = "llama3-8b", gpu = "h100-sxm", batch = 8, cat = cat,
                      currency = "CNY" }
t.ok(rc.cost_per_mtok == nil, "a CNY buyer: no China-market H100 offer, no cost")
t.like(table.concat(rc.defaults, ", "), "price=none: no offer for h100-sxm in cn", "said", true)
local r20 = gp.infer { model = "llama3-8b", gpu = "h20", batch = 8, cat = cat, currency = "CNY" }
t.near(r20.cost_per_mtok, 6.98 / 3600 / r20.tokens_per_s * 1e6, 1e-12, "h20 in CNY: 6.98/h")
-- A price in another currency is converted to the buyer's: $2/h to CNY at
-- the PBOC's 7.0197.
local rx = gp.infer { model = "llama3-8b", gpu = "h20", batch = 8, cat = cat, currency = "CNY",
                      price = "$2/h" }
t.near(rx.cost_per_mtok, 2 * 7.0197 / 3600 / rx.tokens_per_s * 1e6, 1e-12,
       "infer: a USD price converted for a CNY buyer")
-- prices.per_hour: every way a caller states a price, one reader for
-- gp.train, gp.sweep, gp.rl and gp.infer.  A USD buyer; exact values (a
-- number is returned as given, a conversion is one product).
local usd = prices.buyer(cat, { currency = "USD", market = "us" }, "t")
local function ph(p) return prices.per_hour(cat, p, "h100-sxm", usd, function() end) end
t.is(ph(2.49), 2.49, "a number: in the buyer's currency")
t.is(ph("2.49"), 2.49, "a string that is a number (a command line's): the same")
t.is(ph("$2.49/h"), 2.49, "'$2.49/h'")
t.is(ph({ amount = 2.49 }), 2.49, "{amount}: the buyer's currency")
t.near(ph("7.0197CNY/h"), 1, 1e-12, "7.0197 CNY/h at 7.0197 CNY/USD: 1 USD")
t.raises(function() ph(-1) end, "price must be a non-negative number (got -1)", "negative", true)
t.raises(function() ph("-1") end, "price must be a non-negative number (got -1)",
  "a negative number as a string: the same message", true)
t.raises(function() ph("12XYZ/h") end, "price: unknown currency 'XYZ' (the catalog has CNY, USD)",
  "an unknown currency", true)
t.raises(function() ph("abc") end, "price 'abc': bad price 'abc'", "not a price", true)
t.raises(function() ph(true) end, "price must be a number, a string like '$2.49/h' or a price id "
  .. "(got boolean)", "another type", true)
-- gp.train and gp.infer take the string number as the number.
local tj = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, cat = cat, tokens = 1e12 }
t.is(gp.train(t.with(tj, { price = "2.49" })).cost, gp.train(t.with(tj, { price = 2.49 })).cost,
  "gp.train: price '2.49' is 2.49")
t.is(gp.infer { model = "llama3-8b", gpu = "h100-sxm", batch = 8, cat = cat, price = "2.49" }
  .cost_per_mtok, gp.infer { model = "llama3-8b", gpu = "h100-sxm", batch = 8, cat = cat,
  price = 2.49 }.cost_per_mtok, "gp.infer: price '2.49' is 2.49")
t.done_testing()
