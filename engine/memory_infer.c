/*
 * memory_infer.c - a serving replica's per-GPU memory: weights, KV cache
 * (paged or not, TP-split by head), workspace, and the KV sizing rule's
 * reserve (mem_infer, the serving parts).
 */
#include "memory_int.h"

#include <string.h>

/* Share of the model's KV held by one TP rank: its heads
 * (model_kv_heads_rank) of kv_heads; an MLA latent is not split by head,
 * every rank keeps it whole. */
static double kv_share(const gp_model *m, int tp)
{
	if (m->mla.kv_lora_rank > 0)
		return 1.0;
	return model_kv_heads_rank(m, tp) / m->kv_heads;
}

typedef struct mem_infer_parts {
	double weights;      /* bytes on this GPU, all its layers */
	double params;       /* parameters on this GPU (elements): what the
			      * weights bytes hold, whatever their format */
	double layer_w;      /* bytes of one layer on this GPU */
	double workspace;    /* one forward of T tokens + seqs logits rows */
	double ws_token;     /* workspace bytes per token of the forward */
	double ws_seq;       /* fp32 logits bytes per sequence sampled */
	double ws_moe;       /* fused-MoE cache bytes per token beyond
			      * ws_token's, up to MOE_CHUNK_TOKENS tokens */
	double T;            /* tokens of the forward the workspace holds */
	double T_cap;        /* the engine's token budget: chunk_tokens, or
			      * 8192 when the caller gave none */
	double ws_scores;    /* one layer's scores (score_ws), bytes */
	int L_s;
} mem_infer_parts;

int mem_infer_model_ok(const gp_model *m, gp_error *err)
{
	if (m->encoder_layers > 0)
		return gp_fail(err, "inference of an encoder-decoder model is "
			       "not modelled (its training memory is)");
	return GP_OK;
}

/* A hybrid stack (model.hybrid_pattern) is served on one pipeline stage
 * with every layer on the GPU: a stage's share of its Mamba, attention
 * and MoE layers, and the layers an offload would move, are not priced
 * by kind (the KV, the Mamba state and the weights below are the whole
 * stack's); llama.cpp's row split (kv_whole) prices a plain layer's
 * matrices. */
static int hybrid_refusal(const gp_infer_cfg *c, gp_error *err)
{
	if (dflt(c->pp) > 1)
		return gp_usage(err, "pp %d: a hybrid stack (model.hybrid_"
				"pattern) is served at pp 1 (a stage's share "
				"of its Mamba, attention and MoE layers is not "
				"priced)", c->pp);
	if (c->offload)
		return gp_usage(err, "offload: a hybrid stack (model.hybrid_"
				"pattern) is served with every layer on the "
				"GPU (its layers' offload is not priced)");
	if (c->kv_whole)
		return gp_usage(err, "tp %d: a hybrid stack (model.hybrid_"
				"pattern) is not priced under llama.cpp's row "
				"split", c->tp);
	return GP_OK;
}

