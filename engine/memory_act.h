/*
 * memory_act.h - activations one transformer layer saves for backward, per
 * micro-batch, on one GPU; LoRA adapter counts.
 *
 * Bytes; caller-owned structs; GP_OK or GP_EINVAL with the reason in err.
 */
#ifndef GP_MEMORY_ACT_H
#define GP_MEMORY_ACT_H

#include "common.h"
#include "model.h"

typedef enum gp_recompute {
	GP_RECOMPUTE_NONE = 0, GP_RECOMPUTE_SELECTIVE, GP_RECOMPUTE_FULL,
	GP_RECOMPUTE_OP,     /* torchtitan's per-op selective checkpointing
			      * (selective_ac_option "op"; memory_act.c) */
	GP_RECOMPUTE_COUNT
} gp_recompute;

/* "none", "selective", "full", "op" and the parser (GP_OK or GP_EINVAL naming
 * the accepted values in err). */
const char *mem_recompute_name(gp_recompute r);
int mem_recompute_parse(const char *s, gp_recompute *out, gp_error *err);

/* Submodules whose outputs are dropped after the forward and rebuilt in
 * the backward (Megatron-Core's recompute_modules, output-discarding
 * checkpointing; DeepSeek-V3 report arXiv:2412.19437 sec. 3.2.3 and
 * 3.3.3): a bit mask. */
enum {
	GP_RECMOD_LAYERNORM = 1,  /* "layernorm": every RMSNorm's output */
	GP_RECMOD_MLA_UP = 2,     /* "mla_up_proj": MLA's q, k, v */
	GP_RECMOD_MOE_ACT = 4,    /* "moe_act": the routed experts' SwiGLU
				   * output (the down-projection input) */
	GP_RECMOD_CORE_ATTN = 8,  /* "core_attn": the attention core
				   * (Korthikanti et al. 2022 sec. 5) */
	GP_RECMOD_MOE = 16,       /* "moe": the whole MoE block (router,
				   * dispatch, experts, combine) re-run
				   * from its input (memory_act.c) */
	GP_RECMOD_MLPWI = 32,     /* "mlpwi": the dense MLP's input
				   * projections (gate and up, or fc1) and
				   * its activation, re-run from the MLP's
				   * input; the down projection is not
				   * (MaxText's save_dot_except_mlpwi and
				   * save_dot_except_mlp policies, JAX
				   * remat; memory_act.c) */
	GP_RECMOD_MLP_ACT = 64,   /* "mlp_act": the dense MLP's activation
				   * output (the down projection's input),
				   * re-run from the kept fc1 output -- what
				   * a JAX dots policy (checkpoint_dots,
				   * checkpoint_dots_with_no_batch_dims)
				   * leaves to remat in a plain GELU MLP,
				   * the activation being no dot
				   * (memory_act.c) */
	GP_RECMOD_ALL = 127,
	GP_RECMOD_LISTED = 128    /* set by the parser: a list was stated,
				   * even an empty one (it replaces the
				   * default; mem_core_attn_recomputed) */
};

/* Parse "layernorm,mla_up_proj,moe_act,core_attn,moe,mlpwi,mlp_act" (any of
 * them; "" is none) into a GP_RECMOD_* mask with GP_RECMOD_LISTED set; GP_OK or
 * GP_EINVAL naming the bad entry. */
int mem_recompute_modules_parse(const char *s, unsigned *out,
				gp_error *err);

/* Whether the core attention is re-run in the backward under policy r
 * with the module mask mods: Megatron-Core's rule, the one place it is
 * decided (memory_act.c). */
int mem_core_attn_recomputed(gp_recompute r, unsigned mods);

/* What one transformer layer saves for backward, per micro-batch, on one
 * GPU.  Defaults are what zero-initialised fields mean. */
