/*
 * memory.c - per-GPU memory breakdown: model states, activations, KV cache,
 * reserve and margin (see memory.h; recipes in states.c, per-layer
 * activations in act.c, the layout and stage split in layout.c).
 */
#include "memory.h"

#include <math.h>
#include <string.h>

static const char *const comp_names[GP_MEM_NCOMP] = {
	"weights", "grads", "master", "optimizer", "adapter", "param_gather",
	"activations", "recompute", "logits", "vision_activations",
	"pipe_buffers", "grad_reduce",
	"ref_model",
	"reward_model", "critic", "rollout_weights", "kv_cache", "workspace",
	"cuda_context", "lib_workspace", "comm_buffers", "fragmentation",
	"optimizer_paged"
};

const char *mem_comp_name(int comp)
{
	return comp >= 0 && comp < GP_MEM_NCOMP ? comp_names[comp] : "?";
}

static int dflt(int v)
{
	return v > 0 ? v : 1;
}

/* ---- reserve ------------------------------------------------------- */

void mem_reserve_default(gp_mem_reserve *r, int gpus)
{
	/* CUDA context with lazy module loading (CUDA >= 11.7): the driver
	 * state plus the kernels PyTorch/cuBLAS load, about 0.3-0.6 GiB on
	 * A100/H100 (nvidia-smi of an idle `torch.zeros(1, device="cuda")`
	 * process; NVIDIA CUDA C Programming Guide, "Lazy Loading").
	 * 0.5 GiB is the middle of that range. */
	r->context = 0.5 * 1073741824.0;
	/* cuBLAS keeps a workspace per handle and stream (PyTorch's default
	 * CUBLAS_WORKSPACE_CONFIG :4096:8 = 32 MiB on Hopper) and cuBLASLt
	 * another 32 MiB (PyTorch CUDA semantics notes): 64 MiB. */
	r->workspace = 64.0 * 1048576.0;
	/* NCCL: NCCL_BUFFSIZE 4 MiB per channel per peer, up to 32
	 * channels, for each communicator (DP, TP, PP groups) plus proxy
	 * state; 0.5 GiB covers a few communicators (NCCL environment
	 * variable docs, NCCL_BUFFSIZE / NCCL_MAX_NCHANNELS). */
	r->comm = gpus > 1 ? 0.5 * 1073741824.0 : 0.0;
	/* PyTorch's caching allocator rounds requests (512 B granules,
	 * 2 MiB / 20 MiB segments) and cannot merge split blocks across
	 * segments; reserved exceeds allocated by a few percent in steady
	 * training (PyTorch CUDA semantics, "Memory management"). */
	r->frag = 0.05;
	/* DESIGN.md: default safety margin 10% of capacity. */
	r->margin = 0.10;
}

static int check_reserve(const gp_mem_reserve *r, double capacity,
			 gp_error *err)
{
	if (gp_check_pos(capacity, "capacity", err))
		return GP_EINVAL;
	if (!r)
		return gp_fail(err, "reserve: NULL");
	if (gp_check_nonneg(r->context, "reserve.context", err) ||
	    gp_check_nonneg(r->workspace, "reserve.workspace", err) ||
	    gp_check_nonneg(r->comm, "reserve.comm", err) ||
	    gp_check_nonneg(r->frag, "reserve.frag", err) ||
	    gp_check_nonneg(r->margin, "margin", err))
		return GP_EINVAL;
	if (r->margin >= 1.0)
		return gp_fail(err, "margin must be below 1 (got %g)",
			       r->margin);
	return GP_OK;
}

/* finish_sum's order: the tensors, the four reserves, the paged states
 * last. */
typedef char paged_after_reserves[GP_MEM_PAGED == GP_MEM_NCOMP - 1 &&
	GP_MEM_FRAG == GP_MEM_PAGED - 1 &&
	GP_MEM_CONTEXT == GP_MEM_NTENSOR ? 1 : -1];

/* mem_finish with the tensors' sum (their bytes added in order) known. */
static void finish_sum(gp_mem_result *o, double sum, double capacity,
		       const gp_mem_reserve *r, double pooled)
{
	double *b = o->bytes, top;
	int i, largest = 0;

	o->allocated = sum;
	b[GP_MEM_CONTEXT] = r->context;
	b[GP_MEM_LIBWS] = r->workspace;
	b[GP_MEM_COMM] = r->comm;
	b[GP_MEM_FRAG] = r->frag * (sum - pooled);
	/* The total: every component in order but the paged optimizer
	 * states, which live in CUDA managed memory that the driver evicts
	 * to the host under pressure (the point of bitsandbytes' paged
	 * optimizers): shown, but they never make a job fail to fit.  The
	 * tensors come first (their sum is sum); the reserves follow. */
	for (i = GP_MEM_NTENSOR; i < GP_MEM_PAGED; i++)
		sum += b[i];
	top = b[0];
	for (i = 0; i < GP_MEM_PAGED; i++)
		if (b[i] > top) {
			top = b[i];
			largest = i;
		}
	o->total = sum;
	o->largest = largest;
	o->capacity = capacity;
	o->margin = r->margin * capacity;
	o->budget = capacity - o->margin;
	o->usable = o->budget - r->context - r->workspace - r->comm;
	o->short_by = o->total - o->budget;
	o->fits = o->total <= o->budget;
}

void mem_finish(gp_mem_result *o, double capacity, const gp_mem_reserve *r,
		double pooled)
{
	double sum = 0;
	int i;

	for (i = 0; i < GP_MEM_NTENSOR; i++)
		sum += o->bytes[i];
	finish_sum(o, sum, capacity, r, pooled);
}

static void finish(gp_mem_result *o, double capacity,
		   const gp_mem_reserve *r)
{
	mem_finish(o, capacity, r, 0.0);
}

/* ---- training ------------------------------------------------------ */

/* ---- training ------------------------------------------------------ */

/* Parameters of the ViT tower alone (the projector excluded). */
static double tower_params(const gp_model *m, const gp_params *p)
{
	double t = p->vision - m->vision.projector_params;

	return t > 0 ? t : 0;
}

/* Layers per pipeline stage (layout_split) by partition method.  Item
 * weights: 'parameters' counts each spec's trainable parameters
 * (DeepSpeed _count_layer_params) -- the embedding (first stage) and
 * the output layer or the tied embedding copy (a TiedLayerSpec built
 * again on the last stage) beside the layers; 'type:REGEX' weighs 1
 * each spec whose class name matches: transformer layers, and with
 * '|embedding' the EmbeddingPipe specs (both ends when tied). */
static void stage_split(const gp_model *m, const gp_train_cfg *c,
			const gp_params *p, gp_layout *y)
{
	gp_partition part = c->partition;
	double e0 = 0, w = 1, e1 = 0;
	int L = m->layers;

	if (part == GP_PART_AUTO)
		part = c->pipe == GP_PIPE_DEEPSPEED ? GP_PART_PARAMETERS :
			GP_PART_UNIFORM;
	if (part == GP_PART_PARAMETERS && c->lora_rank > 0) {
		/* Only the adapters train: layers weigh alike, the frozen
		 * ends weigh nothing. */
	} else if (part == GP_PART_PARAMETERS) {
		e0 = p->embedding + p->vision -
			(c->vision_frozen ? tower_params(m, p) : 0);
		w = (p->attention + p->dense_mlp + p->router + p->norms +
		     p->experts) / L;
		e1 = p->lm_head > 0 ? p->lm_head : p->embedding;
	} else if (part == GP_PART_TYPE_EMB) {
		e0 = 1;
		e1 = p->lm_head > 0 ? 0 : 1;  /* an untied head is no
					       * EmbeddingPipe */
	}
	layout_split(y, L, part != GP_PART_UNIFORM, e0, w, e1);
}

