/*
 * comm.h - cost of collective communication on a GPU topology.
 *
 * The model is alpha-beta (Hockney): time = latency + bytes / bandwidth,
 * priced per algorithm (ring, double binary tree, in-switch reduction,
 * hierarchical, rail-routed all-to-all) and per protocol (LL, LL128,
 * Simple, as in NCCL).  The pair that runs is the one NCCL's tuner ranks
 * cheapest by its own estimate (src/graph/tuning.cc, src/enqueue.cc in
 * NVIDIA/nccl), which is not always the fastest: the time reported is
 * that pair's price.  Hierarchical runs only when forced (NCCL has no
 * such algorithm).
 *
 * Results follow the nccl-tests conventions (doc/PERFORMANCE.md):
 *   algbw = bytes / time
 *   busbw = algbw * 2(n-1)/n   all-reduce
 *         = algbw * (n-1)/n    all-gather, reduce-scatter, all-to-all
 *         = algbw              broadcast, reduce, send/recv
 * where `bytes` is the total buffer for all-gather and reduce-scatter
 * (what each rank holds after the all-gather), the per-rank send buffer for
 * all-to-all, and the message for the others.
 *
 * Units: bytes, seconds, bytes/s.  Link bandwidth is per direction, per GPU
 * (scale-up) or per NIC (scale-out).  Every struct is caller-owned; nothing
 * here allocates, prints or keeps state, and a call costs a few hundred
 * floating-point operations.
 */
#ifndef GP_COMM_H
#define GP_COMM_H

#include "common.h"

/* Collectives, in nccl-tests naming. */
typedef enum gp_coll {
	GP_ALL_REDUCE = 0,
	GP_ALL_GATHER,
	GP_REDUCE_SCATTER,
	GP_ALL_TO_ALL,
	GP_BROADCAST,
	GP_REDUCE,
	GP_SEND_RECV,
	GP_COLL_COUNT
} gp_coll;

/* Algorithms.  Which ones apply depends on the collective and topology:
 *   RING   pipelined ring over all ranks (flat across nodes, like NCCL's)
 *   TREE   NCCL double binary tree: chain inside a node, two complementary
 *          binary trees across nodes (all-reduce only)
 *   NVLS   reduction/multicast inside the NVSwitch (Hopper+ NVLink Switch
 *          "SHARP"); across nodes it is NCCL's NVLS_TREE
 *   SHARP  in-network reduction in the IB switches (NCCL CollNet)
 *   HIER   intra-node reduce-scatter -> inter-node ring all-reduce on each
 *          rail -> intra-node all-gather, phases run one after another
 *   P2P    direct pairwise transfers (all-to-all, send/recv)
 *   PXN    all-to-all across nodes with rail routing: traffic to a remote
 *          GPU first hops over NVLink to the local GPU on the same rail */
typedef enum gp_algo {
	GP_ALGO_RING = 0,
	GP_ALGO_TREE,
	GP_ALGO_NVLS,
	GP_ALGO_SHARP,
	GP_ALGO_HIER,
	GP_ALGO_P2P,
	GP_ALGO_PXN,
	GP_ALGO_COUNT
} gp_algo;

/* NCCL's pool of point-to-point channels on a node: an all-to-all (a
 * batch of sends and receives) spreads over up to this many channels, each
 * one CTA of its kernel ("32 p2p channels, 32 p2p channels per peer" on
 * 8 x H100, NVIDIA/nccl#1259's log; src/graph/paths.cc
 * ncclTopoComputeP2pChannels: min(nChannels, NCCL_MAX_P2P_NCHANNELS), a
 * power of two).  comm_algo.c prices the p2p bandwidth on it; the
 * training step counts the SMs its kernel takes from the compute beside
 * it (train_stage.c ep_slowdown). */
#define GP_NCCL_P2P_CHANNELS 32

/* NCCL protocols: LL (8-byte stores, half of them flags), LL128 (128-byte
 * lines, 120 bytes of data) and Simple (bulk copies + a fence per step). */
