/*
 * rl_sched.c - an RL step's timeline (see rl.h): each phase's time but
 * the weight sync's, which pool runs each phase, the step's time from
 * them (colocated, disaggregated with or without staleness, PPO's
 * models on groups of their own), each pool's busy and idle time, and
 * the step's rates and cost.  Called in turn by rl.c's step.
 */
#include "rl_int.h"

#include <math.h>

/* Device-to-host copy into freshly allocated pageable memory, B/s: what
 * tensor.to("cpu") does, the host faulting in each new page as the copy
 * lands.  Measured 1.4 GB/s "Memcpy DtoH (Device -> Pageable)" against
 * 12.6 GB/s into pinned memory on an A100 (pytorch PR #138018, nsys of
 * torch.save's .cpu() copies).  The RL frameworks offload the optimizer
 * states so, a new CPU tensor each step: NeMo RL's Megatron worker
 * (move_optimizer: state[k] = v.to("cpu"), r0.5.0) and verl's
 * (offload_megatron_optimizer: v["exp_avg"].to("cpu", ...)); the
 * weights go to pinned buffers (Megatron-Core's param buffer
 * offload_to_cpu: pin_memory(); vLLM's sleep mode).  On a Grace
 * superchip (GB200) the GPU reaches pageable memory through the host's
 * page tables over NVLink-C2C ("On systems where
 * pageableMemoryAccessUsesHostPageTables is true, cudaMallocHost may not
 * page-lock the allocated memory", CUDA runtime API), and a copy from
 * populated pageable memory runs near the pinned one (GH200: 92.6 against
 * 97.4 GiB/s, vortex-data/vortex PR #7815); a copy into fresh pages still
 * faults each one in, and no measurement of that on Grace was found, so
 * this figure stands there too.  Grace kernels may fault in fewer, larger
 * pages ("The 64K page size can benefit the applications that allocate a
 * large amount of memory because there will be fewer page faults ... The
 * recommended default value for the page size is 64K", NVIDIA Grace
 * performance tuning guide, Operating System Settings), but neither that
 * guide nor any measurement found gives the rate of a copy into fresh
 * pageable memory on Grace, nor the page size the GB200 runs used. */
#define RL_PAGEABLE_D2H 1.4e9

/* verl's Megatron worker with megatron.param_offload (verl commit
 * 65c59c7, workers/megatron_workers.py and sharding_manager/
 * megatron_vllm.py) loads the actor's weights (load_megatron_model_to_gpu)
 * and offloads them again (offload_megatron_model_to_cpu) around each of
 * its three phases a step: the rollout's weight export (the sharding
 * manager's __enter__), compute_log_prob and update_actor.  The offload
 * is "buffer.param_data.cpu_data = buffer.param_data.data.cpu()
 * .pin_memory()" (utils/megatron_utils.py): a copy into fresh pageable
 * memory (RL_PAGEABLE_D2H) before the pinned one; the load a copy_ from
 * that pinned buffer at the host link's rate; the gradients are freed,
 * not copied. */
#define RL_PARAM_OUTS 3.0

/* An optimizer step of the update when each DP rank trains its own
 * share of the mini-batch (rl_cfg.rank_skew, or packed bins:
 * rl_pack_skew): the ranks meet at every step's gradient reduction, so
 * the step lasts as long as the busiest rank's forward and backward --
 * skew times the mean's -- before the reduction and the optimizer,
 * which do not scale with the tokens.  A forward-only pass so shared
 * ends when its busiest rank returns. */
static double rl_skewed(const train_result *u, double skew)
{
	double fixed = u->part[TRAIN_OPTIMIZER] + u->part[TRAIN_DP] +
		u->part[TRAIN_ZERO];

	return u->step + (skew - 1.0) * fmax(0.0, u->step - fixed);
}

/* The phases' times but the weight sync's; o: PPO's other models on
 * their own groups or of their own shapes (rl_others). */
