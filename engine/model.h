/*
 * model.h - transformer architecture -> parameter counts and FLOPs.
 *
 * A gp_model describes a decoder-only transformer (dense, GQA/MQA, MLA, MoE)
 * with an optional vision tower, or an encoder-decoder (T5: an encoder
 * stack of encoder_layers bidirectional layers, a decoder stack of
 * `layers` layers with cross-attention over the encoder output, relative
 * position buckets).  All counts are in elements (parameters) or FLOP; a
 * multiply-add is 2 FLOP.  The caller owns every struct.
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
	int layer_step;       /* after them every layer_step-th layer is MoE:
			       * layer i (0-based) when (i + 1) % layer_step
			       * == 0, the rest dense (Hugging Face Llama 4's
			       * interleave_moe_layer_step; Megatron-Core's
			       * moe_layer_freq [0,1]*24 is step 2); 0 or 1:
			       * every one */
	int dense_ffn_hidden; /* their width; 0 = the model's ffn_hidden */
	int shared_ffn_hidden; /* width of one shared expert; 0 = ffn_hidden
				* above (Qwen2-MoE's shared expert is wider) */
	int groups;           /* group-limited routing: the experts split in
			       * groups equal groups, each token's top_k
			       * picked from its best group_top_k of them
			       * (Hugging Face DeepSeek-V3's n_group /
			       * topk_group, Megatron-Core's
			       * moe_router_num_groups / moe_router_group_topk);
			       * 0: ungrouped */
	int group_top_k;      /* the groups a token's picks come from */
	int shared_expert_gate; /* 1: a sigmoid gate scales the shared
				 * experts' output per token (Qwen1.5-MoE,
				 * Qwen2-MoE: transformers' and vLLM's
				 * Qwen2MoeSparseMoeBlock "shared_expert_gate
				 * = torch.nn.Linear(config.hidden_size, 1,
				 * bias=False)"); model_shared_gate_ops */
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

/* How a model encodes positions (catalog/FORMAT.md `positions`):
 * rotary embeddings applied to q and k in every layer (Su et al. 2021,
 * RoFormer; Llama, Qwen, DeepSeek's decoupled rope key), a learned
 * absolute table added to the token embeddings at the input (GPT-3, OPT,
 * MPT with learned_pos_emb), or ALiBi's per-head linear bias on the
 * attention scores (Press et al. 2022; BLOOM, MPT with alibi), or none
 * at all (Megatron-Core's position_embedding_type "none": a hybrid
 * Mamba stack's attention layers, whose order comes from the Mamba
 * layers' recurrence; MambaModelProvider "position_embedding_type: ...
 * = \"none\"").  An encoder-decoder's relative bias is rel_buckets'. */
typedef enum gp_pos {
	GP_POS_ROPE = 0, GP_POS_LEARNED, GP_POS_ALIBI, GP_POS_NONE,
	GP_POS_COUNT
} gp_pos;

/* The Mamba-2 mixer of a hybrid model's Mamba layers (Dao & Gu 2024,
 * arXiv:2405.21060, "Transformers are SSMs"; Megatron-Core
 * megatron/core/ssm/mamba_mixer.py MambaMixer): heads x head_dim is the
 * inner width d_inner; B and C are state wide per group; heads == 0: no
 * Mamba layer. */
typedef struct gp_mamba {
	int heads;            /* nheads (mamba_num_heads) */
	int head_dim;         /* P (mamba_head_dim) */
	int state;            /* N (mamba_state_dim, d_state) */
	int groups;           /* ngroups of B and C (mamba_num_groups) */
	int conv;             /* depthwise causal conv1d kernel (d_conv) */
	int chunk;            /* the SSD scan's chunk length Q (chunk_size) */
} gp_mamba;

