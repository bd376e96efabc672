/*
 * train_layer.c - one layer's forward, backward and recompute costs per
 * micro-batch (every operator of model_layer_ops on the roofline, the
 * eager elementwise kernels, LoRA adapters) and the model's ends
 * (embedding, head, loss); train_memo.c keeps them per layout.  The
 * model is described in train.c.
 */
#include "train_int.h"

#include <math.h>
#include <string.h>

static void add(train_pass *p, double t, int gemm, int attn)
{
	p->t += t;
	if (gemm)
		p->gemm += t;
	if (attn)
		p->attn += t;
}

/* Add an operator's two passes to the layer and to its op list. */
static void add_op(train_lcost *lc, const char *name, double f, double b,
		   int gemm, int attn)
{
	add(&lc->fwd, f, gemm, attn);
	add(&lc->bwd, b, gemm, attn);
	if (lc->nops < TRAIN_MAX_OPS) {
		lc->ops[lc->nops].name = name;
		lc->ops[lc->nops].fwd = f;
		lc->ops[lc->nops].bwd = b;
		lc->nops++;
	}
}

/* Eager PyTorch modules (cfg eager).  Hugging Face transformers writes
 * the Llama family's layer (models/llama/modeling_llama.py; Mistral,
 * Qwen2 and their kin copy these parts, unchanged from v4.31 to v4.5x)
 * as plain tensor operations, each its own kernel that streams its
 * operands from HBM and pays the memory pipeline's fill (roofline.c),
 * where Megatron / Transformer Engine, Liger or torch.compile run one
 * fused kernel per operator (the op list of model_layer_ops):
 *   LlamaRMSNorm  to(fp32), pow(2), mean(-1), + eps, rsqrt, * rsqrt,
 *                 to(bf16), weight * (8 kernels);
 *   rotary        q * cos, -x2 (half), cat(-x2, x1), * sin, + -- for q
 *                 and for k (rotate_half, apply_rotary_pos_emb);
 *   LlamaMLP      act_fn(gate_proj(x)) * up_proj(x): silu, mul;
 *   attention     q_proj, k_proj, v_proj apart; the SDPA output's
 *                 transpose(1, 2).contiguous() before o_proj.
 * Their backward is autograd's formula for each op (a mul: the two
 * products; a cast: the cast back; a slice: zeros and a copy; a tensor
 * used twice: the sum of its two gradients).  One row per kernel: the
 * transfers per element of the op's input in the activation dtype and
 * in fp32, and whether it is a cast (none when the activations are
 * fp32 already) or runs over one value per token row (the rsqrt of
 * the mean).  Sums for 16-bit activations, per element: RMSNorm
 * forward 36 B (fused 4), backward 84 B (fused 6); rotary 20 and 30 B
 * per q/k element (fused 4 and 6); SwiGLU 10 and 18 B per ffn element
 * (fused 6 and 9). */
typedef struct ekernel {
	double n16, n32;
	int cast, row;
} ekernel;

static const ekernel rms_fwd[] = {
	{ 1, 1, 1, 0 }, { 0, 2, 0, 0 }, { 0, 1, 0, 0 }, { 0, 2, 0, 1 },
	{ 0, 2, 0, 1 }, { 0, 2, 0, 0 }, { 1, 1, 1, 0 }, { 2, 0, 0, 0 }
};
/* grad * weight; grad * h and its sum over tokens (the weight's
 * gradient); the cast back; grad * rsqrt; grad * hidden and its row
 * sum; rsqrt's and mean's backward; pow's 2 x and its product; the two
 * gradients of the fp32 hidden summed; the first cast's backward. */
static const ekernel rms_bwd[] = {
	{ 2, 0, 0, 0 }, { 3, 0, 0, 0 }, { 1, 0, 0, 0 }, { 1, 1, 1, 0 },
	{ 0, 2, 0, 0 }, { 0, 3, 0, 0 }, { 0, 1, 0, 0 }, { 0, 2, 0, 1 },
	{ 0, 1, 0, 0 }, { 0, 2, 0, 0 }, { 0, 3, 0, 0 }, { 0, 3, 0, 0 },
	{ 1, 1, 1, 0 }
};
/* x * cos, -x2 (half the elements), cat, * sin, the sum. */
static const ekernel rope_fwd[] = {
	{ 2, 0, 0, 0 }, { 1, 0, 0, 0 }, { 2, 0, 0, 0 }, { 2, 0, 0, 0 },
	{ 3, 0, 0, 0 }
};
/* grad * cos, grad * sin, neg's backward (half), each slice's zeros
 * and copy, the three gradients of x summed. */
static const ekernel rope_bwd[] = {
	{ 2, 0, 0, 0 }, { 2, 0, 0, 0 }, { 1, 0, 0, 0 }, { 1, 0, 0, 0 },
	{ 1, 0, 0, 0 }, { 1, 0, 0, 0 }, { 1, 0, 0, 0 }, { 3, 0, 0, 0 },
	{ 3, 0, 0, 0 }
};
/* silu(gate), * up; backward grad * up, grad * silu, silu's. */
static const ekernel glu_fwd[] = { { 2, 0, 0, 0 }, { 3, 0, 0, 0 } };
static const ekernel glu_bwd[] = {
	{ 3, 0, 0, 0 }, { 3, 0, 0, 0 }, { 3, 0, 0, 0 }
};

/* Hugging Face's gelu_new (ffn_act "gelu_new", GPT-2's
 * activation_function; transformers activations.py, a function in
 * v4.12 and NewGELUActivation's forward since, the same expression):
 * "0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715
 * * torch.pow(x, 3.0))))" -- eight tensor ops, each its own kernel in
 * the eager modules: pow, * 0.044715, x +, * sqrt(2/pi), tanh, 1.0 +,
 * 0.5 * x, the product (two operands read in the adds and the product).
 * Per ffn element in the activation dtype: 18 transfers where a fused
 * GeLU reads and writes one each. */
static const ekernel gelu_new_fwd[] = {
	{ 2, 0, 0, 0 }, { 2, 0, 0, 0 }, { 3, 0, 0, 0 }, { 2, 0, 0, 0 },
	{ 2, 0, 0, 0 }, { 2, 0, 0, 0 }, { 2, 0, 0, 0 }, { 3, 0, 0, 0 }
};
/* Autograd's formulas (derivatives.yaml): the product's two (grad *
 * tanh term, grad * 0.5 x); 0.5 *; tanh_backward (reads grad and the
 * output); * sqrt(2/pi); * 0.044715; pow's "grad * (exponent *
 * self.pow(exponent - 1))" three (x.pow(2), * 3, grad *); the scalar
 * adds pass the gradient on without a kernel; x feeds three ops, its
 * three gradients summed in two adds.  28 transfers per ffn element
 * where a fused GeLU's backward moves 3. */
static const ekernel gelu_new_bwd[] = {
	{ 3, 0, 0, 0 }, { 3, 0, 0, 0 }, { 2, 0, 0, 0 }, { 3, 0, 0, 0 },
	{ 2, 0, 0, 0 }, { 2, 0, 0, 0 }, { 2, 0, 0, 0 }, { 2, 0, 0, 0 },
	{ 3, 0, 0, 0 }, { 3, 0, 0, 0 }, { 3, 0, 0, 0 }
};

/* Squared ReLU in the eager modules (ffn_act "relu2": transformers
 * activations.py ReLUSquaredActivation "relu_applied =
 * nn.functional.relu(input); squared = torch.square(relu_applied)"):
 * relu, then square, which ATen writes as pow(self, 2) -- two kernels
 * that each read and write one element.  Backward (derivatives.yaml):
 * pow's "grad * (exponent * self.pow(exponent - 1))" three (self.pow(1),
 * * 2, grad *), then relu's threshold_backward (reads grad and relu's
 * output).  4 transfers per ffn element forward, 10 backward, where
 * Megatron-Core's jit-fused squared_relu moves 2 and 3. */
static const ekernel relu2_fwd[] = { { 2, 0, 0, 0 }, { 2, 0, 0, 0 } };
static const ekernel relu2_bwd[] = {
	{ 2, 0, 0, 0 }, { 2, 0, 0, 0 }, { 3, 0, 0, 0 }, { 3, 0, 0, 0 }
};

#define NK(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Seconds of the kernels k[0..n) over `elems` elements in `rows` token
 * rows; *nk counts the kernels launched. */
static double ekernels(const tenv *e, const train_lkey *k, const ekernel *ek,
		       int n, double elems, double rows, double *nk)
{
	double t = 0;
	int i;

	for (i = 0; i < n; i++) {
		if (ek[i].cast && k->A >= 4.0)
			continue;
		t += t_mem(e, k->half, (ek[i].n16 * k->A + ek[i].n32 * 4.0) *
			   (ek[i].row ? rows : elems));
		*nk += 1;
	}
	return t;
}

/* The eager RMSNorm's backward (rms_bwd) over `elems` elements in
 * `rows` token rows.  A frozen norm (k->frozen: LoRA's base, PEFT's
 * "requires_grad = False" on every base parameter, or a frozen LLM)
 * skips rms_bwd's rows 1 and 2, grad * h and its sum over tokens: they
 * are the `weight * hidden` product's gradient for the weight, and
 * autograd forms an input's gradient only where that input requires
 * grad -- the generated MulBackward0 computes each operand's formula
 * under "if (task_should_compute_output({ other_ix }))" (PyTorch
 * tools/autograd/gen_autograd_functions.py, from derivatives.yaml's
 * "mul.Tensor: self: mul_tensor_backward(grad, other, ...) other:
 * mul_tensor_backward(grad, self, ...)"), and the broadcast weight's
 * sum over tokens is taken only for a gradient that was formed (the
 * engine's validate_outputs, "metadata.reduce_grad(grad)").  As the
 * frozen linear's backward is its dgrad alone (lin_wgrad).  84 B an
 * element become 76 B with 16-bit activations. */
#define RMS_WGRAD_ROW0 1
#define RMS_WGRAD_ROWS 2
static double rms_bwd_kernels(const tenv *e, const train_lkey *k,
			      double elems, double rows, double *nk)
{
	if (!k->frozen)
		return ekernels(e, k, rms_bwd, NK(rms_bwd), elems, rows, nk);
	return ekernels(e, k, rms_bwd, RMS_WGRAD_ROW0, elems, rows, nk) +
		ekernels(e, k, rms_bwd + RMS_WGRAD_ROW0 + RMS_WGRAD_ROWS,
			 NK(rms_bwd) - RMS_WGRAD_ROW0 - RMS_WGRAD_ROWS,
			 elems, rows, nk);
}

/* Host-launched kernels of one layer's forward, fused stacks: one per
 * operator of the op list, two residual adds; LoRA's adapter its A and
 * B GEMMs and the add.  Eager (HF, above): an RMSNorm 8, q/k/v 3, the
 * rotary 10, attention and its layout copy 2, gate and up 2, SwiGLU 2,
 * and the rest one each (LlamaDecoderLayer: 39 for Llama); PEFT's LoRA
 * layer 5 (dropout, lora_A, lora_B, * scaling, +=) for each adapted
 * matrix: PEFT wraps every targeted nn.Linear in a LoRA layer of its own
 * (peft/tuners/lora/layer.py update_layer: "self.lora_A[adapter_name] =
 * nn.Linear(self.in_features, r, bias=False)", its own lora_B and
 * lora_dropout), so the eager modules' separate q, k, v and gate, up
 * each run the five; at lora_dropout 0 the dropout is "nn.Identity()"
 * ("if lora_dropout > 0.0: lora_dropout_layer = nn.Dropout(p=
 * lora_dropout) else: ... nn.Identity()"), which launches nothing: 4.
 * The fused stacks' adapter (Megatron's on the fused linear_qkv and
 * linear_fc1) is one per op: A, B, the scaling and the add (NeMo 24.07,
 * lora_costs). */
#define FUSED_LORA_OPS 4.0
#define EAGER_LORA_OPS 5.0
/* transformers' _upad_input and pad_input on a padded micro-batch's
 * forward (layer_extras): _get_unpad_data's sum, nonzero, max, the
 * .item() copy, cumsum and pad; three gathers; zeros and index_put. */
#define PAD_MASK_OPS 11.0

/* LoRA adapter of one targeted matrix (in -> out) at rank r on T
 * tokens: A (in x r) then B (r x out), added to the base output.
 * Forward reads the input, writes and reads the rank-r intermediate,
 * reads and writes the output; backward does both GEMMs' dgrad and
 * wgrad: about twice that traffic.  Memory-bound at any useful rank.
 * nd: the adapted matrices that read this input through their own
 * dropout (PEFT's LoRA Linear, peft/tuners/lora/layer.py: "result =
 * result + lora_B(lora_A(dropout(x))) * scaling", lora_dropout an
 * nn.Dropout, nn.Identity at p = 0): each copies the input with a
 * 1-byte mask (torch's native_dropout: read x, write x' and the bool
 * mask) and passes its gradient back through the mask (read the
 * gradient and the mask, write) -- q, k and v each their own.
 * Kernel by kernel: lora_A reads the (dropped-out) input of each adapted
 * matrix and writes r; lora_B reads r and writes the output; "* scaling"
 * reads and writes it; "result +=" reads both and writes one -- in + 2 r
 * + 6 out.  Backward: the scaling's gradient (read and write out),
 * lora_B's dgrad and wgrad (each reading the output's gradient, out
 * twice), lora_A's dgrad (writes in) and wgrad (reads the input, in), and
 * each adapted matrix's input gradient summed into the input's (read two,
 * write one: 3 in) -- 5 in + 4 out + 3 r.  The fused stacks' adapter runs
 * the same four kernels once over the fused op's whole width (nd 1):
 * NeMo 24.07 (r2.0.0rc1) adapts the fused linear_qkv with one
 * ParallelLinearAdapter whose forward ends "x = x * (self.alpha /
 * self.dim)" (adapters/parallel_adapters.py), added in
 * MCoreSelfAttentionMixin.get_query_key_value_tensors by "mixed_qkv =
 * mixed_qkv + lora_mixed_qkv" (adapters/mcore_mixins.py), and its input,
 * the norm's output the module returns (return_layernorm_output), takes
 * the adapter's gradient in Transformer Engine's backward as "dgrad =
 * dgrad + grad_outputs[1].view_as(dgrad)" (TE 1.8
 * module/layernorm_linear.py) -- the 3 in. */
static void lora_costs(const tenv *e, const train_lkey *k, double in,
		       double out, double nd, train_lcost *lc)
{
	double r = k->lora_rank, T = k->T;
	double f = 2.0 * T * r * (in + out);
	double na = k->eager ? nd : 1.0;
	double fb = T * (na * in + 2.0 * r + 6.0 * out) * k->A;
	double bb = T * (5.0 * na * in + 4.0 * out + 3.0 * r) * k->A;
	double tf = train_t_op(e, f, fb, T, r, in, 1, k->half);
	double tb = train_t_op(e, 2.0 * f, bb, T, r, in, 1, k->half);
	double td = k->lora_dropout ?
		t_mem(e, k->half, nd * T * in * (2.0 * k->A + 1.0)) : 0.0;

	add_op(lc, "lora", tf + td, tb + td, 1, 0);
}

/* LoRA merged into the weight (lora_merged): Praxis' LoRA layers
 * (praxis/contrib/gpu/scripts_gpu/lora_layers.py, which Paxml's
 * LoRAMixin puts on the linears, the combined QKV projection and the
 * attention output) hand the layer the weight itself with the adapters
 * added, LoraTheta._lorafy_var: "new_var = self.module.einsum(
 * "...dr,...nr->...dn", lora_a, lora_b)", reshaped to the weight's
 * shape, "new_var += var".  No input dropout, no side path: the op's
 * own GEMM multiplies the merged weight, and autodiff brings A and B
 * their gradients through that sum, so the backward computes the whole
 * weight gradient dW (the wgrad GEMM, wgrad_gemm) and contracts it with
 * B and A.  Priced per op over the weight the GEMM reads (w elements,
 * in x out): forward the merge, a GEMM of depth r (2 w r FLOPs) that
 * reads W and writes the sum (XLA's GEMM rewriter folds the add of a
 * one-use operand into the cuBLAS call as its C, beta 1): 2 w A bytes;
 * backward dA = dW B and dB = dW^T A, 2 w r FLOPs each, each reading
 * dW: 2 w A bytes.  The base's weight gradient then goes nowhere: no
 * optimizer or reduce-scatter of it (the frozen base's). */
static void lora_merge_costs(const tenv *e, const train_lkey *k,
			     const gp_op *o, train_lcost *lc)
{
	double r = k->lora_rank, w = o->weights, f = 2.0 * w * r;
	double tf = train_t_op(e, f, 2.0 * w * k->A, o->k, o->n, r, 1,
			       k->half);
	double tb = 2.0 * train_t_op(e, f, w * k->A, o->k, r, o->n, 1,
				     k->half);

	add_op(lc, "lora", tf, tb, 1, 0);
}

static unsigned lora_bit(const char *name)
{
	if (strcmp(name, "qkv") == 0)
		return GP_LORA_Q | GP_LORA_K | GP_LORA_V;
	if (strcmp(name, "o_proj") == 0)
		return GP_LORA_O;
	if (strcmp(name, "mlp_up") == 0 || strcmp(name, "moe_up") == 0)
		return GP_LORA_GATE | GP_LORA_UP;
	if (strcmp(name, "mlp_down") == 0 || strcmp(name, "moe_down") == 0)
		return GP_LORA_DOWN;
	return 0;
}

/* Whether a linear weight of this name has a wgrad GEMM: a trained
 * one's, and a frozen LoRA base's only where its adapter is merged into
 * it (lora_merged): the gradient that reaches A and B through W + A B^T
 * is the whole dW = dY^T X, computed as the trained weight's is, then
 * contracted with B and A (lora_merge_costs). */
static int lin_wgrad(const train_lkey *k, const char *name)
{
	return !k->frozen ||
		(k->lora_merged && (k->lora_targets & lora_bit(name)) != 0);
}

static int wgrad_gemm(const train_lkey *k, const gp_op *o)
{
	return o->wclass != GP_W_LINEAR || lin_wgrad(k, o->name);
}

/* RoPE on q's and k's heads of this GPU, rotated apart, by the eager
 * kernels above (rope_fwd, rope_bwd): *t forward, *tb backward, *nk
 * counting the forward's launches. */
static void rope_kernels_el(const tenv *e, const train_lkey *k, double eq,
			    double ek, double rows, double *t, double *tb,
			    double *nk)
{
	double nb = 0;

	*t = ekernels(e, k, rope_fwd, NK(rope_fwd), eq, rows, nk) +
		ekernels(e, k, rope_fwd, NK(rope_fwd), ek, rows, nk);
	*tb = ekernels(e, k, rope_bwd, NK(rope_bwd), eq, rows, &nb) +
		ekernels(e, k, rope_bwd, NK(rope_bwd), ek, rows, &nb);
}

static void rope_kernels(const tenv *e, const train_lkey *k, const gp_op *o,
			 double *t, double *tb, double *nk)
{
	const gp_model *m = e->m;
	double nh = m->heads / (double)k->tp, nkv = model_kv_heads_rank(m, k->tp);
	double eq = o->elems * nh / (nh + nkv), ek = o->elems - eq;

	rope_kernels_el(e, k, eq, ek, eq / (nh * m->head_dim), t, tb, nk);
}

/* QK-norm (model qk_norm) by the eager modules: Hugging Face's
 * Qwen3Attention runs its Qwen3RMSNorm -- LlamaRMSNorm's eight kernels
 * each way (rms_fwd, rms_bwd) -- once on q's heads ("self.q_norm(
 * self.q_proj(hidden_states).view(hidden_shape))") and once on k's, a
 * row per head: *t forward, *tb backward, *nk counting the forward's
 * launches. */
static void qk_norm_kernels(const tenv *e, const train_lkey *k,
			    const gp_op *o, double *t, double *tb, double *nk)
{
	const gp_model *m = e->m;
	double nh = m->heads / (double)k->tp, nkv = model_kv_heads_rank(m, k->tp);
	double eq = o->elems * nh / (nh + nkv), ek = o->elems - eq;
	double hd = m->head_dim, nb = 0;

	*t = ekernels(e, k, rms_fwd, NK(rms_fwd), eq, eq / hd, nk) +
		ekernels(e, k, rms_fwd, NK(rms_fwd), ek, ek / hd, nk);
	*tb = rms_bwd_kernels(e, k, eq, eq / hd, &nb) +
		rms_bwd_kernels(e, k, ek, ek / hd, &nb);
}

/* Megatron-Core's RoPE when YaRN scales its cos and sin (model
 * rope_attn_factor != 1: GPT-OSS's rope_scaling factor 32 gives 0.1 ln 32
 * + 1 = 1.3466).  Its fused path does not take the factor:
 * apply_rotary_pos_emb (core_v0.17.0 models/common/embeddings/
 * rope_utils.py) "if mscale != 1.0: warnings.warn(f'mscale={mscale} is not
 * supported by TE's fused RoPE. Using unfused implementation.')", and
 * SelfAttention passes "mscale=_yarn_get_concentration_factor_from_config(
 * self.config)" for q and for k (transformer/attention.py) -- 0.1 ln(s) +
 * 1 when the config gives no yarn_mscale (Megatron-Bridge's GPT-OSS
 * bridge: "provider.yarn_mscale = None").  The unfused
 * _apply_rotary_pos_emb_bshd runs the eager kernels above on q and on k
 * ("t = (t * cos_) + (_rotate_half(t, rotary_interleaved) * sin_)"), then
 * "torch.cat((t, t_pass), dim=-1)" copies the result (2 elements moved a
 * q/k element; t_pass is empty at a full rotary dim, and the full-range
 * slice before is the tensor itself: no gradient copy), and builds its
 * cos_ and sin_ ("(torch.cos(freqs) * mscale).to(t.dtype)", the same for
 * sin: six small kernels a call, sequence x head dim, launches only).
 * In place of the fused op's 2 elements forward and 3 backward. */
#define ROPE_MSCALE_OPS 6.0
static const ekernel rope_cat[] = { { 2, 0, 0, 0 } };

/* Megatron-Core's RoPE with apply_rope_fusion off (unfused_rope) on
 * packed sequences (the THD layout: cu_seqlens, here attn_seq > 0), at
 * the Megatron-LM NeMo RL v0.6.0 pins (3rdparty Megatron-LM d30c3ae5,
 * megatron/core/models/common/embeddings/rope_utils.py).  Every
 * DeepSeek-V3 performance recipe of NeMo RL v0.4.0 to v0.6.0 sets it:
 * grpo-deepseek-v3-32n8g.yaml "apply_rope_fusion: false", which the
 * 32n4g, 64n8g and async-1off recipes take as their defaults, while
 * grpo_math_1B.yaml keeps it on with "#gives ~20% training perf speedup
 * with sequence packing".  Each call of apply_rotary_pos_emb with
 * cu_seqlens runs _apply_rotary_pos_emb_thd, and the host waits for
 * the GPU twice in it: "seqlens = ((cu_seqlens[1:] - cu_seqlens[:-1])
 * // cp_size).tolist()" and the truth value of "freqs.size(0) ==
 * cu_seqlens[-1]" (a 0-d CUDA tensor) -- ROPE_THD_WAIT_OPS host ops
 * with the subtraction, the division and the comparison.  Then per
 * sequence a view of freqs, "torch.cat(...)" of them, and
 * _apply_rotary_pos_emb_bshd on the packed tensor: cos and sin of freqs
 * each "* mscale" and ".to(t.dtype)" (ROPE_MSCALE_OPS, six), the rope's
 * own kernels (rope_fwd: x * cos, -x2, cat, * sin, the sum) and the
 * final "torch.cat((t, t_pass), dim=-1)"; MLA first de-interleaves t
 * ("t = torch.cat((x1, x2), dim=-1)").  Two calls a layer: q and k
 * (attention.py's apply_rotary_pos_emb on query and key;
 * multi_latent_attention.py's on q_pos_emb and k_pos_emb, whose query
 * and key it then builds by two more torch.cat).  Each wait leaves the
 * GPU's queue empty, and the kernels after it are small: the GPU idles
 * while the host launches them, the calls' host time less the
 * kernels' own (layer_extras).  MLA rotates only the rope slices:
 * qk_rope_head_dim of each query head and one shared key head.  The
 * per-sequence views and the backward's kernels for the slices are
 * left out: a lower bound.  v0.4.0's pin (Megatron-LM af73aa2c) waited
 * once and then ran _apply_rotary_pos_emb_bshd on each sequence in turn
 * ("for x in torch.split(t, seqlens)"): rope_seq_loop, below. */
#define ROPE_THD_WAIT_OPS 5.0

/* The older pins' loop (rope_seq_loop): Megatron-LM af73aa2c, NeMo RL
 * v0.4.0's, and 2ff0f099, v0.3.0's and the pin of NeMo RL PR #608 ("enable
 * mcore rope fusion", 2025-07-05), which wrote grpo_math_1B's "#gives ~20%
 * training perf speedup with sequence packing".  Their
 * _apply_rotary_pos_emb_thd runs "cu_seqlens = cu_seqlens // cp_size",
 * "seqlens = (cu_seqlens[1:] - cu_seqlens[:-1]).tolist()" -- one wait,
 * ROPE_LOOP_WAIT_OPS with the division and the subtraction, no
 * comparison -- and then "torch.cat([_apply_rotary_pos_emb_bshd(
 * x.unsqueeze(1), _get_thd_freqs_on_this_cp_rank(...), ...) for x in
 * torch.split(t, seqlens)])": the whole bshd pass (cos and sin, the
 * rope's kernels, the cat; MLA's de-interleave) once per sequence of the
 * micro-batch, each sequence's freqs a slice ("freqs[: x.size(0)]", a
 * view), and one more cat of the sequences' outputs.  Megatron-LM
 * 6fe43ce281 (2025-10-06, "Add Non-1D RoPE Frequency Indexing") replaced
 * the loop by the one pass above. */
#define ROPE_LOOP_WAIT_OPS 3.0

/* The sequences a packed micro-batch holds: its tokens over the keys a
 * token's own sequence holds (attn_seq, E[L^2] / E[L] for unequal
 * lengths, so at most the true count: a lower bound); one without the
 * loop, which runs a single pass whatever the count. */
static double rope_thd_seqs(const train_lkey *k)
{
	double n;

	if (!k->rope_seq_loop || k->attn_seq <= 0)
		return 1.0;
	n = k->seq * k->micro_batch / k->attn_seq;
	return n > 1.0 ? n : 1.0;
}

/* Of a call's host ops, those from its first wait on.  One pass: the
 * .tolist() copy, the comparison and its truth value (3 of
 * ROPE_THD_WAIT_OPS), freqs' cat 1, cos and sin ROPE_MSCALE_OPS, the
 * rope's kernels (rope_fwd) and the final cat 1, MLA's de-interleave 1
 * more.  The loop (rope_seq_loop, n sequences): the .tolist() copy 1,
 * then per sequence cos and sin, the rope's kernels, the cat and MLA's
 * de-interleave, then the sequences' cat 1. */
static double rope_thd_post_ops(const gp_model *m, const train_lkey *k)
{
	double seq_ops = ROPE_MSCALE_OPS + NK(rope_fwd) + 1.0 +
		(m->mla.kv_lora_rank > 0 ? 1.0 : 0.0);

	if (k->rope_seq_loop)
		return 1.0 + rope_thd_seqs(k) * seq_ops + 1.0;
	return 3.0 + 1.0 + seq_ops;
}

/* The host's seconds for a call's ops from its first wait on
 * (rope_thd_post_ops).  _apply_rotary_pos_emb_thd and
 * _apply_rotary_pos_emb_bshd are plain functions of bare tensor ops
 * (torch.cos, "* mscale", ".to", the rope's products, torch.cat): each
 * launch at GP_EAGER_BARE_OP_TIME, not gpt-fast's module-level
 * GP_EAGER_OP_TIME, scaled with the job's host as host_op_time is.  The
 * reads back to the host -- the .tolist() copy, and in the one pass the
 * truth value of the comparison -- copy and synchronize rather than
 * launch: no bare figure covers them, and they keep host_op_time. */
#define ROPE_BARE_OP (GP_EAGER_BARE_OP_TIME / GP_EAGER_OP_TIME)

static double rope_thd_post_host(const gp_model *m, const train_lkey *k)
{
	double reads = k->rope_seq_loop ? 1.0 : 2.0;

	return (reads + (rope_thd_post_ops(m, k) - reads) * ROPE_BARE_OP) *
		k->host_op_time;
}

static void rope_thd_costs(const tenv *e, const train_lkey *k,
			   const gp_op *o, double *t, double *tb, double *nk,
			   double *gpu)
{
	const gp_model *m = e->m;
	double nh = m->heads / (double)k->tp, nkv = model_kv_heads_rank(m, k->tp);
	double T = o->elems / ((nh + nkv) * m->head_dim);
	double eq = o->elems * nh / (nh + nkv), ek = o->elems - eq;
	int mla = m->mla.kv_lora_rank > 0;
	double calls = 2.0, n = rope_thd_seqs(k), ts = 0, tbs = 0, nks = 0;

	if (mla) {
		eq = T * nh * m->mla.qk_rope_head_dim;
		ek = T * m->mla.qk_rope_head_dim;
	}
	/* one sequence's kernels (the whole micro-batch's without the
	 * loop, n = 1), n times */
	rope_kernels_el(e, k, eq / n, ek / n, T / n, &ts, &tbs, &nks);
	ts += ekernels(e, k, rope_cat, NK(rope_cat), (eq + ek) / n, 0, &nks);
	if (mla)   /* the de-interleave's cat */
		ts += ekernels(e, k, rope_cat, NK(rope_cat), (eq + ek) / n, 0,
			       &nks);
	*t = n * ts;
	*tb = n * tbs;
	nks *= n;
	if (k->rope_seq_loop) {
		/* the sequences' cat (its backward: views of the gradient);
		 * cos and sin per sequence, the waits' ops: the division,
		 * the subtraction and the .tolist() read */
		*t += ekernels(e, k, rope_cat, NK(rope_cat), eq + ek, 0, &nks);
		nks += calls * (n * ROPE_MSCALE_OPS + ROPE_LOOP_WAIT_OPS -
				1.0) + (mla ? 2.0 : 0.0);
		*nk += calls * 1.0;
	} else {
		/* freqs' cat (its rows, a few KB: launches only), cos and
		 * sin, the waits (the subtraction, the division, the
		 * comparison; the .tolist() read and the truth value's);
		 * MLA's query and key cats (the fused kernels write query,
		 * key and value too: launches only) */
		nks += calls * (1.0 + ROPE_MSCALE_OPS + ROPE_THD_WAIT_OPS -
				2.0) + (mla ? 2.0 : 0.0);
		*nk += calls * 2.0;
	}
	/* the launches are bare tensor ops (rope_thd_post_host), in units
	 * of host_op_time; the reads keep a whole one each */
	*nk += nks * ROPE_BARE_OP;
	*gpu = *t;
}

static int rope_unfused(const gp_model *m, const train_lkey *k)
{
	/* or apply_rope_fusion off (unfused_rope) on unpacked sequences:
	 * the same _apply_rotary_pos_emb_bshd */
	return k->te_modules && !k->eager && ((m->rope_attn_factor > 0 &&
		m->rope_attn_factor != 1.0) || k->unfused_rope);
}

static void rope_unfused_costs(const tenv *e, const train_lkey *k,
			       const gp_op *o, double *t, double *tb,
			       double *nk)
{
	double nks = 2.0 * ROPE_MSCALE_OPS;

	rope_kernels(e, k, o, t, tb, &nks);
	*t += ekernels(e, k, rope_cat, NK(rope_cat), o->elems, 0, &nks);
	/* _apply_rotary_pos_emb_bshd's bare tensor ops (ROPE_BARE_OP) */
	*nk += nks * ROPE_BARE_OP;
}

/* Megatron-DeepSpeed's rotary embedding (unfused_rope without
 * te_modules: stack deepspeed with kernels fused), which has no fused
 * path: megatron/model/rotary_pos_embedding.py at 11f2d934 (the commit
 * FlagPerf's llama2_7b-megatron-deepspeed pins), taken from NeMo's,
 * "t = (t * freqs.cos().to(t.dtype)) + (_rotate_half(t) *
 * freqs.sin().to(t.dtype))" with _rotate_half's "x1, x2 =
 * x.unbind(dim=-2)" and "return torch.cat((-x2, x1), dim=-1)" (an
 * einops rearrange, a view, before), called by ParallelAttention on the
 * query and on the key: the eager modules' five kernels on each
 * (rope_fwd: x * cos, -x2, cat, * sin, the sum; back mds_rope_bwd) --
 * and "return t if t_pass.shape[-1] == 0 else torch.cat((t, t_pass),
 * dim=-1)", so at a full rotary dim no final cat.  cos and sin of freqs and their casts
 * (MDS_ROPE_TRIG_OPS a call, sequence x head dim, launches only); all
 * bare tensor ops of a plain function (ROPE_BARE_OP).  In place of the
 * fused op's 2 elements forward and 3 backward. */
#define MDS_ROPE_TRIG_OPS 4.0
/* Its backward by autograd's formulas: grad * cos and grad * sin (2
 * each); the cat's gradient is two views of it; neg's, -grad on the
 * half (1); unbind's, torch.stack of the two halves' gradients into one
 * tensor (2, where the Hugging Face slices' zeros and copies take 4);
 * the two gradients of t summed (3). */
static const ekernel mds_rope_bwd[] = {
	{ 2, 0, 0, 0 }, { 2, 0, 0, 0 }, { 1, 0, 0, 0 }, { 2, 0, 0, 0 },
	{ 3, 0, 0, 0 }
};

static void mds_rope_costs(const tenv *e, const train_lkey *k,
			   const gp_op *o, double *t, double *tb, double *nk)
{
	const gp_model *m = e->m;
	double nh = m->heads / (double)k->tp;
	double nkv = model_kv_heads_rank(m, k->tp);
	double eq = o->elems * nh / (nh + nkv), ek = o->elems - eq;
	double rows = eq / (nh * m->head_dim);
	double nks = 2.0 * MDS_ROPE_TRIG_OPS, nb = 0;

	/* the forward is the eager modules' five kernels, on q and on k */
	*t = ekernels(e, k, rope_fwd, NK(rope_fwd), eq, rows, &nks) +
		ekernels(e, k, rope_fwd, NK(rope_fwd), ek, rows, &nks);
	*tb = ekernels(e, k, mds_rope_bwd, NK(mds_rope_bwd), eq, rows, &nb) +
		ekernels(e, k, mds_rope_bwd, NK(mds_rope_bwd), ek, rows, &nb);
	*nk += nks * ROPE_BARE_OP;
}

/* The gated activation with Megatron-Core's bias_activation_fusion off
 * (unfused_act; the TransformerConfig default, False, which Megatron-
 * Bridge's GPTModelProvider keeps -- "bias_activation_fusion: bool =
 * False  # Disabled by default" -- and its Qwen3 providers inherit,
 * where its Llama and DeepSeek providers set True).  The MLP's
 * forward (megatron/core/transformer/mlp.py, and TEGroupedMLP's
 * bias_act_func in moe/experts.py) then runs glu(x) =
 * activation_func(chunk[0]) * chunk[1] as two PyTorch kernels, and
 * autograd's three back (the eager modules' SwiGLU: glu_fwd, glu_bwd,
 * 10 and 18 B a 16-bit ffn element where the fused kernel moves 6 and
 * 9).  In the experts, with the router's probabilities multiplied in
 * the activation (probs_act), the unfused path then runs
 * "intermediate_parallel = intermediate_parallel * permuted_probs;
 * intermediate_parallel = intermediate_parallel.to(original_dtype)"
 * (experts.py at Megatron-LM core_r0.13-era pins, 2ff0f09 and af73aa2):
 * the probabilities are in the router's dtype (moe_router_dtype: the
 * logits come from router_gating_linear in it, and the unfused permute
 * keeps it), so PyTorch's type promotion writes the product in that
 * dtype, q bytes an element (router_bytes), and the cast reads it back
 * to the activations' a: forward a + q and, q > a, q + a more.  Back
 * (autograd, q > a): the cast's gradient a + q; MulBackward's gradient
 * to the activation, grad * probs (2 q) cast to a (q + a); its gradient
 * to the probabilities, grad * the activation (q + a in, q out) summed
 * over the ffn (q): 3 a + 7 q in five kernels, 6 a in three when q = a
 * (no casts).  Per ffn element of the op (elems / 1.5), the shared
 * experts' too (an upper bound where a model has any).  The fused
 * kernel's own cast happens in registers (weighted_bias_swiglu_impl:
 * "dtype is handled inside the fused kernel"). */
static void act_unfused_costs(const tenv *e, const train_lkey *k,
			      const gp_op *o, int probs, double *t,
			      double *tb, double *nk)
{
	double el = o->elems / 1.5, nb = 0;
	double a = k->A;
	double q = k->router_bytes > a ? k->router_bytes : a;

	*t = ekernels(e, k, glu_fwd, NK(glu_fwd), el, 0, nk);
	*tb = ekernels(e, k, glu_bwd, NK(glu_bwd), el, 0, &nb);
	/* A dense MLP whose fc1 has a bias (model linear_bias): fc1 skips
	 * its bias add ("skip_bias_add=True") and the unfused path adds it
	 * before the activation, "if bias_parallel is not None:
	 * intermediate_parallel = intermediate_parallel + bias_parallel"
	 * (Megatron-Core mlp.py at core_v0.6.0; Megatron-DeepSpeed's
	 * ParallelMLP at 11f2d934 the same line): fc1's output, 2 el, read
	 * and written (4 el A); back, the add passes the gradient on and the
	 * bias's gradient is its sum over the tokens, a reduction reading it
	 * (2 el A).  The fused kernel adds it in registers. */
	if (e->m->linear_bias && strcmp(o->name, "mlp_act") == 0) {
		*t += t_mem(e, k->half, 4.0 * el * a);
		*tb += t_mem(e, k->half, 2.0 * el * a);
		*nk += 1.0;
	}
	if (!probs)
		return;
	*t += t_mem(e, k->half, el * (a + q));
	*nk += 1.0;
	if (q > a) {
		*t += t_mem(e, k->half, el * (q + a));
		*nk += 1.0;
		/* the cast's gradient; grad x probs and its cast;
		 * grad x activation and its sum over the ffn */
		*tb += t_mem(e, k->half, el * (a + q)) +
			t_mem(e, k->half, el * 2.0 * q) +
			t_mem(e, k->half, el * (q + a)) +
			t_mem(e, k->half, el * (2.0 * q + a)) +
			t_mem(e, k->half, el * q);
	} else {
		*tb += t_mem(e, k->half, el * 2.0 * a) +
			t_mem(e, k->half, el * 3.0 * a) +
			t_mem(e, k->half, el * a);
	}
}

