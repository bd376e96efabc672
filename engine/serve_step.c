/*
 * serve_step.c - the time of one MoE serving step on the most loaded GPU
 * (see serve.h): a layer's operators (MLA, the model's op list, the MoE
 * gate, shared and routed experts at the tokens the hottest GPU
 * receives), assembled into micro-batch passes under the two-batch
 * overlap.  Each operator is priced by serve_row.c, the TP collectives
 * and the dispatch / combine all-to-all by serve_a2a.c.  Sources as in
 * serve.c.
 */
#include "serve_step_int.h"

#include <math.h>
#include <string.h>

#define ACT SX_ACT       /* bf16 activations (serve_step_int.h) */

/* Attention in decode with MLA runs in the latent space (weights
 * absorbed, FlashMLA / FlashInfer MLA / TensorRT-LLM): q.k over the
 * kv_lora_rank + rope width and p.v over kv_lora_rank for every head,
 * reading the shared latent once; prefill runs plain multi-head attention
 * over the up-projected keys and values (SGLang picks MHA for long
 * extends; DeepSeek-V2 sec. 2.1.2, appendix C on absorption).  A step is
 * "decode" for this purpose when a sequence brings at most this many
 * query tokens (1 + MTP drafts). */
#define MLA_ABSORB_MAX_Q 16.0

/* SMs DeepEP's normal (prefill) kernels hold while they run: 24, the
 * count their rate (serve_a2a.c's DEEPEP_HT_RDMA, from DeepEP's legacy
 * table) was measured at -- DeepEP's tests set num_sms = 24
 * (tests/legacy/test_internode.py), its docs Buffer.set_num_sms(24), its
 * V2 README: "For V3-like legacy training, SM usage reduced from 24 to
 * 4 - 6" -- and the count the tuned configs those tests print carry
 * (SGLang's large-EP prefill runs --deepep-config with one; the
 * library's untuned Buffer.num_sms is 20).  Overlapped with compute
 * (two-batch overlap), the GEMMs run on the rest; the low-latency
 * kernels hold no SM while their RDMA is in flight
 * (deepseek-ai/profile-data, decoding), so decode loses none. */
#define DEEPEP_HT_SMS 24.0

/* Mean KV length a prompt token of a prefill chunk attends to: the
 * prompt's P = infer_new_prompt tokens after its c->base.cached cached
 * ones, cut into chunks of q = min(P, prefill_tokens) tokens.  A chunk's
 * queries attend causally to every key before them -- the earlier
 * chunks', read back from the KV cache, and their own: vLLM V1 runs a
 * step's chunks through flash_attn_varlen_func over the paged cache with
 * seqused_k = seq_lens, the request's computed plus scheduled tokens,
 * causal (vllm/v1/attention/backends/flash_attn.py), and SGLang's
 * extend batches carry extend_prefix_lens, the chunk's prefix, which its
 * attention reads with the chunk (forward_extend).  Token i of the prompt
 * (1..P) so sees cached + i keys whatever the chunk: chunk j of q tokens
 * sees cached + (j - 1) q + (q + 1) / 2 on average, and over the P / q
 * chunks of the prompt that is cached + (P + 1) / 2, what a whole
 * prompt (q = P) sees.  The step prices the attention's FLOP and KV reads
 * at this mean (both linear in the KV length: FlashAttention's forward
 * is 4 q kv d FLOP a head), so the chunks' steps sum to the whole
 * prompt's causal attention.  It was cached + (q + 1) / 2, every chunk
 * priced as the prompt's first: a 32K prompt in 4K chunks had 1/8 of its
 * attention (the 4K causal triangle 8 times, 8 x 4096^2 / 2, against
 * 32768^2 / 2). */
static double chunk_kv(const gp_model *m, const serve_cfg *c)
{
	return model_kv_read_mean(m, c->base.cached +
	                          (infer_new_prompt(&c->base) + 1.0) / 2.0);
}

/* Mean KV length a decode reads over a request's life, input + output / 2
 * keys, each layer at most what model_layer_kv lets it read: a
 * sliding-window layer (gpt-oss's 128) reads its window, not the
 * context.  The mean over the layers (model_kv_read_mean, the rule
 * gp.infer's step_kv_mean applies): the attention rows are priced once
 * for every layer, linear in the keys.  It read every layer at the
 * whole context: gpt-oss-20b's 12 sliding layers at 21000 keys. */
static double decode_kv(const gp_model *m, const serve_cfg *c)
{
	return model_kv_read_mean(m, c->base.input + c->base.output / 2.0);
}

/* ---- time --------------------------------------------------------- */

/* MLA's attention as the kernels that run it (DeepSeek-V2 sec. 2.1.2 and
 * appendix C; SGLang deepseek_v2.py forward_absorb / forward_normal).  Up
 * to the core (prep): the q and kv down-projections as one GEMM over the
 * hidden (SGLang's fused_qkv_a_proj_with_mqa, DeepGEMM's N = 2112 shape)
 * whose weights every rank of a TP group holds whole (serve_memory); in
 * prefill each rank runs it, and the norm before it, on 1/tp of the
 * tokens and all-gathers the latents instead of repeating the whole GEMM
 * (Ant Group's H20 blog: "reduce scatter + RMSNorm + fused_qkv_a_proj_
 * with_mqa + all gather", SGLang PR 10568; the reduce-scatter and the
 * latents' all-gather move fewer bytes than the all-reduce the TP
 * collectives price), in decode on every token (the same weights are
 * read either way); the RMSNorms of the two latents, q's up-projection
 * from q_lora_rank; then
 * prefill (MHA form, q > MLA_ABSORB_MAX_Q) up-projects the latent to
 * every head's k_nope and v (kv_b, K = kv_lora_rank) and assembles K
 * from k_nope and the shared rope key, while decode (latent form)
 * multiplies each head's q_nope by W_UK, and after the core the latent
 * output by W_UV: per-head batched GEMMs on 16-bit weights (SGLang
 * dequantises the block-fp8 kv_b to bf16 for them, post_load_weights).
 * The FLOP are model_layer_ops' one qkv row split by the real shapes,
 * whose depths (7168, 1536, 512) run at different rates (DeepGEMM README
 * at M = 4096: 1127, 1212 and 775 TFLOPS).  The attention core: prefill
 * q.k over qk_nope + rope and p.v over v_head_dim per head, reading the
 * assembled K and V; decode q.k over kv_lora_rank + rope and p.v over
 * kv_lora_rank for every head, reading the latent once. */
