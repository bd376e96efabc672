-- job:step{fsdp = ...} takes what gp.train's fsdp takes (a strategy name,
-- true: full_shard, false: none) and prices it as gp.train with that fsdp
-- does, by the same rule (gpuplan.memory's sharding, asked through the
-- job's step_sharding): the ZeRO stage of the strategy, hybrid sharding's
-- node, whole gradients under grad_sync = step, the engine's FSDP rule
-- and PyTorch FSDP's version; a step that gives none keeps the job's.
-- A step that gives zero but not fsdp is gp.train with the job's fsdp and
-- that zero: a strategy refuses a zero not its own, in gp.train's words.
-- Every equality is exact: the same train_step (rl: rl_step) on the same
-- config, so any field the step set differently would show.
-- Run with ./gpuplan run tests/lua/job_fsdp.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(37)

local STRATEGIES = { "full_shard", "shard_grad_op", "hybrid_shard", true }

-- llama3-8b pretraining on two DGX H100 nodes (16 GPUs, dp 16): hybrid
-- sharding's node (8) is smaller than the data-parallel group, so it
-- prices differently from full_shard (the strategies must not collapse).
local base = { model = "llama3-8b", gpu = "h100-sxm", gpus = 16, method = "pretrain",
  seq = 4096, global_batch = 32, batch = 1, recompute = "full" }

-- A job without FSDP, on the megatron stack and on the hf stack (whose
-- ZeRO is FSDP's and whose step takes fsdp_version 1 at zero 2/3 only:
-- a job at the default zero has version 0, which a step's strategy must
-- not keep).
for _, stack in ipairs { "megatron", "hf" } do
  local o = t.with(base, { stack = stack })
  local job = gp.train_job(o)
  for _, s in ipairs(STRATEGIES) do
    t.is(job:step { fsdp = s }.step_s, gp.train(t.with(o, { fsdp = s })).step_s,
      string.format("%s job: step{fsdp = %s} is gp.train's", stack, tostring(s)))
  end
end

local steps = {}
for _, s in ipairs(STRATEGIES) do steps[#steps + 1] = gp.train_job(base):step { fsdp = s }.step_s end
t.ok(steps[1] ~= steps[2] and steps[1] ~= steps[3],
  string.format("the strategies price apart (full_shard %.6g, shard_grad_op %.6g, "
    .. "hybrid_shard %.6g s)", steps[1], steps[2], steps[3]))

-- A hybrid-shard job: a step that moves to full_shard or to no FSDP
-- drops the node's shard group (hsdp), as gp.train without hybrid_shard.
do
  local hy = gp.train_job(t.with(base, { fsdp = "hybrid_shard" }))
  t.is(hy:step { fsdp = "full_shard" }.step_s,
    gp.train(t.with(base, { fsdp = "full_shard" })).step_s, "hybrid job: step{fsdp = full_shard}")
  t.is(hy:step { fsdp = false, zero = 1 }.step_s, gp.train(t.with(base, { zero = 1 })).step_s,
    "hybrid job: step{fsdp = false, zero = 1}")
  t.is(hy:step { batch = 2 }.step_s,
    gp.train(t.with(base, { fsdp = "hybrid_shard", global_batch = 32, batch = 2 })).step_s,
    "hybrid job: a step without fsdp keeps the job's")
end

-- grad_sync = step (the job's): shard_grad_op is zero 1, full_shard
-- zero 3 with whole gradients -- as gp.train's.
do
  local o = t.with(base, { fsdp = "full_shard", grad_sync = "step" })
  local job = gp.train_job(o)
  for _, s in ipairs { "full_shard", "shard_grad_op", "hybrid_shard" } do
    t.is(job:step { fsdp = s }.step_s, gp.train(t.with(o, { fsdp = s })).step_s,
      "grad_sync step: step{fsdp = " .. s .. "} is gp.train's")
  end
end

-- Refusals: the words gp.train says after "train: ", after "step: ".
local job = gp.train_job(base)
local function same(step, opts, what)
  local ok1, e1 = pcall(job.step, job, step)
  local ok2, e2 = pcall(gp.train, t.with(base, opts))
  e1 = tostring(e1):match("step: (.*)$")
  e2 = tostring(e2):match("train: (.*)$")
  t.ok(not ok1 and not ok2 and e1 ~= nil and e1 == e2,
    string.format("%s: refused alike (step: %s; train: %s)", what, tostring(e1), tostring(e2)))
end
same({ fsdp = "full_shard", zero = 2 }, { fsdp = "full_shard", zero = 2 }, "full_shard at zero 2")
same({ fsdp = "zero3" }, { fsdp = "zero3" }, "an unknown strategy")
same({ fsdp = 1 }, { fsdp = 1 }, "a number")
t.raises(function() job:step { fsdp = "zero3" } end,
  "step: fsdp must be full_shard, shard_grad_op or hybrid_shard (got string 'zero3')",
  "the message names the value", true)
do
  local gs = gp.train_job(t.with(base, { fsdp = "full_shard", grad_sync = "step" }))
  t.raises(function() gs:step { fsdp = false } end, "step: grad_sync step needs fsdp",
    "grad_sync step: a step without FSDP, as gp.train refuses it", true)
end

-- A step that gives zero but not fsdp: gp.train with the job's fsdp and
-- that zero.  Before, the job's strategy was kept unchecked: a hybrid
-- job's zero 2 step priced a hybrid ZeRO-2, its zero 1 step failed in the
-- engine ("hsdp 8 ... needs zero 2 or 3"), a full_shard job's zero 2 step
-- kept the FSDP flag -- each of which gp.train refuses.
local function alike(j, step, opts, what, fn)
  local ok1, e1 = pcall(j.step, j, step)
  local ok2, e2 = pcall(fn or gp.train, opts)
  e1 = tostring(e1):match("step: (.*)$")
  e2 = tostring(e2):match("%a+: (fsdp .*)$")
  t.ok(not ok1 and not ok2 and e1 ~= nil and e1 == e2,
    string.format("%s: refused alike (step: %s; gp: %s)", what, tostring(e1), tostring(e2)))
end
do
  local hy = gp.train_job(t.with(base, { fsdp = "hybrid_shard" }))
  alike(hy, { zero = 2 }, t.with(base, { fsdp = "hybrid_shard", zero = 2 }),
    "hybrid job: step{zero = 2}")
  alike(hy, { zero = 1 }, t.with(base, { fsdp = "hybrid_shard", zero = 1 }),
    "hybrid job: step{zero = 1}")
  local fs = gp.train_job(t.with(base, { fsdp = "full_shard" }))
  alike(fs, { zero = 2 }, t.with(base, { fsdp = "full_shard", zero = 2 }),
    "full_shard job: step{zero = 2}")
  -- the strategy's own zero is priced as gp.train prices it
  t.is(hy:step { zero = 3 }.step_s, gp.train(t.with(base, { fsdp = "hybrid_shard" })).step_s,
    "hybrid job: step{zero = 3} is gp.train's")
  -- grad_sync = step: gp.train takes shard_grad_op's own zero (2) and
  -- prices zero 1 (memory.sharding); a zero 1 step is not the strategy's
  local o = t.with(base, { fsdp = "shard_grad_op", grad_sync = "step" })
  local gs = gp.train_job(o)
  t.is(gs:step { zero = 2 }.step_s, gp.train(t.with(o, { zero = 2 })).step_s,
    "grad_sync step, shard_grad_op job: step{zero = 2} is gp.train's")
  alike(gs, { zero = 1 }, t.with(o, { zero = 1 }), "grad_sync step, shard_grad_op job: step{zero = 1}")
  -- a job without a strategy: the step's zero, as before
  t.is(gp.train_job(base):step { zero = 2 }.step_s, gp.train(t.with(base, { zero = 2 })).step_s,
    "a job without fsdp: step{zero = 2} is gp.train's")
  -- ... on the hf stack, whose ZeRO-2/3 is PyTorch FSDP's: gp.train at
  -- zero 2 or 3 takes fsdp_version 1 (its declared default), at zero 0
  -- or 1 none.  A job made at zero 1 (version 0) kept its 0 at a zero 3
  -- step, pricing FSDP without its in-place gradient divide.
  local hf = t.with(base, { stack = "hf", zero = 1 })
  local hj = gp.train_job(hf)
  for _, z in ipairs { 2, 3 } do
    t.is(hj:step { zero = z }.step_s, gp.train(t.with(hf, { zero = z })).step_s,
      string.format("an hf job at zero 1 without fsdp: step{zero = %d} is gp.train's", z))
  end
  local hf3 = t.with(hf, { zero = 3 })
  t.is(gp.train_job(hf3):step { zero = 1 }.step_s, gp.train(hf).step_s,
    "an hf job at zero 3 without fsdp: step{zero = 1} is gp.train's")
  -- a stated fsdp_version is the job's at every stage, as gp.train's
  local v2 = t.with(hf, { fsdp_version = 2 })
  t.is(gp.train_job(v2):step { zero = 3 }.step_s, gp.train(t.with(v2, { zero = 3 })).step_s,
    "an hf job with fsdp_version 2: step{zero = 3} is gp.train's")
end

-- gp.rl_job's actor: the same rule (Qwen2.5-7B GRPO on 16 GPUs).
do
  local rb = { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 16, stack = "megatron",
    recompute = "full", prompts = 64, group = 8, prompt_len = 512, response_len = 2048 }
  local rj = gp.rl_job(t.with(rb, { zero = 1 }))
  for _, s in ipairs { "full_shard", "shard_grad_op", "hybrid_shard" } do
    t.is(rj:step { fsdp = s }.step_s, gp.rl(t.with(rb, { fsdp = s })).step_s,
      "rl_job: step{fsdp = " .. s .. "} is gp.rl's")
  end
  alike(gp.rl_job(t.with(rb, { fsdp = "full_shard" })), { zero = 2 },
    t.with(rb, { fsdp = "full_shard", zero = 2 }), "rl_job full_shard: step{zero = 2}", gp.rl)
  -- the hf stack's actor at zero 1 priced at zero 3: FSDP1's, as gp.rl's
  local rh = t.with(rb, { stack = "hf", zero = 1 })
  t.is(gp.rl_job(rh):step { zero = 3 }.step_s, gp.rl(t.with(rh, { zero = 3 })).step_s,
    "rl_job on the hf stack at zero 1: step{zero = 3} is gp.rl's")
  t.raises(function() rj:step { fsdp = "zero3" } end,
    "step: fsdp must be full_shard, shard_grad_op or hybrid_shard", "rl_job: an unknown strategy",
    true)
end
