/*
 * lgp_serve.c - the inference and serving bindings: core.infer
 * (and its weight-format helpers) and core.serve (MoE across many
 * GPUs); core.rl reads its rollout engine through lgp_toserve.
 */
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "lgp_int.h"

/* ---- infer ---- */

/* core.infer_weight_format(name) -> bits per weight, stored dtype name;
 * raises for an unknown format. */
int lgp_infer_wformat(lua_State *L)
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
int lgp_infer_cdtype(lua_State *L)
{
	roof_device d;

	lgp_todevice(L, 1, &d);
	lua_pushstring(L, gp_dtype_name(infer_compute_dtype(&d,
					luaL_checkstring(L, 2))));
	return 1;
}

/* An inference config's fields (an absent one keeps infer_defaults'),
 * read in two steps: what the replica's size depends on, then what
 * defaults from it (infer_after_fields). */
static const char *const runtime_names[] = {"graphs", "kernels", "eager",
					    NULL};
#define IF_NUM(n, m) F_NUM(n, offsetof(infer_cfg, m), 0)
#define IF_INT(n, m, lo) F_INT(n, offsetof(infer_cfg, m), 0, lo, INT_MAX)
#define IF_BOOL(n, m) F_BOOL(n, offsetof(infer_cfg, m), 0)
static const lgp_field infer_fields[] = {
	IF_NUM("weight_bits", weight_bits),
	IF_NUM("embed_bits", embed_bits),
	IF_NUM("head_bits", head_bits),
	IF_NUM("kv_bytes", kv_bytes),
	IF_NUM("mamba_ssm_bytes", mamba_ssm_bytes),
	IF_BOOL("kv_half_math", kv_half_math),
	IF_BOOL("kv_unfused", kv_unfused),
	IF_BOOL("wo_unfused", wo_unfused),
	IF_BOOL("kv_per_qhead", kv_per_qhead),
	IF_BOOL("mixed_kv_per_qhead", mixed_kv_per_qhead),
	IF_BOOL("prefix_prefill", prefix_prefill),
	F_DTYPE("compute", offsetof(infer_cfg, compute), 0),
	IF_INT("tp", tp, 1),
	IF_INT("pp", pp, 1),
	IF_INT("batch", batch, 0),
	IF_INT("concurrency", concurrency, 0),
	IF_NUM("input", input),
	IF_NUM("output", output),
	IF_NUM("output_max", output_max),
	IF_BOOL("output_uniform", output_uniform),
	IF_BOOL("flash", flash),
	{ "runtime", LGP_F_NAME, offsetof(infer_cfg, runtime), 0, 0, 0, 0,
	  runtime_names, NULL, NULL, NULL, NULL },
	IF_NUM("host_op_time", host_op_time),
	IF_NUM("host_ops_per_layer", host_ops_per_layer),
	IF_NUM("extend_host_ops", extend_host_ops),
	F_REQNUM("capacity", offsetof(infer_cfg, capacity)),
	IF_NUM("kv_free_fraction", kv_free_fraction),
	IF_NUM("kv_tokens", kv_tokens),
	IF_BOOL("kv_reserve_max", kv_reserve_max),
	IF_BOOL("kv_preempt", kv_preempt),
	IF_NUM("max_num_tokens", max_num_tokens),
	IF_NUM("sample_kernels", sample_kernels),
	IF_BOOL("chunked", chunked),
	IF_BOOL("whole_prompts", whole_prompts),
	IF_BOOL("static_batch", static_batch),
	IF_NUM("requests", requests),
	IF_NUM("cached", cached),
	IF_INT("max_batch", max_batch, 1),
	IF_INT("gemv_max", gemv_max, 0),
	IF_INT("wo_unfused_above", wo_unfused_above, 0),
	IF_BOOL("acc16_gemm", acc16_gemm),
	IF_INT("wo_split_k", wo_split_k, 0),
	IF_INT("ubatch", ubatch, 0),
	IF_INT("ubatch_call", ubatch_call, 0),
	IF_NUM("ubatch_launches", ubatch_launches),
	IF_NUM("launch_queue", launch_queue),
	IF_NUM("score_bytes", score_bytes),
	IF_BOOL("scores_whole", scores_whole),
	IF_NUM("graph_act_bytes", graph_act_bytes),
	IF_INT("gemv_packed", gemv_packed, 0),
	IF_NUM("wo_stream", wo_stream),
	IF_NUM("attn_stream", attn_stream),
	IF_NUM("m_tile", m_tile),
	IF_NUM("kv_bucket", kv_bucket),
	IF_NUM("moe_fp8_bf16_x", moe_fp8_bf16_x),
	IF_NUM("wo_bf16_x", wo_bf16_x),
	IF_NUM("kv_fp8_prompt_x", kv_fp8_prompt_x),
	IF_BOOL("fused_grouped_topk", fused_grouped_topk),
	IF_BOOL("fused_topk_softmax", fused_topk_softmax),
	IF_BOOL("fused_qk_norm_rope", fused_qk_norm_rope),
	IF_BOOL("mla_latent_prefill", mla_latent_prefill),
	IF_BOOL("prompt_attn_fused", prompt_attn_fused),
	IF_BOOL("act_quant", act_quant),
	IF_BOOL("block_quant", block_quant),
	IF_NUM("ar_fusion_max", ar_fusion_max),
	IF_BOOL("moe_expand", moe_expand),
	IF_BOOL("moe_quant", moe_quant),
	IF_BOOL("moe_shared_apart", moe_shared_apart),
	IF_NUM("shared_stream_max", shared_stream_max),
	IF_INT("custom_ar_gpus", custom_ar_gpus, 0),
	IF_NUM("engine_host_step", engine_host_step),
	IF_NUM("engine_host_seq", engine_host_seq),
	IF_NUM("graph_max_ctx", graph_max_ctx),
	IF_BOOL("row_split", row_split),
	IF_BOOL("one_token_graphs", one_token_graphs),
	IF_NUM("offload_bw", offload_bw),
	IF_NUM("offload_link_bw", offload_link_bw),
	IF_INT("offload_cpu_max", offload_cpu_max, 0),
	IF_NUM("host_capacity", host_capacity),
	IF_INT("host_node_gpus", host_node_gpus, 0),
	IF_INT("host_gpus", host_gpus, 0),
	IF_INT("offload_layers", offload_layers, 0),
	IF_NUM("ar_latency", ar_latency),
	IF_NUM("ar_bw", ar_bw),
	IF_NUM("p2p_bw", p2p_bw),
	IF_NUM("price", price),
	F_END
};
/* gpus (default tp * pp) and the replica's reserve (by default that of
 * its tp * pp GPUs: NCCL buffers only when they talk, as core.memory's). */
