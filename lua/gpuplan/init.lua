-- gpuplan: the module scripts require.
--
--   local gp  = require "gpuplan"
--   local cat = gp.catalog()                 -- the search path, loaded once
--   local m   = cat:get("models", "llama2-7b")
--   gp.report(rows, { format = "markdown", columns = {...} })
--
-- Capabilities live in their own modules and are reached lazily:
-- gp.memory, gp.infer, gp.comm, gp.roofline, gp.model_from_hf ... each is
-- the function of that name in lua/gpuplan/<name>.lua (or in the module
-- listed in `aliases`).

local config = require "gpuplan.config"
local units = require "gpuplan.units"
local report = require "gpuplan.report"
local catalog = require "gpuplan.catalog"

-- The API's module tables (gpuplan.api MODULES: gp.units, gp.prices,
-- gp.policy ...) are copies whose functions name the script's line, as
-- the planners do (gpuplan.args api).  The modules themselves stay
-- unwrapped for gpuplan's own callers.  gp.units.fmt("x") named
-- units.lua:266, and gp.prices' and gp.vlm's errors under pcall no line.
local MODULES = {}
for _, m in ipairs(require("gpuplan.api").MODULES) do MODULES[m[1]:match("^gp%.(.+)$")] = true end
-- The functions declared to take one table of options (gpuplan.api's
-- call "gp.train{...}"): a second argument was dropped in silence, so
-- gp.train({...}, {gpus = 4}) priced one GPU.  It is refused, at the
-- script's line (a tail call: the position the function names is the
-- caller's, as without the check).
local ONE_TABLE = {}
for _, f in ipairs(require("gpuplan.api").FUNCTIONS) do
  if f.call:match("^gp[%w_.]*{") then ONE_TABLE[f.name] = true end
end
-- An options table that inherits (setmetatable(o, {__index = base})):
-- its keys and its chain's, nearest first, as one plain table.  gp.sweep
-- and gp.rl copied the table by pairs and lost what it inherited (a base's
-- gpus = 64 searched 8 GPUs; zero = 3 priced ZeRO 0), while gp.train,
-- gp.infer and gp.memory read it through __index -- and no planner
-- checked an inherited key's name (tpp = 2 was ignored).  An __index
-- function, whose keys cannot be listed, stays the copy's __index.
-- Always a copy, never the caller's table: the resolve step writes the
-- values it reads in either case back into the options it was given
-- (gpuplan.options M.resolve: weights = "FP8" as "fp8"), so after
-- gp.infer(o) a script's o.weights read "fp8" where it wrote "FP8".
local function flattened(o)
  local mt = getmetatable(o)
  if mt == nil then
    local t = {}
    for k, v in pairs(o) do t[k] = v end
    return t
  end
  local t, seen, at, owner = {}, {}, o, o
  while type(at) == "table" and not seen[at] do
    seen[at] = true
    for k, v in pairs(at) do if t[k] == nil then t[k] = v end end
    local m = getmetatable(at)
    owner, at = at, type(m) == "table" and rawget(m, "__index") or nil
  end
  if type(at) == "function" then
    -- gp.sweep and gp.rl copy their options by pairs, which cannot list
    -- a function's keys: a proxy's gpu or model was "required".  Each
    -- declared option the chain does not hold is asked of the function
    -- (as gp.train's reads do, o.name), so every planner sees the same.
    local f = at
    setmetatable(t, { __index = function(_, k) return f(owner, k) end })
    for _, d in ipairs(require("gpuplan.options").list) do
      if rawget(t, d.name) == nil then
        local v = at(owner, d.name)
        if v ~= nil then t[d.name] = v end
      end
    end
  end
  return t
end

-- The planners whose job a system names (gpuplan.options gpu_of_system):
-- given system and no gpu, the system's card.
local BY_SYSTEM = { ["gp.train"] = true, ["gp.train_job"] = true, ["gp.memory"] = true,
  ["gp.sweep"] = true, ["gp.rl"] = true, ["gp.rl_job"] = true, ["gp.infer"] = true,
  ["gp.infer_plan"] = true }

local function one_table(name, f)
  if type(f) ~= "function" or not ONE_TABLE[name] then return f end
  return function(...)
    local n = select("#", ...)
    if n > 1 then
      -- the first line of a script up the stack (pcall's caller too)
      error(require("gpuplan.args").where(1) .. string.format(
        "%s: takes one table of options (%s{...}), got %d arguments",
        name:gsub("^gp%.", ""), name, n), 0)
    end
    local o = ...
    if type(o) == "table" then
      o = flattened(o)
      if BY_SYSTEM[name] then require("gpuplan.options").gpu_of_system(o) end
      return f(o)
    end
    return f(...)
  end
end

-- Checks the API's copy of a module makes where the module's own
-- function serves gpuplan's callers too.  gp.prices.buyer(cat, o) reads
-- o.currency, o.market and o.price from whatever o holds, as the planners
-- hand it their whole options: from a script, {currancy = "CNY"} bought
-- in the catalog's currency in silence (gp.prices.cheapest names such a
-- key).
local API_CHECKS = {
  ["gp.prices"] = function(w)
    local buyer = w.buyer
    w.buyer = function(cat, o, who)
      if type(o) == "table" then
        require("gpuplan.args").check_keys(o, { "currency", "market", "price" },
          (who or "prices.buyer") .. ": o", 1)
      end
      return buyer(cat, o, who)
    end
  end,
}

local function api_copy(v, name)
  local w = {}
  for k, f in pairs(v) do w[k] = f end
  if API_CHECKS[name] then API_CHECKS[name](w) end
  require("gpuplan.args").api_module(w)
  for k, f in pairs(w) do w[k] = one_table(name .. "." .. k, f) end
  return w
end

-- gp.units' amount_fmt and duration_unit take any value for their
-- number, as gpuplan's own callers rely on (a missing figure formats as
-- its base): from a script, gp.units.duration_unit("3") answered 1,
-- "days" and gp.units.amount_fmt({}) "%.0f", a wrong argument taken in
-- silence.  The API's copies refuse what is not a number (NaN stays a
-- number: its format is the one units.fmt spells "nan" with).
local function units_api()
  local u = {}
  for k, f in pairs(units) do u[k] = f end
  local shown = require("gpuplan.args").shown
  local function need(who, name, v)
    if type(v) ~= "number" then
      error(string.format("units.%s: %s must be a number (got %s)", who, name, shown(v)), 0)
    end
  end
  function u.amount_fmt(x, min_dec)
    need("amount_fmt", "x", x)
    return units.amount_fmt(x, min_dec)
  end
  function u.duration_unit(days)
    need("duration_unit", "days", days)
    return units.duration_unit(days)
  end
  return u
