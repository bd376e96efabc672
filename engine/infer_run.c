/*
 * infer_run.c - a serving deployment end to end (see infer.h): the
 * replica's memory (memory_infer.c's model), its KV-bound batch, the
 * prefill and decode steps priced by infer_step, and the GPUs a target
 * throughput needs.  The step's mathematics and its sources are in
 * infer.c.
 */
#include "infer.h"
#include "rl_lengths.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* The memory model's view of this replica (memory.h, gp_infer_cfg):
 * seqs sequences of ctx tokens, the workspace of the engine's token
 * budget max_num_tokens. */
static void mem_cfg(const infer_cfg *c, double seqs, double ctx,
                    int offload, gp_infer_cfg *ic)
{
	memset(ic, 0, sizeof *ic);
	ic->weights.bits = c->weight_bits;
	ic->embed_bits = c->embed_bits;
	ic->head_bits = c->head_bits;
	ic->kv_bytes = c->kv_bytes;
	ic->mamba_ssm_bytes = c->mamba_ssm_bytes;
	ic->tp = c->tp;
	ic->pp = c->pp;
	ic->seqs = seqs;
	ic->ctx = ctx;
	ic->chunk_tokens = c->max_num_tokens;
	/* A runtime that reserves one ubatch's graph (llama.cpp's compute
	 * buffer: ggml-alloc sizes it for the worst-case graph of n_ubatch
	 * tokens, "CUDA0 compute buffer size = 640.01 MiB" for the 8B at
	 * n_ctx 8192 in the llama-bench cases' logs), its activations F32,
	 * and with flash off the layer's F32 scores over the context.
	 * Cross-check: 512 x 4 B x (2 x 4096 + 4096 + 1024 + 1024 + 4096 +
	 * 3 x 14336) = 126 MB, plus 512 x 8192 x 32 x 4 B = 537 MB of
	 * scores: 663 MB = 632 MiB against the logged 640.01. */
	if (c->ubatch > 0 && c->graph_act_bytes > 0) {
		ic->chunk_tokens = c->ubatch;
		ic->act_bytes = c->graph_act_bytes;
		ic->score_ws = !c->flash && c->score_bytes > 0 ?
			c->graph_act_bytes : 0.0;
	}
	ic->kv_free_fraction = c->kv_free_fraction;
	ic->offload = offload;
	ic->offload_layers = offload ? c->offload_layers : 0;
	/* llama.cpp's row split: the main GPU holds its share of the
	 * weights and the whole KV cache (step_layers). */
	ic->kv_whole = c->row_split && c->tp > 1;
}

/* The replica's weights with one sequence, and the layers it offloads
 * to the host (*n_off); a replica that cannot hold them leaves the
 * reason in r->why. */
static int run_weights(const gp_model *m, const infer_cfg *c, int stage,
                       infer_result *r, gp_mem_result *mr, double *n_off,
                       gp_error *err)
{
	gp_infer_cfg ic;
	double x;

	/* The whole model at its dtypes: one unsplit copy. */
	mem_cfg(c, 1, c->input + c->output, 0, &ic);
	ic.tp = ic.pp = 1;
	if (mem_infer(m, &ic, c->capacity, &c->reserve, mr, err) != GP_OK)
		return GP_EINVAL;
	r->weights_total = mr->bytes[GP_MEM_WEIGHTS];
	/* One sequence of input + output on the replica's most loaded GPU,
	 * layers offloaded to the host when that is allowed and needed
	 * (mem_infer moves whole layers with their KV share, never more
	 * than the stage holds). */
	mem_cfg(c, 1, c->input + c->output,
	        c->offload_bw > 0 || c->offload_link_bw > 0, &ic);
	if (mem_infer(m, &ic, c->capacity, &c->reserve, mr, err) != GP_OK)
		return GP_EINVAL;
	r->weights_gpu = mr->bytes[GP_MEM_WEIGHTS];
	r->workspace = mr->bytes[GP_MEM_WORKSPACE];
	r->kv_per_seq = mr->kv_per_seq;
	if (!mr->fits && mr->cpu_layers == 0) {
		snprintf(r->why, sizeof r->why, "needs %.2f GB per GPU "
		         "(weights %.2f, one sequence's KV %.2f, workspace "
		         "%.2f, reserve %.2f), has %.2f GB after the margin",
		         mr->total / 1e9, mr->weight_bytes / 1e9,
		         r->kv_per_seq / 1e9, r->workspace / 1e9,
		         (mr->total - mr->allocated) / 1e9, mr->budget / 1e9);
		return GP_OK;
	}
	if (mr->cpu_layers > 0) {
		*n_off = mr->cpu_layers;
		if (!mr->fits) {
			/* Every layer of the stage (or the stated count)
			 * is on the host and the ends, one sequence's KV
			 * share and the workspace still do not fit. */
			snprintf(r->why, sizeof r->why, "needs %.2f GB per "
			         "GPU even with %d of its %d layers in host "
			         "memory, has %.2f GB after the margin",
			         mr->total / 1e9, mr->cpu_layers, stage,
			         mr->budget / 1e9);
			return GP_OK;
		}
		/* The GPUs on one host hold their layers in that host's
		 * memory: the node's the caller gives, or where the node
		 * spans hosts their host's share of it (memory.h
		 * mem_host_fit, the rule training's offload follows;
		 * mem_host_share). */
		mem_host_fit(mr, c->host_capacity, infer_host_node(c),
			     c->host_gpus, c->gpus);
		x = mr->host_need;
		if (!mr->fits) {
			snprintf(r->why, sizeof r->why, "offloading %.0f of "
			         "%d layers needs %.2f GB of host memory, has "
			         "%.2f GB", *n_off, stage, x / 1e9,
			         mr->host_memory / 1e9);
			return GP_OK;
		}
		r->offload_layers = *n_off;
		r->offload_bytes = mr->weight_bytes - mr->bytes[GP_MEM_WEIGHTS];
	}
	return GP_OK;
}

/* The KV a request is admitted with, the KV budget per GPU and the
 * sequences it holds (r->max_batch_kv). */
static int run_kv(const gp_model *m, const infer_cfg *c, int stage,
                  const gp_mem_result *mr, double n_off, infer_result *r,
                  gp_error *err)
{
	gp_infer_cfg ic;
	gp_mem_result ma;
	double x, room, kv_gpu;

	/* Paged KV (Kwon et al. 2023, vLLM, sec. 4) allocates blocks as
	 * tokens arrive; with continuous batching the running sequences are
	 * spread over their lives, so each holds input + output / 2 on
	 * average.  A no-evict scheduler reserves the whole length. */
	mem_cfg(c, 1, c->kv_reserve_max ? c->input + c->output :
	        c->input + c->output / 2.0, 0, &ic);
	if (mem_infer(m, &ic, c->capacity, &c->reserve, &ma, err) != GP_OK)
		return GP_EINVAL;
	r->kv_admit = ma.kv_per_seq;
	if (n_off > 0) {
		/* What the GPU keeps after the offload: the resident layers'
		 * KV share per sequence in the room the budget leaves. */
		room = mr->budget - (mr->total - mr->bytes[GP_MEM_KV]);
		kv_gpu = r->kv_admit * (stage - n_off) / stage;
		r->kv_budget = room > 0 ? room : 0;
		x = kv_gpu > 0 ? floor(r->kv_budget / kv_gpu) : c->max_batch;
	} else if (c->kv_tokens > 0) {
		/* The pool the engine reports (infer_cfg.kv_tokens: vLLM's
		 * vllm:cache_config_info kv_cache_size_tokens, num_gpu_blocks
		 * x block_size) in place of the one the memory rule leaves:
		 * its bytes at the admitted sequence's KV a token, and the
		 * sequences it holds at that length. */
		double tok = c->kv_reserve_max ? c->input + c->output :
			c->input + c->output / 2.0;

		r->kv_budget = c->kv_tokens * ma.kv_per_seq / tok;
		x = floor(c->kv_tokens / tok);
	} else {
		r->kv_budget = ma.kv_room;
		x = ma.max_seqs;
	}
	r->max_batch_kv = x > c->max_batch ? c->max_batch : (int)x;
	/* what the budget holds, said beside a max_batch below it (the
	 * text's "KV budget 19.03 GB (1 sequence)" under ExLlamaV2's
	 * max_batch_size 1 read as a budget of one sequence) */
	r->kv_seqs = x > INT_MAX ? INT_MAX : (int)x;
	return GP_OK;
}

double infer_queue_batch(double want, double hold)
{
	return want > hold ? hold : want;
}

/* The running batch per replica: the asked batch, the concurrency's
 * share (at most what the KV holds: infer_queue_batch, the rest wait),
 * or what the KV holds; 0 with the reason in r->why when none. */
static int run_batch(const infer_cfg *c, infer_result *r)
{
	int B;

	if (c->batch > 0) {
		/* Over the engine's cap (TensorRT-LLM's max_batch_size, vLLM's
		 * max_num_seqs) the batch is refused by that cap, not by the KV
		 * (the KV message quoted the cap as the budget's sequences). */
		if (c->batch > c->max_batch) {
			snprintf(r->why, sizeof r->why, "batch %d is over "
			         "max_batch %d (the engine's sequences a step)",
			         c->batch, c->max_batch);
			return 0;
		}
		if (c->batch > r->max_batch_kv) {
			snprintf(r->why, sizeof r->why, "batch %d needs %.2f GB"
			         " of KV per GPU, the budget is %.2f GB (%d "
			         "sequences)", c->batch,
			         c->batch * r->kv_admit / 1e9,
			         r->kv_budget / 1e9, r->max_batch_kv);
			return 0;
		}
		B = c->batch;
	} else if (c->concurrency > 0) {
		B = (int)infer_queue_batch((c->concurrency + r->replicas -
		                            1) / r->replicas, r->max_batch_kv);
	} else {
		B = r->max_batch_kv;
	}
	/* A finite run of c->requests issued at once: a replica serves
	 * requests / replicas of them, and no step batches more sequences
	 * than it holds (10 requests on one H100 were reported at the
	 * KV-bound batch of 205: its ITL and per-user rate, beside the
	 * run's throughput of a batch of 10). */
	if (c->requests > 0 && B > 0) {
		double per = ceil(c->requests / r->replicas);

		if (B > per)
			B = (int)per;
	}
	if (B < 1) {
		snprintf(r->why, sizeof r->why, "one sequence's KV (%.2f GB "
		         "per GPU) does not fit the %.2f GB budget",
		         r->kv_admit / 1e9, r->kv_budget / 1e9);
		return 0;
	}
	return B;
}

/* A finite run (infer_cfg.requests): cohorts of requests that end their
 * prefill within one window of RUN_WINDOWS-th of the output length leave
 * decode together, so a run is followed in fixed memory (STYLE 3) to
 * within 1/RUN_WINDOWS of a request's life; at most RUN_ITER_MAX steps
 * are followed (a longer run stays at the steady state, where the ramp
 * and the drain weigh < 1 / 1000 of it). */
#define RUN_WINDOWS 256
#define RUN_COHORTS (2 * RUN_WINDOWS + 2)
#define RUN_ITER_MAX 5e7
#define RUN_TABLE 40

/* Decode step time at micro-batch x: piecewise linear over the priced
 * batches b[0] = 1 < ... < b[n-1] (step_layers' costs are affine in the
 * batch between the points a kernel's tiles or the touched experts
 * change; the points double). */
double infer_run_itl(const double *b, const double *t, int n, double x)
{
	int k;

	if (x <= b[0] || n == 1)
		return t[0];
	for (k = 1; k < n - 1 && x > b[k]; k++)
		;
	return t[k - 1] + (t[k] - t[k - 1]) * (x - b[k - 1]) /
		(b[k] - b[k - 1]);
}

/* The decode step at batch b and context ctx as a step that carries
 * prompt tokens runs it: without the CUDA graph.  TensorRT-LLM's PyTorch
 * flow graphs a batch only when it holds no context request
 * (ScheduledRequests.can_run_cuda_graph: "return (not
 * self.context_requests)", tensorrt_llm/_torch/pyexecutor/scheduler.py;
 * cuda_graph_runner.py runs the graph only then), SGLang captures decode
 * batches only (cuda_graph_runner.py can_run), and vLLM V1 captures steps
 * of at most its compilation_config max_capture_size tokens (512 in its
 * logged defaults), fewer than a step that prefills a prompt chunk
 * beside its decodes usually holds.  Such a step launches the same
 * kernels from the stream:
 * priced at the device's stream launch instead of its graph launch
 * (roof_device launch, graph_launch: catalog/archs.lua), as gpuplan.serve
 * prices a colocated step that carries a chunk (serve_plan.c eager_cost).
 * The kernels and eager runtimes launch every step that way already. */
static int eager_step(const gp_model *m, const roof_device *d,
                      const infer_cfg *c, double b, double ctx,
                      double n_off, double *t, gp_error *err)
{
	infer_cfg k = *c;
	infer_phase ph;

	if (k.runtime == INFER_GRAPHS)
		k.runtime = INFER_KERNELS;
	if (infer_step(m, d, &k, b, 1, ctx, n_off, &ph, err) != GP_OK)
		return GP_EINVAL;
	*t = ph.time;
	return GP_OK;
}

/* The time of a step's attention rows (model_layer_ops' "attention":
 * scores and values against the cached keys), s. */
