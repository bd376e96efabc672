/*
 * roofline.h - time of one operator on one device.
 *
 * time = max(FLOP / achievable compute, bytes / achievable bandwidth)
 *        + per-kernel launch overhead
 * (Williams, Waterman, Patterson, "Roofline", CACM 52(4), 2009), where the
 * ceilings are the catalog's achievable fractions of the dense peaks, and
 * achievable compute further depends on the GEMM shape (tile and wave
 * quantisation, pipeline fill along K; see roof_gemm_eff).
 *
 * Units: FLOP, bytes, seconds, FLOP/s, bytes/s.  The caller owns every
 * struct; nothing allocates.
 */
#ifndef GP_ROOFLINE_H
#define GP_ROOFLINE_H

#include "common.h"

/* The rate of a weight-streaming GEMV or skinny GEMM as a fraction of a
 * streaming copy, where the device gives no stream fraction of its own
 * (roof_device.stream_frac): its source and fit are in roofline.c,
 * beside ROOF_MEM_FILL.  gpuplan.core exports it as ROOF_GEMV_BW for
 * the Lua rules that price a kernel against it. */
#define ROOF_GEMV_BW 0.94

/* One accelerator as the roofline sees it. */
/* Points of a fused attention kernel's length curve (roof_device
 * attn_long_q / attn_long_r): the published bars past the reference. */
#define ROOF_ATTN_LONG_MAX 8

