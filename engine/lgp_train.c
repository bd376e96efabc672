/*
 * lgp_train.c - the training bindings: core.train (one step),
 * core.sweep (the layout search, its space, filters and progress) and
 * core.train_job (a job resolved once, stepped per layout from Lua,
 * its results as userdata).
 */
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "lgp_int.h"

/* ---- train ---- */
/* Read a training-step config (cfg at idx, argument arg): every field of
 * lgp_train_desc, an unknown one refused; the reserve from gpus (NCCL
 * buffers with more than one GPU: the gpus field, a sweep's base, else
 * the layout's) and margin. */
static void lgp_totraincfg_arg(lua_State *L, int idx, int arg, train_cfg *c,
			       gp_stage_store *st)
{
	double gpus;

	train_defaults(c);
	lgp_read_store(L, idx, arg, &lgp_train_desc, c,
		       LGP_DEFAULTS | LGP_STRICT, st);
	if (c->mem.base.bits != 0 && mem_quant_bits(&c->mem.base) < 0)
		luaL_error(L, "train.base: bits must be in (0, 32], group and "
			   "group_bits >= 0");
	gpus = (double)c->mem.lay.tp * c->mem.lay.pp * c->mem.lay.dp *
		c->mem.lay.cp;
	gpus = lgp_field_int(L, idx, "train", "gpus", 0,
			     (int)fmin(gpus, 2147483647.0), 1);
	mem_reserve_default(&c->reserve, gpus > 1 ? 2 : 1);
	c->reserve.margin = lgp_field_num(L, idx, "train", "margin", 0,
					  c->reserve.margin);
	/* the strict read judged every key; these two reads' notes would
	 * stay behind, two more on every call */
	lgp_forget(L, idx);
}

void lgp_totraincfg(lua_State *L, int idx, train_cfg *c,
		    gp_stage_store *st)
{
	lgp_totraincfg_arg(L, idx, 0, c, st);
}

/* Push a training-step result as the table core.train returns. */
/* A training step's result as core.train returns it: its scalars under
 * their Lua names (lua/gpuplan/results.lua declares them). */
#define TR(n, m) O_NUM(n, train_result, m)
static const lgp_field train_result_fields[] = {
	TR("step_s", step), O_CNT("microbatches", train_result, microbatches),
	TR("bubble_frac", bubble_frac), O_INT("stage", train_result, stage),
	O_INT("stage_layers", train_result, stage_layers),
	TR("stage_time_s", stage_time), O_CNT("tokens_per_step", train_result,
	      tokens_per_step),
	TR("tokens_per_s", tokens_per_s),
	TR("tokens_per_s_gpu", tokens_per_s_gpu),
	TR("model_flops", model_flops), TR("hw_flops", hw_flops),
	TR("mfu", mfu), TR("hfu", hfu),
	TR("model_tflops_gpu", model_tflops_gpu),
	TR("hw_tflops_gpu", hw_tflops_gpu), TR("peak", peak),
	TR("vision_s", vision_time),
	O_CNT("vision_patches", train_result, vision_patches),
	TR("train_s", train_time), TR("cost", cost),
	O_BOOL("fits", train_result, fits), F_END
};
#undef TR
static const lgp_desc train_result_desc = { "train result",
					    train_result_fields };

void lgp_pushtrain(lua_State *L, const train_result *r)
{
	static const char *const warns[] = {
		"zero_dp1", "tp_leaves_node", "ep_leaves_node",
		"microbatches_not_multiple_of_pp"
	};
	int i, n;

	lua_createtable(L, 0, 34);
	lgp_push(L, &train_result_desc, r);
	lua_createtable(L, 0, TRAIN_NPARTS);
	for (i = 0; i < TRAIN_NPARTS; i++)
		lgp_setnum(L, train_part_name(i), r->part[i]);
	lua_setfield(L, -2, "parts");
	lua_createtable(L, 0, TRAIN_NPARTS);
	for (i = 0; i < TRAIN_NPARTS; i++)
		lgp_setnum(L, train_part_name(i), r->hidden[i]);
	lua_setfield(L, -2, "hidden");
	lgp_pushmem(L, &r->mem);
	lua_setfield(L, -2, "memory");
	lua_newtable(L);
	for (i = 0, n = 0; i < 4; i++)
		if (r->warn & (1u << i)) {
			lua_pushstring(L, warns[i]);
			lua_rawseti(L, -2, ++n);
		}
	lua_setfield(L, -2, "warnings");
	lua_createtable(L, 0, GP_GRP_COUNT);
	for (i = 0; i < GP_GRP_COUNT; i++) {
		lua_createtable(L, 0, 4);
		lgp_setint(L, "ranks", r->groups[i].ranks);
		lgp_setint(L, "per_node", r->groups[i].per_node);
		lgp_setint(L, "nodes", r->groups[i].nodes);
		lgp_setint(L, "sharing", r->groups[i].sharing);
		lua_setfield(L, -2, layout_grp_name((gp_grp)i));
	}
	lua_setfield(L, -2, "groups");
	lua_createtable(L, r->nops, 0);
	for (i = 0; i < r->nops; i++) {
		lua_createtable(L, 0, 5);
		lgp_setstr(L, "name", r->ops[i].name);
		lgp_setnum(L, "fwd", r->ops[i].fwd);
		lgp_setnum(L, "bwd", r->ops[i].bwd);
		lua_pushlstring(L, &r->ops[i].kind, 1);
		lua_setfield(L, -2, "kind");
		lgp_setnum(L, "share", r->ops[i].share);
		lua_rawseti(L, -2, i + 1);
	}
	lua_setfield(L, -2, "ops");
}

