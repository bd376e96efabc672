/*
 * model.c - transformer architecture -> parameter counts, FLOPs, KV bytes
 * (the operators of one layer: model_ops.c).
 *
 * Counting is per operator, the way the weights are laid out in the
 * Hugging Face / Megatron implementations:
 *
 *   attention (GQA/MQA)  q: h x (a*d), k and v: h x (g*d), o: (a*d) x h
 *                        (h hidden, a heads, g kv heads, d head_dim)
 *   attention (MLA)      DeepSeek-V2 (arXiv 2405.04434) section 2.1.2 and
 *                        DeepSeek-V3 (arXiv 2412.19437) section 2.1.1:
 *                        q down h x rq, q up rq x a(dn+dr)
 *                        (or directly q: h x a(dn+dr)),
 *                        kv down h x (rkv + dr), kv up rkv x a(dn+dv),
 *                        o: a*dv x h, RMS norms on the two latents
 *   MLP                  gated (SwiGLU, Shazeer 2020): 3 h f; plain: 2 h f
 *   MoE                  routed + shared experts, router h x E per layer
 *   embeddings           V h (+ learned positions), lm_head V h unless tied
 *   norms                two per layer + final; RMSNorm h, LayerNorm 2h
 *
 * Biases: none by default (Llama, Mistral, DeepSeek).  qkv_bias adds the q,
 * k, v biases (Qwen2); linear_bias puts one on every linear (GPT-2/3,
 * Megatron GPT, BLOOM), which with LayerNorm gives the 13h per layer of
 * Narayanan et al. 2021 eq. (2): P = 12 l h^2 (1 + 13/12h + (V+s)/12lh).
 *
 * Vision towers (ViT) carry biases on every linear and LayerNorm (CLIP
 * ViT-L/14, the Qwen2-VL ViT); their patch embedding is a convolution of
 * 3 * temporal_patch * patch^2 * hidden weights (Qwen2-VL folds two video
 * frames into one patch, so its images use temporal_patch = 2 too).
 * Class/position embeddings of the tower (< 1M parameters) are not counted.
 *
 * Encoder-decoder (Raffel et al. 2020, "Exploring the Limits of Transfer
 * Learning with a Unified Text-to-Text Transformer", sec. 2.1; Hugging Face
 * modeling_t5.py): a shared V x h embedding read by both stacks (and by
 * the output layer unless untied, T5 v1.1 / Flan-T5 / mT5); encoder layers
 * of self-attention + MLP with two norms; decoder layers of self-attention,
 * cross-attention (q from the decoder, k and v from the encoder output,
 * o; the self-attention's shape) and MLP with three norms; a final norm
 * per stack; a relative_attention_bias table of buckets x heads in the
 * first layer of each stack.  T5-3B: 32128 x 1024 + 24 x 50,333,696 +
 * 24 x 67,111,936 + 2 x 32 x 32 + 2 x 1024 = 2,851,598,336.
 *
 * Not counted (each < 0.01% of the models in the catalog): Qwen3's per-head
 * q/k RMSNorm (2 * head_dim per layer), DeepSeek-V3's router bias, BLOOM's
 * embedding LayerNorm.  DeepSeek-V3's multi-token-prediction module (14B)
 * is not part of the 671B and is left out.
 */
#include "model.h"

#include <math.h>
#include <string.h>

/* Norm parameters per element of the normalised width: 1 for RMSNorm, 2 for
 * LayerNorm (gain and bias).  model_check guarantees one of the two. */
static double norm_factor(const gp_model *m)
{
	return m->norm_params == 2.0 * m->hidden ? 2.0 : 1.0;
}

static int has_vision(const gp_model *m)
{
	return m->vision.layers > 0 || m->vision.params > 0;
}

/* A count of the model: lo (0 or 1) <= v <= GP_COUNT_MAX; otherwise the
 * field is named in err (gp_check_count) and GP_EINVAL. */
static int check_min(int v, int lo, const char *name, gp_error *err)
{
	return gp_check_count(v, lo, name, err);
}

/* Group-limited routing (moe.groups, moe.group_top_k): both or neither;
 * the groups split the experts evenly (Megatron-Core moe_utils.py
 * group_limited_topk: "Divide experts into num_groups equal groups"),
 * a token picks its groups among them ("Select group_topk groups per
 * token") and its top_k experts from those groups' experts only ("Pick
 * topk experts from those groups only"), so top_k <= group_top_k x
 * experts / groups.  The words are gpuplan.schema moe_groups_problem's,
 * which refuses a catalog entry or a case file at its line. */
int model_moe_groups_check(const gp_moe *e, gp_error *err)
{
	int G = e->groups, Gs = e->group_top_k;

	if (G == 0 && Gs == 0)
		return 0;
	if (G <= 0 || Gs <= 0)
		return gp_fail(err, "moe.groups (%d) and moe.group_top_k (%d) "
			       "go together: the groups and how many of them "
			       "a token picks from", G, Gs);
	if (e->experts % G != 0)
		return gp_fail(err, "moe.groups (%d) must divide moe.experts "
			       "(%d): the router splits the experts into "
			       "equal groups", G, e->experts);
	if (Gs > G)
		return gp_fail(err, "moe.group_top_k must be in 1..groups "
			       "(%d), got %d", G, Gs);
	if ((long long)e->top_k > (long long)Gs * (e->experts / G))
		return gp_fail(err, "moe.top_k (%d) must be at most "
			       "group_top_k x experts / groups (%d x %d = "
			       "%d): a token's experts come from its picked "
			       "groups", e->top_k, Gs, e->experts / G,
			       Gs * (e->experts / G));
	return 0;
}

/* A switch of the model: 0 or 1. */
static int check_switch(int v, const char *name, gp_error *err)
{
	if (v != 0 && v != 1)
		return gp_fail(err, "%s must be 0 or 1 (got %d)", name, v);
	return GP_OK;
}

/* model_check's parts, each GP_OK or GP_EINVAL with err naming the
 * field.  The language model: its counts, switches, norm, sliding window
 * and encoder-decoder fields. */
