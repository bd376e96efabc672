-- gp.train_job's steps refuse what gp.train refuses of the job's stack:
-- a Ulysses job's step at pp or tp > 1 where its stack's Ulysses has no
-- such axis (gpuplan.memory ulysses_refusal: verl's FSDP mesh is data x
-- sequence; DeepSpeed's pipeline grid has no sequence axis), and Muon on
-- the megatron stack at a ZeRO stage (Megatron-Core's
-- get_megatron_muon_optimizer: "muon with dist optimizer is not
-- supported.").  A step priced those layouts in silence.
-- Run with ./gpuplan run tests/lua/job_stack.t.
local t = require "tap"
local gp = require "gpuplan"
local args = require "gpuplan.args"

t.plan(17)

local base = { model = "llama2-7b", gpu = "h100-sxm", gpus = 8, seq = 4096, batch = 1,
  global_batch = 32, recompute = "full" }

-- verl's Ulysses (stack hf): no pipeline, no tensor parallelism.
local hf = gp.train_job(t.with(base, { method = "full", stack = "hf", ulysses = 2 }))
t.raises(function() hf:step { pp = 2 } end,
  "step: ulysses 2 with pp = 2 and stack = hf: verl's Ulysses", "hf ulysses: a pp 2 step", true)
t.raises(function() hf:step { tp = 2 } end,
  "step: ulysses 2 with tp = 2 and stack = hf: verl's Ulysses", "hf ulysses: a tp 2 step", true)
t.ok(hf:step { zero = 3 }.step_s > 0, "hf ulysses: a zero 3 step at tp 1, pp 1 is priced")
-- gp.train refuses the same layout with the same words (one rule).
t.raises(function() gp.train(t.with(base, { method = "full", stack = "hf", ulysses = 2, pp = 2 })) end,
  "ulysses 2 with pp = 2 and stack = hf: verl's Ulysses", "gp.train: the same layout", true)

-- DeepSpeed's Ulysses: beside TP, not under its pipeline engine.
local ds = gp.train_job(t.with(base, { method = "full", stack = "deepspeed", ulysses = 2 }))
t.raises(function() ds:step { pp = 2 } end,
  "step: ulysses 2 with pp = 2 and stack = deepspeed: DeepSpeed's pipeline engine",
  "deepspeed ulysses: a pp 2 step", true)
t.ok(ds:step { tp = 2 }.step_s > 0, "deepspeed ulysses: a tp 2 step is priced")

-- A job without Ulysses takes pp and tp as before.
local plain = gp.train_job(t.with(base, { method = "full", stack = "hf" }))
t.ok(plain:step { tp = 2 }.step_s > 0, "hf without ulysses: a tp 2 step is priced")

-- Muon on the megatron stack: zero 0 only (dist_muon's sharding).
local MU = "optimizer muon with zero 1 on stack megatron: Megatron-Core's Muon refuses the "
  .. "distributed optimizer"
local mj = gp.train_job(t.with(base, { method = "pretrain", stack = "megatron", optimizer = "muon" }))
t.ok(mj:step { zero = 0 }.step_s > 0, "megatron muon: a zero 0 step is priced")
t.raises(function() mj:step { zero = 1 } end, "step: " .. MU, "megatron muon: a zero 1 step",
  true)
local ok, e = pcall(gp.train, t.with(base, { method = "pretrain", stack = "megatron",
  optimizer = "muon", zero = 1 }))
t.ok(not ok and tostring(e):find(MU, 1, true), "gp.train: muon at zero 1 on megatron refused")
t.ok(not ok and args.is_usage(e), "... as a usage error (options that do not go together)")
ok, e = pcall(gp.train, t.with(base, { method = "pretrain", stack = "megatron",
  optimizer = "muon", zero = 3, fsdp = "full_shard" }))
t.ok(not ok and tostring(e):find("optimizer muon with zero 3 on stack megatron", 1, true),
  "gp.train: muon under Megatron-FSDP (zero 3) refused")
-- Other stacks are not Megatron-Core's build: priced at a ZeRO stage.
t.ok(gp.train(t.with(base, { method = "pretrain", stack = "deepspeed", optimizer = "muon",
  zero = 1 })).step_s > 0, "deepspeed muon at zero 1 is priced")
t.ok(gp.train(t.with(base, { method = "pretrain", stack = "megatron", optimizer = "adamw",
  zero = 1 })).step_s > 0, "megatron adamw at zero 1 is priced")

-- A plan searches zero 0 only for Muon on megatron, and refuses a list
-- with a stage.
local sj = { model = "llama2-7b", gpu = "h100-sxm", gpus = 8, method = "pretrain",
  stack = "megatron", optimizer = "muon", seq = 4096, global_batch = 32, top = 50 }
local r = gp.sweep(sj)
local zeros = {}
for _, x in ipairs(r.results) do zeros[x.zero] = true end
t.ok(#r.results > 0 and zeros[0] and not zeros[1], "plan: muon on megatron searches zero 0 (default list 1)")
ok, e = pcall(gp.sweep, t.with(sj, { zero = { 0, 1 } }))
t.ok(not ok and tostring(e):find("sweep: optimizer muon with zero 1 on stack megatron", 1, true),
  "plan: a zero list with stage 1 refused")
t.ok(not ok and args.is_usage(e), "... as a usage error")
