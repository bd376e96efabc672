/*
 * lgpuplan.c - the Lua binding of the engine: module "gpuplan.core",
 * registered here (its functions, the tables and defaults it carries),
 * with core.hash and core.check.  The bindings live in lgp_*.c by idea:
 * argument readers (lgp_arg.c), model, device and topology with their
 * handles (lgp_model.c), the config descriptions (lgp_desc.c), memory
 * (lgp_memory.c), inference and serving (lgp_serve.c), RL steps and
 * RL jobs (lgp_rl.c), training, sweeps and training jobs (lgp_train.c);
 * lgp_int.h holds what they share.
 *
 * The binding files are the only C files that see Lua (with lgp_field.c
 * and main.c).  Every function has one shape: check the arguments,
 * fill the kernel's structs, call the kernel, push a result table,
 * return 1.  Misuse raises a Lua error naming the argument and the
 * field; an expected negative outcome (does not fit) is a field of the
 * result, not an error.
 */
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "lgp_int.h"

/* core.hash(s) -> 16 hex digits: gp_hash of the string's bytes (64-bit
 * FNV-1a, words read in the host's byte order), what a plan shard's
 * fingerprint is made of -- a check that two runs read the same catalog
 * and options, not a cryptographic digest. */
static int lgp_hash(lua_State *L)
{
	size_t n;
	const char *s = luaL_checklstring(L, 1, &n);
	unsigned long long h = gp_hash(s, n);
	char hex[17];
	int i;

	for (i = 15; i >= 0; i--, h >>= 4)
		hex[i] = "0123456789abcdef"[h & 15u];
	hex[16] = '\0';
	lua_pushstring(L, hex);
	return 1;
}

/* core.check(kind, t) -> true: run the reader and the kernel's check
 * that every command runs on a catalog-shaped table -- kind "model"
 * (lgp_tomodel, model_check), "device" (lgp_todevice, roof_device_check)
 * or "topology" (lgp_totopo, comm_topo_check) -- and raise its message,
 * so `catalog check` refuses what the commands would.  Kind "dualpipe"
 * ({pp =, vpp =}, each 1 when absent): layout_check's DualPipe rule
 * (layout_check_dualpipe), a usage refusal, for gp.train_job to refuse
 * before a step in the engine's words. */
static int lgp_check(lua_State *L)
{
	static const char *const kinds[] = {"model", "device", "topology",
					    "dualpipe", NULL};
	int kind = luaL_checkoption(L, 1, NULL, kinds);
	gp_error err;

	luaL_checktype(L, 2, LUA_TTABLE);
	if (kind == 0) {
		gp_model m;

		lgp_tomodel(L, 2, &m);
	} else if (kind == 1) {
		roof_device d;

		lgp_todevice(L, 2, &d);
	} else if (kind == 3) {
		lua_Integer pp, vpp;

		lua_getfield(L, 2, "pp");
		lua_getfield(L, 2, "vpp");
		pp = luaL_optinteger(L, -2, 1);
		vpp = luaL_optinteger(L, -1, 1);
		luaL_argcheck(L, pp >= 0 && pp <= INT_MAX && vpp >= 0 &&
			      vpp <= INT_MAX, 2, "pp and vpp must be counts");
		if (layout_check_dualpipe((int)pp, (int)vpp, &err) != GP_OK)
			return lgp_error(L, &err, "");
	} else {
		gp_topo t;

		lgp_totopo(L, 2, &t);
		if (comm_topo_check(&t, &err) != GP_OK)
			return lgp_error(L, &err, "");
	}
	lua_pushboolean(L, 1);
	return 1;
}

static const luaL_Reg corelib[] = {
	{"model_params", lgp_model_params},
	{"model_flops_per_token", lgp_model_flops},
	{"model_vision", lgp_model_vision},
	{"model_kv_bytes", lgp_model_kv},
	{"model_cross_kv_bytes", lgp_model_cross_kv},
	{"model_mamba", lgp_model_mamba},
	{"memory", lgp_memory},
	{"train", lgp_train},
	{"sweep", lgp_sweep},
	{"rl", lgp_rl},
	{"model", lgp_model_handle},
	{"device", lgp_device_handle},
	{"topology", lgp_topo_handle},
	{"train_job", lgp_train_job},
	{"rl_job", lgp_rl_job},
	{"state_bytes", lgp_state_bytes},
	/* module functions: one line each, grouped by section above */
	{"comm_cost", lgp_comm_cost},
	{"roof_op", lgp_roof_op},
	{"roof_ridge", lgp_roof_ridge},
	{"infer", lgp_infer},
	{"infer_gpus_for", lgp_infer_gpus_for},
	{"cost_per_mtok", lgp_cost_per_mtok},
	{"heads_tp_ok", lgp_heads_tp_ok},
	{"infer_weight_format", lgp_infer_wformat},
	{"infer_compute_dtype", lgp_infer_cdtype},
	{"serve", lgp_serve},
	{"serve_target", lgp_serve_target},
	{"serve_accept", lgp_serve_accept},
	{"serve_redundant", lgp_serve_redundant},
	{"host_share", lgp_host_share},
	{"host_bw_each", lgp_host_bw_each},
	{"zero_group_gpus", lgp_zero_group_gpus},
	{"hsdp_experts_ok", lgp_hsdp_experts_ok},
	{"ulysses_refusal", lgp_ulysses_refusal},
	{"check", lgp_check},
	{"hash", lgp_hash},
	{NULL, NULL}
};

static const char *rec_name(int v)
{
	return mem_recompute_name((gp_recompute)v);
}

