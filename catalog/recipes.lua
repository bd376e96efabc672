-- Precision recipes and optimizers: what each model state takes per
-- parameter before any sharding, and the dtypes the kernels read of it
-- (engine/memory_states.h; fields in catalog/FORMAT.md).  A new recipe or
-- optimizer is an entry here or in a user's catalog file, no code.
--
--   weights, grads, master  B/param (master 0: the optimizer updates the
--                           training copy itself)
--   state                   B per optimizer-state element (the optimizer's
--                           `state` overrides it: 8-bit Adam)
--   reduce                  B/param a data-parallel gradient reduction moves
--   activations             B per saved activation element
--   offload                 B/param of the trainable partition's dtype the
--                           GPU keeps when ZeRO-Offload moves the states
--   master_shard0           master and states shard over DP even at ZeRO 0
--   reduce_phase            DeepSpeed BF16_Optimizer's flat fp32 gradient
--                           buffers under its pipeline engine (ZeRO 0/1)

recipe {
  id = "mixed-16", name = "fp16/bf16 mixed precision (2 + 2 + 12)",
  weights = 2, grads = 2, master = 4, state = 4,
  reduce = 2, activations = 2, offload = 2,
  source = "Rajbhandari et al. 2020, ZeRO, sec. 3.1: fp16 params and grads 2 + 2, "
        .. "fp32 params, momentum and variance 4 + 4 + 4 (K = 12); the grads reduce "
        .. "in their fp16 dtype",
}

local mixed_16_rem = {
  id = "mixed-16-rem", name = "bf16 with Transformer Engine's precision-aware Adam, 16-bit master remainders (2 + 2 + 10)",
  weights = 2, grads = 2, master = 2, state = 4,
  reduce = 2, activations = 2, offload = 2,
  source = "Megatron-Core OptimizerConfig (megatron/core/optimizer/optimizer_config.py at "
        .. "NeMo RL's pins of v0.3.0 to v0.6.0): \"store_param_remainders: bool = True -- "
        .. "If true, store the 16-bit FP32 parameter remainders in the optimizer state, "
        .. "excluding the 16 bits shared with the BF16 parameters\"; distrib_optimizer.py: "
        .. "\"if self.config.store_param_remainders and self.config.bf16: "
        .. "tensors['master_param'] = init_shard(torch.int16)\" -- with "
        .. "use_precision_aware_optimizer the fp32 master is the bf16 weight and a 2-byte "
        .. "remainder, beside fp32 exp_avg and exp_avg_sq (exp_avg_dtype and "
        .. "exp_avg_sq_dtype default fp32)",
}
recipe(mixed_16_rem)

local megatron_18 = {
  id = "megatron-18", name = "Megatron-LM bf16 with fp32 main grads (18 B/param)",
  weights = 2, grads = 4, master = 4, state = 4,
  reduce = 4, activations = 2, offload = 2,
  source = "Megatron-LM distributed optimizer docs: bf16 params with fp32 main grads "
        .. "and main params, fp32 Adam states, 18 B/param, 6 + 12/d with the "
        .. "distributed optimizer; the fp32 main grads reduce in fp32 "
        .. "(accumulate_allreduce_grads_in_fp32)",
}
recipe(megatron_18)

recipe {
  id = "fp32", name = "plain fp32 (autocast keeps fp32 weights and grads)",
  weights = 4, grads = 4, master = 0, state = 4,
  reduce = 4, activations = 4, offload = 4,
  source = "PyTorch AMP: autocast keeps fp32 weights and grads and casts per op; "
        .. "no master copy, fp32 Adam states; activations saved in fp32",
}

recipe {
  id = "bf16", name = "pure bf16 (no master copy)",
  weights = 2, grads = 2, master = 0, state = 2,
  reduce = 2, activations = 2, offload = 2,
  source = "pure bf16 training: the optimizer updates the bf16 params directly and "
        .. "keeps its states in the param dtype (torch.optim on a bf16 model)",
}

local fp8 = {
  id = "fp8", name = "fp8 compute, Transformer Engine (19 B/param)",
  weights = 3, grads = 4, master = 4, state = 4,
  reduce = 4, activations = 2, offload = 2,
  source = "NVIDIA Transformer Engine FP8 primer: bf16 params plus the fp8 cast of "
        .. "each weight cached between micro-batches (2 + 1), fp32 main grads, "
        .. "master and states as megatron-18",
}
recipe(fp8)