static int mla_attention(sx *x, double Bg, double q, double kv, int absorb,
                         blk *b)
{
	const gp_model *m = x->m;
	const shp *s = &x->s;
	double L = s->L, h = s->h, Tg = Bg * q, nh = m->heads / s->a;
	double qr = m->mla.q_lora_rank, r = m->mla.kv_lora_rank;
	double dn = m->mla.qk_nope_head_dim, dr = m->mla.qk_rope_head_dim;
	double dv = m->mla.v_head_dim, dq = dn + dr, wb = s->wb, t, act, kvb;
	double packq = 0.0;

	kvb = x->c->base.kv_bytes;
	if (sx_gemm(x, "q_kv_a", L, absorb ? Tg : Tg / s->a,
	            (qr > 0 ? qr : 0) + r + dr, h, wb, &t))
		return GP_EINVAL;
	b->prep += t;
	if (sx_row(x, "latent_norm", L, 4.0 * Tg * (qr + r),
	           2.0 * Tg * (qr + r) * ACT, 0, 0, 0, 0, x->cp, &t))
		return GP_EINVAL;
	b->prep += t;
	if (qr > 0) {
		if (sx_quant(x, "q_b_quant", L, Tg * qr, &t))
			return GP_EINVAL;
		b->prep += t;
		if (sx_gemm(x, "q_b", L, Tg, nh * dq, qr, wb, &t))
			return GP_EINVAL;
	} else if (sx_gemm(x, "q_proj", L, Tg, nh * dq, h, wb, &t)) {
		return GP_EINVAL;
	}
	b->prep += t;
	if (absorb) {
		if (sx_bmm16(x, "q_absorb", L, nh, Tg, r, dn, &t))
			return GP_EINVAL;
		b->prep += t;
		/* Rope on q_pe and the shared k_pe; the latent and k_pe
		 * written to the cache. */
		act = 2.0 * Tg * (nh + 1.0) * dr;
		/* ... and the query packed for the core.  The latent-form
		 * decode kernels take it as one tensor of kv_lora_rank +
		 * rope per head (FlashInfer's trtllm_batch_decode_with_kv_
		 * cache_mla, TensorRT-LLM's and SGLang's trtllm_mla on
		 * Blackwell: "query ... should be concated q_nope + q_rope";
		 * CUTLASS MLA; FlashMLA's q of head dim 576 on Hopper), so
		 * the absorbed q_nope is read once more and the whole query
		 * written in the format the kernel multiplies, the cache's
		 * (the FP8 kernels take an FP8 query: SGLang's FP8 path
		 * fuses the rope, the cast and the packing into one kernel,
		 * TensorRT-LLM its MLA rope-generation kernel's quant_q
		 * buffer).  Measured: SGLang PR 10473, the CUDA
		 * concat_mla_absorb_q that replaced torch.cat in trtllm_mla,
		 * packs 768 tokens of 128 heads in 0.036864 ms (its 226 MB
		 * at 6.1 TB/s, over any Hopper's HBM: a Blackwell part);
		 * this pass, 768 x 128 x (512 x 2 + 576 x 2) = 214 MB, adds
		 * 33 us a layer to rope_kv at 768 sequences on a B200
		 * (8.8 -> 41.7 us).  Not every kernel needs it
		 * (SGLang's FA3 and FlashInfer MLA backends take q_nope and
		 * q_pe apart); no case field names the backend, and the
		 * kernels of the published rows but the Eigen AI H200 ones
		 * (FA3) do. */
		packq = Tg * nh * (r * ACT + (r + dr) * kvb);
	} else {
		if (sx_quant(x, "kv_b_quant", L, Tg * r, &t))
			return GP_EINVAL;
		b->prep += t;
		if (sx_gemm(x, "kv_b", L, Tg, nh * (dn + dv), r, wb, &t))
			return GP_EINVAL;
		b->prep += t;
		/* ... and K assembled from k_nope and the roped k_pe. */
		act = 2.0 * Tg * (nh + 1.0) * dr + Tg * nh * (dn + dq);
	}
	if (sx_row(x, "rope_kv", L, 6.0 * Tg * (nh + 1.0) * dr,
	           act * ACT + Tg * (r + dr) * kvb + packq, 0, 0, 0, 0,
	           x->cp, &t))
		return GP_EINVAL;
	b->prep += t;
	if (absorb) {
		if (sx_attn_row(x, "attention", L,
		                2.0 * Tg * kv * nh * (2.0 * r + dr),
		                Bg * kv * (r + dr) * kvb +
		                Tg * nh * (2.0 * r + dr) * ACT,
		                q * nh, r, kv, Bg, 0.0, &t))
			return GP_EINVAL;
		b->core += t;
		b->attn += t;
		if (sx_bmm16(x, "v_absorb", L, nh, Tg, dv, r, &t))
			return GP_EINVAL;
	} else {
		/* MHA over q.k of dq (192 for DeepSeek-V3) and p.v of dv
		 * (128), SGLang's FA3 varlen call on Hopper, priced at the
		 * head-dim-128 kernel's rate per FLOP (shape terms at dv).
		 * FA3 runs 192 / 128 causal on hd128's 128 x 128 tiles
		 * (Dao-AILab/flash-attention hopper/tile_size.h), 1.25x the
		 * MMA work per score for the same softmax, and the FA3
		 * paper's larger head dim is faster per FLOP, not slower
		 * (Fig. 5, causal forward, 4k / 8k: hd256 612 / 628 TFLOP/s,
		 * hd128 579-602): a head-dim rate would credit this row a
		 * few percent, so none is applied. */
		if (sx_attn_row(x, "attention", L,
		                2.0 * Tg * kv * nh * (dq + dv),
		                (Tg * nh * (dq + dv) +
		                 Bg * q * nh * (dq + dv)) * ACT,
		                q, dv, kv, Bg * nh, q, &t))
			return GP_EINVAL;
		b->attn += t;
	}
	b->core += t;
	return GP_OK;
}

/* The layer's operators outside the MoE block, from the model's op list:
 * attention (MLA through mla_attention), norms, dense MLP. */
static int layer_ops(sx *x, double B, double q, double kv, int decode,
		     blk *b)
{
	const shp *s = &x->s;
	gp_op_cfg oc;
	gp_op ops[GP_MAX_LAYER_OPS];
	double a = s->a, Bg = B * a, wb = s->wb, t;
	int i, n, absorb = decode && q <= MLA_ABSORB_MAX_Q;
	/* the norms FlashInfer's all-reduce fusion runs inside the TP
	 * all-reduce before them (serve_a2a.c sx_ar_fused; the first
	 * layer's, after the embedding, counted with them: 1 of 2 L) */
	int ar_norm = sx_ar_fused(x, Bg * q);

	memset(&oc, 0, sizeof oc);
	oc.seqs = Bg;
	oc.q = q;
	oc.kv_len = kv;
	oc.tp = (int)a;
	oc.ep = 1;
	oc.flash = 1;
	n = model_layer_ops(x->m, &oc, ops);
	for (i = 0; i < n; i++) {
		gp_op o = ops[i];
		double count, bytes;
		int all = o.scope == GP_SCOPE_ALL;

		if (o.scope == GP_SCOPE_MOE)
			continue;      /* priced below, per GPU of the EP group */
		if (ar_norm && (strcmp(o.name, "attn_norm") == 0 ||
		                strcmp(o.name, "mlp_norm") == 0))
			continue;      /* in the fused all-reduce's kernel */
		count = all ? s->L : s->nd;
		if (s->mla && !absorb && strcmp(o.name, "attn_norm") == 0) {
			o.flop /= a;   /* on the rank's share of the tokens */
			o.act /= a;
		}
		if (s->mla && (strcmp(o.name, "qkv") == 0 ||
		               strcmp(o.name, "rope_kv") == 0))
			continue;      /* mla_attention's */
		if (s->mla && o.kind == GP_OP_ATTN && x->mix > 0.0 &&
		    decode) {
			/* A mixed step (block_mixed): the decodes' latent
			 * attention, and the chunk's in the MHA form a
			 * prefill runs it (its up-projection, its rank's
			 * 1/a of the down-projection); MLA's projections
			 * are read once for each, a small part of the
			 * layer's weights (the linears after it are the
			 * step's, read once). */
			double k = x->mix / x->passes, qp = fmin(
				infer_new_prompt(&x->c->base), k);
			blk bp;
			sx y = *x;

			memset(&bp, 0, sizeof bp);
			y.st = NULL;
			if (mla_attention(x, x->mix_bg, q, kv, 1, b) ||
			    mla_attention(&y, k / qp, qp, chunk_kv(x->m, x->c), 0,
			                  &bp))
				return GP_EINVAL;
			b->prep += bp.prep;
			b->core += bp.core;
			b->attn += bp.attn;
			if (x->st)
				x->st->compute += s->L * x->passes *
					(bp.prep + bp.core);
			continue;
		}
		if (s->mla && o.kind == GP_OP_ATTN) {
			if (mla_attention(x, Bg, q, kv, absorb, b))
				return GP_EINVAL;
			continue;
		}
		if (strcmp(o.name, "o_proj") == 0 || strcmp(o.name,
		                                             "mlp_up") == 0) {
			/* Their inputs come from the attention and the MLP
			 * norm in bf16. */
			if (sx_quant(x, all ? "o_quant" : "mlp_quant", count,
			             o.m * o.k, &t))
				return GP_EINVAL;
			if (all)
				b->core += t;
			else
				b->dense += t;
		}
		bytes = o.act * ACT + o.kv * x->c->base.kv_bytes +
			o.weights * (o.wclass == GP_W_LINEAR ? wb : ACT);
		if (o.kind == GP_OP_ATTN) {
			if (sx_attn_row(x, o.name, count, o.flop, bytes, o.m, o.n,
			                o.k, o.batch, decode ? 0.0 : q, &t))
				return GP_EINVAL;
		} else {
			int rc;

			/* a weight-only linear at its kernel's rate */
			x->bf16_x = o.wclass == GP_W_LINEAR && o.weights > 0 ?
				sx_lin_x(x, x->cp, wb) : 0.0;
			x->stream = o.wclass == GP_W_LINEAR && o.weights > 0 ?
				sx_wo_stream(x, x->cp, wb, 0) : 0.0;
			rc = sx_row_mt(x, o.name, count, o.flop, bytes, o.m,
			               o.n, o.k, o.batch, x->cp,
			               o.wclass == GP_W_LINEAR ?
			               sx_tile(x, wb) : 0.0, &t);
			x->bf16_x = 0.0;
			x->stream = 0.0;
			if (rc)
				return GP_EINVAL;
		}
		if (!all)
			b->dense += t;
		else if (o.kind == GP_OP_ATTN || strcmp(o.name, "o_proj") == 0 ||
		         strcmp(o.name, "mlp_norm") == 0)
			b->core += t;
		else
			b->prep += t;
		if (all && o.kind == GP_OP_ATTN)
			b->attn += t;
	}
	return GP_OK;
}

