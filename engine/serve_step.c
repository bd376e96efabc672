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

/* Wire rate of DeepEP's normal kernels as a share of what the NIC reaches
 * in nccl-tests (its catalog achievable fraction).  DeepEP's legacy table
 * (docs/legacy.md: H800, one CX7 400 Gb/s NIC per GPU, 4096 tokens,
 * top-8) prints an RDMA "bottleneck bandwidth" of 58 GB/s at EP32 and
 * 51 GB/s at EP64 whose bytes (tests/legacy/test_internode.py:
 * num_rdma_token_sent) count a token once per node it reaches, its own
 * node included, though that copy never crosses the NIC.  Uniform top-8
 * over 4 nodes touches 4 (1 - (3/4)^8) = 3.60 nodes, the own one with
 * probability 0.90: 2.70 remote, so 58 x 2.70 / 3.60 = 43.5 GB/s on the
 * wire; over 8 nodes limited to the top 4 (the test's num_topk_groups),
 * 3.60 nodes, the own one with probability 0.5 x 0.90: 51 x 3.15 / 3.60 =
 * 44.6 GB/s.  44 GB/s of the 47 (0.94 x 50) the same NIC reaches in
 * nccl-tests: 0.93.  The chunked, flow-controlled forwarding (a chunk
 * waits for the receiver's head pointer) leaves the NIC idle between
 * chunks.  The low-latency kernels are fitted separately (DEEPEP_LAT). */
#define DEEPEP_HT_RDMA 0.93

/* Pipeline fill of a fused attention kernel's loop over the keys, and the
 * query tile of its causal diagonal: FlashAttention-2/3 run 128 query rows
 * per CTA (Dao 2023 sec. 3.1; Shah et al. 2024, FA3 tile sizes) and visit
 * every key tile up to the diagonal, computing the diagonal tile whole.
 * A causal prompt of q tokens has n = ceil(q / 128) query tiles, the i-th
 * visiting i key tiles: useful / computed = n / (n + 1).  The loop over
 * the keys pays the same fill as a GEMM's K loop (roof_gemm_eff's
 * ROOF_K_FILL).  The catalog's attention fractions were measured causal
 * at 4k-8k tokens (FA3 paper Figs. 5-6); both terms are taken relative to
 * 8k tokens, so a shorter prompt runs slower than the measurement and a
 * longer one is not credited beyond it. */
#define ATTN_TILE 128.0
#define ATTN_REF_Q 8192.0

/* Bytes per element written by an activation quantisation pass: the
 * 8-bit value and one fp32 scale per 128 elements (DeepSeek-V3 sec.
 * 3.3.2, 1 x 128 tiles for activations; DeepGEMM's LHS scales). */
#define QUANT_GROUP 128.0

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
	double m_tile;       /* M tile of the sub-16-bit weight GEMMs
	                        (serve_cfg.m_tile; roofline.h) */
} sx;

/* Per layer (one pass of one micro-batch), split as the stages of the
 * two-batch overlap see it (pass()). */
typedef struct blk {
	double prep;         /* s, attention up to its core: norm, the q/kv
	                        projections, rope (every layer) */
	double core;         /* s, attention core, output projection, MLP
	                        norm (every layer) */
	double dense;        /* s, dense MLP */
	double gate;         /* s, router, top-k (and the prefill dispatch's
	                        fp8 cast) */
	double shared;       /* s, shared experts */
	double routed;       /* s, routed experts and their permutation */
	double outer;        /* s, embed, norm, logits, sample */
	double proj;         /* s, the MTP projection (draft passes) */
	double tp_dense, tp_moe; /* s, TP collectives per layer */
	double disp, comb;   /* s, all-to-all per MoE layer */
	double dbytes, cbytes, remote;
} blk;

/* Add an operator's row (count per micro-batch pass) to the step: its
 * time always, the row while there is room. */
static void record(sx *x, const char *name, double count, double flop,
                   double bytes, const roof_result *r)
{
	infer_op_row *w;

	if (!x->st)
		return;
	x->st->compute += count * x->passes * r->time;
	if (x->st->nops >= SERVE_MAX_OPS)
		return;
	w = &x->st->ops[x->st->nops++];
	w->name = name;
	w->count = count * x->passes;
	w->flop = flop;
	w->bytes = bytes;
	w->r = *r;
	w->total = w->count * r->time;
}