end

local gp = {
  version = config.version,
  units = api_copy(units_api(), "gp.units"),
  KB = units.KB, MB = units.MB, GB = units.GB, TB = units.TB,
  KiB = units.KiB, MiB = units.MiB, GiB = units.GiB, TiB = units.TiB,
}

-- The catalog of the search path (cached).  gp.catalog{dirs = {...}} loads
-- exactly those directories instead, uncached, raising on the first error.
function gp.catalog(opts, ...)
  -- an argument past the one table was dropped in silence (gp.catalog's
  -- call is not gp.X{...}, whose wrapper counts them)
  if select("#", ...) > 0 then
    error(string.format("catalog: takes nothing or one table ({dirs = {...}}), got %d "
      .. "arguments", 1 + select("#", ...)), 2)
  end
  if opts ~= nil then
    if type(opts) ~= "table" then error("catalog: expected nothing or {dirs = {...}}", 2) end
    require("gpuplan.args").check_keys(opts, { "dirs" }, "catalog")
    -- a string was taken for an empty list (a catalog of nothing, in
    -- silence) and a number inside raised at a line of catalog.lua
    local dirs, shown = opts.dirs, require("gpuplan.args").shown
    if dirs ~= nil and type(dirs) ~= "table" then
      error("catalog: dirs must be a list of directories (got " .. shown(dirs) .. ")", 2)
    end
    for i, d in ipairs(dirs or {}) do
      if type(d) ~= "string" then
        error(string.format("catalog: dirs[%d] must be a directory path (got %s)", i, shown(d)), 2)
      end
    end
  end
  if opts and opts.dirs then
    local cat, errs = catalog.load(opts.dirs)
    if #errs > 0 then
      -- a file's problem names its file:line; a directory that is not
      -- there named nothing ("no such directory: x"): the script's line
      local msg = errs[1]
      if not msg:match("^[^%s:]+:%d+: ") then
        msg = require("gpuplan.args").where(1) .. "catalog: dirs: " .. msg
      end
      -- the others counted, as the CLI counts them: a team's catalog
      -- directory with five bad entries showed one, and no word of more
      msg = catalog.first_error(errs, msg)
      -- A directory of prices for the built-in cards, loaded alone: every
      -- reference was "unknown gpu 'h100-sxm'", and the hint to run
      -- `catalog check DIR` (which loads DIR on the built-in catalog)
      -- answered "ok".  Said what dirs does and how to add to the built-in.
      local builtin = config.root and (config.root .. "/catalog")
      local has_builtin = false
      for _, d in ipairs(opts.dirs) do
        if d == builtin or d:gsub("/+$", "") == builtin then has_builtin = true end
      end
      local unknown = false
      for _, e in ipairs(errs) do
        if tostring(e):match(": unknown %a+ '") then unknown = true end
      end
      if unknown and not has_builtin then
        msg = msg .. "; gp.catalog{dirs = ...} loads exactly those directories, without the "
          .. "built-in catalog: to add yours to it, list it first" .. (builtin and (" ('"
          .. builtin .. "')") or "") .. " or set GPUPLAN_CATALOG=DIR and call gp.catalog()"
      end
      error(catalog.error(msg), 0)
    end
    return cat
  end
  return catalog.get()
