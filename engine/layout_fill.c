/*
 * layout_fill.c - the placement a launcher makes (layout.h
 * layout_fill_of): ranks fill nodes in order, the last node partial;
 * and the groups every command prices its collectives on
 * (layout_fill_place).
 */
#include "layout.h"
#include <math.h>
#include <string.h>

/* ---- the launcher's placement ------------------------------------------ */

/* A group kind as ranks of the grid: members r = base + i x st[0]
 * (+ j x st[1]), st[0] the inner dimension (its size x stride is at most
 * st[1], as mixed radix gives), so members in (i, j) order rise. */
typedef struct fill_grp {
	int nd;
	double sz[2], st[2];
} fill_grp;

static double coord(double r, double st, double sz)
{
	return fmod(floor(r / st), sz);
}

/* The member after r in rising order, or -1. */
static double fill_next(const fill_grp *f, double r)
{
	double c0 = coord(r, f->st[0], f->sz[0]);

	if (c0 < f->sz[0] - 1)
		return r + f->st[0];
	if (f->nd == 2 && coord(r, f->st[1], f->sz[1]) < f->sz[1] - 1)
		return r - c0 * f->st[0] + f->st[1];
	return -1;
}

/* The member before r, or -1 (r is its group's first). */
static double fill_prev(const fill_grp *f, double r)
{
	if (coord(r, f->st[0], f->sz[0]) > 0)
		return r - f->st[0];
	if (f->nd == 2 && coord(r, f->st[1], f->sz[1]) > 0)
		return r + (f->sz[0] - 1) * f->st[0] - f->st[1];
	return -1;
}

/* Walk every rank once per question: O(s) for a kind, nothing
 * allocated.  A rank opens its group's share of a node when the member
 * before it sits on another node (members rise, so a share is a run). */
static void fill_kind(const fill_grp *f, double s, double G, gp_fill *o)
{
	double nodes = ceil(s / G), n, r, q, end, share, groups, span;

	o->ranks = (int)(f->sz[0] * (f->nd == 2 ? f->sz[1] : 1));
	o->max_share = 0;
	o->min_share = o->ranks;
	o->sharing = 0;
	o->nodes = 0;
	for (n = 0; n < nodes; n++) {
		end = fmin(s, (n + 1) * G);
		groups = 0;
		for (r = n * G; r < end; r++) {
			q = fill_prev(f, r);
			if (q >= 0 && floor(q / G) == n)
				continue;
			groups += 1;
			share = 1;
			for (q = fill_next(f, r); q >= 0 && floor(q / G) == n;
			     q = fill_next(f, q))
				share += 1;
			if (share > o->max_share)
				o->max_share = (int)share;
			if (share < o->min_share)
				o->min_share = (int)share;
			if (q < 0) {
				/* r's share is its group's last: count the
				 * nodes the whole group spans, once. */
				for (span = 1, q = fill_prev(f, r); q >= 0;
				     q = fill_prev(f, q))
					if (floor(q / G) !=
					    floor(fill_next(f, q) / G))
						span += 1;
				if (span > o->nodes)
					o->nodes = (int)span;
			}
		}
		if (groups > o->sharing)
			o->sharing = (int)groups;
	}
}

