-- gp.rl's count_split: verl's Megatron actor without use_dynamic_bsz cuts
-- each mini-batch into micro-batches of a sequence count ("micro_batches
-- = mini_batch.batch.split(micro_batch_size)", megatron_actor.py), each
-- at its sequences' own random lengths, and Megatron's pipeline stages
-- wait for the slower neighbour at every exchange: the passes' pipelined
-- work stretches by rl_pipe_stretch (engine/rl_pipe.c; its values are
-- tested against hand-worked schedules in tests/c/t_rl.c).
-- Run with ./gpuplan run tests/lua/rl_count_split.t.
local t = require "tap"
local gp = require "gpuplan"

local with, phase = t.with, t.phase

-- Qwen2.5-7B GRPO on 16 H100s at TP 2, PP 2 (dp 4), micro-batches of 2
-- sequences: 64 x 8 = 512 samples in mini-batches of 128, so 4 optimizer
-- steps of 128 / (4 x 2) = 16 micro-batches a pipeline; a base policy's
-- responses, clipped exponential of mean 0.1134 x 8192.
local base = { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 16, tp = 2, pp = 2, zero = 1,
               batch = 2, prompts = 64, group = 8, prompt_len = 150, response_max = 8192,
               base_checkpoint = true, global_batch = 128 }
local r0, r1 = gp.rl(base), gp.rl(with(base, { count_split = true }))

-- The stretch is the schedule's, above 1, and 1 without count_split.
t.is(r0.pipe_update, 1, "count_split off: the update at the mean micro-batch")
t.ok(r1.pipe_update > 1 and r1.pipe_forward > 1, "count_split: both passes wait for neighbours")
-- It stretches the pipelined parts -- compute, recompute, the TP, CP, EP
-- and p2p transfers and the bubble -- and charges the extra as bubble;
-- the gradient reduction, ZeRO gather and optimizer step, once an
-- optimizer step, stay.  Four optimizer steps a step.  Tolerance 1e-9
-- (relative): the same sums in another order.
local u = r0.update.parts
local work = u.compute + u.recompute + u.tp_comm + u.cp_comm + u.ep_comm + u.pp_comm + u.bubble
t.is(r0.opt_steps, 4, "512 samples in mini-batches of 128: 4 optimizer steps")
t.near(r1.update.parts.bubble - u.bubble, (r1.pipe_update - 1) * work, 1e-9,
  "count_split: the extra is the pipelined work times the stretch less one, as bubble")
t.is(r1.update.parts.optimizer, u.optimizer, "count_split: the optimizer step is unchanged")
t.near(phase(r1, "actor_update").seconds - phase(r0, "actor_update").seconds,
  4 * (r1.pipe_update - 1) * work, 1e-9, "count_split: each optimizer step's pipeline stretched")
-- The log-probability forward over the whole batch (one pipeline run of
-- 512 / (4 x 2) = 64 micro-batches, forward only) stretches by its own.
local f = r0.forward.parts
local fwork = f.compute + f.recompute + f.tp_comm + f.cp_comm + f.ep_comm + f.pp_comm + f.bubble
t.near(r1.forward.step_s - r0.forward.step_s, (r1.pipe_forward - 1) * fwork, 1e-9,
  "count_split: the forward-only pass stretched by its own schedule")
-- No pipeline, or every response as long: nothing waits.
local nopp = { pp = 1, tp = 4 }
t.is(phase(gp.rl(with(base, with(nopp, { count_split = true }))), "actor_update").seconds,
  phase(gp.rl(with(base, nopp)), "actor_update").seconds, "count_split: one stage waits for nobody")
local fixed = { base_checkpoint = false, response_len = 929, response_max = 929,
                response_dist = "fixed" }
t.is(phase(gp.rl(with(base, with(fixed, { count_split = true }))), "actor_update").seconds,
  phase(gp.rl(with(base, fixed)), "actor_update").seconds, "count_split: equal lengths are even")
-- Padded, packed or token-cut micro-batches are even: refused together.
t.raises(function() gp.rl(with(base, { count_split = true, pad = true })) end,
  "count_split is micro-batches of sequences at their own lengths; pad = true pads every sequence",
  "count_split with pad", true)
t.raises(function() gp.rl(with(base, { count_split = true, token_batch = 16384 })) end,
  "count_split is micro-batches of sequences at their own lengths; token_batch cuts them",
  "count_split with token_batch", true)
t.raises(function() gp.rl(with(base, { count_split = 1 })) end, "count_split",
  "count_split must be a boolean", true)
t.done_testing()
