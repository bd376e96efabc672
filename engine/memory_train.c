/*
 * memory_train.c - one training pipeline stage's memory: model states
 * under the ZeRO stage, activations and logits, pipeline and reduction
 * buffers, offload; the most loaded stage of a layout; and the ZeRO
 * split memo (gp_mem_split) the sweep walks per ZeRO stage, which keeps
 * what the ZeRO stage does not change and so lives with the stage it
 * memoises.  DeepSpeed's own buffers and its offload: memory_deepspeed.c.
 */
#include "memory_int.h"

#include <string.h>

static double largest_linear(const gp_model *m)
{
	gp_widths w;
	double f, big;

	model_widths(m, &w);
	f = w.dense_f > w.expert_f ? w.dense_f : w.expert_f;
	big = (double)m->hidden * f;
	if ((double)m->hidden * w.q > big)
		big = (double)m->hidden * w.q;
	/* a hybrid stack's Mamba in_proj (z, x, B, C, dt: wider than its
	 * out_proj's d_inner) */
	if (m->pattern[0] && m->mamba.heads > 0 &&
	    (double)m->hidden * model_mamba_in_width(m) > big)
		big = (double)m->hidden * model_mamba_in_width(m);
	return big;
}

/* What train_stage fills: ST_REST everything the ZeRO stage does not
 * change (its activations, logits, buffers, in-flight micro-batches),
 * ST_ZERO what it does (weights, gradients, master, optimizer states,
 * adapter, gathers, offload, DeepSpeed's reduction peak) -- into a result
 * ST_REST filled.  Both: the whole stage. */
enum { ST_REST = 1, ST_ZERO = 2, ST_ALL = 3 };

/* A stage's parameter shares, what train_stage's ZeRO half reads back
 * from its rest half (the memo keeps them as head[SH_N]). */
enum { SH_FRAC, SH_EXPERT, SH_DENSE, SH_MINE, SH_TOK, SH_SCALAR, SH_N };

/* Dense layers on stage `stage` of nl layers (layout.h layout_stage_moe:
 * the first moe.dense_layers of a dense-first MoE model, the layers
 * between the MoE ones of an interleaved one, over the stage's model
 * chunks under the interleaved schedule). */
static int stage_dense_in(const gp_model *m, const gp_layout *y, int stage,
			  int nl)
{
	return nl - layout_stage_moe(m, y, stage, nl);
}

/* Inline: most models are dense, and the stage loops ask this of every
 * stage; only an MoE model with dense layers makes the call. */
static inline int stage_dense(const gp_model *m, const gp_layout *y,
			      int stage, int nl)
{
	/* a dense model's are all, an MoE model's without dense ones none:
	 * no stage's first layer to find */
	if (m->moe.experts <= 0)
		return nl;
	if (m->moe.dense_layers <= 0 && m->moe.layer_step <= 1)
		return 0;
	return stage_dense_in(m, y, stage, nl);
}

/* A hybrid stack's layers of each kind on stage `stage` of nl layers (its
 * -, E, M and * in n[0..3], layout_stage_kind). */
static void stage_kinds(const gp_model *m, const gp_layout *y, int stage,
			int nl, int n[4])
{
	n[0] = layout_stage_kind(m, y, stage, nl, '-');
	n[1] = layout_stage_kind(m, y, stage, nl, 'E');
	n[2] = layout_stage_kind(m, y, stage, nl, 'M');
	n[3] = layout_stage_kind(m, y, stage, nl, '*');
}

/* A hybrid stack's per-layer parameters of stage `stage` of nl layers on
 * one GPU: each block's weights by the layers of its kind the stage holds
 * (gp_params: attention over the * layers, mamba over the M ones, the
 * dense MLPs over the - ones, routers and routed experts over the E ones,
 * the experts sharded over EP and their TP), the norms by its share of
 * the layers; into *expert and *dense (stage_shares). */
static void hybrid_shares(const gp_model *m, const gp_layout *y,
			  const gp_params *p, int stage, int nl,
			  double *expert, double *dense)
{
	int n[4];
	double N[4];
	int i;
	static const char kinds[4] = { '-', 'E', 'M', '*' };

	stage_kinds(m, y, stage, nl, n);
	for (i = 0; i < 4; i++)
		N[i] = model_pattern_in(m, kinds[i], 0, m->layers);
	*expert = N[1] > 0 ? p->experts * n[1] / N[1] /
		((double)y->etp * y->ep) : 0.0;
	*dense = (p->norms * nl / m->layers +
		  (N[0] > 0 ? p->dense_mlp * n[0] / N[0] : 0.0) +
		  (N[1] > 0 ? p->router * n[1] / N[1] : 0.0) +
		  (N[2] > 0 ? p->mamba * n[2] / N[2] : 0.0) +
		  (N[3] > 0 ? p->attention * n[3] / N[3] : 0.0)) / y->tp;
}

/* The shares of stage `stage` of nl layers into sh[SH_N]: its fraction of
 * the layers, its routed-expert and other parameters on one GPU, their
 * sum, its tokens per micro-batch, and of its other parameters those
 * that are no hidden weight matrix (the embedding, output layer and
 * norms: what Muon leaves to AdamW, gp_optim scalar_states). */
static void stage_shares(const gp_model *m, const gp_train_cfg *c,
			 const gp_layout *y, const gp_params *p, int stage,
			 int nl, double *sh)
{
	int first = stage == 0, last = stage == y->pp - 1;
	int nd = stage_dense(m, y, stage, nl), lm = model_moe_layers(m);
	double frac, expert, dense, emb;

	frac = (double)nl / m->layers;
	/* Per-layer parameters split into routed experts (sharded over
	 * EP and the experts' TP, etp) and the rest (TP only); norms are
	 * counted with the rest (replicated in truth; < 0.01%).  Each by
	 * the layers that hold it: the attention and norms every layer's,
	 * the dense MLPs the dense layers' (a dense-first MoE model's sit
	 * on the first stages: DeepSeek-V3's 3 of 61, 396M each, where an
	 * average over the layers would put 4/61 of them on a 4-layer
	 * first stage), the experts and routers the MoE layers'. */
	if (m->pattern[0]) {
		hybrid_shares(m, y, p, stage, nl, &expert, &dense);
	} else {
		expert = lm > 0 ? p->experts * (nl - nd) / lm /
			((double)y->etp * y->ep) : 0.0;
		dense = ((p->attention + p->norms) * frac +
			 (m->layers > lm ? p->dense_mlp * nd /
			  (m->layers - lm) : 0.0) +
			 (lm > 0 ? p->router * (nl - nd) / lm : 0.0)) / y->tp;
	}
	/* First stage: vocabulary-parallel input embedding (Shoeybi et al.
	 * 2019 sec. 3) and the vision tower; last stage: the output layer,
	 * or with pp > 1 and tied embeddings Megatron's copy of the
	 * embedding that it keeps in sync by an all-reduce. */
	emb = 0;
	if (first)
		emb += (p->embedding + p->vision) / y->tp;
	if (last) {
		if (p->lm_head > 0)
			emb += p->lm_head / y->tp;
		else if (y->pp > 1)
			emb += p->embedding / y->tp;
	}
	if (last && c->mtp_layers > 0) {
		/* Multi-token prediction modules (Megatron-Core's
		 * mtp_num_layers) on the last stage, as the step prices
		 * them (train_stage.c stage_base): each one more layer of
		 * the model's last kind (DeepSeek-V3: MoE; Megatron-
		 * Bridge flop_utils.py "num_moe_layers += last_layer_is_moe
		 * * mtp_num_layers") and its eh_proj, "a projection matrix
		 * M_k in R^{d x 2d}" (DeepSeek-V3 report arXiv:2412.19437
		 * sec. 2.2), 2h x h split over TP; its two RMSNorms' 2h are
		 * left out as the layers' norms' share is.  The module
		 * needs the embedding too: Megatron-Core's gpt_model.py
		 * builds one "if self.pre_process or self.mtp_process"
		 * ("Multi-Token Prediction (MTP) need both embedding layer
		 * and output layer. So there will be both embedding layer
		 * and output layer in the mtp process stage"), so a last
		 * stage that is not the first and has no tied embedding
		 * copy already holds one more vocab x h.  DualPipe puts
		 * the first and the last stage on one rank, which "enables
		 * the physical sharing of parameters and gradients, of the
		 * shared embedding and output head, between the MTP module
		 * and the main model" (sec. 3.2.3): stage_dual adds the
		 * first stage's embedding to this rank already. */
		double n = c->mtp_layers;
		/* the model's last layer's kind (an interleaved model's
		 * last may be dense) */
		int moe = model_moe_in(m, m->layers - 1, 1) > 0;

		expert += moe ? n * p->experts / lm /
			((double)y->etp * y->ep) : 0.0;
		dense += n * ((p->attention + p->norms) / m->layers +
			      (moe ? p->router / lm :
			       p->dense_mlp / (m->layers - lm)) +
			      2.0 * m->hidden * m->hidden) / y->tp;
		if (!first && p->lm_head > 0 &&
		    c->lay.schedule != GP_SCHED_DUALPIPE)
			dense += p->embedding / y->tp;
	}
	dense += emb;
	/* Megatron-Core's Muon takes "not getattr(param, 'is_embedding_
	 * or_output_parameter', False) and len(param.shape) == 2"
	 * (megatron/core/optimizer/muon.py): the embedding, the output
	 * layer and the 1-D norms go to Adam.  The vision tower's and
	 * the MTP modules' matrices are matrices; biases (few) are left
	 * with them. */
	sh[SH_SCALAR] = emb - (first ? p->vision / y->tp : 0.0) +
		p->norms * frac / y->tp;
	sh[SH_FRAC] = frac;
	sh[SH_EXPERT] = expert;
	sh[SH_DENSE] = dense;
	sh[SH_MINE] = dense + expert;
	sh[SH_TOK] = c->seq / y->cp * c->lay.micro_batch;
}

/* What an offloaded stage hands mem_ds_offload: its trainable partition,
 * the bytes per parameter it moves and its largest tensor. */
typedef struct stage_off {
	double tr, pb, big;
} stage_off;

/* LoRA / QLoRA states of a stage: the frozen (maybe quantised) base and
 * the adapter; returns the base's bits per weight. */