int layout_fill_of(const gp_place_key *k, gp_fill out[GP_GRP_COUNT],
		   gp_error *err)
{
	double size[GP_DIM_COUNT], stride[GP_DIM_COUNT], s = 1;
	double e[3], st[3];
	fill_grp f[GP_GRP_COUNT];
	int i, d, G = k->gpus_per_node;

	if (G < 1)
		return gp_fail(err, "gpus_per_node must be >= 1 (got %d)", G);
	s = layout_rank_strides(k, size, stride);
	if (s > 1 << 24)
		return gp_fail(err, "the launcher's placement walks every "
			       "rank: %.0f GPUs is past 2^24", s);
	memset(f, 0, sizeof f);
	{
		static const gp_grp of[GP_DIM_COUNT] = {
			GP_GRP_TP, GP_GRP_CP, GP_GRP_DP, GP_GRP_PP
		};
		for (d = 0; d < GP_DIM_COUNT; d++) {
			f[of[d]].nd = 1;
			f[of[d]].sz[0] = size[d];
			f[of[d]].st[0] = stride[d];
		}
	}
	/* DP with CP folded in: the inner of the two first. */
	i = stride[GP_DIM_CP] < stride[GP_DIM_DP];
	f[GP_GRP_DPCP].nd = 2;
	f[GP_GRP_DPCP].sz[0] = size[i ? GP_DIM_CP : GP_DIM_DP];
	f[GP_GRP_DPCP].st[0] = stride[i ? GP_DIM_CP : GP_DIM_DP];
	f[GP_GRP_DPCP].sz[1] = size[i ? GP_DIM_DP : GP_DIM_CP];
	f[GP_GRP_DPCP].st[1] = stride[i ? GP_DIM_DP : GP_DIM_CP];
	/* The experts' grid, strides as layout_place_of gives them. */
	layout_expert_grid(k, size, e, st);
	for (i = 0; i < 3; i++) {
		static const gp_grp of[3] = {
			GP_GRP_ETP, GP_GRP_EP, GP_GRP_EDP
		};
		f[of[i]].nd = 1;
		f[of[i]].sz[0] = e[i];
		f[of[i]].st[0] = st[i];
	}
	for (i = 0; i < GP_GRP_COUNT; i++)
		fill_kind(&f[i], s, G, &out[i]);
	return GP_OK;
}

/* ---- the groups the collectives are priced on ---------------------- */

/* 1 when a and G divide one another (whole counts up to the job's GPUs,
 * which layout_check holds to 2^24: integer remainders, cheaper than
 * fmod on the sweep's path). */
static int nests(double a, double G)
{
	long long x = (long long)a, g = (long long)G;

	if (x < 1 || (double)x != a)
		return 0;
	return x % g == 0 || g % x == 0;
}

/* 1 when the launcher's shares are equal for every kind and within the
 * job's nodes, so that layout_place_of's answer is the launcher's: the
 * job within one node, or whole nodes with every dimension's rank
 * stride and its groups' extent (stride x size) nesting with the node
 * size G.  A group of extent P at stride st then sits in aligned blocks
 * of P ranks: inside one node when P divides G; G / st of its members
 * on each of its nodes when G divides P and st divides G; one a node
 * when G divides st.  DPCP's two dimensions are each of these, and the
 * node holds the product of their shares. */
static int fill_equal(const gp_place_key *k)
{
	double size[GP_DIM_COUNT], stride[GP_DIM_COUNT], e[3], st[3], s;
	double G = k->gpus_per_node;
	int d;

	s = layout_rank_strides(k, size, stride);
	if (s <= G)
		return 1;
	if ((long long)s % (long long)G != 0)
		return 0;
	for (d = 0; d < GP_DIM_COUNT; d++)
		if (!nests(stride[d], G) || !nests(stride[d] * size[d], G))
			return 0;
	layout_expert_grid(k, size, e, st);
	for (d = 0; d < 3; d++)
		if (!nests(st[d], G) || !nests(st[d] * e[d], G))
			return 0;
	return 1;
}

int layout_fill_place(const gp_place_key *k, gp_group out[GP_GRP_COUNT],
		      gp_error *err)
{
	gp_fill f[GP_GRP_COUNT];
	int i;

	if (k->gpus_per_node >= 1 && (k->domain || fill_equal(k))) {
		if (layout_place_of(k, out, err))
			return GP_EINVAL;
		for (i = 0; i < GP_GRP_COUNT; i++)
			out[i].nodes = out[i].ranks / out[i].per_node;
		return GP_OK;
	}
	if (layout_fill_of(k, f, err))
		return GP_EINVAL;
	for (i = 0; i < GP_GRP_COUNT; i++) {
		out[i].ranks = f[i].ranks;
		out[i].per_node = f[i].min_share;
		out[i].sharing = f[i].sharing;
		out[i].nodes = f[i].nodes;
	}
	return GP_OK;
}
