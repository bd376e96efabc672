/*
 * train_prep.c - what a layout needs before it is priced: the config's
 * checks, its placement (remembered for the last few layouts), the
 * prepared context, and the phase it opens (its distinct stages,
 * optimizer bytes, the key of what it shares).  The model is described
 * in train.c.
 */
#include "train_int.h"

#include <math.h>
#include <string.h>

/* Bytes per parameter a gradient reduction moves: the config's, else
 * the recipe's `reduce` (catalog/recipes.lua: its gradient dtype, as
 * Megatron reduces its fp32 main grads in fp32 for bf16 runs and fp16
 * mixed precision its fp16 grads; DeepSpeed's BF16_Optimizer a bf16
 * copy). */
static double reduce_bytes(const train_cfg *c)
{
	return c->mem.reduce_bytes > 0 ? c->mem.reduce_bytes : c->mem.recipe.reduce;
}

/* The bytes a weight gradient's accumulation reads and writes per
 * weight element, each micro-batch, with half the layers' 16-bit type.
 * Megatron-Core's layers accumulate in the wgrad GEMM itself, into the
 * main grad in that buffer's dtype: Transformer Engine's _Linear.backward
 * runs the wgrad general_gemm with "out=main_grad if
 * ctx.fuse_wgrad_accumulation", "out_dtype=(main_grad.dtype if
 * ctx.fuse_wgrad_accumulation else ctx.activation_dtype)" and
 * "accumulate=accumulate_wgrad_into_param_main_grad" (transformer_engine/
 * pytorch/module/linear.py; layernorm_linear.py the same), so the GEMM
 * reads the main grad and writes it back, 2 x its bytes; and the DDP
 * allocates that buffer "grad_dtype = torch.float if
 * self.ddp_config.grad_reduce_in_fp32 else param.dtype"
 * (megatron/core/distributed/distributed_data_parallel.py): fp32 (8 B)
 * by default, bf16 (4 B) where a recipe sets grad_reduce_in_fp32 False
 * (Megatron-Bridge's performance configs, NeMo's gpt3 yamls'
 * grad_sync_dtype bf16: the grad_reduce option, which sets the recipe's
 * grads on the megatron stack, gpuplan.train).  The 2 B main grads of an
 * fp16 model are Megatron-LM's 2021 fp16 runs (Narayanan et al. 2021),
 * from before its gradient-accumulation fusion: autograd writes the
 * 16-bit .grad and the DDP hook adds it into the main grad
 * ("param.main_grad.add_(param.grad.data)"), 2 + 3 x 2 B -- the 8 priced
 * as before.  Without the fusion (the gradient_accumulation_fusion
 * option off: gpuplan.options' default under Megatron-FSDP, which
 * requires "--no-gradient-accumulation-fusion") autograd writes the
 * .grad its hook then adds: WGRAD_ACC_BYTES, as before.  The other
 * stacks keep an fp32 .grad (torch autocast over fp32 parameters,
 * FSDP's fp32 sharded gradient) that autograd accumulates into: 4 B
 * read and written, WGRAD_ACC_BYTES; the option is off there. */
static double train_wgrad_acc(const train_cfg *c, gp_dtype half)
{
	return c->grad_acc_fusion && half == GP_BF16 ?
		2.0 * c->mem.recipe.grads : WGRAD_ACC_BYTES;
}

/* What the step prices of a hybrid stack (model hybrid_pattern: its
 * Mamba, attention-only, MLP and MoE layers, each its own block) and what
 * it refuses, naming the option: context parallelism (Megatron-Core
 * splits a Mamba layer's sequence by an all-to-all of its heads, which is
 * not priced; the ring's K/V exchange is the attention layers' alone),
 * ZeRO 2 and 3 and FSDP (their per-layer gathers are priced for the two
 * kinds of a plain model, train_stage.c zero_block), the eager modules
 * (Hugging Face's own Mamba kernels are not priced), adapters and a
 * frozen language model (the Mamba layer's saved tensors are priced for
 * full training), multi-token prediction modules and Muon (their layers
 * are a plain model's).  The first of those the memory refuses too
 * (memory.h mem_hybrid_refusal: CP, adapters, a frozen model, MTP), one
 * check for both.  A usage error: the option is what the stack cannot
 * take. */
static int hybrid_refusal(const gp_model *m, const train_cfg *c,
			  gp_error *err)
{
	const char *w = "a hybrid stack (model.hybrid_pattern) is priced";

	if (mem_hybrid_refusal(m, &c->mem, &c->mem.lay, err))
		return GP_EINVAL;
	if (c->mem.lay.zero >= 2)
		return gp_usage(err, "zero %d: %s at ZeRO 0 or 1 (its layers' "
				"ZeRO-2/3 and FSDP gathers are not priced): "
				"give zero 0 or 1", c->mem.lay.zero, w);
	if (c->eager)
		return gp_usage(err, "kernels eager: %s for fused kernels "
				"(Megatron-Core's MambaMixer): give kernels "
				"fused", w);
	if (c->mem.optim.ns_steps > 0)
		return gp_usage(err, "optimizer: %s with Adam-style "
				"optimizers (Muon's Newton-Schulz steps on "
				"its Mamba matrices are not priced)", w);
	if (c->mem.recompute == GP_RECOMPUTE_OP)
		return gp_usage(err, "recompute op: %s under none, selective "
				"or full recompute", w);
	return GP_OK;
}

/* The config's checks against a checked model and device. */
static int check_cfg(const gp_model *m, const roof_device *d,
		     const train_cfg *c, gp_error *err)
{
	if (m->encoder_layers > 0)
		return gp_fail(err, "the training step of an encoder-decoder "
			       "model is not modelled (its memory is: "
			       "gpuplan fit)");
	if ((int)c->compute < 0 || c->compute >= GP_DTYPE_COUNT)
		return gp_fail(err, "unknown compute precision %d",
			       (int)c->compute);
	if (!(d->peak[c->compute] > 0) || !(d->gemm_frac[c->compute] > 0))
		return gp_fail(err, "%s training needs %s tensor cores; this "
			       "device has none", gp_dtype_name(c->compute),
			       gp_dtype_name(c->compute));
	if (c->compute != GP_BF16 && c->compute != GP_FP16 &&
	    c->compute != GP_FP8 && c->compute != GP_TF32 &&
	    c->compute != GP_FP32)
		return gp_fail(err, "train: compute precision %s is not a "
			       "training precision (bf16, fp16, fp8, tf32, "
			       "fp32)", gp_dtype_name(c->compute));
	if (gp_check_nonneg(c->global_batch, "global_batch", err) ||
	    gp_check_nonneg(c->tokens, "tokens", err) ||
	    gp_check_nonneg(c->price, "price", err) ||
	    gp_check_num(c->mem.reduce_bytes, 0, 8, "reduce_bytes", err) ||
	    gp_check_num(c->router_bytes, 0, 8, "router_bytes", err) ||
	    gp_check_num(c->host_op_time, 0, 1, "host_op_time", err) ||
	    gp_check_num(c->cpu_adam_s, 0, 1, "cpu_adam_s", err) ||
	    gp_check_num(c->cpu_step_s, 0, 1, "cpu_step_s", err) ||
	    gp_check_pos(c->capacity, "capacity", err) ||
	    gp_check_tokens(c->mem.seq, "seq", err) ||
	    gp_check_pos(c->mem.seq, "seq", err))
		return GP_EINVAL;
	/* a kernel count: whole, and at least the router's kernels the
	 * dispatchers count already (router_extra_ops prices those beyond) */
	if (c->router_ops != 0.0 &&
	    !(c->router_ops >= MOE_ROUTER_OPS && c->router_ops <= 1000.0 &&
	      c->router_ops == floor(c->router_ops)))
		return gp_fail(err, "train: moe_router_ops must be a whole "
			       "count %g..1000, or 0 for the %g counted (got "
			       "%g)", MOE_ROUTER_OPS, MOE_ROUTER_OPS,
			       c->router_ops);
	if (m->pattern[0] && hybrid_refusal(m, c, err))
		return GP_EINVAL;
	if (c->delayed_update && !c->mem.offload_optimizer &&
	    !c->mem.offload_params)
		/* options that never go together: a usage error, as
		 * offload at zero 0 is (memory_layout.c) */
		return gp_usage(err, "delayed_update delays the offloaded "
			       "optimizer's step: it needs offload "
			       "(optimizer or params+optimizer)");
	return GP_OK;
}

