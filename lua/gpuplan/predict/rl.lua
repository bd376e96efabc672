-- Predict an `rl` validation case (validation/SCHEMA.md) with gpuplan.rl:
-- step_time_s (rollout, forwards, update and weight sync of one GRPO/PPO
-- step), tokens_per_s_per_gpu (the step's prompt + response tokens per
-- second per GPU, NeMo RL's "Tokens / sec / GPU") and mfu (the actor
-- update's model FLOPs utilisation, verl's perf/mfu/actor).
--
-- The case gives the model, the cards, the training layout (parallel), the
-- step's prompts x group, the prompt and mean response tokens
-- (rl.prompt_len, rl.response_len), the longest sequence (workload.seq_len)
-- and the placement (rl.colocated, rl.rollout_gpus, rl.rollout_tp).  What it leaves open comes from the RL framework it
-- states (workload.framework), each setting from that framework's own configs, and is
-- listed in the prediction's defaults; a value the case states wins.

local rl = require "gpuplan.rl"
local case_ = require "gpuplan.predict.case"
local v, model_of = case_.v, case_.model


-- NeMo RL r0.5/r0.6: examples/configs/grpo_math_1B.yaml (the base of every
-- performance recipe) and examples/configs/recipes/llm/performance/*.yaml.
local PROFILES = {
  ["nemo-rl"] = {
    { "stack", "megatron", "Megatron-Core training backend" },
    -- grad_reduce_in_fp32: false, gradient_accumulation_fusion: false:
    -- bf16 main grads.  The distributed optimizer is precision-aware
    -- (megatron_cfg.optimizer use_precision_aware_optimizer: true, every
    -- release v0.3.0 to v0.6.0), so Transformer Engine's FusedAdam keeps
    -- the master in its state, and Megatron-Core's store_param_remainders
    -- (default True at each release's Megatron-LM pin; NeMo RL never sets
    -- it) stores only its 16 low bits beside the bf16 weight
    -- (distrib_optimizer.py: "if self.config.store_param_remainders and
    -- self.config.bf16: tensors['master_param'] = init_shard(torch.int16)"),
    -- with fp32 exp_avg and exp_avg_sq: 2 + 2 + (2 + 8) / dp -- and the
    -- offload's move_optimizer (state[k] = v.to("cpu")) moves those 10.
    { "recipe", "mixed-16-rem", "bf16 params and grads, 16-bit master remainders, fp32 Adam",
      function(o) return o.precision ~= "fp8" end },
    -- Its fp8 recipes (fp8_cfg enabled, fp8_param: false) keep those
    -- states and the bf16 weights, and each Transformer Engine linear
    -- caches its weight's fp8 cast between micro-batches: 1 B a
    -- parameter more (catalog fp8-16-rem).
    { "recipe", "fp8-16-rem", "fp8 linears on bf16 weights (fp8_param: false) with TE's cached "
      .. "fp8 weight copy, 16-bit master remainders, fp32 Adam",
      function(o) return o.precision == "fp8" end },
    { "zero", 1, "use_distributed_optimizer: true" },
    -- use_precision_aware_optimizer: Transformer Engine's FusedAdam keeps
    -- the master and writes the bf16 weights itself; Megatron-Core's
    -- _copy_main_params_to_model_params has nothing to copy
    -- (engine/train_prep.c opt_bytes_of).
    { "master_copy", false, "use_precision_aware_optimizer: true (TE FusedAdam writes the "
      .. "bf16 weights)" },
    { "overlap_grad_reduce", true, "ddp overlap_grad_reduce: true" },
    { "overlap_param_gather", true, "ddp overlap_param_gather: true" },
    -- "colocated generation will always offload optimizer to cuda before
    -- refit" (policy.offload_optimizer_for_logprob's comment).
    { "offload_states", true, "colocated: optimizer offloaded before generation",
      function(o) return o.colocated end },
    { "rollout_memory", 0.6, "vllm_cfg gpu_memory_utilization: 0.6",
      function(o) return o.colocated end },
    { "rollout_memory", 0.8, "async recipes: gpu_memory_utilization: 0.8",
      function(o) return not o.colocated end },
    { "old_logprobs", true, "prev_logprobs recomputed by the policy" },
    -- megatron_policy_worker.use_reference_model: the reference's state
    -- dict is kept on the CPU (setup_reference_model_state) and swapped
    -- with the policy's for the reference forward.
    { "ref_host", true, "reference weights in host memory, swapped in (use_reference_model)" },
    { "ref_model", true, "reference_policy_kl_penalty: 0.01" },
    -- grpo_math_1B.yaml's megatron_cfg (r0.5.0, r0.6.0; the v0.3 base
    -- grpo_math_1B_megatron.yaml alike): freeze_moe_router: true,
    -- moe_router_load_balancing_type: "none" ("seq_aux_loss" causes
    -- logprob error divergence for grpo), moe_router_bias_update_rate:
    -- 0.0 -- nothing balances the experts' ranks (gp.train's moe_balance).
    { "moe_balance", "none", "moe_router_load_balancing_type: none, router frozen",
      function(o, model) return model.moe ~= nil and (o.ep or 1) > 1 end },
    -- The same megatron_cfg sets 'moe_router_dtype: "fp64"' (v0.4.0 to
    -- v0.6.0; the v0.3.0 MoE recipe grpo_math_qwen30ba3b_megatron.yaml
    -- too), which the worker hands to the model ("model_cfg.
    -- moe_router_dtype = ...['moe_router_dtype']", megatron_policy_worker.py
    -- v0.4.0/v0.5.0, megatron/setup.py v0.6.0); of the performance recipes
    -- only grpo-deepseek-v3-64n8g-fp8-async-1off.yaml overrides it (fp32).
    -- Megatron-Core then runs the gating GEMMs as torch.mm in float64
    -- (gp.train's moe_router_dtype; the router frozen, its weight gradient
    -- is still computed by RouterGatingLinearFunction's backward).
    { "moe_router_dtype", "fp64", "megatron_cfg moe_router_dtype: fp64 (the gating GEMMs as "
      .. "torch.mm in float64)", function(o, model) return model.moe ~= nil end },
    -- The framework's host work per step between the GPU phases, from NeMo
    -- RL's own per-step timing of an async GRPO step (github NVIDIA-NeMo/RL
    -- PR #1052): data_processing 0.23 s + logprob_inference_prep 1.34 s +
    -- training_prep 1.06 s (no states offloaded in that run: the mode
    -- switches and the batch's moves to the workers) = 2.6 s, and
    -- buffer_sampling 1.38 s more where the trajectories come from the
    -- replay buffer of separate pools: 4.0 s.  Cross-check: the NeMo RL
    -- v0.3 blog's colocated steps leave 2-4 s outside generation,
    -- logprobs, training and refit (112 - 109, 147 - 144, 213 - 211,
    -- 167 - 163 s; nvidia-nemo.github.io/blog/2025/07/21/nemo-rl-v0.3).
    -- The loss of a packed micro-batch runs one sequence at a time
    -- (SequencePackingLossWrapper, nemo_rl/algorithms/loss/wrapper.py;
    -- sequence_packing.fuse_loss is off by default), and each sequence's
    -- host-dispatched ops, counted in r0.6.0 with the GRPO recipes' loss
    -- (ClippedPGLossFn, k3 KL with its clamps, importance-sampling
    -- correction, token-level): the wrapper 3 (2 .item() of the
    -- sequence's bounds, the loss sum); the log-probabilities 20
    -- (from_parallel_logits_to_logprobs: roll, target mask 3, shift,
    -- index_put, fp32 cast, distributed log-softmax 8 with its two
    -- all-reduces, exp, gather, index_put, all-reduce); the loss 124
    -- (mask 1, token_mult_prob_error 9, gen and policy KL 9 each,
    -- Jensen-Shannon 24, KL penalty 13, clipped ratios 8, importance
    -- weights 3, actor loss 5, sampling ratio 4, entropy 8, sum 1, the
    -- ratio metrics 10, masked selects 6, min/max 8, the returned
    -- .item()s 6; masked_mean = mul, sum, +eps, div).  147 in all.
    { "loss_ops", 147, "the loss one sequence at a time (SequencePackingLossWrapper)" },
    -- NeMo RL's own comparison of its Megatron passes with Megatron-LM's
    -- on the same workloads (github NVIDIA-NeMo/RL issue #2129,
    -- 2026-03-20, "Nemorl vs Megatron: fwd/bwd slowdown (1.1-1.3x)"):
    -- "A moderate slowdown (1.1-1.3x) in the pure compute portion (fwd +
    -- bwd) for Nemorl vs Megatron", token-normalised because "Nemorl and
    -- Megatron use different sequence packing strategies"; no cause is
    -- named.  The v0.3 blog's per-phase times agree that it is the passes
    -- themselves: policy training and get-logprobs short by the same
    -- share (8B: 0.85 and 0.87 of published, 70B: 0.76 and 0.75).  The
    -- low end of the measured range, 1.1, not a value fitted to a case.
    { "fwd_bwd_scale", 1.1, "Megatron fwd+bwd 1.1x Megatron-LM's (the low end of NeMo RL "
      .. "issue #2129's measured 1.1-1.3x)" },
    -- The Megatron worker's log-probabilities, in the update and in both
    -- forwards (nemo_rl/distributed/model_utils.py DistributedLogprob,
    -- v0.3.0 to v0.6.0): the logits cast to fp32, a distributed
    -- log-softmax in five passes and its exp kept for the backward, not
    -- a fused cross-entropy; each packed sequence's loss narrows the
    -- micro-batch's logits (engine/rl.c rl_logits).
    { "fp32_logits", true, "log-probabilities from fp32 logits (DistributedLogprob)" },
    -- Which vLLM engine generates (a case's rl.async_engine, the recipe's
    -- vllm_cfg.async_engine): grpo_math_1B.yaml's is false; asynchronous
    -- GRPO refuses to start without it ("Async GRPO requires vLLM backend
    -- with vllm_cfg.async_engine=True", grpo.py r0.5.0), so every
    -- separate-pool recipe sets it true.
    { "async_engine", false, "vllm_cfg.async_engine: false (grpo_math_1B.yaml)",
      function(o) return o.colocated end },
    { "async_engine", true, "async GRPO requires vllm_cfg.async_engine: true",
      function(o) return not o.colocated end },
    -- The asynchronous engine is vLLM's AsyncLLM, which the worker builds
    -- with AsyncLLM.from_engine_args(AsyncEngineArgs(**llm_kwargs))
    -- (vllm_worker_async.py, r0.4.0 to r0.6.0), whose usage_context
    -- defaults to UsageContext.ENGINE_CONTEXT; vLLM sizes its batch by
    -- context only for LLM_CLASS and OPENAI_API_SERVER
    -- (EngineArgs.get_batch_defaults: "self.max_num_seqs =
    -- default_max_num_seqs.get(usage_context,
    -- SchedulerConfig.DEFAULT_MAX_NUM_SEQS)", and before 0.11 "if
    -- self.max_num_seqs is None and usage_context in
    -- default_max_num_seqs"), so the engine context falls through to
    -- the scheduler's own defaults ("if self.max_num_seqs is None:
    -- self.max_num_seqs = 128"; with chunked prefill
    -- "self.max_num_batched_tokens = DEFAULT_MAX_NUM_BATCHED_TOKENS",
    -- 2048; SchedulerConfig.__post_init__).  NeMo RL passes neither
    -- (its llm_kwargs, and no recipe of r0.4.0 to r0.6.0 but the
    -- DeepSeek-V3 FP8 one sets max_num_seqs), so each asynchronous
    -- engine runs at most 128 sequences a step where the synchronous
    -- one, vllm.LLM (LLM_CLASS), runs 1024 on a card of >= 70 GiB
    -- (gpuplan.rl.engine_limits).
    { "max_batch", 128, "vLLM's AsyncLLM.from_engine_args: the engine context's "
      .. "SchedulerConfig default, 128 sequences a step", function(o) return o.async_engine end },
    { "max_num_tokens", 2048, "vLLM's AsyncLLM.from_engine_args: the engine context's "
      .. "SchedulerConfig default, 2048 tokens a step", function(o) return o.async_engine end },
    -- The synchronous engine's worker turns the batch's outputs into
    -- tensors after llm.generate returns, one token's log-probability
    -- at a time (vllm_worker.py generate: full_logprobs[position] =
    -- ...): 7.04 us a CPU scalar assignment (pytorch PR #32841's
    -- indexing benchmark, "v[0] = 1").  The async engine -- any pool,
    -- colocated too: grpo_train takes run_async_multi_turn_rollout when
    -- _should_use_async_rollouts (vllm_cfg.async_engine) -- handles
    -- each sample as it finishes (vllm_worker_async.py generate_async:
    -- process_single_sample per request, asyncio.as_completed), under
    -- the generation of the others.
    { "token_host", 7.04e-6, "vLLM worker's per-token log-probability copy (sync engine)",
      function(o) return not o.async_engine end },
    -- The synchronous engine is vLLM's LLM class run in the worker's own
    -- process (VLLM_ENABLE_V1_MULTIPROCESSING=0, set by the vLLM worker
    -- v0.3.0 to r0.6.0): its frontend detokenizes and updates each
    -- request between two decode steps (gpuplan.rl.ENGINE_FRONTEND).  The
    -- async engine's AsyncLLM runs the engine core in a process of its own.
    { "frontend_host", rl.ENGINE_FRONTEND, "vLLM's frontend in the worker's process "
      .. "(VLLM_ENABLE_V1_MULTIPROCESSING=0, sync engine)",
      function(o) return not o.async_engine end },
    -- Every request asks for its sampled token's log-probability
    -- (SamplingParams logprobs=0: generation/vllm.py v0.3.0,
    -- vllm_worker.py v0.4.0 to r0.6.0), which vLLM's engine core slices
    -- and packs per request every step and its output processor turns
    -- into Logprob objects (gpuplan.rl.ENGINE_LOGPROB, the core process's
    -- CPU rise).  The synchronous engine runs core and output processor
    -- on the worker's one thread, between two decode steps.  The
    -- asynchronous engine's core packs its outputs on an output thread of
    -- its own process and AsyncLLM's output processor runs in the
    -- worker's, both beside the GPU's step; the slicing left on the
    -- core's loop is not measured apart, so that engine is charged none.
    { "logprob_host", rl.ENGINE_LOGPROB, "vLLM's engine core and frontend in the worker's "
      .. "process handle each sampled token's log-probability (logprobs=0), per sequence per "
      .. "decode step (vLLM PR #57442; sync engine)",
      function(o) return not o.async_engine end },
    -- The refit exports the weights one Hugging Face tensor at a time:
    -- gpuplan.rl.NEMO_RL_EXPORT_TENSOR, from NeMo RL PR #1379's
    -- measured DeepSeek-V3 refit less its transfers.
    { "sync_tensor_time", rl.NEMO_RL_EXPORT_TENSOR, "per-tensor Megatron-Bridge export into "
      .. "vLLM: DeepSeek-V3's 14 s refit less its transfers (NeMo RL PR #1379)" },
    -- Its fp8 generation (vllm_cfg precision "fp8", the engine's
    -- weights fp8) receives the trainer's 16-bit weights and casts each
    -- fp8 linear's whole tensor on every engine rank (fp8.load_weights,
    -- cast_tensor_to_fp8_blockwise, r0.4.0 to r0.6.0; engine/rl_sync.c
    -- RL_FP8_CAST_BYTES).
    { "sync_fp8_cast", true, "fp8 generation: the engine casts the synced 16-bit weights to "
      .. "fp8 itself (fp8.load_weights)", function(o) return o.rollout_weights == "fp8" end },
    -- Every engine of TP > 1 runs on vLLM's Ray executor (vllm_worker.py
    -- r0.5.0/r0.6.0: distributed_executor_backend "ray"), a Ray Compiled
    -- Graph a step in the vLLM these releases pin (0.11.2, 0.17.1):
    -- gpuplan.rl.RAY_CGRAPH_XHOST once an engine spans hosts.
    { "engine_xhost_step", rl.RAY_CGRAPH_XHOST, "vLLM's Ray executor: a compiled-graph "
      .. "round trip across hosts each decode step of an engine over more than one host "
      .. "(ray PR #49755)" },
    { "step_overhead", 2.6, "NeMo RL's per-step data processing and prep (PR #1052 timing)",
      function(o) return o.colocated end },
    { "step_overhead", 4.0, "NeMo RL's per-step data processing, prep and buffer sampling "
      .. "(PR #1052 timing)", function(o) return not o.colocated end },
  },
}

-- verl with its Megatron backend (ppo_megatron_trainer.yaml as generated
-- at commit 65c59c7, 2025-08-13: actor.megatron use_distributed_optimizer
-- true, override_ddp_config {}, so Megatron-Core's DDP defaults).  What a
-- case's recipe script sets (offloads, enforce_eager, the memory share)
-- the case states.
PROFILES.verl = {
  { "stack", "megatron", "verl's Megatron backend (actor.strategy megatron)",
    function(o) return not o.fsdp end },
  { "zero", 1, "megatron.use_distributed_optimizer: true", function(o) return not o.fsdp end },
  { "overlap_grad_reduce", false, "override_ddp_config {}: Megatron-Core's default",
    function(o) return not o.fsdp end },
  { "old_logprobs", true, "actor compute_log_prob recomputes the old log-probabilities" },
  { "ref_model", true, "use_kl_loss: the reference's log-probabilities" },
  -- A case's offload_states is verl's megatron.param_offload (SCHEMA.md),
  -- whose offload_megatron_model_to_cpu copies the actor's weights out
  -- after each of its phases (engine/rl_sched.c RL_PARAM_OUTS).
  { "param_offload", true, "megatron.param_offload: the actor's weights to host after each "
    .. "phase (offload_megatron_model_to_cpu)",
    function(o) return o.colocated and o.offload_states and not o.fsdp end },
  -- verl's FSDP workers copy the actor out with non_blocking=True
  -- (utils/fsdp_utils.py at 94d681dce: offload_fsdp2_model_to_cpu,
  -- offload_fsdp_optimizer), which PyTorch allocates pinned, and their
  -- parameters are the fp32 master (engine/rl_sched.c).
  { "offload_pinned", true, "verl's FSDP offloads: .to(\"cpu\", non_blocking=True) into "
    .. "pinned memory, the fp32 parameters out and back around each phase",
    function(o) return o.fsdp and o.colocated and (o.offload_states or o.param_offload) end },
  -- trainer.balance_batch (default True) balances the whole step's
  -- sequence lengths over the DP ranks ("Reorder the data on single
  -- controller such that each dp rank gets similar total tokens",
  -- ray_trainer.py _balance_batch: get_seqlen_balanced_partitions,
  -- equal_size=True, each partition's indices sorted); each rank then
  -- cuts its share into mini-batches in order (make_minibatch_iterator),
  -- so a mini-batch's share is an unbalanced draw, and every optimizer
  -- step waits for the busiest rank (rearrange_micro_batches all-reduces
  -- the micro-batch count, MAX, and the gradients meet at the step).
  -- Padded to a fixed width (rl.pad_to: no use_remove_padding) every
  -- rank's share is as long as any other's: no skew to wait for.
  { "rank_skew", true, "balance_batch evens the step's batch over the ranks, not its "
    .. "mini-batches", function(o) return not o.pad_to end },
  -- Without use_dynamic_bsz (a case that states parallel.micro_batch,
  -- ppo_micro_batch_size_per_gpu; one that does not gets token_batch
  -- below) the Megatron actor cuts each mini-batch by sequence count,
  -- "micro_batches = mini_batch.batch.split(micro_batch_size)"
  -- (verl/workers/actor/megatron_actor.py forward_backward_batch at
  -- 503ea75f5), each micro-batch packed to its own sequences' tokens
  -- (gptmodel_forward pack_seqs=True): under a pipeline they run at
  -- random lengths (engine/rl_pipe.c).
  { "count_split", true, "megatron_actor: mini_batch.batch.split(micro_batch_size) without "
    .. "use_dynamic_bsz, micro-batches at their sequences' random lengths under the pipeline",
    function(o) return not o.fsdp and (o.pp or 1) > 1 and o.batch ~= nil
      and o.token_batch == nil and not o.pad and not o.pack_tokens end },
  -- verl's Megatron configs of the Qwen2-MoE, Mixtral and Qwen3-MoE
  -- families turn the router's balancing off (verl/models/mcore/
  -- config_converter.py at f6f9100, hf_to_mcore_config_qwen3moe:
  -- moe_router_load_balancing_type="none",  # turn off aux_loss as it
  -- hurts perf in RL"); DeepSeek-V3's keeps "seq_aux_loss"
  -- (hf_to_mcore_config_dpskv3).  A recipe that builds DeepSeek-V3
  -- through mbridge (use_mbridge=True) takes DeepseekV3Bridge's config
  -- instead, 'moe_router_load_balancing_type="none",  # default None for
  -- RL' with an expert bias moving 0.001 an optimizer step (ISEEKYAN/
  -- mbridge d7ddea6): such a case states parallel.moe_balance none, which
  -- this default does not override.
  { "moe_balance", "none", "config_converter: moe_router_load_balancing_type none for "
    .. "Qwen/Mixtral MoE ('turn off aux_loss as it hurts perf in RL')",
    function(o, model) return model.moe ~= nil and model.mla == nil and (o.ep or 1) > 1 end },
  -- The same converter routes DeepSeek-V3's tokens in float64
  -- (hf_to_mcore_config_dpskv3 at 65c59c7: 'moe_router_dtype="fp64"'):
  -- Megatron-Core's gating GEMM and its gradients as torch.mm in fp64
  -- (gp.train's moe_router_dtype), at the card's FP64 rate -- 1 TFLOPS on
  -- an H20.  The MLA MoE models are the DeepSeek-V3 architecture's.
  -- A recipe with actor.megatron.use_mbridge=True builds the config
  -- through mbridge instead, whose DeepseekV3Bridge._build_config sets
  -- 'moe_router_dtype="fp32"' (ISEEKYAN/mbridge d7ddea6, 2025-08-04):
  -- such a case states fp32 (parallel.moe_router_dtype) and this default
  -- does not apply.
  { "moe_router_dtype", "fp64", "config_converter hf_to_mcore_config_dpskv3: "
    .. "moe_router_dtype fp64 (the gating GEMMs as torch.mm in float64)",
    function(o, model) return model.moe ~= nil and model.mla ~= nil and not o.fsdp end },
  -- The weight sync exports the Megatron weights one tensor at a time
  -- (megatron_vllm.py's sharding manager: per_tensor_generator, or
  -- mbridge's export_weights, into vLLM's model.load_weights): each
  -- tensor broadcast over the pipeline stages, gathered over TP and EP,
  -- converted and loaded.  verl's maintainers measured it for DeepSeek
  -- V3.1 ("16x8 | TP8, PP16, EP8 | 120s", verl issue #5311, "The
  -- broadcast on the mbridge side is one by one"): 120 s over
  -- DeepSeek-V3's 45,337 tensors (rl.weight_tensors), 2.65 ms each.
  { "sync_tensor_time", 120 / 45337, "per-tensor Megatron export to vLLM: 120 s for "
    .. "DeepSeek-V3 (verl issue #5311)", function(o) return not o.fsdp end },
  -- Each generate_sequences of verl's FSDP hybrid worker (fsdp_workers.py
  -- and sharding_manager/fsdp_vllm.py, from PR #987 of 2025-04-10 through
  -- v0.5.0; at d7c3d12, 2025-04-30, the play-verl runs' release) calls
  -- torch.cuda.empty_cache() four times: the sharding manager's __enter__
  -- before state_dict() and again after update_params ("del params ...
  -- torch.cuda.empty_cache()", before wake_up(tags=["kv_cache"])), its
  -- __exit__ after "self.inference_engine.sleep(level=1)", and
  -- generate_sequences after it ("# clear kv cache
  -- torch.cuda.empty_cache()"); with the actor's param_offload the
  -- __enter__'s offload_fsdp_model_to_cpu (utils/fsdp_utils.py, its
  -- empty_cache=True default) a fifth.  The step's rollout and every
  -- validation batch is such a call (gp.rl gen_empty_cache), each at
  -- peft PR #2894's 0.080 s (gpuplan.rl.EMPTY_CACHE).
  { "gen_empty_cache", 4, "verl's FSDP hybrid worker: 3 torch.cuda.empty_cache() in its "
    .. "vLLM sharding manager, 1 in generate_sequences, each generate call",
    function(o) return o.fsdp and o.colocated and not o.param_offload end },
  { "gen_empty_cache", 5, "verl's FSDP hybrid worker: 3 torch.cuda.empty_cache() in its "
    .. "vLLM sharding manager, 1 in generate_sequences, 1 in the actor's offload "
    .. "(param_offload), each generate call",
    function(o) return o.fsdp and o.colocated and o.param_offload end },
  -- With param_offload every other phase of the actor (compute_log_prob,
  -- update_actor) and, under PPO, of the critic (compute_values,
  -- update_critic; the scripts offload both alike) ends in
  -- offload_fsdp_model_to_cpu and its empty_cache: 2 or 4 a step.
  { "step_overhead", 2 * rl.EMPTY_CACHE, "verl's FSDP param_offload: the actor's "
    .. "compute_log_prob and update_actor each end in offload_fsdp_model_to_cpu's "
    .. "torch.cuda.empty_cache(), 0.080 s each (peft PR #2894)",
    function(o) return o.fsdp and o.colocated and o.param_offload and o.algo ~= "ppo" end },
  { "step_overhead", 4 * rl.EMPTY_CACHE, "verl's FSDP param_offload: the actor's "
    .. "compute_log_prob and update_actor and the critic's compute_values and update_critic "
    .. "each end in offload_fsdp_model_to_cpu's torch.cuda.empty_cache(), 0.080 s each "
    .. "(peft PR #2894)",
    function(o) return o.fsdp and o.colocated and o.param_offload and o.algo == "ppo" end },
  -- verl builds its vLLM engine with "disable_custom_all_reduce=True"
  -- (workers/rollout/vllm_rollout/vllm_rollout_spmd.py): the TP
  -- all-reduces within a host run NCCL's kernels, not vLLM's own.
  { "rollout_custom_ar", false, "vllm_rollout_spmd.py: disable_custom_all_reduce=True" },
  -- verl's rollout runs vLLM in the worker's own process as one rank of
  -- the engine ("distributed_executor_backend=\"external_launcher\"",
  -- workers/rollout/vllm_rollout/vllm_rollout_spmd.py at 65c59c7), and
  -- vLLM then keeps the engine core in that process too: "if
  -- self.distributed_executor_backend == \"external_launcher\": ...
  -- os.environ[\"VLLM_ENABLE_V1_MULTIPROCESSING\"] = \"0\"" ("Disabling
  -- V1 multiprocessing for external launcher", ParallelConfig.
  -- __post_init__) -- the output processor between two decode steps, as
  -- NeMo RL's synchronous engine (gpuplan.rl.ENGINE_FRONTEND).  verl asks
  -- for no detokenization (detokenize = False), which the measurement
  -- did, and for the sampled token's log-probability (logprobs = 0),
  -- which it did not.
  -- A run on vLLM's V0 engine (rl.vllm_v0: the play-verl scripts' export
  -- VLLM_ATTENTION_BACKEND=XFORMERS, which vLLM 0.8.3 answers "Falling
  -- back to V0") under verl's enforce_eager has no async output
  -- processor, so V0's own output processing takes that place between
  -- two decode steps (gpuplan.rl.ENGINE_V0_OUTPUT, vLLM RFC #6913).
  -- gp.rl's vllm_v0 and vllm_version decide it (gpuplan.rl.v0_outputs,
  -- which gp.rl's own frontend_host default follows); the profile says
  -- it here, in its place among the profile's settings.
  { "frontend_host", rl.ENGINE_V0_OUTPUT, "vLLM's V0 engine under enforce_eager: no async "
    .. "output processor, LLMEngine._process_model_outputs between two decode steps (vLLM "
    .. "RFC #6913)", function(o) return rl.v0_outputs(o) == true end },
  -- V1's in-process frontend: not on V0 (and where gpuplan.rl.v0_outputs
  -- refuses the options, gp.rl says why)
  { "frontend_host", rl.ENGINE_FRONTEND, "vLLM's frontend in the worker's process "
    .. "(external_launcher: VLLM_ENABLE_V1_MULTIPROCESSING=0)",
    function(o) return rl.v0_outputs(o) == false end },
  -- That log-probability (vllm_rollout_spmd.py at 65c59c7: "kwargs =
  -- dict(n=1, logprobs=0,  # can be set to 0 and let actor to recompute",
  -- no rollout config key overrides it) is sliced and packed per request
  -- by the engine core and turned into Logprob objects by the output
  -- processor, both on the worker's one thread between two decode steps
  -- under external_launcher: NeMo RL's synchronous engine's case
  -- (gpuplan.rl.ENGINE_LOGPROB, vLLM PR #57442).
  { "logprob_host", rl.ENGINE_LOGPROB, "vLLM's engine core and frontend in the worker's "
    .. "process handle each sampled token's log-probability (logprobs=0), per sequence per "
    .. "decode step (vLLM PR #57442; external_launcher)" },
}

-- OpenRLHF (train_ppo_ray.py): the actor's and the critic's Hugging Face
-- modules trained by DeepSpeed's ZeRO engine (openrlhf/utils/
-- deepspeed.py: deepspeed.initialize over the model and its optimizer),
-- FlashAttention-2 where its scripts pass --flash_attn (gp.rl's default
-- flash) -- the training predictor's deepspeed rules, as DeepSpeed-Chat's
-- below, except that OpenRLHF's ds_config overlaps the gradient
-- reduction: openrlhf/utils/deepspeed_utils.py get_train_ds_config (at
-- 35865c7e, January 2024) sets '"overlap_comm": True'.
-- Each of its models' ranks is a Ray actor asking one CPU:
-- openrlhf/trainer/ray/launcher.py PPORayActorGroup._initiate_actors (at
-- 35865c7e) creates them with ".options(num_cpus=num_gpus_per_actor,
-- num_gpus=num_gpus_per_actor, ...)", num_gpus_per_actor 1, and Ray
-- sets a worker's OMP_NUM_THREADS to the CPUs it was assigned
-- (ray-project/ray python/ray/_private/utils.py
-- set_omp_num_threads_if_unset: "omp_num_threads =
-- max(math.floor(num_assigned_cpus), 1)"), which DeepSpeedCPUAdam's
-- "#pragma omp parallel for" (csrc/includes/cpu_adam.h Step_AVX) and
-- PyTorch's CPU ops follow: the --adam_offload step of each actor and
-- critic rank runs on one thread (gp.train's host_threads).
-- Its micro-batches are padded, not packed (before --packing_samples):
-- the replay buffer strips each sample's padding and collate_fn pads a
-- micro-batch back to its longest (openrlhf/trainer/ppo_utils/
-- replay_buffer.py make_experience_batch: "zero_pad_sequences(vals,
-- 'left')", max_len = the longest of the batch), and the experience
-- maker's forwards run on the generated batch as generate() returned it,
-- every row as long as its longest (gp.rl's pad_batch: the update at
-- its micro-batch's longest, the forwards at the generate batch's).
PROFILES.openrlhf = {
  { "overlap_grad_reduce", true, "get_train_ds_config: overlap_comm True" },
  -- The same function's ds_config sets the accumulation dtype: at
  -- 35865c7e (January 2024) and 391e1de4 (May 2024) '"data_types":
  -- {"grad_accum_dtype": grad_accum_dtype if grad_accum_dtype else
  -- "fp32"}', and train_ppo_ray.py's '--grad_accum_dtype' defaults to
  -- None (openrlhf/utils/deepspeed.py: 'getattr(args, "grad_accum_dtype",
  -- "fp32")'): fp32 unless a script passes the flag, which none does.
  -- It acts at ZeRO 3 only (options.lua grad_accum_dtype).
  { "grad_accum_dtype", "fp32", "get_train_ds_config: data_types grad_accum_dtype fp32" },
  { "pad_batch", true, "make_experience_batch: zero_pad_sequences to the micro-batch's "
    .. "longest" },
  { "host_threads", 1, "Ray actors of num_cpus 1: OMP_NUM_THREADS=1, the offloaded step on "
    .. "one thread a rank" },
  -- Its vLLM engines are the LLM class in a Ray actor of their own
  -- (openrlhf/trainer/ray/vllm_engine.py LLMRayActor: "self.llm =
  -- vllm.LLM(*args, **kwargs)"), whose V0 engine runs in that process; on
  -- a V0 release before 0.6.0 (rl.vllm_version: dockerfile/Dockerfile at
  -- 391e1de4 "RUN pip install vllm==0.4.2") no async output processor
  -- exists, so LLMEngine._process_model_outputs runs between two decode
  -- steps (gpuplan.rl.ENGINE_V0_OUTPUT, vLLM RFC #6913): gp.rl's
  -- vllm_version decides it (gpuplan.rl.v0_outputs, which gp.rl's own
  -- frontend_host default follows).  Its requests detokenize
  -- (SamplingParams' default), as the RFC's did.
  { "frontend_host", rl.ENGINE_V0_OUTPUT, "vLLM's V0 engine without an async output "
    .. "processor: LLMEngine._process_model_outputs between two decode steps (vLLM RFC #6913)",
    function(o) return rl.v0_outputs(o) == true end },
}

-- DeepSpeed-Chat's step 3 (DeepSpeedExamples applications/DeepSpeed-Chat,
-- 2023): actor and critic are Hugging Face modules trained by DeepSpeed's
-- ZeRO engine (rlhf_engine.py: "actor_engine, *_ =
-- deepspeed.initialize(model=actor_model, optimizer=optim, ...)", the
-- critic alike, with FusedAdam, "AdamOptimizer = DeepSpeedCPUAdam if
-- self.args.offload else FusedAdam"; utils/ds_utils.py
-- get_train_ds_config: fp16, zero_optimization stage as given, no
-- overlap_comm), the same engine, modules and ds_config builder as
-- DeepSpeed-Chat's step 1 -- so the same stack rules as the training
-- predictor's deepspeed-chat profile (predict/train.lua: stack deepspeed,
-- the modules' unfused operators, overlap_comm off below stage 3, and
-- transformers' 2023 OPTAttention: bmm, fp32 softmax, bmm); generation
-- runs DeepSpeed's inference kernels (rollout_engine hybrid).
PROFILES["deepspeed-chat"] = {
  -- train_rlhf computes the advantages before the actor's forward, in
  -- ppo_trainer.get_advantages_and_returns (at 3a77097a): "for t in
  -- reversed(range(start, length)): nextvalues = values[:, t + 1] ...;
  -- delta = rewards[:, t] + self.gamma * nextvalues - values[:, t];
  -- lastgaelam = delta + self.gamma * self.lam * lastgaelam" -- per
  -- response position gamma * nextvalues, the add, the subtraction,
  -- the scaling of lastgaelam and its add: 5 ops on [b] tensors (the
  -- slices are views).
  { "gae_ops", 5, "get_advantages_and_returns: a Python loop over the response, 5 ops "
    .. "a position" },
  -- --actor_lora_dim: utils/module/lora.py convert_linear_layer_to_lora
  -- builds LinearLayer_LoRA(module.weight, lora_dim, lora_scaling,
  -- lora_droppout) with lora_droppout = 0, "self.lora_dropout =
  -- nn.Identity()" below p > 0: no dropout output or mask kept.
  { "lora_dropout", 0, "convert_linear_layer_to_lora: lora_droppout=0 (nn.Identity)",
    function(oo) return oo.method == "lora" end },
}
for _, e in ipairs(require("gpuplan.predict.train").profiles["deepspeed-chat"]) do
  table.insert(PROFILES["deepspeed-chat"], e)
end
for _, e in ipairs(require("gpuplan.predict.train").profiles.deepspeed) do
  table.insert(PROFILES.openrlhf, e)
end

-- The prompt tokens when the case does not say: a math problem
-- (OpenMathInstruct-2's or DAPO-Math-17k's: a sentence or two of
-- competition-math text, ~100 tokens) inside the chat template and the
-- framework's math instruction; an assumption, listed with the
-- prediction.
local PROMPT_DEFAULT = 150

-- verl's perf/mfu/actor (verl/workers/megatron_workers.py update_actor,
-- commits e2e4c35 and f6f9100): "estimated_flops * ppo_epochs /
-- promised_flops / world_size", where estimated_flops is its FlopsCounter
-- (verl/utils/flops_counter.py) over "global_token_num" -- every sample's
-- prompt + response tokens of the step -- divided by delta_time, the
-- update_policy timer: the actor's forward-backward over every
-- mini-batch and its optimizer steps (the CPU ones too), not the weight
-- loads and offloads around it.  The counter's FLOPs, not gpuplan's:
--   6 N tokens + 12 sum(seqlen^2) head_dim heads layers,
-- N the activated weights as verl counts them: per layer the attention
-- projections h (q + k + v + o widths) and the MLP 3 h ffn (SwiGLU), for
-- a MoE layer (_estimate_qwen2_moe_flops) 3 h top_k ffn_expert + h experts
-- (the router), and 2 V h for the embedding and the LM head; DeepSeek-V3
-- (_estimate_deepseek_v3_flops) its MLA projections, top_k + shared
-- experts, the first dense layers, and attention 12 sum(seqlen^2) layers
-- (qk_nope + qk_rope head dim) heads.  The attention term is the whole
-- square, not its causal half.  sum(seqlen^2) is the samples' E[(p +
-- L)^2] = p^2 + 2 p E[L] + E[L^2] from the response-length distribution
-- (gp.rl's response_m2).  promised_flops: the card's dense bf16 peak
-- whatever the training precision (verl's get_device_flops, by device
-- name: H100 989e12, H20 148e12, the catalog's bf16 figures).
local function verl_flops(m, tokens, sq)
  local h, L, H = m.hidden, m.layers, m.heads
  local hd = m.head_dim or h // H
  local emb = 2 * m.vocab * h
  local e = m.moe
  if m.mla then
    local a = m.mla
    local qhd = a.qk_nope_head_dim + a.qk_rope_head_dim
    local lin = (a.q_lora_rank or 0) > 0 and h * a.q_lora_rank + H * qhd * a.q_lora_rank
      or h * H * qhd
    lin = lin + h * (a.kv_lora_rank + a.qk_rope_head_dim)
      + H * (qhd - a.qk_rope_head_dim + a.v_head_dim) * a.kv_lora_rank
      + H * a.v_head_dim * h
    local k = e and (e.dense_layers or 0) or L
    local moe = e and (h * e.experts + h * e.ffn_hidden * (e.top_k + (e.shared_experts or 0)) * 3)
      or 0
    local N = (moe + lin) * (L - k) + (h * m.ffn_hidden * 3 + lin) * k + emb
    return 6 * N * tokens + 12 * sq * L * qhd * H
  end
  local kv = m.kv_heads or H
  local lin = h * (H * hd + 2 * kv * hd + H * hd)
  local mlp = e and (3 * h * e.top_k * e.ffn_hidden + h * e.experts) or 3 * h * m.ffn_hidden
  return 6 * ((mlp + lin) * L + emb) * tokens + 12 * sq * hd * H * L
end

local function verl_mfu(m, r, peak)
  local upd
  for _, p in ipairs(r.phases) do
    if p.name == "actor_update" then upd = p end
  end
  local p, mean = r.prompt_len, r.response_len
  local tokens = r.samples * (p + mean)
  local sq = r.samples * (p * p + 2 * p * mean + r.response_m2)
  return verl_flops(m, tokens, sq) * r.epochs / (peak * upd.gpus * upd.seconds)
end

-- PPO's critic and reward model of their own shapes: model records as
-- the case's model (SCHEMA.md); reward_model true: the actor's shape.
-- Returns them by key, or nil and what is wrong.
local function own_models(c, cat)
  local own = {}
  for _, k in ipairs { "critic_model", "reward_model" } do
    local x = v(c[k])
    if type(x) == "table" then
      local m, w = model_of(x, cat)
      if not m then return nil, k .. ": " .. w end
      x = m
    end
    own[k] = x
  end
  return own
end

-- The release the case ran, source.version (SCHEMA.md: the framework's
-- tag its configs are read at, "0.3.0"; the case reader checks its form),
-- as major.minor ("0.3"); nil when not stated.
local function release(case)
  local r = require("gpuplan.version").parse(v((case.source or {}).version))
  return r and r.series or nil
end

-- What the case leaves open, from its framework fw (its profile, NeMo
-- RL's packing, verl's dynamic batch size) and the defaults every case
-- takes (bf16, no recompute), into gp.rl's options o, each said in
-- defaults; tmax: the sequence limit, plen and resp the prompt and mean
-- response lengths, samples the step's.  Returns the profile's settings
-- taken (gpuplan.predict.case profile).
local function framework_defaults(o, fw, model, tmax, plen, resp, samples, defaults)
  local taken = {}
  if fw then
    defaults[#defaults + 1] = "framework profile=" .. fw
    taken = case_.profile(o, model, PROFILES[fw], defaults)
  end
  if o.colocated then o.staleness = nil end
  if not o.colocated then o.offload_states = nil end
  -- NeMo RL packs sequences into micro-batches of max_total_sequence_length
  -- x train_micro_batch_size tokens (sequence_packing.enabled: True,
  -- train_mb_tokens, algorithm modified_first_fit_decreasing in
  -- grpo_math_1B.yaml, the performance recipes' base): gp.rl's
  -- pack_tokens.
  if fw == "nemo-rl" and tmax and o.pack_tokens == nil and not o.pad then
    o.pack_tokens = tmax * (o.batch or 1)
    defaults[#defaults + 1] = string.format("pack_tokens=%d (sequence packing: "
      .. "max_total_sequence_length x train_micro_batch_size)", o.pack_tokens)
    o.batch = nil
    -- Its log-probability forwards (policy and reference) pack into
    -- max_total_sequence_length x logprob_batch_size tokens
    -- (sequence_packing.logprob_mb_tokens, grpo_math_1B.yaml), the
    -- recipe's logprob_batch_size a case's rl.logprob_batch; r0.6.0's
    -- base takes train_micro_batch_size for it, the training bins.
    local lpb = o.logprob_batch
    if lpb then o.logprob_pack_tokens = tmax * lpb end
  end
  o.logprob_batch = nil
  -- verl's dynamic batch size (use_dynamic_bsz) cuts each rank's share
  -- of a mini-batch into micro-batches by tokens, ceil(its tokens /
  -- ppo_max_token_len_per_gpu) of them (rearrange_micro_batches), which
  -- its recipes set to the prompt and response limits' sum: gp.rl's
  -- token_batch.
  if o.batch == nil and fw == "verl" and tmax and o.token_batch == nil then
    o.token_batch = math.tointeger(tmax)
    defaults[#defaults + 1] = string.format("token_batch=%d (use_dynamic_bsz: each rank's "
      .. "share cut into ceil(tokens / ppo_max_token_len_per_gpu) micro-batches)", tmax)
  end
  if o.precision == nil then
    o.precision = "bf16"
    defaults[#defaults + 1] = "precision=bf16 (not stated)"
  end
  if o.recompute == nil then
    o.recompute = "none"
    defaults[#defaults + 1] = "recompute=none (activation_checkpointing: false)"
  end
  return taken
end

-- NeMo RL's Megatron worker frees memory between its phases with Python's
-- garbage collector and PyTorch's cache release (gc.collect(),
-- torch.cuda.empty_cache()), host work on the step's path the phases'
-- own prices leave out.  Counted in nemo_rl/models/policy/workers/
-- megatron_policy_worker.py at each release (v0.3.0's
-- models/policy/megatron_policy_worker.py), outside the prep timers that
-- NeMo RL's own timing (PR #1052: prepare_for_lp_inference's and
-- prepare_for_training's clean-ups inside logprob_inference_prep and
-- training_prep) and so step_overhead already holds:
--  * the reference's forward (use_reference_model): gc.collect() and
--    empty_cache() after swapping the reference's weights in, and again
--    after swapping the policy's back -- 2 + 2 (v0.3.0 always; from PR
--    #1071, in v0.4.0, at empty_unused_memory_level >= 1, which every
--    performance recipe of v0.4.0 to v0.6.0 sets: "1 is the minimum
--    recommendation for RL", grpo_math_1B.yaml);
--  * the update: empty_cache() after each global batch's forward and
--    backward, before the optimizer step ("Empty unused memory", train(),
--    at empty_unused_memory_level >= 1) -- one an optimizer step, counted
--    from v0.4 (v0.3.0's recipes differ in the level: not counted);
--  * colocated, the refit's offload_before_refit and offload_after_refit
--    (which runs offload_before_refit again): gc.collect() and
--    empty_cache() each -- 2 + 2, at every release.
-- Their time: a training loop that called both once a step took 108 s
-- for 250 steps with them, 65 s without gc.collect() and 45 s without
-- either (huggingface/peft PR #2894, "ENH: Improve MetaMath training
-- script runtime"): (108 - 65) / 250 = 0.172 s a gc.collect() and
-- (65 - 45) / 250 = 0.080 s an empty_cache() (the release and the
-- re-allocation it forces on the next pass), on an x86 host.  A lower
-- bound here: a Megatron worker holds more Python objects than that
-- script, and frees and re-allocates more memory (Megatron-LM PR #5678:
-- an empty_cache() in its checkpoint save "took multiple seconds").
local NEMO_GC_COLLECT = rl.GC_COLLECT
local NEMO_EMPTY_CACHE = rl.EMPTY_CACHE

-- The clean-ups of one NeMo RL step (above): gc.collect() calls,
-- empty_cache() calls.
local function nemo_cleanups(o, ver, samples)
  local gcs, ecs = 0, 0
  if o.ref_model then gcs, ecs = gcs + 2, ecs + 2 end
  if o.colocated then gcs, ecs = gcs + 2, ecs + 2 end
  if ver ~= "0.3" then
    local gb = o.global_batch or samples
    ecs = ecs + math.max(1, math.ceil(samples / gb))
  end
  return gcs, ecs
end

-- NeMo RL's settings by release: {option, the releases (source.version
-- major.minor) it holds for, when it applies to the case's options, the
-- defaults' words, its value (true when not given)}; each unless the case
-- states it.
local RELEASE_FLAGS = {
  -- v0.6.0's grpo_math_1B.yaml (the base of every performance recipe; no
  -- recipe overrides it) sets megatron_cfg "gradient_accumulation_fusion:
  -- false", and community_import.py import_model_from_hf_name hands it to
  -- the model provider before it saves the converted checkpoint, whose
  -- run_config.yaml setup.py setup_model_config loads as the training
  -- model's config (the parallel sizes are reset before the save, this is
  -- not).  Added with the Megatron-Bridge bump of NeMo RL PR #2039, first
  -- in v0.6.0; the earlier releases leave it to the provider's default.
  { "gradient_accumulation_fusion", { ["0.6"] = true }, function() return true end,
    "NeMo RL v0.6.0's grpo_math_1B.yaml: megatron_cfg gradient_accumulation_fusion: false, "
      .. "kept in the converted checkpoint's config", false },
  -- v0.3.0 to v0.5.0 set nothing, and the model config's own default is
  -- off too: it is on only where Apex's fused wgrad kernel imports --
  -- NeMo 2.0's GPTConfig (v0.3.0's NeMo pin 33259f25, llm/gpt/model/
  -- base.py: "gradient_accumulation_fusion: bool =
  -- _grad_accum_fusion_available", False on "import
  -- fused_weight_gradient_mlp_cuda" failing) and Megatron-Bridge's
  -- GPTModelProvider (v0.4.0's pin 62f4704b and v0.5.0's 1e9a459b:
  -- "field(default_factory=fusions.can_enable_gradient_accumulation_
  -- fusion)", the same import) -- and no NeMo RL release installs Apex
  -- (no apex in pyproject.toml, uv.lock or docker/Dockerfile at v0.3.0
  -- to v0.6.0, whose base image nvcr.io/nvidia/cuda-dl-base carries no
  -- PyTorch).  The Llama and Qwen3 configs and providers keep that
  -- default; Megatron-Bridge's DeepSeek bridge sets it false
  -- (deepseek/common.py "configs['gradient_accumulation_fusion'] =
  -- False").  The default is saved with the converted checkpoint's run
  -- config, which the worker trains with.
  { "gradient_accumulation_fusion", { ["0.3"] = true, ["0.4"] = true, ["0.5"] = true },
    function() return true end,
    "NeMo RL v0.3-v0.5: no Apex, so the model config's default (fused_weight_gradient_mlp_cuda "
      .. "importable) is false", false },
  -- With apply_rope_fusion false (unfused_rope), the Megatron-LM pins of
  -- v0.3.0 (2ff0f099) and v0.4.0 (af73aa2c) run the packed RoPE's unfused
  -- pass once per sequence of the micro-batch (rope_utils.py
  -- _apply_rotary_pos_emb_thd: "for x in torch.split(t, seqlens)"), until
  -- Megatron-LM 6fe43ce281 (2025-10-06) made it one pass, as v0.6.0's pin
  -- d30c3ae5 runs it; v0.5.0's pin b73ae5cd (a fork branch) was not read.
  { "rope_seq_loop", { ["0.3"] = true, ["0.4"] = true },
    function(o) return o.unfused_rope == true end,
    "NeMo RL v0.3/v0.4's Megatron-LM pins: the unfused thd RoPE loops over the packed "
      .. "sequences" },
  -- v0.3.0's refit gathers each tensor whole over TP and then broadcasts
  -- it over the pipeline (nemo_rl/models/megatron/refit_utils.py
  -- gather_params); from v0.4 on Megatron-Bridge's export broadcasts the
  -- stages' slices.
  { "sync_tp_first", { ["0.3"] = true }, function() return true end,
    "NeMo RL v0.3.0's refit: gather_params broadcasts whole tensors over the "
      .. "pipeline" },
  -- Up to v0.4.0 the Megatron worker's prepare_for_lp_inference parks the
  -- optimizer states in host memory (offload_before_refit) every step,
  -- colocated or not, and prepare_for_training brings them back; v0.5.0
  -- does so only with offload_optimizer_for_logprob (false; PR #1404).
  -- Colocated, the states are already out for the rollout
  -- (offload_states): only a training pool of its own pays it.
  { "logprob_offload", { ["0.3"] = true, ["0.4"] = true },
    function(o) return not o.colocated end,
    "NeMo RL v0.4.0's prepare_for_lp_inference: the optimizer states to host memory and back "
      .. "each step" },
  -- NUMA binding of the workers (nemo_rl/distributed/numa_utils.py
  -- bind_to_gpu_numa: os.sched_setaffinity to the GPU's NUMA-local CPUs
  -- and numa_set_membind, called by the Megatron, DTensor and vLLM
  -- workers at init) came with PR #2613, first in v0.7.0; v0.3.0 to
  -- v0.6.0 have no numa_utils and their ray.sub binds nothing.  Said
  -- where it is priced (case.numa_host: a catalog host_op_scale_bound).
  { "numa_bind", { ["0.3"] = true, ["0.4"] = true, ["0.5"] = true, ["0.6"] = true },
    function(o) return case_.numa_host(o) end,
    "NeMo RL v0.3-v0.6 bind no worker: NUMA binding came with PR #2613, r0.7.0", false },
  { "numa_bind", { ["0.7"] = true }, function(o) return case_.numa_host(o) end,
    "NeMo RL v0.7.0 numa_utils.bind_to_gpu_numa: each worker's CPUs and memory on its "
      .. "GPU's NUMA node" },
  -- v0.3.0's DistributedLogprob.backward builds the chosen tokens' one-hot
  -- (torch.nn.functional.one_hot, int64) over the vocabulary; PR #761
  -- ("skip `torch.nn.functional.one_hot`", first in v0.4.0) scatters the
  -- chosen tokens' gradient instead (engine/rl.c RL_LOGIT_ONEHOT).
  { "logit_onehot", { ["0.3"] = true }, function(o) return o.fp32_logits end,
    "NeMo RL v0.3.0's DistributedLogprob backward: an int64 one-hot of the vocabulary" },
  -- v0.3.0 and v0.4.0 pin vLLM 0.9.0 and 0.10.0 (pyproject.toml) and leave
  -- its compilation config at vLLM's default (grpo_math_1B.yaml
  -- "vllm_kwargs: {}", enforce_eager False): piecewise CUDA graphs, one
  -- graph a decode step only from vLLM 0.11 (PR #25444), which v0.5.0
  -- pins (0.11.2).
  { "rollout_piecewise", { ["0.3"] = true, ["0.4"] = true },
    function(o) return not o.rollout_eager end,
    "NeMo RL v0.3/v0.4 pin vLLM 0.9.0/0.10.0: piecewise CUDA graphs, attention between "
      .. "the pieces" },
  -- v0.6.0 pins vLLM 0.17.1 (pyproject.toml), whose engine prepares each
  -- step while the GPU runs the previous one unless something rules it
  -- out (vllm/config/vllm.py: async_scheduling None -> "Enable async
  -- scheduling unless there is an incompatible option"); v0.5.0's 0.11.2
  -- left it off.  NeMo RL sets no async_scheduling (vllm_worker.py,
  -- r0.6.0) and runs an engine of more than one GPU on vLLM's Ray
  -- executor (distributed_executor_backend "ray"), which 0.17.1 turns it
  -- off for: "Async scheduling will be disabled because it is not
  -- supported with the `ray` distributed executor backend (only `mp`,
  -- `uni`, and `external_launcher` are supported)" (vLLM v0.17.1's log,
  -- gpustack issue #4979).  A one-GPU engine (executor None: uni) keeps it.
  -- vLLM 0.17.1 (v0.6.0) routes DeepSeek's MoE layers in one fused
  -- grouped-top-k kernel: PR #28124 ("we add the sigmoid,
  -- e_score_correction_bias, and 32bit output cast into the
  -- fused_grouped_topk CUDA kernel", vLLM's weekly summary of
  -- 2025-11-14), on by default (VLLM_USE_FUSED_MOE_GROUPED_TOPK "1").
  -- v0.5.0's 0.11.2 has the kernel of PR #23274 (2025-08) with the
  -- sigmoid, bias add and casts around it as separate launches; whether
  -- it also has PR #28124 was not established, so v0.5 keeps the native
  -- count, an upper bound there.  Only the MLA models route so.
  { "rollout_fused_grouped_topk", { ["0.6"] = true },
    function(o) return type(o.model) == "table" and o.model.mla ~= nil and o.model.moe ~= nil end,
    "NeMo RL v0.6 pins vLLM 0.17.1: DeepSeek's MoE routing in one fused grouped-top-k "
      .. "kernel (vLLM PR #28124)" },
  -- The softmax top-k routers (Qwen3-MoE's) in one kernel: vLLM PR
  -- #26717, "Fuse float cast and renormalize to topk softmax kernel"
  -- (vLLM's weekly summary of 2025-10-24, the week of its PyTorch 2.9.0
  -- update #24994, which 0.11.1 and 0.11.2 ship), before v0.5.0's
  -- 0.11.2 and v0.6.0's 0.17.1; v0.3/v0.4's 0.9.0/0.10.0 cast, select,
  -- sum and divide apart.  Only the MoE models route so.
  { "rollout_fused_topk_softmax", { ["0.5"] = true, ["0.6"] = true },
    function(o) return type(o.model) == "table" and o.model.moe ~= nil and o.model.mla == nil end,
    "NeMo RL v0.5/v0.6 pin vLLM 0.11.2/0.17.1: the softmax top-k routing in one kernel "
      .. "(vLLM PR #26717)" },
  { "async_scheduling", { ["0.6"] = true },
    function(o) return (o.rollout_tp or o.tp or 1) * (o.rollout_pp or 1) == 1 end,
    "NeMo RL v0.6 pins vLLM 0.17.1: async scheduling on by default for its one-GPU "
      .. "engines (the Ray executor of larger ones turns it off)" },
}

-- A value as Lua source (the model verl_mfu reads, an id or a case's own
-- record of numbers, strings, booleans and tables): keys sorted, numbers
-- to the bit.
local function lua_literal(x)
  if type(x) == "string" then return string.format("%q", x) end
  if math.type(x) == "integer" then return tostring(x) end
  if type(x) == "number" then return string.format("%.17g", x) end
  if type(x) ~= "table" then return tostring(x) end
  local keys = {}
  for k in pairs(x) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  local parts = {}
  for _, k in ipairs(keys) do
    local key = type(k) == "string" and k:match("^[%a_][%w_]*$") and k or ("[" .. lua_literal(k) .. "]")
    parts[#parts + 1] = key .. " = " .. lua_literal(x[k])
  end
  return "{ " .. table.concat(parts, ", ") .. " }"
end

local function predict(case, cat)
  local fw = case_.framework(case)
  local ver = release(case)
  local model, why = model_of(case.model, cat)
  if not model then return nil, why end
  -- A case's inline model with a moe table that names no experts: the
  -- infer, memory and train predictors refuse it ("model.moe.experts is
  -- required", the engine's model check); this one priced the step and
  -- then failed in verl_flops, "attempt to perform arithmetic on a nil
  -- value (field 'experts')".
  if type(model) == "table" and type(model.moe) == "table" and model.moe.experts == nil then
    return nil, "model.moe.experts is required"
  end
  local hw, par, wl, c = case.hardware or {}, case.parallel or {}, case.workload or {},
    case.rl or {}
  local metric = case.measured and case.measured.metric
  if v(hw.sm_clock) then
    return nil, "hardware.sm_clock: an rl case does not price a held SM clock (gp.train does)"
  end
  local pick = {
    step_time_s = function(r) return r.step_s end,
    tokens_per_s_per_gpu = function(r) return r.tokens_per_s_gpu end,
    -- the actor update's model FLOPs utilisation (verl's perf/mfu/actor:
    -- verl_mfu)
    mfu = function(r)
      local pk = cat.gpus[hw.gpu] and cat.gpus[hw.gpu].peak or {}
      return verl_mfu(model, r, pk.bf16 or pk.fp16 or r.update.peak)
    end,
  }
  if not pick[metric] then return nil, "metric " .. tostring(metric) .. " is not an RL metric" end
  if not v(hw.gpu) then return nil, "hardware.gpu not given" end
  local okg, gwhy = case_.gpu(case, cat)
  if not okg then return nil, gwhy end
  local prompts, group, resp = v(c.prompts), v(c.group), v(c.response_len)
  if not prompts or not group then
    return nil, "rl.prompts and rl.group are needed"
  end
  if not resp and not v(wl.seq_len) then
    return nil, "rl.response_len (the mean) or workload.seq_len (the limit) is needed"
  end
  local defaults = {}
  local plen = v(c.prompt_len)
  if not plen then
    plen = PROMPT_DEFAULT
    -- OpenRLHF's PPO runs prompt with chat data (OpenOrca, hh-rlhf,
    -- oasst1 in its scripts), not math: the default is then a math
    -- problem's length standing in for prompts nobody measured as a
    -- mixture (the Llama 2 paper's Table 6 gives hh's dialogues alone,
    -- no source OpenOrca's or oasst1's, nor any spread from which the
    -- longest of a left-padded generate batch would follow).
    defaults[#defaults + 1] = fw == "openrlhf" and string.format("prompt_len=%d (not "
      .. "published; the default is a math problem's, standing in for this run's chat "
      .. "prompts, whose mixture's mean and batch longest no source gives)", plen)
      or string.format("prompt_len=%d (not published; a "
      .. "math problem in its instruction and chat template)", plen)
  end
  local tmax = v(wl.seq_len)
  local own, werr = own_models(c, cat)
  if not own then return nil, werr end
  local o = {
    model = model, gpu = hw.gpu, gpus = v(hw.gpus) or 1, algo = v(wl.method) or "grpo",
    tp = v(par.tp), pp = v(par.pp), cp = v(par.cp), ep = v(par.ep), etp = v(par.etp),
    sp = v(par.sp),
    -- verl's FSDP workers (SCHEMA.md parallel.fsdp, fsdp_version,
    -- zero_group: its fsdp_config.fsdp_size; ulysses: its
    -- ulysses_sequence_parallel_size)
    ulysses = v(par.ulysses), zero_group = v(par.zero_group),
    fsdp = v(par.fsdp) == true and "full_shard" or v(par.fsdp) or nil,
    fsdp_version = v(par.fsdp_version),
    -- verl's ppo_max_token_len_per_gpu where the case states it (SCHEMA.md
    -- rl.token_batch; else the verl profile's below)
    token_batch = v(c.token_batch),
    -- Megatron-Core's moe_permute_fusion as the case's recipe sets it
    -- (SCHEMA.md parallel.moe_permute_fusion): false, gp.train's
    -- unfused_permute.
    unfused_permute = v(par.moe_permute_fusion) == false or nil,
    -- the MoE token dispatcher as the case's recipe sets it (SCHEMA.md
    -- parallel.moe_dispatcher, moe_flex_backend, moe_flex_sms): the
    -- trainer's all-to-alls and permutes are those of the dispatcher the
    -- run used, as in a train case.
    moe_dispatcher = v(par.moe_dispatcher), moe_flex_backend = v(par.moe_flex_backend),
    moe_flex_sms = v(par.moe_flex_sms),
    -- Megatron-Core's bias_activation_fusion and moe_router_dtype as the
    -- case's model config leaves them (SCHEMA.md): false, gp.train's
    -- unfused_act, the probabilities' product in the router's dtype.
    unfused_act = v(par.bias_activation_fusion) == false or nil,
    -- Megatron-Core's apply_rope_fusion as the recipe sets it (SCHEMA.md):
    -- false, gp.train's unfused_rope (NeMo RL's DeepSeek-V3 recipes).
    unfused_rope = v(par.apply_rope_fusion) == false or nil,
    moe_router_dtype = v(par.moe_router_dtype),
    -- the router's balance as the case's recipe configures it (SCHEMA.md
    -- parallel.moe_balance): a stated value wins over the framework
    -- profile's
    moe_balance = v(par.moe_balance),
    numa_bind = v(par.numa_bind),
    zero = v(par.zero), batch = v(par.micro_batch), recompute = v(par.recompute),
    first_stage_layers = v(par.first_stage_layers), last_stage_layers = v(par.last_stage_layers),
    stage_layers = type(v(par.stage_layers)) == "table" and par.stage_layers or nil,
    precision = v(wl.precision), fp8_scaling = v(wl.fp8_scaling),
    gpus_per_node = v(hw.gpus_per_node), cat = cat, power_limit = v(hw.power_limit),
    prompts = prompts, group = group, prompt_len = plen,
    response_len = resp and math.floor(resp + 0.5),
    global_batch = v(c.train_global_batch) or v(par.global_batch),
    colocated = v(c.colocated), rollout_tp = v(c.rollout_tp), rollout_pp = v(c.rollout_pp),
    rollout_ep = v(c.rollout_ep), rollout_dp_attention = v(c.rollout_dp_attention),
    ref_model = v(c.ref_model),
    rollout_weights = v(wl.weight_dtype), staleness = v(c.staleness),
    refit_drain = v(c.refit_drain),
    rollout_memory = v(c.rollout_memory), margin = 0,
    reward_model = own.reward_model, critic_model = own.critic_model,
    ref_gpus = v(c.ref_gpus),
    reward_gpus = v(c.reward_gpus), critic_gpus = v(c.critic_gpus),
    colocate_critic_reward = v(c.colocate_critic_reward),
    rollout_engine = v(c.rollout_engine), generation_batch = v(c.generation_batch),
    offload = v(par.offload), grad_accum_dtype = v(par.grad_accum_dtype),
    rollout_eager = v(c.rollout_eager),
    offload_states = v(c.offload_states), ref_host = v(c.ref_host),
    ref_reward_offload = v(c.ref_reward_offload),
    param_offload = v(c.param_offload), async_engine = v(c.async_engine),
    -- vLLM's V0 engine where the source's logs say a run fell back to
    -- it (SCHEMA.md rl.vllm_v0), and the rollout's vLLM release where
    -- the source pins it (rl.vllm_version): gp.rl's vllm_v0 and
    -- vllm_version, which price V0's output processing
    -- (gpuplan.rl.v0_outputs)
    vllm_v0 = v(c.vllm_v0), vllm_version = v(c.vllm_version),
    logprob_batch = v(c.logprob_batch), response_clip = v(c.response_clip),
    -- DeepSpeed-Chat's --enable_ema (SCHEMA.md rl.ema)
    ema = v(c.ema),
    -- DAPO's dynamic sampling where the source states it (SCHEMA.md
    -- rl.filter_keep)
    filter_keep = v(c.filter_keep),
    -- the engine's vLLM max_num_seqs and max_num_batched_tokens where the
    -- source or its recipe sets them (SCHEMA.md rl.max_batch)
    max_batch = v(c.max_batch), max_num_tokens = v(c.max_num_tokens),
    -- a validation pass inside the step's timer (verl's trainer.test_freq
    -- over its val_files, SCHEMA.md rl.val_every)
    val_every = v(c.val_every), val_prompts = v(c.val_prompts),
    -- verl's data.val_batch_size: the pass in batches of that many
    -- (SCHEMA.md rl.val_batch)
    val_batch = v(c.val_batch),
    -- verl's critic.ppo_micro_batch_size_per_gpu without its dynamic
    -- batch (SCHEMA.md rl.critic_batch)
    critic_batch = v(c.critic_batch),
    -- verl without use_remove_padding: every sequence at max_prompt_length
    -- + max_response_length slots (SCHEMA.md rl.pad_to)
    pad_to = v(c.pad_to), critic_pad_to = v(c.critic_pad_to),
    -- verl's critic.use_dynamic_bsz with its ppo_max_token_len_per_gpu
    -- (SCHEMA.md rl.critic_token_batch)
    critic_token_batch = v(c.critic_token_batch),
    -- Sequence packing off (NeMo RL's policy.sequence_packing.enabled
    -- false, dynamic_batching off as grpo_math_1B.yaml has it): the
    -- Megatron worker cuts the batch into micro-batches of
    -- train_micro_batch_size sequences at the batch's padded width
    -- (megatron_policy_worker.py train: make_microbatch_iterator(mbs),
    -- seq_dim_size = data["input_ids"].shape[1]), gp.rl's pad.
    pad = v(c.sequence_packing) == false or nil,
    -- NeMo RL's sequence_packing.fuse_loss: true (SCHEMA.md rl.fuse_loss):
    -- SequencePackingFusionLossWrapper "calls prepare_fn once on the
    -- packed logits ... then calls the loss function once" (nemo_rl/
    -- algorithms/loss/wrapper.py r0.6.0), one loss a micro-batch: no
    -- per-sequence loss (the profile's loss_ops).
    loss_ops = v(c.fuse_loss) and 0 or nil,
  }
  -- The actor's adapters where the case states them (SCHEMA.md
  -- workload.lora): its base frozen, gp.rl's method lora, as the training
  -- predictor reads them for a train case.
  local lora = v(wl.lora)
  if type(lora) == "table" then
    o.method = "lora"
    o.lora_rank = v(lora.rank)
    if type(lora.targets) == "table" then o.lora_targets = table.concat(lora.targets, ",") end
  end
  if o.colocated == nil then o.colocated = v(c.rollout_gpus) == nil end
  if not o.colocated then o.rollout_gpus = v(c.rollout_gpus) or "auto" end
  if o.ep == 1 then o.ep = nil end
  -- The generation limit: the longest total sequence less the prompt
  -- (vLLM's max_model_len counts both); responses clipped there.
  -- Without the mean, gp.rl assumes one from the limit (rl.RESPONSE_SHARE)
  -- and lists it with the defaults.
  -- A framework that caps the response on its own (verl's
  -- max_response_length) states the cap: rl.response_max.
  o.response_max = v(c.response_max)
  -- A source that bounds every response between two lengths states the
  -- bottom, rl.response_min, and the top, rl.response_max: gp.rl takes
  -- them uniform, the mean their middle.
  o.response_min = v(c.response_min)
  if o.response_min and not resp then
    if not o.response_max then
      return nil, "rl.response_min is the bottom of a stated range; rl.response_max, its top, "
        .. "is needed"
    end
    resp = (o.response_min + o.response_max) / 2
  end
  if tmax and not o.response_max then
    o.response_max = math.max(o.response_len or 1, tmax - plen)
  end
  -- A policy that starts from a base checkpoint (rl.base_checkpoint)
  -- answers far below the limit: gp.rl's base_checkpoint assumes its mean
  -- (rl.base_response: the model's published one, else a share of the
  -- limit) when the mean is not stated.
  if not resp then
    o.base_checkpoint = v(c.base_checkpoint) or nil
    resp = o.base_checkpoint and rl.base_response(model, o.response_max) or
      math.max(1, math.floor(rl.RESPONSE_SHARE * o.response_max + 0.5))
  end
  if v(hw.inter_node) and (v(hw.gpus) or 1) > (v(hw.gpus_per_node) or 8) then
    o.nic_fabric = hw.inter_node
    o.nics = v(hw.nics_per_node) or v(hw.gpus_per_node) or 8
  end
  local taken = framework_defaults(o, fw, model, tmax, plen, resp, prompts * group, defaults)
  -- A router the case states in fp32 beside the fused activation costs
  -- what a 16-bit one does: Transformer Engine's GEMM takes fp32 (only
  -- fp64 falls back to torch.mm) and the fused kernel casts the
  -- probabilities in registers, so gp.train has nothing to price
  -- (SCHEMA.md parallel.moe_router_dtype).  Stating it keeps a profile's
  -- fp64 from applying: verl's recipes that build DeepSeek-V3 through
  -- mbridge route in fp32 (see PROFILES.verl).
  if o.moe_router_dtype == "fp32" and not o.unfused_act then
    o.moe_router_dtype = nil
    defaults[#defaults + 1] = "moe_router_dtype=fp32 (stated; with the fused activation "
      .. "the 16-bit router's cost: nothing to price)"
  end
  -- NeMo RL's mechanisms of its older releases, set from the case's
  -- release (source.version) unless the case states them (RELEASE_FLAGS).
  if fw == "nemo-rl" then
    for _, f in ipairs(RELEASE_FLAGS) do
      if o[f[1]] == nil and f[2][ver] and f[3](o) then
        local val = f[5] == nil or f[5]
        o[f[1]] = val
        defaults[#defaults + 1] = f[1] .. "=" .. tostring(val) .. " (" .. f[4] .. ")"
      end
    end
    -- The profile's step_overhead (PR #1052's timing) and the worker's
    -- clean-ups outside it (nemo_cleanups): one default, its sum, said on
    -- the profile's own line with the profile's own note.
    local so = taken.step_overhead
    if so then
      local gcs, ecs = nemo_cleanups(o, ver, prompts * group)
      o.step_overhead = o.step_overhead + gcs * NEMO_GC_COLLECT + ecs * NEMO_EMPTY_CACHE
      defaults[so.at] = string.format("step_overhead=%.4g (%s; and %d gc.collect() + %d "
        .. "torch.cuda.empty_cache() a step outside them, %.3f + %.3f s each: peft PR "
        .. "#2894)", o.step_overhead, so.note, gcs, ecs, NEMO_GC_COLLECT, NEMO_EMPTY_CACHE)
    end
  end
  -- From v0.4.0 the colocated refit streams the weights through a CUDA-IPC
  -- buffer over ZMQ (NeMo RL PR #1267; gpuplan.rl.NEMO_RL_IPC_TRANSFER);
  -- v0.3's drove each buffer group from the driver through Ray
  -- (get_weights_ipc_handles, update_weights_from_ipc_handles; NeMo RL
  -- issue #945), which the v0.3 cases' refit does not price.  A number,
  -- and every release but v0.3 (no source.version: the later refit).
  if fw == "nemo-rl" and o.colocated and o.ipc_transfer == nil and ver ~= "0.3" then
    o.ipc_transfer = rl.NEMO_RL_IPC_TRANSFER
    defaults[#defaults + 1] = string.format("ipc_transfer=%.4f (NeMo RL's colocated refit "
      .. "through a CUDA-IPC buffer: a fixed cost a hand-off, PR #1267's DeepSeek-V3 refit)",
      o.ipc_transfer)
  end
  -- The engine's mode is priced through the profile's token_host; gp.rl
  -- has no such option.
  o.async_engine = nil
  -- gp.rl prices V0's output processing (its vllm_version and vllm_v0,
  -- gpuplan.rl.v0_outputs, which refuses what is not priced); only the
  -- verl and OpenRLHF profiles were read for a V0 engine (NeMo RL's, say,
  -- sets V1's in-process frontend and its engine core's log-probability
  -- work).
  if rl.v0_outputs(o) == true
    and fw ~= "verl" and fw ~= "openrlhf" then
    return nil, "rl.vllm_v0 / rl.vllm_version: V0's output processing is priced for verl's and "
      .. "OpenRLHF's rollouts (their profiles' frontend_host); this case's framework is "
      .. tostring(fw)
  end
  -- Unpacked, the forwards' micro-batches are logprob_batch_size
  -- sequences at the batch's width: the training's when the two agree.
  if v(c.logprob_batch) and not o.logprob_pack_tokens
    and not (o.pad and v(c.logprob_batch) == (o.batch or 1)) then
    return nil, "rl.logprob_batch sizes NeMo RL's packed log-probability forwards; "
      .. "this case's are not packed NeMo RL ones"
  end
  local ok, r = pcall(rl.rl, o)
  if not ok then return nil, require("gpuplan.cli").clean(r) end
  for _, d in ipairs(r.defaults) do defaults[#defaults + 1] = d end
  -- A step that does not fit has no time (its phases no shares): the case
  -- is not predicted, and the reason says what did not fit.
  if not r.step_s then return nil, "does not fit: " .. tostring(r.why) end
  local parts = {}
  for _, p in ipairs(r.phases) do
    if p.share >= 0.005 then parts[#parts + 1] = string.format("%s %.0f%%", p.name, 100 * p.share) end
  end
  return { value = pick[metric](r), defaults = defaults,
           job = o, call = "rl", read = pick[metric],
           shows = ({ step_time_s = "r.step_s", tokens_per_s_per_gpu = "r.tokens_per_s_gpu",
                      -- the MFU is verl's formula over r (verl_mfu, exported
                      -- below): the script printed nothing for an mfu case,
                      -- where validate --help says it prints the prediction
                      mfu = string.format('require("gpuplan.predict.rl").verl_mfu(%s, r, %.17g)',
                        lua_literal(o.model), (cat.gpus[hw.gpu] and (cat.gpus[hw.gpu].peak.bf16
                          or cat.gpus[hw.gpu].peak.fp16)) or r.update.peak) })[metric],
           reads = "verl's actor MFU (perf/mfu/actor): the update's model FLOPs over its time "
             .. "and the card's dense bf16 peak",
           regime = require("gpuplan.ranges").regime("rl", o, r, cat),
           detail = string.format("step %.3g s; %s%s", r.step_s, table.concat(parts, ", "),
             r.colocated and "" or string.format("; rollout %d + train %d GPUs",
               r.rollout_gpus, r.train_gpus)) }
end

-- The predictor, callable as predict(case, cat); verl_mfu(model, r,
-- peak), the actor MFU verl reports, for the script validate --explain
-- writes of an mfu case.
-- (model: a catalog id or a model record).  frameworks: the names
-- workload.framework takes in an rl case.
return setmetatable({ frameworks = case_.names(PROFILES), verl_mfu = function(m, r, peak)
    if type(m) == "string" then m = require("gpuplan").catalog():get("models", m) end
    return verl_mfu(m, r, peak)
  end }, {
  __call = function(_, case, cat) return predict(case, cat) end })
