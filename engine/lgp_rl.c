/*
 * lgp_rl.c - core.rl: one RL step's config read through its field
 * description and its result pushed through descriptions; and
 * core.rl_job: an RL step's job resolved once (model, device, topology
 * and the step's config) and stepped per actor layout from Lua, with the
 * memo of rl.h (rl_cache), as core.train_job is for training.
 */
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "lgp_int.h"

/* ---- rl ---- */

static const char *const rl_mems[RL_NMEM] = {
	"rollout", "forward", "update", "reference", "reward", "critic"
};

/* What core.rl's reader fills: the config, the caller's storage for
 * the rollout engine's TP topology and the critic's and the reward
 * model's shapes (the config points at them), and split_gpus. */
typedef struct rl_in {
	rl_cfg c;
	gp_stage_store *st;      /* the actor's stage list (the caller's) */
	gp_topo *rt;
	gp_model *own;
	int split;
} rl_in;

/* The value at v, a table: "<path> must be a table" otherwise. */
static void rl_table(lua_State *L, int v, const char *path)
{
	if (lua_type(L, v) != LUA_TTABLE)
		luaL_error(L, "%s must be a table (got %s)", path,
			   luaL_typename(L, v));
}

/* train = a training-step config, as core.train's. */
static void c_rl_train(lua_State *L, int v, void *dst, const char *path)
{
	rl_table(L, v, path);
	lgp_totraincfg(L, v, &((rl_in *)dst)->c.train, ((rl_in *)dst)->st);
}

/* rollout = an engine config, as core.infer's. */
static void c_rl_rollout(lua_State *L, int v, void *dst, const char *path)
{
	rl_in *in = dst;

	rl_table(L, v, path);
	lgp_forget(L, v);
	lgp_toserve(L, v, &in->c.roll, in->rt);
	lgp_strict(L, v, 0, path);
}

/* critic_model, reward_shape = a model of its own, as core.model's
 * argument (absent: the actor's shape). */
static void c_rl_critic(lua_State *L, int v, void *dst, const char *path)
{
	rl_in *in = dst;

	(void)path;
	lgp_tomodel(L, v, &in->own[0]);
	in->c.critic_model = &in->own[0];
}

static void c_rl_reward(lua_State *L, int v, void *dst, const char *path)
{
	rl_in *in = dst;

	(void)path;
	lgp_tomodel(L, v, &in->own[1]);
	in->c.reward_shape = &in->own[1];
}

LGP_PARSER(p_rl_dist, rl_len_dist_parse, rl_len_dist)

