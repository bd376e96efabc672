/*
 * train_price.c - an operator and a collective of the training step
 * priced: the roofline time of a GEMM or memory-bound op, the
 * collective memo (per cache, else per step), the attention core.
 * The model is described in train.c.
 */
#include "train_int.h"

#include <math.h>
#include <string.h>

double train_t_op(const tenv *e, double flop, double bytes, double m,
		  double n, double k, double batch, gp_dtype p)
{
	return train_t_gemm(e, flop, bytes, m, n, k, batch, p, 0);
}

double train_t_gemm(const tenv *e, double flop, double bytes, double m,
		    double n, double k, double batch, gp_dtype p, int spread)
{
	/* Training GEMMs run on tensor-core tiles and multiply what they
	 * read (roofline.h: no small-M GEMV, no dequantisation term): the
	 * fields not named are 0 (designated initialiser), gemv, dequant,
	 * dequant_rep, m_tile, stream and bf16_x alike. */
	roof_op op = {
		.name = NULL, .flop = flop, .bytes = bytes,
		.m = m, .n = n, .k = k, .count = batch, .prec = p,
		.spread = spread,
	};

	/* The host launches kernels ahead of the GPU in training; what a
	 * kernel costs beyond its work is the GPU-side gap between
	 * kernels, the graph-launch figure. */
	return roof_time(e->d, &op, 1);
}


/* The price of a collective: comm_group_cost on the key alone (the
 * topology's node count set from it). */
static int coll_price(const tenv *e, const train_ckey *k, double *time)
{
	gp_comm_result r;
	gp_topo t = e->t;

	t.nodes = k->nodes;
	if (comm_group_cost(&t, (gp_coll)k->op, k->bytes, &k->g, &r, e->err)
	    != GP_OK)
		return GP_EINVAL;
	*time = r.time;
	return GP_OK;
}

static void coll_key(const tenv *e, gp_coll op, double bytes,
		     const gp_group *g, train_ckey *k)
{
	memset(k, 0, sizeof *k);
	k->bytes = bytes;
	k->op = (int)op;
	k->nodes = e->t.nodes;
	k->g = *g;
}

/* The memo's collectives: open addressing on a hash of the key.  The
 * key's 32 bytes (its padding zeroed by coll_key) read as four 64-bit
 * words, hashed and compared as memcmp would, inline: the lookup runs a
 * few times per layout of a sweep. */
typedef char ckey_is_four_words[sizeof(train_ckey) == 32 ? 1 : -1];

static unsigned long long ckey_word(const train_ckey *k, int i)
{
	unsigned long long u;

	memcpy(&u, (const char *)k + 8 * i, sizeof u);
	return u;
}

/* The slot: each word times its own odd constant (the small counts of
 * the op and the group reach the high bits), xored, folded, multiplied
 * once more and its high half taken.  Which slot a key lands in moves
 * no price, only how far a probe walks. */
static unsigned coll_slot(const train_ckey *k)
{
	unsigned long long h = ckey_word(k, 0) * 0x9E3779B97F4A7C15ULL ^
		ckey_word(k, 1) * 0xC2B2AE3D27D4EB4FULL ^
		ckey_word(k, 2) * 0x165667B19E3779F9ULL ^
		ckey_word(k, 3) * 0x27D4EB2F165667C5ULL;

	h ^= h >> 29;
	return (unsigned)(((h * 0x9E3779B97F4A7C15ULL) >> 32) % TRAIN_COLL_N);
}

static int coll_memo(const tenv *e, const train_ckey *k, double *time)
{
	unsigned long long w0 = ckey_word(k, 0), w1 = ckey_word(k, 1),
		w2 = ckey_word(k, 2), w3 = ckey_word(k, 3);
	unsigned i, n;

	for (i = coll_slot(k), n = 0; n < TRAIN_COLL_N;
	     i = (i + 1) % TRAIN_COLL_N, n++) {
		const struct train_cache_coll *c = &e->cc->coll[i];

		if (c->time < 0)
			return 0;       /* an empty slot ends the probe */
		if (ckey_word(&c->key, 0) == w0 &&
		    ckey_word(&c->key, 1) == w1 &&
		    ckey_word(&c->key, 2) == w2 &&
		    ckey_word(&c->key, 3) == w3) {
			*time = c->time;
			return 1;
		}
	}
	return 0;
}