/* core.train(model, device, topo, cfg) -> result table.  cfg holds every
 * field core.memory reads for kind "train" (layout, recipe, seq, ...)
 * plus compute (dtype name), global_batch, fsdp, order (rank order),
 * the overlap switches, causal_flops, embed_flops, no_router_flops,
 * forward_only, capacity (bytes per
 * GPU), margin, tokens and price; seconds, FLOP, bytes. */
int lgp_train(lua_State *L)
{
	gp_model m;
	roof_device d;
	gp_topo t;
	train_cfg c;
	gp_stage_store st;       /* c's stage list, for this call */
	train_result r;
	gp_error err;

	lgp_tomodel(L, 1, &m);
	lgp_todevice(L, 2, &d);
	lgp_totopo(L, 3, &t);
	lgp_totraincfg_arg(L, 4, 4, &c, &st);
	/* Ulysses has no chunks to balance: verl pads the tokens to a
	 * multiple of the group (verl/utils/ulysses.py ulysses_pad). */
	if ((!c.mem.cp_ulysses &&
	     layout_check_cp_seq(c.mem.lay.cp, c.mem.seq, &err) != GP_OK) ||
	    train_step(&m, &d, &t, &c, &r, &err) != GP_OK)
		return lgp_error(L, &err, "");
	lgp_pushtrain(L, &r);
	return 1;
}

/* ---- sweep ---- */

/* A ranked candidate's results beside its dimensions, under their Lua
 * names. */
#define CN(n, m) O_NUM(n, sweep_cand, m)
static const lgp_field cand_fields[] = {
	O_INT("dp", sweep_cand, dp), CN("step_s", step),
	CN("tokens_per_s", tokens_per_s), CN("mfu", mfu), CN("cost", cost),
	CN("train_s", train_time), CN("mem_bytes", mem_total),
	CN("score", score), F_END
};
#undef CN
static const lgp_desc cand_desc = { "candidate", cand_fields };

/* Push one ranked candidate. */
static void lgp_pushcand(lua_State *L, const sweep_cand *c)
{
	lua_createtable(L, 0, 20);
	lgp_setint(L, "index", c->index);
	/* The dimensions, under their names (sweep.h's table). */
#define PUSH(ID, name, type, lua, at, vals, bound, count, hi, def, ok) \
	PUSH_##lua(#name, c->name);
#define PUSH_int(key, v) lgp_setint(L, key, v)
#define PUSH_bool(key, v) lgp_setbool(L, key, v)
/* the one num dimension is micro_batch, a count of sequences */
#define PUSH_num(key, v) lgp_setcount(L, key, v)
#define PUSH_rec(key, v) lgp_setstr(L, key, mem_recompute_name(v))
#define PUSH_sched(key, v) lgp_setstr(L, key, mem_schedule_name(v))
	SWEEP_DIMS(PUSH)
#undef PUSH
#undef PUSH_int
#undef PUSH_bool
#undef PUSH_num
#undef PUSH_rec
#undef PUSH_sched
	lgp_push(L, &cand_desc, c);
}

/* A list t[key] = {...} into out[0..max), each value through elem (which
 * reads the value on top of the stack into out[i] or raises naming
 * what.key[i]); returns its length, 0 when absent. */
typedef void (*lgp_elem_fn)(lua_State *L, const char *what, const char *key,
			    int i, void *out);

static int lgp_field_list(lua_State *L, int idx, const char *what,
			  const char *key, void *out, int max,
			  lgp_elem_fn elem)
{
	int n = 0, i, sub = lgp_subtable(L, idx, what, key);

	if (!sub)
		return 0;
	n = (int)lua_rawlen(L, sub);
	if (n > max)
		luaL_error(L, "%s.%s: at most %d values", what, key, max);
	for (i = 0; i < n; i++) {
		lua_rawgeti(L, sub, i + 1);
		elem(L, what, key, i, out);
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	return n;
}

static void lgp_elem_int(lua_State *L, const char *what, const char *key,
			 int i, void *out)
{
	if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < INT_MIN ||
	    lua_tointeger(L, -1) > INT_MAX)
		luaL_error(L, "%s.%s[%d] must be an integer of at most 32 "
			   "bits", what, key, i + 1);
	((int *)out)[i] = (int)lua_tointeger(L, -1);
}

static void lgp_elem_num(lua_State *L, const char *what, const char *key,
			 int i, void *out)
{
	if (!lua_isnumber(L, -1))
		luaL_error(L, "%s.%s[%d] must be a number", what, key, i + 1);
	((double *)out)[i] = lua_tonumber(L, -1);
}

static int lgp_field_ints(lua_State *L, int idx, const char *what,
			  const char *key, int *out, int max)
{
	return lgp_field_list(L, idx, what, key, out, max, lgp_elem_int);
}

static int lgp_field_nums(lua_State *L, int idx, const char *what,
			  const char *key, double *out, int max)
{
	return lgp_field_list(L, idx, what, key, out, max, lgp_elem_num);
}

/* The where predicate of a Lua sweep: the function at stack index 5's
 * field, called unprotected (an error unwinds through sweep_run, which
 * holds nothing the Lua stack does not). */
typedef struct lgp_where {
	lua_State *L;
} lgp_where;

/* space.progress(done, total): called unprotected, as where. */
static void lgp_progress_call(void *ud, long done, long total)
{
	lua_State *L = ((lgp_where *)ud)->L;

	lua_getfield(L, 5, "progress");
	lua_pushinteger(L, done);
	lua_pushinteger(L, total);
	lua_call(L, 2, 0);
}

