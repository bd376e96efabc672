/*
 * sweep.c - the layout enumeration and the top-k (see sweep.h).
 */
#include "sweep.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const key_names[SWEEP_KEYS] = {
	"time", "cost", "per_dollar", "mfu", "gpus"
};

const char *sweep_key_name(sweep_key k)
{
	return GP_NAME_OF(key_names, SWEEP_KEYS, k);
}

int sweep_key_parse(const char *s, sweep_key *out, gp_error *err)
{
	int v = -1; /* set by gp_parse_name on GP_OK */

	if (gp_parse_name(s, key_names, SWEEP_KEYS, &v, "sweep key", err))
		return GP_EINVAL;
	*out = (sweep_key)v;
	return GP_OK;
}

static int dflt(int v)
{
	return v > 0 ? v : 1;
}

static int popcount(unsigned v)
{
	int n = 0;

	for (; v; v >>= 1)
		n += (int)(v & 1u);
	return n;
}

/* The levels of the enumeration are the rows of SWEEP_DIMS (sweep.h),
 * outermost first.  The ZeRO stage and the two overlaps are innermost:
 * layouts that differ only in them share the training step's phase
 * (train.c), so each of them pays only for what it changes. */
enum {
#define LV(ID, name, type, lua, at, vals, bound, count, hi, def, ok) \
	LV_##ID = SWEEP_DIM_##ID,
	SWEEP_DIMS(LV)
#undef LV
	LV_N = SWEEP_NDIMS
};

static void level_range(const sweep_iter *it, int lv, int *lo, int *hi);

/* The job's uneven ends (first_stage_layers, last_stage_layers) keep
 * only the pp they fit (ok_pp): refused, naming them and the pp that
 * would fit, when none of the search's does, rather than searched to no
 * layout. */
static int divides_a_count(const sweep_iter *it, int pp)
{
	int i;

	for (i = 0; i < it->s->ngpus; i++)
		if (it->s->gpus[i] % pp == 0)
			return 1;
	return 0;
}

static int ends_fit(const sweep_iter *it, gp_error *err)
{
	int f = it->base->mem.first_stage_layers;
	int l = it->base->mem.last_stage_layers;
	int L = it->m->layers, lo, hi, pp;
	const char *verb = f > 0 && l > 0 ? "fit" : "fits";
	char given[96];

	if (f == 0 && l == 0)
		return GP_OK;
	level_range(it, LV_PP, &lo, &hi);
	for (pp = lo; pp <= hi; pp++)
		if (layout_ends_ok(L, pp, f, l))
			return GP_OK;
	layout_ends_words(given, sizeof given, f, l);
	/* the least larger pp that fits them and divides a GPU count */
	for (pp = hi + 1; pp <= L; pp++)
		if (layout_ends_ok(L, pp, f, l) && divides_a_count(it, pp))
			return gp_fail(err, "%s %s no pp up to %d (pp_max, "
				       "clamped to the GPUs and layers): the "
				       "other stages must share the rest of "
				       "the model's %d layers evenly; pp %d "
				       "fits (pp_max %d)", given, verb, hi, L,
				       pp, pp);
	return gp_fail(err, "%s %s no pp that divides the GPU counts: "
		       "the other stages must share the rest of the "
		       "model's %d layers evenly, one layer each at least",
		       given, verb, L);
}

/* The job's split_ends (the embedding and the loss each take a layer's
 * place in the pipeline split) keeps the pp >= 2 that divide the layers
 * and the two ends, as gp.train refuses the others (layout.h
 * layout_split_ends_ok, the rule memory_layout.c split_ends_check
 * words); its activation_offload_layers keeps pp 1 (Megatron-Core: "no support for Pipeline parallelism
 * with CPU offloading", memory_layout.c mem_check_train_cfg). */
static inline int job_pp_ok(const sweep_iter *it, int pp)
{
	if (it->base->mem.split_ends)
		return layout_split_ends_ok(it->m->layers, pp, 1);
	if (it->base->mem.act_offload_layers > 0)
		return pp == 1;
	return 1;
}

/* Refused, naming the option, when no pp the search tries (or no
 * recompute policy) can take it, rather than searched to no layout. */
static int job_opts_fit(const sweep_iter *it, gp_error *err)
{
	int lo, hi, pp;

	level_range(it, LV_PP, &lo, &hi);
	if (it->base->mem.split_ends) {
		for (pp = lo; pp <= hi; pp++)
			if (job_pp_ok(it, pp))
				return GP_OK;
		if (hi < 2)
			return gp_fail(err, "split_ends applies to pipeline "
				       "stages (pp >= 2); the search tries "
				       "pp up to %d (pp_max, clamped to the "
				       "GPUs and layers)", hi);
		return gp_fail(err, "split_ends: the model's %d layers and "
			       "the two ends (%d) divide over no pp from 2 "
			       "to %d (pp_max, clamped to the GPUs and "
			       "layers)", it->m->layers, it->m->layers + 2,
			       hi);
	}
	if (it->base->mem.act_offload_layers > 0 &&
	    it->s->rec_mask != 0 &&
	    !(it->s->rec_mask & 1u << GP_RECOMPUTE_NONE))
		return gp_usage(err, "activation_offload_layers needs "
				"recompute none (Megatron-Core's \"CPU "
				"offloading does not work when activation "
				"recomputation is enabled\"): give none among "
				"the recompute policies to try");
	return GP_OK;
}

