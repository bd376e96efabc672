-- stage_layers: every pipeline stage's layers as the job states them
-- (nanotron's build_model balances its blocks by compute cost, giving
-- 9, 9, 8, 6 for the 8.86B model on 4 stages; Megatron-Core's
-- pipeline_model_parallel_layout states any split).  The step prices
-- each stage from its own layers: the slowest stage sets the steady
-- state, the stages' summed times less the slowest the 1F1B bubble
-- (engine/train.c step_sum: tsum - tmax), and each stage's memory its
-- own layers with pp - k micro-batches in flight.  A list that is
-- uniform, or that first/last_stage_layers states, prices exactly as
-- they do.
-- Run with ./gpuplan run tests/lua/stage_layers.t.
local t = require "tap"
local gp = require "gpuplan"
local validate = require "gpuplan.validate"

t.plan(29)

-- Llama 3 8B (32 layers, the LM head untied: 128256 x 4096) on PP 4, TP
-- 2, 8 GPUs (DP 1: no gradient reduction), 64 micro-batches of 1.
local function train(o)
  local base = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, pp = 4, tp = 2,
                 seq = 4096, global_batch = 64, stack = "megatron" }
  for k, v in pairs(o) do base[k] = v end
  return pcall(gp.train, base)
end
local function part(r, name)
  for _, p in ipairs(r.parts) do if p.name == name then return p.seconds end end
end
-- Floating sums of the same terms in another order: 1e-9 relative.
local TOL = 1e-9

-- 1. What the ends or the uniform rule state, the list states alike:
-- the same step and the same memory, to the bit.
local _, u = train {}
local _, u8 = train { stage_layers = { 8, 8, 8, 8 } }
t.ok(u8.step_s == u.step_s and u8.memory.total == u.memory.total and u8.stage == u.stage,
  "8,8,8,8 is the uniform split (step, memory, slowest stage)")
local _, e10 = train { first_stage_layers = 10, last_stage_layers = 6 }
local _, b = train { stage_layers = { 10, 8, 8, 6 } }
t.ok(b.step_s == e10.step_s and b.memory.total == e10.memory.total and b.stage == e10.stage
  and b.stage_layers == e10.stage_layers,
  "10,8,8,6 is first_stage_layers 10 and last_stage_layers 6")
local _, f11 = train { first_stage_layers = 11 }
local _, l11 = train { stage_layers = "11,7,7,7" }
t.ok(l11.step_s == f11.step_s and l11.memory.total == f11.memory.total,
  "the text 11,7,7,7 is first_stage_layers 11 (the rest 21 / 3 = 7)")

-- 2. nanotron's 9, 9, 8, 6, which the ends cannot state (the middle
-- stages differ).  A stage's micro-batch time is t_k = a_k + n_k b: its
-- place's fixed work a_k (the embedding on the first, the head and the
-- loss on the last) and b a layer's.  Uniform's slowest is the last
-- stage (8 layers and the 128256 x 4096 head, 2.4 layers' weights);
-- here the first (9 layers and the embedding lookup).
local _, a = train { stage_layers = { 9, 9, 8, 6 } }
t.ok(a.stage == 0 and a.stage_layers == 9 and u.stage == 3,
  "9,9,8,6: the first stage (9 layers) is the slowest; uniform's the last")
-- Steady state: the slowest stage's time per micro-batch, 64 times; the
-- bubble and the optimizer after it (DP 1: no reduction).
t.near(a.step_s, a.microbatches * a.stage_time_s + part(a, "bubble") + part(a, "optimizer"),
  TOL, "step = M x t_max + bubble + optimizer (M = 64)")
-- The bubble tsum - tmax.  9,9,8,6 and 8,8,8,8 hold the same layers on
-- each place in all (first +1, middle +1 + 0, last -2: sum_k n_k b and
-- sum_k a_k unchanged), so tsum is the same and the bubbles differ by
-- the slowest stages' times, the other way round.
t.near(part(a, "bubble") - part(u, "bubble"), u.stage_time_s - a.stage_time_s, 1e-6,
  string.format("bubble(9,9,8,6) - bubble(uniform) = t_max(uniform) - t_max(9,9,8,6) = %.6f s",
    u.stage_time_s - a.stage_time_s))
-- 10,8,8,6 moves one layer from stage 1 to stage 0: tsum unchanged, the
-- slowest stage one layer longer (b), the bubble b shorter.
local lb = b.stage_time_s - a.stage_time_s
t.ok(lb > 0, string.format("one layer more on the slowest stage: b = %.6f s", lb))
t.near(part(b, "bubble") - part(a, "bubble"), -lb, 1e-6,
  "bubble(10,8,8,6) - bubble(9,9,8,6) = -b")
-- 9,8,8,7: the same first stage and, by place, the same layers in all
-- (middle 16 + last 7 against 17 + 6): the same step.
local _, c = train { stage_layers = { 9, 8, 8, 7 } }
t.near(c.step_s, a.step_s, TOL, "9,8,8,7 prices as 9,9,8,6 (same t_max, same tsum)")
-- A split whose slowest stage is uniform's (the last, 8 layers and the
-- head) and whose places hold the same layers in all: uniform's step.
local _, d = train { stage_layers = { 6, 9, 9, 8 } }
t.near(d.step_s, u.step_s, TOL, "6,9,9,8: the last stage as uniform's, uniform's step")

