/*
 * memory.c - per-GPU memory breakdown: model states, activations, KV cache,
 * reserve and margin.  See memory.h for the recipe table and its sources.
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
 */
#include "memory.h"

#include <float.h>
#include <math.h>
#include <string.h>

static const char *const recipe_names[GP_RECIPE_COUNT] = {
	"mixed-16", "megatron-18", "fp32", "bf16", "fp8", "deepspeed-bf16"
};
static const char *const optim_names[GP_OPT_COUNT] = {
	"adamw", "adam8bit", "sgd"
};
static const char *const recompute_names[GP_RECOMPUTE_COUNT] = {
	"none", "selective", "full"
};
static const char *const schedule_names[GP_SCHED_COUNT] = {
	"1f1b", "interleaved"
};
static const char *const pipe_names[GP_PIPE_COUNT] = {
	"megatron", "deepspeed"
};
static const char *const partition_names[GP_PART_COUNT] = {
	"auto", "uniform", "parameters", "type:transformer",
	"type:transformer|embedding"
};
static const char *const comp_names[GP_MEM_NCOMP] = {
	"weights", "grads", "master", "optimizer", "adapter", "param_gather",
	"activations", "recompute", "logits", "vision_activations",
	"pipe_buffers", "grad_reduce",
	"ref_model",
	"reward_model", "critic", "rollout_weights", "kv_cache", "workspace",
	"cuda_context", "lib_workspace", "comm_buffers", "fragmentation",
	"optimizer_paged"
};

static int parse_name(const char *s, const char *const *names, int n,
		      int *out, const char *what, gp_error *err)
{
	char list[160];
	size_t used = 0;
	int i;

	for (i = 0; i < n; i++)
		if (s && strcmp(s, names[i]) == 0) {
			*out = i;
			return GP_OK;
		}
	/* The choices, ", "-separated (a name may itself hold '|'); a name
	 * that would not fit whole with its separator and the NUL ends the
	 * list instead of overflowing it. */
	list[0] = '\0';
	for (i = 0; i < n; i++) {
		size_t k = strlen(names[i]);
		if (used + k + 3 > sizeof list)
			break;
		if (i > 0) {
			list[used++] = ',';
			list[used++] = ' ';
		}
		memcpy(list + used, names[i], k);
		used += k;
		list[used] = '\0';
	}
	return gp_fail(err, "unknown %s '%s' (expected %s)", what,
		       s ? s : "(null)", list);
}

#define NAME_OF(arr, n, v) ((int)(v) >= 0 && (int)(v) < (n) ? arr[v] : "?")

const char *mem_recipe_name(gp_recipe r)
{
	return NAME_OF(recipe_names, GP_RECIPE_COUNT, r);
}

int mem_recipe_parse(const char *s, gp_recipe *out, gp_error *err)
{
	int v;

	if (parse_name(s, recipe_names, GP_RECIPE_COUNT, &v, "recipe", err))
		return GP_EINVAL;
	*out = (gp_recipe)v;
	return GP_OK;
}

const char *mem_optim_name(gp_optim o)
{
	return NAME_OF(optim_names, GP_OPT_COUNT, o);
}

int mem_optim_parse(const char *s, gp_optim *out, gp_error *err)
{
	int v;

	if (parse_name(s, optim_names, GP_OPT_COUNT, &v, "optimizer", err))
		return GP_EINVAL;
	*out = (gp_optim)v;
	return GP_OK;
}

const char *mem_recompute_name(gp_recompute r)
{
	return NAME_OF(recompute_names, GP_RECOMPUTE_COUNT, r);
}

int mem_recompute_parse(const char *s, gp_recompute *out, gp_error *err)
{
	int v;

	if (parse_name(s, recompute_names, GP_RECOMPUTE_COUNT, &v,
		       "recompute policy", err))
		return GP_EINVAL;
	*out = (gp_recompute)v;
	return GP_OK;
}

const char *mem_schedule_name(gp_schedule s)
{
	return NAME_OF(schedule_names, GP_SCHED_COUNT, s);
}

int mem_schedule_parse(const char *s, gp_schedule *out, gp_error *err)
{
	int v;

	if (parse_name(s, schedule_names, GP_SCHED_COUNT, &v,
		       "pipeline schedule", err))
		return GP_EINVAL;
	*out = (gp_schedule)v;
	return GP_OK;
}

const char *mem_pipe_name(gp_pipe_engine p)
{
	return NAME_OF(pipe_names, GP_PIPE_COUNT, p);
}

int mem_pipe_parse(const char *s, gp_pipe_engine *out, gp_error *err)
{
	int v;

	if (parse_name(s, pipe_names, GP_PIPE_COUNT, &v, "pipeline engine",
		       err))
		return GP_EINVAL;
	*out = (gp_pipe_engine)v;
	return GP_OK;
}

const char *mem_partition_name(gp_partition p)
{
	return NAME_OF(partition_names, GP_PART_COUNT, p);
}

int mem_partition_parse(const char *s, gp_partition *out, gp_error *err)
{
	int v;

	if (parse_name(s, partition_names, GP_PART_COUNT, &v,
		       "pipeline partition", err))
		return GP_EINVAL;
	*out = (gp_partition)v;
	return GP_OK;
}

const char *mem_comp_name(int comp)
{
	return comp >= 0 && comp < GP_MEM_NCOMP ? comp_names[comp] : "?";
}

int mem_state_bytes(gp_recipe r, gp_optim o, gp_state_bytes *out,
		    gp_error *err)
{
	double state;   /* bytes of one optimizer-state element */
	double nstates; /* states per parameter */

	if (!out)
		return gp_fail(err, "mem_state_bytes: NULL output");
	out->master_shard0 = 0;
	switch (r) {
	case GP_RECIPE_MIXED16:
		/* ZeRO (Rajbhandari et al. 2020) sec. 3.1: fp16 params and
		 * grads 2 + 2, fp32 params, momentum, variance 4 + 4 + 4. */
		out->weights = 2; out->grads = 2; out->master = 4; state = 4;
		break;
	case GP_RECIPE_MEGATRON18:
		/* Megatron-LM distributed optimizer: bf16 params, fp32 main
		 * grads, fp32 main params, fp32 Adam states = 18. */
		out->weights = 2; out->grads = 4; out->master = 4; state = 4;
		break;
	case GP_RECIPE_FP32:
		out->weights = 4; out->grads = 4; out->master = 0; state = 4;
		break;
	case GP_RECIPE_BF16:
		/* Pure bf16: the optimizer updates the bf16 params directly
		 * and keeps its states in bf16. */
		out->weights = 2; out->grads = 2; out->master = 0; state = 2;
		break;
	case GP_RECIPE_FP8:
		/* Transformer Engine fp8: the bf16 param plus its cached
		 * fp8 cast (1 B), otherwise megatron-18. */
		out->weights = 3; out->grads = 4; out->master = 4; state = 4;
		break;
	case GP_RECIPE_DSBF16:
		/* DeepSpeed BF16_Optimizer (memory.h): bf16 params, bf16
		 * .grad (2) + flat fp32 accumulation buffer (4), fp32
		 * master partition, fp32 Adam states on that partition. */
		out->weights = 2; out->grads = 2 + 4; out->master = 4;
		state = 4;
		out->master_shard0 = 1;
		break;
	default:
		return gp_fail(err, "unknown recipe %d", (int)r);
	}
	switch (o) {
	case GP_OPT_ADAMW:
		nstates = 2;
		break;
	case GP_OPT_ADAM8BIT:
		/* Dettmers et al. 2022: two 8-bit states, one fp32 absmax
		 * per 2048-element block each. */
		nstates = 2;
		state = 1.0 + 4.0 / 2048.0;
		break;
	case GP_OPT_SGD:
		nstates = 1; /* momentum buffer */
		break;
	default:
		return gp_fail(err, "unknown optimizer %d", (int)o);
	}
	out->optimizer = nstates * state;
	return GP_OK;
}

double mem_quant_bits(const gp_quant *q)
{
	if (!q || !gp_finite(q->bits) || q->bits <= 0 || q->bits > 32 ||
	    q->group < 0 || !gp_finite(q->group_bits) || q->group_bits < 0)
		return -1.0;
	if (q->group == 0)
		return q->bits;
	return q->bits + q->group_bits / q->group;
}

static int dflt(int v)
{
	return v > 0 ? v : 1;
}

/* A count of the config (parallel degree, rank, block): 0 (= default)
 * up to GP_COUNT_MAX. */
static int check_int(int v, const char *name, gp_error *err)
{
	return gp_check_count(v, 0, name, err);
}

/* An amount (tokens, sequences, bytes): finite, > 0, <= GP_AMOUNT_MAX,
 * so that products of amounts and model widths stay finite. */
static int check_pos(double v, const char *name, gp_error *err)
{
	if (!gp_finite(v) || v <= 0 || v > GP_AMOUNT_MAX)
		return gp_fail(err, "%s must be a positive number up to %g "
			       "(got %g)", name, GP_AMOUNT_MAX, v);
	return GP_OK;
}

/* Tokens of one sequence: 0 (none) up to GP_COUNT_MAX, the longest
 * context the model kernels size (model_kv_bytes). */
static int check_tokens(double v, const char *name, gp_error *err)
{
	if (!gp_finite(v) || v < 0 || v > GP_COUNT_MAX)
		return gp_fail(err, "%s must be 0 to %d tokens (got %g)", name,
			       GP_COUNT_MAX, v);
	return GP_OK;
}

