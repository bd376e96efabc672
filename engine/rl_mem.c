/*
 * rl_mem.c - the RL step's memory per GPU in its three phases (update,
 * forwards, rollout) and on the models' own groups, and whether it fits
 * (rl_int.h).
 */
#include "rl_int.h"

#include <stdio.h>
#include <string.h>

/* A training step's states per GPU: weights, gradients, master copy,
 * optimizer moments and adapter. */
static double rl_states(const gp_mem_result *m)
{
	return m->bytes[GP_MEM_WEIGHTS] + m->bytes[GP_MEM_GRADS] +
		m->bytes[GP_MEM_MASTER] + m->bytes[GP_MEM_OPTIMIZER] +
		m->bytes[GP_MEM_ADAPTER];
}

/* DeepSpeed ZeRO-2/3 (mu's gradients by phase, mem_ds_zero_phases): a
 * state between the step and the next backward -- the rollout, the
 * log-prob forwards -- holds no fp32 gradient, only what the optimizer
 * keeps then (stage 3: its 16-bit partition buffer and flat bucket;
 * stages 1 and 2: nothing); gather: its gathered layers and buffers.  Other
 * stacks keep the update's gradients as they are (Megatron's DDP grad
 * buffer is made once, with the model, and kept unless offloaded:
 * rl_rollout_cap). */
static void rl_ds_between(const gp_mem_result *mu, double gather,
			  gp_mem_result *m)
{
	double g;

	if (mu->ds_grad_phase != 1 && mu->ds_grad_phase != 2)
		return;
	/* partition elements: the phase's bytes over its bytes each */
	g = mu->ds_grad_bytes > 0 ? mu->bytes[GP_MEM_GRADS] /
		mu->ds_grad_bytes : 0.0;
	m->bytes[GP_MEM_GRADS] = mu->ds_idle_grads;
	m->bytes[GP_MEM_PARAM_GATHER] = gather;
	m->ds_grad_phase = 3;
	m->ds_grad_bytes = g > 0 ? mu->ds_idle_grads / g : 0.0;
}

/* The gradient bytes the update's states leave resident beside the
 * rollout engine (rl_ds_between's, with stage 3's bucket). */
static double rl_idle_grads(const gp_mem_result *mu)
{
	if (mu->ds_grad_phase == 1 || mu->ds_grad_phase == 2)
		return mu->ds_idle_grads + mu->ds_idle_bucket;
	return mu->bytes[GP_MEM_GRADS];
}

/* The update pass's memory with the frozen models and the critic added
 * (o: those of their own shape); returns the critic's bytes. */