static int check_dense(const gp_model *m, gp_error *err)
{
	const gp_moe *e = &m->moe;

	if (check_min(m->layers, 1, "layers", err) ||
	    check_min(m->hidden, 1, "hidden", err) ||
	    check_min(m->heads, 1, "heads", err) ||
	    check_min(m->kv_heads, 1, "kv_heads", err))
		return GP_EINVAL;
	if (m->kv_heads > m->heads || m->heads % m->kv_heads != 0)
		return gp_fail(err, "kv_heads (%d) must divide heads (%d)",
			       m->kv_heads, m->heads);
	if (check_min(m->head_dim, 1, "head_dim", err) ||
	    check_min(m->vocab, 1, "vocab", err) ||
	    check_min(m->ffn_hidden, 0, "ffn_hidden", err))
		return GP_EINVAL;
	/* A model whose every layer is MoE needs no dense width (a
	 * hybrid one's MLP layers are check_hybrid's). */
	if (m->ffn_hidden == 0 && !m->pattern[0] &&
	    (e->experts == 0 || e->dense_layers > 0 || e->layer_step > 1) &&
	    !(e->experts > 0 && e->dense_ffn_hidden > 0))
		return gp_fail(err, "ffn_hidden must be positive (got 0)");
	if (check_switch(m->ffn_gated, "ffn_gated", err) ||
	    check_switch(m->tied_embeddings, "tied_embeddings", err) ||
	    check_switch(m->qkv_bias, "qkv_bias", err) ||
	    check_switch(m->linear_bias, "linear_bias", err) ||
	    check_switch(m->ffn_clamp, "ffn_clamp", err) ||
	    check_switch(m->qk_norm, "qk_norm", err) ||
	    check_switch(m->parallel_attn, "parallel_attn", err) ||
	    check_switch(m->shared_norm, "shared_norm", err))
		return GP_EINVAL;
	/* One norm for both branches needs both to read the layer's
	 * input: a sequential layer's MLP reads the attention's sum. */
	if (m->shared_norm && !m->parallel_attn)
		return gp_fail(err, "shared_norm needs parallel_attn: only a "
			       "parallel layer's attention and MLP read the "
			       "same normed input");
	if (m->shared_norm && (m->pattern[0] || m->encoder_layers > 0))
		return gp_fail(err, "shared_norm is a decoder layer's of "
			       "attention and MLP: not with a hybrid "
			       "pattern or an encoder-decoder");
	/* MLA normalises its q and kv latents instead (priced with its
	 * projections); the encoder-decoder layers (T5) have none. */
	if (m->qk_norm && (m->mla.kv_lora_rank > 0 || m->encoder_layers > 0))
		return gp_fail(err, "qk_norm needs per-head q and k: not with "
			       "mla or an encoder-decoder");
	/* 2.0 *: twice a hidden near INT_MAX does not fit an int. */
	if (m->norm_params != m->hidden &&
	    m->norm_params != 2.0 * m->hidden)
		return gp_fail(err, "norm_params must be hidden (%d, RMSNorm) "
			       "or 2*hidden (LayerNorm), got %d", m->hidden,
			       m->norm_params);
	if (m->positions < 0 || m->positions >= GP_POS_COUNT)
		return gp_fail(err, "positions must be 0 (rope), 1 (learned), "
			       "2 (alibi) or 3 (none), got %d", m->positions);
	if (m->pos_embeddings > 0 && m->positions != GP_POS_LEARNED)
		return gp_fail(err, "pos_embeddings = %d is a learned "
			       "position table: positions must be learned",
			       m->pos_embeddings);
	if (m->mla.kv_lora_rank > 0 && m->positions != GP_POS_ROPE)
		return gp_fail(err, "mla ropes its qk_rope_head_dim key: "
			       "positions must be rope");
	if (m->rope_attn_factor < 0 || !isfinite(m->rope_attn_factor))
		return gp_fail(err, "rope_attention_factor must be a positive "
			       "number, got %g", m->rope_attn_factor);
	if (m->rope_attn_factor > 0 && m->rope_attn_factor != 1.0 &&
	    m->positions != GP_POS_ROPE)
		return gp_fail(err, "rope_attention_factor scales rope's cos "
			       "and sin: positions must be rope");
	if (check_min(m->pos_embeddings, 0, "pos_embeddings", err) ||
	    check_min(m->sliding_window, 0, "sliding_window", err))
		return GP_EINVAL;
	if (m->sliding_layers < 0 || m->sliding_layers > m->layers)
		return gp_fail(err, "sliding_layers must be in 0..layers (%d), "
			       "got %d", m->layers, m->sliding_layers);
	if (m->sliding_layers > 0 && m->sliding_window == 0)
		return gp_fail(err, "sliding_layers = %d needs a "
			       "sliding_window", m->sliding_layers);
	if (check_min(m->encoder_layers, 0, "encoder_layers", err) ||
	    check_min(m->rel_buckets, 0, "rel_buckets", err) ||
	    check_switch(m->ffn_relu, "ffn_relu", err) ||
	    check_switch(m->ffn_relu2, "ffn_relu2", err) ||
	    check_switch(m->ffn_gelu, "ffn_gelu", err) ||
	    check_switch(m->ffn_gelu_new, "ffn_gelu_new", err))
		return GP_EINVAL;
	if (m->ffn_gelu_new && !m->ffn_gelu)
		return gp_fail(err, "ffn_gelu_new is a GeLU: it needs ffn_gelu");
	if (m->ffn_relu && m->ffn_gated)
		return gp_fail(err, "ffn_act 'relu' applies to a plain MLP, "
			       "not a gated one (ffn_gated)");
	if (m->ffn_relu2 && m->ffn_gated)
		return gp_fail(err, "ffn_act 'relu2' applies to a plain MLP, "
			       "not a gated one (ffn_gated)");
	if (m->ffn_relu2 + m->ffn_relu + m->ffn_gelu > 1)
		return gp_fail(err, "ffn_relu, ffn_relu2 and ffn_gelu name "
			       "one activation each: set one");
	if (m->encoder_layers == 0 && m->rel_buckets > 0)
		return gp_fail(err, "rel_buckets (%d) applies to "
			       "encoder-decoder models (encoder_layers > 0)",
			       m->rel_buckets);
	return GP_OK;
}

/* The MoE block: set whole or not at all. */
static int check_moe(const gp_model *m, gp_error *err)
{
	const gp_moe *e = &m->moe;

	if (check_min(e->experts, 0, "moe.experts", err))
		return GP_EINVAL;
	if (e->experts > 0) {
		if (e->top_k <= 0 || e->top_k > e->experts)
			return gp_fail(err, "moe.top_k must be in 1..experts "
				       "(%d), got %d", e->experts, e->top_k);
		if (check_min(e->ffn_hidden, 1, "moe.ffn_hidden", err) ||
		    check_min(e->shared_experts, 0, "moe.shared_experts",
			      err) ||
		    check_min(e->shared_ffn_hidden, 0,
			      "moe.shared_ffn_hidden", err))
			return GP_EINVAL;
		if (e->dense_layers < 0 || e->dense_layers > m->layers)
			return gp_fail(err, "moe.dense_layers must be in "
				       "0..layers (%d), got %d", m->layers,
				       e->dense_layers);
		if (check_min(e->dense_ffn_hidden, 0, "moe.dense_ffn_hidden",
			      err))
			return GP_EINVAL;
		if (model_moe_groups_check(e, err))
			return GP_EINVAL;
		/* the gate scales the shared experts' output: none, no gate
		 * (transformers' Qwen2MoeSparseMoeBlock builds it beside
		 * its shared_expert) */
		if (e->shared_expert_gate && e->shared_experts <= 0)
			return gp_fail(err, "moe.shared_expert_gate is set but "
				       "moe.shared_experts is %d: the gate "
				       "scales the shared experts' output",
				       e->shared_experts);
		/* 0 is a zeroed struct's "every layer"; a step past the
		 * layers would leave no MoE layer in an MoE model */
		if (e->layer_step < 0 || e->layer_step > m->layers)
			return gp_fail(err, "moe.layer_step must be in "
				       "1..layers (%d), got %d", m->layers,
				       e->layer_step);
		/* named as the model holds them: layer_step only where
		 * set past 1 (its absence is every layer) */
		if (model_moe_layers(m) == 0 && e->layer_step > 1)
			return gp_fail(err, "moe.dense_layers (%d) and "
				       "layer_step (%d) leave no MoE layer "
				       "among the %d layers",
				       e->dense_layers, e->layer_step,
				       m->layers);
		if (model_moe_layers(m) == 0)
			return gp_fail(err, "moe.dense_layers (%d) leaves no "
				       "MoE layer among the %d layers",
				       e->dense_layers, m->layers);
	} else if (e->top_k != 0 || e->shared_experts != 0 ||
		   e->dense_layers != 0 || e->layer_step > 1 ||
		   e->shared_expert_gate) {
		return gp_fail(err, "moe fields set but moe.experts is %d",
			       e->experts);
	}
	return GP_OK;
}

/* MLA's latent widths (kv_lora_rank > 0 turns it on). */
static int check_mla(const gp_mla *a, gp_error *err)
{
	if (check_min(a->kv_lora_rank, 0, "mla.kv_lora_rank", err))
		return GP_EINVAL;
	if (a->kv_lora_rank > 0 &&
	    (check_min(a->q_lora_rank, 0, "mla.q_lora_rank", err) ||
	     check_min(a->qk_nope_head_dim, 1, "mla.qk_nope_head_dim", err) ||
	     check_min(a->qk_rope_head_dim, 1, "mla.qk_rope_head_dim", err) ||
	     check_min(a->v_head_dim, 1, "mla.v_head_dim", err)))
		return GP_EINVAL;
	return GP_OK;
}

/* The vision tower: its counts, and its image or token size. */
static int check_vision(const gp_model *m, gp_error *err)
{
	const gp_vision *v = &m->vision;

	if (gp_check_num(v->params, 0, GP_AMOUNT_MAX, "vision.params", err) ||
	    gp_check_num(v->projector_params, 0, GP_AMOUNT_MAX,
			 "vision.projector_params", err) ||
	    check_min(v->layers, 0, "vision.layers", err))
		return GP_EINVAL;
	if (has_vision(m)) {
		/* Bounded like the language model's counts: patches^2 and
		 * hidden^2 are formed in double, never overflow. */
		if (check_min(v->hidden, 0, "vision.hidden", err) ||
		    check_min(v->heads, 0, "vision.heads", err) ||
		    check_min(v->ffn_hidden, 0, "vision.ffn_hidden", err) ||
		    check_min(v->image_size, 0, "vision.image_size", err) ||
		    check_min(v->patch_size, 0, "vision.patch_size", err) ||
		    check_min(v->merge, 0, "vision.merge", err) ||
		    check_min(v->temporal_patch, 0, "vision.temporal_patch",
			      err))
			return GP_EINVAL;
		if (v->layers > 0 && (v->hidden <= 0 || v->heads <= 0 ||
				      v->ffn_hidden <= 0))
			return gp_fail(err, "vision.hidden, vision.heads and "
				       "vision.ffn_hidden must be positive");
		if (v->layers > 0 && v->hidden % v->heads != 0)
			return gp_fail(err, "vision.heads (%d) must divide "
				       "vision.hidden (%d)", v->heads,
				       v->hidden);
		if (v->ffn_gated != 0 && v->ffn_gated != 1)
			return gp_fail(err, "vision.ffn_gated must be 0 or 1");
		if (check_min(v->tokens_per_image, 0, "vision.tokens_per_image",
			      err))
			return GP_EINVAL;
		if (v->tokens_per_image == 0 &&
		    (v->image_size <= 0 || v->patch_size <= 0))
			return gp_fail(err, "vision needs tokens_per_image or "
				       "a positive image_size and "
				       "patch_size");
		if (v->layers > 0 &&
		    check_min(v->patch_size, 1, "vision.patch_size", err))
			return GP_EINVAL;
		/* A patch wider than the image leaves floor(image / patch)
		 * = 0 patches a side: a tower that encodes nothing. */
		if (v->image_size > 0 && v->patch_size > v->image_size)
			return gp_fail(err, "vision.patch_size (%d) is larger "
				       "than vision.image_size (%d)",
				       v->patch_size, v->image_size);
	}
	return GP_OK;
}

