/*
 * memory_stage_act.c - what a layout's pipeline stages save for backward,
 * computed once per layout (stage_acts): the dense and MoE layer's saved
 * activations, the vision tower's, an encoder-decoder's beyond its
 * layers; and the sweep's memo of them (gp_mem_memo), keyed by every
 * input of the activation config.
 */
#include "memory_int.h"

#include <string.h>

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
	double P = model_vision_patches(m);
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
	/* The tower's core attention follows the decoder's rule
	 * (mem_core_attn_recomputed): Megatron's vision config is a copy of
	 * the language model's (Megatron-LM examples/multimodal/model.py:
	 * "vision_config = deepcopy(base_config)" before
	 * get_vision_model_config), its recompute_modules with it, so
	 * none and selective with the same list are the same tower.  The
	 * list's other modules are the decoder's (MoE, MLA, its norms). */
	ac.recompute_modules = k->ac.recompute_modules &
		(GP_RECMOD_CORE_ATTN | GP_RECMOD_LISTED);
	ac.eager_swiglu = k->ac.eager_swiglu;
	ac.eager_softmax = k->ac.eager_softmax;
	/* Under autocast the tower's stream and LayerNorms are fp32 as
	 * the decoder's (memory_act.c act_autocast); its projections are
	 * counted fused, one cast of each norm's output (nanoVLM's
	 * ViTMultiHeadAttention "self.qkv_proj = nn.Linear(self.embd_dim,
	 * 3 * self.embd_dim, bias=True)", a plain fc1 MLP): the model's
	 * split_proj describes its decoder. */
	ac.autocast = k->ac.autocast;
	if (mem_act_layer(&v, &ac, 0, &al, err))
		return GP_EINVAL;
	*saved += v.layers * al.total;
	if (k->ac.recompute == GP_RECOMPUTE_FULL)
		*full = al.full;
	else if (mem_core_attn_recomputed(ac.recompute, ac.recompute_modules))
		*full = al.core;
	return GP_OK;
}


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

/* What trains, of a layer's activation config (act_cfg_of): a frozen
 * base, its adapters and whether its matmuls keep their inputs. */
static void act_trains_of(const gp_train_cfg *c, gp_act_cfg *ac)
{
	if (c->lora_rank > 0) {
		/* Frozen base: only adapters train.  A quantised base
		 * (bits < 16) runs through bitsandbytes-style matmuls that
		 * keep their input (see mem_act_layer) -- but not an fp8
		 * base that Transformer Engine's own fp8 GEMMs read
		 * (base_fp8_gemm): TE keeps a linear's input only for its
		 * weight gradient, whatever the weight's dtype
		 * (TransformerEngine v1.6rc2 and v1.9 module/linear.py
		 * _Linear.forward: "saved_inputmat = None ... if
		 * weight.requires_grad: ... saved_inputmat = inputmat";
		 * layernorm_linear.py saves "ln_out if
		 * weight.requires_grad else None"), as a 16-bit frozen
		 * base keeps nothing. */
		ac->frozen = 1;
		ac->base_saves_input = c->base.bits > 0 &&
			mem_quant_bits(&c->base) < 16 && !c->base_fp8_gemm;
		ac->lora_rank = c->lora_rank;
		ac->lora_targets = c->lora_targets;
		ac->lora_dropout = c->lora_dropout;
	} else if (c->llm_frozen) {
		/* A frozen language model (no adapters): its linears
		 * keep no input for a weight gradient, as LoRA's base. */
		ac->frozen = 1;
	}
}

/* mem_act_down_kept for a train config's layers (train_prep.c: the
 * step's recompute_modules mlp_act re-run is priced where the memory
 * drops the tensor, and only there). */
int mem_mlp_down_kept(const gp_train_cfg *c)
{
	gp_act_cfg ac;

	memset(&ac, 0, sizeof ac);
	act_trains_of(c, &ac);
	return mem_act_down_kept(&ac);
}

/* The activation config of a layer of layout y: every input of the
 * layers' saved activations (with mem_acts_key_of's few more). */
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
	ac->recompute_modules = c->recompute_modules;
	ac->fp8_cache = c->fp8_cache;
	ac->fp8_te = c->fp8_te;
	ac->probs_in_act = c->probs_in_act;
	ac->capacity_factor = c->capacity_factor;
	ac->moe_einsum = c->moe_einsum;
	ac->eager_swiglu = c->eager_swiglu;
	ac->eager_norm = c->eager_norm;
	ac->eager_softmax = c->eager_softmax;
	ac->attn_clamp = c->attn_clamp;
	ac->autocast = c->autocast;
	ac->split_proj = c->split_proj;
	ac->fused_qkv_view = c->fused_qkv_view;
	ac->kv_repeat = c->kv_repeat;
	ac->sac_attn_recompute = c->sac_attn_recompute;
	ac->ulysses = c->cp_ulysses && y->cp > 1 ? y->cp : 0;
	ac->lora_zero_pad = c->lora_zero_pad;
	/* Decoder layers of an encoder-decoder read the encoder tokens. */
	if (m->encoder_layers > 0)
		ac->enc_len = c->enc_seq > 0 ? c->enc_seq : c->seq;
	act_trains_of(c, ac);
}

/* The key of a layout's saved activations: the layers' activation
 * config and what mem_stage_acts_of reads beyond it (the vision tower's
 * images and whether it trains, the encoder's length); zeroed first,
 * the memo compares the bytes. */
void mem_acts_key_of(const gp_model *m, const gp_train_cfg *c,
		     const gp_layout *y, gp_acts_key *k)
{
	memset(k, 0, sizeof *k);
	act_cfg_of(m, c, y, &k->ac);
	k->images = c->images;
	k->enc_seq = c->enc_seq;
	k->vision_frozen = c->vision_frozen;
}

int mem_stage_acts_of(const gp_model *m, const gp_acts_key *k,
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
	if (m->pattern[0]) {
		/* a hybrid stack's four kinds (mem_act_kind) */
		sa->ndense = model_pattern_in(m, '-', 0, m->layers);
		sa->nx[0] = model_pattern_in(m, 'M', 0, m->layers);
		sa->nx[1] = model_pattern_in(m, '*', 0, m->layers);
		if (mem_act_kind(m, &ac, 'M', &sa->alx[0], err) ||
		    mem_act_kind(m, &ac, '*', &sa->alx[1], err))
			return GP_EINVAL;
		sa->act_layer = (sa->ndense * sa->al.total +
				 sa->nmoe * sa->alm.total +
				 sa->nx[0] * sa->alx[0].total +
				 sa->nx[1] * sa->alx[1].total) / m->layers;
		return GP_OK;
	}
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


/* The memo keeps a stage_acts in its bytes. */
typedef char stage_acts_fits_memo[sizeof(stage_acts) <=
	sizeof(((gp_mem_memo *)0)->e[0].acts) ? 1 : -1];

/* The memo's stage_acts for c and y: found (the last hit first), or
 * computed and kept.  *sap points into the memo (or at buf). */
int mem_memo_acts(const gp_model *m, const gp_train_cfg *c,
		  const gp_layout *y, gp_mem_memo *mm, stage_acts *buf,
		  const stage_acts **sap, gp_error *err)
{
	gp_acts_key key;
	unsigned long long h;
	int i;

	mem_acts_key_of(m, c, y, &key);
	if (!mm) {
		*sap = buf;
		return mem_stage_acts_of(m, &key, buf, err);
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
	if (mem_stage_acts_of(m, &key, buf, err))
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
