/*
 * t_comm.c - collective costs against hand derivations.
 *
 * The topologies here are built in the test (not read from the catalog),
 * with round achievable fractions so every expected number can be worked
 * out on paper.  Constants of the engine used below (comm.c): base latency
 * LL 6.6 / LL128 14 / Simple 8.4 us; per-step extra on NVLink LL 0 /
 * LL128 1.3 / Simple 2.8 us; NVLS efficiency 0.85, NVLS latency 25 us;
 * send/recv efficiency 0.5; host-staged PCIe halves the bandwidth.
 */
#include "comm.h"
#include "tap.h"

#include <math.h>
#include <string.h>
#include <time.h>

#define GiB 1073741824.0
#define MiB 1048576.0
#define US 1e-6

/* One node of `g` GPUs on NVLink: bw per direction, 0.6 us per hop. */
static gp_topo nvl(int g, int nodes, double bw, double ach)
{
	gp_topo t;

	memset(&t, 0, sizeof t);
	t.gpus_per_node = g;
	t.nodes = nodes;
	t.up_kind = GP_LINK_NVLINK;
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

static int einval(int rc, const gp_error *e, const char *name)
{
	return ok(rc == GP_EINVAL && e->msg[0] != '\0', name);
}

int main(void)
{
	gp_topo a100 = nvl(8, 1, 300e9, 0.8), a800 = nvl(8, 1, 200e9, 0.8);
	gp_topo h100 = nvl(8, 1, 450e9, 0.8), t;
	gp_comm_result r, r2;
	gp_error e;
	double S, want, lat, bwt;
	int i, rc, mono;
	clock_t c0;

	plan(50);

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
	comm_cost(&a800, GP_ALL_REDUCE, S, 8, &r, &e);
	is_num(r.busbw, 160e9, 0.01, "a800 busbw ~ 200 GB/s x 0.8");
	ok(r.busbw < 0.67 * 240e9 + 1e9, "a800 busbw is 2/3 of a100's");

	/* --- small message on one node: latency, not zero ---
	 * 8 bytes: LL ring, 6.6 + 14 x 0.6 = 15.0 us; the 8-byte bandwidth
	 * term is 8 x 1.75 / (240e9 x 0.28) = 2e-4 us.  NCCL measures 10-30
	 * us for small all-reduces on 8 GPUs (collectives.md: 8xH20 4 B at
	 * 12.5 us). */
	comm_cost(&a100, GP_ALL_REDUCE, 8, 8, &r, &e);
	is_num(r.time, 15.0 * US, 1e-3, "8-byte all_reduce = 15.0 us (LL)");
	ok(r.proto == GP_PROTO_LL, "8 bytes use LL");
	ok(r.time > 10 * US && r.time < 30 * US, "8-byte all_reduce 10-30 us");

	/* --- NVLS on H100-class NVSwitch, 8 GiB ---
	 * per direction S(1 + 1/8) at 450e9 x 0.8 x 0.85 = 306e9 B/s:
	 * bw term = 8 GiB x 1.125 / 306e9; latency 25 us.
	 * busbw = 1.75 x S / time ~ 1.75 x 306/1.125 = 476 GB/s. */
	h100.up_nvls = 1;
	S = 8 * GiB;
	comm_cost(&h100, GP_ALL_REDUCE, S, 8, &r, &e);
	ok(r.algo == GP_ALGO_NVLS, "h100 8 GiB all_reduce picks nvls");
	want = 1.75 * S / (25 * US + S * 1.125 / 306e9);
	is_num(r.busbw, want, 1e-9, "nvls busbw = 1.75 S/(25us + 1.125 S/bw)");
	ok(r.busbw > 450e9 * 0.8, "nvls busbw beats the ring's link bound");

	/* NVLS on a switch without it is refused with a reason */
	rc = comm_cost_algo(&a100, GP_ALL_REDUCE, GP_ALGO_NVLS, S, 8, &r, &e);
	einval(rc, &e, "nvls refused on a100 topology");

	/* --- 2 nodes, 8 x NDR-400 (50 GB/s per NIC, one NIC per GPU) ---
	 * Hierarchical all-reduce, 1 GiB on 16 GPUs, NIC achievable 0.9:
	 * intra RS + AG: 2 x 7/8 x S / 240e9;
	 * inter: each GPU all-reduces its S/8 shard over its own NIC:
	 *   2(2-1)/2 x (S/8) / (50e9 x 0.9).
	 * latency: 8.4 + 2 x 7 x 3.4 + 2 x 1 x (2.7 + 11.3) = 84.0 us. */
	t = nvl(8, 2, 300e9, 0.8);
	add_nics(&t, 8, 50e9, 0.9);
	S = GiB;
	comm_cost_algo(&t, GP_ALL_REDUCE, GP_ALGO_HIER, S, 16, &r, &e);
	is_num(r.bw_time, 2 * 7.0 / 8 * S / 240e9 + (S / 8) / 45e9, 1e-9,
	       "hierarchical: inter phase bound by 50 GB/s per NIC per GPU");
	is_num(r.latency, 84.0 * US, 1e-9, "hierarchical latency 84 us");
	ok(r.nodes == 2 && r.ppn == 8, "16 gpus = 2 nodes x 8");

	/* Flat ring over 2 nodes with 2 NICs per node: each channel's ring
	 * leaves the node once, so busbw <= 2 x 50 x 0.9 = 90 GB/s;
	 * 4 GiB: latency < 0.2% of time. */
	t = nvl(8, 2, 300e9, 0.8);
	add_nics(&t, 2, 50e9, 0.9);
	S = 4 * GiB;
	comm_cost_algo(&t, GP_ALL_REDUCE, GP_ALGO_RING, S, 16, &r, &e);
	is_num(r.busbw, 90e9, 0.01, "2-node ring busbw = node NIC bw 90 GB/s");
	/* Double binary tree at 2 nodes: each node sends S once (root of
	 * one tree, leaf of the other): algbw = min(240/2, 90) = 90,
	 * busbw = 90 x 1.875 = 168.75 > the NIC bound (nccl-tests#196).
	 * Latency (Simple): 8.4 + 2 x ((8 - 1) x (0.6 + 2.8) + log2(2) x
	 * (2.7 + 11.3)) = 84.0 us against S / 90e9 = 47.72 ms: 0.18%, so
	 * busbw = 1.875 S / (84 us + S / 90e9) = 168.45 GB/s.  Exact
	 * arithmetic: tolerance 1e-9. */
	comm_cost(&t, GP_ALL_REDUCE, S, 16, &r, &e);
	ok(r.algo == GP_ALGO_TREE, "2 nodes, NIC-bound: tree wins");
	is_num(r.busbw, 1.875 * S / (84.0 * US + S / 90e9), 1e-9,
	       "tree busbw 1.875 x 90 GB/s, less 0.18% of latency");

	/* --- all-gather: size is the total buffer ---
	 * ring, 8 GiB on 8 A100: bw term 7/8 x S / 240e9 = 31.32 ms,
	 * latency (Simple) 8.4 + (8 - 1) x (0.6 + 2.8) = 32.2 us, 0.10% of
	 * the time: busbw = 7/8 S / time = 239.75 GB/s, i.e. 240 less the
	 * latency share.  Exact arithmetic: tolerance 1e-9. */
	S = 8 * GiB;
	comm_cost(&a100, GP_ALL_GATHER, S, 8, &r, &e);
	is_num(r.bw_time, 7.0 / 8 * S / 240e9, 1e-9,
	       "all_gather bw term (n-1)/n S / bw");
	is_num(r.busbw, 7.0 / 8 * S / (32.2 * US + 7.0 / 8 * S / 240e9), 1e-9,
	       "all_gather busbw ~ 240 GB/s (239.75: 0.10% latency)");

	/* --- all-to-all across 2 nodes, 8 NICs x 50 x 0.9 ---
	 * 16 ranks: half of each rank's buffer leaves the node through the
	 * GPU's share of the NICs, 8 x 45e9 / 8 = 45e9:
	 * bw term 0.5 x S / 45e9 (NVLink part 7/16 S / 120e9 is smaller). */
	t = nvl(8, 2, 300e9, 0.8);
	add_nics(&t, 8, 50e9, 0.9);
	S = GiB;
	comm_cost(&t, GP_ALL_TO_ALL, S, 16, &r, &e);
	is_num(r.bw_time, 0.5 * S / 45e9, 1e-9, "all_to_all: remote half / NIC");
	ok(r.algo == GP_ALGO_PXN, "all_to_all across nodes uses pxn "
	   "(fewer network messages)");

	/* --- send/recv in a node: half the link (nccl-tests#268) ---
	 * 128 MiB / (240e9 x 0.5) plus 8.4 + 3.4 us. */
	S = 128 * MiB;
	comm_cost(&a100, GP_SEND_RECV, S, 8, &r, &e);
	is_num(r.time, S / 120e9 + 11.8 * US, 1e-9, "send_recv = S/120e9 + "
	       "11.8 us");
	is_num(r.busbw, r.algbw, 1e-12, "send_recv busbw = algbw");

	/* --- PCIe through the host: no LL128, half the bandwidth ---
	 * 8 x PCIe 4.0 (32 GB/s per direction, 0.8 achievable), staged:
	 * busbw -> 32 x 0.8 x 0.5 = 12.8 GB/s for 8 GiB. */
	t = nvl(8, 1, 32e9, 0.8);
	t.up_kind = GP_LINK_PCIE;
	t.up.latency = 1.0 * US;
	t.up_crosses_cpu = 1;
	S = 8 * GiB;
	comm_cost(&t, GP_ALL_REDUCE, S, 8, &r, &e);
	is_num(r.busbw, 12.8e9, 0.01, "host-staged PCIe ring busbw 12.8 GB/s");
	/* 8 bytes: LL ring, 6.6 + 14 x (1.0 x 2) = 34.6 us latency; the
	 * bandwidth term is 8 x 1.75 / (32e9 x 0.8 x 0.5 staged x LL
	 * payload 0.5 x 0.5625 = 0.28125, comm.c) = 14 / 3.6e9 = 0.0039 us
	 * (1.1e-4 of the time).
	 * Exact arithmetic: tolerance 1e-9. */
	comm_cost(&t, GP_ALL_REDUCE, 8, 8, &r, &e);
	is_num(r.time, 34.6 * US + 8 * 1.75 / (32e9 * 0.8 * 0.5 * 0.28125),
	       1e-9, "host-staged 8-byte all_reduce 34.6 us");
	rc = 0;
	for (i = 3; i <= 33; i++) {
		comm_cost(&t, GP_ALL_REDUCE, ldexp(1.0, i), 8, &r, &e);
		rc |= r.proto == GP_PROTO_LL128;
	}
	ok(!rc, "no LL128 over PCIe at any size");

	/* time grows with size, 8 B .. 8 GiB, on every topology above */
	mono = 1;
	for (i = 3; i < 33; i++) {
		comm_cost(&h100, GP_ALL_REDUCE, ldexp(1.0, i), 8, &r, &e);
		comm_cost(&h100, GP_ALL_REDUCE, ldexp(1.0, i + 1), 8, &r2, &e);
		mono &= r2.time > r.time;
	}
	ok(mono, "all_reduce time increases with size");

	/* trivial cases: one rank, zero bytes */
	comm_cost(&a100, GP_ALL_REDUCE, GiB, 1, &r, &e);
	ok(r.time == 0.0 && r.busbw == 0.0, "1 gpu: no communication");
	comm_cost(&a100, GP_ALL_REDUCE, 0.0, 8, &r, &e);
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
	rc = comm_cost(&t, GP_ALL_REDUCE, GiB, 12, &r, &e);
	einval(rc, &e, "12 gpus on nodes of 8 is EINVAL");
	t.up.achievable = NAN;
	rc = comm_cost(&t, GP_ALL_REDUCE, GiB, 8, &r, &e);
	einval(rc, &e, "NaN achievable is EINVAL");
	rc = comm_cost(&a100, (gp_coll)99, GiB, 8, &r, &e);
	einval(rc, &e, "unknown collective is EINVAL");

	/* cost per call: a few hundred flops; budget 1 us on a slow core */
	c0 = clock();
	lat = 0.0;
	for (i = 0; i < 200000; i++) {
		comm_cost(&h100, GP_ALL_REDUCE, 1024.0 * (i + 1), 8, &r, &e);
		lat += r.time;
	}
	bwt = (double)(clock() - c0) / CLOCKS_PER_SEC / 200000;
	ok(bwt < 1e-6 && lat > 0.0, "comm_cost costs < 1 us per call");
	printf("# %.0f ns per comm_cost call\n", bwt * 1e9);

	return done();
}
