-- stage_layers on a job's step (gp.train_job's job:step) is taken and
-- checked as gp.train takes it: the one rule, gpuplan.memory stage_list,
-- which the job calls for a step that gives the list (engine
-- lgp_job_step).  Before it the step read the text alone, on every stack:
-- the hf and DeepSpeed stacks priced a list gp.train refuses, the table
-- {9, 9, 8, 6} was refused as "must be a string", and "" cleared the
-- job's own list (the step priced the uniform split).
-- gp.rl_job's step reads its actor's list by the same rule.
-- Run with ./gpuplan run tests/lua/stage_layers_step.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(11)

-- Llama 3 8B (32 layers) on PP 4, TP 2, 8 GPUs, as tests/lua/stage_layers.t.
local base = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, pp = 4, tp = 2,
               seq = 4096, global_batch = 64, stack = "megatron" }
local STACK = "stage_layers is Megatron-Core's layout (pipeline_model_parallel_layout); "
  .. "stack = %s partitions by its own rule (the megatron stack takes it)"

-- 1. The hf and DeepSpeed stacks partition by their own rule: gp.train
-- refuses the list there, and so does a step of their job, in the same
-- words after the step's head, as text and as a table.
for _, stack in ipairs { "hf", "deepspeed" } do
  local want = string.format(STACK, stack)
  local ok, e = pcall(gp.train, t.with(base, { stack = stack, stage_layers = { 9, 9, 8, 6 } }))
  local job = gp.train_job(t.with(base, { stack = stack }))
  local oks, es = pcall(job.step, job, { tp = 2, pp = 4, stage_layers = "9,9,8,6" })
  local okt, et = pcall(job.step, job, { tp = 2, pp = 4, stage_layers = { 9, 9, 8, 6 } })
  t.ok(not ok and tostring(e):find(want, 1, true) and not oks
    and tostring(es):find("step: " .. want, 1, true) and not okt
    and tostring(et):find("step: " .. want, 1, true),
    stack .. ": the step refuses stage_layers as gp.train does, text or table")
end

-- 2. The table form, gp.train's {9, 9, 8, 6}: the step takes it and
-- prices what the text and gp.train price (the same train_step on the
-- same config: exact).
local job = gp.train_job(base)
local s = { tp = 2, pp = 4, stage_layers = { 9, 9, 8, 6 } }
local ok, r = pcall(job.step, job, s)
local a = gp.train(t.with(base, { stage_layers = { 9, 9, 8, 6 } }))
t.ok(ok and r.step_s == a.step_s and r.mem_bytes == a.memory.total and r.stage_layers == 9,
  "{9, 9, 8, 6}: the step prices gp.train's layout (9 layers on the slowest stage)")
t.ok(job:step({ tp = 2, pp = 4, stage_layers = "9,9,8,6" }).step_s == r.step_s,
  "the text 9,9,8,6 prices as the table")
t.ok(type(s.stage_layers) == "table" and s.stage_layers[4] == 6,
  "the caller's step table keeps its own list (the step reads a copy)")
-- A table's refusals are gp.train's, naming the entry.
t.raises(function() job:step { tp = 2, pp = 4, stage_layers = { 9, nil, 8, 6 } } end,
  "step: stage_layers[2] must be a whole number of layers >= 1 (got nil)",
  "a hole in the table: refused as gp.train refuses it", true)
t.raises(function() job:step { tp = 2, pp = 4, stage_layers = { 9, 9, 14, 0 } } end,
  "step: stage_layers[4] must be a whole number of layers >= 1 (got 0)",
  "an empty stage: refused as gp.train refuses it", true)

-- 3. "" is no list: gp.train refuses it as empty, and so does the step
-- of a job made with a list (it cleared the job's list before).
local EMPTY = "stage_layers is empty: give each pipeline stage's layers"
local okg, eg = pcall(gp.train, t.with(base, { stage_layers = "" }))
t.ok(not okg and tostring(eg):find(EMPTY, 1, true), "gp.train: \"\" is refused as empty")
local listed = gp.train_job(t.with(base, { stage_layers = { 9, 9, 8, 6 } }))
t.raises(function() listed:step { tp = 2, pp = 4, stage_layers = "" } end, "step: " .. EMPTY,
  "job:step: \"\" is refused as empty, not the job's list cleared", true)
-- the job keeps its list: a step that gives none prices 9,9,8,6
t.ok(listed:step({ tp = 2, pp = 4 }).step_s == a.step_s,
  "after the refusal the job's own 9,9,8,6 prices the step")

-- 4. gp.rl_job's step, its actor's layout: the same rule (the table
-- taken as its text prices, the hf stack and "" refused in its words).
local rbase = { model = "llama3-8b", gpu = "h100-sxm", gpus = 16, pp = 4, tp = 2 }
local rj = gp.rl_job(t.with(rbase, { stack = "megatron" }))
local rh = gp.rl_job(t.with(rbase, { stack = "hf" }))
local okr, rt = pcall(rj.step, rj, { tp = 2, pp = 4, stage_layers = { 9, 9, 8, 6 } })
local oke, ee = pcall(rj.step, rj, { tp = 2, pp = 4, stage_layers = "" })
local okh, eh = pcall(rh.step, rh, { tp = 2, pp = 4, stage_layers = "9,9,8,6" })
t.ok(okr and rt.step_s == rj:step({ tp = 2, pp = 4, stage_layers = "9,9,8,6" }).step_s
  and not oke and tostring(ee):find("step: " .. EMPTY, 1, true)
  and not okh and tostring(eh):find("step: " .. string.format(STACK, "hf"), 1, true),
  "gp.rl_job: the table as its text, \"\" refused as empty, the hf stack refused")
