/*
 * train_phase.h - the training step's working state (train.c), which the
 * memo (train.h, train_cache) keeps between layouts: included by train.h
 * only.  The fields are train.c's; the contract is train.h.
 */
#ifndef GP_TRAIN_PHASE_H
#define GP_TRAIN_PHASE_H

/* What pricing reads besides the config: the model, its parameter
 * counts, the device and the topology (the node count raised to what the
 * layout needs), the memo, and where an error goes. */
typedef struct train_env {
	const gp_model *m;
	const roof_device *d;
	gp_topo t;
	gp_params p;
	struct train_cache *cc; /* the caller's memo, or NULL */
	gp_error *err;
	int bad;              /* a collective failed: err holds why */
	/* Without a memo, the collectives priced so far in this step: the
	 * same op, bytes and group recur across layer kinds and stages (TP
	 * gathers of the head and the layers, PP sends of every stage). */
	int ncache;
	struct { train_ckey k; double time; } cache[16];
} train_env;

typedef struct train_ctx {
	train_env e;
	train_lkey k;         /* what the layers' costs read */
	const train_cfg *c;
	gp_layout y;
	gp_group *g;
	double rb;            /* bytes per gradient element reduced */
	/* A stage's pipeline send/receive and the TP gather beside it
	 * (every stage's, priced once): pp_ok set. */
	int pp_ok;
	double pp_sr, pp_gat;
	double per_step;      /* micro-batches per step per pipeline */
	/* The device as eager PyTorch's kernels see it (e.d points here
	 * when they run at their own streaming rate: prepare). */
	roof_device dev;
} train_ctx;

/* One pipeline stage, one micro-batch. */
typedef struct train_scost {
	double part[TRAIN_NPARTS];
	double hidden[TRAIN_NPARTS];
	double t;              /* sum of part */
	double t05;            /* of it, the parts before TRAIN_DP (the
				* sum as far as stage_base knows it) */
	double step05;         /* the step's sum of those parts, each
				* per_step times, as far as they go */
	double fwd, bwd;       /* compute */
	double lfwd, lbwd;     /* of it, the layers' (not the ends') */
	double params, eparams; /* on this GPU */
	double linw;            /* of them, the layers' linears (fp8's
				 * weight casts: train.c phase_post) */
	double tail;            /* of them, the input embedding's: its
				 * gradient is the backward's last
				 * (train.c phase_post's last bucket) */
	double vision;          /* s of the encoder tower (first stage) */
	double vision_patches;  /* patches it encodes per micro-batch */
	int layers;
} train_scost;

/* The layers and dense layers of a stage, from its first layer. */
typedef struct train_stage_rec {
	int k, first, nl, nd;  /* stage, its first layer, layers, dense */
	int nx[2];             /* a hybrid stack's M and * layers (of nl;
				* nd its - layers, the rest E) */
	int repeat;            /* middle stages after it that cost the same */
} train_stage_rec;

/* The ZeRO terms of a stage (train.c zero_block). */
enum {
	TRAIN_ZB_ZERO, TRAIN_ZB_DP, TRAIN_ZB_ZERO_HID, TRAIN_ZB_DP_HID,
	TRAIN_ZB_N
};

/* The last layout's phase: what the layouts that differ from it only in
 * ZeRO stage, TP overlap and DP overlap share (train.c, "the step, in
 * phases"). */
#define TRAIN_PHASE_STAGES 16

