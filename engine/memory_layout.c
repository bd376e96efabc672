/*
 * memory_layout.c - a training config's checks (the model's, the
 * layout's, the recipe's) and its pipeline partition: the layers each
 * stage holds by DeepSpeed's partition methods.  The public entry points
 * that only lay out (mem_layout, mem_layout_prepared, mem_stage_layers)
 * live here too.
 */
#include "memory_int.h"

#include <stdio.h>
#include <string.h>

/* Layers per pipeline stage (layout_split) by partition method.  Item
 * weights: 'parameters' counts each spec's trainable parameters
 * (DeepSpeed _count_layer_params) -- the embedding (first stage) and
 * the output layer or the tied embedding copy (a TiedLayerSpec built
 * again on the last stage) beside the layers; 'type:REGEX' weighs 1
 * each spec whose class name matches: transformer layers, and with
 * '|embedding' the EmbeddingPipe specs (both ends when tied). */
void mem_stage_split(const gp_model *m, const gp_train_cfg *c,
		     const gp_params *p, gp_layout *y)
{
	gp_partition part = c->partition;
	double e0 = 0, w = 1, e1 = 0;
	int L = m->layers;

	if (part == GP_PART_AUTO)
		part = c->pipe == GP_PIPE_DEEPSPEED ? GP_PART_PARAMETERS :
			GP_PART_UNIFORM;
	if (part == GP_PART_PARAMETERS &&
	    (c->lora_rank > 0 || c->llm_frozen)) {
		/* Only the adapters (or the projector) train: layers
		 * weigh alike, the frozen ends weigh nothing. */
	} else if (part == GP_PART_PARAMETERS) {
		e0 = p->embedding + p->vision -
			(c->vision_frozen ? tower_params(m, p) : 0);
		w = (p->attention + p->dense_mlp + p->router + p->norms +
		     p->experts + p->mamba) / L;
		e1 = p->lm_head > 0 ? p->lm_head : p->embedding;
	} else if (part == GP_PART_TYPE_EMB) {
		e0 = 1;
		e1 = p->lm_head > 0 ? 0 : 1;  /* an untied head is no
					       * EmbeddingPipe */
	}
	layout_split(y, L, part != GP_PART_UNIFORM, e0, w, e1);
	if (y->pp > 1 && (c->first_stage_layers > 0 ||
			  c->last_stage_layers > 0)) {
		/* Megatron-Core's uneven pipeline split (TransformerConfig
		 * num_layers_in_first_pipeline_stage and
		 * num_layers_in_last_pipeline_stage): the ends given hold
		 * their counts, the other stages the remaining layers
		 * evenly (mem_check_train_cfg checks they divide).  Stage 0
		 * takes n0, the middle ones m each, the last the rest. */
		int f = c->first_stage_layers, l = c->last_stage_layers;
		int mid = y->pp - (f > 0) - (l > 0);
		int rest = L - f - l;

		y->balanced = 1;
		y->m = mid > 0 ? rest / mid : 0;
		y->n0 = f > 0 ? f : y->m;
	}
	if (y->pp > 1 && y->stages.n == y->pp) {
		/* The layers of each stage as the job states them
		 * (gp_stage_list: nanotron's cost-balanced split, a
		 * pipeline_model_parallel_layout's ranks); stage_ends_check
		 * has checked pp entries summing to the model's layers. */
		y->balanced = 2;
		y->n0 = y->stages.v[0];
		y->m = y->stages.v[1];
	}
	if (y->pp > 1 && c->split_ends) {
		/* Megatron-Core's account_for_embedding_in_pipeline_split
		 * and account_for_loss_in_pipeline_split ("the embedding
		 * layer will be treated as a standard transformer layer in
		 * the context of partition and placement for pipeline
		 * parallelism", transformer_config.py): L + 2 slots split
		 * evenly, the first stage giving one to the embedding and
		 * the last one to the loss -- Llama 3 405B's pipeline
		 * (arXiv 2407.21783 sec. 3.3.2: "we reduce one Transformer
		 * layer each from the first and the last stages").
		 * stage_ends_check has checked pp divides L + 2. */
		int s = (L + 2) / y->pp;

		y->balanced = 1;
		y->m = s;
		y->n0 = s - 1;
	}
}

