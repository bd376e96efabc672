/*
 * t_fuzz.c - deterministic boundary fuzz of every public kernel.
 *
 * A valid "world" (a small MoE model with vision and MLA switched off, a
 * training, inference, RL and serving config, a device, a topology and
 * the scalar arguments) is mutated field by field: first every field
 * takes every hostile value in turn (0, -1, 1, INT_MAX, INT_MIN, NaN,
 * +-inf, 1e308, ...), then a fixed-seed PRNG mutates one to four fields
 * at once.  After each mutation every kernel is called and must
 *   - return GP_OK or GP_EINVAL,
 *   - on GP_EINVAL leave a non-empty message,
 *   - on GP_OK produce only finite results, non-negative where they
 *     are sizes, times or rates.
 * Build with `make test SANITIZE=1` to catch signed overflow, float to
 * int conversion out of range and out-of-bounds reads on the way.
 */
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "comm.h"
#include "infer.h"
#include "memory.h"
#include "model.h"
#include "recipes.h"
#include "roofline.h"
#include "tap.h"

typedef struct world {
	gp_model m;
	gp_train_cfg tc;
	gp_infer_cfg ic;
	gp_act_cfg ac;
	gp_mem_reserve res;
	double capacity;
	roof_device d;
	roof_op op;
	int graphs;
	infer_cfg sc;
	gp_topo topo;
	double batch, q, ctx, n_off, target, itl_limit;
	double bytes;
	int gpus, coll, algo, moe_layer, lora_rank;
	unsigned lora_targets;
} world;

enum { F_INT, F_DBL, F_UNS };

typedef struct field {
	const char *name;
	int kind;
	size_t off;
} field;

#define I(f) { #f, F_INT, offsetof(world, f) }
#define D(f) { #f, F_DBL, offsetof(world, f) }
#define U(f) { #f, F_UNS, offsetof(world, f) }

/* Enums are stored as int by every C99 compiler this project supports
 * (gcc, clang): they are fuzzed as ints to reach out-of-range values. */