static double stage_lora(const gp_model *m, const gp_train_cfg *c,
			 const gp_layout *y, const gp_params *p,
			 const gp_state_bytes *sbp, const double *sh,
			 int qhead, stage_off *so, gp_mem_result *o)
{
	gp_state_bytes sb = *sbp;
	double frac = sh[SH_FRAC], mine = sh[SH_MINE];
	double wb = sb.weights, frozen_bits, lin, nonlin;
	int off = c->offload_optimizer || c->offload_params;
	int zero = c->lay.zero;
	/* LoRA / QLoRA: the base is frozen, no grads or states;
	 * the linears may be stored quantised, the embeddings,
	 * norms and output layer stay 16-bit (bitsandbytes and
	 * GPTQ/AWQ quantise nn.Linear blocks only). */
	double ad = mem_lora_params(m, c->lora_rank, c->lora_targets);
	double ad_mine = ad * frac / y->tp;

	frozen_bits = c->base.bits > 0 ? mem_quant_bits(&c->base) :
		8.0 * wb;
	lin = (p->attention + p->dense_mlp + p->experts) * frac /
		y->tp;
	lin += p->experts * frac / ((double)y->etp * y->ep) -
		p->experts * frac / y->tp;
	if (qhead)
		/* The output layer is one more nn.Linear for a
		 * quantiser that replaces them all (Lightning's
		 * BitsandbytesPrecision without ignore_modules). */
		lin += p->lm_head / y->tp;
	nonlin = mine - lin;
	o->bytes[GP_MEM_WEIGHTS] = lin * frozen_bits / 8.0 +
		nonlin * (frozen_bits >= 16 ? frozen_bits / 8.0 : 2.0);
	if (zero == 3)
		o->bytes[GP_MEM_WEIGHTS] /= y->shard;
	/* Adapter: its weights, grads, master and states by the
	 * recipe, sharded like a small model. */
	o->bytes[GP_MEM_ADAPTER] = ad_mine * (sb.weights + sb.grads +
		sb.master + sb.optimizer) / (zero > 0 ? y->shard : 1);
	o->trainable = ad;
	if (off) {
		/* Offloaded: the GPU keeps the adapter weights (their
		 * ZeRO-3 partition); its largest tensor is an A or B
		 * of rank x the widest dimension. */
		gp_widths aw;
		double wide;

		model_widths(m, &aw);
		wide = aw.dense_f > aw.q ? aw.dense_f : aw.q;
		if (m->hidden > wide)
			wide = m->hidden;
		o->bytes[GP_MEM_ADAPTER] = ad_mine * sb.weights /
			(zero == 3 ? y->shard : 1);
		so->tr = ad_mine / y->shard;
		so->pb = sb.weights;
		so->big = (double)c->lora_rank * wide / y->tp;
	}
	if (c->base.bits > 0 && frozen_bits < 16 && !c->base_fp8_gemm)
		/* A 4-bit matmul dequantises the weight to 16 bits
		 * first (bitsandbytes dequantize_4bit): one matrix
		 * live at a time.  Transformer Engine's fp8 GEMM reads
		 * an fp8 parameter as it is (base_fp8_gemm). */
		o->bytes[GP_MEM_WORKSPACE] = 2.0 *
			(qhead && p->lm_head > largest_linear(m) ?
			 p->lm_head : largest_linear(m)) / y->tp;
	return frozen_bits;
}

/* PyTorch FSDP2's whole gradients (fully_shard under
 * set_requires_gradient_sync(False), grads_whole with fsdp_version 2),
 * in bytes per element, gb the recipe's gradient bytes (the unsharded
 * .grad's dtype, MixedPrecisionPolicy's param_dtype).  After each
 * backward outside a sync FSDP2 resharded the unit and moved its
 * gradient into the reduction's dtype, keeping it unsharded until the
 * sync (torch/distributed/fsdp/_fully_shard/_fsdp_param.py, torch
 * 2.4-2.11, to_accumulated_grad_if_needed: "if (self.reduce_dtype is
 * None or self._unsharded_param.grad is None or self._unsharded_param.
 * grad.dtype == self.reduce_dtype): return" ... "self.unsharded_
 * accumulated_grad = unsharded_grad.to(self.reduce_dtype)"), and each
 * later micro-batch adds into it (accumulate_unsharded_grad_if_needed
 * "self.unsharded_accumulated_grad += self.unsharded_param.grad"): the
 * reduction's bytes where the dtypes differ (KempnerForge's
 * MixedPrecisionPolicy(param_dtype=bfloat16, reduce_dtype=float32): 4
 * B, not 2), the .grad's where they agree.  FSDP1 (fsdp_version 1) and
 * other stacks keep the recipe's. */
static double whole_grad_bytes(const gp_train_cfg *c, double gb)
{
	double rb = c->reduce_bytes > 0 ? c->reduce_bytes : c->recipe.reduce;

	if (!c->grads_whole || c->fsdp_version != 2 || !(rb > 0))
		return gb;
	return rb;
}

/* PyTorch FSDP2 (fully_shard, fsdp_version 2) under a recipe with an
 * fp32 master: the sharded parameter is itself the master.  fully_shard
 * keeps each sharded parameter in the dtype it was built in
 * (torch/distributed/fsdp/_fully_shard/_fsdp_param.py: the sharded
 * DTensor is made from the original parameter's data; "param_dtype"
 * only casts the all-gather input, so the 16-bit copy exists while a
 * unit is gathered -- param_gather's bytes -- and the optimizer steps
 * the fp32 shard), and _fsdp_collectives.py foreach_reduce casts the
 * reduce-scatter output back to that dtype ("target_dtype =
 * orig_dtype" ... "grad_output = _to_dtype_if_needed(reduce_output,
 * target_dtype)") before it becomes the sharded .grad.  So a sharded
 * parameter holds no 16-bit weight (recipe weights 0 where zero 3
 * shards them; the master's 4 B) and its sharded gradient takes the
 * master's bytes, not the recipe's 16-bit ones.  FSDP1, other stacks
 * and recipes without a master keep the recipe's. */
static int fsdp2_fp32_shard(const gp_train_cfg *c, const gp_state_bytes *sb)
{
	return c->fsdp_version == 2 && sb->master > 0;
}

/* Full training states of a stage: weights, gradients, master and
 * optimizer states, each sharded as the ZeRO stage says. */
static void stage_full(const gp_model *m, const gp_train_cfg *c,
		       const gp_layout *y, const gp_params *p,
		       const gp_state_bytes *sbp, const double *sh, int first,
		       int last, stage_off *so, gp_mem_result *o)
{
	gp_state_bytes sb = *sbp;
	double expert = sh[SH_EXPERT], dense = sh[SH_DENSE], wb = sb.weights;
	int off = c->offload_optimizer || c->offload_params;
	int zero = c->lay.zero;
	/* Whole gradients (grads_whole) are not sharded. */
	double wsh = zero == 3 ? 1.0 : 0.0,
		gsh = zero >= 2 && !c->grads_whole,
		osh = zero >= 1 || sb.master_shard0 || sb.dp_shard;
	/* A frozen ViT tower (gp_train_cfg.vision_frozen) holds
	 * its weights only: no grads, master or states. */
	double vf = first && c->vision_frozen ?
		tower_params(m, p) / y->tp : 0;
	/* A frozen language model (llm_frozen) likewise: the stage's
	 * parameters but the projector's (and a training tower's). */
	double vt = first ? (m->vision.projector_params +
			     (c->vision_frozen ? 0 : tower_params(m, p))) /
		y->tp : 0;
	/* Dense states shard over dp*cp, expert states over the
	 * expert-data-parallel group tp*cp*dp/(etp*ep)
	 * (Megatron-Core MoE: expert params are replicated only
	 * across EDP). */
	double dt = dense - vf, sh_ = y->shard, esh = y->eshard;
	/* Each sharded share divided once (stores into o could alias
	 * y's fields: the compiler would divide again each time). */
	double dt_sh = dt / sh_, e_sh = expert / esh;

	/* FSDP2's shard is the master (fsdp2_fp32_shard): no 16-bit
	 * weight beside it where zero 3 shards the trainable weights (a
	 * frozen tower's shard, which has no master, keeps wb), and the
	 * sharded gradient in the master's dtype. */
	double tw = wb;

	if (fsdp2_fp32_shard(c, &sb) && !c->llm_frozen) {
		if (wsh)
			tw = 0;
		if (gsh)
			sb.grads = sb.master;
	}
	o->bytes[GP_MEM_WEIGHTS] = wsh ? (vf / sh_) * wb +
		(dt_sh + e_sh) * tw : (dense + expert) * wb;
	o->bytes[GP_MEM_GRADS] = (gsh ? dt_sh + e_sh : dt + expert) *
		whole_grad_bytes(c, sb.grads);
	o->bytes[GP_MEM_MASTER] = (osh ? dt_sh + e_sh : dt + expert) *
		sb.master;
	o->bytes[GP_MEM_OPTIMIZER] = (osh ? dt_sh + e_sh :
				      dt + expert) * sb.optimizer;
	/* Muon's AdamW states on the embedding, output layer and norms
	 * (sb.scalar over sb.optimizer; none for another optimizer). */
	o->bytes[GP_MEM_OPTIMIZER] += (osh ? sh[SH_SCALAR] / sh_ :
				       sh[SH_SCALAR]) *
		(sb.scalar - sb.optimizer);
	o->trainable = p->total -
		(c->vision_frozen ? tower_params(m, p) : 0);
	if (c->llm_frozen) {
		o->bytes[GP_MEM_GRADS] = (gsh ? vt / sh_ : vt) *
			whole_grad_bytes(c, sb.grads);
		o->bytes[GP_MEM_MASTER] = (osh ? vt / sh_ : vt) * sb.master;
		o->bytes[GP_MEM_OPTIMIZER] = (osh ? vt / sh_ : vt) *
			sb.optimizer;
		o->trainable = m->vision.projector_params +
			(c->vision_frozen ? 0 : tower_params(m, p));
	}
	if (c->grads_in_bwd) {
		/* Optimizer step in the backward pass (torchtune
		 * optimizer_in_bwd: a post-accumulate-grad hook steps
		 * and frees each parameter's grad as soon as it is
		 * complete): one parameter's grad at a time, the
		 * largest -- the embedding or output matrix, or the
		 * largest linear of a layer. */
		double big = largest_linear(m);

		if (first && p->embedding > big)
			big = p->embedding;
		if (last && p->lm_head > big)
			big = p->lm_head;
		o->bytes[GP_MEM_GRADS] = big / y->tp * sb.grads;
	}
	if (c->before_step)
		/* Read before the first optimizer step (gp_train_cfg
		 * before_step): the optimizer's states do not exist yet.
		 * torch.optim's Adam and AdamW allocate them in their first
		 * step() ("if len(state) == 0: ... state['exp_avg'] =
		 * torch.zeros_like(p, memory_format=torch.preserve_format)",
		 * torch/optim/adamw.py _init_group), and DeepSpeed's ZeRO
		 * optimizers no longer run a step at construction from
		 * v0.13.2 (deepspeedai/DeepSpeed PR #5104, 18179807f,
		 * "Remove optimizer step on initialization": "All ZeRO 1/2/3
		 * stages call the optimizer's `step()` on its
		 * initialization ... This PR eliminates `step()` in the
		 * initialization"; v0.14.2 stage_1_and_2.py
		 * initialize_optimizer_states: "other optimizers which do
		 * lazy initialization of the state at the first call to
		 * step").  The fp32 master is built at construction
		 * (single_partition_of_fp32_groups) and stays.  Before the
		 * paged move below: bitsandbytes' paged optimizers create
		 * their states lazily too (optim/optimizer.py
		 * Optimizer8bit.step: "if len(state) == 0:
		 * self.init_state(group, p, gindex, pindex)", whose
		 * get_state_buffer allocates the paged buffer), so no paged
		 * states exist yet either. */
		o->bytes[GP_MEM_OPTIMIZER] = 0;
	if (c->paged_optimizer) {
		/* bitsandbytes paged optimizers allocate their states
		 * with cudaMallocManaged (bitsandbytes functional.py
		 * get_paged / cget_managed_ptr): resident on the card
		 * until evicted, but outside PyTorch's caching
		 * allocator, so torch.cuda.max_memory_allocated and
		 * memory_stats never count them. */
		o->bytes[GP_MEM_PAGED] = o->bytes[GP_MEM_OPTIMIZER];
		o->bytes[GP_MEM_OPTIMIZER] = 0;
	}
	if (off) {
		/* The trainable partition, its 16-bit (fp32) dtype and
		 * its largest tensor: the embedding or output matrix,
		 * or a layer's largest linear. */
		double big = largest_linear(m);

		if (first && p->embedding > big)
			big = p->embedding;
		if (last && p->lm_head > big)
			big = p->lm_head;
		so->tr = (dense - vf) / y->shard + expert / y->eshard;
		so->pb = c->recipe.offload;
		so->big = big / y->tp;
	}
}