/* first_stage_layers / last_stage_layers: Megatron-Core refuses a
 * split whose middle stages cannot share the remaining layers evenly
 * ("number of layers at middle stage ... must be divisible by the
 * middle pipeline model parallel size", TransformerConfig
 * __post_init__); under interleaving, a rank's totals (below). */
/* split_ends: Megatron-Core's own checks (TransformerConfig
 * __post_init__): the layers and the two ends divide over the stages
 * ("num_layers ... after enable account_for_embedding_in_pipeline_split
 * or account_for_loss_in_pipeline_split must be divisible by
 * pipeline_model_parallel_size"), a stage's slots over its model chunks
 * ("must be divisible by virtual_pipeline_model_parallel_size"), and
 * not with the ends' own layer counts. */
static int split_ends_check(const gp_model *m, const gp_train_cfg *c,
			    const gp_layout *y, gp_error *err)
{
	int slots = m->layers + 2;

	if (!c->split_ends)
		return GP_OK;
	if (y->pp < 2)
		return gp_fail(err, "split_ends applies to pipeline stages "
			       "(pp >= 2; got pp %d)", y->pp);
	if (c->first_stage_layers > 0 || c->last_stage_layers > 0 ||
	    y->stages.n > 0)
		return gp_fail(err, "split_ends: the ends' layer counts "
			       "(first_stage_layers, last_stage_layers, "
			       "stage_layers) follow from it; give one or "
			       "the other");
	if (y->schedule == GP_SCHED_DUALPIPE)
		return gp_fail(err, "split_ends: priced for 1F1B and the "
			       "interleaved schedule, not DualPipe's paired "
			       "stages");
	if (c->partition != GP_PART_AUTO && c->partition != GP_PART_UNIFORM)
		return gp_fail(err, "split_ends replaces the partition rule "
			       "(partition %s); give one or the other",
			       mem_partition_name(c->partition));
	if (!layout_split_ends_ok(m->layers, y->pp, 1))
		return gp_fail(err, "split_ends: the %d layers and the two "
			       "ends (%d) do not divide over pp %d",
			       m->layers, slots, y->pp);
	if (!layout_split_ends_ok(m->layers, y->pp, y->vpp))
		return gp_fail(err, "split_ends: a stage's %d slots do not "
			       "divide into vpp %d model chunks",
			       slots / y->pp, y->vpp);
	return GP_OK;
}

/* stage_layers (gp_stage_list): one entry a stage, each a layer at
 * least (layout_stage_list_parse), the model's layers in all; under
 * interleaving each a rank's total over its model chunks, as the ends'
 * counts are (below), its chunks by layout.c chunk_before. */
static int stage_list_check(const gp_model *m, const gp_train_cfg *c,
			    const gp_layout *y, gp_error *err)
{
	const gp_stage_list *s = &y->stages;
	long long sum = 0;
	int k;

	if (c->first_stage_layers > 0 || c->last_stage_layers > 0)
		return gp_fail(err, "stage_layers gives every stage's layers; "
			       "first_stage_layers and last_stage_layers "
			       "give the ends' with the middle even: give "
			       "one or the other");
	if (y->pp < 2)
		return gp_fail(err, "stage_layers applies to pipeline stages "
			       "(pp >= 2; got pp %d)", y->pp);
	if (s->n != y->pp)
		return gp_fail(err, "stage_layers has %d entr%s for pp %d: "
			       "one a pipeline stage, first to last", s->n,
			       s->n == 1 ? "y" : "ies", y->pp);
	for (k = 0; k < s->n; k++) {
		if (s->v[k] < 1)
			return gp_fail(err, "stage_layers: stage %d holds %d "
				       "layers; each holds one at least", k,
				       s->v[k]);
		sum += s->v[k];
	}
	if (sum != m->layers)
		return gp_fail(err, "stage_layers sums to %lld layers; the "
			       "model has %d", sum, m->layers);
	if (c->partition != GP_PART_AUTO && c->partition != GP_PART_UNIFORM)
		return gp_fail(err, "stage_layers: the split given replaces "
			       "the partition rule (partition %s); give one "
			       "or the other", mem_partition_name(c->partition));
	return GP_OK;
}