static const field fields[] = {
	I(m.layers), I(m.hidden), I(m.heads), I(m.kv_heads), I(m.head_dim),
	I(m.ffn_hidden), I(m.ffn_gated), I(m.vocab), I(m.tied_embeddings),
	I(m.qkv_bias), I(m.norm_params), I(m.sliding_window),
	I(m.sliding_layers), I(m.moe.experts), I(m.moe.top_k),
	I(m.moe.shared_experts), I(m.moe.ffn_hidden), I(m.moe.dense_layers),
	I(m.moe.dense_ffn_hidden), I(m.moe.shared_ffn_hidden),
	I(m.mla.q_lora_rank), I(m.mla.kv_lora_rank),
	I(m.mla.qk_nope_head_dim), I(m.mla.qk_rope_head_dim),
	I(m.mla.v_head_dim), I(m.vision.layers), I(m.vision.hidden),
	I(m.vision.heads), I(m.vision.ffn_hidden), I(m.vision.ffn_gated),
	I(m.vision.image_size), I(m.vision.patch_size), I(m.vision.merge),
	I(m.vision.tokens_per_image), D(m.vision.projector_params),
	D(m.vision.params), I(m.vision.temporal_patch), I(m.linear_bias),
	I(m.pos_embeddings), I(m.positions), I(m.encoder_layers),
	I(m.rel_buckets),
	I(m.ffn_relu),

	D(tc.recipe.weights), D(tc.recipe.master), D(tc.recipe.act),
	D(tc.recipe.offload), D(tc.optim.states), D(tc.optim.state), I(tc.lay.dp), I(tc.lay.tp), I(tc.lay.pp), I(tc.lay.cp),
	I(tc.lay.ep), I(tc.lay.vpp), I(tc.lay.zero), I(tc.lay.sp), D(tc.seq),
	D(tc.lay.micro_batch), D(tc.lay.microbatches), I(tc.lay.schedule), I(tc.pipe),
	I(tc.recompute), I(tc.flash), I(tc.dropout), I(tc.eager_swiglu),
	D(tc.act_bytes), D(tc.logit_bytes), D(tc.capacity_factor),
	I(tc.offload_optimizer), I(tc.offload_params), I(tc.lora_rank),
	U(tc.lora_targets), I(tc.lora_dropout), D(tc.base.bits),
	I(tc.base.group), D(tc.base.group_bits), I(tc.paged_optimizer),
	I(tc.grads_in_bwd), I(tc.fused_qkv_view), I(tc.lora_zero_pad), I(tc.quant_head),
	D(tc.images), I(tc.vision_frozen), D(tc.enc_seq),

	D(ic.weights.bits), I(ic.weights.group), D(ic.weights.group_bits),
	D(ic.kv_bytes), I(ic.tp), I(ic.pp), D(ic.seqs), D(ic.ctx),
	I(ic.block), D(ic.chunk_tokens), D(ic.act_bytes), I(ic.offload),
	D(ic.embed_bits), D(ic.kv_free_fraction),

	D(ac.seq), D(ac.micro_batch), I(ac.tp), I(ac.sp), I(ac.cp), I(ac.ep),
	D(ac.act_bytes), I(ac.flash), I(ac.dropout), I(ac.recompute),
	D(ac.capacity_factor), I(ac.frozen), I(ac.lora_rank),
	U(ac.lora_targets), I(ac.input_nograd), D(ac.enc_len),

	D(res.context), D(res.workspace), D(res.comm), D(res.frag),
	D(res.margin), D(capacity),

	D(d.peak[GP_BF16]), D(d.peak[GP_FP8]), D(d.gemm_frac[GP_BF16]),
	D(d.mem_bw), D(d.hbm_frac), D(d.launch), D(d.graph_launch),
	I(d.sms),
	D(op.flop), D(op.bytes), D(op.m), D(op.n), D(op.k), D(op.count),
	I(op.prec), I(op.gemv), D(op.dequant), D(op.dequant_rep),
	D(op.m_tile), I(graphs),

	D(sc.weight_bits), D(sc.embed_bits), D(sc.kv_bytes), I(sc.compute),
	I(sc.tp), I(sc.pp), I(sc.gpus), I(sc.batch), I(sc.concurrency),
	D(sc.input), D(sc.output), I(sc.runtime), D(sc.host_op_time),
	D(sc.host_ops_per_layer), D(sc.capacity), I(sc.kv_reserve_max),
	D(sc.max_num_tokens), I(sc.max_batch), D(sc.offload_bw),
	D(sc.offload_link_bw), D(sc.host_capacity), D(sc.ar_latency),
	D(sc.ar_bw), D(sc.p2p_bw), D(sc.price), D(sc.reserve.context),
	D(sc.reserve.workspace), D(sc.reserve.comm), D(sc.reserve.frag),
	D(sc.reserve.margin), D(sc.kv_free_fraction), I(sc.gemv_max),
	I(sc.offload_cpu_max),

	I(topo.gpus_per_node), I(topo.nodes), I(topo.up_kind), D(topo.up.bw),
	D(topo.up.latency), D(topo.up.achievable), I(topo.up_nvls),
	I(topo.up_crosses_cpu), I(topo.up_mesh_peers), I(topo.nics),
	D(topo.nic.bw),
	D(topo.nic.latency), D(topo.nic.achievable), I(topo.nic_sharp),
	D(topo.nic_path_bw), D(topo.nvls_tree_bw[0]), D(topo.nvls_tree_bw[1]),
	D(topo.up_nccl.ring_step[GP_PROTO_LL128]),
	D(topo.up_nccl.tree_step[GP_PROTO_SIMPLE]), D(topo.up_nccl.nvls_eff),
	D(topo.up_nccl.nvls_lat), D(topo.up_nccl.ll128_eff),
	D(topo.nic_nccl.ring_step[GP_PROTO_SIMPLE]),
	D(topo.nic_nccl.tree_step[GP_PROTO_LL]),

	D(batch), D(q), D(ctx), D(n_off), D(target), D(itl_limit), D(bytes),
	I(gpus), I(coll), I(algo), I(moe_layer), I(lora_rank),
	U(lora_targets),
};
#define NFIELDS ((int)(sizeof fields / sizeof fields[0]))