/* A hybrid stack's pattern and Mamba dims (model.h gp_mamba, pattern).
 * The pattern's letters are Megatron-Core's (hybrid_layer_allocation.py
 * Symbols: MAMBA "M", ATTENTION "*", MLP "-", MOE "E"); its other
 * layers (D, G, the "|" of a pipeline split) are not priced here. */
static int check_hybrid(const gp_model *m, gp_error *err)
{
	const gp_mamba *b = &m->mamba;
	int i, n = (int)strnlen(m->pattern, GP_PATTERN_MAX + 1);

	if (n == 0) {
		if (b->heads != 0)
			return gp_fail(err, "hybrid_pattern is missing, but "
				       "the model has a mamba table (the "
				       "pattern says which layers are Mamba "
				       "layers)");
		return GP_OK;
	}
	if (n > GP_PATTERN_MAX)
		return gp_fail(err, "hybrid_pattern is longer than %d "
			       "letters", GP_PATTERN_MAX);
	for (i = 0; i < n; i++)
		if (!strchr("M*-E", m->pattern[i]))
			return gp_fail(err, "hybrid_pattern: unknown layer "
				       "'%c' at letter %d (M Mamba, * "
				       "attention, - MLP, E MoE)",
				       m->pattern[i], i + 1);
	if (n != m->layers)
		return gp_fail(err, "hybrid_pattern has %d letters but "
			       "layers is %d (one letter a layer)", n,
			       m->layers);
	if (model_pattern_in(m, 'E', 0, n) > 0 && m->moe.experts <= 0)
		return gp_fail(err, "hybrid_pattern has MoE layers (E) but "
			       "the model has no moe table");
	if (m->moe.experts > 0 && model_pattern_in(m, 'E', 0, n) == 0)
		return gp_fail(err, "hybrid_pattern has no MoE layer (E) "
			       "but the model has a moe table");
	if (m->moe.experts > 0 &&
	    (m->moe.dense_layers > 0 || m->moe.layer_step > 1))
		return gp_fail(err, "moe.dense_layers and moe.layer_step "
			       "are not used with hybrid_pattern (its E "
			       "letters place the MoE layers)");
	if (model_pattern_in(m, '-', 0, n) > 0 && m->ffn_hidden <= 0)
		return gp_fail(err, "hybrid_pattern has MLP layers (-) but "
			       "ffn_hidden is 0");
	if (model_pattern_in(m, 'M', 0, n) > 0 && b->heads <= 0)
		return gp_fail(err, "hybrid_pattern has Mamba layers (M) "
			       "but the model has no mamba table");
	/* A mamba table no layer uses is a mistake, as moe without E. */
	if (b->heads != 0 && model_pattern_in(m, 'M', 0, n) == 0)
		return gp_fail(err, "hybrid_pattern has no Mamba layer (M) "
			       "but the model has a mamba table");
	if (b->heads > 0) {
		if (check_min(b->heads, 1, "mamba.heads", err) ||
		    check_min(b->head_dim, 1, "mamba.head_dim", err) ||
		    check_min(b->state, 1, "mamba.state", err) ||
		    check_min(b->groups, 1, "mamba.groups", err) ||
		    check_min(b->conv, 1, "mamba.conv", err) ||
		    check_min(b->chunk, 1, "mamba.chunk", err))
			return GP_EINVAL;
		/* mamba_mixer.py: "nheads must be evenly divisible by
		 * ngroups" (the heads of a group share its B and C).  The
		 * words are gpuplan.schema mamba_problem's, which refuses
		 * it at a catalog entry's or a case file's line. */
		if (b->heads % b->groups != 0)
			return gp_fail(err, "mamba.groups (%d) must divide "
				       "mamba.heads (%d): the heads of a "
				       "group share its B and C",
				       b->groups, b->heads);
	}
	/* The pattern's layers are priced from Megatron-Core's hybrid
	 * stack, which has none of these. */
	if (m->mla.kv_lora_rank > 0 || m->encoder_layers > 0 ||
	    has_vision(m) || m->sliding_window > 0 || m->linear_bias)
		return gp_fail(err, "hybrid_pattern is not supported with %s",
			       m->mla.kv_lora_rank > 0 ? "MLA" :
			       m->encoder_layers > 0 ? "encoder_layers" :
			       has_vision(m) ? "a vision tower" :
			       m->sliding_window > 0 ? "a sliding window" :
			       "linear_bias");
	return GP_OK;
}

int model_check(const gp_model *m, gp_error *err)
{
	const gp_moe *e;
	const gp_mla *a;

	if (!m)
		return gp_fail(err, "model: NULL");
	e = &m->moe;
	a = &m->mla;
	if (check_hybrid(m, err))
		return GP_EINVAL;
	if (check_dense(m, err) || check_moe(m, err) ||
	    check_mla(a, err) || check_vision(m, err))
		return GP_EINVAL;
	/* The encoder-decoder stacks are dense softmax-attention layers:
	 * what the operator list and the activations know for them. */
	if (m->encoder_layers > 0) {
		const char *what = e->experts > 0 ? "experts (moe)" :
			a->kv_lora_rank > 0 ? "MLA" :
			has_vision(m) ? "a vision tower" :
			m->sliding_window > 0 ? "a sliding window" : NULL;

		if (what)
			return gp_fail(err, "an encoder-decoder model "
				       "(encoder_layers %d) with %s is not "
				       "supported", m->encoder_layers, what);
	}
	return GP_OK;
}

/* Attention weights of one layer (no biases), in elements. */
double model_layer_norms(const gp_model *m)
{
	/* GPT-J's GPTJBlock: "self.ln_1 = nn.LayerNorm(...)" and no
	 * second (transformers modeling_gptj.py); model_ops.c prices no
	 * mlp_norm for it. */
	return m->shared_norm ? 1.0 : 2.0;
}

double model_layer_norm_modules(const gp_model *m)
{
	/* Qwen3Attention: "self.q_norm = Qwen3RMSNorm(self.head_dim, ...)"
	 * and k_norm (transformers modeling_qwen3.py) */
	return model_layer_norms(m) + (m->qk_norm ? 2.0 : 0.0);
}

double model_layer_norm_tensors(const gp_model *m)
{
	return model_layer_norm_modules(m) * norm_factor(m);
}

double model_attn_weights(const gp_model *m)
{
	const gp_mla *a = &m->mla;
	double h = m->hidden, n = m->heads;

	if (a->kv_lora_rank > 0) {
		/* DeepSeek-V2 eqs. (9)-(10), (37)-(39): queries through a
		 * q_lora_rank latent (or directly), keys/values through the
		 * kv_lora_rank latent plus one shared rope key, output from
		 * heads * v_head_dim. */
		double dq = a->qk_nope_head_dim + a->qk_rope_head_dim;
		double q = a->q_lora_rank > 0 ?
			h * a->q_lora_rank + (double)a->q_lora_rank * n * dq :
			h * n * dq;
		double kv_down = h * ((double)a->kv_lora_rank +
				      a->qk_rope_head_dim);
		double kv_up = (double)a->kv_lora_rank * n *
			((double)a->qk_nope_head_dim + a->v_head_dim);
		double o = n * a->v_head_dim * h;

		return q + kv_down + kv_up + o;
	}
	/* q and o: h x heads*head_dim; k and v: h x kv_heads*head_dim. */
	return 2.0 * h * n * m->head_dim +
		2.0 * h * (double)m->kv_heads * m->head_dim;
}

double model_mla_up_weights(const gp_model *m)
{
	const gp_mla *a = &m->mla;
	double n = m->heads;

	if (a->kv_lora_rank <= 0)
		return 0;
	/* DeepSeek-V2 eqs. (2) W^UK, W^UV and (37) W^UQ, W^QR. */
	return (double)a->q_lora_rank * n * ((double)a->qk_nope_head_dim +
					     a->qk_rope_head_dim) +
		(double)a->kv_lora_rank * n * ((double)a->qk_nope_head_dim +
					       a->v_head_dim);
}

