-- A user who scripts gpuplan (round 4): proxies, edited model tables,
-- the catalog's methods and the docs' promises.  Each misuse below was
-- answered with a wrong figure, a Lua runtime error or a doc that said
-- otherwise; it must be refused naming the key and the script's line,
-- and what is accepted must price as the same job given another way.
-- Run with ./gpuplan run tests/lua/luawalk3.t.
local t = require "tap"
local gp = require "gpuplan"

local check = t.raises_here

-- 1. job:step with a proxy layout (keys from an __index function): the
-- C reader listed the table's own keys only, so the proxy's tp = 2 was
-- dropped and the job's TP 1 priced in silence.  It must price exactly
-- as the plain table does (the same C step, so equality is exact).
do
  local job = gp.train_job { model = "llama3-8b", gpu = "h100-sxm", gpus = 8 }
  local plain = job:step { tp = 2 }.step_s
  local one = job:step {}.step_s
  local px = setmetatable({}, { __index = function(_, k) if k == "tp" then return 2 end end })
  t.is(job:step(px).step_s, plain, "train_job:step, a proxy's tp = 2 prices as {tp = 2}")
  t.ok(plain ~= one, "... which differs from TP 1 (the test can fail)")
  local bad = setmetatable({}, { __index = function(_, k) if k == "tp" then return "2" end end })
  check(function() job:step(bad) end, "step.tp must be a number (got string)", "a proxy's value is checked as a plain one")
  local rj = gp.rl_job { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 16, prompts = 64, group = 8,
                         response_len = 2048, response_max = 8192 }
  local z3 = rj:step { zero = 3 }.step_s
  t.is(rj:step(setmetatable({}, { __index = function(_, k) if k == "zero" then return 3 end end })).step_s, z3,
    "rl_job:step, a proxy's zero = 3 prices as {zero = 3}")
end

-- 2. gp.sweep and gp.rl copied their options by pairs: a proxy options
-- table (setmetatable({}, {__index = function ...})) lost every key, and
-- "sweep: gpu is required" / "rl: model is required" was the answer,
-- while gp.train read the same proxy.  Each must read it as the plain
-- table (the same search and step, so the figures are equal exactly).
do
  local function proxy(o) return setmetatable({}, { __index = function(_, k) return o[k] end }) end
  local so = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, top = 1 }
  t.is(gp.sweep(proxy(so)).results[1].step_s, gp.sweep(so).results[1].step_s, "sweep: a proxy's options search as the plain table")
  local ro = { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 16, prompts = 64, group = 8,
               response_len = 2048, response_max = 8192, zero = 3 }
  t.is(gp.rl(proxy(ro)).step_s, gp.rl(ro).step_s, "rl: a proxy's options price as the plain table")
  t.is(gp.rl_job(proxy(ro)):step {}.step_s, gp.rl_job(ro):step {}.step_s, "rl_job: ... and resolve as it")
  -- a chain: the function answers for the table whose metatable holds it
  local seen
  local mid = setmetatable({ gpus = 8 }, { __index = function(self, k) seen = self; return so[k] end })
  local o = setmetatable({ top = 1 }, { __index = mid })
  t.is(gp.sweep(o).results[1].step_s, gp.sweep(so).results[1].step_s, "sweep: a chain ending in a function")
  t.ok(seen == mid, "... whose function is called with its own table, as Lua's __index is")
end

