/*
 * train.c - one training step on a placed layout (see train.h): the
 * step composed from its phase (memory, stages, schedule, figures)
 * and the entry points.  The pricing lives in train_price.c
 * (operators, collectives), train_layer.c (layers), train_stage.c
 * (stages, ZeRO and DP terms) and train_prep.c (checks, placement,
 * the phase opened); train_int.h holds what they share.  The model:
 *
 * Per micro-batch and pipeline stage, every operator of the stage's layers
 * (model_layer_ops) is priced on the roofline three ways:
 *   forward    the op itself;
 *   backward   a GEMM twice, once for the input gradient (dgrad: the
 *              transposed shape, same FLOP) and once for the weight
 *              gradient (wgrad: output n x k, depth the tokens) unless
 *              the weight is frozen; fused attention 2.5x its forward
 *              FLOP (5 matmuls to 2: Dao 2023, FlashAttention-2, sec.
 *              3.1.2), unfused 2x; elementwise ops read the saved input
 *              and the incoming gradient and write one gradient: 1.5x the
 *              forward traffic;
 *   recompute  the forward again: the whole layer (full) or the attention
 *              core (selective; Korthikanti et al. 2022 sec. 5).
 * The collectives of a micro-batch run on their placed groups
 * (layout_place): tensor parallelism two all-reduces per layer per pass
 * (Shoeybi et al. 2019, Megatron-LM, sec. 3), or with sequence
 * parallelism an all-gather and a reduce-scatter in their place
 * (Korthikanti et al. 2022 sec. 4.2.2); context parallelism a ring
 * exchange of K and V, cp - 1 steps each under the attention of one
 * chunk (Liu et al. 2023, Ring Attention; Megatron-Core's p2p CP);
 * expert parallelism a dispatch and a combine all-to-all per MoE layer
 * per pass (Lepikhin et al. 2020, GShard); pipeline parallelism one
 * activation send forward and one gradient send backward per chunk.
 *
 * Schedule (Narayanan et al. 2021, sec. 2.2): with m micro-batches, p
 * stages of per-micro-batch times t_k and v chunks per stage, the step
 * takes m max(t_k) + (sum t_k - max t_k) / v; for equal stages the bubble
 * is (p - 1) / (v m) of the ideal, as the paper gives for 1F1B (v = 1)
 * and the interleaved schedule.  After the last backward: the
 * data-parallel gradient reduction (all-reduce; reduce-scatter under a
 * distributed optimizer, Rajbhandari et al. 2020), overlapped with that
 * backward when asked; the parameter all-gather of ZeRO-1/2; the
 * optimizer step, memory-bound over the local states.  ZeRO-3 / FSDP
 * gather each layer's parameters per micro-batch and reduce-scatter its
 * gradients, prefetched under the layer before when overlap is on
 * (Zhao et al. 2023, PyTorch FSDP, sec. 3.3).
 */
#include "train_int.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

/* A sweep's per-layout path -- step_of and the parts of the step it
 * adds (post_of, step_sum, step_rates) -- inlined whole into step_of's
 * two callers (train_step_next, train_step_gated).  Left to itself GCC
 * called step_of, or kept it inline and called those three: ~1,434
 * instructions a layout in bench/sweep_bench's plan sweep, ~1,354 inlined
 * (no calls, and the brief and cached flags folded across the parts).
 * Inlining moves no rounding: every result is the same. */
#if defined(__GNUC__)
#define TRAIN_INLINE static inline __attribute__((always_inline))
#else
#define TRAIN_INLINE static inline
#endif

static const char *const part_names[TRAIN_NPARTS] = {
	"compute", "recompute", "tp_comm", "cp_comm", "ep_comm", "pp_comm",
	"dp_comm", "zero_gather", "bubble", "optimizer"
};

const char *train_part_name(int part)
{
	return GP_NAME_OF(part_names, TRAIN_NPARTS, part);
}

/* Megatron-Core's DDP bucket: 40M parameters (ddp_config bucket_size
 * default max(40000000, 1000000 * dp)); the last bucket's reduction is
 * what no backward is left to hide. */
#define DDP_BUCKET 4e7

void train_defaults(train_cfg *c)
{
	memset(c, 0, sizeof *c);
	c->mem.seq = 2048;
	c->mem.flash = 1;
	c->mem.lay.micro_batch = 1;
	c->compute = GP_BF16;
	c->host_op_time = GP_EAGER_OP_TIME;
	mem_reserve_default(&c->reserve, 1);
}

int train_step(const gp_model *m, const roof_device *d, const gp_topo *t,
	       const train_cfg *c, train_result *out, gp_error *err)
{
	return train_step_cached(m, d, t, c, NULL, out, err);
}


/* ---- the step, in phases ----------------------------------------------
 *
 * Layouts that differ only in their ZeRO stage, TP overlap and DP
 * overlap share everything else the step prices: the checked and
 * placed layout, the layer costs, which stages differ, the activations
 * and the FLOPs -- but for what of the ZeRO stage the phase reads
 * itself (train_int.h train_phase_zero: BF16_Optimizer's pass,
 * DeepSpeed stage 3's hooks in the layer costs), which keys it.  A
 * sweep enumerates those three innermost (sweep.c),
 * so the memo keeps what the last layout prepared -- its phase -- and a
 * layout that changes only them pays for what they change: its memory
 * (kept per ZeRO stage), the stages' base costs (kept per TP overlap),
 * and its own ZeRO and DP terms (kept per ZeRO stage and DP overlap:
 * train_int.h block_set), schedule and figures.  Without a memo
 * the phase lives on the stack for one call.  Every value is computed
 * by the same expression in the same order either way: the results are
 * train_step's bit for bit (tests/c/t_sweep.c). */


/* The host memory the layout's offload holds on its fullest host, against
 * the node's (memory.h mem_host_fit): a split cached without offload
 * holds none on the host. */
static void phase_host_fit(const phase *ph, gp_mem_result *o)
{
	const gp_topo *t = &ph->x.e.t;

	mem_host_fit(o, t->host_memory, t->gpus_per_node, t->host_gpus,
		     ph->x.y.gpus);
}

/* The micro-batches the memory model reads (mc, a copy of c->mem): the
 * step's accumulate the gradients (accum_microbatches, DeepSpeed's
 * gradient_accumulation_steps), one schedule call's are in flight
 * (lay.microbatches).  With pp_microbatches a step runs several calls,
 * each a schedule of its own whose warm-up counts its own micro-batches:
 * torch.distributed.pipelining's Schedule1F1B, which NeMo AutoModel's
 * schedule.step runs, "warmup_chunks = min(self._n_microbatches,
 * self._num_stages - self._stage.stage_index)" (torch/distributed/
 * pipelining/schedules.py, pytorch@00722e64), as Megatron-Core's
 * "num_warmup_microbatches = min(num_warmup_microbatches,
 * num_microbatches)" (megatron/core/pipeline_parallel/schedules.py
 * forward_backward_pipelining_without_interleaving, Megatron-LM@
 * d98e8a64): the first stage holds min(pp, m) of a call of m, and a call
 * drains before the next begins.  Without a pipeline the option prices
 * nothing (micro_per_step). */
static void mem_microbatches(const phase *ph, const train_cfg *c,
			     gp_train_cfg *mc)
{
	double step = mc->lay.microbatches > 0 ? mc->lay.microbatches :
		ph->per_step;

	mc->accum_microbatches = step;
	mc->lay.microbatches = ph->x.y.pp > 1 && c->pp_call_mb > 0 &&
		step > c->pp_call_mb ? c->pp_call_mb : step;
}

/* The memory of the most loaded GPU under c's ZeRO stage into its slot
 * zs (train_zslot): the split of the memory model (uniform for
 * Megatron, DeepSpeed's balanced partition when configured) with the
 * step's micro-batches. */
static int phase_mem_price(phase *ph, struct zslot *zs, const gp_model *m,
			   const train_cfg *c, train_cache *cache, int brief,
			   gp_error *err)
{
	const gp_mem_result *res;
	int ovl = train_ds_overlap_comm(c, c->mem.lay.zero);

	if (cache && ph->msplit_ok) {
		/* The ZeRO stage's share only, on the config and layout the
		 * split was made with. */
		ph->mc.lay.zero = ph->my.zero = c->mem.lay.zero;
		ph->mc.ds_overlap_comm = ovl;
		if (brief ? mem_train_zero_fit(m, &ph->x.e.p, &ph->mc,
					       &ph->my, c->capacity,
					       &c->reserve, &ph->msplit,
					       &res, err) :
		    mem_train_zero(m, &ph->x.e.p, &ph->mc, &ph->my,
				   c->capacity, &c->reserve, &ph->msplit,
				   &res, err))
			return GP_EINVAL;
		zs->total = res->total;
		zs->fits = res->fits;
		zs->brief_ok = 1;
		if (!brief) {
			zs->mem = *res;
			zs->mem_ok = zs->largest_ok = 1;
			phase_host_fit(ph, &zs->mem);
		}
	}
	if (!zs->mem_ok && !(brief && zs->brief_ok)) {
		if (cache && !c->mem.offload_optimizer &&
		    !c->mem.offload_params) {
			/* The rest once per phase, on the config made in
			 * place (one copy of it, not two). */
			gp_train_cfg *mc = &ph->mc;

			*mc = c->mem;
			/* kept past the call: the phase's copy of the
			 * list (train_prep.c phase_keep), not the
			 * caller's store */
			if (mc->lay.stages.n > 0)
				mc->lay.stages.v = ph->key_list;
			mc->ds_overlap_comm = ovl;
			mem_microbatches(ph, c, mc);
			ph->my = ph->x.y;
			ph->my.microbatches = mc->lay.microbatches;
			if (mem_train_split(m, &ph->x.e.p, &ph->mc, &ph->my,
					    c->capacity, &c->reserve,
					    &cache->mem, &ph->msplit, err) ||
			    (brief ? mem_train_zero_fit(m, &ph->x.e.p,
					&ph->mc, &ph->my, c->capacity,
					&c->reserve, &ph->msplit, &res,
					err) :
			     mem_train_zero(m, &ph->x.e.p, &ph->mc, &ph->my,
					    c->capacity, &c->reserve,
					    &ph->msplit, &res, err)))
				return GP_EINVAL;
			ph->msplit_ok = 1;
			zs->mem = *res;
			/* brief: the largest component only when a full
			 * step asks (phase_mem), from these same bytes */
			zs->largest_ok = !brief;
		} else {
			gp_train_cfg mc = c->mem;

			mc.ds_overlap_comm = ovl;
			mem_microbatches(ph, c, &mc);
			if (cache) {
				gp_layout y = ph->x.y;

				y.microbatches = mc.lay.microbatches;
				if (mem_train_prepared(m, &ph->x.e.p, &mc, &y,
						       c->capacity,
						       &c->reserve,
						       &cache->mem, &zs->mem,
						       err))
					return GP_EINVAL;
			} else if (mem_train(m, &mc, c->capacity, &c->reserve,
					     &zs->mem, err)) {
				return GP_EINVAL;
			}
			zs->largest_ok = 1;
		}
		zs->mem_ok = zs->brief_ok = 1;
		phase_host_fit(ph, &zs->mem);
		zs->total = zs->mem.total;
		zs->fits = zs->mem.fits;
	}
	return GP_OK;
}

/* phase_mem_price's result, once a slot: the total and whether it fits
 * (brief), or all of it. */
static int phase_mem(phase *ph, struct zslot *zs, const gp_model *m,
		     const train_cfg *c, train_cache *cache, int brief,
		     gp_mem_result *out, gp_error *err)
{
	if (!zs->mem_ok && !(brief && zs->brief_ok) &&
	    phase_mem_price(ph, zs, m, c, cache, brief, err))
		return GP_EINVAL;
	if (brief) {
		out->total = zs->total;
		out->fits = zs->fits;
		/* what a sweep counts a host-memory refusal by (a split
		 * kept without the full result offloads nothing) */
		out->host_need = zs->mem_ok ? zs->mem.host_need : 0.0;
		out->host_memory = zs->mem_ok ? zs->mem.host_memory : 0.0;
	} else {
		if (!zs->largest_ok) {
			mem_largest(&zs->mem);
			zs->largest_ok = 1;
		}
		*out = zs->mem;
	}
	return GP_OK;
}


