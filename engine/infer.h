/*
 * infer.h - LLM serving on a roofline: prefill, decode, continuous
 * batching, CPU offload and cost per token.
 *
 * A step (one prefill of a batch of prompts, or one decode step of a batch
 * of sequences) is a list of operators per layer (norms, QKV, rope + KV
 * write, attention over the KV cache, output projection, MLP or MoE
 * experts) plus embedding, final norm, logits and sampling; each is timed
 * by roof_op_time on one GPU of a TP group, and the two TP all-reduces per
 * layer are added on the critical path.  Serving throughput follows from
 * how many sequences the KV budget holds.
 *
 * Units: bytes, seconds, FLOP, tokens, bytes/s.  Caller-owned structs, no
 * allocation; errors through gp_error.
 */
#ifndef GP_INFER_H
#define GP_INFER_H

#include "comm.h"
#include "common.h"
#include "memory.h"
#include "model.h"
#include "roofline.h"

#define INFER_MAX_OPS 40
/* Captured decode batch sizes a runtime may hold (infer_cfg.graph_sizes):
 * vLLM's default list has 67, SGLang's at most 78 below 1024. */
#define INFER_GRAPH_MAX 128
/* Framework ops a decoder layer launches at most (host_ops_per_layer):
 * the largest eager layer is an MoE block looped expert by expert
 * (transformers' MixtralSparseMoeBlock.forward, "for expert_idx in
 * range(self.num_experts)", about 10 ops an expert) over 256 experts,
 * about 2,600; 10,000 leaves it a factor of 4 (lua/gpuplan/options.lua
 * declares the same range). */
#define INFER_HOST_OPS_MAX 10000.0

/* How kernels reach the GPU. */
typedef enum infer_runtime {
	INFER_GRAPHS = 0,  /* CUDA graphs (TensorRT-LLM, vLLM, SGLang decode) */
	INFER_KERNELS,     /* fused kernels launched one by one (llama.cpp) */
	INFER_EAGER        /* framework eager mode: a host dispatch per op
	                      (plain PyTorch / HF generate / LitGPT) */
} infer_runtime;

