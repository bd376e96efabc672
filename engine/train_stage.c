/*
 * train_stage.c - one pipeline stage per micro-batch: the vision tower,
 * the stage's base costs from its layers (TP, CP, EP and PP
 * collectives, overlap), each layer kind's gradient collectives and
 * the ZeRO-3 / FSDP and DP terms; a phase's stage bases and ZeRO
 * blocks.  The model is described in train.c.
 */
#include "train_int.h"

#include <math.h>
#include <string.h>

/* DeepSpeed's bucket copies and offloaded accumulation (ds_bucket_time,
 * ds_offload_accum) are 0 on most stacks, yet asked for each block of a
 * ZeRO 2/3 phase: inlined, their tests come before their arguments'
 * divisions and no call is made.  The same statements: the same
 * results. */
#if defined(__GNUC__)
#define DS_INLINE static inline __attribute__((always_inline))
#else
#define DS_INLINE static inline
#endif


/* A GEMM of the tower in the 16-bit dtype: forward, and when asked its
 * input gradient (dgrad) and weight gradient (wgrad, into the main
 * grad, train_prep.c train_wgrad_acc) as the language model's GEMMs are
 * priced. */
static void tower_gemm(const ctx *x, double flop, double w, double act,
		       double M, double N, double K, double batch,
		       int dgrad, int wgrad, double *f, double *b)
{
	double bytes = w * 2.0 + act * x->k.A;

	*f += op_time(x, flop, bytes, M, N, K, batch, x->k.half);
	if (dgrad)
		*b += op_time(x, flop, bytes, M, K, N, batch, x->k.half);
	if (wgrad)
		*b += op_time(x, flop, w * x->k.wacc + act * x->k.A, N,
			      K, M, batch, x->k.half);
}

/* The encoder tower on the first stage, one micro-batch (Wang et al.
 * 2024, Qwen2-VL sec. 2.1; Liu et al. 2023, LLaVA sec. 4.1).  Each
 * image -- or slice of temporal_patch video frames, which Qwen2-VL's
 * 3-D patch embedding encodes like one image -- is P patches (its
 * grid, model_vision_patches: more than its tokens where a resampler
 * follows, Qwen-VL's 1024 for 256): a linear
 * patch embedding over 3 x temporal_patch x patch^2 pixel values per
 * patch, every ViT layer with full attention among the image's own
 * patches (the model_layer_ops list of the tower, kv length P, not
 * causal), and the projector that merges merge^2 patches into one LLM
 * token (one GEMM as wide as its parameters).  Priced like the
 * language model's layers: forward; when the tower trains, both
 * backward GEMMs, fused attention backward and the recompute policy's
 * re-run.  A frozen tower fed pixels needs no gradient: forward only;
 * the projector still computes its weight gradient unless the whole
 * base is frozen (LoRA), its input gradient only for a training tower,
 * and the patch embedding never has one (its input is pixels).
 * Megatron shards the encoder over TP like the decoder when its heads
 * allow (else it runs whole on every TP rank, as memory_train.c counts it);
 * each context-parallel rank encodes the images of its chunk. */
static void tower_costs(ctx *x, scost *s)
{
	const gp_model *m = x->e.m;
	const train_cfg *c = x->c;
	gp_model v;
	gp_op ops[GP_MAX_LAYER_OPS];
	gp_op_cfg oc;
	double merge = m->vision.merge > 1 ? m->vision.merge : 1;
	double tokens = model_vision_tokens(m), P = model_vision_patches(m);
	double imgs = c->mem.images * c->mem.lay.micro_batch / x->y.cp;
	double hv = m->vision.hidden, tpt, kin, pk;
	double lf = 0, lb = 0, la = 0, f, b, rec = 0, tpc = 0, pf = 0, pb = 0;
	int fo = c->forward_only;
	/* LoRA freezes the whole base; a frozen language model
	 * (llm_frozen) leaves the projector, and the tower unless it is
	 * frozen too, training. */
	int base_trains = !x->k.frozen || c->mem.llm_frozen;
	int trains = !c->mem.vision_frozen && base_trains && !fo;
	int proj_trains = base_trains && !fo;
	int i, n, vtp;

	model_vision_tower(m, &v);
	vtp = v.heads % x->y.tp == 0 ? x->y.tp : 1;
	memset(&oc, 0, sizeof oc);
	oc.seqs = imgs;
	oc.q = P;
	oc.kv_len = P;
	oc.tp = vtp;
	oc.ep = 1;
	oc.flash = c->mem.flash;
	n = model_layer_ops(&v, &oc, ops);
	for (i = 0; i < n; i++) {
		const gp_op *o = &ops[i];
		double t, bytes;

		switch (o->kind) {
		case GP_OP_GEMM:
			tower_gemm(x, o->flop, o->weights, o->act, o->m, o->n,
				   o->k, o->batch, trains, trains, &lf, &lb);
			break;
		case GP_OP_ATTN:
			la = train_attn_time(&x->e, &x->k, o, 0);
			lf += la;
			if (trains)
				lb += train_attn_time(&x->e, &x->k, o, 1);
			break;
		case GP_OP_ELEM:
			bytes = o->act * x->k.A;
			t = op_time(x, o->flop, bytes, 0, 0, 0, 0, x->k.half);
			lf += t;
			if (trains)
				lb += op_time(x, 2.0 * o->flop, 1.5 * bytes, 0,
					      0, 0, 0, x->k.half);
			break;
		}
	}
	/* Two residual adds per layer: read two P x hidden, write one. */
	lf += 2.0 * mem_time(x, imgs * P * hv * 3.0 * x->k.A);
	if (trains)
		lb += 2.0 * mem_time(x, imgs * P * hv * 2.0 * x->k.A);
	f = v.layers * lf;
	b = v.layers * lb;
	if (trains && c->mem.recompute == GP_RECOMPUTE_FULL)
		rec = f;
	else if (trains && mem_core_attn_recomputed(c->mem.recompute,
						    c->mem.recompute_modules))
		rec = v.layers * la;  /* the tower's core attention, as the
				       * decoder's (memory_stage_act.c) */
	/* Tensor parallelism over the tower: two all-reduces of the
	 * P x hidden activations per layer per pass, again in a full
	 * recompute. */
	if (vtp > 1) {
		double ar = coll(x, GP_ALL_REDUCE, imgs * P * hv * 2.0,
				 &x->g[GP_GRP_TP]);

		tpc = 2.0 * v.layers * ar * (1.0 + (trains ? 1.0 : 0.0) +
			(rec > 0 && c->mem.recompute == GP_RECOMPUTE_FULL ?
			 1.0 : 0.0));
	}
	/* Patch embedding: P x (3 tpt p^2) times (3 tpt p^2) x hidden. */
	tpt = m->vision.temporal_patch > 1 ? m->vision.temporal_patch : 1;
	kin = 3.0 * tpt * (double)m->vision.patch_size * m->vision.patch_size;
	tower_gemm(x, 2.0 * imgs * P * kin * hv, kin * hv, imgs * P *
		   (kin + hv), imgs * P, hv, kin, 1, 0, trains, &pf, &pb);
	/* Projector: tokens x (merge^2 hidden) in, its parameters wide. */
	pk = merge * merge * hv;
	if (m->vision.projector_params > 0)
		tower_gemm(x, 2.0 * imgs * tokens * m->vision.projector_params,
			   m->vision.projector_params, imgs * tokens *
			   (pk + m->vision.projector_params / pk),
			   imgs * tokens, m->vision.projector_params / pk, pk,
			   1, trains, proj_trains, &pf, &pb);
	s->part[TRAIN_COMPUTE] += f + b + pf + pb;
	s->fwd += f + pf;
	s->bwd += b + pb;
	s->part[TRAIN_RECOMPUTE] += rec;
	s->part[TRAIN_TP] += tpc;
	s->vision = f + b + pf + pb + rec + tpc;
	s->vision_patches = imgs * P;
	/* Trainable parameters here (reduced and stepped): the tower when
	 * it trains, the projector unless the base is frozen. */
	s->params += ((!c->mem.vision_frozen && base_trains ?
		       x->e.p.vision - m->vision.projector_params : 0.0) +
		      (base_trains ? m->vision.projector_params : 0.0)) /
		x->y.tp;
}

/* Dense layers of stage k's nl: an MoE model's that are not MoE, over
 * the stage's model chunks (layout_stage_moe), all of a dense one. */
int train_stage_dense(const gp_model *m, const gp_layout *y, int k, int nl)
{
	return nl - layout_stage_moe(m, y, k, nl);
}


/* The share of stage k's nl layers whose forward re-runs: full
 * recompute of the first recompute_layers layers of each model chunk
 * only (Megatron --recompute-method block --recompute-num-layers;
 * layout_stage_recomputed), else all or none. */
static double rec_share(const ctx *x, int k, int nl)
{
	const train_cfg *c = x->c;
	double full = c->mem.recompute == GP_RECOMPUTE_FULL &&
		!c->forward_only;

	if (full && c->mem.recompute_layers > 0 && nl > 0)
		return (double)layout_stage_recomputed(&x->y, x->e.m->layers,
			k, nl, c->mem.recompute_layers) / nl;
	return full;
}

/* A collective of n layers exposed per pass beyond the window it
 * overlaps with when on (overlap_at, the compute under it slowed by
 * slow), else all of it, into part k of s and what it hides into hidden
 * k: fwd in the forward window fwin, run again by the recomputed share
 * rec of forwards, bwd in the backward's bwin. */
static inline void pass_overlap(scost *s, int k, double n, double fwd,
				double fwin, double bwd, double bwin, int on,
				double rec, double slow)
{
	double h = 0, e;

	e = overlap_at(fwd, fwin, on, slow, &h);
	e *= 1.0 + rec;
	h *= 1.0 + rec;
	e += overlap_at(bwd, bwin, on, slow, &h);
	s->part[k] += n * e;
	s->hidden[k] += n * h;
}

/* The share of a stage's micro-batch chunks whose expert all-to-alls run
 * under the other micro-batch's compute with ep_overlap: Megatron-Core's
 * combined 1F1B overlaps a forward with a backward only in the steady
 * state.  Without pipelining (combined_1f1b_schedule_for_no_pipelining)
 * "the forward step for the first microbatch is executed alone, no a2a
 * overlapping", and the last backward so too: 1 of m each way.  With
 * the interleaved schedule (which the overlap requires at pp > 1:
 * "virtual_pipeline_model_parallel_size must be specified") stage k runs
 * its warmup forwards and cooldown backwards alone, (pp - k - 1) x 2 +
 * (vpp - 1) x pp + 1 of its m x vpp chunks ("we schedule one extra
 * micro-batch forward step before the 1f1b stages"; schedules.py
 * get_pp_rank_microbatches, microbatch_group_size_per_vp_stage = pp).
 * DualPipe prices its own pairing. */
static double ep_steady(const ctx *x, int k)
{
	double v = x->y.schedule == GP_SCHED_INTERLEAVED ? x->y.vpp : 1.0;
	double n = x->per_step * v, w;

	if (x->y.schedule == GP_SCHED_DUALPIPE)
		return 1.0;
	w = x->y.pp <= 1 ? 1.0 :
		2.0 * (x->y.pp - k - 1) + (v - 1.0) * x->y.pp + 1.0;
	return n > w ? 1.0 - w / n : 0.0;
}

