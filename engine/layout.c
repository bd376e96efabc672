/*
 * layout.c - the parallel layout: one check, the pipeline stage split and
 * the placement of each dimension's groups on the nodes (see layout.h).
 */
#include "layout.h"

#include <float.h>
#include <math.h>
#include <string.h>

static const char *const schedule_names[GP_SCHED_COUNT] = {
	"1f1b", "interleaved", "dualpipe"
};
static const char *const pipe_names[GP_PIPE_COUNT] = {
	"megatron", "deepspeed"
};
static const char *const partition_names[GP_PART_COUNT] = {
	"auto", "uniform", "parameters", "type:transformer",
	"type:transformer|embedding"
};
static const char *const grp_names[GP_GRP_COUNT] = {
	"tp", "cp", "dp", "pp", "ep", "edp", "dp_cp", "etp"
};

const char *mem_schedule_name(gp_schedule s)
{
	return GP_NAME_OF(schedule_names, GP_SCHED_COUNT, s);
}

int mem_schedule_parse(const char *s, gp_schedule *out, gp_error *err)
{
	int v = -1; /* set by gp_parse_name on GP_OK */

	if (gp_parse_name(s, schedule_names, GP_SCHED_COUNT, &v,
			  "pipeline schedule", err))
		return GP_EINVAL;
	*out = (gp_schedule)v;
	return GP_OK;
}

const char *mem_pipe_name(gp_pipe_engine p)
{
	return GP_NAME_OF(pipe_names, GP_PIPE_COUNT, p);
}

int mem_pipe_parse(const char *s, gp_pipe_engine *out, gp_error *err)
{
	int v = -1; /* set by gp_parse_name on GP_OK */

	if (gp_parse_name(s, pipe_names, GP_PIPE_COUNT, &v,
			  "pipeline engine", err))
		return GP_EINVAL;
	*out = (gp_pipe_engine)v;
	return GP_OK;
}

const char *mem_partition_name(gp_partition p)
{
	return GP_NAME_OF(partition_names, GP_PART_COUNT, p);
}

int mem_partition_parse(const char *s, gp_partition *out, gp_error *err)
{
	int v = -1; /* set by gp_parse_name on GP_OK */

	if (gp_parse_name(s, partition_names, GP_PART_COUNT, &v,
			  "pipeline partition", err))
		return GP_EINVAL;
	*out = (gp_partition)v;
	return GP_OK;
}

const char *layout_grp_name(gp_grp g)
{
	return GP_NAME_OF(grp_names, GP_GRP_COUNT, g);
}

/* ---- rank order ------------------------------------------------------ */

static const char *const dim_names[GP_DIM_COUNT] = { "tp", "cp", "dp", "pp" };

/* Megatron-LM's default order "tp-cp-ep-dp-pp" (megatron/core/
 * parallel_state.py, initialize_model_parallel(order=...)): tensor
 * parallel ranks innermost, then context, data, pipeline outermost. */
static const unsigned char default_order[GP_DIM_COUNT] = {
	GP_DIM_TP, GP_DIM_CP, GP_DIM_DP, GP_DIM_PP
};

int layout_order_parse(const char *s, unsigned char order[GP_DIM_COUNT],
		       gp_error *err)
{
	int seen[GP_DIM_COUNT] = {0}, n = 0, i;
	const char *p = s;

	if (!s)
		return gp_fail(err, "rank order: NULL");
	while (*p) {
		size_t k = strcspn(p, "-");
		int found = -1;

		for (i = 0; i < GP_DIM_COUNT; i++)
			if (strlen(dim_names[i]) == k &&
			    strncmp(p, dim_names[i], k) == 0)
				found = i;
		if (found < 0 && !(k == 2 && strncmp(p, "ep", 2) == 0))
			return gp_fail(err, "order '%s': unknown dimension "
				       "'%.*s' (expected tp, cp, ep, dp, pp)",
				       s, (int)k, p);
		if (found >= 0) {
			if (seen[found])
				return gp_fail(err, "order '%s' names %s "
					       "twice", s, dim_names[found]);
			seen[found] = 1;
			order[n++] = (unsigned char)found;
		}
		p += k;
		if (*p == '-')
			p++;
	}
	if (n != GP_DIM_COUNT)
		return gp_fail(err, "order '%s' must name each of tp, cp, "
			       "dp and pp once (ep optional)", s);
	return GP_OK;
}

