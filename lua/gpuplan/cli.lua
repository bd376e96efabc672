-- gpuplan.cli: the command line.  main(argv) -> exit code.
--
-- Subcommands live in lua/gpuplan/cmd/<name>.lua, each returning
--   { summary = "...", usage = "...", options = { name = type, ... },
--     run = function(opts, args) -> exit code }
-- with option types string, int, number, flag, format.  `--sweep-batch`
-- arrives as opts.sweep_batch.  Exit codes: 0 ok, 1 error (a one-line
-- message naming the file:line or the argument), 2 usage.

local config = require "gpuplan.config"

local M = {}

-- An error object for a usage problem: error(cli.usage("..."), 0) -> exit 2.
function M.usage(msg) return { usage = true, msg = msg } end

-- An error object for a user-facing failure: exit 1, no traceback.
function M.fail(msg) return { msg = msg } end

local builtin = { "run", "catalog", "validate", "model", "fit", "infer",
                  "roofline", "comm", "train", "rl", "sweep", "merge" }

local function load_cmd(name)
  if not name:match("^[%a_][%w_]*$") then return nil end
  local ok, mod = pcall(require, "gpuplan.cmd." .. name)
  if ok then return mod end
  -- A missing command module is "unknown command"; a broken one is a bug
  -- that must show its own error.
  if type(mod) == "string" and mod:find("module 'gpuplan.cmd." .. name .. "' not found", 1, true) then
    return nil
  end
  error(mod, 0)
end

