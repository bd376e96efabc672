/*
 * train_memo.c - the memo of a layout's layer costs (train.h
 * train_cache): both kinds of layer's costs (dense, MoE), a hybrid
 * stack's four (its -, E, M and * layers), and the model's ends, priced by train_layer.c once per layer key and read back by
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
						 const train_lcost *buf,
						 int nk)
{
	struct train_cache_entry *e;
	int i;

	i = cc->n < TRAIN_CACHE_N ? cc->n++ : cc->next;
	cc->next = (cc->next + 1) % TRAIN_CACHE_N;
	e = &cc->e[i];
	cc->last = i;
	e->key = *k;
	e->hash = h;
	e->ld = buf[0];
	e->lm = buf[1];
	if (nk > 2) {
		e->lx[0] = buf[2];
		e->lx[1] = buf[3];
	}
	return e;
}

/* The kinds of layer's costs of a prepared config (-, E, and a hybrid
 * stack's M and * into L[2], L[3]; NULL for a plain model): from the memo
 * when it has them, else priced (into buf, and kept in the memo). */
static int layer_kinds(ctx *xp, train_cache *cache, train_lcost *buf,
		       const train_lcost **L)
{
	const struct train_cache_entry *e;
	unsigned long long h = 0;
	const gp_model *m = xp->e.m;
	int hy = m->pattern[0] != 0;

	e = cache_get(cache, &xp->k, &h);
	if (!e) {
		train_layer_costs(&xp->e, &xp->k, '-', &buf[0]);
		train_ends_costs(&xp->e, &xp->k, &buf[0]);
		buf[1] = buf[0];
		if (model_moe_layers(m) > 0) {
			train_layer_costs(&xp->e, &xp->k, 'E', &buf[1]);
		}
		if (hy) {
			train_layer_costs(&xp->e, &xp->k, 'M', &buf[2]);
			train_layer_costs(&xp->e, &xp->k, '*', &buf[3]);
		}
		if (xp->e.bad)
			return GP_EINVAL;
		if (cache)
			e = cache_put(cache, &xp->k, h, buf, hy ? 4 : 2);
	}
	L[0] = e ? &e->ld : &buf[0];
	L[1] = e ? &e->lm : &buf[1];
	L[2] = !hy ? NULL : e ? &e->lx[0] : &buf[2];
	L[3] = !hy ? NULL : e ? &e->lx[1] : &buf[3];
	return GP_OK;
}


/* The kinds of layer's costs of the phase. */
int train_phase_layers(phase *ph, train_cache *cache)
{
	train_lcost buf[4];
	const train_lcost *L[4];
	int i;

	if (ph->layers_ok)
		return GP_OK;
	if (layer_kinds(&ph->x, cache, buf, L))
		return GP_EINVAL;
	if (!cache)
		for (i = 0; i < 4; i++)
			if (L[i]) {
				ph->own[i] = *L[i];
				L[i] = &ph->own[i];
			}
	ph->ld = L[0];
	ph->lm = L[1];
	ph->lx[0] = L[2];
	ph->lx[1] = L[3];
	ph->layers_ok = 1;
	return GP_OK;
}
