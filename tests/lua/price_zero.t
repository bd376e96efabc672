-- Price 0 through the Lua API: a free card, cost 0 -- not a card without a
-- price (nil).  gp.infer, gp.sweep and gp.rl agree; a comparison that
-- divides by a cost of 0 says so (gpuplan.report.against) instead of a
-- percentage of 0/0 (it was "-nan% less cost").
-- Run with ./gpuplan run tests/lua/price_zero.t.
local t = require "tap"
local gp = require "gpuplan"
local report = require "gpuplan.report"

t.plan(12)

-- report.against: x against the winner's w.  w = 2, x = 3: 3/2 = 1.5 ->
-- "50.0% more"; w = 0: no ratio.
t.is(report.against(3, 2, "more cost", "less cost"), "50.0% more cost", "a ratio where w > 0")
t.is(report.against(0, 0, "more cost", "less cost"), "the same (both 0)", "both free")
t.is(report.against(5, 0, "more cost", "less cost"), "more cost (the winner's is 0)",
  "the winner free, the loser not")

-- gp.infer: cost per 1M tokens = price x gpus / 3600 / tokens/s x 1e6 = 0
-- at price 0; tokens/s per price has no value there (nil); no price: nil.
local job = { model = "llama3-8b", gpu = "h100-sxm" }
local free = gp.infer(t.with(job, { price = 0 }))
t.is(free.cost_per_mtok, 0, "infer: cost 0 at price 0")
t.is(free.tokens_per_s_per_dollar_hour, nil, "infer: no tokens/s per price at price 0")
-- an unpriced card: the catalog has no h100-sxm offer in the cn market
local none = gp.infer(t.with(job, { market = "cn" }))
t.is(none.cost_per_mtok, nil, "infer: no price, no cost")

-- gp.sweep: every result costs 0 (tokens given), and a where function
-- reads the same cost; a budget is met by a free card.
local sjob = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, tokens = 1e9, price = 0, top = 3 }
local seen
local r = gp.sweep(t.with(sjob, { where = function(c) seen = c.cost; return true end }))
t.is(r.results[1].cost, 0, "sweep: cost 0 at price 0")
t.is(seen, 0, "sweep: the where function sees cost 0")
local b = gp.sweep(t.with(sjob, { budget = "$1" }))
t.ok(#b.results > 0 and b.results[1].cost == 0, "sweep: a free card meets a $1 budget")
local nt = gp.sweep { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, price = 0, top = 3 }
t.is(nt.results[1].cost, nil, "sweep: no tokens, no cost")

-- gp.rl: cost per step = 0 at price 0, and the run's cost 0.
local rl = gp.rl { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 8, zero = 3, price = 0, steps = 10 }
t.is(rl.cost_step, 0, "rl: cost per step 0")
t.is(rl.cost, 0, "rl: the run's cost 0")
