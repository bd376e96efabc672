/*
 * memory_deepspeed.c - what DeepSpeed's engines hold beyond the model
 * states and the layers' saved tensors: the pipeline engine's stage
 * buffers, the moment its gradient reduction peaks, and ZeRO-Offload's
 * host and GPU buffers (see memory_int.h; the stage that adds them is
 * memory_train.c's).
 */
#include "memory_int.h"

#include <string.h>

/* Stage buffers of a pipeline engine beyond the layers' saved tensors,
 * for one stage with `inflight` micro-batches between forward and
 * backward; hid = one stage output (s/cp * b * h elements, /t with
 * sequence parallel).
 *
 * Megatron-LM (the default, nothing added): its schedules keep each
 * in-flight micro-batch's received input -- the first layer's saved
 * input, counted with the activations -- and pseudo-free the output
 * once sent (megatron/core/pipeline_parallel/schedules.py,
 * deallocate_output_tensor: out.data becomes a scalar, only grad_fn
 * stays; megatron/training/arguments.py sets deallocate_pipeline_outputs
 * = True for every run).
 *
 * DeepSpeed's PipelineEngine (deepspeed/runtime/pipe/engine.py,
 * schedule.py TrainSchedule):
 *  - outputs: _exec_forward_pass stores the stage output in
 *    pipe_buffers['outputs'][id] and only _exec_backward_pass of a
 *    non-last stage sets it to None, so every micro-batch in flight
 *    keeps one.  With tensor parallelism and the default pipeline
 *    config (pipe_partitioned and grad_partitioned true, runtime/
 *    config.py get_pipeline_config) the engine zeroes the full
 *    output's .data and keeps this rank's 1/t slice (runtime/utils.py
 *    PartitionedTensor: narrow(...).clone()): hid/t each; without tp,
 *    the full output: hid each.
 *  - inputs: a non-first stage receives into pipe_recv_buf and clones
 *    it into pipe_buffers['inputs'][id], kept until _exec_send_grads.
 *    Partitioned (tp > 1), the forward all-gathers it into the full
 *    tensor the first layer reads and stores that tensor back in the
 *    buffer: the layers' saved input, nothing more.  Unpartitioned,
 *    the forward runs on a second .clone() of the buffer, so each
 *    micro-batch in flight holds one more full input: hid each.
 *  - one receive buffer (pipe_recv_buf, non-first stages) and one
 *    gradient buffer (grad_layer, non-last stages) persist, allocated
 *    once with the shapes of the (partitioned) messages: hid/t each.
 *  - the last stage's backward returns before clearing its output, so
 *    outputs[id] keeps the previous micro-batch's output while the
 *    next one runs (num_pipe_buffers = max(2, min(p - k + 1, m)) = 2
 *    there): one stale output, in Megatron-DeepSpeed's GPTModelPipe
 *    the fp32 logits (its last pipeline layer is float16_to_fp32):
 *    s/cp * b * V/t * 4 bytes.
 * The micro-batch count in flight is the schedule's (TrainSchedule
 * runs stage k's first backward after p - k forwards, Narayanan et al.
 * 2021's 1F1B). */
double mem_ds_pipe_buffers(const gp_model *m, const gp_train_cfg *c,
			   const gp_layout *y, double tok, double A,
			   double inflight, int first, int last)
{
	double hid = tok * m->hidden * A / (c->lay.sp ? y->tp : 1);
	double part = y->tp;  /* partitioned over tp; 1 = whole */
	double b = 0;

	if (!last)
		b += inflight * hid / part + hid / part;
	if (!first)
		b += hid / part + (y->tp == 1 ? inflight * hid : 0);
	if (last)
		b += tok * (double)m->vocab * 4.0 / y->tp;
	return b;
}

