/*
 * infer.c - LLM serving on the roofline (see infer.h): the formats, the
 * config's checks and one step's operators (the whole run: infer_run.c).
 *
 * Operator FLOPs follow Kaplan et al. 2020 (Table 1: 2 FLOP per weight
 * per token, 2 n_ctx d_attn for scores and values); bytes are the weights
 * each op reads at their storage dtype, the activations it reads and
 * writes (bf16) and the KV cache it reads or writes.  Decode reads every
 * weight once per step whatever the batch, so a step is bandwidth-bound
 * until the batch nears the ridge point (Pope et al. 2022, "Efficiently
 * Scaling Transformer Inference", sec. 2-3; Kwon et al. 2023, vLLM, sec. 2
 * for continuous batching and KV-bound batch size).
 */
#include "infer.h"
#include "layout.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Activations and logits in flight are bf16/fp16: 2 bytes. */
#define ACT_BYTES 2.0
/* Vector FLOP per weight a weight-only format costs to dequantise (the
 * count and its source are in infer_step). */
#define INFER_DEQUANT_FLOP 4.0
/* Most K slices a split-K weight-only GEMM may name (wo_split_k): a
 * bound on input, not a measurement -- the one split priced is vLLM's
 * awq_gemm's 8 (pack_factor, infer.lua M.v0_awq_split_k), and past 64
 * the partials' buffer (split x T x n) would dwarf the output it sums.
 * options.lua's wo_split_k range states the same 2..64. */
#define INFER_MAX_SPLIT_K 64
/* Framework ops per step outside the layers in eager mode (embedding,
 * final norm, lm_head, softmax / sampling, cache bookkeeping). */
#define EAGER_OUTER_OPS 10.0

static int bad(double x)
{
	return !gp_finite(x) || x < 0.0;
}

int infer_weight_format(const char *name, double *bits, gp_dtype *stored)
{
	/* Effective bits per weight including quantisation scales:
	 *  fp8/int8: per-tensor or per-channel scales, < 0.01 bit/weight.
	 *  int4 (GPTQ, Frantar et al. 2023; AWQ, Lin et al. 2024): groups of
	 *   128 with an fp16 scale and a 4-bit zero point: 4 + 20/128.
	 *  nf4 with double quantisation (Dettmers et al. 2023, QLoRA sec. 3):
	 *   4 + 8/64 + 32/(64*256) = 4.127.
	 *  fp4 = NVFP4 (NVIDIA Blackwell): 16-element blocks with an E4M3
	 *   scale: 4 + 8/16 = 4.5.  mxfp4 (OCP MX v1.0): 32-element blocks,
	 *   E8M0 scale: 4.25.  fp6 (OCP MX): 6 + 8/32 = 6.25. */
	static const struct {
		const char *name;
		double bits;
		gp_dtype t;
	} f[] = {
		{"bf16", 16.0, GP_BF16}, {"fp16", 16.0, GP_FP16},
		{"fp8", 8.0, GP_FP8}, {"int8", 8.0, GP_INT8},
		{"w8a8", 8.0, GP_INT8}, {"int4", 4.0 + 20.0 / 128, GP_INT4},
		{"gptq", 4.0 + 20.0 / 128, GP_INT4},
		{"awq", 4.0 + 20.0 / 128, GP_INT4},
		{"nf4", 4.0 + 8.0 / 64 + 32.0 / (64 * 256), GP_NF4},
		{"fp4", 4.5, GP_FP4}, {"mxfp4", 4.25, GP_FP4},
		{"fp6", 6.25, GP_FP6},
	};
	size_t i;

	for (i = 0; name && i < sizeof f / sizeof f[0]; i++) {
		if (strcmp(name, f[i].name) == 0) {
			if (bits)
				*bits = f[i].bits;
			if (stored)
				*stored = f[i].t;
			return GP_OK;
		}
	}
	return GP_EINVAL;
}

static int has(const roof_device *d, gp_dtype t)
{
	return d->peak[t] > 0.0 && d->gemm_frac[t] > 0.0;
}

gp_dtype infer_compute_dtype(const roof_device *d, const char *w)
{
	gp_dtype half = has(d, GP_BF16) ? GP_BF16 : GP_FP16;

	if (!w)
		return half;
	/* Weight-and-activation formats run on their own tensor cores when
	 * the chip has them (FP8 on Hopper/Ada, FP4 on Blackwell); the
	 * weight-only formats (int4/GPTQ/AWQ/NF4, int8 weight-only) are
	 * dequantised in the GEMM mainloop and multiply in 16 bits. */
	if (strcmp(w, "fp8") == 0 && has(d, GP_FP8))
		return GP_FP8;
	if ((strcmp(w, "fp4") == 0 || strcmp(w, "mxfp4") == 0)) {
		if (has(d, GP_FP4))
			return GP_FP4;
		if (has(d, GP_FP8))
			return GP_FP8;
	}
	if (strcmp(w, "w8a8") == 0 && has(d, GP_INT8))
		return GP_INT8;
	return half;
}

/* The lm_head's bits: head_bits where given, else embed_bits. */
double infer_head_bits(const infer_cfg *c)
{
	return c->head_bits > 0 ? c->head_bits : c->embed_bits;
}

void infer_defaults(infer_cfg *c)
{
	memset(c, 0, sizeof *c);
	c->weight_bits = 16.0;
	c->embed_bits = 16.0;
	c->kv_bytes = 2.0;
	c->mamba_ssm_bytes = GP_MAMBA_SSM_STATE_BYTES;
	c->compute = GP_BF16;
	c->tp = c->pp = c->gpus = 1;
	c->input = 2048.0;
	c->output = 256.0;
	c->flash = 1;
	c->runtime = INFER_GRAPHS;
	/* Eager PyTorch: the host pays Python + dispatcher + launch for
	 * every op that launches a kernel, GP_EAGER_OP_TIME (common.h, its
	 * measurement), 49 of them per TransformerBlock of gpt-fast's plain
	 * PyTorch Llama at decode (counted there). */
	c->host_op_time = GP_EAGER_OP_TIME;
	c->host_ops_per_layer = 49.0;
	/* TensorRT-LLM's default max_num_tokens is 8192 tokens per batch. */
	c->max_num_tokens = 8192.0;
	/* TensorRT-LLM's default max_batch_size (2048). */
	c->max_batch = 2048;
	/* Placeholder all-reduce link (until a topology is given): NVLink-4
	 * class, 450 GB/s per direction at 0.8 achievable, 2 us per step. */
	c->ar_latency = 2e-6;
	c->ar_bw = 360e9;
	mem_reserve_default(&c->reserve, 1);
	/* Tensor-core tiles at every batch (vLLM / SGLang: Marlin,
	 * Machete, CUTLASS); a runtime with small-M GEMV kernels sets its
	 * limit (lua/gpuplan/infer.lua M.gemv_max). */
	c->gemv_max = 0;
	c->gemv_packed = 0;
	c->wo_unfused_above = 0;
	c->acc16_gemm = 0;
	c->wo_split_k = 0;
	c->ubatch = 0;
	c->ubatch_call = 0;
	c->ubatch_launches = 0.0;
	c->launch_queue = 0.0;
	c->score_bytes = 0.0;
	c->scores_whole = 0;
	c->graph_act_bytes = 0.0;
}

/* Shape facts shared by the step and the run (the step's operators come
 * from model_layer_ops). */
typedef struct shape {
	double h, nkv;                    /* hidden; KV heads per GPU */
	double dense_f, moe_f, shared_f;  /* per GPU MLP widths */
	double ndense, nmoe;
	double layer_w;                   /* weight bytes per layer per GPU */
	double emb_w, lm_w;               /* per GPU */
} shape;

static int get_shape(const gp_model *m, const infer_cfg *c, shape *s,
                     gp_error *err)
{
	gp_params p;
	double tp = c->tp, wb = c->weight_bits / 8.0, eb = c->embed_bits / 8.0;
	double hb = infer_head_bits(c) / 8.0;
	double lt;

	if (model_params(m, &p, err) != GP_OK ||
	    layout_check_tp(m, c->tp, err) != GP_OK)
		return GP_EINVAL;
	s->h = m->hidden;
	s->nkv = model_kv_heads_rank(m, tp);
	s->nmoe = model_moe_layers(m);
	s->ndense = m->layers - s->nmoe;
	s->dense_f = model_dense_ffn(m) / tp;
	s->moe_f = m->moe.ffn_hidden / tp;
	s->shared_f = m->moe.shared_experts * model_shared_ffn(m) / tp;
	/* Transformer weights (everything but embeddings, lm_head and the
	 * vision tower, which text serving does not run) at weight_bits. */
	lt = p.total - p.embedding - p.lm_head - p.vision;
	s->layer_w = lt / m->layers * wb / tp;
	/* MLA's latent down-projections are held whole on every rank
	 * (mla_decode). */
	s->layer_w += model_mla_down_weights(m) * (1.0 - 1.0 / tp) * wb;
	/* Vocab-parallel embedding and lm_head (Megatron / TensorRT-LLM). */
	s->emb_w = p.embedding * eb / tp;
	s->lm_w = (m->tied_embeddings ? p.embedding : p.lm_head) * hb / tp;
	return GP_OK;
}

/* A non-negative amount (seconds, B/s, bytes, price); 0 = none. */
static int amount(double v, const char *name, gp_error *err)
{
	return gp_check_num(v, 0, GP_AMOUNT_MAX, name, err);
}

/* A bandwidth: 0 (none) or 1 B/s up to GP_AMOUNT_MAX; bytes / 1e-308
 * B/s was an infinite time. */
static int rate(double v, const char *name, gp_error *err)
{
	if (v == 0.0)
		return GP_OK;
	return gp_check_num(v, 1, GP_AMOUNT_MAX, name, err);
}

/* A multiple of the bf16 rate as roof_op.bf16_x takes it (roofline.h):
 * 0 (none) or in [ROOF_BF16_X_MIN, ROOF_BF16_X_MAX]. */
static int bf16_x(double v, const char *name, gp_error *err)
{
	if (!gp_finite(v) || v < 0.0 || v > ROOF_BF16_X_MAX ||
	    (v > 0.0 && v < ROOF_BF16_X_MIN))
		return gp_fail(err, "%s must be 0 or in [%g, %g] (got %.9g)",
		               name, ROOF_BF16_X_MIN, ROOF_BF16_X_MAX, v);
	return GP_OK;
}