static int stage_ends_check(const gp_model *m, const gp_train_cfg *c,
			    const gp_layout *y, gp_error *err)
{
	int f = c->first_stage_layers, l = c->last_stage_layers;
	int mid, rest;
	char given[96];

	if (c->split_ends)
		return split_ends_check(m, c, y, err);
	if (y->stages.n > 0)
		return stage_list_check(m, c, y, err);

	if (f < 0 || l < 0)
		return gp_fail(err, "%s must be >= 1 (got %d)",
			       f < 0 ? "first_stage_layers" :
			       "last_stage_layers", f < 0 ? f : l);
	if (f == 0 && l == 0)
		return GP_OK;
	/* The option(s) given, as the messages below name them. */
	layout_ends_words(given, sizeof given, f, l);
	if (y->pp < 2)
		return gp_fail(err, "%s applies to pipeline stages (pp >= "
			       "2; got pp %d)", f > 0 ? "first_stage_layers"
			       : "last_stage_layers", y->pp);
	/* Under interleaving (vpp > 1) the counts are a rank's totals,
	 * all its model chunks together: what a pipeline_model_parallel_
	 * layout sums to on each rank, its chunk i sitting on rank i mod pp
	 * (Megatron-Bridge's DeepSeek-V3 layouts, recipes/deepseek/
	 * deepseek_v3.py at 00b7660 and 21d102f: "(4, 4): [[\"embedding\"] +
	 * [\"decoder\"] * 4] + [[\"decoder\"] * 4] * 14 + [[\"decoder\"] +
	 * last_layer]", 16 chunks whose ranks hold 16, 16, 16 and 13 layers
	 * and the last rank the MTP module and the loss).  The step prices a
	 * rank's layers together (train_stage.c) and its memory a rank's
	 * layers in flight (memory_train.c), so the totals are the split. */
	/* DualPipe pairs stage r with pp - 1 - r on a rank: its memory
	 * prices each chunk by its own stage's layers (memory_train.c
	 * stage_dual), its step the slowest rank's mean of its two stages
	 * (train.c dual_pair), so uneven ends pair with each other (rank 0
	 * holds both), as DeepSeek-V3's do. */
	/* The ends' counts are the split: another partition rule given
	 * with them would be ignored. */
	if (c->partition != GP_PART_AUTO && c->partition != GP_PART_UNIFORM)
		return gp_fail(err, "%s: the uneven split replaces the "
			       "partition rule (partition %s); give one or "
			       "the other", given,
			       mem_partition_name(c->partition));
	mid = y->pp - (f > 0) - (l > 0);
	rest = m->layers - f - l;
	if (rest < 0)
		return gp_fail(err, "%s: more than the model's %d layers",
			       given, m->layers);
	if (mid == 0 && rest != 0)
		return gp_fail(err, "%s: with pp %d the two ends are every "
			       "stage, so they hold all %d layers", given,
			       y->pp, m->layers);
	if (!layout_ends_ok(m->layers, y->pp, f, l))
		return gp_fail(err, "%s %s %d of the model's %d layers for "
			       "%d other stage%s: they must divide evenly, "
			       "one layer each at least", given,
			       f > 0 && l > 0 ? "leave" : "leaves", rest,
			       m->layers, mid, mid == 1 ? "" : "s");
	return GP_OK;
}

/* The config's own checks that come before its layout's: its recipe,
 * optimizer, pipeline engine and partition rule. */
static int cfg_head_check(const gp_train_cfg *c, gp_error *err)
{
	if (mem_recipe_check(&c->recipe, &c->optim, err))
		return GP_EINVAL;
	if ((int)c->pipe < 0 || c->pipe >= GP_PIPE_COUNT)
		return gp_fail(err, "unknown pipeline engine %d",
			       (int)c->pipe);
	if ((int)c->partition < 0 || c->partition >= GP_PART_COUNT)
		return gp_fail(err, "unknown pipeline partition %d",
			       (int)c->partition);
	return GP_OK;
}

