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

/* weights = {bits=, group=, group_bits=} (absent: all zero, 16-bit);
 * the fields an adapter's base takes too (lgp_int.h). */
static const lgp_field weights_fields[] = {
	LGP_QUANT_FIELDS,
	F_END
};
static const lgp_desc weights_desc = { "weights", weights_fields };

static void c_weights(lua_State *L, int v, void *dst, const char *path)
{
	gp_quant *q = &((gp_infer_cfg *)dst)->weights;

	if (lua_type(L, v) == LUA_TBOOLEAN && !lua_toboolean(L, v))
		return;
	if (lua_type(L, v) != LUA_TTABLE)
		luaL_error(L, "%s must be a table (got %s)", path,
			   luaL_typename(L, v));
	lgp_forget(L, v);
	lgp_read(L, v, 0, &weights_desc, q, LGP_DEFAULTS);
	lgp_strict(L, v, 0, "weights");
	if (mem_quant_bits(q) < 0)
		luaL_error(L, "%s: bits must be in (0, 32], group and "
			   "group_bits >= 0", path);
}

static void lgp_totrain(lua_State *L, int idx, gp_train_cfg *c,
			gp_stage_store *st)
{
	memset(c, 0, sizeof *c);
	lgp_read_store(L, idx, 0, &lgp_mem_train_desc, c, LGP_DEFAULTS, st);
	if (c->base.bits != 0 && mem_quant_bits(&c->base) < 0)
		luaL_error(L, "memory.base: bits must be in (0, 32], group and "
			   "group_bits >= 0");
}

/* core.memory's inference config (kind = "infer"). */
#define MI_NUM(n, m, d) F_NUM(n, offsetof(gp_infer_cfg, m), d)
#define MI_INT(n, m, d, lo) F_INT(n, offsetof(gp_infer_cfg, m), d, lo, INT_MAX)
static const lgp_field infer_mem_fields[] = {
	F_CUSTOM("weights", c_weights),
	MI_NUM("kv_bytes", kv_bytes, 2),
	MI_NUM("mamba_ssm_bytes", mamba_ssm_bytes, 0),
	MI_INT("tp", tp, 1, 1),
	MI_INT("pp", pp, 1, 1),
	MI_NUM("seqs", seqs, 1),
	F_REQNUM("ctx", offsetof(gp_infer_cfg, ctx)),
	MI_INT("block", block, 0, 0),
	MI_NUM("chunk_tokens", chunk_tokens, 0),
	MI_NUM("act_bytes", act_bytes, 0),
	MI_NUM("embed_bits", embed_bits, 0),
	MI_NUM("head_bits", head_bits, 0),
	MI_NUM("kv_free_fraction", kv_free_fraction, 0),
	F_BOOL("offload", offsetof(gp_infer_cfg, offload), 0),
	F_END
};
#undef MI_NUM
#undef MI_INT
static const lgp_desc infer_mem_desc = { "memory", infer_mem_fields };

static void lgp_toinfer(lua_State *L, int idx, gp_infer_cfg *c)
{
	memset(c, 0, sizeof *c);
	lgp_read(L, idx, 0, &infer_mem_desc, c, LGP_DEFAULTS);
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
	O_CNT("params", gp_mem_result, params),
	O_CNT("trainable", gp_mem_result, trainable),
	O_CNT("inflight", gp_mem_result, inflight),
	MR("act_layer", act_layer), MR("cpu_bytes", cpu_bytes),
	MR("host_need", host_need), MR("host_memory", host_memory),
	O_INT("host_ranks", gp_mem_result, host_ranks),
	MR("kv_per_seq", kv_per_seq),
	O_CNT("max_seqs", gp_mem_result, max_seqs),
	O_CNT("max_ctx", gp_mem_result, max_ctx), MR("kv_room", kv_room),
	O_INT("cpu_layers", gp_mem_result, cpu_layers), F_END
};
static const lgp_desc mem_result_desc = { "memory result",
					  mem_result_fields };