typedef struct infer_cfg {
	double weight_bits;   /* effective bits per transformer weight, scales
	                         included (infer_weight_format) */
	double embed_bits;    /* embedding and lm_head bits (GPTQ/AWQ/ModelOpt
	                         keep them at 16) */
	double head_bits;     /* lm_head bits where they differ from the
	                         embedding's (llama.cpp's GGUF mixes: the
	                         output tensor at Q6_K, token_embd at the
	                         type's base); 0 = embed_bits */
	double kv_bytes;      /* bytes per cached K or V element, block
	                         scales included */
	double mamba_ssm_bytes; /* a hybrid stack's SSM state, bytes an
	                         element (vLLM's mamba_ssm_cache_dtype;
	                         model.h GP_MAMBA_SSM_STATE_BYTES) */
	int kv_half_math;     /* 1: the attention converts the cache to
	                         16 bits in its kernel and multiplies there
	                         (int8 KV; fp8 KV without fp8 tensor cores),
	                         never on the fp8 tensor cores (infer.c
	                         step_layers) */
	int kv_unfused;       /* 1: the runtime dequantises its whole KV
	                         pool to 16 bits in a pass of its own before
	                         each layer's attention, every forward step,
	                         and the attention reads that copy (SGLang's
	                         FP4 pool off Blackwell: infer.c
	                         kv_dequant) */
	int wo_unfused;       /* 1: each weight-only linear dequantises
	                         its weights to 16 bits in a kernel of its
	                         own (reading them at weight_bits, writing
	                         16-bit copies), then multiplies that copy
	                         in a plain 16-bit GEMM (DeepSpeed's
	                         quantized_initialization, ZeRO-Inference:
	                         wrap_quantized_functional; infer.c
	                         step_layers); 0: dequantised in the
	                         GEMM's mainloop */
	int kv_per_qhead;     /* 1: the decode attention runs one thread
	                         block per query head, each reading its KV
	                         head's whole cache and multiplying on the
	                         CUDA cores: a per-query-head decode
	                         attention kernel (TensorRT-LLM's masked MHA
	                         kernel before XQA, vLLM's PagedAttention
	                         kernel before flash-attn's decode: infer.c
	                         mmha_decode) */
	int mixed_kv_per_qhead; /* 1: in a step that carries prompt tokens
	                         (chunked, mixed_time) the decodes' attention
	                         reads the cache once per query head, as
	                         kv_per_qhead does: vLLM V1's one varlen
	                         FlashAttention-2 call for the whole mixed
	                         batch (infer_run.c mixed_prices) */
	int prefix_prefill;   /* 1: a prompt's attention runs vLLM V0's
	                         Triton prefix-prefill kernel (ROCm's
	                         chunked prefill): one program a sequence,
	                         query head and 128-query block, each over
	                         all its keys, no split (infer.c
	                         fa2_prompt_nosplit) */
	double kv_pool;       /* with kv_unfused: the pool's bytes per GPU
	                         (infer_run sets it from the KV budget) */
	gp_dtype compute;     /* GEMM precision (infer_compute_dtype) */
	int tp, pp;           /* per replica; tp * pp GPUs per replica */
	int gpus;             /* total GPUs; a multiple of tp * pp */
	int batch;            /* > 0: decode batch per replica, fixed */
	int concurrency;      /* > 0: requests in flight in the whole system
	                         (batch == 0); 0 and batch 0: as many as the
	                         KV budget and max_batch allow */
	double input;         /* prompt tokens per request, >= 1 */
	double output;        /* generated tokens per request, >= 1 */
	double output_max;    /* > output: a burst's (requests) outputs
	                         spread around their mean output,
	                         exponentially, none longer than this
	                         (infer_output_quantiles); 0: every request
	                         generates output tokens */
	int output_uniform;   /* with output_max: the outputs uniform from
	                         2 output - output_max to output_max (a
	                         benchmark client's random lengths: SGLang
	                         bench_serving's randint(max(int(L r), 1),
	                         L + 1)), not exponential */
	int flash;            /* 1: fused (flash) attention */
	infer_runtime runtime;
	double host_op_time;  /* eager: host seconds per framework op */
	double host_ops_per_layer; /* eager: framework ops per layer,
	                              0..INFER_HOST_OPS_MAX */
	double extend_host_ops; /* graphs: framework ops per layer that a
	                          prompt's (extend) pass dispatches from
	                          Python, off the CUDA graph (SGLang captures
	                          decode batches only: lua/gpuplan/infer.lua
	                          M.extend_host_ops); > 0: a step of q > 1
	                          tokens a sequence launches its kernels from
	                          the stream and lasts at least their
	                          dispatch at host_op_time each
	                          (infer_step, and serve_step.c extend_floor
	                          under the MoE serving model's prefill
	                          step); 0: not counted, such a
	                          step priced at the graph launch */
	double capacity;      /* bytes per GPU the runtime may allocate
	                         (the card's usable memory); the reserve
	                         and margin come off it in mem_infer, the
	                         one inference-memory model */
	gp_mem_reserve reserve; /* CUDA context, library workspaces, NCCL
	                         buffers, fragmentation and the safety
	                         margin (mem_reserve_default for the
	                         replica's tp * pp GPUs) */
	double kv_free_fraction; /* > 0: KV pool = this fraction of the
	                         memory free after loading (TensorRT-LLM
	                         kv_cache_free_gpu_mem_fraction) instead of
	                         the margin of the capacity; see
	                         gp_infer_cfg */
	double kv_tokens;     /* > 0: the KV pool holds this many tokens,
	                         as the engine reports it (vLLM's
	                         kv_cache_size_tokens, num_gpu_blocks x
	                         block_size), in place of the pool the
	                         memory rule leaves (run_kv) */
	int kv_reserve_max;   /* 1: admit a sequence only when KV for its
	                         whole input + output is free (TensorRT-LLM
	                         GUARANTEED_NO_EVICT); 0: paged KV holds the
	                         mean length input + output / 2 per sequence
	                         in steady state (vLLM PagedAttention) */
	int kv_preempt;       /* 1 (paged KV, chunked): a finite run whose
	                         requests' whole lengths overflow the KV
	                         budget is walked as vLLM V1 schedules it,
	                         admitting on a prompt's blocks alone and
	                         preempting the last-admitted running
	                         request when a block is missing, to be
	                         recomputed later (infer_burst_preempt);
	                         0: infer_burst's admission at the mean
	                         length, never evicting */
	double max_num_tokens; /* tokens per prefill batch (chunk), > 0 */
	int chunked;          /* 1: chunked prefill mixes prompt tokens into
	                         the decode steps, max_num_tokens a step in
	                         all, one forward pass of both (vLLM's
	                         chunked prefill, TensorRT-LLM's in-flight
	                         batching: infer_run.c mixed_time); 0: prompts
	                         are prefilled in steps of their own
	                         (infer_run.c run_times) */
	int static_batch;     /* 1: one static batch of the fixed batch's
	                         requests (gptSession, TensorRT-LLM before
	                         0.10's in-flight batching): every prompt in
	                         one context pass (max_num_tokens holds them
	                         all), then output - 1 decode steps of the
	                         whole batch in lockstep, no prompt beside
	                         them (infer_run.c run_times); 0: the
	                         runtime's continuous batching */
	int whole_prompts;    /* 1 (with chunked): a step takes a prompt only
	                         whole, where it fits beside the decodes
	                         (TensorRT-LLM without chunked context:
	                         infer_run.c run_finite); 0: any split */
	double requests;      /* > 0: the run is this many requests issued
	                         at once, throughput = their output tokens
	                         over the run from the first one's start to
	                         the last one's end, ramp and drain
	                         included (trtllm-bench's Total Output
	                         Throughput; infer_run.c run_finite);
	                         0: the steady state */
	double cached;        /* prompt tokens of a request found in the
	                         prefix cache, [0, input): its prefill
	                         computes the other input - cached tokens
	                         (linears, norms, their attention over the
	                         whole prompt's keys, their KV writes), while
	                         the cached tokens' KV is still held and read
	                         by every decode step
	                         (infer_new_prompt); 0: every prompt computed */
	int max_batch;        /* the engine's cap on sequences per batch */
	int fused_grouped_topk; /* 1: a grouped-top-k router (the MLA
	                         models', DeepSeek's) routes in one fused
	                         kernel (vLLM's fused_grouped_topk with the
	                         sigmoid, bias and casts inside, PR
	                         #28124); 0: the compiled native
	                         grouped_topk's kernels (infer.c
	                         moe_route) */
	int fused_topk_softmax; /* 1: a softmax top-k router (Qwen3-MoE's,
	                         Mixtral's) casts, selects and renormalises
	                         in one kernel (vLLM PR #26717); 0: the
	                         cast, topk_softmax, sum and division */
	int fused_qk_norm_rope; /* 1: a QK-norm model's norm runs inside
	                         the rope kernel (TensorRT-LLM's
	                         QKNormRoPEAttention, fuse_qk_norm_rope):
	                         no qk_norm kernel of its own (infer.c
	                         step_layers) */
	int mla_latent_prefill; /* 1: an MLA model's prompt tokens attend in
	                         the latent (absorbed) form, q.k over
	                         kv_lora_rank + rope and p.v over
	                         kv_lora_rank for every head, rather than
	                         over the up-projected 192 / 128-wide heads
	                         (SGLang's extend batches whose cached
	                         prefixes sum to 1..8191 tokens; infer.c
	                         step_layers) */
	int act_quant;        /* 1: a linear that multiplies fp8 or fp4
	                         activations quantises its bf16 input in a
	                         kernel of its own unless the producer
	                         already wrote that format (TensorRT-LLM's
	                         PyTorch flow; infer.c act_quant) */
	int block_quant;      /* 1: a dense linear that multiplies
	                         block-scaled fp8 (128 x 128 weight blocks)
	                         quantises its bf16 input to fp8 with an
	                         fp32 scale a 128-element group in a kernel
	                         of its own before every GEMM (SGLang's
	                         sglang_per_token_group_quant_fp8; infer.c
	                         act_quant) */
	double ar_fusion_max; /* bytes: the largest TP all-reduce whose
	                         residual add, RMSNorm and fp8 / nvfp4
	                         quantisation run fused in it (TensorRT-LLM's
	                         AllreduceOp MIN_LATENCY kernel); a larger one
	                         is NCCL's and the quantisation a kernel of
	                         its own (act_quant).  0: every size fused */
	int moe_expand;       /* 1: the fused MoE copies each token's row
	                         to its k experts' blocks in a kernel of
	                         its own before the first grouped GEMM
	                         (TensorRT-LLM's CUTLASS MoE
	                         expandInputRows; infer.c moe_expand) */
	int moe_quant;        /* 1: the fused MoE quantises its fp8 GEMMs'
	                         inputs in kernels of their own, the
	                         tokens before the first and the
	                         activation's output before the second
	                         (vLLM's and SGLang's Triton fused_moe;
	                         infer.c moe_quant) */
	int moe_shared_apart; /* 1: the MoE's shared expert runs as dense
	                         linears of its own beside the fused MoE,
	                         on the same stream (vLLM's DeepseekV2MLP;
	                         infer.c shared_apart) */
	double shared_stream_max; /* > 0: a step of at most this many
	                         tokens runs that shared expert on a second
	                         CUDA stream beside the routed experts,
	                         priced as one of them (vLLM from v0.11.1) */
	int custom_ar_gpus;   /* > 1: a TP group of at most this many GPUs
	                         (2, 4, 6 or 8, one host's, on a full
	                         NVLink mesh) all-reduces messages up to
	                         8 MiB with the runtime's own peer-to-peer
	                         kernels (vLLM's custom all-reduce, which
	                         SGLang shares) instead of NCCL (infer.c
	                         allreduce); 0: NCCL always */
	double engine_host_step; /* s the serving engine's host works
	                         between two GPU steps, serial with them,
	                         once a step (vLLM V1 before async
	                         scheduling: its scheduler, input
	                         preparation and the sampled tokens' read-
	                         back; lua/gpuplan/infer.lua
	                         M.engine_host); 0: none or overlapped */
	double engine_host_seq; /* s more per sequence that emits a token
	                         in the step; 0: none or overlapped */
	int one_token_graphs; /* 1: a one-token step on one GPU (tp = pp =
	                         1, no layer offloaded, no MoE layer)
	                         replays a CUDA graph, each op priced at
	                         the device's graph_launch, though the
	                         runtime launches its other steps' kernels
	                         one by one (llama.cpp since PR 6766:
	                         infer.c infer_step); 0: as the runtime */
	int row_split;        /* 1: tp is llama.cpp's row split, not
	                         Megatron's: each weight matrix's rows are
	                         split over the tp GPUs, each matmul's input
	                         is copied from the main GPU to the others
	                         and their rows of its output back, two
	                         copies a matmul on the critical path in
	                         place of two all-reduces a layer (infer.c
	                         row_split_time); 0: Megatron TP */
	int n_graph;          /* > 0: a decode-only step of b sequences
	                         replays the graph captured at the smallest
	                         of graph_sizes >= b, its padded slots
	                         computed too (GEMMs, norms, MoE, all-
	                         reduces, lm_head and sampling; attention at
	                         b: they hold no KV), and runs without a
	                         graph (eager_step) above the largest
	                         (infer_run.c graph_batch); 0: a graph at
	                         every batch, no padding */
	int graph_sizes[INFER_GRAPH_MAX]; /* ascending, >= 1 (n_graph of
	                         them): the runtime's captured batch sizes
	                         (lua/gpuplan/infer.lua M.graph_sizes) */
	double graph_max_ctx; /* > 0 (graphs runtime): a decode-only step
	                         whose context exceeds this many tokens runs
	                         without its graph, its ops dispatched from
	                         Python one by one as the eager runtime
	                         prices them (host_ops_per_layer at
	                         host_op_time: infer_run.c graph_step; vLLM
	                         V0's max_seq_len_to_capture); 0: a graph at
	                         every context */
	int gemv_max;         /* steps of at most this many tokens run the
	                         weight-only linears as CUDA-core GEMVs
	                         (TensorRT-LLM 4, llama.cpp 8); 0: tensor-
	                         core tiles at every batch (roofline.h) */
	int gemv_packed;      /* 1: those GEMVs multiply in packed 16-bit
	                         FMAs (TensorRT-LLM's HFMA2, roof_op.gemv
	                         2); 0: priced on the fp32 lanes */
	int wo_unfused_above; /* > 0: a step of more than this many tokens
	                         runs the weight-only linears as wo_unfused
	                         does (a dequantising kernel writing a
	                         16-bit copy, then a 16-bit library GEMM):
	                         llama.cpp's dequantize + cuBLAS path above
	                         MMQ_MAX_BATCH_SIZE, 32, on cards with
	                         tensor cores (lua/gpuplan/infer.lua
	                         M.wo_unfused_above); 0: never */
	int acc16_gemm;       /* 1: a step of more than one token multiplies
	                         its 16-bit GEMMs (16-bit weights, weights
	                         dequantised above wo_unfused_above, the
	                         unfused attention's KQ and KQV) in cuBLAS
	                         with CUBLAS_COMPUTE_16F, at the card's
	                         FP16-accumulate rate where it has one
	                         (roof_device.acc16_x), and on every card
	                         converts each linear's F32 input to F16
	                         before it and its F16 output to F32 after
	                         (llama.cpp's ggml_cuda_op_mul_mat_cublas;
	                         lua/gpuplan/infer.lua M.acc16_gemm); 0: the
	                         16-bit GEMMs at the stored 16-bit peak */
	int wo_split_k;       /* > 1: the weight-only GEMM splits K into
	                         this many slices, each block writing its
	                         partial outputs to a buffer of its own,
	                         and a kernel of its own sums them after
	                         each linear (vLLM's awq_gemm before
	                         awq_marlin: split_k_iters 8 and
	                         "_out_feats.sum(0)"; infer.c
	                         splitk_sum); 0: the GEMM writes its output
	                         itself */
	int ubatch;           /* > 0: a prompt is evaluated in graphs of at
	                         most this many tokens, one after another,
	                         each reading (and dequantising) the
	                         weights again and attending to the cache
	                         the earlier ones wrote (llama.cpp's
	                         n_ubatch: infer_run.c ubatch_ttft); 0: one
	                         pass (or chunked's steps) */
	int ubatch_call;      /* > 0 with ubatch: the tokens of one decode
	                         call (llama.cpp's n_batch), whose ubatches
	                         pipeline over the pp stages of a layer
	                         split (llama.cpp's pipeline parallelism:
	                         infer_run.c ubatch_ttft); 0: no pipeline */
	double ubatch_launches; /* > 0 with ubatch_call: the launches (kernels,
	                         copies) one layer of one ubatch's graph
	                         queues on its GPU's stream (infer_run.c
	                         ubatch_ttft); 0: not counted */
	double launch_queue;  /* > 0 with ubatch_launches: the launches a
	                         stream holds pending before the host's
	                         next launch waits for a slot (infer_run.c
	                         ubatch_ttft); 0: unbounded */
	double score_bytes;   /* > 0, flash off: bytes each attention score
	                         element moves through the unfused kernels
	                         (llama.cpp's KQ, softmax and KQV: 24,
	                         lua/gpuplan/infer.lua M.score_bytes);
	                         0: 4 transfers at 16 bits (model_ops.c
	                         op_attn) */
	double graph_act_bytes; /* > 0 with ubatch: the runtime's compute
	                         buffer holds one ubatch's graph, its
	                         activations this many bytes an element
	                         (llama.cpp's F32: 4), and with flash off
	                         one layer's scores at that width (infer_run.c
	                         mem_cfg); 0: the engine's budget at 2 */
	int scores_whole;     /* 1, flash off: a prompt step scores its
	                         queries against every key of its context,
	                         the causal mask applied to the scores, not
	                         skipped (llama.cpp's ggml_soft_max_ext over
	                         n_kv); 0: the causal mean */
	double wo_stream;     /* > 0: the fraction of the streaming copy at
	                         which the runtime's own weight-only linear
	                         kernels read their weights (gpt-fast's
	                         tinygemm int4 and compiled int8 kernels,
	                         vLLM's int4 Marlin: lua/gpuplan/infer.lua
	                         M.wo_stream_of, which the MoE serving
	                         model reads too, serve_row.c
	                         sx_wo_stream);
	                         0: the device's GEMM rate (roofline.h
	                         roof_op.stream) */
	double attn_stream;   /* > 0: the fraction of the streaming copy at
	                         which the runtime's decode attention kernel
	                         reads the cache in a decode step (one query
	                         token a sequence): TensorRT-LLM's XQA
	                         TMA + QGMMA kernel on Hopper (mha_sm90.cu,
	                         lua/gpuplan/infer.lua M.attn_stream_of);
	                         0: the device's GEMM rate, as the other
	                         fused attention kernels */
	double m_tile;        /* > 0: rows of the M tile the runtime's fp8
	                         dense linears (multiplied as stored) pad
	                         a step's tokens to (SGLang's DeepGEMM on
	                         Hopper: 64; lua/gpuplan/infer.lua
	                         M.m_tile); 0: the library's tiles
	                         (roofline.h roof_op.m_tile) */
	double kv_bucket;     /* > 0: a decode step attends its sequence's
	                         KV up to the next multiple of this many
	                         tokens, at most input + output (the
	                         static-shape runtime's padded cache:
	                         optimum-habana's --bucket_size with
	                         --bucket_internal on Gaudi; lua/gpuplan/
	                         infer.lua M.kv_bucket; infer_decode_ctx);
	                         0: its own length */
	double moe_fp8_bf16_x; /* > 0: the runtime's fused MoE kernel
	                         multiplies fp8 (or, in a step computing
	                         in fp4, NVFP4) experts at no more than
	                         this multiple of the device's 16-bit GEMM
	                         rate (roofline.h roof_op.bf16_x;
	                         lua/gpuplan/infer.lua M.moe_fp8_bf16_x,
	                         M.moe_fp4_bf16_x); 0: at their own rate */
	int prompt_attn_fused; /* 1: a prompt's (or chunk's) attention
	                         runs the device's fused attention kernel
	                         record (roof_device attn_fwd times
	                         roofline.c roof_attn_eff, as the MoE
	                         serving step's serve_row.c sx_attn_row and
	                         training's): the kernel the runtime runs
	                         (lua/gpuplan/infer.lua
	                         M.prompt_attn_kernel_of: vLLM V1's FA3 on
	                         Hopper); 0: the GEMM of its shape */
	double kv_fp8_prompt_x; /* > 0: a prompt's (or chunk's) attention
	                         over an FP8 cache multiplies at no more
	                         than this multiple of the device's 16-bit
	                         rate at its shape (roofline.h
	                         roof_op.bf16_x): vLLM's FlashAttention-3
	                         on Hopper with its two-level FP8
	                         accumulation (lua/gpuplan/infer.lua
	                         M.kv_fp8_prompt_x); 0: the FP8 tensor
	                         rate.  Decode steps keep theirs. */
	double wo_bf16_x;     /* > 0: the runtime's weight-only linears
	                         (dequantised in the GEMM mainloop: Marlin)
	                         multiply at no more than this multiple of
	                         the device's 16-bit library GEMM rate at
	                         their shape (roofline.h roof_op.bf16_x;
	                         lua/gpuplan/infer.lua M.wo_bf16_x); 0: at
	                         that rate */
	double offload_bw;    /* B/s of the node's host memory, from which
	                         the CPU reads the host-resident layers
	                         when it computes them (steps of at most
	                         offload_cpu_max tokens: llama.cpp); each
	                         GPU gets its share (infer_host_bw_each) */
	double offload_link_bw; /* B/s of the host link over which every
	                         other step copies them to the GPU (vLLM
	                         cpu_offload_gb, HF accelerate), each GPU's
	                         while all copy at once (the caller's:
	                         lua/gpuplan/infer.lua prices the shared
	                         DRAM); offload is allowed when either rate
	                         is > 0 */
	int offload_cpu_max;  /* steps of at most this many tokens run the
	                         host-resident layers on the CPU (llama.cpp
	                         31: larger batches go to the GPU); 0: every
	                         step copies them over the link */
	double host_capacity; /* bytes of host memory for offloaded layers:
	                         one node's (host_node_gpus) */
	int host_node_gpus;   /* > 0: the GPUs of the node host_capacity
	                         and offload_bw are the figures of (the
	                         catalog system's); 0: the run's gpus */
	int host_gpus;        /* > 0: the GPUs of one host where the node
	                         spans several (GB200 NVL72: a tray's 4),
	                         which has its share of both figures
	                         (memory.h mem_host_share); 0: one host */
	int offload_layers;   /* > 0: this many layers of each GPU's stage
	                         in host memory, as the run placed them
	                         (llama.cpp -ngl, accelerate's device_map);
	                         0: as many as the GPU is short of */
	const gp_topo *topo;  /* scale-up topology for the TP all-reduces;
	                         NULL: alpha-beta with ar_latency / ar_bw */
	double ar_latency;    /* s per all-reduce step (topo == NULL) */
	double ar_bw;         /* achievable B/s per direction (topo == NULL) */
	double p2p_bw;        /* PP send B/s; 0 = ar_bw */
	double price;         /* per GPU-hour; 0 = free (cost 0) */
	double sample_kernels; /* kernels a step's sampler launches beyond
	                         greedy sampling's, each over the step's
	                         [sequences, vocabulary] logits, outside the
	                         CUDA graph, after the forward on the same
	                         stream: the penalties, top-p / top-k and
	                         random-sampling kernels of vLLM V0's
	                         sampler (lua/gpuplan/infer.lua
	                         M.v0_sampler_kernels, counted from its
	                         sampler.py); 0: greedy, priced by the
	                         "sample" row alone */
} infer_cfg;