static double attn_time(const infer_phase *ph)
{
	double t = 0.0;
	int i;

	for (i = 0; i < ph->nops; i++)
		if (strcmp(ph->ops[i].name, "attention") == 0)
			t += ph->ops[i].total;
	return t;
}

/* The GPU's part of a step's per-sequence head: the lm_head GEMM and
 * the sampling over the vocabulary (infer_step's "logits" and "sample",
 * priced for each sequence's last token), s. */
static double head_gpu(const infer_phase *ph)
{
	double t = 0.0;
	int i;

	for (i = 0; i < ph->nops; i++)
		if (strcmp(ph->ops[i].name, "logits") == 0 ||
		    strcmp(ph->ops[i].name, "sample") == 0)
			t += ph->ops[i].total;
	return t;
}

/* The whole per-sequence head of a step: head_gpu and the engine's host
 * work between steps (infer_phase.engine_time), which is per step and
 * per sequence that emits a token, not per prompt token, s. */
static double head_time(const infer_phase *ph)
{
	return head_gpu(ph) + ph->engine_time;
}

/* The batch a decode-only step of b sequences runs at (b >= 1, whole):
 * with the runtime's captured sizes (infer_cfg.graph_sizes) the smallest
 * of them >= b, the graph's b sequences and its empty slots -- "if the
 * batch size does not match any captured size, the runtime pads it up to
 * the nearest larger captured size, running the model over some empty
 * slots.  The wasted computation is proportional to the gap between the
 * actual batch and the next captured size" (TensorRT-LLM tech blog 20,
 * Tuning CUDA Graph Batch Sizes); vLLM's pad_for_cudagraph
 * (bs_to_padded_graph_size) and SGLang's cuda_graph_runner (bisect over
 * capture_bs) pad alike.  0 above the largest: the step runs without a
 * graph (TensorRT-LLM's cuda_graph_runner has no graph for it, vLLM's
 * gpu_model_runner runs a batch over max_capture_size eagerly, SGLang's
 * can_run refuses bs > max_bs), priced as eager_step.  Without a list,
 * or for a runtime that launches every kernel anyway, b itself. */
static double graph_batch(const infer_cfg *c, double b)
{
	int i;

	if (c->runtime != INFER_GRAPHS || c->n_graph == 0)
		return b;
	for (i = 0; i < c->n_graph; i++)
		if (c->graph_sizes[i] >= b)
			return c->graph_sizes[i];
	return 0.0;
}

/* 1 when the runtime's CUDA graphs have a context limit
 * (infer_cfg.graph_max_ctx, vLLM V0's max_seq_len_to_capture; graph_step
 * below says why): a decode step past it runs off the graph. */
static int graph_ctx_limited(const infer_cfg *c)
{
	return c->runtime == INFER_GRAPHS && c->graph_max_ctx > 0.0;
}

/* A decode step past that limit: the eager runtime's step. */
static int off_graph_step(const gp_model *m, const roof_device *d,
                          const infer_cfg *c, double b, double ctx,
                          double n_off, infer_phase *ph, gp_error *err)
{
	infer_cfg k = *c;

	k.runtime = INFER_EAGER;
	return infer_step(m, d, &k, b, 1, ctx, n_off, ph, err);
}

/* The decode-only step of b sequences at context ctx as the graph runs
 * it, s: every row at the padded batch g = graph_batch(b) but the
 * attention, which runs over the b sequences' KV only (the padded slots
 * are dummy requests of no context: TensorRT-LLM's
 * add_dummy_requests, vLLM's slot_mapping -1 and zero seq_lens); above the
 * largest captured size the step launched from the stream (eager_step).
 * Past the runtime's graph context (infer_cfg.graph_max_ctx) the step
 * runs the model's forward op by op from Python: vLLM V0's model runner
 * takes its graph only when "max_context_len <=
 * self.max_context_len_to_capture" (0.4.x worker/model_runner.py
 * _prepare_decode; 0.5-0.7 _use_captured_graph, "max_decode_seq_len <=
 * self.runner.max_seq_len_to_capture"), else it calls the nn.Module
 * itself, as under --enforce-eager: priced as the eager runtime, the
 * host's dispatch (infer_eager_host) against the GPU's time.  ctx is the
 * step's (a request's mean decode context in run_times), so a request
 * whose decode crosses the limit is priced all on the side its mean
 * falls.  ph: the step at b (its rows, as the result shows them). */
static int graph_step(const gp_model *m, const roof_device *d,
                      const infer_cfg *c, double b, double ctx,
                      double n_off, infer_phase *ph, double *t,
                      gp_error *err)
{
	infer_phase pg;
	double g = graph_batch(c, b);

	if (graph_ctx_limited(c) && ctx > c->graph_max_ctx) {
		if (off_graph_step(m, d, c, b, ctx, n_off, ph, err) != GP_OK)
			return GP_EINVAL;
		*t = ph->time;
		return GP_OK;
	}
	if (infer_step(m, d, c, b, 1, ctx, n_off, ph, err) != GP_OK)
		return GP_EINVAL;
	*t = ph->time;
	if (g == 0.0)
		return eager_step(m, d, c, b, ctx, n_off, t, err);
	if (g > b) {
		if (infer_step(m, d, c, g, 1, ctx, n_off, &pg, err) != GP_OK)
			return GP_EINVAL;
		*t = pg.time - attn_time(&pg) + attn_time(ph) -
		     pg.engine_time + ph->engine_time;
	}
	return GP_OK;
}

/* The attention of k prompt tokens of prompts whose computed part is plen
 * tokens (infer_new_prompt), after c->cached keys found in the prefix cache, s:
 * whole prompts when k holds one (k / plen of them, each attending
 * causally to the cached keys and its own), else one chunk of k tokens of
 * a prompt cut into chunks of k, whose ends fall on average at cached +
 * (plen + k) / 2 (step_kv_mean: a chunk's tokens see the keys before it
 * and their own, causal). */
static int prompt_attn(const gp_model *m, const roof_device *d,
                       const infer_cfg *c, double k, double plen,
                       double n_off, double *t, gp_error *err)
{
	infer_cfg e = *c;
	infer_phase ph;
	double f = fmin(k, 1.0), q;

	/* Fluid counts: under one token, that share of one token's.  The
	 * callers pass k >= 1 (mixed_prices' points, mixed_steps' chunks);
	 * a run's fraction of a token is mixed_time's. */
	k = fmax(k, 1.0);
	q = fmin(k, plen);
	if (e.runtime == INFER_GRAPHS)
		e.runtime = INFER_KERNELS;
	if (infer_step(m, d, &e, k / q, q, c->cached + (k >= plen ? plen :
	               (plen + q) / 2.0), n_off, &ph, err) != GP_OK)
		return GP_EINVAL;
	*t = f * attn_time(&ph);
	return GP_OK;
}

/* The decodes of a step that carries prompt tokens, as vLLM V1 runs them
 * on FlashAttention-2 (infer_cfg.mixed_kv_per_qhead): V1's attention
 * backend makes one flash_attn_varlen_func call for the step's every
 * token, decodes and prompt chunks alike, with max_seqlen_q the step's
 * longest query (vllm/v1/attention/backends/flash_attn.py).  FA2's
 * mha_varlen_fwd folds a GQA group's query heads into one tile only
 * when "max_seqlen_q == 1" (seqlenq_ngroups_swapped,
 * csrc/flash_attn/flash_api.cpp of vllm-project/flash-attention), a
 * decode-only step; in a mixed step the paged cache goes to the split-KV
 * kernel (run_mha_fwd with force_split_kernel = paged_KV), whose grid is
 * "dim3 grid(num_m_block, params.b, params.h)" -- a thread block per
 * query head of each sequence -- and each block loads
 * "bidh / params.h_h_k_ratio"'s keys and values itself
 * (flash_fwd_kernel.h).  So a decode's cache is read once per query head
 * of its group, as mmha_decode prices kv_per_qhead, and its lone query
 * row fills a 64-row tile (kBlockM = 64 in run_mha_fwd_splitkv_dispatch):
 * 64 rows x 4 FLOP x head_dim per 4 x head_dim bytes of 16-bit K and V
 * is 64 FLOP a byte, under the A100's 312 TFLOPS / 2.04 TB/s = 153 ridge,
 * so the loads, not the wasted rows, bound it.  The blocks of one
 * group lie params.b x num_m_block blocks apart in launch order, but a
 * decode's blocks past its first m-block exit at once, so a group's
 * blocks may run close together and L2 serve part of the repeats; the
 * 64-row tiles' MMAs then bound them instead, 64 FLOP a byte of each
 * head's read: on an A100 at FlashAttention-2's 0.61 of 312 TFLOP/s
 * against 0.85 of 2.039 TB/s, 64 x 1.733 / 190.3 = 0.58 of their HBM
 * price (an A10: 0.43).  The device table holds no L2 rate: the repeats
 * are priced at the HBM rate, the most they can cost.
 * The decode-only step (swapped) and the prompt tokens are untouched.
 * vLLM PR #58013 says the same of its FA2 path ("The decodes also miss
 * FA2's max_seqlen_q == 1 path (packed GQA + split-KV), which only
 * activates when the whole call is decode") and splits the call. */
static void mixed_decode_cfg(infer_cfg *e)
{
	if (e->mixed_kv_per_qhead)
		e->kv_per_qhead = 1;
}

/* The prices of a mixed step (mixed_time), at x doubling from 1 to tmax:
 * of a step of x decodes at context ctx as a step that carries prompt
 * tokens runs it (eager_step), the part that every token pays alike (all
 * but the attention and the head), the attention, the head and the host
 * pace; and the attention of x prompt tokens (prompt_attn). */
typedef struct mixed_table {
	int n;
	double x[RUN_TABLE], tok[RUN_TABLE], attn[RUN_TABLE];
	double head[RUN_TABLE], host[RUN_TABLE], pattn[RUN_TABLE];
} mixed_table;

static int mixed_prices(const gp_model *m, const roof_device *d,
                        const infer_cfg *c, double tmax, double ctx,
                        double n_off, mixed_table *mt, gp_error *err)
{
	infer_cfg e = *c;
	infer_phase ph;
	double x;

	if (e.runtime == INFER_GRAPHS)
		e.runtime = INFER_KERNELS;
	/* The decodes' attention as the mixed step's kernel runs it
	 * (mixed_decode_cfg); it changes the attention alone. */
	mixed_decode_cfg(&e);
	mt->n = 0;
	for (x = 1.0; mt->n < RUN_TABLE; x *= 2.0) {
		double b = fmin(x, tmax);

		if (infer_step(m, d, &e, b, 1, ctx, n_off, &ph, err) != GP_OK ||
		    prompt_attn(m, d, c, b, infer_new_prompt(c), n_off,
		                &mt->pattn[mt->n], err) != GP_OK)
			return GP_EINVAL;
		mt->x[mt->n] = b;
		mt->attn[mt->n] = attn_time(&ph);
		mt->head[mt->n] = head_time(&ph);
		mt->tok[mt->n] = ph.gpu_time + ph.comm_time + ph.offload_time -
			mt->attn[mt->n] - head_gpu(&ph);
		mt->host[mt->n++] = ph.host_time;
		if (b >= tmax)
			break;
	}
	return GP_OK;
}

/* One step that carries k prompt tokens beside dec decodes, in an engine
 * that runs them in one forward pass (infer_cfg.chunked): vLLM's chunked
 * prefill -- V0 where it is on ("the policy is changed to prioritize
 * decode requests", the prompts filling what the budget leaves) and V1,
 * where it always is ("In vLLM V1, chunked prefill is always enabled by
 * default", vLLM docs, configuration/optimization.md, Chunked Prefill) --
 * and TensorRT-LLM's in-flight batching ("sequences in the context phase
 * can be processed together with sequences in the generation phase",
 * TensorRT-LLM docs, Paged Attention, IFB, and Request Scheduling).
 * SGLang runs a prefill batch of its own unless --enable-mixed-chunk is
 * given (python/sglang/srt/server_args.py: "Enabling mixing prefill and
 * decode in a batch when using chunked prefill.", default False), so it
 * keeps the separate prefill share.  The step's linears, norms and
 * all-reduces run over the dec + k tokens at once -- one pass over the
 * weights, where a prefill step of its own (run_times' prefill share)
 * reads them again -- priced as in a step of dec + k decodes run off the
 * CUDA graph (eager_step); its attention is the dec decodes' at the mean
 * context ctx and the k prompt tokens' own (prompt_attn), and the lm_head and sampling run for the sequences that emit a
 * token, the dec decodes and the k / plen prompts the step completes,
 * not for every prompt token (TensorRT-LLM and vLLM compute the logits
 * of each sequence's last token only).  vLLM V1 replays a piecewise
 * graph for a mixed step of at most its largest capture size (vLLM docs,
 * design/cuda_graphs.md: piecewise capture "excluding
 * cudagraph-unsupported operations (mainly attention)", used for
 * "non-uniform batches (i.e., prefill or mixed prefill-decode
 * batches)"): such small steps are priced with all their launches from
 * the stream, an overcharge of their non-attention launches.  The eager
 * runtime's host pace bounds the step as infer_step's does. */
static double mixed_of(double tok, double host, double attn, double pattn,
                       double head)
{
	return fmax(tok + attn + pattn + head, host);
}

/* From the table: dec decodes and k prompt tokens of prompts of plen
 * tokens, each fluid: a fraction of one pays that share of one's
 * attention (a run's last step may carry a fraction of a prompt token:
 * run_finite's requests per replica, or a token over pp stages). */