static int check(const gp_model *m, const roof_device *d, const gp_topo *t,
		 const train_cfg *c, gp_error *err)
{
	if (!m || !d || !t || !c)
		return gp_fail(err, "train: missing argument");
	if (model_check(m, err) || roof_device_check(d, err) ||
	    comm_topo_check(t, err))
		return GP_EINVAL;
	return check_cfg(m, d, c, err);
}

/* Take the model, device and topology into the memo: the same as it
 * holds (checked then) or checked now and the memo started over.  The
 * config's own checks are the caller's (check_cfg). */
static int cache_open(train_cache *cc, const gp_model *m,
		      const roof_device *d, const gp_topo *t, gp_error *err)
{
	gp_topo tn;
	int i;

	if (!m || !d || !t)
		return gp_fail(err, "train: missing argument");
	/* The node count only bounds the groups, whose placement is in
	 * the layer key: layouts of different sizes share the memo. */
	tn = *t;
	tn.nodes = 0;
	if (cc->valid && memcmp(&cc->m, m, sizeof cc->m) == 0 &&
	    memcmp(&cc->d, d, sizeof cc->d) == 0 &&
	    memcmp(&cc->t, &tn, sizeof cc->t) == 0) {
		if (t->nodes != cc->checked_nodes) {
			if (comm_topo_check(t, err))
				return GP_EINVAL;
			cc->checked_nodes = t->nodes;
		}
		return GP_OK;
	}
	cc->valid = 0;
	if (model_check(m, err) || roof_device_check(d, err) ||
	    comm_topo_check(t, err))
		return GP_EINVAL;
	memset(cc, 0, sizeof *cc);
	if (model_params(m, &cc->p, err))
		return GP_EINVAL;
	cc->m = *m;
	cc->d = *d;
	cc->t = tn;
	cc->checked_nodes = t->nodes;
	cc->fpt_ctx = -1;
	for (i = 0; i < TRAIN_COLL_N; i++)
		cc->coll[i].time = -1;
	cc->valid = 1;
	return GP_OK;
}

/* The launcher's placement (layout_fill_place), remembered for the last
 * few layouts (a sweep visits each split with many ZeRO stages,
 * micro-batches and recompute policies). */
static int place(const ctx *x, train_cache *cc, int G,
		 gp_group g[GP_GRP_COUNT], gp_error *err)
{
	gp_place_key key;
	int i;

	layout_place_key(&x->y, G, &key);
	key.domain = comm_topo_domain(&x->e.t);
	if (!cc)
		return layout_fill_place(&key, g, err);
	for (i = 0; i < cc->nplace; i++)
		if (memcmp(&cc->place[i].key, &key, sizeof key) == 0) {
			memcpy(g, cc->place[i].g, sizeof cc->place[i].g);
			return GP_OK;
		}
	if (layout_fill_place(&key, g, err))
		return GP_EINVAL;
	i = cc->nplace < TRAIN_PLACE_N ? cc->nplace++ : cc->next_place;
	cc->next_place = (cc->next_place + 1) % TRAIN_PLACE_N;
	cc->place[i].key = key;
	memcpy(cc->place[i].g, g, sizeof cc->place[i].g);
	return GP_OK;
}

/* Micro-batches of micro_batch mb per pipeline per step (the global
 * batch's over dp, else the config's, else 1) into *per_step_out. */
static int micro_per_step(const ctx *xp, const train_cfg *c, double mb,
			  double *per_step_out, unsigned *warn, gp_error *err)
{
	double per_step, call;

	per_step = c->global_batch > 0 ?
		layout_micro_per_step(c->global_batch, xp->y.dp, mb) :
		(c->mem.lay.microbatches > 0 ? c->mem.lay.microbatches : 1.0);
	if (!layout_micro_per_step_ok(per_step))
		return gp_fail(err, "global batch %g is not a multiple of dp "
			       "x micro_batch = %g", c->global_batch,
			       xp->y.dp * mb);
	if (per_step > GP_AMOUNT_MAX)
		return gp_fail(err, "global batch %g is too large",
			       c->global_batch);
	/* (without a pipeline there is no schedule to call: pp 1 takes
	 * it and changes nothing, train.c step_sum) */
	if (c->pp_call_mb > 0 && xp->y.pp > 1 &&
	    fmod(per_step, c->pp_call_mb) != 0)
		return gp_fail(err, "pp_microbatches %d does not divide the "
			       "step's %g micro-batches (global batch / (dp "
			       "x micro_batch)): each pipeline schedule call "
			       "runs pp_microbatches of them", c->pp_call_mb,
			       per_step);
	*per_step_out = per_step;
	/* The schedule's rules hold for the micro-batches of one schedule
	 * call: with pp_microbatches each call is a schedule of its own
	 * (train.c step_sum), so a step of 16 in calls of 2 feeds DualPipe
	 * 2, not 16. */
	call = c->pp_call_mb > 0 && xp->y.pp > 1 ? c->pp_call_mb : per_step;
	if (xp->y.schedule == GP_SCHED_DUALPIPE &&
	    !layout_dualpipe_ok(xp->y.pp, 1, call))
		return gp_fail(err, "dualpipe feeds half the micro-batches "
			       "from each end: it needs an even count of at "
			       "least 2 x pp = %d a %s (DualPipe's num_chunks), "
			       "got %g (%s)", 2 * xp->y.pp,
			       c->pp_call_mb > 0 ? "schedule call" : "step",
			       call, c->pp_call_mb > 0 ? "pp_microbatches" :
			       "global batch / (dp x micro_batch)");
	if (xp->y.schedule == GP_SCHED_INTERLEAVED && xp->y.vpp > 1 &&
	    fmod(call, xp->y.pp) != 0)
		*warn |= TRAIN_WARN_UNEVEN_MB;
	return GP_OK;
}

/* The topology that holds the job (as many nodes as it needs) into
 * xp->e.t, and its groups placed; *warn: TRAIN_WARN_TP_NODES and
 * TRAIN_WARN_EP_NODES when TP or EP leave a node, or 0.  What it reads
 * is the split's (GPUs, TP, PP, CP, ETP, EP) and the topology's. */
