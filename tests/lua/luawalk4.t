-- A team that builds its own planning tool on gpuplan (round 5): its own
-- case files, sweeps, job loops and post-processing.  Each misuse below
-- was answered with an address, a wrong figure, a position that is not
-- the user's or a Lua runtime error; it must be refused naming the key
-- (and the script's line), and what is accepted must read as the CLI
-- reads the same job.  Run with ./gpuplan run tests/lua/luawalk4.t.
local t = require "tap"
local gp = require "gpuplan"
local cjson = require "cjson"

local check = t.raises_here
local scratch = t.scratch()
local cat = gp.catalog()

-- A memory case of the shipped file (bloom176b-mem-per-gpu), as a team
-- copies one to edit.
-- The shipped file is read once (each read checks all its cases, a second
-- or more under the sanitizers); each call gets its own deep copy, as a
-- fresh read would give it -- a read case is plain tables (no metatable,
-- no table shared between fields) -- so a block's edits reach no other.
local shipped_cases
local function copy(x)
  if type(x) ~= "table" then return x end
  local y = {}
  for k, v in pairs(x) do y[k] = copy(v) end
  return y
end
local function shipped(id)
  if not shipped_cases then
    shipped_cases = {}
    for _, c in ipairs(gp.validate.read(require("gpuplan.config").root .. "/validation/cases.json")) do
      shipped_cases[c.id] = c
    end
  end
  return copy(shipped_cases[id])
end
local function case_file(name, c)
  return scratch.put(name, cjson.encode { c })
end
local MEM = "bloom176b-mem-per-gpu"

-- 1. A case file's kind or source.version of the wrong JSON type was quoted
-- by its address ("unknown kind 'table: 0x55...'"), a number kind as
-- '0.0': the schema's own fields say "got a table" and "got 0".
-- A case's refusal names the case file's line (the one-line file's 1),
-- not the script's, as a catalog file's does (newuser11).
local function read_check(p, want, name)
  local ok, e = pcall(gp.validate.read, p)
  return t.placed_in(p, ok, e, 1, want, name)
end
do
  local raw = cjson.decode(cjson.encode(shipped(MEM)))
  raw.kind = { "train" }
  local p = case_file("kind.json", raw)
  read_check(p, "case '" .. MEM .. "': unknown kind a table (train, memory",
    "validate.read: a table kind is named by its type")
  raw.kind = 0
  p = case_file("kind0.json", raw)
  read_check(p, "unknown kind 0 (train,", "a number kind as the file writes it")
  raw.kind = "training"
  p = case_file("kind1.json", raw)
  read_check(p, "unknown kind 'training' (train,", "a string kind keeps its quotes")
  raw.kind = "memory"
  raw.source.version = { "0.3" }
  p = case_file("ver.json", raw)
  read_check(p,
    "field 'source.version': expected a release as \"0.3.0\" (major.minor[.patch]), got a table",
    "source.version: a table by its type")
  raw.source.version = nil
  raw.source.commit = 12345678
  p = case_file("commit.json", raw)
  read_check(p, "expected a git commit as \"9dec370\" (7 to 40 hex digits), got 12345678",
    "source.commit: a number as written")
end

-- 2. A case whose prediction fails: gp.validate.predict's reason carried
-- the line of the script that called predict ("prediction failed:
-- x.lua:7: model.moe.experts is required"), which says nothing of the
-- case, and which `gpuplan validate` does not print.  The reason must be
-- the CLI's, wherever the call is.
do
  local raw = cjson.decode(cjson.encode(shipped(MEM)))
  raw.model.moe = {}
  local p = case_file("moe.json", raw)
  local c = gp.validate.read(p)[1]
  local r1 = gp.validate.predict(c, cat)
  local _, r2 = pcall(gp.validate.predict, c, cat)
  -- harden79b: a refusal of a case read from a file names the file and
  -- the field's line (case_file writes one line of JSON: line 1)
  local want = p .. ":1: case '" .. MEM .. "': field 'model.moe.experts': model.moe.experts is required"
  t.is(r1.reason, want, "predict: the reason names no script line")
  t.is(r2.reason, r1.reason, "... called under pcall too")
  local fh = io.popen(string.format("%s validate --format csv %q 2>&1", arg[-1] or "./gpuplan", p))
  local out = fh:read("a")
  fh:close()
  t.like(out, want, "... as `gpuplan validate` gives it", true)
end

-- 3. A case read by gp.validate.read, edited and written back with cjson
-- (a team's own case file) was refused when read again: "field '_file':
-- unknown field", the reader's own mark on each case.  It must read
-- again, and predict as the case it was.
do
  local c = shipped(MEM)
  t.ok(c._file ~= nil, "read marks a case with its file")
  local p = case_file("again.json", c)
  local ok, again = pcall(gp.validate.read, p)
  t.ok(ok, "a read case written back reads again") 
  if ok then
    t.is(again[1]._file, p, "... marked with its new file")
    t.is(gp.validate.predict(again[1], cat).predicted, gp.validate.predict(c, cat).predicted,
      "... and predicts as it did (the same job, so exactly)")
  end
end

-- 4. gp.roofline's op with part of a GEMM's shape (m alone, m and n, or
-- m = 0 beside n and k) was read as no GEMM and priced on the fp32
-- vector units: on an H100 at 67 TFLOPS where the bf16 GEMM the op
-- describes runs at 989 x 0.8 (x the shape's wave fill).  A fraction of a
-- row was priced too.  Each must be refused naming the field.
do
  local H = "h100-sxm"
  local function op(o) o.flop, o.bytes = 1e12, 1e9 return gp.roofline { gpu = H, op = o } end
  check(function() op { m = 4096 } end, "roofline: op: a GEMM needs m, n and k (got m only", "roofline: m alone is refused")
  check(function() op { m = 4096, n = 4096 } end, "roofline: op: a GEMM needs m, n and k (got m, n only", "roofline: m and n without k")
  check(function() op { m = 0, n = 4096, k = 4096 } end, "roofline: op.m must be a whole number >= 1 (got 0)", "roofline: m = 0 in a shape")
  check(function() op { m = 4096, n = 4096, k = 0.5 } end, "roofline: op.k must be a whole number >= 1 (got 0.5)", "roofline: a fraction of a row")
  -- what is right still prices: the whole shape on the tensor cores (above
  -- the 67 TFLOPS fp32 vector rate), no shape on the vector units
  t.ok(op { m = 4096, n = 4096, k = 4096 }.op.compute_rate > 67e12, "a whole shape runs on the tensor cores")
  t.is(op {}.op.compute_rate, 67e12, "no shape runs at the fp32 vector peak (the H100's 67 TFLOPS, achievable 1)")
end

-- 5. A loop that edits a job's step before storing it (s.cost = s.cost *
-- 1.2) got Lua's "attempt to index a gpuplan.train_result value", which
-- names neither the handle nor that :table() gives an editable copy.
do
  local job = gp.train_job { model = "llama3-8b", gpu = "h100-sxm", gpus = 8 }
  local s = job:step { tp = 2 }
  check(function() s.step_s = 5 end,
    "train result: read-only: cannot set 'step_s' (result:table() gives a table of its fields to edit)",
    "train_job step: an assignment names the handle and :table()")
  check(function() job.step = 5 end, "train job: read-only: cannot set 'step'", "train_job: read-only")
  local rj = gp.rl_job { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 16, prompts = 64, group = 8,
                         response_len = 2048 }
  local rs = rj:step {}
  check(function() rs.cost_step = 0 end, "rl result: read-only: cannot set 'cost_step'", "rl_job step: read-only")
  check(function() s[{}] = 0 end, "train result: read-only: cannot set a key that is not a name",
    "a table key is not quoted by its address")
  local tb = s:table()
  tb.step_s = 5
  t.is(tb.step_s, 5, ":table() is the editable copy")
end

-- 6. The reference said job_step's :table() holds "all of gp.train's step
-- fields", but it is core.train's table: parts is keyed by part name
-- (gp.train's is a list of {name, seconds, hidden, share}), and hidden
-- is a table of its own.  A loop written for gp.train's parts read
-- nothing.  The reference now says what the table holds; this pins it.
do
  local o = { model = "llama3-8b", gpu = "h100-sxm", gpus = 16, tp = 2 }
  local tb = gp.train_job(o):step { tp = 2 }:table()
  local r = gp.train(o)
  t.is(#tb.parts, 0, ":table().parts is keyed by name, not a list")
  t.is(tb.parts.tp_comm, r.parts[3].seconds, "... its tp_comm the seconds of gp.train's parts[3] (tp_comm)")
  t.is(r.parts[3].name, "tp_comm", "... (which is tp_comm)")
  t.is(tb.hidden.dp_comm, (function() for _, p in ipairs(r.parts) do if p.name == "dp_comm" then return p.hidden end end end)(),
    ":table().hidden keyed by name is gp.train's parts[i].hidden")
  local fh = io.open(require("gpuplan.config").root .. "/docs/lua.md")
  local doc = fh:read("a")
  fh:close()
  t.like(doc, "with parts and hidden each a table of seconds keyed by part name", "the reference says so", true)
end

-- 7. gp.memory{method = "grpo"} (or ppo) returned rl_state, the RL state
-- whose memory it reports, which the result reference did not declare:
-- a team's report keyed on the reference's fields never showed it.  Every
-- key of these results must be declared for its result.
do
  local R = require "gpuplan.results"
  local function undeclared(kind, r)
    local out = {}
    for k in pairs(r) do
      local f = R.BY_NAME[k]
      if not (f and f.results[kind]) then out[#out + 1] = k end
    end
    table.sort(out)
    return table.concat(out, " ")
  end
  local m = gp.memory { model = "llama3-8b", gpu = "h100-sxm", method = "grpo", gpus = 8 }
  t.ok(m.rl_state == "rollout" or m.rl_state == "forward" or m.rl_state == "update", "memory grpo: rl_state names a state")
  t.is(undeclared("memory", m), "", "memory grpo: every field is declared")
  t.is(undeclared("memory", gp.memory { model = "llama3-8b", gpu = "h100-sxm", method = "ppo", gpus = 8 }), "",
    "memory ppo: every field is declared")
end

-- 8. gp.units' formatters given a value of the wrong type raised from
-- inside gpuplan: fmt_bytes({}) "units.lua:289: attempt to perform
-- arithmetic on a table value (local 'n')", fmt("x", "time") "bad argument
-- #1 to 'abs'", fmt(5, "price") "attempt to index a number value",
-- past_fmt("x", 1) "bad argument #2 to 'format'".  Each must name the
-- function and the argument, at the script's line.
do
  check(function() gp.units.fmt_bytes({}) end, "units.fmt_bytes: n must be a number (got a table)", "fmt_bytes: a table")
  check(function() gp.units.fmt_bytes("1e9") end, "units.fmt_bytes: n must be a number (got string '1e9')", "fmt_bytes: a numeric string")
  check(function() gp.units.fmt("x", "time") end, "units.fmt: n must be a number (got string 'x')", "fmt: a string")
  check(function() gp.units.fmt(5, "price") end, "units.fmt: a price must be {amount = a number, currency = 'USD' ...} (got 5)", "fmt: a price that is a number")
  check(function() gp.units.past_fmt("x", 1) end, "units.past_fmt: x must be a number (got string 'x')", "past_fmt: x a string")
  t.is(gp.units.fmt({ amount = 1, currency = "USD" }, "price"), "$1.00/h", "a price still formats")
  t.is(gp.units.fmt(1e9, "bytes"), "1GB", "bytes still format")
  t.is(gp.units.fmt(0 / 0, "bytes"), "nan", "NaN is still nan")
end

-- 9. gp.vlm.plan's top and its lists of splits were unchecked: top = 0/0
-- never returned (the trimming loop ran from the rows down to
-- math.mininteger), top = "x" raised Lua's arithmetic error, top = 0
-- answered no rows; tps = {0} raised "vlm.lua:236: attempt to perform
-- 'n%%0'", tps = {1, {}} an arithmetic error inside gpuplan, and tps =
-- {a = 1} searched nothing and answered no rows.  Each must be refused
-- naming the key, as gp.sweep's top is.
do
  local function vp(k, v)
    local o = { model = "qwen2-vl-7b", gpu = "h100-sxm", gpus = 8 }
    o[k] = v
    return gp.vlm.plan(o)
  end
  check(function() vp("top", 0 / 0) end, "vlm.plan: top must be an integer 1..100000 (got NaN)", "vlm.plan: top NaN")
  check(function() vp("top", "x") end, "vlm.plan: top must be an integer 1..100000 (got string 'x')", "vlm.plan: top a string")
  check(function() vp("top", 0) end, "vlm.plan: top must be an integer 1..100000 (got 0)", "vlm.plan: top 0")
  check(function() vp("tps", { 0 }) end, "vlm.plan: tps[1] must be a whole number 1..16777216 (got 0)", "vlm.plan: a split of 0")
  check(function() vp("pps", { 1, {} }) end, "vlm.plan: pps[2] must be a whole number 1..16777216 (got a table)", "vlm.plan: a table in a list")
  check(function() vp("cps", { a = 1 }) end, "vlm.plan: cps must be a list (got a table with key 'a')", "vlm.plan: a table that is no list")
  check(function() vp("recomputes", { 1 }) end, "vlm.plan: recomputes[1] must be a recompute policy's name (got 1)", "vlm.plan: a recompute that is no name")
  t.is(#vp("top", 2.0), 2, "top = 2.0 is two rows, as gp.sweep's")
  -- tps = {1}: cp x pp dividing 8 GPUs, pp dividing qwen2-vl-7b's 28
  -- layers (pp 8 does not): 9 pairs x 2 recomputes = 18 layouts, the
  -- default top 10 of them come back
  t.is(#vp("tps", { 1 }), 10, "a good list still searches (18 layouts, top 10)")
end

-- 10. gp.infer_plan's refusals of the options it shares with gp.infer
-- read "infer: input must be ...", "infer: unknown kv dtype ...", naming
-- a function the script did not call.  They must name infer_plan; the
-- CLI's `infer --target` keeps "infer:".
do
  local o = { model = "deepseek-v3", gpu = "h200-sxm", target = 1e5, input = 0.5, output = 1000 }
  check(function() gp.infer_plan(o) end, "infer_plan: input must be a whole number of tokens, 1..16777216 (got 0.5)",
    "infer_plan: input names infer_plan")
  o.input, o.kv = 1000, "fp9"
  check(function() gp.infer_plan(o) end, "infer_plan: unknown kv dtype 'fp9'", "infer_plan: kv names infer_plan")
  local dense = { model = "llama3-8b", gpu = "h100-sxm", target = 1e4, input = 1000, output = 100, price = "xx" }
  check(function() gp.infer_plan(dense) end, "infer_plan: price 'xx': bad price", "infer_plan on a dense model too")
  local fh = io.popen((arg[-1] or "./gpuplan") .. " infer deepseek-v3 --gpu h200-sxm --target 1e5 --input 1000 --output 1000 --kv fp9 2>&1")
  local out = fh:read("a")
  fh:close()
  t.like(out, "infer: --kv: unknown kv dtype 'fp9'", "the CLI keeps its command's name (and names the flag)", true)
end

-- 11. A policy table with a bad key (policy = {key = "nope"}, or a
-- function as the key) was refused by the engine's reader as "unknown
-- sweep key 'nope'" and "sweep.key must be a string", names the script
-- never wrote.  It must name policy.key and the keys there are.
do
  local o = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, top = 1 }
  o.policy = { key = "nope" }
  check(function() gp.sweep(o) end, "sweep: policy.key must be one of time, cost, per_dollar, mfu, gpus (got string 'nope')",
    "sweep: policy.key names itself")
  o.policy = { key = function(c) return c.step_s end }
  check(function() gp.sweep(o) end, "sweep: policy.key must be one of time, cost, per_dollar, mfu, gpus (got a function)",
    "sweep: a function key (the policy is the function itself)")
  o.policy = { key = "cost" }
  local cheap = gp.sweep(o).results[1]
  o.policy = gp.policy.cheapest {}
  t.is(cheap.layout, gp.sweep(o).results[1].layout, "policy = {key = 'cost'} ranks as gp.policy.cheapest")
end

-- 12. gp.catalog{dirs = ...} over a directory with several bad entries
-- raised the first and no word of the others, where a command (the
-- search path's catalog) says "(and N more errors: 'gpuplan catalog check
-- DIR' lists them)": a team fixed its fleet file one error a run.
do
  local fleet = t.scratch()
  fleet.put("fleet.lua", [[
price { id = "nogpu/own/us", gpu = "h999", provider = "Own", provider_kind = "specialty",
  region = "us", price = "$2/h", date = "2026-06", source = "x" }
system { id = "s1", name = "S1", gpu = "h100-sxm", gpus = 8, scaleup = "nvlink99", nics = 8,
  nic_fabric = "ib-ndr-400", host_memory = "2TB", cpu = "x", source = "x" }
]])
  local dirs = { require("gpuplan.config").root .. "/catalog", fleet.dir }
  -- a file's problem names the file's line (not the script's)
  t.raises(function() gp.catalog { dirs = dirs } end,
    "fleet.lua:1: price 'nogpu/own/us': field 'gpu': unknown gpu 'h999' (and 1 more error: 'gpuplan catalog check DIR' lists them)",
    "catalog{dirs}: the first error and how many more", true)
  fleet.remove()
end

-- 13. Rows of gp.validate.predict edited by the script and passed back to
-- summarise or explain: an error of "x" raised "bad argument #1 to 'abs'",
-- NaN "validate.percentile: sorted[1] must be a number (got NaN)" (a
-- function the script did not call), and inf made the kind's p90 inf.
-- Each must be refused naming the function, the row and the field.
do
  local c = shipped(MEM)
  local row = gp.validate.predict(c, cat)
  local function edited(k, v) return t.with(row, { [k] = v }) end
  check(function() gp.validate.summarise { edited("error", "x") } end,
    "validate.summarise: row 1's error must be a finite number or nil (got string 'x')", "summarise: an error that is a string")
  check(function() gp.validate.summarise { row, edited("error", 0 / 0) } end,
    "validate.summarise: row 2's error must be a finite number or nil (got NaN)", "summarise: NaN, naming the row")
  check(function() gp.validate.summarise { edited("error", math.huge) } end,
    "validate.summarise: row 1's error must be a finite number or nil (got inf)", "summarise: inf")
  check(function() gp.validate.explain(c, cat, edited("predicted", "x")) end,
    "validate.explain: row's predicted must be a finite number or nil (got string 'x')", "explain: an edited row")
  -- |error| of the one row: its median and p90 (nearest rank of one)
  local k = gp.validate.summarise { row }[1]
  t.is(k.median, math.abs(row.error), "an unedited row still summarises (median = |error|)")
end

-- 14. job:step took a batch and a global_batch gp.train refuses: batch
-- = 0.5 was priced (gp.train: "batch must be a number in [1, 16777216]"),
-- global_batch = 0 priced one micro-batch per rank (gp.train: "must be a
-- whole number 1..16777216").  The reference says job:step refuses what
-- gp.train refuses of a layout.
do
  local o = { model = "llama3-8b", gpu = "h100-sxm", gpus = 16 }
  local job = gp.train_job(o)
  check(function() job:step { batch = 0.5 } end, "step.batch must be a number in [1, 16777216] (got 0.5)",
    "train_job:step: batch 0.5 refused")
  check(function() job:step { global_batch = 0 } end,
    "step.global_batch must be a whole number of sequences, 1..16777216 (got 0)", "train_job:step: global_batch 0 refused")
  o.batch = 0.5
  check(function() gp.train(o) end, "train: batch must be a number in [1, 16777216] (got 0.5)", "... as gp.train refuses them")
  o.batch = nil
  -- what is right still prices as gp.train: batch 2, global_batch 64
  o.batch, o.global_batch = 2, 64
  t.is(job:step { batch = 2, global_batch = 64 }.step_s, gp.train(o).step_s, "a good batch prices as gp.train's (the same step, exactly)")
  local rj = gp.rl_job { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 16, prompts = 64, group = 8, response_len = 2048 }
  t.ok(pcall(function() return rj:step {} end), "an RL job's own mini-batch still steps")
  check(function() rj:step { global_batch = 0.5 } end,
    "step.global_batch must be a whole number of sequences, 1..16777216 (got 0.5)", "rl_job:step: a fractional global_batch")
end

-- 15. job:step(layout, s, more): a third argument (a second layout, an
-- option table put in the wrong place) was dropped in silence, where the
-- gp.X{...} functions refuse a second table (luawalk2 fix 2).
do
  local job = gp.train_job { model = "llama3-8b", gpu = "h100-sxm", gpus = 16 }
  check(function() job:step({ tp = 2 }, nil, { pp = 2 }) end,
    "bad argument #3 to 'step' (job:step takes a layout and a result to refill, no more)", "train_job:step: a third argument")
  local rj = gp.rl_job { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 16, prompts = 64, group = 8, response_len = 2048 }
  check(function() rj:step({}, nil, 5) end, "job:step takes a layout and a result to refill, no more", "rl_job:step: a third argument")
  local s = job:step {}
  t.is(job:step({ tp = 2 }, s), s, "job:step(layout, s) still refills s")
end

-- 16. A zero that fsdp contradicts, given as a whole float (a case file's
-- "zero": 1 reads as 1.0 through JSON; a script's 1.0), was quoted "not
-- 1.0"; the count is 1.
do
  local ok, e = pcall(gp.train, { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, fsdp = true, zero = 1.0 })
  t.ok(not ok, "fsdp against zero 1.0 is refused")
  t.like(tostring(e), "train: fsdp full_shard is zero 3, not 1$", "... quoted as the count (not 1.0)")
end

-- 17. A memory case whose hardware.gpu is no catalog card was priced at
-- an assumed 80 GB, said only in its row's defaults ("capacity=80GB (gpu
-- not in catalog)"), where the train and infer predictors refuse it: the
-- row is unpriced, its reason naming the case file, the case and the key.
do
  local raw = cjson.decode(cjson.encode(shipped(MEM)))
  raw.hardware.gpu = "x"
  local p = case_file("badgpu.json", raw)
  local row = gp.validate.predict(gp.validate.read(p)[1], cat)
  t.is(row.predicted, nil, "memory case with an unknown gpu: not priced")
  -- case_file writes one line of JSON: the field's line is 1
  local want = p .. ":1: case '" .. MEM .. "': field 'hardware.gpu': unknown gpu 'x' (did you mean "
  t.is((row.reason or ""):sub(1, #want), want, "... the reason names the file:line, case and key")
  raw.hardware.gpu = nil
  row = gp.validate.predict(gp.validate.read(case_file("nogpu.json", raw))[1], cat)
  t.is(row.reason, p:gsub("badgpu", "nogpu") .. ":1: case '" .. MEM .. "': field 'hardware.gpu': "
    .. "hardware.gpu not given", "... and a case without a gpu is refused as train's is (placed)")
  -- the shipped card still prices, with no capacity default
  row = gp.validate.predict(shipped(MEM), cat)
  t.ok(type(row.predicted) == "number" and not (row.defaults or ""):find("capacity=", 1, true),
    "the shipped case (a100-sxm-80gb) is priced on its card")
end

scratch.remove()
t.done_testing()