static double mixed_time(const mixed_table *mt, double dec, double k,
                         double plen)
{
	double T = dec + k;

	return mixed_of(infer_run_itl(mt->x, mt->tok, mt->n, T),
	                infer_run_itl(mt->x, mt->host, mt->n, T),
	                dec >= 1.0 ? infer_run_itl(mt->x, mt->attn, mt->n, dec) :
	                dec * mt->attn[0],
	                k >= 1.0 ? infer_run_itl(mt->x, mt->pattn, mt->n, k) :
	                k * mt->pattn[0],
	                infer_run_itl(mt->x, mt->head, mt->n,
	                        fmax(1.0, dec + k / plen)));
}

/* mixed_time priced at one point: dec > 0 decodes and k > 0 prompt
 * tokens, fluid as mixed_time's: under one decode (the budget-bound
 * state's D = max_num_tokens steps / (input + steps) decodes a step,
 * a third of one at 6144 in / 2 out in a 2048-token budget) that share
 * of one decode's attention, and at least one sequence's head. */
static int mixed_step(const gp_model *m, const roof_device *d,
                      const infer_cfg *c, double dec, double k, double ctx,
                      double n_off, double *t, gp_error *err)
{
	infer_cfg e = *c;
	infer_phase ph, pd, hs;
	double p, fd = fmin(dec, 1.0);

	if (e.runtime == INFER_GRAPHS)
		e.runtime = INFER_KERNELS;
	mixed_decode_cfg(&e);
	if (infer_step(m, d, &e, dec + k, 1, ctx, n_off, &ph, err) != GP_OK ||
	    infer_step(m, d, &e, fmax(dec, 1.0), 1, ctx, n_off, &pd,
	               err) != GP_OK ||
	    infer_step(m, d, &e, fmax(1.0, dec + k / infer_new_prompt(c)), 1,
	               ctx, n_off, &hs, err) != GP_OK ||
	    prompt_attn(m, d, c, k, infer_new_prompt(c), n_off, &p,
	                err) != GP_OK)
		return GP_EINVAL;
	*t = mixed_of(ph.gpu_time + ph.comm_time + ph.offload_time -
	              attn_time(&ph) - head_gpu(&ph), ph.host_time,
	              fd * attn_time(&pd), p, head_time(&hs));
	return GP_OK;
}

/* The run of c->requests requests issued at once, as trtllm-bench
 * measures it: "Output throughput (total output (OSL) tokens / end-to-end
 * latency)", the latency "last request end - 1st request start"
 * (tensorrt_llm/bench/dataclasses/reporting.py, total_latency_ns =
 * end_time - start_time over every request).  The engine admits requests
 * while the batch has room (B: the KV-bound batch, GUARANTEED_NO_EVICT
 * reserving each request's whole length) and prefills their prompts in
 * the tokens a step has beside its decodes (max_num_tokens counts both:
 * TensorRT-LLM's "maximum number of tokens (context + generation)" of a
 * batch), at share seconds a prompt; each step decodes every running
 * request once.  The batch fills over the first steps and empties over
 * the last output steps after the queue runs dry, both at a smaller
 * batch than the steady state's, which pays the step's fixed costs
 * (weights, launches) for fewer tokens; a step that prefills beside its
 * decodes launches its kernels one by one (eager_step).  Where the engine
 * runs the prompts in the decodes' forward pass (c->chunked, as
 * TensorRT-LLM's in-flight batching does) a step of dec decodes and proc
 * prompt tokens is one step of both (mixed_time); where it runs them in
 * steps of their own, a decode step plus share seconds a prompt.  A
 * replica serves requests / replicas of them.  Sets r->tokens_per_s. */
/* run_finite's prices of a step (infer_burst's step): its decode-only
 * table (tb, tt; te off the graph; ta the attention) and its mixed step's
 * (mt, where c->chunked). */
typedef struct finite_prices {
	const infer_cfg *c;
	double tb[RUN_TABLE], tt[RUN_TABLE], te[RUN_TABLE], ta[RUN_TABLE];
	double tv[RUN_TABLE]; /* past graph_max_ctx: the step dispatched
	                         op by op (graph_step), where it is set */
	int nt;
	mixed_table mt;
	double share, P, cavg;
	/* where the prompts prefill apart (!c->chunked): the prefill of
	 * pk[i] prompts, pt[i] s, up to the prompts a step holds
	 * (run_times' pb); np 0 elsewhere */
	double pk[RUN_TABLE], pt[RUN_TABLE];
	int np;
} finite_prices;

/* A step that carries prompt tokens runs off the graph (eager_step);
 * where the engine runs them in the decodes' forward pass (c->chunked)
 * it is one step of both (mixed_time), else a decode step plus the
 * prompts' prefill share. */
static double finite_step(void *ctx, double dec, double proc, double fin,
                          double gen)
{
	const finite_prices *f = ctx;
	const infer_cfg *c = f->c;
	double step, xd, g, ta, ca;
	/* the decodes' context past the graph's limit (graph_step): at
	 * their own context where spread, else the run's mean */
	int off = graph_ctx_limited(c) &&
	          (gen >= 0.0 ? c->input + gen : f->cavg) > c->graph_max_ctx;

	if (c->chunked && proc > 0.0)
		return mixed_time(&f->mt, dec > 1e-9 ? ceil(dec / c->pp) : 0.0,
		                  proc / c->pp, f->P);
	/* A decode-only step replays the graph at the captured size its
	 * batch pads to, its attention at the batch (graph_step); above
	 * the largest, or with prompt tokens, it runs off the graph. */
	/* Spread lengths (gen >= 0): the requests end apart, so each
	 * prefill takes the prompts that wait then (infer_prefill_wait),
	 * not a chunk's worth; at one length they end, and come back, in
	 * the cohorts the walk follows, a prefill of the whole cohort. */
	step = gen >= 0.0 && f->np > 0 ?
		infer_prefill_wait(fin, f->pk, f->pt, f->np) : f->share * fin;
	xd = ceil(dec / c->pp);
	g = proc > 0.0 ? 0.0 : graph_batch(c, xd);
	/* The attention at the decoding requests' own context (gen >= 0:
	 * spread lengths, input + gen) where the table's is the run's mean,
	 * input + output / 2: a decode's attention reads its sequence's KV,
	 * so its time scales with the context (a bucketed table's,
	 * infer_decode_ctx, by the same ratio). */
	ta = infer_run_itl(f->tb, f->ta, f->nt, xd);
	ca = gen >= 0.0 ? ta * ((c->input + gen) /
	                        (c->input + c->output / 2.0) - 1.0) : 0.0;
	if (dec > 1e-9 && off)
		step += ca + infer_run_itl(f->tb, f->tv, f->nt, xd);
	else if (dec > 1e-9)
		step += ca + (g == 0.0 ? infer_run_itl(f->tb, f->te, f->nt, xd) :
			infer_run_itl(f->tb, f->tt, f->nt, g) -
			infer_run_itl(f->tb, f->ta, f->nt, g) + ta);
	return step;
}

/* A burst's mean TTFT replaces one prompt's, kept as ttft_one. */
static void burst_ttft(infer_result *r, const infer_ttft *first)
{
	r->ttft_one = r->ttft;
	r->ttft = first->mean;
	r->ttft_p50 = first->p50;
	r->ttft_p99 = first->p99;
	r->ttft_burst = 1;
}

static int run_finite(const gp_model *m, const roof_device *d,
                      const infer_cfg *c, int B, double n_off,
                      double share, double cavg, infer_result *r,
                      gp_error *err)
{
	finite_prices fp, *f = &fp;
	double N, L = c->output, P = infer_new_prompt(c), bm, x, t, tmax;
	double lens[INFER_QUANTILES], shr[INFER_QUANTILES];
	double pre = 0.0, kvt = 0.0;  /* the preemption walk's batch cap and
	                                  KV tokens (0: infer_burst) */
	infer_ttft first;  /* the burst's TTFTs */
	int nl, burst;
	infer_phase ph;

	N = c->requests / r->replicas;
	bm = ceil((double)B / c->pp);
	nl = infer_output_quantiles(c, N, lens, shr);
	/* vLLM V1 (c->kv_preempt) admits a request on its prompt's blocks
	 * and preempts when the running requests' growth finds none
	 * (infer_burst_preempt): where max_num_seqs of the burst's requests
	 * at their whole length, input + output, overflow the KV budget, the
	 * admission at the mean length (B) is not what runs.  Followed for
	 * one length (nl 0), one stage, no offload, and a cache linear in
	 * the length (the admitted and the whole length's KV a sequence in
	 * proportion: no sliding window or recurrent state); elsewhere, and
	 * where the peak fits (then no request is ever preempted and the
	 * walk is infer_burst's at min(max_num_seqs, N)), infer_burst. */
	if (c->kv_preempt && c->chunked && !c->whole_prompts && nl == 0 &&
	    c->pp == 1 && n_off == 0 && !c->kv_reserve_max &&
	    c->batch == 0 && r->kv_admit > 0.0 && r->kv_budget > 0.0) {
		gp_infer_cfg ic;
		gp_mem_result ma;
		double lw = c->input + c->output, lm = c->input + c->output / 2.0;
		/* the requests in flight: max_num_seqs, or the client's
		 * concurrency's share where it holds fewer */
		double cap = c->concurrency > 0 ?
			fmin(c->max_batch, ceil((double)c->concurrency /
			                        r->replicas)) : c->max_batch;

		mem_cfg(c, 1, lw, 0, &ic);
		if (mem_infer(m, &ic, c->capacity, &c->reserve, &ma, err) != GP_OK)
			return GP_EINVAL;
		if (ma.kv_per_seq > 0.0 &&
		    fabs(ma.kv_per_seq / lw - r->kv_admit / lm) <=
		    1e-9 * ma.kv_per_seq / lw) {
			kvt = r->kv_budget / (ma.kv_per_seq / lw);
			if (fmin(N, cap) * lw > kvt && kvt >= lw)
				pre = fmin(ceil(N), cap);
		}
	}
	if (pre > 0.0)
		bm = pre;
	/* The table reaches the captured size the full batch pads to
	 * (graph_batch), so a padded step is read at a priced point or
	 * between two. */
	tmax = fmax(bm, graph_batch(c, bm));
	/* N L / B decode steps, the prompts' N P / max_num_tokens and a
	 * request's L: past RUN_ITER_MAX keep the steady state. */
	if (N * L / B + N * P / c->max_num_tokens +
	    fmax(L, c->output_max) > RUN_ITER_MAX)
		return GP_OK;
	memset(f, 0, sizeof *f);
	f->c = c;
	f->share = share;
	f->P = P;
	f->cavg = cavg;
	for (x = 1.0; f->nt < RUN_TABLE; x *= 2.0) {
		double b = x < tmax ? x : tmax;
		int k = f->nt;

		if (infer_step(m, d, c, b, 1, cavg, n_off, &ph, err) != GP_OK)
			return GP_EINVAL;
		f->ta[k] = attn_time(&ph);
		/* without graphs every step launches so already: the same */
		f->te[k] = ph.time;
		if (c->runtime == INFER_GRAPHS &&
		    eager_step(m, d, c, b, cavg, n_off, &f->te[k], err) != GP_OK)
			return GP_EINVAL;
		f->tv[k] = ph.time;
		if (graph_ctx_limited(c)) {
			infer_phase pv;

			if (off_graph_step(m, d, c, b, cavg, n_off, &pv, err)
			    != GP_OK)
				return GP_EINVAL;
			f->tv[k] = pv.time;
		}
		f->tb[k] = b;
		f->tt[k] = ph.time;
		f->nt++;
		if (b >= tmax)
			break;
	}
	if (!c->chunked && nl > 0) {
		/* run_times' prefill batch: the prompts max_num_tokens holds,
		 * at most the batch */
		double pb = floor(c->max_num_tokens / P), k;

		pb = pb < 1.0 ? 1.0 : (pb > B ? B : pb);
		for (k = 1.0; f->np < RUN_TABLE; k *= 2.0) {
			double q = fmin(k, pb);

			if (infer_step(m, d, c, q, P, c->input, n_off, &ph,
			               err) != GP_OK)
				return GP_EINVAL;
			f->pk[f->np] = q;
			f->pt[f->np++] = ph.time;
			if (q >= pb)
				break;
		}
	}
	if (c->chunked && mixed_prices(m, d, c, fmax(bm, c->max_num_tokens),
	                               cavg, n_off, &f->mt, err) != GP_OK)
		return GP_EINVAL;
	/* Without chunked context a prompt enters a step only whole:
	 * TensorRT-LLM's MicroBatchScheduler, without a chunk config, counts
	 * a context request's whole prompt and stops ("if
	 * (maxNumTokensRuntime && batchNumTokens + reqNumTokens >
	 * maxNumTokensRuntime.value()) break;", cpp/tensorrt_llm/
	 * batch_manager/microBatchScheduler.cpp), the decodes counted first.
	 * A prompt longer than max_num_tokens never fits (the LLM API
	 * rejects it: "should not exceed max_num_tokens", llmapi/llm.py
	 * _check_arguments; trtllm-bench raises max_num_tokens to max ISL +
	 * max batch so it never happens there): such a run is priced as
	 * chunked.  The budget counts the decodes (max_num_tokens is the
	 * "maximum number of tokens (context + generation)" of a batch). */
	/* The burst's TTFT (first): where every request is sent at once --
	 * no client concurrency, or one that holds the whole burst -- and a
	 * replica serves more than one, a request's first token waits for
	 * the prompts ahead of it in the walk (infer_burst_ttft), not the
	 * unloaded prefill of one prompt (run_times' r->ttft, kept for one
	 * request a replica).  A client that holds fewer in flight sends
	 * the next as one ends, so its wait is not the burst's: untouched. */
	burst = N > 1.0 + 1e-9 &&
		(c->concurrency <= 0 || c->concurrency >= c->requests);
	if (pre > 0.0) {
		t = infer_burst_preempt_ttft(N, pre, kvt, L, c->input, P,
		                             c->max_num_tokens, finite_step, f,
		                             &first);
		if (t > 0.0)
			r->tokens_per_s = c->requests * L / t;
		if (t > 0.0 && burst && first.mean > 0.0)
			burst_ttft(r, &first);
		return GP_OK;
	}
	t = infer_burst_ttft(N, B, L, P, c->max_num_tokens, 1,
	                     c->whole_prompts && P <= c->max_num_tokens,
	                     lens, shr, nl, finite_step, f, &first);
	if (t > 0.0)
		r->tokens_per_s = c->requests * L / t;
	if (t > 0.0 && burst && first.mean > 0.0)
		burst_ttft(r, &first);
	return GP_OK;
}

