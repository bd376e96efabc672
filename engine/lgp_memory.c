/*
 * lgp_memory.c - core.memory and core.state_bytes: the memory
 * and inference configs read, the per-GPU breakdown pushed.
 */
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "lgp_int.h"

/* ---- memory ---- */

/* String field parsed by a kernel parser; absent -> def. */
const char *lgp_field_str(lua_State *L, int idx, const char *what,
			  const char *key, const char *def)
{
	int t = lgp_get(L, idx, key);
	const char *s;

	if (t == LUA_TNIL) {
		lua_pop(L, 1);
		return def;
	}
	if (t != LUA_TSTRING)
		return luaL_error(L, "%s.%s must be a string (got %s)", what,
				  key, lua_typename(L, t)), NULL;
	s = lua_tostring(L, -1);
	lua_pop(L, 1); /* the string stays alive in the table */
	return s;
}

/* {bits=, group=, group_bits=} at t[key]; absent -> all zero. */
static void lgp_toquant(lua_State *L, int idx, const char *what,
			const char *key, gp_quant *q)
{
	int sub = lgp_subtable(L, idx, what, key);

	memset(q, 0, sizeof *q);
	if (!sub)
		return;
	q->bits = lgp_field_num(L, sub, key, "bits", 1, 0);
	q->group = lgp_field_int(L, sub, key, "group", 0, 0, 0);
	q->group_bits = lgp_field_num(L, sub, key, "group_bits", 0, 0);
	/* gpuplan.memory's weight_formats: a format whose group size is
	 * its own (mxfp4's 32) */
	lgp_mark(L, sub, "fixed_group");
	lgp_strict(L, sub, 0, key);
	lua_pop(L, 1);
	if (mem_quant_bits(q) < 0)
		luaL_error(L, "%s.%s: bits must be in (0, 32], group and "
			   "group_bits >= 0", what, key);
}

/* Read t[key] (default def) as a name and parse it with a kernel's
 * name parser into *dst; raise the parser's message on a bad name. */
#define LGP_PARSE(L, idx, w, key, def, parse, dst)                        \
	do {                                                                \
		gp_error perr_;                                             \
		if (parse(lgp_field_str(L, idx, w, key, def), dst, &perr_)) \
			luaL_error(L, "%s", perr_.msg);                     \
	} while (0)

static void lgp_totrain(lua_State *L, int idx, const char *w,
			gp_train_cfg *c)
{
	(void)w;
	memset(c, 0, sizeof *c);
	lgp_read(L, idx, 0, &lgp_mem_train_desc, c, LGP_DEFAULTS);
	if (c->base.bits != 0 && mem_quant_bits(&c->base) < 0)
		luaL_error(L, "memory.base: bits must be in (0, 32], group and "
			   "group_bits >= 0");
}

static void lgp_toinfer(lua_State *L, int idx, gp_infer_cfg *c)
{
	const char *w = "memory";

	memset(c, 0, sizeof *c);
	lgp_toquant(L, idx, w, "weights", &c->weights);
	c->kv_bytes = lgp_field_num(L, idx, w, "kv_bytes", 0, 2);
	c->tp = lgp_field_int(L, idx, w, "tp", 0, 1, 1);
	c->pp = lgp_field_int(L, idx, w, "pp", 0, 1, 1);
	c->seqs = lgp_field_num(L, idx, w, "seqs", 0, 1);
	c->ctx = lgp_field_num(L, idx, w, "ctx", 1, 0);
	c->block = lgp_field_int(L, idx, w, "block", 0, 0, 0);
	c->chunk_tokens = lgp_field_num(L, idx, w, "chunk_tokens", 0, 0);
	c->act_bytes = lgp_field_num(L, idx, w, "act_bytes", 0, 0);
	c->embed_bits = lgp_field_num(L, idx, w, "embed_bits", 0, 0);
	c->kv_free_fraction = lgp_field_num(L, idx, w, "kv_free_fraction", 0,
					    0);
	c->offload = lgp_field_bool(L, idx, w, "offload", 0);
}

/* A memory breakdown's scalars under their Lua names, and its host
 * bytes by kind (the result's host table). */
#define MR(n, m) O_NUM(n, gp_mem_result, m)
static const lgp_field mem_result_fields[] = {
	O_BOOL("fits", gp_mem_result, fits), MR("total", total),
	MR("allocated", allocated), MR("capacity", capacity),
	MR("margin", margin), MR("budget", budget), MR("usable", usable),
	MR("short_by", short_by), O_INT("stage", gp_mem_result, stage),
	O_INT("stage_layers", gp_mem_result, stage_layers),
	MR("params", params),
	MR("trainable", trainable), MR("inflight", inflight),
	MR("act_layer", act_layer), MR("cpu_bytes", cpu_bytes),
	MR("kv_per_seq", kv_per_seq), MR("max_seqs", max_seqs),
	MR("max_ctx", max_ctx), MR("kv_room", kv_room),
	O_INT("cpu_layers", gp_mem_result, cpu_layers), F_END
};
static const lgp_desc mem_result_desc = { "memory result",
					  mem_result_fields };
static const lgp_field mem_host_fields[] = {
	MR("weights", host_weights), MR("grads", host_grads),
	MR("master", host_master), MR("optimizer", host_optimizer), F_END
};
#undef MR
static const lgp_desc mem_host_desc = { "memory host", mem_host_fields };

