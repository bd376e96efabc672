/*
 * roofline.c - operator time on a device: max(compute, memory) + launch.
 *
 * Roofline: Williams, Waterman, Patterson, CACM 52(4) 65-76, 2009.  The
 * ceilings are achievable fractions of the dense datasheet peaks (catalog
 * data per GPU / arch).  The GEMM shape term follows NVIDIA's "Matrix
 * Multiplication Background User's Guide" (DU-09799-001, 2023), ch. 3:
 * tile quantisation (3.1) and wave quantisation (3.2).
 */
#include "roofline.h"

#include <math.h>
#include <string.h>

/* Output tile of a large cuBLAS GEMM: 128 x 128 is the middle of the tile
 * sizes cuBLAS picks (DU-09799-001 sec. 2.3 lists 256x128 ... 64x64). */
#define ROOF_TILE 128.0
/* Smallest tile edge along a skinny dimension.  The warp-level tensor-core
 * MMA is m16n8k16 on Ampere/Hopper (PTX ISA, "Matrix shape"), and the
 * decode kernels the runtimes ship put the few tokens on a 16-wide edge
 * whatever the format: vLLM's CUTLASS fp8 GEMM for M in [1, 16] uses
 * 64 x 16 x 256 tiles with A and B swapped (csrc/quantization/cutlass_w8a8
 * sm90 dispatch, sm90_fp8_config_M16), Marlin 16-row activation tiles
 * (IST-DASLab/marlin: "close to ideal speedups up to batchsizes of 16-32"),
 * Machete 128 x 16 schedules, TensorRT-LLM's fpA_intB CUTLASS GEMM a
 * 16-row CTA tile, cuBLAS its small-N tiles.  So a decode batch of 1-16 on
 * tensor cores pays for 16 tokens (roof_gemm_eff's tile term). */
#define ROOF_MIN_EDGE 16.0
/* The widest N of a Hopper warpgroup MMA, .m64n256k16 (PTX ISA
 * wgmma.mma_async shapes): the most tokens a swapped tile covers (the swapped tiles, above k_fill). */
#define SWAP_MAX_N 256.0
/* Not every kernel swaps: DeepGEMM's SM90 GEMMs (the block-scaled fp8
 * linears and grouped expert GEMMs SGLang and DeepSeek run for
 * DeepSeek-V3's checkpoint) keep the tokens on the M side of a 64-row
 * WGMMA tile -- "block_ms = (64 if m <= 64 else 128, )", with the TODO
 * "for some cases, smaller M block is better" (deep_gemm/jit_kernels/
 * config.py, get_best_configs) -- so a decode step of 1 to 64 tokens pays
 * for 64.  Swapped-AB builds (FlashInfer's DeepGEMM, SGLang PR 15514: "we
 * can benefit from SwapAB ... when the M dimension is < 32") put them on
 * the 16-wide N side again.  The op says which (roof_op.m_tile).  On a
 * card whose tensor throughput is cut against its bandwidth (H20: an fp8
 * ridge of 61 FLOP/B, H100's 486) the 64-row tile makes a batch-1 GEMM
 * compute-bound: 128 FLOP per fp8 weight byte. */
/* Small-M kernels on the CUDA cores.  Several runtimes do not use tensor
 * cores for a decode GEMM of a few tokens: cuBLAS runs gemv2T for a
 * single row, TensorRT-LLM's weight-only plugins (weightOnlyQuantMatmul,
 * weightOnlyGroupwiseQuantMatmul) a batched GEMV while m < 5
 * (SMALL_M_FAST_PATH), llama.cpp mul_mat_vec_q up to 8 columns
 * (MMVQ_MAX_BATCH_SIZE), bitsandbytes gemv_4bit for one token.  Such a
 * kernel pads nothing: m 2 FLOP per weight on the fp32 vector units (an
 * FMA per lane per clock), plus the dequantisation (roof_op.dequant,
 * priced the same way whichever kernel runs; infer.c has the counts).
 * Which family runs is the runtime's choice and comes in roof_op.gemv;
 * the arithmetic is the same for every dtype. */
/* ROOF_VEC16: TensorRT-LLM's batched GEMV (roof_op.gemv 2) does not use
 * the fp32 lanes for its dot products: weightOnlyBatchedGemv/utility.h
 * mma() issues one "fma2" -- "__hfma2(a, b, c)" on half2 or bf162 -- per
 * weight pair per row of m into a 16-bit accumulator (kernel.h
 * "TypeA tile_acc[CtaM * CtaN]"), so its m 2 FLOP per weight run at the
 * card's non-tensor 16-bit rate: roof_device.vec16_x times the fp32 one
 * (NVIDIA, "NVIDIA Hopper Architecture In-Depth", table 3: A100 "Peak
 * BF16 TFLOPS (non-Tensor)" 39 against FP32 19.5 (FP16 78), H100 SXM5
 * 120 / 60, H100 PCIe 96 / 48).  A card without vec16_x is priced at
 * the fp32 rate (x1: GA102 and Ada run f16x2 at the fp32 rate).  The
 * dequantisation keeps its FP32-slot count (infer.c), the converter's
 * lop3s issuing on the integer lanes. */
#define ROOF_MAX_DEQUANT 64.0
/* Pipeline fill + epilogue of one output tile, in K elements: a
 * multistage mainloop (CUTLASS "Efficient GEMM", software pipelining)
 * first loads about two k-tiles of 64 before the first MMA and then writes
 * the tile out; a tile whose loop is only k long therefore runs at about
 * k / (k + 128) of its steady rate. */
#define ROOF_K_FILL 128.0
/* The catalog's large-GEMM fractions are measured on GEMMs with K in the
 * thousands (e.g. 8192^3); the K term is normalised to that depth so the
 * catalog fraction is not counted twice. */
#define ROOF_K_REF 8192.0
/* Largest split-K factor a library uses to fill idle SMs (cuBLAS and
 * CUTLASS split-K / stream-K: Osama et al., PPoPP 2023).  Each slice is
 * kept at least 256 deep so its own pipeline fill does not dominate. */
#define ROOF_MAX_SPLIT 16
#define ROOF_MIN_SLICE 256.0
/* Memory side of a kernel (decode GEMV, norms, attention over a short
 * cache): t = bytes / (bw f_hbm f_op) + ROOF_MEM_FILL.
 * ROOF_MEM_FILL is the fixed part of every memory-bound kernel that a
 * streaming benchmark amortises away: the first DRAM round trips before
 * the pipeline is full, the tail while the last CTAs drain, and the
 * dependency gap to the next kernel of the graph.  ROOF_GEMV_BW
 * (roofline.h, where the Lua side reads it too) is the rate of a
 * weight-streaming GEMV / skinny GEMM relative to a streaming copy (its
 * CTAs also reduce along K and write partial sums).
 * Source: gpt-fast README (pytorch-labs, benchmarks on A100-80GB, batch 1,
 * torch.compile with CUDA graphs, bf16): Llama-2-7B TP1 104.9 tok/s,
 * Llama-2-70B TP2 21.32 tok/s, "empirically peak bandwidth is about 1700
 * GB/s" (= the catalog's streaming 0.85 x 2039).  Fitting this model's
 * step (292 and 724 kernels, 13.2 and 69 GB of weights per GPU) to both
 * runs gives 3.44e-14 s/B of extra GEMV time (1 / 0.94 - 1 of the
 * streaming rate) and 3.9 us per kernel beyond the graph launch; the same
 * constants put Llama-3.1-8B TP1 within 1% of its 93.89 tok/s. */
#define ROOF_MEM_FILL 3.9e-6
/* Overlap of the two roofs inside one GEMM kernel.  The roofline's
 * max(t_c, t_m) assumes the weight stream and the MMAs overlap perfectly;
 * a tiled GEMM overlaps them only in the steady state of its pipeline, so
 * near the ridge it runs below both roofs.  The time is taken as the
 * smooth maximum (t_c^p + t_m^p)^(1/p): p = infinity is the roofline, p = 1
 * no overlap at all.  Far from the ridge (decode GEMV, large prefill GEMMs)
 * the two agree within a few percent; at t_m ~ t_c the p-norm is up to
 * 2^(1/p) slower.
 * Source: DeepGEMM README performance tables (deepseek-ai/DeepGEMM, 2025,
 * H800 = GH100 with 132 SMs, 3.35 TB/s, FP8 1979 TFLOPS dense): fixed
 * N = 4096, K = 7168, the FP8 GEMM reaches 1304 TFLOPS at M = 4096, 1233
 * at M = 1024, 1040 at 2 x M = 512 and 932 at 4 x M = 256, while tile and
 * wave quantisation give all four the same shape efficiency (0.97).
 * The overlap is not symmetric: on the memory-bound side (decode, M <=
 * 128) the README's shapes run at the streaming roof or faster, because
 * the few MMAs slot into the gaps of the weight stream; there only the
 * fraction (t_c / t_m)^2 of the p-norm's excess is exposed (continuous at
 * t_c = t_m, vanishing for a GEMV).  Over the README's 24 shapes (M = 64
 * ... 4096) this model has a median |error| of 12% and a 90th percentile
 * of 29%, against 16% and 39% with the plain max; the shapes near the
 * ridge (M = 256 ... 1024) go from -26% ... -9% to -10% ... +1%. */
