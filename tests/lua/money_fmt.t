-- gp.units.amount_fmt and past_fmt: a cost, price or time is printed
-- with at least two significant digits, and a figure past a limit with
-- as many decimals as tell it from the limit.  Before, each command used
-- fixed decimals: a small job read "0.0 days ... cost 0 USD (0-0)" at
-- 1.80 USD/GPU-h, and a plan ranked by cost showed every row as 0.
-- Run with ./gpuplan run tests/lua/money_fmt.t.
local t = require "tap"
local u = require("gpuplan").units

t.plan(16)

-- At and above 10^(1 - min_dec) the fixed form is kept (shown lines do
-- not move): a cost of 62.47 -> "62", 1.80 USD/GPU-h -> "1.80", 3.4 days.
t.is(u.fmt_amount(62.47, 0), "62", "a cost of 62.47: whole units, as before")
t.is(u.fmt_amount(10, 0), "10", "10 is the first value with two digits at 0 decimals")
t.is(u.fmt_amount(1.8, 2), "1.80", "a price keeps its two decimals")
t.is(u.fmt_amount(3.4, 1), "3.4", "days keep one decimal from 1 up")
-- Below: two significant digits.  0.0712 -> floor(log10) = -2, 1 + 2 = 3
-- decimals -> "0.071"; 9.6 -> 1 decimal; 0.0069 days -> 4 decimals.
t.is(u.fmt_amount(0.0712, 0), "0.071", "a cost of 7 cents is not 0")
t.is(u.fmt_amount(9.6, 0), "9.6", "a cost of 9.6 is not 10")
t.is(u.fmt_amount(0.0069, 1), "0.0069", "0.0069 days is not 0.0")
t.is(u.fmt_amount(0.001, 2), "0.0010", "a price of 0.001 is not 0.00")
t.is(u.fmt_amount(0.74, 1), "0.74", "0.74 days: two digits")
-- 0 is 0 at the minimum decimals (a free card costs 0, tests/cli/price_zero.t)
t.is(u.fmt_amount(0, 0), "0", "0 stays 0")
t.is(u.fmt_amount(0, 3), "0.000", "0 at three decimals")
-- Below 1e-8 the fixed form would need more than 9 decimals: %.2g.
t.is(u.fmt_amount(2.3e-12, 0), "2.3e-12", "a vanishing cost in %.2g")
-- past_fmt: 1048.592 over a budget of 1048.59 differs at the third
-- decimal; 3.034 days past a 3-day deadline at the second.
t.is(string.format(u.past_fmt(1048.592, 1048.59, 0), 1048.592), "1048.592",
     "a cost just over the budget does not read as the budget")
t.is(string.format(u.past_fmt(3.034, 3, 1), 3.034), "3.03", "3.034 days past 3 days")
t.is(string.format(u.past_fmt(7.5, 3, 1), 7.5), "7.5", "far past: the usual form")
t.ok(not pcall(u.amount_fmt, 1, -1), "min_dec must be a whole number >= 0")