typedef enum gp_proto {
	GP_PROTO_LL = 0,
	GP_PROTO_LL128,
	GP_PROTO_SIMPLE,
	GP_PROTO_COUNT
} gp_proto;

/* Kind of a link (a catalog fabric's `kind`): whether LL128 is safe on it
 * and NCCL's default per-step overheads for it (comm_nccl_default).  The
 * scale-up link is NVLINK or PCIE; the NICs are NET. */
typedef enum gp_link_kind {
	GP_LINK_NVLINK = 0,   /* point-to-point links that keep 128-byte
			       * writes whole: NVLink, NVSwitch, NVLink
			       * bridges, xGMI, on-board RoCE */
	GP_LINK_PCIE,         /* PCIe peer-to-peer or through host memory */
	GP_LINK_NET           /* a NIC's network (IB, RoCE, EFA) */
} gp_link_kind;

/* NCCL's tuning terms of one link (a catalog fabric's `nccl` block), in
 * seconds: the latency a ring step and a tree step add to the link's own
 * hop latency per protocol (indexed by gp_proto), the share of the
 * achievable link rate LL128 carries, and for an NVLink
 * switch that reduces in-network, the fraction of the achievable link
 * rate NVLS's multimem operations reach and its per-call latency, and the
 * ring/tree channels NCCL runs on the link.
 * comm_nccl_default fills NCCL 2.30.7's figures for a link kind. */
/* One region of a network plugin's tuner (nccl.regions): the polygon in
 * the (message bytes, ranks) plane where it makes NCCL run algo with
 * proto.  Its vertices, in order, are nv points of the gp_nccl's shared
 * pool from `first` on (x bytes, y ranks): one pool sized for all the
 * regions together keeps the topology small, which the training memo
 * copies and compares on every evaluation. */
#define GP_REGION_VERTICES 24
#define GP_REGIONS 8
#define GP_REGION_POINTS 64
typedef struct gp_region {
	int algo;             /* gp_algo */
	int proto;            /* gp_proto */
	int nv;               /* vertices, 3..GP_REGION_VERTICES */
	int first;            /* its first vertex in the pool */
} gp_region;

typedef struct gp_nccl {
	double ring_step[GP_PROTO_COUNT]; /* s: LL, LL128, Simple */
	double tree_step[GP_PROTO_COUNT]; /* s: LL, LL128, Simple */
	double nvls_eff;      /* (0, 1]; read only when the link has NVLS */
	double ll128_eff;     /* (0, 1]: the share of the achievable link
			       * rate LL128 carries (120/128 by default) */
	double nvls_lat;      /* s per NVLS call */
	double channels;      /* NCCL's ring/tree channels on this link (its
			       * "coll channels"), 1..64; 0 = unknown: no
			       * fewer channels at small sizes */
	double nvls_channels; /* NCCL's NVLS channels (thread blocks), 1..64;
			       * read only when the link has NVLS */
	double nvls_channels_nodes; /* the same for a communicator that
			       * spans nodes where NCCL gives it another
			       * count, 1..64; 0 = nvls_channels */
	int rails;            /* 1: the network plugin shows NCCL the NICs
			       * nearest each GPU as one device at their
			       * summed speed (aws-ofi-nccl's multi-rail
			       * RDMA protocol); read only for the network */
	double tree_share;    /* (0, 1]: the share of the network rate the
			       * all-reduce tree reaches across 3 or more
			       * nodes against the ring (1 by default); read
			       * only for the network */
	double completion;    /* s, 0..1: how long a message's completion
			       * takes to reach the proxy once the message
			       * has crossed (0 by default); read only for
			       * the network */
	int max_recvs;        /* 1..64: the receives the network plugin
			       * takes in one call (its maxRecvs; NCCL's
			       * own IB transport 8 by default), the
			       * senders whose PXN messages a proxy posts
			       * for at once; read only for the network */
	int region_ppn;       /* ranks per node the regions are for (0:
			       * no regions); read only for the network */
	int nregions;         /* 0..GP_REGIONS */
	gp_region region[GP_REGIONS]; /* the plugin tuner's all-reduce
			       * regions, first match wins, on 3 nodes or
			       * more (nccl.regions) */
	int region_points;    /* vertices in the pool, 0..GP_REGION_POINTS */
	double region_x[GP_REGION_POINTS]; /* their bytes */
	double region_y[GP_REGION_POINTS]; /* their ranks */
} gp_nccl;