typedef struct gp_act_cfg {
	double seq;          /* tokens per sequence (s) */
	double micro_batch;  /* sequences per micro-batch (b) */
	int tp;              /* tensor parallel (t); 0 = 1 */
	int sp;              /* 1: sequence parallel over the TP group */
	int cp;              /* context parallel; 0 = 1 (divides s) */
	int ep;              /* expert parallel; 0 = 1 */
	double act_bytes;    /* bytes per saved activation element; 0 = 2 */
	int flash;           /* 1: fused attention, no s^2 tensors saved */
	int dropout;         /* 1: dropout after attention, projections */
	gp_recompute recompute;
	double capacity_factor; /* MoE token capacity factor; 0 = 1.0 */
	int moe_einsum;      /* 1: DeepSpeed's MOELayer, its dispatch and
			      * combine einsums saving S x E x C masks */
	unsigned recompute_modules; /* GP_RECMOD_* mask */
	int probs_in_act;    /* 1: MoE router weights scale the experts'
			      * activation output, not their outputs at
			      * the combine (see memory_act.c) */
	int fp8_cache;       /* 1: the linears' inputs kept in fp8 for
			      * the fp8 weight-gradient GEMM (DeepSeek-V3
			      * sec. 3.3.3, see act.c) */
	int fp8_te;          /* 1: Transformer Engine's fp8 linears keep
			      * their quantised input (1 B) for the
			      * weight gradient (see act.c) */
	int eager_swiglu;    /* 1: unfused SiLU*up saves silu(gate) too */
	int eager_norm;      /* 1: eager RMSNorm keeps the fp32 upcast of
			      * its input, and the normalised 16-bit
			      * tensor its weight multiplies (Hugging
			      * Face LlamaRMSNorm; see act.c) */
	int eager_softmax;   /* 1: unfused attention saves the fp32
			      * softmax output and its 16-bit copy
			      * (Hugging Face eager attention) */
	int attn_clamp;      /* 1: unfused attention clamps the masked
			      * scores, torch.max(scores, finfo.min),
			      * which keeps them (transformers' 2023
			      * OPT and Llama eager attention) */
	/* What trains (zero = full training, Korthikanti's case):
	 * a matmul keeps its input for backward only to form its weight
	 * gradient, so a frozen base linear keeps nothing unless its
	 * kernel saves the input anyway or an adapter reads it. */
	int frozen;          /* 1: base linears and norms do not train */
	int base_saves_input; /* 1: the frozen base's matmul keeps its
			      * input regardless (bitsandbytes MatMul4Bit,
			      * MatMul8bitLt) */
	int lora_rank;       /* adapters on the frozen base; 0 = none */
	unsigned lora_targets; /* GP_LORA_* mask */
	int lora_dropout;    /* 1: dropout (p > 0) on the adapter input */
	int input_nograd;    /* 1: the layer's input does not require grad
			      * (no trainable parameter below it) */
	int fused_qkv_view;  /* 1: one fused QKV matmul whose output is
			      * viewed as q, k, v (LitGPT): with equal
			      * head counts v is a view, so the whole
			      * fused output stays alive beside the roped
			      * q and k copies; with GQA, k and v are
			      * expanded to all heads by copy */
	int kv_repeat;       /* 1: K and V copied to every query head
			      * before the attention (torchtitan's
			      * repeat_kv): the attention keeps them
			      * query-wide (act_attention) */
	int sac_attn_recompute; /* 1: under recompute op the fused
			      * attention's output and statistics are not
			      * kept: the op is missing from the policy's
			      * save list (act_op_saved) */
	int ulysses;         /* DeepSpeed-Ulysses' group (the CP group
			      * exchanged by all-to-all, verl's
			      * ulysses_sequence_parallel_size); 0: none.
			      * The attention keeps K and V repeated to
			      * the group where it has fewer kv heads, and
			      * the output beside its exchanged copy
			      * (act_attention) */
	int lora_zero_pad;   /* 1: a fused-QKV adapter that covers only
			      * some of q, k, v scatters its output into
			      * a zero q+k+v buffer with index_copy, whose
			      * backward keeps the source (LitGPT
			      * LoRAQKVLinear.zero_pad): the adapted
			      * widths are kept per token */
	int autocast;        /* 1: fp32 weights trained under
			      * torch.autocast (bf16 or fp16): the
			      * residual stream and the norms' tensors
			      * are fp32, each linear keeps its own
			      * 16-bit cast of its input (act.c
			      * act_autocast) */
	int split_proj;      /* under autocast, the projections that are
			      * linears of their own, each casting the
			      * shared input: 1 q, k and v; 2 the gated
			      * MLP's gate and up; 3 both (train.h
			      * GP_SPLIT_QKV, GP_SPLIT_MLP) */
	double enc_len;      /* a decoder layer of an encoder-decoder
			      * model: encoder tokens per sequence its
			      * cross-attention reads (> 0 adds the
			      * cross-attention block); 0 = none */
} gp_act_cfg;

