/*
 * t_rl.c - the RL step (GRPO/PPO) against hand derivations.
 *
 * The device and topology are t_train.c's round-number A100-like part
 * (312 TFLOPS bf16, 2.039 TB/s at 0.85, 80 GB) in 8-GPU NVLink nodes with
 * 8 NICs.  The policy is a small MQA model (16 layers, hidden 2048, one KV
 * head of 128) whose KV cache is 2 x 16 x 128 x 2 B = 8 KiB per token, so
 * that 512 responses of 8k tokens fit one engine at once and the rollout
 * can be checked against the serving model step by step.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "infer.h"
#include "memory.h"
#include "model.h"
#include "rl.h"
#include "fixture.h"
#include "recipes.h"
#include "serve.h"
#include "tap.h"
#include "train.h"

static void diag_msg(const char *s)
{
	printf("# %s\n", s);
}

/* 16 layers, hidden 2048, 16 heads of 128, one KV head, SwiGLU 8192,
 * vocabulary 32000, untied, RMSNorm. */
static gp_model mqa(void)
{
	gp_model m;

	memset(&m, 0, sizeof m);
	m.layers = 16;
	m.hidden = 2048;
	m.heads = 16;
	m.kv_heads = 1;
	m.head_dim = 128;
	m.ffn_hidden = 8192;
	m.ffn_gated = 1;
	m.vocab = 32000;
	m.norm_params = 2048;
	return m;
}

/* GRPO on 8 GPUs, colocated: training tp 1 x dp 8 (mixed-16 AdamW, no
 * ZeRO), rollout tp 1 (8 engines); 512 prompts x 8 of 512 + 8192
 * tokens (fixed). */
static rl_cfg base(void)
{
	rl_cfg c;

	rl_defaults(&c);
	c.train.mem.recipe = FX_MIXED16;
	c.train.mem.optim = FX_ADAMW;
	c.train.mem.lay.dp = 8;
	c.train.mem.recompute = GP_RECOMPUTE_FULL;
	c.train.capacity = 80e9;
	mem_reserve_default(&c.train.reserve, 8);
	c.roll.tp = 1;
	c.roll.pp = 1;
	c.roll.max_batch = 1024;
	c.roll.max_num_tokens = 16384;
	c.prompts = 512;
	c.group = 8;
	c.prompt_len = 512;
	c.response.dist = RL_LEN_FIXED;
	c.response.mean = 8192;
	c.response.max = 8192;
	return c;
}

/* RL's sampling of a decode step beyond the serving model's (rollout.c):
 * batch x (58 B x V - 4 B x V / tp) streamed at 2.039 TB/s x 0.85, plus
 * one memory-bound kernel's fill (3.9 us, roofline.c ROOF_MEM_FILL) and
 * a graph launch (1 us). */
static double samp_at(const gp_model *m, const rl_cfg *c, double batch)
{
	double bytes = batch * (58.0 * m->vocab - 4.0 * m->vocab / c->roll.tp);

	return bytes / (2.039e12 * 0.85) + 3.9e-6 + 1e-6;
}

/* One decode step of the rollout without host work: the serving model's
 * step (infer_step) and RL's sampling. */
static double step_at(const gp_model *m, const roof_device *d,
		      const rl_cfg *c, double batch, double ctx)
{
	infer_cfg ic = c->roll;
	infer_phase ph;
	gp_error e;

	ic.gpus = ic.tp * ic.pp;
	ic.input = c->prompt_len;
	ic.output = c->response.mean;
	ic.capacity = 80e9;
	if (infer_step(m, d, &ic, batch, 1, ctx, 0, &ph, &e))
		return -1;
	return ph.time + samp_at(m, c, batch);
}

/* Set the engine's memory so that its KV budget is want bytes: the budget
 * is affine in it (the margin and the fragmentation allowance scale with
 * it), so two runs give the line and the third lands on the target. */
static void set_kv(const gp_model *m, const roof_device *d,
		   const gp_topo *t, rl_cfg *c, double want)
{
	static rl_result r;
	gp_error e;
	double e0 = 20e9, e1 = 10e9, k0, k1;

	c->engine_memory = e0;
	MUST(rl_step(m, d, t, c, &r, &e));
	k0 = r.roll.kv_budget;
	c->engine_memory = e1;
	MUST(rl_step(m, d, t, c, &r, &e));
	k1 = r.roll.kv_budget;
	c->engine_memory = e1 + (want - k1) * (e0 - e1) / (k0 - k1);
}

/* Simpson's rule over [0, 4000) in 4000 panels of the survival S(t)
 * (moment 0: E[L] = int S) or of 2 t S(t) (moment 1: E[L^2]); the last
 * node just below the limit, where the survival still holds the share
 * cut there. */
static double surv_simpson(const rl_lengths *l, int moment)
{
	double sum = 0;
	int i;

	for (i = 0; i <= 4000; i++) {
		double w = i == 0 || i == 4000 ? 1 : (i % 2 ? 4 : 2);
		double t = i - (i == 4000 ? 1e-9 : 0);

		sum += w * (moment ? 2.0 * i : 1.0) * rl_len_survival(l, t);
	}
	return sum / 3.0;
}

