/*
 * layout.h - the parallel layout of a training job: degrees, schedule,
 * micro-batching, the pipeline stage split, and where each dimension's
 * groups sit on the nodes.
 *
 * A layout of tp * cp * dp * pp ranks (the expert layers fold their own
 * etp * ep * edp grid over the tp * cp * dp ranks of each stage, as
 * Megatron-Core's MoE parallel folding does) is checked once by
 * layout_check, which also fills the derived fields.  The stage split
 * (layout_split) and the placement of each dimension's groups
 * (layout_place) are computed from a checked layout.  Caller-owned
 * structs; GP_OK or GP_EINVAL with the reason in err; nothing allocates.
 */
#ifndef GP_LAYOUT_H
#define GP_LAYOUT_H

#include <stdio.h>
#include <string.h>
#include "comm.h"
#include "common.h"
#include "model.h"

/* DUALPIPE: DeepSeek-V3's bidirectional schedule (report arXiv:
 * 2412.19437 sec. 3.2.1, Table 2): rank r holds stages r and pp-1-r,
 * micro-batches fed from both ends (memory_train.c, train.c). */
typedef enum gp_schedule {
	GP_SCHED_1F1B = 0, GP_SCHED_INTERLEAVED, GP_SCHED_DUALPIPE,
	GP_SCHED_COUNT
} gp_schedule;

/* Pipeline engine: what a stage holds between a micro-batch's forward
 * and its backward besides the layers' saved tensors (memory_train.c,
 * train_stage).  megatron: Megatron-LM's schedules, which pseudo-free
 * each sent output; deepspeed: DeepSpeed's PipelineEngine, which keeps
 * one output buffer per micro-batch in flight. */
typedef enum gp_pipe_engine {
	GP_PIPE_MEGATRON = 0, GP_PIPE_DEEPSPEED, GP_PIPE_COUNT
} gp_pipe_engine;

/* How layers are assigned to pipeline stages (layout_split).
 *  auto        by the pipeline engine: megatron -> uniform, deepspeed ->
 *              parameters (PipelineModule's default partition_method)
 *  uniform     L/p layers, the first L mod p stages one more (Megatron-LM
 *              requires p | L; DeepSpeed's partition_uniform)
 *  parameters  DeepSpeed's partition_balanced over each layer's trainable
 *              parameters: the embedding counts on the first stage, the
 *              output layer or the tied embedding copy on the last
 *  type:transformer            balanced over transformer layers only
 *              (Megatron-DeepSpeed GPTModelPipe's default)
 *  type:transformer|embedding  layers, the embedding and the tied copy
 *              weigh one each (the BLOOM-176B run)
 * The embedding always sits on the first stage and the output layer (or
 * tied copy) on the last. */
typedef enum gp_partition {
	GP_PART_AUTO = 0, GP_PART_UNIFORM, GP_PART_PARAMETERS,
	GP_PART_TYPE_LAYER, GP_PART_TYPE_EMB, GP_PART_COUNT
} gp_partition;

/* The dimensions of the rank grid, and the groups collectives run on.
 * MoE parallel folding (Megatron-Core, parallel_state.py: a second
 * RankGenerator for the experts with tp = etp, cp = 1, ep, dp = edp
 * and the same order and pp): the expert layers' grid is etp x ep x edp
 * over the same tp * cp * dp ranks of a stage, etp * ep * edp = tp * cp
 * * dp.  In the rank order, etp sits where tp does, ep and then edp
 * where dp does (cp is 1 in it).  With etp = tp (Megatron's default:
 * megatron/training/arguments.py sets expert_tensor_parallel_size to
 * tensor_model_parallel_size when it is not given, and parallel_state.py
 * builds the expert grid with it) EP is carved out of cp * dp, the
 * layout before folding.  DPCP is the
 * data-parallel group with context parallelism folded in, over which
 * gradients are reduced and ZeRO shards the dense states; EDP is the
 * experts' (their gradients and ZeRO shards). */
typedef enum gp_dim {
	GP_DIM_TP = 0, GP_DIM_CP, GP_DIM_DP, GP_DIM_PP, GP_DIM_COUNT
} gp_dim;

typedef enum gp_grp {
	GP_GRP_TP = 0, GP_GRP_CP, GP_GRP_DP, GP_GRP_PP, GP_GRP_EP,
	GP_GRP_EDP, GP_GRP_DPCP, GP_GRP_ETP, GP_GRP_COUNT
} gp_grp;

