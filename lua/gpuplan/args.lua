-- Checks shared by the gp.* functions that take a table of arguments, and
-- M.api, which makes a misuse name the caller's line.
local config = require "gpuplan.config"

local M = {}

-- A bad value as a message shows it: NaN in one spelling (the C library
-- prints "nan" or "-nan"), a string quoted with its type, a table or a
-- function by its kind.
-- A whole number written in decimal, as every count typed on a command
-- line or in a list is: Lua's tonumber reads "0x8" as 8, which --batch
-- (gpuplan.cli's "int" options) refuses, so a list entry ("--gpus 0x8")
-- is refused the same way; nil for anything else.
function M.decimal_int(s)
  if type(s) == "number" then return math.tointeger(s) end
  if type(s) ~= "string" or s:match("^%s*[%+%-]?0[xX]") then return nil end
  return math.tointeger(tonumber(s))
end

function M.shown(v)
  if v ~= v then return "NaN" end
  if type(v) == "string" then return "string '" .. v .. "'" end
  -- A table or a function by its kind: its address ("table: 0x55...")
  -- says nothing to the user and differs every run.
  if type(v) ~= "number" and type(v) ~= "boolean" and v ~= nil then return "a " .. type(v) end
  return tostring(v)
end

-- A list option's value (recompute_modules, cuda_graph_scope): a list of
-- names or the names joined by commas, as one comma-joined string; else
-- nil and the message naming key and what each entry is (noun).  A table
-- with other keys or a hole ({attn = true}, {"attn", nil, "x"}) is no
-- list, and a name given twice is refused: either would be priced as
-- something else, or raise from inside gpuplan.
function M.name_list(v, key, noun)
  local s
  if type(v) == "table" then
    local n = 0
    for k in pairs(v) do
      if math.type(k) ~= "integer" or k < 1 then
        return nil, string.format("%s must be a list of %ss (got a table with key %s)", key,
          noun, type(k) == "string" and ("'" .. k .. "'") or M.shown(k))
      end
      n = n + 1
    end
    for i = 1, n do
      if type(v[i]) ~= "string" then
        return nil, string.format("%s[%d] must be a %s (got %s)", key, i, noun,
          v[i] == nil and "nil" or M.shown(v[i]))
      end
    end
    s = table.concat(v, ",", 1, n)
  elseif type(v) ~= "string" then
    return nil, string.format("%s must be a list of %ss (got %s)", key, noun, M.shown(v))
  else
    s = v
  end
  local seen = {}
  for name in (s .. ","):gmatch("([^,]*),") do
    if name ~= "" and seen[name] then
      return nil, string.format("%s names '%s' twice", key, name)
    end
    seen[name] = true
  end
  return s
end

-- a[k] as a whole number >= lo (nil when absent; a float with no
-- fraction becomes an integer); otherwise "<who>: k must be an integer
-- >= lo", raised at the level of the caller's caller -- a reader that
-- tail-calls this one keeps that level (infer's and serve's setups).
function M.int_field(a, k, lo, who)
  local v = a[k]
  if v == nil then return nil end
  if type(v) == "number" and v == math.floor(v) and v < 2 ^ 31 then v = math.tointeger(v) end
  if math.type(v) ~= "integer" or v < lo then
    error(string.format("%s: %s must be an integer >= %d (got %s)", who, k, lo, M.shown(a[k])), 3)
  end
  return v
end

-- The first, in sorted order, key of t that `known` does not accept (a
-- set table, or a function of the key), or nil.  Sorted so that with two
-- misspellings the message is the same from run to run.
function M.unknown_key(t, known)
  local ok = type(known) == "function" and known or function(k) return known[k] end
  local bad
  for k in pairs(t) do
    if not ok(k) and (bad == nil or tostring(k) < tostring(bad)) then bad = k end
  end
  return bad
end

-- Edit distance (insertions, deletions, substitutions and transpositions
-- of neighbours, each 1), stopping early past `limit`.
function M.distance(a, b, limit)
  if math.abs(#a - #b) > limit then return limit + 1 end
  -- b's bytes taken once (not two string calls a cell): the catalog's
  -- "did you mean" measures a name against every id of a kind.
  local prev2, prev, cur = {}, {}, {}
  local nb, bb = #b, {}
  for j = 1, nb do bb[j] = b:byte(j) end
  for j = 0, nb do prev[j] = j end
  for i = 1, #a do
    cur = { [0] = i }
    local best = i
    local ai, ap = a:byte(i), i > 1 and a:byte(i - 1)
    for j = 1, nb do
      local bj = bb[j]
      local cost = ai == bj and 0 or 1
      local v = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
      if ap and j > 1 and ai == bb[j - 1] and ap == bj then
        v = math.min(v, prev2[j - 2] + 1)
      end
      cur[j] = v
      if v < best then best = v end
    end
    if best > limit then return limit + 1 end
    prev2, prev = prev, cur
  end
  return prev[#b]
end

-- The name of `names` whose words pair with the key's words `kw` one by
-- one (as many words, two at least) under `shared(a, b)`: the letters a
-- name's word and the key's share, or nil where the pair does not match.
-- The name sharing the most letters wins, the first listed on a tie.
local function by_words(names, kw, shared)
  local best, most = nil, 0
  for _, n in ipairs(names) do
    local nw = {}
    for w in n:gmatch("[^_]+") do nw[#nw + 1] = w end
    if #nw == #kw and #nw > 1 then
      local sum = 0
      for i = 1, #nw do
        local c = shared(nw[i], kw[i])
        if not c then sum = nil break end
        sum = sum + c
      end
      if sum and sum > most then best, most = n, sum end
    end
  end
  return best
end

-- The name of `names` (a list, in the order that breaks ties) a user most
-- likely meant by `key`, or nil: the nearest within two edits and fewer
-- than the key's length (so "x" suggests nothing); else an abbreviation or
-- a longer spelling -- the longest name that begins one of the key's
-- words (seq in sequence_len, kv in kv_cache_dtype) or is whole words of
-- it (global_batch in global_batch_tokens; gpus over gpu in num_gpus).
function M.nearest(key, names)
  if type(key) ~= "string" then return nil end
  local k = key:lower():gsub("%-", "_")
  local best, bestd = nil, math.min(2, #k - 1)
  for _, n in ipairs(names) do
    local dist = M.distance(k, n, bestd)
    if dist <= bestd and (best == nil or dist < bestd) then best, bestd = n, dist end
  end
  if best then return best end
  -- Word by word, each of a name's words the start of the key's (or the
  -- key's of the name's), as many words: a name spelt out where it is
  -- abbreviated ('reference_model' for ref_model, 'tensor_par' for
  -- nothing) or misspelt past its start ('refrence_model'), which the
  -- fallback below matched to 'model' alone.  The name sharing the most
  -- letters wins, the first listed on a tie.
  local kw = {}
  for w in k:gmatch("[^_]+") do kw[#kw + 1] = w end
  best = by_words(names, kw, function(a, b)
    if #a > #b then a, b = b, a end
    return b:sub(1, #a) == a and #a or nil
  end)
  if best then return best end
  -- The same, a word's ending changed ('zero_gather_copy' for
  -- zero_gather_copies, 'legacy_permuted'): each pair of words shares a
  -- start of 3 letters or more, all but one letter of the shorter.  The
  -- fallback below read 'zero_gather_copy' as 'zero', another option.
  best = by_words(names, kw, function(a, b)
    local cp = 0
    while cp < #a and cp < #b and a:byte(cp + 1) == b:byte(cp + 1) do cp = cp + 1 end
    if cp < math.min(#a, #b, 3) or cp < math.min(#a, #b) - 1 then return nil end
    return cp
  end)
  if best then return best end
  local words = "_" .. k .. "_"
  for _, n in ipairs(names) do
    if #n >= 2 and (best == nil or #n > #best) and words:find("_" .. n, 1, true) then
      best = n
    end
  end
  return best
end

-- The one message of an unknown key, wherever a user gives a name that
-- is not taken: a gp.* function's options (gp.train's, gp.infer's,
-- gp.comm's, a policy's, gp.render's opts ...), job:step's layout (its C
-- binding words it the same) and a command line's --options.  shown: the
-- key as the user wrote it ('seqlen', '--seqlen'); tail: what to say
-- after it, with its leading space (" (did you mean 'seq'?)") or "".
-- gp.train said "unknown option", gp.infer and gp.comm "unknown
-- argument", gp.render "unknown key" for the same mistake.
function M.unknown_option(who, shown, tail)
  return string.format("%s: unknown option %s%s", who, shown, tail or "")
end

-- Refuse a key of table t that `known` (a list of names, in the order
-- that breaks a tie) does not hold: "who: unknown option 'k' (did you
-- mean 'x'?)" -- or, with no near name, the names it takes.  Raised at
-- `level` (as error's; default the caller's caller).
function M.check_keys(t, known, who, level)
  local set = {}
  for _, n in ipairs(known) do set[n] = true end
  local bad = M.unknown_key(t, set)
  if bad == nil then return end
  local near = M.nearest(bad, known)
  error(M.unknown_option(who, "'" .. tostring(bad) .. "'", " (" .. (near
    and ("did you mean '" .. near .. "'?") or table.concat(known, ", ")) .. ")"), (level or 2) + 1)
end

-- A set from a whitespace-separated list of names.
function M.set(names)
  local s = {}
  for k in names:gmatch("%S+") do s[k] = true end
  return s
end

-- Usage refusals ------------------------------------------------------
--
-- A refusal of the request as written -- two options that do not go
-- together ("vpp 2 needs a pipeline (pp > 1; got pp 1)", "base_checkpoint
-- needs response_max"), decided by the options' values alone -- is a
-- usage error: the command line exits 2 on it, as on a parse error, where
-- a job that cannot run (a model or card that cannot do it, a layout that
-- does not divide, a broken file) exits 1.  The error stays a plain
-- string, raised with error() as every other refusal is: a script's pcall
-- gets the message it always got (positioned at the script's line), and
-- the modules that catch a setup's refusal and re-raise it under their own
-- name ("train: ..." as "sweep: ..." or "rl: ...", "infer: ..." as "rl:
-- rollout: ...") keep working on a string.  The mark is kept beside it:
-- M.usage records the message's words, and the command line asks
-- M.is_usage of the message its command failed with.
local usage_said, said_count = {}, 0

-- The forms of a message a re-raise can leave: the whole, then without
-- each leading "name: " (the refusing function's, the command's).
local function heads_off(msg, f)
  local s = msg
  while true do
    if f(s) then return true end
    local rest = s:match("^[%w_]+: (.+)$")
    if not rest then return false end
    s = rest
  end
end

-- msg recorded as a usage refusal; returns msg (error(M.usage(msg), level)).
function M.usage(msg)
  -- A script pricing many jobs under pcall records each distinct message:
  -- past a few thousand the record starts again (a usage error then
  -- forgotten exits 1, as before the mark, never a wrong 2).
  if said_count > 4096 then usage_said, said_count = {}, 0 end
  said_count = said_count + 1
  heads_off(msg, function(s) usage_said[s] = true end)
  return msg
end

-- Whether error message e (a string: its position and a traceback after
-- it are set aside) is a usage refusal M.usage recorded, under whatever
-- "name: " heads a re-raise put in front of it.
function M.is_usage(e)
  if type(e) ~= "string" then return false end
  local s = e:match("^(.-)\nstack traceback:") or e
  local function said(x) return usage_said[x] == true end
  -- the message as it is first: a case file's refusal starts with its
  -- FILE:LINE, which is the message's own, not a position Lua put there
  if heads_off(s, said) then return true end
  s = s:gsub("^[^%s:]+:%d+: ", "")
  return heads_off(s, said)
end

-- Errors at the caller's level ---------------------------------------

-- Where gpuplan's own Lua lives: chunk sources "@ROOT/lua/...".
local LIB = "@" .. config.root .. "/lua/"

-- Whether a chunk source (debug.getinfo(...).source) is gpuplan's own.
function M.is_library(source)
  return type(source) == "string" and source:sub(1, #LIB) == LIB
end

-- Whether f is one of gpuplan's C functions: gpuplan.core's and the
-- methods of its handles (job:step, a result's fields).  Their errors
-- are a script's misuse, as a Lua module's are.
local core_functions
function M.is_core(f)
  if not core_functions then
    core_functions = {}
    local function add(t)
      if type(t) == "function" then core_functions[t] = true end
      if type(t) ~= "table" then return end
      for _, v in pairs(t) do
        if type(v) == "function" then core_functions[v] = true end
      end
    end
    add(package.loaded["gpuplan.core"])
    local reg = debug.getregistry()
    for _, name in ipairs { "gpuplan.train_job", "gpuplan.train_result", "gpuplan.rl_job",
                            "gpuplan.rl_result" } do
      if type(reg[name]) == "table" then add(reg[name].__index) end
    end
  end
  return core_functions[f] == true
end

-- "file:line: " of the innermost frame, from level up, that is neither
-- gpuplan's own Lua nor a C function (pcall, xpcall): the user's line
-- that called into gpuplan.  "" when there is none (the CLI: every frame
-- is gpuplan's), so a command's messages carry no position at all.
function M.where(level)
  level = (level or 1) + 1
  while true do
    local info = debug.getinfo(level, "Sl")
    if not info then return "" end
    if info.what ~= "C" and not M.is_library(info.source) and info.currentline > 0 then
      return info.short_src .. ":" .. info.currentline .. ": "
    end
    level = level + 1
  end
end

-- A position gpuplan's own code put in front of a message: "error(msg, 2)"
-- deep inside a module names a line of the module, not the user's.
local function library_position(msg)
  local file = msg:match("^([^%s:]+):%d+: ")
  return file ~= nil and (file:find("/lua/gpuplan/[%w_/]+%.lua$") ~= nil
                          or file:find("^lua/gpuplan/[%w_/]+%.lua$") ~= nil)
end

local function has_position(msg) return msg:match("^[^%s:]+:%d+: ") ~= nil end

-- Error e's message without the position gpuplan's own Lua put in front
-- of it (a module's error(msg, 2)), for a public function that re-raises
-- it at its caller's.
function M.unplaced(e)
  return (tostring(e):gsub("^[^\n]-lua/gpuplan/[%w_/]+%.lua:%d+: ", ""))
end

-- The message handler of M.api: an error raised on purpose (through
-- `error` or a C function of the binding: misuse, bad input) loses a
-- position inside gpuplan; a runtime error in gpuplan's own code (a bug)
-- keeps its position, so the bug shows where it is.
local function handler(m)
  if type(m) ~= "string" then return m end
  local info = debug.getinfo(2, "S")
  if info and info.what == "C" then
    if library_position(m) then m = m:gsub("^[^%s:]+:%d+: ", "", 1) end
    return { api = m }
  end
  if os.getenv("GPUPLAN_DEBUG") then m = debug.traceback(m, 2) end
  return m
end

-- f wrapped so that an error raised on purpose inside it names the line of
-- the user's code that called it ("guide.lua:12: memory: gpus must be a
-- positive integer (got string '8')"), as luaL_argerror names the caller,
-- however deep in gpuplan it was found.  Error tables (cli.usage,
-- cli.fail, catalog errors) pass through as they are.
function M.api(f)
  return function(...)
    local r = table.pack(xpcall(f, handler, ...))
    if r[1] then return table.unpack(r, 2, r.n) end
    local e = r[2]
    if type(e) == "table" and e.api then
      e = e.api
      if not has_position(e) then e = M.where(2) .. e end
    end
    error(e, 0)
  end
end

-- Every function field of module table t wrapped with M.api (in place).
function M.api_module(t)
  local names = {}
  for k, v in pairs(t) do
    if type(v) == "function" then names[#names + 1] = k end
  end
  for _, k in ipairs(names) do t[k] = M.api(t[k]) end
  return t
end

return M
