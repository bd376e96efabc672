/*
 * serve_plan.c - a MoE deployment from its steps (see serve.h): the
 * decode batch, colocated or disaggregated pools, the KV transfer, the
 * pool ratio, tokens/s and cost; and the search for the fewest GPUs that
 * meet a throughput target under an inter-token-latency bound.
 *
 * Steady state (as infer_run): a decode GPU holds B sequences, each
 * gaining `accept` tokens per step.  Colocated, the same GPUs also
 * prefill every request (`share` GPU-seconds each), and with EP every
 * GPU of the instance steps together, so a user waits for the prefills
 * of its GPU too: ITL = tpot + (n - 1) / n B share / (output - 1), the
 * prompts of the instance's n = B tp sequences but the user's own
 * (infer_itl_loaded; its own prompt is its TTFT).
 * Disaggregated
 * (DistServe, Zhong et al. OSDI 2024; Splitwise, Patel et al. ISCA 2024;
 * DeepSeek day 6), decode steps are never interrupted, prefill runs on
 * its own pool and each request's KV cache crosses the network once.
 */
#include "serve.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct dec {
	int fits;
	char why[200];
	double B;
	serve_mem mem;
	serve_step st;        /* decode step at B */
	serve_step pst;       /* colocated: the prefill step */
	double accept, tpot, itl, share, tps_gpu;
	double share_ep;      /* of share, the routed experts' part */
	double eager;         /* colocated: s per decode step, on average,
	                         of the steps a prompt chunk keeps off the
	                         CUDA graph (eager_cost) */
	double eager_steps;   /* colocated: the share of decode steps that
	                         carry a chunk somewhere in the instance */
	double ttft;          /* colocated: the TTFT (the prefill step) of a
	                         layout refused by ttft_max; 0 otherwise */
	double ttft_burst;    /* colocated burst: the mean over its requests
	                         of each's time to first token (burst); 0:
	                         none */
} dec;

typedef struct pre {
	int fits;
	char why[200];
	serve_mem mem;
	serve_step st;
	double in_gpu;        /* prompt tokens/s per GPU */
	double kvb;           /* KV bytes per prompt token sent */
	double nic;           /* B/s per GPU to the network */
	double kv_transfer;   /* s per request */
	double ttft;          /* the TTFT (step + KV transfer) of a shape
	                         refused by ttft_max; 0 otherwise */
} pre;

static double nic_gpu(const serve_cfg *c)
{
	const gp_topo *t = &c->topo;
	double b;

	if (t->nics <= 0)
		return 0.0;
	b = t->nics * t->nic.bw * t->nic.achievable / t->gpus_per_node;
	if (t->nic_path_bw > 0 && b > t->nic_path_bw)
		b = t->nic_path_bw;
	return b;
}

/* The sum a batch of one needs: the KV admitted for a sequence is its
 * mean under the paged policy (input + output/2 tokens, serve_memory's
 * kv_admit), which is less than the "KV per sequence" the result shows
 * (input + output): the message says which length it counts, so the
 * two numbers are not read as one quantity.  Under TP attention a GPU's
 * batch of one is its group's tp sequences, each GPU holding its share of
 * all of them (serve_memory: kv = a x one sequence's share): said so, where
 * "one sequence's KV" read as one sequence's (DeepSeek-V3 TP16: 2.447 GB,
 * 16 x 0.153). */
static void no_fit_mem(char *why, size_t n, const serve_mem *m,
                       const serve_cfg *c, const serve_layout *L,
                       const char *pool)
{
	char kv[96];
	int a = L->dp_attention ? 1 : L->tp;

	if (a > 1)
		snprintf(kv, sizeof kv, "KV %.3f for TP%d attention's %d "
		         "sequences", m->kv_admit / 1e9, a, a);
	else
		snprintf(kv, sizeof kv, "one sequence's KV %.3f",
		         m->kv_admit / 1e9);
	snprintf(why, n, "%s: needs %.2f GB per GPU (weights %.2f, %s%s, "
	         "buffers %.2f, workspace %.2f, "
	         "reserve %.2f), has %.2f GB after the margin", pool,
	         (m->weights + m->kv_admit + m->a2a_buffer + m->workspace +
	          m->reserve) / 1e9, m->weights / 1e9, kv,
	         c->base.kv_reserve_max ? "" : " at in + out/2",
	         m->a2a_buffer / 1e9, m->workspace / 1e9, m->reserve / 1e9,
	         (c->base.capacity - m->margin) / 1e9);
}

/* Colocated with DP attention each rank prefills its own requests, but
 * the ranks of an EP instance step together (every MoE layer's
 * all-to-all), so a step in which any rank runs a prompt chunk lasts that
 * chunk for all of them: "the iteration time is dominated by the slowest
 * rank" (TensorRT-LLM tech blog 10, ADP Balance Strategy, whose baseline
 * round-robin scheduling on 8 GB200s averaged a 54% balance ratio and
 * 25,664 tokens/s against a 39,552 speed of light).  A rank starts
 * B / steps requests a decode step and runs input / prefill_tokens
 * chunks for each, a chunk in a fraction p of its steps; with the ranks
 * scheduled independently (each its own round-robin share, none waiting
 * for the others), a step holds a chunk somewhere with probability
 * 1 - (1 - p)^N, so the instance's prompts take (1 - (1 - p)^N) / p times
 * the time they would lined up: N when prompts are rare, 1 when every
 * step prefills on every rank.  TP attention prefills the same batch on
 * every rank: no stall.  What stalls is a rank's own work -- the blog
 * places the imbalance "within the Attention module": a rank's chunk
 * runs its attention, its dense and shared-expert linears and its
 * all-to-all alone -- while the routed experts run every rank's tokens
 * together (expert parallelism): the chunk's routed tokens spread over
 * all N GPUs' experts, the same expert work whenever it comes, so that
 * part of a prompt (share_ep, serve_step_routed of the prefill step)
 * costs its own time. */
double serve_prefill_stall(double p, double N)
{
	if (!(p > 0.0) || p >= 1.0 || !(N > 1.0))
		return 1.0;
	return (1.0 - pow(1.0 - p, N)) / p;
}

static double coloc_stall(const serve_cfg *c, const serve_layout *L,
                          double B, double accept)
{
	double steps;

	if (!L->dp_attention || L->ep <= 1 || L->tp <= 1 ||
	    c->base.output <= 1 || !(B > 0))
		return 1.0;
	steps = (c->base.output - 1.0) / accept;
	return serve_prefill_stall(infer_prompt_share(B,
	                                              infer_new_prompt(&c->base),
	                                              steps,
	                                              c->prefill_tokens),
	                           L->tp);
}

