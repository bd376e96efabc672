/*
 * lgp_model.c - the model, device and topology readers and their
 * handles (core.model, core.device, core.topology: read and checked
 * once), and the calls that need nothing else: a model's parameters,
 * FLOPs and KV bytes, a collective's cost, a roofline op.
 */
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "lgp_int.h"

/* ---- model ---- */

/* Read a catalog-shaped model table (catalog/FORMAT.md) at idx into *m,
 * then run model_check.  Raises on any bad field. */

/* A handle (core.model, core.device, core.topology) at idx: its struct,
 * checked when it was made; NULL when idx holds no such handle. */
static const void *lgp_handle(lua_State *L, int idx, const char *type)
{
	return lua_type(L, idx) == LUA_TUSERDATA ?
		luaL_testudata(L, idx, type) : NULL;
}

/* A catalog-shaped model table's fields (catalog/FORMAT.md), described
 * once for lgp_read.  A default of -1 marks one that follows from other
 * fields (lgp_tomodel fills it); the range refuses -1 from the user. */
#define IMAX 2147483647.0

/* Fields of a model table that price nothing here but that a reader does
 * use (validate's case reader reads mtp_layers, the catalog listing
 * params_b): checked as the catalog's schema checks them (schema.lua
 * model: mtp_layers an integer >= 0 up to a count's 2^24, params_b and
 * active_params_b positive billions up to 1e6), so that a script's table
 * with params_b = "x", NaN or -1 is refused, not carried on. */
/* "%s <why> (got X)": a whole X said as one ("got -1", not "-1.0"), as
 * lgp_field's read_number says it. */
static void model_meta_fail(lua_State *L, const char *path, const char *why,
			    lua_Number x)
{
	/* NaN: lua_pushfstring's %f printed the C library's "-nan" */
	if (x != x)
		luaL_error(L, "%s %s (got NaN)", path, why);
	if (x == floor(x) && fabs(x) < 9e15)
		luaL_error(L, "%s %s (got %I)", path, why, (lua_Integer)x);
	luaL_error(L, "%s %s (got %f)", path, why, x);
}

/* The number at v, or an error naming path when v holds none. */
static lua_Number model_meta_number(lua_State *L, int v, const char *path)
{
	if (lua_type(L, v) != LUA_TNUMBER)
		luaL_error(L, "%s must be a number (got %s)", path,
			   luaL_typename(L, v));
	return lua_tonumber(L, v);
}

static void c_model_billions(lua_State *L, int v, void *dst, const char *path)
{
	lua_Number x = model_meta_number(L, v, path);

	(void)dst;
	if (!(x > 0 && x <= 1e6))
		model_meta_fail(L, path, "must be a positive number of "
				"billions, at most 1e6", x);
}

static void c_model_mtp(lua_State *L, int v, void *dst, const char *path)
{
	lua_Number x = model_meta_number(L, v, path);

	(void)dst;
	if (!(x >= 0 && x <= GP_COUNT_MAX && x == floor(x)))
		model_meta_fail(L, path, "must be an integer in 0..16777216",
				x);
}

/* hybrid_pattern: a string of the pattern's letters, kept whole (its
 * letters and its length against layers are model_check's). */
static void c_model_pattern(lua_State *L, int v, void *dst, const char *path)
{
	gp_model *m = dst;
	size_t n;
	const char *s;

	if (lua_type(L, v) != LUA_TSTRING)
		luaL_error(L, "%s must be a string of layer letters (got %s)",
			   path, luaL_typename(L, v));
	s = lua_tolstring(L, v, &n);
	if (n == 0 || n > GP_PATTERN_MAX || strlen(s) != n)
		luaL_error(L, "%s must hold 1..%d layer letters (got %d)",
			   path, GP_PATTERN_MAX, (int)n);
	memcpy(m->pattern, s, n + 1);
}

#define M_INT(n, f, d, lo) F_INT(n, offsetof(gp_model, f), d, lo, IMAX)
#define M_REQ(n, f) F_REQINT(n, offsetof(gp_model, f), 1, IMAX)
#define M_BOOL(n, f) F_BOOL(n, offsetof(gp_model, f), 0)
static const lgp_field model_fields[] = {
	M_REQ("layers", layers), M_REQ("hidden", hidden),
	M_REQ("heads", heads),
	M_INT("kv_heads", kv_heads, -1, 1),  /* default: heads */
	M_INT("ffn_hidden", ffn_hidden, 0, 0), M_BOOL("ffn_gated", ffn_gated),
	M_REQ("vocab", vocab), M_BOOL("tied_embeddings", tied_embeddings),
	M_BOOL("qkv_bias", qkv_bias), M_BOOL("linear_bias", linear_bias),
	M_BOOL("ffn_clamp", ffn_clamp), M_BOOL("qk_norm", qk_norm),
	M_BOOL("parallel_attn", parallel_attn),
	M_BOOL("shared_norm", shared_norm),
	/* absent: 1 (cos and sin unscaled) */
	{ "rope_attention_factor", LGP_F_NUM, offsetof(gp_model, rope_attn_factor),
	  1.0, 1e-6, 1e6, 0, NULL, NULL, NULL, NULL, NULL },
	M_INT("pos_embeddings", pos_embeddings, 0, 0),
	M_INT("encoder_layers", encoder_layers, 0, 0),
	M_INT("rel_buckets", rel_buckets, 0, 0),
	F_CUSTOM("hybrid_pattern", c_model_pattern), F_IGNORE("mamba"),
	/* read by lgp_tomodel after the rest: they depend on it */
	F_IGNORE("head_dim"), F_IGNORE("norm"), F_IGNORE("ffn_act"),
	F_IGNORE("positions"),
	F_IGNORE("sliding_window"), F_IGNORE("moe"), F_IGNORE("mla"),
	F_IGNORE("vision"),
	/* the catalog's fields the Lua side reads, not priced here */
	F_IGNORE("id"), F_IGNORE("name"), F_IGNORE("family"),
	F_IGNORE("max_seq"), F_CUSTOM("mtp_layers", c_model_mtp),
	F_CUSTOM("params_b", c_model_billions),
	F_IGNORE("split_proj"),  /* the split_proj option's default */
	F_CUSTOM("active_params_b", c_model_billions), F_IGNORE("dtype"),
	F_IGNORE("expert_dtype"),
	F_IGNORE("attn_sinks"),  /* gp.infer's vLLM attention backend */
	F_IGNORE("source"),
	F_IGNORE("notes"), F_END
};
static const lgp_desc model_desc = { "model", model_fields };

