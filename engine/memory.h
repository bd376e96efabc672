/*
 * memory.h - per-GPU memory breakdown for training, fine-tuning (LoRA,
 * QLoRA), RL fine-tuning (GRPO, PPO) and inference.
 *
 * Every figure is bytes on the most loaded GPU.  The caller owns every
 * struct; kernels fill them and return GP_OK, or GP_EINVAL with a one-line
 * reason in err.  Nothing is allocated and nothing global is touched.
 *
 * The parts live in their own headers: model-state bytes per recipe and
 * optimizer in memory_states.h, what a layer saves for backward in memory_act.h, the
 * parallel layout and its stage split in layout.h.
 */
#ifndef GP_MEMORY_H
#define GP_MEMORY_H

#include "memory_act.h"
#include "common.h"
#include "layout.h"
#include "model.h"
#include "memory_states.h"

/* DeepSpeed's ZeRO bucket defaults, in elements (deepspeed/runtime/zero/
 * config.py DeepSpeedZeroConfig, v0.9-0.16: "reduce_bucket_size: int =
 * Field(pp_int(5e8), ge=0)", "prefetch_bucket_size: int =
 * Field(pp_int(5e7), ge=0, alias=\"stage3_prefetch_bucket_size\")";
 * deepspeed.ai/docs/config-json the same).  Hugging Face's Trainer and
 * accelerate fill a config's "auto" values with hidden^2 and
 * 0.9 hidden^2; a config without them gets these. */
#define DS_REDUCE_BUCKET 5e8
#define DS_PREFETCH_BUCKET 5e7
/* ZeRO-3's live and reuse limits, in elements (the same config.py:
 * "max_live_parameters: int = Field(pp_int(1e9), ge=0, alias=
 * \"stage3_max_live_parameters\")", "max_reuse_distance: int =
 * Field(pp_int(1e9), ge=0, alias=\"stage3_max_reuse_distance\")";
 * Hugging Face's Trainer and accelerate leave both alone). */
#define DS_MAX_LIVE 1e9
#define DS_REUSE_DISTANCE 1e9
/* ZeRO-3's optimizer sub-group, in elements: the step builds one
 * sub-group's fp32 gradient at a time (config.py v0.14.2:
 * "sub_group_size: int = Field(pp_int(1e9), ge=0)"; stage3.py step()
 * "update parameters one sub group at a time"). */
#define DS_SUB_GROUP 1e9