/* The slowdown of the compute beside the expert all-to-alls that
 * ep_overlap hides.  The alltoall dispatcher's are NCCL all-to-alls
 * (torch.distributed.all_to_all_single), whose kernel runs one CTA on
 * each of the node's p2p channels, GP_NCCL_P2P_CHANNELS (comm.h) of them
 * while it moves MB-sized chunks to every peer; the layer's GEMMs and
 * attention beside it have the other SMs, so a second of compute under
 * it takes sms / (sms - 32): 32 / (132 - 32) = 0.32 more on an H100,
 * 32 / (148 - 32) = 0.276 on a B200, where the measured average over all
 * overlapped collectives is OVERLAP_SLOWDOWN (0.189).  The serving model
 * slows SGLang's single-batch overlap by the same rule (serve_step.c).
 * At 64 SMs or fewer the channels would take half the GPU or more: the
 * slowdown stops at 1, where hiding gains nothing.  The flex dispatcher's
 * kernels hold the SMs its backend is given the same way, moe_flex_sms
 * (Megatron-Core's moe_flex_dispatcher_num_sms, which moe_deepep_num_sms
 * and moe_hybridep_num_sms route to): by default DeepEP's 20
 * (transformer_config.py: "historical default 20") and HybridEP's 8
 * across nodes, 24 in one (DeepEP/hybrid-ep csrc/hybrid_ep/config.cuh
 * "(num_of_nodes == 1) ? 24 : 8"); Megatron-Bridge's perf scripts give
 * HybridEP 32 (_set_common_perf_overrides): 32 / (132 - 32) = 0.32 on an
 * H100.  DualPipe pairs DeepEP's kernels on 20 SMs (DeepSeek-V3 report,
 * sec. 3.2.2) and keeps the measured average. */
#define FLEX_SMS_DEEPEP 20.0          /* Megatron-Core: "historical default 20" */
#define FLEX_SMS_HYBRIDEP_NODE 24.0   /* config.cuh: one node 24 */
#define FLEX_SMS_HYBRIDEP_NODES 8.0   /* config.cuh: across nodes 8 */

static double ep_slowdown(const ctx *x)
{
	const train_cfg *c = x->c;
	double sms = x->e.d->sms, ch = GP_NCCL_P2P_CHANNELS;

	if (c->ep_flex && x->y.schedule != GP_SCHED_DUALPIPE && sms > 0) {
		const gp_group *g = &x->g[GP_GRP_EP];

		ch = c->flex_sms > 0 ? c->flex_sms :
			!c->ep_hybridep ? FLEX_SMS_DEEPEP :
			g->per_node > 0 && g->per_node < g->ranks ?
			FLEX_SMS_HYBRIDEP_NODES : FLEX_SMS_HYBRIDEP_NODE;
		return sms > 2.0 * ch ? ch / (sms - ch) : 1.0;
	}
	if (c->ep_flex || c->ep_allgather ||
	    x->y.schedule == GP_SCHED_DUALPIPE || !(sms > 0))
		return OVERLAP_SLOWDOWN;
	return sms > 2.0 * ch ? ch / (sms - ch) : 1.0;
}

/* The most of the expert all-to-all ep_overlap hides with one hardware
 * queue (CUDA_DEVICE_MAX_CONNECTIONS=1).  Megatron-Core's combined 1F1B
 * (models/common/model_chunk_schedule_plan.py TransformerLayerSchedulePlan
 * .run) puts a layer's all-to-alls on a communication stream beside the
 * other micro-batch's compute -- "comm_stream: combine_bwd | dispatch_fwd
 * ->dispatch_bwd | combine_fwd; comp_stream: pre_dispatch_fwd | mlp_bwd->
 * mlp_bwd_dw->mlp_fwd | pre_dispatch_bwd" -- and one queue runs the
 * streams' kernels in their launch order, so a kernel waiting on the
 * other stream holds every kernel behind it: the combines still start
 * beside the attention launched after them, the dispatches wait behind
 * the expert compute their data does not need.  Its MoE README makes
 * "CUDA_DEVICE_MAX_CONNECTIONS > 1" a requirement of the overlap, and
 * Megatron-LM PR #6311 measured it (DeepSeek-V3 proxy, 64 H100s, TP1 PP4
 * EP16): overlap over the same recompute 191.1 against 184.2 TFLOP/s
 * with 1 connection, 198.5 with 32 -- "the overlap gain reads as +3.7%
 * instead of +7.8%".  Those are throughput gains; the time hidden is the
 * step time saved: 1 - 184.2 / 191.1 = 3.61% of the no-overlap step with
 * one connection, 1 - 184.2 / 198.5 = 7.20% with 32, so one queue hides
 * 0.501 of what more connections hide (the ratio of the gains, 3.7 / 7.8
 * = 0.474, is not a ratio of times).  DualPipe (DeepSeek's own schedule)
 * is not Megatron's and keeps its pairing. */
#define EP_OVERLAP_ONE_QUEUE ((1.0 - 184.2 / 191.1) / (1.0 - 184.2 / 198.5))

/* Each kind's layers on stage r (dense, MoE; a hybrid stack's -, E, M
 * and *, train_phase.h stage_rec nd and nx): multi-token prediction:
 * Megatron-Core builds the MTP block on the last pipeline stage
 * (gpt_model.py: "if self.mtp_process" from mtp_on_this_rank, the
 * post-process stage; Megatron-Bridge's DeepSeek-V3 pipeline layouts end
 * in ["decoder", "mtp", "loss"]), each module one transformer layer of
 * the model's last kind -- Megatron-Bridge's flop_utils.py
 * "num_moe_layers += last_layer_is_moe * mtp_num_layers" -- priced as the
 * stage's own layers (compute, recompute, TP, EP), its norms, eh_proj and
 * second head in stage_base. */
static void stage_counts(const ctx *x, const stage_rec *r, double cnt[4])
{
	const train_cfg *c = x->c;

	cnt[0] = r->nd;
	cnt[1] = r->nl - r->nd - r->nx[0] - r->nx[1];
	cnt[2] = r->nx[0];
	cnt[3] = r->nx[1];
	if (r->k == x->y.pp - 1 && c->mem.mtp_layers > 0)
		cnt[model_moe_in(x->e.m, x->e.m->layers - 1, 1) > 0 ?
		    1 : 0] +=
			c->mem.mtp_layers;
}

/* The share of the TP collectives the recomputed forward runs again:
 * recompute op (act.c) keeps reduce_scatter_tensor's outputs: with SP
 * the forward's all-gathers (half its TP traffic) run again; without,
 * its all-reduces, which the list does not hold.  rec: rec_share. */
static double tp_rec(const train_cfg *c, double rec)
{
	if (c->mem.recompute == GP_RECOMPUTE_OP && !c->forward_only)
		return c->mem.lay.sp ? 0.5 : 1.0;
	return rec;
}

/* TP of n layers like l: exposed per pass beyond the GEMMs it overlaps
 * with (Userbuffers), else all of it; the recomputed forward runs its
 * collectives again.  Reads the layer's TP costs, c's TP overlap,
 * recompute, forward_only and SP, and tprec (tp_rec). */
static void tp_kind(const train_cfg *c, const train_lcost *l, double n,
		    double tprec, scost *s)
{
	if (c->tp_overlap && l->tps_on) {
		/* PyTorch's async TP, each collective under its own
		 * matmuls (train_layer.c symm_tp); the recomputed forward
		 * runs them again, only its all-gathers under recompute
		 * op with SP (tprec) */
		int ago = c->mem.recompute == GP_RECOMPUTE_OP &&
			!c->forward_only && c->mem.lay.sp;

		s->part[TRAIN_TP] += n * (l->tps_f + l->tps_b +
			(ago ? l->tps_fag : tprec * l->tps_f));
		s->hidden[TRAIN_TP] += n * (l->tps_hf + l->tps_hb +
			(ago ? l->tps_hfag : tprec * l->tps_hf));
	} else {
		pass_overlap(s, TRAIN_TP, n, c->tp_overlap ? l->tp_fwd_ub :
			     l->tp_fwd, l->fwd.gemm,
			     c->tp_overlap ? l->tp_bwd_ub : l->tp_bwd,
			     l->bwd.gemm, c->tp_overlap,
			     tprec, OVERLAP_SLOWDOWN);
	}
}

/* Delayed scaling's amax reduction, one micro-batch of a stage: the
 * seconds its blocking all-reduces add.  Megatron-Core wraps each model
 * chunk's TransformerBlock forward in one fp8_autocast whose fp8_group is
 * the tensor-, data- and context-parallel ranks of the stage
 * (transformer_block.py core_r0.9.0: "fp8_group = parallel_state.
 * get_amax_reduction_group(with_context_parallel=True, ...)",
 * _TENSOR_AND_DATA_PARALLEL_GROUP_WITH_CP).  Transformer Engine reduces
 * the amaxes of every fp8 tensor the rank holds over that group once on
 * leaving the autocast (fp8.py v1.9 fp8_autocast_exit ->
 * reduce_and_update_fp8_tensors(forward=True)) and once in the backward
 * of the chunk's first fp8 module (linear.py: ctx.reduce_and_update_bwd_
 * fp8_tensors from is_first_fp8_module, then reduce_and_update_fp8_
 * tensors(forward=False)), each "torch.distributed.all_reduce(tensor,
 * op=torch.distributed.ReduceOp.MAX, group=group, async_op=False)"
 * (reduce_tensor_across_group_op_max): the compute stream waits for it.
 * The buffer is a few amaxes per linear, 4 B each (scaling_fwd: input,
 * weight, output; scaling_bwd: two), priced at AMAX_PER_LINEAR = 3 + 2
 * in each pass and 4 linears a layer (qkv, proj, fc1, fc2; a MoE layer's
 * per-expert GEMMs are not counted apart) over the stage's layers (an
 * interleaved chunk's reduction too), so it is the collective's latency
 * over the group's nodes.  Current and block scaling take each scale
 * from the tensor itself and run no such reduction (their casts carry
 * their own amax pass, train_layer.c).  One per chunk per pass: the
 * stage's v chunks each forward and backward a micro-batch.  Whether a
 * recomputed forward reduces again is not priced (the exit reduces only
 * "if enabled and cls.FP8_AUTOCAST_DEPTH == 0 and not _graph and
 * torch.is_grad_enabled()", and where a checkpoint re-enters the autocast
 * is the stack's).  Booked as tp_comm: the collective spans the TP group
 * with the data-parallel replicas. */
#define AMAX_PER_LINEAR 5.0
static double amax_reduce(ctx *x, const scost *s)
{
	const train_cfg *c = x->c;
	const gp_group *tpg = &x->g[GP_GRP_TP], *dg = &x->g[GP_GRP_DPCP];
	gp_group g;
	double v, bytes;

	if (x->k.lin != GP_FP8 || x->k.fp8_current || x->k.fp8_block ||
	    !x->k.te_modules || x->k.eager)
		return 0.0;
	g.ranks = tpg->ranks * dg->ranks;
	if (g.ranks <= 1)
		return 0.0;
	/* Megatron's rank order puts a stage's TP, CP and DP ranks
	 * together: the group fills its nodes (layout.h) */
	g.per_node = tpg->per_node * dg->per_node;
	if (g.per_node > g.ranks)
		g.per_node = g.ranks;
	g.nodes = (g.ranks + g.per_node - 1) / g.per_node;
	g.sharing = 1;
	v = x->y.schedule == GP_SCHED_INTERLEAVED ? x->y.vpp : 1.0;
	bytes = 4.0 * AMAX_PER_LINEAR * 4.0 * (s->layers > 0 ? s->layers : 1);
	return (c->forward_only ? 1.0 : 2.0) * v *
		coll(x, GP_ALL_REDUCE, bytes, &g);
}

/* What a stage costs one micro-batch before the ZeRO terms: compute,
 * recompute, the TP, CP, EP and PP communication, its ends and its
 * weights (zero_block adds the rest).  None of it depends on the DP
 * overlap, nor on the ZeRO stage but for BF16_Optimizer's pass over the
 * stage's gradients (train_hp_acc; phase_key keeps it apart); of the
 * overlaps, TP's is read here. */