-- 3. A script's model table, edited: gpuplan's Lua reads moe and
-- split_proj before the engine sees the table, so moe = 5 raised
-- "attempt to index a number value (field 'moe')", moe.experts = "x"
-- "attempt to compare number with string" and split_proj = true "attempt
-- to concatenate a boolean value (local 'sp')", in train, memory, rl and
-- sweep.  Each is refused naming the field; moe = false is no MoE.
do
  local cat = gp.catalog()
  local function copy(e) if type(e) ~= "table" then return e end local c = {} for k, v in pairs(e) do c[k] = copy(v) end return c end
  local m = copy(cat:get("models", "deepseek-v3")); m.moe = 5
  for _, f in ipairs { "train", "memory", "rl", "sweep" } do
    check(function() gp[f] { model = m, gpu = "h100-sxm", gpus = 64 } end,
      f .. ": model.moe must be a table {experts =, top_k = ...} (got 5)", f .. ": model.moe = 5")
  end
  m.moe = copy(cat:get("models", "deepseek-v3").moe); m.moe.experts = "x"
  check(function() gp.train { model = m, gpu = "h100-sxm", gpus = 64, ep = 8 } end,
    "train: model.moe.experts must be a number (got string 'x')", "train: model.moe.experts = 'x'")
  local q = copy(cat:get("models", "qwen2-vl-7b")); q.split_proj = true
  check(function() gp.train { model = q, gpu = "h100-sxm", gpus = 8 } end,
    "train: model.split_proj must be one of none, qkv, mlp, both (got true)", "train: model.split_proj = true")
  local l = copy(cat:get("models", "llama3-8b"))
  local base = gp.train { model = l, gpu = "h100-sxm", gpus = 8 }.step_s
  l.moe = false
  t.is(gp.train { model = l, gpu = "h100-sxm", gpus = 8 }.step_s, base, "moe = false prices as no moe (the same step)")
end

-- 4. memory.trainable against memory.params: the reference said only
-- "parameters that train", not that trainable counts the whole model
-- while params is one GPU's share (engine/memory.h: "trainable
-- parameters, whole model").  At TP 2 llama3-8b's params halve (every
-- weight is split by TP in the engine's count: 8,030,261,248 / 2 =
-- 4,015,130,624) while trainable stays the total; ZeRO-3 does not
-- shard params; serving trains nothing.  The reference now says so.
do
  local total = gp.params("llama3-8b").total
  local m = gp.memory { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, tp = 2 }
  t.is(m.trainable, total, "trainable at TP 2 is the whole model's count")
  t.is(m.params * 2, total, "params at TP 2 is one GPU's half")
  t.is(gp.memory { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, zero = 3 }.params, total,
    "params before ZeRO-3's sharding")
  t.is(gp.memory { model = "llama3-8b", gpu = "h100-sxm", method = "infer" }.trainable, 0, "serving: trainable 0")
  local doc = io.open(require("gpuplan.config").root .. "/docs/lua.md"):read("a")
  t.like(doc, "| `trainable` | count | parameters that train, in the whole model, not one GPU's share as params is",
    "docs/lua.md says trainable is the whole model's")
  t.like(doc, "before ZeRO%-3 or FSDP shards them", "... and that params is before ZeRO-3's shards")
end

-- 5. cat:convert: a table for to raised "catalog.lua:346: attempt to
-- concatenate a table value"; an infinite amount converted to inf; a bad
-- currency was quoted as the amount ("(got 3)"); a list {3, "USD"}, as
-- the reference's "{amount, currency}" reads, was "(got a table)"; and an
-- unknown currency named no function and no currency the catalog has.
do
  local cat = gp.catalog()
  local P = { amount = 3, currency = "USD" }
  check(function() cat:convert(P, {}) end, "convert: to must be a currency code (got a table)", "convert: to = {}")
  check(function() cat:convert({ amount = math.huge, currency = "USD" }, "CNY") end,
    "convert: price.amount must be a finite number (got inf)", "convert: an infinite amount")
  check(function() cat:convert({ amount = 3, currency = 5 }, "CNY") end,
    "convert: price.currency must be a currency code (got 5)", "convert: a bad currency is the one quoted")
  check(function() cat:convert({ 3, "USD" }, "CNY") end,
    "convert: price.amount must be a finite number (got nil)", "convert: a list says which field is missing")
  check(function() cat:convert(P, "cny") end,
    "convert: no exchange rate for currency 'cny' (the catalog's: CNY, USD)", "convert: an unknown currency, the known listed")
  -- 3 USD at the catalog's CNY rate (per_usd from its currency entry)
  local a, to = cat:convert(P, "CNY")
  t.is(to, "CNY", "a good conversion still answers")
  t.is(a, 3 * cat:get("currencies", "CNY").per_usd, "... at 3 x per_usd")
  local doc = io.open(require("gpuplan.config").root .. "/docs/lua.md"):read("a")
  t.like(doc, "cat:convert({amount =, currency =}, to)", "docs: convert's price has named fields", true)