static int check_cfg(const gp_model *m, const roof_device *d,
                     const infer_cfg *c, gp_error *err)
{
	if (!m || !d || !c)
		return gp_fail(err, "infer: missing argument");
	if (roof_device_check(d, err) != GP_OK)
		return GP_EINVAL;
	if (model_check(m, err) != GP_OK ||
	    mem_infer_model_ok(m, err) != GP_OK)
		return GP_EINVAL;
	/* A hybrid stack: an unfused dequantisation pass over its cache
	 * (kv_dequant) counts every layer's, and llama.cpp's row split
	 * (row_split_time) a plain layer's matrices. */
	if (m->pattern[0] && c->kv_unfused)
		return gp_usage(err, "kv_unfused: a hybrid stack (model."
				"hybrid_pattern) is priced with the cache "
				"read by the attention kernel itself");
	if (m->pattern[0] && c->row_split && c->tp > 1)
		return gp_usage(err, "tp %d: a hybrid stack (model.hybrid_"
				"pattern) is not priced under llama.cpp's row "
				"split", c->tp);
	/* Bits per weight from 1 (BitNet) to 32 (fp32); a KV element from
	 * one bit to 16 B.  Amounts are bounded at GP_AMOUNT_MAX and
	 * counts at GP_COUNT_MAX so that every product below is finite
	 * and every int sum fits (weight_bits 1e308 made the weights inf,
	 * gpus 2^30 with tp 2 overflowed tp * pp * replicas). */
	if (gp_check_num(c->weight_bits, 1, 32, "weight_bits", err) ||
	    gp_check_num(c->embed_bits, 1, 32, "embed_bits", err) ||
	    (c->head_bits != 0 &&
	     gp_check_num(c->head_bits, 1, 32, "head_bits", err)) ||
	    gp_check_num(c->kv_bytes, 0.125, 16, "kv_bytes", err) ||
	    gp_check_num(c->mamba_ssm_bytes, 2, 4, "mamba_ssm_bytes", err) ||
	    gp_check_count(c->tp, 1, "tp", err) ||
	    gp_check_count(c->pp, 1, "pp", err) ||
	    gp_check_count(c->gpus, 1, "gpus", err))
		return GP_EINVAL;
	if (c->gpus % ((long long)c->tp * c->pp) != 0)
		return gp_fail(err, "gpus %d is not a multiple of tp*pp = %lld",
		               c->gpus, (long long)c->tp * c->pp);
	if (c->pp > m->layers)
		return gp_fail(err, "pp %d exceeds the %d layers", c->pp,
		               m->layers);
	if (!gp_finite(c->kv_pool) || c->kv_pool < 0 ||
	    c->kv_pool > GP_AMOUNT_MAX)
		return gp_fail(err, "kv_pool must be 0 to %g bytes (got %g)",
		               GP_AMOUNT_MAX, c->kv_pool);
	/* MLA's absorbed decode (mla_decode) prices its own weight-only
	 * linears; an unfused dequantisation is not priced there. */
	if (c->wo_unfused && m->mla.kv_lora_rank > 0)
		return gp_usage(err, "unfused_dequant: an unfused weight "
		                "dequantisation is not priced for an MLA "
		                "model (model.mla)");
	if (c->kv_unfused && m->mla.kv_lora_rank > 0)
		return gp_fail(err, "kv_unfused: an unfused dequantisation of "
		               "an MLA latent cache is not modelled");
	if (c->kv_per_qhead && m->mla.kv_lora_rank > 0)
		return gp_fail(err, "kv_per_qhead: a per-query-head decode "
		               "attention kernel over a latent (MLA) cache is "
		               "not modelled");
	if (c->mixed_kv_per_qhead && m->mla.kv_lora_rank > 0)
		return gp_fail(err, "mixed_kv_per_qhead: a mixed step's decode "
		               "attention over a latent (MLA) cache read per "
		               "query head is not modelled");
	if (c->n_graph < 0 || c->n_graph > INFER_GRAPH_MAX)
		return gp_fail(err, "graph_sizes: %d sizes, at most %d",
		               c->n_graph, INFER_GRAPH_MAX);
	for (int i = 0; i < c->n_graph; i++)
		if (c->graph_sizes[i] < 1 || c->graph_sizes[i] > GP_COUNT_MAX ||
		    (i > 0 && c->graph_sizes[i] <= c->graph_sizes[i - 1]))
			return gp_fail(err, "graph_sizes must ascend, each in "
			               "1..%d (got %d at %d)", GP_COUNT_MAX,
			               c->graph_sizes[i], i + 1);
	if (c->gemv_packed != 0 && c->gemv_packed != 1)
		return gp_fail(err, "gemv_packed must be 0 or 1 (got %d)",
		               c->gemv_packed);
	if (c->acc16_gemm != 0 && c->acc16_gemm != 1)
		return gp_fail(err, "acc16_gemm must be 0 or 1 (got %d)",
		               c->acc16_gemm);
	if (c->one_token_graphs != 0 && c->one_token_graphs != 1)
		return gp_fail(err, "one_token_graphs must be 0 or 1 (got %d)",
		               c->one_token_graphs);
	if (c->row_split != 0 && c->row_split != 1)
		return gp_fail(err, "row_split must be 0 or 1 (got %d)",
		               c->row_split);
	if (c->wo_split_k != 0 &&
	    (c->wo_split_k < 2 || c->wo_split_k > INFER_MAX_SPLIT_K))
		return gp_fail(err, "wo_split_k must be 0 or a whole number "
		               "of K slices 2..%d (got %d)", INFER_MAX_SPLIT_K,
		               c->wo_split_k);
	if (gp_check_count(c->wo_unfused_above, 0, "wo_unfused_above", err) ||
	    gp_check_count(c->ubatch, 0, "ubatch", err) ||
	    gp_check_count(c->ubatch_call, 0, "ubatch_call", err))
		return GP_EINVAL;
	if (c->ubatch_call > 0 && c->ubatch_call < c->ubatch)
		return gp_fail(err, "ubatch_call %d is below ubatch %d (a "
		               "decode call holds whole ubatches)",
		               c->ubatch_call, c->ubatch);
	if (!gp_finite(c->ubatch_launches) || c->ubatch_launches < 0.0 ||
	    c->ubatch_launches > 1e4)
		return gp_fail(err, "ubatch_launches must be in [0, 10000] "
		               "(got %g)", c->ubatch_launches);
	if (!gp_finite(c->launch_queue) || c->launch_queue < 0.0 ||
	    c->launch_queue > 1e7)
		return gp_fail(err, "launch_queue must be in [0, 1e7] (got %g)",
		               c->launch_queue);
	if (!gp_finite(c->score_bytes) || c->score_bytes < 0.0 ||
	    c->score_bytes > 64.0)
		return gp_fail(err, "score_bytes must be in [0, 64] (got %g)",
		               c->score_bytes);
	if (!gp_finite(c->graph_act_bytes) || c->graph_act_bytes < 0.0 ||
	    c->graph_act_bytes > 8.0)
		return gp_fail(err, "graph_act_bytes must be in [0, 8] (got "
		               "%g)", c->graph_act_bytes);
	if (c->scores_whole != 0 && c->scores_whole != 1)
		return gp_fail(err, "scores_whole must be 0 or 1 (got %d)",
		               c->scores_whole);
	if (gp_check_count(c->gemv_max, 0, "gemv_max", err) ||
	    gp_check_count(c->custom_ar_gpus, 0, "custom_ar_gpus", err) ||
	    gp_check_count(c->batch, 0, "batch", err) ||
	    gp_check_count(c->concurrency, 0, "concurrency", err) ||
	    gp_check_count(c->max_batch, 1, "max_batch", err) ||
	    gp_check_num(c->input, 1, GP_COUNT_MAX, "input", err) ||
	    gp_check_num(c->output, 1, GP_COUNT_MAX, "output", err) ||
	    gp_check_num(c->input + c->output, 2, GP_COUNT_MAX,
	                 "input + output", err) ||
	    amount(c->host_op_time, "host_op_time", err) ||
	    gp_check_num(c->host_ops_per_layer, 0, INFER_HOST_OPS_MAX,
	                 "host_ops_per_layer", err) ||
	    gp_check_num(c->extend_host_ops, 0, INFER_HOST_OPS_MAX,
	                 "extend_host_ops", err) ||
	    amount(c->engine_host_step, "engine_host_step", err) ||
	    amount(c->engine_host_seq, "engine_host_seq", err) ||
	    amount(c->graph_max_ctx, "graph_max_ctx", err) ||
	    gp_check_num(c->kv_tokens, 0, GP_COUNT_MAX, "kv_tokens", err) ||
	    rate(c->offload_bw, "offload_bw", err) ||
	    rate(c->offload_link_bw, "offload_link_bw", err) ||
	    gp_check_count(c->offload_cpu_max, 0, "offload_cpu_max", err) ||
	    gp_check_count(c->offload_layers, 0, "offload_layers", err) ||
	    amount(c->host_capacity, "host_capacity", err) ||
	    amount(c->ar_fusion_max, "ar_fusion_max", err) ||
	    amount(c->ar_latency, "ar_latency", err) ||
	    rate(c->ar_bw, "ar_bw", err) ||
	    rate(c->p2p_bw, "p2p_bw", err) ||
	    amount(c->price, "price", err) ||
	    gp_check_num(c->sample_kernels, 0, GP_COUNT_MAX, "sample_kernels",
	                 err))
		return GP_EINVAL;
	/* A price is 0 (a free card: cost 0) or at least 1e-6 units per
	 * GPU-hour: tokens/s per price of 1e-308 was inf. */
	if (c->price != 0.0 && c->price < 1e-6)
		return gp_fail(err, "price must be 0 or at least 1e-06 per "
		               "GPU-hour (got %g)", c->price);
	/* A fraction of the streaming copy: 0 (the device's rate) or a
	 * share a kernel can reach, as roof_op.stream takes it. */
	if (!gp_finite(c->wo_stream) || c->wo_stream < 0.0 ||
	    (c->wo_stream > 0.0 && c->wo_stream < 0.01) || c->wo_stream > 1.0)
		return gp_fail(err, "wo_stream must be 0 or in [0.01, 1] "
		               "(got %g)", c->wo_stream);
	if (!gp_finite(c->attn_stream) || c->attn_stream < 0.0 ||
	    (c->attn_stream > 0.0 && c->attn_stream < 0.01) ||
	    c->attn_stream > 1.0)
		return gp_fail(err, "attn_stream must be 0 or in [0.01, 1] "
		               "(got %g)", c->attn_stream);
	/* The weight-only linears' multiple and the fp8 MoE's, each at
	 * roof_op.bf16_x's bounds. */
	if (bf16_x(c->wo_bf16_x, "wo_bf16_x", err) != GP_OK ||
	    bf16_x(c->moe_fp8_bf16_x, "moe_fp8_bf16_x", err) != GP_OK ||
	    bf16_x(c->kv_fp8_prompt_x, "kv_fp8_prompt_x", err) != GP_OK)
		return GP_EINVAL;
	/* An M tile as roof_op.m_tile takes it: 0 (the library's) or
	 * 8 to 128 rows. */
	if (!gp_finite(c->m_tile) || c->m_tile < 0.0 ||
	    (c->m_tile > 0.0 && c->m_tile < 8.0) || c->m_tile > 128.0)
		return gp_fail(err, "m_tile must be 0 or in [8, 128] rows "
		               "(got %g)", c->m_tile);
	/* A bucket of tokens: 0 (none) or a whole number of them. */
	if (bad(c->kv_bucket) || c->kv_bucket != floor(c->kv_bucket) ||
	    c->kv_bucket > GP_AMOUNT_MAX)
		return gp_fail(err, "kv_bucket must be 0 or a whole number of "
		               "tokens (got %g)", c->kv_bucket);
	if (!gp_finite(c->capacity) || c->capacity <= 0 ||
	    c->capacity > GP_AMOUNT_MAX)
		return gp_fail(err, "capacity must be a positive number of "
		               "bytes up to %g (got %g)", GP_AMOUNT_MAX,
		               c->capacity);
	if (gp_check_num(c->max_num_tokens, 1, GP_AMOUNT_MAX,
	                 "max_num_tokens", err))
		return GP_EINVAL;
	/* At least one prompt token is computed: its logits give the first
	 * output token (vLLM's KV cache manager: "When all tokens hit the
	 * cache, we must recompute the last token to obtain logits"). */
	if (!gp_finite(c->cached) || c->cached < 0.0 ||
	    !(c->cached <= c->input - 1.0))
		return gp_fail(err, "cached must be in [0, input - 1] prompt "
		               "tokens (got %g of %g)", c->cached, c->input);
	if (c->requests != 0.0 &&
	    gp_check_num(c->requests, 1, GP_COUNT_MAX, "requests", err))
		return GP_EINVAL;
	/* Spread outputs have a longest above their mean. */
	if (c->output_max != 0.0 &&
	    (gp_check_num(c->output_max, 1, GP_COUNT_MAX, "output_max",
	                  err) || !(c->output_max > c->output)))
		return gp_fail(err, "output_max must be 0 (every request "
		               "output tokens) or above output %g (got %g)",
		               c->output, c->output_max);
	/* Uniform outputs reach down to 2 output - output_max, at least
	 * one token. */
	if (c->output_uniform &&
	    !(c->output_max > c->output &&
	      2.0 * c->output - c->output_max >= 1.0))
		return gp_fail(err, "output_uniform: output_max must lie in "
		               "(output, 2 output - 1] (output %g, got %g)",
		               c->output, c->output_max);
	if ((int)c->compute < 0 || c->compute >= GP_DTYPE_COUNT ||
	    !(d->peak[c->compute] > 0.0) || !(d->gemm_frac[c->compute] > 0))
		return gp_fail(err, "device has no %s tensor compute",
		               gp_dtype_name(c->compute));
	if ((int)c->runtime < INFER_GRAPHS || c->runtime > INFER_EAGER)
		return gp_fail(err, "unknown runtime %d", (int)c->runtime);
	if (c->tp > 1 && !c->topo && !(c->ar_bw > 0.0))
		return gp_fail(err, "tp > 1 needs a topology or ar_bw");
	return GP_OK;
}

int infer_check(const gp_model *m, const roof_device *d, const infer_cfg *c,
                gp_error *err)
{
	return check_cfg(m, d, c, err);
}

/* vLLM's custom all-reduce (vllm/distributed/device_communicators/
 * custom_all_reduce.py and csrc/custom_all_reduce.cuh; SGLang runs the
 * same kernels): within one host whose GPUs form a full NVLink mesh each
 * rank reads its peers' buffers directly over NVLink, one kernel a call,
 * where NCCL runs its ring or tree protocol.  It serves a TP group of 2,
 * 4, 6 or 8 GPUs (_SUPPORTED_WORLD_SIZES) on one host ("Custom allreduce
 * is disabled because this process group spans across nodes") and
 * messages below its buffer, max_size = 8192 * 1024 bytes; larger ones,
 * and groups over hosts, go to NCCL (pynccl).  The kernel takes the
 * one-stage form -- every rank reads all n - 1 peers' whole buffers and
 * reduces -- for n = 2, or n <= 4 below 512 KiB, or n <= 8 below 256 KiB
 * ("(world_size_ <= 4 && bytes < 512 * 1024) || (world_size_ <= 8 &&
 * bytes < 256 * 1024)"), else the two-stage reduce-scatter + all-gather,
 * 2 (n - 1) / n of the buffer through each rank.  Each is priced as a
 * latency a call plus those bytes at a share of the scale-up link's rate,
 * fitted to vLLM's own timing on H100 (vLLM PR #24111,
 * benchmark_device_communicators.py, TP 6, bf16 tensors of 0.5, 1, 1.5,
 * 2, 3 and 4 MiB: ca_1stage 13, 21, 30, 38, 53, 70 us and ca_2stage 15,
 * 17, 20, 26, 29, 37 us; the least-squares lines are 5.15 us + 5 S /
 * (0.720 x 450 GB/s) and 11.41 us + (5/3) S / (0.617 x 450 GB/s), within
 * 1.3 us of every point).  The same table's pynccl column (23, 25, 43
 * and 53 us at 0.5, 1, 2 and 4 MiB) is within 18% of what comm_cost
 * prices NCCL at for those 6 H100s (21.0, 29.4, 44.5 and 52.3 us), so the
 * two backends stand on the same footing. */
#define CUSTOM_AR_MAX_BYTES (8192.0 * 1024.0)
#define CUSTOM_AR_1STAGE_LAT 5.15e-6
#define CUSTOM_AR_1STAGE_EFF 0.720
#define CUSTOM_AR_2STAGE_LAT 11.41e-6
#define CUSTOM_AR_2STAGE_EFF 0.617

/* 1 and the custom all-reduce's seconds in *t when it serves this call;
 * 0 when NCCL does. */
static int custom_ar_time(const infer_cfg *c, double bytes, double *t)
{
	double n = c->tp, bw;
	int one;

	if (c->custom_ar_gpus < c->tp || !c->topo ||
	    c->topo->up_kind != GP_LINK_NVLINK ||
	    (c->tp != 2 && c->tp != 4 && c->tp != 6 && c->tp != 8) ||
	    bytes >= CUSTOM_AR_MAX_BYTES || !(c->topo->up.bw > 0.0))
		return 0;
	bw = c->topo->up.bw;
	one = c->tp == 2 || (c->tp <= 4 && bytes < 512.0 * 1024.0) ||
	      (c->tp <= 8 && bytes < 256.0 * 1024.0);
	*t = (one ? CUSTOM_AR_1STAGE_LAT : CUSTOM_AR_2STAGE_LAT) +
		infer_custom_ar_wire(one, n, bytes, bw);
	return 1;
}

double infer_custom_ar_wire(int one, double n, double bytes, double bw)
{
	if (!(bw > 0.0) || n <= 1.0 || bytes <= 0.0)
		return 0.0;
	return one ? (n - 1.0) * bytes / (CUSTOM_AR_1STAGE_EFF * bw) :
		2.0 * (n - 1.0) / n * bytes / (CUSTOM_AR_2STAGE_EFF * bw);
}

/* All-reduce of `bytes` over the TP group. */
static int allreduce(const infer_cfg *c, double bytes, double *t,
                     gp_error *err)
{
	gp_comm_result r;
	double n = c->tp;

	*t = 0.0;
	if (c->tp <= 1 || bytes <= 0.0)
		return GP_OK;
	if (custom_ar_time(c, bytes, t))
		return GP_OK;
	if (c->topo) {
		if (comm_cost(c->topo, GP_ALL_REDUCE, bytes, c->tp, &r, err)
		    != GP_OK)
			return GP_EINVAL;
		*t = r.time;
		return GP_OK;
	}
	/* Ring all-reduce, alpha-beta (Patarasuk & Yuan 2009; Thakur et al.
	 * 2005): 2(n-1) steps of latency, 2(n-1)/n of the buffer per GPU. */
	*t = 2.0 * (n - 1) * c->ar_latency +
		2.0 * (n - 1) / n * bytes / c->ar_bw;
	return GP_OK;
}

typedef struct builder {
	const roof_device *d;
	const roof_device *d16; /* d at its FP16-accumulate 16-bit rate
	                           (infer_cfg.acc16_gemm); NULL: none */
	int acc16;            /* the next op runs on d16 where there is
	                         one */
	const infer_cfg *c;
	infer_phase *ph;
	gp_error *err;
	int graphs;
	int gemv;             /* the next op runs as a CUDA-core GEMV */
	double m_tile;        /* and pads its tokens to this M tile (0:
	                         the library's; infer_cfg.m_tile) */
	double bf16_x;        /* and computes at no more than this multiple
	                         of the 16-bit rate (0: its precision's;
	                         infer_cfg.wo_bf16_x or moe_fp8_bf16_x) */
	double dequant;       /* and dequantises this many FLOP per weight */
	double stream;        /* and streams at this fraction (0: the
	                         device's GEMM rate) */
	int no_split;         /* and never splits its K loop (roof_op
	                         no_split; fa2_prompt_nosplit) */
} builder;