static void stage_base(ctx *x, const train_lcost *ld, const train_lcost *lm,
		       const train_lcost *const *x_lx, const stage_rec *r,
		       scost *s)
{
	const gp_model *m = x->e.m;
	const train_cfg *c = x->c;
	int i, k = r->k, nl = r->nl;
	double hid = m->hidden, tp = x->y.tp;
	const train_lcost *L[4];
	double cnt[4], rec, rec_ep, tprec, es = ep_steady(x, k);
	double eps = ep_slowdown(x), fw, bw;
	int oneq = c->cuda_connections == 1 &&
		x->y.schedule != GP_SCHED_DUALPIPE;
	/* ep_overlap, unless a Grace host's CPU overhead eats it or the
	 * expert group stays inside one scale-up domain (train_prep.c
	 * train_ep_hides) */
	int hides = train_ep_hides(c, x->y.schedule, &x->g[GP_GRP_EP],
				   x->y.ep);

	memset(s, 0, sizeof *s);
	s->layers = nl;
	L[0] = ld;
	L[1] = lm;
	L[2] = x_lx[0];
	L[3] = x_lx[1];
	stage_counts(x, r, cnt);
	rec = rec_share(x, k, nl);
	tprec = tp_rec(c, rec);
	/* recompute_modules "moe" re-runs the MoE block's forward, its
	 * dispatch and combine all-to-alls with it: MoELayer's
	 * custom_forward calls self.dispatch and self.combine inside the
	 * checkpoint (megatron/core/transformer/moe/moe_layer.py), so
	 * every MoE layer's forward EP traffic runs twice (a layer with
	 * no experts has none).  Megatron-Core reads the module under
	 * the selective granularity only (act.c), not under full, which
	 * re-runs it anyway. */
	rec_ep = !c->forward_only && c->mem.recompute != GP_RECOMPUTE_FULL &&
		(c->mem.recompute_modules & GP_RECMOD_MOE) ? 1.0 : rec;
	for (i = 0; i < (L[2] ? 4 : 2); i++) {
		const train_lcost *l = L[i];
		double n = cnt[i];

		if (n <= 0)
			continue;
		s->part[TRAIN_COMPUTE] += n * (l->fwd.t + l->bwd.t);
		s->fwd += n * l->fwd.t;
		s->bwd += n * l->bwd.t;
		s->lfwd += n * l->fwd.t;
		s->lbwd += n * l->bwd.t;
		s->part[TRAIN_RECOMPUTE] += n * (rec * l->rec_full + l->rec_sel);
		/* Userbuffers run the overlapped GEMMs split (train_layer.c
		 * ub_chunks), the recomputed forward's too. */
		if (c->tp_overlap) {
			s->part[TRAIN_COMPUTE] += n * (l->ub_fwd + l->ub_bwd);
			s->fwd += n * l->ub_fwd;
			s->bwd += n * l->ub_bwd;
			s->lfwd += n * l->ub_fwd;
			s->lbwd += n * l->ub_bwd;
			s->part[TRAIN_RECOMPUTE] += n * rec * l->ub_fwd;
		}
		/* TP: exposed per pass beyond the GEMMs it overlaps with
		 * (Userbuffers), else all of it; the recomputed forward
		 * runs its collectives again. */
		tp_kind(c, l, n, tprec, s);
		s->part[TRAIN_CP] += n * (l->cp_fwd * (1.0 + rec) +
					  l->cp_bwd + l->cp_slow *
					  l->cp_hid);
		s->hidden[TRAIN_CP] += n * l->cp_hid;
		/* EP: exposed beyond the layer's compute in the share
		 * ep_steady of the chunks, whole in the rest.  The window
		 * is the layer's whole forward (backward) compute, so
		 * Megatron-Core's delay_wgrad_compute is priced as
		 * ep_overlap alone: it moves where in the layer's
		 * backward an all-to-all starts, not the compute beside
		 * it ("Delay the weight gradient computation to improve
		 * batch-level communication overlapping",
		 * model_parallel_config.py; only with
		 * overlap_moe_expert_parallel_comm, transformer_config.py).
		 * Transformer Engine's layers then leave the weight
		 * gradient to a backward_dw call, which
		 * TransformerLayerSchedulePlan.run (model_chunk_schedule_
		 * plan.py) makes after the mlp's data gradient and the
		 * dispatch forward's launch -- "mlp_bwd->mlp_bwd_dw->
		 * mlp_fwd" -- so the dispatch backward, which needs only
		 * the data gradient, starts under the experts' weight
		 * GEMMs instead of after them; the first layer's
		 * attention wgrad is left to run under the pipeline's
		 * sends.  Measured, it is small: Megatron-Bridge's
		 * Qwen3-30B-A3B smoke on 16 H100s, 31.31 s a step with EP
		 * overlap and 31.20 s with delay_wgrad_compute too (0.35%;
		 * validation case notes). */
		fw = l->fwd.t;
		bw = l->bwd.t;
		if (oneq) {
			fw = fmin(fw, EP_OVERLAP_ONE_QUEUE * l->ep_fwd);
			bw = fmin(bw, EP_OVERLAP_ONE_QUEUE * l->ep_bwd);
		}
		if (hides && es < 1.0) {
			pass_overlap(s, TRAIN_EP, n * es, l->ep_fwd, fw,
				     l->ep_bwd, bw, 1, rec_ep, eps);
			pass_overlap(s, TRAIN_EP, n * (1.0 - es), l->ep_fwd,
				     fw, l->ep_bwd, bw, 0, rec_ep, eps);
		} else {
			pass_overlap(s, TRAIN_EP, n, l->ep_fwd, fw,
				     l->ep_bwd, bw, hides, rec_ep, eps);
		}
		s->params += n * l->params;
		s->eparams += n * l->eparams;
		s->linw += n * l->linw;
	}
	/* First stage: the embedding (train_ends_costs) and the vision tower. */
	if (k == 0) {
		s->part[TRAIN_COMPUTE] += ld->emb;
		s->part[TRAIN_TP] += ld->emb_tp;
		s->params += (x->e.p.embedding) / tp;
		s->tail = x->e.p.embedding / tp;
		if (c->mem.images > 0 && m->vision.layers > 0)
			tower_costs(x, s);
	}
	/* Last stage: the head (train_ends_costs) and the output layer's (or
	 * the tied embedding copy's) weights. */
	if (k == x->y.pp - 1) {
		s->part[TRAIN_COMPUTE] += ld->head_f + ld->head_b;
		s->fwd += ld->head_f;
		s->bwd += ld->head_b;
		s->part[TRAIN_TP] += ld->head_tp;
		s->params += (x->e.p.lm_head > 0 ? x->e.p.lm_head :
			      (x->y.pp > 1 ? x->e.p.embedding : 0.0)) / tp;
		/* The MTP modules' own work beside their layers
		 * (train_ends_costs) and their eh_proj weights, 2h x h
		 * split over TP; the embedding and head are shared. */
		s->part[TRAIN_COMPUTE] += c->mem.mtp_layers *
			(ld->mtp_f + ld->mtp_b);
		s->fwd += c->mem.mtp_layers * ld->mtp_f;
		s->bwd += c->mem.mtp_layers * ld->mtp_b;
		s->part[TRAIN_TP] += c->mem.mtp_layers * ld->head_tp;
		s->params += c->mem.mtp_layers * 2.0 * hid * hid / tp;
	}
	/* BF16_Optimizer folds each micro-batch's bf16 gradients into its
	 * fp32 buffers after the backward (train_hp_acc): a memory-bound
	 * pass over every parameter the stage holds, the tied embedding's
	 * copy on the last stage included (DeepSpeed's pipeline keeps one
	 * on each end). */
	if (train_hp_acc(c)) {
		double t = mem_time(x, BF16_HP_ACC_BYTES * s->params);

		s->part[TRAIN_COMPUTE] += t;
		s->bwd += t;
	}
	/* Pipeline: each of the v chunks of the stage receives its input
	 * and sends its output forward, and the gradients back: the
	 * activations T x hid in 16 bits, split over TP (Megatron's
	 * scatter/gather: each TP rank sends its 1/t and the receivers
	 * all-gather over NVLink; with SP they are split already). */
	if (x->y.pp > 1) {
		double v = x->y.schedule == GP_SCHED_INTERLEAVED ?
			x->y.vpp : 1.0, all;

		if (!x->pp_ok) {
			x->pp_sr = coll(x, GP_SEND_RECV,
					x->k.T * hid * 2.0 / tp,
					&x->g[GP_GRP_PP]);
			x->pp_gat = x->y.sp ? 0.0 :
				coll(x, GP_ALL_GATHER, x->k.T * hid * 2.0,
				     &x->g[GP_GRP_TP]);
			x->pp_ok = !x->e.bad;
		}
		/* DeepSpeed's pipeline engine (its only PP; the
		 * deepspeed stack) sends one way at a time: each step of
		 * its TrainSchedule (deepspeed/runtime/pipe/schedule.py)
		 * receives the activation and then sends the gradient
		 * (a forward step) or sends the activation and then
		 * receives the gradient (a backward step), each a blocking
		 * p2p.send / p2p.recv the neighbour's matching step
		 * answers in the same order, and the compute waits for
		 * both -- four transfers a micro-batch one after the
		 * other, where Megatron's 1F1B pairs each send with the
		 * opposite receive in one batched exchange
		 * (send_forward_recv_backward), two.  An event
		 * simulation of that schedule (12 stages, 128
		 * micro-batches, forward 1, backward 3, each transfer c)
		 * lengthens the step by 3.8c a micro-batch slot.  The
		 * all-gather of the partitioned tensor (pipe_partitioned,
		 * PartitionedTensor.full) stays once per tensor. */
		double sends = c->ds_buckets && !c->forward_only ? 2.0 : 1.0;

		all = (c->forward_only ? 1.0 : 2.0) * v * (sends * x->pp_sr +
							   x->pp_gat);

		/* Megatron-Core's 1F1B overlaps no pipeline send, whatever
		 * the flag: "if config.overlap_p2p_comm: raise ValueError(
		 * "Non-interleaved pipeline parallelism does not support
		 * overlapping p2p communication")" (pipeline_parallel/
		 * schedules.py forward_backward_pipelining_without_
		 * interleaving, core_r0.8.0 to 2026), and Megatron-LM's
		 * arguments.py turns it off there ("Overlap P2P
		 * communication is disabled if not using the interleaved
		 * schedule"): send_forward_recv_backward waits on its
		 * batched exchange.  So a plan's or a job's 1F1B layouts
		 * on the megatron stack (te_modules) expose their sends as
		 * gp.train's default does (gpuplan.train step_choices;
		 * train_int.h p2p_hides). */
		s->part[TRAIN_PP] += overlap(all, s->fwd + s->bwd,
					     p2p_hides(c, x),
					     &s->hidden[TRAIN_PP]);
	}
	s->part[TRAIN_TP] += amax_reduce(x, s);
}

