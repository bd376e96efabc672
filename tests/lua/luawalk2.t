-- A user who scripts gpuplan: extends the catalog from Lua, drives every
-- planner, reads the results and writes files.  Each misuse below was
-- answered with a wrong figure, a Lua runtime error, a table's address or
-- no position; it must be refused naming the key and the script's line,
-- and what is accepted must price as the same job given another way.
-- Run with ./gpuplan run tests/lua/luawalk2.t.
local t = require "tap"
local gp = require "gpuplan"

local check = t.raises_here
local H = "h100-sxm"
local function copy(e) local c = {} for k, v in pairs(e) do c[k] = v end return c end

-- 1. A copy of a catalog entry, edited by the script, carries the entry's
-- _kind and was taken as checked: memory = 0, sms = 0, tdp = "x" and a
-- misspelt mem_bww were priced in silence, and usable_memory = 1e15 took
-- infer's batch from 205 to 2048.  A copy is checked by the schema as a
-- script's own table is; an unedited copy prices as the id does.
do
  local e = gp.catalog():get("gpus", H)
  local g = copy(e); g.usable_memory = 1e15
  check(function() gp.infer { model = "llama3-8b", gpu = g } end, "gpu 'h100-sxm': field 'usable_memory': larger than memory", "infer: an edited copy's usable_memory past its memory")
  g = copy(e); g.memory = 0
  check(function() gp.train { model = "llama3-8b", gpu = g, gpus = 8 } end, "gpu 'h100-sxm': field 'memory': must be positive, got 0", "train: an edited copy's memory = 0")
  g = copy(e); g.mem_bww = 5
  check(function() gp.memory { model = "llama3-8b", gpu = g } end, "field 'mem_bww': unknown field (did you mean 'mem_bw'?)", "memory: an edited copy's misspelt field")
  g = copy(e); g._kind = nil
  -- the catalog's bookkeeping (_file, _line ...) is not a field the
  -- script wrote: a copy without _kind is not refused for _file
  local a, b = gp.train { model = "llama3-8b", gpu = H, gpus = 8 }, gp.train { model = "llama3-8b", gpu = g, gpus = 8 }
  t.is(b.step_s, a.step_s, "an unedited copy (less _kind) gives the id's train step exactly")
  local x, y = gp.infer { model = "llama3-8b", gpu = H }, gp.infer { model = "llama3-8b", gpu = copy(e) }
  t.is(y.tokens_per_s, x.tokens_per_s, "... and an unedited copy the id's infer tokens/s")
  t.is(y.batch, x.batch, "... and its batch")
  -- the live entry itself is still taken as it is (no check per call)
  t.is(gp.train { model = "llama3-8b", gpu = e, gpus = 8 }.step_s, a.step_s, "the catalog's own entry prices as its id")
end

-- 2. A second argument to a planner was dropped in silence:
-- gp.train({...}, {gpus = 4}) priced one GPU.  Every function declared to
-- take one table (gp.X{...}) refuses more, at the script's line.
do
  local L = { model = "llama3-8b", gpu = H }
  check(function() gp.train(L, { gpus = 4 }) end, "train: takes one table of options (gp.train{...}), got 2 arguments", "train: a second table")
  check(function() gp.infer(L, 5) end, "infer: takes one table of options (gp.infer{...}), got 2 arguments", "infer: a second argument")
  check(function() gp.comm({ gpu = H, bytes = 1e6 }, { gpus = 4 }) end, "comm: takes one table", "comm: a second table")
  check(function() gp.sweep({ model = "llama3-8b", gpu = H, gpus = 8 }, { top = 3 }) end, "sweep: takes one table", "sweep: a second table")
  check(function() gp.policy.cheapest({ deadline = "30d" }, { budget = "$5" }) end, "policy.cheapest: takes one table", "policy.cheapest: a second table")
  check(function() gp.memory(L, nil) end, "memory: takes one table of options (gp.memory{...}), got 2 arguments", "memory: a trailing nil is an argument too")
  -- the position is the script's under pcall too (pcall calls the API
  -- function itself: the line is the pcall's)
  local ok, e = pcall(gp.rl, { model = "qwen2.5-7b", gpu = H, gpus = 8 }, 5); local line = debug.getinfo(1, "l").currentline
  t.placed(ok, e, line, "rl: takes one table of options", "rl under pcall: the pcall's line")
  t.is(gp.train(L).gpus, 1, "... and one table is taken")
end