double model_mla_down_weights(const gp_model *m)
{
	const gp_mla *a = &m->mla;

	if (a->kv_lora_rank <= 0)
		return 0;
	/* DeepSeek-V2 eqs. (9) W^DKV, (43) W^KR and (37) W^DQ: hidden
	 * into the kv latent and the rope key, and into the q latent when
	 * queries have one (q_lora_rank 0: queries projected directly, a
	 * head-split up-projection). */
	return (double)m->hidden * ((double)(a->q_lora_rank > 0 ?
					     a->q_lora_rank : 0) +
				    a->kv_lora_rank + a->qk_rope_head_dim);
}

/* Attention biases of one layer. */
static double attn_biases(const gp_model *m)
{
	const gp_mla *a = &m->mla;
	double qkv, o;

	if (!m->qkv_bias && !m->linear_bias)
		return 0.0;
	if (a->kv_lora_rank > 0) {
		qkv = (double)m->heads * (a->qk_nope_head_dim +
					  a->qk_rope_head_dim) +
			a->kv_lora_rank + a->qk_rope_head_dim +
			(double)m->heads *
			(a->qk_nope_head_dim + a->v_head_dim);
	} else {
		qkv = ((double)m->heads + 2.0 * m->kv_heads) * m->head_dim;
	}
	o = m->linear_bias ? m->hidden : 0.0;
	return qkv + o;
}

/* Weights of one MLP of intermediate width f (gated: gate, up, down). */
static double mlp_weights(const gp_model *m, double f)
{
	return (m->ffn_gated ? 3.0 : 2.0) * m->hidden * f;
}

static double mlp_biases(const gp_model *m, double f)
{
	if (!m->linear_bias)
		return 0.0;
	return (m->ffn_gated ? 2.0 : 1.0) * f + m->hidden;
}

static double mlp_params(const gp_model *m, double f)
{
	return mlp_weights(m, f) + mlp_biases(m, f);
}

double model_dense_ffn(const gp_model *m)
{
	if (m->moe.experts > 0 && m->moe.dense_ffn_hidden > 0)
		return m->moe.dense_ffn_hidden;
	return m->ffn_hidden;
}

double model_shared_ffn(const gp_model *m)
{
	return m->moe.shared_ffn_hidden > 0 ? m->moe.shared_ffn_hidden :
		m->moe.ffn_hidden;
}

int model_attn_layers(const gp_model *m)
{
	return m->pattern[0] ? model_pattern_in(m, '*', 0, m->layers) :
		m->layers;
}

int model_mamba_layers(const gp_model *m)
{
	return model_pattern_in(m, 'M', 0, m->layers);
}

/* in_proj's output width: z and x (d_inner each), B and C (groups x
 * state each) and dt (one a head), "self.d_inner * 2 + 2 *
 * self.ngroups * self.d_state + self.nheads,  # z x B C dt"
 * (mamba_mixer.py). */
static double mamba_in_width(const gp_mamba *b)
{
	return 2.0 * b->heads * b->head_dim + 2.0 * b->groups * b->state +
		b->heads;
}

/* The conv1d's channels: x, B and C ("conv_dim = self.d_inner_local_tp
 * + 2 * self.ngroups_local_tp * self.d_state  # x B C"). */
static double mamba_conv_dim(const gp_mamba *b)
{
	return (double)b->heads * b->head_dim + 2.0 * b->groups * b->state;
}

double model_mamba_in_width(const gp_model *m)
{
	return mamba_in_width(&m->mamba);
}

double model_mamba_conv_dim(const gp_model *m)
{
	return mamba_conv_dim(&m->mamba);
}

/* One MambaMixer (Megatron-Core mamba_mixer.py __init__), d_inner =
 * heads x head_dim:
 *   in_proj   hidden x (2 d_inner + 2 groups state + heads), no bias
 *             (the mixer's bias=False);
 *   conv1d    conv_dim x conv weights ("[conv_dim, 1, d_conv]",
 *             depthwise) + conv_dim biases (conv_bias=True);
 *   dt_bias, A_log and D: heads each (D_has_hdim False);
 *   norm      d_inner gains (RMSNormGated over d_inner, rmsnorm=True);
 *   out_proj  d_inner x hidden, no bias.
 * The layer's pre-norm (MambaLayer.norm, hidden) is in the norms. */
double model_mamba_params(const gp_model *m)
{
	const gp_mamba *b = &m->mamba;
	double di = (double)b->heads * b->head_dim, cd = mamba_conv_dim(b);

	return (double)m->hidden * mamba_in_width(b) + cd * (b->conv + 1.0) +
		3.0 * b->heads + di + di * m->hidden;
}

/* The matrices a token multiplies through in one Mamba layer: in_proj
 * and out_proj. */
static double mamba_weights(const gp_model *m)
{
	const gp_mamba *b = &m->mamba;

	return (double)m->hidden * (mamba_in_width(b) +
				    (double)b->heads * b->head_dim);
}

/* The shared expert's sigmoid gate's weights a MoE layer: its [hidden x
 * 1] linear (model_shared_gate_ops' shared_gate), counted with the
 * router's h x E (transformers' Qwen2MoeSparseMoeBlock holds both,
 * "self.gate" and "self.shared_expert_gate"); 0 without the gate. */
static double shared_gate_weights(const gp_model *m)
{
	gp_op g[GP_SHARED_GATE_OPS];

	return model_shared_gate_ops(m, 1.0, g) > 0 ? g[0].weights : 0.0;
}

double model_moe_matmul_weights(const gp_model *m)
{
	if (m->moe.experts <= 0)
		return 0.0;
	return (double)m->hidden * m->moe.experts + shared_gate_weights(m) +
		m->moe.top_k * mlp_weights(m, m->moe.ffn_hidden) +
		m->moe.shared_experts * mlp_weights(m, model_shared_ffn(m));
}

int model_moe_layers(const gp_model *m)
{
	return model_moe_in(m, 0, m->layers);
}

/* Routing without balancing (no auxiliary loss, no bias updates, no EPLB
 * placement: experts in order, E / N to a rank) as TensorRT-LLM measured
 * it (tech blog 4, "Scaling Expert Parallelism in TensorRT-LLM (Part
 * 1)", Table 1: DeepSeek R1 on 32 GB200, "No EPLB (8 per-rank slots and
 * EP 32)"; examples/ep_load_balancer/report_load_statistics.py takes the
 * standard deviation and the imbalance ratio of every layer's and
 * iteration's rank loads, then their mean): "by rank" the picks a rank
 * receives average 1024 with a standard deviation of 491.6 (0.48008 of
 * the mean), and the hottest rank's excess, (max - mean) / mean, is
 * 1.564 -- 3.2578 of those standard deviations.  ("The EP rank level
 * imbalance issue can be caused by a certain hottest expert or multiple
 * hot experts staying on the same EP rank"; "The EP rank imbalance
 * distribution is relatively stable across tens to hundreds of
 * iterations".)  A rank's load strays from the mean two ways, as
 * SERVE_EPLB_SD (serve_int.h) takes them apart for the same table's EPLB
 * rows: the placement (which experts it holds, fixed over a step) and
 * the chance of where the step's picks land (Poisson: variance the mean,
 * 1024).  Independent, their variances add, so the placement's share is
 * sqrt(491.6^2 - 1024) / 1024 = 0.47906.  Other layouts: a rank of El
 * experts sums El experts' loads, whose spread relative to their mean
 * falls as 1 / sqrt(El) (the same table's per-expert figures, std 164.1
 * over a mean of 128, give 1.282 / sqrt(8) = 0.453 for 8 experts a rank,
 * against the 0.480 measured), and the largest of N ranks lies about
 * sqrt(2 ln N) spreads above the mean (the maximum of N samples of a
 * light-tailed load), scaled to the measured 3.2578 at N = 32.  With
 * picks (a rank's mean picks in the step; 0: so many that chance is
 * gone, a training step's thousands):
 *   skew = 1 + 3.2578 sqrt(ln N / ln 32) sqrt(0.47906^2 8 / El + 1 / picks),
 * 2.564 at the measured 1024 picks, 2.561 with the placement alone.
 * The excess is the layer's wait: every rank's combine waits for the
 * hottest rank's experts and its received tokens.  The spread is a
 * fine-grained MoE's (256 experts of DeepSeek R1); none is measured for
 * a few large experts.  A rank can take at most min(top_k, El) of a
 * token's top_k picks, so no more than N min(k, El) / k times the mean:
 * the skew stops there (two ranks of one expert each: 2). */
#define EP_SKEW_SD 491.6         /* Table 1, no EPLB, by rank: std */
#define EP_SKEW_MEAN 1024.0      /* ... and the mean */
#define EP_SKEW_EXCESS 1.564     /* ... and (max - mean) / mean */
#define EP_SKEW_EXPERTS 8.0      /* 256 experts over EP 32 */
#define EP_SKEW_RANKS 32.0

