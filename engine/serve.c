/*
 * serve.c - a MoE serving configuration and its memory per GPU (see
 * serve.h): defaults, checks, the weights by part, the KV cache, DeepEP's
 * buffers and the largest batch.  The step's time is in serve_step.c, the
 * deployment (pools, batch, disaggregation, the target search) in
 * serve_plan.c.
 *
 * Sources of the structure:
 *   DeepSeek-V3 technical report (arXiv:2412.19437) sec. 3.4 and the
 *   "DeepSeek-V3/R1 Inference System Overview" (open-infra-index, day 6):
 *   prefill EP32 and decode EP144 with MLA and the shared expert data-
 *   parallel, 32 redundant experts (given with redundant_experts: the
 *   runtimes ship none, serve_redundant), two micro-batches overlapping the
 *   all-to-all, fp8 GEMMs and dispatch, bf16 attention and combine.
 *   SGLang "PD Disaggregation and Large-scale EP" (LMSYS blog, 2025-05-05):
 *   DP attention, DP dense FFN, DeepEP normal / low-latency dispatch,
 *   DeepGEMM grouped GEMMs (contiguous / masked), two-batch overlap.
 *   DeepEP (deepseek-ai/DeepEP, docs/legacy.md and csrc/config.hpp): the
 *   kernels' measured latency and bandwidth and their buffer sizes.
 */
#include "serve.h"
#include "serve_int.h"
#include "layout.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Activations in flight are bf16. */
#define ACT 2.0

/* DeepEP buffers (csrc/config.hpp).  Low-latency layout: two symmetric
 * send and two receive buffers; a dispatch message is a 16-byte header +
 * max(2h, h + h/128 x 4) bytes, a combine message h/128 x 4 + 2h, for
 * num_max_dispatch_tokens_per_rank tokens (SGLang's default 128, raised
 * to the micro-batch when larger) to every expert slot.  Normal
 * (high-throughput) kernels: per channel (24 SMs / 2, serve_step.c's
 * DEEPEP_HT_SMS) and NVLink peer (at most 8) 288 chunked receive tokens
 * (get_dispatch_config for 16..64 ranks), per RDMA peer node 128 tokens,
 * twice, each token its hidden bytes + 2056 bytes of top-k indices,
 * weights and scales (128 x 8 + 128 x 4 + 128 x 4) and 8 of metadata;
 * + 1 MiB. */
#define DEEPEP_LL_TOKENS 128.0
#define DEEPEP_CHANNELS 12.0
#define DEEPEP_NVL_PEERS 8.0
#define DEEPEP_NVL_TOKENS 288.0
#define DEEPEP_RDMA_TOKENS 128.0
#define DEEPEP_TOKEN_META 2064.0

void serve_defaults(serve_cfg *c)
{
	memset(c, 0, sizeof *c);
	infer_defaults(&c->base);
	comm_topo_init(&c->topo, GP_LINK_NVLINK);
	c->topo.gpus_per_node = 8;
	c->topo.nodes = 1;
	c->topo.up.bw = 450e9;
	c->topo.up.latency = 0.6e-6;
	c->topo.up.achievable = 0.82;
	c->decode.tp = c->decode.ep = 1;
	c->prefill = c->decode;
	c->gpus = 1;
	/* DeepSeek's profile (deepseek-ai/profile-data) and SGLang's blog
	 * prefill 16K tokens per GPU. */
	c->prefill_tokens = 16384.0;
	c->imbalance = 1.0;
	/* DeepSeek-V3 report sec. 5.4.3: the second token's acceptance rate
	 * is 85-90%; the low end. */
	c->acceptance = 0.85;
	c->accept_decay = 1.0;
	c->a2a = SERVE_A2A_DEEPEP;
	c->eplb_src = SERVE_EPLB_TRTLLM;
	/* fp8 with one fp32 scale per 128 elements (DeepSeek-V3 sec. 3.3;
	 * DeepEP's dispatch message); bf16 combine. */
	c->dispatch_bytes = 1.0 + 4.0 / 128.0;
	c->combine_bytes = 2.0;
}

/* ---- checks ------------------------------------------------------ */