end

-- 6. cat:get and cat:ids with a kind the catalog has not ("gpu" for
-- "gpus"): "unknown catalog table 'gpu'" named neither the nearest kind
-- nor the kinds there are.
do
  local cat = gp.catalog()
  check(function() cat:get("gpu", "h100-sxm") end, "unknown catalog table 'gpu' (did you mean 'gpus'?)", "get: the singular")
  check(function() cat:ids("model") end, "unknown catalog table 'model' (did you mean 'models'?)", "ids: the singular")
  check(function() cat:ids() end, "unknown catalog table nil (one of archs, currencies, fabrics, gpus, models, optimizers, prices, recipes, systems)", "ids: no kind lists them")
  t.is(cat:get("gpus", "h100-sxm").id, "h100-sxm", "a good kind still answers")
end

-- 7. gp.prices.buyer(cat, o) called by a script, as documented: with no
-- who its errors began "nil: currency 'XXX' ...", and an o that is no
-- table raised "prices.lua:126: attempt to index a number value".
do
  local cat = gp.catalog()
  check(function() gp.prices.buyer(cat, { currency = "XXX" }) end,
    "prices.buyer: currency 'XXX': no exchange rate in the catalog (CNY, USD)", "buyer: no who, the function named")
  check(function() gp.prices.buyer(cat, 5) end, "prices.buyer: o must be a table {currency =, market =} (got 5)", "buyer: o = 5")
  t.is(gp.prices.buyer(cat, { currency = "CNY" }).market, "cn", "a good buyer still answers (a CNY buyer rents in cn)")
end

-- 8. gp.prices.quote: an unknown id named no price the catalog has
-- ("unknown price 'h100-sxm/guid/us'") and no function; nil was
-- "unknown price 'nil'".  Looked up as cat:get does.
do
  local cat = gp.catalog()
  check(function() gp.prices.quote(cat, "h100-sxm/guid/us") end,
    "prices.quote: unknown price 'h100-sxm/guid/us' (did you mean ", "quote: a misspelt id, the nearest named")
  check(function() gp.prices.quote(cat, nil) end, "prices.quote: price must be an id, a string (got nil)", "quote: no id")
  t.is(gp.prices.quote(cat, "h100-sxm/guide/overseas").id, "h100-sxm/guide/overseas", "a good id still answers")
end

-- 9. gp.validate.percentile reads the nearest rank off the list as
-- given: {3, 1, 2} answered 1 as its median (sorted, it is 2), and a
-- list of strings answered a string, in silence.  Both are refused.
do
  check(function() gp.validate.percentile({ 3, 1, 2 }, 0.5) end,
    "validate.percentile: sorted must be in ascending order (sorted[2] = 1 after 3; table.sort it first)", "percentile: unsorted")
  check(function() gp.validate.percentile({ "a", "b" }, 0.5) end,
    "validate.percentile: sorted[1] must be a number (got string 'a')", "percentile: strings")
  -- nearest rank: ceil(0.5 x 4) = 2nd of {1, 2, 3, 4}
  t.is(gp.validate.percentile({ 1, 2, 3, 4 }, 0.5), 2, "a sorted list still answers (rank ceil(0.5 x 4) = 2)")
end