/* The share of an instance's decode steps that carry a prompt chunk on
 * some rank: a rank's attention group (B a sequences) starts B a / steps
 * requests a step, each input / prefill_tokens chunks, a chunk in a
 * fraction p of its steps; with DP attention some rank of N holds one in
 * 1 - (1 - p)^N of them (p x coloc_stall), with TP attention the group is
 * the instance (p); every step once p >= 1. */
static double chunk_steps(const serve_cfg *c, const serve_layout *L,
                          double B, double accept)
{
	double a = L->dp_attention ? 1.0 : L->tp, steps, p;

	if (c->base.output <= 1 || !(B > 0))
		return 1.0;
	steps = (c->base.output - 1.0) / accept;
	p = infer_prompt_share(B * a, infer_new_prompt(&c->base), steps,
	                       c->prefill_tokens);
	return fmin(1.0, p * coloc_stall(c, L, B, accept));
}

/* A colocated step that carries a prompt chunk runs its forward without
 * the CUDA graph: TensorRT-LLM's PyTorch flow graphs a batch only when it
 * holds no context request (ScheduledRequests.can_run_cuda_graph), and
 * with attention DP only when no rank's batch does -- the ranks all-gather
 * [can_run_cuda_graph, batch_size] and every rank runs eagerly unless all
 * are generation-only at one size (tensorrt_llm/_torch/pyexecutor/
 * cuda_graph_runner.py, maybe_get_cuda_graph and _get_padded_batch);
 * SGLang captures decode batches only (cuda_graph_runner.py can_run), so
 * its extend passes run eagerly too.  Such a step launches the pass's
 * kernels one by one: the decode step priced at the device's stream
 * launch instead of its graph launch (roof_device launch, graph_launch:
 * catalog/archs.lua), once per step that carries a chunk. */
static int eager_cost(const gp_model *m, const roof_device *d,
                      const serve_cfg *c, const serve_layout *L, double B,
                      const serve_step *st, double accept, double *eager,
                      double *share, gp_error *err)
{
	serve_cfg k = *c;
	serve_step e;

	*eager = 0.0;
	*share = chunk_steps(c, L, B, accept);
	if (c->base.runtime != INFER_GRAPHS)
		return GP_OK;
	k.base.runtime = INFER_KERNELS;
	if (serve_step_time(m, d, &k, L, SERVE_DECODE, B, &e, err))
		return GP_EINVAL;
	*eager = *share * fmax(0.0, e.time - st->time);
	return GP_OK;
}

/* GPU-seconds of the B prompts of a rank's B requests, colocated: the
 * rank's own part stalled (coloc_stall), the routed experts' not. */
static double prompt_cost(const serve_cfg *c, const serve_layout *L,
                          double B, const dec *o)
{
	return B * ((o->share - o->share_ep) *
	            coloc_stall(c, L, B, o->accept) + o->share_ep);
}

/* GPU-seconds a request's prompt costs its GPU, colocated (share), and
 * of them the routed experts' (share_ep), at B decodes per GPU (st): a
 * request's prompt is input / prefill_tokens chunks of its attention
 * group, a GPU's B sequences B x a of the group's.  A chunk costs
 *  - where the runtime runs it in the decodes' step (c->mixed), what it
 *    adds to that step: serve_mixed_time at B less the decode step, one
 *    weight pass for both.  TensorRT-LLM: "With this feature, sequences
 *    in the context phase can be processed together with sequences in
 *    the generation phase" (docs, Paged Attention, IFB, and Request
 *    Scheduling), max_num_tokens counting both; gp.infer prices its
 *    mixed step the same way (infer_run.c mixed_of);
 *  - otherwise a prefill step of its own (o->pst), weights read again:
 *    SGLang mixes only with --enable-mixed-chunk ("Enabling mixing
 *    prefill and decode in a batch when using chunked prefill.",
 *    server_args.py, default False). */
static int prompt_share(const gp_model *m, const roof_device *d,
                        const serve_cfg *c, const serve_layout *L,
                        double B, const serve_step *st, dec *o,
                        gp_error *err)
{
	double per = infer_new_prompt(&c->base) / c->prefill_tokens *
		(L->dp_attention ? 1.0 : L->tp), dt, de;
	serve_step mx;

	if (!c->mixed) {
		o->share = o->pst.time * per;
		o->share_ep = o->share * serve_step_routed(&o->pst) /
			o->pst.time;
		return GP_OK;
	}
	if (serve_mixed_time(m, d, c, L, B, c->prefill_tokens, &mx, err))
		return GP_EINVAL;
	/* What the chunk adds to the step: its rank's own part (attention,
	 * dense and shared linears, the all-to-all it sends), which
	 * coloc_stall stalls, and the routed experts' part, which every GPU
	 * of the instance runs for it (the chunk's tokens spread over
	 * their experts), the same work whenever it comes: with DP
	 * attention each of the instance's tp ranks' chunks adds it to
	 * every GPU, so a GPU's own chunk costs its GPU tp times the one
	 * chunk's (the separate prefill step's routed part, where every
	 * rank prefills at once, counts the same). */
	dt = fmax(0.0, mx.time - st->time);
	de = fmin(dt, fmax(0.0, serve_step_routed(&mx) -
	                   serve_step_routed(st)));
	o->share_ep = de * per * (L->dp_attention ? L->tp : 1.0);
	o->share = (dt - de) * per + o->share_ep;
	return GP_OK;
}

/* Prefill steps until a request's first token: its prompt's tokens the
 * prefix cache does not hold, prefill_tokens a step (serve_step.c prices
 * one step of a chunk), so a prompt longer than the chunk takes
 * ceil(new / prefill_tokens) steps before its last chunk yields the
 * token, as SGLang's chunked prefill splits a prompt over
 * chunked_prefill_size: "the maximum number of tokens in a chunk for the
 * chunked prefill" (server_args.py), one chunk a scheduler step.  The
 * TTFT was one step whatever the chunk: prefill_tokens 1 on a 2048-token
 * prompt read 25.6 ms on deepseek-v3 EP16.  Each step is priced at the
 * chunks' mean KV (serve_step.c chunk_kv: cached + (P + 1) / 2), so the
 * steps together read the whole prompt's causal attention. */