/* One link class.  bw > 0 (B/s per direction), latency >= 0 (s per hop),
 * 0 < achievable <= 1 (fraction of bw a long stream sustains). */
typedef struct gp_link {
	double bw;
	double latency;
	double achievable;
} gp_link;

typedef struct gp_topo {
	int gpus_per_node;    /* GPUs in one scale-up domain (a "node") */
	int nodes;            /* scale-up domains available */
	gp_link_kind up_kind; /* scale-up link kind */
	gp_link up;           /* scale-up bandwidth per GPU */
	int up_nvls;          /* 1: the switch reduces in-network (NVLS) */
	int up_crosses_cpu;   /* 1: PCIe traffic goes through the CPU root
			       * complex / host memory (no direct P2P) */
	int up_mesh_peers;    /* > 0: the scale-up is a full mesh of direct
			       * links, up.bw split evenly over this many
			       * peers (Gaudi's 21 scale-up ports, 3 to each
			       * of 7 peers): a group of g GPUs of one node
			       * reaches its g - 1 peers over their links
			       * only, (g - 1) / up_mesh_peers of up.bw
			       * (comm.c setup); 0: a switch, every group
			       * at the whole up.bw */
	int nics;             /* NICs per node (0: no scale-out) */
	gp_link nic;          /* one NIC; ignored when nics == 0 */
	int nic_sharp;        /* 1: the IB fabric reduces in-network (SHARP) */
	double nic_path_bw;   /* B/s per direction one GPU can push to the
			       * NICs: its PCIe link (achievable); 0 = no
			       * limit beyond the NICs */
	int nic_gdr_off;      /* 1: NCCL moves the GPU's network data
			       * without GPUDirect RDMA (the GPU-NIC path is
			       * farther than NCCL_NET_GDR_LEVEL allows:
			       * paths.cc ncclTopoCheckGdr), staged through
			       * host memory, so nic_path_bw carries it at
			       * the host-staged share (comm.c setup);
			       * 0: GPUDirect RDMA */
	double nvls_tree_bw[2]; /* NVLS_TREE (NVLS in the node, a tree across
			       * nodes): the most bus bandwidth, B/s, one
			       * head (a GPU with its NIC) carries, [0] on 2
			       * nodes, [1] on 3 or more; 0 = no such limit.
			       * A per-thread-block ceiling of the GPU
			       * generation (NCCL perChMaxNVLSTreeBws) */
	double tree_ch_bw[2]; /* the most bus bandwidth NCCL's tuner lets one
			       * channel of the tree carry across nodes, B/s,
			       * [0] on 2 nodes, [1] on 3 or more: its
			       * perChMaxTreeBws row for the GPU generation,
			       * which it ranks the tree by; 0 = no ceiling */
	double tree_ll128_ch_bw[2]; /* the most bus bandwidth NCCL's tuner
			       * lets one tree channel carry with LL128
			       * across nodes, B/s, [0] on 2 nodes, [1] on 3
			       * or more: its perChMaxTreeLL128Bws row for
			       * the GPU generation; with tree_ch_bw x
			       * 120/128 it bounds the LL128 tree's time and
			       * ranks it; 0 = no ceiling */
	double tree_tune_ch_bw[2]; /* tree_ch_bw as NCCL releases before
			       * tree_tune_until ranked the tree by (their
			       * perChMaxTreeBws row), B/s, [0] on 2 nodes,
			       * [1] on 3 or more; 0 = the same as tree_ch_bw.
			       * Ranks only: the tree's own time keeps
			       * tree_ch_bw */
	int tree_tune_until;  /* the first release (code) of tree_ch_bw's
			       * row; 0 = none */
	double ring_ll128_ch_bw; /* the most bus bandwidth NCCL's tuner lets
			       * one ring channel carry with LL128, B/s: its
			       * perChMaxRingLL128Bws row for the GPU
			       * generation, which it ranks the LL128 ring
			       * by across nodes; not a rate LL128 reaches;
			       * 0 = no ceiling */
	double p2p_nvl_ch_bw; /* B/s one p2p channel (one CTA) moves to a
			       * peer it writes to over NVLink, for the
			       * GPU's generation where a log measures it
			       * (Hopper: NCCL's per-lane SM90_NVLINK_BW);
			       * 0 = P2P_CH_BW, NCCL's 14 GB/s network
			       * figure (comm_algo.c) */
	int host_amd;         /* 1: the nodes' CPUs are AMD x86, whose proxy
			       * threads NCCL prices slower (2 us a network
			       * post, LL across nodes <= 22.5 / 19.0 GB/s);
			       * 0: Intel, Arm or unknown (1 us, 39 / 20.4) */
	int p2p_read;         /* 1: NCCL moves NVLink peer-to-peer data by
			       * reads from the sender's buffer (compute
			       * capability 8.0); 0: by writes into the
			       * receiver's (every other part) */
	int nic_c2c;          /* 1: the NICs hang off the host CPU, which
			       * the GPU reaches over NVLink-C2C (GB200,
			       * GB300): NCCL before 2.27.3 sees the GPU's
			       * path to them as PHB and runs no LL128
			       * across nodes (comm_algo.c comm_price);
			       * 0: PCIe-attached NICs */
	double base_lat[GP_PROTO_COUNT]; /* the collective library's per-call
			       * base latency by protocol, s (RCCL's
			       * baseLat: comm_algo.c base); 0 = NCCL's
			       * own (6.6/14/8.4 us ring, 6.8/14/8.4
			       * tree) */
	int ll128_off;        /* 1: the collective library runs no LL128
			       * on this part (RCCL on CDNA 3 and 4 without
			       * a Rome model's ll128Enabled; comm_algo.c
			       * comm_price); 0: LL128 where the links
			       * allow it */
	int pxn_off;          /* 1: the collective library relays no send
			       * through the NIC's own GPU (PXN off by
			       * default: RCCL), so a ring leaves a node
			       * from its last GPU's own NIC and that GPU's
			       * links carry none of it (comm_algo.c
			       * ring_up_share); 0: NCCL's PXN */
	double ll_max_bw;     /* NCCL's ceiling on the LL protocol's bus
			       * bandwidth on one node, B/s: its tuner's
			       * llMaxBws row for the GPU generation; what
			       * it ranks LL by, not a rate LL reaches; 0 =
			       * no ceiling */
	double host_mem_bw;   /* B/s of host DRAM the node's CPUs stream
			       * (all sockets, achievable): what an
			       * offloaded optimizer step reads and writes
			       * at, and what bounds scale-up traffic staged
			       * through host memory (up_crosses_cpu); 0 =
			       * unknown (train.c's HOST_BW_MIN, no bound) */
	double host_memory;   /* bytes of host DRAM of one node, all its
			       * hosts (a catalog system's host_memory):
			       * what the offloaded states of its GPUs
			       * share (memory.h mem_host_fit); 0 =
			       * unknown, not checked */
	gp_nccl up_nccl;      /* NCCL's terms for the scale-up link */
	gp_nccl nic_nccl;     /* and for the network (NET defaults) */
	int host_gpus;        /* GPUs of one host (the OS a launcher starts
			       * ranks on), 0..gpus_per_node; 0: the node
			       * is one host.  Fewer: a node is an NVLink
			       * domain of several hosts (GB200 NVL72: 4),
			       * where training places its groups in equal
			       * shares (layout.h layout_fill_place) */
	int nccl_version;     /* the NCCL release whose tuner picks the
			       * algorithm, as NCCL_VERSION_CODE (2.20.5 =
			       * 22005), 20000..99999; 0 = the latest
			       * modelled (2.30.7).  How the tuner ranks
			       * NVLS_TREE and counts a ring's network steps
			       * depend on it, and whether NVLS, PXN and
			       * SHARP (CollNet) run at all. */
} gp_topo;