/* core.rl's config (see lgp_rl): an absent field keeps rl_defaults'. */
#define RL_NUM(n, m) F_NUM(n, offsetof(rl_in, c.m), 0)
#define RL_INT(n, m, lo) F_INT(n, offsetof(rl_in, c.m), 0, lo, INT_MAX)
#define RL_BOOL(n, m) F_BOOL(n, offsetof(rl_in, c.m), 0)
static const lgp_field rl_cfg_fields[] = {
	F_REQCUSTOM("train", c_rl_train),
	F_REQCUSTOM("rollout", c_rl_rollout),
	RL_BOOL("ppo", ppo),
	RL_BOOL("ref_model", ref_model),
	RL_BOOL("reward_model", reward_model),
	RL_BOOL("old_logprobs", old_logprobs),
	F_REQNUM("prompts", offsetof(rl_in, c.prompts)),
	RL_NUM("group", group),
	RL_NUM("prompt_len", prompt_len),
	F_REQNUM("response_len", offsetof(rl_in, c.response.mean)),
	RL_NUM("response_max", response.max),
	F_PARSE("response_dist", offsetof(rl_in, c.response.dist), p_rl_dist,
		NULL),
	RL_NUM("response_clip", response.clip),
	RL_NUM("minibatch", minibatch),
	RL_NUM("epochs", epochs),
	RL_BOOL("pad", pad),
	RL_BOOL("pad_batch", pad_batch),
	RL_NUM("pack_tokens", pack_tokens),
	RL_NUM("logprob_pack_tokens", logprob_pack_tokens),
	RL_NUM("token_batch", token_batch),
	RL_BOOL("colocated", colocated),
	RL_INT("rollout_gpus", rollout_gpus, 0),
	RL_INT("rollout_ep", rollout_ep, 1),
	RL_BOOL("rollout_dp_attention", rollout_dp_attention),
	RL_INT("staleness", staleness, 0),
	RL_BOOL("refit_drain", refit_drain),
	RL_BOOL("offload_states", offload_states),
	RL_BOOL("param_offload", param_offload),
	RL_BOOL("offload_pinned", offload_pinned),
	RL_BOOL("logprob_offload", logprob_offload),
	RL_BOOL("ref_host", ref_host),
	RL_BOOL("ref_reward_offload", ref_reward_offload),
	RL_BOOL("rank_skew", rank_skew),
	RL_BOOL("count_split", count_split),
	RL_NUM("host_bw", host_bw),
	RL_NUM("engine_memory", engine_memory),
	RL_NUM("price", price),
	RL_NUM("engine_host_step", host.step),
	RL_NUM("engine_host_seq", host.seq),
	RL_BOOL("engine_host_overlap", host.overlap),
	RL_BOOL("engine_static_own", host.own_rounds),
	RL_NUM("engine_graph_gaps", host.gaps),
	RL_NUM("engine_host_serial", host.serial),
	RL_NUM("engine_cache_copies", host.cache_copies),
	RL_NUM("engine_wait_copies", host.wait_copies),
	RL_NUM("engine_wait_lead", host.wait_lead),
	RL_NUM("step_overhead", step_overhead),
	RL_NUM("loss_ops", loss_ops),
	RL_NUM("fwd_bwd_scale", fwd_bwd_scale),
	RL_NUM("gae_ops", gae_ops),
	RL_NUM("ema_tensors", ema_tensors),
	RL_BOOL("fp32_logits", fp32_logits),
	RL_BOOL("logit_onehot", logit_onehot),
	RL_BOOL("sync_tp_first", sync_tp_first),
	RL_BOOL("sync_fp8_cast", sync_fp8_cast),
	RL_NUM("token_host", token_host),
	RL_NUM("sync_host", sync_host),
	RL_NUM("engine_fuse", engine_fuse),
	RL_NUM("ipc_transfer", ipc_transfer),
	RL_NUM("keep", keep),
	RL_NUM("val_prompts", val_prompts),
	RL_NUM("val_batch", val_batch),
	RL_NUM("critic_batch", critic_batch),
	RL_NUM("pad_to", pad_to),
	RL_NUM("critic_pad_to", critic_pad_to),
	RL_NUM("critic_token_batch", critic_token_batch),
	RL_INT("ref_gpus", group_gpus[RL_GRP_REF], 0),
	RL_INT("reward_gpus", group_gpus[RL_GRP_REWARD], 0),
	RL_INT("critic_gpus", group_gpus[RL_GRP_CRITIC], 0),
	RL_BOOL("colocate_critic_reward", critic_reward),
	RL_NUM("static_batch", static_batch),
	RL_BOOL("engine_shared_weights", shared_weights),
	RL_BOOL("engine_qkv_copy", engine_qkv_copy),
	RL_BOOL("engine_released", engine_released),
	F_CUSTOM("critic_model", c_rl_critic),
	F_CUSTOM("reward_shape", c_rl_reward),
	F_INT("split_gpus", offsetof(rl_in, split), 0, 0, INT_MAX),
	F_END
};
#undef RL_NUM
#undef RL_INT
#undef RL_BOOL
static const lgp_desc rl_cfg_desc = { "rl", rl_cfg_fields };

/* core.rl's config at idx into c (see lgp_rl), the rollout engine's TP
 * topology into *rt (c->roll points at it: the caller keeps it while c
 * is used), the critic's and the reward model's own shapes into own[0]
 * and own[1] (c points at them likewise); returns split_gpus. */
int lgp_torlcfg(lua_State *L, int idx, rl_cfg *c, gp_topo *rt,
		gp_model own[2], gp_stage_store *st)
{
	rl_in in;

	luaL_checktype(L, idx, LUA_TTABLE);
	lgp_forget(L, idx);
	rl_defaults(&in.c);
	in.rt = rt;
	in.st = st;
	in.own = own;
	in.split = 0;
	lgp_read(L, idx, 0, &rl_cfg_desc, &in, 0);
	lgp_strict(L, idx, idx, "rl");
	/* The lengths' scale, solved once here for every step priced with
	 * c (a job's too); bad lengths leave it 0 and rl_step names them. */
	rl_lengths_prepare(&in.c.response, NULL);
	*c = in.c;
	return in.split;
}