static double prompt_steps(const serve_cfg *c)
{
	return fmax(1.0, ceil(infer_new_prompt(&c->base) /
	                      c->prefill_tokens));
}

/* Why a layout misses the TTFT bound (ttft_max, s): its TTFT is the
 * result's own ttft -- the prefill steps of the prompt's chunks
 * (colocated), the prefill pool's steps and the KV transfer
 * (disaggregated) -- which
 * prices no queueing and no decode batch: the bound picks the layout,
 * not the batch. */
#define TTFT_COLOC "a colocated instance's prefill steps"
#define TTFT_DISAGG "a prefill pool's steps and the KV transfer"
static void ttft_why(char *buf, size_t n, double ttft_max, double ttft,
                     int disagg)
{
	snprintf(buf, n, "TTFT %.4g ms is over the bound, %.4g ms (%s)",
	         ttft * 1e3, ttft_max * 1e3, disagg ? TTFT_DISAGG :
	         TTFT_COLOC);
}

/* ITL a user sees at batch B. */
static int itl_at(const gp_model *m, const roof_device *d,
                  const serve_cfg *c, const serve_layout *L, int coloc,
                  double B, dec *o, serve_step *st, double *itl,
                  gp_error *err)
{
	double eager, share;

	if (serve_step_time(m, d, c, L, SERVE_DECODE, B, st, err))
		return GP_EINVAL;
	*itl = st->time / o->accept;
	if (coloc && prompt_share(m, d, c, L, B, st, o, err))
		return GP_EINVAL;
	if (coloc && c->base.output > 1) {
		if (eager_cost(m, d, c, L, B, st, o->accept, &eager, &share,
		               err))
			return GP_EINVAL;
		/* the one rule gp.infer's itl_load takes (infer_itl_loaded):
		 * the GPU's cycle for its B requests is their prompts plus
		 * (output - 1) / accept steps, each with its eager part.  The
		 * instance steps together, its B x tp sequences (B a GPU,
		 * each rank's own with DP attention, the group's with TP)
		 * each a like share of its prompts' time: all but a user's
		 * own fall in its decode (its own is its TTFT), none for a
		 * single stream (concurrency 1 on TP8: B = 1/8) */
		*itl = infer_itl_loaded(*itl, prompt_cost(c, L, B, o) +
		                        (c->base.output - 1.0) / o->accept *
		                        (st->time + eager),
		                        c->base.output - 1.0, B * L->tp);
	}
	return GP_OK;
}

/* A burst's prices (burst_step): an attention group's decode step at a
 * doubling batch of its sequences (x: the group's, x / a per GPU), a
 * prompt's time and what a step that carries a chunk adds off the graph. */
#define BURST_TABLE 40
typedef struct burst_prices {
	double x[BURST_TABLE], t[BURST_TABLE];
	int n;
	double prompt, eager;
	/* a prefill step of its own (!c->mixed, TP attention): the group's
	 * prefill of pk[i] prompts, pt[i] s, up to a chunk's (pk[np - 1]
	 * = prefill_tokens / prompt); np 0 elsewhere */
	double pk[BURST_TABLE], pt[BURST_TABLE];
	int np;
} burst_prices;

/* A step of nd decodes (the group's: at least one whole sequence) and
 * proc prompt tokens that completes fin prompts: the decode step at that
 * batch, off the graph where it carries a chunk, and the prompts' time
 * (prompt_cost's, the chunk steps of their own or what the mixed step
 * adds). */
static double burst_step(void *ctx, double nd, double proc, double fin,
                         double gen)
{
	const burst_prices *b = ctx;
	/* spread lengths (gen >= 0): the prompts that wait at the step
	 * (infer_prefill_wait, as gp.infer's finite_step) */
	double t = gen >= 0.0 && b->np > 0 ?
		infer_prefill_wait(fin, b->pk, b->pt, b->np) :
		b->prompt * fin;

	/* the table's decode steps at the mean context throughout */

	if (nd > 1e-9)
		t += infer_run_itl(b->x, b->t, b->n, ceil(nd)) +
			(proc > 0.0 ? b->eager : 0.0);
	/* A step of prompt tokens alone still runs the model's forward
	 * once, its weights read as a one-sequence decode step reads them
	 * (b->t[0], the group's step at one sequence): a prompt's share of
	 * a full chunk step (b->prompt) is that chunk's cost spread over
	 * its tokens, so a burst of a few short prompts, a step of a
	 * fraction of prefill_tokens, was priced at that fraction of the
	 * chunk step, below any forward (DeepSeek-V3 on 8 H200, 2 prompts
	 * of 1 token: a step of 54 us; its one-sequence decode step is
	 * tens of ms). */
	else if (proc > 0.0 && b->n > 0)
		t = fmax(t, b->t[0]);
	return t;
}

/* A colocated burst (c->base.requests, all sent at once, throughput the
 * run's output over its time from the first send to the last token:
 * vLLM's benchmark_serving "Output token throughput" over its
 * benchmark_duration, as gp.infer's run_finite prices trtllm-bench's):
 * each attention group (a GPU with DP attention, the instance with TP)
 * serves requests / groups of them, at most B a at once, through
 * infer_burst -- the one mechanism gp.infer's runs take: admission while
 * the KV holds them, their prompts prefill_tokens a step, every running
 * request decoded once a step, the batch shrinking as they finish, at the
 * mean lengths or spread (c->base.output_max).  A request's decode steps are (output - 1) / accept (MTP
 * emits accept tokens a step).  Sets o->tps_gpu; keeps the steady state's
 * where the run is longer than infer_burst follows. */