/* sliding_window = {size, layers}: into gp_model's two fields. */
static const lgp_field window_fields[] = {
	M_REQ("size", sliding_window),
	M_INT("layers", sliding_layers, -1, 0),  /* default: every layer */
	F_END
};
static const lgp_desc window_desc = { "model.sliding_window",
				      window_fields };
#undef M_INT
#undef M_REQ
#undef M_BOOL

#define S_INT(S, n, d, lo) F_INT(#n, offsetof(S, n), d, lo, IMAX)
#define S_REQ(S, n) F_REQINT(#n, offsetof(S, n), 1, IMAX)
/* moe.capacity_factor: the token buffer per expert is the run's choice,
 * priced from the job's capacity_factor option (gpuplan.memory); a model's
 * was read by nothing, so it is refused rather than ignored. */
static void c_moe_capacity_factor(lua_State *L, int v, void *dst,
				  const char *path)
{
	(void)v;
	(void)dst;
	luaL_error(L, "%s: not a model field: the MoE capacity factor is the "
		   "job's (--capacity-factor F, Lua capacity_factor = F)", path);
}

static const lgp_field moe_fields[] = {
	S_REQ(gp_moe, experts), S_REQ(gp_moe, top_k),
	S_INT(gp_moe, shared_experts, 0, 0), S_REQ(gp_moe, ffn_hidden),
	S_INT(gp_moe, dense_layers, 0, 0),
	S_INT(gp_moe, layer_step, 1, 1),
	S_INT(gp_moe, dense_ffn_hidden, 0, 0),
	S_INT(gp_moe, shared_ffn_hidden, 0, 0),
	S_INT(gp_moe, groups, 0, 0), S_INT(gp_moe, group_top_k, 0, 0),
	F_BOOL("shared_expert_gate", offsetof(gp_moe, shared_expert_gate), 0),
	/* the job's option, not the model's (gpuplan.schema says the same) */
	F_CUSTOM("capacity_factor", c_moe_capacity_factor), F_END
};
static const lgp_desc moe_desc = { "model.moe", moe_fields };

static const lgp_field mla_fields[] = {
	S_INT(gp_mla, q_lora_rank, 0, 0), S_REQ(gp_mla, kv_lora_rank),
	S_REQ(gp_mla, qk_nope_head_dim), S_REQ(gp_mla, qk_rope_head_dim),
	S_REQ(gp_mla, v_head_dim), F_END
};
static const lgp_desc mla_desc = { "model.mla", mla_fields };

/* The Mamba-2 mixer's dims; conv and chunk default to Megatron-Core's
 * MambaMixer (mamba_mixer.py "d_conv=4", "chunk_size=128").  Each is a
 * count of the model, bounded as every count is, by GP_COUNT_MAX
 * (engine/common.h: sums of two counts stay inside an int) -- the bound
 * model_check and the catalog's and case files' schema (schema.lua
 * COUNT_MAX) put on it: a script's table read 1..2147483647 here and
 * then "must be at most 16777216", two limits for one field. */
#define S_CNT(S, n, d, lo) F_INT(#n, offsetof(S, n), d, lo, GP_COUNT_MAX)
#define S_REQCNT(S, n) F_REQINT(#n, offsetof(S, n), 1, GP_COUNT_MAX)
static const lgp_field mamba_fields[] = {
	S_REQCNT(gp_mamba, heads), S_REQCNT(gp_mamba, head_dim),
	S_REQCNT(gp_mamba, state), S_REQCNT(gp_mamba, groups),
	S_CNT(gp_mamba, conv, 4, 1), S_CNT(gp_mamba, chunk, 128, 1), F_END
};
#undef S_CNT
#undef S_REQCNT
static const lgp_desc mamba_desc = { "model.mamba", mamba_fields };

/* The tower's layers, hidden and ffn_hidden are required unless params
 * gives its count (-1: not given). */
static const lgp_field vision_fields[] = {
	F_NUM("params", offsetof(gp_vision, params), 0),
	S_INT(gp_vision, layers, -1, 0), S_INT(gp_vision, hidden, -1, 0),
	S_INT(gp_vision, heads, 0, 0), S_INT(gp_vision, ffn_hidden, -1, 0),
	F_BOOL("ffn_gated", offsetof(gp_vision, ffn_gated), 0),
	S_INT(gp_vision, image_size, 0, 0), S_INT(gp_vision, patch_size, 0, 0),
	S_INT(gp_vision, merge, 1, 1), S_INT(gp_vision, temporal_patch, 1, 1),
	S_INT(gp_vision, tokens_per_image, 0, 0),
	F_NUM("projector_params", offsetof(gp_vision, projector_params), 0),
	F_END
};
static const lgp_desc vision_desc = { "model.vision", vision_fields };
#undef S_INT
#undef S_REQ
#undef IMAX

/* A vision tower's size field left -1 (not given): 0 when params gives
 * the count, else refused as required. */
static void vision_size(lua_State *L, const gp_vision *v, int *f,
			const char *key)
{
	if (*f >= 0)
		return;
	if (v->params <= 0)
		luaL_error(L, "model.vision.%s is required", key);
	*f = 0;
}

/* The table at idx's sub-table key read by d into dst, when present. */
static int lgp_read_sub(lua_State *L, int idx, const char *key,
			const lgp_desc *d, void *dst)
{
	int sub = lgp_subtable(L, idx, "model", key);

	if (sub) {
		lgp_read(L, sub, 0, d, dst, LGP_DEFAULTS);
		lgp_strict(L, sub, 0, d->what);
		lua_pop(L, 1);
	}
	return sub != 0;
}

/* The model's own rules beyond its fields' ranges: head_dim (hidden /
 * heads unless given, which must then divide), the norm and the MLP's
 * activation. */
