/*
 * memory.c - the per-GPU memory breakdown's frame: the component names,
 * the default reserve, and mem_finish summing the tensors, reserves and
 * margin against the budget.  The breakdown's parts are priced in
 * memory_layout.c (checks, stage split), memory_stage_act.c (a layout's
 * saved activations and their memo), memory_train.c (a training stage,
 * the ZeRO split) and memory_infer.c (a serving replica); memory_int.h
 * holds what they share.  See memory.h; recipes in memory_states.c, per-layer
 * activations in memory_act.c, the layout in layout.c.
 */
#include "memory_int.h"

static const char *const comp_names[GP_MEM_NCOMP] = {
	"weights", "grads", "master", "optimizer", "adapter", "param_gather",
	"activations", "recompute", "logits", "vision_activations",
	"pipe_buffers", "grad_reduce",
	"ref_model",
	"reward_model", "critic", "ema", "rollout_weights", "kv_cache", "workspace",
	"cuda_context", "lib_workspace", "comm_buffers", "fragmentation",
	"optimizer_paged"
};

const char *mem_comp_name(int comp)
{
	return comp >= 0 && comp < GP_MEM_NCOMP ? comp_names[comp] : "?";
}

/* ---- reserve ------------------------------------------------------- */

void mem_reserve_default(gp_mem_reserve *r, int gpus)
{
	/* CUDA context with lazy module loading (CUDA >= 11.7): the driver
	 * state plus the kernels PyTorch/cuBLAS load, about 0.3-0.6 GiB on
	 * A100/H100 (nvidia-smi of an idle `torch.zeros(1, device="cuda")`
	 * process; NVIDIA CUDA C Programming Guide, "Lazy Loading").
	 * 0.5 GiB is the middle of that range. */
	r->context = 0.5 * 1073741824.0;
	/* cuBLAS keeps a workspace per handle and stream (PyTorch's default
	 * CUBLAS_WORKSPACE_CONFIG :4096:8 = 32 MiB on Hopper) and cuBLASLt
	 * another 32 MiB (PyTorch CUDA semantics notes): 64 MiB. */
	r->workspace = 64.0 * 1048576.0;
	/* NCCL: NCCL_BUFFSIZE 4 MiB per channel per peer, up to 32
	 * channels, for each communicator (DP, TP, PP groups) plus proxy
	 * state; 0.5 GiB covers a few communicators (NCCL environment
	 * variable docs, NCCL_BUFFSIZE / NCCL_MAX_NCHANNELS). */
	r->comm = gpus > 1 ? 0.5 * 1073741824.0 : 0.0;
	/* PyTorch's caching allocator rounds requests (512 B granules,
	 * 2 MiB / 20 MiB segments) and cannot merge split blocks across
	 * segments; reserved exceeds allocated by a few percent in steady
	 * training (PyTorch CUDA semantics, "Memory management"). */
	r->frag = 0.05;
	/* DESIGN.md: default safety margin 10% of capacity. */
	r->margin = 0.10;
}

void mem_finish(gp_mem_result *o, double capacity, const gp_mem_reserve *r,
		double pooled)
{
	double sum = 0;
	int i;

	for (i = 0; i < GP_MEM_NTENSOR; i++)
		sum += o->bytes[i];
	finish_sum(o, sum, capacity, r, pooled);
}

void mem_largest(gp_mem_result *o)
{
	o->largest = largest_of(o->bytes);
}

double mem_host_share(int gpus_per_node, int host_gpus, double gpus,
		      int *ranks)
{
	int slots = gpus_per_node > 0 ? gpus_per_node : 1;
	double share = 1.0;

	if (host_gpus > 0 && host_gpus < slots) {
		share = (double)host_gpus / slots;
		slots = host_gpus;
	}
	*ranks = gpus < slots ? (int)(gpus > 1 ? gpus : 1) : slots;
	return share;
}

int mem_host_streams(int ranks, int width, int turns)
{
	int held;

	if (ranks < 1)
		ranks = 1;
	if (width < 1)
		width = 1;
	held = ranks / width;
	if (held < 1)
		held = 1;
	if (turns < held)
		held = turns < 1 ? 1 : turns;
	return (ranks + held - 1) / held;
}

double mem_host_bw_each(double bw, int gpus_per_node, int host_gpus,
			double gpus, int width, int turns)
{
	int ranks;
	double share = mem_host_share(gpus_per_node, host_gpus, gpus,
				      &ranks);

	return bw * share / mem_host_streams(ranks, width, turns);
}

void mem_host_fit(gp_mem_result *o, double node_memory, int gpus_per_node,
		  int host_gpus, double gpus)
{
	node_memory *= mem_host_share(gpus_per_node, host_gpus, gpus,
				      &o->host_ranks);
	o->host_need = o->cpu_bytes > 0 ? o->cpu_bytes * o->host_ranks : 0.0;
	o->host_memory = node_memory > 0 ? node_memory : 0.0;
	if (o->host_memory > 0 && o->host_need > o->host_memory)
		o->fits = 0;
}

static const char *const ema_names[GP_EMA_COUNT] = { "none", "gpu", "cpu" };

int mem_ema_parse(const char *s, int *out, gp_error *err)
{
	int v = -1; /* set by gp_parse_name on GP_OK */

	if (gp_parse_name(s, ema_names, GP_EMA_COUNT, &v,
			  "moving average (ema)", err))
		return GP_EINVAL;
	*out = v;
	return GP_OK;
}