static const int ivals[] = {
	0, -1, 1, 2, 3, 7, 64, 1 << 20, INT_MAX / 2 + 1, INT_MAX - 1,
	INT_MAX, INT_MIN
};
#define NIVALS ((int)(sizeof ivals / sizeof ivals[0]))

/* NaN and the infinities are built at run time (C99 NAN/INFINITY). */
static double dval(int i)
{
	static const double v[] = {
		0.0, -1.0, 1.0, 0.5, 2.0, 1e-308, 1e308, 2147483648.0, 1e9,
		-1e308, 4e-324
	};
	int n = (int)(sizeof v / sizeof v[0]);

	if (i < n)
		return v[i];
	if (i == n)
		return NAN;
	if (i == n + 1)
		return INFINITY;
	return -INFINITY;
}
#define NDVALS 14

static void base(world *w)
{
	gp_model *m = &w->m;

	memset(w, 0, sizeof *w);
	/* Mixtral-like but small: 4 layers, h 256, 8 heads of 32, 2 kv
	 * heads, 4 experts top-2, one dense layer. */
	m->layers = 4;
	m->hidden = 256;
	m->heads = 8;
	m->kv_heads = 2;
	m->head_dim = 32;
	m->ffn_hidden = 512;
	m->ffn_gated = 1;
	m->vocab = 1000;
	m->norm_params = 256;
	m->moe.experts = 4;
	m->moe.top_k = 2;
	m->moe.ffn_hidden = 384;
	m->moe.dense_layers = 1;

	w->tc.recipe = FX_MIXED16;
	w->tc.optim = FX_ADAMW;
	w->tc.lay.dp = 2;
	w->tc.lay.tp = 2;
	w->tc.lay.pp = 2;
	w->tc.lay.ep = 2;
	w->tc.seq = 512;
	w->tc.lay.micro_batch = 1;
	w->tc.flash = 1;

	w->ic.seqs = 4;
	w->ic.ctx = 1024;
	w->ic.tp = 2;
	w->ic.block = 16;

	w->ac.seq = 512;
	w->ac.micro_batch = 2;
	w->ac.tp = 2;
	w->ac.flash = 1;

	mem_reserve_default(&w->res, 8);
	w->capacity = 80e9;

	w->d.peak[GP_BF16] = 989e12;
	w->d.peak[GP_FP8] = 1979e12;
	w->d.gemm_frac[GP_BF16] = 0.8;
	w->d.gemm_frac[GP_FP8] = 0.7;
	w->d.mem_bw = 3.35e12;
	w->d.hbm_frac = 0.84;
	w->d.launch = 4e-6;
	w->d.graph_launch = 1e-6;
	w->d.sms = 132;

	w->op.name = "gemm";
	w->op.flop = 2.0 * 256 * 256 * 256;
	w->op.bytes = 3.0 * 256 * 256 * 2;
	w->op.m = w->op.n = w->op.k = 256;
	w->op.count = 1;
	w->op.prec = GP_BF16;
	w->graphs = 1;

	comm_topo_init(&w->topo, GP_LINK_NVLINK);
	w->topo.gpus_per_node = 8;
	w->topo.nodes = 2;
	w->topo.up.bw = 450e9;
	w->topo.up.latency = 2e-6;
	w->topo.up.achievable = 0.8;
	w->topo.up_nvls = 1;
	w->topo.nics = 8;
	w->topo.nic.bw = 50e9;
	w->topo.nic.latency = 5e-6;
	w->topo.nic.achievable = 0.9;

	infer_defaults(&w->sc);
	w->sc.tp = 2;
	w->sc.gpus = 4;
	w->sc.capacity = 70e9;
	w->sc.topo = &w->topo;
	w->sc.input = 256;
	w->sc.output = 64;
	w->sc.price = 2.0;

	w->batch = 4;
	w->q = 1;
	w->ctx = 512;
	w->n_off = 0;
	w->target = 1000;
	w->itl_limit = 0.05;
	w->bytes = 1 << 20;
	w->gpus = 8;
	w->coll = GP_ALL_REDUCE;
	w->algo = GP_ALGO_RING;
	w->moe_layer = 1;
	w->lora_rank = 8;
	w->lora_targets = 127;
}

