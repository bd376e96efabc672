/*
 * t_hybrid_infer.c - serving a hybrid Mamba/attention/MoE stack (Nemotron
 * 3 Nano): the Mamba state a sequence keeps, the KV of the attention
 * layers only, the decode step's state update in place of the chunked
 * scan, one TP all-reduce a layer, and the options infer refuses for it,
 * against hand derivations.
 */
#include <math.h>
#include <string.h>

#include "infer.h"
#include "memory.h"
#include "model.h"
#include "tap.h"
#include "fixture.h"

#define EXACT 1e-12

/* NVIDIA Nemotron 3 Nano 30B-A3B: the shared fixture (fixture.h
 * fx_nemotron_nano, Megatron-Bridge Nemotron3NanoProvider at 2c2425a):
 * 52 layers, 23 Mamba-2 (M), 23 MoE (E), 6 attention (*); Mamba 64 heads
 * of 64, state 128, 8 groups, conv 4, chunk 128. */
#define nemotron_nano fx_nemotron_nano

/* H100 SXM-like: bf16 989 TFLOP/s at 0.80, 3.35 TB/s at 0.84. */
static void hopper(roof_device *d)
{
	memset(d, 0, sizeof *d);
	d->peak[GP_BF16] = d->peak[GP_FP16] = 989e12;
	d->peak[GP_FP8] = 1979e12;
	d->peak[GP_FP32] = 67e12;
	d->gemm_frac[GP_BF16] = d->gemm_frac[GP_FP16] = 0.80;
	d->gemm_frac[GP_FP8] = 0.71;
	d->mem_bw = 3.35e12;
	d->hbm_frac = 0.84;
	d->launch = 4e-6;
	d->graph_launch = 1e-6;
	d->sms = 132;
}

static const infer_op_row *row(const infer_phase *p, const char *name)
{
	int i;

	for (i = 0; i < p->nops; i++)
		if (strcmp(p->ops[i].name, name) == 0)
			return &p->ops[i];
	return NULL;
}