local function help_text()
  local out = {
    "usage: gpuplan [COMMAND] [ARGS...]",
    "",
    "Plans large-model GPU jobs before you rent them: does it fit, how fast,",
    "which layout, how long, what it costs.  Without a command, runs the",
    "default guide (scripts/guide.lua).",
    "",
    "commands:",
  }
  local rows = {}
  for _, name in ipairs(builtin) do
    local mod = load_cmd(name)
    if mod then rows[#rows + 1] = string.format("  %-10s %s", name, mod.summary or "") end
  end
  for _, r in ipairs(rows) do out[#out + 1] = r end
  out[#out + 1] = ""
  out[#out + 1] = "common options: --format text|markdown|csv|json, --help, --version"
  out[#out + 1] = "'gpuplan COMMAND --help' describes one command."
  return table.concat(out, "\n") .. "\n"
end

local formats = { text = true, markdown = true, csv = true, json = true }

-- Parse argv[first..] against a command's option table.
-- Returns opts, args or raises a usage error.
function M.parse(cmdname, spec, argv, first)
  local opts, args = {}, {}
  local i = first or 1
  local only_args = false
  while i <= #argv do
    local a = argv[i]
    if only_args or a == "-" or a:sub(1, 1) ~= "-" then
      args[#args + 1] = a
    elseif a == "--" then
      only_args = true
    elseif a == "-h" or a == "--help" then
      opts.help = true
    else
      local name, value = a:match("^%-%-([%w][%w%-]*)=(.*)$")
      if not name then name = a:match("^%-%-([%w][%w%-]*)$") end
      if not name then error(M.usage(string.format("%s: bad option '%s'", cmdname, a)), 0) end
      local key = name:gsub("%-", "_")
      local ty = spec[key]
      if not ty then error(M.usage(string.format("%s: unknown option '--%s'", cmdname, name)), 0) end
      if ty == "flag" then
        if value then error(M.usage(string.format("%s: option '--%s' takes no value", cmdname, name)), 0) end
        opts[key] = true
      else
        if not value then
          i = i + 1
          value = argv[i]
          if value == nil then
            error(M.usage(string.format("%s: option '--%s' needs a value", cmdname, name)), 0)
          end
        end
        local v = value
        if ty == "int" then
          v = math.tointeger(tonumber(value))
          if not v then error(M.usage(string.format("%s: option '--%s' expects an integer, got '%s'", cmdname, name, value)), 0) end
        elseif ty == "number" then
          v = tonumber(value)
          if not v or v ~= v or v == math.huge or v == -math.huge then
            error(M.usage(string.format("%s: option '--%s' expects a number, got '%s'", cmdname, name, value)), 0)
          end
        elseif ty == "format" then
          if not formats[value] then
            error(M.usage(string.format("%s: option '--%s' expects text, markdown, csv or json, got '%s'", cmdname, name, value)), 0)
          end
        elseif ty ~= "string" then
          error(string.format("%s: option '--%s' has unknown type '%s' in its spec", cmdname, name, tostring(ty)), 0)
        end
        opts[key] = v
      end
    end
    i = i + 1
  end
  return opts, args
end

-- Turn any error value into (message, exit code, traceback-or-nil).
local function classify(e)
  if type(e) == "table" then
    return tostring(e.msg), e.usage and 2 or 1
  end
  local s = tostring(e)
  local first, rest = s:match("^([^\n]*)\n(.*)$")
  return first or s, 1, rest
end

local function report_error(e, usage_text)
  local msg, code, tb = classify(e)
  io.stderr:write("gpuplan: ", msg, "\n")
  if code == 2 and usage_text then io.stderr:write(usage_text, "\n") end
  if tb and os.getenv("GPUPLAN_DEBUG") then io.stderr:write(tb, "\n") end
  return code
end

-- gpuplan run FILE.lua [args...]: a script with `arg` set, traceback on error.
function M.run_script(path, args)
  local f = io.open(path, "rb")
  if not f then
    error(M.fail(string.format("cannot open script '%s'", path)), 0)
  end
  f:close()
  local chunk, err = loadfile(path)
  if not chunk then error(M.fail(err), 0) end
  local dir = path:match("^(.*)/[^/]*$") or "."
  package.path = dir .. "/?.lua;" .. package.path
  local argt = { [0] = path }
  for i, a in ipairs(args) do argt[i] = a end
  _G.arg = argt
  local ok, res = xpcall(chunk, function(m)
    if type(m) == "table" then return m end
    return debug.traceback(tostring(m), 2)
  end, table.unpack(args))
  if not ok then
    if type(res) == "table" then error(res, 0) end
    local first, tb = tostring(res):match("^([^\n]*)\n?(.*)$")
    io.stderr:write("gpuplan: ", first, "\n")
    if tb and tb ~= "" then io.stderr:write(tb, "\n") end
    return 1
  end
  return math.tointeger(res) or 0
end

local function dispatch(argv)
  local name = argv[1]
  if name == nil then
    return M.run_script(config.root .. "/scripts/guide.lua", {})
  end
  if name == "--help" or name == "-h" or name == "help" then
    if name == "help" and argv[2] then
      local mod = load_cmd(argv[2])
      if mod then io.stdout:write(mod.usage or "", "\n") return 0 end
    end
    io.stdout:write(help_text())
    return 0
  end
  if name == "--version" or name == "-V" then
    io.stdout:write("gpuplan ", config.version, "\n")
    return 0
  end
  if name == "run" then
    if argv[2] == nil then error(M.usage("run: missing script (gpuplan run FILE.lua [args...])"), 0) end
    if argv[2] == "--help" or argv[2] == "-h" then
      io.stdout:write("usage: gpuplan run FILE.lua [ARGS...]\n")
      return 0
    end
    local rest = {}
    for i = 3, #argv do rest[#rest + 1] = argv[i] end
    return M.run_script(argv[2], rest)
  end
  -- A script path as the first argument: `#!/usr/bin/env gpuplan` lines.
  if name:match("%.lua$") or name:find("/", 1, true) then
    local rest = {}
    for i = 2, #argv do rest[#rest + 1] = argv[i] end
    return M.run_script(name, rest)
  end
  local mod = load_cmd(name)
  if not mod then
    error(M.usage(string.format("unknown command '%s' (see 'gpuplan --help')", name)), 0)
  end
  local ok, opts, args = pcall(M.parse, name, mod.options or {}, argv, 2)
  if not ok then return report_error(opts, mod.usage) end
  if opts.help then
    io.stdout:write(mod.usage or ("usage: gpuplan " .. name), "\n")
    return 0
  end
  local rok, res = xpcall(mod.run, function(m)
    if type(m) == "table" then return m end
    return debug.traceback(tostring(m), 2)
  end, opts, args)
  if not rok then return report_error(res, mod.usage) end
  return math.tointeger(res) or 0
end

function M.main(argv)
  local ok, res = xpcall(dispatch, function(m)
    if type(m) == "table" then return m end
    return debug.traceback(tostring(m), 2)
  end, argv)
  if not ok then return report_error(res) end
  io.stdout:flush()
  return res
end

return M