static int mem_infer_check(const gp_model *m, const gp_infer_cfg *c,
			   gp_error *err)
{
	if (!c)
		return gp_fail(err, "inference config: NULL");
	if (model_check(m, err) != GP_OK ||
	    mem_infer_model_ok(m, err) != GP_OK)
		return GP_EINVAL;
	if (m->pattern[0] && hybrid_refusal(c, err))
		return GP_EINVAL;
	if (gp_check_count(c->tp, 0, "tp", err) ||
	    gp_check_count(c->pp, 0, "pp", err) ||
	    gp_check_count(c->block, 0, "block", err) ||
	    gp_check_nonneg(c->seqs, "seqs", err) ||
	    gp_check_tokens(c->ctx, "ctx", err) ||
	    gp_check_elem(c->kv_bytes, "kv_bytes", err) ||
	    gp_check_nonneg(c->chunk_tokens, "chunk_tokens", err) ||
	    gp_check_nonneg(c->act_bytes, "act_bytes", err) ||
	    gp_check_nonneg(c->score_ws, "score_ws", err))
		return GP_EINVAL;
	if (c->weights.bits != 0 && mem_quant_bits(&c->weights) < 0)
		return gp_fail(err, "bad weight format (bits %g, group %d, "
			       "group_bits %g)", c->weights.bits,
			       c->weights.group, c->weights.group_bits);
	if (c->embed_bits != 0 && gp_check_num(c->embed_bits, 1, 32,
						"embed_bits", err))
		return GP_EINVAL;
	if (c->head_bits != 0 && gp_check_num(c->head_bits, 1, 32,
					       "head_bits", err))
		return GP_EINVAL;
	if (!gp_finite(c->kv_free_fraction) || c->kv_free_fraction < 0 ||
	    c->kv_free_fraction > 1)
		return gp_fail(err, "kv_free_fraction must be 0 (off) or in "
			       "(0, 1] (got %g)", c->kv_free_fraction);
	if (gp_check_num(c->seqs, 0, GP_AMOUNT_MAX, "seqs", err) ||
	    gp_check_num(c->chunk_tokens, 0, GP_AMOUNT_MAX, "chunk_tokens",
			 err))
		return GP_EINVAL;
	if (layout_check_tp(m, c->tp, err))
		return GP_EINVAL;
	if (dflt(c->pp) > m->layers)
		return gp_fail(err, "pp %d exceeds the %d layers", c->pp,
			       m->layers);
	return GP_OK;
}

/* KV bytes of one sequence of ctx tokens on one GPU (paged: rounded up to
 * whole blocks, as vLLM allocates; Kwon et al. 2023 sec. 4.2); kv_whole:
 * the most loaded GPU holds every head's (llama.cpp's row split keeps
 * the cache on the main GPU, llama_kv_cache_init at commit 9476b01). */
static double kv_seq(const gp_model *m, const gp_infer_cfg *c, double ctx,
		     double L_s)
{
	double kb = c->kv_bytes > 0 ? c->kv_bytes : 2.0;
	double eff = ctx;

	if (c->block > 0)
		eff = ceil(ctx / c->block) * c->block;
	if (m->pattern[0])
		/* A hybrid stack (served at pp 1, hybrid_refusal): the KV
		 * of its attention layers, and each Mamba layer's state,
		 * whatever ctx (model_mamba_serve_bytes: the conv window
		 * and the SSM state at the runtimes' dtypes, the heads
		 * split over TP). */
		return model_kv_bytes(m, eff, kb) * kv_share(m, dflt(c->tp)) +
			model_mamba_serve_bytes(m, dflt(c->tp),
						GP_MAMBA_CONV_STATE_BYTES,
						c->mamba_ssm_bytes > 0 ?
						c->mamba_ssm_bytes :
						GP_MAMBA_SSM_STATE_BYTES);
	return model_kv_bytes(m, eff, kb) *
		(c->kv_whole ? 1.0 : kv_share(m, dflt(c->tp))) *
		L_s / m->layers;
}

/* The tokens one fused-MoE call sizes its caches for: vLLM's
 * VLLM_FUSED_MOE_CHUNK_SIZE, os.getenv("VLLM_FUSED_MOE_CHUNK_SIZE",
 * str(16 * 1024)) in vllm/envs.py (32768 and 64 * 1024 in earlier
 * releases) -- beyond the 8192-16384-token budgets engines run. */
#define MOE_CHUNK_TOKENS 16384.0

/* The workspace of a forward of T tokens, without the logits rows. */
static double ws_tokens(const mem_infer_parts *ip, double T)
{
	return T * ip->ws_token + fmin(T, MOE_CHUNK_TOKENS) * ip->ws_moe;
}