typedef struct roof_device {
	double peak[GP_DTYPE_COUNT];   /* dense FLOP/s per precision;
	                                  0 = none */
	double gemm_frac[GP_DTYPE_COUNT]; /* achievable fraction of peak on a
	                                     large GEMM, (0, 1]; 0 = none */
	double mem_bw;        /* memory (HBM/GDDR) bandwidth, bytes/s */
	double hbm_frac;      /* achievable fraction of mem_bw, (0, 1] */
	double launch;        /* s per kernel launched from the host stream */
	double graph_launch;  /* s per kernel inside a CUDA graph */
	int sms;              /* streaming multiprocessors (compute units);
	                         0 = unknown: no wave-quantisation term */
	double attn_fwd;      /* fraction of the 16-bit dense peak the fused
	                         attention kernel sustains at long
	                         sequences, forward, (0, 1]; 0 = priced as a
	                         GEMM of its shape */
	double attn_bwd;      /* the same for its backward pass */
	int attn_square;      /* 1: the kernel is handed an explicit mask
	                         and computes every tile of the s x s
	                         score square (PyTorch SDPA's memory-
	                         efficient backend under a padding mask);
	                         0: a causal kernel skips the masked half */
	int attn_head_pow2;   /* 1: the kernel tiles the head dim at the
	                         next power of two (at least 16), so a
	                         head dim between two runs the padded
	                         tile's MMAs (HazyResearch's Triton
	                         FlashAttention); 0: a tile of its own */
	double attn_fp8;      /* an FP8 attention kernel's fraction of the
	                         FP8 peak as a share of attn_fwd (the 16-bit
	                         kernel's of the 16-bit peak), (0, 1]; 0 =
	                         not measured: the same fraction */
	double attn_dropout;  /* the fused attention kernel's time with
	                         dropout on the probabilities over its
	                         time without (the Philox mask generated
	                         in the forward, regenerated in the
	                         backward), >= 1; 0 = not measured: not
	                         priced */
	double attn_exp_dim;  /* head dim below which the softmax's
	                         exponentials, not the tensor cores, bound
	                         the fused attention kernel (roofline.c
	                         roof_attn_eff); 0 = no such bound */
	double attn_ref_q;    /* causal prompt length (tokens) the fused
	                         attention kernel's attn_fwd / attn_bwd
	                         were read at; 0 = 8192 (roofline.c
	                         ATTN_REF_Q) */
	int attn_long_n;      /* points of the kernel's published length
	                         curve past attn_ref_q, 0..ROOF_ATTN_LONG_MAX;
	                         0 = its rate is flat past the reference */
	double attn_long_q[ROOF_ATTN_LONG_MAX]; /* their prompt lengths,
	                         increasing, each > attn_ref_q */
	double attn_long_r[ROOF_ATTN_LONG_MAX]; /* the kernel's published
	                         rate there over its rate at attn_ref_q,
	                         1..ROOF_MAX_ATTN_LONG */
	double attn_narrow_dim; /* the head dim up to which the kernel's
	                         narrow curve below applies (its narrower
	                         tile's kernel); 0 = none */
	int attn_narrow_n;    /* points of that curve, 0..ROOF_ATTN_LONG_MAX;
	                         0 = a narrow head runs at the fractions of
	                         the head dim they were read at (128) */
	double attn_narrow_q[ROOF_ATTN_LONG_MAX]; /* causal prompt lengths
	                         of its points, increasing */
	double attn_narrow_r[ROOF_ATTN_LONG_MAX]; /* the kernel's published
	                         rate at head dim attn_narrow_dim over its
	                         rate at head dim 128, at that length */
	int attn_rel_n;       /* points of the kernel's release curve,
	                         0..ROOF_ATTN_LONG_MAX: the stated library
	                         release's published rate over the one the
	                         fractions and curves above stand for, by
	                         causal prompt length; 0 = that release */
	double attn_rel_q[ROOF_ATTN_LONG_MAX]; /* their prompt lengths,
	                         increasing */
	double attn_rel_r[ROOF_ATTN_LONG_MAX]; /* the rate factor there,
	                         ROOF_MIN_FRAC..ROOF_MAX_ATTN_LONG */
	int attn_unm_n;       /* points of the kernel's measured rates
	                         without a mask beside its causal ones,
	                         0..ROOF_ATTN_LONG_MAX; 0 = a call without a
	                         mask runs at the causal rate */
	double attn_unm_q[ROOF_ATTN_LONG_MAX];  /* their lengths (query and
	                         key tokens alike), increasing */
	double attn_unm_uf[ROOF_ATTN_LONG_MAX]; /* forward rate without a
	                         mask there (TFLOP/s, as measured) */
	double attn_unm_cf[ROOF_ATTN_LONG_MAX]; /* forward rate causal there */
	double attn_unm_ub[ROOF_ATTN_LONG_MAX]; /* backward without a mask */
	double attn_unm_cb[ROOF_ATTN_LONG_MAX]; /* backward causal */
	double stream_frac[GP_DTYPE_COUNT]; /* rate at which a memory-bound
	                                  GEMM computing at this precision
	                                  streams its operands, as a
	                                  fraction of the streaming copy
	                                  (mem_bw hbm_frac), (0, 1]; 0 =
	                                  the common ROOF_GEMV_BW */
	double block_fp8;     /* a block-scaled FP8 GEMM's rate (MXFP8's
	                         1x32 E8M0 scales) as a share of the
	                         per-tensor FP8 GEMM's at the same shape,
	                         (0, 1]; 0 = not measured: the same rate */
	double fp8_non_tn;    /* a per-tensor-scaled FP8 GEMM's rate with an
	                         operand MN-major (the NN dgrad and NT
	                         wgrad Transformer Engine hands cuBLASLt
	                         where the part takes them: sm100, no fp8
	                         transposes written) as a share of its TN
	                         rate, (0, 1]; 0 = the part runs FP8 GEMMs
	                         TN only (Hopper, Ada: TE writes the
	                         transposed copies): the same rate */
	double fp64;          /* FLOP/s of a float64 GEMM (cuBLAS DGEMM:
	                         the FP64 tensor cores' peak where the GPU
	                         has them, else its FP64 units'); 0 =
	                         unknown */
	double cta_latency;   /* s a CTA waits for each K stage when the
	                         GEMM library runs every GEMM unsplit (no
	                         split-K), one CTA per output tile
	                         (roofline.c unsplit_time); 0 = the library
	                         splits K to fill the SMs, not priced */
	double cta_stage;     /* bytes of A and B one K stage holds at most
	                         (the CU's LDS), with cta_latency */
	double cta_stage_k;   /* bytes of K one stage spans at most, with
	                         cta_latency */
	double mma_n_step;    /* tokens step of the tensor-core MMA's N
	                         side when a library GEMM of few tokens
	                         swaps them onto it (Hopper's wgmma: 8,
	                         roofline.c SWAP_MAX_N); 0 = no swapped
	                         tiles priced */
	double vec16_x;       /* the packed 16-bit (f16x2 / bf16x2) FMA's
	                         non-tensor rate over the fp32 rate, the
	                         units a weight-only GEMV's dot products run
	                         on (roofline.c ROOF_VEC16); 0 = not known,
	                         priced at the fp32 rate */
	double acc16_x;       /* the 16-bit tensor rate with FP16
	                         accumulation over the stored 16-bit peak
	                         (FP32 accumulation): 2 on GeForce cards,
	                         whose FP32-accumulate rate is halved (Ada
	                         whitepaper: RTX 4090 330.3 against 165.2
	                         TFLOPS dense); read only for a runtime that
	                         multiplies in FP16 accumulation
	                         (infer_cfg.acc16_gemm); 0 = the same rate */
	double eager_hbm;     /* the rate PyTorch's own memory-bound kernels
	                         (eager ATen elementwise, reductions,
	                         norms) stream at, as a share of hbm_frac,
	                         (0, 1]; 0 = not measured: the same rate
	                         (train_prep.c prepare) */
} roof_device;