double train_zero_coll_of(ctx *x, gp_coll op, double bytes, int expert)
{
	const gp_group *g = &x->g[expert ? GP_GRP_EDP : GP_GRP_DPCP];
	double sh = expert ? x->y.eshard : x->y.shard, G, pn;
	gp_group in, across;
	double t;

	if (x->y.hsdp == 0 || sh >= g->ranks)
		return coll(x, op, bytes, g);
	/* An all-reduce of whole gradients spans every replica: InternEvo's
	 * Hybrid Zero reduces each gradient bucket with reduce_tensor(...,
	 * dst_rank=None, parallel_mode=ParallelMode.DATA) -- "If dst_rank
	 * is None, all-reduce will be used" -- over the whole data-parallel
	 * group, its zero1 group only holding the optimizer's shards
	 * (internlm/solver/optimizer/hybrid_zero_optim.py _reduce_and_copy,
	 * utils.py reduce_tensor); DeepSpeed's use_multi_rank_bucket_
	 * allreduce likewise over its dp group. */
	if (op == GP_ALL_REDUCE)
		return coll(x, op, bytes, g);
	/* PyTorch FSDP HYBRID_SHARD (torch/distributed/fsdp/
	 * _runtime_utils.py _reduce_grad): the gather and the reduce-
	 * scatter run on the shard group; the reduce-scattered shard is
	 * then all-reduced on the replicate group, which holds the same
	 * shard index of every shard group.  FSDP2 HSDP on a 2-D
	 * (replicate, shard) mesh of any shard size does the same
	 * (torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py
	 * foreach_reduce: reduce-scatter on the shard group, then
	 * "all_reduce_group" on the replicate group), as do DeepSpeed's
	 * MiCS (mics_shard_size: gather and reduce-scatter in the shard
	 * group, an all-reduce across the replication groups) and
	 * InternEvo's broadcast of each owner's updated shard in its zero1
	 * group (the gather's bytes).  Placed on the launcher's nodes: the
	 * pn ranks of the dense (expert) group a node holds split into
	 * pn / sh shard groups when the group fits in a node, each GPU of
	 * the node then in a replicate group with pn / sh of its ranks
	 * there; a shard group larger than a node spans sh / pn nodes of
	 * pn ranks and its replicate groups hold one rank a node. */
	G = fmin(x->y.gpus, x->e.t.gpus_per_node);
	pn = g->per_node > 0 ? g->per_node : 1;
	in.nodes = across.nodes = 0;
	in.ranks = (int)sh;
	in.per_node = (int)fmin(sh, pn);
	in.sharing = (int)(G / in.per_node);
	across.ranks = (int)(g->ranks / sh);
	across.per_node = (int)fmax(1.0, floor(pn / sh));
	across.sharing = (int)(G / across.per_node);
	/* The launcher's nodes (layout_fill_place: g->nodes, pn the
	 * fewest of the group's ranks on one of them): where every node
	 * of the group holds a whole shard group (pn >= sh), each
	 * replicate group has a rank on each of those nodes -- floor(pn /
	 * sh) on the fullest-cut one -- so it spans g->nodes, and each of
	 * the node's g->sharing groups splits into sh replicate groups.
	 * Without the nodes, 12 ranks filling 8 + 4 on nodes of 8 at
	 * shard groups of 2 read as replicate groups of 6 in equal shares
	 * of 2, "needs 3 nodes", where ranks 0, 2, 4, 6 | 8, 10 span the
	 * job's 2 (verl's fsdp_size 2 mesh, fsdp_workers.py
	 * create_device_mesh: mesh_shape (world_size // fsdp_size,
	 * fsdp_size), the ddp dimension its replicate groups).  On whole
	 * nodes in equal shares g->nodes = ranks / pn and g->sharing = G
	 * / pn: the same groups as the lines above. */
	if (g->nodes > 0 && pn >= sh) {
		across.nodes = g->nodes;
		across.sharing = (int)fmax(1.0, g->sharing * sh);
	}
	t = coll(x, op, bytes, &in);
	if (op == GP_REDUCE_SCATTER)
		t += coll(x, GP_ALL_REDUCE, bytes / sh, &across);
	return t;
}

/* DeepSpeed's stage 2 reduction of `elems` gradient elements, beside
 * the collective itself: the passes over them the optimizer makes on
 * the GPU each micro-batch (deepspeed/runtime/zero/stage_1_and_2.py,
 * contiguous_gradients on -- its default -- and gradients partitioned,
 * so reduced at every micro-batch).  Each gradient's hook copies it
 * into the reduce bucket (reduce_independent_p_g_buckets_and_remove_grads:
 * "new_grad_tensor.copy_(grad_reduc.view(-1))", read and write);
 * average_tensor divides the bucket by the DP size in place
 * ("tensor.div_(dist.get_world_size(...))", read and write); with
 * use_multi_rank_bucket_allreduce (zero_allreduce: v0.12.4 on, PR #4695)
 * allreduce_bucket flattens the bucket's slices into a new tensor
 * before the all-reduce ("tensor = self.flatten(bucket)", read and
 * write) and copies this rank's slices back ("buf.copy_(synced)"), where
 * v0.12.3 and before reduced each rank's slice in place
 * ("dist.reduce(grad_slice, ...)" on a narrow view: no copy);
 * reduce_ipg_grads then copies this rank's share into its partition
 * (copy_grads_in_partition).  In the bucket's dtype, the reduction's
 * (communication_data_type: the 16-bit model's own unless set).  Under
 * overlap_comm the division, flatten and collective run on the
 * reduction stream (average_tensor "with stream(self.reduction_stream)")
 * and are counted with the collective; the hook's copy into the bucket
 * stays on the compute stream, counted with them all the same.  Stage 1
 * reduces only at the step's last micro-batch, its flat bucket's passes
 * priced with the step's reduction (train.c ds_flat_passes). */
DS_INLINE double ds_bucket_time(ctx *x, double elems)
{
	double sh = x->y.shard, passes;

	if (!x->c->ds_buckets || x->y.zero != 2 || x->c->fsdp ||
	    elems <= 0 || sh <= 1.0)
		return 0.0;
	/* copy in, divide; flatten and the slices back; the partition's
	 * copy -- each a read and a write of rb bytes an element */
	passes = 2.0 + (x->c->zero_allreduce ? 1.0 + 1.0 / sh : 0.0) +
		1.0 / sh;
	return mem_time(x, passes * 2.0 * elems * x->rb);
}

/* The ZeRO-3 / FSDP collectives of one layer of a kind: the gather of
 * its 16-bit weights and the reduce-scatter of its gradients over the
 * sharding groups (the same in every stage, ZeRO stage and overlap).
 * nccl-tests convention: the all-gather's bytes are the whole buffer
 * after it, the layer's 16-bit slice on this TP/EP rank. */
/* DeepSpeed's stage 2 with the optimizer offloaded and gradients
 * accumulated over micro-batches (deepspeed/runtime/zero/stage_1_and_2.py
 * v0.12.6, copy_grads_in_partition -> async_accumulate_grad_in_cpu_via_gpu,
 * "if self.micro_step_id > 0: accumulate_gradients()" and "if not
 * self.is_gradient_accumulation_boundary: copy_gradients_to_cpu()"): the
 * running sum of the rank's partition lives in host memory in the
 * parameter's dtype (its host buffer is "torch.zeros(param.numel(),
 * dtype=param.dtype, device=self.device)"), the GPU partition's dtype
 * under ZeRO-Offload: the recipe's offload bytes (2 for a 16-bit model,
 * 4 for fp32); each micro-batch after the first copies it up into a GPU
 * buffer and adds the new gradient, each but the last copies the sum
 * back down, on the stream of the bucket's reduction and after it.  A
 * partition parameter moves those bytes up and down again (g - 1) / g
 * of the micro-batches on average over g; the last micro-batch's fp32
 * copy down is the step's
 * (train.c offload_step).  Stage 1 reduces at the boundary only, and
 * one micro-batch a step accumulates nothing.
 *
 * Stage 3 keeps its running sum on the host too, and moves it in every
 * micro-batch, the first included (deepspeed/runtime/zero/stage3.py
 * v0.13.5, the version OpenRLHF's requirements.txt pins at 391e1de4, and
 * unchanged to v0.16.6): with the optimizer offloaded "self.device = ...
 * OffloadDeviceEnum.cpu" and grad_partitions_flat_buffer, the
 * partition's accumulator, is "torch.zeros(sum(p.partition_numel() ...),
 * dtype=self.gradient_accumulation_dtype, device=self.device)" (the
 * model's 16 bits under ZeRO: engine.py get_data_types).  partition_grads,
 * on the reduce-and-partition stream after each bucket's reduce-scatter,
 * copies the first micro-batch's partition down ("grad_buffer.copy_(
 * grad_partition, non_blocking=True)") and back up ("grad_buffer =
 * grad_buffer.to(grad_partition.device, non_blocking=True)"), and each
 * later one up, adds and down again ("if dst is CPU, copy first to src
 * device, do the addition there, then move back to dst. adding directly
 * to cpu is very slow"): the partition's bytes up and down in every
 * micro-batch; the boundary's fp32 copy down is the step's (offload_step).
 * A ds_config's "data_types": {"grad_accum_dtype": "fp32"} makes that
 * buffer fp32 (engine.py get_data_types; gp.train's grad_accum_dtype,
 * mem.ds_accum_bytes), 4 B each way; OpenRLHF's get_train_ds_config sets
 * it (predict/rl.lua PROFILES.openrlhf).  Stage 2's host buffer keeps the
 * parameter's dtype whatever the config says.
 * Seconds for n of the rank's partition parameters over its host link. */
DS_INLINE double ds_offload_accum(const ctx *x, double n)
{
	double g = x->per_step;

	if (x->y.zero < 2 || x->c->fsdp || !x->c->mem.offload_optimizer ||
	    x->c->forward_only || !(n > 0))
		return 0.0;
	if (x->y.zero == 3)
		return n * 2.0 * (x->c->mem.ds_accum_bytes > 0 ?
				  x->c->mem.ds_accum_bytes :
				  x->c->mem.recipe.offload) / host_link_bw(x);
	if (!(g > 1.0))
		return 0.0;
	return n * 2.0 * x->c->mem.recipe.offload * (g - 1.0) / g /
		host_link_bw(x);
}

/* DeepSpeed's gradient buckets (stage_1_and_2.py and stage3.py
 * reduce_independent_p_g_buckets_and_remove_grads, v0.14.2): each
 * gradient joins the open bucket, and the bucket is reduced first when
 * it would pass reduce_bucket_size S -- "if self.elements_in_ipg_bucket +
 * param.ds_numel > self.reduce_bucket_size and self.elements_in_ipg_
 * bucket > 0: ... self.__reduce_and_partition_ipg_grads()" (stage 3;
 * stage 2 the same test) -- so a weight larger than S goes alone, whole,
 * and smaller ones share buckets across layers.  The collectives one
 * layer issues, over k groups of cnt[i] weights of w[i] elements each
 * in the order the backward produces them: the buckets it closes, and
 * the open one's share of S (the next layer's gradients fill it). */
double train_ds_layer_buckets(double S, const double *w, const double *cnt,
			      int k)
{
	double n = 0.0, fill = 0.0, j;
	int i;

	for (i = 0; i < k; i++) {
		if (!(w[i] > 0))
			continue;
		for (j = 0; j < cnt[i]; j += 1.0) {
			if (fill > 0 && fill + w[i] > S) {
				n += 1.0;
				fill = 0.0;
			}
			fill += w[i];
		}
	}
	return n + (fill >= S ? 1.0 : fill / S);
}

/* The reduction of one layer's gradients in DeepSpeed's buckets
 * (train_ds_layer_buckets) at stages 2 and 3: n collectives of the layer's
 * bytes / n each, where one per layer was priced -- latency-bound
 * messages when reduce_bucket_size is small or the group wide, fewer
 * launches when a bucket spans layers.  The layer's weights on this GPU:
 * the dense MLP's matrices (gated: gate, up and down) of h x ffn / tp
 * each, the rest of the dense part as attention's q, k, v and o in four
 * equal parts (a MoE layer's router and shared experts ride with them);
 * the routed experts' matrices of h x expert ffn / etp each, reduced over
 * the expert data-parallel group in buckets of their own (DeepSpeed
 * keeps expert parameters in separate groups).  rs: the collective;
 * frozen: the adapters' elements alone (LoRA), one weight a layer. */