int serve_check_layout_named(const gp_model *m, const serve_cfg *c,
                        const serve_layout *L, const char *pool,
                        gp_error *err)
{
	int G = c->topo.gpus_per_node, slots;

	if (L->tp < 1 || L->tp > GP_COUNT_MAX)
		return gp_fail(err, "%s tp must be 1..%d (got %d)", pool,
		               GP_COUNT_MAX, L->tp);
	if (L->ep < 1 || L->ep > L->tp || L->tp % L->ep != 0)
		return gp_fail(err, "%s ep %d: experts are split over the whole "
		               "instance (ep = tp = %d), sliced by TP (ep 1) or "
		               "split into ep groups sliced over tp / ep GPUs "
		               "(ep dividing tp)", pool, L->ep, L->tp);
	if (L->ep > 1 && L->ep < L->tp) {
		if (L->dp_attention)
			return gp_fail(err, "%s ep %d inside tp %d (experts' TP "
			               "%d) needs TP attention: with DP attention "
			               "the experts are split over the whole "
			               "instance (ep = tp)", pool, L->ep, L->tp,
			               L->tp / L->ep);
		if (m->moe.experts > 0 && m->moe.experts % L->ep != 0)
			return gp_fail(err, "%s ep %d does not divide the %d "
			               "experts", pool, L->ep, m->moe.experts);
		if (c->redundant > 0)
			return gp_fail(err, "%s ep %d inside tp %d: redundant "
			               "expert slots apply with ep = tp", pool,
			               L->ep, L->tp);
	}
	if ((L->dp_attention != 0 && L->dp_attention != 1) ||
	    (L->tbo != 0 && L->tbo != 1))
		return gp_fail(err, "%s dp_attention and tbo are 0 or 1", pool);
	if (L->ep > 1 && m->moe.experts <= 0)
		return gp_fail(err, "%s ep %d given for a dense model", pool,
		               L->ep);
	if (!L->dp_attention && layout_check_tp(m, L->tp, err))
		return GP_EINVAL;
	if (L->tp > G && L->tp % G != 0)
		return gp_fail(err, "%s tp %d does not fill whole nodes of %d "
		               "GPUs", pool, L->tp, G);
	if (L->tp > G && c->topo.nics <= 0)
		return gp_fail(err, "%s tp %d spans %d nodes, but the system "
		               "has no NICs", pool, L->tp, L->tp / G);
	if (L->ep > 1 && L->ep == L->tp) {
		int r;

		if (c->redundant != SERVE_REDUNDANT_AUTO &&
		    gp_check_count(c->redundant, 0, "redundant_experts", err))
			return GP_EINVAL;
		r = serve_redundant(m, c, L);

		slots = m->moe.experts + r;
		if (slots % L->ep != 0)
			return gp_fail(err, "%s ep %d does not divide the %d "
			               "expert slots (%d experts + %d "
			               "redundant): give redundant_experts "
			               "%d, or that plus a multiple of %d",
			               pool, L->ep, slots, m->moe.experts, r,
			               (L->ep - m->moe.experts % L->ep) % L->ep,
			               L->ep);
	}
	return GP_OK;
}

