/*
 * sweep.c - the layout enumeration and the top-k (see sweep.h).
 */
#include "sweep.h"

#include <math.h>
#include <string.h>

static const char *const key_names[SWEEP_KEYS] = {
	"time", "cost", "per_dollar", "mfu", "gpus"
};

const char *sweep_key_name(sweep_key k)
{
	return GP_NAME_OF(key_names, SWEEP_KEYS, k);
}

int sweep_key_parse(const char *s, sweep_key *out, gp_error *err)
{
	int v;

	if (gp_parse_name(s, key_names, SWEEP_KEYS, &v, "sweep key", err))
		return GP_EINVAL;
	*out = (sweep_key)v;
	return GP_OK;
}

static int dflt(int v)
{
	return v > 0 ? v : 1;
}

static int popcount(unsigned v)
{
	int n = 0;

	for (; v; v >>= 1)
		n += (int)(v & 1u);
	return n;
}

/* The levels of the enumeration, outermost first.  The ZeRO stage and
 * the two overlaps are innermost: layouts that differ only in them share
 * the training step's phase (train.c), so each of them pays only for
 * what it changes. */
enum { LV_G, LV_TP, LV_PP, LV_CP, LV_EP, LV_MB, LV_R, LV_V, LV_SP, LV_Z,
       LV_TPO, LV_DPO, LV_N };

static void level_range(const sweep_iter *it, int lv, int *lo, int *hi);

int sweep_begin(sweep_iter *it, const gp_model *m, const gp_topo *t,
		const train_cfg *base, const sweep_space *s, gp_error *err)
{
	int i;

	if (!it || !m || !t || !base || !s)
		return gp_fail(err, "sweep: missing argument");
	if (model_check(m, err) || comm_topo_check(t, err))
		return GP_EINVAL;
	if (!s->gpus || s->ngpus < 1)
		return gp_fail(err, "sweep: no GPU counts");
	for (i = 0; i < s->ngpus; i++)
		if (gp_check_count(s->gpus[i], 1, "gpus", err))
			return GP_EINVAL;
	if (gp_check_count(s->tp_max, 0, "tp_max", err) ||
	    gp_check_count(s->pp_max, 0, "pp_max", err) ||
	    gp_check_count(s->cp_max, 0, "cp_max", err) ||
	    gp_check_count(s->ep_max, 0, "ep_max", err) ||
	    gp_check_count(s->vpp_max, 0, "vpp_max", err) ||
	    gp_check_count(s->nmb, 0, "micro-batch count", err))
		return GP_EINVAL;
	for (i = 0; i < s->nmb; i++)
		if (gp_check_pos(s->mbs[i], "micro_batch", err))
			return GP_EINVAL;
	if (gp_check_nonneg(s->max_time, "deadline", err) ||
	    gp_check_nonneg(s->max_cost, "budget", err))
		return GP_EINVAL;
	if ((s->max_time > 0 || s->max_cost > 0) && !(base->tokens > 0))
		return gp_fail(err, "sweep: a deadline or budget needs the "
			       "tokens to train on");
	if (s->max_cost > 0 && !(base->price > 0))
		return gp_fail(err, "sweep: a budget needs a price");
	if (s->shard_n < 0 || (s->shard_n > 0 &&
			       (s->shard_k < 0 || s->shard_k >= s->shard_n)))
		return gp_fail(err, "shard %d/%d: K must be in 0..N-1",
			       s->shard_k, s->shard_n);
	if (s->shard_n > SWEEP_SHARDS_MAX)
		return gp_fail(err, "shard count %d: at most %d",
			       s->shard_n, SWEEP_SHARDS_MAX);
	if (!(base->global_batch > 0))
		return gp_fail(err, "sweep: a global batch is needed (the "
			       "micro-batches per step follow from it)");
	if ((s->zero_mask & ~15u) || (s->rec_mask & ~7u) || s->sp_mask < 0 ||
	    s->sp_mask > 3 || s->tpo_mask < 0 || s->tpo_mask > 3 ||
	    s->dpo_mask < 0 || s->dpo_mask > 3)
		return gp_fail(err, "sweep: zero_mask, rec_mask, sp_mask, "
			       "tpo_mask or dpo_mask out of range");
	memset(it, 0, sizeof *it);
	it->m = m;
	it->base = base;
	it->s = s;
	it->G = t->gpus_per_node;
	it->zm = s->zero_mask ? s->zero_mask : 1u;
	it->rm = s->rec_mask ? s->rec_mask : 1u;
	it->spm = s->sp_mask ? s->sp_mask : 2;
	it->tpom = s->tpo_mask ? s->tpo_mask : (base->tp_overlap ? 2 : 1);
	it->dpom = s->dpo_mask ? s->dpo_mask :
		(base->overlap_grad_reduce ? 2 : 1);
	/* The grid: the product of the dimensions' sizes, each split
	 * clamped (split_cap), in floating point: 64 GPU counts x 2^24 CP
	 * x ... passes 2^63, never DBL_MAX. */
	it->st.space = (double)s->ngpus * popcount(it->zm) *
		(s->nmb > 0 ? s->nmb : 1) * popcount(it->rm) *
		popcount((unsigned)it->spm) * popcount((unsigned)it->tpom) *
		popcount((unsigned)it->dpom);
	{
		static const int splits[] = {LV_TP, LV_PP, LV_CP, LV_EP,
					     LV_V};

		for (i = 0; i < 5; i++) {
			int lo, hi;

			level_range(it, splits[i], &lo, &hi);
			it->st.space *= hi;
		}
	}
	return GP_OK;
}