/* DeepSpeed ZeRO-3's gathered parameters at the forward's end, in
 * elements on one GPU, as partitioned_param_coordinator.py (v0.14.2 and
 * current) keeps them:
 *  - prefetch: at every submodule's fetch (every module of the trace,
 *    containers, norms and activations included -- about twice a layer's
 *    weights in the Hugging Face modules) it gathers the next parameters
 *    of the trace while "numel_prefetching < max_params_to_prefetch",
 *    max_params_to_prefetch = "min(self.__max_n_available_params -
 *    self.__n_available_params, self.__prefetch_bucket_sz)": at least
 *    one parameter a module, so it gathers ahead faster than the modules
 *    release, until stage3_max_live_parameters (L) are live; the
 *    parameter that crosses the limit is gathered whole, so up to L plus
 *    the largest weight (big);
 *  - reuse: __params_to_release keeps a parameter used again within
 *    stage3_max_reuse_distance (R) elements of the trace.  At the turn
 *    a layer j layers from the forward's end is next used after about
 *    2 j layers (the rest of the forward, then the backward back down to
 *    it), so about R/2 of the last layers stay gathered, plus the module
 *    being computed (at most the largest weight);
 *  - prefetch 0 (stage3_prefetch_bucket_size 0, or a live limit of 0,
 *    where the prefetch never asks for more than 0): the reuse alone.
 * Both are capped by the stage's own parameters.  Priced at the
 * activations' peak, the turn from forward to backward. */
static double ds_gather_window(const gp_model *m, const gp_train_cfg *c,
			       const gp_layout *y, const gp_params *p,
			       const double *sh, int first, int last)
{
	double big = largest_linear(m), w;

	if (first && p->embedding > big)
		big = p->embedding;
	if (last && p->lm_head > big)
		big = p->lm_head;
	big /= y->tp;
	w = c->ds_max_reuse / 2.0 + big;
	if (c->ds_prefetch_bucket > 0 && c->ds_max_live > 0)
		w = fmax(w, c->ds_max_live + big);
	return fmin(sh[SH_MINE], w);
}

/* ema (gp_train_cfg): an fp32 moving average of the parameters the
 * rank trains, kept on the GPU (ema gpu) or in host memory (ema cpu).
 * NeMo's EMAOptimizer builds it from its optimizer's parameters, per
 * rank: "self.ema_params += tuple(copy.deepcopy(param.data.detach()).
 * to(self.device) for param in opt_params[...])" (NVIDIA/NeMo
 * nemo/collections/common/callbacks/ema.py) -- the rank's parameters as
 * it holds them: its TP / PP / EP slice, whole across data parallelism
 * under ZeRO 0-2 (the parameters are replicated there; a distributed
 * optimizer shards its fp32 master, not the module's parameters), the
 * rank's shard where ZeRO 3 / FSDP shard the parameters themselves.
 * fp32, 4 B a parameter: timm's ModelEmaV2 and the fp32 recipes keep
 * it so ("EMA always in float, as accumulation needs lots of bits");
 * DeepSeek-V3 (arXiv 2412.19437, 3.3.x) keeps it in host memory.  The
 * trainable parameters only (a frozen tower or language model has
 * none): LoRA and a frozen part are refused before (gpuplan.train), so
 * the stage's parameters all train. */
static void stage_ema(const gp_train_cfg *c, const gp_layout *y,
		      const double *sh, gp_mem_result *o)
{
	double n = layout_held_params(c->lay.zero, y, sh[SH_DENSE],
				      sh[SH_EXPERT]);

	if (c->ema == GP_EMA_GPU) {
		o->bytes[GP_MEM_EMA] = 4.0 * n;
	} else {
		o->host_ema = 4.0 * n;
		o->cpu_bytes += o->host_ema;
	}
}

/* What the ZeRO stage changes on a stage: its states (LoRA's or full
 * training's), their offload, the ZeRO-3 / FSDP gathers. */
static void stage_states(const gp_model *m, const gp_train_cfg *c,
			 const gp_layout *y, const gp_params *p,
			 const gp_state_bytes *sb, const double *sh,
			 int first, int last, int qhead, gp_mem_result *o,
			 gp_mem_states *st)
{
	stage_off so = { 0, 2, 0 };
	double frozen_bits = 0, per_layer_w, wb = sb->weights;
	int off = c->offload_optimizer || c->offload_params;
	int zero = c->lay.zero;

	if (c->lora_rank > 0)
		frozen_bits = stage_lora(m, c, y, p, sb, sh, qhead, &so, o);
	else
		stage_full(m, c, y, p, sb, sh, first, last, &so, o);
	if (off)
		mem_ds_offload(c, so.tr, so.pb, so.big, o);
	if (c->ema != GP_EMA_NONE && c->lora_rank <= 0)
		stage_ema(c, y, sh, o);
	/* ZeRO-3 / FSDP gather: the layer being computed and the one being
	 * prefetched, in full (FSDP limit_all_gathers keeps two in
	 * flight).  DeepSpeed's engine (ds_zero): its coordinator's window,
	 * ds_gather_window -- up to stage3_max_live_parameters gathered
	 * ahead, and what stage3_max_reuse_distance keeps.  Another
	 * stack's offload (DeepSpeed's coordinator at its defaults under
	 * accelerate): the reuse window, as before.  ZeRO-2 and up also fill a
	 * 16-bit bucket of one layer's grads before reduce-scatter; under
	 * DeepSpeed's engine that bucket is its flat buffer of
	 * reduce_bucket_size elements of the parameter dtype, whatever the
	 * model (stage3.py: "self.__ipg_bucket_flat_buffer: Tensor =
	 * torch.empty(self.reduce_bucket_size, dtype=self.dtype, ...)" at
	 * init; stage_1_and_2.py: "buf_0 = torch.empty(int(self.
	 * reduce_bucket_size), dtype=self.dtype, ...)" at each backward,
	 * with contiguous_gradients, the default; v0.14.2), adapters and
	 * frozen bases included; with overlap_comm stage 2 makes a second
	 * buffer of the same size (ds_overlap_comm; stage 3 keeps its one
	 * flat buffer).  Stage 1 runs the same backward() -- "if self.
	 * contiguous_gradients: self.ipg_buffer = []; buf_0 = torch.empty(
	 * int(self.reduce_bucket_size) ...", no test of the stage, and
	 * contiguous_gradients defaults true at every stage (DeepSpeedZero-
	 * Config) -- so its bucket is the same; DeepSpeed's BF16_Optimizer
	 * (master_shard0, bf16 at ZeRO 0/1) has none.  Offloaded
	 * (DeepSpeed's coordinator, mem_ds_offload): the reuse window
	 * instead, and the gradient bucket is in grads. */
	per_layer_w = (p->per_layer_max / y->tp);
	if (st) {
		/* Full training's (a store is asked for no other): what
		 * stage_full wrote, the gathers' two terms below. */
		memcpy(st->bytes, &o->bytes[GP_MEM_WEIGHTS],
		       sizeof st->bytes);
		st->paged = o->bytes[GP_MEM_PAGED];
		st->paged_on = c->paged_optimizer;
		st->trainable = o->trainable;
		st->pg_on[0] = st->pg_on[1] = 0;
		st->ema = o->bytes[GP_MEM_EMA];
		st->host_ema = o->host_ema;
	}
	if (zero == 3) {
		/* FSDP2 gathers each unit in MixedPrecisionPolicy's
		 * param_dtype: the fp32 shard (fsdp2_fp32_shard) cast to
		 * 16 bits ("all_gather_inputs = [self._sharded_param_data.
		 * to(self.param_dtype)]"-style, _fsdp_param.py
		 * all_gather_inputs), so a recipe with a master gathers
		 * 2 B an element whatever extra low-precision copy the
		 * recipe's weights price (torchao's float8 linears cast in
		 * their forward; torchtitan's float8 all-gather is opt-in,
		 * config_manager.py "--float8.enable_fsdp_float8_all_gather"
		 * default False). */
		double gb = c->lora_rank > 0 ? frozen_bits / 8.0 :
			fsdp2_fp32_shard(c, sb) && !c->ds_zero &&
			!c->llm_frozen ? 2.0 : wb;
		double g = gb * (c->ds_zero ?
			ds_gather_window(m, c, y, p, sh, first, last) : off ?
			fmin(sh[SH_MINE], DS_REUSE_DISTANCE / 2.0 +
			     per_layer_w) :
			2.0 * per_layer_w);

		/* PyTorch FSDP's root unit left gathered from its forward
		 * to the backward (fsdp_root_gathered): torchtitan wraps
		 * each block
		 * (the last one "reshard_after_forward = int(layer_id) <
		 * len(model.layers) - 1": the two layers above) and then
		 * the model, "fully_shard(model, **fsdp_config,
		 * reshard_after_forward=not pp_enabled)" (pytorch/
		 * torchtitan 9dec370, parallelisms/parallelize_llama.py
		 * apply_fsdp), so the root unit holds the embedding, the
		 * final norm and the output layer, and PyTorch un-sets the
		 * root's reshard anyway (torch/distributed/fsdp/
		 * _fully_shard/_fsdp_state.py _lazy_init, torch 2.5-2.6:
		 * "For the root, do not reshard after forward since for
		 * training, the parameters would be freed and all-gathered
		 * immediately" ... "self._fsdp_param_group.
		 * post_forward_mesh_info = None"; torch 2.8 respects an
		 * explicit reshard_after_forward=True, pytorch/pytorch
		 * #154704, June 2025).  The ends' unsharded parameters,
		 * in the gather's dtype (gb: FSDP2's param_dtype, bf16),
		 * stay live over the turn from forward to backward,
		 * where the activations peak.  Other roots reshard (not
		 * priced). */
		if (c->fsdp_root_gathered && !c->ds_zero && !off &&
		    c->lora_rank == 0)
			g += ((first ? p->embedding : 0) +
			      (last ? p->lm_head : 0)) * gb / y->tp;
		o->bytes[GP_MEM_PARAM_GATHER] += g;
		if (st) {
			st->pg[0] = g;
			st->pg_on[0] = 1;
		}
	}
	if ((zero >= 2 || (zero == 1 && !sb->master_shard0)) &&
	    c->ds_zero && !off) {
		double g = c->ds_reduce_bucket * wb *
			(zero <= 2 && c->ds_overlap_comm ? 2.0 : 1.0);

		o->bytes[GP_MEM_PARAM_GATHER] += g;
		if (st) {
			st->pg[1] = g;
			st->pg_on[1] = 1;
		}
	} else if (zero >= 2 && c->lora_rank == 0 && !c->llm_frozen &&
		   !off && !c->grads_whole) {
		double g = per_layer_w * 2.0;

		o->bytes[GP_MEM_PARAM_GATHER] += g;
		if (st) {
			st->pg[1] = g;
			st->pg_on[1] = 1;
		}
} else if (zero == 3 && c->lora_rank == 0 && !c->llm_frozen &&
		   !off && c->grads_whole && c->fsdp_version == 2) {
		/* FSDP2's sync: each unit's reduce-scatter input, its whole
		 * gradients copied into one tensor of the reduction's dtype
		 * while they still live (torch/distributed/fsdp/_fully_shard/
		 * _fsdp_collectives.py foreach_reduce: "reduce_scatter_input
		 * = torch.empty((reduce_scatter_input_numel,), dtype=
		 * reduce_dtype ...)", "foreach_reduce_scatter_copy_in(...)",
		 * "# Only after the copy-in finishes can we free the
		 * gradients"); outside the sync a unit's fresh .grad (the
		 * recipe's bytes) beside its accumulated gradient until
		 * accumulate_unsharded_grad_if_needed adds and frees it.
		 * One layer of the larger. */
		double rb = c->reduce_bytes > 0 ? c->reduce_bytes :
			c->recipe.reduce;
		double g = per_layer_w * fmax(rb, sb->grads);

		o->bytes[GP_MEM_PARAM_GATHER] += g;
		if (st) {
			st->pg[1] = g;
			st->pg_on[1] = 1;
		}
	}
}