double rl_frozen(const rl_cfg *c, const rl_others_t *o, rl_result *out)
{
	const gp_layout *lay = &c->train.mem.lay;
	gp_mem_result *mu = &out->mem[RL_MEM_UPDATE];
	double frozen, states, critic;

	/* Memory.  The frozen reference and reward models are laid out
	 * like the actor, 16-bit (sharded under ZeRO-3); PPO's critic has
	 * the actor's states, its update after the actor's -- or, of a
	 * shape of its own, its own model's (rl_others). */
	*mu = out->update.mem;
	frozen = mu->params * 2.0 / (lay->zero == 3 ? lay->dp *
		(lay->cp > 0 ? lay->cp : 1) : 1.0);
	states = rl_states(c->critic_model || c->critic_batch > 0 ||
		c->critic_token_batch > 0 ?
			   &o->act[RL_GRP_CRITIC].mem : mu);
	/* A model on a group of its own holds none of the actor's GPUs. */
	critic = c->ppo && !c->group_gpus[RL_GRP_CRITIC] ? states : 0.0;
	mu->bytes[GP_MEM_REF] = c->ref_model && !c->ref_host &&
		!c->group_gpus[RL_GRP_REF] ? frozen : 0.0;
	mu->bytes[GP_MEM_REWARD] = c->reward_model &&
		!c->group_gpus[RL_GRP_REWARD] && !c->critic_reward ?
		(c->reward_shape ? o->act[RL_GRP_REWARD].frozen : frozen) :
		0.0;
	/* ZeRO-3 parameter offload (rl_cfg.ref_reward_offload): each
	 * rank's partition of the frozen models waits in host memory, the
	 * GPU holds only the layer its forward gathers (below the
	 * activations' margin). */
	out->frozen_in[0] = out->frozen_in[1] = 0.0;
	if (c->ref_reward_offload) {
		out->frozen_in[0] = mu->bytes[GP_MEM_REF];
		out->frozen_in[1] = mu->bytes[GP_MEM_REWARD];
		mu->bytes[GP_MEM_REF] = mu->bytes[GP_MEM_REWARD] = 0.0;
	}
	mu->bytes[GP_MEM_CRITIC] = critic;
	/* What else the actor's GPUs keep in their hosts' memory, beside
	 * the actor's own offload (mu->cpu_bytes, ZeRO-Offload's), for as
	 * long as the job runs -- every phase's host check holds it
	 * (rl_host_fits, memory.h mem_host_fit):
	 *  - ref_host: the reference's 16-bit weights, the pinned state
	 *    dict NeMo RL's setup_reference_model_state keeps on the CPU
	 *    (rl_sched.c), laid out as the GPU would hold them (frozen);
	 *  - ref_reward_offload: the frozen models' ZeRO-3 partitions in
	 *    DeepSpeed's offload_param pinned buffers (frozen_in);
	 *  - a critic on these GPUs whose states offload as the actor's do
	 *    (its GPU bytes above leave them out: DeepSpeed-Chat's
	 *    --offload and OpenRLHF's --adam_offload configure both
	 *    models): its own host bytes, part by part. */
	if (c->ref_model && c->ref_host && !c->group_gpus[RL_GRP_REF]) {
		mu->host_weights += frozen;
		mu->cpu_bytes += frozen;
	}
	mu->host_weights += out->frozen_in[0] + out->frozen_in[1];
	mu->cpu_bytes += out->frozen_in[0] + out->frozen_in[1];
	if (c->ppo && !c->group_gpus[RL_GRP_CRITIC]) {
		const gp_mem_result *cm = c->critic_model ||
			c->critic_batch > 0 || c->critic_token_batch > 0 ?
			&o->act[RL_GRP_CRITIC].mem : &out->update.mem;

		mu->host_weights += cm->host_weights;
		mu->host_grads += cm->host_grads;
		mu->host_master += cm->host_master;
		mu->host_optimizer += cm->host_optimizer;
		mu->cpu_bytes += cm->host_weights + cm->host_grads +
			cm->host_master + cm->host_optimizer;
	}
	/* The actor's moving average (DeepSpeed-Chat's --enable_ema, rl.c
	 * rl_ema): a 16-bit copy laid out as the reference, on the GPUs
	 * through every phase -- nothing offloads it. */
	mu->bytes[GP_MEM_EMA] = c->ema_tensors > 0 ? frozen : 0.0;
	/* The hybrid engine's own fused q, k and v (rl.c rl_qkv_copy):
	 * the only weights of the engine beside the trainer's, held while
	 * the trainer runs too. */
	mu->bytes[GP_MEM_ROLLOUT_WEIGHTS] = out->qkv_copy;
	return critic;
}

/* The bytes per GPU the rollout engine may use. */
double rl_rollout_cap(const rl_cfg *c, const gp_mem_result *mu,
		      double critic)
{
	const gp_mem_reserve *rs = &c->train.reserve;
	double usable, resident = 0, cap;

	/* The rollout engine's memory: what the trainer leaves (colocated:
	 * its states stay, unless offloaded; its activations are freed),
	 * or a whole GPU of its own. */
	usable = c->train.capacity * (1.0 - rs->margin) - rs->context -
		rs->workspace - rs->comm;
	if (c->colocated) {
		/* Offloaded (NeMo RL's colocated Megatron worker,
		 * offload_after_refit): the 16-bit weights go to pinned
		 * host memory, the grads are freed (Megatron's
		 * offload_to_cpu resizes their storage to 0: nothing
		 * moves), the optimizer states and the frozen models go to
		 * the host; only an adapter stays. */
		resident = mu->bytes[GP_MEM_ADAPTER] + mu->bytes[GP_MEM_EMA] +
			mu->bytes[GP_MEM_ROLLOUT_WEIGHTS];
		/* An engine on the actor's own modules (shared_weights)
		 * generates with the trainer's weights: they are the
		 * engine's, which it takes from the cap itself
		 * (rollout.c: the KV budget is the cap less the engine's
		 * weights), so they are not resident beside it. */
		if (!c->offload_states && !c->shared_weights)
			resident += mu->bytes[GP_MEM_WEIGHTS];
		if (!c->offload_states)
			resident += rl_idle_grads(mu) +
				mu->bytes[GP_MEM_MASTER] +
				mu->bytes[GP_MEM_OPTIMIZER] +
				mu->bytes[GP_MEM_REF] +
				mu->bytes[GP_MEM_REWARD] + critic;
	}
	cap = usable - resident * (1.0 + rs->frag);
	/* vLLM sizes its pool from its own share of the card: weights,
	 * peak activations, the non-torch memory (its CUDA context, NCCL
	 * buffers) and KV within gpu_memory_utilization x total memory
	 * (vllm/v1/worker/gpu_worker.py determine_available_memory:
	 * requested_memory - non_kv_cache_memory); the engine's reserve
	 * counts its context and buffers inside it. */
	if (c->engine_memory > 0 && c->engine_memory < cap)
		cap = c->engine_memory;
	return cap;
}