/* The phase's next operator row, once its roofline (row->r) is priced:
 * name it, count it and add it to the phase's time, FLOPs and bytes --
 * the one tail of add() and fused_attn(). */
static int push_row(builder *b, infer_op_row *row, const char *name,
                    double count, double flop, double bytes)
{
	row->name = name;
	row->count = count;
	row->flop = flop;
	row->bytes = bytes;
	row->total = count * row->r.time;
	b->ph->nops++;
	b->ph->gpu_time += row->total;
	b->ph->flop += count * flop;
	b->ph->bytes += count * bytes;
	return GP_OK;
}

static int add(builder *b, const char *name, double count, double flop,
               double bytes, double m, double n, double k, double nb,
               gp_dtype prec)
{
	/* Designated: every field not named is 0, its neutral value
	 * (roofline.h roof_op): dequant_rep 0 converts each weight once,
	 * spread 0 gives every group m rows. */
	roof_op op = {
		.name = name, .flop = flop, .bytes = bytes,
		.m = m, .n = n, .k = k, .count = nb, .prec = prec,
		.gemv = b->gemv, .dequant = b->dequant, .stream = b->stream,
		.m_tile = b->m_tile,  /* 0: the library's tiles (roofline.c) */
		.bf16_x = b->bf16_x,  /* 0: the precision's own rate */
		.no_split = b->no_split, /* 0: the best split-K */
	};
	infer_op_row *row;

	if (count <= 0.0)
		return GP_OK;
	if (b->ph->nops >= INFER_MAX_OPS)
		return gp_fail(b->err, "infer: too many operators");
	row = &b->ph->ops[b->ph->nops];
	if (roof_op_time(b->acc16 && b->d16 ? b->d16 : b->d, &op, b->graphs,
	                 &row->r, b->err) != GP_OK)
		return GP_EINVAL;
	return push_row(b, row, name, count, flop, bytes);
}

/* A prompt's (or chunk's) attention on the runtime's fused kernel
 * (infer_cfg.prompt_attn_fused): compute at the device's measured
 * attention fraction of the precision's peak (roof_device attn_fwd, the
 * catalog's record of the kernel the runtime runs, at the sustained
 * clock) times its shape factor against the record's conditions
 * (roof_attn_eff: output m x n over k keys, nb of them, the causal
 * diagonal of a chunk of causal_q tokens, the length and narrow-head
 * curves); memory at the streaming rate; the longer of the two -- the
 * MoE serving step's rule (serve_row.c sx_attn_row) and training's
 * (train.c), so one kernel is priced one way on every path.  Before it
 * the dense step priced this op as a GEMM of its shape at the bf16
 * GEMM fraction (647 TFLOP/s on an H100 at the sustained clock, Llama's
 * head dim 128), above FA3's record there (0.713 x 0.82 x 989 = 578).
 * An FP8 kernel at the catalog's share of that fraction of the FP8 peak
 * (attn_fp8), capped at infer_cfg.kv_fp8_prompt_x of the 16-bit
 * kernel's rate where the runtime's kernel holds it there (as
 * sx_attn_row). */
static int fused_attn(builder *b, const char *name, double count,
                      double flop, double bytes, double m, double n,
                      double k, double nb, double causal_q, gp_dtype prec)
{
	const roof_device *d = b->d;
	gp_dtype half = infer_compute_dtype(d, NULL);
	roof_op op;
	infer_op_row *row;
	double eff, rate, tc;

	if (count <= 0.0)
		return GP_OK;
	if (b->ph->nops >= INFER_MAX_OPS)
		return gp_fail(b->err, "infer: too many operators");
	memset(&op, 0, sizeof op);
	op.name = name;
	op.bytes = bytes;
	op.prec = prec;
	row = &b->ph->ops[b->ph->nops];
	if (roof_op_time(d, &op, b->graphs, &row->r, b->err) != GP_OK)
		return GP_EINVAL;
	eff = roof_attn_eff(d, m, n, k, nb, causal_q);
	rate = d->peak[prec] * d->attn_fwd * eff *
		(prec == GP_FP8 && d->attn_fp8 > 0 ? d->attn_fp8 : 1.0);
	if (prec == GP_FP8 && b->c->kv_fp8_prompt_x > 0.0 &&
	    d->peak[half] > 0)
		rate = fmin(rate, b->c->kv_fp8_prompt_x * d->peak[half] *
		            d->attn_fwd * eff);
	tc = flop > 0 ? flop / rate : 0.0;
	row->r.compute_rate = rate;
	row->r.t_compute = tc;
	row->r.shape_eff = eff;
	row->r.bound = tc >= row->r.t_memory ? ROOF_COMPUTE : ROOF_MEMORY;
	row->r.time = fmax(tc, row->r.t_memory) + row->r.t_launch;
	row->r.intensity = bytes > 0 ? flop / fmax(bytes, 1.0) : 0.0;
	row->r.ridge = roof_ridge(d, prec, 1);
	row->r.ridge_peak = roof_ridge(d, prec, 0);
	return push_row(b, row, name, count, flop, bytes);
}

/* A GEMM of T tokens through an n x k weight slice at wb bytes/weight. */
static int gemm(builder *b, const char *name, double count, double T,
                double n, double k, double wb, gp_dtype prec)
{
	double bytes = n * k * wb + T * (k + n) * ACT_BYTES;

	return add(b, name, count, 2.0 * T * n * k, bytes, T, n, k, 1.0, prec);
}

/* An elementwise op reading and writing `elems` activations. */
static int elem(builder *b, const char *name, double count, double elems,
                double flop_per)
{
	return add(b, name, count, flop_per * elems,
	           2.0 * elems * ACT_BYTES, 0, 0, 0, 0, b->c->compute);
}

/* The kernels a sampler launches beyond greedy sampling's (the "sample"
 * row): c->sample_kernels of them a step, each an elementwise pass over
 * the step's logits, priced as the "sample" row is, one kernel on the
 * stream after the forward: its launch, ROOF_MEM_FILL and its bytes.
 * vLLM V0 gathers the logits to the driver and samples the whole
 * vocabulary there (LogitsProcessor's tensor_model_parallel_gather), so
 * a kernel reads and writes batch x vocab fp32 values, 8 bytes an
 * element.  The host launches them while the GPU still runs the
 * forward: V0's sampler reads nothing back before its sampled tokens'
 * .cpu() (its one boolean-mask assignment, repetition_penalties[~mask]
 * = 1.0, is a masked_fill_: PyTorch's index_put_ dispatches a one-
 * element CPU value with a same-device bool mask there,
 * TensorAdvancedIndexing.cpp canDispatchToMaskedFill, no nonzero and
 * no sync), so their host time stays under the forward's GPU time and
 * the stream's kernels are what the step waits for.  A lower bound:
 * the sort of top-p / top-k is priced as one such pass, though a radix
 * sort makes several. */
static int sample_extra(builder *b, const gp_model *m, const infer_cfg *c,
                        double batch)
{
	double v = batch * (double)m->vocab;

	if (!(c->sample_kernels > 0.0))
		return GP_OK;
	return add(b, "sample_ops", c->sample_kernels, v, v * 8.0, 0, 0, 0,
	           0, GP_FP32);
}

/* Mean KV length a query of the step attends to, over all layers: the
 * step's q tokens see ctx - q + 1 ... ctx keys (causal), mean
 * ctx - (q - 1) / 2, each layer at most what model_layer_kv lets it read
 * (a sliding-window layer its window): model_kv_read_mean, the rule the
 * MoE serving step (serve_step.c) applies too. */
static double step_kv_mean(const gp_model *m, double q, double ctx)
{
	return model_kv_read_mean(m, ctx - (q - 1.0) / 2.0);
}

/* A fused-MoE layer's kernels beyond its router GEMM, its two grouped
 * GEMMs and the activation between them (model_layer_ops' moe_router,
 * moe_up, moe_act, moe_down), as vLLM's FusedMoE launches them (SGLang
 * runs the same Triton fused_moe): the routing -- fused_topk's cast of
 * the router logits to fp32 ("gating_output.float()"), ops.topk_softmax
 * and the renormalisation's sum and division, 4 kernels, as Qwen3-MoE
 * and Mixtral renormalise; DeepseekV2MoE (the MLA models') routes by
 * grouped_topk instead, torch.compile'd into 8 kernels, and multiplies by
 * routed_scaling_factor, 1 more -- then fused_experts'
 * moe_align_block_size (its fill_, its zeros and the align kernel that
 * sorts the T k dispatches by expert, 3) and, after the second grouped
 * GEMM, moe_sum, which adds each token's k expert outputs
 * (vllm/model_executor/layers/fused_moe/fused_moe.py at 000d1458,
 * moe_align_block_size.py at 05be9924; the launches gpuplan.rl's
 * eager_ops_per_layer counts).  Each is priced as every other kernel of
 * the step is (roof_op_time: its bytes at the streaming rate, the
 * pipeline fill, the launch): the routing kernels read the T x E fp32
 * logits and write T x k ids and weights; moe_sum reads the T k expert
 * outputs at the hidden width and writes T rows.  Cross-check: vLLM's
 * benchmark_moe for Qwen3-30B-A3B in fp8 on one H100 (vLLM PR #24700,
 * "Main", the default config) times fused_topk + fused_experts at
 * 44.5, 129.8, 238.4 and 273.7 us at batch 1, 8, 32 and 128; this
 * layer less its router GEMM prices 78.1, 156.6, 265.9 and 302.3 with
 * fused_experts' two quantise passes (moe_quant; 68.2, 146.5, 255.5 and
 * 291.1 without them, 29, 107, 216 and 250 without these kernels too):
 * within +21% from batch 8 up, while at batch 1 the step's per-kernel
 * fill (3.9 us + the launch) overstates kernels this small.  In bf16 on A100, SGLang
 * PR #6825 times the same layer with the untuned default config (A100
 * PCIe 40GB) at 109.2, 403.1 and 917.5 us at batch 1, 8 and 64, where
 * it prices 114.8, 447.2 and 1020.0 (measured / priced 0.89-0.98 from
 * batch 1 to 96; more cross-checks, vllm PRs #40542 and #24700, in
 * docs/validation.md). */
#define MOE_TOPK_KERNELS 4.0
#define MOE_GROUPED_TOPK_KERNELS 9.0
#define MOE_ALIGN_KERNELS 3.0

/* vLLM's fused grouped top-k (infer_cfg.fused_grouped_topk): one CUDA
 * kernel takes the router's logits to the k expert ids and weights,
 * where the native path launches MOE_GROUPED_TOPK_KERNELS -- "we add
 * the sigmoid, e_score_correction_bias, and 32bit output cast into the
 * fused_grouped_topk CUDA kernel that we already use for DeepSeek-like
 * models" (vLLM PR #28124, merged the week of 2025-11-14; the kernel
 * itself, routed_scaling_factor applied inside, PR #23274, 2025-08). */
#define MOE_FUSED_GROUPED_TOPK_KERNELS 1.0

/* vLLM's topk_softmax with the router logits' fp32 cast and the
 * renormalisation inside (infer_cfg.fused_topk_softmax): "Fuse float
 * cast and renormalize to topk softmax kernel", vLLM PR #26717 (merged
 * the week of 2025-10-24), which timed the routing at 4.0 us where the
 * four launches of MOE_TOPK_KERNELS took 10.4 us. */
#define MOE_FUSED_TOPK_KERNELS 1.0

static int moe_route(builder *b, const gp_model *m, const shape *s,
		     double T)
{
	double E = m->moe.experts, k = m->moe.top_k;
	double grouped = b->c->fused_grouped_topk ?
			 MOE_FUSED_GROUPED_TOPK_KERNELS :
			 MOE_GROUPED_TOPK_KERNELS;
	double softmax = b->c->fused_topk_softmax ? MOE_FUSED_TOPK_KERNELS :
			 MOE_TOPK_KERNELS;
	double n = (m->mla.kv_lora_rank > 0 ? grouped : softmax) +
		   MOE_ALIGN_KERNELS;

	if (add(b, "moe_route", s->nmoe * n, 0.0, T * (E * 4.0 + k * 8.0),
	        0, 0, 0, 0, b->c->compute))
		return GP_EINVAL;
	return add(b, "moe_sum", s->nmoe, T * k * s->h,
	           T * (k + 1.0) * s->h * ACT_BYTES, 0, 0, 0, 0,
	           b->c->compute);
}

/* TensorRT-LLM's CUTLASS fused MoE copies every token's row to each of
 * its k experts' contiguous blocks before the first grouped GEMM
 * (infer_cfg.moe_expand): runMoe's "// Actually permute the data" calls
 * expandInputRowsKernelLauncher(input_activations, permuted_data_, ...)
 * ahead of gemm1, the kernel that "Duplicated and permutes rows for MoE
 * ... 'expanded_x_row' simply means that the number of values is num_rows
 * x k" (cpp/tensorrt_llm/kernels/cutlass_kernels/moe_gemm/
 * moe_kernels.cu), with the rows' block scales in NVFP4.  vLLM's and
 * SGLang's Triton fused_moe read the tokens through sorted_token_ids
 * inside the GEMM instead (moe_route's align kernels).  The pass writes
 * the T k rows at the GEMM's input format (fp4 with its scales:
 * weight_bits / 8 a value; fp8 1 B; otherwise bf16) and reads the T
 * source rows once from HBM (a row's k copies are read back from L2, as
 * moe_sum's k reads are counted once each). */
static int moe_expand(builder *b, const gp_model *m, const shape *s,
		      double T, int wo)
{
	const infer_cfg *c = b->c;
	double xb = wo ? ACT_BYTES : c->compute == GP_FP4 ?
		    c->weight_bits / 8.0 : c->compute == GP_FP8 ? 1.0 :
		    ACT_BYTES;

	return add(b, "moe_expand", s->nmoe, 0.0,
		   T * (m->moe.top_k + 1.0) * s->h * xb, 0, 0, 0, 0,
		   c->compute);
}

