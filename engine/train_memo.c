/*
 * train_memo.c - the memo of a layout's layer costs (train.h
 * train_cache): both kinds of layer's costs (dense, MoE) and the model's
 * ends, priced by train_layer.c once per layer key and read back by
 * every phase, micro-batch and stage of a sweep that shares it.
 */
#include "train_int.h"

#include <string.h>

/* The memo's layer costs for key k, or NULL. */
static const struct train_cache_entry *cache_get(train_cache *cc,
						 const train_lkey *k,
						 unsigned long long *h)
{
	int i;

	if (!cc)
		return NULL;
	/* Layouts in a row often share their layers (another dp or vpp):
	 * the last hit first, without hashing. */
	i = cc->last;
	if (i < cc->n && memcmp(&cc->e[i].key, k, sizeof *k) == 0) {
		cc->hits++;
		*h = cc->e[i].hash;
		return &cc->e[i];
	}
	*h = gp_hash(k, sizeof *k);
	for (i = 0; i < cc->n; i++)
		if (cc->e[i].hash == *h &&
		    memcmp(&cc->e[i].key, k, sizeof *k) == 0) {
			cc->hits++;
			cc->last = i;
			return &cc->e[i];
		}
	cc->misses++;
	return NULL;
}

static const struct train_cache_entry *cache_put(train_cache *cc,
						 const train_lkey *k,
						 unsigned long long h,
						 const train_lcost *ld,
						 const train_lcost *lm)
{
	struct train_cache_entry *e;
	int i;

	i = cc->n < TRAIN_CACHE_N ? cc->n++ : cc->next;
	cc->next = (cc->next + 1) % TRAIN_CACHE_N;
	e = &cc->e[i];
	cc->last = i;
	e->key = *k;
	e->hash = h;
	e->ld = *ld;
	e->lm = *lm;
	return e;
}

/* The two kinds of layer's costs of a prepared config: from the memo
 * when it has them, else priced (into buf, and kept in the memo). */
static int layer_pair(ctx *xp, train_cache *cache, train_lcost *buf,
		      const train_lcost **ldp, const train_lcost **lmp)
{
	const struct train_cache_entry *e;
	unsigned long long h = 0;

	e = cache_get(cache, &xp->k, &h);
	if (!e) {
		train_layer_costs(&xp->e, &xp->k, 0, &buf[0]);
		train_ends_costs(&xp->e, &xp->k, &buf[0]);
		buf[1] = buf[0];
		if (model_moe_layers(xp->e.m) > 0)
			train_layer_costs(&xp->e, &xp->k, 1, &buf[1]);
		if (xp->e.bad)
			return GP_EINVAL;
		if (cache)
			e = cache_put(cache, &xp->k, h, &buf[0], &buf[1]);
	}
	*ldp = e ? &e->ld : &buf[0];
	*lmp = e ? &e->lm : &buf[1];
	return GP_OK;
}


/* The two kinds of layer's costs of the phase. */
int train_phase_layers(phase *ph, train_cache *cache)
{
	train_lcost buf[2];
	const train_lcost *ld, *lm;

	if (ph->layers_ok)
		return GP_OK;
	if (layer_pair(&ph->x, cache, buf, &ld, &lm))
		return GP_EINVAL;
	if (!cache) {
		ph->own[0] = *ld;
		ph->own[1] = *lm;
		ld = &ph->own[0];
		lm = &ph->own[1];
	}
	ph->ld = ld;
	ph->lm = lm;
	ph->layers_ok = 1;
	return GP_OK;
}