-- 10. gp.train_job without tokens: its step said train_s = 0 and cost = 0
-- (the engine's "0 = no time/cost"), where gp.train's result has neither
-- -- a loop summing costs over layouts summed zeros.  Both are nil, in
-- the handle and its :table(); with tokens they are gp.train's exactly.
do
  local o = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8 }
  local s = gp.train_job(o):step {}
  t.is(s.train_s, nil, "train_job:step, no tokens: train_s nil, as gp.train's")
  t.is(s.cost, nil, "... and cost nil")
  t.is(s:table().cost, nil, "... in :table() too")
  t.is(gp.train(o).cost, nil, "(gp.train's own: nil)")
  o.tokens = 1e9
  local r, s2 = gp.train(o), gp.train_job(o):step {}
  t.is(s2.train_s, r.train_s, "with tokens: gp.train's train_s exactly")
  t.is(s2.cost, r.cost, "... and its cost")
  t.ok(type(s2.cost) == "number" and s2.cost > 0, "... a positive cost (the test can fail)")
end

-- 11. gp.rl_job's step said gpus = 16.0, a float, where gp.rl's result
-- says 16 (docs/lua.md: a count); tostring and %s showed "16.0".
do
  local o = { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 16, prompts = 64, group = 8,
              response_len = 2048, response_max = 8192, zero = 3 }
  local g = gp.rl_job(o):step {}.gpus
  t.is(math.type(g), "integer", "rl_job:step gpus is an integer")
  t.is(g, gp.rl(o).gpus, "... and gp.rl's")
end

-- 12. gp.vlm.media(model, o), "as gp.vlm.tokens for a model table":
-- gp.vlm.tokens refuses a misspelt key, but media took {imagse = 1} and
-- answered the media of no image (0 tokens), in silence.
do
  local m = gp.catalog():get("models", "qwen2-vl-7b")
  check(function() gp.vlm.media(m, { imagse = 1 }) end, "vlm.media: unknown option 'imagse' (did you mean 'images'?)", "vlm.media: a misspelt key")
  -- 2 images at the tower's 448 px: 256 tokens each (tokens_per_image)
  t.is(gp.vlm.media(m, { images = 2 }).tokens, 512, "a good key still answers: 2 x 256 tokens")
  t.is(gp.vlm.media(m, { images = 2 }).tokens, gp.vlm.tokens { model = "qwen2-vl-7b", images = 2 }.tokens, "... as gp.vlm.tokens")
end

-- 13. gp.infer_plan took gp.infer's gpus and dropped it: gpus = 8 (or 4,
-- or 64) answered the plan's own 32 GPUs, in silence, where the CLI
-- refuses --gpus with --target.  A list of cards was read as one card's
-- table ("gpu: keys must be field names, found a number key").
do
  local o = { model = "deepseek-v3", gpu = "h200-sxm", target = 1e4, itl_max = 0.05 }
  local r = gp.infer_plan(o)
  o.gpus = 8
  check(function() gp.infer_plan(o) end, "infer_plan: gpus does not go with target, as the CLI's --gpus and --target", "infer_plan: gpus refused")
  o.gpus, o.gpu = nil, { "h200-sxm", "h100-sxm" }
  check(function() gp.infer_plan(o) end, "infer_plan: gpu must be one card, an id or a gpu table (got a list)", "infer_plan: a list of cards")
  t.ok(r.gpus > 8, "without gpus the plan still answers (" .. r.gpus .. " GPUs: more than the 8 refused)")
end

