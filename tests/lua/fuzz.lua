-- fuzz: shared pieces of the fuzz targets (tests/lua/fuzz_*.t).
--
-- Each target feeds one parser a fixed number of generated inputs from a
-- seeded generator, so `make test` runs the same inputs every time (a
-- few seconds in all) and `make fuzz` runs many more:
--   GPUPLAN_FUZZ_SCALE  multiplies every target's count (default 1)
--   GPUPLAN_FUZZ_SEED   the seed (default 13)
-- A finding is an input whose outcome breaks the target's property; the
-- first few are printed in full so they can be replayed, and the target
-- fails.  Generation never iterates pairs(): string hashes are seeded per
-- process, so pairs() order would change the inputs from run to run.
local t = require "tap"

local M = {}

M.scale = tonumber(os.getenv("GPUPLAN_FUZZ_SCALE") or "") or 1
M.seed = math.tointeger(tonumber(os.getenv("GPUPLAN_FUZZ_SEED") or "")) or 13

-- Start a target: seeds the generator; returns how many inputs to run.
function M.start(name, n)
  math.randomseed(M.seed)
  M.name, M.findings, M.count = name, {}, math.max(1, math.floor(n * M.scale))
  return M.count
end

-- Record a finding: what broke and the input that broke it.
function M.finding(what, input)
  M.findings[#M.findings + 1] = { what = what, input = input }
end

-- Finish: one test line, the count in a diagnostic, the first findings.
function M.finish(checked)
  t.diag(string.format("fuzz %s: %d inputs, seed %d, %d finding%s", M.name, checked or M.count,
    M.seed, #M.findings, #M.findings == 1 and "" or "s"))
  t.ok(#M.findings == 0, string.format("%s: %d generated inputs, no finding", M.name,
    checked or M.count))
  for i = 1, math.min(#M.findings, 5) do
    local f = M.findings[i]
    local input = tostring(f.input)
    if #input > 600 then input = input:sub(1, 600) .. "..." end
    t.diag("finding: " .. f.what)
    t.diag("  input: " .. input)
  end
end

-- One random element of a list.
function M.pick(list) return list[math.random(#list)] end

-- Why an error message is not a clean user-facing one, or nil: it must be
-- one line, carry no position inside gpuplan's own Lua and no runtime
-- error of gpuplan's code (a bug), and not be empty.
function M.unclean(msg)
  if type(msg) ~= "string" then return "error is a " .. type(msg) .. ", not a message" end
  if msg == "" then return "empty message" end
  if msg:find("\n") then return "more than one line" end
  if msg:find("lua/gpuplan/[%w_/]+%.lua:%d+") then return "names gpuplan's own file:line" end
  if msg:find("stack traceback", 1, true) then return "a traceback" end
  return nil
end

-- Why the reason validate gives for a case it declines (validate.predict's
-- row.reason) is not one to show, or nil: unclean (M.unclean), a script's
-- position (the engine's refusal of ffn_hidden 0 read "x.t:172: infer:
-- ffn_hidden must be positive", the caller's; the cases file's own
-- FILE:line is the user's and fine), or a runtime error of gpuplan's code.
-- fuzz_cases and fuzz_fields hold a decline to it.
function M.bad_reason(reason)
  local why = M.unclean(reason)
  if why then return why end
  if reason:find("[%w_/%-]+%.lua:%d+: ") or reason:find("[%w_/%-]+%.t:%d+: ") then
    return "a script's position"
  end
  if reason:find("attempt to", 1, true) then return "a runtime error" end
  return nil
end

-- msg without the position gpuplan.args gives an API error: the line of
-- the fuzz target that called (tests/lua/fuzz_x.t:55: ...).
function M.uncalled(msg)
  if type(msg) ~= "string" then return msg end
  return (msg:gsub("^tests/lua/[%w_]+%.t:%d+: ", "", 1))
end

-- Values that break parsers: extremes, wrong types, near-misses.
M.numbers = { 0, -1, 1, 2, 3, 7, 8, 64, 1.5, -0.5, 0.1, 1e-300, 1e-320, 1e15, 1e300,
              2 ^ 24, 2 ^ 24 + 1, 2 ^ 31 - 1, 2 ^ 31, 2 ^ 53, 2 ^ 63, -2 ^ 63,
              math.huge, -math.huge, 0 / 0, math.maxinteger, math.mininteger }
M.strings = { "", " ", "x", "8", "1.5", "-1", "nan", "inf", "1e400", "0x10", "null",
              "bf16", "fp8", "int4", "none", "full", "80GB", "1TB/s", "$1/h",
              ("z"):rep(300), "\0", "é", "%d%s", "../../etc/passwd" }

-- A random JSON-like value (for decoded configs and cases): numbers,
-- strings, booleans, null (the given sentinel), small arrays and objects.
function M.value(null, depth)
  depth = depth or 0
  local r = math.random(10)
  if r <= 4 then return M.pick(M.numbers) end
  if r <= 6 then return M.pick(M.strings) end
  if r == 7 then return math.random(2) == 1 end
  if r == 8 then return null end
  if depth > 2 then return 1 end
  if r == 9 then return { M.value(null, depth + 1), M.value(null, depth + 1) } end
  return { a = M.value(null, depth + 1) }
end

-- Text mutations: insert, delete or replace a random span, duplicate one.
local alphabet = { "0", "1", "9", ".", "e", "E", "+", "-", " ", "\"", "'", "{", "}", "[",
                   "]", "(", ")", ",", ":", "=", "/", "$", "%", "\n", "\0", "\255", "\\" }
function M.mutate_text(s)
  local n = #s
  local op = math.random(5)
  local i = math.random(n + 1)
  if op == 1 then
    return s:sub(1, i - 1) .. M.pick(alphabet) .. s:sub(i)
  elseif op == 2 and n > 0 then
    local j = math.min(n, i + math.random(0, 8))
    return s:sub(1, i - 1) .. s:sub(j + 1)
  elseif op == 3 and n > 0 then
    return s:sub(1, i - 1) .. M.pick(alphabet) .. s:sub(i + 1)
  elseif op == 4 and n > 0 then
    local j = math.min(n, i + math.random(0, 20))
    return s:sub(1, j) .. s:sub(i, j) .. s:sub(j + 1)
  end
  return s:sub(1, math.random(0, n))  -- truncated
end

-- The keys of t in sorted order (generation must not depend on pairs()).
function M.keys(tbl)
  local ks = {}
  for k in pairs(tbl) do ks[#ks + 1] = k end
  table.sort(ks, function(a, b) return tostring(a) < tostring(b) end)
  return ks
end

-- A deep copy of plain data.
function M.copy(v)
  if type(v) ~= "table" then return v end
  local out = {}
  for _, k in ipairs(M.keys(v)) do out[k] = M.copy(v[k]) end
  return out
end

-- JSON text of a decoded value with its keys sorted (cjson.encode follows
-- pairs(), whose order changes from process to process, and the text
-- mutations must hit the same bytes every run).  NaN and infinities are
-- written as Python writes them; null is the given sentinel.
function M.json(v, null)
  local tv = type(v)
  if v == null or v == nil then return "null" end
  if tv == "boolean" then return tostring(v) end
  if tv == "number" then
    if v ~= v then return "NaN" end
    if v == math.huge then return "Infinity" end
    if v == -math.huge then return "-Infinity" end
    if math.type(v) == "integer" then return tostring(v) end
    return string.format("%.17g", v)
  end
  if tv == "string" then
    return '"' .. v:gsub('[%c"\\]', function(c) return string.format("\\u%04x", c:byte()) end) .. '"'
  end
  if tv == "table" then
    local n = #v
    local ks = M.keys(v)
    if n > 0 and #ks == n then
      local out = {}
      for i = 1, n do out[i] = M.json(v[i], null) end
      return "[" .. table.concat(out, ",") .. "]"
    end
    local out = {}
    for _, k in ipairs(ks) do out[#out + 1] = M.json(tostring(k), null) .. ":" .. M.json(v[k], null) end
    return "{" .. table.concat(out, ",") .. "}"
  end
  return "null"
end

-- Mutate a decoded JSON object in place a few times: set a random
-- (possibly nested) field to a random value, delete one, or add one of
-- the names in `extra`.
function M.mutate_table(obj, null, extra)
  for _ = 1, math.random(3) do
    local node = obj
    for _ = 1, 3 do
      local ks = M.keys(node)
      local sub = {}
      for _, k in ipairs(ks) do if type(node[k]) == "table" then sub[#sub + 1] = k end end
      if #sub == 0 or math.random(2) == 1 then break end
      node = node[M.pick(sub)]
    end
    local ks = M.keys(node)
    local op = math.random(4)
    if op == 1 and #ks > 0 then
      node[M.pick(ks)] = nil
    elseif op == 2 and extra then
      node[M.pick(extra)] = M.value(null)
    elseif #ks > 0 then
      node[M.pick(ks)] = M.value(null)
    end
  end
  return obj
end

-- Run a command line in this process through cli.main, stdout and stderr
-- captured in files of dir (a scratch directory, tap.scratch), at most `limit` VM
-- instructions (a hang).  Returns the exit code (or "raised"), stdout,
-- stderr.
function M.cli_run(argv, dir, limit)
  local cli = require "gpuplan.cli"
  local real_out, real_err = io.stdout, io.stderr
  local out = assert(io.open(dir.dir .. "/stdout", "w+b"))
  local err = assert(io.open(dir.dir .. "/stderr", "w+b"))
  io.stdout, io.stderr = out, err
  io.output(out)
  debug.sethook(function() error("fuzz: instruction budget exceeded (a hang?)", 0) end, "",
                limit or 50 * 1000 * 1000)
  local ok, code = pcall(cli.main, argv)
  debug.sethook()
  io.stdout, io.stderr = real_out, real_err
  io.output(real_out)
  out:seek("set")
  err:seek("set")
  local so, se = out:read("a"), err:read("a")
  out:close()
  err:close()
  if not ok then return "raised", so, tostring(code) end
  return code, so, se
end

-- The properties every command line keeps (a finding recorded against
-- `shown` otherwise): exit 0, 1 or 2; each line on stderr clean (no
-- position inside gpuplan, no traceback, no runtime error of gpuplan's
-- code); an error says "gpuplan: ..."; an answer prints no nan or inf
-- outside the quoted names the command line gave (skip_nan: it gave one).
function M.cli_check(shown, code, so, se, skip_nan)
  if code ~= 0 and code ~= 1 and code ~= 2 then
    M.finding("exit " .. tostring(code) .. ": " .. se, shown)
    return
  end
  for line in se:gmatch("[^\n]+") do
    local why = M.unclean(line)
    if why then M.finding(why .. ": " .. line, shown) break end
    if (line:find("attempt to", 1, true) and not line:find("^[^:]+%.lua:%d+: ")) or
       line:find("fuzz: instruction budget", 1, true) then
      M.finding(line, shown) break
    end
  end
  if code ~= 0 and not se:find("^gpuplan: ") and not se:find("\ngpuplan: ") then
    M.finding("an error without a 'gpuplan:' message: " .. se, shown)
  end
  if code == 0 and not skip_nan then
    local low = so:lower():gsub('"[^"\n]*"', '""')
    if low:find("%f[%w]nan%f[%W]") or low:find("%f[%w]inf%f[%W]") or
       low:find("%f[%w]infinity%f[%W]") then
      M.finding("an answer with nan or inf", shown)
    end
  end
end

return M