/* The base world with a T5-like encoder-decoder instead (4 + 4 layers,
 * no experts, ReLU MLP, position buckets; one stage, no EP), so that the
 * hostile values reach the encoder-decoder arithmetic too. */
static void base_t5(world *w)
{
	gp_model *m = &w->m;

	base(w);
	memset(&m->moe, 0, sizeof m->moe);
	m->encoder_layers = 4;
	m->kv_heads = m->heads;
	m->ffn_gated = 0;
	m->ffn_relu = 1;
	m->rel_buckets = 8;
	w->tc.lay.pp = 1;
	w->tc.lay.ep = 1;
	w->tc.lay.zero = 3;
	w->tc.offload_optimizer = 1;
	w->tc.offload_params = 1;
	w->tc.enc_seq = 256;
	w->tc.dropout = 1;
	w->ac.enc_len = 64;
	w->moe_layer = 0;
}

static void set_field(world *w, int f, int vi)
{
	char *p = (char *)w + fields[f].off;

	switch (fields[f].kind) {
	case F_INT: {
		int v = ivals[vi % NIVALS];
		memcpy(p, &v, sizeof v);
		break;
	}
	case F_UNS: {
		unsigned v = (unsigned)ivals[vi % NIVALS];
		memcpy(p, &v, sizeof v);
		break;
	}
	default: {
		double v = dval(vi % NDVALS);
		memcpy(p, &v, sizeof v);
		break;
	}
	}
}

/* The value set_field(f, vi) writes, as text for the diagnostics. */
static void val_str(int f, int vi, char *buf, size_t n)
{
	if (fields[f].kind == F_DBL)
		snprintf(buf, n, "%g", dval(vi % NDVALS));
	else
		snprintf(buf, n, "%d", ivals[vi % NIVALS]);
}

static int nvals(int f)
{
	return fields[f].kind == F_DBL ? NDVALS : NIVALS;
}