int infer_output_quantiles(const infer_cfg *c, double n, double *lens,
                           double *shr)
{
	rl_lengths l = { RL_LEN_EXP, 0, 0, 0, 0 };
	lenx x;
	double sum = 0.0;
	int k, i;

	if (!(c->output_max > c->output) || !(n >= 1.0))
		return 0;
	k = n < INFER_QUANTILES ? (int)ceil(n) : INFER_QUANTILES;
	/* Uniform from lo = 2 output - output_max to output_max: the
	 * midpoint of the i-th of k equal shares from the top, exact in
	 * its mean (lo + output_max) / 2 = output. */
	if (c->output_uniform) {
		double lo = 2.0 * c->output - c->output_max;

		for (i = 0; i < k; i++) {
			lens[i] = c->output_max -
			          (c->output_max - lo) * (i + 0.5) / k;
			shr[i] = 1.0 / k;
		}
		return k;
	}
	l.mean = c->output;
	l.max = c->output_max;
	/* clip 0: the exponential's own tail past the limit is what lands
	 * on it (e^{-max / theta} of the requests). */
	if (rl_lengths_prepare(&l, NULL) || rl_lenx_of(&l, &x, NULL))
		return 0;
	for (i = 0; i < k; i++) {
		lens[i] = fmin(x.hi, fmax(1.0, rl_lenx_surv_inv(&x,
		               (i + 0.5) / k)));
		sum += lens[i];
	}
	/* Midpoints of k quantiles miss a little of the mean (the tail
	 * beyond the last): scale them back to it, so the run's tokens are
	 * requests x output as the steady state's are. */
	for (i = 0; i < k; i++) {
		lens[i] = fmax(1.0, lens[i] * c->output * k / sum);
		shr[i] = 1.0 / k;
	}
	return k;
}

/* One step's admission and prefill, both burst walks': the requests
 * the batch has room for (B less the admitted adm) start from the queue;
 * their prompts join the prefill queue pend (fluid: a prompt may span
 * steps, as a chunked prefill does); the step processes what its token
 * budget leaves after the decodes it counts (ndec; whole: only whole
 * prompts of P tokens).  Sets *proc, the prompt tokens processed, and
 * returns the prompts completed. */
static double burst_admit(double *queue, double *adm, double *pend,
                          double B, double P, double tokens, double ndec,
                          int whole, double *proc)
{
	double start = fmax(fmin(*queue, B - *adm), 0.0), budget;

	*queue -= start;
	*adm += start;
	*pend += start * P;
	budget = fmax(tokens - ndec, 0.0);
	if (whole)
		budget = floor(budget / P) * P;
	*proc = fmin(*pend, budget);
	*pend -= *proc;
	return *proc / P;
}

/* The prompts of a burst's first C computed prompt tokens that are
 * whole: the requests run first come, first served.  vLLM V1 takes the
 * waiting queue from its head after the running requests ("while
 * self.waiting and token_budget > 0: ... request =
 * self.waiting.peek_request()", vllm/v1/core/sched/scheduler.py); V0's
 * chunked-prefill policy "1. schedule as many decoding requests as
 * possible. 2. schedule chunked prefill requests that are not finished.
 * 3. schedule swapped request. 4. schedule new prefill requests", its
 * _schedule_prefills taking waiting_queue[0] while the budget allows ("We
 * don't sort waiting queue because we assume it is sorted",
 * vllm-project/vllm@0054e1fa vllm/core/scheduler.py, a V0 scheduler
 * before 0.6.3's of the same order).  A started prompt runs its next
 * chunk each step before any later one, so request k's prompt is whole
 * once k P tokens are computed: floor(C / P) of the n, all of them from
 * C = n P (n need not be whole: a replica's share of the burst). */
static double burst_whole(double C, double P, double n)
{
	double k = C / P;

	return k >= n - 1e-9 * fmax(n, 1.0) ? n : fmin(n, floor(k + 1e-9));
}

/* A burst's first tokens (first != NULL): every step that completes
 * prompts gives their first token at its end, t (vLLM samples a token
 * for a request in the step that computes its prompt's last token; the
 * benchmark client takes st = time.perf_counter() as it posts the
 * request and, on the first streamed chunk, "ttft = time.perf_counter()
 * - st; output.ttft = ttft", vllm benchmarks/backend_request_func.py,
 * and a burst posts every request at once, so a request's TTFT is the
 * time to the end of that step).  got: the requests counted so far, sum
 * their first-token times.  C is the prompt tokens computed so far. */
/* The first tokens counted: got of n so far, sum their times; at[]
 * the times of the order statistics ix[] (0-based: the (ix + 1)-th
 * first token) that numpy's percentile interpolates between for the
 * median and the 99th percentile, as vLLM's benchmark reports them
 * ("median_ttft_ms=np.median(ttfts or 0) * 1000", "np.percentile(ttfts
 * or 0, p)", benchmarks/benchmark_serving.py calculate_metrics): at
 * q, the (n - 1) q-th, between its floor and ceiling. */
typedef struct ttft_acc {
	double n, got, sum;
	double ix[4], at[4];
} ttft_acc;

static void ttft_start(ttft_acc *a, double n)
{
	static const double q[2] = { 0.5, 0.99 };
	int i;

	memset(a, 0, sizeof *a);
	a->n = n;
	for (i = 0; i < 2; i++) {
		double h = fmax(n - 1.0, 0.0) * q[i];

		a->ix[2 * i] = floor(h + 1e-9);
		a->ix[2 * i + 1] = ceil(h - 1e-9);
	}
}

/* k more first tokens at t (fluid: k need not be whole). */
static void ttft_add(ttft_acc *a, double k, double t)
{
	int i;

	if (!(k > 0.0))
		return;
	for (i = 0; i < 4; i++)
		if (a->got < a->ix[i] + 1.0 - 1e-9 &&
		    a->got + k >= a->ix[i] + 1.0 - 1e-9)
			a->at[i] = t;
	a->sum += k * t;
	a->got += k;
}

/* The walk's result: the mean and the two percentiles where every
 * request got its first token; zeros where the walk stopped short. */
static void ttft_end(const ttft_acc *a, infer_ttft *out)
{
	double h;

	memset(out, 0, sizeof *out);
	if (!(a->n > 0.0) || a->got < a->n - 1e-9 * fmax(a->n, 1.0))
		return;
	out->mean = a->sum / a->n;
	h = fmax(a->n - 1.0, 0.0);
	out->p50 = a->at[0] + (h * 0.5 - a->ix[0]) * (a->at[1] - a->at[0]);
	out->p99 = a->at[2] + (h * 0.99 - a->ix[2]) * (a->at[3] - a->at[2]);
}

static void burst_first(double C, double P, ttft_acc *a, double t)
{
	double k = burst_whole(C, P, a->n);

	if (k > a->got)
		ttft_add(a, k - a->got, t);
}

/* infer_burst with lengths (nl > 0): the running requests held by the
 * window of steps their last decode falls in (W steps a window, ring
 * slots by window), each slot leaving at its earliest member's end; an
 * admitted group's prompts complete as one group whose shares leave at
 * their own lengths.  Lengths within one window of each other are one
 * class (their share-weighted mean length), so a step's prefill adds at
 * most RUN_WINDOWS + 1 classes. */
#define BURST_SLOTS (RUN_WINDOWS + 3)
static double burst_spread(double N, double B, double P, double tokens,
                           int dec_count, int whole, const double *lens,
                           const double *shr, int nl,
                           infer_burst_step price, void *ctx,
                           infer_ttft *first)
{
	double C = 0.0;  /* prompt tokens computed (burst_first) */
	ttft_acc fa;
	double cl[RUN_WINDOWS + 2], cs[RUN_WINDOWS + 2], cw[RUN_WINDOWS + 2];
	double bn[BURST_SLOTS], be[BURST_SLOTS], bg[BURST_SLOTS];
	double W, Lmax = 1.0, t = 0.0, it, queue, pend = 0.0, adm = 0.0;
	double dec = 0.0, done = 0.0, proc, fin, step, one;
	double gsum = 0.0;  /* tokens the decoding requests generated */
	int i, nc = 0;

	ttft_start(&fa, N);
	for (i = 0; i < nl; i++)
		Lmax = fmax(Lmax, lens[i]);
	W = ceil(Lmax / RUN_WINDOWS);
	/* Classes: the lengths grouped by window (lens in any order; in
	 * order, as infer_output_quantiles gives them, each is the last
	 * class's or a new one). */
	for (i = 0; i < nl; i++) {
		double w = floor(lens[i] / W);
		int k = nc - 1;

		if (k < 0 || cw[k] != w)
			for (k = 0; k < nc && cw[k] != w; k++)
				;
		if (k == nc) {
			if (nc == RUN_WINDOWS + 2)
				k = nc - 1;  /* not reached: <= Lmax / W + 1 */
			else {
				cl[nc] = cs[nc] = 0.0;
				cw[nc++] = w;
			}
		}
		cl[k] = (cl[k] * cs[k] + lens[i] * shr[i]) / (cs[k] + shr[i]);
		cs[k] += shr[i];
	}
	memset(bn, 0, sizeof bn);
	memset(be, 0, sizeof be);
	memset(bg, 0, sizeof bg);
	queue = N;
	for (it = 0.0; done < N - 1e-9 * fmax(N, 1.0); it += 1.0) {
		int s;

		fin = burst_admit(&queue, &adm, &pend, B, P, tokens,
		                  dec_count ? dec : 0.0, whole, &proc);
		step = price(ctx, dec, proc, fin,
		             dec > 1e-9 ? fmax(gsum / dec, 0.0) : 0.0);
		if (!(step > 0.0))
			break;
		/* Fewer than one request decoding, no prompt: the shares
		 * left are the chance that any request still runs (the
		 * expected count, below one, is that chance where they are
		 * rare: 1 - (1 - p)^B ~ B p), so the step is run that
		 * often.  Charged whole, the fluid's last shares would
		 * stretch every burst to the longest length after its last
		 * admission, where B requests end at the longest of B
		 * remainders: 80 requests of 1 .. 1000 tokens 16 at a time
		 * take 1.264 x their tokens / 16 in steps charged whole,
		 * 1.200 so, 1.185 drawn one by one (a discrete count over
		 * 200 seeds). */
		if (proc <= 0.0 && dec > 1e-9 && dec < 1.0)
			step *= dec;
		t += step;
		C += proc;
		burst_first(C, P, &fa, t);
		gsum += dec;
		/* The slot of this step's window leaves once its earliest
		 * end is reached (every step looks at its own window, and a
		 * member ends at least a step after it joined). */
		s = (int)fmod(floor(it / W), BURST_SLOTS);
		if (bn[s] > 0.0 && be[s] <= it) {
			done += bn[s];
			adm -= bn[s];
			dec -= bn[s];
			gsum -= bg[s];
			bn[s] = bg[s] = 0.0;
		}
		if (fin <= 0.0)
			continue;
		/* Prefilled this step: first token now; class k's last
		 * decode at it + cl[k] - 1 (none past the prefill's token
		 * where cl[k] <= 1). */
		for (i = 0; i < nc; i++) {
			double e = it + cl[i] - 1.0;

			one = fin * cs[i];
			if (cl[i] <= 1.0) {
				done += one;
				adm -= one;
				continue;
			}
			/* it leaves in step ceil(e): its window's slot */
			s = (int)fmod(floor(ceil(e) / W), BURST_SLOTS);
			be[s] = bn[s] > 0.0 ? fmin(be[s], e) : e;
			bn[s] += one;
			/* its decodes by the step it leaves in */
			bg[s] += one * (ceil(e) - it);
			dec += one;
		}
	}
	if (first)
		ttft_end(&fa, first);
	return t;
}

double infer_burst(double N, double B, double L, double P, double tokens,
                   int dec_count, int whole, const double *lens,
                   const double *shr, int nl, infer_burst_step price,
                   void *ctx)
{
	return infer_burst_ttft(N, B, L, P, tokens, dec_count, whole, lens,
	                        shr, nl, price, ctx, NULL);
}