static double ds_reduce_time(ctx *x, const train_lcost *l, gp_coll rs,
			     double adapters)
{
	const gp_model *m = x->e.m;
	double S = x->c->mem.ds_reduce_bucket, t = 0, n;
	double dense = l->params - l->eparams, h = m->hidden;
	double nmat = m->ffn_gated ? 3.0 : 2.0, w[2], cnt[2];
	/* A bucket fills at most with the stage's gradients: the
	 * backward's end reduces what it holds (stage3.py
	 * "__reduce_and_partition_ipg_grads" at the end of the backward;
	 * stage 2's reduce_ipg_grads likewise), so a bucket larger than the
	 * stage's layers carries them in one collective a micro-batch. */
	double nl = ceil((double)m->layers / (x->y.pp > 0 ? x->y.pp : 1));
	double all = (adapters >= 0 ? adapters : l->params) * (nl > 1 ? nl :
							       1.0);

	if (S > all && all > 0)
		S = all;
	if (adapters >= 0) {
		w[0] = adapters;
		cnt[0] = 1.0;
		n = train_ds_layer_buckets(S, w, cnt, 1);
		return n > 0 ? n * train_zero_coll(x, rs, adapters * x->rb /
						    n, 0) : 0.0;
	}
	if (dense > 0) {
		double ffn = l->eparams <= 0 ? (m->moe.experts > 0 &&
			m->moe.dense_ffn_hidden > 0 ?
			m->moe.dense_ffn_hidden : m->ffn_hidden) : 0.0;
		double mlp = nmat * h * ffn / x->y.tp;

		if (!(mlp < dense))
			mlp = 0.0;
		w[0] = mlp / nmat;
		cnt[0] = mlp > 0 ? nmat : 0.0;
		w[1] = (dense - mlp) / 4.0;
		cnt[1] = 4.0;
		n = train_ds_layer_buckets(S, w, cnt, 2);
		if (n > 0)
			t += n * train_zero_coll(x, rs, dense * x->rb / n, 0);
	}
	if (l->eparams > 0) {
		double etp = x->y.etp > 0 ? x->y.etp : x->y.tp;
		double we = h * (m->moe.ffn_hidden > 0 ? m->moe.ffn_hidden :
				 m->ffn_hidden) / etp;

		w[0] = we;
		cnt[0] = we > 0 ? floor(l->eparams / we + 0.5) : 0.0;
		if (!(cnt[0] >= 1.0)) {
			w[0] = l->eparams;
			cnt[0] = 1.0;
		}
		n = train_ds_layer_buckets(S, w, cnt, 1);
		if (n > 0)
			t += n * train_zero_coll(x, rs, l->eparams * x->rb /
						 n, 1);
	}
	return t;
}

/* DeepSpeed's engine reduces in its own buckets (ds_reduce_time). */
static int ds_bucketed(const ctx *x)
{
	return x->c->mem.ds_zero && !x->c->fsdp && x->y.zero >= 2;
}

static void kind_colls(ctx *x, const train_lcost *l, double kc[2])
{
	double dense = l->params - l->eparams;
	/* A frozen base (LoRA) is sharded and gathered as a trained one
	 * is: DeepSpeed's ZeRO-3 partitions every parameter of the module
	 * it wraps, requires_grad or not (stage3.py: the engine's
	 * parameters, frozen ones included, go to zero.Init's partitioner),
	 * and FSDP flattens and shards a unit's frozen weights with the rest
	 * (use_orig_params); the memory side divides the base by the shard
	 * count the same way (memory_train.c stage_lora).  Its bytes: 16
	 * bits a weight, or a quantised base's own bits. */
	double wb = x->k.frozen && x->k.quant > 0 ? x->k.quant / 8.0 : 2.0;
	gp_coll rs;

	kc[0] = train_zero_coll(x, GP_ALL_GATHER, dense * wb, 0) +
		train_zero_coll(x, GP_ALL_GATHER, l->eparams * wb, 1);
	/* Offloaded parameters (ZeRO-Infinity, Rajbhandari et al. 2021
	 * sec. 5; DeepSpeed offload_param): each rank first copies its
	 * 16-bit partition of the layer up from the host over its PCIe
	 * link, for the forward and again for the backward, ahead of the
	 * gather (prefetched like it). */
	if (x->c->mem.offload_params)
		kc[0] += (dense / x->y.shard + l->eparams / x->y.eshard) *
			2.0 / host_link_bw(x);
	/* DeepSpeed's stage 1 and 2 (deepspeed/runtime/zero/
	 * stage_1_and_2.py average_tensor): with use_multi_rank_bucket_
	 * allreduce, on by default ("Combine the reduce buckets of the
	 * different ranks and do an All-Reduce instead of multiple Reduce
	 * ops", zero/config.py), each bucket is all-reduced over the DP
	 * group (allreduce_and_scatter) and every rank keeps only its
	 * own slice: the all-reduce's 2 (n-1)/n of the bytes where a
	 * reduce-scatter sends (n-1)/n. */
	rs = x->c->zero_allreduce ? GP_ALL_REDUCE : GP_REDUCE_SCATTER;
	if (x->k.frozen) {
		/* Only the adapters have gradients: a layer's share of
		 * them (mem_lora_params over the model's layers). */
		const gp_model *m = x->e.m;
		double ad = mem_lora_params(m, x->c->mem.lora_rank,
					    x->c->mem.lora_targets) /
			((double)m->layers + m->encoder_layers) / x->y.tp;

		kc[1] = (ds_bucketed(x) ? (ad > 0 ? ds_reduce_time(x, l, rs,
			ad) : 0.0) : train_zero_coll(x, rs, (ad > 0 ? ad :
			0.0) * x->rb, 0)) + ds_bucket_time(x, ad);
		return;
	}
	kc[1] = (ds_bucketed(x) ? ds_reduce_time(x, l, rs, -1.0) :
		 train_zero_coll(x, rs, dense * x->rb, 0) +
		 train_zero_coll(x, rs, l->eparams * x->rb, 1)) +
		ds_bucket_time(x, dense + l->eparams) +
		ds_offload_accum(x, dense / x->y.shard +
				 l->eparams / x->y.eshard);
}


/* DeepSpeed ZeRO stage 3 as released in early 2021 (v0.3.x,
 * zero3_per_param): one dense layer's collectives and host gaps for
 * one pass, none of them under compute.  deepspeed/runtime/zero/
 * partition_parameters.py _allgather_param gathers each parameter on
 * its own into a buffer it zero-fills first ("flat_tensor =
 * torch.zeros(aligned_param_size, ...)": the parameter's 16-bit bytes
 * written once), after a torch.cuda.synchronize(); stage3.py
 * fetch_sub_module (_synchronize_communication) synchronizes again at
 * every submodule while a gather is in flight, so the gathers run one
 * after another with the GPU drained at each submodule.  The tensors
 * of a dense layer on this TP rank: the norms' tensors (model_layer_
 * norm_tensors; q_norm and k_norm under qk_norm, priced at hidden
 * elements as the rest), the qkv, output, MLP-in (two when gated) and
 * MLP-out weights, their biases (linear_bias; qkv_bias).  Each weight's
 * gather carries its share of the layer's 16-bit bytes (GEMM shapes
 * h x (q+2kv), q x h, h x f [x2], f x h), each norm or bias vector is
 * priced at hidden elements (latency-bound: a few KiB per rank at any
 * DP width).  _allgather_param hands torch.distributed.all_gather a
 * list of one view per rank; PyTorch's ProcessGroupNCCL::allgather
 * gathers a list into a flat buffer and then copies it out one tensor
 * at a time ("Copy the flattened output tensors to the outputs":
 * outputTensors[i][j].copy_), one kernel launched from the host per
 * rank of the group, each launch the device's `launch` (catalog
 * launch_overhead), and the layer's gathered bytes read and written
 * once more at the streaming rate -- before the next synchronize.
 * The gradients go the same way back: partition_parameters.py
 * _reduce_scatter_gradient hands torch.distributed.reduce_scatter a
 * list of one view of the gradient per rank, and ProcessGroupNCCL::
 * reduce_scatter flattens it first ("Copy the input tensors to the
 * flattened inputs": inputFlattened[i][j].copy_, one launch per rank)
 * -- the same launches and a read and write of the layer's gradient
 * bytes in the reduction's dtype.
 * g[0]: s of the layer's gathers with their copies; g[1]: s of its
 * gradient reduce-scatters (one per parameter, in the reduction's
 * dtype) with theirs; g[2]: the submodules that own parameters (one
 * host gap each). */
static void per_param_colls(ctx *x, const train_lcost *l, double g[3])
{
	const gp_model *m = x->e.m;
	double h = m->hidden, hd = m->head_dim > 0 ? m->head_dim :
		h / m->heads;
	double q = m->heads * hd, kv = m->kv_heads * hd, f = m->ffn_hidden;
	double w[5], sum, dense = l->params - l->eparams, vec, launches, bw;
	int nw = m->ffn_gated ? 5 : 4, i;
	double nvec = model_layer_norm_tensors(m);
	const roof_device *d = x->e.d;

	w[0] = h * (q + 2.0 * kv);
	w[1] = q * h;
	w[2] = h * f;
	w[3] = f * h;
	w[4] = h * f;            /* the gate of a gated MLP */
	for (sum = 0, i = 0; i < nw; i++)
		sum += w[i];
	if (m->linear_bias)
		nvec += nw;
	else if (m->qkv_bias)
		nvec += 1.0;
	vec = h / x->y.tp;
	g[0] = g[1] = 0;
	for (i = 0; i < nw; i++) {
		g[0] += train_zero_coll(x, GP_ALL_GATHER,
					dense * w[i] / sum * 2.0, 0);
		g[1] += train_zero_coll(x, GP_REDUCE_SCATTER,
					dense * w[i] / sum * x->rb, 0);
	}
	g[0] += nvec * train_zero_coll(x, GP_ALL_GATHER, vec * 2.0, 0);
	g[1] += nvec * train_zero_coll(x, GP_REDUCE_SCATTER, vec * x->rb, 0);
	if (l->eparams > 0) {    /* routed experts: one gather each way */
		g[0] += train_zero_coll(x, GP_ALL_GATHER, l->eparams * 2.0, 1);
		g[1] += train_zero_coll(x, GP_REDUCE_SCATTER,
					l->eparams * x->rb, 1);
	}
	/* The copies out of each dense tensor's flat buffer and into it
	 * (the routed experts' single collectives likewise): a launch a
	 * rank, the bytes read and written once; the gather's zero fill
	 * writes them once more. */
	launches = ((nw + nvec) * x->y.shard +
		    (l->eparams > 0 ? x->y.eshard : 0.0)) * d->launch;
	bw = d->mem_bw * d->hbm_frac;
	g[0] += launches + 3.0 * (dense + l->eparams) * 2.0 / bw;
	g[1] += launches + 2.0 * (dense + l->eparams) * x->rb / bw;
	/* the norms (model_layer_norm_modules) and the linears */
	g[2] = model_layer_norm_modules(m) + nw;
}

/* DeepSpeed's stage 3 under full recompute: the share of a layer's
 * weights its recompute forward releases, so that the backward gathers
 * them again.  A submodule's parameters are kept after its forward only
 * when the trace reuses them within stage3_max_reuse_distance gathered
 * elements (default 1e9: deepspeed/runtime/zero/config.py; v0.3.13
 * stage3.py _keep_for_later, "reuse_distance_in_numel <
 * self.max_reuse_distance_in_numel"; v0.16 partitioned_param_coordinator.py
 * __params_to_release).  In the recompute forward a weight's next use is
 * its backward, after the layer's later weights have been used once in
 * the forward and once in the backward: a distance of twice their
 * elements.  The weights in forward order: the Hugging Face modules' q,
 * k, v, o, then gate and up (or the one MLP input) and down; Megatron's
 * (zero3_per_param) fused qkv, dense, h->4h, 4h->h.  A layer with experts
 * on the Hugging Face modules runs, after attention, its router's gate
 * and then the experts one at a time in a Python loop (transformers'
 * MixtralSparseMoeBlock.forward, "for expert_idx in
 * range(self.num_experts)", copied by the other models' blocks): each
 * expert's w1 and w3 (the gated expert's gate and up; one input
 * otherwise), then its w2 -- MixtralBlockSparseTop2MLP's
 * "self.act_fn(self.w1(hidden_states)) * self.w3(hidden_states)", then
 * "self.w2(...)" --, the shared experts after the routed ones
 * (Qwen2MoeSparseMoeBlock's shared_expert, DeepseekV3MoE's
 * shared_experts, each after its experts' loop); the backward visits them
 * in reverse.  Megatron's fused layers with experts: 0 (their order is
 * not taken here). */
