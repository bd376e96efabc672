/*
 * serve.h - serving a mixture-of-experts model across many GPUs: expert
 * parallelism (EP), data-parallel attention, the dispatch / combine
 * all-to-all, two-batch overlap, prefill / decode disaggregation and
 * multi-token-prediction (MTP) speculative decoding.
 *
 * One *instance* of a pool is `tp` GPUs that run a forward pass together.
 * Its routed experts are split over them by experts (ep = tp, each GPU
 * holds (experts + redundant) / ep of them whole) or by tensor slices
 * (ep = 1, every GPU holds a 1/tp slice of every expert).  Attention, the
 * dense MLP layers, the shared experts and the embeddings are tensor
 * parallel over the whole instance, or with dp_attention whole on every
 * GPU, which then runs its own requests and holds only their KV cache
 * (SGLang "DP attention"; DeepSeek's "MLA/Shared Expert DP32").
 *
 * A step is priced on the most loaded GPU: the layer operators of
 * model_layer_ops on the roofline (roof_op_time) for the attention and
 * dense parts -- MLA as the kernels that run it (latent form in decode,
 * MHA form in prefill), the attention core at the device's fused-
 * attention fraction, the activation casts of 8-bit GEMMs -- grouped
 * expert GEMMs at the tokens the hottest GPU receives, TP collectives on
 * the placed TP group (comm_group_cost), and the dispatch and combine
 * all-to-all of every MoE layer on the placed EP group with DeepEP's
 * kernels (low-latency for decode, normal for prefill) or NCCL's
 * all-to-all, which the two-batch overlap hides stage by stage
 * (SGLang's decode and prefill strategies; serve_step.c).
 *
 * Units: bytes, seconds, FLOP, tokens, bytes/s.  Caller-owned structs, no
 * allocation; errors through gp_error (GP_OK / GP_EINVAL).
 */
#ifndef GP_SERVE_H
#define GP_SERVE_H

#include "comm.h"
#include "common.h"
#include "infer.h"
#include "model.h"
#include "roofline.h"

#define SERVE_MAX_OPS 32

/* redundant = SERVE_REDUNDANT_AUTO: the runtimes' default, none, or
 * where ep does not divide the experts the fewest slots that give every
 * GPU of the EP layout whole slots (serve_redundant). */
#define SERVE_REDUNDANT_AUTO (-1)

/* Who moves the tokens of an EP group. */
typedef enum serve_a2a {
	SERVE_A2A_DEEPEP = 0, /* DeepEP: low-latency kernels in decode,
	                         normal (high-throughput) kernels in prefill */
	SERVE_A2A_NCCL,       /* NCCL all-to-all (comm_group_cost) */
	SERVE_A2A_NONE        /* no token exchange: with TP attention every
	                         GPU of the EP group holds the step's tokens,
	                         computes its own experts' share and the MoE
	                         output is all-reduced over the group
	                         (SGLang's default --moe-a2a-backend none,
	                         serve_a2a.c sx_tp_colls) */
} serve_a2a;

/* Whose measurement of the spread an EPLB placement leaves (serve_cfg.eplb,
 * serve_step.c sx_imbalance). */
typedef enum serve_eplb_src {
	SERVE_EPLB_TRTLLM = 0, /* TensorRT-LLM tech blog 4, Table 1
	                          (SERVE_EPLB_SD): one measured spread */
	SERVE_EPLB_SGLANG      /* SGLang's placement from an
	                          --init-expert-location file, as the LMSYS
	                          large-scale EP blog simulated it against
	                          the EP width (serve_step.c
	                          sglang_eplb_excess) */
} serve_eplb_src;

/* Which phase a step or a memory figure is for. */
typedef enum serve_phase {
	SERVE_DECODE = 0, SERVE_PREFILL, SERVE_COLOCATED
} serve_phase;

/* One pool's instance. */
typedef struct serve_layout {
	int tp;            /* GPUs of an instance (>= 1) */
	int ep;            /* 1: experts sliced over tp; tp: split by experts;
	                      a divisor of tp (TP attention): ep groups of
	                      tp / ep GPUs, each group's E / ep experts
	                      sliced over its GPUs (the experts' TP) */
	int dp_attention;  /* 1: attention, dense, shared experts, embeddings
	                      whole on each GPU (attention TP = 1) */
	int tbo;           /* 1: two micro-batches overlap each MoE layer's
	                      all-to-all with the other's compute */
} serve_layout;

