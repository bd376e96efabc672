/*
 * serve_step.c - the time of one MoE serving step on the most loaded GPU
 * (see serve.h): the layer operators on the roofline, the grouped expert
 * GEMMs at the tokens the hottest GPU receives, the TP collectives and
 * the dispatch / combine all-to-all on the placed EP group, and the
 * two-batch overlap.  Sources as in serve.c.
 */
#include "serve.h"
#include "serve_int.h"

#include <math.h>
#include <string.h>

/* Activations in flight are bf16. */
#define ACT 2.0

/* Fixed cost of one DeepEP low-latency dispatch or combine call: kernel
 * launch, the RDMA/NVLink round trip of the count and flag exchange and
 * the receivers' polling.  Derived from DeepEP's legacy table (H800,
 * 128 tokens per GPU, hidden 7168, top-8, fp8 dispatch, bf16 combine):
 * at EP8 every byte crosses NVLink (160 GB/s per direction on H800 at
 * the catalog's 0.80 of 200); dispatch 6.62 MB remote in 77 us and
 * combine 12.85 MB in 114 us leave 35.6 and 33.7 us beside the bytes at
 * that rate: 35 us.  The same 35 us + remote bytes at the NDR NIC's 47
 * GB/s reproduces the table's EP16..EP256 rows within 3% for dispatch
 * and 11% for combine (tests/c/t_serve.c), so the low-latency kernels
 * run at the links' achievable rates and no efficiency factor is added.
 * The normal kernels' latency was not published; the same floor is
 * used (their transfers are megabytes, where it is small). */
#define DEEPEP_LAT 35e-6

/* Attention in decode with MLA runs in the latent space (weights
 * absorbed, FlashMLA / FlashInfer MLA / TensorRT-LLM): q.k over the
 * kv_lora_rank + rope width and p.v over kv_lora_rank for every head,
 * reading the shared latent once; prefill runs plain multi-head attention
 * over the up-projected keys and values (SGLang picks MHA for long
 * extends; DeepSeek-V2 sec. 2.1.2, appendix C on absorption).  A step is
 * "decode" for this purpose when a sequence brings at most this many
 * query tokens (1 + MTP drafts). */
#define MLA_ABSORB_MAX_Q 16.0

/* SMs DeepEP's normal (prefill) kernels hold while they run: DeepEP's
 * default Buffer.num_sms = 20 (DeepSeek-V3 sec. 3.2.2 dedicates 20 of
 * H800's 132 SMs to communication).  Overlapped with compute (two-batch
 * overlap), the GEMMs run on the rest; the low-latency kernels hold no
 * SM while their RDMA is in flight (deepseek-ai/profile-data, decoding),
 * so decode loses none. */
#define DEEPEP_HT_SMS 20.0

/* ---- time --------------------------------------------------------- */

typedef struct sx {
	const gp_model *m;
	const roof_device *d;
	const serve_cfg *c;
	const serve_layout *Ly;
	gp_topo t;
	shp s;
	gp_error *err;
	int graphs;
	gp_dtype cp, half, ap;
	serve_step *st;      /* rows go here (NULL: none) */
	double passes;       /* micro-batch passes the rows stand for */
} sx;

/* Per layer (one pass of one micro-batch). */
typedef struct blk {
	double attn;         /* s, attention part of every layer */
	double dense;        /* s, dense MLP */
	double moe;          /* s, router, shared and routed experts */
	double outer;        /* s, embed, norm, logits, sample */
	double proj;         /* s, the MTP projection (draft passes) */
	double tp_dense, tp_moe; /* s, TP collectives per layer */
	double disp, comb;   /* s, all-to-all per MoE layer */
	double dbytes, cbytes, remote;
} blk;

static int row(sx *x, const char *name, double count, double flop,
               double bytes, double mm, double n, double k, double nb,
               gp_dtype prec, double *t)
{
	roof_op op;
	roof_result r;
	infer_op_row *w;

	*t = 0.0;
	if (count <= 0.0)
		return GP_OK;
	/* Tensor-core kernels that multiply what is stored (gemv 0,
	 * dequant 0): the grouped expert GEMMs and the batched decode
	 * GEMMs of an EP deployment. */
	memset(&op, 0, sizeof op);
	op.name = name;
	op.flop = flop;
	op.bytes = bytes;
	op.m = mm;
	op.n = n;
	op.k = k;
	op.count = nb;
	op.prec = prec;
	if (roof_op_time(x->d, &op, x->graphs, &r, x->err) != GP_OK)
		return GP_EINVAL;
	*t = r.time;
	if (x->st && x->st->nops < SERVE_MAX_OPS) {
		w = &x->st->ops[x->st->nops++];
		w->name = name;
		w->count = count * x->passes;
		w->flop = flop;
		w->bytes = bytes;
		w->r = r;
		w->total = w->count * r.time;
		x->st->compute += w->total;
	}
	return GP_OK;
}

