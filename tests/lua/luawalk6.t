-- A user scripting gpuplan in Lua (round 7): the session's new surfaces
-- (zero_group, comm's nvls, runtime exllamav2, prefix_hit, rl's
-- engine_cleanup, infer's max_batch_kv, catalog list CSV).  Each case
-- below was answered wrongly (a reason that contradicts itself, a
-- refusal with no function named, a job's step that disagrees with
-- gp.rl for the same layout); it must be refused naming the key, or
-- answer as gp.rl / the CLI does.  Run with ./gpuplan run tests/lua/luawalk6.t.
local t = require "tap"
local gp = require "gpuplan"

local check = t.raises_here

-- 1. gp.infer: a batch over max_batch is refused by that cap, not by the
-- KV.  llama3-8b on one H100 holds 205 sequences of 2048 + 256 tokens
-- (the default run's max_batch_kv); batch 10 with max_batch 4 read "batch
-- 10 needs 2.85 GB of KV per GPU, the budget is 58.72 GB (4 sequences)".
do
  local r = gp.infer { model = "llama3-8b", gpu = "h100-sxm", input = 2048, output = 256,
                       batch = 10, max_batch = 4 }
  t.is(r.fits, false, "infer: batch 10 over max_batch 4 does not run")
  t.like(r.why, "batch 10 is over max_batch 4", "infer: the why names max_batch", true)
  -- within the cap the KV still decides (205 sequences fit)
  local k = gp.infer { model = "llama3-8b", gpu = "h100-sxm", input = 2048, output = 256, batch = 300 }
  t.like(k.why, "of KV per GPU", "infer: batch 300 over the KV's 205 is the KV's refusal", true)
end

-- 2. gp.memory's refusals open with "memory: " as its others do: the
-- zero_group ones and the layout's read bare (gpuplan fit names the flag).
check(function() gp.memory { model = "llama3-8b", gpu = "h100-sxm", zero = 3, zero_group = 8 } end,
  "memory: zero_group 8 must divide the data-parallel group dp x cp = 1", "memory: zero_group's divisor")
check(function() gp.memory { model = "llama3-8b", gpu = "h100-sxm", zero = 0, zero_group = 8 } end,
  "memory: zero_group 8 shards the ZeRO states", "memory: zero_group without ZeRO")
check(function() gp.memory { model = "llama3-8b", gpu = "h100-sxm", tp = 3 } end,
  "memory: gpus 1 (the default) is not a multiple of tp*pp*cp = 3: give gpus = 3", "memory: the layout's refusal")

-- 3. gp.rl_job with DeepSpeed's hybrid engine: the engine's batch
-- (generation batch x inference TP), its cleanup and whether it gathers
-- ZeRO-3 shards are resolved with the job.  A step at another rollout TP
-- was priced with the job's (44.4 s where gp.rl says 30.9 s at rollout_tp
-- 2), and a step's zero 2 was refused naming engine_released, the
-- binding's key.  Refused, naming the step's key; the job's own TP and
-- stage still price as gp.rl does.
do
  local base = { model = "llama3-8b", gpu = "h100-sxm", gpus = 16, zero = 3, rollout_engine = "hybrid" }
  local j = gp.rl_job(base)
  t.raises(function() j:step { rollout_tp = 2 } end,
    "step: rollout_tp 2: the hybrid engine (rollout_engine = hybrid) is the job's, at inference TP 1",
    "rl_job hybrid: another rollout_tp refused", true)
  t.raises(function() j:step { tp = 2 } end, "make a job with tp = 2",
    "rl_job hybrid: a tp the rollout follows refused", true)
  t.raises(function() j:step { zero = 2 } end, "step: zero 2: the hybrid engine",
    "rl_job hybrid: leaving ZeRO-3 refused by its key", true)
  -- the job's own layout, and a pp of its own, price as gp.rl's
  t.near(j:step { pp = 2 }.step_s, gp.rl(t.with(base, { pp = 2 })).step_s, 1e-12,
    "rl_job hybrid: a pp step is gp.rl's")
  local b2 = t.with(base, { rollout_tp = 2 })
  t.near(gp.rl_job(b2):step {}.step_s, gp.rl(b2).step_s, 1e-12, "rl_job hybrid: rollout_tp 2 job is gp.rl's")
  -- rollout_engine hf generates on the actor's modules: a step's tp was
  -- priced at double the rollout (221 s where gp.rl says 119 s)
  local hf = gp.rl_job { model = "llama3-8b", gpu = "h100-sxm", gpus = 16, zero = 2, rollout_engine = "hf" }
  t.raises(function() hf:step { tp = 2 } end, "the hf engine (rollout_engine = hf) is the job's",
    "rl_job hf: another tp refused", true)
  -- vLLM engines follow a step's TP (the engine re-prices them)
  local v = { model = "llama3-8b", gpu = "h100-sxm", gpus = 16, zero = 2 }
  t.near(gp.rl_job(v):step { tp = 2 }.step_s, gp.rl(t.with(v, { tp = 2 })).step_s, 1e-12,
    "rl_job vllm: a tp step is gp.rl's")
end

-- 4. A topology's paired ceilings are refused by the key that set them:
-- nvls_tree_bw2 = -1 read "nvls_tree_bw must be finite numbers >= 0 (got
-- -1, 4.55e+10)", naming neither nvls_tree_bw2 nor nvls_tree_bw3 (and
-- tree_ch_bw2/3, tree_ll128_ch_bw2/3 alike).
for _, k in ipairs { "nvls_tree_bw2", "nvls_tree_bw3", "tree_ch_bw2", "tree_ch_bw3",
                     "tree_ll128_ch_bw2", "tree_ll128_ch_bw3" } do
  check(function() gp.comm { system = "dgx-h100", gpus = 16, op = "allreduce", bytes = 1e9, [k] = -1 } end,
    "comm: " .. k .. " must be a finite number >= 0 (got -1)", "comm: " .. k .. " named")