/* The layers each pipeline stage holds, first to last, as a job states
 * them (gp_layout.stages): nanotron's build_model balances its blocks by
 * compute cost (models/base.py, "# Balance compute across PP blocks"),
 * giving splits such as 9, 9, 8, 6 that Megatron-Core's uneven ends
 * (first_stage_layers, last_stage_layers: the middle stages even) cannot
 * state; Megatron-Core's pipeline_model_parallel_layout states any
 * ("Et*4|(t*4|)*14tmL").  n 0: none given (the partition rule, or the
 * ends).  Under interleaving an entry is a rank's total over its model
 * chunks, as first_stage_layers is (layout.c chunk_before). */
/* 128 entries: twice the deepest pipeline of a published run among the
 * validation cases (Megatron-LM's 1T-parameter GPT at pipeline parallel
 * size 64, Korthikanti et al., arXiv 2205.05198 Table 5: case
 * korthikanti2022-1t-full-recompute).
 *
 * The entries are not held in the layout: a layout (and the train_cfg
 * around it) is copied for every job:step and every layout a sweep
 * visits, and compared byte by byte as the phase memo's key
 * (train_prep.c phase_key), so a list held in place (128 ints, 516
 * bytes) made every copy and every comparison pay for it, given or not
 * (bench/bench.lua's lua_sweep: 834k-883k evaluations a second before
 * the list, 616k-833k with it).  The layout keeps the count and a
 * pointer into a store its caller owns (gp_stage_store: the binding's
 * job userdata for a job's own list, the C stack of the call for a
 * step's or a one-off's), which must outlive every layout that points
 * into it; a copy of the layout shares the store.  A memo that keeps a
 * layout past its caller's call keeps its own copy of the entries
 * (train_prep.c: the phase's key_list and rec_v) and compares lists by
 * their entries (layout_stage_list_same), never by the pointer.  n 0
 * has v NULL. */
#define GP_STAGE_LIST_MAX 128
typedef struct gp_stage_list {
	int n;
	const int *v;            /* n entries in the caller's store (NULL
				  * when n is 0) */
} gp_stage_list;

/* Where a list's entries live: owned by whoever owns the layouts that
 * point into it (STYLE.md rule 3: no hidden allocation, no globals). */
typedef struct gp_stage_store {
	int v[GP_STAGE_LIST_MAX];
} gp_stage_store;

/* "9,9,8,6" into *store, *out pointing at it: whole decimal numbers
 * >= 1, at most GP_STAGE_LIST_MAX; "" is none (n 0, v NULL; store not
 * read and may be NULL).  GP_OK or GP_EINVAL naming the entry (*out
 * then none, *store as it was).  The count and the sum are the layout's
 * to check (memory_layout.c stage_ends_check: pp entries, the model's
 * layers). */
int layout_stage_list_parse(const char *s, gp_stage_store *store,
			    gp_stage_list *out, gp_error *err);

/* The n entries v[0..n) (0 <= n <= GP_STAGE_LIST_MAX; v not kept, and
 * may be store->v itself) copied into *store, *out pointing at it.
 * GP_OK, or GP_EINVAL when n is out of range or a list has no store
 * (*out then none). */
int layout_stage_list_set(const int *v, int n, gp_stage_store *store,
			  gp_stage_list *out, gp_error *err);

/* 1 when a and b hold the same entries (the count, then the n ints),
 * wherever each is stored; two lists of none are the same. */
static inline int layout_stage_list_same(const gp_stage_list *a,
					 const gp_stage_list *b)
{
	return a->n == b->n &&
		(a->n == 0 || a->v == b->v ||
		 memcmp(a->v, b->v, sizeof *a->v * (size_t)a->n) == 0);
}

typedef struct gp_layout {
	/* Given by the caller; a degree of 0 reads as 1. */
	int tp, pp, dp, cp, ep;
	int etp;                 /* expert tensor parallel; 0 = tp */
	int vpp;                 /* model chunks per stage (interleaved) */
	int zero;                /* 0..3 over dp * cp; FSDP full shard = 3 */
	int sp;                  /* 1: sequence parallel over the TP group */
	int hsdp;                /* hybrid sharding (PyTorch FSDP's
				  * HYBRID_SHARD): the ZeRO 2/3 states
				  * shard over the dp * cp ranks inside
				  * one node of this many GPUs (the edp
				  * ranks for experts) and are replicated
				  * across nodes; 0 = over the whole group */
	gp_schedule schedule;
	int ends;                /* slots of the pipeline split beyond the
				  * layers: 2 when the embedding and the
				  * loss each take a layer's place
				  * (gp_train_cfg split_ends), else 0 */
	double micro_batch;      /* sequences per micro-batch, > 0 */
	double microbatches;     /* micro-batches of one pipeline schedule
				  * call per pipeline: the step's, unless
				  * pp_microbatches splits the step into
				  * calls (gp_train_cfg accum_microbatches
				  * then counts the step's); 0 = not known
				  * (memory: >= pp in flight) */
	/* Rank order, innermost first: a permutation of the gp_dim values
	 * (Megatron-LM's default tp-cp-ep-dp-pp is TP, CP, DP, PP).  All
	 * zero reads as that default. */
	unsigned char order[GP_DIM_COUNT];
	gp_stage_list stages;    /* the layers of each stage, given (n 0:
				  * by the partition rule or the ends) */
	/* Filled by layout_check: */
	double gpus;             /* tp * cp * dp * pp */
	double shard;            /* dense ZeRO group: dp * cp, or its
				  * ranks in one node under hsdp */
	double eshard;           /* expert ZeRO group, edp:
				  * tp * cp * dp / (etp * ep), or its
				  * ranks in one node under hsdp */
	/* Filled by layout_split: stage 0 takes n0 layers, the next ones
	 * m each, the last the rest (balanced 1), or uniform (0); balanced
	 * 2: stage k holds stages.v[k] (mem_stage_split, a list given). */
	int balanced, n0, m;
} gp_layout;