/* core.rl's result: its scalars and its rollout's under their Lua names
 * (lua/gpuplan/rl.lua reads them; results.lua declares gp.rl's). */
#define RR(n) O_NUM(#n, rl_result, n)
#define RC(n) O_CNT(#n, rl_result, n)
static const lgp_field rl_result_fields[] = {
	O_NUM("step", rl_result, step), O_BOOL("fits", rl_result, fits),
	/* gpus, samples and generated are counts: an integer where whole,
	 * as gp.rl's (rl_job:step{}:table() gave gpus 16.0) */
	RC(gpus), RC(samples), RC(generated), RC(train_seq), RC(pack_bins),
	RC(opt_steps), RR(samples_per_s), RR(tokens_per_s),
	RR(tokens_per_s_gpu), RR(gen_tokens_per_s), RR(loss_host),
	RR(gae_host), RR(ema_host), RR(pipe_update), RR(pipe_forward),
	RR(logit_update), RR(logit_forward),
	RC(ipc_transfers), RR(val_rollout), RR(val_sync), RR(swap_bytes),
	RR(sync_bytes), RR(cost_step),
	RR(cost_1k_prompts),
	F_END
};
#undef RR
#undef RC
static const lgp_desc rl_result_desc = { "rl result", rl_result_fields };
#define RO(n) O_NUM(#n, rl_rollout, n)
static const lgp_field rl_rollout_fields[] = {
	/* counts: integers where whole */
	O_CNT("engines", rl_rollout, engines),
	O_CNT("samples", rl_rollout, samples),
	O_CNT("prompts", rl_rollout, prompts),
	O_CNT("batch", rl_rollout, batch),
	O_BOOL("queued", rl_rollout, queued), RO(prefill), RO(prefill_stall),
	RO(decode),
	/* tokens, decode steps and requests: counts too (1024, not
	 * 1024.0; preempted an expected count, a fraction where it is one) */
	RO(tail), O_CNT("longest", rl_rollout, longest),
	O_CNT("steps", rl_rollout, steps), RO(mean_batch), RO(itl_first),
	RO(itl_last), O_CNT("preempted", rl_rollout, preempted), RO(recompute),
	RO(host), RO(sampler),
	RO(kv_budget), RO(kv_peak), RO(weights), RO(workspace),
	RO(gen_tokens_per_s), RO(post),
	F_END
};
#undef RO
static const lgp_desc rl_rollout_desc = { "rl rollout", rl_rollout_fields };

/* core.rl's result table of out, pushed. */
void lgp_pushrl(lua_State *L, const rl_result *out)
{
	int i;

	lua_createtable(L, 0, 32);
	lgp_push(L, &rl_result_desc, out);
	if (!out->fits)
		lgp_setstr(L, "why", out->why);
	lua_createtable(L, RL_NPHASES, 0);
	for (i = 0; i < RL_NPHASES; i++) {
		const rl_phase_result *ph = &out->ph[i];

		lua_createtable(L, 0, 6);
		lgp_setstr(L, "name", rl_phase_name(i));
		lgp_setnum(L, "seconds", ph->time);
		lgp_setnum(L, "idle", ph->idle);
		lgp_setcount(L, "gpus", ph->gpus);
		lgp_setstr(L, "pool", rl_pool_name(ph->pool));
		lgp_setstr(L, "memory", rl_mems[ph->mem]);
		lua_rawseti(L, -2, i + 1);
	}
	lua_setfield(L, -2, "phases");
	lua_createtable(L, 0, 2);
	for (i = 0; i < 2; i++) {
		lua_createtable(L, 0, 3);
		lgp_setcount(L, "gpus", out->pool_gpus[i]);
		lgp_setnum(L, "busy", out->pool_busy[i]);
		lgp_setnum(L, "idle", out->pool_idle[i]);
		lua_setfield(L, -2, rl_pool_name(i));
	}
	lua_setfield(L, -2, "pools");
	lua_createtable(L, 0, 24);
	lgp_push(L, &rl_rollout_desc, &out->roll);
	lua_setfield(L, -2, "rollout");
	lua_createtable(L, 0, RL_NMEM);
	for (i = 0; i < RL_NMEM; i++) {
		/* the own groups' only when there are some */
		if (i >= RL_MEM_REF && !(out->mem[i].total > 0))
			continue;
		lgp_pushmem(L, &out->mem[i]);
		lua_setfield(L, -2, rl_mems[i]);
	}
	lua_setfield(L, -2, "memory");
	lgp_pushtrain(L, &out->update);
	lua_setfield(L, -2, "update");
	lgp_pushtrain(L, &out->forward);
	lua_setfield(L, -2, "forward");
}