static int gemm(sx *x, const char *name, double count, double T, double n,
                double k, double wbytes, double *t)
{
	return row(x, name, count, 2.0 * T * n * k,
	           n * k * wbytes + T * (k + n) * ACT, T, n, k, 1.0, x->cp, t);
}

/* Collective on `ranks` GPUs filling nodes in order (the instance's
 * ranks are contiguous), alone on its nodes' NICs. */
static int coll(sx *x, gp_coll op, double bytes, double ranks, double *t)
{
	gp_group g;
	gp_comm_result r;

	*t = 0.0;
	if (ranks <= 1 || bytes <= 0)
		return GP_OK;
	g.ranks = (int)ranks;
	g.per_node = ranks > x->s.G ? (int)x->s.G : (int)ranks;
	g.sharing = 1;
	if (comm_group_cost(&x->t, op, bytes, &g, &r, x->err) != GP_OK)
		return GP_EINVAL;
	*t = r.time;
	return GP_OK;
}

/* Per-GPU bandwidths of the EP group: NVLink per direction, and the
 * GPU's share of its node's NICs (every GPU of a node is in the group),
 * never more than its path to them. */
static double up_bw(const sx *x)
{
	return x->t.up.bw * x->t.up.achievable;
}

static double nic_bw(const sx *x)
{
	double b;

	if (x->t.nics <= 0)
		return 0.0;
	b = x->t.nics * x->t.nic.bw * x->t.nic.achievable / x->s.G;
	if (x->t.nic_path_bw > 0 && b > x->t.nic_path_bw)
		b = x->t.nic_path_bw;
	return b;
}

/* One dispatch or combine of `bytes` per GPU (tokens x top_k x hidden x
 * element bytes; the hottest GPU receives imbalance times the mean) over
 * the EP group of N GPUs, g per node.  Uniform routing: of a GPU's
 * traffic (g - 1) / N stays on NVLink, (N - g) / N leaves the node.
 *  low-latency (decode): one message per token and expert, straight to
 *   the destination GPU (IBGDA; NVLink inside the node): DEEPEP_LAT +
 *   the slower of the two links.
 *  normal (prefill): DeepSeek-V3 sec. 3.2.2 / DeepEP's forwarding: a
 *   token crosses the network once per remote node its experts sit on
 *   (to the GPU on the same rail), then fans out over NVLink to the
 *   distinct GPUs holding its experts in that node.  Nodes touched
 *   Nn (1 - (1 - 1/Nn)^k), experts per touched node k / that, distinct
 *   GPUs there g (1 - (1 - 1/g)^(experts)); every copy but the rail
 *   GPU's crosses NVLink.
 *  NCCL: comm_group_cost's all-to-all of the hottest GPU's bytes. */
static int a2a(sx *x, double tokens, double elem, int decode, double *t,
               double *logical, double *remote)
{
	double N = x->s.N, g = fmin(x->s.N, x->s.G), k = x->s.k, h = x->s.h;
	double bytes = tokens * k * h * elem, imb = x->c->imbalance;
	double nb = nic_bw(x), ub = up_bw(x), intra, rem, nn, dn, e, dg;

	*t = 0.0;
	*logical = bytes;
	*remote = bytes * (N - g) / N;
	if (x->s.ep <= 1 || N <= 1 || bytes <= 0)
		return GP_OK;
	if (x->c->a2a == SERVE_A2A_NCCL)
		return coll(x, GP_ALL_TO_ALL, bytes * imb, N, t);
	if (decode) {
		intra = bytes * (g - 1.0) / N;
		rem = *remote;
	} else {
		nn = N / g;
		dn = nn * (1.0 - pow(1.0 - 1.0 / nn, k));
		e = k / dn;
		dg = g * (1.0 - pow(1.0 - 1.0 / g, e));
		rem = tokens * h * elem * (nn - 1.0) *
			(1.0 - pow(1.0 - 1.0 / nn, k));
		intra = tokens * h * elem * dn * dg * (g - 1.0) / g;
		*remote = rem;
	}
	if (rem > 0 && !(nb > 0))
		return gp_fail(x->err, "the EP group spans nodes but the "
		               "system has no NICs");
	*t = DEEPEP_LAT + imb * fmax(g > 1 ? intra / ub : 0.0,
	                             rem > 0 ? rem / nb : 0.0);
	return GP_OK;
}

