-- gp.rl with PPO's models on GPU groups of their own (OpenRLHF's Ray
-- placement: ref_gpus, reward_gpus, critic_gpus, colocate_critic_reward),
-- and generation by DeepSpeed-Chat's hybrid engine (rollout_engine).
-- Run with ./gpuplan run tests/lua/rl_groups.t.
local t = require "tap"
local gp = require "gpuplan"
local rl = require "gpuplan.rl"

local with, phase = t.with, t.phase

-- PPO on Qwen2.5-7B: 24 GPUs, of which 8 for the critic and the reward
-- model beside it, 16 for the actor and its colocated rollout.
local base = { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 24, algo = "ppo",
               reward_model = true, critic_gpus = 8, colocate_critic_reward = true, zero = 3,
               recompute = "full", prompts = 64, group = 8, response_len = 1024 }
local r = gp.rl(base)
t.is(r.gpus, 24, "gpus counts the critic's group")
t.is(r.train_gpus, 16, "the actor trains on the other 16")
t.is(r.critic_gpus, 8, "critic_gpus in the result")
t.is(phase(r, "critic_update").pool, "critic", "the critic trains on its group")
t.is(phase(r, "critic_update").gpus, 8, "of 8 GPUs")
t.is(phase(r, "reward").pool, "critic", "the reward model beside it")
t.is(phase(r, "logprob").gpus, 16, "the actor's forward on its 16")
t.ok(r.memory.critic and r.memory.critic.total > 0, "the critic group's memory is reported")

-- The critic's update is gp.train's step of the critic's group: the
-- actor's layout (ZeRO-3, full recompute) on 8 GPUs, 512 sequences of
-- 512 + 1024 tokens (the default prompt and the mean response) in one
-- optimizer step -- the same train_step, so equal exactly.
local tr = gp.train { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 8, zero = 3,
                      recompute = "full", method = "full", seq = 512 + 1024,
                      global_batch = 512 }
t.is(phase(r, "critic_update").seconds, tr.step_s,
  "critic_update = gp.train's step on the critic's 8 GPUs")