/* Longest hybrid layer pattern (one letter a layer). */
#define GP_PATTERN_MAX 1024

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
			       * (GPT-3: 2048); 0 = none or not stated */
	int positions;        /* gp_pos: how the layers learn where a token
			       * is (catalog `positions`) */
	/* Encoder-decoder (Raffel et al. 2020, T5): encoder_layers > 0
	 * makes `layers` the decoder stack.  Each decoder layer adds a
	 * cross-attention block (norm, q from the decoder, k and v from
	 * the encoder output, o) of the self-attention's shape.  No MoE,
	 * MLA, sliding window or vision tower with it. */
	int encoder_layers;   /* 0 = decoder-only */
	int rel_buckets;      /* T5 relative position buckets: a buckets x
			       * heads bias table in the first layer of each
			       * stack; 0 = none (encoder-decoder only) */
	int ffn_relu;         /* 1: the plain MLP's activation is ReLU (T5
			       * v1.0), whose backward keeps its output --
			       * the down-projection's input -- instead of
			       * its input */
	int ffn_gelu;         /* 1: the MLP's activation is a GeLU (ffn_act
			       * "gelu" or "gelu_new"); an encoder-decoder's
			       * gated GeLU is Hugging Face's gelu_new
			       * (memory_act.c) */
	int ffn_relu2;        /* 1: ffn_act "relu2": squared ReLU, relu(x)^2,
			       * on a plain MLP (Nemotron-4; Megatron-Core
			       * activations.py squared_relu, Hugging Face
			       * ACT2FN "relu2"): 2 FLOP and one read and
			       * one write per ffn element forward
			       * (model_ops.c mlp_act) */
	int ffn_gelu_new;     /* 1: ffn_act "gelu_new": Hugging Face's tanh
			       * GeLU written as tensor ops (GPT-2's
			       * activation_function), which the eager
			       * modules run as 8 kernels (train_layer.c
			       * gelu_new_fwd) */
	int qk_norm;          /* 1: an RMSNorm over each head's q and each
			       * KV head's k after the projection, before
			       * rope (Qwen3's q_norm and k_norm; Megatron-
			       * Core's qk_layernorm): model_ops.c qk_norm */
	int parallel_attn;    /* 1: attention and MLP run side by side on
			       * the layer's input and their row-parallel
			       * partial sums are added before one
			       * all-reduce a layer under TP (Falcon's
			       * parallel_attn / new_decoder_architecture:
			       * TensorRT-LLM's and vLLM's FalconDecoderLayer);
			       * infer.c step_comm */
	int shared_norm;      /* 1: a parallel layer (parallel_attn) whose
			       * attention and MLP both read one pre-norm's
			       * output: no norm before the MLP (GPT-J's
			       * ln_1 alone, Hugging Face's GPTJBlock and
			       * TensorRT-LLM's GPTJDecoderLayer);
			       * model_ops.c model_layer_ops */
	int ffn_clamp;        /* 1: the gated activation clamps its two
			       * halves first (GPT-OSS's swiglu_limit,
			       * Megatron-Core's activation_func_clamp_value);
			       * priced on the routed experts (train_layer.c
			       * moe_clamp_costs) */
	/* A hybrid stack (Megatron-Core's hybrid_override_pattern,
	 * megatron/core/models/hybrid/hybrid_layer_allocation.py Symbols):
	 * one letter a layer, M a Mamba-2 mixer, * self-attention, - an
	 * MLP, E an MoE block, each a layer of its own with its pre-norm.
	 * "" (the default): every layer is attention + MLP or MoE. */
	char pattern[GP_PATTERN_MAX + 1];
	gp_mamba mamba;
	double rope_attn_factor; /* YaRN's attention factor (Hugging Face's
			       * rope_scaling attention_factor, Megatron-Core's
			       * concentration factor): RoPE's cos and sin are
			       * scaled by it; 0 or 1 = unscaled.  Megatron-Core
			       * runs a scaled rope unfused (train_layer.c
			       * rope_unfused) */
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
	double mamba;         /* all Mamba layers' mixers: in_proj, conv1d,
			       * A, D, dt_bias, the gated norm, out_proj */
	double vision;        /* vision tower + projector */
	double encoder;       /* encoder-decoder: the encoder stack's layers
			       * and final norm, also counted in attention,
			       * dense_mlp and norms (not in total twice) */
	double total;         /* everything above but encoder */
	double active;        /* per token: routed experts counted
			       * top_k/experts */
	double per_layer_max; /* largest single transformer layer (the
			       * decoder layer of an encoder-decoder) */
	double matmul_active; /* weights one token multiplies through in the
			       * language model: active attention, MLP and
			       * expert matrices, routers and the logits
			       * (counted even when tied); no embedding
			       * lookup, norms, biases or vision tower.
			       * Encoder-decoder: one encoder token and one
			       * decoder token (both stacks, cross q, k, v
			       * and o, the logits) */
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
 * per head and the value product v_head_dim.  An encoder-decoder counts
 * one token of each stack (an input and a target of equal length ctx):
 * the encoder's attention over ctx keys, the decoder's self-attention
 * over ctx and its cross-attention over ctx encoder keys.  Returns FLOP,
 * or -1 when the model is invalid or ctx is not in [0, GP_COUNT_MAX]. */
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
/* Hidden-width norms of one decoder layer, m valid: 2 (before the
 * attention and before the MLP), 1 under shared_norm (GPT-J's ln_1
 * alone).  Each holds norm_params elements. */
