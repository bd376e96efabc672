/*
 * rl.h - one step of RL fine-tuning (GRPO, PPO): rollouts on the serving
 * model, the forward passes of the policy, reference, reward model and
 * critic, the actor (and critic) update through the training step, and
 * the weight sync from the trainer to the rollout engines -- on one
 * colocated pool or on two pools (rollout and training) pipelined with
 * one step of staleness.
 *
 * Each phase is priced by the model that owns it: the rollout by
 * infer_step / infer_run (infer.h) at the rollout engine's TP with a
 * response-length distribution whose longest response sets the tail;
 * the forward passes and updates by train_step (train.h) on the actor's
 * placed layout; the weight sync by comm_group_cost (comm.h) on groups
 * placed from that layout.  Memory is reported per phase state (rollout,
 * forward, update) on the most loaded GPU of each pool.
 *
 * Units: seconds, bytes, tokens, samples (one response to one prompt).
 * Caller-owned structs; nothing allocates; GP_OK or GP_EINVAL with the
 * reason in err.  A step that does not fit memory is a result (fits = 0
 * and why), not an error.
 */
#ifndef GP_RL_H
#define GP_RL_H

#include "comm.h"
#include "common.h"
#include "infer.h"
#include "memory.h"
#include "model.h"
#include "roofline.h"
#include "train.h"

/* How response lengths spread around their mean. */
typedef enum rl_len_dist {
	RL_LEN_FIXED = 0,   /* every response is `mean` tokens */
	RL_LEN_UNIFORM,     /* uniform on [2 mean - max, max] */
	RL_LEN_EXP,         /* exponential clipped at max (responses that
			     * hit the generation limit pile up there), its
			     * scale set so the clipped mean is `mean` */
	RL_LEN_COUNT
} rl_len_dist;

typedef struct rl_lengths {
	rl_len_dist dist;
	double mean;        /* tokens, >= 1 */
	double max;         /* the generation limit, >= mean; fixed: 0 or
			     * mean */
	double clip;        /* exp: the share of responses cut at max (they
			     * never ended), in [0, 1); 0: the exponential's
			     * own e^{-max/theta} */
	double theta;       /* exp: the exponential's scale, solved from
			     * mean, max and clip by rl_lengths_prepare
			     * (once per distribution: the functions below
			     * read it); else 0 */
} rl_lengths;

/* "fixed", "uniform", "exp"; "?" out of range. */
const char *rl_len_dist_name(int d);
/* GP_OK and *out, or GP_EINVAL naming the known ones. */
int rl_len_dist_parse(const char *s, rl_len_dist *out, gp_error *err);

/* Check a length distribution -- mean in [1, 2^24], max in [mean,
 * 2^24] (fixed: 0 or mean), uniform with 2 mean - max >= 1, exp with
 * mean < max -- and solve an exponential's scale into l->theta (a
 * bisection of ~60 expm1 calls): call it once after setting dist, mean,
 * max and clip, before the functions below.  GP_OK, or GP_EINVAL with
 * theta 0. */
int rl_lengths_prepare(rl_lengths *l, gp_error *err);

/* Check a prepared distribution: the ranges above and, exp, that
 * l->theta solves its mean under max and clip (one expm1; a missing or
 * stale scale is an error naming rl_lengths_prepare).  GP_OK or
 * GP_EINVAL. */
int rl_lengths_check(const rl_lengths *l, gp_error *err);

/* P(L > t), the share of responses still generating after t tokens;
 * l prepared and valid (rl_lengths_check). */
double rl_len_survival(const rl_lengths *l, double t);

/* E[L^2] in tokens^2; l prepared and valid. */
double rl_len_moment2(const rl_lengths *l);

/* The longest a response may be: max, or mean for fixed lengths. */
double rl_len_limit(const rl_lengths *l);

/* The expected longest of n responses: where n P(L > t) = 1, clipped
 * to the distribution's range (the generation limit when n responses
 * are expected to reach it); l prepared and valid, n >= 1. */
double rl_len_longest(const rl_lengths *l, double n);

/* The busiest of dp ranks against the mean when each trains k sequences
 * drawn at random from lengths p + l (rl_cfg.rank_skew): 1 + z(dp)
 * sd / (mean sqrt(k)).  1 for fixed lengths or one rank; l prepared. */
double rl_rank_skew(const rl_lengths *l, double p, double dp, double k);