/* The rollout phase's memory, and what swaps between the engines when
 * they share the GPUs. */
void rl_rollout_mem(const rl_cfg *c, rl_result *out, double critic)
{
	gp_mem_result *mu = &out->mem[RL_MEM_UPDATE];
	gp_mem_result *mr = &out->mem[RL_MEM_ROLLOUT];
	int i;

	memset(mr, 0, sizeof *mr);
	if (c->colocated) {
		mr->bytes[GP_MEM_ADAPTER] = mu->bytes[GP_MEM_ADAPTER];
		mr->bytes[GP_MEM_EMA] = mu->bytes[GP_MEM_EMA];
		if (!c->offload_states) {
			for (i = GP_MEM_WEIGHTS; i <= GP_MEM_OPTIMIZER; i++)
				mr->bytes[i] = mu->bytes[i];
			/* DeepSpeed ZeRO-2/3: what stays between steps */
			rl_ds_between(mu, mu->ds_idle_bucket, mr);
			/* the trainer's weights are the engine's, counted
			 * once, as the engine's (below) */
			if (c->shared_weights)
				mr->bytes[GP_MEM_WEIGHTS] = 0;
			mr->bytes[GP_MEM_REF] = mu->bytes[GP_MEM_REF];
			mr->bytes[GP_MEM_REWARD] = mu->bytes[GP_MEM_REWARD];
			mr->bytes[GP_MEM_CRITIC] = critic;
		}
		/* Each way per step: the trainer's weights, optimizer states
		 * and frozen models while the engine generates; the engine's
		 * weights while the trainer runs (vLLM sleep level 1, as
		 * NeMo RL's vllm_worker and verl's hybrid engine call it:
		 * weights backed up in host memory, KV cache discarded). */
		out->swap_bytes = c->offload_states ?
			mu->bytes[GP_MEM_WEIGHTS] + mu->bytes[GP_MEM_MASTER] +
			mu->bytes[GP_MEM_OPTIMIZER] + mu->bytes[GP_MEM_REF] +
			mu->bytes[GP_MEM_REWARD] + critic +
			(c->engine_released ? 0.0 : out->roll.weights) : 0.0;
		/* what waits in host memory while the engine generates:
		 * what the trainer keeps there always (rl_frozen: its
		 * offload, the frozen models' and the critic's) and its
		 * parked tensors (none unless offloaded) */
		mr->cpu_bytes = mu->cpu_bytes + (c->offload_states ?
			out->swap_bytes - (c->engine_released ? 0.0 :
					   out->roll.weights) : 0.0);
		mr->params = mu->params;
		/* the engine's weights beside the trainer's while it
		 * trains, or parked; an engine on the actor's own modules
		 * has none of its own, and one that gathers them for each
		 * generate (engine_released) none left after it: DeepSpeed's
		 * hybrid engine under ZeRO-3 (runtime/hybrid_engine.py
		 * v0.9.0 generate) gathers the layers (GatheredParameters,
		 * its ZeRO-3 partitions back to empty on exit) and, at
		 * inference_tp_size > 1, cuts each rank's slices into
		 * tensors of the inference containers that it frees after
		 * the generate ("for layer_id in range(len(
		 * self.layer_params)): self._inference_containers[
		 * layer_id].release_memory()": containers/base.py deletes
		 * the sliced attention and MLP weights and points the
		 * module back at the training tensors). */
		if (c->engine_released)
			;
		else if (c->offload_states)
			mu->cpu_bytes += out->roll.weights;
		else if (!c->shared_weights)
			mu->bytes[GP_MEM_ROLLOUT_WEIGHTS] = out->roll.weights;
	}
	mr->bytes[GP_MEM_ROLLOUT_WEIGHTS] = out->roll.weights + out->qkv_copy;
	mr->bytes[GP_MEM_KV] = out->roll.kv_peak;
	mr->bytes[GP_MEM_WORKSPACE] = out->roll.workspace;
}

/* Total the three phases' memory against the budget; whether it fits
 * and, when not, why. */