int serve_check(const gp_model *m, const roof_device *d, const serve_cfg *c,
                gp_error *err)
{
	infer_cfg b;

	if (!m || !d || !c)
		return gp_fail(err, "serve: missing argument");
	/* infer_check passes a hybrid stack, which infer prices on its
	 * replicas; this model's steps (serve_step.c) do not. */
	if (m->pattern[0])
		return gp_usage(err, "a hybrid stack (model.hybrid_pattern) "
				"is priced on one model's replicas, not by the "
				"MoE serving model (ep, dp_attention, disagg "
				"...): infer prices it without them");
	b = c->base;
	b.tp = b.pp = b.gpus = 1;
	b.batch = b.concurrency = 0;
	b.topo = NULL;
	b.offload_bw = b.offload_link_bw = 0;
	if (infer_check(m, d, &b, err) != GP_OK ||
	    comm_topo_check(&c->topo, err) != GP_OK)
		return GP_EINVAL;
	/* The KV cache is sized for input + output tokens
	 * (model_kv_bytes: at most GP_COUNT_MAX). */
	if (gp_check_tokens(c->base.input + c->base.output,
	                    "input + output", err))
		return GP_EINVAL;
	if ((c->redundant != SERVE_REDUNDANT_AUTO &&
	     gp_check_count(c->redundant, 0, "redundant_experts", err)) ||
	    gp_check_count(c->gpus, 1, "gpus", err) ||
	    gp_check_count(c->prefill_gpus, 0, "prefill_gpus", err) ||
	    gp_check_num(c->batch, 0, GP_COUNT_MAX, "batch", err) ||
	    gp_check_num(c->itl_max, 0, 3600, "itl_max", err) ||
	    gp_check_num(c->ttft_max, 0, 3600, "ttft_max", err) ||
	    gp_check_num(c->prefill_tokens, 1, GP_COUNT_MAX,
	                 "prefill_tokens", err) ||
	    (c->imbalance != SERVE_IMBALANCE_AUTO &&
	     gp_check_num(c->imbalance, 1, 64, "imbalance", err)) ||
	    gp_check_num(c->mtp, 0, 16, "mtp", err) ||
	    gp_check_num(c->mtp_layers, 0, 16, "mtp_layers", err) ||
	    gp_check_num(c->m_tile, 0, 128, "m_tile", err) ||
	    gp_check_num(c->m_tile_grouped, 0, 128, "m_tile_grouped",
	                 err) ||
	    /* 0 or roof_op.bf16_x's bounds (roofline.h) */
	    gp_check_num(c->moe_fp8_bf16_x, 0, ROOF_BF16_X_MAX,
	                 "moe_fp8_bf16_x", err) ||
	    (c->moe_fp8_bf16_x > 0 &&
	     gp_check_num(c->moe_fp8_bf16_x, ROOF_BF16_X_MIN, ROOF_BF16_X_MAX,
	                  "moe_fp8_bf16_x", err)) ||
	    gp_check_num(c->linear_fp8_bf16_x, 0, ROOF_BF16_X_MAX,
	                 "linear_fp8_bf16_x", err) ||
	    (c->linear_fp8_bf16_x > 0 &&
	     gp_check_num(c->linear_fp8_bf16_x, ROOF_BF16_X_MIN,
	                  ROOF_BF16_X_MAX, "linear_fp8_bf16_x", err)) ||
	    gp_check_num(c->moe_route_kernels, 0, 64, "moe_route_kernels",
	                 err) ||
	    gp_check_num(c->moe_m_tile, 0, 128, "moe_m_tile", err) ||
	    /* 0 (unpadded) or a whole number of elements: a fraction
	     * of one pads nothing, and a denormal one made the padded
	     * width h / pad infinite (serve_step.c moe_routed) */
	    gp_check_num(c->moe_pad, 0, 4096, "moe_pad", err) ||
	    (c->moe_pad != 0 && (c->moe_pad < 1 ||
	                         c->moe_pad != floor(c->moe_pad)) &&
	     gp_fail(err, "moe_pad must be 0 or a whole number of elements "
	             "1..4096 (got %g)", c->moe_pad)) ||
	    gp_check_num(c->moe_upcast, 0, 64, "moe_upcast", err) ||
	    gp_check_num(c->acceptance, 0, 1, "acceptance", err) ||
	    gp_check_num(c->accept_decay, 1e-3, 1, "accept_decay", err) ||
	    gp_check_num(c->spec_host, 0, 1, "spec_host", err) ||
	    gp_check_num(c->spec_host_dp, 0, 1, "spec_host_dp", err) ||
	    gp_check_count(c->spec_running, 0, "spec_running", err) ||
	    gp_check_num(c->dispatch_bytes, 0.125, 8, "dispatch_bytes",
	                 err) ||
	    gp_check_num(c->combine_bytes, 0.125, 8, "combine_bytes", err) ||
	    (c->expert_bits != 0 &&
	     gp_check_num(c->expert_bits, 1, 32, "expert_bits", err)) ||
	    gp_check_num(c->expert_wo_stream, 0, 1, "expert_wo_stream",
	                 err) ||
	    (c->expert_wo_stream > 0 &&
	     gp_check_num(c->expert_wo_stream, 0.01, 1, "expert_wo_stream",
	                  err)) ||
	    (c->sbo && gp_check_num(c->sbo_sms, 0, d->sms > 1 ? d->sms - 1 :
	                            0, "sbo_sms", err)) ||
	    (c->sbo && gp_check_num(c->sbo_block, 0, 1e6, "sbo_block", err)))
		return GP_EINVAL;
	if (c->expert_bits != 0 &&
	    ((int)c->expert_compute < 0 ||
	     c->expert_compute >= GP_DTYPE_COUNT ||
	     !(d->peak[c->expert_compute] > 0)))
		return gp_fail(err, "expert_compute %s: the device has no "
		               "such tensor cores",
		               gp_dtype_name(c->expert_compute));
	if (c->mtp > 0 && c->mtp_layers == 0)
		return gp_fail(err, "mtp %d: the model has no MTP module "
		               "(mtp_layers); a separate draft model is not "
		               "modelled", c->mtp);
	if ((int)c->a2a < SERVE_A2A_DEEPEP || c->a2a > SERVE_A2A_NONE)
		return gp_fail(err, "unknown all-to-all %d", (int)c->a2a);
	/* No exchange needs every token on every GPU of the EP group: TP
	 * attention (DP attention gives each GPU its own sequences), and no
	 * two-batch overlap, which hides an exchange there is not. */
	if (c->a2a == SERVE_A2A_NONE &&
	    ((c->decode.ep > 1 && (c->decode.dp_attention || c->decode.tbo)) ||
	     (c->disagg && c->prefill.ep > 1 &&
	      (c->prefill.dp_attention || c->prefill.tbo))))
		return gp_fail(err, "a2a none: the EP group exchanges no "
		               "tokens only with TP attention, where every "
		               "GPU holds the step's tokens, and without "
		               "two-batch overlap");
	if (c->disagg != 0 && c->disagg != 1)
		return gp_fail(err, "disagg is 0 or 1");
	if (serve_check_layout_named(m, c, &c->decode, "decode", err) ||
	    (c->disagg && serve_check_layout_named(m, c, &c->prefill, "prefill", err)))
		return GP_EINVAL;
	if (!c->disagg && c->gpus % c->decode.tp != 0)
		return gp_fail(err, "gpus %d is not a multiple of the instance "
		               "(tp %d)", c->gpus, c->decode.tp);
	if (c->disagg) {
		if (c->topo.nics <= 0)
			return gp_fail(err, "disaggregation moves the KV cache "
			               "between pools over the NICs; the system "
			               "has none");
		/* the instance's GPUs, not "(tp %d)": that read as the
		 * decode's tp (the CLI's --tp) where the prefill TP came
		 * from --prefill-tp, or from --ep without any tp */
		if (c->prefill_gpus % c->prefill.tp != 0)
			return gp_fail(err, "prefill_gpus %d is not a multiple "
			               "of the prefill instance's %d GPUs",
			               c->prefill_gpus, c->prefill.tp);
		if (c->prefill_gpus > 0 &&
		    (c->gpus <= c->prefill_gpus ||
		     (c->gpus - c->prefill_gpus) % c->decode.tp != 0))
			return gp_fail(err, "gpus %d - prefill_gpus %d must be "
			               "whole decode instances of %d",
			               c->gpus, c->prefill_gpus, c->decode.tp);
		if ((double)c->prefill.tp + c->decode.tp > c->gpus)
			/* "gpus 32 hold no prefill instance (32) and decode
			 * instance (32)" read as if no instance fit at all:
			 * the pools need one instance each, side by side */
			return gp_fail(err, "gpus %d cannot hold a prefill "
			               "instance of %d GPUs beside a decode "
			               "instance of %d: disaggregated serving "
			               "needs at least %d", c->gpus,
			               c->prefill.tp, c->decode.tp,
			               c->prefill.tp + c->decode.tp);
	}
	return GP_OK;
}