static int place_job(ctx *xp, const gp_topo *t, train_cache *cache,
		     gp_group *groups, unsigned *warn, gp_error *err)
{
	double nodes;
	int G;

	/* With a memo, xp is its phase's context, which keeps the memo's
	 * topology from the phase before: cache_open holds one topology per
	 * memo (a different one starts the memo over, topo_kept cleared),
	 * so only its node count is set again -- not 2.7 kB copied each
	 * phase of a sweep. */
	if (cache && cache->topo_kept) {
		xp->e.t.nodes = t->nodes;
	} else {
		xp->e.t = *t;
		if (cache)
			cache->topo_kept = 1;
	}
	G = t->gpus_per_node;
	nodes = ceil(xp->y.gpus / G);
	if (nodes > GP_COUNT_MAX)
		return gp_fail(err, "%g nodes are too many", nodes);
	if (xp->e.t.nodes < nodes)
		xp->e.t.nodes = (int)nodes;
	if (nodes > 1 && xp->e.t.nics == 0)
		return gp_fail(err, "%g GPUs span %g nodes of %d, but the "
			       "system has no NICs", xp->y.gpus, nodes, G);
	if (place(xp, cache, G, groups, err))
		return GP_EINVAL;
	*warn = 0;
	if (groups[GP_GRP_TP].per_node < xp->y.tp)
		*warn |= TRAIN_WARN_TP_NODES;
	if (groups[GP_GRP_EP].per_node < xp->y.ep)
		*warn |= TRAIN_WARN_EP_NODES;
	return GP_OK;
}

/* The routed rows the busiest EP rank receives over the mean, which
 * every MoE layer's experts and exchange wait for (train_layer.c).
 *  - Capacity-bound (capacity_factor > 0, or DeepSpeed's einsum MOELayer,
 *    whose capacity defaults to 1.0): each expert's buffer is padded to
 *    its capacity (Megatron-Core's moe_pad_expert_input_to_capacity,
 *    DeepSpeed's dispatch_mask over C rows) and tokens beyond it are
 *    dropped, so every rank runs capacity_factor times the mean: the
 *    padded buffer, no skew.
 *  - NeMo AutoModel's FakeBalancedGate (moe_gate fake_balanced): token
 *    i of a rank's T goes to experts i top_k .. i top_k + top_k - 1 mod
 *    experts, so each expert gets T top_k / experts of every rank's
 *    tokens: 1, whatever the dropless dispatch.
 *  - Dropless with a learned router (capacity_factor 0: Megatron-Core's default
 *    moe_expert_capacity_factor None, the Hugging Face MoE blocks' loop
 *    over whatever each expert received): with nothing balancing the
 *    router (moe_balance none) the measured no-EPLB spread
 *    (model_ep_skew); balanced, the chance the multinomial routing of
 *    one micro-batch leaves (model_ep_chance_skew) over the tokens the
 *    EP group routes in one layer's pass: each rank's Tn, gathered over
 *    etp where layer_comm gathers them (Te = T etp / tp), times ep.
 * Group-limited routing where the model states it (moe.groups,
 * moe.group_top_k: DeepSeek-V3's config.json "n_group": 8, "topk_group":
 * 4) picks within the chosen groups, which raises a rank's variance a
 * token from 0.236 to 0.284 at EP 32: a skew of 1.0113 -> 1.0124. */
static double train_ep_skew(const train_cfg *c, const ctx *xp)
{
	const gp_model *m = xp->e.m;
	int ep = xp->y.ep, etp = xp->y.etp;
	double g, tokens;

	if (ep <= 1 || m->moe.experts <= 0)
		return 1.0;
	if (c->mem.capacity_factor > 0 || c->mem.moe_einsum)
		return 1.0;
	/* AutoModel's FakeBalancedGate: every expert gets T top_k /
	 * experts of each rank's tokens, no chance in it (train_layer.c
	 * gate_reach) */
	if (c->moe_fake_gate)
		return 1.0;
	if (c->moe_unbalanced)
		return model_ep_skew(m, ep);
	g = etp > 1 && (xp->y.sp || etp > xp->y.tp) ? etp : 1.0;
	tokens = xp->k.Tn * g * ep;
	return model_ep_chance_skew(ep, m->moe.experts,
				    m->moe.top_k > 0 ? m->moe.top_k : 1.0,
				    m->moe.groups, m->moe.group_top_k,
				    tokens);
}

/* The precisions and bytes of a layer's arithmetic and the rest of the
 * layers' memo key (prepare zeroed it), for micro-batch mb. */