-- 3. Memory, each stage its own layers with pp - k micro-batches in
-- flight under 1F1B (Megatron-Core's warm-up pp - rank - 1 forwards and
-- one more): the first stage holds 4.  One layer more on it adds a
-- layer's states and 4 micro-batches of a layer's activations
-- (act_layer), whichever split it comes from.
local step1 = a.memory.total - u.memory.total
local step2 = b.memory.total - a.memory.total
t.ok(a.memory.stage == 0 and a.memory.inflight == 4 and a.memory.stage_layers == 9,
  "9,9,8,6: the first stage's memory, 9 layers, 4 micro-batches in flight")
t.near(step2, step1, 1e-9, "8 -> 9 -> 10 layers on the first stage: the same bytes a layer")
t.ok(step1 > 4 * u.memory.act_layer,
  string.format("a layer on the first stage: %.2f GB, above 4 x act_layer %.2f GB", step1 / 1e9,
    4 * u.memory.act_layer / 1e9))
-- 6,9,9,8: stage 1 holds 9 layers with 3 in flight (27 layer-batches)
-- against stage 0's 6 with 4 (24) and the embedding's states: the peak
-- is stage 1's, below uniform's stage 0 (8 layers, 4 in flight, 32).
t.ok(d.memory.stage == 1 and d.memory.inflight == 3 and d.memory.total < u.memory.total,
  "6,9,9,8: stage 1's memory (9 layers, 3 in flight), below uniform's first stage")

-- 4. Interleaving and DualPipe take the list (a rank's total over its
-- chunks; DualPipe pairs stage r with pp - 1 - r).
local okv, v = train { stage_layers = { 9, 9, 8, 6 }, vpp = 2 }
t.ok(okv and v.step_s < a.step_s and v.stage_layers == 9,
  "vpp 2: 9,9,8,6 as ranks' totals, the bubble halved")
local okd, dp = train { stage_layers = { 9, 9, 8, 6 }, schedule = "dualpipe" }
t.ok(okd and dp.step_s > 0, "DualPipe: 9,9,8,6 priced")

-- 5. Refusals, each naming the option.
local ok, e = train { stage_layers = { 9, 9, 8 } }
t.ok(not ok and tostring(e):find("stage_layers has 3 entries for pp 4", 1, true),
  "3 entries for pp 4: refused")
ok, e = train { stage_layers = { 9, 9, 8, 5 } }
t.ok(not ok and tostring(e):find("stage_layers sums to 31 layers; the model has 32", 1, true),
  "31 of 32 layers: refused")
ok, e = train { stage_layers = { 9, 9, 14, 0 } }
t.ok(not ok and tostring(e):find("stage_layers[4] must be a whole number of layers >= 1", 1, true),
  "an empty stage: refused")
ok, e = train { stage_layers = { 9, nil, 8, 6 } }
t.ok(not ok and tostring(e):find("stage_layers[2] must be a whole number of layers >= 1 (got nil)",
  1, true), "a hole in the list: refused, not read as a shorter list")
ok, e = train { stage_layers = { 9, 9, 8, 6 }, last_stage_layers = 6 }
t.ok(not ok and tostring(e):find("give one or the other", 1, true), "with the ends' counts: refused")
ok, e = train { stage_layers = { 9, 9, 8, 6 }, stack = "deepspeed" }
t.ok(not ok and tostring(e):find("stack = deepspeed partitions by its own rule", 1, true),
  "DeepSpeed's pipeline: refused")
