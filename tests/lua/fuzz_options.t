-- Fuzz target: every option of every job command, one bad value at a
-- time, systematically (not sampled).  The option declarations
-- (gpuplan.options: the table that makes each command's CLI flags and Lua
-- keys) and roofline's own table give each command's options; each
-- numeric or word option gets each of the values below on a command line
-- that answers without it, run in this process through cli.main, and the
-- same through the command's Lua function (gp.train{...}) under pcall.
-- Properties: a refusal exits 1 or 2 with one clean line "gpuplan: ..."
-- that names the option as the user spelled it (--flag on the command
-- line, the key in Lua), no position inside gpuplan, no nan or inf beyond
-- the value the user typed; an answer (exit 0, or a Lua result) prints no
-- nan or inf.  An option limited to methods runs under one of them, a
-- MoE serving option on a MoE model.  A flag (boolean key) is fuzzed
-- through Lua only (its command-line form takes no value).  A Lua result
-- holds no NaN and no inf either.  Deterministic (no random draw): every
-- (command, option, value) once, about 7900 runs, some 4 s of CPU.  GPUPLAN_FUZZ_ALL=1 lists every finding, and
-- every bad value a command took (exit 0), on stderr.
local t = require "tap"
local fz = require "fuzz"
local options = require "gpuplan.options"
local gp = require "gpuplan"

local scratch = t.scratch()

-- A command line each command answers, the options under test added to it.
local BASE = {
  fit = { "fit", "llama3.2-1b", "--gpu", "h100-sxm", "--gpus", "8" },
  train = { "train", "llama3.2-1b", "--gpu", "h100-sxm", "--gpus", "8" },
  plan = { "plan", "llama3.2-1b", "--gpu", "h100-sxm", "--gpus", "8" },
  rl = { "rl", "llama3.2-1b", "--gpu", "h100-sxm", "--gpus", "8" },
  infer = { "infer", "llama3.2-1b", "--gpu", "h100-sxm" },
  comm = { "comm", "--system", "dgx-h100", "--max", "1MiB" },
  roofline = { "roofline", "--gpu", "h100-sxm", "--model", "llama3.2-1b" },
}
-- infer's MoE serving options (declared serve) on a MoE model, EP 2.
local SERVE_BASE = { "infer", "qwen3-30b-a3b", "--gpu", "h100-sxm", "--gpus", "2", "--ep", "2" }
local COMMANDS = { "fit", "train", "plan", "rl", "infer", "comm", "roofline" }

-- The bad values: of a number, of a word.
local NUMBER_BAD = { "-1", "0", "nan", "inf", "-inf", "1e309", "", "abc", "1.5" }
local WORD_BAD = { "", "-1", "0", "nan", "inf", "zzz-unknown" }

local function spec_of(cmd)
  if options.FUNCTION[cmd] then return options.spec(cmd) end
  return require("gpuplan.cmd." .. cmd).options
end

-- Options whose value is a path or free text: their refusals are checked
-- by their own tests.
local SKIP = { svg = true, format = true, out = true, shard = true }

-- Does text show nan or inf other than inside quotes (the value as typed)?
local function shows_nonfinite(s)
  local low = s:lower():gsub("'[^'\n]*'", "''"):gsub('"[^"\n]*"', '""'):gsub("%(got [^)]*%)", "")
  return low:find("%f[%w]%-?nan%f[%W]") or low:find("%f[%w]inf%f[%W]") or
    low:find("%f[%w]infinity%f[%W]")
end

-- The first of a declaration's methods (a space-separated list) that
-- command cmd takes; nil where it takes none of them.
local TAKES = { fit = "pretrain full lora qlora grpo ppo infer", train = "pretrain full lora qlora",
                plan = "pretrain full lora qlora" }
local function method_for(cmd, methods)
  if not TAKES[cmd] then return nil end
  for m in methods:gmatch("%S+") do
    if (" " .. TAKES[cmd] .. " "):find(" " .. m .. " ", 1, true) then return m end
  end
end