/* As check_pos, 0 allowed (0 = default or none). */
static int check_nonneg(double v, const char *name, gp_error *err)
{
	return gp_check_num(v, 0, GP_AMOUNT_MAX, name, err);
}

/* Bytes per cached KV element: 0 = the default, else one bit (1/8 B) to
 * 16 B.  Below a bit no format exists, and the sequences that fit are
 * free bytes / KV bytes: a denormal width made that count inf. */
static int check_elem(double v, const char *name, gp_error *err)
{
	if (v == 0.0)
		return GP_OK;
	if (!gp_finite(v) || v < 0.125 || v > 16.0)
		return gp_fail(err, "%s must be 0 (default) or 0.125..16 "
			       "bytes per element (got %g)", name, v);
	return GP_OK;
}

/* Widths of one layer in elements per token. */
typedef struct widths {
	double q, k, v;      /* Q and K (after rope), V */
	double o;            /* output-projection input */
	double latent;       /* MLA latents saved for the up-projections */
	double dense_f;      /* dense MLP intermediate */
	double expert_f, shared_f; /* one expert, all shared experts */
} widths;

static void layer_widths(const gp_model *m, widths *w)
{
	const gp_mla *a = &m->mla;

	if (a->kv_lora_rank > 0) {
		/* DeepSeek-V2 sec. 2.1.2: per-head q and k of
		 * nope + rope dims, v of v_head_dim; the normalised kv and
		 * q latents feed the up-projections, so they are saved. */
		double dq = (double)a->qk_nope_head_dim + a->qk_rope_head_dim;
		w->q = m->heads * dq;
		w->k = m->heads * dq;
		w->v = (double)m->heads * a->v_head_dim;
		w->o = w->v;
		w->latent = 2.0 * ((double)a->kv_lora_rank + a->q_lora_rank);
	} else {
		w->q = (double)m->heads * m->head_dim;
		w->k = (double)m->kv_heads * m->head_dim;
		w->v = w->k;
		w->o = w->q;
		w->latent = 0;
	}
	w->dense_f = model_dense_ffn(m);
	w->expert_f = m->moe.ffn_hidden;
	w->shared_f = m->moe.shared_experts * model_shared_ffn(m);
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

	return (act + (down ? 1.0 : 0.0)) * f;
}

int mem_act_layer(const gp_model *m, const gp_act_cfg *c, int moe,
		  gp_act_layer *out, gp_error *err)
{
	widths w;
	saves k;
	double s, sk, b, t, A, rep, par, cf, tok, lora = 0, in_qkv, in_mlp;
	double o_in, e_in = 0;
	int tp, cp, ep, lo = 0, ld = 0, lmlp = 0, lqkv = 0, down;
	unsigned tg;

	if (!c || !out)
		return gp_fail(err, "mem_act_layer: NULL argument");
	if (model_check(m, err) != GP_OK)
		return GP_EINVAL;
	if (check_pos(c->seq, "seq", err) ||
	    check_pos(c->micro_batch, "micro_batch", err) ||
	    check_int(c->tp, "tp", err) || check_int(c->cp, "cp", err) ||
	    check_int(c->ep, "ep", err) ||
	    check_int(c->lora_rank, "lora_rank", err) ||
	    check_nonneg(c->act_bytes, "act_bytes", err) ||
	    check_nonneg(c->capacity_factor, "capacity_factor", err))
		return GP_EINVAL;
	if ((int)c->recompute < 0 || c->recompute >= GP_RECOMPUTE_COUNT)
		return gp_fail(err, "unknown recompute policy %d",
			       (int)c->recompute);
	if (c->lora_targets > 127)
		return gp_fail(err, "bad LoRA target mask %u",
			       c->lora_targets);
	tp = dflt(c->tp);
	cp = dflt(c->cp);
	ep = dflt(c->ep);
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

	layer_widths(m, &w);
	s = c->seq / cp;          /* query tokens held by this CP rank */
	sk = c->seq;              /* keys each query attends to */
	b = c->micro_batch;
	t = tp;
	A = c->act_bytes > 0 ? c->act_bytes : 2.0;
	cf = c->capacity_factor > 0 ? c->capacity_factor : 1.0;
	tok = s * b;              /* tokens per micro-batch on this GPU */
	/* Tensors every TP rank holds in full without SP (sec. 4.2.1);
	 * sequence parallelism splits them t ways (sec. 4.2.2). */
	rep = c->sp ? 1.0 / t : 1.0;
	par = 1.0 / t;

	/* Who keeps matmul inputs: every matmul in full training; on a
	 * frozen base only a quantised kernel or an adapter. */
	k.base = !c->frozen || c->base_saves_input;
	k.drop = c->frozen && c->lora_dropout;
	k.A = A;
	k.r = c->frozen ? c->lora_rank : 0;
	tg = c->frozen && c->lora_rank > 0 ? c->lora_targets : 0;
	lqkv = nbits(tg & (GP_LORA_Q | GP_LORA_K | GP_LORA_V));
	lo = nbits(tg & GP_LORA_O);
	lmlp = nbits(tg & (m->ffn_gated ? GP_LORA_GATE | GP_LORA_UP :
			   GP_LORA_UP));
	ld = nbits(tg & GP_LORA_DOWN);

	/* Two norm inputs, h each: RMSNorm/LayerNorm backward needs its
	 * input (and the per-row rstd) for the input gradient whether or
	 * not its weight trains.  A layer whose input needs no grad (the
	 * first one above a frozen embedding) keeps no first-norm input. */
	out->norms = (c->input_nograd ? 1.0 : 2.0) * m->hidden * A * tok *
		rep;
	/* QKV input (the first norm's output) is replicated; Q, K, V and
	 * the projection input are split over heads.  Core attention
	 * (flash or the unfused QK^T and softmax.V) keeps Q, K, V
	 * whatever trains: the query/key/value gradients need each other.
	 * The projection input is the attention output, which flash keeps
	 * anyway (Dao et al. 2022 Algorithm 2 saves O); unfused, it is
	 * kept only when the projection keeps its input. */
	in_qkv = keep_input(&k, m->hidden * rep, lqkv, &lora);
	o_in = c->flash ? w.o * par * A :
		keep_input(&k, w.o * par, lo, &lora);
	if (c->flash)
		(void)keep_input(&k, w.o * par, lo, &lora); /* adapter only */
	out->attention = tok * (in_qkv + w.latent * rep * A +
				(w.q + w.k + w.v) * par * A + o_in);
	if (c->fused_qkv_view && w.latent == 0) {
		/* LitGPT's CausalSelfAttention (lit_gpt/model.py, 2023):
		 * qkv = self.attn(x) is viewed and split into q, k, v;
		 * rope and torch.cat make new q and k, the kernel saves
		 * q, k, v.  With kv_heads == heads v stays a view of the
		 * fused output, so all q + k + v of it stays alive: the
		 * buffer's q and k parts come on top (2h for MHA).  With
		 * GQA k and v are expand()-ed to every head and reshape
		 * copies them: the saved k and v are q-wide, the buffer
		 * is freed, 2 (q - k) more than the kv-wide pair. */
		double extra = w.k == w.q ? w.q + w.k : 2.0 * (w.q - w.k);

		out->attention += tok * extra * par * A;
	}
	/* Core attention.  Unfused: the softmax output 2as^2b; with
	 * dropout also its mask as^2b and the dropout output 2as^2b
	 * (Korthikanti eq. 1: 5as^2b).  Fused (FlashAttention, Dao et al.
	 * 2022 Algorithm 2): only the fp32 log-sum-exp per query row; the
	 * output is the projection input already counted. */
	if (c->flash)
		out->core = 4.0 * m->heads * tok * par;
	else
		out->core = (double)m->heads * tok * sk * par *
			(c->dropout ? 2.0 * A + 1.0 : A);
	/* MLP: its input (the second norm's output, replicated) plus the
	 * per-op intermediates split over t. */
	down = k.base || (ld > 0 && !k.drop);
	if (!moe) {
		in_mlp = keep_input(&k, m->hidden * rep, lmlp, &lora);
		(void)keep_input(&k, w.dense_f * par, ld, &lora);
		out->mlp = tok * (in_mlp + A * mlp_saved(m, c, w.dense_f,
							 down) * par);
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
		double kk = m->moe.top_k * cf, el = 0;

		/* The norm output feeds the router and the shared
		 * experts; the routed experts read the dispatched copy. */
		in_mlp = keep_input(&k, m->hidden * rep,
				    w.shared_f > 0 ? lmlp : 0, &lora);
		e_in = keep_input(&k, m->hidden * rep, lmlp, &el);
		(void)keep_input(&k, w.expert_f * par, ld, &el);
		lora += kk * el;
		if (w.shared_f > 0)
			(void)keep_input(&k, w.shared_f * par, ld, &lora);
		out->mlp = tok * (in_mlp + 4.0 * m->moe.experts * rep +
				  kk * (e_in + A * m->hidden * rep) +
				  A * kk * mlp_saved(m, c, w.expert_f, down) *
				  par +
				  A * mlp_saved(m, c, w.shared_f, down) * par);
	}
	/* LitGPT's LoRAQKVLinear.zero_pad (lit_gpt/lora.py, 2023) scatters
	 * the adapter output of the enabled q/k/v parts into a zero
	 * buffer as wide as the fused output with index_copy; PyTorch's
	 * backward formula for index_copy's source is
	 * grad.index_select(dim, index).expand_as(source)
	 * (tools/autograd/derivatives.yaml), so autograd keeps the source
	 * tensor itself: the enabled widths, per token.  With all three
	 * enabled zero_pad returns its input and nothing is scattered. */
	if (c->lora_zero_pad && lqkv > 0 && lqkv < 3)
		lora += ((tg & GP_LORA_Q ? w.q : 0.0) +
			 (tg & GP_LORA_K ? w.k : 0.0) +
			 (tg & GP_LORA_V ? w.v : 0.0)) * par * A;
	out->lora = tok * lora;
	/* Dropout masks, 1 byte per element, after the attention and MLP
	 * blocks (Korthikanti: sbh each). */
	out->masks = c->dropout ? 2.0 * m->hidden * tok * rep : 0.0;

	out->full = out->norms + out->attention + out->core + out->mlp +
		out->masks + out->lora;
	switch (c->recompute) {
	case GP_RECOMPUTE_SELECTIVE:
		/* Korthikanti sec. 5: recompute the core attention. */
		out->total = out->full - out->core;
		break;
	case GP_RECOMPUTE_FULL:
		/* Only the layer input survives (Table 2: 2sbh; split over
		 * t when SP keeps it sharded). */
		out->total = m->hidden * A * tok * rep;
		break;
	default:
		out->total = out->full;
	}
	return GP_OK;
}