static int stage_layers(const gp_model *m, const gp_layout *y, int k)
{
	return layout_stage_layers(y, m->layers, k);
}

/* The checks of a training config; the model's own only when
 * !model_checked (a sweep checks its model once). */
static int check_train_cfg(const gp_model *m, const gp_train_cfg *c,
			   gp_layout *y, int model_checked, gp_error *err)
{
	if (!c)
		return gp_fail(err, "training config: NULL");
	if (!model_checked && model_check(m, err) != GP_OK)
		return GP_EINVAL;
	if (mem_recipe_check(&c->recipe, &c->optim, err))
		return GP_EINVAL;
	if ((int)c->pipe < 0 || c->pipe >= GP_PIPE_COUNT)
		return gp_fail(err, "unknown pipeline engine %d",
			       (int)c->pipe);
	if ((int)c->partition < 0 || c->partition >= GP_PART_COUNT)
		return gp_fail(err, "unknown pipeline partition %d",
			       (int)c->partition);
	if (layout_check(m, &c->lay, y, err))
		return GP_EINVAL;
	if (gp_check_count(c->lora_rank, 0, "lora_rank", err) ||
	    gp_check_nonneg(c->act_bytes, "act_bytes", err) ||
	    gp_check_nonneg(c->logit_bytes, "logit_bytes", err))
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
	 * an offloaded one. */
	/* Whole gradients beside sharded parameters are FSDP full_shard
	 * under no_sync; at zero 0-2 the gradients' sharding is the
	 * stage's. */
	if (c->grads_whole && y->zero != 3)
		return gp_fail(err, "grads_whole needs zero 3 (got zero %d)",
			       y->zero);
	if ((c->offload_optimizer || c->offload_params) && y->zero < 1)
		return gp_fail(err, "offload needs a ZeRO stage (zero 1, 2 "
			       "or 3: DeepSpeed offloads through its ZeRO "
			       "optimizer), got zero 0");
	if (c->offload_params && y->zero != 3)
		return gp_fail(err, "offloading the parameters needs zero 3 "
			       "(DeepSpeed offload_param is a ZeRO-3 "
			       "feature), got zero %d", y->zero);
	if ((c->offload_optimizer || c->offload_params) &&
	    (c->paged_optimizer || c->grads_in_bwd))
		return gp_fail(err, "offload (DeepSpeed) does not combine "
			       "with %s", c->paged_optimizer ?
			       "paged_optimizer (bitsandbytes)" :
			       "grads_in_bwd (torchtune)");
	return GP_OK;
}

static int check_train(const gp_model *m, const gp_train_cfg *c,
		       gp_layout *y, gp_error *err)
{
	return check_train_cfg(m, c, y, 0, err);
}

static double largest_linear(const gp_model *m)
{
	gp_widths w;
	double f, big;

	model_widths(m, &w);
	f = w.dense_f > w.expert_f ? w.dense_f : w.expert_f;
	big = (double)m->hidden * f;
	if ((double)m->hidden * w.q > big)
		big = (double)m->hidden * w.q;
	return big;
}

/* Stage buffers of a pipeline engine beyond the layers' saved tensors,
 * for one stage with `inflight` micro-batches between forward and
 * backward; hid = one stage output (s/cp * b * h elements, /t with
 * sequence parallel).
 *
 * Megatron-LM (the default, nothing added): its schedules keep each
 * in-flight micro-batch's received input -- the first layer's saved
 * input, counted with the activations -- and pseudo-free the output
 * once sent (megatron/core/pipeline_parallel/schedules.py,
 * deallocate_output_tensor: out.data becomes a scalar, only grad_fn
 * stays; megatron/training/arguments.py sets deallocate_pipeline_outputs
 * = True for every run).
 *
 * DeepSpeed's PipelineEngine (deepspeed/runtime/pipe/engine.py,
 * schedule.py TrainSchedule):
 *  - outputs: _exec_forward_pass stores the stage output in
 *    pipe_buffers['outputs'][id] and only _exec_backward_pass of a
 *    non-last stage sets it to None, so every micro-batch in flight
 *    keeps one.  With tensor parallelism and the default pipeline
 *    config (pipe_partitioned and grad_partitioned true, runtime/
 *    config.py get_pipeline_config) the engine zeroes the full
 *    output's .data and keeps this rank's 1/t slice (runtime/utils.py
 *    PartitionedTensor: narrow(...).clone()): hid/t each; without tp,
 *    the full output: hid each.
 *  - inputs: a non-first stage receives into pipe_recv_buf and clones
 *    it into pipe_buffers['inputs'][id], kept until _exec_send_grads.
 *    Partitioned (tp > 1), the forward all-gathers it into the full
 *    tensor the first layer reads and stores that tensor back in the
 *    buffer: the layers' saved input, nothing more.  Unpartitioned,
 *    the forward runs on a second .clone() of the buffer, so each
 *    micro-batch in flight holds one more full input: hid each.
 *  - one receive buffer (pipe_recv_buf, non-first stages) and one
 *    gradient buffer (grad_layer, non-last stages) persist, allocated
 *    once with the shapes of the (partitioned) messages: hid/t each.
 *  - the last stage's backward returns before clearing its output, so
 *    outputs[id] keeps the previous micro-batch's output while the
 *    next one runs (num_pipe_buffers = max(2, min(p - k + 1, m)) = 2
 *    there): one stale output, in Megatron-DeepSpeed's GPTModelPipe
 *    the fp32 logits (its last pipeline layer is float16_to_fp32):
 *    s/cp * b * V/t * 4 bytes.
 * The micro-batch count in flight is the schedule's (TrainSchedule
 * runs stage k's first backward after p - k forwards, Narayanan et al.
 * 2021's 1F1B). */
static double ds_pipe_buffers(const gp_model *m, const gp_train_cfg *c,
			      const gp_layout *y, double tok, double A,
			      double inflight, int first, int last)
{
	double hid = tok * m->hidden * A / (c->lay.sp ? y->tp : 1);
	double part = y->tp;  /* partitioned over tp; 1 = whole */
	double b = 0;

	if (!last)
		b += inflight * hid / part + hid / part;
	if (!first)
		b += hid / part + (y->tp == 1 ? inflight * hid : 0);
	if (last)
		b += tok * (double)m->vocab * 4.0 / y->tp;
	return b;
}

/* DeepSpeed's gradient all-reduce under BF16_Optimizer with pipeline
 * parallelism.  After the step's last backward, PipelineEngine's
 * ReduceGrads instruction (runtime/pipe/engine.py _exec_reduce_grads ->
 * _bf16_reduce_grads) hands the optimizer's flat fp32 gradient buffer
 * (bf16_optimizer.py get_grads_for_reduction: one flat tensor per param
 * group, the whole stage's grads) to buffered_allreduce_fallback with
 * elements_per_buffer = MEMORY_OPT_ALLREDUCE_SIZE (500M).  The 500M
 * bucket cannot split a tensor: allreduce_no_retain buckets whole
 * tensors, so the flat buffer goes alone, and allreduce_bucket
 * (runtime/engine.py) flattens it (one tensor: a view) and, the
 * communication dtype being bf16 whenever bf16 is enabled and none is
 * configured (engine.py communication_data_type), takes tensor.to(bf16):
 * a 2-byte copy of every gradient of the stage, live through the
 * all-reduce, then copied back into the fp32 buffer.
 *
 * It does not coexist with the activations: every micro-batch's
 * backward has run, so the layers' saved tensors, the recompute working
 * set and the loss buffers are gone.  What stays: the model states, the
 * bf16 .grad of the last backward (in the recipe's grads), the stage's
 * persistent pipe buffers (receive and gradient buffers, hid/t each)
 * and on the last stage both output buffers, the fp32 logits of the
 * step's last two micro-batches (num_pipe_buffers = 2 there, never
 * cleared).  When that moment is the larger, the breakdown reports it:
 * activations, recompute and logits 0, grad_reduce the copy. */