typedef struct serve_cfg {
	/* weight_bits, embed_bits, kv_bytes, compute, input, output, flash,
	 * runtime, capacity, kv_reserve_max, max_batch, price as in
	 * infer_cfg; its tp, pp, gpus, batch, topo, offload and ar_*
	 * fields are not read (the layouts below and topo say it), nor its
	 * concurrency but by a burst's TTFT (serve_plan.c burst: a client
	 * concurrency below the burst keeps one prompt's). */
	infer_cfg base;
	gp_topo topo;         /* one node (scale-up domain) and its NICs;
	                         nodes are added as the instances need */
	serve_layout decode;  /* the decode pool (the only one, colocated) */
	serve_layout prefill; /* the prefill pool (disagg) */
	int disagg;           /* 1: separate prefill and decode pools */
	int comm_stated;      /* 1: base.reserve.comm is the caller's NCCL
	                         buffer figure, placed on every GPU as given
	                         (0 included); 0: mem_reserve_default's for
	                         each instance's GPUs (serve.c fixed_reserve),
	                         whatever the base's tp and pp (not read) */
	int gpus;             /* GPUs in all (whole instances) */
	int prefill_gpus;     /* disagg: GPUs of the prefill pool; 0 = the
	                         split that balances the two */
	double batch;         /* decode sequences per GPU; 0 = the most that
	                         fit, within itl_max when set.  With TP
	                         attention a GPU's share of its instance's:
	                         one stream on a TP8 instance is 1/8 */
	int queue;            /* 1: batch is a client's concurrency's share
	                         (its requests in flight): past what the KV
	                         and max_batch hold the step runs that many
	                         and the rest wait in the scheduler's queue
	                         (infer_queue_batch, gp.infer's rule); 0: a
	                         batch over it is refused */
	double itl_max;       /* s; 0 = no bound on the inter-token latency
	                         (none either at output 1: no decode step) */
	double ttft_max;      /* s; 0 = no bound on the time to first
	                         token: the result's ttft (a prefill step,
	                         colocated; the prefill pool's step and the
	                         KV transfer, disaggregated), which prices no
	                         queueing.  A layout over it does not fit
	                         (why says its TTFT); it does not depend on
	                         the decode batch, so it picks the layout,
	                         not the batch */
	double prefill_tokens; /* prompt tokens per attention group (a GPU
	                          with dp_attention, else the instance) per
	                          prefill step */
	int mixed;            /* colocated: 1: a step that carries a prompt
	                         chunk is one forward pass of the chunk and
	                         the decodes (TensorRT-LLM's in-flight
	                         batching), priced as the decode step plus
	                         the chunk's marginal tokens
	                         (serve_mixed_time); 0: the chunk is a
	                         prefill step of its own (SGLang without
	                         --enable-mixed-chunk) */
	int redundant;        /* redundant expert slots over an EP group
	                         (EPLB replicas of hot experts), or
	                         SERVE_REDUNDANT_AUTO */
	double imbalance;     /* routed tokens of the hottest GPU / the mean,
	                         in [1, 64], or SERVE_IMBALANCE_AUTO: per
	                         step, the placement's spread and the step's
	                         chance (serve_step.c sx_imbalance) */
	int eplb;             /* 1: an EPLB placement (experts moved and
	                         replicated from the traffic's statistics:
	                         SERVE_EPLB_SD's spread, or SGLang's by
	                         eplb_src); 0: the runtimes'
	                         default, experts in order (SGLang's and
	                         vLLM's enable_eplb False, TensorRT-LLM
	                         without a load_balancer: model_ep_skew_at) */
	serve_eplb_src eplb_src; /* with eplb: whose spread prices it (the
	                         runtime's; trtllm unless runtime sglang) */
	int mtp;              /* draft tokens per decode step; 0 = off */
	int mtp_layers;       /* layers of the model's MTP module */
	double acceptance;    /* probability that a draft token is accepted */
	double accept_decay;  /* each draft after the first is accepted at
	                         this multiple of the draft before it's rate,
	                         in (0, 1]; 1 = i.i.d. (serve_accept_length) */
	double spec_host;     /* s of host work per decode step with MTP,
	                         serial with the GPU (the engine's scheduler
	                         does not overlap it while it speculates);
	                         0 = none */
	double spec_host_dp;  /* the same with DP attention, whose ranks
	                         also sync their batches each step */
	int spec_running;     /* requests an instance runs at once while
	                         it speculates (mtp > 0), where the runtime
	                         caps them: SGLang's max_running_requests,
	                         48 unless the user sets it; with DP
	                         attention each of the instance's tp ranks
	                         runs floor(spec_running / tp) of them (its
	                         scheduler divides it by dp_size).  0 = no
	                         such cap (base.max_batch's alone) */
	serve_a2a a2a;
	double dispatch_bytes; /* bytes per hidden element dispatched */
	double combine_bytes;  /* bytes per hidden element combined */
	double expert_bits;   /* bits per routed-expert weight, scales
	                         included; 0 = base.weight_bits (one format
	                         for every linear) */
	gp_dtype expert_compute; /* the routed experts' GEMM precision
	                         (read when expert_bits > 0) */
	double expert_wo_stream; /* > 0, with expert_bits > 0: the fraction
	                         of the streaming copy at which the
	                         runtime's weight-only kernel reads the
	                         routed experts of their own integer format
	                         multiplied in 16 bits (lua/gpuplan/infer.lua
	                         M.wo_stream_of, the rule base.wo_stream is
	                         set by); 0: the device's GEMM rate.  With
	                         expert_bits 0 the experts take
	                         base.wo_stream with the linears
	                         (serve_row.c sx_wo_stream) */
	/* Single-batch overlap in a decode step without two-batch overlap
	 * (SGLang's --enable-single-batch-overlap, single_batch_overlap.py):
	 * the low-latency combine runs on a second stream on sbo_sms SMs
	 * while the rest compute on the others, beside the shared experts
	 * (sbo_shared_dispatch 0) and, with sbo_down, the down GEMM that
	 * signals it expert by expert; sbo_shared_dispatch 1: the shared
	 * experts run while the dispatch is in flight instead. */
	int sbo;
	int sbo_down;
	int sbo_shared_dispatch;
	double sbo_sms;
	double sbo_block;     /* tokens of a local expert the down GEMM
	                         signals the combine at once (DeepEP PR 483:
	                         block_m, 64 on Hopper); 0: the whole expert
	                         (the Blackwell combine's per-expert signal) */
	double m_tile;        /* rows of the M tile the sub-16-bit weight
	                         GEMMs run (DeepGEMM's SM90 kernels: 64
	                         up to 64 tokens, 128 above); 0: the
	                         16-row swapped tiles (roofline.h) */
	double m_tile_grouped; /* the same for the routed experts' masked
	                         grouped GEMM of a low-latency decode
	                         (DeepGEMM's swapAB build: 32-row token
	                         blocks, roofline.h); 0: m_tile */
	double moe_fp8_bf16_x; /* > 0: with the experts unsharded by EP
	                         (ep 1), their fp8 grouped GEMMs at no
	                         more than this multiple of the 16-bit
	                         rate: vLLM's and SGLang's Triton fused
	                         MoE (infer.h infer_cfg.moe_fp8_bf16_x);
	                         0: the fp8 rate */
	double linear_fp8_bf16_x; /* > 0: the fp8 dense linears (attention,
	                         shared expert, dense layers' MLP) at no
	                         more than this multiple of the 16-bit
	                         rate: SGLang's Triton block-fp8 GEMM
	                         before DeepGEMM (infer.lua
	                         M.block_fp8_triton); 0: the fp8 rate */
	double moe_route_kernels; /* the small kernels the runtime's MoE
	                         launches a layer to turn the top-k into
	                         its experts' row lists, beyond the top-k
	                         itself: vLLM's triton_kernels path (its
	                         make_routing_data: the bitmatrix, its row
	                         sums and sorted indices, the ragged block
	                         schedule), each priced as a row op; 0:
	                         none (the fused MoE sorts inside) */
	double moe_m_tile;    /* > 0: the routed experts' grouped GEMM
	                         covers each expert's rows in blocks of
	                         this many, the runtime's MoE kernel's own
	                         floor (triton_kernels' matmul_ogs on AMD:
	                         block_m at least 32); 0: the rule of the
	                         other GEMMs (m_tile, m_tile_grouped) */
	int moe_act_fused;    /* 1: the gated activation is the up GEMM's
	                         epilogue (matmul_ogs' FusedActivation
	                         swiglu): no experts_act kernel */
	double moe_pad;       /* > 0: the routed experts' hidden and
	                         intermediate widths rounded up to a
	                         multiple of this many elements by the
	                         runtime's kernel layout (vLLM's MXFP4
	                         experts on ROCm: get_padding_alignment,
	                         128 on gfx942); their GEMMs run at the
	                         padded widths; 0: as the model states */
	int ar_norm_fused;    /* 1: the runtime's server turns on FlashInfer's
	                         fused all-reduce + RMSNorm for this model on
	                         this card where its own layout allows
	                         (SGLang's enable_flashinfer_allreduce_
	                         fusion, set for gpt-oss on Blackwell:
	                         infer.lua M.sglang_ar_norm_fusion).  Each
	                         pool is a server of its own and decides it
	                         from its layout (serve_ar_norm_on: TP
	                         attention over more than one GPU of one
	                         node, no experts' exchange); there each TP
	                         all-reduce a residual add and an RMSNorm
	                         follow runs as the fused kernel while the
	                         TP group's step holds at most
	                         SX_AR_FUSION_MAX_TOKENS tokens: the norm
	                         kernels go and the all-reduce is that
	                         kernel's time (serve_a2a.c sx_ar_fused) */
	double moe_upcast;    /* > 0: vector FLOP per expert weight the
	                         routed experts' kernel spends widening it
	                         to 16 bits, again in every M block of an
	                         expert (triton_kernels' matmul_ogs on a
	                         card without FP4 MFMA: the upcast runs in
	                         the dot's operand registers of each
	                         program), at the fp32 vector rate beside
	                         the MMAs (roof_op.dequant); 0: none */
} serve_cfg;

