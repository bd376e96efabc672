/*
 * t_layout.c - the layout check, the stage split, the placement of each
 * dimension's groups on nodes, and collectives over placed groups.
 *
 * Placement: ranks are numbered in the rank order, innermost first
 * (Megatron: tp, cp, dp, pp), so a dimension's stride is the product of
 * the degrees inside it; a node holds G consecutive ranks.
 */
#include "comm.h"
#include "layout.h"
#include "model.h"
#include "tap.h"

#include <string.h>

#define GiB 1073741824.0
#define US 1e-6

static gp_model llama70b(void)
{
	gp_model m;

	memset(&m, 0, sizeof m);
	m.layers = 80;
	m.hidden = 8192;
	m.heads = 64;
	m.kv_heads = 8;
	m.head_dim = 128;
	m.ffn_hidden = 28672;
	m.ffn_gated = 1;
	m.vocab = 128256;
	m.norm_params = 8192;
	return m;
}

static gp_layout lay(int tp, int cp, int dp, int pp)
{
	gp_layout y;

	memset(&y, 0, sizeof y);
	y.tp = tp;
	y.cp = cp;
	y.dp = dp;
	y.pp = pp;
	y.micro_batch = 1;
	return y;
}

static int group_is(const gp_group *g, int ranks, int per_node, int sharing,
		    const char *name)
{
	int good = g->ranks == ranks && g->per_node == per_node &&
		g->sharing == sharing;

	if (!ok(good, name))
		printf("#   got ranks %d per_node %d sharing %d, want %d %d "
		       "%d\n", g->ranks, g->per_node, g->sharing, ranks,
		       per_node, sharing);
	return good;
}

static int fill_is(const gp_fill *f, int ranks, int nodes, int max_share,
		   int min_share, int sharing, const char *name)
{
	int good = f->ranks == ranks && f->nodes == nodes &&
		f->max_share == max_share && f->min_share == min_share &&
		f->sharing == sharing;

	if (!ok(good, name))
		printf("#   got ranks %d nodes %d shares %d..%d sharing %d, "
		       "want %d %d %d..%d %d\n", f->ranks, f->nodes,
		       f->min_share, f->max_share, f->sharing, ranks, nodes,
		       min_share, max_share, sharing);
	return good;
}

static gp_place_key key(int tp, int cp, int dp, int pp, int ep, int G)
{
	gp_place_key k;
	gp_error e;

	memset(&k, 0, sizeof k);
	k.size[GP_DIM_TP] = tp;
	k.size[GP_DIM_CP] = cp;
	k.size[GP_DIM_DP] = dp;
	k.size[GP_DIM_PP] = pp;
	k.ep = ep;
	k.etp = tp;
	k.gpus_per_node = G;
	layout_order_parse("tp-cp-dp-pp", k.order, &e);
	return k;
}

/* What a grid_walk check says of one layout. */
enum { GRID_SAME, GRID_DIFF, GRID_FAIL };

typedef int (*grid_check)(const gp_place_key *k, void *ctx);

/* Every layout of up to `most` GPUs (tp 1..8, cp 1..4, dp 1..24, pp
 * 1..12; ep 1 or all of dp x cp) on nodes of G, in each of the nords
 * rank orders ords, handed to check as a placement key.  Returns the
 * layouts check finds GRID_DIFF (the first few printed), or that count
 * plus 1000 at the first GRID_FAIL (a refused key, an impossible
 * answer).  The one grid of fill_agrees and fill_place_agrees. */
static int grid_walk(int G, int most, const char *const *ords, int nords,
		     grid_check check, void *ctx)
{
	int tp, cp, dp, pp, ep, o, bad = 0;
	gp_place_key k;
	gp_error e;

	for (o = 0; o < nords; o++)
	for (tp = 1; tp <= 8; tp++)
	for (cp = 1; cp <= 4; cp++)
	for (dp = 1; dp <= 24; dp++)
	for (pp = 1; pp <= 12; pp++)
	for (ep = 1; ep <= dp * cp;
	     ep = ep == 1 && dp * cp > 1 ? dp * cp : dp * cp + 1) {
		int r;

		if (tp * cp * dp * pp > most)
			continue;
		k = key(tp, cp, dp, pp, ep, G);
		layout_order_parse(ords[o], k.order, &e);
		r = check(&k, ctx);
		if (r == GRID_FAIL)
			return bad + 1000;
		if (r == GRID_DIFF && bad++ < 5)
			printf("#   G %d %s tp %d cp %d dp %d pp %d ep %d\n",
			       G, ords[o], tp, cp, dp, pp, ep);
	}
	return bad;
}

/* fill_agrees's check of one layout; ctx counts the unequal ones. */
static int fill_agrees_one(const gp_place_key *k, void *ctx)
{
	int *unequal = ctx, i, placed = 1, equal = 1, same = 1;
	int s = k->size[GP_DIM_TP] * k->size[GP_DIM_CP] *
		k->size[GP_DIM_DP] * k->size[GP_DIM_PP];
	int nodes = (s + k->gpus_per_node - 1) / k->gpus_per_node;
	gp_group g[GP_GRP_COUNT];
	gp_fill f[GP_GRP_COUNT];
	gp_error e;

	if (layout_place_of(k, g, &e) || layout_fill_of(k, f, &e))
		return GRID_FAIL;
	for (i = 0; i < GP_GRP_COUNT; i++) {
		if (f[i].nodes > nodes || f[i].ranks != g[i].ranks)
			return GRID_FAIL;
		placed &= g[i].ranks / g[i].per_node <= nodes;
		equal &= f[i].min_share == f[i].max_share;
		same &= f[i].max_share == g[i].per_node &&
			f[i].nodes * f[i].max_share == g[i].ranks &&
			f[i].sharing == g[i].sharing;
	}
	if (!placed)
		return GRID_SAME;
	if (!equal) {
		(*unequal)++;
		return GRID_SAME;
	}
	return same ? GRID_SAME : GRID_DIFF;
}