/* The MoE gate (router, top-k) over the GPU's Tr tokens and the shared
 * experts over the group's Tg. */
static int moe_gate_shared(sx *x, double Tr, double Tg, blk *b)
{
	const shp *s = &x->s;
	double E = s->E, k = s->k, h = s->h, wb = s->wb, t, up_n;
	gp_op g[GP_SHARED_GATE_OPS];
	int i, ng;

	/* Router over the GPU's tokens (16-bit gate), then the
	 * top-k selection as its own kernel: DeepSeek-V3 sec. 2.1.2
	 * scores every expert with a sigmoid, adds the balancing bias
	 * and picks k within the best node groups (SGLang's
	 * biased_grouped_topk): fp32 scores read, k ids and weights
	 * written per token. */
	if (sx_row(x, "moe_router", s->nm, 2.0 * Tr * E * h,
	           E * h * ACT + Tr * (h + E) * ACT, Tr, E, h, 1.0,
	           x->half, &t))
		return GP_EINVAL;
	b->gate += t;
	if (sx_row(x, "moe_topk", s->nm, 10.0 * Tr * E,
	           Tr * (E * 4.0 + k * 8.0), 0, 0, 0, 0, x->cp, &t))
		return GP_EINVAL;
	b->gate += t;
	/* The runtime's routing metadata (serve_cfg.moe_route_kernels):
	 * small kernels over the k ids and weights of each token (a cast,
	 * a memset, a bit pack, row sums, sorts, a block schedule, a
	 * gather), each at least a launch and the memory floor of a row
	 * op, as moe_topk is. */
	if (x->c->moe_route_kernels > 0) {
		if (sx_row(x, "moe_route_meta",
		           s->nm * x->c->moe_route_kernels, 0.0,
		           Tr * k * 8.0, 0, 0, 0, 0, x->cp, &t))
			return GP_EINVAL;
		b->gate += t;
	}
	if (s->fs > 0) {
		up_n = (s->mats - 1.0) * s->fs;
		if (sx_quant(x, "shared_quant", s->nm, Tg * h, &t))
			return GP_EINVAL;
		b->shared += t;
		if (sx_gemm(x, "shared_up", s->nm, Tg, up_n, h, wb, &t))
			return GP_EINVAL;
		b->shared += t;
		if (sx_row(x, "shared_act", s->nm, 5.0 * Tg * s->fs,
		           2.0 * Tg * s->fs * 1.5 * ACT, 0, 0, 0, 0,
		           x->cp, &t))
			return GP_EINVAL;
		b->shared += t;
		if (sx_gemm(x, "shared_down", s->nm, Tg, h, s->fs, wb, &t))
			return GP_EINVAL;
		b->shared += t;
		/* The shared expert's sigmoid gate (Qwen2-MoE), its three
		 * kernels over the same tokens (model_shared_gate_ops):
		 * the GEMV on its 16-bit weights as the router's, the
		 * sigmoid and the multiply as the activation's rows. */
		ng = model_shared_gate_ops(x->m, Tg, g);
		for (i = 0; i < ng; i++) {
			const gp_op *o = &g[i];

			if (sx_row(x, o->name, s->nm, o->flop,
			           (o->weights + o->act) * ACT, o->m, o->n,
			           o->k, o->batch,
			           o->kind == GP_OP_GEMM ? x->half : x->cp,
			           &t))
				return GP_EINVAL;
			b->shared += t;
		}
	}
	return GP_OK;
}

/* E[max] of G exchangeable normal deviations that sum to zero, in
 * standard deviations of one: model_max_dev (model.c), which the
 * training step's dropless routing takes too. */
#define max_dev model_max_dev

/* The hottest GPU's routed tokens over the mean that SGLang's EPLB
 * placement leaves over N GPUs when chance is gone (serve_cfg.eplb_src
 * SERVE_EPLB_SGLANG): the LMSYS blog "Deploying DeepSeek with PD
 * Disaggregation and Large-scale Expert Parallelism on 96 H100 GPUs"
 * (2025-05-05), figure "Effects of Scale and EPLB to Balancedness"
 * (images/blog/large_scale_ep/eplb-balancedness.png): "We compute GPU
 * balancedness as the ratio between mean computation time and maximum
 * computation time for a MoE layer among GPUs, and we use the number of
 * tokens for a GPU to estimate the computation time for it."  Its "With
 * EPLB" points, DeepSeek-V3's 256 experts with 32 redundant (EP72 needs
 * the 288), read off the plot to +-0.005: 0.945 at 8 GPUs, 0.902 at 16,
 * 0.800 at 32, 0.810 at 72, so max / mean - 1 = 1 / b - 1: 0.0582,
 * 0.1086, 0.2500, 0.2346.  The blog: "As the number of GPUs (EP size)
 * increases, the imbalance issue gets more severe", and "Even with EPLB,
 * some imbalance is inevitable".  The same placement's cost is measured
 * in the blog's prefill profile: the default placement's layer is 1.18x
 * the simulated perfect balance (50,302 against 59,337 tokens/s a node),
 * its dispatch and combine kernels 1.42x (36.7 against 25.9 ms scaled
 * per layer, profile-prefill.png).  Between the points linear in ln N;
 * beyond 72 the last (the plot is flat from 32 on); below 8 the spread of
 * the 8-GPU point, 0.0582 / max_dev(8) = 0.0382 of the mean, times
 * max_dev(N) (the hottest of fewer GPUs lies fewer spreads out).  These
 * are the placement's alone: the figure's token counts are not stated,
 * and at a prefill's 131,072 picks a GPU chance adds under 0.01. */
static double sglang_eplb_excess(double N)
{
	static const double n[] = {8.0, 16.0, 32.0, 72.0};
	static const double e[] = {0.0582, 0.1086, 0.2500, 0.2346};
	int i;

	if (N <= n[0])
		return e[0] / max_dev(n[0]) * max_dev(N);
	for (i = 1; i < 4; i++)
		if (N <= n[i])
			return e[i - 1] + (e[i] - e[i - 1]) *
			       log(N / n[i - 1]) / log(n[i] / n[i - 1]);
	return e[3];
}