int mem_lora_targets_parse(const char *s, unsigned *out, gp_error *err)
{
	static const char *const names[] = {
		"q", "k", "v", "o", "gate", "up", "down"
	};
	unsigned mask = 0;
	const char *p = s;

	if (!s || !out)
		return gp_fail(err, "lora targets: NULL");
	if (strcmp(s, "all") == 0) {
		*out = 127;
		return GP_OK;
	}
	while (*p) {
		size_t n = strcspn(p, ",");
		int i, found = 0;

		for (i = 0; i < 7; i++)
			if (strlen(names[i]) == n &&
			    strncmp(p, names[i], n) == 0) {
				mask |= 1u << i;
				found = 1;
			}
		if (!found)
			return gp_fail(err, "unknown LoRA target '%.*s' "
				       "(expected q,k,v,o,gate,up,down or "
				       "all)", (int)n, p);
		p += n;
		if (*p == ',')
			p++;
	}
	if (mask == 0)
		return gp_fail(err, "no LoRA targets given");
	*out = mask;
	return GP_OK;
}

double mem_lora_params(const gp_model *m, int rank, unsigned targets)
{
	widths w;
	double h, r = rank, attn = 0, mlp = 0, f;
	int nmoe;

	if (model_check(m, NULL) != GP_OK || rank < 0 || targets > 127)
		return -1.0;
	layer_widths(m, &w);
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
#undef MLP_LORA
	return m->layers * attn + mlp;
}

/* ---- reserve ------------------------------------------------------- */

void mem_reserve_default(gp_mem_reserve *r, int gpus)
{
	/* CUDA context with lazy module loading (CUDA >= 11.7): the driver
	 * state plus the kernels PyTorch/cuBLAS load, about 0.3-0.6 GiB on
	 * A100/H100 (nvidia-smi of an idle `torch.zeros(1, device="cuda")`
	 * process; NVIDIA CUDA C Programming Guide, "Lazy Loading").
	 * 0.5 GiB is the middle of that range. */
	r->context = 0.5 * 1073741824.0;
	/* cuBLAS keeps a workspace per handle and stream (PyTorch's default
	 * CUBLAS_WORKSPACE_CONFIG :4096:8 = 32 MiB on Hopper) and cuBLASLt
	 * another 32 MiB (PyTorch CUDA semantics notes): 64 MiB. */
	r->workspace = 64.0 * 1048576.0;
	/* NCCL: NCCL_BUFFSIZE 4 MiB per channel per peer, up to 32
	 * channels, for each communicator (DP, TP, PP groups) plus proxy
	 * state; 0.5 GiB covers a few communicators (NCCL environment
	 * variable docs, NCCL_BUFFSIZE / NCCL_MAX_NCHANNELS). */
	r->comm = gpus > 1 ? 0.5 * 1073741824.0 : 0.0;
	/* PyTorch's caching allocator rounds requests (512 B granules,
	 * 2 MiB / 20 MiB segments) and cannot merge split blocks across
	 * segments; reserved exceeds allocated by a few percent in steady
	 * training (PyTorch CUDA semantics, "Memory management"). */
	r->frag = 0.05;
	/* DESIGN.md: default safety margin 10% of capacity. */
	r->margin = 0.10;
}

static int check_reserve(const gp_mem_reserve *r, double capacity,
			 gp_error *err)
{
	if (check_pos(capacity, "capacity", err))
		return GP_EINVAL;
	if (!r)
		return gp_fail(err, "reserve: NULL");
	if (check_nonneg(r->context, "reserve.context", err) ||
	    check_nonneg(r->workspace, "reserve.workspace", err) ||
	    check_nonneg(r->comm, "reserve.comm", err) ||
	    check_nonneg(r->frag, "reserve.frag", err) ||
	    check_nonneg(r->margin, "margin", err))
		return GP_EINVAL;
	if (r->margin >= 1.0)
		return gp_fail(err, "margin must be below 1 (got %g)",
			       r->margin);
	return GP_OK;
}

/* Sum the tensors, add the reserve, decide. */
static void finish(gp_mem_result *o, double capacity,
		   const gp_mem_reserve *r)
{
	int i;

	o->allocated = 0;
	for (i = 0; i < GP_MEM_NTENSOR; i++)
		o->allocated += o->bytes[i];
	o->bytes[GP_MEM_CONTEXT] = r->context;
	o->bytes[GP_MEM_LIBWS] = r->workspace;
	o->bytes[GP_MEM_COMM] = r->comm;
	o->bytes[GP_MEM_FRAG] = r->frag * o->allocated;
	o->total = 0;
	o->largest = 0;
	for (i = 0; i < GP_MEM_NCOMP; i++) {
		/* Paged optimizer states live in CUDA managed memory that
		 * the driver evicts to the host under pressure (the point
		 * of bitsandbytes' paged optimizers): shown, but they never
		 * make a job fail to fit. */
		if (i == GP_MEM_PAGED)
			continue;
		o->total += o->bytes[i];
		if (o->bytes[i] > o->bytes[o->largest])
			o->largest = i;
	}
	o->capacity = capacity;
	o->margin = r->margin * capacity;
	o->budget = capacity - o->margin;
	o->usable = o->budget - r->context - r->workspace - r->comm;
	o->short_by = o->total - o->budget;
	o->fits = o->total <= o->budget;
}

/* ---- training ------------------------------------------------------ */

typedef struct layout {
	int dp, tp, pp, cp, ep, vpp;
	double shard, eshard;   /* ZeRO groups: dp*cp dense, /ep experts */
	/* Stage split (stage_split): uniform, or balanced with the first
	 * stage taking n0 layers, the next ones m each, the last the rest */
	int balanced, n0, m;
} layout;

/* Largest n in [0, L] with a + n w < B (strict) or <= B (le = 1); -1
 * when even n = 0 fails. */
static int fit_layers(double a, double w, double B, int L, int le)
{
	double n;

#define FITS(k) (le ? a + (k) * w <= B : a + (k) * w < B)
	if (!FITS(0.0))
		return -1;
	if (w <= 0 || FITS((double)L))
		return L;
	n = floor((B - a) / w);
	if (n > L)
		n = L;
	if (n < 0)
		n = 0;
	while (n > 0 && !FITS(n))
		n -= 1;
	while (n < L && FITS(n + 1))
		n += 1;
#undef FITS
	return (int)n;
}

/* DeepSpeed's _lprobe for the item list [e0, w x L, e1] in p parts:
 * each of the first p - 1 parts takes items while its sum stays below
 * B, the last takes the rest and must not exceed B.  With identical
 * layers the greedy is closed-form: the first part takes n0 layers,
 * each middle part m, the last t at most.  Fills n0 and m. */
static int lprobe(double e0, double w, double e1, int L, int p, double B,
		  int *n0, int *m)
{
	int t;

	*n0 = fit_layers(e0, w, B, L, 0);
	if (*n0 < 0)
		return 0;  /* DeepSpeed would leave stage 0 empty */
	*m = fit_layers(0, w, B, L, 0);
	if (*m < 0)
		*m = 0;
	t = fit_layers(e1, w, B, L, 1);
	if (t < 0)
		return 0;
	return (double)*n0 + (double)(p - 2) * *m + t >= L;
}

/* Parameters of the ViT tower alone (the projector excluded). */
static double tower_params(const gp_model *m, const gp_params *p)
{
	double t = p->vision - m->vision.projector_params;

	return t > 0 ? t : 0;
}

/* Layers per pipeline stage (sets y->balanced, n0, m).  Uniform: L/p
 * with the first L mod p stages one more -- DeepSpeed's
 * partition_uniform, and Megatron-LM's split when p divides L (it
 * refuses other p, or takes explicit first/last stage counts).
 * Balanced: DeepSpeed's partition_balanced (deepspeed/runtime/utils.py,
 * PipelineModule._partition_layers in runtime/pipe/module.py): a binary
 * search for the smallest bottleneck B, from sum/p up to sum, with
 * eps = 1e-3, each probe the greedy _lprobe above.  Item weights by
 * method: 'parameters' counts each spec's trainable parameters
 * (_count_layer_params) -- the embedding (first stage) and the output
 * layer or the tied embedding copy (a TiedLayerSpec built again on the
 * last stage) beside the layers; 'type:REGEX' weighs 1 each spec whose
 * class name matches: transformer layers, and with '|embedding' the
 * EmbeddingPipe specs (both ends when tied). */
