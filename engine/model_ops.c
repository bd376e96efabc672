/*
 * model_ops.c - the operators of one transformer layer: each GEMM,
 * element-wise pass and attention kernel with its FLOPs, weight and
 * activation bytes on one GPU of a TP group, and the KV heads a rank
 * holds.  The counting rules are model.c's (see its head comment); this
 * file lays them out as the operator list the training step, serving
 * and the roofline price (model.h gp_op).
 */
#include "model.h"

#include <math.h>
#include <string.h>

/* ---- the operators of one layer ------------------------------------ */

double model_kv_heads_rank(const gp_model *m, double tp)
{
	return m->kv_heads >= tp ? m->kv_heads / tp : 1.0;
}

double model_kv_elems_layer(const gp_model *m, int tp)
{
	double per = model_kv_bytes_per_token(m, 1.0) / m->layers;
	double nkv;

	if (m->mla.kv_lora_rank > 0)
		return per;  /* the latent is shared by all heads */
	nkv = model_kv_heads_rank(m, tp);
	return per * nkv / m->kv_heads;
}

static void op_set(gp_op *o, const char *name, gp_op_kind kind,
		   gp_op_scope scope)
{
	o->name = name;
	o->kind = kind;
	o->scope = scope;
	o->wclass = GP_W_LINEAR;
	o->flop = o->m = o->n = o->k = o->batch = 0;
	o->weights = o->act = o->kv = o->elems = 0;
}

/* A GEMM of T tokens through an n x k weight slice: 2 T n k FLOP, the
 * weights once, the input and output activations once. */
static void op_gemm(gp_op *o, const char *name, gp_op_scope scope,
		    double T, double n, double k)
{
	op_set(o, name, GP_OP_GEMM, scope);
	o->flop = 2.0 * T * n * k;
	o->m = T;
	o->n = n;
	o->k = k;
	o->batch = 1;
	o->weights = n * k;
	o->act = T * (k + n);
}

/* An elementwise op over `elems` outputs at `fpe` FLOP each, reading
 * and writing each element once. */
static void op_elem(gp_op *o, const char *name, gp_op_scope scope,
		    double elems, double fpe)
{
	op_set(o, name, GP_OP_ELEM, scope);
	o->flop = fpe * elems;
	o->act = 2.0 * elems;
	o->elems = elems;
}

/* The MLP's activation over `out` ffn outputs (the dense MLP's or the
 * experts'): an elementwise op whose elems are 1.5 per output (a gated
 * MLP reads gate and up and writes one; train_layer.c and the eager
 * kernels divide by 1.5) at 5 FLOP each (SiLU / GeLU).  Squared ReLU
 * (ffn_act "relu2": Megatron-Core megatron/core/activations.py
 * "squared_relu ... return torch.pow(F.relu(x), 2)" under @jit_fuser,
 * torch.compile's one fused kernel; Hugging Face's ReLUSquaredActivation
 * "relu_applied = nn.functional.relu(input); squared =
 * torch.square(relu_applied)") is priced from what it does: a plain
 * MLP's one input read and one output written per ffn element, and
 * max(x, 0) then its square, 2 FLOP. */
static void op_mlp_act(gp_op *o, const char *name, gp_op_scope scope,
		       const gp_model *m, double out)
{
	op_elem(o, name, scope, out * 1.5, 5.0);
	if (m->ffn_relu2) {
		o->flop = 2.0 * out;
		o->act = 2.0 * out;
	}
}

/* The attention core of c->q queries of each of c->seqs sequences over
 * kv keys, on this GPU's nh query heads and nkv KV heads, dqk-wide
 * scores and dv-wide values, kv_tok KV elements per key.  Scores QK^T
 * and values PV: 2 kv (dqk + dv) FLOP per query per head (Kaplan et al.
 * 2020 Table 1).  Moved: the keys' K/V once (FlashAttention streams K/V
 * tiles; re-reads across query tiles hit L2, Dao 2023 sec. 3), Q in,
 * O out. */