/* ---- shapes shared by memory and time (serve_int.h) ---- */

int serve_redundant(const gp_model *m, const serve_cfg *c,
                    const serve_layout *L)
{
	double E = m->moe.experts, ep = L->ep;

	if (c->redundant != SERVE_REDUNDANT_AUTO)
		return c->redundant;
	if (L->ep <= 1 || L->ep != L->tp || E <= 0)
		return 0;
	/* What the runtimes ship: no redundant slots.  SGLang's
	 * --ep-num-redundant-experts "Allocate this number of redundant
	 * experts in expert parallel." defaults to 0 (server_args.py,
	 * ep_num_redundant_experts: int = 0); vLLM's EPLBConfig
	 * num_redundant_experts "Number of redundant experts to use for
	 * expert parallelism." defaults to 0 with enable_eplb False
	 * (vllm/config/parallel.py); TensorRT-LLM's wide EP has no load
	 * balancer unless moe_config.load_balancer is given (examples/
	 * wide_ep/README.md: "load_balancer: ... # (optional) enable load
	 * balancer", its options table's default None; num_slots "Set to
	 * 0. MoE load balancing is disabled.").  DeepSeek's own 32
	 * (day 6) and the large-EP posts' 288 slots are their deployments'
	 * choice, given with redundant_experts.
	 *
	 * Where ep does not divide the experts the runtime does not start
	 * with 0: SGLang asserts num_physical_experts % ep_size == 0
	 * (managers/expert_location.py, physical = logical +
	 * ep_num_redundant_experts), so a user running EP72 on 256 experts
	 * must give at least 32.  The default is then the fewest slots that
	 * start: whole slots on every GPU of the group. */
	return (int)(ceil(E / ep) * ep - E);
}
void serve_shape(const gp_model *m, const serve_cfg *c,
                     const serve_layout *L, shp *s)
{
	s->N = L->tp;
	s->a = L->dp_attention ? 1.0 : L->tp;
	s->G = c->topo.gpus_per_node;
	s->h = m->hidden;
	s->L = m->layers;
	s->nm = model_moe_layers(m);
	s->nd = s->L - s->nm;
	s->E = m->moe.experts;
	s->k = m->moe.top_k;
	s->mats = m->ffn_gated ? 3.0 : 2.0;
	/* ep = tp: whole experts, the all-to-all (EP); ep 1: every
	 * expert sliced over the tp GPUs; ep dividing tp: ep groups of
	 * tp / ep GPUs, each holding its E / ep experts sliced over them
	 * (TensorRT-LLM's --tp 8 --ep 4: moe_tensor_parallel_size 2), the
	 * tokens on every GPU as with slices. */
	s->ep = L->ep == L->tp ? L->ep : 1;
	s->eg = L->ep < L->tp ? L->ep : 1;
	s->slots = s->E + (s->ep > 1 ? serve_redundant(m, c, L) : 0);
	s->S = s->ep > 1 ? s->slots / L->ep : s->E / s->eg;
	s->fx = s->ep > 1 ? m->moe.ffn_hidden :
		(double)m->moe.ffn_hidden * s->eg / L->tp;
	s->fd = model_dense_ffn(m) / s->a;
	s->fs = m->moe.shared_experts * model_shared_ffn(m) / s->a;
	s->wb = c->base.weight_bits / 8.0;
	s->eb = c->base.embed_bits / 8.0;
	s->xb = (c->expert_bits > 0 ? c->expert_bits :
	         c->base.weight_bits) / 8.0;
	s->mla = m->mla.kv_lora_rank > 0;
}