/* DeepSpeed's gradient all-reduce under BF16_Optimizer with pipeline
 * parallelism.  After the step's last backward, PipelineEngine's
 * ReduceGrads instruction (runtime/pipe/engine.py _exec_reduce_grads ->
 * _bf16_reduce_grads) hands the optimizer's flat fp32 gradient buffer
 * (bf16_optimizer.py get_grads_for_reduction: one flat tensor per param
 * group, the whole stage's grads) to buffered_allreduce_fallback with
 * elements_per_buffer = MEMORY_OPT_ALLREDUCE_SIZE (500M).  The 500M
 * bucket cannot split a tensor: allreduce_no_retain buckets whole
 * tensors, so the flat buffer goes alone, and allreduce_bucket
 * (runtime/engine.py) flattens it (one tensor: a view) and, the
 * communication dtype being bf16 whenever bf16 is enabled and none is
 * configured (engine.py communication_data_type), takes tensor.to(bf16):
 * a 2-byte copy of every gradient of the stage, live through the
 * all-reduce, then copied back into the fp32 buffer.
 *
 * It does not coexist with the activations: every micro-batch's
 * backward has run, so the layers' saved tensors, the recompute working
 * set and the loss buffers are gone.  What stays: the model states, the
 * bf16 .grad of the last backward (in the recipe's grads), the stage's
 * persistent pipe buffers (receive and gradient buffers, hid/t each)
 * and on the last stage both output buffers, the fp32 logits of the
 * step's last two micro-batches (num_pipe_buffers = 2 there, never
 * cleared).  When that moment is the larger, the breakdown reports it:
 * activations, recompute and logits 0, grad_reduce the copy. */
void mem_ds_reduce_phase(const gp_model *m, const gp_train_cfg *c,
			 const gp_layout *y, double tok, double A,
			 double mine, int first, int last, gp_mem_result *o)
{
	double hid = tok * m->hidden * A / (c->lay.sp ? y->tp : 1);
	double keep = 0, red = mine * 2.0, bwd;

	if (!last)
		keep += hid / y->tp;
	if (!first)
		keep += hid / y->tp;
	if (last)
		keep += 2.0 * tok * (double)m->vocab * 4.0 / y->tp;
	bwd = o->bytes[GP_MEM_ACTIVATIONS] + o->bytes[GP_MEM_RECOMPUTE] +
		o->bytes[GP_MEM_LOGITS] + o->bytes[GP_MEM_VISION] +
		o->bytes[GP_MEM_PIPE_BUFFERS];
	if (keep + red <= bwd)
		return;
	o->bytes[GP_MEM_ACTIVATIONS] = 0;
	o->bytes[GP_MEM_RECOMPUTE] = 0;
	o->bytes[GP_MEM_LOGITS] = 0;
	o->bytes[GP_MEM_VISION] = 0;
	o->bytes[GP_MEM_PIPE_BUFFERS] = keep;
	o->bytes[GP_MEM_GRAD_REDUCE] = red;
}


/* Offloaded training: DeepSpeed ZeRO-Offload (Ren et al. 2021) at stages
 * 1-3 and ZeRO-Infinity's CPU parameter offload (Rajbhandari et al. 2021)
 * at stage 3, as deepspeed/runtime/zero/stage_1_and_2.py and stage3.py
 * allocate them.  tr: trainable elements of this GPU's partition; pb:
 * bytes of their parameter dtype (16-bit, or 4 for fp32 training); big:
 * the largest trainable tensor on this GPU (elements).
 *
 * Host, per GPU (what the node needs is the sum over its GPUs):
 *  - master: the fp32 partition, a clone().float() of the parameters
 *    even when they are fp32 already (single_partition_of_fp32_groups,
 *    fp32_partitioned_groups_flat): 4 tr;
 *  - grads: its fp32 gradient (the partition's .grad, zeros on the CPU
 *    device): 4 tr; at stage 3 also grad_partitions_flat_buffer, the
 *    partitioned gradients in the accumulation dtype (grad_accum_dtype,
 *    memory.h ds_accum_bytes; the parameter's by default), on the CPU
 *    when the optimizer is offloaded: pb tr;
 *  - optimizer: DeepSpeedCPUAdam's fp32 exp_avg and exp_avg_sq (4 + 4),
 *    SGD's fp32 momentum (4), an 8-bit AdamW's two 8-bit states with
 *    their block scales (memory_states.c), per trainable element;
 *  - weights (offload_params): the 16-bit partitions of every parameter,
 *    frozen ones included (ZeRO-3 partitions the whole module): the
 *    weights (and adapter weights) the GPU would otherwise hold.
 *  DeepSpeed's own estimator (stage3.py
 *  estimate_zero3_model_states_mem_needs) counts 18 B per parameter on
 *  the host with both offloaded (2 + 4 + 4 + 8, without the stage-3
 *  accumulation partition) and multiplies by an additional_buffer_factor
 *  of 1.5 for pinned-buffer overhead; here no factor: offload pin_memory
 *  is off by default and an unpinned tensor is its size.
 *
 * GPU: no master, optimizer states or gradient partition.  The gradient
 * bucket the reduction fills (stage 3: __ipg_bucket_flat_buffer, made at
 * init; stages 1-2: ipg_buffer, made at each backward; both
 * reduce_bucket_size elements of the parameter dtype, whatever the
 * trainable count), the .grad autograd produces for one tensor before
 * it is copied into the bucket, and at stages 1-2 the
 * temp_grad_buffer_for_gpu_offload of the largest parameter: grads =
 * (bucket + big (+ big)) pb.  The gathered layers are train_stage's. */