/* An MoE layer's up or down projection on one GPU: the routed experts'
 * GEMMs of width w over the dispatched tokens (Tk: T k on this rank,
 * tpe per touched expert, touched experts batched) and the shared
 * experts' of width ws over all T tokens; the routed shape (m = tpe,
 * n x kk) is what the roofline prices.  2 h (Tk w + T ws) FLOP, the
 * touched experts' and the shared weights, the inputs and outputs. */
static void op_moe_gemm(gp_op *o, const char *name, double h, double Tk,
			double T, double w, double ws, double tpe, double n,
			double kk, double touched)
{
	op_set(o, name, GP_OP_GEMM, GP_SCOPE_MOE);
	o->flop = 2.0 * h * (Tk * w + T * ws);
	o->weights = h * (touched * w + ws);
	o->act = Tk * (h + w) + T * (h + ws);
	o->m = tpe;
	o->n = n;
	o->k = kk;
	o->batch = touched;
}

/* The shared expert's sigmoid gate (model.h model_shared_gate_ops).
 * Qwen1.5-MoE and Qwen2-MoE scale their shared expert's output by a
 * per-token sigmoid: transformers' Qwen2MoeSparseMoeBlock builds
 * "self.shared_expert_gate = torch.nn.Linear(config.hidden_size, 1,
 * bias=False)" and runs "shared_expert_output = F.sigmoid(
 * self.shared_expert_gate(hidden_states)) * shared_expert_output"
 * (models/qwen2_moe/modeling_qwen2_moe.py); vLLM the same, "self.
 * shared_expert_gate = torch.nn.Linear(config.hidden_size, 1, bias=
 * False)" and "out = F.sigmoid(self.expert_gate(x)) * out" (vllm-project/
 * vllm@002fb907 vllm/model_executor/models/qwen2_moe.py; its earlier
 * form, as SGLang's copy reads, "if self.shared_expert_gate is not None:
 * shared_output = (F.sigmoid(self.shared_expert_gate(hidden_states)) *
 * shared_output)").  Three kernels in eager PyTorch, each a launch of
 * its own:
 *   shared_gate      the [T x h] x [h x 1] GEMV: 2 T h FLOP, the h
 *                    16-bit weights (a plain torch.nn.Linear: whole on
 *                    every tensor-parallel rank, outside the quantised
 *                    linears), T h read, T written;
 *   shared_gate_sig  the sigmoid of the T logits, 1 / (1 + exp(-x)): 4
 *                    FLOP an element (negate, exp, add, divide), T read
 *                    and written;
 *   shared_gate_mul  the T x h shared output (each rank's partial sum
 *                    before the all-reduce, "reduce_results=False")
 *                    times its token's gate: T h FLOP, T h + T read, T h
 *                    written.
 * Qwen3-MoE has no shared expert (transformers' Qwen3MoeSparseMoeBlock
 * holds gate and experts only), so no gate. */
int model_shared_gate_ops(const gp_model *m, double T,
			  gp_op ops[GP_SHARED_GATE_OPS])
{
	double h = m->hidden;

	if (!m->moe.shared_expert_gate || m->moe.shared_experts <= 0 ||
	    m->moe.experts <= 0)
		return 0;
	op_gemm(&ops[0], "shared_gate", GP_SCOPE_MOE, T, 1.0, h);
	ops[0].wclass = GP_W_16BIT;
	op_elem(&ops[1], "shared_gate_sig", GP_SCOPE_MOE, T, 4.0);
	op_elem(&ops[2], "shared_gate_mul", GP_SCOPE_MOE, T * h, 1.0);
	ops[2].act = 2.0 * T * h + T;
	return GP_SHARED_GATE_OPS;
}