static void lgp_model_rest(lua_State *L, int idx, gp_model *m)
{
	const char *norm;

	/* Without head_dim the heads split hidden evenly: 100 / 7 heads
	 * would price 98 of its 100 columns. */
	lgp_get(L, idx, "head_dim");
	if (lua_isnil(L, -1) && m->hidden % m->heads != 0)
		luaL_error(L, "heads (%d) must divide hidden (%d) "
			   "unless head_dim is given", m->heads, m->hidden);
	lua_pop(L, 1);
	m->head_dim = lgp_field_int(L, idx, "model", "head_dim", 0,
				    m->hidden / m->heads, 1);
	lgp_get(L, idx, "ffn_act");
	if (!lua_isnil(L, -1)) {
		const char *a = lua_type(L, -1) == LUA_TSTRING ?
			lua_tostring(L, -1) : "";

		if (strcmp(a, "relu") && strcmp(a, "relu2") &&
		    strcmp(a, "gelu") && strcmp(a, "gelu_new") &&
		    strcmp(a, "silu"))
			luaL_error(L, "model.ffn_act must be 'relu', 'relu2', "
				   "'gelu', 'gelu_new' or 'silu' (got %s)",
				   luaL_tolstring(L, -1, NULL));
		m->ffn_relu = strcmp(a, "relu") == 0;
		m->ffn_relu2 = strcmp(a, "relu2") == 0;
		m->ffn_gelu_new = strcmp(a, "gelu_new") == 0;
		m->ffn_gelu = strcmp(a, "gelu") == 0 || m->ffn_gelu_new;
	}
	lua_pop(L, 1);
	/* positions: a learned table's rows make it "learned" unless said;
	 * otherwise rope, what most checkpoints use. */
	lgp_get(L, idx, "positions");
	if (lua_isnil(L, -1)) {
		m->positions = m->pos_embeddings > 0 ? GP_POS_LEARNED :
			GP_POS_ROPE;
	} else {
		const char *p = lua_type(L, -1) == LUA_TSTRING ?
			lua_tostring(L, -1) : "";

		if (strcmp(p, "rope") && strcmp(p, "learned") &&
		    strcmp(p, "alibi") && strcmp(p, "none"))
			luaL_error(L, "model.positions must be 'rope', "
				   "'learned', 'alibi' or 'none' (got %s)",
				   luaL_tolstring(L, -1, NULL));
		m->positions = strcmp(p, "learned") == 0 ? GP_POS_LEARNED :
			strcmp(p, "alibi") == 0 ? GP_POS_ALIBI :
			strcmp(p, "none") == 0 ? GP_POS_NONE : GP_POS_ROPE;
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
}

/* The whole-number layer counts of the moe table of the model table at
 * idx -- moe.dense_layers in 0..layers, moe.layer_step in 1..layers --
 * judged against its layers before the field reader's type check, in
 * the words the catalog and the case files use (gpuplan.schema
 * moe_counts_problem): the reader's "model.moe.layer_step must be an
 * integer in 1..2147483647 (got 0)" and model_check's "moe.layer_step
 * must be in 1..layers (4), got 5" named one field two ways, and
 * dense_layers past the layers read "moe.dense_layers must be in
 * 0..layers (4), got 9", not the key the script wrote. */
static void moe_counts(lua_State *L, int idx, int layers)
{
	static const struct { const char *name; int lo; } f[] = {
		{ "dense_layers", 0 }, { "layer_step", 1 },
	};
	lua_Integer v = 0;
	int top = lua_gettop(L), i, whole;

	lua_getfield(L, idx, "moe");
	for (i = 0; i < 2 && lua_type(L, -1) == LUA_TTABLE; i++) {
		whole = 0;
		lua_getfield(L, -1, f[i].name);
		if (lua_type(L, -1) == LUA_TNUMBER) {
			v = lua_tointegerx(L, -1, &whole);
			/* A fraction (1.5) was the field reader's "must be
			 * an integer in 0..2147483647": a second range for
			 * the one field.  Said with its range here (NaN as
			 * gpuplan.args shown writes it, not the C library's
			 * "-nan"). */
			if (!whole)
				luaL_error(L, "model.moe.%s must be an integer "
					   "in %d..layers (%d), got %s",
					   f[i].name, f[i].lo, layers,
					   isnan(lua_tonumber(L, -1)) ? "NaN" :
					   luaL_tolstring(L, -1, NULL));
		}
		if (whole && (v < f[i].lo || v > layers))
			luaL_error(L, "model.moe.%s must be in %d..layers "
				   "(%d), got %I", f[i].name, f[i].lo, layers,
				   v);
		lua_pop(L, 1);
	}
	lua_settop(L, top);
}

/* params_b is the published total, which nothing prices: each command
 * prices the architecture the fields describe.  A stated size the fields
 * miss by 2x or more is a wrong field (hidden 10240 for 1024, a layer
 * count, ffn_hidden).  The catalog refused it in a file, but a script's
 * model table passed and was priced as the architecture it wrote
 * (gp.train{model = {hidden = 10240, params_b = 0.1, ...}} ran a 1.6 B
 * model in silence).  Read here, so every command and the catalog (core.check
 * "model") refuse it alike.  The shipped models are within 3% of theirs
 * (tests/lua/models.t); a rounded published figure or a vision tower
 * left out is far from 2x. */
static void model_params_b_check(lua_State *L, int idx, const gp_model *m)
{
	gp_params p;
	gp_error err;
	double pb, n;
	char msg[256];

	lua_getfield(L, idx, "params_b");
	pb = lua_type(L, -1) == LUA_TNUMBER ? lua_tonumber(L, -1) : 0;
	lua_pop(L, 1);
	if (!(pb > 0) || model_params(m, &p, &err) != GP_OK)
		return;
	n = p.total / 1e9;
	if (n > 2 * pb || n < pb / 2) {
		snprintf(msg, sizeof msg, "model.params_b: %.4g B, but the "
			 "architecture (layers, hidden, heads, ffn_hidden, "
			 "vocab, moe, vision) counts %.4g B: a field is wrong",
			 pb, n);
		luaL_error(L, "%s", msg);
	}
}

void lgp_tomodel(lua_State *L, int idx, gp_model *m)
{
	gp_error err;
	int top = lua_gettop(L);
	const gp_model *h = lgp_handle(L, idx, LGP_MODEL);
	gp_vision *v = &m->vision;

	if (h) {
		*m = *h;
		return;
	}
	idx = lua_absindex(L, idx);
	luaL_checktype(L, idx, LUA_TTABLE);
	lgp_forget(L, idx);
	memset(m, 0, sizeof *m);
	lgp_read(L, idx, 0, &model_desc, m, LGP_DEFAULTS);
	if (m->kv_heads < 0)
		m->kv_heads = m->heads;
	lgp_model_rest(L, idx, m);
	m->sliding_layers = 0;
	if (lgp_read_sub(L, idx, "sliding_window", &window_desc, m) &&
	    m->sliding_layers < 0)
		m->sliding_layers = m->layers;
	moe_counts(L, idx, m->layers);
	lgp_read_sub(L, idx, "moe", &moe_desc, &m->moe);
	lgp_read_sub(L, idx, "mla", &mla_desc, &m->mla);
	lgp_read_sub(L, idx, "mamba", &mamba_desc, &m->mamba);
	if (lgp_read_sub(L, idx, "vision", &vision_desc, v)) {
		vision_size(L, v, &v->layers, "layers");
		vision_size(L, v, &v->hidden, "hidden");
		vision_size(L, v, &v->ffn_hidden, "ffn_hidden");
		if (v->params < 0 || v->projector_params < 0)
			luaL_error(L, "model.vision params must be >= 0");
	}
	/* Unknown keys refused by name (the catalog loader's _file,
	 * _line ... are its own). */
	lgp_strict(L, idx, 0, "model");
	lua_settop(L, top);
	/* model_check names the moe fields from the model down ("moe.top_k
	 * must be in 1..experts (8), got 9"); the script wrote them in its
	 * model table, as the reader's messages above name them */
	if (model_check(m, &err) != GP_OK)
		lgp_error(L, &err, strncmp(err.msg, "moe.", 4) == 0 ||
			  strncmp(err.msg, "mamba.", 6) == 0 ||
			  strncmp(err.msg, "hybrid_pattern", 14) == 0 ?
			  "model." : "");
	model_params_b_check(L, idx, m);
}

/* A model's parameter counts under their Lua names. */
#define PR(n) O_NUM(#n, gp_params, n)
static const lgp_field params_fields[] = {
	PR(embedding), PR(lm_head), PR(attention), PR(dense_mlp), PR(experts),
	PR(router), PR(norms), PR(vision), PR(total), PR(active),
	PR(per_layer_max), PR(matmul_active), PR(encoder), PR(mamba), F_END
};
#undef PR
static const lgp_desc params_desc = { "params", params_fields };

/* core.model_params(model) -> { embedding, lm_head, attention, dense_mlp,
 * experts, router, norms, vision, total, active, per_layer_max }
 * (element counts). */
int lgp_model_params(lua_State *L)
{
	gp_model m;
	gp_params p;
	gp_error err;

	lgp_tomodel(L, 1, &m);
	if (model_params(&m, &p, &err) != GP_OK)
		return lgp_error(L, &err, "");
	lua_createtable(L, 0, 14);
	lgp_push(L, &params_desc, &p);
	return 1;
}

/* core.model_flops_per_token(model, ctx) -> forward FLOP per token. */
int lgp_model_flops(lua_State *L)
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

/* core.model_vision(model) -> tokens, patches: what one image is to the
 * LLM and to its vision tower (model_vision_tokens, model_vision_patches,
 * the one place of each rule); 0, 0 without a tower. */
int lgp_model_vision(lua_State *L)
{
	gp_model m;
	gp_error err;

	lgp_tomodel(L, 1, &m);
	if (model_check(&m, &err) != GP_OK)
		return lgp_error(L, &err, "");
	lua_pushnumber(L, model_vision_tokens(&m));
	lua_pushnumber(L, model_vision_patches(&m));
	return 2;
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
int lgp_model_kv(lua_State *L)
{
	return lgp_kv_of(L, model_kv_bytes, "ctx", "model_kv_bytes");
}

/* core.model_cross_kv_bytes(model, enc_len, elem_bytes) -> bytes of the
 * cross-attention K/V of one sequence (0 for a decoder-only model). */
int lgp_model_cross_kv(lua_State *L)
{
	return lgp_kv_of(L, model_cross_kv_bytes, "enc_len",
			 "model_cross_kv_bytes");
}

/* core.model_mamba(model, seq, elem_bytes) -> scan FLOP per token of one
 * Mamba layer over a sequence of seq tokens (model_mamba_scan_flops),
 * the recurrent state bytes one sequence keeps over every Mamba layer
 * (model_mamba_state_bytes), and the bytes a token keeps for the
 * backward in one Mamba layer (model_mamba_act_bytes), elem_bytes an
 * element; and the state one sequence keeps while serving on one GPU
 * (model_mamba_serve_bytes at tp 1), its conv window at
 * GP_MAMBA_CONV_STATE_BYTES and its SSM state at ssm_bytes (default
 * GP_MAMBA_SSM_STATE_BYTES, vLLM's fp32); 0, 0, 0, 0 without Mamba
 * layers. */
int lgp_model_mamba(lua_State *L)
{
	gp_model m;
	double seq, eb, ssm;

	lgp_tomodel(L, 1, &m);
	seq = luaL_checknumber(L, 2);
	eb = luaL_checknumber(L, 3);
	ssm = luaL_optnumber(L, 4, GP_MAMBA_SSM_STATE_BYTES);
	luaL_argcheck(L, gp_finite(seq) && seq >= 1 && seq <= GP_COUNT_MAX, 2,
		      "seq must be a number of tokens in 1..16777216");
	luaL_argcheck(L, gp_finite(eb) && eb > 0 && eb <= GP_ELEM_BYTES_MAX,
		      3, "elem_bytes must be a positive number");
	luaL_argcheck(L, gp_finite(ssm) && ssm > 0 &&
		      ssm <= GP_ELEM_BYTES_MAX, 4,
		      "ssm_bytes must be a positive number");
	if (model_mamba_layers(&m) == 0) {
		lua_pushnumber(L, 0);
		lua_pushnumber(L, 0);
		lua_pushnumber(L, 0);
		lua_pushnumber(L, 0);
		return 4;
	}
	lua_pushnumber(L, model_mamba_scan_flops(&m, seq));
	lua_pushnumber(L, model_mamba_state_bytes(&m, eb));
	lua_pushnumber(L, model_mamba_act_bytes(&m, eb));
	lua_pushnumber(L, model_mamba_serve_bytes(&m, 1,
						  GP_MAMBA_CONV_STATE_BYTES,
						  ssm));
	return 4;
}

/* ---- comm ---- */

/* A fabric's `nccl` block (catalog/FORMAT.md), SI units, over the link
 * kind's defaults: what it leaves out keeps comm_nccl_default's value. */
/* nccl.regions: a list of {algo=, proto=, vertices={{bytes, ranks}, ...}}
 * (catalog/FORMAT.md), into gp_nccl.region; the kernel checks the
 * numbers (comm_topo_check). */
static void c_region_vertices(lua_State *L, int v, gp_nccl *nc,
			      gp_region *r, const char *path)
{
	int k, n;

	if (lua_type(L, v) != LUA_TTABLE)
		luaL_error(L, "%s.vertices must be a table (got %s)", path,
			   luaL_typename(L, v));
	n = (int)lua_rawlen(L, v);
	if (n < 3 || n > GP_REGION_VERTICES)
		luaL_error(L, "%s.vertices: 3..%d of them (got %d)", path,
			   GP_REGION_VERTICES, n);
	if (nc->region_points + n > GP_REGION_POINTS)
		luaL_error(L, "%s.vertices: at most %d vertices over all the "
			   "regions together (got %d)", path, GP_REGION_POINTS,
			   nc->region_points + n);
	r->nv = n;
	r->first = nc->region_points;
	nc->region_points += n;
	for (k = 1; k <= n; k++) {
		lua_rawgeti(L, v, k);
		if (lua_type(L, -1) != LUA_TTABLE || lua_rawlen(L, -1) != 2)
			luaL_error(L, "%s.vertices[%d] must be {bytes, ranks}",
				   path, k);
		lua_rawgeti(L, -1, 1);
		lua_rawgeti(L, -2, 2);
		if (!lua_isnumber(L, -2) || !lua_isnumber(L, -1))
			luaL_error(L, "%s.vertices[%d] must be two numbers",
				   path, k);
		nc->region_x[r->first + k - 1] = lua_tonumber(L, -2);
		nc->region_y[r->first + k - 1] = lua_tonumber(L, -1);
		lua_pop(L, 3);
	}
}

static void c_regions(lua_State *L, int v, void *dst, const char *path)
{
	gp_nccl *n = dst;
	int i, p, vi, count;

	if (lua_type(L, v) != LUA_TTABLE)
		luaL_error(L, "%s must be a table (got %s)", path,
			   luaL_typename(L, v));
	count = (int)lua_rawlen(L, v);
	if (count > GP_REGIONS)
		luaL_error(L, "%s: at most %d regions (got %d)", path,
			   GP_REGIONS, count);
	n->nregions = count;
	n->region_points = 0;
	for (i = 1; i <= count; i++) {
		gp_region *r = &n->region[i - 1];
		const char *a, *pr;
		gp_algo algo = GP_ALGO_COUNT; /* none until parsed */

		lua_rawgeti(L, v, i);
		if (lua_type(L, -1) != LUA_TTABLE)
			luaL_error(L, "%s[%d] must be a table", path, i);
		lua_getfield(L, -1, "algo");
		a = lua_tostring(L, -1);
		if (!a || comm_algo_parse(a, &algo))
			luaL_error(L, "%s[%d].algo: unknown algorithm '%s'",
				   path, i, a ? a : "nil");
		r->algo = (int)algo;
		lua_pop(L, 1);
		lua_getfield(L, -1, "proto");
		pr = lua_tostring(L, -1);
		r->proto = -1;
		for (p = 0; pr && p < GP_PROTO_COUNT; p++)
			if (!strcmp(pr, comm_proto_name((gp_proto)p)))
				r->proto = p;
		if (r->proto < 0)
			luaL_error(L, "%s[%d].proto: unknown protocol '%s'",
				   path, i, pr ? pr : "nil");
		lua_pop(L, 1);
		lua_getfield(L, -1, "vertices");
		vi = lua_gettop(L);
		c_region_vertices(L, vi, n, r,
				  lua_pushfstring(L, "%s[%d]", path, i));
		lua_pop(L, 3);
	}
}

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
	F_NUM("ll128_efficiency", offsetof(gp_nccl, ll128_eff), 0),
	F_NUM("nvls_latency", offsetof(gp_nccl, nvls_lat), 0),
	F_NUM("channels", offsetof(gp_nccl, channels), 0),
	F_NUM("nvls_channels", offsetof(gp_nccl, nvls_channels), 0),
	F_NUM("nvls_channels_nodes", offsetof(gp_nccl, nvls_channels_nodes), 0),
	F_BOOL("rails", offsetof(gp_nccl, rails), 0),
	F_NUM("tree_share", offsetof(gp_nccl, tree_share), 1.0),
	F_NUM("completion", offsetof(gp_nccl, completion), 0),
	F_INT("max_recvs", offsetof(gp_nccl, max_recvs), 8, 1, 64),
	F_INT("region_ppn", offsetof(gp_nccl, region_ppn), 0, 1, 1024),
	F_CUSTOM("regions", c_regions),
	F_IGNORE("source"),
	F_END
};
static const lgp_desc up_nccl_desc = { "topology.up_nccl", nccl_fields };
static const lgp_desc nic_nccl_desc = { "topology.nic_nccl", nccl_fields };

/* A topology table's flat fields.  A bandwidth that is required only
 * where its link is used defaults to NaN, which no user can give (a
 * value must be finite): lgp_given then requires it or makes it 0. */
#define T_NUM(n, f, d) F_NUM(n, offsetof(gp_topo, f), d)
static const lgp_field topo_fields[] = {
	F_REQINT("gpus_per_node", offsetof(gp_topo, gpus_per_node), 1,
		 2147483647.0),
	F_INT("nodes", offsetof(gp_topo, nodes), 1, 1, 2147483647.0),
	T_NUM("up_bw", up.bw, NAN), T_NUM("up_latency", up.latency, 0),
	T_NUM("up_achievable", up.achievable, 1.0),
	F_BOOL("up_nvls", offsetof(gp_topo, up_nvls), 0),
	F_BOOL("up_crosses_cpu", offsetof(gp_topo, up_crosses_cpu), 0),
	F_INT("up_mesh_peers", offsetof(gp_topo, up_mesh_peers), 0, 0, 1024),
	F_INT("nics", offsetof(gp_topo, nics), 0, 0, 2147483647.0),
	T_NUM("nic_bw", nic.bw, NAN), T_NUM("nic_latency", nic.latency, 0),
	T_NUM("nic_achievable", nic.achievable, 1.0),
	F_BOOL("nic_sharp", offsetof(gp_topo, nic_sharp), 0),
	T_NUM("nic_path_bw", nic_path_bw, 0),
	F_BOOL("nic_gdr_off", offsetof(gp_topo, nic_gdr_off), 0),
	T_NUM("host_mem_bw", host_mem_bw, 0),
	T_NUM("host_memory", host_memory, 0),
	T_NUM("nvls_tree_bw2", nvls_tree_bw[0], 0),
	T_NUM("nvls_tree_bw3", nvls_tree_bw[1], 0),
	T_NUM("ll_max_bw", ll_max_bw, 0),
	T_NUM("tree_ch_bw2", tree_ch_bw[0], 0),
	T_NUM("tree_ch_bw3", tree_ch_bw[1], 0),
	T_NUM("tree_ll128_ch_bw2", tree_ll128_ch_bw[0], 0),
	T_NUM("tree_ll128_ch_bw3", tree_ll128_ch_bw[1], 0),
	T_NUM("ring_ll128_ch_bw", ring_ll128_ch_bw, 0),
	T_NUM("p2p_nvl_ch_bw", p2p_nvl_ch_bw, 0),
	T_NUM("tree_tune_ch_bw2", tree_tune_ch_bw[0], 0),
	T_NUM("tree_tune_ch_bw3", tree_tune_ch_bw[1], 0),
	F_INT("tree_tune_until", offsetof(gp_topo, tree_tune_until), 0, 0,
	      99999.0),
	F_BOOL("host_amd", offsetof(gp_topo, host_amd), 0),
	F_BOOL("p2p_read", offsetof(gp_topo, p2p_read), 0),
	F_BOOL("nic_c2c", offsetof(gp_topo, nic_c2c), 0),
	F_BOOL("ll128_off", offsetof(gp_topo, ll128_off), 0),
	F_BOOL("pxn_off", offsetof(gp_topo, pxn_off), 0),
	T_NUM("base_lat_ll", base_lat[GP_PROTO_LL], 0),
	T_NUM("base_lat_ll128", base_lat[GP_PROTO_LL128], 0),
	T_NUM("base_lat_simple", base_lat[GP_PROTO_SIMPLE], 0),
	F_INT("host_gpus", offsetof(gp_topo, host_gpus), 0, 0, 2147483647.0),
	F_INT("nccl_version", offsetof(gp_topo, nccl_version), 0, 0,
	      99999.0),
	F_IGNORE("up_kind"), F_IGNORE("up_nccl"), F_IGNORE("nic_nccl"), F_END
};
#undef T_NUM
static const lgp_desc topo_desc = { "topology", topo_fields };

/* A field left NaN (not given): refused as required when need, else 0. */
static void lgp_given(lua_State *L, double *v, int need, const char *path)
{
	if (!isnan(*v))
		return;
	if (need)
		luaL_error(L, "%s is required", path);
	*v = 0;
}

/* Read a topology table (flat fields, SI units; see lua/gpuplan/comm.lua):
 * gpus_per_node, nodes, up_kind ("nvlink"|"pcie"), up_bw, up_latency,
 * up_achievable, up_nvls, up_crosses_cpu, up_mesh_peers, nics, nic_bw,
 * nic_latency, nic_achievable, nic_sharp, nic_path_bw, nic_gdr_off,
 * nvls_tree_bw2, nvls_tree_bw3,
 * ll_max_bw, tree_ch_bw2, tree_ch_bw3, tree_ll128_ch_bw2,
 * tree_ll128_ch_bw3, ring_ll128_ch_bw, p2p_nvl_ch_bw, host_amd,
 * p2p_read, nic_c2c, ll128_off, pxn_off, base_lat_ll, base_lat_ll128,
 * base_lat_simple, host_mem_bw, host_memory, nccl_version, and the
 * links' NCCL terms up_nccl, nic_nccl (tables, nccl_fields).  Range
 * checks are the kernel's. */
void lgp_totopo(lua_State *L, int idx, gp_topo *t)
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
	lgp_forget(L, idx);
	comm_topo_init(t, lgp_field_option(L, idx, w, "up_kind", kinds,
					   "'nvlink' or 'pcie'") == 1 ?
			  GP_LINK_PCIE : GP_LINK_NVLINK);
	/* The NCCL terms keep the link kind's defaults for what they do
	 * not give. */
	if ((sub = lgp_subtable(L, idx, w, "up_nccl"))) {
		lgp_read(L, sub, 0, &up_nccl_desc, &t->up_nccl, LGP_STRICT);
		lua_pop(L, 1);
	}
	if ((sub = lgp_subtable(L, idx, w, "nic_nccl"))) {
		lgp_read(L, sub, 0, &nic_nccl_desc, &t->nic_nccl, LGP_STRICT);
		lua_pop(L, 1);
	}
	lgp_read(L, idx, 0, &topo_desc, t, LGP_DEFAULTS);
	lgp_given(L, &t->up.bw, t->gpus_per_node > 1, "topology.up_bw");
	lgp_given(L, &t->nic.bw, t->nics > 0, "topology.nic_bw");
	lgp_strict(L, idx, 0, w);
}