struct train_phase {
	train_cfg key;          /* the config with zero, tp_overlap and
				 * overlap_grad_reduce cleared, and its
				 * stage list's pointer (phase_key) */
	/* The key's stage list (key.mem.lay.stages.n entries), the phase's
	 * own copy: the config's store is its caller's (a job:step's is
	 * gone when the step returns), so the key compares the entries,
	 * and the layouts the phase keeps past the call (x.y, mc, my)
	 * point here (train_prep.c phase_keep). */
	int key_list[GP_STAGE_LIST_MAX];
	int nodes;              /* t->nodes it was prepared for */
	int valid;
	train_ctx x;                  /* prepared; x.g points at groups */
	gp_state_bytes sb;
	gp_group groups[GP_GRP_COUNT];
	unsigned warn;          /* without TRAIN_WARN_ZERO_DP1 */
	double per_step;
	/* step_of's choices that read only the phase's config and layout
	 * (train_prep.c train_phase_get sets them with it), not per
	 * layout: post, it reduces and steps (not frozen, not forward
	 * only: k.frozen, forward_only); dual, DualPipe over pp > 1
	 * (y.schedule, y.pp); tied, the tied embedding's all-reduce
	 * between the pipeline's ends (y.pp, p.lm_head, post); act_off,
	 * the activation offload's copies (act_offload_layers,
	 * forward_only); ckpt_off, the checkpoint offload's
	 * (ckpt_offload, forward_only). */
	int post, dual, tied, act_off, ckpt_off;
	int tied_ok;            /* tied_t priced (step_of) */
	double tied_t;          /* that all-reduce's seconds: it reads the
				 * phase's groups, TP split and reduce
				 * dtype, not the ZeRO stage or overlaps */
	/* The optimizer step's bytes a local parameter, without [0] and
	 * with [1] Megatron-Core's DDP buffer (train_ddp_buffer). */
	double opt_bytes[2];
	/* Distinct stages in order (a run of middle stages that cost the
	 * same is its first, with the count after it), and the one with
	 * the most layers, which the bound prices. */
	int nrec, kb;
	train_stage_rec rec[TRAIN_PHASE_STAGES];
	/* The pipeline split the records were made for (pp, balanced, n0,
	 * m; pp 0: none): they read it and the memo's model alone, so a
	 * sweep's phases within one split keep them (phase_stages). */
	int rec_pp, rec_balanced, rec_n0, rec_m;
	int rec_chunks, rec_ends;  /* model chunks a stage (interleaved), the
				    * split's ends (layout_stage_moe) */
	/* The stages' layers given (balanced 2), the phase's own copy of
	 * the entries: the layout's store is its caller's, and may be
	 * another, or gone, by the next phase (layout.h gp_stage_store). */
	int rec_nlist;
	int rec_v[GP_STAGE_LIST_MAX];
	int layers_ok, flops_ok;
	/* The layer costs: the memo's entries (only a new phase's layers
	 * replace one), or without a memo the phase's own copies. */
	const train_lcost *ld, *lm;
	/* a hybrid stack's Mamba (M) and attention-only (*) layers; NULL
	 * for a plain model, whose two kinds are ld and lm */
	const train_lcost *lx[2];
	train_lcost own[4];
	double tokens_per_step, model_flops, hw_flops;
	int base_ok[2];         /* by TP overlap off/on */
	train_scost base[2][TRAIN_PHASE_STAGES];
	/* Per stage, what several ZeRO stages share: the optimizer step's
	 * time by what it reads -- unsharded or sharded (+ 1), without or
	 * with Megatron-Core's DDP buffer (+ 2) -- and the parameter
	 * all-gather. */
	int opt_ok[4], ag_ok;
	double opt[4][TRAIN_PHASE_STAGES], ag[TRAIN_PHASE_STAGES];
	int msplit_ok;          /* the memory's share no ZeRO stage changes */
	gp_mem_split msplit;
	gp_train_cfg mc;        /* and the config and layout it was made */
	gp_layout my;           /* with (the step's micro-batches set) */
	/* The ends' gradient reductions a micro-batch under ZeRO 2 and 3
	 * (train_stage.c ends_block), [0] the embedding's, [1] the output
	 * layer's: they read the split's groups, sharding, TP split and
	 * the reduce dtype, not the ZeRO stage, so both stages and the
	 * split's phases share them. */
	int ends_ok[2];
	double ends_rs[2];
	/* The ends' parameter gathers (ends_block), [0] the embedding's,
	 * [1] the output layer's: the same reads, no reduce dtype. */
	int ends_ag_ok[2];
	double ends_ag[2];
	int kc_ok;              /* kind_colls of both kinds, when sharded */
	int kc_zero;            /* the ZeRO stage they were priced at */
	double kc[2][2];
	/* The split's own (train_prep.c split_clear): what reads only the
	 * split -- GPUs, TP, PP, CP, ETP, EP, hybrid sharding -- the
	 * weights it places, its groups and the config, kept across the
	 * phases of one split (a sweep's micro-batches, recompute
	 * policies, schedules, VPPs and SPs: train.h TRAIN_NEXT_SPLIT),
	 * cleared when the split may have moved:
	 *  sp_checked  the config's own checks passed -- check_cfg, the
	 *              memory model's (mem_check_train_cfg's config half),
	 *              those of prepare that read only the split -- and
	 *              sb and opt_bytes are the config's;
	 *  sp_placed   groups, x.e.t.nodes and sp_warn (the TP and EP
	 *              groups' node warnings) are the split's placement;
	 *  sp_post[z]  1 + dual when the memo's post[z] (train.c phase_post) holds the
	 *              split's terms under ZeRO stage z;
	 *  ends_ok, ends_ag_ok, and kc_ok unless offloaded (kind_colls then
	 *              reads the micro-batches a step: ds_offload_accum):
	 *              the ends' collectives and the kinds' (above). */
	int sp_checked, sp_placed, sp_post[4];
	unsigned sp_warn;
	/* step_of's pass over the stages by TP overlap off/on: for the
	 * base and ZeRO terms it read (their arrays hold one value each
	 * for the phase), the summed and largest stage time, the slowest
	 * stage and the tower's figures.  Layouts that differ only in DP
	 * overlap (and ZeRO stages without ZeRO terms) share it. */
	int sl_ok[2];
	struct stage_loop {
		const train_scost *base;
		const double (*blk)[TRAIN_ZB_N];
		double tsum, tmax, vision_time, vision_patches;
		int jw, stage, stage_layers;
	} sl[2];
	/* By ZeRO stage: the memory; per stage the gradient reduction,
	 * the parameter gather, the share of the reduction in its last
	 * bucket and the optimizer step (none reads an overlap); and the
	 * stages' ZeRO terms by block_set. */
	struct zslot {
		int mem_ok, post_ok, blk_ok[2];
		gp_mem_result mem;
		int brief_ok;           /* total and fits alone */
		int largest_ok;         /* mem.largest set (a brief split
					 * leaves it: phase_mem sets it) */
		double total;
		int fits;
		double dp[TRAIN_PHASE_STAGES], zg[TRAIN_PHASE_STAGES];
		double bucket[TRAIN_PHASE_STAGES], opt[TRAIN_PHASE_STAGES];
		/* Their step terms: the stages' largest, DP's by DP overlap
		 * off/on (none reads TP overlap: the windows are compute). */
		int pd_ok[2], pz_ok;
		double post_dp[2], post_dp_hid[2];
		double post_zero, post_zero_hid, post_opt;
		double blk[2][TRAIN_PHASE_STAGES][TRAIN_ZB_N];
	} z[5];                 /* [4]: zero 2 under DeepSpeed with
				 * overlap_comm, whose memory holds a
				 * second gradient buffer (train_zslot) */
};

/* phase_post's terms under one ZeRO stage, kept across phases (train.h
 * train_cache.post): a sweep's phases that differ in micro-batch,
 * recompute or interleaving hold the same weights on the same groups,
 * and reduce, gather and step them alike.  The key is everything
 * phase_post reads besides the memo's model, device and topology: its
 * stages' weights, their sharding, the groups and node count its
 * collectives are priced on (train_price.c's collective key), the
 * optimizer's bytes and the flags that pick the terms.  The fields are
 * train.c's. */
struct train_post_memo {
	int ok;
	int nrec, master_shard0, fsdp, grads_whole, zero_allreduce;
	int hsdp, nodes, fp8_current, fp8_block, dual, fp8_pg;
	gp_dtype lin, half;
	double shard, eshard, opt_bytes, rb, dp_bucket;
	gp_group dpcp, edp;
	double params[TRAIN_PHASE_STAGES], eparams[TRAIN_PHASE_STAGES];
	double linw[TRAIN_PHASE_STAGES], tail[TRAIN_PHASE_STAGES];
	double dp[TRAIN_PHASE_STAGES], zg[TRAIN_PHASE_STAGES];
	double bucket[TRAIN_PHASE_STAGES], opt[TRAIN_PHASE_STAGES];
};

#endif
