/*
 * train.h - one training step on a placed parallel layout: compute,
 * communication on the critical path, pipeline bubble and optimizer
 * step -> step time, tokens/s, MFU/HFU, time and cost to train.
 *
 * The step of a layout (tp, cp, ep, dp, pp, vpp, ZeRO, SP, micro-batch;
 * layout.h) is priced stage by stage: each pipeline stage runs its
 * layers' operators (model_layer_ops) forward, backward (input and
 * weight gradients) and recomputed on the roofline (roofline.h), plus
 * the collectives that sit on the critical path of a micro-batch (TP,
 * CP, EP), each on its placed group (layout_place, comm_group_cost);
 * the pipeline schedule turns the per-micro-batch stage times into the
 * step, and the data-parallel gradient reduction, ZeRO parameter
 * gathers and the optimizer step follow.  Overlap is explicit: every
 * communication kind reports the seconds it added to the step (exposed)
 * and the seconds that ran under compute (hidden).
 *
 * Units: seconds, FLOP, bytes, tokens.  Caller-owned structs; nothing
 * allocates; GP_OK or GP_EINVAL with the reason in err.  A layout that
 * does not fit memory is a result (fits = 0), not an error.
 */
#ifndef GP_TRAIN_H
#define GP_TRAIN_H

#include "comm.h"
#include "common.h"
#include "layout.h"
#include "memory.h"
#include "model.h"
#include "roofline.h"

/* Where the seconds of a step go.  COMPUTE is every operator of the
 * forward and backward passes; RECOMPUTE the recomputed forward; the
 * communication kinds are what they add on the critical path; BUBBLE
 * the pipeline's fill and drain; OPTIMIZER the optimizer step. */
typedef enum train_part {
	TRAIN_COMPUTE = 0, TRAIN_RECOMPUTE, TRAIN_TP, TRAIN_CP, TRAIN_EP,
	TRAIN_PP, TRAIN_DP, TRAIN_ZERO, TRAIN_BUBBLE, TRAIN_OPTIMIZER,
	TRAIN_NPARTS
} train_part;

/* Stable names: "compute", "recompute", "tp_comm", ... */
const char *train_part_name(int part);

/* Warnings a result carries (bit mask). */
enum {
	TRAIN_WARN_ZERO_DP1 = 1,      /* ZeRO over a data-parallel group of
				       * one rank shards nothing */
	TRAIN_WARN_TP_NODES = 2,      /* the TP group leaves the node */
	TRAIN_WARN_EP_NODES = 4,      /* the EP group leaves the node */
	TRAIN_WARN_UNEVEN_MB = 8      /* interleaving with micro-batches
				       * not a multiple of pp */
};

/* How a context-parallel ring moves K and V (the cp_rotate option):
 * P2P, Transformer Engine's ring (Megatron-Core's p2p CP: each step
 * sends the K/V chunk at its kv heads to the next rank); ALLGATHER and
 * ALLTOALL, PyTorch's context_parallel (torch.distributed.tensor.
 * experimental, _templated_ring_attention) with its two rotaters;
 * ULYSSES, no ring: DeepSpeed-Ulysses' all-to-alls of q, k, v and the
 * attention output over the group (the ulysses option; train_layer.c
 * ulysses_comm). */
enum { GP_CP_P2P = 0, GP_CP_ALLGATHER, GP_CP_ALLTOALL, GP_CP_ULYSSES };
/* The projections kept apart (train_cfg split_proj, a mask): q, k and v;
 * the gated MLP's gate and up. */
enum { GP_SPLIT_QKV = 1, GP_SPLIT_MLP = 2 };

/* Transformer Engine's MXFP8 grouped linear (te_mxfp8_grouped):
 * fused (PR #2019 on: bulk buffers, one multi-tensor swizzle), bulk (PR
 * #1934 to #2019: zeroed bulk buffers, a swizzle per GEMM), per_tensor
 * (before #1934: each expert's tensors allocated, a swizzle per GEMM). */
enum { GP_MXFP8_GROUPED_FUSED = 0, GP_MXFP8_GROUPED_BULK = 1,
       GP_MXFP8_GROUPED_PER_TENSOR = 2 };

/* The MoE router's forward kernels the dispatchers' host counts already
 * hold (engine/train_layer.c, beside MOE_DISPATCH_OPS, counts them:
 * topk_softmax_with_capacity's 10 and the input's fp32 cast 1); the
 * floor of moe_router_ops, whose count beyond it is priced. */
#define MOE_ROUTER_OPS 11.0