double infer_burst_ttft(double N, double B, double L, double P,
                        double tokens, int dec_count, int whole,
                        const double *lens, const double *shr, int nl,
                        infer_burst_step price, void *ctx,
                        infer_ttft *first)
{
	double cn[RUN_COHORTS], ce[RUN_COHORTS];
	double W, t = 0.0, it, queue, pend = 0.0, adm = 0.0, dec = 0.0;
	double done = 0.0, proc, fin, step, Lmax = L;
	double C = 0.0;  /* prompt tokens computed (burst_first) */
	ttft_acc fa;
	int head = 0, cnt = 0, last = -1, i;

	ttft_start(&fa, N);
	if (first)
		memset(first, 0, sizeof *first);
	for (i = 0; i < nl; i++)
		Lmax = fmax(Lmax, lens[i]);
	if (!(N > 0.0) || !(B > 0.0) || !(P > 0.0) || !(tokens > 0.0) ||
	    N * L / B + N * P / tokens + Lmax > RUN_ITER_MAX)
		return 0.0;
	/* One request in flight: the requests run one after another, so
	 * the run is the sum of their own times, each linear in its length
	 * (its prefill, then a batch-1 step a token): the mean's, whatever
	 * the spread.  The fluid walk's lengths would split that one
	 * request into shares whose longest run on alone, a step each, as
	 * if the batch thinned below one request. */
	if (nl > 0 && B > 1.0)
		return burst_spread(N, B, P, tokens, dec_count, whole, lens,
		                    shr, nl, price, ctx, first);
	W = ceil(L / RUN_WINDOWS);
	queue = N;
	/* Fluid counts: 1e-9 of a request is rounding, not a request. */
	for (it = 0.0; done < N - 1e-9 * fmax(N, 1.0); it += 1.0) {
		fin = burst_admit(&queue, &adm, &pend, B, P, tokens,
		                  dec_count ? dec : 0.0, whole, &proc);
		step = price(ctx, dec, proc, fin, -1.0);
		if (!(step > 0.0))
			break;
		t += step;
		C += proc;
		burst_first(C, P, &fa, t);
		/* Cohorts whose last decode was this step leave. */
		while (cnt > 0 && ce[head] <= it) {
			done += cn[head];
			adm -= cn[head];
			dec -= cn[head];
			head = (head + 1) % RUN_COHORTS;
			cnt--;
		}
		if (cnt == 0)
			last = -1;
		if (fin <= 0.0)
			continue;
		if (L <= 1.0) {
			/* The prefill's token was the whole output. */
			done += fin;
			adm -= fin;
			continue;
		}
		/* Prefilled this step: first token now, L - 1 decodes in
		 * steps it + 1 ... it + L - 1; a window's cohort keeps its
		 * first member's end. */
		if (last >= 0 && (cnt == RUN_COHORTS ||
		    floor(ce[last] / W) == floor((it + L - 1.0) / W))) {
			cn[last] += fin;
		} else {
			last = (head + cnt) % RUN_COHORTS;
			cn[last] = fin;
			ce[last] = it + L - 1.0;
			cnt++;
		}
		dec += fin;
	}
	if (first)
		ttft_end(&fa, first);
	return t;
}

/* infer_burst_preempt: vLLM V1's scheduler over a burst whose cache fills
 * (infer.h).  Cohorts of requests in one state (counts whole where the
 * burst's are), the running ones in their admission order, the waiting
 * ones in queue order (the preempted at the head, in their admission
 * order, then the requests never admitted). */
#define PRE_COHORTS (2 * RUN_WINDOWS + 2)
typedef struct pre_cohort {
	double n;     /* requests */
	double need;  /* tokens to compute: plen + the outputs kept */
	double done;  /* of need, computed (need: decoding) */
	double gen;   /* output tokens generated (kept over a preemption) */
	double kv;    /* running: KV tokens a request holds; waiting: its
	                 tokens still in the prefix cache (a hit) */
} pre_cohort;

/* Merges a full list's closest neighbours (fixed memory, STYLE 3): the
 * two adjacent decoding cohorts whose outputs differ least become one at
 * the earlier's state, as infer_burst's window cohorts keep their first
 * member's end. */
static void pre_squeeze(pre_cohort *a, int *n, int running)
{
	int i, best = -1;
	double d, bd = 0.0;

	for (i = 0; i + 1 < *n; i++) {
		if (running && (a[i].done < a[i].need ||
		                a[i + 1].done < a[i + 1].need))
			continue;
		d = fabs(a[i].gen - a[i + 1].gen);
		if (best < 0 || d < bd) {
			best = i;
			bd = d;
		}
	}
	if (best < 0)
		best = *n - 2;  /* none decoding: the last two */
	a[best].kv = (a[best].kv * a[best].n + a[best + 1].kv *
	              a[best + 1].n) / (a[best].n + a[best + 1].n);
	if (running)
		a[best].kv = fmax(a[best].kv, a[best + 1].kv);
	a[best].n += a[best + 1].n;
	memmove(&a[best + 1], &a[best + 2],
	        (size_t)(*n - best - 2) * sizeof *a);
	(*n)--;
}

/* Moves m requests of the last running cohort to the waiting queue's
 * head (w, nw), their KV freed, their computed tokens dropped, their
 * outputs kept (vLLM V1: "preempted_req = self.running.pop()",
 * "self.kv_cache_manager.free(preempted_req)", "preempted_req.
 * num_computed_tokens = 0", "self.waiting.prepend_request(
 * preempted_req)").  The freed blocks keep their hashes: the prefix
 * cache (on by default in V1) finds them on readmission while no
 * allocation has taken them (pre_reuse).  Returns the tokens freed. */
static double pre_evict(pre_cohort *run, int *nr, double m, pre_cohort *w,
                        int *nw, int *wz, double P)
{
	pre_cohort *k = &run[*nr - 1], e;
	double freed = m * k->kv;

	e.n = m;
	e.gen = k->gen;
	e.need = P + e.gen;
	e.done = 0.0;
	e.kv = k->kv;
	if (*nw > 0 && w[0].gen == e.gen && w[0].kv == e.kv) {
		w[0].n += m;
		*wz = *wz > 1 ? *wz : 1;
	} else {
		/* a squeeze merges the two neighbours closest in outputs,
		 * wherever they are: two past *wz into one with no cached
		 * tokens, one before it into one that may hold some, still
		 * before it; the later ones move down a place.  *wz still
		 * bounds them (pre_reuse) */
		if (*nw == PRE_COHORTS)
			pre_squeeze(w, nw, 0);
		memmove(&w[1], &w[0], (size_t)*nw * sizeof *w);
		w[0] = e;
		(*nw)++;
		*wz = *wz + 1 < *nw ? *wz + 1 : *nw;
	}
	k->n -= m;
	if (k->n <= 1e-12)
		(*nr)--;
	return freed;
}

/* The free pool holds free tokens; the waiting requests' cached tokens
 * are part of it.  An allocation takes the free queue's head, the blocks
 * freed longest ago (V1's FreeKVCacheBlockQueue: "the least recent used
 * block is at the front (LRU)", a freed block appended at the tail), the
 * requests' finished and never-used blocks counted first (their hashes no
 * waiting request looks up), then the preempted requests' caches, the
 * earliest preempted first: the queue's last preempted cohort. */
/* *wz bounds the cohorts that still hold cached tokens: from w[*wz] on
 * every one's n kv is 0, which adds nothing to the sum and takes
 * nothing (a burst's waiting list runs to hundreds of cohorts, all but
 * the newest preempted one or two emptied, and this runs every step).
 * The sum runs in the same order over the same nonzero terms, so the
 * result is the whole list's to the bit. */
static void pre_reuse(pre_cohort *w, int *wz, double free)
{
	double held = 0.0, over;
	int k;

	for (k = 0; k < *wz; k++)
		held += w[k].n * w[k].kv;
	over = held - fmax(free, 0.0);
	for (k = *wz - 1; k >= 0 && over > 1e-9; k--) {
		double take = fmin(over, w[k].n * w[k].kv);

		w[k].kv -= take / w[k].n;
		over -= take;
	}
	while (*wz > 0 && w[*wz - 1].n * w[*wz - 1].kv == 0.0)
		(*wz)--;
}

double infer_burst_preempt(double N, double S, double K, double L,
                           double I, double P, double tokens,
                           infer_burst_step price, void *ctx)
{
	return infer_burst_preempt_ttft(N, S, K, L, I, P, tokens, price, ctx,
	                                NULL);
}

double infer_burst_preempt_ttft(double N, double S, double K, double L,
                                double I, double P, double tokens,
                                infer_burst_step price, void *ctx,
                                infer_ttft *first)
{
	pre_cohort run[PRE_COHORTS], w[PRE_COHORTS];
	double x[PRE_COHORTS];  /* tokens a request computes this step; < 0:
	                           not scheduled */
	int nr = 0, nw = 0, wz = 0, i, j, it;  /* wz: pre_reuse */
	double t = 0.0, queue = N, left = N, eps = 1e-9 * fmax(N, 1.0);
	ttft_acc fa;  /* the first tokens */

	ttft_start(&fa, N);
	if (first)
		memset(first, 0, sizeof *first);
	if (!(N > 0.0) || !(S >= 1.0) || !(L >= 1.0) || !(P > 0.0) ||
	    !(I >= P) || !(tokens >= 1.0) || !(K >= I + L))
		return 0.0;
	for (it = 0; left > eps; it++) {
		double budget = tokens, free = K, nrun = 0.0;
		double dec = 0.0, proc = 0.0, fin = 0.0, gsum = 0.0, step;
		int preempted = 0, sched;

		if (it >= RUN_ITER_MAX)
			return 0.0;
		/* room for a step's admissions (at most half the list) */
		while (nr > PRE_COHORTS / 2)
			pre_squeeze(run, &nr, 1);
		for (i = 0; i < nr; i++) {
			free -= run[i].n * run[i].kv;
			nrun += run[i].n;
			x[i] = -1.0;
		}
		/* The running requests first, in admission order, each its
		 * new tokens (a decode's one, a prompt's next chunk within
		 * the step's budget); where the cache has no block for them
		 * the last-admitted running request is preempted ("The
		 * request cannot be scheduled. Preempt the lowest-priority
		 * request.", self.running.pop()), down to the request itself,
		 * which ends the loop (vllm/v1/core/sched/scheduler.py).  A
		 * request is preempted whole. */
		for (sched = 0; sched < nr && budget > 1e-9; sched++) {
			pre_cohort *c = &run[sched];
			/* a decode's token where the budget holds the
			 * cohort's: fmin(1, budget / n) without the division
			 * on the step's serial chain (budget >= n gives 1) */
			double per = c->done < c->need ?
				fmin(c->need - c->done, budget / c->n) :
				budget >= c->n ? 1.0 : budget / c->n;
			double need = per * c->n;

			while (need > free + 1e-9 && nr - 1 > sched) {
				pre_cohort *e = &run[nr - 1];
				double m = e->kv > 0.0 ? fmin(e->n,
					ceil((need - free) / e->kv - 1e-9)) :
					e->n;

				nrun -= m;
				free += pre_evict(run, &nr, m, w, &nw, &wz, P);
				preempted = 1;
			}
			if (need > free + 1e-9) {
				/* within the cohort: k of its n keep their
				 * place where k per <= free + (n - k) kv */
				double k = floor((free + c->n * c->kv) /
				                 (per + c->kv) + 1e-9);

				k = fmax(0.0, fmin(k, c->n));
				nrun -= c->n - k;
				free += pre_evict(run, &nr, c->n - k, w, &nw,
				                  &wz, P);
				preempted = 1;
				if (nr <= sched)
					break;
				need = per * c->n;
			}
			x[sched] = per;
			free -= need;
			budget -= need;
			/* the step's counts, in the list's order (no
			 * cohort before sched changes this step) */
			if (c->done < c->need) {
				proc += c->n * per;
				if (c->done + per >= c->need - 1e-9)
					fin += c->n;
			} else {
				dec += c->n;
				gsum += c->n * c->gen;
			}
		}
		pre_reuse(w, &wz, free);
		/* "# Next, schedule the WAITING requests.  if not
		 * preempted_reqs": the queue's head while the step's budget,
		 * the cache and max_num_seqs allow, whole prompts first and
		 * then one request's chunk in what the budget leaves; the
		 * first that gets no blocks (its cached tokens taken from the
		 * free pool, and its chunk's) ends it. */
		while (!preempted && sched == nr && budget > 1e-9 &&
		       nrun < S - 1e-9 && nr < PRE_COHORTS &&
		       (nw > 0 || queue > eps)) {
			pre_cohort e;
			double avail = nw > 0 ? w[0].n : queue, h, rem, f;

			e.gen = nw > 0 ? w[0].gen : 0.0;
			e.need = P + e.gen;
			/* at least the last token is computed: V1 looks up
			 * at most num_tokens - 1 cached tokens */
			h = nw > 0 ? fmin(w[0].kv - (I - P), e.need - 1.0) :
				0.0;
			h = fmax(h, 0.0);
			rem = e.need - h;
			avail = fmin(avail, S - nrun);
			if (free < (I - P) + h + fmin(rem, budget) - 1e-9)
				break;
			f = fmin(avail, fmin(floor(budget / rem + 1e-9),
			                     floor(free / (I - P + h + rem) +
			                           1e-9)));
			if (f >= 1.0 || avail < 1.0) {
				e.n = f >= 1.0 ? f : avail;
				x[nr] = rem;
			} else {
				e.n = fmin(avail, 1.0);
				x[nr] = fmin(rem, budget);
			}
			e.done = h;
			e.kv = (I - P) + h;
			if (nw > 0) {
				w[0].n -= e.n;
				if (w[0].n <= 1e-12) {
					memmove(&w[0], &w[1],
					        (size_t)(nw - 1) * sizeof *w);
					nw--;
					wz -= wz > 0;
				}
			} else {
				queue -= e.n;
			}
			run[nr++] = e;
			sched = nr;
			nrun += e.n;
			budget -= e.n * x[nr - 1];
			free -= e.n * (e.kv + x[nr - 1]);
			pre_reuse(w, &wz, free);
			/* a prompt (rem >= 1 tokens left): the step's
			 * counts after the running cohorts' */
			proc += e.n * x[nr - 1];
			if (e.done + x[nr - 1] >= e.need - 1e-9)
				fin += e.n;
		}
		/* The step: its decodes and prompt tokens (counted as they
		 * were scheduled), priced. */
		if (dec <= 1e-9 && proc <= 1e-9)
			return 0.0;
		step = price(ctx, dec, proc, fin, dec > 1e-9 ?
		             fmax(gsum / dec - 1.0, 0.0) : 0.0);
		if (!(step > 0.0))
			return 0.0;
		t += step;
		/* Advance: a decode writes its token and samples the next; a
		 * prompt completed samples its first (readmitted: its next)
		 * token; a request with all its outputs leaves, its blocks
		 * free. */
		/* One pass: each cohort advanced, then dropped (finished)
		 * or merged into the one kept before it (j - 1), as a removal
		 * in place would. */
		for (i = 0, j = 0; i < nr; i++) {
			pre_cohort *c = &run[i];
			int dn;

			if (x[i] >= 0.0) {
				c->kv += x[i];
				if (c->done < c->need) {
					c->done += x[i];
					if (c->done >= c->need - 1e-9) {
						c->done = c->need;
						/* a request's first token
						 * (gen 0: none sampled yet;
						 * a readmitted one's
						 * recompute sends none) */
						if (c->gen < 0.5)
							ttft_add(&fa, c->n,
							         t);
						c->gen += 1.0;
					}
				} else {
					c->gen += x[i];
				}
			}
			dn = c->done >= c->need;
			if (dn && c->gen >= L - 1e-9) {
				left -= c->n;
			} else if (j > 0 && dn &&
			           run[j - 1].done >= run[j - 1].need &&
			           c->gen == run[j - 1].gen &&
			           c->kv == run[j - 1].kv) {
				run[j - 1].n += c->n;
			} else {
				if (j != i)
					run[j] = *c;
				j++;
			}
		}
		nr = j;
	}
	if (first)
		ttft_end(&fa, first);
	return t;
}

