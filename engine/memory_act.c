/*
 * memory_act.c - what one layer saves for backward (see memory_act.h).
 *
 * Activations follow Korthikanti et al. 2022, "Reducing Activation
 * Recomputation in Large Transformer Models" (arXiv 2205.05198), sec. 4.1:
 * with s tokens, b sequences, h hidden, a heads and 16-bit activations one
 * GPT layer saves
 *
 *   attention  11 s b h + 5 a s^2 b   (QKV input 2sbh, Q and K 4sbh,
 *                                      softmax 2as^2b, its dropout mask
 *                                      as^2b, dropout output 2as^2b, V 2sbh,
 *                                      projection input 2sbh, mask sbh)
 *   MLP        19 s b h               (fc1 input 2sbh, GeLU input 8sbh,
 *                                      fc2 input 8sbh, dropout mask sbh)
 *   norms       4 s b h               (two LayerNorm inputs)
 *   total      s b h (34 + 5 a s / h)                         (eq. 1)
 *
 * sec. 4.2.1: tensor parallelism splits all but the norm inputs, the two
 * matmul inputs of each block and the two dropout masks (10 sbh stay):
 * s b h (10 + 24/t + 5 a s / (h t)) (eq. 2); sec. 4.2.2: sequence
 * parallelism splits those as well: s b h / t (34 + 5 a s / h) (eq. 3).
 * sec. 5 (Table 2): selective recompute drops the 5 a s^2 b core-attention
 * term; full recompute keeps only the layer input, 2 s b h.
 *
 * Here each saved tensor is listed per op with its real width, so the same
 * code covers GQA (K and V are kv_heads * head_dim wide), MLA (latents),
 * SwiGLU (gate, up and the down-projection input), MoE (top_k * capacity
 * copies of each token through the experts), fused (flash) attention
 * (Dao et al. 2022: saves the output and the fp32 log-sum-exp per row, no
 * s^2 tensor), dropout on/off and context parallelism (s / cp tokens).
 *
 * Korthikanti's counts assume every weight trains.  On a frozen base
 * (LoRA, QLoRA) autograd keeps a matmul's input only when something
 * needs it (keep_input below): the activation functions, the products,
 * the norms and the attention core keep theirs whatever trains; a
 * frozen bf16 linear keeps nothing, a bitsandbytes 4-bit one keeps its
 * input, an adapter keeps its input (or its dropout output and mask)
 * and its rank-r intermediate.
 *
 * DeepSeek-V3's memory savings (report arXiv:2412.19437), each an
 * option:
 *   recompute_modules (Megatron-Core's names, output-discarding
 *   checkpointing) -- sec. 3.2.3: "We recompute all RMSNorm operations
 *   and MLA up-projections during back-propagation, thereby eliminating
 *   the need to persistently store their output activations."
 *   layernorm: a norm's output (the next linear's input) is dropped, its
 *   input stays (the recompute reads it); mla_up_proj: q, k and v are
 *   rebuilt from the latents; moe_act: sec. 3.3.3 (2) "we cache the
 *   inputs of the SwiGLU operator and recompute its output in the
 *   backward pass": the experts' down-projection input is dropped.
 *   fp8_cache -- sec. 3.3.3 "it is a natural choice to cache activations
 *   in FP8 format for the backward pass of the Linear operator": each
 *   linear's input 1 B plus one fp32 scale per 1x128 tile (sec. 3.3.2);
 *   (1) the input of the linear after attention in E5M6, 12 bits; (2)
 *   the MoE SwiGLU inputs in fp8.  The norms, the router (gating) and
 *   the attention operator keep their precision (sec. 3.3.1), so the
 *   norm inputs, the router's input, q, k, v and the expert outputs
 *   kept for the combine stay 16-bit.
 *
 * Transformer Engine's fp8 linears (fp8_te: Megatron-Core and NeMo
 * under fp8) keep what their weight-gradient GEMM reads, the quantised
 * input: TE module/linear.py "Discard row-wise data since it is not
 * needed in backward pass ... saved_inputmat = inputmat" (an fp8
 * tensor, 1 B an element; its per-tensor scale is negligible; MXFP8's
 * one byte per 32 is left out, 3% of these tensors).  So the QKV, fc1
 * and fc2 inputs (LayerNormLinear, LayerNormMLP: the activation output
 * quantised for fc2) are 1 B; the fc1 output, the activation's input,
 * stays 16-bit; the fused attention keeps its output O in 16 bits for
 * its own backward and the projection keeps an fp8 copy of it as its
 * input, A + 1 B.  Norm inputs, q, k, v and the router are not linear
 * inputs of TE: 16-bit.
 *
 * Encoder-decoder layers (T5, Hugging Face modeling_t5.py): an encoder
 * layer saves what a decoder-only layer saves over the input tokens
 * (bidirectional attention keeps the same s^2 tensors).  A decoder layer
 * adds the cross-attention block: its norm input, the q linear's input,
 * q, the K and V of the s_enc encoder tokens, the softmax over
 * s_dec x s_enc scores (and its dropout), the o input, a dropout mask;
 * the k and v linears read the encoder output, one tensor for all
 * decoder layers (enc_out).  T5's MLP applies dropout between the
 * activation and wo (T5DenseActDense, T5DenseGatedActDense): with
 * dropout its mask (1 byte) and its output (wo's input) are kept.  A
 * ReLU MLP (T5 v1.0) keeps the activation's output, which is also wo's
 * input: one tensor of f where GeLU keeps two.
 */
#include "memory_act.h"

#include <string.h>

static const char *const recompute_names[GP_RECOMPUTE_COUNT] = {
	"none", "selective", "full", "op"
};

const char *mem_recompute_name(gp_recompute r)
{
	return GP_NAME_OF(recompute_names, GP_RECOMPUTE_COUNT, r);
}

int mem_recompute_parse(const char *s, gp_recompute *out, gp_error *err)
{
	int v = -1; /* set by gp_parse_name on GP_OK */

	if (gp_parse_name(s, recompute_names, GP_RECOMPUTE_COUNT, &v,
			  "recompute policy", err))
		return GP_EINVAL;
	*out = (gp_recompute)v;
	return GP_OK;
}

/* Bytes per element of a tensor cached in fp8 with one fp32 scale per
 * 1 x 128 tile (DeepSeek-V3 sec. 3.3.2), and of the E5M6 format the
 * attention output keeps (sec. 3.3.3 (1): 12 bits, same tiles). */
#define FP8_CACHED (1.0 + 4.0 / 128.0)
#define E5M6_CACHED (1.5 + 4.0 / 128.0)

/* Parse a comma-separated list of names[0..n) into a bit mask (bit i
 * for names[i]); "all" (when allow_all) is every bit; the empty list
 * is none when allow_empty.  what names the list in errors. */
