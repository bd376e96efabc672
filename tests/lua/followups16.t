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


-- 3. The scaling efficiency's base (the job's fastest layout on the
-- smallest count that fits) skips the counts whose model states alone
-- overflow a GPU and keeps each base found, with the same answers.
-- GPT-3 175B, pretrain, megatron-18 recipe: 18 B a parameter (2 weights,
-- 4 grads, 4 master, 8 Adam) x 174,604,259,328 = 3.14 TB of states; on
-- 32 A100-80GB that is 98.2 GB a GPU at the least (ZeRO-3, TP 1, PP 1),
-- past the card's 75.3 GB usable, so no layout of 32 fits and the base
-- is 64 (49.1 GB of states).
do
  local job = { model = "gpt3-175b", method = "pretrain", seq = 2048, global_batch = 1536,
                gpu = "a100-sxm-80gb", gpus = 4096, tokens = 300e9, top = 1 }
  local r = gp.sweep(job)
  t.is(r.results[1].scaling_base, 64, "GPT-3 175B on A100-80GB: the base is 64 GPUs")
  local m = gp.memory { model = "gpt3-175b", gpu = "a100-sxm-80gb", gpus = 32, method = "pretrain",
                        seq = 2048, tp = 1, pp = 1, zero = 3 }
  local states = 0
  for _, c in ipairs(m.components) do
    if c.name == "weights" or c.name == "grads" or c.name == "master" or c.name == "optimizer" then
      states = states + c.bytes
    end
  end
  -- 18 x 174,604,259,328 / 32 = 98,214,895,872 B, exactly (whole bytes)
  t.is(states, 18 * 174604259328 / 32, "32 GPUs: 98.2 GB of states a GPU under ZeRO-3")
  t.ok(states > m.usable, "... past the usable memory, so 32 was never searched")
  -- the skipped count truly fits nothing: searching it says so
  t.raises(function() gp.sweep(setmetatable({ scaling_base = 32 }, { __index = job })) end,
    "scaling_base 32: no layout of the job fits 32 x a100-sxm-80gb", "a search of 32 fits nothing",
    true)
  -- the base given is the base found: the same efficiency
  local given = gp.sweep(setmetatable({ scaling_base = 64 }, { __index = job }))
  t.is(given.results[1].scaling, r.results[1].scaling, "scaling_base = 64 gives the same efficiency")
  -- a second sweep (its base kept) answers the same
  t.is(gp.json(gp.sweep(job).results), gp.json(r.results), "a second sweep: the same results")
  -- a base is kept by what was searched: a model table changed between
  -- two sweeps is searched again (24 layers of 2048: one GPU fits it)
  local small = { name = "small", layers = 24, hidden = 2048, heads = 16, ffn_hidden = 8192,
                  vocab = 32000 }
  local sjob = { model = small, gpu = "a100-sxm-80gb", gpus = 64, tokens = 1e10, top = 1 }
  t.is(gp.sweep(sjob).results[1].scaling_base, 1, "a 1.3B model: base 1 GPU")
  small.hidden, small.heads, small.ffn_hidden, small.layers = 12288, 96, 49152, 96
  t.is(gp.sweep(sjob).results[1].scaling_base, 64, "the same table grown to 175B: base 64")
end

-- 4. Names in either case in Lua too, as the command line reads them:
-- gp.train{method = "LoRA"} was "unknown method 'LoRA'", a sweep's
-- recompute = {"Selective"} the engine's refusal, gp.comm's algo = "Ring"
-- "unknown algo".
t.is(gp.train { model = M, gpu = H, gpus = 8, method = "LoRA" }.method, "lora", "train: LoRA read as lora")
t.is(gp.memory { model = M, gpu = H, method = "QLoRA" }.method, "qlora", "memory: QLoRA read as qlora")
do
  local rc = { "Selective", "FULL" }
  local r = gp.sweep { model = M, gpu = H, gpus = 8, recompute = rc, top = 50 }
  local seen = {}
  for _, c in ipairs(r.results) do seen[c.recompute] = true end
  t.ok(seen.selective and seen.full and not seen.none, "sweep: Selective and FULL searched, none not")
  t.is(rc[1] .. "," .. rc[2], "Selective,FULL", "... the caller's list left as given")
end
t.is(gp.comm { system = "dgx-h100", op = "all_reduce", bytes = 1e6, algo = "Ring" }.algo, "ring",
  "comm: Ring read as ring")
t.is(gp.comm { system = "dgx-h100", op = "all_reduce", bytes = 1e6, algo = "Tree" }.algo, "tree",
  "comm: Tree read as tree (the algorithm forced, not the tuner's)")

t.done_testing()
