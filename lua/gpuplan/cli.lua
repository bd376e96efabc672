-- gpuplan.cli: the command line.  main(argv) -> exit code.
--
-- Subcommands live in lua/gpuplan/cmd/<name>.lua, each returning
--   { summary = "...", usage = "...", options = { name = type, ... },
--     run = function(opts, args) -> exit code, hint = function(key) (optional) }
-- with option types string, int, number, flag, format.  The job commands
-- (fit, train, plan, rl, infer) and comm make options, usage and hint from the
-- declarations in gpuplan.options.  `--sweep-batch`
-- arrives as opts.sweep_batch.  Exit codes: 0 ok, 1 error (a one-line
-- message naming the file:line or the argument), 2 usage -- the command's
-- own cli.usage, and a library refusal marked one (gpuplan.args usage:
-- options that do not go together), docs/output.md.

local config = require "gpuplan.config"
local argmod = require "gpuplan.args"

local M = {}

-- An error object for a usage problem: error(cli.usage("..."), 0) -> exit 2.
-- Both print as their message (a script that catches one with pcall and
-- prints it read "table: 0x55..."); gpuplan's handler reads their fields.
local ERROR = { __tostring = function(e) return tostring(e.msg) end }
function M.usage(msg) return setmetatable({ usage = true, msg = msg }, ERROR) end

-- An error object for a user-facing failure: exit 1, no traceback.
function M.fail(msg) return setmetatable({ msg = msg }, ERROR) end

-- The usage error of a command that takes no arguments (comm, roofline)
-- given one: where the argument is a catalog id of a kind the command
-- takes by an option, the option it goes with ("gpuplan roofline
-- h100-sxm" said "--gpu ID is required", and "gpuplan comm h100-sxm"
-- pointed at --system, though both had been given the card).  flags:
-- {{kind, flag}, ...} in the catalog's kinds (gpus, systems, models);
-- otherwise: what follows the message when the id is none of them.
function M.stray_argument(cmd, arg, flags, otherwise)
  local okc, cat = pcall(require("gpuplan.catalog").get)
  local shown = require("gpuplan.units").oneline(tostring(arg))
  for _, f in ipairs(flags) do
    if okc and type(cat[f[1]]) == "table" and cat[f[1]][arg] then
      return M.usage(string.format("%s: no arguments (got '%s'): give it as %s %s", cmd, shown,
        f[2], shown))
    end
  end
  return M.usage(string.format("%s: no arguments (got '%s')%s", cmd, shown, otherwise or ""))
end

local builtin = { "run", "catalog", "validate", "model", "fit", "infer", "plan",
                  "roofline", "comm", "train", "rl", "merge" }
-- The commands, in --help order (the references are generated from them:
-- gpuplan.docgen).
M.COMMANDS = builtin

local function load_cmd(name)
  if not name:match("^[%a_][%w_]*$") then return nil end
  local ok, mod = pcall(require, "gpuplan.cmd." .. name)
  if ok then return mod end
  -- A missing command module is "unknown command"; a broken one is a bug
  -- that must show its own error.
  if type(mod) == "string" and mod:find("module 'gpuplan.cmd." .. name .. "' not found", 1, true) then
    return nil
  end
  -- require's "error loading module 'x' from file 'f':\n\tf:1: ..." -> the
  -- second line, which names file:line.
  if type(mod) == "string" then mod = mod:gsub("^error loading module [^\n]*\n%s*", "") end
  error(mod, 0)
end