/* Every layout of grid_walk's grid on nodes of G, in two rank orders:
 * where layout_place_of places every kind within the job's ceil(GPUs /
 * G) nodes and the launcher places every group of every kind in equal
 * shares (min_share == max_share), the two agree: per_node, nodes and
 * sharing alike.  (Per kind it does not hold: TP 1 CP 3 DP 8 on 8-GPU
 * nodes has DP x CP groups of 24 consecutive ranks, 8 a node, which
 * in_node's product 3 x 2 takes as 6 a node; but its CP groups straddle
 * nodes, 6, 7 | 8.)  Returns the number of disagreements (the first
 * few printed), and counts in *unequal the layouts layout_place_of
 * places where some kind's shares are not equal (layout_place_of takes
 * them as equal, as the step still prices them on NVLink domains of
 * hosts; on nodes that are hosts it prices the launcher's shares,
 * layout_fill_place, held to layout_fill_of by fill_place_agrees). */
static int fill_agrees(int G, int most, int *unequal)
{
	static const char *const ords[] = { "tp-cp-dp-pp", "dp-tp-cp-pp" };

	*unequal = 0;
	return grid_walk(G, most, ords, 2, fill_agrees_one, unequal);
}

/* fill_place_agrees's check of one layout. */
static int fill_place_agrees_one(const gp_place_key *k, void *ctx)
{
	int i, same = 1;
	gp_group g[GP_GRP_COUNT];
	gp_fill f[GP_GRP_COUNT];
	gp_error e;

	(void)ctx;
	if (layout_fill_of(k, f, &e) || layout_fill_place(k, g, &e))
		return GRID_FAIL;
	for (i = 0; i < GP_GRP_COUNT; i++)
		same &= g[i].ranks == f[i].ranks &&
			g[i].per_node == f[i].min_share &&
			g[i].nodes == f[i].nodes &&
			g[i].sharing == f[i].sharing;
	return same ? GRID_SAME : GRID_DIFF;
}

/* layout_fill_place, the groups every command prices its collectives
 * on, against the launcher's placement it stands for (layout_fill_of):
 * per kind, per_node the fewest members on a node, nodes, sharing and
 * ranks alike, for every layout of grid_walk's grid on nodes of G in
 * three rank orders.  Its shortcut, equal shares where the strides nest
 * with the node, must give what the walk gives.  Returns the
 * disagreements (the first few printed). */
static int fill_place_agrees(int G, int most)
{
	static const char *const ords[] = {
		"tp-cp-dp-pp", "dp-tp-cp-pp", "tp-dp-pp-cp"
	};

	return grid_walk(G, most, ords, 3, fill_place_agrees_one, NULL);
}

/* A placed group: ranks, nodes, the fewest on a node, sharing. */
static int place_is(const gp_group *g, int ranks, int nodes, int per_node,
		    int sharing, const char *name)
{
	int good = g->ranks == ranks && g->nodes == nodes &&
		g->per_node == per_node && g->sharing == sharing;

	if (!ok(good, name))
		printf("#   got ranks %d nodes %d per_node %d sharing %d, "
		       "want %d %d %d %d\n", g->ranks, g->nodes, g->per_node,
		       g->sharing, ranks, nodes, per_node, sharing);
	return good;
}

/* 8 GPUs per node on NVLink (450 GB/s, 0.8), 8 NICs of 50 GB/s at 0.9. */
static gp_topo dgx(int nodes)
{
	gp_topo t;

	comm_topo_init(&t, GP_LINK_NVLINK);
	t.gpus_per_node = 8;
	t.nodes = nodes;
	t.up.bw = 450e9;
	t.up.latency = 0.6 * US;
	t.up.achievable = 0.8;
	t.up_nvls = 1;
	t.nics = 8;
	t.nic.bw = 50e9;
	t.nic.latency = 2.7 * US;
	t.nic.achievable = 0.9;
	return t;
}

