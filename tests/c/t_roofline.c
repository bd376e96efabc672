/* t_roofline.c - roofline op time, ridge points and the GEMM shape term. */
#include <math.h>
#include <string.h>

#include "roofline.h"
#include "tap.h"

/* H100 SXM as the catalog gives it: dense bf16 989 TFLOPS, fp8 1979,
 * fp32 67, HBM 3.35 TB/s; Hopper achievable bf16 0.80, fp8 0.71,
 * hbm 0.84; launch 4 us, in a graph 1 us; 132 SMs. */
static void h100(roof_device *d)
{
	memset(d, 0, sizeof *d);
	d->peak[GP_BF16] = 989e12;
	d->peak[GP_FP8] = 1979e12;
	d->peak[GP_FP32] = 67e12;
	d->gemm_frac[GP_BF16] = 0.80;
	d->gemm_frac[GP_FP8] = 0.71;
	d->mem_bw = 3.35e12;
	d->hbm_frac = 0.84;
	d->launch = 4e-6;
	d->graph_launch = 1e-6;
	d->sms = 132;
}

int main(void)
{
	roof_device d;
	roof_op op;
	roof_result r;
	gp_error err;
	double e, kf;

	plan(127);
	h100(&d);
	ok(roof_device_check(&d, &err) == GP_OK, "H100 device is valid");

	/* Ridge at peak: 989e12 / 3.35e12 = 295.22 FLOP/byte (the issue's
	 * hand figure); exact arithmetic, tolerance 1e-9 for rounding. */
	is_num(roof_ridge(&d, GP_BF16, 0), 989e12 / 3.35e12, 1e-9,
	       "H100 bf16 ridge at peak = 295.2 FLOP/B");
	is_num(roof_ridge(&d, GP_BF16, 0), 295.0, 0.002,
	       "... which is ~295 FLOP/B");
	/* Achievable: 989e12 * 0.80 / (3.35e12 * 0.84) = 281.16. */
	is_num(roof_ridge(&d, GP_BF16, 1), 791.2e12 / 2.814e12, 1e-9,
	       "H100 bf16 achievable ridge = 281.2 FLOP/B");
	/* fp8: 1979e12 * 0.71 / 2.814e12 = 499.3. */
	is_num(roof_ridge(&d, GP_FP8, 1), 1979e12 * 0.71 / 2.814e12, 1e-9,
	       "H100 fp8 achievable ridge = 499 FLOP/B");
	ok(roof_ridge(&d, GP_FP4, 1) == 0.0, "no fp4 peak -> ridge 0");

	/* Shape term without SMs (no wave term): a large square GEMM has
	 * whole tiles and the reference K -> 1 exactly. */
	d.sms = 0;
	is_num(roof_gemm_eff(&d, 8192, 8192, 8192, 1), 1.0, 1e-12,
	       "8192^3 GEMM: shape efficiency 1");
	/* Decode GEMV m = 1: the row is padded to a 16-row MMA edge ->
	 * 1/16, times the K fill (4096/4224)/(8192/8320) = 0.984848. */
	is_num(roof_gemm_eff(&d, 1, 4096, 4096, 1),
	       (1.0 / 16) * (4096.0 / 4224) / (8192.0 / 8320), 1e-12,
	       "m=1 GEMV: 1/16 tile use x K fill");
	/* m = 200: tiles of 128 -> 2 tiles = 256 rows, 200/256 = 0.78125. */
	is_num(roof_gemm_eff(&d, 200, 8192, 8192, 1), 200.0 / 256, 1e-12,
	       "m=200: tile quantisation 200/256");
	/* k = 128 (a short reduction): 128/256 / (8192/8320) = 0.5078. */
	is_num(roof_gemm_eff(&d, 8192, 8192, 128, 1),
	       (128.0 / 256) / (8192.0 / 8320), 1e-12,
	       "k=128: pipeline fill halves the rate");
	ok(roof_gemm_eff(&d, 0, 10, 10, 1) == 1.0, "not a GEMM -> 1");
	/* Fused attention against its causal 8k measurement (no SMs: no
	 * wave term): a causal prompt of q tokens, head dim 128, q / 2 keys
	 * a query on average.  q = 1024: K fill (512.5/640.5) and diagonal
	 * 8/9, against 8k's (4096.5/4224.5) and 64/65 (the reference K
	 * 8192 cancels) -> 0.7449; the FA3 paper's causal head-dim-128
	 * figure has cuDNN at 410/529 = 0.775 and FA3 at 423/602 = 0.703. */
	is_num(roof_attn_eff(&d, 1024, 128, 512.5, 1, 1024),
	       (512.5 / 640.5) * (8.0 / 9) / ((4096.5 / 4224.5) * (64.0 / 65)),
	       1e-12, "attention at 1k: 0.745 of its 8k rate");
	/* q = 4096: (2048.5/2176.5) x 32/33 over the same -> 0.9559
	 * (cuDNN 518/529 = 0.979, FA3 579/602 = 0.962). */
	is_num(roof_attn_eff(&d, 4096, 128, 2048.5, 1, 4096),
	       (2048.5 / 2176.5) * (32.0 / 33) / ((4096.5 / 4224.5) * (64.0 / 65)),
	       1e-12, "attention at 4k: 0.956 of its 8k rate");
	/* Longer than the measurement: not credited beyond it. */
	ok(roof_attn_eff(&d, 32768, 128, 16384.5, 1, 32768) == 1.0,
	   "attention at 32k: capped at the 8k rate");
	/* The exponentials' bound (attn_exp_dim d*): a head dim d runs at
	 * d / max(d, d*) of the tensor cores' rate, against 128 / max(128,
	 * d*) at the measurement's head dim.  Hopper's d* = 4096 / (4 x 16)
	 * = 64: head dim 64 at 8k keeps the whole rate (the shape terms at
	 * n = 64 cancel against the reference's at the same n). */
	d.attn_exp_dim = 64;
	ok(roof_device_check(&d, &err) == GP_OK, "exp_dim 64 is valid");
	is_num(roof_attn_eff(&d, 8192, 64, 4096.5, 1, 8192), 1.0, 1e-12,
	       "Hopper, head dim 64: not bound by the exponentials");
	/* Blackwell's d* = 89 (FA4 at 64 / 128: 0.716): head dim 64 at
	 * (64 / 89) / (128 / 128) = 0.7191 of the rate; 128 untouched. */
	d.attn_exp_dim = 89;
	is_num(roof_attn_eff(&d, 8192, 64, 4096.5, 1, 8192), 64.0 / 89,
	       1e-12, "Blackwell, head dim 64: 64 / 89 of the rate");
	is_num(roof_attn_eff(&d, 8192, 128, 4096.5, 1, 8192), 1.0, 1e-12,
	       "Blackwell, head dim 128: the measurement's rate");
	d.attn_exp_dim = -1;
	ok(roof_device_check(&d, &err) == GP_EINVAL &&
	   strstr(err.msg, "exp_dim") != NULL, "a negative exp_dim: refused");
	d.attn_exp_dim = 0;

	/* A kernel's length curve past its reference (attn_ref_q,
	 * attn_long): the A100 Triton FlashAttention entry, read at 4k
	 * tokens, with FlashAttention-1's causal head-dim-128 bars 76 / 80 /
	 * 83 TFLOP/s at 4k / 8k / 16k (FA2 paper Fig. 4d) as its curve:
	 * 80/76 at 8k, 83/76 at 16k.  No SMs (no wave term). */
	d.attn_ref_q = 4096;
	d.attn_long_n = 2;
	d.attn_long_q[0] = 8192;
	d.attn_long_r[0] = 80.0 / 76;
	d.attn_long_q[1] = 16384;
	d.attn_long_r[1] = 83.0 / 76;
	ok(roof_device_check(&d, &err) == GP_OK, "a 4k reference with a "
	   "two-point curve is valid");
	/* At the reference the shape terms cancel and the curve is 1. */
	is_num(roof_attn_eff(&d, 4096, 128, 2048.5, 1, 4096), 1.0, 1e-12,
	       "curve: 4k, the reference's rate");
	/* Below it the shape terms against 4k, not 8k: K fill
	 * 1024.5/1152.5 and diagonal 16/17 at 2k over 2048.5/2176.5 and
	 * 32/33 at 4k -> 0.9126 (the reference K cancels). */
	is_num(roof_attn_eff(&d, 2048, 128, 1024.5, 1, 2048),
	       (1024.5 / 1152.5) * (16.0 / 17) /
	       ((2048.5 / 2176.5) * (32.0 / 33)), 1e-12,
	       "curve: 2k against the 4k reference, 0.913");
	/* Half way (in log2) from 4k to 8k, 4096 sqrt 2 = 5793 tokens: the
	 * shape terms capped at 1, times 1 + (80/76 - 1) / 2 = 78/76
	 * (tolerance: log2 of the rounded sqrt 2, ~1e-16). */
	is_num(roof_attn_eff(&d, 4096 * sqrt(2.0), 128,
	                     (4096 * sqrt(2.0) + 1) / 2, 1, 4096 * sqrt(2.0)),
	       78.0 / 76, 1e-12, "curve: 5.8k, 78/76 (log-linear from 4k)");
	/* At the published points: 80/76 = 1.0526 at 8k, and half way from
	 * 8k to 16k (11585 tokens) 81.5/76 = 1.0724. */
	is_num(roof_attn_eff(&d, 8192, 128, 4096.5, 1, 8192), 80.0 / 76,
	       1e-12, "curve: 8k, the 8k bar over the 4k one, 80/76");
	is_num(roof_attn_eff(&d, 8192 * sqrt(2.0), 128,
	                     (8192 * sqrt(2.0) + 1) / 2, 1, 8192 * sqrt(2.0)),
	       81.5 / 76, 1e-12, "curve: 11.6k, 81.5/76 (log-linear)");
	/* Past the last bar the curve is held: 64k at 83/76 = 1.0921. */
	is_num(roof_attn_eff(&d, 65536, 128, 32768.5, 1, 65536), 83.0 / 76,
	       1e-12, "curve: 64k held at the 16k bar, 83/76");
	/* Not causal (decode, a square kernel): the curve, read off causal
	 * prompts, does not apply; the shape terms cap at 1. */
	ok(roof_attn_eff(&d, 65536, 128, 65536, 1, 0) == 1.0,
	   "curve: a non-causal call keeps the capped rate");
	/* Refused: lengths out of order, a rise past 4x, a negative
	 * reference, more points than the device holds. */
	d.attn_long_q[1] = 8192;
	ok(roof_device_check(&d, &err) == GP_EINVAL &&
	   strstr(err.msg, "point 2") != NULL, "curve: a repeated length "
	   "refused");
	d.attn_long_q[1] = 16384;
	d.attn_long_r[1] = 4.5;
	ok(roof_device_check(&d, &err) == GP_EINVAL &&
	   strstr(err.msg, "rate over the reference") != NULL,
	   "curve: a 4.5x rise refused");
	d.attn_long_r[1] = 83.0 / 76;
	d.attn_long_q[0] = 4096;
	ok(roof_device_check(&d, &err) == GP_EINVAL &&
	   strstr(err.msg, "must exceed 4096") != NULL,
	   "curve: a point at the reference itself refused");
	d.attn_long_q[0] = 8192;
	d.attn_ref_q = -1;
	ok(roof_device_check(&d, &err) == GP_EINVAL &&
	   strstr(err.msg, "seq") != NULL, "a negative reference refused");
	d.attn_ref_q = 4096;
	d.attn_long_n = ROOF_ATTN_LONG_MAX + 1;
	ok(roof_device_check(&d, &err) == GP_EINVAL &&
	   strstr(err.msg, "at most") != NULL, "too many points refused");
	d.attn_ref_q = 0;
	d.attn_long_n = 0;

	/* A narrow head's bars (attn_narrow): FlashAttention-1's A100
	 * causal bars at head dim 64 over 128 at 4k and 16k, 87/76 and
	 * 97/83 (FA2 paper Fig. 4c / 4d).  At 32k the shape terms cap at 1
	 * (no reference: 8k, and no length curve), so the ratio alone
	 * shows, held at the last point; at 8k, half way in log2 from 4k
	 * to 16k, the mean of the two ratios; head dim 128 and a non-causal
	 * call do not take it.  Exact to rounding (1e-12). */
	d.attn_narrow_dim = 64;
	d.attn_narrow_n = 2;
	d.attn_narrow_q[0] = 4096;
	d.attn_narrow_r[0] = 87.0 / 76;
	d.attn_narrow_q[1] = 16384;
	d.attn_narrow_r[1] = 97.0 / 83;
	ok(roof_device_check(&d, &err) == GP_OK, "narrow: a two-point "
	   "head dim 64 curve is valid");
	is_num(roof_attn_eff(&d, 32768, 64, 16384.5, 1, 32768), 97.0 / 83,
	       1e-12, "narrow: head dim 64 at 32k held at the 16k ratio");
	is_num(roof_attn_eff(&d, 8192, 64, 4096.5, 1, 8192),
	       (87.0 / 76 + 97.0 / 83) / 2, 1e-12,
	       "narrow: 8k half way (log2) between the 4k and 16k ratios");
	ok(roof_attn_eff(&d, 32768, 128, 16384.5, 1, 32768) == 1.0,
	   "narrow: head dim 128 keeps the fractions");
	ok(roof_attn_eff(&d, 32768, 64, 32768, 1, 0) == 1.0,
	   "narrow: a non-causal call keeps the fractions");
	d.attn_narrow_dim = 0;
	ok(roof_device_check(&d, &err) == GP_EINVAL &&
	   strstr(err.msg, "narrow dim") != NULL,
	   "narrow: points without a head dim refused");
	d.attn_narrow_dim = 64;
	d.attn_narrow_q[1] = 4096;
	ok(roof_device_check(&d, &err) == GP_EINVAL &&
	   strstr(err.msg, "narrow point 2") != NULL,
	   "narrow: a repeated length refused");
	d.attn_narrow_dim = 0;
	d.attn_narrow_n = 0;

	/* A kernel that pads the head dim to the next power of two, at
	 * least 16 (attn_head_pow2: HazyResearch's Triton FlashAttention,
	 * BLOCK_HEADDIM = max(next_power_of_2(d), 16)), measured at head dim
	 * 128.  At 32k tokens the shape terms cap at 1 (above), so the
	 * factor alone shows: d / block(d) over 128 / 128.  Exact to
	 * rounding (1e-12). */
	d.attn_head_pow2 = 1;
	is_num(roof_attn_eff(&d, 32768, 96, 16384.5, 1, 32768), 96.0 / 128,
	       1e-12, "pow2 head: 96 runs 128's tile, 0.75");
	is_num(roof_attn_eff(&d, 32768, 128, 16384.5, 1, 32768), 1.0,
	       1e-12, "pow2 head: 128, the measured tile, 1");
	is_num(roof_attn_eff(&d, 32768, 80, 16384.5, 1, 32768), 80.0 / 128,
	       1e-12, "pow2 head: 80 in a 128 tile, 0.625");
	is_num(roof_attn_eff(&d, 32768, 64, 16384.5, 1, 32768), 1.0,
	       1e-12, "pow2 head: 64, a whole tile of its own, 1");
	is_num(roof_attn_eff(&d, 32768, 8, 16384.5, 1, 32768), 8.0 / 16,
	       1e-12, "pow2 head: 8 in the 16-wide floor, 0.5");
	d.attn_head_pow2 = 0;
	is_num(roof_attn_eff(&d, 32768, 96, 16384.5, 1, 32768), 1.0,
	       1e-12, "a kernel compiled per head dim: 96 keeps the rate");

	/* Wave quantisation with split-K on 132 SMs: 1280 x 1280 -> 100
	 * tiles, one wave 100/132 = 0.758.  Best split s = 5: 500 slices,
	 * ceil(500/132) = 4 waves -> 500/528 = 0.94697, each slice K
	 * 8192/5 = 1638.4 deep: fill (1638.4/1766.4)/(8192/8320) = 0.94203
	 * -> 0.89207 (by hand over s = 1..16: s = 9 gives 0.8673, s = 13
	 * 0.8313, s = 1 0.7576; s = 5 is the best). */
	d.sms = 132;
	e = roof_gemm_eff(&d, 1280, 1280, 8192, 1);
	is_num(e, 500.0 / 528 * (1638.4 / 1766.4) / (8192.0 / 8320), 1e-9,
	       "1280^2 x 8192 on 132 SMs: split-K 5 -> 0.892");

	/* A memory-bound op: 1 GFLOP over 1 GB at bf16.  Memory
	 * 1e9 / (3.35e12 * 0.84) = 355.37 us + 3.9 us pipeline fill;
	 * compute 1e9 / 791.2e12 = 1.26 us (non-GEMM ops use the fp32
	 * vector peak: 1e9 / 67e12 = 14.9 us) -> memory-bound, + 1 us graph
	 * launch. */
	memset(&op, 0, sizeof op);
	op.name = "copy";
	op.flop = 1e9;
	op.bytes = 1e9;
	op.prec = GP_BF16;
	ok(roof_op_time(&d, &op, 1, &r, &err) == GP_OK, "memory op times");
	is_num(r.time, 1e9 / 2.814e12 + 3.9e-6 + 1e-6, 1e-9,
	       "memory op: bytes / (bw * 0.84) + 3.9 us fill + 1 us");
	/* Streaming efficiency: 355.37 / (355.37 + 3.9) = 0.98914. */
	is_num(r.mem_eff, (1e9 / 2.814e12) / (1e9 / 2.814e12 + 3.9e-6),
	       1e-9, "... achieves 0.989 of the streaming rate");
	/* A 16 MB elementwise kernel: 16e6 / 2.814e12 = 5.686 us + 3.9 us
	 * fill -> 0.593 of the streaming rate: small kernels fall short.
	 * Exact arithmetic: tolerance 1e-9. */
	op.flop = 0.0;
	op.bytes = 16e6;
	MUST(roof_op_time(&d, &op, 1, &r, &err));
	is_num(r.mem_eff, (16e6 / 2.814e12) / (16e6 / 2.814e12 + 3.9e-6), 1e-9,
	       "16 MB kernel: 0.593 of the streaming rate");
	/* A batch-1 GEMV through an 8192 x 8192 bf16 weight (134.2 MB):
	 * streamed at 0.94 x 2.814e12 = 2.645e12 B/s = 50.74 us + 3.9 us
	 * fill; compute 2 x 8192^2 / (791.2e12 x shape eff) is ~1 us. */
	op.name = "gemv";
	op.m = 1;
	op.n = op.k = 8192;
	op.flop = 2.0 * 8192 * 8192;
	op.bytes = 8192.0 * 8192 * 2 + 2.0 * 8192 * 2;
	MUST(roof_op_time(&d, &op, 1, &r, &err));
	is_num(r.t_memory, op.bytes / (2.814e12 * 0.94) + 3.9e-6, 1e-9,
	       "GEMV: bytes / (bw * 0.84 * 0.94) + 3.9 us");
	ok(r.bound == ROOF_MEMORY, "... memory-bound");
	/* mem_eff = bytes / t_memory / (bw x 0.84): the stream time
	 * 134250496 / 2.645e12 = 50.75 us at 0.94 of the streaming rate,
	 * diluted by the 3.9 us fill: 0.94 x 50.75 / 54.65 = 0.8729.
	 * Exact arithmetic: tolerance 1e-9. */
	is_num(r.mem_eff, 0.94 * (op.bytes / (2.814e12 * 0.94)) /
	       (op.bytes / (2.814e12 * 0.94) + 3.9e-6), 1e-9,
	       "... at 0.873 of the streaming rate");
	is_num(r.mem_rate, 2.814e12 * 0.94, 1e-12,
	       "... GEMM memory rate is 0.94 of the streaming copy");
	/* A measured streaming fraction for another precision leaves this
	 * bf16 GEMV alone; one for its own precision replaces the 0.94:
	 * 0.70 x 2.814e12 = 1.9698e12 B/s, t_memory = 134250496 /
	 * 1.9698e12 + 3.9 us = 72.06 us.  Exact arithmetic: 1e-9. */
	d.stream_frac[GP_FP4] = 0.70;
	MUST(roof_op_time(&d, &op, 1, &r, &err));
	is_num(r.mem_rate, 2.814e12 * 0.94, 1e-12,
	       "stream_frac for fp4 leaves a bf16 GEMM at 0.94");
	d.stream_frac[GP_BF16] = 0.70;
	MUST(roof_op_time(&d, &op, 1, &r, &err));
	is_num(r.t_memory, op.bytes / (2.814e12 * 0.70) + 3.9e-6, 1e-9,
	       "stream_frac 0.70 for bf16: bytes / (bw x 0.84 x 0.70) + fill");
	/* Not a GEMM (no shape): the streaming copy's rate, whatever the
	 * precision's GEMM streaming fraction. */
	op.m = op.n = op.k = 0;
	MUST(roof_op_time(&d, &op, 1, &r, &err));
	is_num(r.mem_rate, 2.814e12, 1e-12,
	       "... an elementwise op still streams at the copy's rate");
	d.stream_frac[GP_BF16] = 1.5;
	ok(roof_device_check(&d, &err) != GP_OK &&
	   strstr(err.msg, "achievable.stream.bf16") != NULL,
	   "stream_frac above 1 refused, naming achievable.stream.bf16");
	d.stream_frac[GP_BF16] = d.stream_frac[GP_FP4] = 0.0;
	op.m = 1;
	op.n = op.k = 8192;
	op.bytes = 0.0;
	op.flop = 0.0;
	MUST(roof_op_time(&d, &op, 1, &r, &err));
	ok(r.t_memory == 0.0 && r.mem_eff == 1.0,
	   "an op that moves no bytes pays no fill");
	op.name = "copy";
	op.m = op.n = op.k = 0;
	op.flop = 1e9;
	op.bytes = 1e9;
	MUST(roof_op_time(&d, &op, 1, &r, &err));
	ok(r.bound == ROOF_MEMORY, "... and is memory-bound");
	is_num(r.intensity, 1.0, 1e-12, "... intensity 1 FLOP/B");
	is_num(r.t_compute, 1e9 / 67e12, 1e-9,
	       "non-GEMM op runs on the fp32 vector peak");

	/* A large bf16 GEMM 8192^3: 2 * 8192^3 = 1.0995e12 FLOP, bytes
	 * 3 * 8192^2 * 2 = 402.7 MB -> intensity 2730 > ridge: compute
	 * bound.  On 132 SMs: 4096 tiles, s = 1: 4096/(32*132) = 0.969697;
	 * s = 2: 8192/(63*132) = 0.985137 x (4096/4224)/(8192/8320) =
	 * 0.970211 (best; s = 3 gives 0.9608).  t_c = 1.0995e12 /
	 * (791.2e12 * 0.970211) = 1.4323 ms; t_m = 402.65e6 / (3.35e12 x
	 * 0.84 x 0.94) + 3.9 us = 156.1 us; time = sqrt(t_c^2 + t_m^2)
	 * (overlap, p = 2) + 4 us (eager launch) = 1.4448 ms, 0.6% above
	 * the plain roofline max. */
	op.name = "gemm";
	op.flop = 2.0 * 8192.0 * 8192.0 * 8192.0;
	op.bytes = 3.0 * 8192.0 * 8192.0 * 2.0;
	op.m = op.n = op.k = 8192;
	ok(roof_op_time(&d, &op, 0, &r, &err) == GP_OK && r.bound ==
	   ROOF_COMPUTE, "8192^3 GEMM is compute-bound");
	is_num(r.shape_eff, 8192.0 / 8316 * (4096.0 / 4224) / (8192.0 / 8320),
	       1e-9, "8192^3 on 132 SMs: wave + split-K efficiency 0.970");
	e = op.flop / (791.2e12 * r.shape_eff);
	is_num(r.time, sqrt(e * e + pow(op.bytes / 2.64516e12 + 3.9e-6, 2))
	       + 4e-6, 1e-9, "8192^3 GEMM time = hypot(t_c, t_m) + 4 us");

	/* Overlap of the two roofs, exact: compute-bound (4, 3) is the
	 * p = 2 smooth maximum hypot = 5; memory-bound (3, 4) exposes
	 * (3/4)^2 of the excess: 4 + 0.5625 x (5 - 4) = 4.5625. */
	is_num(roof_overlap(4.0, 3.0), 5.0, 1e-12, "overlap(4, 3) = 5");
	is_num(roof_overlap(3.0, 4.0), 4.5625, 1e-12,
	       "overlap(3, 4) = 4.5625 (memory-bound)");
	is_num(roof_overlap(2.0, 0.0), 2.0, 1e-12,
	       "overlap(t, 0) = t: nothing to hide");
	ok(roof_overlap(0.0, 0.0) == 0.0, "overlap(0, 0) = 0");

	/* DeepGEMM README (H800 = H100 compute and HBM): 2 groups of
	 * M = 512, N = 4096, K = 7168 FP8 at 1040 TFLOPS, i.e. 6.0130e10 /
	 * 1040e12 = 57.82 us.  Model: 128 tiles x 2 = 256 on 132 SMs, s = 1
	 * best: 256/264 x (7168/7296)/(8192/8320) = 0.967570, rate 1979e12
	 * x 0.71 x 0.967570 = 1359.55e12, t_c = 44.228 us; bytes 2 x 4096 x
	 * 7168 + 2 x 512 x 7168 (fp8) + 2 x 512 x 4096 x 2 (bf16 out) =
	 * 74.449e6, t_m = 74.449e6 / 2.64516e12 + 3.9 us = 32.046 us;
	 * time = hypot = 54.618 us + 1 us graph launch = 55.618 us: within
	 * 10% of the measurement (the plain max, 45.2 us, is 22% short). */
	op.name = "deepgemm";
	op.flop = 2.0 * 2 * 512 * 4096 * 7168;
	op.bytes = 2.0 * 4096 * 7168 + 2.0 * 512 * 7168 + 2.0 * 512 * 4096 * 2;
	op.m = 512;
	op.n = 4096;
	op.k = 7168;
	op.count = 2;
	op.prec = GP_FP8;
	ok(roof_op_time(&d, &op, 1, &r, &err) == GP_OK, "DeepGEMM shape");
	is_num(r.time, 55.618e-6, 1e-4, "M=512 FP8 GEMM: 55.6 us (hand)");
	is_num(r.time, 57.82e-6, 0.10, "... within 10% of DeepGEMM's 57.8");
	op.count = 0;
	op.prec = GP_BF16;

	/* Small-M kernels (roofline.c): a 70B mlp_up (n 57344, k 8192) at
	 * one token with int4 weights, 0.5195 B each.  On H100 the tile
	 * path's compute is the longer of the padded MMAs and the 4 vector
	 * FLOP per weight of dequantisation: 4 x 57344 x 8192 / 67e12 =
	 * 28.045 us against 939524096 / (791.2e12 x ~0.06) ~ 20 us, so the
	 * dequantisation, exactly. */
	memset(&op, 0, sizeof op);
	op.name = "mlp_up";
	op.flop = 2.0 * 57344 * 8192;
	op.bytes = 57344.0 * 8192 * 0.5195;
	op.m = 1;
	op.n = 57344;
	op.k = 8192;
	op.count = 1;
	op.prec = GP_BF16;
	op.dequant = 4.0;
	ok(roof_op_time(&d, &op, 1, &r, &err) == GP_OK &&
	   r.bound == ROOF_MEMORY, "H100 int4 batch-1 GEMM: memory-bound");
	is_num(r.t_compute, 4.0 * 57344 * 8192 / 67e12, 1e-12,
	       "... its compute side is the dequantisation, 28.0 us");
	/* H20: bf16 148e12 x 0.80, fp32 44e12, 4.0 TB/s, 78 SMs.  On
	 * 16-row tiles the padded MMAs (>= 939524096 / (118.4e12 / 16) =
	 * 127 us) outlast the stream, 244041384 B / (4e12 x 0.84 x 0.94)
	 * + 3.9 us = 81.17 us: compute-bound.  As a CUDA-core GEMV (no
	 * padding): (939524096 + 4 x 469762048) / 44e12 = 64.06 us, below
	 * the stream: memory-bound, shape efficiency 1. */
	d.peak[GP_BF16] = 148e12;
	d.peak[GP_FP8] = 296e12;
	d.peak[GP_FP32] = 44e12;
	d.mem_bw = 4.0e12;
	d.sms = 78;
	ok(roof_op_time(&d, &op, 1, &r, &err) == GP_OK &&
	   r.bound == ROOF_COMPUTE && r.t_compute > 127e-6,
	   "H20 int4 batch 1 on 16-row tiles: compute-bound");
	op.gemv = 1;
	ok(roof_op_time(&d, &op, 1, &r, &err) == GP_OK &&
	   r.bound == ROOF_MEMORY && r.shape_eff == 1.0,
	   "... as a CUDA-core GEMV: memory-bound, no padding");
	is_num(r.t_compute, (2.0 + 4.0) * 57344 * 8192 / 44e12, 1e-12,
	       "GEMV compute: (2 + 4) FLOP per weight on the vector units");
	is_num(r.t_memory, 57344.0 * 8192 * 0.5195 / (4e12 * 0.84 * 0.94) +
	       3.9e-6, 1e-12, "... and the same weight stream");
	/* gemv 2, TensorRT-LLM's packed GEMV (roofline.c ROOF_VEC16): on a
	 * device without vec16_x the fp32 lanes as above; with the hopper
	 * arch's 2 the dot products run at 88e12: (2 / 88e12 + 4 / 44e12)
	 * x 469762048 = 53.38 us, the dequantisation unchanged. */
	op.gemv = 2;
	ok(roof_op_time(&d, &op, 1, &r, &err) == GP_OK, "gemv 2 is priced");
	is_num(r.t_compute, (2.0 + 4.0) * 57344 * 8192 / 44e12, 1e-12,
	       "... without vec16_x at the fp32 rate");
	d.vec16_x = 2.0;
	ok(roof_op_time(&d, &op, 1, &r, &err) == GP_OK, "... with vec16_x 2");
	is_num(r.t_compute, (2.0 / 88e12 + 4.0 / 44e12) * 57344 * 8192, 1e-12,
	       "... the dot products at 2 x fp32, the dequantisation at fp32");
	op.gemv = 1;
	ok(roof_op_time(&d, &op, 1, &r, &err) == GP_OK, "gemv 1 with vec16_x");
	is_num(r.t_compute, (2.0 + 4.0) * 57344 * 8192 / 44e12, 1e-12,
	       "... stays on the fp32 lanes");
	d.vec16_x = 0.5;
	ok(roof_op_time(&d, &op, 1, &r, &err) == GP_EINVAL &&
	   strstr(err.msg, "vec16_x") != NULL, "vec16_x 0.5 is refused");
	d.vec16_x = 0.0;
	op.gemv = 3;
	ok(roof_op_time(&d, &op, 1, &r, &err) == GP_EINVAL &&
	   strstr(err.msg, "gemv") != NULL, "gemv 3 is refused");
	op.gemv = 0;
	op.dequant = -1;
	ok(roof_op_time(&d, &op, 1, &r, &err) == GP_EINVAL &&
	   strstr(err.msg, "dequant") != NULL, "negative dequant is refused");
	op.dequant = 0;

	/* DeepGEMM's fixed 64-row M tile (m_tile) on the H20: an fp8
	 * 7168 x 7168 GEMM of one token.  DeepGEMM picks its own block_n
	 * and never splits K (roofline.c deepgemm_eff): on 78 SMs block_n
	 * 96 cuts ceil(7168/96) = 75 blocks, one wave (the fewest waves;
	 * 112 and wider also take one but leave a smaller last wave, 80
	 * takes two), so the shape efficiency is 1 x 7168 / (78 x 64 x 96)
	 * times the K fill, (7168/7296) / (8192/8320) -- 0.014924, a
	 * little above a quarter of the 16-row library tiles' (56 tiles of
	 * 128 and split K, 0.0567: the padding alone is the quarter, the
	 * 75 blocks on 78 SMs fill them better).  Streaming 51.4 MB at 4e12 x 0.84 x
	 * 0.94 takes 16.3 us + 3.9 us; 1.03e8 FLOP at 296e12 x 0.71 x
	 * 0.0149 takes 33 us: compute-bound, where 16-row tiles (under 8
	 * us) stay memory-bound.  Above 64 tokens the tile is 128 rows: 65
	 * tokens on the same 75 blocks, 65 x 7168 / (78 x 128 x 96) times
	 * the fill.  Tolerance 1e-12: the same arithmetic. */
	d.gemm_frac[GP_FP8] = 0.71;
	memset(&op, 0, sizeof op);
	op.name = "o_proj";
	op.flop = 2.0 * 7168 * 7168;
	op.bytes = 7168.0 * 7168 + 2.0 * 7168 * 2;
	op.m = 1;
	op.n = 7168;
	op.k = 7168;
	op.count = 1;
	op.prec = GP_FP8;
	ok(roof_op_time(&d, &op, 1, &r, &err) == GP_OK &&
	   r.bound == ROOF_MEMORY, "H20 fp8 batch 1 on 16-row tiles: memory-bound");
	e = r.shape_eff;
	op.m_tile = 64;
	ok(roof_op_time(&d, &op, 1, &r, &err) == GP_OK &&
	   r.bound == ROOF_COMPUTE, "... on DeepGEMM's 64-row tiles: compute-bound");
	kf = (7168.0 / 7296.0) / (8192.0 / 8320.0);
	is_num(r.shape_eff, 7168.0 / (78.0 * 64 * 96) * kf, 1e-12,
	       "... DeepGEMM's block_n 96: 75 blocks in one wave, whole K");
	ok(r.shape_eff > e / 4.0 && r.shape_eff < e / 3.0,
	   "... about a quarter of the library's 16-row tiles' (the padding)");
	op.m = 65;
	ok(roof_op_time(&d, &op, 1, &r, &err) == GP_OK, "65 tokens run");
	is_num(r.shape_eff, 65.0 * 7168 / (78.0 * 128 * 96) * kf,
	       1e-12, "... on 128-row tiles above 64 tokens");
	/* A swapped kernel's 32-row token blocks (DeepGEMM PR 192's swapAB)
	 * stay 32 rows above 32 tokens: 65 tokens take three blocks, 96
	 * rows, the same tiles and waves as 96 tokens, so the efficiency is
	 * 96 tokens' times 65/96 (a 64-row kernel would pad to 128). */
	op.m_tile = 32;
	op.m = 96;
	ok(roof_op_time(&d, &op, 1, &r, &err) == GP_OK, "96 tokens on 32-row blocks");
	e = r.shape_eff;
	op.m = 65;
	ok(roof_op_time(&d, &op, 1, &r, &err) == GP_OK, "65 tokens on 32-row blocks");
	is_num(r.shape_eff, e * 65.0 / 96.0, 1e-12,
	       "... three blocks of 32 rows, not a 128-row tile");
	/* DeepGEMM PR 192's H20 table, 16 experts of 32 rows (roofline.c
	 * deepgemm_eff).  swapAB's blocks are 256 weight rows ("block_ns =
	 * std::vector{256}; // 256 for H20"): the up GEMM, N 4096, K 7168,
	 * runs 16 x 16 = 256 blocks, ceil(256 / 78) = 4 waves:
	 * 32 x 4096 x 16 / (4 x 78 x 32 x 256) = 0.8205 times kf.  Here and
	 * in the two below, tolerance 1e-12 relative: the same arithmetic on
	 * whole block and wave counts, rounding only. */
	op.m = 32;
	op.n = 4096;
	op.k = 7168;
	op.count = 16;
	ok(roof_op_time(&d, &op, 1, &r, &err) == GP_OK, "swapAB up GEMM runs");
	is_num(r.shape_eff, 32.0 * 4096 * 16 / (4.0 * 78 * 32 * 256) * kf,
	       1e-12, "... 256-row weight blocks, 4 waves on 78 SMs");
	/* The plain kernel (64-row M tile): block_n 192 cuts 22 blocks an
	 * expert, 352, 5 waves (144 and 160 cut 29 and 26, 464 and 416
	 * blocks, 6 waves; 128 and under more): 32 x 4096 x 16 /
	 * (5 x 78 x 64 x 192) times kf. */
	op.m_tile = 64;
	ok(roof_op_time(&d, &op, 1, &r, &err) == GP_OK, "plain up GEMM runs");
	is_num(r.shape_eff, 32.0 * 4096 * 16 / (5.0 * 78 * 64 * 192) * kf,
	       1e-12, "... block_n 192, 352 blocks in 5 waves");
	/* Whole K, no split: the down GEMM (N 7168, K 2048) at block_n 192
	 * runs 38 x 16 = 608 blocks, 8 waves (160: 720, 10), each over the
	 * whole K at the fill (2048/2176) / (8192/8320); a library would
	 * split K to fill the SMs, DeepGEMM's scheduler hands out whole
	 * (m, n) blocks. */
	op.n = 7168;
	op.k = 2048;
	ok(roof_op_time(&d, &op, 1, &r, &err) == GP_OK, "plain down GEMM runs");
	is_num(r.shape_eff, 32.0 * 7168 * 16 / (8.0 * 78 * 64 * 192) *
	       (2048.0 / 2176.0) / (8192.0 / 8320.0), 1e-12,
	       "... 608 blocks in 8 waves, the whole K each");
	op.n = 7168;
	op.k = 7168;
	op.count = 1;
	op.m_tile = 4;
	ok(roof_op_time(&d, &op, 1, &r, &err) == GP_EINVAL &&
	   strstr(err.msg, "m_tile") != NULL, "m_tile 4 (under the MMA's 8) is refused");
	op.m_tile = 200;
	ok(roof_op_time(&d, &op, 1, &r, &err) == GP_EINVAL &&
	   strstr(err.msg, "m_tile") != NULL, "m_tile 200 is refused");
	/* A grouped GEMM's experts each pay their own whole tiles
	 * (roof_op.spread): E[ceil(X/T)] over the Poisson count X of an
	 * expert's rows, not ceil(mean/T).
	 * Mean 0.5 rows, T = 64: every X in 1..64 takes one tile and P(X >
	 * 64) < 1e-80, so E = P(X >= 1) = 1 - e^-0.5 = 0.393469, where the
	 * tiles of the mean are ceil(0.5/64) = 1.  Exact sum: 1e-12. */
	is_num(roof_expected_tiles(0.5, 64, 0), 1.0 - exp(-0.5), 1e-12,
	       "mean 0.5 rows, 64-row tiles: 1 - e^-0.5 = 0.393 tiles, not 1");
	/* T = 1: ceil(X) = X, so E = the mean, 3 (the sum stops where the
	 * terms are below 1e-20). */
	is_num(roof_expected_tiles(3.0, 1, 0), 3.0, 1e-9,
	       "1-row tiles: the mean, 3");
	/* Mean 4096, T = 128 (normal path): sd 64 = T/2 spreads X mod 128
	 * almost evenly, E ~ (4096 + 127/2) / 128 = 32.496; the exact
	 * Poisson sum (lgamma terms, in double) is 32.495853.  Tolerance
	 * 1e-3 for the normal approximation's skew (1/64). */
	is_num(roof_expected_tiles(4096.0, 128, 0), 32.495853, 1e-3,
	       "mean 4096 rows, 128-row tiles: 32.496 tiles, not 32");
	/* Touched experts (zero-truncated Poisson): with T = 1 the tiles
	 * are the rows, so E = the given mean 2.5 exactly -- checks the
	 * solve of lambda / (1 - e^-lambda) = 2.5 (Newton, to 1e-12). */
	is_num(roof_expected_tiles(2.5, 1, 1), 2.5, 1e-9,
	       "touched experts, 1-row tiles: the mean 2.5");
	/* Mean 30 over touched experts, T = 32: lambda = 30 (e^-30 is
	 * nil), E = P(X >= 1) + P(X > 32) + ... = 1 + 0.315459 (Poisson(30)
	 * P(X >= 33), summed exactly); P(X > 64) ~ 1e-8. */
	is_num(roof_expected_tiles(30.0, 32, 1), 1.315459, 1e-5,
	       "touched, mean 30, 32-row tiles: 1.315 tiles, not 1");
	/* In the op: 33 rows a group on 32-row blocks, on a device without
	 * SMs (no wave term), so shape_eff is the tile term alone: the mean
	 * pays ceil(33/32) = 2 tiles, the spread groups E = 1.523153
	 * (lambda = 33, 1 + P(X > 32) + P(X > 64), exact sum); the
	 * efficiency rises by 2 / 1.523153.  Tolerance 1e-6 for E's digits. */
	d.sms = 0;
	op.m_tile = 32;
	op.m = 33;
	op.count = 9;
	ok(roof_op_time(&d, &op, 1, &r, &err) == GP_OK, "33 rows a group");
	e = r.shape_eff;
	op.spread = 1;
	ok(roof_op_time(&d, &op, 1, &r, &err) == GP_OK,
	   "33 rows a group, spread over the groups");
	is_num(r.shape_eff / e, 2.0 / 1.523153, 1e-6,
	       "... 1.523 expected tiles a group, not 2");
	/* Each group's rows padded up to a multiple of 64 first (spread
	 * 64, Megatron-Core's fp8 row padding): a group runs whole 64-row
	 * blocks of two 32-row tiles, E = 2 E[ceil(X/64)] = 2 (1 + P(X >
	 * 64)) = 2 (1 + 5.629114e-7) at lambda = 33 (exact Poisson sum):
	 * the efficiency is 2 / 2.0000011 of the mean's, not 2 / 1.523.
	 * Tolerance 1e-9 (P's digits). */
	op.spread = 64;
	ok(roof_op_time(&d, &op, 1, &r, &err) == GP_OK,
	   "33 rows a group padded to 64");
	is_num(r.shape_eff / e, 2.0 / (2.0 * (1.0 + 5.629114e-7)), 1e-9,
	       "... two 32-row tiles a group, whatever its count");
	/* Padded to 16 rows, finer than the 32-row tile: the padding ends
	 * inside the tile the last rows take, 1.523153 tiles as unpadded. */
	op.spread = 16;
	ok(roof_op_time(&d, &op, 1, &r, &err) == GP_OK,
	   "33 rows a group padded to 16");
	is_num(r.shape_eff / e, 2.0 / 1.523153, 1e-6,
	       "... a padding inside the tile costs nothing more");
	op.spread = 0;
	op.count = 1;
	op.m_tile = 0;
	h100(&d);

	/* Errors: NaN FLOP, a precision without a peak, a bad device. */
	op.flop = NAN;
	ok(roof_op_time(&d, &op, 0, &r, &err) == GP_EINVAL &&
	   strstr(err.msg, "non-negative") != NULL, "NaN FLOP is refused");
	op.flop = 1e9;
	op.prec = GP_FP4;
	ok(roof_op_time(&d, &op, 0, &r, &err) == GP_EINVAL &&
	   strstr(err.msg, "no fp4") != NULL,
	   "fp4 GEMM on a chip without fp4 is refused");
	d.hbm_frac = 1.5;
	ok(roof_device_check(&d, &err) == GP_EINVAL &&
	   strstr(err.msg, "hbm") != NULL, "achievable.hbm 1.5 is refused");
	d.hbm_frac = 0.84;
	d.attn_fp8 = 1.5;
	ok(roof_device_check(&d, &err) == GP_EINVAL &&
	   strstr(err.msg, "attention.fp8") != NULL,
	   "achievable.attention.fp8 1.5 is refused");
	d.attn_fp8 = 0.0;
	/* A dropout slowdown below 1 would make dropout free work. */
	d.attn_dropout = 0.9;
	ok(roof_device_check(&d, &err) == GP_EINVAL &&
	   strstr(err.msg, "attention dropout") != NULL,
	   "achievable.attention dropout 0.9 is refused");
	d.attn_dropout = 0.0;
	d.mem_bw = NAN;
	ok(roof_device_check(&d, &err) == GP_EINVAL &&
	   strstr(err.msg, "mem_bw") != NULL, "NaN bandwidth is refused");
	d.mem_bw = 3.35e12;

	/* An unsplit library (cta_latency set) needs its stage's bounds. */
	d.cta_latency = 1e-6;
	ok(roof_device_check(&d, &err) == GP_EINVAL &&
	   strstr(err.msg, "achievable.unsplit") != NULL,
	   "a stage latency without the stage's bounds is refused");
	/* An LDS of 16 B holds no stage of the smallest tile, 16 x 16 (1 B
	 * of K each: 32 B): refused, not priced without a walk. */
	d.cta_stage = 16.0;
	d.cta_stage_k = 512.0;
	ok(roof_device_check(&d, &err) == GP_EINVAL &&
	   strstr(err.msg, "lds at least 32 B") != NULL,
	   "an LDS below the 16 x 16 tile's stage is refused");
	/* The H100 taken as unsplit, 64 KiB stages of at most 512 B of K,
	 * 1 us a stage.  An fp8 GEMM of 16 x 1024 x 8192 (a skinny N at 16
	 * tokens): every tile of edges up to 64 + 64 holds 512 B of K, so
	 * 8192 / 512 = 16 stages x 1 us + the 3.9 us fill = 19.9 us of walk
	 * in one wave; the 16 x 16 tile (64 tiles on 132 SMs, shape term
	 * 16 x 1024 / (132 x 256) = 0.484848, K at the reference depth) has
	 * the fewest MFMAs, 2 x 16 x 1024 x 8192 / (1979e12 x 0.71 x
	 * 0.484848) = 0.394018 us, added to the walk: 20.294 us, above the
	 * stream overlapped (8,552,448 B at 3.35e12 x 0.84 x 0.94 = 3.233 us
	 * + 3.9); with the 4 us launch 24.294 us.  Split (cta_latency 0) it
	 * is the stream's 7.133 us + 4 us (the MFMAs' overlap adds 0.0001).
	 * Tolerance 1e-4 relative for the rounding of the hand steps. */
	d.cta_stage = 65536.0;
	d.cta_stage_k = 512.0;
	memset(&op, 0, sizeof op);
	op.m = 16;
	op.n = 1024;
	op.k = 8192;
	op.flop = 2.0 * 16 * 1024 * 8192;
	op.bytes = 1024.0 * 8192 + 16.0 * 8192 + 2.0 * 16 * 1024;
	op.prec = GP_FP8;
	ok(roof_op_time(&d, &op, 0, &r, &err) == GP_OK &&
	   fabs(r.time / 24.294018e-6 - 1.0) < 1e-4,
	   "unsplit: a 16-token GEMM of 16 K stages takes their latency");
	d.cta_latency = 0.0;
	ok(roof_op_time(&d, &op, 0, &r, &err) == GP_OK &&
	   fabs(r.time / 11.1334e-6 - 1.0) < 1e-4,
	   "split: the same GEMM at the device's stream");
	/* A 64 B LDS: only tiles of edges summing to 64 or less hold 1 B of
	 * K; the larger ones do not run (they are not free of the walk).
	 * 16 x 16 holds 64 / 32 = 2 B of K a stage, 8192 / 2 = 4096 stages
	 * x 1 us + 3.9 us fill = 4099.9 us, plus its 0.394018 us of MFMAs
	 * (above) and the 4 us launch: 4104.294 us; 16 x 32 and 32 x 32 hold
	 * 1 B (8192 stages), slower.  Pricing the larger tiles walk-free
	 * would give the split figure, 11.13 us.  Tolerance 1e-4 relative
	 * for the rounding of the hand steps. */
	d.cta_latency = 1e-6;
	d.cta_stage = 64.0;
	ok(roof_op_time(&d, &op, 0, &r, &err) == GP_OK &&
	   fabs(r.time / 4104.294018e-6 - 1.0) < 1e-4,
	   "unsplit: tiles whose stage exceeds the LDS do not run");
	return done();
}
