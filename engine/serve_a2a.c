/*
 * serve_a2a.c - the communication of a serving step: the TP collectives
 * on the placed instance and the EP dispatch / combine all-to-all
 * (DeepEP low-latency and normal kernels, or NCCL), see
 * serve_step_int.h.  Sources as in serve.c.
 */
#include "serve_step_int.h"

#include <math.h>

#define ACT SX_ACT       /* bf16 activations (serve_step_int.h) */

/* Wire rate of DeepEP's normal kernels as a share of what the NIC reaches
 * in nccl-tests (its catalog achievable fraction).  DeepEP's legacy table
 * (docs/legacy.md: H800, one CX7 400 Gb/s NIC per GPU, 4096 tokens,
 * top-8) prints an RDMA "bottleneck bandwidth" of 58 GB/s at EP32 and
 * 51 GB/s at EP64 whose bytes (tests/legacy/test_internode.py:
 * num_rdma_token_sent) count a token once per node it reaches, its own
 * node included, though that copy never crosses the NIC.  Uniform top-8
 * over 4 nodes touches 4 (1 - (3/4)^8) = 3.60 nodes, the own one with
 * probability 0.90: 2.70 remote, so 58 x 2.70 / 3.60 = 43.5 GB/s on the
 * wire; over 8 nodes limited to the top 4 (the test's num_topk_groups),
 * 3.60 nodes, the own one with probability 0.5 x 0.90: 51 x 3.15 / 3.60 =
 * 44.6 GB/s.  44 GB/s of the 47 (0.94 x 50) the same NIC reaches in
 * nccl-tests: 0.93.  The chunked, flow-controlled forwarding (a chunk
 * waits for the receiver's head pointer) leaves the NIC idle between
 * chunks.  The low-latency kernels are fitted separately (DEEPEP_LAT). */
#define DEEPEP_HT_RDMA 0.93

/* Collective on `ranks` GPUs filling nodes in order (the instance's
 * ranks are contiguous), alone on its nodes' NICs: comm_cost's
 * placement, the launcher's (the last node partial). */
int sx_coll(sx *x, gp_coll op, double bytes, double ranks, double *t)
{
	gp_comm_result r;

	*t = 0.0;
	if (ranks <= 1 || bytes <= 0)
		return GP_OK;
	if (comm_cost(&x->t, op, bytes, (int)ranks, &r, x->err) != GP_OK)
		return GP_EINVAL;
	*t = r.time;
	return GP_OK;
}

/* Per-GPU bandwidths of the EP group: NVLink per direction, and the
 * GPU's share of its node's NICs (every GPU of a node is in the group),
 * never more than its path to them. */
static double up_bw(const sx *x)
{
	return x->t.up.bw * x->t.up.achievable;
}

static double nic_bw(const sx *x)
{
	double b;

	if (x->t.nics <= 0)
		return 0.0;
	b = x->t.nics * x->t.nic.bw * x->t.nic.achievable / x->s.G;
	if (x->t.nic_path_bw > 0 && b > x->t.nic_path_bw)
		b = x->t.nic_path_bw;
	return b;
}

/* One dispatch or combine of `bytes` per GPU (tokens x top_k x hidden x
 * element bytes; the hottest GPU receives sx_imbalance times the mean) over
 * the EP group of N GPUs, g per node.  Uniform routing: of a GPU's
 * traffic (g - 1) / N stays on NVLink, (N - g) / N leaves the node.
 *  low-latency (decode): one message per token and expert, straight to
 *   the destination GPU (IBGDA; NVLink inside the node): DEEPEP_LAT +
 *   the slower of the two links.
 *  normal (prefill): DeepSeek-V3 sec. 3.2.2 / DeepEP's forwarding: a
 *   token crosses the network once per remote node its experts sit on
 *   (to the GPU on the same rail), then fans out over NVLink to the
 *   distinct GPUs holding its experts in that node.  Nodes touched
 *   Nn (1 - (1 - 1/Nn)^k), experts per touched node k / that, distinct
 *   GPUs there g (1 - (1 - 1/g)^(experts)); every copy but the rail
 *   GPU's crosses NVLink.  The NICs at DEEPEP_HT_RDMA of their rate.
 *  NCCL: comm_group_cost's all-to-all of the hottest GPU's bytes. */