static int parse_mask(const char *s, const char *const *names, int n,
		      int allow_all, int allow_empty, const char *what,
		      const char *expected, unsigned *out, gp_error *err)
{
	unsigned mask = 0;
	const char *p = s;

	if (!s || !out)
		return gp_fail(err, "%s: NULL", what);
	if (allow_all && strcmp(s, "all") == 0) {
		*out = (1u << n) - 1u;
		return GP_OK;
	}
	while (*p) {
		size_t len = strcspn(p, ",");
		int i, found = 0;

		for (i = 0; i < n; i++)
			if (strlen(names[i]) == len &&
			    strncmp(p, names[i], len) == 0) {
				mask |= 1u << i;
				found = 1;
			}
		if (!found)
			return gp_fail(err, "unknown %s '%.*s' (expected %s)",
				       what, (int)len, p, expected);
		p += len;
		if (*p == ',')
			p++;
	}
	if (mask == 0 && !allow_empty)
		return gp_fail(err, "no %ss given", what);
	*out = mask;
	return GP_OK;
}

int mem_recompute_modules_parse(const char *s, unsigned *out,
				gp_error *err)
{
	static const char *const names[] = {
		"layernorm", "mla_up_proj", "moe_act", "core_attn", "moe",
		"mlpwi", "mlp_act"
	};
	int rc = parse_mask(s, names, 7, 0, 1, "recompute module",
			    "layernorm, mla_up_proj, moe_act, core_attn, moe, "
			    "mlpwi, mlp_act",
			    out, err);

	if (rc == GP_OK)
		*out |= GP_RECMOD_LISTED;
	return rc;
}

/* Megatron-Core's rule (megatron/core/transformer/transformer_config.py):
 * recompute_modules "default: ["core_attn"]", and in __post_init__ "if
 * self.recompute_modules is None: self.recompute_modules =
 * ["core_attn"]" -- a stated list replaces the default, so
 * `--recompute-granularity selective --recompute-modules moe_act
 * layernorm` rebuilds those two and keeps the core attention's
 * tensors, and an empty list ("if len(self.recompute_modules) > 0")
 * rebuilds nothing.  So: with a list (policy selective; the Lua side
 * refuses none with a non-empty list, which Megatron-Core runs as no
 * recomputation -- every module flag is read under
 * "recompute_granularity == 'selective'" -- and gives a list without a
 * policy selective, memory.lua prepare_shape; none here prices a list
 * as selective does) the core attention is re-run only when the list
 * names core_attn; without one, selective is the core attention
 * (Korthikanti et al. 2022 sec. 5).  Full and op price their own
 * re-run. */
int mem_core_attn_recomputed(gp_recompute r, unsigned mods)
{
	if (r != GP_RECOMPUTE_NONE && r != GP_RECOMPUTE_SELECTIVE)
		return 0;
	if (mods & (GP_RECMOD_ALL | GP_RECMOD_LISTED))
		return (mods & GP_RECMOD_CORE_ATTN) != 0;
	return r == GP_RECOMPUTE_SELECTIVE;
}

static int dflt(int v)
{
	return v > 0 ? v : 1;
}

/* Which inputs of a layer's matmuls are kept for backward.
 *
 * PyTorch autograd saves an operand of a matmul only to form the other
 * operand's gradient: for y = x W^T, dL/dx = g W needs W alone and
 * dL/dW = g^T x needs x, so x is kept only when W requires grad
 * (the generated autograd code guards each saved variable with
 * should_compute_output of the input whose formula uses it; PyTorch
 * tools/autograd/gen_variable_type.py, guard_for).  A frozen bf16
 * nn.Linear therefore keeps nothing.  bitsandbytes' 4-bit and 8-bit
 * matmuls are autograd Functions that keep their input A whenever A
 * or B needs grad (bitsandbytes autograd/_functions.py, MatMul4Bit
 * .forward: ctx.tensors = (A, B)), although grad_A uses only the
 * dequantised weight.  A LoRA adapter B A x keeps the input of A (the
 * base input itself, or with adapter dropout p > 0 the dropout output,
 * a new tensor, plus its 1-byte mask: native_dropout saves the bool
 * mask) and the rank-r output of A for B's gradient (Hu et al. 2021,
 * eq. 3).  Full training keeps every matmul input, as in Korthikanti
 * et al. 2022. */
typedef struct saves {
	int base;      /* the base kernel keeps its inputs */
	int drop;      /* adapter dropout on */
	double A;      /* bytes per element */
	double r;      /* LoRA rank */
} saves;

/* Bytes per token kept for one input tensor of width `width` that feeds
 * the base matmuls of `nlin` targets, `nlora` of them adapted: the
 * input itself when the base or a dropout-free adapter reads it, and
 * into *lora the adapter's own tensors. */
static double keep_input(const saves *k, double width, int nlora,
			 double *lora)
{
	if (nlora > 0) {
		if (k->drop)
			/* dropout output (A) and its bool mask (1 byte);
			 * one dropout per input tensor (LitGPT's fused
			 * QKV adapter; PEFT keeps one per module). */
			*lora += width * (k->A + 1.0);
		*lora += nlora * k->r * k->A;
	}
	return k->base || (nlora > 0 && !k->drop) ? width * k->A : 0.0;
}

static int nbits(unsigned v)
{
	int n = 0;

	for (; v; v >>= 1)
		n += (int)(v & 1u);
	return n;
}

/* T5's feed-forward dropout between the activation and wo: the
 * encoder-decoder models modelled here are the T5 family. */
static int inner_dropout(const gp_model *m, const gp_act_cfg *c)
{
	return c->dropout && m->encoder_layers > 0;
}

/* The MLP's activation is Hugging Face's gelu_new run as eager tensor
 * ops (mlp_saved): ffn_act "gelu_new", or an encoder-decoder's gated
 * GeLU (T5 v1.1), under the eager modules (eager_swiglu). */
static int eager_gelu_new(const gp_model *m, const gp_act_cfg *c)
{
	return c->eager_swiglu && (m->ffn_gelu_new ||
		(m->ffn_gated && m->ffn_gelu && m->encoder_layers > 0));
}

/* Elements saved per token by an MLP of width f, its input excluded.
 * Whatever trains: the activation's input (SiLU and GeLU backward need
 * it), for a gated MLP the product's two operands (silu(gate) and up;
 * a fused SwiGLU recomputes silu(gate) from gate and keeps gate and up
 * only, Megatron-LM fused_bias_swiglu), so 1f plain, 2f fused gated,
 * 3f eager gated.  The down-projection input (GeLU output, or the
 * product) is kept when that matmul keeps its input: +1f.  Full
 * training: 2f plain (Korthikanti's 8sbh + 8sbh at f = 4h), 3f fused,
 * 4f eager. */
