#!/usr/bin/env gpuplan
-- Budget policies written in Lua: "how many days does 100k CNY a month buy
-- on 8 H800s?" and a policy of your own -- here: the cheapest layout that
-- keeps MFU at 0.4 or more on at most 64 GPUs, because a team with one
-- rack and a utilisation target buys differently from the cheapest plan.
--
--   gpuplan run scripts/budget_policy.lua [--monthly 100kCNY] [--tokens 2e11]
--
-- A policy is a table (gp.policy.cheapest{deadline = "14d"}, fastest{budget
-- = "$50k"}, fewest_gpus, best_per_dollar) or any Lua function of a
-- candidate that returns its score (lower is better) or nil to drop it;
-- gp.policy.monthly{budget = ...} is one written that way.
local gp = require "gpuplan"

local opt = gp.options({
  monthly = { "monthly budget: an amount with its currency, or a bare amount in CNY (the "
    .. "China market's, as gp.policy.monthly reads it)", "100kCNY" },
  tokens = { "tokens to train on", 2e11 },
  model = { "model id", "llama3-8b" },
}, arg)
-- gp.options hands the arguments that are no option back in opt[0]: this
-- script takes none, so one is refused, as guide.lua refuses it (grid_sweep's
-- --gpus 64 128 ran 64 alone and dropped the 128 in silence).
if #opt[0] > 0 then
  error(require("gpuplan.cli").usage("budget_policy: unexpected argument '" .. opt[0][1] .. "' (see --help)"), 0)
end

local job = { model = opt.model, method = "pretrain", tokens = opt.tokens,
              currency = "CNY", zero = { 0, 1 }, micro_batch = { 1, 2 } }
local function with(t)
  local o = {}
  for k, v in pairs(job) do o[k] = v end
  for k, v in pairs(t) do o[k] = v end
  return o
end

-- 1. A monthly budget on 8 H800s: how many days a month it rents them,
-- the fastest layout (gp.sweep at the card's price), and the calendar
-- time and money of the run at that rate.
-- The options are checked before any search, each refusal naming its
-- flag: '--monthly abc', '--model nope' and '--tokens 0' were refused at
-- this file's lines ("scripts/budget_policy.lua:34: monthly budget 'abc':
-- ..."), a place the user never wrote.
local cli = require "gpuplan.cli"
local okb, budget = pcall(require("gpuplan.sweep").money, opt.monthly, "--monthly", "CNY")
if not okb then
  -- text that is no amount stays a usage error (exit 2), as plan --budget's
  local msg = "budget_policy: " .. cli.clean(budget)
  error(cli.reword(budget, msg), 0)
end
local okm, why = pcall(gp.catalog().get, gp.catalog(), "models", opt.model)
-- an unknown id stays a usage error (exit 2) once reworded, as fit's is
if not okm then error(cli.reword(why, "budget_policy: --model: " .. cli.clean(why)), 0) end
local okt, r1 = pcall(gp.sweep, with { gpu = "h800-sxm", gpus = 8, top = 1 })
if not okt then
  error("budget_policy: " .. cli.clean(r1):gsub("^sweep: tokens", "--tokens"), 0)
end
local amount = gp.catalog():convert(budget, "CNY")
-- A bare amount ("100") is in the market's currency, CNY here, as
-- gp.policy.monthly reads it (the candidate's currency): said with it --
-- "100 a month" named no currency.
local named = require("gpuplan.sweep").money(opt.monthly, "--monthly", nil, false).currency
print(string.format("1. %s%s a month on 8 x h800-sxm (China-market price):", opt.monthly,
                    named and "" or " CNY"))
local c = r1.results[1]
if c then
  local month = 8 * c.price * 24 * 30
  local per_month = math.min(30, amount / (8 * c.price * 24))
  print(string.format("   8 GPUs cost %.0f CNY a month at %.2f CNY/GPU-h: the budget rents them %.1f days "
                      .. "a month", month, c.price, per_month))
  print(string.format("   the fastest layout, %s, trains %.3g tokens in %.1f days of the 8 GPUs: "
                      .. "%.1f calendar months, %.0f CNY", c.layout, opt.tokens, c.days,
                      c.days / per_month, c.cost))
  -- The same through gp.policy.monthly, a policy written as a function.
  local m = gp.sweep(with { gpu = "h800-sxm", gpus = 8,
                            policy = gp.policy.monthly { budget = opt.monthly } })
  print(string.format("   gp.policy.monthly: %s", m.results[1] and m.results[1].layout
    or "8 x h800-sxm cost more than the budget a month"))
else
  print("   nothing fits on 8 x h800-sxm")
end

-- 2. A policy of your own: a plain Lua function of each candidate.
local function mfu_floor_in_a_rack(c)
  if c.mfu < 0.4 or c.gpus > 64 then return nil end     -- dropped
  return c.cost                                          -- then the cheapest
end
local r = gp.sweep(with { gpu = { "h800-sxm", "a800-sxm-80gb", "h20" }, gpus = "8..64",
                          policy = mfu_floor_in_a_rack, top = 5 })
print()
print("2. The cheapest layout with MFU >= 0.4 on at most 64 GPUs (China-market prices, CNY):")
gp.report(r.results, { columns = {
  { key = "gpu", label = "GPU" }, { key = "gpus", label = "GPUs" }, { key = "layout" },
  { key = "mfu", label = "MFU", fmt = "%.3f" }, { key = "days", fmt = "%.1f" },
  { key = "cost", label = "cost (CNY)", fmt = "%.0f" } } })
if r.results[1] then
  local c = r.results[1]
  print(string.format("   chosen: %d x %s %s at MFU %.3f, %.1f days, %.0f CNY", c.gpus, c.gpu,
                      c.layout, c.mfu, c.days, c.cost))
end
return 0
