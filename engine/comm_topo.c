/*
 * comm_topo.c - what a collective's topology and names are: the defaults
 * of a fabric's NCCL terms per link kind, the checks a topology passes
 * before it is priced, and the names of collectives, algorithms and
 * protocols.  The pricing itself is comm.c.
 */
#include "comm.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#define US 1e-6

/* ---- a fabric's NCCL defaults ------------------------------------------- */

/* The defaults of a fabric's `nccl` block (comm_nccl_default), per link
 * kind; a catalog fabric may give its own.
 *
 * Extra latency per pipeline step on top of the link's own hop latency, us.
 * LL signals with a flag inside each 8-byte word, so a step costs only the
 * wire; LL128 waits for a full 128-byte line; Simple writes data, issues a
 * memory fence and then a separate flag (and across the network the proxy
 * must also flush the GPUDirect RDMA write, hence the large NET value).
 * Figures: differences between NCCL 2.30.7 hwLat columns (tuning.cc) and
 * their LL column: NVLink ring 0.6/1.9/3.4, PCI 1.0/2.5/5.7, NET
 * 2.7/4.0/14.0 us. */
enum { LINK_NVL = GP_LINK_NVLINK, LINK_PCI = GP_LINK_PCIE,
       LINK_NET = GP_LINK_NET, LINK_COUNT };
static const double step_extra_us[LINK_COUNT][GP_PROTO_COUNT] = {
	{0.0, 1.3, 2.8},        /* NVLink */
	{0.0, 1.5, 4.7},        /* PCIe */
	{0.0, 1.3, 11.3},       /* network */
};

/* The same for a step of the double binary tree, and for a ring's
 * network step when each node holds one rank: NCCL 2.30.7 hwLat[.][TREE]
 * NVLink 0.6/1.25/4.0, PCI 1.0/1.9/4.0, NET 5.0/8.5/14 us, less the ring's
 * LL value the catalog carries as the link latency (0.6, 1.0, 2.7).  On
 * the network a tree node waits for its children before it forwards, and
 * with one rank per node no NVLink step hides the proxy's post and poll
 * ("with ppn=1 latencies are fully exposed, use the Tree network
 * latency", ncclTopoTuneModel). */
static const double tree_extra_us[LINK_COUNT][GP_PROTO_COUNT] = {
	{0.0, 0.65, 3.4},       /* NVLink */
	{0.0, 0.9, 3.0},        /* PCIe */
	{2.3, 5.8, 11.3},       /* network */
};

/* NVLS (NVLink SHARP): multimem loads/stores through the NVSwitch reach
 * 0.85 of the link rate a plain copy reaches on Hopper (NCCL 2.30.7
 * nvlsEfficiency[Hopper]), the default of a fabric's nccl.nvls_efficiency;
 * NVLink 5 (Blackwell) gives NCCL's 0.74 in its catalog entry.
 * Check: H100 450 GB/s x 0.82 (ring achievable) x 0.85 x 8/9 = 279 GB/s
 * algbw = 488 GB/s busbw vs 480 measured (GTC S62129, cited in
 * nccl#1374); H800 200 x 0.82 x 0.85 x 8/9 x 1.75 = 217 vs 215 (nccl#1374).
 */
#define NVLS_EFF 0.85

/* NVLS per-call latency, us: a multicast barrier through the switch at the
 * start and end of the kernel; NCCL 2.21-2.30 price NVLS on NVLink at 25 us
 * and no base (tuning.cc hwLat[NVLINK][NVLS][SIMPLE]). */
#define NVLS_LAT_US 25.0

/* NVLS channels (thread blocks) NCCL runs on Hopper: "#define
 * NVLS_NCHANNELS_SM90 16" (NCCL 2.30.7 src/transport/nvls.cc; SM100 32,
 * SM100 NVL 24), the default of a fabric's nccl.nvls_channels. */
#define NVLS_CHANNELS 16.0

/* LL128 carries 120 data bytes in every 128-byte line (a flag word in
 * each; NCCL src/include/device.h), so its payload is 120/128 of the
 * link rate a 128-byte copy reaches, the default of a fabric's
 * nccl.ll128_efficiency; nvlink3 (A100) gives what its curves measure. */
#define LL128_EFF (120.0 / 128.0)

/* The receives a network plugin takes in one irecv call, NCCL's own IB
 * transport's: "#define NCCL_NET_IB_MAX_RECVS 8", "props->maxRecvs =
 * NCCL_NET_IB_MAX_RECVS" (src/transport/net_ib.cc, NCCL 2.27.7), the
 * default of a fabric's nccl.max_recvs. */
