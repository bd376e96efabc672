/*
 * t_sweep.c - the layout enumeration, its pruning and its shards.
 *
 * What a sweep returns must be what pricing every layout one by one
 * returns: each candidate's result equals train_step's without a memo,
 * the lower bound never exceeds the step it bounds, the ranked list with
 * the bound's pruning equals the list without it, and shards merged
 * equal the whole.  The space's size is counted by hand for a small
 * case.  The round-number device, node and GPT of tests/c/fixture.h.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sweep.h"
#include "fixture.h"
#include "recipes.h"
#include "tap.h"

static train_cfg base_cfg(double gb, double seq)
{
	train_cfg c;

	train_defaults(&c);
	c.mem.recipe = FX_MEGATRON18;
	c.mem.optim = FX_ADAMW;
	c.mem.seq = seq;
	c.global_batch = gb;
	c.capacity = 40.0 * 1073741824.0;
	c.tokens = 1e10;
	c.price = 2.0;
	return c;
}

/* The wide space the comparisons run on. */
static void wide(sweep_space *s, const int *gpus, int ng, const double *mbs,
		 int nmb)
{
	memset(s, 0, sizeof *s);
	s->gpus = gpus;
	s->ngpus = ng;
	s->tp_max = 8;
	s->pp_max = 8;
	s->vpp_max = 2;
	s->zero_mask = 0xf;
	s->mbs = mbs;
	s->nmb = nmb;
	s->rec_mask = 7;
	s->sp_mask = 3;
	s->tpo_mask = 3;
}

/* The narrow space the cache and memo checks walk: one GPU count, TP and
 * PP up to 4, two micro-batch sizes, the recompute modes in rec_mask. */
static void narrow(sweep_space *s, const int *gpus, const double *mbs,
		   int rec_mask)
{
	memset(s, 0, sizeof *s);
	s->gpus = gpus;
	s->ngpus = 1;
	s->tp_max = 4;
	s->pp_max = 4;
	s->mbs = mbs;
	s->nmb = 2;
	s->rec_mask = rec_mask;
}

static int same_result(const train_result *a, const train_result *b)
{
	int i;

	if (a->step != b->step || a->fits != b->fits ||
	    a->mem.total != b->mem.total || a->mfu != b->mfu ||
	    a->tokens_per_s != b->tokens_per_s || a->cost != b->cost)
		return 0;
	for (i = 0; i < TRAIN_NPARTS; i++)
		if (a->part[i] != b->part[i] || a->hidden[i] != b->hidden[i])
			return 0;
	return 1;
}

static int same_top(const sweep_cand *a, int na, const sweep_cand *b, int nb)
{
	int i;

	if (na != nb)
		return 0;
	for (i = 0; i < na; i++)
		if (a[i].index != b[i].index || a[i].score != b[i].score)
			return 0;
	return 1;
}