typedef struct gp_train_cfg {
	gp_recipe recipe;        /* the precision recipe (catalog data) */
	gp_optim optim;          /* the optimizer (catalog data) */
	gp_layout lay;           /* degrees, ZeRO, SP, schedule, micro-batch
				  * (dp*cp is the sharding group) */
	double seq;              /* tokens per sequence */
	/* Micro-batches whose gradients one step accumulates per pipeline
	 * (DeepSpeed's gradient_accumulation_steps: ZeRO-2 keeps a second
	 * gradient partition from a step's second micro-batch on,
	 * memory_deepspeed.c); 0 = lay.microbatches.  gp.train sets it to
	 * the step's micro-batches and lay.microbatches to one pipeline
	 * schedule call's (pp_microbatches), which alone bounds the
	 * activations in flight (memory_train.c). */
	double accum_microbatches;
	gp_pipe_engine pipe;     /* who runs the pipeline (pp > 1) */
	gp_partition partition;  /* layers per stage (pp > 1) */
	int first_stage_layers;  /* Megatron-Core's num_layers_in_first_ */
	int last_stage_layers;   /* and _last_pipeline_stage: these ends
				  * hold N layers, the other stages the
				  * rest evenly (mem_stage_split); 0 =
				  * by partition */
	int split_ends;          /* 1: the embedding and the loss each
				  * take a layer's place in the split
				  * (Megatron-Core's account_for_
				  * embedding/loss_in_pipeline_split) */
	int mtp_layers;          /* multi-token prediction modules trained
				  * on the last stage (Megatron-Core's
				  * mtp_num_layers): their states and
				  * activations there (memory_train.c), their
				  * time (train_stage.c stage_base); 0: none */
	gp_recompute recompute;
	int recompute_layers;    /* full recompute of only the first N layers
				  * of each stage (Megatron --recompute-
				  * method block); 0 = every layer */
	unsigned recompute_modules; /* GP_RECMOD_* (act.h) */
	int act_offload_layers;  /* Megatron-Core's cpu_offloading_num_layers
				  * (Transformer Engine's activation
				  * offload): the first N layers' saved
				  * activations go to host memory; 0 =
				  * none (memory_train.c, train.c) */
	int ckpt_offload;        /* full recompute's checkpoints (each
				  * layer's input) kept in host memory
				  * between the forward and the backward:
				  * PyTorch's checkpoint_wrapper(offload_to_
				  * cpu=True), DeepSpeed's cpu_checkpointing
				  * (memory_train.c, train.c
				  * ckpt_offload_time) */
	int fp8_cache;           /* linear inputs cached in fp8 (act.h) */
	int fp8_te;              /* Transformer Engine fp8 linears (act.h) */
	int base_fp8_gemm;       /* an adapter's frozen base held as
				  * Transformer Engine fp8 parameters
				  * (NeMo's fp8_params: fp8_model_init) that
				  * its fp8 GEMMs read as they are: no 16-bit
				  * copy, no dequantisation, no input kept
				  * (memory_stage_act.c, train_prep.c) */
	int probs_in_act;        /* MoE weights in the activation (act.h) */
	int moe_einsum;          /* DeepSpeed's MOELayer: tokens dispatched
				  * and combined by dense einsums over an
				  * S x E x C one-hot mask, not permuted
				  * (train_layer.c moe_einsum_costs) */
	int flash, dropout, eager_swiglu, eager_softmax;
	int eager_norm;          /* Hugging Face's RMSNorm modules keep an
				  * fp32 copy of their input (act.h) */
	int attn_clamp;          /* eager attention clamps the masked
				  * scores (act.h) */
	int autocast;            /* fp32 weights under torch.autocast:
				  * fp32 stream and norms, a 16-bit cast
				  * per linear (act.h) */
	int split_proj;          /* under autocast, the linears of their
				  * own: GP_SPLIT_QKV, GP_SPLIT_MLP
				  * (train.h; act.h) */
	double act_bytes;        /* 0: the recipe's activation bytes */
	double logit_bytes;      /* bytes per vocab entry per token kept for
				  * the loss; 0 = 4 (fp32 logits,
				  * Korthikanti et al. 2022 sec. 4.3 4sbv) */
	int fused_linear_ce;     /* the output layer and the loss as one
				  * chunked op (Liger-Kernel's
				  * LigerFusedLinearCrossEntropyFunction):
				  * one chunk of logits, never all of them
				  * (mem_liger_chunk; logit_bytes unread) */
	int replicated_logits;   /* the TP output head gathers its logits
				  * to every TP rank (PyTorch ColwiseParallel
				  * output_layouts=Replicate()): each rank
				  * keeps all V of them, not V/t */
	double capacity_factor;  /* MoE; 0 = 1.0 */
	/* Offload (DeepSpeed ZeRO-Offload / ZeRO-Infinity, memory_train.c
	 * mem_ds_offload): the fp32 master, its gradient and the optimizer
	 * states live and step on the CPU (zero 1-3); with offload_params
	 * the 16-bit parameter partitions too (zero 3).  The GPU keeps
	 * DeepSpeed's gradient bucket and, at zero 3, the gathered
	 * layers. */
	int offload_optimizer;
	int offload_params;
	/* DeepSpeed's ZeRO engine (stack deepspeed; ds_zero 0: another
	 * stack's sharding, a one-layer gradient bucket and two gathered
	 * layers).  Its buckets, in elements (deepspeed/runtime/zero/
	 * config.py DeepSpeedZeroConfig): reduce_bucket_size, the flat
	 * gradient buffer of stages 2 and 3 and the most one reduction
	 * carries; stage3_prefetch_bucket_size, what stage 3 gathers ahead
	 * of use (0: nothing prefetched). */
	int ds_zero;
	double ds_reduce_bucket;
	double ds_prefetch_bucket;
	/* stage3_max_live_parameters and stage3_max_reuse_distance:
	 * ZeRO-3's gathered window (memory_train.c ds_gather_window). */
	double ds_max_live;
	double ds_max_reuse;
	/* ds_config "data_types": {"grad_accum_dtype"}: bytes per element
	 * of stage 3's gradient accumulator, grad_partitions_flat_buffer
	 * (stage3.py v0.13.5: "dtype=self.gradient_accumulation_dtype");
	 * 0 = the model's 16 bits, DeepSpeed's default under ZeRO (engine.py
	 * get_data_types: "grad_accum_dtype = model_dtype" unless bf16
	 * without ZeRO).  Stage 2 keeps the parameter's dtype whatever it
	 * says (stage_1_and_2.py: its accumulator attribute is stage 1's). */
	double ds_accum_bytes;
	/* DeepSpeed without ZeRO in fp16 (stage 0, its FP16 optimizers,
	 * deepspeed/runtime/fp16/ at v0.14.2): the bytes per gradient
	 * element the step makes beside the 16-bit .grad -- 8 for
	 * FP16_Optimizer (DeepSpeed's own FusedAdam: a per-parameter fp32
	 * copy and their flat concatenation), 4 for FP16_UnfusedOptimizer
	 * (a client optimizer: one fp32 .grad per parameter); 0 none
	 * (mem_ds_fp16_step). */
	double ds_fp16_step;
	/* A plain torch.optim AdamW's foreach step (the hf stack, no
	 * DeepSpeed): the share of the optimizer states' bytes the step
	 * allocates beside them -- _multi_tensor_adamw's "exp_avg_sq_sqrt =
	 * torch._foreach_sqrt(device_exp_avg_sqs)", one copy of the second
	 * moment in its dtype, then divided, offset and read by
	 * _foreach_addcdiv_ (torch/optim/adamw.py, PyTorch 2.0-2.5; adam.py's
	 * _multi_tensor_adam since): 0.5 of AdamW's two moments.  0: none
	 * (memory_train.c foreach_step_phase). */
	double foreach_step;
	/* overlap_comm at stage 2: the flat gradient buffer is doubled
	 * (stage_1_and_2.py backward: "Use double buffers to avoid data
	 * access conflict when overlap_comm is enabled", buf_1 of
	 * reduce_bucket_size elements).  gp.train sets it from
	 * overlap_grad_reduce (train.c phase_mem). */
	int ds_overlap_comm;
	/* ZeRO-3 on a model built outside deepspeed.zero.Init (gp.memory's
	 * zero_init false): the engine moves it whole onto the GPU before
	 * partitioning it (memory_deepspeed.c mem_ds_whole_init). */
	int ds_whole_init;
	/* LoRA / QLoRA: lora_rank 0 = every weight trainable. */
	int lora_rank;
	unsigned lora_targets;
	int lora_dropout;        /* 1: adapter dropout p > 0 */
	gp_quant base;           /* frozen base storage; bits 0 = recipe's */
	/* Software-stack behaviour (memory_train.c, train_stage): */
	int paged_optimizer;     /* optimizer states in CUDA managed memory
				  * (bitsandbytes paged optimizers): on the
				  * card but outside PyTorch's allocator */
	int before_step;         /* the micro-batches before the first
				  * optimizer step: the optimizer's states
				  * not yet allocated (lazily, at the first
				  * step()) and no step phase yet
				  * (memory_train.c stage_states) */
	int grads_in_bwd;        /* optimizer step fused into backward
				  * (torchtune optimizer_in_bwd): each grad
				  * is freed after its step, only the
				  * largest one is ever whole */
	int logits_freed;        /* the loop drops its logits before
				  * backward (torchtune's "del logits"):
				  * under a frozen head they do not meet
				  * the layers' backward (memory_train.c) */
	int grads_whole;         /* zero 3: whole gradients accumulated
				  * over the micro-batches, reduce-scattered
				  * once per step (PyTorch FSDP no_sync /
				  * set_requires_gradient_sync(False)) */
	int fsdp_version;        /* PyTorch FSDP's implementation under
				  * fsdp: 1 (FullyShardedDataParallel:
				  * flat parameters, the gradient divided
				  * before its reduce-scatter), 2
				  * (fully_shard: per-parameter tensors,
				  * copied out of each gather and into each
				  * reduce-scatter; its whole gradients in
				  * the reduction's dtype, memory_train.c
				  * whole_grad_bytes), 0 (neither: another
				  * stack's sharding) */
	double reduce_bytes;     /* bytes per gradient element the DP
				  * reduction moves; 0 = the recipe's
				  * `reduce` (Megatron bf16: fp32) */
	int fused_qkv_view;      /* see gp_act_cfg */
	int kv_repeat;           /* K and V copied to every query head before
				  * the attention (torchtitan's repeat_kv):
				  * the copy's time (train_layer.c
				  * kv_repeat_costs) and the query-wide K and
				  * V kept (see gp_act_cfg) */
	int fsdp_root_gathered;  /* PyTorch FSDP's root unit (the embedding
				  * and the output layer) left gathered from
				  * its forward to the backward (memory_train.c
				  * stage_states) */
	int sac_attn_recompute;  /* recompute op whose save list lacks the
				  * fused attention's op (torchtitan's
				  * _save_list before b39377f9f with SDPA's
				  * cuDNN backend): its forward re-runs in the
				  * backward and its output is not kept
				  * (see gp_act_cfg) */
	int cp_ring;             /* PyTorch's context_parallel ring and its
				  * K/V rotater (memory_train.c cp_ring_bytes):
				  * 0 none (cp 1, or Transformer Engine's p2p
				  * ring, not priced here), 1 allgather, 2
				  * alltoall */
	int cp_ulysses;          /* the CP group is DeepSpeed-Ulysses'
				  * sequence parallelism (the ulysses
				  * option): its exchange all-to-alls
				  * (train_layer.c ulysses_comm), their
				  * buffers and the repeated K and V
				  * (memory_act.c act_attention,
				  * memory_train.c ulysses_a2a_bytes) */
	int lora_zero_pad;       /* see gp_act_cfg */
	int quant_head;          /* a quantised frozen base quantises the
				  * output layer too (every nn.Linear) */
	/* Vision-language models (gp_model.vision): */
	double images;           /* images per sequence, a whole number; each
				  * goes through the vision tower and its
				  * tokens_per_image LLM tokens are part of
				  * seq.  0 = text only */
	/* Encoder-decoder models (gp_model.encoder_layers): seq is the
	 * decoder (target) length and enc_seq the encoder (input) length;
	 * 0 = seq. */
	double enc_seq;
	int vision_frozen;       /* 1: the ViT tower does not train (weights
				  * only; with pixels needing no grad it
				  * saves nothing); the projector still
				  * trains unless the base is frozen (LoRA) */
	int llm_frozen;          /* 1: the language model does not train
				  * (weights only; its backward carries the
				  * input gradient down to the image tokens):
				  * a vision-language model's alignment stage,
				  * the projector (and a training tower)
				  * alone train (LLaVA's stage 1,
				  * tune_mm_mlp_adapter) */
	int ema;                 /* an exponential moving average of the
				  * trained parameters, fp32 (GP_EMA_*):
				  * each rank's over the parameters it holds
				  * (NeMo's EMAOptimizer: "copy.deepcopy(
				  * param.data.detach()).to(self.device)" for
				  * its optimizer's params), on the GPU or in
				  * host memory (memory_train.c stage_ema) */
} gp_train_cfg;