-- The loop in OpenRLHF's order: the reference on the actor's GPUs first
-- (R), the critic's values waited for (V, --colocate_critic_reward), then
-- the reward model (W, on the critic's group) beside the actor's
-- log-probabilities (A); the critic trains while the actor updates and
-- syncs.  Colocated, the step is the rollout, these and the sync.
local R, V, W, A = phase(r, "reference").seconds, phase(r, "values").seconds,
  phase(r, "reward").seconds, phase(r, "logprob").seconds
local U, C, S = phase(r, "actor_update").seconds, phase(r, "critic_update").seconds,
  phase(r, "weight_sync").seconds
local want = phase(r, "rollout").seconds + R + V + math.max(A, W) + U
  + math.max(0, C - U - S) + S
t.near(r.step_s, want, 1e-12, "step = rollout + R + V + max(A, W) + U + max(0, C - U - S) + S")

-- Bad placements: a clear error naming the option.
local bad = {
  { { algo = "grpo", reward_model = false, colocate_critic_reward = false },
    "critic_gpus is the critic's own group; the critic is PPO's" },
  { { critic_gpus = false, colocate_critic_reward = false, reward_gpus = 4, reward_model = false },
    "reward_gpus is the reward model's own group; give reward_model" },
  { { critic_gpus = false }, "colocate_critic_reward puts the reward model on the critic's group" },
  { { reward_gpus = 4 }, "colocate_critic_reward and reward_gpus both place the reward model" },
  { { ref_gpus = 8, ref_host = true }, "ref_gpus is the reference's own group" },
  { { critic_gpus = 24 }, "the models' own groups (24 GPUs) leave none of the 24 GPUs" },
  { { critic_gpus = 0 }, "critic_gpus" },
}
for _, b in ipairs(bad) do
  local o = with(base)
  for k, v in pairs(b[1]) do if v == false then o[k] = nil else o[k] = v end end
  t.raises(function() gp.rl(o) end, b[2], b[2], true)
end

-- A case states the placement (validation/SCHEMA.md): the case reader
-- takes the groups and counts them in hardware.gpus.
local predict = require "gpuplan.predict.rl"
local cat = gp.catalog()
local case = {
  kind = "rl", model = cat:get("models", "qwen2.5-7b"), hardware = { gpu = "h100-sxm", gpus = 24 },
  parallel = { tp = 1, zero = 3, recompute = "full" },
  workload = { method = "ppo", seq_len = 512 + 1024 },
  rl = { prompts = 64, group = 8, prompt_len = 512, response_len = 1024, reward_model = true,
         critic_gpus = 8, colocate_critic_reward = true },
  measured = { metric = "step_time_s", value = 100 },
}
local p, why = predict(case, cat)
if not p then t.diag(why) end
t.ok(p and p.value, "a PPO case with a critic group is predicted")
-- The case reader prices with the whole card (margin 0, validation's rule)
-- and the architecture the case states (its model reader's, without the
-- catalog's qkv_bias): gp.rl with the same, the same step.
local cm = require("gpuplan.predict.case").model(case.model, cat)
t.near(p.value, gp.rl(with(base, { margin = 0, model = cm })).step_s, 1e-12,
  "as gp.rl prices the same placement")

-- DeepSpeed-Chat's hybrid engine: static batches of generation_batch per
-- GPU, gathered over the inference TP group (16 x 2 = 32 per engine).
local ds = { model = "llama2-7b", gpu = "a100-sxm-80gb", gpus = 8, algo = "ppo",
             reward_model = true, zero = 3, prompts = 256, group = 1, prompt_len = 256,
             response_len = 256, rollout_engine = "hybrid", rollout_tp = 2 }
local h = gp.rl(ds)
t.is(h.rollout_engine, "hybrid", "rollout_engine in the result")
t.is(h.generation_batch, 16, "generation_batch defaults to DeepSpeed-Chat's 16")
t.is(h.rollout.batch, 32, "an engine's static batch: 16 per GPU x rollout_tp 2 (of its 64)")
t.ok(t.said(h, "generation_batch=16"), "and the default is said")
t.raises(function() gp.rl(with(ds, { colocated = false, rollout_gpus = 4 })) end,
  "rollout_engine = hybrid generates with the actor's own weights: colocated only",
  "hybrid: colocated only", true)
-- vLLM engines fed one actor rank's micro-batch a call (OpenRLHF before
-- v0.4: _generate_vllm sends each rank's micro_rollout_batch_size prompts
-- to engine rank % engines, a Ray actor whose calls run one at a time):
-- static batches of generation_batch sequences an engine, not per GPU.
-- 256 prompts over 4 engines of tp 1 are 64 an engine, 8 rounds of 8;
-- every response is 256 tokens (response_len 256 at seq 512), so each
-- round is 256 decode steps: 8 x 256 = 2048.  At rollout_tp 2 the batch
-- stays 8 (2 engines: 128 each, 16 rounds, 4096 steps).
local vllm = with(ds, { generation_batch = 8, colocated = false, rollout_gpus = 4,
                        rollout_tp = 1, staleness = 0 })
vllm.rollout_engine = nil
local vs = gp.rl(vllm)
t.is(vs.rollout_engine, "vllm", "generation_batch keeps vLLM's engine")
t.is(vs.rollout.batch, 8, "vLLM static: a call's micro-batch of 8 an engine")
t.is(vs.rollout.steps, 8 * 256, "64 prompts an engine: 8 rounds of 256 steps")
local vs2 = gp.rl(with(vllm, { rollout_tp = 2 }))
t.is(vs2.rollout.batch, 8, "at rollout_tp 2 the batch is still the call's 8")
t.is(vs2.rollout.steps, 16 * 256, "2 engines of 128 prompts: 16 rounds of 256 steps")
t.ok(vs2.rollout.decode > gp.rl(with(vllm, { generation_batch = nil })).rollout.decode,
  "continuous batching of all 256 decodes faster than 8 at a time")
t.raises(function() gp.rl(with(ds, { rollout_engine = "deepspeed" })) end,
  "rollout_engine must be vllm, hybrid or hf", "an unknown engine", true)
t.raises(function() gp.rl(with(ds, { async_scheduling = true })) end,
  "async_scheduling is vLLM's", "async_scheduling with hybrid", true)

-- The hybrid engine's host work: Hugging Face generate() reads a value
-- back every step, so the 11 ops before the first layer run with the GPU
-- idle, and a layer's host time plus the 17 ops after the layers are
-- dispatched while it works (gp.rl's HYBRID_LAYER_OPS,
-- HF_GENERATE_PRELUDE_OPS, HF_GENERATE_TAIL_OPS), in ops of
-- GP_EAGER_OP_TIME = 24.84 us on an x86 host.  A layer: DeepSpeed PR
-- #8271's measured OPT-1.3B forward on an H100 host, 4.52 ms, less its 13
-- ops outside the 24 layers: (4.52e-3 - 13 x 24.84e-6) / (24 x 24.84e-6)
-- = 7.0403 ops (to 1e-4: the figure is the ratio itself).
local op = 24.84e-6
local lay = (4.52e-3 - 13 * op) / (24 * op)
t.near(rl.HYBRID_LAYER_OPS, 7.0403, 1e-4, "a layer's host time: 7.04 ops (PR #8271's forward)")
t.is(rl.HF_GENERATE_PRELUDE_OPS + rl.HF_GENERATE_TAIL_OPS, 28, "28 ops around the layers")
-- Llama 2 7B at rollout tp 1 on an A100, batches of 16: the GPU's step
-- (13.5 GB of weights at 2 TB/s, ~6.7 ms) outlasts the dispatch ((7.04 x
-- 32 + 17) x 24.84 us = 6.02 ms), so only the prelude adds: 11 x 24.84 us
-- a step over the 2 rounds x 256 steps of an engine's 32 samples.
local g = gp.rl(with(ds, { rollout_tp = 1 }))
t.is(g.rollout.steps, 512, "2 static rounds of 256 steps")
t.near(g.rollout.host, 512 * 11 * op, 1e-9,
  "GPU-bound: the host adds the serial prelude, 11 ops a step")
-- Llama 3.2 1B on H100s, 4 a GPU: the GPU's step (2.5 GB at 3.35 TB/s,
-- under 1 ms) is shorter than the host's (7.04 x 16 + 17 + 11) x 24.84 us
-- = 3.494 ms, which then is the step: every decode step the same.
local s1 = gp.rl { model = "llama3.2-1b", gpu = "h100-sxm", gpus = 8, algo = "ppo",
                   reward_model = true, zero = 2, prompts = 64, group = 1, prompt_len = 256,
                   response_len = 256, rollout_engine = "hybrid", generation_batch = 4 }
t.near(s1.rollout.itl_first, (lay * 16 + 17 + 11) * op, 1e-12,
  "host-bound: a decode step is the host's 16 layers and 28 ops")
t.near(s1.rollout.decode, s1.rollout.steps * (lay * 16 + 28) * op, 1e-9,
  "and the decode is its steps at that")

-- rollout_engine hf (OpenRLHF without vLLM engines): the same static
-- batches through the actor's Hugging Face modules, every layer waiting on
-- _get_unpad_data's nonzero and .item(): M.HF_LLAMA_LAYER_OPS = 62 a
-- Llama layer plus generate()'s 28 around them.  The kernels still run
-- while the host dispatches (PyTorch's asynchronous execution), so a
-- layer lasts the longer of its dispatch and its kernels, as the hybrid
-- engine's step does, plus what of the cache's cat (issued three ops
-- before the wait) outlasts those three ops.
t.is(rl.HF_LLAMA_LAYER_OPS, 62, "62 ops a Llama decoder layer")
t.is(rl.HF_CACHE_WAITED, 2, "the cat's two passes waited on")
t.is(rl.HF_WAIT_LEAD_OPS, 3, "three ops between the cat and the wait")
-- (at ZeRO-2 with Adam offloaded, OpenRLHF's: under ZeRO-3 each forward
-- would gather the partitions again, which rollout_engine hf refuses as
-- not priced)
local hfr = gp.rl(with(ds, { rollout_tp = 1, rollout_engine = "hf", zero = 2,
                             offload = "optimizer" }))
t.is(hfr.rollout_engine, "hf", "rollout_engine hf in the result")
t.is(hfr.rollout.steps, 512, "the same 2 static rounds of 256 steps")
-- Llama 2 7B at batch 16 on an A100 (the hybrid case above): the GPU's
-- first decode step is the hybrid engine's less its 11 serial ops and its
-- own kernels, plus the dense cache's copies (gp.rl's HF_CACHE_COPIES = 6:
-- the cat, the transposed reshape and the unpad gather, each a read and a
-- write) of 16 sequences x 257 tokens x 524288 B (Llama 2 7B's K and V,
-- 2 x 32 heads x 128 x 2 B x 32 layers) x 6 = 12.94 GB, at the A100's
-- memory roofline (gp.roofline's time for those bytes).
t.is(rl.HF_CACHE_COPIES, 6, "six passes over the dense cache a step")
local copies = gp.roofline { gpu = "a100-sxm-80gb",
  op = { flop = 0, bytes = 6 * 16 * 257 * 524288, prec = "bf16" } }.op.time
t.ok(copies > 12.94e9 / 2.1e12 and copies < 12.94e9 / 1.0e12,
  "the copies at 1-2.1 TB/s")
local gpu1 = g.rollout.itl_first - 11 * op - g.hybrid_kernels + copies
-- The host's path: (62 x 32 + 17) ops dispatched, the 11 of the prelude
-- serial, and the cat's third of the copies less the 3 x 32 ops of lead
-- it has, when positive: 2012 x 24.84 us = 49.98 ms, against a GPU step
-- of ~15 ms -- host-bound, so the step is the host's path.
local path = (62 * 32 + 17) * op + math.max(0, copies / 3 - 3 * 32 * op) + 11 * op
t.ok(gpu1 < path - 11 * op, "host-bound: the GPU's step is shorter than the dispatch")
t.near(hfr.rollout.itl_first, path, 1e-12,
  "hf: the host's dispatch, the cat's unhidden copy and the prelude, not the GPU's step added")
-- Every decode step is at least its 2012 ops and at most the last one
-- (the context only grows), so the decode lies between.
t.ok(hfr.rollout.decode >= 512 * 2012 * op - 1e-9
  and hfr.rollout.decode <= 512 * hfr.rollout.itl_last + 1e-9,
  "hf: the decode between 512 x 2012 ops and 512 x its last step")
t.is(hfr.hybrid_kernels, nil, "hf: no DeepSpeed kernels")

-- The hybrid engine's kernels beyond the serving step's (gp.rl's
-- HYBRID_EXTRA_LAYER_KERNELS, HF_GENERATE_TAIL_KERNELS): DeepSpeed
-- v0.9.0's pt_binding.cpp launches 14 kernels an OPT layer where the
-- serving model prices 9 (the q/k/v bias add, the unfused attention's
-- softmax, second batched GEMM and transform back, the bias residual:
-- 5), and generate()'s 17 tail ops less the final norm, LM head and
-- argmax the serving step has (14).  Llama 2 7B, 32 layers: 5 x 32 + 14
-- = 174 kernels a decode step, each the A100's time for a small op (16
-- sequences x 4096 x 2 B, read and written: 262144 B) without CUDA graphs.
t.is(rl.HYBRID_EXTRA_LAYER_KERNELS, 5, "5 kernels a layer beyond the serving step")
t.is(rl.HF_GENERATE_TAIL_KERNELS, 14, "14 of generate()'s tail ops beyond it")
local small = gp.roofline { gpu = "a100-sxm-80gb",
  op = { flop = 0, bytes = 2 * 16 * 4096 * 2, prec = "bf16", graphs = false } }.op.time
t.ok(small > 2e-6 and small < 20e-6, "a small kernel: a launch and a fill, 2-20 us")
t.near(g.hybrid_kernels, 174 * small, 1e-12, "174 small kernels a decode step")
-- on the GPU's timeline: a GPU-bound step (above) lasts that much longer
-- than the same step would without them, and the host's share is unchanged
t.near(g.rollout.host, 512 * 11 * op, 1e-9, "the host still adds only its prelude")
-- OpenRLHF's actor ranks generate on their own (no collective between
-- them before the update): under hf each engine's round ends at its own
-- batch's longest response, the longest of 16 draws -- what one engine
-- alone decodes -- where the hybrid engine's ranks, in step, wait for the
-- longest of all 8 x 16 (lengths drawn with a mean of 200 tokens, up to
-- 1024): hf's rounds end where the hybrid engine's would with 2 a GPU
-- (8 x 2 = 16 draws).
local spread = { rollout_tp = 1, generation_batch = 16, response_len = 200,
                 response_max = 1024 }
