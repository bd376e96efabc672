-- gpuplan.sweep: the layout search -- which cards, how many, which layout.
--
--   local gp = require "gpuplan"
--   local r = gp.sweep{ model = "llama3-70b", method = "pretrain", seq = 8192,
--                       gpu = { "h100-sxm", "h800-sxm", "b200" }, gpus = "64..1024",
--                       tokens = 2e12, policy = gp.policy.cheapest{ deadline = "30d" } }
--   for _, c in ipairs(r.results) do print(c.gpu, c.gpus, c.layout, c.days, c.cost) end
--
-- Every option of gp.train describes the job (model, method, precision,
-- seq, global_batch, tokens, price, system, overlaps ...); the layout is
-- swept instead of given:
--   gpu          one id or a list, each once, at most 64    (required)
--   gpus         counts: a list, a number, or "A..B" (A, 2A, 4A ... <= B)
--   tp_max (8, the node), pp_max (8), cp_max (1), ulysses_max (1: a
--                DeepSpeed-Ulysses group in place of CP, gp.train's
--                ulysses), ep_max (1), vpp_max (1)
--   zero         stages to try (default {1}: the distributed optimizer)
--   micro_batch  sizes to try (default {1, 2, 4})
--   recompute    policies to try (default {"none", "selective", "full"})
--   schedule     pipeline schedules to try (default {"1f1b"}: 1F1B, and
--                interleaved where vpp_max allows it; "interleaved" alone
--                keeps those; "dualpipe": DeepSeek-V3's, on an even pp
--                with an even count of at least 2 x pp micro-batches)
--   sp           {true} (default), {false, true} ...
--   tp_overlap, overlap_grad_reduce   a list ({false, true}) sweeps them
--   key          time | cost | per_dollar | mfu | gpus (default time)
--   deadline     "30d", "12h", seconds: time to train `tokens` at most
--   budget       "$50k", "100kCNY", "¥100k": the run's cost at most
--   where        function(candidate) -> boolean: a predicate on each
--                fitting candidate that could still enter the top
--                (its fields as in the results)
--   scaling      false: skip each result's scaling efficiency (default: on)
--   progress     true: a progress bar on stderr once a card's search has
--                run a second, when stderr is a terminal; or a
--                function(done, total, gpu) called as layouts are priced
--   bound        false: time every fitting layout (default true: a lower
--                bound on a layout's step skips those that cannot rank)
--   policy       a gp.policy.* table (sets key, deadline, budget), or a
--                function(candidate, cat) -> score (lower is better; nil
--                drops it; cat: the job's catalog, whose rates convert
--                the candidate's currency)
--   top          how many to keep (default 10)
--   shard        "K/N": this shard of a deterministic split of the space
--
-- Result: results (ranked, best first): gpu, gpu_order (its place in the
-- gpu list), index (the layout's place in that card's enumeration), score
-- (what they are ranked by, lower first), gpus, tp, pp, cp, ulysses, ep, dp,
-- zero, vpp, sp, micro_batch, recompute, schedule, layout (a label), step_s,
-- tokens_per_s, mfu, days, cost, currency, mem_gib, scaling (tokens/s
-- per GPU against the fastest layout on the base count, > 0, above 1
-- where the base fits only by recompute or the like), flags (scaling below 0.6); stats
-- per GPU
-- type (space: combinations enumerated, each bound clamped to what the model,
-- node and largest count allow; layouts: of them dividing the
-- model, nodes and batch, bounded: skipped by the lower bound, fitting,
-- within); defaults.

local units = require "gpuplan.units"
local args = require "gpuplan.args"
local train = require "gpuplan.train"

local M = {}

local function core() return require "gpuplan.core" end

-- The most shards a search splits into (engine/sweep.h SWEEP_SHARDS_MAX,
-- where the reason is): plan refuses more, merge a shard claiming more.
M.SHARDS_MAX = core().SWEEP_SHARDS_MAX
local function fail(fmt, ...) error(string.format(fmt, ...), 3) end
-- A usage refusal (gpuplan.args usage): options that do not go together,
-- whatever the model and the card; the command line exits 2 on it.
local function usage(fmt, ...) error(args.usage(string.format(fmt, ...)), 3) end

-- What gp.sweep reads itself rather than passing on as the job's (the
-- search, and what it searches: gpu and gpus lists, zero, micro_batch,
-- recompute and sp lists); its options are declared in gpuplan.options.
local options = require "gpuplan.options"
M.SWEEP_OPTIONS = options.own("plan", "train")

-- Durations: "30d", "2w", "12h", "90m", "3600s" or seconds.
function M.duration(v, what)
  if type(v) == "number" then
    if not (v > 0 and v < math.huge) then fail("%s must be a positive duration", what) end
    return v
  end
  if type(v) ~= "string" then fail("%s must be a duration like '30d' (got %s)", what, type(v)) end
  local n, u = v:match("^%s*([%d.eE+]+)%s*([smhdw]?)%s*$")
  local mult = { s = 1, m = 60, h = 3600, d = 86400, w = 7 * 86400 }
  n = tonumber(n)
  -- "0d" is a duration, of the wrong size: said as such, as a budget's 0 is
  if n == 0 then fail("%s '%s': must be a positive duration", what, v) end
  -- a negative one ("-5d") is a duration once its sign is gone, of the
  -- wrong size: refused as 0d is (exit 1), as a negative --budget and a
  -- negative quantity are (gpuplan.options quantity), not as text that
  -- is no duration
  local unsigned = not n and v:match("^%s*%-(.*)$")
  if unsigned and unsigned:match("^%s*[%d.eE+]+%s*[smhdw]?%s*$")
     and tonumber(unsigned:match("[%d.eE+]+")) then
    fail("%s '%s': must be a positive duration", what, v)
  end
  if not n or not (n > 0 and n < math.huge) then
    -- the units taken said, months and years not being among them
    -- (a month has no one length): "6mo" left the user guessing
    -- text that is no duration is a value the option cannot parse: a
    -- usage error (docs/output.md), where 0d above parses and is refused
    usage("%s '%s': expected a duration like 30d, 12h or 2w (a number and one unit: s, m, "
      .. "h, d or w; no months or years: half a year is 26w)", what, v)
  end
  -- A string without its unit is refused, as every quantity option's
  -- bare number is (gpuplan.options quantity): --deadline 30 was 30
  -- seconds, which no layout meets ("no layout fits"), where the user
  -- meant days.  A Lua number is seconds.
  if u == "" then fail("%s '%s' needs a unit, e.g. 30d (s, m, h, d or w)", what, v) end
  -- The engine's bound on amounts (docs/output.md: "at most 1e15"), said
  -- of the text typed: "1e300d" read "--deadline must be a number in [0,
  -- 1e+15] (got 8.64e+304)", seconds the user never wrote, and "1e304w"
  -- (past a double) "sweep.deadline must be finite".
  if n * mult[u] > 1e15 then
    fail("%s '%s': at most 1e15 s (about 31.7 million years)", what, v)
  end
  return n * mult[u]
end

