/*
 * rl_pipe.c - a pipeline's schedule over micro-batches of random length
 * (rl_cfg.count_split): the expected time of Megatron-Core's
 * non-interleaved schedule when every micro-batch holds k sequences of
 * the step's random lengths, over its time when each holds the mean.
 *
 * Where it applies: verl's Megatron actor without use_dynamic_bsz cuts a
 * mini-batch into micro-batches by sequence count, "micro_batches =
 * mini_batch.batch.split(micro_batch_size)" (verl/workers/actor/
 * megatron_actor.py forward_backward_batch, commit 503ea75f5), and runs
 * each packed to its own sequences' tokens (models/mcore/model_forward.py
 * gptmodel_forward, pack_seqs=True: preprocess_packed_seqs drops the
 * padding; config_converter.py "variable_seq_lengths": True), so a
 * micro-batch's work follows the sum of its k sequences' lengths.  With
 * use_dynamic_bsz, rearrange_micro_batches evens the micro-batches' token
 * sums instead (rl_token_bins): no spread, nothing here.
 *
 * The schedule: Megatron-Core's forward_backward_pipelining_without_
 * interleaving (megatron/core/pipeline_parallel/schedules.py): stage s
 * of p runs min(p - s - 1, m) warm-up forwards ("input_tensor =
 * p2p_communicator.recv_forward(...)", forward, "send_forward(...)"),
 * then m - warm-up steady steps -- forward, "output_tensor_grad =
 * p2p_communicator.send_forward_recv_backward(...)", backward,
 * "send_backward_recv_forward(...)" (send_backward on the last) --
 * then the warm-up's backwards ("recv_backward", backward,
 * "send_backward").  Forward only: forward, "send_forward", "recv_
 * forward" each step.  Every exchange is a rendezvous of the two
 * neighbours: verl sets "batch_p2p_comm = False" and, without virtual
 * stages, overlap_p2p_comm False (models/mcore/config_converter.py at
 * 503ea75f5), so p2p_communicate runs with wait_on_reqs ("if
 * wait_on_reqs and len(reqs) > 0: for req in reqs: req.wait()",
 * p2p_communication.py): the compute that follows waits for the NCCL
 * send or receive, and a send of more than NCCL's staging buffer
 * (NCCL_BUFFSIZE, 4 MiB) completes only once the peer's receive runs.
 * So a stage that finishes early waits for its neighbour at each
 * exchange, and the slower of two adjacent micro-batches sets the
 * pace: a blocking flow shop, not a buffered one.
 *
 * Its expected time: no closed form for general p and m (with buffers,
 * a flow shop of job times equal on every machine takes sum a_i + (p -
 * 1) max a_i, Pinedo, Scheduling, 5th ed., sec. 6.1 "proportionate flow
 * shop"; the rendezvous couples each step to both neighbours).  It is
 * evaluated here on the schedule itself: each stage's program of
 * computes and exchanges, each exchange starting when both neighbours
 * reach it, over R draws of the m micro-batches (a fixed-seed
 * generator: the same inputs give the same figure), the mean of the
 * makespans over the makespan with every micro-batch at the mean.  A
 * micro-batch's forward and backward take its tokens' share of the
 * pass (work linear in tokens: the GEMMs; attention's quadratic term
 * would spread them more, so this is a lower bound), the backward fb
 * times the forward.
 */
#include "rl.h"
#include "rl_lengths.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/* splitmix64 (Steele, Lea and Flood, "Fast splittable pseudorandom
 * number generators", OOPSLA 2014): a uniform in (0, 1). */