/* The host's side of an offloaded step (DeepSpeed ZeRO-Offload, Ren et
 * al. 2021 sec. 4.1, Fig. 2; deepspeed/runtime/zero/stage_1_and_2.py and
 * stage3.py): n elements of this GPU's partition.  Seconds, in order:
 *  - grads down over the GPU's PCIe link: stages 1-2 upcast each
 *    gradient on the GPU and copy fp32 (async_inplace_copy_grad_to_
 *    fp32_buffer_from_gpu: src.float() then copy_), 4 B; stage 3 copies
 *    the partition in the accumulator's dtype (grad_partitions_flat_
 *    buffer: the parameter's, 2 B, and the CPU upcasts it; 4 B and no
 *    upcast under grad_accum_dtype fp32);
 *  - the CPU step: DeepSpeedCPUAdam is AVX-vectorised and memory-bound
 *    (an Adam update is ~10 flops per element, a node's cores do ~1e13
 *    fp32 flop/s: ~1 ps per element against ~50 ps of DRAM traffic), so
 *    it is priced by the host DRAM bytes every GPU of the node (their
 *    processes share the sockets) moves: the update reads the fp32
 *    master and gradient and writes the master (12 B) and reads and
 *    writes its states (fp32 exp_avg and exp_avg_sq: 2 x 8 B; an 8-bit
 *    AdamW's 2 x ~2 B); the gradient arriving (4 B at stages 1-2; stage 3: 2 B and
 *    its upcast, 2 + 4 B); the 16-bit copy of the master (read 4, write
 *    2) and its read by the DMA up (2 B);
 *  - params up: that 16-bit partition, 2 B over PCIe (stage 3 with
 *    offloaded parameters: it stays on the host; the layers fetch it in
 *    kind_colls).
 * Without the delay the three are in series after the backward (the
 * next forward needs the new parameters); the step's assembly overlaps
 * them with the next step under delayed_update.
 *
 * Megatron-Core offloads through its HybridDeviceOptimizer instead
 * (megatron/core/optimizer/cpu_offloading/hybrid_optimizer.py, with
 * optimizer_cpu_offload and optimizer_offload_fraction 1): each
 * parameter of the rank's shard gets a torch.optim.AdamW of its own
 * ("fused=True,  # this flag is used to improve the performance of the
 * cpu optimizer", megatron/core/optimizer/__init__.py), stepped by the
 * rank's process on its intra-op threads while the gradient copies down
 * and the parameter copies up on side streams
 * (overlap_cpu_optimizer_d2h_h2d).  c->cpu_adam_s prices that whole
 * path per parameter as measured; the node's DRAM still bounds the
 * ranks together, the fused step reading the fp32 parameter, gradient
 * and both states and writing three (28 B) and the copies landing and
 * leaving (4 + 4 B); the copies on PCIe overlap the step.
 *
 * A rank whose process may run only a few threads (a Ray worker gets
 * OMP_NUM_THREADS from its num_cpus, DeepSpeedCPUAdam's "#pragma omp
 * parallel for" and PyTorch's CPU ops follow it) steps at those
 * threads' rate, c->cpu_step_s a parameter, when that is slower than
 * its share of the node's DRAM. */
/* The ranks on one host share that host's DRAM bandwidth: the node's,
 * or where the node is an NVLink domain of several hosts (GB200 NVL72: 18
 * trays of 2 Grace CPUs and 4 GPUs, the catalog's host_gpus 4; its
 * host_mem_bw 18.4 TB/s is the rack's 36 Graces) the tray's share of it,
 * as mem_host_fit holds the offload's bytes against the tray's share of
 * the DRAM; each rank streams at its 1/ranks of that (memory.h
 * mem_host_bw_each, the rule infer's offload shares too).  B/s a rank
 * when all of them stream at once: the offloaded optimizer's step, ema
 * cpu's host update. */
static double host_dram_each(const ctx *x)
{
	int hr;
	double each = x->e.t.host_mem_bw > 0 ?
		mem_host_bw_each(x->e.t.host_mem_bw, x->e.t.gpus_per_node,
				 x->e.t.host_gpus, x->y.gpus, 1, 1) : 0.0;

	if (!(each > 0)) {
		mem_host_share(x->e.t.gpus_per_node, x->e.t.host_gpus,
			       x->y.gpus, &hr);
		each = HOST_BW_MIN / hr;
	}
	return each;
}

static double offload_step(const ctx *x, double n)
{
	int z3 = x->y.zero == 3, up = !x->c->mem.offload_params;
	double pcie = host_link_bw(x);
	double each = host_dram_each(x);
	/* Stage 3's boundary copy moves the accumulator as it is
	 * (grad_accum_dtype: mem.ds_accum_bytes; the parameter's 2 B
	 * unless set), and the CPU upcasts only a 16-bit one.  DeepSpeed
	 * v0.13.5 stage3.py partition_grads, at the accumulation boundary:
	 * "fp32_grad_tensor.copy_(grad_buffer)", grad_buffer the CUDA copy
	 * of grad_partitions_flat_buffer ("dtype=self.gradient_
	 * accumulation_dtype") and fp32_grad_tensor the fp32 CPU gradient;
	 * an fp32 buffer (OpenRLHF's "grad_accum_dtype": "fp32") crosses at
	 * 4 B and lands without a conversion. */
	double acc = x->c->mem.ds_accum_bytes > 0 ? x->c->mem.ds_accum_bytes :
		2.0;
	double down = z3 ? acc : 4.0;
	double hb = 12.0 + 2.0 * mem_offload_state_bytes(&x->c->mem.optim) +
		(z3 ? acc + (acc < 4.0 ? acc + 4.0 : 0.0) : 4.0) + 6.0 +
		(up ? 2.0 : 0.0);

	if (x->c->cpu_adam_s > 0)
		return fmax(fmax(n * x->c->cpu_adam_s, n * 8.0 / pcie),
			    n * 36.0 / each);
	return n * (down + (up ? 2.0 : 0.0)) / pcie +
		fmax(n * hb / each, n * x->c->cpu_step_s);
}

/* bitsandbytes' paged optimizers (PagedAdamW8bit, PagedAdamW, ...) keep
 * their states in CUDA managed memory (bitsandbytes functional.py
 * get_paged: cudaMallocManaged), outside PyTorch's allocator, and step
 * each parameter as "self.prefetch_state(p); self.update_step(group, p,
 * gindex, pindex); torch.cuda.synchronize()" (bitsandbytes/optim/
 * optimizer.py Optimizer8bit.step; prefetch_state runs F.prefetch_tensor,
 * cudaMemPrefetchAsync to the GPU, on each state).  The synchronize after
 * every parameter leaves nothing to overlap the copies with: under
 * torchtune's optimizer_in_bwd the step runs in each parameter's
 * gradient hook and the backward waits on it, without it the step
 * follows the backward.
 *
 * The states the card cannot hold beside what the rest of the step
 * keeps (mr->total: PyTorch's reserved memory, the context and
 * workspaces; the room is the card's capacity less that) stay in host
 * memory and page through the GPU every step.  Which pages stay is the
 * NVIDIA UVM driver's choice: it evicts the root chunk (2 MB) at the
 * head of its used list, and a chunk goes to that list's tail when it
 * is populated, not when it is accessed -- "TODO: Bug 1765193: Move the
 * chunks to the tail of the used list whenever they get mapped"
 * (NVIDIA/open-gpu-kernel-modules@448d5cc6 kernel-open/nvidia-uvm/
 * uvm_pmm_gpu.c pick_root_chunk_to_evict): least recently migrated
 * first.  The optimizer visits the parameters in the same order every
 * step, a cycle longer than the room, so each chunk is evicted before
 * its next visit: once the states do not fit, all of them come in and
 * go out every step (FIFO under a cyclic pattern larger than its
 * capacity misses on every access), none partly.
 *
 * The two directions run together: the VA block's migration allocates
 * its chunk with a tracker ("If a tracker is passed in, all the pending
 * operations on the allocated chunks will be added to it ... Otherwise,
 * when tracker is NULL, all the pending operations will be synchronized
 * before returning", uvm_pmm_gpu.h uvm_pmm_gpu_alloc), so the eviction's
 * copy out (a UVM_CHANNEL_TYPE_GPU_TO_CPU push) stays pending while the
 * copy in (CPU_TO_GPU) of the chunk waits on it on the GPU, and the next
 * block's eviction goes out beside this block's copy in: each direction
 * carries the states once, at the GPU's host link rate each way
 * (host_link_bw; an explicit prefetch migrates "nearly as fast as a
 * cudaMemcpyAsync", NVIDIA's "Maximizing Unified Memory Performance in
 * CUDA", 2017, as kokkos/kokkos issue #2915 reads it).  Seconds a step;
 * 0 when the states fit. */
static double paged_state_time(const ctx *x, const gp_mem_result *mr)
{
	double s = mr->bytes[GP_MEM_PAGED];

	if (!(s > 0) || s <= mr->capacity - mr->total)
		return 0.0;
	return s / host_link_bw(x);
}

/* The same double, bit for bit (== would take -0 for 0). */
static int same_bits(double a, double b)
{
	return memcmp(&a, &b, sizeof a) == 0;
}

static int same_group(const gp_group *a, const gp_group *b)
{
	return a->ranks == b->ranks && a->per_node == b->per_node &&
		a->sharing == b->sharing && a->nodes == b->nodes;
}

/* Of the steps that reduce the gradients once a step (ZeRO 0 and 1, and
 * ZeRO 3 with whole gradients: phase_post), 1 where that reduction is an
 * all-reduce, not a reduce-scatter: at ZeRO 0, under zero_allreduce, and
 * at ZeRO 1 on the deepspeed stack without FSDP, whose stage 1 has no
 * reduce-scatter in any version.  Through v0.12 the engine turns
 * contiguous gradients off at stage 1 ("# Non-MoE requires contiguous
 * grads to be disabled w. stage 1", deepspeed/runtime/engine.py
 * _configure_zero_optimizer; the same "contiguous_gradients = False"
 * since v0.5, whose comment reads
 * "Overlap and contiguous grads are meaningless in stage 1"), so
 * stage_1_and_2.py reduce_ipg_grads takes buffered_reduce_fallback(None,
 * ...) and allreduce_bucket, with rank None, runs "dist.all_reduce(
 * tensor_to_allreduce, group=self.dp_process_group)" on each flattened
 * bucket; from PR #4887 (January 2024, "Release overlap_comm &
 * contiguous_gradients restrictions for ZeRO 1") stage 1 goes through
 * average_tensor, whose use_multi_rank_bucket_allreduce (on by default
 * since v0.12.4) all-reduces each bucket too; a bf16 model with fp32
 * gradient accumulation at stage 1 runs BF16_Optimizer, whose gradients
 * the engine all-reduces (engine.py allreduce_gradients ->
 * buffered_allreduce_fallback; pipe/engine.py _bf16_reduce_grads). */
static int step_allreduce(const ctx *x)
{
	const train_cfg *c = x->c;

	return x->y.zero == 0 || c->zero_allreduce ||
		(x->y.zero == 1 && c->ds_buckets && !c->fsdp);
}

/* DeepSpeed's engine-side passes over the 16-bit gradients around the
 * once-a-step all-reduce at ZeRO 0 and 1 (the deepspeed stack): the
 * gradients are not in a contiguous buffer there (stage 1 turns
 * contiguous_gradients off, see step_allreduce; ZeRO 0 has none), so
 * each bucket is copied into a flat tensor first and back after:
 * stage_1_and_2.py allreduce_bucket "tensor = self.flatten(bucket)" and
 * "tensor_to_allreduce.div_(dist.get_world_size(...))", then
 * allreduce_and_copy "for buf, synced in zip(small_bucket,
 * self.unflatten(allreduced, small_bucket)): buf.copy_(synced)" on
 * every rank (rank None); engine.py's own allreduce_bucket /
 * allreduce_and_copy (ZeRO 0) the same flatten and copy back, and
 * between them the average's "tensor_to_allreduce.mul_(self.gradient_
 * predivide_factor() / dist.get_world_size(group=dp_group))".  Three
 * reads and writes of each of `elems` elements in the reduction's dtype
 * (v0.5 to v0.12; stage 1 through average_tensor from PR #4887 on
 * copies 2 / dp of a pass more, not priced).  Not under BF16_Optimizer
 * (train_hp_acc): the pipeline engine hands the all-reduce its flat fp32
 * buffers ("grads=self.optimizer.get_grads_for_reduction()",
 * bf16_optimizer.py "return self.fp32_groups_gradients_flat"), already
 * contiguous, and the passes of that path are not established here.
 * Not at data parallel 1, as stage 2's bucket passes (train_stage.c
 * ds_bucket_time): DeepSpeed itself has no such shortcut (engine.py
 * calls allreduce_gradients whatever the group's size), so a one-rank
 * job's copies are left out with stage 2's.  Nothing elsewhere: the
 * other stacks reduce their contiguous buffers in place. */
static double ds_flat_passes(const ctx *x, double elems)
{
	const train_cfg *c = x->c;

	if (!c->ds_buckets || c->fsdp || x->y.zero > 1 || train_hp_acc(c) ||
	    x->g[GP_GRP_DPCP].ranks <= 1 || !(elems > 0))
		return 0.0;
	return mem_time(x, 3.0 * 2.0 * elems * x->rb);
}