/* A collective's price under its Lua names (and its algorithm's and
 * protocol's). */
#define CR(n) O_NUM(#n, gp_comm_result, n)
static const lgp_field comm_result_fields[] = {
	CR(time), CR(latency), CR(bw_time), CR(algbw), CR(busbw),
	O_INT("nodes", gp_comm_result, nodes),
	O_INT("ppn", gp_comm_result, ppn), F_END
};
#undef CR
static const lgp_desc comm_result_desc = { "collective", comm_result_fields };

/* core.comm_cost(topo, op, bytes, gpus [, algo [, per_node [, sharing]]])
 * -> {time, latency, bw_time, algbw, busbw, algo, proto, nodes, ppn};
 * seconds, B/s.  Without per_node the ranks fill whole nodes (comm_cost);
 * with it they form the placed group {gpus, per_node, sharing (default
 * 1)} (comm_group_cost). */
int lgp_comm_cost(lua_State *L)
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
		g.nodes = 0;
		g.per_node = (int)pn;
		g.sharing = (int)sh;
		rc = forced ? comm_group_cost_algo(&t, op, algo, bytes, &g,
						   &r, &err) :
			      comm_group_cost(&t, op, bytes, &g, &r, &err);
	}
	if (rc != GP_OK)
		return lgp_error(L, &err, "");
	lua_createtable(L, 0, 9);
	lgp_push(L, &comm_result_desc, &r);
	lgp_setstr(L, "algo", comm_algo_name(r.algo));
	lgp_setstr(L, "proto", comm_proto_name(r.proto));
	return 1;
}