/* The serving replica's per-GPU parts.  gpuplan once sized inference twice
 * (here and in infer.c) and the two disagreed; this is now the one rule,
 * and for each term the better-founded of the two was kept:
 *  - weights: the linears (attention, MLP, experts) at the weight format;
 *    norms and the MoE router at 16 bits (infer.c had priced them at the
 *    weight bits); embedding, vision tower and lm_head at embed_bits.
 *    Quantisers convert nn.Linear layers of the decoder only: AutoGPTQ /
 *    AutoAWQ quantise the blocks' linears, ModelOpt's FP8 export lists
 *    lm_head in exclude_modules, and vLLM builds the MoE gate without a
 *    quant_config.  A VLM's vision tower is resident whatever the prompt
 *    (the engines load the whole checkpoint); infer.c had left it out.
 *  - workspace: the tensors live at once inside one layer's forward of T
 *    tokens, per TP rank -- residual and norm output (2h), q, k, v at
 *    their GQA widths, the attention output, gate + up + product of the
 *    MLP (3f; 2f ungated), shared experts beside the routed ones -- plus
 *    the fp32 logits of every sequence sampled in the step (vLLM's and
 *    TensorRT-LLM's samplers take fp32 logits).  infer.c's 4h + 3f
 *    counted K and V at full width and left attention unsplit by TP and
 *    the logits out; its shared-expert term is kept.  An MoE layer's
 *    routed experts write each token's top_k outputs at the full hidden
 *    width before they are summed: vLLM's fused_experts_impl
 *    (vllm/model_executor/layers/fused_moe/fused_moe.py, v0.8-v0.11)
 *    allocates cache13 = M x top_k x max(N, K) for the gate/up output
 *    (N = w13's rows, 2I/tp gated) and then the down output (K = the
 *    hidden width) -- "We can reuse the memory between these because
 *    by the time we need cache3, we're done with cache1" -- and
 *    intermediate_cache2 = M x top_k x N/2 "separate ... since it's used
 *    concurrently with cache1", M = min(tokens, MOE_CHUNK_TOKENS).  3f/tp
 *    counts top_k x (N + N/2) of it; a hidden wider than N adds top_k x
 *    (K - N) a token (DeepSeek-V3 at TP 32: 8 x (7168 - 128), 0.92 GB at
 *    8192 tokens).  vLLM's modular-kernel experts size cache2's
 *    buffer max(N/2, K) wide as well (workspace_shapes: workspace1 =
 *    (M, topk, max(N // 2, K))); the smaller is priced.
 *  - T: a serving engine reserves activations for its whole token budget
 *    at start-up, whatever the load (vLLM's profile run is a dummy
 *    forward of max_num_batched_tokens; TensorRT-LLM sizes its buffers
 *    for max_num_tokens): the caller's chunk_tokens.  Without one, the
 *    tokens the job runs, at most 8192 (vLLM's default
 *    max_num_batched_tokens with chunked prefill, TensorRT-LLM's
 *    max_num_tokens).
 *  - reserve: CUDA context, library workspaces and NCCL buffers of the
 *    replica (mem_reserve_default) come off before the KV cache is sized
 *    (vLLM subtracts the non-torch memory its profile measured);
 *    infer.c had none of them. */