-- Money: "$50k", "50000USD", "100kCNY", "¥100k", "1.2M$" -> {amount, currency}.
-- cat: the catalog whose rates convert it (the job's; default gp.catalog());
-- false: the amount's form only, its currency checked later against the
-- job's catalog (gp.policy.monthly, made before it knows the job).
function M.money(v, what, default_currency, cat)
  if type(v) == "number" then
    if not (v > 0 and v < math.huge) then fail("%s must be a positive amount", what) end
    return { amount = v, currency = default_currency }
  end
  if type(v) ~= "string" then fail("%s must be an amount like '$50k' (got %s)", what, type(v)) end
  local s, cur = v:gsub("%s", ""), nil
  if s:match("^%$") then cur, s = "USD", s:sub(2)
  elseif s:match("%$$") then cur, s = "USD", s:sub(1, -2)
  elseif s:match("^\u{a5}") then cur, s = "CNY", s:sub(3)
  elseif s:match("^\u{ffe5}") then cur, s = "CNY", s:sub(4) end
  -- a sign: "-5k" is an amount of the wrong size, said as such below
  local neg = s:match("^%-") ~= nil
  if neg then s = s:sub(2) end
  -- the number, its exponent only with digits after the e: "1000EUR"
  -- was read as the number "1000E" and refused as no amount
  local n, rest = s:match("^(%d*%.?%d*[eE][+-]?%d+)(.*)$")
  if not n then n, rest = s:match("^(%d*%.?%d*)(.*)$") end
  local suffix, code = rest:match("^([kKmM]?)(%a*)$")
  -- a currency is a three-letter code (ISO 4217): "1e" is not one
  if code and code ~= "" and #code ~= 3 then suffix = nil end
  if code and code ~= "" then
    if cur then suffix = nil else cur = code:upper() end
  end
  n = suffix and tonumber(n)
  if n and (n == 0 or neg) then
    -- "0" read "expected an amount like $50k": it is one, and refused
    fail("%s '%s': must be a positive amount (a free card, --price 0, meets any budget)",
         what, v)
  end
  if not n or not (n > 0 and n < math.huge) then
    -- text that is no amount: a usage error (docs/output.md), where a
    -- negative or zero amount above parses and is refused
    usage("%s '%s': expected an amount like $50k, 100kCNY or 1.2MUSD", what, v)
  end
  -- a currency the catalog cannot convert, named with the argument
  -- (it was "no exchange rate for currency XYZ", raised later, from the
  -- conversion, without saying which option held it)
  -- the job's catalog, not the built-in one: a currency a catalog given
  -- as cat = ... adds was refused as having no rate
  local c = cur or default_currency
  if cat == nil then cat = require("gpuplan").catalog() end
  if cat and c and c ~= "USD" and not (cat.currencies and cat.currencies[c]) then
    local names = { "USD" }
    for k in pairs(cat.currencies or {}) do names[#names + 1] = k end
    table.sort(names)
    fail("%s '%s': no exchange rate for %s in the catalog (%s)", what, v, c,
         table.concat(names, ", "))
  end
  local mult = ({ k = 1e3, K = 1e3, m = 1e6, M = 1e6 })[suffix] or 1
  -- The bound on amounts (docs/output.md: "at most 1e15"), said of the
  -- text typed: "1e30" read "--budget must be a number in [0, 1e+15]",
  -- a range with the 0 that "must be a positive amount" refuses.
  if n * mult > 1e15 then fail("%s '%s': at most 1e15", what, v) end
  return { amount = n * mult, currency = c }
end

-- GPU counts: a list, a number, or "A..B" doubling from A to B.
function M.counts(v)
  if type(v) == "number" then v = { v } end
  if type(v) == "string" then
    local a, b = v:match("^%s*(%d+)%s*%.%.%s*(%d+)%s*$")
    if not a then
      local list = {}
      -- an empty entry ("8,", ",8", "8,,16") is a count left out, as
      -- --gpu's "h100-sxm," is refused; gmatch("[^,]+") skipped it
      if (v .. ","):find("^%s*,") or (v .. ","):find(",%s*,") then
        usage("sweep: gpus '%s': expected counts like 64..1024 or 8,16,32 (an empty entry)", v)
      end
      for x in v:gmatch("[^,]+") do
        local n = args.decimal_int(x)
        -- text that is no count list is a usage error (exit 2), as
        -- --zero abc and train's --gpus abc are (docs/output.md: "a value
        -- the option cannot parse"); a count out of range below is exit 1
        if not n then usage("sweep: gpus '%s': expected counts like 64..1024 or 8,16,32", v) end
        list[#list + 1] = n
      end
      v = list
    else
      a, b = tonumber(a), tonumber(b)
      if a < 1 or b < a then fail("sweep: gpus '%s': need 1 <= A <= B", v) end
      -- B within the bound on a count (options.COUNT_MAX, the engine's
      -- GP_COUNT_MAX), before the doubling: past 2^62 the integer wrapped
      -- to a negative count, <= B again, so '1..99999999999999999999'
      -- never ended and the list grew until memory ran out.
      if b > options.COUNT_MAX then
        fail("sweep: gpus '%s': B is at most %d, the bound on a count", v, options.COUNT_MAX)
      end
      local list, n = {}, a
      while n <= b do list[#list + 1] = n; n = n * 2 end
      -- B is the last count searched: "64..1000" searched 64 to 512 and
      -- never 1000, in silence.  B that A does not double to is refused,
      -- naming the ranges that end either side of it.
      if list[#list] ~= b then
        fail("sweep: gpus '%s': %d..%d doubles %d to %d, never %d (give %d..%d, %d..%d or a "
          .. "list ending in %d)", v, a, b, a, list[#list], b, a, list[#list], a, list[#list] * 2,
          b)
      end
      v = list
    end
  end
  if type(v) ~= "table" or #v == 0 then fail("sweep: gpus must be counts (a list, a number or 'A..B')") end
  if #v > 64 then fail("sweep: gpus: at most 64 counts (got %d)", #v) end
  local out, seen = {}, {}
  for i, n in ipairs(v) do
    -- One rule with the CLI, which reads "1e6" as 1000000: a whole
    -- number is a count, whether Lua holds it as an integer or a float.
    local bad = options.bad_count(string.format("gpus[%d]", i), n)
    if bad then fail("sweep: %s", bad) end
    local k = math.tointeger(n)
    -- A count given twice was searched twice: every layout of it came
    -- back twice, the runner-up the winner again ("0.0% more").
    if seen[k] then fail("sweep: gpus lists %d twice", k) end
    seen[k] = true
    out[i] = k
  end
  return out
end

-- The most cards one search compares: each runs its own enumeration (a
-- second or so on a wide space), and a catalog holds a few dozen GPUs.
M.GPUS_MAX = 64

-- The cards to search: one id or a list of ids, each once, at most
-- GPUS_MAX.  A repeated id is refused as a repeated count or ZeRO stage
-- is (list_of: "gpus lists 8 twice"): one rule for every list.  It was
-- dropped, said only by the command line's note (and not at all to a
-- script), where gpus = {8, 8} was an error.
function M.cards(v, who)
  -- who: the function whose gpu this is (gp.infer's list said "sweep:")
  who = who or "sweep"
  -- A GPU's own table (gp.train, gp.memory and gp.infer take one) was
  -- read as an empty list: "gpu must name at least one GPU id".  The
  -- search looks its cards up by id in the job's catalog.
  if type(v) == "table" and v[1] == nil and type(v.id) == "string" then
    fail("%s: gpu: a GPU's table (id '%s') is not searched: put its entry in a catalog "
      .. "directory and give its id with cat = gp.catalog{dirs = {...}}", who, v.id)
  end
  local list = type(v) == "table" and v or { v }
  local out, seen = {}, {}
  for i = 1, #list do
    local id = list[i]
    if type(id) ~= "string" or not id:match("%S") then
      fail("%s: gpu[%d] must be a GPU id (got %s)", who, i, args.shown(id))
    end
    if seen[id] then fail("%s: gpu lists '%s' twice", who, id) end
    seen[id] = true
    out[#out + 1] = id
    if #out > M.GPUS_MAX then
      fail("%s: gpu: at most %d different cards in one search", who, M.GPUS_MAX)
    end
  end
  if #out == 0 then fail("%s: gpu must name at least one GPU id", who) end
  return out
end

local function list_of(v, name)
  if v == nil then return nil end
  if type(v) ~= "table" then v = { v } end
  if #v == 0 then fail("sweep: %s must not be empty", name) end
  -- A value given twice (zero = {1, 1}, --micro-batch 2,2) put each of
  -- its layouts in the results twice, pushing others out of the top.
  local seen = {}
  for _, x in ipairs(v) do
    if type(x) ~= "table" then
      local key = tostring(tonumber(x) or x)
      if seen[key] then
        fail("sweep: %s lists %s twice", name, type(x) == "string" and ("'" .. x .. "'") or args.shown(x))
      end
      seen[key] = true
    end
  end
  return v
end

-- The experts' TP to search (engine/sweep.h's etp level): "tp" (as the
-- layout's tp, Megatron-Core's default; the level's 0) and 1 (the experts
-- folded over the stage's GPUs; the level's 1).
local function etp_list(v)
  v = list_of(v, "etp")
  if v == nil then return nil end
  local out = {}
  for i, x in ipairs(v) do
    if x == "tp" then out[i] = 0
    elseif x == 1 or x == "1" then out[i] = 1
    else fail("sweep: etp[%d] must be \"tp\" or 1 (got %s)", i, args.shown(x)) end
  end
  return out
end

-- The pipeline schedules to search (engine/sweep.h's schedule level,
-- gp_schedule's names): "1f1b" is gp.train's default schedule, 1F1B or
-- interleaved as vpp says (both levels); "interleaved" the layouts with
-- vpp > 1 alone; "dualpipe" DeepSeek-V3's.  nil: the engine's default,
-- that of "1f1b".
local function sched_list(v, a)
  if type(v) == "string" and v:find(",", 1, true) then
    local l = {}
    for x in v:gmatch("[^,]+") do l[#l + 1] = x end
    v = l
  end
  v = list_of(v, "schedule")
  if v == nil then return nil end
  local out, seen = {}, {}
  local function add(x) if not seen[x] then seen[x] = true; out[#out + 1] = x end end
  for i, x in ipairs(v) do
    if x == "1f1b" then add("1f1b"); add("interleaved")
    elseif x == "interleaved" or x == "dualpipe" then add(x)
    else
      fail("sweep: schedule[%d] must be 1f1b, interleaved or dualpipe (got %s)", i,
           args.shown(x))
    end
  end
  if #out == 1 and out[1] == "interleaved" and (a.vpp_max or 1) < 2 then
    usage("sweep: schedule interleaved runs vpp >= 2 model chunks a stage: give vpp_max 2 or "
      .. "more (got %s)", args.shown(a.vpp_max or 1))
  end
  -- DualPipe alone runs one chunk a stage (each rank its stages r and
  -- pp-1-r): a vpp_max above 1 would search nothing, taken in silence.
  if #out == 1 and out[1] == "dualpipe" and (a.vpp_max or 1) > 1 then
    usage("sweep: schedule dualpipe runs one model chunk a stage: vpp_max %s searches "
      .. "nothing (give 1f1b or interleaved too)", args.shown(a.vpp_max))
  end
  -- and pairs the pipeline's two ends: a pp_max below 2 leaves it no
  -- layout ("no split ... divides the model's heads and layers" said it).
  if #out == 1 and out[1] == "dualpipe" and type(a.pp_max) == "number" and a.pp_max < 2 then
    usage("sweep: schedule dualpipe needs an even pp of 2 or more: pp_max %s searches "
      .. "nothing (give 1f1b or interleaved too)", args.shown(a.pp_max))
  end
  return out
end

-- The sharding of layout c by its own name, nil at ZeRO 0: the one place
-- that names it, for the label, gp.train's fsdp and merge's check.  With
-- FSDP searched (o.fsdp, or c.fsdp: a result that says its strategy) the
-- strategy PyTorch calls it: full_shard at ZeRO 3, hybrid_shard (ZeRO 3
-- in a node, replicated across: the hybrid level without a zero_group),
-- shard_grad_op at ZeRO 2 and, under grad_sync step, at ZeRO 1 (one
-- reduce-scatter a step: what ZeRO-1 sends and holds, fsdp_space).  The
-- label said "ZeRO-1" of shard_grad_op there, a stage FSDP has no name
-- for and the user did not ask.  Without FSDP: "ZeRO-1" .. "ZeRO-3".
function M.sharding(c, o)
  if c.zero < 1 then return nil end
  local fsdp = type(c.fsdp) == "string" or (o ~= nil and o.fsdp ~= nil and o.fsdp ~= false)
  if not fsdp then return "ZeRO-" .. c.zero end
  local group = c.zero_group or (o and o.zero_group)
  return c.hybrid and group == nil and "hybrid_shard" or c.zero == 3 and "full_shard"
    or "shard_grad_op"
end

-- A label for a layout: "TP4 PP2 DP8 ZeRO-1 mb1 selective", "TP1 DP8
-- shard_grad_op mb1 none" where FSDP was searched; DualPipe after its
-- pipeline: "TP1 PP16 DualPipe EP64 DP128 ...".  o: the sweep's options
-- (optional; a result that carries its fsdp needs none).
function M.label(c, o)
  local s = { "TP" .. c.tp }
  if c.pp > 1 then s[#s + 1] = "PP" .. c.pp .. (c.vpp > 1 and ("x" .. c.vpp) or "") end
  if c.schedule == "dualpipe" then s[#s + 1] = "DualPipe" end
  if c.cp > 1 then s[#s + 1] = "CP" .. c.cp end
  -- a Ulysses group, where CP would be: "U4"
  if (c.ulysses or 1) > 1 then s[#s + 1] = "U" .. c.ulysses end
  if c.ep > 1 then s[#s + 1] = "EP" .. c.ep end
  if c.etp == 1 and c.tp > 1 then s[#s + 1] = "ETP1" end
  s[#s + 1] = "DP" .. c.dp
  local sharding = M.sharding(c, o)
  if sharding then s[#s + 1] = sharding end
  -- a zero_group's shard groups: "G8", N data-parallel ranks a group
  -- (hybrid_shard names its own: no "HSDP" after it)
  local group = c.zero_group or (o and o.zero_group)
  if c.hybrid and group then s[#s + 1] = "G" .. group
  elseif c.hybrid and sharding ~= "hybrid_shard" then s[#s + 1] = "HSDP" end
  if c.sp and c.tp > 1 then s[#s + 1] = "SP" end
  if c.tp_overlap and c.tp > 1 then s[#s + 1] = "TP-overlap" end
  s[#s + 1] = string.format("mb%g", c.micro_batch)
  s[#s + 1] = c.recompute
  return table.concat(s, " ")
end

-- A scaling efficiency under the floor as the flag prints it: two
-- decimals, more where two would round up to the floor itself ("0.60 <
-- 0.6" for 0.597 said nothing), up to six.
function M.scaling_shown(x)
  local digits, shown = 2, string.format("%.2f", x)
  while tonumber(shown) >= M.SCALING_FLOOR and digits < 6 do
    digits = digits + 1
    shown = string.format("%." .. digits .. "f", x)
  end
  return shown
end

-- The scaling efficiency below which a result is flagged (the seed guides'
-- rule: "below 0.6, change the layout or the cards").
M.SCALING_FLOOR = 0.6

-- A result's score under a key (lower first), each card with its own
-- price (a card without one ranks last by cost) -- what gp.sweep ranks
-- across cards by and gpuplan merge checks a shard's scores against.
function M.score(key, c)
  if key == "cost" then return c.price and c.gpus * c.price / c.tokens_per_s or math.huge end
  if key == "per_dollar" then return c.price and -c.tokens_per_s / (c.gpus * c.price) or math.huge end
  if key == "mfu" then return -c.mfu end
  if key == "gpus" then return c.gpus + 1e-9 / c.tokens_per_s end
  return 1 / c.tokens_per_s
end

-- A plan's fingerprint: the gpuplan version, the catalog's (cat.fingerprint,
-- each file's bytes) and the job's options less the shard, hashed.  The
-- shards of one search share it; gpuplan merge refuses any other.
function M.fingerprint(job, cat)
  local j = {}
  for k, v in pairs(job) do if k ~= "shard" then j[k] = v end end
  return core().hash(table.concat({ require("gpuplan.config").version, cat.fingerprint,
                                    require("gpuplan.report").json(j) }, "\n"))
end

-- GPU-seconds a token: what a card's engine search ranks cost by
-- (engine/sweep.c sweep_score: price x gpus / tokens/s at one price per
-- GPU-hour), and the order of results whose scores tie.
local function gpu_s(c) return c.gpus / c.tokens_per_s end

-- The order of results across cards: by score (lower first), then the
-- GPU-seconds a token, then the card's place in the gpu list, then the
-- layout's place in the card's enumeration -- what gpuplan merge sorts
-- shards by.  Scores tie where cards have no price (cheapest and
-- best-per-dollar rank them all last, at math.huge): by the list's order
-- alone a layout 75% slower was ranked first, and the engine's own order
-- within a card was lost.
function M.before(x, y)
  local a, b = x._s or x.score, y._s or y.score
  if a ~= b then return a < b end
  local ga, gb = gpu_s(x), gpu_s(y)
  if ga ~= gb then return ga < gb end
  if x.gpu_order ~= y.gpu_order then return x.gpu_order < y.gpu_order end
  return x.index < y.index
end

-- The gp.train options of one result of gp.sweep(o): the job as the
-- sweep resolved it, with the candidate's card and layout.
function M.train_options(o, c)
  local t = {}
  for k, v in pairs(o) do
    if not M.SWEEP_OPTIONS[k] and type(v) ~= "table" or k == "model" or k == "cat" then
      t[k] = v
    end
  end
  if t.method == nil then t.method = "pretrain" end
  t.gpu = c.gpu
  -- The layout: each searched dimension's value (engine/sweep.h's table);
  -- gp.train takes the micro-batch as batch, and vpp only above 1.
  for _, d in ipairs(core().SWEEP_DIMS) do t[d.name] = c[d.name] end
  t.batch, t.micro_batch = t.micro_batch, nil
  -- FSDP's strategy by the candidate's stage and hybrid sharding
  -- (fsdp_space); without fsdp the stage alone.
  if o.fsdp ~= nil and o.fsdp ~= false and c.zero >= 1 then
    -- (with zero_group the groups are its, kept in t)
    t.fsdp = M.sharding(c, o)
    if c.zero == 1 then t.zero = nil end  -- shard_grad_op + grad_sync step
  end
  t.hybrid = nil
  t.etp = c.etp == 1 and 1 or nil  -- the level's 0 is etp = tp
  if t.vpp == 1 then t.vpp = nil end
  -- 1F1B and interleaved are what vpp gives gp.train; DualPipe is named
  t.schedule = c.schedule == "dualpipe" and "dualpipe" or nil
  return t
end

-- The base searches done, by what each searched (base_key): a sweep, a
-- train --scaling and a script pricing the same job again found the same
-- base by a second search each time -- GPT-3 175B on 4096 A100s spent
-- 0.029 of its 0.034 s searching 1, 2, 4 ... 64 GPUs for it (docs/plan.md).
-- The search is a function of its options alone (the same catalog, the
-- same model's fields, the same bounds give the same layouts in the same
-- order), so its answer is kept; past BASES_MAX the record starts again.
local bases_done, bases_count, BASES_MAX = {}, 0, 256

-- The text of values for the scaling base's key: put(v) appends v to
-- the text, tables by their contents in sorted key order, a catalog by
-- identity (gp.catalog's is loaded once; its entries, which a script can
-- edit in place, are named by catalog_key); the text names v exactly
-- (strings quoted, floats to 17 digits).  A table met again is written
-- once, then as its number ("@3"), and a table not finished when met
-- again (a cycle) cannot be named, nor a function, a table with a
-- metatable or a key other than a string or a number: put returns false
-- and that search is not kept.  skip(k), when given, leaves the field k
-- of every table out.  Returns put and done() -> the text.
local function key_writer(skip)
  local out, ids, n = {}, {}, 0
  local function put(v)
    local t = type(v)
    if t == "string" then out[#out + 1] = string.format("%q", v)
    elseif t == "number" then out[#out + 1] = math.type(v) == "integer" and tostring(v)
      or string.format("%.17g", v)
    elseif t == "boolean" or t == "nil" then out[#out + 1] = tostring(v)
    elseif t == "table" and options.is_catalog(v) then out[#out + 1] = "cat:" .. tostring(v)
    elseif t == "table" and getmetatable(v) == nil then
      local id = ids[v]
      if id == false then return false end  -- a cycle
      if id then out[#out + 1] = "@" .. id return true end
      ids[v] = false
      local ks = {}
      for k in pairs(v) do
        local kt = type(k)
        if kt ~= "string" and kt ~= "number" then return false end
        if not (skip and skip(k)) then ks[#ks + 1] = k end
      end
      table.sort(ks, function(x, y)
        if type(x) ~= type(y) then return type(x) == "number" end
        return x < y
      end)
      out[#out + 1] = "{"
      for _, k in ipairs(ks) do
        put(k)
        out[#out + 1] = "="
        if put(v[k]) == false then return false end
        out[#out + 1] = ","
      end
      out[#out + 1] = "}"
      n = n + 1
      ids[v] = n
    else
      return false
    end
    return true
  end
  return put, function() return table.concat(out) end
end

-- The key of a base search's options table o (key_writer's text), or nil
-- when o cannot be named.
local function base_key(o)
  local put, done = key_writer()
  return put(o) and done() or nil
end

-- The content of the catalog entries a base search of job on card gpu
-- reads, as text for base_key: the model (named by id), the card, its
-- architecture, the systems of that card, the fabrics, recipes,
-- optimizers and settings.  The catalog object alone (its identity) was
-- the key: a script that edited an entry in place (gp.catalog():get(
-- "models", "llama3-8b").layers = 64) and swept again got the base of the
-- model before the edit.  Its own fields (_file, _raw ...) and the prose
-- (source, notes) price nothing and are left out.  Nil where an entry
-- cannot be named (key_writer's rule): that search is not kept.
local SKIP_FIELD = { source = true, notes = true }
local function catalog_field_skipped(k)
  return type(k) == "string" and (k:sub(1, 1) == "_" or SKIP_FIELD[k] ~= nil)
end
local function catalog_key(job, gpu)
  local cat = options.is_catalog(job.cat) and job.cat or options.is_catalog(job.catalog)
    and job.catalog or require("gpuplan.catalog").get()
  local put, done = key_writer(catalog_field_skipped)
  local g = type(gpu) == "table" and gpu or (cat.gpus or {})[gpu]
  local gid = type(g) == "table" and g.id or gpu
  local sys = {}
  for id, e in pairs(cat.systems or {}) do if e.gpu == gid then sys[#sys + 1] = id end end
  table.sort(sys)
  local entries = { type(job.model) == "string" and (cat.models or {})[job.model] or nil, g,
    type(g) == "table" and (cat.archs or {})[g.arch] or nil }
  -- (each put in turn: a nil entry is written as nil, not dropped)
  for i = 1, 3 do if not put(entries[i]) then return nil end end
  for _, id in ipairs(sys) do if not put(cat.systems[id]) then return nil end end
  local tabs = { cat.fabrics, cat.recipes, cat.optimizers, cat.settings }
  for i = 1, 4 do if not put(tabs[i]) then return nil end end
  return done()
end

-- The counts no layout of a job can fit, known without searching them:
-- a function(b) -> true when the model states alone (weights, grads, the
-- fp32 master copy and the optimizer's) exceed a GPU's usable memory at
-- b GPUs in every layout, or nil where that cannot be said.  Every state
-- byte lives on at least one of the b GPUs, so the fullest holds at
-- least their sum / b -- which is what ZeRO-3 over all b (TP 1, PP 1)
-- holds, as gp.memory prices it; any other layout holds that or more.
-- GPT-3 175B (18 B a parameter, 3.14 TB of states) on 80 GB A100s: no
-- count below 64 fits (3.14 TB / 32 = 98 GB of states > 75 GB usable),
-- which the smallest-count search found by searching 1, 2, 4 ... 32 GPUs
-- in full (21 ms of the first sweep's 49 ms; 6 ms without the base).
-- Said only for a full training of a dense model with nothing on the
-- host: LoRA's frozen weights, an MoE's experts and an offload are each
-- placed by rules of their own, which this sum does not claim to bound.
local function states_exceed(job, gpu)
  local method = job.method or "pretrain"
  if method ~= "pretrain" and method ~= "full" then return nil end
  for k, v in pairs(job) do
    if type(k) == "string" and (k:find("offload", 1, true) or k:find("lora", 1, true))
       and v ~= nil and v ~= false and v ~= "none" then
      return nil
    end
  end
  local model = job.model
  if type(model) == "string" then
    local cat = options.is_catalog(job.cat) and job.cat or options.is_catalog(job.catalog)
      and job.catalog or require("gpuplan.catalog").get()
    local ok, m = pcall(cat.get, cat, "models", model)
    model = ok and m or nil
  end
  if type(model) ~= "table" or model.moe ~= nil then return nil end
  local o = { model = job.model, gpu = gpu, method = method, tp = 1, pp = 1, zero = 3 }
  for _, k in ipairs { "cat", "catalog", "recipe", "precision", "optimizer", "seq", "capacity" } do
    if type(job[k]) ~= "table" or k == "cat" or k == "catalog" then o[k] = job[k] end
  end
  local STATES = { weights = true, grads = true, master = true, optimizer = true }
  return function(b)
    o.gpus = b
    local ok, r = pcall(require("gpuplan.memory").memory, o)
    if not ok or r.cpu_bytes ~= 0 or type(r.usable) ~= "number" then return false end
    local states = 0
    for _, c in ipairs(r.components) do
      if STATES[c.name] then states = states + c.bytes end
    end
    return states > r.usable
  end
end

-- Scaling efficiency as the seed guides use it ("below 0.6 from 1 to N
-- GPUs, change the layout or the cards"): tokens/s per GPU at N against
-- the same job's fastest layout on a base count -- the one given
-- (scaling_base), else the smallest count that fits, trying 1, 2, 4, ...
-- up to N (1 GPU when it fits).  job: gp.train's or gp.sweep's options
-- (the layout they give is dropped: the base's is searched, ZeRO 1 or 3);
-- gpu: the card; n: the largest count compared.  Returns {gpus, layout,
-- tokens_per_s_gpu, given}, or nil when no count up to n fits; raises
-- when a given base fits nothing.
function M.scaling_base(job, gpu, n, base)
  local ckey  -- catalog_key(job, gpu): once a call, when a search would be kept
  local function fastest(b)
    local o = { gpu = gpu, gpus = { b }, top = 1, scaling = false, key = "time",
                zero = { 1, 3 } }
    for k, v in pairs(job) do
      if o[k] == nil and k ~= "batch" and k ~= "recompute_layers" and k ~= "scaling_base"
         and k ~= "policy" and k ~= "where" and k ~= "deadline" and k ~= "budget"
         and k ~= "shard" and k ~= "progress" and k ~= "fsdp" and k ~= "order"
         and (M.SWEEP_OPTIONS[k] or options.takes("plan", k, "lua")) then
        o[k] = v
      end
    end
    -- the job's layout is not the base's: each searched dimension is free
    -- (within the job's own bounds), the overlaps stay the job's
    for _, d in ipairs(core().SWEEP_DIMS) do
      if not d.base and d.name ~= "gpus" and type(job[d.name]) ~= "table" then
        o[d.name] = nil
      end
    end
    o.zero = { 1, 3 }
    o.ep_max = math.max(job.ep_max or 1, job.ep or 1)
    o.cp_max = math.max(job.cp_max or 1, job.cp or 1)
    local key = base_key(o)
    if key then
      ckey = ckey or catalog_key(job, gpu) or false
      key = ckey and (key .. "|" .. ckey) or nil
    end
    local done = key and bases_done[key]
    if done ~= nil then return done or nil end
    local ok, r = pcall(M.sweep, o)
    local c = ok and r.results[1] or nil
    if key then
      if bases_count >= BASES_MAX then bases_done, bases_count = {}, 0 end
      bases_done[key], bases_count = c or false, bases_count + 1
    end
    return c
  end
  local function record(c, given)
    return { gpus = c.gpus, layout = c.layout, tokens_per_s_gpu = c.tokens_per_s / c.gpus,
             given = given }
  end
  if base ~= nil then
    if math.type(base) ~= "integer" or base < 1 or base > n then
      error(string.format("scaling_base must be a GPU count in 1..%d, the job's (got %s)", n,
        args.shown(base)), 0)
    end
    local c = fastest(base)
    if not c then
      error(string.format("scaling_base %d: no layout of the job fits %d x %s", base, base, gpu),
        0)
    end
    return record(c, true)
  end
  local b = 1
  local short = states_exceed(job, gpu)
  while b <= n do
    local c = not (short and short(b)) and fastest(b) or nil
    if c then return record(c, false) end
    b = b * 2
  end
  return nil
end

-- Why the runner-up lost: its time and cost per token against the
-- winner's, and the part of its step that differs most.
function M.why(best, second, job)
  local function parts(c)
    local ok, r = pcall(train.train, M.train_options(job, c))
    return ok and r or nil
  end
  local function more(x, what)
    if x >= 1 then return string.format("%.1f%% more %s", 100 * (x - 1), what) end
    return string.format("%.1f%% less %s", 100 * (1 - x), what)
  end
  local a, b = parts(best), parts(second)
  if not a or not b then return nil end
  -- the part whose share of the step grew most, among those whose shown
  -- percentages differ: the largest difference alone picked a part at
  -- equal shares, "its dp_comm is 0% of the step against 0%" (llama2-13b,
  -- 64 x h100-sxm/h800-sxm, megatron); with none, no part is named
  local worst, diff, sa, sb = nil, 0, 0, 0
  local function pct(x) return string.format("%.0f", 100 * x) end
  for i, p in ipairs(b.parts) do
    local d = p.share - a.parts[i].share
    if d > diff and pct(p.share) ~= pct(a.parts[i].share) then
      worst, diff, sa, sb = p.name, d, a.parts[i].share, p.share
    end
  end
  local cost = (best.cost and second.cost)
    and ", " .. (best.cost == 0 and require("gpuplan.report").against(second.cost, 0,
      "more cost") or more(second.cost / best.cost, "cost")) or ""
  if cost ~= "" and best.price and second.price and best.price ~= second.price then
    cost = cost .. string.format(" (%.2f against %.2f %s/GPU-h)", second.price, best.price,
                                 second.currency or "")
  end
  local head = string.format("runner-up %s x %d (%s): %s per token%s", second.gpu, second.gpus,
    second.layout, more(best.tokens_per_s / second.tokens_per_s, "time"), cost)
  if not worst then return head end
  return string.format("%s; its %s is %s%% of the step against %s%%", head, worst, pct(sb),
    pct(sa))
end

-- Every timed layout of gp.sweep(o) that fits (within its deadline and
-- budget), on every card, as points {gpu, gpus, layout, days, cost,
-- tokens_per_s, mfu} -- no lower bound drops any -- and the cost-vs-time
-- Pareto front among them (no other point is both sooner and cheaper),
-- sorted by days.  Days and cost are for o.tokens (1e9 when not given:
-- then per billion tokens).  Each card needs a price.
function M.pareto(o)
  local a = {}
  for k, v in pairs(o) do a[k] = v end
  a.tokens = a.tokens or 1e9
  a.policy, a.key, a.top, a.bound, a.scaling = nil, "cost", 1, false, false
  local points = {}
  a.where = function(c)
    if c.days and c.cost then
      points[#points + 1] = { gpu = c.gpu, gpus = c.gpus, layout = M.label(c, a),
                              days = c.days, cost = c.cost,
                              tokens_per_s = c.tokens_per_s, mfu = c.mfu }
    end
    return false
  end
  local r = M.sweep(a)
  table.sort(points, function(x, y)
    if x.days ~= y.days then return x.days < y.days end
    return x.cost < y.cost
  end)
  local front, best = {}, math.huge
  for _, q in ipairs(points) do
    if q.cost < best then
      front[#front + 1] = q
      best = q.cost
    end
  end
  -- stats: gp.sweep's per card, to say why there are no points (no
  -- layout at all, or none that fits)
  return { points = points, front = front, tokens = a.tokens, stats = r.stats }
end

-- A progress bar on stderr: drawn once the search has run a second, only
-- when stderr is a terminal, cleared at the end.
function M.progress_bar()
  local tty = require("gpuplan.config").stderr_is_tty
  if not (tty and tty()) then return nil end
  -- GPUPLAN_PROGRESS_DELAY (seconds, default 1): when the bar appears.
  local delay = tonumber(os.getenv("GPUPLAN_PROGRESS_DELAY") or "") or 1
  local t0, shown = os.clock(), false
  return function(done, total, gpu)
    if os.clock() - t0 < delay then return end
    local frac = total > 0 and done / total or 1
    local n = math.floor(frac * 30 + 0.5)
    io.stderr:write(string.format("\rsearching %s [%s%s] %3d%%  %d of %d layouts", gpu,
      ("#"):rep(n), ("."):rep(30 - n), math.floor(100 * frac), done, total))
    shown = true
    if done >= total then io.stderr:write("\r", (" "):rep(78), "\r") end
  end
end

-- The engine's candidate c in gp.train's result names (gpuplan.results):
-- mem_gib beside mem_bytes, days beside train_s; train_s, days and cost
-- only where the run has them (tokens, a price), never as 0.  Idempotent:
-- a candidate a `where` saw is named again when it ranks.
function M.name_fields(c)
  c.mem_gib = c.mem_bytes / units.GiB
  if c.train_s == 0 then c.train_s = nil end
  if c.train_s then c.days = c.train_s / 86400 end
  -- price 0 is a free card (cost 0); no price (nil) or no tokens: no cost
  if c.price == nil or c.train_s == nil then c.cost = nil end
end

-- gp.sweep's parts.  The options with a policy table's merged in
-- (the caller's win); returns them and the policy.
local function merged(o)
  if type(o) ~= "table" then fail("sweep{...}: expected a table of options") end
  local policy = o.policy
  local a = {}
  for k, v in pairs(o) do a[k] = v end
  -- The CLI's --policy name (cheapest, fewest-gpus, best-per-dollar;
  -- fewest_gpus alike) is the Lua key's value too, as every option's
  -- declaration gives both: it was refused, "policy must be a gp.policy.*
  -- table ... gp.policy.cheapest{}", a script copied from a command line
  -- told to rewrite a value the line took.  The name is its table of no
  -- fields; the deadline and budget stay keys of their own, as on the
  -- line (--deadline, --budget).  monthly has no CLI name and needs its
  -- budget: still refused below, with the call to write.
  if type(policy) == "string" then
    local name = policy:gsub("-", "_")
    if M.policy[name] and name ~= "monthly" then policy = M.policy[name] {} end
  end
  -- A table with a __call is a function to its caller: it was merged as
  -- a policy table of no fields, so the search ranked by time and never
  -- called it.
  local mt = type(policy) == "table" and getmetatable(policy)
  if type(mt) == "table" and mt.__call ~= nil then
    local callable = policy
    policy = function(c, cat) return callable(c, cat) end
  end
  -- A constructor given uncalled (policy = gp.policy.cheapest, not
  -- gp.policy.cheapest{}) was called as the ranking function, with a
  -- candidate and the catalog, and reported as "error in the policy
  -- function: policy.cheapest: takes one table of options ... got 2
  -- arguments", the script's own function blamed for gpuplan's.
  if type(policy) == "function" then
    local gp_policy = rawget(require("gpuplan"), "policy")
    for name, f in pairs(M.policy) do
      if policy == f or (gp_policy and policy == gp_policy[name]) then
        fail("sweep: policy = gp.policy.%s is the policy's constructor: call it, "
          .. "gp.policy.%s{%s}", name, name, name == "monthly" and "budget = ..." or "")
      end
    end
  end
  if type(policy) == "table" then
    -- gp.policy.*'s fields: another (gpus = 16) was dropped wherever the
    -- options gave it too, the options winning in silence
    for k in pairs(policy) do
      if k ~= "key" and k ~= "deadline" and k ~= "budget" then
        fail("sweep: policy: unknown field %s (a gp.policy.* table has key, deadline and budget)",
          type(k) == "string" and ("'" .. k .. "'") or args.shown(k))
      end
    end
    -- the ranking key named as the script wrote it: the engine's reader
    -- said "sweep.key must be a string" and "unknown sweep key 'nope'",
    -- keys the script never gave
    local key = policy.key
    if key ~= nil and (type(key) ~= "string" or not ({ time = true, cost = true,
        per_dollar = true, mfu = true, gpus = true })[key]) then
      fail("sweep: policy.key must be one of time, cost, per_dollar, mfu, gpus (got %s)",
        args.shown(key))
    end
    for k, v in pairs(policy) do if a[k] == nil then a[k] = v end end
  elseif policy ~= nil and type(policy) ~= "function" then
    -- the CLI's --policy is a name (fewest-gpus ...): a script that gave
    -- the same name was told neither what it gave nor the table to give
    -- (a CLI name is taken above; monthly needs its budget, and another
    -- string is told the names)
    local hint = ""
    local name = type(policy) == "string" and policy:gsub("-", "_")
    if name == "monthly" then
      hint = ": gp.policy.monthly{budget = ...}"
    elseif name then
      hint = ": fastest, cheapest, fewest-gpus or best-per-dollar (the CLI's --policy)"
    end
    fail("sweep: policy must be a gp.policy.* table, a function or a name (got %s%s)",
      args.shown(policy), hint)
  end
  if a.gpu == nil then
    usage("sweep: gpu is required (an id or a list)%s", a.capacity ~= nil
      and "; capacity sets the memory per GPU, not the card the steps are timed on" or "")
  end
  if a.per_card ~= nil and type(a.per_card) ~= "boolean" then
    fail("sweep: per_card must be a boolean (got %s)", args.shown(a.per_card))
  end
  -- scaling = "no" was true to the search, which computed it
  if a.scaling ~= nil and type(a.scaling) ~= "boolean" then
    fail("sweep: scaling must be a boolean (got %s)", args.shown(a.scaling))
  end
  return a, policy
end

-- The job every layout shares: the options that are not the sweep's,
-- checked; returns it and whether the method was assumed.
local function job_of(o, a)
  local job = {}
  for k, v in pairs(a) do
    if not M.SWEEP_OPTIONS[k] then job[k] = v end
  end
  -- A layout search plans a training run: pre-training unless told.
  local method_default = job.method == nil
  if method_default then job.method = "pretrain" end
  -- A searched dimension is not given a value (one whose unset mask is
  -- the job's own value excepted); gp.train's batch is the micro-batch.
  for _, d in ipairs(core().SWEEP_DIMS) do
    local k = d.name
    if o[k] ~= nil and M.SWEEP_OPTIONS[k] == nil and not d.base then
      -- the bound that keeps what was given: its value, a list's largest
      local top = o[k]
      if type(top) == "table" then
        local m
        for _, x in ipairs(top) do
          if type(x) == "number" and (m == nil or x > m) then m = x end
        end
        top = m
      end
      -- (a bound to copy only where it is one: ep = -1, 0.5 or NaN read
      -- "e.g. ep_max = -nan", a value the bound refuses)
      local whole = type(top) == "number" and top >= 1 and top <= options.COUNT_MAX
        and math.tointeger(top)
      usage("sweep: %s is searched, not given; bound it with %s_max%s", k, k,
           whole and string.format(" (e.g. %s_max = %d)", k, whole) or "")
    end
  end
  if o.batch ~= nil then usage("sweep: batch is swept; give micro_batch a list") end
  -- The resolve step of every command: keys, and quantities' units.
  local ok, err = pcall(options.resolve, "plan", job, "sweep")
  if not ok then fail("%s", err) end
  return job, method_default
end

-- fsdp given: the ZeRO stages of its strategies are searched.
local function fsdp_space(a, space, job)
  -- An FSDP strategy is its ZeRO stage (gpuplan.memory's sharding): a
  -- list of strategies (or "full_shard,shard_grad_op") searches their
  -- stages, ZeRO-3 being full_shard and ZeRO-2 shard_grad_op; the job
  -- is resolved with the first.
  if a.fsdp ~= nil and a.fsdp ~= false then
    local list = a.fsdp
    if type(list) == "string" and list:find(",", 1, true) then
      local l = {}
      -- an empty entry ('full_shard,') is refused, as gpus' is
      for x in (list .. ","):gmatch("([^,]*),") do
        if x == "" then usage("sweep: fsdp '%s': an empty entry (a list like full_shard,hybrid_shard)", list) end
        l[#l + 1] = x
      end
      list = l
    end
    list = list_of(list, "fsdp")
    if a.zero ~= nil then usage("sweep: fsdp fixes the ZeRO stage; give no zero list") end
    space.zero = {}
    local named = {}
    -- A bad grad_sync is the job's, not a strategy's: checked once by the
    -- same reader (with full_shard, which takes either value) before the
    -- list, whose entries' errors say "fsdp[i]" (it read "value 1 of
    -- --fsdp: --grad-sync must be ..." on the command line).
    local gok, gerr = pcall(require("gpuplan.memory").sharding, "full_shard", a.grad_sync, nil)
    if not gok then fail("sweep: %s", (tostring(gerr):gsub("^.-:%d+: ", ""))) end
    -- Each strategy is a (hybrid sharding, ZeRO stage) pair: full_shard
    -- (no, 3), shard_grad_op (no, 2; under grad_sync step no, 1: one
    -- reduce-scatter a step, what ZeRO-1 sends and holds), hybrid_shard
    -- (yes, 3: full_shard in a node).  The engine's hybrid and stage
    -- levels search those pairs alone (engine/sweep.h fsdp_pairs), not
    -- their product: shard_grad_op beside hybrid_shard tried a hybrid
    -- ZeRO-2 no strategy names, and was refused before.
    local pairs_mask, zeros, hybrid = 0, {}, {}
    for i, x in ipairs(list) do
      local ok, st, z = pcall(require("gpuplan.memory").sharding, x, a.grad_sync, nil)
      if not ok then fail("sweep: fsdp[%d]: %s", i, (tostring(st):gsub("^.-:%d+: ", ""))) end
      if not zeros[z] then space.zero[#space.zero + 1], zeros[z] = z, true end
      list[i] = st
      named[st] = true
      local hs = st == "hybrid_shard"
      hybrid[hs] = true
      pairs_mask = pairs_mask | (1 << ((hs and 4 or 0) + z))
    end
    if hybrid[true] then
      space.hybrid = hybrid[false] and { false, true } or { true }
      space.fsdp_pairs = pairs_mask
    end
    -- grad_sync step: whole gradients at ZeRO-3 (full_shard's and
    -- hybrid_shard's no_sync), the job resolved with the first strategy
    -- holding them or not by its own stage; each layout's by its stage.
    if a.grad_sync == "step" and #list > 1 then space.whole_z3 = true end
    job.fsdp = list[1]
  end
end

-- The recompute policies a search tries.  A recompute_modules list is
-- selective's: Megatron-Core reads it under recompute_granularity
-- "selective" alone (TransformerLayer's "if self.config.
-- recompute_granularity == 'selective':"), and none re-runs nothing
-- whatever the list (gp.train refuses none with one, memory.lua
-- prepare_shape).  So with a list the search drops none and keeps
-- selective, and a list of policies with none but no selective is
-- refused as gp.train refuses its job.  An empty list re-runs nothing
-- under either policy: the space stands.
local function recompute_space(a)
  local list = list_of(a.recompute, "recompute") or { "none", "selective", "full" }
  local rm = a.recompute_modules
  if rm == nil or rm == "" or (type(rm) == "table" and #rm == 0) then return list end
  local has_sel, has_none = false, false
  for _, r in ipairs(list) do
    if type(r) == "string" and r:lower() == "selective" then has_sel = true end
    if type(r) == "string" and r:lower() == "none" then has_none = true end
  end
  if has_none and not has_sel then
    usage("sweep: recompute_modules applies to recompute selective: Megatron-Core reads the "
      .. "list only under recompute_granularity \"selective\", and with none re-runs nothing "
      .. "(add selective to recompute, or give no recompute_modules)")
  end
  if not has_sel then return list end
  local kept = {}
  for _, r in ipairs(list) do if r ~= "none" then kept[#kept + 1] = r end end
  return kept
end

-- A space's ulysses_max not searched (space_of), for its defaults line:
-- kept beside the space, which the engine checks field by field.
local ULYSSES_UNFUSED = setmetatable({}, { __mode = "k" })

-- The search space the engine enumerates, checked.
local function space_of(a, job, counts, policy)
  -- Ulysses where gp.train refuses it (its attention unfused on the hf
  -- stack: gpuplan.memory ulysses_unfused, the one rule) is not searched:
  -- plan --stack hf --no-flash --ulysses-max 4 ranked U2 and U4 layouts
  -- that train then refused.
  local ulysses_max, ulysses_unfused = a.ulysses_max or 1, nil
  -- read here before the engine checks the space's fields (tp_max's
  -- "must be a whole number"): true raised "sweep.lua: attempt to compare
  -- number with boolean" and 1.5 "bad argument #2 to 'format'"
  -- (tests/lua/fuzz_options.t); the engine's words for its fellows
  local bad = options.bad_count("sweep: ulysses_max", ulysses_max)
  if bad then error(bad, 0) end
  if ulysses_max > 1 then
    local okm, model = pcall(function()
      return type(job.model) == "table" and job.model
        or (job.cat or require("gpuplan").catalog()):get("models", job.model)
    end)
    if okm and type(model) == "table"
       and require("gpuplan.memory").ulysses_unfused(job, model, job.method) then
      ulysses_max = 1
      ulysses_unfused = string.format("ulysses=1 (ulysses_max %d not searched: Ulysses "
        .. "is verl's flash-attention forward, and the attention is unfused on stack = hf, "
        .. "which train refuses)", a.ulysses_max)
    end
  end
  -- Where Ulysses runs (gpuplan.memory ulysses_refusal, the rule gp.train
  -- refuses by): on stack megatron no group is searched (Megatron-Core's
  -- is Transformer Engine's a2a CP, not priced), said; on stack hf only
  -- at pp 1 and tp 1 (verl's FSDP workers' mesh is dp x sp), on stack
  -- deepspeed only at pp 1 (its pipeline grid has no sequence axis), the
  -- engine's ok_ulysses skipping a group beside pipeline stages or TP.
  local ulysses_pp1, ulysses_tp1
  if ulysses_max > 1 then
    local mem = require "gpuplan.memory"
    local stack = mem.stack_of(job, job.method)
    if mem.ulysses_refusal(2, stack, 1) then
      ulysses_max = 1
      ulysses_unfused = string.format("ulysses=1 (ulysses_max %d not searched: Megatron-Core's "
        .. "Ulysses is Transformer Engine's all-to-all context parallelism, which gpuplan does "
        .. "not price and train refuses on stack = megatron)", a.ulysses_max)
    else
      ulysses_pp1 = mem.ulysses_refusal(2, stack, 2, 1) ~= nil or nil
      ulysses_tp1 = mem.ulysses_refusal(2, stack, 1, 2) ~= nil or nil
    end
  end
  local space = {
    gpus = counts, tp_max = a.tp_max or 8, pp_max = a.pp_max or 8, cp_max = a.cp_max or 1,
    ulysses_max = ulysses_max, ulysses_pp1 = ulysses_pp1, ulysses_tp1 = ulysses_tp1,
    ep_max = a.ep_max or 1, vpp_max = a.vpp_max or 1,
    zero = list_of(a.zero, "zero") or { 1 },
    micro_batch = list_of(a.micro_batch, "micro_batch") or { 1, 2, 4 },
    recompute = recompute_space(a),
    sp = list_of(a.sp, "sp") or { true },
    etp = etp_list(a.etp),
    schedule = sched_list(a.schedule, a),
    key = a.key or "time", top = a.top or 10,
  }
  -- DualPipe runs the expert all-to-all and the pipeline sends under the
  -- paired chunk's compute: its layouts turn ep_overlap and overlap_p2p
  -- on where the job leaves them out, as gp.train's schedule = dualpipe
  -- does (gpuplan.train step_choices).
  if space.schedule then
    for _, x in ipairs(space.schedule) do
      if x == "dualpipe" then
        space.dual_ep_overlap = a.ep_overlap == nil
        space.dual_overlap_p2p = a.overlap_p2p == nil
        -- its experts' fp8 rows are not Megatron-Core's grouped MLP's to
        -- pad (the engine drops the copy in its layouts), as gp.train
        -- refuses the copy with dualpipe
        if a.moe_fp8_pad == "copy" then
          usage("sweep: moe_fp8_pad copy with schedule dualpipe: DualPipe is DeepSeek's own "
            .. "framework, not Megatron-Core's grouped MLP")
        end
      end
    end
  end
  fsdp_space(a, space, job)
  -- Muon on the megatron stack runs at zero 0 only: Megatron-Core's
  -- get_megatron_muon_optimizer raises "muon with dist optimizer is not
  -- supported." (gpuplan.train sharding_rule, which gp.train refuses by).
  -- A plan without a zero list searches zero 0 there (its default, 1,
  -- priced a layout Megatron refuses); a list with a ZeRO stage is
  -- refused, as gp.train refuses that zero.
  -- why the searched ZeRO list, not given, is what it is (said where a
  -- later option cannot take it)
  local zero_default_why
  if job.optimizer ~= nil then
    local mem = require "gpuplan.memory"
    local cat = options.is_catalog(job.cat) and job.cat or options.is_catalog(job.catalog)
      and job.catalog or nil
    local ok, opt = pcall(mem.recipe_record, "optimizer", job.optimizer, cat)
    local stack = mem.stack_of(job, job.method)
    if ok and mem.muon_refusal(opt, stack, 1) then
      if a.zero == nil then
        space.zero = { 0 }
        zero_default_why = string.format("with optimizer %s on stack megatron the searched "
          .. "ZeRO stages (no zero list given) are 0 alone: Megatron-Core's Muon refuses the "
          .. "distributed optimizer", tostring(opt.id))
      else
        for _, z in ipairs(space.zero) do
          local why = mem.muon_refusal(opt, stack, z)
          if why then usage("sweep: %s", (why:gsub("give zero 0", "search zero 0 only"))) end
        end
      end
    end
  end
  -- zero_gather_copies is priced at zero 1 alone (engine/train.c post_of:
  -- nanotron's ZeroDistributedOptimizer; gp.train refuses it at 0, 2 and
  -- 3): a zero list without stage 1 searched layouts none of which it
  -- reached, the flag changing nothing, in silence.
  if job.zero_gather_copies == true then
    local one = false
    for _, z in ipairs(space.zero) do if z == 1 then one = true end end
    if not one then
      local list = {}
      for _, z in ipairs(space.zero) do list[#list + 1] = tostring(z) end
      usage("sweep: zero_gather_copies prices nanotron's ZeRO-1 parameter gather, at zero 1 "
        .. "alone: %s (%s) holds no stage 1 (%s, or leave zero_gather_copies out)",
        a.fsdp ~= nil and "fsdp's ZeRO list" or "the zero list", table.concat(list, ", "),
        a.fsdp ~= nil and "search zero 1 without fsdp" or "add 1 to the zero list")
    end
  end
  -- zero_group N: every layout's ZeRO states shard within groups of N of
  -- its dp x cp ranks (gpuplan.memory zero_group, as gp.train takes it):
  -- the engine's hybrid dimension on, its group N x tp GPUs in each
  -- layout (engine/sweep.c hybrid_gpus), the layouts whose dp x cp N
  -- does not divide skipped and counted (ungrouped).  The job's setup
  -- runs without it: its stand-in layout is not one searched.  What
  -- gp.train refuses with it is refused here, before the search.
  if job.zero_group ~= nil then
    local n = job.zero_group
    job.zero_group = nil
    local refused = require("gpuplan.memory").ZERO_GROUP_REFUSED
    if space.hybrid then usage("sweep: " .. refused.hybrid, n) end
    for _, z in ipairs(space.zero) do
      if z == 0 then
        -- "zero 0" reads "--zero 0" on the command line ("the zero list"
        -- named neither the flag nor the stage)
        usage("sweep: zero_group %d shards the ZeRO states: zero 0 cannot be searched with it "
          .. "(give stages 1, 2 or 3)", n)
      end
    end
    if job.order ~= nil then usage("sweep: " .. refused.order, n) end
    space.zero_group, space.hybrid = n, { true }
  end
  -- Offload goes through DeepSpeed's ZeRO optimizer (engine/
  -- memory_layout.c: "offload needs a ZeRO stage"): a zero list with 0
  -- stopped the search at its first zero-0 layout, a refusal that named
  -- that layout ("h100-sxm x 16 (TP1 DP16 mb1 none): offload needs ...")
  -- and not the list.  Said of the list, before the search, as
  -- zero_group's is above.
  local off = a.offload
  if off == nil then off = job.offload end
  if off ~= nil and off ~= "none" then
    -- A searched default list (no zero list given) loses its stage 0
    -- rather than blaming "zero 0" on a user who gave none; one left
    -- empty is said with the reason of its default.
    if a.zero == nil and a.fsdp == nil then
      local kept = {}
      for _, z in ipairs(space.zero) do if z ~= 0 then kept[#kept + 1] = z end end
      if #kept == 0 then
        usage("sweep: offload %s goes through DeepSpeed's ZeRO optimizer, which needs a ZeRO "
          .. "stage, but %s: give another optimizer, or no offload", tostring(off),
          zero_default_why or "the searched ZeRO stages (no zero list given) are 0 alone")
      end
      space.zero = kept
    end
    for _, z in ipairs(space.zero) do
      if z == 0 then
        usage("sweep: offload %s goes through DeepSpeed's ZeRO optimizer: zero 0 cannot be "
          .. "searched with it (give stages 1, 2 or 3)", tostring(off))
      end
      -- (engine/memory_layout.c: "offloading the parameters needs zero
      -- 3"); the zero list's default, 1, included
      if off == "params+optimizer" and z ~= 3 then
        usage("sweep: offload params+optimizer needs zero 3 (DeepSpeed offload_param is a "
          .. "ZeRO-3 feature): zero %d cannot be searched with it%s", z,
          a.fsdp ~= nil and " (shard_grad_op is zero 2: search full_shard alone)"
            or a.zero == nil and " (the zero list's default is 1: give zero 3)"
            or " (give zero 3)")
      end
    end
  -- (engine/train_prep.c: "delayed_update delays the offloaded
  -- optimizer's step"), whatever the layout
  elseif a.delayed_update or job.delayed_update then
    usage("sweep: delayed_update delays the offloaded optimizer's step: it needs offload "
      .. "(optimizer or params+optimizer)")
  end
  -- Each list's values, refused by the key and the place in the list: the
  -- engine's binding named its own field ("sweep.zero: values are 0..3",
  -- "sweep.sp[1] must be a boolean").
  local function each(k, good, want)
    for i, x in ipairs(space[k]) do
      if not good(x) then fail("sweep: %s[%d] must be %s (got %s)", k, i, want, args.shown(x)) end
    end
  end
  each("zero", function(x) local z = math.tointeger(x); return z and z >= 0 and z <= 3 end,
    "0, 1, 2 or 3")
  each("micro_batch", function(x) local m = math.tointeger(x); return m and m >= 1
    and m <= options.COUNT_MAX end, "a whole number 1..16777216")
  -- As the numbers they passed as (math.tointeger takes "1"): zero = {"1"}
  -- reached the engine's binding as a string, refused there as "sweep:
  -- sweep.zero[1] must be an integer of at most 32 bits" (gp.train takes
  -- zero = "1").  Copied: the caller's list is left as given.
  for _, k in ipairs { "zero", "micro_batch" } do
    local l = {}
    for i, x in ipairs(space[k]) do l[i] = math.tointeger(x) end
    space[k] = l
  end
  each("sp", function(x) return type(x) == "boolean" end, "true or false")
  -- recompute's names in either case, as gp.train reads its one (the
  -- option is declared fold): a list's "Selective" reached the engine's
  -- check, which refused it; copied, the caller's list left as given
  if type(space.recompute) == "table" then
    local l = {}
    for i, x in ipairs(space.recompute) do l[i] = type(x) == "string" and x:lower() or x end
    space.recompute = l
  end
  -- a whole number is a count however Lua holds it (top = 2.0, as gpus =
  -- 8.0 is taken): 2.0 was refused as "must be an integer (got 2.0)"
  local top = math.tointeger(space.top)
  if not top or top < 1 or top > 100000 then
    fail("sweep: top must be an integer 1..100000 (got %s)", args.shown(a.top))
  end
  space.top = top
  if a.top ~= nil then a.top = top end
  -- Each split's bound: a whole number 1..2^24 (GP_COUNT_MAX); the engine
  -- clamps it to what the model, the node and the counts allow.
  for _, d in ipairs(core().SWEEP_DIMS) do
    if d.values == "range" then
      local k = d.name .. "_max"
      local bad = options.bad_count(k, space[k])
      if bad then fail("sweep: %s", bad) end
      space[k] = math.tointeger(space[k])
    end
  end
  -- A policy function scores every candidate itself: the engine's lower
  -- bound (which ranks by the key) must not drop any.
  if type(policy) == "function" then space.top, space.bound = 100000, false end
  if a.bound ~= nil then
    if type(a.bound) ~= "boolean" then fail("sweep: bound must be a boolean") end
    if a.bound == false then space.bound = false end
  end
  -- The dimensions whose unset mask is the job's own value (the
  -- overlaps) are swept when given as a list: {false, true}.
  for _, d in ipairs(core().SWEEP_DIMS) do
    local k = d.name
    if d.base and type(a[k]) == "table" then
      space[k] = list_of(a[k], k)
      for i, v in ipairs(space[k]) do
        if type(v) ~= "boolean" then
          fail("sweep: %s[%d] must be true or false (got %s)", k, i, args.shown(v))
        end
      end
      job[k] = nil
    end
  end
  if a.shard ~= nil then
    local k, n = tostring(a.shard):match("^%s*(%d+)%s*/%s*(%d+)%s*$")
    k, n = math.tointeger(tonumber(k)), math.tointeger(tonumber(n))
    if not k or not (n >= 1 and k >= 1 and k <= n) then
      if type(a.shard) ~= "string" then
        fail("sweep: shard must be a string 'K/N' (got %s)", args.shown(a.shard))
      end
      -- text that is no K/N ("a", "1-3") is a value the option cannot
      -- parse: a usage error (docs/output.md), as --deadline's is; K/N
      -- that parses, out of its range (0/3, 4/3), stays exit 1
      if not k or not n then
        usage("sweep: shard '%s' must be K/N with 1 <= K <= N", a.shard)
      end
      fail("sweep: shard '%s' must be K/N with 1 <= K <= N", a.shard)
    end
    if n > M.SHARDS_MAX then
      fail("sweep: shard '%s': at most %d shards (N)", tostring(a.shard), M.SHARDS_MAX)
    end
    space.shard = { k - 1, n }
  end
  if a.deadline ~= nil then space.deadline = M.duration(a.deadline, "deadline") end
  ULYSSES_UNFUSED[space] = ulysses_unfused
  return space
end

-- The sweep's defaults from the first card's setup (not the stand-in
-- layout's), and each card's system and price.
local function card_defaults(defaults, s, gid, method_default)
  -- What the stand-in layout assumed is not the sweep's: only the
  -- job's defaults are.
  if not defaults then
    defaults = method_default and { "method=pretrain" } or {}
    for _, d in ipairs(s.defaults) do
      local k = d:match("^([%w_]+)=")
      if not (k == "zero" or k == "batch" or k == "recompute" or k == "partition" or
              k == "system" or k == "price") then defaults[#defaults + 1] = d end
    end
  end
  for _, d in ipairs(s.defaults) do
    local k = d:match("^([%w_]+)=")
    if k == "system" or k == "price" then defaults[#defaults + 1] = gid .. ": " .. d end
  end
  return defaults
end

-- One card's space: the shared one with its budget in its currency.
local function card_space(a, space, s, gid)
  local sp = {}
  for k, v in pairs(space) do sp[k] = v end
  if a.budget ~= nil then
    local b = M.money(a.budget, "budget", s.currency, s.cat)
    local amount = s.cat:convert(b, s.currency)
    if not amount then fail("sweep: budget: no exchange rate for %s", tostring(b.currency)) end
    -- Why the card has none, as its defaults say it ("no offer for
    -- h100-sxm in cn (it is offered in ...: --market global or --price)"):
    -- "(price = P)" alone asked for one price for every card searched.
    if not s.cfg.price then
      local why
      for _, d in ipairs(s.defaults or {}) do why = why or d:match("^price=none: (.+)$") end
      fail("sweep: a budget needs a price for %s%s", gid, why and (": " .. why) or " (price = P)")
    end
    sp.budget = amount
  end
  if sp.deadline or sp.budget then
    if not s.cfg.tokens then usage("sweep: a deadline or budget needs tokens = (the run's size)") end
  end
  -- sac_attn_recompute is recompute op's (gpuplan.train sharding_rule):
  -- a search whose policies hold no op would price it nowhere.
  if s.cfg.sac_attn_recompute then
    local op = false
    for _, r in ipairs(sp.recompute) do op = op or r == "op" end
    if not op then
      usage("sweep: sac_attn_recompute prices the attention missing from recompute op's save "
        .. "list: add op to the recompute policies to try (got %s)",
        table.concat(sp.recompute, ", "))
    end
  end
  -- ep_overlap's layouts: the engine skips those Megatron-Core refuses
  -- (engine/train_prep.c check_ep_overlap: ep 1, pp > 1 without vpp,
  -- full recompute); a space of nothing else is refused here, naming
  -- why, rather than searched to "no layout fits".
  -- moe_router_ops prices the expert-parallel MoE layer's host launches
  -- (train.lua refuses it at ep 1 in gp.train): a space without EP
  -- priced none of it, in silence.
  if s.cfg.moe_router_ops ~= nil and sp.ep_max < 2 then
    usage("sweep: moe_router_ops is priced on the expert-parallel MoE layer's host launches; "
      .. "give ep_max 2 or more to try expert parallelism (got %d)", sp.ep_max)
  end
  if s.cfg.ep_overlap then
    if sp.ep_max < 2 then
      usage("sweep: ep_overlap needs expert parallelism (ep >= 2): give ep_max 2 or more "
        .. "(got %d)", sp.ep_max)
    end
    local other = false
    for _, r in ipairs(sp.recompute) do other = other or r ~= "full" end
    if not other then
      usage("sweep: recompute full is the only policy to try, and Megatron-Core refuses it "
        .. "with ep_overlap: give selective or none too")
    end
  end
  return sp
end

-- Search one card gid (the gi-th): its candidates go to results, its
-- counts to stats; returns the defaults.
local function search_card(a, job, space, counts, policy, gi, gid,
                           defaults, method_default, stats, results, several)
  local where_user = a.where
  -- The job, resolved once per card: the first count stands in for the
  -- layout, which the enumeration then replaces.
  job.gpu, job.gpus = gid, counts[1]
  -- gp.train's setup names itself ("train: price must be ..."); the
  -- search the user ran is gp.sweep's (gpuplan plan's), as gp.rl says
  -- "rl: " of its actor's setup.
  local oks, s = pcall(train.setup, job, math.max(table.unpack(counts)))
  -- Several cards compared: a card whose node (no NICs, or no link at
  -- all) cannot reach the largest counts is searched at the counts it
  -- reaches, the others named on the defaults line, rather than the
  -- comparison refused for every card (plan --gpu rtx-4090,h100-nvl
  -- --gpus 1,2,4: the H100 NVL's bridged pair has no NICs).  One card
  -- alone is still refused: the counts asked are its whole question.
  -- A card that reaches none of them is refused as before.
  local skipped, give
  if not oks and several then
    local low = math.min(table.unpack(counts))
    local okl, sl = pcall(train.setup, job, low)
    if okl and (sl.topo.nics or 0) == 0 then
      local keep, drop = {}, {}
      for _, n in ipairs(counts) do
        local t = n <= sl.topo.gpus_per_node and keep or drop
        t[#t + 1] = n
      end
      if #drop > 0 then
        -- what the largest count's refusal told the user to give
        -- (gpuplan.comm no_nics: "give nics = N and nic_fabric = ID
        -- ..."), said beside the skip: the note named the missing NICs
        -- but not the option that supplies them
        give = type(s) == "string" and s:match("has no NICs: (give .-)%s*$")
          or type(s) == "string" and s:match("no NICs to reach the others: (give .-)%s*$")
        oks, s, counts, skipped = true, sl, keep, drop
      end
    end
  end
  if not oks then
    local msg = type(s) == "string" and s:gsub("^[^\n]-:%d+: ", "")
    if not (msg and msg:find("^train: ")) then error(s, 0) end
    error("sweep: " .. msg:sub(#"train: " + 1), 0)
  end
  -- The job's own refusal, not a layout's: engine/train_prep.c refuses
  -- an encoder-decoder's step in every layout, and plan blamed the first
  -- ("h100-sxm x 8 (TP1 DP8 ZeRO-1 mb1 none): the training step ...").
  if (s.model.encoder_layers or 0) > 0 then
    error("sweep: the training step of an encoder-decoder model is not modelled (its memory "
      .. "is: gpuplan fit)", 0)
  end
  -- An expert-parallel bound for a model without experts searched ep 1
  -- alone and said nothing; gp.train refuses ep > 1 for it.
  if (tonumber(a.ep_max) or 1) > 1 and not (s.model.moe and (s.model.moe.experts or 0) > 0) then
    fail("sweep: ep_max %s given for a dense model (%s has no experts)", tostring(a.ep_max),
      tostring(s.model.id or s.model.name))
  end
  local first = defaults == nil
  defaults = card_defaults(defaults, s, gid, method_default)
  if skipped then
    local gpn = s.topo.gpus_per_node
    defaults[#defaults + 1] = string.format("%s: %s GPU%s skipped (more than its node of %d "
      .. "holds, and the node has no NICs: %s%s)", gid, table.concat(skipped, ","),
      (#skipped > 1 or skipped[1] > 1) and "s" or "", gpn, s.node_name or "its node",
      give and "; to search them " .. give or "")
  end
  -- A count the node does not divide is priced with its last node
  -- partial (gp.train's rule, train.partial_node), said per count.
  for _, n in ipairs(counts) do
    local placed = train.partial_node(n, s.topo)
    if placed then defaults[#defaults + 1] = string.format("%s: %s", gid, placed) end
  end
  if first and ULYSSES_UNFUSED[space] then
    defaults[#defaults + 1] = ULYSSES_UNFUSED[space]
  end
  -- DualPipe's overlaps where the stack leaves them off, as gp.train
  -- states them under dualpipe.
  for _, k in ipairs { "ep_overlap", "overlap_p2p" } do
    if first and space["dual_" .. k] and not s.cfg[k] then
      defaults[#defaults + 1] = k .. "=true in DualPipe layouts (dualpipe overlaps it)"
    end
  end
  -- The fused grouped MLP runs only with the experts unsplit (gp.train
  -- refuses etp > 1 with it): the engine skips the layouts whose experts
  -- split over tp > 1 (engine/sweep.c ok_etp), which the output says.
  if first and s.cfg.fused_grouped_mlp and space.tp_max > 1 then
    local folded = false
    for _, x in ipairs(space.etp or {}) do folded = folded or x == 1 end
    defaults[#defaults + 1] = folded
      and "etp=1 at tp > 1 (fused_grouped_mlp: Megatron-Core refuses the fused MLP with "
        .. "the experts split over TP; layouts with etp = tp > 1 skipped)"
      or "tp=1 (fused_grouped_mlp: Megatron-Core refuses the fused MLP with the experts "
        .. "split over TP; layouts with etp = tp > 1 skipped: give etp = {\"tp\", 1} to search "
        .. "tp > 1 with the experts folded)"
  end
  local sp = card_space(a, space, s, gid)
  sp.gpus = counts
  local collected = {}
  -- Which of the script's functions is running (where, policy):
  -- an error it raises is reported as its own, not as the engine's.
  local calling
  if where_user or type(policy) == "function" then
    sp.where = function(c)
      -- what a policy or predicate may read: the card and its price,
      -- and the result names of gp.train (gpuplan.results)
      c.gpu, c.price, c.currency = gid, s.cfg.price, s.currency
      M.name_fields(c)
      -- The candidate is the result the search returns: a function that
      -- overwrote one of its figures (c.gpus = 0) changed the row it
      -- printed.  A field of its own (gp.policy.monthly's per_month) is
      -- its to add; one of the search's is refused, named.
      local given = {}
      for k, v in pairs(c) do given[k] = v end
      local function unchanged(who)
        for k, v in pairs(given) do
          local now = c[k]
          if now ~= v and not (now ~= now and v ~= v) then
            error(string.format("the %s changed the candidate's %s (%s to %s): its fields are "
              .. "the search's result; add a field of your own instead", who, k,
              require("gpuplan.args").shown(v), require("gpuplan.args").shown(now)), 0)
          end
        end
      end
      if where_user then
        calling = "where function"
        local keep = where_user(c)
        calling = nil
        unchanged("where function")
        -- a predicate's answer: "no" or 1 kept every candidate, and one
        -- that forgot its return (nil) dropped them all, in silence
        if type(keep) ~= "boolean" then
          error(string.format("where must return true or false (got %s)",
            require("gpuplan.args").shown(keep)), 0)
        end
        if not keep then return false end
      end
      if type(policy) == "function" then
        calling = "policy function"
        -- the job's catalog beside the candidate: gp.policy.monthly
        -- converted its budget at the built-in catalog's rates, and a
        -- currency the user's catalog adds had none there
        local score = policy(c, s.cat)
        calling = nil
        unchanged("policy function")
        if score == nil then return false end
        -- an infinite score ranked, and came back as the row's
        -- policy_score (null in JSON): nil is how a policy drops one
        if type(score) ~= "number" or score ~= score or score == math.huge
           or score == -math.huge then
          error(string.format("policy must return a finite number or nil (got %s)",
            type(score) ~= "number" and type(score) or score ~= score and "nan"
              or tostring(score)), 0)
        end
        c.policy_score = score
        collected[#collected + 1] = c
      end
      return true
    end
  end
  if a.progress ~= nil and a.progress ~= false then
    local f = a.progress
    if f == true then f = M.progress_bar()
    elseif type(f) ~= "function" then fail("sweep: progress must be true, false or a function") end
    -- a script's own function's error is named as the where and policy
    -- functions' are ("sweep: pg" lost the function and its line)
    local user = a.progress ~= true
    if f then
      sp.progress = function(done, total)
        if user then calling = "progress function" end
        f(done, total, gid)
        calling = nil
      end
    end
  end
  local ok, r = pcall(core().sweep, s.model, s.device, s.topo, s.cfg, sp)
  if not ok then
    if calling then
      -- The script's message as it is (its position names its line); an
      -- error object that is not one described.
      local msg = r
      local mt = getmetatable(r)
      if type(r) == "table" and type(r.msg) == "string" then msg = r.msg
      -- an object that says itself (__tostring), as error objects of a
      -- script's own class do: "an error object that is a table" hid it
      elseif type(mt) == "table" and mt.__tostring then msg = tostring(r)
      elseif type(r) ~= "string" and type(r) ~= "number" then
        msg = "an error object that is a " .. type(r) .. ", not a message"
      end
      error(string.format("sweep: error in the %s: %s", calling, msg), 2)
    end
    error("sweep: " .. require("gpuplan.cli").clean(r), 2)
  end
  -- A layout the training step refused is an input error (tokens out of
  -- range, GPUs past one node without NICs): the search fails on it, as
  -- gp.train would, naming the card and the layout, rather than finding
  -- nothing (or less) with the refusals only counted.
  if r.error then
    local c = r.error_at
    local msg = string.format("sweep: %s x %d (%s): %s", gid, c.gpus, M.label(c, a), r.error)
    -- the engine's usage refusal (options the user fixed that do not go
    -- together: offload at zero 0) is the job's, whichever layout met it
    error(r.error_usage and args.usage(msg) or msg, 2)
  end
  stats[gid] = r.stats
  local list = type(policy) == "function" and collected or r.results
  for _, c in ipairs(list) do
    c.gpu, c.gpu_order = gid, gi
    if c.hybrid and space.zero_group then c.zero_group = space.zero_group end
    c.price = s.cfg.price
    c.currency = s.currency
    results[#results + 1] = c
  end
  return defaults
end

-- A ranked candidate named for the caller: its label, gp.train's result
-- names, the 80% ranges and the scaling efficiency.  Run on the few
-- results returned (and each card's best), never on each layout priced.
local function finish(c, o, a, counts, bases)
  if c._s ~= nil then c.score, c._s, c.policy_score = c._s, nil, nil end
  c.layout = M.label(c, a)
  M.name_fields(c)
  local topts = M.train_options(a, c)
  -- FSDP's strategy the row is, where strategies were searched: the name
  -- gp.train takes it by (its label's, M.sharding)
  if a.fsdp ~= nil and a.fsdp ~= false then c.fsdp = topts.fsdp end
  -- The 80% ranges (gpuplan.ranges).
  require("gpuplan.ranges").apply("train", topts, c)
  -- Scaling efficiency: tokens/s per GPU here against the card's base
  -- (M.scaling_base: the smallest count that fits, or scaling_base),
  -- found once per card.  Below 0.6 the guides advise changing the
  -- layout or the cards; the result says so.
  if a.scaling ~= false and c.scaling == nil then
    local b = bases[c.gpu]
    if b == nil then
      local okb, r = pcall(M.scaling_base, o, c.gpu, math.max(table.unpack(counts)),
                           a.scaling_base)
      if not okb then fail("sweep: %s", r) end
      b = r or false
      bases[c.gpu] = b
    end
    if b and b.gpus <= c.gpus then
      c.scaling = c.tokens_per_s / c.gpus / b.tokens_per_s_gpu
      c.scaling_base = b.gpus
      if c.scaling < M.SCALING_FLOOR then
        local shown = M.scaling_shown(c.scaling)
        c.flags = { string.format("scaling efficiency %s < %.1f against %d GPU%s (%s): "
          .. "change the layout or the cards", shown, M.SCALING_FLOOR, b.gpus,
          b.gpus == 1 and "" or "s", b.given and "scaling_base" or "the smallest count that fits") }
      end
    end
  end
  return c
end

-- gp.sweep{...}: see the header.
function M.sweep(o)
  local a, policy = merged(o)
  local gpus_list = M.cards(a.gpu)
  local counts = M.counts(a.gpus or 8)
  local job, method_default = job_of(o, a)
  local space = space_of(a, job, counts, policy)
  local results, stats, defaults = {}, {}, nil
  local where_user = a.where
  if where_user ~= nil and type(where_user) ~= "function" then fail("sweep: where must be a function") end
  for gi, gid in ipairs(gpus_list) do
    defaults = search_card(a, job, space, counts, policy, gi, gid,
                           defaults, method_default, stats, results, #gpus_list > 1)
  end
  -- Rank across cards: by the key with each card's own price.
  local key = space.key
  -- Ranked by cost with no price anywhere, every score is math.huge and
  -- the ties go by GPU-seconds a token (M.before: the cost at any one
  -- price), which nothing said: the table read "by cheapest" over costs
  -- of "-".  Said on the defaults line (a budget without a price is
  -- refused in card_space).
  if (key == "cost" or key == "per_dollar") and #results > 0 then
    local priced = false
    for _, c in ipairs(results) do priced = priced or c.price ~= nil end
    if not priced then
      defaults = defaults or {}
      defaults[#defaults + 1] = string.format("%s: no price for %s in the buyer's markets, "
        .. "ranked by GPU-hours a token (the cost at any one price)",
        key == "cost" and "cheapest" or "best_per_dollar", table.concat(gpus_list, ", "))
    end
  end
  for _, c in ipairs(results) do c._s = c.policy_score or M.score(key, c) end
  table.sort(results, M.before)
  -- Ranked by time, MFU or GPUs, with no tokens (no days, no cost), no
  -- budget and no function that may read a candidate's price, the search
  -- rests on no price: the defaults line said the buyer's market and each
  -- card's price (or "price=none: no offer ...") all the same, as gp.train
  -- did without tokens.  Said where the answer uses them.
  if defaults and a.tokens == nil and a.budget == nil and key ~= "cost"
     and key ~= "per_dollar" and type(policy) ~= "function" and a.where == nil
     and a.price == nil and a.currency == nil and a.market == nil then
    require("gpuplan.prices").unsaid(defaults)
  end
  local top = a.top or 10
  local out, bases = {}, {}
  -- Each card's best (results are ranked: the first of each card), before
  -- the cut to top drops the cards that rank lower.
  local bests = {}
  if a.per_card then
    for _, c in ipairs(results) do
      if not bests[c.gpu] then bests[c.gpu] = c end
    end
  end
  for i = 1, math.min(top, #results) do out[i] = finish(results[i], o, a, counts, bases) end
  local per_card
  if a.per_card then
    for _, c in pairs(bests) do finish(c, o, a, counts, bases) end
    per_card = M.per_card(o, a, gpus_list, bests, stats)
  end
  local scaling = {}
  for _, gid in ipairs(gpus_list) do
    if bases[gid] then scaling[gid] = bases[gid] end
  end
  return { results = out, stats = stats, defaults = defaults or {}, key = key,
           scaling_bases = scaling, per_card = per_card }
end

-- "12.0% slower, 8.0% more cost": what a card's best loses to the
-- winner's, by the run's time (1 / tokens/s: the same tokens) and cost.
-- Ranked by best-per-dollar (key per_dollar), the figure the policy
-- ranks by comes first: the loser read "2.2x slower" alone without
-- --tokens (no cost), which is what the policy does not rank by.  Tokens
-- per dollar is tokens/s over the GPUs' price an hour, the score's own
-- figure (rank_score's per_dollar); the loser's shortfall is 1 - its
-- figure over the winner's, a percent below 100 however far it falls.
local function loses(c, w, key)
  local rel = require("gpuplan.report").versus
  local t = {}
  if key == "per_dollar" and c.price and w.price and c.price > 0 and w.price > 0 then
    local f = (c.tokens_per_s / (c.gpus * c.price)) / (w.tokens_per_s / (w.gpus * w.price))
    t[1] = math.abs(f - 1) < 5e-4 and "the same tokens per dollar"
      or string.format("%.1f%% %s tokens per dollar", 100 * math.abs(1 - f),
                       f < 1 and "fewer" or "more")
  end
  t[#t + 1] = rel(w.tokens_per_s / c.tokens_per_s, "slower", "faster")
  if c.cost and w.cost then
    t[#t + 1] = require("gpuplan.report").against(c.cost, w.cost, "more cost", "less cost",
                                                  "the cost")
  elseif w.cost then t[#t + 1] = "no price in the buyer's market" end
  return table.concat(t, ", ")
end

-- gp.sweep{..., per_card = true}: the best layout of each card, side by
-- side, ranked as the results are (a card whose best misses the deadline
-- or budget after those that meet them, one where nothing fits last).
-- bests: each card's best candidate within the deadline and budget; a
-- card without one is searched again without them (the fastest layout)
-- to say by how much it misses.  Each row: gpu, fits, meets_deadline,
-- meets_budget (nil without a deadline, a budget), winner, loses (what
-- it loses to the winner, or why it is out) and the candidate's fields.
function M.per_card(o, a, gpus_list, bests, stats)
  local deadline = a.deadline ~= nil and M.duration(a.deadline, "deadline") or nil
  local budget
  local rows = {}
  for gi, gid in ipairs(gpus_list) do
    local c, meets = bests[gid], true
    if not c and (a.deadline ~= nil or a.budget ~= nil) then
      -- nothing within the deadline and budget: the card's fastest layout
      local q = {}
      for k, v in pairs(o) do q[k] = v end
      q.gpu, q.policy, q.deadline, q.budget, q.key = gid, nil, nil, nil, "time"
      q.top, q.per_card, q.where, q.progress, q.shard = 1, nil, nil, nil, nil
      local ok, r = pcall(M.sweep, q)
      c, meets = ok and r.results[1] or nil, false
    end
    local row = { gpu = gid, gpu_order = gi, fits = c ~= nil }
    if c then
      -- the candidate's fields as a result has them (ranges included)
      for k, v in pairs(c) do if row[k] == nil then row[k] = v end end
      if deadline then row.meets_deadline = c.train_s ~= nil and c.train_s <= deadline end
      if a.budget ~= nil then
        budget = budget or M.money(a.budget, "budget", c.currency, o.cat)
        local amount = c.currency and (o.cat or require("gpuplan").catalog()):convert(budget,
          c.currency)
        row.meets_budget = c.cost ~= nil and amount ~= nil and c.cost <= amount
      end
      row.meets = meets and row.meets_deadline ~= false and row.meets_budget ~= false
    end
    rows[#rows + 1] = row
  end
  table.sort(rows, function(x, y)
    local rx = x.meets and 0 or x.fits and 1 or 2
    local ry = y.meets and 0 or y.fits and 1 or 2
    if rx ~= ry then return rx < ry end
    if rx == 0 and x.score ~= y.score then return x.score < y.score end
    if rx == 0 and gpu_s(x) ~= gpu_s(y) then return gpu_s(x) < gpu_s(y) end
    if rx == 1 and x.tokens_per_s ~= y.tokens_per_s then return x.tokens_per_s > y.tokens_per_s end
    return x.gpu_order < y.gpu_order
  end)
  local w = rows[1] and rows[1].meets and rows[1] or nil
  for _, row in ipairs(rows) do
    if row == w then row.winner, row.loses = true, "(the winner)"
    elseif not row.fits then
      -- a card with no layout at all (no split divides or places, the
      -- searched line's count) is not one whose layouts overflow memory;
      -- splits a zero_group left out are named with it, as the verdict
      -- line (cmd/plan.lua none_reason) names them: "divides and places"
      -- alone did not say that the group was why
      local st = stats and stats[row.gpu]
      local ug = st and st.ungrouped or 0
      row.loses = st and st.layouts == 0 and ("no layout: no split divides and places"
        .. (ug > 0 and string.format(" (%d split%s: zero_group %s does not divide the dp x cp)",
          ug, ug == 1 and "" or "s", tostring(a.zero_group)) or "")
        .. ((st.expert_cut or 0) > 0 and string.format(" (%d split%s: a shard group cuts the "
          .. "expert group etp x ep)", st.expert_cut, st.expert_cut == 1 and "" or "s") or ""))
        or "no layout fits"
    elseif not row.meets then
      local why = {}
      -- as many decimals as tell the figure from the limit it is past:
      -- 3.034 days past a 3d deadline read "(3.0 days)"
      if row.meets_deadline == false then
        why[#why + 1] = row.days and string.format("misses the deadline (" .. units.past_fmt(
          row.days, deadline / 86400, 1) .. " days)", row.days) or "misses the deadline"
      end
      if row.meets_budget == false then
        local limit = row.cost and (o.cat or require("gpuplan").catalog()):convert(budget,
          row.currency)
        why[#why + 1] = row.cost and string.format("over the budget (" .. units.past_fmt(
          row.cost, limit, 0) .. " %s)", row.cost, row.currency or "")
          or "no price in the buyer's market"
      end
      row.loses = #why > 0 and table.concat(why, ", ") or "not within the deadline and budget"
    else
      row.loses = w and loses(row, w, a.key) or ""
    end
    row.winner = row.winner or false
  end
  return rows
end

-- Policies: tables gp.sweep folds into its options.
M.policy = {}
-- The keys a policy table takes: a misspelt deadline would rank with none.
local function policy_keys(t, who, known)
  if t ~= nil and type(t) ~= "table" then error(who .. ": expected a table", 3) end
  args.check_keys(t or {}, known or { "deadline", "budget" }, who, 3)
  return t or {}
end
-- The ranking policies: each sets the key gp.sweep ranks by.
for name, key in pairs { cheapest = "cost", fastest = "time", fewest_gpus = "gpus",
                         best_per_dollar = "per_dollar" } do
  M.policy[name] = function(t)
    t = policy_keys(t, "policy." .. name)
    -- checked here, once, as policy.monthly's budget is: a NaN deadline
    -- or a budget of {} was taken and refused (or not) only by the search.
    -- A budget string's currency is the job's catalog's to convert, so
    -- its form is checked here and its currency by the search.
    if t.deadline ~= nil then M.duration(t.deadline, "policy." .. name .. ": deadline") end
    -- (the string's form was not checked, though this said so: budget =
    -- "abc" made a policy, refused only by gp.sweep, at the sweep's line)
    if t.budget ~= nil then
      M.money(t.budget, "policy." .. name .. ": budget", "USD", false)
    end
    return { key = key, deadline = t.deadline, budget = t.budget }
  end
end
-- A monthly budget: the fastest layout whose GPUs cost at most `budget` a
-- month (30 days of 24 h), and how long the run then takes.
function M.policy.monthly(t)
  -- the keys first: {budgett = 1000} was told "budget is required", the
  -- misspelling not named where every other policy names it
  if type(t) == "table" then policy_keys(t, "policy.monthly", { "budget" }) end
  if type(t) ~= "table" or t.budget == nil then
    fail("policy.monthly{budget = ...}: budget is required%s", type(t) ~= "table"
      and string.format(" (got %s, not a table)", require("gpuplan.args").shown(t)) or "")
  end
  local b = t.budget
  -- checked here, once: a budget of -1, 0 or NaN was taken and raised (or
  -- kept nothing) only inside the search, at each layout.  Its form only:
  -- the rates are the job's catalog's (gp.sweep's cat), which the policy
  -- meets at the search, not here -- a budget in a currency the user's
  -- catalog adds was refused here, and a candidate priced in one raised
  -- "no exchange rate" at its first layout, both at the built-in rates.
  M.money(b, "policy.monthly: budget", "USD", false)
  return function(c, cat)
    if not c.price then return nil end
    cat = cat or require("gpuplan").catalog()
    local m = M.money(b, "policy.monthly: budget", c.currency, cat)
    local amount = cat:convert(m, c.currency)
    local per_month = c.price * c.gpus * 24 * 30
    if per_month > amount then return nil end
    c.per_month = per_month
    return 1 / c.tokens_per_s
  end
end

return require("gpuplan.args").api_module(M)