/* Names ("1f1b", "megatron", "uniform") and parsers (GP_OK or GP_EINVAL
 * naming the accepted values in err). */
const char *mem_schedule_name(gp_schedule s);
int mem_schedule_parse(const char *s, gp_schedule *out, gp_error *err);
const char *mem_pipe_name(gp_pipe_engine p);
int mem_pipe_parse(const char *s, gp_pipe_engine *out, gp_error *err);
const char *mem_partition_name(gp_partition p);
int mem_partition_parse(const char *s, gp_partition *out, gp_error *err);
const char *layout_grp_name(gp_grp g);

/* Parse a rank order "tp-cp-ep-dp-pp" (innermost first; each of tp, cp,
 * dp, pp once, ep optional and placed by the rule above) into order[].
 * GP_OK or GP_EINVAL naming the problem. */
int layout_order_parse(const char *s, unsigned char order[GP_DIM_COUNT],
		       gp_error *err);

/* The parameters a rank holds of a stage's dense and expert ones under
 * ZeRO stage zero: its shard where ZeRO 3 / FSDP shard the parameters
 * themselves (y's dense and expert shard groups), else all of them (ZeRO
 * 1-2 shard the optimizer's states, not the module's parameters).  ema's
 * average covers these: its memory (memory_train.c stage_ema) and its
 * update (train.c ema_params). */
static inline double layout_held_params(int zero, const gp_layout *y,
					double dense, double expert)
{
	return zero == 3 ? dense / y->shard + expert / y->eshard :
		dense + expert;
}

/* Each dimension's rule against the model, once: layout_check words
 * its errors from these, and the layout search (sweep.c) skips what
 * they refuse.  Degrees >= 1.
 *  tp   divides the heads, and tp and kv_heads divide one or the other
 *       (KV heads are replicated when tp > kv_heads);
 *  pp   at most the layers;
 *  vpp  chunks per stage: 1, or with pp > 1 and pp * vpp <= layers;
 *  ep   1, or on an MoE model dividing its experts, with etp * ep
 *       dividing the tp * cp * dp ranks of a stage the expert grid
 *       folds over (Megatron-Core's MoE parallel folding). */
static inline int layout_heads_tp_ok(int heads, int kv_heads, int tp)
{
	return heads % tp == 0 && (kv_heads % tp == 0 || tp % kv_heads == 0);
}

/* The rule above on a model: every command's (layout_check, the search,
 * serving; gpuplan.serve words it for an ep that sets tp, through
 * core.heads_tp_ok). */
static inline int layout_tp_ok(const gp_model *m, int tp)
{
	return layout_heads_tp_ok(m->heads, m->kv_heads, tp);
}

static inline int layout_pp_ok(const gp_model *m, int pp)
{
	return pp <= m->layers;
}

static inline int layout_vpp_ok(const gp_model *m, int pp, int vpp)
{
	return vpp <= 1 || (pp > 1 && (double)pp * vpp <= m->layers);
}

/* DualPipe's rules, as its code asserts them (deepseek-ai/DualPipe
 * dualpipe/dualpipe.py DualPipe.step: "assert num_ranks % 2 == 0" and
 * "assert num_chunks > 0 and num_chunks % 2 == 0 and num_chunks >=
 * num_ranks * 2", half the chunks fed from each end): an even pp of 2
 * or more, one chunk a stage (a rank's two are stage r and pp - 1 - r,
 * no vpp), and the step's micro-batches per pipeline (per; 0: not known
 * here) an even count of at least 2 pp.  One rule for gp.train
 * (layout_check, train_prep.c) and the search (sweep.c ok_sched). */