void rl_phase_times(const rl_cfg *c, rl_result *out, double N,
		    const rl_others_t *o)
{
	const gp_layout *lay = &c->train.mem.lay;
	double dp = lay->dp > 0 ? lay->dp : 1;
	double epochs = c->epochs > 0 ? c->epochs : 1;
	double mb = c->minibatch > 0 ? c->minibatch : N;
	int packed = c->pack_tokens > 0 && !c->pad;
	/* Packed bins: as many a rank, not as many tokens; each pass
	 * waits for the rank with the most (rl.c rl_pack_skew).  The
	 * forwards pack the whole step at logprob_pack_tokens, else each
	 * mini-batch as the update does (rl_pass_cfgs). */
	double fwd = rl_skewed(&out->forward, !packed ? 1.0 :
			       c->logprob_pack_tokens > 0 ?
			       rl_pack_skew(c, c->logprob_pack_tokens, N,
					    (int)dp) :
			       rl_pack_skew(c, c->pack_tokens, mb, (int)dp));

	/* The framework's handling of the engine's outputs, token by
	 * token, once the batch returns: NeMo RL's vLLM worker (vllm_worker
	 * .py generate, r0.6.0) copies each generated token's
	 * log-probability into a CPU tensor one at a time
	 * (full_logprobs[position] = ...), 7.04 us a scalar assignment
	 * (pytorch PR #32841's indexing benchmark, "v[0] = 1").  Serial on
	 * each engine's worker after its decode: the busiest engine's
	 * samples x the mean response. */
	out->roll.post = out->roll.samples * c->response.mean *
		c->token_host;
	out->ph[RL_ROLLOUT].time = out->roll.prefill + out->roll.decode +
		out->roll.post;
	/* Each way at the host link, and the optimizer states (fp32
	 * master and moments) out into pageable memory at
	 * RL_PAGEABLE_D2H rather than the link's rate. */
	if (c->colocated && c->offload_states && c->offload_pinned) {
		/* verl's FSDP workers copy everything out with
		 * non_blocking=True (verl/utils/fsdp_utils.py at 94d681dce:
		 * offload_fsdp_optimizer "state[key] = value.to("cpu",
		 * non_blocking=True)", offload_fsdp2_model_to_cpu
		 * "param.data = param.data.to(torch.device("cpu"),
		 * non_blocking=True)"), which PyTorch allocates pinned
		 * ("bool pin_out = (non_blocking && self.is_cuda() &&
		 * options.device().is_cpu() ...)", _to_copy,
		 * aten/src/ATen/native/TensorConversions.cpp) from its
		 * caching host allocator, the same blocks step after step:
		 * each way at the link's rate, not RL_PAGEABLE_D2H. */
		out->ph[RL_SWAP].time = 2.0 * out->swap_bytes / c->host_bw;
	} else if (c->colocated && c->offload_states) {
		const gp_mem_result *mu = &out->mem[RL_MEM_UPDATE];
		double st = mu->bytes[GP_MEM_MASTER] +
			mu->bytes[GP_MEM_OPTIMIZER];

		out->ph[RL_SWAP].time = 2.0 * out->swap_bytes / c->host_bw +
			st * (1.0 / RL_PAGEABLE_D2H - 1.0 / c->host_bw);
	} else if (c->logprob_offload) {
		/* A training pool of its own that parks its optimizer
		 * states for the log-probability forwards: NeMo RL v0.4.0's
		 * prepare_for_lp_inference calls offload_before_refit
		 * (state[k] = v.to("cpu"), fresh pageable memory) and
		 * prepare_for_training moves them back (v.to("cuda")) every
		 * step, colocated or not; v0.5.0 keeps them on the GPU
		 * unless offload_optimizer_for_logprob (default false: "Only
		 * useful for non-colocated generation"), NeMo RL PR #1404:
		 * "logprob_inference_prep + training_prep ... QWEN3 30B: 13 s
		 * --> ~1 s".  Out at RL_PAGEABLE_D2H, back at the link. */
		const gp_mem_result *mu = &out->mem[RL_MEM_UPDATE];
		double st = mu->bytes[GP_MEM_MASTER] +
			mu->bytes[GP_MEM_OPTIMIZER];

		out->ph[RL_SWAP].time = st * (1.0 / RL_PAGEABLE_D2H +
					      1.0 / c->host_bw);
	} else {
		out->ph[RL_SWAP].time = 0.0;
	}
	/* The actor's weights out and in around each of its phases
	 * (RL_PARAM_OUTS), in place of the one round trip at the link's
	 * rate that offload_states counts for them. */
	if (c->colocated && c->param_offload && c->offload_pinned) {
		/* verl's FSDP worker (workers/fsdp_workers.py at 94d681dce)
		 * loads the actor (load_fsdp_model_to_gpu) before and
		 * offloads it after each of its phases a step -- the
		 * rollout sharding manager's weight export,
		 * compute_log_prob and update_actor -- and its parameters
		 * are the sharded fp32 master (the 16-bit copies exist
		 * only per all-gather, MixedPrecisionPolicy): RL_PARAM_OUTS
		 * round trips at the link's rate into pinned memory (above),
		 * one of them counted with offload_states. */
		const gp_mem_result *mu = &out->mem[RL_MEM_UPDATE];
		double w = mu->bytes[GP_MEM_WEIGHTS] + mu->bytes[GP_MEM_MASTER];

		out->ph[RL_SWAP].time += (RL_PARAM_OUTS -
			(c->offload_states ? 1.0 : 0.0)) * 2.0 * w / c->host_bw;
	} else if (c->colocated && c->param_offload) {
		double w = out->mem[RL_MEM_UPDATE].bytes[GP_MEM_WEIGHTS];

		out->ph[RL_SWAP].time += RL_PARAM_OUTS * w *
			(1.0 / RL_PAGEABLE_D2H + 1.0 / c->host_bw) -
			(c->offload_states ? 2.0 * w / c->host_bw : 0.0);
	}
	/* The log-probability forwards with their fp32 logits (rl.c
	 * rl_logits); a critic's or a reward model's forward has none. */
	out->ph[RL_LOGPROB].time = c->old_logprobs ?
		fwd + out->logit_forward : 0.0;
	/* A reference in host memory crosses the host link three times a
	 * step, the size of the policy's 16-bit weights each, at the
	 * link's rate: the policy's state dict out (use_reference_model:
	 * item.detach().to(device="cpu", non_blocking=True, copy=True),
	 * NeMo RL r0.6.0), which PyTorch allocates in pinned memory ("bool
	 * pin_out = (non_blocking && self.is_cuda() &&
	 * options.device().is_cpu() ...)", _to_copy, TensorConversions.cpp;
	 * its caching host allocator reuses the blocks step after step),
	 * then the reference's in from the pinned state dict
	 * setup_reference_model_state made the same way, and the policy's
	 * back (param.copy_). */
	if (c->ref_model && c->ref_host) {
		double w = out->mem[RL_MEM_UPDATE].bytes[GP_MEM_WEIGHTS];

		out->ph[RL_REF].time = fwd + out->logit_forward +
			3.0 * w / c->host_bw;
	} else {
		out->ph[RL_REF].time = c->ref_model ?
			fwd + out->logit_forward : 0.0;
	}
	/* The filter needs every generated group's rewards. */
	out->ph[RL_REWARD].time = c->reward_model ? (c->reward_shape ?
		o->act[RL_GRP_REWARD].fwd : fwd) * out->generated / N : 0.0;
	out->ph[RL_VALUES].time = !c->ppo ? 0.0 :
		c->critic_model || c->critic_batch > 0 ||
		c->critic_token_batch > 0 ?
		o->act[RL_GRP_CRITIC].fwd : fwd;
	/* ZeRO-3 parameter offload of the frozen models
	 * (rl_cfg.ref_reward_offload; DeepSpeed's offload_param, which
	 * DeepSpeed-Chat's --offload_reference_model and
	 * --offload_reward_model set in get_eval_ds_config).  Each rank's
	 * partition of a parameter (ds_tensor) stays in host memory, pinned
	 * ("pin_memory now defaults to true for both offload_param and
	 * offload_optimizer", docs/_pages/config-json.md), and every
	 * gather of the parameter for a module's forward copies it in
	 * first -- "dist.all_gather_into_tensor(flat_tensor,
	 * param.ds_tensor.to(get_accelerator().device_name()), ...)"
	 * (deepspeed/runtime/zero/partition_parameters.py _all_gather,
	 * DeepSpeed edaa722) -- and frees the gathered copy after the
	 * module runs: each forward call streams the rank's whole
	 * partition over the host link once, on the gather's path before
	 * the all-gather the forward already prices.  DeepSpeed-Chat
	 * calls the frozen models once per generated batch
	 * (generate_experience on each of the engine's static batches;
	 * otherwise the training micro-batch), the reward model on the
	 * generated share as its forward above. */
	if (c->ref_reward_offload) {
		double b = c->static_batch >= 1 ? c->static_batch :
			lay->micro_batch > 0 ? lay->micro_batch : 1;
		double calls = ceil(N / (dp * b));

		if (c->ref_model && !c->ref_host)
			out->ph[RL_REF].time += calls * out->frozen_in[0] /
				c->host_bw;
		if (c->reward_model)
			out->ph[RL_REWARD].time += calls * out->frozen_in[1] /
				c->host_bw * out->generated / N;
	}
	/* A loss run one sequence at a time (NeMo RL's
	 * SequencePackingLossWrapper, loss/wrapper.py r0.6.0, its default
	 * while sequence_packing.fuse_loss is off): per sequence the host
	 * dispatches loss_ops small PyTorch ops on [1, L] tensors, a
	 * dozen of them .item() reads that wait for the GPU, so the GPU
	 * idles through the host's eager op time for each (the actor's:
	 * GP_EAGER_OP_TIME on an x86 host, more on a slower one).  Every
	 * DP rank trains N x epochs / dp sequences a step; a pipeline's
	 * other stages wait for its last. */
	out->loss_host = N * epochs / dp * c->loss_ops *
		c->train.host_op_time;
	/* verl's dynamic batch: each rank's share of a mini-batch, mb /
	 * dp samples, an unbalanced draw (rl_rank_skew); NeMo RL's
	 * packed bins, as many a rank (rl_pack_skew). */
	out->rank_skew = c->rank_skew ? rl_rank_skew(&c->response,
		c->prompt_len, dp, mb / dp) : packed ?
		rl_pack_skew(c, c->pack_tokens, mb, (int)dp) : 1.0;
	/* PPO's advantage estimate in a Python loop over the response
	 * positions, "for t in reversed(range(...))" in DeepSpeed-Chat's
	 * ppo_trainer.get_advantages_and_returns (once per train_rlhf
	 * call: each training micro-batch of each epoch), OpenRLHF's
	 * experience_maker and verl's compute_gae_advantage_return: per
	 * position gae_ops small ops on [b] tensors, each an eager op's
	 * host time (the GPU work of a [b] op is below it), over the
	 * micro-batch's padded width -- the longest of its b responses. */
	out->gae_host = 0.0;
	if (c->ppo && c->gae_ops > 0) {
		double b = lay->micro_batch > 0 ? lay->micro_batch : 1;

		out->gae_host = ceil(N * epochs / (dp * b)) *
			rl_len_longest(&c->response, b) * c->gae_ops *
			c->train.host_op_time;
	}
	out->ph[RL_ACTOR].time = out->opt_steps *
		(rl_skewed(&out->update, out->rank_skew) +
		 out->logit_update) + out->loss_host + out->gae_host +
		out->ema_host;
	/* A critic of its own shape steps as its own model does; the
	 * per-sequence loss is the actor's; the advantage loop runs
	 * once a micro-batch, counted in the actor's phase, as is the
	 * actor's moving average (a critic has none); the fp32
	 * vocabulary logits are the policy's (a critic's value head
	 * has one output a token, no log-softmax). */
	out->ph[RL_CRITIC].time = !c->ppo ? 0.0 :
		c->critic_model || c->critic_batch > 0 ||
		c->critic_token_batch > 0 ?
		out->opt_steps * o->act[RL_GRP_CRITIC].upd :
		out->ph[RL_ACTOR].time - out->gae_host - out->ema_host -
		out->opt_steps * out->logit_update;
	/* On a group of its own a model runs at that group's layout (the
	 * reward model beside the critic at the critic's). */
	if (c->group_gpus[RL_GRP_REF])
		out->ph[RL_REF].time = o->grp[RL_GRP_REF].fwd;
	if (c->group_gpus[RL_GRP_REWARD] || c->critic_reward)
		out->ph[RL_REWARD].time = o->grp[RL_GRP_REWARD].fwd *
			out->generated / N;
	if (c->group_gpus[RL_GRP_CRITIC]) {
		out->ph[RL_VALUES].time = o->grp[RL_GRP_CRITIC].fwd;
		out->ph[RL_CRITIC].time = out->opt_steps *
			o->grp[RL_GRP_CRITIC].upd;
	}
}

