-- gpuplan merge FILE...: the shards of a plan (gpuplan plan --shard K/N
-- --format json) combined and ranked again -- the same best layouts as
-- the search run whole.
local report = require "gpuplan.report"
local sweep = require "gpuplan.sweep"
local cli = require "gpuplan.cli"

local C = {
  summary = "combine the shards of a plan (gpuplan plan --shard K/N --format json) and rank again",
  usage = [[
usage: gpuplan merge FILE... [--top N] [--format F]

  Reads the JSON lines that `gpuplan plan --shard K/N --format json` writes
  (one file per shard, or - for standard input), checks that they are
  shards of one search (the same model, job, policy and shard count, each
  shard once), and prints the best layouts of all of them as `gpuplan
  plan` would have printed the search run whole, the counts summed over
  the shards.

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

-- The records of one file: its plan line and its results.
local function read_shard(name)
  local fh, err
  if name == "-" then fh = io.stdin else fh, err = io.open(name, "r") end
  if not fh then fail("merge: cannot read %s: %s", name, tostring(err)) end
  local head, results, n = nil, {}, 0
  for line in fh:lines() do
    n = n + 1
    if line:match("%S") then
      local ok, v = pcall(cjson.decode, line)
      if not ok or type(v) ~= "table" then
        fail("merge: %s:%d: not a JSON object (%s)", name, n,
             ok and type(v) or (tostring(v):gsub("^.-:%d+: ", "")))
      end
      v = normalise(v)
      if v.kind == "plan" then
        if head then fail("merge: %s:%d: a second plan line in one file", name, n) end
        if type(v.job) ~= "table" or type(v.stats) ~= "table" then
          fail("merge: %s:%d: the plan line has no job or stats", name, n)
        end
        head = v
      elseif v.kind == "result" then
        if not head then fail("merge: %s:%d: a result before the plan line", name, n) end
        for _, k in ipairs { "score", "gpu_order", "index", "gpu", "gpus", "tp", "pp", "dp",
                             "tokens_per_s" } do
          if v[k] == nil then
            fail("merge: %s:%d: the result has no %s", name, n, k)
          end
        end
        v.kind = nil
        v._line = name .. ":" .. n
        results[#results + 1] = v
      else
        fail("merge: %s:%d: kind must be \"plan\" or \"result\" (got %s)", name, n,
             tostring(v.kind))
      end
    end
  end
  if fh ~= io.stdin then fh:close() end
  if not head then fail("merge: %s: no plan line (is it gpuplan plan --format json output?)", name) end
  return head, results
end

local function same(a, b)
  return report.json(a) == report.json(b)
end

function C.run(opts, args)
  if #args == 0 then error(cli.usage("merge: expected the shards' files"), 0) end
  local first, all, seen, total = nil, {}, {}, nil
  local stats = {}
  for _, name in ipairs(args) do
    local head, results = read_shard(name)
    local k, n = tostring(head.shard or "1/1"):match("^(%d+)/(%d+)$")
    k, n = tonumber(k), tonumber(n)
    if not k or not (k >= 1 and k <= n) then
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
    else
      local job1, job2 = {}, {}
      for key, v in pairs(first.job) do if key ~= "shard" then job1[key] = v end end
      for key, v in pairs(head.job) do if key ~= "shard" then job2[key] = v end end
      if head.model ~= first.model or head.policy ~= first.policy or not same(job1, job2) then
        fail("merge: %s is a shard of another search than %s (model, job or policy differ)",
             name, args[1])
      end
      if n ~= total then fail("merge: %s is shard %d/%d, %s was of %d", name, k, n, args[1], total) end
    end
    if seen[k] then fail("merge: shard %d/%d given twice (%s and %s)", k, n, seen[k], name) end
    seen[k] = name
    for g, s in pairs(head.stats) do
      local t = stats[g] or { space = s.space, layouts = 0, bounded = 0, fitting = 0,
                              within = 0, errors = 0 }
      for _, f in ipairs { "layouts", "bounded", "fitting", "within", "errors" } do
        t[f] = t[f] + (tonumber(s[f]) or 0)
      end
      stats[g] = t
    end
    for _, c in ipairs(results) do all[#all + 1] = c end
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
    fail("merge: shards %s%s are missing", table.concat(missing, ", "),
         more > 0 and string.format(" and %d more", more) or "")
  end
  table.sort(all, sweep.before)
  local top = opts.top or first.top or 5
  local r = { results = all, stats = stats, defaults = first.defaults or {} }
  if (opts.format or "text") == "json" then
    local job = first.job
    job.shard = nil
    io.write(report.json { kind = "plan", model = first.model, policy = first.policy,
                           deadline = first.deadline, budget = first.budget, job = job,
                           stats = stats, defaults = r.defaults, top = top }, "\n")
    for i = 1, math.min(#all, math.max(top, 2)) do
      local c = all[i]
      c.kind, c._line = "result", nil
      io.write(report.json(c), "\n")
    end
    return 0
  end
  first.job.shard = nil
  first.shards = total > 1 and total or nil
  require("gpuplan.cmd.plan").show(r, first.job, first, opts.format or "text", top)
  return 0
end

return C