double model_layer_norms(const gp_model *m);
/* Norm modules of one decoder layer, m valid: the model_layer_norms
 * and, under qk_norm, the q and k norms (Qwen3Attention's q_norm and
 * k_norm); and their parameter tensors, a gain each (RMSNorm) or a gain
 * and a bias (LayerNorm). */
double model_layer_norm_modules(const gp_model *m);
double model_layer_norm_tensors(const gp_model *m);
/* MLA's up-projection weights of one layer (q's from the q latent when
 * there is one, k's and v's from the kv latent), in elements; 0 without
 * MLA; m valid. */
double model_mla_up_weights(const gp_model *m);
/* MLA's down-projection weights of one layer (the q latent's when there is
 * one, the kv latent's and the shared rope key's), in elements; 0 without
 * MLA; m valid. */
double model_mla_down_weights(const gp_model *m);
double model_shared_ffn(const gp_model *m);
/* Layers of kind c (a hybrid pattern's letter) among layers [first,
 * first + n) of a hybrid model (m->pattern set), clipped to the pattern;
 * 0 when the model has no pattern. */
static inline int model_pattern_in(const gp_model *m, char c, int first,
				   int n)
{
	int i, k = 0;

	for (i = first < 0 ? 0 : first; i < first + n && m->pattern[i]; i++)
		k += m->pattern[i] == c;
	return k;
}
/* Self-attention layers: a hybrid pattern's * layers, else every layer;
 * Mamba layers: the pattern's M, else none. */
int model_attn_layers(const gp_model *m);
int model_mamba_layers(const gp_model *m);
/* One Mamba-2 mixer's parameters, its pre-norm excluded (model.c
 * mamba_params' derivation); m valid with mamba.heads > 0. */
double model_mamba_params(const gp_model *m);
/* A Mamba layer's in_proj output width, z x B C dt: 2 heads head_dim +
 * 2 groups state + heads; and its conv1d's channels, x B C: heads
 * head_dim + 2 groups state (mamba_mixer.py; before any TP split). */
double model_mamba_in_width(const gp_model *m);
double model_mamba_conv_dim(const gp_model *m);
/* Forward FLOP per token of one Mamba layer's chunked SSD scan
 * (mamba_chunk_scan_combined) over a sequence of seq tokens (the chunk
 * is min(mamba.chunk, seq)): model.c mamba_scan's count of the paper's
 * four steps.  -1 when m is invalid or seq is not in [1, GP_COUNT_MAX]. */