/* ---- device and roofline ---- */

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

/* A list of points, each a list of ncol numbers ({seq, rate} pairs,
 * or {seq, rates...}), into the columns col[0..ncol-1] (at most
 * ROOF_ATTN_LONG_MAX points); their order and ranges are
 * roof_device_check's.  Returns the count of points. */
static int c_device_points(lua_State *L, int v, const char *path,
			   double *const *col, int ncol)
{
	lua_Integer i, n;

	if (lua_type(L, v) != LUA_TTABLE)
		luaL_error(L, "%s must be a list of points of %d numbers "
			   "(got %s)", path, ncol, luaL_typename(L, v));
	n = (lua_Integer)lua_rawlen(L, v);
	if (n > ROOF_ATTN_LONG_MAX)
		luaL_error(L, "%s has %d points (at most %d)", path, (int)n,
			   ROOF_ATTN_LONG_MAX);
	for (i = 1; i <= n; i++) {
		int j;

		if (lua_rawgeti(L, v, i) != LUA_TTABLE)
			luaL_error(L, "%s[%d] must be a list of %d numbers "
				   "(got %s)", path, (int)i, ncol,
				   luaL_typename(L, -1));
		for (j = 1; j <= ncol; j++) {
			int isnum;
			double x;

			lua_rawgeti(L, -1, j);
			x = lua_tonumberx(L, -1, &isnum);
			if (!isnum)
				luaL_error(L, "%s[%d][%d] must be a number (got "
					   "%s)", path, (int)i, j,
					   luaL_typename(L, -1));
			col[j - 1][i - 1] = x;
			lua_pop(L, 1);
		}
		lua_pop(L, 1);
	}
	return (int)n;
}