int sweep_begin(sweep_iter *it, const gp_model *m, const gp_topo *t,
		const train_cfg *base, const sweep_space *s, gp_error *err)
{
	int i;

	if (!it || !m || !t || !base || !s)
		return gp_fail(err, "sweep: missing argument");
	if (model_check(m, err) || comm_topo_check(t, err))
		return GP_EINVAL;
	if (!s->gpus || s->ngpus < 1)
		return gp_fail(err, "sweep: no GPU counts");
	for (i = 0; i < s->ngpus; i++)
		if (gp_check_count(s->gpus[i], 1, "gpus", err))
			return GP_EINVAL;
	if (gp_check_count(s->tp_max, 0, "tp_max", err) ||
	    gp_check_count(s->pp_max, 0, "pp_max", err) ||
	    gp_check_count(s->cp_max, 0, "cp_max", err) ||
	    gp_check_count(s->ulysses_max, 0, "ulysses_max", err) ||
	    gp_check_count(s->ep_max, 0, "ep_max", err) ||
	    gp_check_count(s->vpp_max, 0, "vpp_max", err) ||
	    gp_check_count(s->nmb, 0, "micro-batch count", err))
		return GP_EINVAL;
	for (i = 0; i < s->nmb; i++)
		if (gp_check_pos(s->mbs[i], "micro_batch", err))
			return GP_EINVAL;
	if (s->dual_on >> 2)
		return gp_fail(err, "sweep: dual_on %u out of range",
			       s->dual_on);
	if (gp_check_nonneg(s->max_time, "deadline", err) ||
	    gp_check_nonneg(s->max_cost, "budget", err))
		return GP_EINVAL;
	if ((s->max_time > 0 || s->max_cost > 0) && !(base->tokens > 0))
		return gp_fail(err, "sweep: a deadline or budget needs the "
			       "tokens to train on");
	if (s->shard_n < 0 || (s->shard_n > 0 &&
			       (s->shard_k < 0 || s->shard_k >= s->shard_n)))
		return gp_fail(err, "shard %d/%d: K must be in 0..N-1",
			       s->shard_k, s->shard_n);
	if (s->shard_n > SWEEP_SHARDS_MAX)
		return gp_fail(err, "shard count %d: at most %d",
			       s->shard_n, SWEEP_SHARDS_MAX);
	if (!(base->global_batch > 0))
		return gp_fail(err, "sweep: a global batch is needed (the "
			       "micro-batches per step follow from it)");
	memset(it, 0, sizeof *it);
	it->m = m;
	it->base = base;
	it->s = s;
	it->G = t->gpus_per_node;
	it->domain = comm_topo_domain(t);
	it->nodes = t->nodes;
	if (ends_fit(it, err) || job_opts_fit(it, err))
		return GP_EINVAL;
	/* The masks in force, and the grid: the product of the
	 * dimensions' sizes, each split clamped (split_cap), in floating
	 * point: 64 GPU counts x 2^24 CP x ... passes 2^63, never
	 * DBL_MAX. */
	it->st.space = 1;
#define CFG(member) (base->member)
#define NOCFG 0
#define ULY 0
#define BEGIN(ID, name, type, lua, at, vals, bound, count, hi, def, ok) \
	BEGIN_##vals(SWEEP_DIM_##ID, #bound, s->bound, (hi), def, at)
#define BEGIN_MASK(lv, what, given, top, def, from_base) \
	do { \
		if ((unsigned)(given) >> ((top) + 1)) \
			return gp_fail(err, "sweep: %s %d out of range", \
				       what, (int)(given)); \
		it->mask[lv] = (unsigned)(given) ? (unsigned)(given) : \
			MASK_DFLT_##def(from_base); \
		it->st.space *= popcount(it->mask[lv]); \
	} while (0);
#define MASK_DFLT_1(from_base) 1u
#define MASK_DFLT_2(from_base) 2u
#define MASK_DFLT_3(from_base) 3u
#define MASK_DFLT_BASE(from_base) ((from_base) ? 2u : 1u)
#define BEGIN_RANGE(lv, what, given, top, def, from_base) \
	do { \
		int lo_, hi_; \
		level_range(it, lv, &lo_, &hi_); \
		it->st.space *= hi_; \
	} while (0);
#define BEGIN_LIST(lv, what, given, top, def, from_base)
#define BEGIN_NODE BEGIN_MASK
	SWEEP_DIMS(BEGIN)
#undef BEGIN
#undef BEGIN_NODE
#undef BEGIN_MASK
#undef BEGIN_RANGE
#undef BEGIN_LIST
#undef MASK_DFLT_1
#undef MASK_DFLT_2
#undef MASK_DFLT_3
#undef MASK_DFLT_BASE
#undef CFG
#undef NOCFG
#undef ULY
	/* 1F1B and interleaved are one choice of the grid, told apart by
	 * vpp (ok_vpp): each vpp passes one of them, so together they
	 * count once. */
	if ((it->mask[LV_SCH] & 3u) == 3u)
		it->st.space *= (popcount(it->mask[LV_SCH]) - 1.0) /
			popcount(it->mask[LV_SCH]);
	/* ep_overlap: Megatron-Core refuses full recompute with it
	 * (train_prep.c check_ep_overlap), so the policy is not tried. */
	if (base->ep_overlap && (it->mask[LV_R] >> GP_RECOMPUTE_FULL & 1u)) {
		it->st.space /= popcount(it->mask[LV_R]);
		it->mask[LV_R] &= ~(1u << GP_RECOMPUTE_FULL);
		it->st.space *= popcount(it->mask[LV_R]);
	}
	/* FSDP's strategies (fsdp_pairs): the (hybrid, stage) pairs they
	 * name, not every pair of the two levels. */
	if (s->fsdp_pairs) {
		unsigned hs, z, n = 0;

		for (hs = 0; hs < 2; hs++)
			for (z = 0; z < 4; z++)
				n += (it->mask[LV_HS] >> hs & 1u) &&
					(it->mask[LV_Z] >> z & 1u) &&
					(s->fsdp_pairs >> (hs * 4 + z) & 1u);
		it->st.space *= n / (double)(popcount(it->mask[LV_HS]) *
					    popcount(it->mask[LV_Z]));
	}
	/* A hybrid stack: the step prices ZeRO 0 and 1 only (train_prep.c
	 * hybrid_refusal), so the search tries those; its CP and Ulysses
	 * are held at 1 (split_cap). */
	if (m->pattern[0] && (it->mask[LV_Z] & ~3u)) {
		if (!(it->mask[LV_Z] & 3u))
			return gp_usage(err, "zero: a hybrid stack (model."
					"hybrid_pattern) is priced at ZeRO 0 "
					"or 1 (its layers' ZeRO-2/3 and FSDP "
					"gathers are not priced): give zero 0 "
					"or 1 among the stages to try");
		it->st.space /= popcount(it->mask[LV_Z]);
		it->mask[LV_Z] &= 3u;
		it->st.space *= popcount(it->mask[LV_Z]);
	}
	it->st.space *= (double)s->ngpus * (s->nmb > 0 ? s->nmb : 1);
	return GP_OK;
}


static int imin(int a, int b)
{
	return a < b ? a : b;
}

/* The most a split can be that level_ok could ever pass, given the
 * model, the node and the largest GPU count: the bound given (max, >= 1)
 * clamped to it, so that `--vpp-max 1000000` enumerates 1..layers/2 and
 * not a million values per layout (a search must answer in well under a
 * second whatever the bounds).  Each clamp is level_ok's own test: TP
 * divides the node and the heads, PP is at most the layers, CP splits
 * the sequence into 2 cp chunks, a Ulysses group is at most the heads
 * and the sequence's tokens, EP divides the experts (1 when dense),
 * VPP x PP (PP >= 2) divides the layers; each divides a GPU count. */
static int split_cap(const sweep_iter *it, int lv, int max)
{
	const gp_model *m = it->m;
	int i, n = 1;
	double half;

	for (i = 0; i < it->s->ngpus; i++)
		if (it->s->gpus[i] > n)
			n = it->s->gpus[i];
	switch (lv) {
	case LV_TP:
		return imin(max, imin(n, imin(it->G, m->heads)));
	case LV_PP:
		return imin(max, imin(n, m->layers));
	case LV_CP:
		/* a hybrid stack's Mamba layers under CP are not priced
		 * (train_prep.c hybrid_refusal): held at 1 */
		if (m->pattern[0])
			return 1;
		half = floor(it->base->mem.seq / 2);
		return half < 1 ? 1 : half < max ? imin((int)half, n) :
			imin(max, n);
	case LV_U:
		if (m->pattern[0])
			return 1;
		return imin(max, imin(n, imin(m->heads,
			it->base->mem.seq < n ? (int)it->base->mem.seq : n)));
	case LV_EP:
		return m->moe.experts > 0 ?
			imin(max, imin(n, m->moe.experts)) : 1;
	case LV_V:
		return m->layers >= 2 ? imin(max, m->layers / 2) : 1;
	}
	return max;
}

