/*
 * memory.h - per-GPU memory breakdown for training, fine-tuning (LoRA,
 * QLoRA), RL fine-tuning (GRPO, PPO) and inference.
 *
 * Every figure is bytes on the most loaded GPU.  The caller owns every
 * struct; kernels fill them and return GP_OK, or GP_EINVAL with a one-line
 * reason in err.  Nothing is allocated and nothing global is touched.
 *
 * Bytes per parameter of the model states (weights, grads, master copy,
 * optimizer states) by precision recipe, before any sharding:
 *
 *   recipe       weights grads master  AdamW m+v   total (AdamW)
 *   mixed-16     2 fp16  2 fp16  4 fp32  4+4 fp32  16  ZeRO paper
 *                (Rajbhandari et al. 2020, sec. 3.1: 2+2+K with K = 12)
 *   megatron-18  2 bf16  4 fp32  4 fp32  4+4 fp32  18  Megatron-LM
 *                distributed-optimizer docs: bf16 params with fp32 main
 *                grads, 18 B/param, 6 + 12/d with the distributed optimizer
 *   fp32         4       4       -       4+4 fp32  16  plain fp32 / AMP
 *                (autocast keeps fp32 weights and grads; casts per op)
 *   bf16         2       2       -       2+2 bf16   8  pure bf16 training
 *                (no master copy: optimizer states in the param dtype)
 *   fp8          2 bf16  4 fp32  4 fp32  4+4 fp32  19  fp8 compute as in
 *                Transformer Engine: bf16 params, the fp8 cast of each
 *                weight cached between micro-batches (+1), fp32 main
 *                grads, master and states (NVIDIA TE FP8 primer)
 *   deepspeed-bf16
 *                2 bf16  2+4     4 fp32  4+4 fp32  20  DeepSpeed's
 *                BF16_Optimizer (deepspeed/runtime/bf16_optimizer.py),
 *                which the engine picks for a bf16 model with fp32
 *                gradient accumulation at ZeRO stage 0 or 1 without
 *                offload (engine.py, _do_optimizer_sanity_check); it is
 *                the optimizer of Megatron-DeepSpeed bf16 runs.  Grads
 *                are 6 B: autograd's bf16 .grad (2, kept after backward:
 *                backward(clear_lp_grads=False)) plus a flat fp32
 *                accumulation buffer (4, zeros_like the whole flat bf16
 *                group, all-reduced in full over DP).  Sharding over DP:
 *                the fp32 master and the Adam states are partitioned at
 *                every stage, ZeRO 0 included (the optimizer is built on
 *                fp32_groups_flat_partition), so 8 + 12/d B/param; the
 *                bf16 params and both grads are never partitioned at
 *                ZeRO 0/1.  At ZeRO 2/3 DeepSpeed runs its ZeRO
 *                optimizer instead (stage_1_and_2.py / stage3.py): the
 *                bf16 grads are reduce-scattered into a partition and
 *                the fp32 grad exists only for the local partition
 *                (single_grad_partition ... .to(fp32) in step), so the
 *                6 B of grads shard with d; ZeRO 3 shards the params.
 *
 * Optimizers: adamw keeps two states (m, v) in the recipe's state dtype;
 * adam8bit keeps both in 8 bits with one fp32 absmax per 2048-element
 * block (Dettmers et al. 2022, "8-bit Optimizers via Block-wise
 * Quantization": 2 + 2*4/2048 B/param); sgd keeps one momentum buffer.
 */
#ifndef GP_MEMORY_H
#define GP_MEMORY_H

#include "common.h"
#include "model.h"

typedef enum gp_recipe {
	GP_RECIPE_MIXED16 = 0, GP_RECIPE_MEGATRON18, GP_RECIPE_FP32,
	GP_RECIPE_BF16, GP_RECIPE_FP8, GP_RECIPE_DSBF16, GP_RECIPE_COUNT
} gp_recipe;

typedef enum gp_optim {
	GP_OPT_ADAMW = 0, GP_OPT_ADAM8BIT, GP_OPT_SGD, GP_OPT_COUNT
} gp_optim;

typedef enum gp_recompute {
	GP_RECOMPUTE_NONE = 0, GP_RECOMPUTE_SELECTIVE, GP_RECOMPUTE_FULL,
	GP_RECOMPUTE_COUNT
} gp_recompute;

typedef enum gp_schedule {
	GP_SCHED_1F1B = 0, GP_SCHED_INTERLEAVED, GP_SCHED_COUNT
} gp_schedule;

/* Pipeline engine: what a stage holds between a micro-batch's forward
 * and its backward besides the layers' saved tensors (memory.c,
 * train_stage).  megatron: Megatron-LM's schedules, which pseudo-free
 * each sent output; deepspeed: DeepSpeed's PipelineEngine, which keeps
 * one output buffer per micro-batch in flight. */