static int mem_infer_parts_of(const gp_model *m, const gp_infer_cfg *c,
			      mem_infer_parts *ip, gp_error *err)
{
	gp_params p;
	gp_widths w;
	double bits, lin, rest, frac, A, f, eb, hb;
	int tp = dflt(c->tp), pp = dflt(c->pp);

	if (model_params(m, &p, err))
		return GP_EINVAL;
	model_widths(m, &w);
	ip->L_s = (m->layers + pp - 1) / pp;
	frac = (double)ip->L_s / m->layers;
	bits = c->weights.bits > 0 ? mem_quant_bits(&c->weights) : 16.0;
	eb = (c->embed_bits > 0 ? c->embed_bits : 16.0) / 8.0;
	/* the lm_head's own (GGUF's output tensor), else the embedding's */
	hb = c->head_bits > 0 ? c->head_bits / 8.0 : eb;
	/* A hybrid stack's Mamba mixers (p.mamba, 0 elsewhere): in_proj
	 * and out_proj at the weight format, with the few conv, A, D,
	 * dt_bias and norm weights beside them (0.1% of Nano's mixer). */
	lin = (p.attention + p.dense_mlp + p.experts + p.mamba) * frac / tp;
	/* MLA's latent down-projections are replicated over the TP ranks,
	 * not split (vLLM's MergedReplicatedLinear fused_qkv_a_proj, infer.c
	 * mla_decode; serve_memory holds them whole alike). */
	lin += model_mla_down_weights(m) * m->layers * frac *
		(1.0 - 1.0 / tp);
	rest = (p.norms + p.router) * frac / tp;
	ip->layer_w = (lin * bits / 8.0 + rest * 2.0) / ip->L_s;
	/* Most loaded stage: with pp == 1 both ends; else the larger. */
	{
		double e_first = (p.embedding + p.vision) / tp;
		double e_last = p.lm_head > 0 ? p.lm_head / tp :
			(pp > 1 ? p.embedding / tp : 0);
		double ends = pp == 1 ? e_first + e_last :
			(e_first > e_last ? e_first : e_last);
		/* their bytes: the embedding (and vision tower) at eb, the
		 * lm_head at hb */
		double b_first = e_first * eb, b_last = e_last * hb;
		double ends_b = pp == 1 ? b_first + b_last :
			(b_first > b_last ? b_first : b_last);
		ip->weights = ip->layer_w * ip->L_s + ends_b;
		ip->params = lin + rest + ends;
	}
	A = c->act_bytes > 0 ? c->act_bytes : 2.0;
	ip->T_cap = c->chunk_tokens > 0 ? c->chunk_tokens : 8192.0;
	ip->T = c->chunk_tokens > 0 ? c->chunk_tokens :
		fmin(c->seqs * c->ctx, ip->T_cap);
	f = fmax(w.dense_f, w.expert_f * m->moe.top_k + w.shared_f);
	ip->ws_token = A * (2.0 * m->hidden +
		(w.q + w.k + w.v + w.o + (m->ffn_gated ? 3.0 : 2.0) * f) /
		tp);
	if (m->pattern[0]) {
		/* A hybrid stack's layer is one block, so the live set is
		 * the widest block's, not an attention block's and an MLP's
		 * together: the attention's q, k, v and output, the
		 * feed-forward's, or the Mamba mixer's -- in_proj's output
		 * (z x B C dt), the conv output (x B C), the scan's output
		 * and the gated norm's (d_inner each), and the chunked
		 * scan's chunk states, heads x head_dim x state in fp32 a
		 * chunk of mamba.chunk tokens ("states_in_fp32=True",
		 * mamba_ssm ssd_combined.py _mamba_chunk_scan_combined_fwd),
		 * all split over TP with the heads. */
		double di = (double)m->mamba.heads * m->mamba.head_dim;
		double mw = model_mamba_layers(m) == 0 ? 0.0 :
			A * (model_mamba_in_width(m) +
			     model_mamba_conv_dim(m) + 2.0 * di) / tp +
			4.0 * di * m->mamba.state / m->mamba.chunk / tp;

		ip->ws_token = A * 2.0 * m->hidden +
			fmax(fmax(A * (w.q + w.k + w.v + w.o) / tp,
				  A * (m->ffn_gated ? 3.0 : 2.0) * f / tp), mw);
	}
	ip->ws_seq = (double)m->vocab * 4.0 / tp;
	ip->ws_moe = 0.0;
	if (m->moe.experts > 0 && m->moe.top_k > 0) {
		double n = (m->ffn_gated ? 2.0 : 1.0) * w.expert_f / tp;

		ip->ws_moe = A * m->moe.top_k * fmax(0.0, m->hidden - n);
	}
	/* The scores a runtime without FlashAttention materialises, one
	 * layer's at a time (score_ws): llama.cpp's KQ, n_kv x n_ubatch x
	 * heads in F32 (ggml-alloc reuses the buffer layer to layer). */
	ip->ws_scores = c->score_ws > 0 ? c->score_ws * ip->T_cap * c->ctx *
		m->heads / tp : 0.0;
	ip->workspace = ws_tokens(ip, ip->T) + c->seqs * ip->ws_seq +
		ip->ws_scores;
	return GP_OK;
}