/* MLA's decode in a tensor-parallel engine, as vLLM runs it (the
 * absorbed form: vllm/model_executor/models/deepseek_v2.py's
 * DeepseekV2MLAAttention through the MultiHeadLatentAttention wrapper,
 * then vllm/v1/attention/backends/mla/common.py MLACommonImpl.forward and
 * flashmla.py FlashMLAImpl, the same path in the 0.10 to 0.17 releases
 * the RL frameworks pin).  model_layer_ops folds MLA's projections into
 * one "qkv" GEMM split over tp; a decode step runs them as
 *  - fused_qkv_a_proj, the q and kv latents' down-projections in one
 *    GEMM over every token, its weights held and read whole on every
 *    rank: "self.fused_qkv_a_proj = MergedReplicatedLinear(
 *    self.hidden_size, [self.q_lora_rank, self.kv_lora_rank +
 *    self.qk_rope_head_dim]" (a ReplicatedLinear), beside the head-split
 *    ColumnParallelLinear q_b_proj and kv_b_proj;
 *  - q_a_layernorm and kv_a_layernorm, an RMSNorm kernel each;
 *  - q_b_proj, the heads' queries from the q latent;
 *  - "torch.bmm(decode_q_nope, self.W_UK_T)", W^UK absorbed into each
 *    head's query, and _v_up_proj's bmm by W^UV after the attention:
 *    per-head batched GEMMs on 16-bit weights, kv_b_proj's dequantised
 *    at load ("we just store fp16/bf16 copies and perform the bmm's in
 *    16-bit", process_weights_after_loading);
 *  - rotary_emb outside the attention op (rope_kv) and
 *    ops.concat_and_cache_mla inside it, the latent and k_pe written to
 *    the cache (kv_write);
 *  - FlashMLAImpl._forward_decode's "torch.cat(q, dim=-1)" of the
 *    absorbed query and q_pe before flash_mla_with_kvcache (attention;
 *    on Blackwell the CUTLASS MLA backend copies q_nope and q_pe into
 *    128-head buffers instead, two copies counted as this one);
 *  - o_proj.
 * Seven kernels beyond the five operators model_layer_ops lists for the
 * attention, and the down-projections read whole rather than their 1/tp
 * share (the serving model's mla_attention prices the same set for
 * SGLang, serve_step.c).  FlashMLA's combine kernel, which its dense
 * decode launches after every split-KV kernel and which returns at once
 * for a sequence it did not split, is not counted. */
static int mla_decode(builder *b, const gp_model *m, const shape *s,
		      double T, int wo)
{
	const infer_cfg *c = b->c;
	const gp_mla *a = &m->mla;
	double L = m->layers, h = s->h, wb = c->weight_bits / 8.0;
	double nh = m->heads / (double)c->tp, qr = a->q_lora_rank;
	double r = a->kv_lora_rank, dr = a->qk_rope_head_dim;
	double dn = a->qk_nope_head_dim, dv = a->v_head_dim;
	gp_dtype cp = c->compute, b16 = infer_compute_dtype(b->d, NULL);

	b->dequant = wo ? INFER_DEQUANT_FLOP : 0.0;
	b->gemv = wo && T <= c->gemv_max ? 1 + c->gemv_packed : 0;
	b->stream = wo ? c->wo_stream : 0.0;
	b->bf16_x = wo ? c->wo_bf16_x : 0.0;
	if (gemm(b, "q_kv_a", L, T, (qr > 0 ? qr : 0.0) + r + dr, h, wb,
	         cp) ||
	    (qr > 0 ? gemm(b, "q_b", L, T, nh * (dn + dr), qr, wb, cp) :
	     gemm(b, "q_proj", L, T, nh * (dn + dr), h, wb, cp)))
		return GP_EINVAL;
	b->dequant = 0.0;
	b->gemv = 0;
	b->stream = 0.0;
	b->bf16_x = 0.0;
	if ((qr > 0 && elem(b, "q_latent_norm", L, T * qr, 4.0)) ||
	    elem(b, "kv_latent_norm", L, T * r, 4.0) ||
	    add(b, "q_absorb", L, 2.0 * T * nh * dn * r,
	        nh * dn * r * ACT_BYTES + T * nh * (dn + r) * ACT_BYTES,
	        T, r, dn, nh, b16) ||
	    add(b, "kv_write", L, 0.0, T * (r + dr) * ACT_BYTES, 0, 0, 0, 0,
	        cp) ||
	    elem(b, "q_cat", L, T * nh * (r + dr), 0.0) ||
	    add(b, "v_absorb", L, 2.0 * T * nh * r * dv,
	        nh * r * dv * ACT_BYTES + T * nh * (r + dv) * ACT_BYTES,
	        T, dv, r, nh, b16))
		return GP_EINVAL;
	return GP_OK;
}

/* The Triton fused MoE's two activation-quantise kernels (infer_cfg.
 * moe_quant), vLLM's and SGLang's with fp8 experts: fused_experts_impl
 * (vllm/model_executor/layers/fused_moe/fused_moe.py) calls
 * moe_kernel_quantize_input on the layer's tokens before the first
 * grouped GEMM and, after the activation, "qintermediate_cache2, a2q_scale
 * = moe_kernel_quantize_input(intermediate_cache2, a2_scale, ...)" before
 * the second -- for block-scaled fp8 (DeepSeek's 128 x 128 blocks)
 * per_token_group_quant_fp8, a kernel of its own each, outside the
 * torch.compile'd graph (fused_experts is a custom op).  The first reads
 * the T x hidden bf16 tokens, the second the T k rows of the rank's
 * expert width (moe.ffn_hidden / tp: the experts sliced by tp, as gp.infer
 * prices them), and each writes fp8 with an fp32 scale a 128-element
 * group; priced as act_quant's passes (4 FLOP an element, its bytes at
 * the streaming rate, the launch and fill).  The shared expert, which
 * vLLM runs as dense fp8 linears beside the fused op, quantises its own
 * inputs too: shared_quant, where it runs apart (shared_apart). */
#define MOE_QUANT_GROUP 128.0

/* Two such passes of a layer's MoE: over `in` elements before its first
 * GEMM (op `first`) and `mid` before its second (`second`), each reading
 * 16-bit activations and writing fp8 with an fp32 scale a group. */
static int quant_passes(builder *b, const char *first, const char *second,
			double count, double in, double mid)
{
	double per = ACT_BYTES + 1.0 + 4.0 / MOE_QUANT_GROUP;

	if (add(b, first, count, 4.0 * in, in * per, 0, 0, 0, 0,
	        b->c->compute))
		return GP_EINVAL;
	return add(b, second, count, 4.0 * mid, mid * per, 0, 0, 0, 0,
		   b->c->compute);
}

static int moe_quant(builder *b, const gp_model *m, const shape *s,
		     double T)
{
	double f = m->moe.ffn_hidden / (double)b->c->tp;

	return quant_passes(b, "moe_quant", "moe_quant_act", s->nmoe, T * s->h,
			    T * m->moe.top_k * f);
}

/* The shared expert as vLLM runs it (infer_cfg.moe_shared_apart): a
 * DeepseekV2MLP of its own, "self.shared_experts = DeepseekV2MLP(
 * hidden_size=config.hidden_size, intermediate_size=intermediate_size,
 * ... reduce_results=False" (vllm/model_executor/models/deepseek_v2.py,
 * v0.11.0), which the SharedFusedMoE layer calls before the routed
 * experts, "shared_out = self._shared_experts(hidden_states)", and adds
 * to their output ("fused_output += shared_output"; vllm/model_executor/
 * layers/shared_fused_moe/shared_fused_moe.py) -- on the same stream:
 * running it on a second one came after v0.11.0 (vLLM PR #26440, merged
 * October 2025, "executes the shared_experts part of the FusedMoE on a
 * separate GPU stream ... the TPOT improves from 23.35ms to 22.09ms",
 * DeepSeek-R1 FP8 on 8 x B200 at batch 32: 1.26 ms a step, 21.7 us for
 * each of its 58 MoE layers, that the serial shared expert held).  Its
 * linears are the runtime's dense ones (MergedColumnParallelLinear
 * gate_up_proj, RowParallelLinear down_proj: a GEMM each, SiluAndMul
 * between), not the fused MoE's grouped GEMMs; model_layer_ops folds it
 * into moe_up, moe_act and moe_down (SGLang's layout, which runs
 * DeepSeek-V3/R1's shared expert as one more expert of its fused MoE at
 * TP 8, "num_fused_shared_experts").  Here it is taken out of those
 * three and priced as the three kernels it is: shared_up, shared_act,
 * shared_down, at the dense linears' rate and M tile. */
static int shared_apart(const gp_model *m, const shape *s, double T,
			gp_op *ops, int n)
{
	double h = m->hidden, sf = s->shared_f;
	double up = (m->ffn_gated ? 2.0 : 1.0) * sf;
	double per = 0.0;
	int i;

	for (i = 0; i < n; i++) {
		gp_op *o = &ops[i];

		if (strcmp(o->name, "moe_up") == 0 ||
		    strcmp(o->name, "moe_down") == 0) {
			double w = strcmp(o->name, "moe_up") == 0 ? up : h;
			double k = strcmp(o->name, "moe_up") == 0 ? h : sf;

			o->flop -= 2.0 * T * w * k;
			o->weights -= w * k;
			o->act -= T * (w + k);
		} else if (strcmp(o->name, "moe_act") == 0 && o->elems > 0) {
			/* op_mlp_act: flop and act linear in the outputs */
			double r = 1.0 - 1.5 * T * sf / o->elems;

			per = o->flop / o->elems;
			o->flop *= r;
			o->act *= r;
			o->elems *= r;
		}
	}
	ops[n] = (gp_op){ .name = "shared_up", .kind = GP_OP_GEMM,
		.scope = GP_SCOPE_MOE, .wclass = GP_W_LINEAR,
		.flop = 2.0 * T * up * h, .m = T, .n = up, .k = h, .batch = 1,
		.weights = up * h, .act = T * (h + up) };
	ops[n + 1] = (gp_op){ .name = "shared_act", .kind = GP_OP_ELEM,
		.scope = GP_SCOPE_MOE, .wclass = GP_W_LINEAR,
		.flop = per * 1.5 * T * sf, .act = 3.0 * T * sf,
		.elems = 1.5 * T * sf };
	ops[n + 2] = (gp_op){ .name = "shared_down", .kind = GP_OP_GEMM,
		.scope = GP_SCOPE_MOE, .wclass = GP_W_LINEAR,
		.flop = 2.0 * T * h * sf, .m = T, .n = h, .k = sf, .batch = 1,
		.weights = h * sf, .act = T * (h + sf) };
	return n + 3;
}

/* The shared expert's fp8 linears quantise their inputs in kernels of
 * their own: vLLM's block-fp8 linear (W8A8BlockFp8LinearOp) runs its
 * QuantFP8 input quantisation, per_token_group_quant_fp8 at 128-wide
 * groups, before each GEMM, and the shared expert runs inside the fused
 * MoE's custom op, outside the torch.compile'd graph that could fuse it.
 * Priced as moe_quant's passes: the T x hidden tokens before shared_up,
 * the T x shared width after the activation before shared_down. */
static int shared_quant(builder *b, const gp_model *m, const shape *s,
			double T)
{
	(void)m;
	return quant_passes(b, "shared_quant", "shared_quant_act", s->nmoe,
			    T * s->h, T * s->shared_f);
}

/* MLA's projections in a tensor-parallel prefill (a step of more than one
 * token a sequence), as the serving runtimes run them: the q and kv
 * latents' down-projections are one GEMM whose weights every rank holds
 * and multiplies whole, and only the heads' up-projections split over tp.
 * vLLM's DeepseekV2MLAAttention builds "self.fused_qkv_a_proj =
 * MergedReplicatedLinear(self.hidden_size, [self.q_lora_rank,
 * self.kv_lora_rank + self.qk_rope_head_dim]" (a ReplicatedLinear) beside
 * the ColumnParallelLinear q_b_proj and kv_b_proj
 * (vllm/model_executor/models/deepseek_v2.py), and its prompt path
 * (MLACommonImpl._forward_prefill, vllm/v1/attention/backends/mla/
 * common.py) expands the latent through kv_b_proj before FlashAttention's
 * varlen kernel; SGLang's DeepseekV2AttentionMLA likewise holds
 * "self.fused_qkv_a_proj_with_mqa = ReplicatedLinear(self.hidden_size,
 * self.q_lora_rank + self.kv_lora_rank + self.qk_rope_head_dim" (python/
 * sglang/srt/models/deepseek_v2.py).  model_layer_ops folds all four
 * projections into one "qkv" GEMM split over tp, which at tp 8 prices the
 * down-projection at an eighth of what each rank computes: DeepSeek-V3's
 * 7168 x (1536 + 512 + 64) = 15.1M weights a layer against 1.9M (q_b's
 * 1536 x 16 x 192 and kv_b's 512 x 16 x 256 a rank are 6.8M), 26 MFLOP a
 * prompt token a layer on every GPU not counted.  The decode step already
 * runs them so (mla_decode); here the prefill's three GEMMs: q_kv_a whole,
 * q_b (q_proj without a q latent) and kv_b on the rank's heads. */
static int mla_prefill_proj(builder *b, const gp_model *m, double count,
			    double T, double wb, gp_dtype cp)
{
	const gp_mla *a = &m->mla;
	double h = m->hidden, nh = m->heads / (double)b->c->tp;
	double qr = a->q_lora_rank, r = a->kv_lora_rank;
	double dr = a->qk_rope_head_dim, dn = a->qk_nope_head_dim;
	double dv = a->v_head_dim;

	if (gemm(b, "q_kv_a", count, T, (qr > 0 ? qr : 0.0) + r + dr, h,
	         wb, cp) ||
	    (qr > 0 ? gemm(b, "q_b", count, T, nh * (dn + dr), qr, wb, cp) :
	     gemm(b, "q_proj", count, T, nh * (dn + dr), h, wb, cp)) ||
	    gemm(b, "kv_b", count, T, nh * (dn + dv), r, wb, cp))
		return GP_EINVAL;
	return GP_OK;
}

/* The activation-quantise kernel a linear's fp8 or fp4 GEMM needs before
 * it, where the runtime runs one (infer_cfg.act_quant): TensorRT-LLM's
 * PyTorch flow quantises a linear's bf16 input in a kernel of its own
 * unless the input arrives quantised -- the NVFP4 linear's apply: "if
 * isinstance(input, Fp4QuantizedTensor): act_fp4, act_sf = ... else:
 * act_fp4, act_sf = torch.ops.trtllm.fp4_quantize(input,
 * module.input_scale, module.scaling_vector_size, False)"; the FP8 linear
 * likewise through static_quantize_e4m3_per_tensor
 * (tensorrt_llm/_torch/modules/linear.py) -- and the CUTLASS fused MoE
 * quantises its input the same way ("if not isinstance(x,
 * Fp4QuantizedTensor): x, x_sf = torch.ops.trtllm.fp4_quantize(x,
 * self.fc31_input_scale, ...)", fused_moe_cutlass.py).  Which producers
 * already write the format:
 *  - o_proj's input: no pass.  The TRT-LLM attention backend writes its
 *    output in NVFP4 for an NVFP4 o_proj ("support_nvfp4_output ...
 *    Default enabled", out_dtype torch.uint8) and in FP8 for an FP8 one
 *    with an FP8 cache (out_dtype torch.float8_e4m3fn),
 *    tensorrt_llm/_torch/attention_backend/trtllm.py;
 *  - the routed experts' second GEMM: no pass, the fused MoE kernel's
 *    activation writes the quantised intermediate itself;
 *  - qkv and the dense MLP's up projection take the RMSNorm's output:
 *    with tp > 1 the all-reduce fuses the residual add, the norm and the
 *    quantisation, on one GPU the norm is a plain RMSNorm writing bf16
 *    (modeling_llama.py LlamaDecoderLayer: "self.PRE_MLP_FUSION =
 *    self.mapping.has_tp() and not self.enable_attention_dp and
 *    self.enable_fusion", pre_mlp_fusion_op and post_mlp_fusion_op
 *    RESIDUAL_RMS_NORM_QUANT_NVFP4 / _FP8, "else: hidden_states, residual
 *    = self.post_attention_layernorm(hidden_states, residual)"; the
 *    fusion is off at hidden_size <= 4096, "Disable fusion for small
 *    models due to accuracy issues"): a pass each at tp 1 or a hidden of
 *    at most 4096.  The fused kernel serves an all-reduce only up to its
 *    workspace (infer_cfg.ar_fusion_max): TensorRT-LLM 1.0's AllreduceOp
 *    (cpp/tensorrt_llm/thop/allreduceOp.cpp, selectImplementation under
 *    AUTO) returns NCCL "if (message_size_bytes > max_workspace_size)"
 *    (getMaxRequiredWorkspaceSize: 16 * 1000 * 1000 at a world size of 2,
 *    8 * 1000 * 1000 above) and MIN_LATENCY for the QUANT_NVFP4 / _FP8
 *    fusions below it; after NCCL, fallbackRunSubsequentOps runs
 *    residualRmsNorm and then "torch_ext::fp4_quantize(norm_out, ...)"
 *    (symmetric_static_quantize_per_tensor for FP8) -- a pass as at tp 1.
 *    The message is the step's T x hidden bf16 activations (step_comm);
 *    405B's hidden of 16384 crosses 8 MB at 245 tokens;
 *  - the routed experts' input: a pass at every tp (the router needs the
 *    norm's bf16 output, so the norm is not fused with the quantisation);
 *  - the dense MLP's down projection: in FP8 no pass, the SwiGLU writes
 *    FP8 ("swiglu(x, quant_scale=self.down_proj.input_scale,
 *    quant_type=torch.float8_e4m3fn)" when down_proj.has_fp8_qdq,
 *    gated_mlp.py _apply_activation); in NVFP4 a pass, the SwiGLU's
 *    output is bf16 ("else: return swiglu(x)").
 * A pass reads the T x k bf16 activations and writes them at the
 * format's bytes with their block scales (weight_bits / 8 per element:
 * NVFP4 4 bits + an e4m3 scale per 16, FP8 per-tensor 8 bits), priced as
 * every other kernel of the step. */