static void layer_key(ctx *xp, const roof_device *d, const train_cfg *c,
		      double mb, const gp_group *groups)
{
	xp->k.lin = c->compute;
	xp->k.half = d->peak[GP_BF16] > 0 && d->gemm_frac[GP_BF16] > 0 ?
		GP_BF16 : GP_FP16;
	if (c->compute == GP_FP16 || c->compute == GP_FP32 ||
	    c->compute == GP_TF32)
		xp->k.half = c->compute;
	xp->k.A = c->mem.act_bytes > 0 ? c->mem.act_bytes :
		(c->compute == GP_FP32 || c->compute == GP_TF32 ? 4.0 : 2.0);
	xp->k.wb = c->compute == GP_FP8 ? 1.0 : xp->k.A;
	/* A frozen base: LoRA's, or the whole language model of a
	 * vision-language model's alignment stage (llm_frozen). */
	xp->k.frozen = c->mem.lora_rank > 0 || c->mem.llm_frozen;
	/* An fp8 base held as Transformer Engine's fp8 parameters
	 * (base_fp8_gemm, NeMo's fp8_params) is no dequantised base: the
	 * fp8 GEMM reads its 1-byte weight directly (k.wb 1 under fp8), as
	 * it reads the cached fp8 copy of a 16-bit weight. */
	if (xp->k.frozen && c->mem.base.bits > 0 &&
	    mem_quant_bits(&c->mem.base) < 16 && !c->mem.base_fp8_gemm) {
		xp->k.quant = mem_quant_bits(&c->mem.base);
		xp->k.wb = 2.0;   /* the GEMM reads the dequantised copy */
	}
	xp->k.T = mb * c->mem.seq / xp->y.cp;
	xp->k.Tn = xp->y.sp ? xp->k.T / xp->y.tp : xp->k.T;
	/* The rest of the layers' key (prepare zeroed it). */
	xp->k.seq = c->mem.seq;
	xp->k.attn_seq = c->attn_seq;
	xp->k.micro_batch = c->mem.lay.micro_batch;
	xp->k.capacity_factor = c->mem.capacity_factor;
	xp->k.ep_allgather = c->ep_allgather;
	xp->k.ep_flex = c->ep_flex;
	xp->k.ep_einsum = c->mem.moe_einsum;
	xp->k.ep_hybridep = c->ep_hybridep;
	xp->k.flex_sms = c->ep_flex ? c->flex_sms : 0;
	xp->k.router_ops = c->router_ops;
	xp->k.probs_act = c->mem.probs_in_act;
	xp->k.skew = train_ep_skew(c, xp);
	xp->k.graph_attn = c->graph_attn;
	xp->k.graph_router = c->graph_router;
	xp->k.graph_mamba = c->graph_mamba;
	xp->k.graph_prep = c->graph_prep;
	xp->k.graph_full = c->graph_full;
	xp->k.ep_overlap = train_ep_hides(c, xp->y.schedule,
					  &groups[GP_GRP_EP], xp->y.ep);
	xp->k.fp8_current = c->compute == GP_FP8 && c->fp8_current;
	xp->k.fp8_block = c->compute == GP_FP8 && c->fp8_block;
	xp->k.moe_fp8_copy = c->compute == GP_FP8 && c->moe_fp8_copy;
	xp->k.host_op_time = c->host_op_time;
	xp->k.tp = xp->y.tp;
	xp->k.cp = xp->y.cp;
	xp->k.ep = xp->y.ep;
	xp->k.etp = xp->y.etp;
	xp->k.sp = xp->y.sp;
	xp->k.flash = c->mem.flash;
	xp->k.dropout = c->mem.dropout;
	xp->k.eager = c->eager;
	xp->k.liger = c->liger && c->eager;
	xp->k.fused_norm = c->fused_norm && c->eager;
	xp->k.forward_only = c->forward_only;
	xp->k.ds_hooks = train_ds_hooks_cfg(c) && gathers(xp);
	xp->k.fsdp1_views = c->fsdp && c->mem.fsdp_version == 1 &&
		gathers(xp);
	xp->k.ds_bucket = xp->k.ds_hooks && !xp->k.frozen &&
		!c->forward_only ? c->mem.ds_reduce_bucket : 0.0;
	xp->k.unfused_loss = c->unfused_loss;
	xp->k.mcore_loss = c->mcore_loss;
	xp->k.eager_loss = c->eager_loss && !c->eager;
	xp->k.emb_matmul = c->emb_matmul;
	xp->k.metric_losses = c->forward_only ? 0 : c->metric_losses;
	xp->k.fused_linear_ce = c->mem.fused_linear_ce;
	xp->k.replicated_logits = c->mem.replicated_logits;
	xp->k.kv_repeat = c->mem.kv_repeat;
	xp->k.sac_attn_recompute = c->mem.sac_attn_recompute &&
		c->mem.recompute == GP_RECOMPUTE_OP;
	xp->k.pad_mask = c->pad_mask && c->eager && c->mem.flash;
	xp->k.pad_share = c->eager ? c->pad_share : 0.0;
	xp->k.async_tp = c->async_tp;
	xp->k.tp_input_per_linear = c->tp_input_per_linear;
	xp->k.cp_rotate = xp->y.cp <= 1 ? GP_CP_P2P : c->mem.cp_ulysses ?
		GP_CP_ULYSSES : c->cp_allgather ? GP_CP_ALLGATHER :
		c->cp_alltoall ? GP_CP_ALLTOALL : GP_CP_P2P;
	xp->k.split_proj = c->split_proj;
	xp->k.attn_clamp = c->mem.attn_clamp && c->eager && !c->mem.flash;
	xp->k.softmax16 = !c->mem.eager_softmax && c->eager && !c->mem.flash &&
		xp->k.A < 4.0;
	xp->k.softmax32 = c->mem.eager_softmax && !c->eager &&
		!c->mem.flash && xp->k.A < 4.0;
	xp->k.attn_scale_q = c->attn_scale_q && c->eager && !c->mem.flash;
	xp->k.attn_where = c->attn_where && c->eager && !c->mem.flash;
	xp->k.attn_head_copies = c->eager && !c->mem.flash ?
		c->attn_head_copies : 0;
	xp->k.addmm_bias = c->addmm_bias && c->eager;
	xp->k.unfused_permute = c->unfused_permute;
	xp->k.legacy_permute = c->legacy_permute && !c->eager &&
		!c->ep_flex && !c->ep_allgather;
	xp->k.mxfp8_grouped = c->compute == GP_FP8 && c->fp8_block &&
		!c->eager ? c->mxfp8_grouped : 0;
	xp->k.unfused_act = c->unfused_act && !c->eager;
	xp->k.fa_layout = c->fa_layout && c->te_modules && !c->eager &&
		c->mem.flash;
	/* Megatron-Core's unfused RoPE, or with other fused modules
	 * (gpuplan.train admits stack deepspeed alone: Megatron-DeepSpeed)
	 * theirs, train_layer.c mds_rope_costs */
	xp->k.unfused_rope = c->unfused_rope && !c->eager;
	xp->k.rope_seq_loop = xp->k.unfused_rope && c->te_modules &&
		c->rope_seq_loop;
	xp->k.fused_mlp = c->fused_mlp && c->te_modules && !c->eager &&
		c->compute == GP_FP8 && c->fp8_block;
	xp->k.fp8_attn = c->fp8_attn && c->te_modules && !c->eager &&
		c->compute == GP_FP8;
	xp->k.fp8_attn_sm90 = xp->k.fp8_attn && c->fp8_attn_sm90;
	xp->k.mlp_down_bf16 = c->mlp_down_bf16 && c->compute == GP_FP8;
	xp->k.tp_overlap_fp8_rs = c->tp_overlap_fp8_rs &&
		c->compute == GP_FP8 && c->te_modules && !c->eager;
	xp->k.router_bytes = c->router_bytes;
	xp->k.router_fp64 = c->router_fp64;
	xp->k.fake_gate = c->moe_fake_gate && xp->y.ep > 1 &&
		xp->e.m->moe.experts > 0;
	xp->k.te_modules = c->te_modules && !c->eager;
	xp->k.ub_split = xp->k.sp && xp->k.tp > 1 && xp->k.te_modules;
	xp->k.ub_aggregate = xp->k.ub_split && c->tp_overlap_aggregate;
	xp->k.wacc = train_wgrad_acc(c, xp->k.half);
	xp->k.lora_rank = c->mem.lora_rank;
	xp->k.lora_targets = c->mem.lora_targets;
	xp->k.lora_dropout = c->mem.lora_dropout;
	xp->k.lora_merged = c->lora_merged && c->mem.lora_rank > 0;
	xp->k.recompute = c->mem.recompute;
	/* mlp_act re-runs the activation only where its output was kept
	 * for fc2's backward and dropped (memory_act.c act_mlp): a frozen
	 * fc2 without an adapter reading it keeps none, and re-runs none */
	xp->k.rec_mods = c->mem.recompute_modules &
		~(mem_mlp_down_kept(&c->mem) ? 0u : (unsigned)GP_RECMOD_MLP_ACT);
	xp->k.ckpt_early_stop = c->ckpt_early_stop &&
		c->mem.recompute == GP_RECOMPUTE_FULL;
	xp->k.g_tp = groups[GP_GRP_TP];
	xp->k.g_cp = groups[GP_GRP_CP];
	xp->k.g_ep = groups[GP_GRP_EP];
	xp->k.g_etp = groups[GP_GRP_ETP];
}