/* An RMSNorm as one Triton kernel each way: Liger-Kernel's LigerRMSNorm
 * (below) and torchtitan's FusedRMSNorm (norm_type "fused_rmsnorm",
 * torchtitan/models/norms.py at 1ea476e9f: _rms_norm_fwd_kernel loads a
 * row of X, stores Y and the row's fp32 Rstd, "tl.store(Rstd + row,
 * rstd)"; _rms_norm_bwd_kernel_sm loads X, DY and Rstd and stores DX,
 * each program's fp32 dW row, summed after) run the same traffic: 2 A an
 * element and 4 B a row forward, 3 A an element and 4 B a row backward,
 * the sm_count x hidden partial dW rows (a few MB a call) left out.
 * Forward *t, backward *tb, *nk the forward's launches; 0 when o is not
 * an RMSNorm (a LayerNorm: one kernel each way already, eager_elem). */
static int fused_rms_norm(const tenv *e, const train_lkey *k,
			  const gp_op *o, double *t, double *tb, double *nk)
{
	const gp_model *m = e->m;
	double A = k->A, h = m->hidden;

	if ((strcmp(o->name, "attn_norm") == 0 ||
	     strcmp(o->name, "mlp_norm") == 0) && m->norm_params == m->hidden) {
		*t = t_mem(e, k->half, 2.0 * A * o->elems + 4.0 * o->elems / h);
		*tb = t_mem(e, k->half, 3.0 * A * o->elems + 4.0 * o->elems / h);
		*nk += 1;
	} else if (strcmp(o->name, "qk_norm") == 0) {
		/* q's heads and k's, a row a head, one call each */
		double rows = o->elems / m->head_dim;

		*t = t_mem(e, k->half, 2.0 * A * o->elems + 4.0 * rows);
		*tb = t_mem(e, k->half, 3.0 * A * o->elems + 4.0 * rows);
		*nk += 2;
	} else {
		return 0;
	}
	return 1;
}

/* Liger-Kernel (linkedin/Liger-Kernel; AutoLigerKernelForCausalLM,
 * apply_liger_kernel_to_llama / _qwen3 / ...) swaps three of the eager
 * modules above for Triton kernels of its own -- "rope: bool = True",
 * "rms_norm: bool = True", "swiglu: bool = True" by default
 * (transformers/monkey_patch.py: "modeling_llama.apply_rotary_pos_emb =
 * liger_rotary_pos_emb", "modeling_llama.LlamaRMSNorm = LigerRMSNorm",
 * "modeling_llama.LlamaMLP = LigerSwiGLUMLP"; for Qwen3 the Qwen3RMSNorm
 * class, so its q_norm and k_norm too) -- and leaves the rest of the
 * Hugging Face modules as they were: q/k/v and gate/up still separate
 * linears (their dgrad sums), the attention's output copy, the loss
 * unless fused_linear_ce.  One kernel each way, whose bytes are what
 * the Triton source loads and stores (src/liger_kernel/ops/):
 *   rms_norm.py  forward _rms_norm_forward_kernel reads X and writes Y
 *                (2 A an element) and the row's fp32 rstd (4 B a row);
 *                backward _rms_norm_backward_kernel reads dY and X,
 *                writes dX (3 A) and reads the rstd (4 B a row), its
 *                per-program fp32 dW rows (sm_count x hidden, summed by
 *                "_dW.sum(dim=0)") a few MB a call, left out;
 *   rope.py      _triton_rope rotates q and k in place in one launch
 *                ("tl.store(q_ptr + first_half_q_offsets, ...)"), the
 *                backward the same kernel on dq and dk: read and write,
 *                2 A a q/k element each way, and cos and sin of the
 *                row (2 head_dim A a token);
 *   swiglu.py    _swiglu_forward_kernel reads a and b and writes c (3 A
 *                an ffn element); _swiglu_backward_kernel reads dc, a,
 *                b and stores da and db over a and b ("recomputation to
 *                save memory": 5 A).
 * Forward *t, backward *tb, *nk the forward's launches; 0 when o is none
 * of the three (a LayerNorm, a plain activation: as eager_elem). */
static int liger_elem(const tenv *e, const train_lkey *k, const gp_op *o,
		      double *t, double *tb, double *nk)
{
	const gp_model *m = e->m;
	double A = k->A;

	if (fused_rms_norm(e, k, o, t, tb, nk))
		return 1;
	if (strcmp(o->name, "rope_kv") == 0) {
		double nh = m->heads / (double)k->tp;
		double nkv = model_kv_heads_rank(m, k->tp);
		double tok = o->elems / ((nh + nkv) * m->head_dim);
		double b = 2.0 * A * o->elems + 2.0 * m->head_dim * A * tok;

		*t = t_mem(e, k->half, b);
		*tb = t_mem(e, k->half, b);
		*nk += 1;
	} else if ((strcmp(o->name, "mlp_act") == 0 ||
		    strcmp(o->name, "moe_act") == 0) && m->ffn_gated) {
		double el = o->elems / 1.5;   /* as eager_elem */

		*t = t_mem(e, k->half, 3.0 * A * el);
		*tb = t_mem(e, k->half, 5.0 * A * el);
		*nk += 1;
	} else {
		return 0;
	}
	return 1;
}

/* An elementwise operator as the eager modules run it (above): its
 * forward *t and backward *tb replaced by their kernels', *nk counting
 * the forward's launches.  A LayerNorm (nn.LayerNorm: one kernel each
 * way) and a plain activation run as the fused op does. */
static void eager_elem(const tenv *e, const train_lkey *k, const gp_op *o,
		       double *t, double *tb, double *nk)
{
	const gp_model *m = e->m;
	double h = m->hidden, nb = 0;

	if (k->liger && liger_elem(e, k, o, t, tb, nk))
		return;
	if (k->fused_norm && fused_rms_norm(e, k, o, t, tb, nk))
		return;
	if ((strcmp(o->name, "attn_norm") == 0 ||
	     strcmp(o->name, "mlp_norm") == 0) && m->norm_params == m->hidden) {
		*t = ekernels(e, k, rms_fwd, NK(rms_fwd), o->elems,
			      o->elems / h, nk);
		*tb = rms_bwd_kernels(e, k, o->elems, o->elems / h, &nb);
	} else if (strcmp(o->name, "rope_kv") == 0) {
		rope_kernels(e, k, o, t, tb, nk);
	} else if (strcmp(o->name, "qk_norm") == 0) {
		qk_norm_kernels(e, k, o, t, tb, nk);
	} else if ((strcmp(o->name, "mlp_act") == 0 ||
		    strcmp(o->name, "moe_act") == 0) && m->ffn_gated) {
		/* The op's elems are 1.5 per ffn element (gate and up in,
		 * one out). */
		double el = o->elems / 1.5;

		*t = ekernels(e, k, glu_fwd, NK(glu_fwd), el, 0, nk);
		*tb = ekernels(e, k, glu_bwd, NK(glu_bwd), el, 0, &nb);
	} else if ((strcmp(o->name, "mlp_act") == 0 ||
		    strcmp(o->name, "moe_act") == 0) && m->ffn_gelu_new) {
		/* a plain MLP's gelu_new: the op's elems are 1.5 per ffn
		 * element, as the gated op's */
		double el = o->elems / 1.5;

		*t = ekernels(e, k, gelu_new_fwd, NK(gelu_new_fwd), el, 0,
			      nk);
		*tb = ekernels(e, k, gelu_new_bwd, NK(gelu_new_bwd), el, 0,
			       &nb);
	} else if ((strcmp(o->name, "mlp_act") == 0 ||
		    strcmp(o->name, "moe_act") == 0) && m->ffn_relu2) {
		double el = o->elems / 1.5;   /* as the gated op's */

		*t = ekernels(e, k, relu2_fwd, NK(relu2_fwd), el, 0, nk);
		*tb = ekernels(e, k, relu2_bwd, NK(relu2_bwd), el, 0, &nb);
	} else {
		*nk += 1;
	}
}

/* The operator list's config of a layer priced with key k. */
static void layer_op_cfg(const train_lkey *k, int square, gp_op_cfg *oc)
{
	double seq = k->seq;
	/* Packed sequences of unequal lengths: a token attends over its
	 * own sequence only, attn_seq keys token-weighted. */
	double as = k->attn_seq > 0 ? k->attn_seq : seq;

	memset(oc, 0, sizeof *oc);
	oc->seqs = k->micro_batch;
	oc->q = seq / k->cp;
	/* Causal attention: a fused kernel skips the masked half, so a
	 * query sees seq/2 keys on average (with CP's load-balanced
	 * chunks as well); unfused attention computes the whole s x s
	 * score matrix and masks it, and so does a fused kernel handed
	 * an explicit mask (square: the device's attn_square), which
	 * cannot tell the masked tiles from the others. */
	oc->kv_len = k->flash && !square ? as / 2.0 : as;
	oc->tp = k->tp;
	oc->sp = k->sp;
	oc->ep = k->ep;
	oc->etp = k->etp;
	oc->flash = k->flash;
	/* The experts' rows: the busiest rank's dropless share (skew), or
	 * under a capacity factor the padded buffer every local expert
	 * runs, capacity_factor times the even share at any EP size
	 * (Megatron-Core's moe_pad_expert_input_to_capacity: the
	 * dispatcher's "num_tokens_per_local_expert = torch.full(...,
	 * self.capacity * ...)"; train_ep_skew gives 1 then).  The
	 * activations (memory_act.c x->cf) and the exchange (cf * sk
	 * above) priced that buffer already; the GEMMs ran the even share
	 * whatever the factor, and at EP 1 the factor moved the memory
	 * alone. */
	oc->skew = k->skew * (k->capacity_factor > 0 ? k->capacity_factor : 1.0);
}

/* Transformer Engine's GroupedLinear (v2.9, which Megatron-Core's
 * TEGroupedMLP runs the experts on) runs its touched experts one by one:
 * te_general_grouped_gemm hands nvte_multi_tensor_gemm one cuBLASLt GEMM
 * per expert ("a per-expert loop of cuBLASLt GEMMs across multiple CUDA
 * streams", TE PR #3134), and split_quantize casts each expert's rows
 * with a kernel of its own unless the scaling is delayed
 * (multi_tensor_quantize_impl: "Currently only have fused kernel for FP8
 * delayed scaling ... Quantize kernels individually"); a current-scaling
 * cast is three kernels (Float8CurrentScalingQuantizer::quantize: the
 * amax, the scale from it, the cast), a block-scaled (MXFP8, 1x128) one
 * one.  The op prices the experts' work as one kernel of their pooled
 * tiles; each further kernel adds its fixed part on the GPU: a GEMM its
 * launch gap (graph_launch), a cast the fill and drain of a memory-bound
 * kernel (what a kernel of one byte costs, roofline.c ROOF_MEM_FILL).
 * Forward: a GEMM and the input's cast per expert; backward: the dgrad
 * and wgrad GEMMs and dY's cast.  The scales' swizzle for the MXFP8
 * GEMMs is one multi-tensor kernel per operand list
 * (multi_tensor_swizzle_scaling_factors), not per expert. */
static void expert_loop(tenv *e, const train_lkey *k, const gp_op *o,
			int fp8, double *t, double *tb)
{
	double n = o->batch, g = e->d->graph_launch;
	double fix = t_mem(e, k->half, 1.0);
	double kq = !fp8 ? 0.0 : k->fp8_current ? 3.0 : k->fp8_block ?
		1.0 : 0.0;
	double casts = kq > 0 ? (n * kq - 1.0) * fix : 0.0;
	int wgrad = wgrad_gemm(k, o);

	*t += (n - 1.0) * g + casts;
	*tb += (wgrad ? 2.0 : 1.0) * (n - 1.0) * g + casts;
}

/* The host's share of fp8 beyond its kernels.  A Transformer Engine
 * module that quantizes runs more host work than its bf16 twin: the
 * quantizers, the input's cast and the fp8 tensor objects the cast
 * returns, the cached weight's lookup, and in the backward dY's casts
 * ("te.Linear is more complicated since it also launches kernels for the
 * FP8 cast, caching FP8 scales for the backward pass, and updating FP8
 * scales", TE issue #836).  TE PR #3523 times the modules' CPU work on
 * GB200 (TE main, September 2026, before that PR's own view() savings):
 * Linear 59.19 us forward and 311.30 us forward + backward in BF16,
 * 114.51 and 440.93 us in MXFP8; LayerNormLinear 83.48 / 397.73 and
 * 135.42 / 518.67 us.  In units of the bf16 Linear's forward -- one
 * host launch here (host_op_time: GB200's 68.3 us against the 59.19
 * measured) -- fp8 adds (114.51 - 59.19) / 59.19 = 0.935 to a Linear's
 * forward and ((440.93 - 114.51) - (311.30 - 59.19)) / 59.19 = 1.255 to
 * its backward; to a LayerNormLinear (the norm-fused qkv and mlp_up)
 * (135.42 - 83.48) / 59.19 = 0.878 and ((518.67 - 135.42) - (397.73 -
 * 83.48)) / 59.19 = 1.166.  A grouped linear pays that share once and
 * then quantizes each further expert's rows as a call of its own
 * (split_quantize's "Quantize kernels individually", expert_loop):
 * TE_FP8_EXPERT_HOST each; delayed scaling's fused multi-tensor cast is
 * one call for all. */
#define TE_FP8_FWD_HOST ((114.51 - 59.19) / 59.19)
#define TE_FP8_BWD_HOST (((440.93 - 114.51) - (311.30 - 59.19)) / 59.19)
#define TE_FP8_LN_FWD_HOST ((135.42 - 83.48) / 59.19)
#define TE_FP8_LN_BWD_HOST (((518.67 - 135.42) - (397.73 - 83.48)) / 59.19)

/* A grouped linear's further experts do not repeat a Linear's fp8
 * share: the module's quantizer set-up, its autocast state and the
 * module call are paid once, and what repeats per expert is the cast
 * itself, which TE 2.9's split_quantize runs in C++
 * (extensions/cast.cpp: a loop over the splits, each quantizer's
 * create_tensor and quantize) -- one forward (the expert's input rows,
 * row- and columnwise) and one backward (dY's rows).  TE PR #3137 times
 * one such call's CPU work, an MXFP8 quantize of both usages through
 * TE's C++ entry, on an Arm-hosted B200 ("ptyche (B200 GPU, ARM CPU)"):
 * CPU_cpp_us 19.82 (4096x4096, "both"), 19.17-20.00 over 4096 x 4096
 * to 14336 (host work, whatever the size); in units of PR #3523's bf16
 * Linear forward on GB200 (59.19 us, an Arm host too) 19.82 / 59.19 =
 * 0.335 a cast.  The Python loop's per-expert weight lookup
 * (get_weight_workspace) is not timed by either and not counted. */
#define TE_FP8_EXPERT_HOST (19.82 / 59.19)

/* Transformer Engine's MXFP8 grouped linear before two of its changes
 * (te_mxfp8_grouped; Megatron-LM's DeepSeek-V3 GB200 guide, sec. 2.1.2
 * and 2.1.3, its rows 494.46 -> 529.55 and 762.12 -> 797.67).  What the
 * default (TE from PR #2019, 476efac, 2025-08-07) runs: split_quantize
 * allocates one buffer for every expert's row-wise copy and one for the
 * column-wise ("bulk_allocate_mxfp8_tensors", at::empty), and the grouped
 * GEMM swizzles each operand list's scales with one kernel ("auto
 * swizzled_scale_inv_A = multi_tensor_swizzle_scaling_factors(
 * te_A_wrappers, transa)"), zero-padding inside it.  Before:
 * - every GEMM swizzles its two operands' scales itself (te_general_
 *   grouped_gemm at 476efac^: "swizzled_scale_inverses_list.emplace_back(
 *   std::move(swizzle_scaling_factors(te_A, transa)))", the same for
 *   te_B), each an at::empty and a kernel: 2 n where the default runs 2,
 *   for each of the forward's GEMM, the dgrad and the wgrad (n: the
 *   local experts the call runs);
 * - "bulk" (PR #1793 and #1934, 2025-06/07, to PR #2019): the two
 *   buffers are zeroed, data and scales ("// TODO(zhongbo): use
 *   torch.empty if zero padding is added to the swizzle kernel ...
 *   at::zeros({(int64_t)buffer_size}, ...)", cast.cpp at 476efac^): a
 *   fill kernel each, writing the fp8 copies' bytes (1 B an element, two
 *   copies) once more, for the input's cast and dY's;
 * - "per_tensor" (before PR #1934, 96ee7173f^): each expert's cast
 *   creates its own tensors (MXFP8Quantizer::create_tensor: "data =
 *   at::empty(torch_shape, opts)", "rowwise_scale_inv = at::zeros(
 *   {sinv0, sinv1}, opts)", the column-wise the same): 4 n allocations,
 *   2 n of them zero-filled, where the buffers are 2 -- the guide's
 *   "four tensors need to be allocated ... each PyTorch API call
 *   introduces several microseconds of overhead, resulting in
 *   significant CPU overhead".
 * These calls run in Transformer Engine's C++ (no Python between them):
 * an at::empty of a CUDA tensor takes 1.46 us of host time (PyTorch PR
 * #13785: "This leads to a 300 ns speedup for at::empty for a cuda
 * tensor of size (64, 2048). (1790ns -> 1460ns for at::empty)"), a kernel
 * launch 2.35 us (NVIDIA/cutlass issue #3275, an x64 B200 host:
 * "NoLaunchKernel 1.13 us", "LaunchKernel 3.48 us"); both measured on x86
 * hosts, scaled with the job's host as TE_EXPERT_GEMM is (host_op_time
 * / GP_EAGER_OP_TIME).  On the GPU each further small kernel (a swizzle
 * of one expert's scales, one expert's scales zeroed) is its fill and
 * drain (t_mem of its bytes, ROOF_MEM_FILL's fixed part), the bulk
 * buffers' zeroing a pass over their bytes. */
#define TE_AT_EMPTY_HOST 1.46e-6
#define TE_CPP_LAUNCH_HOST (3.48e-6 - 1.13e-6)

/* The forward's (*xf) and backward's (*xb) GPU seconds and host launches
 * (*hf, *hb, in host_op_time units) an older MXFP8 grouped linear adds to
 * the default's, for n local experts of in input and outv output
 * elements; wg: the backward runs a wgrad GEMM. */
static void mxfp8_grouped_legacy(const tenv *e, const train_lkey *k,
				 double n, double in, double outv, int wg,
				 double *xf, double *xb, double *hf,
				 double *hb)
{
	double s = 1.0 / GP_EAGER_OP_TIME;
	double swz = 2.0 * (n - 1.0), gemms_b = wg ? 2.0 : 1.0;
	double small = t_mem(e, k->half, 1.0);
	double call = TE_AT_EMPTY_HOST + TE_CPP_LAUNCH_HOST;

	/* the per-GEMM swizzles: an allocation and a launch each */
	*xf = swz * small;
	*xb = gemms_b * swz * small;
	*hf = swz * call * s;
	*hb = gemms_b * swz * call * s;
	if (k->mxfp8_grouped == GP_MXFP8_GROUPED_BULK) {
		/* the two zeroed buffers: a launch and a pass each */
		*xf += t_mem(e, k->half, in) + t_mem(e, k->half, in);
		*xb += t_mem(e, k->half, outv) + t_mem(e, k->half, outv);
		*hf += 2.0 * TE_CPP_LAUNCH_HOST * s;
		*hb += 2.0 * TE_CPP_LAUNCH_HOST * s;
	} else if (k->mxfp8_grouped == GP_MXFP8_GROUPED_PER_TENSOR) {
		/* 4 n allocations for the buffers' 2, 2 n of them zeroed
		 * (the scales: a small kernel each), each way */
		double h = ((4.0 * n - 2.0) * TE_AT_EMPTY_HOST +
			    2.0 * n * TE_CPP_LAUNCH_HOST) * s;

		*xf += 2.0 * n * small;
		*xb += 2.0 * n * small;
		*hf += h;
		*hb += h;
	}
}

/* The backward's host work of a Transformer Engine module (te_modules:
 * its autograd Function's backward is Python -- _Linear.backward,
 * _LayerNormLinear.backward -- that sets up and launches dgrad, wgrad
 * and the norm's backward; torch modules run theirs in autograd's C++
 * engine).  TE PR #3523 (above) times it with the forward: BF16 Linear
 * 311.30 us forward + backward against 59.19 forward, LayerNormLinear
 * 397.73 against 83.48, so in units of the Linear's forward (one host
 * launch) a Linear's backward is (311.30 - 59.19) / 59.19 = 4.259 and a
 * LayerNormLinear's (397.73 - 83.48) / 59.19 = 5.309.  A grouped
 * linear pays a Linear's for the module; its experts' GEMMs are
 * TE_EXPERT_GEMM's. */
#define TE_BWD_HOST ((311.30 - 59.19) / 59.19)
#define TE_LN_BWD_HOST ((397.73 - 83.48) / 59.19)

/* Megatron-Core's shared experts are a module of their own beside the
 * grouped experts (moe_module_specs.py at 23a1dca: "shared_experts =
 * ModuleSpec(module=SharedExpertMLP, params={"gate": False},
 * submodules=mlp)", whose linear_fc1 and linear_fc2 are the backend's
 * column- and row-parallel linears, Transformer Engine's with the TE
 * spec), run by MoELayer before the router ("shared_expert_output =
 * self.shared_experts_compute(hidden_states)", then "output = output +
 * shared_expert_output" in combine, moe_layer.py).  The op list folds
 * their GEMMs into moe_up and moe_down (model_ops.c, shared_f), whose
 * host is the grouped linears' alone; the shared MLP's own forward is
 * MLP.forward's linear_fc1, its fused activation (weighted_bias_swiglu_
 * impl or the plain act) and linear_fc2 -- three launches, each linear
 * with fp8's share under an fp8 recipe (TE_FP8_FWD_HOST) -- and the
 * combine's add, one more; backward, the two linears' Python backward
 * (TE_BWD_HOST, TE_FP8_BWD_HOST).  The guide's cuda_graph_scope
 * "moe_router: capture the moe router part. Also capture shared experts
 * unless the shared experts overlap is enabled": with the router graphed
 * the three launches are the replay's (*gf), the add is not (*f). */
static void shared_expert_host(const train_lkey *k, double *gf, double *f,
			       double *b)
{
	int f8 = k->lin == GP_FP8;

	*gf = 3.0 + (f8 ? 2.0 * TE_FP8_FWD_HOST : 0.0);
	*f = 1.0;
	*b = 2.0 * (TE_BWD_HOST + (f8 ? TE_FP8_BWD_HOST : 0.0));
}

/* Megatron-Core's MLA layer (gpt_layer_specs.py at 7094270, the same
 * through core_v0.14: get_gpt_layer_with_transformer_engine_spec's
 * MLASelfAttentionSubmodules) runs its projections as Transformer Engine
 * modules of their own: "linear_q_down_proj=TEColumnParallelLinear",
 * "linear_q_up_proj=(TELayerNormColumnParallelLinear if qk_layernorm
 * else TEColumnParallelLinear)", "linear_kv_down_proj=
 * TEColumnParallelLinear", "linear_kv_up_proj=(TELayerNormColumnParallel
 * Linear if qk_layernorm ...)", without a q LoRA "linear_q_proj=
 * TEColumnParallelLinear"; the layer's "input_layernorm=TENorm" is the
 * op list's attn_norm.  The op list prices them as one qkv, launched
 * and backed as one norm-fused linear (one host op, TE_LN_BWD_HOST).
 * The modules beyond it: with a q LoRA the two down projections (plain
 * linears) and the second up projection (norm-fused when qk_layernorm,
 * as DeepSeek-V3's configs set it); without, q_proj and kv_down (plain).
 * Each is one host op forward and its module's backward host (TE PR
 * #3523's GB200 times above), and, in fp8, its quantizing share. */
static void mla_te_modules(const gp_model *m, int fp8, double *nk,
			   double *nb)
{
	double lin, ln;

	if (!(m->mla.kv_lora_rank > 0))
		return;
	lin = 2.0;
	ln = m->mla.q_lora_rank > 0 ? 1.0 : 0.0;
	*nk += lin + ln;
	*nb += lin * TE_BWD_HOST + ln * TE_LN_BWD_HOST;
	if (fp8) {
		*nk += lin * TE_FP8_FWD_HOST + ln * TE_FP8_LN_FWD_HOST;
		*nb += lin * TE_FP8_BWD_HOST + ln * TE_FP8_LN_BWD_HOST;
	}
}

/* The router's gating GEMM in float64 (Megatron-Core's moe_router_dtype
 * "fp64", which verl sets for DeepSeek-V3: verl/models/mcore/
 * config_converter.py hf_to_mcore_config_dpskv3, 'moe_router_dtype=
 * "fp64"', at 65c59c7).  Megatron-Core's RouterGatingLinearFunction
 * (core_v0.13.0 transformer/moe/moe_utils.py) takes Transformer Engine's
 * GEMM only "if te_general_gemm is not None and router_dtype !=
 * torch.float64"; in fp64 it runs "torch.mm(inp.to(router_dtype),
 * weight.to(router_dtype).t())" forward and, backward, "grad_input =
 * torch.mm(grad_output, weight.to(ctx.router_dtype)).to(ctx.input_dtype)"
 * and "grad_weight = torch.mm(grad_output.t(), inp.to(ctx.router_dtype))
 * .to(ctx.weight_dtype)": three DGEMMs at the device's fp64 rate (its
 * peak: no catalog measures a DGEMM's achievable share, so a lower
 * bound on the time), where the 16-bit router's are tensor-core GEMMs.
 * Rows: the tokens this rank routes, the sequence-parallel shard
 * (k->Tn: Megatron's MoE layer takes [s/tp, b, h] under SP).  Beside
 * the GEMMs the casts, each a read and a write: forward the input (A
 * bytes to 8) and the weight (2 to 8), the logits written in 8;
 * backward the fp64 gradient of the logits read, the weight and the
 * input cast again, the input's gradient cast back to A and the
 * weight's to 2.  Replaces the 16-bit pricing of the op. */
static void router_fp64_costs(tenv *e, const train_lkey *k, const gp_op *o,
			      double *t, double *tb_)
{
	double r = k->Tn, E = o->n, h = o->k;
	double f = 2.0 * r * E * h, A = k->A;

	*t = f / e->d->fp64 + t_mem(e, k->half, r * h * (A + 8.0) +
				    E * h * (2.0 + 8.0) + r * E * 8.0);
	*tb_ = 2.0 * f / e->d->fp64 + t_mem(e, k->half, r * E * 8.0 +
		E * h * (2.0 + 8.0) + r * h * (A + 8.0) +
		r * h * (8.0 + A) + E * h * (8.0 + 2.0));
}

/* The GEMMs op o runs as, their output widths into wn, how many: one of
 * its width, or with split_proj (train_cfg, a mask of GP_SPLIT_*) the
 * linears the model's modules keep apart -- q, k and v (the attention's q
 * width and the kv heads' each), the gated MLP's gate and up (half each).  torchtitan's
 * Llama (models/llama/model.py at 9dec370, models/llama3/model.py at
 * 820504e) builds "self.wq = nn.Linear(", "self.wk = nn.Linear(
 * model_args.dim, self.n_kv_heads * self.head_dim, bias=False)", the
 * same wv, and "self.w1 = nn.Linear(dim, hidden_dim, bias=False)", the
 * same w3, and calls "xq, xk, xv = self.wq(x), self.wk(x), self.wv(x)"
 * and "self.w2(F.silu(self.w1(x)) * self.w3(x))": each a matmul of its
 * own forward, dgrad and wgrad, whose tiles and waves (roofline.c) are
 * those of its own narrower output.  torch.compile fuses no matmuls
 * (they stay calls of their own); the same input's identical fp8 casts
 * of torchao's Float8Linear are one computation to its common
 * subexpression elimination, so the casts are priced once. */
static int split_widths(const tenv *e, const train_lkey *k, const gp_op *o,
			double wn[3])
{
	const gp_model *m = e->m;

	wn[0] = o->n;
	if (!k->split_proj)
		return 1;
	if ((k->split_proj & GP_SPLIT_QKV) && strcmp(o->name, "qkv") == 0 &&
	    m->mla.kv_lora_rank <= 0) {
		double kv = model_kv_heads_rank(m, k->tp) * m->head_dim;

		if (!(kv > 0.0) || !(o->n > 2.0 * kv))
			return 1;
		wn[0] = o->n - 2.0 * kv;
		wn[1] = wn[2] = kv;
		return 3;
	}
	if ((k->split_proj & GP_SPLIT_MLP) && strcmp(o->name, "mlp_up") == 0 &&
	    m->ffn_gated) {
		wn[0] = wn[1] = o->n / 2.0;
		return 2;
	}
	return 1;
}

/* Elements of activation a GEMM of output width n of op o moves: the
 * op's input (m x k) whole, its own share of the output (the op's act
 * counts both once). */
static double act_share(const gp_op *o, double n)
{
	double in = o->m * o->batch * o->k, out = o->m * o->batch * o->n;

	if (!(in + out > 0.0))
		return 0.0;
	return o->act * (in + out * n / o->n) / (in + out);
}

/* Transformer Engine's fused grouped MLP (fused_grouped_mlp): Megatron-
 * Core's TEGroupedMLP with use_transformer_engine_op_fuser (core_v0.18.0
 * transformer/moe/experts.py _make_fused_ops) runs the routed experts as
 * te.pytorch.ops.Sequential of "te.pytorch.ops.GroupedLinear(...,
 * bias=self.linear_fc1.use_bias", the gated activation with the router's
 * probabilities ("ScaledSwiGLU(glu_interleave_size=glu_interleave)", or
 * for quick_gelu with a clamp "ScaledClampedQGeGLU(glu_interleave_size=
 * glu_interleave, limit=clamp)") and fc2's biased GroupedLinear, and
 * returns "output_bias = None".  With NVTE_CUTEDSL_FUSED_GROUPED_MLP=1,
 * an MXFP8 recipe (ops/_common.py fuse_grouped_mlp_ops: "if recipe is
 * None or not recipe.mxfp8(): return ops") and a compute capability 10
 * GPU, TE v2.16 replaces the three ops by ForwardGroupedMLP_CuTeGEMM
 * SwiGLU_MXFP8 (ops/fused/forward_grouped_mlp.py) and its backward
 * (ops/fused/backward_grouped_mlp.py), cuDNN front-end's CuTe DSL
 * kernels, one launch for all the local experts ("padded_offsets",
 * "use_dynamic_sched": True):
 *  forward: "tex.group_quantize(fc1_x, ...)" (the input's cast, one call
 *   for the groups); "grouped_gemm_glu_wrapper_sm100" -- fc1 with
 *   "bias_tensor": fc1_bias_packed, the activation (act_func "geglu" or
 *   "swiglu") and "prob_tensor" in its epilogue, which writes the
 *   pre-activation ("c_dtype": torch.bfloat16, saved as swiglu_in) and
 *   fc2's input in MXFP8 both ways ("d_tensor", "d_col_tensor",
 *   "d_dtype": torch.float8_e4m3fn); "grouped_gemm_quant_wrapper_sm100"
 *   -- fc2 with "bias_tensor": fc2_bias_packed;
 *  backward: "tex.bgrad_group_quantize(fc2_dy, ...)" (dY's cast with
 *   fc2's bias gradient); "grouped_gemm_dglu_wrapper_sm100" -- fc2's
 *   dgrad reading "c_tensor": swiglu_in in its epilogue ("dgeglu" or
 *   "dswiglu"), "generate_dbias": fc1_op.has_bias, the probabilities'
 *   gradient ("dprob_tensor") and fc1's dY in MXFP8 both ways
 *   ("d_row_tensor", "d_col_tensor"); fc1's dgrad and the wgrads.
 * So of what TEGroupedMLP runs, the activation kernel (moe_act), the
 * clamp before it (moe_clamp), fc2's per-expert bias loop (moe_bias),
 * fc2's input cast, fc1's dY cast and the per-expert launches
 * (expert_loop) do not run (layer_compute, below).  What runs instead
 * is the epilogues' traffic, priced in their GEMMs' bytes: fc1's writes
 * fc2's input twice in 1 B besides its 16-bit output (FUSED_MLP_FWD_B a
 * product element, a = fc2's input); fc2's dgrad reads the saved
 * pre-activation (2 a in A) and writes fc1's dY twice in 1 B (2 a x 2 B)
 * where a dgrad writes its output (a in A).  The scales (1 B a 32) and
 * the probabilities (one a row) are left out. */
#define FUSED_MLP_FWD_B 2.0

/* The row alignment of Megatron-Core's fp8 padding (moe_fp8_pad_costs):
 * the fused grouped MLP's 256 (core_v0.18.0 experts.py "align_size = 256
 * if self._with_fused_impl else None"), else Transformer Engine's
 * get_align_size_for_quantization ("if recipe.mxfp8(): return 32 ...
 * return 16"). */
#define MOE_FP8_ALIGN_FUSED 256
#define MOE_FP8_ALIGN_MX 32
#define MOE_FP8_ALIGN 16

/* Transformer Engine's Userbuffers split a TP-overlapped GEMM into
 * chunks of its tokens, each its own cuBLAS GEMM (comm_gemm_overlap.h,
 * v1.10): the ring-exchange all-gathers (qkv_fprop, fc1_fprop,
 * proj_dgrad, fc2_dgrad: initialize_ub's default "ring_exchange":
 * ["qkv_fprop", "fc1_fprop", "proj_dgrad", "fc2_dgrad"]) run
 * split_gemm_overlap_ag, one GEMM per rank's chunk as it arrives,
 * "n_chunk = ubufs[0].size(0)" rows each, tp of them -- or tp / 2 of
 * twice the rows with "aggregate" ("const int num_steps = _tp_size / 2",
 * "{n_chunk * 2, k}"; tp_overlap_aggregate); the pipelined reduce-
 * scatters (proj_fprop, fc2_fprop: "pipeline") run split_gemm_overlap_rs,
 * "_num_splits" GEMMs of "m_chunk" rows, num_splits "4 if method ==
 * "pipeline"" (module/base.py initialize_ub, the default and the dgxc
 * recipes' explicit "num_splits: 4").  The bulk overlaps (the column-
 * parallel linears' dgrad and wgrad) run one GEMM.  So the forward's
 * four linears and the row-parallel linears' dgrad each read their
 * weight c times, on c GEMMs of m / c rows, the chunks round-robin on
 * "_stream_compute[i % _stream_compute.size()]" (3 streams), which lets
 * one chunk's tail wave share the SMs with the next: the chunks are
 * priced as one GEMM of count c (gemm_costs).  Without Userbuffers the
 * GEMM is one (1).  Megatron-Core's MoE layer keeps Userbuffers on the
 * attention's linears alone; its experts' names are not these. */
#define UB_PIPELINE_SPLITS 4.0
static double ub_chunks(const train_lkey *k, const gp_op *o, int dgrad)
{
	int col, row;
	double ring;

	if (!k->ub_split || o->batch != 1.0)
		return 1.0;
	col = strcmp(o->name, "qkv") == 0 || strcmp(o->name, "mlp_up") == 0;
	row = strcmp(o->name, "o_proj") == 0 ||
		strcmp(o->name, "mlp_down") == 0;
	ring = k->ub_aggregate && k->tp >= 2 ? (double)(k->tp / 2) :
		(double)k->tp;
	if (dgrad)
		return row ? ring : 1.0;
	return col ? ring : row ? UB_PIPELINE_SPLITS : 1.0;
}

/* Seconds c Userbuffers chunks (ub_chunks) add over one GEMM of m x n,
 * depth k: c GEMMs of m / c rows, each reading the whole weight (wb
 * bytes; the other bytes rb, the activations and epilogue, read once
 * over all chunks), their tails filled by each other (the chunks'
 * streams: one roofline op of count c).  0 where c is 1. */
static double ub_extra(const tenv *e, double c, double flop, double wb,
		       double rb, double m, double n, double k, double batch,
		       gp_dtype p, int spread)
{
	if (!(c > 1.0))
		return 0.0;
	return train_t_gemm(e, flop, c * wb + rb, m / c, n, k, batch * c, p,
			    spread) -
		train_t_gemm(e, flop, wb + rb, m, n, k, batch, p, spread);
}

/* A GEMM's forward and backward (dgrad, wgrad) into lc, with fp8's
 * casts, a 4-bit base's dequantisation and its LoRA adapter; *nk counts
 * the forward's kernel launches (and fp8's host work in launches), *nb
 * the backward's host work in launches beyond the expert GEMMs', *o_k
 * takes o_proj's input width. */