static inline int layout_dualpipe_ok(int pp, int vpp, double per)
{
	return pp >= 2 && pp % 2 == 0 && vpp <= 1 &&
		(per == 0 || (per >= 2.0 * pp && per / 2 == (long long)(per / 2)));
}

/* Megatron-Core's uneven pipeline split (num_layers_in_first_ and
 * _last_pipeline_stage; f, l: 0 when not given, both 0 fits any pp): the
 * ends on pipeline stages (pp >= 2), the other stages sharing the rest
 * of the model's layers evenly, one at least ("number of layers at
 * middle stage ... must be divisible by the middle pipeline model
 * parallel size", TransformerConfig __post_init__), two ends alone
 * holding them all.  One rule for gp.train (memory_layout.c
 * stage_ends_check words why) and the search (sweep.c ok_pp). */
static inline int layout_ends_ok(int layers, int pp, int f, int l)
{
	int mid = pp - (f > 0) - (l > 0);
	long long rest = (long long)layers - f - l;

	if (f == 0 && l == 0)
		return 1;
	if (f < 0 || l < 0 || pp < 2 || rest < 0)
		return 0;
	if (mid == 0)
		return rest == 0;
	return rest >= mid && rest % mid == 0;
}

/* split_ends (the embedding and the loss each take a layer's place in
 * the split): the layers and the two ends divide over pp >= 2 stages,
 * and a stage's slots into its vpp model chunks (Megatron-Core's
 * TransformerConfig check "must be divisible by
 * pipeline_model_parallel_size").  One rule for gp.train
 * (memory_layout.c split_ends_check words why) and the search (sweep.c
 * job_pp_ok with vpp 1, ok_vpp with the chunks). */
static inline int layout_split_ends_ok(int layers, int pp, int vpp)
{
	int slots = layers + 2;

	return pp >= 2 && slots % pp == 0 &&
		(vpp <= 1 || (slots / pp) % vpp == 0);
}

/* The ends given (f, l > 0 where stated) as the messages name them:
 * "first_stage_layers 3 and last_stage_layers 2", or the one given. */
static inline void layout_ends_words(char *buf, size_t n, int f, int l)
{
	if (f > 0 && l > 0)
		snprintf(buf, n, "first_stage_layers %d and last_stage_layers %d",
			 f, l);
	else
		snprintf(buf, n, "%s %d", f > 0 ? "first_stage_layers" :
			 "last_stage_layers", f > 0 ? f : l);
}

/* long long: two counts up to 2^24 multiply past INT_MAX.  stage: the
 * tp * cp * dp ranks of a stage. */
static inline int layout_ep_ok(const gp_model *m, int ep, int etp,
			       long long stage)
{
	return stage % ((long long)etp * ep) == 0 &&
		(ep <= 1 || (m->moe.experts > 0 &&
			     m->moe.experts % ep == 0));
}

/* Micro-batches per pipeline per step: the global batch over dp ranks
 * of micro-batches of mb sequences (Megatron-LM's num_microbatches =
 * global_batch_size / (micro_batch_size x data_parallel_size)), and its
 * rule: a whole count of at least one.  One rule for gp.train
 * (train_prep.c micro_per_step refuses and words it) and the search
 * (sweep.c level_per, ok_mb skips the layout). */
static inline double layout_micro_per_step(double global, double dp,
					   double mb)
{
	return global / (dp * mb);
}

static inline int layout_micro_per_step_ok(double per)
{
	return per >= 1 && per == floor(per);
}

/* A zero_group's shard group (gpuplan's zero_group n: the ZeRO states
 * shard within groups of n data-parallel ranks, replicated across them --
 * InternEvo's Hybrid Zero, DeepSpeed MiCS's mics_shard_size, FSDP2's HSDP
 * shard dimension): n must divide the layout's dp * cp ranks (dpcp), -1
 * where it does not; the group is n consecutive ranks of that group in
 * the default rank order (tp, cp, dp, pp), so it spans n * tp GPUs, the
 * layout's hsdp; 0 where n is all of dp * cp, one group over all data
 * parallel (no hybrid sharding).  One rule for gp.train (gpuplan.memory
 * zero_group, through core.zero_group_gpus) and the search (sweep.c
 * ok_cp skips and counts the splits it refuses, hybrid_gpus). */
static inline int layout_zero_group_gpus(int n, int dpcp, int tp)
{
	if (n <= 0 || dpcp % n != 0)
		return -1;
	return n < dpcp ? n * tp : 0;
}