/* The TTFT of a request that joins a steady state of decodes (the one
 * rule gp.infer's chunked-prefill engines and the MoE serving model's
 * colocated instances take: infer.h infer_loaded_ttft).  What a client
 * keeping N requests in flight measures, not one prompt's prefill on an
 * idle replica.  vLLM V1's scheduler (vllm/v1/core/sched/scheduler.py,
 * Scheduler.schedule) starts each step from "token_budget =
 * self.max_num_scheduled_tokens" (max_num_batched_tokens), schedules "#
 * First, schedule the RUNNING requests." -- each decode's token, "token_
 * budget -= num_new_tokens" -- and only then "# Next, schedule the
 * WAITING requests. ... while self.waiting and token_budget > 0:", a
 * waiting prompt's chunk cut to "num_new_tokens = min(num_new_tokens,
 * token_budget)".  So a request that arrives:
 * - waits for the step in flight to end: a step boundary is a renewal
 *   point, and an arrival at a random time waits the mean residual
 *   E[T^2] / (2 E[T]) of the steps (half a step where they are all
 *   alike), over the share f of the steps that carry prompt tokens, at
 *   tc each, and the others at td;
 * - then runs its prompt in n = ceil(P / room) steps, room the budget a
 *   step leaves its chunk, each a step of at least its own chunk P / n
 *   (at the steady state's k prompt tokens where those are more: tc; a
 *   larger chunk is priced by price), its first token coming with the
 *   last. */
int infer_loaded_ttft(double P, double room, double f, double tc,
                      double td, double k, infer_chunk_step price,
                      void *ctx, infer_loaded *out, gp_error *err)
{
	double n, q, tq = tc, mean, res;

	if (!out)
		return gp_fail(err, "infer_loaded_ttft: NULL output");
	memset(out, 0, sizeof *out);
	out->room = room;
	/* No room: the step's decodes take the whole budget, and vLLM V1
	 * admits a waiting prompt only "while self.waiting and
	 * token_budget > 0" (the scheduler quoted above), so a joining
	 * prompt waits for running sequences to end; that wait is not
	 * priced here, and the caller says so (out->full). */
	if (P > 0.0 && !(room > 0.0))
		out->full = 1;
	if (!(room > 0.0) || !(P > 0.0))
		return GP_OK;
	f = fmin(1.0, fmax(0.0, f));
	n = ceil(P / room - 1e-9);
	q = P / n;
	if (q > k && price && price(ctx, q, &tq, err) != GP_OK)
		return GP_EINVAL;
	mean = (1.0 - f) * td + f * tc;
	if (!(mean > 0.0))
		return GP_OK;
	res = ((1.0 - f) * td * td + f * tc * tc) / (2.0 * mean);
	out->wait = res;
	out->steps = n;
	out->step = tq;
	out->ttft = res + n * tq;
	return GP_OK;
}

/* gp.infer's chunked-prefill engine (c->chunked, more than one request a
 * replica, no burst): the step of a chunk beside the step's dm decodes is
 * mixed_step's, the step mixed_steps prices. */
typedef struct loaded_ctx {
	const gp_model *m;
	const roof_device *d;
	const infer_cfg *c;
	double dm, cavg, n_off;
} loaded_ctx;

static int loaded_step(void *ctx, double q, double *t, gp_error *err)
{
	const loaded_ctx *x = ctx;

	return mixed_step(x->m, x->d, x->c, x->dm, q, x->cavg, x->n_off, t,
	                  err);
}

/* room = max_num_tokens - dm, the budget the step's dm decodes leave;
 * SGLang's mixed chunk and TensorRT-LLM's in-flight batching (the engines
 * c->chunked holds) schedule the running decodes before the context
 * chunks alike.  Under the budget-bound state (dm = D, room = k) the same
 * rule holds; the wait for a slot there is the client's (concurrency
 * above the KV's batch waits in the queue, queue_note). */
static int loaded_ttft(const gp_model *m, const roof_device *d,
                       const infer_cfg *c, double dm, double k, double f,
                       double tc, double itl, double cavg, double n_off,
                       infer_result *r, double *ttft, gp_error *err)
{
	loaded_ctx x = { m, d, c, dm, cavg, n_off };
	infer_loaded lt;

	if (infer_loaded_ttft(infer_new_prompt(c), c->max_num_tokens - dm, f,
	                      tc, itl, k, loaded_step, &x, &lt, err) != GP_OK)
		return GP_EINVAL;
	if (!(lt.ttft > 0.0))
		return GP_OK;
	*ttft = lt.ttft;
	r->ttft_wait = lt.wait;
	r->ttft_steps = lt.steps;
	r->ttft_step = lt.step;
	return GP_OK;
}

/* The steady state of a chunked-prefill engine (c->chunked): the prompts
 * are not prefilled in steps of their own but ride in the decode steps,
 * which hold max_num_tokens tokens in all, decodes first (vLLM's docs,
 * as vllm PR #7874 quotes them: "By default, vLLM scheduler prioritizes
 * prefills ... Once chunked prefill is enabled, the policy is changed to
 * prioritize decode requests"; the prompts fill the rest).  Over a
 * request's output - 1 decode steps the batch's B requests are replaced,
 * B / steps new prompts a step, each in ceil(input / room) chunks of the
 * room max_num_tokens - B a step leaves: a share f = B / steps x
 * ceil(input / room) of the steps (at most all) carries B input / (steps
 * f) prompt tokens beside its B decodes, the others decode alone.  Where
 * the prompts need more than the room of every step (B input / steps >
 * room) the run is budget-bound: B input / room steps, each full.  A step
 * of B decodes and k prompt tokens is one step of both (mixed_step): its
 * linears read the weights once for all of them, where a prefill step of
 * its own (run_times' prefill share) reads them again.  r->eager is the
 * launch time such steps add over the graph (eager_step: vLLM V0 and
 * TensorRT-LLM graph decode-only batches). */
static int mixed_steps(const gp_model *m, const roof_device *d,
                       const infer_cfg *c, int B, double bm, double cavg,
                       double steps, double n_off, infer_result *r,
                       gp_error *err)
{
	infer_phase ph;
	double room = c->max_num_tokens - bm, P, n, f, k, t, te, tc, chunks;
	double dm;  /* the decodes of a step that carries prompt tokens */
	double scale = 1.0;  /* the decoding share of the B sequences */
	double tl = 0.0;  /* the steady state's TTFT (loaded_ttft) */

	/* vLLM takes a token budget equal to max_num_seqs (SchedulerConfig
	 * refuses only "max_num_batched_tokens (...) must be greater than
	 * or equal to max_num_seqs", vllm/config/scheduler.py): every
	 * running sequence then decodes a token a step and the budget has
	 * none left for a prompt, so a prompt enters only in a step where
	 * fewer decode.  That is the budget-bound state below (room < 1:
	 * B decodes and a prompt's chunk never share a step), not a
	 * refusal; a batch above the budget is refused as vLLM refuses
	 * it. */
	if (!(room >= 0.0))
		return gp_fail(err, "chunked prefill needs max_num_tokens "
		               "(%g) at least the decode batch (%g): a step "
		               "holds one token of each decoding sequence "
		               "(give batch = %g, or max_num_tokens = %g)",
		               c->max_num_tokens, bm,
		               floor(c->max_num_tokens), ceil(bm));
	/* The B sequences are the running batch (vLLM's max_num_seqs,
	 * the sequences the KV pool holds): one whose prompt is still in
	 * chunks holds a slot and emits no token until the step that
	 * carries its last chunk, which emits its first.  A slot so turns
	 * over every output - 1 decode steps plus the ceil(input / room)
	 * steps of its prompt, output tokens a turn, and a step carries
	 * B steps / n decodes and B input / n prompt tokens (n the turn).
	 * Counted over the decode steps alone, a step gave B decodes and
	 * the first tokens of the prompts beside them: more tokens than
	 * the batch has sequences (tokens/s 1.67 x B / ITL at 16 in /
	 * 2 out, batch 4, on vLLM).  Those exceed the step's budget
	 * exactly where the budget-bound branch's D + X sequences (its
	 * decodes and the prompts it admits) reach B: the branches meet
	 * there. */
	chunks = room >= 1.0 ? ceil(infer_new_prompt(c) / room) : 0.0;
	n = steps + chunks;
	P = bm * infer_new_prompt(c) / n;
	if (room < 1.0 || bm * steps / n + P >= c->max_num_tokens) {
		/* Budget-bound: the prompts cannot be fed as fast as B
		 * decodes would finish them, so B sequences are not all
		 * decoding.  In the steady state a step admits X requests'
		 * prompts (X input tokens) and X finish, and by Little's law
		 * X steps sequences decode in it: X (input + steps) fills
		 * max_num_tokens, D = max_num_tokens steps / (input + steps)
		 * decode a step beside k = max_num_tokens - D prompt tokens
		 * (every step), the rest of the B wait for their prompts
		 * (vLLM's scheduler: the running decodes first, the waiting
		 * prompts' chunks in what is left).  Priced as B decodes a
		 * step, a step read KV and launched decodes for sequences
		 * that were still queued, and a replica's tokens/s fell as
		 * the batch grew past D, below what the same engine's finite
		 * run of those requests gives (run_finite: 16,698 tokens/s
		 * against 9,914 steady, Llama 3.2 3B int4 on an MI355X,
		 * vLLM, batch 2048, 1024 in / 128 out).  Its D decodes and
		 * the X = D / steps prompts it admits are D output / steps
		 * sequences: B where the slots' decodes and prompt tokens
		 * just fill max_num_tokens (a prompt in one chunk), where
		 * the two branches meet. */
		double D = c->max_num_tokens * steps /
			(infer_new_prompt(c) + steps);

		scale = D / bm;
		bm = D;
		n = steps;
		f = 1.0;
		k = c->max_num_tokens - D;
		dm = bm;
	} else {
		/* The bm chunks / n slots in their prompts ride in the share
		 * f of the steps, so such a step decodes the other slots (at
		 * least one: a batch of one whose prompt step decodes
		 * nothing is priced a decode over) and the steps without a
		 * prompt all bm. */
		f = fmin(1.0, bm / n * chunks);
		k = P / f;
		dm = fmax(1.0, bm - bm * chunks / (n * f));
	}
	if (infer_step(m, d, c, dm + k, 1, cavg, n_off, &ph, err) != GP_OK)
		return GP_EINVAL;
	t = te = ph.time;
	if (c->runtime == INFER_GRAPHS &&
	    eager_step(m, d, c, dm + k, cavg, n_off, &te, err) != GP_OK)
		return GP_EINVAL;
	if (mixed_step(m, d, c, dm, k, cavg, n_off, &tc, err) != GP_OK)
		return GP_EINVAL;
	r->eager_steps = f;
	r->eager = f * fmax(0.0, te - t);
	r->tokens_per_s = (double)r->replicas * B * scale * c->output /
		(n * ((1.0 - f) * r->itl + f * tc));
	/* The bm slots each finish a request in the n steps; in n - steps
	 * of them (its own chunks) a slot emits nothing, so the cycle
	 * beyond (steps + those) decode steps is the time the chunks add
	 * (tc - itl each), B - 1 of B slots' in one user's decode.  The
	 * budget-bound state has no such steps (n = steps). */
	r->itl_load = infer_itl_loaded(r->itl, n * ((1.0 - f) * r->itl +
	                                            f * tc) -
	                               (n - steps) * r->itl, steps, bm);
	if (B > 1 && loaded_ttft(m, d, c, dm, k, f, tc, r->itl, cavg, n_off,
	                         r, &tl, err) != GP_OK)
		return GP_EINVAL;
	if (c->requests > 0 && run_finite(m, d, c, B, n_off, r->prefill_share,
	                                  cavg, r, err) != GP_OK)
		return GP_EINVAL;
	/* a burst keeps its walk's TTFT (run_finite, burst_ttft) */
	if (tl > 0.0 && !r->ttft_burst) {
		r->ttft_one = r->ttft;
		r->ttft = tl;
		r->ttft_loaded = 1;
	}
	r->tokens_per_s_gpu = r->tokens_per_s / c->gpus;
	return GP_OK;
}