int main(void)
{
	gp_model m = nemotron_nano();
	roof_device d;
	infer_cfg c;
	infer_phase p, p2;
	gp_infer_cfg ic;
	gp_mem_reserve rs;
	gp_mem_result r;
	gp_op_cfg oc;
	gp_op st[2];
	gp_error e;
	const infer_op_row *o;
	double state, kv;

	plan(29);

	/* --- the state one sequence keeps --------------------------------
	 * Per Mamba layer: the SSM state heads x head_dim x state = 64 x 64
	 * x 128 = 524,288 elements in fp32 (GP_MAMBA_SSM_STATE_BYTES, vLLM's
	 * NemotronH default) = 2,097,152 B, and the conv window (conv - 1)
	 * x conv_dim = 3 x (64 x 64 + 2 x 8 x 128 = 6144) = 18,432 elements
	 * in bf16 = 36,864 B: 2,134,016 B a layer, x 23 Mamba layers =
	 * 49,082,368 B a sequence, whatever its length. */
	state = model_mamba_serve_bytes(&m, 1, GP_MAMBA_CONV_STATE_BYTES,
					GP_MAMBA_SSM_STATE_BYTES);
	is_num(state, 49082368.0, EXACT, "Nano's Mamba state: 49,082,368 B "
	       "a sequence");
	/* TP 2 splits the heads and the groups: half of each. */
	is_num(model_mamba_serve_bytes(&m, 2, 2.0, 4.0), 24541184.0, EXACT,
	       "at TP 2: 24,541,184 B a rank");
	/* All 16-bit (a runtime that keeps the SSM state in bf16): 23 x
	 * (1,048,576 + 36,864) = 24,965,120 B. */
	is_num(model_mamba_serve_bytes(&m, 1, 2.0, 2.0), 24965120.0, EXACT,
	       "SSM state in bf16: 24,965,120 B");
	ok(model_mamba_serve_bytes(&m, 0.5, 2.0, 4.0) < 0 &&
	   model_mamba_serve_bytes(&m, 1, 0.0, 4.0) < 0,
	   "tp below 1 or a zero element size: invalid");

	/* --- the serving memory: KV of the * layers + the state ----------
	 * KV a token: 6 attention layers x K and V x 2 KV heads x 128 x 2 B
	 * = 6,144 B; 2,304 tokens (2048 in + 256 out) = 14,155,776 B, plus
	 * the state 49,082,368 = 63,238,144 B a sequence (block 0: no
	 * rounding). */
	memset(&ic, 0, sizeof ic);
	ic.tp = 1;
	ic.pp = 1;
	ic.seqs = 4;
	ic.ctx = 2304;
	ic.kv_bytes = 2.0;
	mem_reserve_default(&rs, 1);
	ok(mem_infer(&m, &ic, 80e9, &rs, &r, &e) == GP_OK, "mem_infer "
	   "prices a hybrid stack");
	kv = 6.0 * 2 * 2 * 128 * 2 * 2304;
	is_num(r.kv_per_seq, kv + 49082368.0, EXACT,
	       "a sequence: 14,155,776 KV + 49,082,368 state = 63,238,144 B");
	is_num(r.bytes[GP_MEM_KV], 4 * (kv + 49082368.0), EXACT,
	       "4 sequences hold 4 times that");
	/* The weights: every parameter of the stack in bf16, the Mamba
	 * mixers among them (model_params' total x 2 B, no vision). */
	{
		gp_params pr;

		model_params(&m, &pr, NULL);
		is_num(r.bytes[GP_MEM_WEIGHTS], 2.0 * pr.total, 1e-9,
		       "weights: every parameter in bf16, the Mamba mixers "
		       "included");
	}
	/* pp 2 and offload are refused, usage errors naming the option. */
	ic.pp = 2;
	ok(mem_infer(&m, &ic, 80e9, &rs, &r, &e) == GP_EINVAL && e.usage &&
	   strstr(e.msg, "pp 2: a hybrid stack"), "pp 2 refused (usage)");
	ic.pp = 1;
	ic.offload = 1;
	ok(mem_infer(&m, &ic, 80e9, &rs, &r, &e) == GP_EINVAL && e.usage &&
	   strstr(e.msg, "offload: a hybrid stack"), "offload refused");
	ic.offload = 0;

	/* --- the decode ops ----------------------------------------------
	 * 8 sequences, TP 1.  conv1d_update: 8 x 6144 channels; each reads
	 * its input and writes its output (2) and reads and writes the 3
	 * kept inputs in bf16 (2 x 3 x 2 B / 2 B = 6): 8 x 6144 x 8 =
	 * 393,216 16-bit elements.  ssm_update: the fp32 state read and
	 * written, 2 x 524,288 x 4 B / 2 B = 2,097,152, plus x and y (2 x
	 * 4096), dt (64), B and C (2 x 8 x 128 = 2048): 2,107,456 a
	 * sequence, 16,859,648 for 8; 5 FLOP a state element: 5 x 8 x
	 * 524,288 = 20,971,520. */
	memset(&oc, 0, sizeof oc);
	oc.seqs = 8;
	oc.q = 1;
	oc.kv_len = 100;
	oc.tp = 1;
	ok(model_mamba_decode_ops(&m, &oc, 2.0, 4.0, st) == 2,
	   "two decode ops");
	is_num(st[0].act, 393216.0, EXACT, "conv1d_update: 393,216 elements");
	is_num(st[1].act, 16859648.0, EXACT, "ssm_update: 16,859,648");
	is_num(st[1].flop, 20971520.0, EXACT, "ssm_update: 20,971,520 FLOP");

	/* --- infer_step: decode and prefill ------------------------------ */
	hopper(&d);
	infer_defaults(&c);
	c.capacity = 80e9;
	ok(infer_step(&m, &d, &c, 8, 1, 2048, 0, &p, &e) == GP_OK,
	   "a decode step of a hybrid stack is priced");
	o = row(&p, "ssm_update");
	ok(o && o->count == 23 && fabs(o->bytes - 2.0 * 16859648.0) < 1e-3,
	   "decode: ssm_update once a Mamba layer, its state bytes");
	ok(!row(&p, "ssd_scan") && !row(&p, "conv1d"),
	   "decode: no chunked scan");
	o = row(&p, "attention");
	ok(o && o->count == 6, "decode: attention in the 6 * layers");
	o = row(&p, "moe_up");
	ok(o && o->count == 23, "decode: experts in the 23 E layers");
	o = row(&p, "in_proj");
	ok(o && o->count == 23, "decode: in_proj in the 23 M layers");
	/* vLLM's mamba_ssm_cache_dtype bfloat16 (mamba_ssm_bytes 2): the
	 * update reads and writes each of the 8 sequences' SSM state of 64
	 * x 64 x 128 = 524,288 elements at 2 B where fp32 took 4: 8 x 2 x
	 * 524,288 x (4 - 2) / 2 = 8,388,608 fewer 16-bit elements,
	 * 16,859,648 - 8,388,608 = 8,471,040 (exact: whole elements). */
	{
		infer_cfg c16 = c;

		c16.mamba_ssm_bytes = 2.0;
		ok(infer_step(&m, &d, &c16, 8, 1, 2048, 0, &p2, &e) ==
		   GP_OK, "decode at a 16-bit SSM state is priced");
		o = row(&p2, "ssm_update");
		ok(o && fabs(o->bytes - 2.0 * 8471040.0) < 1e-3,
		   "ssm_update at a 16-bit state: 8,471,040 elements");
		c16.mamba_ssm_bytes = 1.0;
		ok(infer_step(&m, &d, &c16, 8, 1, 2048, 0, &p2, &e) != GP_OK &&
		   strstr(e.msg, "mamba_ssm_bytes"),
		   "an 8-bit SSM state, which vLLM does not keep: refused");
	}
	/* Prefill of one 2048-token prompt: the chunked scan, not the
	 * update; its FLOP a token model_mamba_scan_flops(128): 8 x 2 x 128
	 * x 128 + 64 x (2 x 128 x 64 + 4 x 128 x 64 + 2 x 128 x 64 / 128)
	 * = 262,144 + 64 x 49,280 = 3,416,064, x 2048 tokens. */
	ok(infer_step(&m, &d, &c, 1, 2048, 2048, 0, &p2, &e) == GP_OK,
	   "a prefill step is priced");
	o = row(&p2, "ssd_scan");
	ok(o && o->count == 23 && fabs(o->flop - 2048 * 3416064.0) < 1.0,
	   "prefill: the chunked scan, 3,416,064 FLOP a token a layer");
	ok(!row(&p2, "ssm_update"), "prefill: no state update op");

	/* --- TP: one all-reduce a layer ------------------------------------
	 * Each letter is one block with one row-parallel output, so the 52
	 * layers at TP 2 all-reduce 52 times a step -- as often as a plain
	 * 26-layer model of the same hidden width (two a layer), whose
	 * messages (T x h x 2 B) are the same size. */
	{
		gp_model g;
		infer_cfg c2 = c;

		memset(&g, 0, sizeof g);
		g.layers = 26;
		g.hidden = 2688;
		g.heads = 32;
		g.kv_heads = 2;
		g.head_dim = 128;
		g.ffn_hidden = 1856;
		g.ffn_gated = 1;
		g.vocab = 131072;
		g.norm_params = 2688;
		c2.tp = 2;
		c2.gpus = 2;
		c2.ar_bw = 100e9;
		c2.ar_latency = 5e-6;
		ok(infer_step(&m, &d, &c2, 8, 1, 2048, 0, &p, &e) == GP_OK &&
		   infer_step(&g, &d, &c2, 8, 1, 2048, 0, &p2, &e) == GP_OK &&
		   p.comm_time > 0 &&
		   fabs(p.comm_time - p2.comm_time) < 1e-12 * p2.comm_time,
		   "TP 2: 52 hybrid layers all-reduce as often as 26 plain "
		   "ones");
	}

	/* --- refusals ------------------------------------------------------ */
	c.kv_unfused = 1;
	ok(infer_step(&m, &d, &c, 8, 1, 2048, 0, &p, &e) == GP_EINVAL &&
	   e.usage && strstr(e.msg, "kv_unfused: a hybrid stack"),
	   "an unfused KV dequantisation refused (usage)");
	c.kv_unfused = 0;
	/* rl's rollouts still refuse it, and say who prices it. */
	ok(model_check_priced(&m, &e) == GP_EINVAL &&
	   strstr(e.msg, "not priced by rl") &&
	   strstr(e.msg, "infer, roofline, train, fit and plan price it"),
	   "rl refuses a hybrid stack, naming what prices it");
	return done();
}