#define ROOF_OVERLAP_P 2
#define ROOF_OVERLAP_MEM 2

static int bad(double x)
{
	return !gp_finite(x) || x < 0.0;
}

/* Bounds of a device, wide enough for any real accelerator and narrow
 * enough that FLOP / rate and bytes / bandwidth stay finite for work up
 * to ROOF_MAX_WORK: a peak below 1 MFLOP/s, a bandwidth below 1 MB/s or
 * an achievable fraction below 1% is no accelerator (a denormal peak
 * made every time inf), and a launch overhead over 1 s is no kernel. */
#define ROOF_MIN_RATE 1e6
#define ROOF_MAX_RATE 1e21
#define ROOF_MIN_FRAC 0.01
#define ROOF_MAX_LAUNCH 1.0
/* Largest head dim a catalog may give for the exponentials' balance
 * (schema.lua exp_dim: 1..4096). */
#define ROOF_MAX_EXP_DIM 4096.0
/* Largest slowdown a catalog may give a fused attention kernel for its
 * dropout (schema.lua attention's dropout: 1..16; the largest measured,
 * cuDNN's packed layout on Blackwell, is 7x). */
#define ROOF_MAX_ATTN_DROPOUT 16.0
/* Largest rise a fused attention kernel's length curve may give past its
 * reference (schema.lua attention's long: the published FlashAttention-1
 * bars rise 1.09x from 4k to 16k tokens; 4x is no kernel's). */
#define ROOF_MAX_ATTN_LONG 4.0
/* Longest reference prompt a catalog may give (schema.lua seq: 2^24). */
#define ROOF_MAX_ATTN_SEQ 16777216.0
/* Largest FLOP or bytes of one operator, and largest GEMM dimension or
 * count: 1e30 FLOP is 10^9 s of a zettaFLOP/s machine; dimensions of
 * 1e15 keep m n count in range. */
#define ROOF_MAX_WORK 1e30
#define ROOF_MAX_DIM 1e15
/* The smallest tile edge of an unsplit GEMM library's kernels, the first
 * of unsplit_time's edges (16 to 256): AMD's tuned a8w8 kernels for
 * MI300X go down to MPerBlock 16 ("a8w8_rowwise_256x16x64x512", ROCm/aiter
 * a8w8_tuned_gemm.csv, commit fbb52dd). */
#define UNSPLIT_EDGE_MIN 16.0

/* A per-precision fraction (achievable.gemm, achievable.stream): 0 (not
 * given) or in [ROOF_MIN_FRAC, 1]. */
static int bad_frac(double x)
{
	return bad(x) || x > 1.0 || (x != 0.0 && x < ROOF_MIN_FRAC);
}

/* The causal prompt (tokens) the catalog's attention fractions were
 * measured at unless the device names its own (attn_ref_q; roof_attn_eff
 * below). */
#define ATTN_REF_Q 8192.0

static double attn_ref_q(const roof_device *d)
{
	return d->attn_ref_q > 0.0 ? d->attn_ref_q : ATTN_REF_Q;
}

/* An attention kernel's curve of n {seq, rate} points (attn_long,
 * attn_narrow): at most ROOF_ATTN_LONG_MAX, the lengths growing past
 * `after` within 1..ROOF_MAX_ATTN_SEQ tokens, each rate (over `over`) in
 * [ROOF_MIN_FRAC, ROOF_MAX_ATTN_LONG]; `what` names the curve. */
static int attn_curve_check(const char *what, const char *over, int n,
			    const double *q, const double *r, double after,
			    gp_error *err)
{
	int i;

	if (n < 0 || n > ROOF_ATTN_LONG_MAX)
		return gp_fail(err, "device achievable.attention %s has %d "
		               "points (at most %d)", what, n,
		               ROOF_ATTN_LONG_MAX);
	for (i = 0; i < n; i++) {
		double prev = i > 0 ? q[i - 1] : after;

		if (bad(q[i]) || q[i] <= prev || q[i] < 1.0 ||
		    q[i] > ROOF_MAX_ATTN_SEQ)
			return gp_fail(err, "device achievable.attention %s "
			               "point %d: seq must exceed %g and be "
			               "1..%g (got %g)", what, i + 1, prev,
			               ROOF_MAX_ATTN_SEQ, q[i]);
		if (bad(r[i]) || r[i] < ROOF_MIN_FRAC ||
		    r[i] > ROOF_MAX_ATTN_LONG)
			return gp_fail(err, "device achievable.attention %s "
			               "point %d: its rate over %s must be in "
			               "[%g, %g] (got %g)", what, i + 1, over,
			               ROOF_MIN_FRAC, ROOF_MAX_ATTN_LONG, r[i]);
	}
	return GP_OK;
}

/* The kernel's no-mask rates beside its causal ones (attn_unm_*): the
 * lengths as attn_curve_check's, and at each the no-mask rate over the
 * causal one, forward and backward, within that check's bounds -- a
 * call without a mask runs the causal call's tiles without the
 * diagonal's masking, and the measured quotients are 0.98-1.36 (cuDNN
 * 9.19 on an H200, catalog/archs.lua HOPPER_CUDNN_UNMASKED); a zero,
 * negative or non-finite rate makes the quotient fail the same check. */
static int attn_unmasked_check(const roof_device *d, gp_error *err)
{
	double fr[ROOF_ATTN_LONG_MAX], br[ROOF_ATTN_LONG_MAX];
	int i, n = d->attn_unm_n;

	if (n < 0 || n > ROOF_ATTN_LONG_MAX)
		return attn_curve_check("unmasked", "the causal one", n,
					d->attn_unm_q, fr, 0.0, err);
	for (i = 0; i < n; i++) {
		fr[i] = d->attn_unm_uf[i] / d->attn_unm_cf[i];
		br[i] = d->attn_unm_ub[i] / d->attn_unm_cb[i];
	}
	if (attn_curve_check("unmasked forward", "the causal one", n,
			     d->attn_unm_q, fr, 0.0, err) ||
	    attn_curve_check("unmasked backward", "the causal one", n,
			     d->attn_unm_q, br, 0.0, err))
		return GP_EINVAL;
	return GP_OK;
}

