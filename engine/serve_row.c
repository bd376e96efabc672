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

static int row(sx *x, const char *name, double count, double flop,
               double bytes, double mm, double n, double k, double nb,
               gp_dtype prec, double mt, int spread, double *t)
{
	roof_op op;
	roof_result r;

	*t = 0.0;
	if (count <= 0.0)
		return GP_OK;
	/* Tensor-core kernels (gemv 0) that multiply what is stored
	 * (dequant 0), but for the routed experts of a kernel that widens
	 * them as it goes (x->dequant, serve_cfg.moe_upcast). */
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
	op.spread = spread;
	op.bf16_x = x->bf16_x;
	op.stream = x->stream;
	op.dequant = x->dequant;
	op.dequant_rep = x->dequant_rep;
	/* x->d passed serve_step_time's serve_check (infer_check), the
	 * only way to an sx: the op's checks alone. */
	if (roof_checked_op_time(x->d, &op, x->graphs, &r, x->err) != GP_OK)
		return GP_EINVAL;
	*t = r.time;
	record(x, name, count, flop, bytes, &r);
	return GP_OK;
}

int sx_row_mt(sx *x, const char *name, double count, double flop,
              double bytes, double mm, double n, double k, double nb,
              gp_dtype prec, double mt, double *t)
{
	return row(x, name, count, flop, bytes, mm, n, k, nb, prec, mt, 0, t);
}

/* The routed experts' grouped GEMM: nb experts touched, mm their mean
 * rows, each expert's own rows in whole tiles (roof_op.spread). */
int sx_row_experts(sx *x, const char *name, double count, double flop,
                   double bytes, double mm, double n, double k, double nb,
                   gp_dtype prec, double mt, double *t)
{
	return row(x, name, count, flop, bytes, mm, n, k, nb, prec, mt, 1, t);
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

double sx_wo_x(const sx *x, gp_dtype prec, double wbytes)
{
	return wbytes < ACT && (prec == GP_BF16 || prec == GP_FP16) ?
		x->c->base.wo_bf16_x : 0.0;
}

/* A dense linear's kernel cap (roof_op.bf16_x): fp8 weights on the
 * runtime's block-fp8 GEMM below the fp8 rate (serve_cfg.
 * linear_fp8_bf16_x), else the weight-only kernel's (sx_wo_x). */
double sx_lin_x(const sx *x, gp_dtype prec, double wbytes)
{
	return wbytes < ACT && prec == GP_FP8 && x->c->linear_fp8_bf16_x > 0.0 ?
		x->c->linear_fp8_bf16_x : sx_wo_x(x, prec, wbytes);
}

/* The weight-only test is sx_wo_x's, which is gp.infer's (infer.c
 * step_layers' wo: weights below 16 bits multiplied in 16), so that an
 * int4 GPTQ/AWQ model streams its linears and experts at the same
 * fraction on both paths (an AWQ MoE under vLLM read them at the
 * device's GEMM rate here, at Marlin's 0.81 in gp.infer). */
double sx_wo_stream(const sx *x, gp_dtype prec, double wbytes, int experts)
{
	if (!(wbytes < ACT && (prec == GP_BF16 || prec == GP_FP16)))
		return 0.0;
	return experts && x->c->expert_bits > 0 ? x->c->expert_wo_stream :
		x->c->base.wo_stream;
}

/* A GEMM over weights of wbytes each.  Held at 16 bits (the lm_head at
 * embed_bits: quantised checkpoints leave it unquantised, infer.c
 * infer_step) it multiplies on the 16-bit tensor cores, whatever format
 * the layers compute in. */
int sx_gemm(sx *x, const char *name, double count, double T, double n,
            double k, double wbytes, double *t)
{
	gp_dtype prec = wbytes >= ACT ? x->half : x->cp;
	int rc;

	x->bf16_x = sx_lin_x(x, prec, wbytes);
	x->stream = sx_wo_stream(x, prec, wbytes, 0);
	rc = sx_row_mt(x, name, count, 2.0 * T * n * k,
	               n * k * wbytes + T * (k + n) * ACT, T, n, k, 1.0,
	               prec, sx_tile(x, wbytes), t);
	x->bf16_x = 0.0;
	x->stream = 0.0;
	return rc;
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
 * attn_fwd, as train.c's attention; an FP8 kernel at attn_fp8 of that
 * fraction of the FP8 peak) times its shape factor against the
 * measurement's (roof_attn_eff: output m x n over k keys, nb of them; the
 * causal diagonal for a prompt of causal_q tokens, 0 for decode), memory
 * at the streaming rate, the longer of
 * the two (train.c's attention: FlashMLA and FA3 pipeline the KV stream
 * under the MMAs; FlashMLA's README gives 580 TFLOPS compute-bound and
 * 3000 GB/s memory-bound on H800).  Cross-check: the per-kernel table of
 * DeepSeek's H800 decode trace (profile-data decode.json, 64 sequences
 * per micro-batch at 4K, as tabulated on zdszero.github.io
 * deepseek_profile) has 255 us for the attention kernel: 573 TFLOPS if
 * each sequence verifies 2 tokens (MTP) -- FlashMLA's 580; with one
 * token 286 TFLOPS and 1.18 TB/s, under half of both of its README
 * limits.  The device's fraction is FA3's as measured inside a
 * training step on an H200 (catalog/archs.lua hopper: 0.713 at the
 * arch's sustained clock, achievable.sustained.attention 0.82: 0.585,
 * 578 TFLOPS on an H800), within 1% of that trace; the SGLang rows
 * (validation: the Eigen AI H200 and the LMSYS EP32 prefill rows) were
 * fast before it and are faster with it.  Without the measurement: the
 * GEMM of its shape. */
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
	if (roof_checked_op_time(d, &op, x->graphs, &r, x->err) != GP_OK)
		return GP_EINVAL;
	eff = roof_attn_eff(d, mm, n, k, nb, causal_q);
	/* An FP8 kernel (an 8-bit cache) at the catalog's share of the
	 * 16-bit kernel's fraction, of the FP8 peak: its tensor rate
	 * doubles, its softmax between the two matmuls does not (roof_device
	 * attn_fp8; the measurements in catalog/archs.lua). */
	r.compute_rate = d->peak[x->ap] * d->attn_fwd * eff *
		(x->ap == GP_FP8 && d->attn_fp8 > 0 ? d->attn_fp8 : 1.0);
	/* A prompt's chunk over an FP8 cache on a kernel held below the
	 * FP8 tensor rate (infer.h infer_cfg.kv_fp8_prompt_x, vLLM's FA3
	 * with two-level accumulation): at most that multiple of the
	 * 16-bit kernel's rate at the same shape.  A decode keeps its. */
	if (causal_q > 0 && x->ap == GP_FP8 &&
	    x->c->base.kv_fp8_prompt_x > 0.0 && d->peak[x->half] > 0)
		r.compute_rate = fmin(r.compute_rate,
		                      x->c->base.kv_fp8_prompt_x *
		                      d->peak[x->half] * d->attn_fwd * eff);
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