static void stage_split(const gp_model *m, const gp_train_cfg *c,
			const gp_params *p, layout *y)
{
	gp_partition part = c->partition;
	double e0 = 0, w = 1, e1 = 0, lo, hi, mid, sum, eps;
	int L = m->layers, n0, mm;

	y->balanced = 0;
	if (part == GP_PART_AUTO)
		part = c->pipe == GP_PIPE_DEEPSPEED ? GP_PART_PARAMETERS :
			GP_PART_UNIFORM;
	if (y->pp == 1 || part == GP_PART_UNIFORM)
		return;
	if (part == GP_PART_PARAMETERS && c->lora_rank > 0) {
		/* Only the adapters train: layers weigh alike, the frozen
		 * ends weigh nothing. */
	} else if (part == GP_PART_PARAMETERS) {
		e0 = p->embedding + p->vision -
			(c->vision_frozen ? tower_params(m, p) : 0);
		w = (p->attention + p->dense_mlp + p->router + p->norms +
		     p->experts) / L;
		e1 = p->lm_head > 0 ? p->lm_head : p->embedding;
	} else if (part == GP_PART_TYPE_EMB) {
		e0 = 1;
		e1 = p->lm_head > 0 ? 0 : 1;  /* an untied head is no
					       * EmbeddingPipe */
	}
	sum = e0 + w * L + e1;
	lo = sum / y->pp;
	hi = sum;
	/* DeepSpeed's eps is 1e-3 parameters; past ~4.5e12 parameters that
	 * is below the spacing of doubles, lo + eps == lo and the search
	 * never ended (issue 13).  Four ulps of the bound at least keeps
	 * every step moving; below 1.1e12 parameters eps stays 1e-3. */
	eps = fmax(1e-3, 4.0 * DBL_EPSILON * sum);
	while (hi > lo + eps) {
		mid = lo + (hi - lo) / 2;
		if (lprobe(e0, w, e1, L, y->pp, mid, &n0, &mm))
			hi = mid;
		else
			lo = mid + eps;
	}
	if (!lprobe(e0, w, e1, L, y->pp, hi, &n0, &mm))
		return;  /* unreachable: B = sum always succeeds */
	y->balanced = 1;
	y->n0 = n0;
	y->m = mm;
}

/* Transformer layers on stage k. */
static int stage_layers(const gp_model *m, const layout *y, int k)
{
	int L = m->layers;
	double left;

	if (y->pp == 1)
		return L;
	if (!y->balanced)
		return L / y->pp + (k < L % y->pp);
	if (k == 0)
		return y->n0;
	left = (double)L - y->n0 - (double)(k - 1) * y->m;
	if (left < 0)
		left = 0;
	if (k < y->pp - 1 && left > y->m)
		left = y->m;
	return (int)left;
}

static int check_train(const gp_model *m, const gp_train_cfg *c, layout *y,
		       gp_error *err)
{
	if (!c)
		return gp_fail(err, "training config: NULL");
	if (model_check(m, err) != GP_OK)
		return GP_EINVAL;
	if ((int)c->recipe < 0 || c->recipe >= GP_RECIPE_COUNT)
		return gp_fail(err, "unknown recipe %d", (int)c->recipe);
	if ((int)c->optim < 0 || c->optim >= GP_OPT_COUNT)
		return gp_fail(err, "unknown optimizer %d", (int)c->optim);
	if ((int)c->schedule < 0 || c->schedule >= GP_SCHED_COUNT)
		return gp_fail(err, "unknown pipeline schedule %d",
			       (int)c->schedule);
	if ((int)c->pipe < 0 || c->pipe >= GP_PIPE_COUNT)
		return gp_fail(err, "unknown pipeline engine %d",
			       (int)c->pipe);
	if ((int)c->partition < 0 || c->partition >= GP_PART_COUNT)
		return gp_fail(err, "unknown pipeline partition %d",
			       (int)c->partition);
	if (check_int(c->dp, "dp", err) || check_int(c->tp, "tp", err) ||
	    check_int(c->pp, "pp", err) || check_int(c->cp, "cp", err) ||
	    check_int(c->ep, "ep", err) || check_int(c->vpp, "vpp", err) ||
	    check_int(c->lora_rank, "lora_rank", err) ||
	    check_nonneg(c->microbatches, "microbatches", err) ||
	    check_nonneg(c->act_bytes, "act_bytes", err) ||
	    check_nonneg(c->logit_bytes, "logit_bytes", err))
		return GP_EINVAL;
	if (c->zero < 0 || c->zero > 3)
		return gp_fail(err, "zero must be 0, 1, 2 or 3 (got %d)",
			       c->zero);
	y->dp = dflt(c->dp);
	y->tp = dflt(c->tp);
	y->pp = dflt(c->pp);
	y->cp = dflt(c->cp);
	y->ep = dflt(c->ep);
	y->vpp = dflt(c->vpp);
	if (m->heads % y->tp != 0)
		return gp_fail(err, "tp %d does not divide the %d attention "
			       "heads", y->tp, m->heads);
	if (m->kv_heads % y->tp != 0 && y->tp % m->kv_heads != 0)
		return gp_fail(err, "tp %d and the %d kv heads: one must "
			       "divide the other", y->tp, m->kv_heads);
	if (y->pp > m->layers)
		return gp_fail(err, "pp %d exceeds the %d layers", y->pp,
			       m->layers);
	if (y->ep > 1 && m->moe.experts <= 0)
		return gp_fail(err, "ep %d given for a dense model", y->ep);
	/* long long: two counts up to 2^24 multiply past INT_MAX. */
	if (((long long)y->dp * y->cp) % y->ep != 0)
		return gp_fail(err, "ep %d must divide dp*cp = %lld (experts "
			       "are sharded inside the data-parallel group)",
			       y->ep, (long long)y->dp * y->cp);
	if (c->lora_rank > 0 && c->lora_targets == 0)
		return gp_fail(err, "LoRA rank %d given without targets",
			       c->lora_rank);
	if (c->lora_rank > 0 && c->base.bits > 0 &&
	    mem_quant_bits(&c->base) < 0)
		return gp_fail(err, "bad base weight format (bits %g, group "
			       "%d, group_bits %g)", c->base.bits,
			       c->base.group, c->base.group_bits);
	if (check_nonneg(c->images, "images", err))
		return GP_EINVAL;
	if (c->images != floor(c->images))
		return gp_fail(err, "images must be a whole number per "
			       "sequence (got %g)", c->images);
	if (c->images > 0 && m->vision.layers <= 0)
		return gp_fail(err, "images %g given for a model without a "
			       "vision tower", c->images);
	if (c->images > 0 && c->seq > 0 &&
	    c->images * model_vision_tokens(m) > c->seq)
		return gp_fail(err, "%g images of %g tokens do not fit in a "
			       "sequence of %g tokens (seq counts the image "
			       "tokens)", c->images, model_vision_tokens(m),
			       c->seq);
	y->shard = (double)y->dp * y->cp;
	y->eshard = y->shard / y->ep;
	return GP_OK;
}

/* Largest single linear of a layer (elements), dequantised as a transient
 * by 4-bit matmuls. */
static double largest_linear(const gp_model *m)
{
	widths w;
	double f, big;

	layer_widths(m, &w);
	f = w.dense_f > w.expert_f ? w.dense_f : w.expert_f;
	big = (double)m->hidden * f;
	if ((double)m->hidden * w.q > big)
		big = (double)m->hidden * w.q;
	return big;
}

/* Stage buffers of a pipeline engine beyond the layers' saved tensors,
 * for one stage with `inflight` micro-batches between forward and
 * backward; hid = one stage output (s/cp * b * h elements, /t with
 * sequence parallel).
 *
 * Megatron-LM (the default, nothing added): its schedules keep each
 * in-flight micro-batch's received input -- the first layer's saved
 * input, counted with the activations -- and pseudo-free the output
 * once sent (megatron/core/pipeline_parallel/schedules.py,
 * deallocate_output_tensor: out.data becomes a scalar, only grad_fn
 * stays; megatron/training/arguments.py sets deallocate_pipeline_outputs
 * = True for every run).
 *
 * DeepSpeed's PipelineEngine (deepspeed/runtime/pipe/engine.py,
 * schedule.py TrainSchedule):
 *  - outputs: _exec_forward_pass stores the stage output in
 *    pipe_buffers['outputs'][id] and only _exec_backward_pass of a
 *    non-last stage sets it to None, so every micro-batch in flight
 *    keeps one.  With tensor parallelism and the default pipeline
 *    config (pipe_partitioned and grad_partitioned true, runtime/
 *    config.py get_pipeline_config) the engine zeroes the full
 *    output's .data and keeps this rank's 1/t slice (runtime/utils.py
 *    PartitionedTensor: narrow(...).clone()): hid/t each; without tp,
 *    the full output: hid each.
 *  - inputs: a non-first stage receives into pipe_recv_buf and clones
 *    it into pipe_buffers['inputs'][id], kept until _exec_send_grads.
 *    Partitioned (tp > 1), the forward all-gathers it into the full
 *    tensor the first layer reads and stores that tensor back in the
 *    buffer: the layers' saved input, nothing more.  Unpartitioned,
 *    the forward runs on a second .clone() of the buffer, so each
 *    micro-batch in flight holds one more full input: hid each.
 *  - one receive buffer (pipe_recv_buf, non-first stages) and one
 *    gradient buffer (grad_layer, non-last stages) persist, allocated
 *    once with the shapes of the (partitioned) messages: hid/t each.
 *  - the last stage's backward returns before clearing its output, so
 *    outputs[id] keeps the previous micro-batch's output while the
 *    next one runs (num_pipe_buffers = max(2, min(p - k + 1, m)) = 2
 *    there): one stale output, in Megatron-DeepSpeed's GPTModelPipe
 *    the fp32 logits (its last pipeline layer is float16_to_fp32):
 *    s/cp * b * V/t * 4 bytes.
 * The micro-batch count in flight is the schedule's (TrainSchedule
 * runs stage k's first backward after p - k forwards, Narayanan et al.
 * 2021's 1F1B). */