/* The hottest GPU's routed tokens over the mean in a step whose GPUs
 * route Tr tokens each (SERVE_IMBALANCE_AUTO).  A GPU's share of the
 * step's picks strays from the mean two ways: the placement (fixed for
 * the step) and the chance of which experts the step's picks land on
 * (about Poisson(lam), lam = Tr x top_k: relative sd 1 / sqrt(lam)).
 * Independent, their variances add.
 *
 * With EPLB (c->eplb) the placement leaves relative sd SERVE_EPLB_SD and
 * the hottest of N GPUs whose loads sum to the step's total lies
 * max_dev(N) of those sds above the mean:
 *   1 + max_dev(N) sqrt(SERVE_EPLB_SD^2 + 1 / lam).
 * Checks against the measured per-step figures SERVE_EPLB_SD is taken
 * from (TensorRT-LLM tech blog 4, Table 1, the max / mean - 1 of every
 * layer and iteration, averaged): EP36 of 8 slots at 1024 picks a GPU,
 * 1 + 2.1482 x 0.05265 = 1.1131 (measured 1.1154); EP32 of 9 slots,
 * 1.1107 (measured 1.109).  Few tokens a step: 1.28 at 8 tokens a GPU
 * over EP32; a prefill's 131,072 picks: 1.089 (the placement alone).
 * SGLang's placement (c->eplb_src SERVE_EPLB_SGLANG) leaves the excess
 * sglang_eplb_excess(N) apart from chance, the LMSYS blog's own figure
 * for its runtime:  1 + sqrt(e(N)^2 + max_dev(N)^2 / lam),  1.250 at a
 * prefill's 131,072 picks over EP32 (where TensorRT-LLM's spread gives
 * 1.089: the two runtimes' sources differ by that much at one width).
 *
 * Without it (the runtimes' default: SGLang's enable_eplb False with
 * init_expert_location "trivial", vLLM's enable_eplb False, TensorRT-LLM
 * without a moe_config.load_balancer) the experts sit in order, E / N to
 * a GPU, and the same table's "No EPLB" row gives the spread and its
 * heavier tail: model_ep_skew_at (model.c), the rule training and the
 * rollout engine price unbalanced routing with, here with the step's
 * lam.  2.564 at EP32 of 8 experts and 1024 picks (measured 2.564);
 * EP8 of 32 experts: 1.61 at 1024 picks, 1.68 at 64 (8 tokens a GPU). */
double sx_imbalance(const sx *x, double Tr)
{
	double lam = Tr * x->s.k, N = x->s.N;

	if (x->c->imbalance != SERVE_IMBALANCE_AUTO)
		return x->c->imbalance;
	if (!x->c->eplb)
		return x->s.ep <= 1 || N < 2 ? 1.0 :
			model_ep_skew_at(N, x->s.E / N, x->s.k,
					 lam > 0 ? lam : 0.0);
	if (x->s.ep <= 1 || N < 2)
		return SERVE_EPLB_SKEW;
	if (x->c->eplb_src == SERVE_EPLB_SGLANG) {
		double e = sglang_eplb_excess(N), z = max_dev(N);

		return 1.0 + sqrt(e * e + (lam > 0 ? z * z / lam : 0.0));
	}
	if (!(lam > 0))
		return SERVE_EPLB_SKEW;
	return 1.0 + max_dev(N) * sqrt(SERVE_EPLB_SD * SERVE_EPLB_SD +
					1.0 / lam);
}

/* Experts sliced within eg groups (serve_layout ep dividing tp): of the
 * n distinct experts a step touches (of E), a group of E / eg holds a
 * hypergeometric share, mean n / eg, variance n (1/eg)(1 - 1/eg)
 * (E - n) / (E - 1); every GPU of the hottest group reads its slices of
 * mean + max_dev(eg) sd of them (the normal approximation to the counts).
 * Returns the hottest group's count over the mean: 1 once the step
 * touches every expert (each group's E / eg). */
static double group_hot(double n, double E, double eg)
{
	double mean, var;

	if (eg < 2.0 || !(n > 0.0) || n >= E)
		return 1.0;
	mean = n / eg;
	var = n / eg * (1.0 - 1.0 / eg) * (E - n) / (E - 1.0);
	return fmin(eg, 1.0 + max_dev(eg) * sqrt(var) / mean);
}

/* How many times matmul_ogs widens each expert weight (roof_op.
 * dequant_rep): once in each M block of an expert of mexp rows.  Its M
 * block is the AMD opt flag (triton_kernels matmul_ogs_details/
 * opt_flags.py make_default_opt_flags_amd: "tokens_per_expt = max(1, m
 * // routing_data.n_expts_tot)" where the routing data states no
 * expected count, then "elif tokens_per_expt >= 512 and n >= 2048:
 * block_m = 128" else "block_m = max(32, min(triton.next_power_of_2(
 * tokens_per_expt), 64))"; its earlier branches, a block_m constraint
 * and enforce_bitwise_invariance, are not priced), for the GEMM's tpe
 * tokens an expert and n output columns: the up GEMM's gate and up
 * width, the down GEMM's hidden. */
static double ogs_rep(double tpe, double n, double mexp)
{
	double bm = tpe >= 512.0 && n >= 2048.0 ? 128.0 :
		fmax(32.0, fmin(pow(2.0, ceil(log2(fmax(tpe, 1.0)))), 64.0));

	return fmax(1.0, ceil(mexp / bm - 1e-9));
}

/* One grouped GEMM of the routed experts: the kernel's rate cap (ex,
 * roof_op.bf16_x), its in-loop weight upcast (dq vector FLOP a weight,
 * rep times: roof_op.dequant, dequant_rep) and the weight-only kernel's
 * streaming fraction (sx_wo_stream, roof_op.stream) set on the sx for this row
 * alone and cleared after it, failure or not, so that no other row of
 * the step (the activation between the two GEMMs, the next layer's)
 * carries them. */
static int experts_row(sx *x, const char *name, double count, double flop,
                       double bytes, double mm, double n, double k,
                       double nb, double mt, double ex, double dq,
                       double rep, double *t)
{
	int rc;

	x->bf16_x = ex;
	x->dequant = dq;
	x->dequant_rep = rep;
	x->stream = sx_wo_stream(x, x->xcp, x->s.xb, 1);
	rc = sx_row_experts(x, name, count, flop, bytes, mm, n, k, nb, x->xcp,
	                    mt, t);
	x->bf16_x = 0.0;
	x->dequant = x->dequant_rep = 0.0;
	x->stream = 0.0;
	return rc;
}

/* The routed experts of the GPU's Tr tokens (Tinst on the instance) and
 * the all-to-all that dispatches and combines the Ts it sends (Tr but in
 * a mixed step, block_mixed). */