/* Megatron-Core's combined 1F1B (ep_overlap) on a Grace host, or with
 * the expert group inside one scale-up domain, hides none of the expert
 * all-to-alls unless a full-iteration graph replays the step.  The
 * overlap splits each layer's forward and backward into
 * schedule nodes that the host runs one by one (model_chunk_schedule_
 * plan.py TransformerLayerSchedulePlan.run: combine backward, the other
 * micro-batch's attention forward, the mlp backward, the dispatch
 * forward, the mlp's weight gradient, ...), each node's backward its
 * own autograd call, and the dropless dispatch's wait for the token
 * counts between them ("HybridEP sizes buffers dynamically (CPU sync in
 * dispatch)", token_dispatcher.py) -- so the host, not the GPU, sets the
 * pace where its ops are slow.  Megatron-LM's account of DeepSeek-V3 on
 * GB200 NVL72 (docs/discussions/deepseek-v3-gb200-optimization, commit
 * cdee7a5, Nov 2025, sec. 3.2): "1F1B AlltoAll overlap is not a free
 * lunch either. It divides the forward and backward into multiple stages
 * for scheduling, and there is some synchronization between different
 * stages, which aggravates the CPU overhead, so the overall benefit is
 * negative on the GB200", with partial CUDA graphs (attention, router,
 * preprocess) on.  A negative benefit is at least none: the step is
 * priced as without the overlap (the CPU overhead beyond that has no
 * figure and is left out, a lower bound).  A Grace host is one whose
 * host_op_time is GP_GRACE_HOST_MIN or more times GP_EAGER_OP_TIME: the
 * GB200 and GB300 NVL72 racks' host_op_scale 2.75, bound 2.0.  An x86
 * host driving Blackwell GPUs (DGX B200 and B300: 1.118, the GPU
 * generation's launch cost, catalog/systems/nvidia-hgx.lua) is not one:
 * its core is the x86 server's.
 * Megatron-LM's Qwen3-235B-A22B recipes show both sides on GB200: the
 * full-iteration graph (no host work in a layer, layer_extras) with the
 * overlap 1208.3 TFLOP/s a GPU, the partial graphs with it 876.2
 * (examples/moe_recipes README, PR #5728).
 *
 * The guide's first reason holds on any host: "thanks to NVL72, EP
 * communication is very fast, and the necessity of overlap is not great"
 * -- the all-to-all on the scale-up links leaves little to hide, and the
 * schedule's CPU overhead is the same.  On x86 DGX B200s (the same host
 * class as the DGX H100 GP_EAGER_OP_TIME is timed on) Megatron-Bridge PR
 * #1760 turned the overlap off for Qwen3-235B-A22B, EP 8 inside each
 * node: "Disable `moe_a2a_overlap` due to CPU overhead for BF16 and
 * MXFP8", "BF16 step time improved from 17.2s to 16s" -- with the overlap
 * the step was 7.5% longer (validation cases mbridge-pr1760-b200-qwen3-
 * 235b-a22b-bf16 and -bf16-a2a-overlap).  Megatron-Bridge's own B300
 * tables agree: the same Qwen3-235B-A22B preset, EP 8 in a node, 2691
 * tokens/s/GPU with moe_a2a_overlap (26.02) and 2644 without (26.02.01),
 * 1.8%.  Where the expert group spans nodes its all-to-all crosses the
 * NICs and the overlap pays: Qwen3-30B-A3B on 16 H100s, EP 16 over two
 * nodes, 41.25 s a step without it and 31.31 s with it (Megatron-Bridge's
 * performance skill; cases mbridge-skill-h100-qwen3-30b-a3b-bf16-
 * alltoall-ep16-overlap-off and -on), Qwen3-235B-A22B on 256 H100s, EP 32,
 * 19.7 s and 17.6 s (cases modelzoo-h100-qwen3-235b-a22b-deepep-ep32 and
 * -1f1b).  So the overlap hides the all-to-alls only of an expert group
 * that spans scale-up domains (the per-node share of its ranks below ep,
 * as placed: train_prep.c place, the TRAIN_WARN_EP_NODES test); inside
 * one it is priced as without it, a lower bound as above.  DualPipe is
 * DeepSeek's own schedule and keeps its pairing. */
int train_ep_hides(const train_cfg *c, int sched, const gp_group *g_ep,
		   int ep)
{
	if (!c->ep_overlap)
		return 0;
	return sched == GP_SCHED_DUALPIPE || c->graph_full ||
		(!(c->host_op_time >= GP_GRACE_HOST_MIN * GP_EAGER_OP_TIME) &&
		 g_ep->per_node < ep);
}

/* Megatron-Core's conditions on overlap_moe_expert_parallel_comm, the
 * combined 1F1B that ep_overlap prices (train_stage.c ep_steady), on
 * the layout: TransformerConfig.__post_init__ (megatron/core/transformer/
 * transformer_config.py at Megatron-LM d98e8a6, Aug 2026) asserts
 *   if self.pipeline_model_parallel_size > 1:
 *     self.virtual_pipeline_model_parallel_size is not None, "If enabling
 *     EP A2A overlap, virtual_pipeline_model_parallel_size must be
 *     specified when pipeline_model_parallel_size > 1"
 *   self.expert_model_parallel_size > 1, "overlap_moe_expert_parallel_
 *     comm is only supported with expert model parallelism"
 *   self.recompute_granularity != 'full', "disable full recomputation
 *     when enabling overlap_moe_expert_parallel_comm" (recompute_method
 *     and recompute_num_layers, recompute_layers here, are full's)
 * and megatron/training/arguments.py sets a virtual size of 1 to None,
 * so pp > 1 needs vpp >= 2.  The job's conditions (a MoE model, the
 * alltoall or flex dispatcher, a bf16 or fp16 model) are gpuplan.train's
 * step_choices; the sweep skips these layouts (sweep.c ok_ep, ok_vpp,
 * sweep_begin's recompute mask).  DualPipe is DeepSeek's own schedule,
 * not Megatron-Core's: none of it applies. */
static int check_ep_overlap(const train_cfg *c, const gp_layout *y,
			    gp_error *err)
{
	if (!c->ep_overlap || y->schedule == GP_SCHED_DUALPIPE)
		return GP_OK;
	if (c->mem.recompute == GP_RECOMPUTE_FULL)
		return gp_usage(err, "recompute full with ep_overlap: "
			       "Megatron-Core refuses it (\"disable full "
			       "recomputation when enabling overlap_moe_"
			       "expert_parallel_comm\"); selective or none "
			       "can run");
	if (y->ep < 2)
		return gp_usage(err, "ep_overlap needs expert parallelism, "
			       "ep >= 2 (got ep %d): Megatron-Core's overlap_"
			       "moe_expert_parallel_comm \"is only supported "
			       "with expert model parallelism\"", y->ep);
	if (y->pp > 1 && y->vpp < 2)
		return gp_usage(err, "ep_overlap at pp %d needs the "
			       "interleaved schedule, vpp >= 2: Megatron-Core "
			       "requires virtual_pipeline_model_parallel_size "
			       "\"when pipeline_model_parallel_size > 1\"",
			       y->pp);
	return GP_OK;
}

/* The fused grouped MLP (fused_grouped_mlp) needs the experts unsplit:
 * Megatron-Core core_v0.18.0 transformer/moe/experts.py
 * _is_fused_impl_supported "if self.tp_group.size() > 1: return False",
 * and with the op fuser on __init__ asserts "Fused GroupedMLP is not
 * supported for this configuration".  gp.train refuses it by name; the
 * sweep skips such layouts (sweep.c ok_etp). */
static int check_fused_mlp(const gp_model *m, const train_cfg *c,
			   const gp_layout *y, gp_error *err)
{
	int etp = y->etp > 0 ? y->etp : y->tp;

	if (!c->fused_mlp || !(m->moe.experts > 0) || etp <= 1)
		return GP_OK;
	return gp_usage(err, "fused_grouped_mlp needs the experts unsplit: "
		       "Megatron-Core refuses it with expert tensor "
		       "parallelism (got etp %d; give etp 1)", etp);
}

/* pad_share is priced in the Hugging Face expert loop with every expert
 * on the rank (train_layer.c hf_expert_stretches, ep 1).  With experts
 * spread over ranks the pads' one set of top-k experts lives on at most
 * K of them, whose load the step does not price: refused, as the sweep
 * skips such layouts (sweep.c ok_ep). */
static int check_pad_share(const gp_model *m, const train_cfg *c,
			   const gp_layout *y, gp_error *err)
{
	if (!(c->pad_share > 0.0) || !(m->moe.experts > 0) || y->ep < 2)
		return GP_OK;
	return gp_fail(err, "pad_share %g with ep %d: the pads' top-k experts "
		       "sit on a few expert-parallel ranks, a load not priced "
		       "(pad_share prices the expert loop of one rank holding "
		       "every expert, ep 1)", c->pad_share, y->ep);
}

/* What every use of a config shares: the checks, the layout and its
 * placement, the precisions, and the two kinds of layer's costs (from
 * the memo when it has them).  Fills ph's context, groups, warnings,
 * state bytes and micro-batches per step.  What the split's phases
 * share (train_phase.h sp_checked, sp_placed) is taken as the phase
 * before left it: the checks that read only the config and the split
 * passed then, and are not made again (the first check that fails is
 * the same: the rest run in their order), the state bytes are the
 * config's, and the placement is the split's. */
