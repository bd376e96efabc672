/*
 * train.c - one training step on a placed layout (see train.h).
 *
 * Per micro-batch and pipeline stage, every operator of the stage's layers
 * (model_layer_ops) is priced on the roofline three ways:
 *   forward    the op itself;
 *   backward   a GEMM twice, once for the input gradient (dgrad: the
 *              transposed shape, same FLOP) and once for the weight
 *              gradient (wgrad: output n x k, depth the tokens) unless
 *              the weight is frozen; fused attention 2.5x its forward
 *              FLOP (5 matmuls to 2: Dao 2023, FlashAttention-2, sec.
 *              3.1.2), unfused 2x; elementwise ops read the saved input
 *              and the incoming gradient and write one gradient: 1.5x the
 *              forward traffic;
 *   recompute  the forward again: the whole layer (full) or the attention
 *              core (selective; Korthikanti et al. 2022 sec. 5).
 * The collectives of a micro-batch run on their placed groups
 * (layout_place): tensor parallelism two all-reduces per layer per pass
 * (Shoeybi et al. 2019, Megatron-LM, sec. 3), or with sequence
 * parallelism an all-gather and a reduce-scatter in their place
 * (Korthikanti et al. 2022 sec. 4.2.2); context parallelism a ring
 * exchange of K and V, cp - 1 steps each under the attention of one
 * chunk (Liu et al. 2023, Ring Attention; Megatron-Core's p2p CP);
 * expert parallelism a dispatch and a combine all-to-all per MoE layer
 * per pass (Lepikhin et al. 2020, GShard); pipeline parallelism one
 * activation send forward and one gradient send backward per chunk.
 *
 * Schedule (Narayanan et al. 2021, sec. 2.2): with m micro-batches, p
 * stages of per-micro-batch times t_k and v chunks per stage, the step
 * takes m max(t_k) + (sum t_k - max t_k) / v; for equal stages the bubble
 * is (p - 1) / (v m) of the ideal, as the paper gives for 1F1B (v = 1)
 * and the interleaved schedule.  After the last backward: the
 * data-parallel gradient reduction (all-reduce; reduce-scatter under a
 * distributed optimizer, Rajbhandari et al. 2020), overlapped with that
 * backward when asked; the parameter all-gather of ZeRO-1/2; the
 * optimizer step, memory-bound over the local states.  ZeRO-3 / FSDP
 * gather each layer's parameters per micro-batch and reduce-scatter its
 * gradients, prefetched under the layer before when overlap is on
 * (Zhao et al. 2023, PyTorch FSDP, sec. 3.3).
 */
#include "train.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

/* train_phase.h's types under train.c's short names. */
typedef train_env tenv;
typedef train_ctx ctx;
typedef train_scost scost;
typedef train_stage_rec stage_rec;
typedef struct train_phase phase;

static const char *const part_names[TRAIN_NPARTS] = {
	"compute", "recompute", "tp_comm", "cp_comm", "ep_comm", "pp_comm",
	"dp_comm", "zero_gather", "bubble", "optimizer"
};

const char *train_part_name(int part)
{
	return GP_NAME_OF(part_names, TRAIN_NPARTS, part);
}

/* Megatron-Core's DDP bucket: 40M parameters (ddp_config bucket_size
 * default max(40000000, 1000000 * dp)); the last bucket's reduction is
 * what no backward is left to hide. */
#define DDP_BUCKET 4e7

/* Weight-gradient GEMMs accumulate into fp32 main grads (Megatron's
 * gradient-accumulation fusion; torch autocast keeps fp32 .grad):
 * read and write 4 bytes per weight element. */
#define WGRAD_ACC_BYTES 8.0

/* Offload's links when the topology gives none: a PCIe 4.0 x16 link's
 * ~25 GB/s per direction achievable (16 GT/s x 16 lanes x 128b/130b x
 * 0.8, gpuplan.comm.pcie_bw), and host DRAM at 60 GB/s (0.8 of dual-
 * channel DDR5-4800, the workstation case; gpuplan.comm.host_bw gives a
 * catalog system's own). */
#define PCIE_BW_MIN 25e9
#define HOST_BW_MIN 60e9

void train_defaults(train_cfg *c)
{
	memset(c, 0, sizeof *c);
	c->mem.seq = 2048;
	c->mem.flash = 1;
	c->mem.lay.micro_batch = 1;
	c->compute = GP_BF16;
	c->host_op_time = GP_EAGER_OP_TIME;
	mem_reserve_default(&c->reserve, 1);
}


static double t_op(const tenv *e, double flop, double bytes, double m,
		   double n, double k, double batch, gp_dtype p)
{
	roof_op op;

	op.name = NULL;
	op.flop = flop;
	op.bytes = bytes;
	op.m = m;
	op.n = n;
	op.k = k;
	op.count = batch;
	op.prec = p;
	/* Training GEMMs run on tensor-core tiles and multiply what they
	 * read (roofline.h: no small-M GEMV, no dequantisation term). */
	op.gemv = 0;
	op.dequant = 0.0;
	op.m_tile = 0.0;
	/* The host launches kernels ahead of the GPU in training; what a
	 * kernel costs beyond its work is the GPU-side gap between
	 * kernels, the graph-launch figure. */
	return roof_time(e->d, &op, 1);
}

