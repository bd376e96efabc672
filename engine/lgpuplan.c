/*
 * lgpuplan.c - the Lua binding of the engine: module "gpuplan.core".
 *
 * The only C file that sees Lua.  Every function has one shape: check the
 * arguments, fill the kernel's structs, call the kernel, push a result
 * table, return 1.  Misuse raises a Lua error naming the argument and the
 * field; an expected negative outcome (does not fit) is a field of the
 * result, not an error.
 */
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "lauxlib.h"
#include "lua.h"

#include "lfield.h"

#include "common.h"
#include "memory.h"
#include "model.h"
#include "comm.h"
#include "infer.h"
#include "rl.h"
#include "roofline.h"
#include "serve.h"
#include "sweep.h"
#include "train.h"

int luaopen_gpuplan_core(lua_State *L);

/* ---- helpers ---- */

/* t[key] of the table at idx pushed (lua_getfield), the key noted as one
 * this reader takes: lgp_strict refuses the keys no reader noted. */
static int lgp_get(lua_State *L, int idx, const char *key)
{
	lgp_mark(L, idx, key);
	return lua_getfield(L, idx, key);
}

/* Read t[key] (table at idx) as a number; absent -> def (when !required).
 * Raises "<what>.<key> must be ..." on a wrong type, NaN or infinity. */
static double lgp_field_num(lua_State *L, int idx, const char *what,
			    const char *key, int required, double def)
{
	double v;
	int t = lgp_get(L, idx, key);

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

	/* lua_pushfstring knows %f (a lua_Number, "%.14g"), not %g: with
	 * %g every out-of-range count raised "invalid option '%g' to
	 * 'lua_pushfstring'" instead of naming the field. */
	if (v == floor(v) && v > 2147483647.0 && v < 9e15)
		return luaL_error(L, "%s.%s must be an integer %d..2147483647 "
				  "(got %I)", what, key, lo, (lua_Integer)v);
	if (v == floor(v) && v < lo && v > -9e15)
		return luaL_error(L, "%s.%s must be an integer >= %d (got %I)",
				  what, key, lo, (lua_Integer)v);
	if (v != floor(v) || v < lo || v > 2147483647.0)
		return luaL_error(L, "%s.%s must be an integer >= %d (got %f)",
				  what, key, lo, (lua_Number)v);
	return (int)v;
}

static int lgp_field_bool(lua_State *L, int idx, const char *what,
			  const char *key, int def)
{
	int t = lgp_get(L, idx, key), v;

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
	int t = lgp_get(L, idx, key);

	if (t == LUA_TNIL || (t == LUA_TBOOLEAN && !lua_toboolean(L, -1))) {
		lua_pop(L, 1);
		return 0;
	}
	if (t != LUA_TTABLE)
		return luaL_error(L, "%s.%s must be a table (got %s)", what,
				  key, lua_typename(L, t));
	return lua_gettop(L);
}

/* t[key] as an index into the NULL-terminated list opts; absent -> 0 (the
 * first is the default).  Raises "<what>.<key> must be <expect>" for
 * anything else. */
static int lgp_field_option(lua_State *L, int idx, const char *what,
			    const char *key, const char *const opts[],
			    const char *expect)
{
	int t = lgp_get(L, idx, key), k = 0;

	if (t != LUA_TNIL) {
		const char *s = t == LUA_TSTRING ? lua_tostring(L, -1) : "";

		while (opts[k] && strcmp(s, opts[k]) != 0)
			k++;
		if (t != LUA_TSTRING || !opts[k])
			return luaL_error(L, "%s.%s must be %s", what, key,
					  expect);
	}
	lua_pop(L, 1);
	return k;
}

/* t[key] as a precision name (bf16, fp8, ...); absent -> def.  Raises
 * "<what>.<key>: unknown precision '...'" (a number reads as its text),
 * or "<what>.<key> must be a string" for any other value. */
static gp_dtype lgp_field_dtype(lua_State *L, int idx, const char *what,
				const char *key, gp_dtype def)
{
	int t = lgp_get(L, idx, key);
	const char *name = lua_tostring(L, -1);

	if (t == LUA_TNIL) {
		lua_pop(L, 1);
		return def;
	}
	if (!name)
		return (gp_dtype)luaL_error(L, "%s.%s must be a string "
					    "(got %s)", what, key,
					    lua_typename(L, t));
	if (gp_dtype_parse(name, &def) != GP_OK)
		return (gp_dtype)luaL_error(L, "%s.%s: unknown precision "
					    "'%s'", what, key, name);
	lua_pop(L, 1);
	return def;
}

/* Set field key of the table on top of the stack to a number, an
 * integer, a string or a boolean. */
static void lgp_setnum(lua_State *L, const char *key, double v)
{
	lua_pushnumber(L, v);
	lua_setfield(L, -2, key);
}

static void lgp_setint(lua_State *L, const char *key, lua_Integer v)
{
	lua_pushinteger(L, v);
	lua_setfield(L, -2, key);
}

static void lgp_setstr(lua_State *L, const char *key, const char *v)
{
	lua_pushstring(L, v);
	lua_setfield(L, -2, key);
}

static void lgp_setbool(lua_State *L, const char *key, int v)
{
	lua_pushboolean(L, v);
	lua_setfield(L, -2, key);
}

/* ---- model ---- */

/* Read a catalog-shaped model table (catalog/FORMAT.md) at idx into *m,
 * then run model_check.  Raises on any bad field. */
#define LGP_MODEL "gpuplan.model"
#define LGP_DEVICE "gpuplan.device"
#define LGP_TOPO "gpuplan.topology"

/* A handle (core.model, core.device, core.topology) at idx: its struct,
 * checked when it was made; NULL when idx holds no such handle. */
static const void *lgp_handle(lua_State *L, int idx, const char *type)
{
	return lua_type(L, idx) == LUA_TUSERDATA ?
		luaL_testudata(L, idx, type) : NULL;
}

static const char *const model_lua_fields[] = {
	"id", "name", "family", "max_seq", "mtp_layers", "params_b",
	"active_params_b", "dtype", "source", "notes", NULL
};

/* Note names[] (NULL-ended) as keys of the table at idx: the fields of
 * a catalog-built table that the Lua side reads and the kernels do not. */
static void lgp_mark_list(lua_State *L, int idx, const char *const *names)
{
	int i;

	for (i = 0; names[i]; i++)
		lgp_mark(L, idx, names[i]);
}