static const lgp_field mem_host_fields[] = {
	MR("weights", host_weights), MR("grads", host_grads),
	MR("master", host_master), MR("optimizer", host_optimizer),
	MR("activations", host_acts), MR("ema", host_ema), F_END
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
	/* DeepSpeed's ZeRO-2/3 gradients by phase, where they apply */
	if (r->ds_grad_phase > 0) {
		lua_pushstring(L, r->ds_grad_phase == 1 ? "backward" :
			       r->ds_grad_phase == 2 ? "step" : "idle");
		lua_setfield(L, -2, "grad_phase");
		lgp_setnum(L, "grad_bytes", r->ds_grad_bytes);
	}
	/* ZeRO-3's whole model at init (zero_init false), where it is the
	 * peak */
	if (r->ds_whole_init) {
		lua_pushboolean(L, 1);
		lua_setfield(L, -2, "whole_init");
	}
}

static const lgp_field reserve_fields[] = {
	LGP_RESERVE_FIELDS(gp_mem_reserve, ),
	F_END
};
static const lgp_desc reserve_desc = { "memory", reserve_fields };

/* What core.memory reads first: the kind of job, the card's bytes and
 * the GPUs whose reserve a training step's is (gpus: the job's size,
 * for an inference replica its tp * pp's instead). */
typedef struct memory_head {
	int kind;                /* 0 train, 1 infer */
	double capacity;
	int gpus;
	/* training's host check (memory.h mem_host_fit): the DRAM of one
	 * node of node_gpus GPUs (0: none known, nothing checked) and the
	 * GPUs of one host where the node spans several (0: one host) */
	double host_memory;
	int node_gpus, host_gpus;
} memory_head;

static const char *const memory_kinds[] = {"train", "infer", NULL};
static const lgp_field memory_head_fields[] = {
	{ "kind", LGP_F_NAME, offsetof(memory_head, kind), 0, 0, 0, 0,
	  memory_kinds, NULL, NULL, NULL, NULL },
	F_REQNUM("capacity", offsetof(memory_head, capacity)),
	F_INT("gpus", offsetof(memory_head, gpus), 1, 1, INT_MAX),
	F_NUM("host_memory", offsetof(memory_head, host_memory), 0),
	F_INT("node_gpus", offsetof(memory_head, node_gpus), 0, 1, INT_MAX),
	F_INT("host_gpus", offsetof(memory_head, host_gpus), 0, 1, INT_MAX),
	F_END
};
static const lgp_desc memory_head_desc = { "memory", memory_head_fields };

/* core.memory(model, cfg) -> breakdown table.  cfg.kind selects the
 * kernel: "train" (default) or "infer" (an RL step's memory is
 * core.rl's); cfg.capacity is the GPU's
 * memory in bytes; cfg.gpus picks the reserve defaults; cfg.margin,
 * cfg.context, cfg.lib_workspace, cfg.comm, cfg.frag override them. */
int lgp_memory(lua_State *L)
{
	gp_model m;
	memory_head h;
	gp_mem_reserve rs;
	gp_mem_result r;
	gp_infer_cfg ic;
	gp_train_cfg tc;
	gp_stage_store st;       /* tc's stage list, for this call */
	gp_error err;
	int rc;

	lgp_tomodel(L, 1, &m);
	luaL_checktype(L, 2, LUA_TTABLE);
	lgp_forget(L, 2);
	lgp_read(L, 2, 0, &memory_head_desc, &h, LGP_DEFAULTS);
	if (h.kind == 1) {
		/* A serving replica talks over NCCL only inside its tp * pp
		 * group (data-parallel replicas share nothing): its reserve
		 * is that group's, as infer_run's (lgp_toserve). */
		lgp_toinfer(L, 2, &ic);
		mem_reserve_default(&rs, ic.tp > 1 || ic.pp > 1 ? 2 : 1);
	} else {
		mem_reserve_default(&rs, h.gpus);
	}
	lgp_read(L, 2, 0, &reserve_desc, &rs, 0);
	if (h.kind == 1) {
		rc = mem_infer(&m, &ic, h.capacity, &rs, &r, &err);
	} else {
		/* a training step's config (core.train's) is a memory config
		 * and more: gpuplan.train asks core.memory of its own */
		lgp_mark_desc(L, 2, &lgp_train_desc);
		lgp_totrain(L, 2, &tc, &st);
		rc = mem_train(&m, &tc, h.capacity, &rs, &r, &err);
		if (rc == GP_OK && !(gp_finite(h.host_memory) &&
				     h.host_memory >= 0))
			rc = gp_fail(&err, "host_memory must be a finite "
				     "number >= 0 (got %g)", h.host_memory);
		if (rc == GP_OK)
			mem_host_fit(&r, h.host_memory, h.node_gpus > 0 ?
				     h.node_gpus : h.gpus, h.host_gpus,
				     h.gpus);
	}
	lgp_strict(L, 2, 2, "memory");
	if (rc != GP_OK)
		return lgp_error(L, &err, "");

	lgp_pushmem(L, &r);
	return 1;
}