/* The values a level runs over: lo..hi. */
static void level_range(const sweep_iter *it, int lv, int *lo, int *hi)
{
	const sweep_space *s = it->s;

	switch (lv) {
#define RANGE(ID, name, type, lua, at, vals, bound, count, top, def, ok) \
	case LV_##ID: RANGE_##vals(LV_##ID, bound, count, top); break;
#define RANGE_RANGE(lv, bound, count, top) \
	*lo = 1; *hi = split_cap(it, lv, dflt(s->bound))
#define RANGE_LIST(lv, bound, count, top) \
	*lo = 0; *hi = (s->count > 0 ? s->count : 1) - 1
#define RANGE_MASK(lv, bound, count, top) *lo = 0; *hi = (top)
#define RANGE_NODE RANGE_MASK
	SWEEP_DIMS(RANGE)
#undef RANGE_NODE
#undef RANGE
#undef RANGE_RANGE
#undef RANGE_LIST
#undef RANGE_MASK
	}
}

/* The value of a level at odometer position v: a list's entry (an
 * empty list is {1}), else v itself. */
#define VALUE_RANGE(bound, count, v) (v)
#define VALUE_MASK(bound, count, v) (v)
#define VALUE_LIST(bound, count, v) \
	(it->s->count > 0 ? it->s->bound[v] : 1)
/* Hybrid sharding's 1 is the node's GPU count (layout.h hsdp), or with
 * a zero_group the GPUs of its group (layout.h layout_zero_group_gpus,
 * the rule gpuplan.memory zero_group asks too; ok_cp kept only the
 * splits whose dp * cp it divides). */
static inline int hybrid_gpus(const sweep_iter *it)
{
	const int *v = it->cur;
	int N = it->s->gpus[v[LV_G]], zg = it->s->zero_group;

	if (zg <= 0)
		return it->G;
	return layout_zero_group_gpus(zg, N / v[LV_TP] / v[LV_PP], v[LV_TP]);
}
#define VALUE_NODE(bound, count, v) ((v) ? hybrid_gpus(it) : 0)

static double level_mb(const sweep_iter *it)
{
	return VALUE_LIST(mbs, nmb, it->cur[LV_MB]);
}

/* The ranks each sequence splits over: the CP ring's or the Ulysses
 * group's (one of the two is 1, ok_ulysses) -- the engine's CP group
 * either way, which dp = N / (tp pp cp) leaves. */
static inline int seq_ranks(const sweep_iter *it)
{
	return it->cur[LV_CP] * it->cur[LV_U];
}

/* Each level's check: is its current value possible, given the levels
 * outside it?  Each check sits at the outermost level that decides it,
 * so an impossible split is skipped with everything inside it.  The
 * model's rules are layout.h's (layout_check words their errors). */
static inline int ok_gpus(const sweep_iter *it, int lv)
{
	(void)it;
	(void)lv;
	return 1;
}

/* TP inside a node, as every layout search keeps it: its collectives run
 * per layer. */
static inline int ok_tp(const sweep_iter *it, int lv)
{
	int N = it->s->gpus[it->cur[LV_G]], tp = it->cur[lv];

	return N % tp == 0 && tp <= it->G && it->G % tp == 0 &&
		layout_tp_ok(it->m, tp);
}

static inline int ok_pp(const sweep_iter *it, int lv)
{
	const int *v = it->cur;
	int N = it->s->gpus[v[LV_G]];

	return (N / v[LV_TP]) % v[lv] == 0 && layout_pp_ok(it->m, v[lv]) &&
		layout_ends_ok(it->m->layers, v[lv],
			       it->base->mem.first_stage_layers,
			       it->base->mem.last_stage_layers) &&
		job_pp_ok(it, v[lv]);
}

/* CP splits each sequence into 2 cp chunks (layout_check_cp_seq, the
 * rule gp.train refuses a layout by). */
static inline int ok_cp(const sweep_iter *it, int lv)
{
	const int *v = it->cur;
	int N = it->s->gpus[v[LV_G]], cp = v[lv];

	if ((N / v[LV_TP] / v[LV_PP]) % cp != 0 ||
	    !layout_cp_seq_ok(cp, it->base->mem.seq))
		return 0;
	/* a zero_group shards within groups of that many dp * cp ranks:
	 * the splits whose dp * cp = N / (tp pp) it does not divide are
	 * skipped and counted (layout.h layout_zero_group_gpus, the rule
	 * gpuplan.memory zero_group refuses the layout by) */
	if (it->s->zero_group > 0 &&
	    layout_zero_group_gpus(it->s->zero_group, N / v[LV_TP] / v[LV_PP],
				   v[LV_TP]) < 0) {
		((sweep_iter *)it)->st.ungrouped++;
		return 0;
	}
	return 1;
}

/* DeepSpeed-Ulysses (the ulysses option, train_layer.c ulysses_comm): a
 * group of u ranks that splits the sequence in place of a CP ring -- cp
 * 1 beside it, as gp.train refuses both -- dividing the stage's N / (tp
 * pp) ranks, at most the sequence's tokens (layout_check_ulysses: each
 * rank holds seq / u of them) and splitting a TP rank's heads by the
 * one rule gp.train refuses by (layout.h layout_ulysses_heads_ok).
 * Ulysses pads the sequence to a multiple of u (verl/utils/ulysses.py
 * ulysses_pad), so CP's 2 cp chunks rule is not its.  A job that gives
 * a CP ring's rotation (cp_allgather, cp_alltoall: gp.train refuses
 * cp_rotate beside ulysses) searches no Ulysses group, nor a space
 * whose ulysses_pp1 keeps Ulysses off pipelines (the hf stack: verl's
 * FSDP workers' mesh is dp x sp alone; deepspeed: its pipeline grid has
 * no sequence axis) a layout with pp > 1, nor one whose ulysses_tp1
 * keeps it off TP (hf) a layout with tp > 1. */
static inline int ok_ulysses(const sweep_iter *it, int lv)
{
	const int *v = it->cur;
	int N = it->s->gpus[v[LV_G]], u = v[lv];

	if (u == 1)
		return 1;
	return v[LV_CP] == 1 && !it->base->cp_allgather &&
		!it->base->cp_alltoall &&
		!(it->s->ulysses_pp1 && v[LV_PP] > 1) &&
		!(it->s->ulysses_tp1 && v[LV_TP] > 1) &&
		(N / v[LV_TP] / v[LV_PP]) % u == 0 &&
		it->base->mem.seq >= u &&
		layout_ulysses_heads_ok(it->m->heads, it->m->kv_heads,
					v[LV_TP], u);
}

