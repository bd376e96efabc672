/*
 * comm.c - alpha-beta cost of collectives on a GPU topology.
 *
 * Every algorithm is priced as
 *
 *     time = base(proto) + sum over steps of hop latency(link, proto)
 *          + bytes * traffic / (bandwidth * protocol efficiency)
 *
 * (Hockney's alpha-beta model; the per-algorithm step counts and traffic
 * are those of Thakur, Rabenseifner & Gropp, IJHPCA 19(1) 2005, Sec. 4,
 * adapted to NCCL's pipelined ring/tree as NCCL's own tuner prices them in
 * src/graph/tuning.cc, ncclTopoTuneModel / ncclTopoGetAlgoTime, NCCL 2.18
 * to 2.30).  The (algorithm, protocol) that runs is the one NCCL's tuner
 * estimate ranks cheapest, as in NCCL's topoGetAlgoInfo (src/enqueue.cc;
 * the estimate is comm_nccl_estimate), and its price is the time.
 *
 * Bandwidths: `up` is the per-GPU scale-up bandwidth per direction, `nic`
 * one NIC's; both are multiplied by their `achievable` fraction (catalog
 * data: what a long SM-driven stream sustains, e.g. 20 of 25 GB/s per
 * NVLink lane with 128-byte payloads, nccl-tests#149).
 *
 * Names, topology checks and the NCCL defaults per link kind are in
 * comm_topo.c; each algorithm's price in comm_algo.c.  This file places
 * the group, prices what applies and keeps what NCCL would run.
 */
#include "comm_int.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

/* Traffic staged through host memory (no GPU peer-to-peer: consumer cards,
 * PCIe slots on different root complexes) runs through NCCL's SHM
 * transport: the sender's SMs write each chunk into a host bounce buffer,
 * the receiver's read it back (NCCL_SHM_LOCALITY defaults to the receiver's
 * side, src/transport/shm.cc).  In a ring every GPU sends and receives at
 * once, and a GPU's staged traffic in both directions together gets about
 * what one direction alone gets: two RTX 5090s without P2P copy 38.2-38.9
 * GB/s one way and 43.0 GB/s both ways together ("Unidirectional
 * P2P=Disabled" vs "Bidirectional P2P=Disabled Bandwidth Matrix",
 * p2pBandwidthLatencyTest on the host GENOA-05, nccl-tests#287), so each
 * direction of a ring runs at the both-ways rate shared by two
 * directions: 43.0 / 2 = 21.5 of 38.5 GB/s a direction, 0.558 of the
 * staged link's one-way rate.  A staged step's latency is the PCIe
 * link's own, as NCCL's tuner prices it: it takes a path that is not
 * NVLink as PCI ("intraHw[a] = graphs[a]->typeIntra == LINK_NVL ?
 * NCCL_HW_NVLINK : NCCL_HW_PCI", ncclTopoTuneModel, NVIDIA/nccl
 * src/graph/tuning.cc), SHM or P2P alike, at hwLat[PCI][RING][LL] = 1.0
 * us a step.  Two RTX 4090s with NCCL_P2P_DISABLE=1 ("via SHM/direct/
 * direct", NCCL 2.26.5) all-reduce 8 B to 2 KiB in 8.37-8.49 us
 * (tinygrad/open-gpu-kernel-modules#45), where NCCL's 6.6 + 2 x 1.0 =
 * 8.6; a write to host memory and a read back priced as two steps
 * (10.6 us) is beyond the measurement itself. */
#define HOST_STAGED_BW (43.0 / 2.0 / 38.5)

/* Staged traffic also passes through host DRAM: every byte a GPU sends is
 * written into a host buffer and read back out by its peer, so each GPU's
 * flow of r B/s costs the host 2r of DRAM traffic, and the flows of all
 * groups on the node (per_node x sharing of them) share what the CPUs'
 * memory streams: r <= host_mem_bw / (2 x flows).  "On PCI systems, the
 * performance you get is usually determined by the bandwidth your CPU and
 * memory can deliver. In your case, with 8 GPUs, that's 8 flows at 28GB/s
 * in both directions" (NCCL maintainer on 8 x RTX 5090, NVIDIA/nccl#1639:
 * 8 x 28 x 2 = 448 GB/s of the two 8480+ sockets' 614 GB/s).  Applied only
 * where the topology knows its host (host_mem_bw > 0). */