void mem_ds_offload(const gp_train_cfg *c, double tr, double pb,
		    double big, gp_mem_result *o)
{
	int z3 = c->lay.zero == 3;

	o->host_master = 4.0 * tr;
	o->host_grads = (4.0 + (z3 ? (c->ds_accum_bytes > 0 ?
				      c->ds_accum_bytes : pb) : 0.0)) * tr;
	o->host_optimizer = mem_offload_state_bytes(&c->optim) * tr;
	o->host_weights = 0;
	if (c->offload_params) {
		o->host_weights = o->bytes[GP_MEM_WEIGHTS] +
			o->bytes[GP_MEM_ADAPTER];
		o->bytes[GP_MEM_WEIGHTS] = 0;
		o->bytes[GP_MEM_ADAPTER] = 0;
	}
	o->bytes[GP_MEM_MASTER] = 0;
	o->bytes[GP_MEM_OPTIMIZER] = 0;
	o->bytes[GP_MEM_GRADS] = ((c->ds_zero ? c->ds_reduce_bucket :
				   DS_REDUCE_BUCKET) +
				  (z3 ? 1.0 : 2.0) * big) * pb;
	o->cpu_bytes = o->host_weights + o->host_grads + o->host_master +
		o->host_optimizer + o->host_acts;
}

/* DeepSpeed's ZeRO optimizer at stages 2 and 3 (not offloaded): where
 * its gradients live, phase by phase (deepspeed/runtime/zero/
 * stage_1_and_2.py and stage3.py at v0.14.2, tag commit 5f631abc).
 * With ZeRO on, the gradients accumulate in the model dtype (engine.py
 * get_data_types: "if model_dtype == torch.bfloat16 and not
 * self.zero_optimization(): grad_accum_dtype = torch.float32 else:
 * grad_accum_dtype = model_dtype"); the fp32 gradient exists only in
 * the optimizer step.
 *
 * Backward (with the activations):
 *  - stage 3: grad_partitions_flat_buffer, "torch.zeros(sum(p.
 *    partition_numel() ...), dtype=self.gradient_accumulation_dtype"
 *    made at init: pb per partition element;
 *  - stage 2: each backward copies the reduced partition into
 *    grads_in_partition ("torch.empty(int(total_size), dtype=self.
 *    dtype"), and independent_gradient_partition_epilogue keeps the
 *    first micro-batch's as averaged_gradients (views of it) and adds
 *    every later one's into them ("accumulated_grad.add_(new_avg_grad)")
 *    : pb per element, 2 pb from the second micro-batch of a step on.
 * Step (the activations, the recompute, the loss's tensors and stage
 * 3's gathered layers gone: stage3.py step() starts with
 * "self._partition_all_parameters()"; stage 2's flat bucket released
 * by _release_ipg_buffers at the backward's end, stage 3's kept):
 *  - "single_grad_partition = self.flatten(self.averaged_gradients[i])
 *    .to(self.single_partition_of_fp32_groups[i].dtype)" (stage 2
 *    step(); stage 3 _prepare_fp32_grad_for_sub_group likewise, one
 *    sub_group_size = 1e9 elements at a time, config.py): the 16-bit
 *    partition, its flattened 16-bit copy and the fp32 gradient live
 *    together, pb + pb + 4 per element.
 * Between the step and the next backward (an RL step's rollout and its
 * log-prob forwards, mem ds_idle_*): no fp32 gradient -- the step's
 * "self.fp32_partitioned_groups_flat[sub_group_id].grad = None" (stage
 * 3) and "Step 4:- get rid of the fp32 gradients ... .grad = None"
 * (stage 2) drop it.
 *  - stage 3 keeps grad_partitions_flat_buffer and
 *    __ipg_bucket_flat_buffer, both made at init and never released
 *    (its _release_ipg_buffers sets only ipg_buffer = None): pb per
 *    partition element, and the bucket; a forward gathers its layers
 *    as the backward's forward did;
 *  - stage 2 keeps nothing: its step frees the partition's .grad
 *    ("release all the gradient ... free_grad_in_param_list", "self.
 *    averaged_gradients[i] = None"), _release_ipg_buffers at the
 *    backward's end sets "self.ipg_buffer = None; self.
 *    grads_in_partition = None", and backward() makes the buckets anew
 *    ("self.ipg_buffer = []; buf_0 = torch.empty(int(self.
 *    reduce_bucket_size) ..."): a forward alone holds neither.
 * Stage 1 (partition_gradients false) runs the same class and the same
 * step(): its backward keeps every parameter's whole 16-bit .grad (the
 * recipe's grads: nothing reduce-scattered), the epilogue
 * (independent_gradient_partition_epilogue, shared with stage 2) takes
 * averaged_gradients as get_flat_partition(..., return_tensor_list=True)
 * -- narrow views of this rank's partition of those .grad tensors -- and
 * "self.zero_grad(set_to_none=True)" drops the rest; step() then makes
 * the same flat 16-bit copy and its .to(fp32): pb + pb + 4 per element
 * of the partition, as at stage 2.  Without that moment a ZeRO-1 job
 * read smaller than the same job at ZeRO-2, whose step holds exactly
 * it.  Only the step is priced here at stage 1 (its backward is the
 * recipe's whole gradient); not for DeepSpeed's BF16_Optimizer
 * (master_shard0), a different class.
 * o holds the stage's tensors as the recipe sized them (grads: g
 * elements x sb->grads, at stage 1 the whole gradient; master: the
 * partition's fp32 copy); the larger phase replaces them.  bucket: the
 * flat gradient bucket's bytes the step keeps (stage 3's). */