/* core.rl(model, device, topo, cfg) -> result table.  cfg.train is a
 * training-step config (as core.train's), cfg.rollout an engine config
 * (as core.infer's: tp, pp, weight_bits, kv_bytes, compute, runtime,
 * max_batch, max_num_tokens, topo; capacity is set by the step); the
 * flat fields: ppo, ref_model, reward_model, old_logprobs (booleans),
 * prompts, group, prompt_len, response_len, response_max, response_dist
 * ("fixed"|"uniform"|"exp"), response_clip (exp: the share cut at
 * response_max), minibatch, epochs, pad, pack_tokens
 * (tokens per packed micro-batch; 0 = not packed), colocated,
 * rollout_gpus, rollout_ep (1 or the rollout tp: the engine's experts
 * split over its GPUs), staleness, offload_states, ref_host, host_bw
 * (B/s), engine_memory
 * (bytes), price, engine_host_step and engine_host_seq (s per engine
 * step and per sequence in it), engine_host_overlap (boolean),
 * engine_static_own (boolean: each engine's static rounds end at its
 * own batch's longest, rl.h),
 * engine_graph_gaps (s per decode step's forward, rl.h),
 * engine_host_serial (s per engine step the host works with the GPU
 * idle, rl.h), engine_cache_copies, engine_wait_copies and
 * engine_wait_lead (a generate() loop's dense-cache passes, those of
 * them the host waits on and its lead before the wait, rl.h), step_overhead (s per step), loss_ops (host ops per trained sequence
 * of a per-sequence loss), fp32_logits (boolean: the log-probabilities
 * from fp32 logits, unfused), logit_onehot (boolean: their backward
 * through an int64 one-hot), sync_tp_first (boolean: the weight sync
 * gathers whole tensors over TP before the pipeline), sync_fp8_cast
 * (boolean: the engine casts each weight it receives to fp8, whole, on
 * every rank), sync_host (s a weight sync's tensor-by-tensor export
 * adds), engine_fuse (s a step's syncs spend fusing LoRA adapters into
 * the engine's weights, rl.h), ipc_transfer (s per hand-off of a
 * colocated sync through a CUDA-IPC buffer, rl.h),
 * token_host (s per generated token of the framework's output
 * handling), keep (dynamic sampling's kept share of the generated
 * groups; 0 = no filter), ref_gpus, reward_gpus and
 * critic_gpus (PPO's models on groups of their own; 0 = on the actor's
 * GPUs), colocate_critic_reward (boolean: the reward model on the
 * critic's group), critic_model and reward_shape (the critic's and
 * the reward model's own models, as core.model's argument; absent: the
 * actor's shape), static_batch (sequences of the rollout engine's
 * static batches: DeepSpeed-Chat's hybrid engine; 0 = continuous
 * batching), engine_shared_weights (boolean: the engine generates on
 * the actor's own modules, rl.h), engine_qkv_copy (boolean: with them,
 * q, k and v fused into a copy of the engine's own, rl.h),
 * engine_released (boolean: the engine's weights exist only while it
 * generates, rl.h), and
 * split_gpus (> 0: search the disaggregated split of that many GPUs);
 * seconds, bytes, tokens. */
int lgp_rl(lua_State *L)
{
	gp_model m;
	roof_device d;
	gp_topo t, rt;
	rl_cfg c;
	gp_model own[2];
	gp_stage_store st;       /* the actor's stage list, for this call */
	rl_result *out;   /* large: in a userdata, not on the C stack */
	gp_error err;
	int split;

	lgp_tomodel(L, 1, &m);
	lgp_todevice(L, 2, &d);
	lgp_totopo(L, 3, &t);
	split = lgp_torlcfg(L, 4, &c, &rt, own, &st);
	out = (rl_result *)lua_newuserdatauv(L, sizeof *out, 0);
	if ((split > 0 ? rl_best_split(&m, &d, &t, &c, split, out, &err) :
	     rl_step(&m, &d, &t, &c, out, &err)) != GP_OK)
		return lgp_error(L, &err, "");
	lgp_pushrl(L, out);
	/* E[L^2] of the response lengths (tokens^2): the quadratic term
	 * of attention over the step's sequences, as a framework's FLOP
	 * count sums it (verl's FlopsCounter: sum of seqlen^2).  Here and
	 * not in the step, whose sweeps do not read it. */
	lgp_setnum(L, "response_m2", rl_len_moment2(&c.response));
	return 1;
}

