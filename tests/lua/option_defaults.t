-- Issue 20.6: the engine's defaults are the declared ones.  core.DEFAULTS
-- is what core.train takes for a field left out (engine/lgpuplan.c's
-- train_desc); lua/gpuplan/options.lua declares each option's default as
-- --help shows it.  Where the declaration is a plain value (a number, on
-- or off, a name) the engine's must be that value: a default changed on
-- one side only fails here.  Exact comparison: both are literals.
local t = require "tap"
local core = require "gpuplan.core"
local options = require "gpuplan.options"

-- The declared default of d as a value, or nil when it is prose ("from
-- --stack and --precision") or a list (plan's "1,2,4").  A table's first
-- entry is the default of most commands; the others name their own.
local function value(d)
  local v = d.default
  if type(v) == "table" then v = v[1] end
  if type(v) == "boolean" then return v end
  if type(v) ~= "string" then return nil end
  if v == "on" then return true elseif v == "off" then return false end
  if tonumber(v) then return tonumber(v) end
  if v:match("^%w[%w%-]*$") then return v end  -- not "--seq" (another option)
  return nil
end

-- The engine's fields whose option the user knows by another name or
-- whose zero means "the option's default", each with its reason.
local SAME = {
  -- gp.train's batch is the engine's micro_batch (plan's micro_batch
  -- is the list of sizes to search).
  micro_batch = { name = "batch" },
  -- 0: "not given"; the engine takes 1.0 for it (engine/act.c).
  capacity_factor = { engine = 1.0 },
  -- 0: no adapter; gpuplan.memory sets 8 for the LoRA methods only.
  lora_rank = { skip = true },
  -- the engine's is whether adapter dropout runs; the option is its rate.
  lora_dropout = { skip = true },
}

local names = {}
for k in pairs(core.DEFAULTS) do names[#names + 1] = k end
table.sort(names)
local compared = 0
for _, k in ipairs(names) do
  local s = SAME[k] or {}
  local d = not s.skip and options.get(s.name or k)
  local want = d and value(d)
  if d and want ~= nil then
    local got = s.engine or core.DEFAULTS[k]
    t.is(got, want, string.format("%s: the engine's default is the declared %s", k,
      tostring(want)))
    compared = compared + 1
  end
end
-- tp, pp, cp, ep, zero, batch, flash, recompute, tp_overlap, ep_overlap,
-- capacity_factor at least: a declaration turned to prose would quietly
-- drop out of the comparison.  (The recipe and the optimizer have no
-- engine default: core takes their catalog records, which gpuplan.memory
-- resolves from the declared names.)
t.ok(compared >= 11, "at least 11 defaults compared (got " .. compared .. ")")

t.done_testing()