static int lgp_where_call(void *ud, const sweep_cand *c)
{
	lua_State *L = ((lgp_where *)ud)->L;
	int keep;

	lua_getfield(L, 5, "where");
	lgp_pushcand(L, c);
	lua_call(L, 1, 1);
	keep = lua_toboolean(L, -1);
	lua_pop(L, 1);
	return keep;
}

/* A list of booleans t[key] = {false, true} as a mask: bit 0 false,
 * bit 1 true; 0 when absent. */
static void lgp_elem_bool(lua_State *L, const char *what, const char *key,
			  int i, void *out)
{
	if (!lua_isboolean(L, -1))
		luaL_error(L, "%s.%s[%d] must be a boolean", what, key, i + 1);
	*(int *)out |= lua_toboolean(L, -1) ? 2 : 1;
}

static int lgp_field_boolmask(lua_State *L, int idx, const char *what,
			      const char *key)
{
	int mask = 0;

	lgp_field_list(L, idx, what, key, &mask, INT_MAX, lgp_elem_bool);
	return mask;
}

/* A MASK dimension's list of values t[key] as a bit mask (bit v: try
 * value v), by how the dimension is pushed: int 0..hi, a recompute
 * policy's name, or a boolean. */
static unsigned lgp_field_mask_int(lua_State *L, int idx, const char *what,
				   const char *key, int hi)
{
	int v[32], n, i;
	unsigned mask = 0;

	n = lgp_field_ints(L, idx, what, key, v, hi + 1);
	for (i = 0; i < n; i++) {
		if (v[i] < 0 || v[i] > hi)
			return (unsigned)luaL_error(L, "%s.%s: values are "
						    "0..%d (got %d)", what,
						    key, hi, v[i]);
		mask |= 1u << v[i];
	}
	return mask;
}

/* A name of a MASK dimension's value into a mask (out: {mask, hi, the
 * engine's name of each value 0..hi}): a recompute policy's, a pipeline
 * schedule's. */
typedef struct lgp_namemask {
	unsigned mask;
	int hi;
	const char *(*name)(int v);
} lgp_namemask;

static const char *rec_name(int v)
{
	return mem_recompute_name((gp_recompute)v);
}

static const char *sched_name(int v)
{
	return mem_schedule_name((gp_schedule)v);
}

static void lgp_elem_named(lua_State *L, const char *what, const char *key,
			   int i, void *out)
{
	lgp_namemask *m = out;
	/* The key and the value named, not a stack index
	 * (luaL_checkoption's "#-1"). */
	const char *r = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) :
		NULL;
	int ri;

	(void)what;
	for (ri = 0; r && ri <= m->hi && strcmp(r, m->name(ri)); ri++)
		;
	if (!r || ri > m->hi) {
		/* The names the list takes, from the engine's own. */
		luaL_Buffer b;
		luaL_buffinit(L, &b);
		for (ri = 0; ri <= m->hi; ri++) {
			if (ri)
				luaL_addstring(&b, ri < m->hi ? ", " : " or ");
			luaL_addstring(&b, m->name(ri));
		}
		luaL_pushresult(&b);
		luaL_error(L, "%s[%d] must be %s (got %s%s%s)", key, i + 1,
			   lua_tostring(L, -1), r ? "'" : "a ",
			   r ? r : luaL_typename(L, -2), r ? "'" : "");
	}
	m->mask |= 1u << ri;
}

static unsigned lgp_field_mask_rec(lua_State *L, int idx, const char *what,
				   const char *key, int hi)
{
	lgp_namemask m = { 0, hi, rec_name };

	lgp_field_list(L, idx, what, key, &m, INT_MAX, lgp_elem_named);
	return m.mask;
}

static unsigned lgp_field_mask_sched(lua_State *L, int idx, const char *what,
				     const char *key, int hi)
{
	lgp_namemask m = { 0, hi, sched_name };

	lgp_field_list(L, idx, what, key, &m, INT_MAX, lgp_elem_named);
	return m.mask;
}

static unsigned lgp_field_mask_bool(lua_State *L, int idx, const char *what,
				    const char *key, int hi)
{
	(void)hi;
	return (unsigned)lgp_field_boolmask(L, idx, what, key);
}

/* A sweep's search space (core.sweep's argument 5) into s: gpus and mbs
 * hold its GPU counts and micro-batches (s points at them); the ranking
 * key, top k, and whether a where function was given (has_where) come
 * back; a progress function is called through wh. */
typedef struct lgp_space_in {
	int gpus[64];
	double mbs[32];
	sweep_key key;
	int k, has_where;
} lgp_space_in;