static double mlp_saved(const gp_model *m, const gp_act_cfg *c, double f,
			int down)
{
	double act = !m->ffn_gated ? 1.0 : (c->eager_swiglu ? 3.0 : 2.0);

	/* Hugging Face's gelu_new in the eager modules -- GPT-2's
	 * activation_function (ffn_act "gelu_new") and T5 v1.1's gated
	 * GeLU, which T5Config maps to it ("if feed_forward_proj ==
	 * 'gated-gelu': self.dense_act_fn = 'gelu_new'") -- is
	 * transformers' activations.py NewGELUActivation, a chain of
	 * tensor ops, not one kernel:
	 *   0.5 * input * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) *
	 *       (input + 0.044715 * torch.pow(input, 3.0))))
	 * What autograd keeps for each (PyTorch tools/autograd/
	 * derivatives.yaml): pow.Tensor_Scalar "pow_backward(grad, self,
	 * exponent)" keeps its input (the activation's input, counted
	 * above); the products by a Python number and the adds of one
	 * (mul/add with a scalar operand: the gradient is grad times that
	 * number, or grad) keep no tensor; tanh "tanh_backward(grad,
	 * result)" keeps its output; the last mul.Tensor keeps both
	 * operands ("mul_tensor_backward(grad, other, ...)" and "(grad,
	 * self, ...)"), 0.5 * input and 1 + tanh.  So 3 elements per
	 * element more than a fused GeLU, which keeps its input only. */
	if (eager_gelu_new(m, c))
		act += 3.0;
	/* ReLU saves its output (threshold_backward reads the result), the
	 * very tensor wo reads -- unless T5's inner dropout sits between
	 * them and wo keeps the dropout output instead. */
	if (m->ffn_relu && !inner_dropout(m, c))
		return f;
	/* Squared ReLU (ffn_relu2) keeps one ffn-wide tensor for its
	 * backward as GeLU does: eager, relu's output (threshold_backward
	 * reads the result), which pow(., 2) also keeps as its input;
	 * Megatron-Core's torch.compile'd squared_relu, x or relu(x).  Its
	 * output, relu(x)^2, is the down-projection's input, a tensor of
	 * its own: the plain count above. */
	return (act + (down ? 1.0 : 0.0)) * f;
}

/* Bytes per token of an MLP of width f, its input excluded, with the
 * activation's saved inputs at actB bytes and the down-projection input
 * at downB (they differ when linear inputs are cached in fp8). */
static double mlp_bytes(const gp_model *m, const gp_act_cfg *c, double f,
			int down, double actB, double downB)
{
	double all = mlp_saved(m, c, f, down);
	double dn = down && !(m->ffn_relu && !inner_dropout(m, c)) ? f : 0;

	return (all - dn) * actB + dn * downB;
}

/* mem_act_layer's checks of its arguments. */
static int act_check(const gp_model *m, const gp_act_cfg *c, int moe,
		     gp_error *err)
{
	int tp = dflt(c->tp), cp = dflt(c->cp), ep = dflt(c->ep);

	if (model_check(m, err) != GP_OK)
		return GP_EINVAL;
	if (gp_check_pos(c->seq, "seq", err) ||
	    gp_check_pos(c->micro_batch, "micro_batch", err) ||
	    gp_check_count(c->tp, 0, "tp", err) ||
	    gp_check_count(c->cp, 0, "cp", err) ||
	    gp_check_count(c->ep, 0, "ep", err) ||
	    gp_check_count(c->lora_rank, 0, "lora_rank", err) ||
	    gp_check_nonneg(c->act_bytes, "act_bytes", err) ||
	    gp_check_nonneg(c->capacity_factor, "capacity_factor", err))
		return GP_EINVAL;
	if ((int)c->recompute < 0 || c->recompute >= GP_RECOMPUTE_COUNT)
		return gp_fail(err, "unknown recompute policy %d",
			       (int)c->recompute);
	/* The op policy is priced for torchtitan's dense decoder layer
	 * (its llama3 _save_list and the order of its linears). */
	if (c->recompute == GP_RECOMPUTE_OP &&
	    (moe || m->mla.kv_lora_rank > 0 || c->frozen || c->enc_len > 0 ||
	     m->pattern[0]))
		return gp_fail(err, "recompute op is priced for dense decoder "
			       "layers in full training (not MoE, MLA, "
			       "adapters, cross-attention or a hybrid "
			       "stack)");
	if (c->recompute_modules &
	    ~(unsigned)(GP_RECMOD_ALL | GP_RECMOD_LISTED))
		return gp_fail(err, "bad recompute module mask %u",
			       c->recompute_modules);
	if (c->lora_targets > 127)
		return gp_fail(err, "bad LoRA target mask %u",
			       c->lora_targets);
	if (m->heads % tp != 0)
		return gp_fail(err, "tp %d does not divide the %d attention "
			       "heads", tp, m->heads);
	if (moe && m->moe.experts <= 0)
		return gp_fail(err, "moe layer asked of a dense model");
	if (moe && m->moe.experts % ep != 0)
		return gp_fail(err, "ep %d does not divide the %d experts", ep,
			       m->moe.experts);
	if (c->seq < cp)
		return gp_fail(err, "cp %d is larger than seq %g", cp, c->seq);
	if (gp_check_nonneg(c->enc_len, "enc_len", err))
		return GP_EINVAL;
	if (c->enc_len > 0 && m->encoder_layers <= 0)
		return gp_fail(err, "enc_len %g given for a decoder-only model",
			       c->enc_len);

	return GP_OK;
}

/* What mem_act_layer's parts share: the widths, who keeps matmul
 * inputs, the shape on this GPU, the LoRA targets and the adapters'
 * bytes per token summed so far. */
typedef struct act_ctx {
	gp_widths w;
	saves k;
	double s, sk, b, t, A, rep, par, cf, tok, lora;
	double L, Lo;  /* bytes of a kept linear input; of the o input */
	double Ls;     /* bytes of the (MoE) SwiGLU input */
	double N;      /* bytes of a norm's input, the residual stream */
	double cq, cm; /* 16-bit copies kept of the attention's and the
			* dense MLP's input: one, or under autocast one
			* per linear reading it (act_autocast) */
	unsigned tg, rm;
	int lqkv, lo, lmlp, ld;
} act_ctx;

/* torch.autocast over fp32 weights (c->autocast): nanoVLM's training
 * loop (huggingface/nanoVLM measure_vram.py and train.py at 91a3b93,
 * "with torch.autocast(device_type='cuda', dtype=torch.bfloat16)" over
 * a model left in fp32), and the Hugging Face Trainer's bf16/fp16 amp
 * over a model loaded in fp32.  What changes against a model whose
 * weights are 16-bit, from PyTorch's autocast (aten/src/ATen/autocast_
 * mode.cpp and the "CUDA Ops that can autocast to float16" / "to
 * float32" lists of the Automatic Mixed Precision docs, docs.pytorch.org
 * /docs/stable/amp.html):
 *  - the residual stream is fp32: the embedding's output is fp32 (its
 *    weight is), and each residual add of an fp32 tensor and a 16-bit
 *    linear output promotes to fp32 ("ops not listed ... run in the
 *    type that type promotion produces"; add is not listed).  So a
 *    norm's input, which its backward keeps, is 4 B an element: an
 *    fp32-policy layer_norm (listed "to float32") saves its fp32 input;
 *    an eager RMSNorm (LlamaRMSNorm; nanoVLM's models/language_model.py
 *    RMSNorm, "irms = torch.rsqrt(torch.mean(x ** 2, ...)); x = x *
 *    irms * self.weight": pow, mean, mul are not listed) runs in fp32
 *    and keeps its fp32 input and the fp32 normalised tensor its weight
 *    multiplies (mem_norm_bytes with A = 4: 4 + 4);
 *  - a linear ("linear" and "matmul" listed "to float16") casts its
 *    fp32 input to the 16-bit type inside the op and its backward keeps
 *    that cast: the cast cache holds only leaf tensors ("cached_cast ...
 *    can_try_cache = (to_type == get_lower_precision_fp_from_device_type
 *    ... && arg.is_leaf() && !arg.is_view() && cache_enabled", autocast_
 *    mode.h), the weights, so each linear reading the norm's output
 *    makes and keeps its own copy: three for separate q, k, v linears
 *    (split_proj qkv), two for a gated MLP's separate gate and up
 *    (split_proj mlp), one for a fused projection.  The linears'
 *    outputs are 16-bit, so what follows them (q, k, v, the attention
 *    output, the activation's tensors, the down projection's input) is
 *    priced at A as before.
 * The layer input a full recompute keeps is the fp32 stream: 4 B.
 * Only where the base trains: a frozen linear keeps no cast (its
 * weight needs no gradient), the adapters' own inputs are not priced
 * here (gp.memory refuses autocast with LoRA). */
