-- gpuplan.prices: choosing a GPU-hour price from the catalog, and saying
-- where it came from.
--
--   local gp = require "gpuplan"
--   local p = gp.prices.cheapest(gp.catalog(), "h20", { currency = "CNY" })
--   print(p.amount, p.currency, p.market, p.converted, gp.prices.origin(p))
--
-- A price entry belongs to one market, its `region` ("cn" for the China
-- market, "us", "global" for offers open to anyone, "overseas" for the seed
-- guide's "outside China" range).  A price shown in another currency than
-- the one it was quoted in is converted at the catalog's dated central-bank
-- rate (catalog/currency.lua) and always says so: `converted` is true and
-- origin() names the quoted price and the rate.

local M = {}

-- The amount of one price entry in currency `to` (nil: the entry's own),
-- as a record: amount, currency, id, entry, market, quoted (the price as
-- the source quoted it, "$0.95/h"), converted (boolean), guide (a seed
-- guide's rule of thumb, not an offer).
function M.quote(cat, id, to)
  local units = require "gpuplan.units"
  local e = cat.prices[id]
  if not e then error("unknown price '" .. tostring(id) .. "'", 2) end
  to = to or e.price.currency
  local amount = cat:convert(e.price, to)
  return { amount = amount, currency = to, id = id, entry = e, market = e.region,
           quoted = units.fmt(e.price, "price"), converted = e.price.currency ~= to,
           guide = e.provider_kind == "guide" }
end

-- The cheapest price of a GPU-hour for `gpu` in opts.currency (default
-- the catalog settings' currency), or nil when the catalog has none.
-- Dated offers win over the seed guides' rules of thumb, which are used
-- only when nothing else is there (flagged `guide`).  opts.market keeps
-- one region ("cn"); ties go to the price quoted in the wanted currency,
-- then to the id, so the choice does not depend on table order.
function M.cheapest(cat, gpu, opts)
  opts = opts or {}
  local to = opts.currency or cat.settings.currency
  local best
  for _, id in ipairs(cat:ids("prices")) do
    local e = cat.prices[id]
    if e.gpu == gpu and (not opts.market or e.region == opts.market) and
       (not opts.markets or opts.markets[e.region]) then
      local q = M.quote(cat, id, to)
      local better = not best
        or (best.guide and not q.guide)
        or (best.guide == q.guide and (q.amount < best.amount
              or (q.amount == best.amount and best.converted and not q.converted)))
      if better then best = q end
    end
  end
  return best
end

-- The rate a conversion used, as a phrase: "7.0197 CNY/USD, 2026-01-08".
function M.rate(cat, from, to)
  local parts = {}
  for _, c in ipairs { from, to } do
    if c ~= "USD" then
      local e = cat.currencies[c]
      parts[#parts + 1] = string.format("%s %s/USD, %s", tostring(e.per_usd), c, e.date)
    end
  end
  return table.concat(parts, "; ")
end

-- Where a quote comes from, for a table cell: "cn" when shown as quoted,
-- "us, converted from $0.95/h" when converted.
function M.origin(q)
  if not q then return nil end
  if q.converted then return q.market .. ", converted from " .. q.quoted end
  return q.market
end

return M