static int prepare(const gp_model *m, const roof_device *d,
		   const gp_topo *t, const train_cfg *c, train_cache *cache,
		   phase *ph, gp_error *err)
{
	ctx *xp = &ph->x;
	gp_group *groups = ph->groups;
	unsigned *warn = &ph->warn;
	double mb;
	int checked = ph->sp_checked;

	/* All but the collectives' scratch list, which ncache says how much
	 * of holds anything, the topology (place_job copies the caller's
	 * whole before anything reads it: zeroed first, its 2.7 kB were
	 * written twice a phase) and the device as eager kernels see it
	 * (read only where it is copied whole, below). */
	memset(xp, 0, offsetof(ctx, e.t));
	memset(&xp->e.p, 0, offsetof(ctx, e.cache) - offsetof(ctx, e.p));
	memset(&xp->k, 0, offsetof(ctx, dev) - offsetof(ctx, k));
	*warn = 0;
	xp->e.m = m;
	xp->e.d = d;
	/* Eager PyTorch launches its own memory-bound kernels (ATen's
	 * elementwise, reduction and norm kernels, the loss, the foreach
	 * optimizer): on a device whose catalog entry measured them below
	 * the streaming rate of tuned kernels (achievable.eager.hbm), the
	 * step's memory-bound work streams at that share of it. */
	if (c->eager && d->eager_hbm > 0.0 && d->eager_hbm < 1.0) {
		xp->dev = *d;
		xp->dev.hbm_frac = d->hbm_frac * d->eager_hbm;
		xp->e.d = &xp->dev;
	}
	xp->c = c;
	xp->e.err = err;
	xp->g = groups;
	xp->e.cc = cache;
	if (cache) {
		xp->e.p = cache->p;
		if ((checked ? mem_layout_kept : mem_layout_prepared)(m,
			&xp->e.p, &c->mem, &xp->y, err))
			return GP_EINVAL;
	} else if (mem_layout(m, &c->mem, &xp->y, err) ||
		   model_params(m, &xp->e.p, err)) {
		return GP_EINVAL;
	}
	if (check_ep_overlap(c, &xp->y, err))
		return GP_EINVAL;
	/* The split's and the config's: passed by the split's first
	 * phase. */
	if (!checked) {
		if (check_fused_mlp(m, c, &xp->y, err) ||
		    check_pad_share(m, c, &xp->y, err) ||
		    mem_state_bytes(&c->mem.recipe, &c->mem.optim, &ph->sb,
				    err))
			return GP_EINVAL;
		if (c->mem.seq < xp->y.cp)
			return gp_fail(err, "cp %d is larger than seq %g",
				       xp->y.cp, c->mem.seq);
	}
	if (gp_check_pos(xp->y.micro_batch, "micro_batch", err))
		return GP_EINVAL;
	mb = xp->y.micro_batch;
	if (micro_per_step(xp, c, mb, &ph->per_step, warn, err))
		return GP_EINVAL;
	if (ph->sp_placed) {
		/* The split's topology and groups, as placed (place_job
		 * reads nothing else). */
		*warn |= ph->sp_warn;
	} else {
		if (place_job(xp, t, cache, groups, &ph->sp_warn, err))
			return GP_EINVAL;
		*warn |= ph->sp_warn;
		ph->sp_placed = cache != NULL;
	}
	layer_key(xp, d, c, mb, groups);
	xp->rb = reduce_bytes(c);
	xp->per_step = ph->per_step;
	return GP_OK;
}


/* The stages of a prepared layout: nl layers from its first, the dense
 * ones among them; a middle stage like an earlier middle one (same
 * layers, same dense/MoE mix) costs the same and is counted, not
 * re-priced.  Uniform and balanced splits change the layer count at
 * most twice and the dense share at most twice along the pipeline; the
 * interleaved schedule's chunks (layout_stage_moe) may alternate the
 * mix from rank to rank, but over a handful of mixes.  A record stands
 * for its stage and its repeats: the one before (DualPipe's pairs,
 * train.c stage_rec_of, read them in order) or, with model chunks,
 * any earlier one.  TRAIN_PHASE_STAGES is a wide margin. */
static int phase_stages(phase *ph, gp_error *err)
{
	const ctx *x = &ph->x;
	int k, j, first = 0, nl, nd, best = -1, nx[2] = { 0, 0 };
	int chunks = x->y.schedule == GP_SCHED_INTERLEAVED && x->y.vpp > 1;
	int hy = x->e.m->pattern[0] != 0;
	int list = x->y.balanced == 2;
	/* Any earlier middle record may stand for a stage: with model
	 * chunks, and with a split given stage by stage (its counts may
	 * come back: 3, 2, 3, 2 ...), except under DualPipe, whose pairs
	 * read the records in order (train.c stage_rec_of).  The step sums
	 * each record's time over its repeats and takes the largest
	 * (train.c step_of), in any order. */
	int any = chunks || (list && x->y.schedule != GP_SCHED_DUALPIPE);

	/* The same split as the phase before (a memo's phase, whose model
	 * is the memo's: a new model clears it): its records as they
	 * are. */
	if (ph->rec_pp == x->y.pp && ph->rec_balanced == x->y.balanced &&
	    ph->rec_n0 == x->y.n0 && ph->rec_m == x->y.m &&
	    ph->rec_chunks == (chunks ? x->y.vpp : 1) &&
	    ph->rec_ends == x->y.ends &&
	    /* a list by its entries (the phase's own copy: the layout's
	     * store may be another, or gone) */
	    (!list || (ph->rec_nlist == x->y.stages.n &&
		       memcmp(ph->rec_v, x->y.stages.v,
			      sizeof ph->rec_v[0] *
			      (size_t)x->y.stages.n) == 0)))
		return GP_OK;
	ph->rec_pp = 0;
	ph->nrec = 0;
	ph->kb = 0;
	for (k = 0; k < x->y.pp; k++) {
		stage_rec *r = NULL;

		nl = layout_stage_layers(&x->y, x->e.m->layers, k);
		/* a hybrid stack's kinds: its - layers (nd), M and * */
		if (hy) {
			nd = layout_stage_kind(x->e.m, &x->y, k, nl, '-');
			nx[0] = layout_stage_kind(x->e.m, &x->y, k, nl, 'M');
			nx[1] = layout_stage_kind(x->e.m, &x->y, k, nl, '*');
		} else {
			nd = train_stage_dense(x->e.m, &x->y, k, nl);
		}
		/* a middle stage: an earlier middle record like it */
		for (j = ph->nrec - 1; k > 1 && k < x->y.pp - 1 && j >= 0;
		     j--) {
			stage_rec *q = &ph->rec[j];

			if (q->k >= 1 && q->nl == nl && q->nd == nd &&
			    q->nx[0] == nx[0] && q->nx[1] == nx[1]) {
				r = q;
				break;
			}
			if (!any)
				break;
		}
		if (!r) {
			if (ph->nrec == TRAIN_PHASE_STAGES && list)
				return gp_fail(err, "train: stage_layers gives "
					       "more than %d distinct stages "
					       "(a stage's layers and kinds; "
					       "under DualPipe each stage "
					       "unlike the one before it)",
					       TRAIN_PHASE_STAGES);
			if (ph->nrec == TRAIN_PHASE_STAGES)
				return gp_fail(err, "train: pp %d has more "
					       "than %d distinct stages",
					       x->y.pp, TRAIN_PHASE_STAGES);
			r = &ph->rec[ph->nrec++];
			r->k = k;
			r->first = first;
			r->nl = nl;
			r->nd = nd;
			r->nx[0] = nx[0];
			r->nx[1] = nx[1];
			r->repeat = 0;
		} else {
			r->repeat++;
		}
		/* The bound's stage: the most layers, the first of equals. */
		if (nl > best) {
			best = nl;
			ph->kb = (int)(r - ph->rec);
		}
		first += nl;
	}
	ph->rec_pp = x->y.pp;
	ph->rec_balanced = x->y.balanced;
	ph->rec_n0 = x->y.n0;
	ph->rec_chunks = chunks ? x->y.vpp : 1;
	ph->rec_nlist = 0;
	if (list) {
		ph->rec_nlist = x->y.stages.n;
		memcpy(ph->rec_v, x->y.stages.v,
		       sizeof ph->rec_v[0] * (size_t)x->y.stages.n);
	}
	ph->rec_ends = x->y.ends;
	ph->rec_m = x->y.m;
	return GP_OK;
}