static int moe_routed(sx *x, double Tr, double Ts, double Tinst, int decode,
                      blk *b)
{
	const shp *s = &x->s;
	double E = s->E, k = s->k, fx = s->fx, h = s->h, xb = s->xb, t;
	double recv, touched, mexp, up_n, mt, ex, hp = s->h, fp = s->fx;
	double dq = 0.0, rep = 0.0;

	/* Routed experts, grouped GEMMs (DeepGEMM): the hottest
	 * GPU receives imbalance x its tokens x top_k (EP), or every
	 * token of the instance through its slice of every expert
	 * (TP experts).  Slots a token lands on are uniform: a slot
	 * is missed by all Tinst k picks with probability
	 * (1 - 1/slots)^(Tinst k). */
	if (s->ep > 1) {
		recv = Tr * k * sx_imbalance(x, Tr);
		touched = s->S * (1.0 - pow(1.0 - 1.0 / s->slots,
		                            Tinst * k));
	} else {
		double hot;

		/* Sliced within eg groups (1: every expert over every
		 * GPU): the hottest group's experts, and the tokens they
		 * take in the same proportion. */
		touched = E * (1.0 - pow(1.0 - 1.0 / E, Tinst * k));
		hot = group_hot(touched, E, s->eg);
		touched *= hot / s->eg;
		recv = Tinst * k * hot / s->eg;
	}
	if (touched < 1.0)
		touched = 1.0;
	mexp = recv / touched;
	/* The runtime's padded expert widths (serve_cfg.moe_pad: vLLM's
	 * MXFP4 create_weights on ROCm, "pad_align =
	 * get_padding_alignment(); intermediate_size_per_partition_after_pad
	 * = round_up(intermediate_size_per_partition, pad_align);
	 * hidden_size = round_up(hidden_size, pad_align)"): the expert
	 * GEMMs multiply and read the padded matrices. */
	if (x->c->moe_pad > 0.0) {
		double pad = x->c->moe_pad;

		hp = ceil(h / pad - 1e-9) * pad;
		fp = ceil(fx / pad - 1e-9) * pad;
	}
	up_n = (s->mats - 1.0) * fp;
	if (!decode && x->c->a2a == SERVE_A2A_DEEPEP && s->ep > 1) {
		/* Normal dispatch hands tokens over in arrival order;
		 * the contiguous grouped GEMM needs them sorted by
		 * expert, and the combine needs them back: a gather
		 * of the dispatched (fp8) rows and a scatter of the
		 * bf16 outputs (SGLang's permutation kernel after
		 * LightLLM; the masked layout of the low-latency
		 * kernels needs none). */
		double pb = recv * h * (2.0 * x->c->dispatch_bytes +
		                        2.0 * ACT);

		if (sx_row(x, "experts_permute", s->nm, 0.0, pb, 0, 0,
		           0, 0, x->cp, &t))
			return GP_EINVAL;
		b->routed += t;
		/* The normal kernels send what they are given: an fp8
		 * dispatch is cast beforehand (DeepEP's dispatch takes
		 * an (fp8, scales) pair); the low-latency kernels cast
		 * inside (use_fp8). */
		if (x->c->dispatch_bytes < ACT) {
			if (sx_quant(x, "dispatch_quant", s->nm, Tr * h, &t))
				return GP_EINVAL;
			b->gate += t;
		}
	}
	/* The low-latency kernels hand the experts their tokens in the
	 * masked layout (a fixed slot per expert, masked_m valid rows),
	 * which DeepGEMM multiplies with m_grouped_fp8_gemm_nt_masked --
	 * the kernel a swapAB build swaps (DeepGEMM PR 192, "support
	 * swapAB for m_grouped_fp8_gemm_nt_masked"); prefill's contiguous
	 * layout and the dense linears keep the normal tiles. */
	mt = sx_tile(x, xb);
	if (decode && x->c->a2a == SERVE_A2A_DEEPEP && s->ep > 1 && mt > 0)
		mt = x->m_tile_grouped;
	/* A MoE kernel with a row floor of its own (serve_cfg.moe_m_tile:
	 * triton_kernels' matmul_ogs on AMD pads each expert's rows to at
	 * least 32, make_default_opt_flags_amd) covers them in its
	 * blocks, prefill and decode alike. */
	if (x->c->moe_m_tile > 0)
		mt = x->c->moe_m_tile;
	/* At the experts' own format (expert_bits: an NVFP4 checkpoint's
	 * routed experts on FP4 tensor cores, the rest in fp8/bf16), at
	 * their kernel's rate (ex, the rows' roof_op.bf16_x).  Weight-only
	 * experts multiplied in 16 bits run vLLM's fused_marlin_moe
	 * (sx_wo_x, serve_cfg's base.wo_bf16_x).  fp8 experts sharded by TP
	 * alone (ep 1) run vLLM's / SGLang's Triton fused MoE, fp8 below
	 * the fp8 rate (serve_cfg.moe_fp8_bf16_x); with EP, SGLang's DeepEP
	 * hands them to DeepGEMM.  NVFP4 experts at ep 1 run TensorRT-LLM's
	 * CUTLASS fused MoE below the fp4 rate (the same field, as infer.c
	 * prices it).  The two never meet: one computes in 16 bits, the
	 * other in fp8 or fp4. */
	ex = sx_wo_x(x, x->xcp, xb);
	if (ex == 0.0 && s->ep == 1 && (x->xcp == GP_FP8 || x->xcp == GP_FP4))
		ex = x->c->moe_fp8_bf16_x;
	/* A kernel that widens the experts' weights in its mainloop
	 * (serve_cfg.moe_upcast: matmul_ogs on CDNA3) does it in every
	 * program, one per M block of an expert and N block: each M
	 * block converts the expert's whole weight again (ogs_rep). */
	if (x->c->moe_upcast > 0.0) {
		dq = x->c->moe_upcast;
		rep = ogs_rep(recv / fmax(E, 1.0), up_n, mexp);
	}
	if (experts_row(x, "experts_up", s->nm, 2.0 * recv * hp * up_n,
	                touched * hp * up_n * xb + recv * (hp + up_n) * ACT,
	                mexp, up_n, hp, touched, mt, ex, dq, rep, &t))
		return GP_EINVAL;
	b->routed += t;
	/* SiLU-and-mul writes the down GEMM's input (in fp8 with
	 * its scales: SGLang's silu_and_mul_masked_post_quant), unless
	 * the up GEMM applies it in its epilogue (serve_cfg.
	 * moe_act_fused). */
	if (!x->c->moe_act_fused) {
		if (sx_row(x, "experts_act", s->nm, 5.0 * recv * fp,
		           2.0 * recv * fp * 1.5 * ACT, 0, 0, 0, 0, x->cp,
		           &t))
			return GP_EINVAL;
		b->routed += t;
	}
	if (x->c->moe_upcast > 0.0)
		rep = ogs_rep(recv / fmax(E, 1.0), hp, mexp);
	if (experts_row(x, "experts_down", s->nm, 2.0 * recv * fp * hp,
	                touched * fp * hp * xb + recv * (fp + hp) * ACT,
	                mexp, hp, fp, touched, mt, ex, dq, rep, &t))
		return GP_EINVAL;
	b->routed += t;
	b->down = t;
	if (sx_a2a(x, Ts, x->c->dispatch_bytes, decode, &b->disp,
	           &b->dbytes, &b->remote, &b->hdisp))
		return GP_EINVAL;
	{
		double lg, rm;

		if (sx_a2a(x, Ts, x->c->combine_bytes, decode, &b->comb,
		           &lg, &rm, &b->hcomb))
			return GP_EINVAL;
		b->cbytes = lg;
	}
	return GP_OK;
}

/* Once per pass: embedding, final norm, logits, sampling, and the MTP
 * projection of a draft pass. */
static int outer_pass(sx *x, double Bg, double Tg, int decode, blk *b)
{
	const shp *s = &x->s;
	double h = s->h, wb = s->wb, rows, vocab;

	/* Once per pass: embedding gather, final norm, logits of the rows
	 * that sample (every verified token in decode, the last of each
	 * prompt in prefill) over the vocabulary slice, sampling. */
	rows = decode ? Tg : Bg;
	vocab = x->m->vocab / s->a;
	{
		double t1, t2, t3, t4;

		if (sx_row(x, "embed", 1.0, 0.0, 2.0 * Tg * h * ACT, 0, 0, 0, 0,
		           x->cp, &t1) ||
		    sx_row(x, "final_norm", 1.0, 4.0 * rows * h,
		           2.0 * rows * h * ACT, 0, 0, 0, 0, x->cp, &t2) ||
		    sx_gemm(x, "logits", 1.0, rows, vocab, h, s->eb, &t3) ||
		    sx_row(x, "sample", 1.0, 5.0 * rows * vocab,
		           rows * vocab * 4.0, 0, 0, 0, 0, x->cp, &t4))
			return GP_EINVAL;
		b->outer = t1 + t2 + t3 + t4;
	}
	if (x->c->mtp > 0 && decode) {
		/* The MTP module's projection of [h; embedding] -> h. */
		sx y = *x;

		y.st = NULL;
		if (sx_gemm(&y, "mtp_proj", 1.0, Tg, h, 2.0 * h, wb, &b->proj))
			return GP_EINVAL;
	}
	return GP_OK;
}