/* The expected time of Megatron-Core's non-interleaved pipeline
 * schedule over p stages and m micro-batches (forward-only, or 1F1B
 * with the backward fb times the forward) when each micro-batch holds k
 * sequences of prompt + l tokens drawn at random, over its time with
 * every micro-batch at the mean; each exchange a rendezvous of the two
 * neighbours (rl_pipe.c).  Averaged over a fixed-seed sample of draws:
 * deterministic.  1 for fixed lengths, p < 2 or a bad argument. */
double rl_pipe_stretch(const rl_lengths *l, double prompt, int k, int p,
		       long m, int fwd_only, double fb);

/* The phases of a step, in the order they run. */
typedef enum rl_phase {
	RL_ROLLOUT = 0,     /* generation: prefill and decode */
	RL_SWAP,            /* colocated: trainer states to host memory and
			     * back (offload_states) */
	RL_LOGPROB,         /* the policy's forward over the samples (old
			     * log-probabilities) */
	RL_REF,             /* the reference model's forward (KL term) */
	RL_REWARD,          /* a reward model's forward */
	RL_VALUES,          /* PPO: the critic's forward */
	RL_ACTOR,           /* the actor's optimizer steps */
	RL_CRITIC,          /* PPO: the critic's optimizer steps */
	RL_SYNC,            /* trainer weights into the rollout engines */
	RL_FRAMEWORK,       /* the framework's host work between the phases
			     * (data collation, rewards, actor calls):
			     * rl_cfg.step_overhead */
	RL_NPHASES
} rl_phase;

/* Stable names: "rollout", "offload", "logprob", "reference", "reward",
 * "values", "actor_update", "critic_update", "weight_sync",
 * "framework". */
const char *rl_phase_name(int p);

/* The rollout engine's host work per engine step (vLLM V1's engine loop:
 * scheduling, input preparation, the copy of the sampled tokens back and
 * the outputs' Python objects), in seconds: step + seq x the sequences
 * the step holds.  Serial with the GPU's work of the step (overlap 0:
 * they add), or prepared while the GPU runs the previous step (overlap
 * 1, vLLM --async-scheduling: the longer of the two).  gaps: seconds
 * each decode step's forward adds to the serving model's operators on
 * the GPU's timeline -- no overlap hides them: what it loses between the
 * pieces of a piecewise CUDA graph (vLLM before 0.11: attention runs
 * outside the captured pieces), or the kernels DeepSpeed's hybrid engine
 * launches beyond those operators (gp.rl's HYBRID_EXTRA_LAYER_KERNELS).
 * serial: seconds each step the host works while the GPU waits, whatever
 * overlap says -- a generation loop that reads a device value back every
 * step (Hugging Face generate()'s stopping check under DeepSpeed-Chat's
 * hybrid engine) dispatches the next step's first ops and the last ones
 * of its own, each too small on the GPU to hide the host's time. */
typedef struct rl_engine_host {
	double step;        /* s per engine step, >= 0 */
	double seq;         /* s per sequence in the step, >= 0 */
	int overlap;        /* 0 or 1 */
	int own_rounds;     /* static batches: 1, each engine's rounds
			     * end at its own batch's longest response
			     * (OpenRLHF's actor ranks generate their
			     * micro-batches on their own, no collective
			     * between them until the update); 0, every
			     * round waits for the longest of all the
			     * engines' batches (DeepSpeed-Chat trains
			     * each generation batch, all ranks in step) */
	double gaps;        /* s per decode step's forward, >= 0 */
	double serial;      /* s per engine step, >= 0, after the rest */
	double cache_copies; /* >= 0: the KV cache's bytes each decode
			     * step moves beyond the attention's own read,
			     * as a multiple of the cache the batch holds
			     * (Hugging Face generate's DynamicCache cat and
			     * FlashAttention-2 unpad copies); part of the
			     * GPU's step; 0 for a paged engine */
	double wait_copies; /* 0..cache_copies: of those passes, the ones
			     * the host waits for soon after issuing them:
			     * a generate() loop whose every layer reads a
			     * device value back (transformers'
			     * _get_unpad_data: nonzero, .item()) just
			     * after its cache's torch.cat */
	double wait_lead;   /* s per decode step, >= 0: what the host
			     * dispatches between issuing those passes and
			     * its wait, summed over the layers.  The host's
			     * path a decode step is then its dispatch plus
			     * what of those passes outlasts the lead; the
			     * step, the longer of that path and the GPU's
			     * (overlap 1) */
} rl_engine_host;