double model_mamba_scan_flops(const gp_model *m, double seq);
/* The backward of that scan per token on one GPU of a TP group (heads and
 * groups / tp), as mamba_ssm's _mamba_chunk_scan_combined_bwd runs it:
 * *flop its FLOP and *act the elements it reads and writes (16-bit
 * units, an fp32 element two), the forward's state kernels re-run and its
 * own 14 (model_ops.c mamba_scan_bwd).  -1 in both when m is invalid or
 * seq or tp out of range. */
void model_mamba_scan_bwd(const gp_model *m, double seq, int tp,
			  double *flop, double *act);
/* Bytes of the recurrent state one sequence keeps across every Mamba
 * layer while serving, whatever its length: the SSM state heads x
 * head_dim x state and the conv window (conv - 1) x conv channels, at
 * elem_bytes an element.  0 without Mamba layers; -1 when invalid. */
double model_mamba_state_bytes(const gp_model *m, double elem_bytes);
/* The serving state's element sizes (model_mamba_serve_bytes).  vLLM
 * keeps the conv state at mamba_cache_dtype, "auto": "the data type will
 * be inferred from the model config" (vllm/config/cache.py), the model's
 * 16 bits; and the SSM state at mamba_ssm_cache_dtype, which vLLM's
 * NemotronHForCausalLMConfig sets when "auto" to the HF config's value or
 * DEFAULT_MAMBA_SSM_CACHE_DTYPE = "float32", "Only `float32` is known to
 * have no accuracy issues by default" (vllm/model_executor/models/
 * config.py); NVIDIA's Nemotron 3 deployment guide says of it "Use
 * float32 for all checkpoint precisions". */
#define GP_MAMBA_CONV_STATE_BYTES 2.0
#define GP_MAMBA_SSM_STATE_BYTES 4.0
/* Bytes of that state one sequence keeps on one rank of a TP group of tp
 * over every Mamba layer: the SSM state (heads / tp) x head_dim x state
 * at ssm_bytes and the conv window (conv - 1) x conv_dim / tp at
 * conv_bytes (vLLM's MambaMixer2 shards heads and groups over TP,
 * mamba_utils.py get_mamba_state_shape).  0 without Mamba layers; -1
 * when invalid. */
double model_mamba_serve_bytes(const gp_model *m, double tp,
			       double conv_bytes, double ssm_bytes);
/* Bytes one token leaves saved for the backward in one Mamba layer,
 * before any tensor- or sequence-parallel split, act_bytes an element of
 * the 16-bit activations (model.c mamba_act's list).  -1 when invalid. */
double model_mamba_act_bytes(const gp_model *m, double act_bytes);
/* GP_OK when rl's rollouts price m; GP_EINVAL naming model.hybrid_pattern
 * for a hybrid model, whose Mamba layers' serving state they do not price
 * (the MoE serving model, serve.c serve_check, refuses it itself).  infer
 * on its replicas (infer.c, memory_infer.c) and roofline through it,
 * train, fit and plan price a hybrid stack (model_check is theirs). */
int model_check_priced(const gp_model *m, gp_error *err);
int model_moe_layers(const gp_model *m);
/* Matmul weights one token passes through in one MoE block: the router
 * (h x experts), its top_k routed experts and the shared experts (as
 * gp_params.matmul_active counts them); 0 for a dense model. */
double model_moe_matmul_weights(const gp_model *m);
/* MoE layers among layers [first, first + n) (0-based): those at or past
 * moe.dense_layers whose index + 1 is a multiple of moe.layer_step; 0 for
 * a dense model.  model_moe_layers(m) is model_moe_in(m, 0, layers). */