/* NCCL 2.30.7's tuning terms for a link of kind k (see comm_topo.c for each
 * figure's source) into *out. */
void comm_nccl_default(gp_link_kind k, gp_nccl *out);

/* Start a topology: all zero, scale-up link of kind up_kind, both links'
 * NCCL terms at comm_nccl_default.  The caller fills the rest. */
void comm_topo_init(gp_topo *t, gp_link_kind up_kind);

/* Where the ranks of one collective sit: `ranks` GPUs, `per_node` of them
 * in each of the ranks / per_node nodes the group spans, and `sharing`
 * groups of the same kind with ranks on each of those nodes that run
 * their collectives at the same time (the data-parallel groups of a
 * TP = 8 layout on 8-GPU nodes: 1 rank per node, 8 groups sharing each
 * node's NICs).  A group gets 1 / sharing of each node's NIC bandwidth,
 * never more NICs than its GPUs reach (a GPU drives the NICs on its own
 * PCIe switch: nics / gpus_per_node of them, at least one; NICs of GPUs
 * outside the group stay idle), and never more than per_node GPUs' paths
 * to the NICs (nic_path_bw).
 *
 * A launcher fills nodes rank by rank (layout.h layout_fill_of), so a
 * group can sit unevenly: DP 5 at stride 4 on 8-GPU nodes holds 2 + 2 + 1
 * ranks on 3 nodes.  nodes > 0 gives the nodes it spans, and per_node is
 * then the fewest of its ranks on one of them (ranks >= per_node x nodes;
 * sharing the most groups of the kind on one node).  The collective is
 * priced on that node: each of NCCL's rings enters and leaves every node
 * once (comm_algo.c ring_steps), so every node's NICs carry the same
 * ring-width of traffic, and the node whose few GPUs reach the fewest
 * NICs is the ring's slowest hop; and NCCL itself runs every rank on the
 * poorest rank's search, taking after its all-gather of each rank's
 * graph "graphs[a]->nChannels = std::min(allGather3Data[i].graphInfo[a].
 * nChannels, ...)" and "graphs[a]->bwInter = std::min(allGather3Data[i].
 * graphInfo[a].bwInter, graphs[a]->bwInter)" (NVIDIA/nccl src/init.cc
 * initTransportsRank).  A group on one node (nodes 1, per_node = ranks)
 * stays on the scale-up links.  nodes 0: equal shares, ranks / per_node
 * nodes. */