/* Pools and the memory states of a step. */
enum {
	RL_POOL_ROLLOUT = 0, RL_POOL_TRAIN, RL_POOL_BOTH,
	RL_POOL_REF, RL_POOL_REWARD, RL_POOL_CRITIC  /* a model's own group */
};
/* "rollout", "train", "both", "reference", "reward", "critic" */
const char *rl_pool_name(int pool);
enum {
	RL_MEM_ROLLOUT = 0, RL_MEM_FORWARD, RL_MEM_UPDATE,
	RL_MEM_REF, RL_MEM_REWARD, RL_MEM_CRITIC,   /* the own groups' */
	RL_NMEM
};

/* PPO's other models on GPU groups of their own (OpenRLHF's Ray
 * placement: --ref_num_gpus_per_node, --reward_num_gpus_per_node,
 * --critic_num_gpus_per_node), by rl_cfg.group_gpus[]: */
enum { RL_GRP_REF = 0, RL_GRP_REWARD, RL_GRP_CRITIC, RL_NGRP };

typedef struct rl_cfg {
	train_cfg train;    /* the actor's training step: its layout
			     * (train.mem.lay: the training pool's GPUs),
			     * recipe, recompute, micro-batch, overlaps,
			     * capacity and reserve; mem.seq, global_batch,
			     * forward_only, tokens and price are set here */
	infer_cfg roll;     /* one rollout engine: weight_bits, kv_bytes,
			     * compute, tp and pp (the rollout TP), runtime,
			     * max_batch, max_num_tokens, topo for its TP;
			     * gpus, input, output, batch, concurrency and
			     * capacity are set here */
	int rollout_ep;     /* the rollout engine's expert parallelism: 1
			     * (experts sliced by roll.tp) or roll.tp
			     * (vLLM's enable_expert_parallel: each
			     * expert whole on one GPU; rl_rollout_step);
			     * 0 = 1 */
	int rollout_dp_attention; /* 1: the engine's attention data-
			     * parallel over its GPUs (SGLang's
			     * --enable-dp-attention; rollout_ep > 1):
			     * each GPU attends to its own sequences with
			     * the attention weights whole */
	int ppo;            /* 1: PPO (critic forward and update) */
	int ref_model;      /* 1: a frozen reference (KL penalty) */
	int reward_model;   /* 1: a reward model (reward_shape: its own,
			     * else the actor's); 0: rule-based rewards
			     * (no GPU time) */
	int old_logprobs;   /* 1: the trainer recomputes the rollout
			     * policy's log-probabilities (verl, NeMo RL,
			     * OpenRLHF do) */
	double prompts;     /* prompts per step, >= 1 */
	double group;       /* responses per prompt (GRPO G), >= 1 */
	double prompt_len;  /* tokens per prompt, >= 1 */
	rl_lengths response; /* prepared (rl_lengths_prepare) */
	double minibatch;   /* samples per optimizer step; 0 = all of
			     * them (one step) */
	double epochs;      /* passes over the samples; 0 = 1 */
	int pad;            /* 1: a training sequence is padded to the
			     * longest response; 0: packed to its length */
	int pad_batch;      /* 1: each micro-batch's sequences padded to
			     * its own longest response (the expected
			     * longest of micro_batch draws), attention
			     * over the real tokens (FlashAttention-2
			     * unpads) */
	double pack_tokens; /* > 0: each mini-batch's sequences packed
			     * into micro-batches of at most this many
			     * tokens by first-fit decreasing (NeMo RL's
			     * sequence packing: max_total_sequence_length
			     * x train_micro_batch_size); a pipeline
			     * (pp > 1) pads each to the full bin; 0 = the
			     * layout's micro_batch sequences at the mean */
	double logprob_pack_tokens; /* > 0 with pack_tokens: the forwards
			     * over the step's samples (the old policy's
			     * and the reference's log-probabilities)
			     * packed into bins of this many tokens (NeMo
			     * RL's logprob_mb_tokens: max_total_sequence_
			     * length x logprob_batch_size); 0 = pack_tokens */
	double token_batch; /* > 0: micro-batches cut by tokens (verl's
			     * use_dynamic_bsz, this its
			     * ppo_max_token_len_per_gpu): each DP rank
			     * splits its share of a mini-batch into
			     * ceil(its tokens / (token_batch x cp))
			     * micro-batches of balanced token sums, the
			     * count the ranks' largest, unpadded under
			     * pp > 1 (rl.c rl_token_bins); 0 = the
			     * layout's micro_batch sequences at the mean */
	int colocated;      /* 1: one pool, phases alternate */
	int rollout_gpus;   /* disaggregated: GPUs of the rollout pool */
	int staleness;      /* disaggregated: 1 = step k+1's rollouts run
			     * while step k trains (one step off-policy);
			     * s >= 2 = the prompts of s steps in flight at
			     * once (trajectories up to s steps old: the
			     * engines never drain, rl_rollout_step's
			     * ahead); 0 = each pool waits for the other */
	int refit_drain;    /* disaggregated, staleness 1: each refit waits
			     * for every pending generation (NeMo RL without
			     * in_flight_weight_updates), so every step's
			     * batch drains alone; 0 = the refits do not
			     * wait, and the next step's prompt groups enter
			     * the engines as the current step's end
			     * (rollout.c roll_inflight) */
	int offload_states; /* colocated: during the rollout every trainer
			     * tensor but the actor's 16-bit weights waits
			     * in host memory */
	int logprob_offload; /* separate pools: the training pool's optimizer
			      * states go to host memory before the
			      * log-probability forwards and come back for
			      * the update, each step (NeMo RL v0.4.0's
			      * prepare_for_lp_inference) */
	int param_offload;  /* colocated: the actor's 16-bit weights leave
			     * the GPU after each of its phases (verl's
			     * megatron.param_offload: after the rollout's
			     * weight export, the log-probabilities and the
			     * update, RL_PARAM_OUTS a step) into fresh
			     * pageable host memory, loaded back before
			     * each */
	int offload_pinned; /* colocated, offload_states or param_offload:
			     * every copy out lands in pinned host memory
			     * at the link's rate, and the parameters that
			     * go out and back around each phase are the
			     * fp32 master (verl's FSDP workers:
			     * .to("cpu", non_blocking=True)) */
	int rank_skew;      /* 1: each DP rank trains its own unbalanced
			     * share of a mini-batch and every optimizer
			     * step waits for the rank with the most tokens
			     * (verl's dynamic batch: the step's batch is
			     * balanced over the ranks, its mini-batches
			     * are not; rl_rank_skew); 0: the shares are
			     * even, or packed (pack_tokens) as its bins
			     * deal them (rl_pack_skew) */
	int count_split;    /* 1: under pp > 1, each micro-batch is the
			     * next micro_batch sequences of the mini-batch
			     * at their own random lengths (verl's Megatron
			     * actor without use_dynamic_bsz: "micro_batches
			     * = mini_batch.batch.split(micro_batch_size)"),
			     * and the pipeline's neighbours wait for each
			     * other at every exchange (rl_pipe_stretch);
			     * 0: every micro-batch at the mean length.  Not
			     * with pad, pack_tokens or token_batch */
	int ref_host;       /* 1: the reference's 16-bit weights live in
			     * host memory and are swapped into the
			     * policy's for its forward (NeMo RL's Megatron
			     * worker, use_reference_model): the policy's
			     * out, the reference's in, the policy's back */
	int ref_reward_offload; /* 1: the reference's and the reward
				 * model's ZeRO-3 partitions live in host
				 * memory (DeepSpeed's offload_param,
				 * DeepSpeed-Chat's --offload_reference_model
				 * and --offload_reward_model): none of their
				 * weights stay on the GPU, and each of their
				 * forwards copies every rank's partition in
				 * over the host link (rl_sched.c) */
	double host_bw;     /* B/s per GPU to host memory (its PCIe link);
			     * needed with offload_states or ref_host */
	double engine_memory; /* bytes per GPU the rollout engine may hold
			       * (vLLM's gpu_memory_utilization x the
			       * card); 0 = all that is left */
	rl_engine_host host;  /* the rollout engine's host work per step;
			       * zero = none */
	double step_overhead; /* s per RL step of the framework's host work
			       * between the phases (RL_FRAMEWORK), on the
			       * critical path: the whole step colocated,
			       * the training pool's loop otherwise */
	double loss_ops;    /* the actor's loss run one trained sequence at
			     * a time (NeMo RL's sequence-packing loss
			     * wrapper): the PyTorch ops the host
			     * dispatches per sequence, each an eager op's
			     * host time (GP_EAGER_OP_TIME) with the GPU
			     * idle; 0 = one loss per micro-batch, inside
			     * the training step's price */
	double fwd_bwd_scale; /* the training engine's forward and backward
			       * compute (both passes: the update and the
			       * log-probability forwards), its recompute
			       * and the pipeline bubble they set, times
			       * this: a framework's passes measured slower
			       * than the training stack's own on the same
			       * tokens (NeMo RL: 1.1); 0 or 1 = as priced */
	int fp32_logits;    /* the actor's log-probabilities computed from
			     * the vocabulary logits materialized in fp32,
			     * unfused, the softmax kept for the backward
			     * (NeMo RL's DistributedLogprob), in every
			     * pass; with loss_ops and pack_tokens each
			     * packed sequence's loss also narrows the
			     * micro-batch's logits (rl.c rl_logits);
			     * 0 = the training model's fused loss */
	int logit_onehot;   /* with fp32_logits: the backward builds the
			     * chosen tokens' int64 one-hot over the
			     * vocabulary (NeMo RL v0.3.0) */
	double gae_ops;     /* PPO's advantage estimate (GAE) as a Python
			     * loop over the response positions, once per
			     * training micro-batch: the PyTorch ops the
			     * host dispatches per position, each an eager
			     * op's host time (rl_sched.c); 0 = none */
	double ema_tensors; /* the actor's exponential moving average
			     * (DeepSpeed-Chat's --enable_ema): a 16-bit
			     * copy of the actor on each of its GPUs,
			     * updated after each training micro-batch by a
			     * loop over the actor's parameter tensors, this
			     * many (rl.c rl_ema); 0 = none */
	int sync_tp_first;  /* the weight sync gathers each tensor whole
			     * over TP, then broadcasts it over the
			     * pipeline (NeMo RL v0.3.0's gather_params):
			     * the pipeline moves whole tensors; 0 = the
			     * stages' TP slices, gathered to the engine's
			     * (rl_sync.c) */
	int sync_fp8_cast;  /* the engine casts every 16-bit weight the sync
			     * sends it to fp8 itself, the whole tensor on
			     * every rank, before keeping its slice (NeMo
			     * RL's fp8 generation, v0.4.0 on:
			     * fp8.load_weights); 0 = the weights arrive in
			     * the engine's format (rl_sync.c) */
	double sync_host;   /* s a weight sync spends exporting the
			     * trainer's weights tensor by tensor (verl's
			     * Megatron export into vLLM's load_weights:
			     * each tensor broadcast, gathered, converted
			     * and loaded one at a time), on top of its
			     * bytes; 0 = bucketed, bytes only */
	double engine_fuse; /* s a step's weight syncs spend adding the
			     * actor's LoRA adapters into the engine's
			     * weights (DeepSpeed's hybrid engine:
			     * _fuse_lora on every gathered layer before
			     * each generate, _unfuse_lora after it where
			     * the weights outlive it), on top of the sync's
			     * bytes; 0 = none */
	double ipc_transfer; /* s per staging-buffer hand-off of a colocated
			      * weight sync that streams the whole 16-bit
			      * model through a CUDA-IPC buffer of a share
			      * of the GPU's free memory (NeMo RL's refit
			      * from v0.4: rl.c rl_ipc_transfers), on top
			      * of its bytes and sync_host; 0 = none */
	double token_host;  /* s of the framework's host work per generated
			     * token once the engine returns its batch
			     * (turning outputs into tensors), serial on
			     * each engine's worker; 0 = none */
	double keep;        /* DAPO's dynamic sampling (Yu et al. 2025, sec.
			     * 3.2): the share of generated prompt groups
			     * the filter keeps (a group whose rewards all
			     * agree has no advantage and is dropped); the
			     * rollout over-samples to ceil(prompts / keep)
			     * groups, the rewards score them all, the
			     * forwards and updates see the kept prompts x
			     * group.  0 or 1 = no filter; else (0, 1) */
	double price;       /* per GPU-hour; 0 = no cost figures */
	double val_prompts; /* > 0: also price a validation pass (verl's
			     * _validate inside the step's timer): the
			     * rollout of val_prompts prompts of one answer
			     * each over the step's engines (ceil per
			     * engine) and the step's weight sync, into
			     * rl_result.val_*; nothing trained; 0: none */
	double val_batch;   /* > 0: the validation prompts go to the engines
			     * in batches of this many, one after another,
			     * each its own generate call with its own
			     * weight sync (verl's data.val_batch_size: the
			     * val dataloader's batch); 0: all at once */
	double static_batch; /* >= 1: the rollout engine generates static
			      * batches of this many sequences (DeepSpeed-
			      * Chat's hybrid engine: rl_rollout_step); 0:
			      * continuous batching (vLLM, SGLang) */
	int shared_weights; /* 1: the rollout engine generates on the
			     * actor's own modules and holds no weights of
			     * its own (OpenRLHF without vLLM engines:
			     * openrlhf/models/actor.py generate calls
			     * self.model.generate on the rank's ZeRO-2
			     * copy): the trainer's weights are the
			     * engine's (rl_mem.c) */
	int engine_qkv_copy; /* with shared_weights: the engine also holds
			     * the attention's q, k and v fused into a copy
			     * of its own (DeepSpeed's hybrid engine at ZeRO
			     * 0-2: rl.c rl_qkv_copy), on the GPUs through
			     * every phase */
	int engine_released; /* 1: the rollout engine's weights exist
			     * only while it generates: DeepSpeed's hybrid
			     * engine under ZeRO-3 gathers the actor's
			     * layers for generate and frees what it built
			     * from them after (rl_mem.c rl_rollout_mem);
			     * its TP slices are cut from the gathered whole
			     * tensors on each rank (rl_sync.c) */
	int group_gpus[RL_NGRP]; /* GPUs of the reference's, the reward
			     * model's and the critic's own groups, each
			     * laid out as the actor (tp, pp, cp; dp from
			     * its GPUs); 0 = on the actor's GPUs */
	int critic_reward;  /* 1: the reward model on the critic's group
			     * (OpenRLHF --colocate_critic_reward) */
	const gp_model *critic_model; /* PPO's critic, a model of its own
			     * (DeepSpeed-Chat: an OPT-350M critic beside
			     * an OPT-13B actor), laid out as the actor;
			     * NULL = the actor's shape.  The caller keeps
			     * it while c is used */
	const gp_model *reward_shape; /* the reward model's (reward_model
			     * 1), as critic_model */
	double critic_batch; /* > 0: PPO's critic on the actor's GPUs cuts
			     * its passes into micro-batches of this many
			     * sequences, not the actor's token cuts or
			     * packing (verl: critic.ppo_micro_batch_size_
			     * per_gpu with critic.use_dynamic_bsz False);
			     * its forward and update priced as its own
			     * passes; 0 = the actor's */
	double pad_to;      /* > 0: every training sequence of the actor's
			     * passes takes this many slots (verl without
			     * use_remove_padding: prompts left-padded to
			     * max_prompt_length, responses to
			     * max_response_length), the attention over
			     * the real tokens only; >= prompt_len + the
			     * response limit; 0 = packed (pad, pad_batch
			     * otherwise) */
	double critic_pad_to; /* > 0: the same for the critic's own
			     * micro-batches (critic_batch or
			     * critic_token_batch) */
	double critic_token_batch; /* > 0: PPO's critic on the actor's
			     * GPUs cuts its passes by this many real
			     * tokens a micro-batch, not the actor's cuts
			     * (verl's critic use_dynamic_bsz with its own
			     * ppo_max_token_len_per_gpu); 0 = none */
} rl_cfg;