/* The lm_head's bits: head_bits where given, else embed_bits. */
double infer_head_bits(const infer_cfg *c);

/* One operator row of a step on one GPU. */
typedef struct infer_op_row {
	const char *name;     /* static */
	double count;         /* instances per step (layers for a layer op) */
	double flop, bytes;   /* one instance */
	roof_result r;        /* one instance */
	double total;         /* s, count * r.time */
} infer_op_row;

typedef struct infer_phase {
	int nops;
	infer_op_row ops[INFER_MAX_OPS];
	double batch;         /* sequences in the step */
	double tokens;        /* tokens processed */
	double ctx;           /* KV length at the end of the step */
	double gpu_time;      /* s, sum of operator rows (all PP stages) */
	double comm_time;     /* s, TP all-reduces + PP sends */
	double offload_time;  /* s, extra for host-resident layers */
	double host_time;     /* s, eager host dispatch (0 otherwise) */
	double engine_time;   /* s, the engine's host work between steps
	                         (engine_host_step + engine_host_seq x
	                         batch), serial with the GPU's */
	double time;          /* s, wall time of the step */
	double flop, bytes;   /* per GPU, whole step */
} infer_phase;

typedef struct infer_result {
	int fits;             /* 0: why says what does not fit */
	char why[160];
	double weights_total; /* bytes of the whole model at its dtypes */
	double weights_gpu;   /* bytes resident per GPU */
	double offload_layers; /* layers read from host memory */
	double offload_bytes; /* bytes of them per GPU */
	double workspace;     /* bytes per GPU of activations/logits */
	double kv_per_seq;    /* bytes per GPU per sequence of input+output */
	double kv_admit;      /* bytes per GPU a sequence holds on average
	                         (kv_per_seq when kv_reserve_max) */
	double kv_budget;     /* bytes per GPU left for the KV cache
	                         (mem_infer's kv_room) */
	int max_batch_kv;     /* sequences the KV budget holds per replica,
	                         at most max_batch */
	int kv_seqs;          /* sequences the KV budget holds per replica,
	                         before max_batch (capped at INT_MAX) */
	int replicas;         /* gpus / (tp * pp) */
	int batch;            /* decode batch per replica used */
	double ttft;          /* s, prefill of one prompt (no queueing):
	                         one step, or its max_num_tokens chunks'
	                         steps where the engine chunks it
	                         (infer_run.c chunked_ttft); a burst
	                         (ttft_burst): the mean over its requests
	                         of each's time to first token */
	int ttft_burst;       /* 1: ttft is a burst's mean (requests sent at
	                         once, more than one a replica: infer_run.c
	                         run_finite, infer_burst_ttft) */
	int ttft_loaded;      /* 1: ttft is the steady state's under load
	                         (infer_run.c loaded_ttft: a chunked-prefill
	                         engine, more than one request a replica, no
	                         burst) */
	double ttft_one;      /* s, where ttft_burst or ttft_loaded: one
	                         prompt's alone */
	double ttft_wait;     /* s, where ttft_loaded: the mean residual of
	                         the step in flight at the arrival */
	double ttft_steps;    /* where ttft_loaded: the steps its prompt
	                         runs in, ceil(prompt / (max_num_tokens -
	                         decodes)) */
	double ttft_step;     /* s, where ttft_loaded: each of those steps */
	double ttft_p50, ttft_p99; /* s, where ttft_burst: the median and
	                         99th percentile of its requests' TTFTs */
	double itl;           /* s, decode step at batch, mean context */
	double itl_batch1;    /* s, same at batch 1 */
	double itl_load;      /* s, the mean gap between a user's tokens at
	                         batch: the decode step and the other
	                         sequences' prompts between them
	                         (infer_itl_loaded) */
	double prefill_share; /* s of replica time per request for prefill */
	double eager_steps;   /* graphs runtime: the share of decode steps
	                         that carry prompt tokens, run without the
	                         CUDA graph (run_times) */
	double eager;         /* s those steps add to a decode step on
	                         average (eager_steps x their extra launch
	                         time) */
	double kv_reads;      /* times a decode step's attention reads a
	                         rank's KV cache: infer_kv_reads */
	double mixed_kv_reads; /* the same in a step that carries prompt
	                         tokens: infer_mixed_kv_reads */
	double tokens_per_s;  /* output tokens/s, whole system */
	double tokens_per_s_gpu;
	double stream_tokens_per_s; /* 1 / itl_load: what one user sees */
	double cost_per_mtok; /* price units per 1e6 output tokens */
	double tokens_per_s_per_price; /* tokens/s per (price unit / hour);
					* 0 at price 0 (no value) */
	infer_phase prefill;  /* the single-prompt prefill (TTFT) */
	infer_phase decode;   /* the decode step at batch */
} infer_result;