typedef struct train_cfg {
	gp_train_cfg mem;        /* the memory model's config: recipe,
				  * optimizer, layout (mem.lay), seq,
				  * recompute, LoRA, vision, offload */
	gp_dtype compute;        /* GEMM precision of the linears: bf16,
				  * fp16, fp8 (Transformer Engine: the
				  * layers' linears only), tf32 or fp32 */
	double global_batch;     /* sequences per step; its micro-batches
				  * per pipeline = global_batch / (dp *
				  * micro_batch), a whole number >= 1 */
	int fsdp;                /* 1: PyTorch FSDP semantics for zero 2
				  * and 3 (parameters gathered per micro-
				  * batch); 0: ZeRO / distributed optimizer.
				  * Set from the fsdp option's strategy
				  * (shard_grad_op = zero 2, full_shard =
				  * zero 3) or the hf stack at zero >= 2 */
	/* Overlap of communication with compute (1 = on): */
	int overlap_grad_reduce; /* DP reduction under the last backward */
	int overlap_param_gather; /* ZeRO-1/2 parameter all-gather under the
				   * next forward; ZeRO-3 layer gathers
				   * prefetched under the layer before */
	int tp_overlap;          /* TP collectives under the GEMMs
				  * (Transformer Engine Userbuffers) */
	int overlap_p2p;         /* PP sends under compute */
	int ep_overlap;          /* EP all-to-all under compute */
	int zero3_per_param;     /* 1: ZeRO-3 as DeepSpeed v0.3 (early
				  * 2021) runs it: each parameter gathered
				  * on its own after a device synchronize,
				  * nothing prefetched under compute
				  * (train_stage.c per_param_colls); 0: the
				  * layer-bucketed prefetching gathers */
	double dp_bucket;        /* elements in each of the once-a-step
				  * DP reduce-scatters and the distributed
				  * optimizer's parameter all-gathers (apex
				  * DistributedFusedAdam's bucket_cap_mb
				  * over the gradient's bytes): one
				  * collective a bucket; 0: the whole
				  * stage in one message, Megatron-Core's
				  * last bucket DDP_BUCKET (train.c
				  * dp_bucketed) */
	int fp8_param_gather;    /* 1: the distributed optimizer gathers
				  * the fp8 linears' weights in 1 byte
				  * (NeMo's fp8_params, train.c
				  * phase_post) */
	int zero_allreduce;      /* 1: ZeRO 1/2 reduce gradients by an
				  * all-reduce, each rank keeping its slice
				  * (DeepSpeed's stage 1 and 2 with
				  * use_multi_rank_bucket_allreduce); 0: by
				  * a reduce-scatter */
	int ep_allgather;        /* the MoE tokens all-gathered over EP and
				  * the outputs reduce-scattered (Megatron-
				  * Core's allgather token dispatcher), not
				  * sent by all-to-all */
	int ep_flex;             /* the flex token dispatcher (DeepEP's or
				  * HybridEP's fused permute + all-to-all
				  * kernels), not the alltoall one */
	int ep_hybridep;         /* 1: the flex dispatcher's backend is
				  * HybridEP; 0: DeepEP (Megatron-Core's
				  * moe_flex_dispatcher_backend default) */
	int flex_sms;            /* SMs the flex dispatcher's kernels take
				  * (Megatron's moe_flex_dispatcher_num_sms);
				  * 0: the backend's default */
	double router_ops;       /* kernels the MoE router's forward
				  * launches (moe_router_ops), a whole
				  * count MOE_ROUTER_OPS..1000; 0: the
				  * MOE_ROUTER_OPS the dispatchers count */
	int cuda_connections;    /* CUDA_DEVICE_MAX_CONNECTIONS, 1..32: the
				  * hardware queues the streams share (1
				  * serialises them: ep_overlap hides less) */
	int moe_unbalanced;      /* 1: nothing balances the router (no
				  * auxiliary loss, no bias updates: the RL
				  * frameworks' frozen router), so the
				  * hottest EP rank receives model_ep_skew
				  * times the mean dispatches; 0: balanced
				  * (aux loss, bias, forced balancing) */
	int moe_fake_gate;       /* 1: NeMo AutoModel's FakeBalancedGate
				  * (moe_gate fake_balanced): token i goes
				  * to the top_k consecutive experts from
				  * i top_k mod experts, so the flex
				  * dispatch reaches the ranks (nodes) that
				  * window spans (train_layer.c
				  * gate_reach) and every expert gets the
				  * same count (skew 1); 0: a learned
				  * router */
	int router_fp64;         /* 1: the MoE router's gating GEMM in
				  * float64 (Megatron-Core's moe_router_dtype
				  * "fp64"): torch.mm at the device's fp64
				  * rate, forward and both gradients */
	int graph_attn;          /* Transformer Engine CUDA graphs of */
	int graph_router;        /* the scopes attn, moe_router and */
	int graph_prep;          /* moe_preprocess (train_layer.c) */
	int graph_mamba;         /* and a hybrid stack's Mamba layers (the
				  * scope mamba) */
	int graph_full;          /* Megatron-Core's full_iteration graph:
				  * the whole forward-backward replayed,
				  * no host launch work (train_layer.c) */
	int causal_flops;        /* model FLOPs count causal attention at
				  * half (0: the full s^2 of Megatron's and
				  * PaLM's formulas) */
	int embed_flops;         /* model FLOPs count the untied input
				  * embedding's V x h weights at 2 FLOPs a
				  * token forward, as 6N over every
				  * parameter does (nanoGPT's estimate_mfu;
				  * 0: the lookup is no matmul) */
	int no_router_flops;     /* model FLOPs leave out the MoE router's
				  * h x E gate (Megatron-LM's and Megatron-
				  * Bridge's counts have no router term) */
	int unfused_loss;        /* the loss as Megatron-Core's unfused
				  * vocab-parallel cross-entropy
				  * (cross_entropy_loss_fusion off;
				  * train_layer.c train_ends_costs) */
	int mcore_loss;          /* the loss is Megatron-Core's: without
				  * unfused_loss its native fused one
				  * (fused_cross_entropy.py, four
				  * compiled graphs; train_ends_costs) */
	int eager_loss;          /* the loss op by op outside the compiled
				  * layers (torch.compile of each block
				  * only; train_layer.c train_ends_costs) */
	int emb_matmul;          /* the token embedding as a one-hot matmul
				  * (Praxis' lookup_style 'matmul'; train_
				  * layer.c train_ends_costs) */
	int metric_losses;       /* no-grad cross-entropies over the logits
				  * after each micro-batch's backward
				  * (Composer's train metrics; train_
				  * layer.c train_ends_costs), 0 to 8 */
	int pp_call_mb;          /* micro-batches a pipeline schedule call
				  * runs (pp_microbatches: torch's
				  * n_microbatches, NeMo AutoModel's
				  * local_batch_size / pp_microbatch_size):
				  * the step's per_step run in per_step /
				  * pp_call_mb calls, each with its fill and
				  * drain (train.c step_sum); 0: one call */
	int lora_merged;         /* LoRA's adapters added into the weight
				  * each step, W + A B^T (Praxis'
				  * LoraTheta; train_layer.c
				  * lora_merge_costs) */
	double pad_share;        /* the share of each micro-batch's tokens
				  * that are padding of one pad id, routed
				  * by a MoE router as one token (train_
				  * layer.c, the eager expert loop); 0:
				  * none */
	int pad_mask;            /* micro-batches padded to their longest
				  * sample, the mask handed to transformers'
				  * FlashAttention-2 path: q, k, v gathered
				  * into the varlen layout and the output
				  * scattered back (train_layer.c
				  * layer_extras) */
	int cp_allgather;        /* the CP ring is PyTorch's
				  * context_parallel with its allgather
				  * rotater, cp_alltoall with its alltoall
				  * one; neither: Transformer Engine's p2p
				  * ring (the cp_rotate option; train_layer.c
				  * layer_comm) */
	int cp_alltoall;
	int split_proj;          /* which of the layer's projections are
				  * linears of their own, each its own
				  * GEMMs: GP_SPLIT_QKV (q, k, v),
				  * GP_SPLIT_MLP (the gated MLP's gate and
				  * up), or both (the split_proj option or
				  * the model's; train_layer.c gemm_costs) */
	int async_tp;            /* Megatron-LM's asynchronous TP all-
				  * reduce: a column-parallel linear's
				  * input-gradient collective under its
				  * weight-gradient GEMM (the
				  * async_tp_allreduce option;
				  * train_layer.c layer_comm) */
	int tp_input_per_linear; /* PyTorch's ColwiseParallel(input_layouts=
				  * Shard(1)) on each of the separate
				  * projections (q, k, v; gate, up) rather
				  * than one PrepareModuleInput a block:
				  * each gathers its own input and
				  * reduce-scatters its own input gradient
				  * (the tp_input_per_linear option;
				  * train_layer.c layer_comm) */
	int unfused_permute;     /* the alltoall dispatcher's token
				  * permutation as Megatron-Core's unfused
				  * PyTorch ops (moe_permute_fusion off;
				  * train_layer.c moe_permute_costs) */
	int legacy_permute;      /* Transformer Engine's fused permute
				  * before its PR #1927, which loops over
				  * every expert per token (train_layer.c
				  * te_loop_surplus) */
	int mxfp8_grouped;       /* Transformer Engine's MXFP8 grouped
				  * linear: GP_MXFP8_GROUPED_* (0 its
				  * fused buffers and swizzle; train_layer.c
				  * mxfp8_grouped_legacy) */
	int unfused_act;         /* the MLP's gated activation as
				  * Megatron-Core's PyTorch ops
				  * (bias_activation_fusion off;
				  * train_layer.c act_unfused_costs) */
	int zero_gather_copies;  /* ZeRO-1's parameter all-gather copies
				  * each parameter's shard of every DP
				  * rank back from Python, one launch a
				  * pair: nanotron's _all_gather_params
				  * (train.c gather_copy_host) */
	int fa_layout;           /* the attention runs in Transformer
				  * Engine's FlashAttention backend (fa2,
				  * fa3 on the megatron stack), which
				  * copies q, k, v and the output between
				  * Megatron-Core's sbhd and the kernels'
				  * bshd (train_layer.c fa_layout_costs) */
	int unfused_rope;        /* RoPE as Megatron-Core's PyTorch ops
				  * (apply_rope_fusion off; train_layer.c
				  * rope_thd_costs), or without
				  * te_modules Megatron-DeepSpeed's
				  * (mds_rope_costs) */
	int rope_seq_loop;       /* with unfused_rope: the packed path's
				  * loop over the sequences (Megatron-LM
				  * before 6fe43ce281; rope_thd_costs) */
	int fused_mlp;           /* the routed experts as Transformer
				  * Engine's fused grouped MLP
				  * (fused_grouped_mlp: Megatron-Core's
				  * use_transformer_engine_op_fuser with
				  * NVTE_CUTEDSL_FUSED_GROUPED_MLP;
				  * train_layer.c gemm_costs) */
	int fp8_attn;            /* the fused attention in FP8 (fp8_attention:
				  * Transformer Engine's fp8_dpa, cuDNN's FP8
				  * SDPA; train_layer.c attn_layers_time) */
	int fp8_attn_sm90;       /* with fp8_attn: the GPU is a Hopper one,
				  * whose cuDNN FP8 kernels run at their own
				  * measured times (train_price.c
				  * attn_fp8_sm90) */
	int tp_overlap_fp8_rs;   /* under an fp8 recipe with Userbuffers
				  * (tp_overlap) the forward's reduce-
				  * scatters carry the row-parallel GEMMs'
				  * fp8 output (Transformer Engine's
				  * fp8_buf on proj_fprop and fc2_fprop;
				  * train_layer.c layer_comm) */
	int tp_overlap_aggregate; /* Userbuffers' ring-exchange GEMMs
				  * take two ranks' chunks at a time
				  * (Transformer Engine's `aggregate`;
				  * train_layer.c ub_chunks) */
	int mlp_down_bf16;       /* under an fp8 recipe the dense MLP's down
				  * projection (fc2, row-parallel) stays in
				  * bf16 (mlp_down_bf16: HabanaAI
				  * Megatron-LM's --fp8-coverage
				  * mlp_row_parallel=False; train_layer.c
				  * gemm_costs) */
	double router_bytes;     /* bytes of the MoE router's dtype
				  * (moe_router_dtype): the probabilities'
				  * under unfused_act; 0: the activations' */
	int attn_scale_q;        /* eager attention scales q, not the
				  * scores (OPT: q_proj(x) * scaling;
				  * train_price.c train_attn_time) */
	int addmm_bias;          /* eager biased linears as PyTorch's addmm
				  * before its cuBLASLt bias epilogue:
				  * the bias copied into the output
				  * (train_layer.c gemm_costs) */
	int attn_where;          /* eager attention masks the scores with
				  * torch.where before the additive mask
				  * (transformers' GPT-2; train_price.c) */
	int attn_head_copies;    /* eager attention's q, k and v copied
				  * to the heads' layout: 0 none counted,
				  * 1 by torch.matmul above one sequence a
				  * micro-batch (transformers' GPT-2), 2 by
				  * the model's .contiguous() (OPT's
				  * _shape); gradients back either way
				  * (train_price.c) */
	int ckpt_outside_fsdp;   /* the activation checkpoint wraps each
				  * FSDP unit from outside: a third gather
				  * a micro-batch (train_stage.c
				  * zero_block) */
	int ckpt_early_stop;     /* full recompute is PyTorch's
				  * non-reentrant checkpoint, which stops
				  * once the saved tensors are back
				  * (train_layer.c layer_recompute) */
	int ckpt_offload_streams; /* checkpoint_offload's copies on a
				  * side stream under each layer's compute
				  * (train.c ckpt_offload_time) */
	double attn_seq;         /* the keys a token's own sequence holds,
				  * token-weighted, when a micro-batch packs
				  * sequences of unequal lengths (each
				  * attends only within itself: varlen
				  * attention over cu_seqlens): sum L_i^2 /
				  * the micro-batch's tokens; 0 = seq */
	int forward_only;        /* 1: the forward pass alone over the
				  * global batch (Megatron's
				  * forward_backward_func(forward_only=True):
				  * the log-probabilities of RL's policy,
				  * reference and reward models): no
				  * backward, recompute, gradient reduction
				  * or optimizer step; model FLOPs 1x */
	/* The software the step runs on (train.c prices each): */
	int eager;               /* 1: the layers are eager PyTorch modules
				  * as Hugging Face transformers writes them
				  * (Llama family): RMSNorm, rotary embedding
				  * and SwiGLU as one kernel per tensor op,
				  * separate q/k/v and gate/up linears, the
				  * loss upcast to fp32; 0: one fused kernel
				  * per operator (Megatron / Transformer
				  * Engine, torch.compile) */
	int liger;               /* with eager: Liger-Kernel's Triton RMSNorm,
				  * RoPE and SwiGLU in the Hugging Face
				  * modules, the rest eager (train_layer.c
				  * liger_elem) */
	int fused_norm;          /* with eager: every RMSNorm one Triton
				  * kernel each way, the rest eager
				  * (torchtitan's norm_type fused_rmsnorm;
				  * train_layer.c fused_rms_norm) */
	int fp8_current;         /* 1: with compute fp8, each cast to fp8
				  * scales by the tensor's own amax
				  * (Transformer Engine's
				  * Float8CurrentScaling, Megatron's fp8
				  * recipe tensorwise, torchao's tensorwise
				  * dynamic): an amax read of the 16-bit
				  * tensor before the cast reads it again,
				  * and a norm writes its 16-bit output for
				  * the cast; 0: delayed scaling (the
				  * scale from past amaxes, one read, the
				  * cast fused into the norm) or per-block
				  * scales computed in the cast kernel
				  * (DeepSeek-V3's 1x128 / 128x128, MXFP8):
				  * one read */
	int fp8_block;           /* 1: with compute fp8, per-block scales
				  * (fp8_scaling block): Transformer
				  * Engine casts a grouped linear's inputs
				  * one kernel per expert, where delayed
				  * scaling casts them all in one */
	int moe_fp8_copy;        /* 1: with compute fp8, Megatron-Core's
				  * grouped MLP copies the experts' rows
				  * to fp8-aligned counts and back
				  * (Transformer Engine's Fp8Padding and
				  * Fp8Unpadding; train_layer.c
				  * moe_fp8_pad_costs); 0: the counts
				  * arrive aligned */
	int te_modules;          /* 1: the linears are Transformer Engine
				  * modules (the megatron stack), whose
				  * backward runs Python per module
				  * (train_layer.c TE_BWD_HOST); 0: torch
				  * modules, their backward in autograd's
				  * C++ engine */
	int grad_acc_fusion;     /* 1: the wgrad GEMMs accumulate into
				  * Megatron-Core's main grad in its dtype
				  * (the gradient_accumulation_fusion
				  * option; train_prep.c train_wgrad_acc);
				  * 0: into an fp32 .grad, or a 16-bit
				  * .grad a hook adds (WGRAD_ACC_BYTES) */
	int master_copy;         /* 1: the optimizer copies its fp32
				  * master to the 16-bit weights in a pass
				  * of its own after Adam (the master_copy
				  * option; train_prep.c opt_bytes_of) */
	int ds_buckets;          /* 1: DeepSpeed's stage 1/2 optimizer
				  * (stage_1_and_2.py) owns the gradient
				  * reduction: at zero 2 each micro-batch's
				  * gradients are copied into its reduce
				  * bucket, divided there and (with
				  * zero_allreduce) flattened again before
				  * the collective (train_stage.c
				  * ds_bucket_time); 0: the collective
				  * reads the gradients where they are */
	int eager_optim;         /* 1: torch.optim's foreach AdamW and
				  * clip_grad_norm_ (ten passes over the fp32
				  * states); 0: a fused multi-tensor Adam
				  * (apex, Megatron, DeepSpeed) */
	int optim_loop;          /* 1: the Adam step as transformers'
				  * AdamW (v4.12) or torch.optim.AdamW's
				  * for-loop ran it, seven kernels a tensor
				  * over the rank's fp32 partition (72 B an
				  * element against the fused 28: train_
				  * prep.c opt_bytes_of); the deepspeed
				  * stack only, whose flat fp32 tensors
				  * leave it one tensor a group */
	double host_op_time;     /* s the host spends launching one op from
				  * Python (no CUDA graphs): a layer's
				  * forward takes at least its ops times
				  * this; 0 = no floor.  Default
				  * GP_EAGER_OP_TIME */
	int delayed_update;      /* 1: offload's one-step delayed parameter
				  * update (ZeRO-Offload's DPU): the CPU
				  * step and its copies run beside the next
				  * step's forward and backward */
	double act_offload_bw;   /* B/s each way of the GPU's copies to host
				  * memory that mem.act_offload_layers
				  * moves (catalog host_link: NVLink-C2C
				  * on Grace superchips, else PCIe); 0:
				  * the topology's host link */
	double cpu_adam_s;       /* offload: seconds per parameter of the
				  * host's optimizer step on the rank's
				  * own CPU thread (Megatron-Core's
				  * HybridDeviceOptimizer: a fused
				  * torch.optim.AdamW per parameter); 0:
				  * DeepSpeedCPUAdam, bound by the node's
				  * DRAM (train.c offload_step) */
	double cpu_step_s;       /* offload without cpu_adam_s: seconds per
				  * parameter of the host's side of the
				  * step on the rank's own threads (a Ray
				  * worker's OMP_NUM_THREADS), the least it
				  * takes whatever the node's DRAM allows;
				  * 0: the node's cores (DRAM-bound) */
	/* Memory: */
	double capacity;         /* bytes per GPU */
	gp_mem_reserve reserve;
	/* Money and time: */
	double tokens;           /* tokens to train on; 0 = no time/cost */
	double price;            /* per GPU-hour; 0 = free (cost 0) */
	int skip_unfit;          /* 1: a layout that does not fit memory
				  * returns with its memory and placement
				  * only (fits 0, no time): a sweep's
				  * pruning */
} train_cfg;