typedef struct gp_group {
	int ranks;
	int per_node;
	int sharing;
	int nodes;
} gp_group;

typedef struct gp_comm_result {
	double time;          /* s, latency + bw_time */
	double latency;       /* s, the size-independent part */
	double bw_time;       /* s, the bytes / bandwidth part */
	double algbw;         /* B/s, bytes / time */
	double busbw;         /* B/s, algbw * nccl-tests bus factor */
	gp_algo algo;         /* algorithm priced (or chosen) */
	gp_proto proto;       /* protocol priced (or chosen) */
	int nodes;            /* nodes the gpus span */
	int ppn;              /* GPUs per node used */
} gp_comm_result;

/* Check a topology: positive counts, finite positive bandwidths, finite
 * non-negative latencies (the NCCL step terms included, at most 1 s),
 * achievable and NVLS efficiency in (0, 1].  GP_OK or GP_EINVAL. */
int comm_topo_check(const gp_topo *t, gp_error *err);

/* 1 when a node of t is an NVLink domain of several hosts (host_gpus
 * set below gpus_per_node: GB200 NVL72), where training places its
 * groups in equal shares a domain (layout.h layout_fill_place, its
 * gp_place_key domain); 0 when a node is one host.  The one place of
 * this rule. */
static inline int comm_topo_domain(const gp_topo *t)
{
	return t->host_gpus > 0 && t->host_gpus < t->gpus_per_node;
}