typedef enum roof_bound { ROOF_COMPUTE = 0, ROOF_MEMORY = 1 } roof_bound;

/* One operator: FLOP and bytes moved to/from device memory, the GEMM shape
 * when it is one (output m x n, reduction depth k, `count` independent
 * GEMMs of that shape, e.g. one per attention head; m = n = k = 0: not a
 * GEMM, the compute ceiling is then the plain achievable fraction).
 * Build one zeroed -- a designated initialiser ("roof_op op = { .flop =
 * ..., ... }") or memset -- and name the fields that apply: every
 * field's 0 is its neutral value (no GEMM shape, count 1, a tiled GEMM
 * that multiplies what it reads, each weight converted once, the
 * library's tile and rate), so a field added later is 0 where a builder
 * does not know it, never a stack's leftover. */
typedef struct roof_op {
	const char *name;     /* static string, not copied */
	double flop;
	double bytes;
	double m, n, k;
	double count;         /* 0 is read as 1 */
	gp_dtype prec;        /* compute precision; must have a peak */
	/* Small-M kernels (decode GEMMs of a few tokens; roofline.c): */
	int gemv;             /* 1: a CUDA-core GEMV kernel -- no tensor-
	                         core tile, no padding of m; its FLOP and
	                         the dequantisation run on the fp32 vector
	                         units.  2: the same, its dot products as
	                         packed 16-bit FMAs (roof_device.vec16_x;
	                         roofline.c ROOF_VEC16).  0: tensor-core
	                         tiles (m padded to the 16-wide tile edge) */
	double dequant;       /* vector-unit FLOP per weight element (n k
	                         count of them) spent converting a stored
	                         weight format to the MMA's inputs; 0 when
	                         the GEMM multiplies what is stored */
	double dequant_rep;   /* times each weight is converted: a kernel
	                         that widens its weight tile again in each
	                         of its M blocks (serve_cfg.moe_upcast);
	                         0 or 1: once; 0 < rep < 1 is refused */
	double m_tile;        /* > 0: the kernel's M tile is fixed, m_tile
	                         rows up to m_tile tokens and 128 above
	                         (DeepGEMM's SM90 GEMMs: 64); under 64, a
	                         swapped kernel's token block, repeated at
	                         any m (DeepGEMM's swapAB masked GEMM:
	                         32); 0: the edge of roof_gemm_eff (16-row
	                         swapped tiles at small m) */
	double stream;        /* > 0: the rate this GEMM kernel streams
	                         its bytes at, as a fraction of the
	                         device's streaming copy, in place of the
	                         device's GEMM rate (stream_frac, else
	                         ROOF_GEMV_BW): a runtime's measured
	                         weight-only kernel (infer_cfg.wo_stream);
	                         0: the device's */
	int spread;           /* 1: a grouped GEMM of `count` groups whose
	                         row counts vary about their mean m (the
	                         experts a routed batch touches): each
	                         group pays its own whole M tiles, priced
	                         as their expected number (roofline.c
	                         roof_expected_tiles); above 1: the same,
	                         each group's rows first padded up to a
	                         multiple of `spread` rows (Megatron-Core's
	                         fp8 row padding), which costs whole
	                         padded blocks when coarser than the M
	                         tile; 0: every group has m rows */
	double bf16_x;        /* > 0: the kernel computes at no more than
	                         this multiple of the device's achievable
	                         16-bit GEMM rate at the op's shape (peak
	                         bf16 x gemm fraction x shape efficiency),
	                         whatever prec's own rate: a kernel that
	                         does not reach its precision's tensor
	                         rate (infer_cfg.moe_fp8_bf16_x, Triton's
	                         fp8 fused MoE), or a 16-bit one below the
	                         library's (infer_cfg.wo_bf16_x, vLLM's
	                         Marlin on the A100); 0: prec's rate; else
	                         ROOF_BF16_X_MIN..ROOF_BF16_X_MAX */
	int no_split;         /* 1: the kernel never splits its K loop
	                         over more CTAs, so its tiles alone fill
	                         the SMs' waves (FlashAttention-2's varlen
	                         call on a prompt: roofline.c wave_eff);
	                         0: the best split-K, as a library's
	                         heuristics pick */
} roof_op;

