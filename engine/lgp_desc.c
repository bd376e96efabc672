/*
 * lgp_desc.c - the configs described once as field tables
 * (lgp_field.h): quantisation, recipe, optimizer, the memory config
 * (gp_train_cfg), the training-step config (train_cfg) and what
 * job:step{} may change, with the kernels' name parsers and the
 * custom readers they use.
 */
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "lgp_int.h"

/* ---- struct descriptions (lgp_field.h) ---- */

LGP_PARSER(p_recompute, mem_recompute_parse, gp_recompute)
LGP_PARSER(p_schedule, mem_schedule_parse, gp_schedule)
LGP_PARSER(p_pipe, mem_pipe_parse, gp_pipe_engine)
LGP_PARSER(p_ema, mem_ema_parse, int)
LGP_PARSER(p_partition, mem_partition_parse, gp_partition)
LGP_PARSER(p_lora_targets, mem_lora_targets_parse, unsigned)
LGP_PARSER(p_recompute_modules, mem_recompute_modules_parse, unsigned)
/* A stage list, its entries into the reader's store (lgp_read_store;
 * layout.h gp_stage_store). */
static int p_stage_list(const char *s, void *out, void *err)
{
	lgp_store_out *o = out;

	return layout_stage_list_parse(s, o->store, o->out, err);
}

/* an adapter's base (--method qlora --weights mxfp4 was refused "bad
 * argument #4 to 'gpuplan.core.train' (base: unknown field
 * 'fixed_group')" while core.memory's weights took it): the one list */
