-- The layout search with a given zero_group N (gp.sweep, gpuplan plan):
-- every searched layout shards its ZeRO states within groups of N of its
-- dp x cp ranks, as gp.train does with the same N; the layouts whose
-- dp x cp N does not divide are skipped and counted (stats.ungrouped).
-- gp.rl takes it for the actor's training step (gp.train's setup).
-- Run with ./gpuplan run tests/lua/sweep_zero_group.t.
local t = require "tap"
local gp = require "gpuplan"
local sweep = require "gpuplan.sweep"

t.plan(19)

-- llama3-8b pretraining on 64 H100s (8-GPU nodes), the plan defaults:
-- tp 1..8, pp 1..8, cp 1, ZeRO-1.
local job = { model = "llama3-8b", gpu = "h100-sxm", gpus = 64, zero_group = 8 }
local r = gp.sweep(job)
local best = r.results[1]

-- The best layout is priced by the same engine call gp.train makes for it
-- with --zero-group 8: the search sets hsdp = N x tp GPUs (engine/sweep.c
-- hybrid_gpus), which is what gpuplan.memory zero_group sets from N for
-- the layout gp.train is given.  Exact up to rounding (1e-12: the same
-- arithmetic on the same config).
t.same_as_train(job, best, "zero_group 8, best layout")
-- and as the user would type it: the layout's own options, not the sweep's
-- (with the plan's stack and method, which gp.train does not default to)
local tr = gp.train { model = "llama3-8b", gpu = "h100-sxm", gpus = 64, zero_group = 8,
  stack = "megatron", method = "pretrain",
  seq = 8192, global_batch = 512, tp = best.tp, pp = best.pp, zero = best.zero,
  sp = best.sp, batch = best.micro_batch, recompute = best.recompute,
  vpp = best.vpp > 1 and best.vpp or nil, overlap_grad_reduce = best.overlap_grad_reduce,
  tp_overlap = best.tp_overlap }
t.near(best.step_s / tr.step_s, 1, 1e-12, "zero_group 8: gp.train of the layout, same step")
-- The group spans N x tp GPUs (hsdp, results.lua): 8 ranks of tp GPUs
-- each, below dp x cp = 64 / (tp pp) ranks, so groups are on.
t.is(tr.hsdp, 8 * best.tp, "the layout's group: 8 x tp GPUs")
t.is(best.zero_group, 8, "the candidate names its group")
t.like(sweep.label(best), " G8 ", "the label names the groups", true)

-- Skipped splits, by hand: tp in {1, 2, 4, 8} (within the node, dividing
-- llama3-8b's 32 heads and 8 KV heads), pp in {1, 2, 4, 8} (dividing 32
-- layers), cp 1; dp x cp = 64 / (tp pp) is a multiple of 8 iff tp pp <= 8.
-- The splits with tp pp in {16, 32, 64}: (2, 8), (4, 4), (4, 8), (8, 2),
-- (8, 4), (8, 8) -- 6.
local st = r.stats["h100-sxm"]
t.is(st.ungrouped, 6, "6 splits whose dp x cp 8 does not divide are skipped")
local plain = gp.sweep { model = "llama3-8b", gpu = "h100-sxm", gpus = 64 }
t.is(plain.stats["h100-sxm"].ungrouped, 0, "without zero_group none is skipped")
-- no searched layout has tp pp > 8
local wide = false
for _, c in ipairs(r.results) do wide = wide or c.tp * c.pp > 8 end
t.ok(not wide, "no kept layout has dp x cp below the group")

-- N = dp x cp is one group over all data parallel: on 16 GPUs at tp 1,
-- pp 1 (dp 16) zero_group 16 prices exactly the search without it
-- (hsdp 0: the engine's default group), the same step and memory.
local one = { model = "llama3-8b", gpu = "h100-sxm", gpus = 16, tp_max = 1, pp_max = 1 }
local a = gp.sweep(one).results[1]
local b = gp.sweep(t.with(one, { zero_group = 16 })).results[1]
t.is(b.step_s, a.step_s, "zero_group = dp x cp: the search's step without it")
t.is(b.mem_bytes, a.mem_bytes, "zero_group = dp x cp: the search's memory without it")

-- What gp.train refuses with a zero_group, the search refuses before it.
t.raises(function() gp.sweep(t.with(job, { zero = { 0, 1 } })) end,
  "zero_group 8 shards the ZeRO states: zero 0 cannot be searched with it", "zero 0 listed", true)
t.raises(function() gp.sweep(t.with(job, { stack = "hf", fsdp = "hybrid_shard" })) end,
  "zero_group 8 and fsdp = hybrid_shard both set the shard group", "hybrid_shard too", true)
t.raises(function() gp.sweep(t.with(job, { order = "tp-dp-cp-pp" })) end,
  "zero_group 8 is placed in the default rank order", "a rank order", true)

-- gp.rl: the actor's training step is gp.train's setup with the job's
-- options, so the groups are its: 16 GPUs at tp 1 in groups of 8 (hsdp
-- 8 GPUs), and ZeRO-1's optimizer states over 8 ranks instead of 16 hold
-- more memory.
local rl = { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 16, zero = 1 }
local g = gp.rl(t.with(rl, { zero_group = 8 }))
local d = gp.rl(rl)
t.is(g.hsdp, 8, "rl: the actor's step in groups of 8 GPUs")
t.ok(g.peak_memory > d.peak_memory, "rl: groups of 8 hold more than one group of 16")

-- MoE: a split whose group of N x tp GPUs cuts an expert group (etp x ep
-- GPUs) is skipped and counted (stats.expert_cut), as gp.train refuses
-- it (engine/layout.c, Megatron-Core's expert data-parallel split).
-- Mixtral 8x7B on 64 GPUs at tp 1, pp 1 (etp 1: no folding at tp 1):
-- ep in {1, 2, 4, 8} (dividing its 8 experts).  Groups of 2 GPUs hold
-- ep 1 and 2 whole and cut ep 4 and 8: 2 splits; groups of 8 cut none.
-- Every ep split has the same inner grid, so half the layouts remain.
do
  local mx = { model = "mixtral-8x7b", gpu = "h100-sxm", gpus = 64, tp_max = 1, pp_max = 1,
               ep_max = 8 }
  local s2 = gp.sweep(t.with(mx, { zero_group = 2 })).stats["h100-sxm"]
  local s8 = gp.sweep(t.with(mx, { zero_group = 8 })).stats["h100-sxm"]
  t.is(s2.expert_cut, 2, "zero_group 2: ep 4 and 8 cut by 2-GPU groups, skipped")
  t.is(s8.expert_cut, 0, "zero_group 8: no expert group cut")
  t.is(s2.layouts * 2, s8.layouts, "zero_group 2 keeps the ep 1 and 2 halves of the layouts")
end