/* Defaults: GRPO with a reference and old log-probabilities, colocated,
 * one epoch, packed, staleness 1, the train and infer defaults. */
void rl_defaults(rl_cfg *c);

typedef struct rl_phase_result {
	double time;        /* s per step */
	double idle;        /* s the phase's GPUs wait after it for the
			     * other pool (disaggregated) */
	double gpus;        /* GPUs running it */
	int pool;           /* RL_POOL_* */
	int mem;            /* RL_MEM_* it runs in */
} rl_phase_result;

typedef struct rl_rollout {
	double engines;     /* rollout engines (tp * pp GPUs each) */
	double samples;     /* responses of the busiest engine */
	double prompts;     /* distinct prompts it prefills */
	double batch;       /* sequences it decodes at once at most: all
			     * of its samples, or what the KV budget and
			     * max_batch admit */
	int queued;         /* 1: the KV budget or max_batch cannot hold
			     * them all at their longest: requests wait,
			     * or are preempted and recomputed (rollout.c's
			     * scheduler) */
	double preempted;   /* requests evicted when the cache filled */
	double recompute;   /* s re-prefilling them on readmission */
	double prefill;     /* s */
	double prefill_stall; /* DP attention: the prompts admitted while
			     * the engine decodes take this many times
			     * their own prefill (every rank waits for
			     * each rank's chunk: serve_prefill_stall);
			     * 1 otherwise */
	double decode;      /* s */
	double tail;        /* s of the rollout after 90% of the samples
			     * have finished: the long responses alone */
	double longest;     /* tokens of the longest response expected */
	double steps;       /* decode steps */
	double mean_batch;  /* generated tokens / decode steps */
	double itl_first;   /* s of the first decode step (full batch) */
	double itl_last;    /* s of the last step (the longest alone; fixed lengths: all) */
	double host;        /* s of the decode the engine's host work adds
			     * (rl_engine_host; 0 when none or hidden) */
	double sampler;     /* s of the decode spent sampling with the
			     * tokens' log-probabilities beyond the
			     * serving model's sampling pass */
	double kv_budget;   /* bytes per GPU the engine has for KV */
	double kv_peak;     /* bytes per GPU the KV cache reaches */
	double weights;     /* bytes per GPU of the engine's weights */
	double workspace;   /* bytes per GPU of its prefill activations */
	double gen_tokens_per_s; /* generated tokens/s of the pool while
				  * it generates */
	double post;        /* s after the decode: the framework's handling
			     * of the busiest engine's tokens
			     * (rl_cfg.token_host) */
} rl_rollout;