/* gp_train_cfg ema: none, a GPU copy, a host copy. */
enum { GP_EMA_NONE = 0, GP_EMA_GPU, GP_EMA_CPU, GP_EMA_COUNT };

/* ema's name ("none", "gpu", "cpu") to its GP_EMA_* value; an unknown
 * name is GP_EINVAL with err naming the choices. */
int mem_ema_parse(const char *s, int *out, gp_error *err);

typedef struct gp_infer_cfg {
	gp_quant weights;        /* bits 0 = 16 */
	double kv_bytes;         /* per cached element; 0 = 2 */
	double mamba_ssm_bytes;  /* a hybrid stack's SSM state per element;
				  * 0 = GP_MAMBA_SSM_STATE_BYTES */
	int tp, pp;              /* 0 = 1 */
	double seqs;             /* concurrent sequences */
	double ctx;              /* tokens per sequence (prompt + output) */
	int block;               /* paged KV block in tokens; 0 = unpaged */
	double chunk_tokens;     /* tokens per forward (prefill chunk) for the
				  * workspace; 0 = min(seqs*ctx, 8192) */
	double act_bytes;        /* 0 = 2 */
	double score_ws;         /* > 0: the workspace also holds one
				  * layer's attention scores, chunk_tokens x
				  * ctx x heads / tp elements of this many
				  * bytes (llama.cpp without FlashAttention:
				  * its F32 KQ over n_kv, 4); 0: none */
	double embed_bits;       /* embedding / lm_head bits; 0 = 16 */
	double head_bits;        /* lm_head bits where they differ (GGUF's
				  * output tensor); 0 = embed_bits */
	double kv_free_fraction; /* > 0: the KV pool is this fraction of
				  * what is left once weights, workspace and
				  * the fixed reserve are placed (TensorRT-LLM
				  * kv_cache_free_gpu_mem_fraction); the
				  * margin is then the rest of that free
				  * memory.  0: the margin is a fraction of
				  * the capacity (vLLM's
				  * gpu_memory_utilization) */
	int offload;             /* 1: put layers on CPU when short */
	int offload_layers;      /* with offload, > 0: exactly this many of
	                            the stage's layers on the CPU (llama.cpp
	                            -ngl = layers - this); 0: as many as
	                            the GPU is short of */
	int kv_whole;            /* 1: with tp > 1 the GPU holds the whole
	                            KV cache, not its heads' share
	                            (llama.cpp's row split: the cache on
	                            the main GPU) */
} gp_infer_cfg;

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

