/*
 * train_int.h - what the training step's files share: the working
 * state's short names, the physical constants more than one file
 * prices with, and each file's entry points (train_price.c,
 * train_layer.c, train_stage.c, train_prep.c) for train.c.  Helpers
 * on the sweep's per-layout path are static inline here.  Internal
 * to the engine's training model; the contract is train.h.
 */
#ifndef GP_TRAIN_INT_H
#define GP_TRAIN_INT_H

#include "train.h"

/* train_phase.h's types under train.c's short names. */
typedef train_env tenv;
typedef train_ctx ctx;
typedef train_scost scost;
typedef train_stage_rec stage_rec;
typedef struct train_phase phase;

/* Weight-gradient GEMMs accumulate into fp32 gradients (torch autocast
 * keeps an fp32 .grad; Megatron's gradient-accumulation fusion into an
 * fp32 main grad): read and write 4 bytes per weight element.  A main
 * grad of another dtype: train_prep.c train_wgrad_acc. */
#define WGRAD_ACC_BYTES 8.0

/* Megatron-Core's DDP holds the local main grads whole in its
 * ParamAndGradBuffer (megatron/core/distributed/param_and_grad_buffer.py):
 * the buffer the optimizer copies its fp32 gradients from (train_prep.c
 * opt_bytes_of) and the training loop zeroes whole at each step's start
 * (train.c phase_post).  The megatron stack's Transformer Engine modules
 * on fused kernels at ZeRO 0 or 1 -- its distributed optimizer shards
 * only the optimizer's states, as fsdp shard_grad_op with one gradient
 * sync a step does (zero 1's states and sends, gpuplan.memory's
 * sharding); at ZeRO 2/3 the gradient buffer is sharded (Megatron-FSDP
 * on this stack). */
static inline int train_ddp_buffer(const train_cfg *c, int zero)
{
	return c->te_modules && !c->eager && zero <= 1;
}

/* DeepSpeed's stage 2 with overlap_comm (overlap_grad_reduce on the
 * deepspeed stack): its memory holds a second flat gradient buffer
 * (memory.h ds_overlap_comm), so its memory has a ZeRO slot of its own,
 * ph->z[4]; every other term of the slot is the same as zero 2's (none
 * reads the overlap). */
static inline int train_ds_overlap_comm(const train_cfg *c, int zero)
{
	return c->mem.ds_zero && !c->fsdp && zero == 2 &&
		c->overlap_grad_reduce;
}

static inline struct zslot *train_zslot(phase *ph, const train_cfg *c,
					int zero)
{
	return &ph->z[train_ds_overlap_comm(c, zero) ? 4 : zero];
}

/* DeepSpeed's BF16_Optimizer (deepspeed/runtime/bf16_optimizer.py; the
 * recipe's reduce_phase), which DeepSpeed's engine picks for a bf16
 * model at ZeRO 0 (engine.py _configure_optimizer: "elif
 * self.bfloat16_enabled(): self.optimizer =
 * self._configure_bf16_optimizer(basic_optimizer)"; from 0.7.6,
 * _do_optimizer_sanity_check: at stage 0 while gradient accumulation
 * is fp32, the default there through 0.17.5, and under the pipeline
 * engine; at stage 1 only with grad_accum_dtype fp32 set and no
 * offload), keeps autograd's bf16 .grad and an fp32 buffer per
 * parameter, and after every micro-batch's backward folds the one into
 * the other: engine.backward calls "self.optimizer.backward(loss)",
 * whose update_hp_grads runs "hp_grad.data.add_(lp.grad.data.to(
 * hp_grad.dtype).view(hp_grad.shape))" for each parameter (the pipeline
 * engine's _exec_backward_pass calls update_hp_grads itself on every
 * stage but the last), on the compute stream, before the micro-batch's
 * gradients go back.  Per trained parameter: the cast reads 2 B and
 * writes 4, the add reads 4 + 4 and writes 4 -- 18 B a micro-batch.  Not
 * under LoRA (the adapters' few grads) nor offload (ZeRO-Offload's
 * optimizer instead). */