/* xorshift64* (Vigna 2016), fixed seed: the same cases every run. */
static uint64_t rng(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

enum {
	K_MODEL, K_FLOPS, K_TRAIN, K_INFER, K_ACT, K_LORA, K_ROOF,
	K_STEP, K_RUN, K_GPUS_FOR, K_COMM, K_COMM_ALGO, K_NKERNELS
};
static const char *const kname[K_NKERNELS] = {
	"model_check/model_params", "model_fwd_flops/kv_bytes/vision",
	"mem_train", "mem_infer", "mem_act_layer",
	"mem_lora_params", "roof_op_time", "infer_step", "infer_run",
	"infer_gpus_for", "comm_cost", "comm_cost_algo"
};

typedef struct tally {
	long calls[K_NKERNELS], ok[K_NKERNELS], bad[K_NKERNELS];
	char what[160];      /* the mutation being run, for diagnostics */
} tally;

static int nonneg(double x)
{
	return isfinite(x) && x >= 0.0;
}

/* Record one call: rc must be GP_OK or GP_EINVAL, EINVAL needs a
 * message, OK needs good (every output checked by the caller). */
static void record(tally *t, int k, int rc, const gp_error *e, int good,
		   const char *out)
{
	const char *why = NULL;

	t->calls[k]++;
	if (rc == GP_OK && good) {
		t->ok[k]++;
		return;
	}
	if (rc == GP_EINVAL && e->msg[0] != '\0')
		return;
	if (rc != GP_OK && rc != GP_EINVAL)
		why = "bad return code";
	else if (rc == GP_EINVAL)
		why = "GP_EINVAL with an empty message";
	else
		why = out;
	if (t->bad[k]++ < 3)
		printf("# %s: %s after %s\n", kname[k], why, t->what);
}

static int mem_result_good(const gp_mem_result *r)
{
	int i, good = 1;

	for (i = 0; i < GP_MEM_NCOMP; i++)
		good &= nonneg(r->bytes[i]);
	good &= nonneg(r->allocated) && nonneg(r->total) &&
		nonneg(r->capacity) && nonneg(r->margin) &&
		isfinite(r->budget) && isfinite(r->usable) &&
		isfinite(r->short_by) && nonneg(r->params) &&
		nonneg(r->trainable) && nonneg(r->inflight) &&
		nonneg(r->act_layer) && nonneg(r->cpu_bytes) &&
		nonneg(r->kv_per_seq) && nonneg(r->max_seqs) &&
		nonneg(r->max_ctx) && r->cpu_layers >= 0 &&
		nonneg(r->host_weights) && nonneg(r->host_grads) &&
		nonneg(r->host_master) && nonneg(r->host_optimizer) &&
		r->largest >= 0 && r->largest < GP_MEM_NCOMP;
	return good;
}

static int roof_good(const roof_result *r)
{
	return nonneg(r->time) && nonneg(r->t_compute) &&
		nonneg(r->t_memory) && nonneg(r->t_launch) &&
		nonneg(r->intensity) && nonneg(r->ridge) &&
		nonneg(r->ridge_peak) && nonneg(r->shape_eff) &&
		r->shape_eff <= 1.0 && nonneg(r->compute_rate) &&
		nonneg(r->mem_rate) && nonneg(r->mem_eff);
}

static int phase_good(const infer_phase *p)
{
	int i, good = p->nops >= 0 && p->nops <= INFER_MAX_OPS;

	for (i = 0; good && i < p->nops; i++)
		good &= nonneg(p->ops[i].count) && nonneg(p->ops[i].flop) &&
			nonneg(p->ops[i].bytes) && roof_good(&p->ops[i].r) &&
			nonneg(p->ops[i].total);
	return good && nonneg(p->batch) && nonneg(p->tokens) &&
		nonneg(p->ctx) && nonneg(p->gpu_time) &&
		nonneg(p->comm_time) && nonneg(p->offload_time) &&
		nonneg(p->host_time) && nonneg(p->time) && nonneg(p->flop) &&
		nonneg(p->bytes);
}

static int run_good(const infer_result *r)
{
	return nonneg(r->weights_total) && nonneg(r->weights_gpu) &&
		nonneg(r->offload_layers) && nonneg(r->offload_bytes) &&
		nonneg(r->workspace) && nonneg(r->kv_per_seq) &&
		nonneg(r->kv_admit) && isfinite(r->kv_budget) &&
		r->max_batch_kv >= 0 && r->replicas >= 0 && r->batch >= 0 &&
		nonneg(r->ttft) && nonneg(r->itl) && nonneg(r->itl_batch1) &&
		nonneg(r->prefill_share) && nonneg(r->tokens_per_s) &&
		nonneg(r->tokens_per_s_gpu) &&
		nonneg(r->stream_tokens_per_s) && nonneg(r->cost_per_mtok) &&
		nonneg(r->tokens_per_s_per_price) &&
		phase_good(&r->prefill) && phase_good(&r->decode);
}

static int comm_good(const gp_comm_result *r)
{
	return nonneg(r->time) && nonneg(r->latency) && nonneg(r->bw_time) &&
		nonneg(r->algbw) && nonneg(r->busbw) && r->nodes >= 1 &&
		r->ppn >= 1;
}

/* A double kernel answers -1 for invalid input, else a finite >= 0. */
static int dbl_good(double x)
{
	return x == -1.0 || nonneg(x);
}

static void call_all(const world *w, tally *t)
{
	gp_error e;
	gp_params p;
	gp_mem_result mr;
	gp_act_layer al;
	roof_result rr;
	infer_phase ph;
	infer_result ir;
	gp_comm_result cr;
	int rc, g, b, good;
	double tps, x;

	/* Every call starts from an empty message so a stale one from the
	 * previous call cannot pass for this call's. */
#define CALL(k, expr, goodexpr, out) do { \
		memset(&e, 0, sizeof e); \
		rc = (expr); \
		record(t, k, rc, &e, rc == GP_OK && (goodexpr), out); \
	} while (0)

	CALL(K_MODEL, model_params(&w->m, &p, &e),
	     nonneg(p.embedding) && nonneg(p.lm_head) &&
	     nonneg(p.attention) && nonneg(p.dense_mlp) &&
	     nonneg(p.experts) && nonneg(p.router) && nonneg(p.norms) &&
	     nonneg(p.vision) && nonneg(p.total) && nonneg(p.active) &&
	     nonneg(p.per_layer_max) && nonneg(p.matmul_active) &&
	     p.active <= p.total, "a negative or non-finite count");
	if (model_check(&w->m, &e) != GP_OK && rc == GP_OK)
		record(t, K_MODEL, GP_OK, &e, 0,
		       "model_params accepted what model_check refused");

	good = dbl_good(model_fwd_flops_per_token(&w->m, w->ctx)) &&
		dbl_good(model_kv_bytes_per_token(&w->m, w->sc.kv_bytes)) &&
		dbl_good(model_kv_bytes(&w->m, w->ctx, w->sc.kv_bytes)) &&
		dbl_good(model_vision_tokens(&w->m)) &&
		dbl_good(model_vision_flops_per_image(&w->m));
	/* -1 is these kernels' refusal, so it counts as good above;
	 * anything else that is not a finite >= 0 is bad. */
	record(t, K_FLOPS, GP_OK, &e, good,
	       "a double kernel returned neither -1 nor a finite >= 0");

	CALL(K_TRAIN, mem_train(&w->m, &w->tc, w->capacity, &w->res, &mr,
				&e), mem_result_good(&mr),
	     "a negative or non-finite figure");
	CALL(K_INFER, mem_infer(&w->m, &w->ic, w->capacity, &w->res, &mr,
				&e), mem_result_good(&mr),
	     "a negative or non-finite figure");
	CALL(K_ACT, mem_act_layer(&w->m, &w->ac, w->moe_layer, &al, &e),
	     nonneg(al.attention) && nonneg(al.core) && nonneg(al.mlp) &&
	     nonneg(al.norms) && nonneg(al.masks) && nonneg(al.lora) &&
	     nonneg(al.total) && nonneg(al.full) && nonneg(al.cross) &&
	     nonneg(al.enc_out),
	     "a negative or non-finite figure");

	x = mem_lora_params(&w->m, w->lora_rank, w->lora_targets);
	record(t, K_LORA, GP_OK, &e, dbl_good(x),
	       "neither -1 nor a finite >= 0");

	CALL(K_ROOF, roof_op_time(&w->d, &w->op, w->graphs, &rr, &e),
	     roof_good(&rr), "a negative or non-finite time");
	CALL(K_STEP, infer_step(&w->m, &w->d, &w->sc, w->batch, w->q, w->ctx,
				w->n_off, &ph, &e), phase_good(&ph),
	     "a negative or non-finite figure");
	CALL(K_RUN, infer_run(&w->m, &w->d, &w->sc, &ir, &e), run_good(&ir),
	     "a negative or non-finite figure");
	CALL(K_GPUS_FOR, infer_gpus_for(&w->m, &w->d, &w->sc, w->target,
					w->itl_limit, &g, &b, &tps, &e),
	     g >= 1 && b >= 1 && nonneg(tps), "bad gpus, batch or tokens/s");
	CALL(K_COMM, comm_cost(&w->topo, (gp_coll)w->coll, w->bytes, w->gpus,
			       &cr, &e), comm_good(&cr),
	     "a negative or non-finite cost");
	CALL(K_COMM_ALGO, comm_cost_algo(&w->topo, (gp_coll)w->coll,
					 (gp_algo)w->algo, w->bytes, w->gpus,
					 &cr, &e), comm_good(&cr),
	     "a negative or non-finite cost");
#undef CALL
}