/* KV bytes one GPU holds for one sequence of ctx tokens in its attention
 * group: the MLA latent whole (shared by the heads, so every TP rank keeps
 * it), or this rank's KV heads (replicated when kv_heads < tp); the MTP
 * module's layers keep their own. */
double serve_kv_rank(const gp_model *m, const serve_cfg *c, const shp *s,
                      double ctx)
{
	double kv = model_kv_bytes(m, ctx, c->base.kv_bytes), nkv;

	if (kv < 0)
		return -1.0;
	if (c->mtp > 0)
		kv += c->mtp_layers * kv / m->layers;
	if (s->mla)
		return kv;
	nkv = model_kv_heads_rank(m, s->a);
	return kv * nkv / m->kv_heads;
}

/* ---- memory ------------------------------------------------------- */

/* DeepEP low-latency buffer for `tokens` dispatched per GPU. */
static double ll_buffer(const shp *s, double tokens)
{
	double t = fmax(DEEPEP_LL_TOKENS, ceil(tokens));
	double dmsg = 16.0 + fmax(2.0 * s->h, s->h + s->h / 128.0 * 4.0);
	double cmsg = s->h / 128.0 * 4.0 + 2.0 * s->h;
	double send = fmax(t * dmsg, s->slots * t * cmsg);
	double recv = s->slots * t * fmax(dmsg, cmsg);

	return 2.0 * (send + recv);
}