/* Whether a layer of config c keeps its down projection's input (the
 * activation's output) for the backward (memory_act.c); what
 * recompute_modules mlp_act drops, and re-runs, where it does. */
int mem_act_down_kept(const gp_act_cfg *c);

/* Per-layer activation terms in bytes (one micro-batch, one GPU).
 * Korthikanti et al. 2022 sec. 4.1 split these into attention (11sbh +
 * 5as^2b), MLP (19sbh) and the two LayerNorms (4sbh). */
typedef struct gp_act_layer {
	double attention;    /* QKV input, Q K V, output-projection input */
	double core;         /* softmax/dropout s^2 tensors or flash stats */
	double mlp;          /* MLP (dense or MoE + shared) saved tensors */
	double norms;        /* the two norm inputs */
	double masks;        /* dropout masks (1 byte per element) */
	double lora;         /* adapter tensors: dropout outputs and
			      * masks, rank-r intermediates */
	double cross;        /* cross-attention block (enc_len > 0): its q
			      * input, q, the encoder tokens' K and V, the
			      * o input; its s_dec x s_enc tensors are in
			      * core, its norm input in norms */
	double enc_out;      /* NOT in total: the encoder output that every
			      * cross-attention's k and v linears read,
			      * kept once for the decoder stack when they
			      * keep their input */
	double rebuilt;      /* NOT in total: what recompute_modules drop
			      * of one layer, rebuilt in its backward (the
			      * working set while it runs) */
	double mamba;        /* a hybrid stack's Mamba layer: its mixer's
			      * tensors (mem_act_kind; its norm input in
			      * norms) */
	double total;        /* saved per layer after the recompute policy */
	double full;         /* saved per layer with no recompute: the
			      * working set while one layer is recomputed */
} gp_act_layer;

/* Activation bytes saved by one layer for backward (Korthikanti et al.
 * 2022, "Reducing Activation Recomputation in Large Transformer Models",
 * sec. 4, generalised per op; see memory_act.c).  moe = 1 prices the MLP as
 * a routed MoE layer (the model must have experts), 0 as a dense MLP.
 * GP_OK or GP_EINVAL (bad sizes, tp not dividing heads, ...). */
int mem_act_layer(const gp_model *m, const gp_act_cfg *c, int moe,
		  gp_act_layer *out, gp_error *err);

/* mem_act_layer for a layer of kind `kind`, a hybrid pattern's letter
 * (model.h model_op_in): '-' and 'E' are mem_act_layer's dense and MoE
 * layers; a hybrid stack's (m->pattern set) layer is one block with one
 * pre-norm: '*' its attention block, '-' its MLP, 'E' its MoE, and 'M'
 * its Mamba mixer (model_mamba_act_bytes' tensors, split by TP and SP as
 * a Megatron-Core layer's: memory_act.c act_mamba). */
int mem_act_kind(const gp_model *m, const gp_act_cfg *c, int kind,
		 gp_act_layer *out, gp_error *err);

/* Bytes a norm keeps per element of its input for backward, its
 * activations at A bytes: A (a fused kernel keeps the input and a
 * per-row statistic), or with eager = 1 on an RMSNorm decoder what
 * Hugging Face's LlamaRMSNorm leaves autograd -- the fp32 upcast of the
 * input (4 B; the input itself when A is 4) and, where the norm's weight
 * trains (frozen = 0), the normalised A-byte tensor the weight
 * multiplies (memory_act.c). */
double mem_norm_bytes(const gp_model *m, int eager, int frozen, double A);

/* LoRA adapter targets (bit mask). */
enum {
	GP_LORA_Q = 1, GP_LORA_K = 2, GP_LORA_V = 4, GP_LORA_O = 8,
	GP_LORA_GATE = 16, GP_LORA_UP = 32, GP_LORA_DOWN = 64
};

/* Parse "q,k,v,o,gate,up,down" (or "all") into a mask; GP_OK/GP_EINVAL. */
int mem_lora_targets_parse(const char *s, unsigned *out, gp_error *err);

/* Trainable adapter parameters r * (in + out) per targeted matrix per
 * layer (Hu et al. 2021, LoRA, sec. 4.1); -1 when invalid. */
double mem_lora_params(const gp_model *m, int rank, unsigned targets);

#endif