/* The training pool's loop when PPO's other models have groups of their
 * own, in OpenRLHF's order (ppo_utils/experience_maker.py make_experience,
 * ray/ppo_actor.py ppo_train): the reference's, the critic's and the
 * reward model's forwards are launched in that order and the actor's
 * log-probabilities last, the driver waiting for each model that shares
 * the actor's GPUs (--colocate_actor_ref, --colocate_all_models) and,
 * with --colocate_critic_reward, for the critic's values before the
 * reward model starts beside it; then the critic trains on its group
 * while the actor updates and syncs its weights into the engines.  The
 * seconds of that loop without the sync: the forwards, the actor's
 * update (and a critic's on the actor's GPUs), the wait for a critic
 * still training after the actor's update and the sync, the framework's
 * host work. */
static double rl_group_loop(const rl_cfg *c, const rl_result *out,
			    double sync)
{
	const rl_phase_result *ph = out->ph;
	int crit = c->group_gpus[RL_GRP_CRITIC] > 0;
	int rew = c->group_gpus[RL_GRP_REWARD] > 0 || c->critic_reward;
	double t = 0, end = 0, upd;

	if (c->group_gpus[RL_GRP_REF])
		end = ph[RL_REF].time;
	else
		t += ph[RL_REF].time;
	if (crit && !c->critic_reward)
		end = fmax(end, t + ph[RL_VALUES].time);
	else
		t += ph[RL_VALUES].time;
	if (rew)
		end = fmax(end, t + ph[RL_REWARD].time);
	else
		t += ph[RL_REWARD].time;
	t = fmax(t + ph[RL_LOGPROB].time, end);
	upd = ph[RL_ACTOR].time;
	if (crit)
		upd += fmax(0.0, ph[RL_CRITIC].time - ph[RL_ACTOR].time -
			    sync);
	else
		upd += ph[RL_CRITIC].time;
	return t + upd + ph[RL_FRAMEWORK].time;
}