static void gemm_costs(tenv *e, const train_lkey *k, const gp_op *o,
		       train_lcost *lc, double *nk, double *nb, double *o_k)
{
	const gp_model *m = e->m;
	double wbytes, t, tb_, flop, flop_b, wn[3];
	gp_dtype p;
	int fp8 = k->lin == GP_FP8, eager = k->eager, spread, np, i, down16;
	int ntn;
	unsigned tg = k->frozen ? k->lora_targets : 0;
	/* fc1 and fc2 of the fused grouped MLP (FUSED_MLP_FWD_B) */
	int fm_up = k->fused_mlp && strcmp(o->name, "moe_up") == 0;
	int fm_down = k->fused_mlp && strcmp(o->name, "moe_down") == 0;
	double epi_f = 0.0, epi_d = 0.0, wk, cf, cb;
	int pad;

	/* The dense MLP's down projection kept in bf16 under an fp8 recipe
	 * (mlp_down_bf16): HabanaAI's Megatron-LM builds the MLP's fc2 as
	 * "IntelTERowParallelLinear if fp8_coverage.get('mlp_row_parallel',
	 * True) else RowParallelLinear" (branch 1.19.0; later branches
	 * "... else IntelTERowParallelLinearFp8Disabled", megatron/core/
	 * models/gpt/gpt_layer_specs.py), and its Llama recipe passes
	 * "--fp8-coverage ${FP8_COVERAGE}" with the default "mlp_row_parallel=
	 * False attention=False" (1.19.0) / "mlp_row_parallel=False
	 * attention=True" (1.20.0, 1.20.1; examples/llama/pretrain_llama.sh):
	 * fc2's forward, dgrad and wgrad run as 16-bit GEMMs, its weight
	 * read in 16 bits, with no fp8 casts of its input or output
	 * gradient. */
	down16 = k->mlp_down_bf16 && o->wclass == GP_W_LINEAR &&
		strcmp(o->name, "mlp_down") == 0;
	p = o->wclass == GP_W_LINEAR && !down16 ? k->lin : k->half;
	wbytes = o->wclass == GP_W_LINEAR && !down16 ? k->wb : 2.0;
	/* A block-scaled fp8 GEMM (fp8_block: MXFP8 on Blackwell) runs at
	 * the device's block_fp8 share of the per-tensor fp8 GEMM the
	 * catalog's gemm fraction measures (catalog achievable.block_scaled:
	 * its block scales read and applied beside the MMAs): its FLOPs
	 * taken at that rate, its bytes not. */
	flop = p == GP_FP8 && k->fp8_block && e->d->block_fp8 > 0 ?
		o->flop / e->d->block_fp8 : o->flop;
	/* Per-tensor fp8 in Transformer Engine on a part that takes non-TN
	 * fp8 GEMMs (device fp8_non_tn: Blackwell) writes no transposes
	 * (quantizer.cpp "create_transpose = columnwise_usage &&
	 * !non_tn_fp8_gemm_supported()") and hands cuBLASLt the NN dgrad
	 * and the NT wgrad, which run at fp8_non_tn of the TN rate
	 * (catalog achievable.non_tn); MXFP8 keeps both scaled copies and
	 * every GEMM TN.  (te_modules is never set on an eager step:
	 * train_prep.c.) */
	ntn = p == GP_FP8 && fp8 && !k->fp8_block && k->te_modules &&
		e->d->fp8_non_tn > 0;
	flop_b = ntn ? flop / e->d->fp8_non_tn : flop;
	/* The routed experts' forward and dgrad GEMMs have each expert's
	 * own tokens on the M side, a whole number of tiles per expert:
	 * Transformer Engine's GroupedLinear (Megatron-Core's
	 * TEGroupedMLP) runs "general_grouped_gemm(weights, inputmats,
	 * ..., m_splits=m_splits)" forward and "general_grouped_gemm(
	 * weights, grad_output, torch.split(dgrad, m_splits), ...,
	 * layout="NN", m_splits=m_splits, grad=True)" for dgrad, one GEMM
	 * of m_splits[i] rows per expert (grouped_linear.py), and
	 * SequentialMLP and the Hugging Face MoE blocks loop over the
	 * experts, each a GEMM of its own rows.  So they pay each
	 * expert's expected tiles over the routing's Poisson count
	 * (roofline.c roof_expected_tiles), not ceil(mean / T); the
	 * wgrad has the tokens along K and pays no M tiles for them. */
	spread = o->scope == GP_SCOPE_MOE && o->batch > 1.0;
	/* The rows Megatron-Core's fp8 padding adds (moe_fp8_pad_costs'
	 * copy, same conditions): the expert GEMMs run over each expert's
	 * padded count, fc1 and fc2 both ways -- Fp8Padding hands
	 * GroupedLinear the padded m_splits ("permuted_local_hidden_states,
	 * tokens_per_expert = self.quantization_padding(...)"), and the
	 * fused kernel its "padded_offsets".  The alignment: "align_size =
	 * 256 if self._with_fused_impl else None" (Megatron-Core
	 * core_v0.18.0 experts.py), None being Transformer Engine's
	 * get_align_size_for_quantization ("if recipe.mxfp8(): return 32
	 * ... return 16"; fp8_block is taken as MXFP8, as the casts
	 * above take it).  Forward and dgrad carry the rows on M: the
	 * alignment goes to the tile count as roof_op.spread (whole
	 * 256-row blocks, where a 16- or 32-row padding ends inside the
	 * tile the last rows take anyway).  The wgrad carries them on K:
	 * its FLOPs and depth grow by the expected padded count over the
	 * mean, E[ceil(X / a)] a with X the expert's rows, Poisson about
	 * the mean as roof_expected_tiles takes them (about (a - 1) / 2
	 * rows more an expert once the spread covers a, the remainder
	 * then uniform).  HybridEP's dispatch pads the same counts to the
	 * same multiple where the grouped MLP's copy is skipped
	 * (Megatron-Core core_v0.18.0 token_dispatcher.py
	 * _HybridEPManager.dispatch: "if self.config.fp8 or
	 * self.config.fp4: self.pad_multiple =
	 * get_align_size_for_quantization(self.config)", handed to
	 * hybrid_ep_dispatch, whose pad_multiple is the "Alignment
	 * multiple required for FP8 GEMM", fused_a2a.py; the field:
	 * "Used for padding the output for each expert"), and
	 * moe_utils.py get_align_size_for_quantization gives the fused
	 * MLP's 256 ("# CUTLASS kernel for grouped GEMM assumes 256
	 * alignment. if config.use_transformer_engine_op_fuser: return
	 * 256"), else get_fp8_align_size's 32 for MXFP8 and 16 otherwise
	 * (fp8_utils.py) -- the alignments above.  Router padding
	 * (moe_router_padding_for_quantization, pad_routing_map) pads to
	 * that same multiple before the dispatch, so HybridEP adds no
	 * rows to it and the padded count is one rule either way. */
	pad = spread && fp8 && p == GP_FP8 && !eager &&
		(k->moe_fp8_copy || (k->ep_flex && k->ep_hybridep)) &&
		(strcmp(o->name, "moe_up") == 0 ||
		 strcmp(o->name, "moe_down") == 0) ?
		(k->fused_mlp ? MOE_FP8_ALIGN_FUSED : k->fp8_block ?
		 MOE_FP8_ALIGN_MX : MOE_FP8_ALIGN) : 0;
	wk = pad && o->m > 0.0 ?
		roof_expected_tiles(o->m, (double)pad, 1) * pad / o->m : 1.0;
	np = split_widths(e, k, o, wn);
	/* the fused grouped MLP's epilogues (FUSED_MLP_FWD_B): a = fc2's
	 * input, half of fc1's gated output */
	if (fm_up)
		epi_f = FUSED_MLP_FWD_B * o->m * o->batch * o->n / 2.0;
	if (fm_down)
		epi_d = o->m * o->batch * o->k * (2.0 * k->A + 2.0 * 2.0 -
						  k->A);
	t = tb_ = 0.0;
	cf = ub_chunks(k, o, 0);
	cb = ub_chunks(k, o, 1);
	for (i = 0; i < np; i++) {
		/* this GEMM's share of the op: its columns' FLOPs and
		 * weights, the whole input and its own output */
		double fr = wn[i] / o->n;
		double by = o->weights * wbytes * fr +
			act_share(o, wn[i]) * k->A;
		double wb = o->weights * wbytes * fr, ab = by - wb;

		t += train_t_gemm(e, flop * fr, by + epi_f * fr, o->m, wn[i],
				  o->k, o->batch, p, pad ? pad : spread);
		/* dgrad: dX = dY W, output m x k, depth n. */
		tb_ += train_t_gemm(e, flop_b * fr, by + epi_d * fr, o->m, o->k,
				    wn[i], o->batch, p, pad ? pad : spread);
		/* Userbuffers' split GEMMs (ub_chunks): what they add is
		 * kept apart for tp_overlap (ub_fwd, ub_bwd). */
		lc->ub_fwd += ub_extra(e, cf, flop * fr, wb, ab + epi_f * fr,
				       o->m, wn[i], o->k, o->batch, p,
				       pad ? pad : spread);
		lc->ub_bwd += ub_extra(e, cb, flop_b * fr, wb, ab + epi_d * fr,
				       o->m, o->k, wn[i], o->batch, p,
				       pad ? pad : spread);
		/* wgrad: dW = dY^T X, output n x k, depth m (padded:
		 * wk), the main grad read and written (k->wacc). */
		if (wgrad_gemm(k, o))
			tb_ += train_t_op(e, flop_b * fr * wk, o->weights * fr *
					  k->wacc + act_share(o, wn[i]) *
					  k->A, wn[i], o->k, o->m * wk,
					  o->batch, p);
	}
	/* Split linears' input gradients are summed by autograd (the
	 * input feeds np modules): eager, np - 1 adds of two (read 2,
	 * write 1 A each); compiled, one kernel reading np and writing
	 * one. */
	if (np > 1)
		tb_ += t_mem(e, k->half, o->m * o->batch * o->k * k->A *
			     (eager ? 3.0 * (np - 1.0) : np + 1.0));
	if (k->router_fp64 && strcmp(o->name, "moe_router") == 0 &&
	    e->d->fp64 > 0)
		router_fp64_costs(e, k, o, &t, &tb_);
	if (p == GP_FP8 && fp8) {
		/* Transformer Engine: the input is cast to
		 * fp8 with its transpose for the wgrad GEMM
		 * (fused into the norm before qkv and
		 * mlp_up, a kernel of its own before o_proj
		 * and mlp_down: read 2 B, write 1 + 1 B);
		 * backward casts dY the same way.  Current
		 * scaling reads each tensor once more for
		 * its amax first (TE docs, "FP8 Current
		 * Scaling": "Quantization is a memory-bound
		 * operation that requires reading the tensor
		 * twice"), and the norm cannot write fp8
		 * before its output's amax is known: TE's
		 * layernorm_fwd (extensions/normalization.cpp
		 * FUSED_NORM_AMAX_FP8) writes the norm in
		 * 16 bits with its amax, then casts it (read
		 * A, write 1 + 1 B).  A block-scaled norm output
		 * (MXFP8, Hopper's 1x128 blocks) is not written
		 * by the norm either: layernorm_fwd/rmsnorm_fwd
		 * pick FULLY_FUSED only for no quantizer or a
		 * delayed-scaling one ("IsFloat8Quantizers"), an
		 * MXFP8 quantizer only "if
		 * transformer_engine::getenv<bool>(\"NVTE_NORM_FWD_
		 * USE_CUDNN\")" (the cuDNN kernel), and every
		 * other quantizer stays at "Impl::UNFUSED" --
		 * "Compute norm in high precision, then quantize"
		 * (TE v2.9 to v2.14, normalization.cpp): the
		 * norm writes 16 bits and a cast of its own reads
		 * them and writes both copies, as before o_proj
		 * (read A, write 1 + 1 B, MXFP8_BOTH_EXTRA more;
		 * no amax pass).  The experts' up projection
		 * is no norm's: its input is the dispatched bf16
		 * tokens, which the grouped linear casts itself
		 * (TE grouped_linear.py: "inputmats =
		 * tex.split_quantize(inp_view, m_splits,
		 * input_quantizers)"), a kernel of its own.
		 * A frozen weight (LoRA's base) needs no wgrad, so the
		 * input's cast writes no transpose: TE 1.8's _Linear
		 * (NeMo 24.07's) casts with fp8_cast_transpose_fused only
		 * "and is_grad_enabled and weight.requires_grad", else
		 * cast_to_fp8 ("FP8 input for forward"); later TE sets
		 * the quantizer's columnwise usage from
		 * "backward_needs_input = is_grad_enabled and
		 * weight.requires_grad", the same test.  dY's cast keeps
		 * its transpose (TE 1.8 grad_output_preprocess: "cast,
		 * transpose, bgrad fused", whatever the weight). */
		double in = o->m * o->batch * o->k;
		/* no transposed copy where the GEMMs take non-TN (ntn) */
		double tr = wgrad_gemm(k, o) && !ntn ? 1.0 : 0.0;
		double dtr = ntn ? 0.0 : 1.0;
		double outv = o->m * o->batch * o->n;
		double fused = strcmp(o->name, "qkv") == 0 ||
			strcmp(o->name, "mlp_up") == 0;
		double amax = k->fp8_current ? k->A : 0.0;
		/* A fused stack's LoRA adapter on a norm-fused linear
		 * reads the norm's output in 16 bits: NeMo 24.07 sets
		 * "self.linear_qkv.return_layernorm_output = True  # need
		 * layernorm output for lora" (and linear_fc1's, mcore_
		 * mixins.py), and TE 1.8's _LayerNormLinear then writes the
		 * norm in the activation dtype ("ln_out_dtype = torch.uint8
		 * if (fp8 and not return_layernorm_output) else
		 * inputmat.dtype") and casts it apart ("If residual
		 * connection is after LN, we need `ln_out_return` tensor in
		 * higher precision, this comes at the cost of an extra fp8
		 * cast": tex.cast_to_fp8) -- the cast of a plain Linear's
		 * input, one kernel more.  Delayed scaling only (TE 1.8's
		 * recipe; the later quantizers' norms already write 16
		 * bits above). */
		int lnret = fused > 0 && !eager && (tg & lora_bit(o->name)) &&
			!k->fp8_current && !k->fp8_block;

		/* the module's quantizing calls: one, or an expert's
		 * each but with delayed scaling's fused cast */
		double calls = !eager && o->batch > 1.0 && !fm_up &&
			!fm_down && (k->fp8_current || k->fp8_block) &&
			(strcmp(o->name, "moe_up") == 0 ||
			 strcmp(o->name, "moe_down") == 0) ? o->batch : 1.0;
		/* a block-scaled cast to both copies (MXFP8_BOTH_EXTRA):
		 * the input's unless frozen, dY's always */
		double mx = k->fp8_block && tr > 0 ? MXFP8_BOTH_EXTRA :
			0.0;

		/* the fused grouped MLP's fc2 input and fc1 dY come
		 * cast from the epilogues (FUSED_MLP_FWD_B) */
		if (!fm_down)
			t += t_mem(e, k->half, in * (!fused || lnret ?
				k->A + 1.0 + tr + amax + mx :
				k->fp8_current || k->fp8_block ?
				k->A + 1.0 + tr + mx : 1.0));
		if (!fm_up)
			tb_ += t_mem(e, k->half, outv * (k->A + 1.0 + dtr + amax +
				(k->fp8_block ? MXFP8_BOTH_EXTRA : 0.0)));
		if (!eager) {
			*nk += (fused ? TE_FP8_LN_FWD_HOST :
				TE_FP8_FWD_HOST) + (lnret ? 1.0 : 0.0) +
				(calls - 1.0) * TE_FP8_EXPERT_HOST;
			*nb += (fused ? TE_FP8_LN_BWD_HOST :
				TE_FP8_BWD_HOST) +
				(calls - 1.0) * TE_FP8_EXPERT_HOST;
		}
		/* an older Transformer Engine's MXFP8 grouped linear
		 * (te_mxfp8_grouped: mxfp8_grouped_legacy) */
		if (!eager && k->fp8_block && calls > 1.0 &&
		    k->mxfp8_grouped > 0) {
			double xf, xb, hf, hb;

			mxfp8_grouped_legacy(e, k, calls, in, outv,
					     wgrad_gemm(k, o), &xf, &xb, &hf,
					     &hb);
			t += xf;
			tb_ += xb;
			*nk += hf;
			*nb += hb;
		}
	}
	if (!eager && o->batch > 1.0 && !fm_up && !fm_down &&
	    (strcmp(o->name, "moe_up") == 0 ||
	     strcmp(o->name, "moe_down") == 0))
		expert_loop(e, k, o, p == GP_FP8 && fp8, &t, &tb_);
	if (k->quant > 0 && o->wclass == GP_W_LINEAR) {
		/* A 4-bit base is dequantised to 16 bits
		 * before each matmul (bitsandbytes
		 * dequantize_4bit): read the packed weight,
		 * write the 16-bit copy the GEMM then
		 * reads, forward and dgrad. */
		double dq = t_mem(e, k->half, o->weights *
				     (k->quant / 8.0 + 2.0));
		t += dq;
		tb_ += dq;
	}
	/* addmm_bias: a biased linear as PyTorch's addmm ran it before
	 * the cuBLASLt bias epilogue (pytorch PR #72148, February 2022,
	 * "use cublas lt interface for bias fusion": on V100 an fp16
	 * linear with bias 21.4 -> 23.5 TF/s at 512 rows).  Without it
	 * addmm_out_cuda_impl copies the expanded bias into the result
	 * ("at::native::copy_(result, *self_)" when beta != 0, aten/src/
	 * ATen/native/cuda/Blas.cpp) and the GEMM runs with beta 1,
	 * reading that copy back as C: the output written once more and
	 * read, 2A an output element (the bias itself, n elements, is
	 * noise) -- transformers' GPT-2 Conv1D calls it directly,
	 * "torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)".
	 * Backward, addmm's bias gradient is grad summed to the bias's
	 * shape (derivatives.yaml "self: maybe_multiply(grad, beta)",
	 * then sum_to): a reduction kernel reading dY, A an output
	 * element.  The layer's dense linears with a bias (model
	 * linear_bias: all four; qkv_bias: qkv), eager kernels only. */
	if (eager && k->addmm_bias && o->scope != GP_SCOPE_MOE &&
	    ((m->linear_bias && (strcmp(o->name, "o_proj") == 0 ||
				 strcmp(o->name, "mlp_up") == 0 ||
				 strcmp(o->name, "mlp_down") == 0)) ||
	     ((m->linear_bias || m->qkv_bias) &&
	      strcmp(o->name, "qkv") == 0))) {
		double out = o->m * o->batch * o->n;

		t += t_mem(e, k->half, 2.0 * out * k->A);
		tb_ += t_mem(e, k->half, out * k->A);
		*nk += 1.0;
	}
	add_op(lc, o->name, t, tb_, 1, 0);
	/* Eager: q, k and v, gate and up (an expert's w1 and w3
	 * too), are linears of their own (priced here as the one
	 * GEMM of their shapes, launched apart). */
	/* (the router's gating GEMM is Megatron-Core's own autograd
	 * Function, RouterGatingLinearFunction, not a TE module) */
	if (k->te_modules && strcmp(o->name, "moe_router") != 0)
		*nb += strcmp(o->name, "qkv") == 0 ||
			strcmp(o->name, "mlp_up") == 0 ? TE_LN_BWD_HOST :
			TE_BWD_HOST;
	*nk += !eager ? (double)np : strcmp(o->name, "qkv") == 0 ?
		3.0 : (strcmp(o->name, "mlp_up") == 0 ||
		       strcmp(o->name, "moe_up") == 0) &&
		m->ffn_gated ? 2.0 : 1.0;
	/* MLA's projections are four Transformer Engine modules where the
	 * op list has one norm-fused qkv (mla_te_modules). */
	if (!eager && k->te_modules && strcmp(o->name, "qkv") == 0)
		mla_te_modules(m, p == GP_FP8 && fp8, nk, nb);
	if (strcmp(o->name, "o_proj") == 0)
		*o_k = o->k;
	/* in and out widths of this GPU's slice */
	if (tg & lora_bit(o->name)) {
		unsigned b = tg & lora_bit(o->name);
		/* The adapted matrices of this op (q, k, v; gate, up). */
		double nd = (double)((b & GP_LORA_Q) != 0) +
			((b & GP_LORA_K) != 0) + ((b & GP_LORA_V) != 0) +
			((b & GP_LORA_GATE) != 0 && m->ffn_gated) +
			((b & GP_LORA_UP) != 0) + ((b & GP_LORA_O) != 0) +
			((b & GP_LORA_DOWN) != 0);

		if (k->lora_merged) {
			/* one merge GEMM a weight (lora_merge_costs) */
			lora_merge_costs(e, k, o, lc);
			*nk += 1.0;
		} else {
			lora_costs(e, k, o->k, o->n, nd, lc);
			*nk += eager ? nd * (EAGER_LORA_OPS -
					     (k->lora_dropout ? 0.0 : 1.0)) :
				FUSED_LORA_OPS;
		}
	}
}

/* Megatron-Core's MoE layer beyond its router GEMM and expert GEMMs: the
 * kernels the host launches from Python in the forward of one layer with
 * expert parallelism (the alltoall token dispatcher, dropless, core
 * v0.13.0, with moe_permute_fusion as verl's and Megatron-Bridge's
 * recipes set it), counted in transformer/moe: topk_softmax_with_capacity
 * 10 (score function and its cast, topk, the probs scattered into a
 * zeros_like, the routing map's zeros_like, int, scatter, bool, its
 * sum) and the router input's fp32 cast 1; the dispatcher's preprocess
 * 8 (routing_map.sum, long, the input splits' sum, the all-gather of
 * the counts over TP x EP, the local experts' slice made contiguous and
 * three sums), its five non-blocking copies of the splits and counts to
 * the host, the fused permute 1, the all_to_all calls 3 (the tokens and
 * their probs out, the tokens back), the fused chunk sorts before and
 * after the experts 2, the activation's probs multiply 1, the fused
 * unpermute 1: 32 more than the layer's op list counts.  The dispatcher
 * waits for the splits on the host before its all-to-all ("A
 * synchronization is needed before expert parallel AlltoAll communication
 * to get the input_splits and output_splits CPU values",
 * token_dispatcher.py), so the host cannot run ahead of a layer and the
 * forward costs the slower of the two (layer_extras' rule).  The grouped
 * GEMMs' per-expert launches are TE_EXPERT_GEMM's. */
#define MOE_DISPATCH_OPS 32.0

/* The same dispatcher without moe_permute_fusion (unfused_permute:
 * NeMo RL's grpo_math_1B.yaml sets "moe_permute_fusion: false" at
 * v0.4.0 to v0.6.0, and its Qwen3-30B-A3B performance recipes inherit
 * it) runs Megatron-Core's PyTorch fallbacks (core_v0.15.0
 * transformer/moe/moe_utils.py): permute() with the router's
 * probabilities is routing_map.bool().T.contiguous(), an arange
 * expanded over the experts, masked_select of the token indices and of
 * probs.T.contiguous(), and tokens.index_select -- 6 calls where the
 * fused permute is 1; sort_chunks_by_idxs() torch.split()s the rows by
 * their counts and torch.cat()s them in the local experts' order, for
 * the tokens and the probabilities before the experts and the tokens
 * after -- 3 calls where the fused sorts are 2; unpermute() without
 * probabilities is torch.zeros and scatter_add_ -- 2 where the fused is
 * 1; and the dispatcher's host copies take the per-expert counts too
 * ("if self.num_local_experts > 1 and not self.config.
 * moe_permute_fusion", token_dispatcher.py) -- 1.  8 more than
 * MOE_DISPATCH_OPS.  Each masked_select also waits for the GPU (its
 * output size), before the dispatcher's own wait: layer_extras' rule
 * already has the host unable to run ahead of the layer, so these
 * waits add nothing here -- a lower bound, as is the host's per-chunk
 * work in split and cat (tp x ep x local experts chunks), for which no
 * measured figure was found. */
#define MOE_UNFUSED_PERMUTE_OPS 8.0

/* Of those, the ones in the stretch after the dispatcher's host wait
 * (MOE_A2A_POST_OPS' stretch, where the fused permute and the sort
 * before the experts are): permute()'s 5 more and the probabilities'
 * split-and-cat 1 more.  The unpermute's after the experts and the
 * counts' host copy before the wait are not in it. */
#define MOE_UNFUSED_POST_OPS 6.0

/* The flex token dispatcher with HybridEP (core at Megatron-Bridge
 * 25.11's pin, token_dispatcher.py MoEFlexTokenDispatcher and
 * _HybridEPManager: "Permute tokens for communication, perform
 * all-to-all communication, and permute tokens for experts in single
 * step"): the router's 11 of MOE_DISPATCH_OPS as above, then the
 * routing map and probs expanded over the TP x EP domain and made
 * contiguous 2, the probs' fp32 cast 1, one hybrid_ep_dispatch call,
 * tokens_per_expert.sum() 1, one hybrid_ep_combine call and the
 * activation's probs multiply 1: 18.  Its dispatch still waits on the
 * host for the received count ("-1 means no up-bound, which will cause
 * a CPU sync"), so layer_extras' rule holds for it too. */
#define MOE_FLEX_OPS 18.0

/* Of those, the router's (topk_softmax_with_capacity 10 and the input's
 * fp32 cast 1), and the dispatcher's preprocess before its host wait:
 * alltoall's 8 (routing_map.sum, long, the splits' sum, the counts'
 * all-gather, the local slice and three sums), flex's 3 (the two
 * expanded copies and the probs' cast). */
/* MOE_ROUTER_OPS (11) is in train.h: moe_router_ops's floor. */
#define MOE_A2A_PREP_OPS 8.0
#define MOE_FLEX_PREP_OPS 3.0

/* A router that launches more than MOE_ROUTER_OPS (moe_router_ops, as the
 * run's source counts them).  DeepSeek-V3's TopKRouter -- sigmoid scores
 * with the expert bias, the group-limited top-k, the sequence aux loss
 * and its logging -- is, in Megatron-LM's GB200 guide (docs/discussions/
 * deepseek-v3-gb200-optimization, Nov 2025, sec. 2.1.4), "a large number
 * of element-wise operators, mainly for calculating the routing map ...
 * and for calculating and counting the aux loss. We fused some of these
 * kernels, reducing the total number of kernels in the router part from
 * 72 to 31" (moe_router_fusion, TE PR 1883).  Those beyond the ones
 * counted are bare tensor ops called from plain Python functions
 * (moe_utils.py's topk_softmax_with_capacity, group_limited_topk,
 * sequence_load_balancing_loss_func), each at GP_EAGER_BARE_OP_TIME's
 * share of a host op, as the RoPE functions' (ROPE_BARE_OP).  Check: the
 * guide's router fusion, 41 launches fewer a MoE layer's forward, gained
 * 10.5 TFLOP/s a GPU (529.55 -> 540.00, 1.9% of the step): about 0.6 ms
 * of its ~31 ms a MoE layer's pass (58 MoE layers over 8 stages of 64
 * micro-batches in a 15.2 s step), 15 us a launch, where the bare op is
 * 8.1 us x 2.75 on Grace = 22 us.  A full host op (68.3 us) would put
 * the fusion's gain at 2.8 ms a layer, 4.6 times the measured. */
static double router_extra_ops(const train_lkey *k)
{
	if (!(k->router_ops > 0))
		return 0.0;
	return (k->router_ops - MOE_ROUTER_OPS) * GP_EAGER_BARE_OP_TIME /
		GP_EAGER_OP_TIME;
}

/* Megatron-Core's Transformer Engine CUDA graphs (cuda_graph_impl
 * "transformer_engine", cuda_graph_scope; transformer_layer.py
 * _get_submodules_under_cudagraphs): "attn" captures input_layernorm
 * and self_attention, its capture (_te_cuda_graph_capture) running
 * _forward_attention with the residual add; "moe_router"
 * pre_mlp_layernorm and the router; "moe_preprocess" the dispatcher's
 * preprocess.  One capture per layer holds the scopes it has; its
 * replay (TE graph.py, Graphed.forward) copies each input whose
 * address moved into the static buffer and replays the graph: two host
 * calls where the captured kernels were launched one by one.  The
 * backward replays its own graph, but the backward's per-kernel host
 * time is not charged here anyway (layer_extras).  The dropless
 * dispatcher's host wait and the experts stay outside: "MoE models
 * with token-dropless propagation have limited CUDA graph support,
 * restricted to the dense modules only" (Megatron-Bridge performance
 * guide). */
#define GRAPH_REPLAY_OPS 2.0

/* Megatron-Core's full-iteration CUDA graph (cuda_graph_scope
 * full_iteration, cuda_graph_impl local; core/full_cuda_graph.py
 * FullCudaGraphWrapper: "Read all microbatch inputs from Dataloader and
 * copy to static buffers", then the captured forward_backward_func
 * replayed) captures every micro-batch's forward and backward of every
 * layer, the experts and the dispatcher included, so the host launches
 * none of their kernels one by one: one replay a step.  A capture can
 * hold no host synchronisation, so the dropless dispatcher's wait for the
 * token counts is gone too -- the runs that use it size each expert rank's
 * buffers from a capacity (moe_expert_rank_capacity_factor with
 * moe_paged_stash: "Tokens exceeding this budget will be dropped", none
 * under forced balance) and leave the counts on the device.  What stays:
 * each kernel's GPU-side gap (the graph-launch figure every training
 * kernel already pays, train_price.c) -- so the layer's host wait, both
 * ways, is none (layer_extras). */

/* Transformer Engine's GroupedLinear, which Megatron-Core's TEGroupedMLP
 * runs the experts' two linears on, issues one cuBLASLt GEMM per local
 * expert: "The per-tensor NVFP4 grouped GEMM currently runs as a
 * per-expert loop of cuBLASLt GEMMs across multiple CUDA streams" (TE PR
 * #3134), and its maintainers put the gap between the GEMMs' and the
 * layer's time on the host: "It's the CPU overheads of PyTorch ops, such
 * as torch.split(), and torch.empty() (2x num_gemms calls)" (TE issue
 * #1499).  PR #3134's benchmark (SM100, benchmark_grouped_linear.py)
 * times that loop for 8 experts of 128 tokens (N = K = 2048), whose
 * kernels do about 9 GFLOP -- microseconds of work -- at 0.267 ms,
 * "PURE ... times only the GEMM": 33.4 us an expert's GEMM.  Host time,
 * scaled with the host (host_op_time against GP_EAGER_OP_TIME).  The
 * forward launches the up and down GEMM of each expert its tokens reach;
 * the backward twice as many (dgrad and wgrad). */
#define TE_EXPERT_GEMM (0.267e-3 / 8.0)

/* The alltoall token dispatcher's own passes over the tokens, beside the
 * all-to-alls (Megatron-Core token_dispatcher.py at Megatron-Bridge
 * 25.11's pin, MoEAlltoAllTokenDispatcher, moe_permute_fusion): each
 * is a fused memory-bound kernel on the bf16 rows (Transformer Engine's
 * moe_permute, moe_sort_chunks_by_index, moe_unpermute).  Forward:
 * "Permutation 1: input to AlltoAll input" reads the u = Tn h A local
 * tokens once and writes their k copies (us = k u), "Permutation 2:
 * Sort tokens by local expert" (when a rank holds more than one local
 * expert) reads and writes the received rows ur, "Unpermutation 2:
 * Unsort tokens by local expert" the same after the experts, and
 * "Unpermutation 1: AlltoAll output to output" reads the us copies and
 * writes their sums u (the router's probabilities multiply inside the
 * experts' activation, so the unpermute carries none).  The backward
 * is each kernel's reverse, the same bytes: 2 u + 2 us + 4 ur.  The
 * flex dispatcher (HybridEP) does these inside its dispatch and combine
 * kernels ("permute tokens for communication, perform all-to-all
 * communication, and permute tokens for experts in single step") and
 * the all-gather dispatcher is priced apart (layer_comm).  Unfused
 * (unfused_permute, MOE_UNFUSED_PERMUTE_OPS' functions): permutation
 * 1's index_select reads the us gathered rows where the fused kernel
 * reads the u tokens (us - u more), and unpermutation 1 zero-fills the
 * u rows and scatter_add_s the us rows into them, reading and writing
 * the output per added row (u + 3 us where the fused reads us and
 * writes u: 2 us more); the backward's gather and index_add the same
 * in reverse: 3 us - u more each way.  The chunk sorts' torch.cat
 * moves what the fused sorts move.  Two of the unfused passes add with
 * atomics, one per element: the forward's scatter_add_ of the us rows
 * into the u outputs (moe_utils.py unpermute: "output_tokens.
 * scatter_add_(0, sorted_indices.unsqueeze(1).expand(-1, hidden),
 * permuted_tokens)", index_add_ under deterministic algorithms -- the
 * same in core_r0.12.0 to main) and the backward of permute()'s
 * "tokens.index_select(0, sorted_indices)", which PyTorch runs as
 * index_add_ of the us gradient rows into u zeros.  Both are PyTorch's
 * element-wise atomic kernels (fastAtomicAdd) in the releases these runs
 * use: "the serial atomicAdd stall that limits both the existing
 * scatter_add and index_add" (PyTorch PR #182675, May 2026, whose
 * TMA-reduce replacement postdates them).  ATOMIC_SCATTER_SLOWDOWN is
 * that stall, measured: DeepLink-org/DLBlas PR #66 runs grouped_gemm's
 * tests/test_permuteTopK.py benchmark (8192 tokens, hidden 4096, top 8,
 * fp16, a Hopper card: its fused kernel moves the 512 MiB of copies and
 * 64 MiB of tokens in 0.207 ms, 2.9 TB/s) -- "pytorch bwd: 2.304 ms"
 * for the backward of that test's "tokens.index_select(0, sorted_indices
 * // expand_factor)", i.e. index_add_ of the us rows into u, against
 * "cuda bwd: 0.207 ms" for a kernel streaming the same rows without
 * atomics: 11.1x the streaming time of us + u (fp32 in the same table,
 * 1.968 ms for twice the bytes, shows the element count, not the bytes,
 * binding).  scatter_add_'s kernel adds the same way (fastAtomicAdd per
 * element), so each of the two passes takes ATOMIC_SCATTER_SLOWDOWN - 1
 * times its rows' streaming time more than their bytes alone.  Returns
 * the forward seconds of the passes before the experts: half of the
 * fused passes' (permutation 1 and the sort), and of the unfused ones'
 * surplus index_select's us - u share (the scatter_add_ is after the
 * experts). */
#define ATOMIC_SCATTER_SLOWDOWN (2.304 / 0.207)

/* Transformer Engine's fused permute before its PR #1927 ("Optimize the
 * performance of permute fusion kernels", merged 2025-07-14 as dc97cc9,
 * first in v2.6; legacy_permute), priced from what its kernels do
 * (transformer_engine/pytorch/triton/permutation.py at bee4649, the same
 * at v2.5).  make_row_id_map builds "row_id_map = torch.empty((
 * num_experts, num_tokens), dtype=torch.int64)" -- an E x T map of int64,
 * -1 where a token skips an expert -- and _permute_kernel runs "grid =
 * (num_tokens,)", one program a token, that walks its hidden row in
 * blocks ("while cur_pos < hidden_size", BLOCK_SIZE autotuned over 64 to
 * 1024) and, for each block, "for expert_idx in range(num_experts):
 * dst_row = tl.load(row_id_map_ptr + expert_idx * num_tokens + pid); if
 * dst_row != -1: tl.store(...)"; _unpermute_kernel the same loop, with
 * "inp = tl.load(input_ptr + input_off)" of each routed row feeding the
 * accumulator; each kernel's backward is the other.  The kernels after
 * the PR run "grid = lambda META: (num_tokens, triton.cdiv(hidden_size,
 * META["BLOCK_SIZE"]))" over a (T, 2E + 1) int32 map that lists each
 * token's n_routed rows first ("for idx in tl.range(n_routed)"): k loads,
 * not E, and the rows' bytes alone -- the fused time this file prices.
 *
 * What the old loop costs.  Bytes: the map's E x 8 B a token against the
 * token's h x 2 B read and k h x 2 B written (256 experts, top 8, h 7168:
 * 2 KiB against 126 KiB, 1.6%) -- no bound.  Latency: each iteration's
 * branch waits on its load (num_experts is a run-time argument, so the
 * loop is not unrolled, and a scalar load that feeds an scf.if is not
 * pipelined), so a program runs ceil(h / 1024) x E dependent loads in a
 * row (the autotuner takes 1024, the fewest blocks of the loop), plus k
 * more in the unpermute (a routed row's load feeding its add) and k in
 * the permute (the first block's probs load feeding its store).  Each is
 * an L2 hit: pass 2 of make_row_id_map has just written the map (E T 8 B,
 * 4 to 16 MiB here, inside a 50 MB or 126 MB L2), and L1 does not keep
 * it between blocks -- a program's E loads touch E 128-byte lines (its
 * token's column, T x 8 B apart), 32 KiB at 256 experts, 16 of them on an
 * SM (below) 512 KiB against at most 256 KiB of L1.  TE_LOOP_LOAD_S is
 * that hit: Hopper's L2 "near hit" 258.0 and "far hit" 414.1 cycles (Luo
 * et al., "Dissecting the NVIDIA Hopper Architecture through
 * Microbenchmarking and Multiple Level Analysis", arXiv:2501.12084,
 * Table 4; the map's lines fall in both partitions, so their mean, 336
 * cycles) at the parts' 1.98 GHz maximum SM clock: 170 ns; Chips and
 * Cheese measure B200's at "~150 ns" ("Nvidia's B200: Keeping the CUDA
 * Juggernaut Rolling"), within 12%.  A clock held lower under the power
 * cap lengthens it in proportion (not priced).  Programs in flight:
 * Triton's default of 4 warps a program (triton.Config's num_warps=4;
 * the autotune configs set none) against 64 resident warps an SM
 * (compute capability 9.0 and 10.0, CUDA C++ Programming Guide's
 * technical specifications), TE_LOOP_CTAS_SM = 16 programs an SM, so T
 * tokens run in ceil(T / (16 SMs)) waves of equal programs.  A kernel
 * then takes the longer of its bytes' streaming time (map included) and
 * waves x loads x TE_LOOP_LOAD_S (and its fill).  Check against Megatron-LM's
 * DeepSeek-V3 GB200 guide (docs/discussions/deepseek-v3-gb200-
 * optimization, 2.1.1: "TE PR 1927 significantly improves performance
 * when top-k is much smaller than the number of experts (e.g.,
 * DeepSeek-v3's 256 experts with top-8), with up to a 10x unit
 * speedup"), not fitted to it: the guide's 4096 tokens a rank on a GB200
 * GPU (148 SMs, 2 waves), h 7168: 2 x (7 x 256 + 8) x 170 ns = 611 us
 * against the fused kernel's 82 us, 7.5x (6.8 to 7.7x over 2k to 16k
 * tokens; at B200's 150 ns, 6.6x) -- the guide's "up to 10x" within
 * 25%.  At Llama 4 Maverick's 128 experts, top 1, h 5120, a token's rows
 * are 6.3x fewer bytes for 2.8x fewer loads, so the loop weighs more (8192
 * tokens on a GB200 GPU, 4 waves: 15x); at Qwen3-235B's 128, top 8, h
 * 4096, 2048 tokens on an H100 (one wave) the loop's 88 us is near the
 * rows' 58 us (1.5x), and DeepSeek-V3's 2048 on an H100 3.1x.  DeepEP's
 * local permute maps the local experts only and is not this kernel's
 * case; the chunk sorts loop over no experts and keep their time. */
#define TE_LOOP_LOAD_S (((258.0 + 414.1) / 2.0) / 1.98e9)
#define TE_LOOP_CTAS_SM 16.0
#define TE_LOOP_BLOCK 1024.0

/* The surplus of one pre-#1927 kernel over the fused one (seconds): a
 * program of `loads` dependent loads a token, T tokens, moving `bytes`
 * of rows and the map's E T 8 B.  0 where the SMs are unknown (no
 * waves to count). */
static double te_loop_surplus(const tenv *e, gp_dtype p, double T,
			      double E, double loads, double bytes)
{
	double P = e->d->sms * TE_LOOP_CTAS_SM, tf, tl, tm;

	if (!(P > 0.0) || !(T > 0.0))
		return 0.0;
	tf = t_mem(e, p, bytes);
	tm = t_mem(e, p, bytes + E * T * 8.0);
	/* the loop's waves, and the fill and launch every kernel has */
	tl = ceil(T / P) * loads * TE_LOOP_LOAD_S + t_mem(e, p, 1.0);
	return (tl > tm ? tl : tm) - tf;
}