static const lgp_field infer_after_fields[] = {
	IF_INT("gpus", gpus, 1),
	LGP_RESERVE_FIELDS(infer_cfg, reserve.),
	F_END
};
#undef IF_NUM
#undef IF_INT
#undef IF_BOOL
static const lgp_desc infer_desc = { "infer", infer_fields };
static const lgp_desc infer_after_desc = { "infer", infer_after_fields };

/* infer.graph_sizes: absent, or a list of the captured batch sizes,
 * whole numbers ascending (lua/gpuplan/infer.lua resolves and sorts the
 * user's; infer_check judges the values). */
static void lgp_graph_sizes(lua_State *L, int idx, infer_cfg *c)
{
	lua_Integer n, i;

	lgp_mark(L, idx, "graph_sizes");
	lua_getfield(L, idx, "graph_sizes");
	if (lua_isnil(L, -1)) {
		lua_pop(L, 1);
		return;
	}
	if (!lua_istable(L, -1))
		luaL_error(L, "infer.graph_sizes must be a list of batch sizes "
			   "(got %s)", luaL_typename(L, -1));
	n = (lua_Integer)lua_rawlen(L, -1);
	if (n < 1 || n > INFER_GRAPH_MAX)
		luaL_error(L, "infer.graph_sizes must hold 1 to %d sizes (got "
			   "%d)", INFER_GRAPH_MAX, (int)n);
	for (i = 1; i <= n; i++) {
		int ok;
		lua_Integer v;

		lua_rawgeti(L, -1, i);
		v = lua_tointegerx(L, -1, &ok);
		if (!ok || v < 1 || v > GP_COUNT_MAX)
			luaL_error(L, "infer.graph_sizes[%d] must be a whole "
				   "number 1..%d", (int)i, GP_COUNT_MAX);
		c->graph_sizes[i - 1] = (int)v;
		lua_pop(L, 1);
	}
	c->n_graph = (int)n;
	lua_pop(L, 1);
}

/* Read an infer config table (lua/gpuplan/infer.lua fills it: SI units,
 * field names as infer_cfg; runtime "graphs"|"kernels"|"eager", compute a
 * dtype name, topo an optional topology table as for comm_cost). */