int roof_device_check(const roof_device *d, gp_error *err)
{
	int i, any = 0;

	if (!d)
		return gp_fail(err, "device is missing");
	for (i = 0; i < GP_DTYPE_COUNT; i++) {
		const char *nm = gp_dtype_name((gp_dtype)i);

		if (bad(d->peak[i]) || (d->peak[i] != 0.0 &&
		    (d->peak[i] < ROOF_MIN_RATE ||
		     d->peak[i] > ROOF_MAX_RATE)))
			return gp_fail(err, "device peak.%s must be 0 or "
			               "%g..%g FLOP/s (got %g)", nm,
			               ROOF_MIN_RATE, ROOF_MAX_RATE,
			               d->peak[i]);
		if (bad_frac(d->gemm_frac[i]))
			return gp_fail(err, "device achievable.gemm.%s must be"
			               " 0 or in [%g, 1] (got %g)", nm,
			               ROOF_MIN_FRAC, d->gemm_frac[i]);
		if (bad_frac(d->stream_frac[i]))
			return gp_fail(err, "device achievable.stream.%s must "
			               "be 0 or in [%g, 1] (got %g)", nm,
			               ROOF_MIN_FRAC, d->stream_frac[i]);
		if (d->peak[i] > 0.0)
			any = 1;
	}
	if (!any)
		return gp_fail(err, "device has no compute peak");
	if (bad(d->mem_bw) || d->mem_bw < ROOF_MIN_RATE ||
	    d->mem_bw > ROOF_MAX_RATE)
		return gp_fail(err, "device mem_bw must be %g..%g B/s (got %g)",
		               ROOF_MIN_RATE, ROOF_MAX_RATE, d->mem_bw);
	if (bad(d->hbm_frac) || d->hbm_frac < ROOF_MIN_FRAC ||
	    d->hbm_frac > 1.0)
		return gp_fail(err, "device achievable.hbm must be in [%g, 1] "
		               "(got %g)", ROOF_MIN_FRAC, d->hbm_frac);
	if (bad(d->launch) || d->launch > ROOF_MAX_LAUNCH)
		return gp_fail(err, "device launch must be 0..%g s (got %g)",
		               ROOF_MAX_LAUNCH, d->launch);
	if (bad(d->graph_launch) || d->graph_launch > ROOF_MAX_LAUNCH)
		return gp_fail(err, "device graph_launch must be 0..%g s "
		               "(got %g)", ROOF_MAX_LAUNCH, d->graph_launch);
	if (d->sms < 0 || d->sms > GP_COUNT_MAX)
		return gp_fail(err, "device sms must be 0..%d (got %d)",
		               GP_COUNT_MAX, d->sms);
	if (bad(d->attn_fwd) || d->attn_fwd > 1.0 ||
	    (d->attn_fwd != 0.0 && d->attn_fwd < ROOF_MIN_FRAC) ||
	    bad(d->attn_bwd) || d->attn_bwd > 1.0 ||
	    (d->attn_bwd != 0.0 && d->attn_bwd < ROOF_MIN_FRAC))
		return gp_fail(err, "device achievable.attention fwd/bwd must "
		               "be 0 or in [%g, 1] (got %g, %g)", ROOF_MIN_FRAC,
		               d->attn_fwd, d->attn_bwd);
	if (bad(d->attn_exp_dim) || d->attn_exp_dim > ROOF_MAX_EXP_DIM)
		return gp_fail(err, "device achievable.attention.exp_dim must "
		               "be 0..%g (got %g)", ROOF_MAX_EXP_DIM,
		               d->attn_exp_dim);
	if (bad(d->attn_ref_q) || d->attn_ref_q > ROOF_MAX_ATTN_SEQ ||
	    (d->attn_ref_q != 0.0 && d->attn_ref_q < 1.0))
		return gp_fail(err, "device achievable.attention seq must be 0 "
		               "or 1..%g tokens (got %g)", ROOF_MAX_ATTN_SEQ,
		               d->attn_ref_q);
	if (attn_curve_check("long", "the reference's", d->attn_long_n,
			     d->attn_long_q, d->attn_long_r, attn_ref_q(d),
			     err))
		return GP_EINVAL;
	if (bad(d->attn_narrow_dim) || d->attn_narrow_dim > ROOF_MAX_EXP_DIM ||
	    (d->attn_narrow_n > 0 && !(d->attn_narrow_dim >= 1.0)))
		return gp_fail(err, "device achievable.attention narrow dim "
		               "must be 1..%g with points, 0 without (got %g)",
		               ROOF_MAX_EXP_DIM, d->attn_narrow_dim);
	if (attn_curve_check("narrow", "the head dim 128 one",
			     d->attn_narrow_n, d->attn_narrow_q,
			     d->attn_narrow_r, 0.0, err))
		return GP_EINVAL;
	if (attn_unmasked_check(d, err))
		return GP_EINVAL;
	if (attn_curve_check("release", "the reference release's",
			     d->attn_rel_n, d->attn_rel_q, d->attn_rel_r, 0.0,
			     err))
		return GP_EINVAL;
	if (bad(d->attn_dropout) || d->attn_dropout > ROOF_MAX_ATTN_DROPOUT ||
	    (d->attn_dropout != 0.0 && d->attn_dropout < 1.0))
		return gp_fail(err, "device achievable.attention dropout must "
		               "be 0 or in [1, %g] (got %g)",
		               ROOF_MAX_ATTN_DROPOUT, d->attn_dropout);
	if (bad(d->attn_fp8) || d->attn_fp8 > 1.0 ||
	    (d->attn_fp8 != 0.0 && d->attn_fp8 < ROOF_MIN_FRAC))
		return gp_fail(err, "device achievable.attention.fp8 must be 0 "
		               "or in [%g, 1] (got %g)", ROOF_MIN_FRAC,
		               d->attn_fp8);
	if (bad(d->block_fp8) || d->block_fp8 > 1.0 ||
	    (d->block_fp8 != 0.0 && d->block_fp8 < ROOF_MIN_FRAC))
		return gp_fail(err, "device achievable.block_scaled.fp8 must be "
		               "0 or in [%g, 1] (got %g)", ROOF_MIN_FRAC,
		               d->block_fp8);
	if (bad(d->fp8_non_tn) || d->fp8_non_tn > 1.0 ||
	    (d->fp8_non_tn != 0.0 && d->fp8_non_tn < ROOF_MIN_FRAC))
		return gp_fail(err, "device achievable.non_tn.fp8 must be "
		               "0 or in [%g, 1] (got %g)", ROOF_MIN_FRAC,
		               d->fp8_non_tn);
	if (bad(d->eager_hbm) || d->eager_hbm > 1.0 ||
	    (d->eager_hbm != 0.0 && d->eager_hbm < ROOF_MIN_FRAC))
		return gp_fail(err, "device achievable.eager.hbm must be "
		               "0 or in [%g, 1] (got %g)", ROOF_MIN_FRAC,
		               d->eager_hbm);
	/* achievable.unsplit: the LDS must hold a stage of the smallest
	 * tile pair, 1 B of K of each of its two 16-row edges
	 * (unsplit_time), or no tile could run. */
	/* An MMA's N step is a whole number of rows, at least 1 and at
	 * most the widest N (SWAP_MAX_N). */
	if (bad(d->mma_n_step) || d->mma_n_step > SWAP_MAX_N ||
	    d->mma_n_step != floor(d->mma_n_step))
		return gp_fail(err, "device mma_n_step must be 0 or a whole "
		               "number of rows 1..%g (got %g)", SWAP_MAX_N,
		               d->mma_n_step);
	/* The packed 16-bit rate is at least the fp32 rate and, on every
	 * NVIDIA table, at most 4 times it (A100's fp16). */
	if (bad(d->vec16_x) || (d->vec16_x != 0.0 &&
	    (d->vec16_x < 1.0 || d->vec16_x > 4.0)))
		return gp_fail(err, "device vec16_x must be 0 or in [1, 4] "
		               "(got %g)", d->vec16_x);
	/* FP16 accumulation never runs the tensor cores slower than FP32
	 * accumulation, and no NVIDIA table has it above twice that rate
	 * (GeForce's halved FP32-accumulate rate). */
	if (bad(d->acc16_x) || (d->acc16_x != 0.0 &&
	    (d->acc16_x < 1.0 || d->acc16_x > 2.0)))
		return gp_fail(err, "device acc16_x must be 0 or in [1, 2] "
		               "(got %g)", d->acc16_x);
	if (bad(d->cta_latency) || d->cta_latency > ROOF_MAX_LAUNCH ||
	    bad(d->cta_stage) || d->cta_stage > ROOF_MAX_WORK ||
	    bad(d->cta_stage_k) || d->cta_stage_k > ROOF_MAX_WORK ||
	    (d->cta_latency > 0.0 &&
	     !(d->cta_stage >= 2.0 * UNSPLIT_EDGE_MIN &&
	       d->cta_stage_k >= 1.0)))
		return gp_fail(err, "device achievable.unsplit: latency must "
		               "be 0..%g s, with lds at least %g B (a stage of "
		               "the %gx%g tile) and stage_k at least 1 B (got "
		               "%g s, %g B, %g B)", ROOF_MAX_LAUNCH,
		               2.0 * UNSPLIT_EDGE_MIN, UNSPLIT_EDGE_MIN,
		               UNSPLIT_EDGE_MIN, d->cta_latency, d->cta_stage,
		               d->cta_stage_k);
	return GP_OK;
}

/* Edge of the tile covering dimension x: a skinny dimension is padded to
 * the MMA granularity, a wide one cut into 128-wide tiles, or 64-wide
 * ones when those pad less (the smallest cuBLAS tile edge,
 * DU-09799-001 sec. 2.3, and the 64-row warpgroup MMA of Hopper: e.g.
 * x = 138 pads to 192 with 64-row tiles, to 256 with 128-row ones);
 * a tie keeps 128 (fewer operand reloads). */
static double tile_edge(double x)
{
	double e = ceil(x / ROOF_MIN_EDGE) * ROOF_MIN_EDGE;

	if (e < ROOF_TILE)
		return e;
	if (ceil(x / 64.0) * 64.0 < ceil(x / ROOF_TILE) * ROOF_TILE)
		return 64.0;
	return ROOF_TILE;
}