-- 3. gp.catalog{dirs = {...}} with a directory that is not there said
-- "no such directory: x" with no position: neither the script's line nor
-- the function.  A catalog file's own problem still names its file:line.
do
  local s = t.scratch()
  check(function() gp.catalog { dirs = { s.dir .. "/nope" } } end, "catalog: dirs: no such directory: " .. s.dir .. "/nope", "catalog: a missing directory, at the script's line")
  local f = s.put("x.lua", "")
  check(function() gp.catalog { dirs = { f } } end, "catalog: dirs: not a directory: " .. f, "catalog: a file where a directory goes")
  s.put("bad.lua", "gpu { id = 5 }\n")
  local ok, e = pcall(gp.catalog, { dirs = { s.dir } })
  t.like(tostring(e), "^" .. s.dir:gsub("%p", "%%%0") .. "/bad.lua:1: ", "... a file's problem still names the file's line")
  s.remove()
end

-- 4. gp.render and gp.report: a title table raised Lua's "invalid value
-- (table) at index 1 in table for 'concat'"; a column fmt that cannot
-- format its value raised "bad argument #2 to 'format'" naming neither
-- the column nor the fmt; a fmt function's table, or a label table,
-- printed as an address; align = "middle" was taken as the default; and
-- rows keyed by name ({h100 = {...}}) printed an empty table.
do
  local rows = { { a = 1.5, b = "x" } }
  check(function() gp.render(rows, { title = {} }) end, "render: opts.title must be a string (got a table)", "render: a title table")
  check(function() gp.render(rows, { columns = { { key = "a", fmt = "%d" } } }) end, "render: column 'a': fmt '%d' cannot format 1.5 (number has no integer representation)", "render: a fmt that cannot format the value")
  check(function() gp.report(rows, { columns = { { key = "a", fmt = "%s %s" } } }) end, "report: column 'a': fmt '%s %s' cannot format 1.5", "report: a fmt that wants two values")
  check(function() gp.render(rows, { columns = { { key = "a", fmt = function() return {} end } } }) end, "render: column 'a': fmt function returned a table, not a string", "render: a fmt function's table")
  check(function() gp.render(rows, { columns = { { key = "a", label = {} } } }) end, "render: column 1: label must be a string (got a table)", "render: a label table")
  check(function() gp.render(rows, { columns = { { key = "a", align = "middle" } } }) end, "render: column 1: align must be 'left' or 'right' (got string 'middle')", "render: an unknown align")
  check(function() gp.render(rows, { columns = { { key = "a", fmt = 5 } } }) end, "render: column 1: fmt must be a format string or a function(value, row) (got 5)", "render: a fmt number")
  check(function() gp.render({ h100 = { a = 1 } }) end, "render: rows must be a list of tables (got a table with key 'h100')", "render: rows keyed by name")
  -- what is right still renders: the fmt's text, the label, the title
  t.is(gp.render(rows, { title = "T", columns = { { key = "a", label = "A", fmt = "%.2f", align = "left" } } }), "T\nA\n----\n1.50\n", "... a good column renders as before")
  t.is(gp.render(rows, { columns = { { key = "a", fmt = function(v) return v * 2 end } } }), "  a\n---\n3.0\n", "... a fmt function's number is its text")
end

-- 5. gp.json dropped a table's number keys where it had others: {1, 2,
-- x = 3} came out as {"x":3}, {[1.5] = 1} as {}.  A number key is named
-- by its text (JSON's keys are strings, lua-cjson's rule); a key with no
-- JSON name is refused.
do
  t.is(gp.json { 1, 2, x = 3 }, '{"1":1,"2":2,"x":3}', "json: a list with a named key keeps the list")
  t.is(gp.json { [1.5] = 1, [10] = 2 }, '{"1.5":1,"10":2}', "json: number keys are named by their text")
  t.is(gp.json { 1, 2, 3 }, "[1,2,3]", "... a list is still an array")
  t.is(gp.json { b = 1, a = { 2 }, _hidden = 3 }, '{"a":[2],"b":1}', "... and a record an object, its _ keys left out")
  check(function() gp.json { [true] = 1 } end, "cannot encode a table keyed by a boolean as JSON", "json: a boolean key")
  check(function() gp.json { [1] = "a", [3] = "b", ["1"] = "c" } end, 'cannot encode a table with two keys named "1" as JSON', "json: a number and a string key of the same name")
end

