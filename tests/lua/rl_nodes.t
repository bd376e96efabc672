-- gp.rl with a rollout engine larger than a node (vLLM / SGLang TP over
-- nodes): its ranks fill whole nodes and its TP all-reduces cross the
-- NICs on the job's topology.  Run with ./gpuplan run tests/lua/rl_nodes.t.
local t = require "tap"
local gp = require "gpuplan"

local with = t.with

-- Qwen2.5-72B (80 layers, hidden 8192) GRPO on 32 H100s, ZeRO-3.
local base = { model = "qwen2.5-72b", gpu = "h100-sxm", gpus = 32, tp = 8, zero = 3,
               recompute = "full" }

-- TP 16 on nodes of 8: two engines of two nodes each (it was refused:
-- "16 gpus exceed the topology (1 nodes x 8 gpus)").
local r16 = gp.rl(with(base, { rollout_tp = 16 }))
t.is(r16.rollout.engines, 2, "rollout tp 16 on 32 GPUs: 2 engines")
t.ok(r16.step_s and r16.step_s > 0, "and a step time")

-- The same engine (TP 8) on nodes of 8 GPUs and on nodes of 4: the GPU
-- work of a decode step is the same, only its TP all-reduces move from
-- NVLink to the NICs.  A tail step (batch 1) runs 2 all-reduces per layer
-- of one token's hidden state, 8192 x 2 B (the attention output and the
-- MLP down projection, row-parallel), so the two tail steps differ by
-- 2 x 80 x (A2 - A1): A2 the all-reduce gp.comm prices over 2 nodes of 4
-- (NCCL: vLLM's custom all-reduce does not span hosts), A1 vLLM's custom
-- all-reduce within the node of 8 (engine/infer.c custom_ar_time: 16 KiB
-- is below 256 KiB, the one-stage kernel, 5.15 us + 7 x 16384 / (0.720 x
-- 450 GB/s)).  Same functions: equal to rounding (1e-9).
-- (Lengths that spread, uniform from 1 to 2047, so the tail step is the
-- longest response alone: at fixed lengths every response runs the last
-- step together.)
local spread = { response_len = 1024, response_max = 2047, response_dist = "uniform" }
local in_node = gp.rl(with(with(base, spread), { tp = 4, rollout_tp = 8 }))
local over = gp.rl(with(with(base, spread), { tp = 4, rollout_tp = 8, gpus_per_node = 4 }))
local a1 = 5.15e-6 + 7 * 8192 * 2 / (0.720 * 450e9)
local a2 = gp.comm { op = "all_reduce", bytes = 8192 * 2, gpus = 8, nodes = 2,
                     system = "dgx-h100" }
t.ok(a2.time > a1, "an all-reduce over two nodes costs more than in one")
t.near(over.rollout.itl_last - in_node.rollout.itl_last, 2 * 80 * (a2.time - a1), 1e-9,
  "TP 8 over two nodes of 4: each tail step pays 160 all-reduces over the NICs")

-- gp.rl_job prices the same engines: a step's rollout TP beyond a node,
-- and back within one, as gp.rl does (the same rl_step: equal exactly).
do
  local job = gp.rl_job(base)
  t.is(job:step { rollout_tp = 16 }.step_s, r16.step_s, "rl_job: rollout tp 16 over two nodes")
  local wide = gp.rl_job(with(base, { rollout_tp = 16 }))
  t.is(wide:step { rollout_tp = 8 }.step_s, gp.rl(with(base, { rollout_tp = 8 })).step_s,
    "rl_job of tp 16 stepped at tp 8: in one node, as gp.rl")
  t.raises(function() job:step { rollout_tp = 12 } end,
    "rollout_tp 12 spans nodes of 8 GPUs", "rl_job: a TP that would split a node", true)
end

-- An engine that would split a node, and a node without NICs: refused,
-- naming the option.
t.raises(function()
  gp.rl(with(base, { gpus = 24, tp = 4, rollout_tp = 12, prompts = 48 }))
end, "rollout_tp 12 spans nodes of 8 GPUs: it must fill whole nodes (a multiple of 8)",
  "rollout_tp 12 on nodes of 8", true)
t.raises(function()
  gp.rl(with(base, { gpus = 24, colocated = false, rollout_gpus = 16, rollout_tp = 16,
                     nics = 0 }))
end, "rl: the rollout engine (rollout_tp 16): 16 GPUs span 2 nodes of 8, but nics = 0 leaves "
  .. "system 'dgx-h100' no NICs to reach the others: give nics = N above 0",
  "nics = 0: names the node and what to give", true)

t.done_testing()