/* roof_op.bf16_x's bounds.  Below 0.01 the cap is under the smallest
 * achievable fraction a device may give (roofline.c ROOF_MIN_FRAC), and
 * a denormal one made FLOP / rate infinite and the op's time NaN.  The
 * upper bound is the branch's own: the kernel the cap prices multiplies
 * fp8, whose tensor rate is twice bf16's, so a cap past 2 leaves it at
 * that rate and 4 is room to spare (lua/gpuplan/infer.lua
 * moe_fp8_bf16_x_of clamps to it); a weight-only kernel multiplying in
 * 16 bits is at its library rate from 1 up.  infer.c and serve.c check
 * their moe_fp8_bf16_x, and infer.c the wo_bf16_x (serve's too, through
 * infer_check), against the same bounds. */
#define ROOF_BF16_X_MIN 0.01
#define ROOF_BF16_X_MAX 4.0

typedef struct roof_result {
	double time;          /* s, overlap of t_compute and t_memory (max
	                         off-GEMM) + t_launch */
	double t_compute;     /* s */
	double t_memory;      /* s */
	double t_launch;      /* s */
	double intensity;     /* FLOP / byte (0 when bytes == 0) */
	double ridge;         /* FLOP / byte where the achievable ceilings
	                         meet */
	double ridge_peak;    /* FLOP / byte at the datasheet peaks */
	double shape_eff;     /* GEMM shape efficiency in (0, 1]; 1 off-GEMM */
	double compute_rate;  /* FLOP/s used for t_compute */
	double mem_rate;      /* bytes/s streaming rate of t_memory (the
	                         fixed fill is added on top) */
	double mem_eff;       /* bytes / t_memory as a fraction of the
	                         streaming rate mem_bw * hbm_frac, (0, 1] */
	roof_bound bound;
} roof_result;

/* Check a device: each peak 0 or 1e6..1e21 FLOP/s (at least one set),
 * each gemm_frac 0 or in [0.01, 1], mem_bw 1e6..1e21 B/s, hbm_frac in
 * [0.01, 1], launch overheads 0..1 s, sms 0..GP_COUNT_MAX.  GP_OK or
 * GP_EINVAL with the field named. */
int roof_device_check(const roof_device *d, gp_error *err);

/* Efficiency in (0, 1] of a GEMM of `count` x (m x n x k) relative to the
 * large square GEMM the catalog's gemm_frac was measured on: tile
 * quantisation x wave quantisation (with split-K when the tiles do not fill
 * the SMs) x pipeline fill along k.  Returns 1 for m, n or k <= 0;
 * a dimension in (0, 1) is read as 1. */
double roof_gemm_eff(const roof_device *d, double m, double n, double k,
                     double count);

/* Expected whole tiles of `tile` rows over a group of X rows,
 * E[ceil(X / tile)], X Poisson with mean `mean` (touched 0), or X the
 * Poisson count of a group known to have a row, `mean` the mean of those
 * (touched 1: zero-truncated, mean >= 1).  0 for mean <= 0 or tile <= 0
 * (touched 0); 1 for mean <= 1 (touched 1). */
double roof_expected_tiles(double mean, double tile, int touched);

/* A fused attention kernel's rate on a call without a mask of u tokens
 * (the length whose square has the call's scores) over its rate on a
 * causal call of q tokens, forward or backward (bwd), from the device's
 * measured curves of both (attn_unm_*), each linear in log2 of the length
 * between its points and held past either end; 1 without them. */
double roof_attn_unmasked(const roof_device *d, double u, double q, int bwd);