/* attn_long: the fused attention kernel's length curve past its
 * reference, a list of {seq, rate over the reference's} pairs
 * (lua/gpuplan/roofline.lua builds it from the catalog's published
 * rates). */
static void c_device_long(lua_State *L, int v, void *dst, const char *path)
{
	roof_device *d = dst;
	double *const col[2] = { d->attn_long_q, d->attn_long_r };

	d->attn_long_n = c_device_points(L, v, path, col, 2);
}

/* attn_narrow: the kernel's rate at its narrow head dim (attn_narrow_dim)
 * over its rate at head dim 128, a list of {seq, ratio} pairs
 * (lua/gpuplan/roofline.lua builds it from the catalog's bars). */
static void c_device_narrow(lua_State *L, int v, void *dst, const char *path)
{
	roof_device *d = dst;
	double *const col[2] = { d->attn_narrow_q, d->attn_narrow_r };

	d->attn_narrow_n = c_device_points(L, v, path, col, 2);
}

/* attn_rel: the stated library release's rate over the reference
 * release's, a list of {seq, factor} pairs (lua/gpuplan/roofline.lua
 * attn_release builds it from the catalog's releases). */
static void c_device_rel(lua_State *L, int v, void *dst, const char *path)
{
	roof_device *d = dst;
	double *const col[2] = { d->attn_rel_q, d->attn_rel_r };

	d->attn_rel_n = c_device_points(L, v, path, col, 2);
}

