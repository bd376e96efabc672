/*
 * serve_row.c - one operator of a serving step on the roofline: GEMMs at
 * the deployment's M tile, the activation casts below 16 bits, the fused
 * attention core at its measured rate, each recorded as a row of the
 * step (see serve_step_int.h).  Sources as in serve.c.
 */
#include "serve_step_int.h"

#include <math.h>
#include <string.h>

#define ACT SX_ACT       /* bf16 activations (serve_step_int.h) */


/* Bytes per element written by an activation quantisation pass: the
 * 8-bit value and one fp32 scale per 128 elements (DeepSeek-V3 sec.
 * 3.3.2, 1 x 128 tiles for activations; DeepGEMM's LHS scales). */
#define QUANT_GROUP 128.0

/* The fraction of the FP8 peak a fused FP8 attention kernel reaches,
 * against the fraction of the 16-bit peak its 16-bit twin reaches (the
 * catalog's attn_fwd, measured on 16-bit kernels): the tensor cores'
 * rate doubles, the softmax between the two matmuls (exponentials, the
 * row max and sum, P cast to FP8 for the second matmul) does not.
 * FlashAttention-3 on H100 SXM (Shah et al. 2024, abstract): "FP16
 * reaching up to 740 TFLOPs/s (75% utilization), and with FP8 reaching
 * close to 1.2 PFLOPs/s", of the 989.4 / 1978.9 TFLOP/s dense peaks:
 * (1200 / 1978.9) / (740 / 989.4) = 0.606 / 0.748 = 0.81, FP8 1.62x
 * its 16-bit twin, not 2x.  The MLA decode kernels agree: Ant Group's
 * FP8 FlashMLA on H20 (LMSYS blog 2025-09-26, FlashMLA PR 82):
 * "Compared to BF16 FlashMLA, this yields ~70% speedup" (0.85).
 * End to end the gain is smaller still, and this model still
 * overstates it: TensorRT-LLM tech blog 3 (DeepSeek-R1 1K/2K on 8
 * B200s, FP8 MLA decode): the FP8 KV cache "yielded a 6% E2E
 * throughput increase when assuming the concurrency was identical"
 * (this model, at that deployment's published batch 384: +8.2%, +10.8%
 * at 2x); Ant's decode at BS=56 on H20: "+16.9%" (this model: +25%,
 * +36% at 2x). */
#define SX_ATTN_FP8 0.81

/* Add an operator's row (count per micro-batch pass) to the step: its
 * time always, the row while there is room. */
static void record(sx *x, const char *name, double count, double flop,
                   double bytes, const roof_result *r)
{
	infer_op_row *w;

	if (!x->st)
		return;
	x->st->compute += count * x->passes * r->time;
	if (x->st->nops >= SERVE_MAX_OPS)
		return;
	w = &x->st->ops[x->st->nops++];
	w->name = name;
	w->count = count * x->passes;
	w->flop = flop;
	w->bytes = bytes;
	w->r = *r;
	w->total = w->count * r->time;
}

int sx_row_mt(sx *x, const char *name, double count, double flop,
              double bytes, double mm, double n, double k, double nb,
              gp_dtype prec, double mt, double *t)
{
	roof_op op;
	roof_result r;

	*t = 0.0;
	if (count <= 0.0)
		return GP_OK;
	/* Tensor-core kernels that multiply what is stored (gemv 0,
	 * dequant 0): the grouped expert GEMMs and the batched decode
	 * GEMMs of an EP deployment. */
	memset(&op, 0, sizeof op);
	op.name = name;
	op.flop = flop;
	op.bytes = bytes;
	op.m = mm;
	op.n = n;
	op.k = k;
	op.count = nb;
	op.prec = prec;
	op.m_tile = mt;
	if (roof_op_time(x->d, &op, x->graphs, &r, x->err) != GP_OK)
		return GP_EINVAL;
	*t = r.time;
	record(x, name, count, flop, bytes, &r);
	return GP_OK;
}

int sx_row(sx *x, const char *name, double count, double flop,
           double bytes, double mm, double n, double k, double nb,
           gp_dtype prec, double *t)
{
	return sx_row_mt(x, name, count, flop, bytes, mm, n, k, nb, prec, 0.0,
	                 t);
}

/* The M tile of a GEMM over weights of wbytes each: the deployment's
 * (DeepGEMM's) for the block-scaled sub-16-bit linears, the library's
 * choice for 16-bit ones (cuBLAS). */