/* Push a memory breakdown as the result table of core.memory. */
void lgp_pushmem(lua_State *L, const gp_mem_result *r)
{
	int i, n;

	lua_createtable(L, 0, 24);
	lgp_push(L, &mem_result_desc, r);
	lua_pushstring(L, mem_comp_name(r->largest));
	lua_setfield(L, -2, "largest");
	lua_createtable(L, 0, 4);
	lgp_push(L, &mem_host_desc, r);
	lua_setfield(L, -2, "host");
	/* components: the non-zero ones, in the engine's order-> */
	lua_newtable(L);
	for (i = 0, n = 0; i < GP_MEM_NCOMP; i++) {
		if (r->bytes[i] <= 0)
			continue;
		lua_createtable(L, 0, 3);
		lua_pushstring(L, mem_comp_name(i));
		lua_setfield(L, -2, "name");
		lgp_setnum(L, "bytes", r->bytes[i]);
		lua_pushboolean(L, i < GP_MEM_NTENSOR);
		lua_setfield(L, -2, "tensor");
		lua_rawseti(L, -2, ++n);
	}
	lua_setfield(L, -2, "components");
}

/* core.memory(model, cfg) -> breakdown table.  cfg.kind selects the
 * kernel: "train" (default) or "infer" (an RL step's memory is
 * core.rl's); cfg.capacity is the GPU's
 * memory in bytes; cfg.gpus picks the reserve defaults; cfg.margin,
 * cfg.context, cfg.lib_workspace, cfg.comm, cfg.frag override them. */
int lgp_memory(lua_State *L)
{
	static const char *const kinds[] = {"train", "infer", NULL};
	const char *w = "memory";
	gp_model m;
	gp_mem_reserve rs;
	gp_mem_result r;
	gp_error err;
	double cap;
	int kind, rc;

	lgp_tomodel(L, 1, &m);
	luaL_checktype(L, 2, LUA_TTABLE);
	{
		const char *k = lgp_field_str(L, 2, w, "kind", "train");

		for (kind = 0; kinds[kind] && strcmp(kinds[kind], k); kind++)
			;
		if (!kinds[kind])
			return luaL_error(L, "memory.kind must be train or "
					  "infer (got '%s'; RL: core.rl)", k);
	}
	cap = lgp_field_num(L, 2, w, "capacity", 1, 0);
	/* A serving replica talks over NCCL only inside its tp * pp group
	 * (data-parallel replicas share nothing): its reserve is that
	 * group's, as infer_run's (lgp_toserve). */
	if (kind == 1)
		mem_reserve_default(&rs, lgp_field_int(L, 2, w, "tp", 0, 1,
						       1) > 1 ||
				    lgp_field_int(L, 2, w, "pp", 0, 1, 1) > 1 ?
				    2 : 1);
	else
		mem_reserve_default(&rs, lgp_field_int(L, 2, w, "gpus", 0, 1,
						       1));
	rs.margin = lgp_field_num(L, 2, w, "margin", 0, rs.margin);
	rs.context = lgp_field_num(L, 2, w, "context", 0, rs.context);
	rs.workspace = lgp_field_num(L, 2, w, "lib_workspace", 0,
				     rs.workspace);
	rs.comm = lgp_field_num(L, 2, w, "comm", 0, rs.comm);
	rs.frag = lgp_field_num(L, 2, w, "frag", 0, rs.frag);
	if (kind == 1) {
		gp_infer_cfg ic;

		/* the job's size: the replica's reserve is its tp * pp's */
		lgp_mark(L, 2, "gpus");
		lgp_toinfer(L, 2, &ic);
		rc = mem_infer(&m, &ic, cap, &rs, &r, &err);
	} else {
		gp_train_cfg tc;

		/* a training step's config (core.train's) is a memory config
		 * and more: gpuplan.train asks core.memory of its own */
		lgp_mark_desc(L, 2, &lgp_train_desc);
		lgp_totrain(L, 2, w, &tc);
		rc = mem_train(&m, &tc, cap, &rs, &r, &err);
	}
	lgp_strict(L, 2, 2, w);
	if (rc != GP_OK)
		return luaL_error(L, "%s", err.msg);

	lgp_pushmem(L, &r);
	return 1;
}

/* Bytes per parameter of each model state under its Lua name. */
#define SB(n) O_NUM(#n, gp_state_bytes, n)
static const lgp_field state_bytes_fields[] = {
	SB(weights), SB(grads), SB(master), SB(optimizer),
	O_BOOL("master_shard0", gp_state_bytes, master_shard0), F_END
};
#undef SB
static const lgp_desc state_bytes_desc = { "state bytes",
					   state_bytes_fields };

/* core.state_bytes(recipe, optimizer) -> {weights=, grads=, master=,
 * optimizer=, total=, master_shard0=}: bytes per parameter of the model
 * states before any sharding, of a recipe and an optimizer record (the
 * tables recipe_fields and optim_fields read). */
int lgp_state_bytes(lua_State *L)
{
	gp_recipe rec;
	gp_optim opt;
	gp_state_bytes sb;
	gp_error err;

	lgp_read(L, 1, 1, &lgp_recipe_desc, &rec, LGP_DEFAULTS | LGP_STRICT);
	lgp_read(L, 2, 2, &lgp_optim_desc, &opt, LGP_DEFAULTS | LGP_STRICT);
	if (mem_recipe_check(&rec, &opt, &err) ||
	    mem_state_bytes(&rec, &opt, &sb, &err))
		return luaL_error(L, "%s", err.msg);
	lua_createtable(L, 0, 6);
	lgp_push(L, &state_bytes_desc, &sb);
	lgp_setnum(L, "total", sb.weights + sb.grads + sb.master +
		   sb.optimizer);
	return 1;
}