#define DS_MAX_REUSE 1e9

/* n weights of wi elements each, the next ones in reverse forward order:
 * those whose later weights reach half DS_MAX_REUSE are released (into
 * *out); all of them join *later and *tot. */
static void reuse_run(double n, double wi, double *later, double *out,
		      double *tot)
{
	double kept = 0.0;

	if (!(n > 0) || !(wi > 0))
		return;
	/* weight j (0 first) is kept while 2 (later + j wi) < the limit */
	if (2.0 * *later < DS_MAX_REUSE) {
		kept = ceil((0.5 * DS_MAX_REUSE - *later) / wi);
		if (kept > n)
			kept = n;
	}
	*out += (n - kept) * wi;
	*later += n * wi;
	*tot += n * wi;
}

static double reuse_regather(const ctx *x, const train_lcost *l, int fused)
{
	const gp_model *m = x->e.m;
	double h = m->hidden, hd = m->head_dim > 0 ? m->head_dim :
		h / m->heads;
	double q = m->heads * hd, kv = m->kv_heads * hd, f = m->ffn_hidden;
	double tp = x->y.tp, later = 0, tot = 0, out = 0;
	double nin = m->ffn_gated ? 2.0 : 1.0;  /* an MLP's input weights */

	if (l->eparams > 0) {
		double etp = x->y.etp > 0 ? x->y.etp : tp;
		double ep = x->y.ep > 0 ? x->y.ep : 1.0;
		double fs = model_shared_ffn(m), fe = m->moe.ffn_hidden;
		double ns = m->moe.shared_experts;

		if (fused)
			return 0.0;
		/* the shared experts (down, then the inputs), the local
		 * routed experts from the last (each its w2, then w3 and
		 * w1), the router's gate */
		reuse_run(ns * (1.0 + nin), h * fs / etp, &later, &out,
			  &tot);
		reuse_run(m->moe.experts / ep * (1.0 + nin), h * fe / etp,
			  &later, &out, &tot);
		reuse_run(1.0, h * m->moe.experts, &later, &out, &tot);
	} else {
		/* down, then up and gate (or the fused h->4h) */
		reuse_run(1.0, f * h / tp, &later, &out, &tot);
		if (fused)
			reuse_run(1.0, nin * h * f / tp, &later, &out, &tot);
		else
			reuse_run(nin, h * f / tp, &later, &out, &tot);
	}
	/* o, then v, k, q (or the fused qkv) */
	reuse_run(1.0, q * h / tp, &later, &out, &tot);
	if (fused) {
		reuse_run(1.0, h * (q + 2.0 * kv) / tp, &later, &out, &tot);
	} else {
		reuse_run(2.0, h * kv / tp, &later, &out, &tot);
		reuse_run(1.0, h * q / tp, &later, &out, &tot);
	}
	return tot > 0 ? out / tot : 0.0;
}

/* zero_block's terms under zero3_per_param (per_param_colls): every
 * micro-batch gathers each layer for its forward and again for its
 * backward -- under full recompute the recompute forward's hooks
 * gather it (released after the forward) and the backward reuses that
 * gather (stage3_max_reuse_distance) -- all exposed; the gradients'
 * reduce-scatters run under that layer's backward only (the next
 * submodule's synchronize waits for them).  Each submodule's
 * synchronize leaves the GPU idle while the host runs its hooks and
 * launches its first kernel: one host_op_time per submodule per pass
 * (forward, backward, and the recompute forward under full
 * recompute).
 * It reads overlap_grad_reduce alone: train_int.h block_set keys the
 * blocks by it here. */
static void per_param_block(ctx *x, const train_lcost *l, double n,
			    double z[TRAIN_ZB_N])
{
	const train_cfg *c = x->c;
	double g[3], passes, hd = 0, eb;

	per_param_colls(x, l, g);
	passes = c->forward_only ? 1.0 :
		2.0 + (c->mem.recompute == GP_RECOMPUTE_FULL);
	z[TRAIN_ZB_ZERO] += n * (g[0] + passes * g[2] * x->k.host_op_time);
	if (c->forward_only)
		return;
	z[TRAIN_ZB_ZERO] += n * g[0] *
		(1.0 + (c->mem.recompute == GP_RECOMPUTE_FULL ?
			reuse_regather(x, l, 1) : 0.0));
	eb = c->mem.grads_whole ? 0.0 : overlap(g[1], l->bwd.t,
		c->overlap_grad_reduce, &hd);
	z[TRAIN_ZB_DP] += n * eb;
	z[TRAIN_ZB_DP_HID] += n * hd;
}


/* Whether the backward's ZeRO-3 / FSDP collectives run under the
 * backward's compute.  FSDP's backward gathers are issued by its own
 * backward prefetch (backward_prefetch) and its reduce-scatters after
 * each unit's gradients, none of them by the forward's gather: under
 * FSDP the backward follows overlap_grad_reduce alone ("the DP gradient
 * reduction under backward"), overlap_param_gather being the forward's
 * ("the ZeRO parameter all-gather under forward").  Elsewhere (DeepSpeed
 * stage 3, Megatron's distributed optimizer) either flag puts it there.
 * train_int.h block_set keys the ZeRO blocks by what this reads. */
static int fsdp_bwd_overlap(const train_cfg *c)
{
	return c->fsdp ? c->overlap_grad_reduce :
		c->overlap_param_gather || c->overlap_grad_reduce;
}

/* The forward compute a layer's gather can hide under.  FSDP without
 * forward prefetch (Accelerate's "fsdp_forward_prefetch: false", the
 * FullyShardedDataParallel default forward_prefetch=False; FSDP2's
 * implicit prefetch alike) issues a unit's all-gather from the host at
 * that unit's pre-forward hook, on its own stream
 * (torch/distributed/fsdp/_runtime_utils.py _pre_forward_unshard ->
 * _unshard "with state._device_handle.stream(unshard_stream)"), and the
 * host gets there while the previous unit's kernels still run on the
 * GPU: the rate limiter (limit_all_gathers, default True: _unshard's
 * "state._free_event_queue.dequeue_if_needed()" with
 * _FreeEventQueue's limit of 2) lets two gathers be in flight before
 * the host waits for a freed one.  So the gather hides under the
 * previous layer's forward only as far as the host is ahead of it: all
 * of it when the forward never waits for the GPU on the host, only what
 * the GPU has left after the host's last wait in the layer (fwd_tail,
 * the Hugging Face MoE loop's torch.nonzero) when it does. */
static double fsdp_fwd_window(const ctx *x, const train_lcost *l)
{
	return x->c->fsdp && l->fwd_sync ? l->fwd_tail : l->fwd.t;
}

/* DeepSpeed's stage 3 with stage3_prefetch_bucket_size 0: its
 * coordinator gathers no parameter ahead of use
 * (partitioned_param_coordinator.py fetch_sub_module, v0.14.2: "if
 * self.__prefetch_bucket_sz > 0:" guards the prefetch of the next
 * modules' parameters; the current module's are gathered and waited
 * on -- "self.__inflight_param_registry.pop(param).wait()" and
 * "current_stream().wait_stream(self.__allgather_stream)" -- before its
 * forward or backward runs), so no gather can run under compute,
 * whatever overlap_param_gather says.  The same with
 * stage3_max_live_parameters 0: the prefetch asks for
 * "min(self.__max_n_available_params - self.__n_available_params,
 * self.__prefetch_bucket_sz)" elements, never above 0 then, and its loop
 * runs only "while ... numel_prefetching < max_params_to_prefetch". */
static int ds_no_prefetch(const ctx *x)
{
	return x->c->mem.ds_zero && !x->c->fsdp && x->y.zero == 3 &&
		!(x->c->mem.ds_prefetch_bucket > 0 &&
		  x->c->mem.ds_max_live > 0);
}

/* DeepSpeed's stage 3 backward beside its compute, with overlap_comm
 * (v0.13.5): the parameter gathers run on their own stream
 * (parameter_offload.py: "self.__allgather_stream = ... Stream() if
 * overlap_comm else ... default_stream()"; partitioned_param_coordinator.py
 * fetch_sub_module issues all_gather_coalesced "with get_accelerator().
 * stream(self.__allgather_stream)"), the gradient reduce-scatters and
 * partition_grads on another (stage3.py: "self.reduce_and_partition_stream
 * = ... Stream() if overlap_comm else ... default_stream()",
 * __reduce_and_partition_ipg_grads "with get_accelerator().stream(self.
 * reduce_and_partition_stream)").  Gathers and reduce-scatters cross the
 * same GPU links, so their bytes add (b); but an offloaded optimizer's
 * accumulator copies (ds_offload_accum), on the reduce stream after
 * their bucket's reduce-scatter, cross the host link, and run while the
 * gather stream moves the next layers' weights: the layer's side work is
 * the longer of the links' chains, gathers + reduce-scatter on the GPU
 * links and reduce-scatter + copies on the reduce stream.  b: the layer's
 * backward side work summed; rsw: its reduction, copies included.  It
 * reads overlap_grad_reduce alone where an optimizer is offloaded (else
 * ds_offload_accum is 0 and b returns): train_int.h block_set keys the
 * blocks by it there. */
static double ds_side_streams(const ctx *x, const train_lcost *l, double b,
			      double rsw)
{
	double acc;

	if (x->y.zero != 3 || x->c->fsdp || !x->c->overlap_grad_reduce ||
	    x->c->mem.offload_params || x->c->forward_only ||
	    x->c->mem.grads_whole || x->k.frozen)
		return b;
	acc = ds_offload_accum(x, (l->params - l->eparams) / x->y.shard +
			       l->eparams / x->y.eshard);
	if (!(acc > 0) || !(acc <= rsw))
		return b;
	return fmax(b - acc, rsw);
}

/* PyTorch FSDP's own passes over a unit's w unsharded parameters and
 * their gradients beside its collectives, each micro-batch
 * (fsdp_version): a layer's (zero_block), the embedding's and the output
 * layer's (ends_block).
 * *rsw, the layer's reduction on its side stream, takes FSDP1's; *cout
 * (each gather) and *cin (the reduction) are FSDP2's, on the compute
 * stream.  reduced: this micro-batch reduce-scatters gradients.
 *
 * FSDP1 (torch/distributed/fsdp/_runtime_utils.py, torch 2.6): the
 * gather lands in the flat parameter whose views the module reads -- no
 * copy out.  Those views are autograd's: _flat_param.py
 * _get_unflat_views_unaligned / _aligned build them as
 * "torch.split(tensor, flat_param._numels, dim=0)" and ".view(shape)"
 * of the flat parameter, which _use_unsharded_views sets on the module
 * (as_params=False) for the forward, so the gradient reaching
 * flat_param.grad is split_with_sizes' backward: a cat of every
 * parameter's gradient (zeros for the alignment padding) into one flat
 * tensor, once all of the unit's are computed.  A read and a write of
 * the layer's gradient in the dtype the layer computes in
 * (MixedPrecision param_dtype: the activations' bytes, k.A), whatever
 * the reduction's, on the compute stream where autograd runs it, before
 * the post-backward hook: *cin, serial time.  And _reduce_grad divides
 * the unsharded gradient in place before the reduce-scatter, "_div_if_needed(padded_unsharded_grad,
 * state._gradient_predivide_factor)", the factor the power of two near
 * sqrt(world size) (set in _init_utils.py from
 * algorithms/_comm_hooks/default_hooks.py
 * DefaultState._get_gradient_predivide_factor: doubles while it divides
 * the world size and is below world / factor, 8 at 32 ranks, > 1
 * whenever sharded; the rest divides the shard after).  A
 * read and a write of the layer's gradient in the reduction's dtype.  It
 * runs in the post-backward hook "with state._device_handle.stream(
 * state._post_backward_stream)", issued just before the reduce-scatter
 * on that stream: serial with the reduce-scatter, beside the next
 * layer's backward -- so it joins the reduction (rsw) and is hidden or
 * exposed as the reduction is.  Where the reduction's dtype is not the
 * one the gradient was computed in (MixedPrecision(param_dtype=bf16,
 * reduce_dtype=fp32): Composer's DEFAULT, which llm-foundry's tables
 * run), the same hook first upcasts the unsharded gradient on that
 * stream, "flat_param.grad.data = flat_param.grad.to(handle.
 * _reduce_dtype)" when "flat_param.grad.dtype != handle._reduce_dtype"
 * (_post_backward_hook, torch 2.0-2.6): a read in the compute dtype
 * and a write in the reduction's, the divide then running on the
 * copy -- it joins the reduction too.
 *
 * FSDP2 (torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py,
 * torch 2.6-2.8): the gather lands in one flat buffer that
 * foreach_all_gather_copy_out splits into each parameter's own tensor
 * ("torch.ops.fsdp.split_with_sizes_copy(all_gather_output, ...,
 * out=out)"), called from FSDPParamGroup.wait_for_unshard on the current
 * stream after waiting on the gather -- a read and a write of the
 * layer's gathered bytes (16 bits a weight here, as kind_colls gathers)
 * on the compute stream, each gather.  foreach_reduce copies each
 * parameter's gradient into one reduce-scatter input,
 * "foreach_reduce_scatter_copy_in(unsharded_grads, reduce_scatter_input,
 * world_size)" (a chunk_cat), before "reduce_scatter_stream.wait_stream(
 * current_stream)": also on the compute stream -- a read of the 16-bit
 * gradient and a write in the reduction's dtype.  No division pass: for
 * bf16 and fp32 _get_gradient_divide_factors leaves it to NCCL's AVG.
 * Both run where compute would, so they are serial time, not hidden.
 * Memory-bound passes at the GPU's streaming rate (mem_time).  A frozen
 * base (LoRA) reduces only its adapters: no gradient pass priced. */