static double rl_pipe_unif(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

/* Ops of a stage's program: >= 0 a compute, 2 i the forward of
 * micro-batch i and 2 i + 1 its backward; < 0 an exchange on link
 * -(op + 1), between stages L and L + 1. */
static long rl_pipe_program(int p, int s, long m, int fwd_only, int *op)
{
	long w = p - s - 1 < m ? p - s - 1 : m, rem = m - w, f = 0, b = 0,
		n = 0, i;
	int prev = s > 0, next = s < p - 1;

#define RF() do { if (prev) op[n++] = -(s - 1) - 1; } while (0)
#define SF() do { if (next) op[n++] = -s - 1; } while (0)
	for (i = 0; i < w; i++) {
		RF();
		op[n++] = (int)(2 * f++);
		SF();
	}
	if (rem > 0)
		RF();
	for (i = 0; i < rem; i++) {
		op[n++] = (int)(2 * f++);
		if (fwd_only) {
			SF();
			if (i < rem - 1)
				RF();
		} else {
			SF();   /* send_forward_recv_backward */
			op[n++] = (int)(2 * b++ + 1);
			RF();   /* send_backward(_recv_forward) */
		}
	}
	if (!fwd_only)
		for (i = 0; i < w; i++) {
			SF();   /* recv_backward */
			op[n++] = (int)(2 * b++ + 1);
			RF();   /* send_backward */
		}
#undef RF
#undef SF
	return n;
}

/* The makespan of the programs over micro-batch times a (forward a_i /
 * (1 + fb), backward fb a_i / (1 + fb)); -1 if they deadlock (they do
 * not: each link's exchanges come in the same order on both sides). */
static double rl_pipe_run(int p, int *const *prog, const long *len,
			  const double *a, double fb, double *t, long *at)
{
	int s, moved, o, L;
	double end = 0;

	for (s = 0; s < p; s++) {
		t[s] = 0;
		at[s] = 0;
	}
	do {
		moved = 0;
		for (s = 0; s < p; s++)
			while (at[s] < len[s]) {
				int op = prog[s][at[s]];

				if (op >= 0) {
					t[s] += a[op / 2] * ((op & 1) ? fb :
						1.0) / (1.0 + fb);
					at[s]++;
					moved = 1;
					continue;
				}
				L = -op - 1;
				o = L == s ? s + 1 : L;
				if (at[o] >= len[o] || prog[o][at[o]] != op)
					break;
				t[s] = t[o] = fmax(t[s], t[o]);
				at[s]++;
				at[o]++;
				moved = 1;
			}
	} while (moved);
	for (s = 0; s < p; s++) {
		if (at[s] < len[s])
			return -1;
		end = fmax(end, t[s]);
	}
	return end;
}

/* Draws the figure averages over: enough that R m k lengths and R p m
 * ops stay near RL_PIPE_WORK each (a few ms), at least RL_PIPE_MIN. */
#define RL_PIPE_WORK 4e6
#define RL_PIPE_MIN 64
#define RL_PIPE_MAX 4096

/* The mean makespan over R draws of m micro-batches of k sequences
 * (*mean) and the makespan with each at the mean (*base); -1 if out of
 * memory or a run fails, else 0. */
static int rl_pipe_mean(const lenx *x, double prompt, double len_mean,
			int k, int p, long m, int fwd_only, double fb, long R,
			double *mean, double *base)
{
	int **prog = NULL;
	long *len = NULL, *at = NULL, r, i;
	double *a = NULL, *t = NULL, sum = 0;
	uint64_t seed = 0x6770706c616e5050ULL; /* fixed: "gpplanPP" */
	int s, j, rc = -1;

	prog = calloc((size_t)p, sizeof *prog);
	len = calloc((size_t)p, sizeof *len);
	at = calloc((size_t)p, sizeof *at);
	t = calloc((size_t)p, sizeof *t);
	a = calloc((size_t)m, sizeof *a);
	if (!prog || !len || !at || !t || !a)
		goto out;
	for (s = 0; s < p; s++) {
		/* A forward or a backward is its compute and at most two
		 * exchanges, and the steady phase's first receive is one
		 * more: at most 6 m + 1 ops (rl_pipe_program). */
		prog[s] = malloc((size_t)(6 * m + 1) * sizeof **prog);
		if (!prog[s])
			goto out;
		len[s] = rl_pipe_program(p, s, m, fwd_only, prog[s]);
	}
	for (i = 0; i < m; i++)
		a[i] = k * (prompt + len_mean);
	*base = rl_pipe_run(p, prog, len, a, fb, t, at);
	if (!(*base > 0))
		goto out;
	for (r = 0; r < R; r++) {
		double ms;

		for (i = 0; i < m; i++) {
			a[i] = 0;
			for (j = 0; j < k; j++)
				a[i] += prompt + rl_lenx_surv_inv(x,
					rl_pipe_unif(&seed));
		}
		ms = rl_pipe_run(p, prog, len, a, fb, t, at);
		if (!(ms > 0))
			goto out;
		sum += ms;
	}
	*mean = sum / R;
	rc = 0;
out:
	if (prog)
		for (s = 0; s < p; s++)
			free(prog[s]);
	free(prog);
	free(len);
	free(at);
	free(t);
	free(a);
	return rc;
}

/* Past RL_PIPE_WORK / RL_PIPE_MIN units of m (k + p), RL_PIPE_MIN draws
 * of all m micro-batches would cost seconds and 24 p m bytes of
 * programs (65536 micro-batches at p 64: 23 s a command, and a million
 * a gigabyte).  There the makespans are affine in m: once every stage
 * is in its steady phase each further micro-batch adds the same
 * expected step (the schedule's warm-up and drain are p - 1 steps
 * whatever m), at the mean exactly (m + p - 1 steps) and over the draws
 * in expectation.  So the schedule is run at ms = RL_PIPE_WORK /
 * (RL_PIPE_MIN (k + p)) micro-batches (at least RL_PIPE_STEADY p: deep
 * in the steady phase) and at ms / 2, RL_PIPE_MIN draws each, and both
 * makespans are extended linearly to m. */
#define RL_PIPE_STEADY 4

double rl_pipe_stretch(const rl_lengths *l, double prompt, int k, int p,
		       long m, int fwd_only, double fb)
{
	lenx x;
	long R, ms, h;
	double mean, base, mean_h, base_h, step, bstep;

	/* One micro-batch waits for nothing but its own passes: the
	 * makespan is linear in its length, and its expectation the
	 * mean's exactly (the draws would only add their noise). */
	if (p < 2 || m < 2 || k < 1 || !(fb >= 0) ||
	    l->dist == RL_LEN_FIXED || rl_lenx_of(l, &x, NULL))
		return 1.0;
	ms = (long)(RL_PIPE_WORK / (RL_PIPE_MIN * ((double)k + p)));
	if (ms < (long)RL_PIPE_STEADY * p)
		ms = (long)RL_PIPE_STEADY * p;
	if (m <= 2 * ms) {
		R = (long)(RL_PIPE_WORK / ((double)m * (k + p)));
		R = R < RL_PIPE_MIN ? RL_PIPE_MIN : R > RL_PIPE_MAX ?
			RL_PIPE_MAX : R;
		if (rl_pipe_mean(&x, prompt, l->mean, k, p, m, fwd_only, fb,
				 R, &mean, &base))
			return 1.0;
		return mean / base;
	}
	h = ms / 2;
	if (rl_pipe_mean(&x, prompt, l->mean, k, p, ms, fwd_only, fb,
			 RL_PIPE_MIN, &mean, &base) ||
	    rl_pipe_mean(&x, prompt, l->mean, k, p, h, fwd_only, fb,
			 RL_PIPE_MIN, &mean_h, &base_h))
		return 1.0;
	step = (mean - mean_h) / (double)(ms - h);
	bstep = (base - base_h) / (double)(ms - h);
	mean += step * (double)(m - ms);
	base += bstep * (double)(m - ms);
	if (!(base > 0) || !(mean > 0))
		return 1.0;
	return mean / base;
}