/* Per-GPU memory of one pool (the most loaded GPU). */
typedef struct serve_mem {
	double attention;     /* attention weights, all layers */
	double dense;         /* dense-MLP layers */
	double shared;        /* shared experts */
	double experts;       /* this GPU's routed experts (or slices) */
	double embed;         /* embedding + lm_head */
	double other;         /* routers and norms (16-bit) */
	double mtp;           /* the MTP module's layers (mtp > 0) */
	double weights;       /* sum of the above */
	double expert_slots;  /* routed experts per GPU (fraction: slices) */
	double kv_per_seq;    /* KV bytes this GPU holds per sequence of
	                         input + output in its attention group */
	double kv_admit;      /* per sequence on average (kv_reserve_max:
	                         kv_per_seq; paged: input + output / 2) */
	double a2a_buffer;    /* DeepEP buffers */
	double workspace;     /* activations of a step */
	double reserve;       /* the fixed reserve: CUDA context, library
	                         workspaces, NCCL buffers on more than one
	                         GPU (serve.c fixed_reserve) */
	double margin;        /* bytes the runtime holds back from the KV
	                         pool (mem_kv_margin: the base's margin of
	                         the capacity, or with kv_free_fraction the
	                         rest of what the model leaves free) */
	double kv_budget;     /* capacity - weights - buffers - workspace
	                         - reserve - margin */
	double used;          /* all of it at the batch */
	int max_batch;        /* sequences per GPU the KV budget holds */
	double batch_cap;     /* the most batch per GPU the engine's
	                         max_batch (base.max_batch) allows: the
	                         engine batches max_batch sequences over an
	                         attention group of a GPUs (TP attention:
	                         the instance; DP attention: one GPU), which
	                         holds B x a, so B <= max_batch / a (TRT-LLM's
	                         min-latency "--max_batch_size 1 --tp 8" is
	                         B = 1/8), and with mtp the runtime's
	                         spec_running over the instance -- 0 on a
	                         prefill pool */
} serve_mem;