typedef struct rl_result {
	double step;        /* s per RL step */
	rl_phase_result ph[RL_NPHASES];
	rl_rollout roll;
	double gpus;        /* all GPUs of the job */
	double pool_gpus[2], pool_busy[2], pool_idle[2]; /* by RL_POOL_ */
	double samples;     /* responses trained on per step */
	double generated;   /* responses generated per step (samples, or
			     * more under dynamic sampling: rl_cfg.keep) */
	double train_seq;   /* tokens per training sequence (packed: per
			     * micro-batch) */
	double pack_bins;   /* packed or cut by tokens (token_batch):
			     * micro-batches per optimizer step, all DP
			     * ranks (0: neither) */
	double opt_steps;   /* optimizer steps per RL step */
	double samples_per_s;
	double tokens_per_s;     /* prompt + response tokens of the step's
				  * samples per second, whole job */
	double tokens_per_s_gpu;
	double gen_tokens_per_s; /* generated response tokens per second
				  * (the filtered ones included) */
	double rank_skew;   /* the busiest DP rank's tokens of a mini-batch
			     * over the mean's (rl_cfg.rank_skew; packed:
			     * rl_pack_skew; else 1) */
	double pipe_update; /* the update's pipelined work (compute,
			     * recompute, TP/CP/EP, p2p and bubble) over
			     * its price at the mean micro-batch
			     * (rl_cfg.count_split: rl_pipe_stretch; else
			     * 1) */
	double pipe_forward; /* the same of the forward-only passes */
	double loss_host;   /* s of the actor update the per-sequence loss
			     * adds (rl_cfg.loss_ops) */
	double gae_host;    /* s the advantage estimate's loop adds
			     * (rl_cfg.gae_ops) */
	double ema_host;    /* s the moving average's updates add to the
			     * actor's update (rl_cfg.ema_tensors) */
	double logit_update; /* s the fp32 logits add to an optimizer step
			      * of the actor (rl_cfg.fp32_logits) */
	double logit_forward; /* s they add to a forward over the samples */
	double ipc_transfers; /* staging-buffer hand-offs of the weight
			       * sync (rl_cfg.ipc_transfer; 0: none) */
	double swap_bytes;  /* per GPU, each way (RL_SWAP) */
	double frozen_in[2]; /* with ref_reward_offload: bytes per GPU
			      * each forward of the reference ([0]) and of
			      * the reward model ([1]) copies in from host
			      * memory, its ZeRO-3 partition */
	double qkv_copy;    /* bytes per GPU of the engine's own fused
			     * q, k and v (rl_cfg.engine_qkv_copy) */
	double sync_bytes;  /* per rollout GPU: its slice of the weights */
	double cost_step;   /* price units per step (0: no price) */
	double cost_1k_prompts;
	double val_rollout; /* s of the validation pass's rollout
			     * (rl_cfg.val_prompts; 0: none) */
	double val_sync;    /* s of its weight sync: the step's */
	int fits;           /* every phase fits its GPUs */
	char why[256];      /* when not */
	gp_mem_result mem[RL_NMEM]; /* most loaded GPU in each state (the
				     * own groups': zero when there are
				     * none) */
	train_result update; /* one optimizer step of the actor */
	train_result forward; /* one forward pass over all samples */
} rl_result;