static void fsdp_copies(ctx *x, double w, int reduced,
			double *rsw, double *cout, double *cin)
{
	const train_cfg *c = x->c;
	double wb;
	int grads = reduced && !x->k.frozen && !c->forward_only;

	*cout = *cin = 0.0;
	if (!c->fsdp || w <= 0 || x->y.shard <= 1.0)
		return;
	wb = x->k.frozen && x->k.quant > 0 ? x->k.quant / 8.0 : 2.0;
	if (c->mem.fsdp_version == 1 && grads) {
		/* the divide; the upcast where the dtypes differ.  The
		 * gradient is in the parameters' compute dtype (param_dtype:
		 * 4 B under fp32 or tf32, else 2), not act_bytes' saved
		 * activations (k.A follows act_bytes where it is given). */
		double gb = c->compute == GP_FP32 || c->compute == GP_TF32 ?
			4.0 : 2.0;
		*rsw += mem_time(x, 2.0 * w * x->rb +
				 (x->rb != gb ? w * (gb + x->rb) : 0.0));
		*cin = mem_time(x, 2.0 * w * gb);
	} else if (c->mem.fsdp_version == 2) {
		*cout = mem_time(x, 2.0 * w * wb);
		if (grads)
			*cin = mem_time(x, w * (2.0 + x->rb));
	}
}

/* The ends' share of zero_block: the embedding (first stage) and the
 * output layer (last stage) are sharded like the layers -- DeepSpeed's
 * stage 3 partitions every parameter of the model it wraps, FSDP keeps
 * them in the root unit (Accelerate's TRANSFORMER_BASED_WRAP wraps the
 * decoder layers; the rest stays in the root) or in units of their own
 * (torchtitan) -- so each micro-batch gathers them and reduce-scatters
 * their gradients as it does a layer's.  One gather each a micro-batch
 * where parameters are gathered at all (FSDP's root is not resharded
 * after the forward: "Do not free the root's parameters in the
 * post-forward for FULL_SHARD with the intention that they are
 * immediately used for backward computation", torch/distributed/fsdp/
 * _runtime_utils.py; DeepSpeed's output layer is used again at once in
 * the backward, within stage3_max_reuse_distance), and under
 * DeepSpeed's stage 3 the embedding's once more for its backward: its
 * pre-backward hook (parameter_offload.py PreBackwardFunction) fetches
 * the module's parameters whether its backward reads them or not, the
 * forward's copy released (its next use is the whole model away).  As
 * zero_block's ends: the embedding's gather precedes the first layer
 * and its reduce-scatter follows the last backward, nothing beside
 * either; the output layer's gather and reduce-scatter, and DeepSpeed's
 * second embedding gather, run beside a layer's forward or backward
 * when overlap is on.  A frozen base's ends (LoRA) are gathered, never
 * reduced; they stay 16-bit.  l: the stage's first layer kind. */
/* ends_block's gather of one end's w parameters on this GPU (i 0: the
 * embedding, 1: the output layer; w 0 on a stage without it), once a
 * split (ends_ag): w is the same in each of its phases (the end's
 * parameters over TP) and so are the groups it is priced on. */
static double ends_gather(phase *ph, int i, double w)
{
	ctx *x = &ph->x;

	if (!(w > 0))
		return train_zero_coll(x, GP_ALL_GATHER, w * 2.0, 0);
	if (!ph->ends_ag_ok[i]) {
		ph->ends_ag[i] = train_zero_coll(x, GP_ALL_GATHER, w * 2.0, 0);
		ph->ends_ag_ok[i] = !x->e.bad;
	}
	return ph->ends_ag[i];
}

static void ends_block(phase *ph, const stage_rec *r, const train_lcost *l,
		       double z[TRAIN_ZB_N])
{
	ctx *x = &ph->x;
	const train_cfg *c = x->c;
	double tp = x->y.tp, emb = 0, head = 0, g2 = 0, re = 0, rh = 0;
	int zero = x->y.zero, on_b;
	int gathered = zero == 3 || (zero == 2 && c->fsdp);
	int reduce = !x->k.frozen && !c->forward_only && !c->mem.grads_whole;
	gp_coll rs = c->zero_allreduce ? GP_ALL_REDUCE : GP_REDUCE_SCATTER;

	if (r->k == 0)
		emb = x->e.p.embedding / tp;
	if (r->k == x->y.pp - 1)
		head = (x->e.p.lm_head > 0 ? x->e.p.lm_head :
			(x->y.pp > 1 ? x->e.p.embedding : 0.0)) / tp;
	if (emb <= 0 && head <= 0)
		return;	/* a middle stage holds neither end */
	on_b = fsdp_bwd_overlap(c);
	/* FSDP's own passes over the ends, as over a layer (fsdp_copies):
	 * their unit's gather and gradients are copied and reduced the same
	 * way, once each a micro-batch as the ends are gathered.  The
	 * copy-out and copy-in on the compute stream (serial); FSDP1's
	 * divide joins each end's reduction. */
	if (gathered && c->fsdp) {
		double ce, ie, ch, ih;

		fsdp_copies(x, emb, reduce, &re, &ce, &ie);
		fsdp_copies(x, head, reduce, &rh, &ch, &ih);
		z[TRAIN_ZB_ZERO] += ce + ch;
		z[TRAIN_ZB_DP] += ie + ih;
	}
	if (gathered) {
		double ge = ends_gather(ph, 0, emb);

		z[TRAIN_ZB_ZERO] += ge + overlap(ends_gather(ph, 1, head),
			l->fwd.t, c->overlap_param_gather &&
			!(c->fsdp && c->mem.fsdp_version == 1) &&
			!ds_no_prefetch(x), &z[TRAIN_ZB_ZERO_HID]);
		if (zero == 3 && !c->fsdp && !c->forward_only)
			g2 = ge;
	}
	if (ds_no_prefetch(x)) {
		/* the second embedding gather: issued when reached */
		z[TRAIN_ZB_DP] += g2;
		g2 = 0.0;
	}
	/* The reductions once a split (ends_rs): the same for ZeRO 2 and
	 * 3 and the split's phases; not kept when a collective failed. */
	if (reduce && r->k == 0 && !ph->ends_ok[0]) {
		ph->ends_rs[0] = train_zero_coll(x, rs, emb * x->rb, 0);
		ph->ends_ok[0] = !x->e.bad;
	}
	if (reduce && r->k == x->y.pp - 1 && !ph->ends_ok[1]) {
		ph->ends_rs[1] = train_zero_coll(x, rs, head * x->rb, 0);
		ph->ends_ok[1] = !x->e.bad;
	}
	z[TRAIN_ZB_DP] += overlap(g2 + (reduce ? (head > 0 ?
		ph->ends_rs[1] : 0.0) + rh + ds_bucket_time(x, head) +
		ds_offload_accum(x, head / x->y.shard) : 0.0), l->bwd.t,
		on_b, &z[TRAIN_ZB_DP_HID]);
	if (reduce)
		z[TRAIN_ZB_DP] += (emb > 0 ? ph->ends_rs[0] : 0.0) + re +
			ds_bucket_time(x, emb) +
			ds_offload_accum(x, emb / x->y.shard);
}

/* The ZeRO terms of a stage: its ZeRO and DP parts and their hidden
 * seconds (stage_base leaves all four at zero).
 *
 * ZeRO-3 / FSDP: gather each layer's 16-bit parameters over the
 * sharding group for its forward (and, resharded after forward under
 * full sharding, again for its backward); reduce-scatter its gradients
 * in backward, in the reduction's dtype (FSDP's reduce_dtype,
 * DeepSpeed's communication_data_type).  DeepSpeed ZeRO-2 reduce-
 * scatters each micro-batch's gradients.  Each layer's gather is
 * prefetched under the layer before and its reduce-scatter runs under
 * the layer after -- except at the ends of the micro-batch: the first
 * layer's gather precedes the first forward and its reduce-scatter
 * follows the last backward, with no computation beside either (Zhao et
 * al. 2023, PyTorch FSDP, sec. 3.3.1 and Fig. 5: AG0 before FWD0, RS0
 * after BWD0).  The stage's first layer is of the first kind present
 * (dense layers lead).  kc: each kind's kind_colls. */
/* One layer kind's ZeRO terms a layer (zero_block): what a layer with
 * neighbours on both sides adds, and what the stage's first layer adds
 * beside it.  They read the kind's costs and collectives (l, its
 * kind_colls kc), the ZeRO stage and the config -- not the stage, whose
 * layer counts only scale them -- so train_phase_blocks prices each
 * kind once for all its stages. */
typedef struct kind_terms {
	int ok;                 /* priced (a kind no stage holds is not) */
	double cout, gb, ef, eb, x3, hz, hd;    /* each layer */
	double f, dp1, h1;      /* the stage's first layer, more */
} kind_terms;