/* DeepSpeed's ZeRO 1/2/3 step (the deepspeed stack, 16-bit training):
 * the passes its step() runs over the rank's partition of the 16-bit
 * gradients besides the Adam kernel opt_bytes prices, in bytes a local
 * element.  Stage 1 and 2 (DeepSpeed at 9caa74e5, "Autotuning (#1554)",
 * 2021-11-13, deepspeed/runtime/zero/stage2.py; stage 1 and 2 share the
 * class, engine.py _configure_zero_optimizer):
 *  - the overflow check, "self.check_overflow()" ->
 *    has_overflow_partitioned_grads_serial -> _has_inf_or_nan, "cpu_sum
 *    = float(x.float().sum())" on each partition gradient: read 2,
 *    write 4, read 4 (10);
 *  - the norm, get_grad_norm_direct's "param_norm = g.data.double().
 *    norm(2)": read 2, write 8, read 8 (18);
 *  - the fp32 gradient, "single_grad_partition = self.flatten(self.
 *    averaged_gradients[i]).to(self.single_partition_of_fp32_groups[i].
 *    dtype)": a 16-bit flatten (read 2, write 2) and the cast (read 2,
 *    write 4) (10);
 *  - the unscale, unscale_and_clip_grads "grad.data.mul_(1. /
 *    combined_scale)" on that fp32 gradient: read 4, write 4 (8);
 *  - the weights, "bit16_partitions[partition_id].data.copy_(
 *    fp32_partition.data)" after optimizer.step(): the master's read, 4
 *    (the 16-bit write is opt_bytes' weights term).
 * 50 B in fp16.  DeepSpeed v0.14.2's stage_1_and_2.py keeps each pass
 * ("torch.norm(g.data.double().detach(), norm_type)" in
 * get_grad_norm_direct, the flatten and cast, "grad.data.mul_(1. /
 * combined_scale)" in unscale_and_clip_grads whether or not it clips,
 * the copy_) and runs the overflow check for fp16 only ("if self.dtype
 * == torch.float16: self.check_overflow()"): 40 B in bf16 (its
 * gradients are the model's dtype: engine.py get_data_types "if
 * model_dtype == torch.bfloat16 and not self.zero_optimization():
 * grad_accum_dtype = torch.float32 else: grad_accum_dtype =
 * model_dtype").  Stage 3 runs the same passes (v0.14.2 stage3.py
 * step(): _get_norm_groups -> get_grad_norm_direct's "g.to(...,
 * non_blocking=True).double().norm(2)" (18), then for each sub-group
 * _prepare_fp32_grad_for_sub_group's "self.flatten(self.
 * averaged_gradients[sub_group_id]).to(self.fp32_partitioned_groups_
 * flat[sub_group_id].dtype)" (10), unscale_and_clip_grads' "self.fp32_
 * partitioned_groups_flat[sub_group_id].grad.mul_(1. / combined_scale)"
 * (8), and _reassign_or_swap_out_partitioned_parameters' "self.fp16_
 * partitioned_groups_flat[sub_group_id].data.copy_(self.fp32_
 * partitioned_groups_flat[sub_group_id].data)" (4): 40 B, on the
 * grad_partitions_flat_buffer of "dtype=self.gradient_accumulation_
 * dtype", the model's), its fp16 overflow check reading that buffer
 * twice, "torch.isinf(self.grad_partitions_flat_buffer).any()" and
 * "torch.isnan(...).any()" (read 2, write 1, read 1 each: 8 more).  The
 * sub-group loop's host work (a few launches per sub-group of
 * sub_group_size, 1e9 elements by default) is not priced.  Not under
 * BF16_Optimizer (train_hp_acc, whose step is its own) nor offload
 * (offload_step).  The overflow check stops at an inf, so a skipped
 * step costs less; every step is priced as one that applies. */
#define DS_STEP_BYTES 40.0
#define DS_FP16_CHECK_BYTES 10.0
#define DS_Z3_FP16_CHECK_BYTES 8.0
static double ds_step_passes(const ctx *x, double elems)
{
	const train_cfg *c = x->c;
	double b = DS_STEP_BYTES;

	if (!c->ds_buckets || c->fsdp ||
	    (c->compute != GP_FP16 && c->compute != GP_BF16) ||
	    x->y.zero < 1 || x->y.zero > 3 || train_hp_acc(c) ||
	    !(elems > 0))
		return 0.0;
	if (c->compute == GP_FP16)
		b += x->y.zero == 3 ? DS_Z3_FP16_CHECK_BYTES :
			DS_FP16_CHECK_BYTES;
	return mem_time(x, b * elems);
}

/* 1 when pm holds phase_post's terms for this phase's ZeRO stage: its
 * key (train_phase.h train_post_memo) is this phase's. */
/* fp8_param_gather: the distributed optimizer's parameter all-gather
 * moves the Transformer Engine linears' weights in 1 byte.  NeMo's
 * fp8_params builds those weights as Float8Tensors, and its
 * MegatronDistributedFusedAdam (nemo/core/optim/distributed_adam.py at
 * 24.09-alpha.rc0, init_params_bucket) buckets them apart: "if
 * is_float8tensor(param): fp8_params.append(param)", then
 * "super().init_params_bucket(fp8_params, grad_sync_dtype=
 * grad_sync_dtype, param_sync_dtype=torch.uint8, ...)"; the other
 * parameters (embeddings, norms, the output layer) keep the 16-bit
 * sync.  Megatron-LM's own flag is the same for its distributed
 * optimizer: "--fp8-param-gather", "Keep the compute param in fp8 (do
 * not use any other intermediate dtype) and perform the param
 * all-gather in fp8" (megatron/training/arguments.py).  MXFP8's
 * per-32-element scales (1/32 B more) are not counted.  Only an fp8
 * run's linears are Float8Tensors (train.lua refuses
 * the flag otherwise); linw counts them (train_layer.c), experts
 * included. */
static int fp8_pg(const ctx *x)
{
	return x->c->fp8_param_gather && x->k.lin == GP_FP8;
}

/* Bytes of a stage's parameter all-gather: 16-bit parameters, 2 B an
 * element, the fp8 linears 1 B under fp8_pg.  lp: the stage's dense
 * parameters, le its experts' (all linears), linw the linears'
 * elements, experts' included. */
static double gather_bytes(const ctx *x, double lp, double le, double linw,
			   int expert)
{
	double lin = linw - le;

	if (!fp8_pg(x))
		return 2.0 * (expert ? le : lp);
	if (expert)
		return le;
	if (lin < 0)
		lin = 0;
	if (lin > lp)
		lin = lp;
	return 2.0 * lp - lin;
}

static int post_kept(const struct train_post_memo *pm, const phase *ph,
		     const scost *base)
{
	const ctx *x = &ph->x;
	const train_cfg *c = x->c;
	int j;

	if (!pm->ok || pm->nrec != ph->nrec ||
	    pm->master_shard0 != (ph->sb.master_shard0 |
				  ph->sb.dp_shard << 1) ||
	    pm->fsdp != c->fsdp || pm->grads_whole != c->mem.grads_whole ||
	    pm->zero_allreduce != step_allreduce(x) ||
	    pm->hsdp != x->y.hsdp || pm->nodes != x->e.t.nodes ||
	    pm->dual != ph->dual ||
	    pm->fp8_current != x->k.fp8_current ||
	    pm->fp8_block != x->k.fp8_block || pm->lin != x->k.lin ||
	    pm->half != x->k.half || !same_bits(pm->shard, x->y.shard) ||
	    !same_bits(pm->eshard, x->y.eshard) ||
	    !same_bits(pm->opt_bytes,
		       ph->opt_bytes[train_ddp_buffer(c, x->y.zero)]) ||
	    !same_bits(pm->rb, x->rb) ||
	    !same_bits(pm->dp_bucket, c->dp_bucket) ||
	    pm->fp8_pg != fp8_pg(x) ||
	    !same_group(&pm->dpcp, &x->g[GP_GRP_DPCP]) ||
	    !same_group(&pm->edp, &x->g[GP_GRP_EDP]))
		return 0;
	for (j = 0; j < ph->nrec; j++)
		if (!same_bits(pm->params[j], base[j].params) ||
		    !same_bits(pm->eparams[j], base[j].eparams) ||
		    !same_bits(pm->linw[j], base[j].linw) ||
		    !same_bits(pm->tail[j], base[j].tail))
			return 0;
	return 1;
}

static void post_keep(struct train_post_memo *pm, const phase *ph,
		      const scost *base, const struct zslot *zs)
{
	const ctx *x = &ph->x;
	const train_cfg *c = x->c;
	int j;

	pm->nrec = ph->nrec;
	pm->master_shard0 = ph->sb.master_shard0 | ph->sb.dp_shard << 1;
	pm->fsdp = c->fsdp;
	pm->grads_whole = c->mem.grads_whole;
	pm->zero_allreduce = step_allreduce(x);
	pm->hsdp = x->y.hsdp;
	pm->dual = ph->dual;
	pm->nodes = x->e.t.nodes;
	pm->fp8_current = x->k.fp8_current;
	pm->fp8_block = x->k.fp8_block;
	pm->lin = x->k.lin;
	pm->half = x->k.half;
	pm->shard = x->y.shard;
	pm->eshard = x->y.eshard;
	pm->opt_bytes = ph->opt_bytes[train_ddp_buffer(c, x->y.zero)];
	pm->rb = x->rb;
	pm->dp_bucket = c->dp_bucket;
	pm->fp8_pg = fp8_pg(x);
	pm->dpcp = x->g[GP_GRP_DPCP];
	pm->edp = x->g[GP_GRP_EDP];
	for (j = 0; j < ph->nrec; j++) {
		pm->params[j] = base[j].params;
		pm->eparams[j] = base[j].eparams;
		pm->linw[j] = base[j].linw;
		pm->tail[j] = base[j].tail;
		pm->dp[j] = zs->dp[j];
		pm->zg[j] = zs->zg[j];
		pm->bucket[j] = zs->bucket[j];
		pm->opt[j] = zs->opt[j];
	}
	pm->ok = 1;
}

/* The Newton-Schulz time of one rows x cols matrix at n iterations: each
 * iteration three GEMMs on the roofline (train_t_gemm), the matrix as s
 * x l with s the smaller dimension (mem_ns_flops): A = X X^T (s x s, depth
 * l), B = b A + c A A (s x s, depth s), X = a X + B X (s x l, depth s),
 * each reading its operands and writing its output in the 16-bit dtype
 * Muon's "medium" matmul precision casts X to (Emerging-Optimizers
 * newton_schulz: "X = X.to(torch.bfloat16)"). */
static double ns_matrix_time(const ctx *x, double rows, double cols, int n)
{
	double s = rows < cols ? rows : cols, l = rows < cols ? cols : rows;
	double b = gp_dtype_bytes(x->k.half), t;

	if (!(s > 0.0) || n <= 0)
		return 0.0;
	t = train_t_gemm(&x->e, 2.0 * s * s * l, b * (2.0 * s * l + s * s),
			 s, s, l, 1, x->k.half, 0) +
		train_t_gemm(&x->e, 2.0 * s * s * s, b * 3.0 * s * s, s, s, s,
			     1, x->k.half, 0) +
		train_t_gemm(&x->e, 2.0 * s * s * l,
			     b * (s * s + 2.0 * s * l), s, l, s, 1, x->k.half,
			     0);
	return n * t;
}

/* The optimizer's Newton-Schulz iterations on stage record r's hidden
 * weight matrices, per rank (0 without them: gp_optim ns_steps).  The
 * matrices as Megatron-Core holds them on one rank, each orthogonalised
 * alone: muon_tp_mode "blockwise" (Megatron-Core's default and
 * Megatron-Bridge's distributed_muon_with_cosine_annealing) runs it on
 * the rank's TP shard with "partition_dim = None" -- no collective
 * (megatron/core/optimizer/muon.py); muon_split_qkv (default True) splits
 * the fused QKV into its Q, K and V; the MLA projections, the dense MLP's
 * fused fc1 and fc2, the router, each local expert's fc1 and fc2 (the
 * rank's E / ep) and the shared experts'.  The embedding, output layer
 * and norms are AdamW's.  Under dp_shard each data-parallel rank steps
 * whole parameters of its own (LayerWiseDistributedOptimizer shard_params,
 * the experts over the expert-data-parallel group): its share of the
 * work, but at least the largest matrix.  Encoder-decoder layers, the
 * vision tower and MTP modules are not counted. */
static double ns_stage_time(const ctx *x, const gp_state_bytes *sb,
			    const train_stage_rec *r, int steps)
{
	const gp_model *m = x->e.m;
	double tp = x->y.tp, ep = x->y.ep, etp = x->y.etp > 0 ? x->y.etp : tp;
	double h = m->hidden, gate = m->ffn_gated ? 2.0 : 1.0;
	double nd = r->nd, nm = r->nl - r->nd, dense = 0, expert = 0, big = 0;
	double t;

	if (steps <= 0 || m->encoder_layers > 0)
		return 0.0;
#define NS_ADD(acc, count, rows, cols)                                   \
	do {                                                              \
		double n_ = (count);                                      \
		if (n_ > 0) {                                             \
			t = ns_matrix_time(x, rows, cols, steps);         \
			acc += n_ * t;                                    \
			big = t > big ? t : big;                          \
		}                                                         \
	} while (0)
	if (m->mla.kv_lora_rank > 0) {
		/* Megatron-Core's MLA: linear_q_down_proj (q_lora x h) and
		 * linear_kv_down_proj ((kv_lora + rope) x h) whole on
		 * every TP rank, the up-projections and linear_proj split
		 * over TP. */
		double nh = m->heads / tp, qk = (double)m->mla.qk_nope_head_dim +
			m->mla.qk_rope_head_dim;

		if (m->mla.q_lora_rank > 0) {
			NS_ADD(dense, r->nl, m->mla.q_lora_rank, h);
			NS_ADD(dense, r->nl, nh * qk, m->mla.q_lora_rank);
		} else {
			NS_ADD(dense, r->nl, nh * qk, h);
		}
		NS_ADD(dense, r->nl, (double)m->mla.kv_lora_rank +
		       m->mla.qk_rope_head_dim, h);
		NS_ADD(dense, r->nl, nh * ((double)m->mla.qk_nope_head_dim +
					   m->mla.v_head_dim),
		       m->mla.kv_lora_rank);
		NS_ADD(dense, r->nl, h, nh * m->mla.v_head_dim);
	} else {
		double hd = m->head_dim, nkv = model_kv_heads_rank(m, tp);

		NS_ADD(dense, r->nl, m->heads / tp * hd, h);
		NS_ADD(dense, 2.0 * r->nl, nkv * hd, h);
		NS_ADD(dense, r->nl, h, m->heads / tp * hd);
	}
	if (nd > 0) {
		double f = model_dense_ffn(m) / tp;

		NS_ADD(dense, nd, gate * f, h);
		NS_ADD(dense, nd, h, f);
	}
	if (nm > 0 && m->moe.experts > 0) {
		double F = m->moe.ffn_hidden / etp;
		double S = m->moe.shared_experts * model_shared_ffn(m) / tp;

		NS_ADD(dense, nm, m->moe.experts, h);
		NS_ADD(dense, nm, gate * S, h);
		NS_ADD(dense, nm, h, S);
		NS_ADD(expert, nm * m->moe.experts / ep, gate * F, h);
		NS_ADD(expert, nm * m->moe.experts / ep, h, F);
	}
#undef NS_ADD
	if (!sb->dp_shard)
		return dense + expert;
	t = dense / x->y.shard + expert / x->y.eshard;
	return t > big ? t : big;
}