static double moe_permute_costs(tenv *e, const train_lkey *k,
				train_lcost *lc)
{
	const gp_model *m = e->m;
	double El = m->moe.experts / k->ep;
	double cf = k->capacity_factor > 0 ? k->capacity_factor : 1.0;
	double sk = k->skew > 1.0 ? k->skew : 1.0;
	double u = k->Tn * m->hidden * k->A, us = u * m->moe.top_k;
	/* the received rows: the dispatch padded to the capacity factor,
	 * to the hottest rank's skew, gathered over etp as layer_comm's */
	double ur = us * cf * sk * (k->etp > 1 && (k->sp || k->etp > k->tp) ?
				    k->etp : 1.0);
	double fused = 2.0 * u + 2.0 * us + (El > 1.0 ? 4.0 * ur : 0.0);
	double more = k->unfused_permute ? 3.0 * us - u : 0.0;
	double tf = t_mem(e, k->half, fused), t = t_mem(e, k->half, fused + more);
	/* the atomic pass's surplus: its rows' streaming time (without a
	 * second launch and fill) times the stall beyond it */
	double atom = k->unfused_permute ? (ATOMIC_SCATTER_SLOWDOWN - 1.0) *
		(t_mem(e, k->half, fused + more + us + u) - t) : 0.0;
	/* the pre-#1927 kernels' surplus (te_loop_surplus): the permute's
	 * ceil(h / 1024) E loads a token and k probs loads, the unpermute's
	 * k more row loads; forward and backward run one of each, and the
	 * permute is the forward's before the experts */
	double lp = 0.0, lu = 0.0;

	if (k->legacy_permute && !k->unfused_permute) {
		double E = m->moe.experts, kk = m->moe.top_k;
		double nb = ceil(m->hidden / TE_LOOP_BLOCK);

		lp = te_loop_surplus(e, k->half, k->Tn, E, nb * E + kk, u + us);
		lu = te_loop_surplus(e, k->half, k->Tn, E, nb * (E + kk),
				     u + us);
	}

	add_op(lc, "moe_permute", t + atom + lp + lu, t + atom + lp + lu,
	       0, 0);
	return 0.5 * tf + lp +
		(more > 0 ? (t - tf) * (us - u) / more : 0.0);
}

/* Megatron-Core's all-gather dispatcher before moe_permute_fusion
 * (unfused_permute with the allgather dispatcher): core_v0.6.0's
 * MoEAllGatherTokenDispatcher (transformer/moe/token_dispatcher.py,
 * unchanged from Megatron-LM main of 2024-03-27) moves the token rows
 * with PyTorch's element-wise gather and scatter over index maps
 * expanded to the hidden width.  token_permutation: "global_local_map
 * = global_local_mask.nonzero()[:, 0]", "self.global_local_map =
 * global_local_map.view(-1, 1).expand(-1, hidden_states.shape[-1])",
 * "local_hidden_states = torch.gather(global_hidden_states, 0,
 * self.global_local_map)" (one row a token-expert pair of the local
 * experts), "self.indices = torch.argsort(local_indices, dim=0)",
 * "permuted_local_hidden_states = torch.gather(local_hidden_states, 0,
 * self.indices)"; token_unpermutation: "unpermuted_local_hidden =
 * torch.zeros_like(hidden_states)", "unpermuted_local_hidden.scatter(0,
 * self.indices, hidden_states)", "unpermuted_local_hidden *
 * scores.view(-1, 1)" (top_k > 1), "unpermuted_global_hidden =
 * torch.zeros(global_hidden_shape, ...)", "unpermuted_global_hidden.
 * scatter_add(0, self.global_local_map, unpermuted_local_hidden)" --
 * the gathered path when "self.config.sequence_parallel or (self.
 * config.expert_model_parallel_size > 1)" (all tokens of the TP x EP
 * group gathered first), the same passes over the rank's own tokens
 * otherwise (top_k > 1).  With r the pair rows' bytes and g the
 * gathered tokens' (h 16-bit wide): forward the two gathers 2r each,
 * zeros_like r, the scatter 2r, the scores' multiply 2r, the global
 * zeros g and the scatter_add's rows r + g with atomics; backward
 * (autograd's formulas) the scatter_add's and the scatter's gradients
 * are gathers (2r each), the multiply's 2r and the scores' gradient
 * read 2r, and each gather's gradient is zeros and a scatter_add of its
 * rows, atomic: r + r and r + g.  The atomic passes take
 * ATOMIC_SCATTER_SLOWDOWN times their rows' streaming time, as the
 * alltoall dispatcher's scatter_add_ (above).  Returns the forward
 * seconds before the experts (the two gathers). */
static double moe_allgather_unfused_costs(tenv *e, const train_lkey *k,
					  train_lcost *lc)
{
	const gp_model *m = e->m;
	int gath = k->sp || k->ep > 1;
	double sk = k->skew > 1.0 ? k->skew : 1.0;
	double G = k->Tn * (gath ? (double)k->tp * k->ep : 1.0);
	double g = G * m->hidden * k->A;
	double r = g * m->moe.top_k / k->ep * sk;
	double F = 9.0 * r + g, B = 9.0 * r + g;
	double af = r + g, ab = 3.0 * r + g;
	double tf = t_mem(e, k->half, F + af), tb = t_mem(e, k->half, B + ab);
	double xf = (ATOMIC_SCATTER_SLOWDOWN - 1.0) *
		(tf - t_mem(e, k->half, F));
	double xb = (ATOMIC_SCATTER_SLOWDOWN - 1.0) *
		(tb - t_mem(e, k->half, B));

	add_op(lc, "moe_permute", tf + xf, tb + xb, 0, 0);
	return t_mem(e, k->half, 4.0 * r);
}

/* DeepSpeed's MOELayer (deepspeed/moe/sharded_moe.py, adapted from
 * fairscale's moe_layer.py and top2gate.py after GShard's Algorithm 2;
 * "USE_EINSUM = True", the non-einsum branch the same torch.matmul)
 * moves tokens with dense GEMMs over a one-hot mask, not by a permute.
 * The gate (top1gating, top2gating) builds, for the S tokens of the
 * rank's micro-batch (reshaped_input = input[0].reshape(-1, d_model)),
 * capacity C = "torch.ceil((num_tokens / num_experts) *
 * capacity_factor)" (top2gating with "capacity_factor * 2": k S cf / E
 * in general), "combine_weights = einsum("se,sc->sec", gates,
 * locations1_sc)" in fp32 ("everything is in fp32 in this function")
 * and "dispatch_mask = combine_weights.bool()": S x E x C elements each.
 * MOELayer.forward then runs "einsum("sec,sm->ecm",
 * dispatch_mask.type_as(input[0]), reshaped_input)" before the
 * all-to-all and "einsum("sec,ecm->sm", combine_weights.type_as(
 * input[0]), expert_output)" after it: two GEMMs of 2 S (E C) M FLOPs,
 * E C = k S cf, as torch.matmul lays them out -- (EC x S)(S x M) and
 * (S x EC)(EC x M).  Backward: the dispatch's input gradient (S x EC)(EC
 * x M) only (the mask is cast from a bool, a constant), the combine's
 * two, expert_output's (EC x S)(S x M) and combine_weights' (S x M)(M x
 * EC) (the gates' gradient flows through it): three GEMMs.  The mask
 * passes, memory-bound over the S E C elements: forward the outer
 * product's fp32 write 4, .bool() 4 + 1, the two type_as casts 1 + A and
 * 4 + A bytes an element; backward combine_weights' cast back to fp32 A
 * + 4 and the outer product's gradient to the gates, its fp32 read 4.
 * Returns the forward seconds before the experts (the gate's passes and
 * the dispatch GEMM). */
static double moe_einsum_costs(tenv *e, const train_lkey *k,
			       train_lcost *lc)
{
	const gp_model *m = e->m;
	double cf = k->capacity_factor > 0 ? k->capacity_factor : 1.0;
	double S = k->T, M = m->hidden, A = k->A;
	double C = ceil(m->moe.top_k * S * cf / m->moe.experts);
	double EC = m->moe.experts * C, X = S * EC;
	double fl = 2.0 * S * EC * M;
	/* operand and result bytes of each GEMM: the S x EC mask, the S x
	 * M tokens and the EC x M expert rows, A bytes an element */
	double by = (X + S * M + EC * M) * A;
	double disp = train_t_gemm(e, fl, by, EC, M, S, 1, k->half, 0);
	double comb = train_t_gemm(e, fl, by, S, M, EC, 1, k->half, 0);
	double gf = t_mem(e, k->half, X * (14.0 + 2.0 * A));
	double gb = t_mem(e, k->half, X * (8.0 + A));
	double f = gf + disp + comb;
	double b = gb + train_t_gemm(e, fl, by, S, M, EC, 1, k->half, 0) +
		train_t_gemm(e, fl, by, EC, M, S, 1, k->half, 0) +
		train_t_gemm(e, fl, by, S, EC, M, 1, k->half, 0);

	add_op(lc, "moe_einsum", f, b, 1, 0);
	return gf + disp;
}

static double flex_copies(const train_lkey *k, const gp_model *m,
			  double parts);

/* DeepEP's flex dispatcher leaves the local permute to Megatron-Core.
 * DeepEP's dispatch delivers each token once to each rank holding any
 * of its experts (flex_ranks), not once per expert: "The Flex Dispatcher
 * of DeepEP or HybridEP fuses the global permute into the communication
 * kernel, eliminating the need to explicitly copy the tokens top-k
 * times, but still requires a permute kernel to copy and rearrange the
 * tokens distributed to different local experts after EP communication"
 * (Megatron-LM docs/discussions/deepseek-v3-gb200-optimization, sec.
 * 2.1.1, Nov 2025).  Megatron-Core's _DeepepManager (token_dispatcher.py,
 * at 3c1b98e and d98e8a6) does it in get_permuted_hidden_states_by_
 * experts -- fused_indices_to_multihot (or _indices_to_multihot) of the
 * received indices, then "permute(hidden_states, self.dispatched_
 * routing_map, probs=..., num_out_tokens=self.tokens_per_expert.sum().
 * item(), fused=self.permute_fusion)" -- and undoes it in get_restored_
 * hidden_states_by_experts ("unpermute(hidden_states, self.reversed_
 * mapping_for_combine, ...)") before the combine: Transformer Engine's
 * fused moe_permute and moe_unpermute, memory-bound passes over the bf16
 * rows.  Forward: the permute reads the rr received rows and writes
 * their ur expert copies, the unpermute reads the ur and writes rr sums;
 * the backward is each kernel's reverse, the same bytes: 2 (rr + ur)
 * each way.  HybridEP does this inside its dispatch and combine
 * (_HybridEPManager.get_permuted_hidden_states_by_experts returns the
 * dispatch's output as it is: "we choose to fuse this D2D copy with the
 * subsequent permute", the guide's sec. 2.5), so it has none.  Host:
 * the multihot, the permute and the unpermute, one launch each, the
 * first two after the dispatcher's wait.  Returns the forward seconds
 * before the experts (the permute: half). */
#define MOE_DEEPEP_PERMUTE_OPS 3.0
#define MOE_DEEPEP_POST_OPS 2.0

static double moe_deepep_permute_costs(tenv *e, const train_lkey *k,
				       train_lcost *lc)
{
	const gp_model *m = e->m;
	double cf = k->capacity_factor > 0 ? k->capacity_factor : 1.0;
	double sk = k->skew > 1.0 ? k->skew : 1.0;
	double row = m->hidden * k->A * cf * sk;
	double rr = k->Tn * flex_copies(k, m, k->ep) * row;
	double ur = k->Tn * m->moe.top_k * row;
	double t = t_mem(e, k->half, 2.0 * (rr + ur));

	add_op(lc, "moe_permute", t, t, 0, 0);
	return 0.5 * t;
}

/* The dropless dispatchers' host wait (MOE_DISPATCH_OPS, MOE_FLEX_OPS)
 * splits a layer's forward: the host waits there until the GPU has run
 * everything before it, so it starts what follows with nothing queued
 * -- the all-to-all, the permute and the experts' casts and GEMMs, one
 * call per local expert (expert_loop, TE_EXPERT_GEMM,
 * TE_FP8_EXPERT_HOST) -- and the GPU runs each kernel of that stretch
 * as soon as the host has launched it.  Where the host's calls for the
 * experts outlast the GPU's work on them (many local experts of few
 * tokens each), the GPU waits through the stretch however much it has
 * to do later in the layer (the combine, the next attention): the slack
 * of the rest of the layer cannot be banked across the wait.  The pass
 * then takes at least the host's time up to the end of the experts plus
 * the GPU's time after them: its wait is at least the experts' host
 * time beyond their GPU time, not only the whole layer's host time
 * beyond the whole layer's GPU time (layer_extras).  The launches of
 * that stretch besides the experts' own: the alltoall dispatcher's fused
 * permute 1, its two all_to_all calls out (tokens, probs) 2, the chunk
 * sort before the experts 1 and the activation's probs multiply 1 (of
 * MOE_DISPATCH_OPS' 32; the sort, all-to-all and unpermute after the
 * experts 3 follow them); the flex dispatcher's tokens_per_expert.sum()
 * 1 and the probs multiply 1 (its dispatch call, whose received count
 * it waits for, comes before the wait).  The alltoall dispatcher's wait
 * comes before its dispatch all-to-all (the splits it needs), which then
 * runs while the host launches on; the flex dispatcher's after its
 * dispatch.  The backward waits nowhere (the splits are kept on the
 * host): its host runs ahead across the layers. */
#define MOE_A2A_POST_OPS 5.0
#define MOE_FLEX_POST_OPS 2.0

static void layer_comm(tenv *e, const train_lkey *k, int moe,
		       train_lcost *lc);

/* Megatron-Core's grouped MLP pads each expert's rows for its fp8 GEMMs
 * when the dispatcher hands them over unaligned (TEGroupedMLP.forward at
 * Megatron-Bridge 25.11's pin, experts.py: "permuted_local_hidden_states,
 * tokens_per_expert = self.quantization_padding(...)", the probabilities
 * the same, and after the down projection "output =
 * self.quantization_unpadding(output, actual_tokens_per_expert)").
 * Transformer Engine's Fp8Padding (v2.9 fp8_padding.py) rounds each
 * count up to 16 rows (32 for MXFP8) and, unless every count already is
 * a multiple ("# no padding needed"), copies the rows into the padded
 * buffer with one fused_multi_row_padding kernel; Fp8Unpadding copies
 * them back, and the backward runs the reverse copies
 * (fused_multi_row_unpadding for the input's gradient, the padding for
 * the output's).  Forced-balanced or learned routing leaves the counts
 * unaligned, so on the alltoall and allgather dispatchers each pass reads
 * and writes the received rows twice: 4 ur bytes where ur = the rows'
 * bytes as moe_permute_costs sizes them, plus the probabilities' copy (ur
 * / (h A) values, 4 B each at most: fp32 router probabilities).  What
 * avoids it is named in the option (moe_fp8_pad none): "It is suggested
 * to enable this for dropless training with FP8 precision when
 * num_local_experts > 1. This is a more efficient way to pad for FP8
 * which eliminates the explicit padding in the GroupedMLP layer"
 * (moe_router_padding_for_quantization, Megatron-Core's MoE README);
 * HybridEP's dispatch pads the rows itself (pad_multiple).  Each copy is
 * a Python module call (the autograd Function's backward too): one host
 * launch each way per copy.  The padded buffer is freed once the grouped
 * linear has cast it: nothing more is kept for the backward.
 *
 * The fused grouped MLP (fused_grouped_mlp, TEGroupedMLP under the op
 * fuser) runs the same copies: Megatron-Core core_v0.18.0 (ba7b5eb)
 * experts.py builds the padding for both paths ("align_size = 256 if
 * self._with_fused_impl else None; self.quantization_padding =
 * Fp8Padding(self.num_local_experts, align_size=align_size)"), and
 * _fused_forward calls it before the fused ops ("# Apply padding if
 * needed ... permuted_local_hidden_states, tokens_per_expert =
 * self.quantization_padding(...)", then "output =
 * self.quantization_unpadding(output, unpadded_tokens_per_expert)"),
 * skipped only where skip_routed_expert_padding holds (router padding
 * or HybridEP, moe_utils.py: "padding is already applied by the router
 * or the HybridEP dispatcher") -- the same cases moe_fp8_pad none and
 * the flex dispatcher already leave out.  Transformer Engine v2.16's
 * fused kernel (ops/fused/forward_grouped_mlp.py, 4220403) takes the
 * split sizes it is handed ("split_points = base_split_offsets[1:]",
 * passed as "padded_offsets"): the already padded counts, so it pads
 * nothing itself and the copy is Megatron-Core's, charged here whether
 * the MLP is fused or not.  Fp8Padding still copies nothing when every
 * count is already a multiple ("# no padding needed"); at 256 rows
 * that is rarer than at 32, so the copy is charged as always.  The
 * padded rows the expert GEMMs then multiply are theirs (gemm_costs,
 * MOE_FP8_ALIGN_FUSED). */
#define MOE_FP8_PAD_OPS 3.0

static void moe_fp8_pad_costs(tenv *e, const train_lkey *k, double *nk,
			      double *nb, train_lcost *lc)
{
	const gp_model *m = e->m;
	double cf = k->capacity_factor > 0 ? k->capacity_factor : 1.0;
	double sk = k->skew > 1.0 ? k->skew : 1.0;
	double ur = k->Tn * m->hidden * k->A * m->moe.top_k * cf * sk *
		(k->etp > 1 && (k->sp || k->etp > k->tp) ? k->etp : 1.0);
	double probs = ur / (m->hidden * k->A) * 2.0 * 4.0;
	double t = 2.0 * t_mem(e, k->half, 2.0 * ur) +
		t_mem(e, k->half, probs);

	add_op(lc, "moe_fp8_pad", t, t, 0, 0);
	*nk += MOE_FP8_PAD_OPS;
	*nb += MOE_FP8_PAD_OPS;
}

/* The unfused chunk sorts' host work per chunk (MOE_UNFUSED_PERMUTE_OPS'
 * sort_chunks_by_idxs: Megatron-Core moe_utils.py, core v0.13.0 to main,
 * "input = torch.split(input, split_sizes.tolist(), dim=0); output =
 * torch.cat([input[i] for i in sorted_idxs.tolist()], dim=0)", the
 * probabilities the same).  The alltoall dispatcher sorts the received
 * rows by local expert three times a forward when a rank holds more than
 * one (the tokens and their probabilities before the experts, the outputs
 * back after them), each over num_experts x tp_size chunks (token_
 * dispatcher.py: "input_chunk_idxs = torch.arange(self.num_experts *
 * self.tp_size, ...)", tp_size the expert TP group's) -- 128 for
 * Qwen3-30B-A3B at etp 1.  torch.split makes each chunk a view of the
 * input that autograd tracks: a C++ view op with autograd on a tensor
 * that requires grad takes 0.93 us a call (PyTorch issue #64407,
 * torch.utils.benchmark, my_test_view_op unboxed: "Median: 930.82 ns");
 * the backward's CatBackward narrows the gradient into the same chunks
 * without grad mode, a plain view: 0.58 us (PyTorch PR #61466, "x.view(-1)
 * ... Median: 582.78 ns").  Both measured on a benchmark host, scaled with
 * the job's host as TE_EXPERT_GEMM is (host_op_time / GP_EAGER_OP_TIME).
 * The cats' per-input work (128 inputs forward, the split's backward the
 * same) has no figure and is left out: a lower bound. */
#define SORT_VIEW_GRAD 0.93e-6
#define SORT_VIEW_PLAIN 0.58e-6

/* Seconds of host work one unfused chunk sort adds to a forward (*f) and
 * a backward (*b), 0 where the layer has none. */
static void sort_chunks_host(const tenv *e, const train_lkey *k, int moe,
			     double *f, double *b)
{
	double n = e->m->moe.experts * (k->etp > 1 ? k->etp : 1);
	double s = k->host_op_time / GP_EAGER_OP_TIME;

	*f = *b = 0.0;
	if (!moe || k->eager || k->ep <= 1 || k->ep_flex || k->ep_allgather ||
	    !k->unfused_permute || !(e->m->moe.experts / k->ep > 1.0))
		return;
	*f = n * SORT_VIEW_GRAD * s;
	*b = n * SORT_VIEW_PLAIN * s;
}

/* The Hugging Face modules' MoE blocks route and run their experts in
 * Python (transformers' MixtralSparseMoeBlock.forward, which the other
 * models' blocks copy).  Before the experts: the gate's linear (the
 * router op), then "F.softmax(router_logits, dim=1, dtype=torch.float)",
 * "torch.topk", the renormalising sum and "/=", ".to(hidden_states.dtype)",
 * the output's "torch.zeros" and "one_hot": HF_MOE_ROUTE_OPS launches.
 * Then per expert, "for expert_idx in range(self.num_experts)": "idx,
 * top_x = torch.where(expert_mask[expert_idx])", "hidden_states[None,
 * top_x]", the expert's MLP (its linears and activation: the expert ops'
 * own launches, each expert apart), "routing_weights[top_x, idx, None]"
 * and its multiply, and "final_hidden_states.index_add_":
 * HF_EXPERT_OPS launches beside the MLP's.  torch.where with the one
 * argument is torch.nonzero(as_tuple=True), and "When input is on CUDA,
 * torch.nonzero() causes host-device synchronization" (PyTorch's
 * torch.nonzero documentation): the host learns an expert's row count
 * only once the GPU has run everything launched before.  So the host
 * cannot launch ahead across the experts: each expert's stretch takes
 * the longer of its launches and its GPU work (begun once the host has
 * launched its first linear: HF_EXPERT_LEAD_OPS), the rest of the layer
 * the longer of its own two, and the forward (and its recompute) their
 * sum.  The backward needs no count on the host (the index ops'
 * gradients take the saved indices). */
#define HF_MOE_ROUTE_OPS 7.0
#define HF_EXPERT_OPS 5.0

/* The sync leaves the GPU's queue empty: an expert's GPU work starts in
 * earnest only when the host has launched its first linear.  From the
 * sync on the host runs torch.where's remaining launch, the gather
 * "hidden_states[None, top_x]" and the expert's w1 (MixtralBlockSparse
 * Top2MLP.forward: "self.act_fn(self.w1(hidden_states)) * self.w3(
 * hidden_states)"), and under DeepSpeed stage 3 the forward pre-hooks of
 * the expert module and of w1 before w1's launch (DS_Z3_MODULE_PRE_OPS,
 * DS_Z3_PARAM_PRE_OPS): the GPU idles that long (the gather's few
 * microseconds of work aside) before the expert's GEMMs, whose later
 * launches the host makes while the GPU runs the earlier ones. */
#define HF_EXPERT_LEAD_OPS 3.0

/* The expert loop's stretches, after each expert's torch.where sync:
 * each the longer of its host launches (he) and its GPU work, begun once
 * the host has launched its first linear (lead), ge the experts'
 * forward time at the balanced rows.  Padding of one pad id (pad_share p
 * of the tokens: a tokenizer padding every row to max_length, as the
 * DeepSpeedExamples DeepCompile benchmark tokenizes ag_news with
 * "padding='max_length'") enters the router as one token repeated and
 * goes to the same top-k experts: "all padding tokens are routed to a
 * singular expert" (PrimeIntellect-ai/prime-rl issue #1331, SFT on
 * padded rows; its fix, PR #1332, leaves out "the top-k routed experts"
 * as the "padding experts").  Routing is per token, so the rows stay T K
 * in all; what changes is how they fall on the loop's stretches: K
 * experts take the pads (p T rows each) beside their share of the rest,
 * the other El - K only the rest's, (1 - p) T K / E each.  An expert's
 * GPU work is a part its rows do not change -- its weights' read (the
 * gated MLP's three matrices, or two, streamed once) and the fill of
 * each of its nx kernels -- at most the balanced expert's g1, plus the
 * rest of g1 in proportion to its rows; an expert without rows runs its
 * kernels on none (their fills).  A stretch short of GPU work costs its
 * host time whatever its rows, so emptying El - K of them into K others
 * lengthens the loop: the pads do not cut the host's work, they move
 * the GPU's.  One rank with all experts
 * (ep 1, the Hugging Face modules); with fewer than K local experts the
 * balanced split stands. */
static double hf_expert_stretches(tenv *e, const train_lkey *k, double El,
				  double nx, double he, double lead,
				  double ge)
{
	const gp_model *m = e->m;
	double K = m->moe.top_k > 0 ? m->moe.top_k : 1.0;
	double p = k->pad_share, E = m->moe.experts, g1 = ge / El;
	double f = m->moe.ffn_hidden > 0 ? m->moe.ffn_hidden : m->ffn_hidden;
	double fill, w, gh, gc;

	if (!(p > 0) || k->ep > 1 || El < K || !(E > 0))
		return El * (he > lead + g1 ? he : lead + g1);
	/* a kernel's fill: t_mem of one byte */
	fill = t_mem(e, k->half, 1.0);
	w = t_mem(e, k->lin, (m->ffn_gated ? 3.0 : 2.0) * m->hidden * f *
		  k->wb) + (nx > 1.0 ? nx - 1.0 : 0.0) * fill;
	if (w > g1)
		w = g1;
	/* rows over the balanced expert's T K / E: a hot expert's
	 * p T + (1 - p) T K / E, a cold one's (1 - p) T K / E */
	gh = w + (g1 - w) * (p * E / K + 1.0 - p);
	gc = p < 1.0 ? w + (g1 - w) * (1.0 - p) : nx * fill;
	return K * (he > lead + gh ? he : lead + gh) +
		(El - K) * (he > lead + gc ? he : lead + gc);
}

/* The forward's index_add_ adds each of the expert's n h output
 * elements into final_hidden_states with an atomic: PyTorch 2.x's
 * index_add_cuda_impl (aten/src/ATen/native/cuda/Indexing.cu) launches
 * indexFuncSmallIndex / indexFuncLargeIndex with reduce_add, whose
 * ReduceAdd does "fastAtomicAdd(self_data_start, index, numel,
 * *src_data, true)" per element (the older index_add_cuda_: "Nondeter-
 * ministic because of atomicAdd usage") -- the "serial atomicAdd stall
 * that limits both the existing scatter_add and index_add" (PyTorch PR
 * #182675, whose replacement postdates these runs).  Its rate is the one
 * moe_permute_costs takes for Megatron's unfused permute, DLBlas PR
 * #66's index_add_ of 8192 x 8 rows into 8192 (hidden 4096, 16-bit, the
 * same kernel): 2.304 ms against 0.207 ms for streaming those rows and
 * the outputs, i.e. ATOMIC_SCATTER_SLOWDOWN times the streaming of 1 +
 * 1/8 elements per added one; the element count binds there (fp32,
 * twice the bytes, is no slower).  So an added element takes the
 * streaming time of HF_INDEX_ADD_STREAM of its own bytes (12.5), where a
 * plain pass reading the rows and the output's rows and writing them
 * would take 3.  That test adds 8 rows into each output row, where an
 * expert's index_add_ adds one (its top_x are distinct tokens): the same
 * per-element atomics, fewer of them on one address (so, if anything,
 * an upper bound). */
#define HF_INDEX_ADD_STREAM (ATOMIC_SCATTER_SLOWDOWN * (1.0 + 1.0 / 8.0))

/* The GPU work of that block beyond the gate and the experts' MLPs, in
 * the kernels PyTorch runs for it (memory-bound, each t_mem with its
 * fill), on T tokens of which each picks K of E experts: R = T K
 * dispatched rows over the El local experts, n = R / El each, h wide,
 * A bytes an activation element, the routing in fp32 (4 B) and int64
 * indices (8 B).
 * Forward, once: the softmax ("dtype=torch.float": read A E, write 4 E
 * a token), topk (read 4 E, write the K weights and their int64
 * indices), the renormalising sum and "/=", the cast back to A, the
 * output's "torch.zeros" (write A h) and one_hot (ATen's one_hot:
 * "at::zeros(shape, kLong)" then "scatter_(-1, self.unsqueeze(-1),
 * 1)": 8 K E written, then K ones).  Per expert: torch.where on its [K,
 * T] int64 mask row (read 8 K T, write two int64 indices a row); the
 * gather "hidden_states[None, top_x]" (read and write A h a row); the
 * routing weights' gather and the product with them (read and write A
 * h a row); "index_add_" (read the rows and the output's rows, write
 * them: 3 A h, but atomically: HF_INDEX_ADD_STREAM A h).  These per-expert kernels sit in the expert's stretch
 * between two torch.where syncs (*gx: their forward time, all experts).
 * Backward (autograd's formulas, PyTorch tools/autograd/
 * derivatives.yaml): index_add_'s gradient to its source is
 * "grad.index_select(dim, index)" (2 A h a row); the product's two,
 * grad x weights (2 A h) and grad x the expert's output summed over h
 * (3 A h, then read A h); and "index.Tensor": "index_backward(grad.
 * new_zeros_symint(self.sym_sizes(), ...), indices, grad)", which
 * FunctionsManual.cpp runs as "at::_index_put_impl_(zeros_like_self,
 * indices, grad, true, true)" -- a zero tensor as large as the whole
 * input, A h a token written per expert, then the expert's rows
 * accumulated into it (on CUDA a sort-based kernel for every
 * accumulating index_put_ until PyTorch PR #171381, December 2025: its
 * indices' sort is a few kernels of n int64 values, not counted; then
 * read the gradient and the rows, write them, 3 A h a row) -- its rows'
 * gradient being the sum of w1's and w3's input gradients, the two
 * linears sharing the gathered rows (read two, write one: 3 A h a row,
 * as eager_copies sums a dense gated MLP's).  Each expert's gather so
 * hands autograd a whole [T, h] gradient, and autograd's input buffer
 * sums the E of them
 * and the gate's into hidden_states' gradient: E adds of read two,
 * write one (3 A h a token each).  The routing's own gradients (the
 * cast, the sum and divide, topk's scatter into zeros, the softmax's)
 * are a few fp32 values a token.  So forward A h (1 + 16.5 K) a token
 * in streamed bytes (the atomic index_add_ 12.5 of it), backward A h (4
 * E + 14 K) gated: 34 and 60 A h for Mixtral (E 8, K 2), the E term
 * growing with the experts whatever their width. */
static void hf_moe_costs(tenv *e, const train_lkey *k, train_lcost *lc,
			 double *gx)
{
	const gp_model *m = e->m;
	double A = k->A, h = m->hidden, E = m->moe.experts;
	double K = m->moe.top_k, T = k->T;
	double El = E / (k->ep > 1 ? k->ep : 1.0), R = T * K * El / E;
	double n = R / El, f, fx, b, bx;
	gp_dtype p = k->half;

	/* softmax, topk, sum, divide, cast, zeros, one_hot's two */
	f = t_mem(e, p, T * (A + 4.0) * E) +
		t_mem(e, p, T * (4.0 * E + 12.0 * K)) +
		t_mem(e, p, T * (4.0 * K + 4.0)) +
		t_mem(e, p, T * (8.0 * K + 4.0)) +
		t_mem(e, p, T * (4.0 + A) * K) +
		t_mem(e, p, T * A * h) +
		t_mem(e, p, T * 8.0 * K * E) +
		t_mem(e, p, T * 16.0 * K);
	/* per expert: where, the gather, the weights' gather, the
	 * product, index_add_ */
	fx = El * (t_mem(e, p, 8.0 * K * T + 16.0 * n) +
		   t_mem(e, p, n * (8.0 + 2.0 * A * h)) +
		   t_mem(e, p, n * (16.0 + 2.0 * A)) +
		   t_mem(e, p, n * (2.0 * A * h + A)) +
		   t_mem(e, p, n * (8.0 + HF_INDEX_ADD_STREAM * A * h)));
	/* per expert: index_select; grad x weights; grad x output and
	 * its sum; the weights' gather's zeros and accumulate; w1's and
	 * w3's input gradients summed (gated); the gather's zeros and
	 * accumulate; the sum into the input's gradient */
	bx = El * (t_mem(e, p, n * (8.0 + 2.0 * A * h)) +
		   t_mem(e, p, n * (2.0 * A * h + A)) +
		   t_mem(e, p, n * 3.0 * A * h) +
		   t_mem(e, p, n * (A * h + A)) +
		   t_mem(e, p, T * K * A) +
		   t_mem(e, p, n * (16.0 + 2.0 * A)) +
		   (m->ffn_gated ? t_mem(e, p, n * 3.0 * A * h) : 0.0) +
		   t_mem(e, p, T * A * h) +
		   t_mem(e, p, n * (8.0 + 3.0 * A * h)) +
		   t_mem(e, p, 3.0 * T * A * h));
	/* the routing's: the cast's, the divide's and sum's, topk's zeros
	 * and scatter, the softmax's (read its output and gradient, write
	 * A) */
	b = t_mem(e, p, T * (4.0 + A) * K) + t_mem(e, p, T * 20.0 * K) +
		t_mem(e, p, T * 4.0 * E) + t_mem(e, p, T * 12.0 * K) +
		t_mem(e, p, T * (8.0 + A) * E);
	add_op(lc, "moe_index", f + fx, b + bx, 0, 0);
	*gx = fx;
}

/* DeepSpeed's stage 3 gathers and frees parameters from Python hooks on
 * every module of the model it wraps (deepspeed/runtime/zero/
 * parameter_offload.py v0.16.6, _register_deepspeed_module, recursively
 * into every child): two forward pre-hooks -- _pre_forward_module_hook
 * (partitioned_param_coordinator.py fetch_sub_module) and
 * _post_backward_module_hook ("apply_to_tensors_only(module.post_bwd_fn.
 * apply, inputs)", an autograd Function on the inputs) -- and two forward
 * hooks -- _post_forward_module_hook (release_sub_module) and
 * _pre_backward_module_hook (PreBackwardFunctionForModule.apply on the
 * outputs).  The framework calls each module's forward makes through
 * them, each priced as one eager op's host time (host_op_time): a module
 * with no parameters of its own runs the two Functions and fetch's
 * "current_stream().wait_stream(self.__allgather_stream)" --
 * DS_Z3_MODULE_HOOK_OPS; a module holding a weight (prefetched, the trace
 * complete) also runs fetch's query of the oldest fetch event, the
 * gather handle's wait, "event = get_accelerator().Event();
 * event.record()", the prefetch of the next weight ("torch.empty(
 * buffer_size, ...)" and its all-gather launch, partition_parameters.py
 * all_gather_coalesced) and release's free_param ("param.data.
 * record_stream(...)", "param.data = torch.empty(0, ...)") --
 * DS_Z3_PARAM_HOOK_OPS (its views: metadata only, not counted).  The
 * Hugging Face modules of a layer (transformers' LlamaDecoderLayer,
 * MixtralDecoderLayer): the decoder layer, its attention and its MLP or
 * MoE block hold no weight of their own; the two norms, q, k, v and o,
 * the MLP's linears (gate and up, or the one input, and down) and the
 * MoE block's router gate each hold one; the MLP's act_fn (ACT2FN: an
 * nn.Module) none.  Each expert (MixtralBlockSparseTop2MLP): itself and
 * its act_fn without, w1, w3 (one input when not gated) and w2 with.
 * Modules some models add (q and k norms, MLA's low-rank projections)
 * are not counted.  *hx: one routed expert's hook ops; *hl: the rest of
 * the layer's; pw: a module with a weight's (DS_Z3_PARAM_HOOK_OPS
 * forward, DS_Z3_PARAM_BWD_HOOK_OPS backward).
 *
 * The backward runs the same hooks' other halves from autograd, module by
 * module: PreBackwardFunctionForModule.backward (_run_before_backward_
 * function -> pre_sub_module_backward_function -> fetch_sub_module(...,
 * forward=False), the same fetch, wait and prefetch as the forward's) and
 * PostBackwardFunctionModule.backward (post_sub_module_backward_function
 * -> release_sub_module, the same free_param): a module's 3 and a weight's
 * 10 again.  Each weight adds stage3.py's gradient hook
 * (create_reduce_and_remove_grad_hooks: register_grad_hook, torch's
 * register_post_accumulate_grad_hook, -> reduce_partition_and_remove_grads
 * -> __add_grad_to_ipg_bucket): "reduce_and_partition_stream.wait_stream(
 * default_stream())", "new_grad_tensor.copy_(param.grad, non_blocking=
 * True)" into the contiguous bucket and "param.grad.record_stream(...)"
 * (the narrow and view_as: metadata) -- 3 more, DS_Z3_PARAM_BWD_HOOK_OPS
 * 13.  The bucket's reduce-scatter is launched once per reduce_bucket_size
 * elements, not per weight: not counted here. */
#define DS_Z3_MODULE_HOOK_OPS 3.0
#define DS_Z3_PARAM_HOOK_OPS 10.0
#define DS_Z3_PARAM_BWD_HOOK_OPS (DS_Z3_PARAM_HOOK_OPS + 3.0)

/* Of those, the ones a module runs before its own forward (the forward
 * pre-hooks): without a weight, PostBackwardFunctionModule's apply and
 * fetch's wait_stream (2 of 3; the forward hook's
 * PreBackwardFunctionForModule is after); with one, also fetch's event
 * query, the handle's wait, the event's record and the prefetch's
 * torch.empty and all-gather launch (7 of 10; release's record_stream
 * and torch.empty(0) are after). */
#define DS_Z3_MODULE_PRE_OPS 2.0
#define DS_Z3_PARAM_PRE_OPS 7.0

static void ds_hook_ops(const gp_model *m, int moe, double pw, double *hx,
			double *hl)
{
	double nin = m->ffn_gated ? 2.0 : 1.0;
	double mlp = (nin + 1.0) * pw +
		2.0 * DS_Z3_MODULE_HOOK_OPS;   /* linears; block, act_fn */

	*hx = moe ? mlp : 0.0;
	/* decoder layer, attention, MLP/MoE block; norms, q, k, v, o */
	*hl = 3.0 * DS_Z3_MODULE_HOOK_OPS + 6.0 * pw;
	if (moe)   /* the router's gate, the shared experts */
		*hl += pw + m->moe.shared_experts * mlp;
	else       /* the MLP's linears and act_fn (its block counted) */
		*hl += mlp - DS_Z3_MODULE_HOOK_OPS;
}

/* Stage 3 reduces the backward's gradients in buckets of
 * reduce_bucket_size S elements (train_ds_layer_buckets: a bucket is
 * closed before the gradient that would pass S joins it), and each
 * closed bucket is reduced from the host in Python, on the gradient hook
 * of the weight that closes it: stage3.py (v0.16.7, the same from
 * v0.14.2 to v0.16.9) __reduce_and_partition_ipg_grads queries the
 * oldest reduce event ("self.param_reduce_events[0].query()"), then
 * __avg_scatter_grads -> coalesced_collectives.py reduce_scatter_coalesced
 * (the config's "reduce_scatter: bool = True") divides the bucket
 * ("tensor_partition_flat_buffer.div_(world_sz)") and launches the
 * reduce-scatter; partition_grads moves the rank's partition into its
 * gradient buffer ("grad_buffer.copy_(grad_partition, ...)" at the
 * first micro-batch, "grad_buffer.add_(...)" after: one launch either
 * way, the accumulator being the model's bf16 under ZeRO, engine.py
 * get_data_types) and frees the gradient ("param.grad.record_stream(
 * ...)"); then "event = get_accelerator().Event(); event.record()":
 * DS_Z3_FLUSH_OPS host calls, each priced as one eager op, as
 * DS_Z3_PARAM_HOOK_OPS counts its own (the Python between them not
 * counted: a lower bound).  Where S is the weights' size or less, as
 * transformers' "auto" (hidden^2) makes it beside a MoE's many small
 * experts, that is one bucket a weight.  The layer's gradients in the
 * order its backward makes them: the shared experts' or the dense MLP's
 * matrices, the routed experts' (El of them, nmat matrices each), the
 * router's gate, then o, v, k and q (MLA's low-rank projections as
 * plain q, k and v, as ds_hook_ops counts them).  *fx: one routed
 * expert's bucket closings, *fl: the rest of the layer's (the open
 * bucket's share of S as a fraction: the next layer's gradients fill
 * it). */
