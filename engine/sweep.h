/*
 * sweep.h - enumerate the layouts of a training job on one GPU type and
 * keep the best: every TP x PP x CP (or Ulysses) x EP x DP split of each
 * GPU count that divides the model and the nodes, x ZeRO stage x
 * micro-batch x recompute x pipeline schedule x interleaving x sequence
 * parallelism.  What cannot divide is skipped before anything is priced,
 * what does not fit memory before it is timed; the rest are timed by
 * train_step_cached.
 *
 * The enumeration order is fixed (GPU counts as given, then tp, pp, cp,
 * ulysses, etp (as tp, then 1), ep ascending, micro-batch, recompute,
 * pipeline schedule, vpp, sp, zero, TP overlap, DP overlap), so results and
 * shards are deterministic: candidate i belongs to shard i mod n.  The
 * last three innermost: what differs only in them shares the step's
 * phase (train.c).  The schedule's default, 1F1B or interleaved as vpp
 * says, passes one value per vpp: a space without a schedule list
 * enumerates as it did before the level.
 * Caller-owned structs; nothing allocates; GP_OK or GP_EINVAL.
 */
#ifndef GP_SWEEP_H
#define GP_SWEEP_H

#include "train.h"

/* What to rank by (the best first). */
typedef enum sweep_key {
	SWEEP_TIME = 0,      /* step time per token: fastest */
	SWEEP_COST,          /* price per token (needs a price): cheapest */
	SWEEP_PER_DOLLAR,    /* tokens/s per price unit per hour */
	SWEEP_MFU,           /* highest MFU */
	SWEEP_GPUS,          /* fewest GPUs, then fastest */
	SWEEP_KEYS
} sweep_key;

const char *sweep_key_name(sweep_key k);
int sweep_key_parse(const char *s, sweep_key *out, gp_error *err);

#define SWEEP_PROGRESS_N 2048

typedef struct sweep_space {
	const int *gpus;     /* GPU counts to try, > 0 */
	int ngpus;
	int tp_max, pp_max, cp_max, ep_max; /* upper bounds (0 = 1) */
	int ulysses_max;     /* DeepSpeed-Ulysses groups 1..ulysses_max
			      * (0 = 1: none), each a layout's sequence
			      * split instead of a CP ring (cp 1 beside
			      * it): the engine's CP group with
			      * train_cfg mem.cp_ulysses */
	int ulysses_pp1;     /* 1: a Ulysses group only at pp 1 (the hf
			      * stack: verl's FSDP workers hold no
			      * pipeline; deepspeed: its pipeline grid has
			      * no sequence axis; gpuplan.memory
			      * ulysses_refusal) */
	int ulysses_tp1;     /* 1: a Ulysses group only at tp 1 (the hf
			      * stack: verl's FSDP mesh is dp x sp alone) */
	unsigned etp_mask;   /* bit 0: experts' TP = tp (Megatron's
			      * default), bit 1: etp 1, the experts folded
			      * over the stage's ranks (0 = {bit 0}) */
	unsigned zero_mask;  /* bit z: try ZeRO stage z (0 = {0}) */
	const double *mbs;   /* micro-batch sizes to try */
	int nmb;             /* 0: {1} */
	unsigned rec_mask;   /* bits of gp_recompute (0 = {none}) */
	unsigned sched_mask; /* bits of gp_schedule: 1F1B (vpp 1),
			      * interleaved (vpp > 1), DualPipe (0 =
			      * {1F1B, interleaved}: vpp decides, as
			      * gp.train's --vpp does) */
	unsigned dual_on;    /* what a DualPipe layout turns on: bit 0
			      * ep_overlap, bit 1 overlap_p2p (gp.train's
			      * defaults under dualpipe, where the job
			      * leaves them out: "both all-to-all and PP
			      * communication can be fully hidden") */
	int vpp_max;         /* interleaving 1..vpp_max (0 = 1) */
	int sp_mask;         /* bit 0: SP off, bit 1: SP on (0 = {on}) */
	unsigned hybrid_mask; /* bit 0: ZeRO shards over the whole dp * cp
			       * group, bit 1: hybrid sharding within
			       * each node (FSDP HYBRID_SHARD; layout.h
			       * hsdp) (0 = {bit 0}) */
	unsigned fsdp_pairs; /* the (hybrid sharding, ZeRO stage) pairs
			      * tried, bit (hybrid ? 4 : 0) + zero: FSDP's
			      * strategies searched together (full_shard
			      * zero 3, shard_grad_op zero 2 or 1,
			      * hybrid_shard hybrid zero 3) without the
			      * pairs no strategy names (a hybrid ZeRO-2);
			      * 0: every pair of the two masks */
	int whole_z3;        /* 1: gradients reduced once per step (FSDP's
			      * grad_sync step): the ZeRO-3 layouts
			      * accumulate whole gradients (memory.h
			      * grads_whole), the others do not (ZeRO-1
			      * reduces once per step as it is) */
	int zero_group;      /* > 0: hybrid sharding's shard group is this
			      * many of the dp * cp ranks in every layout
			      * (gpuplan's zero_group: hsdp = zero_group *
			      * tp, 0 where it is all of dp * cp), and a
			      * split whose dp * cp it does not divide is
			      * skipped (counted in ungrouped); 0: the
			      * group is the node */
	int tpo_mask;        /* TP overlap (Userbuffers): bit 0 off, bit 1
			      * on (0 = base's tp_overlap) */
	int dpo_mask;        /* DP reduction under the backward: bit 0
			      * off, bit 1 on (0 = base's
			      * overlap_grad_reduce) */
	int no_bound;        /* 1: time every fitting layout (no lower-
			      * bound pruning in sweep_run) */
	int time_all;        /* 1: time the layouts memory refuses too
			      * (sweep_stats.timed counts every layout
			      * priced whole; the kept list still holds
			      * fitting ones only) */
	/* sweep_run calls progress(ud, done, total) about a hundred times
	 * (at most every SWEEP_PROGRESS_N layouts) and once at the end, the
	 * total counted first; NULL: none. */
	void (*progress)(void *ud, long done, long total);
	void *progress_ud;
	int shard_k, shard_n;/* this shard of n (n 0 = the whole space),
			      * n <= SWEEP_SHARDS_MAX */
	double max_time;     /* s to train base.tokens; 0 = no deadline */
	double max_cost;     /* price units for them; 0 = no budget */
} sweep_space;

