/*
 * rl_lengths.c - the response lengths of an RL rollout: fixed, uniform
 * or an exponential clipped at the generation limit (with a share cut
 * there, response_clip); their survival,
 * second moment and expected longest (rl.h, rl_lengths.h).
 */
#include "rl_lengths.h"

#include <math.h>
#include <string.h>

static const char *const dist_names[RL_LEN_COUNT] = {
	"fixed", "uniform", "exp"
};

const char *rl_len_dist_name(int d)
{
	return GP_NAME_OF(dist_names, RL_LEN_COUNT, d);
}

int rl_len_dist_parse(const char *s, rl_len_dist *out, gp_error *err)
{
	int k;

	if (gp_parse_name(s, dist_names, RL_LEN_COUNT, &k,
			  "response distribution", err))
		return GP_EINVAL;
	*out = (rl_len_dist)k;
	return GP_OK;
}

/* ---- response lengths ------------------------------------------------ */

/* The scale theta of an exponential clipped at M with mean mu:
 * E[min(X, M)] = theta (1 - e^{-M/theta}), increasing in theta from 0
 * toward M, so mu < M has one root; bisection in log theta, at most 200
 * halvings.  A halving that leaves [lo, hi] as it was (mid rounds to
 * the end it replaces) would repeat itself to the last -- the next
 * one sees the same interval -- so the loop stops there: ~60
 * halvings instead of 200, the same theta to the bit. */
static double exp_scale(double mu, double M)
{
	double lo = mu, hi = mu, g;
	int i;

	do {
		hi *= 2.0;
		g = -hi * expm1(-M / hi);
	} while (g < mu && hi < 1e30);
	for (i = 0; i < 200; i++) {
		double mid = sqrt(lo * hi);

		g = -mid * expm1(-M / mid);
		if (g < mu ? mid == lo : mid == hi)
			break;
		if (g < mu)
			lo = mid;
		else
			hi = mid;
	}
	return sqrt(lo * hi);
}

/* The exponential's own mean once the share clip is cut at max:
 * c max + (1 - c) mu_b = mean. */
static double exp_mean(const rl_lengths *l)
{
	return (l->mean - l->clip * l->max) / (1.0 - l->clip);
}

/* The ranges of rl_lengths_prepare; GP_OK or GP_EINVAL. */
static int check_inputs(const rl_lengths *l, gp_error *err)
{
	if (!l)
		return gp_fail(err, "response lengths: NULL");
	if ((int)l->dist < 0 || l->dist >= RL_LEN_COUNT)
		return gp_fail(err, "unknown response distribution %d",
			       (int)l->dist);
	if (gp_check_num(l->mean, 1, GP_COUNT_MAX, "response_len", err))
		return GP_EINVAL;
	if (l->dist == RL_LEN_FIXED) {
		if (l->max != 0 && l->max != l->mean)
			return gp_fail(err, "response_max %g differs from "
				       "response_len %g: fixed lengths have "
				       "one length", l->max, l->mean);
		return GP_OK;
	}
	if (gp_check_num(l->max, l->mean, GP_COUNT_MAX, "response_max", err))
		return GP_EINVAL;
	if (l->dist == RL_LEN_UNIFORM) {
		if (2.0 * l->mean - l->max < 1)
			return gp_fail(err, "a uniform spread around response_"
				       "len %g reaching response_max %g would "
				       "start below one token (needs "
				       "response_len >= (response_max + 1) / "
				       "2); exp has a long tail", l->mean,
				       l->max);
		return GP_OK;
	}
	if (!(l->mean < l->max))
		return gp_fail(err, "exp lengths need response_len %g below "
			       "response_max %g", l->mean, l->max);
	if (!(l->clip >= 0 && l->clip < 1))
		return gp_fail(err, "response_clip %g must be in [0, 1)",
			       l->clip);
	/* A share c of the responses never ends and is cut at max; the
	 * rest are exponential (clipped at max) with the mean that keeps
	 * the whole at `mean`: c max + (1 - c) mu_b = mean, mu_b >= 1. */
	if (!(l->mean - l->clip * l->max >= 1.0 - l->clip))
		return gp_fail(err, "response_clip %g puts %g tokens a "
			       "response at response_max %g, above "
			       "response_len %g", l->clip,
			       l->clip * l->max, l->max, l->mean);
	return GP_OK;
}

int rl_lengths_prepare(rl_lengths *l, gp_error *err)
{
	if (l)
		l->theta = 0;
	if (check_inputs(l, err))
		return GP_EINVAL;
	if (l->dist == RL_LEN_EXP)
		l->theta = exp_scale(exp_mean(l), l->max);
	return GP_OK;
}

int rl_lengths_check(const rl_lengths *l, gp_error *err)
{
	double mu, g = 0.0;

	if (check_inputs(l, err))
		return GP_EINVAL;
	if (l->dist != RL_LEN_EXP)
		return GP_OK;
	/* theta solves theta (1 - e^{-max/theta}) = mu_b: the bisection
	 * leaves it within an ulp or two of the root, where the clipped
	 * mean's slope in theta is at most 1 (relative), so the residual
	 * is a few ulps of mu_b; 1e-9 is far above that and far below
	 * what another mean, limit or share would leave.  A scale never
	 * solved (0: a zeroed struct, or a failed rl_lengths_prepare) is
	 * refused without dividing max by it (g stays 0, and mu_b >= 1). */
	mu = exp_mean(l);
	if (l->theta > 0)
		g = -l->theta * expm1(-l->max / l->theta);
	if (!(l->theta > 0) || !(fabs(g - mu) <= 1e-9 * mu))
		return gp_fail(err, "response lengths: scale %g does not "
			       "solve response_len %g under response_max "
			       "%g (rl_lengths_prepare after setting them)",
			       l->theta, l->mean, l->max);
	return GP_OK;
}