int sx_a2a(sx *x, double tokens, double elem, int decode, double *t,
           double *logical, double *remote, double *held)
{
	double N = x->s.N, g = fmin(x->s.N, x->s.G), k = x->s.k, h = x->s.h;
	double bytes = tokens * k * h * elem, imb = sx_imbalance(x, tokens);
	double nb = nic_bw(x), ub = up_bw(x), intra, rem, nn, dn, e, dg;

	*t = 0.0;
	*held = 0.0;
	*logical = bytes;
	*remote = bytes * (N - g) / N;
	if (x->c->a2a == SERVE_A2A_NONE) {
		*logical = 0.0;
		*remote = 0.0;
		return GP_OK;
	}
	if (x->s.ep <= 1 || N <= 1 || bytes <= 0)
		return GP_OK;
	if (x->c->a2a == SERVE_A2A_NCCL)
		return sx_coll(x, GP_ALL_TO_ALL, bytes * imb, N, t);
	if (decode) {
		intra = bytes * (g - 1.0) / N;
		rem = *remote;
	} else {
		nn = N / g;
		dn = nn * (1.0 - pow(1.0 - 1.0 / nn, k));
		e = k / dn;
		dg = g * (1.0 - pow(1.0 - 1.0 / g, e));
		rem = tokens * h * elem * (nn - 1.0) *
			(1.0 - pow(1.0 - 1.0 / nn, k));
		intra = tokens * h * elem * dn * dg * (g - 1.0) / g;
		*remote = rem;
		nb *= DEEPEP_HT_RDMA;
	}
	if (rem > 0 && !(nb > 0))
		return gp_fail(x->err, "the EP group spans nodes but the "
		               "system has no NICs");
	*t = DEEPEP_LAT + imb * fmax(g > 1 ? intra / ub : 0.0,
	                             rem > 0 ? rem / nb : 0.0);
	/* The low-latency kernels free their SMs only for RDMA: "a
	 * hook-based communication-computation overlapping method that
	 * does not occupy any SM resource" (DeepEP README), the kernel
	 * "will just do the RDMA request issues" (buffer.py,
	 * return_recv_hook) and the NIC moves the bytes.  To an NVLink
	 * peer (DeepEP PR 173; the whole group on NVL72) the kernel's own
	 * warps store the tokens, on ceil(experts / ceil(experts / SMs))
	 * blocks of 32 warps (internode_ll.cu: 144 of 148 SMs for 288
	 * slots) -- the GPU -- for as long as the copy lasts.  SGLang
	 * gives its Blackwell combine 32 SMs where Hopper's takes 3
	 * (single_batch_overlap.py). */
	if (decode && g > 1)
		*held = imb * intra / ub;
	return GP_OK;
}

/* SGLang's FlashInfer all-reduce fusion (serve_cfg.ar_norm_fused; its
 * server turns it on for gpt-oss on Blackwell: infer.lua
 * M.sglang_ar_norm_fusion).  Each TP all-reduce that a residual add and
 * an RMSNorm follow runs as one trtllm_allreduce_fusion kernel, "if
 * apply_flashinfer_allreduce_fusion(batch_size)": "batch_size > 0 and
 * batch_size <= FUSE_ALLREDUCE_MAX_BATCH_SIZE" with
 * "FUSE_ALLREDUCE_MAX_BATCH_SIZE = 2048" (sglang python/sglang/srt/
 * layers/communicator.py), the batch the TP group's tokens of the step.
 * Its time on B200: SGLang PR 7621 ("[b200] support trt-llm allreduce
 * fuse rms_norm_add kernel", DeepSeek-R1 FP4 TP 8, the decode's profile)
 * "13.5us->8.7us" for the custom all-reduce and the fused_add_rmsnorm
 * kernel after it against the fused kernel; the 4.8 us it saves is the
 * norm kernel's own launch (a row's 1 us graph launch and 3.9 us fill
 * here, 4.9 us).  The fused kernel is priced as those 8.7 us (its
 * Lamport flags and the one launch, the message of a few decode tokens
 * then) plus the bytes as the custom all-reduce's one-stage form moves
 * them (each rank reads its n - 1 peers' whole buffers), so the 8.7 us
 * counts a DeepSeek decode message of a few tokens twice, under a
 * microsecond.  One-shot or two-shot as FlashInfer picks: SGLang calls
 * it with use_oneshot left None, and trtllm_allreduce_fusion then
 * decides -- before FlashInfer 0.5.0 "use_oneshot = token_num <= 128"
 * (SGLang's communicator.py: "We set the max token num to 128 for
 * allreduce fusion with min-latency case(use_oneshot=True)"), from 0.5.0
 * (flashinfer-ai/flashinfer PR 1972, commit 4512a6c7d, "Heuristics
 * based on all configs of trtllm_allreduce_fusion on B200") one-shot
 * while "token_num * hidden_dim * 2 * world_size * dtype.itemsize / 1024
 * / 1024" is at most "2: 512, 4: 64, 8: 42" MiB for 2, 4, 8 GPUs
 * (flashinfer/comm/trtllm_ar.py _should_use_oneshot).  The later rule is
 * priced (SGLang's late-2025 releases ship FlashInfer 0.5), the 128
 * tokens for a group of another size; the two agree below 128 tokens,
 * which holds the decode rows.  The two-shot form (reduce-scatter +
 * all-gather) moves its bytes as the custom all-reduce's two-stage form
 * does, after the same 8.7 us: no timing of the fused two-shot kernel's
 * own latency was found.  The norm kernels it absorbs are dropped
 * (serve_step.c layer_ops).  Only on an NVLink group (the kernel's IPC
 * buffers). */