static const char *sched_name(int v)
{
	return mem_schedule_name((gp_schedule)v);
}

/* A named dimension's names, values 0..hi, as t.names. */
static void push_names(lua_State *L, int hi, const char *(*name)(int))
{
	int v;

	lua_createtable(L, hi + 1, 0);
	for (v = 0; v <= hi; v++) {
		lua_pushstring(L, name(v));
		lua_rawseti(L, -2, v + 1);
	}
	lua_setfield(L, -2, "names");
}

/* Tables the Lua side walks instead of listing them again:
 * TRAIN_PARTS  the parts of a step in train.h's order (train_part_name);
 * SWEEP_DIMS   the layout search's dimensions, outermost first (sweep.h's
 *              SWEEP_DIMS): {name, values = "range" (the space bounds it
 *              by name_max) | "list" | "mask", type = how a result holds
 *              it ("int", "bool", "num", "rec": a recompute policy's
 *              name, "sched": a pipeline schedule's), names = a named
 *              one's names (value 0 first), hi = a mask's top value, base = true when a mask
 *              left unset is the job's own value}. */
static void lgp_push_tables(lua_State *L)
{
	int i = 0;

	lua_createtable(L, TRAIN_NPARTS, 0);
	for (i = 0; i < TRAIN_NPARTS; i++) {
		lua_pushstring(L, train_part_name(i));
		lua_rawseti(L, -2, i + 1);
	}
	lua_setfield(L, -2, "TRAIN_PARTS");
	lua_createtable(L, SWEEP_NDIMS, 0);
	i = 0;
#define DIM(ID, name, type, lua, at, vals, bound, count, hi, def, ok) \
	lua_createtable(L, 0, 5); \
	lgp_setstr(L, "name", #name); \
	lgp_setstr(L, "values", VALS_##vals); \
	lgp_setstr(L, "type", #lua); \
	lgp_setint(L, "hi", hi); \
	lgp_setbool(L, "base", strcmp(#def, "BASE") == 0); \
	NAMES_##lua(hi); \
	lua_rawseti(L, -2, ++i);
#define NAMES_int(hi)
#define NAMES_bool(hi)
#define NAMES_num(hi)
#define NAMES_rec(hi) push_names(L, hi, rec_name)
#define NAMES_sched(hi) push_names(L, hi, sched_name)
#define VALS_RANGE "range"
#define VALS_LIST "list"
#define VALS_MASK "mask"
#define VALS_NODE "mask"
	SWEEP_DIMS(DIM)
#undef DIM
#undef VALS_RANGE
#undef VALS_LIST
#undef VALS_MASK
#undef VALS_NODE
#undef NAMES_int
#undef NAMES_bool
#undef NAMES_num
#undef NAMES_rec
#undef NAMES_sched
	lua_setfield(L, -2, "SWEEP_DIMS");
}

/* core.DEFAULTS: what core.train takes for each field of its config
 * left out (lgp_train_desc's defaults under their Lua names: a number, a
 * boolean or a name), so a test can hold them to the declarations of
 * lua/gpuplan/options.lua. */
static void lgp_push_defaults(lua_State *L)
{
	const lgp_field *f;

	lua_newtable(L);
	for (f = lgp_train_desc.fields; f->name; f++) {
		switch (f->type) {
		case LGP_F_INT:
		case LGP_F_NUM:
			lgp_setnum(L, f->name, f->def);
			break;
		case LGP_F_BOOL:
			lgp_setbool(L, f->name, f->def != 0);
			break;
		case LGP_F_DTYPE:
			lgp_setstr(L, f->name, gp_dtype_name((gp_dtype)(int)
							     f->def));
			break;
		case LGP_F_PARSE:
		case LGP_F_STORE:
			if (f->def_str)
				lgp_setstr(L, f->name, f->def_str);
			break;
		default:
			break;
		}
	}
	lua_setfield(L, -2, "DEFAULTS");
}

int luaopen_gpuplan_core(lua_State *L)
{
	lgp_handle_types(L);
	lgp_rl_handle_types(L);
	luaL_newlib(L, corelib);
	lua_pushliteral(L, "gpuplan.core");
	lua_setfield(L, -2, "_NAME");
	lua_pushinteger(L, SWEEP_SHARDS_MAX);
	lua_setfield(L, -2, "SWEEP_SHARDS_MAX");
	lua_pushnumber(L, ROOF_GEMV_BW);
	lua_setfield(L, -2, "ROOF_GEMV_BW");
	lua_pushinteger(L, GP_STAGE_LIST_MAX);
	lua_setfield(L, -2, "STAGE_LIST_MAX");
	/* the kernels of the shared expert's sigmoid gate a MoE layer
	 * (model.h model_shared_gate_ops), for the Lua side's launch
	 * counts (gpuplan.rl eager_ops_per_layer) */
	lua_pushinteger(L, GP_SHARED_GATE_OPS);
	lua_setfield(L, -2, "SHARED_GATE_OPS");
	lgp_push_tables(L);
	lgp_push_defaults(L);
	return 1;
}

int lgp_error(lua_State *L, const gp_error *err, const char *prefix)
{
	if (err->usage) {
		lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
		lua_getfield(L, -1, "gpuplan.args");
		if (lua_istable(L, -1)) {
			lua_getfield(L, -1, "usage");
			if (lua_isfunction(L, -1)) {
				lua_pushfstring(L, "%s%s", prefix, err->msg);
				lua_call(L, 1, 0);
			} else {
				lua_pop(L, 1);
			}
		}
		lua_pop(L, 2);
	}
	return luaL_error(L, "%s%s", prefix, err->msg);
}