/* DeepEP normal-kernel buffers (NVLink + RDMA). */
static double ht_buffer(const shp *s)
{
	double tok = 2.0 * s->h + DEEPEP_TOKEN_META;
	double nvl = DEEPEP_CHANNELS * fmin(s->N, DEEPEP_NVL_PEERS) *
		DEEPEP_NVL_TOKENS * tok;
	double rdma = s->N > DEEPEP_NVL_PEERS ?
		DEEPEP_CHANNELS * (s->N / DEEPEP_NVL_PEERS) *
		DEEPEP_RDMA_TOKENS * (tok + 16.0) * 2.0 + 1048576.0 : 0.0;

	return nvl + rdma;
}

/* The weights per GPU, by part. */
static void weights_of(const gp_model *m, const serve_cfg *c,
                       const shp *s, const gp_params *p, serve_mem *o)
{
	double attn_w, down = 0.0, moe_layer;

	/* Attention: MLA's q and kv down-projections are replicated over
	 * the TP group (SGLang / vLLM ReplicatedLinear for q_a_proj and
	 * kv_a_proj_with_mqa); everything else is split. */
	attn_w = model_attn_weights(m);
	if (s->mla)
		down = s->h * ((double)m->mla.q_lora_rank +
		              m->mla.kv_lora_rank + m->mla.qk_rope_head_dim);
	o->attention = s->L * (down + (attn_w - down) / s->a) * s->wb;
	o->dense = s->nd * s->mats * s->h * s->fd * s->wb;
	o->shared = s->nm * s->mats * s->h * s->fs * s->wb;
	o->expert_slots = s->nm > 0 ? (s->ep > 1 ? s->S : s->E / s->N) : 0.0;
	o->experts = s->nm * s->S * s->mats * s->h * s->fx * s->xb;
	o->embed = (p->embedding + p->lm_head) / s->a * s->eb;
	o->other = (p->router + p->norms) * 2.0;
	if (c->mtp > 0) {
		/* DeepSeek-V3 sec. 2.2: each MTP module is a transformer
		 * block (an MoE layer here), a projection of 2h -> h and two
		 * norms; embedding and output head are shared. */
		moe_layer = (o->attention / s->L) +
			(s->nm > 0 ? (o->shared + o->experts) / s->nm : 0.0) +
			s->h * s->E * 2.0;
		o->mtp = c->mtp_layers * (moe_layer + 2.0 * s->h * s->h * s->wb +
		                          4.0 * s->h * 2.0);
	}
	o->weights = o->attention + o->dense + o->shared + o->experts +
		o->embed + o->other + o->mtp;
}

/* The bytes the runtime holds back from the KV pool once `placed` (the
 * weights, the fixed reserve, buffers and the step's activations) is on
 * the GPU: the dense path's one rule (memory.h mem_kv_margin), the base's
 * margin of the capacity (vLLM's and SGLang's fraction) or, with
 * kv_free_fraction, the rest of what is free (TensorRT-LLM's
 * free_gpu_memory_fraction). */
static double kv_margin(const serve_cfg *c, double placed)
{
	double cap = c->base.capacity;

	return cap * mem_kv_margin(cap, c->base.reserve.margin,
				   c->base.kv_free_fraction, cap - placed);
}