static void act_autocast(const gp_model *m, const gp_act_cfg *c,
			 act_ctx *x)
{
	int on = c->autocast && !c->frozen;

	x->N = on ? 4.0 : x->A;
	x->cq = on && (c->split_proj & 1) && x->w.latent == 0 ? 3.0 : 1.0;
	x->cm = on && (c->split_proj & 2) && m->ffn_gated ? 2.0 : 1.0;
}

static void act_ctx_of(const gp_model *m, const gp_act_cfg *c, act_ctx *x)
{
	int cp = dflt(c->cp);
	unsigned tg;

	model_widths(m, &x->w);
	x->s = c->seq / cp;       /* query tokens held by this CP rank */
	x->sk = c->seq;           /* keys each query attends to */
	x->b = c->micro_batch;
	x->t = dflt(c->tp);
	x->A = c->act_bytes > 0 ? c->act_bytes : 2.0;
	x->cf = c->capacity_factor > 0 ? c->capacity_factor : 1.0;
	x->tok = x->s * x->b;     /* tokens per micro-batch on this GPU */
	/* Tensors every TP rank holds in full without SP (sec. 4.2.1);
	 * sequence parallelism splits them t ways (sec. 4.2.2). */
	x->rep = c->sp ? 1.0 / x->t : 1.0;
	x->par = 1.0 / x->t;
	x->lora = 0;

	/* Who keeps matmul inputs: every matmul in full training; on a
	 * frozen base only a quantised kernel or an adapter. */
	x->k.base = !c->frozen || c->base_saves_input;
	x->k.drop = c->frozen && c->lora_dropout;
	/* fp8 caching of the linears' inputs (full training: DeepSeek-V3
	 * sec. 3.3.3); the attention output in E5M6. */
	x->L = c->fp8_cache && !c->frozen ? FP8_CACHED : x->A;
	x->Lo = c->fp8_cache && !c->frozen ? E5M6_CACHED : x->A;
	x->Ls = x->L;
	if (c->fp8_te && !c->fp8_cache && !c->frozen) {
		/* TE: the linears' inputs fp8, O kept 16-bit by the
		 * attention plus the projection's fp8 copy, the
		 * activation's input 16-bit (see the header). */
		x->L = 1.0;
		x->Lo = x->A + 1.0;
		x->Ls = x->A;
	}
	/* Megatron-Core reads recompute_modules under the selective
	 * granularity only (TransformerLayer: "if
	 * self.config.recompute_granularity == 'selective'" before its
	 * layernorm, mlp and moe_act flags): a full re-run keeps what a
	 * layer keeps without them, as the step's time prices it
	 * (train_layer.c, train.c: no module re-run under full).  auto
	 * and a search reach full with the job's list. */
	x->rm = c->recompute == GP_RECOMPUTE_FULL ? 0u : c->recompute_modules;
	x->k.A = x->L;
	x->k.r = c->frozen ? c->lora_rank : 0;
	act_autocast(m, c, x);
	tg = x->tg = c->frozen && c->lora_rank > 0 ? c->lora_targets : 0;
	x->lqkv = nbits(tg & (GP_LORA_Q | GP_LORA_K | GP_LORA_V));
	x->lo = nbits(tg & GP_LORA_O);
	x->lmlp = nbits(tg & (m->ffn_gated ? GP_LORA_GATE | GP_LORA_UP :
			      GP_LORA_UP));
	x->ld = nbits(tg & GP_LORA_DOWN);
}

/* Hugging Face's RMSNorm (transformers
 * src/transformers/models/llama/modeling_llama.py, LlamaRMSNorm.forward,
 * the same at commit 0022728 of the v4.38 modules and in later releases;
 * Mistral's and Qwen2's modules copy it; torchtitan's own RMSNorm,
 * torchtitan/models/norms.py, is the same chain: "output =
 * self._norm(x.float()).type_as(x)", "return output * self.weight"):
 *   hidden_states = hidden_states.to(torch.float32)
 *   variance = hidden_states.pow(2).mean(-1, keepdim=True)
 *   hidden_states = hidden_states * torch.rsqrt(variance + eps)
 *   return self.weight * hidden_states.to(input_dtype)
 * What autograd keeps (PyTorch tools/autograd/derivatives.yaml): pow's
 * backward reads its input, the fp32 copy, 4 B an element (mul keeps
 * the same tensor and the per-row rsqrt); _to_copy's backward keeps no
 * tensor, so the 16-bit input itself is not held by the norm; the last
 * mul keeps its other operand for the weight's gradient only when the
 * weight requires grad ("other: mul_tensor_backward(grad, self, ...)"):
 * the normalised tensor in the activation dtype, a tensor apart from the
 * norm's output, which the next linear keeps (counted with it).  A fused
 * norm keeps its A-byte input and the per-row statistic.  Only an RMSNorm
 * decoder: LayerNorm (nn.LayerNorm) is one kernel, and T5's norm orders
 * its casts differently. */
double mem_norm_bytes(const gp_model *m, int eager, int frozen, double A)
{
	if (!eager || m->norm_params != m->hidden || m->encoder_layers > 0)
		return A;
	return (A > 4.0 ? A : 4.0) + (frozen ? 0.0 : A);
}

/* The norms' inputs, the attention block's tensors and core
 * attention's. */