void lgp_toserve(lua_State *L, int idx, infer_cfg *c, gp_topo *t)
{
	int sub;

	luaL_checktype(L, idx, LUA_TTABLE);
	infer_defaults(c);
	lgp_read(L, idx, 0, &infer_desc, c, 0);
	lgp_graph_sizes(L, idx, c);
	/* The default gpus is tp * pp: an int product that overflowed for
	 * tp = pp = 65536.  Formed in double and bounded like the kernel's
	 * counts. */
	if ((double)c->tp * c->pp > GP_COUNT_MAX)
		luaL_error(L, "infer.tp * infer.pp must be at most %d (got "
			   "%d * %d)", GP_COUNT_MAX, c->tp, c->pp);
	c->gpus = c->tp * c->pp;
	mem_reserve_default(&c->reserve, c->tp * c->pp);
	lgp_read(L, idx, 0, &infer_after_desc, c, 0);
	sub = lgp_subtable(L, idx, "infer", "topo");
	if (sub) {
		lgp_totopo(L, sub, t);
		c->topo = t;
		lua_pop(L, 1);
	}
}

/* t.ops = the operator rows of a phase or a decode step, in order: name,
 * count, flop, bytes, total and the roofline terms of one call. */
static void lgp_pushops(lua_State *L, const infer_op_row *ops, int n)
{
	int i;

	lua_createtable(L, n, 0);
	for (i = 0; i < n; i++) {
		const infer_op_row *o = &ops[i];

		lua_createtable(L, 0, 18);
		lgp_setstr(L, "name", o->name);
		lgp_setcount(L, "count", o->count);
		lgp_setnum(L, "flop", o->flop);
		lgp_setnum(L, "bytes", o->bytes);
		lgp_setnum(L, "total", o->total);
		lgp_pushroof(L, &o->r);
		lua_rawseti(L, -2, i + 1);
	}
	lua_setfield(L, -2, "ops");
}

static void lgp_pushphase(lua_State *L, const infer_phase *p)
{
	lua_createtable(L, 0, 12);
	/* counts: integers where whole (a TP share of a sequence is not) */
	lgp_setcount(L, "batch", p->batch);
	lgp_setcount(L, "tokens", p->tokens);
	lgp_setcount(L, "ctx", p->ctx);
	lgp_setnum(L, "time", p->time);
	lgp_setnum(L, "gpu_time", p->gpu_time);
	lgp_setnum(L, "comm_time", p->comm_time);
	lgp_setnum(L, "offload_time", p->offload_time);
	lgp_setnum(L, "host_time", p->host_time);
	lgp_setnum(L, "flop", p->flop);
	lgp_setnum(L, "bytes", p->bytes);
	lgp_pushops(L, p->ops, p->nops);
}

/* core.infer(model, device, cfg) -> plain table of infer_result (fits,
 * why, ttft, itl, tokens_per_s, ..., prefill = phase, decode = phase);
 * seconds, bytes, tokens/s. */