#define ACT_QUANT_FUSION_MIN_HIDDEN 4096.0

/* SGLang's block-scaled fp8 dense linears (infer_cfg.block_quant).  A
 * checkpoint of "fine-grained fp8 quantization with block size 128"
 * (Qwen3-*-FP8, DeepSeek-V3/R1: config.json "weight_block_size": [128,
 * 128]) runs every dense linear through Fp8LinearMethod's block path,
 * whose Hopper backend is DeepGEMM (dispatch_w8a8_block_fp8_linear:
 * "elif deep_gemm_wrapper.ENABLE_JIT_DEEPGEMM: return
 * deepgemm_w8a8_block_fp8_linear_with_fallback"), and that wrapper
 * quantises the bf16 input before each GEMM: "q_input, x_scale =
 * sglang_per_token_group_quant_fp8(input_2d, block_size[1],
 * column_major_scales=True, scale_tma_aligned=True, ...)"
 * (python/sglang/srt/layers/quantization/fp8_utils.py; its CUTLASS and
 * Triton fallbacks call per_token_group_quant_fp8 the same way).  No
 * producer writes that format for it: the RMSNorm before qkv and
 * gate_up, the attention before o_proj and the SiluAndMul before down
 * all write bf16, and SGLang runs no torch.compile pass that could fuse
 * them (CUDA graphs only replay the kernels).  A per-tensor fp8
 * checkpoint's apply_fp8_linear quantises its input apart the same way
 * ("qinput, x_scale = static_quant_fp8(input_2d, input_scale, ..." /
 * scaled_fp8_quant, the same file), so the pass holds whatever the
 * scaling; the group scales are 4 / 128 B of its 3.03 B an element.
 * So four passes a layer, each over the T x k input of its linear (k the
 * linear's own input width on this rank), reading bf16 and writing fp8
 * with an fp32 scale a 128-element group, priced as moe_quant's passes
 * (an MLA prompt's folded qkv: q_kv_a's hidden-wide input; q_b's and
 * kv_b's latent inputs, 2048 of DeepSeek's 7168, are not counted).
 * The MoE serving model prices the same casts (serve_row.c sx_quant).
 * The GEMM itself is
 * not slowed: DeepGEMM's block-scaled kernel runs at the per-tensor fp8
 * rate or above at prefill shapes (vLLM PR #13917 on one H100: "1024 |
 * 18432 | 7168 | 279.0 | 969.8" TFLOPS; on the H800 999-1404 TF at M
 * 4096 with K of 1536 and up, deepseek-ai/DeepGEMM PR #73's "Base"
 * 128x128 column), so the catalog's fp8 GEMM rate stands. */
/* The row of the kernel that quantises a linear's input before it
 * (block_quant, act_quant): named after the linear, the experts' one
 * moe_quant; NULL for an op that is no such linear. */
static const char *quant_row(const char *op)
{
	static const char *const rows[][2] = {
		{ "qkv", "qkv_quant" }, { "o_proj", "o_proj_quant" },
		{ "mlp_up", "mlp_up_quant" }, { "mlp_down", "mlp_down_quant" },
		{ "moe_up", "moe_quant" },
	};
	size_t i;

	for (i = 0; i < sizeof rows / sizeof rows[0]; i++)
		if (strcmp(op, rows[i][0]) == 0)
			return rows[i][1];
	return NULL;
}

static int block_quant(builder *b, const gp_op *o, double count, double T)
{
	double per = ACT_BYTES + 1.0 + 4.0 / MOE_QUANT_GROUP;
	const char *name = quant_row(o->name);
	double elems;

	/* the dense linears only: the experts' casts are moe_quant's */
	if (!name || strcmp(o->name, "moe_up") == 0)
		return GP_OK;
	elems = T * o->k;
	return add(b, name, count, 4.0 * elems, elems * per, 0, 0, 0, 0,
		   b->c->compute);
}

/* The split-K reduction of a weight-only GEMM that writes its K slices'
 * partial outputs apart (infer_cfg.wo_split_k): vLLM's awq_gemm before
 * awq_marlin (v0.5.3, vllm PR #6612) allocates "_out_feats =
 * torch::empty({split_k_iters, num_in_feats, _kernel.size(1) * 8}, ...)",
 * launches gemm_forward_4bit_cuda_m16nXk32 on "num_blocks((num_out_feats
 * + 16 - 1) / 16 * j_factors1 * split_k_iters)", each block summing its
 * slice of K, and returns "_out_feats.sum(0)" (csrc/quantization/awq/
 * gemm_kernels.cu; AWQLinearMethod passes pack_factor, 8, as
 * split_k_iters: "ops.awq_gemm(reshaped_x, qweight, scales, qzeros,
 * pack_factor)").  The sum is a kernel of its own after every such
 * linear: it reads the split x T x n partials and writes the T x n
 * output, (split - 1) adds an output element, priced as every other
 * small kernel of the step (its launch, the fill and its bytes).  The
 * GEMM's own writes of the partials are left in its output bytes, as
 * one slice (split - 1 more T x n writes, a few KB at decode). */
static int splitk_sum(builder *b, const gp_op *o, double count, double T,
		      int split, gp_dtype prec)
{
	double elems = T * o->n, dq = b->dequant, st = b->stream;
	int gv = b->gemv, rc;

	b->dequant = 0.0;
	b->gemv = 0;
	b->stream = 0.0;
	rc = add(b, "wo_splitk_sum", count, (split - 1.0) * elems,
		 (split + 1.0) * elems * ACT_BYTES, 0, 0, 0, 0, prec);
	b->dequant = dq;
	b->gemv = gv;
	b->stream = st;
	return rc;
}


static int act_quant(builder *b, const gp_op *o, double count, double T,
		     double hidden)
{
	const infer_cfg *c = b->c;
	const char *name = NULL;
	int norm = c->tp == 1 || hidden <= ACT_QUANT_FUSION_MIN_HIDDEN ||
		   (c->ar_fusion_max > 0.0 &&
		    T * hidden * ACT_BYTES > c->ar_fusion_max);
	double elems;

	if (c->block_quant && c->compute == GP_FP8 &&
	    o->wclass == GP_W_LINEAR && o->weights > 0)
		return block_quant(b, o, count, T);
	if (!c->act_quant || (c->compute != GP_FP8 && c->compute != GP_FP4) ||
	    o->wclass != GP_W_LINEAR || o->weights <= 0)
		return GP_OK;
	/* (the producers above) o_proj never: the attention writes the
	 * format; qkv and gate_up where the norm runs apart from the
	 * all-reduce (norm); down at fp4 only: fp8's SwiGLU writes fp8 */
	name = quant_row(o->name);
	if (!name || strcmp(o->name, "o_proj") == 0 ||
	    ((strcmp(o->name, "qkv") == 0 ||
	      strcmp(o->name, "mlp_up") == 0) && !norm) ||
	    (strcmp(o->name, "mlp_down") == 0 && c->compute != GP_FP4))
		return GP_OK;
	elems = T * o->k;
	return add(b, name, count, 4.0 * elems,
		   elems * (ACT_BYTES + c->weight_bits / 8.0), 0, 0, 0, 0,
		   c->compute);
}

/* An unfused KV dequantisation (kv_unfused): SGLang's FP4 pool off
 * Blackwell.  MHATokenToKVPoolFP4 (python/sglang/srt/mem_cache/
 * memory_pool.py) keeps each layer's K and V as packed E2M1 nibbles,
 * "(m, n, k // 2)" uint8, beside "(m, (n * k) // scale_block_size)"
 * uint8 scales (scale_block_size = 16) for the pool's m = size +
 * page_size token slots; its _get_key_buffer and _get_value_buffer
 * return "KVFP4QuantizeUtil.batched_dequantize(cache_k_nope_fp4,
 * cache_k_nope_fp4_sf)" of the whole layer buffer, a bf16 tensor the
 * attention backend then reads.  The backends that take an FP4 MHA
 * cache are "triton", "torch_native", "flex_attention" and the SM100
 * "trtllm_mha" (server_args.py KV4_ATTENTION_MHA_BACKEND_CHOICES), so
 * off Blackwell the attention is one of the three that call
 * get_key_buffer and get_value_buffer once per layer per forward.
 * batched_dequantize is @torch.compile'd elementwise code: one pass
 * that reads the pool at kv_bytes (0.5 + 1/16 B an element) and writes
 * 2 B, priced at the memory roof as two kernels a layer (K and V) --
 * the least that pass can cost (SGLang's docs: "performance can be
 * extremely slow if dequantization is not fused with the attention
 * kernel").  Its size is the pool's (kv_pool, the KV budget of every
 * one of the pp stages), not the running sequences': the pool is
 * allocated whole at start. */
static int kv_dequant(builder *b, const gp_model *m)
{
	const infer_cfg *c = b->c;
	double L = m->layers, per;

	if (!c->kv_unfused || c->kv_pool <= 0.0)
		return GP_OK;
	per = c->kv_pool * c->pp / (2.0 * L);
	return add(b, "kv_dequant", 2.0 * L, 0.0,
		   per * (1.0 + ACT_BYTES / c->kv_bytes), 0, 0, 0, 0,
		   infer_compute_dtype(b->d, NULL));
}

/* A per-query-head decode attention kernel (kv_per_qhead): one thread
 * block per query head of each sequence, each loading its KV head's whole
 * cache.  Two runtimes' kernels are of this kind.
 *
 * TensorRT-LLM's masked multi-head attention kernel, the generation
 * kernel of every release before XQA (gp.infer's xqa = false).  Its
 * launcher (decoderMaskedMultiheadAttentionLaunch.h, release
 * 0.5.0) sets "dim3 grid{static_cast<unsigned>(params.num_heads),
 * static_cast<unsigned>(params.batch_size), seq_len_tile}": one thread
 * block per query head of each sequence, and the kernel
 * (decoderMaskedMultiheadAttentionTemplate.h) reads the K and V of
 * "hi_kv{hi / qhead_per_kv}" at every step of its loops over the
 * cache ("kvCacheBuffer.getKVLocalIdx(valid_time_now, hi_kv, Dh, jj)"),
 * nothing shared between the blocks of a group.  So each of the
 * heads / kv_heads query heads of a GQA group loads its KV head's whole
 * cache: the cache is read that many times a step, and every element
 * converted and multiplied once per query head on the CUDA cores (its
 * dot products are FMAs, the one mma.sync behind a commented-out
 * MMHA_USE_HMMA_FOR_REDUCTION).  XQA, which replaced it for GQA, is
 * described by what it removes: "Using tensor cores for acceleration,
 * reducing data loading and conversion" (TensorRT-LLM
 * docs/source/blogs/XQA-kernel.md).
 *
 * vLLM's PagedAttention kernel, the decode attention of every vLLM
 * before 0.4.3 (gp.infer's paged_decode): paged_attention_v1/_v2
 * (csrc/attention/attention_kernels.cu) run a grid of one block per query
 * head of each sequence (v2 also splits the context into 512-token
 * partitions), and each block reads "kv_head_idx = head_idx /
 * num_queries_per_kv"'s keys and values for itself, its dot products FMAs
 * on the CUDA cores (qk_dot_), nothing shared between a group's blocks.
 * flash-attn's decode, which replaced it (vllm PR #4907, 2024-05-19),
 * folds a group's query heads into one tile and reads the cache once.
 *
 * Priced: the cache bytes times the
 * group, at the memory rate, and the attention's FLOP (already counted
 * per query head) on the fp32 vector units.  The repeated loads of a
 * group's blocks may be served by L2, whose rate the device table does
 * not hold: at the HBM rate they are the most the loads can cost.
 * MHA (a group of one) reads the cache once either way: its attention
 * keeps the fused kernel's price, so the flag moves GQA/MQA models only. */
static int mmha_decode(builder *b, const gp_op *o, double count,
                       double kvb, double group)
{
	return add(b, o->name, count, o->flop,
		   o->act * ACT_BYTES + o->kv * kvb * group, 0, 0, 0, 0,
		   b->c->compute);
}

/* Query heads a KV head serves on this rank. */
static double kv_group(const gp_model *m, const infer_cfg *c)
{
	return (m->heads / (double)c->tp) / model_kv_heads_rank(m, c->tp);
}

double infer_kv_reads(const gp_model *m, const infer_cfg *c)
{
	double group = kv_group(m, c);

	return c->kv_per_qhead && group > 1.0 ? group : 1.0;
}

double infer_mixed_kv_reads(const gp_model *m, const infer_cfg *c)
{
	double group = kv_group(m, c);

	return c->chunked && (c->kv_per_qhead || c->mixed_kv_per_qhead) &&
		group > 1.0 ? group : 1.0;
}

/* The layers of a hybrid stack an op of scope sc runs in (model.h
 * model_op_in): the attention block in the * layers, the MLP's and MoE's
 * pre-norm in the - and E layers, the MLP in the - layers, the experts in
 * the E layers, the Mamba mixer in the M layers. */
static double hybrid_count(const gp_model *m, gp_op_scope sc)
{
	switch (sc) {
	case GP_SCOPE_ATTN:
		return model_attn_layers(m);
	case GP_SCOPE_MAMBA:
		return model_mamba_layers(m);
	case GP_SCOPE_DENSE:
		return model_pattern_in(m, '-', 0, m->layers);
	case GP_SCOPE_MOE:
		return model_pattern_in(m, 'E', 0, m->layers);
	case GP_SCOPE_FFN:
		return model_pattern_in(m, '-', 0, m->layers) +
			model_pattern_in(m, 'E', 0, m->layers);
	default:
		return 0.0;
	}
}