static int order_ok(const unsigned char o[GP_DIM_COUNT])
{
	int seen = 0, i;

	for (i = 0; i < GP_DIM_COUNT; i++) {
		if (o[i] >= GP_DIM_COUNT)
			return 0;
		seen |= 1 << o[i];
	}
	return seen == (1 << GP_DIM_COUNT) - 1;
}

static int all_zero(const unsigned char o[GP_DIM_COUNT])
{
	int i;

	for (i = 0; i < GP_DIM_COUNT; i++)
		if (o[i])
			return 0;
	return 1;
}

/* ---- checks ------------------------------------------------------------ */

int layout_check_cp_seq(int cp, double seq, gp_error *err)
{
	if (layout_cp_seq_ok(cp, seq))
		return GP_OK;
	return gp_fail(err, "cp %d needs seq a multiple of 2 x cp = %d "
		       "(each sequence splits into 2 cp chunks, two a rank, "
		       "to balance causal attention; got seq %g)",
		       cp, 2 * cp, seq);
}

int layout_check_ulysses_heads(int heads, int kv_heads, int tp, int n,
				gp_error *err)
{
	int th, tkv;

	if (layout_ulysses_heads_ok(heads, kv_heads, tp, n))
		return GP_OK;
	layout_ulysses_rank_heads(heads, kv_heads, tp, &th, &tkv);
	if (th < 1 || th % n != 0)
		return gp_fail(err, "ulysses %d must divide the %d attention "
			       "heads%s (each rank attends heads / ulysses of "
			       "the whole sequence)", n, th,
			       tp > 1 ? " of a TP rank" : "");
	return gp_fail(err, "ulysses %d and the %d kv heads%s: one must divide "
		       "the other (verl repeats the kv heads to ulysses when "
		       "they are fewer)", n, tkv,
		       tp > 1 ? " of a TP rank" : "");
}

int layout_check_ulysses(const gp_model *m, int tp, int n, double seq,
			 gp_error *err)
{
	if (n <= 1)
		return GP_OK;
	if (seq < n)
		return gp_fail(err, "ulysses %d is larger than seq %g (each "
			       "rank holds seq / ulysses tokens)", n, seq);
	return layout_check_ulysses_heads(m->heads, m->kv_heads, tp, n, err);
}

int layout_check_tp(const gp_model *m, int tp, gp_error *err)
{
	if (tp < 1)
		tp = 1;
	if (layout_tp_ok(m, tp))
		return GP_OK;
	if (m->heads % tp != 0)
		return gp_fail(err, "tp %d does not divide the %d attention "
			       "heads", tp, m->heads);
	return gp_fail(err, "tp %d and the %d kv heads: one must divide the "
		       "other", tp, m->kv_heads);
}

static int check_tp(const gp_model *m, const gp_layout *y, gp_error *err)
{
	return layout_check_tp(m, y->tp, err);
}

static int check_pp(const gp_model *m, const gp_layout *y, gp_error *err)
{
	if (layout_pp_ok(m, y->pp))
		return GP_OK;
	return gp_fail(err, "pp %d exceeds the %d layers", y->pp, m->layers);
}

static int check_vpp(const gp_model *m, const gp_layout *y, gp_error *err)
{
	if (layout_vpp_ok(m, y->pp, y->vpp))
		return GP_OK;
	/* A chunk may hold only the embedding or only the loss when
	 * they take a layer's place in the split (y->ends). */
	if (y->ends > 0 && y->pp > 1 &&
	    (double)y->pp * y->vpp <= (double)m->layers + y->ends)
		return GP_OK;
	if (y->pp == 1)
		return gp_usage(err, "vpp %d needs pipeline parallelism "
			       "(pp > 1)", y->vpp);
	if (y->ends > 0)
		return gp_fail(err, "pp %d x vpp %d model chunks exceed the "
			       "%d layers and the %d ends", y->pp, y->vpp,
			       m->layers, y->ends);
	return gp_fail(err, "pp %d x vpp %d model chunks exceed the %d "
		       "layers", y->pp, y->vpp, m->layers);
}