static inline int model_moe_in(const gp_model *m, int first, int n)
{
	int s = m->moe.layer_step > 1 ? m->moe.layer_step : 1;
	int a = first > m->moe.dense_layers ? first : m->moe.dense_layers;
	int b = first + n;

	if (m->pattern[0])
		return model_pattern_in(m, 'E', first, n);
	if (m->moe.experts <= 0 || b <= a)
		return 0;
	/* i in [a, b) with s | i + 1: the multiples of s in [a + 1, b] */
	return b / s - a / s;
}
/* The routed tokens the hottest of ep expert-parallel ranks receives over
 * the mean when nothing balances the router (model.c); 1 without EP.
 * model_ep_skew_at: the same rule for `ranks` ranks of el experts each,
 * top_k picks a token, a rank receiving `picks` picks in the step on
 * average (0: so many that only the placement's spread is left);
 * model_ep_skew is it with m's experts over ep and picks 0. */
double model_ep_skew_at(double ranks, double el, double top_k, double picks);
double model_ep_skew(const gp_model *m, int ep);
/* E[max] of G exchangeable normal deviations summing to zero, in sds of
 * one (Tippett's E[max] times sqrt(G / (G - 1))); 0 below 2. */
double model_max_dev(double G);
/* The variance of the picks one token sends to a rank of el of E experts
 * (top_k picks, group-limited over `groups` groups of which group_topk
 * are picked; groups 0 or 1: none), under routing even in expectation. */
/* moe.groups / moe.group_top_k beside the experts and top_k: 0 or
 * GP_EINVAL with the message (model.c). */
int model_moe_groups_check(const gp_moe *e, gp_error *err);
double model_moe_pick_var(double E, double el, double top_k, double groups,
			  double group_topk);
/* The busiest of `ranks` EP ranks' routed rows over the mean when only
 * chance spreads `tokens` tokens' picks (dropless routing even in
 * expectation): 1 + model_max_dev(ranks) sd / mean; 1 without EP. */
double model_ep_chance_skew(double ranks, double experts, double top_k,
			    double groups, double group_topk, double tokens);

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

/* The vision tower of m as a model of its own (for model_layer_ops and
 * mem_act_layer): a bidirectional encoder of vision.layers ViT layers of
 * vision.hidden, MHA over vision.heads, a GELU or SwiGLU MLP of
 * vision.ffn_hidden, LayerNorms and biases on the linears, vocabulary 1
 * (no embedding to speak of). */
void model_vision_tower(const gp_model *m, gp_model *v);

/* Patches the vision tower encodes per image, what every ViT layer runs
 * over: its grid, (image_size / patch_size)^2 in whole merge x merge
 * groups, or tokens * merge^2 where the tokens are more (or the tower has
 * no image size).  More than the tokens where a resampler follows the
 * tower (Qwen-VL: 1024 patches, 256 tokens).  0 for a model without a
 * vision tower, -1 when invalid. */
double model_vision_patches(const gp_model *m);

/* Forward FLOP of the vision tower for one image: 2 * matmul params *
 * patches + 4 * patches^2 * hidden per ViT layer (full attention over the
 * patches, model_vision_patches) + 2 * projector params per LLM token
 * (model_vision_tokens).  0 without a vision tower, -1 when invalid. */
double model_vision_flops_per_image(const gp_model *m);

/* KV-cache bytes per token for the whole model at elem_bytes per element:
 * 2 * layers * kv_heads * head_dim * elem_bytes (K and V); MLA caches the
 * latent (kv_lora_rank + qk_rope_head_dim) per layer instead.  Sliding-window
 * layers are counted in full here; capping them at the window is the
 * caller's business (model_kv_bytes handles it for a given context).
 * Returns bytes, or -1 for an invalid model or elem_bytes outside
 * (0, GP_ELEM_BYTES_MAX]. */
double model_kv_bytes_per_token(const gp_model *m, double elem_bytes);

