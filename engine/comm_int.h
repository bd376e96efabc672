/*
 * comm_int.h - what comm.c and comm_algo.c share: the context of one
 * collective on a placed group and the price of one algorithm on it.
 * Internal to the engine's collective model; the contract is comm.h.
 */
#ifndef GP_COMM_INT_H
#define GP_COMM_INT_H

#include "comm.h"

/* Everything an algorithm needs, derived once per call. */
typedef struct comm_ctx {
	gp_coll op;
	double bytes;
	int n;          /* ranks */
	int g;          /* ranks per node: the fewest on one of its nodes
			 * (comm.h gp_group), which bounds the NICs */
	int gmax;       /* the most on one node, at most ranks - (nn - 1)
			 * x g: the longest chain inside a node (a tree's
			 * chain, a ring's hops between crossings) */
	int nn;         /* nodes used */
	double bu;      /* achievable scale-up B/s per GPU per direction */
	double bn;      /* achievable NIC B/s per node per direction */
	double bnic;    /* achievable B/s of one NIC */
	double path;    /* B/s one GPU moves to or from its NICs: its PCIe
			 * link (nic_path_bw), at the host-staged share
			 * without GPUDirect RDMA (nic_gdr_off); 0 = no
			 * limit beyond the NICs */
	double nic_use; /* NICs per node the group drives (bn / NIC rate) */
	double rails;   /* NICs in each device NCCL sees (1 unless the
			 * plugin joins a GPU's NICs: nccl.rails) */
	double lat_up;  /* scale-up hop latency, s */
	double lat_net; /* network hop latency, s */
	gp_link_kind kind_up; /* GP_LINK_NVLINK or GP_LINK_PCIE */
	const gp_topo *t;
} comm_ctx;

static inline double min2(double a, double b)
{
	return a < b ? a : b;
}

static inline double max2(double a, double b)
{
	return a > b ? a : b;
}

/* Price one (algorithm, protocol).  Returns 0 and sets *lat, *bwt when it
 * applies; otherwise returns 1 and leaves a reason in *why. */
int comm_price(const comm_ctx *c, gp_algo a, gp_proto p, double *lat,
	       double *bwt, const char **why);

/* NCCL's tuner's estimate of (algorithm, protocol) priced at lat + bwt,
 * s: what NCCL ranks them by (comm_algo.c). */
double comm_nccl_estimate(const comm_ctx *c, gp_algo a, gp_proto p,
			  double lat, double bwt);

/* The CTAs (NCCL channels) one send/recv stream of c->bytes runs on
 * (comm_algo.c). */
double comm_p2p_stream_channels(const comm_ctx *c);

/* 1 when the library routes an all-to-all's remote sends through the
 * destination's rail GPU (PXN) with no choice left to a tuner
 * (comm_algo.c). */
int comm_pxn_routes(const comm_ctx *c);

#endif