/* What each stage reduces, gathers and steps once per step under c's
 * ZeRO stage, from its weights (base: either TP overlap's, the weights
 * are the same).  With a memo, the terms of the last phase whose key
 * was this one's (a sweep's next micro-batch, recompute or
 * interleaving: the same weights on the same groups) are taken as
 * they are. */
/* zs: the ZeRO stage's slot (train_zslot), whose terms are not kept
 * yet (the caller tests post_ok). */
/* A once-a-step data-parallel collective over elems elements (bytes in
 * all) under dp_bucket: one collective a bucket, each paying its own
 * latency, which at hundreds of ranks rivals the bandwidth term (a
 * ring reduce-scatter's n - 1 steps).  apex's DistributedFusedAdam
 * (3c19f106, the commit NeMo v1.11.0's Dockerfile checks out) splits
 * the parameters into buckets of "bucket_size = 1024*1024*bucket_cap_mb
 * / dtype_size" elements (bucket_cap_mb=100, the gradient-sync dtype's
 * bytes), reduce-scatters each on its own in _start_bucket_grad_sync
 * ("torch.distributed.reduce_scatter(bucket.sync_grads_shard,
 * grads_bucket_shards, op=reduce_op, group=self.distributed_process_
 * group, async_op=True, ...)") and all-gathers each bucket's updated
 * parameters on its own in step() ("torch.distributed.all_gather(
 * all_params_bucket_shards, params_bucket_shard, group=self.
 * distributed_process_group, ...)").  The full buckets, then the rest. */
static double dp_bucketed(ctx *x, gp_coll op, double bytes, double elems,
			  int expert)
{
	double b = x->c->dp_bucket, full, rest;

	if (!(elems > b))
		return train_zero_coll(x, op, bytes, expert);
	full = floor(elems / b);
	rest = elems - full * b;
	return full * train_zero_coll(x, op, bytes * b / elems, expert) +
		train_zero_coll(x, op, bytes * rest / elems, expert);
}

/* ema (gp_train_cfg): the parameters the rank's moving average covers
 * on a stage of lp dense and le expert parameters -- those the rank
 * holds (memory_train.c stage_ema): its shard where ZeRO 3 / FSDP shard
 * the parameters, else all of the stage's. */
static double ema_params(const ctx *x, double lp, double le)
{
	return layout_held_params(x->y.zero, &x->y, lp, le);
}

/* ema gpu: the moving average's update after each optimizer step, on the
 * step's critical path.  NeMo's EMAOptimizer.step runs "loss =
 * self.optimizer.step(closure)" then "self.update()", whose ema_update is
 * two foreach passes (NVIDIA/NeMo@94bd3466
 * nemo/collections/common/callbacks/ema.py): "torch._foreach_mul_(
 * ema_model_tuple, decay)" then "torch._foreach_add_(ema_model_tuple,
 * current_model_tuple, alpha=(1.0 - decay))".  The first reads and
 * writes the fp32 average (4 + 4 B); the second reads the average (4 B)
 * and the parameter (the recipe's weight bytes, 2 B in bf16) and writes
 * the average (4 B): 16 B + the parameter's, at the card's streaming
 * rate as the optimizer's own step (mem_time).  A 7B model on one rank:
 * 7e9 x (16 + 2) = 126 GB, 38 ms at an H100's 3.35 TB/s.  (A fused
 * _foreach_lerp_ would be one pass, 10 B: NeMo's is not.)  Its launches
 * are not added: each foreach op packs up to ~100 tensors a launch
 * (multi_tensor_apply's depth-2 lists), a handful of launches for a
 * model's few hundred tensors, microseconds beside the passes. */
static double ema_update(const ctx *x, const phase *ph, double lp, double le)
{
	return mem_time(x, ema_params(x, lp, le) * (ph->sb.weights + 16.0));
}

static int phase_post(phase *ph, struct zslot *zs, const scost *base)
{
	ctx *x = &ph->x;
	const train_cfg *c = x->c;
	struct train_post_memo *pm = NULL;
	double rb = x->rb;
	/* Local states: sharded over dp x cp (experts over the expert-
	 * data-parallel group) from ZeRO 1 on. */
	int sh = x->y.zero >= 1 || ph->sb.master_shard0 || ph->sb.dp_shard, j;
	int ddp = train_ddp_buffer(c, x->y.zero), slot = sh + 2 * ddp;
	/* dp_shard's parameter all-gather after the step
	 * (LayerWiseDistributedOptimizer allgather_params, over dp x cp
	 * and the expert-data-parallel group) is ZeRO 1's. */
	int gather = (x->y.zero >= 1 || ph->sb.dp_shard) &&
		!(x->y.zero == 3 || (x->y.zero == 2 && c->fsdp));

	/* Offloaded, the host's step reads more (offload_step).  Its key
	 * reads the split, its weights and groups and the config alone
	 * (train_post_memo): once kept or found in a split, its later
	 * phases of the same schedule take it without comparing (sp_post:
	 * 1 + dual, as DualPipe's last bucket differs, phase_post). */
	if (x->e.cc && !c->mem.offload_optimizer &&
	    !c->mem.offload_params) {
		pm = &x->e.cc->post[x->y.zero];
		if (ph->sp_post[x->y.zero] == 1 + ph->dual ||
		    post_kept(pm, ph, base)) {
			for (j = 0; j < ph->nrec; j++) {
				zs->dp[j] = pm->dp[j];
				zs->zg[j] = pm->zg[j];
				zs->bucket[j] = pm->bucket[j];
				zs->opt[j] = pm->opt[j];
			}
			zs->post_ok = 1;
			ph->sp_post[x->y.zero] = 1 + ph->dual;
			return GP_OK;
		}
	}
	for (j = 0; j < ph->nrec; j++) {
		double lp = base[j].params - base[j].eparams;
		double le = base[j].eparams, opt;
		double gbd = gather_bytes(x, lp, le, base[j].linw, 0);
		double gbe = gather_bytes(x, lp, le, base[j].linw, 1);

		if (!ph->opt_ok[slot]) {
			double loc = sh ? lp / x->y.shard + le / x->y.eshard :
				lp + le;

			opt = loc * ph->opt_bytes[ddp];
			/* Megatron-Core zeroes its whole gradient buffer at
			 * each step's start, not the optimizer's shard: the
			 * training loop's "model_chunk.zero_grad_buffer()"
			 * (megatron/training/training.py train_step) runs
			 * ParamAndGradBuffer.reset, "self.grad_data.zero_()"
			 * (megatron/core/distributed/param_and_grad_buffer.py),
			 * over every local parameter's main grad -- the buffer
			 * the wgrad GEMMs then accumulate into (train_prep.c
			 * train_wgrad_acc).  opt_bytes writes the zeros over
			 * the shard; the rest of the buffer is written here.
			 * (train_ddp_buffer: not Megatron-FSDP's, which is
			 * sharded). */
			if (ddp)
				opt += (lp + le - loc) * ph->sb.grads;
			if (x->k.lin == GP_FP8)
				/* The fp8 weight casts, once per step
				 * (Transformer Engine caches them over
				 * micro-batches): read 2 B, write 1 + 1;
				 * current scaling reads 2 B more for the
				 * amax (train_layer.c); a block-scaled
				 * weight is cast to both copies in one
				 * kernel (TE 2.9 grouped_linear.py sets
				 * each weight quantizer's usage "rowwise=
				 * True, columnwise=columnwise_usage", the
				 * dgrad's copy), MXFP8_BOTH_EXTRA more.
				 * Only the layers' linears have fp8
				 * copies: they are TE modules, while the
				 * embedding (Megatron-Core's
				 * VocabParallelEmbedding), the output
				 * layer (tensor_parallel.ColumnParallel-
				 * Linear, a 16-bit GEMM: train_layer.c
				 * train_ends_costs), the norms, the
				 * routers and a vision tower (16-bit:
				 * train_stage.c tower_gemm) run in 16
				 * bits and have none. */
				opt += base[j].linw * (x->k.fp8_current ?
						    6.0 : x->k.fp8_block ?
						    4.0 + MXFP8_BOTH_EXTRA :
						    4.0);
			ph->opt[slot][j] = mem_time(x, opt) +
				ns_stage_time(x, &ph->sb, &ph->rec[j],
					      c->mem.optim.ns_steps);
		}
		/* Under shard groups (layout.h hsdp at ZeRO 1) each rank
		 * gathers the updated parameters of its own group only:
		 * InternEvo's broadcast_params, "group=gpc.get_group(
		 * ParallelMode.ZERO1)" (hybrid_zero_optim.py). */
		if (gather && !ph->ag_ok)
			ph->ag[j] = c->dp_bucket > 0 ?
				dp_bucketed(x, GP_ALL_GATHER, gbd, lp, 0) +
				dp_bucketed(x, GP_ALL_GATHER, gbe, le, 1) :
				x->y.hsdp > 0 ?
				train_zero_coll(x, GP_ALL_GATHER, gbd, 0) +
				train_zero_coll(x, GP_ALL_GATHER, gbe, 1) :
				coll(x, GP_ALL_GATHER, gbd,
				     &x->g[GP_GRP_DPCP]) +
				coll(x, GP_ALL_GATHER, gbe,
				     &x->g[GP_GRP_EDP]);
		/* Gradient reduction once per step (ZeRO 0/1, and ZeRO 3
		 * with whole gradients; otherwise ZeRO 2/3 reduce per
		 * micro-batch in the stage; an all-reduce where
		 * step_allreduce says) and, with a distributed
		 * optimizer, the parameter all-gather. */
		zs->dp[j] = 0;
		if (x->y.zero <= 1 || c->mem.grads_whole) {
			gp_coll op = step_allreduce(x) ?
				GP_ALL_REDUCE : GP_REDUCE_SCATTER;

			zs->dp[j] = (c->dp_bucket > 0 ?
				     dp_bucketed(x, op, lp * rb, lp, 0) +
				     dp_bucketed(x, op, le * rb, le, 1) :
				     train_zero_coll(x, op, lp * rb, 0) +
				     train_zero_coll(x, op, le * rb, 1)) +
				ds_flat_passes(x, lp + le);
		}
		zs->zg[j] = gather ? ph->ag[j] : 0.0;
		/* All but the last bucket can hide under the backward.
		 * The last holds at least the input embedding (base[j].
		 * tail, the first stage's vocab x hidden / TP): its
		 * gradient is the backward's last, so the bucket it
		 * closes can start its reduction only once the backward
		 * is done, and its parameters are the next forward's
		 * first, so their gather cannot hide under it either;
		 * the rest hides at the overlap's slowdown (post_of).
		 * Megatron-Core fills its buckets in reverse parameter
		 * order ("Iterate through parameters in reverse order to
		 * roughly follow backprop order") and closes one when
		 * "(param_end_index - bucket_start_index) >= bucket_size",
		 * after the parameter that crosses it, so the embedding,
		 * first of the model's parameters, ends the last bucket
		 * whole (core_r0.9.0 megatron/core/distributed/
		 * param_and_grad_buffer.py ParamAndGradBuffer.__init__).
		 * NeMo 24.09's apex DistributedFusedAdam buckets (NeMo
		 * r2.0.0 megatron_gpt_model.py configure_optimizers) are
		 * one per Transformer layer or virtual stage, then
		 * "buckets.reverse()" and "buckets[-1].extend(p for p in
		 * self.parameters() if p not in used_params)": the
		 * embedding joins the first layer's bucket, the last one
		 * reduced (that layer's share is not added here).
		 * DualPipe's rank reduces its two stages' gradients
		 * together, the embedding's end and the head's
		 * (dual_pair), while these terms are each stage's own:
		 * the tail on the first stage alone would price one rank
		 * by which of its ends holds more layers, so there the
		 * last bucket stays the 40M default.  dp_bucket's buckets
		 * are apex's own (dp_bucketed): the embedding's fragments,
		 * its first parameter, fill the last ones. */
		zs->bucket[j] = dmax(c->dp_bucket > 0 ? c->dp_bucket :
				     DDP_BUCKET, ph->dual ? 0.0 :
				     base[j].tail) / dmax(lp + le, 1.0);
		if (zs->bucket[j] > 1.0)
			zs->bucket[j] = 1.0;
		opt = ph->opt[slot][j];
		if (c->mem.offload_optimizer || c->mem.offload_params)
			opt = offload_step(x, lp / x->y.shard +
					   le / x->y.eshard);
		else
			opt += ds_step_passes(x, lp / x->y.shard +
						   le / x->y.eshard);
		if (c->mem.ema == GP_EMA_GPU)
			opt += ema_update(x, ph, lp, le);
		zs->opt[j] = opt;
	}
	if (x->e.bad)
		return GP_EINVAL;
	ph->opt_ok[slot] = 1;
	ph->ag_ok |= gather;
	zs->post_ok = 1;
	if (pm) {
		post_keep(pm, ph, base, zs);
		ph->sp_post[x->y.zero] = 1 + ph->dual;
	}
	return GP_OK;
}

/* The share of the model's layers full recompute re-runs: every layer,
 * or with recompute_layers those layout_stage_recomputed counts on each
 * stage (the first recompute_layers of each model chunk). */
static double full_rec_share(const ctx *x)
{
	int L = x->e.m->layers, k, n = x->c->mem.recompute_layers;
	double r = 0;

	if (n <= 0 || L <= 0)
		return 1.0;
	for (k = 0; k < x->y.pp; k++)
		r += layout_stage_recomputed(&x->y, L, k,
			layout_stage_layers(&x->y, L, k), n);
	return fmin(1.0, r / L);
}

