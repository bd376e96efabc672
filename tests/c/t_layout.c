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

	plan(43);

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
	y.hsdp = 8;
	y.zero = 1;
	ok(layout_check(&m, &y, &z, &e) == GP_EINVAL &&
	   strstr(e.msg, "hsdp 8 (hybrid sharding in a node) shards the "
		  "ZeRO 2/3 states: it needs zero 2 or 3 (got zero 1)"),
	   "hybrid sharding needs zero 2 or 3");

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
		gp_group dpg = {8, 1, 8};

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
	return done();
}