/* One step on the most loaded GPU. */
typedef struct serve_step {
	int nops;
	infer_op_row ops[SERVE_MAX_OPS]; /* per micro-batch pass; count =
	                                    layers x passes */
	double batch;         /* sequences per GPU */
	double tokens;        /* tokens per GPU in the step */
	double compute;       /* s, the operator rows summed */
	double tp_comm;       /* s, TP collectives */
	double a2a;           /* s, dispatch + combine of all MoE layers */
	double a2a_exposed;   /* s, the part of a2a no compute hides */
	double sm_loss;       /* s, compute slowed by the SMs the prefill
	                         all-to-all kernels hold under overlap */
	double draft;         /* s, MTP draft passes (decode) */
	double host;          /* s, spec_host (decode with MTP) and vLLM V1's
	                         host work between steps (engine_host_*) */
	double time;          /* s, the step */
	double dispatch_bytes; /* per GPU per MoE layer (both micro-batches):
	                          tokens x top_k x hidden x dispatch_bytes */
	double combine_bytes;  /* the same at combine_bytes */
	double remote_bytes;   /* of the dispatch, bytes leaving the node
	                          (normal kernels: once per remote node) */
	double dispatch;       /* s per MoE layer (both micro-batches) */
	double combine;        /* s per MoE layer (both micro-batches) */
} serve_step;