static void ds_reduce_phase(const gp_model *m, const gp_train_cfg *c,
			    const gp_layout *y, double tok, double A,
			    double mine, int first, int last,
			    gp_mem_result *o)
{
	double hid = tok * m->hidden * A / (c->lay.sp ? y->tp : 1);
	double keep = 0, red = mine * 2.0, bwd;

	if (!last)
		keep += hid / y->tp;
	if (!first)
		keep += hid / y->tp;
	if (last)
		keep += 2.0 * tok * (double)m->vocab * 4.0 / y->tp;
	bwd = o->bytes[GP_MEM_ACTIVATIONS] + o->bytes[GP_MEM_RECOMPUTE] +
		o->bytes[GP_MEM_LOGITS] + o->bytes[GP_MEM_VISION] +
		o->bytes[GP_MEM_PIPE_BUFFERS];
	if (keep + red <= bwd)
		return;
	o->bytes[GP_MEM_ACTIVATIONS] = 0;
	o->bytes[GP_MEM_RECOMPUTE] = 0;
	o->bytes[GP_MEM_LOGITS] = 0;
	o->bytes[GP_MEM_VISION] = 0;
	o->bytes[GP_MEM_PIPE_BUFFERS] = keep;
	o->bytes[GP_MEM_GRAD_REDUCE] = red;
}

/* Vision-language training on the first stage (Wang et al. 2024,
 * Qwen2-VL sec. 2.1: an image of P = (image_size / patch_size)^2 patches
 * runs through the ViT, attention within the image, and the projector
 * merges merge^2 neighbouring patches into one LLM token).
 * A training tower keeps what any transformer layer keeps
 * (mem_act_layer over P tokens, images * b sequences, the recompute
 * policy applied) in every ViT layer.  A frozen tower fed pixels that
 * need no grad is not recorded by autograd at all: it keeps nothing.
 * A training projector keeps its inputs: for Qwen2-VL's merger
 * (LayerNorm, then Linear, GELU, Linear over merge^2 * hidden_v wide
 * tokens) the norm input, both linear inputs and the GELU input, each
 * P * hidden_v wide per image: 4 P hidden_v elements.  *full gets the
 * working set of one tower layer re-run under recompute. */
static int vision_act(const gp_model *m, const gp_acts_key *k, double A,
		      double *saved, double *full, gp_error *err)
{
	gp_model v;
	gp_act_cfg ac;
	gp_act_layer al;
	double merge = m->vision.merge > 0 ? m->vision.merge : 1;
	double P = model_vision_tokens(m) * merge * merge;
	double imgs = k->images * k->ac.micro_batch;
	int tower = !k->vision_frozen && k->ac.lora_rank == 0;

	*saved = *full = 0;
	if (k->images <= 0)
		return GP_OK;
	if (k->ac.lora_rank == 0)
		*saved += 4.0 * P * m->vision.hidden * A * imgs;
	if (!tower)
		return GP_OK;
	model_vision_tower(m, &v);
	memset(&ac, 0, sizeof ac);
	ac.seq = P;
	ac.micro_batch = imgs;
	/* Megatron shards the encoder like the decoder when its heads
	 * allow; otherwise the tower runs whole on every TP rank. */
	ac.tp = v.heads % k->ac.tp == 0 ? k->ac.tp : 1;
	ac.act_bytes = A;
	ac.flash = k->ac.flash;
	ac.recompute = k->ac.recompute;
	ac.eager_swiglu = k->ac.eager_swiglu;
	ac.eager_softmax = k->ac.eager_softmax;
	if (mem_act_layer(&v, &ac, 0, &al, err))
		return GP_EINVAL;
	*saved += v.layers * al.total;
	if (k->ac.recompute != GP_RECOMPUTE_NONE)
		*full = k->ac.recompute == GP_RECOMPUTE_FULL ? al.full :
			al.core;
	return GP_OK;
}

/* What every pipeline stage of one layout shares, computed once per
 * layout (train_core): the saved activations of a dense and of an MoE
 * layer, what the first layer saves less when its input needs no grad,
 * and the vision tower's terms. */
typedef struct stage_acts {
	gp_act_layer al, alm;   /* dense, MoE layer (alm = al if none) */
	double A;               /* bytes per activation element */
	double act_layer;       /* average layer, dense-first MoE mixed */
	double first_less;      /* first layer of a frozen base */
	double vis, vis_full;   /* vision_act: saved, re-run working set */
	/* Encoder-decoder: an encoder layer, and what the stacks keep
	 * beyond their layers (encdec_acts) */
	gp_act_layer ale;
	double enc_extra;
	int nmoe, ndense;
} stage_acts;

/* Encoder-decoder (T5) activations beyond the decoder layers, one
 * micro-batch (Hugging Face modeling_t5.py): the encoder_layers layers
 * over the enc tokens; the encoder output, one tensor every
 * cross-attention's k and v read (kept when they keep their input, and
 * under full recompute always: torch.utils.checkpoint saves each block's
 * inputs, encoder_hidden_states among them, and the stacks' position
 * biases, [b, heads, s, s] once per stack and [b, heads, s_dec, s_enc]
 * for the cross-attention, passed to every block); the dropout masks on
 * the encoder's embedding and on each stack's final norm output.
 * Without recompute the position biases are not saved (the scores add
 * them in place) and are freed when each stack returns. */
static void encdec_acts(const gp_model *m, const gp_acts_key *k,
			stage_acts *sa)
{
	double A = sa->A, rep = k->ac.sp ? 1.0 / k->ac.tp : 1.0;
	double b = k->ac.micro_batch, sd = k->ac.seq / k->ac.cp;
	double se = k->enc_seq > 0 ? k->enc_seq : k->ac.seq;
	double x = m->encoder_layers * sa->ale.total;

	if (k->ac.recompute == GP_RECOMPUTE_FULL) {
		x += b * se * m->hidden * rep * A;
		if (m->rel_buckets > 0)
			x += b * (double)m->heads / k->ac.tp *
				(se * se + sd * sd + sd * se) * A;
	} else {
		x += sa->al.enc_out;
	}
	if (k->ac.dropout)
		x += b * m->hidden * rep * (2.0 * se + sd);
	sa->enc_extra = x;
}

/* The activation config of a layer of layout y: every input of the
 * layers' saved activations (with acts_key_of's few more). */