#define NET_MAX_RECVS 8

void comm_nccl_default(gp_link_kind k, gp_nccl *out)
{
	int p, i = (int)k >= 0 && (int)k < LINK_COUNT ? (int)k : LINK_NVL;

	for (p = 0; p < GP_PROTO_COUNT; p++) {
		out->ring_step[p] = step_extra_us[i][p] * US;
		out->tree_step[p] = tree_extra_us[i][p] * US;
	}
	out->nvls_eff = NVLS_EFF;
	out->ll128_eff = LL128_EFF;
	out->nvls_lat = NVLS_LAT_US * US;
	out->nvls_channels = NVLS_CHANNELS;
	out->nvls_channels_nodes = 0.0;
	out->channels = 0.0;
	out->rails = 0;
	out->tree_share = 1.0;
	out->completion = 0.0;
	out->max_recvs = NET_MAX_RECVS;
	out->region_ppn = 0;
	out->nregions = 0;
	out->region_points = 0;
}

void comm_topo_init(gp_topo *t, gp_link_kind up_kind)
{
	memset(t, 0, sizeof *t);
	t->up_kind = up_kind;
	comm_nccl_default(up_kind, &t->up_nccl);
	comm_nccl_default(GP_LINK_NET, &t->nic_nccl);
}

/* ---- names -------------------------------------------------------------- */

static const char *const coll_names[GP_COLL_COUNT] = {
	"all_reduce", "all_gather", "reduce_scatter", "all_to_all",
	"broadcast", "reduce", "send_recv",
};
static const char *const algo_names[GP_ALGO_COUNT] = {
	"ring", "tree", "nvls", "sharp", "hierarchical", "p2p", "pxn",
};
static const char *const proto_names[GP_PROTO_COUNT] = {
	"ll", "ll128", "simple",
};

const char *comm_coll_name(gp_coll op)
{
	return ((int)op >= 0 && op < GP_COLL_COUNT) ? coll_names[op] : "?";
}

const char *comm_algo_name(gp_algo a)
{
	return ((int)a >= 0 && a < GP_ALGO_COUNT) ? algo_names[a] : "?";
}

const char *comm_proto_name(gp_proto p)
{
	return ((int)p >= 0 && p < GP_PROTO_COUNT) ? proto_names[p] : "?";
}

/* Compare ignoring '_', '-' and case, so "all-reduce", "allreduce" and
 * "All_Reduce" all match "all_reduce". */
static int name_eq(const char *a, const char *b)
{
	for (;;) {
		while (*a == '_' || *a == '-')
			a++;
		while (*b == '_' || *b == '-')
			b++;
		if (!*a || !*b)
			return *a == *b;
		if ((*a | 0x20) != (*b | 0x20))
			return 0;
		a++;
		b++;
	}
}

struct name_alias {
	const char *name;
	int value;
};

/* The index of name in names[0..n), else the value of its alias (a list
 * ended by a NULL name); -1 for NULL or a name that is neither. */
static int name_find(const char *name, const char *const names[], int n,
		     const struct name_alias *alias)
{
	int i;

	if (!name)
		return -1;
	for (i = 0; i < n; i++)
		if (name_eq(name, names[i]))
			return i;
	for (; alias->name; alias++)
		if (name_eq(name, alias->name))
			return alias->value;
	return -1;
}

int comm_coll_parse(const char *name, gp_coll *out)
{
	static const struct name_alias alias[] = {
		{"sendrecv", GP_SEND_RECV}, {"p2p", GP_SEND_RECV}, {NULL, 0}
	};
	int i = name_find(name, coll_names, GP_COLL_COUNT, alias);

	if (i < 0)
		return GP_EINVAL;
	*out = (gp_coll)i;
	return GP_OK;
}

int comm_algo_parse(const char *name, gp_algo *out)
{
	static const struct name_alias alias[] = {
		{"hier", GP_ALGO_HIER}, {"collnet", GP_ALGO_SHARP}, {NULL, 0}
	};
	int i = name_find(name, algo_names, GP_ALGO_COUNT, alias);

	if (i < 0)
		return GP_EINVAL;
	*out = (gp_algo)i;
	return GP_OK;
}

/* nccl-tests doc/PERFORMANCE.md: the factor that turns algbw into the
 * per-rank bottleneck bandwidth, independent of n. */
double comm_bus_factor(gp_coll op, int n)
{
	if (n < 1)
		return 0.0;
	switch (op) {
	case GP_ALL_REDUCE:
		return 2.0 * (n - 1) / n;
	case GP_ALL_GATHER:
	case GP_REDUCE_SCATTER:
	case GP_ALL_TO_ALL:
		return (double)(n - 1) / n;
	case GP_BROADCAST:
	case GP_REDUCE:
	case GP_SEND_RECV:
		return 1.0;
	default:
		return 0.0;
	}
}

