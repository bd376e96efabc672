/*
 * states.c - model-state bytes per recipe and optimizer, quantised weight
 * bits.  See states.h for the recipe table and its sources.
 */
#include "states.h"

#include <string.h>

static const char *const recipe_names[GP_RECIPE_COUNT] = {
	"mixed-16", "megatron-18", "fp32", "bf16", "fp8", "deepspeed-bf16"
};
static const char *const optim_names[GP_OPT_COUNT] = {
	"adamw", "adam8bit", "sgd"
};

const char *mem_recipe_name(gp_recipe r)
{
	return GP_NAME_OF(recipe_names, GP_RECIPE_COUNT, r);
}

int mem_recipe_parse(const char *s, gp_recipe *out, gp_error *err)
{
	int v;

	if (gp_parse_name(s, recipe_names, GP_RECIPE_COUNT, &v, "recipe",
			  err))
		return GP_EINVAL;
	*out = (gp_recipe)v;
	return GP_OK;
}

const char *mem_optim_name(gp_optim o)
{
	return GP_NAME_OF(optim_names, GP_OPT_COUNT, o);
}

int mem_optim_parse(const char *s, gp_optim *out, gp_error *err)
{
	int v;

	if (gp_parse_name(s, optim_names, GP_OPT_COUNT, &v, "optimizer", err))
		return GP_EINVAL;
	*out = (gp_optim)v;
	return GP_OK;
}

int mem_state_bytes(gp_recipe r, gp_optim o, gp_state_bytes *out,
		    gp_error *err)
{
	double state;   /* bytes of one optimizer-state element */
	double nstates; /* states per parameter */

	if (!out)
		return gp_fail(err, "mem_state_bytes: NULL output");
	out->master_shard0 = 0;
	switch (r) {
	case GP_RECIPE_MIXED16:
		/* ZeRO (Rajbhandari et al. 2020) sec. 3.1: fp16 params and
		 * grads 2 + 2, fp32 params, momentum, variance 4 + 4 + 4. */
		out->weights = 2; out->grads = 2; out->master = 4; state = 4;
		break;
	case GP_RECIPE_MEGATRON18:
		/* Megatron-LM distributed optimizer: bf16 params, fp32 main
		 * grads, fp32 main params, fp32 Adam states = 18. */
		out->weights = 2; out->grads = 4; out->master = 4; state = 4;
		break;
	case GP_RECIPE_FP32:
		out->weights = 4; out->grads = 4; out->master = 0; state = 4;
		break;
	case GP_RECIPE_BF16:
		/* Pure bf16: the optimizer updates the bf16 params directly
		 * and keeps its states in bf16. */
		out->weights = 2; out->grads = 2; out->master = 0; state = 2;
		break;
	case GP_RECIPE_FP8:
		/* Transformer Engine fp8: the bf16 param plus its cached
		 * fp8 cast (1 B), otherwise megatron-18. */
		out->weights = 3; out->grads = 4; out->master = 4; state = 4;
		break;
	case GP_RECIPE_DSBF16:
		/* DeepSpeed BF16_Optimizer (memory.h): bf16 params, bf16
		 * .grad (2) + flat fp32 accumulation buffer (4), fp32
		 * master partition, fp32 Adam states on that partition. */
		out->weights = 2; out->grads = 2 + 4; out->master = 4;
		state = 4;
		out->master_shard0 = 1;
		break;
	default:
		return gp_fail(err, "unknown recipe %d", (int)r);
	}
	switch (o) {
	case GP_OPT_ADAMW:
		nstates = 2;
		break;
	case GP_OPT_ADAM8BIT:
		/* Dettmers et al. 2022: two 8-bit states, one fp32 absmax
		 * per 2048-element block each. */
		nstates = 2;
		state = 1.0 + 4.0 / 2048.0;
		break;
	case GP_OPT_SGD:
		nstates = 1; /* momentum buffer */
		break;
	default:
		return gp_fail(err, "unknown optimizer %d", (int)o);
	}
	out->optimizer = nstates * state;
	return GP_OK;
}

/* Bytes of optimizer state per element an offloaded optimizer keeps on
 * the host: the mixed-16 recipe's fp32 states (the CPU optimizer steps
 * the fp32 master), an 8-bit AdamW's own. */
double mem_offload_state_bytes(gp_optim o)
{
	gp_state_bytes sb = {0};

	if (mem_state_bytes(GP_RECIPE_MIXED16, o, &sb, NULL))
		return 8.0;
	return sb.optimizer;
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