static int row_mt(sx *x, const char *name, double count, double flop,
                  double bytes, double mm, double n, double k, double nb,
                  gp_dtype prec, double mt, double *t)
{
	roof_op op;
	roof_result r;

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
	op.m_tile = mt;
	if (roof_op_time(x->d, &op, x->graphs, &r, x->err) != GP_OK)
		return GP_EINVAL;
	*t = r.time;
	record(x, name, count, flop, bytes, &r);
	return GP_OK;
}

static int row(sx *x, const char *name, double count, double flop,
               double bytes, double mm, double n, double k, double nb,
               gp_dtype prec, double *t)
{
	return row_mt(x, name, count, flop, bytes, mm, n, k, nb, prec, 0.0,
	              t);
}

/* The M tile of a GEMM over weights of wbytes each: the deployment's
 * (DeepGEMM's) for the block-scaled sub-16-bit linears, the library's
 * choice for 16-bit ones (cuBLAS). */
static double tile_of(const sx *x, double wbytes)
{
	return wbytes < ACT ? x->m_tile : 0.0;
}

static int gemm(sx *x, const char *name, double count, double T, double n,
                double k, double wbytes, double *t)
{
	return row_mt(x, name, count, 2.0 * T * n * k,
	              n * k * wbytes + T * (k + n) * ACT, T, n, k, 1.0, x->cp,
	              tile_of(x, wbytes), t);
}

/* nb GEMMs of T x n x k over 16-bit weights (per-head batched GEMMs). */
static int bmm16(sx *x, const char *name, double count, double nb,
                 double T, double n, double k, double *t)
{
	return row(x, name, count, 2.0 * nb * T * n * k,
	           nb * (n * k + T * (k + n)) * ACT, T, n, k, nb, x->half, t);
}

/* A pass casting `elems` bf16 activations to the GEMMs' input format
 * with per-128 scales (QUANT_GROUP) when the GEMMs compute below 16 bits:
 * DeepGEMM takes fp8 LHS with its scales and leaves the cast to the
 * caller (README: "implement or fuse them into prior kernels"), which
 * SGLang runs as per_token_group_quant_fp8 kernels of their own.  None
 * at 16 bits. */
static int quant(sx *x, const char *name, double count, double elems,
                 double *t)
{
	double qb = gp_dtype_bytes(x->cp);

	*t = 0.0;
	if (!(qb < ACT) || elems <= 0)
		return GP_OK;
	/* An amax and a scale per group, a multiply per element. */
	return row(x, name, count, 3.0 * elems,
	           elems * (ACT + qb + 4.0 / QUANT_GROUP), 0, 0, 0, 0,
	           x->cp, t);
}

/* Useful share of a causal prompt's query tiles (ATTN_TILE). */
static double causal_diag(double q)
{
	double n = ceil(q / ATTN_TILE);

	return n / (n + 1.0);
}

/* The attention core on the fused kernel: compute at the device's
 * measured attention fraction of the precision's peak (roof_device
 * attn_fwd, as train.c's attention) times the shape terms of ATTN_TILE
 * relative to the measurement's (roof_gemm_eff's tile, wave and K-fill
 * terms for output m x n over k keys, nb of them, against a causal
 * ATTN_REF_Q prompt; the causal diagonal for a prompt of causal_q
 * tokens, 0 for decode), memory at the streaming rate, the longer of
 * the two (train.c's attention: FlashMLA and FA3 pipeline the KV stream
 * under the MMAs; FlashMLA's README gives 580 TFLOPS compute-bound and
 * 3000 GB/s memory-bound on H800).  Cross-check: the per-kernel table of
 * DeepSeek's H800 decode trace (profile-data decode.json, 64 sequences
 * per micro-batch at 4K, as tabulated on zdszero.github.io
 * deepseek_profile) has 255 us for the attention kernel: 573 TFLOPS if
 * each sequence verifies 2 tokens (MTP), the rate FA3's 0.60 gives to
 * within 4%.  Without the measurement: the GEMM of its shape. */