/* The config's own checks that come after its layout's: LoRA, the
 * activation and logit bytes, the accumulator's, the images and the
 * encoder length, against the model. */
static int cfg_tail_check(const gp_model *m, const gp_train_cfg *c,
			  gp_error *err)
{
	if (gp_check_count(c->lora_rank, 0, "lora_rank", err) ||
	    gp_check_nonneg(c->act_bytes, "act_bytes", err) ||
	    gp_check_nonneg(c->logit_bytes, "logit_bytes", err) ||
	    gp_check_num(c->ds_accum_bytes, 0, 4, "grad_accum_bytes", err) ||
	    gp_check_num(c->reduce_bytes, 0, 8, "reduce_bytes", err))
		return GP_EINVAL;
	if (c->lora_rank > 0 && c->lora_targets == 0)
		return gp_fail(err, "LoRA rank %d given without targets",
			       c->lora_rank);
	if (c->lora_rank > 0 && c->base.bits > 0 &&
	    mem_quant_bits(&c->base) < 0)
		return gp_fail(err, "bad base weight format (bits %g, group "
			       "%d, group_bits %g)", c->base.bits,
			       c->base.group, c->base.group_bits);
	if (gp_check_nonneg(c->images, "images", err))
		return GP_EINVAL;
	if (c->images != floor(c->images))
		return gp_fail(err, "images must be a whole number per "
			       "sequence (got %g)", c->images);
	if (c->images > 0 && m->vision.layers <= 0)
		return gp_fail(err, "images %g given for a model without a "
			       "vision tower", c->images);
	if (c->images > 0 && c->seq > 0 &&
	    c->images * model_vision_tokens(m) > c->seq)
		return gp_fail(err, "%g images of %g tokens do not fit in a "
			       "sequence of %g tokens (seq counts the image "
			       "tokens)", c->images, model_vision_tokens(m),
			       c->seq);
	if (gp_check_tokens(c->enc_seq, "enc_seq", err))
		return GP_EINVAL;
	if (c->enc_seq > 0 && m->encoder_layers == 0)
		return gp_fail(err, "enc_seq %g given for a decoder-only model "
			       "(it is the encoder length of an "
			       "encoder-decoder)", c->enc_seq);
	return GP_OK;
}

/* A hybrid stack's memory is priced as its step is: its Mamba layers'
 * saved tensors for full training, their sequence whole on each GPU,
 * their layers a plain model's in the MTP modules. */
int mem_hybrid_refusal(const gp_model *m, const gp_train_cfg *c,
		       const gp_layout *y, gp_error *err)
{
	const char *w = "a hybrid stack (model.hybrid_pattern) is priced";

	if (!m->pattern[0])
		return GP_OK;
	if (y->cp > 1)
		return gp_usage(err, "cp %d: %s without context parallelism "
				"(its Mamba layers' split of the sequence is "
				"not priced): give cp 1", y->cp, w);
	if (c->lora_rank > 0)
		return gp_usage(err, "method lora or qlora (adapters of "
				"lora_rank %d): %s in full training (its "
				"Mamba layers' saved tensors with a frozen "
				"base are not priced)", c->lora_rank, w);
	if (c->llm_frozen)
		return gp_usage(err, "llm_frozen: %s in full training (its "
				"Mamba layers' saved tensors with a frozen "
				"base are not priced)", w);
	if (c->mtp_layers > 0)
		return gp_usage(err, "mtp_layers %d: %s without multi-token "
				"prediction modules", c->mtp_layers, w);
	return GP_OK;
}

/* The checks of a training config; the model's own only when
 * !model_checked (a sweep checks its model once).  cfg_checked: the
 * config's own checks (cfg_head_check, cfg_tail_check), which read
 * neither its layout nor its ZeRO stage, passed for this same config
 * before (train_prep.c: a split's later phases), and are not made
 * again; the rest run in their order, so the first that fails -- and
 * its message -- is the one it would be with them. */