/* Swapped small-M tiles on Hopper and newer (roof_device.mma_n_step).
 * Hopper's warpgroup MMA multiplies a 64-row A slice by a B slice of N
 * columns, N = 8..256 in steps of 8: "wgmma.mma_async.sync.aligned.
 * shape.dtype.bf16.bf16 ... .shape = {.m64n8k16, .m64n16k16, .m64n24k16,
 * ... .m64n248k16, .m64n256k16}" (PTX ISA, wgmma.mma_async; the fp8
 * forms likewise .m64n8k32 ... .m64n256k32).  A library GEMM
 * of few tokens therefore computes C^T = W X^T: the weight rows on the
 * 64-row M side of a 64- or 128-row tile (CUTLASS's sm90 tile shapes:
 * 64 x N and 128 x N, one or two consumer warpgroups, N up to 256) and
 * the tokens on the N side, padded to a multiple of 8 instead of a
 * 64-row tile.  cuBLAS does this: a bf16 M = 1 linear on this project's
 * lent H200 (cuBLAS 13.0 via torch 2.11, CUPTI kernel names, measured
 * 2026-12-04) ran nvjet_sm90_tst_64x8_64x16_4x1, "nvjet 192x8", "128x8
 * splitK", "384x8", "512x8 splitK" -- tiles whose token edge is 8.  The
 * library picks the cheaper of the two layouts (its heuristic's tile
 * list holds both), so gemm_eff prices both -- tiles, waves over the
 * SMs, split-K -- and keeps the better.  Calibration, not validation:
 * the same device's FP8 linears of a Llama 3.3 70B layer (torch.
 * _scaled_mm, cuBLASLt, e4m3 per-tensor, bf16 out; qkv 10240 x 8192,
 * o 8192 x 8192, up 57344 x 8192, down 8192 x 28672; 30 iterations,
 * about +-5% noise) took, in us per layer, 240.1 at M = 128, 265.7 at
 * 160, 297.1 at 176, 306.4 at 192, 303.8 at 200, 314.1 at 208, 318.2 at
 * 216, 346.0 at 224, 389.8 at 240, 356.9 at 256: no 64-row step (200
 * is no slower than 192, where 64-row tiles would pad 200 to 256).
 * Those timings are bursts (30 iterations, about 10 ms of GPU work a
 * shape), which the Hopper entry's sustained-clock factor (catalog
 * archs.lua achievable.sustained.gemm 0.82: "Burst kernel timings ...
 * are met without the factor") is not for: priced at the burst rate the
 * model's four linears take 1.00-1.15x (median 1.11x) the measured, at
 * the sustained rate 1.14-1.30x.  The rest is the compute/stream overlap
 * (roof_overlap), fitted to DeepGEMM's H800 table at the burst rate.
 * Only from 17 to SWAP_MAX_N tokens (the largest N), and only for a
 * library GEMM: ops that state their own M tile (roof_op.m_tile:
 * DeepGEMM's 64 rows) or spread rows, dequantising weight-only kernels
 * and the attention kernels' tiles keep theirs.  A batch of 1-16 keeps
 * the 16-wide edge (ROOF_MIN_EDGE): cuBLAS's 64x8 tile would pay 8 there,
 * but vLLM's CUTLASS fp8 GEMM (sm90_fp8_config_M16: "TileShape =
 * Shape<_64, _16, _256>", swap AB), Marlin and Machete pay 16, and an op
 * does not say which library runs it. */

/* Pipeline-fill efficiency of a K loop of depth k (see ROOF_K_FILL). */
static double k_fill(double k)
{
	return k / (k + ROOF_K_FILL);
}

/* Expected M tiles of a grouped GEMM's group.  A grouped GEMM covers each
 * expert's own rows with whole tiles: DeepGEMM's masked scheduler takes
 * "num_m_blocks = ceil_div(__ldg(grouped_layout + current_group_idx),
 * BLOCK_M)" blocks of each expert (include/deep_gemm/common/scheduler.cuh,
 * MGroupedMasked), its contiguous layout pads each expert's rows to the
 * M block (get_mk_alignment_for_contiguous_layout), and SGLang's Triton
 * fused_moe pads each expert's count to BLOCK_SIZE_M
 * (moe_align_block_size).  So it pays sum_e ceil(n_e / T), not count x
 * ceil(mean / T).  With independent
 * top-k routing each of a batch's N k choices lands on a given expert with
 * probability 1/E: n_e is binomial(N k, 1/E), which for the hundreds of
 * experts of a routed MoE (p = 1/E <= 1/64, variance N k p (1 - p)) is
 * Poisson with mean lambda = N k / E to within 1/E.  Hence
 *   E[ceil(X/T)] = sum_{j >= 0} P(X > j T),
 * smooth in lambda where the tile count of the mean jumps by a tile.
 * Computed exactly from the Poisson terms below TILES_EXACT, from the
 * normal approximation with continuity correction above it (skew
 * 1/sqrt(lambda) <= 1/20: at lambda = 400 the two agree to 3e-4 of the
 * tiles for T = 32..128), and once the spread covers several tiles (sd >
 * 2 T) the remainder X mod T is uniform and E = (lambda + (T-1)/2) / T.
 * The experts of one rank are taken as equally loaded at the mean: the
 * hot rank's own spread of expert loads would widen the distribution. */
#define TILES_EXACT 400.0

static double poisson_tiles(double lam, double T)
{
	double sd, sum = 0.0;

	if (!(lam > 0.0) || !(T > 0.0))
		return 0.0;
	sd = sqrt(lam);
	if (lam < TILES_EXACT) {
		/* sum_n P(X = n) ceil(n / T), the terms by recurrence to
		 * lambda + 12 sd + 24, past which they are below 1e-20. */
		double p = exp(-lam), top = lam + 12.0 * sd + 24.0;
		int n;

		for (n = 1; n <= top; n++) {
			p *= lam / n;
			sum += p * ceil(n / T);
		}
		return sum;
	}
	if (sd > 2.0 * T)
		return (lam + (T - 1.0) / 2.0) / T;
	{
		/* Tiles j T below lambda - 10 sd are full with certainty. */
		double j = floor(fmax(0.0, lam - 10.0 * sd) / T);
		double hi = (lam + 10.0 * sd) / T;

		sum = j;
		for (; j <= hi; j += 1.0)
			sum += 0.5 * erfc((j * T + 0.5 - lam) / (sd * sqrt(2.0)));
		return sum;
	}
}

/* roof_expected_tiles' answers by their arguments: a serving search
 * prices the same expert GEMM shapes at every batch it tries, and each
 * answer is a Newton solve and up to a few hundred Poisson terms (a sixth
 * of a layout search).  Direct-mapped on the arguments' bits, compared
 * whole, so the value returned is the computation's, bit for bit (the
 * engine runs on one thread). */
#define TILES_MEMO 64

static double expected_tiles(double mean, double tile, int touched);

double roof_expected_tiles(double mean, double tile, int touched)
{
	static struct {
		double mean, tile, v;
		int touched, used;
	} memo[TILES_MEMO];
	unsigned long long a, b;
	unsigned slot;

	memcpy(&a, &mean, sizeof a);
	memcpy(&b, &tile, sizeof b);
	a ^= (b * 0x9E3779B97F4A7C15ULL) ^ (unsigned)touched;
	slot = (unsigned)((a * 0xBF58476D1CE4E5B9ULL) >> 58) % TILES_MEMO;
	if (!memo[slot].used || memo[slot].mean != mean ||
	    memo[slot].tile != tile || memo[slot].touched != touched) {
		memo[slot].mean = mean;
		memo[slot].tile = tile;
		memo[slot].touched = touched;
		memo[slot].v = expected_tiles(mean, tile, touched);
		memo[slot].used = 1;
	}
	return memo[slot].v;
}

static double expected_tiles(double mean, double tile, int touched)
{
	double lam, q;
	int i;

	if (!touched)
		return poisson_tiles(mean, tile);
	if (!(tile > 0.0) || !(mean > 1.0 + 1e-9))
		return 1.0;
	/* The Poisson mean lambda whose zero-truncated mean is `mean`:
	 * lambda / (1 - e^-lambda) = mean, by Newton on the convex
	 * f(l) = l - mean (1 - e^-l) from l = mean (f > 0 there, so the
	 * steps fall monotonically onto the root). */
	lam = mean;
	for (i = 0; i < 50; i++) {
		double e = exp(-lam), f = lam - mean * (1.0 - e);
		double step = f / (1.0 - mean * e);

		lam -= step;
		if (fabs(step) < 1e-12 * lam)
			break;
	}
	q = 1.0 - exp(-lam);
	return q > 0.0 ? poisson_tiles(lam, tile) / q : 1.0;
}

/* Wave quantisation (DU-09799-001 sec. 3.2) with split-K of `tiles`
 * output tiles over the SMs, times the K loop's fill; see gemm_eff.
 * max_split: the most slices the kernel may cut K into (1: it never
 * splits, roof_op.no_split). */
static double wave_eff(const roof_device *d, double tiles, double k,
                       int max_split)
{
	double best = 0.0, kref = k_fill(ROOF_K_REF);
	int s;

	if (!d || d->sms <= 0)
		return fmin(1.0, k_fill(k) / kref);
	/* Tiles run in waves of `sms` CTAs, the last wave partly idle: eff =
	 * tiles / (ceil(tiles / sms) sms).  A library may split K into s
	 * slices to fill the SMs (split-K), at the price of shorter K loops;
	 * take the best s, as its heuristics do. */
	for (s = 1; s <= max_split; s++) {
		double units = tiles * s, waves, e, fill;

		if (s > 1 && k / s < ROOF_MIN_SLICE)
			break;
		fill = fmin(1.0, k_fill(k / s) / kref);
		/* The fill term falls with s and the wave term is at most 1,
		 * so no larger split can beat `best` once it reaches this
		 * split's fill: stop (the same answer, fewer steps). */
		if (best >= fill)
			break;
		waves = ceil(units / d->sms);
		e = units / (waves * d->sms) * fill;
		if (e > best)
			best = e;
	}
	return best;
}