static int attn_row(sx *x, const char *name, double count, double flop,
                    double bytes, double mm, double n, double k, double nb,
                    double causal_q, double *t)
{
	const roof_device *d = x->d;
	roof_op op;
	roof_result r;
	double eff, ref, tc;

	*t = 0.0;
	if (count <= 0.0)
		return GP_OK;
	if (!(d->attn_fwd > 0))
		return row(x, name, count, flop, bytes, mm, n, k, nb, x->ap, t);
	memset(&op, 0, sizeof op);
	op.name = name;
	op.bytes = bytes;
	op.prec = x->ap;
	if (roof_op_time(d, &op, x->graphs, &r, x->err) != GP_OK)
		return GP_EINVAL;
	ref = roof_gemm_eff(d, ATTN_REF_Q, n, (ATTN_REF_Q + 1.0) / 2.0,
	                    nb) * causal_diag(ATTN_REF_Q);
	eff = roof_gemm_eff(d, mm, n, k, nb) *
		(causal_q > 0 ? causal_diag(causal_q) : 1.0) / ref;
	if (eff > 1.0)
		eff = 1.0;
	r.compute_rate = d->peak[x->ap] * d->attn_fwd * eff;
	tc = flop > 0 ? flop / r.compute_rate : 0.0;
	r.t_compute = tc;
	r.shape_eff = eff;
	r.bound = tc >= r.t_memory ? ROOF_COMPUTE : ROOF_MEMORY;
	r.time = fmax(tc, r.t_memory) + r.t_launch;
	r.intensity = bytes > 0 ? flop / fmax(bytes, 1.0) : 0.0;
	r.ridge = roof_ridge(d, x->ap, 1);
	r.ridge_peak = roof_ridge(d, x->ap, 0);
	*t = r.time;
	record(x, name, count, flop, bytes, &r);
	return GP_OK;
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
 *   GPU's crosses NVLink.  The NICs at DEEPEP_HT_RDMA of their rate.
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
		nb *= DEEPEP_HT_RDMA;
	}
	if (rem > 0 && !(nb > 0))
		return gp_fail(x->err, "the EP group spans nodes but the "
		               "system has no NICs");
	*t = DEEPEP_LAT + imb * fmax(g > 1 ? intra / ub : 0.0,
	                             rem > 0 ? rem / nb : 0.0);
	return GP_OK;
}

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

	kvb = x->c->base.kv_bytes;
	if (gemm(x, "q_kv_a", L, absorb ? Tg : Tg / s->a,
	         (qr > 0 ? qr : 0) + r + dr, h, wb, &t))
		return GP_EINVAL;
	b->prep += t;
	if (row(x, "latent_norm", L, 4.0 * Tg * (qr + r),
	        2.0 * Tg * (qr + r) * ACT, 0, 0, 0, 0, x->cp, &t))
		return GP_EINVAL;
	b->prep += t;
	if (qr > 0) {
		if (quant(x, "q_b_quant", L, Tg * qr, &t))
			return GP_EINVAL;
		b->prep += t;
		if (gemm(x, "q_b", L, Tg, nh * dq, qr, wb, &t))
			return GP_EINVAL;
	} else if (gemm(x, "q_proj", L, Tg, nh * dq, h, wb, &t)) {
		return GP_EINVAL;
	}
	b->prep += t;
	if (absorb) {
		if (bmm16(x, "q_absorb", L, nh, Tg, r, dn, &t))
			return GP_EINVAL;
		b->prep += t;
		/* Rope on q_pe and the shared k_pe; the latent and k_pe
		 * written to the cache. */
		act = 2.0 * Tg * (nh + 1.0) * dr;
	} else {
		if (quant(x, "kv_b_quant", L, Tg * r, &t))
			return GP_EINVAL;
		b->prep += t;
		if (gemm(x, "kv_b", L, Tg, nh * (dn + dv), r, wb, &t))
			return GP_EINVAL;
		b->prep += t;
		/* ... and K assembled from k_nope and the roped k_pe. */
		act = 2.0 * Tg * (nh + 1.0) * dr + Tg * nh * (dn + dq);
	}
	if (row(x, "rope_kv", L, 6.0 * Tg * (nh + 1.0) * dr,
	        act * ACT + Tg * (r + dr) * kvb, 0, 0, 0, 0, x->cp, &t))
		return GP_EINVAL;
	b->prep += t;
	if (absorb) {
		if (attn_row(x, "attention", L, 2.0 * Tg * kv * nh * (2.0 * r + dr),
		             Bg * kv * (r + dr) * kvb +
		             Tg * nh * (2.0 * r + dr) * ACT,
		             q * nh, r, kv, Bg, 0.0, &t))
			return GP_EINVAL;
		b->core += t;
		if (bmm16(x, "v_absorb", L, nh, Tg, dv, r, &t))
			return GP_EINVAL;
	} else {
		if (attn_row(x, "attention", L, 2.0 * Tg * kv * nh * (dq + dv),
		             (Tg * nh * (dq + dv) + Bg * q * nh * (dq + dv)) *
		             ACT, q, dv, kv, Bg * nh, q, &t))
			return GP_EINVAL;
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
		count = all ? s->L : s->nd;
		if (s->mla && !absorb && strcmp(o.name, "attn_norm") == 0) {
			o.flop /= a;   /* on the rank's share of the tokens */
			o.act /= a;
		}
		if (s->mla && (strcmp(o.name, "qkv") == 0 ||
		               strcmp(o.name, "rope_kv") == 0))
			continue;      /* mla_attention's */
		if (s->mla && o.kind == GP_OP_ATTN) {
			if (mla_attention(x, Bg, q, kv, absorb, b))
				return GP_EINVAL;
			continue;
		}
		if (strcmp(o.name, "o_proj") == 0 || strcmp(o.name,
		                                             "mlp_up") == 0) {
			/* Their inputs come from the attention and the MLP
			 * norm in bf16. */
			if (quant(x, all ? "o_quant" : "mlp_quant", count,
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
			if (attn_row(x, o.name, count, o.flop, bytes, o.m, o.n,
			             o.k, o.batch, decode ? 0.0 : q, &t))
				return GP_EINVAL;
		} else if (row_mt(x, o.name, count, o.flop, bytes, o.m, o.n,
		                  o.k, o.batch, x->cp, o.wclass == GP_W_LINEAR ?
		                  tile_of(x, wb) : 0.0, &t)) {
			return GP_EINVAL;
		}
		if (!all)
			b->dense += t;
		else if (o.kind == GP_OP_ATTN || strcmp(o.name, "o_proj") == 0 ||
		         strcmp(o.name, "mlp_norm") == 0)
			b->core += t;
		else
			b->prep += t;
	}
	return GP_OK;
}

/* The TP collectives of a dense and of a MoE layer, for Tg tokens on the
 * TP group and Tinst on the instance. */
static int tp_colls(sx *x, double Tg, double Tinst, blk *b)
{
	const shp *s = &x->s;
	double a = s->a, N = s->N, h = s->h, tar;

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
	return GP_OK;
}

/* The MoE gate (router, top-k) over the GPU's Tr tokens and the shared
 * experts over the group's Tg. */
static int moe_gate_shared(sx *x, double Tr, double Tg, blk *b)
{
	const shp *s = &x->s;
	double E = s->E, k = s->k, h = s->h, wb = s->wb, t, up_n;

	/* Router over the GPU's tokens (16-bit gate), then the
	 * top-k selection as its own kernel: DeepSeek-V3 sec. 2.1.2
	 * scores every expert with a sigmoid, adds the balancing bias
	 * and picks k within the best node groups (SGLang's
	 * biased_grouped_topk): fp32 scores read, k ids and weights
	 * written per token. */
	if (row(x, "moe_router", s->nm, 2.0 * Tr * E * h,
	        E * h * ACT + Tr * (h + E) * ACT, Tr, E, h, 1.0,
	        x->half, &t))
		return GP_EINVAL;
	b->gate += t;
	if (row(x, "moe_topk", s->nm, 10.0 * Tr * E,
	        Tr * (E * 4.0 + k * 8.0), 0, 0, 0, 0, x->cp, &t))
		return GP_EINVAL;
	b->gate += t;
	if (s->fs > 0) {
		up_n = (s->mats - 1.0) * s->fs;
		if (quant(x, "shared_quant", s->nm, Tg * h, &t))
			return GP_EINVAL;
		b->shared += t;
		if (gemm(x, "shared_up", s->nm, Tg, up_n, h, wb, &t))
			return GP_EINVAL;
		b->shared += t;
		if (row(x, "shared_act", s->nm, 5.0 * Tg * s->fs,
		        2.0 * Tg * s->fs * 1.5 * ACT, 0, 0, 0, 0,
		        x->cp, &t))
			return GP_EINVAL;
		b->shared += t;
		if (gemm(x, "shared_down", s->nm, Tg, h, s->fs, wb, &t))
			return GP_EINVAL;
		b->shared += t;
	}
	return GP_OK;
}

/* The routed experts of the GPU's Tr tokens (Tinst on the instance) and
 * the all-to-all that dispatches and combines them. */
static int moe_routed(sx *x, double Tr, double Tinst, int decode, blk *b)
{
	const shp *s = &x->s;
	double E = s->E, k = s->k, fx = s->fx, h = s->h, wb = s->wb, t;
	double recv, touched, mexp, up_n;

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
		b->routed += t;
		/* The normal kernels send what they are given: an fp8
		 * dispatch is cast beforehand (DeepEP's dispatch takes
		 * an (fp8, scales) pair); the low-latency kernels cast
		 * inside (use_fp8). */
		if (x->c->dispatch_bytes < ACT &&
		    quant(x, "dispatch_quant", s->nm, Tr * h, &t))
			return GP_EINVAL;
		b->gate += t;
	}
	if (row_mt(x, "experts_up", s->nm, 2.0 * recv * h * up_n,
	           touched * h * up_n * wb + recv * (h + up_n) * ACT,
	           mexp, up_n, h, touched, x->cp, tile_of(x, wb), &t))
		return GP_EINVAL;
	b->routed += t;
	/* SiLU-and-mul writes the down GEMM's input (in fp8 with
	 * its scales: SGLang's silu_and_mul_masked_post_quant). */
	if (row(x, "experts_act", s->nm, 5.0 * recv * fx,
	        2.0 * recv * fx * 1.5 * ACT, 0, 0, 0, 0, x->cp, &t))
		return GP_EINVAL;
	b->routed += t;
	if (row_mt(x, "experts_down", s->nm, 2.0 * recv * fx * h,
	           touched * fx * h * wb + recv * (fx + h) * ACT, mexp,
	           h, fx, touched, x->cp, tile_of(x, wb), &t))
		return GP_EINVAL;
	b->routed += t;
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

/* One pass of the model over a micro-batch of B sequences per GPU, each
 * bringing q query tokens at a mean KV length kv. */
static int block(sx *x, double B, double q, double kv, int decode, blk *b)
{
	const shp *s = &x->s;
	double Bg = B * s->a, Tg = Bg * q, Tr = B * q, Tinst = Tr * s->N;

	memset(b, 0, sizeof *b);
	if (layer_ops(x, B, q, kv, decode, b) ||
	    tp_colls(x, Tg, Tinst, b))
		return GP_EINVAL;
	if (s->nm > 0 && (moe_gate_shared(x, Tr, Tg, b) ||
	                  moe_routed(x, Tr, Tinst, decode, b)))
		return GP_EINVAL;
	return outer_pass(x, Bg, Tg, decode, b);
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
 *   max(0, D - S - P) + max(0, C - Q).  The low-latency kernels hold no
 *   SM while in flight (deepseek-ai/profile-data, decoding).
 *  prefill (_compute_moe_deepseek_blog_prefill, no delay): X = shared
 *   experts, attention and gate, dispatch sent | Y = dispatch received,
 *   routed experts, combine sent | ...; on the compute stream A.X B.X A.Y
 *   B.Y: A's dispatch over B.X, B's over A.Y, A's combine over B.Y, B's
 *   over the next X: max(X, D) + max(Y, D) + max(Y, C) + max(X, C).  The
 *   normal kernels hold DEEPEP_HT_SMS SMs throughout and DeepGEMM is
 *   told to use the rest (deep_gemm_num_sms = SMs - DeepEP's num_sms), so
 *   the compute runs at (SMs - 20) / SMs; the extra is the SM loss.
 *  one batch: compute, dispatch and combine in turn.
 * TP collectives are added in full.  *exposed: the all-to-all no compute
 * hides; *loss: the SM loss. */
static double moe_layer(const sx *x, const blk *b, int tbo, int decode,
                        double *exposed, double *loss)
{
	double P = b->prep, Q = b->core + b->gate, S = b->shared;
	double Y = b->routed, D = b->disp, C = b->comb, f = 1.0, X, Yf, st;

	*loss = 0.0;
	if (!tbo) {
		*exposed = D + C;
		return P + Q + S + Y + b->tp_moe + D + C;
	}
	if (decode) {
		*exposed = 2.0 * (fmax(0.0, D - S - P) + fmax(0.0, C - Q));
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
	x->m_tile = c->m_tile;
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
		/* Draft passes, one token per sequence each: mtp_layers MoE
		 * layers and the projection per draft token, then its logits
		 * (the shared head), with the same overlap rule. */
		sx y = *x;
		blk bd;
		double e, l;

		y.st = NULL;
		if (block(&y, B / mb, 1.0, kv, decode, &bd))
			return GP_EINVAL;
		st->draft = x->c->mtp * (x->c->mtp_layers *
		                         moe_layer(&y, &bd, tbo, decode, &e,
		                                   &l) +
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

