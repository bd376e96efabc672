-- catalog/recipes.lua's fp8-16-rem is mixed-16-rem's states with the fp8
-- recipe's cached fp8 weight copy, derived from those entries rather than
-- restated: the shipped file loaded with mixed-16-rem's Adam state bytes
-- or the fp8 cache changed gives an fp8-16-rem that follows.  Run with
-- ./gpuplan run tests/lua/recipe_derived.t.
local t = require "tap"
local catalog = require "gpuplan.catalog"

t.plan(4)

local src = assert(io.open("catalog/recipes.lua")):read("a")
local scratch = t.scratch()

-- The recipes file with entry id's field `field = old` set to new.
local function edited(id, field, old, new)
  local at = assert(src:find('id = "' .. id .. '"', 1, true), id)
  local pat = field .. " = " .. old
  local i, j = src:find(pat, at, true)
  assert(i and i < src:find("\n}", at, true), id .. " has no " .. pat)
  return src:sub(1, i - 1) .. field .. " = " .. new .. src:sub(j + 1)
end
local function recipes(text)
  scratch.put("recipes.lua", text)
  local cat, errs = catalog.load { scratch.dir }
  assert(#errs == 0, errs[1])
  scratch.clean()
  return cat.recipes
end

-- As shipped: mixed-16-rem's 2 + 2 + (2 + 2 x 4) with the fp8 recipe's
-- weights beyond megatron-18's (3 - 2 = 1 B): 3 + 2 + 2 + 4.
local r = recipes(src)
local f = r["fp8-16-rem"]
t.ok(f.weights == 3 and f.grads == 2 and f.master == 2 and f.state == 4 and f.reduce == 2,
  "shipped: weights 3, grads 2, master 2, state 4, reduce 2")
-- mixed-16-rem's Adam states in 2 B: fp8-16-rem's follow.
t.is(recipes(edited("mixed-16-rem", "state", "4", "2"))["fp8-16-rem"].state, 2,
  "mixed-16-rem's state bytes carry over")
-- its master remainder dropped (0): so is fp8-16-rem's
t.is(recipes(edited("mixed-16-rem", "master", "2", "0"))["fp8-16-rem"].master, 0,
  "mixed-16-rem's master bytes carry over")
-- an fp8 cache of 2 B (weights 4 in the fp8 recipe): 2 + 2
t.is(recipes(edited("fp8", "weights", "3", "4"))["fp8-16-rem"].weights, 4,
  "the fp8 recipe's cached copy carries over")