/* The rollout phase alone (rollout.c): prompts x group responses of
 * prompt_len + resp tokens on `engines` engines of roll->tp x roll->pp
 * GPUs (roll: one engine's infer_cfg; its gpus, input, output, batch and
 * capacity are set here; ep: 1, its experts sliced by its TP, or
 * roll->tp with pp 1, each expert whole on one GPU and every step the
 * serving model's MoE step, serve_step_time), each GPU with cap bytes
 * for the engine's weights, workspace and KV cache; host: the engine's
 * host work per step (NULL: none); resp prepared (rl_lengths_prepare);
 * static_batch >= 1: the engine generates static batches of that many
 * sequences, each decoded at the full batch until the longest of all
 * those generated together ends (Hugging Face generate, DeepSpeed-Chat's
 * hybrid engine), else 0: continuous batching (vLLM); ahead: 0 the step
 * waits for every engine (its longest of all the responses), 1 an engine
 * decodes its own samples to their longest, a >= 2 the prompts of a
 * steps are in flight, so the engine's queue never empties and the
 * step's samples decode at the running batch with no drain (continuous
 * batching), or, when longer, their drain alone over a (rollout.c
 * roll_alone: a step's batch has a steps to end); inflight with ahead
 * 1: the refits do not wait for the engines, so the next step's prompt
 * groups enter them as the current step's end and the step's tail runs
 * under them (rollout.c roll_inflight).  Every decode step
 * also samples with temperature and returns each sampled token's
 * log-probability, which RL needs (see rollout.c).  GP_OK with *o filled
 * and why[] empty, or naming what does not fit (why holds 160 bytes);
 * GP_EINVAL for bad input. */