/* attn_unmasked: the kernel's measured rates without a mask beside its
 * causal ones, a list of {seq, forward without, forward causal, backward
 * without, backward causal} (lua/gpuplan/roofline.lua attn_unmasked
 * builds it from the catalog). */
static void c_device_unmasked(lua_State *L, int v, void *dst,
			      const char *path)
{
	roof_device *d = dst;
	double *const col[5] = { d->attn_unm_q, d->attn_unm_uf,
				 d->attn_unm_cf, d->attn_unm_ub,
				 d->attn_unm_cb };

	d->attn_unm_n = c_device_points(L, v, path, col, 5);
}

/* Read a device table (lua/gpuplan/roofline.lua builds it from the
 * catalog): peak = {bf16 = FLOP/s, ...}, gemm = {bf16 = fraction, ...},
 * stream = {fp4 = fraction, ...} (optional), mem_bw (B/s), hbm
 * (fraction), launch, graph_launch (s), sms, block_fp8, fp8_non_tn and
 * eager_hbm (fractions, optional), cta_latency (s), cta_stage and cta_stage_k (bytes;
 * optional), mma_n_step (rows, optional), vec16_x and acc16_x (ratios,
 * optional). */
#define D_NUM(n, f) F_NUM(n, offsetof(roof_device, f), 0)
static const lgp_field device_fields[] = {
	F_REQNUM("mem_bw", offsetof(roof_device, mem_bw)),
	F_REQNUM("hbm", offsetof(roof_device, hbm_frac)),
	D_NUM("launch", launch), D_NUM("graph_launch", graph_launch),
	F_INT("sms", offsetof(roof_device, sms), 0, 0, 2147483647.0),
	D_NUM("attn_fwd", attn_fwd), D_NUM("attn_bwd", attn_bwd),
	D_NUM("attn_fp8", attn_fp8), D_NUM("attn_exp_dim", attn_exp_dim),
	D_NUM("attn_dropout", attn_dropout), D_NUM("block_fp8", block_fp8),
	D_NUM("fp8_non_tn", fp8_non_tn),
	D_NUM("attn_ref_q", attn_ref_q), F_CUSTOM("attn_long", c_device_long),
	D_NUM("attn_narrow_dim", attn_narrow_dim),
	F_CUSTOM("attn_narrow", c_device_narrow),
	F_CUSTOM("attn_unmasked", c_device_unmasked),
	F_CUSTOM("attn_rel", c_device_rel),
	D_NUM("fp64", fp64), D_NUM("mma_n_step", mma_n_step),
	D_NUM("vec16_x", vec16_x), D_NUM("acc16_x", acc16_x),
	D_NUM("eager_hbm", eager_hbm), D_NUM("cta_latency", cta_latency),
	D_NUM("cta_stage", cta_stage), D_NUM("cta_stage_k", cta_stage_k),
	F_BOOL("attn_square", offsetof(roof_device, attn_square), 0),
	F_BOOL("attn_head_pow2", offsetof(roof_device, attn_head_pow2), 0),
	/* read by lgp_field_perdtype */
	F_IGNORE("peak"), F_IGNORE("gemm"), F_IGNORE("stream"),
	/* the catalog's fields the Lua side reads, not priced here */
	F_IGNORE("id"), F_IGNORE("name"), F_IGNORE("memory"),
	F_IGNORE("attn_kernel"), F_IGNORE("attn_release"), F_END
};
#undef D_NUM
static const lgp_desc device_desc = { "device", device_fields };