static void act_cfg_of(const gp_model *m, const gp_train_cfg *c,
		       const gp_layout *y, gp_act_cfg *ac)
{
	/* memset: the padding too, the memo compares the bytes */
	memset(ac, 0, sizeof *ac);
	ac->seq = c->seq;
	ac->micro_batch = c->lay.micro_batch;
	ac->tp = y->tp;
	ac->sp = c->lay.sp;
	ac->cp = y->cp;
	ac->ep = y->ep;
	ac->act_bytes = c->act_bytes > 0 ? c->act_bytes : c->recipe.act;
	ac->flash = c->flash;
	ac->dropout = c->dropout;
	ac->recompute = c->recompute;
	ac->capacity_factor = c->capacity_factor;
	ac->eager_swiglu = c->eager_swiglu;
	ac->eager_softmax = c->eager_softmax;
	ac->fused_qkv_view = c->fused_qkv_view;
	ac->lora_zero_pad = c->lora_zero_pad;
	/* Decoder layers of an encoder-decoder read the encoder tokens. */
	if (m->encoder_layers > 0)
		ac->enc_len = c->enc_seq > 0 ? c->enc_seq : c->seq;
	if (c->lora_rank > 0) {
		/* Frozen base: only adapters train.  A quantised base
		 * (bits < 16) runs through bitsandbytes-style matmuls that
		 * keep their input (see mem_act_layer). */
		ac->frozen = 1;
		ac->base_saves_input = c->base.bits > 0 &&
			mem_quant_bits(&c->base) < 16;
		ac->lora_rank = c->lora_rank;
		ac->lora_targets = c->lora_targets;
		ac->lora_dropout = c->lora_dropout;
	}
}

/* The key of a layout's saved activations: the layers' activation
 * config and what stage_acts_of reads beyond it (the vision tower's
 * images and whether it trains, the encoder's length); zeroed first,
 * the memo compares the bytes. */
static void acts_key_of(const gp_model *m, const gp_train_cfg *c,
			const gp_layout *y, gp_acts_key *k)
{
	memset(k, 0, sizeof *k);
	act_cfg_of(m, c, y, &k->ac);
	k->images = c->images;
	k->enc_seq = c->enc_seq;
	k->vision_frozen = c->vision_frozen;
}

static int stage_acts_of(const gp_model *m, const gp_acts_key *k,
			 stage_acts *sa, gp_error *err)
{
	gp_act_cfg ac = k->ac;

	memset(sa, 0, sizeof *sa);
	sa->A = ac.act_bytes;
	sa->nmoe = model_moe_layers(m);
	sa->ndense = m->layers - sa->nmoe;
	if (mem_act_layer(m, &ac, 0, &sa->al, err))
		return GP_EINVAL;
	sa->alm = sa->al;
	if (sa->nmoe > 0 && mem_act_layer(m, &ac, 1, &sa->alm, err))
		return GP_EINVAL;
	sa->act_layer = (sa->ndense * sa->al.total +
			 sa->nmoe * sa->alm.total) / m->layers;
	/* With a frozen embedding the first layer's input needs no grad:
	 * autograd keeps nothing for it until the first adapter, so its
	 * first norm input is not saved (one h per token, once; in each
	 * stack of an encoder-decoder). */
	if (ac.frozen && k->ac.recompute != GP_RECOMPUTE_FULL) {
		gp_act_layer a0;

		ac.input_nograd = 1;
		if (mem_act_layer(m, &ac, sa->ndense > 0 ? 0 : 1, &a0, err))
			return GP_EINVAL;
		sa->first_less = (sa->ndense > 0 ? sa->al.total :
				  sa->alm.total) - a0.total;
		ac.input_nograd = 0;
	}
	if (m->encoder_layers > 0) {
		/* The encoder layer: the input length, no cross block. */
		ac.seq = k->enc_seq > 0 ? k->enc_seq : k->ac.seq;
		ac.enc_len = 0;
		if (mem_act_layer(m, &ac, 0, &sa->ale, err))
			return GP_EINVAL;
		if (ac.frozen && k->ac.recompute != GP_RECOMPUTE_FULL) {
			gp_act_layer a0;

			ac.input_nograd = 1;
			if (mem_act_layer(m, &ac, 0, &a0, err))
				return GP_EINVAL;
			sa->first_less += sa->ale.total - a0.total;
		}
		encdec_acts(m, k, sa);
	}
	if (k->images > 0 &&
	    vision_act(m, k, sa->A, &sa->vis, &sa->vis_full, err))
		return GP_EINVAL;
	return GP_OK;
}

/* DeepSpeed's ZeRO defaults (deepspeed/runtime/zero/config.py,
 * DeepSpeedZeroConfig): reduce_bucket_size 5e8 elements and
 * stage3_max_reuse_distance 1e9 elements.  (Hugging Face's Trainer and
 * accelerate fill a config's "auto" values with hidden^2 and leave the
 * reuse distance alone; a config without "auto" gets these.) */
#define DS_REDUCE_BUCKET 5e8
#define DS_REUSE_DISTANCE 1e9

/* Offloaded training: DeepSpeed ZeRO-Offload (Ren et al. 2021) at stages
 * 1-3 and ZeRO-Infinity's CPU parameter offload (Rajbhandari et al. 2021)
 * at stage 3, as deepspeed/runtime/zero/stage_1_and_2.py and stage3.py
 * allocate them.  tr: trainable elements of this GPU's partition; pb:
 * bytes of their parameter dtype (16-bit, or 4 for fp32 training); big:
 * the largest trainable tensor on this GPU (elements).
 *
 * Host, per GPU (what the node needs is the sum over its GPUs):
 *  - master: the fp32 partition, a clone().float() of the parameters
 *    even when they are fp32 already (single_partition_of_fp32_groups,
 *    fp32_partitioned_groups_flat): 4 tr;
 *  - grads: its fp32 gradient (the partition's .grad, zeros on the CPU
 *    device): 4 tr; at stage 3 also grad_partitions_flat_buffer, the
 *    partitioned gradients in the parameter dtype, on the CPU when the
 *    optimizer is offloaded: pb tr;
 *  - optimizer: DeepSpeedCPUAdam's fp32 exp_avg and exp_avg_sq (4 + 4),
 *    SGD's fp32 momentum (4), an 8-bit AdamW's two 8-bit states with
 *    their block scales (states.c), per trainable element;
 *  - weights (offload_params): the 16-bit partitions of every parameter,
 *    frozen ones included (ZeRO-3 partitions the whole module): the
 *    weights (and adapter weights) the GPU would otherwise hold.
 *  DeepSpeed's own estimator (stage3.py
 *  estimate_zero3_model_states_mem_needs) counts 18 B per parameter on
 *  the host with both offloaded (2 + 4 + 4 + 8, without the stage-3
 *  accumulation partition) and multiplies by an additional_buffer_factor
 *  of 1.5 for pinned-buffer overhead; here no factor: offload pin_memory
 *  is off by default and an unpinned tensor is its size.
 *
 * GPU: no master, optimizer states or gradient partition.  The gradient
 * bucket the reduction fills (stage 3: __ipg_bucket_flat_buffer, made at
 * init; stages 1-2: ipg_buffer, made at each backward; both
 * reduce_bucket_size elements of the parameter dtype, whatever the
 * trainable count), the .grad autograd produces for one tensor before
 * it is copied into the bucket, and at stages 1-2 the
 * temp_grad_buffer_for_gpu_offload of the largest parameter: grads =
 * (bucket + big (+ big)) pb.  The gathered layers are train_stage's. */