int main(void)
{
	gp_model m = llama70b();
	gp_layout y, z;
	gp_group g[GP_GRP_COUNT];
	gp_topo t;
	gp_comm_result r, r1;
	gp_error e;
	double S = GiB, want;
	int i, mono;

	plan(103);

	/* --- layout_check_ulysses ---------------------------------------
	 * Llama 2 70B: 64 heads, 8 kv.  verl's asserts: ulysses divides the
	 * (TP rank's) heads; the kv heads divide it or it them. */
	ok(layout_check_ulysses(&m, 1, 8, 4096, &e) == GP_OK,
	   "ulysses 8: 64 heads, 8 kv heads");
	ok(layout_check_ulysses(&m, 1, 16, 4096, &e) == GP_OK,
	   "ulysses 16: the 8 kv heads repeated to 16");
	ok(layout_check_ulysses(&m, 1, 3, 4096, &e) == GP_EINVAL &&
	   strstr(e.msg, "ulysses 3 must divide the 64 attention heads"),
	   "ulysses 3 of 64 heads refused");
	/* tp 8: 8 heads and 1 kv head a rank; ulysses 16 > 8 heads */
	ok(layout_check_ulysses(&m, 8, 16, 4096, &e) == GP_EINVAL &&
	   strstr(e.msg, "the 8 attention heads of a TP rank"),
	   "tp 8: ulysses 16 of a rank's 8 heads refused");
	/* 12 kv heads of 96 (a made-up GQA): 8 divides 96, not 12 nor 12 it */
	{
		gp_model q = m;

		q.heads = 96;
		q.kv_heads = 12;
		ok(layout_check_ulysses(&q, 1, 8, 4096, &e) == GP_EINVAL &&
		   strstr(e.msg, "ulysses 8 and the 12 kv heads: one must"),
		   "ulysses 8 and 12 kv heads refused");
	}
	/* The heads rule alone (layout_ulysses_heads_ok, the search's
	 * test, and layout_check_ulysses_heads, its words): 64 heads and
	 * 8 kv take 1, 2, 4, 8 (kv divides by it), 16, 32, 64 (it divides
	 * by the 8 kv: repeated), not 3, 12 (12 of 64 heads) nor 128
	 * (past the heads); kv_heads 0 reads as heads (MHA: 64, so 16
	 * holds). */
	{
		static const int good[] = {1, 2, 4, 8, 16, 32, 64};
		static const int bad[] = {3, 12, 128};
		int all = 1;

		for (i = 0; i < 7; i++)
			all = all && layout_ulysses_heads_ok(64, 8, 1, good[i]) &&
				layout_check_ulysses_heads(64, 8, 1, good[i],
							   &e) == GP_OK;
		for (i = 0; i < 3; i++)
			all = all && !layout_ulysses_heads_ok(64, 8, 1, bad[i]) &&
				layout_check_ulysses_heads(64, 8, 1, bad[i],
							   &e) == GP_EINVAL;
		ok(all, "heads rule: 64 heads, 8 kv take 1..64 by powers "
		   "of two, not 3, 12, 128");
		ok(layout_ulysses_heads_ok(64, 0, 1, 16),
		   "kv_heads 0 reads as the 64 heads");
	}
	ok(layout_check_ulysses_heads(64, 8, 8, 16, &e) == GP_EINVAL &&
	   strcmp(e.msg, "ulysses 16 must divide the 8 attention heads of "
		  "a TP rank (each rank attends heads / ulysses of the "
		  "whole sequence)") == 0,
	   "the heads message whole, a TP rank's");
	/* A TP rank's heads, which the rule and its refusal both read
	 * (layout_ulysses_rank_heads): 64 heads, 8 kv at tp 16 -> 64 / 16
	 * = 4 heads and 8 / 16 = 0 kv, replicated to 1; kv 0 reads as the
	 * heads (64 / 4 = 16 each); tp 0 reads as 1. */
	{
		int th, tkv;

		layout_ulysses_rank_heads(64, 8, 16, &th, &tkv);
		ok(th == 4 && tkv == 1, "tp 16: 4 heads, 1 kv head a rank");
		layout_ulysses_rank_heads(64, 0, 4, &th, &tkv);
		ok(th == 16 && tkv == 16, "kv 0 at tp 4: 16 and 16");
		layout_ulysses_rank_heads(64, 8, 0, &th, &tkv);
		ok(th == 64 && tkv == 8, "tp 0 reads as 1");
	}
	/* kv heads 8 / tp 16 -> 1 a rank: ulysses 4 repeats it (4 % 1),
	 * and the rank's 4 heads take 4 */
	ok(layout_check_ulysses_heads(64, 8, 16, 4, &e) == GP_OK,
	   "tp 16, ulysses 4: one kv head a rank repeated");
	ok(layout_check_ulysses(&m, 1, 8, 4, &e) == GP_EINVAL &&
	   strstr(e.msg, "ulysses 8 is larger than seq 4"),
	   "ulysses past the sequence refused");

	/* --- layout_check ------------------------------------------------ */
	y = lay(8, 1, 8, 1);
	ok(layout_check(&m, &y, &z, &e) == GP_OK, "tp 8 x dp 8 is valid");
	is_num(z.gpus, 64, 0, "gpus = tp*cp*dp*pp = 64");
	is_num(z.shard, 8, 0, "ZeRO shard group = dp*cp = 8");
	is_int(z.vpp, 1, "vpp 0 reads as 1");
	y = lay(3, 1, 1, 1);
	ok(layout_check(&m, &y, &z, &e) == GP_EINVAL &&
	   strstr(e.msg, "tp 3 does not divide the 64 attention heads"),
	   "tp must divide the heads");
	y = lay(16, 1, 1, 1);
	ok(layout_check(&m, &y, &z, &e) == GP_OK,
	   "tp 16 > 8 kv heads: KV heads replicate, allowed");
	y = lay(1, 1, 1, 1);
	y.vpp = 2;
	ok(layout_check(&m, &y, &z, &e) == GP_EINVAL &&
	   strstr(e.msg, "vpp 2 needs pipeline parallelism"),
	   "vpp without pp is an error, not ignored");
	y = lay(1, 1, 1, 81);
	ok(layout_check(&m, &y, &z, &e) == GP_EINVAL &&
	   strstr(e.msg, "pp 81 exceeds the 80 layers"), "pp <= layers");
	y = lay(1, 1, 2, 1);
	y.ep = 2;
	ok(layout_check(&m, &y, &z, &e) == GP_EINVAL &&
	   strstr(e.msg, "dense model"), "ep on a dense model");
	y = lay(1, 1, 1, 1);
	y.zero = 4;
	ok(layout_check(&m, &y, &z, &e) == GP_EINVAL, "zero 4 refused");
	y = lay(4096, 1, 4096, 2);
	ok(layout_check(&m, &y, &z, &e) == GP_EINVAL &&
	   strstr(e.msg, "at most"), "a product past 2^24 GPUs is refused");
	/* Hybrid sharding in 8-GPU nodes: tp 2 x dp 8 (16 GPUs, order tp
	 * innermost): DP's stride is 2, so a node holds 8 / 2 = 4 of the 8
	 * DP ranks -- the shard group; the experts' edp (tp*dp/(etp*ep) =
	 * 16/2 = 8, stride etp = 2) likewise 4. */
	y = lay(2, 1, 8, 1);
	y.zero = 3;
	y.hsdp = 8;
	MUST(layout_check(&m, &y, &z, &e));
	is_num(z.shard, 4, 0,
	       "hsdp 8, tp 2 x dp 8: shard over the node's 4 DP ranks");
	is_num(z.eshard, 4, 0, "hsdp 8: the expert shard group likewise 4");
	y.hsdp = 16;
	MUST(layout_check(&m, &y, &z, &e));
	is_num(z.shard, 8, 0,
	       "hsdp 16 (the job in one node): the whole group");
	/* ZeRO-1 in groups (InternEvo's zero1, gpuplan.memory's
	 * zero_group): the optimizer states shard over the same 4 DP ranks
	 * of each 8-GPU block. */
	y.hsdp = 8;
	y.zero = 1;
	MUST(layout_check(&m, &y, &z, &e));
	is_num(z.shard, 4, 0, "hsdp 8 at zero 1: the optimizer over 4 DP ranks");
	y.zero = 0;
	ok(layout_check(&m, &y, &z, &e) == GP_EINVAL &&
	   strstr(e.msg, "hsdp 8 (sharding in groups of that many GPUs) "
		  "shards the ZeRO states: it needs zero 1, 2 or 3 (got "
		  "zero 0)"),
	   "sharding in groups needs a ZeRO stage");

	/* --- stage split ------------------------------------------------- */
	/* 70 layers on 12 stages, uniform: 70 = 12 * 5 + 10, so the first 10
	 * stages hold 6 and the last two 5. */
	y = lay(1, 1, 1, 12);
	MUST(layout_check(&m, &y, &z, &e));
	layout_split(&z, 70, 0, 0, 1, 0);
	is_int(layout_stage_layers(&z, 70, 0), 6, "uniform: stage 0 6");
	is_int(layout_stage_layers(&z, 70, 11), 5, "uniform: stage 11 5");
	/* Balanced over [1, 70 x 1, 1] (the BLOOM split): sum 72 over 12
	 * stages, bottleneck 6: stage 0 holds the embedding and 5 layers,
	 * the middle ones 6 (10 x 6 = 60), the last 5 and the tied copy. */
	layout_split(&z, 70, 1, 1, 1, 1);
	is_int(layout_stage_layers(&z, 70, 0), 5, "balanced: stage 0 5");
	is_int(layout_stage_layers(&z, 70, 5), 6, "balanced: middle 6");
	is_int(layout_stage_layers(&z, 70, 11), 5, "balanced: last 5");
	/* A list given (gp_stage_list; mem_stage_split sets balanced 2):
	 * "9,9,8,6" over 32 layers on 4 stages -- stage k holds its
	 * entry, the first layer of stage k the entries before it summed
	 * (0, 9, 18, 26).  The parser takes whole numbers >= 1 joined by
	 * commas and refuses the rest, naming the entry. */
	{
		gp_stage_list sl;
		gp_stage_store ss;       /* sl's entries */

		y = lay(1, 1, 1, 4);
		MUST(layout_check(&m, &y, &z, &e));
		ok(layout_stage_list_parse("9,9,8,6", &ss, &sl,
					   &e) == GP_OK &&
		   sl.n == 4 && sl.v[0] == 9 && sl.v[3] == 6,
		   "stage list: 9,9,8,6 read");
		z.stages = sl;
		z.balanced = 2;
		ok(layout_stage_layers(&z, 32, 0) == 9 &&
		   layout_stage_layers(&z, 32, 2) == 8 &&
		   layout_stage_layers(&z, 32, 3) == 6,
		   "stage list: stage k holds entry k");
		ok(layout_stage_first(&z, 32, 1) == 9 &&
		   layout_stage_first(&z, 32, 2) == 18 &&
		   layout_stage_first(&z, 32, 3) == 26,
		   "stage list: stage k starts at the entries before it");
		ok(layout_stage_list_parse("9,0,8", &ss, &sl,
					   &e) == GP_EINVAL &&
		   strstr(e.msg, "entry 2 is 0"),
		   "stage list: an empty stage refused");
		ok(layout_stage_list_parse("9,,8", &ss, &sl,
					   &e) == GP_EINVAL &&
		   strstr(e.msg, "entry 2 of '9,,8' is not a whole number"),
		   "stage list: an empty entry refused");
		ok(layout_stage_list_parse("", &ss, &sl,
					   &e) == GP_OK && sl.n == 0,
		   "stage list: none given");
		/* GP_STAGE_LIST_MAX (128) entries of 1 and one more: the
		 * 129th is refused, naming the bound. */
		{
			char big[2 * (GP_STAGE_LIST_MAX + 1)];
			int j;

			for (j = 0; j <= GP_STAGE_LIST_MAX; j++) {
				big[2 * j] = '1';
				big[2 * j + 1] = ',';
			}
			big[2 * GP_STAGE_LIST_MAX + 1] = '\0';
			ok(layout_stage_list_parse(big, &ss, &sl,
						   &e) == GP_EINVAL &&
			   strstr(e.msg, "more than 128 stages"),
			   "stage list: 129 entries refused");
		}
	}

	/* --- block recompute by model chunk -------------------------------- */
	/* Megatron-Core's block method checkpoints the first n layers of
	 * each TransformerBlock, one a model chunk (layout.h layout_stage_
	 * recomputed).  32 layers, pp 2, vpp 2: 16 a rank, chunks of 8;
	 * n 4 re-runs 4 + 4 = 8 of a rank's 16, not 4; n 8: 8 + 8 = 16 (all);
	 * n 20 is past the stage: all 16.  With one chunk a stage (1F1B)
	 * n 4 is 4.  30 layers, pp 2, vpp 2: 15 a rank in chunks of
	 * ceil(15 / 2) = 8 and 7 (layout.c chunk_before: rank 0's short
	 * chunk first, rank 1's last), so n 8 re-runs 7 + 8 = 15 (all) and
	 * n 7 re-runs 7 + 7 = 14 on each rank; n 0 means every layer. */
	y = lay(1, 1, 1, 2);
	MUST(layout_check(&m, &y, &z, &e));
	z.vpp = 2;
	z.schedule = GP_SCHED_INTERLEAVED;
	layout_split(&z, 32, 0, 0, 1, 0);
	is_int(layout_stage_recomputed(&z, 32, 0, 16, 4), 8,
	       "block recompute 4, vpp 2: 4 of each chunk, 8 a rank");
	is_int(layout_stage_recomputed(&z, 32, 1, 16, 4), 8,
	       "... the last rank's too");
	is_int(layout_stage_recomputed(&z, 32, 0, 16, 8), 16,
	       "block recompute 8, vpp 2: both chunks whole");
	is_int(layout_stage_recomputed(&z, 32, 0, 16, 20), 16,
	       "block recompute past the stage: all of it");
	is_int(layout_stage_recomputed(&z, 32, 0, 16, 0), 16,
	       "block recompute 0: every layer");
	layout_split(&z, 30, 0, 0, 1, 0);
	is_int(layout_stage_recomputed(&z, 30, 0, 15, 8), 15,
	       "30 layers, vpp 2, n 8: chunks of 7 and 8 whole");
	is_int(layout_stage_recomputed(&z, 30, 0, 15, 7), 14,
	       "30 layers, vpp 2, n 7: 7 + 7 on rank 0");
	is_int(layout_stage_recomputed(&z, 30, 1, 15, 7), 14,
	       "... and on rank 1 (its short chunk last)");
	z.vpp = 1;
	z.schedule = GP_SCHED_1F1B;
	layout_split(&z, 32, 0, 0, 1, 0);
	is_int(layout_stage_recomputed(&z, 32, 0, 16, 4), 4,
	       "block recompute 4, one chunk a stage: 4");

	/* --- rank order ---------------------------------------------------- */
	ok(layout_order_parse("tp-cp-ep-dp-pp", y.order, &e) == GP_OK &&
	   y.order[0] == GP_DIM_TP && y.order[2] == GP_DIM_DP,
	   "Megatron's order parses");
	ok(layout_order_parse("tp-dp", y.order, &e) == GP_EINVAL,
	   "an order must name tp, cp, dp and pp");
	ok(layout_order_parse("tp-cp-xx-dp-pp", y.order, &e) == GP_EINVAL &&
	   strstr(e.msg, "'xx'"), "an unknown dimension is named");

	/* --- placement ------------------------------------------------------ */
	/* TP 8 on 8-GPU nodes: a TP group fills a node; the DP group (stride
	 * 8) has one rank per node, and the 8 DP groups of a node share its
	 * NICs. */
	y = lay(8, 1, 8, 1);
	MUST(layout_check(&m, &y, &z, &e));
	ok(layout_place(&z, 8, g, &e) == GP_OK, "place tp 8 x dp 8");
	group_is(&g[GP_GRP_TP], 8, 8, 1, "tp 8: 8 per node, alone");
	group_is(&g[GP_GRP_DP], 8, 1, 8, "dp 8: 1 per node, 8 share NICs");
	/* TP 2 x DP 32 (Narayanan's 3.6B): DP stride 2 -> 8/2 = 4 DP ranks
	 * per node over 8 nodes, 2 DP groups per node. */
	y = lay(2, 1, 32, 1);
	MUST(layout_check(&m, &y, &z, &e));
	MUST(layout_place(&z, 8, g, &e));
	group_is(&g[GP_GRP_DP], 32, 4, 2, "tp 2: 4 DP ranks per node");
	/* TP 4 x CP 2 x DP 2 x PP 4 (64 GPUs): strides 1, 4, 8, 16.  CP:
	 * 8/4 = 2 per node; DP stride 8: 1 per node; DP with CP folded in:
	 * 2 x 1 per node; PP stride 16: 1 per node, 8 sharing. */
	y = lay(4, 2, 2, 4);
	MUST(layout_check(&m, &y, &z, &e));
	MUST(layout_place(&z, 8, g, &e));
	group_is(&g[GP_GRP_CP], 2, 2, 4, "cp 2 inside a node");
	group_is(&g[GP_GRP_DP], 2, 1, 8, "dp 2 across nodes");
	group_is(&g[GP_GRP_DPCP], 4, 2, 4, "dp x cp: 2 per node");
	group_is(&g[GP_GRP_PP], 4, 1, 8, "pp 4: a stage per node");
	/* The same layout with DP innermost (order dp-tp-cp-pp): DP stride 1
	 * puts both DP ranks in one node. */
	ok(layout_order_parse("dp-tp-cp-pp", y.order, &e) == GP_OK,
	   "order dp-tp-cp-pp");
	MUST(layout_check(&m, &y, &z, &e));
	MUST(layout_place(&z, 8, g, &e));
	group_is(&g[GP_GRP_DP], 2, 2, 4, "dp innermost: inside a node");
	group_is(&g[GP_GRP_TP], 4, 4, 2, "tp stride 2: 4 per node");
	/* A job smaller than a node: 4 GPUs of an 8-GPU node. */
	y = lay(1, 1, 4, 1);
	MUST(layout_check(&m, &y, &z, &e));
	MUST(layout_place(&z, 8, g, &e));
	group_is(&g[GP_GRP_DP], 4, 4, 1, "4 GPUs: one node");

	/* --- collectives over placed groups ------------------------------ */
	/* A DP group of 8 ranks, one per node, 8 groups sharing each node's
	 * 8 NICs: the group gets one NIC, 50 GB/s x 0.9 = 45 GB/s.  Ring
	 * all-reduce (Simple) over 8 nodes: (base 8.4 us + 14 network steps
	 * x 14 us, the one-rank-per-node value) x 1.4 (NCCL's multi-node
	 * Simple ring factor, engine/comm.c) + 2 x 7/8 x S / 45 GB/s =
	 * 0.28616 ms + 41.757 ms for S = 1 GiB. */
	t = dgx(8);
	{
		gp_group dpg = {8, 1, 8, 0};

		ok(comm_group_cost(&t, GP_ALL_REDUCE, S, &dpg, &r, &e) ==
		   GP_OK, "all-reduce over the DP group");
		want = (8.4 + 14 * 14.0) * 1.4 * US + 1.75 * S / 45e9;
		is_num(r.time, want, 1e-9, "DP group: one NIC's ring");
		ok(r.algo == GP_ALGO_RING, "ring across 8 single-GPU nodes");
		/* Never faster than the group's share of the NICs, at any
		 * size: busbw <= 45 GB/s. */
		mono = 1;
		for (i = 10; i <= 34; i++) {
			MUST(comm_group_cost(&t, GP_ALL_REDUCE,
					     (double)(1LL << i),
					     &dpg, &r1, &e));
			if (r1.busbw > 45e9 * (1 + 1e-12))
				mono = 0;
		}
		ok(mono, "busbw never exceeds the group's NIC share");
		/* The old reading (8 ranks filling one node) is NVLS inside
		 * the node: far faster than the placed group. */
		MUST(comm_cost(&t, GP_ALL_REDUCE, S, 8, &r1, &e));
		ok(r1.time < r.time / 5, "one node's NVLS is > 5x faster");
		/* Alone on its nodes (sharing 1) the group's one GPU drives
		 * its own NIC (the other 7 GPUs' NICs stay idle), and its
		 * PCIe path caps that: nic_path_bw 30 GB/s -> bn = min(1 x
		 * 45, 1 x 30) = 30 GB/s. */
		dpg.sharing = 1;
		t.nic_path_bw = 30e9;
		MUST(comm_group_cost(&t, GP_ALL_REDUCE, S, &dpg, &r1, &e));
		want = (8.4 + 14 * 14.0) * 1.4 * US + 1.75 * S / 30e9;
		is_num(r1.time, want, 1e-9, "PCIe path caps a lone GPU");
		t.nic_path_bw = 0;
		dpg.sharing = 9;
		ok(comm_group_cost(&t, GP_ALL_REDUCE, S, &dpg, &r1, &e) ==
		   GP_EINVAL, "9 groups of 1 cannot share an 8-GPU node");
		dpg.sharing = 8;
		dpg.ranks = 16;
		ok(comm_group_cost(&t, GP_ALL_REDUCE, S, &dpg, &r1, &e) ==
		   GP_EINVAL && strstr(e.msg, "exceed"),
		   "16 nodes exceed an 8-node topology");
	}
	/* --- the launcher's placement (layout_fill_of) -------------------- */
	{
		gp_fill f[GP_GRP_COUNT];
		gp_place_key k;
		int unequal;

		/* 20 H100s on 8-GPU nodes (8 + 8 + 4), TP 4 x DP 5: rank r
		 * on node r / 8.  A TP group is 4 consecutive ranks, inside
		 * a node; 2 of them on each full node.  The DP group of TP
		 * rank 0 is ranks 0, 4, 8, 12, 16 on nodes 0, 0, 1, 1, 2:
		 * shares 2, 2, 1 over 3 nodes, and the 4 DP groups each
		 * have 2 ranks on node 0.  Equal shares place DP at 1 a
		 * node over 5 nodes, past the job's 3. */
		k = key(4, 1, 5, 1, 1, 8);
		MUST(layout_fill_of(&k, f, &e));
		fill_is(&f[GP_GRP_TP], 4, 1, 4, 4, 2, "20 GPUs: tp 4 in a node");
		fill_is(&f[GP_GRP_DP], 5, 3, 2, 1, 4,
			"20 GPUs: dp 5 placed 2 + 2 + 1 over 3 nodes");
		MUST(layout_place_of(&k, g, &e));
		ok(g[GP_GRP_DP].ranks / g[GP_GRP_DP].per_node == 5,
		   "equal shares need 5 nodes for it");
		/* The sweep's example (sweep.c places): TP 1 PP 5 DP 4 on
		 * 20 GPUs.  DP is ranks 4j..4j+3, in a node; PP stride 4:
		 * 0, 4, 8, 12, 16 again, 2 + 2 + 1. */
		k = key(1, 1, 4, 5, 1, 8);
		MUST(layout_fill_of(&k, f, &e));
		fill_is(&f[GP_GRP_DP], 4, 1, 4, 4, 2, "20 GPUs: dp 4 in a node");
		fill_is(&f[GP_GRP_PP], 5, 3, 2, 1, 4,
			"20 GPUs: pp 5 placed 2 + 2 + 1");
		/* 144 GB200s in two NVL72 domains, TP 4 x DP 4 x PP 9: PP
		 * stride 16.  Stage ranks of TP 0 DP 0: 0, 16, 32, 48, 64
		 * on domain 0 and 80, 96, 112, 128 on domain 1 (5 + 4);
		 * of TP 3 DP 3: 15 .. 63 then 79 .. 143 (4 + 5).  All 16
		 * PP groups reach domain 0.  A DP group (stride 4) of
		 * stage 4 is 64, 68 | 72, 76: 2 + 2 across the domains,
		 * where equal shares (72 / 4 = 18 >= 4) keep it whole.
		 * Domain 0 holds stages 0-3 whole (16 DP groups) and a
		 * share of each of stage 4's 4: 20 DP groups. */
		k = key(4, 1, 4, 9, 1, 72);
		MUST(layout_fill_of(&k, f, &e));
		fill_is(&f[GP_GRP_PP], 9, 2, 5, 4, 16,
			"144 GB200s: pp 9 placed 5 + 4");
		fill_is(&f[GP_GRP_DP], 4, 2, 4, 2, 20,
			"144 GB200s: a dp group straddles the domains");
		fill_is(&f[GP_GRP_TP], 4, 1, 4, 4, 18,
			"144 GB200s: tp 4 in a domain");
		/* Wherever the launcher's shares are equal, the equal-shares
		 * model already says the same (so pricing by the launcher's
		 * placement moves none of those answers). */
		ok(fill_agrees(8, 192, &unequal) == 0,
		   "8-GPU nodes: equal shares agree");
		ok(fill_agrees(4, 96, &unequal) == 0,
		   "4-GPU nodes: equal shares agree");
		ok(fill_agrees(72, 288, &unequal) == 0,
		   "NVL72: equal shares agree");
		/* ... and where they are not equal, layout_place_of still
		 * places some (priced as if equal): 128 GB200s, TP 1 DP 8
		 * PP 16, PP stride 8: 9 + 7 stages a domain, priced 8. */
		ok(unequal > 0, "NVL72: some unequal kinds are placed");
		k = key(1, 1, 8, 16, 1, 72);
		MUST(layout_fill_of(&k, f, &e));
		fill_is(&f[GP_GRP_PP], 16, 2, 9, 7, 8,
			"128 GB200s: pp 16 placed 9 + 7");
		MUST(layout_place_of(&k, g, &e));
		group_is(&g[GP_GRP_PP], 16, 8, 9, "equal shares say 8 + 8");
		k.gpus_per_node = 0;
		ok(layout_fill_of(&k, f, &e) == GP_EINVAL,
		   "gpus_per_node 0 refused");
	}
	/* --- the groups the collectives are priced on (layout_fill_place) */
	{
		gp_group h[GP_GRP_COUNT];
		gp_place_key k;
		gp_topo t6;

		/* TP 8 on nodes of 6 GPUs, 48 GPUs (TP 8 x DP 6): rank r on
		 * node r / 6, TP group j ranks 8j .. 8j+7.  Group 0: 0-5 on
		 * node 0, 6-7 on node 1 (6 + 2); group 1: 8-11 on node 1,
		 * 12-15 on node 2 (4 + 4); group 2: 16-17 on node 2, 18-23
		 * on node 3 (2 + 6); every 24 ranks the same.  Each group
		 * spans 2 nodes, 2 members on its poorer one, and nodes 1
		 * and 2 hold parts of 2 groups.  Equal shares said 4 + 4 (the
		 * largest divisor of 8 a node of 6 holds), 1 group a node. */
		k = key(8, 1, 6, 1, 1, 6);
		MUST(layout_fill_place(&k, h, &e));
		place_is(&h[GP_GRP_TP], 8, 2, 2, 2,
			 "TP 8 on nodes of 6: 2 nodes, 2 on the poorer one");
		MUST(layout_place_of(&k, g, &e));
		group_is(&g[GP_GRP_TP], 8, 4, 1, "equal shares said 4 + 4");
		/* Priced on 6-GPU nodes with 6 NICs of 50 GB/s x 0.9: on
		 * node 1 the group drives min(6 NICs / 2 groups, 2 GPUs x 1
		 * NIC) = 2 NICs, 90 GB/s, under NVLink's 450 x 0.8 = 360.
		 * Ring all-reduce of 1 GiB, Simple: bw_time = S x 2 x 7/8 /
		 * 90e9 (equal shares priced min(6 / 1, 4) = 4 NICs, 180e9).
		 * 1e-9: the same arithmetic, rounding only. */
		t6 = dgx(8);
		t6.gpus_per_node = 6;
		t6.nics = 6;
		MUST(comm_group_cost_algo(&t6, GP_ALL_REDUCE, GP_ALGO_RING, S,
					  &h[GP_GRP_TP], &r, &e));
		ok(r.nodes == 2 && r.ppn == 2 && r.proto == GP_PROTO_SIMPLE,
		   "TP 8 on nodes of 6: the ring crosses 2 nodes, Simple");
		is_num(r.bw_time, S * 2 * 7 / 8 / 90e9, 1e-9,
		       "TP 8 on nodes of 6: the ring at the 2-GPU share's NICs");
		/* DP across 3 nodes of 8 with 20 GPUs (TP 4 x DP 5, the
		 * launcher's 2 + 2 + 1 above; 4 DP groups a node): priced on
		 * the node of 1, min(8 NICs / 4 groups, 1 GPU x 1 NIC) = 1
		 * NIC, 45 GB/s, no NVLink hop priced (1 a node): ring
		 * all-reduce bw_time = S x 2 x 4/5 / 45e9.  Equal shares
		 * placed it on 5 nodes of the job's 3 (refused). */
		k = key(4, 1, 5, 1, 1, 8);
		MUST(layout_fill_place(&k, h, &e));
		place_is(&h[GP_GRP_DP], 5, 3, 1, 4,
			 "20 GPUs: DP 5 on 3 nodes, 1 on the poorest");
		t = dgx(3);
		MUST(comm_group_cost_algo(&t, GP_ALL_REDUCE, GP_ALGO_RING, S,
					  &h[GP_GRP_DP], &r, &e));
		ok(r.nodes == 3 && r.proto == GP_PROTO_SIMPLE,
		   "20 GPUs: the DP ring crosses 3 nodes, Simple");
		is_num(r.bw_time, S * 2 * 4 / 5 / 45e9, 1e-9,
		       "20 GPUs: the DP ring at one NIC");
		/* Its TP groups of 4 fit a node: on NVLink (1 node; node 2
		 * holds ranks 16-19, one group, nodes 0 and 1 two). */
		place_is(&h[GP_GRP_TP], 4, 1, 4, 2,
			 "20 GPUs: TP 4 inside a node");
		MUST(comm_group_cost(&t, GP_ALL_REDUCE, S, &h[GP_GRP_TP], &r,
				     &e));
		ok(r.nodes == 1, "20 GPUs: TP 4 stays on NVLink");
		/* An NVLink domain of several hosts (GB200 NVL72): the
		 * scheduler decides how many of the job's hosts a domain
		 * holds, so the groups stay in equal shares.  144 GB200s,
		 * TP 4 x DP 4 x PP 9 (above: the launcher's PP 5 + 4). */
		k = key(4, 1, 4, 9, 1, 72);
		k.domain = 1;
		MUST(layout_fill_place(&k, h, &e));
		MUST(layout_place_of(&k, g, &e));
		for (i = 0, mono = 1; i < GP_GRP_COUNT; i++)
			mono &= h[i].ranks == g[i].ranks &&
				h[i].per_node == g[i].per_node &&
				h[i].sharing == g[i].sharing &&
				h[i].nodes == g[i].ranks / g[i].per_node;
		ok(mono, "an NVL72 domain of hosts: equal shares");
		/* comm_cost (gpuplan comm, serving's and infer's collectives
		 * on n consecutive ranks) places as the launcher does: for
		 * a job of one TP group of n, its nodes and poorest share are
		 * layout_fill_place's, and so is its price. */
		for (i = 1, mono = 1; i <= 40; i++) {
			int G;

			for (G = 4; G <= 8; G += 2) {
				gp_comm_result a, b;

				t6 = dgx(10);
				t6.gpus_per_node = G;
				t6.nics = G;
				k = key(i, 1, 1, 1, 1, G);
				if (layout_fill_place(&k, h, &e) ||
				    comm_cost(&t6, GP_ALL_REDUCE, S, i, &a, &e) ||
				    comm_group_cost(&t6, GP_ALL_REDUCE, S,
						    &h[GP_GRP_TP], &b, &e) ||
				    a.nodes != h[GP_GRP_TP].nodes ||
				    a.ppn != h[GP_GRP_TP].per_node ||
				    a.time != b.time)
					mono = 0;
			}
		}
		ok(mono, "comm_cost of n ranks: the launcher's placement");
		ok(fill_place_agrees(8, 192) == 0,
		   "8-GPU nodes: the priced groups are the launcher's");
		ok(fill_place_agrees(6, 144) == 0,
		   "6-GPU nodes: the priced groups are the launcher's");
		ok(fill_place_agrees(4, 96) == 0,
		   "4-GPU nodes: the priced groups are the launcher's");
		ok(fill_place_agrees(72, 288) == 0,
		   "72-GPU nodes: the priced groups are the launcher's");
	}
	return done();
}