typedef enum gp_pipe_engine {
	GP_PIPE_MEGATRON = 0, GP_PIPE_DEEPSPEED, GP_PIPE_COUNT
} gp_pipe_engine;

/* How layers are assigned to pipeline stages (memory.c, stage_split).
 *  auto        by the pipeline engine: megatron -> uniform, deepspeed ->
 *              parameters (PipelineModule's default partition_method)
 *  uniform     L/p layers, the first L mod p stages one more (Megatron-LM
 *              requires p | L; DeepSpeed's partition_uniform)
 *  parameters  DeepSpeed's partition_balanced over each layer's trainable
 *              parameters: the embedding counts on the first stage, the
 *              output layer or the tied embedding copy on the last
 *  type:transformer            balanced over transformer layers only
 *              (Megatron-DeepSpeed GPTModelPipe's default)
 *  type:transformer|embedding  layers, the embedding and the tied copy
 *              weigh one each (the BLOOM-176B run)
 * The embedding always sits on the first stage and the output layer (or
 * tied copy) on the last; the most loaded stage is found by evaluating
 * the stages. */
typedef enum gp_partition {
	GP_PART_AUTO = 0, GP_PART_UNIFORM, GP_PART_PARAMETERS,
	GP_PART_TYPE_LAYER, GP_PART_TYPE_EMB, GP_PART_COUNT
} gp_partition;

/* Names ("mixed-16", "adamw", "selective", "1f1b") and their parsers
 * (GP_OK or GP_EINVAL naming the accepted values in err). */
const char *mem_recipe_name(gp_recipe r);
int mem_recipe_parse(const char *s, gp_recipe *out, gp_error *err);
const char *mem_optim_name(gp_optim o);
int mem_optim_parse(const char *s, gp_optim *out, gp_error *err);
const char *mem_recompute_name(gp_recompute r);
int mem_recompute_parse(const char *s, gp_recompute *out, gp_error *err);
const char *mem_schedule_name(gp_schedule s);
int mem_schedule_parse(const char *s, gp_schedule *out, gp_error *err);
const char *mem_pipe_name(gp_pipe_engine p);
int mem_pipe_parse(const char *s, gp_pipe_engine *out, gp_error *err);
const char *mem_partition_name(gp_partition p);
int mem_partition_parse(const char *s, gp_partition *out, gp_error *err);

/* Bytes per parameter of each model-state kind, unsharded. */
typedef struct gp_state_bytes {
	double weights, grads, master, optimizer;
	int master_shard0;  /* 1: master and optimizer states shard over
			     * DP even at ZeRO 0 (deepspeed-bf16) */
} gp_state_bytes;

/* Fill *out for a recipe and optimizer; GP_OK or GP_EINVAL. */
int mem_state_bytes(gp_recipe r, gp_optim o, gp_state_bytes *out,
		    gp_error *err);

/* Weight storage: bits per weight plus per-group overhead.
 * Effective bits = bits + group_bits / group (group 0: no groups).
 *   bf16: {16, 0, 0}.  int8 per-channel: ~{8, 0, 0}.
 *   NF4 + double quantisation (Dettmers et al. 2023, QLoRA, sec. 3):
 *     {4, 64, 8 + 32/256} -> 4 + 8.125/64 = 4.127 bits.
 *   GPTQ/AWQ int4, group 128, fp16 scale + 4-bit zero: {4, 128, 20}.
 *   GGUF-style bits-per-weight (Q4_K_M ~4.85): {4.85, 0, 0}. */
typedef struct gp_quant {
	double bits;
	int group;
	double group_bits;
} gp_quant;

/* Effective bits per weight, or -1 when q is invalid. */
double mem_quant_bits(const gp_quant *q);

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
	int eager_swiglu;    /* 1: unfused SiLU*up saves silu(gate) too */
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
	int lora_zero_pad;   /* 1: a fused-QKV adapter that covers only
			      * some of q, k, v scatters its output into
			      * a zero q+k+v buffer with index_copy, whose
			      * backward keeps the source (LitGPT
			      * LoRAQKVLinear.zero_pad): the adapted
			      * widths are kept per token */
} gp_act_cfg;

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
	double total;        /* saved per layer after the recompute policy */
	double full;         /* saved per layer with no recompute: the
			      * working set while one layer is recomputed */
} gp_act_layer;

