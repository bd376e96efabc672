-- gp.rl_job: gp.rl's job resolved once, the actor's layouts priced by
-- job:step with the memo of engine/rl.h (rl_cache).  Each step is the same
-- rl_step as gp.rl (the memo only skips work whose inputs it has seen), so
-- the figures are equal exactly, not within a tolerance.
-- Run with ./gpuplan run tests/lua/rl_job.t.
local t = require "tap"
local gp = require "gpuplan"

local with = t.with

-- GRPO on Qwen2.5-7B, 16 H100s colocated (bench/bench.lua's job).
local base = { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 16, zero = 3,
               recompute = "full", prompts = 64, group = 8, prompt_len = 512,
               response_len = 2048, response_max = 8192, price = 2.0 }
local job = gp.rl_job(base)

-- Layouts that move what the memo keys on: the rollout's TP (the actor's
-- tp, gp.rl's default), the ZeRO stage (what stays resident beside the
-- engine), and what it does not (micro-batch, recomputation: the same
-- rollout served from the memo the second time).
local layouts = {
  { tp = 1, zero = 3, batch = 1, recompute = "full" },
  { tp = 1, zero = 3, batch = 2, recompute = "selective" },
  { tp = 2, zero = 1, batch = 1, recompute = "full", sp = true },
  { tp = 2, zero = 1, batch = 4, recompute = "none", sp = true },
  { tp = 4, zero = 3, batch = 1, recompute = "full", rollout_tp = 2 },
  { tp = 1, zero = 2, batch = 2, recompute = "full", global_batch = 128 },
}
for _, l in ipairs(layouts) do
  local g = gp.rl(with(base, l))
  local r = job:step(l)
  local label = string.format("rl_job:step tp %d zero %d batch %d %s%s", l.tp, l.zero,
    l.batch, l.recompute, l.rollout_tp and (" rollout_tp " .. l.rollout_tp) or "")
  t.is(r.step_s, g.step_s, label .. ": step == gp.rl's")
  t.is(r.fits, g.fits, label .. ": fits == gp.rl's")
  t.is(r.samples_per_s, g.samples_per_s, label .. ": samples/s == gp.rl's")
  t.is(r.cost_step, g.cost_step, label .. ": cost == gp.rl's")
  t.is(r.peak_memory, g.peak_memory, label .. ": peak memory == gp.rl's")
  local rt = r:table()
  t.is(rt.rollout.engines, g.rollout.engines, label .. ": r:table() has the rollout")
  t.is(rt.rollout.kv_budget, g.rollout.kv_budget, label .. ": its KV budget == gp.rl's")
end

-- A result given back is filled again: the same object, the new layout's figures.
local r1 = job:step { tp = 1, zero = 3, batch = 1 }
local r2 = job:step({ tp = 2, zero = 1, batch = 1, sp = true }, r1)
t.ok(rawequal(r1, r2), "job:step(layout, r) returns r")
t.is(r2.step_s, gp.rl(with(base, { tp = 2, zero = 1, sp = true })).step_s,
  "and r holds the new layout's step")
t.is(r2.gpus, 16, "gpus: the job's 16")
t.is(r2.why, nil, "a step that fits has no why")

-- A rollout that cannot run: no time, as gp.rl says (rollout_fits false).
-- Llama-3-70B on 8 H100s at ZeRO-0 keeps 16 B/parameter resident (1.1 TB
-- over 8 GPUs): nothing is left for the engine.
local big = { model = "llama3-70b", gpu = "h100-sxm", gpus = 8, prompts = 8,
              response_len = 512 }
local rb, gb = gp.rl_job(big):step(), gp.rl(big)
t.is(rb.rollout_fits, false, "70B at ZeRO-0 on 8 GPUs: the rollout cannot run")
t.is(rb.rollout_fits, gb.rollout_fits, "as gp.rl says")
t.is(rb.step_s, nil, "no step time then")
t.is(rb.samples_per_s, nil, "nor throughput")
t.is(rb.fits, false, "and it does not fit")
t.like(rb.why, "rollout", "why names the rollout", true)
-- Its whole table says the same: no step, throughput or cost to misread
-- (the trainer's phases alone used to come back as "step").
local tb = rb:table()
t.is(tb.step, nil, ":table() has no step either")
t.is(tb.samples_per_s, nil, ":table() has no throughput")
t.is(tb.cost_step, nil, ":table() has no cost")
t.ok(type(tb.phases) == "table" and tb.fits == false, ":table() keeps the phases and fits")
-- A step that runs keeps its time in the table, equal to the handle's.
t.is(r1:table().step, r1.step_s, ":table().step is the handle's step_s")

-- Every field declared for the result (gpuplan.results) reads.
local declared = require "gpuplan.results"
for _, f in ipairs(declared.FIELDS) do
  if f.results.rl_job_step then
    t.ok(pcall(function() return r1[f.name] end), "rl_job:step result reads " .. f.name)
  end
end

-- MoE parallel folding in the actor (Megatron-Core's etp x ep x edp grid
-- over the stage's tp x cp x dp GPUs): Qwen3-30B-A3B on 16 GPUs at TP 2
-- with EP 16 folds only with etp 1 (etp defaults to tp: 2 x 16 does not
-- divide 16).  The RL step's update is gp.train's step of the same
-- layout over the step's samples -- 64 x 8 = 512 sequences of 512 + 1024
-- tokens (the default lengths) in one optimizer step -- so the two are
-- the same train_step: equal exactly.
do
  local moe = { model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 16, tp = 2, sp = true,
                ep = 16, zero = 1, recompute = "full" }
  t.raises(function() gp.rl(moe) end, "etp 2 x ep 16 must divide tp*cp*dp = 16",
    "EP 16 at TP 2 without etp: refused", true)
  local r = gp.rl(with(moe, { etp = 1 }))
  local tr = gp.train(with(moe, { etp = 1, method = "full", seq = 512 + 1024,
                                  global_batch = 512 }))
  t.is(r.update.step_s, tr.step_s, "etp 1: the actor's update == gp.train's folded step")
  local mj = gp.rl_job(with(moe, { tp = 1, ep = 1 }))
  local s = mj:step { tp = 2, sp = true, ep = 16, etp = 1, rollout_tp = 2 }
  t.is(s:table().update.step_s, r.update.step_s, "rl_job:step takes etp")
end

-- Misuse.
t.raises(function() job:step({ tp = 1 }, {}) end, "rl_result expected", "r must be a result",
  true)
t.raises(function() job:step { tpp = 2 } end, "step: unknown option 'tpp'", "unknown step field",
  true)
t.raises(function() job:step { tp = 3 } end, "the 16 training GPUs are not a multiple of "
  .. "tp*pp*cp = 3", "a layout that does not divide the pool", true)
t.raises(function() job:step { zero = 5 } end, "step.zero must be an integer in 0..3",
  "zero out of range", true)
t.raises(function() return job:step().nope end, "rl result: no field 'nope'",
  "an unknown result field", true)
t.raises(function() gp.rl_job(with(base, { rollout_gpus = "auto" })) end,
  "rollout_gpus = auto searches the split", "rl_job: no split search", true)
t.raises(function() gp.rl_job(with(base, { group_size = 8 })) end, "group_size",
  "rl_job: gp.rl's option check", true)

t.done_testing()