/* The documented defaults: bf16 compute, mixed-16 AdamW, every overlap
 * off, fused kernels and optimizer, host_op_time GP_EAGER_OP_TIME,
 * reserve from mem_reserve_default. */
void train_defaults(train_cfg *c);

/* One operator of a layer, one micro-batch on one GPU. */
typedef struct train_op {
	const char *name;        /* static */
	double fwd, bwd;         /* s; bwd: dgrad + wgrad for a GEMM */
	char kind;               /* train_result: the layer kind it runs in
				  * (model_op_in's letter: M, *, -, E) */
	double share;            /* train_result: that kind's layers over
				  * all layers, which fwd and bwd are
				  * weighted by (1 for a plain model) */
} train_op;

#define TRAIN_MAX_OPS 24
/* A train_result's rows: every kind of a hybrid stack's layer (M, *, -,
 * E), each at most a layer's TRAIN_MAX_OPS. */
#define TRAIN_MAX_RESULT_OPS (4 * TRAIN_MAX_OPS)

/* Seconds of one pass of one layer (or of the first/last stage's extra
 * operators) for one micro-batch. */
typedef struct train_pass {
	double t;        /* all operators */
	double gemm;     /* of which GEMMs: the window TP overlap hides in */
	double attn;     /* of which the attention core */
} train_pass;