/* A prompt's attention in MLA's latent form, as SGLang runs an extend
 * batch it does not send to multi-head attention.  deepseek_v2.py's
 * _handle_attention_backend (the fa3, flashinfer, flashmla and
 * cutlass_mla backends) returns MHA_CHUNKED_KV only for an extend batch
 * whose "sum_extend_prefix_lens >= attn.chunked_prefix_cache_threshold"
 * or "sum_extend_prefix_lens == 0", the threshold
 * get_int_env_var("SGL_CHUNKED_PREFIX_CACHE_THRESHOLD", 8192); any other
 * batch goes to _dispatch_mla_subtype, the absorbed form decode runs:
 * each head's q_nope multiplied by W_UK into the latent space, the core
 * over the cached latent and rope key (q.k over kv_lora_rank +
 * qk_rope_head_dim, p.v over kv_lora_rank), then W_UV (DeepSeek-V2
 * appendix C).  FlashAttention-3 runs that core for SGLang's fa3 backend
 * as flash_attn_with_kvcache with the rope part as q / k_cache, the
 * latent as v_cache and q_nope as qv (flashattention_backend.py
 * forward_extend).  Every head reads the one shared latent, so the heads
 * pack onto the M side of the tile.  The FLOP per query-key pair and
 * head go from 2 (192 + 128) to 2 (576 + 512), 3.4x, at DeepSeek-V3's
 * shape.  The cache read and the kv_len are the MHA row's: a prompt's
 * token still sees its own causal prefix (the row's kv, the latent's
 * elements a key).  W_UK and W_UV's two bmm's
 * take the place of kv_b's up-projection of the chunk's keys and
 * values, the same FLOP (2 T nh r (dn + dv)); the qkv row keeps them. */
static void mla_latent_attn(gp_op *o, const gp_op *mha, const gp_model *m,
                            const gp_op_cfg *oc)
{
	double T = oc->seqs * oc->q, nh = m->heads / (double)oc->tp;
	double r = m->mla.kv_lora_rank, dr = m->mla.qk_rope_head_dim;

	*o = *mha;
	o->flop = 2.0 * T * oc->kv_len * nh * (r + dr + r);
	o->act = T * nh * (r + dr + r);
	o->m = oc->q * nh;
	o->n = r;
	o->k = oc->kv_len;
	o->batch = oc->seqs;
}

/* Price the layer's operators (model_layer_ops) for batch sequences of
 * q tokens at a mean KV length kv_mean. */
/* The score traffic of the runtime's own unfused attention
 * (score_bytes a score element in all, where model_ops.c op_attn counts
 * 4 transfers at 16 bits).  llama.cpp without FlashAttention builds
 * "kq = ggml_mul_mat(ctx, k, q)", "kq = ggml_soft_max_ext(ctx, kq,
 * kq_mask, kq_scale, ...)" and "kqv = ggml_mul_mat(ctx, v, kq)"
 * (llama.cpp llm_build_kqv), and its CUDA backend runs both matmuls as
 * ggml_cuda_mul_mat_batched_cublas, which converts an F32 src1 to F16
 * and, at GGML_PREC_DEFAULT (Llama's kq is not set to F32), multiplies
 * into an F16 buffer that "to_fp32_cuda(dst_f16.get(), dst_ddf, ...)"
 * converts to F32 (ggml-cuda.cu).  A score element: KQ written at 2
 * bytes, read at 2 and written at 4 by the conversion (8); the softmax
 * reads and writes F32 (8); KQV converts the F32 probabilities to F16
 * (4 + 2) and the GEMM reads them (2): 24 bytes.  The unfused op's
 * shape is the scores' (op_attn: m = q, n = kv, batch = seqs x heads).
 * Prompt steps only: a decode step's single query column goes to the
 * CUDA backend's vector kernels (ggml_cuda_mul_mat_vec_p021 / _nc for
 * "src1->ne[1] == 1"), not the batched cuBLAS path, and keeps op_attn's
 * count. */
static void unfused_scores(gp_op *ops, int nops, double score_bytes)
{
	int i;

	for (i = 0; i < nops; i++)
		if (ops[i].kind == GP_OP_ATTN)
			ops[i].act += (score_bytes / ACT_BYTES - 4.0) *
				ops[i].m * ops[i].n * ops[i].batch;
}

/* The conversions around a linear that cuBLAS multiplies in FP16
 * (infer_cfg.acc16_gemm): llama.cpp's ggml_cuda_op_mul_mat_cublas
 * "convert src0 and src1 to fp16, multiply as fp16, convert dst to
 * fp32" -- to_fp16_cuda(src1_ddf_i, src1_as_f16.get(), ne, stream) reads
 * the F32 input and writes it at 16 bits, cublasGemmEx writes an F16
 * dst_f16, and to_fp32_cuda(dst_f16.get(), dst_dd_i, row_diff *
 * src1_ncols, stream) writes it back at 32 bits (ggml-cuda.cu at
 * 4426e298): 6 bytes an input element a matmul and 6 an output
 * element, each pass a kernel of its own.  Each ggml_mul_mat converts
 * its own input: llm_build_llama multiplies q, k and v by wq, wk and wv
 * apart and the gate and up by ffn_gate and ffn_up, so the engine's
 * qkv is three matmuls and a gated mlp_up two, each reading the whole
 * input (the outputs split among them).  These passes are what
 * CUBLAS_COMPUTE_32F would spare, writing F32 straight: "we avoid
 * allocating and copying the F16 dst data" (ggerganov, llama.cpp PR
 * 3816). */
static int acc16_convert(builder *b, const gp_model *m, const gp_op *o,
                         double count, double T)
{
	double nmm = strcmp(o->name, "qkv") == 0 ? 3.0 :
		strcmp(o->name, "mlp_up") == 0 && m->ffn_gated ? 2.0 : 1.0;

	if (add(b, "f16_input", count * nmm, 0.0, T * o->k * 6.0,
	        0, 0, 0, 0, b->c->compute))
		return GP_EINVAL;
	return add(b, "f32_output", count * nmm, 0.0,
	           T * o->n / nmm * 6.0, 0, 0, 0, 0, b->c->compute);
}

/* 1 where a step's prompt attention runs FlashAttention-2's varlen
 * kernel with its K loop whole: vLLM V1 on FlashAttention-2 (the
 * mixed_kv_per_qhead path, gp.infer's fa2_mixed: ampere and ada cards,
 * a 16-bit cache, no MLA).  flash_attn_varlen_func computes a split
 * count only for a call whose queries are all single tokens --
 * "if (seqlenq_ngroups_swapped) { // Only apply split-k for decoding
 * std::tie(softmax_lse_accum, out_accum) = set_params_splitkv(...)"
 * (mha_varlen_fwd, csrc/flash_attn/flash_api.cpp of vllm-project/
 * flash-attention at 04325b67, the vllm_flash_attn that V1's
 * FlashAttention backend calls) -- so a call that carries a prompt
 * chunk keeps num_splits at 0 and launches one CTA a query block and
 * head, each looping over all of its keys.  With few query heads a
 * GPU (Qwen3-235B-A22B at TP 8: 8) a 2048-token chunk is 32 64-query
 * blocks x 8 heads = 256 CTAs, two resident a SM, against 216 slots on
 * an A100: a second wave of 40, the SMs 59% busy over the chunk's
 * attention, where the library GEMM's split-K (wave_eff) would cut the
 * keys to fill the waves.  Priced as the op's tiles without a split:
 * 128-row tiles one a SM, the same waves as 64-row blocks two a SM.
 * Hopper's FlashAttention-3 schedules its tiles itself (vllm PR #58013:
 * "FA3/FA4 (tile-scheduled)") and keeps the split-K reading.
 * The same holds for vLLM V0's Triton prefix-prefill kernel
 * (infer_cfg.prefix_prefill), which V0's ROCm backend runs for every
 * prompt chunk once chunked prefill is on (rocm_flash_attn.py, "#
 * prefix-enabled attention": PagedAttention.forward_prefix ->
 * context_attention_fwd of vllm/attention/ops/prefix_prefill.py): its
 * launch is "grid = (batch, head, triton.cdiv(max_input_len, BLOCK))"
 * with "BLOCK = 128 if cap[0] >= 8 else 64" as both BLOCK_M and
 * BLOCK_N, and each program's "for start_n in range(0,
 * cur_batch_ctx_len, BLOCK_N)" walks its sequence's whole cached
 * prefix, then its own chunk (vllm-project/vllm prefix_prefill.py,
 * the V0 releases of 2024).  One program per query head and 128-query
 * block: a 512-token chunk of Llama 3.1 405B at TP 8 (16 query heads a
 * GPU) is 64 programs, one wave on an MI300X's 304 CUs with 240 idle
 * for the chunk's whole attention -- the op's packed GQA tiles (16 x
 * 512 rows / 128 = 64) without a split. */
static int fa2_prompt_nosplit(const infer_cfg *c, const gp_op *o, double q,
                              int flash)
{
	return (c->mixed_kv_per_qhead || c->prefix_prefill) && flash &&
	       q > 1.0 && o->kind == GP_OP_ATTN;
}

