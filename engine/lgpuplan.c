/*
 * lgpuplan.c - the Lua binding of the engine: module "gpuplan.core".
 *
 * The only C file that sees Lua.  Every function has one shape: check the
 * arguments, fill the kernel's structs, call the kernel, push a result
 * table, return 1.  Misuse raises a Lua error naming the argument and the
 * field; an expected negative outcome (does not fit) is a field of the
 * result, not an error.
 */
#include <math.h>
#include <string.h>

#include "lauxlib.h"
#include "lua.h"

#include "common.h"
#include "model.h"

int luaopen_gpuplan_core(lua_State *L);

/* ---- helpers ---- */

/* Read t[key] (table at idx) as a number; absent -> def (when !required).
 * Raises "<what>.<key> must be ..." on a wrong type, NaN or infinity. */
static double lgp_field_num(lua_State *L, int idx, const char *what,
			    const char *key, int required, double def)
{
	double v;
	int t = lua_getfield(L, idx, key);

	if (t == LUA_TNIL) {
		lua_pop(L, 1);
		if (required)
			return luaL_error(L, "%s.%s is required", what, key);
		return def;
	}
	if (t != LUA_TNUMBER) {
		return luaL_error(L, "%s.%s must be a number (got %s)", what,
				  key, lua_typename(L, t));
	}
	v = lua_tonumber(L, -1);
	lua_pop(L, 1);
	if (!gp_finite(v))
		return luaL_error(L, "%s.%s must be finite", what, key);
	return v;
}

/* Integer field in [lo, INT_MAX]; absent -> def unless required. */
static int lgp_field_int(lua_State *L, int idx, const char *what,
			 const char *key, int required, int def, int lo)
{
	double v = lgp_field_num(L, idx, what, key, required, (double)def);

	if (v != floor(v) || v < lo || v > 2147483647.0)
		return luaL_error(L, "%s.%s must be an integer >= %d (got %g)",
				  what, key, lo, v);
	return (int)v;
}

static int lgp_field_bool(lua_State *L, int idx, const char *what,
			  const char *key, int def)
{
	int t = lua_getfield(L, idx, key), v;

	if (t == LUA_TNIL) {
		lua_pop(L, 1);
		return def;
	}
	if (t != LUA_TBOOLEAN)
		return luaL_error(L, "%s.%s must be a boolean (got %s)", what,
				  key, lua_typename(L, t));
	v = lua_toboolean(L, -1);
	lua_pop(L, 1);
	return v;
}

/* Push t[key] if it is a table and return its absolute index; 0 if nil. */
static int lgp_subtable(lua_State *L, int idx, const char *what,
			const char *key)
{
	int t = lua_getfield(L, idx, key);

	if (t == LUA_TNIL || (t == LUA_TBOOLEAN && !lua_toboolean(L, -1))) {
		lua_pop(L, 1);
		return 0;
	}
	if (t != LUA_TTABLE)
		return luaL_error(L, "%s.%s must be a table (got %s)", what,
				  key, lua_typename(L, t));
	return lua_gettop(L);
}

static void lgp_setnum(lua_State *L, const char *key, double v)
{
	lua_pushnumber(L, v);
	lua_setfield(L, -2, key);
}

/* ---- model ---- */

/* Read a catalog-shaped model table (catalog/FORMAT.md) at idx into *m,
 * then run model_check.  Raises on any bad field. */