/* ---- topology ----------------------------------------------------------- */

/* A link moves 1 B/s to 1e18 B/s with at most 1 s per hop: a denormal
 * bandwidth (5e-324 B/s) passed as positive and its product with the
 * achievable fraction underflowed to 0, a division by zero in price(). */
#define LINK_MIN_BW 1.0
#define LINK_MAX_BW 1e18
#define LINK_MAX_LAT 1.0

static int link_check(const gp_link *l, const char *what, gp_error *err)
{
	if (!gp_finite(l->bw) || l->bw < LINK_MIN_BW || l->bw > LINK_MAX_BW)
		return gp_fail(err, "%s bandwidth must be %g..%g B/s (got %g)",
			       what, LINK_MIN_BW, LINK_MAX_BW, l->bw);
	if (!gp_finite(l->latency) || l->latency < 0.0 ||
	    l->latency > LINK_MAX_LAT)
		return gp_fail(err, "%s latency must be 0..%g s (got %g)", what,
			       LINK_MAX_LAT, l->latency);
	if (!gp_finite(l->achievable) || l->achievable <= 0.0 ||
	    l->achievable > 1.0)
		return gp_fail(err, "%s achievable must be in (0, 1] (got %g)",
			       what, l->achievable);
	return GP_OK;
}


/* A tuner's regions: each a known algorithm and protocol and 3 or more
 * finite vertices, bytes >= 0 and ranks >= 1. */
static int region_check(const gp_nccl *n, const char *what, gp_error *err)
{
	int i, k;

	if (n->nregions < 0 || n->nregions > GP_REGIONS)
		return gp_fail(err, "%s nccl regions: 0..%d of them (got %d)",
			       what, GP_REGIONS, n->nregions);
	if (n->nregions > 0 && n->region_ppn < 1)
		return gp_fail(err, "%s nccl regions need region_ppn >= 1 "
			       "(got %d)", what, n->region_ppn);
	for (i = 0; i < n->nregions; i++) {
		const gp_region *r = &n->region[i];

		if (r->algo < 0 || r->algo >= GP_ALGO_COUNT ||
		    r->proto < 0 || r->proto >= GP_PROTO_COUNT)
			return gp_fail(err, "%s nccl region %d: unknown "
				       "algorithm or protocol", what, i + 1);
		if (r->nv < 3 || r->nv > GP_REGION_VERTICES)
			return gp_fail(err, "%s nccl region %d: 3..%d "
				       "vertices (got %d)", what, i + 1,
				       GP_REGION_VERTICES, r->nv);
		if (r->first < 0 || n->region_points > GP_REGION_POINTS ||
		    r->first + r->nv > n->region_points)
			return gp_fail(err, "%s nccl region %d: its vertices "
				       "lie outside the %d of all regions "
				       "together (at most %d)", what, i + 1,
				       n->region_points, GP_REGION_POINTS);
		for (k = r->first; k < r->first + r->nv; k++)
			if (!gp_finite(n->region_x[k]) ||
			    n->region_x[k] < 0.0 ||
			    !gp_finite(n->region_y[k]) ||
			    n->region_y[k] < 1.0)
				return gp_fail(err, "%s nccl region %d vertex "
					       "%d: bytes >= 0 and ranks >= 1 "
					       "(got %g, %g)", what, i + 1,
					       k - r->first + 1,
					       n->region_x[k], n->region_y[k]);
	}
	return GP_OK;
}

/* A link's NCCL terms: step latencies 0..1 s (as a hop's), an NVLS
 * efficiency in (0, 1] where the switch reduces. */