/* The keys one attention layer reads (and, in a paged cache, holds) for
 * a query at context ctx (the keys before it and its own), the one rule
 * every path applies: a full-attention layer ctx, a sliding-window layer
 * (sliding = 1) min(ctx, sliding_window) -- Mistral 7B sec. 2 (Jiang et
 * al. 2023, "each token can attend to at most W tokens from the previous
 * layer"), gpt-oss's layer_types sliding_attention of window 128;
 * FlashAttention's window_size = (W - 1, 0) skips the key blocks before
 * the window (flash_attn_interface.py: "If window_size != (-1, -1),
 * implements sliding window local attention. Query at position i will
 * only attend to keys between [i + seqlen_k - seqlen_q - window_size[0],
 * i + seqlen_k - seqlen_q + window_size[1]] inclusive"), and vLLM's
 * sliding-window KV manager frees the blocks behind it.  Attention sinks
 * as gpt-oss has them (a learned logit a head in the softmax's
 * denominator, no key or value: transformers' GptOssAttention "sinks")
 * read no KV.  Chunked (local) attention, Llama 4's attention_chunk_size,
 * is not a model field: its layers are read as full ones.  ctx < 0 is
 * read as 0. */
double model_layer_kv(const gp_model *m, int sliding, double ctx);

/* model_layer_kv averaged over the attention layers (sliding_layers of
 * them at the window, the rest full): the mean keys a query at context
 * ctx reads a layer, what a step prices once for all its layers
 * (attention's FLOP and KV reads are linear in the keys).  Both serving
 * paths take it: gp.infer's step (infer.c step_kv_mean) and the MoE
 * serving step (serve_step.c). */
double model_kv_read_mean(const gp_model *m, double ctx);

/* KV-cache bytes for one sequence of ctx tokens (0..GP_COUNT_MAX):
 * sliding-window layers hold at most sliding_window tokens.  Returns
 * bytes, or -1 when invalid. */
double model_kv_bytes(const gp_model *m, double ctx, double elem_bytes);

/* Cross-attention K/V bytes of an encoder-decoder for one sequence of
 * enc_len encoder tokens (0..GP_COUNT_MAX): every decoder layer projects
 * the encoder output once to its own K and V, 2 * layers * kv_heads *
 * head_dim * elem_bytes per encoder token, and decoding reads them each
 * step (HF T5 past_key_values: cross K/V cached at the first step).
 * 0 for a decoder-only model; -1 when invalid. */
double model_cross_kv_bytes(const gp_model *m, double enc_len,
			    double elem_bytes);

/* ---- the operators of one layer --------------------------------------
 *
 * One list serves inference (the forward pass of a prefill or a decode
 * step) and training (forward, both backward GEMMs, recompute): each op
 * gives its forward FLOP, the elements it moves and, for a GEMM, its
 * shape; the caller prices bytes at its own dtypes and derives the
 * backward pass.  Everything is per GPU of a TP group (widths / tp) for
 * the tokens that GPU processes. */

typedef enum gp_op_kind {
	GP_OP_GEMM = 0,   /* tokens x weight matrix */
	GP_OP_ATTN,       /* attention core: scores and values over the KV */
	GP_OP_ELEM        /* elementwise / reductions on the vector units */
} gp_op_kind;

/* Which layers an op runs in.  A hybrid model's (m->pattern set) layer
 * is one block: its ops are ATTN (the * layers), DENSE (-), MOE (E),
 * MAMBA (M), and FFN for the pre-norm the - and E layers share; ALL is
 * then unused. */
typedef enum gp_op_scope {
	GP_SCOPE_ALL = 0, /* every layer */
	GP_SCOPE_DENSE,   /* dense-MLP layers */
	GP_SCOPE_MOE,     /* MoE layers */
	GP_SCOPE_ATTN,    /* a hybrid's attention-only layers */
	GP_SCOPE_FFN,     /* a hybrid's MLP-only and MoE-only layers */
	GP_SCOPE_MAMBA    /* a hybrid's Mamba layers */
} gp_op_scope;