static int imin(int a, int b)
{
	return a < b ? a : b;
}

/* The most a split can be that level_ok could ever pass, given the
 * model, the node and the largest GPU count: the bound given (max, >= 1)
 * clamped to it, so that `--vpp-max 1000000` enumerates 1..layers/2 and
 * not a million values per layout (a search must answer in well under a
 * second whatever the bounds).  Each clamp is level_ok's own test: TP
 * divides the node and the heads, PP is at most the layers, CP splits
 * the sequence into 2 cp chunks, EP divides the experts (1 when dense),
 * VPP x PP (PP >= 2) divides the layers; each divides a GPU count. */
static int split_cap(const sweep_iter *it, int lv, int max)
{
	const gp_model *m = it->m;
	int i, n = 1;
	double half;

	for (i = 0; i < it->s->ngpus; i++)
		if (it->s->gpus[i] > n)
			n = it->s->gpus[i];
	switch (lv) {
	case LV_TP:
		return imin(max, imin(n, imin(it->G, m->heads)));
	case LV_PP:
		return imin(max, imin(n, m->layers));
	case LV_CP:
		half = floor(it->base->mem.seq / 2);
		return half < 1 ? 1 : half < max ? imin((int)half, n) :
			imin(max, n);
	case LV_EP:
		return m->moe.experts > 0 ?
			imin(max, imin(n, m->moe.experts)) : 1;
	case LV_V:
		return m->layers >= 2 ? imin(max, m->layers / 2) : 1;
	}
	return max;
}

/* The values a level runs over: lo..hi. */
static void level_range(const sweep_iter *it, int lv, int *lo, int *hi)
{
	const sweep_space *s = it->s;

	*lo = lv == LV_TP || lv == LV_PP || lv == LV_CP || lv == LV_EP ||
		lv == LV_V ? 1 : 0;
	switch (lv) {
	case LV_G: *hi = s->ngpus - 1; break;
	case LV_TP: *hi = split_cap(it, lv, dflt(s->tp_max)); break;
	case LV_PP: *hi = split_cap(it, lv, dflt(s->pp_max)); break;
	case LV_CP: *hi = split_cap(it, lv, dflt(s->cp_max)); break;
	case LV_EP: *hi = split_cap(it, lv, dflt(s->ep_max)); break;
	case LV_Z: *hi = 3; break;
	case LV_MB: *hi = (s->nmb > 0 ? s->nmb : 1) - 1; break;
	case LV_R: *hi = GP_RECOMPUTE_COUNT - 1; break;
	case LV_V: *hi = split_cap(it, lv, dflt(s->vpp_max)); break;
	default: *hi = 1; break;
	}
}