/* ---- rl_job ---- */

#define LGP_RL_JOB "gpuplan.rl_job"
#define LGP_RL_RESULT "gpuplan.rl_result"

typedef struct rl_job_ud {
	gp_model m;
	roof_device d;
	gp_topo t;
	gp_topo rt;              /* the rollout engine's TP topology, which
				  * base.roll points at */
	gp_topo wide;            /* an engine beyond a node: t with the
				  * nodes it spans */
	gp_model own[2];         /* the critic's and the reward model's
				  * shapes, which base may point at */
	rl_cfg base;
	gp_stage_store stages;   /* base's actor's stage list, for the
				  * job's life (a step's own list is the
				  * step's: lgp_rl_job_step) */
	int fusion[2];           /* the actor's grad_acc_fusion without
				  * fsdp and with it (lgp_tofusion) */
	int follow_tp;           /* the rollout's TP is the actor's unless
				  * a step gives rollout_tp */
	int gpus;                /* of the training pool: dp = gpus / (tp
				  * pp cp) */
	int zero_group;          /* the actor's zero_group (0: none):
				  * each step's own groups
				  * (lgp_job_zero_group) */
	rl_cache cache;
} rl_job_ud;

/* core.rl_job(model, device, topo, cfg [, follow_tp [, fusion [,
 * refusal [, sharding [, zero_group [, stage_list]]]]]]) -> job: cfg
 * as core.rl's (no split_gpus: a
 * job prices given pools), its actor's layout the default of each step; follow_tp true: a step's rollout TP
 * is its actor's tp unless it gives rollout_tp (gp.rl's default); fusion
 * the actor's gradient accumulation fusion without FSDP and with it, as
 * lgp_tofusion reads it; refusal, sharding and stage_list as
 * lgp_set_job_fn keeps them. */
int lgp_rl_job(lua_State *L)
{
	rl_job_ud *j;
	const gp_layout *lay;

	lua_settop(L, 10);
	j = lua_newuserdatauv(L, sizeof *j, LGP_JOB_FNS);
	memset(j, 0, sizeof *j);
	lgp_tomodel(L, 1, &j->m);
	lgp_todevice(L, 2, &j->d);
	lgp_totopo(L, 3, &j->t);
	if (lgp_torlcfg(L, 4, &j->base, &j->rt, j->own, &j->stages) > 0)
		return luaL_error(L, "rl_job: split_gpus searches the split; "
				  "a job prices the pools it is given");
	j->follow_tp = lua_toboolean(L, 5);
	lgp_tofusion(L, 6, j->base.train.grad_acc_fusion, j->fusion);
	lgp_set_job_fn(L, 11, 7, LGP_JOB_REFUSAL);
	lgp_set_job_fn(L, 11, 8, LGP_JOB_SHARDING);
	j->zero_group = lgp_job_zero_group_arg(L, 9);
	lgp_set_job_fn(L, 11, 10, LGP_JOB_STAGE_LIST);
	lay = &j->base.train.mem.lay;
	j->gpus = lay->tp * lay->pp * lay->cp * lay->dp;
	luaL_setmetatable(L, LGP_RL_JOB);
	return 1;
}

/* job:step{tp =, pp =, zero =, batch =, recompute =, global_batch =,
 * rollout_tp = ...} [, r] -> result: the job's config with these changed
 * (the actor's dp from the training pool's GPUs), priced by
 * rl_step_cached with the job's memo, into r when given (a result of an
 * earlier step, reused) or a new result.  A layout that does not divide
 * the pools, the samples or the model is an error, as gp.rl's. */