/* The fixed reserve on each GPU of an instance of L->tp GPUs: the dense
 * path's rule, memory.h mem_fixed_reserve (the CUDA context, the cuBLAS /
 * cuBLASLt workspaces, NCCL's buffers where the GPUs talk; the figures and
 * their sources in memory.c mem_reserve_default), placed before the KV as
 * mem_infer does.  NCCL's buffers are those of the instance's GPUs, as the
 * dense path's are those of its replica's tp * pp: the base's reserve was
 * defaulted by the base's tp and pp, which a serving config does not read
 * (its GPUs are the layout's), so only a figure the caller stated
 * (c->comm_stated, 0 included) replaces mem_reserve_default's for L->tp.
 * The runtimes size the pool the same way: SGLang's model_runner.py
 * profile_max_num_token takes "rest_memory = available_gpu_memory -
 * total_gpu_memory * (1 - self.mem_fraction_static)", the memory free once
 * the context, the communicators and the weights are in, less the
 * margin. */
static double fixed_reserve(const serve_cfg *c, const serve_layout *L)
{
	gp_mem_reserve r = c->base.reserve;

	if (!c->comm_stated) {
		gp_mem_reserve d;

		mem_reserve_default(&d, L->tp);
		r.comm = d.comm;
	}
	return mem_fixed_reserve(&r);
}

/* The largest decode batch whose KV, activations and low-latency
 * buffer fit the card less the margin (the engine's max_batch is
 * o->batch_cap, apart: a refusal names the one that binds). */
