-- gpuplan merge FILE...: the shards of a plan (gpuplan plan --shard K/N
-- --format json) combined and ranked again -- the same best layouts as
-- the search run whole.
local report = require "gpuplan.report"
local sweep = require "gpuplan.sweep"
local cli = require "gpuplan.cli"
local args_ = require "gpuplan.args"

local C = {
  summary = "combine the shards of a plan (gpuplan plan --shard K/N --format json) and rank again",
  usage = [[
usage: gpuplan merge FILE... [--top N] [--format F]

  Reads the JSON lines that `gpuplan plan --shard K/N --format json` writes
  (one file per shard, or - for standard input), checks that they are
  shards of one search (the same fingerprint -- gpuplan version, catalog
  and options -- model, job, policy and shard count, each shard once) and
  that each line holds what plan writes (every field in its range, the
  layout's degrees multiplying to its GPUs, its score, cost and label
  those its figures give), and prints the best layouts of all of them as
  `gpuplan plan` would have printed the search run whole, the counts
  summed over the shards.  A line is at most 1 MiB and a shard holds at
  most its plan's --top results (with --top 1, then its runner_up line).

  --top N            how many layouts to print (default: the plan's --top)
  --format F         text|markdown|csv|json (json: the merged JSON lines)

  The ranking is the plan's: by the policy's score, then the card's place
  in --gpu, then the layout's place in the enumeration.  Each shard kept
  its own best --top, so the merged best --top are exact.]],
  options = { top = "int", format = "format" },
}

local cjson = require("cjson").new()
cjson.decode_invalid_numbers(false)

local function fail(fmt, ...) error(string.format(fmt, ...), 0) end

-- The longest line a shard may hold: a plan line with 64 cards' counts
-- and defaults is ~30 kB, a result ~1 kB.  Past it the file is not a
-- shard, and reading on would hold an unbounded line in memory.
C.LINE_MAX = 1024 * 1024

-- JSON has one number type: a whole number read back is the integer
-- the plan wrote (a count, a degree), not a float; nulls are nil.
local function normalise(v)
  if type(v) == "number" and math.type(v) == "float" and v == math.floor(v) and
     math.abs(v) < 2 ^ 53 then
    return math.tointeger(v)
  end
  if type(v) == "table" then
    for k, x in pairs(v) do
      if x == cjson.null then v[k] = nil else v[k] = normalise(x) end
    end
  end
  return v
end

-- The lines of a file, each at most LINE_MAX bytes: an iterator of
-- (number, line), read 64 kB at a time.
local function lines_of(fh, name)
  local buf, pos, n = "", 1, 0
  return function()
    while true do
      local nl = buf:find("\n", pos, true)
      if nl then
        n = n + 1
        local line = buf:sub(pos, nl - 1)
        pos = nl + 1
        if #line > C.LINE_MAX then
          fail("merge: %s:%d: a line of more than %d bytes (1 MiB): not a plan shard", name, n,
               C.LINE_MAX)
        end
        return n, line
      end
      if #buf - pos + 1 > C.LINE_MAX then
        fail("merge: %s:%d: a line of more than %d bytes (1 MiB): not a plan shard", name, n + 1,
             C.LINE_MAX)
      end
      local chunk, err = fh:read(65536)
      if not chunk then
        if err then fail("merge: cannot read %s: %s", name, tostring(err)) end
        if pos > #buf then return nil end
        n = n + 1
        local line = buf:sub(pos)
        buf, pos = "", 1
        return n, line
      end
      buf, pos = buf:sub(pos) .. chunk, 1
    end
  end
end

-- What each line holds, as plan writes it: {type, min, max} (gt: the
-- least is excluded), opt = may be absent.  Any other field is refused.
local BIG = 2 ^ 53
local COUNT = { "int", 1, 2 ^ 24 }
local NONNEG = { "number", 0, BIG }
local POS = { "number", 0, BIG, gt = true }
local RESULT = {
  -- absent: JSON's null for an infinite score (cost without a price;
  -- -inf: best-per-dollar on a free card)
  score = { "number", -BIG, BIG, opt = true }, gpu_order = { "int", 1, sweep.GPUS_MAX },
  index = { "int", 0, BIG }, gpu = { "string" }, dp = COUNT,
  layout = { "string" }, step_s = POS, tokens_per_s = POS,
  -- model FLOPs per second over the card's peak: at most 1
  mfu = { "number", 0, 1 }, mem_gib = NONNEG, mem_bytes = NONNEG,
  train_s = { "number", 0, BIG, opt = true },
  days = { "number", 0, BIG, opt = true }, cost = { "number", 0, BIG, opt = true },
  -- 0: a free card (--price 0), its cost 0
  price = { "number", 0, BIG, opt = true },
  currency = { "string", opt = true, pattern = "^%u%u%u$" },
  flags = { "strings", opt = true },
  -- where the _lo/_hi ranges came from (gpuplan.ranges)
  range = { "record", opt = true, spec = {
    kind = { "string" }, level = { "number", 0, 1, gt = true }, cases = { "int", 0, BIG },
    regime = { "string", empty = true }, novel = { "string", opt = true } } },
}
-- The layout's searched dimensions, from the engine's table of them
-- (engine/sweep.h SWEEP_DIMS): a degree or a GPU count, a stage 0..hi, a
-- flag, a micro-batch size, a recompute policy.
for _, d in ipairs(require("gpuplan.core").SWEEP_DIMS) do
  RESULT[d.name] = d.type == "bool" and { "boolean" }
    or d.type == "num" and { "number", 0, 2 ^ 24, gt = true }
    or d.type == "rec" and { "string", values = { none = true, selective = true, full = true } }
    or d.type == "sched" and { "string", values = args_.set(table.concat(d.names, " ")) }
    or d.values == "mask" and { "int", 0, d.hi }
    or COUNT