static void coll_keep(tenv *e, const train_ckey *k, double time)
{
	unsigned i;

	/* Full at three quarters: start over rather than probe long. */
	if (e->cc->ncoll >= TRAIN_COLL_N / 4 * 3) {
		for (i = 0; i < TRAIN_COLL_N; i++)
			e->cc->coll[i].time = -1;
		e->cc->ncoll = 0;
	}
	for (i = coll_slot(k); e->cc->coll[i].time >= 0;
	     i = (i + 1) % TRAIN_COLL_N)
		;
	e->cc->coll[i].key = *k;
	e->cc->coll[i].time = time;
	e->cc->ncoll++;
}

/* A collective on group g; 0 for a group of one rank. */
double train_t_coll(tenv *e, gp_coll op, double bytes, const gp_group *g)
{
	train_ckey k;
	double time;
	int i;

	if (g->ranks <= 1 || bytes <= 0 || e->bad)
		return 0.0;
	coll_key(e, op, bytes, g, &k);
	if (e->cc) {
		if (coll_memo(e, &k, &time))
			return time;
	} else {
		/* Without a memo, the ones this step priced already. */
		for (i = 0; i < e->ncache; i++)
			if (memcmp(&e->cache[i].k, &k, sizeof k) == 0)
				return e->cache[i].time;
	}
	if (coll_price(e, &k, &time)) {
		e->bad = 1;
		return 0.0;
	}
	if (e->cc) {
		coll_keep(e, &k, time);
	} else if (e->ncache < 16) {
		e->cache[e->ncache].k = k;
		e->cache[e->ncache].time = time;
		e->ncache++;
	}
	return time;
}

/* cuDNN's fused FP8 attention on Hopper (fp8_attention on an sm90 GPU:
 * Transformer Engine's fp8_dpa runs cuDNN's FP8 forward, and with
 * NVTE_FP8_DPA_BWD=1, the MLPerf Llama 2 70B LoRA configs' setting, its
 * FP8 backward too), as its time over the 16-bit kernel's at the same
 * shape.  Measured: cudnn-frontend benchmark/sdpa_benchmark_training
 * results/h200_919_only_cudnn/llama3.1_20260227_034703.csv (cuDNN 9.19 on
 * an H200, 64 query and 8 KV heads of 128, one sequence, causal
 * "top_left", non-deterministic backward), bf16 against fp8, fwd_time_ms
 * and bwd_time_ms:
 *   tokens   bf16 fwd / bwd    fp8 fwd / bwd     fwd    bwd
 *    2048    0.142 /  0.464    0.098 /   0.437   0.690  0.942
 *    4096    0.465 /  1.450    0.322 /   1.459   0.692  1.006
 *    8192    1.708 /  5.083    1.141 /   6.392   0.668  1.258
 *   16384    6.531 / 19.002    4.357 /  29.422   0.667  1.548
 *   32768   25.566 / 75.688   16.884 / 118.729   0.660  1.569
 * The forward runs its two matmuls at the FP8 rate, 1.45-1.52 times the
 * 16-bit kernel's (the FlashAttention-3 paper, arXiv 2407.08608,
 * abstract: BF16 "up to 740 TFLOPs/s (75% utilization)", "FP8 reaching
 * close to 1.2 PFLOPs/s", 1.6 times, FA3's own kernel).  The backward
 * does not gain: without a mask it runs 0.85-0.95 times the 16-bit time
 * (no_mask rows: 0.647 / 0.681, 2.285 / 2.453, 8.637 / 9.262, 33.355 /
 * 35.947, 130.528 / 153.841 ms), and under the causal mask it skips
 * less of the masked triangle than the 16-bit kernel does -- causal
 * over unmasked 0.68 at 2048 tokens, 0.74 at 8192, 0.91 at 32768, where
 * the 16-bit kernel's is 0.68, 0.55, 0.49 -- so past 4096 tokens the
 * FP8 backward is the slower one.  Between the measured lengths the
 * ratio is interpolated in log2 of the tokens; outside them it is the
 * end row's.  L: the queries of the kernel's call (a rank's sequence
 * share under context parallelism, a packed sequence's own length). */
static const double fp8_sm90_len[] = { 2048, 4096, 8192, 16384, 32768 };
static const double fp8_sm90_fwd[] = { 0.690, 0.692, 0.668, 0.667, 0.660 };
static const double fp8_sm90_bwd[] = { 0.942, 1.006, 1.258, 1.548, 1.569 };