/* The key of a stored stage's states (gp_mem_states): what of
 * stage_states' inputs a split's phases may move -- the stage and its
 * layers (the split's stage list), its shares (stage_shares reads the
 * schedule), the shard groups, DeepSpeed's overlap_comm (by ZeRO stage)
 * and the quantised head. */
static int states_match(const gp_mem_states *st, const gp_train_cfg *c,
			const gp_layout *y, const double *sh, int stage,
			int nl, int qhead)
{
	return st->ok && st->stage == stage && st->nl == nl &&
		st->qhead == qhead && st->ovl == c->ds_overlap_comm &&
		memcmp(&st->expert, &sh[SH_EXPERT], sizeof(double)) == 0 &&
		memcmp(&st->dense, &sh[SH_DENSE], sizeof(double)) == 0 &&
		memcmp(&st->mine, &sh[SH_MINE], sizeof(double)) == 0 &&
		memcmp(&st->shard, &y->shard, sizeof(double)) == 0 &&
		memcmp(&st->eshard, &y->eshard, sizeof(double)) == 0;
}

static void states_key(gp_mem_states *st, const gp_train_cfg *c,
		       const gp_layout *y, const double *sh, int stage,
		       int nl, int qhead)
{
	st->stage = stage;
	st->nl = nl;
	st->qhead = qhead;
	st->ovl = c->ds_overlap_comm;
	st->expert = sh[SH_EXPERT];
	st->dense = sh[SH_DENSE];
	st->mine = sh[SH_MINE];
	st->shard = y->shard;
	st->eshard = y->eshard;
	st->ok = 1;
}

/* stage_states again from its store: the same writes, the gathers
 * added onto the split's share in their order. */
static void states_replay(const gp_mem_states *st, gp_mem_result *o)
{
	memcpy(&o->bytes[GP_MEM_WEIGHTS], st->bytes, sizeof st->bytes);
	if (st->paged_on)
		o->bytes[GP_MEM_PAGED] = st->paged;
	o->trainable = st->trainable;
	o->bytes[GP_MEM_EMA] = st->ema;
	o->host_ema = st->host_ema;
	o->cpu_bytes += st->host_ema;
	if (st->pg_on[0])
		o->bytes[GP_MEM_PARAM_GATHER] += st->pg[0];
	if (st->pg_on[1])
		o->bytes[GP_MEM_PARAM_GATHER] += st->pg[1];
}

/* The buffers PyTorch's context_parallel ring holds while one layer's
 * attention backward runs, beyond what a plain SDPA backward holds
 * (torch/distributed/tensor/experimental/_attention.py,
 * _templated_ring_attention_backward, the version the torchtitan runs of
 * end-2024 called; pytorch/pytorch 0123248 reads the same), in bytes a
 * rank for tok tokens:
 *  - the K and V SDPA was handed (kvb, in the 16-bit type; query-wide
 *    under kv_repeat): "key = key.contiguous()" copies the transposed
 *    views torchtitan's Llama hands it; each step's "next_kv =
 *    torch.cat([key.flatten(), value.flatten()])" holds a concatenated
 *    copy; the allgather rotater keeps every rank's chunk ("Allgather
 *    the kv ... Only one communication will be done": cp chunks, held
 *    to the loop's end), the alltoall one the chunk arriving beside the
 *    one in hand: cp + 2 (allgather) or 3 (alltoall) kvb;
 *  - the K and V gradients in fp32 ("accum_dtype = torch.float32",
 *    "grad_key = torch.zeros_like(key, dtype=accum_dtype)"), always on
 *    the all-to-all rotater ("dkv_rotater = _create_rotater(group, 2,
 *    method=_RotateMethod.ALL_TO_ALL)"): the received pair the step
 *    adds into (or _partial_update's torch.cat copy of it), the
 *    concatenated pair sent on ("next_grad_kv = torch.cat([grad_key.
 *    flatten(), grad_value.flatten()])") and the next arriving -- three
 *    fp32 copies, 3 x 4 / A kvb;
 *  - the query gradient in fp32 ("grad_query = torch.zeros_like(query,
 *    dtype=accum_dtype)"): 4 bytes a query element.
 * The step kernels' own dQ, dK, dV are what a plain SDPA backward writes
 * too, and are not counted again.  Counted as eager PyTorch holds them at
 * the end of the first step (its K and V copies still referenced, the
 * dK/dV pair in flight); traced into a compiled block, a buffer dies at
 * its last use, so the contiguous copy can go after the first step's
 * kernel: up to 2 kvb less there, not priced apart.  Transformer Engine's p2p ring
 * (cp_ring 0) keeps other buffers, not priced here. */
static double cp_ring_bytes(const gp_model *m, const gp_train_cfg *c,
			    const gp_layout *y, double tok, double A)
{
	gp_widths w;
	double kvw, kvb;

	if (y->cp <= 1 || c->cp_ring == 0 || !c->flash)
		return 0.0;
	model_widths(m, &w);
	/* repeat_kv copies K and V to every query head (memory_act.c) */
	kvw = c->kv_repeat && w.latent == 0 && w.q > w.k ? w.q + w.o :
		w.k + w.v;
	kvb = tok * kvw / y->tp * A;
	return (c->cp_ring == 1 ? y->cp + 2.0 : 3.0) * kvb +
		3.0 * 4.0 / A * kvb + 4.0 * tok * w.q / y->tp;
}

/* DeepSpeed-Ulysses' exchange buffers (verl/utils/ulysses.py
 * all_to_all_tensor, what SeqAllToAll runs each way): "input_list =
 * [t.contiguous() for t in torch.tensor_split(local_input,
 * seq_world_size, scatter_dim)]" copies the tensor sent into N chunks,
 * "output_list = [torch.empty_like(input_list[0]) for _ in
 * range(seq_world_size)]" receives as many, and "torch.cat(output_list,
 * dim=gather_dim).contiguous()" makes the result: beside the tensor in
 * and the one out, two more of its size live while it is exchanged.
 * The largest tensor exchanged sets the peak: q (its width), k and v
 * (kv wide, or repeated to N heads where fewer: memory_act.c), the
 * attention output (o wide) forward, and their gradients, the same
 * sizes, backward.  tok: a rank's tokens of a micro-batch (seq / N);
 * every exchanged tensor holds that many elements per unit of width. */
static double ulysses_a2a_bytes(const gp_model *m, const gp_train_cfg *c,
				const gp_layout *y, double tok, double A)
{
	gp_widths w;
	double kvh, kw, big;

	if (!c->cp_ulysses || y->cp <= 1 || !c->flash)
		return 0.0;
	model_widths(m, &w);
	kvh = (double)m->kv_heads / y->tp;
	kw = c->kv_repeat && w.q > w.k ? w.q : kvh >= 1.0 && kvh < y->cp ?
		w.k * y->cp / kvh : w.k;
	big = w.q > w.o ? w.q : w.o;
	if (kw > big)
		big = kw;
	return 2.0 * tok * big / y->tp * A;
}

/* What the ZeRO stage does not change on a stage: its micro-batches in
 * flight, activations, the layer re-run in backward, the vision tower's
 * and the output layer's tensors; returns the micro-batches in flight. */