#define BF16_HP_ACC_BYTES 18.0

static inline int train_hp_acc(const train_cfg *c)
{
	return c->mem.recipe.reduce_phase && c->mem.lay.zero < 2 &&
		c->mem.lora_rank == 0 && !c->mem.llm_frozen &&
		!c->mem.offload_optimizer && !c->mem.offload_params &&
		!c->forward_only;
}

/* Whether c's layers run DeepSpeed stage 3's module hooks (train.h
 * ds_hooks, with a gathering layout: train_prep.c layer_key): a layer's
 * cost that reads the ZeRO stage. */
static inline int train_ds_hooks_cfg(const train_cfg *c)
{
	return c->eager && c->mem.lay.zero == 3 && !c->fsdp &&
		!c->zero3_per_param;
}

/* The ZeRO stage as a phase's key holds it (train_prep.c phase_key):
 * what of it the phase reads -- BF16_Optimizer's per-micro-batch pass
 * (train_hp_acc, stage_base) and DeepSpeed stage 3's hooks in the layer
 * costs (train_ds_hooks_cfg) -- so layouts that differ only there share
 * a phase, and no others. */
static inline int train_phase_zero(const train_cfg *c)
{
	return train_hp_acc(c) + 2 * train_ds_hooks_cfg(c);
}

/* A block-scaled cast that writes both copies -- the rowwise one and the
 * columnwise one the wgrad GEMM reads, each with its block scales -- runs
 * below the streaming rate; the rowwise one alone does not.  Measured on
 * B200 (NVIDIA Transformer Engine's MXFP8 quantize kernels: the "B200
 * (us)" column of ROCm/TransformerEngine PR #598's "Single Kernel
 * Optimization Results", CAST_ONLY, BF16 input 8192 x 8192 -- its
 * "Baseline" and "Optimized" columns are the ROCm kernels on AMD parts,
 * 41.63 / 38.0 and 86.60 / 56.6 us): rowwise 34.84 us, both 52.34 us.  At the catalog's B200 streaming rate (7.67 TB/s x 0.85) less
 * a memory-bound kernel's fixed 3.9 us (roofline.c ROOF_MEM_FILL) the
 * rowwise cast moves (34.84 - 3.9) us x 6.52 TB/s / 8192^2 = 3.006 B an
 * element -- the 2 read and 1 written priced, its scales (1/32 B) within
 * the measurement -- and the cast to both (52.34 - 3.9) x 6.52 / 8192^2
 * = 4.706 B where 2 + 1 + 1 are priced: 0.71 B an element more, the
 * columnwise pass's 32-row scale blocks and strided writes.  Taken for
 * Hopper's 1x128 blockwise casts too (the same two copies, TE's
 * quantize_transpose_vector_blockwise; not measured).  Priced on the
 * layers' input and dY casts (train_layer.c) and on the weights' cast
 * once per step (train.c). */
#define MXFP8_BOTH_EXTRA ((52.34e-6 - 3.9e-6) * 7.67e12 * 0.85 / \
			  (8192.0 * 8192.0) - 4.0)

/* Offload's links when the topology gives none: a PCIe 4.0 x16 link's
 * ~25 GB/s per direction achievable (16 GT/s x 16 lanes x 128b/130b x
 * 0.8, gpuplan.comm.pcie_bw), and host DRAM at 60 GB/s (0.8 of dual-
 * channel DDR5-4800, the workstation case; gpuplan.comm.host_bw gives a
 * catalog system's own). */
#define PCIE_BW_MIN 25e9
#define HOST_BW_MIN 60e9

/* ---- train_price.c: operators and collectives on the roofline ---- */

double train_t_op(const tenv *e, double flop, double bytes, double m,
		  double n, double k, double batch, gp_dtype p);