/* Map a weight format name to effective bits per weight (scales
 * included) and the dtype its values are stored as: bf16, fp16, fp8,
 * int8, w8a8, int4 (= gptq, awq), nf4, fp4 (NVFP4), mxfp4, fp6.
 * GP_OK or GP_EINVAL naming the known formats. */
int infer_weight_format(const char *name, double *bits, gp_dtype *stored);

/* GEMM precision a weight format runs at on d: fp8 / fp4 / w8a8 use their
 * tensor cores when d has them, else (like weight-only int4/int8/nf4)
 * dequantise to bf16 (fp16 on chips without bf16). */
gp_dtype infer_compute_dtype(const roof_device *d, const char *weights);

/* Fill cfg with the documented defaults (bf16 weights and KV, flash,
 * CUDA graphs, tp = pp = gpus = 1, input 2048, output 256, the reserve
 * of one GPU, ...); the caller then sets capacity and what it knows
 * (for tp * pp > 1, mem_reserve_default(&cfg->reserve, tp * pp)). */
void infer_defaults(infer_cfg *cfg);

/* Check a model, device and configuration as infer_step and infer_run
 * do (engine/serve.c checks its base configuration with it).  GP_OK or
 * GP_EINVAL naming the field. */
int infer_check(const gp_model *m, const roof_device *d, const infer_cfg *c,
                gp_error *err);

