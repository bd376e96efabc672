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
	return GP_OK;
}

/* Does this combination divide the model, the nodes and the batch? */
static int divides(const sweep_iter *it, int N, int tp, int pp, int cp,
		   int ep, double mb, int vpp)
{
	const gp_model *m = it->m;
	double dp, per;

	if (N % tp || (N / tp) % pp || (N / tp / pp) % cp)
		return 0;
	/* TP inside a node, as every layout search keeps it: its
	 * collectives run per layer. */
	if (tp > it->G || it->G % tp || m->heads % tp ||
	    (m->kv_heads % tp && tp % m->kv_heads))
		return 0;
	if (pp > m->layers || (vpp > 1 && (pp == 1 || m->layers %
					   (pp * vpp))))
		return 0;
	/* Megatron's CP splits each sequence into 2 cp chunks. */
	if (cp > 1 && fmod(it->base->mem.seq, 2.0 * cp) != 0)
		return 0;
	dp = N / tp / pp / cp;
	if (ep > 1 && (m->moe.experts <= 0 || m->moe.experts % ep ||
		       fmod(dp * cp, ep) != 0))
		return 0;
	per = it->base->global_batch / (dp * mb);
	if (per < 1 || per != floor(per))
		return 0;
	if (vpp > 1 && fmod(per, pp) != 0)
		return 0;
	return 1;
}

int sweep_next(sweep_iter *it, train_cfg *out, sweep_cand *c)
{
	const sweep_space *s = it->s;
	int tpm = dflt(s->tp_max), ppm = dflt(s->pp_max);
	int cpm = dflt(s->cp_max), epm = dflt(s->ep_max);
	int vm = dflt(s->vpp_max), nmb = s->nmb > 0 ? s->nmb : 1;
	unsigned zm = s->zero_mask ? s->zero_mask : 1u;
	unsigned rm = s->rec_mask ? s->rec_mask : 1u;
	int spm = s->sp_mask ? s->sp_mask : 2;
	int tpm_o = s->tpo_mask ? s->tpo_mask :
		(it->base->tp_overlap ? 2 : 1);
	int dpm_o = s->dpo_mask ? s->dpo_mask :
		(it->base->overlap_grad_reduce ? 2 : 1);

	if (!it->started) {
		it->started = 1;
		it->tp = it->pp = it->cp = it->ep = it->vpp = 1;
	} else {
		goto advance;
	}
	for (;;) {
		{
			int N = s->gpus[it->ig];
			double mb = s->nmb > 0 ? s->mbs[it->imb] : 1.0;
			int sp = it->isp;

			/* Without TP there is no sequence to split and no
			 * TP collective to overlap: SP and TP overlap off,
			 * once, whatever the masks. */
			int one = it->tp == 1;

			if ((zm >> it->iz & 1u) && (rm >> it->ir & 1u) &&
			    (one ? sp == 0 : (spm >> sp & 1)) &&
			    (one ? it->itpo == 0 : (tpm_o >> it->itpo & 1)) &&
			    (dpm_o >> it->idpo & 1) &&
			    (it->st.space++, 1) &&
			    divides(it, N, it->tp, it->pp, it->cp, it->ep, mb,
				    it->vpp)) {
				long idx = it->index++;

				if (s->shard_n <= 0 ||
				    idx % s->shard_n == s->shard_k) {
					*out = *it->base;
					out->mem.lay.tp = it->tp;
					out->mem.lay.pp = it->pp;
					out->mem.lay.cp = it->cp;
					out->mem.lay.ep = it->ep;
					out->mem.lay.dp = N / it->tp / it->pp /
						it->cp;
					out->mem.lay.zero = it->iz;
					out->mem.lay.micro_batch = mb;
					out->mem.lay.vpp = it->vpp;
					out->mem.lay.schedule = it->vpp > 1 ?
						GP_SCHED_INTERLEAVED :
						GP_SCHED_1F1B;
					out->mem.lay.sp = sp;
					out->mem.lay.microbatches = 0;
					out->mem.recompute =
						(gp_recompute)it->ir;
					out->tp_overlap = it->itpo;
					out->overlap_grad_reduce = it->idpo;
					memset(c, 0, sizeof *c);
					c->index = idx;
					c->gpus = N;
					c->tp = it->tp;
					c->pp = it->pp;
					c->cp = it->cp;
					c->ep = it->ep;
					c->dp = out->mem.lay.dp;
					c->zero = it->iz;
					c->vpp = it->vpp;
					c->sp = sp;
					c->micro_batch = mb;
					c->recompute = (gp_recompute)it->ir;
					c->tp_overlap = it->itpo;
					c->dp_overlap = it->idpo;
					it->st.divided++;
					return 1;
				}
			}
		}
advance:
		/* Odometer, innermost first: DP overlap, TP overlap, sp,
		 * vpp, recompute, micro-batch, zero, ep, cp, pp, tp, GPU
		 * count. */
		if (++it->idpo < 2)
			continue;
		it->idpo = 0;
		if (++it->itpo < 2)
			continue;
		it->itpo = 0;
		if (++it->isp < 2)
			continue;
		it->isp = 0;
		if (++it->vpp <= vm)
			continue;
		it->vpp = 1;
		if (++it->ir < GP_RECOMPUTE_COUNT)
			continue;
		it->ir = 0;
		if (++it->imb < nmb)
			continue;
		it->imb = 0;
		if (++it->iz < 4)
			continue;
		it->iz = 0;
		if (++it->ep <= epm)
			continue;
		it->ep = 1;
		if (++it->cp <= cpm)
			continue;
		it->cp = 1;
		if (++it->pp <= ppm)
			continue;
		it->pp = 1;
		if (++it->tp <= tpm)
			continue;
		it->tp = 1;
		if (++it->ig < s->ngpus)
			continue;
		return 0;
	}
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
	double lb;

	if (!top || !ntop || k < 0 || !cache)
		return gp_fail(err, "sweep: no result buffer or memo");
	if ((int)key < 0 || key >= SWEEP_KEYS)
		return gp_fail(err, "sweep: unknown key %d", (int)key);
	if (sweep_begin(&it, m, t, base, s, err))
		return GP_EINVAL;
	*ntop = 0;
	while (sweep_next(&it, &c, &cand)) {
		if (!s->no_bound && (*ntop == k || s->max_time > 0 ||
				     s->max_cost > 0)) {
			if (train_bound(m, d, t, &c, cache, &lb, &e2)) {
				it.st.errors++;
				continue;
			}
			if (!may_enter(s, key, &c, &cand, top, k, *ntop, lb)) {
				it.st.bounded++;
				continue;
			}
		}
		/* Memory first: what does not fit is not timed. */
		c.skip_unfit = 1;
		if (train_step_cached(m, d, t, &c, cache, &r, &e2)) {
			it.st.errors++;
			continue;
		}
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
	if (stats)
		*stats = it.st;
	return GP_OK;
}