double model_ep_skew_at(double ranks, double el, double top_k, double picks)
{
	double sd = EP_SKEW_SD / EP_SKEW_MEAN, tail = EP_SKEW_EXCESS / sd;
	double place, chance, cap;

	if (!(ranks > 1.0))
		return 1.0;
	if (!(el >= 1.0))
		el = 1.0;
	if (!(top_k >= 1.0))
		top_k = 1.0;
	place = (sd * sd - 1.0 / EP_SKEW_MEAN) * EP_SKEW_EXPERTS / el;
	chance = picks > 0.0 ? 1.0 / picks : 0.0;
	cap = ranks * fmin(top_k, el) / top_k;
	return fmin(cap, 1.0 + tail * sqrt(log(ranks) / log(EP_SKEW_RANKS)) *
		    sqrt(place + chance));
}

double model_ep_skew(const gp_model *m, int ep)
{
	if (ep <= 1 || m->moe.experts <= 0)
		return 1.0;
	return model_ep_skew_at(ep, (double)m->moe.experts / ep,
				m->moe.top_k > 0 ? m->moe.top_k : 1.0, 0.0);
}

/* E[max] of G exchangeable normal deviations that sum to zero (counts of
 * a fixed total over G equal groups), in standard deviations of one:
 * Z_g = sqrt(G / (G - 1)) (Y_g - mean Y) for iid standard normal Y, so
 * sqrt(G / (G - 1)) E[max Y] (E[max Y] = int x G phi Phi^(G-1) dx,
 * Tippett, Biometrika 17, 1925: 0.5642 for 2, 1.0294 for 4); 0.7979
 * (sqrt(2 / pi)) for two groups, 1.1887 for four.  Simpson's rule on
 * [-8, 8] in 320 steps: exact to 1e-9 for these G. */
static double max_dev_integral(double G)
{
	double sum = 0.0, a = -8.0, h = 16.0 / 320.0;
	int i;

	for (i = 0; i <= 320; i++) {
		double x = a + i * h, w = (i == 0 || i == 320) ? 1.0 :
			(i % 2 ? 4.0 : 2.0);
		double phi = 0.3989422804014327 * exp(-0.5 * x * x);
		double Phi = 0.5 * erfc(-x / sqrt(2.0));

		sum += w * x * G * phi * pow(Phi, G - 1.0);
	}
	return sum * h / 3.0 * sqrt(G / (G - 1.0));
}

/* max_dev_integral's 321 exp/erfc/pow terms cost tens of microseconds; a serving
 * search asks it for the same few group counts (the EP widths of the
 * decode and prefill pools, the expert groups) tens of thousands of
 * times, so the values are kept in a small table searched whole (the
 * engine runs on one thread), the oldest entry replaced when full.  A
 * direct-mapped slot of fmod(8 G, 64) put every multiple of 8 in slot 0,
 * so a deployment's EP 64 decode and EP 16 prefill evicted each other
 * and integrated on every call.  The value returned is the integral's,
 * bit for bit. */
#define MAX_DEV_SLOTS 16

double model_max_dev(double G)
{
	static double key[MAX_DEV_SLOTS], val[MAX_DEV_SLOTS];
	static int n, next;
	int i;

	if (G < 2.0)
		return 0.0;
	if (!(G < 1e9))		/* NaN or huge: no slot; the integral says */
		return max_dev_integral(G);
	for (i = 0; i < n; i++)
		if (key[i] == G)
			return val[i];
	i = next;
	next = (next + 1) % MAX_DEV_SLOTS;
	if (n < MAX_DEV_SLOTS)
		n++;
	key[i] = G;
	val[i] = max_dev_integral(G);
	return val[i];
}

/* The picks one token sends to one expert-parallel rank under routing
 * that balances in expectation (Megatron-Core's
 * moe_router_force_load_balancing: "Apply force load balancing with
 * random logits for benchmark", router.py, whose RandomSTE draws
 * "logits.clone().normal_()", "random logits of router for load-balanced
 * benchmark", moe_utils.py at Megatron-LM d98e8a6; an auxiliary loss or
 * bias update balances the expectation too and leaves at least this
 * chance): the variance of that count, a rank holding el of E experts
 * in index order (Megatron-Core's local_expert_indices: rank r holds
 * experts r el .. r el + el - 1), each token picking top_k distinct
 * experts uniformly.  Without group limits the count is hypergeometric,
 * top_k draws without replacement from E of which el are the rank's:
 *   var = k (el / E) (1 - el / E) (E - k) / (E - 1)
 * (W. Feller, An Introduction to Probability Theory, vol. 1, II.6; the
 * standard hypergeometric variance n K/N (N-K)/N (N-n)/(N-1)).
 * Group-limited routing (Megatron-Core moe_utils.py group_limited_topk,
 * moe_router_num_groups G and moe_router_group_topk Gs: "Divide experts
 * into num_groups equal groups", "Select group_topk groups per token",
 * "Pick topk experts from those groups only") first picks Gs of the G
 * groups of Eg = E / G experts; random scores pick them uniformly.  A
 * rank inside one group (el <= Eg, Eg a multiple of el): its group is
 * picked with p = Gs / G, then the k picks are hypergeometric over the
 * N = Gs Eg experts of the picked groups, mean m = k el / N, variance v:
 *   var = p (v + m^2) - (p m)^2.
 * A rank of r = el / Eg whole groups: J of its groups are picked,
 * hypergeometric (G, r, Gs), and given J the picks hypergeometric (N,
 * J Eg, k), mean k J / Gs; the law of total variance:
 *   var = k c E[J (Gs - J)] / Gs^2 + (k / Gs)^2 Var J,
 * c = (N - k) / (N - 1).  Other layouts (a rank across a group's edge)
 * take the ungrouped rule.  DeepSeek-V3 on EP 32 (E 256, k 8, 8 groups,
 * top 4, el 8): p 1/2, m 0.5, v = 8 (8/128)(120/128)(120/127) = 0.4429,
 * var 0.2840 (0.2356 ungrouped). */
double model_moe_pick_var(double E, double el, double k, double groups,
			  double group_topk)
{
	double G = groups, Gs = group_topk, Eg, N, c;

	if (!(E > 1.0) || !(el > 0.0) || el >= E || !(k >= 1.0) || k > E)
		return 0.0;
	if (G > 1.0 && Gs >= 1.0 && Gs < G && fmod(E, G) == 0.0) {
		Eg = E / G;
		N = Gs * Eg;
		if (k <= N) {
			c = N > 1.0 ? (N - k) / (N - 1.0) : 0.0;
			if (el <= Eg && fmod(Eg, el) == 0.0) {
				double p = Gs / G, m = k * el / N;
				double v = m * (1.0 - el / N) * c;

				return p * (v + m * m) - p * p * m * m;
			}
			if (el > Eg && fmod(el, Eg) == 0.0) {
				double r = el / Eg, ej = Gs * r / G;
				double vj = G > 1.0 ? Gs * (r / G) *
					(1.0 - r / G) * (G - Gs) / (G - 1.0) : 0.0;
				double ejj = Gs * ej - vj - ej * ej;

				return k * c * ejj / (Gs * Gs) +
					(k / Gs) * (k / Gs) * vj;
			}
		}
	}
	return k * (el / E) * (1.0 - el / E) * (E - k) / (E - 1.0);
}

/* The routed rows the busiest of `ranks` expert-parallel ranks receives
 * in one layer's pass over a micro-batch, over the mean, when the
 * expected loads are even and only chance spreads them (a dropless
 * dispatch: Megatron-Core's moe_expert_capacity_factor None, "None
 * means no token will be dropped", so each rank's grouped GEMMs run the
 * rows it actually received, and every rank's combine waits for the
 * busiest).  The `tokens` tokens the EP group routes in the pass pick
 * independently, so a rank's count is a sum of `tokens` independent
 * per-token counts: mean tokens k el / E, variance tokens
 * model_moe_pick_var -- normal by the central limit theorem at the
 * thousands of tokens of a training micro-batch.  The ranks' counts sum
 * to the fixed tokens k, so they are exchangeable normals summing to a
 * constant, and the busiest lies model_max_dev(ranks) of their standard
 * deviations above the mean (Tippett's E[max], times sqrt(N / (N - 1))
 * for the fixed sum):
 *   skew = 1 + max_dev(N) sqrt(tokens var) / (tokens k el / E).
 * DeepSeek-V3 on EP 32 at micro-batch 1 of 4096 tokens a rank (131,072
 * tokens, var 0.2840): 32,768 +- 193 picks, max_dev(32) = 2.1030, skew
 * 1.0124.  Inside a rank the grouped GEMMs run its experts one after
 * another (Transformer Engine's GroupedLinear: "a per-expert loop of
 * cuBLASLt GEMMs", TE PR #3134), so the rank's time is the sum over its
 * experts: the rank's total, not its busiest expert, sets it.  One
 * expert a rank (el 1) is the same rule.  No EP (ranks 1): 1. */