/* Does a shard group of hsdp GPUs (a zero_group's n x tp, layout_zero_
 * group_gpus, or a node under hybrid_shard) hold whole expert groups of
 * etp x ep GPUs?  A group that cuts one holds no expert replica to shard
 * the experts' states with.  Megatron-Core splits the expert data-
 * parallel group by the same instance count as the dense one
 * (parallel_state.py initialize_model_parallel: intra_partial_expert_
 * data_parallel_size = expert_data_parallel_size //
 * num_distributed_optimizer_instances, after "Expert data parallel size
 * should be divisible by partial DistOpt shard factor"), so a group of
 * hsdp GPUs shards the experts over hsdp / (etp ep) ranks and a layout
 * where etp ep does not divide hsdp does not exist.  FSDP2's HSDP with
 * EP agrees (torchtitan ParallelDims _build_mesh_with_ep: ep is carved
 * from the shard dimension, "dp_shard_mod_ep = dp_shard * cp // ep" the
 * experts' shard mesh, dp_replicate apart), so a node's group under
 * hybrid_shard follows the same rule.  (InternEvo shards expert states
 * over the whole expert data-parallel group whatever its zero1 size,
 * optimizer_mode ParallelMode.EXPERT_DATA, internlm/train/utils.py; no
 * stack here is InternEvo's.)  A dense model (experts 0) or no shard
 * group (hsdp 0) holds them trivially.  One rule for layout_check, the
 * search (sweep.c cuts_experts) and gpuplan.memory zero_group (through
 * core.hsdp_experts_ok, which words the refusal by the flags). */
static inline int layout_hsdp_experts_ok(int experts, int hsdp, int etp,
					 int ep)
{
	return experts <= 0 || hsdp <= 0 ||
		hsdp % ((long long)etp * ep) == 0;
}

/* Context parallelism splits each sequence into 2 x cp chunks, rank r
 * taking chunks r and 2 cp - 1 - r, so that every rank's causal
 * attention does the same work ("we split sequence into 2*CP ranks ...
 * so that we can get balanced workload among GPUs in a context parallel
 * group": Megatron-LM megatron/training/utils.py get_batch_on_this_cp_rank,
 * whose val.view(..., 2 * cp_size, val.shape[seq_dim] // (2 * cp_size),
 * ...) fails unless 2 cp divides the sequence).  layout_cp_seq_ok: cp
 * is 1 or seq a multiple of 2 cp; layout_check_cp_seq: GP_OK then, else
 * GP_EINVAL saying so.  One rule for the layout search (sweep.c ok_cp)
 * and the step a user names (gp.train and
 * train_job's steps: lgp_train.c); RL's training sequence is a mean of
 * its lengths, not one length, and keeps train_prep.c's seq >= cp. */
static inline int layout_cp_seq_ok(int cp, double seq)
{
	return cp <= 1 || fmod(seq, 2.0 * cp) == 0;
}
int layout_check_cp_seq(int cp, double seq, gp_error *err);

/* DeepSpeed-Ulysses' heads rule, the one place it lives: a group of n
 * ranks on TP tp splits the attention heads of a TP rank (heads / tp)
 * n ways, and its kv heads (kv_heads / tp, at least one: replicated
 * below tp; kv_heads 0 reads as heads) divide n or n them
 * (verl/models/transformers/monkey_patch.py apply_monkey_patch: "assert
 * num_attention_heads % ulysses_sp_size == 0", "assert
 * num_key_value_heads % ulysses_sp_size == 0 or ulysses_sp_size %
 * num_key_value_heads == 0"; "Upon ulysses_sp_size % num_key_value_heads
 * == 0, kv heads are repeated").  layout_ulysses_heads_ok: 1 when n is 1
 * or the rule holds (the layout search's test, sweep.c);
 * layout_check_ulysses_heads: GP_OK then, else GP_EINVAL saying which
 * half fails -- gpuplan.memory ulysses (core.ulysses_refusal) words a
 * job's refusal with it, layout_check_ulysses a step's. */
/* A TP rank's heads: *th attention heads (heads / tp) and *tkv kv heads
 * (kv_heads / tp, at least one; kv_heads < 1 reads as heads; tp < 1 as
 * 1) -- what the rule below splits, and its refusal names. */
static inline void layout_ulysses_rank_heads(int heads, int kv_heads,
					     int tp, int *th, int *tkv)
{
	if (tp < 1)
		tp = 1;
	if (kv_heads < 1)
		kv_heads = heads;
	*th = heads / tp;
	*tkv = kv_heads / tp > 1 ? kv_heads / tp : 1;
}
static inline int layout_ulysses_heads_ok(int heads, int kv_heads, int tp,
					  int n)
{
	int th, tkv;

	if (n <= 1)
		return 1;
	layout_ulysses_rank_heads(heads, kv_heads, tp, &th, &tkv);
	return th >= 1 && th % n == 0 && (tkv % n == 0 || n % tkv == 0);
}
int layout_check_ulysses_heads(int heads, int kv_heads, int tp, int n,
				gp_error *err);