/* A micro-batch's decode pass that also carries k = x->mix / passes
 * prompt tokens on one attention group (serve_mixed_time): TensorRT-
 * LLM's in-flight batching, "sequences in the context phase can be
 * processed together with sequences in the generation phase" (docs,
 * Paged Attention, IFB, and Request Scheduling), one forward pass of
 * both, as gp.infer's mixed step (infer_run.c mixed_of) prices it:
 *  - token-wise: the layer's linears over the group's Tg + k tokens
 *    (o_proj, dense MLP, norms), one weight read for both;
 *  - attention: the decodes' attention at B plus the chunk's own prefill
 *    attention, the shape serve_step_time's prefill step gives it (whole
 *    prompts of min(input, k), or a chunk of a longer one, at the mean
 *    KV of the prompt's tokens: chunk_kv), so the chunk's attention is
 *    what the separate prefill step charged; with MLA (layer_ops) the
 *    decodes' latent form and the chunk's MHA form, each with its own
 *    projections;
 *  - MoE: the gate and the shared experts over the rank's own tokens
 *    (the group's k / a more a GPU), the routed experts over the
 *    instance's tokens and the chunk's (Tinst + k, spread over the N
 *    GPUs' experts), the all-to-all of what the rank sends (its
 *    decodes and its share of the chunk): with DP attention the chunk's
 *    rank is the one every other waits for;
 *  - head: the embedding of every token, the logits and sampling of the
 *    decodes and of the k / input prompts the chunk completes. */
static int block_mixed(sx *x, double B, double q, double kv, blk *b)
{
	const shp *s = &x->s;
	const serve_cfg *c = x->c;
	double k = x->mix / x->passes, a = s->a, qp, Bg = B * a, Tg = Bg * q;
	double Tr = B * q, Tinst = Tr * s->N + k, d_attn;
	blk bd, bp;
	sx y = *x;

	qp = fmin(infer_new_prompt(&c->base), k);
	memset(b, 0, sizeof *b);
	x->mix_bg = Bg;
	if (layer_ops(x, B + k / (a * q), q, kv, 1, b))
		return GP_EINVAL;
	if (!s->mla) {
		/* The attention rows layer_ops priced over Tg + k decodes
		 * become the decodes' and the chunk's (the step's compute
		 * sums the rows; MLA's are split in layer_ops). */
		y.st = NULL;
		y.mix = 0.0;
		memset(&bd, 0, sizeof bd);
		memset(&bp, 0, sizeof bp);
		if (layer_ops(&y, B, q, kv, 1, &bd) ||
		    layer_ops(&y, k / qp / a, qp, chunk_kv(x->m, c), 0, &bp))
			return GP_EINVAL;
		d_attn = bd.attn + bp.attn - b->attn;
		b->core += d_attn;
		b->attn += d_attn;
		if (x->st)
			x->st->compute += s->L * x->passes * d_attn;
	}
	if (sx_tp_colls(x, Tg + k, Tinst, b))
		return GP_EINVAL;
	if (s->nm > 0 && (moe_gate_shared(x, Tr + k / a, Tg + k, b) ||
	                  moe_routed(x, Tinst / s->N, Tr + k / a, Tinst, 1,
	                             b)))
		return GP_EINVAL;
	return outer_pass(x, Tg + k / infer_new_prompt(&c->base), Tg + k, 0,
	                  b);
}

/* One pass of the model over a micro-batch of B sequences per GPU, each
 * bringing q query tokens at a mean KV length kv. */
static int block(sx *x, double B, double q, double kv, int decode, blk *b)
{
	const shp *s = &x->s;
	double Bg = B * s->a, Tg = Bg * q, Tr = B * q, Tinst = Tr * s->N;

	if (decode && x->mix > 0.0)
		return block_mixed(x, B, q, kv, b);
	memset(b, 0, sizeof *b);
	if (layer_ops(x, B, q, kv, decode, b) ||
	    sx_tp_colls(x, Tg, Tinst, b))
		return GP_EINVAL;
	if (s->nm > 0 && (moe_gate_shared(x, Tr, Tg, b) ||
	                  moe_routed(x, Tr, Tr, Tinst, decode, b)))
		return GP_EINVAL;
	return outer_pass(x, Bg, Tg, decode, b);
}

/* One MoE layer of a decode step under single-batch overlap (SGLang's
 * single_batch_overlap.py, the GB200 Part II blog: "we overlap the combine
 * communication with both the down GEMM and the shared experts"): the
 * combine's send kernel runs on a second stream on sbo_sms SMs ("32 if
 * is_blackwell() else 3") and the GEMMs beside it on the rest
 * (compute_num_sms = total - communicate), so what runs beside it is
 * slowed by SMs / (SMs - sbo_sms).  Beside the combine: the shared
 * experts (enable_combine_shared_two_stream_overlap; on Hopper they run
 * while the dispatch is in flight instead, enable_dispatch_shared_
 * overlap) and, where the expert GEMM signals it per expert
 * (enable_combine_down_gemm_two_stream_overlap: FlashInfer's CuTe DSL
 * kernel on Blackwell, DeepGEMM on Hopper), the down GEMM.  Exposed:
 * what of each all-to-all outlasts the compute beside it.
 *  The signalled combine sends a unit of tokens only once the down GEMM
 * has finished it: DeepEP PR 483 (antgroup-opt, internode_ll.cu) spins
 * "while (ld_acquire_global(gemm_comp_signal) != threshold)" before each
 * unit's copies and puts, a unit being sbo_block tokens of one local
 * expert ("num_signal_per_expert = ceil_div(..., block_m)", SGLang's
 * MIN_BLOCK_M 64 on Hopper; at least one per expert, "packed_recv_count
 * [i] == 0 ? 1 : ceil_div(...)") or, sbo_block 0, a whole local expert
 * (the Blackwell combine's src_signals, one per local expert), and puts
 * the finishing flag after an expert's last unit.  So the last unit
 * leaves when the down GEMM ends, and after it come its own bytes, the
 * flag's round trip and the receivers' polling (DEEPEP_LAT, the part of a
 * low-latency call beside its bytes; its launch, a small part, is hidden
 * in fact, the kernel waiting from the GEMM's start): the combine ends no
 * earlier than down f + DEEPEP_LAT + (C - DEEPEP_LAT) / units from its
 * start, of which what the shared experts run beside it after the down
 * GEMM hide.  Without the signal (sbo_down 0) the combine starts with all
 * its data and nothing of it is bound to the GEMM's end. */
static double sbo_layer(const sx *x, const blk *b, double *exposed,
                        double *loss)
{
	double P = b->prep, Q = b->core + b->gate, S = b->shared;
	double Y = b->routed, D = b->disp, C = b->comb, sms = x->d->sms;
	double f = 1.0, wd, wc, tail = 0.0, units, per;

	if (sms > x->c->sbo_sms && x->c->sbo_sms > 0)
		f = sms / (sms - x->c->sbo_sms);
	wd = x->c->sbo_shared_dispatch ? S : 0.0;
	wc = (x->c->sbo_down ? b->down : 0.0) +
		(x->c->sbo_shared_dispatch ? 0.0 : S);
	*loss = wc * (f - 1.0);
	if (x->c->sbo_down && C > DEEPEP_LAT && x->s.S >= 1.0) {
		/* tokens a local expert returns: the combine's bytes over
		 * the hidden width at the combine's element size */
		per = b->cbytes / (x->s.h * x->c->combine_bytes) / x->s.S;
		units = x->s.S * (x->c->sbo_block > 0 ?
		                  fmax(1.0, ceil(per / x->c->sbo_block)) : 1.0);
		tail = b->down * f + DEEPEP_LAT + (C - DEEPEP_LAT) / units -
			wc * f;
	}
	/* The dispatch's NVLink copies hold the SMs the shared experts
	 * would run on (sx_a2a's held); the combine has its own. */
	*exposed = fmax(wd > 0.0 ? b->hdisp : 0.0, D - wd) +
		fmax(0.0, fmax(C - wc * f, tail));
	return P + Q + S + Y + b->tp_moe + *exposed + *loss;
}