/* The ranks of a stage the expert grid folds over: tp * cp * dp. */
static long long stage_ranks(const gp_layout *y)
{
	return (long long)y->tp * y->cp * y->dp;
}

/* Expert tensor parallelism (Megatron-Core --expert-tensor-parallel-
 * size, default the tensor-parallel size): etp other than tp needs an
 * MoE model, and with tp > 1 sequence parallelism -- the expert layers
 * then take the T / tp tokens each rank holds (Megatron-LM's arguments
 * require sequence parallelism for MoE with tensor parallelism). */
static int check_etp(const gp_model *m, const gp_layout *y, gp_error *err)
{
	if (y->etp == y->tp)
		return GP_OK;
	if (m->moe.experts <= 0)
		return gp_fail(err, "etp %d given for a dense model (it must "
			       "equal tp %d)", y->etp, y->tp);
	if (y->tp > 1 && !y->sp)
		return gp_usage(err, "etp %d differs from tp %d: folding the "
			       "expert layers needs sequence parallelism "
			       "(sp) when tp > 1", y->etp, y->tp);
	return GP_OK;
}

static int check_ep(const gp_model *m, const gp_layout *y, gp_error *err)
{
	long long st = stage_ranks(y);

	if (layout_ep_ok(m, y->ep, y->etp, st))
		return GP_OK;
	if (y->ep > 1 && m->moe.experts <= 0)
		return gp_fail(err, "ep %d given for a dense model", y->ep);
	if (y->ep > 1 && m->moe.experts % y->ep != 0)
		return gp_fail(err, "ep %d does not divide the %d experts",
			       y->ep, m->moe.experts);
	return gp_fail(err, "etp %d x ep %d must divide tp*cp*dp = %lld "
		       "(the expert layers fold over the ranks of a "
		       "pipeline stage%s)", y->etp, y->ep, st,
		       y->etp == y->tp && y->etp > 1 ?
		       "; etp defaults to tp" : "");
}

/* Hybrid sharding shards what ZeRO 1, 2 and 3 shard (FSDP's HYBRID_SHARD
 * is FULL_SHARD in a node, _HYBRID_SHARD_ZERO2 SHARD_GRAD_OP in a node;
 * InternEvo's Hybrid Zero shards the ZeRO-1 optimizer states in a group
 * of zero1 ranks, gpuplan.memory's zero_group). */
static int check_hsdp(const gp_model *m, const gp_layout *y, gp_error *err)
{
	(void)m;
	if (y->hsdp == 0 || y->zero >= 1)
		return GP_OK;
	return gp_usage(err, "hsdp %d (sharding in groups of that many GPUs) "
		       "shards the ZeRO states: it needs zero 1, 2 or 3 (got "
		       "zero %d)", y->hsdp, y->zero);
}

/* The pipeline groups of the experts' grid are attention's
 * (Megatron-Core asserts it): the ranks inside pp in the rank order
 * number the same in both grids.  Always so with pp outermost. */
static long long pp_stride(const gp_layout *y, int expert)
{
	long long s = 1;
	int i;

	for (i = 0; i < GP_DIM_COUNT && y->order[i] != GP_DIM_PP; i++) {
		switch (y->order[i]) {
		case GP_DIM_TP:
			s *= expert ? y->etp : y->tp;
			break;
		case GP_DIM_CP:
			s *= expert ? 1 : y->cp;
			break;
		default:
			s *= expert ? stage_ranks(y) / y->etp : y->dp;
			break;
		}
	}
	return s;
}

