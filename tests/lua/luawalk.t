-- A researcher's misuse of the Lua API, found by walking every gp.*
-- function with wrong types, misspelt keys, absurd numbers and user
-- entries: each must be refused naming the key and the script's line
-- (never a line inside gpuplan, never a Lua runtime error), and what is
-- accepted must be answered as the same job elsewhere.
-- Run with ./gpuplan run tests/lua/luawalk.t.
local t = require "tap"
local gp = require "gpuplan"

local me = debug.getinfo(1, "S").short_src

-- The misuse placed at this script's line (tap's placed and raises_here:
-- the error names the line, never a gpuplan file).
local placed, check = t.placed, t.raises_here

local H = "h100-sxm"

-- 1. gp.rl under pcall named no line at all ("rl: gpus must be ..."):
-- its error(msg, 2) pointed at pcall, a C function; gp.train's and
-- gp.infer's name the pcall's line.
do
  local ok, e = pcall(gp.rl, { model = "qwen2.5-7b", gpu = H, gpus = 8.5 }); local line = debug.getinfo(1, "l").currentline
  placed(ok, e, line, "rl: gpus must be a whole number 1..16777216 (got 8.5)", "rl under pcall names the script's line")
  ok, e = pcall(gp.rl_job, { model = "qwen2.5-7b", gpu = H, gpus = 0 }); line = debug.getinfo(1, "l").currentline
  placed(ok, e, line, "rl: gpus must be a whole number", "rl_job under pcall names the script's line")
end

-- 2. A user GPU table of an unknown arch: gp.infer put the script's
-- position in the middle of its message ("infer: x.lua:6: gpu ...").
local noarch = { id = "my-gpu", arch = "hoper", memory = 80 * 2 ^ 30, mem_bw = 3.35e12, peak = { bf16 = 989e12 },
  scaleup = { domain = 8, fabric = "nvlink4" } }
check(function() gp.infer { model = "llama3-8b", gpu = noarch } end, "infer: gpu 'my-gpu': unknown arch 'hoper' (did you mean 'hopper'?)", "infer: a user GPU of an unknown arch, one position, the nearest arch suggested")

-- 3. cat that is not a catalog: every planner raised a Lua error from
-- inside gpuplan ("attempt to index a number value (local 'cat')",
-- "attempt to call a nil value (method 'get')").
local L8 = { model = "llama3-8b", gpu = H, gpus = 8 }
local function with(o, k, v) local c = {} for a, b in pairs(o) do c[a] = b end c[k] = v return c end
check(function() gp.train(with(L8, "cat", 5)) end, "train: cat must be a catalog, as gp.catalog() returns (got 5)", "train: cat = 5")
check(function() gp.memory(with(L8, "cat", {})) end, "memory: cat must be a catalog, as gp.catalog() returns (got a table)", "memory: cat = {}")
check(function() gp.infer(with(L8, "cat", "x")) end, "infer: cat must be a catalog, as gp.catalog() returns (got string 'x')", "infer: cat = 'x'")
check(function() gp.sweep(with(L8, "cat", 5)) end, "sweep: cat must be a catalog", "sweep: cat = 5")
check(function() gp.rl { model = "qwen2.5-7b", gpu = H, gpus = 8, cat = 5 } end, "rl: cat must be a catalog", "rl: cat = 5")
check(function() gp.comm { gpu = H, bytes = 1e6, cat = 5 } end, "comm: cat must be a catalog", "comm: cat = 5")
check(function() gp.comm { gpu = H, bytes = 1e6, catalog = {} } end, "comm: catalog must be a catalog", "comm: catalog = {}")
check(function() gp.roofline { gpu = H, cat = 5 } end, "roofline: cat must be a catalog", "roofline: cat = 5")
t.ok(pcall(gp.train, with(L8, "cat", gp.catalog())), "... and gp.catalog() itself is taken")

-- 4. gp.comm's algo as a table was quoted by its address ("unknown algo
-- 'table: 0x55...'"); a topology table's misspelt field was named with
-- no suggestion, where every other table's names the nearest.
check(function() gp.comm { gpu = H, bytes = 1e6, algo = {} } end, "comm: algo must be a string (got a table) (one of ring, tree", "comm: algo = {}")
check(function() gp.comm { gpu = H, bytes = 1e6, algo = "rng" } end, "comm: unknown algo 'rng' (one of ring", "comm: algo misspelt")
check(function() gp.comm { bytes = 1e6, topology = { gpus_per_node = 8, nodes = 1, up_kind = "nvlink", up_bww = 450e9, up_latency = 1e-6 } } end, "comm: unknown topology field 'up_bww' (did you mean 'up_bw'?)", "comm: a topology's misspelt field is suggested")