-- 14. A script's own recipe or optimizer table (as its gpu and model
-- tables are taken) was refused as "recipe must be a name (got table)":
-- neither the form the other refusals quote a value in nor where such an
-- entry goes.  The message names the catalog file, and that way works:
-- a recipe{} in a directory of the script's, loaded with gp.catalog,
-- prices as the built-in it copies (the same bytes, so the same total).
do
  local cat = gp.catalog()
  local rc = {} for k, v in pairs(cat:get("recipes", "mixed-16")) do rc[k] = v end
  check(function() gp.memory { model = "llama3-8b", gpu = "h100-sxm", recipe = rc } end,
    "recipe must be a name, a string (got a table): a recipe of your own goes in a catalog file's recipe{...}", "memory: a recipe table")
  check(function() gp.train { model = "llama3-8b", gpu = "h100-sxm", optimizer = {} } end,
    "optimizer must be a name, a string (got a table): an optimizer of your own goes in a catalog file's optimizer{...}", "train: an optimizer table")
  local lfs = require "lfs"
  local dir = os.tmpname(); os.remove(dir); assert(lfs.mkdir(dir))
  local f = assert(io.open(dir .. "/r.lua", "w"))
  f:write([[recipe { id = "my-16", name = "mixed-16 again", weights = 2, grads = 2, master = 4, state = 4,
  reduce = 2, activations = 2, offload = 2, source = "a copy of mixed-16" }
]]); f:close()
  local mine = gp.catalog { dirs = { require("gpuplan.config").root .. "/catalog", dir } }
  os.remove(dir .. "/r.lua"); lfs.rmdir(dir)
  t.is(gp.memory { cat = mine, model = "llama3-8b", gpu = "h100-sxm", recipe = "my-16" }.total,
    gp.memory { model = "llama3-8b", gpu = "h100-sxm", recipe = "mixed-16" }.total, "a catalog file's recipe prices as the one it copies")
end

-- 15. gp.render and gp.report without columns took the first row's keys
-- alone: rows {a = 1} and {b = 2} rendered as JSON [{"a":1}, {"a":null}]
-- -- the second row's value lost and a null it never had -- and as CSV
-- a column a with an empty second row.  The columns are every row's keys.
do
  local rows = { { a = 1 }, { b = 2 } }
  t.is(gp.render(rows, { format = "json" }), '[\n {"a":1,"b":null},\n {"a":null,"b":2}\n]\n', "json: each row's own key kept")
  t.is(gp.render(rows, { format = "csv" }), "a,b\n1,\n,2\n", "csv: a column for b")
  -- one row: as before
  t.is(gp.render({ { b = 1, a = 2 } }, { format = "csv" }), "a,b\n2,1\n", "a single row's sorted keys, as before")
end

-- 16. An error inside a column's fmt function was the script's message
-- alone ("x.lua:4: attempt to index a number value"), naming neither
-- render nor the column -- sweep names its where, policy and progress
-- functions.  And sweep described an error object with a __tostring as
-- "an error object that is a table", hiding what it says.
do
  local ok, e = pcall(gp.render, { { a = 1 } }, { columns = { { key = "a", fmt = function(v) return v.x end } } })
  t.ok(not ok and tostring(e):find("render: column 'a': fmt function failed: ", 1, true)
    and tostring(e):find("attempt to index a number value", 1, true), "render: the fmt function's failure names the column (" .. tostring(e) .. ")")
  local obj = setmetatable({}, { __tostring = function() return "my error" end })
  ok, e = pcall(gp.render, { { a = 1 } }, { columns = { { key = "a", fmt = function() error(obj) end } } })
  t.ok(not ok and tostring(e):find("fmt function failed: my error", 1, true), "render: an error object's own words")
  local plain = {}
  ok, e = pcall(gp.render, { { a = 1 } }, { columns = { { key = "a", fmt = function() error(plain) end } } })
  t.ok(not ok and e == plain, "render: any other error object goes on as it is")
  ok, e = pcall(gp.sweep, { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, policy = function() error(obj) end })
  t.ok(not ok and tostring(e):find("sweep: error in the policy function: my error", 1, true), "sweep: an error object's __tostring said")
  t.is(gp.render({ { a = 1 } }, { format = "csv", columns = { { key = "a", fmt = function(v) return v * 2 end } } }), "a\n2\n",
    "a good fmt function still formats")
end

