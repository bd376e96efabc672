/*
 * states.h - bytes per parameter of the model states (weights, grads,
 * master copy, optimizer states) by precision recipe and optimizer, and
 * the storage bits of quantised weights.
 *
 * Bytes per parameter of the model states (weights, grads, master copy,
 * optimizer states) by precision recipe, before any sharding:
 *
 *   recipe       weights grads master  AdamW m+v   total (AdamW)
 *   mixed-16     2 fp16  2 fp16  4 fp32  4+4 fp32  16  ZeRO paper
 *                (Rajbhandari et al. 2020, sec. 3.1: 2+2+K with K = 12)
 *   megatron-18  2 bf16  4 fp32  4 fp32  4+4 fp32  18  Megatron-LM
 *                distributed-optimizer docs: bf16 params with fp32 main
 *                grads, 18 B/param, 6 + 12/d with the distributed optimizer
 *   fp32         4       4       -       4+4 fp32  16  plain fp32 / AMP
 *                (autocast keeps fp32 weights and grads; casts per op)
 *   bf16         2       2       -       2+2 bf16   8  pure bf16 training
 *                (no master copy: optimizer states in the param dtype)
 *   fp8          2 bf16  4 fp32  4 fp32  4+4 fp32  19  fp8 compute as in
 *                Transformer Engine: bf16 params, the fp8 cast of each
 *                weight cached between micro-batches (+1), fp32 main
 *                grads, master and states (NVIDIA TE FP8 primer)
 *   deepspeed-bf16
 *                2 bf16  2+4     4 fp32  4+4 fp32  20  DeepSpeed's
 *                BF16_Optimizer (deepspeed/runtime/bf16_optimizer.py),
 *                which the engine picks for a bf16 model with fp32
 *                gradient accumulation at ZeRO stage 0 or 1 without
 *                offload (engine.py, _do_optimizer_sanity_check); it is
 *                the optimizer of Megatron-DeepSpeed bf16 runs.  Grads
 *                are 6 B: autograd's bf16 .grad (2, kept after backward:
 *                backward(clear_lp_grads=False)) plus a flat fp32
 *                accumulation buffer (4, zeros_like the whole flat bf16
 *                group, all-reduced in full over DP).  Sharding over DP:
 *                the fp32 master and the Adam states are partitioned at
 *                every stage, ZeRO 0 included (the optimizer is built on
 *                fp32_groups_flat_partition), so 8 + 12/d B/param; the
 *                bf16 params and both grads are never partitioned at
 *                ZeRO 0/1.  At ZeRO 2/3 DeepSpeed runs its ZeRO
 *                optimizer instead (stage_1_and_2.py / stage3.py): the
 *                bf16 grads are reduce-scattered into a partition and
 *                the fp32 grad exists only for the local partition
 *                (single_grad_partition ... .to(fp32) in step), so the
 *                6 B of grads shard with d; ZeRO 3 shards the params.
 *
 * Optimizers: adamw keeps two states (m, v) in the recipe's state dtype;
 * adam8bit keeps both in 8 bits with one fp32 absmax per 2048-element
 * block (Dettmers et al. 2022, "8-bit Optimizers via Block-wise
 * Quantization": 2 + 2*4/2048 B/param); sgd keeps one momentum buffer.
 */
#ifndef GP_STATES_H
#define GP_STATES_H

#include "common.h"

typedef enum gp_recipe {
	GP_RECIPE_MIXED16 = 0, GP_RECIPE_MEGATRON18, GP_RECIPE_FP32,
	GP_RECIPE_BF16, GP_RECIPE_FP8, GP_RECIPE_DSBF16, GP_RECIPE_COUNT
} gp_recipe;

typedef enum gp_optim {
	GP_OPT_ADAMW = 0, GP_OPT_ADAM8BIT, GP_OPT_SGD, GP_OPT_COUNT
} gp_optim;

/* Names ("mixed-16", "adamw") and their parsers (GP_OK or GP_EINVAL
 * naming the accepted values in err). */
const char *mem_recipe_name(gp_recipe r);
int mem_recipe_parse(const char *s, gp_recipe *out, gp_error *err);
const char *mem_optim_name(gp_optim o);
int mem_optim_parse(const char *s, gp_optim *out, gp_error *err);

/* Bytes per parameter of each model-state kind, unsharded. */
typedef struct gp_state_bytes {
	double weights, grads, master, optimizer;
	int master_shard0;  /* 1: master and optimizer states shard over
			     * DP even at ZeRO 0 (deepspeed-bf16) */
} gp_state_bytes;

/* Fill *out for a recipe and optimizer; GP_OK or GP_EINVAL. */
int mem_state_bytes(gp_recipe r, gp_optim o, gp_state_bytes *out,
		    gp_error *err);

/* Weight storage: bits per weight plus per-group overhead.
 * Effective bits = bits + group_bits / group (group 0: no groups).
 *   bf16: {16, 0, 0}.  int8 per-channel: ~{8, 0, 0}.
 *   NF4 + double quantisation (Dettmers et al. 2023, QLoRA, sec. 3):
 *     {4, 64, 8 + 32/256} -> 4 + 8.125/64 = 4.127 bits.
 *   GPTQ/AWQ int4, group 128, fp16 scale + 4-bit zero: {4, 128, 20}.
 *   GGUF-style bits-per-weight (Q4_K_M ~4.85): {4.85, 0, 0}. */
typedef struct gp_quant {
	double bits;
	int group;
	double group_bits;
} gp_quant;

/* Bytes of optimizer state per element an offloaded optimizer keeps on
 * the host (fp32 Adam or SGD states, or an 8-bit AdamW's). */
double mem_offload_state_bytes(gp_optim o);

/* Effective bits per weight, or -1 when q is invalid. */
double mem_quant_bits(const gp_quant *q);

#endif