static int step_layers(builder *b, const gp_model *m, const shape *s,
                       double batch, double q, double kv_mean)
{
	const infer_cfg *c = b->c;
	gp_op_cfg oc;
	gp_op ops[GP_MAX_LAYER_OPS + 3], whole[GP_MAX_LAYER_OPS + 3];
	double L = m->layers, wb = c->weight_bits / 8.0, T = batch * q;
	gp_dtype cp = c->compute, ap;
	int i, nops, wo, mla, mlap, latent, apart;
	int row = c->row_split && c->tp > 1;
	int hy = m->pattern[0] != 0;
	gp_op lat;
	/* The attention reads the cache as stored, or the 16-bit copy an
	 * unfused dequantisation wrote (kv_dequant). */
	double kvb = c->kv_unfused ? ACT_BYTES : c->kv_bytes;
	/* The cache reads a decode step (mmha_decode). */
	double qgroup = infer_kv_reads(m, c);

	/* The layer's operators (model_layer_ops), priced at this step's
	 * dtypes: linears at the weight format, the router in 16 bits,
	 * activations in bf16, the cache at kv_bytes.  The attention
	 * matmuls multiply Q by the cached K and P by the cached V, so they
	 * run at the cache's precision, not the weights': FP8 only with an
	 * 8-bit cache on a chip with FP8 tensor cores (vLLM "Quantized KV
	 * Cache": with FlashAttention-3 and an FP8 cache the attention is
	 * computed in FP8; TensorRT-LLM's FP8 context FMHA likewise needs
	 * the FP8 cache), else bf16 (fp16 without bf16).  A cache the
	 * kernel converts to 16 bits (kv_half_math: TensorRT-LLM's INT8 KV,
	 * its masked MHA kernels' convert-on-load) or one a pass of its
	 * own dequantised (kv_unfused) multiplies in 16 bits. */
	ap = c->kv_bytes <= 1.0 && has(b->d, GP_FP8) && !c->kv_half_math &&
	     !c->kv_unfused ? GP_FP8 : infer_compute_dtype(b->d, NULL);
	oc.seqs = batch;
	oc.q = q;
	oc.kv_len = kv_mean;
	oc.tp = c->tp;
	oc.sp = 0;
	oc.ep = 1;
	oc.etp = 0;    /* the experts' width splits over tp */
	oc.skew = 1.0; /* every GPU holds a slice of every expert */
	oc.flash = c->flash;
	/* Weight-only formats (stored below 16 bits, multiplied in 16:
	 * int4/GPTQ/AWQ, NF4, int8 weight-only, GGUF bits, fp8 on a chip
	 * without fp8 tensor cores) convert every weight on the vector
	 * units before it multiplies.  FasterTransformer's / TensorRT-LLM's
	 * converters (cutlass_extensions interleaved_numeric_conversion.h,
	 * FastInterleavedAndBiasedNumericArrayConverter) turn 8 int4 into 8
	 * fp16 with 4 lop3 + 2 sub.f16x2 + 2 fma.f16x2 and 4 int8 with 2
	 * prmt + 2 sub.f16x2; lop3/prmt issue at half the FP32 lane rate
	 * on GA100/GH100 (64 INT32 lanes per SM against 128 FP32), and the
	 * group scale is one fma.f16x2 per two weights: 16 FP32-lane slots
	 * per 8 int4 weights, 8 per 4 int8 -- 2 FMA slots per weight in both,
	 * 4 FLOP at the fp32 peak's 2 FLOP per FMA.  Formats the GEMM
	 * multiplies as stored (bf16, fp8 on fp8 tensor cores, w8a8, fp4
	 * on Blackwell) convert nothing.
	 * Small-M kernels: a step of at most gemv_max tokens runs the
	 * weight-only linears as CUDA-core GEMVs when the runtime has them
	 * (roofline.c; gemv_max is the runtime's, lua/gpuplan/infer.lua).
	 * For the natively multiplied formats the tile path is kept: with
	 * the tokens on a 16-wide edge their padded tensor rate still
	 * exceeds what streaming the weights needs on every catalogued
	 * card (16-bit peak / bandwidth >= 16 FLOP/B, fp8 >= 32; the least,
	 * H20, has 37 and 68), so cuBLAS's one-row gemv2T or a 16-wide tile
	 * take the same time. */
	wo = c->weight_bits < 16.0 && (cp == GP_BF16 || cp == GP_FP16);
	mla = m->mla.kv_lora_rank > 0 && q <= 1.0;
	/* A prompt's MLA projections at tp > 1 (mla_prefill_proj): the
	 * latents' down-projections whole on every rank. */
	mlap = m->mla.kv_lora_rank > 0 && q > 1.0 && c->tp > 1 && !row;
	latent = c->mla_latent_prefill && m->mla.kv_lora_rank > 0 &&
		 q > 1.0 && c->flash;
	/* The shared expert apart (shared_apart), unless the step is small
	 * enough for the runtime's second stream (shared_stream_max), where
	 * it runs beside the routed experts: priced as one of them. */
	apart = c->moe_shared_apart && !row && s->nmoe > 0 &&
		s->shared_f > 0.0 &&
		!(c->shared_stream_max > 0.0 && T <= c->shared_stream_max);
	nops = model_layer_ops(m, &oc, ops);
	if (apart)
		nops = shared_apart(m, s, T, ops, nops);
	/* llama.cpp's row split (row_split) divides only the weight
	 * matrices (GGML_BACKEND_GPU_SPLIT, llama.cpp llm_load_tensors at
	 * commit 9476b01); every other op runs whole on the main GPU: the
	 * KV cache is allocated there (llama_kv_cache_init:
	 * ggml_cuda_assign_buffers_no_scratch, GGML_BACKEND_GPU on
	 * g_main_device), Q K^T and P V multiply that unsplit cache
	 * (ggml_cuda_op_mul_mat skips "!split && id != g_main_device"),
	 * and the softmax, norms, rope and activations go through
	 * ggml_cuda_op_flatten on g_main_device.  So those ops are priced
	 * at tp 1 (model_layer_ops' list does not depend on tp, only the
	 * sizes). */
	if (row) {
		gp_op_cfg o1 = oc;

		o1.tp = 1;
		if (model_layer_ops(m, &o1, whole) != nops)
			return gp_fail(b->err, "infer: row split op lists "
			               "differ");
	}
	if (!oc.flash && c->score_bytes > 0.0 && q > 1.0) {
		unfused_scores(ops, nops, c->score_bytes);
		if (row)
			unfused_scores(whole, nops, c->score_bytes);
	}
	for (i = 0; i < nops; i++) {
		const gp_op *o = row && !(ops[i].wclass == GP_W_LINEAR &&
		                          ops[i].weights > 0) ?
			&whole[i] : &ops[i];
		double count = hy ? hybrid_count(m, o->scope) :
			o->scope == GP_SCOPE_ALL ? L :
			o->scope == GP_SCOPE_DENSE ? s->ndense : s->nmoe;
		int lin = o->wclass == GP_W_LINEAR && o->weights > 0;
		/* An unfused dequantisation (wo_unfused) gives the linear
		 * a 16-bit copy of its weights to multiply: the GEMM reads
		 * that copy and converts nothing (a plain 16-bit GEMM). */
		int unf = lin && wo && (c->wo_unfused ||
		                        (c->wo_unfused_above > 0 &&
		                         T > c->wo_unfused_above));
		double bytes = o->act * ACT_BYTES + o->kv * kvb +
			o->weights * (o->wclass == GP_W_LINEAR && !unf ? wb :
				      ACT_BYTES);
		/* cuBLAS with CUBLAS_COMPUTE_16F (infer_cfg.acc16_gemm):
		 * llama.cpp's 16-bit and dequantised linears of a step of
		 * more than one token, and the unfused attention's KQ and
		 * KQV (ggml_cuda_mul_mat_batched_cublas, the same compute
		 * type at GGML_PREC_DEFAULT): the conversions on every card
		 * (the path is Volta's and later), the faster rate where the
		 * card has one (b->d16). */
		int a16 = c->acc16_gemm && T > 1.0 &&
			(lin ? (cp == GP_BF16 || cp == GP_FP16) && (!wo || unf)
			     : o->kind == GP_OP_ATTN && !oc.flash &&
			       (ap == GP_BF16 || ap == GP_FP16));

		if (mla && strcmp(o->name, "qkv") == 0)
			continue;      /* mla_decode's */
		/* A Mamba layer's decode step updates each sequence's state
		 * (model_mamba_decode_ops) where a prompt runs the chunked
		 * scan (mamba_layer_ops: conv1d, ssd_scan, priced at the
		 * chunk min(mamba.chunk, q) as training's forward is). */
		if (hy && q <= 1.0 && (strcmp(o->name, "conv1d") == 0 ||
				       strcmp(o->name, "ssd_scan") == 0))
			continue;
		if (q <= 1.0 && o->kind == GP_OP_ATTN && qgroup > 1.0) {
			if (mmha_decode(b, o, count, kvb, qgroup))
				return GP_EINVAL;
			continue;
		}
		if (latent && o->kind == GP_OP_ATTN) {
			mla_latent_attn(&lat, o, m, &oc);
			o = &lat;
		}
		/* TensorRT-LLM's Qwen3Attention is a QKNormRoPEAttention
		 * built with "fuse_qk_norm_rope: bool = True"
		 * (tensorrt_llm/_torch/models/modeling_qwen3.py, which
		 * modeling_qwen3_moe.py's layers use): the norm is done in
		 * the rope kernel's pass over q and k, priced as rope_kv. */
		if (c->fused_qk_norm_rope && strcmp(o->name, "qk_norm") == 0)
			continue;
		if (!wo && act_quant(b, o, count, T, m->hidden))
			return GP_EINVAL;
		/* DeepSpeed's quantized_initialization (the weights of
		 * ZeRO-Inference's --quant_bits 4): F.linear is wrapped so
		 * that "temp_dequantized_weight = weight.dequantizer.
		 * dequantize(quantized_weight ...); return f(input,
		 * temp_dequantized_weight ...)" (deepspeed/inference/
		 * quantization/utils.py wrap_quantized_functional, v0.10.3),
		 * the dequantisation a kernel of its own that reads the
		 * packed int4 with its scales and writes a new fp16 tensor
		 * ("output = torch::empty({num_group, group_size}, ...kHalf",
		 * csrc/quantization/pt_binding.cpp
		 * dequantize_int4_to_half_experimental): a pass over the
		 * weights every forward step, reading them at weight_bits
		 * and writing 2 bytes each, with the converter's 4 FLOP a
		 * weight, before the GEMM reads the copy. */
		if (unf && add(b, "wo_dequant", count,
		               o->weights * INFER_DEQUANT_FLOP,
		               o->weights * (wb + ACT_BYTES), 0, 0, 0, 0, cp))
			return GP_EINVAL;
		if (a16 && lin && acc16_convert(b, m, o, count, T))
			return GP_EINVAL;
		b->acc16 = a16;
		b->dequant = lin && wo && !unf ? INFER_DEQUANT_FLOP : 0.0;
		b->gemv = lin && wo && !unf && T <= c->gemv_max ?
			1 + c->gemv_packed : 0;
		b->stream = lin && wo && !unf ? c->wo_stream : 0.0;
		/* A decode step's attention on the runtime's own kernel
		 * rate (infer_cfg.attn_stream): it reads the cache, which
		 * is the whole of its bytes at any batch. */
		if (q <= 1.0 && o->kind == GP_OP_ATTN && c->attn_stream > 0.0)
			b->stream = c->attn_stream;
		/* The runtime's fp8 dense linears on its own M tile; the
		 * fused MoE's expert GEMMs (moe_*) keep their kernel's. */
		b->m_tile = lin && !wo && c->weight_bits < 16.0 &&
			strncmp(o->name, "moe_", 4) != 0 ? c->m_tile : 0.0;
		/* Two kernels below the library's rate (roof_op.bf16_x),
		 * which never meet on one op: the runtime's weight-only
		 * kernel, multiplying in 16 bits below the 16-bit library
		 * rate (infer_cfg.wo_bf16_x), on every weight-only linear,
		 * the fused MoE's expert GEMMs included (vLLM's Marlin);
		 * and its fused MoE kernel multiplying fp8 experts below
		 * the fp8 tensor rate (infer_cfg.moe_fp8_bf16_x), on the
		 * two grouped GEMMs it runs -- or, the same field, NVFP4
		 * experts below the fp4 rate (TensorRT-LLM's CUTLASS fused
		 * MoE on Blackwell, lua/gpuplan/infer.lua M.moe_fp4_bf16_x). */
		b->bf16_x = lin && wo && !unf ? c->wo_bf16_x :
			lin && (cp == GP_FP8 || cp == GP_FP4) &&
			(strcmp(o->name, "moe_up") == 0 ||
			 strcmp(o->name, "moe_down") == 0) ?
			c->moe_fp8_bf16_x : 0.0;
		/* A prompt's attention over an FP8 cache on a kernel that
		 * does not reach the FP8 tensor rate there
		 * (infer_cfg.kv_fp8_prompt_x: vLLM's FA3 with two-level
		 * accumulation); a decode's is bound by the cache's bytes
		 * and keeps its rate. */
		if (o->kind == GP_OP_ATTN && q > 1.0 && ap == GP_FP8 &&
		    c->kv_fp8_prompt_x > 0.0)
			b->bf16_x = c->kv_fp8_prompt_x;
		if (mlap && strcmp(o->name, "qkv") == 0) {
			int rc = mla_prefill_proj(b, m, count, T, wb, cp);

			b->m_tile = 0.0;
			b->bf16_x = 0.0;
			if (rc)
				return GP_EINVAL;
			continue;
		}
		if (c->prompt_attn_fused && o->kind == GP_OP_ATTN &&
		    q > 1.0 && oc.flash && !latent && b->d->attn_fwd > 0) {
			b->bf16_x = 0.0;
			if (fused_attn(b, o->name, count, o->flop, bytes, o->m,
			               o->n, o->k, o->batch, q, ap))
				return GP_EINVAL;
			continue;
		}
		b->no_split = fa2_prompt_nosplit(c, o, q, oc.flash);
		if (add(b, o->name, count, o->flop, bytes, o->m, o->n, o->k,
		        o->batch, o->kind == GP_OP_ATTN ? ap : cp)) {
			b->m_tile = 0.0;
			b->bf16_x = 0.0;
			b->acc16 = 0;
			b->no_split = 0;
			return GP_EINVAL;
		}
		b->m_tile = 0.0;
		b->bf16_x = 0.0;
		b->acc16 = 0;
		b->no_split = 0;
		if (lin && wo && !unf && c->wo_split_k > 1 &&
		    strncmp(o->name, "moe_", 4) != 0 &&
		    splitk_sum(b, o, count, T, c->wo_split_k, cp))
			return GP_EINVAL;
	}
	b->dequant = 0.0;
	b->gemv = 0;
	b->stream = 0.0;
	if (hy && q <= 1.0) {
		gp_op st[2];
		int ns = model_mamba_decode_ops(m, &oc,
						GP_MAMBA_CONV_STATE_BYTES,
						c->mamba_ssm_bytes, st);

		for (i = 0; i < ns; i++)
			if (add(b, st[i].name, model_mamba_layers(m),
				st[i].flop, st[i].act * ACT_BYTES, 0, 0, 0, 0,
				cp))
				return GP_EINVAL;
	}
	if (mla && mla_decode(b, m, s, T, wo))
		return GP_EINVAL;
	if (s->nmoe > 0 && moe_route(b, m, s, T))
		return GP_EINVAL;
	if (s->nmoe > 0 && c->moe_expand && moe_expand(b, m, s, T, wo))
		return GP_EINVAL;
	if (s->nmoe > 0 && c->moe_quant && !wo && cp == GP_FP8 &&
	    moe_quant(b, m, s, T))
		return GP_EINVAL;
	if (apart && c->moe_quant && !wo && cp == GP_FP8 &&
	    shared_quant(b, m, s, T))
		return GP_EINVAL;
	return GP_OK;
}

/* The latency of one GPU-to-GPU copy, as cudaMemcpyPeerAsync makes it.
 * Where the cards have no peer-to-peer path (up_crosses_cpu: GeForce
 * cards, whose P2P the driver disables) the driver stages it through
 * host memory: the CUDA sample p2pBandwidthLatencyTest (its
 * outputLatencyMatrix times 10000 back-to-back 1-byte copies on the
 * GPU) prints for 2 x RTX 4090 on a Threadripper PRO 5995WX "P2P=
 * Disabled Latency Matrix (us)" 11.64 (0 -> 1) and 11.66 (1 -> 0), and
 * with peer access 1.14 and 1.13 (dbkinghorn/Notes, 2023/NV-4090-P2P/
 * 2x4090-notes.md, CUDA 11.8): STAGED_COPY_LAT is their mean.  A peer
 * copy takes the link's own latency (the catalog's 1 us for PCIe, as
 * the 1.13 us above); the bytes go at the link's one-way rate
 * (p2p_bw; that run's staged copies reached 22.47 GB/s of pcie4's
 * 25.6).
 * That GPU matrix leaves out the host's part of a copy: the sample
 * queues the copies behind a kernel that holds the stream ("Block the
 * stream until all the work is queued up", cuda-samples
 * p2pBandwidthLatencyTest.cu outputLatencyMatrix) and times them on the
 * GPU from the first to the last.  The same run's "CPU" matrix, the host
 * time of the enqueue loop over its copies (cpuLatencyMatrix =
 * cpu_time_ms x 1e3 / repeat), reads 6.66 (0 -> 1) and 6.71 (1 -> 0) us a
 * staged copy against 1.71 and 1.77 with peer access: STAGED_COPY_HOST
 * is their mean.  Where the copies are issued only after the previous
 * one returned (row_split_mm: a staged device-to-device copy blocks the
 * host thread) the host's issue is not hidden behind earlier work: a
 * copy on the critical path takes both, 6.685 + 11.65 = 18.335 us. */
#define STAGED_COPY_LAT 11.65e-6
#define STAGED_COPY_HOST 6.685e-6

static double copy_lat(const infer_cfg *c)
{
	if (c->topo)
		return c->topo->up_crosses_cpu ?
			STAGED_COPY_HOST + STAGED_COPY_LAT :
			c->topo->up.latency;
	return c->ar_latency;
}

/* The seconds `bytes` take at the link's one-way rate (0 without one). */
static double copy_bytes(const infer_cfg *c, double bytes)
{
	double bw = c->p2p_bw > 0 ? c->p2p_bw : c->ar_bw;

	return bw > 0 ? bytes / bw : 0.0;
}

/* The copies of one row-split matmul of T tokens, K inputs to N outputs
 * over the tp GPUs: the input to each other GPU, their (tp - 1) / tp of
 * the output rows back, in 32-bit floats (ggml-cuda.cu
 * ggml_cuda_op_mul_mat at llama.cpp 9476b01: cudaMemcpyAsync of src1
 * "cudaMemcpyDeviceToDevice" to each device, cudaMemcpy2DAsync of its
 * dst rows to the main device, events between).  A quantised weight's
 * input goes as q8_1, 36 bytes a block of 32 values (block_q8_1: two
 * halves and 32 int8s), which the main GPU quantises once
 * (convert_src1_to_q8_1); a 16-bit one's as floats.  Both copies lie on
 * the critical path: the other GPUs wait for the input before they
 * multiply, the main GPU for their rows before the next op.
 * How many copies: the source loops over the token columns in chunks of
 * MUL_MAT_SRC1_COL_STRIDE = 128 (src1_col_stride when split), and in
 * each over the devices, one input copy and one output copy per other
 * device per chunk, on that device's stream (g_cudaStreams[id][is], is
 * = chunk % MAX_STREAMS = 8).  Peer copies on those streams run side by
 * side: one latency per direction for each 8 chunks (a stream's
 * copies run in turn).  A copy staged through host memory does not:
 * a cudaMemcpyAsync device to device without peer access returns only
 * when done (NVIDIA developer forum, "Queueing device-to-device/peer
 * memcpy stalls concurrent copy operations", 4 x RTX 3090, CUDA 12.2:
 * "From the host trace, it appears that neither of the d2d memcpys
 * execute asynchronously at all", the Nsight profile showing them
 * host-staged), so the host thread's loop issues them one after
 * another: (tp - 1) x chunks latencies per direction.  The bytes add
 * up either way: every copy leaves or enters the main GPU over its one
 * link. */
#define ROW_SPLIT_COLS 128.0  /* MUL_MAT_SRC1_COL_STRIDE */
#define ROW_SPLIT_STREAMS 8.0 /* MAX_STREAMS */

static double row_split_mm(const infer_cfg *c, double T, double k,
                           double n)
{
	double o = c->tp - 1.0, chunks = ceil(T / ROW_SPLIT_COLS);
	double xb = c->weight_bits < 16.0 ? 36.0 / 32.0 : 4.0;
	double copies = c->topo && c->topo->up_crosses_cpu ? o * chunks :
		ceil(chunks / ROW_SPLIT_STREAMS);

	return 2.0 * copies * copy_lat(c) + copy_bytes(c, o * T * k * xb) +
	       copy_bytes(c, T * n * o / c->tp * 4.0);
}