static int burst(const gp_model *m, const roof_device *d,
                 const serve_cfg *c, const serve_layout *L, dec *o,
                 gp_error *err)
{
	burst_prices b;
	serve_step st;
	double a = L->dp_attention ? 1.0 : L->tp, bg = o->B * a, x, t, q;
	double n = c->base.requests / (c->gpus / a);
	double lens[INFER_QUANTILES], shr[INFER_QUANTILES];
	infer_ttft first;  /* the burst's TTFTs */
	int nl, i;

	memset(&b, 0, sizeof b);
	for (x = 1.0; b.n < BURST_TABLE; x *= 2.0) {
		double at = fmin(x, fmax(bg, 1.0));

		if (serve_step_time(m, d, c, L, SERVE_DECODE, at / a, &st, err))
			return GP_EINVAL;
		b.x[b.n] = at;
		b.t[b.n++] = st.time;
		if (at >= bg)
			break;
	}
	b.prompt = prompt_cost(c, L, o->B, o) / bg;
	b.eager = o->eager_steps > 0.0 ? o->eager / o->eager_steps : 0.0;
	/* SGLang without --enable-mixed-chunk prefills the prompts waiting
	 * at a step in a step of their own (infer_prefill_wait): the
	 * group's prefill of k whole prompts, k doubling up to the chunk's
	 * prefill_tokens / prompt, whose time a prompt is b.prompt (the
	 * chunk's share, o->pst).  With DP attention each rank prefills its
	 * own while the others wait at the MoE (coloc_stall): not followed
	 * here. */
	q = infer_new_prompt(&c->base);
	if (!c->mixed && !L->dp_attention && q < c->prefill_tokens &&
	    o->pst.time > 0.0) {
		double kmax = c->prefill_tokens / q, k;
		serve_cfg pc = *c;

		for (k = 1.0; k < kmax && b.np < BURST_TABLE - 1; k *= 2.0) {
			pc.prefill_tokens = k * q;
			if (serve_step_time(m, d, &pc, L, SERVE_PREFILL, 0, &st,
			                    err))
				return GP_EINVAL;
			b.pk[b.np] = k;
			b.pt[b.np++] = st.time;
		}
		b.pk[b.np] = kmax;
		b.pt[b.np++] = b.prompt * kmax;
	}
	/* Spread outputs (infer_output_quantiles): each class's decode
	 * steps as the mean's, (output - 1) / accept. */
	nl = infer_output_quantiles(&c->base, n, lens, shr);
	for (i = 0; i < nl; i++)
		lens[i] = 1.0 + (lens[i] - 1.0) / o->accept;
	t = infer_burst_ttft(n, bg, 1.0 + (c->base.output - 1.0) / o->accept,
	                     infer_new_prompt(&c->base), c->prefill_tokens, 0,
	                     0, lens, shr, nl, burst_step, &b, &first);
	if (t > 0.0)
		o->tps_gpu = c->base.requests * c->base.output / t / c->gpus;
	/* The burst's mean TTFT, as gp.infer's run_finite takes it: every
	 * request sent at once (no client concurrency below the burst) and
	 * more than one an attention group, each behind the prompts ahead
	 * of it in the walk (infer_burst_ttft). */
	if (t > 0.0 && first.mean > 0.0 && n > 1.0 + 1e-9 &&
	    (c->base.concurrency <= 0 ||
	     c->base.concurrency >= c->base.requests))
		o->ttft_burst = first.mean;
	return GP_OK;
}

/* The decode side of layout L: batch, step, ITL and tokens/s per GPU. */
static int decode_side(const gp_model *m, const roof_device *d,
                       const serve_cfg *c, const serve_layout *L,
                       int coloc, dec *o, gp_error *err)
{
	serve_phase ph = coloc ? SERVE_COLOCATED : SERVE_DECODE;
	double itl, steps, B, top, want;
	int lo, hi;

	memset(o, 0, sizeof *o);
	o->accept = serve_accept_length(c->mtp, c->acceptance,
	                                c->accept_decay);
	if (serve_memory(m, c, L, ph, 1.0, &o->mem, err))
		return GP_EINVAL;
	if (coloc) {
		if (serve_step_time(m, d, c, L, SERVE_PREFILL, 0, &o->pst,
		                    err))
			return GP_EINVAL;
		/* The prompts' share at the batch: itl_at. */
	}
	if (o->mem.max_batch < 1) {
		no_fit_mem(o->why, sizeof o->why, &o->mem, c, L, "decode");
		return GP_OK;
	}
	/* Colocated, a request's first token is its prefill steps'
	 * (colocated() below: ttft = prompt_steps x pst.time), at any
	 * batch. */
	if (coloc && c->ttft_max > 0 &&
	    prompt_steps(c) * o->pst.time > c->ttft_max) {
		o->ttft = prompt_steps(c) * o->pst.time;
		ttft_why(o->why, sizeof o->why, c->ttft_max, o->ttft, 0);
		return GP_OK;
	}
	/* The most batch per GPU: what the KV holds, at most the engine's
	 * max_batch over its attention group (serve.h batch_cap), which can
	 * be a share of one sequence (max_batch 8 on a TP16 group: 0.5).
	 * It capped the GPU's batch at max_batch itself, so --max-batch 8
	 * on EP16 with TP attention decoded 8 x 16 = 128 sequences an
	 * instance, and a batch over it was refused as the KV's. */
	top = fmin(o->mem.max_batch, o->mem.batch_cap);
	/* SGLang's 48 running requests while it speculates, over more DP
	 * attention ranks than that: each rank's share floors to none (its
	 * scheduler asserts "max_running_request is zero"). */
	if (top <= 0.0) {
		snprintf(o->why, sizeof o->why, "mtp: the runtime runs %d "
		         "requests at once while it speculates, fewer than "
		         "the %d DP attention ranks (each runs %d / %d, "
		         "floored: none)", c->spec_running, L->tp,
		         c->spec_running, L->tp);
		return GP_OK;
	}
	/* A concurrency's share runs at most top at once, the rest queued
	 * (serve_cfg.queue: gp.infer's rule, infer_queue_batch); a batch
	 * asked is run as asked or refused. */
	want = c->queue ? infer_queue_batch(c->batch, top) : c->batch;
	if (want > 0) {
		if (want > o->mem.max_batch) {
			snprintf(o->why, sizeof o->why, "batch %g per GPU does "
			         "not fit: the KV budget holds %d per GPU "
			         "(%.3f GB each)", c->batch, o->mem.max_batch,
			         o->mem.kv_admit / 1e9);
			return GP_OK;
		}
		if (want > o->mem.batch_cap) {
			snprintf(o->why, sizeof o->why, "batch %g per GPU is "
			         "over max_batch %d (the engine's sequences a "
			         "step, over an attention group of %g GPU%s: "
			         "%g per GPU)", c->batch, c->base.max_batch,
			         L->dp_attention ? 1.0 : (double)L->tp,
			         L->dp_attention || L->tp == 1 ? "" : "s",
			         o->mem.batch_cap);
			return GP_OK;
		}
		B = want;
	} else if (c->itl_max > 0 && c->base.output > 1) {
		/* The largest batch within the bound (ITL grows with it).
		 * With one output token, the prefill's own, no decode step
		 * runs (the result has no ITL): the bound binds nothing, as
		 * in infer_gpus_for, and takes the KV's batch below; it was
		 * refused "no batch meets ITL" by a step that never runs.
		 * A cap under one sequence a GPU (batch_cap < 1) is the one
		 * batch tried: the bisection is on whole sequences. */
		if (itl_at(m, d, c, L, coloc, fmin(1.0, top), o, &o->st,
		           &itl, err))
			return GP_EINVAL;
		if (itl > c->itl_max) {
			infer_no_batch_why(o->why, sizeof o->why, c->itl_max,
			                   itl);
			o->itl = itl;
			return GP_OK;
		}
		lo = 1;
		hi = (int)floor(top);
		while (lo < hi) {
			int mid = lo + (hi - lo + 1) / 2;

			if (itl_at(m, d, c, L, coloc, mid, o, &o->st, &itl,
			           err))
				return GP_EINVAL;
			if (itl <= c->itl_max)
				lo = mid;
			else
				hi = mid - 1;
		}
		B = top < 1.0 ? top : lo;
	} else {
		B = top;
	}
	/* A burst of requests: no GPU holds more than its share of them
	 * (gp.infer's pick_batch caps a finite run's batch alike). */
	if (coloc && c->base.requests > 0) {
		double groups = c->gpus /
			(L->dp_attention ? 1.0 : (double)L->tp);

		/* Fewer requests than attention groups: some groups would
		 * step with no sequence, which the serving step (priced with
		 * every group busy, as the all-to-all's ranks step together)
		 * does not price: said, not priced at a fraction of one. */
		if (c->base.requests < groups) {
			snprintf(o->why, sizeof o->why,
			         "requests %g is fewer than the %g attention "
			         "groups (%s); a burst is priced with every "
			         "group serving at least one", c->base.requests,
			         groups, L->dp_attention ? "DP attention: one a "
			         "GPU" : "one a TP instance");
			return GP_OK;
		}
		B = fmin(B, c->base.requests / c->gpus);
	}
	o->B = B;
	if (serve_memory(m, c, L, ph, B, &o->mem, err) ||
	    itl_at(m, d, c, L, coloc, B, o, &o->st, &o->itl, err))
		return GP_EINVAL;
	o->tpot = o->st.time / o->accept;
	if (coloc && c->base.output > 1 &&
	    eager_cost(m, d, c, L, B, &o->st, o->accept, &o->eager,
	               &o->eager_steps, err))
		return GP_EINVAL;
	/* output tokens per GPU: B requests' output in B prefills (when
	 * colocated) and the decode steps of output - 1 tokens (the first
	 * comes from the prefill), those that carry a chunk eager. */
	steps = (c->base.output - 1.0) / o->accept;
	o->tps_gpu = B * c->base.output /
		((coloc ? prompt_cost(c, L, B, o) : 0.0) +
		 steps * (o->st.time + o->eager) +
		 (coloc || steps > 0 ? 0.0 : o->st.time));
	if (coloc && c->base.requests > 0 && burst(m, d, c, L, o, err))
		return GP_EINVAL;
	o->fits = 1;
	return GP_OK;
}

