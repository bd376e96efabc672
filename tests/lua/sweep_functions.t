-- gp.sweep's where and policy functions read the candidate the search
-- returns.  One that overwrote a figure (c.gpus = 0) changed the row the
-- search printed -- gpus 0 beside a layout of 8 -- in silence; such a
-- write is refused, naming the field, and a field of the function's own
-- (gp.policy.monthly's per_month) is still added.  gp.policy.monthly's
-- budget is checked when the policy is made, not at each layout.
-- Run with ./gpuplan run tests/lua/sweep_functions.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(8)

local job = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, tokens = 1e9, top = 3 }

t.raises(function()
  gp.sweep(t.with(job, { policy = function(c) c.gpus = 0; return 1 end }))
end, "sweep: the policy function changed the candidate's gpus (8 to 0)", "a policy that writes gpus", true)
t.raises(function()
  gp.sweep(t.with(job, { where = function(c) c.tokens_per_s = -1; return true end }))
end, "sweep: the where function changed the candidate's tokens_per_s", "a where that writes tokens_per_s",
  true)

-- A field of its own is the function's to add, and comes back.
local r = gp.sweep(t.with(job, { policy = function(c) c.mine = c.gpus * 2; return 1 / c.tokens_per_s end }))
t.is(r.results[1].mine, 16, "a field of the policy's own: 8 GPUs x 2")
t.is(r.results[1].gpus, 8, "the search's gpus as it found them")
-- monthly adds per_month = price x gpus x 24 x 30 ($1/h: 8 x 720 = 5760)
local m = gp.sweep(t.with(job, { price = 1, policy = gp.policy.monthly { budget = "$10k" } }))
t.near(m.results[1].per_month, 5760, 1e-12, "monthly's per_month: 1 x 8 x 24 x 30")

t.raises(function() gp.policy.monthly { budget = -1 } end,
  "policy.monthly: budget must be a positive amount", "a negative monthly budget, when made", true)
t.raises(function() gp.policy.monthly { budget = 0 / 0 } end,
  "policy.monthly: budget must be a positive amount", "a NaN monthly budget, when made", true)
t.raises(function() gp.policy.monthly("$5k") end,
  "budget is required (got string '$5k', not a table)", "a string for the table", true)