/* The bytes of an element of the trainable parameters' own dtype: what
 * their .grad, ZeRO's gradient partition and its flat copy hold.  A
 * recipe's weights can count more than that dtype: the fp8 recipes' 3 B
 * are the bf16 parameter and Transformer Engine's cached fp8 cast of it
 * (catalog/recipes.lua "fp8": "bf16 params plus the fp8 cast of each
 * weight cached between micro-batches (2 + 1)"), and the cast has no
 * gradient.  The recipe's offload field is that dtype (the trainable
 * partition the GPU keeps under ZeRO-Offload); the weights where it is
 * not given. */
static double ds_partition_bytes(const gp_train_cfg *c,
				 const gp_state_bytes *sb)
{
	return c->recipe.offload > 0 && c->recipe.offload < sb->weights ?
		c->recipe.offload : sb->weights;
}

void mem_ds_zero_phases(const gp_train_cfg *c, const gp_state_bytes *sb,
			double bucket, gp_mem_result *o)
{
	int z3 = c->lay.zero == 3;
	/* Before the first step (gp_train_cfg before_step) only the
	 * backward's gradients: stage 1's are the recipe's whole ones. */
	if (c->lay.zero == 1 && c->before_step)
		return;
	if (c->lay.zero == 1) {
		/* the partition: the fp32 master's elements (sharded at
		 * stage 1), else the optimizer states' */
		double gp = sb->master > 0 ? o->bytes[GP_MEM_MASTER] /
			sb->master : sb->optimizer > 0 ?
			o->bytes[GP_MEM_OPTIMIZER] / sb->optimizer : 0.0;
		double pb1 = ds_partition_bytes(c, sb), gs, bw1;

		if (!(gp > 0))
			return;
		/* the step after _release_ipg_buffers: no bucket either */
		gs = gp * (pb1 + pb1 + (pb1 < 4.0 ? 4.0 : 0.0));
		bw1 = o->bytes[GP_MEM_GRADS] + o->bytes[GP_MEM_ACTIVATIONS] +
			o->bytes[GP_MEM_RECOMPUTE] + o->bytes[GP_MEM_LOGITS] +
			o->bytes[GP_MEM_VISION] +
			o->bytes[GP_MEM_PARAM_GATHER];
		if (gs <= bw1)
			return;
		o->bytes[GP_MEM_GRADS] = gs;
		o->bytes[GP_MEM_PARAM_GATHER] = 0;
		o->ds_grad_phase = 2;
		o->ds_grad_bytes = gs / gp;
		o->bytes[GP_MEM_ACTIVATIONS] = 0;
		o->bytes[GP_MEM_RECOMPUTE] = 0;
		o->bytes[GP_MEM_LOGITS] = 0;
		o->bytes[GP_MEM_VISION] = 0;
		return;
	}
	/* stage 3's partition and its flattened copy at the step are the
	 * accumulator's dtype (grad_accum_dtype, memory.h ds_accum_bytes);
	 * .to(fp32) of an fp32 flat copy is that copy, no third tensor */
	double pb = z3 && c->ds_accum_bytes > 0 ? c->ds_accum_bytes :
		ds_partition_bytes(c, sb);
	double cast = pb < 4.0 ? 4.0 : 0.0;
	double g = o->bytes[GP_MEM_GRADS] / sb->grads;
	/* the step's micro-batches, not one pipeline schedule call's
	 * (memory.h accum_microbatches): the partition accumulates across
	 * calls until the step */
	double steps = c->accum_microbatches > 0 ? c->accum_microbatches :
		c->lay.microbatches;
	double acc = !z3 && steps > 1 ? 2.0 : 1.0;
	double sub = z3 ? fmin(g, DS_SUB_GROUP) : g;
	double bwd, step, gstep;

	o->ds_idle_grads = z3 ? g * pb : 0.0;
	o->ds_idle_bucket = z3 ? bucket : 0.0;
	o->ds_fwd_gather = z3 ? o->bytes[GP_MEM_PARAM_GATHER] : 0.0;
	o->bytes[GP_MEM_GRADS] = g * pb * acc;
	o->ds_grad_phase = 1;
	o->ds_grad_bytes = pb * acc;
	gstep = g * pb + sub * (pb + cast);
	bwd = o->bytes[GP_MEM_GRADS] + o->bytes[GP_MEM_PARAM_GATHER] +
		o->bytes[GP_MEM_ACTIVATIONS] + o->bytes[GP_MEM_RECOMPUTE] +
		o->bytes[GP_MEM_LOGITS] + o->bytes[GP_MEM_VISION];
	step = gstep + bucket;
	if (step <= bwd || c->before_step)
		return;
	o->bytes[GP_MEM_GRADS] = gstep;
	o->ds_grad_phase = 2;
	/* per element of the partition: pb + pb + 4 but for stage 3's
	 * sub-groups (none on a stage that trains nothing) */
	o->ds_grad_bytes = g > 0 ? gstep / g : 0;
	o->bytes[GP_MEM_PARAM_GATHER] = bucket;
	o->bytes[GP_MEM_ACTIVATIONS] = 0;
	o->bytes[GP_MEM_RECOMPUTE] = 0;
	o->bytes[GP_MEM_LOGITS] = 0;
	o->bytes[GP_MEM_VISION] = 0;
}