/* One MoE layer (both micro-batches when the layout overlaps them): the
 * stages of SGLang's two-batch overlap (operations_strategy.py, after
 * DeepSeek's profile-data), each micro-batch's compute split at the yield
 * points, its all-to-all overlapping what the other runs between them.
 *  decode (_compute_moe_deepseek_blog_decode, the second micro-batch two
 *   stages behind): attention prep P | attention core + gate Q | dispatch
 *   sent, shared experts S | dispatch received, routed experts Y, combine
 *   sent | combine received.  A's dispatch is in flight over A's S and
 *   B's P, its combine over B's Q: each micro-batch exposes
 *   max(Hd, D - S - P) + max(Hc, C - Q).  The low-latency kernels hold no
 *   SM while their RDMA is in flight (deepseek-ai/profile-data,
 *   decoding); their NVLink copies Hd, Hc they make with the SMs.
 *  prefill (_compute_moe_deepseek_blog_prefill, no delay): X = shared
 *   experts, attention and gate, dispatch sent | Y = dispatch received,
 *   routed experts, combine sent | ...; on the compute stream A.X B.X A.Y
 *   B.Y: A's dispatch over B.X, B's over A.Y, A's combine over B.Y, B's
 *   over the next X: max(X, D) + max(Y, D) + max(Y, C) + max(X, C).  The
 *   normal kernels hold DEEPEP_HT_SMS SMs throughout and DeepGEMM is
 *   told to use the rest (deep_gemm_num_sms = SMs - DeepEP's num_sms), so
 *   the compute runs at (SMs - 24) / SMs; the extra is the SM loss.
 *  one batch: compute, dispatch and combine in turn.
 * TP collectives are added in full.  *exposed: the all-to-all no compute
 * hides; *loss: the SM loss. */
static double moe_layer(const sx *x, const blk *b, int tbo, int decode,
                        double *exposed, double *loss)
{
	double P = b->prep, Q = b->core + b->gate, S = b->shared;
	double Y = b->routed, D = b->disp, C = b->comb, f = 1.0, X, Yf, st;

	*loss = 0.0;
	if (!tbo && decode && x->c->sbo && x->s.ep > 1 &&
	    x->c->a2a == SERVE_A2A_DEEPEP)
		return sbo_layer(x, b, exposed, loss);
	if (!tbo) {
		*exposed = D + C;
		return P + Q + S + Y + b->tp_moe + D + C;
	}
	if (decode) {
		/* What a kernel copies over NVLink with its own SMs stays
		 * exposed: the other micro-batch's compute has no SMs to run
		 * on meanwhile (sx_a2a's held). */
		*exposed = 2.0 * (fmax(b->hdisp, D - S - P) +
		                  fmax(b->hcomb, C - Q));
		return 2.0 * (P + Q + S + Y + b->tp_moe) + *exposed;
	}
	if (x->c->a2a == SERVE_A2A_DEEPEP && x->d->sms > DEEPEP_HT_SMS)
		f = x->d->sms / (x->d->sms - DEEPEP_HT_SMS);
	X = (P + Q + S) * f;
	Yf = Y * f;
	st = fmax(X, D) + fmax(Yf, D) + fmax(Yf, C) + fmax(X, C);
	*loss = 2.0 * (P + Q + S + Y) * (f - 1.0);
	*exposed = st - 2.0 * (X + Yf);
	return st + 2.0 * b->tp_moe;
}

static int setup(sx *x, const gp_model *m, const roof_device *d,
                 const serve_cfg *c, const serve_layout *L, gp_error *err)
{
	double nodes;

	memset(x, 0, sizeof *x);
	x->m = m;
	x->d = d;
	x->c = c;
	x->Ly = L;
	x->err = err;
	serve_shape(m, c, L, &x->s);
	x->t = c->topo;
	nodes = ceil((double)L->tp / c->topo.gpus_per_node);
	if (x->t.nodes < nodes)
		x->t.nodes = (int)nodes;
	x->graphs = c->base.runtime == INFER_GRAPHS;
	x->cp = c->base.compute;
	x->xcp = c->expert_bits > 0 ? c->expert_compute : x->cp;
	x->m_tile = c->m_tile;
	x->m_tile_grouped = c->m_tile_grouped > 0 ? c->m_tile_grouped :
		c->m_tile;
	x->bf16_x = 0.0;
	x->stream = 0.0;
	x->half = d->peak[GP_BF16] > 0 && d->gemm_frac[GP_BF16] > 0 ?
		GP_BF16 : GP_FP16;
	/* Attention at the cache's precision: fp8 with an 8-bit cache on
	 * chips with fp8 (FlashMLA FP8, FA3 FP8), else 16-bit (as
	 * infer.c). */
	x->ap = c->base.kv_bytes <= 1.0 && d->peak[GP_FP8] > 0 &&
		d->gemm_frac[GP_FP8] > 0 ? GP_FP8 : x->half;
	return GP_OK;
}

/* Layer-by-layer step of B sequences per GPU (q tokens each): two-batch
 * overlap (when the layout has it, EP > 1 and at least two sequences)
 * runs every MoE layer as two micro-batches under moe_layer's stages
 * (DeepSeek day 6, SGLang TBO); otherwise compute + comm.  Dense layers
 * run both halves one after the other. */
static int pass(sx *x, double B, double q, double kv, int decode,
                int rows, serve_step *st, double *layer_moe)
{
	blk b;
	double mb = 1.0, moe_l, exp_l, loss;
	int tbo = x->Ly->tbo && x->s.ep > 1 && B >= 2.0;

	if (tbo)
		mb = 2.0;
	x->st = rows ? st : NULL;
	x->passes = mb;
	if (block(x, B / mb, q, kv, decode, &b))
		return GP_EINVAL;
	moe_l = moe_layer(x, &b, tbo, decode, &exp_l, &loss);
	*layer_moe = moe_l;
	if (!rows)
		return GP_OK;
	st->tp_comm = mb * (x->s.nd * b.tp_dense + x->s.nm * b.tp_moe);
	st->a2a = mb * x->s.nm * (b.disp + b.comb);
	st->a2a_exposed = x->s.nm * exp_l;
	st->dispatch = mb * b.disp;
	st->combine = mb * b.comb;
	st->dispatch_bytes = mb * b.dbytes;
	st->combine_bytes = mb * b.cbytes;
	st->remote_bytes = mb * b.remote;
	st->sm_loss = x->s.nm * loss;
	st->time = st->compute + st->tp_comm + st->a2a_exposed + st->sm_loss;
	if (decode && x->c->mtp > 0) {
		/* Draft passes (mtp_layers MoE layers, the projection, the
		 * logits of the shared head; the same overlap rule), as
		 * SGLang's EAGLE worker runs them for DeepSeek's MTP
		 * (eagle_worker.py, "NEXTN shares the same implementation
		 * of EAGLE"): draft() runs num_steps - 1 decode passes of
		 * one token a sequence, and after the verify
		 * forward_draft_extend_after_decode runs the MTP layer over
		 * the verified tokens to refill its KV and draft the next
		 * step's first token -- graphed at num_steps + 1 tokens a
		 * request (EAGLEDraftExtendCudaGraphRunner; a later release
		 * widens it to num_draft_tokens: "full tree width
		 * (num_draft_tokens), not num_steps + 1", the same for
		 * topk 1).  So mtp passes: mtp - 1 of one token, one of
		 * the q = 1 + mtp tokens the verify routed, which samples
		 * one row a sequence. */
		sx y = *x;
		blk bd, bx;
		double e, l, one, ext;

		y.st = NULL;
		y.mix = 0.0;   /* the drafts run the decodes alone */
		if (block(&y, B / mb, 1.0, kv, decode, &bd) ||
		    block(&y, B / mb, q, kv, decode, &bx))
			return GP_EINVAL;
		one = x->c->mtp_layers * moe_layer(&y, &bd, tbo, decode, &e,
		                                   &l) +
			mb * (bd.proj + bd.outer);
		ext = x->c->mtp_layers * moe_layer(&y, &bx, tbo, decode, &e,
		                                   &l) +
			mb * (bx.proj + bd.outer);
		st->draft = (x->c->mtp - 1) * one + ext;
		/* The host's part of a speculative step, which the
		 * scheduler leaves serial with the GPU (serve.lua's
		 * SPEC_HOST and SPEC_HOST_DP: where they come from);
		 * with DP attention the ranks also sync their batches. */
		st->host = x->Ly->dp_attention ? x->c->spec_host_dp :
			x->c->spec_host;
	} else if (x->c->mtp > 0) {
		/* Prefill runs the MTP layers too (their KV). */
		st->draft = x->c->mtp_layers * moe_l;
	}
	st->time += st->draft + st->host;
	return GP_OK;
}