int rl_rollout_step(const gp_model *m, const roof_device *d,
		    const infer_cfg *roll, int ep, int dp_attention,
		    const rl_engine_host *host,
		    double static_batch, const rl_lengths *resp,
		    double prompts, double group, double prompt_len,
		    double engines, int ahead, int inflight, double cap,
		    rl_rollout *o, char *why, gp_error *err);

/* One RL step of model m (actor; reference, reward model and critic of
 * its shape) on device d in topology t.  GP_OK with *out filled, or
 * GP_EINVAL: invalid model, layout or lengths, samples not a multiple
 * of the data-parallel micro-batches or of the mini-batch, a rollout TP
 * that does not divide its pool, ... */
int rl_step(const gp_model *m, const roof_device *d, const gp_topo *t,
	    const rl_cfg *c, rl_result *out, gp_error *err);

/* A caller-owned memo for a loop that prices many steps of one model on
 * one device and topology (a Lua job, a sweep): the training passes'
 * memos (train.h train_cache; the update and the forward each keep
 * their own phase) and the last RL_ROLL_MEMO rollouts by their inputs.
 * A rollout depends on the engine's config, the lengths, the samples,
 * the engines and the memory the trainer leaves it, not on the actor's
 * micro-batch or recomputation, so layouts that differ in those share
 * it.  Zero it before the first step (memset); about 2 x
 * sizeof(train_cache) bytes. */