static const lgp_field quant_fields[] = {
	LGP_QUANT_FIELDS,
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
const lgp_desc lgp_recipe_desc = { "recipe", recipe_fields };
static const lgp_field optim_fields[] = {
	F_IGNORE("id"),
	F_REQNUM("states", offsetof(gp_optim, states)),
	F_NUM("state", offsetof(gp_optim, state), 0),
	F_BOOL("foreach_adamw", offsetof(gp_optim, foreach_adamw), 0),
	F_NUM("scalar_states", offsetof(gp_optim, scalar_states), 0),
	F_INT("ns_steps", offsetof(gp_optim, ns_steps), 0, 0, 100),
	F_BOOL("dp_shard", offsetof(gp_optim, dp_shard), 0),
	F_END
};
const lgp_desc lgp_optim_desc = { "optimizer", optim_fields };

/* The gp_train_cfg fields, at prefix P of struct S (P empty: the struct
 * itself; "mem.": inside a train_cfg) -- one list for core.memory's
 * reader and core.train's.  Ranges the kernels check themselves (with
 * their own messages) are left open here. */
#define MEM_TRAIN_FIELDS(S, P)                                            \
	F_REQSUB("recipe", offsetof(S, P recipe), &lgp_recipe_desc),          \
	F_REQSUB("optimizer", offsetof(S, P optim), &lgp_optim_desc),         \
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
	F_INT("activation_offload_layers",                                \
	      offsetof(S, P act_offload_layers), 0, 0, 2147483647.0),     \
	F_BOOL("checkpoint_offload", offsetof(S, P ckpt_offload), 0),      \
	F_INT("first_stage_layers", offsetof(S, P first_stage_layers), 0, \
	      0, 2147483647.0),                                           \
	F_INT("last_stage_layers", offsetof(S, P last_stage_layers), 0,   \
	      0, 2147483647.0),                                           \
	F_STORE("stage_layers", offsetof(S, P lay.stages), p_stage_list,  \
		""),                                                      \
	F_BOOL("split_ends", offsetof(S, P split_ends), 0),               \
	F_INT("mtp_layers", offsetof(S, P mtp_layers), 0, 0, 16),         \
	F_NUM("microbatches", offsetof(S, P lay.microbatches), 0),        \
	F_PARSE("recompute_modules", offsetof(S, P recompute_modules),    \
		p_recompute_modules, NULL),                               \
	F_BOOL("fp8_activations", offsetof(S, P fp8_cache), 0),           \
	F_BOOL("fp8_te", offsetof(S, P fp8_te), 0),                       \
	F_BOOL("base_fp8_gemm", offsetof(S, P base_fp8_gemm), 0),         \
	F_BOOL("moe_probs_in_act", offsetof(S, P probs_in_act), 0),       \
	F_BOOL("moe_einsum", offsetof(S, P moe_einsum), 0),               \
	F_BOOL("flash", offsetof(S, P flash), 1),                         \
	F_BOOL("dropout", offsetof(S, P dropout), 0),                     \
	F_BOOL("eager_swiglu", offsetof(S, P eager_swiglu), 0),           \
	F_BOOL("eager_softmax", offsetof(S, P eager_softmax), 0),         \
	F_BOOL("eager_norm", offsetof(S, P eager_norm), 0),               \
	F_BOOL("attn_clamp", offsetof(S, P attn_clamp), 0),               \
	F_BOOL("autocast", offsetof(S, P autocast), 0),                   \
	F_INT("act_split_proj", offsetof(S, P split_proj), 0, 0, 3),       \
	F_NUM("act_bytes", offsetof(S, P act_bytes), 0),                  \
	F_NUM("logit_bytes", offsetof(S, P logit_bytes), 0),              \
	F_BOOL("fused_linear_ce", offsetof(S, P fused_linear_ce), 0),     \
	F_BOOL("replicated_logits", offsetof(S, P replicated_logits), 0), \
	F_NUM("capacity_factor", offsetof(S, P capacity_factor), 0),      \
	F_INT("lora_rank", offsetof(S, P lora_rank), 0, 0, 2147483647.0), \
	F_PARSE("lora_targets", offsetof(S, P lora_targets),              \
		p_lora_targets, NULL),                                    \
	F_BOOL("lora_dropout", offsetof(S, P lora_dropout), 0),           \
	F_SUB("base", offsetof(S, P base), &quant_desc),                  \
	F_BOOL("paged_optimizer", offsetof(S, P paged_optimizer), 0),     \
	F_BOOL("before_step", offsetof(S, P before_step), 0),             \
	F_BOOL("grads_in_bwd", offsetof(S, P grads_in_bwd), 0),           \
	F_BOOL("logits_freed", offsetof(S, P logits_freed), 0),           \
	F_BOOL("grads_whole", offsetof(S, P grads_whole), 0),             \
	F_INT("fsdp_version", offsetof(S, P fsdp_version), 0, 0, 2),      \
	F_NUM("reduce_bytes", offsetof(S, P reduce_bytes), 0),            \
	F_BOOL("fused_qkv_view", offsetof(S, P fused_qkv_view), 0),       \
	F_BOOL("kv_repeat", offsetof(S, P kv_repeat), 0),                 \
	F_BOOL("sac_attn_recompute", offsetof(S, P sac_attn_recompute), 0), \
	F_BOOL("fsdp_root_gathered", offsetof(S, P fsdp_root_gathered), 0), \
	F_INT("cp_ring", offsetof(S, P cp_ring), 0, 0, 2),               \
	F_BOOL("cp_ulysses", offsetof(S, P cp_ulysses), 0),               \
	F_BOOL("lora_zero_pad", offsetof(S, P lora_zero_pad), 0),         \
	F_BOOL("quant_head", offsetof(S, P quant_head), 0),               \
	F_NUM("images", offsetof(S, P images), 0),                        \
	F_NUM("enc_seq", offsetof(S, P enc_seq), 0),                      \
	F_BOOL("vision_frozen", offsetof(S, P vision_frozen), 0),        \
	F_BOOL("llm_frozen", offsetof(S, P llm_frozen), 0),              \
	F_PARSE("ema", offsetof(S, P ema), p_ema, "none"),                \
	F_BOOL("ds_zero", offsetof(S, P ds_zero), 0),                     \
	F_NUM("reduce_bucket_size", offsetof(S, P ds_reduce_bucket),      \
	      DS_REDUCE_BUCKET),                                          \
	F_NUM("prefetch_bucket_size", offsetof(S, P ds_prefetch_bucket),  \
	      DS_PREFETCH_BUCKET),                                        \
	F_NUM("max_live_parameters", offsetof(S, P ds_max_live),          \
	      DS_MAX_LIVE),                                               \
	F_NUM("max_reuse_distance", offsetof(S, P ds_max_reuse),          \
	      DS_REUSE_DISTANCE),                                         \
	F_NUM("grad_accum_bytes", offsetof(S, P ds_accum_bytes), 0),      \
	F_NUM("ds_fp16_step", offsetof(S, P ds_fp16_step), 0),            \
	F_NUM("foreach_step", offsetof(S, P foreach_step), 0),            \
	F_BOOL("ds_overlap_comm", offsetof(S, P ds_overlap_comm), 0),     \
	F_BOOL("ds_whole_init", offsetof(S, P ds_whole_init), 0)

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
const lgp_desc lgp_mem_train_desc = { "memory", mem_train_fields };

/* order = "tp-cp-ep-dp-pp" (rank order, innermost first). */
static void c_order(lua_State *L, int v, void *dst, const char *path)
{
	train_cfg *c = dst;
	gp_error err;

	if (lua_type(L, v) != LUA_TSTRING)
		luaL_error(L, "%s must be a string (got %s)", path,
			   luaL_typename(L, v));
	if (layout_order_parse(lua_tostring(L, v), c->mem.lay.order, &err))
		lgp_error(L, &err, "");
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
	F_NUM("dp_bucket", offsetof(train_cfg, dp_bucket), 0),
	F_BOOL("fp8_param_gather", offsetof(train_cfg, fp8_param_gather), 0),
	F_BOOL("fsdp", offsetof(train_cfg, fsdp), 0),
	F_BOOL("overlap_grad_reduce", offsetof(train_cfg, overlap_grad_reduce), 0),
	F_BOOL("overlap_param_gather", offsetof(train_cfg, overlap_param_gather), 0),
	F_BOOL("tp_overlap", offsetof(train_cfg, tp_overlap), 0),
	F_BOOL("overlap_p2p", offsetof(train_cfg, overlap_p2p), 0),
	F_BOOL("ep_overlap", offsetof(train_cfg, ep_overlap), 0),
	F_BOOL("moe_allgather", offsetof(train_cfg, ep_allgather), 0),
	F_BOOL("cp_allgather", offsetof(train_cfg, cp_allgather), 0),
	F_BOOL("cp_alltoall", offsetof(train_cfg, cp_alltoall), 0),
	F_BOOL("moe_flex", offsetof(train_cfg, ep_flex), 0),
	F_BOOL("moe_hybridep", offsetof(train_cfg, ep_hybridep), 0),
	F_INT("moe_flex_sms", offsetof(train_cfg, flex_sms), 0, 0, 1024),
	F_NUM("moe_router_ops", offsetof(train_cfg, router_ops), 0),
	F_INT("cuda_device_max_connections", offsetof(train_cfg, cuda_connections), 8, 1, 32),
	F_BOOL("moe_unbalanced", offsetof(train_cfg, moe_unbalanced), 0),
	F_BOOL("moe_fake_gate", offsetof(train_cfg, moe_fake_gate), 0),
	F_BOOL("router_fp64", offsetof(train_cfg, router_fp64), 0),
	F_BOOL("graph_attn", offsetof(train_cfg, graph_attn), 0),
	F_BOOL("graph_router", offsetof(train_cfg, graph_router), 0),
	F_BOOL("graph_mamba", offsetof(train_cfg, graph_mamba), 0),
	F_BOOL("graph_prep", offsetof(train_cfg, graph_prep), 0),
	F_BOOL("graph_full", offsetof(train_cfg, graph_full), 0),
	F_BOOL("fp8_current", offsetof(train_cfg, fp8_current), 0),
	F_BOOL("fp8_block", offsetof(train_cfg, fp8_block), 0),
	F_BOOL("moe_fp8_copy", offsetof(train_cfg, moe_fp8_copy), 0),
	F_BOOL("zero3_per_param", offsetof(train_cfg, zero3_per_param), 0),
	F_BOOL("zero_allreduce", offsetof(train_cfg, zero_allreduce), 0),
	F_BOOL("causal_flops", offsetof(train_cfg, causal_flops), 0),
	F_BOOL("embed_flops", offsetof(train_cfg, embed_flops), 0),
	F_BOOL("no_router_flops", offsetof(train_cfg, no_router_flops), 0),
	F_NUM("packed_len", offsetof(train_cfg, attn_seq), 0),
	F_BOOL("unfused_loss", offsetof(train_cfg, unfused_loss), 0),
	F_BOOL("mcore_loss", offsetof(train_cfg, mcore_loss), 0),
	F_BOOL("eager_loss", offsetof(train_cfg, eager_loss), 0),
	F_BOOL("emb_matmul", offsetof(train_cfg, emb_matmul), 0),
	F_INT("metric_losses", offsetof(train_cfg, metric_losses), 0, 0, 8),
	F_INT("pp_microbatches", offsetof(train_cfg, pp_call_mb), 0, 0, 1048576),
	F_BOOL("lora_merged", offsetof(train_cfg, lora_merged), 0),
	F_BOOL("pad_mask", offsetof(train_cfg, pad_mask), 0),
	F_NUM("pad_share", offsetof(train_cfg, pad_share), 0),
	F_BOOL("async_tp_allreduce", offsetof(train_cfg, async_tp), 0),
	F_BOOL("tp_input_per_linear", offsetof(train_cfg, tp_input_per_linear), 0),
	F_BOOL("unfused_permute", offsetof(train_cfg, unfused_permute), 0),
	F_BOOL("legacy_permute", offsetof(train_cfg, legacy_permute), 0),
	F_INT("mxfp8_grouped", offsetof(train_cfg, mxfp8_grouped), 0, 0, 2),
	F_BOOL("unfused_act", offsetof(train_cfg, unfused_act), 0),
	F_BOOL("zero_gather_copies", offsetof(train_cfg, zero_gather_copies), 0),
	F_BOOL("fa_layout", offsetof(train_cfg, fa_layout), 0),
	F_BOOL("unfused_rope", offsetof(train_cfg, unfused_rope), 0),
	F_BOOL("fused_grouped_mlp", offsetof(train_cfg, fused_mlp), 0),
	F_BOOL("fp8_attention", offsetof(train_cfg, fp8_attn), 0),
	F_BOOL("fp8_attention_sm90", offsetof(train_cfg, fp8_attn_sm90), 0),
	F_BOOL("mlp_down_bf16", offsetof(train_cfg, mlp_down_bf16), 0),
	F_BOOL("tp_overlap_fp8_rs", offsetof(train_cfg, tp_overlap_fp8_rs), 0),
	F_BOOL("tp_overlap_aggregate", offsetof(train_cfg, tp_overlap_aggregate), 0),
	F_BOOL("rope_seq_loop", offsetof(train_cfg, rope_seq_loop), 0),
	F_NUM("router_bytes", offsetof(train_cfg, router_bytes), 0),
	F_BOOL("ckpt_outside_fsdp", offsetof(train_cfg, ckpt_outside_fsdp), 0),
	F_BOOL("ckpt_early_stop", offsetof(train_cfg, ckpt_early_stop), 0),
	F_BOOL("ckpt_offload_streams", offsetof(train_cfg, ckpt_offload_streams), 0),
	F_INT("split_proj", offsetof(train_cfg, split_proj), 0, 0, 3),
	F_BOOL("attn_scale_q", offsetof(train_cfg, attn_scale_q), 0),
	F_BOOL("attn_where", offsetof(train_cfg, attn_where), 0),
	F_INT("attn_head_copies", offsetof(train_cfg, attn_head_copies), 0, 0, 2),
	F_BOOL("addmm_bias", offsetof(train_cfg, addmm_bias), 0),
	F_BOOL("forward_only", offsetof(train_cfg, forward_only), 0),
	F_BOOL("eager", offsetof(train_cfg, eager), 0),
	F_BOOL("liger", offsetof(train_cfg, liger), 0),
	F_BOOL("fused_norm", offsetof(train_cfg, fused_norm), 0),
	F_BOOL("eager_optim", offsetof(train_cfg, eager_optim), 0),
	F_BOOL("optim_loop", offsetof(train_cfg, optim_loop), 0),
	F_BOOL("ds_buckets", offsetof(train_cfg, ds_buckets), 0),
	F_BOOL("te_modules", offsetof(train_cfg, te_modules), 0),
	F_BOOL("master_copy", offsetof(train_cfg, master_copy), 0),
	F_BOOL("gradient_accumulation_fusion",
	       offsetof(train_cfg, grad_acc_fusion), 0),
	F_BOOL("delayed_update", offsetof(train_cfg, delayed_update), 0),
	F_NUM("cpu_adam_s", offsetof(train_cfg, cpu_adam_s), 0),
	F_NUM("act_offload_bw", offsetof(train_cfg, act_offload_bw), 0),
	F_NUM("cpu_step_s", offsetof(train_cfg, cpu_step_s), 0),
	F_NUM("host_op_time", offsetof(train_cfg, host_op_time),
	      GP_EAGER_OP_TIME),
	F_REQNUM("capacity", offsetof(train_cfg, capacity)),
	F_NUM("tokens", offsetof(train_cfg, tokens), 0),
	F_NUM("price", offsetof(train_cfg, price), 0),
	F_IGNORE("gpus"),
	F_IGNORE("margin"),
	F_IGNORE("kind"),
	F_IGNORE("stack"),
	F_END
};
const lgp_desc lgp_train_desc = { "train", train_fields };

/* What job:step{...} may change, under gp.train's names: the layout
 * (batch is the micro-batch), the recompute policy and the overlaps --
 * of the train_cfg at member P of struct T (P empty: T is train_cfg),
 * so that the training job and the RL job (whose actor's step it is)
 * read one list. */
#define STEP_LAYOUT_FIELDS(T, P) \
	F_INT("tp", offsetof(T, P mem.lay.tp), 1, 1, GP_COUNT_MAX), \
	F_INT("pp", offsetof(T, P mem.lay.pp), 1, 1, GP_COUNT_MAX), \
	F_INT("cp", offsetof(T, P mem.lay.cp), 1, 1, GP_COUNT_MAX), \
	F_INT("ep", offsetof(T, P mem.lay.ep), 1, 1, GP_COUNT_MAX), \
	F_INT("etp", offsetof(T, P mem.lay.etp), 0, 1, GP_COUNT_MAX), \
	F_INT("vpp", offsetof(T, P mem.lay.vpp), 1, 1, GP_COUNT_MAX), \
	F_INT("zero", offsetof(T, P mem.lay.zero), 0, 0, 3), \
	F_BOOL("sp", offsetof(T, P mem.lay.sp), 0), \
	F_NUM("batch", offsetof(T, P mem.lay.micro_batch), 1), \
	F_PARSE("recompute", offsetof(T, P mem.recompute), p_recompute, \
		NULL), \
	F_INT("recompute_layers", offsetof(T, P mem.recompute_layers), \
	      0, 0, GP_COUNT_MAX), \
	F_INT("first_stage_layers", \
	      offsetof(T, P mem.first_stage_layers), 0, 0, GP_COUNT_MAX), \
	F_INT("last_stage_layers", offsetof(T, P mem.last_stage_layers), \
	      0, 0, GP_COUNT_MAX), \
	F_STORE("stage_layers", offsetof(T, P mem.lay.stages), \
		p_stage_list, ""), \
	F_BOOL("split_ends", offsetof(T, P mem.split_ends), 0), \
	/* fsdp: a strategy name or a boolean, as gp.train's: the job's \
	 * rule reads it (lgp_job_sharding) */ \
	F_IGNORE("fsdp"), \
	F_BOOL("overlap_grad_reduce", offsetof(T, P overlap_grad_reduce), \
	       0), \
	F_BOOL("overlap_param_gather", \
	       offsetof(T, P overlap_param_gather), 0), \
	F_BOOL("tp_overlap", offsetof(T, P tp_overlap), 0), \
	F_BOOL("overlap_p2p", offsetof(T, P overlap_p2p), 0), \
	F_BOOL("ep_overlap", offsetof(T, P ep_overlap), 0)

static const lgp_field step_fields[] = {
	STEP_LAYOUT_FIELDS(train_cfg, ),
	F_NUM("global_batch", offsetof(train_cfg, global_batch), 0),
	F_END
};
const lgp_desc lgp_step_desc = { "step", step_fields };

/* What an RL job's step{...} may change: the actor's layout as
 * job:step's, its mini-batch (global_batch: samples per optimizer step)
 * and the rollout engine's TP and EP. */
static const lgp_field rl_step_fields[] = {
	STEP_LAYOUT_FIELDS(rl_cfg, train.),
	F_NUM("global_batch", offsetof(rl_cfg, minibatch), 0),
	F_INT("rollout_tp", offsetof(rl_cfg, roll.tp), 1, 1, GP_COUNT_MAX),
	F_INT("rollout_ep", offsetof(rl_cfg, rollout_ep), 1, 1, GP_COUNT_MAX),
	F_END
};
const lgp_desc lgp_rl_step_desc = { "step", rl_step_fields };

/* A step's batch and global_batch, as read into the config, in the
 * ranges gp.train's options take, named as job:step takes them (argument
 * arg).  Read as plain numbers, a bad one reached the kernels' checks,
 * which name their own fields: "step: micro_batch must be a positive
 * number up to 1e+15 (got -1)" for batch = -1, "minibatch" for an RL
 * step's global_batch -- names job:step does not take. */
/* v as a message says it: a whole number as one ("-1", not "-1.0"). */
static const char *said(lua_State *L, double v)
{
	if (v == floor(v) && fabs(v) < 9e15)
		return lua_pushfstring(L, "%I", (lua_Integer)v);
	return lua_pushfstring(L, "%f", (lua_Number)v);
}

void lgp_step_batches(lua_State *L, int arg, double batch, double global,
		      double job_batch, double job_global)
{
	if (!(batch > 0 && batch <= GP_COUNT_MAX))
		luaL_argerror(L, arg, lua_pushfstring(L, "step.batch must be a "
			"number of sequences in (0, %d] (got %s)", GP_COUNT_MAX,
			said(L, batch)));
	if (!(global >= 0 && global <= 1e15))
		luaL_argerror(L, arg, lua_pushfstring(L, "step.global_batch "
			"must be a number in [0, 1e+15] (got %s)",
			said(L, global)));
	/* What the layout gave (a value other than the job's own) in
	 * gp.train's ranges: batch 0.5 was priced (gp.train refuses it:
	 * "batch must be a number in [1, 16777216]"), and global_batch 0
	 * priced one micro-batch per rank where gp.train refuses 0 -- the
	 * job's own 0 (an RL job's undivided mini-batch) stays the job's. */
	if (batch != job_batch && batch < 1)
		luaL_argerror(L, arg, lua_pushfstring(L, "step.batch must be a "
			"number in [1, %d] (got %s)", GP_COUNT_MAX,
			said(L, batch)));
	if (global != job_global &&
	    !(global >= 1 && global <= GP_COUNT_MAX && global == floor(global)))
		luaL_argerror(L, arg, lua_pushfstring(L, "step.global_batch "
			"must be a whole number of sequences, 1..%d (got %s)",
			GP_COUNT_MAX, said(L, global)));
}