int mem_check_train_cfg(const gp_model *m, const gp_train_cfg *c,
			gp_layout *y, int model_checked, int cfg_checked,
			gp_error *err)
{
	if (!c)
		return gp_fail(err, "training config: NULL");
	if (!model_checked && model_check(m, err) != GP_OK)
		return GP_EINVAL;
	if (!cfg_checked && cfg_head_check(c, err))
		return GP_EINVAL;
	{
		/* The ends' slots let a chunk hold only the embedding or
		 * the loss (layout.c check_vpp). */
		gp_layout in = c->lay;

		in.ends = c->split_ends ? 2 : 0;
		if (layout_check(m, &in, y, err))
			return GP_EINVAL;
	}
	if (stage_ends_check(m, c, y, err))
		return GP_EINVAL;
	if (mem_hybrid_refusal(m, c, y, err))
		return GP_EINVAL;
	/* Megatron-Core's conditions on cpu_offloading (TransformerConfig.
	 * __post_init__, megatron/core/transformer/transformer_config.py
	 * at core_v0.15.0): "CPU offloading can be done only for layers
	 * less than {num_layers}", "Currently there is no support for
	 * Pipeline parallelism with CPU offloading", "CPU offloading does
	 * not work when activation recomputation is enabled". */
	if (c->act_offload_layers < 0)
		return gp_fail(err, "activation_offload_layers must be >= 0 "
			       "(got %d)", c->act_offload_layers);
	if (c->act_offload_layers > 0) {
		if (c->act_offload_layers >= m->layers)
			return gp_fail(err, "activation_offload_layers %d: "
				       "Megatron-Core offloads fewer layers "
				       "than the model's %d", c->act_offload_layers,
				       m->layers);
		if (y->pp > 1)
			return gp_usage(err, "activation_offload_layers needs "
					"pp 1 (got pp %d): Megatron-Core has "
					"\"no support for Pipeline parallelism "
					"with CPU offloading\"", y->pp);
		/* none with a module list re-runs the list (the same job
		 * as selective with it: mem_core_attn_recomputed) */
		if (c->recompute != GP_RECOMPUTE_NONE ||
		    (c->recompute_modules & GP_RECMOD_ALL))
			return gp_usage(err, "activation_offload_layers needs "
					"recompute none: Megatron-Core's \"CPU "
					"offloading does not work when activation "
					"recomputation is enabled\"");
	}
	/* The checkpoint offload moves what full recompute keeps, every
	 * layer's input; the block method keeps whole layers too, which
	 * checkpoint_wrapper around every block does not. */
	if (c->ckpt_offload && (c->recompute != GP_RECOMPUTE_FULL ||
				c->recompute_layers > 0))
		return gp_usage(err, "checkpoint_offload needs recompute full "
				"over every layer (no recompute_layers): it "
				"moves the checkpoints full recompute keeps, "
				"each layer's input");
	if (!cfg_checked && cfg_tail_check(m, c, err))
		return GP_EINVAL;
	/* One stage, one context chunk: the encoder and decoder stacks are
	 * not split over pipeline stages or sequence chunks here. */
	if (m->encoder_layers > 0 && (y->pp > 1 || y->cp > 1))
		return gp_fail(err, "%s %d: an encoder-decoder model is "
			       "planned on one pipeline stage and without "
			       "context parallelism (pp 1, cp 1)",
			       y->pp > 1 ? "pp" : "cp",
			       y->pp > 1 ? y->pp : y->cp);
	/* Offload is DeepSpeed's (ZeRO-Offload, Ren et al. 2021; ZeRO-
	 * Infinity, Rajbhandari et al. 2021): its ZeRO optimizer moves the
	 * optimizer to the CPU at stages 1-3 and the parameters at stage 3
	 * only (DeepSpeed config docs, offload_param: "valid only with
	 * stage 3"); the CPU step is DeepSpeedCPUAdam with fp32 states, or
	 * a torch optimizer on the CPU tensors (DeepSpeed's
	 * zero_force_ds_cpu_optimizer false; PyTorch FSDP's CPUOffload):
	 * an 8-bit AdamW written in PyTorch (torchao's AdamW8bit) runs
	 * there too, as torchtune pairs one with fsdp_cpu_offload.  A
	 * paged optimizer pages GPU states through unified memory: not
	 * an offloaded one, and not one torchtune offers beside FSDP
	 * (docs/source/tutorials/memory_optimizations.rst: "All of our
	 * recipes support lower-precision optimizers from the torchao
	 * library.  For single device recipes, we also support
	 * bitsandbytes"; fsdp_cpu_offload is a distributed recipe's). */
	/* Whole gradients beside sharded parameters are FSDP full_shard
	 * under no_sync; at zero 0-2 the gradients' sharding is the
	 * stage's. */
	if (c->grads_whole && y->zero != 3)
		return gp_usage(err, "grads_whole needs zero 3 (got zero %d)",
			       y->zero);
	if ((c->offload_optimizer || c->offload_params) && y->zero < 1)
		return gp_usage(err, "offload needs a ZeRO stage (zero 1, 2 "
			       "or 3: DeepSpeed offloads through its ZeRO "
			       "optimizer), got zero 0");
	if (c->offload_params && y->zero != 3)
		return gp_usage(err, "offloading the parameters needs zero 3 "
			       "(DeepSpeed offload_param is a ZeRO-3 "
			       "feature), got zero %d", y->zero);
	if ((c->offload_optimizer || c->offload_params) &&
	    (c->paged_optimizer || c->grads_in_bwd))
		return gp_usage(err, "offload does not combine with %s",
			       c->paged_optimizer ?
			       "paged_optimizer (bitsandbytes pages GPU "
			       "states through unified memory; an 8-bit "
			       "AdamW stepping the offloaded partition on "
			       "the CPU is optimizer adam8bit without "
			       "paged_optimizer)" :
			       "grads_in_bwd (torchtune)");
	return GP_OK;
}