static void op_attn(gp_op *o, const char *name, const gp_op_cfg *c,
		    double kv, double nh, double nkv, double dqk, double dv,
		    double kv_tok)
{
	double T = c->seqs * c->q;

	op_set(o, name, GP_OP_ATTN, GP_SCOPE_ALL);
	o->flop = 2.0 * T * kv * nh * (dqk + dv);
	o->kv = c->seqs * kv * kv_tok;
	o->act = T * nh * (dqk + dv);
	if (c->flash) {
		/* Fused kernel: the q rows of one KV head's group form the
		 * M side (GQA packing, FlashDecoding), the loop runs over
		 * the kv length. */
		o->m = c->q * nh / nkv;
		o->n = dv;
		o->k = kv;
		o->batch = c->seqs * nkv;
	} else {
		/* Unfused: the scores matrix is written, read by softmax,
		 * written as P and read by PV: 4 transfers (Dao et al.
		 * 2022, FlashAttention, sec. 2.2 standard attention). */
		o->act += 4.0 * c->seqs * nh * c->q * kv;
		o->m = c->q;
		o->n = kv;
		o->k = dqk;
		o->batch = c->seqs * nh;
	}
}

/* K and V of T tokens (nkv heads of hd) written to the cache, nothing
 * applied to them on the way (no rope): read K and V, write kv_tok per
 * token.  Training keeps no cache and skips it (train_layer.c). */
static void op_kv_write(gp_op *o, double T, double nkv, double hd,
			double kv_tok)
{
	op_set(o, "kv_write", GP_OP_ELEM, GP_SCOPE_ALL);
	o->elems = T * 2.0 * nkv * hd;
	o->act = o->elems;
	o->kv = T * kv_tok;
}

/* One layer of an encoder-decoder (model_layer_ops; T5 as in Hugging
 * Face modeling_t5.py: RMS norms, no rope, no biases).  Encoder layer:
 * bidirectional self-attention over kv_len keys (the caller passes the
 * input length), nothing cached.  Decoder layer: causal self-attention
 * whose K/V are written to the cache, then the cross-attention block:
 * q from the decoder tokens, K and V projected from the encoder output
 * (seqs * enc_len tokens, once per sequence: every step in training and
 * at prefill, read from the cache when decoding), attention without a
 * mask over the enc_len keys, o. */
static int encdec_layer_ops(const gp_model *m, const gp_op_cfg *c,
			    gp_op ops[GP_MAX_LAYER_OPS])
{
	double tp = c->tp > 0 ? c->tp : 1;
	double h = m->hidden, nh = m->heads / tp, hd = m->head_dim;
	double nkv = model_kv_heads_rank(m, tp);
	double mats = m->ffn_gated ? 3.0 : 2.0, f = model_dense_ffn(m) / tp;
	double T = c->seqs * c->q, Tn = c->sp ? T / tp : T, kv = c->kv_len;
	double kv_tok = model_kv_elems_layer(m, (int)tp);
	int dec = !c->encoder, n = 0;
	gp_op *o;

	if (dec && !(c->enc_len > 0))
		return 0;
	op_elem(&ops[n++], "attn_norm", GP_SCOPE_ALL, Tn * h, 4.0);
	op_gemm(&ops[n++], "qkv", GP_SCOPE_ALL, T, (nh + 2.0 * nkv) * hd, h);
	if (dec)
		op_kv_write(&ops[n++], T, nkv, hd, kv_tok);
	if (m->rel_buckets > 0) {
		/* The relative-position bias added to every score (Raffel
		 * et al. 2020 sec. 2.1: a scalar per bucket per head): read
		 * the scores and the batch-wide bias, write the scores; a
		 * fused kernel reads only the bias. */
		o = &ops[n++];
		op_set(o, "pos_bias", GP_OP_ELEM, GP_SCOPE_ALL);
		o->elems = c->seqs * nh * c->q * kv;
		o->flop = o->elems;
		o->act = (c->flash ? 1.0 : 3.0) * o->elems;
	}
	op_attn(&ops[n++], "attention", c, kv, nh, nkv, hd, hd, kv_tok);
	op_gemm(&ops[n++], "o_proj", GP_SCOPE_ALL, T, h, nh * hd);
	if (dec) {
		op_elem(&ops[n++], "cross_norm", GP_SCOPE_ALL, Tn * h, 4.0);
		op_gemm(&ops[n++], "cross_q", GP_SCOPE_ALL, T, nh * hd, h);
		if (!c->cross_cached) {
			op_gemm(&ops[n], "cross_kv", GP_SCOPE_ALL,
				c->seqs * c->enc_len, 2.0 * nkv * hd, h);
			ops[n++].kv = c->seqs * c->enc_len * kv_tok;
		}
		op_attn(&ops[n++], "cross_attention", c, c->enc_len, nh, nkv,
			hd, hd, kv_tok);
		op_gemm(&ops[n++], "cross_o", GP_SCOPE_ALL, T, h, nh * hd);
	}
	op_elem(&ops[n++], "mlp_norm", GP_SCOPE_ALL, Tn * h, 5.0);
	op_gemm(&ops[n++], "mlp_up", GP_SCOPE_ALL, T, (mats - 1.0) * f, h);
	op_mlp_act(&ops[n++], "mlp_act", GP_SCOPE_ALL, m, T * f);
	op_gemm(&ops[n++], "mlp_down", GP_SCOPE_ALL, T, h, f);
	return n;
}

