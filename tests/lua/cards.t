-- The cards side by side: gp.sweep{per_card = true} and gp.infer with a
-- list of cards.  Built-in catalog only (a user catalog's prices would
-- change the ranking).
local t = require "tap"
local gp = require "gpuplan"

local cat = gp.catalog { dirs = { "catalog" } }

-- gp.sweep per_card: each card's row is that card's best, the layout a
-- search of that card alone ranks first (the same engine, the same key).
-- 40 days: the H800's fastest layout (34 days) meets it, the A100's
-- (63.6) does not.
local job = { model = "llama3-70b", tokens = 2e12, gpus = "64..1024", cat = cat,
              policy = gp.policy.cheapest { deadline = "40d" } }
local cards = { "h100-sxm", "b200", "a100-sxm-80gb", "h800-sxm" }
local o = {}
for k, v in pairs(job) do o[k] = v end
o.gpu, o.per_card, o.top = cards, true, 2
local r = gp.sweep(o)
t.is(#r.per_card, 4, "a row per card")
t.is(#r.results, 2, "the ranked results are still cut to top")
local by = {}
for _, row in ipairs(r.per_card) do by[row.gpu] = row end
for _, id in ipairs { "h100-sxm", "b200" } do
  local one = {}
  for k, v in pairs(job) do one[k] = v end
  one.gpu, one.top = id, 1
  local best = gp.sweep(one).results[1]
  t.is(by[id].gpus .. " " .. by[id].layout, best.gpus .. " " .. best.layout,
       id .. ": the card's own best")
  t.near(by[id].step_s, best.step_s, 1e-12, id .. ": its step")
end
-- The A100s cannot train 2T tokens in 40 days on 1024 GPUs: their row is
-- their fastest layout, marked as missing the deadline (days > 40).
local a100 = by["a100-sxm-80gb"]
t.ok(a100.fits and a100.meets_deadline == false and a100.days > 40,
     "a100: its fastest layout misses the deadline (" .. string.format("%.1f", a100.days) .. " days)")
t.like(a100.loses, "misses the deadline", "and says so", true)
-- The H800 has no offer for a USD buyer: no cost, ranked after the priced.
t.ok(by["h800-sxm"].cost == nil, "h800: no price for a USD buyer")
t.like(by["h800-sxm"].loses, "no price in the buyer's market", "said", true)
-- The winner is the cheapest within the deadline; what another loses is
-- its time (1 / tokens/s: the same tokens) and cost against the winner's.
local w = r.per_card[1]
t.ok(w.winner and w.meets_deadline and w.gpu == r.results[1].gpu, "the winner ranks first")
local b = by.b200
local slower = w.tokens_per_s / b.tokens_per_s
local more = b.cost / w.cost
local function pct(x, up, down)
  return string.format("%.1f%% %s", 100 * math.abs(x - 1), x > 1 and up or down)
end
t.is(b.loses, pct(slower, "slower", "faster") .. ", " .. pct(more, "more cost", "less cost"),
     "b200: what it loses, from the two rows")
t.raises(function()
  local x = {}
  for k, v in pairs(o) do x[k] = v end
  x.per_card = "yes"
  gp.sweep(x)
end, "per_card must be", "per_card: a boolean")

-- gp.infer with a list: each row is gp.infer on that card; ranked by cost
-- per token among those that fit and are priced; the 70B at bf16 does not
-- fit one RTX 4090 (141 GB of weights).
local base = { model = "llama3-70b", weights = "fp8", tp = 2, gpus = 2, concurrency = 32,
               cat = cat }
local list = {}
for k, v in pairs(base) do list[k] = v end
list.gpu = { "h200-sxm", "h100-sxm", "rtx-4090" }
local ri = gp.infer(list)
t.is(#ri.per_card, 3, "infer: a row per card")
local iby = {}
for _, row in ipairs(ri.per_card) do iby[row.gpu] = row end
for _, id in ipairs { "h100-sxm", "h200-sxm" } do
  local one = {}
  for k, v in pairs(base) do one[k] = v end
  one.gpu = id
  local single = gp.infer(one)
  t.near(iby[id].stream_tokens_per_s, single.stream_tokens_per_s, 1e-12, id .. ": gp.infer's")
  t.near(iby[id].cost_per_mtok, single.cost_per_mtok, 1e-12, id .. ": its cost")
end
local first, second = ri.per_card[1], ri.per_card[2]
t.ok(first.cost_per_mtok <= second.cost_per_mtok and ri.winner == first.gpu,
     "infer: the cheapest per token wins")
t.ok(not iby["rtx-4090"].fits and ri.per_card[3].gpu == "rtx-4090", "what does not fit is last")
t.is(iby["rtx-4090"].loses, "does not fit", "and says so")
t.like(second.loses, string.format("%.1f%% more cost per token",
  100 * (second.cost_per_mtok / first.cost_per_mtok - 1)), "what the second loses", true)
t.done_testing()