int main(void)
{
	roof_device d;
	gp_topo t = fx_selene();
	gp_model m = mqa();
	gp_params p;
	rl_cfg c, k;
	rl_result r, r2;
	rl_lengths l = { 0 };
	gp_error e;
	double P, kvtok, want, sum, th, a, x;
	int i, rc, R;

	plan(154);
	fx_a100(&d);
	MUST(model_params(&m, &p, &e));
	P = p.total;

	/* --- response lengths ------------------------------------------- */
	/* exp, mean 1000, limit 4000: theta solves theta (1 - e^{-4000 /
	 * theta}) = 1000; the clipped mean is the integral of the survival
	 * P(L > t) = e^{-t/theta} over [0, 4000) (Simpson, 4000 panels). */
	l.dist = RL_LEN_EXP;
	l.mean = 1000;
	l.max = 4000;
	ok(rl_lengths_prepare(&l, &e) == GP_OK, "exp 1000 / 4000 is valid");
	/* The scale is solved once, into l.theta: it gives back the mean,
	 * theta (1 - e^{-4000/theta}) = 1000 (the bisection ends within an
	 * ulp or two of the root: 1e-12), and rl_lengths_check accepts it. */
	is_num(-l.theta * expm1(-4000 / l.theta), 1000, 1e-12,
	       "exp: the prepared scale solves the clipped mean");
	ok(rl_lengths_check(&l, &e) == GP_OK, "exp: a prepared scale checks");
	/* Another mean under the old scale is stale: refused, naming the
	 * call that solves it (its clipped mean, 1000, is not 1500). */
	l.mean = 1500;
	ok(rl_lengths_check(&l, &e) == GP_EINVAL &&
	   strstr(e.msg, "rl_lengths_prepare"),
	   "exp: a scale solved for another mean refused");
	l.mean = 1000;
	/* A scale never solved (0, a zeroed struct) is refused before it
	 * divides max (make test SANITIZE=1 stops on a division by zero). */
	{
		double theta = l.theta;

		l.theta = 0;
		ok(rl_lengths_check(&l, &e) == GP_EINVAL &&
		   strstr(e.msg, "rl_lengths_prepare"),
		   "exp: a scale never solved (0) refused");
		l.theta = theta;
	}
	sum = surv_simpson(&l, 0);
	is_num(sum, 1000, 1e-6, "exp: integral of the survival = mean");
	/* E[L^2] = int 2 t S(t) dt, the same quadrature. */
	sum = surv_simpson(&l, 1);
	is_num(rl_len_moment2(&l), sum, 1e-6,
	       "exp: E[L^2] = 2 theta^2 (1 - e^{-M/theta}(1 + M/theta))");
	/* theta from the survival at 1000: S = e^{-1000/theta}; the
	 * expected longest of 4 is theta H_4 = theta 25/12 (Renyi). */
	th = -1000.0 / log(rl_len_survival(&l, 1000));
	is_num(rl_len_longest(&l, 4), th * 25.0 / 12.0, 1e-9,
	       "exp: longest of 4 = theta H_4");
	is_num(rl_len_longest(&l, 1e6), 4000, 0,
	       "exp: a million responses reach the limit");
	/* A share c = 0.05 cut at the limit (response_clip): the survival
	 * is c + (1 - c) e^{-t/theta} below it, so its integral is still
	 * the mean (the same quadrature) and E[L^2] its 2 t S(t) integral;
	 * theta from the survival at 1000, (S - c) / (1 - c) =
	 * e^{-1000/theta}; the longest of 4 is the limit unless none of the
	 * 4 is cut, 0.95^4: 4000 (1 - 0.95^4) + 0.95^4 theta H_4. */
	l.clip = 0.05;
	ok(rl_lengths_prepare(&l, &e) == GP_OK, "exp 1000 / 4000, 5% cut: valid");
	sum = surv_simpson(&l, 0);
	is_num(sum, 1000, 1e-6, "cut: integral of the survival = mean");
	sum = surv_simpson(&l, 1);
	is_num(rl_len_moment2(&l), sum, 1e-6,
	       "cut: E[L^2] = c M^2 + (1 - c) E_body[L^2]");
	ok(rl_len_survival(&l, 4000 - 1e-9) > 0.05,
	   "cut: a share above c still runs just below the limit");
	th = -1000.0 / log((rl_len_survival(&l, 1000) - 0.05) / 0.95);
	is_num(rl_len_longest(&l, 4), 4000 * (1 - pow(0.95, 4)) +
	       pow(0.95, 4) * th * 25.0 / 12.0, 1e-9,
	       "cut: longest of 4 = M (1 - q) + q theta H_4, q = 0.95^4");
	l.clip = 0.3;
	ok(rl_lengths_prepare(&l, &e) == GP_EINVAL && l.theta == 0 &&
	   strstr(e.msg, "response_clip 0.3"),
	   "0.3 x 4000 cut above a 1000 mean refused");
	l.clip = 1;
	ok(rl_lengths_prepare(&l, &e) == GP_EINVAL &&
	   strstr(e.msg, "[0, 1)"), "a share of 1 refused");
	l.clip = 0;
	/* uniform on [2 mean - max, max] = [200, 1800]: the longest of n
	 * is lo + (max - lo) n / (n + 1); one draw: the mean. */
	l.dist = RL_LEN_UNIFORM;
	l.mean = 1000;
	l.max = 1800;
	MUST(rl_lengths_prepare(&l, &e));
	is_num(rl_len_longest(&l, 1), 1000, 1e-12, "uniform: longest of 1 = mean");
	is_num(rl_len_longest(&l, 9), 200 + 1600 * 0.9, 1e-12,
	       "uniform: longest of 9 = lo + 0.9 (max - lo)");
	is_num(rl_len_moment2(&l), (200.0 * 200 + 200 * 1800 + 1800.0 * 1800) /
	       3, 1e-12, "uniform: E[L^2] = (lo^2 + lo hi + hi^2) / 3");
	/* The busiest of 8 ranks of 16 draws each (rl_rank_skew): uniform
	 * 200..1800 has sd 1600 / sqrt(12) = 461.88; a 100-token prompt
	 * makes the mean 1100; z(8) = 5.5556 (1 - (0.375 / 7.625 ...)):
	 * q = 7.625 / 8.25, 5.5556 (1 - ((1 - q) / q)^0.1186) = 1.42618
	 * (the exact expected largest of 8 normals is 1.4236): 1 + 1.42618
	 * x 461.88 / (1100 x 4) = 1.14971.  Fixed lengths or one rank:
	 * even. */
	is_num(rl_rank_skew(&l, 100, 8, 16), 1.149710, 1e-6,
	       "rank skew: 1 + z(8) sd / (mean sqrt(k))");
	is_num(rl_rank_skew(&l, 100, 1, 16), 1.0, 0, "rank skew: one rank is even");
	/* Megatron's pipeline over micro-batches of random length
	 * (rl_pipe_stretch), against the schedule worked by hand at p = 2
	 * stages, m = 2 micro-batches of one sequence each (times a0, a1,
	 * forward a / (1 + fb), backward fb a / (1 + fb)), each exchange
	 * starting when both stages reach it.
	 * Forward only: stage 0 runs F0, sends (t = a0), runs F1; stage 1
	 * runs F0 from a0 to 2 a0, then receives F1 at max(a0 + a1, 2 a0)
	 * and runs it: a0 + a1 + max(a0, a1), against 3 mu at the mean.
	 * 1F1B (fb = 2, f = a/3, b = 2a/3): stage 0 F0, exchange #1 at f0,
	 * F1; stage 1 F0, B0 (done at f0 + a0); exchange #2 at f0 +
	 * max(f1, a0); stage 0 B0, stage 1 F1 B1; exchange #3 after
	 * max(b0, a1); stage 0 B1: f0 + max(f1, a0) + max(b0, a1) + b1,
	 * against 3 mu ((m + p - 1) mu).  Lengths uniform on [500, 1500]
	 * (mean 1000, no prompt): the expectations by a 400 x 400 midpoint
	 * quadrature (error ~1e-6); the engine's is a mean over its fixed
	 * sample of 4096 draws, whose standard error is ~0.3% of 3 mu (sd
	 * of the forward-only makespan ~600 tokens / sqrt(4096)): 1.2%
	 * tolerance, four standard errors. */
	{
		rl_lengths u = { 0 };
		double fo = 0, ff = 0, a0, a1, h = 1000.0 / 400;
		int i0, i1;

		u.dist = RL_LEN_UNIFORM;
		u.mean = 1000;
		u.max = 1500;
		MUST(rl_lengths_prepare(&u, &e));
		for (i0 = 0; i0 < 400; i0++)
			for (i1 = 0; i1 < 400; i1++) {
				a0 = 500 + (i0 + 0.5) * h;
				a1 = 500 + (i1 + 0.5) * h;
				fo += a0 + a1 + fmax(a0, a1);
				ff += a0 / 3 + fmax(a1 / 3, a0) +
					fmax(2 * a0 / 3, a1) + 2 * a1 / 3;
			}
		fo /= 400.0 * 400 * 3000;
		ff /= 400.0 * 400 * 3000;
		/* hand check of the forward-only: (2 mu + E max) / 3 mu,
		 * E max of two U[500, 1500] = 500 + 2/3 1000 */
		is_num(fo, (2000 + 500 + 2000.0 / 3) / 3000, 1e-5,
		       "pipe: quadrature of the forward-only makespan");
		is_num(rl_pipe_stretch(&u, 0, 1, 2, 2, 1, 0), fo, 0.012,
		       "pipe: forward only, p 2, m 2 = E[a0 + a1 + max] / 3 mu");
		is_num(rl_pipe_stretch(&u, 0, 1, 2, 2, 0, 2), ff, 0.012,
		       "pipe: 1F1B, p 2, m 2 = the hand schedule's mean / 3 mu");
		/* No pipeline, or fixed lengths: nothing waits. */
		is_num(rl_pipe_stretch(&u, 0, 1, 1, 64, 0, 2), 1.0, 0,
		       "pipe: one stage is the mean");
		/* One micro-batch through 64 stages: its forward down the
		 * stages, 64 a / (1 + fb), and its backward up them, 64 fb
		 * a / (1 + fb): 64 a, linear in a, so its mean is the
		 * mean's: exactly 1 (the 64 draws gave 0.9956, their
		 * noise). */
		is_num(rl_pipe_stretch(&u, 0, 1, 64, 1, 0, 2), 1.0, 0,
		       "pipe: one micro-batch is the mean");
		u.dist = RL_LEN_FIXED;
		u.max = 0;
		MUST(rl_lengths_prepare(&u, &e));
		is_num(rl_pipe_stretch(&u, 0, 2, 4, 64, 0, 2), 1.0, 0,
		       "pipe: fixed lengths are the mean");
		/* More sequences a micro-batch even them out (sd / sqrt(k)),
		 * more stages couple more neighbours: each strictly moves the
		 * stretch (the same fixed draws). */
		u.dist = RL_LEN_EXP;
		u.mean = 929;
		u.max = 8192;
		u.clip = 0.01;
		MUST(rl_lengths_prepare(&u, &e));
		ok(rl_pipe_stretch(&u, 150, 2, 2, 64, 0, 2) <
		   rl_pipe_stretch(&u, 150, 1, 2, 64, 0, 2) &&
		   rl_pipe_stretch(&u, 150, 2, 2, 64, 0, 2) <
		   rl_pipe_stretch(&u, 150, 2, 4, 64, 0, 2) &&
		   rl_pipe_stretch(&u, 150, 2, 2, 64, 0, 2) > 1.0,
		   "pipe: fewer sequences a micro-batch or more stages wait more");
		/* Many micro-batches: past RL_PIPE_WORK / RL_PIPE_MIN units
		 * of m (k + p) the schedule runs at ms = 4e6 / (64 x 65) =
		 * 961 and 480 micro-batches (p 64, k 1) and both makespans
		 * extend linearly to m.  Just past 2 ms = 1922 the extended
		 * figure is the full simulation's at 1922 (5.405 here; the
		 * old full simulation at 1923 gave 5.396): 1% tolerance,
		 * a few standard errors of the two 64-draw means (~0.3%
		 * each).  A billion micro-batches -- before, 24 p m = 1.5 TB
		 * of programs and 64 runs of them -- is the same few runs:
		 * above the 1922 figure (the warm-up's 63 of 1985 steps no
		 * longer dilute the waits) by less than 5%. */
		{
			double full = rl_pipe_stretch(&u, 150, 1, 64, 1922, 0, 2);

			is_num(rl_pipe_stretch(&u, 150, 1, 64, 1923, 0, 2), full,
			       0.01 * full,
			       "pipe: many micro-batches extend the schedule's slope");
			ok(rl_pipe_stretch(&u, 150, 1, 64, 1000000000L, 0, 2) >
			   full &&
			   rl_pipe_stretch(&u, 150, 1, 64, 1000000000L, 0, 2) <
			   1.05 * full,
			   "pipe: a billion micro-batches priced at once, "
			   "a little above 1922's");
		}
	}
	l.max = 2500;
	ok(rl_lengths_prepare(&l, &e) == GP_EINVAL &&
	   strstr(e.msg, "below one token"),
	   "uniform reaching below one token refused");
	l.dist = RL_LEN_EXP;
	l.max = 1000;
	ok(rl_lengths_prepare(&l, &e) == GP_EINVAL,
	   "exp with mean = max refused");

	/* --- the 8k rollout is decode-bound and follows the serving model */
	c = base();
	rc = rl_step(&m, &d, &t, &c, &r, &e);
	ok(rc == GP_OK, "GRPO step, 512 x 8 samples of 8k");
	if (rc)
		diag_msg(e.msg);
	is_num(r.roll.engines, 8, 0, "8 GPUs at rollout tp 1: 8 engines");
	is_num(r.roll.samples, 512, 0, "4096 samples / 8 engines = 512 each");
	ok(!r.roll.queued && r.roll.batch == 512,
	   "all 512 fit the KV budget at once (512 x 8704 x 8 KiB = 36.5 GB)");
	/* Every response runs 8192 steps at batch 512; the step time is
	 * affine in the context (the attention's KV reads; every other op
	 * keeps its size), so the segments' midpoint rule gives exactly
	 * 8192 x step(512, 512 + 4096 + 0.5), each step the serving
	 * model's plus RL's sampling (samp_at). */
	want = 8192 * step_at(&m, &d, &c, 512, 512 + 4096 + 0.5);
	/* 1e-6: the attention kernel's shape term and the compute/memory
	 * overlap of the GEMM model bend the step time slightly with the
	 * KV length (3e-7 here). */
	is_num(r.roll.decode, want, 1e-6,
	       "decode = 8192 x (infer_step + sampling)(512, mean context)");
	/* Sampling with log-probabilities: 512 x (58 - 4) B x 32000 =
	 * 885 MB per step at 1.733 TB/s = 0.51 ms, 8192 times; 1e-12:
	 * the same arithmetic. */
	is_num(r.roll.sampler, 8192 * samp_at(&m, &c, 512), 1e-12,
	       "sampler: 8192 x 512 x 54 B x 32000 at HBM speed");
	ok(r.roll.host == 0, "no engine host work by default");
	ok(r.roll.prefill < 0.01 * r.roll.decode,
	   "decode-bound: prefill under 1% of the rollout");
	/* Each engine prefills its 64 distinct prompts once (prefix
	 * caching), 16384 / 512 = 32 per batch: 2 batches. */
	{
		infer_cfg ic = c.roll;
		infer_phase ph;

		ic.gpus = 1;
		ic.input = 512;
		ic.output = 8192;
		ic.capacity = 80e9;
		MUST(infer_step(&m, &d, &ic, 32, 512, 512, 0, &ph, &e));
		is_num(r.roll.prefill, 2 * ph.time, 1e-12,
		       "prefill: 64 prompts in 2 batches of 32");
	}
	is_num(r.roll.tail, 0, 0, "fixed lengths: no tail");

	/* --- colocated memory at the rollout's peak ------------------------ */
	/* Rollout state = actor states (mixed-16: 2 + 2 + 4 + 8 B/param, no
	 * ZeRO) + the reference's 16-bit weights + the engine's 16-bit
	 * copy + the KV cache when all 512 hold 512 + 8192 tokens
	 * (8 KiB each) + the engine's prefill workspace. */
	kvtok = 2.0 * 16 * 1 * 128 * 2;
	{
		const gp_mem_result *mr = &r.mem[RL_MEM_ROLLOUT];
		double tens = 0;

		is_num(mr->bytes[GP_MEM_WEIGHTS] + mr->bytes[GP_MEM_GRADS] +
		       mr->bytes[GP_MEM_MASTER] + mr->bytes[GP_MEM_OPTIMIZER],
		       16.0 * P, 1e-12, "actor states 16 B/param");
		is_num(mr->bytes[GP_MEM_REF], 2.0 * P, 1e-12,
		       "reference weights 2 B/param");
		is_num(mr->bytes[GP_MEM_ROLLOUT_WEIGHTS], 2.0 * P, 1e-12,
		       "rollout engine weights 2 B/param");
		is_num(mr->bytes[GP_MEM_KV], 512.0 * (512 + 8192) * kvtok, 1e-12,
		       "rollout KV at its peak: 512 x 8704 x 8 KiB");
		for (i = 0; i < GP_MEM_NTENSOR; i++)
			tens += mr->bytes[i];
		is_num(tens, 20.0 * P + 512.0 * 8704 * kvtok +
		       r.roll.workspace, 1e-12,
		       "rollout tensors = states + ref + engine + KV + workspace");
		/* 5% fragmentation on the tensors but the engine's weights
		 * and KV pool, allocated once at start-up (memory_infer.c's
		 * rule, by which the engine sizes its pool). */
		is_num(mr->total, tens + 0.05 * (tens - 2.0 * P -
		       512.0 * 8704 * kvtok) + 0.5 * 1073741824.0 +
		       64.0 * 1048576 + 0.5 * 1073741824.0, 1e-12,
		       "total = tensors + 5% fragmentation of all but the "
		       "engine's pools + reserve");
	}
	ok(r.mem[RL_MEM_UPDATE].bytes[GP_MEM_KV] == 0,
	   "the KV cache is freed for the update");

	/* --- a colocated step is the sum of its phases --------------------- */
	for (i = 0, sum = 0; i < RL_NPHASES; i++)
		sum += r.ph[i].time;
	is_num(r.step, sum, 1e-12, "colocated: step = sum of the phases");
	ok(r.ph[RL_ROLLOUT].idle == 0 && r.ph[RL_ACTOR].idle == 0,
	   "colocated: nobody waits");
	/* GRPO: policy and reference forwards, no reward model or critic. */
	ok(r.ph[RL_LOGPROB].time == r.forward.step &&
	   r.ph[RL_REF].time == r.forward.step && r.ph[RL_REWARD].time == 0 &&
	   r.ph[RL_VALUES].time == 0 && r.ph[RL_CRITIC].time == 0,
	   "GRPO phases: logprob + reference forwards only");
	/* One mini-batch of all 4096: one optimizer step. */
	is_num(r.ph[RL_ACTOR].time, r.update.step, 1e-12,
	       "one optimizer step over all samples");
	/* Weight sync at tp 1 = rollout tp 1, no ZeRO, one stage: each GPU
	 * copies its 2P bytes into the engine (read + write at 2.039 TB/s
	 * x 0.85; 0.5%: a kernel's pipeline fill and launch, 5 us of
	 * 2.5 ms). */
	is_num(r.ph[RL_SYNC].time, 4.0 * P / (2.039e12 * 0.85), 5e-3,
	       "sync = 4P bytes at HBM speed");
	/* Cost: step x 8 GPUs x price / 3600; per 1k prompts / 512 x 1000. */
	c.price = 2.0;
	MUST(rl_step(&m, &d, &t, &c, &r, &e));
	is_num(r.cost_step, r.step * 8 * 2.0 / 3600, 1e-12,
	       "cost per step = step x GPUs x price");
	is_num(r.cost_1k_prompts, r.cost_step / 512 * 1000, 1e-12,
	       "cost per 1k prompts");
	is_num(r.samples_per_s, 4096 / r.step, 1e-12, "samples/s");
	is_num(r.tokens_per_s, 4096 * (512 + 8192) / r.step, 1e-12,
	       "tokens/s = samples x (prompt + response) / step");

	/* --- offload: the states go to host memory and back ---------------- */
	/* The trainer's weights 2 + master 4 + Adam 8 + reference 2 = 16
	 * B/param (the grads are freed, not moved: Megatron's
	 * offload_to_cpu) plus the engine's weights (vLLM sleep level 1),
	 * each way over a 25 GB/s link -- but the 12 B/param of master
	 * and Adam states out into pageable memory at 1.4 GB/s
	 * (RL_PAGEABLE_D2H, rl.c). */
	c.offload_states = 1;
	c.host_bw = 25e9;
	MUST(rl_step(&m, &d, &t, &c, &r, &e));
	is_num(r.swap_bytes, 16.0 * P + r.roll.weights, 1e-12,
	       "offloaded: 16 B/param and the engine's weights");
	is_num(r.ph[RL_SWAP].time, 2.0 * r.swap_bytes / 25e9 +
	       12.0 * P * (1.0 / 1.4e9 - 1.0 / 25e9), 1e-12,
	       "offload + reload = 2 x bytes / host link, the states out "
	       "at the pageable rate");
	ok(r.mem[RL_MEM_ROLLOUT].bytes[GP_MEM_OPTIMIZER] == 0 &&
	   r.mem[RL_MEM_ROLLOUT].bytes[GP_MEM_WEIGHTS] == 0 &&
	   r.mem[RL_MEM_ROLLOUT].bytes[GP_MEM_GRADS] == 0 &&
	   r.mem[RL_MEM_ROLLOUT].cpu_bytes == 16.0 * P &&
	   r.mem[RL_MEM_UPDATE].bytes[GP_MEM_ROLLOUT_WEIGHTS] == 0,
	   "each state holds the other's tensors on the host");
	c.offload_states = 0;

	/* --- a reference in host memory ------------------------------------ */
	/* Three crossings of the 16-bit weights (2 B/param) per step, on
	 * top of the forward, all on the 25 GB/s link: the policy's out
	 * into pinned memory (a non_blocking copy to the CPU), the
	 * reference's in and the policy's back; none of it on the GPU. */
	c.ref_host = 1;
	MUST(rl_step(&m, &d, &t, &c, &r, &e));
	is_num(r.ph[RL_REF].time, r.forward.step + 3.0 * 2.0 * P / 25e9,
	       1e-12, "ref_host: forward + 3 x the weights at the link");
	ok(r.mem[RL_MEM_UPDATE].bytes[GP_MEM_REF] == 0,
	   "ref_host: no reference on the GPU");
	c.host_bw = 0;
	ok(rl_step(&m, &d, &t, &c, &r, &e) == GP_EINVAL &&
	   strstr(e.msg, "ref_host"), "ref_host without a host link refused");
	c.host_bw = 25e9;
	c.ref_host = 0;

	/* --- KV-bound: vLLM's scheduler preempts and recomputes ----------- */
	/* 2 prompts x 8 = 16 samples: 2 per engine, each 512 + 8192 tokens
	 * (fixed), in a cache of C ~ 1.5 x 8704 tokens (the engine's memory
	 * set so): both start (2 x 512 fit), grow together until the cache
	 * is full, d1 = floor((C - 1024) / 2) steps at batch 2; the later
	 * arrival is evicted with d1 tokens generated; the first runs its
	 * 8192 - d1 remaining steps alone; then the evicted one prefills its
	 * 512 + d1 tokens again and runs 8192 - d1 steps alone.  Each
	 * segment at its midpoint context. */
	c = base();
	c.prompts = 2;
	set_kv(&m, &d, &t, &c, 1.5 * 8704 * kvtok);
	rc = rl_step(&m, &d, &t, &c, &r, &e);
	{
		double C = r.roll.kv_budget / kvtok, d1, d2;
		infer_cfg ic = c.roll;
		infer_phase ph;

		ok(rc == GP_OK && C > 1.4 * 8704 && C < 1.6 * 8704 &&
		   r.roll.queued, "2 per engine in ~1.5 sequences of KV: queued");
		/* (+1e-9 as the kernel: a cache filled to within float
		 * noise of a whole step counts as that step's room) */
		d1 = floor((C - 1024) / 2 + 1e-9);
		d2 = 8192 - d1;
		ic.gpus = 1;
		ic.input = 512;
		ic.output = 8192;
		ic.capacity = 80e9;
		MUST(infer_step(&m, &d, &ic, 1, 512 + d1, 512 + d1, 0, &ph,
				&e));
		want = d1 * step_at(&m, &d, &c, 2, 512 + 0.5 * d1 + 0.5) +
			2 * d2 * step_at(&m, &d, &c, 1, 512 + d1 + 0.5 * d2 +
					 0.5) + ph.time;
		/* 1e-6: as the decode above (the step bends slightly with
		 * the context inside a segment). */
		is_num(r.roll.decode, want, 1e-6,
		       "preempted: both together, the first alone, then the "
		       "evicted one re-prefilled and alone");
		is_num(r.roll.steps, d1 + 2 * d2, 0, "d1 + 2 (8192 - d1) steps");
		is_num(r.roll.preempted, 1, 0, "one preemption");
		is_num(r.roll.recompute, ph.time, 1e-12,
		       "its re-prefill of 512 + d1 tokens");
	}
	/* 1024 prompts x 8: 1024 per engine outgrow the budget; the
	 * scheduler evicts and recomputes, and the rollout takes longer
	 * than if every sample ran at once in a cache big enough for
	 * them (the same lengths, 8192 steps). */
	c = base();
	c.prompts = 1024;
	MUST(rl_step(&m, &d, &t, &c, &r, &e));
	ok(r.roll.queued && r.roll.preempted > 0 && r.roll.recompute > 0,
	   "1024 per engine: queued, some preempted and recomputed");
	ok(r.roll.steps > 8192 &&
	   r.roll.kv_peak <= r.roll.kv_budget * (1 + 1e-12),
	   "more steps than one sequence's 8192, within the budget");
	/* More requests than the scheduler's 512 representatives can split
	 * in a cache of 1.5 sequences (1024 per engine, two to a
	 * representative): the fluid queue instead, still a result. */
	c.prompts = 1024;
	set_kv(&m, &d, &t, &c, 1.5 * 8704 * kvtok);
	rc = rl_step(&m, &d, &t, &c, &r, &e);
	ok(rc == GP_OK && r.roll.queued && r.roll.preempted == 0 &&
	   r.roll.decode > 0, "too coarse to simulate: the fluid queue");
	c.engine_memory = 0;
	c.prompts = 512;

	/* --- the engine's host work per decode step ------------------------ */
	/* 20 us per sequence and 100 us per step, serial with the GPU: every
	 * one of the 8192 steps at batch 512 adds 0.1 ms + 512 x 20 us =
	 * 10.34 ms (the lengths are fixed: no tail); the prefill adds 2
	 * chunks x 0.1 ms + 512 requests x 20 us = 10.44 ms. */
	c = base();
	MUST(rl_step(&m, &d, &t, &c, &r2, &e));
	c.host.step = 100e-6;
	c.host.seq = 20e-6;
	MUST(rl_step(&m, &d, &t, &c, &r, &e));
	is_num(r.roll.decode - r2.roll.decode, 8192 * (100e-6 + 512 * 20e-6),
	       1e-9, "serial host work: + 8192 x (0.1 ms + 512 x 20 us)");
	is_num(r.roll.host, 8192 * (100e-6 + 512 * 20e-6), 1e-9,
	       "and it is reported as the host's share");
	is_num(r.roll.prefill - r2.roll.prefill, 2 * 100e-6 + 512 * 20e-6,
	       1e-9, "prefill: 2 steps and 512 requests");
	/* Overlapped (async scheduling): a step is the longer of the GPU's
	 * work and the host's.  At 1 us per sequence (0.512 ms a step) the
	 * GPU's step (~18 ms at 8k context) hides it whole; at 100 us per
	 * sequence (51.2 ms) the host sets every step. */
	c.host.step = 0;
	c.host.seq = 1e-6;
	c.host.overlap = 1;
	MUST(rl_step(&m, &d, &t, &c, &r, &e));
	is_num(r.roll.decode, r2.roll.decode, 1e-12,
	       "overlapped host work under the GPU's costs nothing");
	c.host.seq = 100e-6;
	MUST(rl_step(&m, &d, &t, &c, &r, &e));
	is_num(r.roll.decode, 8192 * 512 * 100e-6, 1e-9,
	       "overlapped host work longer than the GPU's sets the step");
	c.host.seq = -1e-6;
	ok(rl_step(&m, &d, &t, &c, &r, &e) == GP_EINVAL &&
	   strstr(e.msg, "per sequence") != NULL,
	   "a negative host time is refused, named");
	c.host.seq = 0;
	c.host.overlap = 2;
	ok(rl_step(&m, &d, &t, &c, &r, &e) == GP_EINVAL &&
	   strstr(e.msg, "overlap") != NULL, "overlap must be 0 or 1");
	c.host.overlap = 0;
	/* Piecewise CUDA graphs' gaps (host.gaps) are the forward's own:
	 * 0.5 ms a decode step adds 8192 x 0.5 ms to the decode and none
	 * to the host's share or the prefill; overlapped host work (1 us a
	 * sequence, hidden under the GPU's step above) hides none of it. */
	c.host.gaps = 0.5e-3;
	MUST(rl_step(&m, &d, &t, &c, &r, &e));
	is_num(r.roll.decode - r2.roll.decode, 8192 * 0.5e-3, 1e-9,
	       "graph gaps: + 8192 x 0.5 ms");
	is_num(r.roll.host + r.roll.prefill, r2.roll.host + r2.roll.prefill,
	       1e-12, "not host work, not the prefill's");
	c.host.seq = 1e-6;
	c.host.overlap = 1;
	MUST(rl_step(&m, &d, &t, &c, &r, &e));
	is_num(r.roll.decode - r2.roll.decode, 8192 * 0.5e-3, 1e-9,
	       "overlap hides none of the gaps");
	c.host.seq = 0;
	c.host.overlap = 0;
	c.host.gaps = -1e-6;
	ok(rl_step(&m, &d, &t, &c, &r, &e) == GP_EINVAL &&
	   strstr(e.msg, "graph gaps") != NULL,
	   "negative graph gaps are refused, named");
	c.host.gaps = 0;

	/* --- the framework's work between the phases ----------------------- */
	/* Colocated it adds to the step: 3 s more than r2's. */
	c.step_overhead = 3.0;
	MUST(rl_step(&m, &d, &t, &c, &r, &e));
	is_num(r.ph[RL_FRAMEWORK].time, 3.0, 0, "framework phase = 3 s");
	is_num(r.step, r2.step + 3.0, 1e-12, "colocated: step + 3 s");
	c.step_overhead = -1;
	ok(rl_step(&m, &d, &t, &c, &r, &e) == GP_EINVAL &&
	   strstr(e.msg, "step_overhead") != NULL,
	   "a negative step_overhead is refused, named");
	c.step_overhead = 0;

	/* --- DAPO's dynamic sampling --------------------------------------- */
	/* keep 0.6 of 64 prompts' groups: ceil(64 / 0.6) = 107 groups of 8 =
	 * 856 generated; the rollout is exactly that of 107 prompts without
	 * a filter, the forwards and the update those of the 512 kept
	 * samples (same engine inputs: exact). */
	{
		rl_result rk, rg;
		rl_cfg k2 = c;

		k2.prompts = 64;
		k2.keep = 0.6;
		k2.reward_model = 1;
		MUST(rl_step(&m, &d, &t, &k2, &rk, &e));
		is_num(rk.generated, 856, 0, "dynamic sampling: 856 generated");
		is_num(rk.samples, 512, 0, "512 trained on");
		k2.keep = 0;
		k2.prompts = 107;
		MUST(rl_step(&m, &d, &t, &k2, &rg, &e));
		is_num(rk.ph[RL_ROLLOUT].time, rg.ph[RL_ROLLOUT].time, 0,
		       "the rollout over-samples to 107 prompts");
		k2.prompts = 64;
		MUST(rl_step(&m, &d, &t, &k2, &rg, &e));
		is_num(rk.ph[RL_ACTOR].time, rg.ph[RL_ACTOR].time, 0,
		       "the update sees the kept samples only");
		/* The reward model scores every generated group: 856/512 of
		 * one forward over the kept samples. */
		is_num(rk.ph[RL_REWARD].time, rg.ph[RL_REWARD].time * 856 / 512,
		       1e-12, "the rewards score the generated groups");
		k2.keep = 1.5;
		ok(rl_step(&m, &d, &t, &k2, &rk, &e) == GP_EINVAL &&
		   strstr(e.msg, "filter_keep") != NULL,
		   "a kept share above 1 is refused, named");
	}

	/* --- a disaggregated step is never faster than its slower pool ---- */
	/* 64 prompts x 8 = 512 samples; 4, 6 or 7 rollout GPUs leave 4, 2
	 * or 1 data-parallel ranks, which divide them. */
	c = base();
	c.prompts = 64;
	c.response.mean = 2048;
	c.response.max = 2048;
	c.colocated = 0;
	{
		int rs[3] = { 4, 6, 7 }, good = 1, exact = 1;

		for (i = 0; i < 3; i++) {
			double tr, tt = 0;
			int j;

			k = c;
			k.rollout_gpus = rs[i];
			k.train.mem.lay.dp = 8 - rs[i];
			if (rl_step(&m, &d, &t, &k, &r, &e)) {
				good = 0;
				diag_msg(e.msg);
				continue;
			}
			tr = r.ph[RL_ROLLOUT].time;
			for (j = RL_LOGPROB; j <= RL_CRITIC; j++)
				tt += r.ph[j].time;
			good &= r.step >= tr && r.step >= tt;
			exact &= fabs(r.step - (fmax(tr, tt) +
						r.ph[RL_SYNC].time)) <=
				1e-12 * r.step;
			exact &= fabs(r.pool_idle[RL_POOL_ROLLOUT] -
				      (r.step - tr - r.ph[RL_SYNC].time)) <=
				1e-9 * r.step;
		}
		ok(good, "disaggregated: step >= each pool's work");
		ok(exact, "staleness 1: step = max(pools) + sync, idle the "
		   "difference");
	}
	/* The weight sync of separate pools: the trainer's rank 0
	 * broadcasts the whole model (NeMo RL's packed_broadcast_producer
	 * src=0, OpenRLHF's broadcast from rank 0), so all 2P bytes leave
	 * one node, at best over its 8 NICs at 25 GB/s x 0.9 -- a floor
	 * of 2P / 180 GB/s however many GPUs the engines slice it over
	 * (two engines of rollout tp 16: slices of one engine's 16 GPUs
	 * over two nodes, which broadcast from 16 senders would beat). */
	k = c;
	k.rollout_gpus = 32;
	k.roll.tp = 16;
	k.train.mem.lay.dp = 8;
	MUST(rl_step(&m, &d, &t, &k, &r, &e));
	ok(r.ph[RL_SYNC].time >= 2.0 * P / (8 * 25e9 * 0.9),
	   "separate pools: the whole model leaves the sender's node");
	k = c;
	k.rollout_gpus = 4;
	k.train.mem.lay.dp = 4;
	/* Refits that wait for the engines (refit_drain): each step's
	 * batch drains alone, as the barrier's does, the same rollout for
	 * fixed lengths; in flight the step's tail would run under the
	 * next step's groups. */
	k.refit_drain = 1;
	MUST(rl_step(&m, &d, &t, &k, &r, &e));
	k.staleness = 0;
	k.refit_drain = 0;
	MUST(rl_step(&m, &d, &t, &k, &r2, &e));
	is_num(r2.step, r.ph[RL_ROLLOUT].time + r.forward.step * 2 +
	       r.update.step + r.ph[RL_SYNC].time, 1e-12,
	       "staleness 0: the pools wait for each other");
	ok(r2.step >= r.step, "one step of staleness is never slower");
	/* Two steps ahead (staleness 2): each of the 4 engines holds two
	 * steps' samples, 2 x 512 / 4 = 256, all running (they fit its KV
	 * and max_batch); the queue never empties, so a step's share
	 * decodes at 256: its 128 samples x 2048 tokens / 256 = 1024
	 * steps, each one step of 256 sequences holding 512 + 2048 / 2 =
	 * 1536 tokens (a fixed length's held context, p + L / 2), and no
	 * drain.  1e-9: the same step priced twice. */
	k.staleness = 2;
	MUST(rl_step(&m, &d, &t, &k, &r, &e));
	is_num(r.roll.batch, 256, 0, "staleness 2: two steps' samples run");
	is_num(r.roll.decode, 1024 * step_at(&m, &d, &k, 256, 1536), 1e-9,
	       "staleness 2: n L / B steps at the held context");
	is_num(r.roll.tail, 0, 0, "staleness 2: no drain");
	/* Exponential lengths (mean 2000 below 6000): one step ahead each
	 * engine drains its 128 to their longest, the last few running
	 * alone; eight steps ahead the next steps' keep the batch full. */
	k.response.dist = RL_LEN_EXP;
	k.response.mean = 2000;
	k.response.max = 2000 * 3;
	MUST(rl_lengths_prepare(&k.response, &e));
	k.staleness = 1;
	MUST(rl_step(&m, &d, &t, &k, &r, &e));
	k.staleness = 8;
	MUST(rl_step(&m, &d, &t, &k, &r2, &e));
	ok(r.roll.tail > 0 && r2.roll.decode < r.roll.decode,
	   "staleness 8: no drain, a shorter decode than one step ahead");
	k.staleness = -1;
	ok(rl_step(&m, &d, &t, &k, &r2, &e) == GP_EINVAL &&
	   strstr(e.msg, "staleness"), "a negative staleness refused");
	k.staleness = 0;
	k.response = c.response;
	MUST(rl_step(&m, &d, &t, &k, &r2, &e));
	/* Separate pools: the framework's work runs in the training pool's
	 * loop, so with the pools waiting for each other it adds whole. */
	k.step_overhead = 5.0;
	MUST(rl_step(&m, &d, &t, &k, &r, &e));
	is_num(r.step, r2.step + 5.0, 1e-12,
	       "staleness 0: the framework's 5 s add to the step");
	ok(r.ph[RL_FRAMEWORK].pool == RL_POOL_TRAIN,
	   "and they are the training pool's");

	/* --- the split search returns the best valid split ---------------- */
	rc = rl_best_split(&m, &d, &t, &c, 8, &r, &e);
	ok(rc == GP_OK, "split search on 8 GPUs");
	for (R = 1, x = 1e300, a = -1; R < 8; R++) {
		k = c;
		k.rollout_gpus = R;
		k.train.mem.lay.dp = 8 - R;
		if (fmod(512, 8 - R) != 0)
			continue;
		if (rl_step(&m, &d, &t, &k, &r2, &e) == GP_OK && r2.fits &&
		    r2.step < x) {
			x = r2.step;
			a = R;
		}
	}
	is_num(r.step, x, 1e-12, "split search: the shortest fitting step");
	is_num(r.pool_gpus[RL_POOL_ROLLOUT], a, 0, "and its rollout pool");

	/* --- PPO adds the critic's forward and update ----------------------- */
	c = base();
	c.prompts = 64;
	c.ppo = 1;
	MUST(rl_step(&m, &d, &t, &c, &r, &e));
	ok(r.ph[RL_VALUES].time == r.forward.step &&
	   r.ph[RL_CRITIC].time == r.ph[RL_ACTOR].time,
	   "PPO: critic forward and update like the actor's");
	is_num(r.mem[RL_MEM_UPDATE].bytes[GP_MEM_CRITIC], 16.0 * P, 1e-12,
	       "PPO critic states resident: 16 B/param");

	/* --- errors --------------------------------------------------------- */
	c = base();
	c.minibatch = 1000;
	ok(rl_step(&m, &d, &t, &c, &r, &e) == GP_EINVAL &&
	   strstr(e.msg, "mini-batches"), "samples not a multiple of the "
	   "mini-batch");
	c = base();
	c.roll.tp = 3;
	ok(rl_step(&m, &d, &t, &c, &r, &e) == GP_EINVAL &&
	   strstr(e.msg, "does not divide"), "rollout tp must divide the pool");
	c = base();
	c.colocated = 0;
	ok(rl_step(&m, &d, &t, &c, &r, &e) == GP_EINVAL &&
	   strstr(e.msg, "rollout_gpus"), "separate pools need rollout_gpus");
	/* exp lengths whose scale was never solved: refused by the step. */
	c = base();
	c.response.dist = RL_LEN_EXP;
	c.response.mean = 1000;
	c.response.max = 4000;
	ok(rl_step(&m, &d, &t, &c, &r, &e) == GP_EINVAL &&
	   strstr(e.msg, "rl_lengths_prepare"),
	   "exp lengths not prepared refused");
	c = base();
	c.response.mean = NAN;
	ok(rl_step(&m, &d, &t, &c, &r, &e) == GP_EINVAL,
	   "NaN response length refused");
	c = base();
	c.offload_states = 1;
	ok(rl_step(&m, &d, &t, &c, &r, &e) == GP_EINVAL &&
	   strstr(e.msg, "host_bw"), "offload without a host link refused");
	/* Every amount NaN, infinite, negative or huge: an error, never a
	 * crash or a NaN result. */
	{
		double bad[4] = { NAN, INFINITY, -1, 1e300 };
		int j, all = 1;

		for (i = 0; i < 9; i++)
			for (j = 0; j < 4; j++) {
				c = base();
				switch (i) {
				case 0: c.prompts = bad[j]; break;
				case 1: c.group = bad[j]; break;
				case 2: c.prompt_len = bad[j]; break;
				case 3: c.response.max = bad[j];
					c.response.dist = RL_LEN_EXP; break;
				case 4: c.minibatch = bad[j]; break;
				case 5: c.epochs = bad[j]; break;
				case 6: c.host_bw = bad[j]; break;
				case 7: c.price = bad[j]; break;
				case 8: c.engine_memory = bad[j]; break;
				}
				all &= rl_step(&m, &d, &t, &c, &r, &e) ==
					GP_EINVAL;
			}
		ok(all, "NaN, inf, negative and huge amounts refused");
	}

	/* --- PPO's models on groups of their own (OpenRLHF's placement).
	 * A critic group of 8 GPUs at the actor's layout (dp 8) prices the
	 * critic's forward F and optimizer step U as the actor's.  In
	 * OpenRLHF's order the reference runs first on the actor's GPUs
	 * (R), the critic's values are waited for (--colocate_critic_
	 * reward: V), then the reward model runs beside the critic (W)
	 * while the actor computes its log-probabilities (A): the forwards
	 * take max(R + V + A, R + V + W) = 3F instead of R + V + W + A = 4F;
	 * the critic trains while the actor does: U instead of 2U.  The
	 * engine holds 20 GB either way (engine_memory), so the rollout is
	 * the same and the step is F + U shorter, to rounding. */
	{
		static rl_result col, sep;
		double F, U;

		c = base();
		c.ppo = 1;
		c.reward_model = 1;
		c.engine_memory = 20e9;
		MUST(rl_step(&m, &d, &t, &c, &col, &e));
		c.group_gpus[RL_GRP_CRITIC] = 8;
		c.critic_reward = 1;
		MUST(rl_step(&m, &d, &t, &c, &sep, &e));
		F = col.forward.step;
		U = col.ph[RL_ACTOR].time;
		ok(sep.ph[RL_ROLLOUT].time == col.ph[RL_ROLLOUT].time &&
		   sep.ph[RL_VALUES].time == F && sep.ph[RL_CRITIC].time == U,
		   "critic group of 8 at dp 8: the actor's forward and update");
		is_num(sep.step, col.step - F - U, 1e-12,
		       "critic + reward on their group: step shorter by F + U");
		is_num(sep.gpus, 16, 0, "8 actor + 8 critic GPUs");
		ok(sep.ph[RL_VALUES].pool == RL_POOL_CRITIC &&
		   sep.ph[RL_REWARD].pool == RL_POOL_CRITIC &&
		   sep.ph[RL_REWARD].gpus == 8 &&
		   sep.ph[RL_LOGPROB].gpus == 8 &&
		   strcmp(rl_pool_name(RL_POOL_CRITIC), "critic") == 0,
		   "values and reward on the critic's group");
		/* ZeRO-0: the frozen reward model's 16-bit weights whole, 2P;
		 * none of the critic's or reward's bytes on the actor's. */
		ok(sep.mem[RL_MEM_CRITIC].bytes[GP_MEM_REWARD] == 2.0 * P &&
		   sep.mem[RL_MEM_UPDATE].bytes[GP_MEM_CRITIC] == 0 &&
		   sep.mem[RL_MEM_UPDATE].bytes[GP_MEM_REWARD] == 0 &&
		   col.mem[RL_MEM_UPDATE].bytes[GP_MEM_REWARD] == 2.0 * P,
		   "memory: reward 2P on the critic's group, off the actor's");
		/* The reference alone on a group of 8: it runs beside the
		 * chain V + W + A = 3F (R = F ends first), the updates stay
		 * U + U: F shorter. */
		c = base();
		c.ppo = 1;
		c.reward_model = 1;
		c.engine_memory = 20e9;
		c.group_gpus[RL_GRP_REF] = 8;
		MUST(rl_step(&m, &d, &t, &c, &sep, &e));
		is_num(sep.step, col.step - F, 1e-12,
		       "reference on its own group: the step F shorter");
		c.group_gpus[RL_GRP_REF] = 6;
		rc = rl_step(&m, &d, &t, &c, &sep, &e);
		ok(rc == GP_EINVAL && strncmp(e.msg, "ref_gpus: ", 10) == 0,
		   "a reference group whose dp 6 does not divide the 4096 "
		   "samples: refused, naming ref_gpus");
		if (rc == GP_EINVAL)
			diag_msg(e.msg);
		c = base();
		c.group_gpus[RL_GRP_CRITIC] = 8;
		ok(rl_step(&m, &d, &t, &c, &sep, &e) == GP_EINVAL &&
		   strstr(e.msg, "needs PPO"), "critic_gpus without PPO");
	}

	/* --- static batches (DeepSpeed-Chat's hybrid engine): fixed 8192-
	 * token responses, 128 samples per engine.  One static batch of all
	 * 128 decodes as the continuous engine does when they all fit (the
	 * same step at batch 128 integrated over the same 8192 steps by
	 * midpoint sums of 8 and 32 segments, exact for a step affine in
	 * the context; the roofline's bends leave < 1e-6);
	 * static batches of 32 are 4 rounds, each the continuous engine's
	 * decode of 32 samples. */
	{
		static rl_result rv, rs;
		double d32;

		c = base();
		c.prompts = 32;          /* 256 samples: 32 per engine */
		MUST(rl_step(&m, &d, &t, &c, &rv, &e));
		d32 = rv.roll.decode;
		c.prompts = 128;         /* 1024 samples: 128 per engine */
		MUST(rl_step(&m, &d, &t, &c, &rv, &e));
		c.static_batch = 128;
		MUST(rl_step(&m, &d, &t, &c, &rs, &e));
		is_num(rs.roll.decode, rv.roll.decode, 1e-6,
		       "one static batch of 128 = the continuous decode");
		c.static_batch = 32;
		MUST(rl_step(&m, &d, &t, &c, &rs, &e));
		is_num(rs.roll.decode, 4 * d32, 1e-6,
		       "static batches of 32: 4 rounds of the decode of 32");
		ok(rs.roll.batch == 32 && rs.roll.queued &&
		   rs.roll.steps == 4 * 8192,
		   "batch 32, 4 x 8192 decode steps");
		/* 4096 sequences of 512 + 8192 tokens at 8 KiB each: 292 GB
		 * of KV, beyond any budget: the rollout cannot run. */
		c.static_batch = 4096;
		c.prompts = 4096;
		MUST(rl_step(&m, &d, &t, &c, &rs, &e));
		ok(!rs.fits && rs.roll.steps == 0 &&
		   strstr(rs.why, "a static batch of 4096 sequences"),
		   "a static batch beyond the KV budget: no rollout, why");
	}

	/* --- the memo (rl_cache): the same step as rl_step, bit for bit;
	 * a micro-batch or recomputation change leaves the rollout its
	 * memory (the trainer's resident states do not depend on them),
	 * so the memo serves it; a ZeRO stage changes what stays resident
	 * and so the rollout's budget: priced afresh. */
	{
		static rl_cache cc;   /* large: static, zeroed */
		static rl_result rc1, rc2;
		int same = 1;

		c = base();
		MUST(rl_step(&m, &d, &t, &c, &rc1, &e));
		MUST(rl_step_cached(&m, &d, &t, &c, &cc, &rc2, &e));
		same = memcmp(&rc1, &rc2, sizeof rc1) == 0 &&
			cc.roll_misses == 1 && cc.roll_hits == 0;
		c.train.mem.lay.micro_batch = 2;
		c.train.mem.recompute = GP_RECOMPUTE_SELECTIVE;
		MUST(rl_step(&m, &d, &t, &c, &rc1, &e));
		MUST(rl_step_cached(&m, &d, &t, &c, &cc, &rc2, &e));
		ok(same && cc.roll_hits == 1 && cc.roll_misses == 1 &&
		   rc1.step == rc2.step && rc1.fits == rc2.fits &&
		   memcmp(&rc1.roll, &rc2.roll, sizeof rc1.roll) == 0,
		   "memo: rl_step's results; micro-batch 2 + selective "
		   "recompute reuse the rollout (1 hit, 1 miss)");
		c.train.mem.lay.zero = c.train.mem.lay.zero == 3 ? 1 : 3;
		MUST(rl_step(&m, &d, &t, &c, &rc1, &e));
		MUST(rl_step_cached(&m, &d, &t, &c, &cc, &rc2, &e));
		ok(cc.roll_misses == 2 && rc1.step == rc2.step &&
		   rc1.roll.kv_budget == rc2.roll.kv_budget,
		   "memo: another ZeRO stage prices its own rollout");
	}

	/* --- a rollout engine with expert parallelism ---------------------- */
	/* mqa() with 16 routed experts of 1024, top-2, in every layer; the
	 * engine at tp 2 (4 engines of the 8 GPUs) with rollout_ep 2: each
	 * expert whole on one of its 2 GPUs.  512 prompts x 8 of 512 + 1024
	 * tokens (fixed): 1024 samples per engine, all at once. */
	{
		gp_model mm = m;
		rl_result re, rt;
		serve_cfg sc;
		serve_layout sl;
		serve_step st;
		infer_cfg ic;
		rl_cache *cc = calloc(1, sizeof *cc);

		mm.moe.experts = 16;
		mm.moe.top_k = 2;
		mm.moe.ffn_hidden = 1024;
		c = base();
		c.response.mean = c.response.max = 1024;
		c.roll.tp = 2;
		c.roll.topo = &t;
		MUST(rl_step(&mm, &d, &t, &c, &rt, &e));
		c.rollout_ep = 2;
		rc = rl_step(&mm, &d, &t, &c, &re, &e);
		ok(rc == GP_OK && re.roll.batch == 1024 && !re.roll.queued,
		   "rollout_ep 2: 1024 samples per engine at once");
		if (rc)
			diag_msg(e.msg);
		/* The serving model's MoE step as rollout.c sets it: the
		 * engine's infer_cfg, attention TP 2 with the experts split
		 * (ep = tp), no redundant experts and the imbalance of a
		 * router nothing balances, per step (vLLM without EPLB: the
		 * serving model's auto imbalance with eplb 0, model_ep_skew_at
		 * from TensorRT-LLM tech blog 4; at the decode's 512 tokens a
		 * GPU x top-2 = 1024 picks, El = 16 / 2 = 8 experts a GPU,
		 * 1 + 1.564 sqrt(ln 2 / ln 32) = 1.69945), NCCL collectives of
		 * bf16 (vLLM's allgather_reducescatter), no two-batch
		 * overlap. */
		serve_defaults(&sc);
		ic = c.roll;
		ic.gpus = 2;
		ic.input = 512;
		ic.output = 1024;
		ic.batch = ic.concurrency = 0;
		ic.kv_reserve_max = 0;
		ic.capacity = 40e9;  /* checked, not read by a step's time */
		sc.base = ic;
		sc.topo = t;
		sc.gpus = 2;
		sc.redundant = 0;
		sc.imbalance = SERVE_IMBALANCE_AUTO;
		sc.eplb = 0;
		sc.a2a = SERVE_A2A_NCCL;
		sc.dispatch_bytes = sc.combine_bytes = 2.0;
		sl.tp = sl.ep = 2;
		sl.dp_attention = sl.tbo = 0;
		sc.decode = sc.prefill = sl;
		/* Every response runs 1024 steps at the engine's batch 1024,
		 * 512 per GPU; the midpoint rule over a step affine in the
		 * context gives 1024 x step(512 per GPU, mean KV 512 + 512 +
		 * 0.5): serve's decode reads input + output / 2 = (ctx - 0.5)
		 * + 1 / 2.  Plus RL's sampling (samp_at). */
		sc.base.input = 512 + 512 + 0.5 - 0.5;
		sc.base.output = 1;
		if (serve_step_time(&mm, &d, &sc, &sl, SERVE_DECODE, 512, &st,
				    &e))
			diag_msg(e.msg);
		/* 1e-6 as for the 8k rollout above: the step bends slightly
		 * with the KV length. */
		is_num(re.roll.decode, 1024 * (st.time + samp_at(&mm, &c, 1024)),
		       1e-6, "rollout_ep: decode = 1024 x (serve step at 512 "
		       "per GPU + sampling)");
		/* Prefill: 128 distinct prompts per engine, 16384 / 512 = 32
		 * per chunk: 4 chunks, each serve's prefill of 32 x 512
		 * tokens over the instance. */
		sc.base.input = 512;
		sc.prefill_tokens = 32 * 512;
		MUST(serve_step_time(&mm, &d, &sc, &sl, SERVE_PREFILL, 0, &st,
				     &e));
		is_num(re.roll.prefill, 4 * st.time, 1e-12,
		       "rollout_ep: prefill = 4 chunks of serve's prefill");
		ok(re.roll.decode != rt.roll.decode &&
		   re.roll.kv_budget == rt.roll.kv_budget,
		   "rollout_ep: another decode, the same engine memory");
		/* Eager (vLLM enforce_eager): the host dispatches 200 ops a
		 * layer at GP_EAGER_OP_TIME, (16 x 200 + 10) x 24.84 us =
		 * 79.7 ms a step, above the GPU's step: every one of the 1024
		 * steps lasts that, plus the sampling (1e-9: one product). */
		c.roll.runtime = INFER_EAGER;
		c.roll.host_ops_per_layer = 200;
		MUST(rl_step(&mm, &d, &t, &c, &re, &e));
		is_num(re.roll.decode, 1024 * ((16 * 200 + 10) * 24.84e-6 +
					       samp_at(&mm, &c, 1024)), 1e-9,
		       "rollout_ep eager: each step held to the host's dispatch");
		c.roll.runtime = INFER_GRAPHS;
		c.roll.host_ops_per_layer = 0;
		/* The drain below one sequence per GPU: the last response of
		 * an exp distribution runs at batch 1 on the 2 GPUs. */
		c.response.dist = RL_LEN_EXP;
		c.response.mean = 300;
		MUST(rl_lengths_prepare(&c.response, &e));
		rc = rl_step(&mm, &d, &t, &c, &re, &e);
		ok(rc == GP_OK && re.roll.itl_last > 0 &&
		   re.roll.itl_last < re.roll.itl_first,
		   "rollout_ep: its tail drains at one sequence per engine");
		if (rc)
			diag_msg(e.msg);
		c.rollout_ep = 4;
		ok(rl_step(&mm, &d, &t, &c, &re, &e) == GP_EINVAL &&
		   strstr(e.msg, "rollout_ep 4"),
		   "rollout_ep other than 1 or the rollout tp refused");
		/* The memo keys on the EP: ep 1 and ep 2 are two rollouts. */
		c.rollout_ep = 1;
		MUST(rl_step_cached(&mm, &d, &t, &c, cc, &rt, &e));
		c.rollout_ep = 2;
		MUST(rl_step_cached(&mm, &d, &t, &c, cc, &re, &e));
		ok(cc->roll_misses == 2 && cc->roll_hits == 0 &&
		   re.roll.decode != rt.roll.decode,
		   "memo: rollout_ep 1 and 2 price their own rollouts");
		free(cc);
	}
	/* --- sequences of their own lengths attend within themselves ----- */
	/* exp responses of mean 2000 below a 8192 limit after a 512-token
	 * prompt: the update's model FLOPs carry the attention over
	 * E[L^2] / E[L] keys a token, L = p + R:
	 * (p^2 + 2 p E[R] + E[R^2]) / (p + E[R]) with E[R^2] the clipped
	 * exponential's second moment (checked above) -- per token 3 x the
	 * forward's FLOPs at that context (model_fwd_flops_per_token; the
	 * update counts full attention, causal_flops 0), where a fixed 2000
	 * counts them at p + 2000.  1e-9: the same products. */
	c = base();
	c.response.dist = RL_LEN_EXP;
	c.response.mean = 2000;
	c.response.max = 8192 - 512;
	MUST(rl_lengths_prepare(&c.response, &e));
	MUST(rl_step(&m, &d, &t, &c, &r, &e));
	a = (512.0 * 512 + 2.0 * 512 * 2000 + rl_len_moment2(&c.response)) /
		(512 + 2000);
	is_num(r.update.model_flops, r.update.tokens_per_step * 3.0 *
	       model_fwd_flops_per_token(&m, a), 1e-9,
	       "exp lengths: the update's attention over E[L^2] / E[L] keys");
	ok(a > 1.5 * 2512, "exp lengths: E[L^2] / E[L] well above the mean "
	   "2512");
	c.response.dist = RL_LEN_FIXED;
	c.response.max = 2000;
	MUST(rl_step(&m, &d, &t, &c, &r2, &e));
	is_num(r2.update.model_flops, r2.update.tokens_per_step * 3.0 *
	       model_fwd_flops_per_token(&m, 2512), 1e-9,
	       "fixed lengths: the update's attention over p + R keys");
	ok(r.update.step > r2.update.step && r.forward.step > r2.forward.step,
	   "exp lengths: the update and the forwards take longer than one "
	   "length of the same mean");
	/* --- the rollout engine's share: vLLM's gpu_memory_utilization ---- */
	/* vLLM's KV cache is its share of the card less what else it holds
	 * (gpu_worker.py determine_available_memory: requested_memory -
	 * non_kv_cache_memory), no margin on top: a GB more of share is a
	 * GB more of KV (the reserve's fixed parts do not move). */
	c = base();
	mem_reserve_default(&c.roll.reserve, 1);
	c.engine_memory = 20e9;
	MUST(rl_step(&m, &d, &t, &c, &r, &e));
	c.engine_memory = 30e9;
	MUST(rl_step(&m, &d, &t, &c, &r2, &e));
	is_num(r2.roll.kv_budget - r.roll.kv_budget, 10e9, 1e-9,
	       "engine share: 10 GB more of it is 10 GB more KV");

	/* --- sequence packing (NeMo RL's first-fit decreasing) ----------- */
	/* 512 prompts x 8 = 4096 samples, one optimizer step, exp responses
	 * of mean 2000 below 7680 after 512-token prompts, bins of 8192
	 * over dp 8: a sequence over half a bin (L > 4096, R > 3584) has
	 * its own, P = S(3584) = e^{-3584 / theta}; the volume needs
	 * 4096 x 2512 / 8192 = 1256 bins.  bins = max(4096 P, 1256)
	 * rounded up to a multiple of 8; a bin holds 4096 x 2512 / bins
	 * tokens (pp 1: no padding), so the update's tokens are the
	 * samples' own, and the forward's the same. */
	c = base();
	c.response.dist = RL_LEN_EXP;
	c.response.mean = 2000;
	c.response.max = 8192 - 512;
	MUST(rl_lengths_prepare(&c.response, &e));
	c.pack_tokens = 8192;
	MUST(rl_step(&m, &d, &t, &c, &r, &e));
	x = 4096 * rl_len_survival(&c.response, 3584);
	want = ceil(fmax(x, 4096.0 * 2512 / 8192) / 8) * 8;
	is_num(r.pack_bins, want, 0, "packing: max(long ones, volume / "
	       "bin) bins, a multiple of dp");
	is_num(r.update.tokens_per_step, 4096.0 * 2512, 1e-9,
	       "packing, pp 1: the update computes the samples' tokens");
	is_num(r.forward.tokens_per_step, 4096.0 * 2512, 1e-9,
	       "packing, pp 1: the forwards as well");
	/* Under a pipeline every bin is padded to 8192 tokens (pp 2, dp
	 * 4: the bins a multiple of 4). */
	c.train.mem.lay.pp = 2;
	c.train.mem.lay.dp = 4;
	MUST(rl_step(&m, &d, &t, &c, &r2, &e));
	want = ceil(fmax(x, 4096.0 * 2512 / 8192) / 4) * 4;
	is_num(r2.update.tokens_per_step, want * 8192, 1e-9,
	       "packing, pp 2: each bin padded to pack_tokens");
	/* The log-probability forwards in bins of their own, 4 x 8192
	 * (NeMo RL's logprob_mb_tokens, logprob_batch_size 4): half a bin
	 * is 16384 tokens, no response that long (max 7680), so the
	 * volume sets them, ceil(4096 x 2512 / 32768 / 4) x 4 = 316
	 * bins of 32768 padded tokens; the update's stay as they were. */
	{
	static rl_result r3;

	c.logprob_pack_tokens = 4.0 * 8192;
	MUST(rl_step(&m, &d, &t, &c, &r3, &e));
	is_num(r3.forward.tokens_per_step, ceil(4096.0 * 2512 / 32768 / 4) *
	       4 * 32768, 1e-9, "logprob_pack_tokens: the forwards' bins");
	is_num(r3.update.tokens_per_step, want * 8192, 1e-9,
	       "logprob_pack_tokens: the update's bins unchanged");
	ok(r3.ph[RL_LOGPROB].time < r2.ph[RL_LOGPROB].time,
	   "logprob_pack_tokens: fewer, fuller bins forward faster");
	c.logprob_pack_tokens = 4000;
	ok(rl_step(&m, &d, &t, &c, &r3, &e) == GP_EINVAL &&
	   strstr(e.msg, "logprob_pack_tokens 4000 is below the longest"),
	   "logprob_pack_tokens below the longest sequence refused");
	c.logprob_pack_tokens = 0;
	}
	/* Mean 5000 in bins of 12000: half the sequences are over half a
	 * bin (R > 5488), so their count, not the volume (4096 x 5512 /
	 * 12000 = 1881), sets the bins. */
	c.train.mem.lay.pp = 1;
	c.train.mem.lay.dp = 8;
	c.response.mean = 5000;
	MUST(rl_lengths_prepare(&c.response, &e));
	c.pack_tokens = 12000;
	MUST(rl_step(&m, &d, &t, &c, &r2, &e));
	x = 4096 * rl_len_survival(&c.response, 5488);
	ok(x > 4096.0 * 5512 / 12000, "packing, mean 5000: more long "
	   "sequences than the volume's bins");
	is_num(r2.pack_bins, ceil(x / 8) * 8, 0, "packing, mean 5000: a bin "
	       "per sequence over half a bin");
	c.pack_tokens = 8000;
	ok(rl_step(&m, &d, &t, &c, &r2, &e) == GP_EINVAL &&
	   strstr(e.msg, "pack_tokens 8000 is below the longest sequence"),
	   "packing: a bin below the longest sequence refused");
	return done();
}