-- 6. gp.parse's reference named kinds it has not ("bytes, bandwidth,
-- flops, time, money ..."): gp.parse(s, "flops") and (s, "money") were
-- refused as unknown kinds, naming none it has.
do
  check(function() gp.parse("989TFLOPS", "flops") end, "units.parse: unknown kind 'flops' (one of bandwidth, bytes, compute, link, power, price, time)", "parse: an unknown kind lists the kinds")
  t.is(gp.parse("989TFLOPS", "compute"), 989e12, "parse: compute, as the reference now says")
  t.is(gp.parse("$2/h", "price").amount, 2, "parse: price, as the reference now says")
  local f = assert(io.open("docs/lua.md"))
  local doc = f:read("a")
  f:close()
  t.like(doc, "kind: bytes, bandwidth, link (\"900GB/s bidir\"), compute (\"989TFLOPS\"), power, time or price", "docs/lua.md names the kinds gp.parse has", true)
end

-- 7. gp.params() and gp.params(5) raised the binding's "bad argument #1
-- to 'model_params' (table expected, got nil)": a name the script never
-- wrote.
check(function() gp.params() end, "params: model must be a catalog model id or a model table (got nil)", "params: no model")
check(function() gp.params(5) end, "params: model must be a catalog model id or a model table (got 5)", "params: a number")
t.is(gp.params("llama3-8b").total, gp.params(gp.catalog():get("models", "llama3-8b")).total, "... an id and its table count the same")

-- 8. An id that is not a string: gp.train{system = {}} and nic_fabric =
-- print were "unknown system 'table: 0x55...'" (an address), cat:get's
-- number id was looked up as if misspelt.
do
  local L = { model = "llama3-8b", gpu = H }
  check(function() gp.train(t.with(L, { system = {} })) end, "system must be an id or a system table (got an empty table)", "train: an empty system table (a system table is taken, as comm's: luawalk3.t 19)")
  check(function() gp.train(t.with(L, { system = "dgx-h101" })) end, "unknown system 'dgx-h101' (did you mean", "train: a misspelt system is still suggested")
  check(function() gp.comm { system = 5, bytes = 1 } end, "system must be an id, a string (got 5)", "comm: a number for the system")
  check(function() gp.catalog():get("gpus", 5) end, "gpu must be an id, a string (got 5)", "cat:get: a number id")
  check(function() gp.catalog():get("gpus") end, "gpu must be an id, a string (got nil)", "cat:get: no id")
  check(function() gp.catalog():get("gpus", "h10-sxm") end, "unknown gpu 'h10-sxm' (did you mean", "... a misspelt id is still suggested")
end

-- 9. gp.infer and gp.comm take a system table where an id goes, and
-- took it unchecked: infer{system = {1}} priced as no system at all, and
-- comm{system = {}} said "unknown fabric 'nil'".  It is checked as a
-- catalog system{...} is, and a copy of a catalog system prices as its id.
do
  local sys = gp.catalog():get("systems", "dgx-h100")
  check(function() gp.infer { model = "llama3-8b", gpu = H, system = { 1 } } end, "system: keys must be field names, found a number key (1)", "infer: system = {1}")
  check(function() gp.comm { system = {}, bytes = 1 } end, "system must be an id or a system table (got an empty table)", "comm: system = {}")
  local c = copy(sys); c.gpus = 0
  check(function() gp.comm { system = c, nodes = 2, bytes = 1e8 } end, "system 'dgx-h100': field 'gpus': must be >= 1, got 0", "comm: a copy with gpus = 0")
  t.is(gp.comm { system = copy(sys), nodes = 2, bytes = 1e8 }.time, gp.comm { system = "dgx-h100", nodes = 2, bytes = 1e8 }.time, "comm: a copy of dgx-h100 prices as its id")
  t.is(gp.infer { model = "llama3-70b", gpu = H, system = copy(sys), tp = 8 }.tokens_per_s, gp.infer { model = "llama3-70b", gpu = H, system = "dgx-h100", tp = 8 }.tokens_per_s, "infer: ... and so does it serving")
end

