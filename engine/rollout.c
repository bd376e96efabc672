/*
 * rollout.c - the rollout of an RL step: the responses' generation on
 * the serving model (see rl.h; their lengths are rl_lengths.c's).
 *
 * An engine of tp x pp GPUs gets n samples of ceil(n / G) distinct
 * prompts.  It prefills each prompt once (prefix caching: the G samples
 * of a prompt share its KV blocks, vLLM automatic prefix caching) in
 * batches of max_num_tokens, then decodes.  When its KV budget holds all
 * n at once they all start together and the batch shrinks as responses
 * end: n P(L > t) sequences run at decode step t, at least the longest
 * one, until the expected longest of the n responses -- the tail where a
 * few long responses keep the engine at batch 1.  When they do not fit,
 * continuous batching keeps B sequences running (a fluid model: each
 * finished one is replaced from the queue) until the queue is empty,
 * then the last B drain as above.  Each decode step is infer_step at its
 * batch and context, plus what RL's sampling adds to the serving model's
 * (the sampled tokens' log-probabilities, RL_SAMPLE_BYTES) and the
 * engine's host work for the step (rl_engine_host); the timeline is
 * integrated over segments at their midpoints (exact for a step time
 * affine in the context, as the KV reads make it).
 */
#include "rl_lengths.h"
#include "serve.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- the rollout ------------------------------------------------------ */

/* RL's sampling on the engine.  The trainer needs each sampled token's
 * log-probability under the rollout policy (importance weights, the
 * rollout/trainer mismatch), so the engine samples with temperature and
 * returns it: NeMo RL asks vLLM for logprobs = 0 with logprobs_mode
 * "processed_logprobs" (nemo_rl/models/generation/vllm/vllm_worker.py,
 * v0.5.0), verl and OpenRLHF likewise.  vLLM V1's sampler
 * (vllm/v1/sample/sampler.py) then streams the step's logits over the
 * whole vocabulary, in fp32, through: the cast from bf16 (read 2 B,
 * write 4), the temperature divide in place (4 + 4), the softmax for the
 * probabilities (two reads and a write, 12), the exponential noise
 * (write 4), probabilities / noise in place and the argmax (4 + 4 + 4),
 * the log-softmax (12) and the rank of the sampled token's
 * log-probability (read 4): 58 B per vocabulary entry and sequence.
 * With TP the logits are gathered and every rank samples them whole.
 * The serving model's "sample" op (infer.c) already counts 4 B per entry
 * of its vocabulary slice; the rest is charged here. */
#define RL_SAMPLE_BYTES 58.0
#define SERVE_SAMPLE_BYTES 4.0

typedef struct rollctx {
	const gp_model *m;
	const roof_device *d;
	infer_cfg ic;       /* one engine */
	int ep;             /* > 1: its experts split over its GPUs, each
			     * step priced by the serving model's MoE
			     * step (serve_step_time) on sc and sl */
	int dp;             /* 1: with DP attention (sl.dp_attention) */
	double pre_routed;  /* of the last prefill step, the routed
			     * experts' share of its time */
	serve_cfg sc;
	serve_layout sl;
	rl_engine_host host;
	lenx len;
	double p;           /* prompt tokens */
	double kvtok;       /* KV bytes a token of context per GPU */
	gp_error *err;
	int bad;
} rollctx;

/* One decode step's seconds and their parts. */
typedef struct dparts {
	double time;        /* wall time of the step */
	double host;        /* what the engine's host work adds to it */
	double sampler;     /* RL's sampling beyond the serving model's */
} dparts;

/* The rollout engine with expert parallelism (vLLM's
 * enable_expert_parallel, SGLang's --ep-size = --tp-size): attention
 * tensor parallel over the engine's GPUs, each routed expert whole on
 * one of them.  Priced by the serving model's MoE step (serve.h) with
 * what such an engine runs in RL: no redundant experts (vLLM's EPLB is
 * off unless asked), so routing is as skewed as TensorRT-LLM measured
 * without EPLB (the serving model's step without EPLB, model_ep_skew_at:
 * the hottest GPU receives 2.56x the mean at EP 32 with 8 experts a GPU,
 * more in a step of few tokens); vLLM's default all-to-all backend (allgather_reducescatter:
 * NCCL collectives of bf16 hidden states, 2 B an element each way); no
 * two-batch overlap (vLLM's dual-batch overlap is opt-in); an eager
 * engine (rollout_eager) is held to its host's dispatch as infer_step's
 * is (infer_eager_host).  The weights per GPU equal the TP-sliced
 * experts' (E / tp whole experts = a 1/tp slice of each of E), so the
 * engine's memory stays infer_run's.
 *
 * With DP attention (rollout_dp_attention: SGLang's --enable-dp-attention,
 * as slime launches its DeepSeek and GLM rollout engines with
 * --sglang-enable-dp-attention --sglang-dp-size) each GPU attends to its
 * own 1/tp of the sequences with the attention weights whole (the serving
 * layout's dp_attention): its memory is serve_memory's -- whole attention
 * weights, and the KV of its own sequences only, where TP attention over
 * MLA repeats the shared latent on every GPU -- and its steps
 * serve_step_time's.  SGLang keeps --chunked-prefill-size and
 * --max-running-requests as the engine's totals, divided over the DP
 * ranks (server_args.py _handle_data_parallelism: "chunked_prefill_size
 * // self.dp_size"; max_running_requests // dp_size per worker). */
#define ROLL_EP_ELEM_BYTES 2.0

static void ep_setup(rollctx *r)
{
	serve_defaults(&r->sc);
	r->sc.base = r->ic;
	if (r->ic.topo)
		r->sc.topo = *r->ic.topo;
	r->sc.gpus = r->ic.tp;
	r->sc.redundant = 0;
	r->sc.imbalance = SERVE_IMBALANCE_AUTO;
	r->sc.eplb = 0;
	r->sc.a2a = SERVE_A2A_NCCL;
	r->sc.dispatch_bytes = r->sc.combine_bytes = ROLL_EP_ELEM_BYTES;
	r->sl.tp = r->sl.ep = r->ic.tp;
	r->sl.dp_attention = r->dp;
	r->sl.tbo = 0;
	r->sc.decode = r->sc.prefill = r->sl;
}