/* The DRAM bandwidth bw (the node's, as offload_bw) gives each GPU of
 * this run when all of them stream from host memory at once: memory.h
 * mem_host_bw_each over host_node_gpus (else gpus) and host_gpus -- the
 * host's share divided among the run's GPUs it carries that stream at
 * once (a replica's pp stages of tp GPUs step in turn, infer_step
 * summing them, and those on one host take turns there), the
 * rule training's offload follows (train.c offload_step). */
double infer_host_bw_each(const infer_cfg *c, double bw);

/* The GPUs of the node host_capacity and offload_bw are the figures of:
 * host_node_gpus, else the run's gpus. */
int infer_host_node(const infer_cfg *c);

/* Host seconds an eager runtime (INFER_EAGER) dispatches for one step of
 * `layers` layers: (layers x host_ops_per_layer + the ops outside the
 * layers) x host_op_time; the host runs ahead of the GPU, so a step
 * lasts at least this long.  0 for the other runtimes. */
double infer_eager_host(const infer_cfg *c, double layers);

/* Host seconds a graph runtime (INFER_GRAPHS) dispatches for one prompt
 * (extend) pass of `layers` layers run off its CUDA graphs:
 * (layers x extend_host_ops + the ops outside the layers) x
 * host_op_time, a floor under the pass.  0 where extend_host_ops is
 * unset (the pass replays a graph or is not counted) and for the other
 * runtimes. */