static double host_staged_cap(const gp_topo *t, const gp_group *g)
{
	double flows = (double)g->per_node * g->sharing;

	return t->host_mem_bw > 0.0 && g->per_node > 1 ?
	       t->host_mem_bw / (2.0 * flows) : HUGE_VAL;
}

/* The rate one GPU moves network data at through its PCIe link, B/s: the
 * link itself (nic_path_bw) with GPUDirect RDMA, where the NIC reads and
 * writes the GPU's memory.  Without it (nic_gdr_off) NCCL keeps the
 * network buffers in host memory: "GPU Direct RDMA Disabled for GPU %d /
 * HCA %lx (distance %d > %d)" once the GPU-NIC path is farther than
 * NCCL_NET_GDR_LEVEL (PATH_PXB by default, ncclTopoCheckGdr, src/graph/
 * paths.cc, NVIDIA/nccl v2.25.1-1), and then "we will use simple GPU->CPU
 * and CPU->NIC communication" (the NCCL maintainer, NVIDIA/nccl#465): the
 * GPU's SMs write each send chunk into host memory and read each received
 * one back, as the SHM transport does between two GPUs, so the link
 * carries both directions at HOST_STAGED_BW of its one-way rate.  Host
 * DRAM then holds each byte twice a direction (the GPU writes and the NIC
 * reads what it sends, the NIC writes and the GPU reads what it
 * receives): 4 r a GPU, shared by the node's flows, where the topology
 * knows its host (host_mem_bw > 0).  0: no limit beyond the NICs. */
static double nic_path(const gp_topo *t, const gp_group *g)
{
	double flows = (double)g->per_node * g->sharing;

	if (!t->nic_gdr_off || t->nic_path_bw <= 0.0)
		return t->nic_path_bw;
	return t->host_mem_bw > 0.0 ?
	       min2(t->nic_path_bw * HOST_STAGED_BW,
		    t->host_mem_bw / (4.0 * flows)) :
	       t->nic_path_bw * HOST_STAGED_BW;
}

/* Validate inputs and fill the context for the placed group g;
 * GP_OK or GP_EINVAL. */