local own = gp.rl(with(ds, with(spread, { rollout_engine = "hf", zero = 2,
                                          offload = "optimizer" })))
local sixteen = gp.rl(with(ds, with(spread, { generation_batch = 2 })))
local step8 = gp.rl(with(ds, spread))
t.ok(own.rollout.longest > 0, "hf: the rollout runs")
t.near(own.rollout.longest, sixteen.rollout.longest, 1e-9,
  "hf: a round ends at its own batch's longest, the longest of 16 draws")
t.ok(step8.rollout.longest > own.rollout.longest + 1,
  "hybrid: every round waits for the longest of all the engines' batches")
t.raises(function() gp.rl(with(ds, { rollout_engine = "hf", model = "qwen3-30b-a3b" })) end,
  "rollout_engine = hf counts the ops of a Llama decoder layer", "hf refuses a MoE model",
  true)
t.raises(function() gp.rl(with(ds, { rollout_engine = "hf", colocated = false,
                                     rollout_gpus = 4 })) end,
  "rollout_engine = hf generates with the actor's own weights: colocated only",
  "hf: colocated only", true)
-- hf has no engine TP of its own: ds's rollout_tp 2 over an actor of tp 1
-- is refused, naming both.
t.raises(function() gp.rl(with(ds, { rollout_engine = "hf" })) end,
  "rollout_engine = hf generates on each actor rank's own modules: rollout_tp 2 is not the "
    .. "actor's tp 1", "hf: rollout_tp is the actor's", true)