/* The most shards a search splits into.  Candidate i is shard i mod n's,
 * and a plan space holds 10^3..10^5 layouts: past 65,536 shards nearly
 * every shard is empty, and `gpuplan merge` must read each one (a list of
 * that many files).  A bound both sides share (plan refuses more, merge
 * refuses a shard line claiming more). */
#define SWEEP_SHARDS_MAX 65536

/* The dimensions of the search as one table, outermost first: each
 * row is a level of sweep.c's odometer, a field of the candidate, a
 * field of the training config it sets and a key of the binding's
 * space and results.  Columns:
 *   ID     the level, SWEEP_DIM_ID
 *   name   the Lua/CLI name: the candidate's field and the results'
 *          key; the space's key is name (a list) or name_max (a range)
 *   type   the candidate's field's C type; lua: how the binding
 *          pushes it (int, bool, num, rec: the recompute's name, or
 *          sched: the pipeline schedule's)
 *   at     where it lives in a train_cfg: CFG(member), or NOCFG (the
 *          GPU count, which sets dp), or ULY (a Ulysses group: the
 *          config's CP group with mem.cp_ulysses, sweep.c
 *          write_layout)
 *   vals   RANGE: 1 .. the space's `bound` (0 reads as 1);
 *          LIST: the space's list `bound` of `count` values (0: {1});
 *          MASK: the bits of the space's mask `bound`, values 0..hi;
 *          NODE: a MASK of 0 and 1 whose 1 sets the node's GPU count
 *          (hybrid sharding's shard group, layout.h hsdp), or with
 *          the space's zero_group that group's GPUs
 *   dflt   MASK: the mask when the space's is 0 (1, 2, 3: that mask;
 *          BASE: the base
 *          config's value); RANGE: the binding's bound when the space
 *          gives none
 *   ok     its check in sweep.c against the levels outside it (the
 *          model's rules are layout.h's)
 * The ZeRO stage and the two overlaps are innermost: layouts that
 * differ only in them share the training step's phase (train.c).
 * Adding a dimension: a row here, a field in sweep_space, its cost in
 * the training step. */