int lgp_infer(lua_State *L)
{
	gp_model m;
	roof_device d;
	infer_cfg c;
	gp_topo t;
	infer_result r;
	gp_error err;

	lgp_tomodel(L, 1, &m);
	lgp_todevice(L, 2, &d);
	lgp_forget(L, 3);
	lgp_toserve(L, 3, &c, &t);
	lgp_strict(L, 3, 3, "infer");
	if (infer_run(&m, &d, &c, &r, &err) != GP_OK)
		return lgp_error(L, &err, "");
	lua_createtable(L, 0, 29);
	lgp_setbool(L, "fits", r.fits);
	if (!r.fits)
		lgp_setstr(L, "why", r.why);
	lgp_setnum(L, "weights_total", r.weights_total);
	lgp_setnum(L, "weights_gpu", r.weights_gpu);
	lgp_setcount(L, "offload_layers", r.offload_layers);
	lgp_setnum(L, "offload_bytes", r.offload_bytes);
	lgp_setnum(L, "workspace", r.workspace);
	lgp_setnum(L, "kv_per_seq", r.kv_per_seq);
	lgp_setnum(L, "kv_admit", r.kv_admit);
	lgp_setnum(L, "kv_budget", r.kv_budget);
	lgp_setint(L, "max_batch_kv", r.max_batch_kv);
	lgp_setint(L, "kv_seqs", r.kv_seqs);
	lgp_setint(L, "replicas", r.replicas);
	lgp_setint(L, "batch", r.batch);
	lgp_setnum(L, "kv_reads", r.kv_reads);
	lgp_setnum(L, "mixed_kv_reads", r.mixed_kv_reads);
	if (r.fits) {
		lgp_setnum(L, "ttft", r.ttft);
		if (r.ttft_burst) {
			lgp_setnum(L, "ttft_one", r.ttft_one);
			lgp_setnum(L, "ttft_p50", r.ttft_p50);
			lgp_setnum(L, "ttft_p99", r.ttft_p99);
		}
		if (r.ttft_loaded) {
			lgp_setnum(L, "ttft_one", r.ttft_one);
			lgp_setbool(L, "ttft_loaded", 1);
			lgp_setnum(L, "ttft_wait", r.ttft_wait);
			lgp_setnum(L, "ttft_steps", r.ttft_steps);
			lgp_setnum(L, "ttft_step", r.ttft_step);
		}
		lgp_setnum(L, "itl", r.itl);
		lgp_setnum(L, "itl_batch1", r.itl_batch1);
		lgp_setnum(L, "itl_load", r.itl_load);
		lgp_setnum(L, "prefill_share", r.prefill_share);
		lgp_setnum(L, "eager_steps", r.eager_steps);
		lgp_setnum(L, "eager", r.eager);
		lgp_setnum(L, "tokens_per_s", r.tokens_per_s);
		lgp_setnum(L, "tokens_per_s_gpu", r.tokens_per_s_gpu);
		lgp_setnum(L, "stream_tokens_per_s", r.stream_tokens_per_s);
		/* price 0 is a free card: cost 0 a token; tokens/s per
		 * price has no value there (gpuplan.infer says which price
		 * was given) */
		lgp_setnum(L, "cost_per_mtok", r.cost_per_mtok);
		if (c.price > 0)
			lgp_setnum(L, "tokens_per_s_per_price",
				   r.tokens_per_s_per_price);
		lgp_pushphase(L, &r.prefill);
		lua_setfield(L, -2, "prefill");
		lgp_pushphase(L, &r.decode);
		lua_setfield(L, -2, "decode");
	}
	return 1;
}

/* core.infer_gpus_for(model, device, cfg, target_tps, itl_limit_s) ->
 * gpus, batch, tokens_per_s (whole system), kv_reads (infer_kv_reads),
 * mixed_kv_reads (infer_mixed_kv_reads). */
int lgp_infer_gpus_for(lua_State *L)
{
	gp_model m;
	roof_device d;
	infer_cfg c;
	gp_topo t;
	gp_error err;
	double target, limit;
	/* set by infer_gpus_for on GP_OK; its refusal does not return here
	 * (gcc cannot see that gp_fail, a variadic call, returns GP_EINVAL) */
	double tps = 0.0;
	int gpus = 0, batch = 0;

	lgp_tomodel(L, 1, &m);
	lgp_todevice(L, 2, &d);
	lgp_forget(L, 3);
	lgp_toserve(L, 3, &c, &t);
	lgp_strict(L, 3, 3, "infer");
	target = luaL_checknumber(L, 4);
	limit = luaL_checknumber(L, 5);
	if (infer_gpus_for(&m, &d, &c, target, limit, &gpus, &batch, &tps,
			   &err) != GP_OK)
		return lgp_error(L, &err, "");
	lua_pushinteger(L, gpus);
	lua_pushinteger(L, batch);
	lua_pushnumber(L, tps);
	/* the decode attention's cache reads, the same at every gpus the
	 * search tries (infer_kv_reads: the model and tp alone) */
	lua_pushnumber(L, infer_kv_reads(&m, &c));
	lua_pushnumber(L, infer_mixed_kv_reads(&m, &c));
	return 5;
}

/* core.cost_per_mtok(price, gpus, tps) -> the price of 1e6 tokens at tps
 * tokens/s on gpus GPUs at price per GPU-hour (common.h gp_cost_per_mtok,
 * the rule gp.infer and the serving plan price by); gpuplan.infer
 * gpus_for asks it for its pick. */
int lgp_cost_per_mtok(lua_State *L)
{
	lua_Number price = luaL_checknumber(L, 1);
	lua_Number gpus = luaL_checknumber(L, 2);
	lua_Number tps = luaL_checknumber(L, 3);

	luaL_argcheck(L, price >= 0 && price < HUGE_VAL, 1,
		      "price must be a finite number >= 0");
	luaL_argcheck(L, gpus >= 1 && gpus < HUGE_VAL, 2, "gpus must be >= 1");
	luaL_argcheck(L, tps > 0 && tps < HUGE_VAL, 3, "tokens/s must be > 0");
	lua_pushnumber(L, gp_cost_per_mtok(price, gpus, tps));
	return 1;
}

