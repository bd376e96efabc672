/*
 * model.h - transformer architecture -> parameter counts and FLOPs.
 *
 * A gp_model describes a decoder-only transformer (dense, GQA/MQA, MLA, MoE)
 * with an optional vision tower.  All counts are in elements (parameters)
 * or FLOP; a multiply-add is 2 FLOP.  The caller owns every struct.
 */
#ifndef GP_MODEL_H
#define GP_MODEL_H

#include "common.h"

/* Mixture of experts; experts == 0 means a dense model. */
typedef struct gp_moe {
	int experts;          /* routed experts per MoE layer */
	int top_k;            /* routed experts each token visits */
	int shared_experts;   /* always-on experts, same width as routed */
	int ffn_hidden;       /* intermediate width of one expert */
	int dense_layers;     /* the first N layers use a dense MLP */
	int dense_ffn_hidden; /* their width; 0 = the model's ffn_hidden */
	int shared_ffn_hidden; /* width of one shared expert; 0 = ffn_hidden
				* above (Qwen2-MoE's shared expert is wider) */
} gp_moe;

/* Multi-head latent attention (DeepSeek-V2/V3); kv_lora_rank == 0: off. */
typedef struct gp_mla {
	int q_lora_rank;      /* 0 = queries projected directly */
	int kv_lora_rank;     /* latent width cached per token */
	int qk_nope_head_dim;
	int qk_rope_head_dim; /* decoupled rope key, shared by heads, cached */
	int v_head_dim;
} gp_mla;

/* Vision tower (ViT) + projector; layers == 0 and params == 0: none. */
typedef struct gp_vision {
	int layers, hidden, heads, ffn_hidden, ffn_gated;
	int image_size, patch_size;
	int merge;              /* spatial merge factor (Qwen2-VL: 2 -> 2x2) */
	int tokens_per_image;   /* LLM tokens one image becomes */
	double projector_params;
	double params;          /* when set (>0), overrides the derived count */
	int temporal_patch;     /* frames per patch: 0 or 1 = images only;
				 * Qwen2-VL / Qwen2.5-VL: 2 (3-D conv) */
} gp_vision;

typedef struct gp_model {
	int layers;
	int hidden;
	int heads;
	int kv_heads;         /* == heads for MHA, 1 for MQA */
	int head_dim;         /* usually hidden / heads */
	int ffn_hidden;       /* dense MLP intermediate width */
	int ffn_gated;        /* 1: SwiGLU/GeGLU (gate, up, down) */
	int vocab;
	int tied_embeddings;  /* 1: logits reuse the embedding matrix */
	int qkv_bias;         /* 1: biases on q, k, v (Qwen2) */
	int norm_params;      /* parameters per norm: hidden (RMS) or
			       * 2*hidden (LayerNorm) */
	int sliding_window;   /* window size in tokens, 0 = none */
	int sliding_layers;   /* how many layers use the window */
	gp_moe moe;
	gp_mla mla;
	gp_vision vision;
	int linear_bias;      /* 1: every linear has a bias (GPT-2/3, Megatron
			       * GPT, BLOOM); implies the qkv biases */
	int pos_embeddings;   /* rows of a learned absolute position table
			       * (GPT-3: 2048); 0 = rotary / ALiBi */
} gp_model;

/* Parameter counts, in elements. */
typedef struct gp_params {
	double embedding;     /* input embedding */
	double lm_head;       /* 0 when tied */
	double attention;     /* all layers: q, k, v, o (+ MLA down/up,
			       * biases) */
	double dense_mlp;     /* all dense-MLP layers */
	double experts;       /* all routed + shared experts, all MoE layers */
	double router;        /* MoE gates */
	double norms;         /* layer norms and the final norm */
	double vision;        /* vision tower + projector */
	double total;         /* everything above */
	double active;        /* per token: routed experts counted
			       * top_k/experts */
	double per_layer_max; /* largest single transformer layer */
	double matmul_active; /* weights one token multiplies through in the
			       * language model: active attention, MLP and
			       * expert matrices, routers and the logits
			       * (counted even when tied); no embedding
			       * lookup, norms, biases or vision tower */
} gp_params;