#define SWEEP_DIMS(X)                                                     \
	X(G, gpus, int, int, NOCFG, LIST, gpus, ngpus, 0, 0, ok_gpus)     \
	X(TP, tp, int, int, CFG(mem.lay.tp), RANGE, tp_max, -, 0, 8,      \
	  ok_tp)                                                          \
	X(PP, pp, int, int, CFG(mem.lay.pp), RANGE, pp_max, -, 0, 1,      \
	  ok_pp)                                                          \
	X(CP, cp, int, int, CFG(mem.lay.cp), RANGE, cp_max, -, 0, 1,      \
	  ok_cp)                                                          \
	X(U, ulysses, int, int, ULY, RANGE, ulysses_max, -, 0, 1,         \
	  ok_ulysses)                                                     \
	X(ETP, etp, int, int, CFG(mem.lay.etp), MASK, etp_mask, -, 1, 1,  \
	  ok_etp)                                                         \
	X(EP, ep, int, int, CFG(mem.lay.ep), RANGE, ep_max, -, 0, 1,      \
	  ok_ep)                                                          \
	X(MB, micro_batch, double, num, CFG(mem.lay.micro_batch), LIST,   \
	  mbs, nmb, 0, 0, ok_mb)                                          \
	X(R, recompute, gp_recompute, rec, CFG(mem.recompute), MASK,      \
	  rec_mask, -, GP_RECOMPUTE_COUNT - 1, 1, ok_rec)                 \
	X(SCH, schedule, gp_schedule, sched, CFG(mem.lay.schedule), MASK, \
	  sched_mask, -, GP_SCHED_COUNT - 1, 3, ok_sched)                 \
	X(V, vpp, int, int, CFG(mem.lay.vpp), RANGE, vpp_max, -, 0, 1,    \
	  ok_vpp)                                                         \
	X(SP, sp, int, bool, CFG(mem.lay.sp), MASK, sp_mask, -, 1, 2,     \
	  ok_sp)                                                     \
	X(HS, hybrid, int, bool, CFG(mem.lay.hsdp), NODE, hybrid_mask, -, \
	  1, 1, ok_hybrid)                                                \
	X(Z, zero, int, int, CFG(mem.lay.zero), MASK, zero_mask, -, 3, 1, \
	  ok_zero)                                                        \
	X(TPO, tp_overlap, int, bool, CFG(tp_overlap), MASK, tpo_mask, -, \
	  1, BASE, ok_with_tp)                                            \
	X(DPO, overlap_grad_reduce, int, bool, CFG(overlap_grad_reduce),  \
	  MASK, dpo_mask, -, 1, BASE, ok_mask)

#define SWEEP_DIM_ENUM(ID, name, type, lua, at, vals, bound, count, hi, \
		       dflt, ok) SWEEP_DIM_##ID,
enum { SWEEP_DIMS(SWEEP_DIM_ENUM) SWEEP_NDIMS };
#undef SWEEP_DIM_ENUM

/* One ranked layout. */
#define SWEEP_DIM_FIELD(ID, name, type, lua, at, vals, bound, count, hi, \
			dflt, ok) type name;
typedef struct sweep_cand {
	long index;          /* position in the enumeration */
	SWEEP_DIMS(SWEEP_DIM_FIELD)
	int dp;              /* gpus / (tp pp cp ulysses) */
	double step, tokens_per_s, mfu, cost, train_time, mem_total;
	double score;        /* the key's value, lower is better */
} sweep_cand;
#undef SWEEP_DIM_FIELD

typedef struct sweep_stats {
	double space;        /* the grid: the product of the dimensions'
			      * sizes (every shard's), each split's
			      * bound clamped to what the model, node
			      * and largest GPU count allow; in floating
			      * point, so it never overflows (exact
			      * below 2^53) */
	long divided;        /* of them, dividing the model, the nodes and
			      * the batch, in this shard: the layouts */
	long fitting;        /* of them, fitting memory (then timed) */
	long timed;          /* of them, priced whole: memory and step
			      * time (the fitting ones, or all with
			      * time_all, less the bounded) */
	long within;         /* of them, within the deadline and budget */
	long bounded;        /* of the dividing, never timed: a lower
			      * bound on their step already ranked them
			      * below the k kept or past the deadline or
			      * budget (sweep_run) */
	long unplaced;       /* splits whose degrees divide the GPU count
			      * but whose groups, placed in equal shares
			      * a node, need more nodes than the job's
			      * (sweep.c places): not layouts, skipped */
	long ungrouped;      /* splits whose dp * cp the space's zero_group
			      * does not divide: not layouts, skipped */
	long expert_cut;     /* splits of a MoE model whose shard groups
			      * (the zero_group's N x tp GPUs, or a node
			      * when only hybrid sharding is searched) cut
			      * an expert group etp x ep (layout.c's
			      * refusal): not layouts, skipped */
	long past_host;      /* of the layouts, not fitting because their
			      * offload holds more on the fullest host
			      * than its DRAM (memory.h mem_host_fit) */
	double host_least;   /* of those, the least that host holds, and */
	double host_memory;  /* its DRAM (bytes) */
	long past_gpu;       /* of the layouts, not fitting because a GPU
			      * must hold more than its budget (the rest
			      * of those not fitting) */
	double gpu_least;    /* of those, the least a GPU must hold, and */
	double gpu_budget;   /* the GPU's budget (capacity less margin) */
	long errors;         /* refused by the training step */
	gp_error error;      /* the first refusal's reason ("" if none) */
	sweep_cand error_at; /* the layout it refused */
} sweep_stats;