-- 10. gp.sweep's where is a predicate, function(candidate) -> boolean,
-- and its answer was taken by truth: "no" or 1 kept every candidate, and
-- a function that forgot its return (nil) dropped them all -- no row, no
-- word.
do
  local S = { model = "llama3-8b", gpu = H, gpus = 8, top = 2 }
  check(function() gp.sweep(t.with(S, { where = function() return "no" end })) end, "sweep: where must return true or false (got string 'no')", "sweep: where returns a string")
  check(function() gp.sweep(t.with(S, { where = function(c) local _ = c.tp <= 2 end })) end, "sweep: where must return true or false (got nil)", "sweep: where forgot its return")
  local r = gp.sweep(t.with(S, { where = function(c) return c.tp <= 2 end }))
  local ok = #r.results > 0
  for _, x in ipairs(r.results) do ok = ok and x.tp <= 2 end
  t.ok(ok, "... a boolean where still keeps what it says")
  t.is(#gp.sweep(t.with(S, { where = function() return false end })).results, 0, "... and false drops every candidate")
end

-- 11. gp.sweep's policy: a callable table (a __call metatable) was
-- merged as a policy table of no fields -- ranked by time, never called;
-- a policy table's other fields (gpus = 16) were dropped where the
-- options gave them too; scaling = "no" was true to the search.
do
  local S = { model = "llama3-8b", gpu = H, gpus = 8, top = 2 }
  local calls = 0
  local by_gpus = setmetatable({}, { __call = function(_, c) calls = calls + 1 return -c.tp end })
  local r = gp.sweep(t.with(S, { policy = by_gpus }))
  t.ok(calls > 0 and r.results[1].tp == 8, "sweep: a callable table is called as the policy (widest TP first)")
  check(function() gp.sweep(t.with(S, { policy = { gpus = 16 } })) end, "sweep: policy: unknown field 'gpus' (a gp.policy.* table has key, deadline and budget)", "sweep: a policy table's stray field")
  check(function() gp.sweep(t.with(S, { scaling = "no" })) end, "sweep: scaling must be a boolean (got string 'no')", "sweep: scaling = 'no'")
  t.is(gp.sweep(t.with(S, { policy = { key = "gpus" } })).key, "gpus", "... a policy table of gp.policy's fields is taken")
  t.is(gp.sweep(t.with(S, { scaling = false })).results[1].scaling, nil, "... and scaling = false skips the efficiency")
end

-- 12. A table or a function where a name goes was quoted by its address,
-- different every run: method = {} "unknown method 'table: 0x55...'",
-- kv = {}, runtime = {}, nccl = {}, comm's nodes = {}, sweep's shard =
-- {}, and currency = print "currency a function: no exchange rate".
do
  local L = { model = "llama3-8b", gpu = H }
  check(function() gp.train(t.with(L, { method = {} })) end, "train: method must be a name, a string (got a table)", "train: method = {}")
  check(function() gp.memory(t.with(L, { precision = print })) end, "memory: precision must be a name, a string (got a function)", "memory: precision = print")
  check(function() gp.infer(t.with(L, { kv = {} })) end, "infer: kv must be a name, a string (got a table)", "infer: kv = {}")
  check(function() gp.infer(t.with(L, { currency = print })) end, "infer: currency must be a name, a string (got a function)", "infer: currency = print")
  check(function() gp.infer(t.with(L, { runtime = {} })) end, "infer: runtime must be a name, a string (got a table)", "infer: runtime = {}")
  check(function() gp.comm { gpu = H, bytes = 1, nccl = {} } end, "(got a table)", "comm: nccl = {}")
  check(function() gp.comm { gpu = H, bytes = 1, nodes = {} } end, "comm: nodes must be an integer (got a table)", "comm: nodes = {}")
  check(function() gp.sweep { model = "llama3-8b", gpu = H, gpus = 8, shard = {} } end, "sweep: shard must be a string 'K/N' (got a table)", "sweep: shard = {}")
  -- the lists Lua takes where the CLI takes a name stay taken
  t.ok(pcall(gp.train, t.with(L, { gpus = 8, recompute_modules = { "layernorm" } })), "... recompute_modules as a list is taken")
  t.ok(pcall(gp.sweep, { model = "llama3-8b", gpu = H, gpus = 8, top = 1, recompute = { "full", "none" } }), "... plan's list of recompute policies is taken")
  t.ok(pcall(gp.sweep, { model = "llama3-8b", gpu = H, gpus = 8, top = 1, policy = function() return 1 end }), "... and a policy function is taken")
end

-- 13. A script that returns NaN was told "returned -nan, not an exit
-- status" (the C library's spelling on this platform): NaN, as every
-- other message spells it.
do
  local s = t.scratch()
  local f = s.put("nan.lua", "return 0/0\n")
  local p = assert(io.popen("./gpuplan run " .. f .. " 2>&1; echo rc=$?"))
  local out = p:read("a")
  p:close()
  t.like(out, "returned NaN, not an exit status 0..255\nrc=1\n", "run: a NaN return is spelt NaN, exit 1", true)
  s.remove()
end

-- 14. gp.options: a number in arg raised "cli.lua:95: attempt to index a
-- number value" from inside gpuplan; a parameter no command line can give
-- (named 1 or "bad name") and a default no option carries (a table,
-- returned as it was while --n x gave a string) were taken in silence.
do
  check(function() gp.options({ n = { "a count", 1 } }, { 1, 2 }) end, "gp.options: arg[1] must be a string, as the command line's are (got 1)", "options: a number in arg")
  check(function() gp.options({ n = { "a list", {} } }, {}) end, "gp.options: parameter 'n': default must be a number, a string or a boolean (got a table)", "options: a table default")
  check(function() gp.options({ ["bad name"] = { "x", 1 } }, {}) end, "gp.options: parameter name 'bad name' must be a word", "options: a name with a space")
  check(function() gp.options({ { "x", 1 } }, {}) end, "gp.options: parameter name 1 must be a word", "options: a list for params")
  local v = gp.options({ n = { "a count", 1 }, dry = { "no run", false } }, { "--n", "3", "--dry", "rest" })
  t.ok(v.n == 3 and v.dry == true and v[0][1] == "rest", "... good parameters still parse")
end

-- 15. gp.memory{method = "infer"}.params was the weights' bytes, not the
-- parameters its field declares (unit count): llama3-8b in bf16 gave
-- 16.06e9 "params", in int4 5.73e9.  The parameters one GPU holds, as
-- training's params is: the whole model on one GPU is gp.params' total
-- (8,030,261,248, exact: the same elements summed), whatever the format.
do
  local total = gp.params("llama3-8b").total
  for _, w in ipairs { "bf16", "fp8", "int4" } do
    local m = gp.memory { model = "llama3-8b", gpu = H, method = "infer", weights = w }
    t.is(m.params, total, "memory infer " .. w .. ": params is the model's parameter count")
  end
  local one = gp.memory { model = "llama3-8b", gpu = H, method = "full" }
  t.is(one.params, total, "... as training's params on one GPU is")
  -- TP 2 holds half of each layer and of the embedding and head: the
  -- parameters one GPU holds, halved (norms too: the engine's split)
  local m2 = gp.memory { model = "llama3-8b", gpu = H, method = "infer", gpus = 2, tp = 2 }
  t.near(m2.params, total / 2, 1e-12, "memory infer tp 2: half the parameters on each GPU")
end

-- 16. A catalog price id names an offer for one card: gp.train{gpu =
-- "h100-sxm", price = "a100-sxm-80gb/guide/cn"} priced the H100s at the
-- A100 guide's 14 CNY/h, in silence (gpuplan train --price alike).
do
  local L = { model = "llama3-8b", gpu = H, gpus = 8, tokens = 1e9 }
  check(function() gp.train(t.with(L, { price = "a100-sxm-80gb/guide/cn" })) end, "train: price 'a100-sxm-80gb/guide/cn' is an offer for a100-sxm-80gb, not h100-sxm", "train: another card's offer")
  check(function() gp.infer { model = "llama3-8b", gpu = H, price = "a100-sxm-80gb/guide/cn" } end, "price 'a100-sxm-80gb/guide/cn' is an offer for a100-sxm-80gb, not h100-sxm", "infer: another card's offer")
  -- the card's own offer is its price: h100-sxm/guide/overseas is $3.00/h
  local r = gp.train(t.with(L, { price = "h100-sxm/guide/overseas" }))
  t.ok(r.price == 3 and r.currency == "USD", "... the card's own offer is taken ($3.00/h)")
end

-- 17. gp.units' amount formats: fmt_amount(0/0) printed C's "-nan" here
-- (units.fmt says "nan"); min_dec = 100 raised string.format's "invalid
-- conversion specification: '%.100f'", naming neither function nor
-- argument; past_fmt(x) without a limit raised "bad argument #2 to
-- 'format'" from inside gpuplan.
do
  t.is(gp.units.fmt_amount(0 / 0), "nan", "fmt_amount: NaN is nan")
  t.is(gp.units.fmt_amount(-math.huge), "-inf", "fmt_amount: -inf")
  check(function() gp.units.fmt_amount(1, 100) end, "units.amount_fmt: min_dec must be a whole number of decimals 0..99 (got 100)", "fmt_amount: min_dec past format's limit")
  check(function() gp.units.past_fmt(1.0001) end, "units.past_fmt: limit must be a number (got nil)", "past_fmt: no limit")
  check(function() gp.units.fmt_amount("x") end, "units.fmt_amount: x must be a number (got string 'x')", "fmt_amount: a string")
  -- 1234.5 shows no decimals (>= 10: the minimum, 0); 0.0712 two
  -- significant digits (d = 1 - floor(log10 0.0712) = 3)
  t.is(gp.units.fmt_amount(1234.5), "1234", "... fmt_amount(1234.5) is still %.0f (round half to even: 1234)")
  t.is(gp.units.fmt_amount(0.0712), "0.071", "... and 0.0712 still two significant digits")
end

-- 18. gp.prices.cheapest(cat, "h10") -- a misspelt card -- and
-- cheapest(cat) answered nil, as a card with no offer does.  They are
-- refused; a card with no offer in the market asked still answers nil,
-- and a planner's own gpu table (no catalog id) still prices by offer.
do
  local cat = gp.catalog()
  check(function() gp.prices.cheapest(cat, "h10") end, "unknown gpu 'h10' (did you mean", "prices.cheapest: a misspelt card")
  check(function() gp.prices.cheapest(cat) end, "prices.cheapest: gpu must be a GPU id (got nil)", "prices.cheapest: no card")
  check(function() gp.prices.cheapest(cat, H, { curency = "CNY" }) end, "prices.cheapest: opts: unknown option 'curency'", "... a misspelt option is still named")
  t.is(gp.prices.cheapest(cat, "h800-sxm", { market = "us" }), nil, "... h800-sxm has no us offer: nil")
  t.is(gp.prices.cheapest(cat, H).id, "h100-sxm/aiapiplaybook/global", "... and h100-sxm's cheapest is found ($1.80/h)")
  local g = copy(cat:get("gpus", H)); g.id = "my-h100"
  t.ok(pcall(gp.train, { model = "llama3-8b", gpu = g, gpus = 8, tokens = 1e9 }), "... a script's own card with no offer still trains")
end

-- 19. An options table that inherits its base (setmetatable(o, {__index
-- = base})): gp.train, gp.infer and gp.memory read the base through
-- __index, but gp.sweep and gp.rl copied the table by pairs and lost it --
-- a base's gpus = 64 searched 8 GPUs, zero = 3 priced ZeRO 0 -- and no
-- planner checked an inherited key's name (tpp = 2 was ignored).
do
  local function inherit(o, base) return setmetatable(o, { __index = base }) end
  local s = gp.sweep(inherit({ model = "llama3-8b", gpu = H, top = 1 }, { gpus = 64, tokens = 1e9 }))
  local d = gp.sweep { model = "llama3-8b", gpu = H, top = 1, gpus = 64, tokens = 1e9 }
  t.ok(s.results[1].gpus == 64 and s.results[1].days == d.results[1].days, "sweep: the base's gpus and tokens are the search's")
  local r = gp.rl(inherit({ model = "qwen2.5-7b", gpu = H }, { gpus = 16, zero = 3 }))
  t.ok(r.zero == 3 and r.step_s == gp.rl { model = "qwen2.5-7b", gpu = H, gpus = 16, zero = 3 }.step_s, "rl: the base's zero = 3 is priced, as given directly")
  check(function() gp.train(inherit({}, { model = "llama3-8b", gpu = H, gpus = 8, tpp = 2 })) end, "train: unknown option 'tpp' (did you mean 'tp'?)", "train: an inherited misspelt key")
  -- the nearest wins, as __index reads it; an __index function still reads
  local near = gp.train(inherit({ tp = 2 }, inherit({ tp = 4 }, { model = "llama3-8b", gpu = H, gpus = 8 })))
  t.is(near.step_s, gp.train { model = "llama3-8b", gpu = H, gpus = 8, tp = 2 }.step_s, "... the nearest table's tp wins")
  local viafn = gp.train(setmetatable({ gpus = 8 }, { __index = function(_, k) return ({ model = "llama3-8b", gpu = H })[k] end }))
  t.is(viafn.gpus, 8, "... and an __index function is still read")
end

-- 20. gp.roofline's op: an fp32 GEMM on h100-sxm (an fp32 peak of 67
-- TFLOPS, no achievable.gemm.fp32) was refused as "device has no fp32
-- compute", which the same op without its shape contradicted (it ran at
-- 67 TFLOPS); and the reference did not say that an op without m, n, k
-- is priced on the vector units whatever its prec.
do
  local vec = gp.roofline { gpu = H, op = { flop = 1e12, bytes = 1e9, prec = "fp32" } }.op
  t.is(vec.compute_rate, 67e12, "roofline: an op without a shape runs at the fp32 peak (67 TFLOPS)")
  check(function() gp.roofline { gpu = H, op = { flop = 1e12, bytes = 1e9, prec = "fp32", m = 8192, n = 8192, k = 8192 } } end, "roofline: op: device has no fp32 GEMM rate (no achievable.gemm.fp32)", "roofline: an fp32 GEMM names the missing GEMM fraction")
  local f = assert(io.open("docs/lua.md"))
  local doc = f:read("a")
  f:close()
  t.like(doc, "an op without m, n and k is no GEMM: it runs on the fp32 vector units", "docs/lua.md says where an op without a shape runs", true)
