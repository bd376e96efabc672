/* t_infer.c - serving on the roofline: hand-checked decode, ratios,
 * KV-bound batch, MoE expert reads, CPU offload, cost and bad input. */
#include <math.h>
#include <string.h>

#include "infer.h"
#include "tap.h"

/* Hopper as in the catalog: bf16 989 / fp8 1979 TFLOPS dense, fp32 67,
 * achievable 0.80 / 0.71, hbm 0.84, launch 4 us (1 us in a graph). */
static void hopper(roof_device *d, double bw)
{
	memset(d, 0, sizeof *d);
	d->peak[GP_BF16] = d->peak[GP_FP16] = 989e12;
	d->peak[GP_FP8] = 1979e12;
	d->peak[GP_FP32] = 67e12;
	d->gemm_frac[GP_BF16] = d->gemm_frac[GP_FP16] = 0.80;
	d->gemm_frac[GP_FP8] = 0.71;
	d->mem_bw = bw;
	d->hbm_frac = 0.84;
	d->launch = 4e-6;
	d->graph_launch = 1e-6;
	d->sms = 132;
}

/* A100 SXM 80GB: bf16 312, fp32 19.5, achievable 0.87, hbm 0.85. */
static void a100(roof_device *d)
{
	memset(d, 0, sizeof *d);
	d->peak[GP_BF16] = d->peak[GP_FP16] = 312e12;
	d->peak[GP_FP32] = 19.5e12;
	d->gemm_frac[GP_BF16] = d->gemm_frac[GP_FP16] = 0.87;
	d->mem_bw = 2.039e12;
	d->hbm_frac = 0.85;
	d->launch = 4e-6;
	d->graph_launch = 1e-6;
	d->sms = 108;
}

static void llama(gp_model *m, int l, int h, int a, int kv, int f, int v)
{
	memset(m, 0, sizeof *m);
	m->layers = l;
	m->hidden = h;
	m->heads = a;
	m->kv_heads = kv;
	m->head_dim = h / a;
	m->ffn_hidden = f;
	m->ffn_gated = 1;
	m->vocab = v;
	m->norm_params = h;
}

static const infer_op_row *row(const infer_phase *p, const char *name)
{
	int i;

	for (i = 0; i < p->nops; i++)
		if (strcmp(p->ops[i].name, name) == 0)
			return &p->ops[i];
	return NULL;
}

/* infer_burst's step for the hand-derived burst below: 5 s a prompt
 * completed, and a decode step of 1 + 0.5 dec s where it decodes. */
static double burst_price(void *ctx, double dec, double proc, double fin,
                          double gen)
{
	(void)ctx;
	(void)proc;
	(void)gen;
	return 5.0 * fin + (dec > 1e-9 ? 1.0 + 0.5 * dec : 0.0);
}

/* A step of 1 s with prompts, plus 1 + gen s with decodes: the mean
 * decodes the running requests have run so far, as infer_burst hands
 * it over (spread lengths). */
static double burst_gen(void *ctx, double dec, double proc, double fin,
                        double gen)
{
	(void)ctx;
	(void)proc;
	return (fin > 0.0 ? 1.0 : 0.0) + (dec > 1e-9 ? 1.0 + gen : 0.0);
}

/* 1 s a step plus 1 s a token it computes, prompt or decode: the run's
 * time counts its steps and the tokens it computed, recomputed ones
 * included (infer_burst_preempt). */
static double burst_tokens(void *ctx, double dec, double proc, double fin,
                           double gen)
{
	(void)ctx;
	(void)fin;
	(void)gen;
	return 1.0 + proc + dec;
}

/* Every step 1 s: the run's time is its step count. */
static double burst_unit(void *ctx, double dec, double proc, double fin,
                         double gen)
{
	(void)ctx;
	(void)dec;
	(void)proc;
	(void)fin;
	(void)gen;
	return 1.0;
}

/* infer_loaded_ttft's price of a chunk above the steady state's: 0.2 s
 * whatever its size, the chunk it was asked kept in *ctx. */
static int chunk_price(void *ctx, double chunk, double *t, gp_error *err)
{
	(void)err;
	*(double *)ctx = chunk;
	*t = 0.2;
	return GP_OK;
}