static void lgp_tospace(lua_State *L, int idx, sweep_space *s,
			lgp_space_in *in, lgp_where *wh)
{
	const char *w = "sweep";
	gp_error err;

	luaL_checktype(L, idx, LUA_TTABLE);
	lgp_forget(L, idx);
	memset(s, 0, sizeof *s);
	s->ngpus = lgp_field_ints(L, idx, w, "gpus", in->gpus, 64);
	s->gpus = in->gpus;
	s->nmb = lgp_field_nums(L, idx, w, "micro_batch", in->mbs, 32);
	s->mbs = in->mbs;
	/* The ranges and masks by sweep.h's table (the two lists above). */
#define SPACE(ID, name, type, lua, at, vals, bound, count, hi, def, ok) \
	SPACE_##vals(name, lua, bound, hi, def)
#define SPACE_RANGE(name, lua, bound, hi, def) \
	s->bound = lgp_field_int(L, idx, w, #name "_max", 0, def, 1);
#define SPACE_MASK(name, lua, bound, hi, def) \
	s->bound = lgp_field_mask_##lua(L, idx, w, #name, hi);
#define SPACE_LIST(name, lua, bound, hi, def)
#define SPACE_NODE SPACE_MASK
	SWEEP_DIMS(SPACE)
#undef SPACE_NODE
#undef SPACE
#undef SPACE_RANGE
#undef SPACE_MASK
#undef SPACE_LIST
	/* DualPipe's overlaps where the job leaves them out (sweep.h) */
	s->dual_on = (lgp_field_bool(L, idx, w, "dual_ep_overlap", 0) ? 1u : 0u) |
		(lgp_field_bool(L, idx, w, "dual_overlap_p2p", 0) ? 2u : 0u);
	s->no_bound = !lgp_field_bool(L, idx, w, "bound", 1);
	s->zero_group = lgp_field_int(L, idx, w, "zero_group", 0, 0, 0);
	s->fsdp_pairs = (unsigned)lgp_field_int(L, idx, w, "fsdp_pairs", 0,
						 0, 0);
	s->whole_z3 = lgp_field_bool(L, idx, w, "whole_z3", 0);
	s->ulysses_pp1 = lgp_field_bool(L, idx, w, "ulysses_pp1", 0);
	s->ulysses_tp1 = lgp_field_bool(L, idx, w, "ulysses_tp1", 0);
	{
		int sh[2], nsh = lgp_field_ints(L, idx, w, "shard", sh, 2);

		if (nsh == 2) {
			s->shard_k = sh[0];
			s->shard_n = sh[1];
		}
	}
	s->max_time = lgp_field_num(L, idx, w, "deadline", 0, 0);
	s->max_cost = lgp_field_num(L, idx, w, "budget", 0, 0);
	if (sweep_key_parse(lgp_field_str(L, idx, w, "key", "time"), &in->key,
			    &err))
		lgp_error(L, &err, "");
	in->k = lgp_field_int(L, idx, w, "top", 0, 10, 1);
	if (in->k > 100000)
		luaL_error(L, "sweep.top must be at most 100000");
	lgp_get(L, idx, "where");
	in->has_where = lua_isfunction(L, -1);
	if (!in->has_where && !lua_isnil(L, -1))
		luaL_error(L, "sweep.where must be a function");
	lua_pop(L, 1);
	lgp_get(L, idx, "progress");
	if (lua_isfunction(L, -1)) {
		s->progress = lgp_progress_call;
		s->progress_ud = wh;
	} else if (!lua_isnil(L, -1)) {
		luaL_error(L, "sweep.progress must be a function");
	}
	lua_pop(L, 1);
	lgp_strict(L, idx, idx, w);
}

/* core.sweep's answer: the ntop ranked candidates of top, the search's
 * stats st (and the memo's hits), the first refusal when there was one. */
static void lgp_pushsweep(lua_State *L, const sweep_cand *top, int ntop,
			  const sweep_stats *st, const train_cache *cache)
{
	int i;

	lua_createtable(L, 0, 2);
	lua_createtable(L, ntop, 0);
	for (i = 0; i < ntop; i++) {
		lgp_pushcand(L, &top[i]);
		lua_rawseti(L, -2, i + 1);
	}
	lua_setfield(L, -2, "results");
	lua_createtable(L, 0, 8);
	/* an integer while exact (below 2^53), else the float */
	if (st->space < 9007199254740992.0)
		lgp_setint(L, "space", (lua_Integer)st->space);
	else
		lgp_setnum(L, "space", st->space);
	lgp_setint(L, "layouts", st->divided);
	lgp_setint(L, "bounded", st->bounded);
	lgp_setint(L, "fitting", st->fitting);
	lgp_setint(L, "within", st->within);
	lgp_setint(L, "errors", st->errors);
	lgp_setint(L, "unplaced", st->unplaced);
	lgp_setint(L, "ungrouped", st->ungrouped);
	lgp_setint(L, "expert_cut", st->expert_cut);
	lgp_setint(L, "past_host", st->past_host);
	if (st->past_host > 0) {
		lgp_setnum(L, "host_least", st->host_least);
		lgp_setnum(L, "host_memory", st->host_memory);
	}
	lgp_setint(L, "past_gpu", st->past_gpu);
	if (st->past_gpu > 0) {
		lgp_setnum(L, "gpu_least", st->gpu_least);
		lgp_setnum(L, "gpu_budget", st->gpu_budget);
	}
	lgp_setint(L, "cache_hits", cache->hits);
	lua_setfield(L, -2, "stats");
	if (st->errors > 0) {
		/* the first layout the training step refused, and why */
		lgp_setstr(L, "error", st->error.msg);
		/* a usage refusal (gp_usage): options the user fixed that
		 * do not go together in any layout (gpuplan.sweep) */
		if (st->error.usage) {
			lua_pushboolean(L, 1);
			lua_setfield(L, -2, "error_usage");
		}
		lgp_pushcand(L, &st->error_at);
		lua_setfield(L, -2, "error_at");
	}
}

/* core.sweep(model, device, topo, base, space) -> {results = {...},
 * stats = {space, layouts, bounded, fitting, within, errors, unplaced,
 * past_host (layouts past their host's memory) and then host_least,
 * host_memory (the least such host's bytes and its DRAM), past_gpu
 * (layouts past a GPU's budget) and then gpu_least, gpu_budget (the
 * least such GPU's bytes and its budget)}, error,
 * error_at}: error the first refusal's reason and error_at its layout
 * (only when the training step refused one).  base is
 * a train config (as core.train's; its layout fields are ignored);
 * space = {gpus = {..}, tp_max, pp_max, cp_max, ep_max, vpp_max, zero =
 * {0, 1, ..}, micro_batch = {..}, recompute = {"none", ..}, sp = {false,
 * true}, tp_overlap = {false, true}, overlap_grad_reduce = {false,
 * true}, key = "time"|"cost"|"per_dollar"|"mfu"|"gpus", top = k, shard =
 * {k, n}, deadline (s), budget, bound (false: time every fitting
 * layout), where = function(candidate) -> boolean}.  `where` is asked
 * about each timed candidate within the deadline and budget that could
 * still enter the top k; only those it accepts are ranked. */
int lgp_sweep(lua_State *L)
{
	gp_model m;
	roof_device d;
	gp_topo t;
	train_cfg base;
	gp_stage_store stages;   /* base's stage list, for this call */
	sweep_space s;
	sweep_stats st;
	sweep_cand *top;
	train_cache *cache;
	lgp_space_in in;
	lgp_where wh;
	gp_error err;
	int ntop = 0;

	lgp_tomodel(L, 1, &m);
	lgp_todevice(L, 2, &d);
	lgp_totopo(L, 3, &t);
	lgp_totraincfg_arg(L, 4, 4, &base, &stages);
	lgp_tospace(L, 5, &s, &in, &wh);
	/* The ranked list and the memo live in Lua userdata: freed with
	 * the call's values, even when a where function raises. */
	top = lua_newuserdatauv(L, sizeof *top *
				(size_t)(in.k > 0 ? in.k : 1), 0);
	cache = lua_newuserdatauv(L, sizeof *cache, 0);
	memset(cache, 0, sizeof *cache);
	wh.L = L;
	if (sweep_run(&m, &d, &t, &base, &s, in.key, cache,
		      in.has_where ? lgp_where_call : NULL, &wh, top, in.k,
		      &ntop, &st, &err))
		return lgp_error(L, &err, "");
	lgp_pushsweep(L, top, ntop, &st, cache);
	return 1;
}

/* ---- training jobs (sweeps from Lua) ---- */

/* A training job: model, device, topology and base config resolved
 * once, with the memo a sweep keeps (train.h train_cache). */
#define LGP_JOB "gpuplan.train_job"
#define LGP_RESULT "gpuplan.train_result"

typedef struct lgp_job {
	gp_model m;
	roof_device d;
	gp_topo t;
	train_cfg base;
	gp_stage_store stages;   /* base's stage list, for the job's life
				  * (a step's own list is the step's:
				  * lgp_job_step) */
	int fusion[2];           /* grad_acc_fusion of a step without
				  * fsdp ([0]) and with it ([1]) */
	int gpus;                /* dp = gpus / (tp pp cp) */
	int zero_group;          /* the job's zero_group (0: none): each
				  * step's own groups (lgp_job_zero_group) */
	int stepped;             /* the memo holds m, d and t */
	train_cache cache;
} lgp_job;

/* The gradient_accumulation_fusion of a job's step without FSDP
 * (fusion[0]) and with it (fusion[1]), from the pair {without, with} at
 * idx (gpuplan.train's setup resolves both by the option's one rule:
 * Megatron-FSDP turns its default off), so that job:step{fsdp = ...}
 * prices what gp.train with that fsdp does; idx none or nil: given, the
 * job's own, for both. */
void lgp_tofusion(lua_State *L, int idx, int given, int fusion[2])
{
	int i;

	fusion[0] = fusion[1] = given;
	if (lua_isnoneornil(L, idx))
		return;
	luaL_checktype(L, idx, LUA_TTABLE);
	for (i = 0; i < 2; i++) {
		if (lua_rawgeti(L, idx, i + 1) != LUA_TBOOLEAN)
			luaL_error(L, "job: fusion[%d] must be a boolean", i + 1);
		fusion[i] = lua_toboolean(L, -1);
		lua_pop(L, 1);
	}
}

/* One of the job's Lua functions from idx (nil: none), as the job at
 * index job keeps it in its user value slot (engine/lgp_int.h's
 * LGP_JOB_*): the refusal function (gpuplan.train's sharding_rule: the
 * rule of the options that hold under one sharding only, which
 * gp.train's setup asks of its own layout), the sharding function
 * (gpuplan.train's step_sharding: the sharding gp.train takes from an
 * fsdp, memory.sharding's one rule, with the job's grad_sync and node)
 * or the stage_list function (gpuplan.memory stage_list with the job's
 * stack: lgp_job_stage_list calls it). */
void lgp_set_job_fn(lua_State *L, int job, int idx, int slot)
{
	if (lua_isnoneornil(L, idx))
		return;
	luaL_checktype(L, idx, LUA_TFUNCTION);
	lua_pushvalue(L, idx);
	lua_setiuservalue(L, job, slot);
}

/* The fsdp of the step table at index step into c, read after the
 * step's other fields: what gp.train with that fsdp prices -- the job's
 * sharding function asked (fsdp, the step's zero or nil, the stage the
 * step has so far) gives the ZeRO stage (nil: the step's own), hybrid
 * sharding's node, whole gradients (grad_sync step), the engine's FSDP
 * rule and PyTorch FSDP's version, or why it refuses (the words gp.train
 * says after "train: ": a strategy name it does not know, a zero that is
 * not the strategy's).  A step with zero but no fsdp asks it with fsdp
 * nil (the job's strategy; none: the step keeps its zero and takes the
 * FSDP rule and version gp.train gives that zero without fsdp; a job
 * without the engine's FSDP rule has neither, and is not asked).  A step
 * with neither calls no Lua; a job made
 * without the function (core.train_job called bare) takes the engine's
 * flag, a boolean. */
void lgp_job_sharding(lua_State *L, int job, int step, train_cfg *c)
{
	int given;

	if (lua_isnoneornil(L, step))
		return;
	/* A step with zero but no fsdp asks too (fsdp nil: the job's), so a
	 * job's strategy refuses a zero not its own as gp.train does, and an
	 * hf job without one takes its zero's fsdp_version.  A job without
	 * the engine's FSDP rule has no strategy (gpuplan.train sets the rule
	 * for every strategy and the hf stack): its steps call no Lua for a
	 * zero. */
	given = lua_getfield(L, step, "fsdp") != LUA_TNIL;
	if (!given) {
		int zero = c->fsdp &&
			lua_getfield(L, step, "zero") != LUA_TNIL;

		if (c->fsdp)
			lua_pop(L, 1);
		if (!zero) {
			lua_pop(L, 1);
			return;
		}
	}
	if (lua_getiuservalue(L, job, LGP_JOB_SHARDING) != LUA_TFUNCTION) {
		lua_pop(L, 1);
		if (!given) {
			lua_pop(L, 1);
			return;
		}
		if (!lua_isboolean(L, -1))
			luaL_error(L, "step.fsdp must be a boolean (got %s)",
				   luaL_typename(L, -1));
		c->fsdp = lua_toboolean(L, -1);
		lua_pop(L, 1);
		return;
	}
	lua_insert(L, -2);
	lua_getfield(L, step, "zero");
	lua_pushinteger(L, c->mem.lay.zero);
	lua_call(L, 3, 5);
	if (lua_type(L, -5) == LUA_TSTRING)
		luaL_error(L, "step: %s", lua_tostring(L, -5));
	if (lua_isnil(L, -4)) {		/* no strategy: the step's own */
		lua_pop(L, 5);
		return;
	}
	if (lua_isinteger(L, -5))
		c->mem.lay.zero = (int)lua_tointeger(L, -5);
	c->mem.lay.hsdp = (int)lua_tointeger(L, -4);
	c->mem.grads_whole = lua_toboolean(L, -3);
	c->fsdp = lua_toboolean(L, -2);
	c->mem.fsdp_version = (int)lua_tointeger(L, -1);
	lua_pop(L, 5);
}

/* A job made with zero_group n (gp.train_job's, gp.rl_job's: idx, nil or
 * none for none) keeps n, not the GPUs of its own layout's groups: the
 * group is n dp x cp ranks, n x tp GPUs (gpuplan.memory zero_group), so a
 * step at another tp spans other GPUs -- a step at tp 2 of a tp-1 job
 * kept the job's 8 GPUs, groups of 4 ranks, where gp.train at tp 2 says
 * 8 ranks on 16 GPUs. */
int lgp_job_zero_group_arg(lua_State *L, int idx)
{
	if (lua_isnoneornil(L, idx))
		return 0;
	return (int)luaL_checkinteger(L, idx);
}

/* The step's hybrid sharding under the job's zero_group n (0: the step
 * keeps what lgp_job_sharding left), once its dp is known: n must divide
 * its dp x cp and it needs a ZeRO stage, as gp.train refuses those
 * layouts (gpuplan.memory zero_group, its words); hsdp from the one rule,
 * layout_zero_group_gpus (n x tp, or 0 where n is all of dp x cp). */
void lgp_job_zero_group(lua_State *L, int n, gp_layout *y)
{
	long long g = (long long)y->dp * (y->cp > 0 ? y->cp : 1);

	if (n <= 0)
		return;
	if (y->zero < 1)
		luaL_error(L, "step: zero_group %d shards the ZeRO states: it "
			   "needs zero 1, 2 or 3 or fsdp (got zero %d)", n,
			   y->zero);
	y->hsdp = layout_zero_group_gpus(n, (int)g, y->tp > 0 ? y->tp : 1);
	if (y->hsdp < 0)
		luaL_error(L, "step: zero_group %d must divide the "
			   "data-parallel group dp x cp = %d", n, (int)g);
}

/* A job's step c refused as gp.train refuses that layout: the job's
 * refusal function asked (zero, fsdp, recompute, nil, tp, pp) where c
 * takes one of the options it rules (zero_reduce allreduce, zero3_gather
 * per_param, ckpt_outside_fsdp, ckpt_early_stop, sac_attn_recompute; Ulysses, whose stack may
 * have no pipeline or tensor axis beside it; a Muon-type optimizer, whose Megatron-Core
 * build refuses the distributed optimizer) -- a step that took fsdp,
 * zero 3, another recompute, pp or tp under them was priced in silence.  Other steps call no Lua:
 * a loop over layouts stays in C. */
void lgp_job_refusal(lua_State *L, int job, const train_cfg *c)
{
	if (!c->zero_allreduce && !c->zero3_per_param && !c->ckpt_outside_fsdp &&
	    !c->ckpt_early_stop && !c->mem.cp_ulysses &&
	    !c->mem.sac_attn_recompute && c->mem.optim.ns_steps <= 0)
		return;
	if (lua_getiuservalue(L, job, LGP_JOB_REFUSAL) != LUA_TFUNCTION) {
		lua_pop(L, 1);
		return;
	}
	lua_pushinteger(L, c->mem.lay.zero);
	lua_pushboolean(L, c->fsdp);
	lua_pushstring(L, mem_recompute_name(c->mem.recompute));
	lua_pushnil(L);		/* sweep: a step is one layout */
	lua_pushinteger(L, c->mem.lay.tp);
	lua_pushinteger(L, c->mem.lay.pp);
	lua_call(L, 6, 1);
	if (lua_type(L, -1) == LUA_TSTRING)
		luaL_error(L, "step: %s", lua_tostring(L, -1));
	lua_pop(L, 1);
}

/* A step's stage_layers read by gp.train's rule (gpuplan.memory
 * stage_list, the job's stage_list function: its user value 3, from
 * lgp_set_job_fn): a table ({9, 9, 8, 6}) as gp.train takes
 * it, the job's stack's refusal, "" refused as an empty list -- the step
 * read the text alone, on every stack, and "" cleared the job's list.
 * The step table at index step (lgp_flat's, not the caller's when it had
 * a metatable) is replaced by a shallow copy holding the function's
 * text.  A step without stage_layers, or a job without the function
 * (core.train_job called bare), calls no Lua. */
void lgp_job_stage_list(lua_State *L, int job, int step)
{
	if (lua_type(L, step) != LUA_TTABLE)
		return;
	if (lua_getfield(L, step, "stage_layers") == LUA_TNIL) {
		lua_pop(L, 1);
		return;
	}
	if (lua_getiuservalue(L, job, LGP_JOB_STAGE_LIST) != LUA_TFUNCTION) {
		lua_pop(L, 2);
		return;
	}
	lua_insert(L, -2);
	lua_call(L, 1, 2);
	if (lua_type(L, -2) != LUA_TSTRING)
		luaL_error(L, "step: %s", lua_type(L, -1) == LUA_TSTRING ?
			   lua_tostring(L, -1) : "stage_layers refused");
	lua_pop(L, 1);
	/* the copy: the caller's table keeps its own value */
	lua_newtable(L);
	lua_pushnil(L);
	while (lua_next(L, step)) {
		lua_pushvalue(L, -2);
		lua_insert(L, -2);
		lua_rawset(L, -4);
	}
	if (lua_getmetatable(L, step))
		lua_setmetatable(L, -2);
	lua_insert(L, -2);
	lua_setfield(L, -2, "stage_layers");
	lua_replace(L, step);
}

/* core.train_job(model, device, topo, cfg [, fusion [, refusal [,
 * sharding [, zero_group [, stage_list]]]]]) -> job: cfg as core.train's
 * (its layout the default of each step), with gpus the job's size;
 * fusion as lgp_tofusion reads it, refusal, sharding and stage_list as
 * lgp_set_job_fn keeps them (lgp_job_stage_list calls the last),
 * zero_group as lgp_job_zero_group_arg reads it. */
int lgp_train_job(lua_State *L)
{
	lgp_job *j;

	lua_settop(L, 9);
	j = lua_newuserdatauv(L, sizeof *j, LGP_JOB_FNS);
	memset(j, 0, sizeof *j);
	lgp_tomodel(L, 1, &j->m);
	lgp_todevice(L, 2, &j->d);
	lgp_totopo(L, 3, &j->t);
	lgp_totraincfg_arg(L, 4, 4, &j->base, &j->stages);
	lgp_tofusion(L, 5, j->base.grad_acc_fusion, j->fusion);
	lgp_set_job_fn(L, 10, 6, LGP_JOB_REFUSAL);
	lgp_set_job_fn(L, 10, 7, LGP_JOB_SHARDING);
	j->zero_group = lgp_job_zero_group_arg(L, 8);
	lgp_set_job_fn(L, 10, 9, LGP_JOB_STAGE_LIST);
	j->gpus = lgp_field_int(L, 4, "train", "gpus", 0,
				j->base.mem.lay.tp * j->base.mem.lay.pp *
				j->base.mem.lay.cp * j->base.mem.lay.dp, 1);
	luaL_setmetatable(L, LGP_JOB);
	return 1;
}

/* job:step{tp =, pp =, zero =, batch =, recompute = ...} [, r] ->
 * result: the job's config with these changed (dp from the job's gpus),
 * priced by train_step with the job's memo, into r when given (a result
 * of an earlier step, reused) or a new result.  A layout that does not
 * divide the GPUs or the model is an error, as gp.train's. */
static int lgp_job_step(lua_State *L)
{
	lgp_job *j = luaL_checkudata(L, 1, LGP_JOB);
	train_cfg c = j->base;   /* its stage list in the job's store */
	gp_stage_store st;       /* a list the step gives: the step's own
				  * (the memo keeps its own copy) */
	train_result *r;
	gp_error err;
	int rep;

	/* job:step(layout, s) and no more: a third argument (a second
	 * layout, a misplaced option table) was dropped in silence */
	if (lua_gettop(L) > 3)
		luaL_argerror(L, 4, "job:step takes a layout and a result to "
			      "refill, no more");
	if (!lua_isnoneornil(L, 2)) {
		/* a layout's inherited keys too, as gp.train reads them */
		lgp_flat(L, 2);
		lgp_job_stage_list(L, 1, 2);
		lgp_read_store(L, 2, 2, &lgp_step_desc, &c, LGP_STRICT, &st);
		lgp_step_batches(L, 2, c.mem.lay.micro_batch, c.global_batch,
				 j->base.mem.lay.micro_batch,
				 j->base.global_batch);
	}
	lgp_job_sharding(L, 1, 2, &c);
	c.grad_acc_fusion = j->fusion[c.fsdp != 0];
	lgp_job_refusal(L, 1, &c);
	rep = c.mem.lay.tp * c.mem.lay.pp * c.mem.lay.cp;
	if (j->gpus % rep != 0)
		return luaL_error(L, "step: gpus %d is not a multiple of "
				  "tp*pp*%s = %d", j->gpus,
				  c.mem.cp_ulysses ? "ulysses" : "cp", rep);
	c.mem.lay.dp = j->gpus / rep;
	/* A Ulysses job's cp is its Ulysses group: a step's cp (or tp,
	 * or seq) is checked by Ulysses' rules, which gp.train's Lua
	 * checked for the job's own (a step's cp 3 of 32 heads was priced
	 * with heads / 3 a rank). */
	if (c.mem.cp_ulysses &&
	    layout_check_ulysses(&j->m, c.mem.lay.tp, c.mem.lay.cp,
				 c.mem.seq, &err) != GP_OK)
		return luaL_error(L, "step: %s", err.msg);
	if (!c.mem.cp_ulysses &&
	    layout_check_cp_seq(c.mem.lay.cp, c.mem.seq, &err) != GP_OK)
		return luaL_error(L, "step: %s", err.msg);
	lgp_job_zero_group(L, j->zero_group, &c.mem.lay);
	/* The step's vpp picks Megatron's schedule; a DualPipe job's stays
	 * DualPipe (its defaults -- ep_overlap, overlap_p2p -- are that
	 * schedule's: under 1F1B they are refused or wrong). */
	if (c.mem.lay.schedule != GP_SCHED_DUALPIPE)
		c.mem.lay.schedule = c.mem.lay.vpp > 1 ?
			GP_SCHED_INTERLEAVED : GP_SCHED_1F1B;
	/* A result given back (job:step(layout, r)) is filled again: a
	 * loop over layouts allocates nothing. */
	r = lua_isnoneornil(L, 3) ? NULL : luaL_checkudata(L, 3, LGP_RESULT);
	if (r) {
		lua_settop(L, 3);
	} else {
		r = lua_newuserdatauv(L, sizeof *r, 0);
		luaL_setmetatable(L, LGP_RESULT);
	}
	/* After the first step the memo holds the job's model, device and
	 * topology, which nothing changes. */
	if ((j->stepped ? train_step_next(&j->m, &j->d, &j->t, &c,
					  &j->cache, 0, NULL, NULL, r, &err) :
	     train_step_cached(&j->m, &j->d, &j->t, &c, &j->cache, r, &err)))
		return lgp_error(L, &err, "step: ");
	j->stepped = 1;
	return 1;
}

/* A result handle's fields beyond core.train's scalars: the memory
 * total a sweep ranks by (a candidate's name for it). */
static const lgp_field handle_fields[] = {
	O_NUM("mem_bytes", train_result, mem.total), F_END
};

/* result.step_s, .fits, .mfu ... (numbers), result:table() -> the whole
 * table core.train returns. */
/* A job given no tokens has no run to time or price: the engine's 0
 * (train.h: "tokens to train on; 0 = no time/cost") reached the script as
 * train_s = 0 and cost = 0, where gp.train's result has neither -- a
 * loop that summed costs over layouts summed zeros.  train_time is 0
 * exactly then (tokens / a positive rate otherwise). */
static int no_run(const train_result *r, const char *name)
{
	return r->train_time == 0 &&
		(strcmp(name, "train_s") == 0 || strcmp(name, "cost") == 0);
}

static int lgp_result_table(lua_State *L)
{
	const train_result *r = luaL_checkudata(L, 1, LGP_RESULT);

	lgp_pushtrain(L, r);
	if (r->train_time == 0) {
		lua_pushnil(L);
		lua_setfield(L, -2, "train_s");
		lua_pushnil(L);
		lua_setfield(L, -2, "cost");
	}
	return 1;
}

/* result.name (upvalue 1: lgp_push_names' table of the scalars of
 * core.train's result and handle_fields, and "table" ->
 * lgp_result_table). */
static int lgp_result_index(lua_State *L)
{
	const train_result *r = luaL_checkudata(L, 1, LGP_RESULT);
	const lgp_field *f = lgp_index_field(L, lua_upvalueindex(1),
		"train result", "step_s, fits, tokens_per_s, mfu, mem_bytes, "
		"...");

	if (f && no_run(r, f->name))
		lua_pushnil(L);
	else if (f)
		lgp_push_value(L, f, r);
	return 1;
}

/* lgp_result_index with its name table as upvalue, pushed. */
static void lgp_push_result_index(lua_State *L)
{
	static const lgp_field *const tables[] = {
		train_result_fields, handle_fields, NULL
	};

	lgp_push_names(L, tables);
	lua_pushcfunction(L, lgp_result_table);
	lua_setfield(L, -2, "table");
	lua_pushcclosure(L, lgp_result_index, 1);
}

void lgp_handle_types(lua_State *L)
{
	static const luaL_Reg job_methods[] = {
		{"step", lgp_job_step},
		{NULL, NULL}
	};

	luaL_newmetatable(L, LGP_MODEL);
	lua_pop(L, 1);
	luaL_newmetatable(L, LGP_DEVICE);
	lua_pop(L, 1);
	luaL_newmetatable(L, LGP_TOPO);
	lua_pop(L, 1);
	luaL_newmetatable(L, LGP_JOB);
	luaL_newlib(L, job_methods);
	lua_setfield(L, -2, "__index");
	lgp_set_readonly(L, "train job", "a new job: gp.train_job{...}");
	lua_pop(L, 1);
	luaL_newmetatable(L, LGP_RESULT);
	lgp_push_result_index(L);
	lua_setfield(L, -2, "__index");
	lgp_set_readonly(L, "train result",
			 "result:table() gives a table of its fields to edit");
	lua_pop(L, 1);
}