/* One Mamba-2 layer of a hybrid model (scope MAMBA) on one GPU of a TP
 * group, as Megatron-Core's MambaMixer runs it (megatron/core/ssm/
 * mamba_mixer.py, use_mem_eff_path): TP splits the heads and the groups
 * ("self.nheads_local_tp = self.nheads // self.tp_size", ngroups
 * likewise), in_proj column-parallel and out_proj row-parallel, the
 * attention block's two TP collectives.  Ops:
 *   mamba_norm  the pre-norm over T h (Tn under SP), attn_norm's 4 FLOP;
 *   in_proj     T x in_width / tp over h (z, x, B, C, dt);
 *   conv1d      the depthwise causal conv over T x conv_dim / tp
 *               channels: conv multiply-adds, the bias and the SiLU
 *               (causal_conv1d_fn, activation "silu"): 2 conv + 5 FLOP
 *               an output, the input read and the output written;
 *   ssd_scan    mamba_chunk_scan_combined, memory-bound at training's
 *               widths: model_mamba_scan_flops a token, and the traffic
 *               of its five kernels (mamba_ssm ops/triton/
 *               ssd_combined.py _mamba_chunk_scan_combined_fwd), per
 *               token of this rank's H heads of P, G groups of state N,
 *               chunk Q, an fp32 element counted as two 16-bit ones:
 *               _chunk_cumsum_fwd reads dt, writes dA_cumsum and dt in
 *               fp32 (H + 4H); _chunk_state_fwd reads B, x, dt and
 *               dA_cumsum and writes the chunk states "states_in_fp32=
 *               True" (GN + HP + 4H + 2 HPN/Q); _state_passing_fwd reads
 *               them and writes them at C's dtype (3 HPN/Q);
 *               _bmm_chunk_fwd reads C and B, writes CB in fp32 (2GN +
 *               2GQ); _chunk_scan_fwd reads CB, x, dt, dA_cumsum, C and
 *               the states, writes the output (2GQ + 2HP + 4H + GN +
 *               HPN/Q).  In all 3HP + 4GN + 4GQ + 13H + 6 HPN/Q (its
 *               backward: model_mamba_scan_bwd);
 *   gate_norm   RMSNormGated (y times SiLU(z), then the group RMS norm)
 *               over T x d_inner / tp: reads y and z, writes its output,
 *               attn_norm's 4 FLOP and the gate's 5 (mlp_act's SiLU);
 *   out_proj    T x h over d_inner / tp. */
