/*
 * serve_int.h - what serve.c, serve_step.c and serve_plan.c share: the
 * shape of a layout on a model.  Internal to the engine's serving model;
 * the contract is serve.h.
 */
#ifndef GP_SERVE_INT_H
#define GP_SERVE_INT_H

#include "serve.h"

/* The hottest GPU's routed tokens / the mean that EPLB leaves over
 * many steps, with 32 redundant slots: TensorRT-LLM tech blog 4 ("Scaling
 * Expert Parallelism", reproducing steps: the imbalance-ratio, max / mean
 * - 1, of the counts accumulated over iterations 100-200 drops to 0.115
 * with the EPLB placement, DeepSeek-R1 at EP36). */
#define SERVE_EPLB_SKEW 1.11

/* c->imbalance, or SERVE_EPLB_SKEW when it is modelled: the skew a
 * buffer is sized for (serve.c). */
static inline double serve_skew(const serve_cfg *c)
{
	return c->imbalance == SERVE_IMBALANCE_AUTO ? SERVE_EPLB_SKEW :
		c->imbalance;
}

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

/* KV bytes one GPU holds for one sequence of ctx tokens in its attention
 * group (see serve.c); -1 when the model cannot size it. */
double serve_kv_rank(const gp_model *m, const serve_cfg *c, const shp *s,
                     double ctx);

/* serve_check_layout with the pool named in the message. */
int serve_check_layout_named(const gp_model *m, const serve_cfg *c,
                             const serve_layout *L, const char *pool,
                             gp_error *err);

#endif