/* The N tiles of DeepGEMM's SM90 fp8 GEMMs, the kernels of an op with
 * its own M tile (roof_op.m_tile > 0: SGLang's block-fp8 linears and
 * masked grouped expert GEMMs).  DeepGEMM picks block_n itself, for the
 * device's SM count, and never splits K: its persistent scheduler hands
 * each SM whole (m, n) blocks of a group and the block's math warpgroups
 * loop over the whole K (deep_gemm/include/deep_gemm/common/
 * scheduler.cuh, get_next_block; no K slice anywhere in the SM90 1D2D
 * kernel).  get_best_config (csrc/jit_kernels/heuristics/common.hpp of
 * sgl-project/DeepGEMM, the tree its swapAB PR 11 patched, 2991c77^)
 * tries block_n = 16, 32, ... 256 and keeps "the number of waves"
 * ceil(blocks / num_sms) least, then the fuller last wave, then the
 * smaller block_n ("Case 1: same block_m, smaller block_n (wasted)");
 * the 1D2D kernel of a block-scaled fp8 GEMM takes block_n above 128
 * only as 144, 160 or 192 (sm90.hpp is_block_size_legal: "Too many
 * scaling factors in a single block ... Or too many register spills").
 * The swapAB build (ENABLE_SWAPAB, PR 11 / deepseek-ai/DeepGEMM PR
 * 192) has one candidate: "block_ms = std::vector{32}; block_ns =
 * std::vector{256}; // 256 for H20" -- 32 tokens on the WGMMA's N side,
 * 256 weight rows a block.  On the H20's 78 SMs this matters: a
 * 16-expert down GEMM (N 7168) runs 608 blocks of 192 in 8 waves where
 * 128-wide tiles with split-K would be priced near-full waves.
 * Cross-check, the PR's H20 table (16 experts, "Aligned M": 32, 96 and
 * 160 rows each, N x K 4096 x 7168 and 7168 x 2048, plain and swapAB;
 * docs/validation.md has the twelve points). */
static const double dg_block_n[] = {
	16.0, 32.0, 48.0, 64.0, 80.0, 96.0, 112.0, 128.0, 144.0, 160.0,
	192.0
};
#define DG_BLOCK_NS (sizeof dg_block_n / sizeof dg_block_n[0])
#define DG_SWAP_BLOCK_N 256.0

/* The shape factor of mtiles M blocks of tm rows a group over `count`
 * groups at DeepGEMM's block_n (above): m n count useful over the
 * waves' block slots, times the K loop's fill (no split). */
static double deepgemm_eff(const roof_device *d, double m, double n,
                           double k, double count, double tm,
                           double mtiles)
{
	double swap_n = DG_SWAP_BLOCK_N, bw = 0.0, bl = 0.0, bn = 0.0;
	const double *cand = tm < 64.0 ? &swap_n : dg_block_n;
	size_t nc = tm < 64.0 ? 1 : DG_BLOCK_NS, i;

	for (i = 0; i < nc; i++) {
		double blocks = mtiles * ceil(n / cand[i]) * count;
		double waves = ceil(blocks / d->sms);
		double last = blocks - (waves - 1.0) * d->sms;

		if (bn == 0.0 || waves < bw || (waves == bw && last > bl)) {
			bw = waves;
			bl = last;
			bn = cand[i];
		}
	}
	return (m * n * count) / (bw * d->sms * tm * bn) *
		fmin(1.0, k_fill(k) / k_fill(ROOF_K_REF));
}

/* roof_gemm_eff with the M tile fixed by the kernel when mt > 0: mt rows
 * up to mt tokens, ROOF_TILE above (roof_op.m_tile).  A tile under 64
 * rows is a swapped kernel's token block (the tokens on the WGMMA's N
 * side), which covers more tokens with more blocks of the same width
 * rather than switching tiles: DeepGEMM PR 192's swapAB masked GEMM,
 * "Significantly improve the performance for BLOCK_M = 32 or M%64<32
 * ... Use multi-math_warp_groups and multi-wave MMAs".  lib: a library
 * GEMM, which on a device with mma_n_step may swap (SWAP_MAX_N). */
static double gemm_eff(const roof_device *d, double m, double n, double k,
                       double count, double mt, int spread, int lib,
                       int nosplit)
{
	int ms = nosplit ? 1 : ROOF_MAX_SPLIT;
	double tm, tn, q, tiles, tile_eff, eff;

	if (!(m > 0.0) || !(n > 0.0) || !(k > 0.0))
		return 1.0;
	/* A dimension below one element still occupies a whole tile row:
	 * read it as 1 (m n of 1e-308 squared underflowed to an efficiency
	 * of 0 and an infinite time). */
	m = fmax(m, 1.0);
	n = fmax(n, 1.0);
	k = fmax(k, 1.0);
	if (!(count >= 1.0))
		count = 1.0;
	tm = mt > 0.0 ? (m <= mt || mt < 64.0 ? mt : ROOF_TILE) :
		tile_edge(m);
	tn = tile_edge(n);
	/* Tile quantisation (DU-09799-001 sec. 3.1): work is done for whole
	 * tiles, so useful / computed = m n / (ceil(m/tm) tm ceil(n/tn) tn). */
	/* A spread above 1 is the row count each group is padded up to a
	 * multiple of before the kernel (roof_op.spread): a padding
	 * coarser than the tile, and a multiple of it, runs whole padded
	 * blocks of q / tm tiles each; a finer one ends inside the tile
	 * the group's last rows take anyway and costs nothing more. */
	q = spread > 1 && (double)spread > tm &&
		fmod((double)spread, tm) == 0.0 ? (double)spread : tm;
	tiles = (spread ? roof_expected_tiles(m, q, 1) * (q / tm) :
		 ceil(m / tm)) * ceil(n / tn);
	/* DeepGEMM's own N tiles, whole K (deepgemm_eff). */
	if (mt > 0.0 && d && d->sms > 0)
		return deepgemm_eff(d, m, n, k, count, tm, tiles / ceil(n / tn));
	tile_eff = (m * n) / (tiles * tm * tn);
	eff = tile_eff * wave_eff(d, tiles * count, k, ms);
	/* The swapped layout (SWAP_MAX_N): the m tokens on one N edge of
	 * whole steps and at least ROOF_MIN_EDGE (a decode batch of 1-16
	 * keeps the 16-wide edge and its sources), the n weight rows on 64-
	 * or 128-row tiles (the fewer padded rows, a tie 128, as
	 * tile_edge). */
	if (lib && d && d->mma_n_step > 0.0 && mt == 0.0 && !spread &&
	    m <= SWAP_MAX_N) {
		double sm = fmax(ROOF_MIN_EDGE,
		                 ceil(m / d->mma_n_step) * d->mma_n_step);
		double sn = ceil(n / 64.0) * 64.0 < ceil(n / ROOF_TILE) *
			ROOF_TILE ? 64.0 : ROOF_TILE;
		double st = ceil(n / sn);
		double se = (m * n) / (st * sm * sn) *
			wave_eff(d, st * count, k, ms);

		if (se > eff)
			eff = se;
	}
	return eff;
}

double roof_gemm_eff(const roof_device *d, double m, double n, double k,
                     double count)
{
	return gemm_eff(d, m, n, k, count, 0.0, 0, 1, 0);
}

/* Pipeline fill of a fused attention kernel's loop over the keys, and the
 * query tile of its causal diagonal: FlashAttention-2/3 run 128 query rows
 * per CTA (Dao 2023 sec. 3.1; Shah et al. 2024, FA3 tile sizes) and visit
 * every key tile up to the diagonal, computing the diagonal tile whole.
 * A causal prompt of q tokens has n = ceil(q / 128) query tiles, the i-th
 * visiting i key tiles: useful / computed = n / (n + 1).  The loop over
 * the keys pays the same fill as a GEMM's K loop (gemm_eff's
 * ROOF_K_FILL).  The catalog's attention fractions were measured causal
 * at 4k-8k tokens (FA3 paper Figs. 5-6); both terms are taken relative to
 * the prompt the kernel's fractions were read at (8k tokens unless the
 * catalog entry names its own, attn_ref_q: the A100 figures were read at
 * 4k), so a shorter prompt runs slower than the measurement and a longer
 * one is not credited beyond it by these terms -- only by the kernel's
 * own published length curve (attn_long below), where it has one.  Cross-check against the same
 * figure (causal, head dim 128, H100 SXM5): cuDNN runs 410, 484 and 518
 * TFLOP/s at 1k, 2k and 4k tokens against 529 at 8k (0.78, 0.91, 0.98);
 * FA3 423, 521, 579 against 602 (0.70, 0.87, 0.96). */
#define ATTN_TILE 128.0