/* The TTFT of one prompt alone where the engine chunks it (c->chunked)
 * and it is longer than a step's max_num_tokens: vLLM's scheduler gives
 * a running request at most the step's token budget, so the prompt runs
 * in n = ceil(P / max_num_tokens) steps and its first token comes with
 * the last ("In vLLM V1, chunked prefill is always enabled by default",
 * the long prompt "chunked" into max_num_batched_tokens a step: vLLM
 * docs, configuration/optimization.md, Chunked Prefill).  Each step reads
 * the weights again, and its queries attend causally to the earlier
 * chunks' keys, read back from the cache (vLLM V1's flash_attn_varlen_
 * func over the paged cache with seqused_k = the computed plus scheduled
 * tokens, causal: vllm/v1/attention/backends/flash_attn.py): token i of
 * the prompt sees cached + i keys whatever its chunk.  Priced as n steps
 * of P / n tokens whose ends fall on average at cached + (P + P / n) / 2
 * (prompt_attn's rule: infer_step's mean KV of the step, ctx - (q - 1)
 * / 2, is then the prompt's cached + (P + 1) / 2), so their attention
 * sums to the whole prompt's causal attention and their linears to its
 * tokens, the weights read n times.  A prompt within the budget keeps
 * the one step (*ttft as given). */
static int chunked_ttft(const gp_model *m, const roof_device *d,
                        const infer_cfg *c, double n_off, double *ttft,
                        gp_error *err)
{
	infer_phase ph;
	double P = infer_new_prompt(c), n, q;

	if (!c->chunked || !(P > c->max_num_tokens))
		return GP_OK;
	n = ceil(P / c->max_num_tokens);
	q = P / n;
	if (infer_step(m, d, c, 1, q, c->cached + (P + q) / 2.0, n_off, &ph,
	               err) != GP_OK)
		return GP_EINVAL;
	*ttft = n * ph.time;
	return GP_OK;
}

/* The TTFT of one prompt alone where the runtime evaluates it in
 * ubatches (c->ubatch): llama.cpp's llama_decode splits a call's
 * n_batch tokens into n_ubatch-token graphs ("n_ubatch = ... physical
 * maximum batch size", llama.h llama_context_params; llama-bench's
 * defaults n_batch 2048, n_ubatch 512), each of which reads the weights
 * again and attends to what the earlier ones cached.  Priced as
 * chunked_ttft prices its steps: n = ceil(P / ubatch) steps of P / n
 * tokens whose contexts end on average at cached + (P + P / n) / 2.
 * Over a layer split with every layer on the GPUs (c->ubatch_call,
 * n_off 0) the ubatches of one call pipeline through the pp stages:
 * llama.cpp PR 6017 ("llama : add pipeline parallelism support",
 * March 2024) enables it when "model.n_devices() > 1 &&
 * model.n_gpu_layers() > model.hparams.n_layer && model.split_mode()
 * == LLAMA_SPLIT_MODE_LAYER && cparams.offload_kqv" (src/llama-
 * context.cpp) and keeps "sched->n_copies = parallel ?
 * GGML_SCHED_MAX_COPIES : 1" (4) copies of the graph inputs
 * (ggml-backend.cpp; the llama-bench cases' logs: "pipeline parallelism
 * enabled (n_copies=4)").  A stage is the step's whole pass over pp.
 * How far the ubatches overlap is set by the one host thread that
 * issues them (ggml_backend_sched_compute_splits at 4426e298 launches
 * each GPU's split in turn, asynchronously) and by what it waits on:
 * - a stream's launch queue: "The kernel launched very fast when
 *   launching the first 1000 kernels ... after that ... The CUDA stream
 *   seems to wait for the previous kernel complete and the buffer size
 *   is about 1000 kernel.  When I created 3 streams, each stream can
 *   launch 1000 kernel asynchrony" (stackoverflow.com/questions/
 *   53970187); "when you reach the queue size, CUDA launch calls will
 *   become synchronous until the queue isn't full anymore" (Robert
 *   Crovella, quoted at forums.developer.nvidia.com/t/maximum-launches-
 *   in-que/199567).  With c->ubatch_launches a layer (llama.cpp's 9
 *   graph ops of a Llama layer past its 7 linears, each linear 3
 *   launches -- src1 to F16, cublasGemmEx, dst to F32 -- plus the
 *   dequant kernel for quantized weights, KQ and KQV 4 each with the
 *   batched-pointer kernel of a GQA model: 43 or 50) and
 *   SPLIT_INPUT_LAUNCHES a split, a GPU's stream holds m = launch_queue
 *   / launches of its stage (pipe_period): the host passes GPU g only
 *   when it has run all but m stages of its queue, so a stage that
 *   does not fit (m < 1: the 70B Q4_K_M on two or four GPUs, 2005 and
 *   1005 launches) serialises the pipeline to p - m stage times a
 *   ubatch.
 * - the event ring: a split's inputs from the host wait on
 *   "ggml_backend_event_synchronize(sched->events[split_backend_id]
 *   [sched->cur_copy])", the event recorded GGML_SCHED_MAX_COPIES (4)
 *   evaluations back: at most 5 ubatches span the p stages, p / 5
 *   stage times a ubatch.
 * - the launches themselves: every GPU's launches of a ubatch at the
 *   arch's stream launch (d->launch).
 * llama_decode does not synchronise between calls ("// wait for the
 * computation to finish (automatically done when obtaining the model
 * output) //llama_synchronize(&lctx);"), so llama-bench's calls of
 * n_batch tokens run as one stream of ubatches: pp + (n - 1) x stage
 * times, x the largest of the three spacings.  Without a launch count
 * (a runtime that states none) each call fills the pipeline anew, n +
 * calls (pp - 1) stage times. */
/* See ubatch_ttft: the launches ggml_backend_sched_compute_splits adds
 * to a GPU's split each evaluation besides its graph's kernels -- its
 * inputs' copies (the previous split's activations, inp_pos and
 * KQ_mask: "ggml_backend_tensor_copy_async" / "ggml_backend_tensor_copy"),
 * the wait on and the record of its event (ggml-backend.c at 4426e298). */
#define SPLIT_INPUT_LAUNCHES 5.0
/* "#define GGML_SCHED_MAX_COPIES 4" (ggml-backend.c at 4426e298): the
 * copies of each split's inputs, and of its event, that the pipeline
 * rotates through (ubatch_ttft). */
#define SCHED_MAX_COPIES 4.0

/* The steady spacing, in stage times, of ubatches through p pipelined
 * stages when each GPU's stream holds m stages' launches (ubatch_ttft).
 * m < 1: the host's last launches of a stage wait until that GPU has
 * run all but m of it, so it reaches the next ubatch's first GPU (1 -
 * m) into the last GPU's stage: p - 1 + (1 - m).  m >= 1: the host
 * passes the last GPU once what it still holds of earlier ubatches is
 * m - 1 stages, reached the next first GPU p - 1 stages before the
 * ubatch after leaves it: with spacing x the held work is the sum over
 * i >= 2 of clamp(p - i x, 0, 1), solved for x (1 when m >= p - 1). */
static double pipe_period(double p, double m)
{
	double lo = 1.0, hi = p, x = 1.0, f;
	int i, it;

	if (m < 1.0)
		return p - m;
	if (m >= p - 1.0)
		return 1.0;
	for (it = 0; it < 60; it++) {
		x = 0.5 * (lo + hi);
		f = 0.0;
		for (i = 2; i <= (int)p; i++)
			f += fmin(1.0, fmax(0.0, p - i * x));
		if (f > m - 1.0)
			lo = x;
		else
			hi = x;
	}
	return x;
}

static int ubatch_ttft(const gp_model *m, const roof_device *d,
                       const infer_cfg *c, double n_off, double *ttft,
                       gp_error *err)
{
	infer_phase ph;
	double P = infer_new_prompt(c), n, q, calls, stages, lag, per_gpu;

	if (c->ubatch <= 0)
		return GP_OK;
	n = ceil(P / c->ubatch);
	q = P / n;
	if (infer_step(m, d, c, 1, q, c->cached + (P + q) / 2.0, n_off, &ph,
	               err) != GP_OK)
		return GP_EINVAL;
	stages = n;
	if (c->ubatch_call > 0 && c->pp > 1 && !(n_off > 0)) {
		calls = ceil(P / c->ubatch_call);
		if (c->ubatch_launches > 0.0 && c->launch_queue > 0.0) {
			per_gpu = ceil((double)m->layers / c->pp) *
			          c->ubatch_launches + SPLIT_INPUT_LAUNCHES;
			lag = fmax(pipe_period(c->pp, c->launch_queue / per_gpu),
			           c->pp / (SCHED_MAX_COPIES + 1.0));
			lag = fmax(lag, c->pp * per_gpu * d->launch /
			                (ph.time / c->pp));
			stages = (c->pp + (n - 1.0) * lag) / c->pp;
		} else {
			stages = (n + calls * (c->pp - 1)) / c->pp;
		}
	}
	*ttft = stages * ph.time;
	return GP_OK;
}

/* Prefill, decode and steady-state throughput at batch B. */
static int run_times(const gp_model *m, const roof_device *d,
                     const infer_cfg *c, int B, double n_off,
                     infer_result *r, gp_error *err)
{
	infer_phase ph;
	double pb, share, cavg, bm, steps;

	if (infer_step(m, d, c, 1, infer_new_prompt(c), c->input, n_off,
	               &r->prefill, err) != GP_OK)
		return GP_EINVAL;
	r->ttft = r->prefill.time;
	if (chunked_ttft(m, d, c, n_off, &r->ttft, err) != GP_OK ||
	    ubatch_ttft(m, d, c, n_off, &r->ttft, err) != GP_OK)
		return GP_EINVAL;
	/* Prefill of a serving batch: as many prompts as max_num_tokens
	 * holds are prefilled together (TensorRT-LLM / vLLM batch prefill
	 * and decode); its time is shared by those requests. */
	pb = floor(c->max_num_tokens / infer_new_prompt(c));
	pb = pb < 1 ? 1 : (pb > B ? B : pb);
	if (infer_step(m, d, c, pb, infer_new_prompt(c), c->input, n_off, &ph,
	               err) != GP_OK)
		return GP_EINVAL;
	share = ph.time / pb;
	r->prefill_share = share;
	/* Decode at the mean context of a request's life (its steps' KV
	 * lengths, bucketed where the runtime pads them: infer_decode_ctx);
	 * PP splits the batch into pp micro-batches in flight, so a step of
	 * the batch is one pass of a micro-batch through all stages. */
	cavg = infer_decode_ctx(c);
	bm = ceil((double)B / c->pp);
	if (graph_step(m, d, c, bm, cavg, n_off, &r->decode, &r->itl, err)
	    != GP_OK ||
	    graph_step(m, d, c, 1, cavg, n_off, &ph, &r->itl_batch1, err)
	    != GP_OK)
		return GP_EINVAL;
	/* Steady state: B requests produce B * output tokens in B prefill
	 * shares plus output - 1 decode steps (the first token comes from
	 * the prefill).  Of those steps, the ones that carry the next
	 * requests' prompts run off the graph (eager_step): B prompts of
	 * input tokens per output - 1 steps, in the tokens a step has beside
	 * its B decodes (max_num_tokens counts both), so a share B x input /
	 * ((output - 1) x (max_num_tokens - B)) of the steps, at most all
	 * (infer_prompt_share).  Runtimes without
	 * graphs run every step so already: none is counted apart. */
	steps = c->output - 1.0;
	/* One static batch (c->static_batch: gptSession, TensorRT-LLM before
	 * 0.10): GptSession runs the context phase of the whole batch as one
	 * micro-batch where the caller sets none (MicroBatchConfig:
	 * "numCtxBatches = numGenBatches = pipelineParallelism; ctxBatchSize
	 * = genBatchSize = tc::ceilDiv(maxBatchSize, numGenBatches)", one at
	 * pp 1), then decodes the whole batch a step at a time until each
	 * has its output, the benchmark forcing "samplingConfig.minLength =
	 * std::vector{disableForceMaxTokens ? 1 : maxNewTokens}" so none
	 * stops early.  gptSessionBenchmark times the whole generate() call
	 * and reports "tokensPerSec = batchSize * maxNewTokens /
	 * (averageLatency / 1000)" (benchmarks/cpp/gptSessionBenchmark.cpp,
	 * early 2024): the batch's output tokens over its context phase
	 * plus its output - 1 decode steps, the first token coming from the
	 * context phase.  The context phase is one pass of the B prompts
	 * (pb = B: gpuplan.infer sets max_num_tokens to hold them all, the
	 * session handing the engine the batch's packed prompts at once),
	 * B share; no decode step
	 * carries a prompt, so none runs off the graph (no eager share), a
	 * user's tokens come one step apart (itl_load = itl), and each
	 * request's first token comes at the end of the batch's context
	 * phase (ttft).  A run of several such batches (requests) repeats
	 * it: the same rate, no ramp or drain (no run_finite). */
	if (c->static_batch) {
		r->ttft = B * share;
		r->tokens_per_s = (double)r->replicas * B * c->output /
			(B * share + steps * r->itl);
		r->itl_load = r->itl;
		r->tokens_per_s_gpu = r->tokens_per_s / c->gpus;
		return GP_OK;
	}
	if (c->chunked && steps > 0.0)
		return mixed_steps(m, d, c, B, bm, cavg, steps, n_off, r, err);
	if (steps > 0.0 && c->runtime == INFER_GRAPHS) {
		double room = c->max_num_tokens - B, te;

		if (eager_step(m, d, c, bm, cavg, n_off, &te, err) != GP_OK)
			return GP_EINVAL;
		r->eager_steps = infer_prompt_share(B, infer_new_prompt(c), steps,
		                                    room);
		r->eager = r->eager_steps * (te - r->itl);
	}
	r->tokens_per_s = (double)r->replicas * B * c->output /
		(B * share + steps * (r->itl + r->eager));
	r->itl_load = infer_itl_loaded(r->itl, B * share + steps *
	                               (r->itl + r->eager), steps, B);
	if (c->requests > 0 && run_finite(m, d, c, B, n_off, share, cavg,
	                                  r, err) != GP_OK)
		return GP_EINVAL;
	r->tokens_per_s_gpu = r->tokens_per_s / c->gpus;
	return GP_OK;
}

