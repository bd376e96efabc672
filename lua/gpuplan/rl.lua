-- gpuplan.rl: how long one GRPO / PPO step takes, where the GPUs wait, and
-- what a run costs.
--
--   local gp = require "gpuplan"
--   local r = gp.rl{ model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 16, algo = "grpo",
--                    prompts = 128, group = 8, prompt_len = 512, response_len = 2048,
--                    response_max = 8192, recompute = "full", zero = 3 }
--   print(r.fits, r.step_s, r.samples_per_s, r.cost_1k_prompts)
--   for _, ph in ipairs(r.phases) do print(ph.name, ph.seconds, ph.idle, ph.mem_gib) end
--
-- Every option of gp.train names the actor's training step (method =
-- full|lora|qlora, precision, tp/pp/cp/ep, zero, sp, batch = micro-batch,
-- recompute, stack, system, the overlaps, price, currency ...; gpus is the
-- whole job), plus the RL options `gpuplan fit --method grpo` takes, with
-- the same names:
--   algo          grpo (default) | ppo (adds the critic's forward and update)
--   prompts       prompts per step (default 64); group: responses per prompt (8)
--   prompt_len    tokens per prompt (512)
--   response_len  mean response tokens (default 1024; with response_max
--                 alone: assumed RESPONSE_SHARE x response_max, said so)
--   base_checkpoint  the policy starts from a pretrained-only checkpoint:
--                 with response_max alone the mean is assumed at the
--                 model's published mean (BASE_RESPONSE_TOKENS), else at
--                 BASE_RESPONSE_SHARE x response_max (M.base_response;
--                 default false)
--   response_max  the generation limit (default response_len: every response
--                 that long); response_dist fixed|uniform|exp (default exp
--                 when response_max is given: an exponential clipped at the
--                 limit, where truncated responses pile up)
--   response_clip exp: the share of the responses that never end and are
--                 cut at response_max (default RESPONSE_CLIP = 0.01, at most
--                 response_len / (2 response_max), 0 at response_len 1, said
--                 so)
--   reward_model  a reward model: true or "actor" of the actor's shape, a
--                 catalog id or model table of its own (default false:
--                 rule-based rewards); ref_model (default true): the KL
--                 reference
--   critic_model  PPO: the critic's own model, an id or table (default the
--                 actor's shape); both laid out as the actor, priced by
--                 their own forward/backward and memory
--   ref_gpus, reward_gpus, critic_gpus  PPO's other models on GPU groups
--                 of their own, laid out as the actor (OpenRLHF's
--                 --*_num_gpus_per_node x nodes; default: on the actor's
--                 GPUs): their forwards run beside the actor's, the
--                 critic trains while the actor does (OpenRLHF's order);
--                 colocate_critic_reward: the reward model on the
--                 critic's group.  gpus counts them too.
--   colocated     one pool (default) or separate rollout and training pools;
--   rollout_gpus  N, or "auto" to search the split (implies colocated = false)
--   staleness     1 (default): rollouts of step k + 1 run while step k trains;
--                 0: the pools wait for each other; s >= 2: the prompts of
--                 s steps in flight, the engines never drain (NeMo RL's
--                 max_trajectory_age_steps s)
--   refit_drain   staleness >= 1: each refit waits for every pending
--                 generation (NeMo RL without in_flight_weight_updates):
--                 each step's batch drains alone, one step off; without
--                 it one step off, the next step's prompt groups enter
--                 the engines under the step's tail
--   rollout_tp    the rollout engine's TP (default the actor's tp); an
--                 engine larger than a node fills whole nodes and its
--                 all-reduces cross the NICs (vLLM / SGLang TP over nodes);
--   rollout_pp    the rollout engine's pipeline stages (default 1; vLLM's
--                 pipeline_parallel_size): its GPUs rollout_tp x rollout_pp,
--                 the decode's batch in rollout_pp micro-batches in flight;
--   rollout_ep    1 (default: the experts sliced by the engine's TP) or
--                 rollout_tp: each expert whole on one of its GPUs (vLLM's
--                 enable_expert_parallel), priced by gp.infer's MoE step;
--   rollout_dp_attention  with rollout_ep: attention data-parallel over the
--                 engine's GPUs (SGLang's --enable-dp-attention; default
--                 false), priced as gp.infer's dp_attention, the prompts
--                 admitted while it decodes stalling every rank
--                 (rollout.prefill_stall);
--   rollout_weights  its weight format (default bf16); kv its cache dtype
--   rollout_memory  the share of a card the rollout engine may hold (vLLM's
--                 gpu_memory_utilization; default all the trainer leaves)
--   max_batch, max_num_tokens   the engine's limits (default vLLM's for the
--                 card: 1024 sequences and 16384 tokens on >= 70 GiB cards
--                 other than A100, else 256 and 8192)
--   global_batch  samples per optimizer step (default all of the step's);
--   epochs        passes over the samples (default 1)
--   old_logprobs  the trainer recomputes the policy's log-probabilities
--                 (default true, as verl, OpenRLHF and NeMo RL do)
--   offload_states  colocated: the trainer's tensors wait in host memory
--                 during the rollout (the 16-bit weights pinned, the grads
--                 freed) and the engine's weights during the training
--                 (vLLM sleep level 1) (default false)
--   logprob_offload  separate pools: the training pool's optimizer
--                 states go to host memory (fresh pageable) before the
--                 log-probability forwards and come back for the update,
--                 each step (NeMo RL v0.4.0's prepare_for_lp_inference);
--                 the offload phase, on the training pool's side
--   param_offload colocated: the actor's weights leave for host memory
--                 after each of its phases and return before the next
--                 (verl's megatron.param_offload: three copies into fresh
--                 pageable memory a step) (default false)
--   offload_pinned colocated, with offload_states or param_offload: every
--                 copy out lands in pinned host memory at the link's rate
--                 and the parameters moved around each phase are the fp32
--                 master (verl's FSDP workers; default false)
--   ref_host      the reference waits in host memory and is swapped into
--                 the policy's weights for its forward (NeMo RL's Megatron
--                 worker; default false)
--   ref_reward_offload  ZeRO-3: the reference's and the reward model's
--                 partitions in host memory, copied in for each forward
--                 (DeepSpeed's offload_param; default false)
--   pad           training sequences padded to the limit (default false:
--                 packed to their length); pad_batch: each micro-batch
--                 padded to its own longest response (OpenRLHF), the
--                 attention over the real tokens
--   rank_skew     each DP rank trains an unbalanced draw of each
--                 mini-batch and every optimizer step waits for the
--                 busiest (verl's dynamic batch; default false: even
--                 shares, or pack_tokens' own skew)
--   count_split   under pp > 1, each micro-batch is the next batch
--                 sequences of the mini-batch at their own random
--                 lengths (verl's Megatron actor without use_dynamic_bsz)
--                 and the pipeline's neighbours wait for each other at
--                 every exchange: the passes' pipelined work stretched
--                 by the schedule's expected time over its time at the
--                 mean (default false: every micro-batch at the mean);
--                 results pipe_update, pipe_forward
--   pack_tokens   packed into micro-batches of at most this many tokens by
--                 first-fit decreasing (NeMo RL's sequence packing), the
--                 bins a multiple of the DP ranks dealt out in turn (as
--                 many a rank, not as many tokens: each pass waits for the
--                 busiest rank's, the step's bins a draw), each padded to
--                 the full bin under pp > 1 (default 0: batch sequences at the mean
--                 length); result pack_bins: micro-batches per optimizer
--                 step
--   token_batch   micro-batches cut by tokens (verl's use_dynamic_bsz,
--                 this its ppo_max_token_len_per_gpu): each DP rank
--                 splits its share of a mini-batch into ceil(its tokens /
--                 (token_batch x cp)) micro-batches of even token sums,
--                 the count the busiest rank's, not padded under pp > 1
--                 (default 0: batch sequences at the mean length);
--                 result pack_bins: micro-batches per optimizer step
--   logprob_pack_tokens  with pack_tokens: the log-probability forwards
--                 (old policy, reference) pack the step's samples into
--                 bins of this many tokens instead (NeMo RL's
--                 logprob_mb_tokens; default 0: pack_tokens)
--   rollout_eager the engine runs without CUDA graphs (vLLM enforce_eager):
--                 every op of a decode step dispatched from Python (default
--                 false)
--   rollout_piecewise  the engine replays each decode step as piecewise
--                 CUDA graphs, each layer's attention run between two
--                 captured pieces (vLLM's default before 0.11): the
--                 forward loses M.PIECEWISE_LAYER a layer (default false:
--                 one graph a decode step, vLLM's FULL_AND_PIECEWISE);
--                 result graph_gaps, what a decode step was charged
--   rollout_fused_grouped_topk  the engine routes a grouped-top-k MoE (the
--                 MLA models', DeepSeek's) with vLLM's one fused kernel
--                 (PR #28124: the sigmoid, bias and casts inside) instead
--                 of the native path's 9 (default false)
--   rollout_fused_topk_softmax  the engine's softmax top-k router (Qwen3-
--                 MoE's, Mixtral's) casts, selects and renormalises in
--                 vLLM's one kernel (PR #26717) instead of 4 (default
--                 false)
--   rollout_engine  vllm (default: continuous batching) | hybrid
--                 (DeepSpeed-Chat's hybrid engine: the actor's weights in
--                 DeepSpeed's inference kernels, Hugging Face generate in
--                 static batches, each decoded at its full batch until its
--                 longest response ends; colocated only) | hf (the same
--                 static batches through the actor's own Hugging Face
--                 modules, every op serial with the GPU: OpenRLHF without
--                 vLLM engines; Llama-shaped dense models);
--                 generation_batch: its sequences per GPU (default 16,
--                 DeepSpeed-Chat's per_device_generation_batch_size)
--   async_scheduling  the engine prepares each decode step while the GPU
--                 runs the previous one (vLLM --async-scheduling; default
--                 false, vLLM's default: its host work adds to each step)
--   engine_xhost_step  seconds the engine's executor adds to each decode
--                 step when an engine's GPUs span more than one host (the
--                 system's host_gpus): vLLM's Ray executor runs each step
--                 as a Ray Compiled Graph whose channels to another host
--                 go through gRPC (NeMo RL: M.RAY_CGRAPH_XHOST; default
--                 0); result engine_xhost_step, what a step was charged
--   filter_keep   DAPO's dynamic sampling: the share of generated prompt
--                 groups the filter keeps (default 1: no filter); the
--                 rollout over-samples to prompts / filter_keep groups
--                 (result: generated), the rewards score all of them
--   loss_ops      the actor's loss run one sequence at a time: the host's
--                 PyTorch ops per trained sequence, each an eager op's time
--                 (default 0: one loss per micro-batch); result loss_host
--   fp32_logits   the log-probabilities computed from the vocabulary logits
--                 materialized in fp32, unfused, the softmax kept (NeMo
--                 RL's DistributedLogprob; default false: the training
--                 model's fused loss); results logit_update, logit_forward
--   logit_onehot  with fp32_logits: their backward builds the chosen
--                 tokens' int64 one-hot over the vocabulary (NeMo RL v0.3.0;
--                 default false: a scatter of the chosen tokens' gradient)
--   critic_batch  PPO: the critic (on the actor's GPUs) cuts its forward
--                 and update into micro-batches of this many sequences,
--                 not the actor's token cuts or packing (verl's
--                 critic.ppo_micro_batch_size_per_gpu with its
--                 use_dynamic_bsz off, the default); default: the actor's
--   pad_to        every training sequence of the actor's passes takes this
--                 many slots, the attention over its real tokens (verl
--                 without use_remove_padding: max_prompt_length +
--                 max_response_length); default: packed to their lengths
--   critic_pad_to the same for the critic's own micro-batches
--                 (verl's critic.model.use_remove_padding, its own key)
--   critic_token_batch  PPO: the critic cuts its passes by this many real
--                 tokens a micro-batch (verl's critic use_dynamic_bsz with
--                 its own ppo_max_token_len_per_gpu); not with critic_batch
--   gae_ops       PPO's advantage estimate as a Python loop over the
--                 response positions, once per training micro-batch: the
--                 host's PyTorch ops per position, each an eager op's time
--                 (default 0: none); result gae_host
--   ema           the actor's exponential moving average (DeepSpeed-Chat's
--                 --enable_ema): a 16-bit copy on its GPUs, updated after
--                 each training micro-batch by a loop over its parameter
--                 tensors (default false); result ema_host
--   sync_tp_first the weight sync gathers each tensor whole over TP, then
--                 broadcasts it over the pipeline (NeMo RL v0.3.0's
--                 gather_params; default false: the stages' TP slices)
--   sync_fp8_cast the engine (rollout_weights fp8) casts each 16-bit weight
--                 the sync sends it to fp8 itself, the whole tensor on
--                 every rank (NeMo RL's fp8 generation: fp8.load_weights;
--                 default false: the weights arrive as the engine holds
--                 them)
--   token_host    the framework's host seconds per generated token once the
--                 engine returns (default 0); result rollout.post
--   frontend_host the engine's frontend seconds per sequence per decode
--                 step when the engine runs in the caller's process, serial
--                 with the GPU (vLLM's LLM with VLLM_ENABLE_V1_
--                 MULTIPROCESSING=0; default 0: a frontend process of its
--                 own, M.ENGINE_V0_OUTPUT where M.v0_outputs says V0's
--                 output processing runs between two decode steps); it
--                 adds to vLLM's per-sequence host work
--   vllm_version  the rollout engine's vLLM release, "X.Y" or "X.Y.Z"
--                 written plain: before 0.8.0 its V0 engine (default: a
--                 V1 release); see M.v0_outputs
--   vllm_v0       the engine runs V0 on a V1 release (VLLM_USE_V1=0, or a
--                 fall-back; default false); see M.v0_outputs
--   logprob_host  the engine's seconds per sequence per decode step
--                 for returning each sampled token's log-probability
--                 (vLLM with logprobs = 0; default 0: none asked for); it
--                 adds to vLLM's per-sequence host work
--   sync_tensor_time  seconds per weight tensor of a weight sync that
--                 exports tensor by tensor (verl's Megatron export; default
--                 0: bucketed); result weight_sync phase
--   gen_empty_cache  torch.cuda.empty_cache() calls around each generate
--                 call -- the step's rollout and each validation batch --
--                 at M.EMPTY_CACHE each (default 0); weight_sync phase
--                 (verl's FSDP hybrid worker: 4, or 5 with param_offload)
--   step_overhead the framework's host work per RL step between the phases
--                 (data collation, rewards, actor calls), seconds (default
--                 0); the "framework" phase
--                 (host times are an x86 server CPU's: the catalog
--                 system's host_op_scale multiplies them, as it does the
--                 eager op time of loss_ops and vLLM's per-step work)
--   val_every, val_prompts  a validation pass every val_every steps inside
--                 the step's timer (verl's trainer.test_freq: ray_trainer.py
--                 runs _validate() within marked_timer("step")): a weight
--                 sync and the rollout of val_prompts prompts, one answer
--                 each, at the rollout's settings, spread over the rollout
--                 engines (ceil per engine), the step waiting for the
--                 longest; nothing trains on them, so any count (not only
--                 a multiple of the training DP); its seconds / val_every
--                 the "validation" phase (default: no validation);
--                 val_batch: the pass's prompts in batches of this many,
--                 one generate call and one weight sync each, in turn
--                 (verl's data.val_batch_size; default: all at once)
--   steps         RL steps in the run: hours and cost
--
-- Result: plain table (seconds, bytes): fits, why, step_s, phases {name,
-- seconds, idle, gpus, pool, memory (state), mem_gib}, pools {rollout,
-- train: gpus, busy, idle}, rollout {engines, samples, batch, queued,
-- prefill, decode, tail, longest, itl_first, itl_last, preempted and
-- recompute (requests the engine evicted when its KV cache filled, and the
-- seconds re-prefilling them), host (s of the
-- decode the engine's host work adds), sampler (s of sampling with the
-- tokens' log-probabilities), kv_budget, kv_peak, ...}, samples_per_s, tokens_per_s, tokens_per_s_gpu, gen_tokens_per_s,
-- cost_step, cost_1k_prompts, currency, memory {rollout, forward, update}
-- (gp.memory-style breakdowns), update and forward (the training step's
-- results: mfu, step, parts), run_s, hours, cost (with steps), defaults.
-- rollout_fits is false when the rollout engines have no room to run (no
-- KV cache beside what stays on the GPUs): the step has no time then, so
-- step_s, the throughputs, the costs and the run's hours are nil, and why
-- says so, as is the rollout phase's seconds; the other phases keep
-- theirs.  When only the training state does not fit, every figure is
-- what the step would take if it fit.

local args = require "gpuplan.args"
local memory = require "gpuplan.memory"
local train = require "gpuplan.train"
local units = require "gpuplan.units"

local M = {}

local function core() return require "gpuplan.core" end
local function fail(fmt, ...) error(string.format(fmt, ...), 3) end
-- A usage refusal (gpuplan.args usage): options that do not go together,
-- whatever the model and the card; the command line exits 2 on it.
local function usage(fmt, ...) error(args.usage(string.format(fmt, ...)), 3) end
local shown = args.shown

-- The RL step's own options (the others are gp.train's), declared in
-- gpuplan.options with the rest of `gpuplan rl`'s.
local options = require "gpuplan.options"
M.OPTIONS = options.own("rl", "train")

-- gp.train's options that are not an RL step's, and why.
local NOT_RL = {
  tokens = "an RL run is counted in steps (steps = N)",
  scaling = "applies to gp.train",
  seq = "the training sequence is prompt_len + response_len",
  microbatches = "the step's samples / global_batch set the optimizer steps",
  ctx = "applies to inference", block = "applies to inference",
  concurrency = "applies to inference", chunk_tokens = "applies to inference",
  images = "RL of vision-language models is not modelled yet",
  train_vision = "RL of vision-language models is not modelled yet",
  video_frames = "RL of vision-language models is not modelled yet",
  image_size = "RL of vision-language models is not modelled yet",
  frame_size = "RL of vision-language models is not modelled yet",
}

local function posint(name, v, def)
  if v == nil then return def end
  -- the count rule and its words are gpuplan.options bad_count's
  local msg = require("gpuplan.options").bad_count(name, v)
  if msg then fail("rl: %s", msg) end
  return math.tointeger(v)
end

-- A number option in [0, max] (nil when not given); what says the range.
local function bounded(name, v, max, what)
  if v ~= nil and (type(v) ~= "number" or v ~= v or v < 0 or v > max) then
    fail("rl: %s must be %s (got %s)", name, what, shown(v))
  end
  return v
end

local function boolean(name, v, def)
  if v == nil then return def end
  if type(v) ~= "boolean" then fail("rl: %s must be a boolean (got %s)", name, shown(v)) end
  return v
end

-- vLLM's batch limits when the RL framework leaves them at their default
-- (vllm/engine/arg_utils.py EngineArgs.get_batch_defaults, the offline
-- LLM class verl, OpenRLHF and NeMo RL's synchronous engine drive): on
-- cards of >= 70 GiB other than A100, max_num_seqs 1024 and
-- max_num_batched_tokens 16384; elsewhere 256 and 8192.  An engine built
-- with AsyncLLM.from_engine_args (the engine context, NeMo RL's
-- asynchronous one) gets the scheduler's 128 and 2048 instead: the
-- caller states them (max_batch, max_num_tokens).  The rule is
-- gpuplan.infer's vllm_limits, the LLM class's column.
function M.engine_limits(gpu)
  return require("gpuplan.infer").vllm_limits(gpu, false)
end

-- vLLM V1's host work per decode step, serial with the GPU unless the
-- engine schedules asynchronously (off by default through vLLM 0.11, and
-- NeMo RL v0.5, verl and OpenRLHF leave it off): the scheduler, the input
-- preparation, the copy of the sampled tokens back and the outputs'
-- Python objects, a part per step and a part per request in it.  Measured
-- on the V1 engine at batch 256 (Llama-2-7B): a gap of 5-6 ms between two
-- decode steps, 0.15-0.17 ms once scheduling runs a step ahead
-- (vllm-project/vllm issue #10634 and PR #11133).  Part of that gap does not grow with the
-- batch: the scheduler's pass (0.2 ms, "0.2ms -> 0.04ms" once a decode-only
-- path skips "priority sorting, budget tracking, waiting queue scanning"),
-- the model runner's state update (its fast path "saves ~0.18ms") and the
-- input preparation ("saves ~0.05ms"): at least 0.43 ms a step, measured
-- with B200s (vllm-project/vllm PR #42131, "reducing framework overhead
-- by ~0.4ms per step"; its concurrency is not stated, so all of it is
-- taken as the fixed part).  The rest of the 5.5 ms is per request:
-- (5.5 - 0.43) ms / 256 = 19.8 us per sequence per step.  A tail of a few
-- long responses decodes thousands of steps at a batch of one or two,
-- where the fixed part is the engine's host work.
M.ENGINE_HOST = { step = 0.43e-3, seq = (5.5e-3 - 0.43e-3) / 256 }

-- The frontend's work per sequence per decode step when vLLM's engine
-- runs in the caller's process (frontend_host).  V1's LLM class moves the
-- engine core into a process of its own unless VLLM_ENABLE_V1_
-- MULTIPROCESSING=0; in-process, LLMEngine.step runs the core's step and
-- then the output processor -- detokenizing each request's new token,
-- updating its output -- on the same thread, between two decode steps.
-- Measured on the V1 engine with benchmark_throughput (Qwen2.5-1.5B-
-- Instruct, ShareGPT): 27.81 requests/s with the engine in its own
-- process, 25.98 in-process (vllm-project/vllm PR #10241); over the
-- ~203 generated tokens of a ShareGPT request (vLLM's ShareGPT sample:
-- 203,068 tokens over 1000 requests, PR #18566) that is 12.5 us per
-- sequence per step.  NeMo RL's vLLM worker sets VLLM_ENABLE_V1_
-- MULTIPROCESSING=0 (vllm.py configure_worker v0.3.0, vllm_worker.py
-- r0.5.0/r0.6.0), and its maintainers find its synchronous engine slower
-- than the asynchronous one (NVIDIA-NeMo/RL issue #963, "This happens at
-- both small/large models (llama 8b / dsv3 671b)"), whose AsyncLLM keeps
-- the core in a process of its own.  A lower bound for NeMo RL: its
-- requests also ask for the sampled token's log-probability (logprobs=0),
-- which the measurement did not.
M.ENGINE_FRONTEND = (1 / 25.98 - 1 / 27.81) / 203.068

-- The engine core's work per sequence per decode step when each request
-- asks for its sampled token's log-probability (logprobs = 0, as NeMo
-- RL's vLLM worker does every release: vllm_worker.py SamplingParams
-- logprobs=0).  vLLM V1 carries that one float through a path built for
-- top-k log-probabilities: "the scheduler slices a LogprobsLists (token
-- ids, logprobs, ranks -- three numpy arrays) per request per step,
-- encodes it into EngineCoreOutput, the output processor .tolist()s it,
-- detokenizes every entry and appends Logprob objects"; switching the
-- layers off one at a time, "the GPU kernels are not it ... the D2H copy
-- and tolists() are free; the per-request LogprobsLists slicing -> IPC ->
-- output-processor -> Pydantic path is the whole cost"
-- (vllm-project/vllm PR #57442, one L20 and an 8-core host,
-- Qwen2.5-0.5B-Instruct, 256-token rollouts).  Its concurrency-64 rows
-- give the engine core's own share from its process's CPU time
-- (/proc CPU seconds over wall time): 0.96 of a core at 18,645 tokens/s
-- without log-probabilities, 0.84 at 13,583 with logprobs=0 -- 51.5
-- against 61.8 us of the core's CPU a generated token, 10.35 us more a
-- sequence a decode step.  That is the core process's whole rise, its
-- output thread's packing for the IPC included, which an engine core in
-- a process of its own runs beside the GPU's step; where the engine runs
-- in the caller's process (VLLM_ENABLE_V1_MULTIPROCESSING=0) the core's
-- step and the output processor share one thread, serial with the GPU
-- unless the engine schedules asynchronously.  The frontend's own part
-- there (the output processor's Logprob objects: the server's process
-- went from 0.32 to 0.66 of a core, with its Pydantic and JSON work) is
-- not counted: a lower bound for the in-process engine.
M.ENGINE_LOGPROB = 0.84 / 13583 - 0.96 / 18645

-- vLLM's V0 engine processes each step's outputs itself between two
-- decode steps unless its async output processor overlaps them with the
-- next forward, and it turns that processor off under enforce_eager:
-- CudaPlatform.is_async_output_supported returns False ("To see benefits
-- of async output processing, enable CUDA graph. Since, enforce-eager is
-- enabled, async output processor cannot be used", vllm/platforms/
-- cuda.py, which verl's V0 rollouts print).  LLMEngine._process_model_outputs
-- (appending each sequence's token, the stop checks, the request
-- outputs) then runs serially with the GPU, measured on V0 at two batch
-- sizes (vllm-project/vllm RFC #6913, Llama 3 70B FP8 on 4 H100, 128
-- input tokens: "| 1 | 19 | 0.2 |" and "| 32 | 25 | 3.4 |" -- batch,
-- TPOT ms, _process_model_outputs ms): (3.4 - 0.2) / 31 = 0.103 ms a
-- sequence a decode step.  The table is provisional by its author's own
-- word: under it the RFC says "[Note: I'm generating new numbers using
-- latest `main` branch. Will update soon.] Above numbers are conservative
-- estimates", a note the issue (closed as stale) still carries, and its
-- third row ("| 1024 | 19 | 0.2 | 20% |") repeats the batch-1 figures; so
-- only the two rows above are read, and the constant is no firmer than
-- they are.  It is the one per-sequence figure found for V0's output
-- processing.  The one other V0 figure, vllm issue #6801 ("When BS is
-- 200, all this together can be 20ms": sampling, input preparation,
-- process_model_output and scheduling; no host, GPU or model stated), is
-- about 0.1 ms a sequence for all four parts together: the same size,
-- so the RFC's figure is, if anything, high (docs/validation.md, "V0's
-- own host work").  It is the V0 engine's counterpart of V1's
-- in-process output processor (M.ENGINE_FRONTEND), which it replaces.
-- The RFC's runs detokenized, as the V1 figure's did and OpenRLHF's
-- engines do (SamplingParams' default), where verl asks for none
-- (detokenize = False), and they asked for no log-probability, where
-- verl asks for one (logprobs = 0, M.ENGINE_LOGPROB); the part that does
-- not grow with the batch (0.097 ms a step) is left out.  The same
-- serial processing on every V0 release before 0.6.0, which had no async
-- output processor (vllm PR #7049 brought it).
M.ENGINE_V0_OUTPUT = (3.4e-3 - 0.2e-3) / 31

-- The releases that bound V0's engine and its async output processor:
-- V1 became vLLM's default engine in 0.8.0 (a run on a later release
-- is on V0 only by VLLM_USE_V1=0 or a fall-back, o.vllm_v0), and the
-- async output processor came in 0.6.0 (vllm PR #7049).
M.V1_DEFAULT_SINCE = "0.8.0"
M.ASYNC_OUTPUT_SINCE = "0.6.0"

-- Whether the rollout's vLLM runs its V0 engine with each step's output
-- processing between two decode steps (M.ENGINE_V0_OUTPUT), from o's
-- vllm_version and vllm_v0 (and rollout_eager): true and the reason
-- said on the "defaults assumed" line; false where the engine is V1;
-- nil and the refusal's text where the options contradict each other or
-- ask for what is not priced (V0's async output processor under CUDA
-- graphs).  Values of the wrong kind are the caller's to refuse
-- (step_flags); the case reader's profiles ask this too, before that
-- check, so a bad value reads as V1 here.
function M.v0_outputs(o)
  local version = require "gpuplan.version"
  local ver = o.vllm_version
  local v0_release = type(ver) == "string" and version.plain(ver)
    and version.before(ver, M.V1_DEFAULT_SINCE)
  local fallback = o.vllm_v0 == true
  if fallback and v0_release then
    return nil, string.format("rl: vllm_v0 says a V1 release (%s on) runs V0; vllm_version %s is "
      .. "a V0 release: leave vllm_v0 out", M.V1_DEFAULT_SINCE, ver)
  end
  if not (fallback or v0_release) then return false end
  local eager = o.rollout_eager == true
  local no_processor = v0_release and version.before(ver, M.ASYNC_OUTPUT_SINCE)
  local said = fallback and "vllm_v0" or ("vllm_version " .. ver)
  if not (eager or no_processor) then
    return nil, string.format("rl: %s runs vLLM's V0 engine, whose async output processor "
      .. "(vLLM %s on) overlaps each step's output processing with the next forward under CUDA "
      .. "graphs, which is not priced: give rollout_eager (enforce_eager turns that processor "
      .. "off)%s", said, M.ASYNC_OUTPUT_SINCE,
      fallback and "" or (", or a vllm_version before " .. M.ASYNC_OUTPUT_SINCE))
  end
  return true, string.format("%s: vLLM's V0 engine %s, so LLMEngine._process_model_outputs "
    .. "runs between two decode steps, %.3f ms a sequence a step (vLLM RFC #6913)", said,
    no_processor and ("before " .. M.ASYNC_OUTPUT_SINCE .. " has no async output processor "
      .. "(vllm PR #7049)")
      or "under rollout_eager turns its async output processor off", M.ENGINE_V0_OUTPUT * 1e3)
end

-- DeepSpeed-Chat's hybrid engine generates through Hugging Face's
-- generate() (DeepSpeed v0.9.0 runtime/hybrid_engine.py: generate calls
-- the module's own generate with each decoder layer's forward swapped
-- for its inference container's), whose greedy loop ends every step on
-- a value read back from the GPU ("if unfinished_sequences.max() == 0 or
-- stopping_criteria(input_ids, scores)", transformers' greedy_search of
-- 2021-2023): the host cannot run ahead into the next step.  Each step
-- the host dispatches, at GP_EAGER_OP_TIME an op that launches a kernel
-- (the actor's host_op_time):
--  * HYBRID_LAYER_OPS per decoder layer: the host time of a decoder
--    layer's trip through DeepSpeed's inference extension, in ops of
--    GP_EAGER_OP_TIME.  Counted as calls (v0.9.0 ds_transformer.py,
--    ds_attention.py, ds_mlp.py: qkv_func, score_context_func,
--    vector_matmul_func, mlp_gemm_func, residual_add_func) it would be 5,
--    but each call's C++ binding launches several kernels and allocates
--    its outputs; DeepSpeed's maintainers measured the whole of it on
--    the same model and engine (DeepSpeed PR #8271, "Measured on
--    facebook/opt-1.3b, ZeRO-2, single H100": "The GPU is idle waiting
--    on the host. A single decode step issues roughly 1300 kernel
--    launches, and of the 5.22 ms step, 4.52 ms is the model forward"):
--    the forward's host time less its 13 ops outside the layers (the 11
--    below and the final norm and LM head), over OPT-1.3B's 24 layers,
--    (4.52 ms - 13 x 24.84 us) / 24 = 174.9 us = 7.04 ops a layer.
--    Cross-check: the step it gives, (7.04 x 24 + 28) x 24.84 us =
--    4.89 ms, against the PR's 5.00-5.58 ms a decode step at batch 1-32
--    (5.10 at 4).  The measurement is DeepSpeed 0.19.6's, the same
--    pt_binding kernels under a newer Python layer than v0.9.0's, and
--    the split of its 4.52 ms between the layers and the rest takes
--    2023's 13 ops outside them (2026 transformers' mask and cache
--    bookkeeping are more: 30 more ops would make a layer 6, not 7);
--  * HF_GENERATE_OPS around them: before the first layer (transformers'
--    OPTDecoder.forward of 2023 with the hybrid engine's layers,
--    module_inject/layers.py): the token embedding 1, the attention mask
--    _expand_mask 4 (the cast, 1 - mask, the bool cast, masked_fill), the
--    positions (DeepSpeed's OPTEmbedding: cumsum, the product with the
--    mask, - 1, + offset, the embedding) 5, their sum 1 -- 11; after the
--    layers the final norm and the LM head 2, and greedy_search's tail:
--    the min_length processor's eos fill 1 (DeepSpeed-Chat passes
--    min_length = max_length, ppo_trainer._generate_sequence), argmax 1,
--    the padding of finished rows (mul, rsub, mul, add) 4, the cat of
--    input_ids 1, the attention mask's new_ones and cat 2, the finished
--    flags (ne, long, mul) 3, max, == 0 and the read back 3 -- 17.
-- The 11 before the first layer run while the GPU waits (the last step's
-- read back emptied its queue): the step's serial host time.  The rest
-- is dispatched while the GPU works: the longer of the two sets the pace.
M.HYBRID_LAYER_OPS = (4.52e-3 - 13 * 24.84e-6) / (24 * 24.84e-6)
M.HF_GENERATE_PRELUDE_OPS = 11
M.HF_GENERATE_TAIL_OPS = 17

-- What those calls launch on the GPU, beside the serving model's decode
-- step (its 9 operators an OPT layer: the two norms, the q/k/v, output,
-- up and down GEMMs, the cache write, one attention kernel, the
-- activation).  DeepSpeed v0.9.0's inference binding (csrc/transformer/
-- inference/csrc/pt_binding.cpp), a pre-LN layer at fp16 in the hybrid
-- engine's transposed_mode, launches 14 kernels a decode step:
--  * ds_qkv_gemm -> qkv_unfused_cublas: launch_fused_ln, cublas_gemm_ex,
--    then launch_bias_add of the q/k/v bias -- a kernel of its own (+1);
--  * ds_softmax_context: launch_bias_add_transform_0213 (the cache
--    write), then attention_unfused: cublas_strided_batched_gemm (Q K^T),
--    ds_softmax_internal's launch_attn_softmax_v2, a second
--    cublas_strided_batched_gemm (P V), and launch_transform4d_0213 back
--    to [batch, seq, hidden] -- four kernels where the serving model
--    prices one fused attention (+3);
--  * ds_vector_matmul: cublas_gemm_ex (the output projection);
--  * ds_mlp_gemm -> mlp_unfused_cublas: launch_fused_residual_ln,
--    cublas_gemm_ex, launch_bias_relu, cublas_gemm_ex;
--  * residual_add_bias: launch_bias_residual, the layer's residual and
--    the down projection's bias (+1).
-- 5 kernels a layer beyond the serving model's.  Around the layers,
-- generate()'s 17 tail ops (HF_GENERATE_TAIL_OPS) are each a kernel (the
-- read back a copy) on the GPU's timeline after the last layer, of which
-- the serving step prices 3 (the final norm, the LM head, the argmax):
-- 14 more.  (The 11 of the prelude run while the host dispatches them,
-- inside HF_GENERATE_PRELUDE_OPS' serial time.)  Each moves a few KB at a
-- decode batch -- a bias, a [batch, heads, ctx] score row, a hidden state
-- -- so it lasts a launch and the memory pipeline's fill: priced as an
-- op of the batch's hidden state read and written at the card's roofline,
-- without CUDA graphs (the hybrid engine captures none: DeepSpeed PR
-- #8271 added the first, "an opt-in hybrid_engine.enable_cuda_graph
-- flag", in 2026).  Counted on OPT's path, DeepSpeed-Chat's model; a
-- rotary container (GPT-NeoX) launches launch_apply_rotary_pos_emb too.
M.HYBRID_EXTRA_LAYER_KERNELS = 5
M.HF_GENERATE_TAIL_KERNELS = M.HF_GENERATE_TAIL_OPS - 3

-- Under ZeRO-3 the hybrid engine's attention keeps q, k and v apart and
-- fuses them again at every forward.  set_params_wo_copy (module_inject/
-- containers/base.py, v0.9.0) points the inference attention at the
-- fused qkvw only "if not Z3_enabled or self.q_k_v is None"; under ZeRO-3
-- a container whose policy returns q, k and v apart (HFOPTLayerPolicy
-- get_q_k_v: q_proj, k_proj, v_proj, OPT's) gets attn_qw, attn_kw,
-- attn_vw (and the TP engine's apply_tensor_parallelism, "if
-- self.module.attention.attn_qkvw is None: self.attention_q_k_v_mp",
-- slices them apart too), and DeepSpeedSelfAttention.forward (ops/
-- transformer/inference/ds_attention.py) begins "if self.attn_qkvw is
-- None: self._attn_qkvw, self._attn_qkvb = self._merge_qkv()", which
-- copies each into one buffer shared by every layer: "qvkw[:self.
-- hidden_size_per_partition, :] = self.attn_qw", the same for attn_kw and
-- attn_vw, and the three biases into qvkb when attn_qb is not None.
-- Every layer of every decode step thus reads and writes its TP slice of
-- the q, k and v weights once more before its q/k/v GEMM reads the
-- buffer: HYBRID_Z3_MERGE_COPIES copies a layer (the weights' three, the
-- biases' three on a model with them), each a kernel and a Python op on
-- the host.  Below ZeRO-3 (the fused qkvw) and on a model whose own
-- modules fuse q, k and v (the actor's split_proj without its q, k, v:
-- "none" or "mlp", whose policy returns no q_k_v) there is none.  The prefill's one merge a layer is not counted (a 1/steps share
-- of the decode's).
M.HYBRID_Z3_MERGE_COPIES = 3

-- A LoRA actor's adapters are added into the weights the hybrid engine
-- generates with (runtime/hybrid_engine.py v0.9.0 _fuse_lora, for each
-- adapted linear: "weight.data += lora_scaling * torch.matmul(
-- lora_left_weight.t(), lora_right_weight.t())"; _unfuse_lora the same
-- with -=).  Under ZeRO-3 at inference_tp_size > 1 generate fuses every
-- layer inside its GatheredParameters, whole on every rank, before
-- apply_tensor_parallelism cuts the slices, and drops the gathered
-- tensors after (no unfuse); at TP 1 and below ZeRO-3 it fuses before
-- _generate and unfuses after (fuse_lora_weight / unfuse_lora_weight).
-- Each pass, eager, over a weight of w elements at 16 bits: the GEMM
-- of depth r writes its product (2 B an element), the scaling reads and
-- writes it (4 B), the in-place add reads the weight and the scaled
-- product and writes the weight (6 B): 12 B an element, the GEMM's 2
-- priced with its 2 r w FLOPs and the 10 of the two elementwise ops
-- after it.
M.HYBRID_LORA_FUSE_BYTES = 12

-- OpenRLHF without vLLM engines (train_ppo_ray.py of 2024 when no
-- --vllm_num_engines is given: openrlhf/models/actor.py generate calls
-- the Hugging Face model's own generate on each actor rank's ZeRO-2 copy
-- of the weights) decodes through transformers' eager modules:
-- rollout_engine hf.  With --flash_attn, LlamaFlashAttention2 runs a
-- padded (left-padded prompts) batch through _upad_input, whose
-- _get_unpad_data is called in every layer at every step
-- (huggingface/transformers src/transformers/models/llama/
-- modeling_llama.py, the stored copy at 0022728): "indices =
-- torch.nonzero(attention_mask.flatten(), as_tuple=False).flatten();
-- max_seqlen_in_batch = seqlens_in_batch.max().item()" -- nonzero and
-- .item() both wait for the GPU, so the host cannot run more than a layer
-- ahead of it.  Between two such waits its kernels still run while it
-- dispatches: "By default, GPU operations are asynchronous. When you call
-- a function that uses the GPU, the operations are enqueued to the
-- particular device, but not necessarily executed until later" (PyTorch
-- docs, notes/cuda.rst, "Asynchronous execution").  A layer then lasts
-- the longer of its dispatch and its kernels (the max rule
-- GP_EAGER_OP_TIME itself is measured under: gpt-fast's eager decode,
-- "CPU-overhead bound", its kernels hidden behind its 24.84 us an op),
-- and the layers being alike, the step the longer of all the layers'
-- dispatch and all their kernels -- the hybrid engine's rule, here with
-- every layer's wait in it -- save what the wait itself exposes: the
-- cache's two torch.cat (HF_CACHE_WAITED) are issued just before it, with
-- only the second cat, the sum and the nonzero dispatched after the
-- first (HF_WAIT_LEAD_OPS), so what of their copies outlasts those three
-- ops is on the host's path (engine/rl.h wait_copies).  Still a lower
-- bound: a kernel's own tail after the last dispatch before a wait, and
-- the read back's latency, are not counted.  Ops that launch a kernel,
-- per LlamaDecoderLayer of a decode step (q_len 1):
--   input RMSNorm 8 (to fp32, pow, mean, + eps, rsqrt, mul, to, * weight);
--   q, k, v projections 3; LlamaRotaryEmbedding.forward 7 (position_ids
--   float, the matmul, cat, cos, sin, two casts); apply_rotary_pos_emb 10
--   (per q and k: * cos, the negation and cat of rotate_half, * sin,
--   the add); DynamicCache.update's two torch.cat 2; _upad_input 13
--   (_get_unpad_data's sum, nonzero, max, item, cumsum, F.pad; per key
--   and value the reshape's copy of the transposed cache, the indices'
--   repeat and the gather of index_first_axis; the arange of cu_seqlens_q);
--   flash_attn_varlen_func 1; pad_input's zeros and index put 2; o_proj 1;
--   the residual add 1; post-attention RMSNorm 8; the MLP 5 (gate, SiLU,
--   up, mul, down); the residual add 1 -- 62.
-- Around the layers, generate()'s own ops (HF_GENERATE_PRELUDE_OPS,
-- HF_GENERATE_TAIL_OPS, counted for DeepSpeed-Chat's greedy OPT loop) are
-- taken as they are: a lower bound for OpenRLHF's sampling (top-p's sort
-- and cumsum are not counted), 28 ops beside 62 a layer.
M.HF_LLAMA_LAYER_OPS = 62

-- The same decode step's GPU work beyond a paged engine's: the cache is
-- one dense tensor a layer, [batch, kv_heads, ctx, head_dim] for K and for
-- V, that the step copies whole (the modeling_llama.py quoted above):
-- DynamicCache.update's torch.cat of the cache and the new token reads the
-- cache and writes it anew (2 x the cache); LlamaFlashAttention2 then
-- transposes K and V to [batch, ctx, heads, head_dim] ("These transpose
-- are quite inefficient but Flash Attention requires the layout ...") and
-- _upad_input's key_layer.reshape(batch_size * kv_seq_len, ...) of the
-- transposed view is a copy (2 x); index_first_axis gathers its rows by
-- the unpadded indices (flash_attn/bert_padding.py: torch.gather into a
-- new tensor, 2 x); flash_attn_varlen_func reads the gathered K and V,
-- the one read a paged engine's attention makes and the serving model
-- prices.  Six passes over the batch's cache a step beyond it, at the
-- card's memory bandwidth.
M.HF_CACHE_COPIES = 6
-- Of them the cat's two (its read and its write) are issued right before
-- the layer's wait (above), three ops ahead of it: the cat of V, the sum
-- and the nonzero of _get_unpad_data.
M.HF_CACHE_WAITED = 2
M.HF_WAIT_LEAD_OPS = 3

-- A vLLM engine larger than a host runs its workers under vLLM's Ray
-- executor (NeMo RL passes distributed_executor_backend="ray" for every
-- engine of TP > 1, nemo_rl/models/generation/vllm/vllm_worker.py
-- r0.5.0/r0.6.0), which through vLLM 0.19 runs each step as a Ray
-- Compiled Graph (vllm/v1/executor/ray_executor.py execute_model:
-- forward_dag.execute(scheduler_output); vLLM RFC #35848 replaced it
-- from 0.20).  A compiled graph's channel to a reader on another node
-- is no shared memory: "If they are on different nodes, the data is
-- transferred via gRPC" (ray PR #44094), a polling thread pushing each
-- write to the other node's raylet.  Each decode step the scheduler's
-- output goes out to the remote workers and their outputs come back:
-- the round trip Ray's multi-node compiled-graph benchmark times
-- (release/microbenchmark/experimental/compiled_graph_gpu_microbenchmark
-- .py exec_ray_dag_cpu: the driver's input to a sender on its own node,
-- a 100 KB tensor to a receiver on the other, its b"x" back to the
-- driver): 640.64 +- 13.63 executions per second across two nodes
-- (ray PR #49755, "Gpu multinode Perf Results", 2025-01, x86 g3.4xlarge
-- hosts).  Against "less than 50us" for a compiled graph within a host
-- (Ray's compiled-graph docs, ray PR #49115), the cross-host round trip
-- is the whole 1.56 ms: charged once a decode step, whatever the number
-- of remote hosts (their pushes run in parallel; a lower bound where the
-- driver reads their outputs one after another, ray issue #58625).
M.RAY_CGRAPH_XHOST = 1 / 640.64

-- vLLM V1 before 0.11 captures a decode step as piecewise CUDA graphs:
-- "we only capture the cudagraph for the piece of graph between attention
-- operations" (vLLM docs, design/v1/torch_compile.md, PR #14437), the
-- attention run eagerly between two pieces; "With piecewise, there are
-- multiple kernel launches per layer, with more gaps between the kernel
-- execution" (vLLM PR #16072, full CUDA graphs for FA3).  vLLM 0.11
-- made one graph a decode step the default (PR #25444, "Change default
-- CUDAGraphMode from PIECEWISE to FULL_AND_PIECEWISE", 2025-09-23).
-- Measured on the same engine both ways (vLLM PR #20059, Qwen2.5-1.5B-
-- Instruct, 28 layers, ShareGPT at 1 request/s): median inter-token
-- latency 5.39 ms piecewise, 4.97 ms with the decode step one graph:
-- (5.39 - 4.97) ms / 28 = 15.0 us a layer a decode step.  Charged on the
-- forward's timeline (its gaps), at every batch; at 100 requests/s the
-- same engines differ by 0.65 ms (23 us a layer), and PR #25444's
-- Qwen3-30B-A3B-FP8 on one H100 served 4.07 requests/s piecewise against
-- 5.98 (10 requests of 1024 + 128 tokens: ~6 ms a decode step), so this
-- is a lower bound.
M.PIECEWISE_LAYER = (5.39e-3 - 4.97e-3) / 28

-- The mean response over the generation limit when only the limit is
-- given: the median of G-Average Seq len / T-Max Sequence Length over the
-- 23 GRPO and DAPO runs of NeMo RL v0.5's performance summary (github
-- NVIDIA-NeMo/RL docs/about/performance-summary.md, r0.6.0: H100 BF16,
-- H100 FP8 and GB200 BF16 tables; each the mean of 5 measured steps on
-- OpenMathInstruct-2 or DAPO-Math-17k).  The 23 ratios, sorted: .249 .260
-- .270 .274 .275 .480 .484 .495 .634 .647 .648 .696 | .697 .697 .697 .780
-- .781 .781 .782 .794 .794 .794 .795; the 12th of 23 is 0.696 (Llama 8B
-- near a quarter, DeepSeek V3 near a half, Qwen3 up to 0.8: reasoning
-- models run close to their limit).  With the limit the lengths are
-- exponential clipped there (response_dist exp), so the responses that
-- reach the limit pile up at it, as in DAPO's overlong analysis (Yu et
-- al. 2025, sec. 3.4).
M.RESPONSE_SHARE = 0.696

-- The same share when the policy starts from a pretrained-only (base)
-- checkpoint, as DAPO-style runs do (a case's rl.base_checkpoint): such a
-- policy has not learned to reason at length, and its responses stay far
-- below the limit.  The median of response_length / max_response_length
-- over the 16 published verl DAPO-Math runs of base checkpoints in
-- github ISEEKYAN/verl_megatron_practice (dapo14b.csv and dapo32b.csv,
-- H20, max_response_len "20K" = 20480): Qwen2.5-14B 763-791 tokens,
-- Qwen2.5-32B 1354-2819, Qwen3-14B-Base 3041-3656; the 16 ratios,
-- sorted: .037 .037 .039 .066 .070 .073 .075 .089 | .138 .148 .153 .157
-- .163 .171 .178 .179, the 8th and 9th (1827.308 and 2819.061 tokens)
-- averaging 0.1134.  Cross-check from the same repository
-- (dapo_moe30b.csv row 17: Qwen3-30B-A3B-Base on 32 H20s, update_actor
-- 122 s at verl's MFU 0.454): verl's own identity FLOPs = MFU x 148e12 x
-- 32 GPUs x the update's time bounds the step's 8192 sequences to
-- 2.62e17 counted FLOPs, about 1250 tokens each with the prompt -- a
-- mean response near 1100 of that run's 8192-token limit (0.13).
M.BASE_RESPONSE_SHARE = (1827.308 + 2819.061) / 2 / 20480

-- A base checkpoint whose own DAPO runs are published: its mean response
-- in tokens, and the limit those runs had.  The mean is the policy's, not
-- a share of the limit: verl's one-step-off doc (docs/advance/
-- one_step_off.md at 503ea75f5) trains Qwen2.5-Math-7B on the same data
-- to 8192 tokens (Megatron) and to 20480 (FSDP2), and on the same 12
-- training and 4 rollout GPUs, 6144 samples a step, the two cost the same
-- a sample (old_log_prob 120 and 108 s, update_actor 347 and 337,
-- generate_sequences 501 and 458): the limit clips the responses, a
-- higher one does not lengthen them.  The 16 runs behind the median
-- above answer 0.037 (Qwen2.5-14B) to 0.179 (Qwen3-14B-Base) of their
-- one limit: the model decides it.
-- Qwen2.5-Math-7B: github ISEEKYAN/verl_megatron_practice dapo7b.csv at
-- 12f78ce (2025-07-31), 20 verl DAPO runs on 8-32 H100s and H20s (the
-- DAPO_7B scripts: MODEL_PATH .../Qwen2.5-Math-7B, max_response_length
-- 8192, train_prompt_bsz 512, n_resp_per_prompt 16: 8192 sequences), each
-- with its update_actor time and verl's MFU.  verl's perf/mfu/actor is its
-- FlopsCounter's count over that timer and the card's promised FLOP/s
-- (verl/utils/flops_counter.py _estimate_qwen2_flops: 6 x 7.615e9 dense
-- weights, the embedding and head included, a token, plus 12 x s^2 x 128
-- x 28 x 28 a sequence; H100 989e12, H20 148e12), so MFU x peak x GPUs x
-- update_actor is the count, and with 150-token prompts and exponential
-- responses (E[R^2] = 2 R^2) each row gives a mean R: sorted 854 1118
-- 1214 1231 1245 1247 1271 1275 1279 1293 1295 1303 1312 1316 1323 1340
-- 1354 1436 1488 1675, the median 1294 tokens (0.158 of 8192).
M.BASE_RESPONSE_TOKENS = {
  ["qwen2.5-math-7b"] = { tokens = 1294, limit = 8192 },
}

-- The mean response assumed for a base checkpoint (model: a catalog id or
-- a model table with its id) at the limit rmax, and what the assumption
-- says: its published mean (M.BASE_RESPONSE_TOKENS) at a limit at least
-- the one it was measured at, that share of a lower one, else
-- M.BASE_RESPONSE_SHARE of rmax.
function M.base_response(model, rmax)
  local id = type(model) == "table" and (model.id or model.name) or model
  local own = type(id) == "string" and M.BASE_RESPONSE_TOKENS[id:lower()]
  if own then
    local r = math.max(1, math.floor(own.tokens * math.min(1, rmax / own.limit) + 0.5))
    return r, string.format("response_len=%d (assumed: %s's published mean response in verl "
      .. "DAPO runs to %d tokens, %d%s; give response_len when known)", r, id, own.limit,
      own.tokens, rmax < own.limit and string.format(", that share of %d", rmax) or
      ": a higher limit does not lengthen it")
  end
  local r = math.max(1, math.floor(M.BASE_RESPONSE_SHARE * rmax + 0.5))
  return r, string.format("response_len=%d (assumed: %.3f x response_max, the median mean/limit "
    .. "of published DAPO runs from base checkpoints; give response_len when known)", r,
    M.BASE_RESPONSE_SHARE)
end

-- The share of the responses that never end and are cut at the limit
-- (response_clip), beside the exponential's own e^(-limit/theta).  An
-- exponential alone puts almost nothing there when the mean is far below
-- the limit (mean 398 of 3946: e^-9.9 = 5e-5, so the longest of 2048 is
-- theta H_2048 = 3265 tokens), yet published GRPO runs cut several
-- percent at the limit whatever their mean: NeMo RL's Nemotron 3.5
-- Lightning DAPO guide, "The truncation rate drops from ~0.5 to ~0.1 as
-- responses shorten from ~5,500 to ~3,000 generated tokens per sample"
-- (docs/guides/nemotron-3.5-lightning.md, max_new_tokens 8192); the
-- Rethinking-OPD authors (GitHub issue #7), "the clip ratio is about
-- 0.075 for a non-thinking model such as Qwen3-1.7B-SFT ...
-- DeepSeek-R1-Distill-Qwen-1.5B has a clip ratio of around 0.6"; verl
-- logs it each step as response_length/clip_ratio, and DeepScaleR saw
-- its long responses as "a repetitive pattern" -- a loop that never
-- samples EOS.  With a share c cut, one of N responses reaches the limit
-- unless none does, (1 - c)^N: at 1% and 2048 samples 1e-9, so a
-- synchronous step lasts until the limit.  1% is below every published
-- share found; the step time hardly depends on it once c N >> 1 (NeMo
-- RL v0.3 70B: c 0.001 -> 0.08 gives 131 -> 135 s), while a larger one
-- would move tokens from the body to the limit where the mean is far
-- below it.  The default is at most half the mean's tokens at the
-- limit (c <= mean / (2 limit)).
M.RESPONSE_CLIP = 0.01

local function gib(b) return b / 2 ^ 30 end

-- An error raised inside gpuplan's own Lua, without the position Lua
-- gave it there (M.rl re-raises it at its caller's).
local function internal(e)
  -- Any chunk's position: gpuplan's own, or the caller's script line that
  -- a nested setup's error level pointed at (gp.rl's own errors carry none,
  -- so one wrapped in "rl: ..." must not carry it in its middle).
  return (tostring(e):gsub("^[^\n]-:%d+: ", ""))
end

-- Refuse options gp.rl does not take, naming why: the resolve step
-- (gpuplan.options) refuses unknown keys and bare-number quantities; gp.train's
-- options that are not an RL step's are refused here with the reason.
local function check_options(o)
  if type(o) ~= "table" then fail("rl{...}: expected a table of options") end
  local ok, r = pcall(options.resolve, "rl", o, "rl", nil,
    function(k) return NOT_RL[k] ~= nil end)
  if not ok then fail("%s", r) end
  for _, k in ipairs { "tokens", "scaling", "seq", "microbatches", "ctx", "block",
                       "concurrency", "chunk_tokens", "images", "train_vision",
                       "video_frames", "image_size", "frame_size" } do
    if o[k] ~= nil then usage("rl: %s: %s", k, NOT_RL[k]) end
  end
  -- A list of cards (gpu = "h100-sxm,h20", the form plan and infer take)
  -- was "unknown gpu 'h100-sxm,h20': one gpu here, not a list (plan and
  -- infer compare several)", pointing to commands that run no RL step:
  -- one step is priced on one card, so each card is its own call.
  if type(o.gpu) == "string" and o.gpu:find(",", 1, true) then
    usage("rl: gpu takes one card, not a list (got '%s'): price each card in its own call, "
      .. "for _, id in ipairs { ... } do local r = gp.rl{gpu = id, ...} end, and compare "
      .. "their step_s, hours and cost (docs/rl.md, \"Comparing cards\")",
      require("gpuplan.units").oneline(o.gpu))
  end
end

-- GRPO's advantage is a response's reward against its group's mean (and
-- standard deviation): a group of one has none to compare with, every
-- advantage 0. TRL refuses it (trl/trainer/grpo_config.py: "GRPO requires
-- at least 2 generations per prompt to calculate the advantages"); PPO's
-- critic needs no group. The commands (rl, fit --method grpo) refuse it;
-- gp.rl itself prices one-answer rollouts (its validation pass, a script's
-- reference rollout), so the API keeps it.  ppo: the flag that picks PPO.
function M.group_problem(algo, group, ppo)
  if algo == "grpo" and group and group < 2 then
    return string.format("--group %d: GRPO needs at least 2 responses a prompt, its advantage "
      .. "is each response's reward against its group's (PPO's critic needs no group: %s ppo)",
      group, ppo)
  end
end

-- The RL algorithm and how the actor trains.
local function algo_method(o, dflt)
  local algo = o.algo
  if algo == nil then algo = "grpo"; dflt("algo=grpo") end
  if algo ~= "grpo" and algo ~= "ppo" then
    usage("rl: algo must be grpo or ppo (got %s)", shown(algo))
  end
  local method = o.method or "full"
  if method == "grpo" or method == "ppo" then
    fail("rl: method is how the actor trains (full|lora|qlora); the RL algorithm is algo = %s",
      method)
  end
  if method ~= "full" and method ~= "lora" and method ~= "qlora" then
    fail("rl: method must be full, lora or qlora (got %s)", shown(method))
  end
  return algo, method
end

-- Prompts, group, prompt length and the responses' mean, limit and
-- distribution.
local function lengths(o, dflt)
  -- The declared defaults (gpuplan.options): fit --method grpo takes the
  -- same ones, so both commands price the same batch.
  local function declared(name)
    local v = posint(name, o[name])
    if v then return v end
    local d, text = options.default(name)
    dflt(text)
    return d
  end
  local prompts = declared("prompts")
  local group = declared("group")
  local plen = declared("prompt_len")
  local rlen = posint("response_len", o.response_len)
  local rmax = posint("response_max", o.response_max)
  local rmin = posint("response_min", o.response_min)
  local base = boolean("base_checkpoint", o.base_checkpoint, false)
  -- A stated range (a source that bounds every response between two
  -- lengths): the lengths uniform from response_min to response_max, the
  -- mean their middle (rl_lengths' uniform on [2 mean - max, max]).  A
  -- range of a logged mean (OpenRLHF's "generation_length = 100~300", the
  -- range of its batch-mean "glen") is no such bound: its middle is
  -- response_len, and the limit response_max.
  if rmin ~= nil then
    if rmax == nil then
      usage("rl: response_min is the bottom of a range of response lengths: it needs "
        .. "response_max, its top")
    elseif rmin > rmax then
      usage("rl: response_min %d is above response_max %d", rmin, rmax)
    elseif base then
      usage("rl: base_checkpoint assumes the mean response; response_min and response_max "
        .. "state it (their middle): give one of them")
    elseif o.response_dist ~= nil and o.response_dist ~= "uniform" then
      usage("rl: response_min states lengths uniform up to response_max; response_dist %s "
        .. "contradicts it", shown(o.response_dist))
    elseif rlen ~= nil and rlen ~= (rmin + rmax) / 2 then
      usage("rl: response_len %d is not the middle of response_min %d and response_max %d "
        .. "(uniform lengths between them): give the range or the mean", rlen, rmin, rmax)
    end
    rlen = (rmin + rmax) / 2
  end
  if base and rlen ~= nil then
    usage("rl: base_checkpoint assumes the mean response, response_len %d states it: give "
      .. "one of them", rlen)
  elseif base and rmax == nil then
    usage("rl: base_checkpoint needs response_max: the mean is assumed as a share of the limit")
  end
  if rlen == nil and rmax ~= nil and base then
    -- A base policy's mean, assumed from measured runs of base
    -- checkpoints (M.base_response: the model's own, else
    -- M.BASE_RESPONSE_SHARE).
    local text
    rlen, text = M.base_response(o.model, rmax)
    dflt(text)
  elseif rlen == nil and rmax ~= nil then
    -- Only the limit is known (published configs give max_new_tokens):
    -- the mean is assumed from measured runs (M.RESPONSE_SHARE).
    rlen = math.max(1, math.floor(M.RESPONSE_SHARE * rmax + 0.5))
    dflt(string.format("response_len=%d (assumed: %.3f x response_max, the median mean/limit "
      .. "of NeMo RL's published GRPO runs; give response_len when known)", rlen,
      M.RESPONSE_SHARE))
  elseif rlen == nil then
    rlen = 1024
    dflt("response_len=1024")
  end
  local dist = o.response_dist
  if dist ~= nil and dist ~= "fixed" and dist ~= "uniform" and dist ~= "exp" then
    usage("rl: response_dist must be fixed, uniform or exp (got %s)", shown(dist))
  end
  if rmax == nil then
    if dist ~= nil and dist ~= "fixed" then
      usage("rl: response_dist %s needs response_max (the generation limit)", dist)
    end
    dist = "fixed"
    dflt(string.format("response_max=%d (every response %d tokens)", rlen, rlen))
  else
    if rmax < rlen then
      usage("rl: response_max %d is below response_len %d (the mean)", rmax, rlen)
    end
    if dist == nil and rmin ~= nil then
      dist = rmax > rlen and "uniform" or "fixed"
    elseif dist == nil then
      dist = rmax > rlen and "exp" or "fixed"
      if dist == "exp" then dflt("response_dist=exp (clipped at response_max)") end
    end
  end
  local clip = o.response_clip
  if clip ~= nil then
    if type(clip) ~= "number" or not (clip >= 0 and clip < 1) then
      fail("rl: response_clip must be a share in [0, 1) (got %s)", shown(clip))
    end
    if dist ~= "exp" then
      usage("rl: response_clip needs exp lengths, a limit above the mean (got %s)", dist)
    end
  elseif dist == "exp" then
    -- A mean of one token leaves the responses that end no room below it
    -- (c max + (1 - c) mu_b = mean needs mu_b >= 1): none cut there.
    clip = rlen > 1 and math.min(M.RESPONSE_CLIP, rlen / (2 * rmax)) or 0
    dflt(string.format("response_clip=%g (assumed: a share of the responses never ends and "
      .. "is cut at response_max, as published GRPO logs show; give it when known)", clip))
  end
  if clip and clip * rmax > rlen then
    usage("rl: response_clip %g puts %g tokens a response at response_max %d, above "
      .. "response_len %d", clip, clip * rmax, rmax, rlen)
  elseif clip and clip * rmax > rlen - (1 - clip) then
    usage("rl: response_clip %g puts %g tokens a response at response_max %d, leaving the "
      .. "responses that end a mean under one token (response_len %d)", clip, clip * rmax,
      rmax, rlen)
  end
  return prompts, group, plen, rlen, rmax, dist, clip or 0
end

-- The two pools: colocated or not, the rollout's GPUs (auto: searched)
-- and the staleness between them.
local function pools_of(o, gpus, offload)
  local colocated = boolean("colocated", o.colocated)
  local rgpus, auto = o.rollout_gpus, false
  if rgpus == "auto" then
    auto = true
  elseif rgpus ~= nil then
    rgpus = posint("rollout_gpus", rgpus)
    if rgpus >= gpus then
      usage("rl: rollout_gpus %d leaves none of the %d GPUs to train", rgpus, gpus)
    end
  end
  if colocated == nil then colocated = rgpus == nil end
  if colocated and rgpus ~= nil then
    usage("rl: rollout_gpus gives the rollout its own pool; it contradicts colocated = true")
  end
  if not colocated and rgpus == nil then auto = true end
  local staleness = o.staleness
  if staleness ~= nil and (type(staleness) ~= "number" or staleness ~= math.floor(staleness)
                           or staleness < 0 or staleness > 1024) then
    fail("rl: staleness must be a whole number 0..1024 (got %s)", shown(staleness))
  end
  if colocated and staleness ~= nil then
    usage("rl: staleness applies to separate pools (colocated = false)")
  end
  if colocated and auto then usage("rl: rollout_gpus = auto needs colocated = false") end
  if not colocated and offload then
    usage("rl: offload_states applies to one colocated pool")
  end
  if staleness == nil then staleness = 1 end
  return colocated, rgpus, auto, staleness
end

-- The steps the engines run ahead (the rollout's window, engine/rl.h
-- staleness): staleness, or 1 when each refit first waits for every
-- pending generation.  NeMo RL's prepare_for_refit (async_utils.py at
-- v0.6.0) skips that wait only with the async engine and
-- in_flight_weight_updates ("Ongoing generations will continue with their
-- current KV caches"); otherwise "Non-async engine: waiting for all pending
-- generations to complete", so after each refit the collector starts one
-- step's batch (the targets up to v + k already generated) and the next
-- refit waits for it to drain: the one-step-off schedule whatever k is,
-- each step's batch draining alone.  One step off, refits that do not
-- wait let the next step's prompt groups in under the step's tail
-- (engine/rollout.c roll_inflight); refit_drain prices the wait there too.
local function window_of(o, colocated, staleness)
  local drain = boolean("refit_drain", o.refit_drain, false)
  if drain and (colocated or staleness < 1) then
    usage("rl: refit_drain applies to separate pools at staleness >= 1 (got %s): the "
      .. "pools take turns there, with no generation pending at a refit",
      colocated and "colocated" or "staleness " .. staleness)
  end
  return drain and 1 or staleness, drain
end

-- The rollout engine: vLLM (continuous batching; SGLang's is alike),
-- DeepSpeed-Chat's hybrid engine (the actor's weights in DeepSpeed's
-- inference kernels, Hugging Face generate in static batches of
-- generation_batch sequences per GPU: rollout.c roll_static) or hf
-- (Hugging Face generate on the actor's eager modules, the same static
-- batches: OpenRLHF without vLLM, M.HF_LLAMA_LAYER_OPS).  The second
-- result is true for both static engines, the third is hf's.
-- generation_batch with vLLM's engine: OpenRLHF's vLLM engines of 2024
-- (v0.2-v0.3, RemoteExperienceMaker._generate_vllm: each actor rank sends
-- its micro_rollout_batch_size prompts to engine rank % vllm_num_engines,
-- a Ray actor whose generate calls run one at a time, and waits for the
-- answers): static batches of that many sequences an engine, each round
-- ended by its own batch's longest (engine_static_own); without it
-- vLLM batches every prompt of the step continuously.
-- The host time of one gc.collect() and of one torch.cuda.empty_cache()
-- (the release and the re-allocation it forces on the next pass), on an
-- x86 host: a training loop that called both once a step took 108 s for
-- 250 steps with them, 65 s without gc.collect() and 45 s without either
-- (huggingface/peft PR #2894, "ENH: Improve MetaMath training script
-- runtime"): (108 - 65) / 250 = 0.172 s and (65 - 45) / 250 = 0.080 s.
-- A lower bound for a process holding more Python objects and more
-- memory than that script (Megatron-LM PR #5678: an empty_cache() in its
-- checkpoint save "took multiple seconds").
M.GC_COLLECT = (108 - 65) / 250
M.EMPTY_CACHE = (65 - 45) / 250

M.GENERATION_BATCH = 16   -- DeepSpeed-Chat step 3's per_device_generation_batch_size
local function engine_of(o, dflt)
  local e = o.rollout_engine
  if e ~= nil and e ~= "vllm" and e ~= "hybrid" and e ~= "hf" then
    -- an unknown name: a usage error (exit 2), as --runtime's is
    usage("rl: rollout_engine must be vllm, hybrid or hf (got %s)", shown(e))
  end
  local hybrid = e == "hybrid" or e == "hf"
  local gb = posint("generation_batch", o.generation_batch)
  if hybrid and not gb then
    gb = M.GENERATION_BATCH
    dflt(string.format("generation_batch=%d (DeepSpeed-Chat's per_device_generation_batch_"
      .. "size)", gb))
  end
  return hybrid, gb, e == "hf"
end

-- A critic or reward model of its own shape (DeepSpeed-Chat: OPT-350M
-- beside an OPT-1.3B..66B actor): a catalog model id or a catalog-shaped
-- table, as model is; nil: the actor's.
local function own_model(name, v, cat)
  if type(v) == "table" then
    -- read now as the engine reads it (core.model: lgp_tomodel, the reader
    -- of the critic_model and reward_shape the step is handed), so that a
    -- field it refuses is named under this key: the step's own read said
    -- "rl: model.hidden is required" and "rl: model: unknown field" of a
    -- reward_model or critic_model table, as if the actor's were wrong
    if name ~= "model" then
      local ok, e = pcall(require("gpuplan.core").model, v)
      if not ok then
        fail("rl: %s", (require("gpuplan.cli").clean(e):gsub("^[^\n]-:%d+: ", "", 1)
          :gsub("^model([.:])", name .. "%1", 1)))
      end
    end
    return v
  end
  if type(v) ~= "string" then
    fail("rl: %s must be a catalog model id or a model table (got %s)", name, shown(v))
  end
  cat = cat or require("gpuplan").catalog()
  local ok, m = pcall(cat.get, cat, "models", v)
  -- the catalog's message, without the position it was raised at
  if not ok then fail("rl: %s: %s", name, (tostring(m):gsub("^[^\n]-:%d+: ", ""))) end
  return m
end

-- The reward model and the critic: whether there is a reward model, and
-- the reward model's and the critic's own models (nil: the actor's
-- shape).  reward_model: true or "actor" for the actor's shape, false for
-- rule-based rewards, else a model of its own.
local function models_of(o, ppo)
  local rv, reward, rshape = o.reward_model, false, nil
  if rv == true or rv == "actor" then
    reward = true
  elseif rv ~= nil and rv ~= false then
    reward, rshape = true, own_model("reward_model", rv, o.cat)
  end
  local cshape
  if o.critic_model ~= nil then
    if not ppo then usage("rl: critic_model is PPO's critic (algo = ppo)") end
    cshape = own_model("critic_model", o.critic_model, o.cat)
  end
  return reward, rshape, cshape
end

-- PPO's other models on GPU groups of their own (OpenRLHF's Ray placement:
-- --ref_num_gpus_per_node, --reward_num_gpus_per_node,
-- --critic_num_gpus_per_node, --colocate_critic_reward): their GPUs come out
-- of the job's, the rest are the actor's (and the rollout's).
local function groups_of(o, gpus, ppo, ref, reward, ref_host)
  local g = { ref = posint("ref_gpus", o.ref_gpus), reward = posint("reward_gpus", o.reward_gpus),
              critic = posint("critic_gpus", o.critic_gpus) }
  local cr = boolean("colocate_critic_reward", o.colocate_critic_reward, false)
  if g.critic and not ppo then
    usage("rl: critic_gpus is the critic's own group; the critic is PPO's (algo = ppo)")
  end
  if g.reward and not reward then
    usage("rl: reward_gpus is the reward model's own group; give reward_model")
  end
  if g.ref and (not ref or ref_host) then
    usage("rl: ref_gpus is the reference's own group; it needs ref_model on the GPUs "
      .. "(not ref_host)")
  end
  if cr and not (g.critic and reward) then
    usage("rl: colocate_critic_reward puts the reward model on the critic's group: it "
      .. "needs critic_gpus and reward_model")
  end
  if cr and g.reward then
    usage("rl: colocate_critic_reward and reward_gpus both place the reward model")
  end
  local n = (g.ref or 0) + (g.reward or 0) + (g.critic or 0)
  if n >= gpus then
    usage("rl: the models' own groups (%d GPUs) leave none of the %d GPUs to the actor", n,
      gpus)
  end
  return g, cr, gpus - n
end

-- The actor's parallelism, micro-batch and mini-batch, checked against
-- the training pool and the samples.
local function batches_of(o, gpus, colocated, rgpus, auto, samples)
  local tp, pp, cp = posint("tp", o.tp) or 1, posint("pp", o.pp) or 1, posint("cp", o.cp) or 1
  -- Ulysses splits the sequence as CP does (gpuplan.memory ulysses): the
  -- trainer's data parallelism is what the sequence groups leave
  local usp = posint("ulysses", o.ulysses) or 1
  local cpn = usp > 1 and "ulysses" or "cp"
  if usp > 1 then cp = usp end
  local unit = tp * pp * cp
  local tgpus = colocated and gpus or (auto and unit or gpus - rgpus)
  if tgpus % unit ~= 0 then
    -- colocated, the training GPUs are the job's: named as gp.train names
    -- them ("the 1 training GPUs are not ..." at the default gpus 1)
    if colocated then
      usage("rl: gpus %d is not a multiple of tp*pp*%s = %d", tgpus, cpn, unit)
    end
    usage("rl: the %d training GPU%s (the job's less the rollout pool's) %s not a multiple of "
      .. "tp*pp*%s = %d",
      tgpus, tgpus == 1 and "" or "s", tgpus == 1 and "is" or "are", cpn, unit)
  end
  local mbs = posint("batch", o.batch or o.micro_batch) or 1
  local minib = posint("global_batch", o.global_batch) or samples
  if samples % minib ~= 0 then
    usage("rl: the %d samples (prompts x group) are not a whole number of mini-batches of %d "
      .. "(global_batch)", samples, minib)
  end
  if not auto then
    local dp = tgpus // unit
    if minib % (dp * mbs) ~= 0 or samples % (dp * mbs) ~= 0 then
      -- Without a global_batch the mini-batch is the samples: name only
      -- what the user gave ("--global-batch 1" for --prompts 1 --group 1
      -- named an option the command line never had).
      if o.global_batch == nil then
        usage("rl: the %d samples (prompts x group) must be a multiple of dp x batch = %d x %d",
          samples, dp, mbs)
      end
      usage("rl: global_batch %d and the %d samples must be multiples of dp x batch = %d x %d",
        minib, samples, dp, mbs)
    end
  end
  return tp, pp, cp, unit, tgpus, minib
end

-- The actor's training step (gp.train's setup) on the training pool.
local function actor_setup(o, method, tgpus, seq, minib, defaults, stack, zero)
  local ot = {}
  for k, v in pairs(o) do
    if not M.OPTIONS[k] and k ~= "steps" then ot[k] = v end
  end
  if stack then ot.stack = stack end
  if zero then ot.zero = zero end
  ot.method = method
  ot.gpus = tgpus
  -- The trainer's sequence and mini-batch come from the RL options: past
  -- the engine's bounds they are refused under the names the user gave
  -- (train refused "seq ..." and "global_batch ...", options gp.rl takes
  -- no seq and the user may not have given).
  if seq > options.TOKENS_MAX then
    fail("rl: prompt_len + response_len = %d tokens is past a sequence's %d", seq,
      options.TOKENS_MAX)
  end
  if o.global_batch == nil and minib > options.COUNT_MAX then
    fail("rl: prompts x group = %d samples is past a step's %d", minib, options.COUNT_MAX)
  end
  ot.seq = seq
  ot.global_batch = minib
  -- rl's epochs are passes over a step's samples (gp.rl prices them
  -- itself), not train's epochs over a dataset's samples (tokens_total)
  ot.epochs = nil
  -- rl's ema is the actor's 16-bit average (a flag, priced here: rl_ema),
  -- not train's fp32 one (none, gpu or cpu) that shares its name
  ot.ema = nil
  -- A hybrid stack (hybrid_pattern) is refused by rl itself (engine/
  -- model.c model_check_priced: its rollouts' serving state is not
  -- priced); the trainer's refusal of its stack's eager-kernel default
  -- came first and advised a stack megatron that rl would then refuse.
  if o.kernels == nil then
    local okm, m = pcall(own_model, "model", o.model, o.cat)
    if okm and type(m) == "table" and m.hybrid_pattern then ot.kernels = "fused" end
  end
  local oks, s = pcall(train.setup, ot)
  if not oks then
    local msg = internal(s):gsub("^train: ", "")
    error("rl: " .. msg, 0)
  end
  for _, d in ipairs(s.defaults) do defaults[#defaults + 1] = d end
  return s
end

-- The rollout engine (gp.infer's setup): its tp, weights and config.
-- vLLM without CUDA graphs (enforce_eager = true; verl's rollout default
-- until its config of 2025-08-08, commit ff6978c): the host dispatches
-- every op of a decode step from Python, GP_EAGER_OP_TIME each (infer's
-- eager runtime: the slower of the host and the GPU sets the step).  An
-- op is what GP_EAGER_OP_TIME counts: a call that launches a kernel
-- (views, splits and slices launch none).  The ops of one decoder layer,
-- counted in vLLM's code of 2025 (vllm/model_executor/models/llama.py,
-- deepseek_v2.py, layers/rotary_embedding.py at 0042be24,
-- layers/fused_moe/fused_moe.py at 000d1458 and moe_align_block_size.py
-- at 05be9924, v1/attention/backends/mla/common.py and flashmla.py):
--  * attention with grouped KV 6: the fused add-RMSNorm, qkv_proj, the
--    rotary kernel (RotaryEmbedding.forward_cuda), the KV cache write,
--    the attention kernel, o_proj; with QK-norm 2 more (vLLM's qwen3.py
--    Qwen3Attention: "q_by_head = self.q_norm(q_by_head)" and
--    "k_by_head = self.k_norm(k_by_head)", an RMSNorm kernel each);
--  * MLA 29: the norm; q_a_proj, q_a_layernorm, q_b_proj (one q_proj
--    without a q LoRA: 2 fewer), kv_a_proj_with_mqa, the
--    kv_c.contiguous() copy and kv_a_layernorm; the YaRN rotary,
--    DeepseekScalingRotaryEmbedding.forward ("PyTorch-native"): the
--    cos_sin_cache index, two repeat_interleave, and for q and k each
--    "x * cos + rotate_fn(x) * sin" with _rotate_gptj's negation and
--    torch.stack, 5, -- 13; its write into q ("q[...,
--    self.qk_nope_head_dim:], k_pe = self.rotary_emb(...)"); the
--    backend's concat_and_cache_mla, "torch.bmm(decode_q_nope,
--    self.W_UK_T)", FlashMLA's "torch.cat([q_nope, q_pe], dim=-1)" and
--    flash_mla_with_kvcache, the W_UV bmm and its reshape copy, the
--    "output[:num_decode_tokens] = ..." copy; o_proj;
--  * a dense MLP 4: the norm, gate_up_proj, SiluAndMul, down_proj;
--  * a MoE MLP 13: the norm, the router GEMM, fused_topk 4
--    ("gating_output.float()", ops.topk_softmax and the renormalisation's
--    sum and division, as Qwen3-MoE and Mixtral renormalise), the Triton
--    fused_experts 7 (moe_align_block_size's fill_, its zeros and the
--    align kernel; the two fused_moe_kernel launches, silu_and_mul,
--    moe_sum); DeepseekV2MoE (the MLA models') routes by grouped_topk
--    instead, torch.compile'd since vLLM PR #12637 ("Apply torch.compile
--    to fused_moe/grouped_topk", merged 2025-02-01, before the vLLM 0.8.5
--    of verl's DeepSeek image): three torch.topk calls and
--    the five fused kernels between them (sigmoid and bias; the group
--    sum; zeros_like and scatter_; the mask and masked_fill; the gather,
--    renormalisation and casts), 8, and multiplies by
--    routed_scaling_factor, 1; shared experts 4 more (gate_up, act, down,
--    the add), and a shared expert's sigmoid gate (moe.shared_expert_gate,
--    Qwen2-MoE) 3 more: the gate's GEMV, F.sigmoid and the multiply
--    (engine/model.h model_shared_gate_ops, core.SHARED_GATE_OPS);
--  * 2 TP all-reduces when the engine's TP > 1.  Averaged over the layers.
-- DeepSeek-V3 at TP 32: 29 + 2 + (3 x 4 + 58 x 22) / 61 = 52.1 ops a
-- layer, 79 ms of host a decode step.  Cross-check: vLLM PR #12036
-- (2025-01) measured DeepSeek-V3 (W4A16, 8 A100s, batch 1) decoding "from
-- 5 tokens/s to 10 tokens/s" with CUDA graphs: 200 ms a step eager
-- against 100 ms replayed, so the host's dispatch is at least 100 ms
-- there; the count stays below it (a module-level count, 26.6 ops a
-- layer, gave 41 ms).
-- fused: vLLM's fused grouped top-k (rollout_fused_grouped_topk) routes
-- the MLA models' MoE layers in 1 launch instead of the 8 + 1;
-- fused_softmax: its fused topk_softmax (rollout_fused_topk_softmax) the
-- others' in 1 instead of 4.
function M.eager_ops_per_layer(model, rtp, fused, fused_softmax)
  local ar = rtp > 1 and 2 or 0
  local a, moe, L = model.mla, model.moe, model.layers
  local attn = a and (29 - ((a.q_lora_rank or 0) > 0 and 0 or 2)) or
    (6 + (model.qk_norm and 2 or 0))
  if not moe then return attn + 4 + ar end
  local dense = L - require("gpuplan.schema").moe_layers(model)
  local moe_mlp = 1 + 1 + (a and (fused and 1 or 8 + 1) or (fused_softmax and 1 or 4)) + 7
    + ((moe.shared_experts or 0) > 0 and 4 or 0)
    + ((moe.shared_experts or 0) > 0 and moe.shared_expert_gate and core().SHARED_GATE_OPS or 0)
  return attn + ar + (dense * 4 + (L - dense) * moe_mlp) / L
end

-- NeMo RL's refit exports the Megatron weights one Hugging Face tensor at
-- a time (Megatron-Bridge's export_hf_weights: every trainer rank
-- converts each tensor, the engines load each; NeMo RL r0.5.0
-- megatron_policy_worker.py _iter_params_with_optional_kv_scales, for
-- the colocated IPC stream and the separate pools' broadcast alike).
-- NeMo RL PR #1379 ("Overlap param iteration and broadcast in
-- non-colocated refit") measured DeepSeek-V3's whole refit at 14 s,
-- taken here as its performance recipe's layout
-- (grpo-deepseek-v3-64n8g-async-1off: PP16, EP16, 256 trainer and 256
-- rollout H100s, rollout TP32; the PR does not name it), whose
-- transfers gp.rl prices at 9.6900 s (rl_weight_sync): the rest, 4.3100
-- s over DeepSeek-V3's 45,337 tensors (M.weight_tensors), is 0.0951 ms
-- a tensor, the host's work per tensor on an x86 server.  Cross-check:
-- the same PR's Qwen3-235B refit, 5.5 s measured, prices at 3.3283 s of
-- transfers + 36,945 x 0.0951 ms = 6.84 s (grpo-qwen3-235b-32n8g-async-
-- 1off's layout assumed: TP4 PP8 EP16, 128 + 128 H100s, rollout TP8).
-- A second, independent measurement: NeMo RL's checkpoint-engine refit
-- guide (PR #2608) times DeepSeek-V3's refit on the NCCL collective
-- update path from TP1/PP16/EP16 on 256 H100s to one vLLM TP32 engine at
-- 14.21 s; gp.rl prices that layout at 14.00 s (tests/lua/rl_export.t).
-- Its "45,395 destination-local tensors" are these 45,337 and the 58 MoE
-- layers' router bias (e_score_correction_bias), which the model format
-- does not carry: 0.09494 ms a tensor so counted, under 0.1 point on any
-- case (docs/validation.md).
M.NEMO_RL_EXPORT_TENSOR = (14 - 9.6900) / 45337

-- NeMo RL's colocated refit from v0.4.0 streams the whole model through
-- a CUDA-IPC staging buffer, two halves in turn (engine/rl.c
-- rl_ipc_transfers), each hand-off a fixed cost on top of the bytes and
-- the per-tensor export: the sender's stream synchronised, the buffer's
-- IPC handle sent over ZMQ, opened, loaded and acknowledged by the vLLM
-- worker.  NeMo RL PR #1267 (the ZMQ refit, first in v0.4.0), its
-- author in review: "the complete DeepSeek-V3 refitting takes ~35
-- seconds with over 175 distinct IPC transfers".  gp.rl prices the rest
-- of that refit at 10.0898 s (the bytes 5.7798 s and 45,337 x
-- NEMO_RL_EXPORT_TENSOR, grpo-deepseek-v3-32n8g's layout, which the
-- review does not name): (35 - 10.0898) / 175 = 0.1423 s a hand-off.
-- That the hand-offs dominate: NeMo RL PR #638 measured the colocated
-- DeepSeek-V3 refit (then driven by Ray, ~20 s of it the offload) fall
-- from 105 s to 55 s when NRL_REFIT_BUFFER_MEMORY_RATIO went from 10% to
-- 20% -- half the buffers, less than half the time.  gp.rl's own count
-- for that layout is 273 hand-offs at vLLM TP 32 and 167 at TP 64 (the
-- free memory its model leaves beside the training states of a middle
-- stage's 4 MoE layers, the engine holding MLA's down-projections whole),
-- on either side of the review's.
M.NEMO_RL_IPC_TRANSFER = (35 - 10.0898) / 175

-- The weight tensors of a model's Hugging Face checkpoint, what a
-- tensor-by-tensor export hands the rollout engine's load_weights one at
-- a time: per layer the two norms, the attention's q, k, v and o (MLA:
-- q_a, its norm, q_b -- or one q without a q LoRA --, kv_a, its norm,
-- kv_b and o), a dense MLP's gate, up and down (no gate: two), a MoE
-- layer's router, every routed expert's and the shared experts' MLP
-- (one MLP for all the shared ones); the embedding, the final norm and
-- an untied LM head; with QK-norm (qk_norm) the q_norm and k_norm weights
-- of each layer (Qwen3's checkpoints: self_attn.q_norm.weight,
-- self_attn.k_norm.weight).  DeepSeek-V3: 61 x 9 + 3 x 3 + 58 x (1 + 256
-- x 3 + 3) + 3 = 45,337.
function M.weight_tensors(model)
  local mlp = model.ffn_gated == false and 2 or 3
  local a = model.mla
  local attn = a and (((a.q_lora_rank or 0) > 0 and 3 or 1) + 4) or 4
  local moe, L = model.moe, model.layers
  local dense = L - require("gpuplan.schema").moe_layers(model)
  local moe_layer = moe and (1 + moe.experts * mlp + ((moe.shared_experts or 0) > 0 and mlp or 0))
    or 0
  return L * (2 + attn + (model.qk_norm and 2 or 0)) + dense * mlp + (L - dense) * moe_layer + 2
    + (model.tied_embeddings and 0 or 1)
end

-- The parameter tensors of a model's nn.Module, what a loop over
-- model.parameters() visits (DeepSpeed-Chat's utils.moving_average): the
-- checkpoint's weight tensors (M.weight_tensors), a LayerNorm's bias
-- beside each norm's weight (RMSNorm has none), a bias on each linear
-- with linear_bias (on q, k and v with qkv_bias) and a learned position
-- table; a tied head is the embedding's tensor, yielded once.  OPT-1.3B
-- (LayerNorm, linear_bias, learned positions, tied): 24 x (2 x 2 + 4 x 2
-- + 2 x 2) + 1 + 1 + 2 = 388.
function M.param_tensors(model)
  local L = model.layers
  local n = M.weight_tensors(model)
  local norms = 2 * L + 1
  if model.norm == "layer" then n = n + norms end
  if model.linear_bias then
    -- every linear but the embedding and the head: the weight tensors
    -- less the norms and those two (no MLA model has linear biases)
    n = n + (M.weight_tensors(model) - norms - (model.qk_norm and 2 * L or 0) - 1
      - (model.tied_embeddings and 0 or 1))
  elseif model.qkv_bias then
    n = n + 3 * L
  end
  if model.positions == "learned" then n = n + 1 end
  return n
end

-- The refusal of an engine of `gpus` GPUs past a node without NICs, naming
-- the node and what to give, as the actor's (gpuplan.train) and gp.infer's
-- are (comm.no_nics): "the system has no NICs" named neither.
local function no_nics(o, s, gpus, who)
  local comm, train = require "gpuplan.comm", require "gpuplan.train"
  local sys = o.system ~= nil and train.system_of(o.system, s.cat) or train.default_node(s.gpu, s.cat)
  local spec = comm.node_spec(sys, s.gpu, function() end, "rl", o)
  return comm.no_nics(spec, gpus, who, s.cat)
    or string.format("%s spans nodes, but the node has no NICs", who)
end

local function rollout_setup(o, s, tp, dflt, hybrid)
  local gpu, model = s.gpu, s.model
  local rtp = posint("rollout_tp", o.rollout_tp) or tp
  if o.rollout_tp == nil then dflt(string.format("rollout_tp=%d (the actor's tp)", rtp)) end
  local mb_def, mt_def = M.engine_limits(gpu)
  local maxb = posint("max_batch", o.max_batch) or mb_def
  local maxt = posint("max_num_tokens", o.max_num_tokens) or mt_def
  -- Only what was not given is vLLM's default: a stated max_batch is not
  -- reported as the engine's.
  if not hybrid and (o.max_batch == nil or o.max_num_tokens == nil) then
    local d = {}
    if o.max_batch == nil then d[#d + 1] = string.format("max_batch=%d", maxb) end
    if o.max_num_tokens == nil then d[#d + 1] = string.format("max_num_tokens=%d", maxt) end
    dflt(string.format("%s (vLLM's on %s)", table.concat(d, ", "), gpu.id))
  end
  local roll_weights = o.rollout_weights or "bf16"
  if o.kv == nil then dflt("kv=bf16") end
  local eager = boolean("rollout_eager", o.rollout_eager, false)
  if hybrid and eager then
    usage("rl: rollout_eager is vLLM's; the hybrid engine runs DeepSpeed's kernels")
  end
  -- vLLM's fused grouped top-k kernel for the MLA models' routers
  -- (engine/infer.c MOE_FUSED_GROUPED_TOPK_KERNELS).
  local fused_topk = boolean("rollout_fused_grouped_topk", o.rollout_fused_grouped_topk, false)
  if hybrid and fused_topk then
    usage("rl: rollout_fused_grouped_topk is vLLM's routing kernel; the hybrid engine runs "
      .. "DeepSpeed's kernels")
  end
  -- and its topk_softmax with the cast and renormalisation inside, for
  -- the other MoE routers (engine/infer.c MOE_FUSED_TOPK_KERNELS).
  local fused_softmax = boolean("rollout_fused_topk_softmax", o.rollout_fused_topk_softmax,
    false)
  if hybrid and fused_softmax then
    usage("rl: rollout_fused_topk_softmax is vLLM's routing kernel; the hybrid engine runs "
      .. "DeepSpeed's kernels")
  end
  -- Each kernel routes one kind of router (moe_route, eager_ops_per_layer):
  -- asked for on a model without it, it would change nothing, in silence.
  if fused_topk and not (model.moe and model.mla) then
    fail("rl: rollout_fused_grouped_topk given for a model without a grouped-top-k MoE "
      .. "router (the MLA models' MoE layers, DeepSeek's)")
  end
  if fused_softmax and not (model.moe and not model.mla) then
    fail("rl: rollout_fused_topk_softmax given for a model without a softmax top-k MoE "
      .. "router (%s)", model.moe and "its MLA layers route by grouped top-k" or "a dense model")
  end
  local rpp = posint("rollout_pp", o.rollout_pp) or 1
  if hybrid and rpp > 1 then
    usage("rl: rollout_pp is a vLLM or SGLang engine's pipeline stages; the hybrid engine "
      .. "generates with the actor's own layout")
  end
  local infer = require "gpuplan.infer"
  local oki, e, _, rc = pcall(infer.setup, {
    model = model, gpu = gpu, tp = rtp, pp = rpp, gpus = rtp * rpp, weights = roll_weights,
    -- the step sets the engine's lengths (engine/rollout.c): infer's
    -- default 2048 + 256 tokens would refuse a model of 2048 tokens'
    -- context (OPT, DeepSpeed-Chat's) for lengths the step never runs
    input = 1, output = 1,
    -- DeepSpeed's hybrid engine runs its fused inference kernels one
    -- launch each (no CUDA graphs); vLLM captures graphs unless eager.
    kv = o.kv, runtime = hybrid and "kernels" or eager and "eager" or "vllm",
    max_batch = maxb, max_num_tokens = maxt,
    memory = s.p.capacity, system = o.system, cat = o.cat,
    -- the same boards: the job's power limit holds the engine's clock too
    power_limit = o.power_limit,
    host_ops_per_layer = eager and M.eager_ops_per_layer(model, rtp, fused_topk, fused_softmax)
      or nil,
    -- the actor's host: the same CPU launches the engine's ops
    host_op_time = eager and s.cfg.host_op_time or nil,
  })
  if not oki then
    -- the engine's weights are the call's rollout_weights: "rl: rollout:
    -- weights: unknown weight format" named a key gp.rl reads as the
    -- actor's (tests/lua/fuzz_options.t)
    local msg = internal(e):gsub("^infer: ", "")
    msg = msg:gsub("^weights([: ])", "rollout_weights%1", 1)
    -- the engine's memory is the call's capacity (s.p.capacity above):
    -- "rl: rollout: memory 1099.512GB (1024GiB) is more than h100-sxm's
    -- 80GiB" named a key gp.rl does not take
    msg = msg:gsub("^memory ", "capacity ", 1)
    error("rl: rollout: " .. msg, 0)
  end
  -- Eager or not, vLLM's weight-only kernels are its own (marlin).
  rc.gemv_max = infer.gemv_max.vllm
  rc.fused_grouped_topk = fused_topk
  rc.fused_topk_softmax = fused_softmax
  -- vLLM's custom all-reduce within one host, eager or not (SGLang runs
  -- the same kernels; engine/infer.c custom_ar_time), for the GPUs one
  -- host runs; the hybrid engine all-reduces through NCCL, and so does an
  -- engine asked for NCCL (rollout_custom_ar false: verl's).
  rc.custom_ar_gpus = 0
  if not hybrid and rc.topo and o.rollout_custom_ar ~= false then
    local sys = o.system and (type(o.system) == "table" and o.system
      or s.cat:get("systems", o.system)) or nil
    rc.custom_ar_gpus = math.min(infer.custom_ar_gpus("vllm", gpu, sys, s.cat), s.host_gpus)
  end
  -- An engine larger than a node (vLLM / SGLang TP 16-32 over nodes, as
  -- multi-node serving of 405B / 671B models runs): its ranks fill whole
  -- nodes and its TP all-reduces run on the job's topology -- across the
  -- nodes' NICs -- instead of one node's scale-up links.
  -- Expert parallelism in the engine (vLLM's enable_expert_parallel,
  -- SGLang's --ep-size = --tp-size): each routed expert whole on one of
  -- its rollout_tp GPUs, every step the serving model's MoE step (as
  -- gpuplan infer --ep prices one; engine/rollout.c).
  local rep = posint("rollout_ep", o.rollout_ep) or 1
  if rep > 1 then
    if hybrid then
      usage("rl: rollout_ep is the expert parallelism of a vLLM or SGLang engine; the hybrid "
        .. "engine generates with the actor's own layout")
    end
    if not model.moe then fail("rl: rollout_ep %d given for a dense model", rep) end
    if rep ~= rtp then
      usage("rl: rollout_ep %d must equal rollout_tp (%d: each expert whole on one of the "
        .. "engine's GPUs) or be 1 (the experts sliced by its TP)", rep, rtp)
    end
    if model.moe.experts % rep ~= 0 then
      fail("rl: rollout_ep %d does not divide the model's %d experts", rep, model.moe.experts)
    end
    if rpp > 1 then
      usage("rl: rollout_ep %d with rollout_pp %d: an engine with expert parallelism is priced "
        .. "without pipeline stages", rep, rpp)
    end
  end
  -- DP attention (SGLang's --enable-dp-attention) splits the engine's
  -- sequences over its GPUs beside the experts: it needs rollout_ep.
  local rdp = boolean("rollout_dp_attention", o.rollout_dp_attention, false)
  if rdp and rep <= 1 then
    usage("rl: rollout_dp_attention needs rollout_ep = rollout_tp > 1 (the experts over the "
      .. "engine's GPUs)")
  end
  local G = s.topo.gpus_per_node
  -- Pipeline stages beyond a node (TP within it): the engine fills whole
  -- nodes and each stage's activations go to the next over the NICs, at
  -- one NIC's achievable bandwidth (vLLM's PP sends, as Megatron's).
  if rtp <= G and rtp * rpp > G then
    if (rtp * rpp) % G ~= 0 then
      fail("rl: rollout_tp %d x rollout_pp %d = %d GPUs spans nodes of %d GPUs: it must fill "
        .. "whole nodes (a multiple of %d)", rtp, rpp, rtp * rpp, G, G)
    end
    if (s.topo.nics or 0) == 0 then
      fail("%s", no_nics(o, s, rtp * rpp,
        string.format("rl: the rollout engine (rollout_tp %d x rollout_pp %d)", rtp, rpp)))
    end
    rc.p2p_bw = s.topo.nic_bw * (s.topo.nic_achievable or 1)
  end
  if rtp > G then
    if rtp % G ~= 0 then
      fail("rl: rollout_tp %d spans nodes of %d GPUs: it must fill whole nodes (a multiple "
        .. "of %d)", rtp, G, G)
    end
    if (s.topo.nics or 0) == 0 then
      fail("%s", no_nics(o, s, rtp, string.format("rl: the rollout engine (rollout_tp %d)", rtp)))
    end
    local t = {}
    for k, v in pairs(s.topo) do t[k] = v end
    t.nodes = math.max(t.nodes or 1, rtp // G)
    rc.topo = t
  end
  return rtp, roll_weights, rc, rep, rpp, rdp
end

-- Run the engine's step; with recompute = auto the least recomputation
-- that fits.
local function engine_step(model, s, c, dflt)
  local cfg = c.train
  local function run()
    local ok, r = pcall(core().rl, model, s.device, s.topo, c)
    if not ok then error("rl: " .. require("gpuplan.cli").clean(r), 0) end
    return r
  end
  local r
  if cfg.recompute == "auto" then
    for _, rcp in ipairs(require("gpuplan.memory").auto_policies(cfg)) do
      cfg.recompute = rcp
      r = run()
      if r.fits then break end
    end
    dflt(require("gpuplan.memory").auto_said(cfg, r.fits))
  else
    r = run()
  end
  return r
end

-- A rollout that cannot run: no time, throughput or cost, and why.
local function rollout_gone(out, r)
  -- A rollout that cannot run leaves the step without its longest phase:
  -- no time, throughput or cost is an answer then (engine/rl.c: steps 0;
  -- its why says what held the memory).
  out.rollout_fits = r.rollout.steps > 0
  if not out.rollout_fits then
    out.step_s, out.samples_per_s, out.tokens_per_s = nil, nil, nil
    out.tokens_per_s_gpu, out.gen_tokens_per_s = nil, nil
    out.cost_step, out.cost_1k_prompts = nil, nil
  end
end

-- Each phase's time, pool and memory, and the step's peak memory.
local function phases_of(out, r)
  out.phases = {}
  local peak = 0
  for _, ph in ipairs(r.phases) do
    local m = r.memory[ph.memory]
    -- a rollout with no room to run has no time (its engine's 0 is not
    -- "instant"): nil, as step_s is then, never a 0 a script would add up
    local runs = out.rollout_fits or ph.name ~= "rollout"
    out.phases[#out.phases + 1] = { name = ph.name, seconds = runs and ph.seconds or nil, idle = ph.idle,
      gpus = math.tointeger(ph.gpus) or ph.gpus, pool = ph.pool, memory = ph.memory,
      mem_bytes = m.total, mem_gib = gib(m.total),
      share = out.rollout_fits and ph.seconds / r.step or nil }
    if ph.seconds > 0 and m.total > peak then peak = m.total end
  end
  out.peak_memory = peak
end

-- A run of o.steps steps: its seconds, hours and cost.
local function run_steps(out, o, r, cfg)
  if o.steps ~= nil then
    local n = tonumber(o.steps)
    if not n or n ~= n or n <= 0 or n == math.huge then
      fail("rl: steps must be a positive number (got %s)", shown(o.steps))
    end
    out.steps = n
    if out.rollout_fits then
      out.run_s = n * r.step
      out.hours = out.run_s / 3600
      if cfg.price then out.cost = n * r.cost_step end
    end
  end
end

local run

-- The validation options of val_every / val_prompts (the header), checked:
-- every, val_prompts, or nil without validation.  The engine prices the
-- pass itself (engine/rl.c rl_val_pass: the rollout of val_prompts
-- prompts of one answer each -- verl's val_kwargs.n=1 -- over the step's
-- engines, and the step's weight sync); it trains nothing, so the
-- training side's batch checks are not its own.
local function validation(o)
  if o.val_every == nil and o.val_prompts == nil then
    if o.val_batch ~= nil then
      usage("rl: val_batch is the validation pass's batch of prompts: it needs val_every and "
        .. "val_prompts")
    end
    return nil
  end
  local every, vp = posint("val_every", o.val_every), posint("val_prompts", o.val_prompts)
  if not (every and vp) then
    usage("rl: val_every and val_prompts come together (a validation pass of val_prompts "
      .. "prompts every val_every steps); got only %s", every and "val_every" or "val_prompts")
  end
  return every, vp, posint("val_batch", o.val_batch)
end

-- PPO's critic cutting its own micro-batches (the header): by sequences
-- (critic_batch) or by real tokens (critic_token_batch), a whole number,
-- PPO's only.
local function critic_cut_of(o, ppo, name)
  local n = posint(name, o[name])
  if n and not ppo then
    usage("rl: %s is PPO's critic's micro-batch (algo = ppo)", name)
  end
  -- The engine cuts the critic's own micro-batches on the actor's GPUs
  -- only (engine/rl.c: a critic on a group of its own is priced by that
  -- group's passes); given with critic_gpus it changed nothing, in
  -- silence.
  if n and o.critic_gpus ~= nil then
    usage("rl: %s prices the critic's micro-batches on the actor's GPUs; with "
      .. "critic_gpus (the critic on a group of its own) it is not priced: give one of them", name)
  end
  return n
end

-- The validation phase on the engine's step r: its seconds added to the
-- step, the throughputs and costs of the longer step (engine/rl_sched.c
-- rl_rates: each over the step's seconds).
local function add_validation(r, val)
  -- on the rollout's GPUs, pool and memory
  local ro
  for _, ph in ipairs(r.phases) do if ph.name == "rollout" then ro = ph end end
  r.phases[#r.phases + 1] = { name = "validation", seconds = val.step_s, idle = 0,
    gpus = ro.gpus, pool = ro.pool, memory = ro.memory }
  local f = r.step / (r.step + val.step_s)
  r.step = r.step + val.step_s
  for _, k in ipairs { "samples_per_s", "tokens_per_s", "tokens_per_s_gpu", "gen_tokens_per_s" } do
    if r[k] then r[k] = r[k] * f end
  end
  for _, k in ipairs { "cost_step", "cost_1k_prompts" } do
    if r[k] then r[k] = r[k] / f end
  end
end

-- gp.rl{...}: see the header.
function M.rl(o)
  local ok, r = pcall(run, o)
  if not ok then error(internal(r), 2) end
  return r
end

-- gp.rl_job{...}: gp.rl's job resolved once -- the model, the card, the
-- node, the rollout engine and every default -- for a loop that prices
-- the actor's layouts, as gp.train_job is gp.train's:
--   local job = gp.rl_job{ model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 16,
--                          prompts = 64, group = 8, response_len = 2048 }
--   local r = job:step{ tp = 2, zero = 3, batch = 2, recompute = "full" }
--   if r.fits then print(r.step_s, r.samples_per_s, r.peak_memory) end
-- job:step takes the actor's layout under gp.rl's names (tp, pp, cp, ep,
-- etp, vpp, zero, sp, batch, recompute, recompute_layers, fsdp -- a
-- strategy name or a boolean, as gp.rl's -- the overlaps),
-- global_batch (samples per optimizer step) and rollout_tp (default: the
-- job's, or the step's tp when the job gives none, as gp.rl's); what it
-- does not give is the job's (recompute = "auto" in the job: "none"); a
-- zero without fsdp is checked against the job's fsdp, as gp.rl with both.  dp
-- follows from the training pool's GPUs.  job:step(layout, r) refills r.
-- The result has gp.rl's fits, why, rollout_fits, step_s, samples_per_s,
-- tokens_per_s, tokens_per_s_gpu, gen_tokens_per_s, cost_step,
-- cost_1k_prompts, gpus and peak_memory as fields, and r:table() gives
-- everything core.rl returns.  The job keeps a memo (engine/rl.h
-- rl_cache): the training passes' layer costs and the rollouts already
-- priced, which layouts that leave the rollout the same memory share.
-- rollout_gpus = "auto" (a search of the split) is gp.rl's alone.
function M.rl_job(o)
  local ok, j = pcall(run, o, true)
  if not ok then error(internal(j), 2) end
  return j
end

-- The job of a prepared step (core.rl_job).
local function job_of(o, model, s, c, follow_tp)
  if c.split_gpus then
    usage("rl_job: rollout_gpus = auto searches the split; a job prices given pools")
  end
  if c.train.recompute == "auto" then c.train.recompute = "none" end
  -- A step may give the engine a TP the job's has not: its all-reduces
  -- need the node's scale-up topology, which gp.infer's setup attaches
  -- only to engines of more than one GPU (and rollout_setup replaces by
  -- the job's for an engine beyond a node, which the step then takes
  -- itself: lgp_rl.c).
  if not c.rollout.topo or c.rollout.tp > s.topo.gpus_per_node then
    local o2 = {}
    for k, v in pairs(o) do o2[k] = v end
    o2.rollout_tp, o2.rollout_ep, o2.rollout_dp_attention = 2, nil, nil
    local _, _, rc2 = rollout_setup(o2, s, 2, function() end)
    c.rollout.topo, c.rollout.p2p_bw = rc2.topo, rc2.p2p_bw
    -- and the host's custom all-reduce, which a step's TP within it uses
    c.rollout.custom_ar_gpus = rc2.custom_ar_gpus
  end
  local h = core()
  -- the zero_group itself: each step's groups from its own layout
  -- (engine lgp_job_zero_group)
  local ok, j = pcall(h.rl_job, h.model(model), h.device(s.device), h.topology(s.topo), c,
    follow_tp, s.fusion, s.refusal, s.sharding, o.zero_group, s.stage_list)
  if not ok then error("rl_job: " .. require("gpuplan.cli").clean(j), 0) end
  return j
end

-- The step's switches and host terms from o (dflt: the "defaults
-- assumed" line): ref, old_logprobs, offload_states, param_offload,
-- ref_host, pad, the engine (hybrid, its batch), async scheduling, the
-- step overhead, packing, the loss ops, the token host time and the
-- dynamic-sampling share, each checked with the others it depends on.
local function step_flags(o, dflt)
  local ref = boolean("ref_model", o.ref_model, true)
  local oldlp = boolean("old_logprobs", o.old_logprobs, true)
  local offload = boolean("offload_states", o.offload_states, false)
  local param_offload = boolean("param_offload", o.param_offload, false)
  local ref_host = boolean("ref_host", o.ref_host, false)
  if ref_host and not ref then usage("rl: ref_host keeps the reference in host memory; ref_model is false") end
  local pad = boolean("pad", o.pad, false)
  local hybrid, gen_batch = engine_of(o, dflt)
  local async = boolean("async_scheduling", o.async_scheduling, false)
  if hybrid and o.async_scheduling ~= nil then
    usage("rl: async_scheduling is vLLM's; the hybrid engine generates with Hugging Face's "
      .. "generate")
  end
  if o.async_scheduling == nil and not hybrid then
    dflt(string.format("async_scheduling=false (vLLM's default before v0.14.0, and later where "
      .. "the engine turns it off, as under Ray's executor: its host work, %.2f ms a "
      .. "decode step and %.1f us per sequence, adds to the step)", M.ENGINE_HOST.step * 1e3,
      M.ENGINE_HOST.seq * 1e6))
  end
  local xhost = bounded("engine_xhost_step", o.engine_xhost_step, 1,
    "seconds per decode step, 0 to 1")
  if hybrid and xhost ~= nil then
    usage("rl: engine_xhost_step is a vLLM or SGLang engine's executor; the hybrid engine "
      .. "generates within the actor's processes")
  end
  local overhead = bounded("step_overhead", o.step_overhead, 1e6,
    "seconds per step, 0 to 1000000")
  -- A whole number of tokens 0..2^24: its declaration's kind and range
  -- (gpuplan.options), checked when the job's options were resolved.
  local pack = o.pack_tokens
  if pack and pack > 0 and pad then
    usage("rl: pack_tokens packs sequences to their lengths; pad = true pads them to the limit")
  end
  local lp_pack = o.logprob_pack_tokens
  if lp_pack and lp_pack > 0 and not (pack and pack > 0) then
    usage("rl: logprob_pack_tokens sizes the packed log-probability forwards; give "
      .. "pack_tokens too")
  end
  -- Whole numbers of ops 0..1e6: their declarations' type and range
  -- (gpuplan.options), checked when the job's options were resolved (a
  -- fraction of an op was priced as one).
  local loss_ops, gae_ops = o.loss_ops, o.gae_ops
  if gae_ops and gae_ops > 0 and (o.algo or "grpo") ~= "ppo" then
    usage("rl: gae_ops is PPO's advantage estimate (GAE over the critic's values); algo = %s "
      .. "has no value function", tostring(o.algo or "grpo"))
  end
  local token_host = bounded("token_host", o.token_host, 1,
    "seconds per generated token, 0 to 1")
  -- vLLM's own host work per sequence per decode step: the hybrid engine
  -- generates with Hugging Face's generate, which has neither part.
  local function vllm_host(key, whose)
    local v = bounded(key, o[key], 1, "seconds per sequence per decode step, 0 to 1")
    if hybrid and v then
      usage("rl: %s is vLLM's %s; the hybrid engine generates with Hugging Face's generate",
        key, whose)
    end
    return v
  end
  local frontend = vllm_host("frontend_host", "in-process frontend")
  -- The engine's vLLM release and its V0 engine (M.v0_outputs): V0's
  -- output processing between two decode steps is its frontend_host
  -- unless one is given.
  local ver = o.vllm_version
  if ver ~= nil and not (type(ver) == "string"
      and require("gpuplan.version").plain(ver)) then
    usage("rl: vllm_version %s: not a vLLM release written plain, X.Y or X.Y.Z as 0.4.2 "
      .. "(no tag's v, rc or suffix)", ver == "" and "''"
      or type(ver) == "string" and ver or shown(ver))
  end
  boolean("vllm_v0", o.vllm_v0, false)
  if hybrid and (ver ~= nil or o.vllm_v0 ~= nil) then
    usage("rl: %s is vLLM's; the hybrid engine generates with Hugging Face's generate",
      ver ~= nil and "vllm_version" or "vllm_v0")
  end
  if not hybrid then
    local v0, why = M.v0_outputs(o)
    if v0 == nil then usage("%s", why) end
    if v0 and frontend == nil then
      frontend = M.ENGINE_V0_OUTPUT
      dflt(string.format("frontend_host=%.4g (%s)", frontend, why))
    end
  end
  local logprob = vllm_host("logprob_host", "engine core's")
  local sync_tensor = bounded("sync_tensor_time", o.sync_tensor_time, 1,
    "seconds per weight tensor, 0 to 1")
  local keep = o.filter_keep
  if keep ~= nil and (type(keep) ~= "number" or not (keep > 0 and keep <= 1)) then
    fail("rl: filter_keep must be the kept share of the generated groups, in (0, 1] (got %s)",
      shown(keep))
  end
  return ref, oldlp, offload, param_offload, ref_host, pad, hybrid, gen_batch, async,
    overhead, pack, loss_ops, token_host, keep, sync_tensor, lp_pack, gae_ops, frontend, xhost,
    logprob
end

run = function(o, job)
  check_options(o)
  local defaults = {}
  local function dflt(s) defaults[#defaults + 1] = s end
  local algo, method = algo_method(o, dflt)
  local fbs = o.fwd_bwd_scale
  if fbs ~= nil and (type(fbs) ~= "number" or not (fbs >= 1 and fbs <= 10)) then
    fail("rl: fwd_bwd_scale must be the passes' compute multiple, 1 to 10 (got %s)", shown(fbs))
  end
  local prompts, group, plen, rlen, rmax, dist, clip = lengths(o, dflt)
  local samples = prompts * group
  local ppo = algo == "ppo"
  local reward, reward_shape, critic_shape = models_of(o, ppo)
  local ref, oldlp, offload, param_offload, ref_host, pad, hybrid, gen_batch, async,
    overhead, pack, loss_ops, token_host, keep, sync_tensor, lp_pack, gae_ops, frontend, xhost,
    logprob = step_flags(o, dflt)
  -- rollout_engine hf: generate on the actor's Hugging Face modules, whose
  -- ops M.HF_LLAMA_LAYER_OPS counts for a Llama decoder layer (RMSNorm,
  -- rotary, SwiGLU) only
  local hf = o.rollout_engine == "hf"
  local epochs = posint("epochs", o.epochs) or 1
  local grp, critic_reward, gpus = groups_of(o, posint("gpus", o.gpus) or 1, ppo, ref, reward,
    ref_host)
  local colocated, rgpus, auto, staleness = pools_of(o, gpus, offload)
  -- The split search (engine split_gpus) sizes the training pool itself
  -- and places no shard groups in it: a zero_group was checked against a
  -- pool of one layout's GPUs ("must divide the data-parallel group dp x
  -- cp = 1", a dp no one chose).
  if auto and o.zero_group ~= nil then
    usage("rl: zero_group shards within the training pool, which the split search sizes "
      .. "(rollout_gpus = auto, the default of separate pools): give rollout_gpus = N")
  end
  local window, refit_drain = window_of(o, colocated, staleness)
  local lp_offload = boolean("logprob_offload", o.logprob_offload, false)
  if lp_offload and colocated then
    usage("rl: logprob_offload is a training pool's of its own; colocated, offload_states "
      .. "parks the states for the rollout")
  end
  if param_offload and not colocated then
    usage("rl: param_offload applies to one colocated pool")
  end
  local pinned = boolean("offload_pinned", o.offload_pinned, false)
  if pinned and not (colocated and (offload or param_offload)) then
    usage("rl: offload_pinned says how a colocated pool's offload_states or param_offload "
      .. "copies out; give one of them")
  end
  local ipc = bounded("ipc_transfer", o.ipc_transfer, 60, "seconds per hand-off, 0 to 60")
  if ipc and ipc > 0 and not colocated then
    usage("rl: ipc_transfer is a colocated weight sync's (the engines on the trainer's GPUs); "
      .. "separate pools broadcast the weights")
  end
  if ipc and ipc > 0 and hybrid then
    usage("rl: ipc_transfer hands vLLM's workers the weights; the hybrid engine generates with "
      .. "the actor's own")
  end
  local tp, pp, cp, unit, tgpus, minib =
    batches_of(o, gpus, colocated, rgpus, auto, samples)
  -- The trainer's sequence in whole tokens (a stated range's middle may
  -- fall on a half).
  -- DeepSpeed's hybrid engine is a DeepSpeed engine's (deepspeed.initialize
  -- with "hybrid_engine": {"enabled": true}, DeepSpeed-Chat's
  -- rlhf_engine.py): the actor trains under DeepSpeed ZeRO, stack
  -- deepspeed where none is given (the default stack, hf, priced it as
  -- PyTorch FSDP), and no other.
  local stack
  if hybrid and not hf then
    if o.stack == nil then
      stack = "deepspeed"
      dflt("stack=deepspeed (rollout_engine hybrid is DeepSpeed's hybrid engine)")
    elseif o.stack ~= "deepspeed" then
      usage("rl: rollout_engine = hybrid is DeepSpeed's hybrid engine, whose actor trains "
        .. "under DeepSpeed ZeRO: stack = %s is not it (give stack = deepspeed, or none)",
        tostring(o.stack))
    end
  end
  -- The actor's ZeRO stage where none is given: the stack's RL
  -- framework's own default (options.lua zero: verl's FSDP full_shard on
  -- hf, OpenRLHF's ZeRO-2 on deepspeed, the distributed optimizer on
  -- megatron), not gp.train's DDP.  Hugging Face generate on the actor's
  -- modules is OpenRLHF's rollout without vLLM engines, under DeepSpeed:
  -- its --ds.zero_stage default 2 (openrlhf/cli/train_ppo_ray.py), which
  -- that engine takes (ZeRO-3 is refused below).
  local zero
  if tgpus and o.zero == nil and o.fsdp == nil and tgpus % (tp * pp * cp) == 0 then
    local dp = tgpus // (tp * pp * cp)
    local text
    if hf and dp > 1 then
      zero, text = 2, "zero=2 (rollout_engine hf: OpenRLHF without vLLM engines, its "
        .. "--ds.zero_stage default)"
    else
      zero, text = options.default("zero", { kind = "rl", dp = dp,
        stack = stack or memory.stack_of(o, method) })
    end
    dflt(text)
  end
    local s = actor_setup(o, method, tgpus,
    plen + (pad and (rmax or rlen) or math.floor(rlen + 0.5)), minib, defaults, stack, zero)
  local cfg, gpu, model = s.cfg, s.gpu, s.model
  -- The rollout engine holds each prompt and its longest response in one
  -- sequence: past the model's context its positions run out, and vLLM
  -- refuses the engine ("User-specified max_model_len ... is greater than
  -- the derived max_model_len", vllm/config.py _get_and_verify_max_len).
  -- gp.infer refuses input + output past max_seq alike.
  local longest = plen + (rmax or rlen)
  if model.max_seq and (model.encoder_layers or 0) == 0 and longest > model.max_seq then
    fail("rl: prompt_len %d + %s %d tokens exceed %s's context of %d tokens (max_seq)%s",
      plen, o.response_max ~= nil and "response_max" or "response_len", rmax or rlen,
      tostring(model.id or model.name), model.max_seq,
      require("gpuplan.memory").longer_context(model, longest))
  end
  if hf and (model.moe or model.mla or model.ffn_gated == false or model.positions == "learned")
  then
    fail("rl: rollout_engine = hf counts the ops of a Llama decoder layer (rotary positions, "
      .. "a gated MLP, no experts); %s is not one", tostring(model.id or model.name))
  end
  local rtp, roll_weights, rc, rep, rpp, rdp = rollout_setup(o, s, tp, dflt, hybrid)
  -- The rollout pool in whole engines, said in what the user gave: the
  -- engine's refusal (engine/rl.c rl_pools) named rollout_tp x rollout_pp
  -- where neither was given ("rollout_tp x rollout_pp = 2 does not divide
  -- the 1 GPUs of the rollout pool" for rl --tp 2 --rollout-gpus 1).
  local pool = colocated and gpus or (not auto and rgpus or nil)
  if pool and pool % (rtp * rpp) ~= 0 then
    -- rollout_tp's default is the actor's tp: named as tp where given,
    -- in words where that too is a default
    local eng = o.rollout_tp ~= nil and string.format("rollout_tp %d", rtp)
      or o.tp ~= nil and string.format("the actor's tp %d", rtp)
      or string.format("the actor's tensor parallel size %d", rtp)
    if o.rollout_pp ~= nil then eng = string.format("%s x rollout_pp %d", eng, rpp) end
    local n = rtp * rpp
    usage("rl: the rollout engine's %d GPU%s (%s) do%s not divide %s", n, n == 1 and "" or "s",
      eng, n == 1 and "es" or "", colocated
      and string.format("gpus %d (the colocated pools)", pool)
      or string.format("rollout_gpus %d (the rollout pool)", pool))
  end
  -- Pools of their own over a node without NICs: the weight sync from the
  -- training pool to the rollout's crosses nodes, which the engine
  -- refused as "the rollout and training pools span nodes, but the system
  -- has no NICs" -- "the system" where there is none (a node built from
  -- the card), and nothing to give.  The same refusal as the actor's and
  -- the engine's (comm.no_nics), naming the node and the fix.  After
  -- rollout_setup: an engine that itself spans nodes is named there.
  if not colocated then
    local comm, train = require "gpuplan.comm", require "gpuplan.train"
    local sys = o.system ~= nil and train.system_of(o.system, s.cat)
      or train.default_node(s.gpu, s.cat)
    local bad = comm.no_nics(comm.node_spec(sys, s.gpu, function() end, "rl", o), gpus,
      "rl: the rollout and training pools", s.cat)
    if bad then fail("%s", bad) end
  end
  -- The engine's own cast of what the sync sends it: only an engine that
  -- holds fp8 weights casts to them.
  local fp8_cast = boolean("sync_fp8_cast", o.sync_fp8_cast, false)
  if fp8_cast and roll_weights ~= "fp8" then
    usage("rl: sync_fp8_cast is the engine's cast of the synced weights to fp8; this engine's "
      .. "weights are %s (give rollout_weights fp8)", roll_weights)
  end
  if hybrid and not colocated then
    usage("rl: rollout_engine = %s generates with the actor's own weights: colocated only",
      hf and "hf" or "hybrid")
  end
  -- Hugging Face generate runs on each actor rank's own modules: no
  -- tensor parallelism of its own (the hybrid engine's inference_tp_size
  -- is DeepSpeed's), so a rollout_tp other than the actor's would price
  -- engines that do not exist.
  -- ... and with the actor's own weights, which offload_states would park
  -- in host memory for the rollout.
  if hf and offload then
    usage("rl: rollout_engine = hf generates with the actor's own weights; offload_states "
      .. "would park them in host memory during the rollout")
  end
  if hf and rtp ~= tp then
    usage("rl: rollout_engine = hf generates on each actor rank's own modules: rollout_tp %d "
      .. "is not the actor's tp %d", rtp, tp)
  end
  -- ... whose parameters ZeRO-3 (and FSDP's full_shard) keeps as
  -- partitions, gathered for every forward by each module's pre-forward
  -- hook (DeepSpeed runtime/zero/parameter_offload.py
  -- pre_sub_module_forward_function: "param_coordinator.fetch_sub_module(
  -- sub_module, forward=True)", released again by the post-forward hook):
  -- Hugging Face generate would gather the whole model once per decode
  -- step, which the rollout does not price (it priced ZeRO-2's decode).
  if hf and cfg.zero == 3 then
    usage("rl: rollout_engine = hf generates through the actor's own modules, whose ZeRO-3 "
      .. "partitions are gathered again for every decode step's forward, which is not "
      .. "priced; rollout_engine = hf takes zero 0-2")
  end
  -- The trainer's copies to and from host memory: a superchip's CPU link
  -- (GB200's NVLink-C2C, catalog host_link), else PCIe.
  local host_bw = require("gpuplan.comm").host_link_bw(gpu) or 25e9
  local rmem = o.rollout_memory
  if rmem ~= nil and (type(rmem) ~= "number" or not (rmem > 0 and rmem <= 1)) then
    fail("rl: rollout_memory must be a fraction of the card in (0, 1] (got %s)", shown(rmem))
  end
  -- Host work is timed on x86 server CPUs; the system's host_op_scale
  -- stretches it on a slower host (GB200's Grace: 2.75, catalog).
  local onehot = boolean("logit_onehot", o.logit_onehot, false)
  if onehot and not boolean("fp32_logits", o.fp32_logits, false) then
    usage("rl: logit_onehot is the backward of the fp32 log-probabilities; give fp32_logits too")
  end
  -- The actor's moving average (DeepSpeed-Chat's --enable_ema): a loop
  -- over its parameter tensors after each training micro-batch and a
  -- 16-bit copy on its GPUs (engine/rl.c rl_ema).
  local ema = boolean("ema", o.ema, false)
  -- zero 3 is the hf stack's own default (verl's FSDP full_shard, above):
  -- said as the default where no zero or fsdp was given, as fit's --gpus
  -- is, and fsdp's strategy where it set it (the refusal read as though
  -- the job had asked for ZeRO-3)
  if ema and cfg.zero == 3 then
    usage("rl: ema under zero 3%s gathers each parameter pair before averaging it "
      .. "(DeepSpeed-Chat's moving_average: GatheredParameters), which is not priced; ema "
      .. "takes zero 0-2", o.zero ~= nil and "" or o.fsdp ~= nil and (" (fsdp "
      .. tostring(o.fsdp) .. ")") or " (the default)")
  end
  -- The average on the actor's GPUs is DeepSpeed-Chat's, whose rollout is
  -- its hybrid engine (rollout_engine hybrid).  OpenRLHF's --enable_ema,
  -- with or without its vLLM engines, keeps its average in host memory
  -- (openrlhf/utils/deepspeed.py moving_average: param.data.to("cpu")
  -- each optimizer step, the EMA engine offloaded): not this mechanism,
  -- and not priced; verl and NeMo RL keep none.
  if ema and not (hybrid and not hf) then
    usage("rl: ema is DeepSpeed-Chat's average on the actor's GPUs, beside its hybrid engine "
      .. "(rollout_engine = hybrid); OpenRLHF's --enable_ema keeps its average in host memory "
      .. "(openrlhf/utils/deepspeed.py moving_average: param.data.to(\"cpu\") each optimizer "
      .. "step), which is not priced")
  end
  if ema and method ~= "full" then
    usage("rl: ema averages every tensor of the actor's module, the frozen base's and the "
      .. "adapters' under method = %s, which are not counted; ema takes method full", method)
  end
  -- DeepSpeed's hybrid engine generates on the trainer's own tensors
  -- below ZeRO-3 at one inference TP rank (set_params_wo_copy; ZeRO-3
  -- gathers the layers into it, a TP engine slices them), with q, k and
  -- v fused into a copy of its own (engine/rl.c rl_qkv_copy).
  local shared_hybrid = hybrid and not hf and cfg.zero ~= 3 and rtp == 1
  if shared_hybrid and offload then
    usage("rl: rollout_engine = hybrid below zero 3 generates with the trainer's own tensors "
      .. "(DeepSpeed's set_params_wo_copy); offload_states would park them in host memory "
      .. "during the rollout")
  end
  -- DeepSpeed's hybrid engine swaps in an inference container for the
  -- layer classes it has a policy for (runtime/hybrid_engine.py
  -- create_inference_containers over module_inject's replace_policies,
  -- v0.9.0): none takes MLA attention, whose layers would then generate
  -- as Hugging Face's modules, which rollout_engine hybrid does not price.
  if hybrid and not hf and model.mla then
    fail("rl: rollout_engine = hybrid: DeepSpeed's hybrid engine has no inference container "
      .. "for %s's MLA attention", tostring(model.id or model.name))
  end
  local qkv_copy = shared_hybrid or nil
  local hs = s.host_op_scale
  -- DeepSpeed's hybrid engine under ZeRO-3 (runtime/hybrid_engine.py
  -- v0.9.0, DeepSpeed-Chat's, with its default pin_parameters: the
  -- gather_all_layers path) gathers the actor's shards for each generate
  -- and frees what it built from them after (engine/rl_mem.c: its weights
  -- are not held while the trainer runs; engine/rl_sync.c: its TP slices
  -- are cut on each rank from the gathered tensors).  Around that, on the
  -- actor's processes: eval() ends with "if self.Z3_enabled: gc.collect();
  -- get_accelerator().empty_cache()" (DeepSpeed-Chat's generate_experience
  -- calls it before each generate), and at inference_tp_size > 1 generate
  -- runs gc.collect() and empty_cache() again once the layers are
  -- gathered and sliced -- host stalls of the step, at peft PR #2894's
  -- measured rates (M.GC_COLLECT, M.EMPTY_CACHE), each generate call: one
  -- per generation batch of an actor rank.
  local released = hybrid and not hf and cfg.zero == 3 or nil
  local cleanup = 0
  if released then
    local calls = math.ceil(samples / (tgpus * gen_batch))
    cleanup = calls * (rtp > 1 and 2 or 1) * (M.GC_COLLECT + M.EMPTY_CACHE) * hs
  end
  -- the actor's host time per eager op (the hybrid engine's generate
  -- runs on the trainer's processes)
  local op_t = s.cfg.host_op_time or core().DEFAULTS.host_op_time
  -- An engine over more than one host: its executor's cross-host round
  -- trip each decode step (engine_xhost_step).
  local xh = (xhost or 0) > 0 and rtp * rpp > s.host_gpus and xhost * hs or 0
  -- The framework's torch.cuda.empty_cache() calls around each generate
  -- call (gen_empty_cache), at the measured rate of one (M.EMPTY_CACHE:
  -- the release and the re-allocation it forces on the next pass), on
  -- the weight sync's path: verl's FSDP hybrid worker enters its vLLM
  -- sharding manager for every generate_sequences, the step's and each
  -- validation batch's (engine/rl.c rl_val_pass), so they count with
  -- the sync, once per generate call.
  local gen_ec = bounded("gen_empty_cache", o.gen_empty_cache, 1000,
    "a count of calls, 0 to 1000")
  -- The count is the hybrid worker's switch of its GPUs between the
  -- trainer and the engine: on a pool of its own the rollout makes no
  -- such switch.  verl at d7c3d12 (2025-04-30, the release the verl
  -- cases ran) runs no other layout (trainer/ppo/ray_trainer.py: "assert
  -- self.hybrid_engine, \"Currently, only support hybrid engine\""); at
  -- b178a3c (2026-01-29) a rollout-only worker skips the switch
  -- (workers/fsdp_workers.py generate_sequences: "if self._is_actor:  #
  -- For rollout only, we do not switch context.", rollout_mode's and
  -- trainer_mode's empty_cache with it), its one call left after generate
  -- on the rollout pool's own timeline, not the weight sync's.  Refused.
  if (gen_ec or 0) > 0 and not colocated then
    usage("rl: gen_empty_cache counts the torch.cuda.empty_cache() calls of a hybrid worker "
      .. "switching its GPUs between training and generation (colocated); on separate pools "
      .. "(rollout_gpus, colocated = false) the rollout has GPUs of its own and makes no such switch")
  end
  -- Piecewise CUDA graphs: the forward's gaps a layer (M.PIECEWISE_LAYER),
  -- on the GPU's timeline, not the host's (no host_op_scale).
  local piecewise = boolean("rollout_piecewise", o.rollout_piecewise, false)
  if piecewise and hybrid then
    usage("rl: rollout_piecewise is vLLM's CUDA graph mode; the hybrid engine runs DeepSpeed's "
      .. "kernels")
  end
  if piecewise and o.rollout_eager == true then
    usage("rl: rollout_piecewise replays CUDA graphs; rollout_eager runs none")
  end
  local gaps = piecewise and M.PIECEWISE_LAYER * model.layers or 0
  -- DeepSpeed's kernels beyond the serving model's a decode step
  -- (M.HYBRID_EXTRA_LAYER_KERNELS a layer, M.HF_GENERATE_TAIL_KERNELS
  -- after the layers), each a small op of the batch's hidden state on
  -- the GPU's timeline: what the hybrid engine adds to the forward.
  local hybrid_kernels = 0
  if hybrid and not hf then
    local one = core().roof_op(s.device, { flop = 0, graphs = false,
      bytes = 2 * gen_batch * model.hidden * 2,
      prec = s.precision == "fp16" and "fp16" or "bf16" }).time
    hybrid_kernels = (M.HYBRID_EXTRA_LAYER_KERNELS * model.layers + M.HF_GENERATE_TAIL_KERNELS)
      * one
  end
  -- ... and under ZeRO-3, its attention's merge of q, k and v a layer
  -- (M.HYBRID_Z3_MERGE_COPIES): each weight slice of the inference TP rank
  -- read and written at the card's roofline, each bias copy (a model with
  -- linear or q/k/v biases) an op of its slice; the copies' host ops join
  -- the layer's (engine_host_step).
  local merge, merge_ops = 0, 0
  if released and (cfg.split_proj or 0) % 2 == 1 then
    local hd = model.head_dim or model.hidden / model.heads
    local wb = s.precision == "fp32" and 4 or 2
    local prec = s.precision == "fp16" and "fp16" or "bf16"
    local kvh = model.kv_heads or model.heads
    local rows = { model.heads * hd / rtp, kvh * hd / rtp, kvh * hd / rtp }
    local bias = model.linear_bias or model.qkv_bias
    for _, n in ipairs(rows) do
      merge = merge + core().roof_op(s.device, { flop = 0, graphs = false,
        bytes = 2 * n * model.hidden * wb, prec = prec }).time
      if bias then
        merge = merge + core().roof_op(s.device, { flop = 0, graphs = false,
          bytes = 2 * n * wb, prec = prec }).time
      end
    end
    merge = merge * model.layers
    merge_ops = M.HYBRID_Z3_MERGE_COPIES * (bias and 2 or 1)
  end
  -- ... and with a LoRA actor, the adapters added into the weights it
  -- generates with (M.HYBRID_LORA_FUSE_BYTES): each adapted linear of
  -- every layer, whole on every rank, once a generate under ZeRO-3 at an
  -- inference TP above 1 (the gathered tensors are dropped after slicing),
  -- twice elsewhere (fuse before, unfuse after), each generate call of
  -- the step.
  local fuse = 0
  if hybrid and not hf and (method == "lora" or method == "qlora") and (cfg.lora_rank or 0) > 0 then
    local hd = model.head_dim or model.hidden / model.heads
    local kvh = model.kv_heads or model.heads
    local h, f, q, kv = model.hidden, model.ffn_hidden, model.heads * hd, kvh * hd
    local dims = { q = { h, q }, k = { h, kv }, v = { h, kv }, o = { q, h },
      gate = model.ffn_gated ~= false and { h, f } or nil, up = { h, f }, down = { f, h } }
    local lt = cfg.lora_targets or "all"
    local want = {}
    if lt == "all" then
      for k in pairs(dims) do want[k] = true end
    else
      for name in tostring(lt):gmatch("[^,%s]+") do want[name] = true end
    end
    local prec = s.precision == "fp16" and "fp16" or "bf16"
    local r = cfg.lora_rank
    local layer = 0
    for name, d in pairs(dims) do
      if want[name] then
        local w = d[1] * d[2]
        layer = layer + core().roof_op(s.device, { flop = 2 * r * w, graphs = false,
          m = d[2], n = d[1], k = r, bytes = 2 * (r * (d[1] + d[2]) + w), prec = prec }).time
          + core().roof_op(s.device, { flop = 0, graphs = false,
            bytes = (M.HYBRID_LORA_FUSE_BYTES - 2) * w, prec = prec }).time
      end
    end
    local passes = (released and rtp > 1) and 1 or 2
    local calls = math.ceil(samples / (tgpus * gen_batch))
    fuse = calls * passes * layer * model.layers
  end
  local c = {
    rollout_ep = rep, rollout_dp_attention = rdp,
    train = cfg, rollout = rc, ppo = ppo, ref_model = ref, reward_model = reward,
    old_logprobs = oldlp, prompts = prompts, group = group, prompt_len = plen,
    response_len = rlen, response_max = rmax or rlen, response_dist = dist,
    response_clip = clip,
    minibatch = minib, epochs = epochs, pad = pad, pack_tokens = pack, colocated = colocated,
    pad_batch = boolean("pad_batch", o.pad_batch, false),
    logprob_pack_tokens = lp_pack,
    token_batch = o.token_batch,
    rollout_gpus = (not colocated and not auto) and rgpus or 0,
    staleness = window, refit_drain = refit_drain, offload_states = offload,
    param_offload = param_offload, logprob_offload = lp_offload, offload_pinned = pinned,
    ref_host = ref_host, host_bw = host_bw,
    ref_reward_offload = boolean("ref_reward_offload", o.ref_reward_offload, false),
    rank_skew = boolean("rank_skew", o.rank_skew, false),
    count_split = boolean("count_split", o.count_split, false),
    fp32_logits = boolean("fp32_logits", o.fp32_logits, false),
    logit_onehot = onehot,
    sync_tp_first = boolean("sync_tp_first", o.sync_tp_first, false),
    sync_fp8_cast = fp8_cast,
    engine_memory = rmem and rmem * s.p.capacity or nil,
    price = cfg.price, split_gpus = auto and gpus or nil,
    -- vLLM's engine loop; the hybrid engine's: generate()'s ops around
    -- DeepSpeed's kernels (M.HYBRID_LAYER_OPS), the first ones serial;
    -- hf's: the same around the Hugging Face layers (M.HF_LLAMA_LAYER_OPS),
    -- each layer waiting on its _get_unpad_data, the longer of a layer's
    -- dispatch and its kernels
    engine_host_step = hybrid and ((hf and M.HF_LLAMA_LAYER_OPS or M.HYBRID_LAYER_OPS + merge_ops)
      * model.layers + M.HF_GENERATE_TAIL_OPS) * op_t or M.ENGINE_HOST.step * hs + xh,
    engine_host_seq = hybrid and 0 or (M.ENGINE_HOST.seq + (logprob or 0) + (frontend or 0))
      * hs,
    engine_host_serial = hybrid and M.HF_GENERATE_PRELUDE_OPS * op_t or 0,
    -- hf's dense cache, copied whole every step (M.HF_CACHE_COPIES), the
    -- cat's passes waited on three ops after they are issued, every layer
    engine_cache_copies = hf and M.HF_CACHE_COPIES or 0,
    engine_wait_copies = hf and M.HF_CACHE_WAITED or 0,
    engine_wait_lead = hf and M.HF_WAIT_LEAD_OPS * model.layers * op_t or 0,
    -- each TP rank's per-device batch, gathered over the inference TP group;
    -- vLLM's: one actor rank's micro-batch an engine call (engine_of)
    static_batch = hybrid and gen_batch * rtp or gen_batch,
    engine_host_overlap = async or hybrid, engine_graph_gaps = gaps + hybrid_kernels + merge,
    -- OpenRLHF's actor ranks each generate their own micro-batches
    -- (ppo_trainer.py fit: make_experience per micro-batch on every rank,
    -- no collective before ppo_train): their rounds end on their own
    -- ... and so do OpenRLHF's vLLM calls, one rank's micro-batch each
    engine_static_own = hf or (not hybrid and gen_batch ~= nil),
    -- ... on the actor's own modules (openrlhf/models/actor.py generate:
    -- self.model.generate on the rank's ZeRO-2 copy): the engine's
    -- weights are the trainer's, held once (engine/rl_mem.c)
    engine_shared_weights = hf or qkv_copy,
    -- ... and DeepSpeed's hybrid engine at ZeRO 0-2 (DeepSpeed-Chat's):
    -- its inference containers point at the trainer's tensors
    -- (set_params_wo_copy) but for q, k and v, fused into a copy of
    -- their own (engine/rl.c rl_qkv_copy)
    engine_qkv_copy = qkv_copy,
    -- ... and under ZeRO-3 gathers them for each generate and frees them
    -- after (released, above)
    engine_released = released,
    step_overhead = (overhead or 0) * hs + cleanup, keep = keep,
    loss_ops = loss_ops, gae_ops = gae_ops, token_host = token_host and token_host * hs,
    fwd_bwd_scale = fbs,
    ema_tensors = ema and M.param_tensors(model) or 0,
    sync_host = (sync_tensor or gen_ec) and ((sync_tensor or 0) * M.weight_tensors(model)
      + (gen_ec or 0) * M.EMPTY_CACHE) * hs,
    engine_fuse = fuse,
    ipc_transfer = ipc and ipc * hs,
    ref_gpus = grp.ref, reward_gpus = grp.reward, critic_gpus = grp.critic,
    colocate_critic_reward = critic_reward,
    critic_model = critic_shape, reward_shape = reward_shape,
    critic_batch = critic_cut_of(o, ppo, "critic_batch"),
    -- whole token slots, 1 to 2^24: checked by their declarations
    -- (gpuplan.options range), which name the bounds they hold
    pad_to = o.pad_to, critic_pad_to = o.critic_pad_to,
    critic_token_batch = critic_cut_of(o, ppo, "critic_token_batch"),
  }
  if job then
    if o.val_every ~= nil or o.val_prompts ~= nil then
      usage("rl: val_every and val_prompts are gp.rl's; gp.rl_job prices the training step")
    end
    return job_of(o, model, s, c, o.rollout_tp == nil)
  end
  local every, vp, vb = validation(o)
  c.val_prompts = vp
  c.val_batch = vb
  local r = engine_step(model, s, c, dflt)
  -- the pass over val_every steps
  local val = every and { every = every, prompts = vp, rollout_s = r.val_rollout,
    sync_s = r.val_sync, pass_s = r.val_rollout + r.val_sync,
    step_s = (r.val_rollout + r.val_sync) / every }
  if val and r.rollout.steps > 0 then add_validation(r, val) end

  local out = {
    model = model.id or model.name, gpu = gpu.id, algo = algo, method = method,
    gpus = math.tointeger(r.gpus) or r.gpus, colocated = colocated,
    rollout_gpus = math.tointeger(r.pools.rollout.gpus),
    train_gpus = math.tointeger(r.pools.train.gpus),
    tp = tp, pp = pp, cp = cfg.cp_ulysses and 1 or cp, ulysses = cfg.cp_ulysses and cp or 1,
    dp = math.tointeger(r.pools.train.gpus // unit),
    ep = cfg.ep or 1, etp = cfg.etp or tp,
    zero = cfg.zero, hsdp = cfg.hsdp or 0, rollout_tp = rtp, rollout_pp = rpp, rollout_ep = rep,
    rollout_dp_attention = rdp,
    rollout_weights = roll_weights,
    prompts = prompts, group = group, samples = samples, prompt_len = plen,
    generated = math.tointeger(r.generated) or r.generated, filter_keep = keep,
    response_len = rlen, response_max = rmax or rlen, response_dist = dist,
    response_min = dist == "uniform" and (math.tointeger(2 * rlen - rmax) or 2 * rlen - rmax)
      or nil,
    response_clip = clip,
    global_batch = minib, epochs = epochs, opt_steps = r.opt_steps, train_seq = r.train_seq,
    response_m2 = r.response_m2,
    pack_tokens = pack or 0, pack_bins = r.pack_bins, logprob_pack_tokens = lp_pack or 0,
    token_batch = o.token_batch or 0,
    staleness = not colocated and staleness or nil, refit_drain = refit_drain or nil,
    recompute = cfg.recompute,
    async_scheduling = not hybrid and async or nil, rollout_eager = o.rollout_eager == true,
    rollout_piecewise = piecewise, graph_gaps = gaps,
    hybrid_kernels = hybrid and not hf and hybrid_kernels or nil,
    hybrid_qkv_merge = merge > 0 and merge or nil,
    hybrid_lora_fuse = fuse > 0 and fuse or nil,
    rollout_fused_grouped_topk = rc.fused_grouped_topk,
    rollout_fused_topk_softmax = rc.fused_topk_softmax,
    engine_xhost_step = xh,
    step_overhead = overhead or 0, engine_cleanup = cleanup,
    rollout_engine = hf and "hf" or hybrid and "hybrid" or "vllm", generation_batch = gen_batch,
    loss_ops = loss_ops or 0, token_host = token_host or 0, loss_host = r.loss_host,
    fwd_bwd_scale = fbs or 1,
    frontend_host = frontend or 0, logprob_host = logprob or 0,
    gae_ops = gae_ops or 0, gae_host = r.gae_host, ema = ema, ema_host = r.ema_host,
    count_split = o.count_split == true, pipe_update = r.pipe_update,
    pipe_forward = r.pipe_forward,
    fp32_logits = o.fp32_logits == true, sync_tp_first = o.sync_tp_first == true,
    sync_fp8_cast = fp8_cast,
    logit_onehot = o.logit_onehot == true,
    logit_update = r.logit_update,
    logit_forward = r.logit_forward,
    ref_gpus = grp.ref, reward_gpus = grp.reward, critic_gpus = grp.critic,
    colocate_critic_reward = critic_reward or nil,
    critic_model = ppo and (critic_shape and (critic_shape.id or critic_shape.name) or "actor")
      or nil,
    reward_model = reward and (reward_shape and (reward_shape.id or reward_shape.name) or "actor")
      or nil,
    precision = s.precision, stack = cfg.stack,
    fits = r.fits, why = r.why, step_s = r.step, rollout = r.rollout, pools = r.pools,
    samples_per_s = r.samples_per_s, tokens_per_s = r.tokens_per_s,
    tokens_per_s_gpu = r.tokens_per_s_gpu, gen_tokens_per_s = r.gen_tokens_per_s,
    swap_bytes = r.swap_bytes, sync_bytes = r.sync_bytes, ipc_transfers = r.ipc_transfers,
    memory = r.memory, update = r.update, forward = r.forward,
    price = cfg.price, currency = s.currency, defaults = defaults,
  }
  if cfg.price then
    out.cost_step, out.cost_1k_prompts = r.cost_step, r.cost_1k_prompts
  end
  rollout_gone(out, r)
  phases_of(out, r)
  out.validation = val
  out.capacity = s.p.capacity
  run_steps(out, o, r, cfg)
  -- The 80% ranges of the step, throughput, hours and cost (gpuplan.ranges).
  return require("gpuplan.ranges").apply("rl", { model = model, gpu = gpu,
    gpus_per_node = s.topo.gpus_per_node, fsdp = cfg.fsdp and (cfg.zero or 0) >= 2 }, out)
end

-- Colocated against disaggregated for one job (the guide's GRPO scenario):
-- gp.rl on one pool, then on two pools with the split searched.  Returns
-- {colocated = r1, disaggregated = r2, faster = "colocated" |
-- "disaggregated", speedup = slower step / faster step}.
function M.compare(o)
  local a, b = {}, {}
  for k, v in pairs(o) do a[k] = v; b[k] = v end
  a.colocated, a.rollout_gpus, a.logprob_offload = true, nil, nil
  b.colocated, b.rollout_gpus, b.offload_states = false, "auto", nil
  local ok1, r1 = pcall(M.rl, a)
  if not ok1 then error(r1, 2) end
  local ok2, r2 = pcall(M.rl, b)
  if not ok2 then error(r2, 2) end
  -- a placement whose rollout cannot run has no step time: the other wins
  if not (r1.step_s and r2.step_s) then
    local faster = r1.step_s and "colocated" or r2.step_s and "disaggregated" or nil
    return { colocated = r1, disaggregated = r2, faster = faster }
  end
  local faster = r1.step_s <= r2.step_s and "colocated" or "disaggregated"
  return { colocated = r1, disaggregated = r2, faster = faster,
           speedup = math.max(r1.step_s, r2.step_s) / math.min(r1.step_s, r2.step_s) }
end

-- The API functions name the line of the script that called them, as
-- gp.train's and gp.infer's do, under pcall too: their error(msg, 2)
-- named pcall's caller only when called directly, and under pcall no
-- line at all (the module's other functions are the planners' helpers).
local args = require "gpuplan.args"
for _, k in ipairs { "rl", "rl_job", "compare" } do M[k] = args.api(M[k]) end

return M