static double stage_activations(const gp_model *m,
				const gp_train_cfg *c, const gp_layout *y,
				const stage_acts *sa, int stage, int nl,
				double tok, int qhead, gp_mem_result *o)
{
	const gp_act_layer *al = &sa->al, *alm = &sa->alm;
	int first = stage == 0, last = stage == y->pp - 1;
	/* The stage's own dense and MoE layers: a dense layer of a
	 * dense-first MoE model saves no expert tensors (DeepSeek-V3's
	 * first 3 keep a 18432-wide MLP's, not 8 routed copies of each
	 * token), so a stage's activations are its layers', not nl
	 * average layers. */
	int ndense = stage_dense(m, y, stage, nl), nmoe = nl - ndense, nr;
	double inflight, A = sa->A;
	double act, avg;
	/* a hybrid stack's M and * layers (stage_kinds), and its - and E
	 * in ndense and nmoe */
	int nx[2] = { 0, 0 };
	const gp_act_layer *ax = sa->alx;

	if (m->pattern[0]) {
		int n[4];

		stage_kinds(m, y, stage, nl, n);
		ndense = n[0];
		nmoe = n[1];
		nx[0] = n[2];
		nx[1] = n[3];
	}
	act = ndense * al->total + nmoe * alm->total;
	if (nx[0] + nx[1] > 0)
		act += nx[0] * ax[0].total + nx[1] * ax[1].total;
	avg = nl > 0 ? act / nl : sa->act_layer;

	/* Micro-batches in flight on this stage.  1F1B (Narayanan et al.
	 * 2021 sec. 2.2.1): stage k holds min(m, p - k); interleaved with
	 * v chunks: the first stage holds p (1 + (p-1)/(p v)) micro-batches
	 * worth of its layers (Korthikanti et al. 2022 sec. 4.2.3). */
	if (y->pp == 1) {
		inflight = 1;
	} else if (c->lay.schedule == GP_SCHED_INTERLEAVED && y->vpp > 1) {
		inflight = first ? y->pp * (1.0 + (y->pp - 1.0) /
					     ((double)y->pp * y->vpp)) :
			y->pp - stage;
	} else {
		inflight = y->pp - stage;
	}
	/* A schedule call of m micro-batches holds no more than m: the
	 * warm-up's "num_warmup_microbatches = min(num_warmup_microbatches,
	 * num_microbatches)" (Megatron-LM@d98e8a64 megatron/core/
	 * pipeline_parallel/schedules.py forward_backward_pipelining_
	 * without_interleaving; interleaved, get_pp_rank_microbatches: "if
	 * num_warmup_microbatches >= total_num_microbatches:
	 * num_warmup_microbatches = total_num_microbatches", m v chunk
	 * passes, m micro-batches' worth of the stage's layers).  m is one
	 * call's (lay.microbatches: pp_microbatches when a step runs
	 * several calls, train.c mem_microbatches), not the step's. */
	if (c->lay.microbatches > 0 && inflight > c->lay.microbatches)
		inflight = c->lay.microbatches;
	o->inflight = inflight;
	o->act_layer = sa->act_layer;
	o->bytes[GP_MEM_ACTIVATIONS] = (act -
		(first && nl > 0 ? sa->first_less : 0) +
		(first ? sa->enc_extra : 0)) * inflight;
	/* Megatron's block method: the first recompute_layers layers of
	 * each model chunk (layout_stage_recomputed) keep their input only,
	 * the others all they save without recompute (al.full); when that
	 * is every layer of the stage, the full recompute above. */
	nr = c->recompute == GP_RECOMPUTE_FULL && c->recompute_layers > 0 ?
		layout_stage_recomputed(y, m->layers, stage, nl,
					c->recompute_layers) : nl;
	if (nr < nl) {
		double keep = ((double)ndense * al->full +
			       (double)nmoe * alm->full +
			       (double)nx[0] * ax[0].full +
			       (double)nx[1] * ax[1].full) / nl;

		o->bytes[GP_MEM_ACTIVATIONS] = (avg * nr + keep * (nl - nr) +
			(first ? sa->enc_extra : 0)) * inflight;
	}
	if (c->act_offload_layers > 0 && nl > 1) {
		/* Transformer Engine's activation offload (transformer_
		 * engine/pytorch/cpu_offload.py, v2.9, AsyncDoubleBuffer
		 * GroupOffloadHandler, which Megatron-Core's cpu_offloading
		 * builds through get_cpu_offload_context): the saved tensors
		 * of the first N layers are copied to pinned host memory on
		 * a side stream, group i's copy freed at the commit of
		 * layer layer_window_map[i] ("Time to free the activation
		 * memory after usage").  While the stage's last layer runs
		 * its forward, groups 0..N-2 are freed and group N-1 is
		 * still being copied: nl - N + 1 layers are resident, and
		 * the backward's reloads come back one group a window, as
		 * later layers free theirs. */
		int n = c->act_offload_layers < nl ? c->act_offload_layers :
			nl - 1;

		o->bytes[GP_MEM_ACTIVATIONS] -= avg * (n - 1) * inflight;
		/* The host holds what left the GPU: each of the N groups
		 * is copied into pinned CPU tensors of its own (cpu_offload.
		 * py's offload: "torch.empty(..., device="cpu",
		 * pin_memory=...)" per saved tensor) and kept until the
		 * backward reloads it, for every micro-batch in flight --
		 * N x avg x inflight a GPU, held on its host beside any
		 * optimizer offload (mem_host_fit). */
		o->host_acts = avg * n * inflight;
		o->cpu_bytes += o->host_acts;
		if (o->bytes[GP_MEM_ACTIVATIONS] < 0)
			o->bytes[GP_MEM_ACTIVATIONS] = 0;
	}
	if (c->ckpt_offload && c->recompute == GP_RECOMPUTE_FULL && nl > 0) {
		/* Full recompute's checkpoints in host memory: PyTorch's
		 * checkpoint_wrapper(offload_to_cpu=True) runs the
		 * checkpoint under torch.autograd.graph.save_on_cpu(
		 * pin_memory=True), whose pack hook copies each saved
		 * tensor -- the checkpoint's input, the layer's whole
		 * checkpoint -- into a pinned CPU tensor ("torch.empty(...,
		 * pin_memory=...)", "copy_(tensor)") and whose unpack hook
		 * brings it back for the re-run ("tensor.to(device,
		 * non_blocking=pin_memory)"); DeepSpeed's cpu_checkpointing
		 * likewise (checkpointing.py CheckpointFunction:
		 * "copy_to_device(args, device=torch.device('cpu'), ...)",
		 * the backward's "move_to_device(..., cuda_device, ...)").
		 * The GPU keeps the one layer input being run or re-run;
		 * the host holds every layer's, for each micro-batch in
		 * flight, beside any optimizer offload (mem_host_fit). */
		o->bytes[GP_MEM_ACTIVATIONS] -= avg * (nl - 1) * inflight;
		if (o->bytes[GP_MEM_ACTIVATIONS] < 0)
			o->bytes[GP_MEM_ACTIVATIONS] = 0;
		o->host_acts = avg * nl * inflight;
		o->cpu_bytes += o->host_acts;
	}
	if (first && c->dropout)
		/* Embedding dropout mask (Korthikanti sec. 4.3: sbhp). */
		o->bytes[GP_MEM_ACTIVATIONS] += tok * m->hidden * inflight /
			(c->lay.sp ? y->tp : 1);
	/* One layer re-run during backward: full recompute rebuilds a
	 * whole layer, selective (or a listed core_attn:
	 * mem_core_attn_recomputed) its core attention. */
	if (nl == 0)
		;  /* no layer on this stage to re-run */
	else if (c->recompute == GP_RECOMPUTE_FULL)
		o->bytes[GP_MEM_RECOMPUTE] = fmax((ndense ? al->full : 0) >
			(nmoe ? alm->full : 0) ? al->full : alm->full,
			fmax(nx[0] ? ax[0].full : 0, nx[1] ? ax[1].full : 0));
	else if (mem_core_attn_recomputed(c->recompute,
					  c->recompute_modules))
		/* a hybrid stack's core attention is its * layers' */
		o->bytes[GP_MEM_RECOMPUTE] = m->pattern[0] ?
			(nx[1] ? ax[1].core : 0.0) : al->core;
	else if (c->recompute == GP_RECOMPUTE_OP)
		/* the op policy (act.c): what a layer did not keep is
		 * rebuilt for its backward (dense layers only) */
		o->bytes[GP_MEM_RECOMPUTE] = fmax(0.0, al->full - al->total);
	/* recompute_modules rebuild one layer's dropped tensors at a
	 * time in its backward. */
	if (nl > 0 && c->recompute != GP_RECOMPUTE_FULL) {
		double r = fmax(fmax(ndense ? al->rebuilt : 0,
				     nmoe ? alm->rebuilt : 0),
				fmax(nx[0] ? ax[0].rebuilt : 0,
				     nx[1] ? ax[1].rebuilt : 0));

		if (r > o->bytes[GP_MEM_RECOMPUTE])
			o->bytes[GP_MEM_RECOMPUTE] = r;
	}
	/* An encoder layer re-run may be the larger working set. */
	if (m->encoder_layers > 0 &&
	    (c->recompute == GP_RECOMPUTE_FULL ||
	     mem_core_attn_recomputed(c->recompute, c->recompute_modules))) {
		double e = c->recompute == GP_RECOMPUTE_FULL ? sa->ale.full :
			sa->ale.core;

		if (e > o->bytes[GP_MEM_RECOMPUTE])
			o->bytes[GP_MEM_RECOMPUTE] = e;
	}
	if (first) {
		o->bytes[GP_MEM_VISION] = sa->vis * inflight;
		if (sa->vis_full > o->bytes[GP_MEM_RECOMPUTE])
			o->bytes[GP_MEM_RECOMPUTE] = sa->vis_full;
	}
	if (last) {
		/* Output layer (Korthikanti sec. 4.3): the final norm input
		 * and the projection input, h each, and the logits kept
		 * for the loss, vocab-parallel over t.  A frozen 16-bit
		 * output layer (LoRA, and QLoRA unless quant_head) keeps
		 * no input; a 4-bit one keeps it (MatMul4Bit).  The final
		 * norm keeps what a layer's norm does (mem_norm_bytes:
		 * Hugging Face's eager RMSNorm its fp32 upcast).  Where
		 * the head's output is gathered to Replicate
		 * (replicated_logits: PyTorch's ColwiseParallel(
		 * output_layouts=Replicate()): torch/distributed/
		 * tensor/parallel/style.py ColwiseParallel.
		 * _prepare_output_fn, "# outputs is a shard on last
		 * dimension DTensor, i.e. Shard(-1)" ... "outputs =
		 * outputs.redistribute(placements=output_layouts",
		 * an all-gather; KempnerForge's tensor_parallel.py:
		 * "Output head: ColwiseParallel (split vocab, gather to
		 * Replicate for loss)") every TP rank keeps all V
		 * logits of its tokens and the loss over them, not
		 * V/t.
		 * That loss is a plain F.cross_entropy over the
		 * gathered 16-bit logits, outside the compiled model
		 * (KempnerForge's training/loss.py cross_entropy_loss:
		 * "F.cross_entropy(logits.view(-1, logits.size(-1)),
		 * flat_labels, ignore_index=-100)"; the head is a bf16
		 * nn.Linear under MixedPrecisionPolicy(param_dtype=
		 * bfloat16) and nothing upcasts its output), and its
		 * backward holds four T x V tensors in that dtype at
		 * once: the logits the caller keeps (scripts/train.py
		 * "logits = model(...)" lives through backward),
		 * log_softmax's saved output (ATen LossNLL.cpp
		 * cross_entropy_loss: "at::log_softmax(self, class_dim,
		 * self.scalar_type())"; derivatives.yaml _log_softmax:
		 * "self: _log_softmax_backward_data(grad, result, dim,
		 * self.scalar_type())", so result is saved), nll_loss's
		 * dense gradient (cuda/Loss.cu nll_loss_backward: a
		 * grad_input of the log-probabilities' shape and dtype,
		 * zeroed, the target entries written) and log_softmax's
		 * gradient written while the other three live: 4 A a
		 * logit where no logit_bytes is stated. */
		/* Under autocast (c->autocast, fp32 weights) the head
		 * returns 16-bit logits and F.cross_entropy runs
		 * log_softmax in fp32 (PyTorch autocast_mode.h
		 * AT_FORALL_FP32_SET_OPT_DTYPE lists log_softmax:
		 * "fp32_set_opt_dtype", its dtype set to float; nll_loss
		 * in AT_FORALL_FP32): its saved output is fp32, and at the
		 * loss's backward nll_loss's dense gradient and
		 * log_softmax's gradient, both fp32, live beside it (as
		 * for the replicated logits above), with the 16-bit
		 * logits the caller holds (nanoVLM's forward returns
		 * them, measure_vram.py "_, loss = model(...)" keeps them
		 * across loss.backward()): A + 3 x 4 B a logit. */
		double lb = c->logit_bytes > 0 ? c->logit_bytes :
			c->replicated_logits ? 4.0 * A :
			c->autocast && !c->llm_frozen && c->lora_rank == 0 ?
			A + 12.0 : 4.0;
		double vsh = c->replicated_logits ? 1.0 : y->tp;
		double nin = c->lora_rank > 0 && !qhead ? 1.0 : 2.0;
		int fz = c->lora_rank > 0 || c->llm_frozen;
		/* under autocast the final norm reads the fp32 stream and
		 * keeps fp32 tensors (memory_act.c act_autocast); the head
		 * keeps its 16-bit cast of the norm's output (the A). */
		double fn = mem_norm_bytes(m, c->eager_norm, fz,
					   c->autocast && !fz ? 4.0 : A);

		o->bytes[GP_MEM_LOGITS] = tok * ((fn + (nin - 1.0) * A) *
			m->hidden / (c->lay.sp ? y->tp : 1) +
			(double)m->vocab * lb / vsh);
		if (c->fused_linear_ce) {
			/* Liger-Kernel's fused linear cross-entropy
			 * (ops/fused_linear_cross_entropy.py at v0.8.0):
			 * "Since Cross Entropy Loss is the last layer, we
			 * can compute the gradient at the forward pass".
			 * Its forward holds grad_input ("torch.zeros_like(
			 * _input)", T x h in the input's dtype: it takes
			 * the place of the head input a plain linear
			 * saves, kept even where the head is frozen),
			 * the fp32 per-token loss_1d and, where the head
			 * trains, grad_weight ("torch.zeros_like(weight)",
			 * V x h in the weight's 16-bit dtype), and for one
			 * chunk (mem_liger_chunk) "logits_chunk =
			 * _input_chunk @ weight.t()" (chunk x V, its
			 * gradient written in place by the cross-entropy
			 * kernel) while "grad_weight += torch.mm(
			 * grad_logits_chunk.t(), _input_chunk).float()"
			 * adds a V x h product in the 16-bit dtype and
			 * its fp32 copy.  Nothing else of the loss lives:
			 * ctx.save_for_backward keeps grad_input and
			 * grad_weight alone. */
			double vt = (double)m->vocab / y->tp;
			double ch = mem_liger_chunk(tok, vt, m->hidden);
			int head_trains = !(c->lora_rank > 0 ||
					    c->llm_frozen);

			o->bytes[GP_MEM_LOGITS] = tok * (fn * m->hidden /
				(c->lay.sp ? y->tp : 1) + A * m->hidden +
				4.0) + ch * vt * A + (head_trains ?
				vt * m->hidden * (A + A + 4.0) : 0.0);
		}
		if (c->mtp_layers > 0) {
			/* Each MTP module (stage_shares): its layer saves
			 * what one of the model's last kind saves; its two
			 * input RMSNorms keep their inputs (h each) and
			 * eh_proj its 2h concatenated input; its own final
			 * norm, head input and logits are kept for its loss
			 * beside the main model's (the DeepSeek-V3 report
			 * sec. 2.2: each depth's loss from the shared
			 * OutHead).  The last stage holds inflight (1 under
			 * 1F1B) micro-batches of them. */
			double n = c->mtp_layers;
			double lay = model_moe_in(m, m->layers - 1, 1) > 0 ?
				alm->total : al->total;

			o->bytes[GP_MEM_ACTIVATIONS] += n * (lay + tok *
				(2.0 * fn + 2.0 * A) * m->hidden /
				(c->lay.sp ? y->tp : 1)) * inflight;
			o->bytes[GP_MEM_LOGITS] *= 1.0 + n;
		}
	}
	/* The CP ring's backward buffers (cp_ring_bytes) live while a
	 * layer's attention backward runs, beside the layer re-run and the
	 * activations still held.  The logits never meet them: the loss's
	 * backward and the output layer's free the logits and their
	 * gradients before the last layer's backward starts, so the stage
	 * holds the larger of the two, what the ring needs beyond the
	 * logits. */
	if (nl > 0) {
		double ring = cp_ring_bytes(m, c, y, tok, A) +
			ulysses_a2a_bytes(m, c, y, tok, A);

		if (last && c->logits_freed &&
		    (c->lora_rank > 0 || c->llm_frozen) &&
		    !c->fused_linear_ce && c->mtp_layers == 0) {
			/* logits_freed: the loop drops its own reference to
			 * the logits before backward (torchtune's
			 * _loss_step, recipes/lora_finetune_single_device.py
			 * at 1814feb17: "loss = self._loss_fn(logits,
			 * labels)" then "# free logits otherwise it peaks
			 * backward memory" / "del logits"), so what the
			 * loss saved (the 16-bit chunks its compiled
			 * cross-entropy keeps) is freed by the loss's
			 * backward, and a frozen head's backward makes only
			 * its input's gradient (no V x h weight gradient:
			 * the base does not train), which the final norm's
			 * backward consumes.  Nothing of the logits is left
			 * when the last layer's backward re-runs it: the
			 * step's working set is the larger of the turn (the
			 * logits) and the layers' backward (the re-run, the
			 * ring), not their sum. */
			double bwd = o->bytes[GP_MEM_RECOMPUTE] + ring;

			o->bytes[GP_MEM_RECOMPUTE] = fmax(0.0, bwd -
				o->bytes[GP_MEM_LOGITS]);
		} else if (ring > o->bytes[GP_MEM_LOGITS])
			o->bytes[GP_MEM_RECOMPUTE] += ring -
				o->bytes[GP_MEM_LOGITS];
	}
	return inflight;
}

