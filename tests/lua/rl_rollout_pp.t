-- gp.rl's rollout engine with pipeline stages (rollout_pp: vLLM's
-- pipeline_parallel_size): an engine of rollout_tp x rollout_pp GPUs whose
-- decode runs its batch as rollout_pp micro-batches in flight.
-- Run with ./gpuplan run tests/lua/rl_rollout_pp.t.
local t = require "tap"
local gp = require "gpuplan"

local with = t.with

-- Qwen2.5-14B on 16 H100s (train TP 4, ZeRO-3, full recompute), engines
-- of TP 2: with rollout_pp 2 an engine holds 2 x 2 = 4 GPUs, so 16 / 4 = 4
-- engines; 64 prompts x 8 = 512 samples, 512 / 4 = 128 an engine.  The
-- pp 1 comparison has 8 engines, and 128 prompts keep 128 an engine.
local base = { model = "qwen2.5-14b", gpu = "h100-sxm", gpus = 16, tp = 4, zero = 3,
               recompute = "full", group = 8, prompt_len = 512, response_len = 1024,
               rollout_tp = 2 }
local r2 = gp.rl(with(base, { rollout_pp = 2, prompts = 64 }))
local r1 = gp.rl(with(base, { prompts = 128 }))
t.ok(r2.fits and r1.fits, "both fit")
t.is(r2.rollout_pp, 2, "rollout_pp in the result")
t.is(r1.rollout_pp, 1, "default 1")
t.is(r2.rollout.engines, 4, "16 GPUs / (tp 2 x pp 2) = 4 engines")
t.is(r2.rollout.samples, 128, "512 samples / 4 engines")
t.is(r1.rollout.samples, 128, "the comparison's 1024 / 8")

-- The first decode step of an engine is the serving model's step plus
-- RL's sampling and the engine's host work of its 128 sequences, which do
-- not depend on the stages.  The serving model's step is gp.infer's decode
-- step of a replica of the same TP x PP at batch 128 and context 512 + 1
-- (input 512, output 2: infer's decode context input + output / 2), which
-- with PP 2 is the pass of one micro-batch of 64 through both stages.  So
-- rollout step - infer step is the same with PP 2 and PP 1 (exactly: the
-- same sums), and fails if the rollout priced the whole batch per pass.
local function step(pp)
  return gp.infer { model = "qwen2.5-14b", gpu = "h100-sxm", tp = 2, pp = pp, batch = 128,
                    input = 512, output = 2, runtime = "vllm" }.itl_s
end
t.near(r2.rollout.itl_first - step(2), r1.rollout.itl_first - step(1), 1e-9,
  "PP 2: the decode step is infer's pass of a micro-batch of 128 / 2 through both stages")
t.ok(r2.rollout.itl_first < r1.rollout.itl_first,
  "half the batch a pass: a shorter step than one TP 2 engine's of all 128")

-- Stages beyond a node: TP 8 x PP 2 on two nodes of 8, one engine, its
-- stages' activation sends over the NICs.
local x = gp.rl { model = "qwen2.5-14b", gpu = "h100-sxm", gpus = 16, tp = 8, zero = 3,
                  recompute = "full", prompts = 64, group = 8, prompt_len = 512,
                  response_len = 1024, rollout_tp = 8, rollout_pp = 2 }
t.ok(x.fits, "an engine of TP 8 x PP 2 over two nodes is priced")
t.is(x.rollout.engines, 1, "16 / (8 x 2) = 1 engine")

-- Bad input: one line naming the key.
t.raises(function() gp.rl(with(base, { prompts = 64, rollout_pp = 0 })) end,
  "rollout_pp", "rollout_pp 0 is refused, named", true)
t.raises(function() gp.rl(with(base, { prompts = 64, rollout_pp = 3 })) end,
  "the rollout engine's 6 GPUs (rollout_tp 2 x rollout_pp 3) do not divide gpus 16", "an engine that does not divide "
  .. "the pool", true)
t.raises(function() gp.rl(with(base, { prompts = 64, tp = 2, rollout_tp = 2, rollout_pp = 6 })) end,
  "rollout_tp 2 x rollout_pp 6 = 12 GPUs spans nodes of 8 GPUs", "stages over part of a node", true)
t.raises(function()
  gp.rl { model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 8, zero = 3, recompute = "full",
          prompts = 64, group = 8, prompt_len = 512, response_len = 1024, rollout_tp = 2,
          rollout_ep = 2, rollout_pp = 2 }
end, "rollout_ep 2 with rollout_pp 2", "expert parallelism with stages: refused, named", true)
t.raises(function()
  gp.rl(with(base, { prompts = 64, rollout_engine = "hybrid", rollout_pp = 2 }))
end, "rollout_pp is a vLLM or SGLang engine's pipeline stages", "the hybrid engine has none", true)

t.done_testing()