/* Shape factor of a fused attention kernel (FlashAttention-2/3, cuDNN)
 * against the conditions its catalog fraction (roof_device attn_fwd,
 * attn_bwd) was measured in, a causal prompt of attn_ref_q tokens (8k
 * unless the device says) at head dim 128: roof_gemm_eff's terms for
 * output m x n over k keys, count of them, the causal diagonal's waste for
 * a prompt of causal_q tokens (0: not causal, as decode), and for a head
 * dim n below the device's attn_exp_dim the exponentials' bound, capped at
 * 1; a causal prompt longer than the reference times the kernel's length
 * curve (attn_long_q / attn_long_r; none: 1), so above 1 only for a kernel
 * whose published rate keeps rising past its reference; a kernel that pads
 * the head dim to a power of two (attn_head_pow2) times the padded tile's
 * useful share, n over its block, against 128's (roofline.c). */
double roof_attn_eff(const roof_device *d, double m, double n, double k,
                     double count, double causal_q);

/* Time of a GEMM whose compute takes tc and memory traffic tm seconds
 * on their own roofs (imperfect overlap near the ridge; constants and
 * source in roofline.c): hypot(tc, tm) when tc >= tm; when memory-bound,
 * tm + (tc/tm)^2 (hypot(tc, tm) - tm).  0 when both are 0. */
double roof_overlap(double tc, double tm);

/* Ridge point of precision p in FLOP/byte: achievable (achievable = 1:
 * peak * gemm_frac / (mem_bw * hbm_frac)) or datasheet (0: peak / mem_bw).
 * Returns 0 when the device has no peak for p. */
double roof_ridge(const roof_device *d, gp_dtype p, int achievable);

/* Time one operator; graphs = 1 uses graph_launch, 0 uses launch.
 * A GEMM's compute is t_c = FLOP / (peak f_gemm shape_eff) on the tensor
 * cores, or its dequantisation dequant n k count rep / fp32 peak on
 * the vector units if that is longer (the two pipelines overlap; rep =
 * dequant_rep, at least 1); with
 * op->gemv, (FLOP + dequant n k count) / fp32 peak and shape_eff 1
 * (gemv 2: the FLOP at vec16_x times the fp32 peak).
 * t_memory = bytes / (mem_bw * hbm_frac * g) + fill, g = 0.94 for a GEMM
 * (weight-streaming GEMV) and 1 otherwise, fill = 3.9 us per kernel that
 * moves bytes (constants and their source in roofline.c).  time =
 * roof_overlap(t_compute, t_memory) + t_launch for a GEMM (m, n, k > 0),
 * max(t_compute, t_memory) + t_launch otherwise.
 * d is checked with roof_device_check.  GP_OK, or GP_EINVAL for a bad
 * device, negative / NaN FLOP or bytes (or over 1e30), GEMM dimensions
 * over 1e15, dequant outside 0..64, dequant_rep neither 0 nor in
 * 1..1e15, gemv
 * not 0..2, m_tile outside 0..128,
 * bf16_x neither 0 nor in ROOF_BF16_X_MIN..ROOF_BF16_X_MAX,
 * or a precision the device has no peak for. */
int roof_op_time(const roof_device *d, const roof_op *op, int graphs,
                 roof_result *out, gp_error *err);

/* roof_op_time on a device already checked by roof_device_check: the
 * op's checks and arithmetic, not the device's checks (a serving step's
 * rows, whose entry points check the device once; the per-dtype checks
 * were a fifth of a serving evaluation). */
int roof_checked_op_time(const roof_device *d, const roof_op *op,
                         int graphs, roof_result *out, gp_error *err);

/* Seconds of one op on a device already checked by roof_device_check,
 * with an op whose fields are in the ranges roof_op_time checks: the
 * same arithmetic as roof_op_time without the checks (the training
 * step's and the sweep's fast path).  Returns the time only. */
double roof_time(const roof_device *d, const roof_op *op, int graphs);

/* roof_time of an op that moves `bytes` and computes nothing (flop 0,
 * not a GEMM: its precision does not enter), without the op: the
 * training step's optimizer steps and memory-bound passes. */
double roof_mem_time(const roof_device *d, double bytes, int graphs);

/* "compute" or "memory". */
const char *roof_bound_name(roof_bound b);

#endif