-- DualPipe reads its stages in order (a record stands only for the
-- stage right after it, engine/train_prep.c phase_stages): 20 stages,
-- 3, then 1 and 2 in turn, then 2 (the model's 32 layers, summed below),
-- each unlike the one before, give 20 records, over the engine's 16
-- (train_phase.h TRAIN_PHASE_STAGES): refused naming the option.
local alt = {}
for i = 1, 20 do alt[i] = i % 2 == 1 and 2 or 1 end   -- 10 x 2 + 10 x 1 = 30
alt[1], alt[20] = 3, 2                                  -- 3 + 1 + 9 x 2 + 8 x 1 + 2 = 32
ok, e = train { gpus = 40, tp = 2, pp = 20, global_batch = 80, stage_layers = alt,
                schedule = "dualpipe" }
t.ok(not ok and tostring(e):find("stage_layers gives more than 16 distinct stages", 1, true),
  "DualPipe: 20 stages unlike their neighbours, refused naming stage_layers")
ok, e = train { pp = 1, tp = 8, stage_layers = { 32 } }
t.ok(not ok and tostring(e):find("stage_layers applies to pipeline stages", 1, true), "pp 1: refused")
ok, e = pcall(gp.sweep, { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, seq = 4096,
  stack = "megatron", stage_layers = { 9, 9, 8, 6 } })
t.ok(not ok and tostring(e):find("unknown option 'stage_layers'", 1, true),
  "gp.sweep does not search it: refused")

-- 6. nanotron's 8.86B on 1 node, PP 4 (32 layers, h 4096, d_ff 14336,
-- vocab 131072): build_model's split by get_block_compute_costs -- a
-- layer 4 h^2 + 3 d_ff h = 243,269,632, the lm_head vocab x h =
-- 536,870,912 (2.2 layers), the shares at 8.55, 17.1, 25.65 layers --
-- is 9, 9, 8, 6 (nanotron's models/base.py: the block that crosses its
-- share stays).  The nanotron profile states it on the cell
-- (predict/train.lua nanotron_stages): stated by the case too, the same
-- step to the bit.  Against uniform's 8, 8, 8, 8 (stated) the first stage
-- (9 layers) is the slowest where uniform's was the last (8 layers and
-- the head): a faster step, a higher rate.
local cell
for _, cc in ipairs(validate.read("validation/cases.json")) do
  if cc.id == "nanotron-bench-8.86b-1n-dp2-tp1-pp4-mbs1-z1" then cell = cc end
end
local cat = gp.catalog()
local pp_ = validate.predict(cell, cat)
local uni = t.copy(cell)
uni.parallel.stage_layers = { 8, 8, 8, 8 }
local pu = validate.predict(uni, cat)
local stated = t.copy(cell)
stated.parallel.stage_layers = { 9, 9, 8, 6 }
local ps = validate.predict(stated, cat)
t.ok(ps.predicted and ps.predicted > pu.predicted and ps.predicted == pp_.predicted,
  string.format("nanotron 8.86B PP 4 at 9,9,8,6: %.1f tokens/s/GPU (%+.1f%% against %.1f "
    .. "measured; the profile's %.1f), uniform %.1f (%+.1f%%)", ps.predicted or 0,
    100 * ((ps.predicted or 0) / cell.measured.value - 1), cell.measured.value, pp_.predicted,
    pu.predicted, 100 * (pu.predicted / cell.measured.value - 1)))
t.ok(not ps.defaults:find("partition=", 1, true) and not pp_.defaults:find("partition=", 1, true),
  "the split stated: no partition rule said among the defaults")

-- A case stating its split under the nanotron profile: the profile's
-- own (the 1.34B on PP 2: 11 and 5 layers, the lm_head's 131072 x 2048
-- weighing 4 layers of 67.1M, stated as first/last_stage_layers) gives
-- way, not refused beside it.  The list 11, 5 is those ends, so the
-- prediction is the unstated cell's to the bit.
local p2
for _, cc in ipairs(validate.read("validation/cases.json")) do
  if cc.id == "nanotron-bench-1.34b-64n-dp128-tp2-pp2-mbs2-z1" then p2 = cc end
end
local s2 = t.copy(p2)
s2.parallel.stage_layers = { 11, 5 }
local q2 = validate.predict(s2, cat)
t.ok(q2.predicted and q2.predicted == validate.predict(p2, cat).predicted,
  "nanotron 1.34B PP 2 stating 11, 5: the profile's ends give way, the same prediction")

-- 7. gp.rl's actor takes it too: DeepSeek-V3's 61 layers on PP 16 as
-- first_stage_layers 3 and last_stage_layers 2 (the middle (61 - 5) / 14
-- = 4 each) and as the list 3, 4 x 14, 2: the same step.
local ds = { model = "deepseek-v3", gpu = "h100-sxm", gpus = 256, tp = 1, pp = 16, ep = 16,
             first_stage_layers = 3, last_stage_layers = 2, recompute = "full",
             colocated = true, offload_states = true, rollout_tp = 32, prompts = 32,
             group = 16, prompt_len = 110, response_len = 701, response_max = 1426,
             stack = "megatron", zero = 1, rollout_memory = 0.6, nic_fabric = "ib-ndr-400",
             nics = 8, gpus_per_node = 8 }
local rends = gp.rl(ds)
ds.first_stage_layers, ds.last_stage_layers = nil, nil
ds.stage_layers = { 3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 2 }
local rlist = gp.rl(ds)
t.ok(rlist.step_s == rends.step_s, "gp.rl: 3, 4 x 14, 2 is first 3 and last 2")
