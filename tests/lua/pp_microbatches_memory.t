-- The activations a step of several pipeline schedule calls holds in
-- flight (gp.train's pp_microbatches; engine/train.c mem_microbatches,
-- engine/memory_train.c): each call is a schedule of its own over its m
-- micro-batches, and a 1F1B call's warm-up on stage k runs min(p - k, m)
-- forwards before its first backward -- torch.distributed.pipelining's
-- Schedule1F1B "warmup_chunks = min(self._n_microbatches, self._num_stages
-- - self._stage.stage_index)" (torch/distributed/pipelining/schedules.py),
-- Megatron-Core's "num_warmup_microbatches = min(num_warmup_microbatches,
-- num_microbatches)" (megatron/core/pipeline_parallel/schedules.py
-- forward_backward_pipelining_without_interleaving) -- so the first stage
-- holds min(pp, m) micro-batches' activations, m one call's, not the
-- step's.  The step's count still sets DeepSpeed's gradient accumulation.
-- Run with ./gpuplan run tests/lua/pp_microbatches_memory.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(12)

-- Llama 3 8B on 8 H100s, PP 4, dp 2, micro-batch 1, global batch 32:
-- 32 / (2 x 1) = 16 micro-batches a step; 32 layers / 4 = 8 a stage.
local function job(x)
  return t.with({ model = "llama3-8b", gpu = "h100-sxm", gpus = 8, pp = 4,
                  seq = 4096, batch = 1, global_batch = 32, zero = 1 }, x or {})
end
local function acts(r) return t.part(r.memory, "activations") end

-- One call of the step's 16: the first stage holds min(4, 16) = 4.
local one = gp.train(job())
t.is(one.memory.inflight, 4, "one call of 16: 4 in flight (pp)")
-- The first stage (the peak) holds its 8 layers' activations for each
-- micro-batch in flight: 8 x act_layer x 4 (Llama's first stage keeps
-- no extra of its own: the embedding's output is the first layer's
-- input).  1e-12: the engine's product of the same three numbers.
local L = one.memory.stage_layers
t.is(L, 8, "8 layers a stage (32 / 4)")
t.near(acts(one), L * one.memory.act_layer * 4, 1e-12, "one call: 8 x act_layer x 4")

-- pp_microbatches 2 < pp 4: 8 calls of 2; stage 0 runs min(4, 2) = 2
-- forwards, then the call's backwards, and the next call starts only
-- after this one drains: 2 in flight (the step's 16 counted 4 before).
local two = gp.train(job { pp_microbatches = 2 })
t.is(two.memory.inflight, 2, "calls of 2 at pp 4: 2 in flight")
t.is(two.memory.stage, 0, "calls of 2: the first stage still the peak")
t.near(acts(two), L * two.memory.act_layer * 2, 1e-12, "calls of 2: 8 x act_layer x 2")
t.near(acts(two), acts(one) / 2, 1e-12, "calls of 2: half the one call's activations")

-- pp_microbatches 8 >= pp 4: 2 calls of 8, min(4, 8) = 4 in flight, as
-- one call of 16 (the bubble doubles, tests/lua/pp_microbatches.t; the
-- memory does not change).
local eight = gp.train(job { pp_microbatches = 8 })
t.is(eight.memory.inflight, 4, "calls of 8 at pp 4: 4 in flight")
t.is(acts(eight), acts(one), "calls of 8: the one call's activations")

-- Interleaved, vpp 2: the first stage holds p (1 + (p - 1) / (p v)) =
-- 4 (1 + 3 / 8) = 5.5 micro-batches' worth of its layers (Korthikanti et
-- al. 2022 sec. 4.2.3) when the call has that many; Megatron-Core's
-- get_pp_rank_microbatches caps the warm-up at the call's m v chunk
-- passes, m micro-batches' worth: calls of 2 hold 2, calls of 8 5.5.
t.near(gp.train(job { vpp = 2, pp_microbatches = 8 }).memory.inflight, 5.5, 1e-12,
       "interleaved, calls of 8: 4 (1 + 3/8) = 5.5 in flight")
t.is(gp.train(job { vpp = 2, pp_microbatches = 2 }).memory.inflight, 2,
     "interleaved, calls of 2: 2 in flight")

-- DeepSpeed's ZeRO-2 gradient accumulation reads the step's micro-batches,
-- not a call's: from a step's second micro-batch on it keeps
-- averaged_gradients beside the reduced partition (stage_1_and_2.py
-- independent_gradient_partition_epilogue, "accumulated_grad.add_(
-- new_avg_grad)"): 2 x 2 B = 4 B a partition element.  Calls of 1 at pp 2
-- (16 micro-batches a step, 16 calls) still accumulate: 4 B, where one
-- call's count (1) would have read 2 B.
local ds = gp.train(job { pp = 2, zero = 2, stack = "deepspeed", pp_microbatches = 1 })
t.is(ds.memory.grad_bytes, 4, "deepspeed zero 2, calls of 1: 2 x 2 B gradient a partition element")