static int setup(const gp_topo *t, gp_coll op, double bytes,
		 const gp_group *g, comm_ctx *c, gp_error *err)
{
	if (comm_topo_check(t, err))
		return GP_EINVAL;
	if ((int)op < 0 || op >= GP_COLL_COUNT)
		return gp_fail(err, "unknown collective %d", (int)op);
	if (!gp_finite(bytes) || bytes < 0.0)
		return gp_fail(err, "bytes must be a finite number >= 0 "
			       "(got %g)", bytes);
	if (!g)
		return gp_fail(err, "no group");
	if (g->ranks < 1)
		return gp_fail(err, "gpus must be >= 1 (got %d)", g->ranks);
	if (g->per_node < 1 || g->per_node > t->gpus_per_node)
		return gp_fail(err, "a group's GPUs per node must be 1..%d "
			       "(got %d)", t->gpus_per_node, g->per_node);
	if (g->nodes < 0)
		return gp_fail(err, "a group's nodes must be >= 0 (got %d)",
			       g->nodes);
	if (g->nodes > 0) {
		/* The launcher's placement (gp_group): per_node the
		 * fewest ranks on one of the group's nodes. */
		if (g->nodes > t->nodes)
			return gp_fail(err, "a group of %d GPUs on %d nodes "
				       "exceeds the topology's %d nodes",
				       g->ranks, g->nodes, t->nodes);
		if ((double)g->per_node * g->nodes > g->ranks ||
		    (double)g->ranks > (double)g->nodes * t->gpus_per_node ||
		    (g->nodes == 1 && g->per_node != g->ranks))
			return gp_fail(err, "a group of %d GPUs cannot span %d "
				       "nodes of %d with at least %d on each",
				       g->ranks, g->nodes, t->gpus_per_node,
				       g->per_node);
	} else if (g->ranks % g->per_node != 0) {
		return gp_fail(err, "%d gpus do not fill whole nodes of %d",
			       g->ranks, g->per_node);
	}
	/* A group within the topology's GPUs can still need more nodes
	 * than it has: one of 20 ranks over nodes of 8 in equal shares of
	 * 5 a node needs 4 nodes where the job has 3 (the launcher's
	 * placement, layout_fill_of, puts it on 3: nodes > 0).  "20 gpus
	 * exceed the topology (3 nodes x 8 gpus)" said a count below 24
	 * was too many. */
	if (g->nodes == 0 && g->ranks / g->per_node > t->nodes &&
	    (double)g->ranks <= (double)t->nodes * t->gpus_per_node)
		return gp_fail(err, "a group of %d GPUs, placed in equal "
			       "shares of %d a node, needs %d nodes: that "
			       "exceeds the job's %d nodes of %d (give a GPU "
			       "count whose groups fill whole nodes: a "
			       "multiple of %d)", g->ranks, g->per_node,
			       g->ranks / g->per_node, t->nodes,
			       t->gpus_per_node, t->gpus_per_node);
	if (g->nodes == 0 && g->ranks / g->per_node > t->nodes)
		return gp_fail(err, "%d gpus exceed the topology (%d nodes x "
			       "%d gpus)", g->ranks, t->nodes,
			       t->gpus_per_node);
	if (g->sharing < 1 ||
	    (double)g->sharing * g->per_node > t->gpus_per_node)
		return gp_fail(err, "%d groups of %d GPUs cannot share a "
			       "node of %d", g->sharing, g->per_node,
			       t->gpus_per_node);
	if (op == GP_SEND_RECV && g->ranks < 2)
		return gp_fail(err, "send_recv needs >= 2 gpus (got %d)",
			       g->ranks);

	memset(c, 0, sizeof *c);
	c->t = t;
	c->op = op;
	c->bytes = bytes;
	c->n = g->ranks;
	c->g = g->per_node;
	c->nn = g->nodes > 0 ? g->nodes : g->ranks / g->per_node;
	/* Uneven shares: the other nodes hold at least per_node each, so
	 * one holds at most the rest (exact on 2 nodes: 8 + 4). */
	c->gmax = g->ranks - (c->nn - 1) * g->per_node;
	c->kind_up = t->up_kind;
	c->bu = t->up.bw * t->up.achievable;
	/* A full mesh of direct links (up_mesh_peers): a rank of a group
	 * with g ranks on the node sends only to its g - 1 peers, each over
	 * the links to that peer alone; the links to the node's other
	 * cards idle.  Intel's HLS-3 box: "The scale-up ports are used to
	 * connect to seven other accelerators inside a single HLS-3 box in
	 * an All2All manner, essentially using 21/7=3 scale-up ports for
	 * each connection inside the box" (docs.habana.ai, Intel Gaudi
	 * Network Configuration); Gaudi 2's HLS box wires its 21 scale-up
	 * ports of 24 the same way.  A TP 2 pair moves its all-reduce over
	 * 3 of the 21 ports, 1/7 of the rate all eight cards reach
	 * together.  A group of one rank a node has no traffic here. */
	if (t->up_mesh_peers > 0 && g->per_node >= 2 &&
	    g->per_node - 1 < t->up_mesh_peers)
		c->bu *= (double)(g->per_node - 1) / t->up_mesh_peers;
	c->lat_up = t->up.latency;
	if (t->up_crosses_cpu) {
		c->bu = min2(c->bu * HOST_STAGED_BW, host_staged_cap(t, g));
	}
	if (t->nics > 0) {
		/* NICs each GPU drives: those on its own PCIe switch in a
		 * rail-optimised node (nics / gpus_per_node), at least its
		 * nearest one.  NCCL picks a GPU's closest NICs and reaches
		 * another GPU's NIC only through that GPU (PXN), which must
		 * be in the communicator: one H100 per node of a 4-NIC node
		 * plateaus at one NIC's ~41 GB/s (nccl-tests#232). */
		double per_gpu = max2(1.0, (double)t->nics / t->gpus_per_node);

		c->bnic = t->nic.bw * t->nic.achievable;
		/* The group's share of the node's NICs: the groups with
		 * ranks on the node run at once and split them; a group
		 * alone on part of a node drives only its GPUs' NICs (the
		 * GPUs taken on different PCIe switches, as a scheduler
		 * spreading them does); and its GPUs cannot push more than
		 * their PCIe paths carry. */
		c->nic_use = min2((double)t->nics / g->sharing,
				  min2((double)t->nics, g->per_node * per_gpu));
		c->bn = c->nic_use * c->bnic;
		/* A plugin that joins the NICs on a GPU's switch shows NCCL
		 * one device of per_gpu rails (nccl.rails): NCCL's channel
		 * search and its proxy see nic_use / rails NICs. */
		c->rails = t->nic_nccl.rails ? ceil(per_gpu) : 1.0;
		c->path = nic_path(t, g);
		if (c->path > 0 && c->bn > g->per_node * c->path)
			c->bn = g->per_node * c->path;
		if (c->path > 0 && c->bnic > c->path)
			c->bnic = c->path;
		c->lat_net = t->nic.latency;
	}
	return GP_OK;
}

