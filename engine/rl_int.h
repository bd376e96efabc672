/*
 * rl_int.h - what rl.c, rl_mem.c, rl_sync.c and rl_sched.c share: the
 * RL step's memory, weight sync and timeline, called in turn by rl.c's
 * step.  Internal to
 * the engine's RL model; the contract is rl.h.
 */
#ifndef GP_RL_INT_H
#define GP_RL_INT_H

#include "rl.h"

/* The price of a model other than the actor (rl_other_price). */
typedef struct rl_other {
	double fwd;         /* s: its forward over the step's samples */
	double upd;         /* s: the critic's optimizer step */
	double params;
	double frozen;      /* bytes per GPU of its 16-bit weights */
	gp_mem_result mem;  /* the critic's optimizer step's memory */
} rl_other;

/* PPO's other models, by RL_GRP_: on groups of their own, and on the
 * actor's GPUs (a critic or reward model of its own shape; zero: the
 * actor's passes price it). */
typedef struct rl_others_t {
	rl_other grp[RL_NGRP];
	rl_other act[RL_NGRP];
} rl_others_t;

/* The update pass's memory (out->mem[RL_MEM_UPDATE], from out->update)
 * with the frozen models and the critic added (o: those of their own
 * shape, rl.c's rl_others); returns the critic's bytes. */
double rl_frozen(const rl_cfg *c, const rl_others_t *o, rl_result *out);

/* The bytes per GPU the rollout engine may use, given the update pass's
 * memory mu and the critic's bytes. */
double rl_rollout_cap(const rl_cfg *c, const gp_mem_result *mu,
		      double critic);

/* The rollout phase's memory (after out->roll is priced), and what swaps
 * between the engines when they share the GPUs. */
void rl_rollout_mem(const rl_cfg *c, rl_result *out, double critic);

/* Total the phases' memory against the budget: out->fits and, when it
 * does not fit, out->why. */
void rl_mem_fits(const rl_cfg *c, rl_result *out);
/* The trainer's offload against its hosts' memory (memory.h
 * mem_host_fit) on the gpus of its pool: its phases' host bytes (the
 * frozen models' and the critic's included: rl_frozen), each model on a
 * group of its own on that group's GPUs, and out->fits 0 with why when a
 * host is short. */
void rl_host_fits(const gp_topo *t, const rl_cfg *c, double gpus,
		  rl_result *out);

/* The weight sync's time and the bytes each rollout rank receives: u is
 * the training pass, gpus_total the step's GPUs, engines the rollout
 * engines. */
int rl_weight_sync(const gp_model *m, const roof_device *d,
		   const gp_topo *t, const rl_cfg *c, const train_result *u,
		   double gpus_total, double engines, double *time,
		   double *bytes, gp_error *err);

/* Whether any of PPO's other models has a group of its own (rl.c). */
int rl_any_group(const rl_cfg *c);

/* The busiest DP rank's packed work over what rl_pack's bins price
 * when mb sequences are packed into bins of C tokens over dp ranks
 * (rl.c: its tokens over the mean rank's, or under a pipeline, whose
 * bins are padded to C, the expected bin count over the one priced;
 * 1 for fixed lengths or one rank). */
double rl_pack_skew(const rl_cfg *c, double C, double mb, int dp);

/* rl_sched.c: the phases' times but the weight sync's into out (N
 * samples; o: PPO's other models on groups of their own or of their own
 * shapes, rl.c's rl_others). */
void rl_phase_times(const rl_cfg *c, rl_result *out, double N,
		    const rl_others_t *o);

/* The step from its phases: which pool runs each, the step time, each
 * pool's busy and idle time (tgpus, rgpus: the training and rollout
 * pools' GPUs; sync: the weight sync's seconds). */
void rl_schedule(const rl_cfg *c, rl_result *out, double tgpus,
		 double rgpus, double sync);

/* Throughputs and cost of the step of N samples. */
void rl_rates(const rl_cfg *c, rl_result *out, double N);

#endif