typedef struct serve_pool {
	serve_layout lay;
	int gpus;             /* of this pool */
	int nodes;            /* nodes an instance spans */
	int ar_norm_fused;    /* 1: this pool's server runs the fused
	                         all-reduce + RMSNorm (serve_ar_norm_on) */
	serve_mem mem;
	serve_step step;      /* decode: at the batch; prefill: one chunk */
	double tokens_per_s_gpu; /* decode: output; prefill: input */
} serve_pool;

typedef struct serve_result {
	int fits;             /* 0: why says what does not fit */
	char why[200];
	int disagg;
	serve_pool decode;    /* colocated: the one pool */
	serve_pool prefill;   /* colocated: the same GPUs' prefill step */
	double accept;        /* tokens per sequence per decode step */
	double tpot;          /* s, decode step / accept */
	double itl;           /* s a user waits per token: tpot (disagg), or
	                         with the prefills of its GPU (colocated) */
	double ttft;          /* s, the prompt's prefill steps (+ the KV
	                         transfer) */
	double ttft_one;      /* s, colocated burst (base.requests, sent at
	                         once) or under load (ttft_loaded): one
	                         prompt's prefill steps, ttft then the burst's
	                         mean (infer_burst_ttft) or the loaded TTFT;
	                         0 otherwise */
	double ttft_steps;    /* the prefill steps of ttft (serve_plan.c
	                         prompt_steps: the prompt's new tokens over
	                         prefill_tokens, at least one); where
	                         ttft_loaded, the steps its prompt runs in
	                         under the load (infer_loaded_ttft) */
	int ttft_loaded;      /* 1: ttft is the steady state's under load
	                         (colocated, more than one sequence an
	                         instance, no burst: serve_plan.c
	                         coloc_loaded); ttft_one then one prompt's
	                         prefill steps, ttft_one_steps of them */
	double ttft_wait;     /* s, where ttft_loaded: the mean residual of
	                         the step in flight at the arrival */
	double ttft_step;     /* s, where ttft_loaded: each of ttft_steps */
	double ttft_one_steps; /* where ttft_loaded: one prompt's prefill
	                         steps (prompt_steps) */
	double ttft_full;     /* colocated under a steady load whose
	                         attention group's decode tokens a step
	                         fill prefill_tokens: those tokens (at
	                         least the budget), ttft then one prompt's,
	                         the loaded TTFT not priced
	                         (infer_loaded_ttft's full); 0 otherwise */
	double prefill_tokens; /* the prompt tokens of one of those steps an
	                         attention group (the cfg's, as priced) */
	double kv_transfer;   /* s, one request's KV to the decode pool */
	double prefill_share; /* s of a GPU per request for its prefill */
	double prefill_experts; /* of prefill_share, the routed experts'
	                         part, which runs on every rank's tokens
	                         together and does not stall */
	double prefill_stall; /* colocated: the instance's wall time for the
	                         rank-own part of its prompts (prefill_share
	                         - prefill_experts) over their own GPU time
	                         (DP attention: the ranks wait for each
	                         other's chunks); 1 otherwise */
	double eager_steps;   /* colocated: the share of decode steps that
	                         carry a prompt chunk on some rank of the
	                         instance, which run off the CUDA graph */
	double eager;         /* colocated: s those steps add to a decode
	                         step on average, their kernels launched one
	                         by one (runtime graphs; 0 otherwise) */
	double tokens_per_s;  /* output tokens/s, the system */
	double tokens_per_s_gpu;
	double input_tokens_per_s; /* prompt tokens/s the system takes in */
	double pool_ratio;    /* prefill GPUs per decode GPU that balance
	                         the pools (disagg) */
	double cost_per_mtok; /* price units per 1e6 output tokens */
	/* The same GPUs colocated (computed when disagg), for comparison: */
	int coloc_fits;
	double coloc_tokens_per_s_gpu, coloc_itl;
	int coloc_batch;
} serve_result;

