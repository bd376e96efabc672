/*
 * t_comm.c - collective costs against hand derivations.
 *
 * The topologies here are built in the test (not read from the catalog),
 * with round achievable fractions so every expected number can be worked
 * out on paper.  Constants of the engine used below (comm.c, all NCCL
 * 2.30.7 tuning.cc): ring base latency LL 6.6 / LL128 14 / Simple 8.4 us
 * (tree 6.8 / 14 / 8.4); per-step ring hwLat NVLink 0.6 / 1.9 / 3.4, NET
 * 2.7 / 4.0 / 14 us; tree hwLat NVLink 0.6 / 1.25 / 4.0, NET 5.0 / 8.5 /
 * 14 us (also a ring's network step with one rank per node); a multi-node
 * ring's intra steps cost at least the 1 us network post (3 us Simple);
 * multi-node Simple ring all-reduce latency x 1.4; NVLS efficiency 0.85,
 * NVLS latency 25 us, NVLS_TREE network step the tree's Simple one (14
 * us; NCCL's tuner ranks it at 20.9 us); tree correction
 * factors per size; LL across nodes <= 39 GB/s busbw (2 nodes); send/recv
 * efficiency 0.5; host-staged PCIe runs at 43 / 2 / 38.5 = 0.558 of the
 * link (two RTX 5090s without P2P, nccl-tests#287) and its flows
 * share the host's DRAM, each byte written and read once.
 */
#include "comm.h"
#include "tap.h"

/* Host-staged PCIe: a direction of a ring gets the both-ways rate over two,
 * 43.0 / 2 of 38.5 GB/s one way (nccl-tests#287). */
#define STAGED (43.0 / 2.0 / 38.5)

#include <math.h>
#include <string.h>

#define GiB 1073741824.0
#define MiB 1048576.0
#define US 1e-6

/* One node of `g` GPUs on NVLink: bw per direction, 0.6 us per hop. */
static gp_topo nvl(int g, int nodes, double bw, double ach)
{
	gp_topo t;

	comm_topo_init(&t, GP_LINK_NVLINK);
	t.gpus_per_node = g;
	t.nodes = nodes;
	t.up.bw = bw;
	t.up.latency = 0.6 * US;
	t.up.achievable = ach;
	return t;
}

static void add_nics(gp_topo *t, int nics, double bw, double ach)
{
	t->nics = nics;
	t->nic.bw = bw;
	t->nic.latency = 2.7 * US;
	t->nic.achievable = ach;
}

/* `nodes` DGX H100-like nodes for NVLS_TREE: 8 GPUs at 450 GB/s x 0.82
 * with NVLS, 8 NICs of 50 GB/s x 0.94, the heads' busbw ceiling 57.7
 * GB/s on 2 nodes and 45.5 on 3 or more (the fabric entry's
 * nvls_tree_bw). */
static gp_topo nvls_tree_nodes(int nodes)
{
	gp_topo t = nvl(8, nodes, 450e9, 0.82);

	t.up_nvls = 1;
	add_nics(&t, 8, 50e9, 0.94);
	t.nvls_tree_bw[0] = 57.7e9;
	t.nvls_tree_bw[1] = 45.5e9;
	return t;
}

static int einval(int rc, const gp_error *e, const char *name)
{
	return ok(rc == GP_EINVAL && e->msg[0] != '\0', name);
}