/* core.heads_tp_ok(heads, kv_heads, tp) -> boolean: may tp split the
 * attention of heads query and kv_heads KV heads (layout.h
 * layout_heads_tp_ok: tp divides the heads and divides or is a multiple
 * of the KV heads, the rule serving's layout check refuses by)?
 * gpuplan.serve asks it for an ep that sets tp, to word the refusal
 * in terms of ep. */
int lgp_heads_tp_ok(lua_State *L)
{
	lua_Integer h = luaL_checkinteger(L, 1);
	lua_Integer kv = luaL_checkinteger(L, 2);
	lua_Integer tp = luaL_checkinteger(L, 3);

	luaL_argcheck(L, h >= 1 && h <= INT_MAX, 1, "heads must be >= 1");
	luaL_argcheck(L, kv >= 1 && kv <= INT_MAX, 2, "kv_heads must be >= 1");
	luaL_argcheck(L, tp >= 1 && tp <= INT_MAX, 3, "tp must be >= 1");
	lua_pushboolean(L, layout_heads_tp_ok((int)h, (int)kv, (int)tp));
	return 1;
}

/* ---- serve (MoE across many GPUs) ---- */

/* A layout table {tp, ep, dp_attention, tbo}: one description per key
 * (its name is the messages' prefix); absent: tp 1, ep 1, both flags
 * off. */
#define LAYOUT_FIELDS { \
	F_INT("tp", offsetof(serve_layout, tp), 1, 1, INT_MAX), \
	F_INT("ep", offsetof(serve_layout, ep), 1, 1, INT_MAX), \
	F_BOOL("dp_attention", offsetof(serve_layout, dp_attention), 0), \
	F_BOOL("tbo", offsetof(serve_layout, tbo), 0), \
	F_END \
}
static const lgp_field decode_fields[] = LAYOUT_FIELDS;
static const lgp_field prefill_fields[] = LAYOUT_FIELDS;
static const lgp_desc decode_desc = { "decode", decode_fields };
static const lgp_desc prefill_desc = { "prefill", prefill_fields };

/* The layout at cfg[d->what], read as d describes it. */
static void lgp_tolayout(lua_State *L, int idx, const lgp_desc *d,
			 serve_layout *y)
{
	int sub = lgp_subtable(L, idx, "serve", d->what);

	y->tp = y->ep = 1;
	y->dp_attention = y->tbo = 0;
	if (!sub)
		return;
	lgp_read(L, sub, 0, d, y, LGP_DEFAULTS | LGP_STRICT);
	lua_pop(L, 1);
}

/* A serve config's own scalars (an absent one keeps what serve_defaults
 * and lgp_toservemoe set). */