#define DS_Z3_FLUSH_OPS 6.0

/* FSDP1's host work in each forward of a unit, a parameter of it: after
 * the unit's flat parameter is gathered, FullyShardedDataParallel points
 * each original parameter of the unit at its slice
 * (torch/distributed/fsdp/_flat_param.py _use_unsharded_flat_param:
 * "elif in_forward: self._use_unsharded_views(as_params=False)", and
 * with use_orig_params the same loop, "as_params=(not in_forward and not
 * in_pre_backward)"): a view and a setattr a parameter, the safe setattr
 * unless FSDP_USE_UNSAFE_SETATTR=1 (_init_setattr_fns), on the host
 * between the gather and the unit's first kernel, in the recomputed
 * forward of a checkpointed unit again.  pytorch PR #96958 (2023-03)
 * times that loop: "I experimented with 200 `nn.Linear`s with
 * `bias=True` for a total of 400 `nn.Parameter`s all wrapped into the
 * same FSDP instance ... `unshard()` -> `_use_unsharded_views()` - (From
 * previous PR) unsafe `setattr`: 6.112 ms -> 4.268 ms": 6.112 ms / 400 =
 * 15.28 us a parameter with the default (safe) setattr, on that PR's host
 * (scaled with the job's as host_op_time is).  The backward runs no such
 * loop without use_orig_params; with it (its pre-backward views and the
 * reshards' sharded views) not priced: a lower bound there.  The root
 * unit's few parameters (embedding, final norm, head) are left out. */
#define FSDP1_VIEW_S (6.112e-3 / 400.0)

/* The parameter tensors of one decoder layer (train_int.h): its norms'
 * (model_layer_norm_tensors: two, one under shared_norm, two more under
 * qk_norm, LayerNorm's gain and bias two each), the attention's fused
 * qkv or its q, k, v (split_proj) and o, the MLP's fused gate_up or gate
 * and up (one up without a gate) and down, a bias beside each linear
 * (linear_bias; the qkv's alone under qkv_bias); under MoE the router's
 * gate and every expert's and shared expert's MLP linears in place of
 * the dense MLP.  nanotron's Llama (models/llama.py: input_layernorm,
 * qkv_proj, o_proj, post_attention_layernorm, gate_up_proj, down_proj)
 * has six. */
double train_layer_tensors(const gp_model *m, const train_lkey *k, int moe)
{
	double qkv = (k->split_proj & GP_SPLIT_QKV) ? 3.0 : 1.0;
	double up = m->ffn_gated && (k->split_proj & GP_SPLIT_MLP) ? 2.0 :
		1.0;
	double lb = m->linear_bias ? 2.0 : 1.0;
	double attn = (qkv + 1.0) + (m->linear_bias ? qkv + 1.0 :
				     m->qkv_bias ? qkv : 0.0);
	double mlp = (up + 1.0) * lb;

	return model_layer_norm_tensors(m) + attn + (moe ? 1.0 +
		(m->moe.experts + m->moe.shared_experts) * mlp : mlp);
}

static void ds_flush_ops(const gp_model *m, const train_lkey *k, int moe,
			 double El, double *fx, double *fl)
{
	double S = k->ds_bucket, h = m->hidden, tp = k->tp > 0 ? k->tp : 1;
	double etp = k->etp > 0 ? k->etp : tp;
	double nmat = m->ffn_gated ? 3.0 : 2.0, w[8], cnt[8], all, rest;
	gp_widths wd;
	int n = 0, ie;

	*fx = *fl = 0.0;
	if (!(S > 0))
		return;
	model_widths(m, &wd);
	if (moe) {
		double ns = m->moe.shared_experts > 0 ? m->moe.shared_experts :
			0.0;

		w[n] = ns > 0 ? h * wd.shared_f / ns / tp : 0.0;
		cnt[n++] = ns * nmat;
	} else {
		w[n] = h * wd.dense_f / tp;
		cnt[n++] = nmat;
	}
	ie = n;
	w[n] = moe ? h * wd.expert_f / etp : 0.0;
	cnt[n++] = moe ? El * nmat : 0.0;
	w[n] = moe ? h * m->moe.experts : 0.0;
	cnt[n++] = 1.0;
	w[n] = wd.o * h / tp;
	cnt[n++] = 1.0;
	w[n] = h * wd.v / tp;
	cnt[n++] = 1.0;
	w[n] = h * wd.k / tp;
	cnt[n++] = 1.0;
	w[n] = h * wd.q / tp;
	cnt[n++] = 1.0;
	all = train_ds_layer_buckets(S, w, cnt, n);
	if (moe && El > 0) {
		double c = cnt[ie];

		cnt[ie] = 0.0;
		rest = train_ds_layer_buckets(S, w, cnt, n);
		cnt[ie] = c;
		*fx = all > rest ? (all - rest) / El : 0.0;
		*fl = rest;
	} else {
		*fl = all;
	}
}

/* What a layer adds beyond its operators: the two residual adds, eager
 * mode's copies and summed input gradients, and the host's launch wait
 * for its nk forward kernels and eg expert GEMMs, and for the backward's
 * nb launches of host work beside the expert GEMMs' (o_k: the attention
 * output projection's input width). */
/* The clamped GEGLU's host wait.  Megatron-Core's
 * weighted_bias_quick_geglu_impl (core_v0.16.0 and core_v0.17.0
 * fusions/fused_bias_geglu.py; TEGroupedMLP's bias_act_func calls it with
 * bias_activation_fusion on, as the GPT-OSS bridge sets, and the model's
 * clamp: moe_clamp_costs) makes its linear offset a device tensor on every
 * call, after the clamp and before the fused Function: "linear_offset =
 * torch.tensor(linear_offset, dtype=input.dtype, device=input.device)".
 * torch.tensor of a Python scalar on a CUDA device copies it from the host
 * and synchronizes: "x_tensor = torch.tensor(3.14, device=dev)  # sync",
 * where torch.full does not (PyTorch issue #120996, under
 * torch.cuda.set_sync_debug_mode), "torch.tensor(3.14., device="cuda")
 * should avoid h2d sync when the input is a scalar" (PyTorch issue
 * #190217, open).  So each MoE layer's forward waits there a second time
 * after the dispatcher's: the host resumes with the GPU idle and launches
 * the activation, fc2's expert GEMMs and their bias loop against the GPU's
 * time on them (layer_extras).  The fused grouped MLP (fused_mlp) does
 * not call it, nor the unfused activation (unfused_act: bias_act_func's
 * plain glu), nor an eager stack. */
static int moe_act_sync(const tenv *e, const train_lkey *k, int moe)
{
	const gp_model *m = e->m;

	return moe && !k->eager && m->ffn_gated && m->ffn_clamp &&
		!k->fused_mlp && !k->unfused_act;
}

static void layer_extras(tenv *e, const train_lkey *k, int kind, double nk,
			 double ng, double eg, double nb, double o_k,
			 double ne, double ge, int act_sync, double ne2,
			 double ge2, double egd, double gb2, train_lcost *lc)
{
	const gp_model *m = e->m;
	double h = m->hidden;
	int eager = k->eager, moe = kind == 'E', hy = m->pattern[0] != 0;
	/* a hybrid stack's layer is one block: one residual add */
	double nres = hy ? 1.0 : 2.0;

	/* The two residual adds (Megatron's fused bias-dropout-add): read
	 * the block output and the residual, write the sum (and a 1-byte
	 * mask with dropout); the gradient passes through the add, and
	 * through dropout by its mask. */
	{
		double el = k->Tn * h, mask = k->dropout ? 1.0 : 0.0;
		double t = t_mem(e, k->half, el * (3.0 * k->A + mask));

		add_op(lc, "residual", nres * t, k->dropout ?
		       nres * t_mem(e, k->half, el * (2.0 * k->A + mask)) :
		       0.0, 0, 0);
		nk += nres;
	}
	/* Eager: the SDPA output's transpose(1, 2).contiguous() (read and
	 * write, and its gradient back), and the input gradients of the
	 * linears that share an input summed (q, k, v: two adds; gate, up:
	 * one; read two, write one), which a fused linear returns as one. */
	if (eager) {
		double cp = t_mem(e, k->half, k->T * o_k * 2.0 * k->A);
		double sums = (2.0 + (!moe && m->ffn_gated ? 1.0 : 0.0)) *
			t_mem(e, k->half, k->T * h * 3.0 * k->A);

		add_op(lc, "eager_copies", cp, cp + sums, 0, 0);
		nk += 1;
	}
	/* A padded micro-batch under transformers' FlashAttention-2
	 * (pad_mask).  LlamaModel.forward keeps the 2-D mask "if
	 * (attention_mask is not None and 0 in attention_mask)" (v4.36 to
	 * v4.39), and LlamaFlashAttention2._flash_attention_forward then
	 * runs _upad_input: _get_unpad_data's sum, nonzero, max().item(),
	 * cumsum and pad on the mask, q, k and v each gathered into the
	 * varlen layout (flash_attn.bert_padding index_first_axis:
	 * torch.gather, read and write), flash_attn_varlen_func, and the
	 * output scattered back by pad_input ("torch.zeros((batch *
	 * seqlen), ...)" then index_put: write, read and write).  The
	 * backward: pad_input's gather (read, write) and each of q, k and
	 * v through index_first_axis's backward ("grad_input =
	 * torch.zeros(...)", "grad_input.scatter_(0, ...)": write, read
	 * and write).  Forward 5 q + 4 kv elements moved, 11 launches;
	 * backward 5 q + 6 kv.  The rows are taken at the padded T (the
	 * micro-batch's real tokens are as many less as it has padding). */
	if (eager && k->pad_mask) {
		double eq = k->T * m->heads / (double)k->tp * m->head_dim *
			k->A;
		double ekv = k->T * model_kv_heads_rank(m, k->tp) *
			m->head_dim * k->A;
		double f = t_mem(e, k->half, 2.0 * eq) +
			2.0 * t_mem(e, k->half, 2.0 * ekv) +
			t_mem(e, k->half, eq) + t_mem(e, k->half, 2.0 * eq);
		double b = t_mem(e, k->half, 2.0 * eq) +
			t_mem(e, k->half, eq) + t_mem(e, k->half, 2.0 * eq) +
			2.0 * (t_mem(e, k->half, ekv) +
			       t_mem(e, k->half, 2.0 * ekv));

		add_op(lc, "pad_mask", f, b, 0, 0);
		nk += PAD_MASK_OPS;
	}
	/* The host launches the forward's kernels one by one from Python
	 * (no CUDA graph): below GP_EAGER_OP_TIME of GPU work per kernel
	 * the GPU waits for it (infer.c's eager runtime, the same rule).
	 * The backward's host is charged per module, as measured: the
	 * expert GEMMs' (TE_EXPERT_GEMM: measured on the call, whoever
	 * makes it), a Transformer Engine module's Python backward
	 * (TE_BWD_HOST) and fp8's share (TE_FP8_BWD_HOST), against the
	 * layer's backward on the GPU; the other kernels' backward is
	 * launched by autograd's C++ engine, for which no per-kernel host
	 * figure was found. */
	if (moe && k->ep > 1 && !k->eager) {
		nk += k->ep_flex ? MOE_FLEX_OPS : MOE_DISPATCH_OPS;
		/* the router's launches beyond the counted ones
		 * (router_extra_ops), captured with it when graphed */
		nk += router_extra_ops(k);
		if (k->unfused_permute && !k->ep_flex && !k->ep_allgather)
			nk += MOE_UNFUSED_PERMUTE_OPS;
		if (k->graph_router)
			ng += MOE_ROUTER_OPS + router_extra_ops(k);
		if (k->graph_prep)
			ng += k->ep_flex ? MOE_FLEX_PREP_OPS :
				MOE_A2A_PREP_OPS;
	}
	/* ng: the launches a CUDA graph captured (the attention's
	 * residual add with it; a hybrid stack's attention or Mamba
	 * layer's own), replayed by GRAPH_REPLAY_OPS host calls. */
	if (!k->eager && (hy ? (kind == '*' && k->graph_attn) ||
			  (kind == 'M' && k->graph_mamba) : k->graph_attn))
		ng += 1.0;
	if (ng > 0)
		nk += GRAPH_REPLAY_OPS - ng;
	{
		/* eg: the forward's expert GEMMs (fused stacks only: the
		 * eager modules loop over experts in Python, op by op). */
		double te = moe && !eager ? eg * TE_EXPERT_GEMM *
			k->host_op_time / GP_EAGER_OP_TIME : 0.0;
		double cf_, cb_;
		double hf, hb;

		/* DeepSpeed stage 3's hooks (ds_hook_ops): the forward's
		 * host work and the backward's, the local experts' with
		 * them (the backward's expert loop waits nowhere). */
		double hx = 0, hl = 0, bx = 0, bl = 0, El = moe ?
			m->moe.experts / (k->ep > 0 ? k->ep : 1.0) : 0.0;

		if (k->ds_hooks) {
			double fx, fl;

			ds_hook_ops(m, moe, DS_Z3_PARAM_HOOK_OPS, &hx, &hl);
			ds_hook_ops(m, moe, DS_Z3_PARAM_BWD_HOOK_OPS, &bx,
				    &bl);
			/* and the gradient buckets it closes */
			ds_flush_ops(m, k, moe, El, &fx, &fl);
			bx += fx * DS_Z3_FLUSH_OPS;
			bl += fl * DS_Z3_FLUSH_OPS;
		}
		/* FSDP1's views of the unit's parameters, on the host before
		 * the layer's first kernel (a decoder layer's; a hybrid
		 * stack's layers not counted) */
		double fv = k->fsdp1_views && !hy ?
			train_layer_tensors(m, k, moe) * FSDP1_VIEW_S *
			k->host_op_time / GP_EAGER_OP_TIME : 0.0;

		sort_chunks_host(e, k, moe, &cf_, &cb_);
		hf = (nk + hl + El * hx) * k->host_op_time + te + 3.0 * cf_ +
			fv;
		hb = 2.0 * te + (nb + bl + El * bx) * k->host_op_time +
			3.0 * cb_;
		/* The backward waits nowhere (the dispatchers keep the
		 * splits on the host: MoEAlltoAllTokenDispatcher's
		 * all-to-all backward swaps its input and output split
		 * lists, HybridEP's reuses the forward's handle), so its
		 * host runs ahead of the GPU and its launches hide under
		 * every kernel the GPU runs meanwhile -- the layer's
		 * compute and, without EP overlap, its two expert
		 * all-to-alls, which sit on the GPU's path between the
		 * kernels around them (stage_base exposes them whole).
		 * With EP overlap they run beside the other micro-batch's
		 * compute and add no GPU time of their own. */
		double cb = moe && k->ep > 1 && !k->ep_overlap ?
			lc->ep_bwd : 0.0;
		double wf = hf > lc->fwd.t ? hf - lc->fwd.t : 0.0;
		double wb = hb > lc->bwd.t + cb ? hb - lc->bwd.t - cb : 0.0;

		/* Under moe_act recompute (gb2 >= 0) the clamped GEGLU
		 * runs again in the backward (CheckpointWithoutOutput,
		 * before fc2's backward), its offset's copy waiting for
		 * the GPU there too: the host, ahead until then, resumes
		 * with the GPU idle and launches the activation and fc2's
		 * backward (a Transformer Engine module's Python,
		 * TE_BWD_HOST, and its dgrad and wgrad expert calls)
		 * against their GPU time, the GPU idle at least until the
		 * activation is launched.  Where the backward's host is
		 * behind anyway (wb) the wait adds nothing of its own. */
		if (act_sync && gb2 >= 0 && !eager) {
			double hr = (2.0 + TE_BWD_HOST) * k->host_op_time +
				2.0 * egd * TE_EXPERT_GEMM *
				k->host_op_time / GP_EAGER_OP_TIME;
			double wr = hr - gb2 > k->host_op_time ? hr - gb2 :
				k->host_op_time;

			if (wr > wb)
				wb = wr;
		}

		/* The stretch after the dispatcher's host wait (above
		 * MOE_A2A_POST_OPS): its host time against its GPU time,
		 * the alltoall dispatcher's dispatch all-to-all with it
		 * unless EP overlap runs that beside another micro-batch.
		 * With the clamped GEGLU's wait (moe_act_sync) inside it,
		 * it is two stretches, the GPU's lead in the first not
		 * carried past the wait: up to the clamp, and from the
		 * activation through fc2's bias loop (the offset's copy
		 * one host call, fc2's expert GEMMs theirs), the GPU idle
		 * at least until the activation is launched. */
		double te2 = act_sync ? egd * TE_EXPERT_GEMM *
			k->host_op_time / GP_EAGER_OP_TIME : 0.0;
		double h2 = (ne2 + 1.0) * k->host_op_time + te2;
		double w2 = act_sync ? (h2 - ge2 > k->host_op_time ?
					h2 - ge2 : k->host_op_time) : 0.0;

		if (moe && k->ep > 1 && !eager && !k->ep_allgather) {
			double he = (ne + (k->ep_flex ? MOE_FLEX_POST_OPS :
					   MOE_A2A_POST_OPS) +
				      (k->unfused_permute && !k->ep_flex ?
				       MOE_UNFUSED_POST_OPS : 0.0)) *
				k->host_op_time + te + 2.0 * cf_;
			double gd = !k->ep_flex && !k->ep_overlap ?
				0.5 * lc->ep_fwd : 0.0;
			double w1 = act_sync ? (he - h2 + k->host_op_time) -
				(ge - ge2) - gd : he - ge - gd;

			if (w1 < 0)
				w1 = 0;
			if (w1 + w2 > wf)
				wf = w1 + w2;
		} else if (w2 > wf) {
			wf = w2;
		}

		/* The eager modules' expert loop (HF_EXPERT_OPS): a
		 * stretch per local expert, each after a sync. */
		if (moe && eager && ne > 0) {
			double tau = k->host_op_time;
			double he = (ne + HF_EXPERT_OPS + hx) * tau;
			double g1 = ge / El;
			double hr = (nk - ne + hl) * tau + fv,
				gr = lc->fwd.t - ge;
			double lead = (HF_EXPERT_LEAD_OPS + (k->ds_hooks ?
				DS_Z3_MODULE_PRE_OPS + DS_Z3_PARAM_PRE_OPS :
				0.0)) * tau;
			double s = (hr > gr ? hr : gr) +
				hf_expert_stretches(e, k, El, ne + HF_EXPERT_OPS,
						    he, lead, ge);

			if (s - lc->fwd.t > wf)
				wf = s - lc->fwd.t;
			/* After the last expert's sync the host launches
			 * its stretch (he) while the GPU runs it from one
			 * launch on (tau + g1): what the GPU has left when
			 * the host moves on to the next layer. */
			lc->fwd_sync = 1;
			lc->fwd_tail = lead + g1 > he ? lead + g1 - he : 0.0;
		}
		/* Megatron-Core's unfused RoPE on packed sequences
		 * (rope_thd_costs): after its waits the host launches the
		 * rest of each call, the GPU running only those small
		 * kernels meanwhile -- the calls' host time less their GPU
		 * time, at least, on the layer's path (the waits' own
		 * stretch, as the dispatcher's above). */
		if (k->unfused_rope && k->te_modules && k->attn_seq > 0 &&
		    !eager) {
			double hr = 2.0 * rope_thd_post_host(m, k);

			if (hr - lc->rope_gpu > wf)
				wf = hr - lc->rope_gpu;
		}
		/* a full-iteration graph: no host work in the layer */
		if (k->graph_full) {
			wf = wb = 0.0;
			lc->fwd_sync = 0;
		}
		if (wf > 0 || wb > 0)
			add_op(lc, "host_wait", wf, wb, 0, 0);
	}
}

/* Context parallelism as a ring (layer_comm's): each rank's fused
 * attention runs once per ring step, on its query chunk against the K
 * and V chunk in hand, and the partial outputs are merged by their
 * softmax statistics -- Transformer Engine's AttnFuncWithCP (v1.8,
 * pytorch/attention.py, Megatron-Core's p2p CP): forward, K and V are
 * concatenated into the ring's send buffer and after each step
 * flash_attn_fwd_out_correction does "out_corrected = out_per_step *
 * softmax_lse_corrected_exp; out.add_(out_corrected)" (read the step's
 * output and the running one, write it: 3 A a query element); backward,
 * each step's dq is added into dq ("dq.add_(dq_)", 3 A) and its dK, dV
 * concatenated ("torch.cat((dk_.unsqueeze(0), dv_.unsqueeze(0)))", 2 A
 * a K/V element) and added into dkv (3 A).  The causal load balance
 * halves the query or the K/V chunk of every step after the first and
 * copies that half contiguous first, which roughly evens out: cp steps
 * at the full sizes.  Memory-bound, beside the attention kernels. */
static void cp_merge(tenv *e, const train_lkey *k, train_lcost *lc)
{
	gp_widths w;
	double eq, ekv;

	/* Ulysses attends whole sequences of heads / cp: one ordinary
	 * kernel, no steps to merge. */
	if (k->cp <= 1 || !k->flash || k->cp_rotate == GP_CP_ULYSSES)
		return;
	model_widths(e->m, &w);
	eq = k->T * w.o / k->tp;
	if (k->cp_rotate != GP_CP_P2P) {
		/* PyTorch's context_parallel (torch/distributed/tensor/
		 * experimental/_attention.py, torch_cp_comm below): the
		 * merger upcasts ("convert_to_f32: bool = True", "out
		 * = out.to(torch.float32)") and keeps the running output
		 * in fp32, "out = out - F.sigmoid(block_lse - lse) * (out
		 * - block_out)": at the fewest bytes, a step reads its
		 * output (A) and the running one (4) and writes it (4).
		 * The backward accumulates in fp32 too ("accum_dtype =
		 * torch.float32 if _cp_options.convert_to_f32";
		 * "grad_query += grad_query_": A + 4 read, 4 written a
		 * query element) and adds each step's dK and dV into the
		 * received fp32 ones, then concatenates them to send on
		 * ("next_grad_kv = torch.cat([grad_key.flatten(),
		 * grad_value.flatten()])": A + 4 + 4, then 4 + 4) on
		 * each of the cp steps.  Every step but the last, forward
		 * and backward, concatenates the K and V in hand to send
		 * ("if i < (size - 1): next_kv = torch.cat([key.flatten(),
		 * value.flatten()])": A read, A written): cp - 1 of them.  K and V are
		 * what SDPA was handed: torchtitan's Llama repeats them to
		 * every query head first (model.py "keys = repeat_kv(xk,
		 * self.n_rep)"), 2 query widths a token. */
		ekv = 2.0 * eq;
		add_op(lc, "cp_merge",
		       t_mem(e, k->half, k->cp * eq * (k->A + 8.0) +
			     (k->cp - 1.0) * ekv * 2.0 * k->A),
		       t_mem(e, k->half, k->cp * (eq * (k->A + 8.0) +
						  ekv * (k->A + 16.0)) +
			     (k->cp - 1.0) * ekv * 2.0 * k->A),
		       0, 0);
		return;
	}
	ekv = k->T * model_kv_elems_layer(e->m, k->tp);
	add_op(lc, "cp_merge",
	       t_mem(e, k->half, k->cp * k->A * (3.0 * eq + 2.0 * ekv)),
	       t_mem(e, k->half, k->cp * k->A * (3.0 * eq + 5.0 * ekv)),
	       0, 0);
}

/* Whether operator name of a layer (an MoE one: moe) runs inside the
 * layer's CUDA graph (the scopes above GRAPH_REPLAY_OPS).  A hybrid
 * stack's Mamba layer is the mamba scope's: Megatron-Core's
 * CudaGraphScope "mamba" captures the MambaLayer (its norm, the mixer
 * and its residual add; transformer/enums.py, the Nemotron 3 Nano
 * presets' cuda_graph_scope [attn, mamba, moe_router, moe_preprocess]). */
static int graphed(const train_lkey *k, int moe, const char *name)
{
	static const char *const attn[] = {
		"attn_norm", "qkv", "qk_norm", "rope_kv", "attention",
		"o_proj"
	};
	static const char *const mamba[] = {
		"mamba_norm", "in_proj", "conv1d", "ssd_scan", "gate_norm",
		"out_proj"
	};
	size_t i;

	if (k->graph_attn)
		for (i = 0; i < sizeof attn / sizeof *attn; i++)
			if (strcmp(name, attn[i]) == 0)
				return 1;
	if (k->graph_mamba)
		for (i = 0; i < sizeof mamba / sizeof *mamba; i++)
			if (strcmp(name, mamba[i]) == 0)
				return 1;
	return moe && k->graph_router && (strcmp(name, "mlp_norm") == 0 ||
					  strcmp(name, "moe_router") == 0);
}

/* K and V repeated to every query head before the attention kernel
 * (kv_repeat): torchtitan's Llama (models/llama/model.py at 9dec370,
 * models/llama3/model.py at 820504e) runs "keys = repeat_kv(xk,
 * self.n_rep)", "values = repeat_kv(xv, self.n_rep)" before
 * F.scaled_dot_product_attention, with no enable_gqa, and repeat_kv is
 * "torch.unsqueeze(x, dim=3).expand(bs, slen, n_kv_heads, n_rep,
 * head_dim).reshape(bs, slen, n_kv_heads * n_rep, head_dim)": the reshape
 * of an expanded tensor is a copy, q wide (the query heads' width on the
 * rank) from kv.  Per token, in A-byte elements:
 *   forward, eager: K and V each read kv, write q: 2 (kv + q); compiled,
 *   K's copy is the rope kernel's write made q wide (q - kv more) and V's
 *   a copy of its own (kv + q): 2 q;
 *   backward: the attention kernel writes dK and dV q wide (2 (q - kv)
 *   more), and expand's gradient sums each over n_rep (read q, write
 *   kv): eager 2 (q + kv) more, 4 q in all; compiled, K's sum folds into
 *   the rope's backward, which reads q where it read kv (q - kv), V's
 *   stays (q + kv): 4 q - 2 kv.
 * The recompute policies re-run the forward copy as any op of the layer
 * (op SAC keeps SDPA's outputs, not its inputs).  repeat_kv runs
 * whatever SDPA backend then takes the tensors: unfused (the math
 * path's QK^T and PV matmuls) is handed the same q-wide K and V and
 * writes q-wide dK and dV, so the copy is priced beside either. */
static void kv_repeat_costs(tenv *e, const train_lkey *k, train_lcost *lc)
{
	const gp_model *m = e->m;
	double q, kv, f, b;

	if (!k->kv_repeat)
		return;
	q = m->heads * (double)m->head_dim / k->tp;
	kv = model_kv_heads_rank(m, k->tp) * m->head_dim;
	if (!(kv > 0.0) || !(q > kv))
		return;
	f = k->eager ? 2.0 * (kv + q) : 2.0 * q;
	b = k->eager ? 4.0 * q : 4.0 * q - 2.0 * kv;
	add_op(lc, "kv_repeat", t_mem(e, k->half, k->T * f * k->A),
	       t_mem(e, k->half, k->T * b * k->A), 0, 0);
}

/* Transformer Engine's FlashAttention backend (fa_layout: attn_kernel
 * fa2 or fa3 on the megatron stack) runs the kernels on bshd tensors
 * while Megatron-Core hands it sbhd ones, and converts both ways in
 * Python: "convert q, k, v to bshd if they are in sbhd" -- for head_dim
 * 128, at least 512 tokens and the interleaved "sbh3d" layout of MHA's
 * fused qkv output, one kernel, "_PrepareQKVForFA.apply(query_layer,
 * key_layer, value_layer)" ("converts QKV from interleaved (s, b, ...)
 * layout to separate contiguous q, k, v tensors in (b, s, ...)
 * layout"), else "x.transpose(0, 1).contiguous() for x in
 * (query_layer, key_layer, value_layer)" -- and the output back, "output
 * .view(batch_size, max_seqlen_q // cp_size, -1).transpose(0, 1)" then
 * "return output.contiguous()" (TransformerEngine v1.6
 * transformer_engine/pytorch/attention.py FlashAttention.forward; the
 * same in v1.10, v1.11, v2.0 and in v2.4 to main's
 * attention/dot_product_attention/backends.py).  Forward: each of q, k, v
 * and the output read and written once more, 2A an element.  Backward:
 * the output gradient reaches the kernel as the transposed view of an
 * sbhd tensor, which flash-attn makes contiguous ("dout, q, k, v, out =
 * [maybe_contiguous(x) for x in (dout, q, k, v, out)]",
 * flash_attn_interface.py _flash_attn_backward): 2A an output element;
 * _PrepareQKVForFA's backward writes the three gradients back
 * interleaved ("dqkv = fa_prepare_bwd(dq, dk, dv)"): 2A a q, k, v
 * element, where the transposed copies' gradients pass back as views
 * (their strides read by the qkv split's backward, which runs with
 * cuDNN's sbhd kernels as well).  cuDNN's fused attention (attn_kernel
 * cudnn, TE's FusedAttention) takes sbhd as it is: no copies.  One
 * memory pass a kernel: forward the prepare kernel or the three copies
 * (k and v each kv / 2 wide), and the output's; backward the output
 * gradient's and the interleaving. */
static void fa_layout_costs(const tenv *e, const train_lkey *k, double *f,
			    double *b, double *nk)
{
	const gp_model *m = e->m;
	gp_widths w;
	double q, kv, o, h3d;

	*f = *b = 0.0;
	if (!k->fa_layout)
		return;
	model_widths(m, &w);
	q = k->T * w.q / k->tp;
	kv = k->T * (w.k + w.v) / k->tp;
	o = k->T * w.o / k->tp;
	/* MHA's fused qkv: sbh3d (q, k and v of a head side by side) */
	h3d = w.latent == 0 && w.k == w.q && w.v == w.q &&
		m->head_dim == 128 && k->T >= 512;
	*f = (h3d ? t_mem(e, k->half, 2.0 * (q + kv) * k->A) :
	      t_mem(e, k->half, 2.0 * q * k->A) +
	      2.0 * t_mem(e, k->half, kv * k->A)) +
		t_mem(e, k->half, 2.0 * o * k->A);
	*b = t_mem(e, k->half, 2.0 * o * k->A) +
		(h3d ? t_mem(e, k->half, 2.0 * (q + kv) * k->A) : 0.0);
	*nk += h3d ? 2.0 : 4.0;
}

static double op_pass(const train_lcost *lc, const char *name, int bwd);

/* The forward PyTorch's non-reentrant checkpoint leaves out of its
 * recompute (ckpt_early_stop).  Since PyTorch 2.1 (PR #96866, "Make
 * early stop the default for checkpoint") torch.utils.checkpoint with
 * use_reentrant=False, which checkpoint_wrapper's CheckpointImpl.
 * NO_REENTRANT runs, "stops recomputation as soon as it has computed all
 * needed Tensors" (set_checkpoint_early_stop's docstring): the re-run
 * forward raises out of the saved-tensor pack hook when the last tensor
 * the first forward saved is packed again.  An autograd op packs its
 * saved inputs before its kernel runs (the generated VariableType code
 * builds the SavedVariables, then redispatches), so in a pre-norm block
 * x + attn(norm(x)); x + down(act(up(norm(x)))) the last pack is the MLP
 * down projection's input: that GEMM and the closing residual add (one
 * of the two adds; an add saves nothing) are never recomputed.  Not so
 * where something after the down projection saves a tensor or runs it
 * inside a custom autograd Function, which saves only after its kernels:
 * dropout on the block output (its mask), LoRA adapters (peft runs the
 * base layer first), fp8 linears (Transformer Engine's and torchao's
 * Functions) and Transformer Engine modules; nor in MoE or hybrid blocks,
 * whose tails are other ops. */
static double early_stop_tail(const train_lkey *k, int moe, int hy,
			      const train_lcost *lc)
{
	double down, res;

	if (!k->ckpt_early_stop || moe || hy || k->dropout || k->lora_rank > 0 ||
	    k->lin == GP_FP8 || k->te_modules)
		return 0.0;
	down = op_pass(lc, "mlp_down", 0);
	res = op_pass(lc, "residual", 0);
	if (!(down > 0.0))
		return 0.0;
	return down + (res > 0.0 ? res / 2.0 : 0.0);
}

/* What recompute re-runs in the backward of a layer whose forward is
 * priced in lc: all of it (full) but the tail the non-reentrant
 * checkpoint stops before (early_stop_tail), its attention (selective),
 * the recompute_modules' share mod, or (op) all but fused attention
 * (attn_t) and the kept GEMMs (kept_t); fused attention too where the
 * policy's save list lacks the kernel that ran (sac_attn_recompute:
 * memory_act.c act_op_saved). */
static void layer_recompute(const train_lkey *k, double mod, double attn_t,
			    double kept_t, double tail, train_lcost *lc)
{
	switch (k->recompute) {
	case GP_RECOMPUTE_FULL:
		lc->rec_full = lc->fwd.t - tail;
		break;
	default:
		break;
	}
	if (!mem_core_attn_recomputed(k->recompute, k->rec_mods))
		lc->rec_sel = 0;
	lc->rec_sel += mod;
	/* recompute op re-runs the forward but fused attention and the
	 * kept GEMMs (act.c); unfused attention is not kept. */
	if (k->recompute == GP_RECOMPUTE_OP)
		lc->rec_sel += lc->fwd.t -
			(k->flash && !k->sac_attn_recompute ? attn_t : 0.0) -
			kept_t;
}

/* A clamped gated activation (model ffn_clamp: GPT-OSS's swiglu_limit 7,
 * Megatron-Core's activation_func_clamp_value) on the routed experts:
 * Megatron-Core's weighted_bias_quick_geglu_impl (core_v0.17.0
 * fusions/fused_bias_geglu.py, which TEGroupedMLP's bias_act_func calls
 * with the clamp value) clamps outside its fused Function: "x_glu,
 * x_linear = input.chunk(2, -1); input = torch.cat((x_glu.clamp(min=None,
 * max=clamp_value), x_linear.clamp(min=-clamp_value, max=clamp_value)),
 * -1)".  With a = the activation's output elements, fc1's output is
 * two halves of a.  Forward: each clamp reads and writes its half (2 a),
 * the cat reads and writes the whole (4 a): 8 a elements moved in three
 * kernels.  Backward (autograd): cat's gradient is a view; each clamp's
 * gradient is PyTorch's clamp_backward (torch/csrc/autograd/
 * FunctionsManual.cpp, the Scalar overload), which builds a mask and
 * selects: "auto zero = at::scalar_tensor(0., grad.options()); return
 * where((self >= *min).logical_and_(self <= *max), grad, zero);" with
 * both bounds, "return where(self <= *max, grad, zero);" with max alone.
 * The masks are bool tensors, 1 B an element; scalar_tensor on a CUDA
 * device is "at::empty({}, options).fill_(s)" (aten TensorFactories.cpp),
 * one fill kernel of one element.  Per element of a half, x_linear: ge
 * and le read the input and write a mask (A + 1 each), logical_and_
 * reads two masks and writes one in place (3), where reads the mask and
 * the gradient and writes the gradient (1 + 2 A); x_glu: le (A + 1) and
 * where (1 + 2 A).  Then chunk's backward writes the two halves'
 * gradients into one tensor (reads 2 a, writes 2 a elements): in bytes
 * a (11 A + 8), nine kernels with the two fills.  Memory-bound.  Under
 * moe_act recompute the forward re-runs with the activation
 * (layer_compute). */
static double moe_clamp_costs(tenv *e, const train_lkey *k, const gp_op *o,
			      train_lcost *lc)
{
	double a = o->elems / 1.5;   /* moe_act's elems: 1.5 per output */
	double half = a * k->A;      /* bytes of one half, or of the output */
	double t = 2.0 * t_mem(e, k->half, 2.0 * half) +
		t_mem(e, k->half, 4.0 * half);
	/* a mask's bytes (bool) */
	double mk = a;
	double tb =
		/* x_linear: ge, le, logical_and_, where */
		2.0 * t_mem(e, k->half, half + mk) + t_mem(e, k->half, 3.0 * mk) +
		t_mem(e, k->half, mk + 2.0 * half) +
		/* x_glu: le, where */
		t_mem(e, k->half, half + mk) + t_mem(e, k->half, mk + 2.0 * half) +
		/* chunk's backward: the halves into one gradient */
		t_mem(e, k->half, 4.0 * half) +
		/* the two zeros' fills */
		2.0 * t_mem(e, k->half, k->A);

	add_op(lc, "moe_clamp", t, tb, 0, 0);
	return t;
}

/* The routed experts' fc2 bias (model linear_bias: GPT-OSS's biases on
 * every linear), which Megatron-Core adds after the grouped GEMM one
 * local expert at a time: TEGroupedMLP._apply_bias (core_v0.17.0
 * transformer/moe/experts.py) "torch.cat([t + b * p for t, b, p in
 * zip(torch.split(intermediate_parallel.view(-1, shape[-1]),
 * tokens_per_expert), bias_parallel, torch.split(permuted_probs,
 * tokens_per_expert))]).view(shape).to(intermediate_parallel.dtype)" --
 * fc2 is built with skip_bias_add=True so that the router's probability
 * weights the bias too.  The rows t and the bias b are in the
 * activations' dtype (a bytes an element); the probabilities p are in
 * the router's, except that the flex dispatcher upcasts them: HybridEP's
 * and DeepEP's dispatch (core_v0.17.0 token_dispatcher.py
 * _HybridEPManager.dispatch and _DeepepManager) "only supports float32
 * probs" and runs "self.token_probs = self.token_probs.float()" when the
 * router's are 16-bit (GPT-OSS's bridge sets no moe_router_dtype, so its
 * router's logits and probabilities are bf16 under alltoall, fp32 under
 * flex).  PyTorch's type promotion then makes b * p, the add and the cat
 * q = 4 bytes an element, and the closing .to() a cast back to a.  Per
 * element of the rows, forward: b * p writes q, the add reads a + q and
 * writes q, the cat reads and writes q, the cast (q > a only) reads q and
 * writes a -- 6 a with 16-bit probabilities, 14 a (28 B) with fp32 ones.
 * Backward (autograd; the cat's gradient is a view, narrowed per
 * expert): the cast's backward (q > a) reads a and writes q, the add's
 * gradient to t is cast back to t's dtype (q > a: reads q, writes a), per
 * expert the bias's gradient (g * p written and read, g read: 3 q) and
 * the probability's (g * b, summed over the width: 3 q), and the split's
 * gradient is not a view: torch.split with a list of sizes is
 * split_with_sizes, whose backward (PyTorch torch/csrc/autograd/
 * FunctionsManual.cpp split_with_sizes_backward) ends "auto ret =
 * at::cat(grads_all_defined, dim); return ret;", one kernel copying the
 * experts' row gradients into fc2's output gradient (reads a, writes a)
 * -- 8 a, or 20 a (40 B) with fp32 ones.  Memory-bound kernels, two a
 * local expert and the cat (and the cast) forward, four (five) a local
 * expert, the split's cat and the cast backward.  Returns the forward's
 * kernel launches (the host's). */