/* Liger's chunk rule (memory.h). */
double mem_liger_chunk(double tokens, double vocab, double hidden)
{
	double inc = ceil(vocab / hidden), rows = ceil(tokens / inc), ch = 1.0;

	while (ch < rows)
		ch *= 2.0;
	return ch < tokens ? ch : tokens;
}

static void stage_one(const gp_model *m, const gp_train_cfg *c,
		      const gp_layout *y, const gp_params *p,
		      const stage_acts *sa, const gp_state_bytes *sbp,
		      int stage, int nl, unsigned parts, double *head,
		      gp_mem_states *st, gp_mem_result *o);

/* DualPipe (DeepSeek-V3 report arXiv:2412.19437 sec. 3.2.1, Table 2):
 * rank r holds stage r and its mirror pp-1-r -- "two copies of the
 * model parameters" over the pipeline, the shallowest and deepest
 * layers (embedding and head) on one rank (sec. 3.2.3) -- and feeds
 * micro-batches from both ends; PP+1 micro-batches of a chunk in
 * flight where 1F1B's first stage holds PP.  Each chunk holds what
 * 1F1B's stage of the same place does, stage s pp - s: DualPipe's step
 * (deepseek-ai/DualPipe dualpipe/dualpipe.py DualPipe.step, half_rank
 * h = min(r, pp-1-r), phase 0 the rank's stage h) runs "Step 1: nF0",
 * (pp/2 - h - 1) x 2 forwards of stage h, "Step 2: nF0F1", h + 1 of
 * each chunk, and "Step 3: nB1W1F1", a backward then a forward of the
 * mirror each round, so the main step's first overlapped pair
 * (_forward_backward_chunk(0, 1)) holds pp - h micro-batches of stage
 * h and h + 1 of stage pp-1-h: pp + 1 in all, Table 2's count, split
 * by stage.  Where the chunks differ (the embedding's stage and the
 * head's, dense layers first) that split decides the peak: rank 0
 * holds pp micro-batches of the first stage and one of the last.  Each
 * chunk's states, the logits and the vision tower's tensors add; one
 * layer re-runs at a time.  The whole result is written whatever the
 * parts asked (the ZeRO split's shortcut prices the two chunks as
 * one). */