/* train_t_op for `batch` GEMMs whose m rows vary about their mean when
 * spread (the routed experts' tokens: roof_op.spread). */
double train_t_gemm(const tenv *e, double flop, double bytes, double m,
		    double n, double k, double batch, gp_dtype p, int spread);

double train_t_coll(tenv *e, gp_coll op, double bytes, const gp_group *g);

double train_attn_time(const tenv *e, const train_lkey *k, const gp_op *o,
		       int bwd);

/* cuDNN's FP8 attention on Hopper: its time over the 16-bit kernel's for
 * a call of L queries, forward (bwd 0) or backward (train_price.c). */
double train_attn_fp8_sm90(double L, int bwd);

/* A memory-bound op moving `bytes` in dtype p: train_t_op with no FLOP
 * and no GEMM shape, whose time the precision does not enter
 * (roof_mem_time). */
static inline double t_mem(const tenv *e, gp_dtype p, double bytes)
{
	(void)p;
	return bytes > 0 ? roof_mem_time(e->d, bytes, 1) : 0.0;
}

/* The stage code's shorthands, on the context's environment. */
static inline double op_time(const ctx *x, double flop, double bytes, double m,
			     double n, double k, double batch, gp_dtype p)
{
	return train_t_op(&x->e, flop, bytes, m, n, k, batch, p);
}

static inline double mem_time(const ctx *x, double bytes)
{
	return t_mem(&x->e, x->k.half, bytes);
}

/* B/s of this GPU's link to host memory, each way: the topology's
 * (nic_path_bw, the GPU's PCIe path), else PCIE_BW_MIN.  What the
 * offloads move over it: train.c offload_step, train_stage.c
 * kind_colls' parameter copies and ds_offload_accum.
 * Assumed: each GPU has that link to itself.  Where GPUs share a PCIe
 * switch's uplink to the CPU (an 8-GPU A100/H100 baseboard puts two
 * GPUs, and their NICs, behind each of four PCIe switches: nvidia-smi
 * topo shows the pair PIX to the same NICs), GPUs offloading at once
 * split that uplink and each gets less than this.  No catalog system
 * states its GPUs per PCIe switch (catalog/FORMAT.md's system has no
 * such field), so the rate is not divided: an offload's PCIe time on
 * such a node is a lower bound.  The host's DRAM, which every GPU of
 * the host does share, is divided (train.c offload_step, memory.h
 * mem_host_bw_each). */
static inline double host_link_bw(const ctx *x)
{
	return x->e.t.nic_path_bw > 0 ? x->e.t.nic_path_bw : PCIE_BW_MIN;
}

static inline double coll(ctx *x, gp_coll op, double bytes, const gp_group *g)
{
	return train_t_coll(&x->e, op, bytes, g);
}

/* ---- train_memo.c, train_layer.c: the layers' costs and their memo ---- */

int train_phase_layers(phase *ph, train_cache *cache);

/* train_layer.c: one layer's costs per micro-batch into *lc, a layer of
 * kind `kind` (a hybrid pattern's letter, model.h model_op_in: '-' a
 * dense layer, 'E' an MoE one, and of a hybrid stack 'M' a Mamba layer
 * and '*' an attention-only one), and the model's ends into ld's ends
 * fields; errors set e->bad (train_memo.c prices them once per layer
 * key). */
void train_layer_costs(tenv *e, const train_lkey *k, int kind,
		       train_lcost *lc);
void train_ends_costs(tenv *e, const train_lkey *k, train_lcost *ld);
/* train_layer.c: the parameter tensors of one decoder layer (moe: an MoE
 * layer's, its experts' and router's in place of the MLP's), as FSDP1's
 * views and ZeRO's gather copies count them. */
double train_layer_tensors(const gp_model *m, const train_lkey *k, int moe);

/* DeepSpeed's gradient buckets (train_stage.c): the reductions one layer's
 * k groups of cnt[i] gradients of w[i] elements issue in buckets of S
 * elements, the open bucket's share of S counted as a fraction. */
