-- gpuplan.catalog: load catalog directories in a sandbox.
--
-- Search path: the built-in catalog/, then each dir of $GPUPLAN_CATALOG
-- (colon-separated), then $XDG_CONFIG_HOME/gpuplan/catalog (default
-- ~/.config/gpuplan/catalog).  Within a directory, *.lua files are read in
-- sorted path order, recursively (a directory reached twice through
-- symlinks is read once).  Each file runs text-only ("t" mode) in an
-- environment holding only the constructors (gpu, arch, fabric, system,
-- price, currency, settings, model) and unit helpers; reading or writing
-- any other global is an error.  A file runs in a coroutine under limits
-- (M.limits: instructions, CPU seconds, bytes allocated) and, while it
-- runs, strings offer only the methods in `safe_string` (no rep, dump or
-- pattern matching: those can spend unbounded memory or time inside one C
-- call, where no hook can stop them).  Entries are checked against
-- gpuplan.schema; an error names file:line and the field path.  A later
-- directory may redefine an id (an override, recorded); the same id twice
-- in one directory is an error.
--
-- A file larger than gpuplan.files.limits.catalog is refused by its size
-- before it is read; compiling it counts against the memory and time
-- limits.  Every error of every file is reported (a bad entry does not
-- hide the next one), and after the schema the entries go through the
-- checks the commands run on them (the engine's model_check,
-- roof_device_check and comm_topo_check through gpuplan.core, and the
-- bounds of gpuplan.memory and gpuplan.infer), so `catalog check` says ok
-- only to what every command accepts.  Broken or looping symbolic links,
-- unreadable subdirectories and *.lua names that are not regular files
-- are skipped with a warning (cat.warnings; printed on stderr by M.get).

local lfs = require "lfs"
local schema = require "gpuplan.schema"
local config = require "gpuplan.config"
local files = require "gpuplan.files"

local M = {}

-- What one catalog file may spend.  A data file needs a few thousand
-- instructions, well under a millisecond and a few kilobytes; these stop
-- `while true do end`, a loop of costly instructions and a string doubled
-- forty times without bothering real files.  (Tests lower them.)
M.limits = {
  instructions = 10000000,
  seconds = 5,
  bytes = 64 * 1024 * 1024,
}

-- What all the files of the search path may spend together: without it
-- forty files that each build a large string, or three hundred that each
-- loop to just under the limits above, cost every command gigabytes or
-- tens of seconds.  The built-in catalog is 24 files, 160 KB, ~200
-- entries; these leave it fifty times the room.  A file that crosses one
-- is named with the budget, and no file after it is read.  (Tests lower
-- them.)
M.budget = {
  files = 1000,
  source = 16 * 1024 * 1024,  -- bytes of source text
  instructions = 20000000,
  seconds = 5,
  bytes = 128 * 1024 * 1024,   -- memory the loading may hold at once
  entries = 10000,             -- constructor calls
}

-- Instructions between two checks of the limits, and, in the built-in
-- catalog's files, checks between two readings of the clock (see
-- load_file).
local HOOK_EVERY = 100
local CLOCK_EVERY = 10

local string_meta = getmetatable("")
local string_lib = string_meta.__index

-- String methods a catalog file may call: each costs time and memory in
-- proportion to its arguments, which the limits above already bound.
local safe = {}
for _, k in ipairs { "byte", "char", "format", "len", "lower", "reverse",
                     "sub", "upper" } do
  safe[k] = string_lib[k]
end
local function safe_string(_, k)
  local f = safe[k]
  if f then return f end
  error(string.format("string method '%s' is not available in catalog files",
    tostring(k)), 2)
end

local singular = {}
for ctor, tbl in pairs(schema.kinds) do singular[tbl] = ctor end