double model_ep_chance_skew(double ranks, double experts, double top_k,
			    double groups, double group_topk, double tokens)
{
	double el, var, mean;

	if (!(ranks > 1.0) || !(experts > 1.0) || !(tokens > 0.0) ||
	    !(top_k >= 1.0))
		return 1.0;
	el = experts / ranks;
	var = model_moe_pick_var(experts, el, top_k, groups, group_topk);
	mean = top_k * el / experts;
	if (!(var > 0.0) || !(mean > 0.0))
		return 1.0;
	return fmin(ranks * fmin(top_k, el) / top_k,
		    1.0 + model_max_dev(ranks) * sqrt(tokens * var) /
		    (tokens * mean));
}

/* Derived parameter count of the vision tower and projector. */
static double vision_params(const gp_model *m)
{
	const gp_vision *v = &m->vision;
	double h = v->hidden, f = v->ffn_hidden, layer, patch, tp;

	if (v->params > 0)
		return v->params;
	if (v->layers <= 0)
		return v->projector_params;
	/* ViT block (Dosovitskiy et al. 2021, eq. 2-3): qkv and out
	 * projections 4h^2 + 4h biases, MLP (2 or 3) h f + biases, two
	 * LayerNorms 2 * 2h. */
	layer = 4.0 * h * h + 4.0 * h +
		(v->ffn_gated ? 3.0 * h * f + 2.0 * f + h :
		 2.0 * h * f + f + h) + 4.0 * h;
	/* Patch embedding: a conv of 3 channels x temporal_patch frames x
	 * patch^2 pixels onto hidden (Qwen2-VL's Conv3d has no bias). */
	tp = v->temporal_patch > 1 ? v->temporal_patch : 1;
	patch = 3.0 * tp * (double)v->patch_size * v->patch_size * h;
	/* + the tower's final LayerNorm (CLIP post_layernorm, Qwen2-VL
	 * merger ln_q). */
	return v->layers * layer + patch + 2.0 * h + v->projector_params;
}

/* The encoder stack and the decoder's cross-attention of an
 * encoder-decoder, added to the decoder-only counts of the `layers`
 * decoder layers (attn: one attention block with its biases; mlp: one
 * MLP).  Model_check has ruled out MoE, MLA and vision here. */
static void encdec_params(const gp_model *m, double attn, double mlp,
			  gp_params *out)
{
	double E = m->encoder_layers, D = m->layers, n = m->norm_params;
	/* relative_attention_bias: buckets x heads in the first layer of
	 * each stack (modeling_t5.py has_relative_attention_bias = i == 0). */
	double rel = (double)m->rel_buckets * m->heads;
	double aw = model_attn_weights(m), mw = mlp_weights(m,
							  model_dense_ffn(m));

	out->encoder = E * (attn + 2.0 * n + mlp) + n + rel;
	/* Each stack reads the shared token embedding; a learned position
	 * table (BART) is one per stack. */
	out->embedding += (double)m->pos_embeddings * m->hidden;
	/* Cross-attention: one more attention block and norm per decoder
	 * layer; the encoder's layers; both stacks' bias tables. */
	out->attention += D * attn + E * attn + 2.0 * rel;
	out->dense_mlp += E * mlp;
	out->norms += D * n + E * 2.0 * n + n;
	out->total += D * (attn + n) + out->encoder + rel +
		(double)m->pos_embeddings * m->hidden;
	out->active = out->total;
	out->per_layer_max += attn + n;
	out->matmul_active += D * aw + E * (aw + mw);
}

/* A hybrid stack's counts, replacing the layer-wise ones model_params
 * made for `layers` attention + MLP/MoE layers: each pattern letter is
 * one layer with one pre-norm (Megatron-Core's hybrid stack: MambaLayer's
 * norm, the attention layer's input_layernorm, the MLP and MoE layers'
 * pre_mlp_layernorm), the attention block in the * layers only, the MLP
 * in the - layers, the experts and router in the E layers (moe: one MoE
 * block's parameters), a Mamba mixer in the M layers; the final norm. */
static void hybrid_params(const gp_model *m, double attn, double mlp,
			  double moe, gp_params *out)
{
	double na = model_attn_layers(m), nm = model_mamba_layers(m);
	double nd = model_pattern_in(m, '-', 0, m->layers);
	double ne = model_moe_layers(m), n = m->norm_params;
	double mb = nm > 0 ? model_mamba_params(m) : 0.0;

	out->attention = na * attn;
	out->dense_mlp = nd * mlp;
	out->mamba = nm * mb;
	out->norms = (m->layers + 1.0) * n;
	out->total = out->embedding + out->lm_head + out->attention +
		out->dense_mlp + out->experts + out->router + out->norms +
		out->mamba;
	out->active = out->total - ne * (double)(m->moe.experts -
						 m->moe.top_k) *
		(ne > 0 ? mlp_params(m, m->moe.ffn_hidden) : 0.0);
	out->per_layer_max = n + fmax(fmax(na > 0 ? attn : 0.0,
					   nd > 0 ? mlp : 0.0),
				      fmax(ne > 0 ? moe : 0.0, mb));
	out->matmul_active = na * model_attn_weights(m) +
		nd * (nd > 0 ? mlp_weights(m, model_dense_ffn(m)) : 0.0) +
		ne * (ne > 0 ? (double)m->hidden * m->moe.experts +
		      shared_gate_weights(m) +
		      m->moe.top_k * mlp_weights(m, m->moe.ffn_hidden) +
		      m->moe.shared_experts *
		      mlp_weights(m, model_shared_ffn(m)) : 0.0) +
		nm * (nm > 0 ? mamba_weights(m) : 0.0) +
		(double)m->vocab * m->hidden;
}

int model_params(const gp_model *m, gp_params *out, gp_error *err)
{
	double nf, attn, dense_mlp_one, expert_one, shared_one, router_one;
	double norms_layer, dense_layer, moe_layer;
	int nmoe, ndense;

	if (!out)
		return gp_fail(err, "model_params: NULL output");
	if (model_check(m, err) != GP_OK)
		return GP_EINVAL;
	nf = norm_factor(m);
	nmoe = model_moe_layers(m);
	ndense = m->pattern[0] ? model_pattern_in(m, '-', 0, m->layers) :
		m->layers - nmoe;

	attn = model_attn_weights(m) + attn_biases(m);
	/* Two norms per layer (pre-attention, pre-MLP; one under
	 * shared_norm); MLA adds RMSNorms on the q and kv latents
	 * (DeepSeek-V2 modelling: q_a_layernorm, kv_a_layernorm). */
	norms_layer = model_layer_norms(m) * m->norm_params;
	if (m->mla.kv_lora_rank > 0)
		norms_layer += nf * ((double)m->mla.kv_lora_rank +
				     m->mla.q_lora_rank);

	dense_mlp_one = ndense > 0 ? mlp_params(m, model_dense_ffn(m)) : 0.0;
	expert_one = nmoe > 0 ? mlp_params(m, m->moe.ffn_hidden) : 0.0;
	shared_one = nmoe > 0 ? mlp_params(m, model_shared_ffn(m)) : 0.0;
	/* Router: one h x E gate per MoE layer (Shazeer et al. 2017), and
	 * the shared expert's h x 1 sigmoid gate where the model has one
	 * (shared_gate_weights). */
	router_one = nmoe > 0 ? (double)m->hidden * m->moe.experts +
		shared_gate_weights(m) : 0.0;

	out->embedding = (double)m->vocab * m->hidden +
		(double)m->pos_embeddings * m->hidden;
	out->encoder = 0;
	out->lm_head = m->tied_embeddings ? 0.0 : (double)m->vocab * m->hidden;
	out->attention = m->layers * attn;
	out->dense_mlp = ndense * dense_mlp_one;
	out->experts = nmoe * ((double)m->moe.experts * expert_one +
			       (double)m->moe.shared_experts * shared_one);
	out->router = nmoe * router_one;
	out->norms = m->layers * norms_layer + m->norm_params;
	out->vision = has_vision(m) ? vision_params(m) : 0.0;
	out->total = out->embedding + out->lm_head + out->attention +
		out->dense_mlp + out->experts + out->router + out->norms +
		out->vision;
	/* Active: each token visits top_k of the routed experts. */
	out->active = out->total - nmoe * (double)(m->moe.experts -
						   m->moe.top_k) * expert_one;

	dense_layer = attn + norms_layer + dense_mlp_one;
	moe_layer = attn + norms_layer + router_one +
		(double)m->moe.experts * expert_one +
		(double)m->moe.shared_experts * shared_one;
	out->per_layer_max = ndense > 0 ? dense_layer : 0.0;
	if (nmoe > 0 && moe_layer > out->per_layer_max)
		out->per_layer_max = moe_layer;

	/* Matmul weights one token passes through (no biases, norms or
	 * lookup); the logits multiply by V x h whether tied or not. */
	out->matmul_active = m->layers * model_attn_weights(m) +
		ndense * (ndense > 0 ? mlp_weights(m, model_dense_ffn(m)) : 0.0) +
		nmoe * (router_one +
			m->moe.top_k * mlp_weights(m, m->moe.ffn_hidden) +
			m->moe.shared_experts *
			mlp_weights(m, model_shared_ffn(m))) +
		(double)m->vocab * m->hidden;
	out->mamba = 0;
	if (m->encoder_layers > 0)
		encdec_params(m, attn, dense_mlp_one, out);
	if (m->pattern[0])
		hybrid_params(m, attn, dense_mlp_one, moe_layer - attn -
			      norms_layer, out);
	return GP_OK;
}