static void lgp_tomodel(lua_State *L, int idx, gp_model *m)
{
	const char *w = "model";
	gp_error err;
	int sub, top = lua_gettop(L);
	const char *norm;
	const gp_model *h = lgp_handle(L, idx, LGP_MODEL);

	if (h) {
		*m = *h;
		return;
	}
	idx = lua_absindex(L, idx);
	luaL_checktype(L, idx, LUA_TTABLE);
	memset(m, 0, sizeof *m);
	m->layers = lgp_field_int(L, idx, w, "layers", 1, 0, 1);
	m->hidden = lgp_field_int(L, idx, w, "hidden", 1, 0, 1);
	m->heads = lgp_field_int(L, idx, w, "heads", 1, 0, 1);
	m->kv_heads = lgp_field_int(L, idx, w, "kv_heads", 0, m->heads, 1);
	/* Without head_dim the heads split hidden evenly: 100 / 7 heads
	 * would price 98 of its 100 columns. */
	lgp_get(L, idx, "head_dim");
	if (lua_isnil(L, -1) && m->hidden % m->heads != 0)
		luaL_error(L, "heads (%d) must divide hidden (%d) "
			   "unless head_dim is given", m->heads, m->hidden);
	lua_pop(L, 1);
	m->head_dim = lgp_field_int(L, idx, w, "head_dim", 0,
				    m->hidden / m->heads, 1);
	m->ffn_hidden = lgp_field_int(L, idx, w, "ffn_hidden", 0, 0, 0);
	m->ffn_gated = lgp_field_bool(L, idx, w, "ffn_gated", 0);
	m->vocab = lgp_field_int(L, idx, w, "vocab", 1, 0, 1);
	m->tied_embeddings = lgp_field_bool(L, idx, w, "tied_embeddings", 0);
	m->qkv_bias = lgp_field_bool(L, idx, w, "qkv_bias", 0);
	m->linear_bias = lgp_field_bool(L, idx, w, "linear_bias", 0);
	m->pos_embeddings = lgp_field_int(L, idx, w, "pos_embeddings", 0, 0,
					  0);
	m->encoder_layers = lgp_field_int(L, idx, w, "encoder_layers", 0, 0,
					  0);
	m->rel_buckets = lgp_field_int(L, idx, w, "rel_buckets", 0, 0, 0);
	lgp_get(L, idx, "ffn_act");
	if (!lua_isnil(L, -1)) {
		const char *a = lua_type(L, -1) == LUA_TSTRING ?
			lua_tostring(L, -1) : "";

		if (strcmp(a, "relu") && strcmp(a, "gelu") && strcmp(a, "silu"))
			luaL_error(L, "model.ffn_act must be 'relu', 'gelu' or "
				   "'silu'");
		m->ffn_relu = strcmp(a, "relu") == 0;
	}
	lua_pop(L, 1);
	lgp_get(L, idx, "norm");
	norm = lua_isnil(L, -1) ? "rms" : lua_tostring(L, -1);
	if (norm == NULL || (strcmp(norm, "rms") && strcmp(norm, "layer")))
		luaL_error(L, "model.norm must be 'rms' or 'layer'");
	/* 2 * hidden overflowed an int for hidden near 2^31 (UBSan); past
	 * GP_COUNT_MAX model_check refuses the width anyway. */
	m->norm_params = strcmp(norm, "layer") == 0 &&
			 m->hidden <= GP_COUNT_MAX ? 2 * m->hidden
						   : m->hidden;
	lua_pop(L, 1);

	if ((sub = lgp_subtable(L, idx, w, "sliding_window"))) {
		w = "model.sliding_window";
		m->sliding_window = lgp_field_int(L, sub, w, "size", 1, 0, 1);
		m->sliding_layers = lgp_field_int(L, sub, w, "layers", 0,
						  m->layers, 0);
		lgp_strict(L, sub, 0, w);
		w = "model";
	}
	if ((sub = lgp_subtable(L, idx, w, "moe"))) {
		w = "model.moe";
		m->moe.experts = lgp_field_int(L, sub, w, "experts", 1, 0, 1);
		m->moe.top_k = lgp_field_int(L, sub, w, "top_k", 1, 0, 1);
		m->moe.shared_experts = lgp_field_int(L, sub, w,
						      "shared_experts", 0, 0,
						      0);
		m->moe.ffn_hidden = lgp_field_int(L, sub, w, "ffn_hidden", 1,
						  0, 1);
		m->moe.dense_layers = lgp_field_int(L, sub, w, "dense_layers",
						    0, 0, 0);
		m->moe.dense_ffn_hidden = lgp_field_int(L, sub, w,
							"dense_ffn_hidden",
							0, 0, 0);
		m->moe.shared_ffn_hidden = lgp_field_int(L, sub, w,
							 "shared_ffn_hidden",
							 0, 0, 0);
		/* the Lua side's (gpuplan.train's token buffer) */
		lgp_mark(L, sub, "capacity_factor");
		lgp_strict(L, sub, 0, w);
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
		lgp_strict(L, sub, 0, w);
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
		v->temporal_patch = lgp_field_int(L, sub, w, "temporal_patch",
						  0, 1, 1);
		v->tokens_per_image = lgp_field_int(L, sub, w,
						    "tokens_per_image", 0,
						    0, 0);
		v->projector_params = lgp_field_num(L, sub, w,
						    "projector_params", 0, 0);
		if (v->params < 0 || v->projector_params < 0)
			luaL_error(L, "model.vision params must be >= 0");
		lgp_strict(L, sub, 0, w);
	}
	/* The catalog's fields the Lua side reads (catalog/FORMAT.md):
	 * known, not priced here. */
	lgp_mark_list(L, idx, model_lua_fields);
	lgp_strict(L, idx, 0, "model");
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
	lua_createtable(L, 0, 12);
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
	lgp_setnum(L, "matmul_active", p.matmul_active);
	lgp_setnum(L, "encoder", p.encoder);
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

/* A model's bytes per sequence of K/V: fn(model, n, elem_bytes), n the
 * argument named what (tokens, >= 0). */
static int lgp_kv_of(lua_State *L, double (*fn)(const gp_model *, double,
						   double),
		     const char *what, const char *fname)
{
	gp_model m;
	double n, eb, b;

	lgp_tomodel(L, 1, &m);
	n = luaL_checknumber(L, 2);
	eb = luaL_checknumber(L, 3);
	if (!(gp_finite(n) && n >= 0))
		return luaL_argerror(L, 2, lua_pushfstring(L, "%s must be a "
					"finite number >= 0", what));
	luaL_argcheck(L, gp_finite(eb) && eb > 0, 3,
		      "elem_bytes must be a positive number");
	b = fn(&m, n, eb);
	if (b < 0)
		return luaL_error(L, "%s failed", fname);
	lua_pushnumber(L, b);
	return 1;
}

/* core.model_kv_bytes(model, ctx, elem_bytes) -> bytes per sequence. */
static int lgp_model_kv(lua_State *L)
{
	return lgp_kv_of(L, model_kv_bytes, "ctx", "model_kv_bytes");
}

/* core.model_cross_kv_bytes(model, enc_len, elem_bytes) -> bytes of the
 * cross-attention K/V of one sequence (0 for a decoder-only model). */
static int lgp_model_cross_kv(lua_State *L)
{
	return lgp_kv_of(L, model_cross_kv_bytes, "enc_len",
			 "model_cross_kv_bytes");
}

/* ---- end model ---- */

/* ---- memory ---- */

/* String field parsed by a kernel parser; absent -> def. */
static const char *lgp_field_str(lua_State *L, int idx, const char *what,
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

/* ---- struct descriptions (lfield.h) ---- */

/* The kernels' name parsers as lfield's parse functions. */
#define LGP_PARSER(name, fn, T)                                           \
	static int name(const char *s, void *out, void *err)              \
	{                                                                 \
		return fn(s, (T *)out, (gp_error *)err);                  \
	}
LGP_PARSER(p_recompute, mem_recompute_parse, gp_recompute)
LGP_PARSER(p_schedule, mem_schedule_parse, gp_schedule)
LGP_PARSER(p_pipe, mem_pipe_parse, gp_pipe_engine)
LGP_PARSER(p_partition, mem_partition_parse, gp_partition)
LGP_PARSER(p_lora_targets, mem_lora_targets_parse, unsigned)

/* Field makers: name, offset, default, range. */
#define F_INT(n, o, d, lo, hi) { n, LGP_F_INT, o, d, lo, hi, 0, NULL, NULL, NULL, NULL, NULL }
#define F_REQINT(n, o, lo, hi) { n, LGP_F_INT, o, 0, lo, hi, 1, NULL, NULL, NULL, NULL, NULL }
#define F_NUM(n, o, d) { n, LGP_F_NUM, o, d, -HUGE_VAL, HUGE_VAL, 0, NULL, NULL, NULL, NULL, NULL }
#define F_REQNUM(n, o) { n, LGP_F_NUM, o, 0, -HUGE_VAL, HUGE_VAL, 1, NULL, NULL, NULL, NULL, NULL }
#define F_BOOL(n, o, d) { n, LGP_F_BOOL, o, d, 0, 1, 0, NULL, NULL, NULL, NULL, NULL }
#define F_PARSE(n, o, fn, ds) { n, LGP_F_PARSE, o, 0, 0, 0, 0, NULL, fn, NULL, NULL, ds }
#define F_DTYPE(n, o, d) { n, LGP_F_DTYPE, o, d, 0, 0, 0, NULL, NULL, NULL, NULL, NULL }
#define F_SUB(n, o, sd) { n, LGP_F_SUB, o, 0, 0, 0, 0, NULL, NULL, sd, NULL, NULL }
#define F_REQSUB(n, o, sd) { n, LGP_F_SUB, o, 0, 0, 0, 1, NULL, NULL, sd, NULL, NULL }
#define F_CUSTOM(n, fn) { n, LGP_F_CUSTOM, 0, 0, 0, 0, 0, NULL, NULL, NULL, fn, NULL }
#define F_IGNORE(n) { n, LGP_F_IGNORE, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL }
#define F_END { NULL, LGP_F_IGNORE, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL }

static const lgp_field quant_fields[] = {
	F_REQNUM("bits", offsetof(gp_quant, bits)),
	F_INT("group", offsetof(gp_quant, group), 0, 0, 2147483647.0),
	F_NUM("group_bits", offsetof(gp_quant, group_bits), 0),
	F_END
};
static const lgp_desc quant_desc = { "base", quant_fields };

/* offload = "none" | "optimizer" | "params+optimizer" ("params"). */
static void c_offload(lua_State *L, int v, void *dst, const char *path)
{
	gp_train_cfg *c = dst;
	const char *s = lua_type(L, v) == LUA_TSTRING ? lua_tostring(L, v) :
		NULL;

	c->offload_optimizer = c->offload_params = 0;
	if (s && strcmp(s, "optimizer") == 0)
		c->offload_optimizer = 1;
	else if (s && (strcmp(s, "params") == 0 ||
		       strcmp(s, "params+optimizer") == 0))
		c->offload_optimizer = c->offload_params = 1;
	else if (!s || strcmp(s, "none") != 0)
		luaL_error(L, "%s must be none, optimizer or params+optimizer "
			   "(got '%s')", path, s ? s : luaL_typename(L, v));
}

/* The layout's dimensions (layout.h's table) as fields of a gp_train_cfg
 * (lay.) or of a train_cfg (mem.lay.): a degree reads 1 by default and
 * must be at least 1; a range reads its lowest value and is checked by
 * the kernel with its own message (layout_check). */
#define LAY_FIELD_AT(S, P, f, kind, lo, hi, lua) \
	LAY_FIELD_##kind##_##lua(#f, offsetof(S, P f), lo)
#define LAY_FIELD_COUNT_int(n, o, lo) F_INT(n, o, 1, 1, 2147483647.0),
#define LAY_FIELD_COUNT_TP_int(n, o, lo) F_INT(n, o, 0, 0, 2147483647.0),
#define LAY_FIELD_RANGE_int(n, o, lo) F_INT(n, o, lo, lo, 2147483647.0),
#define LAY_FIELD_RANGE_bool(n, o, lo) F_BOOL(n, o, lo),
#define LAY_FIELD_gp_train_cfg(f, kind, lo, hi, values, lua, chk) \
	LAY_FIELD_AT(gp_train_cfg, lay., f, kind, lo, hi, lua)
#define LAY_FIELD_train_cfg(f, kind, lo, hi, values, lua, chk) \
	LAY_FIELD_AT(train_cfg, mem.lay., f, kind, lo, hi, lua)

/* A recipe and an optimizer as gpuplan.memory passes them: the catalog
 * entry's figures (catalog/recipes.lua; schema in lua/gpuplan/schema.lua),
 * `id` kept for the results.  Ranges are mem_recipe_check's. */
static const lgp_field recipe_fields[] = {
	F_IGNORE("id"),
	F_REQNUM("weights", offsetof(gp_recipe, weights)),
	F_REQNUM("grads", offsetof(gp_recipe, grads)),
	F_REQNUM("master", offsetof(gp_recipe, master)),
	F_REQNUM("state", offsetof(gp_recipe, state)),
	F_REQNUM("reduce", offsetof(gp_recipe, reduce)),
	F_REQNUM("activations", offsetof(gp_recipe, act)),
	F_REQNUM("offload", offsetof(gp_recipe, offload)),
	F_BOOL("master_shard0", offsetof(gp_recipe, master_shard0), 0),
	F_BOOL("reduce_phase", offsetof(gp_recipe, reduce_phase), 0),
	F_END
};
static const lgp_desc recipe_desc = { "recipe", recipe_fields };
static const lgp_field optim_fields[] = {
	F_IGNORE("id"),
	F_REQNUM("states", offsetof(gp_optim, states)),
	F_NUM("state", offsetof(gp_optim, state), 0),
	F_BOOL("foreach_adamw", offsetof(gp_optim, foreach_adamw), 0),
	F_END
};
static const lgp_desc optim_desc = { "optimizer", optim_fields };

/* The gp_train_cfg fields, at prefix P of struct S (P empty: the struct
 * itself; "mem.": inside a train_cfg) -- one list for core.memory's
 * reader and core.train's.  Ranges the kernels check themselves (with
 * their own messages) are left open here. */
#define MEM_TRAIN_FIELDS(S, P)                                            \
	F_REQSUB("recipe", offsetof(S, P recipe), &recipe_desc),          \
	F_REQSUB("optimizer", offsetof(S, P optim), &optim_desc),         \
	F_PARSE("recompute", offsetof(S, P recompute), p_recompute,       \
		"none"),                                                  \
	F_PARSE("schedule", offsetof(S, P lay.schedule), p_schedule,      \
		"1f1b"),                                                  \
	F_PARSE("pipe", offsetof(S, P pipe), p_pipe, "megatron"),         \
	F_PARSE("partition", offsetof(S, P partition), p_partition,       \
		"auto"),                                                  \
	GP_LAYOUT_DIMS(LAY_FIELD_##S)                                     \
	F_REQNUM("seq", offsetof(S, P seq)),                              \
	F_NUM("micro_batch", offsetof(S, P lay.micro_batch), 1),          \
	F_INT("recompute_layers", offsetof(S, P recompute_layers), 0, 0,  \
	      2147483647.0),                                              \
	F_NUM("microbatches", offsetof(S, P lay.microbatches), 0),        \
	F_BOOL("flash", offsetof(S, P flash), 1),                         \
	F_BOOL("dropout", offsetof(S, P dropout), 0),                     \
	F_BOOL("eager_swiglu", offsetof(S, P eager_swiglu), 0),           \
	F_BOOL("eager_softmax", offsetof(S, P eager_softmax), 0),         \
	F_NUM("act_bytes", offsetof(S, P act_bytes), 0),                  \
	F_NUM("logit_bytes", offsetof(S, P logit_bytes), 0),              \
	F_NUM("capacity_factor", offsetof(S, P capacity_factor), 0),      \
	F_INT("lora_rank", offsetof(S, P lora_rank), 0, 0, 2147483647.0), \
	F_PARSE("lora_targets", offsetof(S, P lora_targets),              \
		p_lora_targets, NULL),                                    \
	F_BOOL("lora_dropout", offsetof(S, P lora_dropout), 0),           \
	F_SUB("base", offsetof(S, P base), &quant_desc),                  \
	F_BOOL("paged_optimizer", offsetof(S, P paged_optimizer), 0),     \
	F_BOOL("grads_in_bwd", offsetof(S, P grads_in_bwd), 0),           \
	F_BOOL("grads_whole", offsetof(S, P grads_whole), 0),             \
	F_BOOL("fused_qkv_view", offsetof(S, P fused_qkv_view), 0),       \
	F_BOOL("lora_zero_pad", offsetof(S, P lora_zero_pad), 0),         \
	F_BOOL("quant_head", offsetof(S, P quant_head), 0),               \
	F_NUM("images", offsetof(S, P images), 0),                        \
	F_NUM("enc_seq", offsetof(S, P enc_seq), 0),                      \
	F_BOOL("vision_frozen", offsetof(S, P vision_frozen), 0)

static void c_mem_offload(lua_State *L, int v, void *dst, const char *path)
{
	c_offload(L, v, dst, path);
}

static const lgp_field mem_train_fields[] = {
	MEM_TRAIN_FIELDS(gp_train_cfg, ),
	F_CUSTOM("offload", c_mem_offload),
	F_IGNORE("stack"),       /* gpuplan.memory's, on the same table */
	F_END
};
static const lgp_desc mem_train_desc = { "memory", mem_train_fields };

static const lgp_desc train_desc;

static void lgp_totrain(lua_State *L, int idx, const char *w,
			gp_train_cfg *c)
{
	(void)w;
	memset(c, 0, sizeof *c);
	lgp_read(L, idx, 0, &mem_train_desc, c, LGP_DEFAULTS);
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

/* Push a memory breakdown as the result table of core.memory. */
static void lgp_pushmem(lua_State *L, const gp_mem_result *r)
{
	int i, n;

	lua_createtable(L, 0, 24);
	lua_pushboolean(L, r->fits);
	lua_setfield(L, -2, "fits");
	lgp_setnum(L, "total", r->total);
	lgp_setnum(L, "allocated", r->allocated);
	lgp_setnum(L, "capacity", r->capacity);
	lgp_setnum(L, "margin", r->margin);
	lgp_setnum(L, "budget", r->budget);
	lgp_setnum(L, "usable", r->usable);
	lgp_setnum(L, "short_by", r->short_by);
	lua_pushstring(L, mem_comp_name(r->largest));
	lua_setfield(L, -2, "largest");
	lgp_setnum(L, "stage", r->stage);
	lgp_setnum(L, "stage_layers", r->stage_layers);
	lgp_setnum(L, "params", r->params);
	lgp_setnum(L, "trainable", r->trainable);
	lgp_setnum(L, "inflight", r->inflight);
	lgp_setnum(L, "act_layer", r->act_layer);
	lgp_setnum(L, "cpu_bytes", r->cpu_bytes);
	lua_createtable(L, 0, 4);
	lgp_setnum(L, "weights", r->host_weights);
	lgp_setnum(L, "grads", r->host_grads);
	lgp_setnum(L, "master", r->host_master);
	lgp_setnum(L, "optimizer", r->host_optimizer);
	lua_setfield(L, -2, "host");
	lgp_setnum(L, "kv_per_seq", r->kv_per_seq);
	lgp_setnum(L, "max_seqs", r->max_seqs);
	lgp_setnum(L, "max_ctx", r->max_ctx);
	lgp_setnum(L, "kv_room", r->kv_room);
	lgp_setnum(L, "cpu_layers", r->cpu_layers);
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
static int lgp_memory(lua_State *L)
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
		lgp_mark_desc(L, 2, &train_desc);
		lgp_totrain(L, 2, w, &tc);
		rc = mem_train(&m, &tc, cap, &rs, &r, &err);
	}
	lgp_strict(L, 2, 2, w);
	if (rc != GP_OK)
		return luaL_error(L, "%s", err.msg);

	lgp_pushmem(L, &r);
	return 1;
}

/* core.state_bytes(recipe, optimizer) -> {weights=, grads=, master=,
 * optimizer=, total=, master_shard0=}: bytes per parameter of the model
 * states before any sharding, of a recipe and an optimizer record (the
 * tables recipe_fields and optim_fields read). */
static int lgp_state_bytes(lua_State *L)
{
	gp_recipe rec;
	gp_optim opt;
	gp_state_bytes sb;
	gp_error err;

	lgp_read(L, 1, 1, &recipe_desc, &rec, LGP_DEFAULTS | LGP_STRICT);
	lgp_read(L, 2, 2, &optim_desc, &opt, LGP_DEFAULTS | LGP_STRICT);
	if (mem_recipe_check(&rec, &opt, &err) ||
	    mem_state_bytes(&rec, &opt, &sb, &err))
		return luaL_error(L, "%s", err.msg);
	lua_createtable(L, 0, 6);
	lgp_setnum(L, "weights", sb.weights);
	lgp_setnum(L, "grads", sb.grads);
	lgp_setnum(L, "master", sb.master);
	lgp_setnum(L, "optimizer", sb.optimizer);
	lgp_setnum(L, "total", sb.weights + sb.grads + sb.master +
		   sb.optimizer);
	lua_pushboolean(L, sb.master_shard0);
	lua_setfield(L, -2, "master_shard0");
	return 1;
}

/* ---- end memory ---- */

/* ---- comm ---- */

/* A fabric's `nccl` block (catalog/FORMAT.md), SI units, over the link
 * kind's defaults: what it leaves out keeps comm_nccl_default's value. */
#define F_STEP(n, a, p) F_NUM(n, offsetof(gp_nccl, a) + \
			      (p) * sizeof(double), 0)
static const lgp_field nccl_fields[] = {
	F_STEP("ring_ll", ring_step, GP_PROTO_LL),
	F_STEP("ring_ll128", ring_step, GP_PROTO_LL128),
	F_STEP("ring_simple", ring_step, GP_PROTO_SIMPLE),
	F_STEP("tree_ll", tree_step, GP_PROTO_LL),
	F_STEP("tree_ll128", tree_step, GP_PROTO_LL128),
	F_STEP("tree_simple", tree_step, GP_PROTO_SIMPLE),
	F_NUM("nvls_efficiency", offsetof(gp_nccl, nvls_eff), 0),
	F_NUM("nvls_latency", offsetof(gp_nccl, nvls_lat), 0),
	F_IGNORE("source"),
	F_END
};
static const lgp_desc up_nccl_desc = { "topology.up_nccl", nccl_fields };
static const lgp_desc nic_nccl_desc = { "topology.nic_nccl", nccl_fields };

/* Read a topology table (flat fields, SI units; see lua/gpuplan/comm.lua):
 * gpus_per_node, nodes, up_kind ("nvlink"|"pcie"), up_bw, up_latency,
 * up_achievable, up_nvls, up_crosses_cpu, nics, nic_bw, nic_latency,
 * nic_achievable, nic_sharp, nic_path_bw, nvls_tree_bw2, nvls_tree_bw3,
 * host_mem_bw, and the links' NCCL terms up_nccl, nic_nccl (tables,
 * nccl_fields).
 * Range checks are the kernel's. */
static void lgp_totopo(lua_State *L, int idx, gp_topo *t)
{
	static const char *const kinds[] = {"nvlink", "pcie", NULL};
	const char *w = "topology";
	const gp_topo *h = lgp_handle(L, idx, LGP_TOPO);
	int sub;

	if (h) {
		*t = *h;
		return;
	}
	luaL_checktype(L, idx, LUA_TTABLE);
	comm_topo_init(t, lgp_field_option(L, idx, w, "up_kind", kinds,
					   "'nvlink' or 'pcie'") == 1 ?
			  GP_LINK_PCIE : GP_LINK_NVLINK);
	if ((sub = lgp_subtable(L, idx, w, "up_nccl"))) {
		lgp_read(L, sub, 0, &up_nccl_desc, &t->up_nccl, LGP_STRICT);
		lua_pop(L, 1);
	}
	if ((sub = lgp_subtable(L, idx, w, "nic_nccl"))) {
		lgp_read(L, sub, 0, &nic_nccl_desc, &t->nic_nccl, LGP_STRICT);
		lua_pop(L, 1);
	}
	t->gpus_per_node = lgp_field_int(L, idx, w, "gpus_per_node", 1, 0, 1);
	t->nodes = lgp_field_int(L, idx, w, "nodes", 0, 1, 1);
	t->up.bw = lgp_field_num(L, idx, w, "up_bw", t->gpus_per_node > 1, 0);
	t->up.latency = lgp_field_num(L, idx, w, "up_latency", 0, 0.0);
	t->up.achievable = lgp_field_num(L, idx, w, "up_achievable", 0, 1.0);
	t->up_nvls = lgp_field_bool(L, idx, w, "up_nvls", 0);
	t->up_crosses_cpu = lgp_field_bool(L, idx, w, "up_crosses_cpu", 0);
	t->nics = lgp_field_int(L, idx, w, "nics", 0, 0, 0);
	t->nic.bw = lgp_field_num(L, idx, w, "nic_bw", t->nics > 0, 0.0);
	t->nic.latency = lgp_field_num(L, idx, w, "nic_latency", 0, 0.0);
	t->nic.achievable = lgp_field_num(L, idx, w, "nic_achievable", 0,
					  1.0);
	t->nic_sharp = lgp_field_bool(L, idx, w, "nic_sharp", 0);
	t->nic_path_bw = lgp_field_num(L, idx, w, "nic_path_bw", 0, 0.0);
	t->host_mem_bw = lgp_field_num(L, idx, w, "host_mem_bw", 0, 0.0);
	t->nvls_tree_bw[0] = lgp_field_num(L, idx, w, "nvls_tree_bw2", 0, 0.0);
	t->nvls_tree_bw[1] = lgp_field_num(L, idx, w, "nvls_tree_bw3", 0, 0.0);
	lgp_strict(L, idx, 0, w);
}

/* core.comm_cost(topo, op, bytes, gpus [, algo [, per_node [, sharing]]])
 * -> {time, latency, bw_time, algbw, busbw, algo, proto, nodes, ppn};
 * seconds, B/s.  Without per_node the ranks fill whole nodes (comm_cost);
 * with it they form the placed group {gpus, per_node, sharing (default
 * 1)} (comm_group_cost). */
static int lgp_comm_cost(lua_State *L)
{
	gp_topo t;
	gp_comm_result r;
	gp_error err;
	gp_coll op;
	gp_algo algo = GP_ALGO_RING;
	gp_group g;
	double bytes;
	lua_Integer gpus;
	int rc, forced = !lua_isnoneornil(L, 5);

	lgp_totopo(L, 1, &t);
	if (comm_coll_parse(luaL_checkstring(L, 2), &op) != GP_OK)
		return luaL_argerror(L, 2, lua_pushfstring(L,
			"unknown collective '%s'", lua_tostring(L, 2)));
	bytes = luaL_checknumber(L, 3);
	gpus = luaL_checkinteger(L, 4);
	luaL_argcheck(L, gpus >= 1 && gpus <= GP_COUNT_MAX, 4,
		      "gpus must be an integer in 1..16777216");
	if (forced && comm_algo_parse(luaL_checkstring(L, 5), &algo) != GP_OK)
		return luaL_argerror(L, 5, lua_pushfstring(L,
			"unknown algorithm '%s'", lua_tostring(L, 5)));
	if (lua_isnoneornil(L, 6)) {
		rc = forced ? comm_cost_algo(&t, op, algo, bytes, (int)gpus,
					     &r, &err) :
			      comm_cost(&t, op, bytes, (int)gpus, &r, &err);
	} else {
		lua_Integer pn = luaL_checkinteger(L, 6);
		lua_Integer sh = luaL_optinteger(L, 7, 1);

		luaL_argcheck(L, pn >= 1 && pn <= GP_COUNT_MAX, 6,
			      "per_node must be an integer in 1..16777216");
		luaL_argcheck(L, sh >= 1 && sh <= GP_COUNT_MAX, 7,
			      "sharing must be an integer in 1..16777216");
		g.ranks = (int)gpus;
		g.per_node = (int)pn;
		g.sharing = (int)sh;
		rc = forced ? comm_group_cost_algo(&t, op, algo, bytes, &g,
						   &r, &err) :
			      comm_group_cost(&t, op, bytes, &g, &r, &err);
	}
	if (rc != GP_OK)
		return luaL_error(L, "%s", err.msg);
	lua_createtable(L, 0, 9);
	lgp_setnum(L, "time", r.time);
	lgp_setnum(L, "latency", r.latency);
	lgp_setnum(L, "bw_time", r.bw_time);
	lgp_setnum(L, "algbw", r.algbw);
	lgp_setnum(L, "busbw", r.busbw);
	lgp_setstr(L, "algo", comm_algo_name(r.algo));
	lgp_setstr(L, "proto", comm_proto_name(r.proto));
	lgp_setint(L, "nodes", r.nodes);
	lgp_setint(L, "ppn", r.ppn);
	return 1;
}

/* ---- end comm ---- */

/* ---- roofline/infer ---- */

/* t[key] = {bf16 = x, fp8 = y, ...} into out[GP_DTYPE_COUNT], a precision
 * it does not name 0.  Returns 0 (out untouched) when t[key] is absent. */
static int lgp_field_perdtype(lua_State *L, int idx, const char *what,
			      const char *key, double *out)
{
	int i, sub = lgp_subtable(L, idx, what, key);
	const char *path;

	if (!sub)
		return 0;
	path = lua_pushfstring(L, "%s.%s", what, key);
	for (i = 0; i < GP_DTYPE_COUNT; i++)
		out[i] = lgp_field_num(L, sub, path,
				       gp_dtype_name((gp_dtype)i), 0, 0.0);
	lgp_strict(L, sub, 0, path);
	lua_pop(L, 2);
	return 1;
}

/* Read a device table (lua/gpuplan/roofline.lua builds it from the
 * catalog): peak = {bf16 = FLOP/s, ...}, gemm = {bf16 = fraction, ...},
 * mem_bw (B/s), hbm (fraction), launch, graph_launch (s), sms. */
static const char *const device_lua_fields[] = {
	"id", "name", "memory", "attn_kernel", NULL
};

static void lgp_todevice(lua_State *L, int idx, roof_device *d)
{
	const char *w = "device";
	gp_error err;
	const roof_device *h = lgp_handle(L, idx, LGP_DEVICE);

	if (h) {
		*d = *h;
		return;
	}
	luaL_checktype(L, idx, LUA_TTABLE);
	memset(d, 0, sizeof *d);
	if (!lgp_field_perdtype(L, idx, w, "peak", d->peak))
		luaL_error(L, "device.peak is required");
	lgp_field_perdtype(L, idx, w, "gemm", d->gemm_frac);
	d->mem_bw = lgp_field_num(L, idx, w, "mem_bw", 1, 0.0);
	d->hbm_frac = lgp_field_num(L, idx, w, "hbm", 1, 0.0);
	d->launch = lgp_field_num(L, idx, w, "launch", 0, 0.0);
	d->graph_launch = lgp_field_num(L, idx, w, "graph_launch", 0, 0.0);
	d->sms = lgp_field_int(L, idx, w, "sms", 0, 0, 0);
	d->attn_fwd = lgp_field_num(L, idx, w, "attn_fwd", 0, 0.0);
	d->attn_bwd = lgp_field_num(L, idx, w, "attn_bwd", 0, 0.0);
	lgp_mark_list(L, idx, device_lua_fields);
	lgp_strict(L, idx, 0, w);
	if (roof_device_check(d, &err) != GP_OK)
		luaL_error(L, "%s", err.msg);
}

static gp_dtype lgp_checkdtype(lua_State *L, const char *what,
			       const char *name)
{
	gp_dtype t;

	if (!name || gp_dtype_parse(name, &t) != GP_OK)
		luaL_error(L, "%s: unknown precision '%s'", what,
			   name ? name : "nil");
	return t;
}

static void lgp_pushroof(lua_State *L, const roof_result *r)
{
	lgp_setnum(L, "time", r->time);
	lgp_setnum(L, "t_compute", r->t_compute);
	lgp_setnum(L, "t_memory", r->t_memory);
	lgp_setnum(L, "t_launch", r->t_launch);
	lgp_setnum(L, "intensity", r->intensity);
	lgp_setnum(L, "ridge", r->ridge);
	lgp_setnum(L, "ridge_peak", r->ridge_peak);
	lgp_setnum(L, "shape_eff", r->shape_eff);
	lgp_setnum(L, "compute_rate", r->compute_rate);
	lgp_setnum(L, "mem_rate", r->mem_rate);
	lgp_setnum(L, "mem_eff", r->mem_eff);
	lgp_setstr(L, "bound", roof_bound_name(r->bound));
}

/* core.roof_op(device, {flop=, bytes=, m=, n=, k=, count=, prec=,
 * graphs=, name=}) -> {time, t_compute, t_memory, bound, intensity,
 * ridge, ridge_peak, shape_eff, ...}; seconds, FLOP/byte. */
static int lgp_roof_op(lua_State *L)
{
	const char *w = "op";
	roof_device d;
	roof_op op;
	roof_result r;
	gp_error err;
	int graphs;

	lgp_todevice(L, 1, &d);
	luaL_checktype(L, 2, LUA_TTABLE);
	memset(&op, 0, sizeof op);
	op.name = "op";
	op.flop = lgp_field_num(L, 2, w, "flop", 1, 0.0);
	op.bytes = lgp_field_num(L, 2, w, "bytes", 1, 0.0);
	op.m = lgp_field_num(L, 2, w, "m", 0, 0.0);
	op.n = lgp_field_num(L, 2, w, "n", 0, 0.0);
	op.k = lgp_field_num(L, 2, w, "k", 0, 0.0);
	op.count = lgp_field_num(L, 2, w, "count", 0, 1.0);
	op.prec = lgp_field_dtype(L, 2, w, "prec", GP_BF16);
	op.gemv = lgp_field_bool(L, 2, w, "gemv", 0);
	op.dequant = lgp_field_num(L, 2, w, "dequant", 0, 0.0);
	graphs = lgp_field_bool(L, 2, w, "graphs", 1);
	lgp_strict(L, 2, 2, w);
	if (roof_op_time(&d, &op, graphs, &r, &err) != GP_OK)
		return luaL_error(L, "%s", err.msg);
	lua_createtable(L, 0, 12);
	lgp_pushroof(L, &r);
	return 1;
}

/* core.roof_ridge(device, prec [, achievable=true]) -> FLOP/byte. */
static int lgp_roof_ridge(lua_State *L)
{
	roof_device d;
	gp_dtype p;

	lgp_todevice(L, 1, &d);
	p = lgp_checkdtype(L, "prec", luaL_checkstring(L, 2));
	lua_pushnumber(L, roof_ridge(&d, p, lua_isnoneornil(L, 3) ? 1 :
				     lua_toboolean(L, 3)));
	return 1;
}

/* core.infer_weight_format(name) -> bits per weight, stored dtype name;
 * raises for an unknown format. */
static int lgp_infer_wformat(lua_State *L)
{
	const char *name = luaL_checkstring(L, 1);
	double bits;
	gp_dtype t;

	if (infer_weight_format(name, &bits, &t) != GP_OK)
		return luaL_error(L, "unknown weight format '%s' (known: bf16,"
				  " fp16, fp8, int8, w8a8, int4, gptq, awq, "
				  "nf4, fp4, mxfp4, fp6)", name);
	lua_pushnumber(L, bits);
	lua_pushstring(L, gp_dtype_name(t));
	return 2;
}

/* core.infer_compute_dtype(device, weights) -> dtype name. */
static int lgp_infer_cdtype(lua_State *L)
{
	roof_device d;

	lgp_todevice(L, 1, &d);
	lua_pushstring(L, gp_dtype_name(infer_compute_dtype(&d,
					luaL_checkstring(L, 2))));
	return 1;
}

/* Read an infer config table (lua/gpuplan/infer.lua fills it: SI units,
 * field names as infer_cfg; runtime "graphs"|"kernels"|"eager", compute a
 * dtype name, topo an optional topology table as for comm_cost). */
static void lgp_toserve(lua_State *L, int idx, infer_cfg *c, gp_topo *t)
{
	static const char *const rts[] = {"graphs", "kernels", "eager", NULL};
	const char *w = "infer";
	int sub;

	luaL_checktype(L, idx, LUA_TTABLE);
	infer_defaults(c);
	c->weight_bits = lgp_field_num(L, idx, w, "weight_bits", 0,
				       c->weight_bits);
	c->embed_bits = lgp_field_num(L, idx, w, "embed_bits", 0,
				      c->embed_bits);
	c->kv_bytes = lgp_field_num(L, idx, w, "kv_bytes", 0, c->kv_bytes);
	c->compute = lgp_field_dtype(L, idx, w, "compute", c->compute);
	c->tp = lgp_field_int(L, idx, w, "tp", 0, 1, 1);
	c->pp = lgp_field_int(L, idx, w, "pp", 0, 1, 1);
	/* The default gpus is tp * pp: an int product that overflowed for
	 * tp = pp = 65536.  Formed in double and bounded like the kernel's
	 * counts. */
	if ((double)c->tp * c->pp > GP_COUNT_MAX)
		luaL_error(L, "infer.tp * infer.pp must be at most %d (got "
			   "%d * %d)", GP_COUNT_MAX, c->tp, c->pp);
	c->gpus = lgp_field_int(L, idx, w, "gpus", 0, c->tp * c->pp, 1);
	c->batch = lgp_field_int(L, idx, w, "batch", 0, 0, 0);
	c->concurrency = lgp_field_int(L, idx, w, "concurrency", 0, 0, 0);
	c->input = lgp_field_num(L, idx, w, "input", 0, c->input);
	c->output = lgp_field_num(L, idx, w, "output", 0, c->output);
	c->flash = lgp_field_bool(L, idx, w, "flash", 1);
	c->runtime = (infer_runtime)lgp_field_option(L, idx, w, "runtime", rts,
					"graphs, kernels or eager");
	c->host_op_time = lgp_field_num(L, idx, w, "host_op_time", 0,
					c->host_op_time);
	c->host_ops_per_layer = lgp_field_num(L, idx, w, "host_ops_per_layer",
					      0, c->host_ops_per_layer);
	c->capacity = lgp_field_num(L, idx, w, "capacity", 1, 0.0);
	/* The reserve of the replica's tp * pp GPUs (NCCL buffers only
	 * when they talk), then what the caller overrides, as for
	 * core.memory. */
	mem_reserve_default(&c->reserve, c->tp * c->pp);
	c->reserve.margin = lgp_field_num(L, idx, w, "margin", 0,
					  c->reserve.margin);
	c->reserve.context = lgp_field_num(L, idx, w, "context", 0,
					   c->reserve.context);
	c->reserve.workspace = lgp_field_num(L, idx, w, "lib_workspace", 0,
					     c->reserve.workspace);
	c->reserve.comm = lgp_field_num(L, idx, w, "comm", 0,
					c->reserve.comm);
	c->reserve.frag = lgp_field_num(L, idx, w, "frag", 0,
					c->reserve.frag);
	c->kv_free_fraction = lgp_field_num(L, idx, w, "kv_free_fraction", 0,
					    0.0);
	c->kv_reserve_max = lgp_field_bool(L, idx, w, "kv_reserve_max", 0);
	c->max_num_tokens = lgp_field_num(L, idx, w, "max_num_tokens", 0,
					  c->max_num_tokens);
	c->max_batch = lgp_field_int(L, idx, w, "max_batch", 0, c->max_batch,
				     1);
	c->gemv_max = lgp_field_int(L, idx, w, "gemv_max", 0, c->gemv_max, 0);
	c->offload_bw = lgp_field_num(L, idx, w, "offload_bw", 0, 0.0);
	c->offload_link_bw = lgp_field_num(L, idx, w, "offload_link_bw", 0,
					   0.0);
	c->offload_cpu_max = lgp_field_int(L, idx, w, "offload_cpu_max", 0, 0,
					   0);
	c->host_capacity = lgp_field_num(L, idx, w, "host_capacity", 0, 0.0);
	c->ar_latency = lgp_field_num(L, idx, w, "ar_latency", 0,
				      c->ar_latency);
	c->ar_bw = lgp_field_num(L, idx, w, "ar_bw", 0, c->ar_bw);
	c->p2p_bw = lgp_field_num(L, idx, w, "p2p_bw", 0, 0.0);
	c->price = lgp_field_num(L, idx, w, "price", 0, 0.0);
	sub = lgp_subtable(L, idx, w, "topo");
	if (sub) {
		lgp_totopo(L, sub, t);
		c->topo = t;
		lua_pop(L, 1);
	}
}

static void lgp_pushphase(lua_State *L, const infer_phase *p)
{
	int i;

	lua_createtable(L, 0, 12);
	lgp_setnum(L, "batch", p->batch);
	lgp_setnum(L, "tokens", p->tokens);
	lgp_setnum(L, "ctx", p->ctx);
	lgp_setnum(L, "time", p->time);
	lgp_setnum(L, "gpu_time", p->gpu_time);
	lgp_setnum(L, "comm_time", p->comm_time);
	lgp_setnum(L, "offload_time", p->offload_time);
	lgp_setnum(L, "host_time", p->host_time);
	lgp_setnum(L, "flop", p->flop);
	lgp_setnum(L, "bytes", p->bytes);
	lua_createtable(L, p->nops, 0);
	for (i = 0; i < p->nops; i++) {
		const infer_op_row *o = &p->ops[i];

		lua_createtable(L, 0, 18);
		lgp_setstr(L, "name", o->name);
		lgp_setnum(L, "count", o->count);
		lgp_setnum(L, "flop", o->flop);
		lgp_setnum(L, "bytes", o->bytes);
		lgp_setnum(L, "total", o->total);
		lgp_pushroof(L, &o->r);
		lua_rawseti(L, -2, i + 1);
	}
	lua_setfield(L, -2, "ops");
}

/* core.infer(model, device, cfg) -> plain table of infer_result (fits,
 * why, ttft, itl, tokens_per_s, ..., prefill = phase, decode = phase);
 * seconds, bytes, tokens/s. */
static int lgp_infer(lua_State *L)
{
	gp_model m;
	roof_device d;
	infer_cfg c;
	gp_topo t;
	infer_result r;
	gp_error err;

	lgp_tomodel(L, 1, &m);
	lgp_todevice(L, 2, &d);
	lgp_toserve(L, 3, &c, &t);
	lgp_strict(L, 3, 3, "infer");
	if (infer_run(&m, &d, &c, &r, &err) != GP_OK)
		return luaL_error(L, "%s", err.msg);
	lua_createtable(L, 0, 28);
	lgp_setbool(L, "fits", r.fits);
	if (!r.fits)
		lgp_setstr(L, "why", r.why);
	lgp_setnum(L, "weights_total", r.weights_total);
	lgp_setnum(L, "weights_gpu", r.weights_gpu);
	lgp_setnum(L, "offload_layers", r.offload_layers);
	lgp_setnum(L, "offload_bytes", r.offload_bytes);
	lgp_setnum(L, "workspace", r.workspace);
	lgp_setnum(L, "kv_per_seq", r.kv_per_seq);
	lgp_setnum(L, "kv_admit", r.kv_admit);
	lgp_setnum(L, "kv_budget", r.kv_budget);
	lgp_setint(L, "max_batch_kv", r.max_batch_kv);
	lgp_setint(L, "replicas", r.replicas);
	lgp_setint(L, "batch", r.batch);
	if (r.fits) {
		lgp_setnum(L, "ttft", r.ttft);
		lgp_setnum(L, "itl", r.itl);
		lgp_setnum(L, "itl_batch1", r.itl_batch1);
		lgp_setnum(L, "prefill_share", r.prefill_share);
		lgp_setnum(L, "tokens_per_s", r.tokens_per_s);
		lgp_setnum(L, "tokens_per_s_gpu", r.tokens_per_s_gpu);
		lgp_setnum(L, "stream_tokens_per_s", r.stream_tokens_per_s);
		if (c.price > 0) {
			lgp_setnum(L, "cost_per_mtok", r.cost_per_mtok);
			lgp_setnum(L, "tokens_per_s_per_price",
				   r.tokens_per_s_per_price);
		}
		lgp_pushphase(L, &r.prefill);
		lua_setfield(L, -2, "prefill");
		lgp_pushphase(L, &r.decode);
		lua_setfield(L, -2, "decode");
	}
	return 1;
}

/* core.infer_gpus_for(model, device, cfg, target_tps, itl_limit_s) ->
 * gpus, batch, tokens_per_s (whole system). */
static int lgp_infer_gpus_for(lua_State *L)
{
	gp_model m;
	roof_device d;
	infer_cfg c;
	gp_topo t;
	gp_error err;
	double target, limit, tps;
	int gpus, batch;

	lgp_tomodel(L, 1, &m);
	lgp_todevice(L, 2, &d);
	lgp_toserve(L, 3, &c, &t);
	lgp_strict(L, 3, 3, "infer");
	target = luaL_checknumber(L, 4);
	limit = luaL_checknumber(L, 5);
	if (infer_gpus_for(&m, &d, &c, target, limit, &gpus, &batch, &tps,
			   &err) != GP_OK)
		return luaL_error(L, "%s", err.msg);
	lua_pushinteger(L, gpus);
	lua_pushinteger(L, batch);
	lua_pushnumber(L, tps);
	return 3;
}

/* ---- end roofline/infer ---- */

/* ---- serve (MoE across many GPUs) ---- */

/* A layout table {tp, ep, dp_attention, tbo} at cfg[key]; absent: tp 1,
 * ep 1, both flags off. */
static void lgp_tolayout(lua_State *L, int idx, const char *key,
			 serve_layout *y)
{
	const char *w = key;
	int sub = lgp_subtable(L, idx, "serve", key);

	y->tp = y->ep = 1;
	y->dp_attention = y->tbo = 0;
	if (!sub)
		return;
	y->tp = lgp_field_int(L, sub, w, "tp", 0, 1, 1);
	y->ep = lgp_field_int(L, sub, w, "ep", 0, 1, 1);
	y->dp_attention = lgp_field_bool(L, sub, w, "dp_attention", 0);
	y->tbo = lgp_field_bool(L, sub, w, "tbo", 0);
	lgp_strict(L, sub, 0, w);
	lua_pop(L, 1);
}

/* Read a serve config: the infer fields (lgp_toserve) for the base, topo
 * (required: the node and its NICs), decode and prefill layouts, disagg,
 * gpus, prefill_gpus, batch, itl_max (s), prefill_tokens, redundant
 * (-1 or absent: SERVE_REDUNDANT_AUTO),
 * imbalance, mtp, mtp_layers, m_tile, acceptance, a2a ("deepep" |
 * "nccl"),
 * dispatch_bytes, combine_bytes. */
static void lgp_toservemoe(lua_State *L, int idx, serve_cfg *c)
{
	static const char *const a2as[] = {"deepep", "nccl", NULL};
	const char *w = "serve";
	gp_topo t;
	int sub;

	serve_defaults(c);
	lgp_toserve(L, idx, &c->base, &t);
	c->base.topo = NULL;
	sub = lgp_subtable(L, idx, w, "topo");
	if (!sub)
		luaL_error(L, "serve.topo is required");
	lgp_totopo(L, sub, &c->topo);
	lua_pop(L, 1);
	lgp_tolayout(L, idx, "decode", &c->decode);
	lgp_tolayout(L, idx, "prefill", &c->prefill);
	c->disagg = lgp_field_bool(L, idx, w, "disagg", 0);
	c->gpus = lgp_field_int(L, idx, w, "gpus", 0, c->decode.tp, 1);
	c->prefill_gpus = lgp_field_int(L, idx, w, "prefill_gpus", 0, 0, 0);
	c->batch = lgp_field_int(L, idx, w, "batch", 0, 0, 0);
	c->itl_max = lgp_field_num(L, idx, w, "itl_max", 0, 0.0);
	c->prefill_tokens = lgp_field_num(L, idx, w, "prefill_tokens", 0,
					  c->prefill_tokens);
	c->redundant = lgp_field_int(L, idx, w, "redundant", 0,
				     SERVE_REDUNDANT_AUTO, SERVE_REDUNDANT_AUTO);
	c->imbalance = lgp_field_num(L, idx, w, "imbalance", 0, c->imbalance);
	c->mtp = lgp_field_int(L, idx, w, "mtp", 0, 0, 0);
	c->mtp_layers = lgp_field_int(L, idx, w, "mtp_layers", 0, 0, 0);
	c->m_tile = lgp_field_num(L, idx, w, "m_tile", 0, 0.0);
	c->acceptance = lgp_field_num(L, idx, w, "acceptance", 0,
				      c->acceptance);
	c->a2a = (serve_a2a)lgp_field_option(L, idx, w, "a2a", a2as,
					     "'deepep' or 'nccl'");
	c->dispatch_bytes = lgp_field_num(L, idx, w, "dispatch_bytes", 0,
					  c->dispatch_bytes);
	c->combine_bytes = lgp_field_num(L, idx, w, "combine_bytes", 0,
					 c->combine_bytes);
}

static void lgp_pushstep(lua_State *L, const serve_step *s)
{
	int i;

	lua_createtable(L, 0, 16);
	lgp_setnum(L, "batch", s->batch);
	lgp_setnum(L, "tokens", s->tokens);
	lgp_setnum(L, "compute", s->compute);
	lgp_setnum(L, "tp_comm", s->tp_comm);
	lgp_setnum(L, "a2a", s->a2a);
	lgp_setnum(L, "a2a_exposed", s->a2a_exposed);
	lgp_setnum(L, "sm_loss", s->sm_loss);
	lgp_setnum(L, "draft", s->draft);
	lgp_setnum(L, "time", s->time);
	lgp_setnum(L, "dispatch_bytes", s->dispatch_bytes);
	lgp_setnum(L, "combine_bytes", s->combine_bytes);
	lgp_setnum(L, "remote_bytes", s->remote_bytes);
	lgp_setnum(L, "dispatch", s->dispatch);
	lgp_setnum(L, "combine", s->combine);
	lua_createtable(L, s->nops, 0);
	for (i = 0; i < s->nops; i++) {
		const infer_op_row *o = &s->ops[i];

		lua_createtable(L, 0, 18);
		lgp_setstr(L, "name", o->name);
		lgp_setnum(L, "count", o->count);
		lgp_setnum(L, "flop", o->flop);
		lgp_setnum(L, "bytes", o->bytes);
		lgp_setnum(L, "total", o->total);
		lgp_pushroof(L, &o->r);
		lua_rawseti(L, -2, i + 1);
	}
	lua_setfield(L, -2, "ops");
}

static void lgp_pushpool(lua_State *L, const serve_pool *p)
{
	const serve_mem *m = &p->mem;

	lua_createtable(L, 0, 10);
	lgp_setint(L, "tp", p->lay.tp);
	lgp_setint(L, "ep", p->lay.ep);
	lgp_setbool(L, "dp_attention", p->lay.dp_attention);
	lgp_setbool(L, "tbo", p->lay.tbo);
	lgp_setint(L, "gpus", p->gpus);
	lgp_setint(L, "nodes", p->nodes);
	lgp_setnum(L, "tokens_per_s_gpu", p->tokens_per_s_gpu);
	lua_createtable(L, 0, 16);
	lgp_setnum(L, "attention", m->attention);
	lgp_setnum(L, "dense", m->dense);
	lgp_setnum(L, "shared", m->shared);
	lgp_setnum(L, "experts", m->experts);
	lgp_setnum(L, "embed", m->embed);
	lgp_setnum(L, "other", m->other);
	lgp_setnum(L, "mtp", m->mtp);
	lgp_setnum(L, "weights", m->weights);
	lgp_setnum(L, "expert_slots", m->expert_slots);
	lgp_setnum(L, "kv_per_seq", m->kv_per_seq);
	lgp_setnum(L, "kv_admit", m->kv_admit);
	lgp_setnum(L, "a2a_buffer", m->a2a_buffer);
	lgp_setnum(L, "workspace", m->workspace);
	lgp_setnum(L, "kv_budget", m->kv_budget);
	lgp_setnum(L, "used", m->used);
	lgp_setint(L, "max_batch", m->max_batch);
	lua_setfield(L, -2, "memory");
	lgp_pushstep(L, &p->step);
	lua_setfield(L, -2, "step");
}

static void lgp_pushserve(lua_State *L, const serve_result *r)
{
	lua_createtable(L, 0, 24);
	lgp_setbool(L, "fits", r->fits);
	if (!r->fits)
		lgp_setstr(L, "why", r->why);
	lgp_setbool(L, "disagg", r->disagg);
	lgp_setnum(L, "accept", r->accept);
	lgp_setnum(L, "tpot", r->tpot);
	lgp_setnum(L, "itl", r->itl);
	lgp_setnum(L, "ttft", r->ttft);
	lgp_setnum(L, "kv_transfer", r->kv_transfer);
	lgp_setnum(L, "prefill_share", r->prefill_share);
	lgp_setnum(L, "tokens_per_s", r->tokens_per_s);
	lgp_setnum(L, "tokens_per_s_gpu", r->tokens_per_s_gpu);
	lgp_setnum(L, "input_tokens_per_s", r->input_tokens_per_s);
	lgp_setnum(L, "pool_ratio", r->pool_ratio);
	lgp_setnum(L, "cost_per_mtok", r->cost_per_mtok);
	if (r->disagg) {
		lgp_setbool(L, "coloc_fits", r->coloc_fits);
		lgp_setnum(L, "coloc_tokens_per_s_gpu",
			   r->coloc_tokens_per_s_gpu);
		lgp_setnum(L, "coloc_itl", r->coloc_itl);
		lgp_setint(L, "coloc_batch", r->coloc_batch);
	}
	lgp_pushpool(L, &r->decode);
	lua_setfield(L, -2, "decode");
	lgp_pushpool(L, &r->prefill);
	lua_setfield(L, -2, "prefill");
}

/* core.serve(model, device, cfg) -> the deployment (serve_run); seconds,
 * bytes, tokens/s. */
static int lgp_serve(lua_State *L)
{
	gp_model m;
	roof_device d;
	serve_cfg c;
	serve_result r;
	gp_error err;

	lgp_tomodel(L, 1, &m);
	lgp_todevice(L, 2, &d);
	lgp_toservemoe(L, 3, &c);
	lgp_strict(L, 3, 3, "serve");
	if (serve_run(&m, &d, &c, &r, &err) != GP_OK)
		return luaL_error(L, "%s", err.msg);
	lgp_pushserve(L, &r);
	return 1;
}

/* core.serve_target(model, device, cfg, target_tps, itl_max_s,
 * fix_layout, fix_disagg) -> result (serve_run of the plan) and the
 * plan {gpus, prefill_gpus, disagg, decode = layout, prefill = layout}. */
static int lgp_serve_target(lua_State *L)
{
	gp_model m;
	roof_device d;
	serve_cfg c, out;
	serve_result r;
	gp_error err;
	double target, limit;
	int fl, fd;

	lgp_tomodel(L, 1, &m);
	lgp_todevice(L, 2, &d);
	lgp_toservemoe(L, 3, &c);
	lgp_strict(L, 3, 3, "serve");
	target = luaL_checknumber(L, 4);
	limit = luaL_checknumber(L, 5);
	fl = lua_toboolean(L, 6);
	fd = lua_toboolean(L, 7);
	if (serve_target(&m, &d, &c, target, limit, fl, fd, &out, &r, &err)
	    != GP_OK)
		return luaL_error(L, "%s", err.msg);
	lgp_pushserve(L, &r);
	lua_createtable(L, 0, 5);
	lgp_setint(L, "gpus", out.gpus);
	lgp_setint(L, "prefill_gpus", out.prefill_gpus);
	lgp_setbool(L, "disagg", out.disagg);
	return 2;
}

/* core.serve_accept(mtp, acceptance) -> tokens per decode step. */
static int lgp_serve_accept(lua_State *L)
{
	lua_Integer n = luaL_checkinteger(L, 1);
	double a = luaL_checknumber(L, 2);

	luaL_argcheck(L, n >= 0 && n <= 16, 1, "mtp must be 0..16");
	luaL_argcheck(L, a >= 0 && a <= 1, 2, "acceptance must be in [0, 1]");
	lua_pushnumber(L, serve_accept_length((int)n, a));
	return 1;
}

/* ---- end serve ---- */


/* ---- train ---- */

/* order = "tp-cp-ep-dp-pp" (rank order, innermost first). */
static void c_order(lua_State *L, int v, void *dst, const char *path)
{
	train_cfg *c = dst;
	gp_error err;

	if (lua_type(L, v) != LUA_TSTRING)
		luaL_error(L, "%s must be a string (got %s)", path,
			   luaL_typename(L, v));
	if (layout_order_parse(lua_tostring(L, v), c->mem.lay.order, &err))
		luaL_error(L, "%s", err.msg);
}

static void c_train_offload(lua_State *L, int v, void *dst, const char *path)
{
	c_offload(L, v, &((train_cfg *)dst)->mem, path);
}

/* A training-step config: every gp_train_cfg field (as core.memory reads
 * them) plus the step's own.  gpus and margin set the reserve (read
 * after); kind and stack are gpuplan.memory's, set on the same table. */
static const lgp_field train_fields[] = {
	MEM_TRAIN_FIELDS(train_cfg, mem.),
	F_CUSTOM("offload", c_train_offload),
	F_DTYPE("compute", offsetof(train_cfg, compute), GP_BF16),
	F_CUSTOM("order", c_order),
	F_NUM("global_batch", offsetof(train_cfg, global_batch), 0),
	F_BOOL("fsdp", offsetof(train_cfg, fsdp), 0),
	F_BOOL("overlap_grad_reduce", offsetof(train_cfg, overlap_grad_reduce), 0),
	F_BOOL("overlap_param_gather", offsetof(train_cfg, overlap_param_gather), 0),
	F_BOOL("tp_overlap", offsetof(train_cfg, tp_overlap), 0),
	F_BOOL("overlap_p2p", offsetof(train_cfg, overlap_p2p), 0),
	F_BOOL("ep_overlap", offsetof(train_cfg, ep_overlap), 0),
	F_BOOL("causal_flops", offsetof(train_cfg, causal_flops), 0),
	F_BOOL("forward_only", offsetof(train_cfg, forward_only), 0),
	F_BOOL("eager", offsetof(train_cfg, eager), 0),
	F_BOOL("eager_optim", offsetof(train_cfg, eager_optim), 0),
	F_BOOL("delayed_update", offsetof(train_cfg, delayed_update), 0),
	F_NUM("reduce_bytes", offsetof(train_cfg, reduce_bytes), 0),
	F_REQNUM("capacity", offsetof(train_cfg, capacity)),
	F_NUM("tokens", offsetof(train_cfg, tokens), 0),
	F_NUM("price", offsetof(train_cfg, price), 0),
	F_IGNORE("gpus"),
	F_IGNORE("margin"),
	F_IGNORE("kind"),
	F_IGNORE("stack"),
	F_END
};
static const lgp_desc train_desc = { "train", train_fields };

/* Read a training-step config (cfg at idx, argument arg): every field of
 * train_desc, an unknown one refused; the reserve from gpus (NCCL
 * buffers with more than one GPU: the gpus field, a sweep's base, else
 * the layout's) and margin. */
static void lgp_totraincfg_arg(lua_State *L, int idx, int arg, train_cfg *c)
{
	double gpus;

	train_defaults(c);
	lgp_read(L, idx, arg, &train_desc, c, LGP_DEFAULTS | LGP_STRICT);
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
}

static void lgp_totraincfg(lua_State *L, int idx, train_cfg *c)
{
	lgp_totraincfg_arg(L, idx, 0, c);
}

/* Push a training-step result as the table core.train returns. */
static void lgp_pushtrain(lua_State *L, const train_result *r)
{
	static const char *const warns[] = {
		"zero_dp1", "tp_leaves_node", "ep_leaves_node",
		"microbatches_not_multiple_of_pp"
	};
	int i, n;

	lua_createtable(L, 0, 34);
	lgp_setnum(L, "step_s", r->step);
	lua_createtable(L, 0, TRAIN_NPARTS);
	for (i = 0; i < TRAIN_NPARTS; i++)
		lgp_setnum(L, train_part_name(i), r->part[i]);
	lua_setfield(L, -2, "parts");
	lua_createtable(L, 0, TRAIN_NPARTS);
	for (i = 0; i < TRAIN_NPARTS; i++)
		lgp_setnum(L, train_part_name(i), r->hidden[i]);
	lua_setfield(L, -2, "hidden");
	lgp_setnum(L, "microbatches", r->microbatches);
	lgp_setnum(L, "bubble_frac", r->bubble_frac);
	lgp_setint(L, "stage", r->stage);
	lgp_setint(L, "stage_layers", r->stage_layers);
	lgp_setnum(L, "stage_time_s", r->stage_time);
	lgp_setnum(L, "tokens_per_step", r->tokens_per_step);
	lgp_setnum(L, "tokens_per_s", r->tokens_per_s);
	lgp_setnum(L, "tokens_per_s_gpu", r->tokens_per_s_gpu);
	lgp_setnum(L, "model_flops", r->model_flops);
	lgp_setnum(L, "hw_flops", r->hw_flops);
	lgp_setnum(L, "mfu", r->mfu);
	lgp_setnum(L, "hfu", r->hfu);
	lgp_setnum(L, "model_tflops_gpu", r->model_tflops_gpu);
	lgp_setnum(L, "hw_tflops_gpu", r->hw_tflops_gpu);
	lgp_setnum(L, "peak", r->peak);
	lgp_setnum(L, "vision_s", r->vision_time);
	lgp_setnum(L, "vision_patches", r->vision_patches);
	lgp_setnum(L, "train_s", r->train_time);
	lgp_setnum(L, "cost", r->cost);
	lgp_setbool(L, "fits", r->fits);
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
		lua_createtable(L, 0, 3);
		lgp_setint(L, "ranks", r->groups[i].ranks);
		lgp_setint(L, "per_node", r->groups[i].per_node);
		lgp_setint(L, "sharing", r->groups[i].sharing);
		lua_setfield(L, -2, layout_grp_name((gp_grp)i));
	}
	lua_setfield(L, -2, "groups");
	lua_createtable(L, r->nops, 0);
	for (i = 0; i < r->nops; i++) {
		lua_createtable(L, 0, 3);
		lgp_setstr(L, "name", r->ops[i].name);
		lgp_setnum(L, "fwd", r->ops[i].fwd);
		lgp_setnum(L, "bwd", r->ops[i].bwd);
		lua_rawseti(L, -2, i + 1);
	}
	lua_setfield(L, -2, "ops");
}

/* core.train(model, device, topo, cfg) -> result table.  cfg holds every
 * field core.memory reads for kind "train" (layout, recipe, seq, ...)
 * plus compute (dtype name), global_batch, fsdp, order (rank order),
 * the overlap switches, causal_flops, forward_only, capacity (bytes per
 * GPU), margin, tokens and price; seconds, FLOP, bytes. */
static int lgp_train(lua_State *L)
{
	gp_model m;
	roof_device d;
	gp_topo t;
	train_cfg c;
	train_result r;
	gp_error err;

	lgp_tomodel(L, 1, &m);
	lgp_todevice(L, 2, &d);
	lgp_totopo(L, 3, &t);
	lgp_totraincfg_arg(L, 4, 4, &c);
	if (train_step(&m, &d, &t, &c, &r, &err) != GP_OK)
		return luaL_error(L, "%s", err.msg);
	lgp_pushtrain(L, &r);
	return 1;
}

/* ---- end train ---- */


/* ---- sweep ---- */

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
#define PUSH_num(key, v) lgp_setnum(L, key, v)
#define PUSH_rec(key, v) lgp_setstr(L, key, mem_recompute_name(v))
	SWEEP_DIMS(PUSH)
#undef PUSH
#undef PUSH_int
#undef PUSH_bool
#undef PUSH_num
#undef PUSH_rec
	lgp_setint(L, "dp", c->dp);
	lgp_setnum(L, "step_s", c->step);
	lgp_setnum(L, "tokens_per_s", c->tokens_per_s);
	lgp_setnum(L, "mfu", c->mfu);
	lgp_setnum(L, "cost", c->cost);
	lgp_setnum(L, "train_s", c->train_time);
	lgp_setnum(L, "mem_bytes", c->mem_total);
	lgp_setnum(L, "score", c->score);
}