/* Seconds of one engine step of `batch` sequences bringing q tokens each
 * up to KV length ctx (q = 1: decode; q = ctx: a prefill).  Without EP
 * the serving model's infer_step; with it serve_step_time, whose batch
 * is per GPU (an instance of tp GPUs holds tp x it: batch / tp) and
 * whose decode reads a mean KV of input + output / 2 (input ctx - 1/2,
 * output 1: ctx), whose prefill is a chunk of batch x q tokens.  With DP
 * attention the busiest GPU holds ceil(batch / tp) of the sequences and
 * the step is its: its attention, its prompt chunk (the others run their
 * share, or an idle pass to join the all-to-all); the MoE then prices
 * tp x that many tokens, at most tp - 1 sequences more than the engine
 * runs, which matters only in the tail, where a step reads the experts'
 * weights whatever its tokens. */
static int eng_step(rollctx *r, double batch, double q, double ctx,
		    double *time)
{
	infer_phase ph;
	serve_step st;

	if (r->ep <= 1) {
		/* Pipeline stages (vLLM's pipeline_parallel_size): the
		 * decode's batch runs as pp micro-batches in flight, one
		 * per stage (vLLM V1's EngineCore keeps the executor's
		 * max_concurrent_batches = pipeline_parallel_size batches
		 * queued), so a step of the batch is one micro-batch's
		 * pass through every stage -- infer_run's rule for a
		 * served replica. */
		if (q <= 1 && r->ic.pp > 1)
			batch = ceil(batch / r->ic.pp);
		if (infer_step(r->m, r->d, &r->ic, batch, q, ctx, 0, &ph,
			       r->err))
			return GP_EINVAL;
		*time = ph.time;
		return GP_OK;
	}
	if (q <= 1) {
		r->sc.base.input = ctx - 0.5;
		r->sc.base.output = 1;
		if (serve_step_time(r->m, r->d, &r->sc, &r->sl, SERVE_DECODE,
				    r->dp ? ceil(batch / r->ic.tp - 1e-9) :
				    batch / r->ic.tp, &st, r->err))
			return GP_EINVAL;
	} else {
		r->sc.base.input = q;
		r->sc.base.output = 1;
		r->sc.prefill_tokens = (r->dp ? ceil(batch / r->ic.tp - 1e-9) :
					batch) * q;
		if (serve_step_time(r->m, r->d, &r->sc, &r->sl, SERVE_PREFILL,
				    0, &st, r->err))
			return GP_EINVAL;
		r->pre_routed = st.time > 0 ? serve_step_routed(&st) /
			st.time : 0.0;
	}
	/* vLLM without CUDA graphs (enforce_eager): the host's dispatch of
	 * every op bounds the step from below, as infer_step has it. */
	*time = fmax(st.time, infer_eager_host(&r->ic, r->m->layers));
	return GP_OK;
}

/* Seconds of one decode step of `batch` sequences at context ctx: the
 * serving model's step (infer_step), RL's sampling, and the engine's
 * host work -- added to the GPU's, or hidden behind it up to its
 * length when the engine overlaps them. */
static dparts dstep(rollctx *r, double batch, double ctx)
{
	roof_op op;
	dparts o;
	double gpu, h, t, waited = 0;

	memset(&o, 0, sizeof o);
	if (r->bad)
		return o;
	batch = ceil(batch - 1e-9);
	if (batch < 1)
		batch = 1;
	if (eng_step(r, batch, 1, ctx, &t)) {
		r->bad = 1;
		return o;
	}
	memset(&op, 0, sizeof op);
	op.name = "rl_sample";
	op.prec = r->ic.compute;
	/* With DP attention each rank samples its own 1/tp of the
	 * sequences over the whole vocabulary (SGLang's DP LM head). */
	op.bytes = r->dp ? batch / r->ic.tp * (RL_SAMPLE_BYTES -
					       SERVE_SAMPLE_BYTES) *
		r->m->vocab :
		batch * (RL_SAMPLE_BYTES * r->m->vocab -
			 SERVE_SAMPLE_BYTES * r->m->vocab / r->ic.tp);
	o.sampler = roof_time(r->d, &op, 1);
	/* A generate() loop on the trainer's modules copies its dense KV
	 * cache each step (rl.h host.cache_copies): batch x ctx tokens of
	 * cache, that many times over, on the GPU's timeline. */
	if (r->host.cache_copies > 0 && r->kvtok > 0) {
		double copies;

		memset(&op, 0, sizeof op);
		op.name = "rl_cache_copies";
		op.prec = r->ic.compute;
		op.bytes = r->host.cache_copies * batch * ctx * r->kvtok;
		copies = roof_time(r->d, &op, 1);
		t += copies;
		/* The passes the host waits on right after issuing them
		 * (rl.h wait_copies): what of them its lead does not
		 * cover is on the host's path too. */
		waited = copies * r->host.wait_copies /
			r->host.cache_copies;
	}
	/* A piecewise CUDA graph's gaps are the forward's own (rl.h). */
	gpu = t + o.sampler + r->host.gaps;
	h = r->host.step + r->host.seq * batch +
		fmax(0.0, waited - r->host.wait_lead);
	o.time = (r->host.overlap ? fmax(gpu, h) : gpu + h) +
		r->host.serial;
	o.host = o.time - gpu;
	return o;
}

/* Segments of the decode timeline per region. */
#define SEG_HEAD 8
#define SEG_BODY 32

typedef struct drain {
	double time, tail, steps, tokens, kv_peak_tok, first, last;
	double host, sampler;
} drain;

/* n sequences that start together, decoded until the expected longest
 * of `of` responses (>= n: the longest of the whole step when these are
 * the last of a queue); the tail is the time after which fewer than
 * tail_q of the n are still running. */
