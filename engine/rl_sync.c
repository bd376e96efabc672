/*
 * rl_sync.c - the RL step's weight sync: the trainer's new weights into
 * the rollout engines (rl_int.h).
 */
#include "rl_int.h"

#include <math.h>
#include <string.h>

/* A collective of the sync on group g (0 for one rank). */
static int sync_coll(const gp_topo *t, gp_coll op, double bytes,
		     const gp_group *g, double *acc, gp_error *err)
{
	gp_comm_result r;

	if (g->ranks <= 1 || bytes <= 0)
		return GP_OK;
	if (comm_group_cost(t, op, bytes, g, &r, err))
		return GP_EINVAL;
	*acc += r.time;
	return GP_OK;
}

/* Weight sync (verl's and NeMo RL's refit; OpenRLHF's and slime's NCCL
 * broadcast): the trainer's 16-bit weights are gathered into the slices
 * the rollout engine's ranks hold -- ZeRO-3 shards over the data-
 * parallel group, the stages over the pipeline group, tp / rtp TP
 * slices over part of the TP group (a finer rollout TP cuts its slice
 * from a neighbour's: one send) -- then, disaggregated, the whole
 * model broadcast from the trainer's rank 0 to every rollout GPU, and
 * copied into the engine's buffers (read and write at HBM speed). */
int rl_weight_sync(const gp_model *m, const roof_device *d,
		   const gp_topo *t, const rl_cfg *c, const train_result *u,
		   double gpus_total, double engines, double *time,
		   double *bytes, gp_error *err)
{
	gp_params p;
	gp_topo tt = *t;
	gp_group g;
	roof_op op;
	const gp_layout *lay = &c->train.mem.lay;
	int G = t->gpus_per_node, tp = lay->tp > 0 ? lay->tp : 1;
	int pp = lay->pp > 0 ? lay->pp : 1, rtp = c->roll.tp;
	int rg = c->roll.tp * c->roll.pp;
	double slice, s = 0, nodes;

	if (model_params(m, &p, err))
		return GP_EINVAL;
	slice = p.total * 2.0 / rg;
	*bytes = slice;
	nodes = ceil(gpus_total / G) + 2;
	if (nodes > tt.nodes)
		tt.nodes = nodes > GP_COUNT_MAX ? GP_COUNT_MAX : (int)nodes;
	if (lay->zero == 3 &&
	    sync_coll(&tt, GP_ALL_GATHER, u->mem.params * 2.0,
		      &u->groups[GP_GRP_DPCP], &s, err))
		return GP_EINVAL;
	if (pp > 1 && sync_coll(&tt, GP_ALL_GATHER, p.total * 2.0 / tp,
				&u->groups[GP_GRP_PP], &s, err))
		return GP_EINVAL;
	if (tp > rtp) {
		const gp_group *gt = &u->groups[GP_GRP_TP];

		g.ranks = tp / rtp;
		if (g.ranks <= gt->per_node) {
			g.per_node = g.ranks;
			g.sharing = 1;
		} else {
			g.per_node = gt->per_node;
			g.sharing = gt->sharing;
		}
		while (g.ranks % g.per_node)
			g.per_node--;
		if (sync_coll(&tt, GP_ALL_GATHER, slice, &g, &s, err))
			return GP_EINVAL;
	} else if (tp < rtp) {
		g.ranks = 2;
		g.per_node = G >= 2 ? 2 : 1;
		g.sharing = 1;
		if (sync_coll(&tt, GP_SEND_RECV, slice, &g, &s, err))
			return GP_EINVAL;
	}
	if (!c->colocated) {
		/* One communicator of the trainer and every rollout rank,
		 * the whole model broadcast from the trainer's rank 0:
		 * NeMo RL's packed_broadcast_producer(..., src=0) over
		 * model_update_group (megatron_policy_worker.py r0.5.0;
		 * the consumer unpacks every tensor on every vLLM rank,
		 * whose load_weights keeps its own slice), OpenRLHF's
		 * torch.distributed.broadcast(param, 0, group=
		 * _model_update_group).  Every byte leaves the sender's
		 * node and reaches every rollout GPU: a ring over the
		 * engines' nodes and the sender's, every GPU of a node
		 * in it, its NICs the group's own. */
		double rgpus = c->rollout_gpus, full = p.total * 2.0;
		double train_gpus = (double)tp * pp * (lay->cp > 0 ? lay->cp :
			1) * (lay->dp > 0 ? lay->dp : 1);

		(void)engines;
		if (train_gpus + rgpus <= G) {
			/* both pools in one node: over the scale-up links */
			g.ranks = (int)rgpus + 1;
			g.per_node = g.ranks;
		} else {
			/* The engines' nodes and one more for the sender:
			 * the transfer crosses the NICs even when the
			 * rollout pool is a single node. */
			g.per_node = (int)fmin((double)G, rgpus);
			g.ranks = (int)((ceil(rgpus / g.per_node) + 1) *
					g.per_node);
		}
		g.sharing = 1;
		if (t->nics == 0 && g.per_node < g.ranks)
			return gp_fail(err, "the rollout and training pools "
				       "span nodes, but the system has no "
				       "NICs");
		if (sync_coll(&tt, GP_BROADCAST, full, &g, &s, err))
			return GP_EINVAL;
	}
	memset(&op, 0, sizeof op);
	op.bytes = 2.0 * slice;
	op.prec = GP_BF16;
	s += roof_time(d, &op, 1);
	*time = s;
	return GP_OK;
}