static int lgp_rl_job_step(lua_State *L)
{
	rl_job_ud *j = luaL_checkudata(L, 1, LGP_RL_JOB);
	rl_cfg c = j->base;      /* its stage list in the job's store */
	gp_stage_store st;       /* a list the step gives: the step's own
				  * (the memos keep their own copies) */
	gp_layout *lay = &c.train.mem.lay;
	rl_result *r;
	gp_error err;
	int rep;

	if (j->follow_tp)
		c.roll.tp = 0;
	if (lua_gettop(L) > 3)
		luaL_argerror(L, 4, "job:step takes a layout and a result to "
			      "refill, no more");
	if (!lua_isnoneornil(L, 2)) {
		/* a layout's inherited keys too, as gp.rl reads them */
		lgp_flat(L, 2);
		lgp_job_stage_list(L, 1, 2);
		lgp_read_store(L, 2, 2, &lgp_rl_step_desc, &c, LGP_STRICT,
			       &st);
		lgp_step_batches(L, 2, c.train.mem.lay.micro_batch,
				 c.minibatch, j->base.train.mem.lay.micro_batch,
				 j->base.minibatch);
	}
	lgp_job_sharding(L, 1, 2, &c.train);
	c.train.grad_acc_fusion = j->fusion[c.train.fsdp != 0];
	lgp_job_refusal(L, 1, &c.train);
	if (c.roll.tp == 0)
		c.roll.tp = lay->tp;
	/* DeepSpeed's hybrid engine (rollout_engine hybrid: static batches
	 * gathered over its inference TP, not a rank's own as OpenRLHF's
	 * engines run them) and the actor's own Hugging Face modules
	 * (rollout_engine hf: a rank's own static batches on the trainer's
	 * weights) are resolved by gp.rl with the job's inference TP, and
	 * hybrid with its ZeRO stage: its batch (generation batch x TP), its
	 * gc.collect()/empty_cache() calls (step_overhead), whether it
	 * generates on the trainer's tensors or gathers ZeRO-3 shards.  A step
	 * changing them was priced with the job's terms (hybrid: a tp 1 job's
	 * step at rollout_tp 2, 44.4 s where gp.rl says 30.9 s; hf: a tp 1
	 * job's step at tp 2, 221 s where gp.rl says 119 s) or refused naming
	 * engine_released, the binding's key: refused here, naming the step's
	 * key. */
	if (j->base.static_batch >= 1 &&
	    (!j->base.host.own_rounds || j->base.shared_weights)) {
		const gp_layout *jl = &j->base.train.mem.lay;
		const char *eng = j->base.host.own_rounds ? "hf" : "hybrid";

		if (c.roll.tp != j->base.roll.tp) {
			int given = !j->follow_tp;

			if (!given && lua_istable(L, 2)) {
				lua_getfield(L, 2, "rollout_tp");
				given = !lua_isnil(L, -1);
				lua_pop(L, 1);
			}
			return luaL_error(L, "step: %s %d%s: the %s engine "
					  "(rollout_engine = %s) is the job's, "
					  "at inference TP %d (its batch and "
					  "host work): make a job with %s = "
					  "%d", given ? "rollout_tp" : "tp",
					  c.roll.tp, given ? "" : " (the "
					  "rollout's TP follows it)", eng, eng,
					  j->base.roll.tp, given ? "rollout_tp"
					  : "tp", c.roll.tp);
		}
		if (!j->base.host.own_rounds &&
		    (lay->zero == 3) != (jl->zero == 3))
			return luaL_error(L, "step: zero %d: the hybrid engine "
					  "(rollout_engine = hybrid) is the "
					  "job's, %s the actor's ZeRO-3 shards "
					  "(zero %d): make a job with zero %d",
					  lay->zero, jl->zero == 3 ?
					  "gathering" : "not gathering",
					  jl->zero, lay->zero);
	}
	/* An engine beyond a node fills whole nodes and runs its
	 * all-reduces on the job's topology, across the NICs (gp.rl's
	 * rollout_setup). */
	if (c.roll.tp > j->t.gpus_per_node) {
		int G = j->t.gpus_per_node;

		if (c.roll.tp % G != 0)
			return luaL_error(L, "step: rollout_tp %d spans nodes "
					  "of %d GPUs: it must fill whole "
					  "nodes (a multiple of %d)",
					  c.roll.tp, G, G);
		if (j->t.nics == 0)
			return luaL_error(L, "step: rollout_tp %d spans %d "
					  "nodes, but the system has no NICs",
					  c.roll.tp, c.roll.tp / G);
		j->wide = j->t;
		if (j->wide.nodes < c.roll.tp / G)
			j->wide.nodes = c.roll.tp / G;
		c.roll.topo = &j->wide;
	}
	/* An engine of another size than the job's holds the NCCL buffers
	 * of its own size (lgp_toserve's default reserve). */
	if (c.roll.tp != j->base.roll.tp) {
		gp_mem_reserve rs;

		mem_reserve_default(&rs, c.roll.tp * c.roll.pp);
		c.roll.reserve.comm = rs.comm;
	}
	rep = lay->tp * lay->pp * lay->cp;
	if (j->gpus % rep != 0)
		return luaL_error(L, "step: the %d training GPUs are not a "
				  "multiple of tp*pp*cp = %d", j->gpus, rep);
	lay->dp = j->gpus / rep;
	lgp_job_zero_group(L, j->zero_group, lay);
	/* The rollout engine's GPUs in the pool, said in what the caller
	 * gave (gp.rl's wording): the engine's own refusal (rl_pools) named
	 * rollout_tp x rollout_pp where a step gave tp = 4 and neither ("...
	 * = 4 does not divide the 6 GPUs of the rollout pool"). */
	{
		int n = c.roll.tp * (c.roll.pp > 0 ? c.roll.pp : 1);
		int pool = c.colocated ? j->gpus : c.rollout_gpus;
		int given = !j->follow_tp;
		char eng[96];

		if (!given && lua_istable(L, 2)) {
			lua_getfield(L, 2, "rollout_tp");
			given = !lua_isnil(L, -1);
			lua_pop(L, 1);
		}
		snprintf(eng, sizeof eng, "%s %d", given ? "rollout_tp" :
			 "the actor's tp", c.roll.tp);
		if (c.roll.pp > 1)
			snprintf(eng + strlen(eng), sizeof eng - strlen(eng),
				 " x rollout_pp %d", c.roll.pp);
		if (pool > 0 && pool % n != 0)
			return luaL_error(L, "step: the rollout engine's %d "
					  "GPU%s (%s) do%s not divide %s %d "
					  "(%s)", n, n == 1 ? "" : "s", eng,
					  n == 1 ? "es" : "", c.colocated ?
					  "gpus" : "rollout_gpus", pool,
					  c.colocated ? "the colocated pools" :
					  "the rollout pool");
	}
	lay->schedule = lay->vpp > 1 ? GP_SCHED_INTERLEAVED : GP_SCHED_1F1B;
	r = lua_isnoneornil(L, 3) ? NULL : luaL_checkudata(L, 3,
							   LGP_RL_RESULT);
	if (r) {
		lua_settop(L, 3);
	} else {
		r = lua_newuserdatauv(L, sizeof *r, 0);
		luaL_setmetatable(L, LGP_RL_RESULT);
	}
	if (rl_step_cached(&j->m, &j->d, &j->t, &c, &j->cache, r, &err))
		return lgp_error(L, &err, "step: ");
	return 1;
}