void rl_mem_fits(const rl_cfg *c, rl_result *out)
{
	gp_mem_result *mu = &out->mem[RL_MEM_UPDATE];
	gp_mem_result *mf = &out->mem[RL_MEM_FORWARD];
	gp_mem_result *mr = &out->mem[RL_MEM_ROLLOUT];
	gp_mem_reserve rs = c->train.reserve;
	int g;

	mem_finish(mu, c->train.capacity, &rs, 0.0);
	/* The forward passes keep no activations for a backward. */
	*mf = *mu;
	mf->bytes[GP_MEM_ACTIVATIONS] = 0;
	mf->bytes[GP_MEM_RECOMPUTE] = 0;
	mf->bytes[GP_MEM_VISION] = 0;
	mf->bytes[GP_MEM_PIPE_BUFFERS] = 0;
	/* DeepSpeed ZeRO-2/3: no fp32 gradient; stage 3's layers gathered
	 * with its kept buffers, stage 2's buckets not made */
	rl_ds_between(mu, mu->ds_fwd_gather, mf);
	mem_finish(mf, c->train.capacity, &rs, 0.0);
	/* The engine's weights and its KV pool are allocated once at
	 * start-up and kept (memory_infer.c's rule, by which the engine
	 * sized the pool): no fragmentation on them. */
	mem_finish(mr, c->train.capacity, &rs,
		   mr->bytes[GP_MEM_ROLLOUT_WEIGHTS] + mr->bytes[GP_MEM_KV]);
	out->fits = out->why[0] == 0 && mu->fits && mr->fits;
	/* The training state first: what it holds is also what leaves the
	 * rollout engine no room. */
	if (!mu->fits)
		snprintf(out->why, sizeof out->why, "training: needs %.1f "
			 "GiB per GPU, the budget is %.1f GiB",
			 mu->total / 1073741824.0, mu->budget / 1073741824.0);
	else if (out->why[0] == 0 && !mr->fits)
		snprintf(out->why, sizeof out->why, "rollout: needs %.1f "
			 "GiB per GPU, the budget is %.1f GiB",
			 mr->total / 1073741824.0, mr->budget / 1073741824.0);
	for (g = 0; g < RL_NGRP; g++) {
		gp_mem_result *mg = &out->mem[RL_MEM_REF + g];

		if (!c->group_gpus[g])
			continue;
		mem_finish(mg, c->train.capacity, &rs, 0.0);
		if (!mg->fits && out->fits)
			snprintf(out->why, sizeof out->why, "%s: needs %.1f "
				 "GiB per GPU, the budget is %.1f GiB",
				 rl_pool_name(RL_POOL_REF + g),
				 mg->total / 1073741824.0,
				 mg->budget / 1073741824.0);
		out->fits = out->fits && mg->fits;
	}
	/* A rollout that cannot run (no decode steps) leaves the step
	 * without its longest phase: say what held the memory, after what
	 * else does not fit -- unless the engine said why itself (one
	 * sequence, or one static batch, beyond its KV budget). */
	if (!(out->roll.steps > 0) &&
	    strncmp(out->why, "rollout engine: ", 16) != 0) {
		char was[sizeof out->why];
		int keep = out->why[0] && strncmp(out->why, "rollout", 7);
		int n;

		memcpy(was, out->why, sizeof was);
		n = snprintf(out->why, sizeof out->why, "%s%srollout: no room "
			     "for the engines' KV cache (%.1f GiB per GPU held "
			     "before it, the budget is %.1f GiB)",
			     keep ? was : "", keep ? "; " : "",
			     mr->total / 1073741824.0,
			     mr->budget / 1073741824.0);
		/* An earlier cause and this one past why[] (each is ~80
		 * bytes; a pool's name and two figures) end on "...", said
		 * cut, not on half a word. */
		if (n < 0 || n >= (int)sizeof out->why)
			memcpy(out->why + sizeof out->why - 4, "...", 4);
	}
}

void rl_host_fits(const gp_topo *t, const rl_cfg *c, double gpus,
		  rl_result *out)
{
	static const int ph[] = { RL_MEM_UPDATE, RL_MEM_FORWARD,
				  RL_MEM_ROLLOUT, RL_MEM_REF, RL_MEM_REWARD,
				  RL_MEM_CRITIC };
	gp_mem_result *worst = NULL;
	int i;

	/* The trainer's phases on its gpus; a model on a group of its own
	 * (ref_gpus, reward_gpus, critic_gpus) on that group's, its own
	 * offload (a critic trained with the actor's offload) held by its
	 * own hosts. */
	for (i = 0; i < 6; i++) {
		gp_mem_result *o = &out->mem[ph[i]];
		int was = o->fits, g = ph[i] - RL_MEM_REF;

		if (i >= 3 && !c->group_gpus[g])
			continue;
		mem_host_fit(o, t->host_memory, t->gpus_per_node,
			     t->host_gpus, i >= 3 ? c->group_gpus[g] : gpus);
		if (was && !o->fits && (!worst ||
		    o->host_need > worst->host_need))
			worst = o;
	}
	if (!worst || !out->fits)
		return;
	out->fits = 0;
	snprintf(out->why, sizeof out->why, "host memory: the offload "
		 "holds %.1f GiB on a host of %d GPUs, which has %.1f GiB",
		 worst->host_need / 1073741824.0, worst->host_ranks,
		 worst->host_memory / 1073741824.0);
}