/* llama.cpp's multi-GPU split by rows (--split-mode row; before PR 4766,
 * 2024-01, the CUDA backend's only one: every weight matrix
 * GGML_BACKEND_GPU_SPLIT in llama.cpp's llm_load_tensors): each GPU
 * multiplies its rows of every matrix and nothing is all-reduced; each
 * matmul copies its input out and its output rows back (row_split_mm).
 * The matmuls of a LLaMA layer: q, k, v, o (wq, wk, wv, wo) and the
 * MLP's gate, up and down (w1, w3, w2; up and down ungated); once a step
 * the lm_head (the output matrix, split when every layer is offloaded).
 * An MoE layer (llama.cpp's one MoE graph before PR 4766, Mixtral's,
 * PR 4406, 2023-12; commit 9476b01 had none): its experts' up, gate and
 * down are created backend_split like the dense MLP (llm_load_tensors,
 * ffn_gate_exp / ffn_up_exp / ffn_down_exp), the router (ffn_gate_inp)
 * whole on the main GPU.  The graph multiplies them slot by slot, a
 * ggml_mul_mat_id for each of the top_k picks (llm_build_llama's "for
 * (int i = 0; i < n_expert_used; ++i)"), and ggml_cuda_mul_mat_id runs
 * one ggml_cuda_mul_mat per expert that has tokens in that slot (one
 * token: the picked expert; more: each of n_as experts with
 * num_src1_rows > 0, on its gathered rows): a split matmul each, with
 * row_split_mm's copies.  Its expected count among E experts for T
 * tokens picked uniformly is E (1 - (1 - 1/E)^T), 1 for one token, each
 * with T / that many tokens.  Shared experts (absent from that graph)
 * are 2-D matrices, split as the dense MLP is. */
static double row_split_experts(const gp_model *m, const infer_cfg *c,
                                const shape *s, double T)
{
	double E = m->moe.experts, k = m->moe.top_k;
	double h = s->h, f = m->moe.ffn_hidden, g = m->ffn_gated ? 2.0 : 1.0;
	double busy = E * (1.0 - pow(1.0 - 1.0 / E, T)), Te = T / busy;
	double sf = m->moe.shared_experts * model_shared_ffn(m);
	double routed = k * busy * (g * row_split_mm(c, Te, h, f) +
	                            row_split_mm(c, Te, f, h));

	return routed + (sf > 0 ? g * row_split_mm(c, T, h, sf) +
	                 row_split_mm(c, T, sf, h) : 0.0);
}

static double row_split_time(const gp_model *m, const infer_cfg *c,
                             const shape *s, double T)
{
	double h = s->h, q = (double)m->heads * m->head_dim;
	double kv = (double)m->kv_heads * m->head_dim;
	double f = model_dense_ffn(m), attn, mlp;

	attn = row_split_mm(c, T, h, q) + 2.0 * row_split_mm(c, T, h, kv) +
	       row_split_mm(c, T, q, h);
	mlp = (m->ffn_gated ? 2.0 : 1.0) * row_split_mm(c, T, h, f) +
	      row_split_mm(c, T, f, h);
	return (s->ndense + s->nmoe) * attn + s->ndense * mlp +
	       (s->nmoe > 0 ? s->nmoe * row_split_experts(m, c, s, T) :
	        0.0) + row_split_mm(c, T, h, m->vocab);
}

/* The step's communication: TP all-reduces and PP activation sends. */
static int step_comm(const gp_model *m, const infer_cfg *c, const shape *s,
                     double L, double T, infer_phase *out, gp_error *err)
{
	double ar;

	/* Two all-reduces per layer on the critical path (after o_proj and
	 * the MLP down projection; Shoeybi et al. 2019, Megatron-LM sec. 3,
	 * Fig. 4), each of the T x h bf16 activations; llama.cpp's row
	 * split copies around every matmul instead. */
	if (c->row_split && c->tp > 1) {
		out->comm_time = row_split_time(m, c, s, T);
	} else {
		if (allreduce(c, T * s->h * ACT_BYTES, &ar, err) != GP_OK)
			return GP_EINVAL;
		/* A hybrid stack's layer is one block -- a Mamba mixer
		 * (in_proj column-, out_proj row-parallel), an attention
		 * block or a feed-forward -- with one all-reduce after its
		 * row-parallel output (vLLM's NemotronH layers: each mixer's
		 * out_proj / o_proj / down_proj a RowParallelLinear).  A
		 * parallel-attention layer (Falcon) adds the attention's
		 * and the MLP's partial sums and reduces them once:
		 * TensorRT-LLM's FalconDecoderLayer builds both with
		 * tp_group None ("Not to apply allreduce inside the
		 * Attention/MLP layers.  allreduce applies after those
		 * layer.") and calls allreduce on "hidden_states +
		 * attention_output" (tensorrt_llm/models/falcon/model.py,
		 * the PretrainedConfig revision of the 0.9/0.10 releases);
		 * vLLM's likewise ("reduce_row_parallel_results = not
		 * (config.new_decoder_architecture or
		 * config.parallel_attn)", model_executor/models/falcon.py). */
		out->comm_time = (m->pattern[0] || m->parallel_attn ? 1.0 :
		                  2.0) * L * ar;
	}
	if (c->pp > 1) {
		double bw = c->p2p_bw > 0 ? c->p2p_bw : c->ar_bw;

		/* PP: pp - 1 activation sends per step (Narayanan et al.
		 * 2021, sec. 2.2); latency + bytes / bandwidth each. */
		if (bw > 0)
			out->comm_time += (c->pp - 1) * (c->ar_latency +
			                  T * s->h * ACT_BYTES / bw);
	}
	return GP_OK;
}

int infer_host_node(const infer_cfg *c)
{
	return c->host_node_gpus > 0 ? c->host_node_gpus : c->gpus;
}

double infer_host_bw_each(const infer_cfg *c, double bw)
{
	return mem_host_bw_each(bw, infer_host_node(c), c->host_gpus,
				c->gpus, c->tp, c->pp);
}

/* The time n_off offloaded layers add to a step of T tokens. */
static int step_offload(const roof_device *d, const infer_cfg *c,
                        const shape *s, double T, double n_off,
                        infer_phase *out, gp_error *err)
{
	int cpu = T <= c->offload_cpu_max && c->offload_bw > 0;
	double bw = cpu ? c->offload_bw : c->offload_link_bw, t;

	/* The CPU computing them reads its own host's DRAM: where the node
	 * spans hosts (GB200 NVL72: 18 trays of 2 Grace CPUs and 4 GPUs;
	 * the catalog's host_mem_bw, 18.4 TB/s, is the 36 Graces
	 * together) that is its tray's share, as the layers' bytes are
	 * held against the tray's share of the DRAM (infer_run).  Every
	 * GPU of the run on that host has its replica's layers computed
	 * there each step at once (one llama.cpp process a replica, all
	 * decoding together), so the host's DRAM is divided among them:
	 * infer_host_bw_each, training's rule (train.c offload_step).
	 * The copies over the link (offload_link_bw) are the caller's
	 * rate, already its share (lua/gpuplan/infer.lua). */
	if (cpu)
		bw = infer_host_bw_each(c, bw);

	/* Offloaded layers, by where they run.  llama.cpp computes a
	 * step of fewer than 32 tokens on the CPU, which reads the
	 * layers from host DRAM instead of the GPU reading HBM (ggml
	 * backend scheduler; larger batches are sent to the GPU, PR 6083
	 * "offload large batches to GPU", min batch 32).  Otherwise the
	 * step copies the layers over the host link before the GPU runs
	 * them, serially (vLLM --cpu-offload-gb: "part of the model is
	 * loaded from CPU memory to GPU memory on the fly in each model
	 * forward pass"; HF accelerate's hooks alike); their HBM read
	 * stays in the GPU time. */
	if (!(bw > 0))
		return gp_fail(err, "offloaded layers need a host "
		               "link bandwidth");
	t = n_off * s->layer_w / bw;
	if (cpu)
		t -= n_off * s->layer_w / (d->mem_bw * d->hbm_frac);
	out->offload_time = t > 0 ? t : 0.0;
	return GP_OK;
}

/* 1 when a step of q tokens a sequence is a graph runtime's prompt
 * (extend) pass that runs off its CUDA graphs, op by op from Python:
 * SGLang's CudaGraphRunner.can_run takes decode (and idle / target-
 * verify) batches only, so "forward_extend" calls the model's forward
 * eagerly (infer_cfg.extend_host_ops counts its ops a layer). */
static int extend_eager(const infer_cfg *c, double q)
{
	return c->runtime == INFER_GRAPHS && c->extend_host_ops > 0.0 &&
	       q > 1.0;
}

int infer_step(const gp_model *m, const roof_device *d, const infer_cfg *c,
               double batch, double q, double ctx, double n_off,
               infer_phase *out, gp_error *err)
{
	shape s;
	builder b;
	roof_device d16;
	double T, L = m ? m->layers : 0, eb, hb, kvm;
	gp_dtype cp, lp;

	if (check_cfg(m, d, c, err) != GP_OK)
		return GP_EINVAL;
	if (!out)
		return gp_fail(err, "infer_step: NULL output");
	if (!gp_finite(batch) || batch < 1 || !gp_finite(q) || q < 1 ||
	    !gp_finite(ctx) || ctx < q || bad(n_off) || n_off > L)
		return gp_fail(err, "infer_step: batch >= 1, 1 <= q <= ctx, "
		               "0 <= offloaded layers <= layers");
	if (get_shape(m, c, &s, err) != GP_OK)
		return GP_EINVAL;
	memset(out, 0, sizeof *out);
	b.d = d;
	/* The card at its FP16-accumulate 16-bit rate, for a runtime that
	 * multiplies in FP16 accumulation (infer_cfg.acc16_gemm): only a
	 * card whose catalog gives that rate above the stored one. */
	b.d16 = NULL;
	b.acc16 = 0;
	if (c->acc16_gemm && d->acc16_x > 1.0) {
		d16 = *d;
		d16.peak[GP_BF16] *= d->acc16_x;
		d16.peak[GP_FP16] *= d->acc16_x;
		b.d16 = &d16;
	}
	b.c = c;
	b.ph = out;
	b.err = err;
	/* llama.cpp replays a one-token step on one GPU as a CUDA graph
	 * (c->one_token_graphs; lua/gpuplan/infer.lua M.one_token_graphs):
	 * ggml-cuda at its May 2024 builds keeps a graph only where the
	 * step's ADDs have one column ("disable CUDA graphs for batch size >
	 * 1"), no tensor is split by rows (split buffers) and no op is
	 * MUL_MAT_ID; a layer split rotates its n_copies = 4 input copies each
	 * evaluation, so the graph changes every token and is dropped after
	 * 4 updates (PR 13814, 2025: "Due to changes in the graph in each
	 * evaluation when pipeline parallelism is enabled, CUDA graphs could
	 * not be used"), and offloaded layers split the step between the CPU
	 * and the GPU. */
	b.graphs = (c->runtime == INFER_GRAPHS && !extend_eager(c, q)) ||
	           (c->one_token_graphs && batch * q <= 1.0 && c->tp == 1 &&
	            c->pp == 1 && n_off <= 0.0 && s.nmoe <= 0.0);
	b.gemv = 0;
	b.m_tile = 0.0;
	b.bf16_x = 0.0;
	b.dequant = 0.0;
	b.stream = 0.0;
	cp = c->compute;
	eb = infer_head_bits(c) / 8.0;
	T = batch * q;
	out->batch = batch;
	out->tokens = T;
	out->ctx = ctx;
	/* Scores over the whole context (scores_whole): every key up to
	 * the step's last token, the mask applied after the matmul. */
	kvm = c->scores_whole && !c->flash && q > 1.0 ?
		model_kv_read_mean(m, ctx) : step_kv_mean(m, q, ctx);
	if (step_layers(&b, m, &s, batch, q, kvm) ||
	    kv_dequant(&b, m))
		return GP_EINVAL;
	/* Once per step: embedding gather, final norm, logits of the last
	 * token of each sequence, sampling over the vocabulary slice.  The
	 * lm_head is held at embed_bits; at 16 bits its GEMM multiplies on
	 * the 16-bit tensor cores whatever format the layers compute in:
	 * quantised checkpoints leave it unquantised (ModelOpt's
	 * _default_disabled_quantizer_cfg, merged into its INT8, FP8 and
	 * NVFP4 configs: "*lm_head*": {"enable": False}, TensorRT-Model-
	 * Optimizer modelopt/torch/quantization/config.py), so the runtime
	 * builds it as a plain 16-bit linear. */
	hb = m->vocab / (double)c->tp;
	lp = eb >= ACT_BYTES ? infer_compute_dtype(d, NULL) : cp;
	if (add(&b, "embed", 1.0, 0.0, 2.0 * T * s.h * ACT_BYTES, 0, 0, 0, 0,
	        cp) ||
	    elem(&b, "final_norm", 1.0, batch * s.h, 4.0) ||
	    gemm(&b, "logits", 1.0, batch, hb, s.h, eb, lp) ||
	    add(&b, "sample", 1.0, 5.0 * batch * hb, batch * hb * 4.0, 0, 0,
	        0, 0, cp) ||
	    sample_extra(&b, m, c, batch))
		return GP_EINVAL;
	if (step_comm(m, c, &s, L, T, out, err))
		return GP_EINVAL;
	if (n_off > 0 && step_offload(d, c, &s, T, n_off, out, err))
		return GP_EINVAL;
	/* The engine's host work between two steps (vLLM V1 before async
	 * scheduling: lua/gpuplan/infer.lua M.engine_host), once a step and
	 * per sequence in it; the GPU waits for it. */
	out->engine_time = c->engine_host_step + c->engine_host_seq * batch;
	out->time = out->gpu_time + out->comm_time + out->offload_time;
	if (c->runtime == INFER_EAGER) {
		/* The host dispatches ops asynchronously ahead of the GPU;
		 * the slower of the two sets the pace. */
		out->host_time = infer_eager_host(c, L);
		out->time = fmax(out->time, out->host_time);
	} else if (extend_eager(c, q)) {
		/* A graph runtime's prompt pass, run op by op from Python
		 * (infer_cfg.extend_host_ops): the host's dispatch a floor
		 * under it, as under the eager runtime above. */
		out->host_time = infer_extend_host(c, L);
		out->time = fmax(out->time, out->host_time);
	}
	out->time += out->engine_time;
	return GP_OK;
}

double infer_extend_host(const infer_cfg *c, double layers)
{
	if (c->runtime != INFER_GRAPHS || !(c->extend_host_ops > 0.0))
		return 0.0;
	return (layers * c->extend_host_ops + EAGER_OUTER_OPS) *
	       c->host_op_time;
}

double infer_eager_host(const infer_cfg *c, double layers)
{
	if (c->runtime != INFER_EAGER)
		return 0.0;
	return (layers * c->host_ops_per_layer + EAGER_OUTER_OPS) *
	       c->host_op_time;
}
