-- Hardening round 80, the Lua surface: gp.* calls whose bad input raised
-- inside gpuplan (a lua/gpuplan/*.lua position, "attempt to index"),
-- named a key the call never wrote, or was taken in silence.  Each check
-- must raise at this script's line (t.raises_here: "<this file>:<line>: "
-- and no lua/gpuplan/ path) with the text given, and fails on the tree
-- before its fix.  No figure is priced here: every check is a message.
-- Run with ./gpuplan run tests/lua/harden80lua.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(31)

local H = "h100-sxm"
local here = t.raises_here
local cat = gp.catalog()

-- 1. A catalog method called with a dot: cat.get("gpus", id) read "gpus"
-- as the catalog ("unknown catalog table 'h100-sxm'"), cat.get(nil, ...)
-- raised catalog.lua's "attempt to index a nil value (local 'cat')".
here(function() cat.get("gpus", H) end,
  "cat:get: the catalog comes first: call it with a colon, cat:get(kind, id) (got string 'gpus' "
    .. "for the catalog)", "cat.get with a dot: the call to write")
here(function() cat.ids(nil) end,
  "cat:ids: the catalog comes first: call it with a colon, cat:ids(kind) (got nil",
  "cat.ids(nil): no runtime error of catalog.lua")
here(function() cat.convert({ amount = 1, currency = "USD" }, "CNY") end,
  "cat:convert: the catalog comes first", "cat.convert(price, to): the price is no catalog")
-- A stand-in that borrows a method beside its own settings is still one
-- (tests/lua/prices.t builds such a catalog), and so is one inheriting.
do
  local borrowed = { settings = cat.settings, currencies = cat.currencies, convert = cat.convert }
  local ok = pcall(borrowed.convert, borrowed, { amount = 1, currency = "USD" }, "USD")
  local inherit = setmetatable({}, { __index = cat })
  t.ok(ok and inherit:get("gpus", H).id == H, "a borrowing or inheriting catalog still works")
end

-- 2. gp.rl hands its capacity to the rollout engine as infer's memory:
-- 100GiB on an 80GiB card was refused as "rl: rollout: memory ...".
local RL = { model = "qwen2.5-7b", gpu = H, gpus = 8, prompts = 64, group = 8,
  prompt_len = 512, response_len = 2048, capacity = "100GiB" }
here(function() gp.rl(RL) end,
  "rl: rollout: capacity 107.374GB (100GiB) is more than h100-sxm's 80GiB",
  "rl: capacity past the card named as capacity")
-- gp.memory's RL methods size the same rollout engine
here(function() gp.memory(t.with(RL, { method = "grpo" })) end,
  "memory: rollout: capacity 107.374GB (100GiB)", "memory grpo: capacity named as capacity")

-- 3. gp.units' duration_unit and amount_fmt took any value: "3" answered
-- 1, "days", {} the format "%.0f".
here(function() gp.units.duration_unit("3") end,
  "units.duration_unit: days must be a number (got string '3')", "duration_unit('3') refused")
here(function() gp.units.amount_fmt({}) end,
  "units.amount_fmt: x must be a number (got a table)", "amount_fmt({}) refused")
do
  -- 0.01 days is 14.4 minutes: below an hour (1/24 day), so minutes,
  -- 1440 a day; 0.071 shows two significant digits, "%.3f"
  local k, u = gp.units.duration_unit(0.01)
  t.ok(k == 1440 and u == "minutes" and gp.units.amount_fmt(0.071) == "%.3f",
    "numbers still format: " .. tostring(k) .. " " .. tostring(u))
end

-- 4. gp.json named no place: one function inside a train result read
-- "cannot encode a function as JSON".
do
  local r = gp.train { model = "llama3-8b", gpu = H, gpus = 8 }
  r.layout = print
  here(function() gp.json(r) end, "cannot encode a function as JSON (at layout)",
    "json: the field that cannot be encoded")
  here(function() gp.json { 1, { a = { print } } } end,
    "cannot encode a function as JSON (at [2].a[1])", "json: a nested path")
end

-- 5. gp.comm's topology.nodes = -1 was refused as "gpus -8: a collective
-- needs >= 2 gpus", a gpus the call never gave.
do
  local topo = { gpus_per_node = 8, nodes = -1, up_kind = "nvlink", up_bw = "450GB/s per-dir",
    up_latency = "0.6us" }
  here(function() gp.comm { topology = topo, bytes = 2 ^ 20 } end,
    "comm: topology.nodes must be an integer in 1..16777216 (got -1)", "topology.nodes -1 named")
  topo.nodes, topo.gpus_per_node = 1, 0
  here(function() gp.comm { topology = topo, bytes = 2 ^ 20 } end,
    "comm: topology.gpus_per_node must be an integer in 1..16777216 (got 0)",
    "topology.gpus_per_node 0 with its value")
  -- A whole float past 2^63 has no integer: up_mesh_peers = 1e300 read
  -- as left out (priced the node's own mesh), topology.nodes = 1e300
  -- reached the binding ("bad argument #4 to 'gpuplan.core.comm_cost'").
  topo.gpus_per_node, topo.nodes = 8, 1e300
  here(function() gp.comm { topology = topo, bytes = 2 ^ 20 } end,
    "comm: topology.nodes must be an integer (got 1e+300)", "topology.nodes 1e300 named")
  here(function() gp.comm { system = "dgx-h100", bytes = 2 ^ 20, up_mesh_peers = 1e300 } end,
    "comm: up_mesh_peers must be an integer (got 1e+300)", "up_mesh_peers 1e300 not dropped")
end

-- 6. gp.infer_plan read its cat before gp.infer's check: cat = true
-- raised serve.lua's "attempt to index a boolean value (local 'cat')".
here(function() gp.infer_plan { model = "llama3-8b", gpu = H, target = 1000, cat = true } end,
  "infer_plan: cat must be a catalog, as gp.catalog() returns (got true)", "infer_plan: cat = true")

-- 7. A LoRA run's precision was never read by name: "zzz", true or NaN
-- planned bf16; so was any precision beside a given recipe.
local LORA = { model = "llama3-8b", gpu = H, method = "lora" }
here(function() gp.memory(t.with(LORA, { precision = "zzz" })) end,
  "memory: unknown precision 'zzz' (expected bf16|fp16|fp8|fp32|tf32)", "lora: precision 'zzz'")
here(function() gp.memory(t.with(LORA, { precision = 0 / 0 })) end,
  "memory: unknown precision NaN", "lora: precision NaN")
local FULL = { model = "llama3-8b", gpu = H, precision = "zzz", recipe = "mixed-16" }
here(function() gp.memory(FULL) end,
  "memory: unknown precision 'zzz'", "a recipe given: precision still checked")

-- 8. A training step's options with method infer were read by nothing,
-- whatever their value.
local INF = { model = "llama3-8b", gpu = H, method = "infer" }
here(function() gp.memory(t.with(INF, { stage_layers = true })) end,
  "memory: stage_layers applies to training, not method infer", "infer: stage_layers")
here(function() gp.memory(t.with(INF, { eager_norm = true })) end,
  "memory: eager_norm applies to training, not method infer", "infer: eager_norm")
here(function() gp.memory(t.with(INF, { act_bytes = 0.5 })) end,
  "memory: act_bytes applies to training, not method infer", "infer: act_bytes")

-- 9. gp.vlm: a bad cat raised vlm.lua's own runtime error; a model table
-- without an id read "nil has no vision tower".
here(function() gp.vlm.plan { model = "qwen2-vl-7b", gpu = H, cat = true } end,
  "vlm.plan: cat must be a catalog, as gp.catalog() returns (got true)", "vlm.plan: cat = true")
here(function() gp.vlm.tokens { model = "qwen2-vl-7b", images = 1, cat = {} } end,
  "vlm.tokens: cat must be a catalog, as gp.catalog() returns (got a table)",
  "vlm.tokens: cat = {}")
here(function() gp.vlm.tokens { model = {}, images = 1 } end,
  "vlm.tokens: the model table has no vision tower", "vlm.tokens: a model table without an id")

-- 10. lora_targets "q,q" priced "q" in silence.
here(function() gp.memory(t.with(LORA, { lora_targets = "q,q" })) end,
  "memory: lora_targets names 'q' twice", "lora_targets: a target twice")

-- 11. gp.prices.buyer read a misspelt key as absent.
here(function() gp.prices.buyer(cat, { currancy = "CNY" }) end,
  "prices.buyer: o: unknown option 'currancy' (did you mean 'currency'?)",
  "prices.buyer: a misspelt key")
t.is(gp.prices.buyer(cat, { currency = "CNY" }).currency, "CNY", "prices.buyer: currency read")

-- 12. gp.options: a parameter's field beside {description, default}.
here(function() gp.options({ n = { "count", 1, type = "int" } }, {}) end,
  "gp.options: parameter 'n': unknown field 'type' (a parameter is {description, default})",
  "gp.options: a field beside the default")

-- 13. gp.policy.monthly{budgett = ...} was told "budget is required".
here(function() gp.policy.monthly { budgett = 1000 } end,
  "policy.monthly: unknown option 'budgett' (did you mean 'budget'?)",
  "policy.monthly: the misspelling named")
here(function() gp.policy.monthly {} end,
  "policy.monthly{budget = ...}: budget is required", "policy.monthly: still required")