#define RL_ROLL_MEMO 32

typedef struct rl_roll_key {
	infer_cfg roll;
	int ep, dp_attention;
	rl_engine_host host;
	double static_batch;
	rl_lengths resp;
	double prompts, group, prompt_len, engines, cap;
	int ahead, inflight;
} rl_roll_key;

typedef struct rl_cache {
	train_cache update, forward;
	int stepped;            /* the train memos hold m, d and t */
	int nroll, next_roll;
	long roll_hits, roll_misses;
	struct rl_roll_memo {
		rl_roll_key key;        /* zeroed, then filled: bytes */
		rl_rollout out;
		char why[160];
	} roll[RL_ROLL_MEMO];
} rl_cache;

/* rl_step with its training passes and its rollout memoised in *cache,
 * for one model, device and topology: the first call's are kept and
 * later ones are not compared with them (the caller vouches, as for
 * train_step_next).  The same results as rl_step. */
int rl_step_cached(const gp_model *m, const roof_device *d,
		   const gp_topo *t, const rl_cfg *c, rl_cache *cache,
		   rl_result *out, gp_error *err);

/* Disaggregated: the split of `gpus` between the rollout pool (a
 * multiple of the engine's tp * pp) and the training pool (a multiple of
 * the layout's tp * pp * cp) with the shortest step among those that
 * fit, else the shortest.  c->train.mem.lay.dp and c->rollout_gpus are
 * ignored; *out is that split's step (out->pool_gpus says the split).
 * GP_EINVAL when no split is valid. */
int rl_best_split(const gp_model *m, const roof_device *d,
		  const gp_topo *t, const rl_cfg *c, int gpus,
		  rl_result *out, gp_error *err);

#endif