/* vLLM V1's host work between two steps (async scheduling off:
 * lua/gpuplan/infer.lua M.engine_host), once a step and per sequence in
 * it, as engine/infer.c prices one model's step; the GPU waits for it,
 * so it adds to a decode step's host and time.  One engine core
 * schedules an attention group's sequences (batch x a: the instance's
 * with TP attention, a GPU's with DP: "In vLLM, each DP rank is deployed
 * as a separate "core engine" process", docs.vllm.ai serving/
 * data_parallel_deployment). */
static void engine_host(const sx *x, double batch, serve_step *out)
{
	double eh = x->c->base.engine_host_step +
		x->c->base.engine_host_seq * batch * x->s.a;

	out->host += eh;
	out->time += eh;
}

/* A runtime that runs its steps without CUDA graphs (the base runtime
 * INFER_EAGER: gp.infer's enforce_eager, TensorRT-LLM's PyTorch flow
 * before its graphs came on by default) dispatches every op of the step
 * from Python; the host runs ahead of the GPU (the overlap scheduler),
 * so a step lasts at least the host's dispatch of its layers' ops
 * (infer_eager_host: host_ops_per_layer a layer, the MTP module's
 * layers with it where it drafts, at host_op_time each), as gp.infer's
 * one-model step (infer.c) prices it.  The GPU's part is priced at
 * stream launches already (x->graphs false).  What the floor adds is
 * the step's host wait. */
static void eager_floor(const sx *x, serve_step *out)
{
	double L = x->m->layers + (x->c->mtp > 0 ? x->c->mtp_layers : 0);
	double h = infer_eager_host(&x->c->base, L);

	if (h > out->time) {
		out->host += h - out->time;
		out->time = h;
	}
}

/* A graph runtime's prompt (extend) pass runs off its CUDA graphs:
 * SGLang's CudaGraphRunner.can_run takes decode (and idle / target-
 * verify) batches only, so forward_extend calls the model's forward from
 * Python (infer_extend_host: extend_host_ops a layer, the model's layers
 * alone, at host_op_time each), as gp.infer's one-model prefill
 * (infer.c infer_step) prices it: the host's dispatch a floor under the
 * prefill step, its excess over the GPU's time the step's host wait. */
static void extend_floor(const sx *x, serve_step *out)
{
	double h = infer_extend_host(&x->c->base, x->m->layers);

	if (h > out->time) {
		out->host += h - out->time;
		out->time = h;
	}
}

int serve_step_time(const gp_model *m, const roof_device *d,
                    const serve_cfg *c, const serve_layout *L,
                    serve_phase phase, double batch, serve_step *out,
                    gp_error *err)
{
	sx x;
	double q, kv, B, Tg, layer;

	if (!out || !L)
		return gp_fail(err, "serve_step_time: NULL argument");
	if (serve_check(m, d, c, err) ||
	    serve_check_layout_named(m, c, L, "step", err))
		return GP_EINVAL;
	setup(&x, m, d, c, L, err);
	memset(out, 0, sizeof *out);
	if (phase == SERVE_DECODE || phase == SERVE_COLOCATED) {
		/* At least one sequence in the attention group: with TP
		 * attention a GPU's share of one is 1 / tp (an engine
		 * draining its last responses, rollout.c). */
		if (!gp_finite(batch) || batch * x.s.a < 1.0 - 1e-9 ||
		    batch > GP_AMOUNT_MAX)
			return gp_fail(err, "serve_step_time: batch must be "
			               "at least one sequence per attention "
			               "group (got %g per GPU)", batch);
		q = 1.0 + c->mtp;
		/* Mean KV length over a request's life. */
		kv = decode_kv(m, c);
		out->batch = batch;
		out->tokens = batch * q;
		if (pass(&x, batch, q, kv, 1, 1, out, &layer))
			return GP_EINVAL;
		eager_floor(&x, out);
		engine_host(&x, batch, out);
		return GP_OK;
	}
	/* Prefill: a chunk of prefill_tokens per attention group (per GPU
	 * with DP attention, per instance with TP): whole prompts (or one
	 * chunk of a longer one), causal, at the mean KV of the prompt's
	 * tokens (chunk_kv: a later chunk reads the earlier chunks' keys);
	 * each GPU routes prefill_tokens / a of them.  The prompt tokens computed are
	 * those the prefix cache does not hold (infer_new_prompt, the rule
	 * gp.infer's prefills take): a chunk then carries more prompts, each
	 * of fewer tokens, whose queries also see the cached keys before
	 * them (cached more keys each).  SGLang's scheduler counts a
	 * request's extend_input_len, the tokens past its matched prefix,
	 * against the chunk (schedule_policy.py PrefillAdder).  Not priced
	 * apart: the MHA form's up-projection of the cached latent (the
	 * prompt's own tokens' kv_b GEMM is). */
	Tg = c->prefill_tokens;
	q = fmin(infer_new_prompt(&c->base), Tg);
	B = Tg / q / x.s.a;
	kv = chunk_kv(m, c);
	out->batch = B;
	out->tokens = Tg / x.s.a;
	if (pass(&x, B, q, kv, 0, 1, out, &layer))
		return GP_EINVAL;
	eager_floor(&x, out);
	extend_floor(&x, out);
	return GP_OK;
}

int serve_mixed_time(const gp_model *m, const roof_device *d,
                     const serve_cfg *c, const serve_layout *L,
                     double batch, double k, serve_step *out,
                     gp_error *err)
{
	sx x;
	double layer;

	if (!out || !L)
		return gp_fail(err, "serve_mixed_time: NULL argument");
	if (!gp_finite(k) || k <= 0.0 || k > GP_AMOUNT_MAX)
		return gp_fail(err, "serve_mixed_time: the chunk must be a "
		               "positive number of tokens (got %g)", k);
	if (serve_step_time(m, d, c, L, SERVE_DECODE, batch, out, err))
		return GP_EINVAL;
	setup(&x, m, d, c, L, err);
	x.mix = k;
	memset(out, 0, sizeof *out);
	out->batch = batch;
	out->tokens = batch * (1.0 + c->mtp) + k / x.s.a;
	if (pass(&x, batch, 1.0 + c->mtp, decode_kv(m, c), 1, 1, out,
	         &layer))
		return GP_EINVAL;
	eager_floor(&x, out);
	/* the decodes' host work, as serve_step_time's step carries it,
	 * so that what the chunk adds (prompt_share) is the GPU's alone */
	engine_host(&x, batch, out);
	return GP_OK;
}

double serve_accept_length(int mtp, double a, double r)
{
	double len = 1.0, p = 1.0;
	int k;

	if (mtp <= 0 || a <= 0.0)
		return 1.0;
	if (a >= 1.0 && r >= 1.0)
		return mtp + 1.0;
	if (r >= 1.0)
		/* 1 + a + a^2 + ... + a^mtp: draft i is kept only when every
		 * draft before it is (Leviathan et al. 2023, eq. 1, i.i.d.
		 * acceptance). */
		return (1.0 - pow(a, mtp + 1.0)) / (1.0 - a);
	/* Draft k is kept only when every draft before it is, at a r^(k-1)
	 * given them. */
	for (k = 1; k <= mtp; k++) {
		p *= fmin(1.0, a * pow(r, k - 1.0));
		len += p;
	}
	return len;
}

double serve_step_routed(const serve_step *st)
{
	double t = 0.0;
	int i;

	for (i = 0; i < st->nops; i++)
		if (strncmp(st->ops[i].name, "experts_", 8) == 0)
			t += st->ops[i].total;
	return t;
}
