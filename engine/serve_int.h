/*
 * serve_int.h - what serve.c, serve_step.c and serve_plan.c share: the
 * shape of a layout on a model.  Internal to the engine's serving model;
 * the contract is serve.h.
 */
#ifndef GP_SERVE_INT_H
#define GP_SERVE_INT_H

#include "serve.h"

/* The hottest GPU's routed tokens / the mean that EPLB leaves in a step,
 * with 32 redundant slots: TensorRT-LLM tech blog 4 ("Scaling Expert
 * Parallelism", Table 1, DeepSeek-R1 at EP36 of 8 slots): the
 * imbalance-ratio, max / mean - 1 of the ranks' routed tokens, is 0.115
 * -- "averaged from the per-layer per-iteration metrics" (its
 * report_load_statistics.py takes max / mean per iteration, then the
 * mean), each iteration's ranks receiving 1024 on average.  A step's own
 * figure at that load; sx_imbalance models how it moves with the
 * tokens a step routes. */
#define SERVE_EPLB_SKEW 1.11

/* The spread of the ranks' loads EPLB leaves apart from chance, as a
 * share of the mean: the same Table 1 row's per-step standard deviation,
 * 53.9 tokens over a mean of 1024, less the chance of where 1024
 * token-expert picks land (Poisson, variance 1024):
 * sqrt(53.9^2 - 1024) / 1024 = 0.04236.  The placement EPLB computed
 * from the same traffic, so the spread it cannot remove (it moves and
 * replicates whole experts). */
#define SERVE_EPLB_SD 0.04236

/* Counts and widths of layout L on model m (both checked). */
typedef struct shp {
	double N, a, G;        /* instance, attention TP, GPUs per node */
	double h, L, nd, nm, E, k, mats;
	double slots;          /* expert slots of the EP group (ep > 1) */
	double S;              /* routed experts (or slices) per GPU */
	double fx;             /* width of a routed expert on a GPU */
	double fd, fs;         /* dense and all-shared widths, per GPU */
	double wb, eb;         /* bytes per weight: linears, embeddings */
	double xb;             /* bytes per routed-expert weight */
	int ep;                /* N: experts split over the instance
	                          (EP); 1: sliced over its GPUs */
	int eg;                /* with ep 1: the expert groups the slices
	                          are cut within (serve_layout ep dividing
	                          tp; 1: every expert over every GPU) */
	int mla;
} shp;

void serve_shape(const gp_model *m, const serve_cfg *c,
                 const serve_layout *L, shp *s);

/* c->imbalance, or when it is modelled the skew a buffer is sized for
 * (serve.c): with EPLB SERVE_EPLB_SKEW, without it the placement's alone
 * (model_ep_skew_at with no chance term), as the runtimes ship. */
static inline double serve_skew(const serve_cfg *c, const shp *s)
{
	if (c->imbalance != SERVE_IMBALANCE_AUTO)
		return c->imbalance;
	if (c->eplb)
		return SERVE_EPLB_SKEW;
	return model_ep_skew_at(s->N, s->E / s->N, s->k, 0.0);
}

/* KV bytes one GPU holds for one sequence of ctx tokens in its attention
 * group (see serve.c); -1 when the model cannot size it. */
double serve_kv_rank(const gp_model *m, const serve_cfg *c, const shp *s,
                     double ctx);

/* serve_check_layout with the pool named in the message. */
int serve_check_layout_named(const gp_model *m, const serve_cfg *c,
                             const serve_layout *L, const char *pool,
                             gp_error *err);

#endif