/* The experts' TP of the split the odometer is at: the ETP level's 1
 * folds the experts (etp 1), its 0 splits them as tp (ok_etp). */
static inline int split_etp(const sweep_iter *it)
{
	return it->cur[LV_ETP] ? 1 : it->cur[LV_TP];
}

/* The experts' TP (layout.h): 0 as tp, 1 folded.  Folding with tp 1 is
 * the same layout again, and a dense model has no experts to fold.  The
 * fused grouped MLP (fused_grouped_mlp) runs only with the experts
 * unsplit: etp as tp > 1 is skipped, as gp.train refuses it
 * (train_prep.c check_fused_mlp). */
static inline int ok_etp(const sweep_iter *it, int lv)
{
	int tp = it->cur[LV_TP];

	if (!(it->mask[lv] >> it->cur[lv] & 1u))
		return 0;
	if (it->cur[lv] == 0)
		return tp == 1 || !it->base->fused_mlp ||
			!(it->m->moe.experts > 0);
	return tp == 1 ? !(it->mask[lv] & 1u) : it->m->moe.experts > 0;
}

/* Do the split's groups fit the job's nodes as the step places them
 * (layout_fill_place)?  On nodes that are hosts the launcher fills them
 * in the rank order, the last node partial, so every group lies within
 * the job's ceil(N / G) nodes: a 20-GPU job of TP1 PP5 DP4 on 8-GPU
 * nodes puts each PP group 2 + 2 + 1 on 3 nodes, priced on the node of 1
 * (comm.h gp_group).  On NVLink domains of several hosts (it->domain)
 * the groups keep equal shares a domain, and a group whose stride does
 * not divide the domain takes the largest share of its ranks that both
 * fits one and divides the group (layout.c in_node): 144 GB200s with a
 * PP 9 group at stride 16 hold floor(72 / 16) = 4, down to 3 (a divisor
 * of 9), a domain, and need 3 domains of the job's 2.  Such a split is
 * not a layout of this GPU count, as one whose degrees do not divide it
 * is not: skipped (counted in unplaced), so that the counts' other
 * splits are still searched.  The job's nodes are train_prep.c
 * place_job's: the system's, or as many as the GPUs need. */
static int places(sweep_iter *it, int ep, int etp)
{
	const int *v = it->cur;
	int N = it->s->gpus[v[LV_G]], i;
	double nodes = ceil((double)N / it->G);
	gp_layout y, c;
	gp_place_key key;
	gp_group g[GP_GRP_COUNT];
	gp_error e;

	if (nodes < it->nodes)
		nodes = it->nodes;
	memset(&y, 0, sizeof y);
	y.tp = v[LV_TP];
	y.pp = v[LV_PP];
	y.cp = seq_ranks(it);
	y.dp = N / v[LV_TP] / v[LV_PP] / y.cp;
	y.ep = ep;
	y.etp = etp;
	y.micro_batch = 1;
	memcpy(y.order, it->base->mem.lay.order, sizeof y.order);
	/* a layout the step refuses for another reason is its to report */
	if (layout_check(it->m, &y, &c, &e))
		return 1;
	layout_place_key(&c, it->G, &key);
	key.domain = it->domain;
	if (layout_fill_place(&key, g, &e))
		return 1;
	for (i = 0; i < GP_GRP_COUNT; i++)
		if (g[i].ranks > 1 && g[i].nodes > nodes) {
			it->st.unplaced++;
			return 0;
		}
	return 1;
}

/* Does the split's shard group under hybrid sharding (hybrid_gpus: the
 * zero_group's N x tp GPUs, or the node) cut an expert group of etp x ep
 * GPUs?  layout_check refuses such a layout (layout.h layout_hsdp_
 * experts_ok: the group would hold no expert replica to shard the
 * experts' states with, Megatron-Core's rule), so the search skips it: counted at the ep level when
 * every layout of the split shards in groups (a zero_group, or hybrid
 * sharding alone searched), else ok_hybrid drops the hybrid variant. */
static inline int cuts_experts(const sweep_iter *it, int ep, int etp)
{
	/* a dense model's splits skip the group's arithmetic */
	return it->m->moe.experts > 0 &&
		!layout_hsdp_experts_ok(it->m->moe.experts, hybrid_gpus(it),
					etp, ep);
}

static inline int ok_ep(const sweep_iter *it, int lv)
{
	const int *v = it->cur;
	int N = it->s->gpus[v[LV_G]];
	int etp = split_etp(it);

	/* the stage's ranks tp * cp * dp = N / pp; ep_overlap needs
	 * ep > 1 (train_prep.c check_ep_overlap), pad_share on a MoE
	 * model ep 1 (check_pad_share) */
	if (!((v[lv] > 1 || !it->base->ep_overlap) &&
	      (v[lv] < 2 || !(it->base->pad_share > 0.0) ||
	       !(it->m->moe.experts > 0)) &&
	      layout_ep_ok(it->m, v[lv], etp, N / v[LV_PP])))
		return 0;
	if (cuts_experts(it, v[lv], etp) &&
	    (it->s->zero_group > 0 || !(it->mask[LV_HS] & 1u))) {
		((sweep_iter *)it)->st.expert_cut++;
		return 0;
	}
	return places((sweep_iter *)it, v[lv], etp);
}

/* Micro-batches per pipeline per step: global_batch / (dp mb). */
static inline double level_per(const sweep_iter *it)
{
	const int *v = it->cur;
	double dp = it->s->gpus[v[LV_G]] / v[LV_TP] / v[LV_PP] /
		seq_ranks(it);

	return layout_micro_per_step(it->base->global_batch, dp, level_mb(it));
}

/* The micro-batches of one pipeline schedule call: pp_microbatches
 * where given (train.h pp_call_mb), else the step's.  The schedule's
 * rules (DualPipe's 2 x pp, interleaving's multiple of pp) hold for
 * them, as micro_per_step (train_prep.c) checks a given layout. */
static inline double level_call(const sweep_iter *it)
{
	return it->base->pp_call_mb > 0 ? it->base->pp_call_mb :
		level_per(it);
}

/* A whole count of micro-batches a step, and with pp_microbatches and
 * a pipeline, a whole count of calls: a layout whose step the calls
 * do not divide is left out, as gp.train refuses it (micro_per_step),
 * not the search's refusal at the first such layout -- pp 1 among
 * them, where there is no schedule to call. */
static inline int ok_mb(const sweep_iter *it, int lv)
{
	double per = level_per(it);

	(void)lv;
	return layout_micro_per_step_ok(per) &&
		(it->cur[LV_PP] == 1 || it->base->pp_call_mb <= 0 ||
		 fmod(per, it->base->pp_call_mb) == 0);
}