static void train_offload(const gp_train_cfg *c, double tr, double pb,
			  double big, gp_mem_result *o)
{
	int z3 = c->lay.zero == 3;

	o->host_master = 4.0 * tr;
	o->host_grads = (4.0 + (z3 ? pb : 0.0)) * tr;
	o->host_optimizer = mem_offload_state_bytes(&c->optim) * tr;
	o->host_weights = 0;
	if (c->offload_params) {
		o->host_weights = o->bytes[GP_MEM_WEIGHTS] +
			o->bytes[GP_MEM_ADAPTER];
		o->bytes[GP_MEM_WEIGHTS] = 0;
		o->bytes[GP_MEM_ADAPTER] = 0;
	}
	o->bytes[GP_MEM_MASTER] = 0;
	o->bytes[GP_MEM_OPTIMIZER] = 0;
	o->bytes[GP_MEM_GRADS] = (DS_REDUCE_BUCKET + (z3 ? 1.0 : 2.0) * big) *
		pb;
	o->cpu_bytes = o->host_weights + o->host_grads + o->host_master +
		o->host_optimizer;
}

/* What train_stage fills: ST_REST everything the ZeRO stage does not
 * change (its activations, logits, buffers, in-flight micro-batches),
 * ST_ZERO what it does (weights, gradients, master, optimizer states,
 * adapter, gathers, offload, DeepSpeed's reduction peak) -- into a result
 * ST_REST filled.  Both: the whole stage. */
enum { ST_REST = 1, ST_ZERO = 2, ST_ALL = 3 };

static void train_stage(const gp_model *m, const gp_train_cfg *c,
			const gp_layout *y, const gp_params *p,
			const stage_acts *sa, const gp_state_bytes *sbp,
			int stage, int nl, unsigned parts, double *head,
			gp_mem_result *o)
{
	gp_state_bytes sb = *sbp;
	const gp_act_layer *al = &sa->al, *alm = &sa->alm;
	double frac, lin, nonlin, expert, dense, mine, emb, wb, inflight = 0;
	double frozen_bits = 0, per_layer_w, tok, A = sa->A;
	double off_tr = 0, off_pb = 2, off_big = 0;
	int off = c->offload_optimizer || c->offload_params;
	int first = stage == 0, last = stage == y->pp - 1;
	int nmoe = sa->nmoe, ndense = sa->ndense;
	int zero = c->lay.zero;
	/* Output layer quantised with the base: LoRA on a sub-16-bit base
	 * whose quantiser takes every linear (gp_train_cfg.quant_head); a
	 * bitsandbytes 4-bit head then keeps its input like the others. */
	int qhead = last && c->quant_head && c->lora_rank > 0 &&
		c->base.bits > 0 && mem_quant_bits(&c->base) < 16;

	if (parts & ST_REST)
		memset(o, 0, sizeof *o);
	o->stage = stage;
	o->stage_layers = nl;
	/* head: the stage's shares below, kept by ST_REST (when given) and
	 * read back by ST_ZERO alone. */
	if (head && parts == ST_ZERO) {
		frac = head[0];
		expert = head[1];
		dense = head[2];
		mine = head[3];
		tok = head[4];
		goto zero;
	}
	frac = (double)nl / m->layers;
	/* Per-layer parameters split into routed experts (sharded over
	 * EP and the experts' TP, etp) and the rest (TP only); norms are counted with the
	 * rest (replicated in truth; < 0.01%). */
	expert = p->experts * frac / ((double)y->etp * y->ep);
	dense = (p->attention + p->dense_mlp + p->router + p->norms) * frac /
		y->tp;
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
	dense += emb;
	mine = dense + expert;
	o->params = mine;
	tok = c->seq / y->cp * c->lay.micro_batch;
	if (head) {
		head[0] = frac;
		head[1] = expert;
		head[2] = dense;
		head[3] = mine;
		head[4] = tok;
	}
	if (!(parts & ST_ZERO))
		goto rest;
zero:

	wb = sb.weights;
	if (c->lora_rank > 0) {
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
			off_tr = ad_mine / y->shard;
			off_pb = sb.weights;
			off_big = (double)c->lora_rank * wide / y->tp;
		}
		if (c->base.bits > 0 && frozen_bits < 16)
			/* A 4-bit matmul dequantises the weight to 16 bits
			 * first (bitsandbytes dequantize_4bit): one matrix
			 * live at a time. */
			o->bytes[GP_MEM_WORKSPACE] = 2.0 *
				(qhead && p->lm_head > largest_linear(m) ?
				 p->lm_head : largest_linear(m)) / y->tp;
	} else {
		/* Whole gradients (grads_whole) are not sharded. */
		double wsh = zero == 3 ? 1.0 : 0.0,
			gsh = zero >= 2 && !c->grads_whole,
			osh = zero >= 1 || sb.master_shard0;
		/* A frozen ViT tower (gp_train_cfg.vision_frozen) holds
		 * its weights only: no grads, master or states. */
		double vf = first && c->vision_frozen ?
			tower_params(m, p) / y->tp : 0;
		/* Dense states shard over dp*cp, expert states over the
		 * expert-data-parallel group tp*cp*dp/(etp*ep)
		 * (Megatron-Core MoE: expert params are replicated only
		 * across EDP). */
		double dt = dense - vf, sh = y->shard, esh = y->eshard;
		/* Each sharded share divided once (stores into o could alias
		 * y's fields: the compiler would divide again each time). */
		double d_sh = dense / sh, dt_sh = dt / sh, e_sh = expert / esh;

		o->bytes[GP_MEM_WEIGHTS] = (wsh ? d_sh + e_sh :
					    dense + expert) * wb;
		o->bytes[GP_MEM_GRADS] = (gsh ? dt_sh + e_sh : dt + expert) *
			sb.grads;
		o->bytes[GP_MEM_MASTER] = (osh ? dt_sh + e_sh : dt + expert) *
			sb.master;
		o->bytes[GP_MEM_OPTIMIZER] = (osh ? dt_sh + e_sh :
					      dt + expert) * sb.optimizer;
		o->trainable = p->total -
			(c->vision_frozen ? tower_params(m, p) : 0);
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
			off_tr = (dense - vf) / y->shard + expert / y->eshard;
			off_pb = c->recipe.offload;
			off_big = big / y->tp;
		}
	}
	if (off)
		train_offload(c, off_tr, off_pb, off_big, o);
	/* ZeRO-3 / FSDP gather: the layer being computed and the one being
	 * prefetched, in full (DeepSpeed stage3_prefetch_bucket_size; FSDP
	 * limit_all_gathers keeps two in flight); ZeRO-2 and up also fill
	 * a 16-bit bucket of one layer's grads before reduce-scatter.
	 * Offloaded (DeepSpeed's coordinator, train_offload): the reuse
	 * window instead, and the gradient bucket is in grads. */
	per_layer_w = (p->per_layer_max / y->tp);
	if (zero == 3) {
		double gb = c->lora_rank > 0 ? frozen_bits / 8.0 : wb;

		o->bytes[GP_MEM_PARAM_GATHER] += gb * (off ?
			fmin(mine, DS_REUSE_DISTANCE / 2.0 + per_layer_w) :
			2.0 * per_layer_w);
	}
	if (zero >= 2 && c->lora_rank == 0 && !off && !c->grads_whole)
		o->bytes[GP_MEM_PARAM_GATHER] += per_layer_w * 2.0;