double mem_kv_margin(double capacity, double margin, double kv_free_fraction,
		     double left)
{
	double m;

	if (!(kv_free_fraction > 0))
		return margin;
	m = left > 0 && capacity > 0 ? (1.0 - kv_free_fraction) * left /
		capacity : 0.0;
	return m >= 1.0 ? 0.0 : m;
}

/* The reserve as the KV sizing rule sees it (mem_kv_margin): with
 * kv_free_fraction the margin is (1 - fraction) of what is free after
 * weights, workspace and the fixed reserve, else the caller's fraction of
 * the capacity. */
static void serve_reserve(const gp_infer_cfg *c, double capacity,
			  const gp_mem_reserve *r, double placed,
			  gp_mem_reserve *out)
{
	*out = *r;
	out->margin = mem_kv_margin(capacity, r->margin, c->kv_free_fraction,
				    capacity - mem_fixed_reserve(r) - placed);
}

/* The sequences of c->ctx tokens and the context of c->seqs sequences
 * that fit beside `weights` on the GPU, the KV of its L layers each
 * (out->max_seqs, out->max_ctx); out->usable is set. */
static void infer_room(const gp_model *m, const gp_infer_cfg *c,
		       const mem_infer_parts *ip, const gp_mem_reserve *rr,
		       double weights, double L, gp_mem_result *out)
{
	double free_b, per, lo, hi, n;
	int i;

	/* What fits: n sequences of ctx tokens, each with its KV and its
	 * logits row, once the weights and the forward's workspace are
	 * placed.  The workspace holds the engine's budget T_cap, or only
	 * n ctx tokens when n sequences are fewer (the second case is
	 * solved exactly: workspace linear in n). */
	per = kv_seq(m, c, c->ctx, L) + (1.0 + rr->frag) * ip->ws_seq;
	free_b = out->usable - weights - (1.0 + rr->frag) *
		(ws_tokens(ip, ip->T_cap) + ip->ws_scores);
	out->kv_room = free_b > 0 ? free_b : 0;
	n = per > 0 && free_b > 0 ? floor(free_b / per) : 0;
	if (c->chunk_tokens <= 0 && n * c->ctx < ip->T_cap) {
		double lin = out->usable - weights - (1.0 + rr->frag) *
			ip->ws_scores;
		/* n ctx < T_cap = 8192 tokens, within one MoE chunk */
		double per2 = per + (1.0 + rr->frag) * c->ctx *
			(ip->ws_token + ip->ws_moe);

		n = per2 > 0 && lin > 0 ? floor(lin / per2) : 0;
	}
	out->max_seqs = n;
	/* KV room at this job's workspace (c->seqs sequences). */
	free_b = out->usable - weights - (1.0 + rr->frag) * ip->workspace;
	out->max_ctx = 0;
	if (c->seqs > 0 && free_b > 0) {
		/* KV grows monotonically with ctx (sliding-window layers
		 * flatten it): bisect on whole tokens. */
		lo = 0;
		hi = 1;
		while (hi < GP_COUNT_MAX &&
		       c->seqs * kv_seq(m, c, hi, L) <= free_b)
			hi *= 2;
		for (i = 0; i < 64 && hi - lo > 1; i++) {
			double mid = floor((lo + hi) / 2);
			if (c->seqs * kv_seq(m, c, mid, L) <= free_b)
				lo = mid;
			else
				hi = mid;
		}
		out->max_ctx = lo;
	}
}

