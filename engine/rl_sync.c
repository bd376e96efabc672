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

/* Memory traffic per weight element of NeMo RL's cast of a received
 * 16-bit weight to fp8 (rl_cfg.sync_fp8_cast): its fp8 generation's
 * load_weights (nemo_rl/models/generation/fp8.py at v0.4.0 and v0.5.0,
 * generation/vllm/quantization/fp8.py at v0.6.0, the same code) runs
 * cast_tensor_to_fp8_blockwise on each fp8 linear's weight as the
 * broadcast or the IPC buffer hands it over, whole (the engine's
 * weight loader cuts its TP slice afterwards), in eager PyTorch on
 * 128 x 128 blocks, B per element read + written: v.to(torch.float) 2 +
 * 4, the blocks made contiguous 4 + 4, torch.abs 4 + 4, torch.amax 4,
 * data_hp * scale_fp 4 + 4, torch.clamp 4 + 4, .to(float8_e4m3fn) 4 + 1,
 * the blocks permuted back to the tensor's shape 1 + 1: 49 (the
 * per-block scales, 1 / 16384 of the elements, left out; the default
 * scales, not pow2_weight_scaling_factors, which no performance recipe
 * sets).  NeMo RL tracks it as a refit cost of its own ("Speedup
 * quantization in refit for FP8 GRPO", issue #1467, labels deepseek,
 * Performance). */
#define RL_FP8_CAST_BYTES 49.0