#define NOCHECK NULL
#define COUNT 1
#define COUNT_TP 1
#define RANGE 0
#define DIM(f, kind, lo, hi, values, lua, chk) \
	{ #f, offsetof(gp_layout, f), kind, lo, hi, values, chk },
const gp_layout_dim layout_dims[] = {
	GP_LAYOUT_DIMS(DIM)
	{ NULL, 0, 0, 0, 0, NULL, NULL }
};
#undef DIM
#undef NOCHECK
#undef COUNT
#undef COUNT_TP
#undef RANGE

#define DIM_AT(y, d) ((int *)(void *)((char *)(y) + (d)->off))

int layout_check_dualpipe(int pp, int vpp, gp_error *err)
{
	if (layout_dualpipe_ok(pp, vpp, 0))
		return GP_OK;
	return gp_usage(err, "dualpipe needs an even pp of 2 or more and no "
			"vpp (got pp %d, vpp %d)", pp, vpp);
}

int layout_check(const gp_model *m, const gp_layout *in, gp_layout *out,
		 gp_error *err)
{
	const gp_layout_dim *d;
	gp_layout y;
	double gpus;

	if (!m || !in || !out)
		return gp_fail(err, "layout: NULL argument");
	y = *in;
	/* etp 0: Megatron's default, the tensor-parallel size. */
	if (y.etp == 0)
		y.etp = y.tp > 0 ? y.tp : 1;
	for (d = layout_dims; d->name; d++) {
		int v = *DIM_AT(&y, d);

		if (d->count && gp_check_count(v, 0, d->name, err))
			return GP_EINVAL;
		if (!d->count && (v < d->lo || v > d->hi))
			return gp_fail(err, "%s must be %s (got %d)", d->name,
				       d->values, v);
		if (d->count && v == 0)
			*DIM_AT(&y, d) = 1;
	}
	if (gp_check_nonneg(in->microbatches, "microbatches", err))
		return GP_EINVAL;
	if ((int)in->schedule < 0 || in->schedule >= GP_SCHED_COUNT)
		return gp_fail(err, "unknown pipeline schedule %d",
			       (int)in->schedule);
	if (in->schedule == GP_SCHED_DUALPIPE &&
	    layout_check_dualpipe(in->pp, in->vpp, err) != GP_OK)
		return GP_EINVAL;
	if (!all_zero(in->order) && !order_ok(in->order))
		return gp_fail(err, "rank order must be a permutation of tp, "
			       "cp, dp, pp");
	if (all_zero(in->order))
		memcpy(y.order, default_order, sizeof y.order);
	gpus = (double)y.dp * y.tp * y.pp * y.cp;
	if (gpus > GP_COUNT_MAX)
		return gp_fail(err, "tp*pp*dp*cp = %g GPUs must be at most %d",
			       gpus, GP_COUNT_MAX);
	for (d = layout_dims; d->name; d++)
		if (d->check && d->check(m, &y, err))
			return GP_EINVAL;
	/* A dense model has no expert layers, so no expert grid to keep
	 * in line with attention's pipeline groups. */
	if (m->moe.experts > 0 && pp_stride(&y, 0) != pp_stride(&y, 1))
		return gp_fail(err, "this rank order puts the expert layers' "
			       "pipeline groups (etp %d x ep %d x edp) apart "
			       "from attention's (tp %d x cp %d x dp %d); "
			       "pp outermost keeps them together",
			       y.etp, y.ep, y.tp, y.cp, y.dp);
	y.gpus = gpus;
	y.shard = (double)y.dp * y.cp;
	y.eshard = (double)stage_ranks(&y) / ((double)y.etp * y.ep);
	/* Hybrid sharding: each shard group is the part of the DPCP (EDP)
	 * group that one node of hsdp GPUs holds, placed in the rank order
	 * (layout_place); the groups replicate across the nodes (PyTorch
	 * FSDP HYBRID_SHARD: "shard within a node, replicate across
	 * nodes", its process groups the intra- and inter-node parts). */
	if (y.hsdp > 0) {
		gp_group g[GP_GRP_COUNT];

		if (layout_place(&y, y.hsdp, g, err))
			return GP_EINVAL;
		/* A shard group that cuts an expert group is no layout
		 * (layout.h layout_hsdp_experts_ok: Megatron-Core's rule). */
		if (!layout_hsdp_experts_ok(m->moe.experts, y.hsdp, y.etp,
					    y.ep))
			return gp_fail(err, "a shard group of %d GPUs (zero_group "
				       "x tp, or a node under hybrid_shard) cuts "
				       "the expert group etp %d x ep %d: it must "
				       "hold whole expert groups (etp x ep "
				       "dividing %d) to shard the experts' states",
				       y.hsdp, y.etp, y.ep, y.hsdp);
		y.shard = g[GP_GRP_DPCP].per_node;
		y.eshard = g[GP_GRP_EDP].per_node;
	}
	y.balanced = 0;
	y.n0 = y.m = 0;
	*out = y;
	return GP_OK;
}
#undef DIM_AT

/* ---- pipeline stage split -------------------------------------------- */

/* Largest n in [0, L] with a + n w < B (strict) or <= B (le = 1); -1
 * when even n = 0 fails. */
static int fit_layers(double a, double w, double B, int L, int le)
{
	double n;

#define FITS(k) (le ? a + (k) * w <= B : a + (k) * w < B)
	if (!FITS(0.0))
		return -1;
	if (w <= 0 || FITS((double)L))
		return L;
	n = floor((B - a) / w);
	if (n > L)
		n = L;
	if (n < 0)
		n = 0;
	while (n > 0 && !FITS(n))
		n -= 1;
	while (n < L && FITS(n + 1))
		n += 1;
#undef FITS
	return (int)n;
}

/* DeepSpeed's _lprobe for the item list [e0, w x L, e1] in p parts:
 * each of the first p - 1 parts takes items while its sum stays below
 * B, the last takes the rest and must not exceed B.  With identical
 * layers the greedy is closed-form: the first part takes n0 layers,
 * each middle part m, the last t at most.  Fills n0 and m. */
static int lprobe(double e0, double w, double e1, int L, int p, double B,
		  int *n0, int *m)
{
	int t;

	*n0 = fit_layers(e0, w, B, L, 0);
	if (*n0 < 0)
		return 0;  /* DeepSpeed would leave stage 0 empty */
	*m = fit_layers(0, w, B, L, 0);
	if (*m < 0)
		*m = 0;
	t = fit_layers(e1, w, B, L, 1);
	if (t < 0)
		return 0;
	return (double)*n0 + (double)(p - 2) * *m + t >= L;
}


void layout_split(gp_layout *y, int L, int balanced, double e0, double w,
		  double e1)
{
	double lo, hi, mid, sum, eps;
	int n0, mm;

	/* Uniform: L/p with the first L mod p stages one more -- DeepSpeed's
	 * partition_uniform, and Megatron-LM's split when p divides L (it
	 * refuses other p, or takes explicit first/last stage counts).
	 * Balanced: DeepSpeed's partition_balanced (deepspeed/runtime/
	 * utils.py, PipelineModule._partition_layers in runtime/pipe/
	 * module.py): a binary search for the smallest bottleneck B, from
	 * sum/p up to sum, with eps = 1e-3, each probe the greedy _lprobe
	 * above. */
	y->balanced = 0;
	if (y->pp == 1 || !balanced)
		return;
	sum = e0 + w * L + e1;
	lo = sum / y->pp;
	hi = sum;
	/* DeepSpeed's eps is 1e-3 parameters; past ~4.5e12 parameters that
	 * is below the spacing of doubles, lo + eps == lo and the search
	 * never ended.  Four ulps of the bound at least keeps every step
	 * moving; below 1.1e12 parameters eps stays 1e-3. */
	eps = fmax(1e-3, 4.0 * DBL_EPSILON * sum);
	while (hi > lo + eps) {
		mid = lo + (hi - lo) / 2;
		if (lprobe(e0, w, e1, L, y->pp, mid, &n0, &mm))
			hi = mid;
		else
			lo = mid + eps;
	}
	if (!lprobe(e0, w, e1, L, y->pp, hi, &n0, &mm))
		return;  /* unreachable: B = sum always succeeds */
	y->balanced = 1;
	y->n0 = n0;
	y->m = mm;
}

int layout_stage_list_set(const int *v, int n, gp_stage_store *store,
			  gp_stage_list *out, gp_error *err)
{
	out->n = 0;
	out->v = NULL;
	if (n < 0 || n > GP_STAGE_LIST_MAX)
		return gp_fail(err, "stage_layers: %d entries; at most %d "
			       "stages", n, GP_STAGE_LIST_MAX);
	if (n == 0)
		return GP_OK;
	if (!store)
		return gp_fail(err, "stage_layers: no store for the list");
	memmove(store->v, v, sizeof *v * (size_t)n);
	out->n = n;
	out->v = store->v;
	return GP_OK;
}

int layout_stage_list_parse(const char *s, gp_stage_store *store,
			    gp_stage_list *out, gp_error *err)
{
	int buf[GP_STAGE_LIST_MAX];
	const char *p = s;
	int n = 0;

	out->n = 0;
	out->v = NULL;
	if (!s || !*s)
		return GP_OK;
	for (;;) {
		long v = 0;
		const char *d = p;

		while (*p >= '0' && *p <= '9') {
			if (v <= GP_COUNT_MAX)
				v = v * 10 + (*p - '0');
			p++;
		}
		if (p == d || (*p != ',' && *p != '\0'))
			return gp_fail(err, "stage_layers: entry %d of '%s' is "
				       "not a whole number of layers (a comma "
				       "list such as 9,9,8,6)", n + 1, s);
		if (v < 1 || v > GP_COUNT_MAX)
			return gp_fail(err, "stage_layers: entry %d is %ld; "
				       "each stage holds one layer at least "
				       "(and at most %d)", n + 1, v,
				       GP_COUNT_MAX);
		if (n == GP_STAGE_LIST_MAX)
			return gp_fail(err, "stage_layers: more than %d "
				       "stages", GP_STAGE_LIST_MAX);
		buf[n++] = (int)v;
		if (*p == '\0')
			break;
		p++;
	}
	return layout_stage_list_set(buf, n, store, out, err);
}

int layout_stage_layers(const gp_layout *y, int L, int k)
{
	double left;

	if (y->pp == 1)
		return L;
	if (y->balanced == 2)
		return k >= 0 && k < y->stages.n ? y->stages.v[k] : 0;
	if (!y->balanced)
		return L / y->pp + (k < L % y->pp);
	if (k == 0)
		return y->n0;
	left = (double)L - y->n0 - (double)(k - 1) * y->m;
	if (left < 0)
		left = 0;
	if (k < y->pp - 1 && left > y->m)
		left = y->m;
	return (int)left;
}

int layout_stage_first(const gp_layout *y, int L, int k)
{
	double f;

	if (y->pp == 1 || k <= 0)
		return 0;
	if (y->balanced == 2) {
		long long t = 0;
		int j;

		for (j = 0; j < k && j < y->stages.n; j++)
			t += y->stages.v[j];
		return t > L ? L : (int)t;
	}
	if (!y->balanced)
		return k * (L / y->pp) + (k < L % y->pp ? k : L % y->pp);
	f = (double)y->n0 + (double)(k - 1) * y->m;
	return f > L ? L : (int)f;
}

/* Layer slots of rank j: its layers, and with split_ends (y->ends) the
 * embedding's on the first rank and the loss's on the last. */
static int rank_slots(const gp_layout *y, int L, int j)
{
	return layout_stage_layers(y, L, j) +
		(y->ends > 0 && j == 0) + (y->ends > 0 && j == y->pp - 1);
}

/* Interleaved model chunks (Megatron-Core, megatron/core/transformer/
 * transformer_layer.py get_transformer_layer_offset, and TransformerBlock
 * building layer offset + 1 .. offset + its count): chunk (vp_stage) c
 * of pipeline rank k starts at "offset = vp_stage * total_virtual_chunks
 * + (pp_rank * num_layers_per_virtual_rank)", total_virtual_chunks the
 * layers over vpp and num_layers_per_virtual_rank a rank's layers over
 * vpp -- the model read in chunks of that size, chunk i on rank i mod pp.
 * With num_layers_in_first_pipeline_stage / _last_ each chunk of the
 * first (last) rank holds "num_layers_in_first_pipeline_stage //
 * vp_size" and each middle rank's its middle count over vpp, in the same
 * order; with account_for_embedding_in_pipeline_split and _loss_ the
 * embedding and the loss take a slot of the first and the last chunk
 * ("offset -= 1" for every chunk but the first rank's first).  So rank
 * j's chunks are its slots S_j in vpp parts, and the chunks before
 * (c, k) are c of every rank's and one more of each rank before k.
 * Megatron-Core refuses the counts a rank's vpp do not divide
 * (TransformerConfig __post_init__: "must be divisible by virtual
 * pipeline parallel degree"); its pipeline_model_parallel_layout may
 * leave short chunks, and the published ones leave them at the model's
 * two ends, beside the embedding and the loss: Megatron-Bridge's
 * DeepSeek-V3 layout at pp 4, vpp 4 (recipes/deepseek/deepseek_v3.py,
 * "[[\"embedding\"] + [\"decoder\"] * 4] + [[\"decoder\"] * 4] * 14 +
 * [[\"decoder\"] + last_layer]") holds the last rank's 13 as 4, 4, 4
 * and 1, and Megatron-LM's GB200 DeepSeek-V3 guide's "--pipeline-model-
 * parallel-layout Et|(tt|)*30L" (docs/discussions/deepseek-v3-gb200-
 * optimization: "the first stage is Embedding + 1 transformer layer, the
 * last stage is Loss, and the middle 30 stages are 2 transformer
 * layers") at pp 8, vpp 4 rank 0's 7 as 1, 2, 2, 2 and rank 7's 6 as 2,
 * 2, 2, 0.  So a rank whose
 * slots vpp do not divide takes chunks of ceil(S_j / vpp), the first
 * rank's short one first (its first chunk holds the embedding), every
 * other rank's last. */
static int chunk_before(const gp_layout *y, int L, int j, int n)
{
	int S = rank_slots(y, L, j), v = y->vpp, q = (S + v - 1) / v;
	long long t;

	if (j == 0 && S % v != 0) {
		/* filled from its last chunk back */
		t = S - (long long)(v - n) * q;
		return t > 0 ? (int)t : 0;
	}
	t = (long long)n * q;
	return t < S ? (int)t : S;
}

/* Chunk c of rank k under the interleaved schedule: its transformer
 * layers, returned, and the model's index of its first into *first. */
static int chunk_layers(const gp_layout *y, int L, int k, int c, int *first)
{
	int j, n, e = y->ends > 0;
	long long off = 0;

	/* slots before chunk (c, k), and the chunk's own */
	for (j = 0; j < y->pp; j++)
		off += chunk_before(y, L, j, c + (j < k));
	n = chunk_before(y, L, k, c + 1) - chunk_before(y, L, k, c);
	/* the embedding's slot: the first chunk of rank 0 holds it, every
	 * later one starts a layer earlier; the loss's: the last chunk of
	 * the last rank */
	*first = (int)off - (e && (c > 0 || k > 0));
	n -= (e && c == 0 && k == 0) + (e && c == y->vpp - 1 && k == y->pp - 1);
	return n > 0 ? n : 0;
}

static int interleaved(const gp_layout *y)
{
	return y->pp > 1 && y->vpp > 1 && y->schedule == GP_SCHED_INTERLEAVED;
}

int layout_stage_moe(const gp_model *m, const gp_layout *y, int k, int nl)
{
	int c, first, n, moe = 0;

	if (m->moe.experts <= 0)
		return 0;
	if (!interleaved(y))
		return model_moe_in(m, layout_stage_first(y, m->layers, k), nl);
	for (c = 0; c < y->vpp; c++) {
		n = chunk_layers(y, m->layers, k, c, &first);
		if (n > 0)
			moe += model_moe_in(m, first, n);
	}
	return moe;
}

int layout_stage_kind(const gp_model *m, const gp_layout *y, int k, int nl,
		      char c)
{
	int j, first, n, r = 0;

	if (!m->pattern[0])
		return 0;
	if (!interleaved(y))
		return model_pattern_in(m, c, layout_stage_first(y, m->layers,
								  k), nl);
	for (j = 0; j < y->vpp; j++) {
		n = chunk_layers(y, m->layers, k, j, &first);
		if (n > 0)
			r += model_pattern_in(m, c, first, n);
	}
	return r;
}

int layout_stage_recomputed(const gp_layout *y, int L, int k, int nl, int n)
{
	int c, first, r = 0;

	if (n <= 0 || n >= nl)
		return nl;
	if (!interleaved(y))
		return n;
	/* each chunk is a TransformerBlock of its own, which checkpoints
	 * its first n layers */
	for (c = 0; c < y->vpp; c++) {
		int cl = chunk_layers(y, L, k, c, &first);

		r += cl < n ? cl : n;
	}
	return r < nl ? r : nl;
}

/* ---- placement --------------------------------------------------------- */

/* Ranks of a dimension of `size` at `stride` that share a node of G
 * ranks: every rank of the grid is r = sum of index x stride over the
 * dimensions (mixed radix, innermost first), nodes hold G consecutive
 * ranks, so a dimension whose stride is G or more puts each of its ranks
 * on another node, and one whose stride is below G puts G / stride of
 * them in a node (all of them when size x stride <= G).  Exact when G
 * and the strides are multiples of one another, as for power-of-two
 * degrees on 4- or 8-GPU nodes; otherwise see below. */
static double in_node(double size, double stride, double G)
{
	double k;

	if (stride >= G)
		return 1;
	k = floor(G / stride);
	if (k >= size)
		return size;
	/* Not aligned (a 72-GPU NVLink domain over power-of-two degrees):
	 * nodes hold unequal shares; take the largest divisor of size that
	 * every node can hold, so the group divides into whole nodes. */
	while (k > 1 && fmod(size, k) != 0)
		k -= 1;
	return k;
}

void layout_place_key(const gp_layout *y, int gpus_per_node,
		      gp_place_key *k)
{
	memset(k, 0, sizeof *k);
	k->size[GP_DIM_TP] = y->tp;
	k->size[GP_DIM_CP] = y->cp;
	k->size[GP_DIM_DP] = y->dp;
	k->size[GP_DIM_PP] = y->pp;
	k->ep = y->ep;
	k->etp = y->etp;
	k->gpus_per_node = gpus_per_node;
	memcpy(k->order, y->order, sizeof k->order);
}

int layout_place(const gp_layout *y, int gpus_per_node,
		 gp_group out[GP_GRP_COUNT], gp_error *err)
{
	gp_place_key k;

	layout_place_key(y, gpus_per_node, &k);
	return layout_place_of(&k, out, err);
}

int layout_place_of(const gp_place_key *k, gp_group out[GP_GRP_COUNT],
		    gp_error *err)
{
	double size[GP_DIM_COUNT], stride[GP_DIM_COUNT], s = 1, G, pn;
	int i, d, gpus_per_node = k->gpus_per_node;

	if (gpus_per_node < 1)
		return gp_fail(err, "gpus_per_node must be >= 1 (got %d)",
			       gpus_per_node);
	s = layout_rank_strides(k, size, stride);
	/* A job smaller than a node sits in one node. */
	G = s < gpus_per_node ? s : gpus_per_node;
#define PLACE(k, n_, pn_) do { \
		out[k].ranks = (int)(n_); \
		out[k].per_node = (int)(pn_); \
		out[k].sharing = (int)(G / (pn_)); \
		out[k].nodes = 0; \
	} while (0)
	for (d = 0; d < GP_DIM_COUNT; d++) {
		static const gp_grp of[GP_DIM_COUNT] = {
			GP_GRP_TP, GP_GRP_CP, GP_GRP_DP, GP_GRP_PP
		};
		PLACE(of[d], size[d], in_node(size[d], stride[d], G));
	}
	/* Data parallel with CP folded in: both dimensions at once. */
	pn = in_node(size[GP_DIM_CP], stride[GP_DIM_CP], G) *
		in_node(size[GP_DIM_DP], stride[GP_DIM_DP], G);
	PLACE(GP_GRP_DPCP, size[GP_DIM_CP] * size[GP_DIM_DP], pn);
	/* The experts' grid (layout.h): etp where tp sits in the order, ep
	 * then edp where dp does, cp 1; the same ranks, the same nodes. */
	{
		double st[3], e[3];

		layout_expert_grid(k, size, e, st);
		PLACE(GP_GRP_ETP, e[0], in_node(e[0], st[0], G));
		PLACE(GP_GRP_EP, e[1], in_node(e[1], st[1], G));
		PLACE(GP_GRP_EDP, e[2], in_node(e[2], st[2], G));
	}
#undef PLACE
	for (i = 0; i < GP_GRP_COUNT; i++)
		if (out[i].per_node < 1) {
			out[i].per_node = 1;
			out[i].sharing = (int)G;
		}
	return GP_OK;
}