/* The prefill side of layout L (its own pool). */
static int prefill_side(const gp_model *m, const roof_device *d,
                        const serve_cfg *c, const serve_layout *L, pre *o,
                        gp_error *err)
{
	double per_tok, a = L->dp_attention ? 1.0 : L->tp;

	memset(o, 0, sizeof *o);
	if (serve_memory(m, c, L, SERVE_PREFILL, 0, &o->mem, err))
		return GP_EINVAL;
	if (o->mem.used + o->mem.margin > c->base.capacity) {
		snprintf(o->why, sizeof o->why, "prefill: needs %.2f GB per "
		         "GPU (weights %.2f, buffers %.2f, a chunk's "
		         "activations and KV %.2f, reserve %.2f), has %.2f GB "
		         "after the margin",
		         o->mem.used / 1e9, o->mem.weights / 1e9,
		         o->mem.a2a_buffer / 1e9, o->mem.workspace / 1e9,
		         o->mem.reserve / 1e9,
		         (c->base.capacity - o->mem.margin) / 1e9);
		return GP_OK;
	}
	if (serve_step_time(m, d, c, L, SERVE_PREFILL, 0, &o->st, err))
		return GP_EINVAL;
	/* Prompt tokens taken in: the step computes st.tokens of them, the
	 * part of each prompt the prefix cache does not hold
	 * (infer_new_prompt); the pool serves input / that per computed. */
	o->in_gpu = o->st.tokens / o->st.time * c->base.input /
		infer_new_prompt(&c->base);
	/* KV sent per prompt token: the whole model's cache (the MLA
	 * latent; every KV head), the MTP layers' too; an attention
	 * group's GPUs send their requests' share in parallel.  Every
	 * prompt token's, the cached ones' too: the decode pool holds the
	 * whole prompt's KV for its decode steps. */
	per_tok = model_kv_bytes_per_token(m, c->base.kv_bytes);
	if (c->mtp > 0)
		per_tok += c->mtp_layers * per_tok / m->layers;
	o->kvb = per_tok;
	o->nic = nic_gpu(c);
	if (o->nic > 0 && o->in_gpu * per_tok > o->nic)
		o->in_gpu = o->nic / per_tok;  /* the NICs cap the pool */
	o->kv_transfer = o->nic > 0 ? c->base.input * per_tok /
		(a * o->nic) + c->topo.nic.latency : 0.0;
	/* serve_run's ttft, disaggregated: these steps and the transfer. */
	if (c->ttft_max > 0 &&
	    prompt_steps(c) * o->st.time + o->kv_transfer > c->ttft_max) {
		o->ttft = prompt_steps(c) * o->st.time + o->kv_transfer;
		ttft_why(o->why, sizeof o->why, c->ttft_max, o->ttft, 1);
		return GP_OK;
	}
	o->fits = 1;
	return GP_OK;
}

static void pool_of(serve_pool *p, const serve_layout *L, int gpus,
                    const serve_mem *mem, const serve_step *st,
                    double tps, const serve_cfg *c)
{
	p->lay = *L;
	p->gpus = gpus;
	p->nodes = (int)ceil((double)L->tp / c->topo.gpus_per_node);
	p->ar_norm_fused = serve_ar_norm_on(c, L);
	p->mem = *mem;
	p->step = *st;
	p->tokens_per_s_gpu = tps;
}

static void cost(const serve_cfg *c, serve_result *r)
{
	if (c->base.price > 0 && r->tokens_per_s > 0)
		r->cost_per_mtok = gp_cost_per_mtok(c->base.price, c->gpus,
						    r->tokens_per_s);
}

