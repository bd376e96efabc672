-- gpuplan.results: the names of what gp.memory, gp.train, gp.sweep, gp.rl,
-- gp.infer, gp.infer_plan and gp.comm return, declared once, as options
-- are (gpuplan.options).
--
-- One vocabulary: a name means the same thing in every result that has it
-- (step_s is one optimizer step in seconds in gp.train, in a gp.sweep row,
-- in the candidate a policy or `where` function reads, in gp.rl and in
-- the JSON and CSV the commands print), and a value with a unit carries the
-- unit in its name where the name alone would leave it open (step_s,
-- train_s, days, mem_gib, mem_bytes, tokens_per_s).  The Lua reference
-- (docs/lua.md) is generated from these declarations, and
-- tests/lua/results.t fails when a function returns a field that is not
-- declared here for it.
--
-- A declaration: field(name, unit, help, results[, range])
--   unit     what the number is in ("s", "B", "GiB", "days", "fraction",
--            "count", "FLOP", "tokens/s", "currency" -- the result's
--            currency field --, or "" for names, flags and tables)
--   results  the results that carry it, by their key in M.RESULTS
--   range    where a plan row's number may lie, {min, max, gt = the least
--            excluded}, as `gpuplan merge` checks a shard's rows; absent:
--            any finite number >= 0 (a unit) or any plain value (none)

local M = {}

-- The results, in the reference's order: key, the function, what it is.
M.RESULTS = {
  { "memory", "gp.memory", "per-GPU memory of one job" },
  { "train", "gp.train", "one training step of a placed layout, and the run" },
  { "sweep", "gp.sweep", "the layout search" },
  { "plan", "gp.sweep(...).results[i]", "one ranked layout" },
  { "candidate", "a policy's or where's argument",
    "one fitting layout, as gp.sweep's policy or where function reads it" },
  { "job_step", "gp.train_job(...):step(...)",
    "a step priced by a resolved job (a userdata: these fields, and :table() for all "
      .. "of core.train's: gp.train's step fields, with parts and hidden each a table of "
      .. "seconds keyed by part name, where gp.train's parts is a list)" },
  { "rl", "gp.rl", "one GRPO / PPO step and the run" },
  { "rl_job_step", "gp.rl_job(...):step(...)",
    "an RL step priced by a resolved job (a userdata: these fields, and :table() for all "
      .. "of core.rl's, its step, throughputs and costs nil where these are)" },
  { "infer", "gp.infer", "serving: a dense model, or a MoE model across many GPUs" },
  { "infer_plan", "gp.infer_plan", "the cheapest deployment for a target (a dense model's "
    .. "replicas, or MoE serving's pools)" },
  { "comm", "gp.comm", "one collective on placed ranks" },
  { "roofline", "gp.roofline", "the card's roofline, an operator on it, a model's operators" },
}