static const char *const a2a_names[] = {"deepep", "nccl", "none", NULL};
static const char *const eplb_src_names[] = {"trtllm", "sglang", NULL};
static const lgp_field serve_fields[] = {
	F_BOOL("disagg", offsetof(serve_cfg, disagg), 0),
	F_INT("gpus", offsetof(serve_cfg, gpus), 0, 1, INT_MAX),
	F_INT("prefill_gpus", offsetof(serve_cfg, prefill_gpus), 0, 0,
	      INT_MAX),
	F_NUM("batch_per_gpu", offsetof(serve_cfg, batch), 0),
	F_BOOL("queue", offsetof(serve_cfg, queue), 0),
	F_NUM("itl_max", offsetof(serve_cfg, itl_max), 0),
	F_NUM("ttft_max", offsetof(serve_cfg, ttft_max), 0),
	F_NUM("prefill_tokens", offsetof(serve_cfg, prefill_tokens), 0),
	F_BOOL("mixed", offsetof(serve_cfg, mixed), 0),
	F_INT("redundant", offsetof(serve_cfg, redundant), 0,
	      SERVE_REDUNDANT_AUTO, INT_MAX),
	F_NUM("imbalance", offsetof(serve_cfg, imbalance), 0),
	F_BOOL("eplb", offsetof(serve_cfg, eplb), 0),
	{ "eplb_src", LGP_F_NAME, offsetof(serve_cfg, eplb_src), 0, 0, 0, 0,
	  eplb_src_names, NULL, NULL, NULL, NULL },
	F_INT("mtp", offsetof(serve_cfg, mtp), 0, 0, INT_MAX),
	F_INT("mtp_layers", offsetof(serve_cfg, mtp_layers), 0, 0, INT_MAX),
	F_NUM("m_tile", offsetof(serve_cfg, m_tile), 0),
	F_NUM("m_tile_grouped", offsetof(serve_cfg, m_tile_grouped), 0),
	F_NUM("moe_fp8_bf16_x", offsetof(serve_cfg, moe_fp8_bf16_x), 0),
	F_NUM("linear_fp8_bf16_x", offsetof(serve_cfg, linear_fp8_bf16_x), 0),
	F_NUM("moe_route_kernels", offsetof(serve_cfg, moe_route_kernels), 0),
	F_NUM("moe_m_tile", offsetof(serve_cfg, moe_m_tile), 0),
	F_BOOL("moe_act_fused", offsetof(serve_cfg, moe_act_fused), 0),
	F_NUM("moe_pad", offsetof(serve_cfg, moe_pad), 0),
	F_NUM("moe_upcast", offsetof(serve_cfg, moe_upcast), 0),
	F_BOOL("ar_norm_fused", offsetof(serve_cfg, ar_norm_fused), 0),
	F_NUM("acceptance", offsetof(serve_cfg, acceptance), 0),
	F_NUM("accept_decay", offsetof(serve_cfg, accept_decay), 0),
	F_NUM("spec_host", offsetof(serve_cfg, spec_host), 0),
	F_NUM("spec_host_dp", offsetof(serve_cfg, spec_host_dp), 0),
	F_INT("spec_running", offsetof(serve_cfg, spec_running), 0, 0,
	      INT_MAX),
	{ "a2a", LGP_F_NAME, offsetof(serve_cfg, a2a), 0, 0, 0, 0, a2a_names,
	  NULL, NULL, NULL, NULL },
	F_NUM("dispatch_bytes", offsetof(serve_cfg, dispatch_bytes), 0),
	F_NUM("combine_bytes", offsetof(serve_cfg, combine_bytes), 0),
	F_NUM("expert_bits", offsetof(serve_cfg, expert_bits), 0),
	F_DTYPE("expert_compute", offsetof(serve_cfg, expert_compute), 0),
	F_NUM("expert_wo_stream", offsetof(serve_cfg, expert_wo_stream), 0),
	F_BOOL("sbo", offsetof(serve_cfg, sbo), 0),
	F_BOOL("sbo_down", offsetof(serve_cfg, sbo_down), 0),
	F_BOOL("sbo_shared_dispatch", offsetof(serve_cfg, sbo_shared_dispatch),
	       0),
	F_NUM("sbo_sms", offsetof(serve_cfg, sbo_sms), 0),
	F_NUM("sbo_block", offsetof(serve_cfg, sbo_block), 0),
	F_END
};
static const lgp_desc serve_desc = { "serve", serve_fields };

/* Read a serve config: the infer fields (lgp_toserve) for the base, topo
 * (required: the node and its NICs), decode and prefill layouts, and
 * serve_fields: disagg, gpus (default: decode's tp), prefill_gpus,
 * batch_per_gpu (a GPU's share with TP attention: 1/8 of a stream on
 * TP8; the infer base's batch is not read), itl_max (s), ttft_max (s), prefill_tokens, mixed, redundant (-1 or absent:
 * SERVE_REDUNDANT_AUTO), imbalance, eplb (boolean), eplb_src ("trtllm" |
 * "sglang": whose spread an EPLB placement leaves), mtp, mtp_layers, m_tile, acceptance,
 * accept_decay,
 * spec_host and spec_host_dp (s: with TP and with DP attention),
 * spec_running (requests an instance runs while it speculates; 0 or
 * absent: no such cap), a2a ("deepep" | "nccl" | "none"), dispatch_bytes, combine_bytes,
 * expert_bits (0 or absent: weight_bits), expert_compute (a dtype name),
 * expert_wo_stream (0 or absent: base.wo_stream where expert_bits is 0),
 * sbo, sbo_down, sbo_shared_dispatch (booleans), sbo_sms, sbo_block. */