local function help_text()
  local out = {
    "usage: gpuplan [COMMAND] [ARGS...]",
    "",
    "Plans large-model GPU jobs before you rent them: does it fit, how fast,",
    "which layout, how long, what it costs.  Without a command, runs the",
    "default guide (scripts/guide.lua), with its options: gpuplan --currency CNY",
    "--market cn --format markdown.",
    "",
    "commands:",
    string.format("  %-10s %s", "guide", "the default guide, as without a command: gpuplan guide [--currency C] [--market M] [--format F]"),
    string.format("  %-10s %s", "run", "run a Lua script: gpuplan run FILE.lua [ARGS...] (or a #!/usr/bin/env gpuplan line)"),
  }
  local rows = {}
  for _, name in ipairs(builtin) do
    -- One broken command module must not take the help of the others
    -- down with it.
    local ok, mod = pcall(load_cmd, name)
    if not ok then
      rows[#rows + 1] = string.format("  %-10s (cannot load: %s)", name,
        tostring(mod):match("^[^\n]*"))
    elseif mod then
      rows[#rows + 1] = string.format("  %-10s %s", name, mod.summary or "")
    end
  end
  for _, r in ipairs(rows) do out[#out + 1] = r end
  out[#out + 1] = ""
  out[#out + 1] = "common options: --format text|markdown|csv|json, --help, --version"
  out[#out + 1] = "'gpuplan COMMAND --help' describes one command."
  return table.concat(out, "\n") .. "\n"
end

local formats = { text = true, markdown = true, csv = true, json = true }

-- Parse argv[first..] against a command's option table.
-- Returns opts, args or raises a usage error.  hint (optional):
-- function(key) -> what to add to "unknown option '--x'" (a did-you-mean);
-- without one, the nearest option of spec (args.nearest): roofline,
-- catalog, validate, model and merge, which declare no hint, named no
-- option ("roofline: unknown option '--gpuz'"), where fit ... comm did.
function M.parse(cmdname, spec, argv, first, hint)
  if not hint then
    hint = function(key)
      local names = {}
      for n in pairs(spec) do names[#names + 1] = n end
      table.sort(names)
      local near = argmod.nearest(key, names)
      return near and string.format(" (did you mean '--%s'?)", (near:gsub("_", "-"))) or ""
    end
  end
  local opts, args = {}, {}
  local i = first or 1
  local only_args = false
  -- The arguments that came right after a flag (--sweep-batch 1,8): a
  -- value given to an option that takes none, which a command refusing
  -- its extra argument names (dispatch).
  local after_flag, flag, valued = {}, nil, nil
  while i <= #argv do
    local a = argv[i]
    local prev_flag, prev_value = flag, valued
    flag, valued = nil, nil
    if only_args or a == "-" or a:sub(1, 1) ~= "-" then
      args[#args + 1] = a
      if prev_flag and not only_args then after_flag[#after_flag + 1] = { a, prev_flag } end
      -- An argument right after an option's value ("--itl-max 50 ms",
      -- "--tokens 1 billion"): the value's second word, which the
      -- command took for a second MODEL ("infer: one MODEL at a time")
      -- without naming it.  Kept with the option and its value, third.
      if prev_value and not only_args then
        after_flag[#after_flag + 1] = { a, prev_value[1], prev_value[2] }
      end
    elseif a == "--" then
      only_args = true
    elseif a == "-h" or a == "--help" then
      opts.help = true
    else
      local name, value = a:match("^%-%-([%w][%w%-]*)=(.*)$")
      if not name then name = a:match("^%-%-([%w][%w%-]*)$") end
      if value == "" then
        error(M.usage(string.format("%s: option '--%s' needs a value", cmdname, name)), 0)
      end
      if not name then
        -- a Lua key typed as a flag (--global_batch): "bad option" alone
        -- did not say that flags spell their words with '-'
        local u = a:match("^%-%-([%w][%w_%-]*)=?")
        local known = u and spec[(u:gsub("%-", "_"))]
        error(M.usage(string.format("%s: bad option '%s'%s", cmdname, a, known
          and string.format(" (did you mean '--%s'?)", (u:gsub("_", "-"))) or "")), 0)
      end
      local key = name:gsub("%-", "_")
      local ty = spec[key]
      local on = true
      -- --no-NAME turns a flag off (for flags that default to true).
      if not ty and key:match("^no_.") and spec[key:sub(4)] == "flag" then
        key, ty, on = key:sub(4), "flag", false
      end
      if not ty then
        -- --help is every command's, though no spec lists it: a slip of
        -- it (--hlep, --hepl) was matched against the spec alone and
        -- named its nearest option (train --hlep: "did you mean '--ep'?")
        local tail = argmod.distance(key, "help", 1) <= 1 and " (did you mean '--help'?)"
          -- `gpuplan --versio` reaches the guide's options (options without
          -- a command are the guide's): the top level's --version it meant
          or cmdname == "guide" and argmod.distance(key, "version", 2) <= 2
            and " (did you mean 'gpuplan --version'?)"
          or (hint and hint(key) or "")
        error(M.usage(argmod.unknown_option(cmdname, "'--" .. name .. "'", tail)), 0)
      end
      if ty == "flag" then
        if value then error(M.usage(string.format("%s: option '--%s' takes no value", cmdname, name)), 0) end
        opts[key] = on
        flag = a
      else
        if not value then
          i = i + 1
          value = argv[i]
          if value == nil then
            error(M.usage(string.format("%s: option '--%s' needs a value", cmdname, name)), 0)
          end
          -- the next word is another of the command's options: the value
          -- was left out ("--explain --kind train" read --kind as the case
          -- id, then train as a case file); --name=--x still gives one
          local nxt = value:match("^%-%-([%w][%w%-]*)$")
          local nk = nxt and nxt:gsub("%-", "_")
          if nk and (spec[nk] or nk == "help" or (nk:match("^no_.") and spec[nk:sub(4)] == "flag")) then
            error(M.usage(string.format("%s: option '--%s' needs a value (got the option '%s')",
              cmdname, name, value)), 0)
          end
        end
        local v = value
        -- Lua's tonumber reads "0x10" as 16: a count or size on a command
        -- line is decimal, so a hexadecimal one is refused, not read.
        local hex = (ty == "int" or ty == "number") and value:match("^%s*[%+%-]?0[xX]")
        if ty == "int" then
          v = not hex and math.tointeger(tonumber(value))
          -- "--seq 8k", as a context is spoken of: which thousand is
          -- the user's (8192 as a context, 8000 as a count), so the
          -- count is asked for written out, naming both; so for M and G
          -- ("--global-batch 1M" said only "expects an integer")
          local k, suffix = value:match("^%s*(%d+%.?%d*)%s*([kKMG])%s*$")
          local kn = k and tonumber(k)
          local power = ({ k = 1, K = 1, M = 2, G = 3 })[suffix or ""] or 1
          local bin, dec = kn and kn * 1024 ^ power, kn and kn * 1000 ^ power
          local spelt = kn and math.tointeger(bin) and string.format(
            " (write the count out: %d for %s x %s, %d for %s x %s)",
            math.tointeger(bin), k, power == 1 and "1024" or ("1024^" .. power),
            math.floor(dec + 0.5), k, power == 1 and "1000" or ("1000^" .. power)) or ""
          if not v then error(M.usage(string.format("%s: option '--%s' expects an integer, got '%s'%s", cmdname, name, value, spelt)), 0) end
        elseif ty == "number" then
          v = not hex and tonumber(value)
          if not v or v ~= v or v == math.huge or v == -math.huge then
            error(M.usage(string.format("%s: option '--%s' expects a number, got '%s'", cmdname, name, value)), 0)
          end
        elseif ty == "format" then
          if not formats[value] then
            error(M.usage(string.format("%s: option '--%s' expects text, markdown, csv or json, got '%s'", cmdname, name, value)), 0)
          end
        elseif ty == "format_html" then
          if not formats[value] and value ~= "html" then
            error(M.usage(string.format("%s: option '--%s' expects text, markdown, csv, json or html, got '%s'", cmdname, name, value)), 0)
          end
        elseif ty ~= "string" then
          error(string.format("%s: option '--%s' has unknown type '%s' in its spec", cmdname, name, tostring(ty)), 0)
        end
        opts[key] = v
        valued = { "--" .. name, value }
      end
    end
    i = i + 1
  end
  return opts, args, after_flag
end

-- The text of an error value: strings as they are, objects with
-- __tostring through it, cli.usage/cli.fail tables by their msg.
local function describe(e)
  if type(e) == "string" then return e end
  local mt = getmetatable(e)
  -- a script's error object whose __tostring itself fails (raises, or
  -- returns no string) was reported with a traceback through this file
  -- ("cli.lua:215: in upvalue 'describe'"): its own failure said instead
  if mt and mt.__tostring then
    local ok, s = pcall(tostring, e)
    if ok then return s end
    return "error object is a " .. type(e) .. " value whose __tostring failed: "
      .. (type(s) == "string" and s or ("a " .. type(s) .. " value"))
  end
  if type(e) == "table" and type(e.msg) == "string" then return e.msg end
  return "error object is a " .. type(e) .. " value"
end

-- Turn any error value into (message, exit code, traceback-or-nil).  The
-- message is one line: its control characters (a newline, an ESC in a
-- path or an option the user typed) escaped by units.oneline, the one
-- helper every error path goes through.
local function classify(e)
  local oneline = require("gpuplan.units").oneline
  -- cli.usage / cli.fail (whose __tostring is for a script's pcall),
  -- or a table without one: its code from its fields
  if type(e) == "table" and (getmetatable(e) == ERROR or not (getmetatable(e) or {}).__tostring) then
    return oneline(describe(e)), e.usage and 2 or 1
  end
  local s = describe(e)
  local first, rest = s:match("^(.-)\n(stack traceback:.*)$")
  return oneline(first or s), 1, rest
end

-- The usage lines of a command's help: its first paragraph (the lines up
-- to the first blank one), what a usage error shows instead of the whole
-- help.
function M.usage_lines(usage_text)
  return (usage_text .. "\n\n"):match("^(.-)\n%s*\n")
end

-- Error e of job command name's run, the options its message names (as
-- Lua keys) named by their flags (gpuplan.options flags_named), and the
-- message's "sweep: " (gp.sweep's, the function plan runs: options
-- FUNCTION) the command's "plan: "; the traceback dispatch's handler
-- appends, as it is.
-- A command line's values are all strings: "(got string 'dpo')", the
-- Lua API's way to tell "5" from 5 (args.shown), is "(got 'dpo')" in a
-- command's message, as cli.parse's own refusals say it.
local function cli_got(msg)
  return (msg:gsub("%(got string '", "(got '"))
end

local function flags_named(e, name)
  local options = require("gpuplan.options")
  local fn = options.FUNCTION[name]:match("^gp%.(.+)$")
  local function flags(cmd, msg)
    -- A catalog lookup's "unknown gpu 'x'" named neither the command nor
    -- the option it read (train, fit, plan and infer said "gpuplan:
    -- unknown gpu 'dgx-h100'" where comm said "comm: --gpu: ..."): the
    -- id came from --gpu or --system, the command's own flags.
    local head = msg:match("^[%w_]+: ") or ""
    local kind = msg:match("^unknown (%a+) '", #head + 1)
    -- So did --optimizer, --recipe and --nic-fabric ("gpuplan: unknown
    -- optimizer 'x'"): each catalog kind is named by the one flag of this
    -- command that reads it (a fabric: --fabric or --nic-fabric, where the
    -- command has only one of them).
    local flag
    if kind == "gpu" or kind == "system" or kind == "optimizer" or kind == "recipe" then
      flag = options.takes(cmd, kind, "cli") and kind
    elseif kind == "fabric" then
      local f, n = options.takes(cmd, "fabric", "cli"), options.takes(cmd, "nic_fabric", "cli")
      flag = (f and not n and "fabric") or (n and not f and "nic-fabric") or nil
    end
    if flag then
      msg = head .. "--" .. flag .. ": " .. msg:sub(#head + 1)
    end
    -- So did a name the readers refuse by what it is, not by its key
    -- (the systematic fuzz, tests/lua/fuzz_options.t: "train: unknown
    -- method 'x'", "infer: unknown kv dtype 'x'", "rl: rollout: unknown
    -- weight format 'x'" named no flag): each is one option's.  rl's
    -- rollout engine reads --rollout-weights as its weights (and its
    -- "weights: 0 bits per weight" range refusal), and --kv as its kv.
    if not flag then
      local sub = msg:match("^rollout: ", #head + 1) and "rollout: " or ""
      local at = #head + #sub + 1
      local what = msg:match("^unknown (%a[%a ]-) '", at)
        or (msg:match("^weights: ", at) and "weights:")
      local named = ({ method = "method", stack = "stack", precision = "precision",
                       ["kv dtype"] = "kv", ["weight format"] = "weights",
                       ["weights:"] = "weights" })[what]
      if named == "weights" and sub ~= "" and cmd == "rl" then named = "rollout_weights" end
      if named and options.takes(cmd, named, "cli") then
        local rest = msg:sub(at)
        if what == "weights:" then rest = rest:gsub("^weights: ", "") end
        msg = head .. sub .. options.flag(named) .. ": " .. rest
        flag = named
      end
    end
    msg = options.flags_named(cmd, msg)
    msg = cli_got(msg)
    if fn ~= cmd and msg:sub(1, #fn + 2) == fn .. ": " then
      msg = cmd .. ": " .. msg:sub(#fn + 3)
    end
    -- The catalog's lookup names no command either: it is this one's.
    -- So does a message that starts with the flag it refuses (plan's
    -- "--budget '0': must be a positive amount", from gp.sweep's policy).
    if msg:match("^%-%-%a[%w%-]*: unknown ") or msg:match("^unknown model '")
       or msg:match("^%-%-%a[%w%-]* ") then
      msg = cmd .. ": " .. msg
    end
    return msg
  end
  if type(e) == "table" and type(e.msg) == "string" then
    local t = {}
    for k, v in pairs(e) do t[k] = v end
    t.msg = flags(name, e.msg)
    return setmetatable(t, getmetatable(e))
  elseif type(e) == "string" then
    local first, rest = e:match("^(.-)(\nstack traceback:.*)$")
    return flags(name, first or e) .. (rest or "")
  end
  return e
end

-- The engine's refusal of a hybrid stack (engine/model.c
-- model_check_priced: "model.hybrid_pattern: a hybrid stack's Mamba ...
-- layers are not priced by ...") named a field of a table the command
-- line's user never wrote, not the model they gave: said of model id,
-- the command's MODEL (roofline's --model), where it is one catalog id.
local function hybrid_named(e, id)
  local said = "model.hybrid_pattern: a hybrid stack's "
  if type(id) ~= "string" or not id:match("^[%w%.%-_/]+$") then return e end
  local function named(msg)
    local at = msg:find(said, 1, true)
    if not at then return msg end
    return msg:sub(1, at - 1) .. string.format("%s is a hybrid stack (its hybrid_pattern): its ", id)
      .. msg:sub(at + #said)
  end
  if type(e) == "table" and type(e.msg) == "string" then
    local t = {}
    for k, v in pairs(e) do t[k] = v end
    t.msg = named(e.msg)
    return setmetatable(t, getmetatable(e))
  elseif type(e) == "string" then
    return named(e)
  end
  return e
end

-- Diagnostics follow the data written so far, also when both streams go
-- to one pipe: stdout is flushed before anything goes to stderr.  A usage
-- error (exit 2) adds the command's usage lines and where its help is.
local function report_error(e, usage_text, name)
  local msg, code, tb = classify(e)
  io.stdout:flush()
  io.stderr:write("gpuplan: ", msg, "\n")
  if code == 2 and usage_text then
    io.stderr:write(M.usage_lines(usage_text), "\n",
      string.format("see 'gpuplan %s --help'\n", name or "COMMAND"))
  end
  if tb and os.getenv("GPUPLAN_DEBUG") then io.stderr:write(tb, "\n") end
  return code
end

-- An exit status from a script's return value: integers 0..255 as they
-- are, other numbers an error; anything else is success.
local function exit_status(res, what)
  if type(res) ~= "number" then return 0 end
  local n = math.tointeger(res)
  if n and n >= 0 and n <= 255 then return n end
  io.stdout:flush()
  io.stderr:write(string.format("gpuplan: %s returned %s, not an exit status 0..255\n",
    what, require("gpuplan.args").shown(res)))
  return 1
end

-- gpuplan run FILE.lua [args...]: a script with `arg` set.  An error with
-- a position (file:line: ...) is a bug in the script and gets a traceback;
-- one without (error("msg", 0), a library's message about user input) is
-- the one line, the traceback only with GPUPLAN_DEBUG set.
function M.run_script(path, args, shown)
  local f, why = io.open(path, "rb")
  if not f then
    -- the system's reason (strerror: "No such file or directory",
    -- "Permission denied"), which io.open gives as "PATH: reason"
    why = tostring(why or ""):gsub("^.*: ", "")
    error(M.fail(string.format("cannot open script '%s': %s", path,
      why ~= "" and why or "cannot be read")), 0)
  end
  f:close()
  -- Not by reading: a pipe (gpuplan run /dev/stdin) would lose what the
  -- probe buffered.
  if require("lfs").attributes(path, "mode") == "directory" then
    error(M.fail(string.format("cannot open script '%s': is a directory", path)), 0)
  end
  -- Under pcall: the compiler's own errors ("C stack overflow" in deeply
  -- nested code) must not run the caller's traceback handler.
  local okl, chunk, err = pcall(loadfile, path)
  if not okl or not chunk then
    err = tostring(okl and err or chunk):match("^[^\n]*")
    if not err:find(path, 1, true) then err = path .. ": " .. err end
    error(M.fail(err), 0)
  end
  local dir = path:match("^(.*)/[^/]*$") or "."
  package.path = dir .. "/?.lua;" .. package.path
  local argt = { [0] = shown or path }
  for i, a in ipairs(args) do argt[i] = a end
  _G.arg = argt
  local ok, res = xpcall(chunk, function(m)
    if type(m) == "table" and type(m.msg) == "string" then
      -- cli.usage / cli.fail / a catalog error: exit code and message as
      -- given (a catalog error names its own file and line).
      return m
    end
    local s = describe(m)
    if type(m) ~= "string" then s = path .. ": " .. s end
    -- Raised by gpuplan's own code (a misuse the API reported, naming
    -- the script's line): that line, no traceback through gpuplan.
    local lib = false
    -- A runtime error raised inside one of Lua's own C functions has no
    -- position (for i in ipairs(nil): "attempt to index a nil value",
    -- raised in ipairs' iterator): the script's line that called it is
    -- put before it, as Lua puts it before an error in the script's own
    -- code.  error(msg, 0) keeps its bare message.
    local stdc = false
    for level = 2, 4 do
      local info = debug.getinfo(level, "Sfl")
      if not info then break end
      if info.what ~= "C" then
        lib = argmod.is_library(info.source)
        if stdc and not lib and type(m) == "string" and not s:match("^[^\n]-:%d+: ")
           and info.currentline > 0 then
          s = info.short_src .. ":" .. info.currentline .. ": " .. s
        end
        break
      end
      if argmod.is_core(info.func) then lib = true break end
      stdc = stdc or (level == 2 and info.func ~= error)
    end
    -- The script's frames, not the runner's: below the script's chunk
    -- come this xpcall and gpuplan's own dispatch (cli.lua, with the
    -- path it was built from), which say nothing about the script.
    local tb = debug.traceback(s, 2)
    if not os.getenv("GPUPLAN_DEBUG") then
      tb = tb:match("^(.-)\n\t%[C%]: in function 'xpcall'") or tb
    end
    return { msg = s, traceback = tb,
             positioned = type(m) == "string" and s:match("^[^\n]-:%d+: ") ~= nil
                          and not lib }
  end, table.unpack(args))
  if not ok then
    if not res.traceback then error(res, 0) end
    io.stdout:flush()
    if res.positioned or os.getenv("GPUPLAN_DEBUG") then
      io.stderr:write("gpuplan: ", res.traceback, "\n")
    else
      io.stderr:write("gpuplan: ", require("gpuplan.units").oneline(res.msg), "\n")
    end
    return 1
  end
  return exit_status(res, path)
end

local RUN_USAGE = [[
usage: gpuplan run FILE.lua [ARGS...]
       gpuplan FILE.lua [ARGS...]     (or a script starting #!/usr/bin/env gpuplan)

  Runs a Lua script with the gpuplan modules (require "gpuplan") and the
  arguments in `arg` and `...`.  An integer the script returns is the exit
  status.
]]

-- A command's module (its summary, usage and options), the top-level help
-- and run's usage, for the generated references.
M.command = load_cmd
M.help_text = help_text
M.RUN_USAGE = RUN_USAGE

-- The commands that price against the catalog of the search path.
local CATALOG_COMMANDS = { fit = true, train = true, plan = true, rl = true, infer = true,
                           comm = true, roofline = true, validate = true }

-- "unknown command 'x'", with the command a user likely meant (trian,
-- fti, infre: the nearest of the commands, guide and run included), as
-- an unknown option names the nearest option.
local function unknown_command(name)
  local names = { "guide", "run" }
  for _, n in ipairs(builtin) do names[#names + 1] = n end
  local near = argmod.nearest(name, names)
  return M.usage(string.format("unknown command '%s' (%s)", name,
    near and ("did you mean '" .. near .. "'? see 'gpuplan --help'") or "see 'gpuplan --help'"))
end

local function dispatch(argv)
  local name = argv[1]
  if name == nil then
    return M.run_script(config.root .. "/scripts/guide.lua", {})
  end
  if name == "--help" or name == "-h" or name == "help" then
    local topic = name == "help" and argv[2]
    if topic == "run" then
      io.stdout:write(RUN_USAGE)
      return 0
    elseif topic == "guide" then
      return M.run_script(config.root .. "/scripts/guide.lua", { "--help" }, "guide")
    elseif topic then
      local mod = load_cmd(topic)
      if not mod then error(unknown_command(topic), 0) end
      io.stdout:write(mod.usage or ("usage: gpuplan " .. topic), "\n")
      return 0
    end
    io.stdout:write(help_text())
    return 0
  end
  if name == "--version" or name == "-V" then
    io.stdout:write("gpuplan ", config.version, "\n")
    return 0
  end
  -- Options without a command are the default guide's (--format, which
  -- the help lists as common to all, --currency, --market): `gpuplan
  -- --format markdown` said "unknown command '--format'".  Its errors
  -- name it "guide", not the installed script's path.
  if name:match("^%-") then
    return M.run_script(config.root .. "/scripts/guide.lua", argv, "guide")
  end
  -- `gpuplan guide`: the help's "runs the default guide" read as a
  -- command, and said "unknown command 'guide'"; it is the guide with
  -- the options after it, as `gpuplan` alone and `gpuplan --format ...`.
  if name == "guide" then
    return M.run_script(config.root .. "/scripts/guide.lua", { table.unpack(argv, 2) }, "guide")
  end
  if name == "run" then
    if argv[2] == nil then error(M.usage("run: missing script (gpuplan run FILE.lua [args...])"), 0) end
    if argv[2] == "--help" or argv[2] == "-h" then
      io.stdout:write(RUN_USAGE)
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
  if not mod then error(unknown_command(name), 0) end
  local ok, opts, args, after_flag = pcall(M.parse, name, mod.options or {}, argv, 2, mod.hint)
  if not ok then return report_error(opts, mod.usage, name) end
  -- The note on a word that followed an option's value (last: { word,
  -- flag, value }, parse's after_flag): the option takes one word, so a
  -- unit typed apart from its number ("50 ms") is said so -- where the
  -- option's own readers take the two written together (the parse
  -- above, then the declared kind's check), so the joined form offered
  -- is one the option reads: a list of units here offered "as 1K" for
  -- --global-batch 1 K, which refuses 1K, and not "as 1b" for --tokens
  -- 1 b, which reads 1b.
  local function value_word_note(last)
    local unit = false
    local key = last[2]:sub(3):gsub("%-", "_")
    local options = require("gpuplan.options")
    local d = options.get(key)
    local QUANTITY = { bytes = true, bandwidth = true, duration = true, power = true,
                       total = true, tokens = true, count = true, number = true }
    if d and QUANTITY[d.kind] and last[3]:match("%d$") and last[1]:match("^%a[%a/]*$") then
      local okp, o = pcall(M.parse, name, mod.options or {}, { last[2], last[3] .. last[1] }, 1)
      unit = okp and o[key] ~= nil and options.check(key, o[key], name) ~= nil
    end
    return string.format("'%s' follows %s %s: an option takes one value%s", last[1], last[2],
      last[3], unit and string.format(", a number and its unit written together, as %s%s",
        last[3], last[1]) or "")
  end
  -- A usage error over the arguments ("infer: one MODEL at a time") when
  -- one of them followed a flag: "--sweep-batch 1,8" gave a value to an
  -- option that takes none, which the message did not say.
  local function with_flag_value(e)
    local last = after_flag[#after_flag]
    if last and last[1] == args[#args] and type(e) == "table" and e.usage
       and type(e.msg) == "string" and (e.msg:find("MODEL", 1, true) or e.msg:find("argument")) then
      local t = {}
      for k, v in pairs(e) do t[k] = v end
      if last[3] and #args < 2 then
        -- the one argument after an option's value is no second word of
        -- it (roofline --gpu h100-sxm llama3-8b: its own message says
        -- to give --model)
        return e
      elseif last[3] then
        t.msg = string.format("%s (%s)", e.msg, value_word_note(last))
      else
        t.msg = string.format("%s ('%s' follows %s, which takes no value)", e.msg, last[1], last[2])
      end
      return setmetatable(t, getmetatable(e))
    end
    return e
  end
  if opts.help then
    io.stdout:write(mod.usage or ("usage: gpuplan " .. name), "\n")
    return 0
  end
  -- A job command's values checked by their declared kinds here, where
  -- the message can name the flag the user typed.
  local options = require "gpuplan.options"
  if options.FUNCTION[name] then
    local bad = options.check_cli(name, opts)
    if bad then
      -- a value its kind cannot parse (options.quantity marks it) is a
      -- usage error, exit 2; one out of its range an error, exit 1
      local mk = argmod.is_usage(bad) and M.usage or M.fail
      -- the value's unit typed as a word of its own ("--memory 40 GiB"
      -- read "--memory '40' needs a unit", the GiB typed unnamed)
      local msg = cli_got(bad)
      for _, a in ipairs(after_flag) do
        if a[3] and msg:sub(1, #a[2] + 1) == a[2] .. " " then
          msg = msg .. " (" .. value_word_note(a) .. ")"
          break
        end
      end
      return report_error(mk(name .. ": " .. msg), mod.usage, name)
    end
  end
  -- A broken catalog (a user file on the search path) is one error naming
  -- its file and line, loaded here before the command runs: inside it the
  -- error was taken for the command's own and rewritten -- comm dropped
  -- the file's line, comm --system blamed --system, rl kept only the
  -- reason, validate blamed the first case's model.  `catalog` checks
  -- and lists directories of its own, `model import` and `merge` need
  -- none.
  if CATALOG_COMMANDS[name] then
    local okc, err = pcall(require("gpuplan.catalog").get)
    if not okc then return report_error(err, mod.usage, name) end
  end
  local rok, res = xpcall(mod.run, function(m)
    if type(m) == "table" then return m end
    return debug.traceback(tostring(m), 2)
  end, opts, args)
  if not rok then
    -- A refusal the library marked as a usage error (args.usage: options
    -- that do not go together) is the command's usage error, exit 2, as
    -- the command's own checks are.
    if argmod.is_usage(res) then
      res = M.usage(M.clean(res:match("^(.-)\nstack traceback:") or res))
    end
    if options.FUNCTION[name] then res = flags_named(res, name) end
    res = hybrid_named(res, opts.model or args[1])
    -- An output file that cannot be written named neither the command
    -- nor the option ("gpuplan: cannot write 'out/': it is a directory"):
    -- the only file a command writes is its --svg.
    if opts.svg and type(res) == "string" and res:match("^cannot write '") then
      res = name .. ": --svg: " .. res
    end
    return report_error(with_flag_value(res), mod.usage, name)
  end
  return exit_status(res, "command '" .. name .. "'")
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

-- An error message without the "file.lua:N: " position Lua prefixed:
-- commands show users what went wrong, not where in gpuplan it was seen.
-- Error tables (cli.fail, catalog errors naming a catalog file's line)
-- are left as they are.
function M.clean(e)
  if type(e) == "table" then return e end
  return (tostring(e):gsub("^[^\n]-%.lua:%d+: ", ""))
end

-- msg, error e reworded (its flag named, its command's name in front), as
-- the value to raise: a usage error where e was one.  gpuplan.args marks a
-- usage refusal by its text, so a new text loses the mark: comm's --nccl
-- abc and grid_sweep's --gpus abc exited 1 once reworded.
function M.reword(e, msg)
  return require("gpuplan.args").is_usage(e) and M.usage(msg) or msg
end

return M