-- cat:get and cat:ids with a kind the catalog has not: "unknown catalog
-- table 'gpu'" named none it has, nor the nearest (the singular).
local function unknown_kind(kind)
  local kinds = {}
  for tbl in pairs(singular) do kinds[#kinds + 1] = tbl end
  table.sort(kinds)
  local near = require("gpuplan.args").nearest(kind, kinds)
  error(string.format("unknown catalog table %s (%s)",
    type(kind) == "string" and ("'" .. kind .. "'") or require("gpuplan.args").shown(kind),
    near and ("did you mean '" .. near .. "'?") or ("one of " .. table.concat(kinds, ", "))), 3)
end

-- Sorted list of *.lua files under dir (recursive) and a list of
-- warnings (what was skipped and why); nil, err if dir is not a readable
-- directory.  A directory reached twice (two links to it, or a link back
-- to an ancestor) is read once.
local function list_files(dir)
  local attr = lfs.attributes(dir)
  if not attr then return nil, "no such directory: " .. dir end
  if attr.mode ~= "directory" then return nil, "not a directory: " .. dir end
  local ok0, it0 = pcall(lfs.dir, dir)
  if not ok0 then return nil, "cannot read directory " .. dir .. ": " .. tostring(it0) end
  local out, warnings, seen = {}, {}, {}
  local function warn(fmt, ...)
    warnings[#warnings + 1] = require("gpuplan.units").oneline(string.format(fmt, ...))
  end
  local function walk(d, a)
    seen[a.dev .. ":" .. a.ino] = d
    local ok, iter, state = pcall(lfs.dir, d)
    if not ok then
      warn("cannot read directory %s: %s (skipped)", d, tostring(iter))
      return
    end
    local names = {}
    for name in iter, state do
      if name:sub(1, 1) ~= "." then names[#names + 1] = name end
    end
    table.sort(names)
    for _, name in ipairs(names) do
      local p = d .. "/" .. name
      local la = lfs.symlinkattributes(p)
      local pa, perr = lfs.attributes(p)
      if la and la.mode == "link" and not pa then
        local target = la.target or lfs.symlinkattributes(p, "target") or "?"
        if tostring(perr):find("oo many levels") then
          warn("%s: symbolic link loop (to %s), skipped", p, target)
        else
          warn("%s: broken symbolic link (to %s), skipped", p, target)
        end
      elseif pa and pa.mode == "directory" then
        local first = seen[pa.dev .. ":" .. pa.ino]
        if first then
          warn("%s: directory %s already read, skipped (a symbolic link loop?)", p, first)
        else
          walk(p, pa)
        end
      elseif pa and name:match("%.lua$") then
        if pa.mode == "file" then
          out[#out + 1] = p
        else
          warn("%s: not a regular file (a %s), skipped", p, pa.mode)
        end
      end
    end
  end
  walk(dir, attr)
  return out, warnings
end

-- The line the catalog file at path is executing, innermost first, in the
-- running coroutine or in co (also after co died of an error).
-- 0 when not known (a coroutine whose stack overflowed has no room left
-- for debug.getinfo to inspect it).
local function caller_line(path, co)
  local level = co and 0 or 2
  while true do
    local ok, info = true, nil
    if co then ok, info = pcall(debug.getinfo, co, level, "Sl")
    else info = debug.getinfo(level, "Sl") end
    if not ok or not info then return 0 end
    if info.source == "@" .. path then return info.currentline end
    level = level + 1
  end
end

local function unit_helper(suffix)
  return function(x)
    if type(x) ~= "number" then
      error(suffix .. "() expects a number, got " .. type(x), 2)
    end
    if x ~= x or x == math.huge or x == -math.huge then
      error(suffix .. "() expects a finite number", 2)
    end
    return string.format("%.17g%s", x, suffix)
  end
end

-- A copy of a validated tree of fields (plain data, no cycles).
local function copy(v)
  if type(v) ~= "table" then return v end
  local out = {}
  for k, x in pairs(v) do out[k] = copy(x) end
  return out
end

local helpers = {
  B = unit_helper("B"), KB = unit_helper("KB"), MB = unit_helper("MB"),
  GB = unit_helper("GB"), TB = unit_helper("TB"), KiB = unit_helper("KiB"),
  MiB = unit_helper("MiB"), GiB = unit_helper("GiB"), TiB = unit_helper("TiB"),
  TFLOPS = unit_helper("TFLOPS"), PFLOPS = unit_helper("PFLOPS"),
  TOPS = unit_helper("TOPS"), W = unit_helper("W"), us = unit_helper("us"),
  ms = unit_helper("ms"),
}

-- Methods of a loaded catalog (cat:get, cat:ids, cat:achievable, ...).
local methods = {}
-- A method called with a dot, cat.get("gpus", "h100-sxm"): its first
-- argument is not the catalog, and was read as one -- "unknown catalog
-- table 'h100-sxm'" naming the id as a table, or, for cat.get(nil ...),
-- "catalog.lua:275: attempt to index a nil value (local 'cat')".  Said
-- as the call to write.  A table that inherits a catalog's methods
-- (setmetatable({settings = ...}, {__index = cat})) is one, and so is one
-- that borrows them beside its own settings ({settings = cat.settings,
-- prices = ..., convert = cat.convert}).
local function need_self(cat, call)
  if type(cat) ~= "table" or (cat.get ~= methods.get and type(cat.settings) ~= "table") then
    error(string.format("cat:%s: the catalog comes first: call it with a colon, cat:%s (got %s "
      .. "for the catalog)", call:match("^[%w_]+"), call,
      require("gpuplan.args").shown(cat)), 0)
  end
end

-- Suggest near ids for an unknown one, the nearest first.
-- Ids are lower case: an id typed in another case (H100-SXM, the
-- datasheets' spelling) is that id, suggested alone; it found nothing
-- before.  An empty name is near nothing (it listed the first six ids).
-- An id written as Hugging Face or a paper writes it -- its separators
-- moved or dropped (llama-3.1-8b, qwen3_8b), an organisation before it
-- (meta-llama/Llama-3.1-70B) -- is that id too, suggested alone; the
-- list was the first six ids sharing three letters in alphabetical
-- order, which for llama-3.1-8b were six other Llamas without
-- llama3.1-8b.  Otherwise the candidates (a shared prefix of three, the
-- name inside an id, an id whose words begin the name, as
-- qwen2.5-72b in qwen2.5-72b-instruct, or two edits apart) are ranked:
-- an id beginning the name first (the longest), then by edits between
-- the two without separators, then by id.  An id the name begins
-- (h200-sxm for H200, mi300x for mi300) comes before those two edits
-- apart (h20), the shortest first.
local function bare(s)
  return (s:lower():gsub("^.*/", ""):gsub("[%-_%s]", ""))
end

local function suggest(tbl, name)
  local out = {}
  name = name:lower()
  for k in pairs(tbl) do
    if k:lower() == name then return { k } end
  end
  if name == "" then return out end
  local b = bare(name)
  if b ~= "" then
    local same = {}
    for k in pairs(tbl) do
      if bare(k) == b then same[#same + 1] = k end
    end
    if #same > 0 then
      table.sort(same)
      return same
    end
  end
  local key = name:sub(1, 3)
  local distance = require("gpuplan.args").distance
  local rank = {}
  for k in pairs(tbl) do
    local lk, bk = k:lower(), bare(k)
    -- a number goes on past the id's (h200 is not h20 and more)
    local begins = #bk >= 3 and b:sub(1, #bk) == bk
      and not (bk:match("%d$") and b:match("^%d", #bk + 1))
    local begun = #b >= 3 and bk:sub(1, #b) == b
    local d = distance(bk, b, math.max(#bk, #b))
    if begins or d <= 2 or lk:sub(1, #key) == key or lk:find(name, 1, true) then
      out[#out + 1] = k
      rank[k] = begins and { 0, -#bk } or begun and { 1, #bk } or { 2, d }
    end
  end
  table.sort(out, function(x, y)
    local a, c = rank[x], rank[y]
    if a[1] ~= c[1] then return a[1] < c[1] end
    if a[2] ~= c[2] then return a[2] < c[2] end
    return x < y
  end)
  while #out > 6 do table.remove(out) end
  return out
end

-- The same ranking for a name looked up in no one table (catalog show ID,
-- which searches them all): tbl is a set of ids.
M.suggest = suggest

-- cat:get("gpus", id) -> entry; raises "unknown gpu 'x' (did you mean ...)".
function methods.get(cat, kind, id)
  need_self(cat, "get(kind, id)")
  local tbl = cat[kind]
  if type(tbl) ~= "table" or not singular[kind] then unknown_kind(kind) end
  -- An id is a string: a table or a function where one goes (system =
  -- {}, nic_fabric = print) was "unknown system 'table: 0x55...'", an
  -- address, and a number was looked up as if misspelt
  if type(id) ~= "string" then
    error(string.format("%s must be an id, a string (got %s)", singular[kind],
      require("gpuplan.args").shown(id)), 0)
  end
  local e = tbl[id]
  if e then return e end
  local s = suggest(tbl, tostring(id))
  -- A model the catalog lacks (mixtral-8x22b, whose nearest is
  -- mixtral-8x7b; deepseek-r1) is one import away: "did you mean
  -- mixtral-8x7b?" alone offered another model.  Not where the id is a
  -- catalog one written otherwise (Llama-3-8B: llama3-8b alone).
  local same = #s == 1 and bare(s[1]) == bare(id)
  local import = kind == "models" and id ~= "" and not same
    and ", or import its config.json: gpuplan model import CONFIG.json --id ID > DIR/ID.lua, "
      .. "with DIR on $GPUPLAN_CATALOG" or ""
  local hint = #s > 0 and (" (did you mean " .. table.concat(s, ", ") .. "?" ..
      (import ~= "" and (" Or" .. import:sub(5)) or "") .. ")")
    or string.format(" (see 'gpuplan catalog list %s'%s)", kind, import)
  -- An id of another table (a system where a gpu goes, --gpu dgx-h100; a
  -- card as the model) or a list where one id goes (train --gpu a,b) was
  -- "unknown gpu 'dgx-h100' (see ...)", as if the id were misspelt.
  local others = {}
  for k in pairs(singular) do others[#others + 1] = k end
  table.sort(others)
  for _, k in ipairs(others) do
    if k ~= kind and type(cat[k]) == "table" and rawget(cat[k], id) ~= nil then
      local function a(w) return (w:match("^[aeiou]") and "an " or "a ") .. w end
      hint = string.format(": that is %s, not %s (see 'gpuplan catalog list %s')",
        a(singular[k]), a(singular[kind]), kind)
      break
    end
  end
  -- A Hugging Face config.json where a model id goes (model params takes
  -- one; fit, train, infer ... take catalog ids): how to make it one.
  if kind == "models" and type(id) == "string" and id:match("%.json$") then
    hint = string.format(": a config.json is imported first: gpuplan model import %s --id ID "
      .. "> DIR/ID.lua, with DIR on $GPUPLAN_CATALOG", require("gpuplan.units").oneline(id))
  end
  if type(id) == "string" and id:find(",", 1, true) and #s > 0 then
    hint = string.format(": one %s here, not a list (plan and infer compare several)",
      singular[kind])
  end
  -- An id the catalog does not have is a usage error (exit 2 on the
  -- command line, as an unknown enum value is): the user typed a name
  -- the command does not take, with the names it does take.  --gpu and
  -- --nic-fabric exited 1, as if the job could not run.
  local args = require("gpuplan.args")
  error(args.usage(string.format("unknown %s '%s'%s", singular[kind],
    require("gpuplan.units").oneline(tostring(id)), hint)), 0)
end

-- A script's own entry of kind ctor ("gpu"), given as a table where an id
-- goes (gp.train{gpu = {...}}): checked by the schema the catalog's
-- constructor checks a file's with, and returned converted ("80GiB" in
-- bytes).  A catalog entry (it carries _kind) is returned as it is.  An
-- unchecked table was priced as given: a misspelt field (mem_bww) was
-- ignored, a peak of "989TFLOPS" raised "attempt to compare number with
-- string" and a scale-up domain of 0 "attempt to divide by zero" from
-- inside gpuplan.
-- The entries checked: the catalog's and those M.entry returned (weak:
-- a set, not a reference that keeps them).  A copy of one that a script
-- edited is not one of them, though it carries _kind: it is checked
-- again (a copy of h100-sxm with memory = 0 or usable_memory = 1e15 was
-- priced as given: infer's batch went from 205 to 2048).
local checked = setmetatable({}, { __mode = "k" })

function M.entry(ctor, v)
  if type(v) ~= "table" or checked[v] then return v end
  -- the script's copy of an entry: its fields less the catalog's own
  -- bookkeeping (_kind, _file, _line, _raw ...), which no entry is
  -- written with
  local t = {}
  for k, x in pairs(v) do
    if type(k) ~= "string" or k:sub(1, 1) ~= "_" then t[k] = x end
  end
  v = t
  -- {} is neither an entry nor a list of ids (gp.infer's gpu = {...})
  if next(v) == nil then
    error(string.format("%s must be an id or a %s table (got an empty table)", ctor, ctor), 0)
  end
  schema.si = true
  local val, e = schema.check(v, schema[ctor])
  schema.si = false
  local id = type(v.id) == "string" and (" '" .. require("gpuplan.units").oneline(v.id) .. "'") or ""
  -- the cross-field check a catalog's gpu gets (check_refs)
  if val and ctor == "gpu" and val.usable_memory and val.usable_memory > val.memory then
    val, e = nil, { path = "usable_memory", msg = "larger than memory" }
  end
  -- and the engine's (check_entries: roof_device_check's "device has no
  -- compute peak"): a script's card with peak = {} was refused by train as
  -- "bf16 training needs bf16 tensor cores; gpu x has none (fp16
  -- instead)", and with precision fp16 "no peak in fp16 (give --precision
  -- bf16)", each pointing at the other; infer said "device has no compute
  -- peak", naming neither the card nor the field
  if val and ctor == "gpu" then
    local any = false
    for _, x in pairs(val.peak or {}) do
      if type(x) == "number" and x > 0 then any = true end
    end
    if not any then
      val, e = nil, { path = "peak", msg = "no compute peak (give the dense rate of each "
        .. "precision the card computes in, e.g. bf16 = \"989TFLOPS\")" }
    end
  end
  if val then
    val._kind = ctor
    checked[val] = true
    return val
  end
  error(string.format("%s%s: %s%s (the fields of a catalog %s{...}: catalog/FORMAT.md)", ctor, id,
    e.path ~= "" and ("field '" .. e.path .. "': ") or "", e.msg, ctor), 0)
end

-- Sorted ids of one table.
function methods.ids(cat, kind)
  need_self(cat, "ids(kind)")
  local out = {}
  -- as get: an unknown table raised "bad argument #1 to 'for iterator'"
  if type(cat[kind]) ~= "table" or not singular[kind] then unknown_kind(kind) end
  for k in pairs(cat[kind]) do out[#out + 1] = k end
  table.sort(out)
  return out
end

-- The GPU's achievable fractions: its own, else its arch's defaults.
-- Returns the table and where it came from ("gpu" or "arch hopper").
function methods.achievable(cat, gpu)
  need_self(cat, "achievable(gpu)")
  -- an id is the catalog's entry (the API reference's call,
  -- cat:achievable(gpu), read "h100-sxm" as a table: "attempt to
  -- concatenate a nil value (field 'arch')" from inside here)
  if type(gpu) == "string" then gpu = methods.get(cat, "gpus", gpu) end
  if type(gpu) ~= "table" then
    error("achievable: gpu must be a GPU id or entry (got " .. require("gpuplan.args").shown(gpu)
      .. ")", 2)
  end
  gpu = M.entry("gpu", gpu)
  -- the base fractions' table, as the roofline reads it: the GPU's own
  -- where it gives gemm, hbm or stream, else its arch's (a GPU whose
  -- achievable states only per-part records, as a non_tn opt-out alone)
  local a = cat.archs[gpu.arch]
  local ach = require("gpuplan.roofline").base_achievable(gpu, a)
  if ach == gpu.achievable and ach then return ach, "gpu" end
  return a and a.achievable, "arch " .. gpu.arch
end

-- Convert a price {amount, currency} to currency `to` (default: settings).
function methods.convert(cat, price, to)
  need_self(cat, "convert(price, to)")
  -- a price that is not {amount, currency} failed inside here ("attempt
  -- to index a nil value"), and a NaN amount converted to -nan.  Each
  -- part is said as it is wrong: a bad currency was quoted as the
  -- amount ("(got 3)"), a list {3, "USD"} as "(got a table)", an
  -- infinite amount converted to inf, and a table for to raised
  -- "catalog.lua:346: attempt to concatenate a table value".
  local shown = require("gpuplan.args").shown
  local function bad(what, v)
    error(string.format("convert: %s (got %s)", what, shown(v)), 0)
  end
  if type(price) ~= "table" then
    bad("price must be {amount = a number, currency = 'USD' ...}", price)
  end
  local a = price.amount
  if type(a) ~= "number" or a ~= a or a == math.huge or a == -math.huge then
    bad("price.amount must be a finite number", a)
  end
  if type(price.currency) ~= "string" then bad("price.currency must be a currency code", price.currency) end
  if to ~= nil and type(to) ~= "string" then bad("to must be a currency code", to) end
  to = to or cat.settings.currency
  local function per_usd(c)
    if c == "USD" then return 1 end
    local e = cat.currencies[c]
    if not e then
      local known = { "USD" }
      for k in pairs(cat.currencies) do known[#known + 1] = k end
      table.sort(known)
      error(string.format("convert: no exchange rate for currency '%s' (the catalog's: %s)",
        c, table.concat(known, ", ")), 0)
    end
    return e.per_usd
  end
  return a / per_usd(price.currency) * per_usd(to), to
end

-- cat:get("gpus", "h100-sxmm") from a script names the script's line.
require("gpuplan.args").api_module(methods)
local catalog_meta = { __index = methods }

-- A new, empty catalog.
local function new_catalog()
  local cat = { files = {}, settings = { currency = "USD", safety_margin = 0.10 } }
  for _, tbl in pairs(schema.kinds) do cat[tbl] = {} end
  return setmetatable(cat, catalog_meta)
end

-- Errors are records { file =, line = (or nil), msg = } while loading, so
-- that every message can be put in file and line order at the end.
local function problem(list, file, line, msg)
  list[#list + 1] = { file = file, line = line, msg = msg, seq = #list + 1 }
end

-- The text of each catalog file read (path -> source), for the line of a
-- field a problem names (set by load_file).
local sources = {}

-- The line of field fpath ("params_b", "scaleup.domain", "peak[2]") of
-- the entry whose constructor runs at line of path, or line: each key
-- ("name =") found after the one before it, from the entry's first line
-- up to the next line that opens an entry at its start ("gpu {").  An
-- entry spelt on one line, or a field it does not spell (a required one
-- missing), keeps the constructor's line.  A many-line entry's bad field
-- was said at its first line, "m.lua:1: model 'x': field 'params_b'",
-- the field some lines below.
local function field_line(path, line, fpath)
  local src = sources[path]
  if type(src) ~= "string" or type(line) ~= "number" or line < 1 or type(fpath) ~= "string"
      or fpath == "" then
    return line
  end
  -- the entry's text: from its first line to the next entry's
  local lines, n = {}, 0
  for l in (src .. "\n"):gmatch("([^\n]*)\n") do
    n = n + 1
    if n >= line then
      if n > line and l:match("^[%a_][%w_]*%s*[{(]") then break end
      lines[#lines + 1] = l
    end
  end
  local body = table.concat(lines, "\n")
  local at = 1
  for key in (fpath:gsub("%[%d+%]", "")):gmatch("[^.]+") do
    if not key:match("^[%a_][%w_]*$") then return line end
    local s2 = body:find("%f[%w_]" .. key .. "%s*=", at)
    if not s2 then return line end
    at = s2 + 1
  end
  return line + select(2, body:sub(1, at - 1):gsub("\n", ""))
end

-- A message Lua positioned in path ("path:12: msg") as line, msg.
local function split_position(path, msg)
  if msg:sub(1, #path + 1) == path .. ":" then
    local line, rest = msg:sub(#path + 2):match("^(%d+): (.*)$")
    if line then return tonumber(line), rest end
    return nil, (msg:sub(#path + 2):gsub("^%s+", ""))
  end
  return nil, msg
end

-- The message of a file that crossed the whole catalog's budget; spent
-- (see M.load) records it, so that no later file is read.
local function over_budget(spent, fmt, ...)
  spent.over = true
  return string.format(fmt, ...) .. ", the budget for all the files of the search path;"
    .. " no later file is read"
end

-- The sandbox environment file path runs in: a constructor per entry
-- kind (each checks its entry against the schema and records it in cat,
-- or appends the problem to errs), the settings and the unit helpers;
-- any other name read or written is an error.  spent counts the entries
-- against M.budget.
local function file_env(cat, path, layer, errs, spent)
  local budget = M.budget
  local env = {}

  -- Runs with the full string library (schema and units use it).  A bad
  -- entry is recorded and the file goes on, so one run reports them all.
  local function define(ctor, fields)
    local line = caller_line(path)
    if type(fields) ~= "table" then
      problem(errs, path, line, string.format("%s{...} expects a table, got a %s", ctor,
        type(fields)))
      return
    end
    local s = schema[ctor]
    local val, e = schema.check(fields, s)
    local id = type(fields.id) == "string" and fields.id or nil
    local short = id
    if short and #short > 60 then short = short:sub(1, 60) .. "..." end
    if short then short = require("gpuplan.units").oneline(short) end
    local label = ctor .. (short and " '" .. short .. "'" or "")
    if not val then
      local f = e.path ~= "" and ("field '" .. e.path .. "': ") or ""
      problem(errs, path, field_line(path, line, e.path), string.format("%s: %s%s", label, f,
        e.msg))
      -- References to it are not reported again as unknown.
      if id and schema.kinds[ctor] then cat._failed[schema.kinds[ctor]][id] = true end
      return
    end
    if ctor == "settings" then
      -- A field set twice in one directory is refused as an id defined
      -- twice there is: the second value won in silence.  A later
      -- directory overrides field by field (FORMAT.md).
      cat._settings_at = cat._settings_at or {}
      local names = {}
      for k in pairs(val) do names[#names + 1] = k end
      table.sort(names)
      for _, k in ipairs(names) do
        local at = cat._settings_at[k]
        if at and at.layer == layer then
          problem(errs, path, line, string.format("settings: field '%s' set twice in one "
            .. "directory (first at %s:%d); a later directory may override it", k,
            at.file, at.line))
          return
        end
      end
      for _, k in ipairs(names) do
        cat.settings[k] = val[k]
        cat._settings_at[k] = { file = path, line = line, layer = layer }
      end
      cat.settings._file, cat.settings._line = path, line
      return
    end
    local tbl = cat[schema.kinds[ctor]]
    local prev = tbl[val.id]
    if prev then
      if prev._layer == layer then
        problem(errs, path, line, string.format("duplicate %s (first defined at %s:%d)",
          label, prev._file, prev._line))
        return
      end
      val._overrides = { table.unpack(prev._overrides or {}) }
      table.insert(val._overrides, prev._file .. ":" .. prev._line)
    end
    val._file, val._line, val._layer, val._kind = path, line, layer, ctor
    -- The layer that first defined this id (an override keeps it): the
    -- base catalog's cards and systems stay its own when a user file
    -- redefines them (gpuplan.train.default_node).
    val._home = prev and prev._home or layer
    -- A copy: the file keeps its own table and may change it afterwards.
    val._raw = copy(fields)
    tbl[val.id] = val
    checked[val] = true
  end

  -- Constructors return nothing, so a file cannot edit a checked entry.
  local function constructor(ctor)
    return function(t, ...)
      -- gpu({...}, {...}): the second entry was dropped in silence
      if select("#", ...) > 0 then
        problem(errs, path, caller_line(path), string.format("%s{...} takes one table, got %d "
          .. "arguments (one entry a call: %s {...} %s {...})", ctor, select("#", ...) + 1,
          ctor, ctor))
        return
      end
      spent.entries = spent.entries + 1
      if spent.entries > budget.entries then
        error(string.format("%s:%d: %s", path, caller_line(path), over_budget(spent,
          "the catalog files together define more than %d entries", budget.entries)), 0)
      end
      -- The limits' checks wait while the entry is checked (spent.in_entry):
      -- the schema's check records what it catches as the entry's problem,
      -- so a limit raised inside it was a bad entry and the file went on,
      -- to be stopped again at the next check -- two errors, and gpuplan's
      -- own code cut off half way through recording an entry.  Its
      -- instructions still count; the next check after it raises.
      string_meta.__index = string_lib
      spent.in_entry = true
      local ok, e = pcall(define, ctor, t)
      spent.in_entry = false
      string_meta.__index = safe_string
      if not ok then error(e, 0) end
    end
  end

  for ctor in pairs(schema.kinds) do env[ctor] = constructor(ctor) end
  env.settings = constructor("settings")
  for k, f in pairs(helpers) do env[k] = f end
  setmetatable(env, {
    __index = function(_, k)
      error("undeclared name '" .. tostring(k) .. "' (catalog files are data: "
        .. "only constructors and unit helpers are available)", 2)
    end,
    __newindex = function(_, k)
      error("assignment to global '" .. tostring(k) .. "' (use local)", 2)
    end,
  })
  return env
end

-- The allocator's limit while a file compiles and runs: the file's own
-- (limits.bytes above what is in use) or what is left of the catalog's
-- budget, whichever is lower, and never above a limit already set.
-- Returns the limit to restore, the cap and whether the cap is the
-- catalog's (whole) rather than the file's; nothing without a limiter.
local function memory_cap(spent, budget, limits)
  local memory = config.memory
  if not memory then return end
  local old_limit, used = memory()
  local cap = used + limits.bytes
  local whole = spent.memory + budget.bytes < cap
  if whole then cap = spent.memory + budget.bytes end
  if old_limit > 0 and old_limit < cap then cap, whole = old_limit, false end
  return old_limit, cap, whole
end

-- The line and message of an error a catalog file's run raised (e, in
-- coroutine co): the file's line even when gpuplan's code raised it on
-- the file's behalf (a stack overflow found while it ran a hook).
local function run_error(path, e, co)
  local msg = type(e) == "string" and e or ("error object is a " .. type(e) .. " value")
  msg = msg:match("^[^\n]*")
  local line, rest = split_position(path, msg)
  if not line then
    rest = rest:gsub("^[^:]*lua/gpuplan/[%w_/]+%.lua:%d+: ", "")
    local l = caller_line(path, co)
    line = l > 0 and l or nil
  end
  if rest == "stack overflow" then
    rest = "stack overflow (a function that calls itself without end?)"
  end
  return line, rest
end

-- Run one file into cat.  layer: the index of its directory in the search
-- path; spent: what the files before it spent of M.budget (see M.load).
-- Appends every problem of the file to errs (records, see above): each
-- bad entry, then what stopped the file, if anything.
local function load_file(cat, path, layer, errs, spent)
  local budget = M.budget
  local src, rerr = files.read(path, "catalog")
  if not src then
    local _, msg = split_position(path, rerr)
    problem(errs, path, nil, msg)
    return
  end
  spent.source = spent.source + #src
  sources[path] = src
  spent.hashes[#spent.hashes + 1] = require("gpuplan.core").hash(src)
  if spent.source > budget.source then
    problem(errs, path, nil, over_budget(spent,
      "the catalog files together exceed %d MiB of source", budget.source // 2 ^ 20))
    return
  end
  local limits = M.limits
  local env = file_env(cat, path, layer, errs, spent)

  -- Compiling and running the file count against memory (the allocator's
  -- limit, on only while gpuplan's own code does not run) and time (the
  -- clock starts before load).  The memory limit is the file's or what is
  -- left of the catalog's budget, whichever is lower; time and
  -- instructions run on the file's clock and counter and on the
  -- catalog's.
  local memory = config.memory
  local old_limit, cap, whole_memory = memory_cap(spent, budget, limits)
  -- Nothing between limit(true) and limit(false) but the call that runs
  -- the file: no allocation of gpuplan's own may fail there.
  local function limit(on)
    if memory then memory(on and cap or old_limit) end
  end
  local t0 = os.clock()
  local function stop(line, msg)
    if msg == "not enough memory" then
      if whole_memory then
        msg = over_budget(spent,
          "the catalog files together use more than %d MiB of memory", budget.bytes // 2 ^ 20)
      else
        msg = string.format("catalog file uses too much memory (limit %d MiB)",
          limits.bytes // 2 ^ 20)
      end
    end
    problem(errs, path, line, msg)
  end
  -- Under pcall: no message handler of a caller runs on the compiler's
  -- own errors ("C stack overflow" in deeply nested code).
  local chunkname = "@" .. path
  limit(true)
  local okl, chunk, lerr = pcall(load, src, chunkname, "t", env)
  limit(false)
  src = nil
  if not okl or not chunk then
    local msg = tostring(okl and lerr or chunk):match("^[^\n]*")
    local line, rest = split_position(path, msg)
    if rest == "C stack overflow" then
      rest = "nested too deeply to compile (C stack overflow)"
    end
    return stop(line, rest)
  end
  -- A field stated twice in one entry (Lua keeps the last in silence;
  -- files.lua_duplicate).  A user's file only: the built-in catalog's are
  -- checked by the tests (tests/cli/harden81.t), and the walk costs every
  -- command some 20 ms over all of them.
  if not spent.builtin then
    local dline, dmsg = files.lua_duplicate(sources[path])
    if dline then problem(errs, path, dline, dmsg) end
  end
  local function whole_time()
    return over_budget(spent,
      "the catalog files together run more than %d instructions or %g s",
      budget.instructions, budget.seconds)
  end
  if os.clock() - spent.t0 > budget.seconds then return stop(nil, whole_time()) end
  if os.clock() - t0 > limits.seconds then
    return stop(nil, string.format("catalog file takes too long to compile (limit %g s)",
      limits.seconds))
  end
  local co = coroutine.create(chunk)
  local count, checks = 0, limits.instructions / HOOK_EVERY
  local left = (budget.instructions - spent.instructions) / HOOK_EVERY
  -- The hook's own instructions count too (it runs in the file's
  -- coroutine), so it does little: one count against the lower of the
  -- two instruction limits and one reading against the earlier of the two
  -- deadlines; over() says which was passed.  Reading the process's CPU
  -- time is a system call.  A user's file reads it at every check: 100
  -- instructions may each copy megabytes, so only a reading that close
  -- keeps the time limits to what they say.  The built-in catalog's files
  -- (spent.builtin: data shipped with gpuplan and tested, which every
  -- command loads) read it every CLOCK_EVERY checks -- a third of their
  -- loading time otherwise -- and at the very check whose count passes an
  -- instruction limit, so that limit stops a file where it did.  No check
  -- is made while a constructor checks its entry (spent.in_entry).
  local lim = math.min(left, checks)
  local tmax = math.min(spent.t0 + budget.seconds, t0 + limits.seconds)
  local function over(now)
    if count > left or now - spent.t0 > budget.seconds then
      error(string.format("%s:%d: %s", path, caller_line(path), whole_time()), 0)
    end
    if count > checks or now - t0 > limits.seconds then
      error(string.format("%s:%d: catalog file runs too long (limits: %d "
        .. "instructions, %g s)", path, caller_line(path), limits.instructions,
        limits.seconds), 0)
    end
  end
  local hook
  if spent.builtin then
    local next_at = 0
    hook = function()
      count = count + 1
      if count < next_at or spent.in_entry then return end
      next_at = math.min(count + CLOCK_EVERY, math.floor(lim) + 1)
      local now = os.clock()
      if count > lim or now > tmax then over(now) end
    end
  else
    hook = function()
      count = count + 1
      if spent.in_entry then return end
      local now = os.clock()
      if count > lim or now > tmax then over(now) end
    end
  end
  debug.sethook(co, hook, "", HOOK_EVERY)
  string_meta.__index = safe_string
  limit(true)
  local ok, e = coroutine.resume(co)
  limit(false)
  string_meta.__index = string_lib
  spent.instructions = spent.instructions + count * HOOK_EVERY
  if not ok then return stop(run_error(path, e, co)) end
  if coroutine.status(co) ~= "dead" then
    problem(errs, path, nil, "catalog files must not yield")
    return
  end
  cat.files[#cat.files + 1] = path
end

-- Paths in messages are relative to the working directory when under it.
local function display(dir)
  local cwd = lfs.currentdir()
  if cwd and dir:sub(1, #cwd + 1) == cwd .. "/" then return dir:sub(#cwd + 2) end
  return dir
end
M.display = display

-- Load every file of dir as one layer into cat; problems go to errs,
-- what was skipped to cat.warnings.
local function load_dir(cat, dir, layer, from, errs, spent)
  local list, why = list_files(display(dir))
  if not list then
    problem(errs, nil, nil, why .. (from and " (from " .. from .. ")" or ""))
    return
  end
  for _, w in ipairs(why) do cat.warnings[#cat.warnings + 1] = w end
  for _, p in ipairs(list) do
    if spent.over then return end
    spent.files = spent.files + 1
    if spent.files > M.budget.files then
      problem(errs, p, nil, over_budget(spent,
        "the search path holds more than %d catalog files", M.budget.files))
      return
    end
    load_file(cat, p, layer, errs, spent)
  end
end

local function sorted_ids(t)
  local ids = {}
  for k in pairs(t) do ids[#ids + 1] = k end
  table.sort(ids)
  return ids
end

-- Cross-references between entries, after every layer is in.  A
-- reference to an entry that failed its own checks is not reported again.
local function check_refs(cat, errs)
  -- "gpu 'id': field 'f': " and the message
  local function bad(entry, field, fmt, ...)
    problem(errs, entry._file, field_line(entry._file, entry._line, field),
      string.format("%s '%s': field '%s': ",
      entry._kind, entry.id, field) .. string.format(fmt, ...))
    entry._bad = true
  end
  local function need(entry, field, kind, value)
    if value ~= nil and not cat[kind][value] then
      if cat._failed[kind][value] then
        entry._bad = true
      else
        bad(entry, field, "unknown %s '%s'", singular[kind], value)
      end
    end
  end
  for _, k in ipairs(sorted_ids(cat.gpus)) do
    local g = cat.gpus[k]
    if g.scaleup then need(g, "scaleup.fabric", "fabrics", g.scaleup.fabric) end
    if not g.achievable and not cat.archs[g.arch] then
      if cat._failed.archs[g.arch] then g._bad = true
      else
        -- Named as the arch it is: a misspelt arch = "hoper" read "field
        -- 'achievable': missing, and no arch 'hoper' entry gives
        -- defaults", a field the file never wrote and no nearer name.
        local near = suggest(cat.archs, tostring(g.arch))
        bad(g, "arch", "no arch '%s' in the catalog%s, and the gpu has no achievable of its "
          .. "own (the fractions of its peaks an arch gives its cards)", g.arch,
          #near > 0 and (" (did you mean " .. table.concat(near, ", ") .. "?)") or "")
      end
    end
    if g.usable_memory and g.usable_memory > g.memory then
      bad(g, "usable_memory", "larger than memory")
    end
  end
  -- A fabric named for a role must be of that scope: the NVLink of a
  -- node is not its network, and gpuplan.comm prices them differently.
  local function scope(entry, field, value, want)
    local f = value ~= nil and cat.fabrics[value]
    if f and f.scope ~= want then
      -- Defined elsewhere (an override, often): say where.
      local at = f._file ~= entry._file and string.format(" (defined at %s:%d)", f._file, f._line)
        or ""
      bad(entry, field, "fabric '%s'%s has scope '%s', not '%s'", value, at, f.scope, want)
    end
  end
  for _, k in ipairs(sorted_ids(cat.gpus)) do
    local g = cat.gpus[k]
    if g.scaleup then scope(g, "scaleup.fabric", g.scaleup.fabric, "scaleup") end
  end
  -- A network is what NICs carry; NVLink-like links and PCIe join a node.
  for _, k in ipairs(sorted_ids(cat.fabrics)) do
    local f = cat.fabrics[k]
    if (f.kind == "network") ~= (f.scope == "scaleout") then
      bad(f, "kind", "'%s' does not fit scope '%s' (scaleout fabrics are kind 'network', "
          .. "scaleup ones 'nvlink' or 'pcie')", f.kind, f.scope)
    end
  end
  for _, k in ipairs(sorted_ids(cat.systems)) do
    local s = cat.systems[k]
    need(s, "gpu", "gpus", s.gpu)
    need(s, "scaleup", "fabrics", s.scaleup)
    need(s, "nic_fabric", "fabrics", s.nic_fabric)
    scope(s, "scaleup", s.scaleup, "scaleup")
    scope(s, "nic_fabric", s.nic_fabric, "scaleout")
    if s.nics > 0 and not s.nic_fabric then bad(s, "nic_fabric", "required when nics > 0") end
    -- A node of several hosts splits into whole hosts (GB200 NVL72: 18
    -- trays of 4).  host_gpus = 3 of 8 held each host's share of the DRAM
    -- at 3/8 of the node's (memory.lua host_share) for 2.67 hosts, and 16
    -- of 8 was read as 8 (only host_gpus < gpus is read), both in silence.
    if s.host_gpus and (s.host_gpus > s.gpus or s.gpus % s.host_gpus ~= 0) then
      bad(s, "host_gpus", "%d does not divide the system's %d gpus (the GPUs of one host, a "
        .. "whole number of hosts a node)", s.host_gpus, s.gpus)
    end
  end
  -- Rates are units per US dollar, so USD needs no entry: every
  -- conversion (M.convert, the range check below, prices.rate) takes 1 for
  -- USD without reading one.  currency { id = "USD", per_usd = 2 } was
  -- accepted and read by nothing -- the user's rate silently ignored, and
  -- "USD" listed twice among the catalog's currencies.
  local usd = cat.currencies.USD
  if usd then
    bad(usd, "id", "USD needs no currency entry: rates are units per US dollar, so its rate "
      .. "is 1 (got per_usd = %s); give the other currencies' units per US dollar",
      tostring(usd.per_usd))
  end
  -- The buyer's currency a settings file sets needs a rate, as a price's
  -- currency does: settings { currency = "EUR" } with no currency {}
  -- entry was refused by every command as "--currency 'EUR': no exchange
  -- rate", an option the user never gave, and no file named.
  local st = cat.settings
  if st._file and st.currency ~= "USD" and not cat.currencies[st.currency] then
    local names = { "USD" }
    for c in pairs(cat.currencies) do names[#names + 1] = c end
    table.sort(names)
    problem(errs, st._file, st._line, string.format("settings: field 'currency': no exchange "
      .. "rate in the catalog for %s (a currency {} entry gives one; the catalog has %s)",
      tostring(st.currency), table.concat(names, ", ")))
  end
  for _, k in ipairs(sorted_ids(cat.prices)) do
    local p = cat.prices[k]
    need(p, "gpu", "gpus", p.gpu)
    for _, q in ipairs { p.price, table.unpack(p.range or {}) } do
      if q.currency ~= "USD" and not cat.currencies[q.currency] then
        bad(p, "price", "no currency entry for %s", q.currency)
        break
      end
    end
    -- range is the offer's { low, high } (FORMAT.md), compared in one
    -- currency: a range given high-to-low, or of another count, is a
    -- typo a reader of the offer would take at its word.
    local r = p.range
    if r and not p._bad then
      local units = require "gpuplan.units"
      local function usd(q) return q.currency == "USD" and q.amount
        or q.amount / cat.currencies[q.currency].per_usd end
      if #r ~= 2 then
        bad(p, "range", "expected { low, high }, got %d value%s", #r, #r == 1 and "" or "s")
      elseif usd(r[1]) > usd(r[2]) then
        bad(p, "range", "low %s is above high %s (expected { low, high })",
          units.fmt(r[1], "price"), units.fmt(r[2], "price"))
      end
    end
  end
end

-- The checks the commands run on each entry, after the references: the
-- engine's (model_check through core.check "model", roof_device_check
-- through the device gpuplan.roofline builds, comm_topo_check through the
-- topologies gpuplan.comm builds for a fabric and a system) and the
-- bounds gpuplan.memory and gpuplan.infer put on what they take from an
-- entry.  A message is the engine's, after "kind 'id': ".
local function check_entries(cat, errs)
  local core = require "gpuplan.core"
  local function try(entry, f, ...)
    if entry._bad then return end
    local ok, e = pcall(f, ...)
    if not ok then
      local msg = type(e) == "table" and tostring(e.msg or e) or tostring(e)
      local label = string.format("%s '%s': ", entry._kind, entry.id)
      -- Without the position gpuplan.args gave it (the caller's line):
      -- the entry's file and line are the position here.
      msg = msg:match("^[^\n]*"):gsub("^[^%s:]+:%d+: ", "")
      if msg:sub(1, #label) == label then msg = msg:sub(#label + 1) end
      -- the binding names the engine's moe checks of a script's model
      -- table from the table ("model.moe.top_k", engine/lgp_model.c); the
      -- catalog names an entry's moe fields within it, after its label, as
      -- its schema does ("field 'moe.layer_step'")
      if entry._kind == "model" then
        msg = msg:gsub("^model%.moe%.", "moe."):gsub("^model%.params_b: ", "field 'params_b': ")
      end
      -- at the line of the field the message opens with ("field
      -- 'params_b': ...", "moe.top_k must be ...", "kv_heads (3) must
      -- divide ..."), where the entry spells it
      local field = msg:match("^field '([^']+)'") or msg:match("^([%a_][%w_.]*) ")
      -- the engine's device and link checks name the field after what
      -- they check ("device mem_bw must be ...", "device has no compute
      -- peak", "scale-up latency must be ..."): said at the entry's first
      -- line, the field some lines below
      if field == "device" then
        field = msg:match("^device has no compute peak") and "peak"
          or msg:match("^device ([%a_][%w_.]*)")
      elseif entry._kind == "fabric" then
        local w = msg:match("^scale%-%a+ (%a+) must")
        field = ({ bandwidth = "bw", latency = "latency", achievable = "achievable" })[w] or field
      end
      problem(errs, entry._file, field_line(entry._file, entry._line, field), label .. msg)
      entry._bad = true
    end
  end
  for _, k in ipairs(sorted_ids(cat.models)) do
    local m = cat.models[k]
    try(m, core.check, "model", m)
    try(m, core.model_params, m)
    -- params_b is the published total, which every command ignores: each
    -- prices the architecture the fields describe.  A stated size the
    -- fields miss by 2x or more is a wrong field (hidden 4906 for 4096, a
    -- layer count, ffn_hidden), which only the listing's params_b column
    -- showed, and it showed the published figure.  The shipped models
    -- are within 3% of it (tests/lua/models.t); a rounded published
    -- figure or a vision tower left out is far from 2x.
    try(m, function()
      local n = core.model_params(m).total / 1e9
      if n > 2 * m.params_b or n < m.params_b / 2 then
        error(string.format("field 'params_b': %.4g B, but the architecture (layers, hidden, "
          .. "heads, ffn_hidden, vocab, moe, vision) counts %.4g B: a field is wrong",
          m.params_b, n), 0)
      end
    end)
    -- active_params_b is the published share of params_b a token runs
    -- through (an MoE's routed experts and the rest): more than the total
    -- is a wrong field, which the listing printed as the model's size.
    try(m, function()
      if m.active_params_b and m.active_params_b > m.params_b then
        error(string.format("field 'active_params_b': %.4g B, more than params_b (%.4g B): "
          .. "the parameters a token runs through are a part of the total",
          m.active_params_b, m.params_b), 0)
      end
    end)
  end
  local roofline = require "gpuplan.roofline"
  -- An arch's fractions and launch overheads, as its GPUs' devices carry
  -- them (with a nominal 1 TFLOP/s and 1 TB/s, which only the GPU sets).
  -- Every attention kernel's reference length, length curve and narrow-head
  -- curve (the
  -- device carries only the kernel a command picks; --attn-kernel picks
  -- any other).
  local function attn_curves(entry, at, base)
    if not at then return end
    for _, kn in ipairs(roofline.attention_kernels) do
      local pair = at[kn]
      if pair then
        try(entry, function()
          local d = {}
          for f, v in pairs(base) do d[f] = v end
          d.attn_ref_q, d.attn_long = pair.seq, roofline.attn_long(pair, kn)
          d.attn_narrow_dim, d.attn_narrow = roofline.attn_narrow(pair, kn)
          d.attn_unmasked = roofline.attn_unmasked(pair, kn)
          core.check("device", d)
          -- each timed release's curve, as a run stating it gets it
          for _, r in ipairs(pair.releases or {}) do
            d.attn_rel = roofline.attn_release(pair, kn, r.cudnn)
            core.check("device", d)
          end
        end)
      end
    end
  end
  for _, k in ipairs(sorted_ids(cat.archs)) do
    local a = cat.archs[k]
    local base = { peak = { bf16 = 1e12 }, gemm = a.achievable.gemm,
      stream = roofline.stream(a.achievable),
      mem_bw = 1e12, hbm = a.achievable.hbm or 1, launch = a.launch_overhead,
      graph_launch = a.graph_launch_overhead or 0 }
    try(a, core.check, "device", base)
    attn_curves(a, a.achievable.attention, base)
  end
  for _, k in ipairs(sorted_ids(cat.gpus)) do
    local g = cat.gpus[k]
    try(g, function()
      local d = roofline.device(g, cat)
      core.check("device", d)
      attn_curves(g, g.achievable and g.achievable.attention,
        { peak = d.peak, gemm = d.gemm, mem_bw = d.mem_bw, hbm = d.hbm })
      -- The commands compute in 16 bits unless told (infer's bf16, else
      -- fp16): a card with no GEMM fraction for either is refused here,
      -- not by the first command ("device has no fp16 tensor compute").
      if not ((d.peak.bf16 and d.gemm.bf16) or (d.peak.fp16 and d.gemm.fp16)) then
        local _, from = cat:achievable(g)
        error(string.format("field 'achievable.gemm' (%s): no bf16 or fp16 fraction with a "
          .. "peak, the precision the commands compute in", from), 0)
      end
    end)
    if g.scaleup then
      -- The NVLink domain is the node of gpuplan.infer's TP topology.
      try(g, function()
        local f = cat.fabrics[g.scaleup.fabric]
        if f then
          core.check("topology", require("gpuplan.comm").from_fabrics(
            { scaleup = f.id, gpus_per_node = g.scaleup.domain }, cat))
        end
      end)
    end
  end
  local comm = require "gpuplan.comm"
  for _, k in ipairs(sorted_ids(cat.fabrics)) do
    local f = cat.fabrics[k]
    -- A scale-up fabric between two GPUs of a node, a scale-out one
    -- between two nodes of one GPU each.
    try(f, function()
      if f.scope == "scaleup" then
        core.check("topology", comm.from_fabrics({ scaleup = f.id, gpus_per_node = 2 }, cat))
      else
        core.check("topology", { gpus_per_node = 1, nodes = 2, nics = 1, nic_bw = f.bw,
          nic_latency = f.latency, nic_achievable = f.achievable, nic_nccl = f.nccl })
      end
    end)
  end
  for _, k in ipairs(sorted_ids(cat.systems)) do
    local s = cat.systems[k]
    try(s, function() core.check("topology", comm.topology(s, 1, nil, cat)) end)
  end
end

-- The directories of the search path, in order, and where each was named
-- (origins[i]: "GPUPLAN_CATALOG" or nil), for messages; and warnings (a
-- configuration directory that is there but not a directory).
function M.search_path()
  local dirs, origins, warnings = { config.root .. "/catalog" }, {}, {}
  local extra = os.getenv("GPUPLAN_CATALOG")
  if extra and extra ~= "" then
    for d in extra:gmatch("[^:]+") do
      dirs[#dirs + 1] = d
      origins[#dirs] = "GPUPLAN_CATALOG"
    end
  end
  local xdg = os.getenv("XDG_CONFIG_HOME")
  if not xdg or xdg == "" then
    local home = os.getenv("HOME")
    xdg = home and (home .. "/.config")
  end
  if xdg then
    local d = xdg .. "/gpuplan/catalog"
    local mode = lfs.attributes(d, "mode")
    if mode == "directory" then
      dirs[#dirs + 1] = d
    elseif lfs.symlinkattributes(d, "mode") then
      warnings[#warnings + 1] = require("gpuplan.units").oneline(string.format(
        "%s is not a directory%s (skipped)", d, mode and "" or " (a broken symbolic link)"))
    end
  end
  return dirs, origins, warnings
end

-- Load a list of directories.  Returns cat, errors (a list of strings,
-- "file:line: message", in file and line order; empty when all is well).
-- Missing user directories named in $GPUPLAN_CATALOG are errors.  origins
-- and warnings (optional): as returned by search_path.  What was skipped
-- is in cat.warnings.
function M.load(dirs, origins, warnings)
  local cat = new_catalog()
  cat._failed = {}
  for _, tbl in pairs(schema.kinds) do cat._failed[tbl] = {} end
  cat.warnings = { table.unpack(warnings or {}) }
  local errs = {}
  -- What the files have spent of M.budget so far; memory: the bytes the
  -- state held before the first file.
  local spent = { files = 0, source = 0, instructions = 0, entries = 0, t0 = os.clock(),
                  memory = config.memory and select(2, config.memory()) or 0, hashes = {} }
  local builtin = config.root and (config.root .. "/catalog")
  for i, d in ipairs(dirs) do
    if spent.over then break end
    spent.builtin = d == builtin
    load_dir(cat, d, i, origins and origins[i], errs, spent)
  end
  check_refs(cat, errs)
  check_entries(cat, errs)
  -- File order as loaded, then line, then the order found.
  local order, n = {}, 0
  for _, e in ipairs(errs) do
    if e.file and not order[e.file] then n = n + 1; order[e.file] = n end
  end
  table.sort(errs, function(a, b)
    local fa, fb = order[a.file] or 0, order[b.file] or 0
    if fa ~= fb then return fa < fb end
    if (a.line or 0) ~= (b.line or 0) then return (a.line or 0) < (b.line or 0) end
    return a.seq < b.seq
  end)
  -- out.unplaced: the indices of errors with no file of their own (a DIR
  -- that is no directory): `catalog check` gives them gpuplan's prefix,
  -- where a file's error leads with its file:line as a compiler's does
  local out = { unplaced = {} }
  for i, e in ipairs(errs) do
    out[i] = require("gpuplan.units").oneline((e.file and (e.file .. (e.line and ":" .. e.line
      or "") .. ": ") or "") .. e.msg)
    if not e.file then out.unplaced[i] = true end
  end
  cat.dirs = dirs
  -- What the catalog read, as a hash of each file's bytes in load order: a
  -- plan shard carries it, so merge can tell shards of different catalogs.
  cat.fingerprint = require("gpuplan.core").hash(table.concat(spent.hashes, " "))
  return cat, out
end

-- A catalog error as the commands raise it: a table that prints as its
-- message, so that no caller strips its file:line as if it were gpuplan's
-- own position (cli.clean) and a script's handler can tell it from a bug.
local error_meta = { __tostring = function(e) return e.msg end }
function M.error(msg) return setmetatable({ msg = msg, catalog = true }, error_meta) end

-- The first of a load's errors, and how many more there are: one line
-- of a command's (or gp.catalog{dirs = ...}'s) refusal.
function M.first_error(errs, first)
  return (first or errs[1]) .. (#errs > 1 and string.format(" (and %d more error%s: "
    .. "'gpuplan catalog check DIR' lists them)", #errs - 1, #errs > 2 and "s" or "") or "")
end

local cached

-- The catalog of the search path, loaded once.  Raises a catalog error
-- (M.error) naming the first problem's file and line; prints warnings on
-- stderr once.
function M.get()
  if cached then return cached end
  local cat, errs = M.load(M.search_path())  -- dirs, origins, warnings
  for _, w in ipairs(cat.warnings) do
    io.stdout:flush()
    io.stderr:write("gpuplan: warning: ", w, "\n")
  end
  if #errs > 0 then error(M.error(M.first_error(errs)), 0) end
  cached = cat
  return cat
end

-- Forget the cached catalog (tests, long-running scripts after edits).
function M.reset() cached = nil end

return M