static void lgp_toservemoe(lua_State *L, int idx, serve_cfg *c)
{
	gp_topo t;
	int sub;

	serve_defaults(c);
	lgp_toserve(L, idx, &c->base, &t);
	/* a stated comm (0 too) is placed as given; an absent one is NCCL's
	 * default for each instance's GPUs (serve.c fixed_reserve), not the
	 * base's tp * pp, which a serving config does not read */
	lua_getfield(L, idx, "comm");
	c->comm_stated = !lua_isnil(L, -1);
	lua_pop(L, 1);
	c->base.topo = NULL;
	sub = lgp_subtable(L, idx, "serve", "topo");
	if (!sub)
		luaL_error(L, "serve.topo is required");
	lgp_totopo(L, sub, &c->topo);
	lua_pop(L, 1);
	lgp_tolayout(L, idx, &decode_desc, &c->decode);
	lgp_tolayout(L, idx, &prefill_desc, &c->prefill);
	c->gpus = c->decode.tp;
	c->redundant = SERVE_REDUNDANT_AUTO;
	lgp_read(L, idx, 0, &serve_desc, c, 0);
}

static void lgp_pushstep(lua_State *L, const serve_step *s)
{
	lua_createtable(L, 0, 16);
	lgp_setcount(L, "batch", s->batch);
	lgp_setcount(L, "tokens", s->tokens);
	lgp_setnum(L, "compute", s->compute);
	lgp_setnum(L, "tp_comm", s->tp_comm);
	lgp_setnum(L, "a2a", s->a2a);
	lgp_setnum(L, "a2a_exposed", s->a2a_exposed);
	lgp_setnum(L, "sm_loss", s->sm_loss);
	lgp_setnum(L, "draft", s->draft);
	lgp_setnum(L, "host", s->host);
	lgp_setnum(L, "time", s->time);
	lgp_setnum(L, "dispatch_bytes", s->dispatch_bytes);
	lgp_setnum(L, "combine_bytes", s->combine_bytes);
	lgp_setnum(L, "remote_bytes", s->remote_bytes);
	lgp_setnum(L, "dispatch", s->dispatch);
	lgp_setnum(L, "combine", s->combine);
	lgp_pushops(L, s->ops, s->nops);
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
	lgp_setbool(L, "ar_norm_fused", p->ar_norm_fused);
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
	/* routed experts a GPU holds: a count (16, not 16.0), a fraction
	 * where experts are sliced (serve.h) */
	lgp_setcount(L, "expert_slots", m->expert_slots);
	lgp_setnum(L, "kv_per_seq", m->kv_per_seq);
	lgp_setnum(L, "kv_admit", m->kv_admit);
	lgp_setnum(L, "a2a_buffer", m->a2a_buffer);
	lgp_setnum(L, "workspace", m->workspace);
	lgp_setnum(L, "reserve", m->reserve);
	lgp_setnum(L, "margin", m->margin);
	lgp_setnum(L, "kv_budget", m->kv_budget);
	lgp_setnum(L, "used", m->used);
	lgp_setint(L, "max_batch", m->max_batch);
	lgp_setnum(L, "batch_cap", m->batch_cap);
	lua_setfield(L, -2, "memory");
	lgp_pushstep(L, &p->step);
	lua_setfield(L, -2, "step");
}