M.FIELDS = {}
M.BY_NAME = {}
local function field(name, unit, help, results, range)
  local set = {}
  for r in results:gmatch("%S+") do set[r] = true end
  local f = { name = name, unit = unit, help = help, results = set, range = range }
  assert(not M.BY_NAME[name], "results: " .. name .. " declared twice")
  M.FIELDS[#M.FIELDS + 1] = f
  M.BY_NAME[name] = f
end

local RUN = "train plan candidate"
local LAYOUT = "train plan candidate rl"

---------------------------------------------------------------------------
-- The verdict and the job
field("fits", "", "the job fits in memory (false: memory says by how much; rl and infer: "
  .. "why)", "memory train rl infer job_step rl_job_step")
field("why", "", "what does not fit, when fits is false", "train rl infer rl_job_step")
field("rollout_fits", "", "the rollout engines have room to run (false: the step has no "
  .. "time, throughput or cost)", "rl rl_job_step")
field("model", "", "the model's id", "memory train rl infer")
field("gpu", "", "the card's id", "memory train plan candidate rl infer comm")
field("gpus", "count", "GPUs of the job (a collective's ranks)", "memory train plan candidate rl infer infer_plan comm rl_job_step")
field("method", "", "pretrain, full, lora, qlora, grpo, ppo or infer", "memory train rl")
field("defaults", "", "the defaults assumed, as name=value strings (the line the commands "
  .. "print)", "memory train sweep rl infer comm")
field("warnings", "", "codes of what runs but wastes something (zero_dp1, tp_leaves_node, "
  .. "ep_leaves_node, microbatches_not_multiple_of_pp)", "memory train")

-- The layout
field("tp", "count", "tensor-parallel degree", LAYOUT .. " infer")
field("pp", "count", "pipeline-parallel stages", LAYOUT .. " infer")
field("cp", "count", "context-parallel degree", LAYOUT .. " memory")
field("ulysses", "count", "DeepSpeed-Ulysses sequence-parallel degree (1: none; cp is 1 "
  .. "beside it)", "train rl memory plan candidate")
field("ep", "count", "expert-parallel degree", "train plan candidate infer rl")
field("etp", "count", "expert-tensor-parallel degree (the experts' TP; plan: 0 = as tp)",
  "train plan candidate rl")
field("dp", "count", "data-parallel replicas", LAYOUT .. " memory")
field("zero", "count", "ZeRO stage (1: the distributed optimizer)", LAYOUT)
field("hsdp", "count", "hybrid sharding (fsdp hybrid_shard, zero_group): the GPUs one "
  .. "shard group spans (hybrid_shard: the node); 0: none", "train rl")
field("vpp", "count", "interleaved virtual stages per pipeline rank", "train plan candidate")
field("schedule", "", "the pipeline schedule: 1f1b, interleaved (vpp > 1) or dualpipe "
  .. "(DeepSeek-V3's)", "plan candidate")
field("sp", "", "sequence parallelism on", "train plan candidate")
field("hybrid", "", "hybrid sharding (fsdp hybrid_shard): ZeRO-3 shard groups inside each "
  .. "node; with zero_group: the layout's groups of zero_group ranks (false where that is "
  .. "all of dp x cp)", "plan candidate")
field("zero_group", "count", "the zero_group given: data-parallel ranks a ZeRO shard group "
  .. "holds (only where hybrid is true)", "plan")
field("fsdp", "", "FSDP's sharding strategy of the layout, where fsdp was searched: "
  .. "full_shard, shard_grad_op or hybrid_shard (gp.train's fsdp of the row)", "plan")
field("micro_batch", "count", "sequences per micro-batch", "train plan candidate")
field("global_batch", "count", "sequences per optimizer step (rl: samples)", "train rl")
field("microbatches", "count", "micro-batches per step per pipeline", "train job_step")
field("seq", "count", "tokens per sequence", "train")
field("recompute", "", "the activation recomputation (with recompute = \"auto\": the one "
  .. "chosen)", "memory train plan candidate rl")
field("context_note", "", "where seq is past the model's stated context (max_seq): the "
  .. "note saying so (absent otherwise)", "train")
field("recompute_auto", "", "true when recompute was \"auto\" and chosen", "memory train")
field("tp_overlap", "", "TP communication overlapped with the GEMMs", "plan candidate")
field("overlap_grad_reduce", "", "the DP gradient reduction overlapped with backward",
  "plan candidate")
field("overlaps", "", "{overlap_grad_reduce, overlap_param_gather, tp_overlap, overlap_p2p, "
  .. "ep_overlap}: what ran under compute (tp_overlap, overlap_p2p and ep_overlap off with "
  .. "a group of one: tp, pp or ep 1)", "train")
field("layout", "", "the layout as a label (TP4 PP2 DP8 ZeRO-1 SP mb1 selective; "
  .. "infer: the instance's)", "plan infer infer_plan")
field("precision", "", "the training precision (bf16, fp8 ...)", "train rl")
field("recipe", "", "the model-state recipe (mixed-16, megatron-18, deepspeed-bf16 ...)",
  "memory train")
field("stack", "", "the software stack (hf, megatron, deepspeed)", "memory train rl")

-- Time and throughput
field("step_s", "s", "one optimizer step (rl: one RL step)", "train plan candidate rl job_step rl_job_step")
field("train_s", "s", "time to train the run's tokens (given tokens)",
  RUN .. " job_step")
field("days", "days", "train_s in days", RUN)
field("tokens_per_s", "tokens/s", "tokens processed per second by the whole job "
  .. "(infer: output tokens of every replica)",
  "train plan candidate rl infer infer_plan job_step rl_job_step")
field("tokens_per_s_gpu", "tokens/s", "tokens_per_s per GPU", "train rl job_step rl_job_step")
field("tokens_per_step", "count", "tokens per optimizer step", "train job_step")
field("mfu", "fraction", "model FLOPs utilisation (6N plus attention, no recompute)",
  "train plan candidate job_step")
field("hfu", "fraction", "hardware FLOPs utilisation (MFU plus the recomputed forward)",
  "train job_step")
field("model_flops", "FLOP", "model FLOPs of one step", "train job_step")
field("hw_flops", "FLOP", "FLOPs executed in one step (recompute included)", "train job_step")
field("model_tflops_gpu", "TFLOP/s", "model TFLOP/s per GPU", "train job_step")
field("hw_tflops_gpu", "TFLOP/s", "executed TFLOP/s per GPU", "train job_step")
field("peak", "FLOP/s", "the card's dense peak at the training precision", "train job_step")
field("parts", "", "{name, seconds, hidden, share}: where the step goes, in the engine's "
  .. "order (compute, recompute, tp_comm ... optimizer)", "train")
field("ops", "", "each operator: train: of a layer, {name, fwd, bwd} seconds, kind (the "
  .. "layer kind it runs in: M, *, -, E) and share (that kind's layers over all; a hybrid "
  .. "stack lists every kind's operators, their seconds times their share; 1 for a plain "
  .. "model's one layer); infer: "
  .. "of a decode step on one GPU, {name, count, time, total, bound, intensity, flop, "
  .. "bytes, shape_eff}; roofline (with model): the prefill's and the decode step's, "
  .. "{phase, name, count, flop, bytes, intensity (FLOP/B), tflops (attained), bound, "
  .. "time_s, total_s (count x time_s), shape_eff}", "train infer roofline")
field("groups", "", "the placed communication groups (the launcher's placement, the last "
  .. "node partial): ranks, the nodes one spans, per_node (the fewest of its ranks on one of "
  .. "them) and the NICs they share", "train")
field("bubble_frac", "fraction", "the pipeline's fill and drain, of the step",
  "train job_step")
field("stage", "count", "the most loaded pipeline stage (0-based)", "memory train job_step")
field("stage_layers", "count", "layers of that stage", "memory train job_step")
field("stage_time_s", "s", "that stage's time per micro-batch", "train job_step")
field("vision_s", "s", "the vision tower's share of a step", "train job_step")
field("vision_patches", "count", "image patches per step", "train job_step")
field("scaling", "", "train: {gpus, layout, tokens_per_s_gpu, efficiency, base} (with "
  .. "scaling = true or scaling_base): tokens/s per GPU against the job's fastest layout on "
  .. "the base count, base saying which ('the smallest count that fits', 'scaling_base', "
  .. "'no smaller count fits'); plan: that efficiency, > 0 and unbounded above", "train plan",
  -- A ratio of two positive, finite throughputs per GPU.  It has no upper
  -- bound: the base is the smallest count that fits, where the job may fit
  -- only by recompute, a small micro-batch or few experts' shards, so a
  -- larger count can be several times faster per GPU (Qwen3-30B-A3B on
  -- 32 H100s against the 8 it first fits on: above 5).
  { 0, 2 ^ 53, gt = true })
field("scaling_base", "count", "the GPU count the scaling efficiency is against", "plan")
-- (gp.infer takes no per_card key: "a list of cards (gp.infer)" read as
-- one, and gp.infer{per_card = {...}} was refused as gp.sweep's option)
field("per_card", "", "gp.sweep{per_card = true}, or gp.infer{gpu = {a, b, ...}} (a list of "
  .. "cards as its gpu): a row per "
  .. "card, side by side, the winner first -- the card's best (gp.sweep: its layout's fields; "
  .. "gp.infer: its result) with gpu, fits, winner, loses (what it loses to the winner, or why "
  .. "it is out) and, with a deadline or budget, meets_deadline and meets_budget; gp.infer "
  .. "without tp or pp: larger_tp where a size --target tries fits where TP1 does not or "
  .. "serves the token cheaper ({tp, batch, per_gpu, cost_per_mtok, currency, "
  .. "fits_only_there, by})",
  "sweep infer")
field("scaling_bases", "", "per card: {gpus, layout, tokens_per_s_gpu, given} of the base "
  .. "its results' scaling is against", "sweep")
field("flags", "", "what the result warns of (scaling below 0.6)", "plan")

-- Money
field("tokens", "count", "the run's tokens (as given)", "train")
field("price", "currency", "per GPU-hour", "train plan candidate rl")
field("currency", "", "the currency of cost and price", "train plan candidate rl infer infer_plan")
field("cost", "currency", "the run's cost (given tokens and a price; rl: given steps)",
  RUN .. " rl job_step")

-- Memory
field("mem_bytes", "B", "memory per GPU, the most loaded one", "plan candidate job_step")
field("mem_gib", "GiB", "mem_bytes in GiB", "plan candidate")
field("memory", "", "train: gp.memory's result for the layout; rl: {rollout, forward, "
  .. "update} breakdowns (and reference, reward, critic: the own groups'); infer (MoE "
  .. "serving): the per-GPU bytes by kind (attention, dense, shared, experts, embed, other, "
  .. "mtp, weights, a2a_buffer, workspace, reserve: the CUDA context, cuBLAS workspace and NCCL "
  .. "buffers, kv_budget) and expert_slots, the count of routed "
  .. "experts a GPU holds", "train rl infer")
field("total", "B", "memory per GPU, every component", "memory")
field("components", "", "{name, bytes, note}: the components of total", "memory")
field("largest", "", "the largest component's name", "memory")
field("capacity", "B", "the card's memory (rl: per GPU)", "memory rl")
-- (engine/memory.h gp_mem_result: margin is its fraction x capacity, in
-- bytes; budget capacity less it; usable budget less the context,
-- workspaces and communication buffers.  These read "margin: fraction",
-- "budget: usable less the margin" and "usable: what a framework can
-- allocate", where budget > usable and margin is 8.49e9 for 0.1 of an H100.)
field("usable", "B", "the budget less the CUDA context, workspaces and communication "
  .. "buffers: room for the tensors and their fragmentation", "memory")
field("margin", "B", "the safety margin in bytes: its fraction of capacity (with "
  .. "kv_free_fraction: the rest of the memory the model leaves free)", "memory")
field("budget", "B", "capacity less the margin: what total must fit in", "memory")
field("allocated", "B", "total as the allocator rounds it", "memory")
field("short_by", "B", "how much more the job needs than the budget: positive when it does not fit, negative (the headroom) when it fits", "memory")
field("host", "", "bytes offloaded to host memory per GPU, by kind (weights, grads, master, "
  .. "optimizer, activations; ema: the parameters' moving average under ema cpu)", "memory")
field("cpu_bytes", "B", "bytes held in host memory per GPU (training: the offloaded states "
  .. "and activations, and ema cpu's moving average; rl: also the frozen models and critic "
  .. "parked there; inference: the offloaded layers)", "memory")
field("host_need", "B", "what the offload holds on the job's fullest host: cpu_bytes x "
  .. "host_ranks", "memory")
field("host_memory", "B", "that host's DRAM (the node's system host_memory, its tray's share "
  .. "where a node spans hosts; 0: none known, not checked); host_need past it: fits false",
  "memory")
field("host_ranks", "count", "the job's GPUs on its fullest host", "memory")
field("host_system", "", "the catalog system whose host_memory the offload was held against",
  "memory")
field("cpu_layers", "count", "layers held in host memory", "memory")
field("state_bytes", "", "bytes per parameter by state (weights, grads, master, optimizer)",
  "memory")
field("rl_state", "", "method grpo or ppo: the RL step's state whose memory this is, the "
  .. "largest of rollout, forward and update (gp.rl's memory has each)", "memory")
field("grad_phase", "", "DeepSpeed ZeRO-2/3 (ZeRO-1, and ZeRO-0 in fp16: its step alone): the phase whose gradients the grads component "
  .. "and state_bytes.grads hold, \"backward\" (16-bit partition), \"step\" (with the fp32 "
  .. "gradient) or \"idle\" (between step and backward: an RL step's rollout and forwards; "
  .. "stage 3's kept 16-bit partition, nothing at stage 2); absent: the recipe's", "memory")
field("grad_bytes", "B", "with grad_phase: the grads component's bytes per element of the "
  .. "gradient partition", "memory")
field("whole_init", "", "true where the peak is ZeRO-3's arrival of a model built outside "
  .. "deepspeed.zero.Init (zero_init false): the whole 16-bit model on the GPU before it is "
  .. "partitioned, the weights component alone; absent otherwise", "memory")
field("params", "count", "the parameters one GPU holds (its pipeline stage's, split by TP and its experts by EP; the whole model on one GPU), before ZeRO-3 or FSDP shards them (the weights component has that)", "memory")
field("trainable", "count", "parameters that train, in the whole model, not one GPU's share as params is (LoRA: the adapter's; a frozen vision tower or LLM left out; 0 when serving)", "memory")
field("act_layer", "B", "activations saved by one layer", "memory")
field("inflight", "count", "micro-batches whose activations the stage holds", "memory")
field("job", "", "the job as the engine read it", "memory")
field("kv_per_seq", "B", "KV cache of one sequence per GPU; with the MoE serving options (ep, dp_attention ...) per sequence of a GPU's batch: a TP attention group's GPUs each hold all its sequences, tp x one sequence's share", "memory infer")
field("kv_room", "B", "memory left for the KV cache (inference; absent from a training or RL breakdown)", "memory")
field("kv_budget", "B", "KV cache the engine may allocate per GPU", "infer")
field("max_ctx", "count", "longest context that fits (inference; absent from a training or RL breakdown)", "memory")
field("max_seqs", "count", "sequences whose KV fits (inference; absent from a training or RL breakdown)", "memory")

-- RL
field("algo", "", "rl: grpo or ppo; comm: NCCL's algorithm (ring, tree, nvls ...)", "rl comm")
field("colocated", "", "rollout and training share the GPUs", "rl")
field("phases", "", "{name, seconds, idle, gpus, pool, memory, mem_bytes, mem_gib, share}: "
  .. "the step's phases (a rollout that does not fit: no seconds, as no step_s)", "rl")
field("pools", "", "{rollout, train}: gpus, busy and idle seconds", "rl")
field("rollout", "", "the rollout, its busiest engine's: engines, samples, prompts, batch "
  .. "(sequences decoded at once at most), queued (the KV budget or max_batch cannot hold "
  .. "them all: requests wait or are preempted), preempted (requests evicted), longest "
  .. "(tokens of the longest response), steps (decode steps), mean_batch, itl_first and "
  .. "itl_last (s of the first and the last decode step: the longest response alone, at fixed lengths the whole batch); prefill, decode, tail, recompute, "
  .. "host, sampler and post seconds; kv_budget, kv_peak, weights and workspace (B per "
  .. "GPU); gen_tokens_per_s (of the pool while it generates); prefill_stall "
  .. "(DP attention: the prompts admitted while it decodes over their own prefill)", "rl")
field("update", "", "the policy update's training step (gp.train's step fields)", "rl")
field("forward", "", "the log-probability forward's step (gp.train's step fields)", "rl")
field("samples", "count", "samples trained on per step", "rl")
field("generated", "count", "samples generated per step (more than samples under dynamic "
  .. "sampling)", "rl")
field("filter_keep", "", "dynamic sampling's kept share of the generated groups (as given)", "rl")
field("samples_per_s", "1/s", "samples per second", "rl rl_job_step")
field("gen_tokens_per_s", "tokens/s", "generated tokens per second", "rl rl_job_step")
field("cost_step", "currency", "one step's cost", "rl rl_job_step")
field("cost_1k_prompts", "currency", "the cost of 1000 prompts", "rl rl_job_step")
field("steps", "count", "the run's steps (as given)", "rl")
field("run_s", "s", "the run's time (given steps)", "rl")
field("hours", "h", "run_s in hours", "rl")
field("opt_steps", "count", "optimizer steps per RL step", "rl")
field("epochs", "count", "passes over the step's samples", "rl")
field("group", "count", "responses per prompt", "rl")
field("prompts", "count", "prompts per step", "rl")
field("prompt_len", "count", "prompt tokens", "rl")
field("response_len", "count", "mean response tokens", "rl")
field("response_max", "count", "longest response tokens", "rl")
field("response_min", "count", "uniform: the shortest response tokens (2 response_len - "
  .. "response_max; a stated range's bottom)", "rl")
field("response_dist", "", "the response-length distribution", "rl")
field("response_clip", "", "exp: the share of the responses cut at response_max", "rl")
field("train_seq", "count", "training tokens per sample", "rl")
field("response_m2", "", "E[L^2] of the response lengths, tokens^2 (attention's quadratic "
  .. "term)", "rl")
field("train_gpus", "count", "GPUs that train", "rl")
field("ref_gpus", "count", "GPUs of the reference's own group (nil: on the actor's)", "rl")
field("reward_gpus", "count", "GPUs of the reward model's own group (nil: on the actor's)",
  "rl")
field("critic_gpus", "count", "GPUs of the critic's own group (nil: on the actor's)", "rl")
field("critic_model", "", "PPO: the critic's model id (actor: the actor's shape)", "rl")
field("reward_model", "", "the reward model's id (actor: the actor's shape; nil: rule-based "
  .. "rewards)", "rl")
field("colocate_critic_reward", "", "the reward model on the critic's group", "rl")
field("rollout_engine", "", "vllm or hybrid (DeepSpeed-Chat's hybrid engine)", "rl")
field("generation_batch", "count", "static batches: sequences each GPU (hybrid, hf) or each vLLM engine generates at once", "rl")
field("rollout_gpus", "count", "GPUs that generate", "rl")
field("rollout_tp", "count", "TP of a rollout engine", "rl")
field("rollout_pp", "count", "pipeline stages of a rollout engine", "rl")
field("rollout_ep", "count", "EP of a rollout engine (1: experts sliced by its TP)", "rl")
field("rollout_weights", "", "the rollout's weight format", "rl")
field("sync_bytes", "B", "weights sent to the rollout engines per step", "rl")
field("swap_bytes", "B", "bytes moved to and from host per step (offload)", "rl")
field("ipc_transfers", "count", "staging-buffer hand-offs of a colocated weight sync "
  .. "(ipc_transfer; 0: none)", "rl")
field("peak_memory", "B", "the most loaded GPU's peak over the phases", "rl rl_job_step")
field("step_overhead", "s", "the framework's host work per step", "rl")
field("engine_cleanup", "s", "the hybrid engine's gc.collect() and empty_cache() a step under ZeRO-3 (in step_overhead's phase, framework)", "rl")
field("validation", "", "the validation pass of val_every / val_prompts: every, prompts, "
  .. "rollout_s (its rollout over the step's engines), sync_s (the step's weight sync), "
  .. "pass_s (rollout_s + sync_s), step_s (pass_s / every: the validation phase); "
  .. "nil without validation", "rl")
field("loss_ops", "count", "host ops per trained sequence of a per-sequence loss (as given)",
  "rl")
field("fwd_bwd_scale", "", "the multiple on the training engine's forward and backward "
  .. "compute (as given; 1: none)", "rl")
field("token_host", "s", "host seconds per generated token after the engine (as given)", "rl")
field("frontend_host", "s", "the in-process engine frontend's seconds per sequence per decode "
  .. "step (as given)", "rl")
field("logprob_host", "s", "the engine core's seconds per sequence per decode step for the "
  .. "sampled tokens' log-probabilities (as given)", "rl")
field("loss_host", "s", "seconds of the actor update the per-sequence loss adds", "rl")
field("gae_ops", "count", "host ops per response position of a looped advantage estimate "
  .. "(as given)", "rl")
field("gae_host", "s", "seconds of the actor update the advantage loop adds", "rl")
field("ema", "", "the actor's moving average kept and updated (as given)", "rl")
field("count_split", "", "micro-batches cut by sequence count at random lengths under the "
  .. "pipeline (as given)", "rl")
field("pipe_update", "", "the update's pipelined work over its price at the mean micro-batch "
  .. "(count_split; 1: none)", "rl")
field("pipe_forward", "", "the forward passes' pipelined work over their price at the mean "
  .. "micro-batch (count_split; 1: none)", "rl")
field("ema_host", "s", "seconds of the actor update the moving average's updates add", "rl")
field("fp32_logits", "", "the log-probabilities from fp32 logits, unfused (as given)", "rl")
field("logit_onehot", "", "the fp32 log-probabilities' backward builds an int64 one-hot "
  .. "(as given)", "rl")
field("sync_tp_first", "", "the weight sync gathers whole tensors over TP first (as given)",
  "rl")
field("sync_fp8_cast", "", "the engine casts the synced weights to fp8 itself (as given)",
  "rl")
field("logit_update", "s", "seconds the fp32 logits add to each optimizer step", "rl")
field("logit_forward", "s", "seconds they add to each log-probability forward", "rl")
field("pack_tokens", "count", "tokens per packed training micro-batch (as given; 0: not packed)",
  "rl")
field("pack_bins", "count", "packed (pack_tokens) or token-cut (token_batch) micro-batches per "
  .. "optimizer step, all DP ranks", "rl")
field("token_batch", "count", "tokens a GPU per token-cut training micro-batch (as given; 0: not "
  .. "cut by tokens)", "rl")
field("logprob_pack_tokens", "count",
  "tokens per packed log-probability micro-batch (as given; 0: pack_tokens)", "rl")
field("async_scheduling", "", "the engine prepares each decode step ahead", "rl")
field("engine_xhost_step", "s", "executor time added to each decode step of an engine over "
  .. "more than one host (0: within one)", "rl")
field("rollout_eager", "", "the rollout engine runs without CUDA graphs (as given)", "rl")
field("rollout_piecewise", "", "the rollout engine replays piecewise CUDA graphs (as given)",
  "rl")
field("rollout_fused_grouped_topk", "", "the rollout engine routes a grouped-top-k MoE in "
  .. "vLLM's one fused kernel (as given)", "rl")
field("rollout_fused_topk_softmax", "", "the rollout engine's softmax top-k MoE router runs "
  .. "as vLLM's one fused kernel (as given)", "rl")
field("graph_gaps", "s", "time a decode step's forward loses between the pieces of a "
  .. "piecewise CUDA graph (0: one graph a step)", "rl")
field("hybrid_kernels", "s", "rollout_engine hybrid: GPU time a decode step spends on "
  .. "DeepSpeed's kernels beyond the serving model's operators (the unfused attention, the "
  .. "bias and residual kernels, generate()'s ops after the layers)", "rl")
field("hybrid_lora_fuse", "s", "rollout_engine hybrid with a LoRA actor: seconds a step's "
  .. "weight syncs spend adding the adapters into the generating weights (DeepSpeed's "
  .. "_fuse_lora, and _unfuse_lora where the weights outlive the generate; in weight_sync; "
  .. "absent where none: a full actor, another engine)",
  "rl")
field("hybrid_qkv_merge", "s", "rollout_engine hybrid under zero 3: GPU time a decode step "
  .. "spends re-fusing each layer's q, k and v into one buffer (DeepSpeed's _merge_qkv; "
  .. "absent where none)", "rl")
field("rollout_dp_attention", "", "the rollout engine's attention data-parallel over its GPUs "
  .. "(as given)", "rl")
field("refit_drain", "", "each refit waits for every pending generation (as given; priced "
  .. "as staleness 1)", "rl")
field("staleness", "count", "separate pools: the steps the rollouts run ahead of the "
  .. "training (as given, default 1); absent when colocated", "rl")

-- Serving
field("batch", "count", "sequences decoded together per replica", "infer infer_plan")
field("batch_per_gpu", "count", "MoE serving: sequences each GPU decodes (the batch argument's "
  .. "meaning, SGLang's batch size per GPU); batch is its x tp, a decode instance's", "infer")
field("replicas", "count", "model replicas (gpus / (tp x pp))", "infer")
field("batch_split", "", "a concurrency the replicas split unevenly: {hi, hi_replicas, lo, "
  .. "lo_replicas}, hi sequences on hi_replicas replicas and lo on the rest (batch is hi; "
  .. "absent where they split evenly)", "infer")
field("instances", "count", "serving instances", "infer")
field("input", "count", "prompt tokens", "infer")
field("output", "count", "output tokens", "infer")
field("cached_tokens", "count", "prompt tokens a request finds in the prefix cache, their "
  .. "prefill skipped (with prefix_hit)", "infer")
field("ttft_s", "s", "time to first token, without queueing: one prompt's prefill alone; MoE "
  .. "serving: ttft_steps full prefill steps of prefill_tokens (other prompts' tokens filling "
  .. "them), plus kv_transfer_s where disaggregated; a burst (requests, more than one a "
  .. "replica, no concurrency below them): the mean over its requests of each's time to its "
  .. "first token, behind the prompts ahead of it; a steady concurrency of more than one a "
  .. "replica on a chunked-prefill engine, or more than one sequence a colocated MoE serving "
  .. "instance (ttft_loaded): the TTFT under that load, ttft_wait_s + ttft_steps x ttft_step_s "
  .. "(a concurrency split unevenly, batch_split: the mean over the requests of both groups', "
  .. "the parts the busier replicas'; gp.infer_plan's: one prompt's, what its ttft_max bounds)",
  "infer infer_plan")
field("ttft_one_s", "s", "a burst's (requests) TTFT without the burst, what ttft_s is without "
  .. "requests (one prompt's prefill alone; MoE serving: its full prefill steps); under a "
  .. "steady load (ttft_loaded), one prompt's prefill on an idle replica; absent "
  .. "otherwise", "infer")
field("ttft_loaded", "", "true where ttft_s is the steady state's TTFT under load: a "
  .. "chunked-prefill engine, more than one request a replica, no burst (vLLM V1's scheduler: "
  .. "the running decodes first, the waiting prompts' chunks in the budget left); MoE serving: "
  .. "colocated, more than one sequence an instance, no burst (the same rule, its steps the "
  .. "model's chunk steps)", "infer")
field("ttft_one_steps", "count", "MoE serving under load (ttft_loaded): one prompt's full "
  .. "prefill steps, those of ttft_one_s (the prompt's new tokens over prefill_tokens, at least "
  .. "one)", "infer")
field("ttft_wait_s", "s", "under load (ttft_loaded): the mean residual of the step in flight a "
  .. "new request waits for, E[T^2] / (2 E[T]) over the steady state's steps", "infer")
field("ttft_step_s", "s", "under load (ttft_loaded): each of the ttft_steps steps that carry "
  .. "the prompt's chunks beside the batch's decodes", "infer")
field("ttft_p50_s", "s", "a burst's median TTFT over its requests (numpy's, as vLLM's benchmark "
  .. "prints it); absent but for a burst on one model's replicas", "infer")
field("ttft_p99_s", "s", "a burst's 99th-percentile TTFT over its requests; absent but for a "
  .. "burst on one model's replicas", "infer")
field("ttft_steps", "count", "MoE serving: the prefill steps of ttft_s (the prompt's new tokens "
  .. "over prefill_tokens, at least one); under load (ttft_loaded): the steps its prompt runs "
  .. "in, ceil(prompt / (max_num_tokens - the step's decodes)); MoE serving: prefill_tokens "
  .. "less the attention group's decode tokens where the runtime mixes, prefill_tokens where "
  .. "it prefills in steps of their own", "infer")
field("prefill_tokens", "tokens", "MoE serving: the prompt tokens of one prefill step an "
  .. "attention group", "infer")
field("ttft_group", "count", "MoE serving: the GPUs of the attention group a prefill step's "
  .. "prefill_tokens go to (1 under DP attention)", "infer")
field("itl_s", "s", "inter-token latency at the batch", "infer infer_plan")
field("itl_load_s", "s", "mean gap between a user's tokens at the batch, other requests' prompts "
  .. "between them (what a target's ITL limit bounds)", "infer")
field("itl_batch1_s", "s", "inter-token latency of one sequence alone", "infer")
field("tpot_s", "s", "time per output token of one stream (MTP included)", "infer")
field("per_gpu", "tokens/s", "output tokens per second per GPU", "infer infer_plan")
field("stream_tokens_per_s", "tokens/s", "one user's tokens per second: 1 / itl_load_s, the "
  .. "mean gap between its tokens (MoE serving: 1 / itl_s, which holds the prefill stalls)", "infer")
field("input_tokens_per_s", "tokens/s", "prompt tokens per second", "infer")
field("cost_per_mtok", "currency", "per million output tokens (with a price)", "infer infer_plan")
field("tokens_per_s_per_dollar_hour", "tokens/s", "tokens_per_s per unit of price an hour",
  "infer")
field("weights", "", "the weight format", "infer")
field("expert_weights", "", "the routed experts' weight format (when it differs)", "infer")
field("weights_gpu", "B", "weights per GPU", "infer")
field("weights_total", "B", "weights of the model", "infer")
field("workspace", "B", "the runtime's workspace per GPU", "infer")
field("kv", "", "the KV-cache dtype", "infer")
field("max_batch_kv", "count", "sequences whose KV fits per replica, at most max_batch (the engine's sequences a step: ExLlamaV2's 1 where no batch is given)", "infer")
field("kv_seqs", "count", "sequences whose KV fits per replica, before max_batch", "infer")
field("max_batch_kv_per_gpu", "count", "MoE serving: the most batch_per_gpu can be (the KV "
  .. "budget's sequences a GPU, at most max_batch over the attention group: a share of one "
  .. "where max_batch is under the group's GPUs); max_batch_kv is its x tp, a decode instance's", "infer")
field("offload_layers", "count", "layers offloaded to the host", "infer")
field("offload_bytes", "B", "bytes offloaded to the host", "infer")
field("compute", "", "the compute precision", "infer")
field("ridge", "FLOP/B", "the achievable roofline's ridge at the compute precision", "infer")
field("prefill_share_s", "s", "prefill time per decode step, shared over the batch", "infer")
field("prefill_experts_s", "s", "colocated: of prefill_share_s, the routed experts' part (they run every rank's tokens together: no stall)", "infer")
field("prefill_stall", "", "colocated MoE serving with DP attention: the instance's time for the rank-own part of its prompts (attention, dense linears, all-to-all) over their own (each rank waits for the others' chunks)", "infer")
field("eager_steps", "", "CUDA-graph runtimes, prefill and decode together (colocated MoE serving: on some rank): the share of decode steps that carry prompt tokens, which run without the CUDA graph (TensorRT-LLM graphs a step only when it holds no context request)", "infer")
field("eager_s", "s", "CUDA-graph runtimes, prefill and decode together: what those steps add to a decode step on average, their kernels launched one by one", "infer")
field("decode", "", "the decode step's detail", "infer")
field("prefill", "", "the prefill's detail", "infer")
field("prefill_ops", "", "the prefill's operators (as ops)", "infer")
field("moe", "", "the MoE serving model ran (EP, DP attention, disaggregation)", "infer")
field("dp_attention", "", "attention data-parallel over the instance", "infer")
field("two_batch_overlap", "", "two micro-batches hide the all-to-all", "infer")
field("mtp", "count", "MTP draft tokens per step", "infer")
field("accept", "fraction", "accepted draft tokens per step", "infer")
field("no_mtp", "", "with mtp: the same server without speculation, for comparison: fits, "
  .. "tokens_per_s, per_gpu, itl_s, batch_per_gpu (gp.infer); fits, gpus, layout, "
  .. "prefill_layout, batch, tokens_per_s, itl_s, cost_per_mtok, or why (gp.infer_plan)",
  "infer infer_plan")
field("disagg", "", "prefill and decode on separate pools", "infer infer_plan")
field("decode_gpus", "count", "GPUs of the decode pool", "infer infer_plan")
field("prefill_gpus", "count", "GPUs of the prefill pool", "infer infer_plan")
field("prefill_layout", "", "the prefill pool's layout (disaggregated)", "infer infer_plan")
field("pool_ratio", "", "disaggregated: the prefill GPUs per decode GPU that balance "
  .. "the pools (the prompts the prefill pool takes in against those the decode pool "
  .. "finishes)", "infer")
field("kv_transfer_s", "s", "disaggregated: one request's KV sent from the prefill to the "
  .. "decode pool (in the TTFT)", "infer")
field("coloc", "", "disaggregated: the same GPUs colocated, for comparison: fits, per_gpu, "
  .. "itl_s, batch (a replica's), batch_per_gpu", "infer")
field("decode_per_gpu", "tokens/s", "output tokens per second per decode GPU", "infer")
field("prefill_per_gpu", "tokens/s", "prompt tokens per second per prefill GPU", "infer")
field("step_ms", "ms", "one decode step", "infer")
field("compute_ms", "ms", "its compute", "infer")
field("tp_comm_ms", "ms", "its TP communication", "infer")
field("a2a_ms", "ms", "its expert all-to-all", "infer")
field("a2a_exposed_ms", "ms", "the all-to-all not hidden by two-batch overlap", "infer")
field("dispatch_ms", "ms", "the dispatch all-to-all", "infer")
field("combine_ms", "ms", "the combine all-to-all", "infer")
field("draft_ms", "ms", "the MTP draft", "infer")
field("spec_host_ms", "ms", "host work a speculative step, serial with the GPU", "infer")
field("dispatch_bytes", "B", "bytes a GPU dispatches per step", "infer")
field("combine_bytes", "B", "bytes a GPU combines per step", "infer")
field("remote_bytes", "B", "of those, bytes leaving the node", "infer")
field("result", "", "gp.infer's result for the chosen deployment", "infer_plan")
field("target", "tokens/s", "the output tokens/s the plan was asked for", "infer_plan")
field("itl_max", "s", "the limit on the mean ITL (itl_s) the plan keeps", "infer_plan")
field("ttft_max", "s", "the limit on TTFT (ttft_s) the plan keeps; absent without one", "infer_plan")

-- Collectives
field("op", "", "comm: all_reduce, all_gather, reduce_scatter, all_to_all, broadcast ...; "
  .. "roofline (with op): the operator priced, {time, t_compute, t_memory, t_launch (s), "
  .. "bound (compute or memory), intensity, ridge, ridge_peak (FLOP/B), compute_rate (FLOP/s), "
  .. "mem_rate (B/s), shape_eff, mem_eff}", "comm roofline")

-- The roofline (gp.roofline)
field("device", "", "the card as the engine prices it: id, name, memory (B), mem_bw (B/s), "
  .. "peak (FLOP/s per precision), gemm and hbm (the achievable fractions), launch and "
  .. "graph_launch (s a kernel), sms, the fused attention kernel's (attn_kernel, attn_fwd, "
  .. "attn_bwd ...) and the entry's other figures", "roofline")
field("ridges", "", "per precision with a peak and a GEMM fraction: {peak, achievable} "
  .. "ridge points (FLOP/B) and flops (the achievable FLOP/s)", "roofline")
field("infer", "", "with model: the gp.infer result the operators come from (its "
  .. "fits and why say when the model does not fit the card: ops is then empty)", "roofline")
field("bytes", "B", "the message size", "comm")
field("time", "s", "the collective's time", "comm")
field("latency", "s", "its latency term", "comm")
field("bw_time", "s", "its bandwidth term", "comm")
field("algbw", "B/s", "bytes / time", "comm")
field("busbw", "B/s", "algbw scaled as nccl-tests does (2(n-1)/n for all-reduce)", "comm")
field("proto", "", "NCCL's protocol (ll, ll128, simple)", "comm")
field("nodes", "count", "nodes the ranks span", "comm")
field("ppn", "count", "ranks per node; an uneven fill: the fewest on one of its nodes "
  .. "(12 GPUs on 8-GPU nodes are 8 + 4: ppn 4)", "comm")
field("launch_bound", "", "one thread driving several GPUs (gpus_per_thread) launched "
  .. "slower than the GPUs ran: the launches set the time", "comm")
field("system", "", "the node's id", "comm")
field("topology", "", "the topology as the engine read it", "comm")

-- The search
field("results", "", "the ranked layouts, best first (the plan fields)", "sweep")
field("stats", "", "per card: space (combinations), layouts (dividing the model, nodes and "
  .. "batch), bounded (skipped by the lower bound), fitting, within, errors (layouts the "
  .. "training step refused), unplaced (splits whose groups need more nodes than the job's), "
  .. "ungrouped (splits whose dp x cp the zero_group does not divide), expert_cut (MoE splits "
  .. "whose shard groups cut an expert group etp x ep), cache_hits (lookups the search's step cache answered), "
  .. "past_host (not fitting: "
  .. "the offload past a host's memory; host_least and host_memory: the least such host's "
  .. "bytes and its DRAM), past_gpu (not fitting: more than a GPU's budget; gpu_least and "
  .. "gpu_budget: the least such GPU's bytes and its budget)", "sweep")
field("key", "", "what the results are ranked by (time, cost, per_dollar, mfu, gpus)",
  "sweep")
field("score", "", "the rank's value, lower first", "plan candidate")
field("index", "count", "the layout's place in its card's enumeration", "plan candidate")
field("gpu_order", "count", "the card's place in the gpu list", "plan")

-- The 80% ranges (gpuplan.ranges): beside each field F that ranges.FIELDS
-- names for a kind, F_lo and F_hi in F's unit, in the results of that
-- kind that carry F; and `range`, where they came from.
local RANGED = { train = "train plan", rl = "rl", infer = "infer infer_plan", collective = "comm" }
field("range", "", "where the _lo/_hi ranges came from: {kind, level (0.8), cases, regime, "
  .. "novel (set when no published run is like the job)}", "train plan rl infer infer_plan comm")
do
  local ranged, names = {}, {}
  for kind, fields in pairs(require("gpuplan.ranges").FIELDS) do
    for name in pairs(fields) do
      local f = M.BY_NAME[name]
      for r in RANGED[kind]:gmatch("%S+") do
        if f and f.results[r] then
          if not ranged[name] then ranged[name] = {}; names[#names + 1] = name end
          ranged[name][#ranged[name] + 1] = r
        end
      end
    end
  end
  -- In the declaration order of F (the reference lists them so).
  local order = {}
  for i, f in ipairs(M.FIELDS) do order[f.name] = i end
  table.sort(names, function(a, b) return order[a] < order[b] end)
  for _, name in ipairs(names) do
    local rs = ranged[name]
    table.sort(rs)
    local f = M.BY_NAME[name]
    field(name .. "_lo", f.unit, "the 80% range's low end of " .. name, table.concat(rs, " "))
    field(name .. "_hi", f.unit, "its high end", table.concat(rs, " "))
  end
end

return M