static double level_mb(const sweep_iter *it)
{
	return it->s->nmb > 0 ? it->s->mbs[it->cur[LV_MB]] : 1.0;
}

/* Is the current value of level lv possible, given the levels outside
 * it?  Each check sits at the outermost level that decides it, so an
 * impossible split is skipped with everything inside it. */
static int level_ok(const sweep_iter *it, int lv)
{
	const gp_model *m = it->m;
	const int *v = it->cur;
	int N, tp = v[LV_TP], pp, cp, ep, one = tp == 1;
	double dp, per;

	/* The innermost levels first: the odometer turns them most. */
	switch (lv) {
	case LV_DPO:
		return it->dpom >> v[LV_DPO] & 1;
	case LV_TPO:    /* no TP collective to overlap without TP */
		return one ? v[LV_TPO] == 0 : it->tpom >> v[LV_TPO] & 1;
	case LV_Z:
		return it->zm >> v[LV_Z] & 1u;
	}
	N = it->s->gpus[v[LV_G]];
	pp = v[LV_PP];
	cp = v[LV_CP];
	ep = v[LV_EP];
	switch (lv) {
	case LV_G:
		return 1;
	case LV_TP:
		/* TP inside a node, as every layout search keeps it: its
		 * collectives run per layer. */
		return N % tp == 0 && tp <= it->G && it->G % tp == 0 &&
			m->heads % tp == 0 &&
			(m->kv_heads % tp == 0 || tp % m->kv_heads == 0);
	case LV_PP:
		return (N / tp) % pp == 0 && pp <= m->layers;
	case LV_CP:
		/* Megatron's CP splits each sequence into 2 cp chunks. */
		return (N / tp / pp) % cp == 0 &&
			(cp == 1 || fmod(it->base->mem.seq, 2.0 * cp) == 0);
	case LV_EP:
		dp = N / tp / pp / cp;
		return ep == 1 || (m->moe.experts > 0 &&
				   m->moe.experts % ep == 0 &&
				   fmod(dp * cp, ep) == 0);
	case LV_MB:
		dp = N / tp / pp / cp;
		per = it->base->global_batch / (dp * level_mb(it));
		return per >= 1 && per == floor(per);
	case LV_R:
		return it->rm >> v[LV_R] & 1u;
	case LV_V:
		dp = N / tp / pp / cp;
		per = it->base->global_batch / (dp * level_mb(it));
		return v[LV_V] == 1 || (pp > 1 && m->layers % (pp * v[LV_V]) == 0 &&
					fmod(per, pp) == 0);
	/* Without TP there is no sequence to split (nor, above, a TP
	 * collective to overlap): SP and TP overlap off, once, whatever the
	 * masks. */
	case LV_SP:
		return one ? v[LV_SP] == 0 : it->spm >> v[LV_SP] & 1;
	}
	return 0;
}

/* The valid values of the innermost three levels (ZeRO stage, TP
 * overlap, DP overlap) in the odometer's order, for tp 1 and tp > 1:
 * what level_ok would pass, as a list the enumeration steps through. */
static void inner_lists(sweep_iter *it)
{
	int one, z, a, b;

	for (one = 0; one < 2; one++) {
		it->ntri[one] = 0;
		it->cur[LV_TP] = one ? 1 : 2;
		for (z = it->lo[LV_Z]; z <= it->hi[LV_Z]; z++)
		for (a = it->lo[LV_TPO]; a <= it->hi[LV_TPO]; a++)
		for (b = it->lo[LV_DPO]; b <= it->hi[LV_DPO]; b++) {
			it->cur[LV_Z] = z;
			it->cur[LV_TPO] = a;
			it->cur[LV_DPO] = b;
			if (!level_ok(it, LV_Z) || !level_ok(it, LV_TPO) ||
			    !level_ok(it, LV_DPO))
				continue;
			it->tri[one][it->ntri[one]][0] = z;
			it->tri[one][it->ntri[one]][1] = a;
			it->tri[one][it->ntri[one]][2] = b;
			it->ntri[one]++;
		}
	}
}