/* Model and hardware FLOPs per step.  Model FLOPs per token: the forward
 * (2 per active matmul weight, logits included, plus attention over ctx
 * keys) times 3 (backward twice the forward, Kaplan et al. 2020 sec.
 * 2.1); attention over the whole sequence as in Megatron's and PaLM's
 * formulas (Narayanan et al. 2021 eq. 3; Chowdhery et al. 2022 app. B),
 * or half of it when causal_flops.  With embed_flops the untied input
 * embedding's V x h weights count too, 2 FLOPs each a token forward:
 * nanoGPT's estimate_mfu takes 6N over every parameter
 * (model.py get_num_params subtracts only the position table), the
 * source of fms-fsdp's MFU.  With no_router_flops the MoE router's
 * h x E gate is left out, as Megatron-LM's num_floating_point_operations
 * leaves it.  A frozen base (LoRA) runs forward and input
 * gradients only (2x) plus the adapters' 6 FLOP per parameter. */
static int phase_flops(phase *ph, const gp_model *m, const train_cfg *c,
		       train_cache *cache, gp_error *err)
{
	const ctx *x = &ph->x;
	double fpt, ctx_len, mb = x->y.micro_batch, mtpf = 0, emb = 0;
	double rtr = 0;

	if (ph->flops_ok)
		return GP_OK;
	ph->tokens_per_step = ph->per_step * x->y.dp * mb * c->mem.seq;
	/* Packed sequences attend within themselves: attn_seq keys. */
	ctx_len = c->attn_seq > 0 ? c->attn_seq : c->mem.seq;
	if (c->causal_flops)
		ctx_len /= 2.0;
	if (cache && cache->fpt_ctx == ctx_len) {
		fpt = cache->fpt;
	} else {
		fpt = model_fwd_flops_per_token(m, ctx_len);
		if (cache) {
			cache->fpt_ctx = ctx_len;
			cache->fpt = fpt;
		}
	}
	if (fpt < 0)
		return gp_fail(err, "train: cannot count the model's FLOPs");
	/* A convention of the metric alone: the lookup is priced
	 * nowhere as a matmul, and a tied matrix is already the logits'. */
	if (c->embed_flops && !m->tied_embeddings)
		emb = 2.0 * (double)m->vocab * m->hidden;
	/* Multi-token prediction modules (train_stage.c stage_base): each
	 * one more layer of the model's last kind, eh_proj (2 FLOPs per
	 * weight of 2h x h) and the logits once more -- as Megatron-
	 * Bridge's flop_utils.py counts them ("MTH eh proj", "Logit ...
	 * (mtp_num_layers + 1)"; its norms' 3h are left out here as the
	 * model's own norms are).  The layer: the model with mtp_layers
	 * more layers, less the model (its dense layers come first). */
	if (c->mem.mtp_layers > 0) {
		gp_model mm = *m;
		double base = fpt;

		/* An interleaved model's appended layers would take the
		 * step's kinds, not the last layer's: count them on the
		 * model made all of the last layer's kind, its L layers
		 * and its L + mtp_layers. */
		if (m->moe.experts > 0 && m->moe.layer_step > 1) {
			if (model_moe_in(m, m->layers - 1, 1) > 0) {
				mm.moe.dense_layers = 0;
				mm.moe.layer_step = 1;
			} else {
				mm.ffn_hidden = (int)model_dense_ffn(m);
				memset(&mm.moe, 0, sizeof mm.moe);
			}
			base = model_fwd_flops_per_token(&mm, ctx_len);
		}
		mm.layers += c->mem.mtp_layers;
		mtpf = model_fwd_flops_per_token(&mm, ctx_len) - base;
		if (!(mtpf >= 0))
			return gp_fail(err, "train: cannot count the MTP "
				       "modules' FLOPs");
		mtpf += c->mem.mtp_layers * (2.0 * 2.0 * m->hidden * m->hidden +
					 2.0 * (double)m->vocab * m->hidden);
	}
	/* no_router_flops: the h x E gate of every MoE layer out of the
	 * count, an MoE-kind MTP module's too (the router is in
	 * matmul_active, so in fpt and mtpf). */
	if (c->no_router_flops && m->moe.experts > 0) {
		double nr = model_moe_layers(m);

		if (c->mem.mtp_layers > 0 &&
		    model_moe_in(m, m->layers - 1, 1) > 0)
			nr += c->mem.mtp_layers;
		rtr = 2.0 * nr * m->hidden * m->moe.experts;
	}
	{
		double attn = fpt - 2.0 * x->e.p.matmul_active;
		double layer_fwd = fpt - 2.0 * (double)m->vocab * m->hidden;
		double mult = c->forward_only ? 1.0 : x->k.frozen ? 2.0 : 3.0;
		double rec = 0, vis = 0;

		if (c->forward_only)
			;
		else if (c->mem.recompute == GP_RECOMPUTE_FULL)
			rec = layer_fwd * full_rec_share(x);
		else if (mem_core_attn_recomputed(c->mem.recompute,
						  c->mem.recompute_modules))
			rec = attn;
		else if (c->mem.recompute == GP_RECOMPUTE_OP) {
			/* the layers' forward but fused attention (unless
			 * the save list lacks its op: sac_attn_recompute)
			 * and the kept GEMMs, fp8 ones too, 2 FLOPs per
			 * weight per token (act.c: wq, wv, w1 or fc1, w2) */
			gp_widths w;

			model_widths(m, &w);
			rec = layer_fwd - (c->mem.flash &&
					   !c->mem.sac_attn_recompute ? attn : 0.0);
			rec -= 2.0 * m->layers * m->hidden *
				(w.q + w.v + w.dense_f *
				 (m->ffn_gated ? 2.0 : 1.0));
		}
		/* recompute_modules' mla_up_proj re-runs the MLA
		 * up-projections (their 2 FLOPs per weight per token). */
		if (!c->forward_only &&
		    c->mem.recompute != GP_RECOMPUTE_FULL &&
		    (c->mem.recompute_modules & GP_RECMOD_MLA_UP))
			rec += 2.0 * m->layers * model_mla_up_weights(m);
		/* recompute_modules' moe re-runs every MoE block's forward
		 * (memory_act.c: MoELayer's checkpoint): the router, the
		 * top_k routed and the shared experts, 2 FLOPs per weight
		 * per token. */
		if (!c->forward_only &&
		    c->mem.recompute != GP_RECOMPUTE_FULL &&
		    (c->mem.recompute_modules & GP_RECMOD_MOE))
			rec += 2.0 * model_moe_layers(m) *
				model_moe_matmul_weights(m);
		/* recompute_modules' mlpwi re-runs the dense MLPs' input
		 * projections (memory_act.c): gate and up (or fc1), 2
		 * FLOPs per weight per token, in every dense-MLP layer. */
		if (!c->forward_only &&
		    c->mem.recompute != GP_RECOMPUTE_FULL &&
		    (c->mem.recompute_modules & GP_RECMOD_MLPWI)) {
			int nd = m->pattern[0] ?
				model_pattern_in(m, '-', 0, m->layers) :
				m->layers - model_moe_layers(m);

			rec += 2.0 * nd * m->hidden * model_dense_ffn(m) *
				(m->ffn_gated ? 2.0 : 1.0);
		}
		/* The tower: 3x its forward when it trains; a frozen
		 * tower's projector 2x (forward and weight gradient), 1x
		 * under LoRA; per token of the sequence its images are
		 * part of. */
		if (c->mem.images > 0 && m->vision.layers > 0 &&
		    model_vision_flops_per_image(m) > 0) {
			double tok = model_vision_tokens(m);
			double pj = 2.0 * m->vision.projector_params * tok;
			double tw = model_vision_flops_per_image(m) - pj;
			int bt = !x->k.frozen || c->mem.llm_frozen;
			int tt = !c->mem.vision_frozen && bt;

			vis = (tw * (c->forward_only ? 1.0 : tt ? 3.0 : 1.0) +
			       pj * (c->forward_only ? 1.0 : tt ? 3.0 :
				     !bt ? 1.0 : 2.0)) *
				c->mem.images / c->mem.seq;
		}
		ph->model_flops = ph->tokens_per_step * (mult * (fpt + mtpf + emb - rtr) + vis +
			(x->k.frozen ? (c->forward_only ? 2.0 : 6.0) *
			 mem_lora_params(m, c->mem.lora_rank,
					 c->mem.lora_targets) : 0.0));
		ph->hw_flops = ph->model_flops + ph->tokens_per_step * rec;
	}
	ph->flops_ok = 1;
	return GP_OK;
}

/* train_bound's gate: keep the bound, price nothing more. */
static int record_bound(void *ud, double lb)
{
	*(double *)ud = lb;
	return 0;
}

int train_bound(const gp_model *m, const roof_device *d, const gp_topo *t,
		const train_cfg *c, train_cache *cache, double *step_lb,
		gp_error *err)
{
	if (!step_lb || !cache)
		return gp_fail(err, "train_bound: missing argument");
	return train_step_gated(m, d, t, c, cache, record_bound, step_lb,
				&cache->scratch, err);
}

int train_step_cached(const gp_model *m, const roof_device *d,
		      const gp_topo *t, const train_cfg *c, train_cache *cache,
		      train_result *out, gp_error *err)
{
	return train_step_gated(m, d, t, c, cache, NULL, NULL, out, err);
}

/* A phase's layout priced under c (the ZeRO stage and the overlaps are
 * c's own). */
/* The result's fields step_of may leave, cleared (brief: only those a
 * path below may leave; the rest are all written, and the memsets cost
 * more than the step), its placement and warnings set. */
/* The operators the result reports (train_result ops).  A plain model:
 * its MoE layer's when it has any, else its dense layer's, as they are.
 * A hybrid stack (model pattern) runs four kinds of layer, each its own
 * block of operators (model.h model_op_in): the Mamba layer's (M), the
 * attention's (*), the MLP's (-) and the MoE's (E).  Each kind's
 * operators are listed at their time in one layer of that kind times the
 * kind's count over all layers (Nemotron 3 Nano: 23 M, 6 *, 23 E of 52),
 * so that the rows add up to the stack's mean layer. */
static void result_ops(const phase *ph, train_result *out)
{
	static const char kinds[] = "M*-E";
	const gp_model *m = ph->x.e.m;
	const train_lcost *L[4];
	int i, j, n;

	out->nops = 0;
	if (!m->pattern[0]) {
		const train_lcost *l = ph->lm;

		for (j = 0; j < l->nops; j++) {
			out->ops[j] = l->ops[j];
			out->ops[j].kind = model_moe_layers(m) > 0 ? 'E' : '-';
			out->ops[j].share = 1.0;
		}
		out->nops = l->nops;
		return;
	}
	L[0] = ph->lx[0];
	L[1] = ph->lx[1];
	L[2] = ph->ld;
	L[3] = ph->lm;
	for (i = 0; i < 4; i++) {
		double w;

		n = model_pattern_in(m, kinds[i], 0, m->layers);
		if (n == 0 || !L[i])
			continue;
		w = n / (double)m->layers;
		for (j = 0; j < L[i]->nops &&
		     out->nops < TRAIN_MAX_RESULT_OPS; j++) {
			train_op *o = &out->ops[out->nops++];

			o->name = L[i]->ops[j].name;
			o->fwd = w * L[i]->ops[j].fwd;
			o->bwd = w * L[i]->ops[j].bwd;
			o->kind = kinds[i];
			o->share = w;
		}
	}
}

static void step_clear(const phase *ph, const train_cfg *c, int brief,
		       train_result *out)
{
	const ctx *x = &ph->x;

	if (brief) {
		out->step = out->bubble_frac = out->tokens_per_s_gpu = 0;
		out->hw_tflops_gpu = out->hfu = 0;
		out->stage = out->stage_layers = 0;
		out->vision_time = out->vision_patches = 0;
		out->train_time = out->cost = 0;
		out->mem.total = 0;
		out->mem.fits = out->fits = out->bounded = out->nops = 0;
	} else {
		/* Everything but the memory and the operators (copied
		 * below). */
		memset(out, 0, offsetof(train_result, mem));
		memset((char *)out + offsetof(train_result, fits), 0,
		       offsetof(train_result, ops) -
		       offsetof(train_result, fits));
	}
	if (!brief)
		memcpy(out->groups, ph->groups, sizeof out->groups);
	out->warn = ph->warn;
	/* ZeRO over one rank shards nothing -- unless it carries the
	 * offload (DeepSpeed offloads through its ZeRO optimizer). */
	if (x->y.zero > 0 && x->y.shard == 1 && !c->mem.offload_optimizer &&
	    !c->mem.offload_params)
		out->warn |= TRAIN_WARN_ZERO_DP1;
}

/* What follows the last micro-batch: the DP gradient reduction, the
 * ZeRO parameter gather and the optimizer step, each the largest
 * stage's, with what of them overlap hides. */
typedef struct step_post {
	double dp, dp_hid, zero, zero_hid, opt;
	double act_off;    /* s a micro-batch the activation offload's
			    * copies add (act_offload_time) */
} step_post;

/* What a host copy of t seconds on a side stream adds beside a forward
 * of lf and a backward of lb: only what it outlasts each (the copy runs
 * under the compute, the compute waits for it at the window's end).
 * Shared by Transformer Engine's offload windows (act_offload_time) and
 * torchtune's side-stream checkpoint copies (ckpt_offload_stream_time). */
static double copy_excess(double t, double lf, double lb)
{
	return fmax(0.0, t - lf) + fmax(0.0, t - lb);
}

/* One layer's saved bytes (act_layer) over the link the offload copies
 * take: the act_offload_bw option, else the GPU's host link. */