end

function gp.parse(s, kind) return units.parse(s, kind) end

-- gp.report(rows, opts): print rows (text/markdown/csv/json) to stdout.
function gp.report(rows, opts) return report.print(rows, opts) end
gp.render = report.render
gp.json = report.json

-- Script parameters declared as data (after sysbench's option tables):
--   local p = gp.options({ gpus = {"GPU count", 8}, gpu = {"GPU id", "h100-sxm"},
--                          dry = {"only print the plan", false} }, arg)
-- The type comes from the default (integer, number, string, boolean flag);
-- --help prints the parameters and exits 0; an unknown or ill-typed option
-- is a usage error (exit 2) naming the argument.
function gp.options(params, argv)
  local cli = require "gpuplan.cli"
  local shown = require("gpuplan.args").shown
  -- before, a non-table raised inside gpuplan ("init.lua:67: attempt to
  -- index a number value (local 'argv')")
  if type(params) ~= "table" then
    error("gp.options: params must be a table {name = {description, default}} (got "
          .. shown(params) .. ")", 2)
  end
  if argv ~= nil and type(argv) ~= "table" then
    error("gp.options: arg must be the script's arg table (got " .. shown(argv) .. ")", 2)
  end
  -- the script's arguments are strings (a number in arg raised
  -- "cli.lua:95: attempt to index a number value" from inside gpuplan)
  for i, x in ipairs(argv or {}) do
    if type(x) ~= "string" then
      error(string.format("gp.options: arg[%d] must be a string, as the command line's are (got %s)",
        i, shown(x)), 2)
    end
  end
  local spec, names = {}, {}
  for name, p in pairs(params) do
    -- a name no command line can give (a number, "bad name") or a
    -- default no option can carry (a table, a function: returned as it
    -- was, while --n x gave a string) was taken in silence
    if type(name) ~= "string" or not name:match("^[%a][%w_]*$") then
      error(string.format("gp.options: parameter name %s must be a word (letters, digits, _)",
        type(name) == "string" and ("'" .. name .. "'") or shown(name)), 2)
    end
    if type(p) ~= "table" or type(p[1]) ~= "string" then
      error(string.format("gp.options: parameter '%s' must be {description, default}",
        tostring(name)), 2)
    end
    -- {description, default} and nothing else: a field beside them
    -- ({"count", 1, type = "int"}, a third entry) was read by nothing
    for k in pairs(p) do
      if k ~= 1 and k ~= 2 then
        error(string.format("gp.options: parameter '%s': unknown field %s (a parameter is "
          .. "{description, default})", name, type(k) == "string" and ("'" .. k .. "'")
          or shown(k)), 2)
      end
    end
    local d = p[2]
    if d ~= nil and type(d) ~= "number" and type(d) ~= "string" and type(d) ~= "boolean" then
      error(string.format("gp.options: parameter '%s': default must be a number, a string or "
        .. "a boolean (got %s)", name, shown(d)), 2)
    end
    spec[name] = math.type(d) == "integer" and "int" or type(d) == "number" and "number"
      or type(d) == "boolean" and "flag" or "string"
    names[#names + 1] = name
  end
  table.sort(names)
  local script = argv and argv[0] or "script"
  -- an unknown option names the nearest parameter: cli.parse's own hint
  -- (the nearest of spec's names, which are the parameters)
  local opts, rest = cli.parse(script, spec, argv or {}, 1)
  if opts.help then
    -- the default guide (cli.lua runs it named "guide") is `gpuplan
    -- guide`: "gpuplan run guide" was no command that runs it
    io.stdout:write(script == "guide" and "usage: gpuplan guide [options]\n"
      or ("usage: gpuplan run " .. script .. " [options]\n"))
    for _, n in ipairs(names) do
      local opt = n:gsub("_", "-")
      if params[n][2] == true then opt = "[no-]" .. opt end
      -- a default as it is typed back: tostring(2e11) is
      -- "200000000000.0", a float's ".0" that no count has, and an empty
      -- string printed "(default: )"
      local d = params[n][2]
      local said = math.type(d) == "float" and string.format("%.15g", d)
        or d == "" and "''" or tostring(d)
      io.stdout:write(string.format("  --%-16s %s (default: %s)\n", opt, params[n][1], said))
    end
    os.exit(0)
  end
  local out = {}
  for _, n in ipairs(names) do
    if opts[n] == nil then out[n] = params[n][2] else out[n] = opts[n] end
  end
  -- A format parameter whose default is an output format is gp.report's:
  -- another value is refused here, naming --format, before the script
  -- prices anything (--format xml failed after the work, at the script's
  -- gp.report line: "a100_vs_h200.lua:81: unknown format 'xml'", exit 1).
  local formats = report.formats
  if spec.format == "string" and formats[params.format[2]] and not formats[out.format] then
    error(cli.usage(string.format("%s: --format must be text, markdown, csv or json (got '%s')",
      script, tostring(out.format))), 0)
  end
  out[0] = rest
  return out
end

-- Where a lazily loaded name lives when it is not gpuplan.<name>.
local aliases = { model_from_hf = "gpuplan.hf", policy = "gpuplan.sweep",
                  infer_plan = "gpuplan.serve", train_job = "gpuplan.train",
                  rl_job = "gpuplan.rl" }

local core
function gp.core()
  core = core or require "gpuplan.core"
  return core
end

-- Parameter counts of a model (id or table), in elements.
function gp.params(model)
  if type(model) == "string" then model = gp.catalog():get("models", model) end
  -- nil or a number raised the binding's "bad argument #1 to
  -- 'model_params' (table expected, got nil)", a name the script never wrote
  if type(model) ~= "table" then
    error("params: model must be a catalog model id or a model table (got "
      .. require("gpuplan.args").shown(model) .. ")", 2)
  end
  -- Counts are whole numbers: integers, as Lua prints them (the engine's
  -- doubles read total = 8030261248.0 for llama3-8b); a count that is
  -- not whole (none the engine gives) stays as it is.
  local out = gp.core().model_params(model)
  for k, v in pairs(out) do
    if math.type(v) == "float" then out[k] = math.tointeger(v) or v end
  end
  return out
end

-- A misuse found anywhere inside names the caller's line (gpuplan.args).
for _, k in ipairs { "catalog", "parse", "report", "options", "params" } do
  gp[k] = require("gpuplan.args").api(gp[k])
end

return setmetatable(gp, {
  __index = function(t, k)
    if type(k) ~= "string" or not k:match("^[%a_][%w_]*$") then return nil end
    local modname = aliases[k] or ("gpuplan." .. k)
    local ok, mod = pcall(require, modname)
    if not ok then
      -- A name gpuplan does not have, called: "attempt to call a nil
      -- value (field 'plan')", which named nothing to call instead
      -- (gp.plan for the CLI's plan is gp.sweep, gp.fit for its fit
      -- gp.memory: gp.fit listed every function, gp.memory among 18).
      -- Refused at the script's line with the nearest function, or the list.
      if tostring(mod):find("module '" .. modname .. "' not found", 1, true) then
        local names, said = {}, { plan = "sweep", fit = "memory" }
        for _, f in ipairs(require("gpuplan.api").FUNCTIONS) do
          local n = f.name:match("^gp%.([%w_]+)$")
          if n then names[#names + 1] = n end
        end
        local near = said[k] or require("gpuplan.args").nearest(k, names)
        error(string.format("gp.%s: gpuplan has no such function or module (%s)", k,
          near and ("did you mean gp." .. near .. "?")
            or ("its functions: gp." .. table.concat(names, ", gp."))), 2)
      end
      error(mod, 2)
    end
    local v = mod
    if type(mod) == "table" and mod[k] ~= nil then v = mod[k] end
    if MODULES[k] and type(v) == "table" then v = api_copy(v, "gp." .. k) end
    v = one_table("gp." .. k, v)
    rawset(t, k, v)
    return v
  end,
})