static inline int ok_mask(const sweep_iter *it, int lv)
{
	return it->mask[lv] >> it->cur[lv] & 1u;
}

/* The ZeRO stage as the mask gives it, and with FSDP's strategies
 * searched together (sweep.h fsdp_pairs) only the stages paired with
 * the hybrid level's value: full_shard and shard_grad_op without hybrid
 * sharding, hybrid_shard at ZeRO-3 (PyTorch's HYBRID_SHARD: "Apply
 * FULL_SHARD within a node, and replicate parameters across nodes",
 * torch/distributed/fsdp/api.py ShardingStrategy), never the hybrid
 * ZeRO-2 that no strategy asked for. */
static inline int ok_zero(const sweep_iter *it, int lv)
{
	unsigned p = it->s->fsdp_pairs;

	return ok_mask(it, lv) &&
		(!p || (p >> ((it->cur[LV_HS] ? 4 : 0) + it->cur[lv]) & 1u));
}

/* The recompute policies as the mask gives them; with activation_
 * offload_layers none alone (job_pp_ok's Megatron-Core check: "CPU
 * offloading does not work when activation recomputation is
 * enabled"). */
static inline int ok_rec(const sweep_iter *it, int lv)
{
	return ok_mask(it, lv) && (it->base->mem.act_offload_layers <= 0 ||
				   it->cur[lv] == GP_RECOMPUTE_NONE);
}

/* The pipeline schedule (layout.h): 1F1B and interleaved are Megatron-
 * LM's, told apart by vpp (ok_vpp); DualPipe (DeepSeek-V3 report arXiv:
 * 2412.19437 sec. 3.2.1) pairs stage r with pp - 1 - r on a rank and
 * feeds half the micro-batches from each end.  Its rules are
 * layout_dualpipe_ok's (layout.c), the ones gp.train refuses by. */
static inline int ok_sched(const sweep_iter *it, int lv)
{
	const int *v = it->cur;

	if (!ok_mask(it, lv))
		return 0;
	switch (v[lv]) {
	case GP_SCHED_INTERLEAVED:
		/* some vpp > 1 to run over */
		return v[LV_PP] > 1 && it->hi[LV_V] > 1;
	case GP_SCHED_DUALPIPE:
		/* split_ends is priced for 1F1B and the interleaved
		 * schedule (memory_layout.c split_ends_check) */
		return !it->base->mem.split_ends &&
			layout_dualpipe_ok(v[LV_PP], 1, level_call(it));
	}
	return 1;
}

/* Interleaving as Megatron-LM takes it: the layers divide into pp x vpp
 * chunks and the micro-batches into groups of pp.  ep_overlap at pp > 1
 * needs it (train_prep.c check_ep_overlap), unless DualPipe runs the
 * overlap.  1F1B and DualPipe run one chunk a stage (vpp 1), the
 * interleaved schedule more. */
static inline int ok_vpp(const sweep_iter *it, int lv)
{
	const int *v = it->cur;
	int pp = v[LV_PP], vpp = v[lv];

	if (v[LV_SCH] != GP_SCHED_INTERLEAVED)
		return vpp == 1 && (pp == 1 || !it->base->ep_overlap ||
				    v[LV_SCH] == GP_SCHED_DUALPIPE);
	/* the uneven ends under interleaving are a given layout's rank
	 * totals (memory_layout.c stage_ends_check): the search keeps to
	 * the even chunks it enumerates */
	if (it->base->mem.first_stage_layers > 0 ||
	    it->base->mem.last_stage_layers > 0)
		return 0;
	/* split_ends: a stage's layers + ends slots divide into its vpp
	 * model chunks, a chunk possibly the embedding or the loss alone
	 * (memory_layout.c split_ends_check, layout.c check_vpp) */
	if (it->base->mem.split_ends)
		return vpp > 1 && layout_split_ends_ok(it->m->layers, pp, vpp) &&
			fmod(level_call(it), pp) == 0;
	return vpp > 1 && (layout_vpp_ok(it->m, pp, vpp) &&
			   it->m->layers % (pp * vpp) == 0 &&
			   fmod(level_call(it), pp) == 0);
}

/* Without TP there is no sequence to split nor a TP collective to
 * overlap: off, once, whatever the mask. */
static inline int ok_with_tp(const sweep_iter *it, int lv)
{
	return it->cur[LV_TP] == 1 ? it->cur[lv] == 0 : ok_mask(it, lv);
}

/* Sequence parallelism as ok_with_tp, and on whenever the experts fold
 * over tp > 1 (layout.c's check_etp). */
static inline int ok_sp(const sweep_iter *it, int lv)
{
	return ok_with_tp(it, lv) &&
		(it->cur[LV_TP] == 1 || !it->cur[LV_ETP] || it->cur[lv]);
}

/* Does hybrid sharding at the current tp, pp, cp, ep and etp shard
 * exactly as full sharding does: each shard group (layout_check's
 * shard, eshard: the part of the dp * cp and edp groups one node of
 * hybrid_gpus holds, in the rank order) the whole group?  Then the
 * replicate groups hold one rank each, and the step prices the same
 * collectives on the same groups (train_stage.c train_zero_coll_of: "sh
 * >= g->ranks" takes the whole group's) and the same memory: one layout
 * under two names.  Llama 3 70B on 32 h200-sxm listed "TP4 PP4 DP2 ZeRO-3"
 * and "TP4 PP4 DP2 ZeRO-3 HSDP" at the same 122.16 s: the stage's
 * tp x dp = 8 ranks sit in one 8-GPU node, so its shard group is the
 * whole DP2 group.  A layout the step refuses is the step's to report. */
static int hybrid_whole(const sweep_iter *it)
{
	const int *v = it->cur;
	int N = it->s->gpus[v[LV_G]];
	gp_layout y, full, hs;
	gp_error e;

	memset(&y, 0, sizeof y);
	y.tp = v[LV_TP];
	y.pp = v[LV_PP];
	y.cp = seq_ranks(it);
	y.dp = N / v[LV_TP] / v[LV_PP] / y.cp;
	y.ep = v[LV_EP];
	y.etp = split_etp(it);
	y.micro_batch = 1;
	y.zero = 3;             /* the shard groups are alike at any stage */
	memcpy(y.order, it->base->mem.lay.order, sizeof y.order);
	if (layout_check(it->m, &y, &full, &e))
		return 0;
	y.hsdp = hybrid_gpus(it);
	if (y.hsdp <= 0 || layout_check(it->m, &y, &hs, &e))
		return 0;
	return hs.shard >= full.shard && hs.eshard >= full.eshard;
}

/* Hybrid sharding as the mask gives it, but not twice: where its shard
 * groups are the whole groups (hybrid_whole; a job inside one node
 * always), the layout is full sharding's, kept under that name when
 * full sharding is searched too. */