/* Attention-score and value FLOP per token per layer over c keys:
 * QK^T 2 c a dqk and PV 2 c a dv (Kaplan et al. 2020 Table 1 count
 * 2 n_ctx d_attn for both together at the forward pass per token; here
 * split so MLA's 192-wide scores and 128-wide values differ). */
static double attn_ctx_flops(const gp_model *m, double c)
{
	double dqk = m->head_dim, dv = m->head_dim;

	if (m->mla.kv_lora_rank > 0) {
		dqk = (double)m->mla.qk_nope_head_dim + m->mla.qk_rope_head_dim;
		dv = m->mla.v_head_dim;
	}
	return 2.0 * c * m->heads * dqk + 2.0 * c * m->heads * dv;
}

double model_layer_kv(const gp_model *m, int sliding, double ctx)
{
	if (!(ctx > 0))
		return 0.0;
	if (sliding && m->sliding_window > 0 && ctx > m->sliding_window)
		return m->sliding_window;
	return ctx;
}

double model_kv_read_mean(const gp_model *m, double ctx)
{
	double La = model_attn_layers(m), ns;

	ns = m->sliding_window > 0 ? m->sliding_layers : 0;
	if (!(La > 0))
		return model_layer_kv(m, 0, ctx);
	return ((La - ns) * model_layer_kv(m, 0, ctx) +
	        ns * model_layer_kv(m, 1, ctx)) / La;
}

double model_fwd_flops_per_token(const gp_model *m, double ctx)
{
	gp_params p;
	double full, win, f;
	int nslide;

	if (!gp_finite(ctx) || ctx < 0 || ctx > GP_COUNT_MAX)
		return -1.0;
	if (model_params(m, &p, NULL) != GP_OK)
		return -1.0;
	nslide = m->sliding_window > 0 ? m->sliding_layers : 0;
	win = model_layer_kv(m, 1, ctx);
	full = model_layer_kv(m, 0, ctx);
	/* 2 FLOP per multiply-add through every active weight (Kaplan et al.
	 * 2020, C_forward ~ 2N + 2 n_layer n_ctx d_attn). */
	f = 2.0 * p.matmul_active;
	f += (model_attn_layers(m) - nslide) * attn_ctx_flops(m, full) +
		nslide * attn_ctx_flops(m, win);
	/* A Mamba layer's scan, whatever ctx: the chunked form training
	 * and prefill run, at whole chunks (a sequence of a chunk or
	 * more). */
	if (model_mamba_layers(m) > 0)
		f += model_mamba_layers(m) *
			model_mamba_scan_flops(m, m->mamba.chunk);
	/* Encoder-decoder: the encoder token's attention over ctx keys and
	 * the decoder token's cross-attention over ctx encoder keys. */
	if (m->encoder_layers > 0)
		f += (m->encoder_layers + m->layers) * attn_ctx_flops(m, full);
	return f;
}

double model_kv_bytes_per_token(const gp_model *m, double elem_bytes)
{
	if (!gp_finite(elem_bytes) || elem_bytes <= 0 ||
	    elem_bytes > GP_ELEM_BYTES_MAX)
		return -1.0;
	if (model_check(m, NULL) != GP_OK)
		return -1.0;
	if (m->mla.kv_lora_rank > 0)
		/* MLA caches the compressed latent c_KV and the shared rope
		 * key k^R (DeepSeek-V2 section 2.1.2, Table 1:
		 * (d_c + d_h^R) l elements per token). */
		return (double)m->layers *
			((double)m->mla.kv_lora_rank +
			 m->mla.qk_rope_head_dim) * elem_bytes;
	/* K and V: 2 * layers * kv_heads * head_dim elements per token;
	 * a hybrid stack's attention layers only (a Mamba layer keeps a
	 * state of fixed size instead: model_mamba_state_bytes). */
	return 2.0 * model_attn_layers(m) * (double)m->kv_heads *
		m->head_dim * elem_bytes;
}

double model_kv_bytes(const gp_model *m, double ctx, double elem_bytes)
{
	double per_tok, per_layer, win;
	int nslide;

	if (!gp_finite(ctx) || ctx < 0 || ctx > GP_COUNT_MAX)
		return -1.0;
	per_tok = model_kv_bytes_per_token(m, elem_bytes);
	if (per_tok < 0)
		return -1.0;
	if (per_tok == 0)
		return 0.0;   /* a hybrid stack without attention layers */
	per_layer = per_tok / model_attn_layers(m);
	nslide = m->sliding_window > 0 ? m->sliding_layers : 0;
	/* A sliding-window layer keeps only the last window tokens (Beltagy
	 * et al. 2020; Mistral 7B's rolling buffer cache). */
	win = model_layer_kv(m, 1, ctx);
	return (model_attn_layers(m) - nslide) * per_layer *
		model_layer_kv(m, 0, ctx) + nslide * per_layer * win;
}

/* The SSD algorithm (Dao & Gu 2024, arXiv:2405.21060, section 6,
 * "Hardware-Efficient Algorithm for SSD Models") splits the sequence
 * into chunks of Q tokens and computes, per head of P channels and
 * state N (the heads of a group share its B and C):
 *   1. diagonal blocks: within each chunk the masked quadratic form
 *      (C B^T o L) X -- C B^T is Q x Q over N, once per group (the
 *      kernel's _bmm_chunk_fwd runs over ngroups), 2 Q^2 N a chunk;
 *      its product with X is Q x P over Q a head, 2 Q^2 P;
 *   2. right factors: each chunk's final state B^T X, N x P over Q a
 *      head, 2 Q N P;
 *   3. the inter-chunk recurrence: one N x P scaled add per chunk a
 *      head, 2 N P;
 *   4. left factors: each token's output from the incoming state, C
 *      times the N x P state, 2 Q N P a chunk a head.
 * Per token (divide by Q): groups 2 Q N + heads (2 Q P + 4 N P +
 * 2 N P / Q).  The blocks of step 1 are counted whole, as the paper's
 * batched matmul computes them (the mask L zeroes, it does not skip).
 * The chunk is min(chunk, seq): a sequence shorter than a chunk is one
 * chunk of its own length.  The skip term D x, the decays and the
 * gating are element-wise work, not counted here. */
double model_mamba_scan_flops(const gp_model *m, double seq)
{
	const gp_mamba *b = &m->mamba;
	double q, n, p;

	if (!gp_finite(seq) || seq < 1 || seq > GP_COUNT_MAX ||
	    model_check(m, NULL) != GP_OK || b->heads <= 0)
		return -1.0;
	q = fmin((double)b->chunk, seq);
	n = b->state;
	p = b->head_dim;
	return b->groups * 2.0 * q * n +
		b->heads * (2.0 * q * p + 4.0 * n * p + 2.0 * n * p / q);
}

/* Serving keeps, per sequence and Mamba layer, the SSM state (heads x
 * head_dim x state: "ssm_state" of MambaMixer's inference cache,
 * allocate_inference_cache in mamba_mixer.py) and the conv1d's last
 * conv - 1 inputs of its conv_dim channels ("conv_state"), whatever the
 * sequence's length -- in place of a KV cache. */
double model_mamba_state_bytes(const gp_model *m, double elem_bytes)
{
	const gp_mamba *b = &m->mamba;

	if (!gp_finite(elem_bytes) || elem_bytes <= 0 ||
	    elem_bytes > GP_ELEM_BYTES_MAX || model_check(m, NULL) != GP_OK)
		return -1.0;
	if (model_mamba_layers(m) == 0)
		return 0.0;
	return model_mamba_layers(m) * elem_bytes *
		((double)b->heads * b->head_dim * b->state +
		 (b->conv - 1.0) * mamba_conv_dim(b));
}