/* Which weights a GEMM reads: the layer's linears (stored at the
 * weight format), or a 16-bit matrix quantisers leave alone (router). */
typedef enum gp_op_wclass { GP_W_LINEAR = 0, GP_W_16BIT } gp_op_wclass;

typedef struct gp_op {
	const char *name;   /* static */
	gp_op_kind kind;
	gp_op_scope scope;
	gp_op_wclass wclass;
	double flop;        /* forward FLOP of one instance */
	double m, n, k;     /* GEMM shape (output m x n, depth k) ... */
	double batch;       /* ... of `batch` independent GEMMs (0: 1) */
	double weights;     /* weight elements read (GEMM) */
	double act;         /* activation elements read and written */
	double kv;          /* KV-cache elements read and written */
	double elems;       /* elementwise: elements of its output */
} gp_op;

/* The step an op list is for, on one GPU. */
typedef struct gp_op_cfg {
	double seqs;        /* sequences in the step (> 0) */
	double q;           /* query tokens per sequence on this GPU (> 0):
			     * the prompt (/ cp) in prefill or training, 1
			     * in decode */
	double kv_len;      /* keys a query attends to on average (causal:
			     * the mean over the step's queries; sliding
			     * layers are capped by the caller) */
	int tp;             /* tensor parallel (>= 1) */
	int sp;             /* 1: elementwise ops run on T / tp tokens */
	int ep;             /* expert parallel (>= 1): the rank holds
			     * experts / ep experts and receives, on
			     * average, its tokens x top_k dispatches */
	int etp;            /* expert tensor parallel (0 = tp): the routed
			     * experts' width splits over etp, and each
			     * rank's experts see tp / etp times fewer
			     * tokens' dispatches (MoE parallel folding;
			     * the tokens come split over tp by SP) */
	int flash;          /* 1: fused attention (no s^2 tensors) */
	double skew;        /* the routed dispatches of the hottest EP rank
			     * over the mean (model_ep_skew; 0 or 1: the
			     * mean; a capacity factor's padded buffer,
			     * below 1 where it drops rows): its experts'
			     * GEMMs and activation */
	/* Encoder-decoder models (zero for decoder-only: the list is the
	 * decoder-only one whatever these hold): */
	int encoder;        /* 1: an encoder layer (bidirectional, no KV
			     * cache, no cross-attention); 0: a decoder
			     * layer */
	double enc_len;     /* decoder layers: encoder tokens per sequence
			     * the cross-attention reads (> 0) */
	int cross_cached;   /* decoder layers: 1 when the cross K/V are in
			     * the cache already (decode steps), 0 when
			     * this step projects them (training, prefill) */
} gp_op_cfg;

/* the longest op list (24), a shared expert's gate's kernels beside it
 * (GP_SHARED_GATE_OPS, model_shared_gate_ops) */
#define GP_MAX_LAYER_OPS 27

/* Fill ops[] with the operators of one layer of a valid model for the
 * step c (tokens T = seqs * q): norms, QKV, rope + KV write, attention,
 * output projection, MLP (scope dense) and MoE router, experts and
 * activation (scope MoE).  FLOP count 2 per multiply-add (Kaplan et al.
 * 2020 Table 1); attention 2 T kv_len heads (dqk + dv) per layer; KV in
 * elements of this GPU's heads (replicated when kv_heads < tp; MLA: the
 * shared latent).  MoE experts: the distinct experts T tokens touch under
 * uniform routing, E (1 - (1 - k/E)^T) (per rank with EP).
 * Encoder-decoder (m->encoder_layers > 0): an encoder layer (c->encoder)
 * is norms, qkv, the relative-position bias add (rel_buckets), attention
 * over kv_len keys, o_proj and the MLP; a decoder layer adds kv_write
 * (K and V to the cache, no rope), the position bias, and the
 * cross-attention block cross_norm, cross_q, cross_kv (over seqs *
 * enc_len encoder tokens; absent when cross_cached), cross_attention
 * (q x enc_len, no mask) and cross_o.  A hybrid model (m->pattern):
 * the attention block (scope ATTN), the MLP's and MoE's pre-norm (FFN),
 * the MLP (DENSE) when a - layer is there, the MoE ops (MOE) and the
 * Mamba layer's mamba_norm, in_proj, conv1d, ssd_scan, gate_norm and
 * out_proj (MAMBA; model_ops.c mamba_layer_ops); model_op_in picks a
 * layer kind's.  Returns the number of ops
 * (<= GP_MAX_LAYER_OPS), or 0 when an encoder-decoder decoder layer is
 * asked without enc_len > 0. */