/* Bytes per parameter of each model state under its Lua name. */
#define SB(n) O_NUM(#n, gp_state_bytes, n)
static const lgp_field state_bytes_fields[] = {
	SB(weights), SB(grads), SB(master), SB(optimizer),
	SB(scalar), O_BOOL("master_shard0", gp_state_bytes, master_shard0),
	O_BOOL("dp_shard", gp_state_bytes, dp_shard), F_END
};
#undef SB
static const lgp_desc state_bytes_desc = { "state bytes",
					   state_bytes_fields };

/* core.state_bytes(recipe, optimizer) -> {weights=, grads=, master=,
 * optimizer=, total=, master_shard0=, scalar=, dp_shard=}: bytes per parameter of the model
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
		return lgp_error(L, &err, "");
	lua_createtable(L, 0, 8);
	lgp_push(L, &state_bytes_desc, &sb);
	lgp_setnum(L, "total", sb.weights + sb.grads + sb.master +
		   sb.optimizer);
	return 1;
}

/* core.host_share(gpus_per_node, host_gpus, gpus) -> share, ranks: the
 * share of a node's host memory and DRAM bandwidth that one host of a
 * run's gpus has, and how many of them it holds (memory.h
 * mem_host_share; host_gpus 0: the node is one host).  Lua prices the
 * host's bandwidth with the engine's rule, not a second copy of it. */
int lgp_host_share(lua_State *L)
{
	lua_Integer n = luaL_checkinteger(L, 1);
	lua_Integer h = luaL_checkinteger(L, 2);
	lua_Integer g = luaL_checkinteger(L, 3);
	int ranks;
	double share;

	luaL_argcheck(L, n >= 1 && n <= INT_MAX, 1,
		      "gpus_per_node must be >= 1");
	luaL_argcheck(L, h >= 0 && h <= INT_MAX, 2, "host_gpus must be >= 0");
	luaL_argcheck(L, g >= 1 && g <= INT_MAX, 3, "gpus must be >= 1");
	share = mem_host_share((int)n, (int)h, (double)g, &ranks);
	lua_pushnumber(L, share);
	lua_pushinteger(L, ranks);
	return 2;
}

/* core.host_bw_each(bw, gpus_per_node, host_gpus, gpus, turns[, width])
 * -> B/s, streams: the host DRAM bandwidth bw of a node gives each of a
 * run's gpus when they stream from host memory at once, turns (>= 1)
 * pipeline stages of width (>= 1, default 1: its tp) GPUs stepping in
 * turn, and how many of a host's GPUs stream at once (memory.h
 * mem_host_bw_each: its host's share over the GPUs that host carries
 * that stream together).  Lua prices the pageable staging and the
 * pinned copies' DRAM with it, as the engine prices llama.cpp's CPU
 * reads and the offloaded optimizer step. */
int lgp_host_bw_each(lua_State *L)
{
	lua_Number bw = luaL_checknumber(L, 1);
	lua_Integer n = luaL_checkinteger(L, 2);
	lua_Integer h = luaL_checkinteger(L, 3);
	lua_Integer g = luaL_checkinteger(L, 4);
	lua_Integer pp = luaL_checkinteger(L, 5);
	lua_Integer w = luaL_optinteger(L, 6, 1);
	int ranks;

	luaL_argcheck(L, bw > 0 && bw < HUGE_VAL, 1,
		      "host_bw must be a positive bandwidth");
	luaL_argcheck(L, n >= 1 && n <= INT_MAX, 2,
		      "gpus_per_node must be >= 1");
	luaL_argcheck(L, h >= 0 && h <= INT_MAX, 3, "host_gpus must be >= 0");
	luaL_argcheck(L, g >= 1 && g <= INT_MAX, 4, "gpus must be >= 1");
	luaL_argcheck(L, pp >= 1 && pp <= INT_MAX, 5, "turns must be >= 1");
	luaL_argcheck(L, w >= 1 && w <= INT_MAX, 6, "width must be >= 1");
	mem_host_share((int)n, (int)h, (double)g, &ranks);
	lua_pushnumber(L, mem_host_bw_each((double)bw, (int)n, (int)h,
					   (double)g, (int)w, (int)pp));
	lua_pushinteger(L, mem_host_streams(ranks, (int)w, (int)pp));
	return 2;
}