static int layout_prepared(const gp_model *m, const gp_params *p,
			   const gp_train_cfg *c, int cfg_checked,
			   gp_layout *out, gp_error *err)
{
	if (!m || !p || !out)
		return gp_fail(err, "mem_layout_prepared: missing argument");
	if (mem_check_train_cfg(m, c, out, 1, cfg_checked, err) ||
	    (!cfg_checked && gp_check_pos(c->seq, "seq", err)) ||
	    gp_check_pos(c->lay.micro_batch, "micro_batch", err))
		return GP_EINVAL;
	mem_stage_split(m, c, p, out);
	return GP_OK;
}

int mem_layout_prepared(const gp_model *m, const gp_params *p,
			const gp_train_cfg *c, gp_layout *out, gp_error *err)
{
	return layout_prepared(m, p, c, 0, out, err);
}

int mem_layout_kept(const gp_model *m, const gp_params *p,
		    const gp_train_cfg *c, gp_layout *out, gp_error *err)
{
	return layout_prepared(m, p, c, 1, out, err);
}

int mem_stage_layers(const gp_model *m, const gp_train_cfg *c, int stage,
		     int *out, gp_error *err)
{
	gp_layout y;
	gp_params p;

	if (!out)
		return gp_fail(err, "mem_stage_layers: NULL output");
	if (check_train(m, c, &y, err) || model_params(m, &p, err))
		return GP_EINVAL;
	if (stage < 0 || stage >= y.pp)
		return gp_fail(err, "stage %d is outside 0..%d", stage,
			       y.pp - 1);
	mem_stage_split(m, c, &p, &y);
	*out = stage_layers(m, &y, stage);
	return GP_OK;
}

int mem_layout(const gp_model *m, const gp_train_cfg *c, gp_layout *out,
	       gp_error *err)
{
	gp_params p;

	if (!out)
		return gp_fail(err, "mem_layout: NULL output");
	if (check_train(m, c, out, err) || model_params(m, &p, err))
		return GP_EINVAL;
	mem_stage_split(m, c, &p, out);
	return GP_OK;
}
