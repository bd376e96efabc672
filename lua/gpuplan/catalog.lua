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

local lfs = require "lfs"
local schema = require "gpuplan.schema"
local config = require "gpuplan.config"

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

-- Instructions between two checks of the limits.
local HOOK_EVERY = 100

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

local function read_file(path)
  local f, err = io.open(path, "rb")
  if not f then return nil, err end
  local s = f:read("a")
  f:close()
  return s
end

-- Sorted list of *.lua files under dir (recursive) and a list of problems
-- (unreadable subdirectories); nil, err if dir is not a directory.
local function list_files(dir)
  local attr = lfs.attributes(dir)
  if not attr then return nil, "no such directory: " .. dir end
  if attr.mode ~= "directory" then return nil, "not a directory: " .. dir end
  local out, problems, seen = {}, {}, {}
  local function walk(d, a)
    local key = a.dev .. ":" .. a.ino
    if seen[key] then return end
    seen[key] = true
    local ok, iter, state = pcall(lfs.dir, d)
    if not ok then
      problems[#problems + 1] = "cannot read directory " .. d .. ": " .. tostring(iter)
      return
    end
    local names = {}
    for name in iter, state do
      if name:sub(1, 1) ~= "." then names[#names + 1] = name end
    end
    table.sort(names)
    for _, name in ipairs(names) do
      local p = d .. "/" .. name
      local pa = lfs.attributes(p)
      if pa and pa.mode == "directory" then
        walk(p, pa)
      elseif pa and pa.mode == "file" and name:match("%.lua$") then
        out[#out + 1] = p
      end
    end
  end
  walk(dir, attr)
  return out, problems
end

-- The line the catalog file at path is executing, innermost first, in the
-- running coroutine or in co (also after co died of an error).
local function caller_line(path, co)
  local level = co and 0 or 2
  while true do
    local info
    if co then info = debug.getinfo(co, level, "Sl") else info = debug.getinfo(level, "Sl") end
    if not info then return 0 end
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

-- Suggest near ids (shared prefix or substring) for an unknown one.
local function suggest(tbl, name)
  local out = {}
  local key = name:sub(1, 3)
  for k in pairs(tbl) do
    if k:sub(1, #key) == key or k:find(name, 1, true) then out[#out + 1] = k end
  end
  table.sort(out)
  while #out > 6 do table.remove(out) end
  return out
end

-- cat:get("gpus", id) -> entry; raises "unknown gpu 'x' (did you mean ...)".
function methods.get(cat, kind, id)
  local tbl = cat[kind]
  if type(tbl) ~= "table" or not singular[kind] then
    error("unknown catalog table '" .. tostring(kind) .. "'", 2)
  end
  local e = tbl[id]
  if e then return e end
  local s = suggest(tbl, tostring(id))
  local hint = #s > 0 and (" (did you mean " .. table.concat(s, ", ") .. "?)")
    or string.format(" (see 'gpuplan catalog list %s')", kind)
  error(string.format("unknown %s '%s'%s", singular[kind], tostring(id), hint), 0)
end

-- Sorted ids of one table.
function methods.ids(cat, kind)
  local out = {}
  for k in pairs(cat[kind]) do out[#out + 1] = k end
  table.sort(out)
  return out
end

-- The GPU's achievable fractions: its own, else its arch's defaults.
-- Returns the table and where it came from ("gpu" or "arch hopper").
function methods.achievable(cat, gpu)
  if gpu.achievable then return gpu.achievable, "gpu" end
  local a = cat.archs[gpu.arch]
  return a and a.achievable, "arch " .. gpu.arch
end

-- Convert a price {amount, currency} to currency `to` (default: settings).
function methods.convert(cat, price, to)
  to = to or cat.settings.currency
  local function per_usd(c)
    if c == "USD" then return 1 end
    local e = cat.currencies[c]
    if not e then error("no exchange rate for currency " .. c, 0) end
    return e.per_usd
  end
  return price.amount / per_usd(price.currency) * per_usd(to), to
end

local catalog_meta = { __index = methods }

-- A new, empty catalog.
local function new_catalog()
  local cat = { files = {}, settings = { currency = "USD", safety_margin = 0.10 } }
  for _, tbl in pairs(schema.kinds) do cat[tbl] = {} end
  return setmetatable(cat, catalog_meta)
end

-- Run one file into cat.  layer: the index of its directory in the search
-- path.  Returns true or false, "file:line: message".
local function load_file(cat, path, layer)
  local src, err = read_file(path)
  if not src then return false, path .. ": cannot read: " .. tostring(err) end
  local env = {}
  local limits = M.limits

  -- Runs with the full string library (schema and units use it).
  local function define(ctor, fields)
    local line = caller_line(path)
    local where = path .. ":" .. line
    if type(fields) ~= "table" then
      error(string.format("%s: %s{...} expects a table, got a %s", where, ctor,
        type(fields)), 0)
    end
    local s = schema[ctor]
    local val, e = schema.check(fields, s)
    local id = type(fields.id) == "string" and fields.id or nil
    if id and #id > 60 then id = id:sub(1, 60) .. "..." end
    local label = ctor .. (id and " '" .. id .. "'" or "")
    if not val then
      local f = e.path ~= "" and ("field '" .. e.path .. "': ") or ""
      error(string.format("%s: %s: %s%s", where, label, f, e.msg), 0)
    end
    if ctor == "settings" then
      for k, v in pairs(val) do cat.settings[k] = v end
      cat.settings._file, cat.settings._line = path, line
      return
    end
    local tbl = cat[schema.kinds[ctor]]
    local prev = tbl[val.id]
    if prev then
      if prev._layer == layer then
        error(string.format("%s: duplicate %s (first defined at %s:%d)",
          where, label, prev._file, prev._line), 0)
      end
      val._overrides = { table.unpack(prev._overrides or {}) }
      table.insert(val._overrides, prev._file .. ":" .. prev._line)
    end
    val._file, val._line, val._layer, val._kind = path, line, layer, ctor
    -- A copy: the file keeps its own table and may change it afterwards.
    val._raw = copy(fields)
    tbl[val.id] = val
  end

  -- Constructors return nothing, so a file cannot edit a checked entry.
  local function constructor(ctor)
    return function(t)
      string_meta.__index = string_lib
      local ok, e = pcall(define, ctor, t)
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

  local chunk, lerr = load(src, "@" .. path, "t", env)
  if not chunk then
    if lerr:sub(1, #path + 1) ~= path .. ":" then lerr = path .. ": " .. lerr end
    return false, lerr
  end
  local co = coroutine.create(chunk)
  local count, checks, t0 = 0, limits.instructions / HOOK_EVERY, os.clock()
  debug.sethook(co, function()
    count = count + 1
    if count > checks or os.clock() - t0 > limits.seconds then
      error(string.format("%s:%d: catalog file runs too long (limits: %d "
        .. "instructions, %g s)", path, caller_line(path), limits.instructions,
        limits.seconds), 0)
    end
  end, "", HOOK_EVERY)
  local memory = config.memory
  local old_limit
  if memory then
    local used
    old_limit, used = memory()
    local limit = used + limits.bytes
    if old_limit > 0 and old_limit < limit then limit = old_limit end
    memory(limit)
  end
  string_meta.__index = safe_string
  local ok, e = coroutine.resume(co)
  string_meta.__index = string_lib
  if memory then memory(old_limit) end
  if not ok then
    local msg = type(e) == "string" and e or ("error object is a " .. type(e) .. " value")
    if msg == "not enough memory" then
      msg = string.format("catalog file uses too much memory (limit %d MiB)",
        limits.bytes // 2 ^ 20)
    end
    if msg:sub(1, #path + 1) ~= path .. ":" then
      local line = caller_line(path, co)
      msg = path .. (line > 0 and ":" .. line or "") .. ": " .. msg
    end
    return false, msg
  end
  if coroutine.status(co) ~= "dead" then
    return false, path .. ": catalog files must not yield"
  end
  cat.files[#cat.files + 1] = path
  return true
end

-- Paths in messages are relative to the working directory when under it.
local function display(dir)
  local cwd = lfs.currentdir()
  if cwd and dir:sub(1, #cwd + 1) == cwd .. "/" then return dir:sub(#cwd + 2) end
  return dir
end

-- Load every file of dir as one layer.  Returns a list of error strings.
local function load_dir(cat, dir, layer, from)
  local files, problems = list_files(display(dir))
  if not files then
    return { problems .. (from and " (from " .. from .. ")" or "") }
  end
  local errs = problems
  for _, p in ipairs(files) do
    local ok, e = load_file(cat, p, layer)
    if not ok then errs[#errs + 1] = e end
  end
  return errs
end

-- Cross-references between entries, after every layer is in.
local function check_refs(cat)
  local errs = {}
  -- "file:line: gpu 'id': field 'f': " and the message
  local function bad(entry, field, fmt, ...)
    errs[#errs + 1] = string.format("%s:%d: %s '%s': field '%s': ", entry._file, entry._line,
                                    entry._kind, entry.id, field) .. string.format(fmt, ...)
  end
  local function need(entry, field, kind, value)
    if value ~= nil and not cat[kind][value] then
      bad(entry, field, "unknown %s '%s'", singular[kind], value)
    end
  end
  local function sorted(t)
    local ids = {}
    for k in pairs(t) do ids[#ids + 1] = k end
    table.sort(ids)
    return ids
  end
  for _, k in ipairs(sorted(cat.gpus)) do
    local g = cat.gpus[k]
    if g.scaleup then need(g, "scaleup.fabric", "fabrics", g.scaleup.fabric) end
    if not g.achievable and not cat.archs[g.arch] then
      bad(g, "achievable", "missing, and no arch '%s' entry gives defaults", g.arch)
    end
    if g.usable_memory and g.usable_memory > g.memory then
      bad(g, "usable_memory", "larger than memory")
    end
  end
  for _, k in ipairs(sorted(cat.systems)) do
    local s = cat.systems[k]
    need(s, "gpu", "gpus", s.gpu)
    need(s, "scaleup", "fabrics", s.scaleup)
    need(s, "nic_fabric", "fabrics", s.nic_fabric)
    if s.nics > 0 and not s.nic_fabric then bad(s, "nic_fabric", "required when nics > 0") end
  end
  for _, k in ipairs(sorted(cat.prices)) do
    local p = cat.prices[k]
    need(p, "gpu", "gpus", p.gpu)
    if p.price.currency ~= "USD" and not cat.currencies[p.price.currency] then
      bad(p, "price", "no currency entry for %s", p.price.currency)
    end
  end
  return errs
end

-- The directories of the search path, in order, and where each was named
-- (origins[i]: "GPUPLAN_CATALOG" or nil), for messages.
function M.search_path()
  local dirs, origins = { config.root .. "/catalog" }, {}
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
    if lfs.attributes(d, "mode") == "directory" then dirs[#dirs + 1] = d end
  end
  return dirs, origins
end

-- Load a list of directories.  Returns cat, errors (a list; empty when all
-- is well).  Missing user directories named in $GPUPLAN_CATALOG are errors.
-- origins (optional): as returned by search_path.
function M.load(dirs, origins)
  local cat = new_catalog()
  local errs = {}
  for i, d in ipairs(dirs) do
    for _, e in ipairs(load_dir(cat, d, i, origins and origins[i])) do
      errs[#errs + 1] = e
    end
  end
  if #errs == 0 then
    for _, e in ipairs(check_refs(cat)) do errs[#errs + 1] = e end
  end
  cat.dirs = dirs
  return cat, errs
end

local cached

-- The catalog of the search path, loaded once.  Raises on any error.
function M.get()
  if cached then return cached end
  local cat, errs = M.load(M.search_path())  -- dirs, origins
  if #errs > 0 then
    error(errs[1] .. (#errs > 1 and string.format(" (and %d more errors)", #errs - 1) or ""), 0)
  end
  cached = cat
  return cat
end

-- Forget the cached catalog (tests, long-running scripts after edits).
function M.reset() cached = nil end

return M