static double moe_bias_costs(tenv *e, const train_lkey *k, const gp_op *o,
			     train_lcost *lc)
{
	double el = o->batch > 1.0 ? o->batch : 1.0;  /* experts touched */
	double n = o->m * o->batch * o->n / el;  /* one expert's elements */
	double a = k->A;
	double q = k->ep_flex && a < 4.0 ? 4.0 : a;  /* b * p's bytes */
	int cast = q > a;
	double t = el * (t_mem(e, k->half, q * n) +
			 t_mem(e, k->half, (a + 2.0 * q) * n)) +
		t_mem(e, k->half, 2.0 * q * n * el) +
		(cast ? t_mem(e, k->half, (q + a) * n * el) : 0.0);
	double tb = (cast ? t_mem(e, k->half, (a + q) * n * el) : 0.0) +
		el * ((cast ? t_mem(e, k->half, (q + a) * n) : 0.0) +
		      2.0 * (t_mem(e, k->half, 2.0 * q * n) +
			     t_mem(e, k->half, q * n))) +
		/* the split's backward: cat of the row gradients */
		t_mem(e, k->half, 2.0 * a * n * el);

	add_op(lc, "moe_bias", t, tb, 0, 0);
	return 2.0 * el + 1.0 + cast;
}

/* The attention op of a layer averaged over the model's layers, its
 * sliding-window ones (model.sliding_window: GPT-OSS attends over the last
 * 128 tokens in every second layer, Megatron-Core's window_attn_skip_freq
 * 2) priced at the keys their kernel computes.  A fused kernel walks the
 * key tiles that meet its query tile's band and no others:
 * FlashAttention-2's local attention (csrc/flash_attn/src/
 * flash_fwd_kernel.h) starts at "n_block_min = ... (m_block * kBlockM +
 * seqlen_k - seqlen_q - window_size_left) / kBlockN" and stops at the
 * diagonal's tile; Transformer Engine hands cuDNN the window as its
 * diagonal band (fused_attn_f16_arbitrary_seqlen.cu, v2.14:
 * "sdpa_options.set_diagonal_band_left_bound(window_size_left + 1)").  A
 * window of W keys ending at the diagonal (Megatron-Bridge's GPT-OSS
 * bridge: window_size (sliding_window - 1, 0)) meets 1 + ceil((W - 1) /
 * 128) key tiles of 128 from every query tile of 128 rows -- 2 at W = 128,
 * 256 keys a query where the window holds 128 -- computed whole and masked
 * on the way (both edge tiles), at the short K loop's fill (gemm_eff).
 * An unfused kernel (TE's UnfusedDotProductAttention: "converts
 * window_size to an 'arbitrary' mask"; Hugging Face's eager attention adds
 * the mask to the scores) and a fused one handed an explicit mask
 * (attn_square) compute the whole square either way: a sliding layer
 * costs a full one.  Cross-check: cuDNN 9.22 on GB200 (cudnn-frontend
 * benchmark/sdpa_benchmark_training results/gpt_oss/gb200, bf16, window
 * 128, head dim 64, 2 sequences x 128 heads of 4096 tokens -- the 256
 * head-sequences of a GPT-OSS micro-batch of 4 at 64 query heads) runs
 * forward 0.210 ms, backward 0.465 ms (non-deterministic), this 0.129 and
 * 0.416; cuDNN 9.19 on H200 (results/h200_919_only_cudnn, GPT-OSS's 64
 * query and 8 KV heads, window 1024, 2 sequences of 4096: 9 tiles, 1152
 * keys) 0.358 and 1.042 ms, this 0.395 and 1.160.
 *
 * In FP8 (fp8_attention: Transformer Engine's fp8_dpa, which
 * Megatron-Core hands the MXFP8 recipe from config.fp8_dot_product_attention,
 * core_v0.18.0 fp8_utils.py "MXFP8BlockScaling(fp8_format=fp8_format,
 * fp8_dpa=config.fp8_dot_product_attention)"; TE v2.16 passes the window
 * to the FP8 graphs too, fused_attn_fp8.cu "sdpa_backward_options.
 * set_diagonal_band_left_bound(window_size_left + 1)") the backward of a
 * sliding layer walks every key tile up to the diagonal, as a full causal
 * layer's does: cuDNN 9.22's FP8 and MXFP8 backward with window 128
 * (the same cudnn-frontend results, GB200, 2 x 128 heads of dim 64) take
 * 1.731 / 6.176 / 23.231 / 90.348 ms (fp8) and 2.080 / 7.427 / 27.940 /
 * 108.370 ms (mxfp8) at 4096 / 8192 / 16384 / 32768 tokens -- 3.6 to 3.9
 * times per doubling, the causal square's growth (4), where the bf16
 * backward's 0.465 / 0.911 / 1.818 / 3.692 doubles with the band (GB300
 * alike: mxfp8 1.871 / 6.648 / 24.996 / 96.913).  The FP8 forwards grow
 * with the band (mxfp8 0.210 / 0.417 / 0.826 / 1.637): windowed here.  At
 * 32768 the mxfp8 backward is 812 TFLOPS counted over the causal
 * triangle (2.5 x 4 x 2 x 128 x 32768^2 / 2 x 64 FLOPs), the 16-bit
 * causal kernel's rate at head dim 64 (the llama3.1 results, head dim
 * 128, causal, bf16 backward 1148 TFLOPS, times this catalog's hd64 share
 * 0.72: 827).  So a sliding layer's FP8 backward is priced as a full
 * layer's.  On Blackwell the FP8 kernel's rate is not priced apart from
 * the 16-bit one's: MXFP8 causal attention runs within 3% of it, forward
 * and backward together (llama3.1 at 4096: mxfp8 0.326 + 1.305 ms, bf16
 * 0.391 + 1.198 ms).  Hopper's FP8 kernel is (train_price.c
 * train_attn_fp8_sm90), its windows refused (train.lua). */
#define ATTN_KEY_TILE 128.0

static double attn_layers_time(const tenv *e, const train_lkey *k,
			       const gp_op *o, int bwd)
{
	const gp_model *m = e->m;
	double t = train_attn_time(e, k, o, bwd), ls, span, f;
	gp_op w;

	ls = m->sliding_window > 0 ? m->sliding_layers : 0;
	if (!(ls > 0) || !k->flash || e->d->attn_square || !(o->k > 0) ||
	    (bwd && k->fp8_attn))
		return t;
	span = (1.0 + ceil((m->sliding_window - 1.0) / ATTN_KEY_TILE)) *
		ATTN_KEY_TILE;
	if (span >= o->k)
		return t;
	f = span / o->k;
	w = *o;
	w.flop *= f;
	w.kv *= f;
	w.k = span;
	return ((m->layers - ls) * t + ls * train_attn_time(e, k, &w, bwd)) /
		m->layers;
}

/* The operators' compute of a layer into lc: its GEMMs, attention,
 * element-wise ops, residual adds, eager copies and the host's launch
 * wait, and what recompute re-runs. */
static void layer_compute(tenv *e, const train_lkey *k, int kind,
			  train_lcost *lc)
{
	const gp_model *m = e->m;
	int moe = kind == 'E', hy = m->pattern[0] != 0;
	gp_op ops[GP_MAX_LAYER_OPS];
	gp_op_cfg oc;
	double h = m->hidden, nk = 0, o_k = 0, mod = 0, up = 0;
	double attn_t = 0, kept_t = 0, qv = 0, eg = 0, ng = 0, nb = 0;
	double ne = 0, ge = 0;   /* the experts' host launches, GPU time */
	double ne2 = 0, ge2 = 0, egd = 0;  /* of them after act_sync's wait */
	double gb2 = 0;   /* the activation's recompute and fc2's backward */
	int i, n, eager = k->eager;
	unsigned rm = k->recompute == GP_RECOMPUTE_FULL ? 0 : k->rec_mods;
	int act_sync = moe_act_sync(e, k, moe);
	/* recompute_modules "moe": MoELayer re-runs its whole forward in
	 * the backward (tensor_parallel.checkpoint of custom_forward,
	 * moe_layer.py; memory_act.c): every op of the MoE block (scope
	 * MoE) and the dispatcher's passes, their forward time once more
	 * (moe_f); the dispatch and combine all-to-alls inside it run
	 * again too (train_stage.c stage_base). */
	int rmoe = moe && (rm & GP_RECMOD_MOE);
	double moe_f = 0, f1;

	/* recompute_modules re-run in backward (act.c): the norms, MLA's
	 * up-projections and rope, the MoE activation.  The up-projections
	 * are part of the qkv GEMM here (model_ops.c): their share of its
	 * weights, so of its FLOPs (same tokens, same kernel). */
	if ((rm & GP_RECMOD_MLA_UP) && m->mla.kv_lora_rank > 0)
		up = model_mla_up_weights(m) / (model_attn_weights(m) -
			m->heads * (double)m->mla.v_head_dim * h);
	/* recompute op keeps the odd-numbered aten.mm outputs, of fp8
	 * linears too (act.c: q and v of wq, wk, wv; the gate, or fc1;
	 * w2): their share of each fused GEMM here, by output width. */
	if (k->recompute == GP_RECOMPUTE_OP) {
		gp_widths w;

		model_widths(m, &w);
		qv = (w.q + w.v) / (w.q + w.k + w.v);
	}
	layer_op_cfg(k, e->d->attn_square, &oc);
	n = model_layer_ops(m, &oc, ops);
	for (i = 0; i < n; i++) {
		const gp_op *o = &ops[i];
		double bytes, t, tb_, nk0 = nk, nb0 = nb, f0 = lc->fwd.t;
		int nops0 = lc->nops;

		/* This kind of layer's ops (model.h model_op_in: a
		 * hybrid stack's layer is one block). */
		if (!model_op_in(o->scope, kind, hy))
			continue;
		switch (o->kind) {
		case GP_OP_GEMM:
			t = lc->fwd.t;
			gemm_costs(e, k, o, lc, &nk, &nb, &o_k);
			/* the local experts each expert GEMM covers */
			if (strcmp(o->name, "moe_up") == 0 ||
			    strcmp(o->name, "moe_down") == 0)
				eg += o->batch;
			if (strcmp(o->name, "moe_down") == 0)
				egd += o->batch;
			/* fc2's bias, added per local expert after it
			 * (the fused grouped MLP's is in its epilogue) */
			if (moe && !eager && m->linear_bias &&
			    !k->fused_mlp &&
			    strcmp(o->name, "moe_down") == 0)
				nk += moe_bias_costs(e, k, o, lc);
			if (up > 0 && strcmp(o->name, "qkv") == 0)
				mod += up * (lc->fwd.t - t);
			/* recompute_modules mlpwi: the dense MLP's input
			 * projections (gate and up, fused here as
			 * mlp_up) run again in the backward; its down
			 * projection does not, no backward op reading
			 * its output (memory_act.c; JAX's remat keeps
			 * only what the backward reads of the re-run
			 * forward). */
			if ((rm & GP_RECMOD_MLPWI) && !moe &&
			    strcmp(o->name, "mlp_up") == 0)
				mod += lc->fwd.t - t;
			if (qv > 0)
				kept_t += (lc->fwd.t - t) *
					(strcmp(o->name, "qkv") == 0 ? qv :
					 strcmp(o->name, "mlp_up") == 0 ?
					 (m->ffn_gated ? 0.5 : 1.0) :
					 strcmp(o->name, "mlp_down") == 0 &&
					 m->ffn_gated ? 1.0 : 0.0);
			break;
		case GP_OP_ATTN: {
			/* TE's FlashAttention's layout copies
			 * (fa_layout_costs), part of the module the
			 * selective recompute re-runs */
			double lf, lb;

			fa_layout_costs(e, k, &lf, &lb, &nk);
			t = attn_layers_time(e, k, o, 0) + lf;
			add_op(lc, o->name, t, attn_layers_time(e, k, o, 1) +
			       lb, 0, 1);
			lc->rec_sel = t;
			attn_t += t;
			cp_merge(e, k, lc);
			kv_repeat_costs(e, k, lc);
			/* Eager unfused: QK^T, scale, mask, (clamp,)
			 * softmax, cast, (dropout,) PV -- attn_time's
			 * kernels. */
			nk += !k->flash && eager ? 6.0 + k->dropout +
				k->attn_clamp : 1.0;
			break;
		}
		case GP_OP_ELEM:
			/* Training writes no KV cache (o->kv): an op that
			 * only writes it does not run. */
			if (strcmp(o->name, "kv_write") == 0)
				continue;
			/* The fused grouped MLP's activation (and its
			 * clamp) run in fc1's epilogue, backward in fc2's
			 * dgrad's (gemm_costs, FUSED_MLP_FWD_B). */
			if (moe && k->fused_mlp &&
			    strcmp(o->name, "moe_act") == 0)
				continue;
			bytes = o->act * k->A;
			t = train_t_op(e, o->flop, bytes, 0, 0, 0, 0, k->half);
			tb_ = train_t_op(e, 2.0 * o->flop, 1.5 * bytes, 0, 0, 0,
				      0, k->half);
			if (strcmp(o->name, "ssd_scan") == 0) {
				/* The scan's backward re-runs its state
				 * kernels, then its own (model_ops.c
				 * mamba_scan_bwd): not 1.5 times the
				 * forward's traffic but its own count. */
				double bf, ba, T = oc.seqs * oc.q;

				model_mamba_scan_bwd(m, oc.q, oc.tp, &bf, &ba);
				tb_ = train_t_op(e, T * bf, T * ba * k->A, 0, 0,
						 0, 0, k->half);
			} else if (strcmp(o->name, "conv1d") == 0) {
				/* MambaSplitConv1dScanCombinedFn keeps the
				 * conv's input (zxbcdt), not its output: its
				 * backward re-runs it ("xBC_conv = ...
				 * causal_conv1d_fwd_function(...)", mamba_ssm
				 * ops/triton/ssd_combined.py) before
				 * causal_conv1d_bwd. */
				tb_ += t;
			}
			if (eager)
				eager_elem(e, k, o, &t, &tb_, &nk);
			else if (k->unfused_act && m->ffn_gated &&
				 (strcmp(o->name, "mlp_act") == 0 ||
				  strcmp(o->name, "moe_act") == 0))
				act_unfused_costs(e, k, o, moe && k->probs_act &&
						  strcmp(o->name, "moe_act") == 0,
						  &t, &tb_, &nk);
			else if (strcmp(o->name, "rope_kv") == 0 &&
				 k->unfused_rope && !k->te_modules)
				mds_rope_costs(e, k, o, &t, &tb_, &nk);
			else if (strcmp(o->name, "rope_kv") == 0 &&
				 k->unfused_rope && k->attn_seq > 0)
				rope_thd_costs(e, k, o, &t, &tb_, &nk,
					       &lc->rope_gpu);
			else if (strcmp(o->name, "rope_kv") == 0 &&
				 rope_unfused(m, k))
				rope_unfused_costs(e, k, o, &t, &tb_, &nk);
			else if (strcmp(o->name, "qk_norm") == 0)
				/* Megatron-Core's q_layernorm and k_layernorm
				 * are two modules (TENorm each with the TE
				 * spec: core gpt_layer_specs "q_layernorm=
				 * TENorm if qk_layernorm else IdentityOp"),
				 * one kernel each on q and on k. */
				nk += 2;
			else
				nk += 1;
			add_op(lc, o->name, t, tb_, 0, 0);
			/* the clamp before the experts' fused activation:
			 * its three kernels, and again under recompute */
			if (moe && !eager && m->ffn_gated && m->ffn_clamp &&
			    strcmp(o->name, "moe_act") == 0) {
				double tc = moe_clamp_costs(e, k, o, lc);

				nk += 3;
				if ((rm & GP_RECMOD_MOE_ACT) && !rmoe)
					mod += tc;
			}
			/* recompute_modules mlp_act (a JAX dots policy
			 * over a plain MLP) re-runs the dense activation
			 * alone, from the kept fc1 output: its forward
			 * once more, as mlpwi re-runs it with fc1. */
			/* the Mamba layer's pre-norm is its layernorm:
			 * Megatron-Core's MambaLayer checkpoints "norm"
			 * under recompute_modules layernorm as
			 * TransformerLayer does its two */
			if (((rm & GP_RECMOD_LAYERNORM) &&
			     (strcmp(o->name, "attn_norm") == 0 ||
			      strcmp(o->name, "mlp_norm") == 0 ||
			      strcmp(o->name, "mamba_norm") == 0)) ||
			    (up > 0 && strcmp(o->name, "rope_kv") == 0) ||
			    ((rm & GP_RECMOD_MOE_ACT) && !rmoe &&
			     strcmp(o->name, "moe_act") == 0) ||
			    ((rm & (GP_RECMOD_MLPWI | GP_RECMOD_MLP_ACT)) &&
			     !moe && strcmp(o->name, "mlp_act") == 0))
				mod += t;
			break;
		}
		if (rmoe && o->scope == GP_SCOPE_MOE)
			moe_f += lc->fwd.t - f0;
		/* The experts' stretch after the dispatcher's host wait
		 * (MOE_A2A_POST_OPS): their linears and activation, every
		 * op this one added (fc2's bias loop after its GEMM, the
		 * clamp after the activation).  Of it, after the clamp's
		 * host wait (act_sync): the activation itself, fc2 and
		 * its bias loop. */
		if (moe && (strcmp(o->name, "moe_up") == 0 ||
			    strcmp(o->name, "moe_act") == 0 ||
			    strcmp(o->name, "moe_down") == 0) &&
		    lc->nops > nops0) {
			int j;

			ne += nk - nk0;
			for (j = nops0; j < lc->nops; j++)
				ge += lc->ops[j].fwd;
			if (act_sync && strcmp(o->name, "moe_act") == 0) {
				ne2 += 1.0;
				ge2 += lc->ops[nops0].fwd;
				gb2 += lc->ops[nops0].fwd;
			} else if (act_sync &&
				   strcmp(o->name, "moe_down") == 0) {
				ne2 += nk - nk0;
				for (j = nops0; j < lc->nops; j++)
					ge2 += lc->ops[j].fwd;
				gb2 += lc->ops[nops0].bwd;
			}
		}
		/* A captured module's host work, fp8's share with it, is
		 * the replay's, both ways (the backward replays its own
		 * graph). */
		if (!eager && graphed(k, moe, o->name)) {
			ng += nk - nk0;
			nb = nb0;
		}
	}
	f1 = lc->fwd.t;
	if (moe && k->ep_einsum) {
		/* DeepSpeed's MOELayer: its dispatch and combine GEMMs and
		 * the gate's mask passes, in place of a permute */
		ge += moe_einsum_costs(e, k, lc);
	} else if (moe && k->ep > 1 && !eager && !k->ep_flex &&
		   !k->ep_allgather) {
		/* its passes before the experts: permutation 1 and the
		 * sort */
		ge += moe_permute_costs(e, k, lc);
	} else if (moe && k->ep_allgather && k->unfused_permute && !eager) {
		/* the all-gather dispatcher's PyTorch gathers and
		 * scatters (core_v0.6.0) */
		ge += moe_allgather_unfused_costs(e, k, lc);
	}
	/* DeepEP's local permute and unpermute, Megatron-Core's
	 * (moe_deepep_permute_costs; the megatron stack's dispatcher) */
	if (moe && k->ep > 1 && !eager && k->ep_flex && !k->ep_hybridep &&
	    k->te_modules) {
		ge += moe_deepep_permute_costs(e, k, lc);
		nk += MOE_DEEPEP_PERMUTE_OPS;
		ne += MOE_DEEPEP_POST_OPS;
	}
	if (moe && k->moe_fp8_copy && k->lin == GP_FP8 && !eager) {
		moe_fp8_pad_costs(e, k, &nk, &nb, lc);
		/* inside the grouped MLP's forward: the experts' stretch
		 * after the dispatcher's host wait */
		ne += MOE_FP8_PAD_OPS;
		ge += lc->ops[lc->nops - 1].fwd;
	}
	/* The shared experts' own modules (shared_expert_host) */
	if (moe && !eager && k->te_modules && m->moe.shared_experts > 0) {
		double gf, sf, sb;

		shared_expert_host(k, &gf, &sf, &sb);
		nk += gf + sf;
		/* captured with the router (cuda_graph_scope moe_router):
		 * replayed, both ways */
		if (k->graph_router)
			ng += gf;
		else
			nb += sb;
	}
	/* The eager MoE block's routing ops (HF_MOE_ROUTE_OPS) and its
	 * kernels beyond the experts' MLPs (hf_moe_costs), the
	 * per-expert ones in the experts' stretch. */
	if (moe && eager) {
		double gx;

		nk += HF_MOE_ROUTE_OPS;
		hf_moe_costs(e, k, lc, &gx);
		ge += gx;
	}
	if (rmoe)
		mod += moe_f + (lc->fwd.t - f1);
	/* The layer's collectives (CP's reads the attention priced above)
	 * before its host wait, whose stretch after the dispatcher's wait
	 * holds the dispatch all-to-all. */
	layer_comm(e, k, kind, lc);
	/* the offset tensor's copy, a host call of its own */
	if (act_sync)
		nk += 1.0;
	layer_extras(e, k, kind, nk, ng, eg, nb, o_k, ne, ge, act_sync, ne2,
		     ge2, egd, (rm & GP_RECMOD_MOE_ACT) ? gb2 : -1.0, lc);
	layer_recompute(k, mod, attn_t, kept_t,
			early_stop_tail(k, moe, hy, lc), lc);
}

/* A hybrid stack's layer of kind `kind` (layer_params): one block and
 * its pre-norm, each block's weights shared by the layers of its kind
 * (gp_params: attention over the * layers, mamba over the M ones, the
 * dense MLPs over the - ones, routers and experts over the E ones); the
 * norms are spread over every layer as a plain model's are.  TP splits
 * a block's weights: MambaMixer's in_proj column-parallel, out_proj
 * row-parallel, conv1d, A_log, D, dt_bias and the gated norm by heads
 * and groups ("self.nheads_local_tp = self.nheads // self.tp_size",
 * megatron/core/ssm/mamba_mixer.py).  Its linears are in_proj and
 * out_proj, (in_width + d_inner) x h. */
static void hybrid_params(const tenv *e, const train_lkey *k, int kind,
			  train_lcost *lc)
{
	const gp_model *m = e->m;
	double norms = e->p.norms / m->layers;
	double n = model_pattern_in(m, (char)kind, 0, m->layers);
	double di = (double)m->mamba.heads * m->mamba.head_dim;

	lc->params = norms / k->tp;
	if (!(n > 0))
		return;
	switch (kind) {
	case 'M':
		lc->params += e->p.mamba / n / k->tp;
		lc->linw = (model_mamba_in_width(m) + di) * m->hidden / k->tp;
		break;
	case '*':
		lc->params += e->p.attention / n / k->tp;
		lc->linw = e->p.attention / n / k->tp;
		break;
	case '-':
		lc->params += e->p.dense_mlp / n / k->tp;
		lc->linw = e->p.dense_mlp / n / k->tp;
		break;
	default:
		lc->eparams = e->p.experts / n / k->etp / k->ep;
		lc->params += e->p.router / n + lc->eparams;
		lc->linw = lc->eparams;
		break;
	}
}

/* The parameters of one layer on this GPU (lc->params, and of an MoE
 * layer its experts', lc->eparams; of them its linears', the weights an
 * fp8 run casts, lc->linw: not the norms nor the router). */
static void layer_params(const tenv *e, const train_lkey *k, int kind,
			 train_lcost *lc)
{
	const gp_model *m = e->m;
	double attn = e->p.attention / m->layers;
	double norms = e->p.norms / m->layers;
	int nmoe = model_moe_layers(m), moe = kind == 'E';

	if (m->pattern[0]) {
		hybrid_params(e, k, kind, lc);
		return;
	}
	lc->params = (attn + norms) / k->tp;
	lc->linw = attn / k->tp;
	if (moe) {
		lc->eparams = e->p.experts / nmoe / k->etp / k->ep;
		lc->params += e->p.router / nmoe + lc->eparams;
		lc->linw += lc->eparams;
	} else if (m->layers > nmoe) {
		/* A model whose every layer is MoE has no dense layer
		 * (its dense costs are never counted). */
		lc->params += e->p.dense_mlp / (m->layers - nmoe) /
			k->tp;
		lc->linw += e->p.dense_mlp / (m->layers - nmoe) / k->tp;
	}
}

/* Copies of a token the flex dispatcher sends: one per EP rank holding
 * any of its top_k experts, where the alltoall dispatcher sends one per
 * expert ("For dropless training, output size is static (num_tokens *
 * topk)", token_dispatcher.py at Megatron-Bridge 25.11's pin).  HybridEP
 * sizes a rank's receive buffer for every source token once ("The
 * maximum token count assumes all tokens could be routed to a single
 * expert: max_num_of_tokens = max_num_of_tokens_per_rank x
 * num_of_ranks_per_node x num_of_nodes", token_buffer max_tokens x
 * hidden_dim; DeepEP hybrid-ep docs/Hybrid-EP_Implementation.md 4.2) and
 * permutes to the local experts after the transfer, as DeepEP's normal
 * dispatch sends a token to each rank in is_token_in_rank (serve_a2a.c
 * prices inference's the same way).  With experts e spread evenly, e / ep
 * a rank, and a token's k distinct experts uniform among them, a rank
 * holds none of them with probability C(e - e/ep, k) / C(e, k) =
 * prod_{i<k} (e - e/ep - i) / (e - i); the token reaches ep (1 - that)
 * ranks: 5.34 of Qwen3-30B-A3B's 8 picks at EP 8 (128 experts, 16 a
 * rank), 7.27 of DeepSeek-V3's 8 at EP 32, and k when every expert has a
 * rank of its own.  The count covers NVLink and the NICs alike: HybridEP
 * also sends a token once per remote node, a saving this does not take. */
static double flex_ranks(double experts, double k, double ep)
{
	double el = experts / ep, miss = 1.0;
	int i;

	if (!(experts > 0) || !(k > 0) || ep <= 1.0 || k > experts)
		return k;
	for (i = 0; i < (int)k; i++)
		miss *= fmax(0.0, experts - el - i) / (experts - i);
	return ep * (1.0 - miss);
}

/* The same count under NeMo AutoModel's FakeBalancedGate (BackendConfig
 * fake_balanced_gate, which its benchmark recipes set: "Fake balanced
 * gate is enabled to simulate ideal expert routing", docs/performance-
 * summary.md at v0.5.0, d02f49cb3).  Its forward, at noise 0 (the
 * default "fake_gate_noise: float = 0.0", which no benchmark YAML
 * sets): "indices = (torch.arange(n_tokens * a_exp, device=x.device).
 * view(-1, a_exp) % available_experts) + self.skip_first_n_experts"
 * (nemo_automodel/components/moe/layers.py FakeBalancedGate.forward,
 * skip 0 where MoE builds it) -- token i of the rank's n_tokens takes
 * experts i k, i k + 1, .., i k + k - 1 mod e: k CONSECUTIVE experts.
 * The experts lie contiguously on the EP ranks ("local_expert_indices_
 * offset = self.ep_rank * num_local_experts", moe/experts.py
 * GroupedExpertsDeepEP.init_token_dispatcher), e / parts to a part (a
 * rank, or a node of EP ranks), so the token reaches the parts its
 * window of k spans: with g = gcd(k, e) the window starts at every
 * multiple of g equally often (i k mod e runs through them), and the
 * count is the mean over those starts of the distinct parts of
 * experts s .. s + k - 1 mod e.  Qwen3-30B-A3B at EP 8 (128 experts, 16
 * a rank, starts at multiples of 8): one rank (5.34 learned, flex_ranks);
 * DeepSeek-V3 at EP 64 (4 a rank, starts at multiples of 8): two
 * neighbouring ranks, one node of eight (3.6 to 5.3 nodes learned);
 * GPT-OSS-120B at EP 64 (2 a rank, k 4): two ranks, one node; Kimi K2
 * at EP 32 (12 a rank): starts 0, 8, 4 mod 12 reach 1, 2, 1 ranks, 4/3.
 * Every rank's tokens are spread the same way (i k mod e cycles through
 * the experts), so the share that stays on the own rank or node is 1 /
 * parts as with a learned router: the bytes, not their pattern, change.
 * A learned router (or the alltoall dispatcher's per-expert copies)
 * is as before. */
static double gate_reach(double experts, double k, double parts)
{
	long E = (long)experts, K = (long)k, g, s, j, n = 0;
	double per, sum = 0.0;

	if (E <= 0 || K <= 0 || !(parts > 1.0) || (double)E != experts ||
	    (double)K != k)
		return k;
	if (K >= E)
		return parts;
	per = experts / parts;
	for (g = E, j = K; j != 0;) {  /* g = gcd(E, K) */
		long r = g % j;

		g = j;
		j = r;
	}
	for (s = 0; s < E; s += g) {
		long first = (long)floor(s / per), prev = first, cnt = 1;

		for (j = 1; j < K; j++) {
			long p = (long)floor(((s + j) % E) / per);

			if (p != prev)
				cnt++;
			prev = p;
		}
		/* a window that wrapped back into its first part */
		if (cnt > 1 && prev == first)
			cnt--;
		sum += (double)cnt;
		n++;
	}
	return sum / (double)n;
}

/* The copies a token's flex dispatch sends over parts (EP ranks, or the
 * group's nodes): the gate's reach (above) or a learned router's. */
static double flex_copies(const train_lkey *k, const gp_model *m,
			  double parts)
{
	if (k->fake_gate)
		return gate_reach(m->moe.experts, m->moe.top_k, parts);
	return flex_ranks(m->moe.experts, m->moe.top_k, parts);
}

/* HybridEP's dispatch and combine through its torch API inside one
 * NVLink domain, as a fraction of the link's rate per direction, in the
 * bytes its benchmark counts: every token a rank receives, once per rank
 * (flex_ranks), its own included -- the bytes layer_comm's flex dispatch
 * prices.  DeepEP docs/README_Hybrid-EP.md ("Torch API", 4096 tokens,
 * hidden 7168, top-8, 8 local experts, random uniform router, "All
 * bandwidth values represent algorithm bandwidth"; tests/test_hybrid_ep.py
 * counts dispatched_hidden.numel() * 2 as the bytes), at 16 SMs, which is
 * Megatron-Core's default ("moe_hybridep_num_sms: int = 16 ... In pure
 * NVL scenarios, 16 SMs can generally achieve good bandwidth",
 * transformer_config.py), on NVLink 5's 900 GB/s a direction:
 *  8 ranks: B200 dispatch BF16 535.94, combine 530.86; GB200 550.10,
 *   538.44 GB/s -- a mean 538.8, 0.599 of the link;
 *  16..36 ranks (GB200): 472.84 / 474.48, 441.89 / 444.40, 485.50 /
 *   423.19, 469.96 / 418.27 -- a mean 453.8, 0.504 of the link.
 * The torch API's figure is what Megatron's flex dispatcher calls
 * (buffer.dispatch / combine); the kernel alone reaches 750.15 / 684.27
 * at 8 ranks: the rest is the call's preprocessing (the routing map's
 * exchange and the receive layout) and launch.  The engine's NCCL
 * all-to-all of the same bytes on 8 H100s runs at 0.83 of the achievable
 * link (comm_algo.c a2a_link_eff: a peer's 45 MiB on its 4 channels, not
 * doubled), 346 GB/s algorithm bandwidth at
 * 358 MiB, where HybridEP's 0.599 gives 270: the flex dispatch is priced
 * at HybridEP's.  On NVLink 5 that NCCL figure is bound by the channels a
 * peer gets (p2p_channels: 442 GB/s on 8 B200s) and already below
 * HybridEP's benchmark; a benchmark's clean rate is the most a training
 * step's dispatch reaches, so the slower of the two prices it.  Between
 * 8 and 16 ranks the fraction is interpolated; Hopper's link is taken at
 * the same fractions (no in-node Hopper figure is published). */
#define HYBRIDEP_NVL_8 0.599
#define HYBRIDEP_NVL_16 0.504

/* A rate that follows the SMs its kernels are given (moe_flex_sms)
 * through published points: linear in the SM count between them, the
 * highest point's rate held above it (no faster past the last SMs
 * measured: HybridEP's 8 -> 16 moved its rate by -7% to +4%, the link
 * or the kernel's pipeline binding, not its SMs), and below the lowest
 * in proportion to the SMs (each SM moving a fixed share: the SM-bound
 * limit).  pts holds n ascending SM counts, f the rates there. */
static double by_sms(const double *pts, const double *f, int n,
		     double sms)
{
	int i;

	if (sms <= pts[0])
		return f[0] * sms / pts[0];
	for (i = 1; i < n; i++)
		if (sms <= pts[i])
			return f[i - 1] + (f[i] - f[i - 1]) *
				(sms - pts[i - 1]) / (pts[i] - pts[i - 1]);
	return f[n - 1];
}

/* Inside the NVLink domain the rate stays at 16 SMs' whatever
 * moe_flex_sms: GB200's rows at 32 SMs (8 ranks 545.71 / 568.94, 16..36
 * ranks a mean 489.0 GB/s: 2.4% and 7.7% above 16 SMs') are not applied
 * here -- the one pair published in the domain, on GB200 only. */
static double hybridep_nvl_frac(double ranks)
{
	if (ranks <= 8.0)
		return HYBRIDEP_NVL_8;
	if (ranks >= 16.0)
		return HYBRIDEP_NVL_16;
	return HYBRIDEP_NVL_8 + (HYBRIDEP_NVL_16 - HYBRIDEP_NVL_8) *
		(ranks - 8.0) / 8.0;
}

/* What of that call is a token's, not its bytes'.  The same README rows
 * time the same dispatch (4096 tokens, the same routing) of FP8 tokens
 * too, which tests/test_hybrid_ep.py counts at "fp8_factor = (1 + 4 /
 * 128) / 2" of the BF16 bytes (the 1-byte elements and their scales):
 * a call of t = n (c + b / r) -- n token copies of b bytes, c what each
 * costs whatever its width (the routing map's scan and the receive
 * layout of the preprocessing, the 64-token chunks' flags, the
 * launches) -- then has its per-token share s = c / (c + b_bf16 / r)
 * from the two: t_fp8 / t_bf16 = f bw_bf16 / bw_fp8 = s + (1 - s) f,
 * f = 0.515625.  Torch API, 16 SMs, 8 ranks: B200 BF16 535.94 against
 * FP8 409.71 GB/s, s = 0.328; GB200 550.10 against 421.67, 0.324 -- a
 * mean 0.326; 16 ranks (GB200) 472.84 against 397.33, 0.202.  (At 24
 * to 36 ranks GB200's FP8 dispatch at 16 SMs, 281.73, 236.33 and 215.36
 * GB/s, takes as long as the BF16 one for half the bytes or longer:
 * bound by something else, no split to read.)  Any cost the FP8 call
 * has beyond its bytes (its scales a copy of their own) counts in s
 * here: an upper bound.  A token of b bytes then costs the reference
 * call's time per copy times s + (1 - s) b / b_ref, b_ref = 7168 x 2
 * bytes: Qwen3-30B-A3B's 2048-wide tokens 1.82 times the bytes' share
 * at 8 ranks, Qwen3-235B-A22B's 4096 1.25, DeepSeek-V3's 7168 1 (the
 * published rate).  Between 8 and 16 ranks s is interpolated as the
 * fraction is. */
#define HYBRIDEP_TOKEN_8 0.326
#define HYBRIDEP_TOKEN_16 0.202
#define HYBRIDEP_REF_BYTES (7168.0 * 2.0)

/* The reference call's time per copy of a token of `bytes` bytes,
 * relative to its bytes at the published rate (above). */
static double hybridep_nvl_token(double ranks, double bytes)
{
	double s = ranks <= 8.0 ? HYBRIDEP_TOKEN_8 : ranks >= 16.0 ?
		HYBRIDEP_TOKEN_16 : HYBRIDEP_TOKEN_8 + (HYBRIDEP_TOKEN_16 -
		HYBRIDEP_TOKEN_8) * (ranks - 8.0) / 8.0;

	if (!(bytes > 0.0))
		return 1.0;
	return (1.0 - s) + s * HYBRIDEP_REF_BYTES / bytes;
}

/* DeepEP's own intranode (normal) dispatch and combine through its torch
 * API, from the same README's DeepEP rows (4096 tokens, hidden 7168,
 * top-8, 8 local experts; algorithm bandwidth, the mean of BF16 dispatch
 * and combine, over NVLink 5's 900 GB/s): at 8 ranks the B200 table's
 * 16, 24 and 32 SM rows (348 / 302, 494 / 420, 619 / 524 GB/s) and
 * GB200's (362.01 / 310.21, 512.72 / 425.95, 615.78 / 519.57) -- a mean
 * 0.367, 0.515, 0.633 of the link; at 16 ranks (GB200) 328.80 / 278.34,
 * 442.47 / 378.32, 520.76 / 442.51 -- 0.337, 0.456, 0.535.  Unlike
 * HybridEP's, DeepEP's rate follows its SMs in the domain (+40% from 16
 * to 24), so it is read at the SMs given (by_sms; Megatron-Core's
 * default 20, train_stage.c FLEX_SMS_DEEPEP).  Its per-token share
 * (hybridep_nvl_token's FP8-against-BF16 split) from the same rows: B200
 * 246 / 348, 349 / 494, 443 / 619 GB/s and GB200 248.86 / 362.01,
 * 350.97 / 512.72, 447.76 / 615.78 at 8 ranks give s = 0.441, 0.442,
 * 0.423, 0.484, 0.490, 0.400 -- a mean 0.447; 16 ranks 242.51 / 328.80,
 * 338.87 / 442.47, 393.72 / 520.76 give 0.379, 0.326, 0.344 -- 0.349.
 *
 * At 24 ranks (GB200, the same table) DeepEP's combine falls to a third
 * of its dispatch: 324.64 / 126.53, 450.22 / 163.62 and 502.84 / 207.10
 * GB/s at 16, 24 and 32 SMs.  Dispatch and combine are priced at one
 * share of the link (layer_comm: the same bytes each), so the share that
 * gives their summed time is the harmonic mean of the two rates, 2 / (1
 * / dispatch + 1 / combine): 182.09, 240.01 and 293.37 GB/s, 0.202,
 * 0.267 and 0.326 of the link (their arithmetic mean, 0.251, 0.341 and
 * 0.394, would take the slow combine at the fast dispatch's rate; at 8
 * and 16 ranks, where the two rates are within 20% of each other, the
 * arithmetic means above are within 0.7% of the harmonic ones: 325 /
 * 323.4, 336.1 / 334.1, 410.4 / 407.9 GB/s).  Megatron-Core's DeepSeek-V3
 * account on GB200 NVL72 states the same collapse at 32 ranks, the
 * DeepEP build it ran (MNNVL "based on this community PR", DeepEP PR
 * #218): "In the EP32 scenario, the dispatch can only reach about 400
 * GB/s and the combine can only reach about 190 GB/s algorithm bandwidth
 * with 24 SMs" (docs/discussions/deepseek-v3-gb200-optimization, sec.
 * 2.2.1, Megatron-LM at the commit before 3c1b98e, Nov 2025): a harmonic
 * 257.6 GB/s, 0.286 of the link -- 7% above the 24-rank row held there,
 * and its Nsys timeline (image5, the same run after CUDA graphs) shows a
 * forward layer's DeepEP dispatch and combine at about 1.16 and 2.5 ms,
 * which 427 MB (4096 tokens, 7.27 ranks each (flex_ranks), 7168 x 2 B)
 * take at 370 and 170 GB/s.  The per-token share at 24 ranks from the
 * FP8 rows (258.33, 351.05, 405.04 GB/s against the BF16 dispatch's):
 * s = 0.273, 0.301, 0.257 -- 0.277.  Between 8, 16 and 24 ranks both
 * are interpolated, beyond 24 held (no DeepEP row is published past
 * 24 ranks but the account's single 24-SM figure at 32). */