typedef struct train_lcost {
	train_pass fwd, bwd;
	int nops;
	train_op ops[TRAIN_MAX_OPS];
	double rec_full, rec_sel;   /* recomputed forward */
	double tp_fwd, tp_bwd;      /* TP collectives per pass */
	double tp_bwd_ub;           /* the backward's under Userbuffers
				     * (tp_overlap): every collective it
				     * runs, SP's re-gathers too */
	double tp_fwd_ub;           /* the forward's under Userbuffers:
				     * tp_fwd, its reduce-scatters in fp8
				     * with tp_overlap_fp8_rs */
	double ub_fwd, ub_bwd;      /* what Userbuffers' split GEMMs add
				     * per pass under tp_overlap
				     * (train_layer.c ub_chunks), beyond
				     * the one GEMM fwd and bwd price */
	/* The TP collectives left on the path by PyTorch's micro-pipelined
	 * async TP (train_layer.c symm_tp: tp_overlap without Transformer
	 * Engine's modules), per pass: exposed (tps_f, of which the
	 * all-gathers tps_fag; tps_b) and hidden (tps_hf, tps_hfag,
	 * tps_hb); tps_on when priced (a dense layer under SP). */
	double tps_f, tps_fag, tps_b, tps_hf, tps_hfag, tps_hb;
	int tps_on;
	double cp_fwd, cp_bwd;      /* CP exchange left exposed per pass */
	double cp_hid;              /* CP exchange hidden, fwd + bwd */
	double cp_slow;             /* the compute's slowdown under it, a
				     * share of cp_hid (train_layer.c
				     * cp_ring_slowdown) */
	double ep_fwd, ep_bwd;      /* EP all-to-all per pass */
	double params, eparams;     /* weights of the layer on this GPU;
				     * of which routed experts */
	double linw;                /* of them, its linears' (attention,
				     * MLP, experts): what fp8 casts */
	/* The ends of the model, one micro-batch (train_layer.c train_ends_costs): the
	 * first stage's embedding, the last stage's head forward and
	 * backward, and the TP collectives of each. */
	double emb, head_f, head_b, emb_tp, head_tp;
	/* What one multi-token prediction module adds to the last stage
	 * beside its transformer layer (train_ends_costs): its two input
	 * norms, eh_proj, and the shared head and loss over its own
	 * logits, forward and backward. */
	double mtp_f, mtp_b;
	/* A forward that waits for the GPU on the host (fwd_sync: the
	 * Hugging Face MoE loop's torch.nonzero, train_layer.c
	 * layer_extras): the GPU seconds still queued after the host has
	 * launched the layer's last kernel following its last wait
	 * (fwd_tail), the window under which the next layer's gather,
	 * issued by the host at that layer's pre-forward, can run.
	 * Without a wait the host runs ahead and the window is fwd.t. */
	int fwd_sync;
	double fwd_tail;
	/* Megatron-Core's unfused RoPE on packed sequences (unfused_rope,
	 * train_layer.c rope_thd_costs): the forward's GPU seconds of its
	 * kernels, which run in the host's stretch after its waits. */
	double rope_gpu;
} train_lcost;