int model_layer_ops(const gp_model *m, const gp_op_cfg *c,
		    gp_op ops[GP_MAX_LAYER_OPS]);

/* The shared expert's sigmoid gate (moe.shared_expert_gate) over T tokens
 * of an MoE layer: the three kernels it runs, each of scope MoE --
 * shared_gate, the [T x hidden] x [hidden x 1] GEMV (its hidden 16-bit
 * weights whole on every rank: a torch.nn.Linear, not split over tp),
 * shared_gate_sig, the sigmoid of its T logits, and shared_gate_mul, the
 * T x hidden shared output scaled by them.  Writes them and returns 3;
 * 0 where the model has no gate (or no shared expert).  The one rule the
 * op list (model_layer_ops), the MoE serving model and training price. */
#define GP_SHARED_GATE_OPS 3
int model_shared_gate_ops(const gp_model *m, double T,
			  gp_op ops[GP_SHARED_GATE_OPS]);

/* A hybrid stack's Mamba layer in a decode step (c->q == 1), the two
 * ops that replace model_layer_ops' conv1d and ssd_scan (its other
 * MAMBA ops -- mamba_norm, in_proj, gate_norm, out_proj -- are the
 * step's as they are): conv1d_update and ssm_update, each sequence's
 * state read and written at conv_bytes and ssm_bytes an element (their
 * traffic in act, counted in 16-bit elements as the op list does).
 * Writes 2 ops and returns 2; 0 without Mamba layers. */
int model_mamba_decode_ops(const gp_model *m, const gp_op_cfg *c,
			   double conv_bytes, double ssm_bytes, gp_op ops[2]);

/* Whether an op of scope s runs in a layer of kind `layer`, a hybrid
 * pattern's letter (M, *, -, E).  A model without a pattern has two
 * kinds of layer, each an attention block and a feed-forward: '-' the
 * dense ones (ALL and DENSE ops), 'E' the MoE ones (ALL and MOE). */
static inline int model_op_in(gp_op_scope s, char layer, int hybrid)
{
	if (!hybrid)
		return s == GP_SCOPE_ALL ||
			s == (layer == 'E' ? GP_SCOPE_MOE : GP_SCOPE_DENSE);
	switch (layer) {
	case 'M':
		return s == GP_SCOPE_MAMBA;
	case '*':
		return s == GP_SCOPE_ATTN;
	case '-':
		return s == GP_SCOPE_FFN || s == GP_SCOPE_DENSE;
	case 'E':
		return s == GP_SCOPE_FFN || s == GP_SCOPE_MOE;
	}
	return 0;
}

/* KV heads one rank of a TP group of tp holds: kv_heads / tp when TP
 * splits them, else one -- a KV head is replicated when kv_heads < tp
 * (TensorRT-LLM, vLLM and Megatron GQA sharding; layout_check_tp has
 * one of the two divide the other).  The one place of this rule. */
double model_kv_heads_rank(const gp_model *m, double tp);

/* KV elements per token per layer on one GPU of a TP group of tp
 * (K and V of this rank's kv heads, at least one head; MLA: the
 * latent, not split). */
double model_kv_elems_layer(const gp_model *m, int tp);

#endif