/* One pass of the model over a micro-batch of B sequences per GPU, each
 * bringing q query tokens at a mean KV length kv. */
static int block(sx *x, double B, double q, double kv, int decode, blk *b)
{
	const gp_model *m = x->m;
	const shp *s = &x->s;
	gp_op_cfg oc;
	gp_op ops[GP_MAX_LAYER_OPS];
	double a = s->a, N = s->N, h = s->h, Bg = B * a, Tg = Bg * q;
	double Tr = B * q, Tinst = Tr * N, wb = s->wb, t, rows, vocab;
	double recv, touched, mexp, up_n, tar;
	int i, n;

	memset(b, 0, sizeof *b);
	memset(&oc, 0, sizeof oc);
	oc.seqs = Bg;
	oc.q = q;
	oc.kv_len = kv;
	oc.tp = (int)a;
	oc.ep = 1;
	oc.flash = 1;
	n = model_layer_ops(m, &oc, ops);
	for (i = 0; i < n; i++) {
		gp_op o = ops[i];
		double count, bytes;

		if (o.scope == GP_SCOPE_MOE)
			continue;      /* priced below, per GPU of the EP group */
		count = o.scope == GP_SCOPE_ALL ? s->L : s->nd;
		if (o.kind == GP_OP_ATTN && s->mla && decode &&
		    q <= MLA_ABSORB_MAX_Q) {
			double r = m->mla.kv_lora_rank, dr =
				m->mla.qk_rope_head_dim, nh = m->heads / a;

			o.flop = 2.0 * Tg * kv * nh * (2.0 * r + dr);
			o.kv = Bg * kv * (r + dr);
			o.act = Tg * nh * (2.0 * r + dr);
			o.m = q * nh;
			o.n = r;
			o.k = kv;
			o.batch = Bg;
		}
		bytes = o.act * ACT + o.kv * x->c->base.kv_bytes +
			o.weights * (o.wclass == GP_W_LINEAR ? wb : ACT);
		if (row(x, o.name, count, o.flop, bytes, o.m, o.n, o.k,
		        o.batch, o.kind == GP_OP_ATTN ? x->ap : x->cp, &t))
			return GP_EINVAL;
		if (o.scope == GP_SCOPE_ALL)
			b->attn += t;
		else
			b->dense += t;
	}
	/* TP collectives (Megatron-LM sec. 3: an all-reduce after the
	 * attention and one after the MLP): dense layers 2 all-reduces of
	 * the group's tokens when attention is TP.  MoE layers: with the
	 * experts split by EP, tokens are reduce-scattered after the
	 * attention and gathered back after the combine, one all-reduce's
	 * worth; with TP experts, 2 all-reduces (TP attention) or, under DP
	 * attention, gather + reduce-scatter of the instance's tokens
	 * around the experts (SGLang DP attention). */
	if (coll(x, GP_ALL_REDUCE, Tg * h * ACT, a, &tar))
		return GP_EINVAL;
	b->tp_dense = 2.0 * tar;
	if (s->ep > 1)
		b->tp_moe = tar;
	else if (a > 1)
		b->tp_moe = 2.0 * tar;
	else if (coll(x, GP_ALL_REDUCE, Tinst * h * ACT, N, &b->tp_moe))
		return GP_EINVAL;

	if (s->nm > 0) {
		double E = s->E, k = s->k, fx = s->fx;

		/* Router over the GPU's tokens (16-bit gate). */
		if (row(x, "moe_router", s->nm, 2.0 * Tr * E * h,
		        E * h * ACT + Tr * (h + E) * ACT, Tr, E, h, 1.0,
		        x->half, &t))
			return GP_EINVAL;
		b->moe += t;
		if (s->fs > 0) {
			up_n = (s->mats - 1.0) * s->fs;
			if (gemm(x, "shared_up", s->nm, Tg, up_n, h, wb, &t))
				return GP_EINVAL;
			b->moe += t;
			if (row(x, "shared_act", s->nm, 5.0 * Tg * s->fs,
			        2.0 * Tg * s->fs * 1.5 * ACT, 0, 0, 0, 0,
			        x->cp, &t))
				return GP_EINVAL;
			b->moe += t;
			if (gemm(x, "shared_down", s->nm, Tg, h, s->fs, wb,
			         &t))
				return GP_EINVAL;
			b->moe += t;
		}
		/* Routed experts, grouped GEMMs (DeepGEMM): the hottest
		 * GPU receives imbalance x its tokens x top_k (EP), or every
		 * token of the instance through its slice of every expert
		 * (TP experts).  Slots a token lands on are uniform: a slot
		 * is missed by all Tinst k picks with probability
		 * (1 - 1/slots)^(Tinst k). */
		if (s->ep > 1) {
			recv = Tr * k * x->c->imbalance;
			touched = s->S * (1.0 - pow(1.0 - 1.0 / s->slots,
			                            Tinst * k));
		} else {
			recv = Tinst * k;
			touched = E * (1.0 - pow(1.0 - 1.0 / E, Tinst * k));
		}
		if (touched < 1.0)
			touched = 1.0;
		mexp = recv / touched;
		up_n = (s->mats - 1.0) * fx;
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

			if (row(x, "experts_permute", s->nm, 0.0, pb, 0, 0,
			        0, 0, x->cp, &t))
				return GP_EINVAL;
			b->moe += t;
		}
		if (row(x, "experts_up", s->nm, 2.0 * recv * h * up_n,
		        touched * h * up_n * wb + recv * (h + up_n) * ACT,
		        mexp, up_n, h, touched, x->cp, &t))
			return GP_EINVAL;
		b->moe += t;
		if (row(x, "experts_act", s->nm, 5.0 * recv * fx,
		        2.0 * recv * fx * 1.5 * ACT, 0, 0, 0, 0, x->cp, &t))
			return GP_EINVAL;
		b->moe += t;
		if (row(x, "experts_down", s->nm, 2.0 * recv * fx * h,
		        touched * fx * h * wb + recv * (fx + h) * ACT, mexp,
		        h, fx, touched, x->cp, &t))
			return GP_EINVAL;
		b->moe += t;
		if (a2a(x, Tr, x->c->dispatch_bytes, decode, &b->disp,
		        &b->dbytes, &b->remote))
			return GP_EINVAL;
		{
			double lg, rm;

			if (a2a(x, Tr, x->c->combine_bytes, decode, &b->comb,
			        &lg, &rm))
				return GP_EINVAL;
			b->cbytes = lg;
		}
	}
	/* Once per pass: embedding gather, final norm, logits of the rows
	 * that sample (every verified token in decode, the last of each
	 * prompt in prefill) over the vocabulary slice, sampling. */
	rows = decode ? Tg : Bg;
	vocab = m->vocab / a;
	{
		double t1, t2, t3, t4;

		if (row(x, "embed", 1.0, 0.0, 2.0 * Tg * h * ACT, 0, 0, 0, 0,
		        x->cp, &t1) ||
		    row(x, "final_norm", 1.0, 4.0 * rows * h,
		        2.0 * rows * h * ACT, 0, 0, 0, 0, x->cp, &t2) ||
		    gemm(x, "logits", 1.0, rows, vocab, h, s->eb, &t3) ||
		    row(x, "sample", 1.0, 5.0 * rows * vocab,
		        rows * vocab * 4.0, 0, 0, 0, 0, x->cp, &t4))
			return GP_EINVAL;
		b->outer = t1 + t2 + t3 + t4;
	}
	if (x->c->mtp > 0 && decode) {
		/* The MTP module's projection of [h; embedding] -> h. */
		sx y = *x;

		y.st = NULL;
		if (gemm(&y, "mtp_proj", 1.0, Tg, h, 2.0 * h, wb, &b->proj))
			return GP_EINVAL;
	}
	return GP_OK;
}

