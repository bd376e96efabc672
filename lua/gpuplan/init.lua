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

local gp = {
  version = config.version,
  units = units,
  KB = units.KB, MB = units.MB, GB = units.GB, TB = units.TB,
  KiB = units.KiB, MiB = units.MiB, GiB = units.GiB, TiB = units.TiB,
}

-- The catalog of the search path (cached).  gp.catalog{dirs = {...}} loads
-- exactly those directories instead, uncached, raising on the first error.
function gp.catalog(opts)
  if opts and opts.dirs then
    local cat, errs = catalog.load(opts.dirs)
    if #errs > 0 then error(errs[1], 0) end
    return cat
  end
  return catalog.get()
end

function gp.parse(s, kind) return units.parse(s, kind) end

-- gp.report(rows, opts): print rows (text/markdown/csv/json) to stdout.
function gp.report(rows, opts) return report.print(rows, opts) end
gp.render = report.render
gp.json = report.json

-- Where a lazily loaded name lives when it is not gpuplan.<name>.
local aliases = { model_from_hf = "gpuplan.hf" }

local core
function gp.core()
  core = core or require "gpuplan.core"
  return core
end

-- Parameter counts of a model (id or table), in elements.
function gp.params(model)
  if type(model) == "string" then model = gp.catalog():get("models", model) end
  return gp.core().model_params(model)
end

return setmetatable(gp, {
  __index = function(t, k)
    if type(k) ~= "string" or not k:match("^[%a_][%w_]*$") then return nil end
    local modname = aliases[k] or ("gpuplan." .. k)
    local ok, mod = pcall(require, modname)
    if not ok then
      if tostring(mod):find("module '" .. modname .. "' not found", 1, true) then
        return nil
      end
      error(mod, 2)
    end
    local v = mod
    if type(mod) == "table" and mod[k] ~= nil then v = mod[k] end
    rawset(t, k, v)
    return v
  end,
})