-- 17. gp.options: an unknown option named no parameter ("script: unknown
-- option '--cont'") where gpuplan's own commands name the nearest flag,
-- and a parameter typed with its Lua spelling (--max_n) was "bad option
-- '--max_n'", not saying that flags spell their words with '-' (the
-- commands' flags too: gpuplan train --global_batch).
do
  local function err(params, argv)
    local ok, e = pcall(gp.options, params, argv)
    return not ok and tostring(e) or "no error"
  end
  t.like(err({ count = { "x", 1 } }, { "--cont", "1" }), "unknown option '--cont' (did you mean '--count'?)", "options: the nearest parameter", true)
  t.like(err({ max_n = { "x", 1 } }, { "--max_n", "2" }), "bad option '--max_n' (did you mean '--max-n'?)", "options: --max_n, the flag's spelling", true)
  t.like(err({ max_n = { "x", 1 } }, { "--max_q", "2" }), "bad option '%-%-max_q'$", "options: no such parameter, no suggestion")
  t.is(gp.options({ max_n = { "x", 1 } }, { "--max-n", "2" }).max_n, 2, "the flag's spelling still reads")
end

-- 18. gp.memory{method = "infer"} took any offload: 40, "optimizer" or
-- "bogus" was dropped and the job priced with no layer on the host
-- (fits false, cpu_bytes 0), where fit --method infer refuses all but
-- 'layers'.  Refused; 'layers' and true still offload.
do
  local o = { model = "llama3-70b", gpu = "h100-sxm", gpus = 1, method = "infer" }
  for _, v in ipairs { 40, "optimizer" } do
    o.offload = v
    check(function() gp.memory(o) end, "offload for method infer is 'layers' or a boolean (got ", "memory infer: offload = " .. tostring(v))
  end
  o.offload = "layers"
  local m = gp.memory(o)
  t.ok(m.cpu_layers > 0 and m.cpu_bytes > 0, "offload = 'layers' still puts layers on the host (" .. m.cpu_layers .. ")")
  o.offload = true
  t.is(gp.memory(o).cpu_bytes, m.cpu_bytes, "... as offload = true does")
end

-- 19. A script's own system table: gp.infer and gp.comm take one (checked
-- as a catalog system{...}), but gp.train, gp.rl and gp.sweep refused it
-- ("system must be an id, a string (got a table)"), so a node of one's
-- own needed a catalog file to train on.  A copy of dgx-h100 prices
-- exactly as its id (the same node, so the same figures); an edited one
-- is checked.
do
  local cat = gp.catalog()
  local copy = t.copy
  local sys = copy(cat:get("systems", "dgx-h100"))
  local o = { model = "llama3-8b", gpu = "h100-sxm", gpus = 16 }
  local function with(v) local c = copy(o); c.system = v; return c end
  local a, b = gp.train(with("dgx-h100")), gp.train(with(sys))
  t.is(b.step_s, a.step_s, "train: a system table prices as its id")
  t.is(b.memory.host_system, "dgx-h100", "... and names it as the host's system")
  local ro = { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 16, prompts = 64, group = 8,
               response_len = 2048, response_max = 8192, zero = 3 }
  local r1 = copy(ro); r1.system = "dgx-h100"
  local r2 = copy(ro); r2.system = sys
  t.is(gp.rl(r2).step_s, gp.rl(r1).step_s, "rl: a system table prices as its id")
  local s1, s2 = gp.sweep(with("dgx-h100")), gp.sweep(with(sys))
  t.is(s2.results[1].step_s, s1.results[1].step_s, "sweep: a system table searches as its id")
  t.ok(not table.concat(b.defaults, "; "):find("table: 0x", 1, true), "no address in the defaults")
  local bad = copy(sys); bad.gpu = "a100-sxm-80gb"
  check(function() gp.train(with(bad)) end, "train: system 'dgx-h100' holds a100-sxm-80gb, not h100-sxm", "train: a system table of another card")
  bad = copy(sys); bad.host_memory = "x"
  check(function() gp.train(with(bad)) end, "system 'dgx-h100': field 'host_memory': bad bytes 'x'", "train: a system table's bad field")
end

t.done_testing()