/* Ranks filling nodes in order, the only group on its nodes: *g, the
 * last node partial when gpus_per_node does not divide gpus (the
 * launcher's placement of one group of consecutive ranks, layout.h
 * layout_fill_of: 20 GPUs on nodes of 8 are 8 + 8 + 4, priced on the
 * node of 4), or GP_EINVAL when they exceed t. */
static int filled(const gp_topo *t, int gpus, gp_group *g, gp_error *err)
{
	int G = t->gpus_per_node;

	if (comm_topo_check(t, err))
		return GP_EINVAL;
	if (gpus < 1)
		return gp_fail(err, "gpus must be >= 1 (got %d)", gpus);
	if (gpus > t->gpus_per_node &&
	    (double)gpus > (double)t->gpus_per_node * t->nodes)
		return gp_fail(err, "%d gpus exceed the topology (%d nodes x "
			       "%d gpus)", gpus, t->nodes, t->gpus_per_node);
	g->ranks = gpus;
	g->nodes = (gpus + G - 1) / G;
	g->per_node = gpus - (g->nodes - 1) * G;
	g->sharing = 1;
	return GP_OK;
}

static void finish(const comm_ctx *c, gp_algo a, gp_proto p, double lat,
		   double bwt, gp_comm_result *out)
{
	out->latency = lat;
	out->bw_time = bwt;
	out->time = lat + bwt;
	out->algo = a;
	out->proto = p;
	out->nodes = c->nn;
	out->ppn = c->g;
	out->algbw = out->time > 0.0 ? c->bytes / out->time : 0.0;
	out->busbw = out->algbw * comm_bus_factor(c->op, c->n);
}

/* One rank or nothing to move: no communication at all. */
static int trivial(const comm_ctx *c, gp_comm_result *out)
{
	if (c->n > 1 && c->bytes > 0.0)
		return 0;
	finish(c, c->op == GP_ALL_TO_ALL || c->op == GP_SEND_RECV ?
	       GP_ALGO_P2P : GP_ALGO_RING, GP_PROTO_SIMPLE, 0.0, 0.0, out);
	return 1;
}

/* A quick filter before pricing: 0 when algorithm a cannot apply to this
 * collective on this placement (comm_price() would refuse it for every
 * protocol); 1 when it may.  The reasons are comm_price()'s. */
static int may_apply(const comm_ctx *c, gp_algo a)
{
	int a2a = c->op == GP_ALL_TO_ALL || c->op == GP_SEND_RECV;

	switch (a) {
	case GP_ALGO_RING:
		return !a2a;
	case GP_ALGO_TREE:
		return c->op == GP_ALL_REDUCE;
	case GP_ALGO_NVLS:
		return c->t->up_nvls && c->g >= 2 && !a2a;
	case GP_ALGO_SHARP:
		return c->t->nic_sharp && c->nn >= 2 &&
			c->op == GP_ALL_REDUCE;
	case GP_ALGO_HIER:
		/* Not one of NCCL's algorithms (tuning.cc: Tree, Ring,
		 * CollNet Direct/Chain, NVLS, NVLS Tree, PAT): only forced. */
		return 0;
	case GP_ALGO_P2P:
		/* Where NCCL relays a remote send through the rail GPU it
		 * has no direct path to rank against (comm_pxn_routes). */
		return a2a && !comm_pxn_routes(c);
	case GP_ALGO_PXN:
		return c->op == GP_ALL_TO_ALL && c->nn >= 2 && c->g >= 2;
	default:
		return 1;
	}
}

