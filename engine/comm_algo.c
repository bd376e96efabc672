/*
 * comm_algo.c - the price of one collective algorithm and protocol on a
 * placed group (comm_int.h): NCCL's ring, tree, NVLS, SHARP, the
 * hierarchical and point-to-point schedules, with NCCL's protocol and
 * algorithm constants.  The model (alpha-beta, as NCCL's tuner prices
 * them) is described in comm.c.
 */
#include "comm_int.h"

#include <math.h>

#define US 1e-6

/* ---- protocol constants -------------------------------------------------
 *
 * Base latency per call (kernel launch, work-queue setup, first flag
 * exchange), us.  NCCL 2.30.7 baseLat for Ring/Tree (tuning.cc): LL 6.6,
 * LL128 14, Simple 8.4.  The LL128 figure is larger because its warps
 * synchronise on whole 128-byte lines before the first store.
 */
static const double base_lat_us[GP_PROTO_COUNT] = {6.6, 14.0, 8.4};
/* The tree's (NCCL 2.30.7 baseLat[TREE]): LL 6.8, LL128 14, Simple 8.4. */
static const double tree_base_lat_us[GP_PROTO_COUNT] = {6.8, 14.0, 8.4};

/* A network step of NVLS_TREE: the head GPU's proxy posts the
 * NVLS-reduced shard with the Simple protocol, the remote proxy sees it
 * land and flushes it -- the same proxy send, GPUDirect write and flush
 * as a network step of the tree with Simple, so it is priced as one
 * (tree_hop_net, NCCL's hwLat[NET][TREE][SIMPLE] = 14 us).  The figure
 * NCCL's tuner ranks NVLS_TREE by has changed with its releases
 * (tuning.cc, "NVLSTree" in the NET row): 19 us in 2.18 (which brought
 * NVLS_TREE), 14 from 2.19 to 2.28.7, 20.9 from 2.28.9, whose release
 * note names no change to the transport (a proxy-ordering and a GIN fix);
 * the estimate (comm_nccl_estimate) ranks with the release's figure -- of
 * which the catalog's link latency (2.7) is the wire -- and the time is
 * the tree's step.  Measured: 2 x 8 H20, 8 NDR NICs each, NCCL 2.21.5,
 * NCCL_ALGO=NVLSTree, 46-48 us from 4 B to 512 B (nccl#1244), against
 * 25 + 2 x 14 = 53 us. */
#define NVLS_TREE_WIRE_US 2.7

/* The NVLS_TREE network step NCCL's tuner ranks by, us, for the release
 * the topology names (nccl_version, NCCL_VERSION_CODE; 0: the latest
 * modelled); a release before 2.18 runs no NVLS_TREE (nvls_release). */
static double nvls_tree_rank_us(const comm_ctx *c)
{
	int v = c->t->nccl_version;

	if (v == 0 || v >= 22809)
		return 20.9;
	return v >= 21900 ? 14.0 : 19.0;
}

/* Multi-node ring all-reduce with Simple costs 1.4x its modelled latency:
 * NCCL's own measured correction, "plateau effect of ring" (NCCL 2.30.7
 * ncclTopoGetAlgoTime, SM80 and later; 1.9 before).  Its 2(N-1) network
 * steps each end in a proxy's post, poll and GPUDirect flush, which the
 * per-step constants undercount once every rank's chunks are in flight. */
#define RING_PLATEAU 1.4

/* LL across nodes: every 16-byte LL line is half flags and the LL buffer
 * is small, so the network carries LL in many small proxy-driven steps;
 * NCCL caps the bus bandwidth of LL at 39 GB/s on 2 nodes and 20.4 GB/s
 * on 3 or more, whatever the NICs, on Intel and other hosts, and at 22.5
 * and 19.0 GB/s on AMD hosts (NCCL 2.30.7 llMaxBws: "Intel-N2/Intel-N4",
 * "AMD-N2/AMD-N4"; index1 "for multi-node, we look at CPU type").  A
 * tree's algbw is half its busbw (ncclTopoTuneModel), so its LL runs at
 * half the cap.  Indexed [AMD][3+ nodes]. */
static const double ll_net_max_busbw[2][2] = {
	{39.0e9, 20.4e9}, {22.5e9, 19.0e9}
};

/* The double binary tree falls short of its model at medium sizes
 * ("trees are not perfectly sticking to the model for medium sizes"):
 * with few chunks per channel its up-and-down pipeline through (g-1) +
 * log2 N stages does not fill.  NCCL corrects the tree's bandwidth by a
 * measured factor per power-of-two size, 64 B .. 256 MiB (index
 * log2(bytes / 64)), per protocol (NCCL 2.30.7 treeCorrectionFactor,
 * applied to Tree all-reduce in ncclTopoGetAlgoTime); 1 outside it. */