static inline int ok_hybrid(const sweep_iter *it, int lv)
{
	/* full sharding searched at each stage hybrid sharding pairs with
	 * (fsdp_pairs: hybrid_shard's ZeRO-3 beside full_shard's) */
	unsigned p = it->s->fsdp_pairs;
	int twin = (it->mask[lv] & 1u) && (!p || !((p >> 4) & ~p & 0xfu));

	return ok_mask(it, lv) && !(it->cur[lv] && twin &&
				    (it->s->gpus[it->cur[LV_G]] <= it->G ||
				     hybrid_whole(it))) &&
		!(it->cur[lv] && cuts_experts(it, it->cur[LV_EP],
					      split_etp(it)));
}

static int level_ok(const sweep_iter *it, int lv)
{
	switch (lv) {
#define OK(ID, name, type, lua, at, vals, bound, count, hi, def, ok) \
	case LV_##ID: return ok(it, LV_##ID);
	SWEEP_DIMS(OK)
#undef OK
	}
	return 0;
}

/* Is the current value of level lv, and every larger one, past what
 * level_ok can pass given the levels outside it?  A split larger than
 * what remains of the GPU count divides nothing (ok_tp, ok_pp, ok_cp,
 * ok_ep: each divides it), and pp x vpp past the layers splits none
 * (layout_vpp_ok): the odometer moves on at once, so that a model of 2^24
 * layers does not step through 2^23 VPP values per split (split_cap
 * clamps each level for the largest count only). */
static int level_past(const sweep_iter *it, int lv)
{
	const int *v = it->cur;
	int N = it->s->gpus[v[LV_G]];

	switch (lv) {
	case LV_TP: return v[lv] > N;
	case LV_PP: return v[lv] > N / v[LV_TP];
	case LV_CP: return v[lv] > N / v[LV_TP] / v[LV_PP];
	case LV_U: return v[lv] > N / v[LV_TP] / v[LV_PP] / v[LV_CP];
	/* etp x ep divides the stage's N / pp GPUs (ok_ep) */
	case LV_EP: return v[lv] > N / v[LV_PP] / split_etp(it);
	case LV_V: return v[lv] > 1 && (v[LV_SCH] != GP_SCHED_INTERLEAVED ||
					v[LV_PP] < 2 ||
					(double)v[LV_PP] * v[lv] >
					it->m->layers +
					(it->base->mem.split_ends ? 2 : 0));
	}
	return 0;
}

/* The valid values of the innermost three levels (ZeRO stage, TP
 * overlap, DP overlap) in the odometer's order, for tp 1 and tp > 1,
 * without and with hybrid sharding (ok_zero): what level_ok would pass,
 * as a list the enumeration steps through (inner_row's). */
typedef char inner_three[LV_N - LV_Z == 3 ? 1 : -1];

static inline int inner_row(const sweep_iter *it)
{
	return (it->cur[LV_TP] == 1) | (it->cur[LV_HS] ? 2 : 0);
}

static void inner_lists(sweep_iter *it)
{
	int one, z, a, b;

	for (one = 0; one < 4; one++) {
		it->ntri[one] = 0;
		it->cur[LV_TP] = one & 1 ? 1 : 2;
		it->cur[LV_HS] = one >> 1;
		for (z = it->lo[LV_Z]; z <= it->hi[LV_Z]; z++)
		for (a = it->lo[LV_TPO]; a <= it->hi[LV_TPO]; a++)
		for (b = it->lo[LV_DPO]; b <= it->hi[LV_DPO]; b++) {
			it->cur[LV_Z] = z;
			it->cur[LV_TPO] = a;
			it->cur[LV_DPO] = b;
			if (!level_ok(it, LV_Z) || !level_ok(it, LV_TPO) ||
			    !level_ok(it, LV_DPO))
				continue;
			it->tri[one][it->ntri[one]][0] = z;
			it->tri[one][it->ntri[one]][1] = a;
			it->tri[one][it->ntri[one]][2] = b;
			it->ntri[one]++;
		}
	}
}

/* The odometer before its first layout: each level's range, the
 * innermost three levels' lists, the outermost before its first value. */
static void iter_start(sweep_iter *it)
{
	int lv;

	it->started = 1;
	for (lv = 0; lv < LV_N; lv++)
		level_range(it, lv, &it->lo[lv], &it->hi[lv]);
	inner_lists(it);
	it->cur[0] = it->lo[0] - 1;
	it->moved = 0;
}

/* write_layout's step when only the innermost levels moved: their
 * values into *out and *c, the rest of them the last yield's (inline:
 * next_inner, most of a sweep's steps, writes them without a call). */
static inline void write_inner(const sweep_iter *it, train_cfg *out,
			       sweep_cand *c, long idx)
{
	const int *v = it->cur;
	const int all = 0;
	int N = 0;       /* the GPU count's level is not inner: unwritten */
	int u = 0;       /* nor the Ulysses group's */

#define CFG(member) (&out->member)
#define NOCFG (&N)
#define ULY (&u)
#define SET(ID, name, type, lua, at, vals, bound, count, hi, def, ok) \
	if (all || LV_##ID >= LV_Z) { \
		*(at) = (type)VALUE_##vals(bound, count, v[LV_##ID]); \
		c->name = (type)VALUE_##vals(bound, count, v[LV_##ID]); \
	}
	SWEEP_DIMS(SET)
#undef SET
#undef CFG
#undef NOCFG
#undef ULY
	if (it->s->whole_z3)
		out->mem.grads_whole = out->mem.lay.zero == 3;
	(void)N;
	(void)u;
	c->index = idx;
	c->step = c->tokens_per_s = c->mfu = 0;
	c->cost = c->train_time = c->mem_total = 0;
	c->score = 0;
}

/* The layout at the odometer's position, the idx-th, into *out and *c:
 * each level's value into the config and the candidate, the innermost
 * only when only they moved since the last yield and whole is 0 (the
 * rest of *out and *c is that yield's), else all of them. */