double train_ds_layer_buckets(double S, const double *w, const double *cnt,
			      int k);

/* ---- train_stage.c: the stages' costs, ZeRO and DP terms ---- */

/* Compute under communication runs slower: the collective's kernels
 * take SMs (NCCL: a CTA per channel, 16-32 channels; Transformer
 * Engine's Userbuffers 16-24 SMs of 132) and memory bandwidth from the
 * GEMMs beside them.  Measured over GPT and Llama training on A100,
 * H100, MI210 and MI250: overlap slows the computation by 18.9% on
 * average (40% at most), while still beating running the two one after
 * the other (arXiv 2507.03114, "Characterizing Compute-Communication
 * Overlap in GPU-Accelerated Distributed Deep Learning"). */
#define OVERLAP_SLOWDOWN 0.189

/* Seconds `comm` adds to the critical path when it runs beside `window`
 * seconds of compute: all of it when not overlapped; otherwise what the
 * window cannot hide plus the slowdown of the compute under it, `slow`
 * of each second hidden.  The hidden seconds are added to *hidden. */
static inline double overlap_at(double comm, double window, int on,
				double slow, double *hidden)
{
	double h;

	if (!on || comm <= 0)
		return comm > 0 ? comm : 0.0;
	h = comm < window ? comm : window;
	if (h < 0)
		h = 0;
	*hidden += h;
	return comm - h + slow * h;
}

/* overlap_at at the measured average slowdown. */
static inline double overlap(double comm, double window, int on, double *hidden)
{
	return overlap_at(comm, window, on, OVERLAP_SLOWDOWN, hidden);
}

/* The larger of two step terms (never NaN: fmax without its libm call). */
static inline double dmax(double a, double b)
{
	return a > b ? a : b;
}


/* Whether hybrid sharding replicates the shard groups across nodes
 * (layout.h hsdp): the dense group is larger than its shard. */
static inline int replicated(const ctx *x)
{
	return x->y.hsdp > 0 && x->y.shard < x->y.dp * (double)x->y.cp;
}

/* Whether ZeRO-3 / FSDP layers gather: over a sharding group, or from
 * the host (offloaded parameters, one GPU included) -- or, sharded in
 * a node of one rank, still reduce their gradients across the
 * replicas. */
static inline int gathers(const ctx *x)
{
	return x->y.shard > 1 || x->c->mem.offload_params || replicated(x);
}

/* Whether the pipeline's sends run under compute (overlap_p2p):
 * Megatron-Core's 1F1B overlaps none, whatever the flag: "if
 * config.overlap_p2p_comm: raise ValueError("Non-interleaved pipeline
 * parallelism does not support overlapping p2p communication")"
 * (pipeline_parallel/schedules.py forward_backward_pipelining_without_
 * interleaving, core_r0.8.0 to 2026), so a plan's or a job's 1F1B
 * layouts on the megatron stack (te_modules) expose their sends.  One
 * rule for the stages' exposed share (train_stage.c) and the fill and
 * drain's wait (train.c step_sum). */
static inline int p2p_hides(const train_cfg *c, const ctx *x)
{
	return c->overlap_p2p &&
	       !(c->te_modules && x->y.schedule == GP_SCHED_1F1B);
}

/* A ZeRO collective of the layers' `bytes` (nccl-tests convention: the
 * whole buffer) over the dense (expert = 0) or expert (1) sharding group
 * (train_stage.c): the DPCP / EDP group, or under hybrid sharding its
 * ranks in one node, a reduce-scatter then followed by the all-reduce of
 * the reduced shard across the replicas. */
double train_zero_coll_of(ctx *x, gp_coll op, double bytes, int expert);

/* Zero bytes cost nothing in any group (train_t_coll prices them at 0,
 * hybrid sharding's both collectives included): the ends' and the
 * experts' shares are zero on the stages and models without them. */