/* Activation bytes saved by one layer for backward (Korthikanti et al.
 * 2022, "Reducing Activation Recomputation in Large Transformer Models",
 * sec. 4, generalised per op; see memory.c).  moe = 1 prices the MLP as
 * a routed MoE layer (the model must have experts), 0 as a dense MLP.
 * GP_OK or GP_EINVAL (bad sizes, tp not dividing heads, ...). */
int mem_act_layer(const gp_model *m, const gp_act_cfg *c, int moe,
		  gp_act_layer *out, gp_error *err);

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

typedef struct gp_train_cfg {
	gp_recipe recipe;
	gp_optim optim;
	int dp, tp, pp, cp, ep;  /* 0 = 1; dp*cp is the sharding group */
	int vpp;                 /* virtual stages per GPU (interleaved) */
	int zero;                /* 0..3; FSDP full shard = 3 */
	int sp;
	double seq, micro_batch;
	double microbatches;     /* per step per pipeline; 0 = >= pp */
	gp_schedule schedule;
	gp_pipe_engine pipe;     /* who runs the pipeline (pp > 1) */
	gp_partition partition;  /* layers per stage (pp > 1) */
	gp_recompute recompute;
	int flash, dropout, eager_swiglu;
	double act_bytes;        /* 0: 4 for the fp32 recipe, else 2 */
	double logit_bytes;      /* bytes per vocab entry per token kept for
				  * the loss; 0 = 4 (fp32 logits,
				  * Korthikanti et al. 2022 sec. 4.3 4sbv) */
	double capacity_factor;  /* MoE; 0 = 1.0 */
	int offload_optimizer;   /* master + optimizer states live on CPU */
	int offload_params;      /* + weights and grads (ZeRO-Infinity) */
	/* LoRA / QLoRA: lora_rank 0 = every weight trainable. */
	int lora_rank;
	unsigned lora_targets;
	int lora_dropout;        /* 1: adapter dropout p > 0 */
	gp_quant base;           /* frozen base storage; bits 0 = recipe's */
	/* Software-stack behaviour (memory.c, train_stage): */
	int paged_optimizer;     /* optimizer states in CUDA managed memory
				  * (bitsandbytes paged optimizers): on the
				  * card but outside PyTorch's allocator */
	int grads_in_bwd;        /* optimizer step fused into backward
				  * (torchtune optimizer_in_bwd): each grad
				  * is freed after its step, only the
				  * largest one is ever whole */
	int fused_qkv_view;      /* see gp_act_cfg */
	int lora_zero_pad;       /* see gp_act_cfg */
	int quant_head;          /* a quantised frozen base quantises the
				  * output layer too (every nn.Linear) */
	/* Vision-language models (gp_model.vision): */
	double images;           /* images per sequence, a whole number; each
				  * goes through the vision tower and its
				  * tokens_per_image LLM tokens are part of
				  * seq.  0 = text only */
	int vision_frozen;       /* 1: the ViT tower does not train (weights
				  * only; with pixels needing no grad it
				  * saves nothing); the projector still
				  * trains unless the base is frozen (LoRA) */
} gp_train_cfg;

typedef struct gp_infer_cfg {
	gp_quant weights;        /* bits 0 = 16 */
	double kv_bytes;         /* per cached element; 0 = 2 */
	int tp, pp;              /* 0 = 1 */
	double seqs;             /* concurrent sequences */
	double ctx;              /* tokens per sequence (prompt + output) */
	int block;               /* paged KV block in tokens; 0 = unpaged */
	double chunk_tokens;     /* tokens per forward (prefill chunk) for the
				  * workspace; 0 = min(seqs*ctx, 8192) */
	double act_bytes;        /* 0 = 2 */
	int offload;             /* 1: put layers on CPU when short */
} gp_infer_cfg;

typedef struct gp_rl_cfg {
	gp_train_cfg actor;      /* the trainable policy */
	int ppo;                 /* 1: PPO (adds a critic), 0: GRPO */
	int reward_model;        /* 1: a frozen reward model of the same
				  * shape (0: rule-based rewards) */
	int ref_model;           /* 1: frozen reference (KL penalty) */
	double prompts;          /* prompts per step on this pool */
	double group;            /* samples per prompt (GRPO group size) */
	double prompt_len, response_len;
	double kv_bytes;         /* rollout cache element; 0 = 2 */
	gp_quant rollout_weights; /* rollout engine copy; bits 0 = 16 */
	int rollout_tp;          /* rollout engine TP; 0 = actor tp */
	int gpus;                /* GPUs sharing the rollout batch; 0 = dp*tp*
				  * pp*cp of the actor */
	int colocated;           /* 1: rollout engine on the training GPUs */
} gp_rl_cfg;

/* Reserve and margin; mem_reserve_default fills the documented
 * defaults (see memory.c for the sources). */
