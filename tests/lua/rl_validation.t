-- gp.rl's validation pass inside the step (val_every, val_prompts): verl's
-- trainer.test_freq runs _validate() within the step's timer
-- (verl/trainer/ppo/ray_trainer.py at 65c59c7: marked_timer("testing")
-- inside marked_timer("step")), a weight sync and the rollout of the
-- validation prompts, one answer each.  gp.rl prices it as the same job
-- with val_prompts prompts of group 1, its rollout and weight_sync phases,
-- over val_every steps.  Run with ./gpuplan run tests/lua/rl_validation.t.
local t = require "tap"
local gp = require "gpuplan"
local cjson = require "cjson"

local with, phase = t.with, t.phase

t.plan(28)

local base = { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 8, zero = 3, prompts = 64,
               group = 8, prompt_len = 512, response_len = 1024, response_max = 4096,
               offload_states = true }
local r0 = gp.rl(base)
local r1 = gp.rl(with(base, { val_every = 5, val_prompts = 40 }))
-- the pass: 40 prompts, one answer each (the training side of that run is
-- not the pass's: one sample a micro-batch keeps its batch checks quiet)
local rp = gp.rl(with(base, { prompts = 40, group = 1, batch = 1 }))

local named = false
for _, ph in ipairs(r0.phases) do named = named or ph.name == "validation" end
t.ok(r0.validation == nil and not named,
  "default: no validation, no phase")
-- Hand: the pass = the 40-prompt run's rollout + weight_sync; the phase is
-- the pass / 5.  Same engine arithmetic on both sides: 1e-9.
local pass = phase(rp, "rollout").seconds + phase(rp, "weight_sync").seconds
t.near(r1.validation.pass_s, pass, 1e-9, "the pass: the 40-prompt rollout and its weight sync")
t.near(phase(r1, "validation").seconds, pass / 5, 1e-9, "the phase: the pass over val_every 5")
t.near(r1.step_s, r0.step_s + pass / 5, 1e-9, "the step: the training step and the phase")
-- The pass waits for its longest answer: its rollout is no shorter than
-- the 4096-token limit's tail that the step's own rollout has (the same
-- limit, fewer sequences a batch: each decode step no slower), and no
-- longer than the step's 512-sample rollout.
t.ok(phase(rp, "rollout").seconds <= phase(r0, "rollout").seconds
  and phase(rp, "rollout").seconds >= r0.rollout.tail,
  "the pass's rollout: between the step's tail and its whole rollout")
-- Throughput over the longer step: 512 samples / step_s; cost scales with
-- the step's seconds.
t.near(r1.samples_per_s, 512 / r1.step_s, 1e-9, "samples/s over the longer step")
t.near(r1.cost_step, r0.cost_step * r1.step_s / r0.step_s, 1e-9, "the step's cost scales")
-- the phase's share is of the longer step
t.near(phase(r1, "validation").share, pass / 5 / r1.step_s, 1e-9, "the phase's share")

-- Bad input: one of the two alone, a count that is not one, gp.rl_job.
t.raises(function() gp.rl(with(base, { val_every = 5 })) end,
  "val_every and val_prompts come together", "val_every alone refused", true)
t.raises(function() gp.rl(with(base, { val_every = 0, val_prompts = 40 })) end,
  "val_every must be a whole number", "val_every 0 refused", true)
t.raises(function() gp.rl_job(with(base, { val_every = 5, val_prompts = 40 })) end,
  "gp.rl_job prices the training step", "gp.rl_job refuses them", true)

-- val_batch (verl's data.val_batch_size): the pass's prompts in batches of
-- that many, one generate call and one weight sync each, in turn.  Hand:
-- 40 prompts at val_batch 16 = two batches of 16 and one of 8, so the pass
-- = 2 x (16-prompt rollout + sync) + (8-prompt rollout + sync), each the
-- one-answer run of that many prompts.  Same engine arithmetic: 1e-9.
local rb = gp.rl(with(base, { val_every = 5, val_prompts = 40, val_batch = 16 }))
local r16 = gp.rl(with(base, { prompts = 16, group = 1, batch = 1 }))
local r8 = gp.rl(with(base, { prompts = 8, group = 1, batch = 1 }))
local function one(r) return phase(r, "rollout").seconds + phase(r, "weight_sync").seconds end
t.near(rb.validation.pass_s, 2 * one(r16) + one(r8), 1e-9,
  "val_batch 16: two batches of 16 and one of 8, each with its sync")
-- Each batch waits for its own longest answer and brings its own sync:
-- three batches are slower than one pass of 40 (the 4096-token tail
-- three times), the case the published logs show (6 batches of 256).
t.ok(rb.validation.pass_s > r1.validation.pass_s, "batches in turn: slower than one pass")
-- A batch of all the prompts or more is the single pass: same figure.
t.near(gp.rl(with(base, { val_every = 5, val_prompts = 40, val_batch = 40 })).validation.pass_s,
  r1.validation.pass_s, 1e-12, "val_batch >= val_prompts: one pass")
t.raises(function() gp.rl(with(base, { val_batch = 16 })) end,
  "val_batch is the validation pass's batch", "val_batch without validation refused", true)

-- The command line: the same two options, the phase in the table, on the
-- rollout's pool (colocated: both).
local p = io.popen("./gpuplan rl qwen2.5-7b --gpu h100-sxm --gpus 8 --zero 3 --prompts 64 "
  .. "--group 8 --prompt-len 512 --response-len 1024 --response-max 4096 --offload-states "
  .. "--val-every 5 --val-prompts 40 2>&1")
local out = p:read("a")
p:close()
t.like(out, string.format("validation +both +8 +%.3f", pass / 5), "CLI: the validation phase")

-- verl's DeepSeek-V3 96-H20 row states the recipe's test_freq=10 over its
-- aime-2024.parquet, AIME 2024's 30 problems 32 times each (val_kwargs.n=1):
-- 960 answers.  Hand: the pass is 960 answers to the 9632-token limit on
-- the three TP-32 engines, 963 s (the step's own 768-sample rollout is
-- 788 s), and the weight sync 127 s (the row's own sync): 1090 s / 10 =
-- 109.0 s a step, on the 1180.3 s step without it (its update and two
-- forwards at the unbalanced router the case states, parallel.moe_balance
-- none): 1289.3 s.  Tolerance
-- 2%: the rollout and sync models may move a little under other changes;
-- without the phase the step is 8.7% lower.
local doc = t.shipped_cases()
local ds
for _, c in ipairs(doc.cases or doc) do
  if c.id == "verl-0.5-grpo-deepseek-v3-h20-96" then ds = c end
end
local pr = require("gpuplan.predict.rl")(ds, gp.catalog())
t.near(pr.value, 1180.3 + 109.0, 0.02, "verl DeepSeek-V3: the step with a tenth of a pass")
-- the case field takes the option's declared range: 0 is refused
local bad = cjson.decode(cjson.encode(ds))
bad.rl.val_every = 0
local okr, e = t.read_case(bad)
t.ok(not okr and e:find("val_every", 1, true), "case: rl.val_every 0 refused, named")

-- 30 prompts (AIME 2024's problems) on DP 8: not a multiple of the
-- training ranks, and not refused -- the pass trains nothing.
local r30 = gp.rl(with(base, { val_every = 5, val_prompts = 30 }))
t.ok(r30.dp == 8 and r30.validation.prompts == 30 and r30.rollout.engines == 8,
  "30 validation prompts on DP 8 (8 engines of TP 1): priced, not refused")
-- Hand: 30 one-answer prompts over 8 engines, the busiest ceil(30 / 8) =
-- 4, the step waiting for the longest of the 30.  The same rollout as a
-- job the training side takes: actor tp 4 x cp 2 (DP 1, which divides
-- 30) with rollout_tp 1 -- the same 8 engines, the same engine memory
-- (offload_states: the trainer's states leave the GPUs, the engine has
-- the card either way; its kv_budget checked equal).  Same engine
-- arithmetic on both sides: 1e-9.
local ref = gp.rl(with(base, { prompts = 30, group = 1, tp = 4, cp = 2, rollout_tp = 1,
  batch = 1 }))
t.ok(ref.dp == 1 and ref.rollout.engines == 8 and ref.rollout.samples == 4
  and ref.rollout.kv_budget == r30.rollout.kv_budget,
  "the reference: 8 engines, the busiest with ceil(30 / 8) = 4 answers")
t.near(r30.validation.rollout_s, phase(ref, "rollout").seconds, 1e-9,
  "30 on DP 8: the pass's rollout is the 30-answer rollout on the 8 engines")
-- the weight sync is the step's own (the same trainer layout and engines)
t.near(r30.validation.sync_s, phase(r0, "weight_sync").seconds, 1e-9,
  "30 on DP 8: the pass's weight sync is the step's")
local pass30 = r30.validation.rollout_s + r30.validation.sync_s
t.near(r30.step_s, r0.step_s + pass30 / 5, 1e-9, "30 on DP 8: the step with a fifth of the pass")
local p30 = io.popen("./gpuplan rl qwen2.5-7b --gpu h100-sxm --gpus 8 --zero 3 --prompts 64 "
  .. "--group 8 --prompt-len 512 --response-len 1024 --response-max 4096 --offload-states "
  .. "--val-every 5 --val-prompts 30 2>&1")
local out30 = p30:read("a")
local ok30 = p30:close()
t.ok(ok30 and out30:find(string.format("validation +both +8 +%.3f", pass30 / 5)) ~= nil,
  "CLI: 30 validation prompts on DP 8, exit 0, the phase")

-- verl's DeepSeek-V3 row does not move from the first pricing, the case's
-- job run again with 960 prompts of one answer (global_batch unset, one
-- sample a micro-batch: valid there, 960 being a multiple of its DP),
-- its rollout and weight_sync phases: 1e-9, the same engine arithmetic.
local rlmod = require "gpuplan.rl"
local orig, seen = rlmod.rl, nil
rlmod.rl = function(o) seen = o; return orig(o) end
local okp, prd = pcall(require("gpuplan.predict.rl"), ds, gp.catalog())
rlmod.rl = orig
assert(okp and seen, prd)
local old = {}
for k, x in pairs(seen) do old[k] = x end
old.val_every, old.val_prompts, old.steps, old.filter_keep = nil, nil, nil, nil
old.prompts, old.group, old.global_batch, old.batch = 960, 1, nil, 1
local ro = gp.rl(old)
local rnew = gp.rl(seen)
t.near(rnew.validation.pass_s, phase(ro, "rollout").seconds + phase(ro, "weight_sync").seconds,
  1e-9, "verl DeepSeek-V3: the pass as the first pricing's 960-prompt job")

-- DAPO's dynamic sampling in a case (SCHEMA.md rl.filter_keep): the case's
-- job reaches gp.rl with the kept share.  Keeping half the groups
-- generates the responses of twice the prompts: a longer rollout, so a
-- longer step than the same case without it.  A share above 1 is refused
-- by the case reader, naming the field.
local nemo
for _, c in ipairs(doc.cases or doc) do
  if c.id == "nemo-rl-0.3-grpo-llama3.1-8b-h100-8" then nemo = c end
end
local dapo = cjson.decode(cjson.encode(nemo))
dapo.rl.filter_keep = 0.5
seen = nil
rlmod.rl = function(o) seen = o; return orig(o) end
local okf, pf = pcall(require("gpuplan.predict.rl"), dapo, gp.catalog())
rlmod.rl = orig
t.ok(okf and seen and seen.filter_keep == 0.5, "case rl.filter_keep 0.5 reaches gp.rl")
local p0 = require("gpuplan.predict.rl")(nemo, gp.catalog())
t.ok(okf and pf.value > p0.value, "filter_keep 0.5: a longer step than without the filter")
dapo.rl.filter_keep = 1.5
local okb, eb = t.read_case(dapo)
t.ok(not okb and tostring(eb):find("filter_keep", 1, true), "case: rl.filter_keep 1.5 refused, named")