/* DeepSpeed-Ulysses over a group of n ranks (the ulysses option, the
 * engine's CP group with train_cfg cp_ulysses) on TP tp: GP_OK when n is
 * at most seq tokens and the heads rule above holds, else GP_EINVAL
 * saying which.  gpuplan.memory ulysses checks a job's heads with the
 * user's words first (the sequence later, once its default is known);
 * train_job's steps, which change tp, cp or seq, check here
 * (lgp_train.c). */
int layout_check_ulysses(const gp_model *m, int tp, int n, double seq,
			 gp_error *err);

/* layout_tp_ok with its reason: GP_OK or GP_EINVAL. */
int layout_check_tp(const gp_model *m, int tp, gp_error *err);

/* layout_dualpipe_ok on the layout alone (per unknown) with its reason, a
 * usage refusal: GP_OK or GP_EINVAL.  layout_check's words, and gp.train_job's
 * before a step (core.check "dualpipe"). */
int layout_check_dualpipe(int pp, int vpp, gp_error *err);

/* The integer dimensions of gp_layout as one table, which layout_check
 * walks (layout.c's layout_dims, ended by a NULL name) and the binding's
 * field tables expand (lgpuplan.c).  Columns: the field, which is also
 * the Lua/CLI name; the values -- a COUNT (0 .. GP_COUNT_MAX, 0 read as
 * 1), a COUNT_TP (the same, 0 read as the layout's tp) or a RANGE lo..hi
 * named in `values` for the error; how the binding
 * reads it (int or bool); for a degree, its rule against the model
 * (layout.c; none: NOCHECK) with the message when it fails.  Adding a
 * dimension of the layout is a row here and its field. */
#define GP_LAYOUT_DIMS(X)                                             \
	X(dp, COUNT, 0, 0, NULL, int, NOCHECK)                        \
	X(tp, COUNT, 0, 0, NULL, int, check_tp)                       \
	X(pp, COUNT, 0, 0, NULL, int, check_pp)                       \
	X(cp, COUNT, 0, 0, NULL, int, NOCHECK)                        \
	X(vpp, COUNT, 0, 0, NULL, int, check_vpp)                     \
	X(etp, COUNT_TP, 0, 0, NULL, int, check_etp)                     \
	X(ep, COUNT, 0, 0, NULL, int, check_ep)                       \
	X(zero, RANGE, 0, 3, "0, 1, 2 or 3", int, NOCHECK)            \
	X(sp, RANGE, 0, 1, "0 or 1", bool, NOCHECK)                   \
	X(hsdp, RANGE, 0, GP_COUNT_MAX, "0 (off) or the GPUs of a node", \
	  int, check_hsdp)

typedef struct gp_layout_dim {
	const char *name;
	size_t off;              /* offsetof(gp_layout, field), an int */
	int count;               /* 1: a degree; 0: lo..hi */
	int lo, hi;
	const char *values;      /* "0, 1, 2 or 3" */
	int (*check)(const gp_model *m, const gp_layout *y, gp_error *err);
} gp_layout_dim;

extern const gp_layout_dim layout_dims[];

/* Check a layout against a valid model and write its normalised form
 * (degrees >= 1, derived fields) to *out (may be in).  Checks: counts
 * 0..GP_COUNT_MAX, the product of degrees <= GP_COUNT_MAX, zero 0..3,
 * schedule, micro_batch > 0, layout_check_tp, pp <= layers, vpp > 1 only
 * with pp > 1 and pp * vpp <= layers, ep only on an MoE model, dividing
 * its experts and dp * cp, cp <= seq handled by the callers.  GP_OK or
 * GP_EINVAL. */
int layout_check(const gp_model *m, const gp_layout *in, gp_layout *out,
		 gp_error *err);

/* Split L layers over the pp stages of a checked layout y: uniform, or
 * DeepSpeed's partition_balanced over the item weights [e0, w x L, e1]
 * (e0 on the first stage, e1 on the last; see layout.c).  Sets
 * y->balanced, n0, m. */
void layout_split(gp_layout *y, int L, int balanced, double e0, double w,
		  double e1);

/* Transformer layers on stage k (0-based) of a split layout. */
int layout_stage_layers(const gp_layout *y, int L, int k);

/* The first layer (0-based) of stage k of a split layout: the layers of
 * the stages before it. */
int layout_stage_first(const gp_layout *y, int L, int k);

