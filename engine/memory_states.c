/*
 * memory_states.c - model-state bytes of a recipe and optimizer record, quantised
 * weight bits.  The records and their sources are catalog data
 * (catalog/recipes.lua); see memory_states.h.
 */
#include "memory_states.h"

#include <stddef.h>

/* The most bytes a parameter or state element takes in any format: an
 * fp64 value is 8; 64 leaves room for a recipe of several copies and
 * keeps every product finite. */
#define STATE_MAX_BYTES 64.0
/* Newton-Schulz iterations a step at most: Muon runs 5 (Keller Jordan's
 * Muon, Megatron-Core muon_num_ns_steps 5); the longest schedule
 * Emerging-Optimizers ships is 10 (its "deepseekv4" coefficients). */
#define NS_STEPS_MAX 100

/* In (0, 64] (positive) or [0, 64]: NaN fails both comparisons and
 * infinity the bound, so no finiteness test is needed (the config
 * checks run this for every layout a sweep prices). */
static int bytes_ok(double v, int positive)
{
	return (positive ? v > 0.0 : v >= 0.0) && v <= STATE_MAX_BYTES;
}

int mem_recipe_check(const gp_recipe *r, const gp_optim *o, gp_error *err)
{
	static const struct {
		const char *name;
		size_t off;
		int positive;
	} f[] = {
		{"weights", offsetof(gp_recipe, weights), 1},
		{"grads", offsetof(gp_recipe, grads), 1},
		{"master", offsetof(gp_recipe, master), 0},
		{"state", offsetof(gp_recipe, state), 1},
		{"reduce", offsetof(gp_recipe, reduce), 1},
		{"activations", offsetof(gp_recipe, act), 1},
		{"offload", offsetof(gp_recipe, offload), 1},
	};
	size_t i;

	if (!r || !o)
		return gp_fail(err, "no recipe or optimizer");
	for (i = 0; i < sizeof f / sizeof f[0]; i++) {
		double v = *(const double *)((const char *)r + f[i].off);

		if (!bytes_ok(v, f[i].positive))
			return gp_fail(err, "recipe %s must be %s %g bytes "
				       "(got %g)", f[i].name, f[i].positive ?
				       "in (0," : "in [0,", STATE_MAX_BYTES,
				       v);
	}
	if (!(o->states > 0.0 && o->states <= 16.0))
		return gp_fail(err, "optimizer states must be in (0, 16] per "
			       "parameter (got %g)", o->states);
	if (!bytes_ok(o->state, 0))
		return gp_fail(err, "optimizer state must be in [0, %g] bytes "
			       "(got %g)", STATE_MAX_BYTES, o->state);
	if (!(o->scalar_states >= 0.0 && o->scalar_states <= 16.0))
		return gp_fail(err, "optimizer scalar_states must be in [0, 16] "
			       "per parameter (got %g)", o->scalar_states);
	if (o->ns_steps < 0 || o->ns_steps > NS_STEPS_MAX)
		return gp_fail(err, "optimizer ns_steps must be in [0, %d] "
			       "(got %d)", NS_STEPS_MAX, o->ns_steps);
	return GP_OK;
}

int mem_state_bytes(const gp_recipe *r, const gp_optim *o,
		    gp_state_bytes *out, gp_error *err)
{
	/* r and o are checked records (mem_recipe_check, which the config
	 * checks run once): the sweep calls this for every layout. */
	if (!out || !r || !o)
		return gp_fail(err, "mem_state_bytes: NULL argument");
	out->weights = r->weights;
	out->grads = r->grads;
	out->master = r->master;
	out->optimizer = o->states * (o->state > 0.0 ? o->state : r->state);
	out->master_shard0 = r->master_shard0;
	out->scalar = (o->scalar_states > 0.0 ? o->scalar_states : o->states) *
		(o->state > 0.0 ? o->state : r->state);
	out->dp_shard = o->dp_shard;
	return GP_OK;
}

double mem_ns_flops(double rows, double cols, int steps)
{
	double s = rows < cols ? rows : cols, l = rows < cols ? cols : rows;

	if (!(s > 0.0) || steps <= 0)
		return 0.0;
	return steps * 2.0 * (2.0 * s * s * l + s * s * s);
}

/* Bytes of optimizer state per parameter an offloaded optimizer keeps on
 * the host: DeepSpeed's CPU optimizer steps the fp32 master with fp32
 * states (4 B per element, mixed-16's), an optimizer with its own element
 * bytes (an 8-bit AdamW, torchao's AdamW8bit) keeps those. */
double mem_offload_state_bytes(const gp_optim *o)
{
	return o->states * (o->state > 0.0 ? o->state : 4.0);
}

double mem_quant_bits(const gp_quant *q)
{
	if (!q || !gp_finite(q->bits) || q->bits <= 0 || q->bits > 32 ||
	    q->group < 0 || !gp_finite(q->group_bits) || q->group_bits < 0)
		return -1.0;
	if (q->group == 0)
		return q->bits;
	return q->bits + q->group_bits / q->group;
}