static int mamba_layer_ops(const gp_model *m, const gp_op_cfg *c,
			   double T, double Tn, gp_op *ops)
{
	double tp = c->tp > 0 ? c->tp : 1, h = m->hidden;
	double H = m->mamba.heads / tp, P = m->mamba.head_dim;
	double G = m->mamba.groups / tp, N = m->mamba.state;
	double Q = fmin((double)m->mamba.chunk, c->q), di = H * P;
	int n = 0;
	gp_op *o;

	op_elem(&ops[n++], "mamba_norm", GP_SCOPE_MAMBA, Tn * h, 4.0);
	op_gemm(&ops[n++], "in_proj", GP_SCOPE_MAMBA, T,
		model_mamba_in_width(m) / tp, h);
	op_elem(&ops[n++], "conv1d", GP_SCOPE_MAMBA,
		T * model_mamba_conv_dim(m) / tp, 2.0 * m->mamba.conv + 5.0);
	o = &ops[n++];
	op_set(o, "ssd_scan", GP_OP_ELEM, GP_SCOPE_MAMBA);
	o->flop = T * model_mamba_scan_flops(m, c->q) / tp;
	o->elems = T * di;
	o->act = T * (3.0 * di + 4.0 * G * N + 4.0 * G * Q + 13.0 * H +
		      6.0 * di * N / Q);
	o = &ops[n++];
	op_elem(o, "gate_norm", GP_SCOPE_MAMBA, T * di, 9.0);
	o->act = 3.0 * T * di;
	op_gemm(&ops[n++], "out_proj", GP_SCOPE_MAMBA, T, h, di);
	return n;
}

/* The backward of the SSD scan, per token of this rank's H heads of P,
 * G groups of state N, chunk Q (mamba_ssm ops/triton/ssd_combined.py
 * _mamba_chunk_scan_combined_bwd, which MambaSplitConv1dScanCombinedFn's
 * backward calls; Megatron-Core's MambaMixer on use_mem_eff_path).  The
 * forward saves no chunk state ("ctx.save_for_backward(zxbcdt,
 * conv1d_weight, conv1d_bias, out_x, ...)"), so the backward first
 * re-runs four of the forward's five kernels -- "dt_in = dt.clone()",
 * _chunk_cumsum_fwd, _bmm_chunk_fwd, _chunk_state_fwd and
 * _state_passing_fwd: the forward's traffic less _chunk_scan_fwd's
 * (mamba_layer_ops), plus the clone's 2H -- then its own kernels, each
 * reading and writing (fp32 dA_cumsum, dt, ddA and CB at two units):
 *   _chunk_scan_bwd_dstates   C, dA_cumsum, dout; dstates in fp32:
 *                             GN + 2H + HP + 2 HPN/Q;
 *   _state_passing_bwd        states, dstates; dstates and states out:
 *                             5 HPN/Q;
 *   _chunk_scan_chunk_state_bwd_dx  x, dt, dA_cumsum, B, CB, dout,
 *                             dstates; dx, ddt: 3HP + 6H + GN + 2GQ +
 *                             HPN/Q;
 *   _chunk_state_bwd_db       x, dt, dA_cumsum, dstates, B; dB, ddA_next:
 *                             HP + 6H + 2GN + HPN/Q;
 *   _chunk_scan_bwd_dC        states, dA_cumsum, dout, C; dC, ddA_prev:
 *                             HP + 4H + 2GN + HPN/Q;
 *   _chunk_scan_bwd_dcb       x, dt, dA_cumsum, dout; dCB in fp32:
 *                             2HP + 4H + 2GQ;
 *   _bmm_chunk_bwd twice      C (then B), dCB, the residual dB (dC); out:
 *                             2 (3GN + 2GQ);
 *   "ddA_cumsum_prev.flip([-1]).cumsum(dim=-1).flip([-1])": three
 *                             torch passes over an fp32 H-wide tensor,
 *                             each reading and writing it: 12H;
 *   _chunk_scan_bwd_ddAcs_stable  x, dt, dA_cumsum, dout, CB; ddA:
 *                             2HP + 6H + 2GQ;
 *   "ddA += ddA_next + ddA_prev": two torch adds, two fp32 reads and
 *                             one write each: 12H;
 *   _chunk_cumsum_bwd         ddA, ddt (fp32), dt; ddt: 6H.
 * In all, with the re-run (HP + 3GN + 2GQ + 11H + 5 HPN/Q):
 *   11HP + 15GN + 12GQ + 69H + 15 HPN/Q.
 * FLOP: the forward's doubled (each product's two operand gradients)
 * and the re-run kernels' products, CB (G 2QN), the chunk states (H 2NP)
 * and their passing (H 2NP/Q). */