/* Useful share of a causal prompt's query tiles (ATTN_TILE). */
static double causal_diag(double q)
{
	double n = ceil(q / ATTN_TILE);

	return n / (n + 1.0);
}

/* The softmax's per-score work against the tensor cores.  Per score
 * element a fused kernel's forward runs 4 d FLOP of MMA (QK^T and PV at
 * head dim d) and a fixed amount of other work: an exponential on the
 * SM's special function units (MUFU), the rescaling and P's conversion on
 * its FP32 ALUs, none of which grew with the tensor cores: "From the
 * Hopper H100 to the Blackwell B200, for instance, BF16 tensor core
 * throughput increases from 1 to 2.25 PFLOPs, while both the SFU count
 * and shared memory bandwidth remains unchanged"; B200 runs 8192 MMA
 * FLOP and 16 exponentials a clock per SM (Zadouri et al. 2026,
 * FlashAttention-4, arXiv 2603.05451, sec. 1-2), Hopper 16 and 4096
 * (989.4 TFLOP/s on 132 SMs at 1830 MHz).  The score's time is then
 * max(4 d / mma, w) = max(d, d*) (4 / mma), d* = mma w / 4 the head dim
 * where the two balance, and the kernel's rate d / max(d, d*) of the
 * tensor cores'; relative to the head dim 128 the catalog's fractions
 * were measured at.  d* is the catalog's (achievable.attention.exp_dim):
 * Hopper's exponentials balance at 64, so no head dim from 64 up is
 * bound; on Blackwell the kernels' measured head-dim-64 rate sets it
 * (catalog/archs.lua).  The backward is taken with the same factor: its
 * bound on Blackwell lies "in the shared-memory traffic during the BWD
 * computation" (FA4), the score tiles' traffic, per score element as the
 * exponentials are. */
#define ATTN_REF_D 128.0

static double exp_bound(double d, double dstar)
{
	return d / fmax(d, dstar);
}

/* A curve through (q0, r0) and then n points (qs, rs), lengths growing,
 * at q: r0 up to q0, linear in log2 q between points, held past the last
 * (attn_long and attn_narrow read their curves so). */
static double attn_curve_at(double q0, double r0, int n, const double *qs,
			    const double *rs, double q)
{
	int i;

	if (!(q > q0))
		return r0;
	for (i = 0; i < n; i++) {
		if (q <= qs[i])
			return r0 + (rs[i] - r0) * log2(q / q0) /
				log2(qs[i] / q0);
		q0 = qs[i];
		r0 = rs[i];
	}
	return r0;
}

/* A kernel's published rate at a causal prompt of q tokens over its rate
 * at the reference q0 (attn_ref_q), from the device's length curve: 1 up
 * to q0, linear in log2 q between the published points (the bars stand at
 * doubling lengths), held at the last point past it -- no bar beyond it
 * says how much further the kernel climbs. */
static double attn_long(const roof_device *d, double q)
{
	if (d->attn_long_n <= 0)
		return 1.0;
	return attn_curve_at(attn_ref_q(d), 1.0, d->attn_long_n,
			     d->attn_long_q, d->attn_long_r, q);
}

/* The useful share of a head-dim tile padded to the next power of two,
 * at least 16: HazyResearch's Triton FlashAttention (flash_attn/
 * flash_attn_triton.py, v1.0.4, the kernel Megatron-DeepSpeed's
 * --use-flash-attn-triton imports) launches its forward and backward with
 * "BLOCK_HEADDIM = max(triton.next_power_of_2(d), 16)" and multiplies
 * q [BLOCK_M, BLOCK_HEADDIM] by k^T and p by v [BLOCK_N, BLOCK_HEADDIM]
 * whole, loading the columns past d as zeros (its EVEN_HEADDIM masks):
 * head dim 96 runs head dim 128's MMAs, the per-score softmax alike, for
 * 96 / 128 of the useful FLOPs.  Its measured rate (catalog/archs.lua)
 * is at head dim 128, a full block. */
static double head_block_use(double n)
{
	double b = 16.0;

	while (b < n)
		b *= 2.0;
	return n / b;
}

/* A narrow head's rate over the head dim 128 one the fractions were read
 * at, at a causal prompt of q tokens: the kernel's published bars at both
 * head dims, at the same lengths (attn_narrow), their ratio linear in
 * log2 q between the points and held past either end.  FlashAttention-1's
 * CUDA kernel and HazyResearch's Triton kernel run head dim 64 in a
 * narrower tile (the Triton one with num_warps 4 for 64, 8 for 128) and
 * reach more of the tensor peak there, not less: 87 against 76 TFLOP/s
 * at 4k tokens, causal, on an A100 (FA2 paper Fig. 4c/4d; catalog/
 * archs.lua) -- where FlashAttention-2 runs 156 against 173. */
static double attn_narrow(const roof_device *d, double q)
{
	return attn_curve_at(d->attn_narrow_q[0], d->attn_narrow_r[0],
			     d->attn_narrow_n - 1, d->attn_narrow_q + 1,
			     d->attn_narrow_r + 1, q);
}

/* The stated library release's rate over the reference release's (the
 * one the kernel's fractions and curves were read at), at a causal
 * prompt of q tokens (a call without a mask: at its m queries): the
 * release's published points (attn_rel), linear in log2 q between them
 * and held past either end -- no table says how the gap moves beyond
 * the lengths it timed.  1 where no release is stated (catalog/
 * archs.lua, the hopper arch's cudnn releases). */
static double attn_release(const roof_device *d, double q)
{
	if (d->attn_rel_n <= 0 || !(q > 0.0))
		return 1.0;
	return attn_curve_at(d->attn_rel_q[0], d->attn_rel_r[0],
			     d->attn_rel_n - 1, d->attn_rel_q + 1,
			     d->attn_rel_r + 1, q);
}

double roof_attn_unmasked(const roof_device *d, double u, double q, int bwd)
{
	int n = d->attn_unm_n;
	const double *qs = d->attn_unm_q;
	const double *un = bwd ? d->attn_unm_ub : d->attn_unm_uf;
	const double *ca = bwd ? d->attn_unm_cb : d->attn_unm_cf;

	if (n <= 0 || !(q > 0.0) || !(u > 0.0))
		return 1.0;
	return attn_curve_at(qs[0], un[0], n - 1, qs + 1, un + 1, u) /
		attn_curve_at(qs[0], ca[0], n - 1, qs + 1, ca + 1, q);
}

double roof_attn_eff(const roof_device *d, double m, double n, double k,
                     double count, double causal_q)
{
	double ref, eff, q0 = attn_ref_q(d);

	ref = gemm_eff(d, q0, n, (q0 + 1.0) / 2.0, count,
	               0.0, 0, 0, 0) * causal_diag(q0);
	eff = gemm_eff(d, m, n, k, count, 0.0, 0, 0, 0) *
		(causal_q > 0 ? causal_diag(causal_q) : 1.0) / ref;
	if (d->attn_exp_dim > 0.0 && n > 0.0)
		eff *= exp_bound(n, d->attn_exp_dim) /
			exp_bound(ATTN_REF_D, d->attn_exp_dim);
	if (eff > 1.0)
		eff = 1.0;
	/* Past the reference the shape terms above are spent (capped at
	 * 1); a kernel whose published bars keep rising there declares by
	 * how much (FlashAttention-1 and HazyResearch's Triton kernel:
	 * catalog/archs.lua), and a causal prompt that long runs at that
	 * share of the reference's rate. */
	if (causal_q > 0)
		eff *= attn_long(d, causal_q);
	if (d->attn_head_pow2 && n > 0.0)
		eff *= head_block_use(n) / head_block_use(ATTN_REF_D);
	/* A head dim up to the kernel's narrow one runs its narrow tile's
	 * kernel, at that kernel's published rate (attn_narrow above);
	 * the bars are causal, so a causal prompt only. */
	if (causal_q > 0 && d->attn_narrow_n > 0 && n > 0.0 &&
	    n <= d->attn_narrow_dim)
		eff *= attn_narrow(d, causal_q);
	/* The library release the run states, where its published tables
	 * time it apart from the reference release (attn_release). */
	eff *= attn_release(d, causal_q > 0 ? causal_q : m);
	return eff;
}

double roof_overlap(double tc, double tm)
{
	double hi = fmax(tc, tm), lo = fmin(tc, tm), x, w;

	if (!(hi > 0.0))
		return 0.0;
	/* (tc^p + tm^p)^(1/p) = hi (1 + (lo/hi)^p)^(1/p), no overflow. */
	x = lo / hi;
	/* Memory-bound side: the MMAs slot into the gaps of the stream, so
	 * only the share (tc/tm)^ROOF_OVERLAP_MEM of the p-norm's excess is
	 * exposed; compute-bound side: all of it. */
#if ROOF_OVERLAP_P == 2 && ROOF_OVERLAP_MEM == 2
	/* The constants' case, without pow (this runs in every GEMM of a
	 * sweep): sqrt(1 + x^2) and x^2. */
	w = tc >= tm ? 1.0 : x * x;
	return hi + w * hi * (sqrt(1.0 + x * x) - 1.0);
#else
	w = tc >= tm ? 1.0 : pow(x, ROOF_OVERLAP_MEM);
	return hi + w * hi * (pow(1.0 + pow(x, ROOF_OVERLAP_P),
	                          1.0 / ROOF_OVERLAP_P) - 1.0);
#endif
}

