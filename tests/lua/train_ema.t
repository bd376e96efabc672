-- ema none|gpu|cpu (issue 25): an fp32 moving average of the trained
-- parameters, each rank's over the parameters it holds (NeMo's
-- EMAOptimizer), priced in memory (engine/memory_train.c stage_ema) and
-- in the step (engine/train.c ema_update, and step_sum's ema cpu copy).
-- Run with ./gpuplan run tests/lua/train_ema.t.
local t = require "tap"
local gp = require "gpuplan"
local with, part, step_part = t.with, t.part, t.step_part

t.plan(27)

-- llama2-7b: 6,738,415,616 parameters (gp.memory's params), every one
-- trained (full training, no frozen part).
local base = { model = "llama2-7b", gpu = "h100-sxm", gpus = 8, zero = 1 }
local m0 = gp.memory(base)
local P = m0.params
t.near(P, 6.738e9, 1e-3, "llama2-7b: 6.738e9 parameters")

-- gpu, ZeRO 1 on 8 GPUs: the parameters are whole on each rank (ZeRO 1
-- shards the optimizer's states, not the parameters), so the average is
-- 4 B x P = 26.95 GB a GPU (the brief's "7B model: 28 GB fp32 copy", at
-- 6.74e9).  Exact: 4 x the engine's own count.
local mg = gp.memory(with(base, { ema = "gpu" }))
t.is(part(mg, "ema"), 4 * P, "ema gpu, zero 1: 4 B x every parameter on each GPU")
t.near(part(mg, "ema"), 26.95e9, 1e-3, "ema gpu, zero 1: 26.95 GB")
-- The total grows by the average and the allocator's fragmentation on it
-- (fragmentation, 5% of the tensors' bytes): nothing else moves.
t.near((mg.total - m0.total) - (part(mg, "fragmentation") - part(m0, "fragmentation")), 4 * P, 1e-9,
  "ema gpu: the total grows by the average (and its fragmentation) alone")
t.is(part(m0, "ema"), 0, "no ema: no average")

-- ZeRO 3 shards the parameters over the 8 ranks: the average is of the
-- rank's shard, 4 B x P / 8 = 3.37 GB.  (All of llama2-7b's parameters
-- are dense: shard = dp = 8.)
local m3 = gp.memory(with(base, { zero = 3, ema = "gpu" }))
t.near(part(m3, "ema"), 4 * P / 8, 1e-12, "ema gpu, zero 3: the rank's shard, 4 B x P / 8")

-- cpu: nothing on the GPU; 4 B x P in host memory per GPU, 8 GPUs on the
-- DGX H100's host: host_need = 8 x 26.95 GB = 215.6 GB (of its 2 TB).
local mc = gp.memory(with(base, { ema = "cpu" }))
t.is(part(mc, "ema"), 0, "ema cpu: no GPU copy")
t.is(mc.host.ema, 4 * P, "ema cpu: 4 B x P in host memory per GPU")
t.is(mc.host_need, 8 * 4 * P, "ema cpu: the host holds its 8 GPUs' averages")
t.is(mc.total, m0.total, "ema cpu: the GPU's total unchanged")

-- The host check: Llama 3.1 405B at TP 4 on one DGX H100, ema cpu: each
-- GPU holds a quarter of the 405.9e9 parameters (its params, 101.5e9;
-- the embedding and head split too), 4 B each = 405.9 GB of host memory a
-- GPU, x 8 = 3.25 TB on a host of 2 TB (dgx-h100's host_memory): the job
-- does not fit, whatever its GPUs hold.
local mh = gp.memory{ model = "llama3.1-405b", gpu = "h100-sxm", gpus = 8, tp = 4, zero = 1,
  ema = "cpu" }
t.is(mh.host_need, 8 * 4 * mh.params, "ema cpu, 405B TP 4: 8 GPUs x 4 B x their params on the host")
t.ok(mh.host_memory == 2e12 and mh.fits == false,
  "ema cpu: 3.25 TB past the DGX H100's 2 TB host memory: does not fit")
-- Said as the average's, not an offload's (none runs): the host line and
-- the verdict read "host memory (offload): ... (weights 0.00 + grads 0.00
-- + master 0.00 + optimizer 0.00 + ema ...)" and "the offload holds".
local memory = require "gpuplan.memory"
t.like(memory.host_line(mh, 8), "^host memory %(ema cpu%): [%d.]+ GiB per GPU %(the moving "
  .. "average [%d.]+ GiB%).*so ema cpu's moving average does not fit",
  "ema cpu alone: the host line names the average, no offload")
t.like(memory.host_short(mh), "^host memory: ema cpu's moving average holds 3023%.8 GiB",
  "ema cpu alone: the verdict names the average (8 x 4 B x 101.5e9 = 3023.8 GiB)")

-- The step: seq 4096, 64 sequences over 8 GPUs (8 micro-batches a rank).
local job = with(base, { seq = 4096, global_batch = 64 })
local s0 = gp.train(job)
local sg = gp.train(with(job, { ema = "gpu" }))
local o0 = step_part(s0, "optimizer").seconds
local og = step_part(sg, "optimizer").seconds
-- gpu: NeMo's two foreach passes after the optimizer step: _foreach_mul_
-- reads and writes the fp32 average (4 + 4 B), _foreach_add_ reads it
-- (4 B) and the bf16 parameter (2 B) and writes it (4 B): 18 B x 6.74e9
-- = 121.3 GB, at the H100's 3.35 TB/s peak 36.2 ms; the engine's
-- streaming rate is below the peak (its mem_time), so between 36.2 ms and
-- the same bytes at 70% of it, 51.7 ms.  (One 10 B lerp pass, the price
-- before, gave 24 ms: below the floor.)
local d = og - o0
t.ok(d >= 18 * P / 3.35e12 and d <= 18 * P / (0.7 * 3.35e12),
  string.format("ema gpu: the update passes 18 B x P at the HBM's streaming rate (%.4f s)", d))
t.near(sg.step_s - s0.step_s, d, 1e-9, "ema gpu: on the step's critical path, whole")
-- ZeRO 3: the rank's shard, an eighth of the bytes.  Tolerance 1%: the
-- engine's memory-bound time of a pass (roof_mem_time) is not exactly
-- linear in its bytes at the small end (8.4 GB here against 67 GB; 0.14%
-- measured).
local z0 = gp.train(with(job, { zero = 3 }))
local zg = gp.train(with(job, { zero = 3, ema = "gpu" }))
t.near(step_part(zg, "optimizer").seconds - step_part(z0, "optimizer").seconds, d / 8, 1e-2,
  "ema gpu, zero 3: the pass over the rank's shard, 1/8 of zero 1's")

-- cpu: the rank's parameters (2 B each, 13.5 GB) copied to the host over
-- its PCIe link each step (the DGX H100's Gen5 x16, ~50 GB/s: 0.27 s),
-- then NeMo's host thread updates the average there (its mul and add
-- passes, 4 + 4 + 4 + 2 + 4 = 18 B a parameter, 121.3 GB) at the rank's
-- share of the host's DRAM: 0.8 x the DGX H100's 614.4 GB/s over its 8
-- ranks = 61.44 GB/s, 1.97 s.  Under the next step (3.5 s here): hidden,
-- the step unchanged.
local sc = gp.train(with(job, { ema = "cpu" }))
t.is(sc.step_s, s0.step_s, "ema cpu: the copy and the host update hide under a 3.5 s step")
local hid = step_part(sc, "optimizer").hidden - step_part(s0, "optimizer").hidden
local host = 18 * P / (0.8 * 614.4e9 / 8)
t.ok(hid - host >= 2 * P / 64e9 and hid - host <= 2 * P / 25e9, string.format(
  "ema cpu: hidden, 2 B x P over a 25-64 GB/s PCIe link and 18 B x P at 61.44 GB/s (%.3f s)", hid))
-- A short step (seq 256, 8 sequences: one of 256 tokens a GPU, tens of
-- ms) cannot hide the 2.24 s copy and update: the step waits for them
-- (the next step's optimizer joins both, NeMo's EMAOptimizer.join), so
-- it lasts them.
local short = with(base, { seq = 256, global_batch = 8 })
local c1 = gp.train(with(short, { ema = "cpu" }))
t.near(c1.step_s, hid, 1e-9, "ema cpu: a step shorter than the copy and update lasts them")
-- host_bw prices the host update: 120 GB/s a node is 15 GB/s a rank,
-- 121.3 GB / 15 GB/s = 8.09 s + the copy, past the 3.5 s step.
local slow = gp.train(with(job, { ema = "cpu", host_bw = "120GB/s" }))
t.near(slow.step_s, hid - host + 18 * P / 15e9, 1e-9,
  "ema cpu, host_bw 120GB/s: the step lasts the copy and the host update at 15 GB/s a rank")
t.raises(function() gp.train(with(job, { host_bw = "120GB/s" })) end,
  "host_bw is what the offloaded optimizer steps at (or ema cpu's host update)",
  "host_bw without offload or ema cpu refused", true)

-- Refused by name: an adapter's average is not priced.
t.raises(function() gp.train(with(job, { method = "lora", ema = "gpu" })) end,
  "ema applies to method pretrain|full (got lora)", "ema with lora refused, naming it", true)

-- The layout search reuses each phase's states and post-step terms across
-- ZeRO stages (engine/memory_train.c states_replay, train.c's post memo):
-- its rows must be gp.train's own figures for the same layout, the
-- average's bytes and pass included (exact: the same expressions; the
-- search's job is a pretrain on the megatron stack, its defaults).
local sw = gp.sweep{ model = "llama2-7b", gpu = "h100-sxm", gpus = 8, seq = 4096,
  global_batch = 64, ema = "gpu", zero = { 1, 3 }, top = 8 }
local same_step, same_mem = true, true
for _, row in ipairs(sw.results) do
  local r = gp.train{ model = "llama2-7b", gpu = "h100-sxm", gpus = 8, seq = 4096,
    global_batch = 64, ema = "gpu", method = "pretrain", stack = "megatron",
    zero = row.zero, tp = row.tp, pp = row.pp, sp = row.sp,
    batch = row.micro_batch, recompute = row.recompute }
  same_step = same_step and r.step_s == row.step_s
  same_mem = same_mem and r.memory.total == row.mem_bytes
end
t.ok(#sw.results > 1 and same_step, "ema gpu: the search's steps are gp.train's (ZeRO 1 and 3)")
t.ok(same_mem, "ema gpu: the search's memory is gp.train's (ZeRO 1 and 3)")

-- One declaration, two meanings: train's ema a name (default none), rl's
-- the actor's flag, off unless given.  The flag's default was inherited
-- from train's: 'gpuplan rl --help' said "--ema ... (default none)", and
-- docs/lua.md listed gp.rl's boolean ema with the default "none".
local options = require "gpuplan.options"
local d = options.get("ema")
t.is(options.view(d, "train").default, "none", "train's ema: default none")
local rv = options.view(d, "rl")
t.ok(rv.type == "flag" and rv.default == false, "rl's ema: a flag, default off (not train's none)")