-- 5. gp.roofline's op with a misspelt key: "op.flop is required", which
-- does not name the key the user wrote (flops); now the read is strict.
check(function() gp.roofline { gpu = H, op = { flops = 1e9, bytes = 1e6 } } end, "roofline: op: unknown field 'flops' (did you mean 'flop'?)", "roofline: op's misspelt key named")
check(function() gp.roofline { gpu = H, op = { flop = 1e9, bytes = 1e6, counts = 2 } } end, "roofline: op: unknown field 'counts' (did you mean 'count'?)", "roofline: op's misspelt optional key is not ignored")
check(function() gp.roofline { gpu = H, op = { bytes = 1e6 } } end, "roofline: op.flop is required", "roofline: op without flop")
do
  local r = gp.roofline { gpu = H, op = { flop = 1e12, bytes = 1e9, count = 2, m = 1024, n = 1024, k = 1024 } }
  t.ok(r.op.time > 0 and r.op.time < math.huge, "... and a good op is priced")
end

-- 6. gp.sweep's top = 2.0 was refused ("top must be an integer 1..100000
-- (got 2.0)") while gpus = 8.0 is taken: a whole number is a count
-- however Lua holds it.  top = 2.5 stays refused.
do
  local a = gp.sweep { model = "llama3-8b", gpu = H, gpus = 8, top = 2 }
  local b = gp.sweep { model = "llama3-8b", gpu = H, gpus = 8, top = 2.0 }
  t.is(#b.results, #a.results, "sweep: top = 2.0 keeps as many rows as top = 2")
  t.is(#b.results, 2, "... two")
  t.is(b.results[1].step_s, a.results[1].step_s, "... the same best layout")
end
check(function() gp.sweep { model = "llama3-8b", gpu = H, gpus = 8, top = 2.5 } end, "sweep: top must be an integer 1..100000 (got 2.5)", "sweep: top = 2.5 refused")

-- 7. A ranking policy's deadline and budget are checked when it is made,
-- as policy.monthly's budget is: policy.cheapest{deadline = 0/0} and
-- policy.fastest{budget = -5} (or {}) were taken, and refused (or
-- not) only inside the search, without the policy's name.
check(function() gp.policy.cheapest { deadline = 0 / 0 } end, "policy.cheapest: deadline must be a positive duration", "policy.cheapest: NaN deadline, when made")
check(function() gp.policy.fastest { budget = -5 } end, "policy.fastest: budget must be a positive amount", "policy.fastest: budget -5, when made")
check(function() gp.policy.fewest_gpus { budget = {} } end, "policy.fewest_gpus: budget must be an amount like '$50k' (got table)", "policy.fewest_gpus: budget {}, when made")
check(function() gp.policy.best_per_dollar { deadline = "3 days" } end, "policy.best_per_dollar: deadline '3 days': expected a duration like 30d", "policy.best_per_dollar: deadline '3 days', when made")
t.ok(pcall(gp.policy.cheapest, { deadline = "30d", budget = "$50k" }), "... and good ones are made")

-- 8. The API's module tables name the script's line as the planners do:
-- gp.units.fmt_amount(5, -1) named units.lua:235, gp.units.fmt("x")
-- units.lua:266; gp.prices', gp.vlm's and gp.policy.monthly's errors
-- under pcall named no line at all.
check(function() gp.units.fmt_amount(5, -1) end, "units.amount_fmt: min_dec must be a whole number of decimals 0..99 (got -1)", "units.fmt_amount: min_dec -1 names the script's line")
check(function() gp.units.fmt("x", "bytes") end, "units.fmt: n must be a number (got string 'x')", "units.fmt of a string names the script's line")
check(function() gp.units.fmt(5, "byts") end, "units.fmt: unknown kind 'byts'", "units.fmt: unknown kind")
check(function() gp.vlm.tokens { model = "qwen2-vl-7b", images = 1.5 } end, "images must be a whole number >= 0 (got 1.5)", "vlm.tokens: 1.5 images")
check(function() gp.validate.percentile({ 1, 2 }, 2) end, "validate.percentile: q must be a number in (0, 1] (got 2)", "validate.percentile: q 2")
check(function() gp.policy.monthly {} end, "policy.monthly{budget = ...}: budget is required", "policy.monthly without a budget")
do
  local cat = gp.catalog()
  local ok, e = pcall(gp.prices.rate, cat, "USD", "XYZ"); local line = debug.getinfo(1, "l").currentline
  placed(ok, e, line, "prices.rate: no exchange rate in the catalog for string 'XYZ'", "prices.rate under pcall names the script's line")
end
t.is(gp.units.fmt_bytes(5e9, "GB"), "5GB", "... and a good call answers as before")

-- 9. A script's own GPU table (gpu = {...} where an id goes) was priced
-- unchecked: a misspelt field (mem_bww) was ignored, peak.bf16 =
-- "989TFLOPS" raised "attempt to compare number with string", a scale-up
-- domain of 0 "attempt to divide by zero", and a usable_memory above the
-- memory sized the KV cache.  It is checked by the catalog's gpu{}
-- schema, numbers read as SI (as cat:get's entries hold them).
local function mygpu(over)
  local g = { id = "my-h100", arch = "hopper", memory = 80 * 2 ^ 30, mem_bw = 3.35e12,
    peak = { bf16 = 989e12, fp16 = 989e12, fp8 = 1979e12 }, tdp = 700, sms = 132,
    usable_memory = 79.1 * 2 ^ 30, scaleup = { domain = 8, fabric = "nvlink4" } }
  for k, v in pairs(over or {}) do g[k] = v end
  return g
end
check(function() gp.train { model = "llama3-8b", gpu = mygpu { mem_bww = 1 }, gpus = 8 } end, "gpu 'my-h100': field 'mem_bww': unknown field (did you mean 'mem_bw'?)", "train: a user GPU's misspelt field")
check(function() gp.infer { model = "llama3-8b", gpu = mygpu { scaleup = { domain = 0, fabric = "nvlink4" } } } end, "gpu 'my-h100': field 'scaleup.domain': must be >= 1, got 0", "infer: a user GPU's scale-up domain 0")
check(function() gp.rl { model = "qwen2.5-7b", gpu = mygpu { scaleup = { domain = 0, fabric = "nvlink4" } }, gpus = 8 } end, "rl: gpu 'my-h100': field 'scaleup.domain': must be >= 1, got 0", "rl: a user GPU's scale-up domain 0")
check(function() gp.memory { model = "llama3-8b", gpu = mygpu { usable_memory = 100 * 2 ^ 30 } } end, "gpu 'my-h100': field 'usable_memory': larger than memory", "memory: a user GPU's usable memory above its memory")
check(function() gp.roofline { gpu = mygpu { mem_bw = 0 / 0 } } end, "gpu 'my-h100': field 'mem_bw': must be a finite number, got nan", "roofline: a user GPU's NaN bandwidth")
check(function() gp.comm { gpu = mygpu { memory = -1 }, bytes = 1e6 } end, "comm: gpu 'my-h100': field 'memory': must be positive, got -1", "comm: a user GPU's negative memory")
do
  local g = mygpu()
  g.arch = nil
  check(function() gp.train { model = "llama3-8b", gpu = g, gpus = 8 } end, "gpu 'my-h100': field 'arch': required field is missing", "train: a user GPU without arch")
end
-- The same card as the catalog's h100-sxm (its figures, in SI numbers or
-- with their units) prices the same job the same: nothing is lost in the
-- conversion.  Exact: the same inputs through the same arithmetic.
do
  local ref = gp.train { model = "llama3-8b", gpu = H, gpus = 8 }
  local mine = gp.train { model = "llama3-8b", gpu = mygpu(), gpus = 8 }
  local units = gp.train { model = "llama3-8b", gpu = mygpu { peak = { bf16 = "989TFLOPS", fp16 = "989TFLOPS", fp8 = "1979TFLOPS" }, memory = "80GiB", mem_bw = "3.35TB/s" }, gpus = 8 }
  t.is(mine.step_s, ref.step_s, "train: a user table of h100-sxm's figures prices the catalog's step")
  t.is(units.step_s, ref.step_s, "... and with units in strings")
  local ri = gp.infer { model = "llama3-8b", gpu = H }
  local mi = gp.infer { model = "llama3-8b", gpu = mygpu() }
  t.is(mi.tokens_per_s, ri.tokens_per_s, "infer: the same tokens/s")
  t.is(mi.batch, ri.batch, "infer: the same batch (the same usable memory)")
end

-- 10. cat:achievable(gpu) given an id (how a script names a card) raised
-- "attempt to concatenate a nil value (field 'arch')" from catalog.lua.
do
  local cat = gp.catalog()
  local a1, w1 = cat:achievable("h100-sxm")
  local a2, w2 = cat:achievable(cat:get("gpus", "h100-sxm"))
  t.ok(a1 == a2 and w1 == w2 and a1 ~= nil, "cat:achievable of an id is that of its entry")
  check(function() cat:achievable("h10-sxm") end, "unknown gpu 'h10-sxm' (did you mean", "cat:achievable of an unknown id")
  check(function() cat:achievable(5) end, "achievable: gpu must be a GPU id or entry (got 5)", "cat:achievable of a number")
end

-- 11. gp.prices.cheapest's misspelt option (curency) was ignored: the
-- offer came in the catalog's currency, as if none was asked for.
do
  local cat = gp.catalog()
  check(function() gp.prices.cheapest(cat, H, { curency = "CNY" }) end, "prices.cheapest: opts: unknown option 'curency' (did you mean 'currency'?)", "prices.cheapest: a misspelt option")
  local q = gp.prices.cheapest(cat, H, { currency = "CNY" })
  t.is(q and q.currency, "CNY", "... and currency = 'CNY' is priced in CNY")
end

-- 12. gp.report's and gp.render's misspelt keys were ignored: opts.colums
-- printed every key of the rows, a column's kye a column headed "nil".
check(function() gp.render({ { a = 1 } }, { colums = { "a" } }) end, "render: opts: unknown option 'colums' (did you mean 'columns'?)", "render: a misspelt opts key")
check(function() gp.render({ { a = 1 } }, { columns = { { kye = "a" } } }) end, "render: column 1: unknown option 'kye' (did you mean 'key'?)", "render: a column's misspelt key")
check(function() gp.render({ { a = 1 } }, { columns = { { label = "A" } } }) end, "render: column 1 has no key", "render: a column without a key")
check(function() gp.report({ { a = 1 } }, { titel = "x" }) end, "report: opts: unknown option 'titel' (did you mean 'title'?)", "report: a misspelt title")
t.is(gp.render({ { a = 1.5 } }, { columns = { { key = "a", label = "A", fmt = "%.2f" } }, format = "csv" }), "a\n1.50\n", "... and good columns render")

-- 13. gp.options' usage error caught by pcall printed as "table: 0x55...":
-- the error object (cli.usage, cli.fail) now prints as its message, and
-- gpuplan's own handler still reads its fields.
do
  local ok, e = pcall(gp.options, { n = { "a count", 1 } }, { "--n", "abc" })
  t.ok(not ok and type(e) == "table" and e.usage == true, "gp.options: a bad argument is a usage error")
  t.is(tostring(e), "script: option '--n' expects an integer, got 'abc'", "... that prints as its message")
end

-- 14. gp.rl's rollout engine past a node without NICs said "rollout_tp 16
-- spans 2 nodes, but the system has no NICs": neither which node nor
-- what to give, where the actor's and gp.infer's refusals name both.
check(function() gp.rl { model = "qwen2.5-7b", gpu = "rtx-4090", gpus = 8, rollout_tp = 16 } end, "rl: the rollout engine (rollout_tp 16): 16 GPUs span 2 nodes of 8, but system 'pcie-8x-4090' has no NICs: give nics = N and nic_fabric = ID (scale-out fabrics: ", "rl: a rollout TP past a NIC-less node names the node and the fix")
-- (llama3-8b: its 32 heads divide over rollout_tp 16; qwen2.5-7b's 28 do
-- not, refused once the actor's states fit under the stack's ZeRO-3 default)
t.ok(pcall(gp.rl, { model = "llama3-8b", gpu = "rtx-4090", gpus = 16, rollout_tp = 16, nics = 8, nic_fabric = "roce-100" }), "... and with the NICs it names, it runs")

-- 15. gp.rl's trainer sequence and mini-batch past the engine's bounds
-- were refused as "seq must be ... (got 16778240)" and "global_batch must
-- be ... (got 134217728)": options gp.rl takes no seq of, and a
-- global_batch the user never gave.  They are named as given.
-- 16777216 + the default 1024-token response = 16778240 > 2^24.
check(function() gp.rl { model = "qwen2.5-7b", gpu = H, gpus = 8, prompt_len = 16777216 } end, "rl: prompt_len + response_len = 16778240 tokens is past a sequence's 16777216", "rl: a prompt past the sequence bound named as the RL lengths")
-- 16777216 prompts x the default group of 8 = 134217728 samples.
check(function() gp.rl { model = "qwen2.5-7b", gpu = H, gpus = 8, prompts = 16777216 } end, "rl: prompts x group = 134217728 samples is past a step's 16777216", "rl: samples past the count bound named as prompts x group")

-- 16. A policy function's infinite score was ranked and came back as the
-- row's policy_score, inf (null in JSON); nil is how a policy drops a
-- candidate, and NaN was already refused.
check(function() gp.sweep { model = "llama3-8b", gpu = H, gpus = 8, progress = false, policy = function() return math.huge end } end, "sweep: policy must return a finite number or nil (got inf)", "sweep: a policy's inf score")
check(function() gp.sweep { model = "llama3-8b", gpu = H, gpus = 8, progress = false, policy = function() return -math.huge end } end, "sweep: policy must return a finite number or nil (got -inf)", "sweep: a policy's -inf score")
check(function() gp.sweep { model = "llama3-8b", gpu = H, gpus = 8, progress = false, policy = function() return 0 / 0 end } end, "sweep: policy must return a finite number or nil (got nan)", "sweep: a policy's NaN score, spelt one way")

-- 17. gp.infer's list of cards named the wrong function ("sweep: gpu[2]
-- must be a GPU id"), and gpu = {} (an empty list) was read as a card
-- entry ("gpu 'nil': no achievable fractions").
check(function() gp.infer { model = "llama3-8b", gpu = { H, 5 } } end, "infer: gpu[2] must be a GPU id (got 5)", "infer: a list's bad card names infer")
check(function() gp.infer { model = "llama3-8b", gpu = {} } end, "gpu must be an id or a gpu table (got an empty table)", "infer: gpu = {}")
check(function() gp.train { model = "llama3-8b", gpu = {}, gpus = 8 } end, "gpu must be an id or a gpu table (got an empty table)", "train: gpu = {}")

-- 18. gp.render of a result (a train step, its memory and parts nested)
-- printed each nested table as its address ("table: 0x55..."), which
-- differs every run: the default columns of a table are its plain
-- values, and a table asked for by its key prints as JSON.
do
  local r = gp.train { model = "llama3-8b", gpu = H, gpus = 8 }
  local a = gp.render({ r }, { format = "csv" })
  t.ok(not a:find("table: 0x", 1, true), "render: no table address in a result's CSV")
  t.is(a, gp.render({ r }, { format = "csv" }), "... the same text every time")
  t.ok(a:find("step_s", 1, true) ~= nil, "... and its plain fields are columns")
  t.is(gp.render({ { a = 1, t = { x = 1 } } }, { columns = { "a", "t" }, format = "csv" }), "a,t\n1,\"{\"\"x\"\":1}\"\n", "render: a nested table asked for prints as JSON")
end

-- 19. An error in gp.sweep's progress function was "sweep: pg": neither
-- that it came from the script's function nor its line, where the where
-- and policy functions' errors say both.
do
  local line
  check(function() gp.sweep { model = "llama3-8b", gpu = H, gpus = 8, progress = function() line = debug.getinfo(1, "l").currentline; error("pg") end } end, "sweep: error in the progress function: ", "sweep: a progress function's error is named as the script's")
  local ok, e = pcall(gp.sweep, { model = "llama3-8b", gpu = H, gpus = 8, progress = function() line = debug.getinfo(1, "l").currentline; error("pg") end })
  t.ok(not ok and tostring(e):find(me .. ":" .. tostring(line) .. ": pg", 1, true) ~= nil, "... with its own line")
end

t.done_testing()