/* Cheapest protocol for algorithm a; 0 when one applies. */
static int best_proto(const comm_ctx *c, gp_algo a, gp_comm_result *out,
		      double *est_out, const char **why)
{
	int p, found = 0;
	double lat, bwt, best = HUGE_VAL, blat = 0.0, bbwt = 0.0;
	gp_proto bp = GP_PROTO_SIMPLE;

	for (p = 0; p < GP_PROTO_COUNT; p++) {
		double est;

		if (comm_price(c, a, (gp_proto)p, &lat, &bwt, why))
			continue;
		/* A protocol whose time overflows (a rate so small that
		 * bytes / rate is infinite: an ll128_efficiency of 1e-300
		 * on a mesh pair's share of a link) is no candidate, even
		 * where NCCL's tuner, ranking by its own bandwidths, would
		 * pick it. */
		if (!gp_finite(lat) || !gp_finite(bwt))
			continue;
		est = comm_nccl_estimate(c, a, (gp_proto)p, lat, bwt);
		if (est < best) {
			best = est;
			blat = lat;
			bbwt = bwt;
			bp = (gp_proto)p;
			found = 1;
		}
	}
	if (!found)
		return 1;
	finish(c, a, bp, blat, bbwt, out);
	if (est_out)
		*est_out = best;
	return 0;
}

int comm_cost_algo(const gp_topo *t, gp_coll op, gp_algo algo, double bytes,
		   int gpus, gp_comm_result *out, gp_error *err)
{
	gp_group g;

	if (filled(t, gpus, &g, err))
		return GP_EINVAL;
	return comm_group_cost_algo(t, op, algo, bytes, &g, out, err);
}

int comm_group_cost_algo(const gp_topo *t, gp_coll op, gp_algo algo,
			 double bytes, const gp_group *g,
			 gp_comm_result *out, gp_error *err)
{
	comm_ctx c;
	const char *why = "not applicable";
	gp_comm_result r;

	if (setup(t, op, bytes, g, &c, err))
		return GP_EINVAL;
	if ((int)algo < 0 || algo >= GP_ALGO_COUNT)
		return gp_fail(err, "unknown algorithm %d", (int)algo);
	if (best_proto(&c, algo, &r, NULL, &why)) {
		/* Most reasons name their algorithm already ("sharp needs
		 * >= 2 nodes ..."): the prefix said it twice, "sharp: sharp
		 * needs ...".  The word "algo" before the name keeps it the
		 * algorithm's: a bare "nvls needs ..." read as the nvls
		 * setting (the command line's "--nvls needs ..."). */
		const char *name = comm_algo_name(algo);
		size_t n = strlen(name);

		if (strncmp(why, name, n) == 0 && why[n] == ' ')
			return gp_fail(err, "algo %s", why);
		return gp_fail(err, "algo %s: %s", name, why);
	}
	if (trivial(&c, &r))
		r.algo = algo;
	*out = r;
	return GP_OK;
}

int comm_group_p2p_channels(const gp_topo *t, double bytes,
			    const gp_group *g, double *nch, gp_error *err)
{
	comm_ctx c;

	if (setup(t, GP_SEND_RECV, bytes, g, &c, err))
		return GP_EINVAL;
	*nch = comm_p2p_stream_channels(&c);
	return GP_OK;
}

int comm_cost(const gp_topo *t, gp_coll op, double bytes, int gpus,
	      gp_comm_result *out, gp_error *err)
{
	gp_group g;

	if (filled(t, gpus, &g, err))
		return GP_EINVAL;
	return comm_group_cost(t, op, bytes, &g, out, err);
}