static const double tree_corr[GP_PROTO_COUNT][23] = {
	{1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6,
	 .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
	{1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6,
	 .8, .9, .9, .9, .9, 1.0, 1.0},
	{.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7,
	 .8, .7, .7, .8, .9, .9},
};

/* Fraction of the achievable link rate each protocol carries as payload,
 * relative to the 128-byte writes that `achievable` was measured with.
 * LL: 16-byte stores holding 8 bytes of data + 8 bytes of flags -> 1/2;
 *     and a 16-byte write costs a 16-byte header flit + 1 data flit (1/2
 *     payload) where a 128-byte write is 8 data flits + 1 header (8/9):
 *     (1/2) / (8/9) = 0.5625 [derived from the NVLink flit format; the
 *     PCIe TLP header gives a similar ratio].  Together 0.28.  NCCL caps
 *     LL for the same reason (llMaxBw, tuning.cc).
 * LL128: 128-byte lines of which 120 bytes are data -> 120/128.
 * Simple: bulk data, flags travel separately -> 1.
 * (NCCL src/include/device.h: LL line = 2 x (4 B data + 4 B flag); LL128
 * line = 16 x 8 B with one flag word.) */
static const double proto_eff[GP_PROTO_COUNT] = {
	0.5 * 0.5625, 120.0 / 128.0, 1.0
};

/* ---- algorithm constants ------------------------------------------------ */

/* One send/recv stream inside a node: NCCL gives it nch channels
 * (p2p_channels), each moving at most P2P_CH_BW, and the stream no more
 * than its share of the ring's per-GPU rate: P2P_WRITE_EFF, or
 * P2P_LINK_EFF where NCCL moves it by reads.  An all-to-all is n - 1
 * such streams at once, one per peer (NCCL runs it as grouped
 * ncclSend/ncclRecv, each peer on its own share of the p2p channels), so
 * two bounds price it too: each peer's stream by its channels, and what
 * the GPU sends in all by its share of its link (a2a_link_eff).  4 x
 * H100 alltoall_perf at 500 MiB, 334.9 GB/s busbw (nccl#2169), is 0.91 of
 * the 370 GB/s that NCCL's maintainer gives as the busbw of "non-allreduce
 * operations" on H100 (nccl-tests#212).
 *  P2P_CH_BW: NCCL's own figure for what one p2p channel carries,
 *   NCCL_P2P_PER_CHANNEL_NET_BW = 14 GB/s (src/graph/paths.cc, the
 *   channels it gives a network peer), taken for any peer.
 *  P2P_LINK_EFF: the plateau of 8 x A100 sendrecv_perf, 192.75 GB/s at
 *   512 MiB (li-plus/playground cuda/nccl.md; 32 channels, so the link
 *   binds), of the A100 ring's 300 x 0.77 = 231 GB/s: 0.83.  The A100
 *   moves p2p data by reads (p2p_read, below): a read part's send/recv
 *   stream and its all-to-all both take this share.
 *  A2A_WRITE_EFF: what an all-to-all inside a node sends in all, as a
 *   share of the ring's rate, where NCCL moves p2p data by writes.  8 x
 *   H100 80GB HBM3 alltoall_perf with NCCL 2.29.2 (xxrjun/nccl-tests-
 *   cluster @455de4f, benchmarks/example-cluster01/nccl-benchmark-
 *   results/single-node/runs/20260128-145017/without-debug/logs/
 *   nccl_N1_G8_cnode3-002.log, out-of-place busbw) plateaus at 348.03
 *   GB/s at 16 GiB (343.25 at 2 GiB, 346.23 at 8 GiB), 348.03 / 369 =
 *   0.943 of the H100 ring's 450 x 0.82: 0.94.  The same run's 4 x H100
 *   (nccl_N1_G4_cnode3-002.log) reaches 356.89, 0.967; 4 x H100 at 500
 *   MiB gives 334.9 (nccl#2169), 8 x H100 340 GB/s (the playbook below).
 *   It is below a write stream's P2P_WRITE_EFF because the n - 1 peers'
 *   streams share the GPU's link and its p2p channels, and above a read
 *   part's P2P_LINK_EFF because a write stream posts its data into the
 *   receiver's buffer where a read stream waits on the remote load
 *   (p2p_read: "p2p write is faster than read", nccl#512).  No A100
 *   alltoall_perf plateau is published beside a sendrecv one, so a read
 *   part keeps its sendrecv plateau.  The 8-rank figure, not the
 *   4-rank one: 8 ranks a node is how the validated all-to-all and the
 *   MoE expert dispatch run.  The log reaches the plateau only once
 *   NCCL doubles each peer's channels (a2a_link_eff); below that it
 *   runs at A100's 0.83.  Over PCIe NCCL writes too and takes the same
 *   rule; no PCIe all-to-all plateau is published.
 *  P2P_WRITE_EFF: a send/recv stream that NCCL moves by writes reaches
 *   the link's achievable rate, as the ring does.  NCCL writes into the
 *   receiver's buffer on every part but compute capability 8.0, where
 *   it reads from the sender's ("Enable P2P Read for Ampere/NVLink
 *   only", src/graph/paths.cc ncclTopoCheckP2p; the topology's
 *   p2p_read); a read stream gets less of the same link ("p2p write is
 *   faster than read, and also with better bandwidth", p2pBandwidth-
 *   LatencyTest on A100, nccl#512).  2 x H100 sendrecv_perf plateaus at
 *   364.93 GB/s (Hugging Face, The Smol Training Playbook, "Through
 *   NVLink", huggingfacetb-smol-training-playbook.hf.space;
 *   sendrecv_perf -b 8 -e 8G -f 2 -g 1 on a p5.48xlarge), 0.99
 *   of the H100 ring's 450 x 0.82 = 369 GB/s, and NCCL's maintainer
 *   gives 370 GB/s as H100's busbw for "non-allreduce operations"
 *   (nccl-tests#212): 1.
 *  Channels (NCCL 2.30 enqueue.cc, the p2p scheduler, and paths.cc): a
 *   node's pool of P2P_POOL channels ("32 p2p channels, 32 p2p channels
 *   per peer" on 8 x H100, nccl#1259's log), split so that every peer of
 *   the n ranks gets one share, nmin = the power of two <= pool / n; a
 *   send of S bytes takes min(nmin, S / minPart) channels, doubled while
 *   a channel's part exceeds maxPart and channels remain; on NVLink the
 *   p2p chunk is 512 KiB (P2P_NVL_CHUNKSIZE, init.cc), minPart = chunk / 8,
 *   maxPart = chunk x 32.  A PCIe peer gets 2 channels (paths.cc
 *   ncclTopoGetNchannels) and 128 KiB chunks. */
#define P2P_CH_BW 14e9
#define P2P_LINK_EFF 0.83
#define P2P_WRITE_EFF 1.0
#define A2A_WRITE_EFF 0.94
#define P2P_POOL GP_NCCL_P2P_CHANNELS

/* Cost of posting one network message from the proxy thread, us: NCCL
 * getNetOverhead, "1.0" on Intel, "2.0" on AMD x86 and 1.0 elsewhere
 * (Arm), 3x for Simple.  A ring that crosses nodes pays at least that on
 * every step, those inside a node too ("inter-node rings still have to
 * launch nsteps * net overhead", ncclTopoTuneModel): the steps run in
 * lock-step with the network ones. */
static double net_post(const comm_ctx *c)
{
	return (c->t->host_amd ? 2.0 : 1.0) * US;
}

/* ---- the proxy thread's posts across nodes -------------------------------
 *
 * A ring that crosses nodes runs on more channels than a node has NICs,
 * and one proxy thread per GPU drives the network for all channels that
 * leave the node through that GPU's NIC: each step it posts one send per
 * channel, one after another ("for (int s=0; s<args->nsubs; s++)", a sub
 * per channel, net.cc sendProxyProgress, NCCL 2.20-2.30).  NCCL prices a
 * ring step at no less than one post ("Inter-node rings still have to
 * launch nsteps * net overhead", tuning.cc); with k channels on a proxy the
 * step waits for k of them.  Its own tuner does not count k, so the
 * estimate it ranks algorithms by leaves them out (comm_nccl_estimate).
 *
 * The channels (NCCL's search and connect code, 2.20-2.30): the ring graph
 * finds one channel per NIC at the NIC's speed, the fastest of its
 * speedArrayInter not above the line rate (400 Gb/s: 48 GB/s, 200 Gb/s:
 * 24); ncclTopoDupChannels doubles them at half the speed when the speed
 * is >= 25 GB/s unless it is < 50 with more than 4 channels (the Hopper
 * rule; Ampere doubles those too, Blackwell's faster speed array is not
 * modelled); ncclTopoPostset doubles them again ("nChannels*2", at most 32)
 * and, on Hopper across nodes (here on any GPU), once more while a
 * channel still runs above 45 GB/s and there are fewer than 16 ("4 compute
 * channels per search channel").  4 x 400 Gb/s on H100: 4 -> 8 -> 16,
 * as logged on two such nodes (16 trees, nccl#1357); 8 x 400 Gb/s: 8 ->
 * 16.  A small message
 * runs on fewer (channels_in_use).
 *
 * The NICs are those NCCL sees.  aws-ofi-nccl's RDMA protocol (P5's,
 * platform-aws.cpp v1.16.3: "p5/p5e" .default_protocol = "RDMA") groups
 * the NICs by "the locality of NICs and GPUs in the hardware topology"
 * (nccl_ofi_topo.cpp) into one device per GPU and reports its speed x
 * the group ("Scale speed by the total number of rails", nccl_ofi_rdma.cpp
 * get_properties): a P5's 32 x 100 Gb/s EFA are 8 devices of 400 Gb/s to
 * NCCL, 8 -> 16 channels, two on each GPU's proxy (nccl.rails;
 * comm_ctx.rails NICs a device). */
static const double net_speeds[] = {
	48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0,
	3.0, 2.4, 1.2, 0.24, 0.12
};

/* The speed NCCL's search gives one network device, GB/s: the fastest of
 * its speedArrayInter not above the device's line rate (a device of
 * `rails` NICs where the plugin joins them). */
static double net_search_speed(const comm_ctx *c)
{
	double line = max2(1.0, c->rails) * c->t->nic.bw / 1e9;
	size_t i;

	for (i = 0; i < sizeof net_speeds / sizeof net_speeds[0]; i++)
		if (net_speeds[i] <= line)
			return net_speeds[i];
	return 0.0;
}

/* The search's channels fit the GPU's NVLink and the search's cap.  Each
 * ring or tree channel it keeps takes its speed off every GPU's links
 * ("SUB_ROUND(link->bw, fwBw)", search.cc followPath), so a node of more
 * NICs than its NVLink feeds at the NICs' speed gets fewer channels than
 * NICs.  The search then tries the slower speeds of its array while the
 * next is above .49 of the first ("(speedArray[speedIndex+1]/graph->
 * bwInter > .49)", ncclTopoCompute) and keeps a solution only where
 * channels x speed grows ("graph->nChannels*graph->bwIntra >
 * refGraph->nChannels*refGraph->bwIntra", ncclTopoCompareGraphs); it
 * finds no more than the ring graph's "maxChannels = MAXCHANNELS/2" (32;
 * init.cc; the tree's is the ring's count).  NVIDIA/nccl 2.26.2, the same
 * through 2.30.  The GPU's NVLink is its achievable rate (bu; NCCL's own
 * topology has 18 x 40.0 = 720 GB/s for NVLink 5 where bu is 684).  An
 * NVL72 rack whose 72 GPUs each have a 400 Gb/s NIC (NCCL sees the rack
 * as one node, MNNVL): 14 channels at 48 GB/s, 15 at 45, 16 at 42, 17 at
 * 40, 22 at 30, 28 at 24 -> 17 at 40, not 72 at 48; 8 x H100 with 8 NICs
 * (369 GB/s): 7 at 48, 8 at 45 -> 8, the NICs' count as before.
 * g: the NICs' channels; *v: their speed, GB/s, lowered where the fit
 * takes a slower one. */
static double net_graph_fit(const comm_ctx *c, double g, double *v)
{
	double first = *v, best = 0.0, bv = first, s, n;
	size_t i;

	g = min2(g, 32.0);
	if (c->gmax < 2 || c->bu <= 0.0 || g * first * 1e9 <= c->bu)
		return g;
	for (i = 0; i < sizeof net_speeds / sizeof net_speeds[0]; i++) {
		s = net_speeds[i];
		if (s > first)
			continue;
		if (s < first && s / first <= 0.49)
			break;
		n = min2(g, floor(c->bu / (s * 1e9)));
		if (n * s > best * bv) {
			best = n;
			bv = s;
		}
	}
	if (best < 1.0)
		return g;
	*v = bv;
	return best;
}

/* The channels the search finds across nodes, before ncclTopoPostset
 * doubles them: one per NIC at its speed, duplicated at half the speed
 * by ncclTopoDupChannels (above).  NCCL's tuner counts these
 * (graphs[a]->nChannels); *speed gets their GB/s. */
static double net_graph_channels(const comm_ctx *c, double *speed)
{
	double r = max2(1.0, c->rails);
	double v = net_search_speed(c);
	double g = net_graph_fit(c, max2(1.0, c->nic_use / r), &v);

	if (v >= 25.0 && !(v < 50.0 && g > 4.0)) {
		g *= 2.0;
		v /= 2.0;
	}
	if (speed)
		*speed = v;
	return g;
}

static double net_ring_channels(const comm_ctx *c)
{
	double v, g = net_graph_channels(c, &v);
	double nch;

	nch = min2(32.0, 2.0 * g);
	if (v > 45.0 && nch < 16.0)
		nch = min2(32.0, 2.0 * nch);
	return nch;
}

static double channels_in_use(const comm_ctx *c, gp_algo a, gp_proto p,
			      double nch);

/* NCCL's cost of one network post for protocol p (net_post, 3x Simple). */
static double post(const comm_ctx *c, gp_proto p)
{
	return net_post(c) * (p == GP_PROTO_SIMPLE ? 3 : 1);
}

/* The posts a ring step waits for on one proxy thread: k = the channels
 * of the ring in use at this size over the NICs the group drives, as NCCL
 * sees them (one device of `rails` NICs each); each post after the first
 * overlaps the device moving the channel before it (a step's share
 * S / (n nc) at the device's rate), so a post shows only by what
 * it outlasts that transfer.  A large message hides them all; 1 MiB on 40
 * ranks (1.6 KB a channel a step, 0.04 us) hides 4% of them. */
static double proxy_subs(const comm_ctx *c, gp_proto p)
{
	double nc = channels_in_use(c, GP_ALGO_RING, p, net_ring_channels(c));
	double r = max2(1.0, c->rails);
	double k = ceil(nc / max2(1.0, c->nic_use / r));
	double x = c->bytes / (c->n * nc) / (r * c->bnic * proto_eff[p]);

	return 1.0 + (k - 1.0) * max2(0.0, 1.0 - x / post(c, p));
}

/* NCCL's LL ceiling across the nodes of this placement (nn >= 2). */
static double ll_net(const comm_ctx *c)
{
	return ll_net_max_busbw[c->t->host_amd != 0][c->nn > 2];
}

static double hop_up(const comm_ctx *c, gp_proto p)
{
	return c->lat_up + c->t->up_nccl.ring_step[p];
}

/* A network step; with one rank per node the exposed (tree) value. */
static double hop_net(const comm_ctx *c, gp_proto p)
{
	return c->lat_net + (c->g == 1 ? c->t->nic_nccl.tree_step[p] :
			     c->t->nic_nccl.ring_step[p]);
}

static double tree_hop_up(const comm_ctx *c, gp_proto p)
{
	return c->lat_up + c->t->up_nccl.tree_step[p];
}

static double tree_hop_net(const comm_ctx *c, gp_proto p)
{
	return c->lat_net + c->t->nic_nccl.tree_step[p];
}

/* The per-call base latency of protocol p: NCCL's (base_lat_us), or the
 * topology's base_lat where its collective library has its own: RCCL's
 * "baseLat ... { 12.0, 12.0, 17.0 }, { 12.0, 12.0, 17.0 },   // Tree,
 * Ring" (ROCm/rccl src/graph/tuning.cc, ROCm 6.2.0 to rocm-systems
 * projects/rccl today), the same for the ring and the tree. */
static double lib_base(const comm_ctx *c, gp_proto p, const double *nccl_us)
{
	return c->t->base_lat[p] > 0.0 ? c->t->base_lat[p] : nccl_us[p] * US;
}

static double base(const comm_ctx *c, gp_proto p)
{
	return lib_base(c, p, base_lat_us);
}

/* The tree's: NCCL's tree row, or the same override. */
static double tree_base(const comm_ctx *c, gp_proto p)
{
	return lib_base(c, p, tree_base_lat_us);
}

/* NCCL's tree correction for `bytes` with protocol p (see tree_corr). */
static double tree_factor(gp_proto p, double bytes)
{
	int i = 0;
	double x = bytes / 64.0;

	if (x < 1.0)
		return 1.0;
	while (x >= 2.0 && i < 64) {
		x /= 2.0;
		i++;
	}
	return i < 23 ? tree_corr[p][i] : 1.0;
}

/* floor(log2(x)) for x >= 1: depth of a binary tree over x nodes. */
static int ilog2(int x)
{
	int r = 0;

	while (x > 1) {
		x >>= 1;
		r++;
	}
	return r;
}

static double net_peer_channels(const comm_ctx *c);
static double net_comm_p2p_channels(const comm_ctx *c, double per_gpu);
static double p2p_share_nodes(const comm_ctx *c);

/* A peer's share of NCCL's p2p channels among n ranks in a node, before
 * a large send doubles it (see P2P_POOL). */
static double p2p_share(const comm_ctx *c)
{
	double nmin = c->kind_up != GP_LINK_NVLINK ? 2 : P2P_POOL;

	if (c->nn > 1)
		return p2p_share_nodes(c);
	while (nmin * c->n > P2P_POOL && nmin > 1)
		nmin /= 2;
	return nmin;
}

/* NCCL's channels for one send of S bytes among n ranks in a node (see
 * P2P_POOL).  A communicator spanning nodes (comm->nNodes > 1) takes other
 * part bounds (v2.29.7-1 src/enqueue.cc addP2pToPlan: "ssize_t
 * minPartSize = comm->nNodes > 1 ? stepSize[dir] / 2 : stepSize[dir] /
 * 8; ssize_t maxPartSize = comm->nNodes > 1 ? stepSize[dir] :
 * stepSize[dir] * 32;", the same "nNodes > 1 ? stepSize : stepSize*32"
 * in v2.21.5-1), stepSize being its p2p chunk, 128 KiB ("if
 * (comm->nNodes > 1) { ... comm->p2pChunkSize = ratio *
 * ncclParamP2pNetChunkSize();", init.cc, P2P_NET_CHUNKSIZE 1 << 17; the
 * ratio 2 it takes on Arm hosts of compute capability 10, "GBx
 * platforms", is not modelled: it moves sizes below a MiB a peer).  Its
 * peers double up to nChannelsMax = comm->p2pnChannelsPerPeer, the fewest
 * any peer gets (paths.cc ncclTopoComputeP2pChannelsPerPeer: the minimum
 * over the ranks), a network peer's (net_peer_channels).  So such a peer
 * reaches its most channels at nChannelsMax / 2 chunks, not at its share
 * x 16 MiB as in one node: no channel step at 64 MiB a peer.  An NVLink
 * domain of several hosts (GB200 NVL72) is one node to NCCL: nNodes
 * counts the ring graph's first ranks ("int firstRank =
 * allGather3Data[r].topoRanks.ringRecv[0]; ... comm->nNodes++", init.cc
 * initTransportsRank), one per MNNVL clique, so a group inside it keeps
 * the one-node bounds (c->nn == 1 here). */
static double p2p_channels(const comm_ctx *c, double S)
{
	int pci = c->kind_up != GP_LINK_NVLINK;
	double chunk = pci ? 131072.0 : 524288.0, nmax = pci ? 2 : P2P_POOL;
	double minp = chunk / 8.0, maxp = chunk * 32.0, nch;

	if (c->nn > 1) {
		chunk = 131072.0;
		minp = chunk / 2.0;
		maxp = chunk;
		nmax = net_peer_channels(c);
	}
	nch = min2(p2p_share(c), max2(1.0, ceil(S / minp)));
	while (S / nch > maxp && nch <= nmax / 2)
		nch *= 2;
	return nch;
}

/* A peer's starting channels in a communicator spanning nodes:
 * nChannelsMin, from nChannelsMax halved until all n ranks fit the
 * communicator's p2p channels ("while (nChannelsMin * nRanks >
 * comm->p2pnChannels && nChannelsMin > 1) nChannelsMin /= 2",
 * enqueue.cc scheduleP2pTasksToPlan), those being the pool before 2.29
 * (as net_peer_channels takes them) and net_comm_p2p_channels from. */
static double p2p_share_nodes(const comm_ctx *c)
{
	double per_gpu = max2(1.0, (double)c->t->nics / c->t->gpus_per_node);
	double pool = c->t->nccl_version >= 22900 ?
		      net_comm_p2p_channels(c, per_gpu) : P2P_POOL;
	double nmin = net_peer_channels(c);

	while (nmin * c->n > pool && nmin > 1.0)
		nmin /= 2.0;
	return nmin;
}

/* ---- channels at small sizes -------------------------------------------
 *
 * NCCL splits a ring or tree collective over its channels but gives a small
 * one fewer: "while (nBytes < nc * nt * threadThreshold) { if (nc >= 2)
 * nc--; }" (NCCL 2.30.7 enqueue.cc topoGetAlgoInfo, "Ring/Tree channel
 * tuning"), after the tuner has picked the algorithm on all channels.  nt:
 * the protocol's threads per channel (LL 512, LL128 640, Simple 512;
 * device.h NCCL_*_MAX_NTHREADS); threadThreshold: its bytes per thread
 * (comm.h: LL 8, LL128 8, Simple 64, and the ring's LL times the ranks --
 * logged as "threadThresholds 8/8/64 | 64/8/64" on 8 ranks, nccl#892).
 * Each channel is one thread block moving its share at NCCL's own rate per
 * channel (the tuner's busBw over its channels: an LL channel half of its
 * link share, where all channels together reach the link's LL rate), so a
 * small message runs at nc channels' worth, at most the whole link's.  8 x
 * H100 through NCCL (Triton-distributed#57) shows it: 32 KiB .. 512 KiB all
 * take 22.7 .. 25.2 us, each size on as many 32 KiB channels.  The link's
 * channel count is catalog data (a fabric's nccl.channels); unknown, or a
 * placement across nodes: all channels. */
static const double chan_threads[GP_PROTO_COUNT] = {512.0, 640.0, 512.0};
static const double chan_bytes[GP_PROTO_COUNT] = {8.0, 8.0, 64.0};

/* The channels, of nch, a ring or tree of c->bytes runs on. */
static double channels_in_use(const comm_ctx *c, gp_algo a, gp_proto p,
			      double nch)
{
	double per = chan_threads[p] * chan_bytes[p] *
		     (a == GP_ALGO_RING && p == GP_PROTO_LL ? c->n : 1);

	return min2(nch, max2(1.0, floor(c->bytes / per)));
}

/* The share nc / channels of the link's channels a ring or tree of
 * c->bytes gets (1: all). */
static double channel_share(const comm_ctx *c, gp_algo a, gp_proto p)
{
	double nch = c->t->up_nccl.channels;

	if (nch <= 0.0 || c->g < 2 || c->nn > 1)
		return 1.0;
	return channels_in_use(c, a, p, nch) / nch;
}

static double nccl_algbw(const comm_ctx *c, gp_algo a, gp_proto p,
			 double share, int release);

/* The bandwidth term bwt of a ring or tree on the channels a message of
 * its size gets: no less than at nc channels' own rate. */
static double on_channels(const comm_ctx *c, gp_algo a, gp_proto p,
			  double bwt)
{
	double share = channel_share(c, a, p), alg;

	if (share >= 1.0)
		return bwt;
	alg = nccl_algbw(c, a, p, share, 0);
	return alg > 0.0 ? max2(bwt, c->bytes / alg) : bwt;
}

/* The per-GPU intra-node rate at protocol p; infinite with no intra
 * traffic (one GPU on every node).  LL128's share is the link's own
 * (nccl.ll128_efficiency, 120/128 unless a fabric measures less). */
static double up_rate(const comm_ctx *c, gp_proto p)
{
	double eff = p == GP_PROTO_LL128 ? c->t->up_nccl.ll128_eff :
		     proto_eff[p];

	return c->gmax > 1 ? c->bu * eff : HUGE_VAL;
}

/* The node's network rate at protocol p; infinite with no inter-node
 * traffic (one node). */
static double net_rate(const comm_ctx *c, gp_proto p)
{
	return c->nn > 1 ? c->bn * proto_eff[p] : HUGE_VAL;
}

/* A ring step inside a node: the NVLink/PCIe hop, across nodes no less
 * than `subs` network posts (see proxy_subs). */
static double ring_intra_step(const comm_ctx *c, gp_proto p, double subs)
{
	double h = hop_up(c, p);

	return c->nn > 1 ? max2(h, subs * post(c, p)) : h;
}

/* The flat pipelined ring's steps, as NCCL builds it (nccl#530): *steps
 * in all and *inter of them across nodes.  Each channel's ring enters and
 * leaves every node once, so the node's NICs carry one ring-width of
 * traffic.  All-reduce 2(n-1) (reduce-scatter then all-gather);
 * all-gather/reduce-scatter n-1; broadcast/reduce n-1 hops to fill the
 * pipeline (Thakur et al. 2005, ring formulas).
 *
 * The steps across nodes are those of the longest chain: a rank's step s
 * forwards what its predecessor sent at step s-1, so the last step waits
 * for a chain of consecutive hops around the ring -- 2(n-1) for all-reduce,
 * n-1 for all-gather/reduce-scatter -- and the collective for the slowest
 * such chain.  The ring of n ranks crosses the N node boundaries once a
 * turn; 2(n-1) consecutive hops are two turns less two hops, and when a
 * node holds 3 or more ranks some chain leaves out two hops inside a node:
 * 2N network steps (2N-1 with 2 ranks a node, whose every other hop
 * crosses; 2(N-1) with one).  n-1 hops are a turn less one: N (N-1 with
 * one rank a node).  A broadcast's chain runs from the root once along
 * the ring: N-1.  NCCL 2.12.7 to 2.22.3 priced the all-reduce ring at these
 * 2N ("nNodes > 1 ? 2*nNodes : 0", tuning.cc nInterSteps); 2.23.4 went back
 * to 2(N-1), its release note naming no change to the ring kernel, so the
 * estimate NCCL ranks algorithms by counts as the release did
 * (ring_steps_nccl) while the time counts the chain.  With uneven shares
 * the node that leaves hops out is the fullest (gmax). */
static void ring_steps(const comm_ctx *c, int *steps, int *inter)
{
	int ar = c->op == GP_ALL_REDUCE, N = c->nn;
	int bc = c->op == GP_BROADCAST || c->op == GP_REDUCE;

	*steps = ar ? 2 * (c->n - 1) : c->n - 1;
	if (N < 2)
		*inter = 0;
	else if (bc || c->gmax == 1)
		*inter = ar ? 2 * (N - 1) : N - 1;
	else if (ar)
		*inter = c->gmax == 2 ? 2 * N - 1 : 2 * N;
	else
		*inter = N;
}

/* The network steps NCCL's tuner counts in a ring (NCCL 2.30.7
 * ncclTopoTuneModel: "coll == ncclFuncAllReduce ? 2 * (nNodes - 1) :
 * nNodes - 1"), an all-reduce's 2N in the releases that counted them
 * (2.12.7 to 2.22.3: "nNodes > 1 ? 2*nNodes : 0") where the topology
 * names one (nccl_version). */
static int ring_steps_nccl(const comm_ctx *c)
{
	int v = c->t->nccl_version;

	if (c->op != GP_ALL_REDUCE)
		return c->nn - 1;
	return v >= 21207 && v < 22304 ? 2 * c->nn : 2 * (c->nn - 1);
}

/* What the ring's steps inside the nodes wait for the proxy beyond the
 * single post NCCL prices them at, s (0 on one node). */
static double ring_proxy_wait(const comm_ctx *c, gp_proto p)
{
	int steps, inter;

	if (c->nn < 2)
		return 0.0;
	ring_steps(c, &steps, &inter);
	return (steps - inter) * (ring_intra_step(c, p, proxy_subs(c, p)) -
				  ring_intra_step(c, p, 1.0));
}

/* What the ring's chain across nodes costs beyond the network steps NCCL's
 * tuner counts (ring_steps), s: those steps priced at the network's hop
 * rather than the node's (0 on one node). */
static double ring_net_extra(const comm_ctx *c, gp_proto p)
{
	int steps, inter;

	if (c->nn < 2)
		return 0.0;
	ring_steps(c, &steps, &inter);
	return (inter - ring_steps_nccl(c)) *
	       (hop_net(c, p) - ring_intra_step(c, p, 1.0));
}

/* ---- NCCL's window on a network connection -----------------------------
 *
 * Each network connection has NCCL_STEPS = 8 buffer slots (device.h), and
 * a slot is used again only once its last message has gone round: the
 * sender's proxy keeps at most 8 steps in flight ("sub->transmitted <
 * sub->done + NCCL_STEPS", net.cc sendProxyProgress, NCCL 2.27.7), the
 * receiver's posts at most maxDepth = min(NCCL_STEPS, NCCL_SHARED_STEPS /
 * nsubs) receives ahead (8 with the 2 channels a P5 proxy drives,
 * recvProxyProgress) and frees a slot only after the network has
 * completed its receive and the GPU has consumed it.  Its next receive on
 * that slot is what lets the sender write: the network plugin sends the
 * sender a control message when NCCL posts a receive, and a message is
 * written only once that has arrived (NCCL's IB transport writes the
 * receive's FIFO entry to the sender, ncclIbIrecv -> ncclIbPostFifo, and
 * ncclIbIsend "Wait[s] for the receiver to have posted the corresponding
 * receive", net_ib.cc 2.27.7; aws-ofi-nccl's RDMA protocol, P5's:
 * "Allocate a request so that we are able to send RDMA write as soon as
 * we receive the RDMA control message", nccl_ofi_rdma.cpp send(), v1.16.3,
 * and even an eager send completes only with "one extra completion for the
 * ctrl msg recv").  So a slot turns over once per round trip: the data
 * crossing (the network step, hop_net, and the step's bytes, its share of
 * the transfer), the control message crossing back
 * (the network's latency), each seen by the proxy only once its completion
 * has come up (the fabric's nccl.completion), and the posts that start
 * them (the receiver's receive, the sender's send; post()).  Each side's
 * proxy posts for every channel it drives in turn before it comes back to
 * a slot: the receiver's "for (int s=0; s<args->nsubs; s+=args->subs[s].
 * groupSize)" posts one irecv a group of subs, a group being the subs of
 * one network connection ("group them by same recvComm"), which a ring's
 * channels never share (even shared comms are kept a channel,
 * "comms->recvComm[resources->channelId]"), and the sender's "for
 * (int s=0; s<args->nsubs; s++)" one isend a sub (src/transport/net.cc
 * recvProxyProgress, sendProxyProgress, NVIDIA/nccl v2.27.7-1), so a
 * slot's round trip holds the proxy's k posts on each side, not one: the
 * k channels of proxy_subs, each post after the first less what it
 * overlaps of the device moving the channel before it, as the ring's
 * posts bound prices them (2 channels on a P5 device at 32 MiB and 256
 * ranks: 2 x 1.90 posts of 2 us a round trip, not 2 x 1).  An LL
 * or LL128 ring step takes one slot a connection, so no step runs faster
 * than an eighth of that round trip; a Simple ring step takes four
 * (ring_inflight), so no step runs faster than half of it.  On
 * InfiniBand (2.7 us) an eighth is 1.1-1.4 us, about what the proxy's own
 * posts (1-2 us) already cost a step; over EFA's 20 us it is 5.7-6.4 us,
 * more than a small step costs, and half of Simple's 69 us round trip on
 * a P5 is 35 us.  A step the engine already prices at more -- its posts,
 * or its transfer when the message is large -- hides the wait.  NCCL's
 * tuner has no such term (tuning.cc prices a step by hwLat and the bytes
 * by busBw), so the estimate it ranks by leaves the wait out
 * (comm_nccl_estimate). */
#define NET_SLOTS 8.0

/* The ring steps a connection holds in flight.  A ring step is one chunk,
 * and NCCL's Simple ring cuts a chunk into SlicePerChunk = 2 slices of
 * StepPerSlice = 2 slots each: ALLREDUCE_CHUNKSTEPS = ALLGATHER_CHUNKSTEPS =
 * REDUCESCATTER_CHUNKSTEPS = NCCL_STEPS / 2 and their SLICESTEPS
 * NCCL_STEPS / 4 (src/include/collectives.h), so a chunk takes 4 of the 8
 * slots; the GPU writes a slice only once "connStepCache + NCCL_STEPS >=
 * step + StepPerSlice" (src/device/prims_simple.h) and the proxy keeps
 * "sub->transmitted < sub->done + NCCL_STEPS", advancing sliceSteps a
 * message (src/transport/net.cc; NVIDIA/nccl master, as in 2.27.7).  A
 * connection thus holds two Simple ring steps at once.  LL and LL128 run
 * one slot a step ("chunkSteps = ... PROTO_SIMPLE && ALGO_RING ?
 * info->chunkSteps : 1", enqueue.cc calcCollChunking), as do Simple
 * broadcast and reduce (BROADCAST_CHUNKSTEPS, REDUCE_CHUNKSTEPS 1). */
static double ring_inflight(const comm_ctx *c, gp_proto p)
{
	int split = c->op == GP_ALL_REDUCE || c->op == GP_ALL_GATHER ||
		    c->op == GP_REDUCE_SCATTER;

	return p == GP_PROTO_SIMPLE && split ? NET_SLOTS / 4.0 : NET_SLOTS;
}

/* The round trip of one slot over the ring steps in flight, s: each
 * side's proxy posts its proxy_subs channels' receives or sends in turn. */
static double ring_window(const comm_ctx *c, gp_proto p)
{
	double done = c->t->nic_nccl.completion;

	return (hop_net(c, p) + done + c->lat_net + done +
		2.0 * proxy_subs(c, p) * post(c, p)) /
	       ring_inflight(c, p);
}

/* What the ring's steps inside the nodes wait for the window (its round
 * trip, the step's bytes in it, over eight) beyond what the engine prices
 * them at (their posts, ring_intra_step, or their share of the transfer,
 * bwt / steps), s (0 on one node). */
static double ring_window_wait(const comm_ctx *c, gp_proto p, double bwt)
{
	int steps, inter;
	double busy;

	if (c->nn < 2)
		return 0.0;
	ring_steps(c, &steps, &inter);
	busy = max2(ring_intra_step(c, p, proxy_subs(c, p)), bwt / steps);
	return (steps - inter) *
	       max2(0.0, ring_window(c, p) +
			    bwt / steps / ring_inflight(c, p) - busy);
}

/* ---- a broadcast's or reduce's ring runs twice the loops ----------------
 *
 * A Simple ring moves each channel's share one slice at a time, and each
 * slice is a serial loop of the channel's thread block: wait for the
 * peers' step counters, sub-barrier, copy or reduce, barrier, then a
 * system-scope fence and the new step count ("waitPeer(...); subBarrier();
 * ... reduceCopy(...); barrier(); postPeer<Recv, Send>(0 < workSize);"
 * inside "#pragma unroll 1 do { ... } while (slice < SlicePerChunk ...)",
 * "fence_acq_rel_sys(); st_relaxed_sys_global(connStepPtr, step)",
 * src/device/prims_simple.h, NCCL v2.24.3-1), and the proxy sends one
 * network message a slice ("sizes[subCount] = stepSize*args->sliceSteps",
 * "sub->posted += args->sliceSteps", src/transport/net.cc).  A slice is
 * StepPerSlice steps of the 4 MiB / NCCL_STEPS = 512 KiB Simple buffer
 * (init.cc DEFAULT_BUFFSIZE): all-reduce, all-gather and reduce-scatter
 * take NCCL_STEPS / 4 = 2 steps (1 MiB), broadcast and reduce one
 * ("#define BROADCAST_SLICESTEPS 1", "#define REDUCE_SLICESTEPS 1",
 * src/include/collectives.h; the ring's chunk is stepSize x chunkSteps,
 * enqueue.cc), so a broadcast or reduce runs twice the loops for the same
 * bytes.  The network and link rates the engine streams at are all-reduce
 * and all-gather figures (the fabrics' `achievable`: nccl-tests' 46-49
 * GB/s a NDR NIC, NVLink ring plateaus), so they carry one loop a 1 MiB
 * slice; a broadcast or reduce pays one loop more for each, at NCCL's
 * price of a Simple ring step on the node's link, hwLat[NVLINK][RING]
 * [SIMPLE] = 3.4 us (PCIe 5.7; src/graph/tuning.cc, v2.24.3-1 as on
 * master; hop_up), as the NVLS loops are priced (nvls_steps): k = S /
 * (nc x 512 KiB) loops a channel against max(1, S / (nc x 1 MiB)).  4 x 8
 * H100, 8 NDR NICs, 16 channels, 8 GiB: 1024 loops against 512, +1.74 ms
 * on 23.4 ms.  Checked on the Voltage Park 4 x 8 H100 logs (NCCL
 * 2.24.3; read after pricing, not an input): from 4 to 8 GiB a broadcast
 * adds 4 GiB in 14.54 ms (295 GB/s a link) and a reduce in 14.65 ms,
 * where the all-gather's links carry 4 GiB x 31/32 in 12.87 ms (323 GB/s):
 * 0.91 of it, the loops 0.93.  NCCL's tuner has no such term, so the
 * estimate it ranks by leaves it out (comm_nccl_estimate). */
#define RING_STEP_BYTES 524288.0

static double ring_slice_loops(const comm_ctx *c, gp_proto p)
{
	double nc, k;

	if (p != GP_PROTO_SIMPLE || c->n < 2 ||
	    (c->op != GP_BROADCAST && c->op != GP_REDUCE))
		return 0.0;
	if (c->nn > 1)
		nc = channels_in_use(c, GP_ALGO_RING, p, net_ring_channels(c));
	else if (c->t->up_nccl.channels > 0.0)
		nc = channels_in_use(c, GP_ALGO_RING, p,
				     c->t->up_nccl.channels);
	else
		return 0.0;
	k = max2(1.0, c->bytes / (nc * RING_STEP_BYTES));
	return max2(0.0, k - max2(1.0, c->bytes /
					   (nc * 2.0 * RING_STEP_BYTES))) *
	       hop_up(c, p);
}

/* What a rank's intra-node links carry of a ring's bytes across nodes.
 * Each channel's ring enters a node at the GPU by its NIC (NCCL receives
 * locally) and its last GPU sends it on to the next node.  Where the
 * collective library relays a send through the NIC's own GPU (PXN), that
 * last send crosses the node's links too: NCCL gives a GPU a PXN path to
 * every NIC of another NVLink-connected GPU ("Only enabling it in the
 * GPU->NIC direction for now to favor receiving locally and sending
 * remotely", ncclTopoComputePaths, src/graph/paths.cc; "NCCL_PARAM(
 * PxnDisable, "PXN_DISABLE", 0)"), and its ring search raises the path
 * type it accepts to the NIC (typeInter, up to PATH_PXN) before it tries
 * a ring that leaves through another NIC (crossNic), stopping once the
 * channels fill the GPUs' bandwidth (ncclTopoCompute, src/graph/search.cc,
 * v2.26.2): on a rail-optimised NVIDIA node (a NIC by each GPU) the ring
 * leaves through the NIC it entered by, relayed over NVLink from its last
 * GPU (NCCL logs such a send as "via NET/IB/<nic>(<relay rank>)" and
 * "use ring PXN 1"), so the links carry one hop a rank, as inside one
 * node; the H100 NDR ring logs (at most 363.5 GB/s on 4 nodes) never pass
 * NVLink's one-node ring rate.  RCCL keeps
 * PXN off by default ("NCCL_PARAM(PxnDisable, "PXN_DISABLE", 1)",
 * ROCm/rccl src/graph/paths.cc; "we decided to disable it by default, as
 * it made less performance improvements on the all-to-all point-to-point
 * XGMI topology", AMD's maintainer, ROCm/rccl#1209), so the last GPU sends
 * over its own NIC's PCIe path (the search charges "GPU, g, NET, n" alone
 * at "if (step == backToNet) { // first get back to NIC",
 * ncclTopoSearchRecGpu): a node's chain of g ranks makes g - 1 link hops
 * a channel, and when every GPU has a NIC the rings leave from each in
 * turn, so a rank's links carry (g - 1) / g of its ring bytes (the
 * topology's pxn_off, the arch's ccl_pxn = false).  With fewer NICs than
 * GPUs some rank never leaves and carries all of it.  1 on one node.
 * (RCCL builds of 2025 turn PXN on from 64 ranks on CDNA 3 and 32 on
 * CDNA 4, ROCm/rccl src/rccl_wrap.cc rcclSetPxn; the 64-rank MI325X rows,
 * ROCm 6.4.1, run as the 16- and 32-rank ones, 344-351 GB/s, so that is
 * not priced.) */
static double ring_up_share(const comm_ctx *c)
{
	if (!c->t->pxn_off || c->nn < 2 || c->gmax < 2 ||
	    c->nic_use < c->gmax)
		return 1.0;
	return (double)(c->gmax - 1) / c->gmax;
}

/* Ring: latency and bandwidth term of the flat pipelined ring. */
static int price_ring(const comm_ctx *c, gp_proto p, double *lat, double *bwt,
		      const char **why)
{
	double S = c->bytes, up = up_rate(c, p) / ring_up_share(c),
	       net = net_rate(c, p);
	int steps, inter;

	if (c->op == GP_ALL_TO_ALL || c->op == GP_SEND_RECV) {
		*why = "ring does not apply to all_to_all or send_recv";
		return 1;
	}
	/* Flat pipelined ring over all n ranks (ring_steps): busbw <=
	 * the node's NIC bandwidth; inside the node busbw <= per-GPU
	 * link bandwidth. */
	ring_steps(c, &steps, &inter);
	*lat = base(c, p) + (steps - inter) * ring_intra_step(c, p, 1.0) +
	       inter * hop_net(c, p) + ring_proxy_wait(c, p);
	if (c->nn > 1 && p == GP_PROTO_SIMPLE && c->op == GP_ALL_REDUCE)
		*lat *= RING_PLATEAU;
	*bwt = S * comm_bus_factor(c->op, c->n) / min2(up, net);
	if (c->nn > 1 && p == GP_PROTO_LL)
		*bwt = max2(*bwt, S * comm_bus_factor(c->op, c->n) /
			    ll_net(c));
	*bwt = on_channels(c, GP_ALGO_RING, p, *bwt) + ring_slice_loops(c, p);
	*lat += ring_window_wait(c, p, *bwt);
	return 0;
}

/* The tree's own ceiling across nodes: each of NCCL's channels is one
 * thread block (SM) driving one tree -- the connect code duplicates the
 * search's channels, the copy carrying the second tree ("Duplicate
 * channels trees", channel1 = channel0 + nChannels, connectTrees;
 * "nChannels*2", ncclTopoPostset; NVIDIA/nccl src/graph/connect.cc,
 * 2.27.7 and 2.30.7) -- and NCCL bounds what a search channel's pair of
 * blocks carries by the generation's perChMaxTreeBw ("busBw =
 * std::min(busBw * .92, graphs[a]->nChannels * perChMaxTreeBw)" for the
 * all-reduce tree, every protocol; src/graph/tuning.cc, same tags; the
 * topology's tree_ch_bw).  It is the SM limit NCCL's maintainer names:
 * "tree would require 32 SMs to achieve the same performance [as
 * NVLSTree]. Given the default number of SMs is 16 ... Tree usually
 * achieves significantly lower bandwidth" (sjeaugey, NVIDIA/nccl#1649).
 * The channels follow the NICs as NCCL sees them (net_graph_channels:
 * one per NIC or rail group at its speed, doubled when slow), so a node of
 * few fast NICs reaches the ceiling and one of many slow ones does not
 * (8 x 400 Gb/s H100: 8 x 36 GB/s = 288 GB/s bus, under the NICs'
 * 319 GB/s at 0.85 x 120/128).  A tree's algbw is half its busBw
 * (tuning.cc "ratio ... .5"), so S bytes take 2S / busBw.  With LL128
 * the same block moves less: NCCL takes the capped busBw's 120/128 (the
 * data in each 128-byte line) and bounds it by a second per-channel
 * figure of the generation, "busBw = std::min(busBw * (nNodes == 1 ?
 * 7.0 / 9.0 : 120.0 / 128.0), graphs[a]->nChannels *
 * perChMaxTreeLL128Bw)" (tuning.cc 2.27.7 and 2.30.7; the topology's
 * tree_ll128_ch_bw: Hopper 36.7 GB/s on 2 nodes, 29.0 on 3 or more,
 * against 41.4 x 120/128 = 38.8 and 36 x 120/128 = 33.75), so the LL128
 * tree's block carries min(tree_ch_bw x 120/128, tree_ll128_ch_bw).
 * PR #645's rule giving one block both trees below 100 Gb/s NICs was
 * closed unmerged: every release since gives each tree its own block.
 * The 120/128 is NCCL's whenever it caps the LL128 tree ("busBw *
 * (nNodes == 1 ? 7.0/9.0 : 120.0/128.0)" stands before the min, with or
 * without the LL128 figure): a topology that gives the tree's ceiling and
 * not LL128's took the Simple block's rate for LL128's.
 * These ceilings are NCCL's tuner, and only a runtime with NCCL's tree
 * and LL128 has them: RCCL's AMD build compiles them out ("#if
 * defined(__HIP_PLATFORM_AMD__) ... busBw *= rcclTuningModel[comm->
 * topo->tuning].bwRatio[...][a][p]; #else [NCCL's perChMaxTreeBw and
 * perChMaxTreeLL128Bw caps] #endif", ROCm/rccl src/graph/tuning.cc; it
 * enables LL128 by default "only on gfx90a with available tuning table",
 * gfx942 and gfx950 added in ROCm/rocm-systems projects/rccl), and
 * Gaudi's HCCL runs none of NCCL's protocols.  The catalog gives the
 * figures for NVIDIA's generations alone (catalog/archs.lua: "AMD and
 * Gaudi none"), so there neither ceiling applies.
 * 0: one node, or no ceiling known (no NCCL tuner). */
static double tree_ch_cap(const comm_ctx *c, gp_proto p)
{
	double cap = c->t->tree_ch_bw[c->nn > 2];
	double ll128 = c->t->tree_ll128_ch_bw[c->nn > 2];

	if (p != GP_PROTO_LL128)
		return cap;
	if (cap > 0.0)
		cap *= 120.0 / 128.0;
	if (ll128 > 0.0)
		cap = cap > 0.0 ? min2(cap, ll128) : ll128;
	return cap;
}

static double tree_sm_time(const comm_ctx *c, gp_proto p)
{
	double cap = tree_ch_cap(c, p);

	if (c->nn < 2 || cap <= 0.0)
		return 0.0;
	return 2.0 * c->bytes / (net_graph_channels(c, NULL) * cap);
}

/* The share of the network rate the tree reaches across 3 or more nodes
 * (the NIC fabric's nccl.tree_share; 1 on 2 nodes or fewer).  AWS's cost
 * model for P5 prices the tree's bandwidth at half the ring's
 * ("(internode_bw * num_rails * num_channels) / 2", aws-ofi-nccl v1.16.3
 * src/tuner/nccl_ofi_model.cpp) and is consulted only beyond 2 nodes
 * ("Skip runs smaller than 2 nodes and fallback to NCCL's internal
 * tunings"); on 2 nodes, where each node is root of one tree and leaf of
 * the other, 2 x 8 A100 on 4 x 100 Gb/s EFA reach 78.3 GB/s busbw at 2 GiB
 * (aws-samples/awsome-distributed-training nccl-tests README), the tree
 * at the links' full rate. */
static double tree_share(const comm_ctx *c)
{
	return c->nn > 2 ? c->t->nic_nccl.tree_share : 1.0;
}

/* ---- a tree's network step crosses as one message ----------------------
 *
 * Across nodes NCCL's proxy sends a step only once the GPU has written all
 * of it: the LL128 primitive loops its warps over the whole step, then
 * "barrier(); ... postSend()" moves the tail (prims_ll128.h), and the
 * proxy's "Data is ready, try to send" isends that step's `size` bytes as
 * one message (transport/net.cc sendProxyProgress; NCCL 2.27.7), as for LL
 * and Simple.  Inside a node LL and LL128 forward line by line (the reader
 * polls each line's flag), so only the network hops are store-and-forward:
 * the first chunk of a tree crosses each of the 2 log2 N network hops whole
 * before the next node can forward it, a fill the alpha-beta terms leave
 * out (a pipelined tree of depth d and k pieces takes (d + k) piece times,
 * Sanders, Speck and Traeff, Parallel Computing 35(12) 2009).
 *
 * The step is NCCL's chunk for the tree (enqueue.cc calcCollChunking,
 * 2.27.7): the buffer over NCCL_STEPS = 8 -- LL128 120 x 640 x 8 B x 8 /
 * 8 = 614400 B of which 120/128 data (576000), LL 8 x 512 x 16 B x 8 / 8
 * halved (32 KiB of data in 64 KiB of lines), Simple 4 MiB / 8 (init.cc
 * DEFAULT_*BUFFSIZE) -- with LL128 halved "while (nBytes /
 * (nChannels*chunkSize) < nstepsLL128*64/ppn && chunkSize > 131072)",
 * then "*16/ppn ... > 32768", nstepsLL128 = 1 + log2i(nNodes) + 0.1 ppn; a
 * channel's share smaller than the chunk is one step.
 *
 * The message crosses at the rate of the NICs it takes: AWS's plugin
 * stripes a message over at most its device's rails, one stripe per
 * MIN_STRIPE_SIZE (128 KiB, "Messages sized larger than this threshold will
 * be striped across multiple rails", include/nccl_ofi_param.h), the count
 * lowered to a divisor of the rails (nccl_ofi_scheduler.cpp
 * get_num_stripes; aws-ofi-nccl v1.16.3), so a P5 step under 128 KiB
 * crosses one 100 Gb/s NIC; any other network's device is one NIC.
 * 32 MiB on 4 x 8 P5 (LL128, 16 channels): 72000 B of data, 76800 on the
 * wire, 7.2 us a hop at 12.5 GB/s x 0.85. */
#define NET_STRIPE_BYTES 131072.0

/* The bytes on the wire of one tree step across nodes for protocol p. */
static double tree_net_step_bytes(const comm_ctx *c, gp_proto p, double nc)
{
	double chunk, steps, ppn = c->g;

	if (p == GP_PROTO_LL128) {
		chunk = 576000.0;
		steps = 1.0 + ilog2(c->nn) + 0.1 * ppn;
		while (floor(c->bytes / (nc * chunk)) < steps * 64.0 / ppn &&
		       chunk > 131072.0)
			chunk /= 2.0;
		while (floor(c->bytes / (nc * chunk)) < steps * 16.0 / ppn &&
		       chunk > 32768.0)
			chunk /= 2.0;
		return min2(chunk, c->bytes / nc) * 128.0 / 120.0;
	}
	if (p == GP_PROTO_LL)
		return min2(32768.0, c->bytes / nc) * 2.0;
	return min2(524288.0, c->bytes / nc);
}

/* The time one network message of `wire` bytes takes to cross, s: over
 * the stripes the plugin cuts it into (rails), each NIC at its rate, all
 * of them no faster than the GPU's path to them (c->path: nic_path_bw,
 * host-staged without GPUDirect RDMA). */
static double net_msg_time(const comm_ctx *c, double wire)
{
	double r = max2(1.0, c->rails), rate;
	double k = min2(max2(1.0, ceil(wire / NET_STRIPE_BYTES)), r);

	while (k > 1.0 && fmod(r, k) != 0.0)
		k -= 1.0;
	rate = k * c->bnic;
	if (c->path > 0.0)
		rate = min2(rate, c->path);
	return wire / rate;
}

/* A tree step's crossing of one network hop, s (0 on one node). */
static double tree_net_fill(const comm_ctx *c, gp_proto p)
{
	double nc;

	if (c->nn < 2)
		return 0.0;
	nc = channels_in_use(c, GP_ALGO_TREE, p,
			     2.0 * net_graph_channels(c, NULL));
	return net_msg_time(c, tree_net_step_bytes(c, p, nc));
}

/* Tree: NCCL's double binary tree, all-reduce only. */
static int price_tree(const comm_ctx *c, gp_proto p, double *lat, double *bwt,
		      const char **why)
{
	double S = c->bytes, up = up_rate(c, p), net = net_rate(c, p);

	if (c->op != GP_ALL_REDUCE) {
		*why = "tree is priced for all_reduce only";
		return 1;
	}
	/* NCCL double binary tree: a chain inside each node, two
	 * complementary binary trees across nodes, each carrying
	 * half the data (Sanders et al., Parallel Computing 35(12)
	 * 2009; NCCL 2.4).  Latency: up and down the chain and the
	 * tree, 2((g-1) + floor(log2 N)) hops (tuning.cc).
	 * The chain is the longest node's (gmax: uneven shares).
	 * Per GPU in the chain each half is received and sent once
	 * going up and once going down: 2S egress -> algbw = up/2.
	 * Per node across the network: with N = 2 each node is root
	 * of one tree and leaf of the other: S egress; with N >= 3 an
	 * interior node sends S/2 up and S down in one tree and S/2
	 * up in the other: 2S (why tree beats ring at 2 nodes,
	 * nccl-tests#196).  Each network hop also carries its first
	 * step whole (tree_net_fill). */
	*lat = tree_base(c, p) +
	       2.0 * ((c->gmax - 1) * tree_hop_up(c, p) +
		      ilog2(c->nn) * (tree_hop_net(c, p) +
				      tree_net_fill(c, p)));
	*bwt = max2(2.0 * S / up, (c->nn == 2 ? 1.0 : 2.0) * S /
		    (net * tree_share(c)));
	if (c->nn > 1 && p == GP_PROTO_LL)
		*bwt = max2(*bwt, 2.0 * S / ll_net(c));
	*bwt = max2(*bwt, tree_sm_time(c, p));
	*bwt = on_channels(c, GP_ALGO_TREE, p, *bwt / tree_factor(p, S));
	return 0;
}

/* NVLS all-reduce runs as a pipeline of warp groups in each of NCCL's
 * NVLS thread blocks (NCCL 2.30.7 src/device/all_reduce.h, RunWorkColl
 * for NCCL_ALGO_NVLS and NCCL_ALGO_NVLS_TREE): in a node scatter warps
 * copy the input into the heads' buffers, reduce warps multimem-reduce
 * and multicast one head's chunk, gather warps copy the result out (3
 * stages); across nodes the reduce warps send to the network and a fourth
 * group receives from it and multicasts ("Reduce, send to network",
 * "Recv from network, broadcast": 4 stages).  Each stage works a loop of
 * nHeads x chunkSize at a time, so a block with k loops takes the
 * slowest stage's k loop times plus one loop time of every other stage:
 * the fill, (stages - 1) x the NVLink stage's time / k, added to the
 * streaming time (in a node all stages run at the NVLink rate: (1 + 2/k)
 * x).  A block holding a loop or less (k < 1) runs its stages one after
 * another: k = 1.  chunkSize (enqueue.cc calcCollChunking): in a node
 * NCCL_NVLS_CHUNKSIZE 128 KiB, "if ((nBytes < (64 * (concurrentOps *
 * chunkSize))) && (chunkSize > 65536)) chunkSize = 65536", then 32 KiB
 * below 8x and 16 KiB below 2x; across nodes min(128 KiB,
 * nvlsTreeMaxChunkSize: 64 KiB on 4 or more nodes from 2.19.3, nvls.cc;
 * nvls_tree_cap), 64 KiB below
 * 4x and 32 KiB below 1x; concurrentOps = nChannels x nHeads.  On 8 x
 * H100 (16 blocks, 8 heads) 16 MiB is 4 loops a block: 1.5x the
 * streaming time, and 2 GiB is 128 loops: 1.016x.  The chunk rules are
 * Hopper's; NCCL retunes Blackwell across nodes (nvls.cc
 * ncclNvlsTreeSm100Tuning), priced here by the same rules.
 * Returns the fill, s. */
static double nvls_intra(const comm_ctx *c);
static double nvls_heads(const comm_ctx *c);

/* The NVLS channels NCCL gives this communicator (comm->nvlsChannels,
 * the NVLS_TREE blocks "nc = comm->nvlsChannels", enqueue.cc).  A fabric
 * gives its one-node count (nccl.nvls_channels) and, where NCCL gives a
 * communicator spanning nodes another, that (nccl.nvls_channels_nodes).
 * Blackwell (NVIDIA/nccl src/transport/nvls.cc, "#define
 * NVLS_NCHANNELS_SM100 32", "#define NVLS_NCHANNELS_SM100_NVL 24"):
 * 2.25.1 to 2.26.x give every SM100 communicator 32 ("int channels =
 * (comm->compCap >= 100) ? NVLS_NCHANNELS_SM100 : NVLS_NCHANNELS_SM90;",
 * v2.25.1-1, v2.26.2-1); from 2.27.3 32 across hosts, 24 in one ("channels
 * = (multiNode ? NVLS_NCHANNELS_SM100 : NVLS_NCHANNELS_SM100_NVL)",
 * v2.27.3-1 to v2.29.7-1); 2.30.3 on retunes multi-node SM100
 * (ncclNvlsTreeSm100Tuning, v2.30.7-1): 32 on 2 nodes ("if (nNodes == 2
 * && nicBw >= 48.0f) { *nChannels = 32;"), and on 3 or more 24 with NICs
 * of 48 GB/s or more ("else if (nicBw >= 96.0f) { if (ppn <= 8) {
 * *nChannels = 24; ... } else { *nChannels = 32;" "} else if (nicBw >=
 * 48.0f) { *nChannels = 24;"), nicBw = comm->minNetBw, a device's line
 * rate in GB/s ("net->net.bw = mbps / 8000.0", topo.cc).  The count sets
 * NVLS_TREE's proxy posts a network step (nvls_tree_posts): 2 x 8 B200
 * on NDR (dstack's Lambda pair, NCCL 2.26.2) at 1 MiB, 32 channels: 53 +
 * 2 x 31 x 1 us = 115 us against 115.58 measured (114.44, 118.25 at 2
 * and 4 MiB); 24 gave 99.  (32 across nodes was tried while a post cost
 * 3 us and not kept: 2 x 31 x 3 = 186 us of posts; at NCCL's 1 us a
 * message it holds.) */
static double nvls_nch(const comm_ctx *c)
{
	const gp_nccl *n = &c->t->up_nccl;
	double one = n->nvls_channels, nodes = n->nvls_channels_nodes;
	double nic = max2(1.0, c->rails) * c->t->nic.bw / 1e9;
	int v = c->t->nccl_version;

	if (nodes < 1.0)
		return one;
	if (c->nn == 1)
		return v >= 22501 && v < 22703 ? nodes : one;
	if ((v == 0 || v >= 23003) && c->nn > 2 &&
	    ((nic >= 96.0 && c->g <= 8) || (nic >= 48.0 && nic < 96.0)))
		return one;
	return nodes;
}

/* Whether the NCCL release the topology names (nccl_version; 0: the
 * latest modelled) caps NVLS_TREE's chunk at 64 KiB on 4 or more nodes.
 * The cap came with 2.19.3 (NVIDIA/nccl 8c6c5951, "2.19.3-1", enqueue.cc
 * computeColl: "if (info->comm->nNodes >= 4) chunkSize = 65536;"; not in
 * 2.19.1's), and stays, as NCCL_NVLSTREE_MAX_CHUNKSIZE's default from
 * 2.20.3 ("if (maxChunkSize == -2) maxChunkSize = collInfo->comm->nNodes
 * >= 4 ? 65536 : chunkSize"), moved to nvls.cc by 2.30.  A release
 * before it (2.18.1 to 2.19.1) runs 4 or more nodes on the size rules
 * alone. */
static int nvls_tree_cap(const comm_ctx *c)
{
	int v = c->t->nccl_version;

	return v == 0 || v >= 21903;
}

/* NCCL's NVLS chunk for this message, bytes (the rules above). */
static double nvls_chunk(const comm_ctx *c)
{
	double S = c->bytes, nch = nvls_nch(c);
	double ops = nch * nvls_heads(c), chunk = 131072.0;

	if (c->nn == 1) {
		if (S < 64.0 * ops * chunk && chunk > 65536.0)
			chunk = 65536.0;
		if (S < 8.0 * ops * chunk && chunk > 32768.0)
			chunk = 32768.0;
		if (S < 2.0 * ops * chunk && chunk > 16384.0)
			chunk = 16384.0;
	} else {
		if (c->nn >= 4 && nvls_tree_cap(c))
			chunk = 65536.0;
		if (S < 4.0 * ops * chunk && chunk > 65536.0)
			chunk = 65536.0;
		if (S < ops * chunk && chunk > 32768.0)
			chunk = 32768.0;
	}
	return chunk;
}

static double nvls_fill(const comm_ctx *c)
{
	double S = c->bytes, nch = nvls_nch(c);
	double heads = nvls_heads(c), intra = nvls_intra(c);
	double ops = nch * heads, k;

	if (nch < 1.0 || heads < 1.0)
		return 0.0;
	k = max2(1.0, S / (ops * nvls_chunk(c)));
	return (c->nn == 1 ? 2.0 : 3.0) * intra / k;
}

/* NCCL's NVLS arity: an NVLS graph has at most 32 heads ("#define
 * NCCL_MAX_NVLS_ARITY 32", device.h; "graph->maxChannels =
 * std::min(NCCL_MAX_NVLS_ARITY, system->nodes[GPU].count)", search.cc
 * ncclTopoCompute, 2.17-2.30.7), so an NVLink domain of more GPUs (an
 * NVL72 rack) reduces through 32 of them. */
#define NVLS_MAX_ARITY 32.0

/* The NVLink stage of NVLS all-reduce on its own, s.  Reduce-scatter by
 * multimem.ld_reduce: the switch reads every GPU's whole buffer once
 * (egress S) and returns each head its reduced S/h; all-gather by
 * multimem.st: each head pushes S/h once and the switch replicates it to
 * all (ingress S).  Per direction S(1 + 1/h) at a head, h = g up to
 * NCCL's 32 (cf. Calculon h100 config, 1 + 1/n). */
static double nvls_intra(const comm_ctx *c)
{
	return c->bytes * (1.0 + 1.0 / min2(c->g, NVLS_MAX_ARITY)) /
	       (up_rate(c, GP_PROTO_SIMPLE) * c->t->up_nccl.nvls_eff);
}

/* NVLS heads: every GPU in a node up to NCCL's arity; across nodes a GPU
 * with a NIC (NCCL's NVLS search pairs them, at most one per GPU). */
static double nvls_heads(const comm_ctx *c)
{
	return c->nn == 1 ? min2(c->g, NVLS_MAX_ARITY) :
	       min2(c->g, max2(1.0, c->nic_use));
}

/* The streaming time of NVLS all-reduce, s: in a node its NVLink
 * stage; across nodes (NVLS_TREE: NVLS inside the node, a binary tree of
 * node shards across nodes, traffic as for the double binary tree,
 * pipelined) the slower of the stages.  Each head runs its part of both
 * stages in one thread block, which caps the busbw it carries at
 * nvls_tree_bw (NCCL 2.28+ ncclTopoTuneModel: busbw <= heads x
 * perChMaxNVLSTreeBw, algbw = busbw x n / 2(n-1)). */
static double nvls_stream(const comm_ctx *c)
{
	double S = c->bytes, s = nvls_intra(c);
	double cap = c->t->nvls_tree_bw[c->nn > 2];

	if (c->nn == 1)
		return s;
	s = max2(s, (c->nn == 2 ? 1.0 : 2.0) * S /
		 net_rate(c, GP_PROTO_SIMPLE));
	if (cap > 0.0)
		s = max2(s, S * comm_bus_factor(c->op, c->n) /
			 (nvls_heads(c) * cap));
	return s;
}

/* NVLS_TREE's network steps wait for the head's proxy thread to post each
 * channel's send: NCCL runs NVLS_TREE on all its NVLS channels whatever
 * the size ("NVLS should not need more than 16 channels to get peak BW.
 * nc = comm->nvlsChannels", enqueue.cc, NCCL 2.18-2.30), every channel
 * holds a part of every head's shard, and one proxy thread per GPU posts
 * the sends of all channels leaving through its NIC one after another
 * ("for (int s=0; s<args->nsubs; s++)", net.cc sendProxyProgress).  Each
 * is one network post, NCCL's getNetOverhead ("Network post overhead",
 * 1 us on Intel hosts, 2 on AMD, tuning.cc): an NVLS_TREE step is one
 * slice, one message ("int chunkSteps = (info->protocol ==
 * NCCL_PROTO_SIMPLE && info->algorithm == NCCL_ALGO_RING) ?
 * info->chunkSteps : 1;", the same for sliceSteps, enqueue.cc
 * calcCollChunking, v2.18.3-1 to v2.27.7-1; net.cc posts one isend a
 * slice, "sizes[subCount] = stepSize*args->sliceSteps").  The x3 NCCL
 * gives a Simple post ("if (p == NCCL_PROTO_SIMPLE) netOverhead *= 3",
 * tuning.cc) is its ring's, whose step is a chunk of
 * ALLREDUCE_CHUNKSTEPS / ALLREDUCE_SLICESTEPS = 2 slices, so 2 messages
 * (post(), proxy_subs); NCCL's NVLS_TREE latency has no post term.  A
 * channel holds data from 32 KiB of the message on (NCCL 2.30.7
 * enqueue.cc "MinTrafficPerChannel = 32 << 10"), so k = min(channels, S /
 * 32 KiB).  The posts after the first (which the step's 14 us holds) run
 * while the NIC moves what is posted, so they bound the streaming time
 * from below rather than add to it: 2 log2 N steps x (k - 1) posts.  2 x
 * 8 H100 on 8 NDR NICs (16 channels, Intel hosts), NCCL 2.26.2, 1 MiB: 2
 * x 15 x 1 = 30 us over the 53 us latency, 83 us against 87.1 (dstack's
 * Nebius pair) and 71.9 (nccl-tests#309, XE9680); at 3 us a post (the
 * ring's Simple figure, priced here before) 143 us.  The logs that sat on
 * that 143 us floor run slow at every size: nccl#1244's H20 pair (121.8
 * us at 1 MiB) is 227-313 GB/s busbw from 128 to 512 MiB, 33-55% under
 * the NVLS_TREE rate the H100 pairs meet within 3%, on an issue titled
 * "performance is not as expected"; nccl-tests#309's second user's 4
 * nodes 25% under it at 256 MiB. */
static double nvls_tree_posts(const comm_ctx *c)
{
	double nch = nvls_nch(c);
	double k = min2(nch, max2(1.0, ceil(c->bytes / 32768.0)));

	if (c->nn < 2 || nch < 1.0)
		return 0.0;
	return 2.0 * ilog2(c->nn) * (k - 1.0) * net_post(c);
}

/* Every loop of an NVLS block inside a node is a Simple-protocol step on
 * each of its three stages (the scatter warps' wait for the heads'
 * buffers and post to them, the reduce warps' multimem round, the
 * gather's), a fixed cost a loop whatever its chunk.  NCCL prices that
 * step, for the scatter-to-heads / reduce / gather-from-heads kernel
 * NVLS's is built on (CollNet Direct, the same warp groups and nHeads
 * chunks a loop), at hwLat[NVLINK][COLLNET_DIRECT][SIMPLE] = 3.7 us
 * (src/graph/tuning.cc, 2.18.5 to 2.30.7).  The streaming rate
 * (nvlsEfficiency) is NCCL's large-message figure, where a loop moves
 * nHeads x NCCL_NVLS_CHUNKSIZE (128 KiB), so it already carries one such
 * step per 128 KiB chunk; a smaller chunk (nvls_fill's rules) runs more
 * loops for the same bytes and pays the step for each extra one:
 * 3.7 us x (k - max(1, S / (ops x 128 KiB))) -- at least one loop, whose
 * steps the NVLS latency (hwLat NVLS, 25 us, a one-loop message's) holds.
 * 8 x H100 at 16 MiB: k = 4 loops of 32 KiB against 1 of 128 KiB, +11.1
 * us; 256 MiB: 32 against 16, +59.2 us; from 1 GiB (128 KiB chunks)
 * nothing.  Checked on a log that is not
 * a case (xxrjun/nccl-tests-cluster @455de4f, nccl_N1_G8_cnode3-002.log,
 * all_reduce_perf, NCCL 2.29.2, 8 x H100): its marginal algbw is 276.0
 * GB/s with 128 KiB chunks (1 to 16 GiB) and 259.7 with 64 KiB (128 to
 * 512 MiB), 1/259.7 - 1/276.0 GB/s = 0.227 ps a byte; 64 KiB chunks run
 * one loop more than 128 KiB ones per 128 x 128 KiB = 16 MiB, so one
 * extra step costs 16 MiB x 0.227 ps = 3.8 us.  Across nodes (NVLS_TREE)
 * the block's loop is the same three warp groups, one Simple step each a
 * loop ("for (elemOffset = 0; elemOffset < channelCount; elemOffset +=
 * loopCount)" with loopCount = nHeads x chunkCount in the scatter,
 * gather and reduce-and-send groups, src/device/all_reduce.h
 * RunWorkColl<..., NCCL_ALGO_NVLS_TREE, NCCL_PROTO_SIMPLE>, 2.21.5 to
 * 2.30.7), and from 2.19.3 its chunk is capped at 64 KiB on 4 nodes or
 * more ("if (maxChunkSize == -2) maxChunkSize = comm->nNodes >= 4 ?
 * 65536 : chunkSize", NCCL_NVLSTREE_MAX_CHUNKSIZE, enqueue.cc
 * calcCollChunking; 2.19.3's "if (info->comm->nNodes >= 4) chunkSize =
 * 65536"; nvls_tree_cap, nvls_chunk), so such a job runs twice the loops of
 * 128 KiB chunks at every size and pays the step for each extra one:
 * 4 x 8 H100 at 256 MiB (16 channels x 8 heads), 32 loops against 16,
 * +59.2 us.  Two nodes keep 128 KiB chunks from 64 MiB (4 x 128 x 128
 * KiB), so only their 16 and 32 MiB runs (64 KiB) pay a loop or two. */
#define NVLS_STEP_US 3.7

static double nvls_steps(const comm_ctx *c)
{
	double S = c->bytes, nch = nvls_nch(c);
	double heads = nvls_heads(c), ops = nch * heads, k;

	if (nch < 1.0 || heads < 1.0)
		return 0.0;
	k = max2(1.0, S / (ops * nvls_chunk(c)));
	return max2(0.0, k - max2(1.0, S / (ops * 131072.0))) *
	       NVLS_STEP_US * US;
}

/* NVLS all-reduce: in-switch reduction, NVLS_TREE across nodes: the
 * streaming time plus the pipeline's fill (nvls_fill) and the loops'
 * steps (nvls_steps), across nodes no less than the proxy's posts
 * (nvls_tree_posts). */
static void nvls_all_reduce(const comm_ctx *c, double *lat, double *bwt)
{
	const gp_topo *t = c->t;

	*bwt = nvls_stream(c) + nvls_fill(c) + nvls_steps(c);
	if (c->nn == 1) {
		*lat = t->up_nccl.nvls_lat;
	} else {
		*lat = t->up_nccl.nvls_lat + 2.0 * ilog2(c->nn) *
		       tree_hop_net(c, GP_PROTO_SIMPLE);
		*bwt = max2(*bwt, nvls_tree_posts(c));
	}
}

/* Why the NCCL release the topology names (nccl_version; 0: the latest)
 * runs no NVLS for this collective, or NULL.  NCCL's tags: 2.17.1 "Add
 * new NVLS algorithm for allreduce using NVLink SHARP (intra-node
 * only)"; 2.18.1 "Add NVLS+Tree algorithm" (across nodes); all-gather
 * and reduce-scatter in a node from 2.19.1 (enqueue.cc, "now we only
 * support single-node NVLS allgather and reducescatter", which 2.18.6
 * does not have). */
static const char *nvls_release(const comm_ctx *c)
{
	int v = c->t->nccl_version;

	if (v == 0)
		return NULL;
	if (c->op != GP_ALL_REDUCE)
		return v < 21901 ? "nvls all_gather/reduce_scatter needs "
				   "NCCL 2.19.1 or later" : NULL;
	if (v < 21701)
		return "nvls needs NCCL 2.17.1 or later";
	return c->nn > 1 && v < 21801 ? "nvls across nodes (NVLS_TREE) "
					"needs NCCL 2.18.1 or later" : NULL;
}

/* NVLS: multicast and in-switch reduction on an NVLink switch. */
static int price_nvls(const comm_ctx *c, gp_proto p, double *lat, double *bwt,
		      const char **why)
{
	const gp_topo *t = c->t;

	if (!t->up_nvls || c->g < 2) {
		*why = "nvls needs an NVLink switch with in-switch "
		       "reduction and >= 2 GPUs per node";
		return 1;
	}
	if (nvls_release(c) != NULL) {
		*why = nvls_release(c);
		return 1;
	}
	if (p != GP_PROTO_SIMPLE) {
		*why = "nvls runs the simple protocol only";
		return 1;
	}
	if (c->op == GP_ALL_REDUCE) {
		nvls_all_reduce(c, lat, bwt);
		return 0;
	}
	if ((c->op == GP_ALL_GATHER || c->op == GP_REDUCE_SCATTER) &&
	    c->nn == 1) {
		/* All-gather: each GPU stores its S/g by multicast and
		 * receives S; reduce-scatter mirrors it: S per
		 * direction at the derated rate. */
		*lat = t->up_nccl.nvls_lat;
		*bwt = c->bytes / (up_rate(c, p) * t->up_nccl.nvls_eff);
		return 0;
	}
	*why = "nvls is priced for all_reduce, and all_gather/"
	       "reduce_scatter on one node";
	return 1;
}

/* SHARP: CollNet reduction in the network switches. */
static int price_sharp(const comm_ctx *c, gp_proto p, double *lat,
		       double *bwt, const char **why)
{
	const gp_topo *t = c->t;
	double S = c->bytes, g = c->g;
	double up = up_rate(c, p), net = net_rate(c, p);
	double intra, ilat;
	int v = t->nccl_version;

	if (!t->nic_sharp || c->nn < 2 || c->op != GP_ALL_REDUCE) {
		*why = "sharp needs >= 2 nodes on a fabric with "
		       "in-network reduction (all_reduce only)";
		return 1;
	}
	/* NCCL reaches the fabric's reduction through CollNet from
	 * 2.6.4 (NVIDIA/nccl v2.6.4-1: "Add support for network
	 * collectives."; src/transport/coll_net.cc first in that tag). */
	if (v != 0 && v < 20604) {
		*why = "sharp (CollNet) needs NCCL 2.6.4 or later";
		return 1;
	}
	if (p != GP_PROTO_SIMPLE) {
		*why = "sharp runs the simple protocol only";
		return 1;
	}
	/* CollNet: reduce inside the node (NVLS when the switch can and
	 * the release joins them, else ring reduce-scatter + all-gather
	 * over g), each node sends its data once to the switch tree and
	 * gets the result once: S per direction per node whatever N
	 * (Graham et al., COMHPC 2016, SHARP).  Latency: one round trip
	 * up and down the aggregation tree, ~2 network steps.  NVLS in
	 * the node under IB SHARP first ships in 2.18.1 (v2.18.1-1: "Add
	 * support for IB SHARP to NVLS (NVLink SHARP algorithm)"); an
	 * older release's CollNet reduces in the node without it. */
	if (t->up_nvls && c->g > 1 && (v == 0 || v >= 21801)) {
		intra = S * (1.0 + 1.0 / min2(g, NVLS_MAX_ARITY)) /
			(up * t->up_nccl.nvls_eff);
		ilat = t->up_nccl.nvls_lat;
	} else {
		intra = S * 2.0 * (g - 1) / g / up;
		ilat = base(c, p) + 2.0 * (c->g - 1) * hop_up(c, p);
	}
	*lat = ilat + 2.0 * hop_net(c, p);
	*bwt = max2(intra, S / net);
	return 0;
}

/* Hierarchical: intra-node and inter-node phases one after another. */
static int price_hier(const comm_ctx *c, gp_proto p, double *lat, double *bwt,
		      const char **why)
{
	double S = c->bytes, g = c->g, nn = c->nn;
	double up = up_rate(c, p), net = net_rate(c, p);

	if (c->nn < 2 || c->g < 2 ||
	    (c->op != GP_ALL_REDUCE && c->op != GP_ALL_GATHER &&
	     c->op != GP_REDUCE_SCATTER)) {
		*why = "hierarchical needs >= 2 nodes of >= 2 GPUs "
		       "(all_reduce, all_gather, reduce_scatter)";
		return 1;
	}
	/* Two levels run one after another (Horovod/DeepSpeed style,
	 * collectives.md Sec. 3 "hierarchical all-reduce"):
	 * all-reduce = intra ring reduce-scatter ((g-1)/g S at up) ->
	 * inter ring all-reduce of the S/g shard on each GPU's rail
	 * (2(N-1)/N S/g at the GPU's NIC share bn/g, i.e.
	 * 2(N-1)/N S/bn) -> intra ring all-gather.  All-gather and
	 * reduce-scatter do one intra and one inter phase.  Each
	 * phase is its own collective call (its own base latency),
	 * and a rail's ring holds one rank per node, so its network
	 * steps are exposed as in NCCL's one-rank-per-node case. */
	if (c->op == GP_ALL_REDUCE) {
		*lat = 3.0 * base(c, p) + 2.0 * (c->g - 1) * hop_up(c, p) +
		       2.0 * (c->nn - 1) * tree_hop_net(c, p);
		*bwt = 2.0 * (g - 1) / g * S / up +
		       2.0 * (nn - 1) / nn * S / net;
	} else {
		*lat = 2.0 * base(c, p) + (c->g - 1) * hop_up(c, p) +
		       (c->nn - 1) * tree_hop_net(c, p);
		*bwt = (g - 1) / g * S / up + (nn - 1) / nn * S / net;
	}
	return 0;
}

/* Each doubling NCCL makes is a step in its channels (enqueue.cc
 * addP2pToPlan: "while (partSize > maxPartSize && nChannels[dir] <=
 * nChannelsMax / 2) nChannels[dir] *= 2", the channel count a power of
 * two), and the same 8 x H100 log moves by each of them, not at once to
 * the plateau: a peer on twice its share (1 GiB, 128 MiB a peer on 8
 * channels) 331.99 GB/s busbw, 331.99 / 369 = 0.90; on four times (2
 * GiB, 16) 343.25, 0.93; on eight (from 4 GiB, 32, the pool) the
 * plateau A2A_WRITE_EFF.  So the first doubling, at 64 MiB a peer on 8
 * ranks (512 MiB of send buffer), steps 0.83 -> 0.90, where NCCL steps,
 * not 0.83 -> 0.94. */
#define A2A_WRITE_EFF_X2 0.90
#define A2A_WRITE_EFF_X4 0.93

/* The share of the ring's rate that an all-to-all's NVLink part moves in
 * all when each peer's part is `part` bytes, one rule for every price
 * that runs one (price_p2p's in-node peers, price_pxn's hop to the rail
 * GPU) and so for every caller (nccl-tests' all-to-all, serving's EP
 * exchange, training's expert dispatch and Ulysses exchanges):
 * P2P_LINK_EFF where NCCL reads its NVLink p2p data (p2p_read);
 * where it writes (every other part; over PCIe NCCL never reads,
 * paths.cc: NVLink only) P2P_LINK_EFF on a peer's share of the pool,
 * then A2A_WRITE_EFF_X2, _X4 and A2A_WRITE_EFF as NCCL doubles a peer's
 * channels to 2, 4 and 8 times that share (p2p_channels): the 8 x H100
 * log of A2A_WRITE_EFF runs at 0.81-0.84 of the ring from 128 to 512 MiB (298.58, 301.95, 310.85 GB/s busbw: each peer on
 * its 4 channels) and rises only where the doubling starts, 1 GiB
 * (331.99, 0.90) to 2 GiB (343.25, 0.93); its 4-GPU run the same, 0.86 at
 * 512 MiB on 8 channels a peer, 0.91 at 1 GiB on 16, 0.95 at 2 GiB. */
static double a2a_link_eff(const comm_ctx *c, double part)
{
	double dbl = p2p_channels(c, part) / p2p_share(c);

	if (c->t->p2p_read && c->kind_up == GP_LINK_NVLINK)
		return P2P_LINK_EFF;
	if (dbl < 2.0)
		return P2P_LINK_EFF;
	return dbl < 4.0 ? A2A_WRITE_EFF_X2 :
	       dbl < 8.0 ? A2A_WRITE_EFF_X4 : A2A_WRITE_EFF;
}

/* The p2p channels of a communicator spanning nodes (NCCL 2.29.2,
 * comm->p2pnChannels): its collective channels, rounded up to a power of
 * two (paths.cc ncclTopoComputeP2pChannels).  Those are its ring graph's
 * (src/graph/search.cc): one channel through each NIC its GPUs on a node
 * drive, each at the NIC's speed, 48 GB/s for 400G on sm90
 * (sm90SpeedArrayInter); ncclTopoDupChannels doubles them unless the
 * channel runs under 25 GB/s, or on sm90 and later under 50 GB/s with more
 * than 4 channels; connect.cc ncclTopoPostset doubles them again
 * ("nChannels = comm->nChannels = std::min(MAXCHANNELS,nChannels*2)").
 * One GPU a node on one 400G NIC: 1 -> 2 -> 4; two: 8 (2 x H20 a node
 * logs "8 coll channels, ... 8 p2p channels", nccl#1189); four: 16;
 * eight: 8 channels, not doubled, -> 16.  Capped at the node's pool
 * (P2P_POOL). */
static double net_comm_p2p_channels(const comm_ctx *c, double per_gpu)
{
	double ring = max2(1.0, min2((double)c->t->nics, c->g * per_gpu));
	double nch = 1.0;

	if (c->t->nic.bw > 25e9 && ring <= 4.0)
		ring *= 2.0;
	while (nch < 2.0 * ring)
		nch *= 2.0;
	return min2(nch, (double)P2P_POOL);
}

/* NCCL 2.29's channels for a network peer (v2.29.2-1 src/graph/paths.cc):
 * "at least 1 channel per NIC, and more if needed to meet the bw
 * requirement", max(netCount, divUp(netBw, P2P_PER_CHANNEL_NET_BW = 14)),
 * 4 for a 400G NIC (50 GB/s); rounded up to a power of two, then halved
 * (ncclTopoComputeP2pChannels) "to fit all the peers within a single
 * round" while channels x divUp(nRanks, NCCL_MAX_DEV_WORK_P2P_PER_BATCH =
 * 8) exceed the communicator's p2p channels (net_comm_p2p_channels).  On
 * H100 nodes, one 400G NIC a GPU, NCCL 2.29.2 (xxrjun/nccl-tests-cluster
 * @56089ca, example-cluster01): 2 nodes (pairwise run 20260128-010702)
 * at 1, 2, 4, 8 GPUs a node keep 4 channels, NIC-bound: sendrecv_perf
 * 39.8-43.0 GB/s at the 45 pairs' median pair; 10 nodes (multi-node run
 * 20260129-180219) at 1, 2, 4 a node (10, 20, 40 ranks; 4, 8, 16 p2p
 * channels) get 2, 24.88-26.25 GB/s, and at 8 a node (80 ranks, 16) 1,
 * 15.23 GB/s.  The rule before 2.29 with these communicators' own
 * channels gives 2 channels at 2 ranks (28 GB/s, not 40-43) and 1 at 10
 * (14, not 24.88): those logs are 2.29's count. */
static double net_peer_channels_229(const comm_ctx *c, double per_gpu)
{
	double pool = net_comm_p2p_channels(c, per_gpu);
	double want = max2(ceil(per_gpu),
			   ceil(per_gpu * c->t->nic.bw / P2P_CH_BW - 1e-9));
	double nch = 1.0;

	while (nch < want)
		nch *= 2.0;
	while (nch * ceil(c->n / 8.0) > pool && nch > 1.0)
		nch /= 2.0;
	return nch;
}

/* The channels NCCL gives one send/recv peer across the network, each
 * one CTA and one network connection moving at most P2P_CH_BW (NCCL's
 * own P2P_PER_CHANNEL_NET_BW, 14 GB/s).  NCCL 2.12.7 to 2.20 take
 * NCCL_NCHANNELS_PER_NET_PEER, default 2 (src/init.cc
 * NCCL_PARAM(NChannelsPerNetPeer, "NCHANNELS_PER_NET_PEER", 2)); 2.21 to
 * 2.28 compute it (src/graph/paths.cc ncclTopoGetNchannels, "Remote rank,
 * use network"): "start from 2 channels per NIC and reduce with scale",
 * halving while 2 x nRanks > 4 x the communicator's p2p channels ("Avoid
 * overloading channels with 8+ operations"), then at least the NICs the
 * GPU needs to reach its own rate (getLocalNetCountByBw).  So a pipeline
 * stage's one peer across nodes, or a refit's, gets 2 channels of a
 * 400G NIC's ~48 GB/s, not the NIC.  Before 2.29 the communicator's p2p
 * channels are taken as the node's pool (P2P_POOL): the releases the
 * validated pipeline rows ran, whose communicators' channels are not
 * logged.  NCCL 2.29 (v2.29.2-1 paths.cc) sizes a peer by its NICs'
 * speed instead, net_peer_channels_229. */
static double net_peer_channels(const comm_ctx *c)
{
	double per_gpu = max2(1.0, (double)c->t->nics /
				   c->t->gpus_per_node), nch = 2.0;

	if (c->t->nccl_version >= 22900)
		return net_peer_channels_229(c, per_gpu);
	while (nch * c->n > 4.0 * P2P_POOL && nch > 1.0)
		nch /= 2.0;
	return max2(nch, ceil(per_gpu));
}

/* The channels, each one CTA of NCCL's kernel, that one send/recv
 * stream of c->bytes runs on: a peer in the node its share of the p2p
 * pool (p2p_channels), a peer across nodes net_peer_channels. */
double comm_p2p_stream_channels(const comm_ctx *c)
{
	return c->nn == 1 ? p2p_channels(c, c->bytes) : net_peer_channels(c);
}

/* What one p2p channel (one CTA) moves to a peer in the node: the GPU
 * generation's measured rate where NCCL writes over NVLink (the
 * topology's p2p_nvl_ch_bw, the arch's nccl_p2p_nvl_ch_bw: Hopper 20.6
 * GB/s, NCCL's SM90_NVLINK_BW, which 8 x H100 sendrecv_perf with NCCL
 * 2.29.2 moves at 20.32-20.46 GB/s a channel on 4 and 8 channels,
 * xxrjun/nccl-tests-cluster @455de4f nccl_N1_G8_cnode3-002.log and
 * nccl_N1_G4_cnode3-002.log), else P2P_CH_BW: NCCL's network figure, also
 * what 8 x A100 (reads, p2p_read) moves a channel (13.9 GB/s at 128 MiB on
 * 8 channels, coll-sendrecv-a100-sxm-80gb-8g-128MiB-77d0082f). */
static double p2p_ch_bw(const comm_ctx *c)
{
	if (c->kind_up == GP_LINK_NVLINK && !c->t->p2p_read &&
	    c->t->p2p_nvl_ch_bw > 0.0)
		return c->t->p2p_nvl_ch_bw;
	return P2P_CH_BW;
}

/* P2P: direct send/recv and pairwise all-to-all. */
static int price_p2p(const comm_ctx *c, gp_proto p, double *lat, double *bwt,
		     const char **why)
{
	double S = c->bytes, pe = proto_eff[p], n = c->n, g = c->g;
	double up = up_rate(c, p), net = net_rate(c, p);

	if (p == GP_PROTO_LL128) {
		*why = "p2p uses ll or simple";
		return 1;
	}
	if (c->op == GP_SEND_RECV) {
		/* nccl-tests sendrecv: rank i sends S to i+1 while
		 * receiving from i-1, all at once; across nodes the
		 * boundary pairs go through one NIC each.  Over NVLink
		 * the stream's share of the link is P2P_WRITE_EFF, or
		 * P2P_LINK_EFF where NCCL reads (p2p_read); over PCIe
		 * NCCL never reads (paths.cc: NVLink only). */
		double eff = c->t->p2p_read && c->kind_up == GP_LINK_NVLINK ?
			     P2P_LINK_EFF : P2P_WRITE_EFF;

		if (c->nn == 1) {
			*lat = base(c, p) + hop_up(c, p);
			*bwt = S / min2(up * eff,
					p2p_channels(c, S) * p2p_ch_bw(c) * pe);
		} else {
			*lat = base(c, p) + hop_net(c, p);
			*bwt = max2(max2(S / (up * eff), S / (c->bnic * pe)),
				    S / (net_peer_channels(c) * P2P_CH_BW * pe));
		}
		return 0;
	}
	if (c->op == GP_ALL_TO_ALL) {
		/* Pairwise exchange with all peers at once (NCCL
		 * all-to-all is n-1 grouped send/recv): (g-1)/n of the
		 * send buffer stays in the node, (n-g)/n leaves through
		 * the GPU's share of the node's NICs, bn/g
		 * (nccl-tests#130: all-to-all is bound by the network
		 * bandwidth per GPU).  Every remote peer is a separate
		 * network message posted by the proxy.  Inside the node
		 * each of the g - 1 peers' S/n runs on its own channels
		 * and all of them share the GPU's link (a2a_link_eff). */
		double part = S / n;
		double intra = max2((g - 1) * part /
				    (up * a2a_link_eff(c, part)),
				    part / (p2p_channels(c, part) *
					    p2p_ch_bw(c) * pe));
		double remote = (n - g) / n * S / (net / g);

		/* Each remote peer's post at NCCL's network overhead for
		 * the protocol (post(): x 3 for Simple, tuning.cc "if (p ==
		 * NCCL_PROTO_SIMPLE) netOverhead *= 3"), the figure NCCL
		 * gives a Simple network step's send and receive on one
		 * proxy, as a peer's transfer is here (price_pxn). */
		*lat = base(c, p) + hop_up(c, p);
		if (c->nn > 1)
			*lat += hop_net(c, p) +
				(c->n - c->g) * post(c, p);
		*bwt = max2(c->g > 1 ? intra : 0.0,
			    c->nn > 1 ? remote : 0.0);
		return 0;
	}
	*why = "p2p is for all_to_all and send_recv";
	return 1;
}

/* Why the NCCL release the topology names (nccl_version; 0: the latest)
 * runs no PXN, or NULL.  PXN first ships in 2.12.7, the first tag of 2.12
 * (NVIDIA/nccl v2.12.7-1: "Add network communication through another GPU
 * connected with NVLink (PXN). Add aggregation of messages coming from
 * different local GPUs through PXN and going to the same destination. Add
 * new v5 plugin API with grouped receives and tags."); 2.11.4 has no
 * PXN path (src/graph/paths.cc).  From 2.12.7 it is on by default:
 * NCCL_PXN_DISABLE defaults to 0 and NCCL_P2P_PXN_LEVEL to 2 ("use PXN as
 * much as possible to maximize aggregation", src/graph/search.cc), the
 * same at 2.30.7.  Before it a GPU reaches a remote peer only through its
 * own NIC, one network message a peer: the p2p price. */
static const char *pxn_release(const comm_ctx *c)
{
	int v = c->t->nccl_version;

	return v != 0 && v < 21207 ? "pxn needs NCCL 2.12.7 or later" : NULL;
}

/* Why PXN does not apply to this all-to-all, or NULL: the op, the
 * placement (>= 2 nodes, >= 2 ranks a node on NVLink), the release
 * (pxn_release) and the library's default (pxn_off: RCCL's
 * "NCCL_PARAM(PxnDisable, "PXN_DISABLE", 1)", ROCm/rccl
 * src/graph/paths.cc, ring_up_share). */
static const char *pxn_why_not(const comm_ctx *c)
{
	const char *rel = pxn_release(c);

	if (c->op != GP_ALL_TO_ALL || c->nn < 2 || c->g < 2 ||
	    c->kind_up != GP_LINK_NVLINK)
		return "pxn is for all_to_all across >= 2 NVLink nodes";
	if (rel != NULL)
		return rel;
	if (c->t->pxn_off)
		return "pxn is off in this collective library (the "
		       "topology's pxn_off; pxn_off = false prices "
		       "NCCL_PXN_DISABLE=0)";
	return NULL;
}

/* NCCL does not rank PXN against the direct path: a send to a rank on
 * another node takes, at NCCL_P2P_PXN_LEVEL's default 2 ("use PXN as
 * much as possible to maximize aggregation"), the NIC nearest the GPU of
 * the peer's local index, relayed by that GPU whenever it reaches the
 * NIC at PXB or better and reaches the sender over NVLink ("if
 * (peerGpu->paths[GPU][g1].type <= PATH_NVL && peerGpu->paths[NET][n].type
 * <= pxnType) { *proxyRank = peerGpu->gpu.rank; ...", NVIDIA/nccl
 * v2.27.7-1 src/graph/search.cc ncclTopoGetNetDev, the same from 2.12.7);
 * net.cc's p2p connection then runs through that proxy.  So where PXN
 * applies the all-to-all runs it, whatever the direct path would cost;
 * the direct path (p2p) stays for a forced algo (NCCL_PXN_DISABLE=1). */
int comm_pxn_routes(const comm_ctx *c)
{
	return pxn_why_not(c) == NULL;
}

/* PXN: all-to-all aggregated over NVLink onto the destination's rail. */
static int price_pxn(const comm_ctx *c, gp_proto p, double *lat, double *bwt,
		     const char **why)
{
	double S = c->bytes, n = c->n, g = c->g;
	double up = up_rate(c, p), net = net_rate(c, p);
	double intra, remote;
	const char *no = pxn_why_not(c);

	if (no != NULL) {
		*why = no;
		return 1;
	}
	if (p == GP_PROTO_LL128) {
		*why = "pxn uses ll or simple";
		return 1;
	}
	/* PXN (NCCL 2.12.7): data for remote GPU j first crosses
	 * NVLink to the local GPU on j's rail, which aggregates what
	 * all local GPUs send to j.  Extra NVLink traffic: the (g-1)/g
	 * of the remote data not already on its rail; all traffic
	 * stays rail-local.  The aggregation is the network plugin's
	 * grouped receive: "This enables the network layer to
	 * aggregate messages, by implementing a new multireceive
	 * function" (NVIDIA, "Doubling all2all Performance with NVIDIA
	 * Collective Communication Library 2.12", 2022); the proxy
	 * groups the receives of the g senders that share a
	 * connection up to the plugin's maxRecvs ("if (groupSize ==
	 * maxRecvs) groupSize = 0", net.cc recvProxyProgress, NCCL
	 * 2.27.7), so a GPU's posts drop from n - g to (N - 1) x
	 * ceil(g / maxRecvs): N - 1 on NCCL's IB transport (8) with 8
	 * GPUs a node, n - g where the plugin takes one receive a call
	 * (the fabric's nccl.max_recvs; aws-ofi-nccl through v1.19.0:
	 * "#define NCCL_OFI_MAX_RECVS 1", 8 from v1.20.0).
	 *
	 * A post is NCCL's own network overhead for the protocol, post():
	 * getNetOverhead (1 us Intel, 2 us AMD) x 3 for Simple ("if (p ==
	 * NCCL_PROTO_SIMPLE) netOverhead *= 3", tuning.cc, 2.18 to 2.30),
	 * the cost NCCL gives a Simple network step, one send and one
	 * receive on a proxy thread, as the ring's posts are priced here
	 * (proxy_subs).  A remote peer's transfer is one such send (the
	 * rail GPU's proxy relays it) and one receive (the GPU's own proxy
	 * takes its receives, PXN being one-way: "Only enabling it in the
	 * GPU->NIC direction", paths.cc), Simple from 16 KiB a peer
	 * (NCCL_P2P_LL_THRESHOLD, enqueue.cc addP2pToPlan).  The 1x figure
	 * priced before gave a P5 all-to-all 0.1-1.0 ms a call less on 4 to
	 * 32 nodes, which the HyperPod rows lacked (docs/validation.md). */
	intra = ((g - 1) / n + (n - g) / n * (g - 1) / g) * S /
		(up * a2a_link_eff(c, S / n));
	remote = (n - g) / n * S / (net / g);
	*lat = base(c, p) + 2.0 * hop_up(c, p) + hop_net(c, p) +
	       (c->nn - 1) * ceil(g / c->t->nic_nccl.max_recvs) *
	       post(c, p);
	*bwt = max2(intra, remote);
	return 0;
}

/* Price one (algorithm, protocol).  Returns 0 and sets *lat, *bwt when it
 * applies; otherwise returns 1 and leaves a reason in *why. */
int comm_price(const comm_ctx *c, gp_algo a, gp_proto p, double *lat,
	       double *bwt, const char **why)
{
	/* LL128 needs 128-byte stores to arrive whole and in order, which
	 * NVLink guarantees and PCIe does not; NCCL enables it only on NVLink
	 * paths (tuning.cc, LL128 enable rule). */
	if (p == GP_PROTO_LL128 && c->kind_up != GP_LINK_NVLINK) {
		*why = "ll128 needs NVLink";
		return 1;
	}
	/* Across nodes NCCL also wants the GPU's path to its NIC at most
	 * PXB, or PXN from compute capability 9.0 ("pEnable &=
	 * (graphs[a]->typeInter <= PATH_PXB || (minCompCap >= 90 &&
	 * graphs[a]->typeInter <= PATH_PXN))", src/graph/tuning.cc
	 * v2.26.2-1).  Where the NICs hang off the Grace CPU that the GPU
	 * reaches over NVLink-C2C (GB200) that path is PHB until 2.27.3:
	 * 2.26.2's ncclTopoCheckGdr only lets GPUDirect RDMA through it
	 * ("On C2C platforms we can still use GDRDMA on NICs connected to
	 * the CPUs", a local distance = PATH_C2C, paths.cc), the graph's
	 * path stays PHB; 2.27.3 rewrites it ("update the GPU -> NIC path
	 * in the case of C2C + PHB": PATH_P2C, paths.cc) and admits it
	 * ("typeInter <= (ncclParamLl128C2c() ? PATH_P2C : PATH_PXN)",
	 * NCCL_LL128_C2C default 1; release notes 2.27.3: "Improve support
	 * for platforms with C2C connectivity (e.g., GB200) ... Add support
	 * for P2C (PXN over C2C) and the LL128 protocol").  So before 2.27.3
	 * a GB200 ring or tree across racks runs LL or Simple. */
	if (p == GP_PROTO_LL128 && c->nn > 1 && c->t->nic_c2c &&
	    c->t->nccl_version != 0 && c->t->nccl_version < 22703) {
		*why = "ll128 across nodes needs NCCL 2.27.3 where the NICs sit behind NVLink-C2C";
		return 1;
	}
	/* RCCL enables LL128 only where its topology carries ll128Enabled:
	 * "pEnable = (graphs[a]->typeInter <= PATH_PXB) &&
	 * graphs[a]->typeIntra <= PATH_NVL && ((IsArchMatch(..., \"gfx90a\")
	 * || ... \"gfx942\" || ... \"gfx950\") && comm->topo->ll128Enabled)"
	 * (ROCm/rocm-systems projects/rccl src/graph/tuning.cc), which
	 * init.cc sets false and only a matching Rome model's "ll128Enabled=1"
	 * or RCCL_LL128_FORCE_ENABLE turns on; on 2+ nodes its per-size
	 * protocol ranges take LL128 likewise only "if
	 * (comm->topo->ll128Enabled)" (rccl_wrap.cc
	 * rcclUpdateCollectiveProtocol).  No Rome model of an 8-GPU xGMI
	 * mesh sets it, so RCCL runs LL or Simple there (ll128_off, the
	 * arch's nccl_ll128 = false: CDNA 3 and 4). */
	if (p == GP_PROTO_LL128 && c->t->ll128_off) {
		*why = "ll128 is off in this part's collective library (RCCL without ll128Enabled)";
		return 1;
	}
	switch (a) {
	case GP_ALGO_RING:
		return price_ring(c, p, lat, bwt, why);
	case GP_ALGO_TREE:
		return price_tree(c, p, lat, bwt, why);
	case GP_ALGO_NVLS:
		return price_nvls(c, p, lat, bwt, why);
	case GP_ALGO_SHARP:
		return price_sharp(c, p, lat, bwt, why);
	case GP_ALGO_HIER:
		return price_hier(c, p, lat, bwt, why);
	case GP_ALGO_P2P:
		return price_p2p(c, p, lat, bwt, why);
	case GP_ALGO_PXN:
		return price_pxn(c, p, lat, bwt, why);
	default:
		*why = "unknown algorithm";
		return 1;
	}
}

/* ---- NCCL's own estimate, which picks the algorithm ----------------------
 *
 * NCCL runs the (algorithm, protocol) its tuner prices cheapest, and the
 * tuner prices rings and trees by their graphs' bandwidth (NCCL 2.30.7
 * ncclTopoTuneModel): the graph's per-channel bandwidth times its
 * channels, the intra-node one on up to 2 nodes ("float bw = nNodes <= 2
 * || collnet ? graphs[a]->bwIntra : graphs[a]->bwInter"), the network one
 * beyond -- here the GPU's scale-up rate bu, or the node's network rate bn.
 * Across nodes the ring's graph has no faster intra-node speed: its
 * search raises both together ("increase bw for Ring: tmpGraph.bwIntra =
 * tmpGraph.bwInter", search.cc pass 2), so its busBw is the network's,
 * min(bu, bn).  The tree's search raises its intra speed alone while it
 * is below twice the network's ("increase bwIntra for trees (2 nodes or
 * collnet)"): on 2 nodes min(bu, 2 bn).  The tree's busBw is then capped
 * at its graph's channels x perChMaxTreeBw (the topology's tree_ch_bw,
 * "busBw = std::min(busBw * .92, graphs[a]->nChannels *
 * perChMaxTreeBw)"; net_graph_channels).  A ring's algbw is busBw x n /
 * nsteps; a tree's is 0.92 x busBw x 0.5.  So on 2 nodes with NICs slow
 * against NVLink the tuner runs the tree, which sends each byte across
 * the network once where the ring sends it 2(n-1)/n times (2 x 8 A100 on
 * 4 x 100 Gb/s EFA: 78.3 GB/s busbw at 2 GiB, over the NICs' 50 GB/s,
 * aws-samples/awsome-distributed-training nccl-tests README); with 4 x
 * 200 Gb/s the cap keeps the ring (nccl-tests#100's HGX A100s, 91 GB/s,
 * a ring's).  Across nodes the LL128 ring's busBw is capped at its
 * graph's channels x perChMaxRingLL128Bw (the topology's
 * ring_ll128_ch_bw, "busBw = std::min(busBw * (0.92 [120/128]),
 * graphs[a]->nChannels * perChMaxRingLL128Bw)"): on 8 devices of 400 Gb/s
 * (a P5's joined EFA) 8 x 36.7 = 293.6 GB/s against Simple's 340, so NCCL
 * leaves LL128 for Simple at 16 MiB a rank on any node count, as the P5
 * all_gather curves dip there (crazyguitar/aws-gpu-communication-benchmark
 * data/nccl_all_gather.csv: 2, 4, 8 nodes at 256, 512, 1024 MiB), where
 * 0.92 alone put it at 32 MiB from 4 nodes on.  On one node the cap
 * (graph channels x 20 GB/s on A100, x 36.7 on H100) sits above 0.92 of
 * the link and is left out; before 2.23.4 a ring of one rank a node had
 * 0.7 for 0.92, not modelled.  The LL128 tree's busBw is capped again at
 * its graph's channels x perChMaxTreeLL128Bw (the topology's
 * tree_ll128_ch_bw, across nodes; tree_sm_time).
 * Protocols: LL at half the bus
 * bandwidth ("busBw * .5" for the ring, a quarter or a third before 2.21.5:
 * nccl_ring_ll_share; "1.0 / 3.8" for the tree), LL128
 * at 0.92 (ring; tree 7/9 on one node, 120/128 across nodes), LL capped
 * by llMaxBw (ll_max).  The tree
 * keeps its correction factor per size (tree_corr).  Latencies are the
 * ones priced already (NCCL's), a ring's with NCCL's count of network
 * steps (ring_net_extra) and without the wait for its connections' slots
 * (ring_window_wait), which NCCL's tuner does not price.  Other
 * algorithms: their price. */
/* NCCL's llMaxBw: across nodes the network's (ll_net_max_busbw), on one
 * node the GPU generation's (the topology's ll_max_bw), none unknown. */
static double ll_max(const comm_ctx *c)
{
	if (c->nn > 1)
		return ll_net(c);
	return c->t->ll_max_bw > 0.0 ? c->t->ll_max_bw : HUGE_VAL;
}

/* The share of the bus bandwidth NCCL's tuner gives a ring with LL, for
 * the release the topology names (0: the latest modelled).  From 2.21.5
 * half ("busBw * .5"); from 2.7 to 2.20.5 a quarter for all-reduce,
 * reduce and any ring across nodes and a third for the others
 * ("busBw * ((nNodes > 1 || coll == ncclFuncAllReduce || coll ==
 * ncclFuncReduce) ? 1.0/4.0 : 1.0/3.0)"); before 2.7 a quarter ("busBw
 * *= 1.0/4.0", 2.5.6) (NVIDIA/nccl src/graph/tuning.cc,
 * ncclTopoTuneModel, at each tag).  Only the ranking moves: an older
 * release leaves LL for LL128 or Simple at smaller sizes (8 x A100,
 * all-reduce: 2.18.5 runs LL128 at 2 MiB, 2.21.5 on keep LL); the
 * time of the protocol it runs is its own (price_ring). */
static double nccl_ring_ll_share(const comm_ctx *c)
{
	int v = c->t->nccl_version;

	if (v == 0 || v >= 22100)
		return 0.5;
	if (v < 20700 || c->nn > 1 || c->op == GP_ALL_REDUCE ||
	    c->op == GP_REDUCE)
		return 0.25;
	return 1.0 / 3.0;
}

/* NCCL's algbw for a ring or tree (all-reduce) on `share` of the link's
 * channels, B/s; 0 for other algorithms.  `release`: the ring's LL share
 * of the topology's NCCL release, as its tuner ranks (nccl_ring_ll_share);
 * 0: the latest's, the rate a channel moves at (on_channels). */
/* The tree ceiling NCCL's tuner ranks the tree by, B/s a channel: the
 * release's own perChMaxTreeBws row (tree_tune_ch_bw before
 * tree_tune_until: NCCL 2.28.3 cut Blackwell's from 2 x 41.4 / 2 x 36.0
 * to 42.8 / 24.0 GB/s); the latest modelled release (nccl_version 0) and
 * the later ones rank by tree_ch_bw, the rate the tree's time keeps. */
static double tree_tune_cap(const comm_ctx *c)
{
	int i = c->nn > 2, v = c->t->nccl_version;

	if (v != 0 && c->t->tree_tune_until != 0 &&
	    v < c->t->tree_tune_until && c->t->tree_tune_ch_bw[i] > 0.0)
		return c->t->tree_tune_ch_bw[i];
	return c->t->tree_ch_bw[i];
}

static double nccl_algbw(const comm_ctx *c, gp_algo a, gp_proto p,
			 double share, int release)
{
	double S = c->bytes, B, bus, alg;

	if (a != GP_ALGO_RING && !(a == GP_ALGO_TREE &&
				   c->op == GP_ALL_REDUCE))
		return 0.0;
	if (c->op == GP_ALL_TO_ALL || c->op == GP_SEND_RECV)
		return 0.0;
	/* One rank: a ring of no steps, nothing sent (trivial() prices it
	 * at 0); without this its n / nsteps divides by zero. */
	if (c->n < 2)
		return 0.0;
	B = share * (c->nn == 1 ? c->bu :
		     min2(c->g > 1 ? c->bu : HUGE_VAL,
			  a == GP_ALGO_TREE && c->nn <= 2 ? 2.0 * c->bn :
			  c->bn));
	if (a == GP_ALGO_RING) {
		double nsteps = c->op == GP_ALL_REDUCE ? 2.0 * (c->n - 1) :
			(c->op == GP_ALL_GATHER || c->op == GP_REDUCE_SCATTER) ?
			c->n - 1.0 : c->n;

		bus = p == GP_PROTO_LL ?
			(release ? nccl_ring_ll_share(c) : 0.5) * B :
		      p == GP_PROTO_LL128 ? 0.92 * B : B;
		if (p == GP_PROTO_LL128 && release && c->nn > 1 &&
		    c->t->ring_ll128_ch_bw > 0.0)
			bus = min2(bus, net_graph_channels(c, NULL) *
				   c->t->ring_ll128_ch_bw);
		if (p == GP_PROTO_LL)
			bus = min2(bus, ll_max(c));
		alg = bus * c->n / nsteps;
	} else {
		double cap = release ? tree_tune_cap(c) :
			     c->t->tree_ch_bw[c->nn > 2];

		bus = 0.92 * B;
		if (c->nn > 1 && cap > 0.0)
			bus = min2(bus, net_graph_channels(c, NULL) * cap);
		if (p == GP_PROTO_LL)
			bus /= 3.8;
		if (p == GP_PROTO_LL128)
			bus *= c->nn == 1 ? 7.0 / 9.0 : 120.0 / 128.0;
		if (p == GP_PROTO_LL128 && c->nn > 1 &&
		    c->t->tree_ll128_ch_bw[c->nn > 2] > 0.0)
			bus = min2(bus, net_graph_channels(c, NULL) *
				   c->t->tree_ll128_ch_bw[c->nn > 2]);
		if (p == GP_PROTO_LL)
			bus = min2(bus, ll_max(c));
		alg = 0.5 * bus * tree_factor(p, S);
	}
	return alg;
}

/* NCCL's tuner prices a broadcast's or reduce's ring -- a chain from the
 * root, or to it -- by one hop when its graph's channels all take the
 * same path through the node, and by a hop per rank otherwise:
 * "if (graphs[a]->sameChannels) { comm->latencies[coll][a][p] += lat; }
 * else { // Add some chunk latency, waiting for proper chunk modeling /
 * if (p == NCCL_PROTO_SIMPLE) lat = hwLat[hw[a]][NCCL_ALGO_TREE][p];
 * comm->latencies[coll][a][p] += nsteps*lat; }", nsteps = nRanks, lat =
 * hwLat[hw[a]][RING][p], hw[a] the network across nodes (ncclTopoTuneModel,
 * NVIDIA/nccl src/graph/tuning.cc, 2.24.3 as on master).  Its search tries
 * the same channels first and keeps them when they reach the node's
 * bandwidth (ncclTopoCompute, search.cc): an NVLink node does, its rings
 * logged with "sameChannels 1" on one A100 node and on 8-NIC H100 nodes
 * (NVIDIA/nccl#1197: "Pattern 4, crossNic 0, nChannels 12, bw 30/30, type
 * NVL/PIX, sameChannels 1"); PCIe nodes log "sameChannels 0" (nccl#601,
 * 4 GPUs and 4 NICs a node over SYS paths).  The time of the protocol it
 * picks is the chain's own (price_ring: every hop of the chain), so only
 * the ranking follows this: on 4 x 8 H100 it runs LL to 128 KiB, LL128 to
 * 4 MiB and Simple from 8 MiB, where the chain's n - 1 hops kept LL to
 * 512 KiB and LL128 to 64 MiB. */
static double chain_nccl_lat(const comm_ctx *c, gp_proto p)
{
	int net = c->nn > 1;
	/* the ring's hwLat, one rank a node too (hop_net's tree value is
	 * NCCL's for the other rings' network steps, not for this one) */
	double hop = net ? c->lat_net + c->t->nic_nccl.ring_step[p] :
		     hop_up(c, p);

	if (c->kind_up == GP_LINK_NVLINK)
		return base(c, p) + hop;
	if (p == GP_PROTO_SIMPLE)
		hop = net ? tree_hop_net(c, p) : tree_hop_up(c, p);
	return base(c, p) + c->n * hop;
}

/* NCCL's tuner prices NVLS by its bandwidth alone ("busBw = ..
 * graphs[a]->bwIntra * nvlsEfficiency"), without its pipeline's fill
 * (nvls_fill), its loops' steps (nvls_steps) or the proxy's posts
 * (nvls_tree_posts), so its estimate
 * is the streaming time; across nodes it ranks NVLS_TREE with its
 * release's network step (nvls_tree_rank_us), not the tree's that the
 * time has (a release without NVLS is refused by price_nvls).  Its tree
 * has no fill of the network hops (tree_net_fill). */
/* NCCL 2.19 to 2.27 rank NVLS_TREE across more than 2 nodes at its NVLS
 * graph's channels (a head a GPU with a NIC) x min(bwIntra, bwInter / 2),
 * times 5/6 for its algbw: "if (a == NCCL_ALGO_NVLS_TREE) bw =
 * std::min(graphs[a]->bwIntra, nNodes <= 2 ? graphs[a]->bwInter :
 * graphs[a]->bwInter/2)", "busBw = graphs[a]->nChannels * bw", "else if
 * (a == NCCL_ALGO_NVLS || a == NCCL_ALGO_NVLS_TREE) ratio *= 5.0/6.0"
 * (src/graph/tuning.cc ncclTopoTuneModel at v2.19.1 .. v2.27.7; 2.18 had
 * a ratio of .70 x N / 2(N-1), not modelled; 2.28.3 replaced both with
 * per-channel caps, the nvls_tree_bw the streaming time already has).
 * bwInter: the NVLS search raises it to the NIC's speed
 * (net_search_speed: 48 GB/s at 400 Gb/s; the NVLS graph is not
 * duplicated, ncclTopoDupChannels returns first for it); bwIntra: each
 * NVLS channel loads every GPU's NVSwitch port once and its head's twice
 * (ncclTopoSearchTryNvls), so no more than the port over heads + 1 (on 8 x
 * H100, 450 GB/s / 9 = 50; NCCL's own 370.8 / 9 snaps to 40 GB/s), above
 * bwInter / 2 on every NIC modelled.  On 4 x 8 H100 with 8 x 400 Gb/s
 * that is 8 x 24 x 5/6 = 160 GB/s, below the ring's algbw as NCCL ranks
 * it (nccl_algbw: its busBw, min(NVLink, NICs) = 369 GB/s here, x n /
 * nsteps = 32/62: 190 GB/s), so NCCL of those releases leaves NVLS_TREE
 * for the ring at large sizes on 3 or more nodes, where the streaming
 * time (nvls_stream: 2 S over the node's 376 GB/s of NICs, 188 GB/s of
 * algbw) ranked it first.  Returns the algbw, B/s, or 0 where this does
 * not apply. */
static double nvls_tree_nccl_algbw(const comm_ctx *c)
{
	int v = c->t->nccl_version;
	double heads = nvls_heads(c), inter, intra;

	if (c->nn <= 2 || v < 21901 || v >= 22800 || heads < 2.0)
		return 0.0;
	inter = net_search_speed(c) * 1e9;
	intra = c->t->up.bw / (heads + 1.0);
	if (inter <= 0.0)
		return 0.0;
	return heads * min2(intra, inter / 2.0) * 5.0 / 6.0;
}

double comm_nccl_estimate(const comm_ctx *c, gp_algo a, gp_proto p,
			  double lat, double bwt)
{
	double alg = nccl_algbw(c, a, p, 1.0, 1);

	if (a == GP_ALGO_RING && alg > 0.0 &&
	    (c->op == GP_BROADCAST || c->op == GP_REDUCE))
		return chain_nccl_lat(c, p) + c->bytes / alg;
	if (a == GP_ALGO_RING) {
		double w = ring_proxy_wait(c, p) + ring_net_extra(c, p);

		if (c->nn > 1 && p == GP_PROTO_SIMPLE &&
		    c->op == GP_ALL_REDUCE)
			w *= RING_PLATEAU;
		lat -= w + ring_window_wait(c, p, bwt);
	}
	if (a == GP_ALGO_TREE)
		lat -= 2.0 * ilog2(c->nn) * tree_net_fill(c, p);
	if (a == GP_ALGO_NVLS && c->op == GP_ALL_REDUCE) {
		double step = nvls_tree_rank_us(c);
		double old = nvls_tree_nccl_algbw(c);

		bwt = old > 0.0 ? c->bytes / old : nvls_stream(c);
		if (c->nn > 1)
			lat += 2.0 * ilog2(c->nn) *
			       (c->lat_net + (step - NVLS_TREE_WIRE_US) * US -
				tree_hop_net(c, GP_PROTO_SIMPLE));
	}

	return alg > 0.0 ? lat + c->bytes / alg : lat + bwt;
}