/* The TTFT of a request that joins a colocated instance's steady state
 * (more than one sequence an instance, decode steps, no burst): gp.infer's
 * rule (infer.h infer_loaded_ttft, the same function), the request
 * waiting the residual of the instance's step in flight, then its
 * prompt's steps at the budget a step leaves.  The steady state's steps,
 * as the instance's tokens/s prices them:
 * - mixed (vLLM V1, TensorRT-LLM: prompt_share): a share eager_steps of
 *   the decode steps carries a chunk somewhere in the instance (chunk_
 *   steps), each the mixed step of B decodes and a full chunk of
 *   prefill_tokens (serve_mixed_time) off the CUDA graph (eager_cost's
 *   step), the others the decode step.  The chunk's room is prefill_
 *   tokens less the attention group's decode tokens: vLLM's budget holds
 *   the decodes first (infer_run.c loaded_ttft), and SGLang's mixed chunk
 *   alike -- its scheduler passes "running_bs if self.is_mixed_chunk else
 *   0" as PrefillAdder's mixed_with_decode_tokens, and "self.rem_chunk_
 *   tokens -= mixed_with_decode_tokens" (sgl-project/sglang python/sglang/
 *   srt/managers/schedule_policy.py, PrefillAdder.__init__);
 * - a prefill step of its own (SGLang without --enable-mixed-chunk): the
 *   scheduler runs a waiting prompt before the next decode ("new_batch =
 *   self.get_new_batch_prefill()", scheduler.py get_next_batch_to_run,
 *   the chunked request first: "self.chunked_req = adder.add_chunked_
 *   req(self.chunked_req)"), so its chunks run in back-to-back prefill
 *   steps of prefill_tokens (o->pst), room the whole chunk; the steady
 *   state's prefill steps are x = B a P / (steps prefill_tokens) a
 *   decode step (an attention group's B a prompts of P tokens over its
 *   steps decode steps, coloc_stall times that with DP attention's
 *   ranks each prefilling on its own), a share x / (1 + x) of the steps,
 *   the decode steps at st + eager (the mean the tokens/s takes).
 * Each of the prompt's steps is the steady state's chunk step (a chunk of
 * prefill_tokens: its own P / n is never more), so no price is passed. */
static int coloc_loaded(const gp_model *m, const roof_device *d,
                        const serve_cfg *c, const serve_layout *L,
                        const dec *o, infer_loaded *lt, gp_error *err)
{
	double a = L->dp_attention ? 1.0 : L->tp, P, steps, f, tc, td, room;
	serve_step mx;

	memset(lt, 0, sizeof *lt);
	if (!(o->B * L->tp > 1.0 + 1e-9) || c->base.output <= 1 ||
	    o->ttft_burst > 0.0)
		return GP_OK;
	P = infer_new_prompt(&c->base);
	steps = (c->base.output - 1.0) / o->accept;
	if (c->mixed) {
		if (serve_mixed_time(m, d, c, L, o->B, c->prefill_tokens, &mx,
		                     err))
			return GP_EINVAL;
		f = o->eager_steps;
		tc = mx.time + (o->eager_steps > 0.0 ?
		                o->eager / o->eager_steps : 0.0);
		td = o->st.time;
		room = c->prefill_tokens - o->B * a * (1.0 + c->mtp);
	} else {
		double x = o->B * a * P / (steps * c->prefill_tokens) *
			coloc_stall(c, L, o->B, o->accept);

		f = x / (1.0 + x);
		tc = o->pst.time;
		td = o->st.time + o->eager;
		room = c->prefill_tokens;
	}
	return infer_loaded_ttft(P, room, f, tc, td, c->prefill_tokens, NULL,
	                         NULL, lt, err);
}

static int colocated(const gp_model *m, const roof_device *d,
                     const serve_cfg *c, serve_result *r, gp_error *err)
{
	dec o;
	infer_loaded lt;

	if (decode_side(m, d, c, &c->decode, 1, &o, err))
		return GP_EINVAL;
	r->disagg = 0;
	r->accept = o.accept;
	if (!o.fits) {
		r->fits = 0;
		snprintf(r->why, sizeof r->why, "%s", o.why);
		pool_of(&r->decode, &c->decode, c->gpus, &o.mem, &o.st, 0, c);
		return GP_OK;
	}
	r->fits = 1;
	pool_of(&r->decode, &c->decode, c->gpus, &o.mem, &o.st, o.tps_gpu, c);
	/* prompt tokens taken in per GPU-second of prefill steps, the
	 * cached ones too (as prefill_side's in_gpu) */
	pool_of(&r->prefill, &c->decode, c->gpus, &o.mem, &o.pst,
	        o.pst.tokens / o.pst.time * c->base.input /
	        infer_new_prompt(&c->base), c);
	r->tpot = o.tpot;
	r->itl = o.itl;
	r->ttft_steps = prompt_steps(c);
	r->prefill_tokens = c->prefill_tokens;
	r->ttft = r->ttft_steps * o.pst.time;
	/* a burst: its requests' mean, one prompt's kept as ttft_one */
	if (o.ttft_burst > 0.0) {
		r->ttft_one = r->ttft;
		r->ttft = o.ttft_burst;
	}
	/* a steady load: the TTFT of a request joining it, one prompt's
	 * steps kept as ttft_one */
	if (coloc_loaded(m, d, c, &c->decode, &o, &lt, err))
		return GP_EINVAL;
	/* the decodes fill the budget: one prompt's TTFT kept, and the
	 * result says the loaded one is not priced */
	if (lt.full)
		r->ttft_full = c->prefill_tokens - lt.room;
	if (lt.ttft > 0.0) {
		r->ttft_one = r->ttft;
		r->ttft_one_steps = r->ttft_steps;
		r->ttft = lt.ttft;
		r->ttft_loaded = 1;
		r->ttft_wait = lt.wait;
		r->ttft_steps = lt.steps;
		r->ttft_step = lt.step;
	}
	r->prefill_share = o.share;
	r->prefill_experts = o.share_ep;
	r->prefill_stall = coloc_stall(c, &c->decode, o.B, o.accept);
	r->eager_steps = o.eager_steps;
	r->eager = o.eager;
	r->tokens_per_s_gpu = o.tps_gpu;
	r->tokens_per_s = o.tps_gpu * c->gpus;
	r->input_tokens_per_s = r->tokens_per_s * c->base.input /
		c->base.output;
	cost(c, r);
	return GP_OK;
}