/* MoE layers on pipeline stage (rank) k of a split layout y of the
 * model's layers; nl: the stage's layers (layout_stage_layers).  With one
 * model chunk a stage they are layers [layout_stage_first, + nl).  Under
 * the interleaved schedule (vpp > 1) a rank holds vpp chunks spread over
 * the model, chunk c of rank k the (c pp + k)-th run of layers, as
 * Megatron-Core numbers them (see layout.c): Llama 4 Maverick's 48
 * layers at pp 4, vpp 12 put one layer in a chunk, so ranks 1 and 3
 * hold only MoE layers and ranks 0 and 2 only dense ones.  The memory's
 * stages (memory_train.c) and the training step's (train_prep.c) count
 * them by it. */
int layout_stage_moe(const gp_model *m, const gp_layout *y, int k, int nl);

/* A hybrid stack's layers of kind c (a hybrid pattern's letter: M, *, -,
 * E) on stage (rank) k of nl layers, over its model chunks as
 * layout_stage_moe counts the E ones; 0 for a model without a pattern. */
int layout_stage_kind(const gp_model *m, const gp_layout *y, int k, int nl,
		      char c);

/* Layers of stage (rank) k, of nl (layout_stage_layers) of the model's
 * L, that full recompute re-runs when it takes the first n layers
 * (Megatron's --recompute-method block --recompute-num-layers n; n 0:
 * every layer).  Megatron-Core's block method checkpoints the first n of
 * a TransformerBlock's layers (megatron/core/recompute.py: "for
 * layer_idx in range(self.num_layers_per_pipeline_rank)", use_checkpoint
 * while "layer_idx < self.config.recompute_num_layers"), and a block's
 * num_layers_per_pipeline_rank is "len(self.layers)" (transformer_
 * block.py), the layers it built: under the interleaved schedule each of
 * a rank's vpp model chunks is a block of its own ("num_layers_to_build
 * = num_layers_per_virtual_stage"), so the stage re-runs the first n of
 * each chunk, min(n, the chunk's layers) summed over its chunks; with
 * one chunk a stage, min(n, nl).  Under DualPipe a rank's two chunks are
 * two of the layout's pp stages (k and pp-1-k) and the schedule takes
 * no vpp (layout_check_dualpipe): DualPipe is built from the rank's two
 * modules, one a stage ("DualPipe(local_modules)", local_modules =
 * full_modules[rank] and full_modules[pp_size - 1 - rank], deepseek-ai/
 * DualPipe examples/example_dualpipe.py), each a block of its own, so
 * the first n of each chunk re-run: min(n, nl) per stage k, as asked
 * stage by stage (memory_train.c stage_dual prices the two).  The
 * memory's stages (memory_train.c), the step's (train_stage.c) and its
 * recomputed FLOPs (train.c) count them by it. */
int layout_stage_recomputed(const gp_layout *y, int L, int k, int nl, int n);

/* Dense layers among layers [first, first + nl): an MoE model's that are
 * not MoE (model_moe_in: the first moe.dense_layers, DeepSeek's
 * first_k_dense_replace, and with moe.layer_step s the layers between
 * every s-th, Llama 4 Maverick's even ones), every layer of a dense one.
 * The training step's stages (train_stage_dense) and memory's
 * (memory_train.c) count them by it. */
static inline int layout_dense_in(const gp_model *m, int first, int nl)
{
	return nl - model_moe_in(m, first, nl);
}

/* Where the groups of each kind sit when ranks fill nodes of
 * gpus_per_node GPUs in the layout's rank order (a job smaller than a
 * node sits in one node), in equal shares a node (out[k].nodes 0:
 * ranks / per_node).  out[k] for every gp_grp k.  GP_OK or GP_EINVAL
 * for gpus_per_node < 1.  What the collectives are priced on is the
 * launcher's placement, layout_fill_place. */
int layout_place(const gp_layout *y, int gpus_per_node,
		 gp_group out[GP_GRP_COUNT], gp_error *err);

/* Everything the placement reads: the degrees by gp_dim, ep, the rank
 * order and the node size.  layout_place is layout_place_key then
 * layout_place_of, which reads the key alone; a memo of placements
 * (train.c) keys on it whole.  Zeroed first (compared as bytes). */
typedef struct gp_place_key {
	int size[GP_DIM_COUNT];
	int ep, etp;
	int gpus_per_node;
	int domain;             /* 1: a node is an NVLink domain of several
				 * hosts (gp_topo host_gpus): the launcher
				 * fills hosts, and how many of the job's
				 * hosts a domain holds is the scheduler's
				 * (layout_fill_place); 0: a node is a host */
	unsigned char order[GP_DIM_COUNT];
} gp_place_key;