void lgp_todevice(lua_State *L, int idx, roof_device *d)
{
	const char *w = "device";
	gp_error err;
	const roof_device *h = lgp_handle(L, idx, LGP_DEVICE);

	if (h) {
		*d = *h;
		return;
	}
	luaL_checktype(L, idx, LUA_TTABLE);
	lgp_forget(L, idx);
	memset(d, 0, sizeof *d);
	if (!lgp_field_perdtype(L, idx, w, "peak", d->peak))
		luaL_error(L, "device.peak is required");
	lgp_field_perdtype(L, idx, w, "gemm", d->gemm_frac);
	lgp_field_perdtype(L, idx, w, "stream", d->stream_frac);
	lgp_read(L, idx, 0, &device_desc, d, LGP_DEFAULTS);
	lgp_strict(L, idx, 0, w);
	if (roof_device_check(d, &err) != GP_OK)
		lgp_error(L, &err, "");
}

static gp_dtype lgp_checkdtype(lua_State *L, const char *what,
			       const char *name)
{
	gp_dtype t = GP_DTYPE_COUNT; /* none until parsed (luaL_error
	                              * does not return) */

	if (!name || gp_dtype_parse(name, &t) != GP_OK)
		luaL_error(L, "%s: unknown precision '%s'", what,
			   name ? name : "nil");
	return t;
}

/* An operator's roofline under its Lua names (and its bound's). */
#define RR(n) O_NUM(#n, roof_result, n)
static const lgp_field roof_result_fields[] = {
	RR(time), RR(t_compute), RR(t_memory), RR(t_launch), RR(intensity),
	RR(ridge), RR(ridge_peak), RR(shape_eff), RR(compute_rate),
	RR(mem_rate), RR(mem_eff), F_END
};
#undef RR
static const lgp_desc roof_result_desc = { "roofline", roof_result_fields };

void lgp_pushroof(lua_State *L, const roof_result *r)
{
	lgp_push(L, &roof_result_desc, r);
	lgp_setstr(L, "bound", roof_bound_name(r->bound));
}

/* core.roof_op's operator: a roof_op and whether CUDA graphs launch it. */
typedef struct roof_op_in {
	roof_op op;
	int graphs;
} roof_op_in;

#define OP_NUM(n, m, d) F_NUM(n, offsetof(roof_op_in, op.m), d)
static const lgp_field roof_op_fields[] = {
	F_REQNUM("flop", offsetof(roof_op_in, op.flop)),
	F_REQNUM("bytes", offsetof(roof_op_in, op.bytes)),
	OP_NUM("m", m, 0), OP_NUM("n", n, 0), OP_NUM("k", k, 0),
	OP_NUM("count", count, 1),
	F_DTYPE("prec", offsetof(roof_op_in, op.prec), GP_BF16),
	/* 0 tiles, 1 a GEMV on the fp32 lanes, 2 one on packed 16-bit
	 * FMAs (roofline.h roof_op.gemv) */
	F_INT("gemv", offsetof(roof_op_in, op.gemv), 0, 0, 2),
	OP_NUM("dequant", dequant, 0),
	OP_NUM("dequant_rep", dequant_rep, 0),
	OP_NUM("m_tile", m_tile, 0),
	OP_NUM("stream", stream, 0),
	OP_NUM("bf16_x", bf16_x, 0),
	F_BOOL("graphs", offsetof(roof_op_in, graphs), 1),
	F_END
};
#undef OP_NUM
static const lgp_desc roof_op_desc = { "op", roof_op_fields };

/* core.roof_op(device, {flop=, bytes=, m=, n=, k=, count=, prec=,
 * dequant=, dequant_rep=, m_tile=, stream=, bf16_x=, graphs=, name=}) -> {time, t_compute, t_memory, bound, intensity,
 * ridge, ridge_peak, shape_eff, ...}; seconds, FLOP/byte. */
int lgp_roof_op(lua_State *L)
{
	roof_device d;
	roof_op_in in;
	roof_result r;
	gp_error err;

	lgp_todevice(L, 1, &d);
	luaL_checktype(L, 2, LUA_TTABLE);
	memset(&in, 0, sizeof in);
	/* strict while reading: a misspelt key (flops) is named before
	 * the field it stands for is missed ("op.flop is required") */
	lgp_read(L, 2, 0, &roof_op_desc, &in, LGP_DEFAULTS | LGP_STRICT);
	in.op.name = NULL;	/* the caller's one op: "op: ..." */
	if (roof_op_time(&d, &in.op, in.graphs, &r, &err) != GP_OK)
		return lgp_error(L, &err, "");
	lua_createtable(L, 0, 12);
	lgp_pushroof(L, &r);
	return 1;
}

/* core.roof_ridge(device, prec [, achievable=true]) -> FLOP/byte. */
int lgp_roof_ridge(lua_State *L)
{
	roof_device d;
	gp_dtype p;

	lgp_todevice(L, 1, &d);
	p = lgp_checkdtype(L, "prec", luaL_checkstring(L, 2));
	lua_pushnumber(L, roof_ridge(&d, p, lua_isnoneornil(L, 3) ? 1 :
				     lua_toboolean(L, 3)));
	return 1;
}

/* ---- handles ---- */

/* core.model(t), core.device(t), core.topology(t) -> a handle: the table
 * read and checked once into its C struct; every core function takes it
 * where it takes the table. */
int lgp_model_handle(lua_State *L)
{
	gp_model *m = lua_newuserdatauv(L, sizeof *m, 0);

	lgp_tomodel(L, 1, m);
	luaL_setmetatable(L, LGP_MODEL);
	return 1;
}

int lgp_device_handle(lua_State *L)
{
	roof_device *d = lua_newuserdatauv(L, sizeof *d, 0);

	lgp_todevice(L, 1, d);
	luaL_setmetatable(L, LGP_DEVICE);
	return 1;
}

int lgp_topo_handle(lua_State *L)
{
	gp_topo *t = lua_newuserdatauv(L, sizeof *t, 0);
	gp_error err;

	lgp_totopo(L, 1, t);
	if (comm_topo_check(t, &err) != GP_OK)
		return lgp_error(L, &err, "");
	luaL_setmetatable(L, LGP_TOPO);
	return 1;
}