static double largest_batch(const serve_cfg *c, const shp *s,
                            serve_phase phase, const serve_mem *o,
                            double fixed, double per, double q,
                            double tbo)
{
	double lo, hi;
	int i;

	/* The largest batch: KV, activations and the low-latency buffer
	 * all grow with it; bisect on whole sequences. */
	lo = 0;
	hi = floor((c->base.capacity - o->weights - o->reserve - fixed) /
	           (o->kv_admit + per));
	if (hi < 0)
		hi = 0;
	/* the engine's max_batch caps apart (batch_cap), so a KV that is
	 * next to free (a tiny model, kv_admit + per near 0) can give a
	 * quotient past any batch: hold it to the bound on a count, which
	 * the int it returns as holds and 64 halvings settle exactly */
	if (hi > GP_COUNT_MAX)
		hi = GP_COUNT_MAX;
	for (i = 0; i < 64 && hi > lo; i++) {
		double mid = ceil((lo + hi) / 2.0), buf = 0.0;

		if (s->ep > 1 && c->a2a == SERVE_A2A_DEEPEP)
			buf = ll_buffer(s, mid * q / tbo) +
				(phase == SERVE_COLOCATED ? ht_buffer(s) : 0);
		if (o->weights + o->reserve + buf + fixed +
		    mid * (per + o->kv_admit) +
		    kv_margin(c, o->weights + o->reserve + buf + fixed +
		              mid * per) <= c->base.capacity)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

int serve_memory(const gp_model *m, const serve_cfg *c,
                 const serve_layout *L, serve_phase phase, double batch,
                 serve_mem *o, gp_error *err)
{
	shp s;
	gp_params p;
	double q, Tmb, Tr, recv, ws, seqs, tbo, fixed, per;

	if (!o || !c || !L)
		return gp_fail(err, "serve_memory: NULL argument");
	if (model_params(m, &p, err) != GP_OK ||
	    serve_check_layout_named(m, c, L, "memory", err))
		return GP_EINVAL;
	if (!gp_finite(batch) || batch < 0 || batch > GP_AMOUNT_MAX)
		return gp_fail(err, "serve_memory: batch must be >= 0");
	memset(o, 0, sizeof *o);
	serve_shape(m, c, L, &s);
	weights_of(m, c, &s, &p, o);

	/* KV: a batch of B sequences per GPU is B x a sequences per
	 * attention group, all of whose KV (MLA) or KV heads (GQA) each
	 * GPU of the group holds. */
	o->kv_per_seq = s.a * serve_kv_rank(m, c, &s, c->base.input +
	                                    c->base.output);
	o->kv_admit = c->base.kv_reserve_max ? o->kv_per_seq :
		s.a * serve_kv_rank(m, c, &s, c->base.input +
		                    c->base.output / 2.0);
	if (o->kv_per_seq < 0 || o->kv_admit < 0)
		return gp_fail(err, "model: cannot size the KV cache");

	/* Buffers and workspace (one micro-batch's activations: two-batch
	 * overlap halves the peak, SGLang blog, "Two-batch Overlap"). */
	tbo = L->tbo && s.ep > 1 ? 2.0 : 1.0;
	o->a2a_buffer = 0.0;
	if (s.ep > 1 && c->a2a == SERVE_A2A_DEEPEP) {
		q = 1.0 + c->mtp;
		if (phase != SERVE_PREFILL)
			o->a2a_buffer += ll_buffer(&s, batch * q / tbo);
		if (phase != SERVE_DECODE)
			o->a2a_buffer += ht_buffer(&s);
	}
	/* Decode: B (1 + mtp) tokens per GPU; prefill: the chunk.  Per
	 * token the residual, norm, q/k/v and attention output (~4 h),
	 * the widest MLP intermediate (3 f) and the routed tokens' expert
	 * activations (h + 3 f each), bf16; fp32 logits of the rows that
	 * sample. */
	fixed = 0.0;
	if (phase != SERVE_DECODE) {
		Tr = c->prefill_tokens / s.a;
		Tmb = c->prefill_tokens / tbo;
		/* EP: the hottest GPU's routed tokens; TP experts: every
		 * token of the instance through a slice. */
		recv = s.ep > 1 ? Tr / tbo * s.k * serve_skew(c, &s) :
			Tr * s.N * s.k;
		/* the chunk's prompts: their computed tokens fill it
		 * (infer_new_prompt), each holding its whole prompt's KV */
		seqs = fmax(1.0, c->prefill_tokens /
		            infer_new_prompt(&c->base));
		fixed = (Tmb * (4.0 * s.h + 3.0 * fmax(s.fd, s.fs)) +
		         (s.nm > 0 ? recv * (s.h + 3.0 * s.fx) : 0.0)) * ACT +
			seqs * m->vocab / s.a * 4.0;
		/* The chunk's KV until it is sent (prefill pool). */
		if (phase == SERVE_PREFILL)
			fixed += seqs * serve_kv_rank(m, c, &s, c->base.input);
	}
	q = 1.0 + c->mtp;
	per = 0.0;
	if (phase != SERVE_PREFILL) {
		/* per decode sequence per GPU: its tokens' activations */
		per = q * s.a * (4.0 * s.h + 3.0 * fmax(s.fd, s.fs)) * ACT /
			tbo + (s.nm > 0 ? q * s.k * (s.ep > 1 ?
			       serve_skew(c, &s) / tbo : s.N) *
			       (s.h + 3.0 * s.fx) * ACT : 0.0) +
			q * s.a * m->vocab / s.a * 4.0;
	}
	ws = fixed + per * batch;
	o->workspace = ws;
	o->reserve = fixed_reserve(c, L);
	o->margin = kv_margin(c, o->weights + o->reserve + o->a2a_buffer + ws);
	o->kv_budget = c->base.capacity - o->weights - o->reserve -
		o->a2a_buffer - ws - o->margin;
	o->used = o->weights + o->reserve + o->a2a_buffer + ws +
		(phase == SERVE_PREFILL ? 0.0 : batch * o->kv_admit);
	if (phase == SERVE_PREFILL)
		return GP_OK;

	o->max_batch = (int)largest_batch(c, &s, phase, o, fixed, per, q,
	                                   tbo);
	o->batch_cap = c->base.max_batch / s.a;
	if (c->mtp > 0 && c->spec_running > 0) {
		/* The runtime's running requests while it speculates
		 * (serve.h spec_running): an instance of tp GPUs holds
		 * spec_running of them, with DP attention floor(spec_running
		 * / tp) a rank (SGLang's scheduler: max_running_requests //
		 * dp_size), a GPU's share B x a of its attention group's. */
		double groups = L->dp_attention ? (double)L->tp : 1.0;

		o->batch_cap = fmin(o->batch_cap,
		                    floor(c->spec_running / groups) / s.a);
	}
	return GP_OK;
}

int serve_check_layout(const gp_model *m, const serve_cfg *c,
                       const serve_layout *L, gp_error *err)
{
	if (!m || !c || !L)
		return gp_fail(err, "serve: missing argument");
	return serve_check_layout_named(m, c, L, "layout", err);
}