/* A GPU's budget: its capacity less the margin (a fraction of it), the
 * bytes a job's total must stay within.  mem_finish's budget field, and
 * what a caller that priced only the total (a sweep's brief step) compares
 * it with. */
static inline double mem_budget(double capacity, const gp_mem_reserve *r)
{
	return capacity - r->margin * capacity;
}

/* The fixed reserve of one GPU: what the runtime holds before any tensor
 * of the job is placed, whatever the batch -- the CUDA context (r->context,
 * 0.5 GiB by default: the driver state and lazily loaded kernels of an idle
 * PyTorch process, NVIDIA CUDA C Programming Guide "Lazy Loading"), the
 * libraries' workspaces (r->workspace, 64 MiB: cuBLAS's per-handle
 * workspace, PyTorch's CUBLAS_WORKSPACE_CONFIG :4096:8, and cuBLASLt's,
 * PyTorch CUDA semantics notes) and NCCL's buffers where the GPUs talk
 * (r->comm, 0.5 GiB on more than one GPU: NCCL_BUFFSIZE, 4 MiB per
 * channel per peer, NCCL environment variable docs), the figures
 * mem_reserve_default sets (memory.c, with the sources in full) unless the
 * caller states its own.  The one rule every breakdown places it by: the
 * dense path's usable (finish_pick) and its KV sizing (memory_infer.c
 * serve_reserve), and the MoE serving model's (serve.c serve_memory). */