static void act_attention(const gp_model *m, const gp_act_cfg *c,
			  act_ctx *x, gp_act_layer *out)
{
	const gp_widths *w = &x->w;
	double A = x->A, tok = x->tok, rep = x->rep, par = x->par;
	double sk = x->sk, in_qkv, o_in, lat, up_in, qkv;
	int lqkv = x->lqkv, lo = x->lo;

	/* Two norm inputs, h each: RMSNorm/LayerNorm backward needs its
	 * input (and the per-row rstd) for the input gradient whether or
	 * not its weight trains.  A layer whose input needs no grad (the
	 * first one above a frozen embedding) keeps no first-norm input. */
	out->norms = (c->input_nograd ? 1.0 : 2.0) * m->hidden *
		mem_norm_bytes(m, c->eager_norm, c->frozen, x->N) * tok * rep;
	/* QKV input (the first norm's output) is replicated; Q, K, V and
	 * the projection input are split over heads.  Core attention
	 * (flash or the unfused QK^T and softmax.V) keeps Q, K, V
	 * whatever trains: the query/key/value gradients need each other.
	 * The projection input is the attention output, which flash keeps
	 * anyway (Dao et al. 2022 Algorithm 2 saves O); unfused, it is
	 * kept only when the projection keeps its input. */
	in_qkv = keep_input(&x->k, m->hidden * rep, lqkv, &x->lora) * x->cq;
	o_in = c->flash ? w->o * par * x->Lo :
		keep_input(&x->k, w->o * par, lo, &x->lora) * x->Lo / x->L;
	if (c->flash)
		/* the adapter only */
		(void)keep_input(&x->k, w->o * par, lo, &x->lora);
	/* MLA's latents: each normed (kept for its norm's backward) and
	 * its normed copy, the up-projection's input (half of w->latent
	 * each).  layernorm recompute drops the norms' outputs: the QKV
	 * input and the normed latents; mla_up_proj drops q, k and v,
	 * rebuilt from the latents (DeepSeek-V3 sec. 3.2.3). */
	lat = w->latent * rep * 0.5;
	up_in = x->rm & GP_RECMOD_LAYERNORM ? 0.0 : lat * x->L;
	qkv = (w->q + w->k + w->v) * par * A;
	out->rebuilt = 0;
	if (x->rm & GP_RECMOD_LAYERNORM) {
		out->rebuilt += tok * (in_qkv + lat * x->L);
		in_qkv = 0;
	}
	if ((x->rm & GP_RECMOD_MLA_UP) && w->latent > 0) {
		out->rebuilt += tok * qkv;
		qkv = 0;
	}
	out->attention = tok * (in_qkv + lat * A + up_in + qkv + o_in);
	if (c->fused_qkv_view && w->latent == 0) {
		/* LitGPT's CausalSelfAttention (lit_gpt/model.py, 2023):
		 * qkv = self.attn(x) is viewed and split into q, k, v;
		 * rope and torch.cat make new q and k, the kernel saves
		 * q, k, v.  With kv_heads == heads v stays a view of the
		 * fused output, so all q + k + v of it stays alive: the
		 * buffer's q and k parts come on top (2h for MHA).  With
		 * GQA k and v are expand()-ed to every head and reshape
		 * copies them: the saved k and v are q-wide, the buffer
		 * is freed, 2 (q - k) more than the kv-wide pair. */
		double extra = w->k == w->q ? w->q + w->k : 2.0 * (w->q - w->k);

		out->attention += tok * extra * par * A;
	} else if (c->kv_repeat && w->latent == 0 && w->q > w->k) {
		/* torchtitan's Llama (models/llama/model.py at 9dec370):
		 * "keys = repeat_kv(xk, self.n_rep)", "values =
		 * repeat_kv(xv, self.n_rep)", then
		 * "F.scaled_dot_product_attention(xq, xk, xv,
		 * is_causal=True)" on their transposes; repeat_kv is
		 * "torch.unsqueeze(x, dim=3).expand(...).reshape(bs, slen,
		 * n_kv_heads * n_rep, head_dim)", a copy q wide.  The
		 * attention keeps the tensors it is handed (flash: q, k,
		 * v and the output for its backward; the math path's
		 * matmuls their operands), so K and V stay q wide; the
		 * kv-wide K after RoPE is kept by nothing (its complex
		 * multiply by freqs_cis, which needs no grad, saves only
		 * freqs_cis: PyTorch derivatives.yaml mul "other:
		 * mul_tensor_backward(grad, self, ...)" only when other
		 * requires grad), nor is V's (reshape's backward keeps
		 * no tensor).  2 q - k - v more than the kv-wide pair.
		 * Under op SAC and full recompute the copy is not kept
		 * across layers (neither repeat_kv's reshape nor its
		 * expand is in the op policy's save list) and this only
		 * widens one layer's rebuilt set (out->full). */
		out->attention += tok * (2.0 * w->q - w->k - w->v) * par * A;
	}
	/* DeepSpeed-Ulysses as verl runs it (verl/models/transformers/
	 * monkey_patch.py _ulysses_flash_attention_forward, verl/utils/
	 * ulysses.py).  Each rank's tokens are tok = seq / N outside
	 * attention; the exchange hands the kernel all tokens of heads / N,
	 * the same element count, so q and the kv-wide k and v it keeps are
	 * what a rank without Ulysses keeps.  Two things are kept beyond:
	 *  - with fewer kv heads (of a TP rank) than N, "repeats =
	 *    max(ulysses_sp_size // key_states.size(2), 1)"; "key_states =
	 *    repeat_kv(key_states, repeats)" (and value_states) before
	 *    gather_seq_scatter_heads: the kernel keeps one head of all
	 *    tokens each, N / kv of the kv-wide width, where the repeated
	 *    local copy is kept by nothing (SeqAllToAll saves no tensor);
	 *  - the attention output: flash keeps its O for its backward
	 *    (Dao et al. 2022 Algorithm 2) in the heads-split layout, and
	 *    gather_heads_scatter_seq returns a new tensor
	 *    ("torch.cat(output_list, dim=gather_dim).contiguous()") that
	 *    o_proj keeps as its input, o wide: without Ulysses the two
	 *    are one tensor (o_in above).
	 * Flash only: verl patches the flash attention forward; unfused,
	 * the PV product keeps no output of its own. */
	if (c->ulysses > 1 && c->flash && w->latent == 0) {
		double kvh = (double)m->kv_heads * par;

		if (!c->kv_repeat && kvh >= 1.0 && kvh < c->ulysses)
			out->attention += tok * (c->ulysses / kvh - 1.0) *
				(w->k + w->v) * par * A;
		out->attention += tok * w->o * par * A;
	}
	/* Core attention.  Unfused: the softmax output 2as^2b; with
	 * dropout also its mask as^2b and the dropout output 2as^2b
	 * (Korthikanti eq. 1: 5as^2b).  Hugging Face's eager attention
	 * runs softmax(dtype=float32).to(A): autograd keeps the fp32
	 * softmax output for its backward and the PV matmul the 16-bit
	 * copy, 4 + A bytes a score (one tensor when A is 4).  The
	 * clamp of transformers' 2023 eager attention (attn_clamp: OPT's
	 * and Llama's "attn_weights = torch.max(attn_weights,
	 * torch.tensor(torch.finfo(attn_weights.dtype).min))" after the
	 * mask) keeps its input, the masked scores, A more: PyTorch's
	 * max.other backward compares them with the bound
	 * (derivatives.yaml "at::where(self == other, grad / 2,
	 * grad).masked_fill_(self < other, 0)").  Fused (FlashAttention,
	 * Dao et al. 2022 Algorithm 2): only the fp32 log-sum-exp per
	 * query row; the output is the projection input already
	 * counted. */
	if (c->flash)
		out->core = 4.0 * m->heads * tok * par;
	else
		out->core = (double)m->heads * tok * sk * par *
			((c->eager_softmax && A < 4.0 ? 4.0 + A : A) +
			 (c->dropout ? A + 1.0 : 0.0) +
			 (c->attn_clamp ? A : 0.0));
}

/* Whether a layer's down projection (fc2, the routed experts' too)
 * keeps its input, the activation's output, for the backward: every
 * matmul in full training and under a base whose kernel keeps its input
 * anyway (act_ctx's k.base), else an adapter on it that reads it (LoRA's
 * down target) without a dropout of its own in between (k.drop). */
int mem_act_down_kept(const gp_act_cfg *c)
{
	int lora = c->frozen && c->lora_rank > 0;

	return !c->frozen || c->base_saves_input ||
		(lora && (c->lora_targets & GP_LORA_DOWN) && !c->lora_dropout);
}