static void decode_from_start(rollctx *r, double n, double of,
			      double tail_q, drain *o)
{
	const lenx *x = &r->len;
	double end = rl_lenx_longest(x, of), head = fmin(x->lo, end);
	double t90 = tail_q >= 1 ? 0 : (tail_q <= 0 ? end :
		fmax(head, fmin(end, rl_lenx_surv_inv(x, tail_q))));
	double cuts[4];
	int nseg[3], k, i;

	memset(o, 0, sizeof *o);
	cuts[0] = 0;
	cuts[1] = head;
	cuts[2] = fmax(head, t90);
	cuts[3] = end;
	nseg[0] = SEG_HEAD;
	nseg[1] = SEG_BODY;
	nseg[2] = SEG_BODY;
	o->kv_peak_tok = n * r->p;
	for (k = 0; k < 3; k++) {
		double a = cuts[k], b = cuts[k + 1], w;

		if (!(b > a))
			continue;
		w = (b - a) / nseg[k];
		for (i = 0; i < nseg[k]; i++) {
			double t0 = a + i * w, tm = t0 + 0.5 * w;
			double act = fmax(1.0, n * rl_lenx_surv(x, tm));
			double at0 = fmax(1.0, n * rl_lenx_surv(x, t0));
			dparts sp = dstep(r, act, r->p + tm + 0.5);
			double dt = w * sp.time;

			o->time += dt;
			o->host += w * sp.host;
			o->sampler += w * sp.sampler;
			o->steps += w;
			o->tokens += w * act;
			if (k == 2)
				o->tail += dt;
			/* KV held: every running sequence its prompt and
			 * what it generated so far. */
			if (at0 * (r->p + t0) > o->kv_peak_tok)
				o->kv_peak_tok = at0 * (r->p + t0);
			if (act * (r->p + t0 + w) > o->kv_peak_tok)
				o->kv_peak_tok = act * (r->p + t0 + w);
		}
	}
	o->first = dstep(r, n, r->p + 1).time;
	/* The last step: at fixed lengths every response runs it, the n
	 * together (a fixed-length rollout said "decode step 13.1 ms at the
	 * start, 6.3 ms in the tail", the tail a step of one that never
	 * runs, beside "tail 0.00 s"); lengths that spread end on the
	 * longest alone. */
	o->last = dstep(r, x->l.dist == RL_LEN_FIXED ? n : 1, r->p + end).time;
}

/* ---- the scheduler when the KV cache cannot hold them all ------------ */

/* vLLM V1's scheduler (vllm/v1/core/sched/scheduler.py) with every request
 * submitted at once, as an RL step submits its samples.  Requests are
 * admitted in arrival order while the blocks for their tokens are free
 * (and max_num_seqs allows); each step every running request needs a slot
 * for its next token, and when the cache is full the scheduler preempts
 * the running request that arrived last (RECOMPUTE, V1's only mode: its
 * blocks are freed, it returns to the queue, and when it is readmitted it
 * prefills its prompt and what it had generated again).  Space frees as
 * sequences end.  So a rollout whose samples outgrow the cache runs as
 * waves -- the earliest arrivals keep running, the later ones are evicted
 * part-way and finish after them -- not as a queue refilled at a steady
 * mean context.
 *
 * The n requests are represented by K of weight w = n / K, with lengths at
 * the distribution's quantiles, in an arrival order that mixes lengths (a
 * stride through the quantiles).  Between events (a sequence ends, the
 * cache fills) the running set is fixed and each running sequence gains a
 * token per step: a segment of D steps is D decode steps at its batch and
 * the segment's midpoint context (exact for a step affine in the context).
 * A readmission re-prefills w sequences of its length; a request is
 * admitted only with room for its tokens and one more step of every
 * running sequence (so the one just evicted is not readmitted at once). */
#define SIM_MAX 512

typedef struct simout {
	double time, host, sampler, steps, tail, kv_peak_tok, first, last;
	double max_run, preempted, recompute;
} simout;

/* The (1 - q) quantile of the lengths as a step count. */
static double len_at(const lenx *x, double q)
{
	double t = q >= 1.0 ? x->lo : (q <= 0.0 ? x->hi :
				       rl_lenx_surv_inv(x, q));

	return fmin(x->hi, fmax(1.0, t));
}