end
-- Every other field gpuplan.results declares for a plan row (the scaling
-- efficiency, the 80% ranges' F_lo and F_hi, where they came from): in
-- the range it declares, else by its unit, a number of that unit (finite,
-- >= 0) or a value whose strings are each one line.
for _, f in ipairs(require("gpuplan.results").FIELDS) do
  if f.results.plan and not RESULT[f.name] then
    RESULT[f.name] = f.range
      and { "number", f.range[1], f.range[2], gt = f.range.gt, opt = true }
      or f.unit ~= "" and { "number", 0, BIG, opt = true } or { "any", opt = true }
  end
end
C.RESULT = RESULT
local STATS = { space = NONNEG, layouts = { "int", 0, BIG }, bounded = { "int", 0, BIG },
                fitting = { "int", 0, BIG }, within = { "int", 0, BIG },
                errors = { "int", 0, BIG }, cache_hits = { "int", 0, BIG, opt = true },
                unplaced = { "int", 0, BIG, opt = true },
                ungrouped = { "int", 0, BIG, opt = true },
                expert_cut = { "int", 0, BIG, opt = true },
                past_host = { "int", 0, BIG, opt = true },
                host_least = { "number", 0, BIG, opt = true },
                host_memory = { "number", 0, BIG, opt = true },
                past_gpu = { "int", 0, BIG, opt = true },
                gpu_least = { "number", 0, BIG, opt = true },
                gpu_budget = { "number", 0, BIG, opt = true } }
local KEYS = args_.set("time cost per_dollar mfu gpus")
local PLAN = {
  model = { "string" }, policy = { "string" }, job = { "table" }, stats = { "table" },
  top = { "int", 1, 100000 }, fingerprint = { "string", pattern = "^%x+$" },
  shard = { "string", opt = true }, deadline = { "string", opt = true },
  budget = { "string", opt = true }, defaults = { "strings", opt = true },
}

-- A value as an error shows it: a string quoted (control characters
-- escaped, cut at 80 bytes), a table by its kind.
local function shown(x)
  if type(x) == "string" then return string.format("%q", x:sub(1, 80)) end
  if type(x) == "table" then return #x > 0 and "a list" or "an object" end
  if type(x) == "number" then return report.json(x) end
  return tostring(x)
end

-- A spec's fields in sorted order, so that the first bad one named is the
-- same from run to run.
local ordered = setmetatable({}, { __mode = "k", __index = function(t, spec)
  local keys = {}
  for k in pairs(spec) do keys[#keys + 1] = k end
  table.sort(keys)
  t[spec] = keys
  return keys
end })

-- Check record v against spec; where names the line ("f.jsonl:3") and
-- what the record is ("result").
local check_fields
function check_fields(v, spec, where, what)
  local bad = args_.unknown_key(v, function(k) return k == "kind" or spec[k] ~= nil end)
  if bad ~= nil then fail("merge: %s: unknown field %s in a %s line", where, shown(bad), what) end
  for _, k in ipairs(ordered[spec]) do
    local s = spec[k]
    local x, ty = v[k], s[1]
    local function wrong(why)
      fail("merge: %s: %s field '%s' %s (got %s)", where, what, k, why, shown(x))
    end
    if x == nil then
      if not s.opt then fail("merge: %s: %s line without '%s'", where, what, k) end
    elseif ty == "number" or ty == "int" then
      if type(x) ~= "number" or x ~= x or (ty == "int" and math.type(x) ~= "integer") then
        wrong(ty == "int" and "must be an integer" or "must be a number")
      end
      if x < s[2] or x > s[3] or (s.gt and x == s[2]) then
        wrong(string.format("must be %s %.17g%s", s.gt and ">" or ">=", s[2],
                            s[3] < BIG and string.format(" and <= %.17g", s[3]) or
                              " and below 2^53"))
      end
    elseif ty == "any" then
      local function plain(y, depth)
        if type(y) == "table" then
          if depth > 4 then return false end
          for i, z in pairs(y) do
            if not plain(i, depth + 1) or not plain(z, depth + 1) then return false end
          end
          return true
        end
        if type(y) == "number" then return y == y and math.abs(y) < math.huge end
        return type(y) ~= "string" or (#y <= 1000 and not y:find("%c"))
      end
      if not plain(x, 1) then wrong("must hold finite numbers and one-line strings") end
    elseif ty == "strings" then
      if type(x) ~= "table" then wrong("must be a list of strings") end
      local count = 0
      for i, y in pairs(x) do
        count = count + 1
        if math.type(i) ~= "integer" or type(y) ~= "string" or #y > 1000 or y:find("%c") then
          wrong("must be a list of strings, each one line")
        end
      end
      if count ~= #x then wrong("must be a list of strings, each one line") end
    elseif ty == "record" then
      if type(x) ~= "table" then wrong("must be an object") end
      check_fields(x, s.spec, where, what .. " " .. k)
    elseif type(x) ~= ty then
      wrong("must be a " .. ty)
    elseif ty == "string" then
      if (x == "" and not s.empty) or #x > 1000 or x:find("%c") then
        wrong("must be one line of text")
      end
      if s.values and not s.values[x] then wrong("is not one plan writes") end
      if s.pattern and not x:find(s.pattern) then wrong("is not one plan writes") end
    end
  end
end

-- Do two of a result's figures agree (written by one computation from the
-- same doubles: equal but for the JSON's round trip, which is exact)?
local function agree(a, b)
  return math.abs(a - b) <= 1e-9 * math.max(math.abs(a), math.abs(b))
end

-- The plan line's job: what a result is checked against.
local function check_plan(v, where)
  check_fields(v, PLAN, where, "plan")
  local job = v.job
  if type(job.gpu) ~= "table" or #job.gpu == 0 then
    fail("merge: %s: the plan's job has no gpu list", where)
  end
  for i, g in pairs(job.gpu) do
    if math.type(i) ~= "integer" or type(g) ~= "string" then
      fail("merge: %s: the plan's job.gpu must be a list of GPU ids", where)
    end
  end
  local ok, counts = pcall(sweep.counts, job.gpus)
  -- the count list's own reason, without gp.sweep's head
  if not ok then
    fail("merge: %s: the plan's job.gpus: %s", where, (cli.clean(counts):gsub("^sweep: ", "")))
  end
  local key = type(job.policy) == "table" and job.policy.key
  if not require("gpuplan.cmd.plan").POLICIES[v.policy] or not KEYS[key] then
    fail("merge: %s: the plan's policy is not one plan writes", where)
  end
  local cards = {}
  for i, g in ipairs(job.gpu) do cards[g] = i end
  for _, g in ipairs(ordered[v.stats]) do
    local s = v.stats[g]
    if not cards[g] or type(s) ~= "table" then
      fail("merge: %s: the plan's stats name a card not in its --gpu (%s)", where, shown(g))
    end
    check_fields(s, STATS, where, "stats." .. g)
  end
  local set = {}
  for _, n in ipairs(counts) do set[n] = true end
  return { key = key, counts = set, cards = cards }
end

-- A result line against its plan: its fields, then what its figures
-- imply (the card at its place, a count the plan searched, degrees whose
-- product is the count, the score, cost, days and label they give).
local function check_result(c, plan, where)
  check_fields(c, RESULT, where, "result")
  local function wrong(fmt, ...) fail("merge: %s: the result's " .. fmt, where, ...) end
  if plan.job.gpu[c.gpu_order] ~= c.gpu then
    wrong("gpu '%s' is not card %d of the plan's --gpu", c.gpu, c.gpu_order)
  end
  if not plan.counts[c.gpus] then wrong("gpus %d is not a count the plan searched", c.gpus) end
  -- (a Ulysses group splits the sequence where CP would: one of them 1)
  if c.tp * c.pp * c.cp * c.ulysses * c.dp ~= c.gpus then
    wrong("tp x pp x cp x ulysses x dp = %d x %d x %d x %d x %d is not its gpus %d", c.tp, c.pp,
      c.cp, c.ulysses, c.dp, c.gpus)
  end
  local score = sweep.score(plan.key, c)
  if c.score == nil and (score == math.huge or score == -math.huge) then
    c.score = score
  elseif c.score == nil or not agree(c.score, score) then
    wrong("score %s is not its %s score %s", shown(c.score), plan.key, shown(score))
  end
  if (c.cost or c.days) and not c.train_s then wrong("cost or days come without train_s") end
  if c.cost and c.price and not agree(c.cost, c.train_s / 3600 * c.gpus * c.price) then
    wrong("cost %s is not train_s x gpus x price", shown(c.cost))
  end
  if c.days and not agree(c.days, c.train_s / 86400) then
    wrong("days %s is not its train_s in days", shown(c.days))
  end
  -- the FSDP strategy a result says is the one its stage and hybrid
  -- level are (sweep.sharding, which its label names too)
  if c.fsdp ~= nil and c.fsdp ~= sweep.sharding(c) then
    wrong("fsdp '%s' is not its layout's strategy %s (zero %d%s)", tostring(c.fsdp),
      tostring(sweep.sharding(c)), c.zero, c.hybrid and ", hybrid" or "")
  end
  if c.layout ~= sweep.label(c) then wrong("layout '%s' is not its degrees' label", c.layout) end
  -- an 80% range: both ends, low <= high
  for _, k in ipairs(ordered[RESULT]) do
    local f = k:match("^(.+)_lo$")
    if f and RESULT[f .. "_hi"] and (c[k] ~= nil or c[f .. "_hi"] ~= nil) then
      if c[k] == nil or c[f .. "_hi"] == nil or c[k] > c[f .. "_hi"] then
        wrong("%s_lo and %s_hi are not a range", f, f)
      end
    end
  end
end

-- The records of one file: its plan line (checked) and its results
-- (checked against it).
local function read_shard(name)
  local fh, err
  if name == "-" then fh = io.stdin else fh, err = io.open(name, "rb") end
  if not fh then fail("merge: cannot read %s: %s", name, tostring(err)) end
  local head, plan, results, seen, runner = nil, nil, {}, {}, false
  for n, line in lines_of(fh, name) do
    if line:match("%S") then
      local where = name .. ":" .. n
      local ok, v = pcall(cjson.decode, line)
      if not ok or type(v) ~= "table" then
        fail("merge: %s: not a JSON object (%s)", where,
             ok and type(v) or (tostring(v):gsub("^.-:%d+: ", "")))
      end
      local dup = require("gpuplan.files").json_duplicate(name, line, n)
      if dup then fail("merge: %s", dup) end
      v = normalise(v)
      if v.kind == "plan" then
        if head then fail("merge: %s: a second plan line in one file", where) end
        plan = check_plan(v, where)
        plan.job = v.job
        head = v
      elseif v.kind == "result" or v.kind == "runner_up" then
        if not head then fail("merge: %s: a result before the plan line", where) end
        check_result(v, plan, where)
        -- at most --top results, then with --top 1 one runner_up line
        -- (plan's write_results): the second best, after the one result
        if v.kind == "result" and (#results >= head.top or runner) then
          fail("merge: %s: more results than the plan's --top (%d)", where, head.top)
        end
        if v.kind == "runner_up" then
          if head.top ~= 1 or #results ~= 1 or runner then
            fail("merge: %s: a runner_up line is a --top 1 shard's second best, once, after "
                 .. "its one result (the plan's --top is %d)", where, head.top)
          end
          runner = true
        end
        local id = v.gpu_order .. "/" .. v.index
        if seen[id] then fail("merge: %s: the layout of %s again", where, seen[id]) end
        seen[id] = where
        v.kind = nil
        v._line = where
        results[#results + 1] = v
      else
        fail("merge: %s: kind must be \"plan\", \"result\" or \"runner_up\" (got %s)", where,
             shown(v.kind))
      end
    end
  end
  if fh ~= io.stdin then fh:close() end
  if not head then fail("merge: %s: no plan line (is it gpuplan plan --format json output?)", name) end
  return head, results
end

-- Shard s's layouts past a limit (count field past, the least need
-- beyond it least, that limit lim) folded into t: the counts summed, the
-- least need of all the shards kept with its own limit.
local function past_least(t, s, past, least, lim)
  if (s[past] or 0) > 0 then
    t[past] = (t[past] or 0) + s[past]
    if not t[least] or s[least] < t[least] then
      t[least], t[lim] = s[least], s[lim]
    end
  end
end

local function same(a, b)
  return report.json(a) == report.json(b)
end

function C.run(opts, args)
  if #args == 0 then error(cli.usage("merge: expected the shards' files"), 0) end
  -- plan's --top range (its declaration, gp.sweep's bound), and its exit
  -- status: a value out of the option's range is an error (exit 1), not
  -- a usage error (docs/output.md), where merge said 2 for the --top 0
  -- that plan says 1 for.
  if opts.top ~= nil and (opts.top < 1 or opts.top > 100000) then
    error(cli.fail("merge: --top must be a whole number 1..100000 (got " .. opts.top .. ")"), 0)
  end
  local first, all, seen, total = nil, {}, {}, nil
  local stats, keep = {}, nil
  for _, name in ipairs(args) do
    local head, results = read_shard(name)
    local k, n = tostring(head.shard or "1/1"):match("^(%d+)/(%d+)$")
    k, n = math.tointeger(tonumber(k)), math.tointeger(tonumber(n))
    if not k or not n or not (k >= 1 and k <= n) then
      fail("merge: %s: shard '%s' is not K/N with 1 <= K <= N", name, tostring(head.shard))
    end
    if n > sweep.SHARDS_MAX then
      fail("merge: %s: shard %d/%d: at most %d shards", name, k, n, sweep.SHARDS_MAX)
    end
    if n < #args then
      fail("merge: %d files for shards of %d (%s is %d/%d)", #args, n, name, k, n)
    end
    if not first then
      first, total = head, n
      -- Each shard kept only its own best max(--top, 2): the layouts
      -- ranked below that in the whole search may lie in any shard's
      -- dropped tail, so a longer list than the shards hold is not the
      -- search's best and is refused rather than printed as if it were.
      if opts.top and opts.top > math.max(first.top, 2) then
        fail("merge: --top %d is more than the %d each shard kept (the plan's --top %d): "
             .. "the best beyond them are not in the files; rerun plan with --top %d",
             opts.top, math.max(first.top, 2), first.top, opts.top)
      end
      -- Only the best `keep` of all shards are shown: the rest are
      -- dropped as each shard is read, so memory holds one shard's.
      keep = math.max(opts.top or first.top, 2)
    else
      local job1, job2 = {}, {}
      for key, v in pairs(first.job) do if key ~= "shard" then job1[key] = v end end
      for key, v in pairs(head.job) do if key ~= "shard" then job2[key] = v end end
      if head.fingerprint ~= first.fingerprint then
        fail("merge: %s is a shard of another search than %s (its fingerprint of gpuplan's "
             .. "version, the catalog and the options differs: %s against %s)", name, args[1],
             head.fingerprint, first.fingerprint)
      end
      if head.model ~= first.model or head.policy ~= first.policy or not same(job1, job2) then
        fail("merge: %s is a shard of another search than %s (model, job or policy differ)",
             name, args[1])
      end
      if n ~= total then fail("merge: %s is shard %d/%d, %s was of %d", name, k, n, args[1], total) end
    end
    if seen[k] then fail("merge: shard %d/%d given twice (%s and %s)", k, n, seen[k], name) end
    seen[k] = name
    for _, c in ipairs(results) do
      if n > 1 and c.index % n ~= k - 1 then
        fail("merge: %s: layout %d is shard %d/%d's, not %d/%d's", c._line, c.index,
             c.index % n + 1, n, k, n)
      end
    end
    for _, g in ipairs(ordered[head.stats]) do
      local s, t = head.stats[g], stats[g]
      if t and t.space ~= s.space then
        fail("merge: %s: the %s grid has %s combinations, %s's %s", name, g, shown(s.space),
             args[1], shown(t.space))
      end
      t = t or { space = s.space, layouts = 0, bounded = 0, fitting = 0, within = 0, errors = 0 }
      -- the splits that do not place are counted on the whole grid, as
      -- space is: every shard's count is the search's
      t.unplaced = s.unplaced
      t.ungrouped = s.ungrouped
      t.expert_cut = s.expert_cut
      for _, f in ipairs { "layouts", "bounded", "fitting", "within", "errors" } do
        t[f] = t[f] + s[f]
      end
      -- layouts past the host memory, and past a GPU's budget: each
      -- summed, the least need kept with its limit
      past_least(t, s, "past_host", "host_least", "host_memory")
      past_least(t, s, "past_gpu", "gpu_least", "gpu_budget")
      stats[g] = t
    end
    for _, c in ipairs(results) do all[#all + 1] = c end
    table.sort(all, sweep.before)
    for i = #all, keep + 1, -1 do all[i] = nil end
  end
  -- Each shard once and none over N (checked above), so fewer files than
  -- N means some are missing: name the first few, count the rest, without
  -- a list of all N.
  if #args < total then
    local missing, k = {}, 1
    while #missing < 8 and k <= total do
      if not seen[k] then missing[#missing + 1] = k .. "/" .. total end
      k = k + 1
    end
    local more = total - #args - #missing
    fail("merge: shard%s %s%s %s missing", (#missing > 1 or more > 0) and "s" or "",
         table.concat(missing, ", "), more > 0 and string.format(" and %d more", more) or "",
         (#missing > 1 or more > 0) and "are" or "is")
  end
  local top = opts.top or first.top
  local r = { results = all, stats = stats, defaults = first.defaults or {} }
  if (opts.format or "text") == "json" then
    local job = first.job
    job.shard = nil
    io.write(report.json { kind = "plan", model = first.model, policy = first.policy,
                           deadline = first.deadline, budget = first.budget, job = job,
                           stats = stats, defaults = r.defaults, top = top,
                           fingerprint = first.fingerprint }, "\n")
    for _, c in ipairs(all) do c._line = nil end
    -- plan's lines: the best --top, and with --top 1 the runner_up
    require("gpuplan.cmd.plan").write_results(all, top)
    return 0
  end
  first.job.shard = nil
  first.shards = total > 1 and total or nil
  require("gpuplan.cmd.plan").show(r, first.job, first, opts.format or "text", top)
  return 0
end

return C