/* The MLP block's tensors, dense or routed MoE. */
static void act_mlp(const gp_model *m, const gp_act_cfg *c, int moe,
		    act_ctx *x, gp_act_layer *out)
{
	const gp_widths *w = &x->w;
	double A = x->A, tok = x->tok, rep = x->rep, par = x->par;
	double cf = x->cf, in_mlp, e_in = 0;
	int lmlp = x->lmlp, ld = x->ld, down, mact;

	/* MLP: its input (the second norm's output, replicated) plus the
	 * per-op intermediates split over t. */
	down = mem_act_down_kept(c);
	if (!moe) {
		in_mlp = keep_input(&x->k, m->hidden * rep, lmlp,
				    &x->lora) * x->cm;
		(void)keep_input(&x->k, w->dense_f * par, ld, &x->lora);
		if (x->rm & GP_RECMOD_LAYERNORM) {
			out->rebuilt += tok * in_mlp;
			in_mlp = 0;
		}
		/* mlp_act: the activation's output, the down
		 * projection's input, is dropped and re-run from the kept
		 * fc1 output, as moe_act does for the experts (under
		 * mlpwi, below, it goes with the rest). */
		mact = (x->rm & GP_RECMOD_MLP_ACT) &&
			!(x->rm & GP_RECMOD_MLPWI) && down;
		out->mlp = tok * (in_mlp + mlp_bytes(m, c, w->dense_f,
						     down && !mact, A, x->L) *
				  par);
		if (mact)
			out->rebuilt += tok * w->dense_f * par * x->L;
		/* mlpwi: none of the MLP's own tensors are kept -- the
		 * gate and up outputs (or fc1's), the activation's and
		 * the down projection's input are rebuilt in the backward
		 * from the MLP's input.  MaxText's "save_dot_except_mlpwi"
		 * saves the names "query_proj", "value_proj", "key_proj",
		 * "qkv_proj", "out_proj", "mlpwo" only (MaxText/layers/
		 * models.py, jax.checkpoint_policies.save_only_these_names;
		 * "mlpwi" is the input projections' output, linears.py
		 * MlpBlock), so everything between the MLP's input and
		 * mlpwo is recomputed; mlpwo's own output is needed by no
		 * backward op, so dropping it too ("save_dot_except_mlp")
		 * saves the same bytes here. */
		if (x->rm & GP_RECMOD_MLPWI) {
			double own = tok * mlp_bytes(m, c, w->dense_f, down,
						     A, x->L) * par;

			out->rebuilt += own;
			out->mlp -= own;
		}
	} else {
		/* Routed MoE: the router keeps fp32 logits (E per token);
		 * each token goes to top_k experts, cf times over for
		 * capacity padding; the experts see the dispatched copy of
		 * the token (h, kept when the expert matmuls keep their
		 * input), their intermediates, and their outputs are kept
		 * for the gate-weighted combine (h: the product with the
		 * router probability needs it for the router's gradient).
		 * With EP the all-to-all brings, on average, as many tokens
		 * to each GPU as it sends, so EP does not divide these
		 * (Lepikhin et al. 2020, GShard sec. 2.2).  Adapters on
		 * routed experts are priced like the dense ones, per copy. */
		double kk = m->moe.top_k * cf, el = 0, ex;
		int moe_act = (x->rm & GP_RECMOD_MOE_ACT) != 0;

		/* The norm output feeds the router and the shared
		 * experts; the routed experts read the dispatched copy.
		 * The router (gating) keeps its precision (DeepSeek-V3
		 * sec. 3.3.1): its input stays 16-bit under fp8 caching. */
		in_mlp = keep_input(&x->k, m->hidden * rep,
				    w->shared_f > 0 ? lmlp : 0, &x->lora) *
			A / x->L;
		if (x->rm & GP_RECMOD_LAYERNORM) {
			out->rebuilt += tok * in_mlp;
			in_mlp = 0;
		}
		e_in = keep_input(&x->k, m->hidden * rep, lmlp, &el);
		(void)keep_input(&x->k, w->expert_f * par, ld, &el);
		x->lora += kk * el;
		if (w->shared_f > 0)
			(void)keep_input(&x->k, w->shared_f * par, ld,
					 &x->lora);
		/* The experts, routed (kk copies) and shared: the SwiGLU
		 * inputs in fp8 under fp8 caching (sec. 3.3.3 (2), "the
		 * SwiGLU operator in MoE"); moe_act drops the SwiGLU
		 * output, the down-projection input. */
		ex = (kk * mlp_bytes(m, c, w->expert_f, down && !moe_act,
				     x->Ls, x->L) +
		      mlp_bytes(m, c, w->shared_f, down && !moe_act, x->Ls,
				x->L)) * par;
		if (moe_act && down)
			out->rebuilt += tok * (kk * w->expert_f +
					       w->shared_f) * par * x->L;
		/* Each copy's output, h wide, is kept for the router
		 * weight's gradient when the weight multiplies it at the
		 * combine (GShard; Mixtral's modelling; Megatron-Core's
		 * unpermute with probs).  Megatron-Core's GroupedMLP and
		 * TEGroupedMLP apply the weight inside the activation
		 * (activation_func_with_probs: act(fc1) * probs, then fc2),
		 * whose gradient reads the f-wide activation output that
		 * the down-projection keeps (or moe_act rebuilds): the
		 * combine then sums, and nothing h wide stays. */
		out->mlp = tok * (in_mlp + 4.0 * m->moe.experts * rep +
				  kk * (e_in + (c->probs_in_act ? 0.0 :
						A * m->hidden * rep)) + ex);
		/* DeepSpeed's MOELayer (deepspeed/moe/sharded_moe.py):
		 * its dispatch einsum("sec,sm->ecm", dispatch_mask.
		 * type_as(input[0]), ...) keeps the cast mask for the
		 * tokens' gradient, its combine einsum("sec,ecm->sm",
		 * combine_weights.type_as(input[0]), expert_output) the
		 * cast weights for expert_output's: two S x E x C tensors
		 * in the activations' dtype, S the micro-batch's tokens
		 * (every TP rank routes them all), C = ceil(top_k S cf /
		 * E).  E C / S grows with S: per token, A E C bytes each. */
		if (c->moe_einsum) {
			double C = ceil(m->moe.top_k * tok * cf /
					m->moe.experts);

			out->mlp += tok * 2.0 * A * m->moe.experts * C;
		}
		/* recompute_modules "moe": Megatron-Core's MoELayer.forward
		 * (megatron/core/transformer/moe/moe_layer.py) runs its
		 * custom_forward -- shared experts, route, preprocess,
		 * dispatch, routed experts, combine, postprocess -- under
		 * "tensor_parallel.checkpoint(custom_forward, False,
		 * hidden_states, ...)" (te_checkpoint under fp8) when
		 * moe_layer_recompute: normal checkpointing
		 * (transformer_config.py: "moe" ... "use normal
		 * checkpointing"), which saves only its inputs.  So the
		 * block keeps its input, the pre-MLP norm's output (h
		 * wide, 16-bit, SP-split), and everything above is rebuilt
		 * in the layer's backward.  Under layernorm too that input
		 * is the norm's discarded output (the checkpoint holds the
		 * same storage), rebuilt with the rest. */
		if (x->rm & GP_RECMOD_MOE) {
			double in = (x->rm & GP_RECMOD_LAYERNORM) ? 0.0 :
				tok * A * m->hidden * rep;

			out->rebuilt += out->mlp - in;
			out->mlp = in;
		}
	}
}