static void stage_dual(const gp_model *m, const gp_train_cfg *c,
		       const gp_layout *y, const gp_params *p,
		       const stage_acts *sa, const gp_state_bytes *sbp,
		       int stage, int nl, gp_mem_result *o)
{
	gp_mem_result b;
	int i, k = y->pp - 1 - stage;

	/* nl: the stage's own layers (a result handed back holds the
	 * rank's two chunks'). */
	nl = stage_layers(m, y, stage);
	stage_one(m, c, y, p, sa, sbp, stage, nl, ST_ALL, NULL, NULL, o);
	stage_one(m, c, y, p, sa, sbp, k, stage_layers(m, y, k), ST_ALL,
		  NULL, NULL, &b);
	for (i = 0; i < GP_MEM_NTENSOR; i++)
		if (i == GP_MEM_RECOMPUTE)
			o->bytes[i] = fmax(o->bytes[i], b.bytes[i]);
		else
			o->bytes[i] += b.bytes[i];
	o->inflight += b.inflight;
	o->params += b.params;
	o->stage_layers = nl + b.stage_layers;
	o->cpu_bytes += b.cpu_bytes;
	o->host_weights += b.host_weights;
	o->host_grads += b.host_grads;
	o->host_master += b.host_master;
	o->host_optimizer += b.host_optimizer;
	o->host_acts += b.host_acts;
	o->host_ema += b.host_ema;
}

static inline void train_stage(const gp_model *m, const gp_train_cfg *c,
			const gp_layout *y, const gp_params *p,
			const stage_acts *sa, const gp_state_bytes *sbp,
			int stage, int nl, unsigned parts, double *head,
			gp_mem_states *st, gp_mem_result *o)
{
	if (c->lay.schedule == GP_SCHED_DUALPIPE && y->pp > 1)
		stage_dual(m, c, y, p, sa, sbp, stage, nl, o);
	else
		stage_one(m, c, y, p, sa, sbp, stage, nl, parts, head, st,
			  o);
}

/* The step of a plain torch.optim AdamW on its foreach path (the default
 * on CUDA; the hf stack's, as gp.train prices its passes): after the
 * backward the saved activations are gone and the gradients stay; the
 * step makes one tensor list the size of the second moment,
 * "exp_avg_sq_sqrt = torch._foreach_sqrt(device_exp_avg_sqs)", divides it
 * by the bias correction and adds eps in place, then
 * "torch._foreach_addcdiv_(device_params, device_exp_avgs,
 * exp_avg_sq_sqrt, step_size)" (torch/optim/adamw.py _multi_tensor_adamw,
 * PyTorch 2.0-2.5; torch/optim/adam.py _multi_tensor_adam, which AdamW
 * runs since 2.6).  The states are this GPU's (FSDP shards them, the
 * step runs on the shards), so the copy is c->foreach_step of
 * bytes[GP_MEM_OPTIMIZER].  Where the step's set (the gradients and the
 * copy) exceeds the backward's (the gradients, the activations, the
 * logits, the tower's, the gathered units), the step is the peak: the
 * copy counted as the step's workspace (not the states, which an
 * offload moves), the backward's tensors 0. */
static void foreach_step_phase(const gp_train_cfg *c, gp_mem_result *o)
{
	double tmp = c->foreach_step * o->bytes[GP_MEM_OPTIMIZER];
	double bwd = o->bytes[GP_MEM_ACTIVATIONS] +
		o->bytes[GP_MEM_RECOMPUTE] + o->bytes[GP_MEM_LOGITS] +
		o->bytes[GP_MEM_VISION] + o->bytes[GP_MEM_PARAM_GATHER];

	if (!(tmp > bwd))
		return;
	o->bytes[GP_MEM_WORKSPACE] += tmp;
	o->bytes[GP_MEM_ACTIVATIONS] = 0;
	o->bytes[GP_MEM_RECOMPUTE] = 0;
	o->bytes[GP_MEM_LOGITS] = 0;
	o->bytes[GP_MEM_VISION] = 0;
	o->bytes[GP_MEM_PARAM_GATHER] = 0;
}

/* stage_one's body, inlined where parts is a constant: train_zero's
 * ST_ZERO pass over a split's stages (each ZeRO stage of each phase)
 * then runs without the call and the tests of the parts it does not
 * ask.  The same statements in the same order: the same result. */
#if defined(__GNUC__)
#define STAGE_INLINE static inline __attribute__((always_inline))
#else
#define STAGE_INLINE static inline
#endif
STAGE_INLINE void stage_parts(const gp_model *m, const gp_train_cfg *c,
			      const gp_layout *y, const gp_params *p,
			      const stage_acts *sa,
			      const gp_state_bytes *sbp, int stage, int nl,
			      unsigned parts, double *head,
			      gp_mem_states *st, gp_mem_result *o)
{
	double sh[SH_N], inflight = 0, A = sa->A;
	int first = stage == 0, last = stage == y->pp - 1;
	int zero = c->lay.zero;
	/* Output layer quantised with the base: LoRA on a sub-16-bit base
	 * whose quantiser takes every linear (gp_train_cfg.quant_head); a
	 * bitsandbytes 4-bit head then keeps its input like the others. */
	int qhead = last && c->quant_head && c->lora_rank > 0 &&
		c->base.bits > 0 && mem_quant_bits(&c->base) < 16 &&
		!c->base_fp8_gemm;

	if (parts & ST_REST)
		memset(o, 0, sizeof *o);
	o->stage = stage;
	o->stage_layers = nl;
	/* head: the stage's shares, kept by ST_REST (when given) and read
	 * back by ST_ZERO alone. */
	if (head && parts == ST_ZERO) {
		memcpy(sh, head, sizeof sh);
	} else {
		stage_shares(m, c, y, p, stage, nl, sh);
		o->params = sh[SH_MINE];
		if (head)
			memcpy(head, sh, sizeof sh);
	}
	if (parts & ST_ZERO) {
		/* st: a split's store (mem_train_zero), used for full
		 * training states alone (stage_full's writes). */
		if (st && (c->lora_rank > 0 || c->offload_optimizer ||
			   c->offload_params))
			st = NULL;
		if (st && states_match(st, c, y, sh, stage, nl, qhead)) {
			states_replay(st, o);
		} else {
			stage_states(m, c, y, p, sbp, sh, first, last, qhead,
				     o, st);
			if (st)
				states_key(st, c, y, sh, stage, nl, qhead);
		}
	}
	if (parts & ST_REST)
		inflight = stage_activations(m, c, y, sa, stage, nl,
					     sh[SH_TOK], qhead, o);
	if (y->pp > 1 && c->pipe == GP_PIPE_DEEPSPEED) {
		if (parts & ST_REST)
			o->bytes[GP_MEM_PIPE_BUFFERS] = mem_ds_pipe_buffers(m, c,
				y, sh[SH_TOK], A, inflight, first, last);
		/* Last: it reads what ST_REST filled. */
		if ((parts & ST_ZERO) && c->recipe.reduce_phase &&
		    zero < 2 && c->lora_rank == 0 && !c->offload_optimizer &&
		    !c->offload_params)
			mem_ds_reduce_phase(m, c, y, sh[SH_TOK], A, sh[SH_MINE],
					first, last, o);
	}
	/* DeepSpeed's ZeRO optimizer (stages 2, 3 and stage 1's step, not offloaded, no
	 * LoRA): its gradients by phase, the backward's 16-bit partition
	 * or the step's fp32 one (memory_deepspeed.c), a frozen language
	 * model's trained projector alike.  Last: it reads what ST_REST
	 * filled. */
	if (parts & ST_ZERO) {
		/* a ZeRO split's scratch result keeps these between stages */
		o->ds_grad_phase = 0;
		o->ds_grad_bytes = 0;
		o->ds_idle_grads = o->ds_idle_bucket = 0;
		o->ds_fwd_gather = 0;
		o->ds_whole_init = 0;
	}
	if ((parts & ST_ZERO) && c->ds_zero &&
	    (zero >= 2 || (zero == 1 && !sbp->master_shard0)) &&
	    c->lora_rank == 0 && !c->grads_in_bwd &&
	    !c->paged_optimizer && !c->grads_whole &&
	    !c->offload_optimizer && !c->offload_params &&
	    sbp->weights < 4 && sbp->grads > 0)
		mem_ds_zero_phases(c, sbp, zero == 3 ? c->ds_reduce_bucket *
				   sbp->weights : 0, o);
	/* ZeRO off, fp16: DeepSpeed's FP16_Optimizer (memory_deepspeed.c) */
	if ((parts & ST_ZERO) && c->ds_zero && zero == 0 &&
	    !c->before_step && c->ds_fp16_step > 0 && !sbp->master_shard0 &&
	    c->lora_rank == 0 && !c->grads_in_bwd && !c->paged_optimizer &&
	    sbp->weights < 4 && sbp->grads > 0)
		mem_ds_fp16_step(c, sbp, o);
	/* ZeRO off or FSDP, a plain torch.optim AdamW: its foreach step */
	if ((parts & ST_ZERO) && c->foreach_step > 0 && !c->ds_zero &&
	    !c->before_step &&
	    c->lora_rank == 0 && !c->grads_in_bwd && !c->paged_optimizer &&
	    !c->offload_optimizer && !c->offload_params)
		foreach_step_phase(c, o);
	/* ZeRO-3 on a model built outside deepspeed.zero.Init: the moment
	 * the engine holds this GPU's module whole, before partitioning
	 * (memory_deepspeed.c).  Its first parameter is the embedding on
	 * the first stage (a Hugging Face model's embed_tokens, first in
	 * module.parameters()); a later stage's is a layer's first weight,
	 * whose partition (under 1/dp of a layer) is not priced.  Full
	 * training only (gp.memory refuses it with LoRA).  Last: it reads
	 * what ST_REST filled. */
	if ((parts & ST_ZERO) && c->ds_zero && zero == 3 &&
	    c->ds_whole_init && c->lora_rank == 0)
		mem_ds_whole_init(c, sbp, sh[SH_DENSE] + sh[SH_EXPERT],
				  first ? p->embedding / y->tp / y->shard :
				  0.0, o);
}

static void stage_one(const gp_model *m, const gp_train_cfg *c,
		      const gp_layout *y, const gp_params *p,
		      const stage_acts *sa, const gp_state_bytes *sbp,
		      int stage, int nl, unsigned parts, double *head,
		      gp_mem_states *st, gp_mem_result *o)
{
	stage_parts(m, c, y, p, sa, sbp, stage, nl, parts, head, st, o);
}

/* The tensors' bytes added in order, four a round: the same sums as
 * one a round (the order is the order), with a quarter of the loop's
 * count and branch (a ZeRO split adds these every stage of every ZeRO
 * stage it finishes). */
static double tensor_sum(const gp_mem_result *r)
{
	const double *b = r->bytes;
	double s = 0;
	int i;

	for (i = 0; i + 4 <= GP_MEM_NTENSOR; i += 4) {
		s += b[i];
		s += b[i + 1];
		s += b[i + 2];
		s += b[i + 3];
	}
	for (; i < GP_MEM_NTENSOR; i++)
		s += b[i];
	return s;
}