-- hf generates on the actor's own modules (openrlhf/models/actor.py
-- generate: self.model.generate on the rank's ZeRO-2 copy), so the
-- rollout holds the actor's 16-bit weights once, not a trainer's copy
-- and an engine's.  OpenRLHF's placement for Llama 2 7B (actor 4, critic
-- 2, reward 1, reference 1; ZeRO-2 with the optimizer offloaded): the
-- weights are 6,738,415,616 parameters x 2 B = 13,476,831,232 B, exact
-- (the same count gives the offloaded fp32 gradient partition below).
local function part(m, name)
  for _, c in ipairs(m.components) do if c.name == name then return c.bytes end end
  return 0
end
local orl = { model = "llama2-7b", gpu = "a100-sxm-80gb", gpus = 8, algo = "ppo",
              reward_model = true, zero = 2, offload = "optimizer", recompute = "full",
              ref_gpus = 1, reward_gpus = 1, critic_gpus = 2, prompts = 64, group = 1,
              prompt_len = 256, response_len = 256, rollout_engine = "hf",
              generation_batch = 16 }
local oh = gp.rl(orl)
local w16 = 6738415616 * 2
t.is(oh.memory.update.host.grads, 6738415616, "the offloaded fp32 gradient: 4 B x params / 4")
t.is(part(oh.memory.rollout, "weights") + part(oh.memory.rollout, "rollout_weights"), w16,
  "hf: the rollout holds the 16-bit weights once")
t.is(part(oh.memory.update, "rollout_weights"), 0, "hf: no engine weights beside the update's")
t.is(part(oh.memory.update, "weights"), w16, "the update's own 16-bit weights")
-- The vLLM engine on the same GPUs keeps weights of its own beside the
-- trainer's: both are there.
local vo = with(orl, { rollout_engine = "vllm" })
vo.generation_batch = nil
local ov = gp.rl(vo)
t.is(part(ov.memory.rollout, "weights") + part(ov.memory.rollout, "rollout_weights"), 2 * w16,
  "vllm: the trainer's weights and the engine's")
t.raises(function() gp.rl(with(orl, { offload_states = true })) end,
  "rollout_engine = hf generates with the actor's own weights; offload_states would park them",
  "hf: offload_states refused", true)

t.done_testing()