end

-- 5. gp.comm's top-level topology keys are named as the call wrote them:
-- nvls_tree_bw2 = 0/0 read "comm: topology.nvls_tree_bw2 must be finite"
-- (a topology = {...} field's path the call did not write), and "x" read
-- "comm: topology.nvls_tree_bw2: bad bandwidth".  A topology table's
-- field keeps its path.
check(function() gp.comm { system = "dgx-h100", gpus = 16, op = "allreduce", bytes = 1e9, nvls_tree_bw2 = 0 / 0 } end,
  "comm: nvls_tree_bw2 must be finite (got NaN)", "comm: a NaN top-level key named as written")
check(function() gp.comm { system = "dgx-h100", gpus = 8, op = "allreduce", bytes = 1e9, up_bw = "x" } end,
  "comm: up_bw: bad link bandwidth 'x'", "comm: a bad unit in a top-level key named as written")
check(function() gp.comm { topology = { gpus_per_node = 8, up_bw = 1 / 0 }, gpus = 8, op = "allreduce", bytes = 1e9 } end,
  "comm: topology.up_bw must be finite (got inf)", "comm: a topology table's field keeps its path")

-- 6. A script's gpu table with no link, past one GPU: "give system = ID"
-- alone was a dead end (no catalog system holds the script's card:
-- "system 'dgx-h100' holds h100-sxm, not tiny"); the card's own scaleup
-- or pcie is named too, as infer's refusal of the same card does, and
-- with scaleup = {fabric = "nvlink4", domain = 8} the job runs.
do
  local tiny = { id = "tiny", arch = "hopper", memory = "24GB", mem_bw = "1TB/s",
                 peak = { bf16 = "200TFLOPS" } }
  check(function() gp.train { model = "llama3.2-1b", gpu = tiny, gpus = 8 } end,
    "train: gpu 'tiny' has no scale-up fabric; give system = ID, or scaleup or pcie in the gpu's entry",
    "train: a linkless gpu table names its own fields")
  check(function() gp.comm { gpu = tiny, gpus = 8, op = "allreduce", bytes = 1e9 } end,
    "or scaleup or pcie in the gpu's entry", "comm: a linkless gpu table names its own fields")
  tiny.scaleup = { fabric = "nvlink4", domain = 8 }
  t.ok(gp.train { model = "llama3.2-1b", gpu = tiny, gpus = 8 }.step_s > 0, "train: with scaleup it runs")
end

-- 7. gp.rl with zero_group and the split searched (rollout_gpus = auto):
-- the group was checked against one layout's pool, "zero_group 4 must
-- divide the data-parallel group dp x cp = 1", a dp no one chose.  Refused
-- naming the split; with rollout_gpus = 8 the 8 training GPUs hold dp 8,
-- which 4 divides.
do
  local a = { model = "llama3-8b", gpu = "h100-sxm", gpus = 16, zero = 3, zero_group = 4,
              colocated = false, rollout_gpus = "auto" }
  check(function() gp.rl(a) end, "rl: zero_group shards within the training pool, which the split search sizes",
    "rl: zero_group with the split searched refused, naming it")
  a.rollout_gpus = 8
  t.is(gp.rl(a).hsdp, 4, "rl: rollout_gpus 8: shard groups of 4 ranks (tp 1: 4 GPUs)")
end

-- 8. A step's zero_group is the job's (each step's groups are n of its
-- own dp x cp ranks): job:step{zero_group = 8} read "unknown field
-- 'zero_group' (did you mean 'zero'?)", as if misspelt.
do
  local j = gp.train_job { model = "llama3-8b", gpu = "h100-sxm", gpus = 16, zero = 3 }
  t.raises(function() j:step { zero_group = 8 } end, "step: 'zero_group' is the job's, not a step's",
    "train_job step: zero_group named the job's", true)
  local r = gp.rl_job { model = "llama3-8b", gpu = "h100-sxm", gpus = 16, zero = 3 }
  t.raises(function() r:step { zero_group = 8 } end, "step: 'zero_group' is the job's, not a step's",
    "rl_job step: zero_group named the job's", true)
end

t.done_testing()