/* The step from its phases: which pool runs each, the step time, each
 * pool's busy and idle time. */
void rl_schedule(const rl_cfg *c, rl_result *out, double tgpus,
		 double rgpus, double sync)
{
	double tr, tt, idle_r, idle_t;
	int i, g, last;

	for (i = 0; i < RL_NPHASES; i++) {
		rl_phase_result *ph = &out->ph[i];

		g = i == RL_REF ? RL_GRP_REF : i == RL_REWARD ?
			(c->critic_reward ? RL_GRP_CRITIC : RL_GRP_REWARD) :
			i == RL_VALUES || i == RL_CRITIC ? RL_GRP_CRITIC : -1;

		ph->pool = c->colocated ? RL_POOL_BOTH :
			i == RL_ROLLOUT ? RL_POOL_ROLLOUT :
			i == RL_SYNC ? RL_POOL_BOTH : RL_POOL_TRAIN;
		ph->gpus = ph->pool == RL_POOL_ROLLOUT ? rgpus :
			ph->pool == RL_POOL_TRAIN || c->colocated ? tgpus :
			tgpus + rgpus;
		ph->mem = i == RL_ROLLOUT || (i == RL_SWAP && c->colocated) ?
			RL_MEM_ROLLOUT : i == RL_SWAP ? RL_MEM_FORWARD :
			i == RL_ACTOR || i == RL_CRITIC ? RL_MEM_UPDATE :
			RL_MEM_FORWARD;
		if (g >= 0 && c->group_gpus[g] > 0) {
			ph->pool = RL_POOL_REF + g;
			ph->gpus = c->group_gpus[g];
			ph->mem = RL_MEM_REF + g;
		}
	}
	tr = out->ph[RL_ROLLOUT].time;
	if (rl_any_group(c)) {
		tt = rl_group_loop(c, out, sync);
	} else {
		tt = out->ph[RL_FRAMEWORK].time;
		for (i = RL_LOGPROB; i <= RL_CRITIC; i++)
			tt += out->ph[i].time;
	}
	/* Separate pools: the training pool's own state moves
	 * (logprob_offload), on its side of the step. */
	if (!c->colocated)
		tt += out->ph[RL_SWAP].time;
	if (c->colocated) {
		out->step = tr + out->ph[RL_SWAP].time + tt + sync;
		idle_r = idle_t = 0;
	} else if (c->staleness) {
		out->step = fmax(tr, tt) + sync;
		idle_r = tr >= tt ? 0.0 : tt - tr;
		idle_t = tt >= tr ? 0.0 : tr - tt;
	} else {
		out->step = tr + tt + sync;
		idle_r = tt;
		idle_t = tr;
	}
	/* The training pool's idle on its last phase: the critic's update
	 * where the critic trains there, else the actor's (a critic on
	 * its own group is that group's). */
	last = c->ppo && out->ph[RL_CRITIC].pool < RL_POOL_REF ? RL_CRITIC :
		RL_ACTOR;
	out->ph[RL_ROLLOUT].idle = idle_r;
	out->ph[last].idle = idle_t;
	/* A model on a group of its own (OpenRLHF's --ref_num_gpus_per_node
	 * ...) runs its phases and waits out the rest of the step: its
	 * idle on its last phase, as the two pools' (it read 0: a
	 * reference group busy 3.9 s of a 31.8 s step showed no idle). */
	for (g = RL_POOL_REF; g <= RL_POOL_CRITIC; g++) {
		double busy = 0.0;
		int at = -1;

		for (i = 0; i < RL_NPHASES; i++) {
			if (out->ph[i].pool == g) {
				busy += out->ph[i].time;
				at = i;
			}
		}
		if (at >= 0)
			out->ph[at].idle = fmax(0.0, out->step - busy);
	}
	out->pool_gpus[RL_POOL_ROLLOUT] = rgpus;
	out->pool_gpus[RL_POOL_TRAIN] = tgpus;
	out->pool_busy[RL_POOL_ROLLOUT] = tr + sync +
		(c->colocated ? out->ph[RL_SWAP].time + tt : 0.0);
	out->pool_busy[RL_POOL_TRAIN] = tt + sync +
		(c->colocated ? out->ph[RL_SWAP].time + tr : 0.0);
	out->pool_idle[RL_POOL_ROLLOUT] = idle_r;
	out->pool_idle[RL_POOL_TRAIN] = idle_t;
}

/* Throughputs and cost of the step. */
void rl_rates(const rl_cfg *c, rl_result *out, double N)
{
	out->samples_per_s = N / out->step;
	out->tokens_per_s = N * (c->prompt_len + c->response.mean) /
		out->step;
	out->tokens_per_s_gpu = out->tokens_per_s / out->gpus;
	out->gen_tokens_per_s = out->generated * c->response.mean /
		out->step;
	if (c->price > 0) {
		out->cost_step = gp_gpu_hours_cost(out->step, out->gpus,
						   c->price);
		out->cost_1k_prompts = out->cost_step / c->prompts * 1000.0;
	}
}
