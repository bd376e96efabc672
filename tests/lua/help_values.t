-- Every option declared with a closed list of values (options.lua
-- `values`) names each value in its --help line (the metavar, the help
-- text or the default), for every command that takes it: docs/cli.md and
-- the man page are that text, so a value missing there is a value the
-- reference never names.  (--moe-flex-backend's help named its default,
-- deepep, and "HybridEP's README", never the value hybridep.)
local t = require "tap"
local options = require "gpuplan.options"

local checked = 0
for _, cmd in ipairs(options.COMMANDS) do
  for _, d in ipairs(options.list) do
    -- a command whose variant takes a flag (rl's --ema: DeepSpeed-Chat's
    -- switch, where train's --ema is none|gpu|cpu) takes no value there
    local v = d.variants and d.variants[cmd]
    if d.values and d.cli_set and d.cli_set[cmd] and not (v and v.type == "flag") then
      local flag, metavar, text = options.describe(d, cmd)
      local line = (metavar or "") .. " " .. text
      local missing = {}
      for _, v in ipairs(d.values) do
        -- the value as a word: "flex" is not found inside "flexible"
        local pat = "%f[%w_]" .. v:gsub("%p", "%%%0") .. "%f[^%w_]"
        if not line:find(pat) then missing[#missing + 1] = v end
      end
      t.is(table.concat(missing, ", "), "", cmd .. " " .. flag .. ": --help names each value")
      checked = checked + 1
    end
  end
end
-- The declarations with values are found at all (a renamed field would
-- leave nothing to check and the test passing in silence).
t.ok(checked >= 16, "checked " .. checked .. " option lines with declared values")
t.done_testing()