/* DeepSpeed without ZeRO in fp16 (stage 0: engine.py _configure_
 * optimizer takes the FP16 wrapper, _configure_fp16_optimizer, v0.14.2).
 * Its backward keeps every parameter's whole 16-bit .grad (the recipe's
 * grads); its step builds the fp32 gradient the master weights step
 * with, whole, beside them:
 *  - FP16_Optimizer (runtime/fp16/fused_optimizer.py), taken when the
 *    optimizer is DeepSpeed's FusedAdam -- what an "optimizer": {"type":
 *    "AdamW"} config builds (engine.py _configure_basic_optimizer, not
 *    torch_adam):
 *      grads_groups_flat.append(_flatten_dense_tensors([... p.grad.
 *          to(data_type) for p in group]))
 *    the list of per-parameter fp32 copies (4 B) and their flat
 *    concatenation (4 B) exist together beside the 16-bit .grad (2 B),
 *    which "for p in group: p.grad = None" drops only after: 2 + 4 + 4
 *    = 10 B per element at that moment (one parameter group; with
 *    several, the groups' flats accumulate while the later groups'
 *    copies are made -- no more than this);
 *  - FP16_UnfusedOptimizer (runtime/fp16/unfused_optimizer.py), any
 *    other optimizer: "fp32_param.grad = fp16_param.grad.to(fp32_param.
 *    dtype)" for every parameter before self.optimizer.step(), the
 *    16-bit .grad kept: 2 + 4 = 6 B.
 * The activations, the loss's tensors and the bucket of the all-reduce
 * (engine.py allreduce_gradients runs after the backward) are gone by
 * then; after the step "group.grad = None" and the .grad release leave
 * no gradient until the next backward (an RL step's rollout: none,
 * ds_idle_grads 0).  The step replaces the backward's tensors when it is
 * the larger, as stage 1's (mem_ds_zero_phases). */