void model_mamba_scan_bwd(const gp_model *m, double seq, int tp,
			  double *flop, double *act)
{
	double f = model_mamba_scan_flops(m, seq), t = tp;
	double H, P, G, N, Q, S;

	*flop = *act = -1.0;
	if (f < 0 || tp < 1 || m->mamba.heads % tp || m->mamba.groups % tp)
		return;
	H = m->mamba.heads / t;
	P = m->mamba.head_dim;
	G = m->mamba.groups / t;
	N = m->mamba.state;
	Q = fmin((double)m->mamba.chunk, seq);
	S = H * P * N / Q;
	*flop = 2.0 * f / t + G * 2.0 * Q * N + H * (2.0 * N * P +
						    2.0 * N * P / Q);
	*act = 11.0 * H * P + 15.0 * G * N + 12.0 * G * Q + 69.0 * H +
		15.0 * S;
}

int model_layer_ops(const gp_model *m, const gp_op_cfg *c,
		    gp_op ops[GP_MAX_LAYER_OPS])
{
	double tp = c->tp > 0 ? c->tp : 1, ep = c->ep > 0 ? c->ep : 1;
	double etp = c->etp > 0 ? c->etp : tp;
	double h = m->hidden, nh = m->heads / tp, hd = m->head_dim;
	double nkv = model_kv_heads_rank(m, tp);
	double dqk = hd, dv = hd, qkv_n, o_k, kv_tok, T, Tn, kv;
	double mats = m->ffn_gated ? 3.0 : 2.0;
	double dense_f = model_dense_ffn(m) / tp;
	int n = 0, a0, hy = m->pattern[0] != 0;
	gp_op *o;

	if (m->encoder_layers > 0)
		return encdec_layer_ops(m, c, ops);
	T = c->seqs * c->q;
	/* Norms work on the whole hidden width of every token, or on
	 * T / tp tokens under sequence parallelism (Korthikanti et al.
	 * 2022 sec. 4.2.2). */
	Tn = c->sp ? T / tp : T;
	kv = c->kv_len;
	if (m->mla.kv_lora_rank > 0) {
		/* MLA (DeepSeek-V2 sec. 2.1.2): 192-wide q.k, 128-wide v;
		 * the q/kv down- and up-projections count as one GEMM as
		 * wide as their weights per hidden unit. */
		dqk = (double)m->mla.qk_nope_head_dim + m->mla.qk_rope_head_dim;
		dv = m->mla.v_head_dim;
		o_k = nh * dv;
		qkv_n = (model_attn_weights(m) - m->heads * dv * h) / h / tp;
	} else {
		o_k = nh * hd;
		qkv_n = (nh + 2.0 * nkv) * hd;
	}
	kv_tok = model_kv_elems_layer(m, (int)tp);

	a0 = n;
	op_elem(&ops[n++], "attn_norm", GP_SCOPE_ALL, Tn * h, 4.0);
	op_gemm(&ops[n++], "qkv", GP_SCOPE_ALL, T, qkv_n, h);
	if (m->qk_norm)
		/* QK-norm (Qwen3): an RMSNorm over each of this GPU's
		 * query heads and KV heads, after the projection and
		 * before rope -- Hugging Face modeling_qwen3.py's
		 * Qwen3Attention "self.q_norm = Qwen3RMSNorm(self.head_dim,
		 * ...)  # unlike olmo, only on the head dim!" and k_norm,
		 * vLLM's qwen3.py q_norm and k_norm (RMSNorm(self.head_dim))
		 * on "q_by_head" and "k_by_head", Megatron-Core's
		 * qk_layernorm (q_layernorm, k_layernorm).  Memory-bound:
		 * q and k read and written once, the RMSNorm's 4 FLOP an
		 * element (attn_norm's); one kernel over both in serving
		 * (vLLM PR #26682, Inductor's horizontal fusion: "After
		 * qkv_proj, we reduces from 5 kernels to 2 kernels: 1 for
		 * qk-norm and 1 for qk-rope"), training's stacks as
		 * train_layer.c has them. */
		op_elem(&ops[n++], "qk_norm", GP_SCOPE_ALL,
			T * (nh + nkv) * hd, 4.0);
	if (m->positions == GP_POS_ROPE) {
		/* Rope on q and k, K and V written to the cache
		 * (inference). */
		o = &ops[n++];
		op_set(o, "rope_kv", GP_OP_ELEM, GP_SCOPE_ALL);
		o->flop = 6.0 * T * (nh + nkv) * hd;
		o->act = 2.0 * T * (nh + nkv) * hd;
		o->elems = T * (nh + nkv) * hd;
		o->kv = T * kv_tok;
	} else {
		/* A learned table is added once at the input (training:
		 * train_ends_costs); ALiBi's bias is the attention
		 * kernel's own -- FlashAttention-2 takes the per-head
		 * slopes as an argument ("alibi_slopes: (nheads,) ... A
		 * bias of (-alibi_slope * |i + seqlen_k - seqlen_q - j|)
		 * is added to the attention score of query i and key
		 * j", flash_attn_interface.py), no s^2 tensor; the
		 * eager baddbmm path is train_attn_time's; with no
		 * positions (GP_POS_NONE) there is nothing to apply.  q
		 * and k go to attention as the projection wrote them. */
		op_kv_write(&ops[n++], T, nkv, hd, kv_tok);
	}
	op_attn(&ops[n++], "attention", c, kv, nh, nkv, dqk, dv, kv_tok);
	op_gemm(&ops[n++], "o_proj", GP_SCOPE_ALL, T, h, o_k);
	/* A hybrid's attention block is a layer of its own (*), its
	 * feed-forwards the - and E layers, each with its pre-norm. */
	for (; hy && a0 < n; a0++)
		ops[a0].scope = GP_SCOPE_ATTN;
	/* A parallel layer whose attention and MLP read one pre-norm's
	 * output (shared_norm: GPT-J's GPTJBlock, "hidden_states =
	 * self.ln_1(hidden_states)" then "self.attn(hidden_states, ...)"
	 * and "self.mlp(hidden_states)", transformers modeling_gptj.py;
	 * TensorRT-LLM's GPTJDecoderLayer the same) runs no norm before
	 * its MLP. */
	if (!m->shared_norm)
		op_elem(&ops[n++], "mlp_norm",
			hy ? GP_SCOPE_FFN : GP_SCOPE_ALL, Tn * h, 5.0);
	if (hy ? model_pattern_in(m, '-', 0, m->layers) > 0 :
	    model_moe_layers(m) < m->layers) {
		op_gemm(&ops[n++], "mlp_up", GP_SCOPE_DENSE, T,
			(mats - 1.0) * dense_f, h);
		op_mlp_act(&ops[n++], "mlp_act", GP_SCOPE_DENSE, m,
			   T * dense_f);
		op_gemm(&ops[n++], "mlp_down", GP_SCOPE_DENSE, T, h, dense_f);
	}
	if (model_moe_layers(m) > 0) {
		double E = m->moe.experts, k = m->moe.top_k, El = E / ep;
		double moe_f = m->moe.ffn_hidden / etp;
		/* Tokens whose dispatches this rank's experts take, per
		 * rank of the EP group: T, or with the experts folded over
		 * etp < tp ranks (their tokens split T / tp by SP, gathered
		 * over etp) T etp / tp -- the routed FLOPs per GPU stay
		 * T k f / tp either way. */
		double Te = (etp == tp ? T : T * etp / tp) *
			(c->skew > 0.0 ? c->skew : 1.0);
		double shared_f = m->moe.shared_experts * model_shared_ffn(m) /
			tp;
		double up_n = (mats - 1.0) * moe_f;
		double sh_up = (mats - 1.0) * shared_f;
		double touched, tpe;

		/* Distinct local experts the tokens of the EP group touch:
		 * each of its T ep tokens picks k of E, a local expert is
		 * missed by one with probability 1 - k/E (uniform routing;
		 * real routers are skewed, which touches fewer).  The rank
		 * receives T k dispatches on average (GShard sec. 2.2),
		 * the hottest rank skew times that (c->skew: the layer
		 * waits for it). */
		touched = El * (1.0 - pow(1.0 - k / E, Te * ep));
		if (touched < 1e-300)
			touched = 1e-300;
		tpe = Te * k / touched;
		op_gemm(&ops[n], "moe_router", GP_SCOPE_MOE, T, E, h);
		ops[n++].wclass = GP_W_16BIT;
		op_moe_gemm(&ops[n++], "moe_up", h, Te * k, T, up_n, sh_up,
			    tpe, up_n, h, touched);
		op_mlp_act(&ops[n++], "moe_act", GP_SCOPE_MOE, m,
			   Te * k * moe_f + T * shared_f);
		op_moe_gemm(&ops[n++], "moe_down", h, Te * k, T, moe_f,
			    shared_f, tpe, h, moe_f, touched);
		n += model_shared_gate_ops(m, T, &ops[n]);
	}
	if (hy && model_mamba_layers(m) > 0)
		n += mamba_layer_ops(m, c, T, Tn, &ops[n]);
	return n;
}