static inline double mem_fixed_reserve(const gp_mem_reserve *r)
{
	return r->context + r->workspace + r->comm;
}

/* The margin a serving engine holds back from its KV pool, as a fraction
 * of `capacity`: with kv_free_fraction > 0 the KV pool is that fraction
 * of `left`, the memory free once the model is loaded (TensorRT-LLM's
 * KvCacheConfig.free_gpu_memory_fraction, default 0.9, measured after the
 * weights and the activations' profile), so the margin is the rest of
 * `left`; else `margin`, the caller's fraction of the capacity (vLLM's
 * gpu_memory_utilization).  The one rule mem_infer (memory_infer.c
 * serve_reserve) and the MoE serving model (serve.c serve_memory) size
 * the KV with. */
double mem_kv_margin(double capacity, double margin, double kv_free_fraction,
		     double left);

/* Tokens in one chunk of Liger-Kernel's fused linear cross-entropy
 * (ops/fused_linear_cross_entropy.py at v0.8.0,
 * fused_linear_cross_entropy_forward): "inc_factor = triton.cdiv(V, H)",
 * "chunk_size = triton.next_power_of_2(triton.cdiv(BT, inc_factor))" --
 * a chunk of logits about the size of the BT x H input ("if we were to
 * achieve the same memory consumption as BT x H"), the last chunk
 * min(chunk, BT - start).  Returns the chunk, at most tokens; tokens,
 * vocab and hidden positive. */
double mem_liger_chunk(double tokens, double vocab, double hidden);

/* Components of the breakdown, in this order. */
typedef enum gp_mem_comp {
	GP_MEM_WEIGHTS = 0, GP_MEM_GRADS, GP_MEM_MASTER, GP_MEM_OPTIMIZER,
	GP_MEM_ADAPTER,          /* LoRA params + grads + states */
	GP_MEM_PARAM_GATHER,     /* ZeRO-3/FSDP gathered layers */
	GP_MEM_ACTIVATIONS, GP_MEM_RECOMPUTE, GP_MEM_LOGITS,
	GP_MEM_VISION,           /* saved by the vision tower and projector */
	GP_MEM_PIPE_BUFFERS,     /* pipeline engine's stage buffers */
	GP_MEM_GRAD_REDUCE,      /* DeepSpeed bf16 copy of the fp32 grads
				  * for the DP all-reduce (memory_train.c) */
	GP_MEM_REF, GP_MEM_REWARD, GP_MEM_CRITIC,
	GP_MEM_EMA,              /* the actor's moving average (RL) */
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
	double weight_bytes; /* inference: the weights' bytes on this GPU,
			      * host-resident layers included (its
			      * offload reads them) */
	double trainable;   /* trainable parameters, whole model */
	double inflight;    /* micro-batches in flight on this stage */
	double act_layer;   /* saved activations per layer per micro-batch */
	double cpu_bytes;   /* host memory of offloaded states / layers
			     * (training: the sum of the host_* below,
			     * activations included) */
	/* Training with offload: host bytes per GPU of its offloaded
	 * parameter partition, gradient partitions (fp32, and at zero 3
	 * DeepSpeed's 16-bit accumulation partition), fp32 master and
	 * optimizer states.  A node needs the sum over its GPUs. */
	double host_weights, host_grads, host_master, host_optimizer;
	/* Activation offload (act_offload_layers): host bytes per GPU of
	 * the offloaded layers' saved activations, in cpu_bytes too. */
	double host_acts;
	/* ema cpu (gp_train_cfg ema): host bytes per GPU of its fp32
	 * moving average of the parameters it holds, in cpu_bytes too. */
	double host_ema;
	/* The host check (mem_host_fit): host_ranks of the job's GPUs on
	 * its fullest host, host_need = cpu_bytes x host_ranks what their
	 * offload holds there, host_memory that host's DRAM (0: no host
	 * capacity known, not checked).  host_need > host_memory makes
	 * fits 0 whatever the GPU holds. */
	double host_need, host_memory;
	int host_ranks;
	/* inference and rollouts */
	double kv_per_seq;  /* KV bytes per sequence on this GPU */
	double max_seqs;    /* sequences of ctx tokens that fit (floor) */
	double max_ctx;     /* context that fits at seqs sequences */
	double kv_room;     /* bytes left for the KV cache and the logits
			     * rows once the weights and the workspace of
			     * the engine's token budget are placed */
	int cpu_layers;     /* layers offloaded to the CPU to fit */
	/* DeepSpeed's ZeRO optimizer at stage 2/3, and stage 1's step
	 * (mem_ds_zero_phases):
	 * the phase whose gradients bytes[GP_MEM_GRADS] holds, 1 the
	 * backward's, 2 the step's, 3 between them (an RL step's rollout
	 * and forwards; 0: the recipe's gradients), and the bytes per
	 * partition element it holds then.  Set with them (a training
	 * result, phase 1 or 2): what stays outside the backward and the
	 * step -- idle_grads the gradient bytes, idle_bucket the flat
	 * reduction bucket -- and fwd_gather the gathered layers and
	 * buffers a forward without backward holds. */
	int ds_grad_phase;
	double ds_grad_bytes;
	double ds_idle_grads, ds_idle_bucket, ds_fwd_gather;
	/* 1: the breakdown is ZeRO-3's arrival of a whole model, before
	 * partitioning (memory_deepspeed.c mem_ds_whole_init). */
	int ds_whole_init;
} gp_mem_result;