void layout_place_key(const gp_layout *y, int gpus_per_node,
		      gp_place_key *k);

/* The key's degrees as doubles and each dimension's rank stride, the
 * first of the key's order fastest; returns the GPUs (their product).
 * One rule for layout_place_of and layout_fill_of. */
static inline double layout_rank_strides(const gp_place_key *k,
					 double size[GP_DIM_COUNT],
					 double stride[GP_DIM_COUNT])
{
	double s = 1;
	int i, d;

	for (d = 0; d < GP_DIM_COUNT; d++)
		size[d] = k->size[d];
	for (i = 0; i < GP_DIM_COUNT; i++) {
		d = k->order[i];
		stride[d] = s;
		s *= size[d];
	}
	return s;
}

/* The experts' grid over the same ranks: e = {etp, ep, edp} (edp =
 * tp*cp*dp / (etp*ep)) and their rank strides st, etp where tp sits in
 * the key's order, ep then edp where dp does, cp 1.  One rule for
 * layout_place_of and layout_fill_of. */
static inline void layout_expert_grid(const gp_place_key *k,
				      const double size[GP_DIM_COUNT],
				      double e[3], double st[3])
{
	double es = 1;
	int i, d;

	e[0] = k->etp;
	e[1] = k->ep;
	e[2] = size[GP_DIM_TP] * size[GP_DIM_CP] * size[GP_DIM_DP] /
		((double)k->etp * k->ep);
	st[0] = st[1] = st[2] = 1;
	for (i = 0; i < GP_DIM_COUNT; i++) {
		d = k->order[i];
		if (d == GP_DIM_TP) {
			st[0] = es;
			es *= e[0];
		} else if (d == GP_DIM_DP) {
			st[1] = es;
			st[2] = es * e[1];
			es *= e[1] * e[2];
		} else if (d == GP_DIM_PP) {
			es *= size[GP_DIM_PP];
		}
	}
}
int layout_place_of(const gp_place_key *k, gp_group out[GP_GRP_COUNT],
		    gp_error *err);

/* The placement a launcher makes (torchrun, or Slurm --ntasks-per-node):
 * rank r on node floor(r / gpus_per_node), the last node partial when
 * the node size does not divide the GPUs; ranks numbered by the key's
 * order, the first fastest (Megatron-Core parallel_state.py
 * RankGenerator, order "tp-cp-ep-dp-pp").  Per group kind, over every
 * group of that kind: */
typedef struct gp_fill {
	int ranks;      /* a group's members */
	int nodes;      /* the most nodes one group spans */
	int max_share;  /* the most members of one group on one node */
	int min_share;  /* the fewest, over the nodes a group is on */
	int sharing;    /* the most groups of the kind on one node */
} gp_fill;

/* Fills out[k] for every gp_grp k from the key (degrees as layout_check
 * leaves them).  Where every group sits in equal shares (max_share ==
 * min_share) on whole nodes this is layout_place_of's answer: per_node
 * = max_share, ranks / per_node = nodes, sharing = G / per_node (tests/
 * c/t_layout.c holds the two to it).  Walks every rank: O(GPUs) a kind,
 * nothing allocated; GP_EINVAL for gpus_per_node < 1 or past 2^24 GPUs. */
int layout_fill_of(const gp_place_key *k, gp_fill out[GP_GRP_COUNT],
		   gp_error *err);

/* The groups every command prices its collectives on (comm.h gp_group):
 * layout_fill_of's placement, a kind's group spanning its `nodes` (the
 * most one group spans), per_node the fewest members of one group on a
 * node (min_share), sharing the most groups of the kind on one node.
 * Where every rank stride of the key's order and the experts' grid, and
 * every group's extent, divides the node or is a multiple of it, and the
 * nodes are whole (or the job is within one), shares are equal and
 * layout_place_of's answer is the launcher's: taken without walking the
 * ranks (tests/c/t_layout.c holds the two equal there).
 *
 * Where a node is an NVLink domain of several hosts (k->domain: GB200
 * NVL72, 18 trays of 4 GPUs), the launcher fills hosts, and how many of
 * the job's hosts each domain holds is the scheduler's choice (Slurm's
 * block topology allocates a job in blocks of hosts, whose size the
 * cluster sets), which no source of a run states: the groups are placed
 * in equal shares a domain (layout_place_of), nodes = ranks / per_node,
 * until a topology says the job's hosts per domain.  GP_OK or GP_EINVAL
 * as layout_fill_of. */
int layout_fill_place(const gp_place_key *k, gp_group out[GP_GRP_COUNT],
		      gp_error *err);

#endif