static double offload_layer_time(const ctx *x, const train_cfg *c,
				 double act_layer)
{
	return act_layer / (c->act_offload_bw > 0 ? c->act_offload_bw :
			    host_link_bw(x));
}

/* Transformer Engine's activation offload, as Megatron-Core's
 * cpu_offloading runs it (TransformerBlock: get_cpu_offload_context
 * (cpu_offloading, cpu_offloading_num_layers, num_layers, ...);
 * transformer_engine/pytorch/cpu_offload.py v2.9, AsyncDoubleBuffer
 * GroupOffloadHandler: "D2h and h2d copying are completely hidden
 * behind computation if computation time of a layer is longer than
 * host-device communication time").  The first n of the stage's L
 * layers are offloaded, one group a layer, their copies spread over
 * the pass by layer_window_map[i] = (L / n)(i + 1) - 1, the first
 * L % n windows a layer longer.  Forward: group 0's copy starts after
 * layer 0; at the commit of layer window_map[i] the compute stream and
 * the d2h stream wait for each other ("Stream synchronization both
 * ways"), then group i+1's copy starts.  Backward: group j's reload
 * starts at layer window_map[j] and the compute waits for it at
 * window_map[j-1] (group 0: before layer 0).  Each window of w layers
 * lasts max(w x a layer's pass, one layer's saved bytes over the host
 * link), so the copies add the excess per window, forward (lf a
 * layer) and backward (lb). */
static double act_offload_time(int L, int n, double t, double lf,
			       double lb)
{
	int i, q, r, wm, prev = 0, c = 0;
	double e = 0.0;

	if (n <= 0 || L <= 1 || !(t > 0))
		return 0.0;
	if (n >= L)
		n = L - 1;
	q = L / n;
	r = L % n;
	for (i = 0; i < n; i++) {
		double w;

		wm = q * (i + 1) - 1;
		if (i < r) {
			wm += i + 1;
			c = i + 1;
		} else {
			wm += c;
		}
		w = i == 0 ? wm : wm - prev;
		prev = wm;
		e += copy_excess(t, w * lf, w * lb);
	}
	return e;
}

/* Full recompute's checkpoints offloaded to host memory (memory_
 * train.c): PyTorch's checkpoint_wrapper(offload_to_cpu=True) under
 * torch.autograd.graph.save_on_cpu(pin_memory=True), DeepSpeed's
 * cpu_checkpointing.  Neither copy leaves the compute stream.
 * save_on_cpu's pack hook is "packed.copy_(tensor)" into a pinned CPU
 * tensor: a copy on the current stream that the host waits for (no
 * non_blocking), so the layer's forward stops for it; its unpack hook
 * is "tensor.to(device, non_blocking=pin_memory)": asynchronous to the
 * host but on the current stream, ahead of the re-run that reads it.
 * DeepSpeed's checkpointing.py copies the inputs out with copy_to_device
 * ("item.to(device)", no non_blocking) and back with move_to_device, on
 * the current stream (its "# with torch.cuda.stream(transport_stream):"
 * before the backward's gather is commented out).  So each of the stage's
 * L layers adds its checkpoint's bytes over the host link twice a
 * micro-batch, nothing hidden: 2 L t, t = bytes / host link B/s.  The
 * PyTorch FSDP 1T post's trace at 256 GPUs shows them as ops of their
 * own: "one DtoH op: 66ms; one HtoD op: 68ms". */
static double ckpt_offload_time(int L, double t)
{
	return L > 0 && t > 0 ? 2.0 * L * t : 0.0;
}

/* The same checkpoints copied on a side stream (ckpt_offload_streams):
 * torchtune's OffloadActivations (torchtune/training/
 * _activation_offloading.py, 1814feb17), "one additional CUDA stream to
 * handle the communication between CUDA and CPU, which is intended to
 * overlap with the default computation stream", "use_streams (bool):
 * ... Default: True", pinned host memory ("use_pin_memory ... Default:
 * True").  Its pack hook copies a layer's checkpoint out on that stream
 * while the next layers run (a stash of up to max_fwd_stash_size = 5
 * kept alive until the copy is done), and its unpack hook brings the
 * next checkpoint back while the current layer's backward runs.  So a
 * layer's copy is hidden under a layer's pass, forward (lf) and backward
 * (lb), and adds only what it outlasts: L (max(0, t - lf) + max(0, t -
 * lb)). */
static double ckpt_offload_stream_time(int L, double t, double lf,
				       double lb)
{
	if (L <= 0 || !(t > 0))
		return 0.0;
	return L * copy_excess(t, lf, lb);
}

/* FSDP2's whole gradients (grads_whole: full_shard under
 * set_requires_gradient_sync(False) on all but the last micro-batch)
 * on the step's path, beside the once-a-step reduce-scatter.
 *
 * The window.  The last micro-batch's backward already carries each
 * layer's parameter all-gather (the pre-backward unshard, resharded
 * after forward): under that backward FSDP2 reduce-scatters each
 * unit's gradients as they are done (FSDPParamGroup.post_backward ->
 * foreach_reduce), on the same data-parallel process group as those
 * gathers (the unit's mesh_info.shard_process_group), and
 * ProcessGroupNCCL runs a group's collectives on its one NCCL stream
 * per device, one after the other: the gathers' time and the
 * reduce-scatters' add.  So the reduction hides only under the
 * backward the gathers left free: the stage's backward less the
 * gathers' hidden seconds a micro-batch (the block's DP hidden: under
 * grads_whole the backward's gathers alone -- kind_block reduces
 * nothing per micro-batch then).  dph: those hidden seconds.
 *
 * The passes.  A unit's post_backward outside a sync upcasts its
 * gradient to the reduction's dtype and keeps it
 * (torch/distributed/fsdp/_fully_shard/_fsdp_param.py, torch 2.4-2.11:
 * to_accumulated_grad_if_needed "self.unsharded_accumulated_grad =
 * unsharded_grad.to(self.reduce_dtype)", when the dtypes differ), each
 * later micro-batch adds its gradient into it
 * (accumulate_unsharded_grad_if_needed "self.unsharded_accumulated_grad
 * += self.unsharded_param.grad"), and the sync's foreach_reduce copies
 * the accumulated gradients into the reduce-scatter input
 * (foreach_reduce_scatter_copy_in): all on the compute stream in the
 * post-backward hook, memory-bound.  With w whole weights on this GPU,
 * A the gradient's bytes (k.A) and rb the reduction's: the first
 * micro-batch's cast reads A and writes rb (nothing when the dtypes
 * agree: the gradient stays in .grad), each of the m - 1 others reads
 * both and writes rb (AccumulateGrad's own add when they agree: the
 * same 3 x 2 bytes), and the copy-in reads and writes rb. */
static double whole_grad_passes(const ctx *x, double w, double m)
{
	double A = x->k.A, rb = x->rb, first = rb != A ? A + rb : 0.0;

	if (!(w > 0) || !(m >= 1))
		return 0.0;
	return mem_time(x, w * (first + (m - 1.0) * (A + 2.0 * rb) +
				2.0 * rb));
}

/* zero_gather_copies: the host's part of nanotron's ZeRO-1 parameter
 * all-gather, which copies every parameter's shard of every DP rank back
 * one Python call at a time.  huggingface/nanotron optim/zero.py
 * (67c5ebb6, the benchmark branch, and c2528430) ZeroDistributedOptimizer
 * shards each parameter over all DP ranks ("param_name_to_dp_rank_offsets
 * [name] = {dp_rank: (start_offsets[dp_rank], end_offsets[dp_rank])"),
 * and its step ends in _all_gather_params: "dist.all_gather_coalesced(
 * output_tensor_lists=[[tensor[slice(*self.param_name_to_dp_rank_offsets
 * [name][dp_rank])] ... for dp_rank in range(self.dp_pg.size())] for
 * name, tensor in all_named_tensors_to_gather], ...)", no async_op.
 * distributed.py all_gather_coalesced flattens one output buffer per
 * rank ("output_tensor_buffer_list = [torch._utils._flatten_dense_tensors(
 * output_tensor_list) for output_tensor_list in output_tensor_lists]":
 * a cat a rank), runs "dist.all_gather(output_tensor_buffer_list,
 * input_tensor_buffer, ...)", then update_output: "for original_buffer,
 * gathered_buffer in zip(original_buffer_list, torch._utils.
 * _unflatten_dense_tensors(gathered_buffer_tensor, original_buffer_list)):
 * original_buffer.copy_(gathered_buffer)" for every rank: a copy_
 * launched from Python for each (parameter, rank) pair.  So dp x
 * (tensors + 1) bare tensor ops on the host, each at
 * GP_EAGER_NOGRAD_OP_TIME (autograd records nothing: the gather runs
 * inside "@torch.no_grad() def step(self, closure ...)", zero.py at
 * f6dd4956) scaled with the job's host as host_op_time is
 * (train_layer.c); the slices' and views' own Python (tensor[slice],
 * .contiguous().view(-1), the unflatten's narrow) launch nothing and are
 * not counted, nor torch's C++ copies of the list all_gather: a lower
 * bound.  The copies wait on the gather; the host queues them while it
 * runs, so the step's tail is the longer of the two (post_of).  The
 * stage's parameter tensors: per layer a dense layer's
 * (train_layer_tensors); the first stage's embedding (and a learned
 * position table), the last stage's final norm and output layer (the
 * embedding itself when tied on one stage).
 * Dense decoder layers only (train.lua refuses the rest). */
static double gather_copy_host(const ctx *x, const train_stage_rec *r)
{
	const gp_model *m = x->e.m;
	double nf = m->norm_params == 2 * m->hidden ? 2.0 : 1.0;
	double n = r->nl * train_layer_tensors(m, &x->k, 0), d = x->y.shard;
	int pp = x->y.pp > 1 ? x->y.pp : 1;

	if (r->k == 0)
		n += 1.0 + (m->pos_embeddings > 0 ? 1.0 : 0.0);
	if (r->k == pp - 1)
		n += nf + (!m->tied_embeddings || pp > 1 ? 1.0 : 0.0);
	if (!(d > 1))
		return 0.0;
	return d * (n + 1.0) * GP_EAGER_NOGRAD_OP_TIME *
		x->k.host_op_time / GP_EAGER_OP_TIME;
}

TRAIN_INLINE void post_of(phase *ph, const train_cfg *c,
			  const scost *base,
			  const double (*blk)[TRAIN_ZB_N], struct zslot *zs,
			  step_post *pp)
{
	int j, o = c->overlap_grad_reduce != 0;

	/* FSDP2's whole gradients: the window the backward's gathers
	 * leave and the accumulation passes (whole_grad_passes), the
	 * largest stage's; not kept (they read the micro-batch's blocks
	 * and count). */
	if (c->mem.grads_whole && c->fsdp && c->mem.fsdp_version == 2 &&
	    !c->forward_only) {
		pp->dp = pp->dp_hid = 0;
		for (j = 0; j < ph->nrec; j++) {
			double hdp = 0, win = dmax(base[j].bwd -
				blk[j][TRAIN_ZB_DP_HID], 0.0);
			double e = dmax(zs->dp[j] * zs->bucket[j],
				overlap(zs->dp[j], win, o, &hdp)) +
				whole_grad_passes(&ph->x, base[j].params,
						  ph->per_step);

			if (e > pp->dp) {
				pp->dp = e;
				pp->dp_hid = hdp;
			}
		}
	} else {
		/* below */
		pp->dp = -1;
	}
	/* Overlapped with the last micro-batch's backward, all but
	 * the last bucket (nothing is left to hide it: its share
	 * adds whole, the rest at the overlap's price); unoverlapped,
	 * all of it.  The parameter all-gather likewise under the
	 * next step's first forward.  Of each the largest stage's.
	 * The backward's window holds its recompute: a checkpointed
	 * layer's forward re-runs inside the backward, from the
	 * checkpoint's own autograd node (torch.utils.checkpoint's
	 * CheckpointFunction.backward: "outputs = ctx.run_function(
	 * *detached_inputs)" then "torch.autograd.backward(outputs,
	 * args)"; InternLM's internlm/utils/checkpoint.py and
	 * Megatron's tensor_parallel CheckpointFunction the same),
	 * just before that layer's gradients, while the buckets of
	 * the layers after it reduce on the side stream.  InternLM-7B
	 * on 1024 A100s, one micro-batch of 2 x 2048 tokens: 1.750 s
	 * a step checkpointed, 1.746 s not (its FLOPS-testing table):
	 * the re-run forwards hide under the reduction. */
	if (pp->dp < 0 && !zs->pd_ok[o]) {
		zs->post_dp[o] = zs->post_dp_hid[o] = 0;
		for (j = 0; j < ph->nrec; j++) {
			double tl = zs->dp[j] * zs->bucket[j];
			double win = base[j].bwd + base[j].part[TRAIN_RECOMPUTE];
			double hdp = 0, e = o ? tl + overlap(zs->dp[j] -
				tl, win, o, &hdp) :
				overlap(zs->dp[j], win, o, &hdp);

			if (e > zs->post_dp[o]) {
				zs->post_dp[o] = e;
				zs->post_dp_hid[o] = hdp;
			}
		}
		zs->pd_ok[o] = 1;
	}
	if (!zs->pz_ok) {
		/* Megatron's 1F1B schedule gathers stage by stage.  Without
		 * interleaving, arguments.py sets "args.align_param_gather =
		 * False" ("--no-align-param-gather ... If not set, all PP
		 * stages will launch param all-gathers simultaneously.
		 * Otherwise, each PP stage will independently launch as
		 * needed"), and a stage past the first keeps one bucket
		 * ("Turn off bucketing if we are on a pipeline stage that is
		 * not the first ... if pp_rank > 0: self.bucket_size =
		 * None"), distributed_data_parallel.py at core_v0.13.0 (the
		 * Megatron-LM-250624 that Pai-Megatron-Patch 2b201af runs).
		 * The forward pre-hook's finish_param_sync dispatches that
		 * bucket when the stage's first forward reaches its first
		 * module ("if not self.param_gather_dispatched:
		 * self.start_param_sync()") and waits on it at once
		 * ("self.param_gather_handle.wait()"): after the stage has
		 * received its input, so stage k's gather delays the first
		 * micro-batch's way to stage k + 1 and the gathers of stages
		 * 1 .. pp - 1 add up along the warm-up, where without the
		 * overlap the optimizer step gathers every stage at once. */
		int chain = c->overlap_param_gather && !c->fsdp &&
			ph->x.y.pp > 1 &&
			ph->x.y.schedule == GP_SCHED_1F1B && !ph->dual;
		double seq = 0;

		zs->post_zero = zs->post_zero_hid = zs->post_opt = 0;
		for (j = 0; j < ph->nrec; j++) {
			double tl = zs->zg[j] * zs->bucket[j];
			double hzg = 0, e = c->overlap_param_gather ?
				tl + overlap(zs->zg[j] - tl, base[j].fwd,
					     1, &hzg) :
				overlap(zs->zg[j], base[j].fwd, 0, &hzg);

			/* nanotron's copies, launched while the gather
			 * runs (gather_copy_host): the longer of the two;
			 * its optimizer is ZeRO-1's alone, so a sweep's
			 * ZeRO-2/3 layout (train.lua refuses a job's)
			 * gathers without them */
			if (c->zero_gather_copies && ph->x.y.zero == 1 &&
			    zs->zg[j] > 0)
				e = dmax(e, gather_copy_host(&ph->x,
							     &ph->rec[j]));

			if (chain && ph->rec[j].k > 0) {
				seq += zs->zg[j] * (1.0 + ph->rec[j].repeat);
				e = zs->zg[j];
				hzg = 0;
			}
			if (e > zs->post_zero) {
				zs->post_zero = e;
				zs->post_zero_hid = hzg;
			}
			if (zs->opt[j] > zs->post_opt)
				zs->post_opt = zs->opt[j];
		}
		if (chain && seq > 0) {
			/* the first stage's exposed share, then the rest's
			 * whole gathers one after another */
			for (j = 0; j < ph->nrec && ph->rec[j].k > 0; j++)
				;
			zs->post_zero = seq;
			zs->post_zero_hid = 0;
			if (j < ph->nrec) {
				double tl = zs->zg[j] * zs->bucket[j];
				double h0 = 0;

				zs->post_zero += tl + overlap(zs->zg[j] - tl,
					base[j].fwd, 1, &h0);
				zs->post_zero_hid = h0;
			}
		}
		zs->pz_ok = 1;
	}
	if (pp->dp < 0) {
		pp->dp = zs->post_dp[o];
		pp->dp_hid = zs->post_dp_hid[o];
	}
	pp->zero = zs->post_zero;
	pp->zero_hid = zs->post_zero_hid;
	pp->opt = zs->post_opt;
}