typedef struct train_result {
	double step;             /* s per step */
	double part[TRAIN_NPARTS];   /* s each kind adds to the step */
	double hidden[TRAIN_NPARTS]; /* s of communication under compute */
	double microbatches;     /* per pipeline per step */
	double bubble_frac;      /* bubble / step */
	int stage;               /* slowest pipeline stage */
	int stage_layers;        /* its transformer layers */
	double stage_time;       /* s of one micro-batch on that stage
				  * (forward + backward + exposed comm) */
	double tokens_per_step;
	double tokens_per_s;     /* whole job */
	double tokens_per_s_gpu;
	double model_flops;      /* per step, whole job: forward + backward,
				  * no recompute */
	double hw_flops;         /* per step, with the recomputed forward */
	double mfu, hfu;         /* of the dense peak of `compute` */
	double model_tflops_gpu; /* model FLOP/s per GPU / 1e12 */
	double hw_tflops_gpu;
	double peak;             /* FLOP/s per GPU the fractions use */
	double vision_time;      /* s per step the encoder tower (ViT,
				  * patch embedding, projector) runs on the
				  * first stage, forward + backward +
				  * recompute; 0 without images */
	double vision_patches;   /* patches one micro-batch sends through
				  * the tower on one GPU */
	double train_time;       /* s to train cfg.tokens (0: none) */
	double cost;             /* price units for them (0: free or
				  * no tokens) */
	gp_mem_result mem;       /* most loaded GPU */
	int fits;
	unsigned warn;           /* TRAIN_WARN_* */
	gp_group groups[GP_GRP_COUNT]; /* placement used */
	int bounded;             /* train_step_gated: the gate refused the
				  * layout on its lower bound (only the
				  * placement and warnings are filled) */
	/* The operators of one layer (an MoE layer when the model has
	 * any, else a dense one) for one micro-batch on one GPU, and the
	 * TP collectives of its forward and backward passes.  A hybrid
	 * stack (model pattern) has no one layer: every kind's operators
	 * (M, *, -, E in that order, a kind without layers left out), each
	 * weighted by its kind's share of the layers, so that they add up
	 * to the stack's mean layer. */
	int nops;
	train_op ops[TRAIN_MAX_RESULT_OPS];
} train_result;