static double ds_pipe_buffers(const gp_model *m, const gp_train_cfg *c,
			      const layout *y, double tok, double A,
			      double inflight, int first, int last)
{
	double hid = tok * m->hidden * A / (c->sp ? y->tp : 1);
	double part = y->tp;  /* partitioned over tp; 1 = whole */
	double b = 0;

	if (!last)
		b += inflight * hid / part + hid / part;
	if (!first)
		b += hid / part + (y->tp == 1 ? inflight * hid : 0);
	if (last)
		b += tok * (double)m->vocab * 4.0 / y->tp;
	return b;
}

/* DeepSpeed's gradient all-reduce under BF16_Optimizer with pipeline
 * parallelism.  After the step's last backward, PipelineEngine's
 * ReduceGrads instruction (runtime/pipe/engine.py _exec_reduce_grads ->
 * _bf16_reduce_grads) hands the optimizer's flat fp32 gradient buffer
 * (bf16_optimizer.py get_grads_for_reduction: one flat tensor per param
 * group, the whole stage's grads) to buffered_allreduce_fallback with
 * elements_per_buffer = MEMORY_OPT_ALLREDUCE_SIZE (500M).  The 500M
 * bucket cannot split a tensor: allreduce_no_retain buckets whole
 * tensors, so the flat buffer goes alone, and allreduce_bucket
 * (runtime/engine.py) flattens it (one tensor: a view) and, the
 * communication dtype being bf16 whenever bf16 is enabled and none is
 * configured (engine.py communication_data_type), takes tensor.to(bf16):
 * a 2-byte copy of every gradient of the stage, live through the
 * all-reduce, then copied back into the fp32 buffer.
 *
 * It does not coexist with the activations: every micro-batch's
 * backward has run, so the layers' saved tensors, the recompute working
 * set and the loss buffers are gone.  What stays: the model states, the
 * bf16 .grad of the last backward (in the recipe's grads), the stage's
 * persistent pipe buffers (receive and gradient buffers, hid/t each)
 * and on the last stage both output buffers, the fp32 logits of the
 * step's last two micro-batches (num_pipe_buffers = 2 there, never
 * cleared).  When that moment is the larger, the breakdown reports it:
 * activations, recompute and logits 0, grad_reduce the copy. */
static void ds_reduce_phase(const gp_model *m, const gp_train_cfg *c,
			    const layout *y, double tok, double A,
			    double mine, int first, int last,
			    gp_mem_result *o)
{
	double hid = tok * m->hidden * A / (c->sp ? y->tp : 1);
	double keep = 0, red = mine * 2.0, bwd;

	if (!last)
		keep += hid / y->tp;
	if (!first)
		keep += hid / y->tp;
	if (last)
		keep += 2.0 * tok * (double)m->vocab * 4.0 / y->tp;
	bwd = o->bytes[GP_MEM_ACTIVATIONS] + o->bytes[GP_MEM_RECOMPUTE] +
		o->bytes[GP_MEM_LOGITS] + o->bytes[GP_MEM_VISION] +
		o->bytes[GP_MEM_PIPE_BUFFERS];
	if (keep + red <= bwd)
		return;
	o->bytes[GP_MEM_ACTIVATIONS] = 0;
	o->bytes[GP_MEM_RECOMPUTE] = 0;
	o->bytes[GP_MEM_LOGITS] = 0;
	o->bytes[GP_MEM_VISION] = 0;
	o->bytes[GP_MEM_PIPE_BUFFERS] = keep;
	o->bytes[GP_MEM_GRAD_REDUCE] = red;
}

/* The vision tower as a model mem_act_layer understands: a
 * bidirectional encoder of ViT layers (LayerNorm, MHA, GELU or SwiGLU
 * MLP) over the patches of one image. */
static void vision_model(const gp_model *m, gp_model *v)
{
	memset(v, 0, sizeof *v);
	v->layers = m->vision.layers;
	v->hidden = m->vision.hidden;
	v->heads = m->vision.heads;
	v->kv_heads = m->vision.heads;
	v->head_dim = m->vision.hidden / m->vision.heads;
	v->ffn_hidden = m->vision.ffn_hidden;
	v->ffn_gated = m->vision.ffn_gated;
	v->vocab = 1;
	v->norm_params = 2 * m->vision.hidden;
}

/* Vision-language training on the first stage (Wang et al. 2024,
 * Qwen2-VL sec. 2.1: an image of P = (image_size / patch_size)^2 patches
 * runs through the ViT, attention within the image, and the projector
 * merges merge^2 neighbouring patches into one LLM token).
 * A training tower keeps what any transformer layer keeps
 * (mem_act_layer over P tokens, images * b sequences, the recompute
 * policy applied) in every ViT layer.  A frozen tower fed pixels that
 * need no grad is not recorded by autograd at all: it keeps nothing.
 * A training projector keeps its inputs: for Qwen2-VL's merger
 * (LayerNorm, then Linear, GELU, Linear over merge^2 * hidden_v wide
 * tokens) the norm input, both linear inputs and the GELU input, each
 * P * hidden_v wide per image: 4 P hidden_v elements.  *full gets the
 * working set of one tower layer re-run under recompute. */
static int vision_act(const gp_model *m, const gp_train_cfg *c,
		      const layout *y, double A, double *saved,
		      double *full, gp_error *err)
{
	gp_model v;
	gp_act_cfg ac;
	gp_act_layer al;
	double merge = m->vision.merge > 0 ? m->vision.merge : 1;
	double P = model_vision_tokens(m) * merge * merge;
	double imgs = c->images * c->micro_batch;
	int tower = !c->vision_frozen && c->lora_rank == 0;

	*saved = *full = 0;
	if (c->images <= 0)
		return GP_OK;
	if (c->lora_rank == 0)
		*saved += 4.0 * P * m->vision.hidden * A * imgs;
	if (!tower)
		return GP_OK;
	vision_model(m, &v);
	memset(&ac, 0, sizeof ac);
	ac.seq = P;
	ac.micro_batch = imgs;
	/* Megatron shards the encoder like the decoder when its heads
	 * allow; otherwise the tower runs whole on every TP rank. */
	ac.tp = v.heads % y->tp == 0 ? y->tp : 1;
	ac.act_bytes = A;
	ac.flash = c->flash;
	ac.recompute = c->recompute;
	ac.eager_swiglu = c->eager_swiglu;
	if (mem_act_layer(&v, &ac, 0, &al, err))
		return GP_EINVAL;
	*saved += v.layers * al.total;
	if (c->recompute != GP_RECOMPUTE_NONE)
		*full = c->recompute == GP_RECOMPUTE_FULL ? al.full : al.core;
	return GP_OK;
}

/* What every pipeline stage of one layout shares, computed once per
 * layout (train_core): the saved activations of a dense and of an MoE
 * layer, what the first layer saves less when its input needs no grad,
 * and the vision tower's terms. */
typedef struct stage_acts {
	gp_act_layer al, alm;   /* dense, MoE layer (alm = al if none) */
	double A;               /* bytes per activation element */
	double act_layer;       /* average layer, dense-first MoE mixed */
	double first_less;      /* first layer of a frozen base */
	double vis, vis_full;   /* vision_act: saved, re-run working set */
	int nmoe, ndense;
} stage_acts;

static int stage_acts_of(const gp_model *m, const gp_train_cfg *c,
			 const layout *y, stage_acts *sa, gp_error *err)
{
	gp_act_cfg ac;

	memset(sa, 0, sizeof *sa);
	memset(&ac, 0, sizeof ac);
	ac.seq = c->seq;
	ac.micro_batch = c->micro_batch;
	ac.tp = y->tp;
	ac.sp = c->sp;
	ac.cp = y->cp;
	ac.ep = y->ep;
	sa->A = c->act_bytes > 0 ? c->act_bytes :
		(c->recipe == GP_RECIPE_FP32 ? 4.0 : 2.0);
	ac.act_bytes = sa->A;
	ac.flash = c->flash;
	ac.dropout = c->dropout;
	ac.recompute = c->recompute;
	ac.capacity_factor = c->capacity_factor;
	ac.eager_swiglu = c->eager_swiglu;
	ac.fused_qkv_view = c->fused_qkv_view;
	ac.lora_zero_pad = c->lora_zero_pad;
	if (c->lora_rank > 0) {
		/* Frozen base: only adapters train.  A quantised base
		 * (bits < 16) runs through bitsandbytes-style matmuls that
		 * keep their input (see mem_act_layer). */
		ac.frozen = 1;
		ac.base_saves_input = c->base.bits > 0 &&
			mem_quant_bits(&c->base) < 16;
		ac.lora_rank = c->lora_rank;
		ac.lora_targets = c->lora_targets;
		ac.lora_dropout = c->lora_dropout;
	}
	sa->nmoe = model_moe_layers(m);
	sa->ndense = m->layers - sa->nmoe;
	if (mem_act_layer(m, &ac, 0, &sa->al, err))
		return GP_EINVAL;
	sa->alm = sa->al;
	if (sa->nmoe > 0 && mem_act_layer(m, &ac, 1, &sa->alm, err))
		return GP_EINVAL;
	sa->act_layer = (sa->ndense * sa->al.total +
			 sa->nmoe * sa->alm.total) / m->layers;
	/* With a frozen embedding the first layer's input needs no grad:
	 * autograd keeps nothing for it until the first adapter, so its
	 * first norm input is not saved (one h per token, once). */
	if (ac.frozen && c->recompute != GP_RECOMPUTE_FULL) {
		gp_act_layer a0;

		ac.input_nograd = 1;
		if (mem_act_layer(m, &ac, sa->ndense > 0 ? 0 : 1, &a0, err))
			return GP_EINVAL;
		sa->first_less = (sa->ndense > 0 ? sa->al.total :
				  sa->alm.total) - a0.total;
	}
	if (c->images > 0 &&
	    vision_act(m, c, y, sa->A, &sa->vis, &sa->vis_full, err))
		return GP_EINVAL;
	return GP_OK;
}