/* The optimizer step's bytes per local trainable parameter.  Memory-
 * bound over the local trainable states: Adam reads and writes the fp32
 * master and both moments, reads the gradient (and zeroes it), writes
 * the 16-bit weights (apex/Megatron multi-tensor fused Adam).  Before
 * it, the gradient norm for clipping reads every gradient once
 * (Megatron clip_grad_norm_fp32, torch clip_grad_norm_).
 *
 * fp16 on the megatron stack adds two things.  Its loss scaler unscales
 * the fp32 main grads in a pass of their own before the norm:
 * _unscale_main_grads_and_check_for_nan runs "torch._amp_foreach_non_
 * finite_check_and_unscale_(main_grads, self.found_inf, self.grad_scaler.
 * inv_scale)" (megatron/optimizer/optimizer.py at Megatron-LM 6985e58,
 * the SC21 scripts' commit; megatron/core/optimizer/optimizer.py keeps
 * it), reading and writing each 4 B: FP16_UNSCALE_BYTES.  And its 16-bit
 * main grads are Megatron-LM's 2021 runs (train_wgrad_acc), whose data-
 * parallel reduction copies the gradients twice around the collective:
 * --DDP-impl local without contiguous buffers (megatron/model/
 * distributed.py allreduce_gradients) does "coalesced =
 * _flatten_dense_tensors(grads)", "coalesced /= ...world_size()" and
 * "buf.copy_(synced)" back, and torch DDP (the PP = 1 runs) the same
 * three: its Reducer copies each gradient into its bucket
 * ("bucket_view.copy_(grad.view({-1}), ...)"), divides the bucket
 * ("replica.contents.div_(process_group_->getSize())") and copies it
 * back after the all-reduce (torch/csrc/distributed/c10d/reducer.cpp,
 * gradient_as_bucket_view off, the PyTorch 1.8 of the scripts'
 * 20.12 container) -- each a read and a write of g: 6 g.
 *
 * Where the fused Adam writes the 16-bit weights, that write is the
 * weights term.  Megatron's own optimizers step only the fp32 master and
 * write the weights in a pass of their own after Adam, which reads the
 * master again (master_copy): Megatron-Core's DistributedOptimizer.
 * _copy_main_params_to_model_params runs "shard_model_param.data.copy_(
 * shard_main_param)" over its shard into the param buffer the all-gather
 * then sends (megatron/core/optimizer/distrib_optimizer.py), and
 * Float16OptimizerWithFloat16Params the same copy with "_multi_tensor_
 * copy_this_to_that(this=main_data, that=model_data, ...)" (megatron/
 * core/optimizer/optimizer.py; megatron/optimizer/optimizer.py at
 * 6985e58): the master's read, sb->master more.  apex's
 * DistributedFusedAdam (NeMo's distributed_fused_adam) has none: its
 * kernel takes the weights' shard as its fifth list (its
 * distributed_adam_cuda extension binds multi_tensor_fused_adam as "CUDA
 * kernels for multi-tensor Adam, with param copy"); nor Transformer Engine's FusedAdam under use_
 * precision_aware_optimizer (it keeps the master and writes the model
 * weights itself). */
#define FP16_UNSCALE_BYTES 8.0
/* optim_loop: the Adam step as transformers' AdamW runs it (v4.12,
 * src/transformers/optimization.py AdamW.step, the Hugging Face Trainer's
 * optimizer of 2021 -- create_optimizer's "optimizer_cls = Adafactor if
 * self.args.adafactor else AdamW"), a Python loop over each group's
 * tensors whose body is seven elementwise kernels:
 *   "exp_avg.mul_(beta1).add_(grad, alpha=(1.0 - beta1))"      2m, 2m + g
 *   "exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1.0 - beta2)"
 *                                                              2v, 2v + g
 *   "denom = exp_avg_sq.sqrt().add_(group["eps"])"        v + d, 2d
 *   "p.data.addcdiv_(exp_avg, denom, value=-step_size)"    2p + m + d
 * (the decay's "p.data.add_(p.data, ...)" only with weight_decay > 0,
 * TrainingArguments' default 0.0), d the new denominator of v's dtype:
 * 2p + 5m + 5v + 4d + 2g, 72 B an element in fp32, where the fused step
 * the other paths price reads p, m, v and g once and writes p, m and v
 * (2p + 2m + 2v + g, 28 B): 3m + 3v + 4d + g more, 44 B.  DeepSpeed
 * hands its client optimizer flat fp32 tensors, one a group, at every
 * stage (DeepSpeed at 9caa74e5, "Autotuning (#1554)": ZeRO 1/2's
 * stage2.py "param_group['params'] =
 * [self.single_partition_of_fp32_groups[i]]", the rank's partition;
 * ZeRO 3's stage3.py "self.optimizer.param_groups[param_group_id]
 * ['params'] = [fp32_param]", a sub-group at a time; ZeRO 0's fp16
 * FP16_Optimizer "param_group['params'] = [self.fp32_groups_flat[i]]"),
 * its gradient the fp32 copy DeepSpeed casts (g of the master's dtype):
 * the loop's launches are seven a group, hidden under kernels of
 * millions of elements, and its cost is these bytes (train.lua refuses
 * the loop off the deepspeed stack, where its per-tensor launches would
 * be the price, and with the step offloaded). */
static double optim_loop_bytes(const train_cfg *c, const gp_state_bytes *sb)
{
	double mv = sb->optimizer / 2.0;
	double g = sb->master > 0 ? sb->master : sb->weights;

	return c->optim_loop ? 3.0 * mv + 3.0 * mv + 4.0 * mv + g : 0.0;
}