static const double DEEPEP_NVL_SMS_AT[3] = { 16.0, 24.0, 32.0 };
static const double DEEPEP_NVL_8[3] = { 0.367, 0.515, 0.633 };
static const double DEEPEP_NVL_16[3] = { 0.337, 0.456, 0.535 };
static const double DEEPEP_NVL_24[3] = {
	2.0 / (1.0 / 324.64 + 1.0 / 126.53) / 900.0,
	2.0 / (1.0 / 450.22 + 1.0 / 163.62) / 900.0,
	2.0 / (1.0 / 502.84 + 1.0 / 207.10) / 900.0 };
#define DEEPEP_TOKEN_8 0.447
#define DEEPEP_TOKEN_16 0.349
#define DEEPEP_TOKEN_24 0.277
#define FLEX_SMS_DEEPEP_NVL 20.0  /* Megatron-Core: "historical default 20" */

/* Those rows were read on NVLink 5, where the kernels' SMs, not the
 * link, bind them (the rate follows the SMs, +40% from 16 to 24, and
 * stays under 0.64 of the 900 GB/s), so what they give is a rate in
 * bytes a second that a call's SMs reach, not a share of any link: on a
 * slower link the call runs at the slower of that rate and what the
 * kernels reach where the link binds.  DeepEP publishes that second
 * figure on Hopper, with its test (tests/test_intranode.py at ebfe47e,
 * 2025-02-24: 8 ranks, 4096 tokens, hidden 7168, top-8, "for i in (24,
 * )": 24 SMs, the best NVL chunk; the bytes every token a rank receives,
 * recv_x, once a rank, as layer_comm counts them):
 *  H20, NVLink 4's 18 links as H100's (450 GB/s a direction): "the max
 *   bandwidth is 337.35 GB/s" (DeepEP issue #16, 2025-02-25; the
 *   maintainers: "the theoretical unidirectional bandwidth is only 450
 *   GB/s ... the achievable bandwidth may fall below 380 GB/s") -- 0.750
 *   of the link;
 *  H800, 8 links (200 GB/s): "We test normal kernels on H800 (~160 GB/s
 *   NVLink maximum bandwidth)", "Intranode | 8 | 153 GB/s (NVLink) | 8 |
 *   158 GB/s (NVLink)" (its README at ebfe47e; dispatch, combine) --
 *   0.765 and 0.79.
 * Both links give the same share where the SMs' rate (464 GB/s at 24 SMs
 * from the rows above) would be faster still: the link binds, at 0.750 of
 * it (H20's, the link H100 has).  The serving step prices DeepEP's normal
 * kernels on the link alone too (serve_a2a.c up_bw).  On NVLink 5 the
 * rows stay under that bound (0.633 x 900 = 570 against 675 GB/s), so
 * every Blackwell figure is as it was.  Hopper at Megatron-Core's 20 SMs:
 * the SMs' 0.441 x 900 = 397 GB/s, the H100 link's 0.750 x 450 = 338:
 * the link, where the rows read as a share of the link gave 0.441 x 450
 * = 198. */
#define DEEPEP_NVL_LINK 0.750
#define DEEPEP_NVL_ROWS_BW 900e9  /* B/s a direction: NVLink 5, the rows' */

/* by ranks through the 8-, 16- and 24-rank figures, linear between them
 * (held outside) */
static double by_ranks(double r, double f8, double f16, double f24)
{
	if (r <= 8.0)
		return f8;
	if (r >= 24.0)
		return f24;
	if (r >= 16.0)
		return f16 + (f24 - f16) * (r - 16.0) / 8.0;
	return f8 + (f16 - f8) * (r - 8.0) / 8.0;
}

/* DeepEP's share of the link inside the domain at `sms` SMs, and its
 * time per copy of a `bytes`-wide token relative to the bytes at that
 * rate (above; as hybridep_nvl_token). */
static double deepep_nvl_frac(double ranks, double sms)
{
	return by_ranks(ranks, by_sms(DEEPEP_NVL_SMS_AT, DEEPEP_NVL_8, 3, sms),
			by_sms(DEEPEP_NVL_SMS_AT, DEEPEP_NVL_16, 3, sms),
			by_sms(DEEPEP_NVL_SMS_AT, DEEPEP_NVL_24, 3, sms));
}

/* DeepEP's rate inside the domain, B/s of the bytes layer_comm counts:
 * the SMs' rate from the NVLink 5 rows or the link's, the slower
 * (above). */
static double deepep_nvl_rate(const gp_topo *t, double ranks, double sms)
{
	return fmin(deepep_nvl_frac(ranks, sms) * DEEPEP_NVL_ROWS_BW,
		    DEEPEP_NVL_LINK * t->up.bw);
}

static double deepep_nvl_token(double ranks, double bytes)
{
	double s = by_ranks(ranks, DEEPEP_TOKEN_8, DEEPEP_TOKEN_16,
			    DEEPEP_TOKEN_24);

	if (!(bytes > 0.0))
		return 1.0;
	return (1.0 - s) + s * HYBRIDEP_REF_BYTES / bytes;
}

/* The flex dispatcher across nodes.  DeepEP's internode (normal) dispatch
 * and HybridEP's send a token once to each NODE holding any of its top_k
 * experts over RDMA, and the receiving node forwards it over NVLink to
 * the ranks that hold them (DeepEP docs/legacy.md: "NVLink for
 * intranode communication, RDMA network for internode"; HybridEP's
 * dispatch likewise, docs/README_Hybrid-EP.md).  With the experts spread
 * evenly over N nodes, a token reaches N (1 - C(e - e/N, k) / C(e, k))
 * of them (flex_ranks over nodes: 3.6 of DeepSeek-V3's 8 picks at EP 32
 * on 4 nodes, 2.0 of Qwen3-30B-A3B's at EP 16 on 2), its own node
 * included.  Both projects publish their internode rate in exactly those
 * bytes -- "the results are logical bandwidth ... contains local rank
 * traffic": DeepEP's tests/test_internode.py counts num_rdma_token_sent
 * as each token's distinct nodes (inplace_unique over topk_idx / experts
 * a node), HybridEP's tests/utils.py count_rdma_send_from_routing_map
 * does "not set the local node map to zeros" to align with it -- so a
 * call moves those bytes at the kernels' rate, plus the call's own cost.
 * The kernels' rates, as a share of the NIC's nominal rate a GPU (50 GB/s
 * for a ConnectX-7 400 Gb/s, "~50 GB/s maximum bandwidth"), 4096 tokens,
 * hidden 7168, top-8:
 *  DeepEP (docs/legacy.md, H800 + CX7, normal kernels, the dispatch
 *   kernel's time alone: test_internode.py times it with the layout
 *   handle cached, its notify apart): EP 16 dispatch 43 / combine 43
 *   GB/s, EP 32 58 / 57, EP 64 51 / 50 -- 0.86, 1.15, 1.01 at 2, 4, 8
 *   nodes;
 *  HybridEP (docs/README_Hybrid-EP.md, H100, 8 local experts a rank,
 *   BF16 dispatch and combine at 8 SMs, its default across nodes:
 *   csrc/hybrid_ep/config.cuh "(num_of_nodes == 1) ? 24 : 8"), "Kernel
 *   Only": 16 ranks 76.80 / 68.00, 32 ranks 54.50 / 56.40, 64 ranks
 *   50.55 / 51.03 -- 1.448, 1.109, 1.016.
 * The call's own cost -- the routing map's exchange, the receive layout
 * the host waits for, the launches -- is what HybridEP's "Torch API"
 * column adds to its "Kernel Only" one for the same bytes (4096 x 1.994,
 * 3.614, 5.273 nodes x 7168 x 2 B: 117.1, 212.2, 309.6 MB): at 16 ranks
 * dispatch 57.74 against 76.80 GB/s, 0.503 ms, combine 56.96 against
 * 68.00, 0.334 ms; at 32, 0.666 and 0.425 ms; at 64, 1.343 and 0.426 ms
 * -- a mean 0.419, 0.546, 0.885 ms a call.  Megatron's flex dispatcher
 * pays it every call with either backend (DeepEP's uncached dispatch runs
 * its notify and the host waits for the receive counts), so DeepEP takes
 * HybridEP's, the only published figure.  It is what keeps a small
 * model's dispatch (Qwen3-30B-A3B's 4 KiB tokens) from the big ones'
 * rate.  Between the measured node counts the terms are interpolated in
 * log2 N, beyond them held.  Both were measured on 400 Gb/s NICs: a
 * slower NIC scales the rate down, a faster one is not taken to raise it
 * (FLEX_NIC_MEASURED) -- at 2 nodes half the logical bytes stay in the
 * node, so HybridEP's 72.4 GB/s puts 36 GB/s on a 50 GB/s NIC: its 8 SMs,
 * not the link, set that rate, and no figure on an 800 Gb/s NIC is
 * published. */
static const double DEEPEP_RDMA[3] = { 0.86, 1.15, 1.01 };

/* HybridEP's internode rate at the SMs its kernels are given (by_sms):
 * the same README table at 4, 8 and 16 SMs, "Kernel Only", the mean of
 * BF16 dispatch and combine over 50 GB/s -- 16 ranks 44.40 / 52.00,
 * 76.80 / 68.00, 71.71 / 62.95 GB/s: 0.964, 1.448, 1.347; 32 ranks
 * 52.60 / 51.00, 54.50 / 56.40, 57.69 / 57.46: 1.036, 1.109, 1.152;
 * 64 ranks 48.00 / 46.00, 50.55 / 51.03, 49.97 / 49.77: 0.940, 1.016,
 * 0.997.  At 4 and 8 nodes the NIC already carries 0.75 x 55.5 and
 * 0.875 x 50.8 = 42-44 of its 50 GB/s at 8 SMs (the logical bytes
 * include the own node's share, 1/N): the link, not the SMs, binds, and
 * 16 SMs add at most 4%; at 2 nodes 4 SMs are SM-bound (48.2 against
 * 72.4 at 8).  Without moe_flex_sms HybridEP takes its 8 across nodes
 * (config.cuh): the 8-SM column, 1.448, 1.109, 1.016 (above).  The
 * call's own cost (FLEX_CALL_S) does not move with the SMs: at 16 SMs
 * and 16 ranks the torch API's excess over the kernel is 0.517 ms
 * dispatch, 0.335 combine, a mean 0.426 against 0.419 at 8.  DeepEP publishes its
 * internode rates at one SM count only (test_internode.py "num_sms =
 * 24", docs/legacy.md's table), so its rate does not follow the SMs. */
static const double HYBRIDEP_RDMA_SMS_AT[3] = { 4.0, 8.0, 16.0 };
static const double HYBRIDEP_RDMA_SMS[3][3] = {
	{ 0.964, 1.448, 1.347 },  /* 16 ranks, 2 nodes */
	{ 1.036, 1.109, 1.152 },  /* 32 ranks, 4 nodes */
	{ 0.940, 1.016, 0.997 },  /* 64 ranks, 8 nodes */
};
#define FLEX_SMS_HYBRIDEP_RDMA 8.0  /* config.cuh: across nodes 8 */
static const double FLEX_CALL_S[3] = { 0.419e-3, 0.546e-3, 0.885e-3 };
#define FLEX_NIC_MEASURED 50e9  /* B/s: ConnectX-7 400 Gb/s, both tables' */

static double by_nodes(const double *f, double nodes)
{
	double x = log2(nodes);

	if (x <= 1.0)
		return f[0];
	if (x >= 3.0)
		return f[2];
	if (x <= 2.0)
		return f[0] + (f[1] - f[0]) * (x - 1.0);
	return f[1] + (f[2] - f[1]) * (x - 2.0);
}

/* The flex dispatch or combine of one micro-batch across the EP group's
 * nodes (above): 0 when the group is inside one NVLink domain or the
 * node has no NICs (the NCCL-priced bytes stand). */
static double flex_internode(const tenv *e, const train_lkey *k,
			     double tokens, double h)
{
	const gp_model *m = e->m;
	double nodes, nic, rate;

	if (k->g_ep.per_node <= 0 || k->g_ep.per_node >= k->g_ep.ranks ||
	    e->t.nics <= 0 || !(e->t.nic.bw > 0) || e->t.gpus_per_node <= 0)
		return 0.0;
	nodes = (double)k->g_ep.ranks / k->g_ep.per_node;
	nic = e->t.nics * e->t.nic.bw / e->t.gpus_per_node;
	if (e->t.nic_path_bw > 0 && e->t.nic_path_bw < nic)
		nic = e->t.nic_path_bw;
	nic = fmin(nic, FLEX_NIC_MEASURED);
	if (k->ep_hybridep) {
		double sms = k->flex_sms > 0 ? k->flex_sms :
			FLEX_SMS_HYBRIDEP_RDMA, at[3];
		int i;

		for (i = 0; i < 3; i++)
			at[i] = by_sms(HYBRIDEP_RDMA_SMS_AT,
				       HYBRIDEP_RDMA_SMS[i], 3, sms);
		rate = by_nodes(at, nodes) * nic;
	} else {
		rate = by_nodes(DEEPEP_RDMA, nodes) * nic;
	}
	return by_nodes(FLEX_CALL_S, nodes) + tokens *
		flex_copies(k, m, nodes) * h * 2.0 /
		rate;
}

/* The alltoall token dispatcher's exchanges beside the tokens' own two
 * all-to-alls (Megatron-Core token_dispatcher.py,
 * MoEAlltoAllTokenDispatcher, core v0.13 to main).  Its preprocess
 * gathers every rank's per-expert token counts over the expert TP x EP
 * group before the host can read the splits ("num_global_tokens_per_
 * expert = gather_from_sequence_parallel_region(num_local_tokens_per_
 * expert, group=self.tp_ep_group)", the routing map's .sum(dim=0).long():
 * experts x 8 bytes a rank): an NCCL all-gather on the compute stream,
 * whose end the host waits for at the dispatcher's sync point (the
 * counts' copies to the host follow it) and which EP overlap leaves on
 * the compute stream (it is the dispatch's preprocess, not its
 * all-to-all); the counts carry no gradient, so the backward has none.
 * It is priced as a forward op of the layer, over the EP group (with
 * expert TP the group is etp times wider: a lower bound there).  With
 * the router's probabilities multiplied in the experts' activation
 * (moe_probs activation) token_dispatch sends them too ("global_probs =
 * all_to_all(self.ep_group, permuted_probs, self.output_splits,
 * self.input_splits)"), one value for each token copy in the router's
 * dtype -- the activations' unless moe_router_dtype fp32, not modelled
 * -- and their gradient comes back the same way in the backward: one
 * more all-to-all a pass, returned for the EP time of each.  Both are a
 * few KiB to a few hundred: latency-bound, tens of microseconds a layer
 * and micro-batch across nodes. */
static double a2a_meta(tenv *e, const train_lkey *k, train_lcost *lc)
{
	const gp_model *m = e->m;
	double cf = k->capacity_factor > 0 ? k->capacity_factor : 1.0;
	double sk = k->skew > 1.0 ? k->skew : 1.0;
	double counts = train_t_coll(e, GP_ALL_GATHER,
				     m->moe.experts * 8.0 * k->ep, &k->g_ep);

	add_op(lc, "moe_counts", counts, 0.0, 0, 0);
	return k->probs_act ?
		train_t_coll(e, GP_ALL_TO_ALL,
			     k->Tn * m->moe.top_k * cf * sk * k->A, &k->g_ep) :
		0.0;
}

/* The backward's TP collectives with Megatron-LM's asynchronous
 * all-reduce (async_tp_allreduce): a column-parallel linear (qkv, the
 * MLP's up projection) launches its input gradient's collective and then
 * its weight-gradient GEMM beside it -- LinearWithGradAccumulationAnd
 * AsyncAllreduce.backward: "handle = torch.distributed.all_reduce(
 * grad_input, group=..., async_op=True)", then "grad_weight =
 * grad_output.t().matmul(total_input)", then "handle.wait()"
 * (megatron/mpu/layers.py, Megatron-LM 16c90445 and f3e57f6f, September
 * 2021; on unless --no-async-tensor-model-parallel-allreduce).  Without
 * SP both of the backward's two collectives are these (the row-parallel
 * linears' backward is the identity); with SP the column-parallel
 * backward's reduce-scatter is, and the row-parallel linears'
 * all-gathers stay on the path: half.  Each runs under its linear's
 * weight gradient, half of that op's backward (dgrad and wgrad the same
 * FLOPs), what the window cannot hide exposed and the compute under it
 * slowed by OVERLAP_SLOWDOWN (overlap_at).  pass is one of the two
 * collectives of the backward (tp_fwd / 2).
 * Under SP the column-parallel linear kept only its rank's shard of the
 * input, and its backward gathers the whole input again for the weight
 * gradient, launched before and run beside the input-gradient GEMM, the
 * other half of the op's backward: "handle = torch.distributed.
 * _all_gather_base(all_gather_buffer, input, ..., async_op=True) # Here
 * we rely on CUDA_DEVICE_MAX_CONNECTIONS=1 to ensure that the gather is
 * scheduled before the input gradient computation", then "grad_input =
 * grad_output.matmul(weight)", then "handle.wait()" (LinearWithGrad
 * AccumulationAndAsyncCommunication.backward, megatron/core/
 * tensor_parallel/layers.py; Megatron-DeepSpeed cc3a94c6 as Megatron-LM;
 * Korthikanti et al. 2022 sec. 4.2.2: storing the shard "requires an
 * extra all-gather" in the backward, overlapped with the gradient
 * computation).
 * Transformer Engine's column-parallel modules run the same backward
 * (Megatron-Core's TELayerNormColumnParallelLinear and TEColumnParallel
 * Linear; its own ColumnParallelLinear is the function above):
 * _LayerNormLinear.forward saves the norm output's shard -- "ln_out if
 * weight.requires_grad else None" in ctx.save_for_backward (v1.9 to
 * v1.13), ln_out in prepare_for_saving (v2.x, fp8 kept rowwise "to
 * gather the input") -- and its backward gathers it again, "# Overlap
 * input AG with dgrad", "ln_out_total, handle = gather_along_first_dim(
 * ln_out, ctx.tp_group, async_op=True)" before the dgrad GEMM, then
 * "# Overlap dgrad-RS/AR with wgrad", "reduce_scatter_along_first_dim(
 * dgrad, ctx.tp_group, async_op=True)" before the wgrad GEMM
 * (transformer_engine/pytorch/module/layernorm_linear.py, linear.py
 * alike; with an fp8 recipe the gather carries the fp8 shard,
 * "quantizer=quantizer" in v2.x).  Their Userbuffers path (tp_overlap)
 * is train_stage.c tp_kind's.
 * np: the layer's collective pairs; ag: a row-parallel linear's gather
 * of its output gradient (SP); rs: a column-parallel linear's input-
 * gradient reduce-scatter (SP) or all-reduce; rg: its input's
 * re-gather (SP).  A pair without a column-parallel linear of Megatron's
 * (a MoE layer's is the token dispatcher's gather, whose experts keep
 * their own gathered input) has its collectives on the path. */
/* The column-parallel linears of a layer: the attention's qkv, the dense
 * MLP's up projection, a Mamba mixer's in_proj (Megatron-Core's
 * linear_qkv, linear_fc1 and in_proj, TELayerNormColumnParallelLinear in
 * its TE layer specs). */
static const char *const TP_COL[] = { "qkv", "mlp_up", "in_proj" };
#define TP_COL_OPS 3

static double async_tp_bwd(const train_lkey *k, const train_lcost *lc,
			   double np, double ag, double rs, double rg)
{
	double t = k->sp ? np * ag : 0.0, h = 0, left = np;
	int j;

	for (j = 0; j < TP_COL_OPS && left > 0; j++) {
		double win = op_pass(lc, TP_COL[j], 1);

		if (win < 0)
			continue;
		/* a frozen weight (LoRA's base) has no wgrad GEMM: the
		 * input gradient's all-reduce (without SP) or reduce-
		 * scatter (SP) waits with nothing beside it (TE's "if
		 * ctx.requires_wgrad:" skips the GEMM and "dgrad_work.
		 * wait()" follows; Megatron-Core's LinearWithFrozenWeight
		 * reduces synchronously), and under SP the input is not
		 * gathered again, the gather being for the wgrad GEMM alone
		 * (TE layernorm_linear.py: "ctx.ln_out_needs_gather = (
		 * weight.requires_grad and parallel_mode == "column" and
		 * sequence_parallel)") */
		win = !lin_wgrad(k, TP_COL[j]) ? 0.0 : 0.5 * win;
		t += overlap_at(rs, win, 1, OVERLAP_SLOWDOWN, &h);
		if (k->sp && lin_wgrad(k, TP_COL[j]))
			t += overlap_at(rg, win, 1, OVERLAP_SLOWDOWN, &h);
		left -= 1.0;
	}
	return t + left * rs;
}

/* The seconds of op `name` in one pass of the layer (bwd: its
 * backward), -1 when the layer has no such op. */
static double op_pass(const train_lcost *lc, const char *name, int bwd)
{
	int i;

	for (i = 0; i < lc->nops; i++)
		if (strcmp(lc->ops[i].name, name) == 0)
			return bwd ? lc->ops[i].bwd : lc->ops[i].fwd;
	return -1.0;
}

/* The TP collectives of a dense layer under SP with PyTorch's
 * micro-pipelined async TP (torchtitan's enable_async_tensor_parallel:
 * torch.compile's micro_pipeline_tp pass over torch.distributed.
 * _symmetric_memory), into lc's tps_* fields.  Unlike one window of
 * the whole layer's GEMMs, each collective hides only under its own
 * matmuls:
 *  - an all-gather is fused with the matmuls that read its output
 *    (torch/_inductor/fx_passes/micro_pipeline_tp.py fuse_all_gather_
 *    matmul: "A = all_gather_tensor(A_shard) ... C_0 = torch.matmul(A,
 *    B_0) ... into ... fused_all_gather_matmul(A_shard, [B_0, B_1,
 *    ...])"): the attention's q, k and v projections, the MLP's up
 *    projection(s); in the backward the gathered output gradient under
 *    the o_proj's and mlp_down's input-gradient matmul (half of the
 *    op's backward);
 *  - a reduce-scatter is fused with the matmul that produces its input
 *    only (fuse_matmul_reduce_scatter via _find_producer_matmul: mm,
 *    _scaled_mm or a reshape of one, else "return None"): the o_proj's
 *    and mlp_down's outputs in the forward.  In the backward the
 *    input gradient of the attention is the sum of the q, k and v
 *    projections' (torchtitan's wq, wk, wv; transformers' q_proj,
 *    k_proj, v_proj are separate linears), and a gated MLP's of its
 *    two up projections (w1, w3): an add, not a matmul, so those two
 *    reduce-scatters stay NCCL's, on the path;
 *  - the pipeline runs a matmul per rank's chunk (_symmetric_memory
 *    _fused_all_gather_matmul_impl: "mm_out_op(shard, B, ...,
 *    out=output_shards[idx][rank])" as each shard arrives; the local
 *    shard first): tp - 1 of the tp chunk matmuls run beside the
 *    transfers, so the window is (tp - 1) / tp of the matmuls;
 *  - the fused reduce-scatter ends with a local reduction over the
 *    group's partials (_fused_matmul_reduce_scatter_impl: "reduce_fn =
 *    partial(torch.sum, dim=0)"): it reads the whole T x h buffer and
 *    writes its 1 / tp share, memory-bound, after the last transfer.
 * What a window cannot hide is exposed and the compute under a hidden
 * second slowed by OVERLAP_SLOWDOWN (overlap_at).  ag, rs: one
 * all-gather and one reduce-scatter of the T x h buffer (tb bytes);
 * agf: the forward's all-gather (float8 under torchao's TP). */
static void symm_tp(tenv *e, const train_lkey *k, train_lcost *lc,
		    double agf, double ag, double rs, double tb)
{
	const double sl = OVERLAP_SLOWDOWN;
	double q = (k->tp - 1.0) / k->tp;
	double qkv = op_pass(lc, "qkv", 0), op = op_pass(lc, "o_proj", 0);
	double up = op_pass(lc, "mlp_up", 0), dn = op_pass(lc, "mlp_down", 0);
	double opb = op_pass(lc, "o_proj", 1), dnb = op_pass(lc, "mlp_down", 1);
	double upb = op_pass(lc, "mlp_up", 1);
	double red = t_mem(e, k->half, tb * (1.0 + 1.0 / k->tp));
	double h = 0, t;

	if (qkv < 0 || op < 0 || up < 0 || dn < 0)
		return;
	lc->tps_on = 1;
	/* forward: the two all-gathers, then the two reduce-scatters */
	t = overlap_at(agf, q * qkv, 1, sl, &h) + overlap_at(agf, q * up, 1,
							     sl, &h);
	lc->tps_fag = t;
	lc->tps_hfag = h;
	t += overlap_at(rs, q * op, 1, sl, &h) + overlap_at(rs, q * dn, 1,
							    sl, &h) + 2.0 * red;
	lc->tps_f = t;
	lc->tps_hf = h;
	/* backward: the output gradients gathered under the input-gradient
	 * matmuls of o_proj and mlp_down; the attention's input gradient
	 * reduce-scattered on the path, the MLP's too when gated (else
	 * under its one up projection's input-gradient matmul) */
	h = 0;
	t = overlap_at(ag, q * 0.5 * opb, 1, sl, &h) +
		overlap_at(ag, q * 0.5 * dnb, 1, sl, &h) + rs;
	t += e->m->ffn_gated ? rs :
		overlap_at(rs, q * 0.5 * upb, 1, sl, &h) + red;
	lc->tps_b = t;
	lc->tps_hb = h;
}

/* The slowdown of the attention that Transformer Engine's p2p ring
 * hides its K/V sends under.  AttnFuncWithCP (pytorch/attention.py)
 * issues each step's send/recv to the next and previous CP rank
 * (flash_attn_p2p_communicate: torch.distributed batch_isend_irecv, one
 * NCCL send/recv kernel) and then the step's attention kernel beside it
 * on the other of its two streams; so what the compute loses is what that
 * one send/recv kernel holds: its channels, one CTA each, the SMs the
 * attention then lacks -- the rule ep_slowdown (train_stage.c) gives
 * the expert all-to-all's 32 channels, sms / (sms - ch) of the compute
 * time under it, where OVERLAP_SLOWDOWN (0.189) is the average over
 * overlapped collectives of 16-32 channels.  The ring's stream runs on
 * as many channels as comm_algo.c prices it with: in a node its share
 * of the p2p pool (16-32 on NVLink at these sizes: 0.14-0.32), across
 * nodes NCCL's channels per network peer, 2 (NCCL 2.12-2.28
 * src/graph/paths.cc ncclTopoGetNchannels, "Remote rank, use network":
 * NCHANNELS_PER_NET_PEER 2, "start from 2 channels per NIC"), 2 / 130
 * = 0.015 on an H100.  Its memory traffic beside the kernel, the
 * stream's 28 GB/s read and written of the H100's 3.35 TB/s, is left
 * out as ep_slowdown leaves the all-to-all's.  No SM count: the
 * average. */
static double cp_ring_slowdown(tenv *e, const train_lkey *k, double bytes)
{
	double sms = e->d ? e->d->sms : 0.0, ch;

	if (!(sms > 0) || k->g_cp.ranks <= 1 || bytes <= 0 || e->bad)
		return OVERLAP_SLOWDOWN;
	if (comm_group_p2p_channels(&e->t, bytes, &k->g_cp, &ch, e->err)) {
		e->bad = 1;
		return 0.0;
	}
	return sms > 2.0 * ch ? ch / (sms - ch) : 1.0;
}

/* PyTorch's context_parallel ring into lc: torch/distributed/tensor/
 * experimental/_attention.py, _templated_ring_attention and its backward,
 * alike in both versions read (pytorch/pytorch 0123248, 2025, and the
 * older one taking a DeviceMesh that a merge conflict of ROCm/pytorch
 * 10b22ea shows); torchtitan 9dec370, whose end-2024 runs used torch
 * 1963fc8, picks the rotater (set_rotate_method).
 * K and V are the SDPA call's, every query head wide in torchtitan's
 * Llama (cp_merge above): kvb bytes a rank in the 16-bit type.
 * Forward, allgather ("Allgather the kv and return the only the required
 * kv. Only one communication will be done."): one all-gather of the K/V
 * chunks, issued before the first step's kernel and waited for at the
 * second ("all-gather all kv shards on ranks after the first sub-SDPA
 * computation", torchtitan 9dec370 config_manager.py), so only that
 * step's kernel, attn / cp, runs beside it; alltoall: cp - 1 shifts of
 * the chunk to the next rank (ft_c.permute_tensor), each beside one
 * step's kernel.  Backward: K and V come round again by the same rotater,
 * and the gradients of K and V travel by the alltoall one whatever the
 * method ("dkv_rotater = _create_rotater(group, 2,
 * method=_RotateMethod.ALL_TO_ALL)"), accumulated in fp32 (4 / A the
 * K/V bytes): one shift after each of the cp steps, each waited for after
 * the next step's kernel, the last after the loop ("next_grad_kv =
 * dkv_rotater.next_buffer()"), beside no kernel.
 * That overlap is eager PyTorch's: a functional collective hands back an
 * AsyncCollectiveTensor whose wait comes at its first use.  Compiled
 * (kernels fused: torchtitan compiles each TransformerBlock, fullgraph,
 * and the ring is traced into it through the DTensor dispatch of SDPA),
 * the wait is put right after the collective -- torch/distributed/
 * _functional_collectives.py: "Under torch.compile/dynamo: ...
 * _maybe_wrap_tensor(...) - wait_tensor() op is immediately called", and
 * "Compiled tracing currently relies on the compiler to perform this
 * optimization" -- and Inductor moves no wait unless asked
 * (torch/_inductor/config.py: "reorder_for_compute_comm_overlap = False";
 * torchtitan 9dec370 sets only _micro_pipeline_tp).  So every all-gather
 * or shift of K and V and every dK/dV shift holds the compute stream for
 * its whole time: none hidden. */
static void torch_cp_comm(tenv *e, const train_lkey *k, train_lcost *lc)
{
	gp_widths w;
	double n = k->cp, kvb, t_kv, t_dkv, af, ab, ef, eb, hf, hb, x;

	model_widths(e->m, &w);
	kvb = k->T * 2.0 * w.o / k->tp * k->A;
	af = lc->fwd.attn / n;
	ab = lc->bwd.attn / n;
	if (!k->eager) {
		t_kv = k->cp_rotate == GP_CP_ALLGATHER ?
			train_t_coll(e, GP_ALL_GATHER, n * kvb, &k->g_cp) :
			(n - 1.0) * train_t_coll(e, GP_SEND_RECV, kvb,
						 &k->g_cp);
		t_dkv = train_t_coll(e, GP_SEND_RECV, kvb * 4.0 / k->A,
				     &k->g_cp);
		lc->cp_fwd = t_kv;
		lc->cp_bwd = t_kv + n * t_dkv;
		lc->cp_hid = 0.0;
		return;
	}
	if (k->cp_rotate == GP_CP_ALLGATHER) {
		t_kv = train_t_coll(e, GP_ALL_GATHER, n * kvb, &k->g_cp);
		ef = fmax(0.0, t_kv - af);
		eb = fmax(0.0, t_kv - ab);
		hf = t_kv - ef;
		hb = t_kv - eb;
	} else {
		t_kv = train_t_coll(e, GP_SEND_RECV, kvb, &k->g_cp);
		ef = (n - 1.0) * fmax(0.0, t_kv - af);
		eb = (n - 1.0) * fmax(0.0, t_kv - ab);
		hf = (n - 1.0) * t_kv - ef;
		hb = (n - 1.0) * t_kv - eb;
	}
	t_dkv = train_t_coll(e, GP_SEND_RECV, kvb * 4.0 / k->A, &k->g_cp);
	x = fmax(0.0, t_dkv - ab);
	eb += (n - 1.0) * x + t_dkv;
	hb += (n - 1.0) * (t_dkv - x);
	lc->cp_fwd = ef;
	lc->cp_bwd = eb;
	lc->cp_hid = hf + (k->forward_only ? 0.0 : hb);
	lc->cp_slow = OVERLAP_SLOWDOWN;
}

/* DeepSpeed-Ulysses' exchange into lc (Jacobs et al. 2023, "DeepSpeed
 * Ulysses", sec. 3: "all-to-all collective on the query (Q), key (K) and
 * value (V) projections ... and another all-to-all for the attention
 * output"), as verl runs it on its FSDP workers
 * (verl/models/transformers/monkey_patch.py
 * _ulysses_flash_attention_forward, verl/utils/ulysses.py).  Forward,
 * each rank holds T tokens of its sequence's share and hands every
 * rank a slice of its heads: gather_seq_scatter_heads on q, k and v (one
 * dist.all_to_all each, "[bsz, seq/n, h, ...] -> [bsz, seq, h/n, ...]"),
 * then gather_heads_scatter_seq on the attention output (one more, back
 * to seq/n by h).  K and V go with the kv heads of a rank repeated to
 * the group first when they are fewer ("repeats =
 * max(ulysses_sp_size // key_states.size(2), 1)"; "key_states =
 * repeat_kv(key_states, repeats)").  Backward, SeqAllToAll.backward
 * sends each gradient back by the inverse all-to-all: the same four
 * buffers.  Every call is synchronous (all_to_all_tensor with
 * async_op False, SeqAllToAll's default), the compute stream waits for
 * it: nothing hidden.  A buffer is a rank's whole local tensor, T x
 * width x A bytes, the all-to-all's per-rank size (train_t_coll, as EP's
 * dispatch).  The recomputed forward runs its four again (train_stage.c
 * cp_fwd x (1 + rec)).
 * Where the model's own attention repeats K and V to every query head
 * before the kernel (kv_repeat), the exchange wraps the kernel and so
 * moves them query wide: XTuner's Llama dispatch at 7575f2c91
 * (xtuner/model/modules/dispatch/llama.py llama_attn_forward) runs
 * "key_states = repeat_kv(key_states, self.num_key_value_groups)" and
 * "value_states = repeat_kv(value_states, self.num_key_value_groups)"
 * and then flash_attn_wo_mask / flash_attn_w_mask, both decorated
 * "@sequence_parallel_wrapper", whose pre_process_for_sequence_parallel_
 * attn all_to_alls "query_states", "key_states" and "value_states" as
 * handed in (xtuner/parallel/sequence/attention.py): K's and V's buffers
 * are q's width, not the kv heads repeated only to the group. */
static void ulysses_comm(tenv *e, const train_lkey *k, train_lcost *lc)
{
	const gp_model *m = e->m;
	gp_widths w;
	double hkv, rep, kvw, qb, kb, vb, ob, t;

	model_widths(m, &w);
	/* a TP rank's kv heads (at least one: replicated below tp) */
	hkv = m->kv_heads > k->tp ? (double)m->kv_heads / k->tp : 1.0;
	rep = fmax(floor(k->cp / hkv), 1.0);
	kvw = m->kv_heads > 0 ? hkv * rep / m->kv_heads : 1.0 / k->tp;
	/* kv_repeat: every query head's copy (a TP rank's heads / kv heads
	 * repeats of each kv head), at least the group's repeat above */
	if (k->kv_repeat && m->kv_heads > 0 && m->heads > m->kv_heads)
		kvw = fmax(kvw, (double)m->heads / k->tp / m->kv_heads);
	qb = k->T * w.q / k->tp * k->A;
	kb = k->T * w.k * kvw * k->A;
	vb = k->T * w.v * kvw * k->A;
	ob = k->T * w.o / k->tp * k->A;
	t = train_t_coll(e, GP_ALL_TO_ALL, qb, &k->g_cp) +
		train_t_coll(e, GP_ALL_TO_ALL, kb, &k->g_cp) +
		train_t_coll(e, GP_ALL_TO_ALL, vb, &k->g_cp) +
		train_t_coll(e, GP_ALL_TO_ALL, ob, &k->g_cp);
	lc->cp_fwd = t;
	lc->cp_bwd = k->forward_only ? 0.0 : t;
	lc->cp_hid = 0.0;
}

/* The bytes a rank's share of one TP all-gather of Transformer Engine's
 * linears moves under an fp8 recipe, or 0 where it stays 16-bit (tb: its
 * 16-bit bytes).  TE quantizes before it gathers, in both directions:
 * v1.9 _LayerNormLinear.forward hands the norm the fp8 cast ("fp8 and
 * not return_layernorm_output") and then gathers ln_out, through
 * Userbuffers or gather_along_first_dim; its backward re-gathers that
 * fp8 ln_out for the wgrad GEMM; and grad_output_preprocess, "FP8 case
 * with gather: unfused bgrad, cast, transpose for efficient gather",
 * casts dY to fp8 before the row-parallel linear's gather (module/
 * base.py).  initialize_ub sizes the buffers alike: "Default buffer
 * precision: AllGather buffers use fp8 when using fp8 recipe"
 * (layers_all_gather_overlap: qkv_fprop, qkv_dgrad, proj_dgrad,
 * fc1_fprop, fc1_dgrad, fc2_dgrad), while the reduce-scatters
 * (proj_fprop, fc2_fprop, the dgrad's) stay in the activation dtype
 * unless a run asks for fp8_buf.  TE 2.x keeps it: _LayerNormLinear
 * gathers through gather_along_first_dim(..., quantizer=...).  One byte
 * an element; a block-scaled recipe (fp8_block, priced as MXFP8: one
 * E8M0 scale per 32 elements, OCP MX spec v1.0) gathers its scales with
 * it.  PyTorch's modules (torchao's float8 TP) are layer_comm's own. */
static double te_fp8_gather(const train_lkey *k, double tb)
{
	if (!k->te_modules || k->lin != GP_FP8 || k->eager)
		return 0.0;
	return tb / (k->A > 2.0 ? k->A : 2.0) *
		(1.0 + (k->fp8_block ? 1.0 / 32.0 : 0.0));
}

/* A layer's communication into lc: TP's collectives, CP's ring, EP's
 * all-to-all (and the experts' TP gathers). */