/* sweep_next; whole 0: *out is the config the last call wrote, and only
 * the layout's fields are written again (sweep_run's loop). */
static int next_layout(sweep_iter *it, train_cfg *out, sweep_cand *c,
		       int whole)
{
	const sweep_space *s = it->s;
	int lv, one;

	if (!it->started) {
		it->started = 1;
		for (lv = 0; lv < LV_N; lv++)
			level_range(it, lv, &it->lo[lv], &it->hi[lv]);
		inner_lists(it);
		lv = 0;
		it->cur[lv] = it->lo[lv] - 1;
		it->moved = 0;
	} else {
		lv = LV_Z;
	}
	for (;;) {
		/* The innermost three levels run over their list of valid
		 * values (inner_lists), the next of it or, at its end, the
		 * level outside them. */
		if (lv == LV_Z) {
			const int *t3;

			one = it->cur[LV_TP] == 1;
			if (++it->tri_i >= it->ntri[one]) {
				lv = LV_Z - 1;
				continue;
			}
			t3 = it->tri[one][it->tri_i];
			lv = t3[0] != it->cur[LV_Z] ? LV_Z :
				t3[1] != it->cur[LV_TPO] ? LV_TPO : LV_DPO;
			if (lv < it->moved)
				it->moved = lv;
			it->cur[LV_Z] = t3[0];
			it->cur[LV_TPO] = t3[1];
			it->cur[LV_DPO] = t3[2];
			lv = LV_Z;
		} else {
			if (lv < it->moved)
				it->moved = lv;
			if (++it->cur[lv] > it->hi[lv]) {
				if (lv == 0)
					return 0;
				lv--;
				continue;
			}
			if (!level_ok(it, lv))
				continue;
			if (++lv == LV_Z) {
				/* Into the innermost: their first values. */
				it->tri_i = -1;
				it->cur[LV_Z] = it->cur[LV_TPO] =
					it->cur[LV_DPO] = -1;
			} else {
				it->cur[lv] = it->lo[lv] - 1;
			}
			continue;
		}
		/* A layout: this shard's, or the next. */
		{
			const int *v = it->cur;
			int N = s->gpus[v[LV_G]];
			long idx = it->index++;

			if (s->shard_n > 0 && idx % s->shard_n != s->shard_k)
				continue;
			it->inner = it->moved >= LV_Z;
			it->moved = LV_N;
			it->st.divided++;
			if (!whole && it->inner) {
				/* The config and candidate of the last yield,
				 * the innermost three levels moved. */
				out->mem.lay.zero = v[LV_Z];
				out->tp_overlap = v[LV_TPO];
				out->overlap_grad_reduce = v[LV_DPO];
				c->index = idx;
				c->zero = v[LV_Z];
				c->tp_overlap = v[LV_TPO];
				c->dp_overlap = v[LV_DPO];
				c->step = c->tokens_per_s = c->mfu = 0;
				c->cost = c->train_time = c->mem_total = 0;
				c->score = 0;
				return 1;
			}
			if (whole)
				*out = *it->base;
			out->mem.lay.tp = v[LV_TP];
			out->mem.lay.pp = v[LV_PP];
			out->mem.lay.cp = v[LV_CP];
			out->mem.lay.ep = v[LV_EP];
			out->mem.lay.dp = N / v[LV_TP] / v[LV_PP] / v[LV_CP];
			out->mem.lay.zero = v[LV_Z];
			out->mem.lay.micro_batch = level_mb(it);
			out->mem.lay.vpp = v[LV_V];
			out->mem.lay.schedule = v[LV_V] > 1 ?
				GP_SCHED_INTERLEAVED : GP_SCHED_1F1B;
			out->mem.lay.sp = v[LV_SP];
			out->mem.lay.microbatches = 0;
			out->mem.recompute = (gp_recompute)v[LV_R];
			out->tp_overlap = v[LV_TPO];
			out->overlap_grad_reduce = v[LV_DPO];
			memset(c, 0, sizeof *c);
			c->index = idx;
			c->gpus = N;
			c->tp = v[LV_TP];
			c->pp = v[LV_PP];
			c->cp = v[LV_CP];
			c->ep = v[LV_EP];
			c->dp = out->mem.lay.dp;
			c->zero = v[LV_Z];
			c->vpp = v[LV_V];
			c->sp = v[LV_SP];
			c->micro_batch = out->mem.lay.micro_batch;
			c->recompute = (gp_recompute)v[LV_R];
			c->tp_overlap = v[LV_TPO];
			c->dp_overlap = v[LV_DPO];
			return 1;
		}
	}
}