double infer_extend_host(const infer_cfg *c, double layers);

/* The mean gap between one user's tokens at a batch of B sequences
 * (infer_run's itl_load, the colocated serving ITL of serve_plan.c): the
 * decode step itl, plus the prompt work the other B - 1 sequences' next
 * requests put between its tokens.  cycle is the time in which the B
 * sequences each finish a request (B x output / the tokens/s of the GPU
 * or replica that holds them), steps the output - 1 tokens after the
 * first; cycle - steps x itl is then the prompts' time of the cycle
 * (prefill steps or the time chunks add to mixed steps, and the eager
 * launches they cost), and B - 1 of its B requests' prompts fall in one
 * user's decode (its own precedes its first token: TTFT).  Exactly itl
 * at B = 1.  What a benchmark reports: vLLM's benchmark_serving TPOT is
 * "(outputs[i].latency - outputs[i].ttft) / (output_len - 1)", and with
 * continuous batching the other requests' prompts run between its tokens
 * (vLLM V1, docs/configuration/optimization.md: "the scheduling policy
 * prioritizes decode requests. It batches all pending decode requests
 * before scheduling any prefill operations. When there are available
 * tokens in the max_num_batched_tokens budget, it schedules pending
 * prefills"; SGLang runs a chunk in a step of its own between decode
 * steps unless --enable-mixed-chunk).  itl when there is no step or no
 * prompt time. */
double infer_itl_loaded(double itl, double cycle, double steps, double B);

/* The prompt tokens of a request its prefill computes: those the prefix
 * cache does not hold, input - cached.  The one rule for a prefix-cache
 * hit, which both serving models price their prefills with (infer_run.c
 * and the MoE serving model, serve_step.c and serve_plan.c).  A hit
 * skips the cached tokens' forward -- their linears, norms, attention and
 * KV writes -- as vLLM's scheduler schedules only "num_new_tokens = ... -
 * num_computed_tokens" of a request whose cached blocks it found
 * (vllm/v1/core/sched/scheduler.py, kv_cache_manager.get_computed_blocks),
 * SGLang's RadixAttention "extends" only the tokens past the matched
 * prefix (its extend_input_len; on by default, DeepSeek deployments
 * included), and TensorRT-LLM's KV cache reuse ("reused blocks ... do
 * not need to be recomputed", docs, KV cache reuse).  The computed
 * tokens still attend to the cached keys (their context ends at input),
 * and the decode steps read the whole prompt's KV, which stays held:
 * only the prompt's compute is skipped, so every prefill runs these
 * tokens at context input. */
double infer_new_prompt(const infer_cfg *c);
/* The KV length a decode step attends to, the mean over a request's
 * output - 1 decode steps: input + output / 2, or with c->kv_bucket each
 * step's length rounded up to the bucket (infer_cfg.kv_bucket). */
double infer_decode_ctx(const infer_cfg *c);

/* A burst: n requests issued at once to one attention group that holds
 * at most b of them, each of len tokens out (its first from its prefill,
 * len - 1 decode steps) and a prompt of plen computed tokens; the one
 * mechanism both serving models price a finite run with (infer_run.c
 * run_finite, serve_plan.c).  A step admits the requests the batch has
 * room for, whose prompts join the prefill queue; takes up to tokens of
 * its prompts (less its decodes where dec_count: vLLM's and TensorRT-
 * LLM's budget counts both; whole: only whole prompts); decodes every
 * running request once; and the requests whose last decode it was leave,
 * so the batch fills over the first steps and shrinks over the last.
 * With nl > 0 the requests' lengths vary: a share shr[k] of them is
 * lens[k] tokens out (shares summing to 1, their mean len), every
 * admitted group of requests mixed in those shares (a benchmark client
 * sends its requests in an order unrelated to their lengths), so the
 * short ones leave early, their slots refill from the queue while it
 * lasts, and the batch thins out until the longest ends; nl 0 (or b at
 * most 1: one request at a time, whose run is the sum of each's own,
 * linear in its length) every request len.  step(ctx, dec, proc, fin, gen) prices a step of dec
 * decodes and proc prompt tokens that completes fin prompts, s; gen is
 * the tokens the decoding requests have generated so far, their mean
 * (their context is the prompt and these), with spread lengths, where
 * the long ones that remain hold longer contexts; -1 at the mean
 * lengths, whose steps the caller prices at the run's mean context.
 * Returns the
 * run's time, first step to last, s; 0 past the steps the run is
 * followed for (the caller keeps its steady state); where a step prices
 * no time, the steps before it. */
typedef double (*infer_burst_step)(void *ctx, double dec, double proc,
                                   double fin, double gen);
/* A burst's times to first token over its requests, s: their mean, and
 * their median and 99th percentile as numpy interpolates them (vLLM's
 * benchmark reports the three); zeros where the walk is not followed. */
typedef struct infer_ttft {
	double mean, p50, p99;
} infer_ttft;
double infer_burst(double n, double b, double len, double plen,
                   double tokens, int dec_count, int whole,
                   const double *lens, const double *shr, int nl,
                   infer_burst_step step, void *ctx);
/* infer_burst that also sets *first (first != NULL) to the burst's
 * times to first token: the n requests are sent at once and
 * computed first come, first served, request k's first token at the end
 * of the step in which the prompt tokens computed reach k plen (its
 * prompt whole), so k prompts ahead of it delay it by their prefill and
 * the decode steps that share those steps, and past b (the batch the
 * cache holds) by the earlier requests' ends (waves).  Zeros where the
 * run is not followed (infer_burst's 0). */
double infer_burst_ttft(double n, double b, double len, double plen,
                        double tokens, int dec_count, int whole,
                        const double *lens, const double *shr, int nl,
                        infer_burst_step step, void *ctx, infer_ttft *first);

