-- followups16: user-facing consistency.
local t = require "tap"
local gp = require "gpuplan"

-- 1. An unknown key is worded once (gpuplan.args unknown_option), by
-- every gp.* entry point: gp.infer and gp.comm said "unknown argument",
-- gp.render and gp.prices.cheapest "unknown key", job:step "unknown
-- field", where gp.train said "unknown option".  Each is misspelt one
-- edit from a name it takes, so each must also name that name.
local M, H = "llama3-8b", "h100-sxm"
local job = { model = M, gpu = H, gpus = 8 }
local function with(extra)
  local o = {}
  for k, v in pairs(job) do o[k] = v end
  for k, v in pairs(extra) do o[k] = v end
  return o
end
local tjob = gp.train_job(job)
local rjob = gp.rl_job { model = "qwen2.5-7b", gpu = H, gpus = 16, prompts = 64, group = 8,
                         response_len = 2048, response_max = 8192 }
local calls = {
  { "memory: unknown option 'sequ' (did you mean 'seq'?)", gp.memory, with { sequ = 1 } },
  { "train: unknown option 'sequ' (did you mean 'seq'?)", gp.train, with { sequ = 1 } },
  { "train: unknown option 'sequ' (did you mean 'seq'?)", gp.train_job, with { sequ = 1 } },
  { "sweep: unknown option 'sequ' (did you mean 'seq'?)", gp.sweep, with { sequ = 1 } },
  { "rl: unknown option 'grup' (did you mean 'group'?)", gp.rl, with { grup = 1 } },
  { "infer: unknown option 'inpt' (did you mean 'input'?)", gp.infer, with { inpt = 1 } },
  { "infer_plan: unknown option 'targt' (did you mean 'target'?)", gp.infer_plan,
    with { targt = 1 } },
  { "comm: unknown option 'byts' (did you mean 'bytes'?)", gp.comm,
    { op = "all_reduce", byts = 1, gpus = 8, gpu = H } },
  { "roofline: unknown option 'mdel' (did you mean 'model'?)", gp.roofline,
    { gpu = H, mdel = M } },
  { "catalog: unknown option 'dir' (did you mean 'dirs'?)", gp.catalog, { dir = {} } },
  { "policy.fastest: unknown option 'dedline' (did you mean 'deadline'?)", gp.policy.fastest,
    { dedline = "3d" } },
  { "vlm.tokens: unknown option 'imags' (did you mean 'images'?)", gp.vlm.tokens,
    { model = "qwen2-vl-7b", imags = 1 } },
  { "model_from_hf: unknown option 'nme' (did you mean 'name'?)", gp.model_from_hf,
    "catalog/models", { nme = "x" } },
}
for _, c in ipairs(calls) do
  local want, fn = c[1], c[2]
  t.raises(function() fn(table.unpack(c, 3)) end, want, want, true)
end
t.raises(function() gp.render({ { a = 1 } }, { formt = "csv" }) end,
  "render: opts: unknown option 'formt' (did you mean 'format'?)", "render's opts", true)
t.raises(function() gp.prices.cheapest(gp.catalog(), H, { curency = "EUR" }) end,
  "prices.cheapest: opts: unknown option 'curency' (did you mean 'currency'?)",
  "prices.cheapest's opts", true)
-- job:step's layout is checked by the engine's binding (engine/lgp_field.c),
-- in the same words
t.raises(function() tjob:step { tpp = 2 } end, "step: unknown option 'tpp' (did you mean 'tp'?)",
  "gp.train_job's job:step", true)
t.raises(function() rjob:step { tpp = 2 } end, "unknown option 'tpp' (did you mean 'tp'?)",
  "gp.rl_job's job:step", true)
-- a model's own table stays a description: its keys are fields, as a
-- catalog file's are
local m = {}
for k, v in pairs(gp.catalog():get("models", M)) do m[k] = v end
m.hiddn = 1
t.raises(function() gp.core().model_params(m) end, "model: unknown field 'hiddn'",
  "a description table's key is a field", true)

t.done_testing()
