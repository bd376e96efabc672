/*
 * t_hybrid.c - a hybrid Mamba/attention/MoE stack (Nemotron 3 Nano) in
 * train and fit: each layer kind's operators, saved activations and
 * weights against hand derivations, the per-stage kind counts, the
 * step's operator rows (every kind's, weighted by its count), and the
 * options the step refuses for it.
 */
#include <math.h>
#include <string.h>

#include "memory.h"
#include "memory_act.h"
#include "model.h"
#include "fixture.h"
#include "recipes.h"
#include "tap.h"
#include "train.h"

#define EXACT 1e-12

/* The forward FLOP of one layer of kind `kind` (model_op_in's ops). */
static double kind_flops(const gp_model *m, const gp_op_cfg *oc, char kind,
			 int *nops)
{
	gp_op ops[GP_MAX_LAYER_OPS];
	int i, n = model_layer_ops(m, oc, ops);
	double f = 0;

	*nops = 0;
	for (i = 0; i < n; i++)
		if (model_op_in(ops[i].scope, kind, 1)) {
			f += ops[i].flop;
			(*nops)++;
		}
	return f;
}

/* The result row of operator `name` in layer kind `kind`, or NULL. */
static const train_op *row(const train_result *r, char kind,
			   const char *name)
{
	int i;

	for (i = 0; i < r->nops; i++)
		if (r->ops[i].kind == kind && strcmp(r->ops[i].name, name) == 0)
			return &r->ops[i];
	return NULL;
}

static train_cfg nano_cfg(int tp, int pp, int ep)
{
	train_cfg c;

	train_defaults(&c);
	c.mem.recipe = FX_MIXED16;
	c.mem.optim = FX_ADAMW;
	c.mem.lay.tp = tp;
	c.mem.lay.pp = pp;
	c.mem.lay.dp = 8 / tp / pp;
	c.mem.lay.ep = ep;
	c.mem.lay.micro_batch = 1;
	c.mem.lay.zero = 1;
	c.mem.seq = 128;
	c.mem.flash = 1;
	c.global_batch = 64;
	c.capacity = 80e9;
	return c;
}