static void kind_block(ctx *x, const train_lcost *l, const double kc[2],
		       kind_terms *t)
{
	const train_cfg *c = x->c;
	int zero = x->y.zero;
	int fsdp_full = zero == 3, fsdp_sgo = zero == 2 && c->fsdp;
	double agw, rsw, f, b, hz = 0, hd = 0, ef, eb, x3, cout, cin, rs1;
	int on_b;

	agw = fsdp_full || fsdp_sgo ? kc[0] : 0.0;
	/* Whole gradients: reduce-scattered once per step (phase_post),
	 * not per micro-batch. */
	rsw = c->mem.grads_whole ? 0.0 : kc[1];
	fsdp_copies(x, l->params, rsw > 0, &rsw, &cout, &cin);
	f = agw;
	b = c->forward_only ? 0.0 : (fsdp_full ? agw : 0.0) + rsw;
	/* DeepSpeed's stage 3 gathers again in the backward what its
	 * recompute forward released (reuse_regather). */
	if (zero == 3 && !c->fsdp && !c->forward_only &&
	    c->mem.recompute == GP_RECOMPUTE_FULL)
		b += agw * reuse_regather(x, l, 0);
	/* An activation checkpoint around the FSDP unit
	 * (ckpt_outside_fsdp): its recompute forward runs the unit's pre-
	 * and post-forward hooks, gathering it (the prefetched gather) and
	 * freeing it again, and the backward's pre-backward hook gathers
	 * it once more -- "checkpoint(FSDP(module)): fwd during fwd - all
	 * gather, fwd during bwd - all gather, bwd during bwd - all
	 * gather" (fairscale issue #777, by FSDP's author; PyTorch's FSDP1
	 * frees a non-root FULL_SHARD unit in every post-forward,
	 * _post_forward_reshard).  That third gather is issued when the
	 * backward already needs it: exposed. */
	x3 = c->ckpt_outside_fsdp && c->fsdp && fsdp_full &&
		!c->forward_only &&
		c->mem.recompute == GP_RECOMPUTE_FULL ? agw : 0.0;
	on_b = fsdp_bwd_overlap(c);
	if (ds_no_prefetch(x)) {
		/* Nothing gathered ahead: each gather is issued when its
		 * module is reached and waited on at once, under no
		 * compute, forward and backward; the reduce-scatters still
		 * run beside. */
		double bg = b - rsw;

		ef = f;
		eb = bg + overlap(b - bg, l->bwd.t, on_b, &hd);
	} else {
		ef = overlap(f, fsdp_fwd_window(x, l),
			     c->overlap_param_gather, &hz);
		eb = overlap(ds_side_streams(x, l, b, rsw), l->bwd.t, on_b,
			     &hd);
	}
	/* FSDP2's copies run on the compute stream: serial, in every
	 * layer, the first included.  A copy-out for each gather (the
	 * forward's, full_shard's backward one and a checkpoint's third),
	 * the copy-in for the reduction. */
	t->gb = c->forward_only ? 0.0 : (fsdp_full ? cout : 0.0) +
		(x3 > 0 ? cout : 0.0) + cin;
	t->cout = cout;
	t->ef = ef;
	t->eb = eb;
	t->x3 = x3;
	t->hz = hz;
	t->hd = hd;
	/* The first layer: its gather before the first forward, its
	 * reduce-scatter after the last backward, beside no compute. */
	t->h1 = 0;
	rs1 = c->forward_only ? 0.0 : rsw;
	t->f = f;
	t->dp1 = (ds_no_prefetch(x) ? b - rs1 :
		  overlap(b - rs1, l->bwd.t, on_b, &t->h1)) + rs1;
	t->ok = 1;
}

/* The ZeRO terms of a stage: its ZeRO and DP parts and their hidden
 * seconds (stage_base leaves all four at zero).
 *
 * ZeRO-3 / FSDP: gather each layer's 16-bit parameters over the
 * sharding group for its forward (and, resharded after forward under
 * full sharding, again for its backward); reduce-scatter its gradients
 * in backward, in the reduction's dtype (FSDP's reduce_dtype,
 * DeepSpeed's communication_data_type).  DeepSpeed ZeRO-2 reduce-
 * scatters each micro-batch's gradients.  Each layer's gather is
 * prefetched under the layer before and its reduce-scatter runs under
 * the layer after -- except at the ends of the micro-batch: the first
 * layer's gather precedes the first forward and its reduce-scatter
 * follows the last backward, with no computation beside either (Zhao et
 * al. 2023, PyTorch FSDP, sec. 3.3.1 and Fig. 5: AG0 before FWD0, RS0
 * after BWD0).  The stage's first layer is of the first kind present
 * (dense layers lead).  kc: each kind's kind_colls; kt: each kind's
 * terms a layer (kind_block), priced here for the first stage that
 * holds the kind and taken as they are by the stages after it. */
static void zero_block(phase *ph, const train_lcost *ld,
		       const train_lcost *lm, const double kc[2][2],
		       kind_terms kt[2], const stage_rec *r,
		       double z[TRAIN_ZB_N])
{
	ctx *x = &ph->x;
	const train_cfg *c = x->c;
	int i, zero = x->y.zero, nd = r->nd;
	const train_lcost *L[2];
	double cnt[2];

	memset(z, 0, TRAIN_ZB_N * sizeof *z);
	L[0] = ld;
	L[1] = lm;
	cnt[0] = nd;
	cnt[1] = r->nl - nd;
	for (i = 0; i < 2 && zero >= 2 && gathers(x); i++) {
		const kind_terms *t = &kt[i];
		double n = cnt[i], mid;

		if (n <= 0)
			continue;
		if (zero == 3 && c->zero3_per_param) {
			per_param_block(x, L[i], n, z);
			continue;
		}
		if (!kt[i].ok)
			kind_block(x, L[i], kc[i], &kt[i]);
		/* The layers of this kind that have neighbours on both
		 * sides, and the stage's first layer. */
		mid = i == (nd > 0 ? 0 : 1) ? n - 1.0 : n;
		z[TRAIN_ZB_ZERO] += n * t->cout;
		z[TRAIN_ZB_DP] += n * t->gb;
		z[TRAIN_ZB_ZERO] += mid * t->ef;
		z[TRAIN_ZB_DP] += mid * t->eb + n * t->x3;
		z[TRAIN_ZB_ZERO_HID] += mid * t->hz;
		z[TRAIN_ZB_DP_HID] += mid * t->hd;
		if (mid < n) {
			z[TRAIN_ZB_ZERO] += t->f;
			z[TRAIN_ZB_DP] += t->dp1;
			z[TRAIN_ZB_DP_HID] += t->h1;
		}
	}
	if (zero >= 2 && gathers(x))
		ends_block(ph, r, nd > 0 ? ld : lm, z);
}


/* Stage r's TP part and hidden seconds under c's TP overlap, written
 * over s's, in stage_base's order: each kind's layers (tp_kind), the
 * embedding's, the head's and the MTP modules'.  It reads the layer
 * costs' TP terms, the ends' emb_tp and head_tp, the stage's counts
 * (stage_counts), rec_share and tp_rec's inputs, and c's TP overlap;
 * a vision tower's TP (tower_costs, first stage) it does not add, so
 * the caller asks it only without one. */
static void stage_tp(const ctx *x, const train_lcost *ld,
		     const train_lcost *lm, const train_lcost *const *x_lx,
		     const stage_rec *r, scost *s)
{
	const train_cfg *c = x->c;
	double cnt[4], tprec = tp_rec(c, rec_share(x, r->k, r->nl));

	stage_counts(x, r, cnt);
	s->part[TRAIN_TP] = 0;
	s->hidden[TRAIN_TP] = 0;
	if (cnt[0] > 0)
		tp_kind(c, ld, cnt[0], tprec, s);
	if (cnt[1] > 0)
		tp_kind(c, lm, cnt[1], tprec, s);
	if (x_lx[0] && cnt[2] > 0)
		tp_kind(c, x_lx[0], cnt[2], tprec, s);
	if (x_lx[1] && cnt[3] > 0)
		tp_kind(c, x_lx[1], cnt[3], tprec, s);
	if (r->k == 0)
		s->part[TRAIN_TP] += ld->emb_tp;
	if (r->k == x->y.pp - 1) {
		s->part[TRAIN_TP] += ld->head_tp;
		s->part[TRAIN_TP] += c->mem.mtp_layers * ld->head_tp;
	}
}

/* The stages' base costs under c's TP overlap.  Of stage_base's terms
 * only TP's reads the TP overlap, and the compute where Userbuffers
 * split the GEMMs (ub_fwd, ub_bwd): when the phase holds the other
 * overlap's base, each stage is that one with its TP part and hidden
 * seconds made again (stage_tp) -- unless a vision tower adds TP on the
 * first stage, when stage_base runs whole. */
int train_phase_base(phase *ph, train_cache *cache, const scost **base)
{
	int o = ph->x.c->tp_overlap != 0, j;
	const train_cfg *c = ph->x.c;
	int split, again;

	if (train_phase_layers(ph, cache))
		return GP_EINVAL;
	/* Userbuffers' split GEMMs (train_layer.c ub_chunks) make the
	 * compute read the TP overlap too: then stage_base runs whole. */
	split = ph->ld->ub_fwd + ph->ld->ub_bwd + ph->lm->ub_fwd +
		ph->lm->ub_bwd + (ph->lx[0] ? ph->lx[0]->ub_fwd +
				  ph->lx[0]->ub_bwd : 0.0) +
		(ph->lx[1] ? ph->lx[1]->ub_fwd + ph->lx[1]->ub_bwd : 0.0) > 0.0;
	again = ph->base_ok[!o] && !split &&
		!(c->mem.images > 0 && ph->x.e.m->vision.layers > 0);

	if (!ph->base_ok[o]) {
		for (j = 0; j < ph->nrec; j++) {
			scost *b = &ph->base[o][j];
			int i;

			if (again) {
				*b = ph->base[!o][j];
				stage_tp(&ph->x, ph->ld, ph->lm, ph->lx,
					 &ph->rec[j], b);
			} else {
				stage_base(&ph->x, ph->ld, ph->lm, ph->lx,
					   &ph->rec[j], b);
			}
			/* The totals' first terms, added in their order. */
			b->t05 = 0;
			b->step05 = 0;
			for (i = 0; i < TRAIN_DP; i++) {
				b->t05 += b->part[i];
				b->step05 += ph->per_step * b->part[i];
			}
		}
		if (ph->x.e.bad)
			return GP_EINVAL;
		ph->base_ok[o] = 1;
	}
	*base = ph->base[o];
	return GP_OK;
}

/* The ZeRO terms of unsharded parameters and gradients: none. */
const double train_no_blocks[TRAIN_PHASE_STAGES][TRAIN_ZB_N];

/* The stages' ZeRO terms under c's ZeRO stage and DP overlap. */
int train_phase_blocks(phase *ph, const double (**blk)[TRAIN_ZB_N])
{
	const train_cfg *c = ph->x.c;
	struct zslot *zs = train_zslot(ph, c, ph->x.y.zero);
	int o = block_set(c, ph->x.y.zero), j;
	kind_terms kt[2];

	/* Unsharded parameters and gradients: no ZeRO terms (zero_block's
	 * zeros). */
	if (ph->x.y.zero < 2 || !gathers(&ph->x)) {
		*blk = train_no_blocks;
		return GP_OK;
	}
	if (!zs->blk_ok[o]) {
		/* DeepSpeed's bucket passes (ds_bucket_time) are ZeRO 2's
		 * alone: with them on, ZeRO 3 prices its own. */
		if ((!ph->kc_ok || (ph->x.c->ds_buckets &&
				    ph->kc_zero != ph->x.y.zero)) &&
		    ph->x.y.zero >= 2 && gathers(&ph->x)) {
			kind_colls(&ph->x, ph->ld, ph->kc[0]);
			/* kind_colls reads a kind's params and eparams
			 * alone: a dense model's MoE kind is its dense
			 * layer again (train_memo.c layer_pair). */
			if (ph->lm->params == ph->ld->params &&
			    ph->lm->eparams == ph->ld->eparams) {
				ph->kc[1][0] = ph->kc[0][0];
				ph->kc[1][1] = ph->kc[0][1];
			} else {
				kind_colls(&ph->x, ph->lm, ph->kc[1]);
			}
			if (ph->x.e.bad)
				return GP_EINVAL;
			ph->kc_ok = 1;
			ph->kc_zero = ph->x.y.zero;
		}
		kt[0].ok = kt[1].ok = 0;
		for (j = 0; j < ph->nrec; j++)
			zero_block(ph, ph->ld, ph->lm,
				   (const double (*)[2])ph->kc, kt,
				   &ph->rec[j], zs->blk[o][j]);
		if (ph->x.e.bad)
			return GP_EINVAL;
		zs->blk_ok[o] = 1;
	}
	*blk = (const double (*)[TRAIN_ZB_N])zs->blk[o];
	return GP_OK;
}