int main(void)
{
	gp_topo a100 = nvl(8, 1, 300e9, 0.8), a800 = nvl(8, 1, 200e9, 0.8);
	gp_topo h100 = nvl(8, 1, 450e9, 0.8), t, t5;
	gp_comm_result r, r2;
	gp_error e;
	double S, want, intra;
	int i, rc, mono;

	plan(178);

	/* --- bus factors (nccl-tests doc/PERFORMANCE.md) --- */
	is_num(comm_bus_factor(GP_ALL_REDUCE, 8), 1.75, 1e-12,
	       "all_reduce bus factor 2(n-1)/n = 14/8");
	is_num(comm_bus_factor(GP_ALL_GATHER, 8), 0.875, 1e-12,
	       "all_gather bus factor (n-1)/n = 7/8");
	is_num(comm_bus_factor(GP_ALL_TO_ALL, 16), 15.0 / 16, 1e-12,
	       "all_to_all bus factor 15/16");
	is_num(comm_bus_factor(GP_BROADCAST, 8), 1.0, 1e-12,
	       "broadcast bus factor 1");
	is_num(comm_bus_factor(GP_ALL_REDUCE, 1), 0.0, 1e-12,
	       "all_reduce on 1 rank: factor 0");

	/* --- 8x A100 NVLink3, ring all-reduce of 1 GiB ---
	 * Simple: latency 8.4 + 2(8-1) x (0.6 + 2.8) = 56.0 us;
	 * bandwidth term S x 2(n-1)/n / (300e9 x 0.8)
	 *   = 1073741824 x 1.75 / 240e9 = 7829.8 us.
	 * busbw = S x 1.75 / (56.0 + 7829.8 us) = 238.30 GB/s, i.e.
	 * 300 GB/s per direction x 0.8 achievable, less 0.7% of latency. */
	S = GiB;
	rc = comm_cost_algo(&a100, GP_ALL_REDUCE, GP_ALGO_RING, S, 8, &r, &e);
	ok(rc == GP_OK, "a100 ring all_reduce prices");
	is_num(r.latency, 56.0 * US, 1e-9, "a100 ring simple latency 56 us");
	is_num(r.bw_time, S * 1.75 / 240e9, 1e-9,
	       "a100 ring bandwidth term S*1.75/240e9");
	is_num(r.busbw, S * 1.75 / (56.0 * US + S * 1.75 / 240e9), 1e-9,
	       "a100 ring busbw = S*1.75/time");
	/* within 1% of 300 x 0.8: latency is 0.7% of the time */
	is_num(r.busbw, 240e9, 0.01, "a100 busbw ~ 300 GB/s x 0.8");
	ok(r.proto == GP_PROTO_SIMPLE, "1 GiB uses the simple protocol");
	is_num(r.algbw, S / r.time, 1e-12, "algbw = bytes / time");

	/* auto choice on A100 (no NVLS) is the ring too */
	rc = comm_cost(&a100, GP_ALL_REDUCE, S, 8, &r2, &e);
	ok(rc == GP_OK && r2.algo == GP_ALGO_RING,
	   "a100 auto all_reduce picks ring");

	/* --- A800 / H800: 400 GB/s bidirectional = 200 per direction ---
	 * busbw ~ 200 x 0.8 = 160 GB/s (latency 56 us of 11.7 ms: 0.5%). */
	MUST(comm_cost(&a800, GP_ALL_REDUCE, S, 8, &r, &e));
	is_num(r.busbw, 160e9, 0.01, "a800 busbw ~ 200 GB/s x 0.8");
	ok(r.busbw < 0.67 * 240e9 + 1e9, "a800 busbw is 2/3 of a100's");

	/* --- small message on one node: latency, not zero ---
	 * 8 bytes: LL ring, 6.6 + 14 x 0.6 = 15.0 us; the 8-byte bandwidth
	 * term is 8 x 1.75 / (240e9 x 0.28) = 2e-4 us.  NCCL measures 10-30
	 * us for small all-reduces on 8 GPUs (collectives.md: 8xH20 4 B at
	 * 12.5 us). */
	MUST(comm_cost(&a100, GP_ALL_REDUCE, 8, 8, &r, &e));
	is_num(r.time, 15.0 * US, 1e-3, "8-byte all_reduce = 15.0 us (LL)");
	ok(r.proto == GP_PROTO_LL, "8 bytes use LL");
	ok(r.time > 10 * US && r.time < 30 * US, "8-byte all_reduce 10-30 us");

	/* --- the ring's LL as each NCCL release ranks it ---
	 * 2 MiB on the 8 x A100 above (240 GB/s, NVLink steps 0.6 / 1.9 /
	 * 3.4 us).  NCCL's estimates, latency + bytes / algbw, algbw = busBw x
	 * 8 / 14:  LL128  14 + 14 x 1.9 = 40.6 us, busBw 0.92 x 240 = 220.8:
	 * 16.6 us, 57.2 us in all;  Simple  8.4 + 14 x 3.4 = 56 us + 2 MiB /
	 * 137.1 GB/s = 15.3: 71.3 us;  LL  6.6 + 14 x 0.6 = 15 us, busBw half
	 * the link's from 2.21.5 (120: 30.6 us, 45.6 us, ahead of LL128) and
	 * a quarter for all-reduce before it (60: 61.2 us, 76.2 us, behind
	 * both) -- tuning.cc "busBw * .5" against "busBw * ((nNodes > 1 ||
	 * coll == ncclFuncAllReduce || coll == ncclFuncReduce) ? 1.0/4.0 :
	 * 1.0/3.0)".  The trees cost more (LL128: 31.5 + 40.7 = 72.2 us). */
	MUST(comm_cost(&a100, GP_ALL_REDUCE, 2.0 * MiB, 8, &r, &e));
	ok(r.algo == GP_ALGO_RING && r.proto == GP_PROTO_LL,
	   "2 MiB, latest NCCL: LL at half the link ranks first");
	a100.nccl_version = 21805;
	MUST(comm_cost(&a100, GP_ALL_REDUCE, 2.0 * MiB, 8, &r, &e));
	ok(r.algo == GP_ALGO_RING && r.proto == GP_PROTO_LL128,
	   "2 MiB, NCCL 2.18.5: LL at a quarter of the link, LL128 first");
	/* The release moves the ranking, not the price of what runs: LL's
	 * time at 8 bytes is the same 15.0 us latency.  Tolerance 1e-4
	 * relative: the 8 bytes' own bandwidth term adds about 0.2 ns
	 * (1.4e-5 of 15 us); a quarter-link LL rate in the price would add
	 * it twice over, still inside, so the ranking checks above are what
	 * tell the two figures apart. */
	MUST(comm_cost(&a100, GP_ALL_REDUCE, 8, 8, &r, &e));
	is_num(r.time, 15.0 * US, 1e-4, "NCCL 2.18.5, 8 bytes: LL, 15.0 us");

	/* --- a link whose LL128 carries less than 120/128 ---
	 * 16 MiB on the same 8 x A100, NCCL 2.18.5: its estimates run LL128
	 * (40.6 us + 16 MiB / 126.17 GB/s = 173.6 us against Simple's 56 +
	 * 122.3 = 178.3), and they do not see the link's LL128 share, so a
	 * share of 0.6 keeps LL128 and prices it at 240 x 0.6 = 144 GB/s of
	 * busbw: 40.6 us + 16 MiB x 1.75 / 144e9 = 40.6 + 203.89 = 244.49
	 * us, where 120/128 gives 40.6 + 130.49 = 171.09 us.  Tolerance
	 * 1e-6 relative: the figures are exact arithmetic on the inputs. */
	S = 16.0 * MiB;
	MUST(comm_cost(&a100, GP_ALL_REDUCE, S, 8, &r, &e));
	is_num(r.time, 40.6 * US + 1.75 * S / (240e9 * 120.0 / 128.0), 1e-6,
	       "16 MiB, NCCL 2.18.5: LL128 at 120/128 of the link, 171.09 us");
	a100.up_nccl.ll128_eff = 0.6;
	MUST(comm_cost(&a100, GP_ALL_REDUCE, S, 8, &r, &e));
	ok(r.algo == GP_ALGO_RING && r.proto == GP_PROTO_LL128,
	   "16 MiB: the tuner still runs LL128 at a 0.6 share");
	is_num(r.time, 40.6 * US + 1.75 * S / 144e9, 1e-6,
	       "16 MiB: LL128 at 0.6 of the link, 244.49 us");
	a100.up_nccl.ll128_eff = 1.5;
	rc = comm_cost(&a100, GP_ALL_REDUCE, S, 8, &r, &e);
	einval(rc, &e, "ll128_efficiency above 1 is EINVAL");
	a100.up_nccl.ll128_eff = 120.0 / 128.0;
	a100.nccl_version = 0;

	/* --- NVLS on H100-class NVSwitch, 8 GiB ---
	 * per direction S(1 + 1/8) at 450e9 x 0.8 x 0.85 = 306e9 B/s:
	 * bw term = 8 GiB x 1.125 / 306e9; latency 25 us.  The pipeline's
	 * fill: 16 blocks x 8 heads x 128 KiB chunks = 16 MiB a loop, 512
	 * loops: x (1 + 2/512).
	 * busbw = 1.75 x S / time ~ 1.75 x 306/1.125 = 474 GB/s. */
	h100.up_nvls = 1;
	S = 8 * GiB;
	MUST(comm_cost(&h100, GP_ALL_REDUCE, S, 8, &r, &e));
	ok(r.algo == GP_ALGO_NVLS, "h100 8 GiB all_reduce picks nvls");
	want = 1.75 * S / (25 * US + S * 1.125 / 306e9 * (1 + 2.0 / 512));
	is_num(r.busbw, want, 1e-9, "nvls busbw = 1.75 S/(25us + 1.125 S/bw)");
	ok(r.busbw > 450e9 * 0.8, "nvls busbw beats the ring's link bound");

	/* 16 MiB: NCCL halves the chunk to 64 KiB (16 MiB < 64 x 128 x
	 * 128 KiB) and to 32 KiB (< 8 x 128 x 64 KiB), not to 16 KiB (not
	 * below 2 x 128 x 32 KiB = 8 MiB): 16 x 8 x 32 KiB = 4 MiB a loop,
	 * 4 loops a block, so the transfer takes (4 + 2) / 4 = 1.5x its
	 * streaming time: 25 + 61.7 x 1.5 = 117.5 us.  Each of the 4 loops
	 * is a Simple step (NCCL's CollNet Direct step over NVLink, 3.7 us);
	 * the rate carries one a 128 KiB loop, max(1, 16 MiB / (128 x 128
	 * KiB)) = 1 loop, so 4 - 1 = 3 steps are added: 117.5 + 11.1 =
	 * 128.6 us.  Exact arithmetic on the inputs: tolerance 1e-9
	 * relative (rounding only), here and for 256 MiB and 2 MiB below. */
	S = 16.0 * 1048576.0;
	MUST(comm_cost(&h100, GP_ALL_REDUCE, S, 8, &r, &e));
	ok(r.algo == GP_ALGO_NVLS, "h100 16 MiB all_reduce picks nvls");
	want = 25 * US + S * 1.125 / 306e9 * 1.5 + 3 * 3.7 * US;
	is_num(r.time, want, 1e-9,
	       "nvls 16 MiB: 3 stages over 4 loops, 1.5x, 3 extra steps");

	/* 256 MiB: 64 KiB chunks (< 64 x 128 x 128 KiB = 1 GiB, not < 8 x
	 * 128 x 64 KiB = 64 MiB): 32 loops a block, x (1 + 2/32); against
	 * 16 loops of 128 KiB, 16 extra steps: + 59.2 us.  25 + 986.9 x
	 * 1.0625 + 59.2 = 1132.8 us. */
	S = 256.0 * 1048576.0;
	MUST(comm_cost(&h100, GP_ALL_REDUCE, S, 8, &r, &e));
	want = 25 * US + S * 1.125 / 306e9 * (1 + 2.0 / 32) + 16 * 3.7 * US;
	is_num(r.time, want, 1e-9, "nvls 256 MiB: 32 loops of 64 KiB, 16 "
	       "extra steps");

	/* 2 MiB: 16 KiB chunks (< 8 MiB), 2 MiB / (128 x 16 KiB) = 1 loop,
	 * as many as 128 KiB chunks would run (at least one): no step added,
	 * 25 + 7.7 x 3 = 48.1 us. */
	S = 2.0 * 1048576.0;
	MUST(comm_cost(&h100, GP_ALL_REDUCE, S, 8, &r, &e));
	if (r.algo == GP_ALGO_NVLS) {
		want = 25 * US + S * 1.125 / 306e9 * 3.0;
		is_num(r.time, want, 1e-9, "nvls 2 MiB: one loop, no step "
		       "added");
	} else {
		ok(0, "h100 2 MiB all_reduce picks nvls");
	}

	/* NVLS on a switch without it is refused with a reason */
	rc = comm_cost_algo(&a100, GP_ALL_REDUCE, GP_ALGO_NVLS, S, 8, &r, &e);
	einval(rc, &e, "nvls refused on a100 topology");

	/* --- 2 nodes, 8 x NDR-400 (50 GB/s per NIC, one NIC per GPU) ---
	 * Hierarchical all-reduce, 1 GiB on 16 GPUs, NIC achievable 0.9:
	 * intra RS + AG: 2 x 7/8 x S / 240e9;
	 * inter: each GPU all-reduces its S/8 shard over its own NIC:
	 *   2(2-1)/2 x (S/8) / (50e9 x 0.9).
	 * latency: three calls (RS, AR, AG) 3 x 8.4, intra 2 x 7 x 3.4, and
	 * the rail ring's 2 x 1 network steps at the one-rank-per-node value
	 * 14: 25.2 + 47.6 + 28 = 100.8 us. */
	t = nvl(8, 2, 300e9, 0.8);
	add_nics(&t, 8, 50e9, 0.9);
	S = GiB;
	MUST(comm_cost_algo(&t, GP_ALL_REDUCE, GP_ALGO_HIER, S, 16, &r, &e));
	is_num(r.bw_time, 2 * 7.0 / 8 * S / 240e9 + (S / 8) / 45e9, 1e-9,
	       "hierarchical: inter phase bound by 50 GB/s per NIC per GPU");
	is_num(r.latency, 100.8 * US, 1e-9, "hierarchical latency 100.8 us");
	ok(r.nodes == 2 && r.ppn == 8, "16 gpus = 2 nodes x 8");

	/* Flat ring over 2 nodes with 2 NICs per node: each channel's ring
	 * leaves the node once, so busbw <= 2 x 50 x 0.9 = 90 GB/s;
	 * 4 GiB: latency < 0.2% of time. */
	t = nvl(8, 2, 300e9, 0.8);
	add_nics(&t, 2, 50e9, 0.9);
	S = 4 * GiB;
	MUST(comm_cost_algo(&t, GP_ALL_REDUCE, GP_ALGO_RING, S, 16, &r, &e));
	is_num(r.busbw, 90e9, 0.01, "2-node ring busbw = node NIC bw 90 GB/s");
	/* Double binary tree at 2 nodes: each node sends S once (root of
	 * one tree, leaf of the other): algbw = min(240/2, 90) = 90,
	 * busbw = 90 x 1.875 = 168.75 > the NIC bound (nccl-tests#196).
	 * Latency (Simple, tree hwLat): 8.4 + 2 x ((8 - 1) x 4.0 + log2(2) x
	 * 14) = 92.4 us against S / 90e9 = 47.72 ms: 0.19%; 4 GiB is past
	 * the tree correction table (64 B .. 256 MiB).  Each of the 2 network
	 * hops also carries its first step whole (tree_net_fill): NCCL's
	 * Simple tree step, 4 MiB / 8 = 524288 B (a channel's share, 4 GiB / 8
	 * channels, is larger), on one 45 GB/s NIC: 2 x 11.65 us.  So busbw =
	 * 1.875 S / (92.4 us + 2 x 524288 / 45e9 + S / 90e9) = 168.34 GB/s.
	 * Exact arithmetic: tolerance 1e-9. */
	MUST(comm_cost_algo(&t, GP_ALL_REDUCE, GP_ALGO_TREE, S, 16, &r, &e));
	is_num(r.busbw,
	       1.875 * S / (92.4 * US + 2 * 524288.0 / 45e9 + S / 90e9), 1e-9,
	       "tree busbw 1.875 x 90 GB/s, less 0.19% of latency");
	/* NCCL does not run it on A100s: its tuner prices the ring on its
	 * graph's network speed, 90 GB/s (algbw 90 x 16/30 = 48), the tree
	 * on up to twice that, 0.92 x min(240, 180) = 165.6, capped at the
	 * graph's channels x Ampere's perChMaxTreeBw: 2 NICs at 48 GB/s,
	 * duplicated to 4 at 24, x 23.6 = 94.4 -> algbw 47.2 < 48, and keeps
	 * the ring for 4 GiB (2 HGX A100 with 4 NICs run at the NICs' 91
	 * GB/s, nccl-tests#100).  Ring busbw 90 GB/s less its latency ((8.4 +
	 * 28 x 3.4 + 2 x 14) x 1.4 = 323.4 us of 89 ms): tolerance 1%. */
	t.tree_ch_bw[0] = 23.6e9;
	MUST(comm_cost(&t, GP_ALL_REDUCE, S, 16, &r, &e));
	ok(r.algo == GP_ALGO_RING, "2 nodes, 4 GiB: NCCL's tuner keeps the ring");
	is_num(r.busbw, 90e9, 0.01, "... at the NICs' 90 GB/s");
	/* At 1 MiB the tree's shorter latency wins in NCCL's estimate
	 * (LL128 tree 14 + 2 x (7 x 1.25 + 8.5) = 48.5 us + 1 MiB over
	 * 94.4 (the cap) x 120/128 x 0.5 x 0.6 (tree correction at 1 MiB)
	 * = 26.6 GB/s, 88 us; the LL128 ring's 14 + 28 x 1.9 + 2 x 4.0 =
	 * 75.2 us + 1 MiB over 0.92 x 90 x 16/30 = 44.2 GB/s, 99 us). */
	MUST(comm_cost(&t, GP_ALL_REDUCE, MiB, 16, &r, &e));
	ok(r.algo == GP_ALGO_TREE, "2 nodes, 1 MiB: the tree");
	/* NICs behind the GPU's NVLink-C2C to its CPU (GB200, nic_c2c):
	 * NCCL before 2.27.3 sees a PHB path to them and enables LL128
	 * across nodes only up to PXN (tuning.cc v2.26.2-1), so its 1 MiB
	 * all-reduce here leaves LL128; 2.27.3 makes the path P2C and
	 * LL128 comes back, priced as with PCIe NICs (the same release's
	 * time, to the bit). */
	t.nccl_version = 22602;
	MUST(comm_cost(&t, GP_ALL_REDUCE, MiB, 16, &r, &e));
	ok(r.proto == GP_PROTO_LL128, "NCCL 2.26.2, PCIe NICs: the LL128 tree");
	t.nic_c2c = 1;
	MUST(comm_cost(&t, GP_ALL_REDUCE, MiB, 16, &r, &e));
	ok(r.proto != GP_PROTO_LL128, "... NICs behind C2C: no LL128 across "
	   "nodes before 2.27.3");
	t.nccl_version = 22703;
	t.nic_c2c = 0;
	MUST(comm_cost(&t, GP_ALL_REDUCE, MiB, 16, &r2, &e));
	t.nic_c2c = 1;
	MUST(comm_cost(&t, GP_ALL_REDUCE, MiB, 16, &r, &e));
	ok(r.proto == GP_PROTO_LL128 && r.time == r2.time,
	   "... 2.27.3: LL128 again, the PCIe NICs' time");
	t.nic_c2c = 0;
	t.nccl_version = 0;

	/* --- all-gather: size is the total buffer ---
	 * ring, 8 GiB on 8 A100: bw term 7/8 x S / 240e9 = 31.32 ms,
	 * latency (Simple) 8.4 + (8 - 1) x (0.6 + 2.8) = 32.2 us, 0.10% of
	 * the time: busbw = 7/8 S / time = 239.75 GB/s, i.e. 240 less the
	 * latency share.  Exact arithmetic: tolerance 1e-9. */
	S = 8 * GiB;
	MUST(comm_cost(&a100, GP_ALL_GATHER, S, 8, &r, &e));
	is_num(r.bw_time, 7.0 / 8 * S / 240e9, 1e-9,
	       "all_gather bw term (n-1)/n S / bw");
	is_num(r.busbw, 7.0 / 8 * S / (32.2 * US + 7.0 / 8 * S / 240e9), 1e-9,
	       "all_gather busbw ~ 240 GB/s (239.75: 0.10% latency)");

	/* --- all-to-all across 2 nodes, 8 NICs x 50 x 0.9 ---
	 * 16 ranks: half of each rank's buffer leaves the node through the
	 * GPU's share of the NICs, 8 x 45e9 / 8 = 45e9:
	 * bw term 0.5 x S / 45e9 (the NVLink part, 7/16 S at 240e9 x 0.83,
	 * is smaller). */
	t = nvl(8, 2, 300e9, 0.8);
	add_nics(&t, 8, 50e9, 0.9);
	S = GiB;
	MUST(comm_cost(&t, GP_ALL_TO_ALL, S, 16, &r, &e));
	is_num(r.bw_time, 0.5 * S / 45e9, 1e-9, "all_to_all: remote half / NIC");
	ok(r.algo == GP_ALGO_PXN, "all_to_all across nodes uses pxn "
	   "(fewer network messages)");

	/* --- PXN by NCCL release ---
	 * PXN first ships in 2.12.7 (NVIDIA/nccl v2.12.7-1: "Add network
	 * communication through another GPU connected with NVLink (PXN)").
	 * NCCL 2.11.4 on the same 2 x 8 GPUs runs p2p: the same remote
	 * half at the GPU's 45e9 (bw term 0.5 S / 45e9), and a latency that
	 * differs by the posts and one NVLink step.  p2p: base + hop_up +
	 * hop_net + (n - g) = 8 posts; pxn: base + 2 hop_up + hop_net +
	 * (N - 1) x ceil(8 / 8) = 1 post.  A post is NCCL's Simple network
	 * overhead, 3 x 1 us (Intel host; tuning.cc "if (p ==
	 * NCCL_PROTO_SIMPLE) netOverhead *= 3"), hop_up 0.6 + 2.8 = 3.4 us
	 * (Simple): p2p is 3 x (8 - 1) - 3.4 = 17.6 us slower.
	 * Exact arithmetic: 1e-12 s. */
	t.nccl_version = 21104;
	MUST(comm_cost(&t, GP_ALL_TO_ALL, S, 16, &r2, &e));
	ok(r2.algo == GP_ALGO_P2P && r2.proto == GP_PROTO_SIMPLE,
	   "NCCL 2.11.4: all_to_all across nodes runs p2p (no PXN)");
	is_num(r2.bw_time, 0.5 * S / 45e9, 1e-9, "... the same remote half "
	       "/ NIC");
	is_num(r2.latency - r.latency, 17.6 * US, 1e-12, "... 7 posts of 3 "
	       "us more, one NVLink step less: 17.6 us");
	rc = comm_cost_algo(&t, GP_ALL_TO_ALL, GP_ALGO_PXN, S, 16, &r2, &e);
	einval(rc, &e, "NCCL 2.11.4: pxn forced is refused");
	ok(strstr(e.msg, "2.12.7") != NULL, "... naming 2.12.7");
	t.nccl_version = 21207;
	MUST(comm_cost(&t, GP_ALL_TO_ALL, S, 16, &r2, &e));
	ok(r2.algo == GP_ALGO_PXN && r2.time == r.time,
	   "NCCL 2.12.7: pxn, the latest's time");
	t.nccl_version = 0;

	/* --- SHARP (CollNet) by NCCL release ---
	 * 2 x 8 GPUs on an NVLS switch, 8 NICs of 45e9 on a SHARP fabric,
	 * 1 GiB all_reduce forced to sharp.  NVLS in the node under IB
	 * SHARP first ships in 2.18.1 (v2.18.1-1: "Add support for IB SHARP
	 * to NVLS"): 2.17.1 has NVLS but its CollNet reduces in the node by
	 * ring reduce-scatter + all-gather, 2 x 7/8 x S over the GPU's
	 * 300e9 x 0.8 = 240e9, above the network's S / 360e9.  CollNet
	 * itself first ships in 2.6.4 ("Add support for network
	 * collectives."): 2.5.7 refuses sharp.  Exact arithmetic: 1e-9. */
	t.up_nvls = 1;
	t.nic_sharp = 1;
	MUST(comm_cost_algo(&t, GP_ALL_REDUCE, GP_ALGO_SHARP, S, 16, &r, &e));
	t.nccl_version = 21701;
	MUST(comm_cost_algo(&t, GP_ALL_REDUCE, GP_ALGO_SHARP, S, 16, &r2, &e));
	is_num(r2.bw_time, 2.0 * 7 / 8 * S / 240e9, 1e-9,
	       "NCCL 2.17.1: sharp reduces in the node by ring, 2 x 7/8 S / 240e9");
	ok(r.bw_time < r2.bw_time, "... where the latest's NVLS reduces faster");
	t.nccl_version = 21801;
	MUST(comm_cost_algo(&t, GP_ALL_REDUCE, GP_ALGO_SHARP, S, 16, &r2, &e));
	ok(r2.time == r.time, "NCCL 2.18.1: sharp with NVLS, the latest's time");
	t.nccl_version = 20507;
	rc = comm_cost_algo(&t, GP_ALL_REDUCE, GP_ALGO_SHARP, S, 16, &r2, &e);
	einval(rc, &e, "NCCL 2.5.7: sharp forced is refused");
	ok(strstr(e.msg, "2.6.4") != NULL, "... naming 2.6.4");
	t.nccl_version = 0;
	t.up_nvls = 0;
	t.nic_sharp = 0;

	/* --- PXN's grouped receives: the plugin's maxRecvs ---
	 * 4 nodes x 8 GPUs, 32 ranks, 1 GiB forced to pxn.  A GPU's posts
	 * are (N - 1) x ceil(g / max_recvs) at NCCL's Simple network post,
	 * 3 x 1 us (Intel host): 3 x 1 = 3 posts on NCCL's IB default (8),
	 * 3 x 8 = 24 where the plugin takes one receive a call (aws-ofi-nccl
	 * through v1.19.0), 3 x ceil(8 / 3) = 9 at 3.  Only the latency
	 * moves: 21 x 3 = 63 us and 6 x 3 = 18 us more; the bandwidth term
	 * and the protocol (Simple at 1 GiB) stay.  Exact arithmetic: 1e-12
	 * s. */
	t = nvl(8, 4, 300e9, 0.8);
	add_nics(&t, 8, 50e9, 0.9);
	S = GiB;
	MUST(comm_cost_algo(&t, GP_ALL_TO_ALL, GP_ALGO_PXN, S, 32, &r, &e));
	t.nic_nccl.max_recvs = 1;
	MUST(comm_cost_algo(&t, GP_ALL_TO_ALL, GP_ALGO_PXN, S, 32, &r2, &e));
	is_num(r2.latency - r.latency, 63.0 * US, 1e-12,
	       "pxn, max_recvs 1: 3 x 8 posts, 63 us over 3 x 1");
	ok(r2.proto == r.proto && r.proto == GP_PROTO_SIMPLE &&
	   r2.bw_time == r.bw_time, "pxn, max_recvs 1: same Simple "
	   "bandwidth term");
	t.nic_nccl.max_recvs = 3;
	MUST(comm_cost_algo(&t, GP_ALL_TO_ALL, GP_ALGO_PXN, S, 32, &r2, &e));
	is_num(r2.latency - r.latency, 18.0 * US, 1e-12,
	       "pxn, max_recvs 3: 3 x ceil(8/3) = 9 posts, 18 us over 3");
	t.nic_nccl.max_recvs = 0;
	rc = comm_cost(&t, GP_ALL_TO_ALL, S, 32, &r2, &e);
	einval(rc, &e, "max_recvs 0 refused");

	/* --- send/recv in a node: NCCL's channels for one stream ---
	 * 8 ranks share a pool of 32 channels: 4 each at least; 128 MiB
	 * is 32 MiB a channel on 4, over the 16 MiB part limit (512 KiB
	 * chunk x 32), so 8 channels of 16 MiB, 8 x 14 GB/s = 112 GB/s
	 * (under the link's 240e9 x 0.83 = 199.2e9), plus 8.4 + 3.4 us. */
	S = 128 * MiB;
	MUST(comm_cost(&a100, GP_SEND_RECV, S, 8, &r, &e));
	is_num(r.time, S / 112e9 + 11.8 * US, 1e-9, "send_recv 128 MiB on 8 "
	       "channels = S/112e9 + 11.8 us");
	is_num(r.busbw, r.algbw, 1e-12, "send_recv busbw = algbw");
	/* 1 GiB doubles to 32 channels (448 GB/s): the link binds.  NCCL
	 * writes into the receiver on this topology (p2p_read 0): the
	 * stream reaches the ring's whole rate, S/240e9.  Where it reads
	 * (an A100: p2p_read 1) the stream gets 0.83 of it, 199.2e9.  Over
	 * PCIe NCCL never reads, so p2p_read changes nothing there: 16
	 * GPUs of 32 GB/s x 0.8 = 25.6e9, 8 ranks of 4 channels on PCIe's 2
	 * a peer (128 KiB chunks: 2 x 14 GB/s = 28e9 > 25.6e9), so S/25.6e9
	 * either way.  Exact arithmetic: 1e-9. */
	S = GiB;
	MUST(comm_cost(&a100, GP_SEND_RECV, S, 8, &r, &e));
	is_num(r.bw_time, S / 240e9, 1e-9, "send_recv 1 GiB by writes = "
	       "S/240e9");
	t = a100;
	t.p2p_read = 1;
	MUST(comm_cost(&t, GP_SEND_RECV, S, 8, &r, &e));
	is_num(r.time, S / 199.2e9 + 11.8 * US, 1e-9, "send_recv 1 GiB by "
	       "reads = S/(240e9 x 0.83) + 11.8 us");
	t = nvl(8, 1, 32e9, 0.8);
	t.up_kind = GP_LINK_PCIE;
	MUST(comm_cost(&t, GP_SEND_RECV, S, 8, &r, &e));
	t.p2p_read = 1;
	MUST(comm_cost(&t, GP_SEND_RECV, S, 8, &r2, &e));
	is_num(r.bw_time, S / 25.6e9, 1e-9, "send_recv over PCIe = S/25.6e9");
	is_num(r2.bw_time, r.bw_time, 1e-12, "p2p_read is NVLink's alone");
	/* 64 MiB stays on 4 channels (16 MiB each): 56 GB/s. */
	S = 64 * MiB;
	MUST(comm_cost(&a100, GP_SEND_RECV, S, 8, &r, &e));
	is_num(r.time, S / 56e9 + 11.8 * US, 1e-9, "send_recv 64 MiB on 4 "
	       "channels = S/56e9 + 11.8 us");

	/* --- send/recv across nodes: NCCL's channels for a network peer ---
	 * 10 nodes of 8 x H100, one 400G NIC a GPU (50e9 x 0.96 = 48e9),
	 * one rank a node (the 8 x H100's NVLink 450e9 x 0.8 does not
	 * bind): the peer gets 2 channels (n = 10: 2 x 10 <= 4 x 32) of 14
	 * GB/s, 28e9 < 48e9, so 1 GiB takes S/28e9 where the NIC alone
	 * would give S/48e9.  80 ranks (8 a node): 2 x 80 > 128 halves it to
	 * one channel, S/14e9.  Exact arithmetic: 1e-9. */
	t = nvl(8, 10, 450e9, 0.8);
	add_nics(&t, 8, 50e9, 0.96);
	S = GiB;
	{
		gp_group g1 = { 10, 1, 1, 10 };

		MUST(comm_group_cost(&t, GP_SEND_RECV, S, &g1, &r, &e));
		is_num(r.bw_time, S / 28e9, 1e-9, "send_recv across nodes, "
		       "one rank a node: 2 channels x 14 GB/s = S/28e9");
	}
	MUST(comm_cost(&t, GP_SEND_RECV, S, 80, &r, &e));
	is_num(r.bw_time, S / 14e9, 1e-9, "send_recv on 80 ranks across "
	       "nodes: one channel a network peer, S/14e9");
	/* The channels the same streams run on (comm_group_p2p_channels,
	 * what the training step's CP ring takes its slowdown from): 2 for
	 * the 10-rank group, 1 for 80 ranks (8 a node on 10 nodes), and
	 * in one node, 2 ranks of 8 x H100, the pool of 32 split over 2
	 * ranks, 16: 4 MiB is over 16 x 64 KiB (minPart) and 4 MiB / 16
	 * is under 16 MiB (maxPart), so 16; 1 GiB / 16 = 64 MiB is over
	 * 16 MiB, so it doubles to the pool, 32.  Counts: exact. */
	{
		gp_group g1 = { 10, 1, 1, 10 }, g8 = { 80, 8, 1, 10 },
			 gn = { 2, 2, 1, 1 };
		double nch = 0;

		MUST(comm_group_p2p_channels(&t, S, &g1, &nch, &e));
		is_num(nch, 2.0, 0.0, "p2p channels, network peer of 10 ranks: 2");
		MUST(comm_group_p2p_channels(&t, S, &g8, &nch, &e));
		is_num(nch, 1.0, 0.0, "p2p channels, network peer of 80 ranks: 1");
		MUST(comm_group_p2p_channels(&t, 4 * MiB, &gn, &nch, &e));
		is_num(nch, 16.0, 0.0, "p2p channels, 4 MiB to an NVLink peer of 2 ranks: 16");
		MUST(comm_group_p2p_channels(&t, S, &gn, &nch, &e));
		is_num(nch, 32.0, 0.0, "p2p channels, 1 GiB to an NVLink peer of 2 ranks: 32");
	}

	/* NCCL 2.29 (nccl_version 22902) sizes the peer by its NIC:
	 * divUp(50 GB/s, 14) = 4 channels, halved while 4 x divUp(n, 8)
	 * exceeds the communicator's p2p channels (one GPU a node on one
	 * 400G NIC: 1 ring channel, doubled by ncclTopoDupChannels and by
	 * ncclTopoPostset, 4).  2 ranks on 2 nodes: 4 x 1 <= 4 keeps 4
	 * channels, 56e9 > the NIC's 48e9: S/48e9 (the rule before 2.29
	 * gives S/28e9, which fails it).  10 ranks: 4 x 2 > 4 -> 2, S/28e9.
	 * 80 ranks, 8 a node (8 ring channels, not doubled past 4, then
	 * doubled: 16): 4 x 10 and 2 x 10 > 16 -> 1, S/14e9.  Exact: 1e-9. */
	t.nccl_version = 22902;
	{
		gp_group g2 = { 2, 1, 1, 2 }, g10 = { 10, 1, 1, 10 };

		MUST(comm_group_cost(&t, GP_SEND_RECV, S, &g2, &r, &e));
		is_num(r.bw_time, S / 48e9, 1e-9, "NCCL 2.29: send_recv on 2 "
		       "nodes, one rank a node: 4 channels, the NIC, S/48e9");
		MUST(comm_group_cost(&t, GP_SEND_RECV, S, &g10, &r, &e));
		is_num(r.bw_time, S / 28e9, 1e-9, "NCCL 2.29: 10 ranks, one "
		       "a node: halved to 2 channels, S/28e9");
	}
	MUST(comm_cost(&t, GP_SEND_RECV, S, 80, &r, &e));
	is_num(r.bw_time, S / 14e9, 1e-9, "NCCL 2.29: 80 ranks, 8 a node: "
	       "one channel, S/14e9");
	t.nccl_version = 0;

	/* --- all-to-all in a node: one send/recv stream per peer ---
	 * 8 x H100 (450e9 x 0.8 = 360e9 the ring's rate): each of the 7
	 * peers gets S/8.  8 GiB: a peer's 1 GiB doubles from 4 to 32
	 * channels (32 x 14 GB/s, 2.4 ms), so the link binds: 7/8 S at
	 * the GPU's all-to-all share of it.  NCCL writes here (p2p_read
	 * 0) and has doubled the peer's channels: 360e9 x 0.94 = 338.4e9
	 * (22.2 ms, A2A_WRITE_EFF, the 8 x H100 alltoall_perf plateau);
	 * where it reads (p2p_read 1, an A100) 360e9 x 0.83 = 298.8e9
	 * (25.2 ms) whatever the channels.  Exact arithmetic: 1e-9. */
	S = 8 * GiB;
	MUST(comm_cost(&h100, GP_ALL_TO_ALL, S, 8, &r, &e));
	is_num(r.bw_time, 7.0 / 8 * S / 338.4e9, 1e-9,
	       "all_to_all 8 GiB in a node by writes: 7/8 S / (360e9 x 0.94)");
	t = h100;
	t.p2p_read = 1;
	MUST(comm_cost(&t, GP_ALL_TO_ALL, S, 8, &r, &e));
	is_num(r.bw_time, 7.0 / 8 * S / 298.8e9, 1e-9,
	       "all_to_all 8 GiB in a node by reads: 7/8 S / (360e9 x 0.83)");
	/* The 0.94 by writes needs NCCL to have doubled a peer's
	 * channels past its share (4 of the pool's 32 on 8 ranks):
	 * 512 MiB gives each peer 64 MiB, 16 MiB on each of 4 channels,
	 * not over the 16 MiB part limit, so 4 channels (56 GB/s, 1.20
	 * ms) and the link at 0.83, 7/8 S / 298.8e9 = 1.57 ms; 1 GiB
	 * gives 128 MiB, 32 MiB a channel, doubled to 8 (112 GB/s, 1.20
	 * ms), twice the peer's share of channels: the link at 0.90 (the
	 * log's rate on 8 channels a peer, A2A_WRITE_EFF_X2; 0.94 from 8
	 * times the share), 7/8 S / 324.0e9 = 2.90 ms.  The 8 x H100 log
	 * rises there too (310.85 GB/s at 512 MiB, 331.99 at 1 GiB).
	 * Exact arithmetic: 1e-9. */
	S = 512 * MiB;
	MUST(comm_cost(&h100, GP_ALL_TO_ALL, S, 8, &r, &e));
	is_num(r.bw_time, 7.0 / 8 * S / 298.8e9, 1e-9,
	       "all_to_all 512 MiB, 4 channels a peer: 7/8 S / (360e9 x 0.83)");
	S = GiB;
	MUST(comm_cost(&h100, GP_ALL_TO_ALL, S, 8, &r, &e));
	is_num(r.bw_time, 7.0 / 8 * S / 324.0e9, 1e-9,
	       "all_to_all 1 GiB, 8 channels a peer: 7/8 S / (360e9 x 0.90)");
	/* 1 MiB: a peer's 128 KiB takes 2 channels (128 KiB / 64 KiB
	 * minimum part, under the 4 a peer's share holds): 28 GB/s,
	 * 4.68 us, slower than the link's 7 x 128 KiB / 298.8e9 =
	 * 3.07 us; the simple protocol (LL carries 0.28 of it). */
	S = MiB;
	MUST(comm_cost(&h100, GP_ALL_TO_ALL, S, 8, &r, &e));
	ok(r.proto == GP_PROTO_SIMPLE, "all_to_all 1 MiB: simple");
	is_num(r.bw_time, S / 8 / 28e9, 1e-9,
	       "all_to_all 1 MiB: a peer's S/8 on 2 channels x 14 GB/s");

	/* --- PCIe through the host: no LL128, 0.558 of the bandwidth ---
	 * 8 x PCIe 4.0 (32 GB/s per direction, 0.8 achievable), staged at
	 * 43.0 / 2 / 38.5 = 0.5584 of it (the both-ways rate two RTX 5090s
	 * without P2P share, nccl-tests#287; STAGED below): busbw -> 32 x
	 * 0.8 x 0.5584 = 14.30 GB/s for 8 GiB. */
	t = nvl(8, 1, 32e9, 0.8);
	t.up_kind = GP_LINK_PCIE;
	comm_nccl_default(GP_LINK_PCIE, &t.up_nccl);
	t.up.latency = 1.0 * US;
	t.up_crosses_cpu = 1;
	S = 8 * GiB;
	MUST(comm_cost(&t, GP_ALL_REDUCE, S, 8, &r, &e));
	is_num(r.busbw, 32e9 * 0.8 * STAGED, 0.01,
	       "host-staged PCIe ring busbw 14.3 GB/s");
	/* 8 bytes: LL ring, 6.6 + 14 x 1.0 = 20.6 us latency (a staged
	 * step at the PCIe link's 1.0 us, NCCL's hwLat[PCI][RING][LL]); the
	 * bandwidth term is 8 x 1.75 / (32e9 x 0.8 x 0.5584 staged x LL
	 * payload 0.5 x 0.5625 = 0.28125, comm.c) = 14 / 4.0e9 = 0.0035 us
	 * (1e-4 of the time).
	 * Exact arithmetic: tolerance 1e-9. */
	MUST(comm_cost(&t, GP_ALL_REDUCE, 8, 8, &r, &e));
	is_num(r.time, 20.6 * US + 8 * 1.75 / (32e9 * 0.8 * STAGED * 0.28125),
	       1e-9, "host-staged 8-byte all_reduce 20.6 us");
	/* Two cards without P2P (tinygrad/open-gpu-kernel-modules#45: two
	 * RTX 4090s, NCCL_P2P_DISABLE=1, 8.49 us at 8 B): an LL ring's 2
	 * steps at the PCIe link's 1.0 us, 6.6 + 2 x 1.0 = 8.6 us, NCCL's own
	 * estimate; the staged bytes' term (8 B at 4 GB/s, 0.002 us) and
	 * whatever a partly used node changes in it stay far below the 1e-3
	 * tolerance, and a doubled staged step (10.6 us) fails it. */
	MUST(comm_cost(&t, GP_ALL_REDUCE, 8, 2, &r, &e));
	is_num(r.time, 8.6 * US, 1e-3, "two host-staged cards: 8-byte all_reduce 8.6 us");
	rc = 0;
	for (i = 3; i <= 33; i++) {
		MUST(comm_cost(&t, GP_ALL_REDUCE, ldexp(1.0, i), 8, &r, &e));
		rc |= r.proto == GP_PROTO_LL128;
	}
	ok(!rc, "no LL128 over PCIe at any size");
	/* The host's DRAM carries every staged byte twice (written by the
	 * sender, read by the receiver): 8 flows of r B/s need 16 r.  A
	 * host streaming 160 GB/s caps r at 160 / 16 = 10 GB/s, below the
	 * staged link's 14.3; 8 GiB makes the latency (~50 us of 1.5 s)
	 * negligible: tolerance 1%.  Half the GPUs in one group: 4 flows,
	 * cap 20 GB/s, the link's 14.3 binds; two such groups at once
	 * (sharing 2): 8 flows again, 10 GB/s. */
	t.host_mem_bw = 160e9;
	MUST(comm_cost(&t, GP_ALL_REDUCE, S, 8, &r, &e));
	is_num(r.busbw, 10e9, 0.01, "staged ring capped by host DRAM: "
	       "160 / (2 x 8) = 10 GB/s");
	{
		gp_group half = {4, 4, 1, 0}, pair = {4, 4, 2, 0};

		MUST(comm_group_cost(&t, GP_ALL_REDUCE, S, &half, &r, &e));
		is_num(r.busbw, 32e9 * 0.8 * STAGED, 0.01, "4 staged flows: "
		       "160 / 8 = 20 GB/s of DRAM each, the link's 14.3 "
		       "binds");
		MUST(comm_group_cost(&t, GP_ALL_REDUCE, S, &pair, &r, &e));
		is_num(r.busbw, 10e9, 0.01, "two groups of 4 share the DRAM: "
		       "160 / (2 x 8) = 10 GB/s");
	}
	t.host_mem_bw = 0.0;

	/* --- fewer channels for small messages ---
	 * 8 GPUs on a 450 GB/s x 0.8 = 360 GB/s link that NCCL runs on 32
	 * channels.  The LL ring gives each channel 512 threads x 8 B x 8
	 * ranks = 32 KiB: 64 KiB runs on 2 channels, at NCCL's LL rate per
	 * channel, half its link share: 0.5 x 360 x 2/32 = 11.25 GB/s busbw,
	 * algbw x 8/14 (no LL ceiling on this topology); latency 6.6 + 14 x
	 * 0.6 = 15.0 us.  512 KiB runs on 16 channels: the same 32 KiB per
	 * channel, the same time.  1 MiB fills all 32: the link's LL rate,
	 * 360 x 0.5 x 0.5625 = 101.25 GB/s busbw.  Exact arithmetic. */
	t = nvl(8, 1, 450e9, 0.8);
	t.up_nccl.channels = 32;
	MUST(comm_cost_algo(&t, GP_ALL_REDUCE, GP_ALGO_RING, 65536, 8, &r, &e));
	ok(r.proto == GP_PROTO_LL, "64 KiB on 8 GPUs: LL ring");
	is_num(r.bw_time, 65536 / (0.5 * 360e9 * 2 / 32 * 8 / 14), 1e-9,
	       "64 KiB on 2 of 32 channels: 11.25 GB/s busbw");
	MUST(comm_cost_algo(&t, GP_ALL_REDUCE, GP_ALGO_RING, 524288, 8, &r2,
			    &e));
	is_num(r2.time, r.time, 1e-9, "512 KiB on 16 channels: as long as "
	       "64 KiB on 2");
	MUST(comm_cost_algo(&t, GP_ALL_REDUCE, GP_ALGO_RING, MiB, 8, &r, &e));
	is_num(r.bw_time, MiB * 1.75 / (360e9 * 0.5 * 0.5625), 1e-9,
	       "1 MiB on all 32 channels: the link's LL rate");
	t.up_nccl.channels = 0;
	MUST(comm_cost_algo(&t, GP_ALL_REDUCE, GP_ALGO_RING, 65536, 8, &r, &e));
	is_num(r.bw_time, 65536 * 1.75 / (360e9 * 0.5 * 0.5625), 1e-9,
	       "channels unknown: every size on all of them");

	/* Time grows with size, 8 B .. 8 GiB, for each algorithm: NCCL's
	 * own estimate (which picks the protocol) grows with size, and so
	 * does each protocol's price.  The default may dip where NCCL's
	 * estimate switches to a protocol that is really faster (nccl#1244:
	 * 129.8 us at 2 MiB, 127.6 us at 4 MiB); never by more than 5% here
	 * (LL -> LL128 at 8 MiB: 87.5 -> 84.1 us, with no LL ceiling on
	 * this topology). */
	mono = 1;
	for (i = 3; i < 33; i++) {
		MUST(comm_cost(&h100, GP_ALL_REDUCE, ldexp(1.0, i), 8, &r, &e));
		MUST(comm_cost(&h100, GP_ALL_REDUCE, ldexp(1.0, i + 1), 8, &r2,
			       &e));
		mono &= r2.time > 0.95 * r.time;
	}
	ok(mono, "all_reduce time grows with size, at most 5% dips");
	mono = 1;
	for (i = 3; i < 33; i++) {
		MUST(comm_cost_algo(&h100, GP_ALL_REDUCE, GP_ALGO_TREE,
				    ldexp(1.0, i), 8, &r, &e));
		MUST(comm_cost_algo(&h100, GP_ALL_REDUCE, GP_ALGO_TREE,
				    ldexp(1.0, i + 1), 8, &r2, &e));
		mono &= r2.time > r.time;
	}
	ok(mono, "tree all_reduce time increases with size");

	/* --- NCCL's multi-node latency terms, 2 nodes x 8 A100-like ---
	 * 8 NICs x 50 GB/s x 0.9.  Ring, 8 B (LL): 2(16-1) = 30 steps, the
	 * chain's 2N = 4 of them network at 2.7 us (two turns of the ring
	 * less two hops inside a node), the other 26 at max(0.6, 1 us
	 * network post) = 1.0: 6.6 + 26 + 10.8 = 43.4 us (NCCL's own figure
	 * counts 2(N-1) = 2 network steps: 40.0).  The LL bandwidth term:
	 * 8 x 1.875 / 39e9, NCCL's LL cap across 2 nodes (the link's LL rate,
	 * 240e9 x 0.28 = 67 GB/s, is higher).  Exact arithmetic. */
	t = nvl(8, 2, 300e9, 0.8);
	add_nics(&t, 8, 50e9, 0.9);
	MUST(comm_cost_algo(&t, GP_ALL_REDUCE, GP_ALGO_RING, 8, 16, &r, &e));
	ok(r.proto == GP_PROTO_LL, "8 B across 2 nodes: LL ring");
	is_num(r.latency, 43.4 * US, 1e-9, "2-node LL ring latency 43.4 us");
	is_num(r.bw_time, 8 * 1.875 / 39e9, 1e-9,
	       "LL across 2 nodes capped at 39 GB/s busbw");
	/* The same on AMD hosts: NCCL's network post costs 2 us there
	 * (getNetOverhead), so each of the 26 intra steps costs 2.0:
	 * 6.6 + 26 x 2.0 + 4 x 2.7 = 69.4 us (2 x DGX A100, AMD EPYC 7742:
	 * 93 us, nccl#812); LL across 2 nodes capped at AMD's 22.5 GB/s.
	 * Exact arithmetic. */
	t.host_amd = 1;
	MUST(comm_cost_algo(&t, GP_ALL_REDUCE, GP_ALGO_RING, 8, 16, &r, &e));
	is_num(r.latency, 69.4 * US, 1e-9, "AMD hosts: 2-node LL ring 69.4 us");
	is_num(r.bw_time, 8 * 1.875 / 22.5e9, 1e-9,
	       "AMD hosts: LL across 2 nodes capped at 22.5 GB/s busbw");
	t.host_amd = 0;
	/* The proxy's posts: 5 nodes x 8 GPUs, 4 NICs x 50 GB/s (x 0.9) a
	 * node, ring all_reduce of 1 MiB.  Channels: one per NIC at NCCL's
	 * 48 GB/s, doubled (48 >= 25, only 4), doubled again: 16, of which
	 * 1 MiB uses all (>= 16 x 640 x 8 B), 4 on each NIC's proxy.  A
	 * channel's step carries 1 MiB / (40 x 16) = 1638.4 B, 0.0388 us at
	 * 45e9 x 120/128 B/s, so each of the 3 later posts shows for 1 -
	 * 0.0388 of its 1 us: a step inside a node costs 1 + 3 x 0.96116 =
	 * 3.88349 us (NVLink LL128: 1.9).  Latency, with the chain's 2N =
	 * 10 network steps: 14 + 68 x 3.88349 + 10 x (2.7 + 1.3) = 318.077 us
	 * (nccl#1368: 354.9 us on such nodes); NCCL ranks by its single post
	 * and 2(N-1) = 8 network steps (NCCL's own 191-198 us), still LL128.
	 * Exact arithmetic. */
	t5 = nvl(8, 5, 450e9, 0.82);
	add_nics(&t5, 4, 50e9, 0.9);
	MUST(comm_cost_algo(&t5, GP_ALL_REDUCE, GP_ALGO_RING, MiB, 40, &r,
			    &e));
	ok(r.proto == GP_PROTO_LL128, "1 MiB on 5 nodes: LL128 ring");
	intra = 1.0 + 3.0 * (1.0 - MiB / 640.0 / (45e9 * 120.0 / 128.0) / US);
	is_num(r.latency, (14.0 + 68.0 * intra + 10.0 * 4.0) * US, 1e-9,
	       "1 MiB on 5 nodes: 4 proxy posts a step, 318.1 us");
	/* 1 GiB: a channel's step (1.68 MB, 37 us on the NIC) hides the
	 * posts; NCCL's own Simple terms over the chain's 10 network steps,
	 * (8.4 + 68 x max(3.4, 3) + 10 x (2.7 + 11.3)) x 1.4 = 531.44 us.
	 * Exact arithmetic. */
	MUST(comm_cost_algo(&t5, GP_ALL_REDUCE, GP_ALGO_RING, GiB, 40, &r,
			    &e));
	ok(r.proto == GP_PROTO_SIMPLE, "1 GiB on 5 nodes: Simple ring");
	is_num(r.latency, 531.44 * US, 1e-9,
	       "1 GiB on 5 nodes: the transfer hides the posts");
	/* Tree, 8 B (LL): 6.8 + 2 x (7 x 0.6 + 1 x 5.0) = 25.2 us (NCCL's
	 * 25.2), the cheaper of the two: the auto choice.  Its 2 network
	 * hops each carry the step whole: 8 B of data in 16 B of LL lines on
	 * a 45 GB/s NIC, 2 x 16 / 45e9 s. */
	MUST(comm_cost(&t, GP_ALL_REDUCE, 8, 16, &r, &e));
	ok(r.algo == GP_ALGO_TREE && r.proto == GP_PROTO_LL,
	   "8 B across 2 nodes: LL tree");
	is_num(r.latency, 25.2 * US + 2 * 16 / 45e9, 1e-9,
	       "2-node LL tree latency 25.2 us");
	/* Tree correction at medium sizes: 1 MiB is index log2(2^20 / 64)
	 * = 14 of NCCL's table, 0.6 for LL128.  LL128 tree bandwidth term:
	 * max(2S / (240e9 x 120/128), S / (360e9 x 120/128)) / 0.6 =
	 * 2S / 225e9 / 0.6; latency 14 + 2 x (7 x 1.25 + 8.5) = 48.5 us
	 * (NCCL's 48.5), and each of the 2 network hops carries its first
	 * step whole: NCCL's LL128 tree chunk on 16 channels (8 NICs in
	 * NCCL's 48 GB/s class, not doubled), nstepsLL128 = 1 + 1 + 0.8 = 2.8, 576000 B
	 * halved to 72000 (the 131072 floor) then, 1 MiB / (16 chunk) < 2.8 x
	 * 16 / 8, to 18000 (the 32768 floor): 19200 B on the wire at 45 GB/s,
	 * 2 x 0.4267 us. */
	S = MiB;
	MUST(comm_cost_algo(&t, GP_ALL_REDUCE, GP_ALGO_TREE, S, 16, &r, &e));
	ok(r.proto == GP_PROTO_LL128, "1 MiB tree: LL128");
	is_num(r.bw_time, 2 * S / 225e9 / 0.6, 1e-9,
	       "1 MiB tree bandwidth derated by NCCL's factor 0.6");
	is_num(r.latency, 48.5 * US + 2 * 19200 / 45e9, 1e-9,
	       "LL128 tree latency 48.5 us and the 2 hops' 18000 B steps");
	/* One rank per node: the network step costs the tree's value.
	 * 2 ranks, ring LL, 8 B: 6.6 + 2 x 5.0 = 16.6 us (nccl-tests#150
	 * measures 19.9 us between two A100 nodes). */
	t = nvl(8, 2, 300e9, 0.8);
	add_nics(&t, 8, 50e9, 0.9);
	{
		gp_group two = {2, 1, 1, 0};

		MUST(comm_group_cost_algo(&t, GP_ALL_REDUCE, GP_ALGO_RING, 8,
					  &two,
					  &r, &e));
		is_num(r.latency, 16.6 * US, 1e-9,
		       "one rank per node: ring LL 16.6 us");
	}
	/* Multi-node Simple ring all-reduce: NCCL's 1.4x "plateau".  1 GiB
	 * on 2 x 8, 2N = 4 network steps: (8.4 + 26 x max(3.4, 3.0) + 4 x
	 * 14) x 1.4 = 213.92 us. */
	MUST(comm_cost_algo(&t, GP_ALL_REDUCE, GP_ALGO_RING, GiB, 16, &r, &e));
	ok(r.proto == GP_PROTO_SIMPLE, "1 GiB ring: Simple");
	is_num(r.latency, 152.8 * 1.4 * US, 1e-9,
	       "2-node Simple ring latency 1.4 x 152.8 us");

	/* --- NVLS_TREE: the per-head ceiling ---
	 * 2 nodes x 8 H100-like GPUs (450 GB/s x 0.82, NVLS), 8 NICs x 50 x
	 * 0.94, heads capped at 57.7 GB/s busbw each (2 nodes).  8 GiB:
	 * intra S x 1.125 / (369e9 x 0.85) = S / 278.8e9; network S / 376e9;
	 * ceiling 1.875 S / (8 x 57.7e9) = S / 246.2e9 -- the slowest, so
	 * the bandwidth term, plus the pipeline's fill: 3 more stages of an
	 * NVLink loop, 16 blocks x 8 heads x 128 KiB = 16 MiB a loop, 512
	 * loops: 3 x intra / 512.  Latency 25 + 2 x 14 = 53 us: NVLS in the
	 * node, then up and down the tree of 2 nodes, each network step the
	 * tree's Simple one (hwLat[NET][TREE][SIMPLE] 14 us = the NIC's 2.7
	 * + 11.3). */
	t = nvls_tree_nodes(2);
	S = 8 * GiB;
	intra = S * 1.125 / (450e9 * 0.82 * 0.85);
	MUST(comm_cost_algo(&t, GP_ALL_REDUCE, GP_ALGO_NVLS, S, 16, &r, &e));
	is_num(r.bw_time, 1.875 * S / (8 * 57.7e9) + 3 * intra / 512, 1e-9,
	       "NVLS_TREE: 8 heads x 57.7 GB/s busbw");
	is_num(r.latency, 53.0 * US, 1e-9, "NVLS_TREE latency 25 + 2 x 14");
	/* NCCL ranks NVLS_TREE with its own 20.9 us network step, so at 1
	 * MiB it keeps the tree that its estimates put ahead.  Tree/LL128
	 * estimate: latency 14 + 2 (7 x (0.6 + 0.65) + (2.7 + 5.8)) = 48.5
	 * us; bus 0.92 x 369 x 120/128 = 318.2 GB/s, algbw half of it x the
	 * tree correction at 1 MiB (LL128, log2(1 MiB / 64) = 14: 0.6) = 95.5
	 * GB/s: 11.0 us, 59.5 us in all.  NVLS_TREE: 25 + 2 x 20.9 = 66.8 us
	 * before its bytes (1 MiB x 1.125 / (369 x 0.85) = 3.8 us): 70.6 us,
	 * the tree's 59.5 first -- ranked by its time (53 + 3.8 = 56.8 us) it
	 * would run. */
	MUST(comm_cost(&t, GP_ALL_REDUCE, MiB, 16, &r, &e));
	ok(r.algo == GP_ALGO_TREE,
	   "2 nodes, 1 MiB: NCCL ranks NVLS_TREE at 20.9 us a step: tree");
	/* NCCL 2.20.5 (nccl_version 22005) ranks its step at 14 us: 25 + 2 x
	 * 14 = 53 us and the streaming time, the slowest of NVLink 3.8,
	 * network 1 MiB / 376 GB/s = 2.8 and the heads' ceiling 1.875 MiB /
	 * (8 x 57.7 GB/s) = 4.3 us: 57.3 us, ahead of the tree's 59.5, so
	 * NVLS_TREE runs.  Its time: 1 MiB fills all 16 NVLS channels
	 * (32 KiB each at least), so each of its 2 network steps waits for
	 * 15 more posts of 1 us (one message a step, Intel hosts): 30 us,
	 * more than the streaming time and fill, which they bound from
	 * below. */
	t.nccl_version = 22005;
	MUST(comm_cost(&t, GP_ALL_REDUCE, MiB, 16, &r, &e));
	ok(r.algo == GP_ALGO_NVLS,
	   "2 nodes, 1 MiB: NCCL 2.20.5 ranks NVLS_TREE at 14 us: nvls");
	is_num(r.bw_time, 30.0 * US, 1e-9,
	       "NVLS_TREE 1 MiB: 2 steps x 15 proxy posts x 1 us");
	/* 64 KiB holds data in 2 channels: one more post a step, 2 x 1 x 1
	 * = 2 us, over a streaming time and fill of under 1 us.  (8 GiB
	 * above: the transfer hides all 30 us.) */
	MUST(comm_cost_algo(&t, GP_ALL_REDUCE, GP_ALGO_NVLS, 65536.0, 16, &r,
			    &e));
	is_num(r.bw_time, 2.0 * US, 1e-9,
	       "NVLS_TREE 64 KiB: 2 channels, 1 more post a step");
	/* NCCL 2.18 ranked the step at 19 us: 25 + 38 + 4.3 = 67.3 us, the
	 * tree first; 2.17 has no NVLS_TREE. */
	t.nccl_version = 21805;
	MUST(comm_cost(&t, GP_ALL_REDUCE, MiB, 16, &r, &e));
	ok(r.algo == GP_ALGO_TREE,
	   "NCCL 2.18.5 ranks NVLS_TREE at 19 us: tree");
	t.nccl_version = 21701;
	MUST(comm_cost(&t, GP_ALL_REDUCE, 64.0 * MiB, 16, &r, &e));
	ok(r.algo != GP_ALGO_NVLS, "NCCL 2.17.1 has no NVLS_TREE");
	/* Which releases run NVLS at all (their tags' notes, comm_algo.c
	 * nvls_release): in a node from 2.17.1, across nodes from 2.18.1,
	 * all-gather in a node from 2.19.1.  Forced, an older one is
	 * refused saying which release it needs; chosen, NCCL's tuner
	 * never sees NVLS.  One node, 64 MiB: NVLS at 2.17.1, not at
	 * 2.16.5. */
	ok(comm_cost_algo(&t, GP_ALL_REDUCE, GP_ALGO_NVLS, MiB, 16, &r, &e)
	   == GP_EINVAL && strstr(e.msg, "needs NCCL 2.18.1") != NULL,
	   "NVLS_TREE forced on NCCL 2.17.1: refused, naming 2.18.1");
	MUST(comm_cost(&t, GP_ALL_REDUCE, 64.0 * MiB, 8, &r, &e));
	ok(r.algo == GP_ALGO_NVLS, "NCCL 2.17.1, one node, 64 MiB: nvls");
	t.nccl_version = 21605;
	MUST(comm_cost(&t, GP_ALL_REDUCE, 64.0 * MiB, 8, &r, &e));
	ok(r.algo != GP_ALGO_NVLS, "NCCL 2.16.5, one node: no nvls");
	ok(comm_cost_algo(&t, GP_ALL_REDUCE, GP_ALGO_NVLS, MiB, 8, &r, &e)
	   == GP_EINVAL && strstr(e.msg, "needs NCCL 2.17.1") != NULL,
	   "nvls forced on NCCL 2.16.5: refused, naming 2.17.1");
	t.nccl_version = 21806;
	ok(comm_cost_algo(&t, GP_ALL_GATHER, GP_ALGO_NVLS, MiB, 8, &r, &e)
	   == GP_EINVAL && strstr(e.msg, "needs NCCL 2.19.1") != NULL,
	   "nvls all-gather forced on NCCL 2.18.6: refused, naming 2.19.1");
	t.nccl_version = 21901;
	MUST(comm_cost_algo(&t, GP_ALL_GATHER, GP_ALGO_NVLS, MiB, 8, &r,
			    &e));
	ok(r.algo == GP_ALGO_NVLS, "nvls all-gather on NCCL 2.19.1: priced");
	t.nccl_version = 100;
	ok(comm_cost(&t, GP_ALL_REDUCE, MiB, 16, &r, &e) == GP_EINVAL &&
	   strstr(e.msg, "nccl_version") != NULL,
	   "an nccl_version below 2.0.0 is refused, naming it");
	t.nccl_version = 0;
	/* 4 NICs: 4 heads, half the ceiling; 4 x 47 = 188 GB/s of NICs is
	 * still faster than 4 x 57.7 / 1.875 = 123.1 GB/s algbw.  Loops of
	 * 4 heads x 128 KiB: 1024 of them, fill 3 x intra / 1024. */
	t.nics = 4;
	MUST(comm_cost_algo(&t, GP_ALL_REDUCE, GP_ALGO_NVLS, S, 16, &r, &e));
	is_num(r.bw_time, 1.875 * S / (4 * 57.7e9) + 3 * intra / 1024, 1e-9,
	       "NVLS_TREE with 4 NICs: 4 heads");
	/* Without the ceiling (0): the slower of intra and network. */
	t.nics = 8;
	t.nvls_tree_bw[0] = 0.0;
	MUST(comm_cost_algo(&t, GP_ALL_REDUCE, GP_ALGO_NVLS, S, 16, &r, &e));
	is_num(r.bw_time, intra * (1 + 3.0 / 512), 1e-9,
	       "NVLS_TREE without a head ceiling: NVLS-bound");
	/* 16 MiB: NCCL's NVLS_TREE chunk halves to 64 KiB (16 MiB < 4 x
	 * 128 x 128 KiB), not to 32 KiB (not below 128 x 64 KiB = 8 MiB):
	 * 16 x 8 x 64 KiB = 8 MiB a loop, 2 loops a block, so the three
	 * NVLink stages beside the slowest add 3 x intra / 2 -- 1.5 x
	 * intra, most of the streaming time (nccl#1244: 2 x 8 H20 at 16
	 * MiB measure 155 GB/s busbw where the streaming time alone gives
	 * 233).  The 2 loops of 64 KiB are one more than 128 KiB chunks
	 * would run (16 MiB / (128 x 128 KiB) = 1), so one NVLS step more,
	 * hwLat[NVLINK][COLLNET_DIRECT][SIMPLE] = 3.7 us (nvls_steps). */
	t.nvls_tree_bw[0] = 57.7e9;
	S = 16.0 * 1048576.0;
	intra = S * 1.125 / (450e9 * 0.82 * 0.85);
	MUST(comm_cost_algo(&t, GP_ALL_REDUCE, GP_ALGO_NVLS, S, 16, &r, &e));
	is_num(r.bw_time, 1.875 * S / (8 * 57.7e9) + 1.5 * intra + 3.7e-6,
	       1e-9, "NVLS_TREE 16 MiB: 2 loops a block, fill 1.5 x intra, "
	       "one extra loop's step");
	/* 4 nodes: NCCL (2.19.3 on) caps the NVLS_TREE chunk at 64 KiB from
	 * 4 nodes ("maxChunkSize = comm->nNodes >= 4 ? 65536 : chunkSize",
	 * enqueue.cc), so 8 GiB runs 8 GiB / (16 x 8 x 64 KiB) = 1024 loops
	 * a block where 128 KiB chunks run 512: 512 extra loops x 3.7 us =
	 * 1894.4 us (nvls_steps), besides the fill 3 x intra / 1024.  The
	 * streaming time is the 3+-node head ceiling, 2 x 31/32 S / (8 x
	 * 45.5e9) = S / 187.9e9, just above the interior node's network,
	 * 2 S / 376e9 = S / 188e9. */
	t = nvls_tree_nodes(4);
	S = 8 * GiB;
	intra = S * 1.125 / (450e9 * 0.82 * 0.85);
	MUST(comm_cost_algo(&t, GP_ALL_REDUCE, GP_ALGO_NVLS, S, 32, &r, &e));
	is_num(r.bw_time, 1.9375 * S / (8 * 45.5e9) + 3 * intra / 1024 +
	       512 * 3.7e-6, 1e-9,
	       "NVLS_TREE on 4 nodes: 64 KiB chunks, 512 extra loops' steps");
	/* The cap came with NCCL 2.19.3 (NVIDIA/nccl 8c6c5951: "if
	 * (info->comm->nNodes >= 4) chunkSize = 65536;"), so at 2.19.3 the
	 * same 512 extra loops; at 2.19.1 the size rules alone: 8 GiB is
	 * past 4 x 16 x 8 x 128 KiB = 64 MiB, 128 KiB chunks, 8 GiB / (16 x 8
	 * x 128 KiB) = 512 loops, the streaming rate's own: no extra step, a
	 * fill of 3 x intra / 512. */
	t.nccl_version = 21903;
	MUST(comm_cost_algo(&t, GP_ALL_REDUCE, GP_ALGO_NVLS, S, 32, &r, &e));
	is_num(r.bw_time, 1.9375 * S / (8 * 45.5e9) + 3 * intra / 1024 +
	       512 * 3.7e-6, 1e-9, "NVLS_TREE on 4 nodes, NCCL 2.19.3: capped");
	t.nccl_version = 21901;
	MUST(comm_cost_algo(&t, GP_ALL_REDUCE, GP_ALGO_NVLS, S, 32, &r, &e));
	is_num(r.bw_time, 1.9375 * S / (8 * 45.5e9) + 3 * intra / 512, 1e-9,
	       "NVLS_TREE on 4 nodes, NCCL 2.19.1: no cap, 128 KiB chunks");

	/* --- a group on part of a node drives only its GPUs' NICs ---
	 * 8-GPU nodes with 4 NICs (50 x 0.9): one GPU per node reaches one
	 * NIC, 45 GB/s (nccl-tests#232: one H100 per node of a 4-NIC node
	 * plateaus near 41 GB/s); 2 ranks all-reduce bus factor 1, so at
	 * 4 GiB the bandwidth term is S / 45e9. */
	t = nvl(8, 2, 450e9, 0.82);
	add_nics(&t, 4, 50e9, 0.9);
	{
		gp_group one = {2, 1, 1, 0}, four = {8, 4, 1, 0};

		S = 4 * GiB;
		MUST(comm_group_cost_algo(&t, GP_ALL_REDUCE, GP_ALGO_RING, S,
					  &one,
					  &r, &e));
		is_num(r.bw_time, S / 45e9, 1e-9, "1 GPU per node: one NIC");
		/* 4 GPUs per node on different PCIe switches: 4 NICs,
		 * 180 GB/s; ring bus factor 2 x 7/8. */
		MUST(comm_group_cost_algo(&t, GP_ALL_REDUCE, GP_ALGO_RING, S,
					  &four,
					  &r, &e));
		is_num(r.bw_time, 1.75 * S / 180e9, 1e-9,
		       "4 GPUs per node: their 4 NICs");
		/* ... and 8 NICs for those 4 GPUs: still 4 (one each). */
		t.nics = 8;
		MUST(comm_group_cost_algo(&t, GP_ALL_REDUCE, GP_ALGO_RING, S,
					  &four,
					  &r, &e));
		is_num(r.bw_time, 1.75 * S / 180e9, 1e-9,
		       "4 GPUs never drive the other 4 GPUs' NICs");
		t.nic_path_bw = -1.0;
		rc = comm_group_cost(&t, GP_ALL_REDUCE, S, &four, &r, &e);
		einval(rc, &e, "negative nic_path_bw is EINVAL");
		t.nic_path_bw = 0.0;
		t.host_mem_bw = -1.0;
		rc = comm_group_cost(&t, GP_ALL_REDUCE, S, &four, &r, &e);
		einval(rc, &e, "negative host_mem_bw is EINVAL");
		t.host_mem_bw = 0.0;
		t.nvls_tree_bw[1] = NAN;
		rc = comm_group_cost(&t, GP_ALL_REDUCE, S, &four, &r, &e);
		einval(rc, &e, "NaN nvls_tree_bw is EINVAL");
	}

	/* --- broadcast across nodes: NCCL ranks its chain by one hop ---
	 * 4 nodes of 8 NVLink GPUs (360 GB/s a GPU: 450e9 x 0.8), 8 NICs
	 * of 50e9 x 0.9 (360 GB/s a node), 32 ranks.  NCCL's tuner
	 * (tuning.cc, sameChannels on an NVLink node) prices a broadcast's
	 * ring at base + one network hop: LL 6.6 + 2.7 = 9.3 us, LL128
	 * 14 + 4.0 = 18.0, Simple 8.4 + 14 = 22.4; its algbw is busBw x
	 * nRanks / nsteps = busBw (nsteps = nRanks): LL min(360 x 0.5,
	 * 20.4) = 20.4 GB/s (llMaxBw, 3+ nodes, Intel), LL128 360 x 0.92 =
	 * 331.2, Simple 360.  LL against LL128: 9.3 + S / 20.4e3 = 18.0 +
	 * S / 331.2e3 (us, S in B) at S = 8.7 / (1/20.4e3 - 1/331.2e3) =
	 * 189 kB, so 128 KiB runs LL and 256 KiB LL128; LL128 against
	 * Simple: 4.4 / (1/331.2e3 - 1/360e3) = 18.2 MB, so 16 MiB runs
	 * LL128 and 32 MiB Simple.  Ranked by the chain's own 31 hops
	 * (LL: 6.6 + 28 x 1.0 (the network post) + 3 x 2.7 = 42.7 us),
	 * 256 KiB stayed on LL.  The time is the chain's: the Simple chain's
	 * latency is at least 8.4 + 28 x 3.4 + 3 x 14 = 145.6 us. */
	t = nvl(8, 4, 450e9, 0.8);
	add_nics(&t, 8, 50e9, 0.9);
	MUST(comm_cost(&t, GP_BROADCAST, 131072.0, 32, &r, &e));
	ok(r.algo == GP_ALGO_RING && r.proto == GP_PROTO_LL,
	   "4 x 8 broadcast 128 KiB: ring LL");
	MUST(comm_cost(&t, GP_BROADCAST, 262144.0, 32, &r, &e));
	ok(r.proto == GP_PROTO_LL128, "4 x 8 broadcast 256 KiB: LL128, "
	   "NCCL's one-hop estimate");
	MUST(comm_cost(&t, GP_BROADCAST, 16.0 * MiB, 32, &r, &e));
	ok(r.proto == GP_PROTO_LL128, "4 x 8 broadcast 16 MiB: LL128");
	MUST(comm_cost(&t, GP_BROADCAST, 32.0 * MiB, 32, &r, &e));
	ok(r.proto == GP_PROTO_SIMPLE, "4 x 8 broadcast 32 MiB: Simple");
	ok(r.latency >= 145.6 * US * (1.0 - 1e-9),
	   "the Simple broadcast's time keeps the chain's 31 hops");
	MUST(comm_cost(&t, GP_REDUCE, 262144.0, 32, &r2, &e));
	ok(r2.proto == GP_PROTO_LL128, "reduce ranks as broadcast does");

	/* trivial cases: one rank, zero bytes */
	MUST(comm_cost(&a100, GP_ALL_REDUCE, GiB, 1, &r, &e));
	ok(r.time == 0.0 && r.busbw == 0.0, "1 gpu: no communication");
	/* A forced ring or tree over one rank is free too, and the NCCL
	 * estimate that ranks its protocols does not divide by the ring's
	 * zero steps (make test SANITIZE=1 stops on a division by zero). */
	{
		static const gp_coll ring_ops[] = {
			GP_ALL_REDUCE, GP_ALL_GATHER, GP_REDUCE_SCATTER,
			GP_BROADCAST, GP_REDUCE
		};
		int k, free_ring = 1;

		for (k = 0; k < 5; k++) {
			MUST(comm_cost_algo(&a100, ring_ops[k], GP_ALGO_RING,
					    GiB, 1, &r, &e));
			free_ring &= r.time == 0.0 && r.algo == GP_ALGO_RING;
		}
		ok(free_ring, "1 gpu, forced ring (5 collectives): 0 s");
		MUST(comm_cost_algo(&a100, GP_ALL_REDUCE, GP_ALGO_TREE, GiB,
				    1, &r, &e));
		ok(r.time == 0.0 && r.algo == GP_ALGO_TREE,
		   "1 gpu, forced tree: 0 s");
	}
	MUST(comm_cost(&a100, GP_ALL_REDUCE, 0.0, 8, &r, &e));
	ok(r.time == 0.0, "0 bytes: no time");

	/* --- errors --- */
	memset(&r, 0x5a, sizeof r);
	r2 = r;
	rc = comm_cost(&a100, GP_ALL_REDUCE, GiB, 0, &r, &e);
	einval(rc, &e, "gpus < 1 is EINVAL");
	ok(memcmp(&r, &r2, sizeof r) == 0, "result untouched on error");
	rc = comm_cost(&a100, GP_ALL_REDUCE, -1.0, 8, &r, &e);
	einval(rc, &e, "negative bytes is EINVAL");
	rc = comm_cost(&a100, GP_ALL_REDUCE, NAN, 8, &r, &e);
	einval(rc, &e, "NaN bytes is EINVAL");
	rc = comm_cost(&a100, GP_ALL_REDUCE, INFINITY, 8, &r, &e);
	einval(rc, &e, "infinite bytes is EINVAL");
	rc = comm_cost(&a100, GP_ALL_REDUCE, GiB, 16, &r, &e);
	einval(rc, &e, "16 gpus on a 1-node topology is EINVAL");
	t = nvl(8, 4, 300e9, 0.8);
	add_nics(&t, 8, 50e9, 0.9);
	/* 12 GPUs on nodes of 8: the launcher fills 8 + 4 (comm.h
	 * gp_group), and the ring prices on the node of 4, whose 4 GPUs
	 * drive 4 of its NICs: net = 4 x 50e9 x 0.9 = 180 GB/s against
	 * NVLink's 300e9 x 0.8 = 240 GB/s.  Ring all-reduce of 1 GiB with
	 * Simple: bw_time = S x 2(n-1)/n / 180e9 = GiB x 22/12 / 180e9
	 * (exact: no channel share across nodes; 1e-9 for rounding). */
	{
		gp_group part = {12, 4, 1, 2};

		rc = comm_cost(&t, GP_ALL_REDUCE, GiB, 12, &r, &e);
		ok(rc == GP_OK && r.nodes == 2 && r.ppn == 4,
		   "12 gpus on nodes of 8: 8 + 4 on 2 nodes, priced on the 4");
		rc = comm_group_cost(&t, GP_ALL_REDUCE, GiB, &part, &r2, &e);
		ok(rc == GP_OK && r2.time == r.time,
		   "comm_cost of 12 is the group {12, 4 a node, 2 nodes}");
		rc = comm_group_cost_algo(&t, GP_ALL_REDUCE, GP_ALGO_RING, GiB,
					  &part, &r2, &e);
		ok(rc == GP_OK && r2.proto == GP_PROTO_SIMPLE, "ring: Simple");
		is_num(r2.bw_time, GiB * 22.0 / 12.0 / 180e9, 1e-9,
		       "8 + 4: the ring at the 4-GPU node's NICs");
		/* The chains inside a node take the fullest node (comm_int.h
		 * gmax = ranks - (nodes - 1) x per_node): the tree's latency
		 * is base + 2((gmax - 1) hop_up + log2(nodes) (hop_net +
		 * fill)) (comm_algo.c price_tree), so 8 + 4 on 2 nodes
		 * (gmax 8) and 4 + 4 (gmax 4) differ by 2 x (8 - 4) hops of
		 * 0.6 us (nvl) plus NCCL's tree step for the protocol; the
		 * rest is the same (2 nodes, 4 GPUs on the poorer one).  8 B:
		 * latency alone.  1e-9 relative: float sums. */
		{
			gp_group even = {8, 4, 1, 2};

			MUST(comm_group_cost_algo(&t, GP_ALL_REDUCE,
						  GP_ALGO_TREE, 8, &part, &r, &e));
			MUST(comm_group_cost_algo(&t, GP_ALL_REDUCE,
						  GP_ALGO_TREE, 8, &even, &r2,
						  &e));
			ok(r.proto == r2.proto, "tree at 8 B: one protocol");
			is_num(r.latency - r2.latency,
			       8.0 * (0.6 * US + t.up_nccl.tree_step[r.proto]),
			       1e-9, "8 + 4: the tree's chain is the node "
			       "of 8's, 4 hops longer up and down than 4 + 4");
		}
		part.nodes = 4;
		einval(comm_group_cost(&t, GP_ALL_REDUCE, GiB, &part, &r2, &e),
		       &e, "4 nodes of at least 4 hold more than 12");
		part.nodes = 1;
		einval(comm_group_cost(&t, GP_ALL_REDUCE, GiB, &part, &r2, &e),
		       &e, "one node holds all of a group on one node");
		part.nodes = -1;
		einval(comm_group_cost(&t, GP_ALL_REDUCE, GiB, &part, &r2, &e),
		       &e, "negative nodes is EINVAL");
	}
	t.up.achievable = NAN;
	rc = comm_cost(&t, GP_ALL_REDUCE, GiB, 8, &r, &e);
	einval(rc, &e, "NaN achievable is EINVAL");
	rc = comm_cost(&a100, (gp_coll)99, GiB, 8, &r, &e);
	einval(rc, &e, "unknown collective is EINVAL");
	t = a100;
	t.ll_max_bw = -1.0;
	rc = comm_cost(&t, GP_ALL_REDUCE, GiB, 8, &r, &e);
	einval(rc, &e, "negative ll_max_bw is EINVAL");
	t = a100;
	t.up_mesh_peers = -1;
	rc = comm_cost(&t, GP_ALL_REDUCE, GiB, 8, &r, &e);
	einval(rc, &e, "negative up_mesh_peers is EINVAL");
	{
		/* A full mesh of 7 peers (Gaudi's boxes): a pair of the
		 * node's 8 GPUs gets 1/7 of the links, so its 1 GiB
		 * all-reduce (bandwidth-bound: the fixed latency is under
		 * 0.5% of the switch's time) takes 7x as long; all 8 use
		 * every link and price as the switch does, to the bit. */
		gp_comm_result sw, mesh;

		t = a100;
		t.up_mesh_peers = 7;
		ok(comm_cost(&a100, GP_ALL_REDUCE, GiB, 2, &sw, &e) == GP_OK &&
		   comm_cost(&t, GP_ALL_REDUCE, GiB, 2, &mesh, &e) == GP_OK,
		   "mesh pair prices");
		is_num(mesh.time / sw.time, 7.0, 0.01,
		       "mesh pair: 1/7 of the links, 7x the time (1%: latency)");
		ok(comm_cost(&a100, GP_ALL_REDUCE, GiB, 8, &sw, &e) == GP_OK &&
		   comm_cost(&t, GP_ALL_REDUCE, GiB, 8, &mesh, &e) == GP_OK &&
		   mesh.time == sw.time, "mesh of all 8: as the switch");
	}
	t = a100;
	t.tree_ch_bw[1] = NAN;
	rc = comm_cost(&t, GP_ALL_REDUCE, GiB, 8, &r, &e);
	einval(rc, &e, "NaN tree_ch_bw is EINVAL");
	t = a100;
	t.tree_ll128_ch_bw[0] = NAN;
	rc = comm_cost(&t, GP_ALL_REDUCE, GiB, 8, &r, &e);
	einval(rc, &e, "NaN tree_ll128_ch_bw is EINVAL");
	t = a100;
	t.p2p_nvl_ch_bw = NAN;
	rc = comm_cost(&t, GP_SEND_RECV, GiB, 8, &r, &e);
	einval(rc, &e, "NaN p2p_nvl_ch_bw is EINVAL");

	/* The cost of a call is measured by `make bench` (bench/sweep_bench:
	 * the collective sweep), not here: a timed test fails on a loaded
	 * machine or under the sanitizers without anything being wrong. */

	return done();
}