static void lgp_tomodel(lua_State *L, int idx, gp_model *m)
{
	const char *w = "model";
	gp_error err;
	int sub, top = lua_gettop(L);
	const char *norm;

	idx = lua_absindex(L, idx);
	luaL_checktype(L, idx, LUA_TTABLE);
	memset(m, 0, sizeof *m);
	m->layers = lgp_field_int(L, idx, w, "layers", 1, 0, 1);
	m->hidden = lgp_field_int(L, idx, w, "hidden", 1, 0, 1);
	m->heads = lgp_field_int(L, idx, w, "heads", 1, 0, 1);
	m->kv_heads = lgp_field_int(L, idx, w, "kv_heads", 0, m->heads, 1);
	m->head_dim = lgp_field_int(L, idx, w, "head_dim", 0,
				    m->hidden / m->heads, 1);
	m->ffn_hidden = lgp_field_int(L, idx, w, "ffn_hidden", 0, 0, 0);
	m->ffn_gated = lgp_field_bool(L, idx, w, "ffn_gated", 0);
	m->vocab = lgp_field_int(L, idx, w, "vocab", 1, 0, 1);
	m->tied_embeddings = lgp_field_bool(L, idx, w, "tied_embeddings", 0);
	m->qkv_bias = lgp_field_bool(L, idx, w, "qkv_bias", 0);
	lua_getfield(L, idx, "norm");
	norm = lua_isnil(L, -1) ? "rms" : lua_tostring(L, -1);
	if (norm == NULL || (strcmp(norm, "rms") && strcmp(norm, "layer")))
		luaL_error(L, "model.norm must be 'rms' or 'layer'");
	m->norm_params = strcmp(norm, "layer") == 0 ? 2 * m->hidden
						    : m->hidden;
	lua_pop(L, 1);

	if ((sub = lgp_subtable(L, idx, w, "sliding_window"))) {
		w = "model.sliding_window";
		m->sliding_window = lgp_field_int(L, sub, w, "size", 1, 0, 1);
		m->sliding_layers = lgp_field_int(L, sub, w, "layers", 0,
						  m->layers, 0);
		w = "model";
	}
	if ((sub = lgp_subtable(L, idx, w, "moe"))) {
		w = "model.moe";
		m->moe.experts = lgp_field_int(L, sub, w, "experts", 1, 0, 1);
		m->moe.top_k = lgp_field_int(L, sub, w, "top_k", 1, 0, 1);
		m->moe.shared_experts = lgp_field_int(L, sub, w,
						      "shared_experts", 0, 0, 0);
		m->moe.ffn_hidden = lgp_field_int(L, sub, w, "ffn_hidden", 1,
						  0, 1);
		m->moe.dense_layers = lgp_field_int(L, sub, w, "dense_layers",
						    0, 0, 0);
		m->moe.dense_ffn_hidden = lgp_field_int(L, sub, w,
							"dense_ffn_hidden",
							0, 0, 0);
		w = "model";
	}
	if ((sub = lgp_subtable(L, idx, w, "mla"))) {
		w = "model.mla";
		m->mla.q_lora_rank = lgp_field_int(L, sub, w, "q_lora_rank", 0,
						   0, 0);
		m->mla.kv_lora_rank = lgp_field_int(L, sub, w, "kv_lora_rank",
						    1, 0, 1);
		m->mla.qk_nope_head_dim = lgp_field_int(L, sub, w,
							"qk_nope_head_dim",
							1, 0, 1);
		m->mla.qk_rope_head_dim = lgp_field_int(L, sub, w,
							"qk_rope_head_dim",
							1, 0, 1);
		m->mla.v_head_dim = lgp_field_int(L, sub, w, "v_head_dim", 1,
						  0, 1);
		w = "model";
	}
	if ((sub = lgp_subtable(L, idx, w, "vision"))) {
		gp_vision *v = &m->vision;

		w = "model.vision";
		v->params = lgp_field_num(L, sub, w, "params", 0, 0);
		v->layers = lgp_field_int(L, sub, w, "layers",
					  v->params <= 0, 0, 0);
		v->hidden = lgp_field_int(L, sub, w, "hidden",
					  v->params <= 0, 0, 0);
		v->heads = lgp_field_int(L, sub, w, "heads", 0, 0, 0);
		v->ffn_hidden = lgp_field_int(L, sub, w, "ffn_hidden",
					      v->params <= 0, 0, 0);
		v->ffn_gated = lgp_field_bool(L, sub, w, "ffn_gated", 0);
		v->image_size = lgp_field_int(L, sub, w, "image_size", 0, 0, 0);
		v->patch_size = lgp_field_int(L, sub, w, "patch_size", 0, 0, 0);
		v->merge = lgp_field_int(L, sub, w, "merge", 0, 1, 1);
		v->tokens_per_image = lgp_field_int(L, sub, w,
						    "tokens_per_image", 0,
						    0, 0);
		v->projector_params = lgp_field_num(L, sub, w,
						    "projector_params", 0, 0);
		if (v->params < 0 || v->projector_params < 0)
			luaL_error(L, "model.vision params must be >= 0");
	}
	lua_settop(L, top);
	if (model_check(m, &err) != GP_OK)
		luaL_error(L, "%s", err.msg);
}

