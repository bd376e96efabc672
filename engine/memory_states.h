/*
 * memory_states.h - bytes per parameter of the model states (weights, grads,
 * master copy, optimizer states) by precision recipe and optimizer, and
 * the storage bits of quantised weights.
 *
 * A recipe and an optimizer are records the catalog declares, each figure
 * with its source (catalog/recipes.lua, catalog/FORMAT.md): the kernels
 * only read them, so a new optimizer or precision recipe is a catalog
 * entry.  What the shipped recipes hold, per parameter before sharding:
 *
 *   recipe       weights grads master  AdamW m+v   total (AdamW)
 *   mixed-16     2 fp16  2 fp16  4 fp32  4+4 fp32  16  ZeRO paper
 *   megatron-18  2 bf16  4 fp32  4 fp32  4+4 fp32  18  Megatron-LM
 *   fp32         4       4       -       4+4 fp32  16  plain fp32 / AMP
 *   bf16         2       2       -       2+2 bf16   8  pure bf16 training
 *   fp8          2+1     4 fp32  4 fp32  4+4 fp32  19  Transformer Engine
 *   deepspeed-bf16
 *                2 bf16  2+4     4 fp32  4+4 fp32  20  DeepSpeed's
 *                BF16_Optimizer: master and states shard over DP at
 *                every ZeRO stage, ZeRO 0 included
 *
 * Optimizers: adamw keeps two states (m, v) in the recipe's state dtype;
 * adam8bit keeps both in 8 bits with one fp32 absmax per 2048-element
 * block (2 + 2*4/2048 B/param); sgd keeps one momentum buffer; muon
 * one momentum buffer on the hidden weight matrices, which it
 * orthogonalises by Newton-Schulz iterations each step (mem_ns_flops),
 * and AdamW's two on the embedding, the output layer and the norms.
 */
#ifndef GP_MEMORY_STATES_H
#define GP_MEMORY_STATES_H

#include "common.h"

/* A precision recipe (a catalog `recipe` entry).  Bytes per parameter
 * (B/param) unless said otherwise. */
typedef struct gp_recipe {
	double weights;      /* the training copy of the weights, > 0 */
	double grads;        /* the gradients as kept, > 0 */
	double master;       /* the fp32 master copy; 0 = none */
	double state;        /* B per optimizer-state element, > 0 */
	double reduce;       /* what a gradient reduction moves, > 0 */
	double act;          /* B per saved activation element, > 0 */
	double offload;      /* the trainable partition's dtype on the GPU
			      * when ZeRO-Offload moves the rest, > 0 */
	int master_shard0;   /* 1: master and optimizer states shard over
			      * DP even at ZeRO 0 (DeepSpeed BF16_Optimizer) */
	int reduce_phase;    /* 1: DeepSpeed's BF16_Optimizer reduce phase
			      * (its flat fp32 gradient buffers) under the
			      * DeepSpeed pipeline engine at ZeRO 0/1 */
} gp_recipe;

/* An optimizer (a catalog `optimizer` entry). */
typedef struct gp_optim {
	double states;       /* states per parameter (AdamW 2, SGD 1), > 0 */
	double state;        /* B per state element; 0 = the recipe's */
	int foreach_adamw;   /* 1: its unfused step is torch.optim.AdamW's
			      * foreach path (train.c prices its passes) */
	double scalar_states; /* states per parameter on the parameters
			       * that are not hidden weight matrices (the
			       * embedding, the output layer, the norms),
			       * which Muon hands to AdamW; 0 = states */
	int ns_steps;        /* Newton-Schulz iterations on each hidden
			      * weight matrix per step (Muon 5); 0: none */
	int dp_shard;        /* 1: whole parameters' master and states (and
			      * the Newton-Schulz work) shard over the
			      * data-parallel ranks at every ZeRO stage and
			      * the updated parameters are all-gathered
			      * after the step (Megatron-Core's dist_muon,
			      * LayerWiseDistributedOptimizer) */
} gp_optim;

/* Check a recipe and an optimizer: finite bytes in range (at most 64
 * B/param or B/element), the required ones positive.  GP_OK or
 * GP_EINVAL naming the field. */
int mem_recipe_check(const gp_recipe *r, const gp_optim *o, gp_error *err);

/* Bytes per parameter of each model-state kind, unsharded. */
typedef struct gp_state_bytes {
	double weights, grads, master, optimizer;
	int master_shard0;  /* 1: master and optimizer states shard over
			     * DP even at ZeRO 0 (deepspeed-bf16) */
	double scalar;      /* optimizer B/param on the parameters that are
			     * not hidden weight matrices (gp_optim
			     * scalar_states; = optimizer but under Muon) */
	int dp_shard;       /* gp_optim dp_shard */
} gp_state_bytes;

/* Fill *out for a recipe and optimizer that mem_recipe_check accepted
 * (optimizer = states x the optimizer's state bytes, else the
 * recipe's); GP_OK, or GP_EINVAL for a NULL argument. */
int mem_state_bytes(const gp_recipe *r, const gp_optim *o,
		    gp_state_bytes *out, gp_error *err);

/* FLOP of `steps` Newton-Schulz iterations on one rows x cols matrix, as
 * Muon runs them (Emerging-Optimizers muon_utils.py newton_schulz: the
 * matrix transposed so that its rows are the smaller dimension s of s x
 * l, then each step "A = X @ X.mT" (2 s^2 l), "B = torch.addmm(A, A, A,
 * alpha=c, beta=b)" (2 s^3) and "X = torch.addmm(X, B, X, alpha=1.0,
 * beta=a)" (2 s^2 l)): steps x 2 (2 s^2 l + s^3).  0 for a dimension
 * <= 0 or steps <= 0. */
double mem_ns_flops(double rows, double cols, int steps);

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

/* Bytes of optimizer state per parameter an offloaded optimizer keeps on
 * the host: its states at its own element bytes (an 8-bit AdamW's), else
 * fp32 (the CPU optimizer steps the fp32 master). */
double mem_offload_state_bytes(const gp_optim *o);

/* Effective bits per weight, or -1 when q is invalid. */
double mem_quant_bits(const gp_quant *q);

#endif