/* x's bounds and scale from l (prepared), unchecked. */
static void lenx_view(const rl_lengths *l, lenx *x)
{
	x->l = *l;
	x->theta = 0;
	switch (l->dist) {
	case RL_LEN_UNIFORM:
		x->lo = 2.0 * l->mean - l->max;
		x->hi = l->max;
		break;
	case RL_LEN_EXP:
		x->lo = 0;
		x->hi = l->max;
		x->theta = l->theta;
		break;
	default:
		x->lo = x->hi = l->mean;
	}
}

int rl_lenx_of(const rl_lengths *l, lenx *x, gp_error *err)
{
	if (rl_lengths_check(l, err))
		return GP_EINVAL;
	lenx_view(l, x);
	return GP_OK;
}

double rl_lenx_moment2(const lenx *x)
{
	double a, r;

	switch (x->l.dist) {
	case RL_LEN_UNIFORM:
		return (x->lo * x->lo + x->lo * x->hi + x->hi * x->hi) / 3.0;
	case RL_LEN_EXP:
		/* E[L^2] = int_0^M 2 t e^{-t/theta} dt
		 *        = 2 theta^2 (1 - e^{-M/theta} (1 + M/theta)) */
		a = x->hi / x->theta;
		r = 2.0 * x->theta * x->theta *
			(1.0 - exp(-a) * (1.0 + a));
		/* and the share c cut at max: c max^2 + (1 - c) E_b[L^2] */
		return x->l.clip * x->hi * x->hi + (1.0 - x->l.clip) * r;
	default:
		return x->l.mean * x->l.mean;
	}
}

/* H_n, the n-th harmonic number (exact to 64, then ln n + gamma +
 * 1/2n - 1/12n^2). */
static double harmonic(double n)
{
	double h = 0;
	int i;

	if (n <= 64) {
		for (i = 1; i <= (int)n; i++)
			h += 1.0 / i;
		return h;
	}
	return log(n) + 0.5772156649015329 + 0.5 / n - 1.0 / (12.0 * n * n);
}

/* The expected longest of n responses: E[max] of n draws -- uniform:
 * lo + (max - lo) n / (n + 1); exponential: theta H_n (Renyi's
 * representation of exponential order statistics), clipped at the
 * generation limit; with a share c cut at the limit, one of the n is
 * there unless none is, (1 - c)^n:
 * max (1 - (1 - c)^n) + (1 - c)^n min(theta H_n, max). */
double rl_lenx_longest(const lenx *x, double n)
{
	double t, q;

	n = floor(n);
	if (n < 1)
		n = 1;
	switch (x->l.dist) {
	case RL_LEN_UNIFORM:
		return x->lo + (x->hi - x->lo) * n / (n + 1.0);
	case RL_LEN_EXP:
		t = x->theta * harmonic(n);
		t = t < x->hi ? t : x->hi;
		q = pow(1.0 - x->l.clip, n);
		return x->hi * (1.0 - q) + q * t;
	default:
		return x->lo;
	}
}

double rl_len_survival(const rl_lengths *l, double t)
{
	lenx x;

	lenx_view(l, &x);
	return rl_lenx_surv(&x, t);
}

double rl_len_moment2(const rl_lengths *l)
{
	lenx x;

	lenx_view(l, &x);
	return rl_lenx_moment2(&x);
}

double rl_len_limit(const rl_lengths *l)
{
	return l->dist == RL_LEN_FIXED ? l->mean : l->max;
}

double rl_len_longest(const rl_lengths *l, double n)
{
	lenx x;

	lenx_view(l, &x);
	return rl_lenx_longest(&x, n);
}

/* The busiest of dp ranks, each training the sum of k lengths p + L
 * drawn at random, against the mean rank: the sums are near normal (k
 * lengths), mean k (p + E[L]) and deviation sqrt(k) sd(L), and the
 * largest of dp normals lies z(dp) deviations above their mean, z(n) =
 * Phi^-1((n - 0.375) / (n + 0.25)) (Blom 1958, the expected largest of
 * n normal draws: 1.42 of 8, 2.07 of 32, exact to 0.01) with Phi^-1(q)
 * = 5.5556 (1 - ((1 - q) / q)^0.1186) (Shore 1982, Applied Statistics
 * 31:108, for q >= 1/2). */
double rl_rank_skew(const rl_lengths *l, double p, double dp, double k)
{
	double q, z, var, mean;

	if (dp < 2 || k < 1 || l->dist == RL_LEN_FIXED)
		return 1.0;
	mean = p + l->mean;
	var = rl_len_moment2(l) - l->mean * l->mean;
	if (!(var > 0) || !(mean > 0))
		return 1.0;
	q = (dp - 0.375) / (dp + 0.25);
	z = 5.5556 * (1.0 - pow((1.0 - q) / q, 0.1186));
	return 1.0 + z * sqrt(var) / (mean * sqrt(k));
}