int serve_run(const gp_model *m, const roof_device *d, const serve_cfg *c,
              serve_result *r, gp_error *err)
{
	dec o;
	pre p;
	serve_cfg cc;
	serve_result cr;
	double best = -1, Nd, Np, rate, P, D;
	int k, kbest = 0;

	if (!r)
		return gp_fail(err, "serve_run: NULL output");
	if (serve_check(m, d, c, err))
		return GP_EINVAL;
	memset(r, 0, sizeof *r);
	if (!c->disagg)
		return colocated(m, d, c, r, err);

	r->disagg = 1;
	if (decode_side(m, d, c, &c->decode, 0, &o, err) ||
	    prefill_side(m, d, c, &c->prefill, &p, err))
		return GP_EINVAL;
	r->accept = o.accept;
	if (!o.fits || !p.fits) {
		snprintf(r->why, sizeof r->why, "%s", !o.fits ? o.why : p.why);
		pool_of(&r->decode, &c->decode, 0, &o.mem, &o.st, 0, c);
		pool_of(&r->prefill, &c->prefill, 0, &p.mem, &p.st, 0, c);
		return GP_OK;
	}
	/* Split the GPUs: whole instances of each pool; the requests/s the
	 * pair sustains is the smaller of the two pools' (decode: output
	 * tokens / output, prefill: prompt tokens / input). */
	Nd = c->decode.tp;
	Np = c->prefill.tp;
	if (c->prefill_gpus > 0) {
		P = c->prefill_gpus;
		D = c->gpus - P;
	} else {
		for (k = 1; k * Np + Nd <= c->gpus; k++) {
			double pk = k * Np, dk = floor((c->gpus - pk) / Nd) * Nd;

			rate = fmin(dk * o.tps_gpu / c->base.output,
			            pk * p.in_gpu / c->base.input);
			if (rate > best) {
				best = rate;
				kbest = k;
			}
		}
		P = kbest * Np;
		D = floor((c->gpus - P) / Nd) * Nd;
	}
	rate = fmin(D * o.tps_gpu / c->base.output,
	            P * p.in_gpu / c->base.input);
	r->fits = 1;
	pool_of(&r->decode, &c->decode, (int)D, &o.mem, &o.st, o.tps_gpu, c);
	pool_of(&r->prefill, &c->prefill, (int)P, &p.mem, &p.st, p.in_gpu, c);
	r->tpot = o.tpot;
	r->itl = o.tpot;
	r->kv_transfer = p.kv_transfer;
	r->ttft_steps = prompt_steps(c);
	r->prefill_tokens = c->prefill_tokens;
	r->ttft = r->ttft_steps * p.st.time + p.kv_transfer;
	r->tokens_per_s = rate * c->base.output;
	r->input_tokens_per_s = rate * c->base.input;
	r->tokens_per_s_gpu = r->tokens_per_s / c->gpus;
	/* Prefill GPUs per decode GPU at which both pools run full. */
	r->pool_ratio = o.tps_gpu * c->base.input /
		(p.in_gpu * c->base.output);
	cost(c, r);

	/* The same GPUs colocated, for comparison. */
	cc = *c;
	cc.disagg = 0;
	cc.gpus = (c->gpus / c->decode.tp) * c->decode.tp;
	if (cc.gpus >= c->decode.tp && colocated(m, d, &cc, &cr, err) == GP_OK) {
		r->coloc_fits = cr.fits;
		r->coloc_tokens_per_s_gpu = cr.fits ? cr.tokens_per_s /
			c->gpus : 0.0;
		r->coloc_itl = cr.itl;
		r->coloc_batch = cr.fits ? (int)cr.decode.step.batch : 0;
	} else if (cc.gpus >= c->decode.tp) {
		return GP_EINVAL;
	}
	return GP_OK;
}

/* ---- the search -------------------------------------------------- */

#define MAX_CAND 64

/* A layout the configuration accepts. */
static int check_cand(const gp_model *m, const serve_cfg *c,
                      const serve_layout *L, gp_error *e)
{
	return serve_check_layout(m, c, L, e);
}

static int candidates(const gp_model *m, const serve_cfg *c, int prefill,
                      serve_layout *out)
{
	static const int nodes[] = {1, 2, 3, 4, 6, 8, 9, 12, 16, 18, 24, 32,
	                            36};
	int G = c->topo.gpus_per_node, n = 0, N, dp, tbo, i;
	gp_error e;

	/* The unit an instance is counted in: a node, or where a node is an
	 * NVLink domain of several hosts (GB200/GB300 NVL72: 18 trays of 4
	 * GPUs, comm_topo_domain) a host, as deployments there size their
	 * servers: SGLang's GB200 runs "use 12 nodes for decode and the
	 * remaining [2] for prefill" of the rack's 4-GPU trays, EP48 and 8
	 * GPUs (lmsys.org/blog/2025-06-16-gb200-part-1), and its GB300 work
	 * decodes "at DEP8" (lmsys.org, GB300 NVL72 long-context post).  In
	 * units of the 72-GPU domain the search tried TP72, TP144 and EP72
	 * up, and for DeepSeek-V3 at 50k tok/s planned 144 GB200s (EP72)
	 * where an EP8 instance, given, needs 32; an HGX node is one host
	 * (unchanged). */
	if (comm_topo_domain(&c->topo))
		G = c->topo.host_gpus;
	/* Tensor-parallel instances of one and two nodes (hosts). */
	for (i = 1; i <= 2 && n < MAX_CAND; i++) {
		serve_layout L;

		L.tp = G * i;
		L.ep = 1;
		L.dp_attention = L.tbo = 0;
		if (check_cand(m, c, &L, &e) == GP_OK)
			out[n++] = L;
	}
	if (m->moe.experts <= 0)
		return n;
	/* EP instances of whole nodes (the sizes of 1..36 nodes that
	 * deployments use: DeepSeek's 4 and 18, SGLang's 9, TensorRT-LLM's
	 * 36 ranks) whose expert slots split evenly. */
	for (i = 0; i < (int)(sizeof nodes / sizeof nodes[0]); i++) {
		serve_layout P;

		N = G * nodes[i];
		P.tp = P.ep = N;
		P.dp_attention = P.tbo = 1;
		if ((m->moe.experts + serve_redundant(m, c, &P)) % N != 0)
			continue;
		for (dp = 1; dp >= 0; dp--)
			for (tbo = 1; tbo >= 0; tbo--) {
				serve_layout L;

				L.tp = L.ep = N;
				L.dp_attention = dp;
				L.tbo = tbo;
				if (prefill && (!dp || !tbo || nodes[i] > 8))
					continue;
				if (n < MAX_CAND &&
				    check_cand(m, c, &L, &e) == GP_OK)
					out[n++] = L;
			}
	}
	return n;
}