/* The record of pipeline stage k (phase_stages: a record stands for its
 * stage and the `repeat` middle stages after it). */
static int stage_rec_of(const phase *ph, int k)
{
	int j;

	for (j = ph->nrec - 1; j > 0; j--)
		if (ph->rec[j].k <= k)
			break;
	return j;
}

/* DualPipe's ranks (DeepSeek-V3 report arXiv:2412.19437 sec. 3.2.1;
 * deepseek-ai/DualPipe): micro-batches enter from both ends of the
 * pipeline, rank r holding stage r of one model copy and stage
 * pp - 1 - r of the other ("the shallowest layers (including the
 * embedding layer) and deepest layers (including the output head) on the
 * same PP rank"), and each rank runs half the step's micro-batches
 * through each.  A rank's micro-batch time is its two stages' mean; the
 * slowest rank sets the step.  *pair and pblk get that rank's mean
 * stage and ZeRO terms, *tmax its time; out->stage and stage_layers name
 * its heavier stage.  Returns 0 when every rank is free (no stage
 * costs anything). */
static int dual_pair(const phase *ph, const scost *base,
		     const double (*blk)[TRAIN_ZB_N], scost *pair,
		     double pblk[TRAIN_ZB_N], double *tmax,
		     train_result *out)
{
	int pp = ph->x.y.pp, r, i, best = -1, ba = 0, bb = 0;
	double worst = 0.0;

	for (r = 0; r < pp / 2; r++) {
		int a = stage_rec_of(ph, r), b = stage_rec_of(ph, pp - 1 - r);
		double t = 0.5 * (stage_total(&base[a], blk[a]) +
				  stage_total(&base[b], blk[b]));

		if (t > worst) {
			worst = t;
			best = r;
			ba = a;
			bb = b;
		}
	}
	if (best < 0)
		return 0;
	*pair = base[ba];
	for (i = 0; i < TRAIN_NPARTS; i++) {
		pair->part[i] = 0.5 * (base[ba].part[i] + base[bb].part[i]);
		pair->hidden[i] = 0.5 * (base[ba].hidden[i] +
					 base[bb].hidden[i]);
	}
	pair->t = 0.5 * (base[ba].t + base[bb].t);
	pair->t05 = 0.5 * (base[ba].t05 + base[bb].t05);
	pair->step05 = 0.5 * (base[ba].step05 + base[bb].step05);
	pair->fwd = 0.5 * (base[ba].fwd + base[bb].fwd);
	pair->bwd = 0.5 * (base[ba].bwd + base[bb].bwd);
	pair->lfwd = 0.5 * (base[ba].lfwd + base[bb].lfwd);
	pair->lbwd = 0.5 * (base[ba].lbwd + base[bb].lbwd);
	pair->layers = (base[ba].layers + base[bb].layers + 1) / 2;
	for (i = 0; i < TRAIN_ZB_N; i++)
		pblk[i] = 0.5 * (blk[ba][i] + blk[bb][i]);
	*tmax = worst;
	{
		int heavy = stage_total(&base[bb], blk[bb]) >
			stage_total(&base[ba], blk[ba]) ? bb : ba;

		out->stage = heavy == ba ? best : pp - 1 - best;
		out->stage_layers = ph->rec[heavy].nl;
	}
	return 1;
}

/* The step from its parts: the slowest stage jw's parts per_step times
 * (none when every stage is free, jw < 0) -- its base's, its ZeRO terms
 * -- plus the bubble (tsum, tmax: the stages' summed and largest
 * micro-batch times), the reductions and the optimizer, summed in the
 * parts' order (its first six terms as the slowest stage's base added
 * them).  A brief step writes no breakdown. */
TRAIN_INLINE void step_sum(const phase *ph, const train_cfg *c,
			   const scost *base,
			   const double (*blk)[TRAIN_ZB_N], int jw,
			   double tsum, double tmax, const step_post *pp,
			   int brief, train_result *out)
{
	const ctx *x = &ph->x;
	double per_step = ph->per_step, v;
	double pz = 0, pd = 0, hz = 0, hd = 0, bubble;
	int k;

	/* The schedule. */
	v = x->y.schedule == GP_SCHED_INTERLEAVED ? x->y.vpp : 1.0;
	out->microbatches = per_step;
	out->stage_time = tmax;
	if (jw >= 0) {
		pz = per_step * blk[jw][TRAIN_ZB_ZERO];
		pd = per_step * blk[jw][TRAIN_ZB_DP];
		hz = per_step * blk[jw][TRAIN_ZB_ZERO_HID];
		hd = per_step * blk[jw][TRAIN_ZB_DP_HID];
	}
	bubble = x->y.pp == 1 ? 0.0 : v == 1.0 ? tsum - tmax :
		(tsum - tmax) / v;
	/* The fill and drain wait on the pipeline's transfers even where
	 * the steady state hides them (overlap_p2p): Megatron-Core's
	 * interleaved warm-up runs "(pipeline_parallel_size -
	 * pipeline_parallel_rank - 1) * 2" + "(num_model_chunks - 1) *
	 * pipeline_parallel_size" forwards, chunk (k / pp) % v
	 * (pipeline_parallel/schedules.py
	 * forward_backward_pipelining_with_interleaving), and each waits
	 * on its input (the fwd_wait_handles before the next forward).  A
	 * micro-batch's next chunk on a stage needs it back from around
	 * the ring -- pp hops, the last stage's wrap to the first included
	 * -- while the stage runs the pp micro-batches of the round:
	 * forward-only, no backward to hide a hop under, so each round
	 * waits pp transfers, and the last stage starts its first backward
	 * (v pp - 1) transfers late (pp - 1 of the first round's fill,
	 * pp for each of the v - 1 chunk rounds).  The cool-down's
	 * backwards mirror it.  In the 1F1B steady state a hop has the
	 * other pass of the slot to hide under (the stage pair's forward
	 * and backward), the exposed share priced per pass (train_stage.c
	 * overlap).  Where the sends do not hide, each pass's transfer is
	 * already in the stages' times and so in the bubble above. */
	if (x->y.pp > 1 && !ph->dual && p2p_hides(c, x))
		bubble += (c->forward_only ? 1.0 : 2.0) *
			(v * x->y.pp - 1.0) * (x->pp_sr + x->pp_gat);
	if (ph->dual && jw >= 0) {
		/* DualPipe (DeepSeek-V3 report sec. 3.2.1, Table 2): a
		 * bubble of (PP/2 - 1)(F&B + B - 3W), F&B two overlapped
		 * chunks' forward and backward (their compute; the
		 * all-to-all runs under it), W the weight-gradient half of
		 * B (ZeroBubble, Qi et al. 2023: W and the input gradient
		 * are the same GEMM FLOPs): (PP/2 - 1)(F + B/2), the
		 * recompute counted in B. */
		double F = base[jw].fwd;
		double B = base[jw].bwd + base[jw].part[TRAIN_RECOMPUTE];

		bubble = (x->y.pp / 2.0 - 1.0) * (F + 0.5 * B);
	}
	/* A step of several schedule calls: each call fills and drains the
	 * pipeline on its own micro-batches.  NeMo AutoModel's benchmark
	 * loop (nemo_automodel/recipes/llm/benchmark.py run_benchmark at
	 * v0.5.0, d02f49cb3) runs "ga_steps = global_batch_size //
	 * (local_batch_size * dp_size)" passes of "for ga_step_idx in
	 * range(ga_steps):" ... "self._forward_backward_step(", each a
	 * "self.pp.info.schedule.step(" over local_batch_size /
	 * pp_microbatch_size micro-batches (train_ft.py), so the bubble
	 * (p - 1) t / v and the fill's transfers come once a call, where
	 * Megatron-Core's forward_backward_func runs the step's micro-
	 * batches in one schedule.  micro_per_step has checked that the
	 * calls divide the step. */
	if (x->y.pp > 1 && c->pp_call_mb > 0 && per_step > c->pp_call_mb)
		bubble *= per_step / c->pp_call_mb;
	pd += pp->dp;
	pz += pp->zero;
	if (!brief) {
		if (jw >= 0) {
			const scost *w = &base[jw];

			for (k = 0; k < TRAIN_NPARTS; k++) {
				out->part[k] = per_step * w->part[k];
				out->hidden[k] = per_step *
					w->hidden[k];
			}
		}
		out->part[TRAIN_ZERO] = pz;
		out->part[TRAIN_DP] = pd;
		out->hidden[TRAIN_ZERO] = hz + pp->zero_hid;
		out->hidden[TRAIN_DP] = hd + pp->dp_hid;
		out->part[TRAIN_BUBBLE] = bubble;
		out->part[TRAIN_OPTIMIZER] = pp->opt;
		/* The offload's copies stall the passes: compute time. */
		out->part[TRAIN_COMPUTE] += per_step * pp->act_off;
	}
	out->step = jw >= 0 ? base[jw].step05 : 0.0;
	out->step += per_step * pp->act_off;
	out->step += pd;
	out->step += pz;
	out->step += bubble;
	if (c->delayed_update) {
		/* ZeRO-Offload's one-step delayed parameter update
		 * (Ren et al. 2021 sec. 5.2): step i's gradients go
		 * down, the CPU steps and the parameters come up
		 * while the GPU runs step i+1 on the parameters of
		 * step i-1; only what outlasts the GPU's step
		 * shows. */
		double e = pp->opt > out->step ? pp->opt - out->step : 0.0;

		if (!brief) {
			out->part[TRAIN_OPTIMIZER] = e;
			out->hidden[TRAIN_OPTIMIZER] = pp->opt - e;
		}
		out->step += e;
	} else {
		out->step += pp->opt;
	}
	if (c->mem.ema == GP_EMA_CPU) {
		/* ema cpu: the average in host memory.  DeepSeek-V3
		 * (arXiv 2412.19437, sec. 3.3.x "Exponential Moving Average
		 * in CPU"): "The EMA parameters are stored in CPU memory
		 * and are updated asynchronously after each training step.
		 * This method allows us to maintain EMA parameters without
		 * incurring additional memory or time overhead."  NeMo's
		 * EMAOptimizer with a CPU device does it so: after the
		 * optimizer step, on a side stream, "param.data.to(
		 * self.device, non_blocking=True)" for each parameter, the
		 * lerp in a host thread, and the next step() first calls
		 * self.join() (stream.synchronize, thread.join): the copy
		 * of the rank's parameters over its PCIe link
		 * (host_link_bw, the recipe's weight bytes each) and then
		 * the host thread's update hide under the next step, and
		 * only what outlasts it shows.  The thread waits for the
		 * copy ("pre_sync_stream.synchronize()" in
		 * run_ema_update_cpu) and runs NeMo's two foreach passes
		 * on host tensors (ema_update: _foreach_mul_, then
		 * _foreach_add_; engine/train.c ema_update): 16 B + the
		 * parameter's a parameter of host DRAM, every rank's
		 * thread at once, each at its share of the host's DRAM
		 * (host_dram_each; a bound from below: a rank's few
		 * threads may stream slower). */
		double cp = 0, e;

		for (k = 0; k < ph->nrec; k++) {
			double n = ema_params(x, base[k].params -
					      base[k].eparams,
					      base[k].eparams);

			if (n > cp)
				cp = n;
		}
		cp = cp * ph->sb.weights / host_link_bw(x) +
			cp * (ph->sb.weights + 16.0) / host_dram_each(x);
		e = cp > out->step ? cp - out->step : 0.0;
		if (!brief) {
			out->part[TRAIN_OPTIMIZER] += e;
			out->hidden[TRAIN_OPTIMIZER] += cp - e;
		}
		out->step += e;
	}
	if (!brief)
		out->bubble_frac = out->part[TRAIN_BUBBLE] / out->step;
}