int sweep_next(sweep_iter *it, train_cfg *out, sweep_cand *c)
{
	return next_layout(it, out, c, 1);
}

void sweep_fill(sweep_cand *c, const train_result *r)
{
	c->step = r->step;
	c->tokens_per_s = r->tokens_per_s;
	c->mfu = r->mfu;
	c->cost = r->cost;
	c->train_time = r->train_time;
	c->mem_total = r->mem.total;
}

double sweep_score(sweep_key k, const sweep_cand *c)
{
	switch (k) {
	case SWEEP_TIME:
		return 1.0 / c->tokens_per_s;
	case SWEEP_COST:
	case SWEEP_PER_DOLLAR:
		/* price per token = price x gpus / 3600 / tokens/s; ranking
		 * by it is ranking by gpus / tokens/s when the price is per
		 * GPU-hour of one card */
		return c->gpus / c->tokens_per_s;
	case SWEEP_MFU:
		return -c->mfu;
	case SWEEP_GPUS:
		return c->gpus + 1e-3 * (1.0 - 1.0 / (1.0 + 1.0 /
						       c->tokens_per_s));
	default:
		return HUGE_VAL;
	}
}

int sweep_within(const sweep_space *s, const sweep_cand *c)
{
	if (s->max_time > 0 && !(c->train_time > 0 &&
				 c->train_time <= s->max_time))
		return 0;
	if (s->max_cost > 0 && !(c->cost > 0 && c->cost <= s->max_cost))
		return 0;
	return 1;
}

void sweep_keep(sweep_cand *top, int k, int *n, const sweep_cand *c)
{
	int i;

	if (k <= 0)
		return;
	if (*n == k && !(c->score < top[k - 1].score))
		return;
	i = *n < k ? (*n)++ : k - 1;
	/* Shift the worse ones down; equal scores keep enumeration order
	 * (strictly better moves up). */
	while (i > 0 && c->score < top[i - 1].score) {
		top[i] = top[i - 1];
		i--;
	}
	top[i] = *c;
}

/* Can a layout whose step is at least lb still enter the list or meet
 * the deadline and budget?  0 when it cannot. */
static int may_enter(const sweep_space *s, sweep_key key, const train_cfg *c,
		     const sweep_cand *cand, const sweep_cand *top, int k,
		     int ntop, double lb)
{
	sweep_cand b = *cand;
	double tps = c->global_batch * c->mem.seq / lb;

	b.tokens_per_s = tps;
	if (c->tokens > 0) {
		b.train_time = c->tokens / tps;
		if (s->max_time > 0 && b.train_time > s->max_time)
			return 0;
		b.cost = b.train_time / 3600.0 * b.gpus * c->price;
		if (s->max_cost > 0 && c->price > 0 && b.cost > s->max_cost)
			return 0;
	}
	/* MFU's score needs the FLOPs: no bound on it here. */
	if (ntop < k || key == SWEEP_MFU)
		return 1;
	return sweep_score(key, &b) < top[k - 1].score;
}