/* GPUs of whole instances of n GPUs for `need` tokens/s at `per_gpu`
 * each; -1 when out of range. */
static double instances(double need, double per_gpu, int n)
{
	double g;

	if (!(per_gpu > 0))
		return -1.0;
	g = ceil(need / (per_gpu * n)) * n;
	if (g < n)
		g = n;
	return g > GP_COUNT_MAX ? -1.0 : g;
}

/* The fewest GPUs of whole prefill instances for need prompt tokens/s
 * among the np shapes pl (pin: each one's prompt tokens/s per GPU): the
 * count, its shape's index in *jb; -1 when none can. */
static double prefill_pool(double need, const double *pin,
			   const serve_layout *pl, int np, int *jb)
{
	double P = -1;
	int j;

	for (j = 0; j < np; j++) {
		double g = instances(need, pin[j], pl[j].tp);

		if (g > 0 && (P < 0 || g < P)) {
			P = g;
			*jb = j;
		}
	}
	return P;
}

/* Keep in why (n bytes) why the closest decode layout missed: the
 * quickest batch of one (*best1: its ITL), else the first shortfall. */
static void note_miss(const dec *o, double *best1, char *why, size_t n)
{
	if (o->itl > 0 && (*best1 < 0 || o->itl < *best1)) {
		*best1 = o->itl;
		snprintf(why, n, "%s", o->why);
	} else if (!why[0]) {
		snprintf(why, n, "%s", o->why);
	}
}

int serve_target(const gp_model *m, const roof_device *d, const serve_cfg *c,
                 double target, double itl_max, int fix_layout,
                 int fix_disagg, int skip_tp, serve_cfg *cfg_out,
                 serve_result *best, gp_error *err)
{
	serve_layout dl[MAX_CAND], pl[MAX_CAND];
	double pin[MAX_CAND], bestg = -1, bestp = 0, bestt = 0, best1 = -1;
	double ttft1 = -1;    /* the quickest TTFT of a layout ttft_max
	                         refused (a decode instance's colocated, a
	                         prefill shape's disaggregated) */
	serve_cfg t, win;
	int nd, np, i, j, mode, lo, hi, found = 0, pj = -1, big = 0;
	char why[200] = "";
	const char *twhy = "";  /* what the quickest TTFT refused is */

	if (!c || !cfg_out || !best)
		return gp_fail(err, "serve_target: NULL argument");
	if (infer_target_check(target, itl_max, err) != GP_OK)
		return GP_EINVAL;
	if (serve_check(m, d, c, err))
		return GP_EINVAL;
	t = *c;
	t.itl_max = itl_max;
	t.batch = 0;
	t.prefill_gpus = 0;
	if (fix_layout) {
		dl[0] = c->decode;
		pl[0] = c->prefill;
		nd = np = 1;
	} else {
		nd = candidates(m, c, 0, dl);
		np = candidates(m, c, 1, pl);
	}
	/* Prompt tokens/s per GPU of each prefill shape (disagg). */
	for (j = 0; j < np; j++) {
		pre p;

		if (prefill_side(m, d, &t, &pl[j], &p, err))
			return GP_EINVAL;
		pin[j] = p.fits ? p.in_gpu : 0.0;
		if (!p.fits && p.ttft > 0 && (ttft1 < 0 || p.ttft < ttft1)) {
			ttft1 = p.ttft;
			twhy = TTFT_DISAGG;
		}
	}
	lo = fix_disagg ? c->disagg : 0;
	hi = fix_disagg ? c->disagg : (c->topo.nics > 0 ? 1 : 0);
	for (mode = lo; mode <= hi; mode++) {
		for (i = 0; i < nd; i++) {
			dec o;
			double D, P = 0, tot;
			int jb = -1;

			/* A colocated tensor-parallel instance is plain TP
			 * replicas, which the caller prices itself (skip_tp). */
			if (skip_tp && !fix_layout && !mode && dl[i].ep == 1 &&
			    !dl[i].dp_attention)
				continue;
			if (decode_side(m, d, &t, &dl[i], !mode, &o, err))
				return GP_EINVAL;
			if (!o.fits && o.ttft > 0) {
				if (ttft1 < 0 || o.ttft < ttft1) {
					ttft1 = o.ttft;
					twhy = TTFT_COLOC;
				}
				continue;
			}
			if (!o.fits) {
				note_miss(&o, &best1, why, sizeof why);
				continue;
			}
			D = instances(target, o.tps_gpu, dl[i].tp);
			if (D < 0) {
				big = 1;
				continue;
			}
			if (mode) {
				P = prefill_pool(target * c->base.input /
						 c->base.output, pin, pl, np,
						 &jb);
				if (P < 0)
					continue;
			}
			tot = D + P;
			if (tot > GP_COUNT_MAX) {
				big = 1;
				continue;
			}
			if (bestg < 0 || tot < bestg ||
			    (tot == bestg && o.tps_gpu > bestt)) {
				bestg = tot;
				bestp = P;
				bestt = o.tps_gpu;
				win = t;
				win.decode = dl[i];
				win.disagg = mode;
				pj = jb;
				found = 1;
			}
		}
	}
	if (!found && big)
		return infer_target_too_big(target, err);
	if (!found && ttft1 > 0)
		/* Layouts the TTFT bound refused: the quickest TTFT any of
		 * them gets (what a looser bound would take). */
		return gp_fail(err, "no layout meets ITL %.3g ms and TTFT "
		               "%.4g ms: the quickest first token takes "
		               "%.4g ms (%s)", itl_max * 1e3, t.ttft_max * 1e3,
		               ttft1 * 1e3, twhy);
	if (!found)
		return gp_fail(err, "no layout meets ITL %.3g ms%s%s",
		               itl_max * 1e3, why[0] ? ": " : "", why);
	if (win.disagg)
		win.prefill = pl[pj];
	win.gpus = (int)bestg;
	win.prefill_gpus = win.disagg ? (int)bestp : 0;
	*cfg_out = win;
	return serve_run(m, d, &win, best, err);
}