/* vLLM V1's scheduler over a burst of n requests (each len tokens out,
 * a prompt of kvp tokens held in the cache of which plen are computed)
 * whose cache fills: at most seqs running (max_num_seqs), kv tokens of
 * cache, tokens a step (max_num_batched_tokens, decodes counted).  A step
 * schedules the running requests in admission order, a decode's token or
 * a prompt's next chunk; where the cache has no room for one, the
 * last-admitted running request is preempted -- its KV freed, its
 * computed tokens dropped, its outputs kept, back at the queue's head --
 * down to the request itself ("preempted_req = self.running.pop()",
 * "preempted_req.num_computed_tokens = 0", "self.waiting.
 * prepend_request(preempted_req)", vllm/v1/core/sched/scheduler.py,
 * v0.9.x-v0.11.x); only a step that preempted none then admits from the
 * queue's head, while its budget, the cache (the first chunk's tokens)
 * and seqs allow.  A readmitted request recomputes its prompt and the
 * outputs it kept (plen + generated tokens) before its next token.
 * Requests are fluid cohorts of one state; step as infer_burst's (gen
 * the decoding requests' mean decodes so far).  Returns the run's time,
 * s; 0 where it cannot be followed (bad input, RUN_ITER_MAX steps, a
 * step that schedules nothing). */
double infer_burst_preempt(double n, double seqs, double kv, double len,
                           double kvp, double plen, double tokens,
                           infer_burst_step step, void *ctx);
/* infer_burst_preempt that also sets *first (first != NULL) to the
 * burst's times to first token, as infer_burst_ttft: a request's first
 * token the step its prompt first completes (a preempted request
 * recomputes without sending one again); zeros where not followed. */
double infer_burst_preempt_ttft(double n, double seqs, double kv,
                                double len, double kvp, double plen,
                                double tokens, infer_burst_step step,
                                void *ctx, infer_ttft *first);

/* The running batch of a client's concurrency: its share `want` (a
 * replica's, or a GPU's on the MoE serving path), at most `hold`, what
 * the KV budget and the engine's max_batch hold at once.  The requests
 * past it wait in the scheduler's queue, not refused: vLLM's
 * "self.waiting" queue admits while "self.kv_cache_manager.
 * allocate_slots" finds blocks (vllm/v1/core/sched/scheduler.py),
 * SGLang's waiting_queue while the PrefillAdder's token budget holds
 * (python/sglang/srt/managers/schedule_policy.py), TensorRT-LLM's
 * capacity scheduler while GUARANTEED_NO_EVICT's blocks last
 * (cpp/tensorrt_llm/batch_manager/capacityScheduler.cpp).  The one rule
 * gp.infer's run_batch (infer_run.c) and the MoE serving model's
 * decode_side (serve_plan.c, serve_cfg.queue) take; whether not one fits
 * (hold < 1 sequence) is the caller's refusal. */
double infer_queue_batch(double want, double hold);

/* The most length classes infer_output_quantiles gives. */
#define INFER_QUANTILES 1024

/* A burst's output lengths (c->output_max > c->output): n requests'
 * outputs exponential with mean c->output, clipped at c->output_max
 * (c->output_uniform: uniform from 2 c->output - c->output_max to
 * c->output_max, whose mean is c->output), as k = min(ceil(n),
 * INFER_QUANTILES) equal shares at the distribution's quantile
 * midpoints (survival (i + 0.5) / k, i = 0 .. k - 1: deterministic, the
 * longest near the expected longest of n), scaled so their mean is
 * c->output exactly, into lens[0 .. k - 1] (shares 1 / k each into
 * shr).  Returns k, or 0 where every request is c->output tokens
 * (output_max 0). */
int infer_output_quantiles(const infer_cfg *c, double n, double *lens,
                           double *shr);

/* Piecewise linear over the priced points x[0] < ... < x[n-1] (t at
 * each), flat below x[0]: a step's time between the batches it was
 * priced at (infer_run.c run_itl). */
double infer_run_itl(const double *x, const double *t, int n, double at);

/* A scheduler step's own prefill when fin prompts (a fluid mean) reach
 * it: an engine that prefills apart from its decodes (SGLang without
 * --enable-mixed-chunk; vLLM V0 without chunked prefill) runs, before its
 * next decode, one prefill of the prompts waiting then
 * (get_next_batch_to_run: "new_batch = self.get_new_batch_prefill()",
 * sgl-project/sglang python/sglang/srt/managers/scheduler.py, 0.5.x), not
 * a full chunk of them.  A closed-loop client's next request follows its
 * last one's end, and with spread lengths the ends of a batch's requests
 * fall independently, so the count K that waits is Poisson with mean fin:
 * a prefill runs in a share 1 - e^-fin of the steps, of fin / (1 - e^-fin)
 * prompts; t[i] the prefill of k[i] prompts (k[0] = 1 < ... < k[n-1], the
 * most a chunk holds), beyond k[n-1] t[n-1] / k[n-1] a prompt (whole
 * chunks).  Returns the share times the prefill at that mean count,
 * p x t(E[K | K >= 1]), not the mean over K's distribution: t is nearly
 * linear in k, so the two are near, this one above where t is concave
 * (each added prompt cheaper than the one before); at large fin the
 * chunk's per-prompt share, fin t[n-1] / k[n-1]. */
double infer_prefill_wait(double fin, const double *k, const double *t,
                          int n);

/* The share of a batch's decode steps that also carry prompt tokens:
 * `prompts` prompts of `len` tokens arrive over `steps` steps, each step
 * with `room` tokens beside its decodes for them (max_num_tokens less
 * the batch, or a rank's chunked-prefill size), so prompts x len /
 * (steps x room) of the steps, at most all.  The one rule behind the
 * graphs runtime's eager steps (infer_run), colocated serving's chunk
 * steps (serve_plan.c) and the rollout's DP stall (rollout.c); 1 when
 * there is no room or no step to spread over. */
double infer_prompt_share(double prompts, double len, double steps,
                          double room);

/* The TTFT of a request that joins a steady state of decodes: the one
 * rule gp.infer's chunked-prefill engines (infer_run.c loaded_ttft) and
 * the MoE serving model's colocated instances (serve_plan.c coloc_loaded)
 * take.  The request waits the mean residual of the step in flight,
 * E[T^2] / (2 E[T]) over the steady state's steps -- a share f carrying
 * prompt tokens at tc s each, the others at td -- then runs its P prompt
 * tokens in n = ceil(P / room) steps (room: the prompt tokens a step
 * takes beside its decodes, the budget less them), each at tc, or where
 * its chunk P / n is more than the k prompt tokens tc was priced at,
 * price(ctx, P / n) (NULL: tc).  out: ttft = wait + steps x step; all 0
 * where there is no room or no prompt (the caller keeps one prompt's),
 * out->full 1 where there is a prompt and no room (the caller says the
 * TTFT under load is not priced), out->room the room given. */
