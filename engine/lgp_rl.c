/*
 * lgp_rl.c - core.rl_job: an RL step's job resolved once (model, device,
 * topology and the step's config) and stepped per actor layout from Lua,
 * with the memo of rl.h (rl_cache), as core.train_job is for training.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "lgp_int.h"

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
	int follow_tp;           /* the rollout's TP is the actor's unless
				  * a step gives rollout_tp */
	int gpus;                /* of the training pool: dp = gpus / (tp
				  * pp cp) */
	rl_cache cache;
} rl_job_ud;

/* core.rl_job(model, device, topo, cfg [, follow_tp]) -> job: cfg as
 * core.rl's (no split_gpus: a job prices given pools), its actor's layout
 * the default of each step; follow_tp true: a step's rollout TP is its
 * actor's tp unless it gives rollout_tp (gp.rl's default). */
int lgp_rl_job(lua_State *L)
{
	rl_job_ud *j = lua_newuserdatauv(L, sizeof *j, 0);
	const gp_layout *lay;

	memset(j, 0, sizeof *j);
	lgp_tomodel(L, 1, &j->m);
	lgp_todevice(L, 2, &j->d);
	lgp_totopo(L, 3, &j->t);
	if (lgp_torlcfg(L, 4, &j->base, &j->rt, j->own) > 0)
		return luaL_error(L, "rl_job: split_gpus searches the split; "
				  "a job prices the pools it is given");
	j->follow_tp = lua_toboolean(L, 5);
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
	rl_cfg c = j->base;
	gp_layout *lay = &c.train.mem.lay;
	rl_result *r;
	gp_error err;
	int rep;

	if (j->follow_tp)
		c.roll.tp = 0;
	if (!lua_isnoneornil(L, 2))
		lgp_read(L, 2, 2, &lgp_rl_step_desc, &c, LGP_STRICT);
	if (c.roll.tp == 0)
		c.roll.tp = lay->tp;
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
		return luaL_error(L, "step: %s", err.msg);
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
	O_NUM("gpus", rl_result, gpus),
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

/* result:table() -> the whole table core.rl returns. */
static int lgp_rl_result_table(lua_State *L)
{
	lgp_pushrl(L, luaL_checkudata(L, 1, LGP_RL_RESULT));
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
	lua_pop(L, 1);
}