void mem_ds_fp16_step(const gp_train_cfg *c, const gp_state_bytes *sb,
		      gp_mem_result *o)
{
	double g = o->bytes[GP_MEM_GRADS] / sb->grads;
	double pb = sb->weights;
	double gs = g * (pb + c->ds_fp16_step);
	double bwd = o->bytes[GP_MEM_GRADS] + o->bytes[GP_MEM_ACTIVATIONS] +
		o->bytes[GP_MEM_RECOMPUTE] + o->bytes[GP_MEM_LOGITS] +
		o->bytes[GP_MEM_VISION] + o->bytes[GP_MEM_PARAM_GATHER];

	if (!(g > 0) || gs <= bwd)
		return;
	o->bytes[GP_MEM_GRADS] = gs;
	o->bytes[GP_MEM_PARAM_GATHER] = 0;
	o->bytes[GP_MEM_ACTIVATIONS] = 0;
	o->bytes[GP_MEM_RECOMPUTE] = 0;
	o->bytes[GP_MEM_LOGITS] = 0;
	o->bytes[GP_MEM_VISION] = 0;
	o->ds_grad_phase = 2;
	o->ds_grad_bytes = gs / g;
	o->ds_idle_grads = o->ds_idle_bucket = o->ds_fwd_gather = 0;
}

/* ZeRO-3 on a model built outside deepspeed.zero.Init -- a Hugging Face
 * from_pretrained without a ZeRO-3 HfDeepSpeedConfig alive (transformers
 * builds under zero.Init only where is_deepspeed_zero3_enabled(), which
 * the Trainer and Accelerate arrange and a plain deepspeed.initialize
 * script does not), handed whole to deepspeed.initialize.  DeepSpeed
 * moves it whole onto the GPU before it partitions anything (runtime/
 * engine.py _configure_distributed_model: is_zero_init_model is false
 * when no parameter has a ds_id, and then "if not (self.dont_change_
 * device or is_zero_init_model): self.module.to(self.device)"); stage 3's
 * optimizer then partitions it one parameter at a time (zero/parameter_
 * offload.py _convert_to_zero_parameters -> partition_parameters.py
 * Init(module=...) _zero_init_param -> param.partition(), whose
 * _partition_param makes the partition and copies its slice before
 * free_param drops the whole tensor).  Largest at the first parameter:
 * the whole module in its 16-bit dtype (the engine casts it on the host
 * first, _cast_module_mixed_precision) and that parameter's partition
 * (on the GPU unless offload_param sends it to the host); each later
 * one frees more than it makes.  Nothing of training exists yet: the
 * fp32 partitions, the buckets and the gradient buffers are made after
 * (stage3.py _setup_for_real_optimizer, after the conversion), and its
 * _create_fp16_partitions_with_defragmentation gathers the partitions
 * through the host and empty_cache()s before it makes the flat buffer
 * (zero/utils.py defragment), so no later allocation stacks on these
 * blocks.  PyTorch's peak counters (max_memory_allocated,
 * max_memory_reserved) keep that moment unless reset.  When it is the
 * larger, it replaces the breakdown: weights the whole module and the
 * partition, every other tensor 0.  whole, first: elements (this GPU's
 * module, before ZeRO shards it; the first parameter's partition). */
void mem_ds_whole_init(const gp_train_cfg *c, const gp_state_bytes *sb,
		       double whole, double first, gp_mem_result *o)
{
	double pb = ds_partition_bytes(c, sb);
	double b = (whole + (c->offload_params ? 0.0 : first)) * pb, s = 0;
	int i;

	for (i = 0; i < GP_MEM_NTENSOR; i++)
		s += o->bytes[i];
	if (b <= s)
		return;
	for (i = 0; i < GP_MEM_NTENSOR; i++)
		o->bytes[i] = 0;
	o->bytes[GP_MEM_WEIGHTS] = b;
	o->ds_grad_phase = 0;
	o->ds_whole_init = 1;
}