/* 1 when (x, y) lies inside region r or on its edge, 0 outside: even-odd
 * ray casting along +x, after an edge test (a region also holds its
 * border: "finds the first one which has the specific (message size,
 * number of ranks) point inside or on its edge", aws-ofi-nccl bacae0ce). */
static int in_region(const gp_nccl *n, const gp_region *r, double x,
		     double y)
{
	const double *rx = n->region_x + r->first,
		     *ry = n->region_y + r->first;
	int i, j, in = 0;

	for (i = 0, j = r->nv - 1; i < r->nv; j = i++) {
		double ex = rx[i] - rx[j], ey = ry[i] - ry[j];
		double cr = ex * (y - ry[j]) - ey * (x - rx[j]);
		double tol = 1e-12 * (fabs(ex) + fabs(ey)) *
			     (fabs(x) + fabs(y) + 1.0);

		if (fabs(cr) <= tol &&
		    x >= fmin(rx[i], rx[j]) && x <= fmax(rx[i], rx[j]) &&
		    y >= fmin(ry[i], ry[j]) && y <= fmax(ry[i], ry[j]))
			return 1;
		if ((ry[i] > y) != (ry[j] > y) &&
		    x < rx[j] + ex * (y - ry[j]) / ey)
			in = !in;
	}
	return in;
}

/* The network plugin's tuner (the NIC fabric's nccl.regions): on more
 * than two nodes of region_ppn ranks each, an all-reduce runs the
 * algorithm and protocol of the first region holding (bytes, ranks) that
 * applies here; 0 with *out set, 1 when none does (NCCL's own tuner
 * picks).  aws-ofi-nccl's region tuner forces its pick by setting that
 * pair's cost to 0 ("table[algorithm][protocol] = 0.0"), skips pairs
 * NCCL marks inapplicable, and leaves 2 nodes or fewer to NCCL ("Skip
 * when two nodes or lesser", nccl_ofi_regions.cpp v1.16.3).  NCCL loads
 * the plugin's bundled tuner from 2.21 ("By bundling the tuner in the net
 * plugin, we cause the tuner to be used by default on NCCL 2.21 or
 * later", src/Makefile.am), so an older release named by the topology
 * picks for itself. */
static int region_pick(const comm_ctx *c, gp_comm_result *out)
{
	const gp_nccl *n = &c->t->nic_nccl;
	int i, v = c->t->nccl_version;

	if (n->nregions == 0 || c->op != GP_ALL_REDUCE || c->nn <= 2 ||
	    c->g != n->region_ppn || (v != 0 && v < 22100))
		return 1;
	for (i = 0; i < n->nregions; i++) {
		const gp_region *r = &n->region[i];
		double lat, bwt;
		const char *why;

		if (!in_region(n, r, c->bytes, (double)c->n))
			continue;
		if (!may_apply(c, (gp_algo)r->algo) ||
		    comm_price(c, (gp_algo)r->algo, (gp_proto)r->proto, &lat,
			       &bwt, &why))
			continue;
		finish(c, (gp_algo)r->algo, (gp_proto)r->proto, lat, bwt, out);
		return 0;
	}
	return 1;
}

int comm_group_cost(const gp_topo *t, gp_coll op, double bytes,
		    const gp_group *g, gp_comm_result *out, gp_error *err)
{
	comm_ctx c;
	int a, found = 0;
	const char *why = NULL;
	double est, best_est = HUGE_VAL;
	gp_comm_result r, best;

	if (setup(t, op, bytes, g, &c, err))
		return GP_EINVAL;
	memset(&best, 0, sizeof best);
	if (!trivial(&c, &best) && region_pick(&c, &best)) {
		for (a = 0; a < GP_ALGO_COUNT; a++) {
			if (!may_apply(&c, (gp_algo)a))
				continue;
			if (best_proto(&c, (gp_algo)a, &r, &est, &why))
				continue;
			if (!found || est < best_est) {
				best = r;
				best_est = est;
				found = 1;
			}
		}
		if (!found)
			return gp_fail(err, "no algorithm applies to %s on "
				       "this topology", comm_coll_name(op));
	}
	*out = best;
	return GP_OK;
}