/* A Mamba layer's decode step as the serving runtimes run it (vLLM
 * model_executor/layers/mamba/mamba_mixer2.py, the decode branch; SGLang
 * and TensorRT-LLM call the same mamba_ssm kernels): in place of the
 * chunked scan,
 *   conv1d_update  causal_conv1d_update(x, conv_state, ...): each
 *                  sequence's conv_dim / tp channels take the new input
 *                  into its window of conv - 1 kept inputs (the state
 *                  read and written back shifted, at conv_bytes), the
 *                  conv multiply-adds, the bias and the SiLU (conv1d's
 *                  2 conv + 5 FLOP an output), the input read and the
 *                  output written;
 *   ssm_update     selective_state_update(ssm_state, x, dt, A, B, C, D,
 *                  z=None, dt_bias, dt_softplus=True, ...): each
 *                  sequence's (heads / tp) x head_dim x state SSM state
 *                  read and written once at ssm_bytes (the kernel
 *                  updates it in place: state = state exp(dt A) + dt B
 *                  x, a multiply and an FMA, 3 FLOP an element; y = C
 *                  . state, an FMA, 2), plus x, dt, B and C read and y
 *                  written (the gate z is left to the gated norm,
 *                  z=None).
 * Bytes count in 16-bit elements (act), an element of b bytes as b / 2
 * of them, as the op list counts an fp32 element as two. */
int model_mamba_decode_ops(const gp_model *m, const gp_op_cfg *c,
			   double conv_bytes, double ssm_bytes, gp_op ops[2])
{
	double tp = c->tp > 0 ? c->tp : 1, T = c->seqs * c->q;
	double H = m->mamba.heads / tp, P = m->mamba.head_dim;
	double G = m->mamba.groups / tp, N = m->mamba.state;
	double cd = model_mamba_conv_dim(m) / tp, w = m->mamba.conv - 1.0;

	if (!m->pattern[0] || model_mamba_layers(m) == 0)
		return 0;
	op_elem(&ops[0], "conv1d_update", GP_SCOPE_MAMBA, T * cd,
		2.0 * m->mamba.conv + 5.0);
	ops[0].act = T * cd * (2.0 + 2.0 * w * conv_bytes / 2.0);
	op_set(&ops[1], "ssm_update", GP_OP_ELEM, GP_SCOPE_MAMBA);
	ops[1].flop = 5.0 * T * H * P * N;
	ops[1].elems = T * H * P;
	ops[1].act = T * (2.0 * H * P * N * ssm_bytes / 2.0 + 2.0 * H * P +
			  H + 2.0 * G * N);
	return 2;
}