static int train_stage(const gp_model *m, const gp_train_cfg *c,
		       const layout *y, const gp_params *p,
		       const stage_acts *sa, int stage, int nl,
		       gp_mem_result *o, gp_error *err)
{
	gp_state_bytes sb;
	const gp_act_layer *al = &sa->al, *alm = &sa->alm;
	double frac, lin, nonlin, expert, dense, mine, emb, wb, inflight;
	double frozen_bits = 0, per_layer_w, tok, A = sa->A;
	int first = stage == 0, last = stage == y->pp - 1;
	int nmoe = sa->nmoe, ndense = sa->ndense;
	int zero = c->zero;
	/* Output layer quantised with the base: LoRA on a sub-16-bit base
	 * whose quantiser takes every linear (gp_train_cfg.quant_head); a
	 * bitsandbytes 4-bit head then keeps its input like the others. */
	int qhead = last && c->quant_head && c->lora_rank > 0 &&
		c->base.bits > 0 && mem_quant_bits(&c->base) < 16;

	if (mem_state_bytes(c->recipe, c->optim, &sb, err))
		return GP_EINVAL;
	memset(o, 0, sizeof *o);
	o->stage = stage;
	o->stage_layers = nl;
	frac = (double)nl / m->layers;
	/* Per-layer parameters split into routed experts (sharded over
	 * EP and TP) and the rest (TP only); norms are counted with the
	 * rest (replicated in truth; < 0.01%). */
	expert = p->experts * frac / ((double)y->tp * y->ep);
	dense = (p->attention + p->dense_mlp + p->router + p->norms) * frac /
		y->tp;
	/* First stage: vocabulary-parallel input embedding (Shoeybi et al.
	 * 2019 sec. 3) and the vision tower; last stage: the output layer,
	 * or with pp > 1 and tied embeddings Megatron's copy of the
	 * embedding that it keeps in sync by an all-reduce. */
	emb = 0;
	if (first)
		emb += (p->embedding + p->vision) / y->tp;
	if (last) {
		if (p->lm_head > 0)
			emb += p->lm_head / y->tp;
		else if (y->pp > 1)
			emb += p->embedding / y->tp;
	}
	dense += emb;
	mine = dense + expert;
	o->params = mine;

	wb = sb.weights;
	if (c->lora_rank > 0) {
		/* LoRA / QLoRA: the base is frozen, no grads or states;
		 * the linears may be stored quantised, the embeddings,
		 * norms and output layer stay 16-bit (bitsandbytes and
		 * GPTQ/AWQ quantise nn.Linear blocks only). */
		double ad = mem_lora_params(m, c->lora_rank, c->lora_targets);
		double ad_mine = ad * frac / y->tp;
		frozen_bits = c->base.bits > 0 ? mem_quant_bits(&c->base) :
			8.0 * wb;
		lin = (p->attention + p->dense_mlp + p->experts) * frac /
			y->tp;
		lin -= p->experts * frac / y->tp * (1.0 - 1.0 / y->ep);
		if (qhead)
			/* The output layer is one more nn.Linear for a
			 * quantiser that replaces them all (Lightning's
			 * BitsandbytesPrecision without ignore_modules). */
			lin += p->lm_head / y->tp;
		nonlin = mine - lin;
		o->bytes[GP_MEM_WEIGHTS] = lin * frozen_bits / 8.0 +
			nonlin * (frozen_bits >= 16 ? frozen_bits / 8.0 : 2.0);
		if (zero == 3)
			o->bytes[GP_MEM_WEIGHTS] /= y->shard;
		/* Adapter: its weights, grads, master and states by the
		 * recipe, sharded like a small model. */
		o->bytes[GP_MEM_ADAPTER] = ad_mine * (sb.weights + sb.grads +
			sb.master + sb.optimizer) / (zero > 0 ? y->shard : 1);
		o->trainable = ad;
		if (c->base.bits > 0 && frozen_bits < 16)
			/* A 4-bit matmul dequantises the weight to 16 bits
			 * first (bitsandbytes dequantize_4bit): one matrix
			 * live at a time. */
			o->bytes[GP_MEM_WORKSPACE] = 2.0 *
				(qhead && p->lm_head > largest_linear(m) ?
				 p->lm_head : largest_linear(m)) / y->tp;
	} else {
		double wsh = zero == 3 ? 1.0 : 0.0, gsh = zero >= 2,
			osh = zero >= 1 || sb.master_shard0;
		/* A frozen ViT tower (gp_train_cfg.vision_frozen) holds
		 * its weights only: no grads, master or states. */
		double vf = first && c->vision_frozen ?
			tower_params(m, p) / y->tp : 0;
		/* Dense states shard over dp*cp, expert states over the
		 * expert-data-parallel group dp*cp/ep (Megatron-Core MoE:
		 * expert params are replicated only across EDP). */
#define SH(flag, d, e) ((flag) ? (d) / y->shard + (e) / y->eshard : (d) + (e))
		o->bytes[GP_MEM_WEIGHTS] = SH(wsh, dense, expert) * wb;
		o->bytes[GP_MEM_GRADS] = SH(gsh, dense - vf, expert) *
			sb.grads;
		o->bytes[GP_MEM_MASTER] = SH(osh, dense - vf, expert) *
			sb.master;
		o->bytes[GP_MEM_OPTIMIZER] = SH(osh, dense - vf, expert) *
			sb.optimizer;
#undef SH
		o->trainable = p->total -
			(c->vision_frozen ? tower_params(m, p) : 0);
		if (c->grads_in_bwd) {
			/* Optimizer step in the backward pass (torchtune
			 * optimizer_in_bwd: a post-accumulate-grad hook steps
			 * and frees each parameter's grad as soon as it is
			 * complete): one parameter's grad at a time, the
			 * largest -- the embedding or output matrix, or the
			 * largest linear of a layer. */
			double big = largest_linear(m);

			if (first && p->embedding > big)
				big = p->embedding;
			if (last && p->lm_head > big)
				big = p->lm_head;
			o->bytes[GP_MEM_GRADS] = big / y->tp * sb.grads;
		}
		if (c->paged_optimizer) {
			/* bitsandbytes paged optimizers allocate their states
			 * with cudaMallocManaged (bitsandbytes functional.py
			 * get_paged / cget_managed_ptr): resident on the card
			 * until evicted, but outside PyTorch's caching
			 * allocator, so torch.cuda.max_memory_allocated and
			 * memory_stats never count them. */
			o->bytes[GP_MEM_PAGED] = o->bytes[GP_MEM_OPTIMIZER];
			o->bytes[GP_MEM_OPTIMIZER] = 0;
		}
		if (c->offload_optimizer || c->offload_params) {
			/* ZeRO-Offload (Ren et al. 2021): master weights and
			 * optimizer states live and update on the CPU. */
			o->cpu_bytes += o->bytes[GP_MEM_MASTER] +
				o->bytes[GP_MEM_OPTIMIZER];
			o->bytes[GP_MEM_MASTER] = 0;
			o->bytes[GP_MEM_OPTIMIZER] = 0;
		}
		if (c->offload_params) {
			/* ZeRO-Infinity (Rajbhandari et al. 2021): params
			 * and grads too; the GPU keeps gather buffers. */
			o->cpu_bytes += o->bytes[GP_MEM_WEIGHTS] +
				o->bytes[GP_MEM_GRADS];
			o->bytes[GP_MEM_WEIGHTS] = 0;
			o->bytes[GP_MEM_GRADS] = 0;
		}
	}
	/* ZeRO-3 / FSDP gather: the layer being computed and the one being
	 * prefetched, in full (DeepSpeed stage3_prefetch_bucket_size; FSDP
	 * limit_all_gathers keeps two in flight); ZeRO-2 and up also fill
	 * a 16-bit bucket of one layer's grads before reduce-scatter. */
	per_layer_w = (p->per_layer_max / y->tp);
	if (zero == 3 || c->offload_params)
		o->bytes[GP_MEM_PARAM_GATHER] += 2.0 * per_layer_w *
			(c->lora_rank > 0 ? frozen_bits / 8.0 : wb);
	if (zero >= 2 && c->lora_rank == 0)
		o->bytes[GP_MEM_PARAM_GATHER] += per_layer_w * 2.0;

	/* Micro-batches in flight on this stage.  1F1B (Narayanan et al.
	 * 2021 sec. 2.2.1): stage k holds min(m, p - k); interleaved with
	 * v chunks: the first stage holds p (1 + (p-1)/(p v)) micro-batches
	 * worth of its layers (Korthikanti et al. 2022 sec. 4.2.3). */
	if (y->pp == 1) {
		inflight = 1;
	} else if (c->schedule == GP_SCHED_INTERLEAVED && y->vpp > 1) {
		inflight = first ? y->pp * (1.0 + (y->pp - 1.0) /
					     ((double)y->pp * y->vpp)) :
			y->pp - stage;
	} else {
		inflight = y->pp - stage;
	}
	if (c->microbatches > 0 && inflight > c->microbatches)
		inflight = c->microbatches;
	o->inflight = inflight;
	o->act_layer = sa->act_layer;
	o->bytes[GP_MEM_ACTIVATIONS] = (sa->act_layer * nl -
		(first && nl > 0 ? sa->first_less : 0)) * inflight;
	tok = c->seq / y->cp * c->micro_batch;
	if (first && c->dropout)
		/* Embedding dropout mask (Korthikanti sec. 4.3: sbhp). */
		o->bytes[GP_MEM_ACTIVATIONS] += tok * m->hidden * inflight /
			(c->sp ? y->tp : 1);
	/* One layer re-run during backward: full recompute rebuilds a
	 * whole layer, selective its core attention. */
	if (nl == 0)
		;  /* no layer on this stage to re-run */
	else if (c->recompute == GP_RECOMPUTE_FULL)
		o->bytes[GP_MEM_RECOMPUTE] = (ndense ? al->full : 0) >
			(nmoe ? alm->full : 0) ? al->full : alm->full;
	else if (c->recompute == GP_RECOMPUTE_SELECTIVE)
		o->bytes[GP_MEM_RECOMPUTE] = al->core;
	if (first) {
		o->bytes[GP_MEM_VISION] = sa->vis * inflight;
		if (sa->vis_full > o->bytes[GP_MEM_RECOMPUTE])
			o->bytes[GP_MEM_RECOMPUTE] = sa->vis_full;
	}
	if (last) {
		/* Output layer (Korthikanti sec. 4.3): the final norm input
		 * and the projection input, h each, and the logits kept
		 * for the loss, vocab-parallel over t.  A frozen 16-bit
		 * output layer (LoRA, and QLoRA unless quant_head) keeps
		 * no input; a 4-bit one keeps it (MatMul4Bit). */
		double lb = c->logit_bytes > 0 ? c->logit_bytes : 4.0;
		double nin = c->lora_rank > 0 && !qhead ? 1.0 : 2.0;
		o->bytes[GP_MEM_LOGITS] = tok * (nin * m->hidden * A /
			(c->sp ? y->tp : 1) + (double)m->vocab * lb / y->tp);
	}
	if (y->pp > 1 && c->pipe == GP_PIPE_DEEPSPEED) {
		o->bytes[GP_MEM_PIPE_BUFFERS] = ds_pipe_buffers(m, c, y, tok,
			A, inflight, first, last);
		if (c->recipe == GP_RECIPE_DSBF16 && zero < 2 &&
		    c->lora_rank == 0 && !c->offload_optimizer &&
		    !c->offload_params)
			ds_reduce_phase(m, c, y, tok, A, mine, first, last, o);
	}
	return GP_OK;
}