static long gcdl(long a, long b)
{
	while (b) {
		long t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* The K representatives' response lengths in arrival order into L:
 * request i has the length of quantile (i * stride) mod K, stride ~
 * 0.618 K and coprime to K, so long and short ones interleave. */
static void sim_arrivals(const lenx *len, long K, double *L)
{
	long stride, i;

	stride = (long)floor(0.618 * K + 0.5);
	if (stride < 1)
		stride = 1;
	while (gcdl(stride, K) != 1)
		stride++;
	for (i = 0; i < K; i++) {
		long q = (i * stride) % K;

		L[i] = len_at(len, 1.0 - (q + 0.5) / K);
	}
}

/* Admit the waiting representatives (st 0; w requests each, x tokens
 * generated) in arrival order while their tokens fit C with room for a
 * step and the batch stays within maxb; one readmitted after an
 * eviction (x > 0) prefills its prompt and what it had generated again
 * (o->recompute).  *nrun and *used follow; 1 when an engine step cannot
 * be priced (r->bad set). */
static int sim_admit(rollctx *r, long K, const double *x, int *st,
		     double w, double C, double maxb, int *nrun,
		     double *used, simout *o)
{
	double p = r->p;
	long i;

	for (i = 0; i < K; i++) {
		if (st[i] != 0)
			continue;
		if ((*nrun + 1) * w > maxb + 1e-9 ||
		    *used + w * (p + x[i]) + w * (*nrun + 1) > C)
			break;
		if (x[i] > 0) {
			double t = 0;

			if (eng_step(r, ceil(w - 1e-9), p + x[i], p + x[i],
				     &t)) {
				r->bad = 1;
				return 1;
			}
			t += (r->host.overlap ? 0.0 :
				r->host.step + r->host.seq * w) +
				r->host.serial;
			o->recompute += t;
		}
		st[i] = 1;
		(*nrun)++;
		*used += w * (p + x[i]);
	}
	return 0;
}

/* GP_OK, or 1 when K representatives cannot represent n requests in C
 * tokens (one of them alone would not fit with room to grow). */
static int sched_sim(rollctx *r, double n, double C, double maxb,
		     simout *o)
{
	double L[SIM_MAX], x[SIM_MAX];
	int st[SIM_MAX];    /* 0 waiting, 1 running, 2 done */
	double w, used = 0, done = 0, p = r->p, tail0 = -1;
	long K, i, it, maxit;
	int nrun = 0, first = 1;

	memset(o, 0, sizeof *o);
	K = n <= SIM_MAX ? (long)n : SIM_MAX;
	w = n / K;
	if (w * (p + r->len.hi) + 2.0 * w > C)
		return 1;
	sim_arrivals(&r->len, K, L);
	for (i = 0; i < K; i++) {
		x[i] = 0;
		st[i] = 0;
	}
	maxit = 64 * K + 64;
	for (it = 0; it < maxit; it++) {
		double dfin = 1e300, dkv, d, xs = 0, b, ctx;
		dparts sp;

		if (sim_admit(r, K, x, st, w, C, maxb, &nrun, &used, o))
			return GP_OK;
		if (nrun == 0)
			break;
		if (nrun * w > o->max_run)
			o->max_run = nrun * w;
		for (i = 0; i < K; i++)
			if (st[i] == 1) {
				xs += x[i];
				if (L[i] - x[i] < dfin)
					dfin = L[i] - x[i];
			}
		dkv = floor((C - used) / (w * nrun) + 1e-9);
		if (dkv < 1) {
			/* Full: evict the running request that arrived
			 * last. */
			for (i = K - 1; i >= 0; i--)
				if (st[i] == 1)
					break;
			st[i] = 0;
			nrun--;
			used -= w * (p + x[i]);
			o->preempted += w;
			continue;
		}
		d = fmax(1e-9, fmin(dfin, dkv));
		b = w * nrun;
		ctx = p + xs / nrun + 0.5 * d + 0.5;
		sp = dstep(r, b, ctx);
		if (first) {
			o->first = dstep(r, b, p + xs / nrun + 1).time;
			first = 0;
		}
		o->last = sp.time;
		o->time += d * sp.time;
		o->host += d * sp.host;
		o->sampler += d * sp.sampler;
		o->steps += d;
		used += w * nrun * d;
		if (used > o->kv_peak_tok)
			o->kv_peak_tok = used;
		for (i = 0; i < K; i++) {
			if (st[i] != 1)
				continue;
			x[i] += d;
			if (x[i] >= L[i] - 1e-9) {
				st[i] = 2;
				nrun--;
				used -= w * (p + x[i]);
				done += w;
			}
		}
		if (tail0 < 0 && done >= 0.9 * n - 1e-9)
			tail0 = o->time;
	}
	if (r->bad)
		return GP_OK;
	if (nrun > 0 || done < n - 1e-6 * n)
		return 1;
	o->tail = tail0 >= 0 ? o->time - tail0 : 0.0;
	return GP_OK;
}

/* The most KV tokens n sequences started together hold at once. */
static double peak_tokens(const lenx *x, double p, double n)
{
	double end = rl_lenx_longest(x, n), best = n * p, t;
	int i;

	for (i = 0; i <= 64; i++) {
		t = end * i / 64.0;
		if (fmax(1.0, n * rl_lenx_surv(x, t)) * (p + t) > best)
			best = fmax(1.0, n * rl_lenx_surv(x, t)) * (p + t);
	}
	/* just before the constant head ends, all n hold p + lo */
	if (x->lo > 0 && x->lo <= end && n * (p + x->lo) > best)
		best = n * (p + x->lo);
	return best;
}

/* Check the rollout's arguments and take the engine host's times. */
static int roll_args(double prompts, double group, double prompt_len,
		     double engines, double cap,
		     const rl_engine_host *host, rollctx *r, gp_error *err)
{
	if (gp_check_num(prompts, 1, GP_AMOUNT_MAX, "prompts", err) ||
	    gp_check_num(group, 1, GP_COUNT_MAX, "group", err) ||
	    gp_check_num(prompt_len, 1, GP_COUNT_MAX, "prompt_len", err) ||
	    gp_check_num(engines, 1, GP_COUNT_MAX, "engines", err) ||
	    gp_check_num(cap, -GP_AMOUNT_MAX, GP_AMOUNT_MAX, "capacity", err))
		return GP_EINVAL;
	if (host) {
		if (gp_check_num(host->step, 0, 3600, "engine host time per "
				 "step", err) ||
		    gp_check_num(host->seq, 0, 3600, "engine host time per "
				 "sequence", err) ||
		    gp_check_num(host->gaps, 0, 3600, "engine graph gaps per "
				 "decode step", err) ||
		    gp_check_num(host->serial, 0, 3600, "engine serial host "
				 "time per step", err) ||
		    gp_check_num(host->cache_copies, 0, 64, "engine cache "
				 "copies per decode step", err) ||
		    gp_check_num(host->wait_copies, 0, host->cache_copies,
				 "engine cache copies waited on per decode "
				 "step", err) ||
		    gp_check_num(host->wait_lead, 0, 3600, "engine host "
				 "lead before its wait per decode step", err))
			return GP_EINVAL;
		if (host->overlap != 0 && host->overlap != 1)
			return gp_fail(err, "engine host overlap must be 0 "
				       "or 1 (got %d)", host->overlap);
		/* Serial with the GPU, every copy is already on the path. */
		if (host->wait_copies > 0 && !host->overlap)
			return gp_fail(err, "engine cache copies waited on "
				       "(%g) need the host's overlap: serial "
				       "with the GPU, every copy is already "
				       "on the step's path", host->wait_copies);
		r->host = *host;
	}
	return GP_OK;
}

/* The running batch: all n at once when their peak KV and max_batch
 * allow, else as many as the KV holds at the mean held context. */
static double roll_batch(const rollctx *r, const infer_cfg *roll,
			 double n, double ctok, double held)
{
	double B, pk = peak_tokens(&r->len, r->p, n);

	if (pk <= ctok && n <= roll->max_batch) {
		B = n;
	} else {
		B = floor(fmin(ctok / held, roll->max_batch));
		if (B >= n)
			B = floor(n * ctok / pk);
		if (B < 1)
			B = 1;
	}
	return B;
}

/* The prefill of the engine's distinct prompts, with its host work. */
static int roll_prefill(rollctx *r, const infer_cfg *roll, double n,
			rl_rollout *o)
{
	double pb, chunks, h, g, t, p = r->p;

	/* Prefill: each distinct prompt once, max_num_tokens per batch. */
	pb = floor(roll->max_num_tokens / p);
	pb = pb < 1 ? 1 : (pb > o->prompts ? o->prompts : pb);
	chunks = ceil(o->prompts / pb);
	if (eng_step(r, pb, p, p, &t))
		return GP_EINVAL;
	/* The engine's host work for the prefill: a step per chunk, and
	 * each of the n requests scheduled once (the group's duplicates
	 * hit the prefix cache but are requests of their own). */
	h = chunks * r->host.step + n * r->host.seq;
	g = chunks * t;
	o->prefill = (r->host.overlap ? fmax(g, h) : g + h) +
		chunks * r->host.serial;
	return GP_OK;
}

/* Decode when more requests wait than the representatives simulate: a
 * queue phase at B running, then the last B drain. */
static void roll_queue(rollctx *r, double n, double of, double B,
		       double held, double kvtok, double kv_budget,
		       double mean, rl_rollout *o)
{
	drain dr;
	/* Too many requests for the representatives: a queue, B
	 * running, each finished one replaced, until the n - B
	 * queued have started: (n - B) E[L] / B steps at the held
	 * context; then the last B drain. */
	double steps_q = (n - B) * mean / B;
	dparts sq = dstep(r, B, held);
	double tq = sq.time;
	double q = 0.1 * n / B;

	decode_from_start(r, B, of, q, &dr);
	o->decode = steps_q * tq + dr.time;
	o->host = steps_q * sq.host + dr.host;
	o->sampler = steps_q * sq.sampler + dr.sampler;
	o->steps = steps_q + dr.steps;
	o->tail = dr.tail;
	if (q >= 1)
		/* the last 10% of the samples started in the queue
		 * phase: its end is tail too */
		o->tail = dr.time + fmin(steps_q, (0.1 * n - B) *
			mean / B) * tq;
	o->kv_peak = fmax(B * held, dr.kv_peak_tok) * kvtok;
	if (o->kv_peak > kv_budget)
		o->kv_peak = kv_budget;
	o->itl_first = tq;
	o->itl_last = dr.last;
}

/* The prompts of a >= 2 steps in flight (NeMo RL's asynchronous GRPO:
 * AsyncTrajectoryCollector lets num_prompts_per_step x
 * max_trajectory_age_steps prompt groups generate at once, for the
 * target weight versions v + 1 ... v + a of the engine's weights v,
 * nemo_rl/algorithms/async_utils.py at v0.6.0): the engine's queue does
 * not empty when one step's samples have started, the next steps' keep
 * its batch full, so a step's share of its decode is its n samples'
 * tokens at the running batch B -- n E[L] / B steps at the held context
 * -- and no drain: the responses still running when the step's last one
 * starts end among the next steps' (their tail is the next steps'
 * work). */
static void roll_steady(rollctx *r, double n, double B, double held,
			double kvtok, double kv_budget, double mean,
			rl_rollout *o)
{
	dparts st = dstep(r, B, held);
	double steps = n * mean / B;

	o->decode = steps * st.time;
	o->host = steps * st.host;
	o->sampler = steps * st.sampler;
	o->steps = steps;
	o->tail = 0;
	o->kv_peak = fmin(B * held * kvtok, kv_budget);
	o->itl_first = o->itl_last = st.time;
}

/* The slowest engine's last response alone from the simulation's
 * longest representative to the expected longest of `of` responses:
 * at batch 1, its context growing (one step at the midpoint's context,
 * exact for a step affine in it). */
static void sim_straggler(rollctx *r, double n, double of, simout *o)
{
	long K = n <= SIM_MAX ? (long)n : SIM_MAX;
	double from = len_at(&r->len, 0.5 / K);
	double end = rl_lenx_longest(&r->len, of);
	dparts sp;

	if (!(end > from))
		return;
	sp = dstep(r, 1, r->p + 0.5 * (from + end) + 0.5);
	o->time += (end - from) * sp.time;
	o->host += (end - from) * sp.host;
	o->sampler += (end - from) * sp.sampler;
	o->steps += end - from;
	o->tail += (end - from) * sp.time;
	o->last = dstep(r, 1, r->p + end).time;
}

/* The decode of the n samples at batch B: all at once, scheduled by
 * simulation, or queued; it lasts until the expected longest of `of`
 * responses ends (rl_rollout_step's ahead 0: a barrier). */
static int roll_decode(rollctx *r, const infer_cfg *roll, double n,
		       double of, double B, double ctok, double held,
		       double kvtok, double kv_budget, double mean,
		       rl_rollout *o)
{
	drain dr;
	simout sm;

	if (!o->queued) {
		decode_from_start(r, n, of, 0.1, &dr);
		o->decode = dr.time;
		o->host = dr.host;
		o->sampler = dr.sampler;
		o->tail = dr.tail;
		o->steps = dr.steps;
		o->kv_peak = dr.kv_peak_tok * kvtok;
		o->itl_first = dr.first;
		o->itl_last = dr.last;
	} else if (sched_sim(r, n, ctok, roll->max_batch, &sm) == GP_OK) {
		if (r->bad)
			return GP_EINVAL;
		sim_straggler(r, n, of, &sm);
		o->decode = sm.time + sm.recompute;
		o->host = sm.host;
		o->sampler = sm.sampler;
		o->steps = sm.steps;
		o->tail = sm.tail;
		o->kv_peak = fmin(sm.kv_peak_tok, ctok) * kvtok;
		o->itl_first = sm.first;
		o->itl_last = sm.last;
		o->batch = sm.max_run;
		o->preempted = sm.preempted;
		o->recompute = sm.recompute;
	} else {
		roll_queue(r, n, of, B, held, kvtok, kv_budget, mean, o);
	}
	return r->bad ? GP_EINVAL : GP_OK;
}

/* The latency bound a >= 2 steps ahead: a step's batch is dispatched
 * once the weights a steps before its target have landed (the
 * collector generates from weights v only for the targets v + 1 ..
 * v + a: _calculate_target_weights, async_utils.py at v0.6.0) and must
 * have ended when its target's step starts, so it has a steps; sharing
 * the engine with the other steps' samples only slows it, so it cannot
 * end sooner than its n samples alone on the engine would drain to
 * their longest (one step ahead's decode).  When that drain over a
 * exceeds the steady decode in *o, the batch's tail, not the engine's
 * throughput, sets the pace: *o becomes the drain, a step's share of
 * it (over a). */
static int roll_alone(rollctx *r, const infer_cfg *roll, double n,
		      int ahead, double ctok, double held, double kvtok,
		      double mean, rl_rollout *o)
{
	rl_rollout d = *o;
	double a = ahead;

	d.batch = roll_batch(r, roll, n, ctok, held);
	d.queued = d.batch < n;
	if (roll_decode(r, roll, n, n, d.batch, ctok, held, kvtok,
			o->kv_budget, mean, &d))
		return GP_EINVAL;
	if (!(d.decode / a > o->decode))
		return GP_OK;
	d.decode /= a;
	d.host /= a;
	d.sampler /= a;
	d.steps /= a;
	d.tail /= a;
	d.preempted /= a;
	d.recompute /= a;
	*o = d;
	return GP_OK;
}

/* One step off with refits that do not wait for the engines (NeMo RL's
 * asynchronous GRPO with in_flight_weight_updates, which every one-step-
 * off performance recipe of r0.4.0 to r0.6.0 sets; nemo_rl/algorithms/
 * async_utils.py at v0.6.0).  Its AsyncTrajectoryCollector generates for
 * the target v + 1 as soon as the weights v land, one thread a prompt
 * group behind a semaphore of num_prompts_per_step x
 * max_trajectory_age_steps groups, and prepare_for_refit skips the wait
 * for the pending ones ("Using vLLM V1 in-flight weight update - skipping
 * wait for pending generations"): while a step's last groups decode, the
 * next step's take the slots its finished groups free, so the engine's
 * batch stays at what one step's samples fill -- B = min(n, what the KV
 * cache holds at the running context, max_batch) -- and the step's tail
 * runs under the next step's work.  Two bounds then set a step's share
 * of the engine: its n samples' tokens at that batch (n E[L] / B
 * steps, as roll_steady), and its last group, which enters when the
 * previous step's last one ends and must end before its own step trains
 * -- the longest of `group` responses, one token a step, at the same
 * batch.  Both at the running context held.  The schedule can always
 * fall back to draining each step's batch alone (what refit_drain
 * prices), so it never costs more: *o keeps the drain when that is the
 * shorter. */
static void roll_inflight(rollctx *r, const infer_cfg *roll, double n,
			  double group, double ctok, double held,
			  double kvtok, double mean, rl_rollout *o)
{
	double B = fmax(1.0, fmin(n, floor(fmin(ctok / held,
						 roll->max_batch))));
	dparts st = dstep(r, B, held);
	double steps = fmax(n * mean / B,
			    rl_lenx_longest(&r->len, fmin(group, n)));

	if (r->bad || !(steps * st.time < o->decode))
		return;
	o->decode = steps * st.time;
	o->host = steps * st.host;
	o->sampler = steps * st.sampler;
	o->steps = steps;
	o->tail = 0;
	o->batch = B;
	o->queued = B < n;
	o->preempted = 0;
	o->recompute = 0;
	o->kv_peak = fmin(B * held * kvtok, o->kv_budget);
	o->itl_first = o->itl_last = st.time;
}

/* ---- static batches ------------------------------------------------- */

/* DeepSpeed-Chat generates with the actor's own weights (its hybrid
 * engine gathers the ZeRO-3 shards into DeepSpeed's inference kernels at
 * the inference TP) through Hugging Face's generate(): a batch of B
 * sequences -- each TP rank's per-device generation batch, gathered over
 * the group -- is prefilled whole (no prefix cache: each of a prompt's
 * group copies is a sequence of its own) and decoded at the full batch
 * until its longest response ends: a finished sequence is fed padding,
 * generate() stops only when every sequence has finished, and under
 * ZeRO-3 (synced_gpus) only when every rank's have, so the round lasts
 * the longest of the B x engines responses generated together
 * (deepspeed-chat ppo_trainer._generate_sequence).  Rounds run one after
 * another; the KV cache grows for all B to p + that longest.  The tail:
 * each round's decode after 90% of the responses have ended.  OpenRLHF's
 * vLLM engines of 2024 run the same rounds: each generate call is one
 * actor rank's micro-batch, the engine's calls one at a time. */
static int roll_static(rollctx *r, double n, double B, double engines,
		       double kvtok, double kv_budget, char *why,
		       rl_rollout *o)
{
	double rounds, end, t90, w, dec = 0, host = 0, samp = 0, tail = 0;
	double tpre;
	int i;

	B = fmin(B, n);
	rounds = ceil(n / B);
	/* Engines in step end each round at the longest of all their
	 * batches; engines on their own (host.own_rounds) at their own
	 * batch's -- the step then waits for the engine whose rounds sum
	 * longest, priced at the mean sum (a lower bound). */
	end = rl_lenx_longest(&r->len, B * (r->host.own_rounds ? 1.0 :
					     engines));
	o->batch = B;
	o->queued = rounds > 1;
	o->longest = end;
	o->kv_peak = B * (r->p + end) * kvtok;
	if (o->kv_peak > kv_budget) {
		snprintf(why, 160, "rollout engine: a static batch of %.0f "
			 "sequences of %.0f tokens needs %.2f GB of KV per "
			 "GPU, the budget is %.2f GB", B, r->p + end,
			 o->kv_peak / 1e9, kv_budget / 1e9);
		o->kv_peak = 0;
		return GP_OK;
	}
	if (eng_step(r, B, r->p, r->p, &tpre))
		return GP_EINVAL;
	/* generate()'s first step is the prefill, with the same loop
	 * around it (rl_engine_host). */
	tpre = (r->host.overlap ? fmax(tpre, r->host.step) :
		tpre + r->host.step) + r->host.serial;
	o->prefill = rounds * tpre;
	/* The decode: end steps at batch B, the context growing; SEG_BODY
	 * segments at their midpoints (exact for a step affine in it). */
	t90 = fmin(end, len_at(&r->len, 0.1));
	w = end / SEG_BODY;
	for (i = 0; i < SEG_BODY; i++) {
		double t0 = i * w;
		dparts sp = dstep(r, B, r->p + t0 + 0.5 * w + 0.5);

		dec += w * sp.time;
		host += w * sp.host;
		samp += w * sp.sampler;
		/* the part of the segment past the 90% point */
		if (t0 + w > t90)
			tail += (t0 + w - fmax(t0, t90)) * sp.time;
	}
	if (r->bad)
		return GP_EINVAL;
	o->decode = rounds * dec;
	o->host = rounds * host;
	o->sampler = rounds * samp;
	o->tail = rounds * tail;
	o->steps = rounds * end;
	o->itl_first = dstep(r, B, r->p + 1).time;
	o->itl_last = dstep(r, B, r->p + end).time;
	return r->bad ? GP_EINVAL : GP_OK;
}

/* One rollout engine's serving config into r->ic (roll's, its GPUs tp x
 * pp, requests of prompt_len tokens generating mean ones, the batch
 * left to the engine) and its expert parallelism ep into r->ep: 1 (the
 * experts sliced by its TP) or roll->tp with pp 1 (each expert whole on
 * one GPU). */
static int roll_engine(rollctx *r, const infer_cfg *roll, int ep,
		       int dp, double prompt_len, double mean,
		       gp_error *err)
{
	r->ic = *roll;
	r->ic.gpus = r->ic.tp * r->ic.pp;
	r->ic.input = prompt_len;
	r->ic.output = mean;
	r->ic.batch = 0;
	r->ic.concurrency = 0;
	r->ic.kv_reserve_max = 0;
	if (ep != 1 && ep != roll->tp)
		return gp_fail(err, "rollout_ep %d: the engine's experts are "
			       "split over its %d GPUs (rollout_ep = "
			       "rollout_tp) or sliced by its TP (1)", ep,
			       roll->tp);
	if (ep > 1 && roll->pp != 1)
		return gp_fail(err, "rollout_ep %d with a rollout pp of %d: an "
			       "engine with expert parallelism is priced "
			       "without pipeline stages", ep, roll->pp);
	if (dp != 0 && dp != 1)
		return gp_fail(err, "rollout_dp_attention must be 0 or 1 (got "
			       "%d)", dp);
	if (dp && ep <= 1)
		return gp_fail(err, "rollout_dp_attention: DP attention needs "
			       "the engine's experts over its GPUs "
			       "(rollout_ep = rollout_tp > 1)");
	r->ep = ep;
	r->dp = dp;
	return GP_OK;
}

/* DP attention's memory (see ep_setup): serve_memory's weights -- the
 * attention whole on every GPU -- in place of infer_run's TP slices, the
 * difference taken from the KV budget, and the KV of each GPU's own
 * sequences: *kvtok becomes the bytes per GPU one token of the engine
 * costs on average (a sequence's whole KV on one of tp GPUs). */
static int dp_memory(rollctx *r, const infer_result *ir, rl_rollout *o,
		     double *kvtok, gp_error *err)
{
	serve_mem sm;

	if (serve_memory(r->m, &r->sc, &r->sl, SERVE_DECODE, 1.0, &sm, err))
		return GP_EINVAL;
	o->weights = sm.weights;
	o->kv_budget = ir->kv_budget + ir->weights_gpu - sm.weights;
	*kvtok = sm.kv_per_seq / (r->p + r->sc.base.output) / r->ic.tp;
	return GP_OK;
}

/* DP attention while the engine decodes: the n - B requests that wait
 * for room are admitted as others end, each rank prefilling its own new
 * prompts while the others decode, so every rank waits for each rank's
 * chunks (serve_prefill_stall, the colocated serving rule).  Their
 * distinct prompts, Q = prompts (1 - B / n), reach a rank at Q / tp over
 * the decode's steps, each taking p_len / (max_num_tokens / tp) chunk
 * steps of its rank (SGLang divides the engine's chunked prefill size
 * over the DP ranks): a rank prefills in a share p = Q p_len /
 * (max_num_tokens steps) of its steps, and the rank-own part of those
 * prompts' prefill takes serve_prefill_stall(p, tp) times its own; the
 * routed experts' part (pre_routed of the chunk step) runs every rank's
 * tokens together and keeps its time, as in colocated serving
 * (serve_plan.c).  The first B start together, every rank prefilling at
 * once: no stall.  Readmissions after a preemption are left at their own
 * time. */
static void dp_stall(const rollctx *r, const infer_cfg *roll, double n,
		     rl_rollout *o)
{
	double q, p;

	if (!o->queued || !(o->steps > 0) || !(o->batch < n) ||
	    !(o->prompts > 0))
		return;
	q = o->prompts * (1.0 - o->batch / n);
	p = infer_prompt_share(q, r->p, o->steps, roll->max_num_tokens);
	o->prefill_stall = serve_prefill_stall(p, r->ic.tp);
	o->prefill += (o->prefill_stall - 1.0) * o->prefill * q / o->prompts *
		(1.0 - r->pre_routed);
}

int rl_rollout_step(const gp_model *m, const roof_device *d,
		    const infer_cfg *roll, int ep, int dp_attention,
		    const rl_engine_host *host, double static_batch,
		    const rl_lengths *resp,
		    double prompts, double group, double prompt_len,
		    double engines, int ahead, int inflight, double cap,
		    rl_rollout *o, char *why, gp_error *err)
{
	rollctx r;
	infer_result ir;
	double n, N = prompts * group, kvtok, ctok, m2, held, B, of;

	if (!m || !d || !roll || !resp || !o || !why)
		return gp_fail(err, "rl_rollout_step: missing argument");
	why[0] = 0;
	memset(o, 0, sizeof *o);
	memset(&r, 0, sizeof r);
	if (roll_args(prompts, group, prompt_len, engines, cap, host, &r,
		      err) ||
	    gp_check_num(static_batch, 0, GP_COUNT_MAX, "static_batch", err))
		return GP_EINVAL;
	r.m = m;
	r.d = d;
	r.err = err;
	r.p = prompt_len;
	if (rl_lenx_of(resp, &r.len, err))
		return GP_EINVAL;
	if (roll_engine(&r, roll, ep, dp_attention, prompt_len, resp->mean,
			err))
		return GP_EINVAL;
	o->engines = engines;
	n = ceil(N / engines);
	o->samples = n;
	o->prompts = ceil(n / group);
	if (!(cap > 0)) {
		snprintf(why, 160, "the trainer's resident tensors leave no "
			 "memory for the rollout engine");
		return GP_OK;
	}
	r.ic.capacity = cap;
	if (ep > 1) {
		gp_error sub;

		ep_setup(&r);
		r.sc.base.input = prompt_len;
		r.sc.base.output = resp->mean;
		if (serve_check(m, d, &r.sc, &sub))
			return gp_fail(err, "rollout_ep %d: %.200s", ep,
				       sub.msg);
	}
	if (infer_run(m, d, &r.ic, &ir, err))
		return GP_EINVAL;
	o->prefill_stall = 1.0;
	o->weights = ir.weights_gpu;
	o->workspace = ir.workspace;
	o->kv_budget = ir.kv_budget;
	kvtok = ir.kv_per_seq / (prompt_len + resp->mean);
	if (r.dp && dp_memory(&r, &ir, o, &kvtok, err))
		return GP_EINVAL;
	r.kvtok = kvtok;
	if (!ir.fits || !(o->kv_budget > 0)) {
		if (!ir.fits)
			snprintf(why, 160, "rollout engine: %.140s", ir.why);
		else
			snprintf(why, 160, "rollout engine: its weights with "
				 "DP attention (%.2f GB per GPU) leave no KV "
				 "cache", o->weights / 1e9);
		return GP_OK;
	}
	ctok = o->kv_budget / kvtok;
	m2 = rl_lenx_moment2(&r.len);
	/* A running sequence holds on average its prompt and half its
	 * length-biased response: p + E[L^2] / (2 E[L]). */
	held = prompt_len + m2 / (2.0 * resp->mean);
	/* One sequence lives on every GPU of a TP engine, on one GPU of a
	 * DP-attention engine (kvtok is then the engine's mean per GPU). */
	if ((prompt_len + r.len.hi) * (r.dp ? r.ic.tp : 1) > ctok) {
		snprintf(why, 160, "rollout engine: one sequence of %.0f "
			 "tokens needs %.2f GB of KV per GPU, the budget is "
			 "%.2f GB", prompt_len + r.len.hi,
			 (prompt_len + r.len.hi) * kvtok *
			 (r.dp ? r.ic.tp : 1) / 1e9, o->kv_budget / 1e9);
		return GP_OK;
	}
	if (static_batch >= 1) {
		if (r.dp)
			return gp_fail(err, "rollout_dp_attention: a static "
				       "batch engine (the hybrid engine) has "
				       "no DP attention");
		if (roll_static(&r, n, floor(static_batch), engines, kvtok,
				o->kv_budget, why, o))
			return GP_EINVAL;
		if (why[0])
			return GP_OK;
		o->mean_batch = o->steps > 0 ? n * resp->mean / o->steps : 0;
		o->gen_tokens_per_s = N * resp->mean / (o->prefill +
							o->decode);
		return GP_OK;
	}
	/* a >= 2 steps ahead the engine holds a steps' samples: its batch
	 * is what a x n of them fill.  It never restarts, so its running
	 * set is the steady, length-biased one -- held tokens a sequence,
	 * more than a batch started together holds at its peak (whose
	 * shortest responses end first): at most ctok / held run, or
	 * max_batch. */
	B = ahead >= 2 ? fmax(1.0, fmin(ahead * n, floor(fmin(ctok / held,
		roll->max_batch)))) : roll_batch(&r, roll, n, ctok, held);
	o->batch = B;
	o->queued = ahead >= 2 || B < n;
	if (roll_prefill(&r, roll, n, o))
		return GP_EINVAL;
	if (ahead >= 2) {
		o->longest = rl_lenx_longest(&r.len, n);
		roll_steady(&r, n, B, held, kvtok, o->kv_budget, resp->mean,
			    o);
		if (r.bad || roll_alone(&r, roll, n, ahead, ctok, held,
					kvtok, resp->mean, o))
			return GP_EINVAL;
		if (r.dp)
			dp_stall(&r, roll, n, o);
		o->mean_batch = o->steps > 0 ? n * resp->mean / o->steps : 0;
		o->gen_tokens_per_s = N * resp->mean / (o->prefill +
							o->decode);
		return GP_OK;
	}
	/* A synchronous rollout ends when every engine has returned its
	 * batch: the driver gathers them all before the next phase (NeMo
	 * RL's generate: ray.get over every DP shard's worker, then
	 * BatchedDataDict.from_batches), so the step waits for the engine
	 * holding the longest of all N responses, decoding it alone after
	 * its other samples end -- E[max of N] = theta H_N for the
	 * exponential, not the longest of one engine's n. */
	of = ahead == 0 ? fmax(n, N) : n;
	o->longest = rl_lenx_longest(&r.len, of);
	if (roll_decode(&r, roll, n, of, B, ctok, held, kvtok, o->kv_budget,
			resp->mean, o))
		return GP_EINVAL;
	if (ahead == 1 && inflight) {
		roll_inflight(&r, roll, n, group, ctok, held, kvtok,
			      resp->mean, o);
		if (r.bad)
			return GP_EINVAL;
	}
	if (r.dp)
		dp_stall(&r, roll, n, o);
	o->mean_batch = o->steps > 0 ? n * resp->mean / o->steps : 0;
	o->gen_tokens_per_s = N * resp->mean / (o->prefill + o->decode);
	return GP_OK;
}