/* Everything a layer's costs read (train_layer.c train_layer_costs, train_ends_costs)
 * besides the model, its parameter counts, the device and the topology,
 * which the memo holds itself: the pricing functions take this struct
 * and nothing else of the config, so it is the memo's key whole by
 * construction.  Filled by train.c (zeroed first: compared as bytes). */
typedef struct train_lkey {
	double seq;              /* tokens per sequence */
	double attn_seq;         /* train_cfg's (0 = seq) */
	double micro_batch;      /* sequences per micro-batch */
	double T, Tn;            /* tokens per micro-batch on one GPU; of
				  * them, what norms and residuals see */
	double A;                /* bytes per activation element */
	double wb;               /* bytes per weight a linear GEMM reads */
	double wacc;             /* bytes a weight gradient's accumulation
				  * reads and writes per weight element
				  * (train_prep.c train_wgrad_acc) */
	double quant;            /* bits of a quantised frozen base, else 0 */
	double capacity_factor;  /* MoE capacity factor (0 = 1) */
	double skew;             /* the hottest EP rank's dispatches over
				  * the mean (1: balanced) */
	double host_op_time;     /* s per host launch (cfg host_op_time) */
	int tp, cp, ep, sp;      /* the layer's split */
	int etp;                 /* expert tensor parallel (layout.h) */
	int ep_allgather;        /* train_cfg's */
	int ep_flex;             /* train_cfg's */
	int ep_einsum;           /* the memory cfg's moe_einsum */
	int ep_hybridep;         /* train_cfg's */
	int flex_sms;            /* train_cfg's (0: the backend's default) */
	double router_ops;       /* train_cfg's (0: MOE_ROUTER_OPS) */
	int graph_attn, graph_router, graph_prep, graph_full; /* train_cfg's */
	int graph_mamba;         /* train_cfg's */
	int ep_overlap;          /* train_cfg's */
	int fp8_current;         /* train_cfg's, with lin fp8 */
	int fp8_block;           /* train_cfg's, with lin fp8 */
	int moe_fp8_copy;        /* train_cfg's, with lin fp8 */
	int flash, dropout, eager, forward_only;
	int liger;               /* train_cfg's, eager only */
	int fused_norm;          /* train_cfg's, eager only */
	int ds_hooks;            /* DeepSpeed's stage 3 gathers through
				  * Python hooks on every module of the
				  * eager modules (train_layer.c
				  * DS_Z3_PARAM_HOOK_OPS): zero 3 without
				  * fsdp, eager kernels, gathering, not
				  * zero3_per_param */
	int fsdp1_views;         /* PyTorch FSDP1 (FullyShardedDataParallel:
				  * fsdp with fsdp_version 1) gathering its
				  * units: each unit's forward points its
				  * original parameters at the gathered flat
				  * parameter on the host (train_layer.c
				  * FSDP1_VIEW_S) */
	double ds_bucket;        /* with ds_hooks, a trained base: stage
				  * 3's reduce_bucket_size in elements
				  * (train_layer.c ds_flush_ops), else 0 */
	int te_modules;          /* train_cfg's */
	int unfused_loss;        /* train_cfg's */
	int mcore_loss;          /* train_cfg's */
	int eager_loss;          /* train_cfg's, fused kernels only */
	int emb_matmul;          /* train_cfg's */
	int metric_losses;       /* train_cfg's, 0 forward-only */
	int fused_linear_ce;     /* the memory config's: Liger's fused
				  * linear cross-entropy (train_layer.c
				  * train_ends_costs) */
	int replicated_logits;   /* the memory config's: the TP head's
				  * logits gathered to every rank and a
				  * plain 16-bit cross-entropy over them
				  * (train_ends_costs) */
	int kv_repeat;           /* the memory config's (gp_train_cfg) */
	int sac_attn_recompute;  /* the memory config's (gp_train_cfg),
				  * under recompute op only */
	int pad_mask;            /* train_cfg's, eager flash only */
	double pad_share;        /* train_cfg's, eager only */
	int async_tp;            /* train_cfg's */
	int tp_input_per_linear; /* train_cfg's */
	int cp_rotate;           /* train_cfg's, with cp > 1 */
	int split_proj;          /* train_cfg's */
	int attn_clamp;          /* the memory cfg's, eager unfused only */
	int softmax16;           /* eager unfused only: the softmax runs in
				  * the 16-bit type (no fp32 upcast) */
	int softmax32;           /* kernels fused, flash off, 16-bit: the
				  * softmax runs in fp32 and its fp32 output
				  * is kept for the backward (the memory
				  * cfg's eager_softmax; Praxis under XLA) */
	int attn_scale_q;        /* train_cfg's, eager unfused only */
	int attn_where;          /* train_cfg's, eager unfused only */
	int attn_head_copies;    /* train_cfg's, eager unfused only */
	int addmm_bias;          /* train_cfg's, eager only */
	int unfused_permute;     /* train_cfg's */
	int legacy_permute;      /* train_cfg's, alltoall dispatcher */
	int mxfp8_grouped;       /* train_cfg's, with fp8_block */
	int unfused_act;         /* train_cfg's */
	int fa_layout;           /* train_cfg's, fused stacks with flash */
	int unfused_rope;        /* train_cfg's, fused stacks only */
	int rope_seq_loop;       /* train_cfg's, with unfused_rope and
				  * te_modules */
	int fused_mlp;           /* train_cfg's, fused stacks with MXFP8
				  * compute only */
	int fp8_attn;            /* train_cfg's, fused stacks with FP8
				  * compute only */
	int fp8_attn_sm90;       /* train_cfg's, with fp8_attn */
	int mlp_down_bf16;       /* train_cfg's, with FP8 compute */
	int tp_overlap_fp8_rs;   /* train_cfg's, with FP8 compute, TE's
				  * modules, tp_overlap and SP */
	int ub_split;            /* Userbuffers could split the GEMMs:
				  * SP, TP above 1 and TE's modules (the
				  * split's cost is kept apart, ub_fwd and
				  * ub_bwd, since the phase's layers serve
				  * tp_overlap on and off) */
	int ub_aggregate;        /* train_cfg's tp_overlap_aggregate,
				  * with ub_split */
	double router_bytes;     /* train_cfg's */
	int router_fp64;         /* train_cfg's */
	int fake_gate;           /* train_cfg's moe_fake_gate, with experts
				  * and ep > 1 */
	int probs_act;           /* the memory cfg's probs_in_act: the MoE
				  * router's weights multiply in the
				  * experts' activation */
	int frozen;              /* the base does not train (LoRA) */
	int lora_rank;
	unsigned lora_targets;
	int lora_dropout;        /* the adapters' input dropout is on */
	int lora_merged;         /* train_cfg's, with a LoRA base */
	gp_recompute recompute;
	unsigned rec_mods;       /* recompute_modules (GP_RECMOD_*) */
	int ckpt_early_stop;     /* train_cfg's, under full recompute */
	gp_dtype lin, half;      /* linears' precision; attention, logits */
	gp_group g_tp, g_cp, g_ep;   /* the placed TP, CP and EP groups */
	gp_group g_etp;              /* and the experts' TP group */
} train_lkey;