/* Throughput, FLOPs and their fractions of the peak, the run's time and
 * cost, from the step. */
TRAIN_INLINE int step_rates(phase *ph, const gp_model *m,
			    const roof_device *d, const train_cfg *c,
			    train_cache *cache, int brief,
			    train_result *out, gp_error *err)
{
	const ctx *x = &ph->x;
	double sg;

	if (!ph->flops_ok && phase_flops(ph, m, c, cache, err))
		return GP_EINVAL;
	out->tokens_per_step = ph->tokens_per_step;
	out->tokens_per_s = out->tokens_per_step / out->step;
	out->model_flops = ph->model_flops;
	out->hw_flops = ph->hw_flops;
	out->peak = d->peak[c->compute];
	/* One division each (a chain of them was the step's longest). */
	sg = out->step * x->y.gpus;
	out->model_tflops_gpu = out->model_flops / (sg * 1e12);
	out->mfu = out->model_flops / (sg * out->peak);
	if (!brief) {
		out->tokens_per_s_gpu = out->tokens_per_s / x->y.gpus;
		out->hw_tflops_gpu = out->hw_flops / (sg * 1e12);
		out->hfu = out->hw_flops / (sg * out->peak);
	}
	if (c->tokens > 0) {
		/* A run is at least one step: fewer tokens than a step's
		 * still run one (Hugging Face Trainer's
		 * num_update_steps_per_epoch = max(len_dataloader //
		 * gradient_accumulation_steps, 1)); 1 token priced at
		 * 2e-10 days.  Past one step the time stays proportional:
		 * Megatron floors (train_iters = train_samples //
		 * global_batch_size) and HF's last partial batch is smaller,
		 * so no trainer rounds a run up to a whole extra step. */
		double tok = out->tokens_per_step > c->tokens ?
			out->tokens_per_step : c->tokens;

		out->train_time = tok * out->step / out->tokens_per_step;
		if (c->price > 0)
			out->cost = tok * sg * c->price /
				(3600.0 * out->tokens_per_step);
	}
	return GP_OK;
}

TRAIN_INLINE int step_of(phase *ph, const gp_model *m,
			 const roof_device *d, const train_cfg *c,
			 train_cache *cache,
			 int (*gate)(void *ud, double step_lb), void *ud,
			 int brief, train_result *out, gp_error *err)
{
	ctx *x = &ph->x;
	const scost *base = NULL;
	const double (*blk)[TRAIN_ZB_N] = NULL;
	struct zslot *zs;
	struct stage_loop *sl;
	scost s, dual;
	double dual_blk[TRAIN_ZB_N];
	const scost *sbase;
	const double (*sblk)[TRAIN_ZB_N];
	step_post pp = { 0, 0, 0, 0, 0, 0 };
	double per_step = ph->per_step, tmax = 0, tsum = 0, rb = x->rb;
	int j, k, G = x->e.t.gpus_per_node, post, jw = -1;

	x->c = c;
	x->e.err = err;
	x->e.bad = 0;
	x->y.zero = c->mem.lay.zero;
	zs = train_zslot(ph, c, x->y.zero);
	step_clear(ph, c, brief, out);
	/* The lower bound (see train_bound): per_step x the time of the
	 * stage with the most layers.  The step is per_step x the slowest
	 * stage's micro-batch time plus the bubble, the reductions and the
	 * optimizer, none negative: this stage's own time, per_step times,
	 * is below it.  The gate sees it before memory and the schedule
	 * are priced. */
	if (gate) {
		if (train_phase_base(ph, cache, &base) ||
		    train_phase_blocks(ph, &blk))
			return GP_EINVAL;
		stage_with(&base[ph->kb], blk[ph->kb], &s);
		/* DualPipe's rank runs that stage for half its micro-batches
		 * (dual_pair): a pair's mean is at least half its heavier. */
		if (ph->dual)
			s.t *= 0.5;
		if (!gate(ud, per_step * s.t)) {
			memset(&out->mem, 0, sizeof out->mem);
			memset(out->ops, 0, sizeof out->ops);
			out->bounded = 1;
			return GP_OK;
		}
	}
	/* The activation offload's copies need a layer's saved bytes
	 * (the full memory result). */
	if (phase_mem(ph, zs, m, c, cache, brief && !c->mem.act_offload_layers &&
		      !c->mem.ckpt_offload && !c->mem.paged_optimizer,
		      &out->mem, err))
		return GP_EINVAL;
	out->fits = out->mem.fits;
	if (!out->fits && c->skip_unfit) {
		memset(out->ops, 0, sizeof out->ops);
		return GP_OK;
	}
	/* Kept already, as they mostly are: no call. */
	if (!base && ph->layers_ok && ph->base_ok[c->tp_overlap != 0])
		base = ph->base[c->tp_overlap != 0];
	if (!blk && (x->y.zero < 2 || !gathers(x)))
		blk = train_no_blocks;
	else if (!blk && zs->blk_ok[block_set(c, x->y.zero)])
		blk = (const double (*)[TRAIN_ZB_N])
			zs->blk[block_set(c, x->y.zero)];
	if ((!base && train_phase_base(ph, cache, &base)) ||
	    (!blk && train_phase_blocks(ph, &blk)))
		return GP_EINVAL;
	post = ph->post;
	if (post && !zs->post_ok && phase_post(ph, zs, base))
		return GP_EINVAL;
	if (!brief)
		result_ops(ph, out);
	/* The stages' pass, kept by TP overlap for the arrays it read:
	 * within a phase each array is written once (base_ok, blk_ok), so
	 * the same two arrays give the same pass. */
	sl = &ph->sl[c->tp_overlap != 0];
	if (ph->sl_ok[c->tp_overlap != 0] && sl->base == base &&
	    sl->blk == blk) {
		tsum = sl->tsum;
		tmax = sl->tmax;
		jw = sl->jw;
		out->stage = sl->stage;
		out->stage_layers = sl->stage_layers;
		out->vision_time = sl->vision_time;
		out->vision_patches = sl->vision_patches;
	} else {
		for (j = 0; j < ph->nrec; j++) {
			const stage_rec *r = &ph->rec[j];
			double st = stage_total(&base[j], blk[j]);

			if (r->k == 0) {
				out->vision_time = per_step * base[j].vision;
				out->vision_patches = base[j].vision_patches;
			}
			tsum += st;
			for (k = 0; k < r->repeat; k++)
				tsum += st;
			if (st > tmax) {
				tmax = st;
				jw = j;
				out->stage = r->k;
				out->stage_layers = r->nl;
			}
		}
		sl->base = base;
		sl->blk = blk;
		sl->tsum = tsum;
		sl->tmax = tmax;
		sl->jw = jw;
		sl->stage = out->stage;
		sl->stage_layers = out->stage_layers;
		sl->vision_time = out->vision_time;
		sl->vision_patches = out->vision_patches;
		ph->sl_ok[c->tp_overlap != 0] = 1;
	}
	/* LoRA: only the adapters reduce and step, a few MB; their cost is
	 * below the model's resolution.  A forward pass reduces and steps
	 * nothing. */
	if (post)
		post_of(ph, c, base, blk, zs, &pp);
	/* The paged states' traffic (paged_state_time) with the step:
	 * the memory result above is the full one (phase_mem). */
	if (post && c->mem.paged_optimizer)
		pp.opt += paged_state_time(x, &out->mem);
	/* DualPipe: the slowest rank's pair of stages in place of the
	 * slowest stage (dual_pair). */
	sbase = base;
	sblk = blk;
	if (ph->dual && jw >= 0 &&
	    dual_pair(ph, base, blk, &dual, dual_blk, &tmax, out)) {
		sbase = &dual;
		sblk = (const double (*)[TRAIN_ZB_N])dual_blk;
		jw = 0;
	}
	/* Tied embeddings across the pipeline: the first and last stage
	 * all-reduce the embedding gradient (Megatron's embedding group).
	 * Under DeepSpeed's BF16_Optimizer it is the fp32 copy that goes:
	 * the pipeline engine's ReduceTiedGrads instruction runs "grad =
	 * weight._hp_grad if self.bfloat16_enabled() else weight.grad;
	 * dist.all_reduce(grad, group=group)" (deepspeed/runtime/pipe/
	 * engine.py _exec_reduce_tied_grads, from PR #1801 "bf16+pipeline
	 * parallelism", 2022-04-19), _hp_grad being the parameter's view
	 * of the optimizer's fp32 gradient buffer (bf16_optimizer.py
	 * update_hp_grads): 4 bytes an element, not the 16-bit reduce
	 * dtype. */
	if (ph->tied && !ph->tied_ok) {
		/* Once a phase: it reads the phase's groups, TP split and
		 * reduce dtype (train_hp_acc: the phase keeps it). */
		gp_group eg;
		double tb = train_hp_acc(c) ? 4.0 : rb;

		eg.ranks = 2;
		eg.nodes = 0;
		eg.per_node = ph->groups[GP_GRP_PP].per_node > 1 ? 2 : 1;
		eg.sharing = G / eg.per_node;
		if (eg.sharing < 1)
			eg.sharing = 1;
		ph->tied_t = coll(x, GP_ALL_REDUCE,
				  x->e.p.embedding / x->y.tp * tb, &eg);
		if (x->e.bad)
			return GP_EINVAL;
		ph->tied_ok = 1;
	}
	if (ph->tied)
		pp.dp += ph->tied_t;
	if (ph->act_off && jw >= 0 && sbase[jw].layers > 1) {
		int L = sbase[jw].layers;

		pp.act_off = act_offload_time(L, c->mem.act_offload_layers,
			offload_layer_time(x, c, out->mem.act_layer),
			sbase[jw].lfwd / L, sbase[jw].lbwd / L);
	}
	if (ph->ckpt_off && jw >= 0) {
		int L = sbase[jw].layers;
		double t = offload_layer_time(x, c, out->mem.act_layer);

		pp.act_off += c->ckpt_offload_streams && L > 0 ?
			ckpt_offload_stream_time(L, t, sbase[jw].lfwd / L,
						 sbase[jw].lbwd / L) :
			ckpt_offload_time(L, t);
	}
	step_sum(ph, c, sbase, sblk, jw, tsum, tmax, &pp, brief, out);
	return step_rates(ph, m, d, c, cache, brief, out, err);
}

int train_step_gated(const gp_model *m, const roof_device *d,
		     const gp_topo *t, const train_cfg *c, train_cache *cache,
		     int (*gate)(void *ud, double step_lb), void *ud,
		     train_result *out, gp_error *err)
{
	phase local, *ph = NULL;

	if (!out)
		return gp_fail(err, "train: NULL result");
	if (!c)
		return gp_fail(err, "train: missing argument");
	if (train_phase_get(m, d, t, c, cache, 0, 0, 0, &local, &ph, err) ||
	    step_of(ph, m, d, c, cache, gate, ud, 0, out, err)) {
		/* What failed part way is not kept. */
		if (cache)
			cache->phase.valid = 0;
		return GP_EINVAL;
	}
	return GP_OK;
}

int train_step_next(const gp_model *m, const roof_device *d,
		    const gp_topo *t, const train_cfg *c, train_cache *cache,
		    unsigned how, int (*gate)(void *ud, double step_lb),
		    void *ud, train_result *out, gp_error *err)
{
	phase local, *ph = cache ? &cache->phase : NULL;

	if (!ph || !c || !out || !cache->valid)
		return train_step_gated(m, d, t, c, cache, gate, ud, out,
					err);
	/* The phase keeps the ZeRO stage through BF16_Optimizer's
	 * per-micro-batch pass and DeepSpeed stage 3's hooks
	 * (train_phase_zero, phase_key): a sweep moving from ZeRO 0 or 1
	 * to 2 under the deepspeed-bf16 recipe, or from 2 to 3 on eager
	 * DeepSpeed, moved it, so its phase is compared, not reused
	 * (reused, the stage paid the pass, or the layers the hooks, of
	 * the stage before). */
	if (!((how & TRAIN_NEXT_REUSE) && ph->valid &&
	      c->mem.lay.zero >= 0 && c->mem.lay.zero <= 3 &&
	      ph->key.mem.lay.zero == train_phase_zero(c)) &&
	    train_phase_get(m, d, t, c, cache, 1, !!(how & TRAIN_NEXT_FRESH),
			    (how & TRAIN_NEXT_REUSE) ||
			    ((how & TRAIN_NEXT_FRESH) &&
			     (how & TRAIN_NEXT_SPLIT)), &local, &ph, err)) {
		ph->valid = 0;
		return GP_EINVAL;
	}
	if (step_of(ph, m, d, c, cache, gate, ud, !!(how & TRAIN_NEXT_BRIEF),
		    out, err)) {
		ph->valid = 0;
		return GP_EINVAL;
	}
	return GP_OK;
}
