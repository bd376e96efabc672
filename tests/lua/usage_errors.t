-- A usage refusal (gpuplan.args usage; gp_usage in the engine) is marked
-- for the command line, which exits 2 on it, and stays what a script
-- always caught: a plain string, positioned at the script's line, naming
-- the Lua keys.  The mark is the message's words kept beside it:
-- args.is_usage answers for a message under the "name: " heads a
-- re-raise puts in front of it, and for no other refusal.
local t = require "tap"
local gp = require "gpuplan"
local args = require "gpuplan.args"

local me = debug.getinfo(1, "S").short_src
local H, M8 = "h100-sxm", "llama3-8b"

-- fn's error on this file's line `line`: a string, exactly want there.
local function caught(fn, line, want, usage, name)
  local ok, e = pcall(fn)
  t.ok(not ok, name .. ": refused")
  t.is(type(e), "string", name .. ": a string, as every refusal")
  t.is(e, string.format("%s:%d: %s", me, line, want), name .. ": the message, at the script's line")
  t.is(args.is_usage(e), usage, name .. (usage and ": marked a usage refusal" or ": not marked"))
end

-- Usage refusals: each is two options that do not go together.
-- gpuplan.memory (through gp.train)
caught(function() local r = gp.train { model = M8, gpu = H, gpus = 8, vpp = 2 } return r end, debug.getinfo(1, "l").currentline,
  "train: vpp 2 needs a pipeline (pp > 1; got pp 1)", true, "train vpp without pp")
-- the engine's kernel (memory_layout.c gp_usage) through the binding
caught(function() local r = gp.train { model = M8, gpu = H, gpus = 8, offload = "optimizer" } return r end, debug.getinfo(1, "l").currentline,
  "train: offload needs a ZeRO stage (zero 1, 2 or 3: DeepSpeed offloads through its ZeRO optimizer), got zero 0",
  true, "train offload at zero 0")
caught(function() local r = gp.rl { model = M8, gpu = H, gpus = 8, base_checkpoint = true } return r end, debug.getinfo(1, "l").currentline,
  "rl: base_checkpoint needs response_max: the mean is assumed as a share of the limit", true,
  "rl base_checkpoint without response_max")
caught(function() local r = gp.infer { model = M8, gpu = H, prefill_gpus = 2 } return r end, debug.getinfo(1, "l").currentline,
  "infer: prefill_gpus needs disagg = true", true, "infer prefill_gpus without disagg")
-- refused before the search, naming the list's 0 (it was the engine's
-- refusal of the search's first layout, "sweep: <layout>: ...": newuser11)
caught(function() local r = gp.sweep { model = M8, gpu = H, gpus = 8, offload = "optimizer", zero = 0 } return r end, debug.getinfo(1, "l").currentline,
  "sweep: offload optimizer goes through DeepSpeed's ZeRO optimizer: zero 0 cannot be searched "
  .. "with it (give stages 1, 2 or 3)", true, "sweep offload at zero 0")

-- Refusals of a job that cannot run on this card or model: not marked.
-- (gp.memory's refusals open with "memory: " as its others do; gpuplan fit drops it)
caught(function() local r = gp.memory { model = M8, gpu = "a100-sxm-80gb", precision = "fp8" } return r end, debug.getinfo(1, "l").currentline,
  "memory: fp8 training needs fp8 tensor cores; gpu a100-sxm-80gb has none (bf16 or fp16 instead)", false,
  "fp8 on an A100")
caught(function() local r = gp.rl { model = M8, gpu = H, gpus = 8, rollout_ep = 2 } return r end, debug.getinfo(1, "l").currentline,
  "rl: rollout_ep 2 given for a dense model", false, "rollout_ep on a dense model")
-- a bad value is an error of its own kind (exit 1), not marked
caught(function() local r = gp.train { model = M8, gpu = H, gpus = 0 } return r end, debug.getinfo(1, "l").currentline,
  "train: gpus must be a whole number 1..16777216 (got 0)", false, "gpus 0")

-- The heads: a re-raise under another name keeps the mark ("train: ..."
-- as "sweep: ..." or "rl: ..."; an engine message under "rl: training
-- step: "), a position in front is set aside, a traceback after it too.
local body = "vpp 2 needs a pipeline (pp > 1; got pp 1)"
t.ok(args.is_usage("sweep: " .. body), "re-raised as sweep's")
t.ok(args.is_usage("x.lua:3: rl: " .. body .. "\nstack traceback:\n\t[C]: in ?"),
  "a position and a traceback set aside")
t.ok(not args.is_usage("validate: case 'x' (id 2): " .. body),
  "under words that are no name (a case file's reason): not the command's usage error")
t.ok(not args.is_usage(body .. " (and more)"), "another message that begins the same: not marked")
t.ok(not args.is_usage({ msg = body }), "a table: not this mark (cli.usage tables carry their own)")
-- args.usage returns the message as given
t.is(args.usage("x: y needs z"), "x: y needs z", "args.usage returns its message")
t.ok(args.is_usage("plan: y needs z"), "... and marks its words under any name")

t.done_testing()
