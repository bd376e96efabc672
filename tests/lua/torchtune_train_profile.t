-- What the torchtune train profile (lua/gpuplan/predict/train.lua) sets
-- for a train case whose workload.framework is torchtune: its recipes'
-- plain bf16 ("dtype: bf16": bf16 parameters, gradients and AdamW
-- states, no fp32 master copy) on its own PyTorch modules (stack hf).
-- Run with ./gpuplan run tests/lua/torchtune_train_profile.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(11)

-- The README "Optimization flags" shape: Llama 3.2 3B, one A100, batch
-- 2 packed to 4096, compiled, activation checkpointing.
local case = {
  id = "t", kind = "train",
  model = { name = "Llama 3.2 3B", layers = 28, hidden = 3072, heads = 24, kv_heads = 8,
            ffn_hidden = 8192, ffn_gated = true, vocab = 128256, tied_embeddings = true,
            params_b = 3.21 },
  hardware = { gpu = "a100-sxm-80gb", gpus = 1, gpus_per_node = 1 },
  parallel = { tp = 1, pp = 1, dp = 1, micro_batch = 2, global_batch = 2, recompute = "full" },
  workload = { seq_len = 4096, precision = "bf16", method = "full", optimizer = "adamw",
               kernels = "fused", framework = "torchtune" },
  measured = { metric = "tokens_per_s_per_gpu", value = 7309 },
  source = { title = "torchtune README 'Optimization flags' table" },
}
local seen = t.handed(case)
t.ok(seen and seen.stack == "hf" and seen.recipe == "bf16",
     "torchtune: its own modules (hf stack), plain bf16 recipe")
t.ok(seen and seen.checkpoint_offload_streams == nil, "no checkpoint offload: no stream switch")
-- enable_activation_offloading: OffloadActivations' default use_streams.
case.parallel.checkpoint_offload = true
seen = t.handed(case)
t.ok(seen and seen.checkpoint_offload_streams == true,
     "activation offloading: its copies on a side stream (use_streams=True)")
case.parallel.checkpoint_offload = nil
-- The recipe follows the case's dtype: "dtype: fp32" keeps fp32
-- parameters and states (tf32 matmuls on an A100), no master copy.
case.workload.precision = "tf32"
seen = t.handed(case)
t.ok(seen and seen.recipe == "fp32", "dtype fp32: the plain fp32 recipe, not bf16")
-- fp16 the recipes refuse ("full fp16 training is not supported with
-- this recipe"): the case is not predicted, and the reason says why.
case.workload.precision = "fp16"
local pred, why = require("gpuplan.predict.train")(case, gp.catalog())
t.ok(pred == nil, "dtype fp16: not predicted")
t.like(why or "", "torchtune's recipes refuse it", "the reason names torchtune's refusal", true)
case.workload.precision = "bf16"
-- Sharded over 2 GPUs (zero 3): the distributed recipes' fully_shard,
-- FSDP2, not the hf stack's FSDP1 default; one GPU shards nothing.
t.ok(t.handed(case).fsdp_version == nil, "one GPU: no FSDP version handed")
case.hardware.gpus, case.hardware.gpus_per_node = 2, 2
case.parallel.dp, case.parallel.zero, case.parallel.global_batch = 2, 3, 4
seen = t.handed(case)
t.ok(seen and seen.fsdp_version == 2, "zero 3 on 2 GPUs: fully_shard (FSDP2)")
case.hardware.gpus, case.hardware.gpus_per_node = 1, 1
case.parallel.dp, case.parallel.zero, case.parallel.global_batch = 1, nil, 2
case.workload.framework = nil
seen = t.handed(case)
t.ok(seen and seen.recipe == nil, "no framework named: no recipe handed (gp.train's mixed-16 default)")

-- The price of the recipe is the optimizer step's bytes.  torch.optim.
-- AdamW's foreach step (engine/train_prep.c opt_bytes_of) is 4 p + 14
-- mv + 6 p B a parameter, p the parameter (the master copy when kept),
-- mv half the states: mixed-16 p 4, mv 4 -> 96 B; bf16 p 2, mv 2 -> 48
-- B.  The fused step, 2 (master + states) + 3 g + w: 2 (4 + 8) + 6 + 2 =
-- 32 against 2 (0 + 4) + 6 + 2 = 16.  The same parameters over the same
-- streaming bandwidth, so the foreach saving is 48 / 16 = 3 times the
-- fused one; a ratio of two differences of sums, 1e-9.
local function step(recipe, impl)
  return gp.train { model = "llama3.2-3b", gpu = "a100-sxm-80gb", gpus = 1, seq = 4096,
                    batch = 2, global_batch = 2, method = "full", recompute = "full",
                    kernels = "fused", precision = "bf16", stack = "hf", recipe = recipe,
                    optimizer_impl = impl }.step_s
end
local dforeach = step("mixed-16", "foreach") - step("bf16", "foreach")
local dfused = step("mixed-16", "fused") - step("bf16", "fused")
t.ok(dforeach > 0, "bf16 states: a shorter optimizer step than mixed-16's")
t.near(dforeach / dfused, 3, 1e-9, "foreach saves 48 B a parameter where fused saves 16")
