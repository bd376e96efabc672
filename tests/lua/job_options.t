-- The job options declared once (gpuplan.options): each command's CLI
-- spec, its --help and its Lua function take exactly what is declared;
-- an unknown key says what was meant; what recompute = "auto" chose is a
-- field.  (tests/lua/options.t is gp.options, the scripts' parameters.)
-- Run with ./gpuplan run tests/lua/job_options.t.
local t = require "tap"
local gp = require "gpuplan"
local options = require "gpuplan.options"
local cli = require "gpuplan.cli"

local FN = { fit = gp.memory, train = gp.train, plan = gp.sweep, rl = gp.rl, infer = gp.infer,
             comm = gp.comm }
-- the name each function gives itself in its messages
local FN_NAME = { fit = "memory", train = "train", plan = "sweep", rl = "rl", infer = "infer",
                 comm = "comm" }
-- The call that stops right after the key check: a model that does not
-- exist (gp.comm: an op that does not).
local function base(cmd)
  if cmd == "comm" then return { op = "no-such-op" } end
  return { model = "no-such-model", gpu = "h100-sxm" }
end

-- A value of an option's kind, for a call that must get past the key check.
local function value(d)
  local ty = d.type
  if d.name == "gpu" then return "h100-sxm" end
  if d.name == "cat" or d.name == "catalog" then return gp.catalog() end
  if ty == "int" then return 1 end
  if ty == "number" or ty == "number|string" then return 0.5 end
  if ty == "flag" or ty == "boolean" then return true end
  if ty == "function" then return function() return true end end
  if ty == "table" then return {} end
  return "x"
end

local function flag_in(help, name)
  local f = name:gsub("_", "-")
  -- "--name", "--no-name" or "--[no-]name" at the start of an option line.
  return help:find("\n  %-%-" .. f:gsub("%-", "%%-") .. "[ \n]") ~= nil
      or help:find("\n  %-%-no%-" .. f:gsub("%-", "%%-") .. "[ \n]") ~= nil
      or help:find("\n  %-%-%[no%-%]" .. f:gsub("%-", "%%-") .. "[ \n]") ~= nil
end

-- 1. Every declared option of each command is in its CLI spec, its --help
-- and its Lua function's accepted keys -- the Lua function called with it
-- (and a model that does not exist, so that each call stops right after
-- the key check) refuses the model, not the key.
local bad_cli, bad_help, bad_lua, counted = {}, {}, {}, { cli = 0, lua = 0 }
for _, cmd in ipairs(options.COMMANDS) do
  local mod = require("gpuplan.cmd." .. cmd)
  for _, d in ipairs(options.list) do
    if options.takes(cmd, d.name, "cli") then
      counted.cli = counted.cli + 1
      if mod.options[d.name] ~= options.view(d, cmd).type then
        bad_cli[#bad_cli + 1] = cmd .. " --" .. d.name
      end
      if not flag_in(mod.usage, d.name) then bad_help[#bad_help + 1] = cmd .. " --" .. d.name end
    end
    if options.takes(cmd, d.name, "lua") then
      counted.lua = counted.lua + 1
      local a = base(cmd)
      if d.name ~= "model" and d.name ~= "op" then a[d.name] = value(d) end
      local ok, err = pcall(FN[cmd], a)
      err = tostring(err)
      if ok or err:find("unknown option", 1, true) then
        bad_lua[#bad_lua + 1] = cmd .. " " .. d.name .. ": " .. (ok and "no error" or err)
      end
    end
  end
end
t.ok(counted.cli > 200 and counted.lua > 250, string.format(
  "the commands take %d options on the command line, %d in Lua", counted.cli, counted.lua))
t.is(table.concat(bad_cli, ", "), "", "each declared CLI option is in its command's spec")
t.is(table.concat(bad_help, ", "), "", "... and in its --help")
t.is(table.concat(bad_lua, "; "), "", "each declared Lua option passes its function's key check")
-- The same call with an undeclared key is refused, naming it: the check
-- above can fail.  Every command's function words it the same (gp.infer
-- and gp.comm said "unknown argument" where gp.train said "unknown option").
for _, cmd in ipairs(options.COMMANDS) do
  local a = base(cmd)
  a.tp_sizee = 2
  t.raises(function() FN[cmd](a) end,
    FN_NAME[cmd] .. ": unknown option 'tp_sizee'",
    cmd .. ": an undeclared key is refused", true)
end

-- 2. No accepted key lacks a declaration: the CLI specs, and the key sets
-- the modules expose, hold declared names only, each for its command.
local undeclared = {}
for _, cmd in ipairs(options.COMMANDS) do
  for k in pairs(require("gpuplan.cmd." .. cmd).options) do
    if not options.takes(cmd, k, "cli") then undeclared[#undeclared + 1] = cmd .. " --" .. k end
  end
end
local sets = {
  { "fit", require("gpuplan.memory").OPTIONS }, { "train", require("gpuplan.train").OPTIONS },
  { "train", require("gpuplan.train").EXTRA }, { "plan", require("gpuplan.train").SWEEP_EXTRA },
  { "plan", require("gpuplan.sweep").SWEEP_OPTIONS }, { "rl", require("gpuplan.rl").OPTIONS },
  { "infer", require("gpuplan.args").set(require("gpuplan.serve").ARGS) },
}
for _, s in ipairs(sets) do
  for k in pairs(s[2]) do
    if not options.takes(s[1], k, "lua") then undeclared[#undeclared + 1] = s[1] .. " " .. k end
  end
end
-- gp.comm's topology fields (its own table, which a topology = {...} is
-- checked against) are each a declared key of gp.comm too.
for k in pairs(require("gpuplan.comm").topology_fields) do
  if not options.takes("comm", k, "lua") then undeclared[#undeclared + 1] = "comm " .. k end
end
table.sort(undeclared)
t.is(table.concat(undeclared, ", "), "", "no accepted key lacks a declaration")
-- What gp.rl and gp.sweep read themselves (stripped before gp.train's
-- setup) are their own: algo, steps ... and the search's lists.
local rlown, swown = require("gpuplan.rl").OPTIONS, require("gpuplan.sweep").SWEEP_OPTIONS
t.ok(rlown.algo and rlown.steps and rlown.kv and not rlown.tp and not rlown.global_batch,
  "rl's own options: the RL ones, not gp.train's")
t.ok(swown.tp_max and swown.zero and swown.gpus and swown.scaling and not swown.seq,
  "sweep's own: the search, and what it searches (zero, gpus), not the job")

-- The same names everywhere: the CLI flag is the Lua name with _ -> -,
-- and gpuplan infer's --input / --output are gp.infer's input / output.
t.is(require("gpuplan.cmd.infer").options.input, "int", "infer --input")
t.is(require("gpuplan.cmd.infer").options["in"], nil, "no --in")
t.ok(options.takes("infer", "input", "lua") and options.takes("infer", "output", "lua"),
  "gp.infer's input and output")

-- 3. The unknown-key error says what was meant.
local M7 = { model = "llama2-7b", gpu = "h100-sxm" }
local function with(extra)
  local a = {}
  for k, v in pairs(M7) do a[k] = v end
  for k, v in pairs(extra) do a[k] = v end
  return a
end
t.raises(function() gp.train(with { sequence_parallel = true }) end,
  "train: unknown option 'sequence_parallel' (did you mean 'sp'?)", "a declared synonym", true)
t.raises(function() gp.memory(with { tp_size = 2 }) end,
  "memory: unknown option 'tp_size' (did you mean 'tp'?)", "tp_size -> tp", true)
t.raises(function() gp.memory(with { micro_batch = 2 }) end,
  "memory: unknown option 'micro_batch' (did you mean 'batch'?)",
  "micro_batch, a second name for batch, is only suggested", true)
t.raises(function() gp.infer(with { input_len = 100 }) end,
  "infer: unknown option 'input_len' (did you mean 'input'?)", "infer words it as every function does", true)
-- Within two edits (a transposition is one): pormpts -> prompts.
t.raises(function() gp.rl(with { pormpts = 8 }) end,
  "rl: unknown option 'pormpts' (did you mean 'prompts'?)", "a near miss", true)
t.raises(function() gp.memory(with { reccompute = "full" }) end,
  "memory: unknown option 'reccompute' (did you mean 'recompute'?)", "an extra letter", true)
-- An abbreviation that begins a word of the key (24.6: sequence_len was
-- nine edits from seq, so nothing was said), or a name that is whole words
-- of it; the longest such name.
t.raises(function() gp.train(with { sequence_len = 4096 }) end,
  "train: unknown option 'sequence_len' (did you mean 'seq'?)", "sequence_len -> seq", true)
t.raises(function() gp.infer(with { kv_cache_dtype = "fp8" }) end,
  "infer: unknown option 'kv_cache_dtype' (did you mean 'kv'?)", "kv_cache_dtype -> kv", true)
t.raises(function() gp.sweep(with { global_batch_tokens = 4 }) end,
  "sweep: unknown option 'global_batch_tokens' (did you mean 'global_batch'?)",
  "whole words: global_batch_tokens -> global_batch", true)
t.raises(function() gp.train(with { total_gpus = 8 }) end,
  "train: unknown option 'total_gpus' (did you mean 'gpus'?)", "the longest: gpus, not gpu", true)
-- Three edits away is no suggestion; nor is a one-letter key ("x" is two
-- edits from tp, pp, kv ...).
t.raises(function() gp.memory(with { recmptx = "full" }) end,
  "memory: unknown option 'recmptx'$", "nothing within two edits: no suggestion")
t.raises(function() gp.memory(with { x = 1 }) end,
  "memory: unknown option 'x'$", "a one-letter key: no suggestion")
-- An option of other functions says whose.
t.raises(function() gp.train(with { kv = "fp8" }) end,
  "train: unknown option 'kv' (an option of gp.memory, gp.rl and gp.infer)",
  "an option of other functions", true)
t.is(options.distance("pormpts", "prompts", 2), 1, "distance: a transposition")
t.is(options.distance("gpu", "gpus", 2), 1, "distance: an insertion")
t.is(options.distance("abcdef", "uvwxyz", 2), 3, "distance: past the limit stops at limit + 1")

-- The command line says the same, in flags.
local function cli_error(cmd, argv)
  local mod = require("gpuplan.cmd." .. cmd)
  local ok, e = pcall(cli.parse, cmd, mod.options, argv, 1, mod.hint)
  return not ok and e.msg or nil
end
t.is(cli_error("infer", { "--in", "512" }),
  "infer: unknown option '--in' (did you mean '--input'?)", "--in is refused, naming --input")
t.is(cli_error("infer", { "--out", "64" }),
  "infer: unknown option '--out' (did you mean '--output'?)", "--out names --output")
t.is(cli_error("fit", { "--sequence-parallel" }),
  "fit: unknown option '--sequence-parallel' (did you mean '--sp'?)", "fit: --sp")
t.is(cli_error("plan", { "--tp", "8" }),
  "plan: unknown option '--tp' (did you mean '--tp-max'?)", "plan: --tp -> --tp-max")
t.is(cli_error("train", { "--sequence-len", "4096" }),
  "train: unknown option '--sequence-len' (did you mean '--seq'?)", "train: --sequence-len -> --seq")
t.is(cli_error("fit", { "--tokens", "2e12" }),
  "fit: unknown option '--tokens' (an option of gpuplan train and plan)",
  "fit: an option of other commands")

-- 4. --help: the header, the declared option lines within 76 columns, the
-- closing prose; fit lists --sp (it was missing).
for _, cmd in ipairs(options.COMMANDS) do
  local u = require("gpuplan.cmd." .. cmd).usage
  t.like(u, "^usage: gpuplan " .. cmd .. (cmd == "comm" and " %-%-system ID" or " MODEL"),
    cmd .. " --help: its header")
  local long = {}
  for line in (u .. "\n"):gmatch("([^\n]*)\n") do
    if #line > 76 then long[#long + 1] = line end
  end
  t.is(table.concat(long, "\n"), "", cmd .. " --help: lines within 76 columns")
end
local fit_help = require("gpuplan.cmd.fit").usage
t.like(fit_help, "\n  --sp  ", "fit --help lists --sp", true)
t.like(fit_help, "fp8 on a GPU without fp8 tensor cores is an\n  error.$", "fit --help: its closing prose")
t.like(require("gpuplan.cmd.infer").usage, "\n  --input N ", "infer --help lists --input", true)
-- One help text for a shared option: --tp reads the same in fit and train.
local function line_of(help, flag)
  return help:match("\n(  %-%-" .. flag .. " [^\n]*)")
end
t.is(line_of(fit_help, "tp"), line_of(require("gpuplan.cmd.train").usage, "tp"),
  "--tp: one help text in fit and train")

-- 5. The defaults line uses declared names: every "name=" gpuplan's Lua
-- writes into a defaults list (dflt("name", ...), default("name=...")),
-- and every one the functions return for a spread of jobs.
local root = require("gpuplan.config").root
local undeclared_defaults = {}
for _, f in ipairs { "memory", "train", "sweep", "rl", "infer", "serve", "vlm" } do
  local src = assert(io.open(root .. "/lua/gpuplan/" .. f .. ".lua")):read("a")
  for _, pat in ipairs { 'dflt%(%s*"([%a_][%w_]*)"', 'dflt%(%s*"([%a_][%w_]*)=',
                         'default%(%s*"([%a_][%w_]*)=', 'default%(string%.format%(%s*"([%a_][%w_]*)=',
                         'dflt%(string%.format%(%s*"([%a_][%w_]*)=',
                         'defaults%[#defaults %+ 1%] = string%.format%(%s*"([%a_][%w_]*)=',
                         'defaults%[#defaults %+ 1%] = "([%a_][%w_]*)=' } do
    for name in src:gmatch(pat) do
      if not options.get(name) then undeclared_defaults[#undeclared_defaults + 1] = f .. ": " .. name end
    end
  end
end
local function names_of(defaults, where)
  for _, d in ipairs(defaults) do
    local name = d:match("^([%a_][%w_]*)=") or d:match("^[%w.-]+: ([%a_][%w_]*)=")
    if name and not options.get(name) then undeclared_defaults[#undeclared_defaults + 1] = where .. ": " .. d end
  end
end
names_of(gp.memory(with { method = "qlora", recompute = "auto" }).defaults, "memory qlora")
names_of(gp.memory(with { method = "infer" }).defaults, "memory infer")
names_of(gp.memory(with { method = "grpo", gpus = 8 }).defaults, "memory grpo")
-- l40 is in no catalog system: gp.train builds its node (gpus_per_node=).
names_of(gp.train { model = "llama2-7b", gpu = "l40", gpus = 8, method = "lora" }.defaults, "train l40")
names_of(gp.train { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, method = "pretrain" }.defaults,
  "train pretrain")
names_of(gp.rl { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 8 }.defaults, "rl")
names_of(gp.infer(with {}).defaults, "infer")
names_of(gp.infer { model = "deepseek-v3", gpu = "h20", gpus = 16, ep = 16, dp_attention = true,
                    weights = "fp8" }.defaults, "infer moe")
names_of(gp.sweep { model = "llama2-7b", gpu = "h100-sxm", gpus = 8, top = 2 }.defaults, "sweep")
t.is(table.concat(undeclared_defaults, "; "), "", "the defaults line names declared options")

-- 6. What recompute = "auto" chose is a field.  Llama-2-7B pre-training
-- on 64 H100s (PP 8, ZeRO-1) with unfused attention at 4096 tokens and
-- micro-batch 2: the s^2 score tensors do not fit, and selective
-- recomputation (Korthikanti et al. 2022: the attention core is
-- recomputed) is what drops them.  The choice is the least policy that
-- fits (none, then selective, then full): so it fits and the one before it
-- does not -- checked by asking for each policy.
local job = { model = "llama2-7b", gpu = "h100-sxm", gpus = 64, pp = 8, zero = 1, flash = false,
              seq = 4096, batch = 2, method = "pretrain" }
local function j(extra)
  local a = {}
  for k, v in pairs(job) do a[k] = v end
  for k, v in pairs(extra) do a[k] = v end
  return a
end
local m = gp.memory(j { recompute = "auto" })
t.is(m.recompute, "selective", "memory: recompute is the policy chosen")
t.is(m.recompute_auto, true, "memory: recompute_auto = true")
t.is(m.fits, true, "memory: the choice fits")
t.is(gp.memory(j { recompute = "none" }).fits, false, "memory: the policy before it does not")
local function has_default(r, s)
  for _, d in ipairs(r.defaults) do if d:find(s, 1, true) then return true end end
  return false
end
t.ok(has_default(m, "recompute=selective (auto: the least that fits)"),
  "memory: the defaults line says the same")
local chosen = gp.memory(j { recompute = "selective" })
t.is(chosen.total, m.total, "memory: the chosen policy asked for gives the same bytes")
t.is(chosen.recompute, "selective", "memory: recompute given is recompute in the result")
t.is(chosen.recompute_auto, nil, "memory: no recompute_auto when it was given")
local tr = gp.train(j { recompute = "auto", global_batch = 64 })
t.is(tr.recompute, "selective", "train: the same choice as gp.memory's")
t.is(tr.recompute_auto, true, "train: recompute_auto = true")
local tg = gp.train(j { recompute = "selective", global_batch = 64 })
t.is(tg.step_s, tr.step_s, "train: the chosen policy asked for gives the same step")
t.is(tg.recompute_auto, nil, "train: no recompute_auto when it was given")
-- Nothing fits: the most saving policy, and still marked as chosen.
local big = gp.memory { model = "llama2-70b", gpu = "h100-sxm", recompute = "auto", seq = 4096 }
t.ok(big.recompute == "full" and big.recompute_auto == true and not big.fits,
  "memory: nothing fits -- full, chosen automatically")
t.is(gp.memory(with { method = "infer" }).recompute, nil, "memory: inference has no recompute")

t.done_testing()