/* serve_cfg.imbalance: modelled per step (serve_step.c). */
#define SERVE_IMBALANCE_AUTO 0.0

/* Fill c with the documented defaults (serve.c): infer_defaults for the
 * base, one 8-GPU NVLink-4 node without NICs, decode = prefill = tp 1,
 * ep 1, prefill_tokens 16384, redundant 0, imbalance 1, eplb 0, mtp off,
 * acceptance 0.85, DeepEP with fp8 dispatch (1 + 4/128 B) and bf16
 * combine (2 B), the routed experts in the base weight format
 * (expert_bits 0).  The caller then sets capacity, topo and layouts. */
void serve_defaults(serve_cfg *c);

/* Check the model (an MoE model unless every layout has ep = 1), device
 * and configuration: layouts (tp in 1..GP_COUNT_MAX, ep 1 or tp,
 * tp dividing the heads unless dp_attention, an instance filling whole
 * nodes, experts + redundant split evenly over ep), topology, counts and
 * amounts.  GP_OK or GP_EINVAL naming the field. */
int serve_check(const gp_model *m, const roof_device *d, const serve_cfg *c,
                gp_error *err);

/* Redundant slots of layout L: c->redundant, or with
 * SERVE_REDUNDANT_AUTO ceil(experts / ep) x ep - experts for ep = tp > 1
 * (0 where ep divides the experts, SGLang's, vLLM's and TensorRT-LLM's
 * default; 0 for ep 1). */
int serve_redundant(const gp_model *m, const serve_cfg *c,
                    const serve_layout *L);

/* 1 where the server of a pool of layout L runs SGLang's FlashInfer
 * all-reduce + RMSNorm fusion (c->ar_norm_fused: the runtime turns it on
 * for this model on this card), from that server's own arguments: each
 * pool of a disaggregated deployment is a server of its own,
 * "python -m sglang.launch_server ... --disaggregation-mode prefill" and
 * "--disaggregation-mode decode", each with its own "--nnodes",
 * "--tp-size" and "--enable-dp-attention" (sglang@08edc506 docs/
 * advanced_features/pd_disaggregation.md), and ServerArgs reads that
 * server's: "if not self.enable_dp_attention and self.nnodes == 1:
 * self.enable_flashinfer_allreduce_fusion = True" (python/sglang/srt/
 * server_args.py, the late-2025 copy; the mid-2025 one tests DP
 * attention alone).  So: a TP all-reduce to fuse (tp > 1, attention not
 * data-parallel), an instance within one node, and no experts' exchange
 * (the MoE tokens reduce-scattered and gathered around it, no all-reduce
 * the norm joins: serve_a2a.c sx_ar_fused; the newest copy says it as
 * "self.moe_a2a_backend == "none""). */
int serve_ar_norm_on(const serve_cfg *c, const serve_layout *L);

/* Check one layout against a valid model and c's topology and expert
 * slots (as serve_check does for c's own).  GP_OK or GP_EINVAL. */
int serve_check_layout(const gp_model *m, const serve_cfg *c,
                       const serve_layout *L, gp_error *err);

/* Memory per GPU of layout L for `phase` at `batch` decode sequences per
 * GPU (decode, colocated) or one prefill chunk (prefill).  out->max_batch
 * is the largest batch that fits (0 = none).  The model and L are
 * checked here; the rest of c is serve_check's (call it first).
 * GP_OK or GP_EINVAL. */