static int nccl_check(const gp_nccl *n, int nvls, const char *what,
		      gp_error *err)
{
	int p;

	for (p = 0; p < GP_PROTO_COUNT; p++)
		if (!gp_finite(n->ring_step[p]) || n->ring_step[p] < 0.0 ||
		    n->ring_step[p] > LINK_MAX_LAT ||
		    !gp_finite(n->tree_step[p]) || n->tree_step[p] < 0.0 ||
		    n->tree_step[p] > LINK_MAX_LAT)
			return gp_fail(err, "%s nccl %s step latencies must "
				       "be 0..%g s (got ring %g, tree %g)",
				       what, proto_names[p], LINK_MAX_LAT,
				       n->ring_step[p], n->tree_step[p]);
	if (!gp_finite(n->channels) || n->channels < 0.0 ||
	    n->channels > 64.0 || n->channels != floor(n->channels))
		return gp_fail(err, "%s nccl channels must be an integer "
			       "0..64 (got %g)", what, n->channels);
	if (!gp_finite(n->ll128_eff) || n->ll128_eff <= 0.0 ||
	    n->ll128_eff > 1.0)
		return gp_fail(err, "%s nccl ll128_efficiency must be in "
			       "(0, 1] (got %g)", what, n->ll128_eff);
	if (nvls && (!gp_finite(n->nvls_eff) || n->nvls_eff <= 0.0 ||
		     n->nvls_eff > 1.0))
		return gp_fail(err, "%s nccl nvls_efficiency must be in "
			       "(0, 1] (got %g)", what, n->nvls_eff);
	if (nvls && (!gp_finite(n->nvls_channels) || n->nvls_channels < 1.0 ||
		     n->nvls_channels > 64.0 ||
		     n->nvls_channels != floor(n->nvls_channels)))
		return gp_fail(err, "%s nccl nvls_channels must be an "
			       "integer 1..64 (got %g)", what,
			       n->nvls_channels);
	if (nvls && (!gp_finite(n->nvls_channels_nodes) ||
		     n->nvls_channels_nodes < 0.0 ||
		     n->nvls_channels_nodes > 64.0 ||
		     n->nvls_channels_nodes != floor(n->nvls_channels_nodes)))
		return gp_fail(err, "%s nccl nvls_channels_nodes must be an "
			       "integer 0..64 (got %g)", what,
			       n->nvls_channels_nodes);
	if (nvls && (!gp_finite(n->nvls_lat) || n->nvls_lat < 0.0 ||
		     n->nvls_lat > LINK_MAX_LAT))
		return gp_fail(err, "%s nccl nvls_latency must be 0..%g s "
			       "(got %g)", what, LINK_MAX_LAT, n->nvls_lat);
	if (!gp_finite(n->tree_share) || n->tree_share <= 0.0 ||
	    n->tree_share > 1.0)
		return gp_fail(err, "%s nccl tree_share must be in (0, 1] "
			       "(got %g)", what, n->tree_share);
	if (!gp_finite(n->completion) || n->completion < 0.0 ||
	    n->completion > LINK_MAX_LAT)
		return gp_fail(err, "%s nccl completion must be 0..%g s "
			       "(got %g)", what, LINK_MAX_LAT, n->completion);
	if (n->max_recvs < 1 || n->max_recvs > 64)
		return gp_fail(err, "%s nccl max_recvs must be an integer "
			       "1..64 (got %d)", what, n->max_recvs);
	return region_check(n, what, err);
}