static double opt_bytes_of(const train_cfg *c, const gp_state_bytes *sb,
			   int ddp)
{
	double fp16 = ddp && c->compute == GP_FP16 ? FP16_UNSCALE_BYTES : 0.0;
	double loop = optim_loop_bytes(c, sb);

	if (c->eager_optim && c->mem.optim.foreach_adamw) {
		/* torch.optim.AdamW's foreach path (_multi_tensor_adamw,
		 * the default on CUDA) is eight passes, each a kernel over
		 * every tensor: mul_(p) by the decay, lerp_(m, g),
		 * mul_(v), addcmul_(v, g, g), sqrt(v) into a new denom,
		 * div_ and add_ on it, addcdiv_(p, m, denom); torch's
		 * clip_grad_norm_ reads the gradients for their norm and
		 * scales them (read, write).  The parameter p its master
		 * copy when the recipe keeps one (its gradient of its
		 * dtype), m and v the two halves of the states: 4 p + 3 m +
		 * 11 v + 6 g, 96 B per parameter in fp32 against the fused
		 * step's 32 of mixed-16. */
		double p = sb->master > 0 ? sb->master : sb->weights;
		double mv = sb->optimizer / 2.0;

		return 4.0 * p + 3.0 * mv + 11.0 * mv + 6.0 * p;
	}
	double copy = ddp && c->master_copy ? sb->master : 0.0;

	if (ddp && sb->master > 0 && sb->grads < 4.0)
		/* Megatron's optimizers step fp32 copies of 16-bit main
		 * grads: _copy_model_grads_to_main_grads sets
		 * "shard_main_param.grad = shard_model_grad.float()"
		 * (megatron/core/optimizer/distrib_optimizer.py; "main_param.
		 * grad = model_param.main_grad.float()" in optimizer.py's
		 * Float16OptimizerWithFloat16Params), a copy that reads g
		 * and writes 4 B, and the gradient norm and Adam then read
		 * the 4 B copy: g + 4 + 4 + 4, and the buffer's zeros g,
		 * where an fp32 main grad's .float() is the tensor itself
		 * (3 x 4 above).  ddp: that buffer is in use
		 * (train_ddp_buffer); Megatron-FSDP's own copy path is not
		 * read here: it keeps 3 g. */
		return 2.0 * (sb->master + sb->optimizer) + 12.0 +
			2.0 * sb->grads + sb->weights + copy +
			(fp16 > 0 ? fp16 + 6.0 * sb->grads : 0.0) + loop;
	return 2.0 * (sb->master + sb->optimizer) + 3.0 * sb->grads +
		sb->weights + copy + fp16 + loop;
}

/* The config as the phase's key: what the phase does not read cleared. */
static void phase_key(const train_cfg *c, train_cfg *k)
{
	memcpy(k, c, sizeof *k);
	/* The stage stays the ZeRO stage's only through BF16_Optimizer's
	 * per-micro-batch pass and DeepSpeed stage 3's hooks
	 * (train_phase_zero). */
	k->mem.lay.zero = train_phase_zero(c);
	k->tp_overlap = 0;
	k->overlap_grad_reduce = 0;
	/* the stage list by its entries, not where they are stored (the
	 * phase's key_list holds them): the bytes compare its count */
	k->mem.lay.stages.v = NULL;
}

/* c as the phase's key, its stage list copied into the phase, and the
 * layout the phase keeps (x.y) pointed at that copy: the config's store
 * is its caller's (layout.h gp_stage_store), gone or refilled by the
 * next call that reuses the phase. */
static void phase_keep(phase *ph, const train_cfg *c)
{
	const gp_stage_list *sl = &c->mem.lay.stages;

	phase_key(c, &ph->key);
	if (sl->n > 0) {
		memcpy(ph->key_list, sl->v, sizeof *sl->v * (size_t)sl->n);
		if (ph->x.y.stages.v == sl->v)
			ph->x.y.stages.v = ph->key_list;
	}
}

/* What a phase keeps of its split (train_phase.h, the split's fields):
 * nothing, when the split may have moved. */
static void split_clear(phase *ph)
{
	ph->sp_checked = ph->sp_placed = 0;
	memset(ph->sp_post, 0, sizeof ph->sp_post);
	ph->kc_ok = 0;
	ph->ends_ok[0] = ph->ends_ok[1] = 0;
	ph->ends_ag_ok[0] = ph->ends_ag_ok[1] = 0;
	mem_split_forget(&ph->msplit);
}

/* The phase of c: the memo's when it was prepared for a config that
 * differs from c at most in the ZeRO stage and the TP and DP overlaps,
 * else prepared now (into the memo, or into *local without one).  An
 * offloaded config is prepared every time (its checks read the ZeRO
 * stage); so is a ZeRO stage out of range (its error is the check's).
 * split: the caller vouches that c's split, and its config but the
 * layout's other levels, are those of the last config this memo saw
 * (train.h TRAIN_NEXT_SPLIT): what the phase keeps of its split stays. */
int train_phase_get(const gp_model *m, const roof_device *d,
		    const gp_topo *t, const train_cfg *c, train_cache *cache,
		    int taken, int moved, int split, phase *local,
		    phase **php, gp_error *err)
{
	phase *ph = local;
	train_cfg k;
	int zero = c->mem.lay.zero, z, kept;

	if (cache) {
		/* taken: the memo holds m, d and t already (its caller
		 * vouches). */
		if (!(taken && cache->valid) &&
		    cache_open(cache, m, d, t, err))
			return GP_EINVAL;
		ph = &cache->phase;
		/* moved: a level of the phase's key moved (the caller
		 * knows), so it is not the memo's. */
		if (!moved)
			phase_key(c, &k);
		if (!moved && ph->valid && ph->nodes == t->nodes &&
		    zero >= 0 && zero <= 3 &&
		    memcmp(&ph->key, &k, sizeof k) == 0 &&
		    (k.mem.lay.stages.n == 0 ||
		     memcmp(ph->key_list, c->mem.lay.stages.v,
			    sizeof ph->key_list[0] *
			    (size_t)k.mem.lay.stages.n) == 0)) {
			*php = ph;
			return GP_OK;
		}
		ph->valid = 0;
		if (!split)
			split_clear(ph);
		if (!ph->sp_checked && check_cfg(m, d, c, err))
			return GP_EINVAL;
	} else if (check(m, d, t, c, err)) {
		return GP_EINVAL;
	} else {
		ph->rec_pp = 0;   /* a phase of its own: no records yet */
		split_clear(ph);
	}
	/* The config's state and optimizer bytes stay with its checks. */
	kept = ph->sp_checked;
	if (prepare(m, d, t, c, cache, ph, err) ||
	    phase_stages(ph, err))
		return GP_EINVAL;
	ph->sp_checked = cache != NULL;
	ph->post = !(ph->x.k.frozen || c->forward_only);
	ph->dual = ph->x.y.schedule == GP_SCHED_DUALPIPE && ph->x.y.pp > 1;
	ph->tied = ph->x.y.pp > 1 && ph->x.e.p.lm_head == 0 && ph->post;
	ph->act_off = c->mem.act_offload_layers > 0 && !c->forward_only;
	ph->ckpt_off = c->mem.ckpt_offload && !c->forward_only;
	if (!kept) {
		ph->opt_bytes[0] = opt_bytes_of(c, &ph->sb, 0);
		ph->opt_bytes[1] = opt_bytes_of(c, &ph->sb, 1);
	}
	ph->layers_ok = ph->flops_ok = ph->msplit_ok = 0;
	/* kind_colls reads the step's micro-batches when offloaded
	 * (ds_offload_accum): then a phase's own. */
	if (c->mem.offload_optimizer || c->mem.offload_params)
		ph->kc_ok = 0;
	memset(ph->opt_ok, 0, sizeof ph->opt_ok);
	ph->ag_ok = 0;
	ph->sl_ok[0] = ph->sl_ok[1] = 0;
	memset(ph->base_ok, 0, sizeof ph->base_ok);
	ph->tied_ok = 0;
	for (z = 0; z < 5; z++) {
		ph->z[z].mem_ok = ph->z[z].post_ok = ph->z[z].brief_ok = 0;
		ph->z[z].blk_ok[0] = ph->z[z].blk_ok[1] = 0;
		ph->z[z].pd_ok[0] = ph->z[z].pd_ok[1] = ph->z[z].pz_ok = 0;
	}
	if (cache && !c->mem.offload_optimizer && !c->mem.offload_params) {
		phase_keep(ph, c);
		ph->nodes = t->nodes;
		ph->valid = 1;
	}
	*php = ph;
	return GP_OK;
}
