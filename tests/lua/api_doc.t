-- The Lua reference covers the API: every gp.* function (and every function
-- of gp's module tables) is declared in gpuplan.api, from which docs/lua.md
-- is generated, and every declared one exists.  A module gp reaches that
-- is not the API says so (api.INTERNAL).
local t = require "tap"
local gp = require "gpuplan"
local api = require "gpuplan.api"
local results = require "gpuplan.results"
local options = require "gpuplan.options"

local modules, constants = {}, {}
for _, m in ipairs(api.MODULES) do modules[m[1]] = true end

-- What gp holds: its own fields and every lazily loaded lua/gpuplan/NAME.lua.
local names = {}
for k in pairs(gp) do names[k] = true end
local lfs = require "lfs"
local root = require("gpuplan.config").root
for f in lfs.dir(root .. "/lua/gpuplan") do
  local n = f:match("^([%w_]+)%.lua$")
  if n and n ~= "init" then names[n] = true end
end
local sorted = {}
for n in pairs(names) do sorted[#sorted + 1] = n end
table.sort(sorted)

local undocumented = {}
for _, n in ipairs(sorted) do
  local v = gp[n]
  local full = "gp." .. n
  if type(v) == "function" then
    if not api.BY_NAME[full] then undocumented[#undocumented + 1] = full end
  elseif type(v) == "table" then
    if modules[full] then
      for k, f in pairs(v) do
        if type(f) == "function" and not api.BY_NAME[full .. "." .. k] then
          undocumented[#undocumented + 1] = full .. "." .. k
        end
      end
    elseif not api.INTERNAL[n] then
      undocumented[#undocumented + 1] = full .. " (a table: a module of the API or internal?)"
    end
  elseif v ~= nil then
    constants[#constants + 1] = full
  end
end
table.sort(undocumented)
t.is(table.concat(undocumented, ", "), "",
  "every gp.* function is declared in gpuplan.api (so docs/lua.md documents it)")

-- Every declared function exists, and what it names is declared.
for _, f in ipairs(api.FUNCTIONS) do
  local v = gp
  for part in f.name:gsub("^gp%.", ""):gmatch("[^.]+") do v = type(v) == "table" and v[part] or nil end
  t.ok(type(v) == "function", f.name .. " exists")
  t.ok(type(f.help) == "string" and f.help ~= "" and type(f.call) == "string",
    f.name .. ": has its call and help")
  if f.options then
    t.ok(options.FUNCTION[f.options] ~= nil, f.name .. ": options of a declared command")
  end
  if f.result and results.BY_NAME and not f.result:find(" ") then
    local kinds = {}
    for _, r in ipairs(results.RESULTS) do kinds[r[1]] = true end
    t.ok(kinds[f.result], f.name .. ": result '" .. f.result .. "' is declared in gpuplan.results")
  end
end
for n in pairs(api.INTERNAL) do
  t.ok(type(gp[n]) == "table", "gp." .. n .. ", internal, is a module")
end

-- What the reference says a catalog holds is what gp.catalog returns: each
-- cat:METHOD its result names is a method, and each kind it lists is a
-- table of entries (the sandbox's kinds, gpuplan.schema.kinds, all of them).
local cat = gp.catalog()
local cat_doc = api.BY_NAME["gp.catalog"].result
for m in cat_doc:gmatch("cat:([%w_]+)") do
  t.ok(type(cat[m]) == "function", "gp.catalog's result: cat:" .. m .. " is a method")
end
local kinds_doc = {}
for k in (cat_doc:match("kinds ([%w_, ]+)$") or ""):gmatch("[%w_]+") do kinds_doc[k] = true end
for _, tbl in pairs(require("gpuplan.schema").kinds) do
  t.ok(kinds_doc[tbl] and type(cat[tbl]) == "table", "gp.catalog's result lists the kind " .. tbl)
end
-- gp.roofline's op takes the fields its arguments name: each given (a
-- number, or a precision for prec) is accepted.
local op_doc = api.BY_NAME["gp.roofline"].args:match("op = {([^}]*)}")
local op = {}
for f in (op_doc or ""):gmatch("[%w_]+") do op[f] = f == "prec" and "bf16" or 1e9 end
t.ok(op.flop and op.bytes, "gp.roofline's op fields are listed")
local ok, e = pcall(gp.roofline, { gpu = "h100-sxm", op = op })
t.ok(ok, "gp.roofline takes the op fields docs/lua.md names")
if not ok then t.diag(e) end

-- The reference lists every function, every option of the planners and
-- every result field (docs/lua.md is checked to be current by
-- tests/cli/docs.t).
local md = require("gpuplan.docgen").lua_md()
for _, f in ipairs(api.FUNCTIONS) do
  t.ok(md:find("## `" .. f.name .. "`", 1, true), "docs/lua.md has " .. f.name)
end
for _, f in ipairs(results.FIELDS) do
  t.ok(md:find("| `" .. f.name .. "` |", 1, true), "docs/lua.md has the result field " .. f.name)
end
for _, cmd in ipairs(options.COMMANDS) do
  for name in pairs(options.keys(cmd)) do
    t.ok(md:find("| `" .. name .. "` |", 1, true), "docs/lua.md has " .. cmd .. "'s option " .. name)
  end
end
-- The keys job:step takes, as gp.train_job's and gp.rl_job's help lists
-- them ("job:step{tp =, pp =, ...}"), are the keys the engine reads
-- (engine/lgp_desc.c, the step fields): an unknown key's error lists
-- those, so a key added to the step and not to the reference, or one the
-- reference names that the step refuses, fails here.  (The help had
-- left out first_stage_layers, last_stage_layers, split_ends and
-- rl_job's rollout_ep, and named the overlaps only as "the overlaps".)
local function keys_of(list)
  local ks = {}
  for k in list:gmatch("([%a_][%w_]*)") do ks[#ks + 1] = k end
  table.sort(ks)
  return table.concat(ks, " ")
end
local function documented(name)
  local brace = api.BY_NAME[name].help:match("job:step(%b{})")
  return keys_of((brace or ""):gsub("the overlaps", ""):gsub("and ", ""))
end
local function accepted(job)
  local ok, e = pcall(job.step, job, { no_such_key = 1 })
  t.ok(not ok, "job:step refuses an unknown key")
  return keys_of(tostring(e):match("unknown option 'no_such_key' %(([^)]*)%)") or "")
end
local tjob = gp.train_job { model = "llama2-7b", gpu = "h100-sxm", gpus = 8 }
t.is(documented("gp.train_job"), accepted(tjob),
  "gp.train_job: the job:step keys docs/lua.md lists are the ones it takes")
local rjob = gp.rl_job { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 16, prompts = 64,
                         group = 8, response_len = 2048, response_max = 8192 }
t.is(documented("gp.rl_job"), accepted(rjob),
  "gp.rl_job: the job:step keys docs/lua.md lists are the ones it takes")
t.done_testing()