/* The scalar fields of a result a loop reads, by name (gp.rl's names),
 * nil as gp.rl's are: rl_roll_fields when the rollout cannot run (the
 * step then has no time), rl_price_fields also without a price. */
static const lgp_field rl_roll_fields[] = {
	O_NUM("step_s", rl_result, step),
	O_NUM("samples_per_s", rl_result, samples_per_s),
	O_NUM("tokens_per_s", rl_result, tokens_per_s),
	O_NUM("tokens_per_s_gpu", rl_result, tokens_per_s_gpu),
	O_NUM("gen_tokens_per_s", rl_result, gen_tokens_per_s),
	F_END
};
static const lgp_field rl_price_fields[] = {
	O_NUM("cost_step", rl_result, cost_step),
	O_NUM("cost_1k_prompts", rl_result, cost_1k_prompts),
	F_END
};
static const lgp_field rl_fields[] = {
	O_CNT("gpus", rl_result, gpus),
	O_BOOL("fits", rl_result, fits),
	F_END
};

/* The most loaded GPU's peak over the phases that run (gp.rl's
 * peak_memory). */
static double rl_peak(const rl_result *r)
{
	double peak = 0;
	int i;

	for (i = 0; i < RL_NPHASES; i++)
		if (r->ph[i].time > 0 && r->mem[r->ph[i].mem].total > peak)
			peak = r->mem[r->ph[i].mem].total;
	return peak;
}