local runs = 0
fz.start("options", 1)
for _, cmd in ipairs(COMMANDS) do
  local spec = spec_of(cmd)
  for _, name in ipairs(fz.keys(spec)) do
    local ty = spec[name]
    if ty ~= "flag" and not SKIP[name] and not ty:match("^format") then
      local flag = "--" .. name:gsub("_", "-")
      local values = (ty == "int" or ty == "number") and NUMBER_BAD or WORD_BAD
      for _, v in ipairs(values) do
        local argv = {}
        -- the option given replaces the base's own (--gpu, --gpus, --max)
        local base, i = BASE[cmd], 1
        -- an option limited to methods (d.methods) runs under the first of
        -- them the command takes, so that its reader sees the value
        local d = options.get(name)
        local method = d and d.methods and method_for(cmd, d.methods)
        if method then
          base = { table.unpack(base) }
          base[#base + 1], base[#base + 2] = "--method", method
        end
        -- a MoE serving option (d.serve) on a MoE model served by EP
        if cmd == "infer" and d and d.serve then base = SERVE_BASE end
        while i <= #base do
          if base[i] == flag then i = i + 2 else argv[#argv + 1] = base[i]; i = i + 1 end
        end
        argv[#argv + 1] = flag
        argv[#argv + 1] = v
        local shown = table.concat(argv, " ")
        runs = runs + 1
        local code, so, se = fz.cli_run(argv, scratch)
        fz.cli_check(shown, code, so, se, false)
        if code == 0 and os.getenv("GPUPLAN_FUZZ_ALL") then io.stderr:write("ACCEPTED ", shown, "\n") end
        if code == 1 or code == 2 then
          local first = se:match("^[^\n]*") or ""
          if not first:find(flag, 1, true) then
            fz.finding("refusal does not name " .. flag .. ": " .. first, shown)
          end
          if shows_nonfinite(first:gsub(flag:gsub("%p", "%%%0") .. " " .. v:gsub("%p", "%%%0"), "")) then fz.finding("refusal shows nan/inf: " .. first, shown) end
        end
      end
    end
  end
end

-- The same through the Lua functions, each key given each bad value.
local LUA_BASE = {
  fit = { "memory", { model = "llama3.2-1b", gpu = "h100-sxm", gpus = 8 } },
  train = { "train", { model = "llama3.2-1b", gpu = "h100-sxm", gpus = 8 } },
  plan = { "sweep", { model = "llama3.2-1b", gpu = "h100-sxm", gpus = 8 } },
  rl = { "rl", { model = "llama3.2-1b", gpu = "h100-sxm", gpus = 8 } },
  infer = { "infer", { model = "llama3.2-1b", gpu = "h100-sxm" } },
  comm = { "comm", { system = "dgx-h100", op = "all_reduce", bytes = 1 << 20 } },
}
local NAN = 0 / 0
local LUA_NUMBER_BAD = { -1, 0, NAN, math.huge, -math.huge, "", "abc", 1.5, true }
local LUA_WORD_BAD = { "", "zzz-unknown", -1, 0, NAN, math.huge, true }
-- a flag's (a boolean key's): a word, a number, NaN, the empty string
local LUA_FLAG_BAD = { "yes", "true", 0, 1, NAN, "" }
-- Keys whose value is a table, a function or a catalog: not fuzzed here.
local LUA_SKIP = { model = true, cat = true, catalog = true, policy = true, reward_model = true,
                   critic_model = true, system_table = true, topology = true }

-- Keys whose refusal may name another word: none now (rollout_weights,
-- the one the commit that added this target listed, is refused under its
-- own key since).  An entry here needs its reason beside it.
local LUA_NAMED_ELSE = {}

-- The value as a refusal shows what the user gave (args.shown: NaN, inf),
-- as a pattern.
local function shown_value(v)
  return require("gpuplan.args").shown(v):gsub("^string ", ""):gsub("%p", "%%%0")
end

local function nonfinite_in(v, depth, seen)
  depth, seen = depth or 0, seen or {}
  if type(v) == "number" then return v ~= v or v == math.huge or v == -math.huge end
  if type(v) ~= "table" or depth > 8 or seen[v] then return false end
  seen[v] = true
  for k, x in pairs(v) do
    if nonfinite_in(x, depth + 1, seen) then return tostring(k) end
  end
  return false
end

local lruns = 0
for _, cmd in ipairs(options.COMMANDS) do
  local fname, base = LUA_BASE[cmd][1], LUA_BASE[cmd][2]
  for _, key in ipairs(fz.keys(options.keys(cmd))) do
    local d = options.get(key)
    local ty = options.view(d, cmd).type
    if not LUA_SKIP[key] and (ty == "int" or ty == "number" or ty == "string" or ty == "flag") then
      local values = (ty == "int" or ty == "number") and LUA_NUMBER_BAD or
        ty == "flag" and LUA_FLAG_BAD or LUA_WORD_BAD
      for _, v in ipairs(values) do
        local o = {}
        for k, x in pairs(base) do o[k] = x end
        -- as on the command line: a method the key applies to, a MoE
        -- model served by EP for a serving option
        local m = d.methods and method_for(cmd, d.methods)
        if m then o.method = m end
        if cmd == "infer" and d.serve then
          o.model, o.gpus, o.ep = "qwen3-30b-a3b", 2, 2
        end
        o[key] = v
        local shown = string.format("gp.%s{%s = %s}", fname, key, type(v) == "string"
          and string.format("%q", v) or tostring(v))
        lruns = lruns + 1
        debug.sethook(function() error("fuzz: instruction budget exceeded (a hang?)", 0) end, "",
                      50 * 1000 * 1000)
        local ok, r = pcall(gp[fname], o)
        debug.sethook()
        if ok then
          local where = nonfinite_in(r)
          if where then fz.finding("a NaN or inf in the result (" .. where .. ")", shown) end
        else
          local msg = fz.uncalled(r)
          local why = fz.unclean(msg)
          if why then
            fz.finding(why .. ": " .. tostring(msg), shown)
          elseif not msg:find("%f[%w_]" .. key:gsub("%p", "%%%0") .. "%f[^%w_]")
              and not LUA_NAMED_ELSE[key] then
            fz.finding("refusal does not name " .. key .. ": " .. msg, shown)
          elseif shows_nonfinite((msg:gsub(shown_value(v), ""))) then
            fz.finding("refusal shows nan/inf: " .. msg, shown)
          end
        end
      end
    end
  end
end
t.diag(string.format("%d Lua calls", lruns))
t.diag(string.format("%d command lines", runs))
runs = runs + lruns
if os.getenv("GPUPLAN_FUZZ_ALL") then
  for _, f in ipairs(fz.findings) do io.stderr:write(f.what, "\n  ", f.input, "\n") end
end
fz.finish(runs)
scratch.remove()
t.done_testing()