/* Check a model for impossible or contradictory shapes (non-positive sizes,
 * kv_heads not dividing heads, top_k > experts, ...).  GP_OK or GP_EINVAL
 * with the offending field named in err. */
int model_check(const gp_model *m, gp_error *err);

/* Count parameters.  m must pass model_check.  Fills *out; GP_OK or
 * GP_EINVAL. */
int model_params(const gp_model *m, gp_params *out, gp_error *err);

/* Forward FLOP per token of the language model at a context of ctx tokens
 * already in the KV cache (attention scores and values grow with ctx):
 * 2 * active matmul parameters (logits included, embedding lookup not)
 * + attention 2 * 2 * ctx * heads * head_dim per layer (causal averaging is
 * the caller's business: pass the mean context); sliding-window layers
 * attend to min(ctx, window) tokens.  MLA scores use qk_nope + qk_rope
 * per head and the value product v_head_dim.  Returns FLOP, or -1 when
 * the model is invalid or ctx is not in [0, GP_COUNT_MAX]. */
double model_fwd_flops_per_token(const gp_model *m, double ctx);

/* Layer shapes of a (possibly MoE) model, m valid: the MLP width of its
 * dense layers (dense_ffn_hidden in an MoE model when set, else
 * ffn_hidden), the width of one shared expert (shared_ffn_hidden, else the
 * routed experts' ffn_hidden) and how many layers are MoE (the first
 * moe.dense_layers stay dense). */
double model_dense_ffn(const gp_model *m);
/* Attention weight matrices of one layer (q, k, v, o, or MLA's latent
 * down- and up-projections), biases excluded; m valid. */
double model_attn_weights(const gp_model *m);
double model_shared_ffn(const gp_model *m);
int model_moe_layers(const gp_model *m);

/* Widths of one layer's tensors per token, in elements, for the whole
 * layer (before any tensor-parallel split). */
typedef struct gp_widths {
	double q, k, v;      /* Q and K (after rope), V */
	double o;            /* output-projection input */
	double latent;       /* MLA latents read by the up-projections */
	double dense_f;      /* dense MLP intermediate */
	double expert_f;     /* one routed expert's intermediate */
	double shared_f;     /* all shared experts' intermediates */
} gp_widths;

/* Fill *w for a valid model m (GQA: k, v are kv_heads wide; MLA:
 * DeepSeek-V2 sec. 2.1.2 per-head nope + rope q and k, v_head_dim v,
 * the two latents). */
void model_widths(const gp_model *m, gp_widths *w);

/* Number of LLM tokens one image becomes: tokens_per_image when set, else
 * (image_size / patch_size / merge)^2.  0 for a model without a vision
 * tower, -1 when invalid. */
double model_vision_tokens(const gp_model *m);

/* Forward FLOP of the vision tower for one image: 2 * matmul params *
 * patches + 4 * patches^2 * hidden per ViT layer (full attention over the
 * patches) + 2 * projector params * patches.  0 without a vision tower,
 * -1 when invalid. */
double model_vision_flops_per_image(const gp_model *m);

/* KV-cache bytes per token for the whole model at elem_bytes per element:
 * 2 * layers * kv_heads * head_dim * elem_bytes (K and V); MLA caches the
 * latent (kv_lora_rank + qk_rope_head_dim) per layer instead.  Sliding-window
 * layers are counted in full here; capping them at the window is the
 * caller's business (model_kv_bytes handles it for a given context).
 * Returns bytes, or -1 for an invalid model or elem_bytes outside
 * (0, GP_ELEM_BYTES_MAX]. */
double model_kv_bytes_per_token(const gp_model *m, double elem_bytes);

/* KV-cache bytes for one sequence of ctx tokens (0..GP_COUNT_MAX):
 * sliding-window layers hold at most sliding_window tokens.  Returns
 * bytes, or -1 when invalid. */
double model_kv_bytes(const gp_model *m, double ctx, double elem_bytes);

#endif