/* A collective's price depends on these alone (comm_group_cost with the
 * memo's topology; the node count only bounds the group): the
 * collective memo's key, zeroed first. */
typedef struct train_ckey {
	double bytes;
	int op;                  /* gp_coll */
	int nodes;
	gp_group g;
} train_ckey;

#include "train_phase.h"

/* A caller-owned memo for sweeps that evaluate many layouts of one model
 * on one device and topology.  A layer's costs depend on its tensor /
 * context / expert split and placement, the micro-batch, sequence,
 * recompute, precision and LoRA, not on pp, dp, ZeRO or the global
 * batch, so a sweep prices each of those a few hundred times instead of
 * once per layout; so do the saved activations of the memory model.  A
 * collective's time depends on its op, bytes and placed group only.  The
 * model, device and topology are checked once, when the memo takes
 * them.  It also keeps the last layout's phase (train.c): a layout that
 * differs from it only in ZeRO stage and TP and DP overlap reuses its
 * layout, stages, memory and costs.  About 300 KB: allocate it static or
 * on the heap.  Zero it (memset) before the first use; it notices another
 * model, device or topology and starts over.  The fields are train.c's. */
#define TRAIN_CACHE_N 64
#define TRAIN_COLL_N 2048
#define TRAIN_PLACE_N 16
typedef struct train_cache {
	gp_model m;
	roof_device d;
	gp_topo t;               /* nodes 0: the layer costs' topology */
	int checked_nodes;       /* t.nodes comm_topo_check passed for */
	int topo_kept;           /* phase.x.e.t holds t (its nodes aside):
				  * train_prep.c place_job */
	int n, next, valid, last;   /* last: the entry last hit or kept */
	long hits, misses;
	gp_params p;             /* model_params(m) */
	double fpt_ctx, fpt;     /* model_fwd_flops_per_token(m, fpt_ctx) */
	gp_mem_memo mem;         /* the memory model's activations */
	struct train_cache_entry {
		train_lkey key;
		unsigned long long hash;
		train_lcost ld, lm;
		train_lcost lx[2];  /* a hybrid stack's M and * layers */
	} e[TRAIN_CACHE_N];
	train_result scratch;    /* train_bound's result */
	/* Placements of the last layouts: layout_place_of's key -> groups */
	int nplace, next_place;
	struct train_cache_place {
		gp_place_key key;
		gp_group g[GP_GRP_COUNT];
	} place[TRAIN_PLACE_N];
	/* The last layout's phase (train.c): what the layouts that differ
	 * from it only in ZeRO stage, TP overlap and DP overlap share. */
	struct train_phase phase;
	/* phase_post's terms by ZeRO stage, across phases (train.c) */
	struct train_post_memo post[4];
	/* Collectives priced on placed groups: op, bytes, group, nodes. */
	int ncoll;
	struct train_cache_coll {
		train_ckey key;
		double time;
	} coll[TRAIN_COLL_N];
} train_cache;