/* An integer list t[key] = {...} into out[0..max); returns its length. */
static int lgp_field_ints(lua_State *L, int idx, const char *what,
			  const char *key, int *out, int max)
{
	int n = 0, i, sub = lgp_subtable(L, idx, what, key);

	if (!sub)
		return 0;
	n = (int)lua_rawlen(L, sub);
	if (n > max)
		luaL_error(L, "%s.%s: at most %d values", what, key, max);
	for (i = 0; i < n; i++) {
		lua_rawgeti(L, sub, i + 1);
		if (!lua_isinteger(L, -1) ||
		    lua_tointeger(L, -1) < INT_MIN ||
		    lua_tointeger(L, -1) > INT_MAX)
			luaL_error(L, "%s.%s[%d] must be an integer of at "
				   "most 32 bits", what, key, i + 1);
		out[i] = (int)lua_tointeger(L, -1);
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	return n;
}

static int lgp_field_nums(lua_State *L, int idx, const char *what,
			  const char *key, double *out, int max)
{
	int n = 0, i, sub = lgp_subtable(L, idx, what, key);

	if (!sub)
		return 0;
	n = (int)lua_rawlen(L, sub);
	if (n > max)
		luaL_error(L, "%s.%s: at most %d values", what, key, max);
	for (i = 0; i < n; i++) {
		lua_rawgeti(L, sub, i + 1);
		if (!lua_isnumber(L, -1))
			luaL_error(L, "%s.%s[%d] must be a number", what,
				   key, i + 1);
		out[i] = lua_tonumber(L, -1);
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	return n;
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
static int lgp_field_boolmask(lua_State *L, int idx, const char *what,
			      const char *key)
{
	int sub = lgp_subtable(L, idx, what, key), n, i, mask = 0;

	if (!sub)
		return 0;
	n = (int)lua_rawlen(L, sub);
	for (i = 0; i < n; i++) {
		lua_rawgeti(L, sub, i + 1);
		if (!lua_isboolean(L, -1))
			luaL_error(L, "%s.%s[%d] must be a boolean", what, key,
				   i + 1);
		mask |= lua_toboolean(L, -1) ? 2 : 1;
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
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

static unsigned lgp_field_mask_rec(lua_State *L, int idx, const char *what,
				   const char *key, int hi)
{
	int sub = lgp_subtable(L, idx, what, key), n, i, ri;
	unsigned mask = 0;

	if (!sub)
		return 0;
	n = (int)lua_rawlen(L, sub);
	for (i = 0; i < n; i++) {
		const char *r;

		lua_rawgeti(L, sub, i + 1);
		/* The key and the value named, not a stack index
		 * (luaL_checkoption's "#-1"). */
		r = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) :
			NULL;
		for (ri = 0; r && ri <= hi &&
			     strcmp(r, mem_recompute_name((gp_recompute)ri));
		     ri++)
			;
		if (!r || ri > hi)
			return (unsigned)luaL_error(L, "%s[%d] must be none, "
						    "selective or full (got "
						    "%s%s%s)", key, i + 1,
						    r ? "'" : "a ",
						    r ? r : luaL_typename(L,
									  -1),
						    r ? "'" : "");
		mask |= 1u << ri;
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	return mask;
}

static unsigned lgp_field_mask_bool(lua_State *L, int idx, const char *what,
				    const char *key, int hi)
{
	(void)hi;
	return (unsigned)lgp_field_boolmask(L, idx, what, key);
}

/* core.sweep(model, device, topo, base, space) -> {results = {...},
 * stats = {space, layouts, bounded, fitting, within, errors}, error,
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
static int lgp_sweep(lua_State *L)
{
	const char *w = "sweep";
	gp_model m;
	roof_device d;
	gp_topo t;
	train_cfg base;
	sweep_space s;
	sweep_stats st;
	sweep_cand *top;
	sweep_key key;
	train_cache *cache;
	lgp_where wh;
	gp_error err;
	int gpus[64], k, ntop = 0, i, has_where;
	double mbs[32];

	lgp_tomodel(L, 1, &m);
	lgp_todevice(L, 2, &d);
	lgp_totopo(L, 3, &t);
	lgp_totraincfg_arg(L, 4, 4, &base);
	luaL_checktype(L, 5, LUA_TTABLE);
	memset(&s, 0, sizeof s);
	s.ngpus = lgp_field_ints(L, 5, w, "gpus", gpus, 64);
	s.gpus = gpus;
	s.nmb = lgp_field_nums(L, 5, w, "micro_batch", mbs, 32);
	s.mbs = mbs;
	/* The ranges and masks by sweep.h's table (the two lists above). */
#define SPACE(ID, name, type, lua, at, vals, bound, count, hi, def, ok) \
	SPACE_##vals(name, lua, bound, hi, def)
#define SPACE_RANGE(name, lua, bound, hi, def) \
	s.bound = lgp_field_int(L, 5, w, #name "_max", 0, def, 1);
#define SPACE_MASK(name, lua, bound, hi, def) \
	s.bound = lgp_field_mask_##lua(L, 5, w, #name, hi);
#define SPACE_LIST(name, lua, bound, hi, def)
	SWEEP_DIMS(SPACE)
#undef SPACE
#undef SPACE_RANGE
#undef SPACE_MASK
#undef SPACE_LIST
	s.no_bound = !lgp_field_bool(L, 5, w, "bound", 1);
	{
		int sh[2], nsh = lgp_field_ints(L, 5, w, "shard", sh, 2);

		if (nsh == 2) {
			s.shard_k = sh[0];
			s.shard_n = sh[1];
		}
	}
	s.max_time = lgp_field_num(L, 5, w, "deadline", 0, 0);
	s.max_cost = lgp_field_num(L, 5, w, "budget", 0, 0);
	if (sweep_key_parse(lgp_field_str(L, 5, w, "key", "time"), &key,
			    &err))
		return luaL_error(L, "%s", err.msg);
	k = lgp_field_int(L, 5, w, "top", 0, 10, 1);
	if (k > 100000)
		return luaL_error(L, "sweep.top must be at most 100000");
	lgp_get(L, 5, "where");
	has_where = lua_isfunction(L, -1);
	if (!has_where && !lua_isnil(L, -1))
		return luaL_error(L, "sweep.where must be a function");
	lua_pop(L, 1);
	lgp_get(L, 5, "progress");
	if (lua_isfunction(L, -1)) {
		s.progress = lgp_progress_call;
		s.progress_ud = &wh;
	} else if (!lua_isnil(L, -1)) {
		return luaL_error(L, "sweep.progress must be a function");
	}
	lua_pop(L, 1);
	lgp_strict(L, 5, 5, w);
	/* The ranked list and the memo live in Lua userdata: freed with
	 * the call's values, even when a where function raises. */
	top = lua_newuserdatauv(L, sizeof *top * (size_t)(k > 0 ? k : 1), 0);
	cache = lua_newuserdatauv(L, sizeof *cache, 0);
	memset(cache, 0, sizeof *cache);
	wh.L = L;
	if (sweep_run(&m, &d, &t, &base, &s, key, cache,
		      has_where ? lgp_where_call : NULL, &wh, top, k, &ntop,
		      &st, &err))
		return luaL_error(L, "%s", err.msg);
	lua_createtable(L, 0, 2);
	lua_createtable(L, ntop, 0);
	for (i = 0; i < ntop; i++) {
		lgp_pushcand(L, &top[i]);
		lua_rawseti(L, -2, i + 1);
	}
	lua_setfield(L, -2, "results");
	lua_createtable(L, 0, 8);
	/* an integer while exact (below 2^53), else the float */
	if (st.space < 9007199254740992.0)
		lgp_setint(L, "space", (lua_Integer)st.space);
	else
		lgp_setnum(L, "space", st.space);
	lgp_setint(L, "layouts", st.divided);
	lgp_setint(L, "bounded", st.bounded);
	lgp_setint(L, "fitting", st.fitting);
	lgp_setint(L, "within", st.within);
	lgp_setint(L, "errors", st.errors);
	lgp_setint(L, "cache_hits", cache->hits);
	lua_setfield(L, -2, "stats");
	if (st.errors > 0) {
		/* the first layout the training step refused, and why */
		lgp_setstr(L, "error", st.error.msg);
		lgp_pushcand(L, &st.error_at);
		lua_setfield(L, -2, "error_at");
	}
	return 1;
}

/* ---- end sweep ---- */

/* ---- rl ---- */

/* core.rl(model, device, topo, cfg) -> result table.  cfg.train is a
 * training-step config (as core.train's), cfg.rollout an engine config
 * (as core.infer's: tp, pp, weight_bits, kv_bytes, compute, runtime,
 * max_batch, max_num_tokens, topo; capacity is set by the step); the
 * flat fields: ppo, ref_model, reward_model, old_logprobs (booleans),
 * prompts, group, prompt_len, response_len, response_max, response_dist
 * ("fixed"|"uniform"|"exp"), minibatch, epochs, pad, colocated,
 * rollout_gpus, staleness, offload_states, ref_host, host_bw (B/s),
 * engine_memory
 * (bytes), price, engine_host_step and engine_host_seq (s per engine
 * step and per sequence in it), engine_host_overlap (boolean),
 * step_overhead (s per step), keep (dynamic sampling's kept share of
 * the generated groups; 0 = no filter), and
 * split_gpus (> 0: search the disaggregated split of that many GPUs);
 * seconds, bytes, tokens. */
static int lgp_rl(lua_State *L)
{
	const char *w = "rl";
	gp_model m;
	roof_device d;
	gp_topo t, rt;
	rl_cfg c;
	rl_result *out;   /* large: in a userdata, not on the C stack */
	gp_error err;
	const char *s;
	int sub, i, split;
	static const char *const mems[RL_NMEM] = {
		"rollout", "forward", "update"
	};

	lgp_tomodel(L, 1, &m);
	lgp_todevice(L, 2, &d);
	lgp_totopo(L, 3, &t);
	luaL_checktype(L, 4, LUA_TTABLE);
	rl_defaults(&c);
	sub = lgp_subtable(L, 4, w, "train");
	if (!sub)
		return luaL_error(L, "rl.train is required");
	lgp_totraincfg(L, sub, &c.train);
	lua_pop(L, 1);
	sub = lgp_subtable(L, 4, w, "rollout");
	if (!sub)
		return luaL_error(L, "rl.rollout is required");
	lgp_toserve(L, sub, &c.roll, &rt);
	lgp_strict(L, sub, 0, "rl.rollout");
	lua_pop(L, 1);
	c.ppo = lgp_field_bool(L, 4, w, "ppo", 0);
	c.ref_model = lgp_field_bool(L, 4, w, "ref_model", 1);
	c.reward_model = lgp_field_bool(L, 4, w, "reward_model", 0);
	c.old_logprobs = lgp_field_bool(L, 4, w, "old_logprobs", 1);
	c.prompts = lgp_field_num(L, 4, w, "prompts", 1, 0);
	c.group = lgp_field_num(L, 4, w, "group", 0, c.group);
	c.prompt_len = lgp_field_num(L, 4, w, "prompt_len", 0, c.prompt_len);
	c.response.mean = lgp_field_num(L, 4, w, "response_len", 1, 0);
	c.response.max = lgp_field_num(L, 4, w, "response_max", 0, 0);
	s = lgp_field_str(L, 4, w, "response_dist", "fixed");
	if (rl_len_dist_parse(s, &c.response.dist, &err))
		return luaL_error(L, "%s", err.msg);
	c.minibatch = lgp_field_num(L, 4, w, "minibatch", 0, 0);
	c.epochs = lgp_field_num(L, 4, w, "epochs", 0, 1);
	c.pad = lgp_field_bool(L, 4, w, "pad", 0);
	c.colocated = lgp_field_bool(L, 4, w, "colocated", 1);
	c.rollout_gpus = lgp_field_int(L, 4, w, "rollout_gpus", 0, 0, 0);
	c.staleness = lgp_field_int(L, 4, w, "staleness", 0, 1, 0);
	c.offload_states = lgp_field_bool(L, 4, w, "offload_states", 0);
	c.ref_host = lgp_field_bool(L, 4, w, "ref_host", 0);
	c.host_bw = lgp_field_num(L, 4, w, "host_bw", 0, 0);
	c.engine_memory = lgp_field_num(L, 4, w, "engine_memory", 0, 0);
	c.price = lgp_field_num(L, 4, w, "price", 0, 0);
	c.host.step = lgp_field_num(L, 4, w, "engine_host_step", 0, 0);
	c.host.seq = lgp_field_num(L, 4, w, "engine_host_seq", 0, 0);
	c.host.overlap = lgp_field_bool(L, 4, w, "engine_host_overlap", 0);
	c.step_overhead = lgp_field_num(L, 4, w, "step_overhead", 0, 0);
	c.keep = lgp_field_num(L, 4, w, "keep", 0, 0);
	split = lgp_field_int(L, 4, w, "split_gpus", 0, 0, 0);
	lgp_strict(L, 4, 4, w);
	out = (rl_result *)lua_newuserdatauv(L, sizeof *out, 0);
	if ((split > 0 ? rl_best_split(&m, &d, &t, &c, split, out, &err) :
	     rl_step(&m, &d, &t, &c, out, &err)) != GP_OK)
		return luaL_error(L, "%s", err.msg);

	lua_createtable(L, 0, 32);
	lgp_setnum(L, "step", out->step);
	lgp_setbool(L, "fits", out->fits);
	if (!out->fits)
		lgp_setstr(L, "why", out->why);
	lgp_setnum(L, "gpus", out->gpus);
	lgp_setnum(L, "samples", out->samples);
	lgp_setnum(L, "generated", out->generated);
	lgp_setnum(L, "train_seq", out->train_seq);
	lgp_setnum(L, "opt_steps", out->opt_steps);
	lgp_setnum(L, "samples_per_s", out->samples_per_s);
	lgp_setnum(L, "tokens_per_s", out->tokens_per_s);
	lgp_setnum(L, "tokens_per_s_gpu", out->tokens_per_s_gpu);
	lgp_setnum(L, "gen_tokens_per_s", out->gen_tokens_per_s);
	lgp_setnum(L, "swap_bytes", out->swap_bytes);
	lgp_setnum(L, "sync_bytes", out->sync_bytes);
	lgp_setnum(L, "cost_step", out->cost_step);
	lgp_setnum(L, "cost_1k_prompts", out->cost_1k_prompts);
	lua_createtable(L, RL_NPHASES, 0);
	for (i = 0; i < RL_NPHASES; i++) {
		const rl_phase_result *ph = &out->ph[i];

		lua_createtable(L, 0, 6);
		lgp_setstr(L, "name", rl_phase_name(i));
		lgp_setnum(L, "seconds", ph->time);
		lgp_setnum(L, "idle", ph->idle);
		lgp_setnum(L, "gpus", ph->gpus);
		lgp_setstr(L, "pool", rl_pool_name(ph->pool));
		lgp_setstr(L, "memory", mems[ph->mem]);
		lua_rawseti(L, -2, i + 1);
	}
	lua_setfield(L, -2, "phases");
	lua_createtable(L, 0, 2);
	for (i = 0; i < 2; i++) {
		lua_createtable(L, 0, 3);
		lgp_setnum(L, "gpus", out->pool_gpus[i]);
		lgp_setnum(L, "busy", out->pool_busy[i]);
		lgp_setnum(L, "idle", out->pool_idle[i]);
		lua_setfield(L, -2, rl_pool_name(i));
	}
	lua_setfield(L, -2, "pools");
	lua_createtable(L, 0, 20);
	lgp_setnum(L, "engines", out->roll.engines);
	lgp_setnum(L, "samples", out->roll.samples);
	lgp_setnum(L, "prompts", out->roll.prompts);
	lgp_setnum(L, "batch", out->roll.batch);
	lgp_setbool(L, "queued", out->roll.queued);
	lgp_setnum(L, "prefill", out->roll.prefill);
	lgp_setnum(L, "decode", out->roll.decode);
	lgp_setnum(L, "tail", out->roll.tail);
	lgp_setnum(L, "longest", out->roll.longest);
	lgp_setnum(L, "steps", out->roll.steps);
	lgp_setnum(L, "mean_batch", out->roll.mean_batch);
	lgp_setnum(L, "itl_first", out->roll.itl_first);
	lgp_setnum(L, "itl_last", out->roll.itl_last);
	lgp_setnum(L, "preempted", out->roll.preempted);
	lgp_setnum(L, "recompute", out->roll.recompute);
	lgp_setnum(L, "host", out->roll.host);
	lgp_setnum(L, "sampler", out->roll.sampler);
	lgp_setnum(L, "kv_budget", out->roll.kv_budget);
	lgp_setnum(L, "kv_peak", out->roll.kv_peak);
	lgp_setnum(L, "weights", out->roll.weights);
	lgp_setnum(L, "workspace", out->roll.workspace);
	lgp_setnum(L, "gen_tokens_per_s", out->roll.gen_tokens_per_s);
	lua_setfield(L, -2, "rollout");
	lua_createtable(L, 0, RL_NMEM);
	for (i = 0; i < RL_NMEM; i++) {
		lgp_pushmem(L, &out->mem[i]);
		lua_setfield(L, -2, mems[i]);
	}
	lua_setfield(L, -2, "memory");
	lgp_pushtrain(L, &out->update);
	lua_setfield(L, -2, "update");
	lgp_pushtrain(L, &out->forward);
	lua_setfield(L, -2, "forward");
	return 1;
}

/* ---- end rl ---- */

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
 * so `catalog check` refuses what the commands would. */
static int lgp_check(lua_State *L)
{
	static const char *const kinds[] = {"model", "device", "topology",
					    NULL};
	int kind = luaL_checkoption(L, 1, NULL, kinds);
	gp_error err;

	luaL_checktype(L, 2, LUA_TTABLE);
	if (kind == 0) {
		gp_model m;

		lgp_tomodel(L, 2, &m);
	} else if (kind == 1) {
		roof_device d;

		lgp_todevice(L, 2, &d);
	} else {
		gp_topo t;

		lgp_totopo(L, 2, &t);
		if (comm_topo_check(&t, &err) != GP_OK)
			return luaL_error(L, "%s", err.msg);
	}
	lua_pushboolean(L, 1);
	return 1;
}

/* ---- handles and training jobs (sweeps from Lua) ---- */

/* core.model(t), core.device(t), core.topology(t) -> a handle: the table
 * read and checked once into its C struct; every core function takes it
 * where it takes the table. */
static int lgp_model_handle(lua_State *L)
{
	gp_model *m = lua_newuserdatauv(L, sizeof *m, 0);

	lgp_tomodel(L, 1, m);
	luaL_setmetatable(L, LGP_MODEL);
	return 1;
}

static int lgp_device_handle(lua_State *L)
{
	roof_device *d = lua_newuserdatauv(L, sizeof *d, 0);

	lgp_todevice(L, 1, d);
	luaL_setmetatable(L, LGP_DEVICE);
	return 1;
}

static int lgp_topo_handle(lua_State *L)
{
	gp_topo *t = lua_newuserdatauv(L, sizeof *t, 0);
	gp_error err;

	lgp_totopo(L, 1, t);
	if (comm_topo_check(t, &err) != GP_OK)
		return luaL_error(L, "%s", err.msg);
	luaL_setmetatable(L, LGP_TOPO);
	return 1;
}

/* A training job: model, device, topology and base config resolved
 * once, with the memo a sweep keeps (train.h train_cache). */
#define LGP_JOB "gpuplan.train_job"
#define LGP_RESULT "gpuplan.train_result"

typedef struct lgp_job {
	gp_model m;
	roof_device d;
	gp_topo t;
	train_cfg base;
	int gpus;                /* dp = gpus / (tp pp cp) */
	int stepped;             /* the memo holds m, d and t */
	train_cache cache;
} lgp_job;

/* What job:step{...} may change, under gp.train's names: the layout
 * (batch is the micro-batch), the recompute policy and the overlaps. */
static const lgp_field step_fields[] = {
	F_INT("tp", offsetof(train_cfg, mem.lay.tp), 1, 1, GP_COUNT_MAX),
	F_INT("pp", offsetof(train_cfg, mem.lay.pp), 1, 1, GP_COUNT_MAX),
	F_INT("cp", offsetof(train_cfg, mem.lay.cp), 1, 1, GP_COUNT_MAX),
	F_INT("ep", offsetof(train_cfg, mem.lay.ep), 1, 1, GP_COUNT_MAX),
	F_INT("vpp", offsetof(train_cfg, mem.lay.vpp), 1, 1, GP_COUNT_MAX),
	F_INT("zero", offsetof(train_cfg, mem.lay.zero), 0, 0, 3),
	F_BOOL("sp", offsetof(train_cfg, mem.lay.sp), 0),
	F_NUM("batch", offsetof(train_cfg, mem.lay.micro_batch), 1),
	F_PARSE("recompute", offsetof(train_cfg, mem.recompute), p_recompute,
		NULL),
	F_INT("recompute_layers", offsetof(train_cfg, mem.recompute_layers),
	      0, 0, GP_COUNT_MAX),
	F_NUM("global_batch", offsetof(train_cfg, global_batch), 0),
	F_BOOL("fsdp", offsetof(train_cfg, fsdp), 0),
	F_BOOL("overlap_grad_reduce", offsetof(train_cfg, overlap_grad_reduce), 0),
	F_BOOL("overlap_param_gather", offsetof(train_cfg, overlap_param_gather), 0),
	F_BOOL("tp_overlap", offsetof(train_cfg, tp_overlap), 0),
	F_BOOL("overlap_p2p", offsetof(train_cfg, overlap_p2p), 0),
	F_BOOL("ep_overlap", offsetof(train_cfg, ep_overlap), 0),
	F_END
};
static const lgp_desc step_desc = { "step", step_fields };

/* core.train_job(model, device, topo, cfg) -> job: cfg as core.train's
 * (its layout the default of each step), with gpus the job's size. */
static int lgp_train_job(lua_State *L)
{
	lgp_job *j = lua_newuserdatauv(L, sizeof *j, 0);

	memset(j, 0, sizeof *j);
	lgp_tomodel(L, 1, &j->m);
	lgp_todevice(L, 2, &j->d);
	lgp_totopo(L, 3, &j->t);
	lgp_totraincfg_arg(L, 4, 4, &j->base);
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
	train_cfg c = j->base;
	train_result *r;
	gp_error err;
	int rep;

	if (!lua_isnoneornil(L, 2))
		lgp_read(L, 2, 2, &step_desc, &c, LGP_STRICT);
	rep = c.mem.lay.tp * c.mem.lay.pp * c.mem.lay.cp;
	if (j->gpus % rep != 0)
		return luaL_error(L, "step: gpus %d is not a multiple of "
				  "tp*pp*cp = %d", j->gpus, rep);
	c.mem.lay.dp = j->gpus / rep;
	c.mem.lay.schedule = c.mem.lay.vpp > 1 ? GP_SCHED_INTERLEAVED :
		GP_SCHED_1F1B;
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
		return luaL_error(L, "step: %s", err.msg);
	j->stepped = 1;
	return 1;
}

/* The scalar fields of a result a sweep reads, by name. */
static const struct {
	const char *name;
	size_t off;
} result_fields[] = {
	{"step_s", offsetof(train_result, step)},
	{"tokens_per_s", offsetof(train_result, tokens_per_s)},
	{"tokens_per_s_gpu", offsetof(train_result, tokens_per_s_gpu)},
	{"mfu", offsetof(train_result, mfu)},
	{"hfu", offsetof(train_result, hfu)},
	{"microbatches", offsetof(train_result, microbatches)},
	{"bubble_frac", offsetof(train_result, bubble_frac)},
	{"train_s", offsetof(train_result, train_time)},
	{"cost", offsetof(train_result, cost)},
	{"model_tflops_gpu", offsetof(train_result, model_tflops_gpu)},
	{"stage_time_s", offsetof(train_result, stage_time)},
	{"mem_bytes", offsetof(train_result, mem.total)},
	{NULL, 0}
};

/* result.step_s, .fits, .mfu ... (numbers), result:table() -> the whole
 * table core.train returns. */
static int lgp_result_table(lua_State *L)
{
	lgp_pushtrain(L, luaL_checkudata(L, 1, LGP_RESULT));
	return 1;
}

/* result.name: a loop reads fields by the million, so the names are
 * looked up in a table (upvalue 1: name -> index into result_fields;
 * -1 fits, -2 table) rather than compared one by one. */
static int lgp_result_index(lua_State *L)
{
	const train_result *r = luaL_checkudata(L, 1, LGP_RESULT);
	lua_Integer i;

	luaL_checkstring(L, 2);
	lua_pushvalue(L, 2);
	if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNUMBER)
		return luaL_error(L, "train result: no field '%s' (step_s, "
				  "fits, tokens_per_s, mfu, mem_bytes, "
				  "...; result:table() for all)",
				  lua_tostring(L, 2));
	i = lua_tointeger(L, -1);
	if (i == -1)
		lua_pushboolean(L, r->fits);
	else if (i == -2)
		lua_pushcfunction(L, lgp_result_table);
	else
		lua_pushnumber(L, *(const double *)(const void *)
			       ((const char *)r + result_fields[i].off));
	return 1;
}

/* lgp_result_index with its name table as upvalue, pushed. */
static void lgp_push_result_index(lua_State *L)
{
	int i;

	lua_newtable(L);
	for (i = 0; result_fields[i].name; i++) {
		lua_pushinteger(L, i);
		lua_setfield(L, -2, result_fields[i].name);
	}
	lua_pushinteger(L, -1);
	lua_setfield(L, -2, "fits");
	lua_pushinteger(L, -2);
	lua_setfield(L, -2, "table");
	lua_pushcclosure(L, lgp_result_index, 1);
}

static void lgp_handle_types(lua_State *L)
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
	lua_pop(L, 1);
	luaL_newmetatable(L, LGP_RESULT);
	lgp_push_result_index(L);
	lua_setfield(L, -2, "__index");
	lua_pop(L, 1);
}

/* ---- end handles ---- */

static const luaL_Reg corelib[] = {
	{"model_params", lgp_model_params},
	{"model_flops_per_token", lgp_model_flops},
	{"model_kv_bytes", lgp_model_kv},
	{"model_cross_kv_bytes", lgp_model_cross_kv},
	{"memory", lgp_memory},
	{"train", lgp_train},
	{"sweep", lgp_sweep},
	{"rl", lgp_rl},
	{"model", lgp_model_handle},
	{"device", lgp_device_handle},
	{"topology", lgp_topo_handle},
	{"train_job", lgp_train_job},
	{"state_bytes", lgp_state_bytes},
	/* module functions: one line each, grouped by section above */
	{"comm_cost", lgp_comm_cost},
	{"roof_op", lgp_roof_op},
	{"roof_ridge", lgp_roof_ridge},
	{"infer", lgp_infer},
	{"infer_gpus_for", lgp_infer_gpus_for},
	{"infer_weight_format", lgp_infer_wformat},
	{"infer_compute_dtype", lgp_infer_cdtype},
	{"serve", lgp_serve},
	{"serve_target", lgp_serve_target},
	{"serve_accept", lgp_serve_accept},
	{"check", lgp_check},
	{"hash", lgp_hash},
	{NULL, NULL}
};

/* Tables the Lua side walks instead of listing them again:
 * TRAIN_PARTS  the parts of a step in train.h's order (train_part_name);
 * SWEEP_DIMS   the layout search's dimensions, outermost first (sweep.h's
 *              SWEEP_DIMS): {name, values = "range" (the space bounds it
 *              by name_max) | "list" | "mask", type = how a result holds
 *              it ("int", "bool", "num", "rec": a recompute policy's
 *              name), hi = a mask's top value, base = true when a mask
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
	lua_rawseti(L, -2, ++i);
#define VALS_RANGE "range"
#define VALS_LIST "list"
#define VALS_MASK "mask"
	SWEEP_DIMS(DIM)
#undef DIM
#undef VALS_RANGE
#undef VALS_LIST
#undef VALS_MASK
	lua_setfield(L, -2, "SWEEP_DIMS");
}

/* core.DEFAULTS: what core.train takes for each field of its config
 * left out (train_desc's defaults under their Lua names: a number, a
 * boolean or a name), so a test can hold them to the declarations of
 * lua/gpuplan/options.lua. */
static void lgp_push_defaults(lua_State *L)
{
	const lgp_field *f;

	lua_newtable(L);
	for (f = train_desc.fields; f->name; f++) {
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
	luaL_newlib(L, corelib);
	lua_pushliteral(L, "gpuplan.core");
	lua_setfield(L, -2, "_NAME");
	lua_pushinteger(L, SWEEP_SHARDS_MAX);
	lua_setfield(L, -2, "SWEEP_SHARDS_MAX");
	lgp_push_tables(L);
	lgp_push_defaults(L);
	return 1;
}