typedef struct gp_mem_reserve {
	double context;          /* CUDA context + kernels (bytes) */
	double workspace;        /* cuBLAS/cuDNN workspaces (bytes) */
	double comm;             /* NCCL buffers (bytes; 0 on one GPU) */
	double frag;             /* allocator fragmentation, fraction of the
				  * allocated bytes */
	double margin;           /* safety margin, fraction of capacity */
} gp_mem_reserve;

void mem_reserve_default(gp_mem_reserve *r, int gpus);

/* Components of the breakdown, in this order. */
typedef enum gp_mem_comp {
	GP_MEM_WEIGHTS = 0, GP_MEM_GRADS, GP_MEM_MASTER, GP_MEM_OPTIMIZER,
	GP_MEM_ADAPTER,          /* LoRA params + grads + states */
	GP_MEM_PARAM_GATHER,     /* ZeRO-3/FSDP gathered layers */
	GP_MEM_ACTIVATIONS, GP_MEM_RECOMPUTE, GP_MEM_LOGITS,
	GP_MEM_VISION,           /* saved by the vision tower and projector */
	GP_MEM_PIPE_BUFFERS,     /* pipeline engine's stage buffers */
	GP_MEM_GRAD_REDUCE,      /* DeepSpeed bf16 copy of the fp32 grads
				  * for the DP all-reduce (memory.c) */
	GP_MEM_REF, GP_MEM_REWARD, GP_MEM_CRITIC,
	GP_MEM_ROLLOUT_WEIGHTS, GP_MEM_KV, GP_MEM_WORKSPACE,
	/* not tensors: */
	GP_MEM_CONTEXT, GP_MEM_LIBWS, GP_MEM_COMM, GP_MEM_FRAG,
	GP_MEM_PAGED,            /* paged optimizer states (managed memory,
				  * evicted to the host under pressure: not
				  * in total, never the reason for a no) */
	GP_MEM_NCOMP
} gp_mem_comp;

#define GP_MEM_NTENSOR GP_MEM_CONTEXT

/* Stable lower-case name of a component ("weights", "kv_cache"). */
const char *mem_comp_name(int comp);

typedef struct gp_mem_result {
	double bytes[GP_MEM_NCOMP];
	double allocated;   /* tensor components: what max_memory_allocated
			     * would report */
	double total;       /* allocated + context + workspaces + comm +
			     * fragmentation: what the card must hold */
	double capacity;    /* bytes the caller passed */
	double margin;      /* margin fraction * capacity */
	double budget;      /* capacity - margin */
	double usable;      /* budget - context - workspaces - comm: room
			     * for tensors and fragmentation */
	int fits;           /* total <= budget */
	double short_by;    /* total - budget (negative: headroom) */
	int largest;        /* index of the largest component */
	int stage;          /* most loaded pipeline stage (0-based) */
	int stage_layers;   /* transformer layers on that stage */
	double params;      /* parameters held on this GPU (elements) */
	double trainable;   /* trainable parameters, whole model */
	double inflight;    /* micro-batches in flight on this stage */
	double act_layer;   /* saved activations per layer per micro-batch */
	double cpu_bytes;   /* host memory of offloaded states / layers */
	/* inference and rollouts */
	double kv_per_seq;  /* KV bytes per sequence on this GPU */
	double max_seqs;    /* sequences of ctx tokens that fit (floor) */
	double max_ctx;     /* context that fits at seqs sequences */
	int cpu_layers;     /* layers offloaded to the CPU to fit */
} gp_mem_result;

/* Training (pretrain, full fine-tune, LoRA, QLoRA) on capacity bytes per
 * GPU.  The most loaded pipeline stage is reported.  GP_OK (fits or not:
 * see out->fits) or GP_EINVAL for impossible input. */
int mem_train(const gp_model *m, const gp_train_cfg *c, double capacity,
	      const gp_mem_reserve *r, gp_mem_result *out, gp_error *err);

/* Transformer layers on pipeline stage `stage` (0-based) under c's
 * partition (gp_partition); GP_OK or GP_EINVAL. */
int mem_stage_layers(const gp_model *m, const gp_train_cfg *c, int stage,
		     int *out, gp_error *err);

/* Inference serving.  GP_OK or GP_EINVAL. */
int mem_infer(const gp_model *m, const gp_infer_cfg *c, double capacity,
	      const gp_mem_reserve *r, gp_mem_result *out, gp_error *err);

/* RL fine-tuning (GRPO/PPO); critic and reward model have the actor's
 * shape.  GP_OK or GP_EINVAL. */
int mem_rl(const gp_model *m, const gp_rl_cfg *c, double capacity,
	   const gp_mem_reserve *r, gp_mem_result *out, gp_error *err);

#endif