double sx_tile(const sx *x, double wbytes)
{
	return wbytes < ACT ? x->m_tile : 0.0;
}

int sx_gemm(sx *x, const char *name, double count, double T, double n,
            double k, double wbytes, double *t)
{
	return sx_row_mt(x, name, count, 2.0 * T * n * k,
	                 n * k * wbytes + T * (k + n) * ACT, T, n, k, 1.0,
	                 x->cp, sx_tile(x, wbytes), t);
}

/* nb GEMMs of T x n x k over 16-bit weights (per-head batched GEMMs). */
int sx_bmm16(sx *x, const char *name, double count, double nb,
             double T, double n, double k, double *t)
{
	return sx_row(x, name, count, 2.0 * nb * T * n * k,
	              nb * (n * k + T * (k + n)) * ACT, T, n, k, nb, x->half,
	              t);
}

/* A pass casting `elems` bf16 activations to the GEMMs' input format
 * with per-128 scales (QUANT_GROUP) when the GEMMs compute below 16 bits:
 * DeepGEMM takes fp8 LHS with its scales and leaves the cast to the
 * caller (README: "implement or fuse them into prior kernels"), which
 * SGLang runs as per_token_group_quant_fp8 kernels of their own.  None
 * at 16 bits. */
int sx_quant(sx *x, const char *name, double count, double elems,
             double *t)
{
	double qb = gp_dtype_bytes(x->cp);

	*t = 0.0;
	if (!(qb < ACT) || elems <= 0)
		return GP_OK;
	/* An amax and a scale per group, a multiply per element. */
	return sx_row(x, name, count, 3.0 * elems,
	              elems * (ACT + qb + 4.0 / QUANT_GROUP), 0, 0, 0, 0,
	              x->cp, t);
}

/* The attention core on the fused kernel: compute at the device's
 * measured attention fraction of the precision's peak (roof_device
 * attn_fwd, as train.c's attention; an FP8 kernel at SX_ATTN_FP8 of
 * that fraction of the FP8 peak) times its shape factor against the
 * measurement's (roof_attn_eff: output m x n over k keys, nb of them; the
 * causal diagonal for a prompt of causal_q tokens, 0 for decode), memory
 * at the streaming rate, the longer of
 * the two (train.c's attention: FlashMLA and FA3 pipeline the KV stream
 * under the MMAs; FlashMLA's README gives 580 TFLOPS compute-bound and
 * 3000 GB/s memory-bound on H800).  Cross-check: the per-kernel table of
 * DeepSeek's H800 decode trace (profile-data decode.json, 64 sequences
 * per micro-batch at 4K, as tabulated on zdszero.github.io
 * deepseek_profile) has 255 us for the attention kernel: 573 TFLOPS if
 * each sequence verifies 2 tokens (MTP), the rate FA3's 0.60 gives to
 * within 4%.  Without the measurement: the GEMM of its shape. */
int sx_attn_row(sx *x, const char *name, double count, double flop,
                double bytes, double mm, double n, double k, double nb,
                double causal_q, double *t)
{
	const roof_device *d = x->d;
	roof_op op;
	roof_result r;
	double eff, tc;

	*t = 0.0;
	if (count <= 0.0)
		return GP_OK;
	if (!(d->attn_fwd > 0))
		return sx_row(x, name, count, flop, bytes, mm, n, k, nb,
		              x->ap, t);
	memset(&op, 0, sizeof op);
	op.name = name;
	op.bytes = bytes;
	op.prec = x->ap;
	if (roof_op_time(d, &op, x->graphs, &r, x->err) != GP_OK)
		return GP_EINVAL;
	eff = roof_attn_eff(d, mm, n, k, nb, causal_q);
	r.compute_rate = d->peak[x->ap] * d->attn_fwd * eff *
		(x->ap == GP_FP8 ? SX_ATTN_FP8 : 1.0);
	tc = flop > 0 ? flop / r.compute_rate : 0.0;
	r.t_compute = tc;
	r.shape_eff = eff;
	r.bound = tc >= r.t_memory ? ROOF_COMPUTE : ROOF_MEMORY;
	r.time = fmax(tc, r.t_memory) + r.t_launch;
	r.intensity = bytes > 0 ? flop / fmax(bytes, 1.0) : 0.0;
	r.ridge = roof_ridge(d, x->ap, 1);
	r.ridge_peak = roof_ridge(d, x->ap, 0);
	*t = r.time;
	record(x, name, count, flop, bytes, &r);
	return GP_OK;
}