/* A MoE layer's time for one micro-batch pass: compute, TP comm and the
 * two all-to-alls, without overlap. */
static double moe_parts(const blk *b, double *comm)
{
	*comm = b->disp + b->comb;
	return b->attn + b->moe + b->tp_moe;
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
	x->half = d->peak[GP_BF16] > 0 && d->gemm_frac[GP_BF16] > 0 ?
		GP_BF16 : GP_FP16;
	/* Attention at the cache's precision: fp8 with an 8-bit cache on
	 * chips with fp8 (FlashMLA FP8, FA3 FP8), else 16-bit (as
	 * infer.c). */
	x->ap = c->base.kv_bytes <= 1.0 && d->peak[GP_FP8] > 0 &&
		d->gemm_frac[GP_FP8] > 0 ? GP_FP8 : x->half;
	return GP_OK;
}

/* Layer-by-layer step of B sequences per GPU (q tokens each) with the
 * overlap rule: two-batch overlap (when the layout has it, EP > 1 and
 * at least two sequences) runs every MoE layer as two micro-batches
 * whose all-to-all hides behind the other's compute: max(2 compute,
 * 2 comm) per layer (DeepSeek day 6, SGLang TBO); otherwise compute +
 * comm.  Dense layers run both halves one after the other. */
static int pass(sx *x, double B, double q, double kv, int decode,
                int rows, serve_step *st, double *layer_moe)
{
	blk b;
	double comp, comm, mb = 1.0, moe_l, exp_l, loss;
	int tbo = x->Ly->tbo && x->s.ep > 1 && B >= 2.0;

	if (tbo)
		mb = 2.0;
	x->st = rows ? st : NULL;
	x->passes = mb;
	if (block(x, B / mb, q, kv, decode, &b))
		return GP_EINVAL;
	comp = moe_parts(&b, &comm);
	loss = 0.0;
	if (tbo) {
		/* The normal kernels' SMs slow the compute they overlap. */
		if (!decode && x->c->a2a == SERVE_A2A_DEEPEP &&
		    x->d->sms > DEEPEP_HT_SMS)
			loss = fmin(2.0 * comp, 2.0 * comm) * DEEPEP_HT_SMS /
				(x->d->sms - DEEPEP_HT_SMS);
		moe_l = fmax(2.0 * comp + loss, 2.0 * comm);
		exp_l = fmax(0.0, 2.0 * comm - 2.0 * comp - loss);
	} else {
		moe_l = comp + comm;
		exp_l = comm;
	}
	*layer_moe = moe_l;
	if (!rows)
		return GP_OK;
	st->tp_comm = mb * (x->s.nd * b.tp_dense + x->s.nm * b.tp_moe);
	st->a2a = mb * x->s.nm * comm;
	st->a2a_exposed = x->s.nm * exp_l;
	st->dispatch = mb * b.disp;
	st->combine = mb * b.comb;
	st->dispatch_bytes = mb * b.dbytes;
	st->combine_bytes = mb * b.cbytes;
	st->remote_bytes = mb * b.remote;
	st->sm_loss = x->s.nm * loss;
	st->time = st->compute + st->tp_comm + st->a2a_exposed + st->sm_loss;
	if (decode && x->c->mtp > 0) {
		/* Draft passes, one token per sequence each: mtp_layers MoE
		 * layers and the projection per draft token, then its logits
		 * (the shared head), with the same overlap rule. */
		sx y = *x;
		blk bd;
		double cd, md;

		y.st = NULL;
		if (block(&y, B / mb, 1.0, kv, decode, &bd))
			return GP_EINVAL;
		cd = moe_parts(&bd, &md);
		st->draft = x->c->mtp * (x->c->mtp_layers *
		                         (tbo ? fmax(2.0 * cd, 2.0 * md) :
		                          cd + md) +
		                         mb * (bd.proj + bd.outer));
	} else if (x->c->mtp > 0) {
		/* Prefill runs the MTP layers too (their KV). */
		st->draft = x->c->mtp_layers * moe_l;
	}
	st->time += st->draft;
	return GP_OK;
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
		if (!gp_finite(batch) || batch < 1 || batch > GP_AMOUNT_MAX)
			return gp_fail(err, "serve_step_time: batch must be "
			               ">= 1 (got %g)", batch);
		q = 1.0 + c->mtp;
		/* Mean KV length over a request's life. */
		kv = c->base.input + c->base.output / 2.0;
		out->batch = batch;
		out->tokens = batch * q;
		return pass(&x, batch, q, kv, 1, 1, out, &layer);
	}
	/* Prefill: a chunk of prefill_tokens per attention group (per GPU
	 * with DP attention, per instance with TP): whole prompts (or one
	 * chunk of a longer one), causal, mean KV (q + 1) / 2; each GPU
	 * routes prefill_tokens / a of them. */
	Tg = c->prefill_tokens;
	q = fmin(c->base.input, Tg);
	B = Tg / q / x.s.a;
	kv = (q + 1.0) / 2.0;
	out->batch = B;
	out->tokens = Tg / x.s.a;
	return pass(&x, B, q, kv, 0, 1, out, &layer);
}

double serve_accept_length(int mtp, double a)
{
	if (mtp <= 0)
		return 1.0;
	if (a >= 1.0)
		return mtp + 1.0;
	if (a <= 0.0)
		return 1.0;
	/* 1 + a + a^2 + ... + a^mtp: draft i is kept only when every draft
	 * before it is (Leviathan et al. 2023, eq. 1, i.i.d. acceptance). */
	return (1.0 - pow(a, mtp + 1.0)) / (1.0 - a);
}