rest:
	if (!(parts & ST_REST))
		goto tail;
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
	if (c->lay.microbatches > 0 && inflight > c->lay.microbatches)
		inflight = c->lay.microbatches;
	o->inflight = inflight;
	o->act_layer = sa->act_layer;
	o->bytes[GP_MEM_ACTIVATIONS] = (sa->act_layer * nl -
		(first && nl > 0 ? sa->first_less : 0) +
		(first ? sa->enc_extra : 0)) * inflight;
	if (c->recompute == GP_RECOMPUTE_FULL && c->recompute_layers > 0 &&
	    c->recompute_layers < nl) {
		/* Megatron's block method: the first recompute_layers layers
		 * of the stage keep their input only, the others all they
		 * save without recompute (al.full). */
		double keep = ((double)sa->ndense * al->full +
			       (double)sa->nmoe * alm->full) / m->layers;

		o->bytes[GP_MEM_ACTIVATIONS] = (sa->act_layer *
			c->recompute_layers + keep * (nl - c->recompute_layers) +
			(first ? sa->enc_extra : 0)) * inflight;
	}
	if (first && c->dropout)
		/* Embedding dropout mask (Korthikanti sec. 4.3: sbhp). */
		o->bytes[GP_MEM_ACTIVATIONS] += tok * m->hidden * inflight /
			(c->lay.sp ? y->tp : 1);
	/* One layer re-run during backward: full recompute rebuilds a
	 * whole layer, selective its core attention. */
	if (nl == 0)
		;  /* no layer on this stage to re-run */
	else if (c->recompute == GP_RECOMPUTE_FULL)
		o->bytes[GP_MEM_RECOMPUTE] = (ndense ? al->full : 0) >
			(nmoe ? alm->full : 0) ? al->full : alm->full;
	else if (c->recompute == GP_RECOMPUTE_SELECTIVE)
		o->bytes[GP_MEM_RECOMPUTE] = al->core;
	/* An encoder layer re-run may be the larger working set. */
	if (m->encoder_layers > 0 && c->recompute != GP_RECOMPUTE_NONE) {
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
		 * no input; a 4-bit one keeps it (MatMul4Bit). */
		double lb = c->logit_bytes > 0 ? c->logit_bytes : 4.0;
		double nin = c->lora_rank > 0 && !qhead ? 1.0 : 2.0;
		o->bytes[GP_MEM_LOGITS] = tok * (nin * m->hidden * A /
			(c->lay.sp ? y->tp : 1) + (double)m->vocab * lb / y->tp);
	}
tail:
	if (y->pp > 1 && c->pipe == GP_PIPE_DEEPSPEED) {
		if (parts & ST_REST)
			o->bytes[GP_MEM_PIPE_BUFFERS] = ds_pipe_buffers(m, c,
				y, tok, A, inflight, first, last);
		/* Last: it reads what ST_REST filled. */
		if ((parts & ST_ZERO) && c->recipe.reduce_phase &&
		    zero < 2 && c->lora_rank == 0 && !c->offload_optimizer &&
		    !c->offload_params)
			ds_reduce_phase(m, c, y, tok, A, mine, first, last, o);
	}
}

static double tensor_sum(const gp_mem_result *r)
{
	double s = 0;
	int i;

	for (i = 0; i < GP_MEM_NTENSOR; i++)
		s += r->bytes[i];
	return s;
}

/* The stage train_stages prices after stage k (k -1: the first), or -1
 * when none is left; *nl its layers.  Middle stages with the same layer
 * count differ only in micro-batches in flight, which fall with k (p -
 * k), so the first stage of each run of equal counts stands for its run
 * (stage 1 always starts one). */