end

-- 21. A script's model table: the engine checks its shape, but max_seq
-- is read by gpuplan's Lua (defaults, context limits) and was read
-- unchecked: max_seq = "4096" raised "attempt to compare number with
-- string" from gp.train and gp.infer, 2.5 "bad argument #5 to 'format'",
-- and 0 was priced (gp.memory's ctx=0).
do
  local base = gp.catalog():get("models", "llama3-8b")
  local function m(ms) local c = copy(base); c.max_seq = ms return c end
  check(function() gp.train { model = m("4096"), gpu = H, gpus = 8, method = "pretrain" } end, "train: model.max_seq must be a whole number of tokens >= 1 (got string '4096')", "train: a string max_seq")
  check(function() gp.infer { model = m(2.5), gpu = H } end, "infer: model.max_seq must be a whole number of tokens >= 1 (got 2.5)", "infer: a fractional max_seq")
  check(function() gp.memory { model = m(0), gpu = H, method = "infer" } end, "memory: model.max_seq must be a whole number of tokens >= 1 (got 0)", "memory: max_seq 0")
  check(function() gp.rl { model = m(0 / 0), gpu = H, gpus = 8 } end, "rl: model.max_seq must be a whole number of tokens >= 1 (got NaN)", "rl: a NaN max_seq")
  check(function() gp.sweep { model = m(-1), gpu = H, gpus = 8 } end, "model.max_seq must be a whole number of tokens >= 1 (got -1)", "sweep: a negative max_seq")
  t.is(gp.train { model = m(8192), gpu = H, gpus = 8 }.step_s, gp.train { model = "llama3-8b", gpu = H, gpus = 8 }.step_s, "... the catalog's own max_seq (8192) prices as the id")
end

-- 22. gp.vlm.plan of a text model (llama3-8b) planned it as a
-- vision-language fine-tune with vision_s 0 in every row, in silence;
-- tps = 5 was "vlm.plan: 5 must be a list", naming no key.
do
  check(function() gp.vlm.plan { model = "llama3-8b", gpu = H, gpus = 8 } end, "vlm.plan: llama3-8b has no vision tower", "vlm.plan: a text model")
  check(function() gp.vlm.plan { model = "qwen2-vl-7b", gpu = H, gpus = 8, tps = 5 } end, "vlm.plan: tps must be a list (got 5)", "vlm.plan: tps names its key")
  t.ok(#gp.vlm.plan { model = "qwen2-vl-7b", gpu = H, gpus = 8, tps = { 1, 2 } } > 0, "... a vision-language model still plans")
end

-- 23. gp.rl's steps took half a step (0.5: "run: 0 steps in 0.0045
-- hours" on the command line) and 2^63 of them (a 1.2e18 USD run): a
-- whole count now, as every count is.
do
  local R = { model = "qwen2.5-7b", gpu = H, gpus = 8, zero = 3 }
  check(function() gp.rl(t.with(R, { steps = 0.5 })) end, "rl: steps must be a whole number 1..16777216 (got 0.5)", "rl: half a step")
  check(function() gp.rl(t.with(R, { steps = math.maxinteger })) end, "rl: steps must be a whole number 1..16777216", "rl: 2^63 steps")
  -- 10 steps: hours = 10 x step_s / 3600 (rl.lua run_steps), exact
  local r = gp.rl(t.with(R, { steps = 10 }))
  t.near(r.hours, 10 * r.step_s / 3600, 1e-12, "... 10 steps still cost 10 steps' hours")
end

-- 24. gp.model_from_hf's image_size = 448.0 -- a whole float, as
-- gpus = 8.0 is taken everywhere -- was refused as "must be an integer",
-- and a table quoted by its address.
do
  local a = gp.model_from_hf("tests/fixtures/hf/qwen2-vl-7b.json", { image_size = 448.0 })
  local b = gp.model_from_hf("tests/fixtures/hf/qwen2-vl-7b.json", { image_size = 448 })
  t.ok(a.vision.image_size == 448 and math.type(a.vision.image_size) == "integer" and a.vision.tokens_per_image == b.vision.tokens_per_image, "model_from_hf: image_size 448.0 is 448")
  check(function() gp.model_from_hf("tests/fixtures/hf/qwen2-vl-7b.json", { image_size = {} }) end, "model_from_hf: opts.image_size must be an integer in 1..16777216 (got a table)", "model_from_hf: a table image_size")
  check(function() gp.model_from_hf("tests/fixtures/hf/qwen2-vl-7b.json", { image_size = 448.5 }) end, "(got 448.5)", "... and 448.5 is still refused")
end

-- 20. job:step(layout) reads a layout's inherited keys as gp.train does
-- (its C reader walked raw keys: setmetatable({}, {__index = {tp = 2}})
-- priced TP 1, 4.09 s against TP 2's 4.93 s for Llama 3 8B on 8 H100), and
-- checks their names; gp.rl_job's step likewise (zero 3 on 16: 20.13 s
-- at TP 1 against 22.94 s at TP 2).  The same train_step either way: exact.
do
  local function inherit(o, base) return setmetatable(o, { __index = base }) end
  local j = gp.train_job { model = "llama3-8b", gpu = H, gpus = 8, seq = 2048 }
  local tp2, tp1 = j:step { tp = 2 }.step_s, j:step {}.step_s
  t.ok(tp2 ~= tp1, "job:step: TP 2 and TP 1 differ (the test can fail)")
  t.is(j:step(inherit({}, { tp = 2 })).step_s, tp2, "job:step: an inherited tp = 2 is TP 2's step")
  t.is(j:step(inherit({ tp = 2 }, { tp = 4 })).step_s, tp2, "job:step: the nearest table's tp wins")
  check(function() j:step(inherit({}, { tpp = 2 })) end, "step: unknown option 'tpp' (did you mean 'tp'?)",
    "job:step: an inherited misspelt key")
  local rj = gp.rl_job { model = "qwen2.5-7b", gpu = H, gpus = 16, zero = 3, steps = 10 }
  local r2, r1 = rj:step { tp = 2 }:table().step, rj:step {}:table().step
  t.ok(r2 ~= r1, "rl_job:step: TP 2 and TP 1 differ")
  t.is(rj:step(inherit({}, { tp = 2 })):table().step, r2, "rl_job:step: an inherited tp = 2 is TP 2's step")
end

-- 21. Small silent answers, now said.
do
  local cat = gp.catalog()
  -- prices.rate names both currencies: rate(cat) and rate(cat, nil, "CNY")
  -- were "" (ipairs of {nil, "CNY"} stopped at the nil); USD to USD is
  -- still no conversion, ""
  check(function() gp.prices.rate(cat) end, "prices.rate: from must be a currency code (got nil)",
    "prices.rate(cat): refused, naming from")
  check(function() gp.prices.rate(cat, "CNY") end, "prices.rate: to must be a currency code (got nil)",
    "prices.rate(cat, 'CNY'): refused, naming to")
  t.is(gp.prices.rate(cat, "USD", "USD"), "", "prices.rate USD to USD: no rate, as before")
  -- units.oneline of a table gave its address ("table: 0x...")
  check(function() gp.units.oneline({}) end, "units.oneline: s must be a string (got a table)",
    "units.oneline({}): refused")
  t.is(gp.units.oneline("a\nb"), "a\\nb", "units.oneline of a string: its newline escaped")
  -- gp.catalog's second argument was dropped in silence
  check(function() gp.catalog({}, 5) end,
    "catalog: takes nothing or one table ({dirs = {...}}), got 2 arguments", "gp.catalog({}, 5): refused")
  -- origin(nil) and currency_of(cat, 5) are nil by design (a card with no
  -- offer: scripts/guide.lua's market cell; a bare number names no
  -- currency): the reference says so now
  local api = {}
  for _, f in ipairs(require("gpuplan.api").FUNCTIONS) do api[f.name] = f.help end
  t.ok(gp.prices.origin(nil) == nil and api["gp.prices.origin"]:find("nil for nil", 1, true),
    "prices.origin(nil): nil, as its reference says")
  t.ok(gp.prices.currency_of(cat, 5) == nil and api["gp.prices.currency_of"]:find("a bare number", 1, true),
    "prices.currency_of(cat, 5): nil, as its reference says")
  -- a roofline op that moves no bytes: no finite intensity (was 0, the
  -- least intense op); with no FLOP either, none.  1e12 FLOP over 1e9 B is
  -- 1000 FLOP/B (exact).
  local function inten(flop, bytes) return gp.roofline { gpu = H, op = { flop = flop, bytes = bytes } }.op.intensity end
  t.is(inten(1e12, 0), math.huge, "roofline op, bytes 0: intensity infinite")
  t.is(inten(0, 0), nil, "roofline op, no FLOP and no bytes: no intensity")
  t.is(inten(1e12, 1e9), 1000.0, "roofline op, 1e12 FLOP over 1e9 B: 1000 FLOP/B")
end

t.done_testing()