/* The enumeration as an iterator: sweep_begin, then sweep_next until it
 * returns 0; each call yields the next dividing candidate of this shard
 * as a training config (base with the layout set) and its index.  The
 * iterator's fields are sweep.c's. */
typedef struct sweep_iter {
	const gp_model *m;
	const train_cfg *base;
	const sweep_space *s;
	int G;               /* GPUs per node */
	int domain;          /* 1: a node is an NVLink domain of several
			      * hosts (gp_place_key domain) */
	int nodes;           /* the system's nodes (the job takes more
			      * when its GPUs need them) */
	long index;
	int cur[SWEEP_NDIMS];/* the odometer, one value per level */
	int lo[SWEEP_NDIMS], hi[SWEEP_NDIMS]; /* each level's range */
	int tri[4][16][3];   /* the innermost levels' valid values (tp 1,
			      * tp > 1; + 2: under hybrid sharding, which
			      * fsdp_pairs ties the ZeRO stage to) */
	int ntri[4], tri_i;
	const int (*trow)[3];/* the last yield's list (tri[inner_row]): a
			      * pointer into this iterator, read only by
			      * sweep_run's step on its own (next_inner) */
	int inner_n;         /* its length when next_inner may step it (no
			      * shard filters), else 0 */
	unsigned mask[SWEEP_NDIMS]; /* the MASK levels' masks in force */
	int started;
	int moved;           /* outermost level moved since the last yield */
	int inner;           /* the last yield differs from the one before
			      * only in ZeRO stage, TP and DP overlap */
	int split;           /* ... and its split -- GPUs, TP, PP, CP, U, ETP,
			      * EP, hybrid sharding -- is that one's (only
			      * levels from micro-batch in moved, and the
			      * hybrid level's value the same) */
	int last_hs;         /* the hybrid level's value at the last yield */
	sweep_stats st;
} sweep_iter;

/* Start an enumeration.  GP_EINVAL for an empty or bad space. */
int sweep_begin(sweep_iter *it, const gp_model *m, const gp_topo *t,
		const train_cfg *base, const sweep_space *s, gp_error *err);

/* Next dividing candidate: 1 with *out and *c filled, 0 at the end. */
int sweep_next(sweep_iter *it, train_cfg *out, sweep_cand *c);

/* Score of a timed result under key k (lower is better); HUGE_VAL when
 * the key needs what the result has not (a cost without a price). */
double sweep_score(sweep_key k, const sweep_cand *c);

/* Fill a candidate's figures from a timed result. */
void sweep_fill(sweep_cand *c, const train_result *r);

/* Run the whole enumeration and keep the `k` best fitting layouts in
 * top[0..k) (best first; *ntop how many), pricing memory before time.
 * Once k are kept, a layout whose lower bound (train_bound) cannot beat
 * the k-th, or already misses the deadline or budget, is not priced
 * further (unless s->no_bound): the kept list is the one timing every
 * layout gives.  where (may be NULL) is asked about each timed layout
 * within the deadline and budget that could enter the list; only those
 * it accepts (returns non-zero) are kept.  cache is required (zero it
 * before the first use).  stats (may be NULL) counts what was pruned. */
typedef int (*sweep_where)(void *ud, const sweep_cand *c);
int sweep_run(const gp_model *m, const roof_device *d, const gp_topo *t,
	      const train_cfg *base, const sweep_space *s, sweep_key key,
	      train_cache *cache, sweep_where where, void *ud,
	      sweep_cand *top, int k, int *ntop, sweep_stats *stats,
	      gp_error *err);

/* 1 when a timed candidate meets the space's deadline and budget. */
int sweep_within(const sweep_space *s, const sweep_cand *c);

/* Insert c into the ranked list top[0..*n) of capacity k (ties keep the
 * earlier index first). */
void sweep_keep(sweep_cand *top, int k, int *n, const sweep_cand *c);

#endif