static int by_score(const void *pa, const void *pb)
{
	const sweep_cand *a = pa, *b = pb;

	if (a->score != b->score)
		return a->score < b->score ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

static train_cache cache, cache2;

/* A where that prices each candidate sweep_run shows it afresh,
 * train_step without a memo, and counts those that differ. */
typedef struct recheck {
	const gp_model *m;
	const roof_device *d;
	const gp_topo *t;
	const train_cfg *base;
	long seen, differ;
} recheck;

static int recheck_where(void *ud, const sweep_cand *k)
{
	recheck *rc = ud;
	train_cfg c = *rc->base;
	train_result r;
	gp_error err;

	c.mem.lay.tp = k->tp;
	c.mem.lay.pp = k->pp;
	c.mem.lay.cp = k->cp;
	c.mem.lay.ep = k->ep;
	c.mem.lay.dp = k->dp;
	c.mem.lay.zero = k->zero;
	c.mem.lay.micro_batch = k->micro_batch;
	c.mem.lay.vpp = k->vpp;
	c.mem.lay.schedule = k->vpp > 1 ? GP_SCHED_INTERLEAVED :
		GP_SCHED_1F1B;
	c.mem.lay.sp = k->sp;
	c.mem.lay.hsdp = k->hybrid;
	c.mem.recompute = k->recompute;
	c.tp_overlap = k->tp_overlap;
	c.overlap_grad_reduce = k->overlap_grad_reduce;
	rc->seen++;
	if (train_step(rc->m, rc->d, rc->t, &c, &r, &err) != GP_OK ||
	    r.step != k->step || r.tokens_per_s != k->tokens_per_s ||
	    r.mfu != k->mfu || r.cost != k->cost ||
	    r.mem.total != k->mem_total)
		rc->differ++;
	return 1;
}

int main(void)
{
	static const int g8[] = {8}, gw[] = {8, 16, 32};
	static const double mb2[] = {1, 2}, mb3[] = {1, 2, 4};
	gp_model m = fx_gpt(4, 1024, 8, 32000), w = fx_gpt(24, 2048, 16, 50257);
	gp_topo t = fx_selene();
	roof_device d;
	train_cfg base = base_cfg(16, 2048), bw = base_cfg(64, 2048), c;
	sweep_space s;
	sweep_iter it;
	sweep_cand cand, top[5], top2[5], all[15];
	sweep_stats st, st2;
	train_result r1, r2;
	gp_error err;
	int n, n2, i, k, mism = 0, over = 0, timed = 0;
	long count = 0;
	double lb;

	plan(54);
	fx_a100(&d);

	/* Space of fx_gpt(4 layers, 8 heads) on 8 GPUs, tp <= 8, pp <= 4,
	 * zero {0,1}, micro-batch {1,2}, no recompute, SP where tp > 1:
	 * the odometer visits tp 1..8 x pp 1..4 x zero 2 x mb 2 = 128
	 * combinations; dividing: tp in {1,2,4,8} (8 % tp, heads % tp),
	 * pp with (8/tp) % pp == 0 and pp <= 4: tp1 {1,2,4}, tp2 {1,2,4},
	 * tp4 {1,2}, tp8 {1} = 9 splits, each with dp x mb <= 16 dividing
	 * the global batch 16: 9 x 2 x 2 = 36 layouts. */
	memset(&s, 0, sizeof s);
	s.gpus = g8;
	s.ngpus = 1;
	s.tp_max = 8;
	s.pp_max = 4;
	s.zero_mask = 3;
	s.mbs = mb2;
	s.nmb = 2;
	ok(sweep_begin(&it, &m, &t, &base, &s, &err) == GP_OK, "begin");
	while (sweep_next(&it, &c, &cand))
		count++;
	is_int(it.st.space, 128, "combinations visited: 8 x 4 x 2 x 2");
	is_int(it.st.divided, 36, "layouts: 9 splits x zero 2 x mb 2");
	is_int(count, 36, "the iterator yields each layout once");

	/* Ulysses groups beside CP (ok_ulysses): fx_gpt's 8 heads and 8 kv
	 * heads on 8 GPUs, tp <= 8, pp 1, no CP, ulysses <= 8, one zero
	 * stage and micro-batch.  A group u divides a TP rank's 8 / tp heads
	 * (and kv heads, as many) and its 8 / tp ranks: tp 1 {1, 2, 4, 8},
	 * tp 2 {1, 2, 4}, tp 4 {1, 2}, tp 8 {1} = 10 layouts; at seq 4 (u
	 * <= seq: each rank holds seq / u tokens) tp 1 loses 8: 9.  Each
	 * Ulysses layout is the engine's CP group of u with cp_ulysses, cp 1
	 * in the candidate and dp = 8 / (tp u). */
	{
		sweep_space su;
		train_cfg b4 = base_cfg(16, 4);
		long nu = 0, n4 = 0;
		int good = 1;

		memset(&su, 0, sizeof su);
		su.gpus = g8;
		su.ngpus = 1;
		su.tp_max = 8;
		su.ulysses_max = 8;
		MUST(sweep_begin(&it, &m, &t, &base, &su, &err));
		while (sweep_next(&it, &c, &cand)) {
			nu++;
			good = good && cand.cp == 1 &&
				c.mem.cp_ulysses == (cand.ulysses > 1) &&
				c.mem.lay.cp == cand.ulysses &&
				cand.dp == 8 / cand.tp / cand.ulysses &&
				c.mem.lay.dp == cand.dp;
		}
		is_int(nu, 10, "ulysses <= 8: 4 + 3 + 2 + 1 layouts");
		ok(good, "a Ulysses layout: the CP group of u, cp_ulysses, "
		   "cp 1, dp 8 / (tp u)");
		MUST(sweep_begin(&it, &m, &t, &b4, &su, &err));
		while (sweep_next(&it, &c, &cand))
			n4++;
		is_int(n4, 9, "seq 4: no group of 8");
	}

	/* Bounds far past what the model, node and GPU count allow are
	 * clamped before enumerating (a --vpp-max of a million took 26 s):
	 * the same model on 8 GPUs, every split's bound 10^6, CP and VPP
	 * free.  Clamped: tp min(8 node, 8 heads, 8 GPUs) = 8, pp min(4
	 * layers, 8) = 4, cp min(seq 2048 / 2, 8 GPUs) = 8, ep 1 (dense),
	 * vpp 4 layers / 2 = 2; x zero 2 x mb 2: 8 x 4 x 8 x 2 x 2 x 2 =
	 * 2048 combinations.  The layouts are those of the bounds written
	 * at the clamp (same count, same indices: the clamp drops only
	 * values level_ok refuses). */
	{
		sweep_space s3 = s;
		long c1 = 0, c2 = 0, isum1 = 0, isum2 = 0;

		s3.tp_max = s3.pp_max = s3.cp_max = s3.ep_max =
			s3.vpp_max = 1000000;
		ok(sweep_begin(&it, &m, &t, &base, &s3, &err) == GP_OK,
		   "begin, bounds 10^6");
		while (sweep_next(&it, &c, &cand)) {
			c1++;
			isum1 += cand.index * (cand.cp + 7L * cand.vpp);
		}
		is_int(it.st.space, 2048, "clamped: 8 x 4 x 8 x 2 x 2 x 2");
		s3.tp_max = 8;
		s3.pp_max = 4;
		s3.cp_max = 8;
		s3.ep_max = 1;
		s3.vpp_max = 2;
		MUST(sweep_begin(&it, &m, &t, &base, &s3, &err));
		while (sweep_next(&it, &c, &cand)) {
			c2++;
			isum2 += cand.index * (cand.cp + 7L * cand.vpp);
		}
		ok(c1 == c2 && isum1 == isum2 && c1 > 36,
		   "the clamped bounds yield the same layouts at the same "
		   "indices");
	}

	/* The grid's size never overflows: 64 GPU counts up to 2^24 on a
	 * model of 2^24 layers and experts, every bound 2^24, seq 2^25,
	 * 32 micro-batches, every ZeRO stage, recompute, SP and overlap:
	 * 2^6 counts x tp 8 (node) x pp 2^24 x cp 2^24 (seq/2, GPUs) x
	 * ep 2^24 x vpp 2^23 (layers / 2) x zero 4 x mb 32 x rec 3 x
	 * sp 2 x tpo 2 x dpo 2 = 3 x 2^114, exact in a double (a long
	 * wrapped negative; only sweep_begin runs, nothing enumerates). */
	{
		static int gbig[64];
		static double mb32[32];
		gp_model big = fx_gpt(1 << 24, 1024, 8, 32000);
		train_cfg bb = base_cfg(16, 33554432.0);
		sweep_space s4;

		for (i = 0; i < 64; i++)
			gbig[i] = (1 << 24) - i;
		for (i = 0; i < 32; i++)
			mb32[i] = i + 1;
		big.moe.experts = 1 << 24;
		big.moe.top_k = 1;
		big.moe.ffn_hidden = 1024;
		memset(&s4, 0, sizeof s4);
		s4.gpus = gbig;
		s4.ngpus = 64;
		s4.tp_max = s4.pp_max = s4.cp_max = s4.ep_max =
			s4.vpp_max = 1 << 24;
		s4.zero_mask = 15;
		s4.rec_mask = 7;
		s4.sp_mask = s4.tpo_mask = s4.dpo_mask = 3;
		s4.mbs = mb32;
		s4.nmb = 32;
		ok(sweep_begin(&it, &big, &t, &bb, &s4, &err) == GP_OK &&
		   it.st.space == ldexp(3.0, 114),
		   "a grid of 3 x 2^114 combinations, not a wrapped long");
	}

	/* Every candidate of the wide space: the memo's result is the
	 * plain one, and the bound is below the step. */
	wide(&s, gw, 3, mb3, 3);
	ok(sweep_begin(&it, &w, &t, &bw, &s, &err) == GP_OK, "begin wide");
	memset(&cache, 0, sizeof cache);
	while (sweep_next(&it, &c, &cand)) {
		int e1 = train_step(&w, &d, &t, &c, &r1, &err);
		int e2 = train_step_cached(&w, &d, &t, &c, &cache, &r2, &err);

		if (e1 != e2 || (e1 == GP_OK && !same_result(&r1, &r2)))
			mism++;
		if (e1 == GP_OK) {
			timed++;
			if (train_bound(&w, &d, &t, &c, &cache, &lb, &err) ||
			    !(lb <= r1.step) || !(lb > 0))
				over++;
		}
	}
	ok(timed > 1000, "the wide space times more than 1000 layouts");
	is_int(mism, 0, "train_step_cached == train_step on every layout");
	is_int(over, 0, "0 < train_bound <= step on every layout");
	ok(cache.hits > cache.misses, "the memo is hit more than missed");

	/* The memo's keys are the structs the priced functions read (train.h
	 * train_lkey for a layer's costs, memory.h gp_acts_key for the saved
	 * activations): a gated RMSNorm variant of the wide model, each
	 * layout priced seven ways in a row through one memo (fused; eager;
	 * eager with a 2 ms host floor, which binds; dropout; unfused
	 * attention; forward only; 4-byte activations), each equal to
	 * train_step's -- a memo that compared part of its key would hand
	 * one variant another's costs. */
	{
		gp_model g = w;
		int v, differ = 0, floor = 0, other = 0;

		g.ffn_gated = 1;
		g.norm_params = g.hidden;
		g.ffn_hidden = 5632;
		mism = 0;
		timed = 0;
		wide(&s, gw, 3, mb3, 3);
		ok(sweep_begin(&it, &g, &t, &bw, &s, &err) == GP_OK,
		   "begin wide, gated");
		memset(&cache, 0, sizeof cache);
		while (sweep_next(&it, &c, &cand)) {
			double st0 = 0;

			for (v = 0; v < 7; v++) {
				train_cfg cv = c;
				int e1, e2;

				cv.eager = v == 1 || v == 2;
				cv.host_op_time = v == 2 ? 2e-3 : c.host_op_time;
				cv.mem.dropout = v == 3;
				cv.mem.flash = v != 4;
				cv.forward_only = v == 5;
				cv.mem.act_bytes = v == 6 ? 4.0 : 0.0;
				e1 = train_step(&g, &d, &t, &cv, &r1, &err);
				e2 = train_step_cached(&g, &d, &t, &cv, &cache,
						       &r2, &err);
				if (e1 != e2 || (e1 == GP_OK &&
						 !same_result(&r1, &r2)))
					mism++;
				if (e1 != GP_OK || !r1.fits)
					continue;
				timed++;
				if (v == 0)
					st0 = r1.step;
				if (v == 1 && r1.step > st0)
					differ++;
				if (v == 2 && r1.step > st0 * 1.5)
					floor++;
				if (v > 2 && r1.step != st0)
					other++;
			}
		}
		is_int(mism, 0, "seven variants of each layout: cached == "
		       "plain");
		ok(differ > 100 && floor > 100,
		   "the eager kernels and the floor change the step");
		ok(other > 400, "dropout, unfused attention, forward only and "
		   "4-byte activations change it");
	}

	/* What sweep_run prices itself, each layout after the one before
	 * (the ZeRO stage and both overlaps innermost, sharing the step's
	 * phase), is what train_step gives each alone; with time_all every
	 * layout is priced whole. */
	{
		recheck rc;
		sweep_space s2;

		memset(&rc, 0, sizeof rc);
		rc.m = &w;
		rc.d = &d;
		rc.t = &t;
		rc.base = &bw;
		wide(&s2, gw, 3, mb3, 3);
		s2.dpo_mask = 3;
		s2.no_bound = 1;
		s2.time_all = 1;
		memset(&cache, 0, sizeof cache);
		/* The space holds 12,744 layouts (counted by enumerating
		 * it); over 1,000 of them fit 40 GiB and reach the where. */
		ok(sweep_run(&w, &d, &t, &bw, &s2, SWEEP_TIME, &cache,
			     recheck_where, &rc, top, 5, &n, &st, &err) ==
		   GP_OK && rc.seen > 1000 && rc.differ == 0 &&
		   st.timed == st.divided - st.errors && st.timed > st.fitting,
		   "sweep_run's own pricing == train_step on every layout");
	}

	/* A brief sweep finishes its split's first ZeRO stage without the
	 * largest component (train.c phase_mem_price: a sweep reads the
	 * total and the fit alone); a full step on that phase after it
	 * (train_step_next REUSE, no BRIEF: the sweep's own slots) sets it
	 * then, from the same bytes.  w on 8 GPUs, tp 1, pp 1, no
	 * recompute, mb 2 then 4 (a sweep prices its first layout whole:
	 * the brief split is the second phase's), ZeRO 0..3 (the first, 0,
	 * is the split's): each memory of the mb-4 phase is train_step's,
	 * its largest component included.  Not every largest is the
	 * weights (index 0, what the scan starts from): 4 x 2,048 tokens'
	 * activations over 24 layers outweigh the states, so a largest
	 * left unset shows (without phase_mem's mem_largest, ZeRO 0's
	 * largest reads 0 where train_step's is the activations, 6). */
	{
		static const int g8b[] = {8};
		static const double mb24[] = {2, 4};
		sweep_space s5;
		int z, same = 1, other = 0;

		memset(&s5, 0, sizeof s5);
		s5.gpus = g8b;
		s5.ngpus = 1;
		s5.tp_max = 1;
		s5.pp_max = 1;
		s5.zero_mask = 0xf;
		s5.mbs = mb24;
		s5.nmb = 2;
		s5.rec_mask = 1u << GP_RECOMPUTE_NONE;
		s5.no_bound = 1;
		s5.time_all = 1;
		memset(&cache, 0, sizeof cache);
		MUST(sweep_run(&w, &d, &t, &bw, &s5, SWEEP_TIME, &cache, NULL,
			       NULL, top, 5, &n, &st, &err));
		for (z = 0; z < 4; z++) {
			c = bw;
			c.mem.lay.tp = c.mem.lay.pp = 1;
			c.mem.lay.dp = 8;
			c.mem.lay.zero = z;
			c.mem.lay.micro_batch = 4;
			c.mem.recompute = GP_RECOMPUTE_NONE;
			if (train_step_next(&w, &d, &t, &c, &cache,
					    TRAIN_NEXT_REUSE, NULL, NULL, &r1,
					    &err) != GP_OK ||
			    train_step(&w, &d, &t, &c, &r2, &err) != GP_OK ||
			    r1.mem.largest != r2.mem.largest ||
			    r1.mem.total != r2.mem.total ||
			    !same_result(&r1, &r2))
				same = 0;
			other += r2.mem.largest != GP_MEM_WEIGHTS;
		}
		ok(same && other > 0 && st.divided == 8,
		   "a full step after a brief sweep on its phase: train_step's "
		   "memory, the largest component included");
	}

	/* What a split keeps across its phases (train.h TRAIN_NEXT_SPLIT:
	 * the config's checks, the placement, the ends' and layers' ZeRO
	 * collectives, the post memo's key): sweep_run under FSDP with
	 * hybrid sharding searched on 16 and 32 GPUs (two nodes and four:
	 * the hybrid level, inside the split's levels, moves the sharding
	 * its value is compared for) is train_step on each fitting layout
	 * alone (recheck_where); and on 8 and 16 GPUs of a system with no
	 * NICs, where every 16-GPU layout is refused at its placement -- a
	 * split's refusal, which its later phases must make again -- the
	 * same layouts are refused as train_step refuses alone, the first
	 * with the same message. */
	{
		static const int g1632[] = {16, 32}, g816[] = {8, 16};
		gp_topo tn = t;
		train_cfg bf = bw;
		recheck rc;
		sweep_space s2;
		long refused = 0;
		char first[sizeof err.msg] = "";

		bf.fsdp = 1;
		/* With the parameter gathers' overlap on, the ZeRO blocks of
		 * the DP overlap off and on differ only where FSDP's backward
		 * reads overlap_grad_reduce alone (train_int.h block_set): a
		 * set shared by "either overlap on" priced on as off. */
		bf.overlap_param_gather = 1;
		memset(&rc, 0, sizeof rc);
		rc.m = &w;
		rc.d = &d;
		rc.t = &t;
		rc.base = &bf;
		wide(&s2, g1632, 2, mb3, 3);
		s2.hybrid_mask = 3;
		s2.dpo_mask = 3;
		s2.no_bound = 1;
		s2.time_all = 1;
		MUST(sweep_begin(&it, &w, &t, &bf, &s2, &err));
		while (sweep_next(&it, &c, &cand))
			refused += train_step(&w, &d, &t, &c, &r1, &err) !=
				GP_OK;
		memset(&cache, 0, sizeof cache);
		/* refused: hybrid sharding at ZeRO 0 and 1 (layout.c
		 * check_hsdp), a refusal of a phase's first layout */
		ok(sweep_run(&w, &d, &t, &bf, &s2, SWEEP_TIME, &cache,
			     recheck_where, &rc, top, 5, &n, &st, &err) ==
		   GP_OK && rc.seen > 500 && rc.differ == 0 &&
		   refused > 0 && st.errors == refused,
		   "a split's phases, hybrid sharding searched: sweep_run == "
		   "train_step on every fitting layout, the same refused");
		refused = 0;
		tn.nics = 0;
		wide(&s2, g816, 2, mb3, 3);
		s2.no_bound = 1;
		s2.time_all = 1;
		MUST(sweep_begin(&it, &w, &tn, &bf, &s2, &err));
		while (sweep_next(&it, &c, &cand))
			if (train_step(&w, &d, &tn, &c, &r1, &err) != GP_OK &&
			    refused++ == 0)
				snprintf(first, sizeof first, "%s", err.msg);
		memset(&cache, 0, sizeof cache);
		MUST(sweep_run(&w, &d, &tn, &bf, &s2, SWEEP_TIME, &cache, NULL,
			       NULL, top, 5, &n, &st, &err));
		ok(refused > 100 && st.errors == refused &&
		   strcmp(st.error.msg, first) == 0 &&
		   strstr(first, "no NICs") != NULL,
		   "a split refused at its placement: every layout of it "
		   "refused, the first refusal's message the same");
	}

	/* The memory's ZeRO split on the recipes whose states take their
	 * own branches (LoRA on a 16-bit and a 4-bit base, DeepSpeed's
	 * pipeline with its bf16 optimizer, a paged optimizer, the step in
	 * the backward): each layout priced through one memo with its four
	 * ZeRO stages in a row (the memory split kept across them) equals
	 * train_step alone. */
	{
		static const int g16[] = {16};
		int variant, z, seen = 0;

		mism = 0;
		for (variant = 0; variant < 5; variant++) {
			train_cfg bv = bw;

			if (variant == 0 || variant == 1) {
				bv.mem.lora_rank = 16;
				bv.mem.lora_targets = GP_LORA_Q | GP_LORA_V;
				if (variant == 1)
					bv.mem.base.bits = 4;
			} else if (variant == 2) {
				bv.mem.pipe = GP_PIPE_DEEPSPEED;
				bv.mem.recipe = FX_DSBF16;
			} else if (variant == 3) {
				bv.mem.paged_optimizer = 1;
			} else {
				bv.mem.grads_in_bwd = 1;
			}
			narrow(&s, g16, mb2, 7);
			ok(sweep_begin(&it, &w, &t, &bv, &s, &err) == GP_OK,
			   "begin a recipe variant");
			memset(&cache, 0, sizeof cache);
			while (sweep_next(&it, &c, &cand)) {
				for (z = 0; z < 4; z++) {
					int e1, e2;

					c.mem.lay.zero = z;
					e1 = train_step(&w, &d, &t, &c, &r1, &err);
					e2 = train_step_cached(&w, &d, &t, &c,
							       &cache, &r2,
							       &err);
					if (e1 != e2 || (e1 == GP_OK &&
					    (!same_result(&r1, &r2) ||
					     memcmp(r1.mem.bytes, r2.mem.bytes,
						    sizeof r1.mem.bytes) != 0)))
						mism++;
					seen += e1 == GP_OK;
				}
			}
		}
		/* Per variant 9 splits of 16 GPUs (tp, pp in {1, 2, 4}; the
		 * 16 heads and 24 layers take each) x 2 micro-batches (dp x
		 * mb divides the batch of 64) x 3 recompute policies x 4 ZeRO
		 * stages = 216 configs, 1,080 for the five, and none of them
		 * is refused: the comparison above covers them all. */
		is_int(seen, 1080, "the recipe variants price every layout");
		is_int(mism, 0, "memory split by ZeRO stage == train_step on "
		       "LoRA, QLoRA, DeepSpeed pipeline, paged, in-backward");
	}

	/* The reductions, gathers and optimizer step of a ZeRO stage are
	 * kept across phases (train.c phase_post, train_phase.h
	 * train_post_memo): each layout's four ZeRO stages priced through
	 * one memo under configs in a row, each differing from the one
	 * before in one of what picks those terms -- FSDP semantics,
	 * all-reduced ZeRO gradients, an optimizer of one state (other
	 * bytes per parameter), hybrid sharding over the node's 8 GPUs,
	 * whole gradients at ZeRO 3, and hybrid sharding beside them (its
	 * reduce-scatter then all-reduce across the replicas) -- each equal
	 * to train_step alone.  A key missing one of them would hand a
	 * config the one before's terms; each variant does move some step,
	 * so a stale term would show. */
	{
		static const int g32[] = {32};
		/* plain P, fsdp F, all-reduce A, one state S, hybrid H,
		 * whole gradients G: P F P A P S P H P G GH G P */
		static const char *const seq[] = {"", "F", "", "A", "", "S",
			"", "H", "", "G", "GH", "G", ""};
		static const char kinds[] = "FASHG";
		int z, moved[6] = {0, 0, 0, 0, 0, 0}, seen = 0, all6 = 1;

		mism = 0;
		narrow(&s, g32, mb2, 3);
		ok(sweep_begin(&it, &w, &t, &bw, &s, &err) == GP_OK,
		   "begin the ZeRO-term variants");
		memset(&cache, 0, sizeof cache);
		while (sweep_next(&it, &c, &cand)) {
			for (z = 0; z < 4; z++) {
				double st0 = 0;

				for (k = 0; k < 13; k++) {
					train_cfg cv = c;
					const char *v = seq[k];
					int e1, e2;

					cv.mem.lay.zero = z;
					cv.fsdp = strchr(v, 'F') != NULL;
					cv.zero_allreduce = strchr(v, 'A') != NULL;
					if (strchr(v, 'S'))
						cv.mem.optim.states = 1;
					cv.mem.lay.hsdp = strchr(v, 'H') ? 8 : 0;
					cv.mem.grads_whole = strchr(v, 'G') &&
						z == 3;
					e1 = train_step(&w, &d, &t, &cv, &r1,
							&err);
					e2 = train_step_cached(&w, &d, &t, &cv,
							       &cache, &r2,
							       &err);
					if (e1 != e2 || (e1 == GP_OK &&
					    !same_result(&r1, &r2)))
						mism++;
					if (e1 != GP_OK)
						continue;
					seen++;
					if (!*v)
						st0 = r1.step;
					else if (r1.step != st0)
						moved[strchr(kinds, *v) - kinds + 1]++;
				}
			}
		}
		for (z = 1; z < 6; z++)
			all6 &= moved[z] > 0;
		ok(seen > 500 && all6, "each ZeRO-term variant moves some "
		   "step");
		is_int(mism, 0, "ZeRO terms kept across phases: fsdp, "
		       "zero_allreduce, optimizer states, hsdp, grads_whole "
		       "in a row == train_step");
	}

	/* The ZeRO-3 layer collectives of both layer kinds (train_stage.c
	 * kind_colls) are priced once per phase, but DeepSpeed's bucket
	 * passes in them (ds_bucket_time) count at ZeRO 2 only.  With
	 * ds_buckets on, each layout priced at ZeRO 2 or 3 (in turn), then
	 * at ZeRO 3 in the same phase, then with hybrid sharding, through
	 * one memo, equals train_step alone: ZeRO 3 right after ZeRO 2 in
	 * a phase took ZeRO 2's bucket passes (0.347 s for 0.324 s on tp 1
	 * pp 1 dp 32 mb 1). */
	{
		static const int g32[] = {32};
		int turn = 0;

		mism = 0;
		timed = 0;
		narrow(&s, g32, mb2, 3);
		ok(sweep_begin(&it, &w, &t, &bw, &s, &err) == GP_OK,
		   "begin the layer-collective variants");
		memset(&cache, 0, sizeof cache);
		while (sweep_next(&it, &c, &cand)) {
			for (k = 0; k < 3; k++) {
				train_cfg cv = c;
				int e1, e2;

				cv.ds_buckets = 1;
				cv.mem.lay.zero = k == 0 ? 2 + turn % 2 : 3;
				cv.mem.lay.hsdp = k == 2 ? 8 : 0;
				e1 = train_step(&w, &d, &t, &cv, &r1, &err);
				e2 = train_step_cached(&w, &d, &t, &cv, &cache,
						       &r2, &err);
				if (e1 != e2 || (e1 == GP_OK &&
						 !same_result(&r1, &r2)))
					mism++;
				timed += e1 == GP_OK;
			}
			turn++;
		}
		ok(timed > 100, "the layer-collective variants price layouts");
		is_int(mism, 0, "ZeRO-3 layer collectives kept across phases: "
		       "ZeRO 2 and 3 in turn, hybrid sharding == train_step");
	}

	/* skip_unfit: memory only for what does not fit. */
	c = bw;
	c.mem.lay.tp = 1;
	c.mem.lay.dp = 8;
	c.capacity = 1e9;
	c.skip_unfit = 1;
	ok(train_step_cached(&w, &d, &t, &c, &cache, &r1, &err) == GP_OK &&
	   !r1.fits && r1.step == 0 && r1.mem.total > 1e9,
	   "skip_unfit: an unfit layout returns its memory, no time");

	/* Pruning changes nothing that is kept: for each key, and under a
	 * deadline and a budget, the list with the bound is the list
	 * without it; and the bound prunes something. */
	for (k = 0; k < 4; k++) {
		static const sweep_key keys[] = {SWEEP_TIME, SWEEP_COST,
			SWEEP_PER_DOLLAR, SWEEP_GPUS};
		char name[96];

		wide(&s, gw, 3, mb3, 3);
		s.no_bound = 1;
		memset(&cache, 0, sizeof cache);
		MUST(sweep_run(&w, &d, &t, &bw, &s, keys[k], &cache, NULL, NULL,
			       top, 5, &n, &st, &err));
		s.no_bound = 0;
		memset(&cache2, 0, sizeof cache2);
		MUST(sweep_run(&w, &d, &t, &bw, &s, keys[k], &cache2, NULL,
			       NULL,
			       top2, 5, &n2, &st2, &err));
		snprintf(name, sizeof name, "key %s: top 5 with the bound == "
			 "without (%ld pruned)", sweep_key_name(keys[k]),
			 st2.bounded);
		ok(n == 5 && same_top(top, n, top2, n2), name);
		snprintf(name, sizeof name, "key %s: the bound prunes",
			 sweep_key_name(keys[k]));
		ok(st2.bounded > 0 && st.bounded == 0, name);
	}
	wide(&s, gw, 3, mb3, 3);
	s.no_bound = 1;
	memset(&cache, 0, sizeof cache);
	MUST(sweep_run(&w, &d, &t, &bw, &s, SWEEP_TIME, &cache, NULL, NULL,
		       top, 5,
		       &n, &st, &err));
	/* A deadline between the fastest and the fifth: a list of fewer. */
	s.max_time = top[2].train_time * 1.0000001;
	MUST(sweep_run(&w, &d, &t, &bw, &s, SWEEP_COST, &cache, NULL, NULL,
		       top, 5,
		       &n, &st, &err));
	s.no_bound = 0;
	MUST(sweep_run(&w, &d, &t, &bw, &s, SWEEP_COST, &cache, NULL, NULL,
		       top2,
		       5, &n2, &st2, &err));
	ok(n >= 3 && same_top(top, n, top2, n2),
	   "cheapest under a deadline: the same with the bound");
	for (i = 0, k = 1; i < n; i++)
		k &= top[i].train_time <= s.max_time;
	ok(k, "every kept layout meets the deadline");

	/* Shards: 3 shards' top 5, merged by score, are the whole top 5. */
	wide(&s, gw, 3, mb3, 3);
	memset(&cache, 0, sizeof cache);
	MUST(sweep_run(&w, &d, &t, &bw, &s, SWEEP_TIME, &cache, NULL, NULL,
		       top, 5,
		       &n, &st, &err));
	count = 0;
	for (k = 0, i = 0; k < 3; k++) {
		int nk;

		s.shard_k = k;
		s.shard_n = 3;
		MUST(sweep_run(&w, &d, &t, &bw, &s, SWEEP_TIME, &cache, NULL,
			       NULL,
			       all + i, 5, &nk, &st2, &err));
		i += nk;
		count += st2.divided;
	}
	qsort(all, (size_t)i, sizeof all[0], by_score);
	ok(same_top(top, n, all, i < 5 ? i : 5), "3 shards merged == whole");
	is_int(count, st.divided, "the shards split the layouts");
	s.shard_n = 0;

	/* Deterministic: the same run twice. */
	MUST(sweep_run(&w, &d, &t, &bw, &s, SWEEP_TIME, &cache, NULL, NULL,
		       top2,
		       5, &n2, &st2, &err));
	ok(same_top(top, n, top2, n2), "the same sweep twice, the same list");

	/* Refusals. */
	s.shard_k = 3;
	s.shard_n = 3;
	ok(sweep_run(&w, &d, &t, &bw, &s, SWEEP_TIME, &cache, NULL, NULL, top,
		     5, &n, &st, &err) == GP_EINVAL &&
	   strstr(err.msg, "shard 3/3") != NULL, "shard K out of range");
	s.shard_k = 0;
	s.shard_n = SWEEP_SHARDS_MAX + 1;
	ok(sweep_run(&w, &d, &t, &bw, &s, SWEEP_TIME, &cache, NULL, NULL, top,
		     5, &n, &st, &err) == GP_EINVAL &&
	   strstr(err.msg, "at most 65536") != NULL,
	   "more shards than SWEEP_SHARDS_MAX (65536) refused");
	s.shard_n = 0;
	s.max_time = 1;
	c = bw;
	c.tokens = 0;
	ok(sweep_run(&w, &d, &t, &c, &s, SWEEP_TIME, &cache, NULL, NULL, top,
		     5, &n, &st, &err) == GP_EINVAL &&
	   strstr(err.msg, "tokens") != NULL, "a deadline needs tokens");
	return done();
}
