/*
 * rl_lengths.h - what rollout.c uses of the response lengths
 * (rl_lengths.c): a prepared distribution checked and viewed, its survival
 * and quantile (inline: the rollout's timeline calls them per segment),
 * second moment and expected longest.  Internal to the engine's RL model;
 * the contract is rl.h.
 */
#ifndef GP_RL_LENGTHS_H
#define GP_RL_LENGTHS_H

#include "rl.h"

#include <math.h>

/* What the kernels use of a distribution: the constant head [0, lo)
 * where every response is still running, and the exponential's scale. */
typedef struct lenx {
	rl_lengths l;
	double lo;      /* fixed: mean; uniform: 2 mean - max; exp: 0 */
	double hi;      /* the largest length: fixed mean, else max */
	double theta;   /* exp */
} lenx;

/* P(L > t): the share of the responses still running at length t. */
static inline double rl_lenx_surv(const lenx *x, double t)
{
	if (t < x->lo)
		return 1.0;
	if (t >= x->hi)
		return 0.0;
	switch (x->l.dist) {
	case RL_LEN_UNIFORM:
		return (x->hi - t) / (x->hi - x->lo);
	case RL_LEN_EXP:
		return x->l.clip + (1.0 - x->l.clip) * exp(-t / x->theta);
	default:
		return 0.0;
	}
}

/* The length at which a share q in (0, 1) of the responses is still
 * running (the (1 - q) quantile). */
static inline double rl_lenx_surv_inv(const lenx *x, double q)
{
	double t;

	switch (x->l.dist) {
	case RL_LEN_UNIFORM:
		return x->hi - q * (x->hi - x->lo);
	case RL_LEN_EXP:
		if (q <= x->l.clip)
			return x->hi;
		t = -x->theta * log((q - x->l.clip) / (1.0 - x->l.clip));
		return t < x->hi ? t : x->hi;
	default:
		return x->lo;
	}
}

/* Check l (prepared: rl_lengths_check) and view it as x. */
int rl_lenx_of(const rl_lengths *l, lenx *x, gp_error *err);

/* E[L^2]. */
double rl_lenx_moment2(const lenx *x);

/* The expected longest of n responses. */
double rl_lenx_longest(const lenx *x, double n);

#endif