int main(void)
{
	world w;
	tally t;
	uint64_t seed = 0x9E3779B97F4A7C15ULL;
	char vs[32];
	int f, v, i, j, k, n;

	memset(&t, 0, sizeof t);
	plan(2 + K_NKERNELS);

	/* The base world is valid: every kernel answers GP_OK on it. */
	base(&w);
	strcpy(t.what, "nothing (the base world)");
	call_all(&w, &t);
	for (k = 0, n = 0; k < K_NKERNELS; k++)
		n += t.ok[k] == 1;
	is_int(n, K_NKERNELS, "every kernel accepts the base world");

	/* Every field through every hostile value, one at a time. */
	for (f = 0; f < NFIELDS; f++)
		for (v = 0; v < nvals(f); v++) {
			base(&w);
			set_field(&w, f, v);
			val_str(f, v, vs, sizeof vs);
			snprintf(t.what, sizeof t.what, "%s = %s",
				 fields[f].name, vs);
			call_all(&w, &t);
		}

	/* Then 20000 worlds with one to four random fields mutated. */
	for (i = 0; i < 20000; i++) {
		size_t used = 0;

		base(&w);
		n = 1 + (int)(rng(&seed) % 4);
		for (j = 0; j < n; j++) {
			f = (int)(rng(&seed) % NFIELDS);
			v = (int)(rng(&seed) % (uint64_t)nvals(f));
			set_field(&w, f, v);
			val_str(f, v, vs, sizeof vs);
			used += (size_t)snprintf(t.what + used,
					sizeof t.what - used, "%s=%s ",
					fields[f].name, vs);
			if (used >= sizeof t.what)
				used = sizeof t.what - 1;
		}
		call_all(&w, &t);
	}

	/* The same through the encoder-decoder base: every field, then
	 * 5000 random worlds. */
	for (f = 0; f < NFIELDS; f++)
		for (v = 0; v < nvals(f); v++) {
			base_t5(&w);
			set_field(&w, f, v);
			val_str(f, v, vs, sizeof vs);
			snprintf(t.what, sizeof t.what, "t5: %s = %s",
				 fields[f].name, vs);
			call_all(&w, &t);
		}
	for (i = 0; i < 5000; i++) {
		size_t used = 0;

		base_t5(&w);
		n = 1 + (int)(rng(&seed) % 4);
		used += (size_t)snprintf(t.what, sizeof t.what, "t5: ");
		for (j = 0; j < n; j++) {
			f = (int)(rng(&seed) % NFIELDS);
			v = (int)(rng(&seed) % (uint64_t)nvals(f));
			set_field(&w, f, v);
			val_str(f, v, vs, sizeof vs);
			used += (size_t)snprintf(t.what + used,
					sizeof t.what - used, "%s=%s ",
					fields[f].name, vs);
			if (used >= sizeof t.what)
				used = sizeof t.what - 1;
		}
		call_all(&w, &t);
	}

	for (k = 0, n = 0; k < K_NKERNELS; k++)
		n += t.ok[k] > 0;
	/* A fuzz in which a kernel never succeeds tests only its refusals. */
	is_int(n, K_NKERNELS, "every kernel succeeded on some fuzzed world");
	for (k = 0; k < K_NKERNELS; k++) {
		char name[96];

		snprintf(name, sizeof name, "%s: %ld calls, %ld OK, none bad",
			 kname[k], t.calls[k], t.ok[k]);
		is_int(t.bad[k], 0, name);
	}
	return done();
}
