/*
 * memory_int.h - what the memory model's files share: the reserve check
 * and the finish every breakdown ends with, the small stage helpers, the
 * per-layout activation record (stage_acts) and each file's entry
 * points for the others.  Helpers on the sweep's per-layout path are
 * static inline here.  Internal to the engine's memory model; the
 * contract is memory.h.
 */
#ifndef GP_MEMORY_INT_H
#define GP_MEMORY_INT_H

#include "memory.h"

#include <math.h>
static inline int dflt(int v)
{
	return v > 0 ? v : 1;
}

static inline int check_reserve(const gp_mem_reserve *r, double capacity,
				gp_error *err)
{
	if (gp_check_pos(capacity, "capacity", err))
		return GP_EINVAL;
	if (!r)
		return gp_fail(err, "reserve: NULL");
	if (gp_check_nonneg(r->context, "reserve.context", err) ||
	    gp_check_nonneg(r->workspace, "reserve.workspace", err) ||
	    gp_check_nonneg(r->comm, "reserve.comm", err) ||
	    gp_check_nonneg(r->frag, "reserve.frag", err) ||
	    gp_check_nonneg(r->margin, "margin", err))
		return GP_EINVAL;
	if (r->margin >= 1.0)
		return gp_fail(err, "margin must be below 1 (got %g)",
			       r->margin);
	return GP_OK;
}

/* finish_sum's order: the tensors, the four reserves, the paged states
 * last. */
typedef char paged_after_reserves[GP_MEM_PAGED == GP_MEM_NCOMP - 1 &&
	GP_MEM_FRAG == GP_MEM_PAGED - 1 &&
	GP_MEM_CONTEXT == GP_MEM_NTENSOR ? 1 : -1];

/* The index of the largest component that counts (the paged states
 * do not), the earliest of equals. */
static inline int largest_of(const double *b)
{
	double top = b[0];
	int i, largest = 0;

	for (i = 0; i < GP_MEM_PAGED; i++)
		if (b[i] > top) {
			top = b[i];
			largest = i;
		}
	return largest;
}

/* mem_finish with the tensors' sum (their bytes added in order) known;
 * finish_fit without the largest component (left as it was: a caller
 * that reads the total and the fit alone skips its scan). */
static inline void finish_pick(gp_mem_result *o, double sum,
			       double capacity, const gp_mem_reserve *r,
			       double pooled, int pick)
{
	double *b = o->bytes;
	int i;

	o->allocated = sum;
	b[GP_MEM_CONTEXT] = r->context;
	b[GP_MEM_LIBWS] = r->workspace;
	b[GP_MEM_COMM] = r->comm;
	b[GP_MEM_FRAG] = r->frag * (sum - pooled);
	/* The total: every component in order but the paged optimizer
	 * states, which live in CUDA managed memory that the driver evicts
	 * to the host under pressure (the point of bitsandbytes' paged
	 * optimizers): shown, but they never make a job fail to fit.  The
	 * tensors come first (their sum is sum); the reserves follow. */
	for (i = GP_MEM_NTENSOR; i < GP_MEM_PAGED; i++)
		sum += b[i];
	o->total = sum;
	if (pick)
		o->largest = largest_of(b);
	o->capacity = capacity;
	o->margin = r->margin * capacity;
	o->budget = mem_budget(capacity, r);
	o->usable = o->budget - mem_fixed_reserve(r);
	o->short_by = o->total - o->budget;
	o->fits = o->total <= o->budget;
}

static inline void finish_sum(gp_mem_result *o, double sum, double capacity,
			      const gp_mem_reserve *r, double pooled)
{
	finish_pick(o, sum, capacity, r, pooled, 1);
}

static inline void finish_fit(gp_mem_result *o, double sum, double capacity,
			      const gp_mem_reserve *r, double pooled)
{
	finish_pick(o, sum, capacity, r, pooled, 0);
}

static inline void finish(gp_mem_result *o, double capacity,
			  const gp_mem_reserve *r)
{
	mem_finish(o, capacity, r, 0.0);
}

/* Parameters of the ViT tower alone (the projector excluded). */
static inline double tower_params(const gp_model *m, const gp_params *p)
{
	double t = p->vision - m->vision.projector_params;

	return t > 0 ? t : 0;
}