/* What the gate of one layout asks may_enter. */
typedef struct gate_ctx {
	const sweep_space *s;
	sweep_key key;
	const train_cfg *c;
	const sweep_cand *cand, *top;
	int k, ntop;
} gate_ctx;

static int gate(void *ud, double lb)
{
	const gate_ctx *g = ud;

	return may_enter(g->s, g->key, g->c, g->cand, g->top, g->k, g->ntop,
			 lb);
}

int sweep_run(const gp_model *m, const roof_device *d, const gp_topo *t,
	      const train_cfg *base, const sweep_space *s, sweep_key key,
	      train_cache *cache, sweep_where where, void *ud,
	      sweep_cand *top, int k, int *ntop, sweep_stats *stats,
	      gp_error *err)
{
	sweep_iter it;
	train_cfg c;
	sweep_cand cand;
	train_result r;
	gp_error e2;
	gate_ctx g;
	long total = 0, done = 0, step = SWEEP_PROGRESS_N;
	int use_gate;

	if (!top || !ntop || k < 0 || !cache)
		return gp_fail(err, "sweep: no result buffer or memo");
	if ((int)key < 0 || key >= SWEEP_KEYS)
		return gp_fail(err, "sweep: unknown key %d", (int)key);
	if (sweep_begin(&it, m, t, base, s, err))
		return GP_EINVAL;
	if (s->progress) {
		/* The layouts to come, counted by enumerating them: cheap
		 * next to pricing them. */
		while (sweep_next(&it, &c, &cand))
			total++;
		sweep_begin(&it, m, t, base, s, err);
		/* about a hundred updates, at most every SWEEP_PROGRESS_N */
		step = total / 100;
		step = step < 1 ? 1 : step > SWEEP_PROGRESS_N ?
			SWEEP_PROGRESS_N : step;
	}
	*ntop = 0;
	while (next_layout(&it, &c, &cand, it.st.divided == 0)) {
		if (s->progress && ++done % step == 0)
			s->progress(s->progress_ud, done, total);
		/* The bound first (once k are kept, or against a deadline or
		 * budget), then memory: what cannot rank or does not fit is
		 * not timed. */
		g.s = s;
		g.key = key;
		g.c = &c;
		g.cand = &cand;
		g.top = top;
		g.k = k;
		g.ntop = *ntop;
		c.skip_unfit = !s->time_all;
		use_gate = !s->no_bound && (*ntop == k || s->max_time > 0 ||
					    s->max_cost > 0);
		/* After the first layout the memo holds the model, device
		 * and topology; when only the innermost levels moved, the
		 * step's phase of the layout before is this one's. */
		if ((it.st.divided > 1 ?
		     train_step_next(m, d, t, &c, cache, TRAIN_NEXT_BRIEF |
				     (it.inner ? TRAIN_NEXT_REUSE :
				      TRAIN_NEXT_FRESH), use_gate ? gate :
				     NULL, &g, &r, &e2) :
		     train_step_gated(m, d, t, &c, cache,
				      use_gate ? gate : NULL, &g, &r, &e2))) {
			it.st.errors++;
			continue;
		}
		if (r.bounded) {
			it.st.bounded++;
			continue;
		}
		if (r.step > 0)
			it.st.timed++;
		if (!r.fits)
			continue;
		it.st.fitting++;
		sweep_fill(&cand, &r);
		if (!sweep_within(s, &cand))
			continue;
		it.st.within++;
		cand.score = sweep_score(key, &cand);
		if (where && !where(ud, &cand))
			continue;
		sweep_keep(top, k, ntop, &cand);
	}
	if (s->progress)
		s->progress(s->progress_ud, total, total);
	if (stats)
		*stats = it.st;
	return GP_OK;
}