int mem_infer(const gp_model *m, const gp_infer_cfg *c, double capacity,
	      const gp_mem_reserve *r, gp_mem_result *out, gp_error *err)
{
	mem_infer_parts ip;
	gp_mem_reserve rr;
	double per, placed;
	int i;

	if (!out)
		return gp_fail(err, "mem_infer: NULL output");
	if (check_reserve(r, capacity, err) || mem_infer_check(m, c, err))
		return GP_EINVAL;
	if (mem_infer_parts_of(m, c, &ip, err))
		return GP_EINVAL;
	memset(out, 0, sizeof *out);
	out->bytes[GP_MEM_WEIGHTS] = ip.weights;
	out->bytes[GP_MEM_WORKSPACE] = ip.workspace;
	out->kv_per_seq = kv_seq(m, c, c->ctx, ip.L_s);
	out->bytes[GP_MEM_KV] = c->seqs * out->kv_per_seq;
	/* Fragmentation: the caching allocator gives a tensor over 1 MiB a
	 * segment of its own size rounded to 2 MiB (PyTorch CUDA semantics,
	 * "Memory management"), so what is allocated once and kept -- the
	 * weights, and the KV cache every serving engine allocates as one
	 * pool at start-up (vLLM's per-layer block tensors, TensorRT-LLM's
	 * KVCacheManager pool, llama.cpp's context cache, LitGPT's
	 * set_kv_cache) -- wastes nothing; the churn of the transient
	 * activations (the workspace) does. */
	placed = ip.weights + (1.0 + r->frag) * ws_tokens(&ip, ip.T_cap);
	serve_reserve(c, capacity, r, placed, &rr);
	mem_finish(out, capacity, &rr, ip.weights + out->bytes[GP_MEM_KV]);
	infer_room(m, c, &ip, &rr, ip.weights, ip.L_s, out);
	/* CPU offload (llama.cpp -ngl): move whole layers, their weights
	 * and their share of the KV cache, until the rest fits, or the
	 * stated count (offload_layers); at most every layer of the
	 * stage. */
	if (c->offload && (c->offload_layers > 0 || !out->fits)) {
		int stated = c->offload_layers > 0;
		int n_off = stated && c->offload_layers < ip.L_s ?
		            c->offload_layers : ip.L_s;

		per = ip.layer_w + out->bytes[GP_MEM_KV] / ip.L_s;
		for (i = 0; i < n_off && (stated || out->short_by > 0);
		     i++) {
			out->bytes[GP_MEM_WEIGHTS] -= ip.layer_w;
			out->bytes[GP_MEM_KV] -= out->bytes[GP_MEM_KV] /
				(ip.L_s - i);
			out->cpu_bytes += per;
			out->cpu_layers++;
			mem_finish(out, capacity, &rr,
				    out->bytes[GP_MEM_WEIGHTS] +
				    out->bytes[GP_MEM_KV]);
		}
		/* What the GPU then holds is its resident layers' weights
		 * and their KV share: the sequences and the context, sized
		 * before the offload for every layer, read "max concurrent
		 * sequences at this context: 0" beside "fits: yes" (gp.infer
		 * sizes its batch the same way, infer_run.c run_kv). */
		if (out->cpu_layers > 0)
			infer_room(m, c, &ip, &rr, out->bytes[GP_MEM_WEIGHTS],
				   ip.L_s - out->cpu_layers, out);
	}
	/* gp_mem_result.params counts parameters (elements), as training's
	 * does: the weights' bytes were returned here, 2x the count in bf16
	 * (llama3-8b: 16.06e9 "params"), the quantised bytes in int4. */
	out->params = ip.params;
	out->weight_bytes = ip.weights;
	return GP_OK;
}