/* What a stage of nl layers holds besides its place: the layers and how
 * many of them are dense; a hybrid stack's layers and its M, * and -
 * layers (stage_kinds; the rest E), 11 bits each (GP_PATTERN_MAX). */
static long long stage_mix(const gp_model *m, const gp_layout *y, int k,
			   int nl)
{
	int n[4];

	if (!m->pattern[0])
		return (long long)nl << 32 | (unsigned)stage_dense(m, y, k, nl);
	stage_kinds(m, y, k, nl, n);
	return (long long)nl << 33 | (long long)n[2] << 22 |
		(long long)n[3] << 11 | n[0];
}

/* What a stage's memory depends on besides its place (stage_mix). */
static long long stage_key(const gp_model *m, const gp_layout *y, int k)
{
	return stage_mix(m, y, k, stage_layers(m, y, k));
}

/* The stage train_stages prices after stage k (k -1: the first), or -1
 * when none is left; *nl its layers.  Middle stages with the same layers
 * (count and dense share) differ only in micro-batches in flight, which
 * fall with k (p - k), so the first stage of each run of equal ones
 * stands for its run (stage 1 always starts one).  DualPipe's ranks
 * (stage_dual) are 0 .. pp/2 - 1 (rank pp-1-r holds rank r's two
 * stages, with the same micro-batches in flight); along a run of ranks
 * whose two stages are alike one stage's in-flight count falls as the
 * other's rises, so the first and the last rank of each run stand for
 * it. */
static int next_stage(const gp_model *m, const gp_train_cfg *c,
		      const gp_layout *y, int k, int *nl)
{
	int j, prev = k <= 0 ? -1 : stage_layers(m, y, k);
	long long pk = k < 0 ? -1 : stage_key(m, y, k), key;

	if (c->lay.schedule == GP_SCHED_DUALPIPE && y->pp > 1) {
		int half = y->pp / 2;

		for (j = k + 1; j < half; j++) {
			long long pm, km, nk, nm;

			*nl = stage_layers(m, y, j);
			if (j == 0 || j == half - 1)
				return j;
			key = stage_key(m, y, j);
			km = stage_key(m, y, y->pp - 1 - j);
			pk = stage_key(m, y, j - 1);
			pm = stage_key(m, y, y->pp - j);
			nk = stage_key(m, y, j + 1);
			nm = stage_key(m, y, y->pp - 2 - j);
			if (key != pk || km != pm || key != nk || km != nm)
				return j;
		}
		return -1;
	}
	for (j = k + 1; j < y->pp; j++) {
		*nl = stage_layers(m, y, j);
		/* stage_key(m, y, j) of the layers just counted, asked only
		 * when it decides */
		if (j > 0 && j < y->pp - 1 && *nl == prev &&
		    stage_mix(m, y, j, *nl) == pk)
			continue;
		return j;
	}
	return -1;
}

/* The stages of layout y (split already), the most loaded kept (the
 * earliest of equals). */
static int train_stages(const gp_model *m, const gp_params *p,
			const gp_train_cfg *c, const gp_layout *y,
			const stage_acts *sa, gp_mem_result *out,
			gp_error *err)
{
	gp_mem_result r0;
	gp_state_bytes sb;
	double best, v;
	int k, nl = 0;

	if (mem_state_bytes(&c->recipe, &c->optim, &sb, err))
		return GP_EINVAL;
	k = next_stage(m, c, y, -1, &nl);
	train_stage(m, c, y, p, sa, &sb, k, nl, ST_ALL, NULL, NULL, out);
	best = tensor_sum(out);
	while ((k = next_stage(m, c, y, k, &nl)) >= 0) {
		train_stage(m, c, y, p, sa, &sb, k, nl, ST_ALL, NULL, NULL,
			    &r0);
		v = tensor_sum(&r0);
		if (v > best) {
			best = v;
			*out = r0;
		}
	}
	return GP_OK;
}

static int train_core(const gp_model *m, const gp_train_cfg *c,
		      gp_mem_result *out, gp_layout *y, gp_error *err)
{
	gp_acts_key k;
	gp_params p;
	stage_acts sa;

	if (check_train(m, c, y, err))
		return GP_EINVAL;
	if (gp_check_pos(c->seq, "seq", err) ||
	    gp_check_pos(c->lay.micro_batch, "micro_batch", err))
		return GP_EINVAL;
	if (model_params(m, &p, err))
		return GP_EINVAL;
	mem_stage_split(m, c, &p, y);
	mem_acts_key_of(m, c, y, &k);
	if (mem_stage_acts_of(m, &k, &sa, err))
		return GP_EINVAL;
	return train_stages(m, &p, c, y, &sa, out, err);
}

int mem_train_prepared(const gp_model *m, const gp_params *p,
		       const gp_train_cfg *c, const gp_layout *y,
		       double capacity, const gp_mem_reserve *r,
		       gp_mem_memo *memo, gp_mem_result *out, gp_error *err)
{
	stage_acts buf;
	const stage_acts *sa = NULL;

	if (!m || !p || !c || !y || !out)
		return gp_fail(err, "mem_train_prepared: missing argument");
	if (check_reserve(r, capacity, err) ||
	    mem_memo_acts(m, c, y, memo, &buf, &sa, err) ||
	    train_stages(m, p, c, y, sa, out, err))
		return GP_EINVAL;
	finish(out, capacity, r);
	return GP_OK;
}

typedef char stage_acts_fits_split[sizeof(stage_acts) <=
	sizeof(((gp_mem_split *)0)->acts) ? 1 : -1];

int mem_train_split(const gp_model *m, const gp_params *p,
		    const gp_train_cfg *c, const gp_layout *y,
		    double capacity, const gp_mem_reserve *r,
		    gp_mem_memo *memo, gp_mem_split *s, gp_error *err)
{
	stage_acts buf;
	const stage_acts *sa = NULL;
	int k, nl = 0;

	if (!m || !p || !c || !y || !s)
		return gp_fail(err, "mem_train_split: missing argument");
	if (c->offload_optimizer || c->offload_params)
		return gp_fail(err, "mem_train_split: an offloaded config is "
			       "priced by mem_train_prepared (its checks read "
			       "the ZeRO stage)");
	if (check_reserve(r, capacity, err) ||
	    mem_memo_acts(m, c, y, memo, &buf, &sa, err) ||
	    mem_state_bytes(&c->recipe, &c->optim, &s->sb, err))
		return GP_EINVAL;
	memcpy(s->acts, sa, sizeof *sa);
	/* The stages train_stages prices, in its order. */
	s->n = 0;
	for (k = next_stage(m, c, y, -1, &nl); k >= 0;
	     k = next_stage(m, c, y, k, &nl)) {
		if (s->n == GP_MEM_SPLIT_N)
			return gp_fail(err, "mem_train_split: pp %d has more "
				       "than %d distinct stages", y->pp,
				       GP_MEM_SPLIT_N);
		train_stage(m, c, y, p, sa, &s->sb, k, nl, ST_REST,
			    s->head[s->n], NULL, &s->rest[s->n]);
		s->work[s->n] = s->rest[s->n];
		s->n++;
	}
	return GP_OK;
}

void mem_split_forget(gp_mem_split *s)
{
	int z, i;

	for (z = 0; z < 4; z++)
		for (i = 0; i < GP_MEM_SPLIT_N; i++)
			s->st[z][i].ok = 0;
}

static int train_zero(const gp_model *m, const gp_params *p,
		      const gp_train_cfg *c, const gp_layout *y,
		      double capacity, const gp_mem_reserve *r,
		      gp_mem_split *s, const gp_mem_result **res, int pick,
		      gp_error *err)
{
	const stage_acts *sa;
	double best = 0, v;
	int i, bi = 0, dual;

	if (!m || !p || !c || !y || !s || !res || s->n < 1)
		return gp_fail(err, "mem_train_zero: missing argument");
	if (c->lay.zero < 0 || c->lay.zero > 3)
		return gp_fail(err, "zero must be 0, 1, 2 or 3 (got %d)",
			       c->lay.zero);
	sa = (const stage_acts *)(const void *)s->acts;
	/* train_stage's choice, once for the stages */
	dual = c->lay.schedule == GP_SCHED_DUALPIPE && y->pp > 1;
	/* Each stage on its scratch copy: the split's share back in place
	 * (what the ZeRO stage's own share writes or reads: the tensors
	 * and the trainable count; the rest finish writes or the stage
	 * never changes), then this stage's share.  train_stages' choice:
	 * the first stage, then any later one that holds more. */
	for (i = 0; i < s->n; i++) {
		gp_mem_result *w = &s->work[i];

		memcpy(w->bytes, s->rest[i].bytes,
		       GP_MEM_NTENSOR * sizeof w->bytes[0]);
		w->trainable = s->rest[i].trainable;
		if (dual)
			stage_dual(m, c, y, p, sa, &s->sb, w->stage,
				   w->stage_layers, w);
		else
			stage_parts(m, c, y, p, sa, &s->sb, w->stage,
				    w->stage_layers, ST_ZERO, s->head[i],
				    &s->st[c->lay.zero][i], w);
		v = tensor_sum(w);
		if (i == 0 || v > best) {
			best = v;
			bi = i;
		}
	}
	/* best is the tensors' sum finish would add again. */
	if (pick)
		finish_sum(&s->work[bi], best, capacity, r, 0.0);
	else
		finish_fit(&s->work[bi], best, capacity, r, 0.0);
	*res = &s->work[bi];
	return GP_OK;
}

int mem_train_zero(const gp_model *m, const gp_params *p,
		   const gp_train_cfg *c, const gp_layout *y,
		   double capacity, const gp_mem_reserve *r,
		   gp_mem_split *s, const gp_mem_result **res, gp_error *err)
{
	return train_zero(m, p, c, y, capacity, r, s, res, 1, err);
}

int mem_train_zero_fit(const gp_model *m, const gp_params *p,
		       const gp_train_cfg *c, const gp_layout *y,
		       double capacity, const gp_mem_reserve *r,
		       gp_mem_split *s, const gp_mem_result **res,
		       gp_error *err)
{
	return train_zero(m, p, c, y, capacity, r, s, res, 0, err);
}

int mem_train(const gp_model *m, const gp_train_cfg *c, double capacity,
	      const gp_mem_reserve *r, gp_mem_result *out, gp_error *err)
{
	gp_layout y;

	if (!out)
		return gp_fail(err, "mem_train: NULL output");
	if (check_reserve(r, capacity, err))
		return GP_EINVAL;
	if (train_core(m, c, out, &y, err))
		return GP_EINVAL;
	finish(out, capacity, r);
	return GP_OK;
}
