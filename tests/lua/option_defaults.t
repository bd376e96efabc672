-- Issue 20.6: the engine's defaults are the declared ones.  core.DEFAULTS
-- is what core.train takes for a field left out (engine/lgp_train.c's
-- train_desc); lua/gpuplan/options.lua declares each option's default
-- value (what gpuplan.memory fills in and --help shows).  Where the
-- declaration is a plain value (a number, on or off, a name) the
-- engine's must be that value: a default changed on one side only fails
-- here.  Exact comparison: both are literals.
local t = require "tap"
local core = require "gpuplan.core"
local options = require "gpuplan.options"

-- The declared default of d as a value, or nil when it is prose ("from
-- --stack and --precision") or a list (plan's "1,2,4").  A table's first
-- entry is the default of most commands; the others name their own.
local function value(d)
  if d.value ~= nil and type(d.value) ~= "function" then return d.value end
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

-- The "defaults assumed" line says the declared values: gpuplan.memory
-- fills each default from the declaration (options.default), so a
-- literal hard-coded beside it would show here.  A fine-tuning job on
-- one GPU leaves method, zero, seq, batch, recompute, flash, stack,
-- optimizer and precision to their defaults.
local gp = require "gpuplan"
local r = gp.memory { model = "llama3-8b", gpu = "h100-sxm" }
local said = {}
for _, e in ipairs(r.defaults) do
  local k, v = e:match("^([%w_]+)=([^ ]+)")
  if k then said[k] = v end
end
local checked = 0
for _, k in ipairs { "method", "zero", "seq", "batch", "recompute", "flash", "stack",
                     "optimizer", "precision" } do
  local v = options.default(k, { method = said.method, model = { max_seq = 8192 } })
  t.is(said[k], tostring(v), k .. ": the defaults line says the declared " .. tostring(v))
  checked = checked + 1
end
-- A job's declared defaults follow from it: pre-training runs the
-- Megatron stack at the model's context up to 8192 (llama3-8b: 8192).
t.is(options.default("stack", { method = "pretrain" }), "megatron", "stack: pretrain -> megatron")
local seq, text = options.default("seq", { method = "pretrain", model = { max_seq = 131072 } })
t.is(seq, 8192, "seq: pretrain at the context, at most 8192")
t.is(text, "seq=8192 (the model's context, at most 8192)", "seq: its words on the line")

-- Quantities need their unit: a bare number is refused naming the
-- option (6 what?), on every command that reads one.
local function refused(f, want, name)
  local ok, err = pcall(f)
  t.ok(not ok and tostring(err):find(want, 1, true) ~= nil,
    name .. " (got " .. tostring(err) .. ")")
end
refused(function() gp.infer { model = "llama3-8b", gpu = "h100-sxm", memory = "6" } end,
  "infer: memory '6' needs a unit, e.g. 6GB", "infer memory '6' refused")
refused(function() gp.memory { model = "llama3-8b", capacity = "80" } end,
  "memory: capacity '80' needs a unit, e.g. 6GB", "memory capacity '80' refused")
refused(function() gp.train { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, zero = 1,
  offload = "optimizer", host_bw = "50" } end,
  "train: host_bw '50' needs a unit, e.g. 200GB/s", "train host_bw '50' refused")
-- With the unit the same values are taken (80GiB: 80 x 2^30 B).
t.is(gp.memory { model = "llama3-8b", capacity = "80GiB" }.usable ~= nil, true,
  "capacity '80GiB' accepted")

-- Issue 20.6: the resolve step checks every value by its declared kind
-- and range (options.check), before any use: a count is a whole number
-- 1..2^24, a fraction in [0, 1], a quantity its unit's number >= 0, a
-- declared range overrides the kind's (images 0..2^24: none is fine).
-- Each of these was accepted in silence where the command did not use
-- it (a negative NIC count on one node, a malformed bandwidth unused).
refused(function() gp.train { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, nics = -1 } end,
  "train: nics must be a whole number 0..16777216 (got -1)", "train nics -1 refused")
refused(function() gp.infer { model = "llama3-8b", gpu = "h100-sxm", host_bw = "5xx" } end,
  "infer: host_bw: bad bandwidth '5xx'", "infer host_bw '5xx' refused unused")
refused(function() gp.infer { model = "llama3-8b", gpu = "h100-sxm", pcie_bw = -1 } end,
  "infer: pcie_bw must be at least 0 B/s (got -1)", "a negative bandwidth refused")
refused(function() gp.memory { model = "llama3-8b", gpu = "h100-sxm", microbatches = 1.5 } end,
  "memory: microbatches must be a whole number 0..16777216 (got 1.5)", "1.5 micro-batches refused")
refused(function() gp.rl { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, filter_keep = 2 } end,
  "rl: filter_keep must be a number in (0, 1] (got 2)", "a fraction above 1 refused")
t.ok(pcall(gp.memory, { model = "llama3-8b", gpu = "h100-sxm", images = 0 }),
  "images 0: a declared range's low end accepted")
-- options.check itself: the value back (a quantity as its number), or
-- nil and the message naming the name it is given to show.
t.is(options.check("host_bw", "50GB/s", "train"), 50e9, "check: 50GB/s -> 5e10 B/s")
t.is(select(2, options.check("host_bw", "50", "train", "--host-bw")),
  "--host-bw '50' needs a unit, e.g. 200GB/s", "check: the CLI's flag named")
t.is(options.check("tp_max", 0, "plan") == nil, true, "check: a count 0 refused")
-- plan's variant (a list of values to search) is its own reader's.
t.is(options.check("zero", "0,1", "plan"), "0,1", "check: plan's own variant left alone")

t.done_testing()