static void layer_comm(tenv *e, const train_lkey *k, int kind,
		       train_lcost *lc)
{
	const gp_model *m = e->m;
	double h = m->hidden, tb, ag = 0, rs = 0, rg = 0, kvb, t_sr;
	double rs8 = 0;   /* tp_fwd_ub's saving: the fp8 reduce-scatters */
	double topk = m->moe.top_k;
	int moe = kind == 'E', hy = m->pattern[0] != 0;
	/* a hybrid stack's layer is one block: one column- and one
	 * row-parallel linear (MambaMixer's in_proj and out_proj, the
	 * attention's qkv and proj, an MLP's fc1 and fc2), one pair */
	double np = hy ? 1.0 : 2.0;

	/* Tensor parallelism: the activations cross the TP group in the
	 * 16-bit dtype, two collectives per layer per pass, each on the
	 * whole T x h buffer (an all-reduce, or an all-gather plus a
	 * reduce-scatter with SP -- the same bytes per rank as one
	 * all-reduce).  Under an fp8 recipe Transformer Engine's linears
	 * gather in fp8 and reduce in 16 bits (te_fp8_gather). */
	tb = k->T * h * (k->A > 2.0 ? k->A : 2.0);
	if (k->sp) {
		double agf, ag8 = te_fp8_gather(k, tb);

		ag = train_t_coll(e, GP_ALL_GATHER, tb, &k->g_tp);
		rs = train_t_coll(e, GP_REDUCE_SCATTER, tb, &k->g_tp);
		rg = ag;
		if (ag8 > 0) {
			/* a MoE layer's second pair is the dispatcher's
			 * gather of the tokens, Megatron-Core's own in 16
			 * bits: only the attention's is TE's */
			double ag1 = train_t_coll(e, GP_ALL_GATHER, ag8,
						  &k->g_tp);

			ag = moe ? (ag + ag1) / 2.0 : ag1;
			rg = ag1;
		}
		/* torchao's float8 TP (tensorwise scaling, PyTorch's
		 * modules: torchtitan's apply_tp with float8) gathers the
		 * forward's inputs in float8, one byte an element:
		 * PrepareFloat8ModuleInput "cast the input to
		 * DTensor(Float8Tensor) ... to ensure the float8 cast
		 * happens before the all-gather (i.e. Shard -> Replicate)"
		 * (torchao/float8/float8_tensor_parallel.py, on the
		 * attention's and the feed-forward's input).  The
		 * backward's gathers and every reduce-scatter (a matmul's
		 * output) stay 16-bit: Float8RowwiseParallel's backward
		 * cast before the gather is commented out there. */
		agf = k->fp8_current && !k->te_modules ?
			train_t_coll(e, GP_ALL_GATHER, tb / (k->A > 2.0 ?
							     k->A : 2.0),
				     &k->g_tp) : ag;
		lc->tp_fwd = np * (agf + rs);
		lc->tp_bwd = np * (ag + rs);
		if (k->tp > 1 && !k->te_modules && !moe && !hy)
			symm_tp(e, k, lc, agf, ag, rs, tb);
	} else {
		lc->tp_fwd = np * train_t_coll(e, GP_ALL_REDUCE, tb, &k->g_tp);
		lc->tp_bwd = lc->tp_fwd;
	}
	/* Userbuffers' forward reduce-scatters in fp8 (tp_overlap_fp8_rs):
	 * with a reduce-scatter buffer of fp8 (`fp8_buf` on proj_fprop and
	 * fc2_fprop, which Transformer Engine's initialize_ub honours for
	 * the pipelined reduce-scatters alone: "fp8_buf = (name in
	 * layers_all_gather_overlap) or (ub_cfg.get("fp8_buf", False) and
	 * name in methods["pipeline"])", module/base.py, v1.9 to v1.13), the
	 * row-parallel linear's fp8 GEMM writes its output into that buffer
	 * in fp8 -- linear.py's forward: "if ub_obj_projout.is_fp8_ubuf():
	 * ... proj_out_tetype = fp8_dtype_forward; proj_out_pttype =
	 * torch.uint8" -- and the reduce-scatter moves one byte an element,
	 * its output back in the activations' dtype.  The layer's row-
	 * parallel linears are TE's in the dense layer (the attention's proj
	 * and the MLP's fc2) and the attention's alone in a MoE one (its
	 * second pair is the token dispatcher's); the backward is unchanged
	 * (its reduce-scatters are the dgrad's, in 16 bits).  An fc2 kept in
	 * bf16 (mlp_down_bf16) writes no fp8 output: its reduce-scatter stays
	 * 16-bit, the attention's alone moves fp8.  The fp8 size is
	 * te_fp8_gather's, the size TE's forward gathers in; tp_fwd_ub is
	 * set once the layer's forward collectives are all counted (below). */
	if (k->tp_overlap_fp8_rs && k->sp && k->tp > 1 && !hy)
		rs8 = (moe || k->mlp_down_bf16 ? 1.0 : np) * (rs -
			train_t_coll(e, GP_REDUCE_SCATTER,
				     te_fp8_gather(k, tb), &k->g_tp));
	/* Megatron's SP backward (async_tp_bwd): the column-parallel
	 * linears kept their input's shard and gather it again, Megatron-
	 * LM's and Megatron-DeepSpeed's (async_tp) and Transformer
	 * Engine's (te_modules: Megatron-Core, NeMo, Megatron-Bridge) --
	 * rg a linear, in fp8 where TE's forward gathered in fp8 (rg: the
	 * attention's gather, the qkv linear's own).  Under Userbuffers
	 * (tp_overlap) all of them run under the backward's GEMMs, the
	 * re-gather in bulk under the dgrad GEMM ("ub_bulk_dgrad ...
	 * BULK_OVERLAP_AG"): tp_bwd_ub, tp_kind's; otherwise each beside
	 * its own GEMM.  PyTorch's SP (DTensor) keeps the gathered input:
	 * no re-gather. */
	lc->tp_bwd_ub = lc->tp_bwd;
	if (k->sp && k->tp > 1 && (k->async_tp || k->te_modules)) {
		double nrg = 0;
		int j;

		for (j = 0; j < TP_COL_OPS; j++)
			nrg += op_pass(lc, TP_COL[j], 1) >= 0 &&
				lin_wgrad(k, TP_COL[j]) ? 1.0 : 0.0;
		/* a frozen weight's input is not gathered again (above) */
		lc->tp_bwd_ub += fmin(nrg, np) * rg;
		lc->tp_bwd = async_tp_bwd(k, lc, np, ag, rs, rg);
	} else if (k->async_tp && k->tp > 1) {
		/* Without SP the column-parallel linear's input gradient is
		 * all-reduced beside its wgrad GEMM, in Transformer Engine
		 * as in Megatron's own linear (the option's default on the
		 * megatron stack, gpuplan.options): "# Overlap dgrad-RS/AR
		 * with wgrad ... elif ctx.parallel_mode == "column" and
		 * ctx.tensor_parallel: dgrad, handle = allreduce(dgrad,
		 * ctx.tp_group, async_op=True)", waited on after the wgrad
		 * GEMM (layernorm_linear.py and linear.py, TE v1.9; v2.x
		 * "dgrad, dgrad_work = allreduce(dgrad, ctx.tp_group,
		 * async_op=True)", then "dgrad_work.wait()" after "Compute
		 * grad weight").  TE's Userbuffers flags are all "parallel_
		 * mode == "column" and self.sequence_parallel and ..." and
		 * Megatron asserts "Tensor parallel communication/GEMM
		 * overlap can happen only when sequence parallelism is
		 * enabled": no Userbuffers path without SP.  Megatron-Core's
		 * own ColumnParallelLinear: "if ctx.allreduce_dgrad: #
		 * Asynchronous all-reduce ... async_op=True", "# Here we
		 * rely on CUDA_DEVICE_MAX_CONNECTIONS=1 to ensure that the
		 * all-reduce is scheduled before the weight gradient
		 * computation" (megatron/core/tensor_parallel/layers.py). */
		lc->tp_bwd = async_tp_bwd(k, lc, np, 0.0, lc->tp_bwd / np,
					  0.0);
	}
	/* tp_input_per_linear: PyTorch's ColwiseParallel(input_layouts=
	 * Shard(1)) on each projection of its own, KempnerForge's plan
	 * (distributed/tensor_parallel.py, 3ad9d9a: "attention.q_proj",
	 * "attention.k_proj", "attention.v_proj", "mlp.gate_proj",
	 * "mlp.up_proj" each ColwiseParallel(input_layouts=Shard(1)); no
	 * PrepareModuleInput on the attention or the MLP as torchtitan
	 * has).  Each linear's input hook redistributes the same
	 * sequence-sharded norm output to Replicate, and in the backward
	 * each one's Partial input gradient back to Shard(1): a reduce-
	 * scatter per projection, 3 for q, k and v and 2 for gate and up
	 * where one a block does (the gradients are summed after, in
	 * their shards).  The repository's own eager H200 profile of its
	 * 13B (benchmarks/profiling/13b_24gpu_profiling.md: 1640 FSDP
	 * gathers = 5 steps x 4 micro-batches x 82; 9680 further
	 * all-gathers and 6420 bf16 reduce-scatters = 484 and 321 a
	 * micro-batch over 40 layers) counts 12 TP all-gathers and 8
	 * reduce-scatters a layer a micro-batch: forward 5 + 2, the
	 * recompute 5 + 1 (non-reentrant checkpoint stops after the last
	 * saved tensor, before mlp_down's reduce-scatter), backward 2 + 5.
	 * Eager, the forward's two extra gathers of the attention's input
	 * and one of the MLP's run too (and again in the recompute);
	 * compiled they are one: the identical functional all-gathers of
	 * one input are merged by AOTAutograd's CSE (torch/_functorch/
	 * compile_utils.py fx_graph_cse, functorch config cse on), while
	 * the backward's reduce-scatters reduce different gradients and
	 * stay.  Each extra collective on the whole T x h buffer, on the
	 * path (its sum waits on it). */
	if (k->tp_input_per_linear && k->tp > 1 && k->sp && !k->te_modules &&
	    !moe && !hy) {
		double xg = ((k->split_proj & GP_SPLIT_QKV) ? 2.0 : 0.0) +
			((k->split_proj & GP_SPLIT_MLP) && m->ffn_gated ?
			 1.0 : 0.0);

		lc->tp_bwd += xg * rs;
		lc->tp_bwd_ub += xg * rs;
		if (k->eager)
			lc->tp_fwd += xg * ag;
		if (lc->tps_on) {
			lc->tps_b += xg * rs;
			if (k->eager) {
				lc->tps_f += xg * ag;
				lc->tps_fag += xg * ag;
			}
		}
	}
	lc->tp_fwd_ub = lc->tp_fwd - rs8;
	if (lc->tp_fwd > 0 && lc->nops < TRAIN_MAX_OPS) {
		lc->ops[lc->nops].name = "tp_comm";
		lc->ops[lc->nops].fwd = lc->tp_fwd;
		lc->ops[lc->nops].bwd = lc->tp_bwd;
		lc->nops++;
	}

	/* Context parallelism: cp - 1 ring steps per pass, each sending
	 * this rank's K and V chunk (backward: K, V and their gradients,
	 * twice the bytes) while the attention of one chunk runs. */
	if (k->cp > 1 && k->cp_rotate == GP_CP_ULYSSES) {
		ulysses_comm(e, k, lc);
	} else if (k->cp > 1 && k->cp_rotate != GP_CP_P2P) {
		torch_cp_comm(e, k, lc);
	} else if (k->cp > 1) {
		double steps = k->cp - 1, ef, eb, t_sb;

		kvb = k->T * model_kv_elems_layer(m, k->tp) * k->A;
		t_sr = train_t_coll(e, GP_SEND_RECV, kvb, &k->g_cp);
		t_sb = train_t_coll(e, GP_SEND_RECV, 2.0 * kvb, &k->g_cp);
		ef = fmax(0.0, t_sr - lc->fwd.attn / k->cp);
		eb = fmax(0.0, t_sb - lc->bwd.attn / k->cp);
		lc->cp_fwd = steps * ef;
		lc->cp_bwd = steps * eb;
		lc->cp_hid = steps * (t_sr - ef + (k->forward_only ? 0.0 :
						   t_sb - eb));
		lc->cp_slow = cp_ring_slowdown(e, k, kvb);
	}

	/* Expert parallelism: each token's hidden state goes to its top_k
	 * experts and comes back (dispatch and combine all-to-all, the
	 * per-rank send buffer Tn k h in 16 bits, padded to the capacity
	 * factor -- Tn the tokens this rank holds, T / tp under SP), in
	 * each pass.  With expert tensor parallelism the received tokens
	 * are all-gathered over the etp group before the experts and their
	 * outputs reduce-scattered after (Megatron-Core's
	 * MoEAlltoAllTokenDispatcher), the buffer etp times the received
	 * one; without SP the TP ranks hold the same tokens already, but
	 * an etp group wider than TP reaches data-parallel ranks, whose
	 * tokens differ either way (model.c's Te = T etp / tp).  An
	 * unbalanced router sends the hottest rank skew times the mean
	 * (model_ep_skew), and the exchange ends when it has them. */
	int egat = k->etp > 1 && (k->sp || k->etp > k->tp);

	if (moe && (k->ep > 1 || egat)) {
		double cf = k->capacity_factor > 0 ?
			k->capacity_factor : 1.0;
		double sk = k->skew > 1.0 ? k->skew : 1.0;
		double copies = k->ep_flex && k->ep > 1 ?
			flex_copies(k, m, k->ep) : topk;
		double disp = k->Tn * copies * cf * sk * h * 2.0, a2a, gs = 0;

		a2a = k->ep > 1 ?
			train_t_coll(e, GP_ALL_TO_ALL, disp, &k->g_ep) : 0;
		/* The flex dispatcher inside one NVLink domain: no faster
		 * than its backend's call at its measured share of the
		 * link (above): HybridEP's, or DeepEP's at its SMs. */
		if (k->ep > 1 && k->ep_flex &&
		    k->g_ep.per_node >= k->g_ep.ranks &&
		    e->t.up_kind == GP_LINK_NVLINK && e->t.up.bw > 0) {
			double sms = k->flex_sms > 0 ? k->flex_sms :
				FLEX_SMS_DEEPEP_NVL;
			double r = k->ep_hybridep ?
				hybridep_nvl_frac(k->ep) * e->t.up.bw :
				deepep_nvl_rate(&e->t, k->ep, sms);
			double w = k->ep_hybridep ?
				hybridep_nvl_token(k->ep, h * 2.0) :
				deepep_nvl_token(k->ep, h * 2.0);

			a2a = fmax(a2a, disp * w / r);
		}
		/* Across nodes: once a node, at DeepEP's or HybridEP's
		 * published internode rate (flex_internode). */
		if (k->ep > 1 && k->ep_flex) {
			double xn = flex_internode(e, k, k->Tn * cf * sk, h);

			if (xn > 0)
				a2a = xn;
		}
		/* Megatron-Core's MoEAllGatherTokenDispatcher: every rank
		 * gathers all Tn ep tokens of the EP group, h wide and once
		 * each whatever top_k (its local experts pick theirs), and
		 * the combine reduce-scatters the outputs back: one
		 * all-gather and one reduce-scatter of Tn ep h 16-bit
		 * elements in place of the two all-to-alls. */
		if (k->ep > 1 && k->ep_allgather) {
			double gb = k->Tn * k->ep * h * 2.0;

			a2a = 0.5 * (train_t_coll(e, GP_ALL_GATHER, gb,
						  &k->g_ep) +
				     train_t_coll(e, GP_REDUCE_SCATTER, gb,
						  &k->g_ep));
		}
		if (egat)
			gs = train_t_coll(e, GP_ALL_GATHER, disp * k->etp,
					  &k->g_etp) +
				train_t_coll(e, GP_REDUCE_SCATTER,
					     disp * k->etp, &k->g_etp);
		if (k->ep > 1 && !k->ep_flex && !k->ep_allgather &&
		    !k->eager)
			gs += a2a_meta(e, k, lc);
		lc->ep_fwd = 2.0 * a2a + gs;
		lc->ep_bwd = 2.0 * a2a + gs;
	}
}

/* Costs of one layer (dense or MoE) for one micro-batch on one GPU. */
void train_layer_costs(tenv *e, const train_lkey *k, int kind,
		       train_lcost *lc)
{
	int i;

	memset(lc, 0, sizeof *lc);
	layer_compute(e, k, kind, lc);   /* and layer_comm */
	layer_params(e, k, kind, lc);
	/* The forward pass alone: nothing runs backward or again. */
	if (k->forward_only) {
		memset(&lc->bwd, 0, sizeof lc->bwd);
		lc->rec_full = lc->rec_sel = 0;
		lc->tp_bwd = lc->tp_bwd_ub = lc->cp_bwd = lc->ep_bwd = 0;
		lc->tps_b = lc->tps_hb = 0;
		for (i = 0; i < lc->nops; i++)
			lc->ops[i].bwd = 0;
	}
}

/* The ends of the model for one micro-batch, into ld.
 * First stage: embedding gather (vocab-parallel: an all-reduce, or a
 * reduce-scatter with SP, over TP) and its gradient scatter-add into
 * the fp32 main grad.
 * Last stage: final norm, logits (16-bit GEMM, vocab-parallel over TP),
 * the loss (fp32 softmax over the vocabulary slice: read the logits,
 * write and read fp32 exponentials; backward writes the logit
 * gradients) and the gradient of the output layer; its input gathered
 * over TP under SP (reduce-scattered in backward), or without SP the
 * copy into the TP region all-reducing its gradient.
 * Eager (Hugging Face's ForCausalLMLoss, transformers/loss/loss_utils.py):
 * logits.float() (read 16-bit, write fp32), cross_entropy's log_softmax
 * (read and write fp32) and nll_loss; backward nll's zero-filled
 * gradient, log_softmax's backward (read two fp32, write one) and the
 * cast back: 14 and 22 B per logit beyond the GEMM's own, where a fused
 * loss moves 10 and 6; the final RMSNorm as the layers' (above).
 * Megatron-Core's unfused vocab-parallel cross-entropy (unfused_loss;
 * tensor_parallel/cross_entropy.py at core_r0.8.0, taken when
 * cross_entropy_loss_fusion is off, its default there): forward
 * "vocab_parallel_logits.float()" (read A, write 4), "torch.max(...,
 * dim=-1)" (read 4), "vocab_parallel_logits -= logits_max" (read and
 * write 4), "torch.exp(vocab_parallel_logits, out=exp_logits)" (read and
 * write 4), "exp_logits.sum(dim=-1)" (read 4), "exp_logits.div_(...)"
 * (read and write 4): A + 36 B a logit; backward "grad_input.mul_(
 * grad_output...)" (read and write 4) and the float() cast's gradient
 * back to 16 bits (read 4, write A): A + 12 B. */
/* One chunk of Liger's fused linear cross-entropy forward over r of the
 * tokens (train_ends_costs below): the logits GEMM, the input-gradient
 * GEMM unless forward-only, and where the head trains (wg) the weight-
 * gradient GEMM and its fp32 add.  Each chunk re-reads the V/tp x h
 * weight whatever its rows. */
static double liger_chunk_time(const tenv *e, const train_lkey *k,
                               double r, double Vt, double hid, int fo,
                               int wg)
{
	double fc = 2.0 * r * Vt * hid;
	double gb = Vt * hid * 2.0 + r * (hid + Vt) * k->A;

	return train_t_op(e, fc, gb, r, Vt, hid, 1, k->half) +
		(fo ? 0.0 : train_t_op(e, fc, gb, r, hid, Vt, 1, k->half)) +
		(wg ? train_t_op(e, fc, Vt * hid * k->A + r * (hid + Vt) *
				 k->A, Vt, hid, r, 1, k->half) +
		 t_mem(e, k->half, Vt * hid * (3.0 * k->A + 8.0)) : 0.0);
}

void train_ends_costs(tenv *e, const train_lkey *k, train_lcost *ld)
{
	const gp_model *m = e->m;
	double hid = m->hidden, Vt = m->vocab / (double)k->tp;
	double f = 2.0 * k->T * Vt * hid, el = k->Tn * hid;
	double bytes = Vt * hid * 2.0 + k->T * (hid + Vt) * k->A;
	double act = k->T * hid * 2.0;
	int head_trains = !k->frozen, fo = k->forward_only;
	const gp_group *tpg = &k->g_tp;
	double lv = k->T * Vt, loss_f, loss_b, norm_f, norm_b, nk = 0;
	double ll = k->replicated_logits ? k->T * m->vocab : lv;

	/* The loss over the logits and the final norm, forward and back. */
	loss_f = t_mem(e, k->half, lv * (k->A + 8.0));
	loss_b = t_mem(e, k->half, lv * (4.0 + k->A));
	if (k->unfused_loss && !k->eager) {
		loss_f = t_mem(e, k->half, lv * (k->A + 36.0));
		loss_b = t_mem(e, k->half, lv * (k->A + 12.0));
	} else if (k->mcore_loss && !k->eager) {
		/* Megatron-Core's own fused loss (cross_entropy_loss_fusion
		 * with cross_entropy_fusion_impl 'native', the default from
		 * core_v0.9.0 to 2026's main, where the 'te' one is rejected
		 * by argument validation): fused_cross_entropy.py is four
		 * jit_fuser graphs (torch.compile from torch 2.2, jit.py), not
		 * one kernel, and each returns or mutates a T x V/tp fp32
		 * tensor, which must be written.  calculate_logits_max returns
		 * "vocab_parallel_logits.float()" with its max (read A, write
		 * 4); calculate_predicted_logits subtracts the max in place and
		 * "torch.exp(vocab_parallel_logits, out=exp_logits)" with its
		 * sum (read 4, write 4); calculate_cross_entropy_loss
		 * "exp_logits.div_(sum_exp_logits.unsqueeze(dim=-1))" (read
		 * 4, write 4): A + 20 B a logit forward.  Backward
		 * calculate_gradients runs "grad_input.mul_(grad_output...)"
		 * in place on the saved softmax (read 4, write 4) and
		 * "grad_input.to(torch.bfloat16)" (write A): A + 8.
		 * (NVIDIA/Megatron-LM core_v0.9.0 megatron/core/fusions/
		 * fused_cross_entropy.py and tensor_parallel/cross_entropy.py
		 * VocabParallelCrossEntropy; the same at d98e8a6.) */
		loss_f = t_mem(e, k->half, lv * (k->A + 20.0));
		loss_b = t_mem(e, k->half, lv * (k->A + 8.0));
	}
	norm_f = t_mem(e, k->half, 2.0 * el * k->A);
	norm_b = t_mem(e, k->half, 3.0 * el * k->A);
	/* eager_loss: the layers compiled, the loss not -- torchtitan
	 * compiles each TransformerBlock alone ("for layer_id,
	 * transformer_block in model.layers.named_children():
	 * transformer_block = torch.compile(transformer_block,
	 * fullgraph=True)", parallelize_llama.py apply_compile at 9dec370)
	 * and from e8977b0 (2024-12-18, PR #755: "# TODO: compiling loss
	 * function causes CUDA errors, turning off for now / # if
	 * job_config.training.compile: / #     loss_fn =
	 * torch.compile(loss_fn)") to bbb1b616 (2025-04-02, PR #1033,
	 * build_cross_entropy_loss: "Compiling the loss function with
	 * torch.compile") its loss_fn "torch.nn.functional.cross_entropy(
	 * pred.flatten(0, 1).float(), labels.flatten(0, 1))" ran op by op:
	 * the eager loss's bytes below, over the logits the loss sees (ll:
	 * all V of them with replicated_logits). */
	/* replicated_logits: the head's vocab-parallel output gathered to
	 * Replicate on every TP rank (PyTorch's ColwiseParallel(
	 * output_layouts=Replicate()), KempnerForge's tensor_parallel.py:
	 * "Output head: ColwiseParallel (split vocab, gather to Replicate
	 * for loss)") and the loss over all V of them, a plain
	 * F.cross_entropy in the logits' 16-bit dtype run op by op outside
	 * the compiled model (KempnerForge training/loss.py
	 * cross_entropy_loss; scripts/train.py "model = torch.compile(
	 * model)" and "loss = loss_fn(logits, labels)" outside it).  ATen's
	 * cross_entropy is "at::log_softmax(self, class_dim,
	 * self.scalar_type())" then nll_loss (LossNLL.cpp): forward the
	 * log-softmax reads and writes T x V x A; backward nll_loss's
	 * gradient is a zeroed T x V tensor with the target entries
	 * written (cuda/Loss.cu nll_loss_backward) and log_softmax's
	 * backward ("_log_softmax_backward_data(grad, result, ...)",
	 * derivatives.yaml) reads it and the saved output and writes the
	 * logits' gradient: 2 A and 4 A a logit over V, not the fused
	 * vocab-parallel loss's over V/tp.  The eager and eager_loss
	 * losses keep their own bytes, over all V (ll).  The gather and its
	 * gradient are added below. */
	if (k->eager || k->eager_loss) {
		double up = k->A < 4.0 ?
			t_mem(e, k->half, ll * (k->A + 4.0)) : 0.0;

		loss_f = up + t_mem(e, k->half, ll * 8.0);
		loss_b = t_mem(e, k->half, ll * 4.0) +
			t_mem(e, k->half, ll * 12.0) + up;
	} else if (k->replicated_logits) {
		loss_f = t_mem(e, k->half, ll * 2.0 * k->A);
		loss_b = t_mem(e, k->half, ll * k->A) +
			t_mem(e, k->half, ll * 3.0 * k->A);
	}
	/* Liger's final norm (its RMSNorm class, base_model.norm) and
	 * torchtitan's FusedRMSNorm (fused_norm, model.norm): the fused
	 * norm's 2 A and 3 A above, its row's rstd left out. */
	if (k->eager && !k->liger && !k->fused_norm) {
		if (m->norm_params == m->hidden) {
			norm_f = ekernels(e, k, rms_fwd, NK(rms_fwd), el,
					  el / hid, &nk);
			norm_b = rms_bwd_kernels(e, k, el, el / hid, &nk);
		}
	}

	ld->emb = t_mem(e, k->half, 2.0 * k->T * hid * k->A) +
		(k->frozen || fo ? 0.0 : t_mem(e, k->half, el * (k->A + k->wacc)));
	/* The table's gradient is dense, not a scatter into the main grad:
	 * torch's embedding backward (F.embedding, which Megatron-Core's
	 * VocabParallelEmbedding calls at core_r0.8.0; nn.Embedding) first
	 * fills a whole table of zeros ("auto grad_weight = at::zeros(
	 * {num_weights, grad.size(-1)}, grad.options())",
	 * aten/src/ATen/native/cuda/EmbeddingBackwardKernel.cu) and scatters
	 * the T rows into it; the whole table is then added into the
	 * gradient the optimizer reads (Megatron's DDP hook
	 * "param.main_grad.add_(param.grad.data)", distributed_data_
	 * parallel.py _make_param_hook; torch's AccumulateGrad): per micro-
	 * batch V/tp x h x A written, then read with the main grad (read
	 * and write in its dtype, k->wacc). */
	if (!(k->frozen || fo))
		ld->emb += t_mem(e, k->half, Vt * hid * k->A) +
			t_mem(e, k->half, Vt * hid * (k->A + k->wacc));
	if (k->emb_matmul) {
		/* The lookup as a one-hot matmul (emb_matmul): Praxis'
		 * SharedEmbeddingSoftmax.emb_lookup and Embedding.emb_lookup
		 * with lookup_style 'matmul' run "one_hot_ids =
		 * jax.nn.one_hot(ids, self.num_classes, dtype=
		 * self.fprop_dtype)" then "linears.project_last_dim(
		 * one_hot_ids, self.theta.w)" (praxis layers/
		 * embedding_softmax.py at a0362d4, 2024-05-14), and Paxml's
		 * GPT configs set it ("EMBEDDING_LOOKUP_STYLE = 'matmul'",
		 * paxml tasks/lm/params/c4.py TransformerLmSpmdAdam;
		 * configure_gpt3_task "softmax_tpl.lookup_style =
		 * cls.EMBEDDING_LOOKUP_STYLE", contrib/gpu/scripts_gpu/
		 * configs.py at 7241216).  XLA of that era kept the dot: the
		 * GPU pass that rewrites Dot(OneHot(Indices), Weights) into a
		 * gather (OneHotGatherRewriter, xla/backends/gpu/transforms/
		 * onehot_rewriter.h) is of 2026.  So the iota-compare fusion
		 * writes the T x V/tp one-hot in the 16-bit type, a GEMM of
		 * 2 T V h / tp FLOPs (M T, N h, K V/tp) reads it and the
		 * table and writes the T x h embeddings; autodiff keeps the
		 * one-hot (its ids carry no gradient), and the backward's
		 * table gradient is the transposed product, one more GEMM of
		 * as many FLOPs (M V/tp, N h, K T), added into the gradient
		 * the optimizer reads as the gather's was.  It replaces the
		 * gather and its scatter above; the learned position table's
		 * lookup keeps its price below (its one-hot is one
		 * sequence's, S x S, unpacked: S^2 h FLOPs a micro-batch,
		 * under S / V of the word table's at S 2048, V 50304). */
		double ff = 2.0 * k->T * Vt * hid, oh = k->T * Vt * k->A;

		ld->emb = t_mem(e, k->half, oh) +
			train_t_op(e, ff, oh + Vt * hid * k->A +
				   k->T * hid * k->A, k->T, hid, Vt, 1,
				   k->half);
		if (!(k->frozen || fo))
			ld->emb += train_t_op(e, ff, oh + k->T * hid * k->A +
					      Vt * hid * k->A, Vt, hid, k->T,
					      1, k->half) +
				t_mem(e, k->half, Vt * hid * (k->A + k->wacc));
	}
	if (m->positions == GP_POS_LEARNED) {
		/* A learned position table (Megatron-Core's
		 * LanguageModelEmbedding with 'learned_absolute', GPT-2's
		 * wpe, OPT's OPTLearnedPositionalEmbedding): "embeddings =
		 * word_embeddings + position_embeddings" -- the gather of
		 * T rows of h (read, write) and the add (read two, write
		 * one), 5 T h A; backward the add passes its gradient
		 * through and the table's is scatter-added into its main
		 * grad as the word table's, T h (A + wacc).  The table
		 * is serial (every TP rank all T tokens), and with it
		 * Megatron-Core cannot reduce-scatter the word embeddings
		 * under SP ("self.reduce_scatter_embeddings = (not
		 * self.add_position_embedding) and ... and
		 * self.config.sequence_parallel"): they are all-reduced,
		 * the table added, then the sequence split. */
		double th = k->T * hid;

		ld->emb += t_mem(e, k->half, 5.0 * th * k->A) +
			(k->frozen || fo ? 0.0 :
			 t_mem(e, k->half, th * (k->A + k->wacc)));
		ld->emb_tp = train_t_coll(e, GP_ALL_REDUCE, act, tpg);
	} else {
		ld->emb_tp = k->sp ? train_t_coll(e, GP_REDUCE_SCATTER, act,
						  tpg) :
			train_t_coll(e, GP_ALL_REDUCE, act, tpg);
	}
	ld->head_f = train_t_op(e, f, bytes, k->T, Vt, hid, 1, k->half) +
		loss_f + norm_f;
	/* A forward-only pass (RL's log-probabilities) has no backward:
	 * without SP nor the all-reduce of the head input's gradient. */
	ld->head_b = fo ? 0.0 : train_t_op(e, f, bytes, k->T, hid, Vt, 1,
					k->half) +
		(head_trains ? train_t_op(e, f, Vt * hid * k->wacc +
				       k->T * (hid + Vt) * k->A, Vt, hid,
				       k->T, 1, k->half) : 0.0) +
		loss_b + norm_b;
	if (k->fused_linear_ce) {
		/* Liger-Kernel's fused linear cross-entropy (ops/
		 * fused_linear_cross_entropy.py at v0.8.0): the forward
		 * runs, chunk by chunk (mem_liger_chunk: ch tokens, ceil(T /
		 * ch) chunks), "logits_chunk = _input_chunk @ weight.t()", the
		 * cross-entropy kernel over it (ops/cross_entropy.py: "[Online
		 * softmax] first pass: find max + sum" reads the 16-bit
		 * row, a second pass reads it again and stores the gradient
		 * in place, "tl.store(X_ptr + X_offsets, X_block"): 3 A a
		 * logit), "grad_input[start_idx:end_idx] = grad_logits_chunk
		 * @ weight" and, where the head trains, "grad_weight +=
		 * torch.mm(grad_logits_chunk.t(), _input_chunk).float()"
		 * (the product written in 16 bits by the GEMM, its fp32 copy
		 * read A write 4, the add read A and 4 write A: 3 A + 8 a
		 * weight each chunk).  All three GEMMs and the loss are in
		 * the forward, each chunk re-reading the weight; nothing is
		 * recomputed.  The backward only scales the saved gradients
		 * by grad_output, and "If cross entropy is the last layer,
		 * grad_output is 1.0. Skip the mul to save time": the final
		 * norm's backward alone is left.  A forward-only pass (no
		 * gradient asked) runs the logits GEMM and the kernel. */
		/* Whole chunks: "num_chunks = triton.cdiv(BT, chunk_size)",
		 * the last "end_idx = min((chunk_id + 1) * chunk_size, BT)"
		 * -- floor(T / ch) chunks of ch rows and one of the rest,
		 * each re-reading the weight (4000 tokens of Llama 3 8B:
		 * ch 128, 31 of 128 rows and one of 32, 32 weight reads
		 * where T / ch priced 31.25). */
		double ch = mem_liger_chunk(k->T, Vt, hid);
		double nf = floor(k->T / ch), rest = k->T - nf * ch;
		int wg = head_trains && !fo;

		ld->head_f = nf * liger_chunk_time(e, k, ch, Vt, hid, fo, wg) +
			(rest > 0.0 ? liger_chunk_time(e, k, rest, Vt, hid, fo,
						       wg) : 0.0) +
			t_mem(e, k->half, lv * 3.0 * k->A) + norm_f;
		ld->head_b = fo ? 0.0 : norm_b;
	}
	/* metric_losses: Composer's train metrics.  After each micro-
	 * batch's backward Composer 0.16 (trainer.py _train_microbatch: "#
	 * Use microbatch outputs to update training metrics", then
	 * _eval_train_metrics under torch.no_grad() and the run's autocast)
	 * hands the kept logits to every train metric; llm-foundry's MPT
	 * has two by default (modeling_mpt.py: "use_train_metrics =
	 * om_model_config.get('use_train_metrics', True)", "train_metrics
	 * = [LanguageCrossEntropy(), LanguagePerplexity()]"), and each
	 * update is a plain "torch.nn.CrossEntropyLoss(ignore_index=
	 * ignore_index, reduction='sum')" over them (composer/metrics/
	 * nlp.py; LanguagePerplexity subclasses it, its update the same).
	 * cross_entropy autocasts to float32 (the CUDA autocast op list):
	 * the cast reads A and writes 4 B a logit, log_softmax reads and
	 * writes 4, nll_loss gathers T of them -- the eager loss's forward
	 * above, A + 12 B a logit in two passes, once per metric and with
	 * no backward.  It runs after the backward on the compute stream,
	 * so it is added to the head's backward time. */
	if (k->metric_losses > 0) {
		double up = k->A < 4.0 ?
			t_mem(e, k->half, ll * (k->A + 4.0)) : 0.0;

		ld->head_b += k->metric_losses *
			(up + t_mem(e, k->half, ll * 8.0));
	}
	ld->head_tp = k->sp ? train_t_coll(e, GP_ALL_GATHER, act, tpg) +
		(fo ? 0.0 : train_t_coll(e, GP_REDUCE_SCATTER, act, tpg)) :
		(fo ? 0.0 : train_t_coll(e, GP_ALL_REDUCE, act, tpg));
	if (k->replicated_logits && k->tp > 1) {
		/* The gather itself: DTensor's Shard(-1) -> Replicate is
		 * funcol.all_gather_tensor along the last dim, an
		 * all_gather_into_tensor of the T x V/tp x A shards into
		 * T x V x A stacked by rank, then "res = torch.cat(
		 * torch.chunk(res, group_size, dim=0), dim=gather_dim)"
		 * (torch/distributed/_functional_collectives.py): the
		 * collective on the TP group and a copy, read and write
		 * T x V x A.  Its backward, Replicate -> Shard(-1), is a
		 * local chunk, "return shards[shard_index].clone()"
		 * (torch/distributed/tensor/placement_types.py Shard.
		 * _replicate_to_shard): read and write T x V/tp x A, no
		 * communication.  The collective waits on the critical
		 * path: the loss reads its output next. */
		double lg = k->T * m->vocab * k->A;

		ld->head_tp += train_t_coll(e, GP_ALL_GATHER, lg, tpg);
		ld->head_f += t_mem(e, k->half, 2.0 * lg);
		if (!fo)
			ld->head_b += t_mem(e, k->half, 2.0 * lg / k->tp);
	}
	/* One multi-token prediction module beside its transformer layer
	 * (DeepSeek-V3 report, arXiv 2412.19437 sec. 2.2: "the k-th MTP
	 * module consists of a shared embedding layer Emb, a shared
	 * output head OutHead, a Transformer block TRM_k, and a
	 * projection matrix M_k in R^{d x 2d}"; "we combine the
	 * representation of the i-th token at the (k-1)-th depth ... and
	 * the embedding of the (i+k)-th token ... with the linear
	 * projection" after "RMSNorm" of each).  Megatron-Core's
	 * MultiTokenPredictionLayer runs the same: enorm and hnorm, the
	 * eh_proj linear from 2h to h, the layer, the final layernorm and
	 * the shared output layer with its own loss -- Megatron-Bridge's
	 * flop_utils.py counts "MTP eh norm + final nrom", "MTH eh proj"
	 * and "Logit ... (mtp_num_layers + 1)".  So: two more input norms,
	 * eh_proj's three 16-bit GEMMs (forward, data and weight
	 * gradient; its output split over TP as the head's), and the
	 * head's logits, loss and norm once more (its TP collectives
	 * once more too: train_stage.c stage_base). */
	{
		double ht = hid / (double)k->tp, ef = 2.0 * k->T * 2.0 * hid * ht;

		ld->mtp_f = ld->head_f + 2.0 * norm_f +
			train_t_op(e, ef, 2.0 * hid * ht * 2.0 +
				   k->T * (2.0 * hid + ht) * k->A,
				   k->T, ht, 2.0 * hid, 1, k->half);
		ld->mtp_b = fo ? 0.0 : ld->head_b + 2.0 * norm_b +
			train_t_op(e, ef, 2.0 * hid * ht * 2.0 +
				   k->T * (2.0 * hid + ht) * k->A,
				   k->T, 2.0 * hid, ht, 1, k->half) +
			(head_trains ? train_t_op(e, ef, 2.0 * hid * ht *
				   k->wacc + k->T * (2.0 * hid + ht) * k->A,
				   ht, 2.0 * hid, k->T, 1, k->half) : 0.0);
	}
}