double roof_ridge(const roof_device *d, gp_dtype p, int achievable)
{
	if (!d || (int)p < 0 || p >= GP_DTYPE_COUNT || !(d->peak[p] > 0.0) ||
	    !(d->mem_bw > 0.0))
		return 0.0;
	if (!achievable)
		return d->peak[p] / d->mem_bw;
	/* Ridge at the achievable ceilings: peak f_gemm / (bw f_hbm). */
	return d->peak[p] * d->gemm_frac[p] / (d->mem_bw * d->hbm_frac);
}

/* The arithmetic of roof_op_time on checked inputs. */
/* Where op computes: a GEMM (m, n, k all set; returned 1) at its
 * precision's tensor peak and GEMM fraction; any other op on the fp32
 * vector units when the device has them -- norms, activations, softmax
 * run on the CUDA cores, not the tensor cores, and are memory-bound in
 * every case that matters. */
static int op_peak(const roof_device *d, const roof_op *op, double *peak,
		   double *frac)
{
	int gemm = op->m > 0.0 && op->n > 0.0 && op->k > 0.0;

	*peak = d->peak[op->prec];
	*frac = d->gemm_frac[op->prec];
	if (!gemm && d->peak[GP_FP32] > 0.0) {
		*peak = d->peak[GP_FP32];
		*frac = 1.0;
	}
	return gemm;
}

/* The streaming rate an op reads and writes at (roof_eval_time): a GEMM
 * at its kernel's own measured fraction where the op gives one
 * (roof_op.stream), else at the device's for its precision. */
static double mem_rate(const roof_device *d, int gemm, gp_dtype prec,
                       double stream)
{
	return d->mem_bw * d->hbm_frac *
		(!gemm ? 1.0 : stream > 0.0 ? stream :
		 d->stream_frac[prec] > 0.0 ?
		 d->stream_frac[prec] : ROOF_GEMV_BW);
}

/* The memory side's seconds: the bytes at the rate, and the fill of a
 * kernel that moves any. */
static double mem_side(double bytes, double rate)
{
	return bytes > 0.0 ? bytes / rate + ROOF_MEM_FILL : 0.0;
}

/* A GEMM library that never splits K (roof_device.cta_latency set)
 * runs one CTA per output tile, from the tile edges its kernel list has,
 * and each CTA walks K one stage at a time.  A stage holds the A and B
 * slices of its tile in the CU's LDS, (tm + tn) kb bytes for a K depth
 * of kb bytes, so kb is the largest power of two with the stage within
 * the LDS (cta_stage) and within the kernels' deepest stage
 * (cta_stage_k).  With the LDS full there is no second buffer: the next
 * stage's load waits for this stage's MFMAs, and a CTA's time is its
 * stages' memory latency plus its MFMAs, not the larger of the two.
 * Little's law reads the same: one stage in flight per CU, so a CU
 * streams stage / latency whatever the device's bandwidth, and a GEMM
 * of few tiles (Llama 3.1 405B's qkv, N 2304 at TP 8: 36 tiles of 64 on
 * 304 CUs) streams far below it.  The tuned a8w8 kernels AMD ships for
 * MI300X have splitK 0 in every row (ROCm/aiter a8w8_tuned_gemm.csv,
 * cu_num 304) and stages that fit the 64 KiB LDS: "a8w8_rowwise_256x
 * 16x64x512" (block size, MPerBlock, NPerBlock, KPerBlock: 80 x 512 B),
 * 32x128x256, 128x128x256, 256x256x128 (512 x 128 B = 64 KiB).  The
 * tuner picks the fastest kernel of its list for each shape; the model
 * takes the tile pair whose time is least: the waves' MFMAs at the
 * card's per-CU rate (gemm_eff's wave and K-fill terms without a split)
 * plus their stages' latency, and no less than the device's stream
 * overlapped with the MFMAs (roof_overlap). */
static const double unsplit_edges[] = {
	UNSPLIT_EDGE_MIN, 32.0, 64.0, 128.0, 256.0
};
#define UNSPLIT_EDGES (sizeof unsplit_edges / sizeof unsplit_edges[0])
/* The operands the unsplit tables cover: 8-bit (roof_eval_time). */
#define UNSPLIT_PREC(p) (gp_dtype_bytes(p) <= 1.0)

static double unsplit_time(const roof_device *d, const roof_op *op,
                           double peak, double frac, double t_mem,
                           roof_result *out)
{
	double m = fmax(op->m, 1.0), n = fmax(op->n, 1.0),
	       k = fmax(op->k, 1.0), count = op->count >= 1.0 ? op->count : 1.0,
	       el = gp_dtype_bytes(op->prec),
	       fill = fmin(1.0, k_fill(k) / k_fill(ROOF_K_REF)),
	       best = -1.0;
	size_t i, j;

	for (i = 0; i < UNSPLIT_EDGES; i++) {
		for (j = 0; j < UNSPLIT_EDGES; j++) {
			double a = unsplit_edges[i], b = unsplit_edges[j];
			double tiles = ceil(m / a) * ceil(n / b) * count;
			double waves = ceil(tiles / d->sms);
			double eff = m * n * count / (waves * d->sms * a * b) *
				fill;
			double tc = op->flop > 0.0 ?
				op->flop / (peak * frac * eff) : 0.0;
			/* K bytes of a stage: a power of two, the stage
			 * within the LDS and the deepest stage */
			double kb = exp2(floor(log2(fmin(d->cta_stage_k,
			                d->cta_stage / (a + b)))));
			double walk, t;

			/* a tile whose stage cannot hold 1 B of K within
			 * the LDS does not run (not one without a walk) */
			if (!(kb >= 1.0))
				continue;
			walk = waves * ceil(k * el / kb) * d->cta_latency +
				ROOF_MEM_FILL;
			t = fmax(tc + walk, roof_overlap(tc, t_mem));

			if (best < 0.0 || t < best) {
				best = t;
				out->shape_eff = eff;
				out->compute_rate = peak * frac * eff;
				out->t_compute = tc;
				out->t_memory = fmax(t_mem, walk);
			}
		}
	}
	return best;
}

/* The op's time and what it is made of (the fields roof_time reads);
 * roof_eval adds the ratios a report shows. */
static void roof_eval_time(const roof_device *d, const roof_op *op,
                           int graphs, roof_result *out)
{
	double rate, peak, frac, vec, vec16, dq;
	int gemm, gemv;

	gemm = op_peak(d, op, &peak, &frac);
	vec = d->peak[GP_FP32];
	gemv = gemm && op->gemv && vec > 0.0;
	/* A dequantising GEMM runs its weight-only kernel's own 16-row
	 * tiles (Marlin, Machete, fpA_intB: ROOF_MIN_EDGE), not a library's
	 * swapped ones. */
	out->shape_eff = gemm && !gemv ? gemm_eff(d, op->m, op->n, op->k,
	                                          op->count, op->m_tile,
	                                          op->spread,
	                                          !(op->dequant > 0.0),
	                                          op->no_split) : 1.0;
	vec16 = gemv && op->gemv == 2 && d->vec16_x > 0.0 &&
		(op->prec == GP_BF16 || op->prec == GP_FP16) ?
		vec * d->vec16_x : vec;
	rate = gemv ? vec16 : peak * frac * out->shape_eff;
	/* A kernel held below its precision's tensor rate (roof_op.bf16_x):
	 * at most that multiple of the 16-bit library rate at this shape. */
	if (gemm && !gemv && op->bf16_x > 0.0 &&
	    d->peak[GP_BF16] > 0.0 && d->gemm_frac[GP_BF16] > 0.0)
		rate = fmin(rate, op->bf16_x * d->peak[GP_BF16] *
		            d->gemm_frac[GP_BF16] * out->shape_eff);
	out->compute_rate = rate;
	/* Dequantisation: vector FLOP per weight element; on the GEMV path
	 * on top of the dot products, beside the tensor-core MMAs else
	 * (Marlin interleaves the two pipelines so that neither waits). */
	dq = gemm && op->dequant > 0.0 && vec > 0.0 ?
		op->dequant * op->n * op->k * (op->count >= 1.0 ? op->count
		                                                : 1.0) *
		(op->dequant_rep > 1.0 ? op->dequant_rep : 1.0) : 0.0;
	/* Weight-streaming GEMMs read below a streaming copy (ROOF_GEMV_BW,
	 * or the device's measured rate for GEMMs at the op's precision,
	 * roof_device.stream_frac), other ops at the streaming rate; every
	 * kernel that moves bytes pays the pipeline fill (ROOF_MEM_FILL). */
	out->mem_rate = mem_rate(d, gemm, op->prec, op->stream);
	out->t_compute = op->flop > 0.0 ? op->flop / rate : 0.0;
	if (dq > 0.0)
		out->t_compute = gemv ? op->flop / vec16 + dq / vec :
			fmax(out->t_compute, dq / vec);
	out->t_memory = mem_side(op->bytes, out->mem_rate);
	out->t_launch = graphs ? d->graph_launch : d->launch;
	/* An unsplit library's dense GEMM (not a grouped one with its own
	 * M tile or spread rows, not a GEMV, no dequantisation): its tile,
	 * its waves and its CTAs' K stages (unsplit_time).  Only 8-bit
	 * operands: the source is AMD's a8w8 tuned table (aiter
	 * a8w8_tuned_gemm.csv, "a8w8_rowwise_..." kernels); no table shows
	 * that the 16-bit GEMMs (hipBLASLt's) skip split-K, and with the
	 * walk they would come out below AMD's own measured bf16/fp16 rates
	 * (its MI300X GEMM benchmark: 708 / 654 TFLOPs), so they keep the
	 * split pricing every other card has. */
	if (gemm && !gemv && d->cta_latency > 0.0 && d->sms > 0 &&
	    UNSPLIT_PREC(op->prec) &&
	    op->m_tile == 0.0 && !op->spread && !(dq > 0.0)) {
		double t = unsplit_time(d, op, peak, frac, out->t_memory, out);

		out->bound = out->t_compute >= out->t_memory ? ROOF_COMPUTE
		                                             : ROOF_MEMORY;
		out->time = t + out->t_launch;
		return;
	}
	/* Williams et al. 2009: the op runs at the lower of the two roofs,
	 * i.e. takes the longer of the two times; a GEMM overlaps the two
	 * imperfectly near the ridge (ROOF_OVERLAP_P). */
	out->bound = out->t_compute >= out->t_memory ? ROOF_COMPUTE
	                                             : ROOF_MEMORY;
	out->time = (gemm ? roof_overlap(out->t_compute, out->t_memory)
	                  : fmax(out->t_compute, out->t_memory)) +
	            out->t_launch;
}