static double tensor_sum(const gp_mem_result *r)
{
	double s = 0;
	int i;

	for (i = 0; i < GP_MEM_NTENSOR; i++)
		s += r->bytes[i];
	return s;
}

static int train_core(const gp_model *m, const gp_train_cfg *c,
		      gp_mem_result *out, layout *y, gp_error *err)
{
	gp_params p;
	gp_mem_result r0;
	stage_acts sa;

	if (check_train(m, c, y, err))
		return GP_EINVAL;
	if (check_pos(c->seq, "seq", err) ||
	    check_pos(c->micro_batch, "micro_batch", err))
		return GP_EINVAL;
	if (model_params(m, &p, err))
		return GP_EINVAL;
	stage_split(m, c, &p, y);
	if (stage_acts_of(m, c, y, &sa, err) ||
	    train_stage(m, c, y, &p, &sa, 0, stage_layers(m, y, 0), out,
			err))
		return GP_EINVAL;
	/* Evaluate the stages, keep the most loaded (the earliest of
	 * equals).  Middle stages with the same layer count differ only
	 * in micro-batches in flight, which fall with k (p - k), so the
	 * first stage of each run of equal counts stands for its run. */
	if (y->pp > 1) {
		double best = tensor_sum(out), v;
		int k, nl, prev = -1;

		for (k = 1; k < y->pp; k++) {
			nl = stage_layers(m, y, k);
			if (k < y->pp - 1 && nl == prev)
				continue;
			prev = nl;
			if (train_stage(m, c, y, &p, &sa, k, nl, &r0, err))
				return GP_EINVAL;
			v = tensor_sum(&r0);
			if (v > best) {
				best = v;
				*out = r0;
			}
		}
	}
	return GP_OK;
}

int mem_stage_layers(const gp_model *m, const gp_train_cfg *c, int stage,
		     int *out, gp_error *err)
{
	layout y;
	gp_params p;

	if (!out)
		return gp_fail(err, "mem_stage_layers: NULL output");
	if (check_train(m, c, &y, err) || model_params(m, &p, err))
		return GP_EINVAL;
	if (stage < 0 || stage >= y.pp)
		return gp_fail(err, "stage %d is outside 0..%d", stage,
			       y.pp - 1);
	stage_split(m, c, &p, &y);
	*out = stage_layers(m, &y, stage);
	return GP_OK;
}

int mem_train(const gp_model *m, const gp_train_cfg *c, double capacity,
	      const gp_mem_reserve *r, gp_mem_result *out, gp_error *err)
{
	layout y;

	if (!out)
		return gp_fail(err, "mem_train: NULL output");
	if (check_reserve(r, capacity, err))
		return GP_EINVAL;
	if (train_core(m, c, out, &y, err))
		return GP_EINVAL;
	finish(out, capacity, r);
	return GP_OK;
}

/* ---- inference ----------------------------------------------------- */

/* Share of the model's KV held by one TP rank: kv_heads / tp heads, at
 * least one head (vLLM replicates a KV head when tp > kv_heads); an MLA
 * latent is not split by head, every rank keeps it whole. */
static double kv_share(const gp_model *m, int tp)
{
	double per;

	if (m->mla.kv_lora_rank > 0)
		return 1.0;
	per = ceil((double)m->kv_heads / tp);
	return per / m->kv_heads;
}

typedef struct infer_parts {
	double weights;      /* bytes on this GPU, all its layers */
	double layer_w;      /* bytes of one layer on this GPU */
	double workspace;
	int L_s;
} infer_parts;

static int infer_check(const gp_model *m, const gp_infer_cfg *c,
		       gp_error *err)
{
	if (!c)
		return gp_fail(err, "inference config: NULL");
	if (model_check(m, err) != GP_OK)
		return GP_EINVAL;
	if (check_int(c->tp, "tp", err) || check_int(c->pp, "pp", err) ||
	    check_int(c->block, "block", err) ||
	    check_nonneg(c->seqs, "seqs", err) ||
	    check_tokens(c->ctx, "ctx", err) ||
	    check_elem(c->kv_bytes, "kv_bytes", err) ||
	    check_nonneg(c->chunk_tokens, "chunk_tokens", err) ||
	    check_nonneg(c->act_bytes, "act_bytes", err))
		return GP_EINVAL;
	if (c->weights.bits != 0 && mem_quant_bits(&c->weights) < 0)
		return gp_fail(err, "bad weight format (bits %g, group %d, "
			       "group_bits %g)", c->weights.bits,
			       c->weights.group, c->weights.group_bits);
	if (m->heads % dflt(c->tp) != 0)
		return gp_fail(err, "tp %d does not divide the %d attention "
			       "heads", dflt(c->tp), m->heads);
	if (dflt(c->pp) > m->layers)
		return gp_fail(err, "pp %d exceeds the %d layers", c->pp,
			       m->layers);
	return GP_OK;
}

/* KV bytes of one sequence of ctx tokens on one GPU (paged: rounded up to
 * whole blocks, as vLLM allocates; Kwon et al. 2023 sec. 4.2). */
static double kv_seq(const gp_model *m, const gp_infer_cfg *c, double ctx,
		     double L_s)
{
	double kb = c->kv_bytes > 0 ? c->kv_bytes : 2.0;
	double eff = ctx;

	if (c->block > 0)
		eff = ceil(ctx / c->block) * c->block;
	return model_kv_bytes(m, eff, kb) * kv_share(m, dflt(c->tp)) *
		L_s / m->layers;
}

static int infer_parts_of(const gp_model *m, const gp_infer_cfg *c,
			  infer_parts *ip, gp_error *err)
{
	gp_params p;
	widths w;
	double bits, lin, rest, frac, A, T, f;
	int tp = dflt(c->tp), pp = dflt(c->pp);

	if (model_params(m, &p, err))
		return GP_EINVAL;
	layer_widths(m, &w);
	ip->L_s = (m->layers + pp - 1) / pp;
	frac = (double)ip->L_s / m->layers;
	bits = c->weights.bits > 0 ? mem_quant_bits(&c->weights) : 16.0;
	/* Linears at the chosen format; embeddings, norms, router and the
	 * output layer at 16 bits (GPTQ/AWQ/bitsandbytes keep them so). */
	lin = (p.attention + p.dense_mlp + p.experts) * frac / tp;
	rest = (p.norms + p.router) * frac / tp;
	ip->layer_w = (lin * bits / 8.0 + rest * 2.0) / ip->L_s;
	/* Most loaded stage: with pp == 1 both ends; else the larger. */
	{
		double e_first = (p.embedding + p.vision) / tp;
		double e_last = p.lm_head > 0 ? p.lm_head / tp :
			(pp > 1 ? p.embedding / tp : 0);
		double ends = pp == 1 ? e_first + e_last :
			(e_first > e_last ? e_first : e_last);
		ip->weights = ip->layer_w * ip->L_s + ends * 2.0;
	}
	/* Activation workspace of one forward over T tokens: within a
	 * layer the residual, norm output, q/k/v, attention output and the
	 * MLP intermediates are live at once (nothing is kept for
	 * backward); plus fp32 logits of the sampled rows. */
	A = c->act_bytes > 0 ? c->act_bytes : 2.0;
	T = c->chunk_tokens > 0 ? c->chunk_tokens : c->seqs * c->ctx;
	if (c->chunk_tokens <= 0 && T > 8192)
		/* vLLM's default max_num_batched_tokens for chunked
		 * prefill (8192 since v0.6). */
		T = 8192;
	f = w.dense_f > w.expert_f * m->moe.top_k ? w.dense_f :
		w.expert_f * m->moe.top_k;
	ip->workspace = T * A * (2.0 * m->hidden +
		(w.q + w.k + w.v + w.o + (m->ffn_gated ? 3.0 : 2.0) * f) /
		tp) + c->seqs * (double)m->vocab * 4.0 / tp;
	return GP_OK;
}