/* Weight sync (verl's and NeMo RL's refit; OpenRLHF's and slime's NCCL
 * broadcast): the trainer's 16-bit weights are gathered into the slices
 * the rollout engine's ranks hold -- ZeRO-3 shards over the data-
 * parallel group, the stages over the pipeline group, the routed
 * experts over the expert-parallel group, tp / rtp TP slices over part
 * of the TP group (a finer rollout TP cuts its slice from a
 * neighbour's: one send) -- then, disaggregated, the whole model
 * broadcast from the trainer's rank 0 to every rollout GPU, and copied
 * into the engine's buffers (read and write at HBM speed).
 *
 * The export streams each HF tensor to every trainer rank (Megatron-
 * Bridge's stream_weights_megatron_to_hf at NeMo RL r0.5.0's pin: "All
 * ranks receive the full tensors"): the owning stage broadcasts its
 * local copy over the pipeline group (param_mapping.py
 * broadcast_from_pp_rank: "Broadcasts to **all** PP ranks"), and an
 * expert's copies are then gathered over the expert-parallel group
 * (gather_from_ep_ranks).  A rank holds 1 / ep of the routed experts,
 * so the pipeline carries each stage's dense slice and 1 / ep of its
 * experts, and the expert-parallel group the rest of the experts --
 * within a node when the group is, over the NICs when it spans nodes.
 * NeMo RL PR #1379 measured the separate pools' whole refit at 14 s for
 * DeepSeek-V3 (PP16, EP16 over two nodes) and 5.5 s for Qwen3-235B:
 * about the pipeline's and the group's cross-node bytes at a NIC's
 * rate, where the whole model through the pipeline alone would take
 * DeepSeek-V3 27 s. */
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
	int ep = lay->ep > 1 ? lay->ep : 1;
	int etp = lay->etp > 0 ? lay->etp : tp;
	double slice, s = 0, nodes, routed = 0;

	if (model_params(m, &p, err))
		return GP_EINVAL;
	/* the routed experts, which expert parallelism splits (the shared
	 * ones, as wide, every expert-parallel rank holds) */
	if (m->moe.experts > 0)
		routed = p.experts * m->moe.experts /
			(m->moe.experts + m->moe.shared_experts);
	slice = p.total * 2.0 / rg;
	*bytes = slice;
	/* Room for the job's nodes, and with NICs two more: the
	 * disaggregated broadcast below rings over the engines' nodes and
	 * the sender's, rounded up to whole nodes.  A system without NICs
	 * has only the node(s) it holds: every collective of a job that
	 * fits it stays on its scale-up links, and pools spanning nodes
	 * are refused below. */
	nodes = ceil(gpus_total / G) + (t->nics > 0 ? 2 : 0);
	if (nodes > tt.nodes)
		tt.nodes = nodes > GP_COUNT_MAX ? GP_COUNT_MAX : (int)nodes;
	if (lay->zero == 3 &&
	    sync_coll(&tt, GP_ALL_GATHER, u->mem.params * 2.0,
		      &u->groups[GP_GRP_DPCP], &s, err))
		return GP_EINVAL;
	if (c->sync_tp_first) {
		/* NeMo RL v0.3.0's gather_params (nemo_rl/models/megatron/
		 * refit_utils.py): each tensor all-gathered whole over TP
		 * ("torch.distributed.all_gather(gathered_slices, param,
		 * group=group); full_param = torch.cat(...)"), experts over
		 * the expert-parallel group, then that whole tensor
		 * broadcast from its stage over the pipeline group: every
		 * GPU ends with every tensor whole (the engine cuts its own
		 * slice), the pipeline moving whole tensors where the
		 * stages' TP slices would do. */
		if (tp > 1 && sync_coll(&tt, GP_ALL_GATHER, (p.total - routed) *
					2.0 / pp, &u->groups[GP_GRP_TP], &s, err))
			return GP_EINVAL;
		if (ep > 1 && routed > 0 &&
		    sync_coll(&tt, GP_ALL_GATHER, routed * 2.0 / ((double)pp *
							   etp),
			      &u->groups[GP_GRP_EP], &s, err))
			return GP_EINVAL;
		if (pp > 1 && sync_coll(&tt, GP_ALL_GATHER, p.total * 2.0,
					&u->groups[GP_GRP_PP], &s, err))
			return GP_EINVAL;
	} else {
		/* each stage's dense TP slice and its 1 / ep of the experts
		 * over the pipeline, then the experts over the
		 * expert-parallel group */
		if (pp > 1 && sync_coll(&tt, GP_ALL_GATHER,
					((p.total - routed) / tp + routed /
					 ((double)ep * etp)) * 2.0,
					&u->groups[GP_GRP_PP], &s, err))
			return GP_EINVAL;
		if (ep > 1 && routed > 0 &&
		    sync_coll(&tt, GP_ALL_GATHER, routed * 2.0 / etp,
			      &u->groups[GP_GRP_EP], &s, err))
			return GP_EINVAL;
	}
	/* The groups built here sit in equal shares (nodes 0). */
	memset(&g, 0, sizeof g);
	if (c->sync_tp_first) {
		/* whole tensors already on every rank */
	} else if (tp > rtp) {
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
	} else if (tp < rtp && !c->engine_released) {
		/* An engine_released one (DeepSpeed's hybrid engine) cuts
		 * its slices from the whole tensors the ZeRO-3 gather above
		 * left on every rank (hybrid_engine.py v0.9.0:
		 * apply_tensor_parallelism inside GatheredParameters): no
		 * send. */
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
	/* An engine that casts what it receives to fp8 (sync_fp8_cast)
	 * does so for every fp8 linear's whole weight on each of its ranks
	 * at once: the linears vLLM quantizes (LinearBase and FusedMoE
	 * weights, _is_fp8_weight), not the embedding, the LM head, the
	 * routers or the norms, which stay 16-bit.  The kernels are
	 * memory-bound; their launches (about 15 a tensor) are left out.
	 * Summed with the sync's other stages, as the model sums them all
	 * (PR #1379's measured refit is split so: its transfers and a
	 * per-tensor remainder); the consumer's two ping-pong buffers
	 * (packed_broadcast_consumer, NRL_REFIT_NUM_BUFFERS 2) could hide
	 * part of it behind the next buffer's broadcast, which this does
	 * not credit. */
	if (c->sync_fp8_cast)
		s += roof_mem_time(d, (p.attention + p.dense_mlp + p.experts) *
				   RL_FP8_CAST_BYTES, 1);
	*time = s;
	return GP_OK;
}