typedef int (*infer_chunk_step)(void *ctx, double chunk, double *t,
                                gp_error *err);
typedef struct infer_loaded {
	double ttft;          /* s, wait + steps x step; 0: not priced */
	double wait;          /* s, the mean residual of the step in flight */
	double steps;         /* the steps the prompt runs in */
	double step;          /* s, each of them */
	double room;          /* the room it was given */
	int full;             /* 1: no room (room <= 0) for a prompt: the
	                         decodes fill the budget, so a joining
	                         prompt's chunks wait for a sequence to end,
	                         which is not priced (ttft stays 0) */
} infer_loaded;
int infer_loaded_ttft(double P, double room, double f, double tc,
                      double td, double k, infer_chunk_step price,
                      void *ctx, infer_loaded *out, gp_error *err);

/* Times a decode step's attention reads the KV cache of a rank: under
 * kv_per_qhead (a per-query-head decode attention kernel, infer.c
 * mmha_decode) the query
 * heads a KV head serves on the rank, heads / tp over the rank's KV heads
 * (model_kv_heads_rank: a KV head replicated where there are fewer than
 * tp), when that is more than one; else 1 (XQA, the fused kernels, MHA).
 * The one rule: the decode attention is priced with it, and gp.infer's
 * note on xqa = false or paged_decode says it (the result's kv_reads). */
double infer_kv_reads(const gp_model *m, const infer_cfg *c);

/* The times a step that carries prompt tokens (c->chunked: mixed_time)
 * reads a decode's KV cache: the group as infer_kv_reads counts it where
 * the decode-only step or the mixed step's own kernel
 * (mixed_kv_per_qhead, infer_run.c mixed_decode_cfg) reads it per query
 * head, else 1; gp.infer's note on fa2_mixed says it (the result's
 * mixed_kv_reads). */
double infer_mixed_kv_reads(const gp_model *m, const infer_cfg *c);

/* Time one step on one GPU of a replica: `batch` sequences each
 * processing q tokens (q = prompt length for a prefill, 1 for decode)
 * with ctx tokens in the KV cache at the end of the step.  n_off layers
 * are read from host memory.  GP_OK or GP_EINVAL. */
int infer_step(const gp_model *m, const roof_device *d, const infer_cfg *c,
               double batch, double q, double ctx, double n_off,
               infer_phase *out, gp_error *err);

/* Whole serving estimate.  Weights, workspace, KV per sequence, the KV
 * budget, the sequences it holds and the layers offloaded come from
 * mem_infer (so gp.memory and gp.infer agree); the times from
 * infer_step.  GP_OK (possibly with fits = 0 and why) or GP_EINVAL for
 * invalid input. */
int infer_run(const gp_model *m, const roof_device *d, const infer_cfg *c,
              infer_result *out, gp_error *err);

/* Smallest GPU count meeting target output tokens/s with every user's
 * mean ITL within itl_limit (s): the largest batch whose itl_load (the
 * decode step and the other sequences' prompts, infer_itl_loaded: the
 * rule serve_target bounds) fits the limit
 * (any that fits at output 1: no decode step), or the captured CUDA-graph
 * size below it when that serves more (infer_best_batch), sets tokens/s
 * per replica;
 * replicas = ceil(target / that).  *gpus,
 * *batch and *tps (whole system) filled; GP_EINVAL when no batch meets
 * the limit or the model does not fit. */
int infer_gpus_for(const gp_model *m, const roof_device *d,
                   const infer_cfg *c, double target, double itl_limit,
                   int *gpus, int *batch, double *tps, gp_error *err);

/* The batches a throughput search under a limit prices, given lo, the
 * largest batch within it (a bisection's): lo itself and, for a runtime
 * with captured CUDA-graph sizes (infer_cfg.graph_sizes), the largest
 * captured size below lo.  A decode-only step of b sequences replays the
 * graph of the smallest captured size >= b, its empty slots computed too
 * (infer_run.c graph_batch: "The wasted computation is proportional to
 * the gap between the actual batch and the next captured size",
 * TensorRT-LLM tech blog 20), so a padded interval (s_i, s_i+1] costs
 * about one step whatever its batch and its best point is its top: the
 * largest batch within a limit can sit just past a captured size and pay
 * the padding (one H20, qwen2.5-14b on TensorRT-LLM: batch 128 2108
 * tokens/s, 136 1471 -- decode padded to 256 -- and 256 2179), while the
 * captured size below it pays none.  The candidates are at most two, so
 * the search stays a bisection and one run more.  Writes them (lo first)
 * into out and returns how many: 0 when lo < 1. */
int infer_batch_candidates(const infer_cfg *c, int lo, int out[2]);

/* Of infer_batch_candidates(c, lo), the batch with the most tokens/s
 * (the search's GPUs are fixed, so per GPU too) whose run fits and whose
 * itl_load is within itl_limit (s; unbound at output 1, no decode step);
 * lo, which the caller found within the limit, on a tie.  *batch and
 * *r (its infer_run, at c's gpus) filled; GP_EINVAL on invalid input or
 * lo < 1. */
int infer_best_batch(const gp_model *m, const roof_device *d,
                     const infer_cfg *c, int lo, double itl_limit,
                     int *batch, infer_result *r, gp_error *err);

/* The refusals the two target searches share (infer_gpus_for, and the
 * MoE serving model's serve_target), each said in one place: the target
 * (tokens/s, 0 < target <= GP_AMOUNT_MAX) and the ITL bound (s, at most
 * an hour) checked (GP_OK or GP_EINVAL); a target past GP_COUNT_MAX GPUs
 * (GP_EINVAL); and why no batch meets the bound, one sequence alone
 * taking itl1 s, written into buf. */
int infer_target_check(double target, double itl_limit, gp_error *err);
int infer_target_too_big(double target, gp_error *err);
void infer_no_batch_why(char *buf, size_t n, double itl_limit, double itl1);

/* The custom all-reduce's wire time (engine/infer.c custom_ar_time, its
 * fit to vLLM PR #24111 on H100) for `bytes` over n GPUs of a scale-up
 * link of bw bytes/s, without its per-call latency: one = 1 the one-stage
 * form (each rank reads its n - 1 peers' whole buffers), 0 the two-stage
 * reduce-scatter + all-gather.  0 where bw, n - 1 or bytes is not
 * positive.  The MoE serving model's fused all-reduce (serve_a2a.c
 * sx_ar_fused) moves its bytes the same way. */
double infer_custom_ar_wire(int one, double n, double bytes, double bw);

#endif