/* Sum the tensors of *o (its bytes[] of the tensor components), add the
 * reserve r and decide against capacity: allocated, the reserve rows,
 * fragmentation (r->frag of what was allocated, less `pooled` bytes
 * allocated once as one block), total (paged optimizer states shown but
 * never counted), largest, budget, usable, short_by and fits -- the rule
 * every memory result follows (mem_train, mem_infer, the RL phases). */
void mem_finish(gp_mem_result *o, double capacity, const gp_mem_reserve *r,
		double pooled);

/* Whether the host memory holds the offload (ZeRO-Offload's optimizer
 * states and parameters, FSDP's CPU offload, an RL trainer's parked
 * states, a serving replica's offloaded layers): every GPU's partition
 * lives in its own host's DRAM (DeepSpeed's pinned CPU buffers, one per
 * rank; PyTorch FSDP CPUOffload's .cpu() shards), so a host holds
 * o->cpu_bytes for each of the job's GPUs it carries.  node_memory: the
 * DRAM of one node of gpus_per_node GPUs (a catalog system's
 * host_memory; 0 = unknown, nothing checked); host_gpus: the GPUs of one
 * host where the node is an NVLink domain of several hosts (GB200 NVL72:
 * 4 of 72, each tray its share of the rack's DRAM), 0 = the node is one
 * host; gpus: the job's (or the replica's) GPUs.  The fullest host holds
 * min(gpus, its GPUs) ranks.  Sets host_need, host_memory, host_ranks,
 * and fits 0 when the host is short.  The one host rule for training,
 * RL and serving. */
void mem_host_fit(gp_mem_result *o, double node_memory, int gpus_per_node,
		  int host_gpus, double gpus);

/* One host's share of a node's host resource (its DRAM's bytes or its
 * bandwidth) where the node is an NVLink domain of several hosts
 * (host_gpus of gpus_per_node GPUs: each tray holds its own CPUs and
 * DRAM), 1 where the node is one host; *ranks: the job's GPUs on the
 * fullest host, min(gpus, that host's GPUs), at least 1.  The rule
 * mem_host_fit holds the offload's bytes by and train.c offload_step
 * shares the host's bandwidth by. */
double mem_host_share(int gpus_per_node, int host_gpus, double gpus,
		      int *ranks);

