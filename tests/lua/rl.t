-- gp.rl{} and gpuplan.vlm: the RL step and multimodal media from Lua,
-- their options and errors.  Run with ./gpuplan run tests/lua/rl.t.
local t = require "tap"
local gp = require "gpuplan"
local rl = require "gpuplan.rl"
local vlm = require "gpuplan.vlm"

local copy, phase = t.with, t.phase

-- GRPO on Qwen2.5-7B, one DGX H100, colocated, ZeRO-3.
local base = { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 8, zero = 3,
               recompute = "full", prompts = 64, group = 8, prompt_len = 512,
               response_len = 2048, response_max = 8192, price = 2.0 }
local r = gp.rl(base)
t.ok(r.fits, "a 7B GRPO step fits 8 H100s at ZeRO-3")
t.is(#r.phases, 10, "ten phases in the engine's order")
t.is(r.phases[1].name, "rollout", "rollout first")
local sum = 0
for _, p in ipairs(r.phases) do sum = sum + p.seconds end
t.near(sum, r.step_s, 1e-12, "colocated: the phases add up to the step")
t.is(r.response_dist, "exp", "response_max beyond response_len: exp lengths")
t.is(r.samples, 512, "64 prompts x 8")
-- 8 engines of one GPU (rollout tp = the actor's tp 1): 64 samples each.
t.is(r.rollout.engines, 8, "8 engines")
t.is(r.rollout.samples, 64, "64 samples per engine")
t.ok(r.rollout.tail > 0 and r.rollout.tail < phase(r, "rollout").seconds,
     "the long responses make a tail inside the rollout")
-- cost per step = step x 8 GPUs x $2 / 3600 s; per 1k prompts x 1000/64.
t.near(r.cost_step, r.step_s * 8 * 2 / 3600, 1e-12, "cost per step")
t.near(r.cost_1k_prompts, r.cost_step * 1000 / 64, 1e-12, "cost per 1k prompts")
t.near(r.samples_per_s, 512 / r.step_s, 1e-12, "samples/s")
t.like(table.concat(r.defaults, ","), "max_batch=1024, max_num_tokens=16384 (vLLM's on h100-sxm)",
       "the engine's limits are vLLM's for an H100", true)
-- A stated max_batch is not reported as vLLM's: only the token budget is.
local given = table.concat(gp.rl(copy(base, { max_batch = 64 })).defaults, ",")
t.ok(given:find("max_num_tokens=16384 (vLLM's on h100-sxm)", 1, true)
     and not given:find("max_batch=", 1, true),
     "max_batch given: only max_num_tokens is the engine's default")

-- steps: hours and cost of the run.
local rs = gp.rl(copy(base, { steps = 100 }))
t.near(rs.hours, 100 * rs.step_s / 3600, 1e-12, "hours = steps x step / 3600")
t.near(rs.cost, 100 * rs.cost_step, 1e-12, "run cost = steps x cost per step")

-- PPO adds the critic's forward and update.
local rp = gp.rl(copy(base, { algo = "ppo" }))
t.ok(phase(rp, "critic_update").seconds > 0 and phase(rp, "values").seconds > 0,
     "ppo: critic phases")
t.ok(rp.step_s > r.step_s, "ppo is slower than grpo")

-- Separate pools: a fixed split, and the searched one.
local rd = gp.rl(copy(base, { rollout_gpus = 4 }))
t.is(rd.colocated, false, "rollout_gpus: separate pools")
t.is(rd.rollout_gpus, 4, "4 rollout GPUs")
t.is(rd.train_gpus, 4, "4 training GPUs")
t.ok(rd.step_s >= phase(rd, "rollout").seconds, "never faster than the rollout pool")
local cmp = rl.compare(base)
t.ok(cmp.colocated.colocated and not cmp.disaggregated.colocated, "compare: both placements")
t.is(cmp.faster, cmp.colocated.step_s <= cmp.disaggregated.step_s and "colocated" or
     "disaggregated", "compare: the faster one is named")
t.ok(cmp.disaggregated.rollout_gpus + cmp.disaggregated.train_gpus == 8,
     "compare: the split uses the 8 GPUs")

-- Offloading the trainer states frees KV for the rollout and costs time.
local ro = gp.rl(copy(base, { offload_states = true }))
t.ok(phase(ro, "offload").seconds > 0, "offload_states: an offload phase")
t.ok(ro.rollout.kv_budget > r.rollout.kv_budget, "and a larger KV budget")

-- The rollout engine's host work: vLLM's 5.5 ms per step at batch 256
-- (rl.ENGINE_HOST), 0.43 ms of it a step's whatever the batch and the rest
-- per sequence, (5.5 - 0.43) ms / 256 = 19.8 us; serial by default, so
-- the decode carries it; with async_scheduling it hides under the GPU's
-- longer steps here (a 7B step at 64 sequences reads ~15 GB of weights:
-- ~5 ms, against 0.43 ms + 64 x 19.8 us = 1.7 ms of host work).
t.is(rl.ENGINE_HOST.step, 0.43e-3, "0.43 ms a decode step")
t.near(rl.ENGINE_HOST.step + 256 * rl.ENGINE_HOST.seq, 5.5e-3, 1e-12,
       "and 19.8 us a sequence: 5.5 ms at batch 256")
t.ok(r.rollout.host > 0, "serial host work is part of the decode")
-- Hand: the decode's 8192 steps (to the limit) x 0.43 ms = 3.5226 s, and
-- its 8192 x 16 (the mean batch) sequence-steps x 19.8047 us = 2.5958 s:
-- 6.1184 s.  2% allowed: each segment's batch is whole sequences, at its
-- midpoint (rollout.c).
t.near(r.rollout.host, r.rollout.steps * rl.ENGINE_HOST.step
       + r.rollout.steps * r.rollout.mean_batch * rl.ENGINE_HOST.seq, 0.02,
       "the decode's host work: steps x 0.43 ms + sequence-steps x 19.8 us")
t.ok(r.rollout.sampler > 0, "and so is sampling with log-probabilities")
-- said as vLLM's default before v0.14.0 (gp.infer's, unstated, is the
-- later releases' on), not as every release's
t.like(table.concat(r.defaults, ","), "async_scheduling=false (vLLM's default before v0.14.0",
  "said", true)
local ra = gp.rl(copy(base, { async_scheduling = true }))
t.is(ra.rollout.host, 0, "async scheduling: the host work is hidden")
-- Serial minus hidden = the decode's host work + the prefill's: its one
-- chunk (8 distinct 512-token prompts in 16384 tokens) a step, 0.43 ms,
-- and each of an engine's 64 requests scheduled once, 64 x 19.8 us.
t.near(phase(r, "rollout").seconds - phase(ra, "rollout").seconds,
       r.rollout.host + rl.ENGINE_HOST.step + 64 * rl.ENGINE_HOST.seq, 1e-9,
       "and the rollout is shorter by it and the prefill's")
-- An engine over more than one host: its executor's cross-host round
-- trip each decode step (engine_xhost_step, on an x86 host's time; the
-- system's host_op_scale stretches it).  Hand: Llama-3.1-8B on 16 H100s,
-- one engine of TP 16 over the two 8-GPU hosts, 1 ms a step: its host
-- work grows by the decode's 8192 steps (to the limit) x 1 ms = 8.192 s;
-- the same engine at TP 8 fits a host and is charged nothing; on GB200,
-- 4 GPUs a host (a compute tray, catalog host_gpus) and host_op_scale
-- 2.75, TP 8 spans two trays: 1 ms x 2.75 = 2.75 ms a step, TP 4 none.
t.is(rl.RAY_CGRAPH_XHOST, 1 / 640.64, "1.56 ms: ray PR #49755's cross-node round trip")
local xh = { model = "llama3.1-8b", gpu = "h100-sxm", gpus = 16, zero = 3,
             recompute = "full", prompts = 64, group = 8, prompt_len = 512,
             response_len = 2048, response_max = 8192, price = 2.0, rollout_tp = 16 }
local rx0 = gp.rl(xh)
local rx1 = gp.rl(copy(xh, { engine_xhost_step = 1e-3 }))
t.is(rx0.engine_xhost_step, 0, "not given: nothing charged")
t.is(rx1.engine_xhost_step, 1e-3, "TP 16 over two hosts: charged")
t.near(rx1.rollout.host - rx0.rollout.host, 8192 * 1e-3, 1e-9,
       "the decode's host work: 8192 steps x 1 ms more")
t.is(rx1.rollout.steps, 8192, "the decode's steps")
t.is(gp.rl(copy(xh, { engine_xhost_step = 1e-3, rollout_tp = 8 })).engine_xhost_step, 0,
     "TP 8 within a host: nothing")
local xg = copy(xh, { gpu = "gb200", gpus = 8, rollout_tp = 8, engine_xhost_step = 1e-3 })
t.near(gp.rl(xg).engine_xhost_step, 2.75e-3, 1e-15, "GB200 TP 8 over two trays: x 2.75")
t.is(gp.rl(copy(xg, { rollout_tp = 4 })).engine_xhost_step, 0, "TP 4 within a tray: nothing")
t.raises(function() gp.rl(copy(xh, { engine_xhost_step = -1 })) end,
         "rl: engine_xhost_step must be seconds per decode step, 0 to 1", "negative", true)
t.raises(function() gp.rl(copy(base, { rollout_engine = "hybrid", engine_xhost_step = 1e-3 }))
         end, "rl: engine_xhost_step is a vLLM or SGLang engine's executor", "hybrid", true)
-- A training pool of its own that parks its optimizer states for the
-- log-probability forwards (NeMo RL v0.4.0): the offload phase on the
-- training pool.  Hand: Qwen2.5-7B's 7615616512 parameters, ZeRO-1 over
-- the 8 training GPUs: fp32 master 4 B and Adam 8 B a parameter / 8 =
-- 3807808256 + 7615616512 = 11423424768 B, out at 1.4 GB/s (fresh
-- pageable memory) and back at the H100's 50.432 GB/s: 8.1596 + 0.2265 =
-- 8.3861 s.  The step, rollout-bound one step off-policy, does not move;
-- the training pool's busy time grows by it.
local lo = { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 16, zero = 1,
             recompute = "full", prompts = 64, group = 8, prompt_len = 512,
             response_len = 2048, response_max = 8192, price = 2.0, rollout_gpus = 8 }
local rl0 = gp.rl(lo)
local rl1 = gp.rl(copy(lo, { logprob_offload = true }))
local st = 0
for _, c in ipairs(rl1.memory.update.components) do
  if c.name == "master" or c.name == "optimizer" then st = st + c.bytes end
end
t.is(st, 11423424768, "the states: 12 B a parameter over 8 ranks")
t.near(phase(rl1, "offload").seconds, st / 1.4e9 + st / 50.432e9, 1e-9,
       "logprob_offload: out at 1.4 GB/s, back at the link")
t.is(phase(rl1, "offload").pool, "train", "on the training pool")
-- The same job on NeMo RL's recipe (catalog mixed-16-rem: Transformer
-- Engine's precision-aware Adam keeping only the master's 16 low bits,
-- Megatron-Core's store_param_remainders): 2 B of master and 8 B of Adam
-- a parameter / 8 = 1903904128 + 7615616512 = 9519520640 B, out at 1.4
-- GB/s and back at 50.432 GB/s: 6.7997 + 0.1888 = 6.9884 s.  Exact but
-- for float rounding: 1e-9.
local rlr = gp.rl(copy(lo, { logprob_offload = true, recipe = "mixed-16-rem" }))
local str = 0
for _, c in ipairs(rlr.memory.update.components) do
  if c.name == "master" or c.name == "optimizer" then str = str + c.bytes end
end
t.is(str, 9519520640, "remainders: the states 10 B a parameter over 8 ranks")
t.near(phase(rlr, "offload").seconds, 9519520640 / 1.4e9 + 9519520640 / 50.432e9, 1e-9,
       "remainders: the offload moves 10 B a parameter, not 12")
-- NeMo RL's fp8 recipe (catalog fp8-16-rem) holds Transformer Engine's
-- cached fp8 cast beside each bf16 weight: the update's weights are 3 B a
-- parameter where mixed-16-rem's are 2, so exactly half as many bytes
-- more (both at tp 1, pp 1: every parameter on the GPU); the states do
-- not change.  Exact: integer byte counts.
local function comp(r, name)
  for _, c in ipairs(r.memory.update.components) do
    if c.name == name then return c.bytes end
  end
end
local f8a = gp.rl(copy(lo, { precision = "fp8", recipe = "mixed-16-rem" }))
local f8b = gp.rl(copy(lo, { precision = "fp8", recipe = "fp8-16-rem" }))
t.is(comp(f8b, "weights"), comp(f8a, "weights") * 3 // 2,
     "fp8-16-rem: 3 B of weights a parameter against 2")
t.is(comp(f8b, "master") + comp(f8b, "optimizer"), comp(f8a, "master") + comp(f8a, "optimizer"),
     "fp8-16-rem: the same states as mixed-16-rem")
-- A GB200's GPU copies to and from host memory over NVLink-C2C (catalog
-- host_link: 99.4 GB/s, one GPU's measured 1 GiB copy on the link), not
-- its PCIe link's 50.432 GB/s.  Colocated Qwen2.5-7B on 8 GB200s with
-- the states offloaded: each way the update's weights, master and Adam
-- and the engine's weights, 57117123840 B; the master and Adam (12 B a
-- parameter / 8 = 11423424768 B) out into pageable memory at 1.4 GB/s
-- instead: 2 x 57117123840 / 99.4e9 + 11423424768 x (1 / 1.4e9 - 1 /
-- 99.4e9) = 1.14924 + 8.15959 - 0.11492 = 9.19390 s (at PCIe's rate
-- 10.198 s).  Exact but for float rounding: 1e-9.
local gb = gp.rl { model = "qwen2.5-7b", gpu = "gb200", gpus = 8, zero = 1, recompute = "full",
                   prompts = 64, group = 8, prompt_len = 512, response_len = 2048,
                   response_max = 8192, offload_states = true, stack = "megatron" }
local gst = 0
for _, c in ipairs(gb.memory.update.components) do
  if c.name == "master" or c.name == "optimizer" then gst = gst + c.bytes end
end
t.is(gst, 11423424768, "GB200: the states 12 B a parameter over 8 ranks")
t.is(gb.swap_bytes, 57117123840, "GB200: the bytes each way")
t.near(phase(gb, "offload").seconds, 2 * 57117123840 / 99.4e9 +
       11423424768 * (1 / 1.4e9 - 1 / 99.4e9), 1e-9,
       "GB200: the offload's link copies over NVLink-C2C at 99.4 GB/s")
t.near(rl1.pools.train.busy - rl0.pools.train.busy, phase(rl1, "offload").seconds, 1e-9,
       "the training pool busier by it")
t.near(rl1.step_s, rl0.step_s, 1e-12, "the rollout-bound step unchanged")
t.is(phase(rl0, "offload").seconds, 0, "not given: no offload")
t.raises(function() gp.rl(copy(base, { logprob_offload = true })) end,
         "rl: logprob_offload is a training pool's of its own", "colocated refused", true)
-- A cache too small for every sample at its longest: the engine's
-- scheduler evicts the latest arrivals and recomputes them (rollout.c);
-- the rollout says how many and for how long.
local rk = gp.rl(copy(base, { rollout_memory = 0.25 }))
t.ok(rk.rollout.queued and rk.rollout.preempted > 0 and rk.rollout.recompute > 0,
     "a small cache: preempted and re-prefilled")
t.ok(phase(rk, "rollout").seconds > phase(r, "rollout").seconds,
     "and the rollout is longer than with the whole card")
t.is(r.rollout.preempted, 0, "none when the samples fit")

-- The framework's work between the phases: its own phase, on the step.
local rf = gp.rl(copy(base, { step_overhead = 2.5 }))
t.is(phase(rf, "framework").seconds, 2.5, "framework phase = step_overhead")
t.near(rf.step_s, r.step_s + 2.5, 1e-9, "colocated: the step is 2.5 s longer")
t.is(phase(r, "framework").seconds, 0, "none by default")

-- A loss run one sequence at a time (NeMo RL's packing loss wrapper): the
-- host's ops per trained sequence, GP_EAGER_OP_TIME = 24.84 us each
-- (common.h), with the GPU idle.  Hand: 512 samples over dp = 8 ranks
-- (8 GPUs, tp = pp = cp = 1), one epoch: 64 sequences a rank x 147 ops x
-- 24.84e-6 s = 0.23372 s, added to the actor update (the same training
-- step otherwise: only rounding differs).
local rlo = gp.rl(copy(base, { loss_ops = 147 }))
t.near(rlo.loss_host, 64 * 147 * 24.84e-6, 1e-12, "loss_host = 64 x 147 x 24.84 us")
t.near(phase(rlo, "actor_update").seconds, phase(r, "actor_update").seconds + rlo.loss_host,
       1e-9, "the per-sequence loss lengthens the actor update by it")
t.is(r.loss_host, 0, "no per-sequence loss by default")
-- Two epochs train each sample twice: twice the sequences a rank.
t.near(gp.rl(copy(base, { loss_ops = 147, epochs = 2 })).loss_host, 2 * rlo.loss_host, 1e-12,
       "epochs 2: twice the per-sequence loss")
-- Log-probabilities from fp32 logits (NeMo RL's DistributedLogprob,
-- engine/rl.c rl_logits): 44 B a logit beyond the fused loss in every
-- forward, 44 + 24 in the update.  Hand: Qwen2.5-7B's 152064-entry
-- vocabulary, tp 1; the forward over 512 samples of 512 + 2048 tokens is
-- 1,310,720 tokens over dp 8, 163,840 a GPU: 163840 x 152064 x 44 B =
-- 1.0962e12 B at the H100's achievable HBM (mem_bw x the arch's hbm
-- fraction: 3.35e12 x 0.84), 0.3896 s; one optimizer step over the same
-- tokens (global batch 512) moves 68/44 of it.  Tolerance 1e-4: the
-- kernel's fill and launch (~5 us of 0.39 s).
local rfl = gp.rl(copy(base, { fp32_logits = true }))
local dev = require("gpuplan.roofline").device(require("gpuplan.catalog").get().gpus["h100-sxm"],
  require("gpuplan.catalog").get())
local hbm = dev.mem_bw * dev.hbm
t.near(rfl.logit_forward, 163840 * 152064 * 44 / hbm, 1e-4 * rfl.logit_forward,
       "logit_forward = 163840 x 152064 x 44 B at the achievable HBM")
t.near(rfl.logit_update, 163840 * 152064 * 68 / hbm, 1e-4 * rfl.logit_update,
       "logit_update = 163840 x 152064 x (44 + 24) B")
t.near(phase(rfl, "logprob").seconds, phase(r, "logprob").seconds + rfl.logit_forward, 1e-9,
       "the old policy's forward carries its fp32 logits")
t.near(phase(rfl, "reference").seconds, phase(r, "reference").seconds + rfl.logit_forward, 1e-9,
       "so does the reference's")
t.near(phase(rfl, "actor_update").seconds,
       phase(r, "actor_update").seconds + rfl.opt_steps * rfl.logit_update, 1e-9,
       "each optimizer step carries them")
t.is(r.logit_forward + r.logit_update, 0, "none with the fused loss (default)")
-- NeMo RL v0.3.0's backward through an int64 one-hot (logit_onehot): 62 B
-- a logit where the scatter moves 30, 32 more in each update, none in
-- the forward-only passes: 163840 x 152064 x (44 + 24 + 32) B.
local roh = gp.rl(copy(base, { fp32_logits = true, logit_onehot = true }))
t.near(roh.logit_update, 163840 * 152064 * 100 / hbm, 1e-4 * roh.logit_update,
       "logit_onehot: logit_update = 163840 x 152064 x (68 + 32) B")
t.near(roh.logit_forward, rfl.logit_forward, 1e-12, "the forwards unchanged")
t.is(roh.logit_onehot, true, "as given")
t.is(rfl.logit_onehot, false, "off by default")
-- A loss run one packed sequence at a time narrows the bin's logits per
-- sequence, each narrowed gradient a zero-filled copy of the bin's added
-- into the rest: 16 k - 4 B a logit more, k = samples / bins.
local rfp = gp.rl(copy(base, { fp32_logits = true, loss_ops = 147, pack_tokens = 16384 }))
local k = 512 / rfp.pack_bins
t.near(rfp.logit_update, rfp.update.tokens_per_step / 8 * 152064 * (68 + 16 * k - 4) / hbm,
       1e-4 * rfp.logit_update, "packed per-sequence loss: (68 + 16 k - 4) B a logit")
-- PPO's actor-shaped critic trains a value head (one output a token, no
-- vocabulary log-softmax): the fp32 logits lengthen the actor's update,
-- not the critic's.  Same config, exact up to rounding (1e-9 s).
local ppo = copy(base, { algo = "ppo", zero = 3 })
local rp0, rp1 = gp.rl(ppo), gp.rl(copy(ppo, { fp32_logits = true }))
t.near(phase(rp1, "critic_update").seconds, phase(rp0, "critic_update").seconds, 1e-9,
       "PPO: the critic's update carries no fp32 logits")
t.near(phase(rp1, "actor_update").seconds,
       phase(rp0, "actor_update").seconds + rp1.opt_steps * rp1.logit_update, 1e-9,
       "PPO: the actor's does")
-- The framework's handling of the engine's tokens after it returns: the
-- busiest engine's 64 samples x 2048 mean response tokens x 7.04 us =
-- 0.92275 s, after its decode.
local rth = gp.rl(copy(base, { token_host = 7.04e-6 }))
t.near(rth.rollout.post, 64 * 2048 * 7.04e-6, 1e-12, "post = 64 x 2048 x 7.04 us")
t.near(phase(rth, "rollout").seconds, phase(r, "rollout").seconds + rth.rollout.post, 1e-9,
       "the rollout lasts that much longer")
t.is(r.rollout.post, 0, "none by default")

-- The engine's frontend run in the caller's process (frontend_host): its
-- seconds per sequence per decode step add to vLLM's per-sequence host
-- work, serial with the GPU.  Fixed 1024-token responses (response_len
-- alone), 64 samples an engine all at once: each of the 1024 decode steps
-- carries all 64, 64 x 1024 sequence-steps x 12.5 us = 0.8192 s more of
-- the decode's host work (rollout.host), exactly; the prefill schedules
-- each of the 64 requests once more, so the rollout lasts 64 x 1025 x
-- 12.5 us = 0.82 s longer.
local fixed = copy(base, { response_len = 1024 })
fixed.response_max = nil
local rf0, rf1 = gp.rl(fixed), gp.rl(copy(fixed, { frontend_host = 12.5e-6 }))
t.is(rf0.response_dist, "fixed", "response_len alone: fixed lengths")
t.near(rf1.rollout.host - rf0.rollout.host, 64 * 1024 * 12.5e-6, 1e-9,
       "frontend: 64 x 1024 sequence-steps x 12.5 us more host work")
t.near(phase(rf1, "rollout").seconds - phase(rf0, "rollout").seconds, 64 * 1025 * 12.5e-6,
       1e-9, "the rollout lasts 64 x 1025 x 12.5 us longer")
t.is(rf1.frontend_host, 12.5e-6, "as given")
t.is(rf0.frontend_host, 0, "none by default")
-- With the engine scheduling asynchronously its host work hides behind
-- the GPU's (max, not sum): the frontend's too.
local ra0 = gp.rl(copy(fixed, { async_scheduling = true }))
local ra1 = gp.rl(copy(fixed, { async_scheduling = true, frontend_host = 12.5e-6 }))
t.ok(phase(ra1, "rollout").seconds - phase(ra0, "rollout").seconds
     < 0.5 * 64 * 1024 * 12.5e-6, "async scheduling overlaps it")
-- NeMo RL's figure: (1/25.98 - 1/27.81) s a request over 203.068 tokens.
t.near(rl.ENGINE_FRONTEND, 12.473e-6, 1e-4, "ENGINE_FRONTEND = 12.47 us")

-- Each sampled token's log-probability returned (logprob_host): its
-- seconds per sequence per decode step add to vLLM's per-sequence host
-- work as the frontend's do.  The same fixed 1024-token responses, 64
-- samples an engine: 64 x 1024 sequence-steps x 10 us = 0.65536 s more
-- host work in the decode, and the rollout 64 x 1025 x 10 us = 0.656 s
-- longer (the prefill's step too); with frontend_host beside it the two
-- add (64 x 1025 x 22.5 us).
local rl1 = gp.rl(copy(fixed, { logprob_host = 10e-6 }))
t.near(rl1.rollout.host - rf0.rollout.host, 64 * 1024 * 10e-6, 1e-9,
       "logprob: 64 x 1024 sequence-steps x 10 us more host work")
t.near(phase(rl1, "rollout").seconds - phase(rf0, "rollout").seconds, 64 * 1025 * 10e-6,
       1e-9, "the rollout lasts 64 x 1025 x 10 us longer")
local rl2 = gp.rl(copy(fixed, { logprob_host = 10e-6, frontend_host = 12.5e-6 }))
t.near(phase(rl2, "rollout").seconds - phase(rf0, "rollout").seconds, 64 * 1025 * 22.5e-6,
       1e-9, "with the frontend's: 64 x 1025 x (10 + 12.5) us")
t.is(rl1.logprob_host, 10e-6, "as given")
t.is(rf0.logprob_host, 0, "none by default")
local ral = gp.rl(copy(fixed, { async_scheduling = true, logprob_host = 10e-6 }))
t.ok(phase(ral, "rollout").seconds - phase(ra0, "rollout").seconds
     < 0.5 * 64 * 1024 * 10e-6, "async scheduling overlaps it too")
-- vLLM PR #57442's engine-core CPU at concurrency 64: 0.84 of a core at
-- 13,583 tokens/s with logprobs=0 against 0.96 at 18,645 without,
-- 61.84 - 51.49 = 10.35 us a token (to 4 digits: the table's own).
t.near(rl.ENGINE_LOGPROB, 10.354e-6, 1e-4, "ENGINE_LOGPROB = 10.35 us")

-- Piecewise CUDA graphs (rollout_piecewise, vLLM before 0.11): each decode
-- step's forward loses rl.PIECEWISE_LAYER = (5.39 - 4.97) ms / 28 = 15 us
-- a layer (vLLM PR #20059).  Qwen2.5-7B has 28 layers: 28 x 15 us = 0.42
-- ms a step; the fixed 1024-token responses decode 1024 steps, so the
-- decode and the rollout last 1024 x 0.42 ms = 0.43008 s longer, exactly
-- (1e-9 s: rounding); the prefill is unchanged (a piecewise graph in
-- either mode).  The gaps are the forward's own: async scheduling, which
-- hides the host's work behind the GPU's, hides none of them (the GPU's
-- ~6 ms a step at batch 64 exceeds the host's ~1.7 ms, so the max is the
-- GPU's and the difference exact).
t.near(rl.PIECEWISE_LAYER, 15e-6, 1e-12, "PIECEWISE_LAYER = (5.39 - 4.97) ms / 28 = 15 us")
local rpw = gp.rl(copy(fixed, { rollout_piecewise = true }))
t.near(rpw.graph_gaps, 28 * 15e-6, 1e-12, "graph_gaps: 28 layers x 15 us a decode step")
t.near(rpw.rollout.decode - rf0.rollout.decode, 1024 * 28 * 15e-6, 1e-9,
       "piecewise: the decode lasts 1024 steps x 0.42 ms longer")
t.near(phase(rpw, "rollout").seconds - phase(rf0, "rollout").seconds, 1024 * 28 * 15e-6, 1e-9,
       "and the rollout as much")
t.is(rpw.rollout.host, rf0.rollout.host, "none of it is host work")
local rpa = gp.rl(copy(fixed, { async_scheduling = true, rollout_piecewise = true }))
t.near(phase(rpa, "rollout").seconds - phase(ra0, "rollout").seconds, 1024 * 28 * 15e-6, 1e-9,
       "async scheduling hides none of it")
t.is(rpw.rollout_piecewise, true, "rollout_piecewise reported as given")
t.is(rf0.rollout_piecewise, false, "off by default")
t.is(rf0.graph_gaps, 0, "no gaps by default")
t.raises(function() gp.rl(copy(base, { rollout_piecewise = true, rollout_eager = true })) end,
         "rl: rollout_piecewise replays CUDA graphs; rollout_eager runs none",
         "rollout_piecewise with rollout_eager refused", true)
t.raises(function() gp.rl(copy(base, { rollout_engine = "hybrid", rollout_piecewise = true })) end,
         "rl: rollout_piecewise is vLLM's CUDA graph mode", "rollout_piecewise with the hybrid engine",
         true)
t.raises(function() gp.rl(copy(base, { rollout_piecewise = "yes" })) end,
         "rl: rollout_piecewise must be true or false (got string 'yes')", "rollout_piecewise is a boolean", true)

-- vLLM without CUDA graphs (rollout_eager): the host dispatches each op of
-- a decode step.  Ops per layer (rl.eager_ops_per_layer, the kernel
-- launches counted in vLLM's code): grouped-KV attention 6 + a dense MLP
-- 4 = 10, + 2 TP all-reduces = 12 at TP 4; Qwen3-30B-A3B (48 MoE layers,
-- no shared expert) at TP 4: 6 + its q_norm and k_norm 2 (model qk_norm)
-- + 2 + a MoE MLP of 1 norm + 1 router + fused_topk 4 + fused_experts 7 =
-- 13, 23; DeepSeek-V3 (MLA with a q
-- LoRA: 29; 3 dense and 58 MoE layers, grouped top-k 8, the routed
-- scale 1, a shared expert 4: 1 + 1 + 8 + 1 + 7 + 4 = 22) at TP 32:
-- 29 + 2 + (3 x 4 + 58 x 22) / 61 = 31 + 1288 / 61 = 52.115.  Exact
-- arithmetic.
local cat = gp.catalog()
t.is(rl.eager_ops_per_layer(cat:get("models", "qwen2.5-7b"), 1), 10, "dense GQA layer: 10 ops")
t.is(rl.eager_ops_per_layer(cat:get("models", "qwen2.5-7b"), 4), 12, "TP 4: 2 all-reduces more")
t.is(rl.eager_ops_per_layer(cat:get("models", "qwen3-30b-a3b"), 4), 23,
     "Qwen3-30B-A3B at TP 4: 23 ops a layer")
t.near(rl.eager_ops_per_layer(cat:get("models", "deepseek-v3"), 32), 31 + 1288 / 61, 1e-12,
       "DeepSeek-V3 at TP 32: 52.1 ops a layer")
-- Without a q LoRA (DeepSeek-V2-Lite's q_proj) the attention has one
-- projection where q_a_proj, q_a_layernorm and q_b_proj are three: 27.
local v3 = cat:get("models", "deepseek-v3")
local noq = setmetatable({ mla = setmetatable({ q_lora_rank = 0 }, { __index = v3.mla }) },
                         { __index = v3 })
t.near(rl.eager_ops_per_layer(noq, 32), 29 + 1288 / 61, 1e-12,
       "MLA without a q LoRA: 2 ops fewer")
-- vLLM's fused grouped top-k (rollout_fused_grouped_topk) routes a MoE
-- layer of DeepSeek-V3 in 1 launch where the native path takes 8 + 1: a
-- MoE MLP of 14, 31 + (3 x 4 + 58 x 14) / 61 = 31 + 824 / 61; a softmax
-- top-k router (Qwen3-30B-A3B) keeps its 23.  Exact arithmetic.
t.near(rl.eager_ops_per_layer(v3, 32, true), 31 + 824 / 61, 1e-12,
       "fused grouped top-k: 8 ops fewer a DeepSeek-V3 MoE layer")
t.is(rl.eager_ops_per_layer(cat:get("models", "qwen3-30b-a3b"), 4, true), 23,
     "a softmax top-k router is not grouped: unchanged")
-- vLLM's fused topk_softmax (rollout_fused_topk_softmax): Qwen3-30B-A3B's
-- routing in 1 launch of 4, 23 - 3 = 20 at TP 4; DeepSeek-V3's grouped
-- router is not a softmax top-k: unchanged.  Exact.
t.is(rl.eager_ops_per_layer(cat:get("models", "qwen3-30b-a3b"), 4, false, true), 20,
     "fused topk_softmax: Qwen3-30B-A3B 20 ops a layer at TP 4")
t.near(rl.eager_ops_per_layer(v3, 32, false, true), 31 + 1288 / 61, 1e-12,
       "DeepSeek-V3's grouped router unchanged by it")
-- With CUDA graphs the fused kernel shortens DeepSeek-V3's decode (the
-- C test t_infer prices the routing rows: 4 kernels a MoE layer in
-- place of 12), leaves its training and refit alone, and changes
-- nothing for a model without a grouped top-k router.
local ds = { model = "deepseek-v3", gpu = "h100-sxm", gpus = 256, tp = 1, pp = 16, ep = 16,
             first_stage_layers = 3, last_stage_layers = 2, recompute = "full",
             colocated = true, offload_states = true, rollout_tp = 32, prompts = 32,
             group = 16, prompt_len = 110, response_len = 701, response_max = 1426,
             stack = "megatron", zero = 1, rollout_memory = 0.6, nic_fabric = "ib-ndr-400",
             nics = 8, gpus_per_node = 8 }
local dn = gp.rl(ds)
local dfu = gp.rl(copy(ds, { rollout_fused_grouped_topk = true }))
t.ok(dfu.rollout.decode < dn.rollout.decode, "DeepSeek-V3: the fused routing decodes faster")
t.is(phase(dfu, "actor_update").seconds, phase(dn, "actor_update").seconds,
     "its training unchanged")
t.is(phase(dfu, "weight_sync").seconds, phase(dn, "weight_sync").seconds, "its refit unchanged")
t.is(dfu.rollout_fused_grouped_topk, true, "rollout_fused_grouped_topk reported as given")
t.is(dn.rollout_fused_grouped_topk, false, "off by default")
-- Asked for on a model without that router, either kernel would change
-- nothing: refused, naming the router the model lacks.
t.raises(function() gp.rl(copy(fixed, { rollout_fused_grouped_topk = true })) end,
  "rl: rollout_fused_grouped_topk given for a model without a grouped-top-k MoE router",
  "Qwen2.5-7B (dense): the fused grouped top-k refused", true)
t.raises(function() gp.rl(copy(ds, { rollout_fused_topk_softmax = true })) end,
  "without a softmax top-k MoE router (its MLA layers route by grouped top-k)",
  "DeepSeek-V3 (a grouped router): fused topk_softmax refused", true)
t.raises(function() gp.rl(copy(fixed, { rollout_fused_topk_softmax = true })) end,
  "without a softmax top-k MoE router (a dense model)",
  "Qwen2.5-7B (dense): fused topk_softmax refused", true)
local q30 = { model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 32, tp = 1, ep = 8, zero = 1,
              stack = "megatron", rollout_tp = 2, prompts = 64, group = 8, prompt_len = 128,
              offload_states = true, recompute = "full", response_len = 1024,
              response_max = 4096 }
local qn = gp.rl(q30)
local qf = gp.rl(copy(q30, { rollout_fused_topk_softmax = true }))
t.ok(qf.rollout.decode < qn.rollout.decode, "Qwen3-30B-A3B: the fused routing decodes faster")
t.is(qf.rollout_fused_topk_softmax, true, "rollout_fused_topk_softmax reported as given")
t.is(qn.rollout_fused_topk_softmax, false, "off by default")
t.raises(function()
  gp.rl(copy(base, { rollout_engine = "hybrid", rollout_fused_topk_softmax = true }))
end, "rl: rollout_fused_topk_softmax is vLLM's routing kernel",
     "rollout_fused_topk_softmax with the hybrid engine refused", true)
t.raises(function()
  gp.rl(copy(base, { rollout_engine = "hybrid", rollout_fused_grouped_topk = true }))
end, "rl: rollout_fused_grouped_topk is vLLM's routing kernel",
     "rollout_fused_grouped_topk with the hybrid engine refused", true)
t.raises(function() gp.rl(copy(base, { rollout_fused_grouped_topk = 1 })) end,
         "rl: rollout_fused_grouped_topk must be true or false (got 1)",
         "rollout_fused_grouped_topk is a boolean", true)
-- Llama 3.2 1B (16 layers, 2.5 GB of weights: about 1 ms of GPU a step)
-- at TP 1: a tail step (one sequence) is the host's (16 x 10 + 10 outer)
-- ops x 24.84 us = 4.2228 ms plus vLLM's engine work for the step and
-- its one sequence, 0.43 ms + 19.8 us: 4.6726 ms, and after it RL's
-- sampling pass over the 128256-entry vocabulary (54 B an entry, 6.9 MB:
-- a few us; 20 us allowed); with CUDA graphs the GPU's step, far shorter.
local small = { model = "llama3.2-1b", gpu = "h100-sxm", gpus = 8, prompts = 64, group = 8,
                prompt_len = 512, response_len = 1024, response_max = 4096 }
local rg = gp.rl(small)
local re = gp.rl(copy(small, { rollout_eager = true }))
t.ok(re.rollout_eager and not rg.rollout_eager, "rollout_eager reported as given")
local host_step = (16 * 10 + 10) * 24.84e-6 + 0.43e-3 + (5.5e-3 - 0.43e-3) / 256
t.ok(re.rollout.itl_last >= host_step and re.rollout.itl_last < host_step + 20e-6,
     string.format("eager: a tail step is the host's dispatch of its ops (%.4f ms, want "
       .. "%.4f + the sampler)", re.rollout.itl_last * 1e3, host_step * 1e3))
t.ok(rg.rollout.itl_last < 0.5 * re.rollout.itl_last, "graph-replayed, under half of that")
t.ok(phase(re, "rollout").seconds > phase(rg, "rollout").seconds, "so the rollout is longer")
t.raises(function() gp.rl(copy(base, { rollout_eager = 1 })) end,
         "rl: rollout_eager must be true or false (got 1)", "rollout_eager is a boolean", true)

-- Only the limit given: the mean is assumed at rl.RESPONSE_SHARE = 0.696 of
-- it (the median of NeMo RL v0.5's 23 published runs) and said so.  Hand:
-- floor(0.696 x 4096 + 0.5) = floor(2851.4) = 2851 tokens; the step is then
-- the one with response_len = 2851 given (same engine inputs: exact).
local lim = copy(base, { response_len = false, response_max = 4096 })
lim.response_len = nil
local ra = gp.rl(lim)
t.ok(t.said(ra, "^response_len=2851 %(assumed"),
     "response_len assumed from response_max, and said so")
t.is(ra.response_dist, "exp", "the assumed mean comes with exp lengths")
t.is(ra.step_s, gp.rl(copy(base, { response_len = 2851, response_max = 4096 })).step_s,
     "the assumed mean prices the step as if given")
-- A limit below the old 1024 default is no longer refused.
local small = copy(base, { response_max = 512 })
small.response_len = nil
t.ok(gp.rl(small).step_s > 0, "response_max 512 alone: a step, not an error")

-- DAPO dynamic sampling: filter_keep 0.5 generates 64 / 0.5 = 128 groups of
-- 8 = 1024 samples to train on 512; the rollout is then the unfiltered
-- rollout of 128 prompts (same engine inputs: exact).
local dk = gp.rl(copy(base, { filter_keep = 0.5 }))
t.is(dk.generated, 1024, "filter_keep 0.5: 1024 generated")
t.is(dk.samples, 512, "512 kept")
t.is(phase(dk, "rollout").seconds, phase(gp.rl(copy(base, { prompts = 128 })), "rollout").seconds,
     "the rollout of 128 prompts' groups")
t.is(phase(dk, "actor_update").seconds, phase(r, "actor_update").seconds,
     "the update of the kept samples")
t.raises(function() gp.rl(copy(base, { filter_keep = 0 })) end,
         "rl: filter_keep must be a number in (0, 1] (got 0)", "filter_keep 0", true)

-- Errors name the option.
t.raises(function() gp.rl(copy(base, { step_overhead = -1 })) end,
         "rl: step_overhead must be seconds per step", "negative overhead", true)
t.raises(function() gp.rl(copy(base, { loss_ops = -1 })) end,
         "rl: loss_ops must be a whole number 0..1000000 (got -1)", "negative loss_ops", true)
-- a fraction of a dispatched op is no count (it was priced as 1.5 ops)
t.raises(function() gp.rl(copy(base, { loss_ops = 1.5 })) end,
         "rl: loss_ops must be a whole number 0..1000000 (got 1.5)", "fractional loss_ops", true)
t.raises(function() gp.rl(copy(base, { token_host = 2 })) end,
         "rl: token_host must be seconds per generated token", "token_host 2 s", true)
t.raises(function() gp.rl(copy(base, { logit_onehot = true })) end,
         "rl: logit_onehot is the backward of the fp32 log-probabilities; give fp32_logits",
         "logit_onehot without fp32_logits", true)
t.raises(function() gp.rl(copy(base, { frontend_host = 2 })) end,
         "rl: frontend_host must be seconds per sequence per decode step", "frontend_host 2 s",
         true)
t.raises(function() gp.rl(copy(base, { rollout_engine = "hybrid", frontend_host = 1e-5 })) end,
         "rl: frontend_host is vLLM's in-process frontend", "frontend_host with the hybrid engine",
         true)
t.raises(function() gp.rl(copy(base, { logprob_host = 2 })) end,
         "rl: logprob_host must be seconds per sequence per decode step", "logprob_host 2 s",
         true)
t.raises(function() gp.rl(copy(base, { logprob_host = -1e-6 })) end,
         "rl: logprob_host must be seconds per sequence per decode step", "logprob_host < 0",
         true)
t.raises(function() gp.rl(copy(base, { rollout_engine = "hybrid", logprob_host = 1e-5 })) end,
         "rl: logprob_host is vLLM's engine core's", "logprob_host with the hybrid engine",
         true)
t.raises(function() gp.rl(copy(base, { async_scheduling = "yes" })) end,
         "rl: async_scheduling must be true or false (got string 'yes')", "async_scheduling is a boolean", true)
t.raises(function() gp.rl(copy(base, { algo = "dpo" })) end, "rl: algo must be grpo or ppo",
         "bad algo", true)
t.raises(function() gp.rl(copy(base, { method = "grpo" })) end,
         "rl: method is how the actor trains", "method grpo is gp.rl's algo", true)
t.raises(function() gp.rl(copy(base, { response_max = 100 })) end,
         "response_max 100 is below response_len 2048", "limit below the mean", true)
t.raises(function() gp.rl(copy(base, { rollout_gpus = 8 })) end,
         "rollout_gpus 8 leaves none of the 8 GPUs to train", "no trainers", true)
t.raises(function() gp.rl(copy(base, { staleness = 1 })) end,
         "staleness applies to separate pools", "staleness when colocated", true)
for _, bad in ipairs { 2.5, -1, 1025 } do
  t.raises(function() gp.rl(copy(base, { rollout_gpus = 4, staleness = bad })) end,
           "staleness must be a whole number 0..1024 (got " .. tostring(bad) .. ")",
           "staleness " .. tostring(bad) .. " refused", true)
end
-- Eight steps ahead on separate pools: the engines never drain (no tail),
-- so the rollout is no longer than one step ahead's, which drains each
-- engine's exponential lengths to their longest.
do
  local one = gp.rl(copy(base, { rollout_gpus = 4, staleness = 1 }))
  local eight = gp.rl(copy(base, { rollout_gpus = 4, staleness = 8 }))
  t.is(eight.rollout.tail, 0, "staleness 8: no drain")
  t.ok(eight.rollout.decode < one.rollout.decode and one.rollout.tail > 0,
       "staleness 8: a shorter decode than one step ahead's, which drains")
end
t.raises(function() gp.rl(copy(base, { global_batch = 100 })) end,
         "not a whole number of mini-batches of 100", "mini-batch must divide", true)
t.raises(function() gp.rl(copy(base, { tokens = 1e9 })) end, "rl: tokens:",
         "tokens is gp.train's", true)
t.raises(function() gp.rl(copy(base, { prompt_lenn = 3 })) end, "rl: unknown option 'prompt_lenn'",
         "misspelt option", true)
-- A quantity without its unit is refused by gp.rl's own resolve step,
-- under its name (not the inner gp.train's, with a position inside it).
t.raises(function() gp.rl(copy(base, { capacity = "80" })) end,
         "rl: capacity '80' needs a unit, e.g. 6GB", "bare-number quantity", true)
t.raises(function() gp.rl(copy(base, { rollout_memory = 1.5 })) end,
         "rl: rollout_memory must be a number in (0, 1] (got 1.5)", "rollout memory out of range", true)
-- An error of a nested setup (the rollout engine's, the actor's) carries
-- no position in its middle: neither gpuplan's nor this script's line that
-- the inner error level pointed at ("rl: rollout: <script>:N: infer: ...");
-- its one position is in front, the line of this script's pcall, as
-- gp.train's and gp.infer's are.
do
  local src = debug.getinfo(1, "S").short_src
  local _, e = pcall(gp.rl, copy(base, { kv = "xx" })); local line = debug.getinfo(1, "l").currentline
  t.is(e, src .. ":" .. line .. ": rl: rollout: unknown kv dtype 'xx' (expected bf16|fp16|fp8|int8|fp4|int4|fp32)",
       "rollout's error without a position in its middle")
  _, e = pcall(gp.rl, copy(base, { system = "nope" })); line = debug.getinfo(1, "l").currentline
  t.is(e, src .. ":" .. line .. ": rl: unknown system 'nope' (see 'gpuplan catalog list systems')",
       "actor's error without a position in its middle")
end

-- --- multimodal media -------------------------------------------------
-- 128 frames at 448 px through Qwen2-VL's 2-frame patches: 64 units of
-- (448 / 28)^2 = 256 tokens = 16384 tokens, each unit 1024 patches.
local v = vlm.tokens { model = "qwen2-vl-7b", video_frames = 128, frame_size = 448 }
t.is(v.units, 64, "128 frames -> 64 temporal units")
t.is(v.video_tokens, 16384, "64 x 256 video tokens")
t.is(v.patches, 65536, "64 x 1024 patches through the ViT")
-- 896 px: (896 / 28)^2 = 1024 tokens per image.
v = vlm.tokens { model = "qwen2-vl-7b", images = 2, image_size = 896 }
t.is(v.tokens, 2048, "2 images at 896 px = 2 x 1024 tokens")
-- 450 px is rounded to 448; 5 frames padded to 6.
v = vlm.tokens { model = "qwen2-vl-7b", video_frames = 5, frame_size = 450 }
t.is(v.units, 3, "5 frames -> 3 units (padded to 6)")
t.like(table.concat(v.defaults, "; "), "450 px rounded to 448", "rounding said", true)
-- LLaVA-1.5's CLIP tower resizes to 336: (336 / 14)^2 = 576, no other size.
v = vlm.tokens { model = "llava-1.5-7b", images = 1 }
t.is(v.tokens, 576, "llava: 576 tokens per image")
t.raises(function() vlm.tokens { model = "llava-1.5-7b", images = 1, image_size = 448 } end,
         "resizes every image to 336 px", "a fixed-resolution tower", true)
t.raises(function() vlm.tokens { model = "qwen2.5-7b", images = 1 } end, "has no vision tower",
         "a text model has no media", true)

-- The training step sees the video: the tower runs, seq counts its tokens.
local tv = gp.train { model = "qwen2-vl-7b", gpu = "h100-sxm", gpus = 8, zero = 3,
                      seq = 20480, video_frames = 64, train_vision = true, recompute = "full",
                      global_batch = 8 }
t.ok(tv.vision_s > 0, "the tower's seconds per step")
t.is(tv.vision_patches, 32 * 1024, "32 units x 1024 patches per micro-batch")
t.raises(function()
  gp.train { model = "qwen2-vl-7b", gpu = "h100-sxm", gpus = 8, seq = 4096, video_frames = 64,
             global_batch = 8 }
end, "64 video frames (32 units of 2 frames) of 256 tokens each (448 px) make 8192 tokens, more than the sequence of 4096", "media longer than seq", true)

-- vlm.plan: fitting layouts first, fastest first.
local rows = vlm.plan { model = "qwen2-vl-7b", gpu = "h100-sxm", gpus = 8, seq = 32768,
                        video_frames = 96, train_vision = true, tps = { 1, 2 },
                        cps = { 1, 2, 4 }, pps = { 1 }, recomputes = { "full" } }
t.ok(#rows > 0, "plan: some layouts")
local sorted = true
for i = 2, #rows do
  if rows[i].fits and not rows[i - 1].fits then sorted = false end
  if rows[i].fits == rows[i - 1].fits and rows[i].tokens_per_s > rows[i - 1].tokens_per_s then
    sorted = false
  end
end
t.ok(sorted, "plan: fitting first, then by tokens/s")
-- A rollout that cannot run (Llama 3 70B on 8 H100s, colocated: the actor's
-- 1284 GiB of training state per GPU leaves the engines no room for a KV
-- cache) has no step: no time, throughput or cost, and why names the
-- rollout.  gp.rl.compare then picks the placement that has a step.
do
  local r = gp.rl { model = "llama3-70b", gpu = "h100-sxm", gpus = 8, steps = 10 }
  t.ok(not r.fits and r.rollout_fits == false, "70B on 8 H100s: the rollout does not fit")
  t.ok(r.step_s == nil and r.samples_per_s == nil and r.tokens_per_s == nil
       and r.cost_step == nil and r.cost_1k_prompts == nil and r.hours == nil and r.cost == nil,
       "no step time, throughput, cost or run hours")
  t.like(r.why, "rollout: no room for the engines' KV cache", "why names the rollout", true)
  local ph = {}
  for _, p in ipairs(r.phases) do ph[p.name] = p end
  t.ok(ph.actor_update.seconds > 0 and ph.actor_update.share == nil,
       "the update keeps its seconds, without a share of a step that has no time")
  local ok = gp.rl { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, zero = 3 }
  t.ok(ok.rollout_fits and ok.step_s > 0, "a rollout that runs has a step")
end

-- A slower host CPU (the catalog system's host_op_scale) stretches every
-- host-time figure of the step by its factor: GB200 NVL72's Grace at 2.75
-- (catalog/systems/nvidia-hgx.lua: 37.08 / 13.48 us for one
-- torch.nn.Linear forward's host time, TransformerEngine issue #2053)
-- against the same rack with the figure taken out of a second load of
-- the catalog (x86 host times, scale 1).  Hand: the loss's host ops
-- (loss_host), the framework's per-token copy (rollout.post), the vLLM
-- engine's per-sequence step work (rollout.host: serial with the GPU,
-- exactly its seconds) and the framework's per-step work (2.6 s ->
-- 7.15 s) each x 2.75, all exact but for rounding.
do
  local gb = { model = "llama3-8b", gpu = "gb200", gpus = 8, prompts = 32, group = 8,
               prompt_len = 128, response_len = 1024, response_max = 4096,
               loss_ops = 147, token_host = 7.04e-6, step_overhead = 2.6 }
  local x86 = gp.catalog { dirs = { "catalog" } }
  x86.systems["gb200-nvl72"].host_op_scale = nil
  local slow, fast = gp.rl(gb), gp.rl(copy(gb, { cat = x86 }))
  t.ok(fast.loss_host > 0 and fast.rollout.host > 0, "x86 host: host work is charged")
  t.near(slow.loss_host, 2.75 * fast.loss_host, 1e-12, "Grace: loss_host x 2.75")
  t.near(slow.rollout.post, 2.75 * fast.rollout.post, 1e-12, "Grace: rollout.post x 2.75")
  t.near(slow.rollout.host, 2.75 * fast.rollout.host, 1e-9, "Grace: engine host x 2.75")
  t.near(phase(slow, "framework").seconds, 2.75 * 2.6, 1e-12, "Grace: framework 2.6 s x 2.75")
  t.near(slow.rollout.decode - slow.rollout.host, fast.rollout.decode - fast.rollout.host,
         1e-9, "the GPU's decode time is the same")
end
-- An engine given what the trainer leaves (no rollout_memory; nothing
-- offloaded) fills it with KV cache, sized as the engine sizes it (its
-- weights and KV pool allocated once: no fragmentation on them), so the
-- rollout state stays within the card's budget: the step docs/fit.md
-- shows fits, its rollout state within the 10% margin.
do
  local j = gp.rl { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, zero = 3,
                    recompute = "full", prompts = 64, group = 8, prompt_len = 1024,
                    response_len = 4096 }
  local ro = phase(j, "rollout")
  t.ok(j.fits, "the engine fills the trainer's leftover and the step fits")
  t.ok(ro.mem_gib <= 79.1 * 0.9 + 1e-9, "its rollout state within the budget (0.9 x 79.1 GiB)")
end
t.done_testing()