/* An encoder-decoder's cross-attention (enc_len > 0): its tensors, the
 * encoder output, its core attention and dropout masks. */
static void act_cross(const gp_model *m, const gp_act_cfg *c, act_ctx *x,
		      gp_act_layer *out)
{
	const gp_widths *w = &x->w;
	double A = x->A, tok = x->tok, rep = x->rep, par = x->par;
	double b = x->b;
	unsigned tg = x->tg;
	int lo = x->lo;
	/* Cross-attention (modeling_t5.py T5LayerCrossAttention):
	 * the q adapter and the k/v adapters are PEFT's q, k, v
	 * targets on EncDecAttention as on SelfAttention (matched
	 * by module name).  eb: encoder tokens of the micro-batch;
	 * their adapter tensors are per layer, the encoder output
	 * itself is one tensor (enc_out). */
	double eb = b * c->enc_len, el = 0, q_in, kv_in, co_in;
	int lq = nbits(tg & GP_LORA_Q);
	int lkv = nbits(tg & (GP_LORA_K | GP_LORA_V));

	out->norms += m->hidden * A * tok * rep;
	q_in = keep_input(&x->k, m->hidden * rep, lq, &x->lora);
	kv_in = keep_input(&x->k, m->hidden * rep, lkv, &el);
	co_in = c->flash ? w->o * par * A :
		keep_input(&x->k, w->o * par, lo, &x->lora);
	if (c->flash)
		(void)keep_input(&x->k, w->o * par, lo, &x->lora);
	out->enc_out = eb * kv_in;
	out->cross = tok * (q_in + w->q * par * A + co_in) +
		eb * ((w->k + w->v) * par * A + el);
	if (c->flash)
		out->core += 4.0 * m->heads * tok * par;
	else
		out->core += (double)m->heads * tok * c->enc_len *
			par * (c->dropout ? 2.0 * A + 1.0 : A);
	if (c->dropout)
		out->masks += m->hidden * tok * rep;
}

/* torchtitan's per-op selective activation checkpointing (activation_
 * checkpoint mode "selective", selective_ac_option "op"; torchtitan
 * e7c0cae, torchtitan/models/llama3/parallelize_llama.py): each block
 * runs under torch.utils.checkpoint with a policy that MUST_SAVEs the
 * outputs of the ops in _save_list -- aten.mm, SDPA's flash and
 * memory-efficient kernels, _c10d_functional.reduce_scatter_tensor and
 * aten.max -- "except every second mm" (a per-block counter of aten.mm
 * calls; the even-numbered ones are PREFER_RECOMPUTE), and recomputes
 * every other op in backward.  What one layer keeps:
 *   the block's input (the checkpoint's argument), h;
 *   with fused attention, SDPA's outputs: the output (the o input) and
 *   its log-sum-exp (out->core); unfused (math) attention is not in the
 *   list and re-runs;
 *   under sequence parallelism the two reduce-scatter outputs, h/t each;
 *   the odd-numbered aten.mm outputs in the forward's order wq, wk, wv,
 *   wo, then w1, w3, w2 (FeedForward: w2(silu(w1(x)) * w3(x))) or fc1,
 *   fc2: q, v, the gate and the down-projection's output (h wide: the
 *   partial sums before a TP reduction) -- gated; q, v, fc1 ungated.
 * fp8 linears (torchao Float8Linear, tensorwise) keep the same outputs:
 * at eab345c, torchao/float8/float8_linear.py's
 * manual_float8_matmul_with_args_in_float8.forward calls torch.mm on two
 * Float8Tensors, and float8_ops.py registers the Float8Tensor handler for
 * aten.mm.default ("@implements([aten.mm.default, aten.matmul.default])"),
 * which runs _scaled_mm inside it and returns the output in the input's
 * original dtype ("output_dtype = a._orig_dtype"): the checkpoint's
 * policy meets aten.mm, counts it and keeps every other one, 16-bit.
 * Measured: torchtitan PR 808 (Llama 3 8B, 8 H100s, compile, this op
 * policy) logs "memory: 47.65GiB" for bf16, 47.77GiB for row-wise float8
 * and 47.32GiB for tensorwise float8 with float8 all-gather; torchtitan
 * issue 1207 (8B, per op SAC, FSDP 2 TP 2): "bf16: 5378 TPS, 45.68 GiB
 * peak memory - float8 rowwise: 5189 TPS, 45.67 GiB"; and the torchtitan
 * 2412 benchmark's Table 1 and 3 rows, compile bf16 77.0 and 62.0 GiB,
 * compile float8 76.8 and 61.8 GiB.  aten.max's amax scalars are
 * negligible; 9dec370's list also held aten.abs, whose full-size output
 * torchtitan PR 820 removed after it kept abs(W3) of an unsharded weight
 * under row-wise scaling ("the minimal repro was a FFN with per op AC +
 * FSDP + compile + float8 row-wise scaling"); the tensorwise runs above
 * show no such excess, so it is not priced.  Dropout masks are recomputed (native_dropout is not
 * listed).  Every recomputed tensor is rebuilt for the layer's backward,
 * so one layer's full set (out->full) is the working set then.
 * The list names the SDPA ops it keeps: at 6fc499f (August 2025)
 * "torch.ops.aten._scaled_dot_product_efficient_attention.default,
 * torch.ops.aten._scaled_dot_product_flash_attention.default" and not
 * cuDNN's, which torchtitan's own SDPA wrapper runs first on sm100
 * (models/attention.py: "# Add CuDNN on B200 w/ highest priority");
 * torchtitan b39377f9f (2025-12-01, "add all SDPA backends to
 * op_sac_save_list ... to avoid recomputing attention during backward")
 * added _scaled_dot_product_cudnn_attention.  Where the kernel that ran
 * is not listed (sac_attn_recompute) its outputs are not kept: the
 * fused attention is then kept as the unfused is, not at all. */
static double act_op_saved(const gp_model *m, const gp_act_cfg *c,
			   const act_ctx *x, double core)
{
	const gp_widths *w = &x->w;
	double h = m->hidden, par = x->par, kept = h * x->rep;
	double mm[6];
	int i, n = 0, attn = c->flash && !c->sac_attn_recompute;

	if (attn)
		kept += w->o * par;
	if (c->sp && x->t > 1)
		kept += 2.0 * h * x->rep;
	/* mm outputs in forward order; 1st, 3rd, ... are saved */
	mm[n++] = w->q * par;
	mm[n++] = w->k * par;
	mm[n++] = w->v * par;
	mm[n++] = h;                      /* wo */
	mm[n++] = w->dense_f * par;       /* w1 (gate) or fc1 */
	mm[n++] = m->ffn_gated ? w->dense_f * par : h;
	for (i = 0; i < n; i += 2)
		kept += mm[i];
	if (m->ffn_gated)
		kept += h;                /* w2, the 7th */
	return kept * x->A * x->tok + (attn ? core : 0.0);
}