double model_mamba_serve_bytes(const gp_model *m, double tp,
			       double conv_bytes, double ssm_bytes)
{
	const gp_mamba *b = &m->mamba;

	if (!gp_finite(tp) || tp < 1 || tp > GP_COUNT_MAX ||
	    !gp_finite(conv_bytes) || conv_bytes <= 0 ||
	    conv_bytes > GP_ELEM_BYTES_MAX || !gp_finite(ssm_bytes) ||
	    ssm_bytes <= 0 || ssm_bytes > GP_ELEM_BYTES_MAX ||
	    model_check(m, NULL) != GP_OK)
		return -1.0;
	if (model_mamba_layers(m) == 0)
		return 0.0;
	return model_mamba_layers(m) *
		((double)b->heads / tp * b->head_dim * b->state * ssm_bytes +
		 (b->conv - 1.0) * mamba_conv_dim(b) / tp * conv_bytes);
}

/* What one Mamba layer keeps for its backward, per token, on Megatron-
 * Core's training path (mamba_mixer.py: use_mamba_mem_eff_path calls
 * mamba_split_conv1d_scan_combined without the norm or out_proj, then
 * self.norm(y) and out_proj):
 *   the pre-norm fused into in_proj (TELayerNormColumnParallelLinear):
 *     its input and its output, hidden each;
 *   mamba_split_conv1d_scan_combined (mamba_ssm ops/triton/
 *     ssd_combined.py MambaSplitConv1dScanCombinedFn,
 *     "ctx.save_for_backward(zxbcdt, conv1d_weight, conv1d_bias, out_x,
 *     ...)"): in_proj's whole output zxbcdt (2 d_inner + 2 groups state
 *     + heads) and the scan's output out_x before the gate (d_inner);
 *     the conv output, the chunk states and dA_cumsum are recomputed in
 *     its backward, not kept;
 *   the gated RMSNorm (RMSNormGated, group_size d_inner / groups): its
 *     input (d_inner) and one fp32 rstd a group;
 *   out_proj: its input, the norm's output (d_inner).
 * = act_bytes (2 hidden + in_width + 3 d_inner) + 4 groups. */
double model_mamba_act_bytes(const gp_model *m, double act_bytes)
{
	const gp_mamba *b = &m->mamba;
	double di = (double)b->heads * b->head_dim;

	if (!gp_finite(act_bytes) || act_bytes <= 0 ||
	    act_bytes > GP_ELEM_BYTES_MAX || model_check(m, NULL) != GP_OK ||
	    b->heads <= 0)
		return -1.0;
	return act_bytes * (2.0 * m->hidden + mamba_in_width(b) + 3.0 * di) +
		4.0 * b->groups;
}

int model_check_priced(const gp_model *m, gp_error *err)
{
	if (model_check(m, err) != GP_OK)
		return GP_EINVAL;
	if (m->pattern[0])
		return gp_fail(err, "model.hybrid_pattern: a hybrid stack's "
			       "Mamba layers are not priced by rl (its "
			       "rollouts' serving state); infer, roofline, "
			       "train, fit and plan price it, `gpuplan model "
			       "params` counts its parameters");
	return GP_OK;
}

double model_cross_kv_bytes(const gp_model *m, double enc_len,
			    double elem_bytes)
{
	double per_tok;

	if (!gp_finite(enc_len) || enc_len < 0 || enc_len > GP_COUNT_MAX)
		return -1.0;
	per_tok = model_kv_bytes_per_token(m, elem_bytes);
	if (per_tok < 0)
		return -1.0;
	/* Each decoder layer's cross K and V have the self-attention's
	 * width (k, v: h x kv_heads*head_dim), one pair per encoder
	 * token: the same 2 * layers * kv_heads * head_dim per token. */
	return m->encoder_layers > 0 ? per_tok * enc_len : 0.0;
}

void model_vision_tower(const gp_model *m, gp_model *v)
{
	memset(v, 0, sizeof *v);
	v->layers = m->vision.layers;
	v->hidden = m->vision.hidden;
	v->heads = m->vision.heads;
	v->kv_heads = m->vision.heads;
	v->head_dim = m->vision.heads > 0 ?
		m->vision.hidden / m->vision.heads : 0;
	v->ffn_hidden = m->vision.ffn_hidden;
	v->ffn_gated = m->vision.ffn_gated;
	v->vocab = 1;
	v->norm_params = 2 * m->vision.hidden;
	v->linear_bias = 1;
}

double model_vision_tokens(const gp_model *m)
{
	const gp_vision *v;
	double side;
	int merge;

	if (model_check(m, NULL) != GP_OK)
		return -1.0;
	v = &m->vision;
	if (!has_vision(m))
		return 0.0;
	if (v->tokens_per_image > 0)
		return v->tokens_per_image;
	/* (image / patch)^2 patches, merged merge x merge into one token
	 * (Qwen2-VL: 2x2 adjacent patches per token, Wang et al. 2024). */
	merge = v->merge > 1 ? v->merge : 1;
	side = floor((double)v->image_size / v->patch_size / merge);
	return side * side;
}

double model_vision_patches(const gp_model *m)
{
	const gp_vision *v;
	double tokens, merge, side, grid, own;

	tokens = model_vision_tokens(m);
	if (tokens <= 0)
		return tokens;
	v = &m->vision;
	merge = v->merge > 1 ? v->merge : 1;
	/* The tower's patch grid: its patch embedding (Qwen-VL's and CLIP's
	 * conv1, kernel and stride patch_size) cuts a side of image_size
	 * pixels into floor(image / patch) patches, whole merge x merge
	 * groups of them where a merger follows (Qwen2-VL's smart_resize
	 * makes a side a multiple of patch x merge).  Every ViT layer runs
	 * over all of them: Qwen-VL's VisionTransformer.forward (visual.py)
	 * runs "x = self.conv1(x)  # shape = [*, width, grid, grid]",
	 * "x = self.transformer(x)" over the grid ** 2 patches and only
	 * then "x = self.attn_pool(x)", the resampler whose 256 learned
	 * queries cross-attend to them (Bai et al. 2023, arXiv:2308.12966
	 * sec. 2.1, the position-aware adapter: one cross-attention layer
	 * that compresses the image features to a fixed 256) -- 1024
	 * patches at 448 px, 256 tokens.  A
	 * tower whose tokens outnumber its grid (LLaVA's "full" feature
	 * strategy keeps the CLS token) encodes at least those. */
	side = v->image_size > 0 && v->patch_size > 0 ?
		floor(floor((double)v->image_size / v->patch_size) / merge) *
		merge : 0.0;
	grid = side * side;
	own = tokens * merge * merge;
	return grid > own ? grid : own;
}

double model_vision_flops_per_image(const gp_model *m)
{
	const gp_vision *v;
	double patches, h, f, mm, tp, tokens;

	if (model_check(m, NULL) != GP_OK)
		return -1.0;
	v = &m->vision;
	if (!has_vision(m))
		return 0.0;
	if (v->layers <= 0 || v->image_size <= 0)
		return -1.0; /* an opaque params-only tower has no shape */
	patches = model_vision_patches(m);
	tokens = model_vision_tokens(m);
	tp = v->temporal_patch > 1 ? v->temporal_patch : 1;
	h = v->hidden;
	f = v->ffn_hidden;
	/* Per patch per layer: 2 * (4h^2 + (2|3) h f) matmul FLOP plus full
	 * self-attention over all patches, 4 * patches * h (scores and PV);
	 * the patch conv 2 * 3 tp p^2 h per patch; the projector 2 * its
	 * params per output token (after the merge). */
	mm = 4.0 * h * h + (v->ffn_gated ? 3.0 : 2.0) * h * f;
	return v->layers * patches * (2.0 * mm + 4.0 * patches * h) +
		2.0 * 3.0 * tp * (double)v->patch_size * v->patch_size * h *
		patches + 2.0 * v->projector_params * tokens;
}

void model_widths(const gp_model *m, gp_widths *w)
{
	const gp_mla *a = &m->mla;

	if (a->kv_lora_rank > 0) {
		/* DeepSeek-V2 sec. 2.1.2: per-head q and k of
		 * nope + rope dims, v of v_head_dim; the normalised kv and
		 * q latents feed the up-projections, so they are saved. */
		double dq = (double)a->qk_nope_head_dim + a->qk_rope_head_dim;
		w->q = m->heads * dq;
		w->k = m->heads * dq;
		w->v = (double)m->heads * a->v_head_dim;
		w->o = w->v;
		w->latent = 2.0 * ((double)a->kv_lora_rank + a->q_lora_rank);
	} else {
		w->q = (double)m->heads * m->head_dim;
		w->k = (double)m->kv_heads * m->head_dim;
		w->v = w->k;
		w->o = w->q;
		w->latent = 0;
	}
	w->dense_f = model_dense_ffn(m);
	w->expert_f = m->moe.ffn_hidden;
	w->shared_f = m->moe.shared_experts * model_shared_ffn(m);
}