static void write_layout(const sweep_iter *it, train_cfg *out,
			 sweep_cand *c, int whole, long idx)
{
	const int *v = it->cur;
	int N = it->s->gpus[v[LV_G]], u = 1;

#define CFG(member) (&out->member)
#define NOCFG (&N)
#define ULY (&u)
#define SET(ID, name, type, lua, at, vals, bound, count, hi, def, ok) \
	if (all || LV_##ID >= LV_Z) { \
		*(at) = (type)VALUE_##vals(bound, count, v[LV_##ID]); \
		c->name = (type)VALUE_##vals(bound, count, v[LV_##ID]); \
	}
	if (!whole && it->inner) {
		write_inner(it, out, c, idx);
		return;
	}
	if (whole)
		*out = *it->base;
	memset(c, 0, sizeof *c);
	{
		const int all = 1;

		SWEEP_DIMS(SET)
	}
#undef SET
#undef CFG
#undef NOCFG
#undef ULY
	/* grad_sync step: ZeRO-3's gradients whole until the step's one
	 * reduce-scatter (gpuplan.memory sharding), the other stages'
	 * reduced once per step as they are */
	if (it->s->whole_z3)
		out->mem.grads_whole = out->mem.lay.zero == 3;
	/* A Ulysses group is the engine's CP group, its exchange Ulysses'
	 * all-to-alls (gpuplan.memory's cp_ulysses, as gp.train sets it) */
	out->mem.cp_ulysses = u > 1;
	if (u > 1)
		out->mem.lay.cp = u;
	out->mem.lay.dp = N / v[LV_TP] / v[LV_PP] / out->mem.lay.cp;
	/* DualPipe runs the all-to-all and the pipeline sends under the
	 * paired chunk's compute: the overlaps the space turns on for it
	 * (gp.train's defaults under dualpipe), the base's elsewhere. */
	{
		int dual = v[LV_SCH] == GP_SCHED_DUALPIPE;

		out->ep_overlap = it->base->ep_overlap ||
			(dual && (it->s->dual_on & 1u));
		out->overlap_p2p = it->base->overlap_p2p ||
			(dual && (it->s->dual_on & 2u));
		/* DualPipe is DeepSeek's own framework, not Megatron-Core's
		 * grouped MLP: no fp8 row padding copies (gp.train's
		 * moe_fp8_pad default under dualpipe, which refuses copy) */
		out->moe_fp8_copy = !dual && it->base->moe_fp8_copy;
	}
	out->mem.lay.microbatches = 0;
	c->index = idx;
	c->dp = out->mem.lay.dp;
}

/* sweep_next; whole 0: *out is the config the last call wrote, and only
 * the layout's fields are written again (sweep_run's loop). */
static int next_layout(sweep_iter *it, train_cfg *out, sweep_cand *c,
		       int whole)
{
	const sweep_space *s = it->s;
	int lv, one;

	if (!it->started) {
		iter_start(it);
		lv = 0;
	} else {
		lv = LV_Z;
	}
	for (;;) {
		/* The innermost three levels run over their list of valid
		 * values (inner_lists), the next of it or, at its end, the
		 * level outside them. */
		if (lv == LV_Z) {
			const int *t3;

			one = inner_row(it);
			if (++it->tri_i >= it->ntri[one]) {
				lv = LV_Z - 1;
				continue;
			}
			t3 = it->tri[one][it->tri_i];
			lv = t3[0] != it->cur[LV_Z] ? LV_Z :
				t3[1] != it->cur[LV_TPO] ? LV_TPO : LV_DPO;
			if (lv < it->moved)
				it->moved = lv;
			it->cur[LV_Z] = t3[0];
			it->cur[LV_TPO] = t3[1];
			it->cur[LV_DPO] = t3[2];
			lv = LV_Z;
		} else {
			if (lv < it->moved)
				it->moved = lv;
			if (++it->cur[lv] > it->hi[lv] ||
			    level_past(it, lv)) {
				if (lv == 0)
					return 0;
				lv--;
				continue;
			}
			if (!level_ok(it, lv))
				continue;
			if (++lv == LV_Z) {
				/* Into the innermost: their first values. */
				it->tri_i = -1;
				it->cur[LV_Z] = it->cur[LV_TPO] =
					it->cur[LV_DPO] = -1;
			} else {
				it->cur[lv] = it->lo[lv] - 1;
			}
			continue;
		}
		/* A layout: this shard's, or the next. */
		{
			long idx = it->index++;

			if (s->shard_n > 0 && idx % s->shard_n != s->shard_k)
				continue;
			it->inner = it->moved >= LV_Z;
			it->split = it->moved > LV_EP &&
				it->cur[LV_HS] == it->last_hs;
			it->last_hs = it->cur[LV_HS];
			it->moved = LV_N;
			/* next_inner's list until the innermost levels
			 * leave it (tp and hybrid sharding, so one,
			 * stay) */
			it->trow = (const int (*)[3])it->tri[one];
			it->inner_n = s->shard_n > 0 ? 0 : it->ntri[one];
			it->st.divided++;
			write_layout(it, out, c, whole, idx);
			return 1;
		}
	}
}

/* next_layout's step when it stays within the innermost three levels
 * (the next entry of their list) and no shard filters it -- most steps
 * of a sweep (7 of 8 in bench/sweep_bench's plan sweep) -- without its
 * loop: the same odometer, index and yield.  The last yield reset moved
 * to LV_N and this one moves only the innermost levels, so the layout
 * is inner.  0, nothing changed, when the step leaves them. */
static inline int next_inner(sweep_iter *it, train_cfg *out, sweep_cand *c)
{
	const int *t3;

	/* inner_n: 0 before the first yield (sweep_begin's memset) and
	 * under a shard (next_layout) */
	if (it->tri_i + 1 >= it->inner_n)
		return 0;
	t3 = it->trow[++it->tri_i];
	it->cur[LV_Z] = t3[0];
	it->cur[LV_TPO] = t3[1];
	it->cur[LV_DPO] = t3[2];
	it->inner = it->split = 1;
	it->st.divided++;
	write_inner(it, out, c, it->index++);
	return 1;
}

int sweep_next(sweep_iter *it, train_cfg *out, sweep_cand *c)
{
	return next_layout(it, out, c, 1);
}

void sweep_fill(sweep_cand *c, const train_result *r)
{
	c->step = r->step;
	c->tokens_per_s = r->tokens_per_s;
	c->mfu = r->mfu;
	c->cost = r->cost;
	c->train_time = r->train_time;
	c->mem_total = r->mem.total;
}

double sweep_score(sweep_key k, const sweep_cand *c)
{
	switch (k) {
	case SWEEP_TIME:
		return 1.0 / c->tokens_per_s;
	case SWEEP_COST:
	case SWEEP_PER_DOLLAR:
		/* price per token = price x gpus / 3600 / tokens/s; ranking
		 * by it is ranking by gpus / tokens/s when the price is per
		 * GPU-hour of one card */
		return c->gpus / c->tokens_per_s;
	case SWEEP_MFU:
		return -c->mfu;
	case SWEEP_GPUS:
		return c->gpus + 1e-3 * (1.0 - 1.0 / (1.0 + 1.0 /
						       c->tokens_per_s));
	default:
		return HUGE_VAL;
	}
}

int sweep_within(const sweep_space *s, const sweep_cand *c)
{
	if (s->max_time > 0 && !(c->train_time > 0 &&
				 c->train_time <= s->max_time))
		return 0;
	/* price 0 is a free card: cost 0 meets any budget (a budget
	 * without a price is gpuplan.sweep's refusal: the engine's 0 is
	 * the price given) */
	if (s->max_cost > 0 && !(c->cost >= 0 && c->cost <= s->max_cost))
		return 0;
	return 1;
}

void sweep_keep(sweep_cand *top, int k, int *n, const sweep_cand *c)
{
	int i;

	if (k <= 0)
		return;
	if (*n == k && !(c->score < top[k - 1].score))
		return;
	i = *n < k ? (*n)++ : k - 1;
	/* Shift the worse ones down; equal scores keep enumeration order
	 * (strictly better moves up). */
	while (i > 0 && c->score < top[i - 1].score) {
		top[i] = top[i - 1];
		i--;
	}
	top[i] = *c;
}