#define SX_AR_FUSION_MAX_TOKENS 2048.0
#define SX_AR_FUSION_LAT 8.7e-6
#define SX_AR_FUSION_ONESHOT_TOKENS 128.0  /* FlashInfer before 0.5.0 */

/* Whether FlashInfer's fused all-reduce runs one-shot for Tg tokens of
 * h bf16 elements over n GPUs (its _should_use_oneshot, above). */
static int sx_ar_fusion_oneshot(double Tg, double h, double n)
{
	double mib = Tg * h * 2.0 * n * ACT / (1024.0 * 1024.0), lim;

	lim = n == 2.0 ? 512.0 : n == 4.0 ? 64.0 : n == 8.0 ? 42.0 : 0.0;
	return lim > 0.0 ? mib <= lim : Tg <= SX_AR_FUSION_ONESHOT_TOKENS;
}

/* Whether the pool's server runs the fusion (serve.h, its sources
 * there).  Not with the experts' all-to-all (ep = tp > 1 and an
 * exchange): the MoE layer's tokens are then reduce-scattered and
 * gathered around the exchange (sx_tp_colls), no all-reduce the norm
 * could join.  Not under DP attention (attention TP 1: no all-reduce
 * after o_proj, and SGLang's "not is_dp_attention_enabled()"), nor on
 * an instance over more than one node (its "self.nnodes == 1"). */
int serve_ar_norm_on(const serve_cfg *c, const serve_layout *L)
{
	int G = c->topo.gpus_per_node;

	return c->ar_norm_fused && L->tp > 1 && !L->dp_attention &&
		G > 0 && L->tp <= G &&
		!(L->ep == L->tp && c->a2a != SERVE_A2A_NONE);
}

/* The fused kernel for Tg tokens on the TP group of the pool priced
 * (x->Ly), while the step holds at most SX_AR_FUSION_MAX_TOKENS of them
 * (communicator.py's batch test) and the group is on NVLink.  The one
 * test for both sx_tp_colls (the all-reduces' price) and serve_step.c
 * layer_ops (the norm rows dropped), so the two never disagree. */
int sx_ar_fused(const sx *x, double Tg)
{
	return serve_ar_norm_on(x->c, x->Ly) && Tg > 0.0 &&
		Tg <= SX_AR_FUSION_MAX_TOKENS &&
		x->t.up_kind == GP_LINK_NVLINK && x->t.up.bw > 0.0;
}

/* The TP collectives of a dense and of a MoE layer, for Tg tokens on the
 * TP group and Tinst on the instance. */
int sx_tp_colls(sx *x, double Tg, double Tinst, blk *b)
{
	const shp *s = &x->s;
	double a = s->a, N = s->N, h = s->h, tar;

	if (sx_ar_fused(x, Tg)) {
		double by = Tg * h * ACT;

		tar = SX_AR_FUSION_LAT +
			infer_custom_ar_wire(sx_ar_fusion_oneshot(Tg, h, a), a,
			                     by, x->t.up.bw);
		b->tp_dense = 2.0 * tar;
		b->tp_moe = 2.0 * tar;
		return GP_OK;
	}

	/* TP collectives (Megatron-LM sec. 3: an all-reduce after the
	 * attention and one after the MLP): dense layers 2 all-reduces of
	 * the group's tokens when attention is TP.  MoE layers: with the
	 * experts split by EP, tokens are reduce-scattered after the
	 * attention and gathered back after the combine, one all-reduce's
	 * worth; with TP experts, 2 all-reduces (TP attention) or, under DP
	 * attention, gather + reduce-scatter of the instance's tokens
	 * around the experts (SGLang DP attention).  With no exchange
	 * (SERVE_A2A_NONE, TP attention) the EP group is the TP group and
	 * both all-reduces stay: SGLang's StandardDispatcher passes the
	 * tokens through ("dispatch ... return StandardDispatchOutput(
	 * hidden_states=hidden_states, topk_output=topk_output)"), each GPU
	 * runs its local experts over them (FlashInferFP4MoE's
	 * "local_expert_offset=self.moe_ep_rank * self.num_local_experts"),
	 * and "if self.reduce_results and (self.moe_tp_size > 1 or
	 * self.moe_ep_size > 1): final_hidden_states =
	 * tensor_model_parallel_all_reduce(final_hidden_states)"
	 * (sglang@73dce5a python/sglang/srt/layers/moe/token_dispatcher/
	 * standard.py, sglang@008d7d0 fused_moe_triton/layer.py). */
	if (sx_coll(x, GP_ALL_REDUCE, Tg * h * ACT, a, &tar))
		return GP_EINVAL;
	b->tp_dense = 2.0 * tar;
	if (s->ep > 1 && x->c->a2a != SERVE_A2A_NONE)
		b->tp_moe = tar;
	else if (a > 1)
		b->tp_moe = 2.0 * tar;
	else if (sx_coll(x, GP_ALL_REDUCE, Tinst * h * ACT, N, &b->tp_moe))
		return GP_EINVAL;
	return GP_OK;
}