/* A hybrid stack's Mamba layer (kind 'M'): what MambaMixer's memory-
 * efficient path keeps for the backward (model_mamba_act_bytes: mamba_ssm
 * ssd_combined.py MambaSplitConv1dScanCombinedFn "ctx.save_for_backward(
 * zxbcdt, conv1d_weight, conv1d_bias, out_x, ...)"), split as
 * Megatron-Core splits the layer: the pre-norm's input and its output
 * (in_proj's input: TELayerNormColumnParallelLinear keeps its normed
 * input, the TP rank's T / t tokens of it under SP, as act_attention's
 * QKV input), h each and replicated without SP (rep); zxbcdt (in_proj's
 * output, in_width / t a token), out_x and the gated norm's input and
 * its output (out_proj's input), d_inner / t each, and the gated norm's
 * fp32 rstd per group (groups / t), split over the heads and groups a
 * rank holds.  recompute_modules layernorm drops the norm's output, as
 * the attention block's, rebuilt in the layer's backward. */
static void act_mamba(const gp_model *m, act_ctx *x, gp_act_layer *out)
{
	double A = x->A, tok = x->tok, rep = x->rep, par = x->par;
	double di = (double)m->mamba.heads * m->mamba.head_dim, nout;

	nout = m->hidden * rep * A;
	if (x->rm & GP_RECMOD_LAYERNORM) {
		out->rebuilt += tok * nout;
		nout = 0;
	}
	out->mamba = tok * (nout + (model_mamba_in_width(m) + 3.0 * di) *
			    par * A + 4.0 * m->mamba.groups * par);
}

int mem_act_layer(const gp_model *m, const gp_act_cfg *c, int moe,
		  gp_act_layer *out, gp_error *err)
{
	return mem_act_kind(m, c, moe ? 'E' : '-', out, err);
}

int mem_act_kind(const gp_model *m, const gp_act_cfg *c, int kind,
		 gp_act_layer *out, gp_error *err)
{
	act_ctx x;
	const gp_widths *w = &x.w;
	double A, tok, rep, par;
	unsigned tg;
	int moe = kind == 'E', hy;

	if (!c || !out)
		return gp_fail(err, "mem_act_layer: NULL argument");
	if (act_check(m, c, moe, err))
		return GP_EINVAL;
	hy = m->pattern[0] != 0;
	act_ctx_of(m, c, &x);
	A = x.A;
	tok = x.tok;
	rep = x.rep;
	par = x.par;
	tg = x.tg;
	out->mamba = 0;
	if (hy) {
		/* One block and its pre-norm's input (act_attention's
		 * norms are two): the other parts zero. */
		memset(out, 0, sizeof *out);
		if (kind == '*')
			act_attention(m, c, &x, out);
		else if (kind == '-' || kind == 'E')
			act_mlp(m, c, moe, &x, out);
		else
			act_mamba(m, &x, out);
		out->norms = m->hidden * mem_norm_bytes(m, c->eager_norm,
			c->frozen, x.N) * tok * rep;
	} else {
		act_attention(m, c, &x, out);
		act_mlp(m, c, moe, &x, out);
	}
	/* LitGPT's LoRAQKVLinear.zero_pad (lit_gpt/lora.py, 2023) scatters
	 * the adapter output of the enabled q/k/v parts into a zero
	 * buffer as wide as the fused output with index_copy; PyTorch's
	 * backward formula for index_copy's source is
	 * grad.index_select(dim, index).expand_as(source)
	 * (tools/autograd/derivatives.yaml), so autograd keeps the source
	 * tensor itself: the enabled widths, per token.  With all three
	 * enabled zero_pad returns its input and nothing is scattered. */
	if (c->lora_zero_pad && x.lqkv > 0 && x.lqkv < 3)
		x.lora += ((tg & GP_LORA_Q ? w->q : 0.0) +
			 (tg & GP_LORA_K ? w->k : 0.0) +
			 (tg & GP_LORA_V ? w->v : 0.0)) * par * A;
	/* Dropout masks, 1 byte per element, after the attention and MLP
	 * blocks (Korthikanti: sbh each); T5's inside the MLP too. */
	out->masks = c->dropout ? (hy ? 1.0 : 2.0) * m->hidden * tok * rep :
		0.0;
	if (inner_dropout(m, c))
		out->masks += (moe ? 0.0 : w->dense_f) * tok * par;
	out->cross = out->enc_out = 0;
	if (c->enc_len > 0)
		act_cross(m, c, &x, out);
	out->lora = tok * x.lora;

	out->full = out->norms + out->attention + out->core + out->mlp +
		out->masks + out->lora + out->cross + out->mamba;
	switch (c->recompute) {
	case GP_RECOMPUTE_OP:
		out->total = act_op_saved(m, c, &x, out->core);
		break;
	case GP_RECOMPUTE_FULL:
		/* Only the layer input survives (Table 2: 2sbh; split over
		 * t when SP keeps it sharded); fp32 under autocast. */
		out->total = m->hidden * x.N * tok * rep;
		break;
	default:
		/* Korthikanti sec. 5: the core attention recomputed
		 * (selective, or core_attn listed). */
		out->total = mem_core_attn_recomputed(c->recompute,
						      c->recompute_modules) ?
			out->full - out->core : out->full;
	}
	return GP_OK;
}

int mem_lora_targets_parse(const char *s, unsigned *out, gp_error *err)
{
	static const char *const names[] = {
		"q", "k", "v", "o", "gate", "up", "down"
	};

	return parse_mask(s, names, 7, 1, 0, "LoRA target",
			  "q,k,v,o,gate,up,down or all", out, err);
}

double mem_lora_params(const gp_model *m, int rank, unsigned targets)
{
	gp_widths w;
	double h, r = rank, attn = 0, mlp = 0, f;
	int nmoe;

	if (model_check(m, NULL) != GP_OK || rank < 0 || targets > 127)
		return -1.0;
	model_widths(m, &w);
	h = m->hidden;
	/* A (in x r) and B (r x out) per adapted matrix: r (in + out). */
	if (targets & GP_LORA_Q)
		attn += r * (h + w.q);
	if (targets & GP_LORA_K)
		attn += r * (h + w.k);
	if (targets & GP_LORA_V)
		attn += r * (h + w.v);
	if (targets & GP_LORA_O)
		attn += r * (w.o + h);
	nmoe = model_moe_layers(m);
	/* Per MLP of width f: gate and up h -> f, down f -> h. */
#define MLP_LORA(f_) \
	(((targets & GP_LORA_GATE) && m->ffn_gated ? r * (h + (f_)) : 0) + \
	 ((targets & GP_LORA_UP) ? r * (h + (f_)) : 0) + \
	 ((targets & GP_LORA_DOWN) ? r * ((f_) + h) : 0))
	f = w.dense_f;
	mlp = (m->layers - nmoe) * MLP_LORA(f);
	if (nmoe > 0)
		mlp += nmoe * (m->moe.experts * MLP_LORA(w.expert_f) +
			       (m->moe.shared_experts > 0 ?
				m->moe.shared_experts *
				MLP_LORA(model_shared_ffn(m)) :
				0));
	if (m->encoder_layers > 0)
		/* The encoder's layers and the decoder's cross-attention
		 * (q, k, v, o of the self-attention's shape): PEFT matches
		 * targets by module name in both stacks. */
		return ((double)m->encoder_layers + 2.0 * m->layers) * attn +
			((double)m->encoder_layers + m->layers) *
			MLP_LORA(f);
#undef MLP_LORA
	return m->layers * attn + mlp;
}