int serve_memory(const gp_model *m, const serve_cfg *c,
                 const serve_layout *L, serve_phase phase, double batch,
                 serve_mem *out, gp_error *err);

/* One decode step of layout L at `batch` sequences per GPU (at least one
 * per attention group: >= 1 / tp with TP attention, else >= 1), each
 * verifying 1 + mtp tokens at a mean KV length of input + output / 2;
 * or one prefill step of prefill_tokens per GPU (batch ignored).
 * GP_OK or GP_EINVAL. */
int serve_step_time(const gp_model *m, const roof_device *d,
                    const serve_cfg *c, const serve_layout *L,
                    serve_phase phase, double batch, serve_step *out,
                    gp_error *err);

/* Tokens a sequence gains per decode step with mtp drafts, the first
 * accepted with probability a and draft k given the ones before it with
 * a r^(k-1): 1 + sum_k a^k r^(k(k-1)/2); r = 1 is Leviathan et al. 2023,
 * eq. 1, (1 - a^(d+1)) / (1 - a).  1 without drafts. */
double serve_accept_length(int mtp, double a, double r);

/* The wall time of the prompt chunks of N ranks that step together (DP
 * attention, every MoE layer's all-to-all) over their own time, when each
 * rank runs a chunk in a share p of its steps, independently of the
 * others: a step holds a chunk somewhere with probability 1 - (1 - p)^N,
 * so (1 - (1 - p)^N) / p -- N when prompts are rare, 1 when every step
 * prefills on every rank (TensorRT-LLM tech blog 10, ADP Balance
 * Strategy: "the iteration time is dominated by the slowest rank").  1
 * for p outside (0, 1) or N <= 1. */
double serve_prefill_stall(double p, double N);

/* Seconds of step st's routed-expert operators (its experts_ rows: the
 * permutation, the up and down grouped GEMMs and their activation): the
 * part of a step that expert parallelism runs on every rank's tokens
 * together. */
double serve_step_routed(const serve_step *st);

/* A colocated step of `batch` decodes per GPU that also carries a prompt
 * chunk of k tokens on one attention group (serve_cfg.mixed): one pass,
 * the token-wise operators (linears, MoE, all-to-all) over the decodes
 * and the chunk's tokens together, the decodes' latent attention beside
 * the chunk's prefill attention, the head over the decodes and the
 * prompts the chunk completes.  Its rows and time in *out. */
int serve_mixed_time(const gp_model *m, const roof_device *d,
                     const serve_cfg *c, const serve_layout *L,
                     double batch, double k, serve_step *out,
                     gp_error *err);

/* The whole deployment: memory, batch, steps, TTFT, ITL, tokens/s and
 * cost, disaggregated or colocated (and the colocated comparison).
 * GP_OK (possibly fits = 0 with why) or GP_EINVAL. */
int serve_run(const gp_model *m, const roof_device *d, const serve_cfg *c,
              serve_result *out, gp_error *err);

/* Search for the fewest GPUs that deliver `target` output tokens/s with
 * every user within itl_max (s), and within c->ttft_max where set: over decode instances of one or two
 * nodes with tensor-parallel experts, and EP instances of 1..36 whole
 * nodes whose size divides the expert slots (attention data-parallel or
 * tensor-parallel, two-batch overlap on or off), colocated or with a
 * prefill pool (TP nodes, or EP instances with DP attention and
 * overlap).  Fields the
 * caller fixes are kept: fix_layout (c->decode and c->prefill as given),
 * fix_disagg (c->disagg as given).  skip_tp (with the layout searched):
 * leave out the colocated tensor-parallel instances (ep 1, TP attention),
 * which are plain TP replicas the caller prices with the model plain
 * inference prices them with (gp.infer_plan: gpuplan.infer's).  *best is
 * the plan's serve_run result and *cfg_out its configuration.  GP_EINVAL
 * when nothing meets the bound. */
int serve_target(const gp_model *m, const roof_device *d, const serve_cfg *c,
                 double target, double itl_max, int fix_layout,
                 int fix_disagg, int skip_tp, serve_cfg *cfg_out,
                 serve_result *best, gp_error *err);

#endif