int main(void)
{
	gp_model m, m2;
	roof_device d, d2;
	infer_cfg c;
	infer_phase p;
	infer_result r;
	gp_error err;
	const infer_op_row *o;
	double w13, th, ta, bits;
	gp_dtype t;
	int g, b;

	plan(148);

	/* --- 13B bf16 decode, batch 1, H200 (4.8 TB/s) -------------------
	 * Llama 2 13B: 40 layers x (4 h^2 + 3 h f + 2h) with h 5120,
	 * f 13824 = 317.21e6 per layer -> 12.688e9, embeddings 2 x 32000 x
	 * 5120 = 327.7e6.  A decode step reads every layer weight, the
	 * lm_head and one embedding row: (12.688e9 + 163.8e6) x 2 B =
	 * 25.70e9 B (+ KV and activations, < 0.1%). */
	llama(&m, 40, 5120, 40, 40, 13824, 32000);
	hopper(&d, 4.8e12);
	infer_defaults(&c);
	c.capacity = 127e9;
	ok(infer_step(&m, &d, &c, 1, 1, 1, 0, &p, &err) == GP_OK,
	   "13B decode step runs");
	w13 = (40 * (4.0 * 5120 * 5120 + 3.0 * 5120 * 13824 + 2 * 5120) +
	       32000.0 * 5120) * 2.0;
	/* 0.5%: activations, KV of one token, norms. */
	is_num(p.bytes, w13, 0.005, "13B decode reads ~25.7 GB per token");
	o = row(&p, "mlp_up");
	ok(o && o->r.bound == ROOF_MEMORY, "batch-1 MLP is memory-bound");
	/* Time: the GEMMs stream 25.70e9 B at the GEMV rate 4.8e12 x 0.84
	 * x 0.94 = 3.790e12 B/s = 6.781 ms, and each of the 364 kernels
	 * (9 per layer + 4) pays 1 us of graph launch + 3.9 us of memory
	 * pipeline fill = 1.784 ms: 8.565 ms.  0.5% for activation bytes
	 * and the non-GEMM ops that stream at 0.84 instead of 0.79. */
	is_num(p.time, w13 / 3.79008e12 + 364 * 4.9e-6, 0.005,
	       "13B decode ITL = bytes / (bw x 0.84 x 0.94) + 364 x 4.9 us");
	/* The bound: <= 4.8 TB/s x achievable / 26 GB = 157 tok/s
	 * before overheads; with the GEMV rate and the per-kernel costs
	 * 1 / 8.565 ms = 116.75 tok/s (gpt-fast's measured batch-1 runs sit
	 * at the same 0.74 of the bandwidth bound, see roofline.c).  The
	 * rate is the inverse of the hand time above, so the same 0.5%
	 * (activation bytes, non-GEMM ops at 0.84) holds for it. */
	ok(1.0 / p.time < 4.032e12 / w13 &&
	   fabs(1.0 / p.time - 1.0 / (w13 / 3.79008e12 + 364 * 4.9e-6)) <=
	   0.005 / (w13 / 3.79008e12 + 364 * 4.9e-6),
	   "13B H200 decode: 116.75 tok/s, below the 157 tok/s bound");

	/* --- 70B int4 decode, batch 1: A100 80GB vs H200 -----------------
	 * Weight-only int4 (4 + 20/128 bits) with bf16 embeddings.  Both
	 * read the same 37.66 GB -- 35.56 GB of int4 linears (68.45e9
	 * weights x 0.5195 B) and the 2.10 GB bf16 lm_head -- through GEMMs
	 * at 0.94 of the streaming rate, + 724 kernels x (1 + 3.9) us =
	 * 3.548 ms.  At batch 1 the bf16 MMAs run on a 16-row tile (1/16
	 * useful) and every int4 weight costs 4 vector FLOP to dequantise
	 * beside them (infer.c); the longer of the two is the compute side:
	 * for mlp_up (2/3 of the weights), H200 dequant 28.05 us (4 x
	 * 8192 x 57344 / 67e12) against MMAs 25.0 us, A100 96.36 us (/ 19.5e12)
	 * against 59.4 us, so the vector units set t_c; with t_m = bytes /
	 * rate + 3.9 us fill (68.33 and 153.7 us) r = t_c / t_m = 0.4105 and
	 * 0.627, and the memory-bound overlap adds r^2 (sqrt(1 + r^2) - 1)
	 * of the streaming time: x 1.0137 and x 1.0709 (the lm_head keeps
	 * its tensor-core x 1.0037 and x 1.0091):
	 * H200 35.56 / 3.79008 x 1.0137 + 2.101 / 3.79008 x 1.0037 + 3.548
	 * = 13.615 ms, A100 35.56 / 1.62921 x 1.0709 + 2.101 / 1.62921 x
	 * 1.0091 + 3.548 = 28.224 ms: ratio 2.073 (bandwidth alone: 4.032 /
	 * 1.733 = 2.33; the guides' "~2x").  1% for the smaller GEMMs'
	 * different r, activation bytes and wave quantisation at M = 1. */
	llama(&m, 80, 8192, 64, 8, 28672, 128256);
	ok(infer_weight_format("int4", &bits, &t) == GP_OK && t == GP_INT4,
	   "int4 is a known weight format");
	is_num(bits, 4.0 + 20.0 / 128, 1e-12,
	       "int4 group-128 (fp16 scale + 4-bit zero): 4.156 bits");
	infer_defaults(&c);
	c.capacity = 70e9;
	c.weight_bits = bits;
	hopper(&d, 4.8e12);
	MUST(infer_step(&m, &d, &c, 1, 1, 1, 0, &p, &err));
	th = p.time;
	a100(&d);
	MUST(infer_step(&m, &d, &c, 1, 1, 1, 0, &p, &err));
	ta = p.time;
	is_num(ta / th, (35.56 / 1.62921 * 1.0709 + 2.101 / 1.62921 * 1.0091 +
	       3.548) / (35.56 / 3.79008 * 1.0137 + 2.101 / 3.79008 * 1.0037 +
	       3.548), 0.01, "70B int4: A100 / H200 decode time = 2.07");
	ok(ta / th > 1.9 && ta / th < 4.8 / 2.039,
	   "... about 2x, below the 2.35 peak-bandwidth ratio");

	/* --- KV-bound batch ------------------------------------------------
	 * Llama 3 8B bf16 on one 80 GB H100, sized by mem_infer (the one
	 * inference-memory model): budget 0.9 x 80e9 = 72e9, less the CUDA
	 * context 0.5 GiB and library workspaces 64 MiB (one GPU: no NCCL)
	 * = 71396020224 B.  Weights 8030261248 params x 2 B = 16060522496
	 * (kept whole: no fragmentation); workspace of the 8192-token
	 * budget 8192 x 2 B x (2h + q + k + v + o + 3f = 8192 + 4096 + 1024
	 * + 1024 + 4096 + 43008 = 61440) = 1006632960, x 1.05 for
	 * fragmentation; one fp32 logits row 128256 x 4 = 513024 B per
	 * sequence.  KV per sequence of 2048 + 256 tokens: 2 x 32 x 8 x 128
	 * x 2 = 131072 B/token -> 301989888 B. */
	llama(&m, 32, 4096, 32, 8, 14336, 128256);
	hopper(&d, 3.35e12);
	infer_defaults(&c);
	c.capacity = 80e9;
	c.kv_reserve_max = 1;
	ok(infer_run(&m, &d, &c, &r, &err) == GP_OK && r.fits,
	   "8B bf16 fits on 80 GB");
	is_num(r.kv_per_seq, 2304.0 * 131072, 1e-12,
	       "KV per sequence = 2304 tokens x 128 KiB");
	is_num(r.weights_gpu, 16060522496.0, 1e-12, "8B bf16 weights");
	/* Exact: the token part and one logits row. */
	is_num(r.workspace, 1006632960.0 + 513024, 1e-12,
	       "8192-token workspace + one logits row");
	/* Room: 71396020224 - 16060522496 - 1.05 x 1006632960 =
	 * 54278533120; / (301989888 + 1.05 x 513024) = 179.42. */
	is_int(r.max_batch_kv, 179, "batch the KV allows: 179 sequences");
	is_num(r.kv_budget, 54278533120.0, 1e-12, "KV budget 54.28 GB");
	/* Paged mean occupancy: 2048 + 128 = 2176 tokens per sequence ->
	 * 54278533120 / (285212672 + 538675.2) = 189.95. */
	c.kv_reserve_max = 0;
	MUST(infer_run(&m, &d, &c, &r, &err));
	is_int(r.max_batch_kv, 189, "paged: mean length, 189 sequences");
	c.kv_reserve_max = 1;
	MUST(infer_run(&m, &d, &c, &r, &err));
	ok(r.itl > r.itl_batch1 && r.tokens_per_s > 1.0 / r.itl_batch1,
	   "a bigger batch: slower steps, more tokens/s");
	/* tokens/s = B out / (B share + (out - 1) (itl + eager)), B =
	 * r.batch; eager: the steps that prefill beside their decodes, off
	 * the graph (a share B x 2048 / (255 x (8192 - B)) of them). */
	is_num(r.eager_steps, r.batch * 2048.0 / (255.0 * (8192.0 - r.batch)),
	       1e-12, "steps that prefill beside decodes");
	is_num(r.tokens_per_s, r.batch * 256.0 / (r.batch * r.prefill_share +
	       255.0 * (r.itl + r.eager)), 1e-12, "throughput identity");
	/* Price $2/h per GPU: cost per 1e6 tokens = 2 / 3600 / tps x 1e6. */
	c.price = 2.0;
	MUST(infer_run(&m, &d, &c, &r, &err));
	is_num(r.cost_per_mtok, 2.0 / 3600.0 / r.tokens_per_s * 1e6, 1e-12,
	       "cost per million tokens");
	/* GPUs for 10x one replica's best tokens/s under a loose ITL: 10
	 * replicas of one GPU (ceil(10 tps / tps) = 10). */
	c.price = 0;
	MUST(infer_run(&m, &d, &c, &r, &err));
	ok(infer_gpus_for(&m, &d, &c, 9.99 * r.tokens_per_s, 1.0, &g, &b,
	                  &th, &err) == GP_OK && g == 10,
	   "10 single-GPU replicas meet 9.99x the throughput");
	/* A 5 ms ITL limit is below batch 1 (16 GB / 2.81 TB/s = 5.7 ms). */
	ok(infer_gpus_for(&m, &d, &c, 1000.0, 5e-3, &g, &b, &th, &err) ==
	   GP_EINVAL && strstr(err.msg, "ITL") != NULL,
	   "an ITL limit below batch-1 decode is refused");
	/* The target search's refusals are the MoE serving model's too
	 * (serve_target), each said in one place: a target of 0, an ITL
	 * bound past an hour (it was taken here, refused there). */
	{
		gp_error e1;

		infer_target_check(0.0, 1.0, &e1);
		ok(infer_gpus_for(&m, &d, &c, 0.0, 1.0, &g, &b, &th, &err) ==
		   GP_EINVAL && strcmp(err.msg, e1.msg) == 0,
		   "target 0: infer_target_check's words");
		ok(infer_gpus_for(&m, &d, &c, 1000.0, 7200.0, &g, &b, &th,
		                  &err) == GP_EINVAL &&
		   strstr(err.msg, "the ITL limit in (0, 3600] s"),
		   "an ITL bound of two hours: refused, as serve_target does");
	}

	/* --- MoE: distinct experts read -----------------------------------
	 * Mixtral-like, 8 experts top-2: one token touches 8 (1 - 6/8) = 2
	 * experts; 16 tokens touch 8 (1 - 0.75^16) = 7.920. */
	m.moe.experts = 8;
	m.moe.top_k = 2;
	m.moe.ffn_hidden = 14336;
	MUST(infer_step(&m, &d, &c, 1, 1, 1, 0, &p, &err));
	o = row(&p, "moe_up");
	/* moe_up bytes: touched x 2 x f x h weights at 2 B + activations
	 * 2 x (h + 2f) + ... ; the weights dominate: 2 x 2 x 14336 x 4096 x
	 * 2 B = 469.8e6; 0.1% for the activation bytes. */
	ok(o != NULL, "MoE step has expert rows");
	is_num(o ? o->bytes : NAN, 2.0 * 2 * 14336 * 4096 * 2, 0.001,
	       "batch 1 reads 2 of 8 experts");
	MUST(infer_step(&m, &d, &c, 16, 1, 1, 0, &p, &err));
	o = row(&p, "moe_up");
	/* 0.2%: 16 tokens' activations, 16 x 2 x (h + 2 f) x 2 B ~ 2.2 MB */
	is_num(o ? o->bytes : NAN, 8.0 * (1 - pow(0.75, 16)) * 2 * 14336 *
	       4096 * 2, 0.002, "batch 16 reads 7.92 of 8 experts");
	/* The fused-MoE layer's routing and bookkeeping kernels: fused_topk
	 * 4 + moe_align_block_size 3 = 7 a MoE layer (32 layers: 224), each
	 * reading 16 tokens' 8 fp32 logits and writing their 2 ids and
	 * weights, 16 x (8 x 4 + 2 x 8) = 768 B; moe_sum once a layer, the
	 * 16 x 2 expert outputs read and 16 rows written at h = 4096 in
	 * bf16: 16 x 3 x 4096 x 2 = 393216 B.  Exact (counts and bytes are
	 * integers). */
	o = row(&p, "moe_route");
	is_num(o ? o->count : NAN, 32 * 7, 0, "7 routing kernels a MoE layer");
	is_num(o ? o->bytes : NAN, 768, 0, "each over the logits, ids, weights");
	o = row(&p, "moe_sum");
	is_num(o ? o->count : NAN, 32, 0, "moe_sum once a MoE layer");
	is_num(o ? o->bytes : NAN, 16 * 3 * 4096 * 2, 0,
	       "moe_sum reads k outputs a token and writes one");
	/* MLA models route by grouped_topk (8 kernels) and the routed scale
	 * (1): 9 + 3 = 12 a MoE layer. */
	m.mla.kv_lora_rank = 512;
	m.mla.qk_nope_head_dim = 128;
	m.mla.qk_rope_head_dim = 64;
	m.mla.v_head_dim = 128;
	MUST(infer_step(&m, &d, &c, 16, 1, 1, 0, &p, &err));
	o = row(&p, "moe_route");
	is_num(o ? o->count : NAN, 32 * 12, 0,
	       "grouped top-k: 12 routing kernels a MoE layer");
	/* vLLM's fused grouped top-k (fused_grouped_topk): 1 + 3 = 4, the
	 * same bytes each; a softmax top-k router (no MLA) keeps its 7. */
	c.fused_grouped_topk = 1;
	MUST(infer_step(&m, &d, &c, 16, 1, 1, 0, &p, &err));
	o = row(&p, "moe_route");
	is_num(o ? o->count : NAN, 32 * 4, 0,
	       "fused grouped top-k: 4 routing kernels a MoE layer");
	is_num(o ? o->bytes : NAN, 768, 0,
	       "over the same logits, ids, weights");
	memset(&m.mla, 0, sizeof m.mla);
	MUST(infer_step(&m, &d, &c, 16, 1, 1, 0, &p, &err));
	o = row(&p, "moe_route");
	is_num(o ? o->count : NAN, 32 * 7, 0,
	       "fused_grouped_topk leaves a softmax top-k router's 7");
	/* vLLM's fused topk_softmax (fused_topk_softmax): the softmax
	 * router's cast, selection and renormalisation in 1 kernel, + 3 =
	 * 4 a MoE layer, the same bytes. */
	c.fused_topk_softmax = 1;
	MUST(infer_step(&m, &d, &c, 16, 1, 1, 0, &p, &err));
	o = row(&p, "moe_route");
	is_num(o ? o->count : NAN, 32 * 4, 0,
	       "fused topk_softmax: 4 routing kernels a MoE layer");
	is_num(o ? o->bytes : NAN, 768, 0,
	       "over the same logits, ids, weights");
	c.fused_topk_softmax = 0;
	c.fused_grouped_topk = 0;
	memset(&m.mla, 0, sizeof m.mla);
	memset(&m.moe, 0, sizeof m.moe);
	MUST(infer_step(&m, &d, &c, 16, 1, 1, 0, &p, &err));
	ok(row(&p, "moe_route") == NULL && row(&p, "moe_sum") == NULL,
	   "a dense model routes nothing");

	/* --- CPU offload: Llama 2 7B bf16 on a 6 GB card ------------------
	 * 360 GB/s GDDR; 5.4 GB after the margin, less 0.5 GiB + 64 MiB
	 * of context and library workspaces: 4796020224 B.  Weights
	 * 13.48 GB + KV of 512 + 128 tokens 0.34 GB + workspace 0.99 GB
	 * do not fit; without offload: fits = 0. */
	llama(&m, 32, 4096, 32, 32, 11008, 32000);
	a100(&d);
	d.mem_bw = 360e9;
	infer_defaults(&c);
	c.capacity = 6e9;
	c.input = 512;
	c.output = 128;
	c.batch = 1;
	ok(infer_run(&m, &d, &c, &r, &err) == GP_OK && !r.fits &&
	   strstr(r.why, "needs") != NULL, "7B bf16 on 6 GB: does not fit");
	/* With 32 GB of host memory read at 60 GB/s, mem_infer moves whole
	 * layers with their KV share: needed 13476831232 (weights) +
	 * 335544320 (KV, 2 x 32 x 4096 x 2 B x 640) + 1.05 x (8192 x 2 B x
	 * 57600 + 32000 x 4 B) = 14803414272 B, 10007394048 too many; a
	 * layer frees 202383488 x 2 = 404766976 B of weights (its 1/32 of
	 * the final norm included) + 10485760 of KV = 415252736 B:
	 * ceil(24.10) = 25 layers.  llama.cpp (steps under 32 tokens on
	 * the CPU) first. */
	c.offload_bw = 60e9;
	c.offload_link_bw = 25.2e9;
	c.offload_cpu_max = 31;
	c.host_capacity = 32e9;
	ok(infer_run(&m, &d, &c, &r, &err) == GP_OK && r.fits,
	   "... fits with layers in host memory");
	is_num(r.offload_layers, 25.0, 1e-12, "25 of 32 layers offloaded");
	is_num(r.offload_bytes, 25.0 * 404766976, 1e-12,
	       "offloaded bytes: 25 whole layers");
	/* Decode adds 25 x 404766976 x (1/60e9 - 1/306e9) = 135.58 ms. */
	is_num(r.decode.offload_time, 25.0 * 404766976 * (1 / 60e9 - 1 /
	       (360e9 * 0.85)), 1e-9, "offload: host reads replace HBM");
	/* ITL = GPU time + offload time.  The GPU part streams every
	 * layer's GEMM weights (the offloaded ones too: offload_time
	 * replaces their HBM read) and the lm_head through GEMMs at
	 * 360e9 x 0.85 x 0.94 = 287.64e9 B/s: 32 x (4 x 4096^2 + 3 x 4096
	 * x 11008) x 2 + 32000 x 4096 x 2 = 13214154752 B, plus the
	 * attention's KV at the mean context 512 + 128 / 2 = 576 tokens:
	 * 32 x 576 x 2 x 4096 x 2 = 301989888 B -> 46.990 ms; 292 kernels
	 * (9 x 32 + 4) x (1 us graph launch + 3.9 us fill) = 1.431 ms;
	 * with the 135.583 ms offload term: 184.00 ms, 5.4 tok/s.  0.2%:
	 * the hand sum leaves out activation bytes and the non-GEMM ops
	 * (norms, rope, sampling) at 0.85 rather than 0.80 (engine: +0.02%). */
	is_num(r.itl, (13214154752.0 + 301989888.0) / (360e9 * 0.85 * 0.94) +
	       292 * 4.9e-6 + 25.0 * 404766976 * (1 / 60e9 - 1 /
	       (360e9 * 0.85)), 0.002, "7B offloaded decode: 184.0 ms, 5.4 tok/s");
	/* The prompt, 512 tokens, goes to the GPU: the 25 layers cross
	 * PCIe at 25.2e9 B/s, 25 x 404766976 / 25.2e9 = 401.55 ms, their
	 * HBM read staying in the GPU time. */
	is_num(r.prefill.offload_time, 25.0 * 404766976 / 25.2e9, 1e-9,
	       "llama.cpp prefill: the layers copied over PCIe");
	/* Other runtimes copy them every step, decode too: 401.55 ms
	 * where the CPU took 135.58. */
	c.offload_cpu_max = 0;
	ok(infer_run(&m, &d, &c, &r, &err) == GP_OK && r.fits,
	   "... streamed by a runtime that copies the layers");
	is_num(r.decode.offload_time, 25.0 * 404766976 / 25.2e9, 1e-9,
	       "streamed decode: the layers over PCIe each step");
	c.offload_cpu_max = 31;
	/* 25 layers x 415252736 B = 10.38 GB of host memory. */
	c.host_capacity = 8e9;
	ok(infer_run(&m, &d, &c, &r, &err) == GP_OK && !r.fits &&
	   strstr(r.why, "host memory") != NULL,
	   "not enough host memory: does not fit, says why");
	/* On a 1 GB card even every layer on the host leaves the ends
	 * (embedding and lm_head 2 x 32000 x 4096 x 2 B = 524 MB) and the
	 * 0.99 GB workspace over the 0.9e9 - 0.60e9 = 0.30 GB left: the
	 * offload stops at the 32 layers there are and says so (it once
	 * printed "offloading 81 layers" for an 80-layer model). */
	c.capacity = 1e9;
	c.host_capacity = 1e12;
	ok(infer_run(&m, &d, &c, &r, &err) == GP_OK && !r.fits &&
	   strstr(r.why, "32 of its 32 layers") != NULL &&
	   strstr(r.why, "33") == NULL,
	   "offload never counts more layers than the model has");

	/* --- attention precision follows the KV cache --------------------
	 * FP8 weights with a bf16 cache: the GEMMs run on the FP8 roof but
	 * the attention on bf16, 989e12 x 0.80 = 791.2e12 before the shape
	 * term; with an FP8 cache, on FP8, 1979e12 x 0.71 = 1405.09e12.
	 * Exact up to rounding (1e-9). */
	m2 = m;
	d2 = d;
	llama(&m, 32, 4096, 32, 8, 14336, 128256);
	hopper(&d, 3.35e12);
	infer_defaults(&c);
	c.capacity = 70e9;
	c.weight_bits = 8.0;
	c.compute = GP_FP8;
	ok(infer_step(&m, &d, &c, 1, 2048, 2048, 0, &p, &err) == GP_OK,
	   "8B fp8 prefill of 2048 tokens runs");
	o = row(&p, "attention");
	ok(o && o->r.shape_eff > 0, "... has an attention row");
	is_num(o ? o->r.compute_rate / o->r.shape_eff : NAN, 791.2e12, 1e-9,
	       "bf16 KV: attention on the bf16 roof");
	o = row(&p, "qkv");
	is_num(o ? o->r.compute_rate / o->r.shape_eff : NAN, 1405.09e12,
	       1e-9, "... while the GEMMs use the fp8 roof");
	c.kv_bytes = 1.0;
	MUST(infer_step(&m, &d, &c, 1, 2048, 2048, 0, &p, &err));
	o = row(&p, "attention");
	is_num(o ? o->r.compute_rate / o->r.shape_eff : NAN, 1405.09e12,
	       1e-9, "fp8 KV: attention on the fp8 roof");
	m = m2;
	d = d2;

	/* --- MLA QKV width: the matrices, not the biases ------------------
	 * h 2048, 16 heads, no q latent, kv_lora 512, nope 128, rope 64,
	 * v 128 (DeepSeek-V2 eqs. 9-10, 37-39): q 2048 x 16 x 192 =
	 * 6291456, kv down 2048 x 576 = 1179648, kv up 512 x 16 x 256 =
	 * 2097152, o 16 x 128 x 2048 = 4194304.  The q/kv GEMM width is
	 * (all but o) / h = 9568256 / 2048 = 4672; one decode token's qkv
	 * FLOP = 2 x 4672 x 2048 = 19136512, with or without q/k/v biases. */
	llama(&m, 4, 2048, 16, 16, 5632, 32000);
	m.head_dim = 128;
	m.mla.kv_lora_rank = 512;
	m.mla.qk_nope_head_dim = 128;
	m.mla.qk_rope_head_dim = 64;
	m.mla.v_head_dim = 128;
	hopper(&d, 3.35e12);
	infer_defaults(&c);
	c.capacity = 80e9;
	/* A two-token step (no decode): the one qkv GEMM, 2 x 19136512. */
	MUST(infer_step(&m, &d, &c, 1, 2, 16, 0, &p, &err));
	o = row(&p, "qkv");
	is_num(o ? o->flop : NAN, 2.0 * 19136512.0, 1e-12,
	       "MLA qkv GEMM width 4672");
	m.qkv_bias = 1;
	MUST(infer_step(&m, &d, &c, 1, 2, 16, 0, &p, &err));
	o = row(&p, "qkv");
	is_num(o ? o->flop : NAN, 2.0 * 19136512.0, 1e-12,
	       "... and biases do not widen it");
	m.qkv_bias = 0;

	/* --- MLA decode as vLLM runs it (infer.c mla_decode) --------------
	 * The same matrices in decode: kv_a_proj_with_mqa 2048 x 576
	 * (q_kv_a, no q latent), q_proj 2048 x 16 x 192 (q_proj), W^UK
	 * 16 x 128 x 512 (q_absorb) and W^UV 16 x 512 x 128 (v_absorb):
	 * 2 x (1179648 + 6291456 + 1048576 + 1048576) = 19136512 FLOP a
	 * token at tp 1, no qkv row; exact (FLOP are counted, not timed). */
	MUST(infer_step(&m, &d, &c, 1, 1, 16, 0, &p, &err));
	ok(row(&p, "qkv") == NULL, "MLA decode: no folded qkv row");
	{
		const char *mats[] = {"q_kv_a", "q_proj", "q_absorb",
				      "v_absorb"};
		const char *glue[] = {"kv_latent_norm", "kv_write", "q_cat"};
		double fl = 0;
		int k, all = 1;

		for (k = 0; k < 4; k++) {
			o = row(&p, mats[k]);
			all = all && o;
			fl += o ? o->flop : NAN;
		}
		ok(all, "... its q_kv_a, q_proj, q_absorb and v_absorb rows");
		is_num(fl, 19136512.0, 1e-12,
		       "... whose FLOP are the folded GEMM's");
		for (k = 0, all = 1; k < 3; k++) {
			o = row(&p, glue[k]);
			all = all && o && o->count == 4 && o->r.time > 0;
		}
		ok(all, "... and the latent norm, cache write and query cat, "
		   "a kernel each a layer");
		ok(row(&p, "q_latent_norm") == NULL,
		   "... no q latent norm without a q latent");
	}
	/* At tp 2 the down-projection stays whole on each rank (vLLM's
	 * ReplicatedLinear): q_kv_a 2 x 576 x 2048 = 2359296 FLOP, while
	 * q_proj halves to 2 x 8 x 192 x 2048 = 6291456; exact. */
	c.tp = 2;
	c.gpus = 2;
	MUST(infer_step(&m, &d, &c, 1, 1, 16, 0, &p, &err));
	o = row(&p, "q_kv_a");
	is_num(o ? o->flop : NAN, 2359296.0, 1e-12,
	       "MLA decode at tp 2: the down-projection whole");
	o = row(&p, "q_proj");
	is_num(o ? o->flop : NAN, 6291456.0, 1e-12,
	       "... the head-split q projection halved");
	/* With a q latent of 256 (DeepSeek-V3's shape, smaller): q_kv_a
	 * grows to 2 x (256 + 576) x 2048 = 3407872 FLOP, whole at tp 2,
	 * the queries come from the latent through q_b (2 x 8 x 192 x 256
	 * = 786432) and the latent has its own norm; exact. */
	m.mla.q_lora_rank = 256;
	MUST(infer_step(&m, &d, &c, 1, 1, 16, 0, &p, &err));
	o = row(&p, "q_kv_a");
	is_num(o ? o->flop : NAN, 3407872.0, 1e-12,
	       "MLA decode with a q latent: both latents in q_kv_a");
	o = row(&p, "q_b");
	is_num(o ? o->flop : NAN, 786432.0, 1e-12,
	       "... the queries through q_b");
	ok(row(&p, "q_latent_norm") && !row(&p, "q_proj"),
	   "... the q latent's norm, no q_proj");
	m.mla.q_lora_rank = 0;
	/* The weights held (mem_infer): every part of the model splits
	 * over tp but the down-projection, held whole, so tp 2 holds half
	 * of tp 1's plus half the 2048 x 576 down-projection of each of the
	 * 4 layers at 2 bytes: W1 / 2 + 4 x 589824 x 2 = W1 / 2 + 4718592
	 * bytes; exact (a sum of counts). */
	{
		gp_infer_cfg ic;
		gp_mem_result mr1, mr2;
		gp_mem_reserve rs;

		memset(&ic, 0, sizeof ic);
		mem_reserve_default(&rs, 1);
		ic.seqs = 1;
		ic.ctx = 16;
		ic.tp = 1;
		MUST(mem_infer(&m, &ic, 80e9, &rs, &mr1, &err));
		ic.tp = 2;
		MUST(mem_infer(&m, &ic, 80e9, &rs, &mr2, &err));
		is_num(mr2.bytes[GP_MEM_WEIGHTS],
		       mr1.bytes[GP_MEM_WEIGHTS] / 2.0 + 4718592.0, 1e-12,
		       "MLA at tp 2 holds the down-projection whole");
	}
	c.tp = 1;
	c.gpus = 1;
	m = m2;
	d = d2;

	/* --- a throughput search's candidate batches ----------------------
	 * infer_batch_candidates(c, lo): lo, and under a captured-graph list
	 * the largest captured size below lo (a padded interval's top).
	 * TensorRT-LLM's list for max_batch_size 2048 (infer.lua
	 * trtllm_graph_list): 1, 2, 4, 8..128 by 8, 256, 512, 1024, 2048. */
	{
		int cand[2], i, n;
		static const int trt[] = { 1, 2, 4, 8, 16, 24, 32, 40, 48,
			56, 64, 72, 80, 88, 96, 104, 112, 120, 128, 256, 512,
			1024, 2048 };

		infer_defaults(&c);
		c.runtime = INFER_GRAPHS;
		c.n_graph = (int)(sizeof trt / sizeof trt[0]);
		for (i = 0; i < c.n_graph; i++)
			c.graph_sizes[i] = trt[i];
		/* 136 pads to 256; the size below it is 128 */
		n = infer_batch_candidates(&c, 136, cand);
		ok(n == 2 && cand[0] == 136 && cand[1] == 128,
		   "batch 136 under TensorRT-LLM's list: 136 and 128");
		/* a captured size is its own interval's top: no second */
		n = infer_batch_candidates(&c, 128, cand);
		ok(n == 1 && cand[0] == 128, "batch 128 is captured: 128 alone");
		/* 3 pads to 4; 2 is below it */
		n = infer_batch_candidates(&c, 3, cand);
		ok(n == 2 && cand[0] == 3 && cand[1] == 2,
		   "batch 3: 3 and 2");
		/* above the largest size the step runs eager: 2048 is the
		 * largest a graph covers */
		n = infer_batch_candidates(&c, 3000, cand);
		ok(n == 2 && cand[1] == 2048, "batch 3000 (eager): 2048 too");
		/* no list (a graph at every batch, no padding): lo alone */
		c.n_graph = 0;
		n = infer_batch_candidates(&c, 136, cand);
		ok(n == 1 && cand[0] == 136, "no captured list: lo alone");
		/* a runtime that launches every kernel pads nothing */
		c.n_graph = (int)(sizeof trt / sizeof trt[0]);
		c.runtime = INFER_EAGER;
		n = infer_batch_candidates(&c, 136, cand);
		ok(n == 1 && cand[0] == 136, "eager runtime: lo alone");
		ok(infer_batch_candidates(&c, 0, cand) == 0,
		   "no batch within the limit: no candidate");
	}

	/* --- the TTFT of a chunked prompt --------------------------------
	 * Llama 3 8B on an H100, an 8192-token prompt, chunked prefill at
	 * max_num_tokens 2048: four steps of 2048 tokens, the first token
	 * with the last.  Their attention: chunk j's tokens attend to
	 * 2048 (j - 1) + 1 ... 2048 j keys (causal), the step priced at its
	 * mean KV 5120 - 2047 / 2 = 4096.5 (ctx: the ends' mean, (8192 +
	 * 2048) / 2), so 4 x 4 x 2048 x 4096.5 x 32 heads x 128 FLOP a
	 * layer = 4 x 8192 x 4096.5 x 4096, the whole prompt's causal
	 * attention in one step (exact: 1e-12).  TTFT = the four steps
	 * (exact: 1e-12), more than the one 8192-token step (the weights
	 * read four times, four times the launches).  Unchunked, or within
	 * the budget: the one step. */
	{
		infer_phase pc;

		llama(&m2, 32, 4096, 32, 8, 14336, 128256);
		hopper(&d2, 3.35e12);
		infer_defaults(&c);
		c.capacity = 80e9;
		c.input = 8192;
		c.output = 16;
		c.chunked = 1;
		c.max_num_tokens = 2048;
		MUST(infer_step(&m2, &d2, &c, 1, 2048, 5120, 0, &pc, &err));
		MUST(infer_step(&m2, &d2, &c, 1, 8192, 8192, 0, &p, &err));
		o = row(&pc, "attention");
		ok(o && row(&p, "attention") &&
		   fabs(o->flop / (4.0 * 2048 * 4096.5 * 4096) - 1.0) < 1e-12 &&
		   fabs(4.0 * o->flop / row(&p, "attention")->flop - 1.0) <
		   1e-12, "a 2048 chunk at 4096.5 keys; four = the whole "
		   "8192-token prompt's attention");
		ok(infer_run(&m2, &d2, &c, &r, &err) == GP_OK && r.fits,
		   "8B, 8192 in, chunked at 2048");
		/* the batch the KV holds runs in flight: ttft is the loaded
		 * one (loaded_ttft), one prompt's alone ttft_one */
		ok(r.ttft_loaded && r.ttft > r.ttft_one, "a batch in flight: "
		   "the loaded TTFT, above one prompt's");
		is_num(r.ttft_one, 4.0 * pc.time, 1e-12, "TTFT: the four chunk "
		       "steps");
		ok(r.ttft_one > r.prefill.time, "... more than the prompt in one "
		   "step (the weights read four times)");
		c.max_num_tokens = 8192;
		MUST(infer_run(&m2, &d2, &c, &r, &err));
		is_num(r.ttft_loaded ? r.ttft_one : r.ttft, r.prefill.time,
		       1e-12, "within the budget: one step");
		c.max_num_tokens = 2048;
		c.chunked = 0;
		MUST(infer_run(&m2, &d2, &c, &r, &err));
		is_num(r.ttft, r.prefill.time, 1e-12, "not chunked: one step");
	}

	/* --- a burst, step by step (infer_burst) ----------------------------
	 * 4 requests, at most 2 at once, 3 tokens out (a prefill and 2
	 * decodes), prompts of 10 tokens, 10 prompt tokens a step (the
	 * decodes not counted).  Step (requests decoding, prompt done): it0
	 * admits A, B and prefills A (0, 1: 5 s); it1 decodes A, prefills B
	 * (1, 1: 5 + 1.5); it2 decodes A, B (2, 0: 2), A leaves; it3 admits
	 * C, prefills it, decodes B (1, 1: 6.5), B leaves; it4 admits D,
	 * prefills it, decodes C (1, 1: 6.5); it5 decodes C, D (2: 2), C
	 * leaves; it6 decodes D (1: 1.5).  5 + 6.5 + 2 + 6.5 + 6.5 + 2 +
	 * 1.5 = 30 s; exact arithmetic in halves: 1e-12. */
	is_num(infer_burst(4, 2, 3, 10, 10, 0, 0, NULL, NULL, 0, burst_price, NULL), 30.0,
	       1e-12, "burst of 4 at 2 at once: 30 s by hand");
	/* The same with every request admitted at once (B = 4): one prompt
	 * a step it0..it3 beside 0, 1 (A), 2 (A, B), 2 (B, C: A left after
	 * it2) decodes (5, 6.5, 7, 7), then it4 decodes C, D (2), it5 D
	 * (1.5): 5 + 6.5 + 7 + 7 + 2 + 1.5 = 29 s, less than the 30 s of
	 * two at once (the same prompts and decodes, fewer steps). */
	is_num(infer_burst(4, 4, 3, 10, 10, 0, 0, NULL, NULL, 0, burst_price, NULL), 29.0,
	       1e-12, "burst of 4 all at once: 29 s by hand");

	/* --- a burst's time to first token (infer_burst_ttft) -------------
	 * 4 prompts of 10 tokens sent at once, 10 prompt tokens a step (one
	 * prompt a step), 1 token out (no decode step), every step 1 s
	 * (burst_unit): first come, first served, prompt k is whole at the
	 * end of step k, TTFTs 1, 2, 3, 4 s, mean 2.5 s.  Exact: 1e-12. */
	{
		infer_ttft ft;
		double l2[2] = { 4.0, 2.0 }, s2[2] = { 0.5, 0.5 };

		is_num(infer_burst_ttft(4, 4, 1, 10, 10, 0, 0, NULL, NULL, 0,
		                        burst_unit, NULL, &ft), 4.0, 1e-12,
		       "burst of 4, a prompt a step: 4 steps of 1 s");
		is_num(ft.mean, 2.5, 1e-12,
		       "... its mean TTFT (1 + 2 + 3 + 4) / 4 = 2.5 s by hand");
		/* numpy's median of 1, 2, 3, 4: (2 + 3) / 2 = 2.5; its 99th
		 * percentile at (4 - 1) x 0.99 = 2.97 (0-based): 3 + 0.97 x
		 * (4 - 3) = 3.97 s.  Exact but the 0.99's rounding: 1e-12. */
		is_num(ft.p50, 2.5, 1e-12, "... its median 2.5 s");
		is_num(ft.p99, 3.97, 1e-12,
		       "... its P99 3.97 s (numpy's interpolation)");
		/* The 30 s burst above (2 at once, burst_price): first
		 * tokens at the ends of it0 (A, 5), it1 (B, 5 + 6.5 = 11.5),
		 * it3 (C, 11.5 + 2 + 6.5 = 20: it waited for A's end, the
		 * second wave) and it4 (D, 26.5): mean 63 / 4 = 15.75 s. */
		infer_burst_ttft(4, 2, 3, 10, 10, 0, 0, NULL, NULL, 0,
		                 burst_price, NULL, &ft);
		is_num(ft.mean, 15.75, 1e-12,
		       "burst of 4 at 2 at once: mean TTFT 15.75 s by hand");
		/* median (11.5 + 20) / 2 = 15.75; P99 20 + 0.97 x 6.5 =
		 * 26.305 s */
		is_num(ft.p50, 15.75, 1e-12, "... median 15.75 s");
		is_num(ft.p99, 26.305, 1e-12, "... P99 26.305 s");
		/* All 4 at once (the 29 s walk): A 5, B 11.5, C 18.5, D
		 * 25.5 (each behind the prompts and the decodes of the
		 * steps before it): mean 60.5 / 4 = 15.125 s. */
		infer_burst_ttft(4, 4, 3, 10, 10, 0, 0, NULL, NULL, 0,
		                 burst_price, NULL, &ft);
		is_num(ft.mean, 15.125, 1e-12,
		       "burst of 4 all at once: mean TTFT 15.125 s by hand");
		/* A prompt in chunks: 2 prompts of 10 tokens, 4 a step, 1
		 * out, 1 s a step: 4, 8, 12, 16, 20 tokens computed after
		 * steps 1..5, the first prompt whole in step 3, the second in
		 * step 5: mean (3 + 5) / 2 = 4 s (a fluid share of a prompt
		 * a step would give (0.4 x 1 + 0.4 x 2 + 0.4 x 3 + 0.4 x 4 +
		 * 0.4 x 5) / 2 = 3 s). */
		infer_burst_ttft(2, 2, 1, 10, 4, 0, 0, NULL, NULL, 0,
		                 burst_unit, NULL, &ft);
		is_num(ft.mean, 4.0, 1e-12,
		       "2 prompts of 10 at 4 tokens a step: TTFTs 3 and 5 s");
		/* Spread lengths (burst_spread) keep the order: 2 prompts,
		 * one a step (10 tokens of 10), lengths 4 and 2, 1 s a step:
		 * first tokens at 1 and 2 s, mean 1.5 s. */
		infer_burst_ttft(2, 2, 3, 10, 10, 0, 0, l2, s2, 2, burst_unit,
		                 NULL, &ft);
		is_num(ft.mean, 1.5, 1e-12,
		       "spread lengths: first tokens at 1 and 2 s, mean 1.5 s");
		/* A run not followed (N L / B past RUN_ITER_MAX) gives 0. */
		infer_burst_ttft(1e9, 1, 1e9, 10, 10, 0, 0, NULL, NULL, 0,
		                 burst_unit, NULL, &ft);
		is_num(ft.mean, 0.0, 0.0, "a run not followed: no TTFT (0)");
	}

	/* --- uniform outputs (output_dist uniform) -----------------------
	 * infer_output_quantiles: output 3, output_max 5, uniform: from 2 x
	 * 3 - 5 = 1 to 5; 2 requests, 2 shares, midpoints 5 - 4 x 0.5 / 2
	 * = 4 and 5 - 4 x 1.5 / 2 = 2, mean 3.  Exact. */
	{
		infer_cfg cu;
		double lu[INFER_QUANTILES], su[INFER_QUANTILES];
		double l2[2] = { 4.0, 2.0 }, s2[2] = { 0.5, 0.5 };

		infer_defaults(&cu);
		cu.output = 3.0;
		cu.output_max = 5.0;
		cu.output_uniform = 1;
		ok(infer_output_quantiles(&cu, 2.0, lu, su) == 2 &&
		   lu[0] == 4.0 && lu[1] == 2.0 && su[0] == 0.5 &&
		   su[1] == 0.5, "uniform 1..5 over 2 requests: 4 and 2");
		/* One request at a time (B 1), 2 requests of those lengths,
		 * prompts of 10 tokens, 10 a step, every step 1 s: each runs
		 * alone, its prefill step then its decodes, so the run is 3 +
		 * 3 steps at the mean as at the spread (4 + 2 steps): 6 s. */
		is_num(infer_burst(2, 1, 3, 10, 10, 0, 0, l2, s2, 2,
		                   burst_unit, NULL), 6.0, 1e-12,
		       "one at a time: the spread runs as its mean, 6 s");
		is_num(infer_burst(2, 1, 3, 10, 10, 0, 0, NULL, NULL, 0,
		                   burst_unit, NULL), 6.0, 1e-12,
		       "... which is 6 s by hand");
		/* One request split into its two halves (B 2): it0 prefills
		 * it (1 s), it1 decodes both halves (1 s) and the half of
		 * length 2 leaves; it2, it3 decode the other half alone,
		 * dec 0.5, run half the time: 0.5 s each.  1 + 1 + 0.5 + 0.5
		 * = 3 s, the request's expected steps, (4 + 2) / 2 -- not 4,
		 * the longest's, as a step charged whole would make it. */
		is_num(infer_burst(1, 2, 3, 10, 10, 0, 0, l2, s2, 2,
		                   burst_unit, NULL), 3.0, 1e-12,
		       "a share under one request runs its share of a step: 3 s");
		/* The check: uniform from 2 x 3 - 5 = 1 token passes, from
		 * 2 x 3 - 6 = 0 is refused, naming the field. */
		cu = c;
		cu.output = 3.0;
		cu.output_max = 5.0;
		cu.output_uniform = 1;
		ok(infer_check(&m, &d, &cu, &err) == GP_OK,
		   "uniform from 1 token passes the check");
		cu.output_max = 6.0;
		ok(infer_check(&m, &d, &cu, &err) != GP_OK &&
		   strstr(err.msg, "output_uniform") != NULL,
		   "uniform reaching below 1 token (2 x 3 - 6 = 0) is refused");
	}

	/* --- vLLM V1's preemption over a burst (infer_burst_preempt) -------
	 * Prompts of 2 tokens (none cached), 4 tokens out, 10 tokens a step,
	 * every request admitted at once (seqs = the burst); a step costs 1
	 * s plus 1 s a token computed (burst_tokens).
	 * (a) 2 requests, a cache of 12 tokens: the peak, 2 x (2 + 4), fits
	 * and nothing is preempted.  it0 prefills both (4 tokens: 5 s, first
	 * tokens out), it1-it3 decode both (3 s each), both leave: 14 s, as
	 * infer_burst's walk of the same burst (its B 2, the decodes
	 * counted in the budget).  Exact: 1e-12. */
	is_num(infer_burst_preempt(2, 2, 12, 4, 2, 2, 10, burst_tokens, NULL),
	       14.0, 1e-12, "preempt walk, cache fits: 14 s by hand");
	is_num(infer_burst(2, 2, 4, 2, 10, 1, 0, NULL, NULL, 0, burst_tokens,
	                   NULL), 14.0, 1e-12,
	       "the same burst through infer_burst: 14 s");
	/* Their first tokens: both prompts complete in it0, 5 s: mean
	 * 5 s, in (a) and in (b) below (a cache of 9), where the
	 * preempted request's recompute in it4 sends no first token
	 * again (counted, the mean would be (5 + 5 + 15) / 2).  Exact. */
	{
		infer_ttft ft;

		infer_burst_preempt_ttft(2, 2, 12, 4, 2, 2, 10, burst_tokens,
		                         NULL, &ft);
		is_num(ft.mean, 5.0, 1e-12,
		       "preempt walk: both first tokens at 5 s");
		infer_burst_preempt_ttft(2, 2, 9, 4, 2, 2, 10, burst_tokens,
		                         NULL, &ft);
		is_num(ft.mean, 5.0, 1e-12,
		       "preempted and recomputed: still its first token's 5 s");
	}
	/* (b) The same with a cache of 9 tokens.  it0 prefills both (5 s,
	 * 2 x 2 held); it1, it2 decode both (3 s each: 2 x 3, then 2 x 4
	 * held, 1 free).  it3: the first request's decode finds no block
	 * and pops the last-admitted, the second (its 4 tokens freed, back
	 * at the queue's head with its 3 outputs); the first decodes alone
	 * (2 s) and leaves with its 4th token; no admission in a step that
	 * preempted.  it4: the second comes back; its 4 freed tokens are
	 * still in the free pool (no allocation took them: 5 free after
	 * it3), so the prefix cache finds them, at most num_tokens - 1 = 2
	 * + 3 - 1 = 4, and it computes 1 token (2 s), emitting its 4th:
	 * 5 + 3 + 3 + 2 + 2 = 15 s. */
	is_num(infer_burst_preempt(2, 2, 9, 4, 2, 2, 10, burst_tokens, NULL),
	       15.0, 1e-12, "preempt walk: one preempted, found in the "
	       "prefix cache: 15 s by hand");
	/* (c) 3 requests, a cache of 12.  it0 prefills all three (6 tokens:
	 * 7 s); it1, it2 decode three (4 s each; 9, then 12 held, 0 free).
	 * it3: the first's decode pops the third (4 freed), the first two
	 * decode (3 s) and take 2 of those 4 tokens -- the free pool's only
	 * blocks, the third's last ones taken first -- so 2 of its tokens
	 * stay cached; the two leave.  it4: the third comes back with 2
	 * tokens found and computes the other 3 of its 2 + 3 (4 s): 7 + 4 +
	 * 4 + 3 + 4 = 22 s. */
	is_num(infer_burst_preempt(3, 3, 12, 4, 2, 2, 10, burst_tokens, NULL),
	       22.0, 1e-12, "preempt walk: a preempted request's cache "
	       "partly reused, recomputed in part: 22 s by hand");
	/* (d) max_num_seqs 1 holds the burst to one request at a time: it0
	 * prefills one (3 s), it1-it3 decode it (2 s each), then the other
	 * the same: 2 x 9 = 18 s; a cache under one request's whole length
	 * (5 < 2 + 4) is refused (0). */
	is_num(infer_burst_preempt(2, 1, 12, 4, 2, 2, 10, burst_tokens, NULL),
	       18.0, 1e-12, "preempt walk at max_num_seqs 1: 18 s");
	is_num(infer_burst_preempt(2, 2, 5, 4, 2, 2, 10, burst_tokens, NULL),
	       0.0, 0.0, "preempt walk: a cache under one request refused");

	/* --- a burst whose outputs spread (lens, shares) -------------------
	 * 2 requests, both held at once, prompts of 10 tokens, 20 prompt
	 * tokens a step, outputs of 2 and 4 tokens (half each, mean 3).
	 * it0 prefills both (0 decodes, 2 prompts: 10 s); it1 decodes both
	 * (2: 2 s), the 2-token one leaves; it2 and it3 decode the 4-token
	 * one alone (1: 1.5 s each), it leaves: 10 + 2 + 1.5 + 1.5 = 15 s,
	 * where both at the mean 3 tokens end together at it2 (10 + 2 + 2 =
	 * 14 s): the long one runs its last steps alone.  Exact in halves:
	 * 1e-12. */
	{
		double l2[2] = { 4.0, 2.0 }, s2[2] = { 0.5, 0.5 };
		infer_cfg q;
		double ql[INFER_QUANTILES], qs[INFER_QUANTILES], sum = 0.0;
		int k, i;

		is_num(infer_burst(2, 2, 3, 10, 20, 0, 0, l2, s2, 2,
		                   burst_price, NULL), 15.0, 1e-12,
		       "spread 2 and 4 tokens: 15 s by hand");
		is_num(infer_burst(2, 2, 3, 10, 20, 0, 0, NULL, NULL, 0,
		                   burst_price, NULL), 14.0, 1e-12,
		       "the same at the mean 3 tokens: 14 s by hand");
		/* The decodes run so far (gen) reach the step's price: it0
		 * prefills (1 s), it1 decodes both at gen 0 (1 s), it2 the
		 * 4-token one at gen 1 (2 s), it3 at gen 2 (3 s): 7 s. */
		is_num(infer_burst(2, 2, 3, 10, 20, 0, 0, l2, s2, 2,
		                   burst_gen, NULL), 7.0, 1e-12,
		       "spread: each step sees the survivors' decodes so far");

		/* infer_output_quantiles: 1000 requests of mean 200 tokens,
		 * none past 2000.  Their scale theta solves theta (1 -
		 * e^{-2000 / theta}) = 200: 200 (1 + e^{-10}) = 200.009.
		 * k = 1000 equal shares at the survival midpoints (i + 0.5) /
		 * 1000, rescaled to mean 200 (exact: 1e-9 relative), the
		 * longest -theta ln(0.0005) ~ 200 ln 2000 = 1520.2 tokens
		 * (0.5%: theta's e^{-10} and the rescale of the midpoints,
		 * which miss the tail past the last one, move it ~0.03%). */
		infer_defaults(&q);
		q.input = 100;
		q.output = 200;
		q.output_max = 2000;
		k = infer_output_quantiles(&q, 1000, ql, qs);
		ok(k == 1000, "1000 requests: 1000 quantiles");
		for (i = 0; i < k; i++)
			sum += ql[i] * qs[i];
		is_num(sum, 200.0, 1e-9 * 200.0, "the quantiles' mean is the "
		       "stated output");
		is_num(ql[0], 200.0 * log(2000.0), 0.005 * 1520.2,
		       "the longest of 1000: ~200 ln(2000) tokens");
		/* All 1000 prompts in the first step (10^6 tokens a step),
		 * every step 1 s: the run lasts until the longest ends, step
		 * ceil(1520.7) - 1 after its prefill step: ceil(ql[0]) steps
		 * (1521), alone in its window of ceil(1520.7 / 256) = 6
		 * steps (the next is 1300.9): exact.  At the mean every
		 * request ends at step 199: 200 steps. */
		is_num(infer_burst(1000, 1000, 200, 1, 1e6, 0, 0, ql, qs, k,
		                   burst_unit, NULL), ceil(ql[0]), 1e-12,
		       "a spread burst lasts until its longest output ends");
		is_num(infer_burst(1000, 1000, 200, 1, 1e6, 0, 0, NULL, NULL,
		                   0, burst_unit, NULL), 200.0, 1e-12,
		       "at the mean: 200 steps");
		ok(infer_output_quantiles(&q, 5000, ql, qs) == INFER_QUANTILES &&
		   infer_output_quantiles(&q, 3.5, ql, qs) == 4,
		   "k = min(ceil(n), INFER_QUANTILES)");
		q.output_max = 0;
		ok(infer_output_quantiles(&q, 1000, ql, qs) == 0,
		   "output_max 0: every request at the mean (no classes)");
	}

	/* --- bad input ----------------------------------------------------*/
	infer_defaults(&c);
	c.capacity = 80e9;
	c.input = NAN;
	ok(infer_run(&m, &d, &c, &r, &err) == GP_EINVAL &&
	   strstr(err.msg, "input") != NULL, "NaN input is refused");
	c.input = 128;
	/* host_ops_per_layer above INFER_HOST_OPS_MAX (10000: no decoder
	 * layer launches more, infer.h) is refused, naming the field. */
	c.host_ops_per_layer = 1e12;
	ok(infer_run(&m, &d, &c, &r, &err) == GP_EINVAL &&
	   strstr(err.msg, "host_ops_per_layer must be a number in "
		  "[0, 10000]") != NULL,
	   "host_ops_per_layer 1e12 is refused by the engine");
	c.host_ops_per_layer = 49.0;
	/* Spread outputs need a longest above their mean (output 256 by
	 * infer_defaults). */
	c.output_max = c.output;
	ok(infer_run(&m, &d, &c, &r, &err) == GP_EINVAL &&
	   strstr(err.msg, "output_max") != NULL,
	   "output_max at the mean output is refused");
	c.output_max = 0;
	c.tp = 3;
	c.gpus = 3;
	ok(infer_run(&m, &d, &c, &r, &err) == GP_EINVAL &&
	   strstr(err.msg, "divide") != NULL, "tp 3 with 32 heads refused");
	c.tp = 2;
	c.gpus = 3;
	ok(infer_run(&m, &d, &c, &r, &err) == GP_EINVAL &&
	   strstr(err.msg, "multiple") != NULL, "gpus not a multiple of tp");
	c.gpus = 2;
	c.row_split = 2;
	ok(infer_run(&m, &d, &c, &r, &err) == GP_EINVAL &&
	   strstr(err.msg, "row_split must be 0 or 1 (got 2)") != NULL,
	   "row_split 2 refused");
	c.row_split = 0;
	c.compute = GP_FP8;
	ok(infer_run(&m, &d, &c, &r, &err) == GP_EINVAL &&
	   strstr(err.msg, "fp8") != NULL, "fp8 compute on A100 refused");
	ok(infer_compute_dtype(&d, "fp8") == GP_BF16,
	   "fp8 weights on A100 run as W8A16 (bf16)");

	/* --- a sampler's kernels beyond greedy's (sample_kernels) ----------
	 * Qwen2.5 7B's shape (28 layers, h 3584, 28 / 4 heads, f 18944,
	 * vocabulary 152064) on the A100, batch 1: 37 kernels (vLLM 0.6.3's
	 * V0 sampler under random, top_p and penalties, lua/gpuplan/infer.lua)
	 * each read and write 152064 fp32 logits, 1,216,512 B, at 2.039e12 x
	 * 0.85 = 1.73315e12 B/s: 0.70191 us, + ROOF_MEM_FILL 3.9 us + the
	 * graph launch 1 us = 5.60191 us; 37 of them 207.271 us added to the
	 * step, nothing else moved.  1e-9: the same sums. */
	llama(&m, 28, 3584, 28, 4, 18944, 152064);
	a100(&d);
	infer_defaults(&c);
	c.capacity = 80e9;
	MUST(infer_step(&m, &d, &c, 1, 1, 2, 0, &p, &err));
	th = p.time;
	ok(row(&p, "sample_ops") == NULL, "greedy: no sample_ops row");
	c.sample_kernels = 37;
	MUST(infer_step(&m, &d, &c, 1, 1, 2, 0, &p, &err));
	o = row(&p, "sample_ops");
	ok(o != NULL && o->count == 37 && o->bytes == 152064.0 * 8,
	   "sample_ops: 37 kernels of 1,216,512 B");
	is_num(p.time - th, 37 * (152064.0 * 8 / (2.039e12 * 0.85) + 3.9e-6 +
	       1e-6), 1e-9 * th, "37 sampler kernels add 207.3 us to the step");
	c.sample_kernels = -1;
	ok(infer_step(&m, &d, &c, 1, 1, 2, 0, &p, &err) == GP_EINVAL &&
	   strstr(err.msg, "sample_kernels") != NULL,
	   "a negative sample_kernels is refused");

	/* --- a bucketed cache's attended length (kv_bucket) ----------------
	 * Decode step j = 1 .. output - 1 attends input + j tokens; bucketed
	 * by b it attends the next multiple of b, at most input + output
	 * (optimum-habana's cache_idx).  No bucket: input + output / 2.
	 * Tolerance 0 where the answer is a sum of small integers (exact in a
	 * double), 1e-12 relative where it is a mean taken by division
	 * (rounding only). */
	infer_defaults(&c);
	c.input = 128;
	c.output = 128;
	is_num(infer_decode_ctx(&c), 192.0, 0.0,
	       "no bucket: 128 + 128 / 2 = 192");
	/* A bucket of 1 rounds nothing: the mean of 129 .. 255 is 192. */
	c.kv_bucket = 1;
	is_num(infer_decode_ctx(&c), 192.0, 1e-12, "bucket 1: 192 again");
	/* 128 / 128 by 128: lengths 129 .. 255 all round to 256. */
	c.kv_bucket = 128;
	is_num(infer_decode_ctx(&c), 256.0, 0.0, "128/128 by 128: 256 a step");
	/* 128 / 2048 by 128: lengths 129 .. 2175; the buckets 256, 384 ..
	 * 2048 take 128 steps each, 2176 (the cache's whole length, 17 x
	 * 128) the last 127: (128 x 128 x (2 + ... + 16) + 127 x 2176) /
	 * 2047 = (2211840 + 276352) / 2047 = 1215.5315 (1152 unbucketed). */
	c.output = 2048;
	is_num(infer_decode_ctx(&c), 2488192.0 / 2047.0, 1e-12,
	       "128/2048 by 128: 2488192 / 2047 = 1215.53");
	/* A cache that is no multiple of the bucket: input 100, output 50,
	 * b 64: lengths 101 .. 149; 101 .. 128 (28 steps) round to 128,
	 * 129 .. 149 (21) to 192, capped at the cache's 150: (28 x 128 +
	 * 21 x 150) / 49 = 6734 / 49 = 137.43. */
	c.input = 100;
	c.output = 50;
	c.kv_bucket = 64;
	is_num(infer_decode_ctx(&c), 6734.0 / 49.0, 1e-12,
	       "100/50 by 64: capped at 150, 6734 / 49");
	/* One output token: no decode step, the plain mean. */
	c.output = 1;
	is_num(infer_decode_ctx(&c), 100.5, 0.0, "output 1: input + 1 / 2");
	/* Bad buckets are refused by name. */
	llama(&m, 28, 3584, 28, 4, 18944, 152064);
	infer_defaults(&c);
	c.capacity = 80e9;
	c.kv_bucket = -128;
	ok(infer_step(&m, &d, &c, 1, 1, 2, 0, &p, &err) == GP_EINVAL &&
	   strstr(err.msg, "kv_bucket") != NULL, "a negative kv_bucket is refused");
	c.kv_bucket = 127.5;
	ok(infer_step(&m, &d, &c, 1, 1, 2, 0, &p, &err) == GP_EINVAL &&
	   strstr(err.msg, "kv_bucket") != NULL, "a fractional kv_bucket is refused");
	/* --- infer_loaded_ttft: the one rule for a request joining a
	 * steady state (gp.infer's chunked-prefill engines and the MoE
	 * serving model's colocated instances).  20000 prompt tokens, room
	 * 8184 a step (8192 less 8 decodes): n = ceil(20000 / 8184) = 3
	 * steps of tc = 0.1 s (chunk 6666.7 under k = 8192: no price
	 * asked); a share f = 0.01 of the steps at tc, the others at td =
	 * 0.01 s: E[T] = 0.99 x 0.01 + 0.01 x 0.1 = 0.0109, E[T^2] = 0.99 x
	 * 1e-4 + 0.01 x 0.01 = 1.99e-4, wait E[T^2] / (2 E[T]) = 1.99e-4 /
	 * 0.0218 = 0.0091284 s; ttft = wait + 3 x 0.1.  1e-12: the same
	 * sums. */
	{
		infer_loaded lt;
		double asked = 0.0;

		ok(infer_loaded_ttft(20000, 8184, 0.01, 0.1, 0.01, 8192, NULL,
		                     NULL, &lt, &err) == GP_OK && lt.steps == 3.0,
		   "loaded TTFT: 20000 tokens in 8184 a step, 3 steps");
		is_num(lt.wait, 1.99e-4 / 0.0218, 1e-12,
		       "loaded TTFT: wait E[T^2] / 2 E[T] = 1.99e-4 / 0.0218");
		is_num(lt.ttft, 1.99e-4 / 0.0218 + 0.3, 1e-12,
		       "loaded TTFT: wait + 3 x 0.1 s");
		/* a chunk above k is priced by the callback: room 16000, n =
		 * ceil(20000 / 16000) = 2 chunks of 10000 > k 8192 */
		infer_loaded_ttft(20000, 16000, 0.01, 0.1, 0.01, 8192,
		                  chunk_price, &asked, &lt, &err);
		ok(lt.steps == 2.0 && asked == 10000.0 && lt.step == 0.2,
		   "loaded TTFT: a 10000-token chunk over k priced by the caller");
		/* no room beside the decodes: not priced (the caller keeps one
		 * prompt's), all zero */
		infer_loaded_ttft(20000, 0, 0.01, 0.1, 0.01, 8192, NULL, NULL,
		                  &lt, &err);
		ok(lt.ttft == 0.0 && lt.steps == 0.0, "loaded TTFT: no room, none");
		/* ... and says so: full, with the room it was given (the MoE
		 * serving model's note: decodes fill the budget); with room
		 * (8184) it is not full */
		ok(lt.full == 1 && lt.room == 0.0, "loaded TTFT: no room, full");
		infer_loaded_ttft(20000, 8184, 0.01, 0.1, 0.01, 8192, NULL,
		                  NULL, &lt, &err);
		ok(lt.full == 0, "loaded TTFT: room 8184, not full");
		/* a share outside [0, 1] or NaN is held to it: f NaN -> 0, the
		 * wait half a decode step (td / 2 = 0.005); f 1.5 -> 1, half a
		 * chunk step (0.05) -- never NaN */
		infer_loaded_ttft(20000, 8184, NAN, 0.1, 0.01, 8192, NULL, NULL,
		                  &lt, &err);
		is_num(lt.wait, 0.005, 1e-12, "loaded TTFT: f NaN -> 0, td / 2");
		infer_loaded_ttft(20000, 8184, 1.5, 0.1, 0.01, 8192, NULL, NULL,
		                  &lt, &err);
		is_num(lt.wait, 0.05, 1e-12, "loaded TTFT: f 1.5 -> 1, tc / 2");
		ok(infer_loaded_ttft(20000, 8184, 0.01, 0.1, 0.01, 8192, NULL,
		                     NULL, NULL, &err) == GP_EINVAL,
		   "loaded TTFT: a NULL output is refused");
	}
	return done();
}