static void lgp_pushserve(lua_State *L, const serve_result *r)
{
	lua_createtable(L, 0, 28);
	lgp_setbool(L, "fits", r->fits);
	if (!r->fits)
		lgp_setstr(L, "why", r->why);
	lgp_setbool(L, "disagg", r->disagg);
	lgp_setnum(L, "accept", r->accept);
	lgp_setnum(L, "tpot", r->tpot);
	lgp_setnum(L, "itl", r->itl);
	lgp_setnum(L, "ttft", r->ttft);
	lgp_setnum(L, "ttft_steps", r->ttft_steps);
	if (r->ttft_one > 0.0)
		lgp_setnum(L, "ttft_one", r->ttft_one);
	if (r->ttft_loaded) {
		lgp_setbool(L, "ttft_loaded", 1);
		lgp_setnum(L, "ttft_wait", r->ttft_wait);
		lgp_setnum(L, "ttft_step", r->ttft_step);
		lgp_setnum(L, "ttft_one_steps", r->ttft_one_steps);
	}
	if (r->ttft_full > 0.0)
		lgp_setnum(L, "ttft_full", r->ttft_full);
	lgp_setnum(L, "prefill_tokens", r->prefill_tokens);
	lgp_setnum(L, "kv_transfer", r->kv_transfer);
	lgp_setnum(L, "prefill_share", r->prefill_share);
	lgp_setnum(L, "prefill_experts", r->prefill_experts);
	lgp_setnum(L, "prefill_stall", r->prefill_stall);
	lgp_setnum(L, "eager_steps", r->eager_steps);
	lgp_setnum(L, "eager", r->eager);
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
int lgp_serve(lua_State *L)
{
	gp_model m;
	roof_device d;
	serve_cfg c;
	serve_result r;
	gp_error err;

	lgp_tomodel(L, 1, &m);
	lgp_todevice(L, 2, &d);
	lgp_forget(L, 3);
	lgp_toservemoe(L, 3, &c);
	lgp_strict(L, 3, 3, "serve");
	if (serve_run(&m, &d, &c, &r, &err) != GP_OK)
		return lgp_error(L, &err, "");
	lgp_pushserve(L, &r);
	return 1;
}

/* core.serve_target(model, device, cfg, target_tps, itl_max_s,
 * fix_layout, fix_disagg, skip_tp) -> result (serve_run of the plan) and the
 * plan {gpus, prefill_gpus, disagg, decode = layout, prefill = layout}. */
int lgp_serve_target(lua_State *L)
{
	gp_model m;
	roof_device d;
	serve_cfg c, out;
	serve_result r;
	gp_error err;
	double target, limit;
	int fl, fd, st;

	lgp_tomodel(L, 1, &m);
	lgp_todevice(L, 2, &d);
	lgp_forget(L, 3);
	lgp_toservemoe(L, 3, &c);
	lgp_strict(L, 3, 3, "serve");
	target = luaL_checknumber(L, 4);
	limit = luaL_checknumber(L, 5);
	fl = lua_toboolean(L, 6);
	fd = lua_toboolean(L, 7);
	st = lua_toboolean(L, 8);
	out = c; /* serve_target's plan on GP_OK (as infer_gpus_for's above) */
	if (serve_target(&m, &d, &c, target, limit, fl, fd, st, &out, &r,
	                 &err)
	    != GP_OK)
		return lgp_error(L, &err, "");
	lgp_pushserve(L, &r);
	lua_createtable(L, 0, 5);
	lgp_setint(L, "gpus", out.gpus);
	lgp_setint(L, "prefill_gpus", out.prefill_gpus);
	lgp_setbool(L, "disagg", out.disagg);
	return 2;
}

/* core.serve_redundant(experts, ep, tp) -> the redundant expert slots
 * the serving model takes by default (serve_redundant under
 * SERVE_REDUNDANT_AUTO) for a layout of ep and tp GPUs: the defaults
 * line says the engine's count, not a second copy of its rule. */
int lgp_serve_redundant(lua_State *L)
{
	lua_Integer e = luaL_checkinteger(L, 1);
	lua_Integer ep = luaL_checkinteger(L, 2);
	lua_Integer tp = luaL_checkinteger(L, 3);
	gp_model m;
	serve_cfg c;
	serve_layout y;

	luaL_argcheck(L, e >= 0 && e <= INT_MAX, 1, "experts must be >= 0");
	luaL_argcheck(L, ep >= 1 && ep <= INT_MAX, 2, "ep must be >= 1");
	luaL_argcheck(L, tp >= 1 && tp <= INT_MAX, 3, "tp must be >= 1");
	memset(&m, 0, sizeof m);
	memset(&c, 0, sizeof c);
	memset(&y, 0, sizeof y);
	m.moe.experts = (int)e;
	c.redundant = SERVE_REDUNDANT_AUTO;
	y.ep = (int)ep;
	y.tp = (int)tp;
	lua_pushinteger(L, serve_redundant(&m, &c, &y));
	return 1;
}

/* core.serve_accept(mtp, acceptance [, decay]) -> tokens per decode step
 * (decay: serve_accept_length's r, default 1: i.i.d.). */
int lgp_serve_accept(lua_State *L)
{
	lua_Integer n = luaL_checkinteger(L, 1);
	double a = luaL_checknumber(L, 2);
	double r = luaL_optnumber(L, 3, 1.0);

	luaL_argcheck(L, n >= 0 && n <= 16, 1, "mtp must be 0..16");
	luaL_argcheck(L, a >= 0 && a <= 1, 2, "acceptance must be in [0, 1]");
	luaL_argcheck(L, r > 0 && r <= 1, 3, "decay must be in (0, 1]");
	lua_pushnumber(L, serve_accept_length((int)n, a, r));
	return 1;
}