static int next_stage(const gp_model *m, const gp_layout *y, int k, int *nl)
{
	int j, prev = k <= 0 ? -1 : stage_layers(m, y, k);

	for (j = k + 1; j < y->pp; j++) {
		*nl = stage_layers(m, y, j);
		if (j > 0 && j < y->pp - 1 && *nl == prev)
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
	k = next_stage(m, y, -1, &nl);
	train_stage(m, c, y, p, sa, &sb, k, nl, ST_ALL, NULL, out);
	best = tensor_sum(out);
	while ((k = next_stage(m, y, k, &nl)) >= 0) {
		train_stage(m, c, y, p, sa, &sb, k, nl, ST_ALL, NULL, &r0);
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
	stage_split(m, c, &p, y);
	acts_key_of(m, c, y, &k);
	if (stage_acts_of(m, &k, &sa, err))
		return GP_EINVAL;
	return train_stages(m, &p, c, y, &sa, out, err);
}

int mem_layout_prepared(const gp_model *m, const gp_params *p,
			const gp_train_cfg *c, gp_layout *out, gp_error *err)
{
	if (!m || !p || !out)
		return gp_fail(err, "mem_layout_prepared: missing argument");
	if (check_train_cfg(m, c, out, 1, err) ||
	    gp_check_pos(c->seq, "seq", err) ||
	    gp_check_pos(c->lay.micro_batch, "micro_batch", err))
		return GP_EINVAL;
	stage_split(m, c, p, out);
	return GP_OK;
}

/* The memo keeps a stage_acts in its bytes. */
typedef char stage_acts_fits_memo[sizeof(stage_acts) <=
	sizeof(((gp_mem_memo *)0)->e[0].acts) ? 1 : -1];

/* The memo's stage_acts for c and y: found (the last hit first), or
 * computed and kept.  *sap points into the memo (or at buf). */
static int memo_acts(const gp_model *m, const gp_train_cfg *c,
		     const gp_layout *y, gp_mem_memo *mm, stage_acts *buf,
		     const stage_acts **sap, gp_error *err)
{
	gp_acts_key key;
	unsigned long long h;
	int i;

	acts_key_of(m, c, y, &key);
	if (!mm) {
		*sap = buf;
		return stage_acts_of(m, &key, buf, err);
	}
	i = mm->last;
	if (i < mm->n && memcmp(&mm->e[i].key, &key, sizeof key) == 0) {
		*sap = (const stage_acts *)(const void *)mm->e[i].acts;
		mm->hits++;
		return GP_OK;
	}
	h = gp_hash(&key, sizeof key);
	for (i = 0; i < mm->n; i++)
		if (mm->e[i].hash == h &&
		    memcmp(&mm->e[i].key, &key, sizeof key) == 0) {
			*sap = (const stage_acts *)(const void *)mm->e[i].acts;
			mm->last = i;
			mm->hits++;
			return GP_OK;
		}
	mm->misses++;
	if (stage_acts_of(m, &key, buf, err))
		return GP_EINVAL;
	i = mm->n < GP_MEM_MEMO_N ? mm->n++ : mm->next;
	mm->next = (mm->next + 1) % GP_MEM_MEMO_N;
	mm->e[i].key = key;
	mm->e[i].hash = h;
	memcpy(mm->e[i].acts, buf, sizeof *buf);
	mm->last = i;
	*sap = (const stage_acts *)(const void *)mm->e[i].acts;
	return GP_OK;
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
	    memo_acts(m, c, y, memo, &buf, &sa, err) ||
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
	    memo_acts(m, c, y, memo, &buf, &sa, err) ||
	    mem_state_bytes(&c->recipe, &c->optim, &s->sb, err))
		return GP_EINVAL;
	memcpy(s->acts, sa, sizeof *sa);
	/* The stages train_stages prices, in its order. */
	s->n = 0;
	for (k = next_stage(m, y, -1, &nl); k >= 0;
	     k = next_stage(m, y, k, &nl)) {
		if (s->n == GP_MEM_SPLIT_N)
			return gp_fail(err, "mem_train_split: pp %d has more "
				       "than %d distinct stages", y->pp,
				       GP_MEM_SPLIT_N);
		train_stage(m, c, y, p, sa, &s->sb, k, nl, ST_REST,
			    s->head[s->n], &s->rest[s->n]);
		s->work[s->n] = s->rest[s->n];
		s->n++;
	}
	return GP_OK;
}

int mem_train_zero(const gp_model *m, const gp_params *p,
		   const gp_train_cfg *c, const gp_layout *y,
		   double capacity, const gp_mem_reserve *r,
		   gp_mem_split *s, const gp_mem_result **res, gp_error *err)
{
	const stage_acts *sa;
	double best = 0, v;
	int i, bi = 0;

	if (!m || !p || !c || !y || !s || !res || s->n < 1)
		return gp_fail(err, "mem_train_zero: missing argument");
	if (c->lay.zero < 0 || c->lay.zero > 3)
		return gp_fail(err, "zero must be 0, 1, 2 or 3 (got %d)",
			       c->lay.zero);
	sa = (const stage_acts *)(const void *)s->acts;
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
		train_stage(m, c, y, p, sa, &s->sb, w->stage, w->stage_layers,
			    ST_ZERO, s->head[i], w);
		v = tensor_sum(w);
		if (i == 0 || v > best) {
			best = v;
			bi = i;
		}
	}
	/* best is the tensors' sum finish would add again. */
	finish_sum(&s->work[bi], best, capacity, r, 0.0);
	*res = &s->work[bi];
	return GP_OK;
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
	stage_split(m, c, &p, &y);
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
	stage_split(m, c, &p, out);
	return GP_OK;
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

/* ---- inference ----------------------------------------------------- */

/* Share of the model's KV held by one TP rank: its heads
 * (model_kv_heads_rank) of kv_heads; an MLA latent is not split by head,
 * every rank keeps it whole. */
static double kv_share(const gp_model *m, int tp)
{
	if (m->mla.kv_lora_rank > 0)
		return 1.0;
	return model_kv_heads_rank(m, tp) / m->kv_heads;
}

typedef struct mem_infer_parts {
	double weights;      /* bytes on this GPU, all its layers */
	double layer_w;      /* bytes of one layer on this GPU */
	double workspace;    /* one forward of T tokens + seqs logits rows */
	double ws_token;     /* workspace bytes per token of the forward */
	double ws_seq;       /* fp32 logits bytes per sequence sampled */
	double T;            /* tokens of the forward the workspace holds */
	double T_cap;        /* the engine's token budget: chunk_tokens, or
			      * 8192 when the caller gave none */
	int L_s;
} mem_infer_parts;

static int mem_infer_check(const gp_model *m, const gp_infer_cfg *c,
			   gp_error *err)
{
	if (!c)
		return gp_fail(err, "inference config: NULL");
	if (model_check(m, err) != GP_OK)
		return GP_EINVAL;
	if (m->encoder_layers > 0)
		return gp_fail(err, "inference of an encoder-decoder model is "
			       "not modelled (its training memory is)");
	if (gp_check_count(c->tp, 0, "tp", err) ||
	    gp_check_count(c->pp, 0, "pp", err) ||
	    gp_check_count(c->block, 0, "block", err) ||
	    gp_check_nonneg(c->seqs, "seqs", err) ||
	    gp_check_tokens(c->ctx, "ctx", err) ||
	    gp_check_elem(c->kv_bytes, "kv_bytes", err) ||
	    gp_check_nonneg(c->chunk_tokens, "chunk_tokens", err) ||
	    gp_check_nonneg(c->act_bytes, "act_bytes", err))
		return GP_EINVAL;
	if (c->weights.bits != 0 && mem_quant_bits(&c->weights) < 0)
		return gp_fail(err, "bad weight format (bits %g, group %d, "
			       "group_bits %g)", c->weights.bits,
			       c->weights.group, c->weights.group_bits);
	if (c->embed_bits != 0 && gp_check_num(c->embed_bits, 1, 32,
						"embed_bits", err))
		return GP_EINVAL;
	if (!gp_finite(c->kv_free_fraction) || c->kv_free_fraction < 0 ||
	    c->kv_free_fraction > 1)
		return gp_fail(err, "kv_free_fraction must be 0 (off) or in "
			       "(0, 1] (got %g)", c->kv_free_fraction);
	if (gp_check_num(c->seqs, 0, GP_AMOUNT_MAX, "seqs", err) ||
	    gp_check_num(c->chunk_tokens, 0, GP_AMOUNT_MAX, "chunk_tokens",
			 err))
		return GP_EINVAL;
	if (layout_check_tp(m, c->tp, err))
		return GP_EINVAL;
	if (dflt(c->pp) > m->layers)
		return gp_fail(err, "pp %d exceeds the %d layers", c->pp,
			       m->layers);
	return GP_OK;
}

/* KV bytes of one sequence of ctx tokens on one GPU (paged: rounded up to
 * whole blocks, as vLLM allocates; Kwon et al. 2023 sec. 4.2). */
static double kv_seq(const gp_model *m, const gp_infer_cfg *c, double ctx,
		     double L_s)
{
	double kb = c->kv_bytes > 0 ? c->kv_bytes : 2.0;
	double eff = ctx;

	if (c->block > 0)
		eff = ceil(ctx / c->block) * c->block;
	return model_kv_bytes(m, eff, kb) * kv_share(m, dflt(c->tp)) *
		L_s / m->layers;
}

/* The serving replica's per-GPU parts.  gpuplan once sized inference twice
 * (here and in infer.c) and the two disagreed; this is now the one rule,
 * and for each term the better-founded of the two was kept:
 *  - weights: the linears (attention, MLP, experts) at the weight format;
 *    norms and the MoE router at 16 bits (infer.c had priced them at the
 *    weight bits); embedding, vision tower and lm_head at embed_bits.
 *    Quantisers convert nn.Linear layers of the decoder only: AutoGPTQ /
 *    AutoAWQ quantise the blocks' linears, ModelOpt's FP8 export lists
 *    lm_head in exclude_modules, and vLLM builds the MoE gate without a
 *    quant_config.  A VLM's vision tower is resident whatever the prompt
 *    (the engines load the whole checkpoint); infer.c had left it out.
 *  - workspace: the tensors live at once inside one layer's forward of T
 *    tokens, per TP rank -- residual and norm output (2h), q, k, v at
 *    their GQA widths, the attention output, gate + up + product of the
 *    MLP (3f; 2f ungated), shared experts beside the routed ones -- plus
 *    the fp32 logits of every sequence sampled in the step (vLLM's and
 *    TensorRT-LLM's samplers take fp32 logits).  infer.c's 4h + 3f
 *    counted K and V at full width and left attention unsplit by TP and
 *    the logits out; its shared-expert term is kept.
 *  - T: a serving engine reserves activations for its whole token budget
 *    at start-up, whatever the load (vLLM's profile run is a dummy
 *    forward of max_num_batched_tokens; TensorRT-LLM sizes its buffers
 *    for max_num_tokens): the caller's chunk_tokens.  Without one, the
 *    tokens the job runs, at most 8192 (vLLM's default
 *    max_num_batched_tokens with chunked prefill, TensorRT-LLM's
 *    max_num_tokens).
 *  - reserve: CUDA context, library workspaces and NCCL buffers of the
 *    replica (mem_reserve_default) come off before the KV cache is sized
 *    (vLLM subtracts the non-torch memory its profile measured);
 *    infer.c had none of them. */
static int mem_infer_parts_of(const gp_model *m, const gp_infer_cfg *c,
			      mem_infer_parts *ip, gp_error *err)
{
	gp_params p;
	gp_widths w;
	double bits, lin, rest, frac, A, f, eb;
	int tp = dflt(c->tp), pp = dflt(c->pp);

	if (model_params(m, &p, err))
		return GP_EINVAL;
	model_widths(m, &w);
	ip->L_s = (m->layers + pp - 1) / pp;
	frac = (double)ip->L_s / m->layers;
	bits = c->weights.bits > 0 ? mem_quant_bits(&c->weights) : 16.0;
	eb = (c->embed_bits > 0 ? c->embed_bits : 16.0) / 8.0;
	lin = (p.attention + p.dense_mlp + p.experts) * frac / tp;
	rest = (p.norms + p.router) * frac / tp;
	ip->layer_w = (lin * bits / 8.0 + rest * 2.0) / ip->L_s;
	/* Most loaded stage: with pp == 1 both ends; else the larger. */
	{
		double e_first = (p.embedding + p.vision) / tp;
		double e_last = p.lm_head > 0 ? p.lm_head / tp :
			(pp > 1 ? p.embedding / tp : 0);
		double ends = pp == 1 ? e_first + e_last :
			(e_first > e_last ? e_first : e_last);
		ip->weights = ip->layer_w * ip->L_s + ends * eb;
	}
	A = c->act_bytes > 0 ? c->act_bytes : 2.0;
	ip->T_cap = c->chunk_tokens > 0 ? c->chunk_tokens : 8192.0;
	ip->T = c->chunk_tokens > 0 ? c->chunk_tokens :
		fmin(c->seqs * c->ctx, ip->T_cap);
	f = fmax(w.dense_f, w.expert_f * m->moe.top_k + w.shared_f);
	ip->ws_token = A * (2.0 * m->hidden +
		(w.q + w.k + w.v + w.o + (m->ffn_gated ? 3.0 : 2.0) * f) /
		tp);
	ip->ws_seq = (double)m->vocab * 4.0 / tp;
	ip->workspace = ip->T * ip->ws_token + c->seqs * ip->ws_seq;
	return GP_OK;
}

/* The reserve as the KV sizing rule sees it: with kv_free_fraction the
 * margin is (1 - fraction) of what is free after weights, workspace and
 * the fixed reserve (TensorRT-LLM's KvCacheConfig.free_gpu_memory_fraction,
 * default 0.9, measured after the model is loaded), else the caller's
 * fraction of the capacity (vLLM's gpu_memory_utilization). */
static void serve_reserve(const gp_infer_cfg *c, double capacity,
			  const gp_mem_reserve *r, double placed,
			  gp_mem_reserve *out)
{
	double left;

	*out = *r;
	if (!(c->kv_free_fraction > 0))
		return;
	left = capacity - r->context - r->workspace - r->comm - placed;
	out->margin = left > 0 ? (1.0 - c->kv_free_fraction) * left /
		capacity : 0.0;
	if (out->margin >= 1.0)
		out->margin = 0.0;
}

int mem_infer(const gp_model *m, const gp_infer_cfg *c, double capacity,
	      const gp_mem_reserve *r, gp_mem_result *out, gp_error *err)
{
	mem_infer_parts ip;
	gp_mem_reserve rr;
	double free_b, per, lo, hi, n, placed;
	int i;

	if (!out)
		return gp_fail(err, "mem_infer: NULL output");
	if (check_reserve(r, capacity, err) || mem_infer_check(m, c, err))
		return GP_EINVAL;
	if (mem_infer_parts_of(m, c, &ip, err))
		return GP_EINVAL;
	memset(out, 0, sizeof *out);
	out->bytes[GP_MEM_WEIGHTS] = ip.weights;
	out->bytes[GP_MEM_WORKSPACE] = ip.workspace;
	out->kv_per_seq = kv_seq(m, c, c->ctx, ip.L_s);
	out->bytes[GP_MEM_KV] = c->seqs * out->kv_per_seq;
	/* Fragmentation: the caching allocator gives a tensor over 1 MiB a
	 * segment of its own size rounded to 2 MiB (PyTorch CUDA semantics,
	 * "Memory management"), so what is allocated once and kept -- the
	 * weights, and the KV cache every serving engine allocates as one
	 * pool at start-up (vLLM's per-layer block tensors, TensorRT-LLM's
	 * KVCacheManager pool, llama.cpp's context cache, LitGPT's
	 * set_kv_cache) -- wastes nothing; the churn of the transient
	 * activations (the workspace) does. */
	placed = ip.weights + (1.0 + r->frag) * ip.T_cap * ip.ws_token;
	serve_reserve(c, capacity, r, placed, &rr);
	mem_finish(out, capacity, &rr, ip.weights + out->bytes[GP_MEM_KV]);

	/* What fits: n sequences of ctx tokens, each with its KV and its
	 * logits row, once the weights and the forward's workspace are
	 * placed.  The workspace holds the engine's budget T_cap, or only
	 * n ctx tokens when n sequences are fewer (the second case is
	 * solved exactly: workspace linear in n). */
	per = out->kv_per_seq + (1.0 + rr.frag) * ip.ws_seq;
	free_b = out->usable - ip.weights - (1.0 + rr.frag) * ip.T_cap *
		ip.ws_token;
	out->kv_room = free_b > 0 ? free_b : 0;
	n = per > 0 && free_b > 0 ? floor(free_b / per) : 0;
	if (c->chunk_tokens <= 0 && n * c->ctx < ip.T_cap) {
		double lin = out->usable - ip.weights;
		double per2 = per + (1.0 + rr.frag) * c->ctx * ip.ws_token;

		n = per2 > 0 && lin > 0 ? floor(lin / per2) : 0;
	}
	out->max_seqs = n;
	/* KV room at this job's workspace (c->seqs sequences). */
	free_b = out->usable - ip.weights - (1.0 + rr.frag) * ip.workspace;
	out->max_ctx = 0;
	if (c->seqs > 0 && free_b > 0) {
		/* KV grows monotonically with ctx (sliding-window layers
		 * flatten it): bisect on whole tokens. */
		lo = 0;
		hi = 1;
		while (hi < GP_COUNT_MAX &&
		       c->seqs * kv_seq(m, c, hi, ip.L_s) <= free_b)
			hi *= 2;
		for (i = 0; i < 64 && hi - lo > 1; i++) {
			double mid = floor((lo + hi) / 2);
			if (c->seqs * kv_seq(m, c, mid, ip.L_s) <= free_b)
				lo = mid;
			else
				hi = mid;
		}
		out->max_ctx = lo;
	}
	/* CPU offload (llama.cpp -ngl): move whole layers, their weights
	 * and their share of the KV cache, until the rest fits; at most
	 * every layer of the stage. */
	if (c->offload && !out->fits) {
		per = ip.layer_w + out->bytes[GP_MEM_KV] / ip.L_s;
		for (i = 0; i < ip.L_s && out->short_by > 0; i++) {
			out->bytes[GP_MEM_WEIGHTS] -= ip.layer_w;
			out->bytes[GP_MEM_KV] -= out->bytes[GP_MEM_KV] /
				(ip.L_s - i);
			out->cpu_bytes += per;
			out->cpu_layers++;
			mem_finish(out, capacity, &rr,
				    out->bytes[GP_MEM_WEIGHTS] +
				    out->bytes[GP_MEM_KV]);
		}
	}
	out->params = ip.weights;
	return GP_OK;
}
