-- fuzz_api: every public gp.* function fed bad input, each outcome held
-- to the API's rules (docs/lua.md): an error names the script's line
-- (this file's) and no position inside gpuplan (lua/gpuplan/*.lua,
-- engine/*.c), is one line, is no runtime error of gpuplan's code
-- ("attempt to ..."), and names the key it refuses; an answer carries no
-- NaN or infinity; a value of the wrong kind (a function, a table, a
-- boolean where a number or a name goes) is never taken in silence.
--
--   ./gpuplan run tools/fuzz_api.lua [SECTION]
--
-- Sections: options (each planner's every key: wrong types, 0, -1, 1.5,
-- huge, NaN, inf, a misspelt key), functions (every function: nil,
-- numbers, strings, tables, functions as its arguments), entries (model
-- and GPU tables missing or spoiling each field), jobs (job:step, step
-- results read, set and refilled, a result edited then encoded), nested
-- (list, price, weights and topology fields), misc (catalog methods,
-- roofline ops, reports, policies, options, vlm, prices), cases (a
-- validation case file's workload fields spoilt, read and predicted),
-- nvls (a fabric's nccl nvls_channels_nodes through gp.comm).  Prints each
-- finding, one a line; exits 1 when there is one.  Deterministic: keys
-- are sorted, no pairs() order reaches a call.  Takes a minute or so.
local gp = require "gpuplan"
local O = require "gpuplan.options"

local SELF = debug.getinfo(1, "S").short_src
local only = arg and arg[1]
local findings, calls = {}, 0
local H = "h100-sxm"
local cat = gp.catalog()

local function finding(what, label) findings[#findings + 1] = label .. " :: " .. what end

local function q(v)
  if type(v) == "string" then return string.format("%q", v) end
  if v ~= v then return "0/0" end
  if v == math.huge then return "math.huge" end
  if v == -math.huge then return "-math.huge" end
  if type(v) == "table" or type(v) == "function" then return type(v) end
  return tostring(v)
end

-- NaN or an infinity anywhere in a result (at most four named).
local function scan(v, path, seen, out)
  if type(v) == "number" then
    if v ~= v or v == math.huge or v == -math.huge then out[#out + 1] = path .. "=" .. tostring(v) end
  elseif type(v) == "table" then
    if seen[v] then return end
    seen[v] = true
    local ks = {}
    for k in pairs(v) do ks[#ks + 1] = k end
    table.sort(ks, function(a, b) return tostring(a) < tostring(b) end)
    for _, k in ipairs(ks) do
      if #out > 3 then return end
      scan(v[k], path .. "." .. tostring(k), seen, out)
    end
  end
end

local CALL_LINE
local function call(f, ...)
  CALL_LINE = debug.getinfo(1, "l").currentline local r = table.pack(f(...)) return r
end

-- Intended outcomes that look like findings: an infinite arithmetic
-- intensity of an op that moves no bytes (roofline.lua: gp.json writes it
-- null), a gp.options default the script chose itself.
local ALLOWED_NONFINITE = { ["r.1.op.intensity"] = true, ["r.1.n"] = true }

-- Call f(...) under pcall and hold its outcome to the rules.  key: what
-- an error must name (nil: nothing in particular); accept: false, the
-- call must raise; true or nil, it may answer.
local function run(label, f, key, accept, ...)
  calls = calls + 1
  local ok, r = pcall(call, f, ...)
  if ok then
    if accept == false then finding("taken in silence", label) end
    local bad = {}
    scan(r, "r", {}, bad)
    for _, b in ipairs(bad) do
      if not ALLOWED_NONFINITE[b:match("^[^=]+")] then
        finding("NaN or inf in the answer: " .. b, label)
        break
      end
    end
    return true, r[1]
  end
  local e = r
  -- a usage or catalog error is a table carrying its message
  if type(e) == "table" and type(e.msg) == "string" then e = tostring(e) end
  if type(e) ~= "string" then finding("error is a " .. type(e), label) return false end
  local line = e:match("^" .. SELF:gsub("%p", "%%%0") .. ":(%d+): ")
  -- a closure written here raises at its own line, an API function
  -- called directly at the call's
  local direct = debug.getinfo(f, "S").short_src ~= SELF
  if not line then finding("not at the script's line: " .. e, label)
  elseif direct and tonumber(line) ~= CALL_LINE then finding("at line " .. line .. ": " .. e, label) end
  if e:find("engine/", 1, true) or e:find("lua/gpuplan/", 1, true) or e:find("%.c:%d+") then
    finding("names gpuplan's own file: " .. e, label)
  end
  if e:find("attempt to", 1, true) then finding("runtime error: " .. e, label) end
  if e:find("\n") then finding("more than one line: " .. e:gsub("\n", "\\n"), label) end
  -- a job that does not fit says what it needs and has, whatever the
  -- key that shrank it (memory = 7: "has 0.00 GB after the margin")
  if key and not e:find(key:match("[%w_]+$"), 1, true) and not e:find("needs [%d.]+ GB per GPU") then
    finding("does not name " .. key .. ": " .. e, label)
  end
  return false, e
end

local function with(b, k, v)
  local t = {}
  for x, y in pairs(b) do t[x] = y end
  t[k] = v
  return t
end
local function copy(t)
  local o = {}
  for k, v in pairs(t) do o[k] = type(v) == "table" and copy(v) or v end
  return o
end
local function sorted(t)
  local ks = {}
  for k in pairs(t) do ks[#ks + 1] = k end
  table.sort(ks, function(a, b) return tostring(a) < tostring(b) end)
  return ks
end
local function section(name) return not only or only == name end

local function fn() end
local BAD = { { "nil", nil }, { "0", 0 }, { "-1", -1 }, { "1.5", 1.5 }, { "nan", 0 / 0 },
  { "inf", math.huge }, { "1e300", 1e300 }, { "'zzz'", "zzz" }, { "{}", {} }, { "true", true },
  { "fn", fn } }

---------------------------------------------------------------------------
-- options: each planner's every declared key
local RL = { model = "qwen2.5-7b", gpu = H, gpus = 8, prompts = 64, group = 8, prompt_len = 512,
  response_len = 2048 }
local PLANNERS = {
  { "fit", gp.memory, { model = "llama3-8b", gpu = H } },
  { "fit", gp.memory, { model = "llama3-8b", gpu = H, method = "lora" }, "memory lora" },
  { "fit", gp.memory, { model = "llama3-8b", gpu = H, method = "infer" }, "memory infer" },
  { "fit", gp.memory, with(RL, "method", "grpo"), "memory grpo" },
  { "train", gp.train, { model = "llama3-8b", gpu = H, gpus = 8 } },
  { "train", gp.train, { model = "mixtral-8x7b", gpu = H, gpus = 8, ep = 8, stack = "megatron" },
    "train moe" },
  { "train", gp.train_job, { model = "llama3-8b", gpu = H, gpus = 8 }, "train_job" },
  { "plan", gp.sweep, { model = "llama3-8b", gpu = H, gpus = 8 } },
  { "rl", gp.rl, RL },
  { "rl", gp.rl_job, RL, "rl_job" },
  { "infer", gp.infer, { model = "llama3-8b", gpu = H } },
  { "infer", gp.infer, { model = "qwen3-30b-a3b", gpu = H, gpus = 8, ep = 8, tp = 8 }, "infer moe" },
  -- a spread burst under vLLM, where output_max (the requests'
  -- max_tokens), first_token_lag and kv_tokens all take part
  { "infer", gp.infer, { model = "llama3-8b", gpu = H, runtime = "vllm", requests = 64,
    output_dist = "exp", output = 300 }, "infer exp burst" },
  { "infer", gp.infer_plan, { model = "llama3-8b", gpu = H, target = 1000 }, "infer_plan" },
  { "comm", gp.comm, { gpu = H, gpus = 8, bytes = 2 ^ 20 } },
}
-- Keys whose declared type understates what they take (a switch, a
-- list, a policy): their kinds of value answer by design.
local TAKES = { fsdp = { boolean = true }, recompute_modules = { table = true },
  cuda_graph_scope = { table = true }, policy = { table = true, ["function"] = true },
  progress = { ["function"] = true }, reward_model = { boolean = true },
  lora_dropout = { boolean = true }, offload = { boolean = true } }
local NUMS = { 0, -1, 1.5, 1e300, 0 / 0, math.huge, -math.huge, -0.5, 2 ^ 40 }
local function values_for(ty, key)
  local vs = {}
  -- ok: true, it answers; false, it must raise; nil, either (a number's
  -- range is the key's own)
  local function add(v, ok)
    if (TAKES[key] or {})[type(v)] then ok = true end
    vs[#vs + 1] = { v, ok }
  end
  add(fn, ty == "function")
  add(setmetatable({}, {}), ty == "table" or ty == "string|table")
  if ty ~= "flag" and ty ~= "boolean" then add(true, false) end
  if ty == "int" or ty == "number" or ty == "number|string" then
    add("zzz", false)
    for _, n in ipairs(NUMS) do add(n, nil) end
  elseif ty == "flag" or ty == "boolean" then
    add("zzz", false) add(0 / 0, false) add(1, false)
  elseif ty == "string" or ty == "string|table" or ty == "format" or ty == "format_html" then
    add("zzz_nonsense", nil) add("", nil) add(7, nil) add(0 / 0, false)
  end
  return vs
end
if section("options") then
  for _, p in ipairs(PLANNERS) do
    local cmd, f, base = p[1], p[2], p[3]
    local name = p[4] or ("gp." .. cmd)
    for _, k in ipairs(sorted(O.keys(cmd))) do
      local ty = O.view(O.get(k), cmd).type
      for _, vv in ipairs(values_for(ty, k)) do
        local accept = vv[2]
        if accept == true then accept = nil end
        run(string.format("%s %s=%s [%s]", name, k, q(vv[1]), ty), f, k, accept,
          with(base, k, vv[1]))
      end
      run(string.format("%s %sx=1", name, k), f, k .. "x", false, with(base, k .. "x", 1))
    end
    for _, k in ipairs { "model", "gpu" } do
      if base[k] then run(name .. " " .. k .. "=nil", f, k, false, with(base, k, nil)) end
    end
    run(name .. " {}", f, nil, false, {})
  end
end

---------------------------------------------------------------------------
-- functions: each function's arguments one by one
if section("functions") then
  local fns = {}
  for _, n in ipairs { "memory", "train", "train_job", "sweep", "rl", "rl_job", "infer",
      "infer_plan", "comm", "roofline", "catalog", "params", "model_from_hf", "parse", "render",
      "json" } do
    fns[#fns + 1] = { "gp." .. n, gp[n] }
  end
  for _, ns in ipairs { "policy", "prices", "units", "validate", "vlm" } do
    for _, k in ipairs(sorted(gp[ns])) do
      if type(gp[ns][k]) == "function" then fns[#fns + 1] = { "gp." .. ns .. "." .. k, gp[ns][k] } end
    end
  end
  for _, fv in ipairs(fns) do
    for _, b in ipairs(BAD) do
      run(fv[1] .. "(" .. b[1] .. ")", fv[2], nil, nil, b[2])
      run(fv[1] .. "(" .. b[1] .. ", " .. b[1] .. ")", fv[2], nil, nil, b[2], b[2])
      run(fv[1] .. "(cat, " .. b[1] .. ")", fv[2], nil, nil, cat, b[2])
      run(fv[1] .. "(cat, 'h100-sxm', " .. b[1] .. ")", fv[2], nil, nil, cat, H, b[2])
    end
  end
end

---------------------------------------------------------------------------
-- entries: model and GPU tables with a field removed or spoilt
if section("entries") then
  local m0 = copy(cat:get("models", "llama3-8b"))
  local uses = { { "memory", gp.memory, {} }, { "train", gp.train, { gpus = 8 } },
    { "infer", gp.infer, {} }, { "roofline", gp.roofline, {} } }
  for _, k in ipairs(sorted(m0)) do
    if not tostring(k):match("^_") then
      for _, b in ipairs(BAD) do
        local m = copy(m0)
        m[k] = b[2]
        for _, u in ipairs(uses) do
          local a = copy(u[3])
          a.model, a.gpu = m, H
          run(string.format("gp.%s model.%s=%s", u[1], k, b[1]), u[2], k, nil, a)
        end
        run(string.format("gp.params model.%s=%s", k, b[1]), gp.params, k, nil, m)
      end
    end
  end
  local mm = copy(cat:get("models", "mixtral-8x7b"))
  for _, k in ipairs { "experts", "top_k", "ffn_hidden", "shared_experts", "expert" } do
    for _, b in ipairs(BAD) do
      local m = copy(mm)
      m.moe[k] = b[2]
      run("gp.train moe." .. k .. "=" .. b[1], gp.train, k, nil, { model = m, gpu = H, gpus = 8, ep = 8 })
    end
  end
  local g0 = copy(cat:get("gpus", H))
  for _, k in ipairs(sorted(g0)) do
    if not tostring(k):match("^_") then
      for _, b in ipairs(BAD) do
        local g = copy(g0)
        g[k] = b[2]
        run("gp.roofline gpu." .. k .. "=" .. b[1], gp.roofline, k, nil, { gpu = g })
        run("gp.train gpu." .. k .. "=" .. b[1], gp.train, k, nil, { gpu = g, model = "llama3-8b", gpus = 8 })
        run("gp.infer gpu." .. k .. "=" .. b[1], gp.infer, k, nil, { gpu = g, model = "llama3-8b" })
      end
    end
  end
  for _, k in ipairs { "bf16", "fp8", "fp32", "bf61" } do
    for _, b in ipairs(BAD) do
      local g = copy(g0)
      g.peak[k] = b[2]
      run("gp.train gpu.peak." .. k .. "=" .. b[1], gp.train, k, nil, { gpu = g, model = "llama3-8b", gpus = 8 })
    end
  end
end

---------------------------------------------------------------------------
-- jobs: job:step, its results, a result edited and used again
if section("jobs") then
  local tj = gp.train_job { model = "llama3-8b", gpu = H, gpus = 8 }
  local rj = gp.rl_job(RL)
  for _, k in ipairs { "tp", "pp", "cp", "ep", "etp", "vpp", "zero", "sp", "batch", "recompute",
      "recompute_layers", "first_stage_layers", "last_stage_layers", "stage_layers", "split_ends",
      "global_batch", "fsdp", "overlap_grad_reduce", "tp_overlap", "rollout_tp", "tpp" } do
    for _, b in ipairs(BAD) do
      if b[2] ~= nil then
        if not k:match("^rollout") then
          run("train_job:step " .. k .. "=" .. b[1], function(x) return tj:step(x) end, k, nil, { [k] = b[2] })
        end
        run("rl_job:step " .. k .. "=" .. b[1], function(x) return rj:step(x) end, k, nil, { [k] = b[2] })
      end
    end
  end
  local s = tj:step { tp = 2 }
  for _, b in ipairs(BAD) do
    run("train_job:step(" .. b[1] .. ")", function(x) return tj:step(x) end, nil, nil, b[2])
    run("train_job:step({}, " .. b[1] .. ")", function(x) return tj:step({}, x) end, nil, nil, b[2])
    run("step.step_s = " .. b[1], function(x) s.step_s = x end, "step_s", false, b[2])
    run("step:table(" .. b[1] .. ")", function(x) return s:table(x) end, nil, nil, b[2])
  end
  run("step.zzz", function() return s.zzz end, "zzz", false)
  run("refill with an rl step", function() return tj:step({ tp = 2 }, rj:step { tp = 2 }) end, nil, false)
  for _, f in ipairs { "step_s", "layout", "parts", "defaults" } do
    for _, b in ipairs(BAD) do
      local r = gp.train { model = "llama3-8b", gpu = H, gpus = 8 }
      r[f] = b[2]
      run("gp.render(a train result, " .. f .. "=" .. b[1] .. ")", gp.render, nil, nil, { r })
      run("gp.json(a train result, " .. f .. "=" .. b[1] .. ")", gp.json,
        type(b[2]) == "function" and f or nil, nil, r)
    end
  end
end

---------------------------------------------------------------------------
-- nested: lists, prices, weights, a topology's fields
if section("nested") then
  local LISTS = { { "{}", {} }, { "{0}", { 0 } }, { "{-1}", { -1 } }, { "{1.5}", { 1.5 } },
    { "{nan}", { 0 / 0 } }, { "{'zzz'}", { "zzz" } }, { "{{}}", { {} } }, { "{1,'x'}", { 1, "x" } },
    { "{true}", { true } }, { "{x=1}", { x = 1 } }, { "{fn}", { fn } } }
  local base = { model = "llama3-8b", gpu = H, gpus = 8 }
  for _, k in ipairs(sorted(O.keys("plan"))) do
    for _, b in ipairs(LISTS) do run("gp.sweep " .. k .. "=" .. b[1], gp.sweep, k, nil, with(base, k, b[2])) end
  end
  local ib = { model = "llama3-8b", gpu = H }
  for _, b in ipairs(LISTS) do
    run("gp.infer gpu=" .. b[1], gp.infer, "gpu", nil, with(ib, "gpu", b[2]))
    run("gp.train price=" .. b[1], gp.train, "price", nil, with(base, "price", b[2]))
    run("gp.train stage_layers=" .. b[1], gp.train, "stage_layers", nil,
      { model = "llama3-8b", gpu = H, gpus = 8, pp = 2, stack = "megatron", stage_layers = b[2] })
  end
  for _, f in ipairs { "amount", "currency", "amout" } do
    for _, b in ipairs(BAD) do
      local p = { amount = 2, currency = "USD" }
      p[f] = b[2]
      run("gp.train price." .. f .. "=" .. b[1], gp.train, "price", nil, with(base, "price", p))
    end
  end
  for _, f in ipairs { "bits", "group", "group_bits", "grp" } do
    for _, b in ipairs(BAD) do
      local w = { bits = 4, group = 128 }
      w[f] = b[2]
      run("gp.memory weights." .. f .. "=" .. b[1], gp.memory, f, nil,
        { model = "llama3-8b", gpu = H, method = "infer", weights = w })
    end
  end
  local topo0 = { gpus_per_node = 8, nodes = 2, up_kind = "nvlink", up_bw = "450GB/s per-dir",
    up_latency = "0.6us", nic_bw = "50GB/s per-dir", nic_latency = "5us", nics = 8 }
  for _, k in ipairs(sorted(topo0)) do
    for _, b in ipairs(BAD) do
      run("gp.comm topology." .. k .. "=" .. b[1], gp.comm, k, nil,
        { topology = with(topo0, k, b[2]), bytes = 2 ^ 20 })
    end
  end
  for _, b in ipairs(BAD) do
    local m = { id = "rm", name = "rm", layers = b[2], hidden = 512, heads = 8, ffn_hidden = 1024,
      vocab = 1000, source = "t" }
    run("gp.rl reward_model.layers=" .. b[1], gp.rl, "layers", nil, with(RL, "reward_model", m))
  end
end

---------------------------------------------------------------------------
-- misc: catalog methods, roofline ops, reports, policies, options, vlm
if section("misc") then
  for _, b in ipairs(BAD) do
    local x = b[2]
    run("cat:get(" .. b[1] .. ", id)", function() return cat:get(x, H) end, nil, nil)
    run("cat:get('gpus', " .. b[1] .. ")", function() return cat:get("gpus", x) end, nil, nil)
    run("cat.get(" .. b[1] .. ", ...)", function() return cat.get(x, "gpus", H) end, nil, false)
    run("cat.get('gpus', " .. b[1] .. ")", function() return cat.get("gpus", x) end, nil, false)
    run("cat:ids(" .. b[1] .. ")", function() return cat:ids(x) end, nil, nil)
    run("cat:achievable(" .. b[1] .. ")", function() return cat:achievable(x) end, nil, nil)
    run("cat:convert({amount=" .. b[1] .. "})",
      function() return cat:convert({ amount = x, currency = "USD" }, "CNY") end, nil, nil)
    run("gp.catalog{dirs=" .. b[1] .. "}", gp.catalog, "dirs", nil, { dirs = x })
    for _, k in ipairs { "flop", "bytes", "prec", "m", "n", "k", "count", "flops" } do
      local op = { flop = 1e12, bytes = 1e9, m = 4096, n = 4096, k = 4096 }
      op[k] = x
      run("gp.roofline op." .. k .. "=" .. b[1], gp.roofline, k, nil, { gpu = H, op = op })
    end
    run("gp.roofline infer=" .. b[1], gp.roofline, nil, nil, { gpu = H, model = "llama3-8b", infer = x })
    run("gp.infer_plan target=" .. b[1], gp.infer_plan, "target", nil, { model = "llama3-8b", gpu = H, target = x })
    run("gp.infer_plan cat=" .. b[1], gp.infer_plan, nil, nil, { model = "llama3-8b", gpu = H, target = 1000, cat = x })
    for _, k in ipairs { "gpus", "cat", "images", "zzz" } do
      run("gp.vlm.plan " .. k .. "=" .. b[1], gp.vlm.plan, k, nil, with({ model = "qwen2-vl-7b", gpu = H }, k, x))
      run("gp.vlm.tokens " .. k .. "=" .. b[1], gp.vlm.tokens, k, nil, with({ model = "qwen2-vl-7b", images = 1 }, k, x))
    end
    for _, k in ipairs { "columns", "format", "title", "colums" } do
      run("gp.render opts." .. k .. "=" .. b[1], gp.render, k, nil, { { a = 1 } }, { [k] = x })
    end
    for _, k in ipairs { "key", "fmt", "align", "lable" } do
      local c = { key = "a" }
      c[k] = x
      run("gp.render column." .. k .. "=" .. b[1], gp.render, nil, nil, { { a = 1 } }, { columns = { c } })
    end
    run("gp.options param default=" .. b[1], gp.options, nil, nil, { n = { "count", x } }, {})
    run("gp.options param extra=" .. b[1], gp.options, "zz", x == nil, { n = { "count", 1, zz = x } }, {})
    run("gp.policy.monthly budget=" .. b[1], gp.policy.monthly, "budget", nil, { budget = x })
    run("gp.policy.fastest deadline=" .. b[1], gp.policy.fastest, "deadline", nil, { deadline = x })
    run("gp.sweep policy returns " .. b[1], gp.sweep, nil, nil,
      { model = "llama3-8b", gpu = H, gpus = 8, policy = function() return x end })
    run("gp.prices.buyer currency=" .. b[1], gp.prices.buyer, "currency", nil, cat, { currency = x })
    run("gp.prices.buyer zz=" .. b[1], gp.prices.buyer, "zz", x == nil, cat, { zz = x })
    run("gp.prices.cheapest currency=" .. b[1], gp.prices.cheapest, "currency", nil, cat, H, { currency = x })
    run("gp.units.duration_unit(" .. b[1] .. ")", gp.units.duration_unit, nil, type(x) == "number" or false, x)
    run("gp.units.amount_fmt(" .. b[1] .. ")", gp.units.amount_fmt, nil, type(x) == "number" or false, x)
  end
  run("gp.policy.monthly budgett", gp.policy.monthly, "budgett", false, { budgett = 1000 })
end

---------------------------------------------------------------------------
-- cases: a validation case file with one workload field spoilt, read
-- (gp.validate.read) and, where it is taken, predicted
-- (gp.validate.predict): the case fields this session's options reach
-- through (margin, kv_tokens, output_max, output_dist, server's
-- async-llm-engine), on the shipped cases that state them and on a case
-- of another kind or runtime.  A refusal is read's, at the file's line,
-- naming the field; a prediction's reason carries no runtime error or
-- gpuplan position, and its figures are finite.
if section("cases") then
  local shipped = {}
  for _, c in ipairs(gp.validate.read("validation/cases.json")) do shipped[c.id] = c end
  local function clean(c)
    if type(c) ~= "table" then return c end
    local o = {}
    for k, v in pairs(c) do
      if not (type(k) == "string" and k:match("^_")) then o[k] = clean(v) end
    end
    return o
  end
  local BASES = {
    -- vLLM V0 on its in-process AsyncLLMEngine (first_token_lag 1)
    "accelmark-vllm073-llama3-8b-a100-40gb-interactive-c1-ttft",
    -- the stated pool and utilization (kv_tokens, margin)
    "nvbench-nim2012-llama31-8b-rtx5090-bf16-rag-3500-500-c1",
    -- a spread burst's max_tokens (output_dist exp, output_max 150)
    "dstack405b-vllm063-mi300x-tp8-short-80in-1req",
  }
  -- a case of another kind and one of another runtime take none of them
  local other_train, other_rt
  local ids = sorted(shipped)
  for _, id in ipairs(ids) do
    local c = shipped[id]
    if not other_train and c.kind == "train" then other_train = id end
    if not other_rt and c.kind == "infer" and c.workload and c.workload.framework == "sglang" then
      other_rt = id
    end
  end
  BASES[#BASES + 1] = other_train
  BASES[#BASES + 1] = other_rt
  local VALUES = { "null", "0", "-1", "1.5", "0.99", "1e300", "1e400", "-1e400", "2147483648",
    '"zzz"', '""', "{}", "[]", "true", '"async-llm-engine"', '"exp"', '"sharegpt"', "150" }
  local FIELDS = { "margin", "kv_tokens", "output_max", "output_dist", "server", "concurrency",
    "input_len", "output_len" }
  local dir = os.tmpname()
  os.remove(dir)
  local path = dir .. "-fuzz-case.json"
  for _, id in ipairs(BASES) do
    local base = shipped[id]
    if not base then finding("no shipped case", id) else
      for _, f in ipairs(FIELDS) do
        for _, v in ipairs(VALUES) do
          local c = clean(base)
          c.workload = c.workload or {}
          c.workload[f] = "@@FUZZ@@"
          local text = "[" .. gp.json(c):gsub('"@@FUZZ@@"', function() return v end) .. "]"
          local fh = assert(io.open(path, "w"))
          fh:write(text)
          fh:close()
          local label = string.format("case %s workload.%s=%s", id, f, v)
          calls = calls + 1
          local ok, r = pcall(gp.validate.read, path)
          if not ok then
            local e = tostring(type(r) == "table" and r.msg or r)
            if e:find("attempt to", 1, true) then finding("runtime error: " .. e, label) end
            if e:find("engine/", 1, true) or e:find("lua/gpuplan/", 1, true) or e:find("%.c:%d+") then
              finding("names gpuplan's own file: " .. e, label)
            end
            if e:find("\n") then finding("more than one line: " .. e:gsub("\n", "\\n"), label) end
            if not e:find(f, 1, true) and not e:find("kind", 1, true) then
              finding("does not name " .. f .. ": " .. e, label)
            end
          else
            local okp, row = pcall(gp.validate.predict, r[1], cat)
            if not okp then
              finding("predict raised: " .. tostring(row), label)
            else
              local why = tostring(row.reason or "")
              if why:find("attempt to", 1, true) then finding("runtime error: " .. why, label) end
              if why:find("engine/", 1, true) or why:find("lua/gpuplan/", 1, true)
                 or why:find("%.c:%d+") then
                finding("names gpuplan's own file: " .. why, label)
              end
              for _, k in ipairs { "predicted", "error", "predicted_lo", "predicted_hi" } do
                local x = row[k]
                if x ~= nil and (type(x) ~= "number" or x ~= x or x == math.huge or x == -math.huge) then
                  finding("row." .. k .. " is " .. tostring(x), label)
                end
              end
            end
          end
        end
      end
    end
  end
  os.remove(path)
end

---------------------------------------------------------------------------
-- nvls: a user fabric's nccl nvls_channels_nodes (the NVLS channels of a
-- communicator spanning nodes) spoilt, loaded from a catalog dir and
-- priced by gp.comm across two B200 nodes (NVLS and NVLS_TREE read it)
if section("nvls") then
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir -p '" .. dir .. "/fabrics'"))
  local VALUES = { "nil", "0", "-1", "1.5", "0/0", "1/0", "1e300", "65", "64", "1",
    "'zzz'", "{}", "true" }
  for _, v in ipairs(VALUES) do
    local fh = assert(io.open(dir .. "/fabrics/fz.lua", "w"))
    fh:write("fabric { id = 'nvlink5-fz', name = 'x', scope = 'scaleup', kind = 'nvlink',\n"
      .. "  bw = '1800GB/s bidir', latency = '0.6us', in_switch_reduction = 'nvls',\n"
      .. "  achievable = 0.76, achievable_reason = 'x',\n"
      .. "  nccl = { nvls_efficiency = 0.74, nvls_channels = 24, nvls_channels_nodes = " .. v
      .. ", source = 'x' }, source = 'x' }\n")
    fh:close()
    local label = "fabric nccl.nvls_channels_nodes=" .. v
    local okc, c = pcall(gp.catalog, { dirs = { "catalog", dir } })
    calls = calls + 1
    if not okc then
      local e = tostring(type(c) == "table" and c.msg or c)
      if e:find("attempt to", 1, true) then finding("runtime error: " .. e, label) end
      if e:find("engine/", 1, true) or e:find("lua/gpuplan/", 1, true) or e:find("%.c:%d+") then
        finding("names gpuplan's own file: " .. e, label)
      end
      if not e:find("nvls_channels_nodes", 1, true) then
        finding("does not name nvls_channels_nodes: " .. e, label)
      end
    else
      -- NVLS (its NVLS_TREE across the nodes) and the automatic choice,
      -- under releases that read the count across hosts (2.27.3, 2.30.3)
      for _, algo in ipairs { "nvls", "auto" } do
        for _, nccl in ipairs { "2.26.2", "2.27.3", "2.30.3" } do
          run(label .. " algo=" .. algo .. " nccl=" .. nccl, gp.comm, "nvls_channels_nodes", nil,
            { system = "dgx-b200", gpus = 16, fabric = "nvlink5-fz", bytes = 2 ^ 26,
              algo = algo ~= "auto" and algo or nil, nccl = nccl, cat = c })
        end
      end
    end
  end
  os.remove(dir .. "/fabrics/fz.lua")
  os.remove(dir .. "/fabrics")
  os.remove(dir)
end

print(string.format("fuzz_api: %d calls, %d findings", calls, #findings))
for _, x in ipairs(findings) do print(x) end
os.exit(#findings == 0 and 0 or 1)