/* core.model_params(model) -> { embedding, lm_head, attention, dense_mlp,
 * experts, router, norms, vision, total, active, per_layer_max }
 * (element counts). */
static int lgp_model_params(lua_State *L)
{
	gp_model m;
	gp_params p;
	gp_error err;

	lgp_tomodel(L, 1, &m);
	if (model_params(&m, &p, &err) != GP_OK)
		return luaL_error(L, "%s", err.msg);
	lua_createtable(L, 0, 11);
	lgp_setnum(L, "embedding", p.embedding);
	lgp_setnum(L, "lm_head", p.lm_head);
	lgp_setnum(L, "attention", p.attention);
	lgp_setnum(L, "dense_mlp", p.dense_mlp);
	lgp_setnum(L, "experts", p.experts);
	lgp_setnum(L, "router", p.router);
	lgp_setnum(L, "norms", p.norms);
	lgp_setnum(L, "vision", p.vision);
	lgp_setnum(L, "total", p.total);
	lgp_setnum(L, "active", p.active);
	lgp_setnum(L, "per_layer_max", p.per_layer_max);
	return 1;
}

/* core.model_flops_per_token(model, ctx) -> forward FLOP per token. */
static int lgp_model_flops(lua_State *L)
{
	gp_model m;
	double ctx, f;

	lgp_tomodel(L, 1, &m);
	ctx = luaL_checknumber(L, 2);
	luaL_argcheck(L, gp_finite(ctx) && ctx >= 0, 2,
		      "ctx must be a finite number >= 0");
	f = model_fwd_flops_per_token(&m, ctx);
	if (f < 0)
		return luaL_error(L, "model_fwd_flops_per_token failed");
	lua_pushnumber(L, f);
	return 1;
}

/* core.model_kv_bytes(model, ctx, elem_bytes) -> bytes per sequence. */
static int lgp_model_kv(lua_State *L)
{
	gp_model m;
	double ctx, eb, b;

	lgp_tomodel(L, 1, &m);
	ctx = luaL_checknumber(L, 2);
	eb = luaL_checknumber(L, 3);
	luaL_argcheck(L, gp_finite(ctx) && ctx >= 0, 2,
		      "ctx must be a finite number >= 0");
	luaL_argcheck(L, gp_finite(eb) && eb > 0, 3,
		      "elem_bytes must be a positive number");
	b = model_kv_bytes(&m, ctx, eb);
	if (b < 0)
		return luaL_error(L, "model_kv_bytes failed");
	lua_pushnumber(L, b);
	return 1;
}

/* ---- end model ---- */

static const luaL_Reg corelib[] = {
	{"model_params", lgp_model_params},
	{"model_flops_per_token", lgp_model_flops},
	{"model_kv_bytes", lgp_model_kv},
	/* module functions: one line each, grouped by section above */
	{NULL, NULL}
};

int luaopen_gpuplan_core(lua_State *L)
{
	luaL_newlib(L, corelib);
	lua_pushliteral(L, "gpuplan.core");
	lua_setfield(L, -2, "_NAME");
	return 1;
}
