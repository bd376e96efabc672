-- gpuplan.prices: choosing a GPU-hour price from the catalog, and saying
-- where it came from.
--
--   local gp = require "gpuplan"
--   local p = gp.prices.cheapest(gp.catalog(), "h20", { currency = "CNY" })
--   print(p.amount, p.currency, p.market, p.converted, gp.prices.origin(p))
--   local b = gp.prices.buyer(gp.catalog(), { currency = "CNY" }, "me")  -- markets {cn}
--   local q, why = gp.prices.offer(gp.catalog(), "h800-sxm", b)
--
-- A price entry belongs to one market, its `region` ("cn" for the China
-- market, "us", "global" for offers open to anyone, "overseas" for the seed
-- guide's "outside China" range).  A price shown in another currency than
-- the one it was quoted in is converted at the catalog's dated central-bank
-- rate (catalog/currency.lua) and always says so: `converted` is true and
-- origin() names the quoted price and the rate.

local M = {}

-- The catalog and buyer arguments of the public functions checked, named
-- at the caller's line: before, gp.prices.quote(5, ...) raised "prices.lua:25:
-- attempt to index a number value (local 'cat')", a line of gpuplan's.
local function need_catalog(cat, who)
  if type(cat) ~= "table" or type(cat.ids) ~= "function" then
    error(string.format("prices.%s: cat must be a catalog, as gp.catalog() returns (got %s)",
      who, require("gpuplan.args").shown(cat)), 3)
  end
end

local function need_buyer(buyer, who)
  if type(buyer) ~= "table" or type(buyer.currency) ~= "string" then
    error(string.format("prices.%s: buyer must be gp.prices.buyer's {currency, markets, ...} "
      .. "(got %s)", who, require("gpuplan.args").shown(buyer)), 3)
  end
end

-- The amount of one price entry in currency `to` (nil: the entry's own),
-- as a record: amount, currency, id, entry, market, quoted (the price as
-- the source quoted it, "$0.95/h"), converted (boolean), guide (a seed
-- guide's rule of thumb, not an offer).
function M.quote(cat, id, to)
  need_catalog(cat, "quote")
  local units = require "gpuplan.units"
  -- looked up as cat:get does: "unknown price 'nil'" for no id, and a
  -- misspelt id ("h100-sxm/guid/us") named no price the catalog has
  local e = type(id) == "string" and cat.prices[id]
  if not e then
    local _, why = pcall(cat.get, cat, "prices", id)
    error("prices.quote: " .. tostring(why):gsub("^[^:]*:%d+: ", ""), 0)
  end
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
-- (the caller's gpu may be a script's own card, which no offer names:
-- M.offer asks this, and gets nil)
local function cheapest(cat, gpu, opts)
  if opts ~= nil and type(opts) ~= "table" then
    error("prices.cheapest: opts must be a table {currency, market, markets} (got "
      .. require("gpuplan.args").shown(opts) .. ")", 2)
  end
  opts = opts or {}
  -- a misspelt key (curency) priced in the catalog's currency in silence
  require("gpuplan.args").check_keys(opts, { "currency", "market", "markets" },
    "prices.cheapest: opts", 2)
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

-- The cheapest offer for a catalog card: an id the catalog does not have
-- (a typo, "h10-sxm") or none at all answered nil, as a card with no
-- offer does; it is refused as cat:get refuses it.
function M.cheapest(cat, gpu, opts)
  need_catalog(cat, "cheapest")
  if type(gpu) ~= "string" then
    error("prices.cheapest: gpu must be a GPU id (got " .. require("gpuplan.args").shown(gpu)
      .. ")", 2)
  end
  if type(cat.gpus) == "table" and cat.gpus[gpu] == nil then cat:get("gpus", gpu) end
  return cheapest(cat, gpu, opts)
end

-- The markets a buyer rents in when they name none: a buyer paying in CNY
-- rents at China-market prices (the seed guides' split: the export cards
-- H800, A800 and H20 are sold in China), anyone else where the offers are
-- open to them.  One rule for every command and the guide.
M.MARKETS_BY_CURRENCY = { CNY = "cn" }
M.OPEN_MARKETS = "us,global,overseas"

-- A setting from the environment, "" counting as unset.
local function env(name)
  local v = os.getenv(name)
  if v == nil or v == "" then return nil end
  return v, name
end

-- The buyer: the currency prices and costs are shown in, and the markets
-- whose offers they rent at.  Each comes from o (the command's currency
-- and market: --currency / --market, the Lua keys), else the environment
-- (GPUPLAN_CURRENCY, GPUPLAN_MARKET), else (the currency) the one o.price
-- is given in, else the catalog's settings
-- (currency, market: a user catalog's settings file sets them once), else
-- USD and the currency's markets (MARKETS_BY_CURRENCY, else OPEN_MARKETS).
-- who names the caller in errors.  Returns {currency, markets = set,
-- market = "us,global,overseas" (the list as given or derived), said =
-- where the market came from, or nil when the caller gave it}.
function M.buyer(cat, o, who)
  need_catalog(cat, "buyer")
  -- who names gp.prices.buyer when a script calls it without one (its
  -- errors read "nil: currency 'XXX' ..."); an o that is no table raised
  -- "prices.lua:126: attempt to index a number value (local 'o')"
  who = who or "prices.buyer"
  if o ~= nil and type(o) ~= "table" then
    error(string.format("%s: o must be a table {currency =, market =} (got %s)", who,
      require("gpuplan.args").shown(o)), 0)
  end
  o = o or {}
  local cur, cfrom = o.currency, nil
  if cur == nil then
    local e, name = env("GPUPLAN_CURRENCY")
    if e then cur, cfrom = e, "$" .. name end
  end
  -- a price given in a currency ("6.98CNY/h", a catalog price id) is the
  -- buyer's when nothing above names one
  -- (one the catalog cannot convert is left to the price's own check)
  if cur == nil then
    local pc = M.currency_of(cat, o.price)
    if pc == "USD" or (pc and cat.currencies and cat.currencies[pc]) then cur = pc end
  end
  if cur == nil then cur = cat.settings.currency or "USD" end
  -- ISO 4217 codes in either case, as a budget's "100kcny" is read
  -- (sweep.money): --currency cny was refused, "no exchange rate in the
  -- catalog (CNY, USD)"
  -- (the refusal names the code as given: --currency xyz said 'XYZ')
  local given = cur
  if type(cur) == "string" then cur = cur:upper() end
  if type(cur) ~= "string" or not (cur == "USD" or (cat.currencies and cat.currencies[cur])) then
    local names = { "USD" }
    for k in pairs(cat.currencies or {}) do names[#names + 1] = k end
    table.sort(names)
    error(string.format("%s: currency %s%s: no exchange rate in the catalog (%s)", who,
      type(given) == "string" and ("'" .. given .. "'") or require("gpuplan.args").shown(given), cfrom and (" (from " .. cfrom .. ")") or "",
      table.concat(names, ", ")), 0)
  end
  local mk, said, derived = o.market, nil, false
  if mk == nil then
    local e, name = env("GPUPLAN_MARKET")
    if e then mk, said = e, "$" .. name
    elseif cat.settings.market then mk, said = cat.settings.market, "the catalog's settings"
    else
      mk = M.MARKETS_BY_CURRENCY[cur] or M.OPEN_MARKETS
      said, derived = "a " .. cur .. " buyer", true
    end
  end
  if type(mk) ~= "string" or not mk:find("%S") then
    error(string.format("%s: market must be price regions like 'cn' or 'us,global' (got %s)",
      who, require("gpuplan.args").shown(mk)), 0)
  end
  -- Regions match in either case (--market CN is the catalog's cn), and
  -- the set holds the catalog's own spellings, which gp.prices.cheapest
  -- compares: a user catalog's region "EU" is --market eu as well as EU
  -- (lower-casing the name alone left it unreachable).
  local known, markets, list, names = {}, {}, {}, {}
  for _, id in ipairs(cat:ids("prices")) do
    local r = cat.prices[id].region
    local k = r:lower()
    known[k] = known[k] or {}
    if not known[k][r] then known[k][r] = true; names[#names + 1] = r end
  end
  table.sort(names)
  for m in mk:gmatch("[^,%s]+") do
    local spell = known[m:lower()]
    if not spell and not derived then
      error(string.format("%s: market '%s'%s: no price in the catalog is from it (markets: %s)",
        who, m, said and (" (from " .. said .. ")") or "", table.concat(names, ", ")), 0)
    end
    m = m:lower()
    if not markets[m] then
      markets[m] = true; list[#list + 1] = m
      for r in pairs(spell or {}) do markets[r] = true end
    end
  end
  return { currency = cur, markets = markets, market = table.concat(list, ","), said = said }
end

-- The currency a price names: a string with one ("6.98CNY/h", "$2/h"), a
-- table {amount, currency}, a catalog price id; nil for a bare number or
-- a string that does not parse (the caller's check reports it).
function M.currency_of(cat, p)
  need_catalog(cat, "currency_of")
  if type(p) == "table" then return p.currency end
  if type(p) ~= "string" then return nil end
  if cat.prices and cat.prices[p] then return cat.prices[p].price.currency end
  if tonumber(p) then return nil end
  local ok, v = pcall(require("gpuplan.units").parse, p, "price")
  return ok and type(v) == "table" and v.currency or nil
end

-- The buyer's price of a GPU-hour of `gpu`: the cheapest offer in the
-- buyer's markets (M.cheapest), or nil and a phrase saying where the card
-- is offered instead ("h800-sxm is offered in cn only: --market cn or
-- --price"), or nil and nil when the catalog prices it nowhere.
function M.offer(cat, gpu, buyer)
  need_catalog(cat, "offer")
  need_buyer(buyer, "offer")
  local q = cheapest(cat, gpu, { currency = buyer.currency, markets = buyer.markets })
  if q then return q end
  local elsewhere, seen = {}, {}
  for _, id in ipairs(cat:ids("prices")) do
    local e = cat.prices[id]
    if e.gpu == gpu and not seen[e.region] then
      seen[e.region] = true
      elsewhere[#elsewhere + 1] = e.region
    end
  end
  if #elsewhere == 0 then return nil end
  table.sort(elsewhere)
  return nil, string.format("no offer for %s in %s (it is offered in %s: --market %s or "
    .. "--price)", gpu, buyer.market, table.concat(elsewhere, ", "), elsewhere[1])
end

-- The default price of a GPU-hour when the caller gives none: the buyer's
-- offer (M.offer), each assumption said through default(text) -- the
-- market when the caller did not name it, the price and where it is from,
-- or where the card is offered instead.  Returns the amount, or nil.
function M.default_price(cat, gpu, buyer, default)
  need_catalog(cat, "default_price")
  need_buyer(buyer, "default_price")
  -- default says each assumption; none given: nothing is said (it was
  -- called, "attempt to call a nil value (local 'default')")
  if default == nil then default = function() end
  elseif type(default) ~= "function" then
    error("prices.default_price: default must be a function(text) (got "
      .. require("gpuplan.args").shown(default) .. ")", 2)
  end
  if buyer.said then default(string.format("market=%s (%s)", buyer.market, buyer.said)) end
  local q, elsewhere = M.offer(cat, gpu, buyer)
  if q then
    default(string.format("price=%s %s/GPU-h (%s, %s%s)",
      require("gpuplan.units").fmt_amount(q.amount, 2), buyer.currency, q.id,
      M.origin(q), q.guide and "; a seed guide's rule of thumb" or ""))
    return q.amount
  end
  if elsewhere then default("price=none: " .. elsewhere) end
  return nil
end

-- Whether defaults line entry d is what M.default_price says of the buyer's
-- market or a card's price: "market=...", "price=..." (M.per_hour's
-- conversion too), or a sweep's per-card "CARD: price=...".  An answer that
-- rests on neither (a step without tokens, a plan ranked without cost, a
-- validate row: no case metric is a cost) leaves them off its line.
-- A non-string entry (a number, a table) raised "attempt to index a
-- number value (local 'd')" at this file's line: refused, naming it.
function M.said_price(d)
  if type(d) ~= "string" then
    error(string.format("prices.said_price: entry must be a defaults-line string such as "
      .. "'price=2.49 USD/GPU-h' (got %s)", require("gpuplan.args").shown(d)), 2)
  end
  return d:find("^market=") ~= nil or d:find("^price=") ~= nil
    or d:find("^[^%s:]+: price=") ~= nil
end

-- defaults less what M.said_price marks, in place; returns defaults.
-- Checked whole before any entry is moved: a defaults list that is no
-- list of strings ("attempt to get length of a nil value") is refused
-- and left as it was.
function M.unsaid(defaults)
  if type(defaults) ~= "table" then
    error(string.format("prices.unsaid: defaults must be a list of defaults-line strings, "
      .. "as a result's defaults (got %s)", require("gpuplan.args").shown(defaults)), 2)
  end
  for i = 1, #defaults do
    if type(defaults[i]) ~= "string" then
      error(string.format("prices.unsaid: defaults[%d] must be a string (got %s)", i,
        require("gpuplan.args").shown(defaults[i])), 2)
    end
  end
  local n = 0
  for i = 1, #defaults do
    local d = defaults[i]
    defaults[i] = nil
    if not M.said_price(d) then
      n = n + 1
      defaults[n] = d
    end
  end
  return defaults
end

-- The price of a GPU-hour in the buyer's currency (buyer: M.buyer's)
-- from what a caller gives for it: nil, the default (M.default_price, said
-- through default); a number, or a string that is one ("2.49", as a
-- command line gives it), in the buyer's currency; {amount, currency};
-- "$2.49/h" or "12CNY/h"; or a catalog price id -- converted at the
-- catalog's rate.  gp.train, gp.sweep, gp.rl and gp.infer read it here.
-- A bad price raises a message without a position, naming price (the
-- caller puts its own name before it).
function M.per_hour(cat, p, gpu, buyer, default)
  need_catalog(cat, "per_hour")
  need_buyer(buyer, "per_hour")
  local shown = require("gpuplan.args").shown
  local cur = buyer.currency
  if default ~= nil and type(default) ~= "function" then
    error("prices.per_hour: default must be a function(text) (got "
      .. shown(default) .. ")", 2)
  end
  if p == nil then return M.default_price(cat, gpu, buyer, default) end
  -- a plain decimal number; Lua's tonumber also reads "0x10" as 16, which
  -- every other number option refuses (gpuplan.cli): a hexadecimal price
  -- falls through to the amount parser, which says what it wanted
  if type(p) == "string" and tonumber(p) and not p:match("^%s*[%+%-]?0[xX]") then
    p = tonumber(p)
  end
  local v
  if type(p) == "number" then
    v = { amount = p, currency = cur }
  elseif type(p) == "table" then
    -- a misspelt key ({amount = 1, currncy = "EUR"}) priced the amount in
    -- the buyer's currency in silence; a quote (gp.prices.cheapest/quote)
    -- passes as it is, its other fields unread
    local args = require "gpuplan.args"
    local known = { "amount", "currency", "id", "entry", "market", "quoted", "converted", "guide" }
    local set = {}
    for _, k in ipairs(known) do set[k] = true end
    local bad = args.unknown_key(p, set)
    if bad ~= nil then
      local near = type(bad) == "string" and args.nearest(bad, { "amount", "currency" })
      error("price: unknown key '" .. tostring(bad) .. "'" .. (near and (" (did you mean '" .. near .. "'?)")
        or " (amount, currency)"), 0)
    end
    v = { amount = p.amount, currency = p.currency or cur }
    if type(v.amount) ~= "number" then
      error("price.amount must be a non-negative number (got " .. shown(v.amount) .. ")", 0)
    end
  elseif type(p) ~= "string" then
    error("price must be a number, a string like '$2.49/h' or a price id (got " .. type(p)
      .. ")", 0)
  elseif cat.prices and cat.prices[p] then
    -- an offer is for its card: --gpu h100-sxm --price
    -- a100-sxm-80gb/guide/cn priced the H100s at the A100's 14 CNY/h
    local e, gid = cat.prices[p], type(gpu) == "table" and gpu.id or gpu
    if type(gid) == "string" and e.gpu ~= nil and e.gpu ~= gid then
      error(string.format("price '%s' is an offer for %s, not %s (its offers: gpuplan catalog "
        .. "list prices; or an amount like '$2.49/h')", p, tostring(e.gpu), gid), 0)
    end
    v = e.price
  else
    local ok, parsed = pcall(require("gpuplan.units").parse, p, "price")
    -- an offer id the catalog does not hold (a provider it does not list,
    -- a misspelt market): "h100-sxm/lambda/us" was "bad price ...:
    -- expected an amount per GPU-hour like '$2.49/h'", as if no price id
    -- were taken.  Text whose first part is a card's id is an id: an
    -- unknown catalog id, exit 1, with that card's offers.
    -- An id naming another card than the one priced (--gpu h100-sxm
    -- --price a100-sxm-80gb/lambda/us) listed the A100's offers, as if
    -- the card were what to fix: it says both cards, as an offer of
    -- another card is refused above, and lists the priced card's offers.
    local card = p:match("^([%w%.%-]+)/")
    if not ok and card and cat.gpus and cat.gpus[card] then
      local gid = type(gpu) == "table" and gpu.id or gpu
      local other = type(gid) == "string" and gid ~= card
      local of = other and gid or card
      local offers = {}
      for id, e in pairs(cat.prices or {}) do
        if e.gpu == of then offers[#offers + 1] = id end
      end
      table.sort(offers)
      error(string.format("price '%s' is no catalog offer%s (%s; or an amount like '$2.49/h')", p,
        other and string.format(", and it names %s, not %s", card, gid) or "",
        #offers > 0 and ("the offers for " .. of .. ": " .. table.concat(offers, ", "))
        or ("the catalog has no offer for " .. of)), 0)
    end
    -- a negative amount ("-$2/h", "$-2/h", "-2USD/h") reads once its sign
    -- is gone: refused as a negative number is (exit 1), as a negative
    -- --budget and a negative quantity are, not as text that is no price
    local unsigned = not ok and (p:match("^(%s*%$?%s*)%-") and p:gsub("%-", "", 1))
    if unsigned and pcall(require("gpuplan.units").parse, unsigned, "price") then
      error(string.format("price '%s' must be a non-negative amount", p), 0)
    end
    if not ok then
      -- text that is neither a price id nor an amount: a value the option
      -- cannot parse, a usage error on the command line (docs/output.md)
      error(require("gpuplan.args").usage(string.format("price '%s': %s", p,
        (tostring(parsed):gsub("^.-:%d+: ", "")))), 0)
    end
    v = parsed
  end
  if v.amount ~= v.amount or v.amount < 0 or v.amount == math.huge then
    error("price" .. (type(p) == "table" and ".amount" or "") .. " must be a non-negative "
      .. "number (got " .. shown(v.amount) .. ")", 0)
  end
  if v.currency ~= "USD" and not (cat.currencies and cat.currencies[v.currency]) then
    local names = { "USD" }
    for k in pairs(cat.currencies or {}) do names[#names + 1] = k end
    table.sort(names)
    error(string.format("price: unknown currency '%s' (the catalog has %s)", tostring(v.currency),
      table.concat(names, ", ")), 0)
  end
  -- One range for every command, in the buyer's currency: 0 (a free
  -- card, cost 0) or what the engine prices, 1e-6 to 1e15 per GPU-hour
  -- (engine/infer.c: tokens/s per a price of 1e-308 was inf).  Before,
  -- 1e-7 was refused by infer alone and 1e16 by plan as a layout's fault.
  local amount = cat:convert(v, cur)
  if amount ~= 0 and not (amount >= 1e-6 and amount <= require("gpuplan.schema").AMOUNT_MAX) then
    error(string.format("price must be 0 (the GPUs are free) or from 1e-06 to 1e+15 %s per "
      .. "GPU-hour (got %.6g)", cur, amount), 0)
  end
  -- A price given in another currency than the buyer's is converted,
  -- and said, as a catalog offer's is (M.origin): --price '$2/h' for a
  -- CNY buyer printed "at 14.04 CNY/GPU-h" with no word of the rate.
  if v.currency ~= cur and default then
    local units = require "gpuplan.units"
    default(string.format("price=%s %s/GPU-h (converted from %s at %s)",
      units.fmt_amount(amount, 2), cur, units.fmt(v, "price"), M.rate(cat, v.currency, cur)))
  end
  return amount
end

-- The rate a conversion used, as a phrase: "7.0197 CNY/USD, 2026-01-08".
function M.rate(cat, from, to)
  need_catalog(cat, "rate")
  local parts = {}
  -- each of the two named (ipairs of {nil, "CNY"} stopped at the nil:
  -- rate(cat) and rate(cat, nil, "CNY") were "", no rate, in silence)
  for _, arg in ipairs { { "from", from }, { "to", to } } do
    local c = arg[2]
    if type(c) ~= "string" then
      error(string.format("prices.rate: %s must be a currency code (got %s)", arg[1],
        require("gpuplan.args").shown(c)), 2)
    end
    if c ~= "USD" then
      local e = type(c) == "string" and cat.currencies[c]
      if not e then
        error(string.format("prices.rate: no exchange rate in the catalog for %s",
          require("gpuplan.args").shown(c)), 2)
      end
      parts[#parts + 1] = string.format("%s %s/USD, %s", tostring(e.per_usd), c, e.date)
    end
  end
  return table.concat(parts, "; ")
end

-- Where a quote comes from, for a table cell: "cn" when shown as quoted,
-- "us, converted from $0.95/h" when converted.
function M.origin(q)
  if not q then return nil end
  if type(q) ~= "table" then
    error("prices.origin: q must be a quote, as gp.prices.cheapest returns (got "
          .. require("gpuplan.args").shown(q) .. ")", 2)
  end
  if q.converted then return q.market .. ", converted from " .. q.quoted end
  return q.market
end

return M