double infer_itl_loaded(double itl, double cycle, double steps, double B)
{
	double x = cycle - steps * itl;

	if (!(steps > 0.0) || !(B > 1.0) || !(x > 0.0))
		return itl;
	return itl + x * (B - 1.0) / (B * steps);
}

double infer_new_prompt(const infer_cfg *c)
{
	return c->input - c->cached;
}

/* A request's decode step j (1 .. output - 1) attends the input + j
 * tokens of its sequence, input + output / 2 on the mean.  A static-
 * shape runtime that buckets its cache (c->kv_bucket = b) attends each
 * step's keys up to the next multiple of b, at most the cache's whole
 * input + output: optimum-habana's greedy loop sets "cache_idx = (idx +
 * 1) * bucket_size" with "idx = (token_idx_cpu - 1) // bucket_size",
 * kv_cache_len past the last whole bucket, and the Llama attention
 * slices "key_states[:, :, :cache_idx, :]" before its matmuls
 * (optimum/habana/transformers/generation/utils.py and models/llama/
 * modeling_llama.py, v1.14.1, the release for Intel Gaudi software
 * 1.18).  The mean of those lengths, in closed form: the lengths t in
 * (k b - b, k b] pay k b each; of the buckets k1 = ceil(lo / b) .. k2 =
 * ceil(hi / b) the steps cover, only the last can reach past the cache's
 * input + output (hi < input + output), where it pays that length. */
double infer_decode_ctx(const infer_cfg *c)
{
	double b = c->kv_bucket, n = c->output - 1.0, lo, hi, full, k1, k2;
	double sum;

	if (!(b > 0.0) || !(n >= 1.0))
		return c->input + c->output / 2.0;
	lo = c->input + 1.0;
	hi = c->input + n;
	full = c->input + c->output;
	k1 = ceil(lo / b);
	k2 = ceil(hi / b);
	if (k1 == k2)
		return fmin(full, k1 * b);
	/* the first bucket's steps, the last's, and b steps of each bucket
	 * between at k b: b^2 (k1 + 1 + ... + k2 - 1) */
	sum = (k1 * b - lo + 1.0) * k1 * b +
	      (hi - (k2 - 1.0) * b) * fmin(full, k2 * b) +
	      b * b * ((k2 - 1.0) * k2 / 2.0 - k1 * (k1 + 1.0) / 2.0);
	return sum / n;
}

double infer_prefill_wait(double fin, const double *k, const double *t,
                          int n)
{
	double p, K;

	if (!(fin > 1e-12) || n < 1)
		return 0.0;
	p = -expm1(-fin);
	K = fin / p;
	if (K >= k[n - 1])
		return fin * t[n - 1] / k[n - 1];
	return p * infer_run_itl(k, t, n, K);
}

double infer_prompt_share(double prompts, double len, double steps,
                          double room)
{
	if (!(steps > 0.0) || !(room > 0.0))
		return 1.0;
	return fmin(1.0, prompts * len / (steps * room));
}

int infer_run(const gp_model *m, const roof_device *d, const infer_cfg *c,
              infer_result *r, gp_error *err)
{
	gp_mem_result mr;
	infer_cfg k;
	double n_off = 0.0;
	int B, stage;

	if (!r)
		return gp_fail(err, "infer_run: NULL output");
	if (infer_check(m, d, c, err) != GP_OK)
		return GP_EINVAL;
	memset(r, 0, sizeof *r);
	r->replicas = c->gpus / (c->tp * c->pp);
	r->kv_reads = infer_kv_reads(m, c);
	r->mixed_kv_reads = infer_mixed_kv_reads(m, c);
	stage = (m->layers + c->pp - 1) / c->pp;
	/* A helper that finds the replica does not fit leaves the reason
	 * in r->why (fits stays 0). */
	if (run_weights(m, c, stage, r, &mr, &n_off, err))
		return GP_EINVAL;
	if (r->why[0])
		return GP_OK;
	if (run_kv(m, c, stage, &mr, n_off, r, err))
		return GP_EINVAL;
	B = run_batch(c, r);
	if (B < 1)
		return GP_OK;
	r->fits = 1;
	r->batch = B;
	/* An unfused dequantisation passes over the whole pool, the KV
	 * budget the runtime allocated at start (infer.c kv_dequant). */
	k = *c;
	if (k.kv_unfused)
		k.kv_pool = r->kv_budget;
	/* A step passes through every stage, and each of the pp stages
	 * keeps n_off of its layers in host memory (at most the model's
	 * layers in all). */
	if (run_times(m, d, &k, B, fmin(n_off * c->pp, (double)m->layers),
	              r, err))
		return GP_EINVAL;
	/* One user's rate is 1 / the mean gap between its tokens, itl_load:
	 * the decode step and the other requests' prompts that run between
	 * them (infer_itl_loaded; itl where no prompt interleaves: batch 1, a
	 * static batch).  It was 1 / itl, the decode step alone, so at a
	 * loaded batch the users' rates summed past the system's output
	 * (Llama 3.1 70B fp8 TP2 on H100 at 32 users: 41.9 tok/s a user, x 32
	 * = 1341 against 955 tok/s) -- while the MoE path (serve_plan.c: its
	 * itl holds the prefill stalls) and a benchmark's per-user figure
	 * take the mean gap: AIPerf's "Output Token Throughput Per User" is 1
	 * / its Inter Token Latency, (request latency - TTFT) / (output
	 * tokens - 1) per request (ai-dynamo/aiperf, metrics
	 * OutputTokenThroughputPerUserMetric and InterTokenLatencyMetric), and
	 * vLLM's benchmark_serving's TPOT is the same mean. */
	r->stream_tokens_per_s = 1.0 / r->itl_load;
	if (c->price > 0) {
		r->cost_per_mtok = gp_cost_per_mtok(c->price, c->gpus,
						    r->tokens_per_s);
		r->tokens_per_s_per_price = r->tokens_per_s /
			(c->price * c->gpus);
	}
	return GP_OK;
}

int infer_target_check(double target, double itl_limit, gp_error *err)
{
	if (!gp_finite(target) || target <= 0 || target > GP_AMOUNT_MAX ||
	    !gp_finite(itl_limit) || itl_limit <= 0 || itl_limit > 3600)
		return gp_fail(err, "target tokens/s must be in (0, %g] and "
		               "the ITL limit in (0, 3600] s (got %g, %g)",
		               GP_AMOUNT_MAX, target, itl_limit);
	return GP_OK;
}

int infer_target_too_big(double target, gp_error *err)
{
	return gp_fail(err, "target %g tokens/s needs more than %d GPUs",
	               target, GP_COUNT_MAX);
}

/* "one sequence alone", not "batch 1": the CLI names options by their
 * flags, and "batch 1 takes" read as a --batch the user never gave. */
void infer_no_batch_why(char *buf, size_t n, double itl_limit, double itl1)
{
	snprintf(buf, n, "no batch meets ITL %.3g ms (one sequence alone "
	         "takes %.3g ms)", itl_limit * 1e3, itl1 * 1e3);
}

int infer_batch_candidates(const infer_cfg *c, int lo, int out[2])
{
	int i, n = 0;

	if (lo < 1)
		return 0;
	out[n++] = lo;
	if (!c || c->runtime != INFER_GRAPHS || c->n_graph == 0)
		return n;
	for (i = c->n_graph - 1; i >= 0; i--)
		if (c->graph_sizes[i] <= lo) {
			if (c->graph_sizes[i] < lo)
				out[n++] = c->graph_sizes[i];
			break;
		}
	return n;
}

int infer_best_batch(const gp_model *m, const roof_device *d,
                     const infer_cfg *c, int lo, double itl_limit,
                     int *batch, infer_result *r, gp_error *err)
{
	infer_cfg k = *c;
	infer_result x;
	int cand[2], n, i;

	n = infer_batch_candidates(c, lo, cand);
	if (n < 1)
		return gp_fail(err, "infer_best_batch: batch %d below 1", lo);
	k.batch = cand[0];
	k.concurrency = 0;
	if (infer_run(m, d, &k, r, err) != GP_OK)
		return GP_EINVAL;
	*batch = cand[0];
	for (i = 1; i < n; i++) {
		k.batch = cand[i];
		if (infer_run(m, d, &k, &x, err) != GP_OK)
			return GP_EINVAL;
		/* the candidate must meet the limit itself (a step priced
		 * off the padding need not be monotone in the batch), and
		 * win outright: a tie keeps the larger batch */
		if (x.fits && (c->output <= 1.0 || x.itl_load <= itl_limit) &&
		    x.tokens_per_s > r->tokens_per_s) {
			*r = x;
			*batch = cand[i];
		}
	}
	return GP_OK;
}

int infer_gpus_for(const gp_model *m, const roof_device *d,
                   const infer_cfg *c, double target, double itl_limit,
                   int *gpus, int *batch, double *tps, gp_error *err)
{
	infer_cfg k;
	infer_result r;
	int lo, hi, per;
	double rep;

	if (!c || !gpus || !batch || !tps)
		return gp_fail(err, "infer_gpus_for: NULL argument");
	if (infer_check(m, d, c, err) != GP_OK)
		return GP_EINVAL;
	k = *c;
	if (infer_target_check(target, itl_limit, err) != GP_OK)
		return GP_EINVAL;
	per = c->tp * c->pp;
	k.gpus = per;
	k.batch = 0;
	k.concurrency = 0;
	if (infer_run(m, d, &k, &r, err) != GP_OK)
		return GP_EINVAL;
	if (!r.fits)
		return gp_fail(err, "%s", r.why);
	/* ITL grows with the batch: bisect for the largest batch within
	 * the limit.  With one output token, the prefill's own, no decode
	 * step runs (gp.infer reports no ITL): the limit binds nothing, and
	 * was refused as "no batch meets ITL" by the ITL of a step that
	 * never runs. */
	lo = 0;
	hi = r.max_batch_kv;
	while (lo < hi) {
		int mid = lo + (hi - lo + 1) / 2;

		k.batch = mid;
		if (infer_run(m, d, &k, &r, err) != GP_OK)
			return GP_EINVAL;
		if (r.fits && (c->output <= 1.0 || r.itl_load <= itl_limit))
			lo = mid;
		else
			hi = mid - 1;
	}
	if (lo == 0) {
		char why[160];

		k.batch = 1;
		if (infer_run(m, d, &k, &r, err) != GP_OK)
			return GP_EINVAL;
		if (!r.fits)
			return gp_fail(err, "%s", r.why);
		infer_no_batch_why(why, sizeof why, itl_limit, r.itl);
		return gp_fail(err, "%s", why);
	}
	if (infer_best_batch(m, d, &k, lo, itl_limit, &lo, &r, err) != GP_OK)
		return GP_EINVAL;
	/* At least one replica: a target of 5e-324 tokens/s underflowed
	 * target / tokens_per_s to 0 replicas and 0 GPUs. */
	rep = fmax(1.0, ceil(target / r.tokens_per_s));
	/* target 1e308 made rep too large for an int (UB in the cast). */
	if (rep * per > GP_COUNT_MAX)
		return infer_target_too_big(target, err);
	*gpus = (int)rep * per;
	*batch = lo;
	*tps = rep * r.tokens_per_s;
	return GP_OK;
}