-- mixed-16-rem's states with the fp8 recipe's cached fp8 weight copy (its
-- weights beyond megatron-18's 16-bit ones, the 2 + 1): derived from the
-- two entries above, not restated, so a change to either follows.
recipe {
  id = "fp8-16-rem", name = "fp8 linears on bf16 weights with Transformer Engine's cached fp8 copy, precision-aware Adam with 16-bit master remainders (3 + 2 + 10)",
  weights = mixed_16_rem.weights + (fp8.weights - megatron_18.weights),
  grads = mixed_16_rem.grads, master = mixed_16_rem.master, state = mixed_16_rem.state,
  reduce = mixed_16_rem.reduce, activations = mixed_16_rem.activations,
  offload = mixed_16_rem.offload,
  source = "mixed-16-rem's states (NeMo RL's precision-aware distributed optimizer with "
        .. "Megatron-Core's store_param_remainders, bf16 main grads) under NeMo RL's fp8 "
        .. "recipes (megatron_cfg.fp8_cfg fp8_param: false, e.g. grpo-deepseek-v3-64n8g-fp8-"
        .. "async-1off.yaml and grpo-llama3.1-8b-instruct-2n8g-fp8-async-1off.yaml at v0.5.0): "
        .. "the weights stay bf16 and each Transformer Engine linear keeps the fp8 cast of its "
        .. "weight between micro-batches (the fp8 recipe's 2 + 1; TE's is_first_microbatch "
        .. "weight caching)",
}

recipe {
  id = "deepseek-fp8", name = "DeepSeek-V3 fp8 training (14 B/param)",
  weights = 2, grads = 4, master = 4, state = 2,
  reduce = 4, activations = 2, offload = 2,
  source = "DeepSeek-V3 report arXiv:2412.19437 sec. 3.3.2-3.3.3: weights quantised "
        .. "online per 128x128 block for each GEMM (no cached fp8 copy); \"We adopt the "
        .. "BF16 data format instead of FP32 to track the first and second moments in "
        .. "the AdamW optimizer\"; \"the master weights (stored by the optimizer) and "
        .. "gradients (used for batch size accumulation) are still retained in FP32\"",
}

recipe {
  id = "deepspeed-bf16", name = "DeepSpeed BF16_Optimizer (20 B/param)",
  weights = 2, grads = 6, master = 4, state = 4,
  reduce = 2, activations = 2, offload = 2,
  master_shard0 = true, reduce_phase = true,
  source = "deepspeed/runtime/bf16_optimizer.py: bf16 params, autograd's bf16 .grad "
        .. "(2, kept: backward(clear_lp_grads=False)) plus a flat fp32 accumulation "
        .. "buffer (4) all-reduced as a bf16 copy; the fp32 master and Adam states "
        .. "built on fp32_groups_flat_partition, so partitioned over DP at every "
        .. "stage, ZeRO 0 included (engine.py picks it for a bf16 model with fp32 "
        .. "gradient accumulation at ZeRO 0/1 without offload)",
}

optimizer {
  id = "adamw", name = "AdamW (m, v)",
  states = 2, foreach_adamw = true,
  source = "Loshchilov & Hutter 2019: first and second moments per parameter, in the "
        .. "recipe's state dtype; torch.optim.AdamW's unfused step is its foreach path",
}

optimizer {
  id = "adam8bit", name = "8-bit Adam (bitsandbytes)",
  states = 2, state = 1 + 4 / 2048,
  source = "Dettmers et al. 2022, 8-bit Optimizers via Block-wise Quantization: two "
        .. "8-bit states with one fp32 absmax per 2048-element block each",
}

optimizer {
  id = "sgd", name = "SGD with momentum",
  states = 1,
  source = "torch.optim.SGD: one momentum buffer per parameter",
}

optimizer {
  id = "muon", name = "Muon (momentum + Newton-Schulz on the hidden matrices, AdamW on the rest)",
  states = 1, scalar_states = 2, ns_steps = 5, dp_shard = true,
  source = "Jordan et al. 2024, Muon (github.com/KellerJordan/Muon): one momentum buffer "
        .. "per hidden weight matrix, orthogonalised by 5 Newton-Schulz iterations a step; "
        .. "Liu et al. 2025, Muon is Scalable for LLM Training (arXiv:2502.16982), its "
        .. "Distributed Muon sharding the states over data parallelism; Megatron-Core "
        .. "(megatron/core/optimizer/muon.py at 55ac708, the Megatron-LM of Megatron-Bridge "
        .. "2c2425a): 2-D weights that are not \"is_embedding_or_output_parameter\" go to "
        .. "TensorParallelMuon (muon_num_ns_steps 5, muon_fp32_matmul_prec \"medium\": "
        .. "bf16 GEMMs), the rest (embedding, output layer, norms, biases) to Adam (m, v); "
        .. "dist_muon wraps them in LayerWiseDistributedOptimizer: \"weights are splited "
        .. "into lists and each rank only keep its shard in its optimizer\", \"Megatron DDP "
        .. "handle allreduce grad\", \"allgather updated params to every rank\"",
  notes = "states: the momentum on the hidden matrices; scalar_states: Adam's m and v on "
       .. "the embedding, output layer and norms; the master copy is the recipe's on both",
}