/* The host DRAM bandwidth each of the job's GPUs streams its offload at
 * when every one of them streams at once: the node's bw (a catalog
 * system's host_mem_bw, derated) x its host's share (mem_host_share),
 * divided among the ranks that host carries that stream together.
 * ZeRO-Offload's CPU Adam steps every rank's partition in the same step,
 * llama.cpp's CPU runs every replica's offloaded layers each token, and
 * the DMA of pinned or staged copies reads the same DRAM: the memory
 * controllers serve them together, so each gets its part of the host's.
 * turns (>= 1): the pipeline stages a step runs one after another (a
 * serving replica's pp, whose stages hold the GPU in turn); 1 where all
 * ranks stream together (training's optimizer step).  width (>= 1): the
 * GPUs of one stage (its tp), which stream together.  Only the stages
 * on the same host take turns there: a replica's stages are laid out
 * one after another, width GPUs each, so a host of ranks GPUs holds
 * min(turns, max(1, ranks / width)) of them, and ceil(ranks / that)
 * of its GPUs stream at once (mem_host_streams): 8 GPUs at tp 1 pp 2,
 * 4; 16 GPUs over two hosts of 8 at tp 8 pp 2, a stage a host, all 8;
 * at tp 4 pp 4, two stages a host, 4.  The one rule train.c
 * offload_step and infer (step_offload, the Lua link rates through
 * core.host_bw_each) price the shared host by. */
int mem_host_streams(int ranks, int width, int turns);
double mem_host_bw_each(double bw, int gpus_per_node, int host_gpus,
			double gpus, int width, int turns);

/* Training (pretrain, full fine-tune, LoRA, QLoRA) on capacity bytes per
 * GPU.  The most loaded pipeline stage is reported.  GP_OK (fits or not:
 * see out->fits) or GP_EINVAL for impossible input. */
int mem_train(const gp_model *m, const gp_train_cfg *c, double capacity,
	      const gp_mem_reserve *r, gp_mem_result *out, gp_error *err);

/* What a hybrid stack's memory and step (m->pattern set) are not priced
 * under, the memory's and the step's one refusal (train_prep.c
 * hybrid_refusal adds the step's own): context parallelism (y->cp > 1),
 * LoRA adapters or a frozen language model, multi-token prediction
 * modules.  A usage error naming the option, or GP_OK (also for a model
 * without a pattern). */
int mem_hybrid_refusal(const gp_model *m, const gp_train_cfg *c,
		       const gp_layout *y, gp_error *err);

/* Transformer layers on pipeline stage `stage` (0-based) under c's
 * partition (gp_partition); GP_OK or GP_EINVAL. */
/* Whether c's layers keep the down projection's input for the backward
 * (mem_act_down_kept of their activation config; memory_stage_act.c):
 * where they do not (a frozen base without a down adapter, or one with
 * its dropout), recompute_modules mlp_act has nothing to drop or re-run. */
int mem_mlp_down_kept(const gp_train_cfg *c);

int mem_stage_layers(const gp_model *m, const gp_train_cfg *c, int stage,
		     int *out, gp_error *err);

/* The checked layout of c with its pipeline stage split by c's partition
 * (layout_stage_layers then gives each stage's layers).  GP_OK or
 * GP_EINVAL. */
int mem_layout(const gp_model *m, const gp_train_cfg *c, gp_layout *out,
	       gp_error *err);

/* For sweeps, which evaluate many layouts of one model: the per-layer
 * activations of the splits seen so far (they depend on the split of a
 * layer, the micro-batch, the sequence, the recompute policy and what
 * trains -- not on pp, dp, ZeRO or the schedule).  One model per memo:
 * zero it (memset) before the first use and whenever the model changes.
 * The fields are memory_stage_act.c's. */
#define GP_MEM_MEMO_N 64

/* Everything the saved activations of a layout read besides the model
 * (memory_stage_act.c mem_stage_acts_of takes this struct and nothing else of the
 * config): the memo's key, whole by construction.  Zeroed first, the
 * memo compares the bytes. */
typedef struct gp_acts_key {
	gp_act_cfg ac;           /* a layer's activation config */
	double images;           /* images per sequence (vision tower) */
	double enc_seq;          /* encoder tokens per sequence (0: seq) */
	int vision_frozen;       /* 1: the tower does not train */
} gp_acts_key;

typedef struct gp_mem_memo {
	int n, next, last;
	long hits, misses;
	struct gp_mem_memo_entry {
		gp_acts_key key;
		unsigned long long hash;    /* of key */
		double acts[128];           /* memory_int.h's stage_acts */
	} e[GP_MEM_MEMO_N];
} gp_mem_memo;

/* mem_layout and mem_train for a model already checked (model_check)
 * whose parameter counts p are model_params(m): what a sweep does for
 * each layout without re-deriving either.  mem_train_prepared takes the
 * layout y that mem_layout_prepared returned for the same m and c, and a
 * memo (may be NULL).  The same results as mem_layout and mem_train. */
int mem_layout_prepared(const gp_model *m, const gp_params *p,
			const gp_train_cfg *c, gp_layout *out, gp_error *err);
/* mem_layout_prepared for a config whose own checks -- those that read
 * neither its layout nor its ZeRO stage, seq's included -- passed
 * mem_layout_prepared before (a caller that keeps the config and moves
 * its layout: train_prep.c, a split's later phases): only the rest are
 * made, in their order, so the refusal of a layout is the same. */