/* Cost of collective `op` on `gpus` ranks of topology t moving `bytes`
 * (see the conventions above).  Ranks fill nodes in order: gpus <=
 * gpus_per_node stays in one node; more span ceil(gpus / gpus_per_node)
 * nodes, at most t->nodes, the last one partial when gpus_per_node does
 * not divide gpus, and price on it (gp_group: the launcher's placement of
 * one group of consecutive ranks).  Chooses the algorithm
 * and protocol NCCL's tuner would (see above).  bytes == 0 costs 0 (as
 * nccl-tests skips empty calls).  GP_OK and *out filled, or GP_EINVAL (bad topology,
 * gpus < 1, too many gpus, bytes negative or not finite, op out of range)
 * with the reason in err and *out untouched. */
int comm_cost(const gp_topo *t, gp_coll op, double bytes, int gpus,
	      gp_comm_result *out, gp_error *err);

/* Cost of collective `op` on the placed group g of topology t (see
 * gp_group): per_node in 1..gpus_per_node, the nodes it spans at most
 * t->nodes, sharing >= 1 with per_node * sharing <= gpus_per_node; with
 * nodes 0 (equal shares) per_node divides ranks; with nodes > 0 ranks is
 * at least per_node * nodes and at most nodes * gpus_per_node (nodes 1:
 * per_node = ranks).  Otherwise as comm_cost, which is this function
 * with ranks filling nodes in order (nodes = ceil(gpus / gpus_per_node),
 * per_node the last node's, sharing 1). */
int comm_group_cost(const gp_topo *t, gp_coll op, double bytes,
		    const gp_group *g, gp_comm_result *out, gp_error *err);

/* The NCCL channels (one CTA of its kernel each, an SM taken from the
 * compute beside it) that one send/recv stream of `bytes` on the placed
 * group g runs on, as comm_group_cost prices GP_SEND_RECV: a peer in the
 * node its share of the node's p2p channels, a peer across nodes
 * NCCL's channels per network peer.  GP_OK, or GP_EINVAL as
 * comm_group_cost. */
int comm_group_p2p_channels(const gp_topo *t, double bytes,
			    const gp_group *g, double *nch, gp_error *err);

/* As comm_cost but priced with algorithm `algo` (the protocol NCCL's tuner
 * picks for it, as under NCCL_ALGO).
 * GP_EINVAL also when algo does not apply to op on this topology (e.g.
 * NVLS without an NVLS switch), naming why. */
int comm_cost_algo(const gp_topo *t, gp_coll op, gp_algo algo,
		   double bytes, int gpus, gp_comm_result *out,
		   gp_error *err);

/* comm_cost_algo on the placed group g (see comm_group_cost). */
int comm_group_cost_algo(const gp_topo *t, gp_coll op, gp_algo algo,
			 double bytes, const gp_group *g,
			 gp_comm_result *out, gp_error *err);

/* nccl-tests bus-bandwidth factor of op on n ranks (0 for n < 1 or a bad
 * op; all-reduce on 1 rank: 0, as nccl-tests prints). */
double comm_bus_factor(gp_coll op, int n);

/* Names ("all_reduce", "ring", "ll128"); "?" out of range. */
const char *comm_coll_name(gp_coll op);
const char *comm_algo_name(gp_algo a);
const char *comm_proto_name(gp_proto p);

/* Parse a collective name ("all_reduce", also "allreduce"/"all-reduce");
 * GP_OK and *out set, or GP_EINVAL.  Same for algorithms. */
int comm_coll_parse(const char *name, gp_coll *out);
int comm_algo_parse(const char *name, gp_algo *out);

#endif