/* core.hsdp_experts_ok(experts, hsdp, etp, ep) -> boolean: does a shard
 * group of hsdp GPUs (0: none) hold whole expert groups of etp x ep GPUs
 * of a model with that many experts (0: dense)?  layout.h
 * layout_hsdp_experts_ok, the rule layout_check and the search refuse
 * by; gpuplan.memory zero_group words the refusal by the flags. */
int lgp_hsdp_experts_ok(lua_State *L)
{
	lua_Integer experts = luaL_checkinteger(L, 1);
	lua_Integer hsdp = luaL_checkinteger(L, 2);
	lua_Integer etp = luaL_checkinteger(L, 3);
	lua_Integer ep = luaL_checkinteger(L, 4);

	luaL_argcheck(L, experts >= 0 && experts <= INT_MAX, 1,
		      "experts must be >= 0");
	luaL_argcheck(L, hsdp >= 0 && hsdp <= INT_MAX, 2, "hsdp must be >= 0");
	luaL_argcheck(L, etp >= 1 && etp <= INT_MAX, 3, "etp must be >= 1");
	luaL_argcheck(L, ep >= 1 && ep <= INT_MAX, 4, "ep must be >= 1");
	lua_pushboolean(L, layout_hsdp_experts_ok((int)experts, (int)hsdp,
						  (int)etp, (int)ep));
	return 1;
}

/* core.ulysses_refusal(heads, kv_heads, tp, n) -> nil or message: does
 * a Ulysses group of n ranks on TP tp split a model of heads attention
 * and kv_heads KV heads (0: as many as heads)?  layout.h
 * layout_check_ulysses_heads, the one rule (verl's asserts) that a
 * train_job step and the layout search check by; gpuplan.memory ulysses
 * raises its message for a job the user names. */
int lgp_ulysses_refusal(lua_State *L)
{
	lua_Integer h = luaL_checkinteger(L, 1);
	lua_Integer kv = luaL_checkinteger(L, 2);
	lua_Integer tp = luaL_checkinteger(L, 3);
	lua_Integer n = luaL_checkinteger(L, 4);
	gp_error err;

	luaL_argcheck(L, h >= 0 && h <= INT_MAX, 1, "heads must be >= 0");
	luaL_argcheck(L, kv >= 0 && kv <= INT_MAX, 2, "kv_heads must be >= 0");
	luaL_argcheck(L, tp >= 1 && tp <= INT_MAX, 3, "tp must be >= 1");
	luaL_argcheck(L, n >= 1 && n <= INT_MAX, 4, "ulysses must be >= 1");
	if (layout_check_ulysses_heads((int)h, (int)kv, (int)tp, (int)n,
				       &err) == GP_OK)
		lua_pushnil(L);
	else
		lua_pushstring(L, err.msg);
	return 1;
}

/* core.zero_group_gpus(n, dpcp, tp) -> hsdp or nil: the GPUs a zero_group
 * n's shard group spans in a layout of dpcp = dp * cp data-parallel ranks
 * and tensor parallelism tp (0: n is all of dp * cp, one group), nil
 * where n does not divide dpcp (layout.h layout_zero_group_gpus, the
 * rule the search skips splits by).  gpuplan.memory zero_group words the
 * refusal. */
int lgp_zero_group_gpus(lua_State *L)
{
	lua_Integer n = luaL_checkinteger(L, 1);
	lua_Integer dpcp = luaL_checkinteger(L, 2);
	lua_Integer tp = luaL_checkinteger(L, 3);
	int g;

	luaL_argcheck(L, n >= 1 && n <= INT_MAX, 1, "zero_group must be >= 1");
	luaL_argcheck(L, dpcp >= 1 && dpcp <= INT_MAX, 2, "dp x cp must be >= 1");
	luaL_argcheck(L, tp >= 1 && tp <= INT_MAX && (long long)n * tp <= INT_MAX,
		      3, "tp must be >= 1");
	g = layout_zero_group_gpus((int)n, (int)dpcp, (int)tp);
	if (g < 0)
		lua_pushnil(L);
	else
		lua_pushinteger(L, g);
	return 1;
}