/* The table's names of rl_roll_fields' and rl_price_fields' members
 * (core.rl's "step" is the handle's step_s). */
static const char *const rl_roll_keys[] = {
	"step", "samples_per_s", "tokens_per_s", "tokens_per_s_gpu",
	"gen_tokens_per_s", NULL
};
static const char *const rl_price_keys[] = {
	"cost_step", "cost_1k_prompts", NULL
};

/* result:table() -> the whole table core.rl returns, with the times and
 * costs nil where the handle's are (lgp_rl_result_index): a step whose
 * rollout cannot run has no time, and no number a script could take
 * for one. */
static int lgp_rl_result_table(lua_State *L)
{
	const rl_result *r = luaL_checkudata(L, 1, LGP_RL_RESULT);
	int roll = r->roll.steps > 0;
	const char *const *k;

	lgp_pushrl(L, r);
	if (!roll)
		for (k = rl_roll_keys; *k; k++) {
			lua_pushnil(L);
			lua_setfield(L, -2, *k);
		}
	if (!(roll && r->cost_step > 0))
		for (k = rl_price_keys; *k; k++) {
			lua_pushnil(L);
			lua_setfield(L, -2, *k);
		}
	return 1;
}

/* Whether f is one of fields'. */
static int in(const lgp_field *f, const lgp_field *fields)
{
	for (; fields->name; fields++)
		if (f == fields)
			return 1;
	return 0;
}

/* The result's fields computed, not read (their index in the name
 * table, lgp_rl_handle_types). */
enum { RL_ROLLOUT_FITS, RL_WHY, RL_PEAK };

/* result.name (upvalue 1: lgp_push_names' table of the fields above,
 * the computed ones by index and "table" -> lgp_rl_result_table). */
static int lgp_rl_result_index(lua_State *L)
{
	const rl_result *r = luaL_checkudata(L, 1, LGP_RL_RESULT);
	const lgp_field *f = lgp_index_field(L, lua_upvalueindex(1),
		"rl result", "step_s, fits, samples_per_s, peak_memory, ...");
	int roll = r->roll.steps > 0;

	if (f) {
		if ((!roll && in(f, rl_roll_fields)) ||
		    (!(roll && r->cost_step > 0) && in(f, rl_price_fields)))
			lua_pushnil(L);
		else
			lgp_push_value(L, f, r);
		return 1;
	}
	if (!lua_isinteger(L, -1))
		return 1;
	switch (lua_tointeger(L, -1)) {
	case RL_ROLLOUT_FITS:
		lua_pushboolean(L, roll);
		break;
	case RL_WHY:
		if (r->why[0])
			lua_pushstring(L, r->why);
		else
			lua_pushnil(L);
		break;
	default:
		lua_pushnumber(L, rl_peak(r));
	}
	return 1;
}

void lgp_rl_handle_types(lua_State *L)
{
	static const luaL_Reg job_methods[] = {
		{"step", lgp_rl_job_step},
		{NULL, NULL}
	};
	static const lgp_field *const tables[] = {
		rl_roll_fields, rl_price_fields, rl_fields, NULL
	};
	static const char *const computed[] = {
		"rollout_fits", "why", "peak_memory"
	};
	int i;

	luaL_newmetatable(L, LGP_RL_JOB);
	luaL_newlib(L, job_methods);
	lua_setfield(L, -2, "__index");
	lgp_set_readonly(L, "rl job", "a new job: gp.rl_job{...}");
	lua_pop(L, 1);
	luaL_newmetatable(L, LGP_RL_RESULT);
	lgp_push_names(L, tables);
	for (i = 0; i < (int)(sizeof computed / sizeof *computed); i++) {
		lua_pushinteger(L, i);
		lua_setfield(L, -2, computed[i]);
	}
	lua_pushcfunction(L, lgp_rl_result_table);
	lua_setfield(L, -2, "table");
	lua_pushcclosure(L, lgp_rl_result_index, 1);
	lua_setfield(L, -2, "__index");
	lgp_set_readonly(L, "rl result",
			 "result:table() gives a table of its fields to edit");
	lua_pop(L, 1);
}