int mem_infer(const gp_model *m, const gp_infer_cfg *c, double capacity,
	      const gp_mem_reserve *r, gp_mem_result *out, gp_error *err)
{
	infer_parts ip;
	double free_b, per, lo, hi;
	int i;

	if (!out)
		return gp_fail(err, "mem_infer: NULL output");
	if (check_reserve(r, capacity, err) || infer_check(m, c, err))
		return GP_EINVAL;
	if (infer_parts_of(m, c, &ip, err))
		return GP_EINVAL;
	memset(out, 0, sizeof *out);
	out->bytes[GP_MEM_WEIGHTS] = ip.weights;
	out->bytes[GP_MEM_WORKSPACE] = ip.workspace;
	out->kv_per_seq = kv_seq(m, c, c->ctx, ip.L_s);
	out->bytes[GP_MEM_KV] = c->seqs * out->kv_per_seq;
	finish(out, capacity, r);

	/* What fits: room for KV once weights and workspace are placed,
	 * fragmentation included (usable = budget - fixed reserve). */
	free_b = out->usable / (1.0 + r->frag) - ip.weights - ip.workspace;
	out->max_seqs = out->kv_per_seq > 0 && free_b > 0 ?
		floor(free_b / out->kv_per_seq) : 0;
	out->max_ctx = 0;
	if (c->seqs > 0 && free_b > 0) {
		/* KV grows monotonically with ctx (sliding-window layers
		 * flatten it): bisect on whole tokens. */
		lo = 0;
		hi = 1;
		while (hi < GP_COUNT_MAX &&
		       c->seqs * kv_seq(m, c, hi, ip.L_s) <= free_b)
			hi *= 2;
		for (i = 0; i < 64 && hi - lo > 1; i++) {
			double mid = floor((lo + hi) / 2);
			if (c->seqs * kv_seq(m, c, mid, ip.L_s) <= free_b)
				lo = mid;
			else
				hi = mid;
		}
		out->max_ctx = lo;
	}
	/* CPU offload (llama.cpp -ngl): move whole layers, their weights
	 * and their share of the KV cache, until the rest fits. */
	if (c->offload && !out->fits) {
		per = ip.layer_w + out->bytes[GP_MEM_KV] / ip.L_s;
		for (i = 0; i < ip.L_s && out->short_by > 0; i++) {
			out->bytes[GP_MEM_WEIGHTS] -= ip.layer_w;
			out->bytes[GP_MEM_KV] -= out->bytes[GP_MEM_KV] /
				(ip.L_s - i);
			out->cpu_bytes += per;
			out->cpu_layers++;
			finish(out, capacity, r);
		}
	}
	out->params = ip.weights;
	return GP_OK;
}

/* ---- RL fine-tuning ------------------------------------------------ */

int mem_rl(const gp_model *m, const gp_rl_cfg *c, double capacity,
	   const gp_mem_reserve *r, gp_mem_result *out, gp_error *err)
{
	layout y;
	gp_infer_cfg ic;
	gp_mem_result ro;
	infer_parts ip;
	double frozen, states, train_tr, roll_tr, seqs, inst, pool;
	int gpus, rtp, i;

	if (!out || !c)
		return gp_fail(err, "mem_rl: NULL argument");
	if (check_reserve(r, capacity, err))
		return GP_EINVAL;
	if (check_nonneg(c->prompts, "prompts", err) ||
	    check_pos(c->group, "group", err) ||
	    check_tokens(c->prompt_len, "prompt_len", err) ||
	    check_pos(c->response_len, "response_len", err) ||
	    check_tokens(c->prompt_len + c->response_len,
			 "prompt_len + response_len", err) ||
	    check_elem(c->kv_bytes, "kv_bytes", err) ||
	    check_int(c->rollout_tp, "rollout_tp", err) ||
	    check_int(c->gpus, "gpus", err))
		return GP_EINVAL;
	if (train_core(m, &c->actor, out, &y, err))
		return GP_EINVAL;
	/* Frozen reference / reward: weights only, laid out like the
	 * actor's (16-bit, TP/PP split, ZeRO-3 sharded when the actor is). */
	frozen = out->params * 2.0 / (c->actor.zero == 3 ? y.shard : 1.0);
	if (c->ref_model)
		out->bytes[GP_MEM_REF] = frozen;
	if (c->reward_model)
		out->bytes[GP_MEM_REWARD] = frozen;
	/* PPO critic: a second trainable model of the actor's shape; its
	 * update runs after the actor's, so only its states are resident
	 * with the actor's activations (Ouyang et al. 2022; OpenRLHF). */
	if (c->ppo) {
		states = out->bytes[GP_MEM_WEIGHTS] + out->bytes[GP_MEM_GRADS] +
			out->bytes[GP_MEM_MASTER] +
			out->bytes[GP_MEM_OPTIMIZER] +
			out->bytes[GP_MEM_ADAPTER];
		out->bytes[GP_MEM_CRITIC] = states;
	}

	/* Rollout engine: prompts x group sequences of prompt + response
	 * tokens spread over the engine instances of the pool. */
	rtp = c->rollout_tp > 0 ? c->rollout_tp : y.tp;
	/* The pool defaults to the actor's GPUs; their product of four
	 * degrees is formed in double and bounded like any count. */
	pool = c->gpus > 0 ? c->gpus :
		(double)y.dp * y.tp * y.pp * y.cp;
	if (pool > GP_COUNT_MAX)
		return gp_fail(err, "gpus (dp*tp*pp*cp = %g) must be at most "
			       "%d", pool, GP_COUNT_MAX);
	gpus = (int)pool;
	if (gpus % rtp != 0)
		return gp_fail(err, "rollout tp %d does not divide the %d GPUs",
			       rtp, gpus);
	inst = gpus / rtp;
	seqs = c->prompts * c->group / inst;
	memset(&ic, 0, sizeof ic);
	ic.weights = c->rollout_weights;
	ic.kv_bytes = c->kv_bytes;
	ic.tp = rtp;
	ic.seqs = ceil(seqs);
	ic.ctx = c->prompt_len + c->response_len;
	if (infer_check(m, &ic, err) || infer_parts_of(m, &ic, &ip, err))
		return GP_EINVAL;
	memset(&ro, 0, sizeof ro);
	ro.bytes[GP_MEM_ROLLOUT_WEIGHTS] = ip.weights;
	out->kv_per_seq = kv_seq(m, &ic, ic.ctx, ip.L_s);
	ro.bytes[GP_MEM_KV] = ic.seqs * out->kv_per_seq;
	ro.bytes[GP_MEM_WORKSPACE] = ip.workspace;

	if (c->colocated) {
		/* One pool (verl hybrid engine): the training states and
		 * the engine's weights stay resident; the training
		 * transients and the rollout KV alternate, so the peak is
		 * the larger phase. */
		train_tr = out->bytes[GP_MEM_ACTIVATIONS] +
			out->bytes[GP_MEM_RECOMPUTE] +
			out->bytes[GP_MEM_LOGITS] +
			out->bytes[GP_MEM_VISION] +
			out->bytes[GP_MEM_PARAM_GATHER] +
			out->bytes[GP_MEM_WORKSPACE];
		roll_tr = ro.bytes[GP_MEM_KV] + ro.bytes[GP_MEM_WORKSPACE];
		out->bytes[GP_MEM_ROLLOUT_WEIGHTS] = ip.weights;
		if (roll_tr > train_tr) {
			out->bytes[GP_MEM_ACTIVATIONS] = 0;
			out->bytes[GP_MEM_RECOMPUTE] = 0;
			out->bytes[GP_MEM_LOGITS] = 0;
			out->bytes[GP_MEM_VISION] = 0;
			out->bytes[GP_MEM_PARAM_GATHER] = 0;
			out->bytes[GP_MEM_KV] = ro.bytes[GP_MEM_KV];
			out->bytes[GP_MEM_WORKSPACE] =
				ro.bytes[GP_MEM_WORKSPACE];
		}
		finish(out, capacity, r);
	} else {
		/* Separate pools of the same GPU type: report the more
		 * loaded one. */
		double a = 0, b = 0;

		finish(out, capacity, r);
		finish(&ro, capacity, r);
		for (i = 0; i < GP_MEM_NTENSOR; i++) {
			a += out->bytes[i];
			b += ro.bytes[i];
		}
		if (b > a) {
			ro.kv_per_seq = out->kv_per_seq;
			ro.trainable = out->trainable;
			*out = ro;
		}
	}
	return GP_OK;
}