/* Can a layout whose step is at least lb still enter the list or meet
 * the deadline and budget?  0 when it cannot. */
static int may_enter(const sweep_space *s, sweep_key key, const train_cfg *c,
		     const sweep_cand *cand, const sweep_cand *top, int k,
		     int ntop, double lb)
{
	sweep_cand b = *cand;
	double tps = c->global_batch * c->mem.seq / lb;

	b.tokens_per_s = tps;
	if (c->tokens > 0) {
		/* at least one step, as train.c's run time */
		b.train_time = fmax(c->tokens, c->global_batch * c->mem.seq) / tps;
		if (s->max_time > 0 && b.train_time > s->max_time)
			return 0;
		b.cost = gp_gpu_hours_cost(b.train_time, b.gpus, c->price);
		if (s->max_cost > 0 && b.cost > s->max_cost)
			return 0;
	}
	/* MFU's score needs the FLOPs: no bound on it here. */
	if (ntop < k || key == SWEEP_MFU)
		return 1;
	return sweep_score(key, &b) < top[k - 1].score;
}

/* What the gate of one layout asks may_enter. */
typedef struct gate_ctx {
	const sweep_space *s;
	sweep_key key;
	const train_cfg *c;
	const sweep_cand *cand, *top;
	int k, ntop;
} gate_ctx;

static int gate(void *ud, double lb)
{
	const gate_ctx *g = ud;

	return may_enter(g->s, g->key, g->c, g->cand, g->top, g->k, g->ntop,
			 lb);
}

int sweep_run(const gp_model *m, const roof_device *d, const gp_topo *t,
	      const train_cfg *base, const sweep_space *s, sweep_key key,
	      train_cache *cache, sweep_where where, void *ud,
	      sweep_cand *top, int k, int *ntop, sweep_stats *stats,
	      gp_error *err)
{
	sweep_iter it;
	train_cfg c;
	sweep_cand cand;
	train_result r;
	gp_error e2;
	gate_ctx g;
	long total = 0, done = 0, step = SWEEP_PROGRESS_N;
	int use_gate, gate_all, skip_unfit, bound;

	if (!top || !ntop || k < 0 || !cache)
		return gp_fail(err, "sweep: no result buffer or memo");
	if ((int)key < 0 || key >= SWEEP_KEYS)
		return gp_fail(err, "sweep: unknown key %d", (int)key);
	if (sweep_begin(&it, m, t, base, s, err))
		return GP_EINVAL;
	if (s->progress) {
		/* The layouts to come, counted by enumerating them: cheap
		 * next to pricing them. */
		while (sweep_next(&it, &c, &cand))
			total++;
		sweep_begin(&it, m, t, base, s, err);
		/* about a hundred updates, at most every SWEEP_PROGRESS_N */
		step = total / 100;
		step = step < 1 ? 1 : step > SWEEP_PROGRESS_N ?
			SWEEP_PROGRESS_N : step;
	}
	*ntop = 0;
	/* The gate's context but the count kept (the search's, the same
	 * for every layout), and whether a deadline or budget gates every
	 * layout (the space's). */
	g.s = s;
	g.key = key;
	g.c = &c;
	g.cand = &cand;
	g.top = top;
	g.k = k;
	gate_all = !s->no_bound && (s->max_time > 0 || s->max_cost > 0);
	/* the space's, the same for every layout: read once */
	skip_unfit = !s->time_all;
	bound = !s->no_bound;
	while (next_inner(&it, &c, &cand) ||
	       next_layout(&it, &c, &cand, it.st.divided == 0)) {
		if (s->progress && ++done % step == 0)
			s->progress(s->progress_ud, done, total);
		/* The bound first (once k are kept, or against a deadline or
		 * budget), then memory: what cannot rank or does not fit is
		 * not timed. */
		g.ntop = *ntop;
		c.skip_unfit = skip_unfit;
		use_gate = gate_all || (bound && *ntop == k);
		/* After the first layout the memo holds the model, device
		 * and topology; when only the innermost levels moved, the
		 * step's phase of the layout before is this one's, and when
		 * only levels inside the split moved (it.split), what that
		 * phase kept of its split is this one's. */
		/* (whole_z3: the gradients' config moves with the ZeRO
		 * stage, which the phase's reuse does not look at, so the
		 * configs are compared: train.h's "neither") */
		if ((it.st.divided > 1 ?
		     train_step_next(m, d, t, &c, cache, TRAIN_NEXT_BRIEF |
				     (s->whole_z3 ? 0u :
				      it.inner ? TRAIN_NEXT_REUSE :
				      it.split ? TRAIN_NEXT_FRESH |
				      TRAIN_NEXT_SPLIT : TRAIN_NEXT_FRESH),
				     use_gate ? gate :
				     NULL, &g, &r, &e2) :
		     train_step_gated(m, d, t, &c, cache,
				      use_gate ? gate : NULL, &g, &r, &e2))) {
			/* An input error (no NICs past a node, tokens out of
			 * range): the first is kept for the caller to report
			 * rather than a search that silently finds nothing. */
			if (it.st.errors++ == 0) {
				it.st.error = e2;
				it.st.error_at = cand;
			}
			continue;
		}
		if (r.bounded) {
			it.st.bounded++;
			continue;
		}
		if (r.step > 0)
			it.st.timed++;
		if (!r.fits) {
			if (r.mem.host_memory > 0 &&
			    r.mem.host_need > r.mem.host_memory) {
				if (it.st.past_host++ == 0 ||
				    r.mem.host_need < it.st.host_least) {
					it.st.host_least = r.mem.host_need;
					it.st.host_memory = r.mem.host_memory;
				}
			} else {
				/* The layout's own budget: a brief step
				 * writes only the total, fits and the host
				 * fields, so r.mem.budget was whatever the
				 * sweep's first, whole step left there (the
				 * same value only while that step priced
				 * memory and every layout shares its
				 * capacity and margin). */
				double budget = mem_budget(c.capacity,
							   &c.reserve);

				/* how far the nearest layout is from the
				 * card: "no layout fits" said nothing of
				 * whether one more GPU or ten would do */
				if (r.mem.total > budget &&
				    (it.st.past_gpu++ == 0 ||
				     r.mem.total < it.st.gpu_least)) {
					it.st.gpu_least = r.mem.total;
					it.st.gpu_budget = budget;
				}
			}
			continue;
		}
		it.st.fitting++;
		sweep_fill(&cand, &r);
		if (!sweep_within(s, &cand))
			continue;
		it.st.within++;
		cand.score = sweep_score(key, &cand);
		if (where && !where(ud, &cand))
			continue;
		sweep_keep(top, k, ntop, &cand);
	}
	if (s->progress)
		s->progress(s->progress_ud, total, total);
	if (stats)
		*stats = it.st;
	return GP_OK;
}