double train_attn_fp8_sm90(double L, int bwd)
{
	const double *r = bwd ? fp8_sm90_bwd : fp8_sm90_fwd;
	int n = (int)(sizeof fp8_sm90_len / sizeof fp8_sm90_len[0]), i;
	double f;

	if (!(L > fp8_sm90_len[0]))
		return r[0];
	for (i = 1; i < n; i++)
		if (L <= fp8_sm90_len[i]) {
			f = log2(L / fp8_sm90_len[i - 1]) /
				log2(fp8_sm90_len[i] / fp8_sm90_len[i - 1]);
			return r[i - 1] + f * (r[i] - r[i - 1]);
		}
	return r[n - 1];
}

/* Attention core of one pass: a fused kernel at the device's measured
 * attention fraction of the 16-bit peak when it has one, else priced as
 * the GEMM of its shape; never faster than its memory traffic. */
double train_attn_time(const tenv *e, const train_lkey *k, const gp_op *o,
		       int bwd)
{
	double frac = bwd ? e->d->attn_bwd : e->d->attn_fwd;
	double flop = o->flop * (bwd ? (k->flash ? 2.5 : 2.0) : 1.0);
	double bytes = o->act * k->A, s2 = o->batch * o->m * o->n;

	/* Unfused attention with dropout on the probabilities: dropout
	 * reads them and writes the dropped copy and its 1-byte mask
	 * (Korthikanti et al. 2022 sec. 4.1: the as^2b mask and 2as^2b
	 * output), which the PV matmul then reads instead. */
	if (!k->flash && k->dropout)
		bytes += s2 * (2.0 * k->A + 1.0);
	if (bwd)
		bytes *= 2.0;
	/* Unfused and eager (Hugging Face's eager_attention_forward, the
	 * Llama family; BLOOM's baddbmm path moves as much less its scale):
	 * each step on the s^2 scores is its own kernel where a fused
	 * softmax (Megatron's scale-mask-softmax, the 4 transfers op_attn
	 * counts) is one.  Bytes per score element, A its 16-bit width:
	 *   forward   QK^T writes A; * scaling reads and writes 2A; +
	 *             causal_mask 2A; softmax(dtype=float32) reads A,
	 *             writes 4; .to(A) reads 4, writes A; PV reads A:
	 *             7A + 4 + (A + 4) -- 24 B in 16 bits (bf16: 8 more,
	 *             below), 32 in fp32 (no cast: the softmax output is
	 *             the PV input);
	 *   backward  dP = dO V^T writes A; its cast to fp32 A + 4;
	 *             softmax backward reads P and dP, writes dS (12);
	 *             the cast back 4 + A; the scale 2A; dQ, dK read dS
	 *             and dV reads P (3A): 6A + 12 + 2 (A + 4) -- 36 B.
	 * In place of op_attn's 4 A (forward) and 8 A (backward).  Which
	 * softmax runs depends on the 16-bit type (PyTorch
	 * aten/src/ATen/native/SoftMax.cpp softmax(input, dim, dtype):
	 * "if (input_.is_cuda() && input_.scalar_type() ==
	 * ScalarType::Half && dtype == ScalarType::Float) return
	 * at::_softmax(input_, dim_, true); else { Tensor converted =
	 * dtype.has_value() ? input_.toType(dtype.value()) : input_;"):
	 * fp16 runs the fused half-to-float kernel counted above, whose
	 * backward (_softmax_backward_data with input_dtype Half) writes
	 * dS in fp16 itself -- 8 + A where the above has 12 + (4 + A), 8
	 * B less; bf16 converts first, a kernel that writes the fp32
	 * copy (4) the fp32 softmax then reads (4): 8 B more forward.
	 * attn_clamp (transformers' 2023 eager attention, OPT and Llama:
	 * "attn_weights = torch.max(attn_weights,
	 * torch.tensor(torch.finfo(attn_weights.dtype).min))" after the
	 * mask): forward reads and writes the scores, 2A; backward is
	 * derivatives.yaml's max.other formula "at::where(self == other,
	 * grad / 2, grad).masked_fill_(self < other, 0)", five kernels:
	 * == (A + 1), grad / 2 (2A), where (1 + 3A), < (A + 1),
	 * masked_fill_ (1 + 2A) -- 9A + 4.  attn_scale_q (OPT's
	 * OPTAttention: "query_states = self.q_proj(hidden_states) *
	 * self.scaling"): the scale reads and writes q, not the scores,
	 * both ways.  softmax16 (a module that calls softmax(scores, dim=-1)
	 * on the 16-bit scores, no dtype: Baichuan2's remote
	 * modeling_baichuan.py, "attn_weights =
	 * torch.nn.functional.softmax(attn_weights, dim=-1)"): PyTorch's
	 * softmax accumulates in fp32 inside one kernel that reads and
	 * writes A, and _softmax_backward_data reads P and dP and writes dS
	 * in A -- forward QK^T A, scale 2A, mask 2A, softmax 2A, PV A: 8A;
	 * backward dP A, softmax 3A, scale 2A, dQ dK dV 3A: 9A. */
	if (!k->flash && k->eager && k->softmax16) {
		bytes += s2 * (bwd ? 9.0 * k->A - 8.0 * k->A :
			       8.0 * k->A - 4.0 * k->A);
	} else if (!k->flash && k->eager) {
		double cast = k->A < 4.0 ? k->A + 4.0 : 0.0;
		int fused16 = k->A < 4.0 && k->half == GP_FP16;
		double conv = k->A < 4.0 && !fused16 ? 8.0 : 0.0;

		bytes += s2 * (bwd ? 6.0 * k->A + 12.0 + 2.0 * cast -
			       8.0 * k->A - (fused16 ? 8.0 : 0.0) :
			       7.0 * k->A + 4.0 + cast + conv - 4.0 * k->A);
	}
	/* Fused stacks whose unfused attention upcasts the scores and
	 * keeps the fp32 softmax output for the backward (softmax32:
	 * eager_softmax under kernels fused).  Praxis' DotProductAttention
	 * under XLA, the Paxml GPT 126M rows: "# Attention softmax is
	 * always carried out in fp32.", "logits =
	 * logits.astype(jnp.float32)", "probs =
	 * jax.nn.softmax(padded_logits, axis=-1).astype(key.dtype)"
	 * (google/praxis praxis/layers/attentions.py, 2024), and JAX's
	 * softmax differentiates through its output ("_softmax_jvp":
	 * "return y, y * (x_dot - (y * x_dot).sum(axis, ...))",
	 * google/jax jax/_src/nn/functions.py, 2024; the older
	 * non-custom-jvp path keeps exp's fp32 output instead, the same
	 * bytes), so the fp32 y is a residual XLA must write beside the
	 * 16-bit probabilities the PV einsum reads: 4 B a score more
	 * forward; backward the softmax's gradient reads y (4) where
	 * op_attn counts the 16-bit P (A): 4 - A more.  XLA also reads
	 * the scores once per row reduction: JAX's softmax is "x_max =
	 * jnp.max(x, axis, ...)", "unnormalized = jnp.exp(x_safe -
	 * x_max)", "result = unnormalized / jnp.sum(unnormalized, axis,
	 * ...)" (jax/_src/nn/functions.py _softmax, 2024), two reductions
	 * whose results are broadcast back over the scores they were
	 * taken from, and XLA:GPU fuses a row reduction into a consumer
	 * only as an epilogue of one-operand ops with the reduction its
	 * single user (xla/service/gpu/gpu_fusible.cc, 2024,
	 * IsProducerConsumerFusible: "Reductions from/to continuous dims
	 * epilogue not fusible", "reduction output fusion only works for
	 * single user"); the one kernel that takes the whole diamond, the
	 * Triton softmax fusion (softmax_rewriter_triton.h: "producer |
	 * reduce_{max,sum,...} | broadcast | binop"), is off in Paxml's
	 * GPU scripts (contrib/gpu/scripts_gpu/run_pile_multinode.sh
	 * BASE_XLA_FLAGS "--xla_gpu_enable_triton_softmax_fusion=false").
	 * So the max, the sum of exp (its exp fused in, recomputed) and
	 * the division each read the A-byte scores where one fused
	 * softmax reads them once: 2A more forward.  Backward the
	 * transposed jvp, y * ct - y * sum(y * ct), is the same diamond:
	 * the sum reads y (4) and the incoming 16-bit gradient (A), the
	 * elementwise pass that writes dS reads both again: 4 + A more.
	 * A lower bound: a mask the scores are biased with is not
	 * counted, nor exp(x - max) kept between the passes (XLA may
	 * write it fp32 instead of recomputing it: more bytes, not
	 * fewer).  Transformer Engine's
	 * layers (the TE rows) run TE's fused 16-bit softmax kernel
	 * (transformer_engine/jax/flax/module.py Softmax: "if
	 * is_softmax_kernel_available(...)": "outputs =
	 * softmax(logits, mask_, self.scale_factor, ...)"), op_attn's
	 * count as it stands. */
	if (k->softmax32)
		bytes += s2 * (bwd ? (4.0 - k->A) + (4.0 + k->A) :
			       4.0 + 2.0 * k->A);
	/* Megatron-DeepSpeed's ALiBi on its fused path (BigScience's
	 * megatron/model/transformer.py ParallelAttention, BLOOM's: the
	 * bias tensor is [b * np, 1, sk], "matmul_result = alibi[:
	 * output_size[0]*output_size[1], :, :output_size[3]]", then
	 * "torch.baddbmm(matmul_result, q, k^T, beta=beta, alpha=(1.0 /
	 * self.norm_factor))" with beta 1): PyTorch's baddbmm expands the
	 * bias to the scores' shape (baddbmm_out_cuda: "expand_size(self,
	 * {batch1.size(0), batch1.size(1), batch2.size(2)})") and, beta
	 * not 0, copies it into the result ("result.copy_(self)",
	 * baddbmm_out_cuda_impl) that the batched GEMM then reads back as
	 * C -- a write and a read of A a score beside op_attn's.  Forward
	 * only (the bias takes no gradient); the eager path counts its
	 * baddbmm in place of its scale (above). */
	if (!k->flash && !k->eager && !bwd && e->m->positions == GP_POS_ALIBI)
		bytes += s2 * 2.0 * k->A;
	if (!k->flash && k->eager) {
		if (k->attn_clamp)
			bytes += s2 * (bwd ? 9.0 * k->A + 4.0 : 2.0 * k->A);
		if (k->attn_scale_q)
			bytes += (o->batch * o->m * o->k - s2) * 2.0 * k->A;
		/* attn_where (transformers' GPT-2 before its attention
		 * interface, v4.12 GPT2Attention._attn: "causal_mask =
		 * self.bias[:, :, key_length - query_length : key_length,
		 * :key_length].bool()", "attn_weights = torch.where(
		 * causal_mask, attn_weights, self.masked_bias.to(
		 * attn_weights.dtype))", then "attn_weights = attn_weights
		 * + attention_mask"): the causal mask is a pass of its own
		 * before the additive one the path above counts -- forward
		 * the where reads and writes the scores, 2A (its bool mask,
		 * [1, 1, s, s], is shared by every head and sequence: one
		 * s^2-byte tensor the L2 keeps, not a read a score);
		 * backward derivatives.yaml's "self: where(condition, grad,
		 * 0)" reads the gradient and writes it masked, 2A (PyTorch
		 * releases before the where's scalar overload wrote
		 * zeros_like(grad) for it as well, not counted: a lower
		 * bound).  The mask add's backward passes the gradient
		 * through: no kernel. */
		if (k->attn_where)
			bytes += s2 * 2.0 * k->A;
		/* attn_head_copies: q, k and v reach the score GEMMs as
		 * copies of the projections' output.  "matmul"
		 * (transformers 4.12's GPT-2: "query, key, value =
		 * self.c_attn(hidden_states).split(self.split_size, dim=2)",
		 * each through _split_heads' "tensor.view(*new_shape)" and
		 * "tensor.permute(0, 2, 1, 3)", then _attn's
		 * "torch.matmul(query, key.transpose(-1, -2))" and
		 * "torch.matmul(attn_weights, value)"): q, k and v are
		 * [b, heads, s, d] views whose batch stride is s x 3h, not
		 * heads x d.  PyTorch's matmul of two 4-D tensors (aten/src/
		 * ATen/native/LinearAlgebra.cpp matmul: "tensor1.expand(
		 * tensor1_expand_size).reshape(tensor1_bmm_view)", the same for
		 * tensor2, then bmm; it folds only a right operand of at most
		 * two dimensions) flattens b x heads into the bmm's batch; the
		 * two dimensions merge as a view only when b is 1, so with
		 * more sequences a micro-batch reshape copies each of q, k^T
		 * and v (clone, contiguous): 2A an element of the three,
		 * forward.  "contiguous" (transformers' OPTAttention, BART's
		 * copy: "_shape": "tensor.view(bsz, seq_len, self.num_heads,
		 * self.head_dim).transpose(1, 2).contiguous()" on q, k and v,
		 * then "torch.bmm(query_states, key_states.transpose(1, 2))"):
		 * the same three copies forward at every b.  Backward, either
		 * form, every b: the bmm gradients arrive contiguous [b,
		 * heads, s, d] (a clone passes its gradient through),
		 * transpose's or permute's backward makes them [b, s, heads,
		 * d] views, and the view's backward ("grad.reshape(
		 * self.sizes())", derivatives.yaml) cannot view heads x d as
		 * the hidden width over them: a copy of each of the three
		 * gradients, 2A an element (GPT-2's split then cats them:
		 * counted as the q, k, v gradient sums, train_layer.c
		 * layer_extras).  The copies replace the projections' outputs
		 * as what the bmm keeps (nothing else keeps those): no memory
		 * more. */
		if (k->attn_head_copies && (bwd || k->attn_head_copies == 2 ||
					    k->micro_batch > 1.0))
			bytes += (o->batch * o->m * o->k +
				  2.0 * o->batch * o->n * o->k) * 2.0 * k->A;
	}

	if (k->flash && frac > 0) {
		/* The fraction was measured on a causal 8k-token prompt;
		 * this call's tiles run at the shape factor against it:
		 * each rank's seq / cp queries over o->k keys (train.c
		 * prices causal attention at seq / 2 keys a query); packed
		 * sequences' tiles are their own (attn_seq).  A kernel
		 * that computes the whole square under an explicit mask
		 * (attn_square) was measured without a causal mask: every
		 * query tile is whole, no diagonal share. */
		double cq = e->d->attn_square ? 0.0 :
			(k->attn_seq > 0 ? k->attn_seq : k->seq) / k->cp;
		double tc = flop / (e->d->peak[k->half] * frac *
			roof_attn_eff(e->d, o->m, o->n, o->k, o->batch, cq));
		/* Transformer Engine's context-parallel ring (p2p) runs
		 * one causal kernel and cp - 1 without a mask.  Its
		 * AttnFuncWithCPAndKVP2P (transformer_engine/pytorch/
		 * attention/dot_product_attention/context_parallel.py,
		 * NVIDIA/TransformerEngine d0067d0) splits a rank's
		 * causal work into "the diagonal tiles, the
		 * lower-triangle tiles, and the upper-triangle tiles":
		 * step 0 is the "diagonal" section, the rank's query
		 * chunk against its own K/V under the causal mask; every
		 * later step is "lower-triangle" ("max_seqlen_kv_ =
		 * max_seqlen_kv // 2") or "upper-triangle"
		 * ("max_seqlen_q_ = max_seqlen_q // 2"), each with
		 * 'attn_mask_type_ = "padding" if "padding" in
		 * attn_mask_type else "no_mask"' -- a full rectangle
		 * of cq x cq / 2 scores, the diagonal step's count
		 * (cp_merge, train_layer.c).  So of the causal work
		 * priced above (cq = seq / cp queries over seq / 2 keys,
		 * at the causal kernel's rate for cq) 1 / cp runs causal
		 * and (cp - 1) / cp at the kernel's measured rate without
		 * a mask (achievable.attention.<kernel>.unmasked; 1
		 * where none was measured), read at cq / sqrt(2), the
		 * square of the call's cq^2 / 2 scores: its loop over the
		 * keys is cq / 2 long (lower) or cq (upper). */
		if (k->cp > 1 && k->cp_rotate == GP_CP_P2P && cq > 0.0)
			tc *= (1.0 + (k->cp - 1.0) /
			       roof_attn_unmasked(e->d, cq / sqrt(2.0), cq,
						  bwd)) / k->cp;
		/* cuDNN's FP8 kernel on Hopper: its measured time over
		 * the 16-bit kernel's at the call's queries (above). */
		if (k->fp8_attn_sm90 && !e->d->attn_square)
			tc *= train_attn_fp8_sm90(cq, bwd);
		double tm = t_mem(e, k->half, bytes);
		/* Dropout on the probabilities inside the kernel: the
		 * forward draws a Philox number per score and the backward
		 * regenerates the same mask, integer work beside the MMAs
		 * that the kernel does not fully hide; the catalog gives the
		 * measured slowdown of the kernel's forward + backward
		 * (attn_dropout, 0 where no one measured it). */
		double dr = k->dropout && e->d->attn_dropout > 0 ?
			e->d->attn_dropout : 1.0;

		return dr * (tc > tm ? tc : tm) + e->d->graph_launch;
	}
	return train_t_op(e, flop, bytes, o->m, o->n, o->k, o->batch, k->half);
}