/* One training step of model m on device d in topology t (gpus_per_node
 * and nodes, links; t->nodes is raised to what the layout needs when
 * smaller).  GP_OK with *out filled, or GP_EINVAL: invalid model or
 * layout, fp8 on a device without fp8 tensor cores, a global batch that
 * is not a multiple of dp x micro_batch, a layout needing more GPUs than
 * 2^24, ... */
int train_step(const gp_model *m, const roof_device *d, const gp_topo *t,
	       const train_cfg *c, train_result *out, gp_error *err);

/* train_step with the layer costs memoised in *cache (may be NULL: no
 * memo).  The same results as train_step. */
int train_step_cached(const gp_model *m, const roof_device *d,
		      const gp_topo *t, const train_cfg *c, train_cache *cache,
		      train_result *out, gp_error *err);

/* A lower bound on train_step's step time for c, without its memory,
 * schedule or reductions: per micro-batch count times the time of the
 * pipeline stage with the most layers (compute, recompute and the
 * collectives inside it).  cache is required (the bound reuses its
 * layer costs).  GP_OK with *step_lb <= train_step(...)->step, or
 * GP_EINVAL where train_step would fail. */
int train_bound(const gp_model *m, const roof_device *d, const gp_topo *t,
		const train_cfg *c, train_cache *cache, double *step_lb,
		gp_error *err);

/* train_step_cached with a gate: once the layout is prepared and its layer
 * costs are known, gate(ud, step_lb) sees train_bound's lower bound; 0
 * stops there (out->bounded = 1, nothing priced), non-zero prices the
 * step as train_step_cached does, sharing the work done.  gate NULL:
 * train_step_cached.  What a sweep prunes with, each layout prepared
 * once. */
int train_step_gated(const gp_model *m, const roof_device *d,
		     const gp_topo *t, const train_cfg *c, train_cache *cache,
		     int (*gate)(void *ud, double step_lb), void *ud,
		     train_result *out, gp_error *err);

/* train_step_gated for the next layout of a caller that keeps one memo
 * for one model, device and topology (a sweep, a Lua job): the memo took
 * them at the caller's first layout and they are not compared again (the
 * caller vouches).  how, a mask:
 *  TRAIN_NEXT_REUSE  the layout differs from the last one this memo
 *                    priced only in its ZeRO stage and its TP and DP
 *                    overlaps (sweep.c knows which levels of its
 *                    enumeration moved): the memo's phase is used
 *                    without comparing the configs;
 *  TRAIN_NEXT_FRESH  something else moved: the phase is prepared afresh
 *                    without comparing either;
 *  TRAIN_NEXT_SPLIT  with FRESH: of the layout only the micro-batch,
 *                    recompute policy, schedule, VPP and SP moved
 *                    besides those three (and of the rest of the config
 *                    only what sweep.c write_layout derives from the
 *                    schedule: ep_overlap, overlap_p2p, moe_fp8_copy) --
 *                    the split, GPUs, TP, PP, CP, ETP, EP and hybrid
 *                    sharding, is the last layout's: what reads only
 *                    the split, the weights, the groups and the config
 *                    (train_phase.h, the split's fields) is kept;
 *  neither           the configs are compared (train_step_cached's way);
 *  TRAIN_NEXT_BRIEF  what a sweep ranks by -- the step, tokens per
 *                    second, MFU, time, cost, fits and the memory's
 *                    total -- and no breakdown: part, hidden and groups
 *                    are not written, of out's memory only total and
 *                    fits, no operator list (nops 0), and bubble_frac,
 *                    tokens_per_s_gpu, hw_tflops_gpu and hfu are 0.
 * Otherwise the same results as train_step_gated; a caller that cannot
 * vouch for the model, device and topology calls train_step_gated. */
enum { TRAIN_NEXT_REUSE = 1, TRAIN_NEXT_FRESH = 2, TRAIN_NEXT_BRIEF = 4,
       TRAIN_NEXT_SPLIT = 8 };
int train_step_next(const gp_model *m, const roof_device *d,
		    const gp_topo *t, const train_cfg *c, train_cache *cache,
		    unsigned how, int (*gate)(void *ud, double step_lb),
		    void *ud, train_result *out, gp_error *err);

#endif