int mem_layout_kept(const gp_model *m, const gp_params *p,
		    const gp_train_cfg *c, gp_layout *out, gp_error *err);
int mem_train_prepared(const gp_model *m, const gp_params *p,
		       const gp_train_cfg *c, const gp_layout *y,
		       double capacity, const gp_mem_reserve *r,
		       gp_mem_memo *memo, gp_mem_result *out, gp_error *err);

/* A layout's training memory with its ZeRO stage left open, for a sweep
 * that prices several stages of one layout: mem_train_split keeps each
 * distinct pipeline stage's share that the ZeRO stage does not change
 * (activations, logits, buffers: everything but the states, gathers and
 * DeepSpeed's reduction peak); mem_train_zero finishes it under c's
 * ZeRO stage -- for the m, p, c (but its ZeRO stage), y, capacity and r
 * the split was made with; the caller vouches -- and points *res at the
 * result, in s (good until s is used again).  The same result as
 * mem_train_prepared.  An offloaded config is refused (its checks read
 * the ZeRO stage).  The fields are memory_train.c's. */
#define GP_MEM_SPLIT_N 8
/* One stage's full-training states under one ZeRO stage, as
 * memory_train.c's stage_states wrote them (its fields). */
typedef struct gp_mem_states {
	int ok, stage, nl, qhead, ovl;
	double expert, dense, mine, shard, eshard;
	double bytes[4], paged, trainable, pg[2];
	double ema, host_ema;    /* stage_ema's GPU and host bytes */
	int paged_on, pg_on[2];
} gp_mem_states;

typedef struct gp_mem_split {
	int n;
	gp_state_bytes sb;
	double acts[128];        /* memory_int.h's stage_acts */
	gp_mem_result rest[GP_MEM_SPLIT_N];
	gp_mem_result work[GP_MEM_SPLIT_N];   /* mem_train_zero's */
	double head[GP_MEM_SPLIT_N][6];       /* each stage's shares */
	/* Each stage's states by ZeRO stage, kept across mem_train_split
	 * calls (a sweep's phases of one split) until mem_split_forget:
	 * mem_train_zero reuses an entry whose stage, layers, shares,
	 * shard groups and DeepSpeed overlap_comm match; the rest of what
	 * they read -- the model, its parameters, the config's recipe,
	 * optimizer, ZeRO and DeepSpeed options, TP, PP, EP and ETP -- the
	 * caller vouches is the same until it forgets them. */
	gp_mem_states st[4][GP_MEM_SPLIT_N];
} gp_mem_split;

/* What s keeps across its splits: nothing (the split, the config or the
 * model may have moved). */
void mem_split_forget(gp_mem_split *s);

int mem_train_split(const gp_model *m, const gp_params *p,
		    const gp_train_cfg *c, const gp_layout *y,
		    double capacity, const gp_mem_reserve *r,
		    gp_mem_memo *memo, gp_mem_split *s, gp_error *err);
int mem_train_zero(const gp_model *m, const gp_params *p,
		   const gp_train_cfg *c, const gp_layout *y,
		   double capacity, const gp_mem_reserve *r,
		   gp_mem_split *s, const gp_mem_result **res, gp_error *err);
/* mem_train_zero for a caller that reads the total and the fit alone
 * (a sweep's brief step): the result's largest component is not set. */
int mem_train_zero_fit(const gp_model *m, const gp_params *p,
		       const gp_train_cfg *c, const gp_layout *y,
		       double capacity, const gp_mem_reserve *r,
		       gp_mem_split *s, const gp_mem_result **res,
		       gp_error *err);

/* The largest component of a result mem_train_zero_fit finished: what
 * mem_train_zero's finish sets (its bytes unchanged since). */
void mem_largest(gp_mem_result *o);

/* Inference is priced for decoder-only models: GP_OK, or GP_EINVAL for
 * an encoder-decoder one (mem_infer's and infer_run's one refusal). */
int mem_infer_model_ok(const gp_model *m, gp_error *err);

/* Inference serving: the one inference-memory model (infer_run sizes its
 * replica with it).  Weights, workspace (one forward of chunk_tokens plus
 * the fp32 logits of c->seqs sequences) and c->seqs sequences of c->ctx
 * tokens of KV; the KV pool is exempt from fragmentation (serving engines
 * allocate it once, see memory_infer.c).  out->max_seqs counts the sequences of
 * ctx tokens that fit, each with its logits row.  GP_OK or GP_EINVAL. */
int mem_infer(const gp_model *m, const gp_infer_cfg *c, double capacity,
	      const gp_mem_reserve *r, gp_mem_result *out, gp_error *err);

#endif