int main(void)
{
	gp_model m = fx_nemotron_nano();
	gp_op_cfg oc;
	gp_act_cfg ac;
	gp_act_layer a, b;
	gp_train_cfg tc;
	gp_mem_reserve rs;
	gp_mem_result r;
	roof_device d;
	gp_topo t = fx_selene();
	train_cfg c;
	train_result tr;
	gp_error e;
	double T = 4096, f;
	int n;

	plan(51);
	fx_a100(&d);

	/* --- each kind's operators: forward FLOP of one layer ------------- */
	/* One 4096-token sequence on one GPU, every query against 4096
	 * keys. */
	memset(&oc, 0, sizeof oc);
	oc.seqs = 1;
	oc.q = T;
	oc.kv_len = T;
	oc.tp = 1;
	oc.ep = 1;
	oc.flash = 1;
	/* M: mamba_norm 4 T h; in_proj 2 T x 10304 x 2688 (in_width 2 x
	 * 4096 + 2 x 8 x 128 + 64); conv1d T x 6144 channels x (2 x 4 + 5);
	 * the SSD scan T x 3,416,064 (t_model.c); gate_norm 9 T x 4096;
	 * out_proj 2 T x 2688 x 4096.  Per token 10,752 + 55,394,304 +
	 * 79,872 + 3,416,064 + 36,864 + 22,020,096 = 80,957,952. */
	f = kind_flops(&m, &oc, 'M', &n);
	is_int(n, 6, "M: mamba_norm, in_proj, conv1d, ssd_scan, gate_norm, "
	       "out_proj");
	is_num(f, T * 80957952.0, EXACT, "M: forward FLOP of a Mamba layer");
	/* *: attn_norm 4 T h; qkv 2 T x (32 + 2 x 2) x 128 x 2688; rope on
	 * q and k, 6 T x (32 + 2) x 128 (the fixture's positions are the
	 * default rope); attention 2 T x 4096 keys x 32 heads x (128 +
	 * 128); o_proj 2 T x 2688 x 4096.  Per token 10,752 + 24,772,608 +
	 * 26,112 + 67,108,864 + 22,020,096 = 113,938,432. */
	f = kind_flops(&m, &oc, '*', &n);
	is_int(n, 5, "*: attn_norm, qkv, rope_kv, attention, o_proj");
	is_num(f, T * 113938432.0, EXACT,
	       "*: forward FLOP of an attention-only layer");
	/* The model's own positions, none (MambaModelProvider's
	 * position_embedding_type "none"): no rope; the K and V the
	 * projection wrote go to attention as kv_write, a copy with no
	 * FLOP.  113,938,432 - 6 x 34 x 128 (26,112) = 113,912,320 a
	 * token, and the ops are still five. */
	m.positions = GP_POS_NONE;
	f = kind_flops(&m, &oc, '*', &n);
	is_int(n, 5, "* without positions: attn_norm, qkv, kv_write, "
	       "attention, o_proj");
	is_num(f, T * 113912320.0, EXACT,
	       "* without positions: no rope FLOP");
	m.positions = GP_POS_ROPE;
	/* E: the MLP's pre-norm (FFN) and the MoE block (MOE): no
	 * attention, no Mamba op. */
	(void)kind_flops(&m, &oc, 'E', &n);
	ok(n >= 3, "E: mlp_norm and the MoE ops");
	(void)kind_flops(&m, &oc, '-', &n);
	is_int(n, 1, "-: only the pre-norm (Nano has no - layer: no dense "
	       "MLP emitted)");

	/* --- the SSD scan's backward (model_ops.c mamba_scan_bwd) --------- */
	{
		double bf, ba;

		/* TP 1: H 64, P 64, G 8, N 128, Q 128, HPN/Q 4,096.
		 * Elements: 11 HP 45,056 + 15 GN 15,360 + 12 GQ 12,288 +
		 * 69 H 4,416 + 15 HPN/Q 61,440 = 138,560 a token (the
		 * forward's 45,888 three times over, where 1.5 times was
		 * priced before).  FLOP: 2 x 3,416,064 + G 2QN 262,144 +
		 * H (2NP 16,384 + 2NP/Q 128) 1,056,768 = 8,151,040. */
		model_mamba_scan_bwd(&m, 4096, 1, &bf, &ba);
		is_num(ba, 138560.0, EXACT, "scan backward: elements a token");
		is_num(bf, 8151040.0, EXACT, "scan backward: FLOP a token");
		/* TP 2 halves heads and groups: every term halves,
		 * 69,280 and 4,075,520. */
		model_mamba_scan_bwd(&m, 4096, 2, &bf, &ba);
		ok(ba == 69280.0 && bf == 4075520.0,
		   "scan backward at TP 2: half of each");
		/* TP 3 does not divide 64 heads: refused, -1. */
		model_mamba_scan_bwd(&m, 4096, 3, &bf, &ba);
		ok(ba == -1.0 && bf == -1.0, "scan backward: TP 3 -> -1");
	}

	/* --- saved activations a kind ------------------------------------- */
	memset(&ac, 0, sizeof ac);
	ac.seq = T;
	ac.micro_batch = 1;
	ac.tp = 1;
	ac.act_bytes = 2;
	ac.flash = 1;
	MUST(mem_act_kind(&m, &ac, 'M', &a, &e));
	/* M at TP 1: the norm input h x 2 B = 5,376 a token; the mixer
	 * the norm output 5,376, zxbcdt 10,304 x 2, out_x, the gated norm's
	 * input and out_proj's input 3 x 4096 x 2, the fp32 rstd 4 x 8:
	 * 5,376 + 20,608 + 24,576 + 32 = 50,592.  Together 55,968 a token,
	 * model_mamba_act_bytes (t_model.c). */
	is_num(a.norms, T * 5376.0, EXACT, "M: the pre-norm's input");
	is_num(a.mamba, T * 50592.0, EXACT, "M: the mixer's saved tensors");
	is_num(a.total, T * model_mamba_act_bytes(&m, 2.0), EXACT,
	       "M: whole, model_mamba_act_bytes");
	is_num(a.attention + a.core + a.mlp, 0.0, EXACT,
	       "M: no attention, core or MLP tensors");
	/* TP 2 with SP: the norm's input and output T / 2 tokens each,
	 * zxbcdt, out_x, gate and out_proj input half the heads, the rstd
	 * half the groups: 2,688 + 2,688 + 10,304 + 12,288 + 16 = 27,984. */
	ac.tp = 2;
	ac.sp = 1;
	MUST(mem_act_kind(&m, &ac, 'M', &a, &e));
	is_num(a.total, T * 27984.0, EXACT, "M at TP 2 with SP: halved");
	/* recompute_modules layernorm drops the norm's output (2,688 a
	 * token at TP 2, SP), rebuilt in the layer's backward. */
	ac.recompute = GP_RECOMPUTE_SELECTIVE;
	MUST(mem_recompute_modules_parse("layernorm", &ac.recompute_modules,
					 &e));
	MUST(mem_act_kind(&m, &ac, 'M', &b, &e));
	is_num(a.total - b.total, T * 2688.0, EXACT,
	       "M: layernorm recompute drops the norm output");
	is_num(b.rebuilt, T * 2688.0, EXACT, "M: and rebuilds it");
	ac.recompute = GP_RECOMPUTE_NONE;
	ac.recompute_modules = 0;
	ac.tp = 1;
	ac.sp = 0;
	/* *: one norm input (h x 2 B), where a plain layer has two; the
	 * attention block's tensors as a plain layer's: QKV input h, Q K V
	 * (4096 + 2 x 256) and the projection input 4096, x 2 B: 2 x (2688 +
	 * 4608 + 4096) = 22,784; the flash statistics 4 x 32 = 128. */
	MUST(mem_act_kind(&m, &ac, '*', &a, &e));
	is_num(a.norms, T * 5376.0, EXACT, "*: one pre-norm input");
	is_num(a.attention, T * 22784.0, EXACT, "*: the attention block");
	is_num(a.core, T * 128.0, EXACT, "*: flash's log-sum-exp");
	is_num(a.mlp + a.mamba, 0.0, EXACT, "*: no MLP or Mamba tensors");
	MUST(mem_act_kind(&m, &ac, 'E', &a, &e));
	is_num(a.attention + a.core + a.mamba, 0.0, EXACT,
	       "E: no attention or Mamba tensors");
	ok(a.mlp > 0 && a.norms == T * 5376.0, "E: the MoE block and one "
	   "pre-norm input");

	/* --- weights: per-kind shares by the stage's kind counts ---------- */
	/* fit at TP 1, PP 1, EP 8, 2 B weights: embedding and head 2 x
	 * 131072 x 2688 = 704,643,072; attention 6 x 23,396,352; Mamba 23
	 * x 38,742,208; norms 53 x 2688; routers 23 x 344,064; the experts
	 * 29,833,789,440 / 8 = 3,729,223,680 (t_model.c): 5,473,371,584
	 * weights, 10,946,743,168 B. */
	memset(&tc, 0, sizeof tc);
	tc = nano_cfg(1, 1, 8).mem;
	mem_reserve_default(&rs, 8);
	MUST(mem_train(&m, &tc, 80e9, &rs, &r, &e));
	is_num(r.bytes[GP_MEM_WEIGHTS], 10946743168.0, EXACT,
	       "fit: weights at EP 8, every kind's");
	/* PP 2, EP 4: 26 layers a stage.  Stage 0 MEMEM*EMEMEM*EMEMEM*
	 * EMEMEM: 12 M, 11 E, 3 *; stage 1 *EMEMEM*EMEMEMEM*EMEMEMEME: 11
	 * M, 12 E, 3 *.  An MoE layer's experts 1,297,121,280 / 4 =
	 * 324,280,320 and its router 344,064.  Stage 1's weights: the head
	 * 352,321,536 + 3 x 23,396,352 + 11 x 38,742,208 + 12 x (344,064 +
	 * 324,280,320) + half the norms 71,232 = 4,744,238,720, 9,488,477,440
	 * B; stage 0 the embedding and 12 M, 11 E: 4,458,356,544,
	 * 8,916,713,088 B. */
	tc = nano_cfg(1, 2, 4).mem;
	tc.lay.dp = 4;
	MUST(mem_train(&m, &tc, 80e9, &rs, &r, &e));
	is_num(r.bytes[GP_MEM_WEIGHTS], r.stage == 1 ? 9488477440.0 :
	       8916713088.0, EXACT, "fit at PP 2: the reported stage's "
	       "kinds' weights");

	/* Middle stages of the same length but other kinds are each their
	 * own stage: a small stack MM ** EE MM at PP 4 (h 256, 64 experts of
	 * 1024, ungated, top 2), stage 2 holding the two MoE layers.  Its
	 * weights: 2 x (router 256 x 64 + 64 experts x 2 x 256 x 1024) =
	 * 2 x 33,570,816 = 67,141,632, and its share of the norms (8 + 1) x
	 * 256 x 2 / 8 = 576: 67,142,208, 134,284,416 B; the other stages
	 * hold under 1.2M weights, so stage 2 is the most loaded. */
	{
		gp_model s = m;

		s.layers = 8;
		s.hidden = 256;
		s.heads = 4;
		s.kv_heads = 4;
		s.head_dim = 64;
		s.ffn_hidden = 1024;
		s.vocab = 1000;
		s.norm_params = 256;
		strcpy(s.pattern, "MM**EEMM");
		s.mamba.heads = 8;
		s.mamba.head_dim = 64;
		s.mamba.state = 16;
		s.mamba.groups = 1;
		s.moe.experts = 64;
		s.moe.top_k = 2;
		s.moe.shared_experts = 0;
		s.moe.ffn_hidden = 1024;
		s.moe.shared_ffn_hidden = 0;
		tc = nano_cfg(1, 4, 1).mem;
		tc.lay.dp = 2;
		tc.lay.micro_batch = 1;
		tc.lay.microbatches = 8;
		MUST(mem_train(&s, &tc, 80e9, &rs, &r, &e));
		is_int(r.stage, 2, "PP 4: the MoE stage among equal-length "
		       "middle stages is the most loaded");
		is_num(r.bytes[GP_MEM_WEIGHTS], 134284416.0, EXACT,
		       "its weights, the two E layers'");
		/* The largest weight (optimizer_in_bwd holds one gradient
		 * at a time): the Mamba in_proj, 256 x (2 x 512 + 2 x 16 +
		 * 8) = 272,384, over an expert's 262,144 and the 256,000
		 * embedding; 2 B gradients at PP 1: 544,768 B. */
		tc = nano_cfg(1, 1, 1).mem;
		tc.lay.dp = 8;
		tc.grads_in_bwd = 1;
		MUST(mem_train(&s, &tc, 80e9, &rs, &r, &e));
		is_num(r.bytes[GP_MEM_GRADS], 544768.0, EXACT,
		       "the largest weight is the Mamba in_proj");
	}

	/* --- the step ----------------------------------------------------- */
	c = nano_cfg(1, 1, 8);
	ok(train_step(&m, &d, &t, &c, &tr, &e) == GP_OK,
	   "train: a hybrid stack is priced");
	ok(tr.part[TRAIN_COMPUTE] > 0 && tr.part[TRAIN_EP] > 0 &&
	   tr.part[TRAIN_TP] == 0, "compute and EP, no TP at tp 1");
	/* TP: one collective pair a layer and pass (each layer one
	 * block), where a plain model's layer has two: the TP part of the
	 * 52-layer hybrid at TP 2 without SP is 52 x 2 all-reduces of T h 2
	 * B a micro-batch (fwd + bwd), a plain 26-layer model's of the same
	 * width 26 x 2 x 2: equal.  Both price the same all-reduce. */
	{
		gp_model p = fx_gpt(26, 2688, 32, 131072);
		train_cfg cp = nano_cfg(2, 1, 1);
		train_result pr;

		c = nano_cfg(2, 1, 4);
		c.mem.lay.dp = 4;
		cp.mem.lay.dp = 4;
		cp.mem.lay.ep = 1;
		MUST(train_step(&m, &d, &t, &c, &tr, &e));
		MUST(train_step(&p, &d, &t, &cp, &pr, &e));
		is_num(tr.part[TRAIN_TP], pr.part[TRAIN_TP], 1e-9,
		       "TP: 52 one-pair layers = 26 two-pair layers");
	}

	/* --- the step's operator rows: every kind's, weighted ------------- */
	/* Nano's 52 layers are 23 M, 6 * and 23 E (the pattern's letters,
	 * no -): its rows are the Mamba layer's, the attention's and the
	 * MoE's, in that order, at shares 23/52, 6/52 and 23/52; the
	 * result used to list the E layer's alone. */
	c = nano_cfg(1, 1, 8);
	MUST(train_step(&m, &d, &t, &c, &tr, &e));
	{
		const train_op *ip = row(&tr, 'M', "in_proj");
		const train_op *qk = row(&tr, '*', "qkv");
		const train_op *up = row(&tr, 'E', "moe_up");
		int i, order = 1, dash = 0;

		ok(ip && qk && up, "rows of the M, * and E layers: in_proj, "
		   "qkv, moe_up");
		is_num(ip ? ip->share : 0, 23.0 / 52.0, EXACT,
		       "M's share: 23 of 52 layers");
		is_num(qk ? qk->share : 0, 6.0 / 52.0, EXACT,
		       "*'s share: 6 of 52 layers");
		is_num(up ? up->share : 0, 23.0 / 52.0, EXACT,
		       "E's share: 23 of 52 layers");
		for (i = 0; i < tr.nops; i++) {
			dash |= tr.ops[i].kind == '-';
			if (i > 0 && strchr("M*-E", tr.ops[i].kind) <
			    strchr("M*-E", tr.ops[i - 1].kind))
				order = 0;
		}
		ok(!dash && order, "no - rows (no MLP layer); M, *, -, E order");
	}
	/* Weighted by the counts: the same four-layer stack as "M*ME" (M
	 * 2/4, * 1/4, E 1/4) and as "M*EE" (M 1/4, * 1/4, E 2/4).  A
	 * layer of one kind costs the same in both (its shapes and the
	 * config are the same), so a row's seconds go as its kind's count:
	 * in_proj's A/B = (2/4)/(1/4) = 2, moe_up's B/A = 2, qkv's 1.  An
	 * unweighted list would give 1, 1, 1.  Tolerance 1e-12: the same
	 * product in a different order of the same doubles. */
	{
		gp_model sa = m, sb = m;
		train_result ra, rb;
		const train_op *ia, *ib, *ua, *ub, *qa, *qb;

		sa.layers = sb.layers = 4;
		strcpy(sa.pattern, "M*ME");
		strcpy(sb.pattern, "M*EE");
		c = nano_cfg(1, 1, 8);
		MUST(train_step(&sa, &d, &t, &c, &ra, &e));
		MUST(train_step(&sb, &d, &t, &c, &rb, &e));
		ia = row(&ra, 'M', "in_proj");
		ib = row(&rb, 'M', "in_proj");
		ua = row(&ra, 'E', "moe_up");
		ub = row(&rb, 'E', "moe_up");
		qa = row(&ra, '*', "qkv");
		qb = row(&rb, '*', "qkv");
		ok(ia && ib && ua && ub && qa && qb, "both stacks list in_proj, "
		   "moe_up and qkv");
		if (ia && ib && ua && ub && qa && qb) {
			is_num(ia->fwd / ib->fwd, 2.0, 1e-12,
			       "in_proj: M 2 of 4 layers vs 1 of 4");
			is_num(ia->bwd / ib->bwd, 2.0, 1e-12,
			       "in_proj backward likewise");
			is_num(ub->fwd / ua->fwd, 2.0, 1e-12,
			       "moe_up: E 2 of 4 layers vs 1 of 4");
			is_num(qa->fwd / qb->fwd, 1.0, 1e-12,
			       "qkv: * 1 of 4 layers in both");
		} else {
			ok(0, "in_proj");
			ok(0, "in_proj backward");
			ok(0, "moe_up");
			ok(0, "qkv");
		}
	}
	/* A plain model's rows are its one layer's, as they were: kind -
	 * (no MoE), share 1. */
	{
		gp_model p = fx_gpt(26, 2688, 32, 131072);
		train_result pr;
		int i, plain = 1;

		c = nano_cfg(1, 1, 1);
		MUST(train_step(&p, &d, &t, &c, &pr, &e));
		for (i = 0; i < pr.nops; i++)
			plain &= pr.ops[i].kind == '-' && pr.ops[i].share == 1.0;
		ok(pr.nops > 0 && plain && row(&pr, '-', "qkv") &&
		   row(&pr, '-', "mlp_up"), "a plain model: one dense layer's "
		   "rows, kind -, share 1");
	}

	/* --- what the step refuses for a hybrid stack, naming it ----------- */
	c = nano_cfg(1, 1, 1);
	c.mem.lay.cp = 2;
	c.mem.lay.dp = 4;
	ok(train_step(&m, &d, &t, &c, &tr, &e) == GP_EINVAL &&
	   strstr(e.msg, "cp 2: a hybrid stack") && e.usage,
	   "cp 2 refused, a usage error");
	c = nano_cfg(1, 1, 1);
	c.mem.lay.zero = 3;
	ok(train_step(&m, &d, &t, &c, &tr, &e) == GP_EINVAL &&
	   strstr(e.msg, "zero 3: a hybrid stack") && e.usage,
	   "zero 3 refused");
	c = nano_cfg(1, 1, 1);
	c.eager = 1;
	ok(train_step(&m, &d, &t, &c, &tr, &e) == GP_EINVAL &&
	   strstr(e.msg, "kernels eager: a hybrid stack"),
	   "the eager modules refused");
	/* LoRA adapters: the step and the memory (fit) refuse them in one
	 * wording, naming the method that sets lora_rank */
	c = nano_cfg(1, 1, 1);
	c.mem.lora_rank = 8;
	ok(train_step(&m, &d, &t, &c, &tr, &e) == GP_EINVAL && e.usage &&
	   strstr(e.msg, "method lora or qlora (adapters of lora_rank 8): "
		  "a hybrid stack"), "the step refuses LoRA adapters");
	mem_reserve_default(&rs, 8);
	ok(mem_train(&m, &c.mem, 80e9, &rs, &r, &e) == GP_EINVAL &&
	   e.usage && strstr(e.msg, "method lora or qlora (adapters of "
			     "lora_rank 8): a hybrid stack"),
	   "fit refuses them in the same words");
	c = nano_cfg(1, 1, 1);
	c.mem.recompute = GP_RECOMPUTE_OP;
	ok(train_step(&m, &d, &t, &c, &tr, &e) == GP_EINVAL &&
	   strstr(e.msg, "recompute op: a hybrid stack"),
	   "recompute op refused");
	/* rl's rollouts still refuse it (infer prices it:
	 * t_hybrid_infer.c) */
	ok(model_check_priced(&m, &e) == GP_EINVAL &&
	   strstr(e.msg, "not priced by rl"),
	   "rl refuses a hybrid stack");
	return done();
}