/* A memory-bound op moving `bytes` in dtype p. */
static double t_mem(const tenv *e, gp_dtype p, double bytes)
{
	return bytes > 0 ? t_op(e, 0, bytes, 0, 0, 0, 0, p) : 0.0;
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

/* The memo's collectives: open addressing on a hash of the key. */
static unsigned coll_slot(const train_ckey *k)
{
	return (unsigned)(gp_hash(k, sizeof *k) % TRAIN_COLL_N);
}

static int coll_memo(const tenv *e, const train_ckey *k, double *time)
{
	unsigned i, n;

	for (i = coll_slot(k), n = 0; n < TRAIN_COLL_N;
	     i = (i + 1) % TRAIN_COLL_N, n++) {
		const struct train_cache_coll *c = &e->cc->coll[i];

		if (c->time < 0)
			return 0;       /* an empty slot ends the probe */
		if (memcmp(&c->key, k, sizeof *k) == 0) {
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
static double t_coll(tenv *e, gp_coll op, double bytes, const gp_group *g)
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

/* The stage code's shorthands, on the context's environment. */
static double op_time(const ctx *x, double flop, double bytes, double m,
		      double n, double k, double batch, gp_dtype p)
{
	return t_op(&x->e, flop, bytes, m, n, k, batch, p);
}

static double mem_time(const ctx *x, double bytes)
{
	return t_mem(&x->e, x->k.half, bytes);
}

static double coll(ctx *x, gp_coll op, double bytes, const gp_group *g)
{
	return t_coll(&x->e, op, bytes, g);
}

/* Attention core of one pass: a fused kernel at the device's measured
 * attention fraction of the 16-bit peak when it has one, else priced as
 * the GEMM of its shape; never faster than its memory traffic. */
static double attn_time(const tenv *e, const train_lkey *k, const gp_op *o,
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
	 *             7A + 4 + (A + 4) -- 24 B in bf16, 32 in fp32 (no
	 *             cast: the softmax output is the PV input);
	 *   backward  dP = dO V^T writes A; its cast to fp32 A + 4;
	 *             softmax backward reads P and dP, writes dS (12);
	 *             the cast back 4 + A; the scale 2A; dQ, dK read dS
	 *             and dV reads P (3A): 6A + 12 + 2 (A + 4) -- 36 B.
	 * In place of op_attn's 4 A (forward) and 8 A (backward). */
	if (!k->flash && k->eager) {
		double cast = k->A < 4.0 ? k->A + 4.0 : 0.0;

		bytes += s2 * (bwd ? 6.0 * k->A + 12.0 + 2.0 * cast -
			       8.0 * k->A :
			       7.0 * k->A + 4.0 + cast - 4.0 * k->A);
	}

	if (k->flash && frac > 0) {
		double tc = flop / (e->d->peak[k->half] * frac);
		double tm = t_mem(e, k->half, bytes);

		return (tc > tm ? tc : tm) + e->d->graph_launch;
	}
	return t_op(e, flop, bytes, o->m, o->n, o->k, o->batch, k->half);
}

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

/* Host-launched kernels of one layer's forward, fused stacks: one per
 * operator of the op list, two residual adds; LoRA's adapter its A and
 * B GEMMs and the add.  Eager (HF, above): an RMSNorm 8, q/k/v 3, the
 * rotary 10, attention and its layout copy 2, gate and up 2, SwiGLU 2,
 * and the rest one each (LlamaDecoderLayer: 39 for Llama); PEFT's LoRA
 * layer 5 (dropout, lora_A, lora_B, * scaling, +=). */
#define FUSED_LORA_OPS 3.0
#define EAGER_LORA_OPS 5.0

/* LoRA adapter of one targeted matrix (in -> out) at rank r on T
 * tokens: A (in x r) then B (r x out), added to the base output.
 * Forward reads the input, writes and reads the rank-r intermediate,
 * reads and writes the output; backward does both GEMMs' dgrad and
 * wgrad: about twice that traffic.  Memory-bound at any useful rank. */
static void lora_costs(const tenv *e, const train_lkey *k, double in,
		       double out, train_lcost *lc)
{
	double r = k->lora_rank, T = k->T;
	double f = 2.0 * T * r * (in + out);
	double bytes = T * (in + 2.0 * r + 2.0 * out) * k->A;
	double tf = t_op(e, f, bytes, T, r, in, 1, k->half);

	add_op(lc, "lora", tf, 2.0 * tf, 1, 0);
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

/* An elementwise operator as the eager modules run it (above): its
 * forward *t and backward *tb replaced by their kernels', *nk counting
 * the forward's launches.  A LayerNorm (nn.LayerNorm: one kernel each
 * way) and a plain activation run as the fused op does. */
static void eager_elem(const tenv *e, const train_lkey *k, const gp_op *o,
		       double *t, double *tb, double *nk)
{
	const gp_model *m = e->m;
	double h = m->hidden, tp = k->tp, nb = 0;
	double nh = m->heads / tp, nkv = model_kv_heads_rank(m, tp);

	if ((strcmp(o->name, "attn_norm") == 0 ||
	     strcmp(o->name, "mlp_norm") == 0) && m->norm_params == m->hidden) {
		*t = ekernels(e, k, rms_fwd, NK(rms_fwd), o->elems,
			      o->elems / h, nk);
		*tb = ekernels(e, k, rms_bwd, NK(rms_bwd), o->elems,
			       o->elems / h, &nb);
	} else if (strcmp(o->name, "rope_kv") == 0) {
		/* q's and k's heads of this GPU, rotated apart. */
		double eq = o->elems * nh / (nh + nkv), ek = o->elems - eq;
		double rows = eq / (nh * m->head_dim);

		*t = ekernels(e, k, rope_fwd, NK(rope_fwd), eq, rows, nk) +
			ekernels(e, k, rope_fwd, NK(rope_fwd), ek, rows, nk);
		*tb = ekernels(e, k, rope_bwd, NK(rope_bwd), eq, rows, &nb) +
			ekernels(e, k, rope_bwd, NK(rope_bwd), ek, rows, &nb);
	} else if ((strcmp(o->name, "mlp_act") == 0 ||
		    strcmp(o->name, "moe_act") == 0) && m->ffn_gated) {
		/* The op's elems are 1.5 per ffn element (gate and up in,
		 * one out). */
		double el = o->elems / 1.5;

		*t = ekernels(e, k, glu_fwd, NK(glu_fwd), el, 0, nk);
		*tb = ekernels(e, k, glu_bwd, NK(glu_bwd), el, 0, &nb);
	} else {
		*nk += 1;
	}
}

/* Costs of one layer (dense or MoE) for one micro-batch on one GPU. */
static void layer_costs(tenv *e, const train_lkey *k, int moe,
			train_lcost *lc)
{
	const gp_model *m = e->m;
	gp_op ops[GP_MAX_LAYER_OPS];
	gp_op_cfg oc;
	gp_widths w;
	double seq = k->seq, h = m->hidden, tb, ag, rs, kvb, t_sr;
	double topk = m->moe.top_k, nk = 0, o_k = 0;
	int i, n, fp8 = k->lin == GP_FP8, eager = k->eager;
	unsigned tg = k->frozen ? k->lora_targets : 0;

	memset(lc, 0, sizeof *lc);
	memset(&oc, 0, sizeof oc);
	oc.seqs = k->micro_batch;
	oc.q = seq / k->cp;
	/* Causal attention: a fused kernel skips the masked half, so a
	 * query sees seq/2 keys on average (with CP's load-balanced
	 * chunks as well); unfused attention computes the whole s x s
	 * score matrix and masks it. */
	oc.kv_len = k->flash ? seq / 2.0 : seq;
	if (m->sliding_window > 0 && m->sliding_layers > 0) {
		double win = fmin(oc.kv_len, m->sliding_window);

		oc.kv_len = ((m->layers - m->sliding_layers) * oc.kv_len +
			     m->sliding_layers * win) / m->layers;
	}
	oc.tp = k->tp;
	oc.sp = k->sp;
	oc.ep = k->ep;
	oc.etp = k->etp;
	oc.flash = k->flash;
	n = model_layer_ops(m, &oc, ops);
	for (i = 0; i < n; i++) {
		const gp_op *o = &ops[i];
		double wbytes, bytes, t, tb_;
		gp_dtype p;

		if (o->scope == (moe ? GP_SCOPE_DENSE : GP_SCOPE_MOE))
			continue;
		switch (o->kind) {
		case GP_OP_GEMM:
			p = o->wclass == GP_W_LINEAR ? k->lin : k->half;
			wbytes = o->wclass == GP_W_LINEAR ? k->wb : 2.0;
			bytes = o->weights * wbytes + o->act * k->A;
			t = t_op(e, o->flop, bytes, o->m, o->n, o->k,
				    o->batch, p);
			/* dgrad: dX = dY W, output m x k, depth n. */
			tb_ = t_op(e, o->flop, bytes, o->m, o->k, o->n,
				      o->batch, p);
			/* wgrad: dW = dY^T X, output n x k, depth m, the
			 * fp32 main grad read and written. */
			if (!k->frozen || o->wclass != GP_W_LINEAR)
				tb_ += t_op(e, o->flop, o->weights *
					       WGRAD_ACC_BYTES + o->act * k->A,
					       o->n, o->k, o->m, o->batch, p);
			if (p == GP_FP8 && fp8) {
				/* Transformer Engine: the input is cast to
				 * fp8 with its transpose for the wgrad GEMM
				 * (fused into the norm before qkv and
				 * mlp_up, a kernel of its own before o_proj
				 * and mlp_down: read 2 B, write 1 + 1 B);
				 * backward casts dY the same way. */
				double in = o->m * o->batch * o->k;
				double outv = o->m * o->batch * o->n;
				double fused = strcmp(o->name, "qkv") == 0 ||
					strcmp(o->name, "mlp_up") == 0 ||
					strcmp(o->name, "moe_up") == 0;

				t += t_mem(e, k->half, in * (fused ? 1.0 :
						       k->A + 2.0));
				tb_ += t_mem(e, k->half, outv * (k->A + 2.0));
			}
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
			add_op(lc, o->name, t, tb_, 1, 0);
			/* Eager: q, k and v, gate and up, are linears of
			 * their own (priced here as the one GEMM of their
			 * shapes, launched apart). */
			nk += !eager ? 1.0 : strcmp(o->name, "qkv") == 0 ?
				3.0 : strcmp(o->name, "mlp_up") == 0 &&
				m->ffn_gated ? 2.0 : 1.0;
			if (strcmp(o->name, "o_proj") == 0)
				o_k = o->k;
			/* in and out widths of this GPU's slice */
			if (tg & lora_bit(o->name)) {
				lora_costs(e, k, o->k, o->n, lc);
				nk += eager ? EAGER_LORA_OPS : FUSED_LORA_OPS;
			}
			break;
		case GP_OP_ATTN:
			t = attn_time(e, k, o, 0);
			add_op(lc, o->name, t, attn_time(e, k, o, 1), 0, 1);
			lc->rec_sel = t;
			/* Eager unfused: QK^T, scale, mask, softmax, cast,
			 * (dropout,) PV -- attn_time's kernels. */
			nk += !k->flash && eager ? 6.0 + k->dropout : 1.0;
			break;
		case GP_OP_ELEM:
			/* Training writes no KV cache (o->kv). */
			bytes = o->act * k->A;
			t = t_op(e, o->flop, bytes, 0, 0, 0, 0, k->half);
			tb_ = t_op(e, 2.0 * o->flop, 1.5 * bytes, 0, 0, 0,
				      0, k->half);
			if (eager)
				eager_elem(e, k, o, &t, &tb_, &nk);
			else
				nk += 1;
			add_op(lc, o->name, t, tb_, 0, 0);
			break;
		}
	}
	/* The two residual adds (Megatron's fused bias-dropout-add): read
	 * the block output and the residual, write the sum (and a 1-byte
	 * mask with dropout); the gradient passes through the add, and
	 * through dropout by its mask. */
	{
		double el = k->Tn * h, mask = k->dropout ? 1.0 : 0.0;
		double t = t_mem(e, k->half, el * (3.0 * k->A + mask));

		add_op(lc, "residual", 2.0 * t, k->dropout ?
		       2.0 * t_mem(e, k->half, el * (2.0 * k->A + mask)) :
		       0.0, 0, 0);
		nk += 2;
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
	/* The host launches the forward's kernels one by one from Python
	 * (no CUDA graph): below GP_EAGER_OP_TIME of GPU work per kernel
	 * the GPU waits for it (infer.c's eager runtime, the same rule).
	 * The backward runs in autograd's C++ engine; no per-kernel host
	 * figure for it was found, so none is charged. */
	if (nk * k->host_op_time > lc->fwd.t)
		add_op(lc, "host_wait", nk * k->host_op_time - lc->fwd.t, 0.0,
		       0, 0);
	switch (k->recompute) {
	case GP_RECOMPUTE_FULL:
		lc->rec_full = lc->fwd.t;
		break;
	default:
		break;
	}
	if (k->recompute != GP_RECOMPUTE_SELECTIVE)
		lc->rec_sel = 0;

	/* Parameters of one layer on this GPU. */
	model_widths(m, &w);
	{
		double attn = e->p.attention / m->layers;
		double norms = e->p.norms / m->layers;
		int nmoe = model_moe_layers(m);

		lc->params = (attn + norms) / k->tp;
		if (moe) {
			lc->eparams = e->p.experts / nmoe / k->etp / k->ep;
			lc->params += e->p.router / nmoe + lc->eparams;
		} else if (m->layers > nmoe) {
			/* A model whose every layer is MoE has no dense layer
			 * (its dense costs are never counted). */
			lc->params += e->p.dense_mlp / (m->layers - nmoe) /
				k->tp;
		}
	}

	/* Tensor parallelism: the activations cross the TP group in the
	 * 16-bit dtype (fp8 runs too: Transformer Engine reduces in bf16),
	 * two collectives per layer per pass, each on the whole T x h
	 * buffer (an all-reduce, or an all-gather plus a reduce-scatter
	 * with SP -- the same bytes per rank as one all-reduce). */
	tb = k->T * h * (k->A > 2.0 ? k->A : 2.0);
	if (k->sp) {
		ag = t_coll(e, GP_ALL_GATHER, tb, &k->g_tp);
		rs = t_coll(e, GP_REDUCE_SCATTER, tb, &k->g_tp);
		lc->tp_fwd = 2.0 * (ag + rs);
	} else {
		lc->tp_fwd = 2.0 * t_coll(e, GP_ALL_REDUCE, tb, &k->g_tp);
	}
	lc->tp_bwd = lc->tp_fwd;
	if (lc->tp_fwd > 0 && lc->nops < TRAIN_MAX_OPS) {
		lc->ops[lc->nops].name = "tp_comm";
		lc->ops[lc->nops].fwd = lc->tp_fwd;
		lc->ops[lc->nops].bwd = lc->tp_bwd;
		lc->nops++;
	}

	/* Context parallelism: cp - 1 ring steps per pass, each sending
	 * this rank's K and V chunk (backward: K, V and their gradients,
	 * twice the bytes) while the attention of one chunk runs. */
	if (k->cp > 1) {
		double steps = k->cp - 1, ef, eb, t_sb;

		kvb = k->T * model_kv_elems_layer(m, k->tp) * k->A;
		t_sr = t_coll(e, GP_SEND_RECV, kvb, &k->g_cp);
		t_sb = t_coll(e, GP_SEND_RECV, 2.0 * kvb, &k->g_cp);
		ef = fmax(0.0, t_sr - lc->fwd.attn / k->cp);
		eb = fmax(0.0, t_sb - lc->bwd.attn / k->cp);
		lc->cp_fwd = steps * ef;
		lc->cp_bwd = steps * eb;
		lc->cp_hid = steps * (t_sr - ef + (k->forward_only ? 0.0 :
						   t_sb - eb));
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
	 * tokens differ either way (model.c's Te = T etp / tp). */
	int egat = k->etp > 1 && (k->sp || k->etp > k->tp);

	if (moe && (k->ep > 1 || egat)) {
		double cf = k->capacity_factor > 0 ?
			k->capacity_factor : 1.0;
		double disp = k->Tn * topk * cf * h * 2.0, a2a, gs = 0;

		a2a = k->ep > 1 ? t_coll(e, GP_ALL_TO_ALL, disp, &k->g_ep) : 0;
		if (egat)
			gs = t_coll(e, GP_ALL_GATHER, disp * k->etp,
				    &k->g_etp) +
				t_coll(e, GP_REDUCE_SCATTER, disp * k->etp,
				       &k->g_etp);
		lc->ep_fwd = 2.0 * a2a + gs;
		lc->ep_bwd = 2.0 * a2a + gs;
	}
	/* The forward pass alone: nothing runs backward or again. */
	if (k->forward_only) {
		memset(&lc->bwd, 0, sizeof lc->bwd);
		lc->rec_full = lc->rec_sel = 0;
		lc->tp_bwd = lc->cp_bwd = lc->ep_bwd = 0;
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
 * loss moves 10 and 6; the final RMSNorm as the layers' (above). */
static void ends_costs(tenv *e, const train_lkey *k, train_lcost *ld)
{
	const gp_model *m = e->m;
	double hid = m->hidden, Vt = m->vocab / (double)k->tp;
	double f = 2.0 * k->T * Vt * hid, el = k->Tn * hid;
	double bytes = Vt * hid * 2.0 + k->T * (hid + Vt) * k->A;
	double act = k->T * hid * 2.0;
	int head_trains = !k->frozen, fo = k->forward_only;
	const gp_group *tpg = &k->g_tp;
	double lv = k->T * Vt, loss_f, loss_b, norm_f, norm_b, nk = 0;

	/* The loss over the logits and the final norm, forward and back. */
	loss_f = t_mem(e, k->half, lv * (k->A + 8.0));
	loss_b = t_mem(e, k->half, lv * (4.0 + k->A));
	norm_f = t_mem(e, k->half, 2.0 * el * k->A);
	norm_b = t_mem(e, k->half, 3.0 * el * k->A);
	if (k->eager) {
		double up = k->A < 4.0 ?
			t_mem(e, k->half, lv * (k->A + 4.0)) : 0.0;

		loss_f = up + t_mem(e, k->half, lv * 8.0);
		loss_b = t_mem(e, k->half, lv * 4.0) +
			t_mem(e, k->half, lv * 12.0) + up;
		if (m->norm_params == m->hidden) {
			norm_f = ekernels(e, k, rms_fwd, NK(rms_fwd), el,
					  el / hid, &nk);
			norm_b = ekernels(e, k, rms_bwd, NK(rms_bwd), el,
					  el / hid, &nk);
		}
	}

	ld->emb = t_mem(e, k->half, 2.0 * k->T * hid * k->A) +
		(k->frozen || fo ? 0.0 : t_mem(e, k->half, el * (k->A + 8.0)));
	ld->emb_tp = k->sp ? t_coll(e, GP_REDUCE_SCATTER, act, tpg) :
		t_coll(e, GP_ALL_REDUCE, act, tpg);
	ld->head_f = t_op(e, f, bytes, k->T, Vt, hid, 1, k->half) +
		loss_f + norm_f;
	/* A forward-only pass (RL's log-probabilities) has no backward:
	 * without SP nor the all-reduce of the head input's gradient. */
	ld->head_b = fo ? 0.0 : t_op(e, f, bytes, k->T, hid, Vt, 1,
					k->half) +
		(head_trains ? t_op(e, f, Vt * hid * WGRAD_ACC_BYTES +
				       k->T * (hid + Vt) * k->A, Vt, hid,
				       k->T, 1, k->half) : 0.0) +
		loss_b + norm_b;
	ld->head_tp = k->sp ? t_coll(e, GP_ALL_GATHER, act, tpg) +
		(fo ? 0.0 : t_coll(e, GP_REDUCE_SCATTER, act, tpg)) :
		(fo ? 0.0 : t_coll(e, GP_ALL_REDUCE, act, tpg));
}

/* Compute under communication runs slower: the collective's kernels
 * take SMs (NCCL: a CTA per channel, 16-32 channels; Transformer
 * Engine's Userbuffers 16-24 SMs of 132) and memory bandwidth from the
 * GEMMs beside them.  Measured over GPT and Llama training on A100,
 * H100, MI210 and MI250: overlap slows the computation by 18.9% on
 * average (40% at most), while still beating running the two one after
 * the other (arXiv 2507.03114, "Characterizing Compute-Communication
 * Overlap in GPU-Accelerated Distributed Deep Learning"). */
#define OVERLAP_SLOWDOWN 0.189

/* Seconds `comm` adds to the critical path when it runs beside `window`
 * seconds of compute: all of it when not overlapped; otherwise what the
 * window cannot hide plus the slowdown of the compute under it.  The
 * hidden seconds are added to *hidden. */
static double overlap(double comm, double window, int on, double *hidden)
{
	double h;

	if (!on || comm <= 0)
		return comm > 0 ? comm : 0.0;
	h = comm < window ? comm : window;
	if (h < 0)
		h = 0;
	*hidden += h;
	return comm - h + OVERLAP_SLOWDOWN * h;
}

/* The larger of two step terms (never NaN: fmax without its libm call). */
static double dmax(double a, double b)
{
	return a > b ? a : b;
}


/* A GEMM of the tower in the 16-bit dtype: forward, and when asked its
 * input gradient (dgrad) and weight gradient (wgrad, into an fp32 main
 * grad) as the language model's GEMMs are priced. */
static void tower_gemm(const ctx *x, double flop, double w, double act,
		       double M, double N, double K, double batch,
		       int dgrad, int wgrad, double *f, double *b)
{
	double bytes = w * 2.0 + act * x->k.A;

	*f += op_time(x, flop, bytes, M, N, K, batch, x->k.half);
	if (dgrad)
		*b += op_time(x, flop, bytes, M, K, N, batch, x->k.half);
	if (wgrad)
		*b += op_time(x, flop, w * WGRAD_ACC_BYTES + act * x->k.A, N,
			      K, M, batch, x->k.half);
}

/* The encoder tower on the first stage, one micro-batch (Wang et al.
 * 2024, Qwen2-VL sec. 2.1; Liu et al. 2023, LLaVA sec. 4.1).  Each
 * image -- or slice of temporal_patch video frames, which Qwen2-VL's
 * 3-D patch embedding encodes like one image -- is P patches: a linear
 * patch embedding over 3 x temporal_patch x patch^2 pixel values per
 * patch, every ViT layer with full attention among the image's own
 * patches (the model_layer_ops list of the tower, kv length P, not
 * causal), and the projector that merges merge^2 patches into one LLM
 * token (one GEMM as wide as its parameters).  Priced like the
 * language model's layers: forward; when the tower trains, both
 * backward GEMMs, fused attention backward and the recompute policy's
 * re-run.  A frozen tower fed pixels needs no gradient: forward only;
 * the projector still computes its weight gradient unless the whole
 * base is frozen (LoRA), its input gradient only for a training tower,
 * and the patch embedding never has one (its input is pixels).
 * Megatron shards the encoder over TP like the decoder when its heads
 * allow (else it runs whole on every TP rank, as memory.c counts it);
 * each context-parallel rank encodes the images of its chunk. */
static void tower_costs(ctx *x, scost *s)
{
	const gp_model *m = x->e.m;
	const train_cfg *c = x->c;
	gp_model v;
	gp_op ops[GP_MAX_LAYER_OPS];
	gp_op_cfg oc;
	double merge = m->vision.merge > 1 ? m->vision.merge : 1;
	double tokens = model_vision_tokens(m), P = tokens * merge * merge;
	double imgs = c->mem.images * c->mem.lay.micro_batch / x->y.cp;
	double hv = m->vision.hidden, tpt, kin, pk;
	double lf = 0, lb = 0, la = 0, f, b, rec = 0, tpc = 0, pf = 0, pb = 0;
	int fo = c->forward_only;
	int trains = !c->mem.vision_frozen && !x->k.frozen && !fo;
	int proj_trains = !x->k.frozen && !fo;
	int i, n, vtp;

	model_vision_tower(m, &v);
	vtp = v.heads % x->y.tp == 0 ? x->y.tp : 1;
	memset(&oc, 0, sizeof oc);
	oc.seqs = imgs;
	oc.q = P;
	oc.kv_len = P;
	oc.tp = vtp;
	oc.ep = 1;
	oc.flash = c->mem.flash;
	n = model_layer_ops(&v, &oc, ops);
	for (i = 0; i < n; i++) {
		const gp_op *o = &ops[i];
		double t, bytes;

		switch (o->kind) {
		case GP_OP_GEMM:
			tower_gemm(x, o->flop, o->weights, o->act, o->m, o->n,
				   o->k, o->batch, trains, trains, &lf, &lb);
			break;
		case GP_OP_ATTN:
			la = attn_time(&x->e, &x->k, o, 0);
			lf += la;
			if (trains)
				lb += attn_time(&x->e, &x->k, o, 1);
			break;
		case GP_OP_ELEM:
			bytes = o->act * x->k.A;
			t = op_time(x, o->flop, bytes, 0, 0, 0, 0, x->k.half);
			lf += t;
			if (trains)
				lb += op_time(x, 2.0 * o->flop, 1.5 * bytes, 0,
					      0, 0, 0, x->k.half);
			break;
		}
	}
	/* Two residual adds per layer: read two P x hidden, write one. */
	lf += 2.0 * mem_time(x, imgs * P * hv * 3.0 * x->k.A);
	if (trains)
		lb += 2.0 * mem_time(x, imgs * P * hv * 2.0 * x->k.A);
	f = v.layers * lf;
	b = v.layers * lb;
	if (trains && c->mem.recompute == GP_RECOMPUTE_FULL)
		rec = f;
	else if (trains && c->mem.recompute == GP_RECOMPUTE_SELECTIVE)
		rec = v.layers * la;
	/* Tensor parallelism over the tower: two all-reduces of the
	 * P x hidden activations per layer per pass, again in a full
	 * recompute. */
	if (vtp > 1) {
		double ar = coll(x, GP_ALL_REDUCE, imgs * P * hv * 2.0,
				 &x->g[GP_GRP_TP]);

		tpc = 2.0 * v.layers * ar * (1.0 + (trains ? 1.0 : 0.0) +
			(rec > 0 && c->mem.recompute == GP_RECOMPUTE_FULL ?
			 1.0 : 0.0));
	}
	/* Patch embedding: P x (3 tpt p^2) times (3 tpt p^2) x hidden. */
	tpt = m->vision.temporal_patch > 1 ? m->vision.temporal_patch : 1;
	kin = 3.0 * tpt * (double)m->vision.patch_size * m->vision.patch_size;
	tower_gemm(x, 2.0 * imgs * P * kin * hv, kin * hv, imgs * P *
		   (kin + hv), imgs * P, hv, kin, 1, 0, trains, &pf, &pb);
	/* Projector: tokens x (merge^2 hidden) in, its parameters wide. */
	pk = merge * merge * hv;
	if (m->vision.projector_params > 0)
		tower_gemm(x, 2.0 * imgs * tokens * m->vision.projector_params,
			   m->vision.projector_params, imgs * tokens *
			   (pk + m->vision.projector_params / pk),
			   imgs * tokens, m->vision.projector_params / pk, pk,
			   1, trains, proj_trains, &pf, &pb);
	s->part[TRAIN_COMPUTE] += f + b + pf + pb;
	s->fwd += f + pf;
	s->bwd += b + pb;
	s->part[TRAIN_RECOMPUTE] += rec;
	s->part[TRAIN_TP] += tpc;
	s->vision = f + b + pf + pb + rec + tpc;
	s->vision_patches = imgs * P;
	/* Trainable parameters here (reduced and stepped): the tower when
	 * it trains, the projector unless the base is frozen. */
	s->params += ((!c->mem.vision_frozen && !x->k.frozen ?
		       x->e.p.vision - m->vision.projector_params : 0.0) +
		      (!x->k.frozen ? m->vision.projector_params : 0.0)) /
		x->y.tp;
}

/* Dense layers among layers [first_layer, first_layer + nl): the first
 * moe.dense_layers of an MoE model, all of a dense one. */
static int stage_dense(const gp_model *m, int first_layer, int nl)
{
	int dl, hi, nd;

	if (model_moe_layers(m) == 0)
		return nl;
	dl = m->moe.dense_layers;
	hi = first_layer + nl;
	nd = (hi < dl ? hi : dl) - first_layer;
	return nd > 0 ? nd : 0;
}


/* The share of a stage's layers whose forward re-runs: full recompute
 * of the first recompute_layers layers of the stage only (Megatron
 * --recompute-method block --recompute-num-layers), else all or none. */
static double rec_share(const ctx *x, int nl)
{
	const train_cfg *c = x->c;
	double full = c->mem.recompute == GP_RECOMPUTE_FULL &&
		!c->forward_only;

	if (full && c->mem.recompute_layers > 0 && nl > 0)
		return fmin(1.0, (double)c->mem.recompute_layers / nl);
	return full;
}

/* What a stage costs one micro-batch before the ZeRO terms: compute,
 * recompute, the TP, CP, EP and PP communication, its ends and its
 * weights (zero_block adds the rest).  None of it depends on the ZeRO
 * stage or the DP overlap; of the overlaps, TP's is read here. */
static void stage_base(ctx *x, const train_lcost *ld, const train_lcost *lm,
		       const stage_rec *r, scost *s)
{
	const gp_model *m = x->e.m;
	const train_cfg *c = x->c;
	int i, k = r->k, nl = r->nl;
	double hid = m->hidden, tp = x->y.tp;
	const train_lcost *L[2];
	double cnt[2], rec;

	memset(s, 0, sizeof *s);
	s->layers = nl;
	L[0] = ld;
	L[1] = lm;
	cnt[0] = r->nd;
	cnt[1] = nl - r->nd;
	rec = rec_share(x, nl);
	for (i = 0; i < 2; i++) {
		const train_lcost *l = L[i];
		double n = cnt[i], e, h;

		if (n <= 0)
			continue;
		s->part[TRAIN_COMPUTE] += n * (l->fwd.t + l->bwd.t);
		s->fwd += n * l->fwd.t;
		s->bwd += n * l->bwd.t;
		s->part[TRAIN_RECOMPUTE] += n * (rec * l->rec_full + l->rec_sel);
		/* TP: exposed per pass beyond the GEMMs it overlaps with
		 * (Userbuffers), else all of it; the recomputed forward
		 * runs its collectives again. */
		h = 0;
		e = overlap(l->tp_fwd, l->fwd.gemm, c->tp_overlap, &h);
		e *= 1.0 + rec;
		h *= 1.0 + rec;
		e += overlap(l->tp_bwd, l->bwd.gemm, c->tp_overlap, &h);
		s->part[TRAIN_TP] += n * e;
		s->hidden[TRAIN_TP] += n * h;
		s->part[TRAIN_CP] += n * (l->cp_fwd * (1.0 + rec) +
					  l->cp_bwd + OVERLAP_SLOWDOWN *
					  l->cp_hid);
		s->hidden[TRAIN_CP] += n * l->cp_hid;
		h = 0;
		e = overlap(l->ep_fwd, l->fwd.t, c->ep_overlap, &h);
		e *= 1.0 + rec;
		h *= 1.0 + rec;
		e += overlap(l->ep_bwd, l->bwd.t, c->ep_overlap, &h);
		s->part[TRAIN_EP] += n * e;
		s->hidden[TRAIN_EP] += n * h;
		s->params += n * l->params;
		s->eparams += n * l->eparams;
	}
	/* First stage: the embedding (ends_costs) and the vision tower. */
	if (k == 0) {
		s->part[TRAIN_COMPUTE] += ld->emb;
		s->part[TRAIN_TP] += ld->emb_tp;
		s->params += (x->e.p.embedding) / tp;
		if (c->mem.images > 0 && m->vision.layers > 0)
			tower_costs(x, s);
	}
	/* Last stage: the head (ends_costs) and the output layer's (or
	 * the tied embedding copy's) weights. */
	if (k == x->y.pp - 1) {
		s->part[TRAIN_COMPUTE] += ld->head_f + ld->head_b;
		s->fwd += ld->head_f;
		s->bwd += ld->head_b;
		s->part[TRAIN_TP] += ld->head_tp;
		s->params += (x->e.p.lm_head > 0 ? x->e.p.lm_head :
			      (x->y.pp > 1 ? x->e.p.embedding : 0.0)) / tp;
	}
	/* Pipeline: each of the v chunks of the stage receives its input
	 * and sends its output forward, and the gradients back: the
	 * activations T x hid in 16 bits, split over TP (Megatron's
	 * scatter/gather: each TP rank sends its 1/t and the receivers
	 * all-gather over NVLink; with SP they are split already). */
	if (x->y.pp > 1) {
		double v = x->y.schedule == GP_SCHED_INTERLEAVED ?
			x->y.vpp : 1.0, all;

		if (!x->pp_ok) {
			x->pp_sr = coll(x, GP_SEND_RECV,
					x->k.T * hid * 2.0 / tp,
					&x->g[GP_GRP_PP]);
			x->pp_gat = x->y.sp ? 0.0 :
				coll(x, GP_ALL_GATHER, x->k.T * hid * 2.0,
				     &x->g[GP_GRP_TP]);
			x->pp_ok = !x->e.bad;
		}
		all = (c->forward_only ? 1.0 : 2.0) * v * (x->pp_sr +
							   x->pp_gat);

		s->part[TRAIN_PP] += overlap(all, s->fwd + s->bwd,
					     c->overlap_p2p,
					     &s->hidden[TRAIN_PP]);
	}
}

/* The ZeRO-3 / FSDP collectives of one layer of a kind: the gather of
 * its 16-bit weights and the reduce-scatter of its gradients over the
 * sharding groups (the same in every stage, ZeRO stage and overlap).
 * nccl-tests convention: the all-gather's bytes are the whole buffer
 * after it, the layer's 16-bit slice on this TP/EP rank. */
static void kind_colls(ctx *x, const train_lcost *l, double kc[2])
{
	double dense = l->params - l->eparams;

	kc[0] = coll(x, GP_ALL_GATHER, dense * 2.0, &x->g[GP_GRP_DPCP]) +
		coll(x, GP_ALL_GATHER, l->eparams * 2.0, &x->g[GP_GRP_EDP]);
	/* Offloaded parameters (ZeRO-Infinity, Rajbhandari et al. 2021
	 * sec. 5; DeepSpeed offload_param): each rank first copies its
	 * 16-bit partition of the layer up from the host over its PCIe
	 * link, for the forward and again for the backward, ahead of the
	 * gather (prefetched like it). */
	if (x->c->mem.offload_params)
		kc[0] += (dense / x->y.shard + l->eparams / x->y.eshard) *
			2.0 / (x->e.t.nic_path_bw > 0 ? x->e.t.nic_path_bw :
			       PCIE_BW_MIN);
	kc[1] = coll(x, GP_REDUCE_SCATTER, dense * x->rb, &x->g[GP_GRP_DPCP]) +
		coll(x, GP_REDUCE_SCATTER, l->eparams * x->rb,
		     &x->g[GP_GRP_EDP]);
}


/* Whether ZeRO-3 / FSDP layers gather: over a sharding group, or from
 * the host (offloaded parameters, one GPU included). */
static int gathers(const ctx *x)
{
	return x->y.shard > 1 || x->c->mem.offload_params;
}

/* The ZeRO terms of a stage: its ZeRO and DP parts and their hidden
 * seconds (stage_base leaves all four at zero).
 *
 * ZeRO-3 / FSDP: gather each layer's 16-bit parameters over the
 * sharding group for its forward (and, resharded after forward under
 * full sharding, again for its backward); reduce-scatter its gradients
 * in backward, in the reduction's dtype (FSDP's reduce_dtype,
 * DeepSpeed's communication_data_type).  DeepSpeed ZeRO-2 reduce-
 * scatters each micro-batch's gradients.  Each layer's gather is
 * prefetched under the layer before and its reduce-scatter runs under
 * the layer after -- except at the ends of the micro-batch: the first
 * layer's gather precedes the first forward and its reduce-scatter
 * follows the last backward, with no computation beside either (Zhao et
 * al. 2023, PyTorch FSDP, sec. 3.3.1 and Fig. 5: AG0 before FWD0, RS0
 * after BWD0).  The stage's first layer is of the first kind present
 * (dense layers lead).  kc: each kind's kind_colls. */
static void zero_block(ctx *x, const train_lcost *ld, const train_lcost *lm,
		       const double kc[2][2], const stage_rec *r,
		       double z[TRAIN_ZB_N])
{
	const train_cfg *c = x->c;
	int i, zero = x->y.zero, nd = r->nd;
	int fsdp_full = zero == 3, fsdp_sgo = zero == 2 && c->fsdp;
	const train_lcost *L[2];
	double cnt[2];

	memset(z, 0, TRAIN_ZB_N * sizeof *z);
	L[0] = ld;
	L[1] = lm;
	cnt[0] = nd;
	cnt[1] = r->nl - nd;
	for (i = 0; i < 2 && zero >= 2 && gathers(x) && !x->k.frozen; i++) {
		const train_lcost *l = L[i];
		double n = cnt[i];
		double agw, rsw, f, b, hz = 0, hd = 0, ef, eb, mid;
		int on_b;

		if (n <= 0)
			continue;
		agw = fsdp_full || fsdp_sgo ? kc[i][0] : 0.0;
		/* Whole gradients: reduce-scattered once per step
		 * (phase_post), not per micro-batch. */
		rsw = c->mem.grads_whole ? 0.0 : kc[i][1];
		f = agw;
		b = c->forward_only ? 0.0 : (fsdp_full ? agw : 0.0) + rsw;
		ef = overlap(f, l->fwd.t, c->overlap_param_gather, &hz);
		on_b = c->overlap_param_gather || c->overlap_grad_reduce;
		eb = overlap(b, l->bwd.t, on_b, &hd);
		/* The layers of this kind that have neighbours on both
		 * sides, and the stage's first layer. */
		mid = i == (nd > 0 ? 0 : 1) ? n - 1.0 : n;
		z[TRAIN_ZB_ZERO] += mid * ef;
		z[TRAIN_ZB_DP] += mid * eb;
		z[TRAIN_ZB_ZERO_HID] += mid * hz;
		z[TRAIN_ZB_DP_HID] += mid * hd;
		if (mid < n) {
			double h1 = 0;
			double rs1 = c->forward_only ? 0.0 : rsw;

			z[TRAIN_ZB_ZERO] += f;
			z[TRAIN_ZB_DP] += overlap(b - rs1, l->bwd.t, on_b,
						  &h1) + rs1;
			z[TRAIN_ZB_DP_HID] += h1;
		}
	}
}

/* A stage's base with its ZeRO terms, and its total. */
static void stage_with(const scost *base, const double z[TRAIN_ZB_N], scost *s)
{
	int i;

	*s = *base;
	s->part[TRAIN_ZERO] = z[TRAIN_ZB_ZERO];
	s->part[TRAIN_DP] = z[TRAIN_ZB_DP];
	s->hidden[TRAIN_ZERO] = z[TRAIN_ZB_ZERO_HID];
	s->hidden[TRAIN_DP] = z[TRAIN_ZB_DP_HID];
	s->t = 0;
	for (i = 0; i < TRAIN_NPARTS; i++)
		s->t += s->part[i];
}

/* stage_with's total alone: the sum in its order (the base's first
 * terms, then DP and ZeRO; the bubble and optimizer parts of a stage
 * are zero, and adding +0 changes no sum of non-negative terms). */
static double stage_total(const scost *base, const double z[TRAIN_ZB_N])
{
	return base->t05 + z[TRAIN_ZB_DP] + z[TRAIN_ZB_ZERO];
}

/* Bytes per parameter a gradient reduction moves: the config's, else
 * the recipe's `reduce` (catalog/recipes.lua: its gradient dtype, as
 * Megatron reduces its fp32 main grads in fp32 for bf16 runs and fp16
 * mixed precision its fp16 grads; DeepSpeed's BF16_Optimizer a bf16
 * copy). */
static double reduce_bytes(const train_cfg *c)
{
	return c->reduce_bytes > 0 ? c->reduce_bytes : c->mem.recipe.reduce;
}

/* The config's checks against a checked model and device. */
static int check_cfg(const gp_model *m, const roof_device *d,
		     const train_cfg *c, gp_error *err)
{
	if (m->encoder_layers > 0)
		return gp_fail(err, "the training step of an encoder-decoder "
			       "model is not modelled (its memory is: "
			       "gpuplan fit)");
	if ((int)c->compute < 0 || c->compute >= GP_DTYPE_COUNT)
		return gp_fail(err, "unknown compute precision %d",
			       (int)c->compute);
	if (!(d->peak[c->compute] > 0) || !(d->gemm_frac[c->compute] > 0))
		return gp_fail(err, "%s training needs %s tensor cores; this "
			       "device has none", gp_dtype_name(c->compute),
			       gp_dtype_name(c->compute));
	if (c->compute != GP_BF16 && c->compute != GP_FP16 &&
	    c->compute != GP_FP8 && c->compute != GP_TF32 &&
	    c->compute != GP_FP32)
		return gp_fail(err, "train: compute precision %s is not a "
			       "training precision (bf16, fp16, fp8, tf32, "
			       "fp32)", gp_dtype_name(c->compute));
	if (gp_check_nonneg(c->global_batch, "global_batch", err) ||
	    gp_check_nonneg(c->tokens, "tokens", err) ||
	    gp_check_nonneg(c->price, "price", err) ||
	    gp_check_num(c->reduce_bytes, 0, 8, "reduce_bytes", err) ||
	    gp_check_num(c->host_op_time, 0, 1, "host_op_time", err) ||
	    gp_check_pos(c->capacity, "capacity", err) ||
	    gp_check_tokens(c->mem.seq, "seq", err) ||
	    gp_check_pos(c->mem.seq, "seq", err))
		return GP_EINVAL;
	if (c->delayed_update && !c->mem.offload_optimizer &&
	    !c->mem.offload_params)
		return gp_fail(err, "delayed_update delays the offloaded "
			       "optimizer's step: it needs offload "
			       "(optimizer or params+optimizer)");
	return GP_OK;
}

static int check(const gp_model *m, const roof_device *d, const gp_topo *t,
		 const train_cfg *c, gp_error *err)
{
	if (!m || !d || !t || !c)
		return gp_fail(err, "train: missing argument");
	if (model_check(m, err) || roof_device_check(d, err) ||
	    comm_topo_check(t, err))
		return GP_EINVAL;
	return check_cfg(m, d, c, err);
}

/* Take the model, device and topology into the memo: the same as it
 * holds (checked then) or checked now and the memo started over.  The
 * config's own checks are the caller's (check_cfg). */
static int cache_open(train_cache *cc, const gp_model *m,
		      const roof_device *d, const gp_topo *t, gp_error *err)
{
	gp_topo tn;
	int i;

	if (!m || !d || !t)
		return gp_fail(err, "train: missing argument");
	/* The node count only bounds the groups, whose placement is in
	 * the layer key: layouts of different sizes share the memo. */
	tn = *t;
	tn.nodes = 0;
	if (cc->valid && memcmp(&cc->m, m, sizeof cc->m) == 0 &&
	    memcmp(&cc->d, d, sizeof cc->d) == 0 &&
	    memcmp(&cc->t, &tn, sizeof cc->t) == 0) {
		if (t->nodes != cc->checked_nodes) {
			if (comm_topo_check(t, err))
				return GP_EINVAL;
			cc->checked_nodes = t->nodes;
		}
		return GP_OK;
	}
	cc->valid = 0;
	if (model_check(m, err) || roof_device_check(d, err) ||
	    comm_topo_check(t, err))
		return GP_EINVAL;
	memset(cc, 0, sizeof *cc);
	if (model_params(m, &cc->p, err))
		return GP_EINVAL;
	cc->m = *m;
	cc->d = *d;
	cc->t = tn;
	cc->checked_nodes = t->nodes;
	cc->fpt_ctx = -1;
	for (i = 0; i < TRAIN_COLL_N; i++)
		cc->coll[i].time = -1;
	cc->valid = 1;
	return GP_OK;
}

/* The memo's layer costs for key k, or NULL. */
static const struct train_cache_entry *cache_get(train_cache *cc,
						 const train_lkey *k,
						 unsigned long long *h)
{
	int i;

	if (!cc)
		return NULL;
	/* Layouts in a row often share their layers (another dp or vpp):
	 * the last hit first, without hashing. */
	i = cc->last;
	if (i < cc->n && memcmp(&cc->e[i].key, k, sizeof *k) == 0) {
		cc->hits++;
		*h = cc->e[i].hash;
		return &cc->e[i];
	}
	*h = gp_hash(k, sizeof *k);
	for (i = 0; i < cc->n; i++)
		if (cc->e[i].hash == *h &&
		    memcmp(&cc->e[i].key, k, sizeof *k) == 0) {
			cc->hits++;
			cc->last = i;
			return &cc->e[i];
		}
	cc->misses++;
	return NULL;
}

static const struct train_cache_entry *cache_put(train_cache *cc,
						 const train_lkey *k,
						 unsigned long long h,
						 const train_lcost *ld,
						 const train_lcost *lm)
{
	struct train_cache_entry *e;
	int i;

	i = cc->n < TRAIN_CACHE_N ? cc->n++ : cc->next;
	cc->next = (cc->next + 1) % TRAIN_CACHE_N;
	e = &cc->e[i];
	cc->last = i;
	e->key = *k;
	e->hash = h;
	e->ld = *ld;
	e->lm = *lm;
	return e;
}

int train_step(const gp_model *m, const roof_device *d, const gp_topo *t,
	       const train_cfg *c, train_result *out, gp_error *err)
{
	return train_step_cached(m, d, t, c, NULL, out, err);
}

/* layout_place, remembered for the last few layouts (a sweep visits each
 * split with many ZeRO stages, micro-batches and recompute policies). */
static int place(const ctx *x, train_cache *cc, int G,
		 gp_group g[GP_GRP_COUNT], gp_error *err)
{
	gp_place_key key;
	int i;

	if (!cc)
		return layout_place(&x->y, G, g, err);
	layout_place_key(&x->y, G, &key);
	for (i = 0; i < cc->nplace; i++)
		if (memcmp(&cc->place[i].key, &key, sizeof key) == 0) {
			memcpy(g, cc->place[i].g, sizeof cc->place[i].g);
			return GP_OK;
		}
	if (layout_place_of(&key, g, err))
		return GP_EINVAL;
	i = cc->nplace < TRAIN_PLACE_N ? cc->nplace++ : cc->next_place;
	cc->next_place = (cc->next_place + 1) % TRAIN_PLACE_N;
	cc->place[i].key = key;
	memcpy(cc->place[i].g, g, sizeof cc->place[i].g);
	return GP_OK;
}

/* What every use of a config shares: the checks, the layout and its
 * placement, the precisions, and the two kinds of layer's costs (from
 * the memo when it has them).  Fills *xp, out's groups and warnings,
 * *sb and the micro-batches per step. */
static int prepare(const gp_model *m, const roof_device *d,
		   const gp_topo *t, const train_cfg *c, train_cache *cache,
		   ctx *xp, gp_state_bytes *sb, double *per_step_out,
		   gp_group *groups, unsigned *warn, gp_error *err)
{
	double mb, per_step, nodes;
	int G;

	/* All but the collectives' scratch list, which ncache says how much
	 * of holds anything. */
	memset(xp, 0, offsetof(ctx, e.cache));
	memset(&xp->k, 0, sizeof *xp - offsetof(ctx, k));
	*warn = 0;
	xp->e.m = m;
	xp->e.d = d;
	xp->c = c;
	xp->e.err = err;
	xp->g = groups;
	xp->e.cc = cache;
	if (cache) {
		xp->e.p = cache->p;
		if (mem_layout_prepared(m, &xp->e.p, &c->mem, &xp->y, err))
			return GP_EINVAL;
	} else if (mem_layout(m, &c->mem, &xp->y, err) ||
		   model_params(m, &xp->e.p, err)) {
		return GP_EINVAL;
	}
	if (mem_state_bytes(&c->mem.recipe, &c->mem.optim, sb, err))
		return GP_EINVAL;
	if (c->mem.seq < xp->y.cp)
		return gp_fail(err, "cp %d is larger than seq %g", xp->y.cp,
			       c->mem.seq);
	if (gp_check_pos(xp->y.micro_batch, "micro_batch", err))
		return GP_EINVAL;
	mb = xp->y.micro_batch;
	/* Micro-batches per pipeline per step. */
	per_step = c->global_batch > 0 ?
		c->global_batch / (xp->y.dp * mb) :
		(c->mem.lay.microbatches > 0 ? c->mem.lay.microbatches : 1.0);
	if (per_step < 1 || per_step != floor(per_step))
		return gp_fail(err, "global batch %g is not a multiple of dp "
			       "x micro_batch = %g", c->global_batch,
			       xp->y.dp * mb);
	if (per_step > GP_AMOUNT_MAX)
		return gp_fail(err, "global batch %g is too large",
			       c->global_batch);
	*per_step_out = per_step;
	if (xp->y.schedule == GP_SCHED_INTERLEAVED && xp->y.vpp > 1 &&
	    fmod(per_step, xp->y.pp) != 0)
		*warn |= TRAIN_WARN_UNEVEN_MB;
	/* The topology holds the job: as many nodes as it needs. */
	xp->e.t = *t;
	G = t->gpus_per_node;
	nodes = ceil(xp->y.gpus / G);
	if (nodes > GP_COUNT_MAX)
		return gp_fail(err, "%g nodes are too many", nodes);
	if (xp->e.t.nodes < nodes)
		xp->e.t.nodes = (int)nodes;
	if (nodes > 1 && xp->e.t.nics == 0)
		return gp_fail(err, "%g GPUs span %g nodes of %d, but the "
			       "system has no NICs", xp->y.gpus, nodes, G);
	if (place(xp, cache, G, groups, err))
		return GP_EINVAL;
	if (groups[GP_GRP_TP].per_node < xp->y.tp)
		*warn |= TRAIN_WARN_TP_NODES;
	if (groups[GP_GRP_EP].per_node < xp->y.ep)
		*warn |= TRAIN_WARN_EP_NODES;

	/* Precisions and bytes. */
	xp->k.lin = c->compute;
	xp->k.half = d->peak[GP_BF16] > 0 && d->gemm_frac[GP_BF16] > 0 ?
		GP_BF16 : GP_FP16;
	if (c->compute == GP_FP16 || c->compute == GP_FP32 ||
	    c->compute == GP_TF32)
		xp->k.half = c->compute;
	xp->k.A = c->mem.act_bytes > 0 ? c->mem.act_bytes :
		(c->compute == GP_FP32 || c->compute == GP_TF32 ? 4.0 : 2.0);
	xp->k.wb = c->compute == GP_FP8 ? 1.0 : xp->k.A;
	xp->k.frozen = c->mem.lora_rank > 0;
	if (xp->k.frozen && c->mem.base.bits > 0 &&
	    mem_quant_bits(&c->mem.base) < 16) {
		xp->k.quant = mem_quant_bits(&c->mem.base);
		xp->k.wb = 2.0;   /* the GEMM reads the dequantised copy */
	}
	xp->k.T = mb * c->mem.seq / xp->y.cp;
	xp->k.Tn = xp->y.sp ? xp->k.T / xp->y.tp : xp->k.T;
	/* The rest of the layers' key (prepare zeroed it). */
	xp->k.seq = c->mem.seq;
	xp->k.micro_batch = c->mem.lay.micro_batch;
	xp->k.capacity_factor = c->mem.capacity_factor;
	xp->k.host_op_time = c->host_op_time;
	xp->k.tp = xp->y.tp;
	xp->k.cp = xp->y.cp;
	xp->k.ep = xp->y.ep;
	xp->k.etp = xp->y.etp;
	xp->k.sp = xp->y.sp;
	xp->k.flash = c->mem.flash;
	xp->k.dropout = c->mem.dropout;
	xp->k.eager = c->eager;
	xp->k.forward_only = c->forward_only;
	xp->k.lora_rank = c->mem.lora_rank;
	xp->k.lora_targets = c->mem.lora_targets;
	xp->k.recompute = c->mem.recompute;
	xp->k.g_tp = groups[GP_GRP_TP];
	xp->k.g_cp = groups[GP_GRP_CP];
	xp->k.g_ep = groups[GP_GRP_EP];
	xp->k.g_etp = groups[GP_GRP_ETP];
	xp->rb = reduce_bytes(c);
	return GP_OK;
}

/* The two kinds of layer's costs of a prepared config: from the memo
 * when it has them, else priced (into buf, and kept in the memo). */
static int layer_pair(ctx *xp, train_cache *cache, train_lcost *buf,
		      const train_lcost **ldp, const train_lcost **lmp)
{
	const struct train_cache_entry *e;
	unsigned long long h = 0;

	e = cache_get(cache, &xp->k, &h);
	if (!e) {
		layer_costs(&xp->e, &xp->k, 0, &buf[0]);
		ends_costs(&xp->e, &xp->k, &buf[0]);
		buf[1] = buf[0];
		if (model_moe_layers(xp->e.m) > 0)
			layer_costs(&xp->e, &xp->k, 1, &buf[1]);
		if (xp->e.bad)
			return GP_EINVAL;
		if (cache)
			e = cache_put(cache, &xp->k, h, &buf[0], &buf[1]);
	}
	*ldp = e ? &e->ld : &buf[0];
	*lmp = e ? &e->lm : &buf[1];
	return GP_OK;
}


/* ---- the step, in phases ----------------------------------------------
 *
 * Layouts that differ only in their ZeRO stage, TP overlap and DP
 * overlap share everything else the step prices: the checked and
 * placed layout, the layer costs, which stages differ, the activations
 * and the FLOPs.  A sweep enumerates those three innermost (sweep.c),
 * so the memo keeps what the last layout prepared -- its phase -- and a
 * layout that changes only them pays for what they change: its memory
 * (kept per ZeRO stage), the stages' base costs (kept per TP overlap),
 * and its own ZeRO and DP terms, schedule and figures.  Without a memo
 * the phase lives on the stack for one call.  Every value is computed
 * by the same expression in the same order either way: the results are
 * train_step's bit for bit (tests/c/t_sweep.c). */

/* The stages of a prepared layout: nl layers from its first, the dense
 * ones among them; a middle stage like the one before it (same layers,
 * same dense/MoE mix) costs the same and is counted, not re-priced.
 * Uniform and balanced splits change the layer count at most twice and
 * the dense share at most twice along the pipeline, so the distinct
 * stages are a handful; TRAIN_PHASE_STAGES is a wide margin. */
static int phase_stages(phase *ph, gp_error *err)
{
	const ctx *x = &ph->x;
	int k, first = 0, nl, nd, best = -1;

	ph->nrec = 0;
	ph->kb = 0;
	for (k = 0; k < x->y.pp; k++) {
		stage_rec *r = ph->nrec > 0 ? &ph->rec[ph->nrec - 1] : NULL;

		nl = layout_stage_layers(&x->y, x->e.m->layers, k);
		nd = stage_dense(x->e.m, first, nl);
		if (!(k > 1 && k < x->y.pp - 1 && r && nl == r->nl &&
		      nd == r->nd)) {
			if (ph->nrec == TRAIN_PHASE_STAGES)
				return gp_fail(err, "train: pp %d has more "
					       "than %d distinct stages",
					       x->y.pp, TRAIN_PHASE_STAGES);
			r = &ph->rec[ph->nrec++];
			r->k = k;
			r->first = first;
			r->nl = nl;
			r->nd = nd;
			r->repeat = 0;
		} else {
			r->repeat++;
		}
		/* The bound's stage: the most layers, the first of equals. */
		if (nl > best) {
			best = nl;
			ph->kb = ph->nrec - 1;
		}
		first += nl;
	}
	return GP_OK;
}

/* The optimizer step's bytes per local trainable parameter.  Memory-
 * bound over the local trainable states: Adam reads and writes the fp32
 * master and both moments, reads the gradient (and zeroes it), writes
 * the 16-bit weights (apex/Megatron multi-tensor fused Adam).  Before
 * it, the gradient norm for clipping reads every gradient once
 * (Megatron clip_grad_norm_fp32, torch clip_grad_norm_; with fp16 the
 * inf/nan check rides on it). */
static double opt_bytes_of(const train_cfg *c, const gp_state_bytes *sb)
{
	if (c->eager_optim && c->mem.optim.foreach_adamw) {
		/* torch.optim.AdamW's foreach path (_multi_tensor_adamw,
		 * the default on CUDA) is eight passes, each a kernel over
		 * every tensor: mul_(p) by the decay, lerp_(m, g),
		 * mul_(v), addcmul_(v, g, g), sqrt(v) into a new denom,
		 * div_ and add_ on it, addcdiv_(p, m, denom); torch's
		 * clip_grad_norm_ reads the gradients for their norm and
		 * scales them (read, write).  The parameter p its master
		 * copy when the recipe keeps one (its gradient of its
		 * dtype), m and v the two halves of the states: 4 p + 3 m +
		 * 11 v + 6 g, 96 B per parameter in fp32 against the fused
		 * step's 32 of mixed-16. */
		double p = sb->master > 0 ? sb->master : sb->weights;
		double mv = sb->optimizer / 2.0;

		return 4.0 * p + 3.0 * mv + 11.0 * mv + 6.0 * p;
	}
	return 2.0 * (sb->master + sb->optimizer) + 3.0 * sb->grads +
		sb->weights;
}

/* The config as the phase's key: what the phase does not read cleared. */
static void phase_key(const train_cfg *c, train_cfg *k)
{
	memcpy(k, c, sizeof *k);
	k->mem.lay.zero = 0;
	k->tp_overlap = 0;
	k->overlap_grad_reduce = 0;
}

/* The phase of c: the memo's when it was prepared for a config that
 * differs from c at most in the ZeRO stage and the TP and DP overlaps,
 * else prepared now (into the memo, or into *local without one).  An
 * offloaded config is prepared every time (its checks read the ZeRO
 * stage); so is a ZeRO stage out of range (its error is the check's). */
static int phase_get(const gp_model *m, const roof_device *d,
		     const gp_topo *t, const train_cfg *c, train_cache *cache,
		     int taken, int moved, phase *local, phase **php,
		     gp_error *err)
{
	phase *ph = local;
	train_cfg k;
	int zero = c->mem.lay.zero, z;

	if (cache) {
		/* taken: the memo holds m, d and t already (its caller
		 * vouches). */
		if (!(taken && cache->valid) &&
		    cache_open(cache, m, d, t, err))
			return GP_EINVAL;
		ph = &cache->phase;
		/* moved: a level of the phase's key moved (the caller
		 * knows), so it is not the memo's. */
		if (!moved)
			phase_key(c, &k);
		if (!moved && ph->valid && ph->nodes == t->nodes &&
		    zero >= 0 && zero <= 3 &&
		    memcmp(&ph->key, &k, sizeof k) == 0) {
			*php = ph;
			return GP_OK;
		}
		ph->valid = 0;
		if (check_cfg(m, d, c, err))
			return GP_EINVAL;
	} else if (check(m, d, t, c, err)) {
		return GP_EINVAL;
	}
	if (prepare(m, d, t, c, cache, &ph->x, &ph->sb, &ph->per_step,
		    ph->groups, &ph->warn, err) ||
	    phase_stages(ph, err))
		return GP_EINVAL;
	ph->opt_bytes = opt_bytes_of(c, &ph->sb);
	ph->layers_ok = ph->flops_ok = ph->kc_ok = ph->msplit_ok = 0;
	ph->opt_ok[0] = ph->opt_ok[1] = ph->ag_ok = 0;
	memset(ph->base_ok, 0, sizeof ph->base_ok);
	for (z = 0; z < 4; z++) {
		ph->z[z].mem_ok = ph->z[z].post_ok = ph->z[z].brief_ok = 0;
		ph->z[z].blk_ok[0] = ph->z[z].blk_ok[1] = 0;
		ph->z[z].pd_ok[0] = ph->z[z].pd_ok[1] = ph->z[z].pz_ok = 0;
	}
	if (cache && !c->mem.offload_optimizer && !c->mem.offload_params) {
		phase_key(c, &ph->key);
		ph->nodes = t->nodes;
		ph->valid = 1;
	}
	*php = ph;
	return GP_OK;
}

/* The two kinds of layer's costs of the phase. */
static int phase_layers(phase *ph, train_cache *cache)
{
	train_lcost buf[2];
	const train_lcost *ld, *lm;

	if (ph->layers_ok)
		return GP_OK;
	if (layer_pair(&ph->x, cache, buf, &ld, &lm))
		return GP_EINVAL;
	if (!cache) {
		ph->own[0] = *ld;
		ph->own[1] = *lm;
		ld = &ph->own[0];
		lm = &ph->own[1];
	}
	ph->ld = ld;
	ph->lm = lm;
	ph->layers_ok = 1;
	return GP_OK;
}

/* The stages' base costs under c's TP overlap. */
static int phase_base(phase *ph, train_cache *cache, const scost **base)
{
	int o = ph->x.c->tp_overlap != 0, j;

	if (phase_layers(ph, cache))
		return GP_EINVAL;
	if (!ph->base_ok[o]) {
		for (j = 0; j < ph->nrec; j++) {
			scost *b = &ph->base[o][j];
			int i;

			stage_base(&ph->x, ph->ld, ph->lm, &ph->rec[j], b);
			/* The totals' first terms, added in their order. */
			b->t05 = 0;
			b->step05 = 0;
			for (i = 0; i < TRAIN_DP; i++) {
				b->t05 += b->part[i];
				b->step05 += ph->per_step * b->part[i];
			}
		}
		if (ph->x.e.bad)
			return GP_EINVAL;
		ph->base_ok[o] = 1;
	}
	*base = ph->base[o];
	return GP_OK;
}

/* The memory of the most loaded GPU under c's ZeRO stage: the split of
 * the memory model (uniform for Megatron, DeepSpeed's balanced
 * partition when configured) with the step's micro-batches. */
static int phase_mem(phase *ph, const gp_model *m, const train_cfg *c,
		     train_cache *cache, int brief, gp_mem_result *out,
		     gp_error *err)
{
	struct zslot *zs = &ph->z[c->mem.lay.zero];
	const gp_mem_result *res;

	if (!zs->mem_ok && !(brief && zs->brief_ok) && cache &&
	    ph->msplit_ok) {
		/* The ZeRO stage's share only, on the config and layout the
		 * split was made with. */
		ph->mc.lay.zero = ph->my.zero = c->mem.lay.zero;
		if (mem_train_zero(m, &ph->x.e.p, &ph->mc, &ph->my, c->capacity,
				   &c->reserve, &ph->msplit, &res, err))
			return GP_EINVAL;
		zs->total = res->total;
		zs->fits = res->fits;
		zs->brief_ok = 1;
		if (!brief) {
			zs->mem = *res;
			zs->mem_ok = 1;
		}
	}
	if (!zs->mem_ok && !(brief && zs->brief_ok)) {
		gp_train_cfg mc = c->mem;

		mc.lay.microbatches = mc.lay.microbatches > 0 ?
			mc.lay.microbatches : ph->per_step;
		if (cache && !mc.offload_optimizer && !mc.offload_params) {
			/* The rest once per phase. */
			ph->mc = mc;
			ph->my = ph->x.y;
			ph->my.microbatches = mc.lay.microbatches;
			if (mem_train_split(m, &ph->x.e.p, &ph->mc, &ph->my,
					    c->capacity, &c->reserve,
					    &cache->mem, &ph->msplit, err) ||
			    mem_train_zero(m, &ph->x.e.p, &ph->mc, &ph->my,
					   c->capacity, &c->reserve,
					   &ph->msplit, &res, err))
				return GP_EINVAL;
			ph->msplit_ok = 1;
			zs->mem = *res;
		} else if (cache) {
			gp_layout y = ph->x.y;

			y.microbatches = mc.lay.microbatches;
			if (mem_train_prepared(m, &ph->x.e.p, &mc, &y,
					       c->capacity, &c->reserve,
					       &cache->mem, &zs->mem, err))
				return GP_EINVAL;
		} else if (mem_train(m, &mc, c->capacity, &c->reserve,
				     &zs->mem, err)) {
			return GP_EINVAL;
		}
		zs->mem_ok = zs->brief_ok = 1;
		zs->total = zs->mem.total;
		zs->fits = zs->mem.fits;
	}
	if (brief) {
		out->total = zs->total;
		out->fits = zs->fits;
	} else {
		*out = zs->mem;
	}
	return GP_OK;
}

/* The stages' ZeRO terms under c's ZeRO stage and DP overlap. */
/* The ZeRO terms of unsharded parameters and gradients: none. */
static const double no_blocks[TRAIN_PHASE_STAGES][TRAIN_ZB_N];

/* Which of a ZeRO slot's two block sets c's overlaps use: zero_block
 * reads the DP overlap only as "either overlap on". */
static int block_set(const train_cfg *c)
{
	return c->overlap_param_gather || c->overlap_grad_reduce;
}

static int phase_blocks(phase *ph, const double (**blk)[TRAIN_ZB_N])
{
	const train_cfg *c = ph->x.c;
	struct zslot *zs = &ph->z[ph->x.y.zero];
	int o = block_set(c), j;

	/* Unsharded parameters and gradients: no ZeRO terms (zero_block's
	 * zeros). */
	if (ph->x.y.zero < 2 || !gathers(&ph->x) || ph->x.k.frozen) {
		*blk = no_blocks;
		return GP_OK;
	}
	if (!zs->blk_ok[o]) {
		if (!ph->kc_ok && ph->x.y.zero >= 2 && gathers(&ph->x) &&
		    !ph->x.k.frozen) {
			kind_colls(&ph->x, ph->ld, ph->kc[0]);
			kind_colls(&ph->x, ph->lm, ph->kc[1]);
			if (ph->x.e.bad)
				return GP_EINVAL;
			ph->kc_ok = 1;
		}
		for (j = 0; j < ph->nrec; j++)
			zero_block(&ph->x, ph->ld, ph->lm,
				   (const double (*)[2])ph->kc, &ph->rec[j],
				   zs->blk[o][j]);
		if (ph->x.e.bad)
			return GP_EINVAL;
		zs->blk_ok[o] = 1;
	}
	*blk = (const double (*)[TRAIN_ZB_N])zs->blk[o];
	return GP_OK;
}

/* The host's side of an offloaded step (DeepSpeed ZeRO-Offload, Ren et
 * al. 2021 sec. 4.1, Fig. 2; deepspeed/runtime/zero/stage_1_and_2.py and
 * stage3.py): n elements of this GPU's partition.  Seconds, in order:
 *  - grads down over the GPU's PCIe link: stages 1-2 upcast each
 *    gradient on the GPU and copy fp32 (async_inplace_copy_grad_to_
 *    fp32_buffer_from_gpu: src.float() then copy_), 4 B; stage 3 copies
 *    the partition in the parameter dtype (grad_partitions_flat_buffer)
 *    and the CPU upcasts it, 2 B;
 *  - the CPU step: DeepSpeedCPUAdam is AVX-vectorised and memory-bound
 *    (an Adam update is ~10 flops per element, a node's cores do ~1e13
 *    fp32 flop/s: ~1 ps per element against ~50 ps of DRAM traffic), so
 *    it is priced by the host DRAM bytes every GPU of the node (their
 *    processes share the sockets) moves: the update reads the fp32
 *    master and gradient and writes the master (12 B) and reads and
 *    writes its states (fp32 exp_avg and exp_avg_sq: 2 x 8 B; an 8-bit
 *    AdamW's 2 x ~2 B); the gradient arriving (4 B at stages 1-2; stage 3: 2 B and
 *    its upcast, 2 + 4 B); the 16-bit copy of the master (read 4, write
 *    2) and its read by the DMA up (2 B);
 *  - params up: that 16-bit partition, 2 B over PCIe (stage 3 with
 *    offloaded parameters: it stays on the host; the layers fetch it in
 *    kind_colls).
 * Without the delay the three are in series after the backward (the
 * next forward needs the new parameters); the step's assembly overlaps
 * them with the next step under delayed_update. */
static double offload_step(const ctx *x, double n)
{
	int z3 = x->y.zero == 3, up = !x->c->mem.offload_params;
	double pcie = x->e.t.nic_path_bw > 0 ? x->e.t.nic_path_bw : PCIE_BW_MIN;
	double host = x->e.t.host_mem_bw > 0 ? x->e.t.host_mem_bw : HOST_BW_MIN;
	double ranks = x->y.gpus < x->e.t.gpus_per_node ? x->y.gpus :
		x->e.t.gpus_per_node;
	double down = z3 ? 2.0 : 4.0;
	double hb = 12.0 + 2.0 * mem_offload_state_bytes(&x->c->mem.optim) +
		(z3 ? 2.0 + 6.0 : 4.0) + 6.0 + (up ? 2.0 : 0.0);

	if (ranks < 1)
		ranks = 1;
	return n * (down + (up ? 2.0 : 0.0)) / pcie + n * ranks * hb / host;
}

/* What each stage reduces, gathers and steps once per step under c's
 * ZeRO stage, from its weights (base: either TP overlap's, the weights
 * are the same). */
static int phase_post(phase *ph, const scost *base)
{
	ctx *x = &ph->x;
	const train_cfg *c = x->c;
	struct zslot *zs = &ph->z[x->y.zero];
	double rb = x->rb;
	/* Local states: sharded over dp x cp (experts over the expert-
	 * data-parallel group) from ZeRO 1 on. */
	int sh = x->y.zero >= 1 || ph->sb.master_shard0, j;
	int gather = x->y.zero >= 1 && !(x->y.zero == 3 ||
					 (x->y.zero == 2 && c->fsdp));

	if (zs->post_ok)
		return GP_OK;
	for (j = 0; j < ph->nrec; j++) {
		double lp = base[j].params - base[j].eparams;
		double le = base[j].eparams, opt;

		if (!ph->opt_ok[sh]) {
			opt = (sh ? lp / x->y.shard + le / x->y.eshard :
			       lp + le) * ph->opt_bytes;
			if (x->k.lin == GP_FP8)
				/* The fp8 weight casts, once per step
				 * (Transformer Engine caches them over
				 * micro-batches). */
				opt += (lp + le) * 4.0;
			ph->opt[sh][j] = mem_time(x, opt);
		}
		if (gather && !ph->ag_ok)
			ph->ag[j] = coll(x, GP_ALL_GATHER, lp * 2.0,
					 &x->g[GP_GRP_DPCP]) +
				coll(x, GP_ALL_GATHER, le * 2.0,
				     &x->g[GP_GRP_EDP]);
		/* Gradient reduction once per step (ZeRO 0/1, and ZeRO 3
		 * with whole gradients; otherwise ZeRO 2/3 reduce per
		 * micro-batch in the stage) and, with a distributed
		 * optimizer, the parameter all-gather. */
		zs->dp[j] = 0;
		if (x->y.zero <= 1 || c->mem.grads_whole) {
			gp_coll op = x->y.zero == 0 ? GP_ALL_REDUCE :
				GP_REDUCE_SCATTER;

			zs->dp[j] = coll(x, op, lp * rb, &x->g[GP_GRP_DPCP]) +
				coll(x, op, le * rb, &x->g[GP_GRP_EDP]);
		}
		zs->zg[j] = gather ? ph->ag[j] : 0.0;
		/* All but the last bucket can hide under the backward. */
		zs->bucket[j] = DDP_BUCKET / dmax(lp + le, 1.0);
		if (zs->bucket[j] > 1.0)
			zs->bucket[j] = 1.0;
		opt = ph->opt[sh][j];
		if (c->mem.offload_optimizer || c->mem.offload_params)
			opt = offload_step(x, lp / x->y.shard +
					   le / x->y.eshard);
		zs->opt[j] = opt;
	}
	if (x->e.bad)
		return GP_EINVAL;
	ph->opt_ok[sh] = 1;
	ph->ag_ok |= gather;
	zs->post_ok = 1;
	return GP_OK;
}

/* Model and hardware FLOPs per step.  Model FLOPs per token: the forward
 * (2 per active matmul weight, logits included, plus attention over ctx
 * keys) times 3 (backward twice the forward, Kaplan et al. 2020 sec.
 * 2.1); attention over the whole sequence as in Megatron's and PaLM's
 * formulas (Narayanan et al. 2021 eq. 3; Chowdhery et al. 2022 app. B),
 * or half of it when causal_flops.  A frozen base (LoRA) runs forward
 * and input gradients only (2x) plus the adapters' 6 FLOP per
 * parameter. */
static int phase_flops(phase *ph, const gp_model *m, const train_cfg *c,
		       train_cache *cache, gp_error *err)
{
	const ctx *x = &ph->x;
	double fpt, ctx_len, mb = x->y.micro_batch;

	if (ph->flops_ok)
		return GP_OK;
	ph->tokens_per_step = ph->per_step * x->y.dp * mb * c->mem.seq;
	ctx_len = c->causal_flops ? c->mem.seq / 2.0 : c->mem.seq;
	if (cache && cache->fpt_ctx == ctx_len) {
		fpt = cache->fpt;
	} else {
		fpt = model_fwd_flops_per_token(m, ctx_len);
		if (cache) {
			cache->fpt_ctx = ctx_len;
			cache->fpt = fpt;
		}
	}
	if (fpt < 0)
		return gp_fail(err, "train: cannot count the model's FLOPs");
	{
		double attn = fpt - 2.0 * x->e.p.matmul_active;
		double layer_fwd = fpt - 2.0 * (double)m->vocab * m->hidden;
		double mult = c->forward_only ? 1.0 : x->k.frozen ? 2.0 : 3.0;
		double rec = 0, vis = 0;

		if (c->forward_only)
			;
		else if (c->mem.recompute == GP_RECOMPUTE_FULL)
			rec = layer_fwd * (c->mem.recompute_layers > 0 ?
				fmin(1.0, c->mem.recompute_layers * x->y.pp /
				     (double)m->layers) : 1.0);
		else if (c->mem.recompute == GP_RECOMPUTE_SELECTIVE)
			rec = attn;
		/* The tower: 3x its forward when it trains; a frozen
		 * tower's projector 2x (forward and weight gradient), 1x
		 * under LoRA; per token of the sequence its images are
		 * part of. */
		if (c->mem.images > 0 && m->vision.layers > 0 &&
		    model_vision_flops_per_image(m) > 0) {
			double tok = model_vision_tokens(m);
			double pj = 2.0 * m->vision.projector_params * tok;
			double tw = model_vision_flops_per_image(m) - pj;
			int tt = !c->mem.vision_frozen && !x->k.frozen;

			vis = (tw * (c->forward_only ? 1.0 : tt ? 3.0 : 1.0) +
			       pj * (c->forward_only ? 1.0 : tt ? 3.0 :
				     x->k.frozen ? 1.0 : 2.0)) *
				c->mem.images / c->mem.seq;
		}
		ph->model_flops = ph->tokens_per_step * (mult * fpt + vis +
			(x->k.frozen ? (c->forward_only ? 2.0 : 6.0) *
			 mem_lora_params(m, c->mem.lora_rank,
					 c->mem.lora_targets) : 0.0));
		ph->hw_flops = ph->model_flops + ph->tokens_per_step * rec;
	}
	ph->flops_ok = 1;
	return GP_OK;
}

/* train_bound's gate: keep the bound, price nothing more. */
static int record_bound(void *ud, double lb)
{
	*(double *)ud = lb;
	return 0;
}

int train_bound(const gp_model *m, const roof_device *d, const gp_topo *t,
		const train_cfg *c, train_cache *cache, double *step_lb,
		gp_error *err)
{
	if (!step_lb || !cache)
		return gp_fail(err, "train_bound: missing argument");
	return train_step_gated(m, d, t, c, cache, record_bound, step_lb,
				&cache->scratch, err);
}

int train_step_cached(const gp_model *m, const roof_device *d,
		      const gp_topo *t, const train_cfg *c, train_cache *cache,
		      train_result *out, gp_error *err)
{
	return train_step_gated(m, d, t, c, cache, NULL, NULL, out, err);
}

/* A phase's layout priced under c (the ZeRO stage and the overlaps are
 * c's own). */
static int step_of(phase *ph, const gp_model *m, const roof_device *d,
		   const train_cfg *c, train_cache *cache,
		   int (*gate)(void *ud, double step_lb), void *ud,
		   int brief, train_result *out, gp_error *err)
{
	ctx *x = &ph->x;
	const scost *base = NULL;
	const double (*blk)[TRAIN_ZB_N] = NULL;
	struct zslot *zs;
	scost s;
	double per_step = ph->per_step, tmax = 0, tsum = 0, v, post_dp = 0;
	double post_zero = 0, post_opt = 0, post_dp_hid = 0, rb = x->rb;
	double post_zero_hid = 0;
	int j, k, G = x->e.t.gpus_per_node, post, jw = -1;
	double sg;

	x->c = c;
	x->e.err = err;
	x->e.bad = 0;
	x->y.zero = c->mem.lay.zero;
	zs = &ph->z[x->y.zero];
	if (brief) {
		/* The fields a path below may leave, set here; the rest are
		 * all written (the memsets cost more than the step). */
		out->step = out->bubble_frac = out->tokens_per_s_gpu = 0;
		out->hw_tflops_gpu = out->hfu = 0;
		out->stage = out->stage_layers = 0;
		out->vision_time = out->vision_patches = 0;
		out->train_time = out->cost = 0;
		out->mem.total = 0;
		out->mem.fits = out->fits = out->bounded = out->nops = 0;
	} else {
		/* Everything but the memory and the operators (copied
		 * below). */
		memset(out, 0, offsetof(train_result, mem));
		memset((char *)out + offsetof(train_result, fits), 0,
		       offsetof(train_result, ops) -
		       offsetof(train_result, fits));
	}
	if (!brief)
		memcpy(out->groups, ph->groups, sizeof out->groups);
	out->warn = ph->warn;
	/* ZeRO over one rank shards nothing -- unless it carries the
	 * offload (DeepSpeed offloads through its ZeRO optimizer). */
	if (x->y.zero > 0 && x->y.shard == 1 && !c->mem.offload_optimizer &&
	    !c->mem.offload_params)
		out->warn |= TRAIN_WARN_ZERO_DP1;
	/* The lower bound (see train_bound): per_step x the time of the
	 * stage with the most layers.  The step is per_step x the slowest
	 * stage's micro-batch time plus the bubble, the reductions and the
	 * optimizer, none negative: this stage's own time, per_step times,
	 * is below it.  The gate sees it before memory and the schedule
	 * are priced. */
	if (gate) {
		if (phase_base(ph, cache, &base) || phase_blocks(ph, &blk))
			return GP_EINVAL;
		stage_with(&base[ph->kb], blk[ph->kb], &s);
		if (!gate(ud, per_step * s.t)) {
			memset(&out->mem, 0, sizeof out->mem);
			memset(out->ops, 0, sizeof out->ops);
			out->bounded = 1;
			return GP_OK;
		}
	}
	if (phase_mem(ph, m, c, cache, brief, &out->mem, err))
		return GP_EINVAL;
	out->fits = out->mem.fits;
	if (!out->fits && c->skip_unfit) {
		memset(out->ops, 0, sizeof out->ops);
		return GP_OK;
	}
	/* Kept already, as they mostly are: no call. */
	if (!base && ph->layers_ok && ph->base_ok[c->tp_overlap != 0])
		base = ph->base[c->tp_overlap != 0];
	if (!blk && (x->y.zero < 2 || !gathers(x) || x->k.frozen))
		blk = no_blocks;
	else if (!blk && zs->blk_ok[block_set(c)])
		blk = (const double (*)[TRAIN_ZB_N])zs->blk[block_set(c)];
	if ((!base && phase_base(ph, cache, &base)) ||
	    (!blk && phase_blocks(ph, &blk)))
		return GP_EINVAL;
	post = !(x->k.frozen || c->forward_only);
	if (post && phase_post(ph, base))
		return GP_EINVAL;
	if (!brief) {
		out->nops = ph->lm->nops;
		memcpy(out->ops, ph->lm->ops, sizeof out->ops);
	}
	for (j = 0; j < ph->nrec; j++) {
		const stage_rec *r = &ph->rec[j];
		double st = stage_total(&base[j], blk[j]);

		if (r->k == 0) {
			out->vision_time = per_step * base[j].vision;
			out->vision_patches = base[j].vision_patches;
		}
		tsum += st;
		for (k = 0; k < r->repeat; k++)
			tsum += st;
		if (st > tmax) {
			tmax = st;
			jw = j;
			out->stage = r->k;
			out->stage_layers = r->nl;
		}
	}
	/* LoRA: only the adapters reduce and step, a few MB; their cost is
	 * below the model's resolution.  A forward pass reduces and steps
	 * nothing. */
	if (post) {
		int o = c->overlap_grad_reduce != 0;

		/* Overlapped with the last micro-batch's backward, all but
		 * the last bucket (nothing is left to hide it); unoverlapped,
		 * all of it.  The parameter all-gather likewise under the
		 * next step's first forward.  Of each the largest stage's. */
		if (!zs->pd_ok[o]) {
			zs->post_dp[o] = zs->post_dp_hid[o] = 0;
			for (j = 0; j < ph->nrec; j++) {
				double hdp = 0, e = dmax(zs->dp[j] *
					zs->bucket[j], overlap(zs->dp[j],
					base[j].bwd, o, &hdp));

				if (e > zs->post_dp[o]) {
					zs->post_dp[o] = e;
					zs->post_dp_hid[o] = hdp;
				}
			}
			zs->pd_ok[o] = 1;
		}
		if (!zs->pz_ok) {
			zs->post_zero = zs->post_zero_hid = zs->post_opt = 0;
			for (j = 0; j < ph->nrec; j++) {
				double hzg = 0, e = dmax(zs->zg[j] *
					zs->bucket[j], overlap(zs->zg[j],
					base[j].fwd, c->overlap_param_gather,
					&hzg));

				if (e > zs->post_zero) {
					zs->post_zero = e;
					zs->post_zero_hid = hzg;
				}
				if (zs->opt[j] > zs->post_opt)
					zs->post_opt = zs->opt[j];
			}
			zs->pz_ok = 1;
		}
		post_dp = zs->post_dp[o];
		post_dp_hid = zs->post_dp_hid[o];
		post_zero = zs->post_zero;
		post_zero_hid = zs->post_zero_hid;
		post_opt = zs->post_opt;
	}
	/* Tied embeddings across the pipeline: the first and last stage
	 * all-reduce the embedding gradient (Megatron's embedding group). */
	if (x->y.pp > 1 && x->e.p.lm_head == 0 && !x->k.frozen &&
	    !c->forward_only) {
		gp_group eg;

		eg.ranks = 2;
		eg.per_node = ph->groups[GP_GRP_PP].per_node > 1 ? 2 : 1;
		eg.sharing = G / eg.per_node;
		if (eg.sharing < 1)
			eg.sharing = 1;
		post_dp += coll(x, GP_ALL_REDUCE,
				x->e.p.embedding / x->y.tp * rb, &eg);
		if (x->e.bad)
			return GP_EINVAL;
	}

	/* The schedule. */
	v = x->y.schedule == GP_SCHED_INTERLEAVED ? x->y.vpp : 1.0;
	out->microbatches = per_step;
	out->stage_time = tmax;
	/* The step: the slowest stage's parts per_step times (none when
	 * every stage is free) -- its base's, its ZeRO terms -- plus the
	 * bubble, the reductions and the optimizer, summed in the parts'
	 * order (its first six terms as the slowest stage's base added
	 * them).  A brief step writes no breakdown. */
	{
		double pz = 0, pd = 0, hz = 0, hd = 0, bubble;

		if (jw >= 0) {
			pz = per_step * blk[jw][TRAIN_ZB_ZERO];
			pd = per_step * blk[jw][TRAIN_ZB_DP];
			hz = per_step * blk[jw][TRAIN_ZB_ZERO_HID];
			hd = per_step * blk[jw][TRAIN_ZB_DP_HID];
		}
		bubble = x->y.pp == 1 ? 0.0 : v == 1.0 ? tsum - tmax :
			(tsum - tmax) / v;
		pd += post_dp;
		pz += post_zero;
		if (!brief) {
			if (jw >= 0) {
				const scost *w = &base[jw];

				for (k = 0; k < TRAIN_NPARTS; k++) {
					out->part[k] = per_step * w->part[k];
					out->hidden[k] = per_step *
						w->hidden[k];
				}
			}
			out->part[TRAIN_ZERO] = pz;
			out->part[TRAIN_DP] = pd;
			out->hidden[TRAIN_ZERO] = hz + post_zero_hid;
			out->hidden[TRAIN_DP] = hd + post_dp_hid;
			out->part[TRAIN_BUBBLE] = bubble;
			out->part[TRAIN_OPTIMIZER] = post_opt;
		}
		out->step = jw >= 0 ? base[jw].step05 : 0.0;
		out->step += pd;
		out->step += pz;
		out->step += bubble;
		if (c->delayed_update) {
			/* ZeRO-Offload's one-step delayed parameter update
			 * (Ren et al. 2021 sec. 5.2): step i's gradients go
			 * down, the CPU steps and the parameters come up
			 * while the GPU runs step i+1 on the parameters of
			 * step i-1; only what outlasts the GPU's step
			 * shows. */
			double e = post_opt > out->step ?
				post_opt - out->step : 0.0;

			if (!brief) {
				out->part[TRAIN_OPTIMIZER] = e;
				out->hidden[TRAIN_OPTIMIZER] = post_opt - e;
			}
			out->step += e;
		} else {
			out->step += post_opt;
		}
	}
	if (!brief)
		out->bubble_frac = out->part[TRAIN_BUBBLE] / out->step;

	/* Throughput and FLOPs. */
	if (phase_flops(ph, m, c, cache, err))
		return GP_EINVAL;
	out->tokens_per_step = ph->tokens_per_step;
	out->tokens_per_s = out->tokens_per_step / out->step;
	out->model_flops = ph->model_flops;
	out->hw_flops = ph->hw_flops;
	out->peak = d->peak[c->compute];
	/* One division each (a chain of them was the step's longest). */
	sg = out->step * x->y.gpus;
	out->model_tflops_gpu = out->model_flops / (sg * 1e12);
	out->mfu = out->model_flops / (sg * out->peak);
	if (!brief) {
		out->tokens_per_s_gpu = out->tokens_per_s / x->y.gpus;
		out->hw_tflops_gpu = out->hw_flops / (sg * 1e12);
		out->hfu = out->hw_flops / (sg * out->peak);
	}
	if (c->tokens > 0) {
		out->train_time = c->tokens * out->step / out->tokens_per_step;
		if (c->price > 0)
			out->cost = c->tokens * sg * c->price /
				(3600.0 * out->tokens_per_step);
	}
	return GP_OK;
}

int train_step_gated(const gp_model *m, const roof_device *d,
		     const gp_topo *t, const train_cfg *c, train_cache *cache,
		     int (*gate)(void *ud, double step_lb), void *ud,
		     train_result *out, gp_error *err)
{
	phase local, *ph = NULL;

	if (!out)
		return gp_fail(err, "train: NULL result");
	if (!c)
		return gp_fail(err, "train: missing argument");
	if (phase_get(m, d, t, c, cache, 0, 0, &local, &ph, err) ||
	    step_of(ph, m, d, c, cache, gate, ud, 0, out, err)) {
		/* What failed part way is not kept. */
		if (cache)
			cache->phase.valid = 0;
		return GP_EINVAL;
	}
	return GP_OK;
}

int train_step_next(const gp_model *m, const roof_device *d,
		    const gp_topo *t, const train_cfg *c, train_cache *cache,
		    unsigned how, int (*gate)(void *ud, double step_lb),
		    void *ud, train_result *out, gp_error *err)
{
	phase local, *ph = cache ? &cache->phase : NULL;

	if (!ph || !c || !out || !cache->valid)
		return train_step_gated(m, d, t, c, cache, gate, ud, out,
					err);
	if (!((how & TRAIN_NEXT_REUSE) && ph->valid &&
	      c->mem.lay.zero >= 0 && c->mem.lay.zero <= 3) &&
	    phase_get(m, d, t, c, cache, 1, !!(how & TRAIN_NEXT_FRESH),
		      &local, &ph, err)) {
		ph->valid = 0;
		return GP_EINVAL;
	}
	if (step_of(ph, m, d, c, cache, gate, ud, !!(how & TRAIN_NEXT_BRIEF),
		    out, err)) {
		ph->valid = 0;
		return GP_EINVAL;
	}
	return GP_OK;
}