int comm_topo_check(const gp_topo *t, gp_error *err)
{
	if (!t)
		return gp_fail(err, "no topology");
	if (t->gpus_per_node < 1)
		return gp_fail(err, "gpus_per_node must be >= 1 (got %d)",
			       t->gpus_per_node);
	if (t->nodes < 1)
		return gp_fail(err, "nodes must be >= 1 (got %d)", t->nodes);
	if (gp_check_count(t->gpus_per_node, 1, "gpus_per_node", err) ||
	    gp_check_count(t->nodes, 1, "nodes", err) ||
	    gp_check_count(t->nics, 0, "nics", err))
		return GP_EINVAL;
	if (t->up_kind != GP_LINK_NVLINK && t->up_kind != GP_LINK_PCIE)
		return gp_fail(err, "unknown scale-up link kind %d",
			       (int)t->up_kind);
	if (t->gpus_per_node > 1 && (link_check(&t->up, "scale-up", err) ||
	    nccl_check(&t->up_nccl, t->up_nvls, "scale-up", err)))
		return GP_EINVAL;
	if (t->nics < 0)
		return gp_fail(err, "nics must be >= 0 (got %d)", t->nics);
	if (t->up_mesh_peers < 0)
		return gp_fail(err, "up_mesh_peers must be >= 0 (got %d)",
			       t->up_mesh_peers);
	/* A full mesh joins each GPU to every other of its node directly:
	 * fewer peers than gpus_per_node - 1 is no full mesh, and comm.c
	 * setup, which scales the rate by (g - 1) / peers only where that
	 * is below 1, priced such a node as a switch in silence. */
	if (t->up_mesh_peers > 0 && t->up_mesh_peers < t->gpus_per_node - 1)
		return gp_fail(err, "up_mesh_peers %d: a full mesh links each GPU "
			       "to the node's %d others directly; give at least "
			       "%d, or 0 for a switch", t->up_mesh_peers,
			       t->gpus_per_node - 1, t->gpus_per_node - 1);
	if (t->nics > 0 && (link_check(&t->nic, "nic", err) ||
	    nccl_check(&t->nic_nccl, 0, "nic", err)))
		return GP_EINVAL;
	if (t->nodes > 1 && t->nics == 0)
		return gp_fail(err, "%d nodes need nics > 0 to talk", t->nodes);
	if (!gp_finite(t->nic_path_bw) || t->nic_path_bw < 0.0)
		return gp_fail(err, "nic_path_bw must be a finite number >= 0 "
			       "(got %g)", t->nic_path_bw);
	if (!gp_finite(t->host_mem_bw) || t->host_mem_bw < 0.0)
		return gp_fail(err, "host_mem_bw must be a finite number >= 0 "
			       "(got %g)", t->host_mem_bw);
	if (!gp_finite(t->host_memory) || t->host_memory < 0.0)
		return gp_fail(err, "host_memory must be a finite number >= 0 "
			       "(got %g)", t->host_memory);
	if (!gp_finite(t->ll_max_bw) || t->ll_max_bw < 0.0)
		return gp_fail(err, "ll_max_bw must be a finite number >= 0 "
			       "(got %g)", t->ll_max_bw);
	if (t->host_gpus < 0 || t->host_gpus > t->gpus_per_node)
		return gp_fail(err, "host_gpus must be 0..gpus_per_node %d "
			       "(got %d)", t->gpus_per_node, t->host_gpus);
	if (t->nccl_version != 0 &&
	    (t->nccl_version < 20000 || t->nccl_version > 99999))
		return gp_fail(err, "nccl_version must be 0 or a release code "
			       "20000..99999 (got %d)", t->nccl_version);
	/* Each pair by the keys that set it (tree_ch_bw2 / tree_ch_bw3 ...:
	 * "nvls_tree_bw must be ... (got -1, 4.55e+10)" named neither). */
	for (int i = 0; i < 2; i++) {
		if (!gp_finite(t->tree_ch_bw[i]) || t->tree_ch_bw[i] < 0.0)
			return gp_fail(err, "tree_ch_bw%d must be a finite "
				       "number >= 0 (got %g)", i + 2,
				       t->tree_ch_bw[i]);
		if (!gp_finite(t->tree_ll128_ch_bw[i]) ||
		    t->tree_ll128_ch_bw[i] < 0.0)
			return gp_fail(err, "tree_ll128_ch_bw%d must be a "
				       "finite number >= 0 (got %g)", i + 2,
				       t->tree_ll128_ch_bw[i]);
	}
	for (int p = 0; p < GP_PROTO_COUNT; p++) {
		static const char *const names[GP_PROTO_COUNT] = {
			"ll", "ll128", "simple"};
		if (!gp_finite(t->base_lat[p]) || t->base_lat[p] < 0.0 ||
		    t->base_lat[p] > 1.0)
			return gp_fail(err, "base_lat_%s must be a finite "
				       "number of seconds, 0 .. 1 (got %g)",
				       names[p], t->base_lat[p]);
	}
	for (int i = 0; i < 2; i++)
		if (!gp_finite(t->tree_tune_ch_bw[i]) ||
		    t->tree_tune_ch_bw[i] < 0.0)
			return gp_fail(err, "tree_tune_ch_bw%d must be a "
				       "finite number >= 0 (got %g)", i + 2,
				       t->tree_tune_ch_bw[i]);
	if (t->tree_tune_until != 0 &&
	    (t->tree_tune_until < 20000 || t->tree_tune_until > 99999))
		return gp_fail(err, "tree_tune_until must be 0 or a release "
			       "code 20000..99999 (got %d)",
			       t->tree_tune_until);
	if (!gp_finite(t->ring_ll128_ch_bw) || t->ring_ll128_ch_bw < 0.0)
		return gp_fail(err, "ring_ll128_ch_bw must be a finite number "
			       ">= 0 (got %g)", t->ring_ll128_ch_bw);
	if (!gp_finite(t->p2p_nvl_ch_bw) || t->p2p_nvl_ch_bw < 0.0)
		return gp_fail(err, "p2p_nvl_ch_bw must be a finite number "
			       ">= 0 (got %g)", t->p2p_nvl_ch_bw);
	for (int i = 0; i < 2; i++)
		if (!gp_finite(t->nvls_tree_bw[i]) || t->nvls_tree_bw[i] < 0.0)
			return gp_fail(err, "nvls_tree_bw%d must be a finite "
				       "number >= 0 (got %g)", i + 2,
				       t->nvls_tree_bw[i]);
	return GP_OK;
}