static inline double train_zero_coll(ctx *x, gp_coll op, double bytes,
				     int expert)
{
	return bytes <= 0 ? 0.0 : train_zero_coll_of(x, op, bytes, expert);
}

/* A stage's base with its ZeRO terms, and its total. */
static inline void stage_with(const scost *base,
			      const double z[TRAIN_ZB_N], scost *s)
{
	int i;

	*s = *base;
	s->part[TRAIN_ZERO] = z[TRAIN_ZB_ZERO];
	s->part[TRAIN_DP] = z[TRAIN_ZB_DP];
	s->hidden[TRAIN_ZERO] = z[TRAIN_ZB_ZERO_HID];
	s->hidden[TRAIN_DP] = z[TRAIN_ZB_DP_HID];
	s->t = 0;
	for (i = 0; i < TRAIN_NPARTS; i++)
		s->t += s->part[i];
}

/* stage_with's total alone: the sum in its order (the base's first
 * terms, then DP and ZeRO; the bubble and optimizer parts of a stage
 * are zero, and adding +0 changes no sum of non-negative terms). */
static inline double stage_total(const scost *base, const double z[TRAIN_ZB_N])
{
	return base->t05 + z[TRAIN_ZB_DP] + z[TRAIN_ZB_ZERO];
}

/* Which of a ZeRO slot's two block sets c's overlaps use at ZeRO stage
 * zero: the DP overlap as zero_block (train_stage.c) reads it.
 * overlap_param_gather is the phase's (phase_key keeps it), so within a
 * phase overlap_grad_reduce is the one overlap that moves.  zero_block
 * reads it alone in three places -- FSDP's backward (fsdp_bwd_overlap:
 * c->fsdp), the per-parameter path's reduction (per_param_block: zero 3
 * with zero3_per_param) and DeepSpeed stage 3's side streams
 * (ds_side_streams: zero 3, off FSDP, with an offloaded optimizer --
 * its ds_offload_accum is 0 without one, and it then returns its input
 * whatever the overlap) -- and everywhere else only through
 * fsdp_bwd_overlap's "either overlap on".  So the set is keyed by
 * overlap_grad_reduce alone where one of those three can read it, and
 * by "either overlap on" elsewhere, where a DP-overlap-off layout with
 * overlap_param_gather on gets the very blocks of its -on twin (each
 * block a function of what zero_block reads).  (An offloaded
 * optimizer keeps no phase between layouts today, train_prep.c
 * train_phase_get, so that term only keeps the rule whole.)  Keep this
 * in step with those three functions. */
static inline int block_set(const train_cfg *c, int zero)
{
	if (c->fsdp || (zero == 3 && (c->zero3_per_param ||
				      c->mem.offload_optimizer)))
		return c->overlap_grad_reduce != 0;
	return c->overlap_param_gather || c->overlap_grad_reduce;
}

/* The ZeRO terms of unsharded parameters and gradients: none. */
extern const double train_no_blocks[TRAIN_PHASE_STAGES][TRAIN_ZB_N];

int train_stage_dense(const gp_model *m, const gp_layout *y, int k,
		      int nl);

int train_phase_base(phase *ph, train_cache *cache, const scost **base);

int train_phase_blocks(phase *ph, const double (**blk)[TRAIN_ZB_N]);

/* ---- train_prep.c: a layout checked, placed, its phase opened ---- */

/* Whether ep_overlap hides the expert all-to-alls of a layout run with
 * schedule sched whose expert group of ep ranks is placed as g_ep
 * (train_prep.c). */
int train_ep_hides(const train_cfg *c, int sched, const gp_group *g_ep,
		   int ep);


int train_phase_get(const gp_model *m, const roof_device *d,
		    const gp_topo *t, const train_cfg *c, train_cache *cache,
		    int taken, int moved, int split, phase *local,
		    phase **php, gp_error *err);

#endif