static inline int stage_layers(const gp_model *m, const gp_layout *y, int k)
{
	return layout_stage_layers(y, m->layers, k);
}

/* What every pipeline stage of one layout shares, computed once per
 * layout (train_core): the saved activations of a dense and of an MoE
 * layer, what the first layer saves less when its input needs no grad,
 * and the vision tower's terms. */
typedef struct stage_acts {
	gp_act_layer al, alm;   /* dense, MoE layer (alm = al if none) */
	double A;               /* bytes per activation element */
	double act_layer;       /* average layer, dense-first MoE mixed */
	double first_less;      /* first layer of a frozen base */
	double vis, vis_full;   /* vision_act: saved, re-run working set */
	/* Encoder-decoder: an encoder layer, and what the stacks keep
	 * beyond their layers (encdec_acts) */
	gp_act_layer ale;
	double enc_extra;
	int nmoe, ndense;
	/* A hybrid stack (m->pattern): its Mamba and attention-only
	 * layers (mem_act_kind 'M', '*') and their counts; al and alm are
	 * then its - and E layers, ndense and nmoe their counts. */
	gp_act_layer alx[2];
	int nx[2];
} stage_acts;

/* ---- memory_layout.c: a training config's checks and stage split ---- */

int mem_check_train_cfg(const gp_model *m, const gp_train_cfg *c,
			gp_layout *y, int model_checked, int cfg_checked,
			gp_error *err);

static inline int check_train(const gp_model *m, const gp_train_cfg *c,
			      gp_layout *y, gp_error *err)
{
	return mem_check_train_cfg(m, c, y, 0, 0, err);
}

void mem_stage_split(const gp_model *m, const gp_train_cfg *c,
		     const gp_params *p, gp_layout *y);

/* ---- memory_stage_act.c: a layout's saved activations and their memo ---- */

void mem_acts_key_of(const gp_model *m, const gp_train_cfg *c,
		     const gp_layout *y, gp_acts_key *k);

int mem_stage_acts_of(const gp_model *m, const gp_acts_key *k,
		      stage_acts *sa, gp_error *err);

int mem_memo_acts(const gp_model *m, const gp_train_cfg *c,
		  const gp_layout *y, gp_mem_memo *mm, stage_acts *buf,
		  const stage_acts **sap, gp_error *err);

/* ---- memory_deepspeed.c: DeepSpeed's engines' own buffers ---- */

/* The pipeline engine's stage buffers (bytes) of a stage with inflight
 * micro-batches of tok tokens, A bytes an activation element. */
double mem_ds_pipe_buffers(const gp_model *m, const gp_train_cfg *c,
			   const gp_layout *y, double tok, double A,
			   double inflight, int first, int last);
/* The gradient reduction's moment when it is a stage's peak: o's
 * components replaced by it (mine: the stage's parameters on one GPU). */
void mem_ds_reduce_phase(const gp_model *m, const gp_train_cfg *c,
			 const gp_layout *y, double tok, double A,
			 double mine, int first, int last, gp_mem_result *o);
/* DeepSpeed's ZeRO optimizer at stage 2 or 3: its 16-bit gradient
 * partition in the backward, or the step's fp32 gradient without the
 * activations when that is the larger (o's grads sized by the recipe's
 * sb->grads; bucket: the flat bucket's bytes the step keeps). */
void mem_ds_zero_phases(const gp_train_cfg *c, const gp_state_bytes *sb,
			double bucket, gp_mem_result *o);
/* DeepSpeed's FP16 optimizer without ZeRO: the step's fp32 gradient
 * beside the whole 16-bit one when that is the larger phase. */
void mem_ds_fp16_step(const gp_train_cfg *c, const gp_state_bytes *sb,
		      gp_mem_result *o);
/* ZeRO-3 on a model that arrives whole (ds_whole_init): the moment the
 * engine holds it whole on the GPU, when that is the larger (whole: its
 * elements; first: the elements of the first parameter's partition). */
void mem_ds_whole_init(const gp_train_cfg *c, const gp_state_bytes *sb,
		       double whole, double first, gp_mem_result *o);
/* ZeRO-Offload's host bytes and GPU buffers into o: tr trainable
 * elements of the partition, pb bytes of their dtype, big the largest
 * trainable tensor (elements). */
void mem_ds_offload(const gp_train_cfg *c, double tr, double pb,
		    double big, gp_mem_result *o);

#endif