static void roof_eval(const roof_device *d, const roof_op *op, int graphs,
                      roof_result *out)
{
	roof_eval_time(d, op, graphs, out);
	/* Achieved fraction of the streaming rate on the memory side. */
	out->mem_eff = op->bytes > 0.0 ? op->bytes / out->t_memory /
	               (d->mem_bw * d->hbm_frac) : 1.0;
	/* An op that moves bytes moves at least one: below that the ratio
	 * is no intensity (bytes 1e-308 made it inf). */
	out->intensity = op->bytes > 0.0 ? op->flop / fmax(op->bytes, 1.0)
	                                 : 0.0;
	out->ridge = roof_ridge(d, op->prec, 1);
	out->ridge_peak = roof_ridge(d, op->prec, 0);
}


int roof_op_time(const roof_device *d, const roof_op *op, int graphs,
                 roof_result *out, gp_error *err)
{
	if (!d || !op || !out)
		return gp_fail(err, "roofline: missing argument");
	/* The contract asks for a checked device; checking here stops an
	 * unchecked one (hbm_frac 0, peak inf) from dividing by zero.  A
	 * caller that checked it once uses roof_checked_op_time. */
	if (roof_device_check(d, err) != GP_OK)
		return GP_EINVAL;
	return roof_checked_op_time(d, op, graphs, out, err);
}

int roof_checked_op_time(const roof_device *d, const roof_op *op,
                         int graphs, roof_result *out, gp_error *err)
{
	const char *sp, *nm;
	double peak, frac;

	if (!d || !op || !out)
		return gp_fail(err, "roofline: missing argument");
	/* "op qkv: ..." for a named op; a caller's one op (core.roof_op,
	 * unnamed) reads "op: ...", not "op op: ...". */
	sp = op->name ? " " : "";
	nm = op->name ? op->name : "";
	if (bad(op->flop) || op->flop > ROOF_MAX_WORK)
		return gp_fail(err, "op%s%s: flop must be a non-negative "
		               "number up to %g (got %g)", sp, nm,
		               ROOF_MAX_WORK, op->flop);
	if (bad(op->bytes) || op->bytes > ROOF_MAX_WORK)
		return gp_fail(err, "op%s%s: bytes must be a non-negative "
		               "number up to %g (got %g)", sp, nm,
		               ROOF_MAX_WORK, op->bytes);
	if (bad(op->m) || bad(op->n) || bad(op->k) || bad(op->count) ||
	    op->m > ROOF_MAX_DIM || op->n > ROOF_MAX_DIM ||
	    op->k > ROOF_MAX_DIM || op->count > ROOF_MAX_DIM)
		return gp_fail(err, "op%s%s: GEMM m, n, k and count must be "
		               "0..%g", sp, nm, ROOF_MAX_DIM);
	if ((int)op->prec < 0 || op->prec >= GP_DTYPE_COUNT)
		return gp_fail(err, "op%s%s: unknown precision", sp, nm);
	if (bad(op->dequant) || op->dequant > ROOF_MAX_DEQUANT ||
	    op->gemv < 0 || op->gemv > 2)
		return gp_fail(err, "op%s%s: dequant must be 0..%g FLOP per "
		               "weight and gemv 0, 1 or 2", sp, nm, ROOF_MAX_DEQUANT);
	/* a count of conversions: 0 (not stated: once) or at least one */
	if (bad(op->dequant_rep) || op->dequant_rep > ROOF_MAX_DIM ||
	    (op->dequant_rep > 0.0 && op->dequant_rep < 1.0))
		return gp_fail(err, "op%s%s: dequant_rep must be 0 or in "
		               "[1, %g] (got %g)", sp, nm, ROOF_MAX_DIM,
		               op->dequant_rep);
	if (bad_frac(op->stream))
		return gp_fail(err, "op%s%s: stream must be 0 or in [%g, 1] "
		               "(got %g)", sp, nm, ROOF_MIN_FRAC, op->stream);
	/* A fixed tile is at least the MMA's smallest N, 8 ("N must be a
	 * multiple of 8", Ant Group's H20 blog on WGMMA). */
	if (bad(op->m_tile) || op->m_tile > ROOF_TILE ||
	    (op->m_tile > 0.0 && op->m_tile < 8.0))
		return gp_fail(err, "op%s%s: m_tile must be 0 or 8..%g rows",
		               sp, nm, ROOF_TILE);
	if (bad(op->bf16_x) || op->bf16_x > ROOF_BF16_X_MAX ||
	    (op->bf16_x > 0.0 && op->bf16_x < ROOF_BF16_X_MIN))
		return gp_fail(err, "op%s%s: bf16_x must be 0 or in [%g, %g] "
		               "(got %.9g)", sp, nm, ROOF_BF16_X_MIN,
		               ROOF_BF16_X_MAX, op->bf16_x);
	/* A GEMM needs the precision's tensor peak; other ops run on the
	 * fp32 vector units when the device has them (op_peak). */
	/* A GEMM at a precision with a peak but no GEMM fraction (fp32 on
	 * H100: 67 TFLOPS on the vector units, no achievable.gemm.fp32) was
	 * "device has no fp32 compute", which the same op without its shape
	 * contradicted: the missing figure is the GEMM's. */
	if (op_peak(d, op, &peak, &frac) && op->flop > 0.0 && peak > 0.0 &&
	    !(frac > 0.0))
		return gp_fail(err, "op%s%s: device has no %s GEMM rate (no "
		               "achievable.gemm.%s): a GEMM (m, n, k given) "
		               "runs at a precision the device's achievable."
		               "gemm names", sp, nm, gp_dtype_name(op->prec),
		               gp_dtype_name(op->prec));
	if (op->flop > 0.0 && (!(peak > 0.0) || !(frac > 0.0)))
		return gp_fail(err, "op%s%s: device has no %s compute", sp, nm,
		               gp_dtype_name(op->prec));
	roof_eval(d, op, graphs, out);
	return GP_OK;
}

double roof_time(const roof_device *d, const roof_op *op, int graphs)
{
	roof_result r;

	/* The time alone: the training step prices every operator and
	 * optimizer step by it, a few times per layout of a sweep. */
	roof_eval_time(d, op, graphs, &r);
	return r.time;
}

double roof_mem_time(const roof_device *d, double bytes, int graphs)
{
	/* roof_eval_time's lines for an op of bytes alone: not a GEMM, no
	 * FLOP (t_compute 0, no dequantisation), the longer of the two
	 * sides and the launch. */
	return fmax(0.0, mem_side(bytes, mem_rate(d, 0, GP_FP32, 0.0))) +
		(graphs ? d->graph_launch : d->launch);
}

const char *roof_bound_name(roof_bound b)
{
	return b == ROOF_COMPUTE ? "compute" : "memory";
}
