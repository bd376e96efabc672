-- Predict a `train` validation case (validation/SCHEMA.md) with gpuplan.train:
-- step_time_s, tokens_per_s_per_gpu, and achieved TFLOP/s per GPU in the
-- case's convention -- hfu_tflops_per_gpu counts the recomputed forward
-- (Narayanan et al. 2021 eq. 3: 96 B s l h^2 (1 + s/6h + V/16lh) with full
-- recompute), mfu_tflops_per_gpu does not; both count attention over the
-- whole sequence, as Megatron's formula and Llama 3's MFU do.
--
-- What a case leaves open comes from the software stack it states
-- (workload.framework, read by case.framework), each
-- setting from that stack's own code or published configs of the era, and
-- is listed in the prediction's defaults; a value the case states wins.

local train = require "gpuplan.train"
local case_ = require "gpuplan.predict.case"
local v, model_of = case_.v, case_.model

-- The software stack that ran is the case's workload.framework (SCHEMA.md:
-- its source's title and command lines name it), one of the profiles
-- below by name; a case that states none gets gp.train's defaults.
--
-- pytorch-fsdp is a run whose source names PyTorch FSDP and no framework:
-- PyTorch's own FullyShardedDataParallel wrapper over PyTorch modules.
-- Its optimizer is torch.optim over FSDP's sharded fp32 parameters -- the
-- hf stack's model state (16 B a parameter under bf16 mixed precision),
-- not Megatron's (gp.train's pretraining default, 18) -- and its modules
-- are whatever the run's code holds, so the profile sets the stack and
-- leaves the rest to gp.train's hf defaults and to what the case states.

-- Stack profiles: { option, value, why [, when] }; `when(o, m)` (the
-- options so far and the case's model) limits an entry to the runs it
-- describes.  Sources: the frameworks' own code and run configs of the
-- era (Megatron-LM examples/sc21 scripts, NeMo-Framework-Launcher 24.07
-- yamls, Megatron-Bridge 25.11 scripts/performance, llm-foundry's
-- benchmarking sweep, the Llama 3 paper sec. 3.3).
local function gated(_, m) return m.ffn_gated end
local function gpt(_, m) return not m.ffn_gated end
local function lora(o) return o.method == "lora" or o.method == "qlora" end
local function pretrain(o) return o.method == "pretrain" end
local function tp2(o) return (o.tp or 1) > 1 end
local function fp16(o) return o.precision == "fp16" end
local function moe(_, m) return m.moe ~= nil end
-- nanotron's pipeline split (models/base.py build_model at c2528430 and
-- the benchmark's 67c5ebb6): "# Balance compute across PP blocks",
-- each PipelineBlock weighed by models/llama.py get_block_compute_costs
-- -- a LlamaDecoderLayer "4 * model_config.num_attention_heads * d_qkv *
-- model_config.hidden_size + 3 * d_ff * model_config.hidden_size" (d_qkv
-- = hidden_size // num_attention_heads), the lm_head
-- (TensorParallelColumnLinear) "model_config.vocab_size *
-- model_config.hidden_size", every other block (the embedding, the final
-- norm, the fp32 cast, the loss) 0 -- then "thresholds =
-- [block_cumulative_costs[-1] * ((rank + 1) / pp_size) ...]" and each
-- block in order set on the current rank, which moves on once "if
-- cumulative_cost > thresholds[target_pp_rank_idx]" (the block that
-- crosses stays).  The layers per stage, first to last.
local function nanotron_split(pp, m)
  local h = m.hidden
  local layer = 4 * m.heads * (h // m.heads) * h + 3 * m.ffn_hidden * h
  local total = m.layers * layer + m.vocab * h
  local counts, k, cum = {}, 1, 0
  for i = 1, pp do counts[i] = 0 end
  for _ = 1, m.layers do
    counts[k] = counts[k] + 1
    cum = cum + layer
    if cum > total * k / pp then k = k + 1 end
  end
  return counts
end
-- The split as every stage's layers (gp.train's stage_layers), for a
-- pipeline (pp >= 2) of a model whose shape the costs need; nil where a
-- stage is left no layer (a head of more than a share's worth of layers
-- past the last: the 1.34B's 6, 5, 5, 0 on PP 4) -- stage_layers takes
-- one layer or more a stage, so uniform stays.  Not where the case states
-- its own ends (first_stage_layers / last_stage_layers: the job's split
-- wins whole, not mixed with this one; stage_layers and the ends are
-- refused together) -- a stated stage_layers wins by case_.profile's
-- rule (a key the case sets is not filled).
local function nanotron_stages(o, m)
  local pp = o.pp or 1
  if pp < 2 or o.first_stage_layers ~= nil or o.last_stage_layers ~= nil
      or not (m.layers and m.hidden and m.heads and m.ffn_hidden and m.vocab) then
    return nil
  end
  local c = nanotron_split(pp, m)
  for i = 1, pp do if c[i] < 1 then return nil end end
  return c
end

-- nanotron's gradient reduction at ZeRO 0, one all-reduce a gradient
-- tensor.  Where DP > 1 and ZeRO 0 trainer.py wraps the model in torch's
-- DistributedDataParallel and helpers.py registers get_fp32_accum_hook,
-- whose body, for each ready DDP bucket, runs
-- "accumulator.fp32_grads_allreduce_handle = dist.all_reduce_coalesced(
-- grad_buffer_tensor_list, group=dp_pg, async_op=True, op=reduce_op)"
-- over "[accumulator.get_grad_buffer(param_id_to_name[id(param)]).view(-1)
-- for param in bucket.parameters()]" (optim/gradient_accumulator.py at
-- the benchmark's 67c5ebb6): a list of the bucket's fp32 gradient
-- tensors, not one flat buffer.  PyTorch's ProcessGroupNCCL::
-- allreduce_coalesced hands that list to collectiveCoalesced with one
-- "ncclAllReduce(input.data_ptr(), output.data_ptr(), input.numel(),
-- ...)" a tensor, between ncclGroupStart and ncclGroupEnd
-- ("nccl:allreduce_coalesced"): each tensor its own collective, each
-- paying its own latency, as dp_bucket prices one collective a bucket
-- (engine/train.c dp_bucketed).  The tensors of a nanotron Llama: six a
-- decoder layer (input_layernorm, qkv_proj, o_proj,
-- post_attention_layernorm, gate_up_proj, down_proj), the token
-- embedding, the lm_head where untied and the final norm.  dp_bucket is
-- their mean size on a rank (the matrices over TP, the norms whole, over
-- the count, rounded up so that dp_bucketed's full buckets and its rest
-- make the count): the count of collectives is the code's, the bytes the
-- same in all.  A pipeline stage's own count differs by its ends' one or
-- two; every cell that runs DDP here is PP 1.  Not at ZeRO 1 (no DDP
-- there: one all-reduce of the contiguous buffer, zero_reduce) nor at DP
-- 1 (no DDP).
local function nanotron_ddp_tensor(o, m)
  local tp, pp, cp = o.tp or 1, o.pp or 1, o.cp or 1
  local dp = (o.gpus or 1) // (tp * pp * cp)
  if (o.zero or 0) ~= 0 or dp < 2
      or not (m.layers and m.hidden and m.heads and m.ffn_hidden and m.vocab) then
    return nil
  end
  local h = m.hidden
  local hd = m.head_dim or h // m.heads
  local kv = m.kv_heads or m.heads
  -- q and o (heads x hd), k and v (kv x hd), gate_up and down
  local layer = 2 * h * m.heads * hd + 2 * h * kv * hd + 3 * h * m.ffn_hidden
  local ends = m.tied_embeddings and 1 or 2
  local params = ((m.layers * layer + ends * m.vocab * h) / tp + (2 * m.layers + 1) * h) / pp
  return math.ceil(params / ((6 * m.layers + ends + 1) / pp))
end

local ROUTERLESS = "num_floating_point_operations: no router term"
-- Whether the case's GPU is of compute capability 10.0 or newer, from its
-- catalog entry's architecture (catalog/FORMAT.md `arch`), so that a
-- user's own Blackwell part gets these settings whatever its id.  Both
-- sources test the capability, not a card: Megatron-Bridge's
-- perf_plugins.py passes "gpu_sm100_or_newer" to
-- _set_num_cuda_device_max_connections, and torchtitan's SDPA wrapper puts
-- CUDNN_ATTENTION first "if has_cuda_capability(10, 0)" (torchtitan
-- tools/utils.py: the device's capability >= (10, 0)).  Every Blackwell
-- part is sm100 or later (B200/GB200 10.0, B300/GB300 10.3, RTX 5090
-- 12.0) and no earlier architecture is.
local function blackwell(o)
  local g = o.cat and o.cat.gpus[o.gpu]
  return g ~= nil and g.arch == "blackwell"
end

-- Megatron-LM's SC21 scripts (NVIDIA/Megatron-LM examples/sc21,
-- run_table_1.sh and run_figure_12/18.sh): micro-batch, interleaving and
-- DDP implementation per model, found by the model's shape.
local SC21 = {
  { layers = 30, hidden = 3072, batch = 16, ddp = "torch" },       -- 3.6B
  { layers = 48, hidden = 8192, batch = 4 },                        -- 39.1B
  { layers = 60, hidden = 10240, batch = 2, vpp = 3 },              -- 76.1B
  { layers = 80, hidden = 12288, batch = 2, vpp = 2 },              -- 145.6B
  { layers = 96, hidden = 12288, batch = 1, vpp = 4 },              -- 175B
  { layers = 105, hidden = 20480, batch = 1, vpp = 3 },             -- 530B
  { layers = 128, hidden = 25600, batch = 1 },                      -- 1T
}
local function sc21(m)
  for _, r in ipairs(SC21) do
    if r.layers == m.layers and r.hidden == m.hidden then return r end
  end
end

-- NeMo 24.07's fine-tuning table ran the NeMo-Framework-Launcher's
-- examples/peft/llama/h100 scripts (each matches its row's GPUs, GBS 32,
-- MBS 1, TP, PP and "packed_sequence=true ... max_seq_length=4096");
-- what they set beyond the table's columns, per full-SFT layout:
-- 13b_1node.sh "pipeline_model_parallel_size=4 \\
-- virtual_pipeline_model_parallel_size=10 ... overlap_p2p_comm=true";
-- 70b_2node.sh "tensor_model_parallel_size=4 ... pipeline_model_parallel_size=4
-- virtual_pipeline_model_parallel_size=20 sequence_parallel=true ...
-- overlap_p2p_comm=true ub_tp_comm_overlap=true"; 7b_1node.sh: TP 1, PP 1.
local NEMO_SFT = {
  { layers = 40, hidden = 5120, tp = 1, pp = 4, vpp = 10 },                 -- 13B
  { layers = 80, hidden = 8192, tp = 4, pp = 4, vpp = 20, sp = true },      -- 70B
}
local function nemo_sft(o, m)
  if o.method ~= "full" then return nil end
  for _, r in ipairs(NEMO_SFT) do
    if r.layers == m.layers and r.hidden == m.hidden and r.tp == (o.tp or 1)
        and r.pp == (o.pp or 1) then
      return r
    end
  end
end
local function sft_set(k)
  return function(o, m) local r = nemo_sft(o, m); return r and r[k] end
end
local SFT = "launcher examples/peft/llama/h100"


-- A model's own eager attention code (Baichuan's remote modeling_baichuan.py
-- clamps the masked scores and takes its softmax in the 16-bit type) is the
-- case's to state: workload.attn_clamp, workload.eager_softmax and
-- workload.attn_where (transformers 4.12's GPT-2 masks with torch.where
-- before the additive mask; workload.attn_head_copies "matmul": its q, k
-- and v are permuted views of c_attn's split that torch.matmul copies)
-- (SCHEMA.md),
-- gp.train's options of those names,
-- and workload.flash
-- false where the model's code has no fused attention at all (Qwen-VL's
-- remote modeling_qwen.py).  No model is recognised here by its shape.
-- (flash is otherwise gpuplan.options' default for an ALiBi model on the
-- eager kernels, which the profile sets.)

local PROFILES = {
  -- Megatron-LM as Narayanan et al. 2021 and Korthikanti et al. 2022 ran
  -- it on Selene (A100, 8 HDR NICs per node).
  ["megatron-lm"] = {
    -- The Megatron paper's ZeRO-3 comparison ran DeepSpeed ZeRO-3
    -- (Narayanan et al. 2021 sec. 5.3: "We integrated ZeRO into our
    -- codebase using the DeepSpeed Python library"; arXiv v1, April 2021).
    -- Stage 3 shipped in DeepSpeed v0.3.12 (March 2021), and every release
    -- up to v0.3.16 (April 2021) waits on the whole device whenever a
    -- submodule gathers its parameters, forward and backward:
    -- stage3.py fetch_sub_module calls _synchronize_communication, which
    -- ends in "torch.cuda.synchronize() if synchronize_streams else None".
    -- overlap_comm (the stage 3 default, constants.py
    -- ZERO3_OPTIMIZATION_OVERLAP_COMM_DEFAULT = True) puts the gradient
    -- reduce-scatter on its own reduction_stream, but the next
    -- submodule's fetch waits for that stream too. Only the kernels
    -- already queued can run beside a reduce-scatter, and the host
    -- launches nothing more until it has finished. A prefetched gather is
    -- waited on the same way. So both are priced on the step's path, as
    -- the later releases' deepspeed profile below prices them from
    -- measurements.
    { "stack", "deepspeed", "ZeRO-3 runs: DeepSpeed", function(o) return (o.zero or 0) >= 2 end },
    { "kernels", "fused", "Megatron-LM's fused modules", function(o) return (o.zero or 0) >= 2 end },
    { "overlap_param_gather", false, "DeepSpeed v0.3.12-16 stage 3: "
      .. "torch.cuda.synchronize() at every submodule's fetch",
      function(o) return (o.zero or 0) >= 2 end },
    { "overlap_grad_reduce", false, "DeepSpeed v0.3.12-16 stage 3: the next fetch's "
      .. "torch.cuda.synchronize() waits for the reduce-scatter",
      function(o) return (o.zero or 0) >= 2 end },
    { "stack", "megatron", "Megatron-LM" },
    -- Unfused baddbmm + fused scale-mask-softmax; FlashAttention came to
    -- Megatron-LM on 2022-12-08, after both papers.
    { "flash", false, "fused softmax kernels, pre-FlashAttention" },
    { "dropout", true, "hidden/attention dropout 0.1 (Megatron default)" },
    { "batch", function(_, m) return sc21(m) and sc21(m).batch end, "examples/sc21 run scripts" },
    { "vpp", function(_, m) return sc21(m) and sc21(m).vpp end, "examples/sc21 run scripts",
      function(o) return (o.pp or 1) > 1 end },
    -- --DDP-impl local all-reduces after backward (training.py: after
    -- forward_backward_func); the PP = 1 runs used torch DDP, which
    -- overlaps the bucketed all-reduce with backward.
    { "overlap_grad_reduce", function(_, m) return sc21(m) and sc21(m).ddp == "torch" or false end,
      "DDP-impl local: all-reduce after backward (torch DDP for PP = 1 rows)" },
    { "overlap_param_gather", false, "no distributed optimizer" },
    { "overlap_p2p", false, "synchronous batched p2p" },
    -- fp16 keeps fp16 main grads and all-reduces them in fp16
    -- (arguments.py: accumulate_allreduce_grads_in_fp32 only for bf16).
    { "grad_reduce", "fp16", "fp16 grads all-reduced in fp16", fp16 },
    -- The loss is mpu/cross_entropy.py's _VocabParallelCrossEntropy on
    -- "output.float()" (gpt_model.py post_language_model_processing,
    -- fp16_lm_cross_entropy off by default): max, "sub_", "torch.exp(...,
    -- out=exp_logits)", "sum", "div_" over fp32 logits, and backward
    -- "grad_input.mul_(grad_output...)" -- the op sequence Megatron-Core
    -- kept unfused until its cross_entropy_loss_fusion (Megatron-LM commit
    -- 6985e58, the SC21 scripts' pinned commit; also the 2022 code).
    { "unfused_loss", true, "vocab-parallel cross-entropy over fp32 logits, op by op" },
    -- The column-parallel linears' input-gradient all-reduce came in
    -- September 2021 (16c90445); the SC21 scripts' commit 6985e58 (August
    -- 2021) all-reduces it on the path.
    { "async_tp_allreduce", false, "SC21 scripts' commit 6985e58: synchronous TP all-reduce",
      tp2 },
  },
  -- Megatron-Core as Megatron-LM's pretrain_gpt.py runs it at core_r0.8.0
  -- (megatron/training/arguments.py) with the flags the README's H100
  -- scaling runs name: "--overlap-grad-reduce --overlap-param-gather",
  -- "--tp-comm-overlap" and pipeline communication overlapped "(enabled
  -- by default)".
  ["megatron-core"] = {
    { "stack", "megatron", "Megatron-Core" },
    -- The loss is Megatron-Core's (gp.train's mcore_loss): op by op
    -- under unfused_loss, else cross_entropy_fusion_impl's default
    -- 'native' (model_parallel_config.py "cross_entropy_fusion_impl:
    -- Literal['native', 'te'] = 'native'"), fused_cross_entropy.py.
    { "mcore_loss", true, "Megatron-Core's vocab-parallel cross-entropy (cross_entropy_fusion_impl 'native')" },
    -- '--transformer-impl', default='transformer_engine': TE's
    -- DotProductAttention, cuDNN fused attention on sm90.
    { "flash", true, "--transformer-impl transformer_engine (the default): TE fused attention" },
    { "dropout", true, "--hidden-dropout / --attention-dropout default 0.1" },
    { "recompute", "none", "--recompute-granularity default None" },
    { "overlap_grad_reduce", true, "--overlap-grad-reduce" },
    { "overlap_param_gather", true, "--overlap-param-gather (distributed optimizer)" },
    { "tp_overlap", true, "--tp-comm-overlap (needs sequence parallelism)", tp2 },
    { "overlap_p2p", true, "pipeline communication overlapped (enabled by default)",
      function(o) return (o.pp or 1) > 1 and (o.vpp or 1) > 1 end },
    -- arguments.py: "accumulate and all-reduce gradients in fp32 for
    -- bfloat16 data type".
    { "grad_reduce", "fp32", "bf16: gradients accumulated and reduced in fp32",
      function(o) return o.precision == "bf16" end },
    -- model_parallel_config.py "cross_entropy_loss_fusion: bool = False",
    -- '--cross-entropy-loss-fusion' store_true: the runs name no such flag.
    { "unfused_loss", true, "cross_entropy_loss_fusion off (its default)" },
    -- The TFLOP/s Megatron-LM logs (training.py num_floating_point_operations)
    -- count the experts' MLPs, the shared experts and the logits but no
    -- router: "(moe_ffn_hidden_size * num_experts_routed_to +
    -- shared_expert_ffn_hidden_size) * gated_linear_multiplier", at
    -- core_r0.8.0 and at 23a1dca (2025-11) alike; Megatron-Bridge's
    -- flop_utils.py the same.  Said for every Megatron profile below.
    { "no_router_flops", true, ROUTERLESS, moe },
  },
  -- Megatron-LM's examples/moe_recipes (2026): each YAML's ARGS are
  -- pretrain_gpt.py's arguments, with the README's median model TFLOP/s
  -- from megatron/training/training.py's num_floating_point_operations.
  ["megatron-moe-recipes"] = {
    { "stack", "megatron", "transformer_impl: transformer_engine" },
    -- The loss is Megatron-Core's (gp.train's mcore_loss): op by op
    -- under unfused_loss, else cross_entropy_fusion_impl's default
    -- 'native' (model_parallel_config.py "cross_entropy_fusion_impl:
    -- Literal['native', 'te'] = 'native'"), fused_cross_entropy.py.
    { "mcore_loss", true, "Megatron-Core's vocab-parallel cross-entropy (cross_entropy_fusion_impl 'native')" },
    { "flash", true, "TE fused attention (NVTE_FUSED_ATTN: '1')" },
    { "zero", 1, "use_distributed_optimizer: true" },
    { "sp", true, "sequence_parallel: true", tp2 },
    { "dropout", false, "attention_dropout: 0.0, hidden_dropout: 0.0" },
    { "recompute", "none", "no recompute arguments" },
    -- arguments.py: "accumulate and all-reduce gradients in fp32 for
    -- bfloat16 data type" (main_grads_dtype fp32, no --grad-reduce-in-bf16).
    { "grad_reduce", "fp32", "bf16: gradients reduced in fp32 (arguments.py)" },
    -- training.py: "/ 2  # causal mask (only half of the mask is non-zero)".
    { "causal_flops", true, "num_floating_point_operations: causal attention at half" },
    { "no_router_flops", true, ROUTERLESS, moe },
    -- Each YAML's ENV at commit 7146484607: CUDA_DEVICE_MAX_CONNECTIONS
    -- '32' in those with overlap_moe_expert_parallel_comm (qwen3_235b/h100
    -- bf16_256GPU_TP2PP8EP32.yaml and the Blackwell ones), '1' in those
    -- without (qwen3_30b/h100/bf16_32GPU_TP1PP1EP8.yaml,
    -- deepseek_v3/h100/bf16_1024GPU_TP1PP16EP64.yaml).
    { "cuda_device_max_connections", function(o) return o.ep_overlap and 32 or 1 end,
      "the recipe YAML's ENV: '32' with EP overlap, '1' without" },
  },
  -- The Megatron-Core MoE team's Megatron-MoE-ModelZoo (May 2025): its
  -- sbatch_benchmarking.sh runs pretrain_gpt.py with the model's
  -- model_configs/benchmarking/*.yaml MODEL_ARGS (Qwen3-235B-A22B.yaml at
  -- commit 8017e11, the commit of its H100 table) and the run line's
  -- flags.
  ["megatron-moe-modelzoo"] = {
    { "stack", "megatron", "--transformer-impl transformer_engine" },
    -- The loss is Megatron-Core's (gp.train's mcore_loss; see megatron-core).
    { "mcore_loss", true, "Megatron-Core's vocab-parallel cross-entropy (cross_entropy_fusion_impl 'native')" },
    { "flash", true, "--use-flash-attn with TE: fused attention" },
    { "dropout", false, "--attention-dropout 0.0 --hidden-dropout 0.0" },
    { "zero", 1, "--use-distributed-optimizer" },
    { "overlap_grad_reduce", true, "--overlap-grad-reduce" },
    { "overlap_param_gather", true, "--overlap-param-gather" },
    { "sp", true, "--sequence-parallel", tp2 },
    -- No --tp-comm-overlap in the yaml: Megatron-LM's default is off.
    { "tp_overlap", false, "no --tp-comm-overlap", tp2 },
    { "overlap_p2p", true, "pipeline communication overlapped (enabled by default)",
      function(o) return (o.pp or 1) > 1 and (o.vpp or 1) > 1 end },
    -- arguments.py: "accumulate and all-reduce gradients in fp32 for
    -- bfloat16 data type".
    { "grad_reduce", "fp32", "bf16: gradients accumulated and reduced in fp32",
      function(o) return o.precision == "bf16" end },
    -- No --cross-entropy-loss-fusion in the yaml of that commit.
    { "unfused_loss", true, "no --cross-entropy-loss-fusion" },
    { "recompute", "none", "no --recompute-granularity on the run line" },
    -- model_configs/benchmarking/Qwen3-235B-A22B.yaml at 8017e11: "ENV_VARS:
    -- CUDA_DEVICE_MAX_CONNECTIONS: 1" (its "# CUDA_DEVICE_MAX_CONNECTIONS:
    -- 32" under "# !Used for 1F1B overlap" commented out), exported by
    -- sbatch_benchmarking.sh for every run line, the 1F1B one included.
    { "cuda_device_max_connections", 1, "the yaml's ENV_VARS: CUDA_DEVICE_MAX_CONNECTIONS: 1" },
    -- The tables' and scripts' TFLOPS are Megatron-LM's logged model
    -- TFLOP/s (--log-throughput, training.py num_floating_point_operations),
    -- which has counted causal attention at half since Megatron-LM commit
    -- 8873b55d6a (2025-03-06, "Only half of the attention matrix is
    -- non-zero and needs to be multiplied with V"), before the ModelZoo's
    -- first table (May 2025). It changes only the model-FLOP count a
    -- TFLOP/s or MFU metric reads, not the priced step.
    { "causal_flops", true, "num_floating_point_operations: causal attention at half "
      .. "(Megatron-LM since 2025-03-06)" },
    { "no_router_flops", true, ROUTERLESS, moe },
  },
  -- Megatron-DeepSpeed as BLOOM-176B ran it (tr11-176B-ml.slurm).
  ["megatron-deepspeed"] = {
    { "stack", "deepspeed", "Megatron-DeepSpeed (BF16_Optimizer)" },
    { "kernels", "fused", "Megatron's fused modules (fused layer norm, scale-mask-softmax, bias-gelu)" },
    { "flash", false, "fused softmax kernels, pre-FlashAttention" },
    { "dropout", false, "BLOOM: hidden/attention dropout 0.0" },
    { "partition", "type:transformer|embedding", "tr11 --pp-partition-method" },
    -- Megatron-DeepSpeed builds Megatron's own fused modules whatever the
    -- checkpoint's names: ParallelAttention's one query_key_value
    -- ColumnParallelLinear and ParallelMLP's dense_h_to_4h, "if
    -- config.gated_linear_unit: ffn_hidden_size *= 2" (megatron/model/
    -- transformer.py), so a Llama-named model does not run split projections.
    { "split_proj", false, "Megatron's fused query_key_value and dense_h_to_4h" },
    -- Its rebased code (the DeepSpeed4Science long-sequence runs, commit
    -- cc3a94c6) has Megatron's sequence parallelism, whose column-parallel
    -- linear launches the reduce-scatter of its input gradient and then
    -- its weight-gradient GEMM beside it, whatever
    -- --no-async-tensor-model-parallel-allreduce says (that flag is forced
    -- off under SP: arguments.py "if args.sequence_parallel:
    -- args.async_tensor_model_parallel_allreduce = False"):
    -- LinearWithGradAccumulationAndAsyncCommunication.backward, "if
    -- ctx.sequence_parallel: ... handle = torch.distributed.
    -- _reduce_scatter_base(sub_grad_input, grad_input, ..., async_op=True)
    -- # Here we rely on CUDA_DEVICE_MAX_CONNECTIONS=1 to ensure that the
    -- reduce scatter is scheduled before the weight gradient computation"
    -- (megatron/core/tensor_parallel/layers.py).  The BLOOM-era code had
    -- no SP.
    { "async_tp_allreduce", true, "SP: the column-parallel linears' input-gradient "
      .. "reduce-scatter under their weight-gradient GEMM (layers.py async_op=True)",
      function(o) return o.sp == true and tp2(o) end },
  },
  -- NeMo 24.07 (NeMo-Framework-Launcher 24.07 training / peft yamls).
  nemo = {
    { "stack", "megatron", "Megatron-Core" },
    -- The loss is Megatron-Core's (gp.train's mcore_loss; see megatron-core).
    { "mcore_loss", true, "Megatron-Core's vocab-parallel cross-entropy (cross_entropy_fusion_impl 'native')" },
    { "vpp", sft_set("vpp"), SFT },
    { "overlap_p2p", function(o, m) return nemo_sft(o, m) and true or nil end, SFT,
      function(o) return (o.pp or 1) > 1 end },
    { "sp", sft_set("sp"), SFT },
    { "tp_overlap", sft_set("sp"), SFT },
    -- conf/peft/llama/sft.yaml (24.07): optim distributed_fused_adam,
    -- "grad_sync_dtype: bf16".
    { "grad_reduce", "bf16", "peft/llama/sft.yaml grad_sync_dtype: bf16",
      function(o) return o.method == "full" end },
    -- ROCm's TransformerEngine runs its fused attention on CK or AOTriton
    -- (AMD's MLPerf LoRA configs: "NVTE_FUSED_ATTN_CK=1").
    { "flash", true, "TE fused attention (cuDNN on NVIDIA, CK on ROCm)" },
    { "zero", 1, "distributed_fused_adam", function(o) return not lora(o) end },
    -- apex's DistributedFusedAdam writes the bf16 weights' shard in its
    -- Adam kernel (multi_tensor_fused_adam, "with param copy"): no copy of
    -- the master after it (engine/train_prep.c opt_bytes_of).
    { "master_copy", false, "distributed_fused_adam: Adam writes the bf16 weights",
      function(o) return not lora(o) end },
    { "sp", true, "sequence_parallel: true", function(o) return pretrain(o) and tp2(o) end },
    { "tp_overlap", true, "llama yamls: ub_tp_comm_overlap: true",
      function(o, m) return pretrain(o) and tp2(o) and m.ffn_gated end },
    -- The GPT-3 yamls of the same launcher (conf/training/gpt3, 24.07) set
    -- ub_tp_comm_overlap and grad_sync_dtype per model (20b.yaml
    -- "ub_tp_comm_overlap: True", 175b_fp8.yaml "grad_sync_dtype: bf16",
    -- 5b/20b.yaml none), and the launcher's H100 scripts override
    -- grad_sync_dtype to bf16 for 5B and 20B too: each GPT case states
    -- them (parallel.tp_overlap, parallel.grad_reduce), quoting its yaml
    -- or script.  The Llama rules here (tp_overlap above, grad_reduce
    -- below) take a gated FFN for "a Llama script": a shape gate, true of
    -- every NeMo 24.07 pretraining case that states neither field.
    -- Every Llama pretraining script of the launcher's performance
    -- examples (24.07 examples/training/llama/h100/llama{2_7b,2_13b,2_70b,
    -- 3_8b,3_70b}_{bf16,fp8}.sh) passes
    -- "+training.model.optim.grad_sync_dtype=bf16": apex's
    -- DistributedFusedAdam then reduce-scatters in bf16 and its
    -- contiguous grad buffer, the main grad the wgrad GEMMs accumulate
    -- into, is bf16 (NeMo r2.0.0 MegatronDistributedFusedAdam.zero_grad:
    -- "param.main_grad = self.grad_buffer_view(param)").
    { "grad_reduce", "bf16", "launcher llama pretraining scripts: optim.grad_sync_dtype=bf16",
      function(o, m) return pretrain(o) and m.ffn_gated end },
    -- NeMo 2.0's scripts/performance (NeMo r2.3.0 at 7a8f1cc, which the
    -- dgxc 25.05 cases run; their Grok-1 rows at 6f2c6fd) decide the
    -- reduction per recipe, so each of those cases states its
    -- grad_reduce.  Every Megatron pretrain_*.py there but two builds
    -- "pretrain_recipe(performance_mode=True)", whose
    -- pretrain_performance_optimizations sets
    -- "recipe.trainer.plugins.grad_reduce_in_fp32 = False" (the Llama
    -- 3/3.1/4, Mixtral, Nemotron and GPT-3 175B recipes;
    -- pretrain_grok1_314b.py its own): bf16, as here.  The two,
    -- pretrain_deepseek_v3.py and pretrain_nemotronh_56b.py (no case),
    -- call "pretrain_recipe()", and set_primary_perf_configs sets
    -- "grad_reduce_in_fp32 = False" only under compute_dtype fp8, so
    -- DeepSeek-V3's bf16 run keeps recipes/deepseek.py trainer()'s DDP
    -- "grad_reduce_in_fp32=True" and bf16_mixed()'s
    -- "grad_reduce_in_fp32=True": fp32.  (The plugin's value wins:
    -- MegatronStrategy applies the precision plugin's dtype_config to
    -- its ddp_config, update_config_with_dtype_overrides.)
    -- LoRA (examples/peft/llama/h100/*_lora.sh: "optim.name=fused_adam",
    -- the distributed keys removed): megatron_amp_O2 wraps fused_adam in
    -- MainParamsOptimizerWrapper with fp32 main grads (NeMo r2.0.0
    -- megatron_base_model.py configure_optimizers: bf16 ->
    -- "fp32_grad_accum = True").
    { "grad_reduce", "fp32", "fused_adam under megatron_amp_O2: fp32 main grads", gated },
    { "dropout", true, "gpt3 yamls: hidden_dropout 0.1, attention_dropout 0.1", gpt },
    -- The loss: Megatron-Core's LanguageModule.compute_language_model_loss
    -- fuses it only "if self.config.cross_entropy_loss_fusion", a field
    -- whose default is False (model_parallel_config.py
    -- "cross_entropy_loss_fusion: bool = False", both at core_r0.8.0 and
    -- at 338af51, the Megatron-LM commit NeMo r2.0.0rc1's Dockerfile.ci
    -- pins).  NeMo r2.0.0rc1 never names the field (it copies
    -- TransformerConfig's fields from the model config,
    -- megatron_base_model.py build_transformer_config) and neither do
    -- the launcher's 24.07 training and peft yamls: every NeMo 24.07 row
    -- runs tensor_parallel.vocab_parallel_cross_entropy op by op.
    { "unfused_loss", true, "cross_entropy_loss_fusion off (Megatron-Core's default)" },
    { "recompute", "none", "activations_checkpoint_granularity: null" },
    { "lora_rank", 32, "peft adapter_dim 32", lora },
    { "lora_targets", "q,k,v", "peft target_modules [attention_qkv]", lora },
    { "lora_dropout", 0, "no adapter dropout", lora },
  },
  -- Megatron-Bridge 25.11 (scripts/performance configs).
  ["megatron-bridge"] = {
    { "stack", "megatron", "Megatron-Core" },
    -- No mcore_loss: the performance scripts set cross_entropy_fusion_impl
    -- "te" (_set_common_perf_overrides / _benchmark_common), Transformer
    -- Engine's one-kernel parallel cross-entropy, the fused loss priced.
    { "flash", true, "TE fused attention (cuDNN)" },
    { "zero", 1, "use_distributed_optimizer" },
    { "sp", true, "sequence parallel with TP", tp2 },
    { "tp_overlap", true, "comm_overlap: TP >= 2 with SP", tp2 },
    -- scripts/performance sets it whatever the precision: at 25.09
    -- (fa0315a) each model's yaml "mixed_precision: grad_reduce_in_fp32:
    -- false" (MixedPrecisionConfig.setup copies it into the DDP config,
    -- update_config_with_precision_overrides); from 25.11 (00b7660)
    -- through 26.06 (c270efc50) each family's set_*_common_configs
    -- "cfg.mixed_precision.grad_reduce_in_fp32 = False" and
    -- "cfg.ddp.grad_reduce_in_fp32 = False", after "cfg.mixed_precision
    -- = precision_config"; the perf_recipes package's _benchmark_common
    -- the same.  A run of the library's own recipes keeps their
    -- "grad_reduce_in_fp32=True" (such a case states fp32).
    { "grad_reduce", "bf16", "ddp.grad_reduce_in_fp32 = False" },
    { "causal_flops", true, "flop_utils: causal attention at half" },
    { "no_router_flops", true, "flop_utils: no router term", moe },
    -- scripts/performance/utils/overrides.py (c0b9a00)
    -- _set_common_perf_overrides: "if recipe.model.moe_flex_dispatcher_backend
    -- == \"hybridep\": recipe.model.moe_hybridep_num_sms = 32".
    { "moe_flex_sms", function(o) return o.moe_flex_backend == "hybridep" and 32 or nil end,
      "overrides.py: moe_hybridep_num_sms = 32 for hybridep" },
    -- scripts/performance/perf_plugins.py (c0b9a00)
    -- _set_num_cuda_device_max_connections: 8, 32 with the deepep or
    -- hybridep flex backend, 32 on Blackwell ("We need extra connections
    -- to avoid serialization of streams"), and on Hopper 1 "if (tp_size >
    -- 1 or cp_size > 1) and not moe_a2a_overlap".
    { "cuda_device_max_connections", function(o)
        if blackwell(o) or o.moe_dispatcher == "flex" then return 32 end
        if ((o.tp or 1) > 1 or (o.cp or 1) > 1) and not o.ep_overlap then return 1 end
        return 8
      end, "perf_plugins.py: 32 on Blackwell or with DeepEP/HybridEP, 1 at TP or CP > 1 "
        .. "without EP overlap on Hopper, else 8" },
    -- DeepSeek-V3 and Kimi-K2 (the MLA models) run the selective
    -- granularity with the recompute_modules list below: scripts/
    -- performance/configs/deepseek/deepseek_llm_pretrain.py
    -- set_deepseek_v3_common_configs "cfg.model.recompute_granularity =
    -- \"selective\"" at 00b7660 (25.11), 1fd34b18c, c0b9a0003 (26.02) and
    -- 21d102f (26.04.01); kimi_llm_pretrain.py set_kimi_k2_common_configs
    -- the same from c0b9a0003; and overrides.py _set_recompute_overrides
    -- sets it with any preset list from c0b9a0003 ("recipe.model.
    -- recompute_modules = recompute_modules" then "recipe.model.
    -- recompute_granularity = \"selective\"").  Megatron-Core reads the
    -- list only under that granularity (transformer_layer.py "if
    -- self.config.recompute_granularity == 'selective':",
    -- multi_latent_attention.py "recompute_granularity == 'selective' and
    -- \"mla_up_proj\" in self.config.recompute_modules"), so the list
    -- goes with selective, not with the none the dense presets run.
    { "recompute", "selective", "set_deepseek_v3_common_configs: recompute_granularity "
        .. "= \"selective\"", function(_, m) return m.mla end },
    { "recompute", "none", "no recompute in the perf configs", gated },
    -- scripts/performance/utils/executors.py (since #403, 2025-08-28)
    -- slurm_executor: "numactl --cpunodebind=$((SLURM_LOCALID/
    -- {numa_divisor})) --membind=$((SLURM_LOCALID/{numa_divisor}))" before
    -- every rank, numa_divisor 2 on gb200 (two GPUs a Grace) -- on gb300
    -- too only from 487bbaa8f ("gb300 numa enabled", 2025-12-19, first in
    -- v0.3.0), 4 before, which put a GB300 tray's four ranks on the first
    -- Grace (the 25.11 GB300 cases state false).  Said where it is priced
    -- (case.numa_host: a catalog host_op_scale_bound).
    { "numa_bind", true, "scripts/performance executors.py: numactl --cpunodebind --membind "
        .. "to the GPU's Grace", function(o) return case_.numa_host(o) end },
    -- DeepSeek-V3 (an MLA model): scripts/performance/configs/deepseek/
    -- deepseek_workload_base_configs.py recompute_modules ["mla_up_proj"]
    -- (GB200 and B200; ["mla_up_proj", "mlp"] on H100 and GB200 MXFP8, the
    -- "mlp" of the 3 dense layers left out here).
    { "recompute_modules", { "mla_up_proj" }, "deepseek_workload_base_configs.py",
      function(_, m) return m.mla end },
    -- DeepSeek-V3 trains its multi-token prediction module: the recipe
    -- the performance scripts build on (src/megatron/bridge/recipes/
    -- deepseek/deepseek_v3.py) defaults "mtp_num_layers: Optional[int] =
    -- 1" at 00b7660 (25.11) and 1fd34b18c, and sets
    -- "cfg.model.mtp_num_layers = 1  # Set to 0 or None to disable MTP"
    -- from c0b9a0003 (26.02) through 21d102f (26.04.01); no
    -- scripts/performance file names mtp_num_layers at those commits.
    -- Its pipeline layouts put it on the last stage: "[\"decoder\"] +
    -- last_layer" with "last_layer = [\"mtp\"] * mtp_layers +
    -- [\"loss\"]", that stage holding fewer decoder layers (a case
    -- states them: parallel.first_stage_layers, last_stage_layers, or
    -- every stage's, parallel.stage_layers).
    -- Under interleaving only where the case states the layout's rank
    -- totals: the layouts (8, 2) and (4, 4) give the MTP's rank three
    -- fewer decoder layers than the others (5 of 8, 13 of 16; chunk i on
    -- rank i mod pp), "Et*4|(t*4|)*14tmL" at PP 2 VP 8 29 of 32, and
    -- the even split would put the module on a rank carrying two or
    -- three decoder layers too many.
    -- A model of DeepSeek-V3's architecture (case.architecture_mtp: the
    -- catalog model of the same shape has the module), not its name.
    { "mtp_layers", 1, "deepseek_v3.py: mtp_num_layers = 1",
      function(o, m) return pretrain(o) and m.mla and m.moe ~= nil
        and ((o.vpp or 1) <= 1 or (o.last_stage_layers or 0) > 0 or o.stage_layers ~= nil)
        and case_.architecture_mtp(m) ~= nil end },
  },
  -- llm-foundry's throughput tables (scripts/train/benchmarking).
  ["llm-foundry"] = {
    { "stack", "hf", "PyTorch FSDP (Composer)" },
    { "flash", true, "attn_impl: triton" },
    { "attn_kernel", "triton", "attn_impl: triton (FlashAttention in Triton)" },
    { "grad_reduce", "fp32", "FSDP mixed precision DEFAULT: fp32 reduce" },
    -- llmfoundry/models/mpt/modeling_mpt.py and layers/: LPLayerNorm is one
    -- F.layer_norm kernel, the MLP's GELU one, ALiBi rides inside the Triton
    -- attention kernel -- one kernel per operator, not the Llama modules'
    -- chains (the optimizer stays torch ops: Composer's DecoupledAdamW).
    { "kernels", "fused", "MPT modules: LPLayerNorm, GELU, ALiBi in the attention kernel" },
    -- Activation checkpointing is PyTorch's non-reentrant checkpoint: the
    -- pretrain yamls set "activation_checkpointing_reentrant: false"
    -- (scripts/train/yamls/pretrain/mpt-*.yaml, which submit_benchmarks.py
    -- loads), and Composer v0.16.4 (setup.py: mosaicml>=0.16.4,<0.17) then
    -- wraps each MPTBlock (modeling_mpt.py activation_checkpointing_fn:
    -- "return isinstance(module, MPTBlock)") with "checkpoint_wrapper(m,
    -- checkpoint_impl=CheckpointImpl.NO_REENTRANT)" (composer/trainer/
    -- dist_strategy.py).  The tables ran on PyTorch 2.1: sweep.sh of
    -- b2a43a147 sets IMAGE="mosaicml/pytorch:2.1.0_cu121-python3.10-
    -- ubuntu20.04", and 5e85bd62d's setup.py pins 'torch>=2.1,<2.1.1' --
    -- the release whose non-reentrant checkpoint stops early
    -- (engine/train_layer.c early_stop_tail).
    { "ckpt_early_stop", true, "Composer's CheckpointImpl.NO_REENTRANT on PyTorch 2.1 "
      .. "(activation_checkpointing_reentrant: false)",
      function(o) return o.recompute == "full" end },
    -- Composer's train metrics: after each micro-batch's backward
    -- (composer/trainer/trainer.py at v0.16.3, v0.16.4 and v0.17.2, the
    -- releases the rows' setup.py pins admit, _train_microbatch: "# Use
    -- microbatch outputs to update training metrics" -> _eval_train_metrics)
    -- every train metric takes the kept logits; MPT's are two
    -- (llmfoundry/models/mpt/modeling_mpt.py at b2a43a147 and 5e85bd62d:
    -- "use_train_metrics = om_model_config.get('use_train_metrics', True)",
    -- "train_metrics = [LanguageCrossEntropy(), LanguagePerplexity()]"), and
    -- submit_benchmarks.py does not turn them off.  Each update is a
    -- torch.nn.CrossEntropyLoss(reduction='sum') over T x 50368 logits
    -- (composer/metrics/nlp.py), priced in engine/train_layer.c.
    { "metric_losses", 2, "Composer's train metrics: MPT's LanguageCrossEntropy and "
      .. "LanguagePerplexity after each micro-batch (use_train_metrics: true)" },
  },
  -- The Hugging Face Trainer with a DeepSpeed ZeRO config (LLaVA's
  -- scripts/zero3.json): the DeepSpeed engine owns the optimizer (20
  -- B/param in bf16).  overlap_comm is DeepSpeed's own default at stage 3
  -- only (deepspeed/runtime/zero/config.py overlap_comm_valid:
  -- "self.overlap_comm = self.stage == ZeroStageEnum.weights"): a stage
  -- 1/2 run that does not state it reduces after each bucket fills,
  -- under nothing.
  --
  -- Stage 3 (v0.11-0.16, the published runs) issues its collectives from
  -- Python module hooks: partitioned_param_coordinator.py fetch_sub_module
  -- gathers the parameters a submodule needs, prefetches only up to
  -- stage3_prefetch_bucket_size elements beyond them (one weight ahead at
  -- Hugging Face's "auto" 0.9 h^2 and at DeepSpeed's 5e7 for these
  -- models' 17M-235M-element weights), makes the compute stream wait on the
  -- gather stream at every submodule, and holds the host once more than
  -- two fetches (__max_ongoing_fetch_events = 2) or two gradient
  -- reductions (stage3.py max_param_reduce_events = 2) are in flight; each
  -- gradient's reduce-scatter waits on the compute stream
  -- (reduce_and_partition_stream.wait_stream(default_stream())).  DeepSpeed's
  -- authors describe what this leaves: "operations such as all-gather,
  -- reduce-scatter, and buffer release are typically inserted using Python
  -- hooks at runtime" (DeepCompile, blogs/deepcompile), whose prefetch
  -- timing "these systems lack the flexibility to control ..., which
  -- limits the benefits of prefetching" (Tanaka et al. 2025,
  -- arXiv:2504.09983), and "the idle time between layers was caused by the
  -- overhead associated with handling hooks that launch
  -- allgather/reduce_scatter" (DeepSpeed issue #5047).  Their own benchmark
  -- (DeepSpeedExamples benchmarks/deepcompile: Llama-3-70B on 32 H100s,
  -- micro-batch 1-4, 512-2048 tokens) measures a step of its computation
  -- plus its gathers and reduce-scatters: +2% to +21% priced that way,
  -- +24% to +60% with the traffic hidden under compute; the 0.14.2
  -- LLaMA-7B rows add the same 0.2-0.27 s a micro-batch at micro-batch 2
  -- and 8 -- one micro-batch's traffic, not the host's per-module work,
  -- which would hide behind eight samples.  So ZeRO-3's traffic is priced
  -- on the path, as gp.train's own deepspeed stack default has it; which
  -- of the hooks' waits leaves it there is not pinned down.  The hooks'
  -- own host work on the forward (3 or 10 host ops a module) is the
  -- engine's, under stack deepspeed with the eager modules at zero 3
  -- (engine/train_layer.c ds_hook_ops).
  deepspeed = {
    { "stack", "deepspeed", "DeepSpeed ZeRO engine" },
    { "kernels", "eager", "the Hugging Face modules' unfused operators" },
    { "overlap_param_gather", false, "DeepSpeed stage 3: hook-issued gathers, none hidden in its published runs",
      function(o) return (o.zero or 0) >= 3 end },
    { "overlap_grad_reduce", false,
      "DeepSpeed stage 3: hook-issued reduce-scatters, none hidden in its published runs",
      function(o) return (o.zero or 0) >= 3 end },
    { "overlap_grad_reduce", false, "overlap_comm off: DeepSpeed's default below stage 3",
      function(o) return (o.zero or 0) >= 1 end },
  },
  -- PyTorch FSDP through Hugging Face Accelerate (distributed_type FSDP) on
  -- the Hugging Face modules: torch.optim over the sharded fp32 parameters,
  -- and Accelerate's FSDP plugin turns "mixed_precision: bf16" into
  -- "MixedPrecision(param_dtype=dtype, reduce_dtype=dtype,
  -- buffer_dtype=dtype)" -- bf16 gathers and bf16 reduce-scatters.  The
  -- forward's gathers run under the forward: FullyShardedDataParallel
  -- (FSDP1, Accelerate's default) issues each unit's all-gather on its
  -- own stream from the unit's pre-forward hook, and the host reaches it
  -- while the previous unit's kernels still run (the rate limiter,
  -- limit_all_gathers, lets two be in flight) -- unless the layer's
  -- forward waits for the GPU on the host, as the Hugging Face MoE loop
  -- does (the engine's train_stage.c fsdp_fwd_window).  The backward's
  -- gathers and reduce-scatters are priced on the path as DeepSpeed
  -- ZeRO-3's are (the deepspeed profile below): DeepCompile's authors
  -- put both in one class -- "fully
  -- sharded approaches like DeepSpeed ZeRO-3 and FSDP ... rely on
  -- optimizations such as prefetching ... these systems lack the
  -- flexibility to control it, which limits the benefits of prefetching"
  -- (arXiv:2504.09983) -- and their benchmark measures this FSDP within 5%
  -- of ZeRO-3 at every point (Llama-3-70B, 32 H100s), as the Hugging Face
  -- blog "From DeepSpeed to FSDP and Back Again" does on 4 A100s (3158.7
  -- against 3094.5 tokens/s a GPU).  FSDP2 under torch.compile
  -- (torchtitan, NeMo AutoModel) keeps the hf stack's overlap.
  ["accelerate-fsdp"] = {
    { "stack", "hf", "PyTorch FSDP through Hugging Face Accelerate" },
    { "kernels", "eager", "the Hugging Face modules' unfused operators" },
    { "grad_reduce", "bf16", "Accelerate's FSDP MixedPrecision: reduce_dtype bf16" },
    { "overlap_param_gather", true, "FSDP's forward gathers: issued from each unit's pre-forward hook "
      .. "while the previous unit's kernels run" },
    { "overlap_grad_reduce", false, "Accelerate's FSDP: the backward's gathers and reduce-scatters on "
      .. "the path, as DeepSpeed ZeRO-3's" },
    -- transformers' gradient_checkpointing_enable (before v4.52's
    -- GradientCheckpointingLayer, PR #37223 of April 2025) checkpoints
    -- each decoder layer from the model's loop,
    -- "self._gradient_checkpointing_func(decoder_layer.__call__, ...)",
    -- and Accelerate's TRANSFORMER_BASED_WRAP makes that layer the FSDP
    -- unit: checkpoint(FSDP(layer)).
    { "ckpt_outside_fsdp", true, "transformers' checkpoint around each FSDP-wrapped layer "
      .. "(before v4.52's GradientCheckpointingLayer)",
      function(o) return o.recompute == "full" end },
  },
  -- torchtune (pytorch/torchtune, the README tables' commits 0031bfb and
  -- 1814feb17): its own PyTorch modules in plain bf16.  Every config sets
  -- "dtype: bf16" and the recipes build the model under it
  -- (recipes/full_finetune_single_device.py and lora_finetune_single_
  -- device.py: "self._dtype = training.get_dtype(cfg.dtype, ...)", "with
  -- training.set_default_dtype(self._dtype), self._device: model =
  -- config.instantiate(cfg_model)"): bf16 parameters and gradients, no
  -- fp32 master copy, and an optimizer whose states take the
  -- parameters' dtype (torch.optim.AdamW's zeros_like(p)): the bf16
  -- recipe's state bytes, which the optimizer step reads and writes.
  -- Compile is the config's "compile: False" unless the run says so:
  -- the case states its kernels.  The recipe follows the case's dtype
  -- (case_.torchtune_recipe: fp32 where it states fp32; fp16 refused in
  -- predict below, as the recipes refuse it).
  torchtune = {
    { "stack", "hf", "torchtune recipes: its own PyTorch modules, torch optimizers" },
    { "recipe", case_.torchtune_recipe,
      "dtype: the case's (bf16 or fp32 parameters and optimizer states, no fp32 master)" },
    -- The distributed recipes shard with training.shard_model, which
    -- calls fully_shard (pytorch/torchtune@0696355d torchtune/training/
    -- _distributed.py: "from torch.distributed._composable.fsdp import
    -- CPUOffloadPolicy, fully_shard"): FSDP2, where the hf stack's
    -- default is Accelerate's FSDP1.
    { "fsdp_version", 2, "training.shard_model: fully_shard (FSDP2)",
      function(o) return o.fsdp ~= nil or (o.zero or 0) >= 2 end },
    -- The README's "Memory and training speed" rows are each card's
    -- fastest run that fits (its maintainers "capture lowest memory
    -- utilization AND peak tokens/sec", pytorch/torchtune issue #925),
    -- checkpointing only where the run does not fit without it, as the
    -- memory predictor's torchtune profile reads them: gp.train's
    -- recompute = "auto" where the case states none.
    { "recompute", "auto", "README rows: fastest run that fits the card" },
    -- Every LoRA config of those commits: "lora_dropout: 0.0".
    { "lora_dropout", 0, "lora_dropout: 0.0", lora },
    -- enable_activation_offloading runs training.OffloadActivations()
    -- with its defaults (torchtune/training/_activation_offloading.py:
    -- "use_streams (bool): Whether or not to use streams for performance
    -- optimization where the communications get overlapped with the
    -- computation. ... Default: True"), beside activation checkpointing
    -- (the recipes refuse it without: "enable_activation_offloading is
    -- True and enable_activation_checkpointing is False"), so the
    -- offloaded tensors are the checkpoints.
    { "checkpoint_offload_streams", true, "OffloadActivations: use_streams=True, copies on a side stream",
      function(o) return o.checkpoint_offload == true end },
    -- The single-device full fine-tune configs' optimizer is
    -- bitsandbytes.optim.PagedAdamW8bit (8B_full_single_device.yaml at
    -- 0031bfb), whose states live in CUDA managed memory (functional.py
    -- get_paged: cudaMallocManaged), as the memory predictor's profile
    -- reads them: where they do not fit beside the rest, gp.train prices
    -- their paging over the host link each step (engine/train.c
    -- paged_state_time).  A case that states torchao's AdamW8bit says
    -- paged_optimizer false.
    { "paged_optimizer", true, "PagedAdamW8bit states in CUDA managed memory",
      function(o) return o.method == "full" and o.optimizer == "adam8bit" end },
    -- The full fine-tune configs' "optimizer_in_bwd: True": each
    -- parameter steps in its gradient hook and its gradient is freed
    -- there, one gradient at a time in memory (the memory predictor's
    -- profile takes the same) -- what the step keeps beside the paged
    -- states, and what recompute = "auto" fits.
    { "grads_in_bwd", true, "optimizer_in_bwd: True", function(o) return o.method == "full" end },
  },
  -- torchtitan (pytorch/torchtitan, mid-2025: models/attention.py,
  -- config_manager.py): FSDP2 over PyTorch modules compiled whole.
  torchtitan = {
    { "stack", "hf", "FSDP2 (fully_shard) on PyTorch modules" },
    -- parallelize_llama.py apply_fsdp: "fully_shard(transformer_block,
    -- **fsdp_config, ...)", "fully_shard(model, **fsdp_config, ...)" --
    -- FSDP2, priced as such (engine/memory_train.c fsdp2_fp32_shard and
    -- the ends the root keeps gathered; engine/train_stage.c fsdp_copies).
    { "fsdp_version", 2, "parallelize_llama.py: fully_shard (FSDP2, per-parameter DTensor shards)",
      function(o) return o.fsdp ~= nil or (o.zero or 0) >= 2 end },
    -- parallelize_llama.py (9dec370, e7c0cae) wraps each block, then
    -- "fully_shard(model, **fsdp_config, reshard_after_forward=not
    -- pp_enabled)": the root unit holds the embedding, norm and output, and
    -- torch before 2.8 keeps a root gathered whatever it is given.
    { "fsdp_root_gathered", true, "fully_shard(model): the root (embedding, norm, output) "
      .. "stays gathered to the backward (torch before 2.8)",
      function(o)
        return o.fsdp == "full_shard" or o.fsdp == "hybrid_shard" or (o.fsdp == nil and (o.zero or 0) >= 3)
      end },
    { "kernels", "fused", "torch.compile (the runs' --training.compile)" },
    { "flash", true, "F.scaled_dot_product_attention, causal" },
    -- SDPA under sdpa_kernel(set_priority=True): FLASH_ATTENTION first
    -- (PyTorch's FlashAttention-2), CUDNN_ATTENTION put first on sm100 or
    -- newer (blackwell above).  That is CUDA's build: on ROCm the same
    -- FLASH_ATTENTION backend is AMD's own kernel, not Dao's FA2 --
    -- aten/src/ATen/native/transformers/cuda/sdp_utils.cpp
    -- check_flash_attention_hardware_support: "#if USE_ROCM ... if(at::
    -- globalContext().getROCmFAPreferredBackend() == at::ROCmFABackend::Ck)
    -- { // User explicitly set CK as the flash attention backend" else
    -- "aotriton::v2::flash::check_gpu(stream)" -- so off NVIDIA the profile
    -- names none and the card's own measured fused kernel prices it (the
    -- catalog's CDNA3 entry measures CK's).  That is a stand-in: the
    -- kernel that runs is AOTriton's (CK only under
    -- torch.backends.cuda.preferred_rocm_fa_library), Triton kernels on
    -- gfx942 before AOTriton 0.11b (pytorch PR #161754, 2025-09: "Invoke
    -- AITER Assembly kernels on gfx942/gfx950"), and no published MI300X
    -- rate of them at head dim 128, causal, long sequences was found
    -- (docs/validation.md, the torchao float8 section), so the priced
    -- attention is likely faster than the run's.
    { "attn_kernel", function(o)
        local g = o.cat and o.cat.gpus[o.gpu]
        if g ~= nil and g.vendor ~= nil and g.vendor ~= "NVIDIA" then return nil end
        return blackwell(o) and "cudnn" or "fa2"
      end, "SDPA backends: FlashAttention-2 first, cuDNN first on sm100 or newer" },
    -- Per-op SAC keeps the ops its _save_list names (models/llama3/infra/
    -- parallelize.py at 6fc499f, August 2025: "torch.ops.aten.mm.default,
    -- torch.ops.aten._scaled_dot_product_efficient_attention.default,
    -- torch.ops.aten._scaled_dot_product_flash_attention.default,
    -- torch.ops._c10d_functional.reduce_scatter_tensor.default,
    -- torch.ops.aten.max.default") and recomputes the rest: cuDNN's SDPA
    -- op, the one the wrapper above runs on sm100, is not in it, so the
    -- attention re-runs in the backward, until b39377f9f (2025-12-01, "add
    -- all SDPA backends to op_sac_save_list ... to avoid recomputing
    -- attention during backward").
    { "sac_attn_recompute", true, "op SAC's _save_list: SDPA's flash and efficient ops, not "
      .. "cuDNN's (before b39377f9f)",
      function(o) return o.recompute == "op" and o.attn_kernel == "cudnn" end },
    { "grad_reduce", "fp32", "mixed_precision_reduce: float32 (the default)" },
    -- config_manager.py at 9dec370 (the end-2024 runs'):
    -- "--experimental.context_parallel_rotate_method ... default="allgather""
    { "cp_rotate", "allgather", "context_parallel_rotate_method: allgather (the default)",
      function(o) return (o.cp or 1) > 1 end },
    -- models/llama/model.py (9dec370), models/llama3/model.py (820504e):
    -- "xq, xk, xv = self.wq(x), self.wk(x), self.wv(x)",
    -- "self.w2(F.silu(self.w1(x)) * self.w3(x))"
    { "split_proj", true, "Llama's wq, wk, wv, w1, w3: nn.Linear each" },
    -- models/llama/model.py (9dec370), models/llama3/model.py (820504e):
    -- "keys = repeat_kv(xk, self.n_rep)", "values = repeat_kv(xv,
    -- self.n_rep)" before F.scaled_dot_product_attention (no enable_gqa)
    { "kv_repeat", true, "Llama's repeat_kv: K and V copied to every query head before SDPA",
      function(_, m) return (m.kv_heads or m.heads) < m.heads end },
  },
  -- NeMo AutoModel's benchmark recipes (NVIDIA-NeMo/Automodel
  -- examples/llm_benchmark, at the commit of the row's table): FSDP2 over
  -- its PyTorch modules, "enable_compile: True".
  ["nemo-automodel"] = {
    { "stack", "hf", "FSDP2 (distributed.strategy: fsdp2)" },
    { "kernels", "fused", "distributed.enable_compile: True (torch.compile)" },
    { "flash", true, "attn_implementation: sdpa" },
    -- kernel_patches.py: sdpa_method defaults to "[CUDNN_ATTENTION,
    -- FLASH_ATTENTION, EFFICIENT_ATTENTION, MATH]".
    { "attn_kernel", "cudnn", "SDPA backends: CUDNN_ATTENTION first" },
    -- distributed/config.py: MixedPrecisionPolicy(param_dtype=bfloat16,
    -- reduce_dtype=torch.bfloat16, ...) unless the recipe gives one.
    { "grad_reduce", "bf16", "FSDP2 mp_policy reduce_dtype bfloat16 (the default)" },
  },
  -- fms-fsdp (foundation-model-stack/fms-fsdp at 0d31998, the README
  -- table's commit, and f9e34d1 of 2024-03-13, the PyTorch blog's date;
  -- the model code: foundation-model-stack 006bd7e, 2024-03-11).
  -- main_training.py: "from torch.distributed.fsdp import
  -- FullyShardedDataParallel as FSDP", "model = FSDP(model,
  -- auto_wrap_policy=wrapping_policy, mixed_precision=
  -- mixed_precision_policy, sharding_strategy=sharding_strategy_policy,
  -- use_orig_params=cfg.use_torch_compile, ..., limit_all_gathers=True,
  -- ...)" with "optim.AdamW(model.parameters(), ...)" over its sharded
  -- fp32 flat parameters.  No backward_prefetch is passed: FSDP1's own
  -- default, "backward_prefetch: Optional[BackwardPrefetch] =
  -- BackwardPrefetch.BACKWARD_PRE" (torch/distributed/fsdp/
  -- fully_sharded_data_parallel.py, PyTorch 2.x), issues the next unit's
  -- backward gather before the current unit's gradient kernels, and each
  -- unit's reduce-scatter goes on FSDP's own stream; limit_all_gathers
  -- (the rate limiter) keeps two gathers in flight.  The sharding
  -- strategy is the case's to state (train_utils.py get_policies:
  -- "fsdp" -> "ShardingStrategy.FULL_SHARD", "hsdp" ->
  -- "ShardingStrategy.HYBRID_SHARD").
  ["fms-fsdp"] = {
    { "stack", "hf", "main_training.py: FullyShardedDataParallel over FMS modules, torch.optim AdamW" },
    { "fsdp_version", 1, "main_training.py: torch.distributed.fsdp.FullyShardedDataParallel (FSDP1)",
      function(o) return o.fsdp ~= nil or (o.zero or 0) >= 2 end },
    -- config/training.py "mixed_precision: bool = True"; train_utils.py
    -- get_policies "mixed_precision_policy = bfSixteen", and
    -- policies/mixed_precision.py "bfSixteen = MixedPrecision(
    -- param_dtype=torch.bfloat16, reduce_dtype=torch.bfloat16,
    -- buffer_dtype=torch.bfloat16)": bf16 gathers, bf16 reduce-scatters.
    { "grad_reduce", "bf16", "policies/mixed_precision.py bfSixteen: reduce_dtype=torch.bfloat16" },
    -- Both FSDP1 overlaps, the hf stack's own: forward gathers from each
    -- unit's pre-forward hook under the previous unit's kernels, backward
    -- gathers prefetched (BACKWARD_PRE) and reduce-scatters on FSDP's
    -- stream.  The checkpoint sits inside each FSDP unit (below), so a
    -- recomputed forward gathers nothing of its own.  The blog's
    -- appendix describes the same: "overlapping backward computation
    -- with the next unit gathering and gradient scattering".
    { "overlap_param_gather", true, "FSDP1 forward gathers from each unit's pre-forward hook "
      .. "(limit_all_gathers=True: two in flight)" },
    { "overlap_grad_reduce", true, "FSDP1 default backward_prefetch=BACKWARD_PRE; reduce-scatter "
      .. "on FSDP's stream" },
    -- policies/ac_handler.py apply_fsdp_checkpointing wraps each
    -- LLaMABlock with "checkpoint_wrapper, checkpoint_impl=
    -- CheckpointImpl.NO_REENTRANT" through apply_activation_checkpointing,
    -- which main_training.py calls on the model already wrapped by FSDP:
    -- FSDP(checkpoint(block)), the checkpoint inside the unit -- not
    -- transformers' checkpoint around an FSDP unit.  (Every block at
    -- selective_checkpointing's default 1; a case states recompute.)
    { "ckpt_outside_fsdp", false, "ac_handler.py: checkpoint_wrapper applied inside each "
      .. "FSDP-wrapped LLaMABlock", function(o) return o.recompute == "full" end },
    -- config/training.py "use_torch_compile: bool = False"; docs/
    -- configurations.md: "It is recommended to NOT use compile at this
    -- stage".  FMS's modules unfused: modules/layernorm.py
    -- LayerNormParameterized is "xf * torch.rsqrt(xf.pow(2).mean(-1,
    -- keepdim=True) + self.eps)" op by op, the rotary embedding and the
    -- GLU's "self.a(self.wg(x)) * self.w1(x)" likewise.
    { "kernels", "eager", "use_torch_compile: False (FMS modules op by op)" },
    -- modules/attention.py: "F.scaled_dot_product_attention(queries,
    -- keys_e, values_e, attn_mask=attn_mask, ..., is_causal=
    -- is_causal_mask)" with no mask in training (models/llama.py: "if
    -- mask is None: ... is_causal_mask = True"): SDPA's flash backend,
    -- PyTorch's FlashAttention-2 ("SDPA implementation of Flash attention
    -- v2", the README).
    { "flash", true, "modules/attention.py: F.scaled_dot_product_attention, is_causal" },
    { "attn_kernel", "fa2", "SDPA's flash backend (FlashAttention-2), causal without a mask" },
    -- modules/attention.py "self.query = nn.Linear(", "self.key =
    -- nn.Linear(", "self.value = nn.Linear("; modules/feedforward.py
    -- GatedLinearUnit "self.w1 = nn.Linear(emb_dim, self.hidden_dim",
    -- "self.wg = nn.Linear(emb_dim, self.hidden_dim".
    { "split_proj", true, "FMS modules: query, key, value and w1, wg nn.Linear each" },
    -- modules/attention.py: "keys_e = keys.unsqueeze(2).expand(-1, -1,
    -- expansion, -1, -1).flatten(1, 2)" (and values) "# Expand kv so
    -- black-box attn will work", before SDPA.
    { "kv_repeat", true, "modules/attention.py: K and V expanded to every query head before SDPA",
      function(_, m) return (m.kv_heads or m.heads) < m.heads end },
    -- The MFU the fms-fsdp README and IBM's two PyTorch blogs give:
    -- fms-fsdp's code logs tokens/s only (no commit of the repository
    -- computes an MFU); the README at ed74fd5: "MFU numbers are computed
    -- using the methodology outlined in NanoGPT and the PaLM paper".
    -- nanoGPT model.py estimate_mfu: "N = self.get_num_params()",
    -- "flops_per_token = 6*N + 12*L*H*Q*T", get_num_params summing
    -- "p.numel() for p in self.parameters()" less only the position
    -- table ("The token embeddings would too, except due to the
    -- parameter sharing these params are actually used as weights in the
    -- final layer, so we include them"): every parameter of an FMS
    -- LLaMA (no position table, untied head), its input embedding too,
    -- and the whole s^2 (12 L H Q T, the default here).  It changes
    -- only the model-FLOP count an MFU reads, not the priced step.
    { "embed_flops", true, "MFU by nanoGPT's estimate_mfu: 6N over every parameter, "
      .. "the input embedding's included" },
  },
  -- huggingface/nanotron (v0.5, the README's benchmark diagram; code at
  -- c2528430): its own tensor-parallel Llama on PyTorch DDP, its own
  -- ZeRO-1 optimizer.  Kernels otherwise as the fused stack prices them:
  -- flash_attn_varlen_func, flash-attn's Triton rotary (models/llama.py
  -- "self.flash_rotary_embedding = FlashRotaryEmbedding("), TritonRMSNorm,
  -- fused qkv_proj and gate_up_proj, torch's fused AdamW
  -- (torch_adam_is_fused in the benchmark config).
  nanotron = {
    -- models/llama.py CoreAttention.forward: "from
    -- flash_attn.flash_attn_interface import flash_attn_varlen_func" --
    -- the flash-attn package's FlashAttention-2 (FA3 ships apart, as
    -- hopper/'s top-level flash_attn_interface), not cuDNN's.
    { "flash", true, "models/llama.py CoreAttention: flash_attn_varlen_func" },
    { "attn_kernel", "fa2", "flash_attn.flash_attn_interface.flash_attn_varlen_func "
      .. "(flash-attn 2)" },
    -- models/llama.py GLUActivation.forward: "gate_states, up_states =
    -- torch.split(merged_states, ...)", "return self.act(gate_states) *
    -- up_states": the SiLU and the product as two PyTorch kernels, as
    -- Megatron-Core's MLP without bias_activation_fusion.
    { "unfused_act", true, "models/llama.py GLUActivation: self.act(gate_states) * up_states "
      .. "(two kernels)", gated },
    -- optim/zero.py ZeroDistributedOptimizer.step: "loss =
    -- super().step(closure=closure)" then "# All gather updated params"
    -- "self._all_gather_params()", a dist.all_gather_coalesced with no
    -- async_op (blocking) over the whole shard, before the next step's
    -- forward starts: nothing runs under it.
    { "overlap_param_gather", false, "optim/zero.py: _all_gather_params() after the "
      .. "optimizer step, blocking", function(o) return (o.zero or 0) >= 1 end },
    -- The same _all_gather_params hands its output to distributed.py
    -- all_gather_coalesced, whose update_output copies every
    -- parameter's slice of every DP rank back one "original_buffer.copy_(
    -- gathered_buffer)" at a time, from Python (engine/train.c
    -- gather_copy_host): dp x (tensors + 1) launches after each step.
    { "zero_gather_copies", true, "optim/zero.py _all_gather_params -> all_gather_coalesced: "
      .. "one copy_ per parameter per DP rank from Python", function(o) return (o.zero or 0) >= 1 end },
    -- trainer.py wraps the model in torch's DistributedDataParallel
    -- (bucket_cap_mb = ddp_bucket_cap_mb) and helpers.py registers
    -- get_fp32_accum_hook, which issues each bucket's fp32 all-reduce
    -- "async_op=True" from the bucket's autograd hook: under the rest of
    -- the backward -- at ZeRO 0 only.  trainer.py init_model (c2528430
    -- and the benchmark's branch, 67c5ebb6): "make_ddp =
    -- parallel_context.data_parallel_size > 1 and not (config.optimizer.
    -- accumulate_grad_in_fp32 and config.optimizer.zero_stage > 0)", and
    -- the benchmark's config runs "accumulate_grad_in_fp32: true": at
    -- ZeRO 1 there is no DDP and no hook.  training_step then, after
    -- train_batch_iter has run every backward: "if not isinstance(
    -- self.model, DistributedDataParallel): # Manually sync across DP if
    -- it's not handled by DDP  sync_gradients_across_dp(..., # TODO
    -- @thomasw21: This is too memory hungry, instead we run all_reduce
    -- reduce_scatter=False, ...)", which FP32GradientAccumulator runs as
    -- "dist.all_reduce(self._contiguous_fp32_grad_buffer, op=reduce_op,
    -- group=dp_pg)": the whole fp32 gradient buffer all-reduced (not
    -- reduce-scattered) in one blocking collective, nothing under it
    -- (optim/gradient_accumulator.py sync_gradients_across_dp).
    -- The loss: models/llama.py runs the lm_head's output through a
    -- "lambda: lambda x: x.float()" PipelineBlock and then
    -- "sharded_cross_entropy(sharded_logits, ..., dtype=torch.float)"
    -- (parallel/tensor_parallel/functional.py _ShardedCrossEntropy), op
    -- by op: "torch.max(sharded_logits, dim=-1)", "sharded_logits =
    -- sharded_logits - logits_max.unsqueeze(dim=-1)", "torch.exp(
    -- sharded_logits, out=exp_logits)", "exp_logits.sum(dim=-1)",
    -- "exp_logits.div_(sum_exp_logits.unsqueeze(dim=-1))"; backward
    -- "grad_input.mul_(grad_output.unsqueeze(dim=-1))" and the cast's
    -- gradient back to 16 bits -- the passes of Megatron-Core's unfused
    -- vocab-parallel cross-entropy (A + 36 B a logit forward, A + 12
    -- back; engine/train_layer.c), not a fused loss's A + 8 and A + 4.
    { "unfused_loss", true, "parallel/tensor_parallel/functional.py _ShardedCrossEntropy: "
      .. "fp32 logits, max, subtract, exp, sum, divide op by op" },
    -- The pipeline split by nanotron's compute costs (nanotron_split
    -- above): the 1.34B shape on PP 2 holds 11 and 5 layers (the lm_head
    -- weighs 131072 x 2048 = 4 layers of 67.1M), not 8 and 8; the 8.86B
    -- on PP 4 9, 9, 8, 6 -- every stage's count, the middle ones uneven
    -- too, as nanotron runs them (not Megatron-Core's even middle).
    { "stage_layers", nanotron_stages, "models/base.py build_model: blocks "
      .. "balanced by get_block_compute_costs (a layer 4h^2 + 3 d_ff h, the lm_head vocab x h)" },
    -- ZeRO 0's DDP hook: one ncclAllReduce a gradient tensor
    -- (nanotron_ddp_tensor above).
    { "dp_bucket", nanotron_ddp_tensor, "optim/gradient_accumulator.py get_fp32_accum_hook: "
      .. "dist.all_reduce_coalesced of the bucket's fp32 tensors, one ncclAllReduce a tensor "
      .. "(the stage's parameters over its gradient tensors)" },
    { "overlap_grad_reduce", true, "DDP comm hook get_fp32_accum_hook: each bucket's "
      .. "reduction async under the backward", function(o) return (o.zero or 0) == 0 end },
    { "overlap_grad_reduce", false, "trainer.py: no DDP at ZeRO 1 with accumulate_grad_in_fp32 "
      .. "(make_ddp); the fp32 grads all-reduced after the backward",
      function(o) return (o.zero or 0) >= 1 end },
    { "zero_reduce", "allreduce", "optim/gradient_accumulator.py sync_gradients_across_dp "
      .. "(reduce_scatter=False): dist.all_reduce of the contiguous fp32 grad buffer",
      function(o) return (o.zero or 0) >= 1 end },
  },
  -- A source that names PyTorch FSDP and no framework (above).
  ["pytorch-fsdp"] = {
    { "stack", "hf", "PyTorch FSDP on PyTorch modules: torch.optim over the sharded parameters" },
  },
  -- Llama 3's own 4D-parallel stack (Llama 3 paper sec. 3.3.2).
  llama3 = {
    { "stack", "hf", "FSDP in the data-parallel dimension" },
    { "flash", true, "fused attention" },
    { "recompute", "none", "8K sequences without activation checkpointing" },
    { "grad_reduce", "fp32", "reduce-scatter gradients in FP32" },
    { "kernels", "fused", "Meta's own training stack, not the Hugging Face modules" },
    -- Sec. 3.3.2: "To balance the pipeline, we reduce one Transformer
    -- layer each from the first and the last stages, respectively. This
    -- means that the first model chunk on the first stage has only the
    -- embedding, and the last model chunk on the last stage has only
    -- output projection and loss calculation."  The embedding and the
    -- loss take a layer's place in the split (split_ends), and a chunk
    -- that loses its one layer is left with the embedding alone: a chunk
    -- holds one slot.  "we use an interleaved schedule (Narayanan et al.,
    -- 2021) with V pipeline stages on one pipeline rank": V is a stage's
    -- slots, (layers + 2) / PP -- 128 / 16 = 8 for the 405B's 126 layers.
    { "split_ends", true, "sec. 3.3.2: the first chunk only the embedding, the last only "
      .. "the output and loss", function(o) return (o.pp or 1) > 1 end },
    { "vpp", function(o, m)
        local s = (m.layers + 2) // o.pp
        return s * o.pp == m.layers + 2 and s >= 2 and math.floor(s) or nil
      end, "sec. 3.3.2: one slot a model chunk, (layers + 2) / PP",
      function(o) return (o.pp or 1) > 1 end },
  },
}

-- DeepSpeed-Chat (DeepSpeedExamples applications/DeepSpeed-Chat, 2023):
-- DeepSpeed's ZeRO engine over the Hugging Face modules of the time, whose
-- OPTAttention is bmm, the softmax upcast to fp32 in fp16, bmm (no
-- FlashAttention path in transformers before late 2023); the same as the
-- step-3 RL profile (predict/rl.lua).
-- OPTAttention.forward (transformers v4.28, April 2023) clamps the masked
-- scores before that softmax: "attn_weights =
-- attn_weights.view(bsz, self.num_heads, tgt_len, src_len) +
-- attention_mask; attn_weights = torch.max(attn_weights,
-- torch.tensor(torch.finfo(attn_weights.dtype).min,
-- device=attn_weights.device))" (attn_clamp).
-- Megatron-LM as Korthikanti et al. 2022 ran it (arXiv 2205.05198): the
-- 2021 profile's settings, and the asynchronous TP all-reduce, which came
-- between the two papers: Megatron-LM 16c90445 and f3e57f6f (September
-- 2021) put each column-parallel linear's input-gradient all-reduce beside
-- its weight-gradient GEMM, on by default ('--no-async-tensor-model-
-- parallel-allreduce' turns it off); the SC21 scripts' commit 6985e58
-- (August 2021) does not have it.
PROFILES["megatron-lm-2022"] = {
  { "async_tp_allreduce", true, "Megatron-LM since September 2021: the column-parallel "
    .. "input-gradient all-reduce under the weight-gradient GEMM", tp2 },
}
for _, e in ipairs(PROFILES["megatron-lm"]) do
  table.insert(PROFILES["megatron-lm-2022"], e)
end

PROFILES["deepspeed-chat"] = { { "flash", false, "transformers' 2023 OPTAttention: bmm, "
  .. "fp32 softmax, bmm" },
  { "attn_clamp", true, "OPTAttention: torch.max(attn_weights, finfo.min) after the mask" },
  -- and scales q, not the scores: "query_states =
  -- self.q_proj(hidden_states) * self.scaling".
  { "attn_scale_q", true, "OPTAttention: q_proj(hidden_states) * self.scaling" },
  -- and shapes q, k and v for its bmm by copies: "_shape": "tensor.view(
  -- bsz, seq_len, self.num_heads, self.head_dim).transpose(1, 2)
  -- .contiguous()".
  { "attn_head_copies", "contiguous", "OPTAttention._shape: .transpose(1, 2).contiguous()" } }
for _, e in ipairs(PROFILES.deepspeed) do
  table.insert(PROFILES["deepspeed-chat"], e)
end

local function predict(case, cat)
  local fw = case_.framework(case)
  local cm, vocab_note = case.model or {}, nil
  if fw == "nemo" and v(cm.vocab) == nil and v(cm.ffn_gated) == false then
    -- NeMo's GPT-3 configs: the GPT-2 BPE tokenizer padded to 51200
    -- (the table's 782 TFLOP/s at 726 tokens/s needs V = 51200).
    local c2 = {}
    for k, x in pairs(cm) do c2[k] = x end
    c2.vocab = 51200
    cm, vocab_note = c2, "vocab=51200 (NeMo gpt3: GPT-2 BPE, padded)"
  end
  local model, why = model_of(cm, cat)
  if not model then return nil, why end
  local hw, par, wl = case.hardware or {}, case.parallel or {}, case.workload or {}
  local metric = case.measured and case.measured.metric
  local pick = {
    step_time_s = function(r) return r.step_s end,
    tokens_per_s_per_gpu = function(r) return r.tokens_per_s_gpu end,
    hfu_tflops_per_gpu = function(r) return r.hw_tflops_gpu end,
    mfu_tflops_per_gpu = function(r) return r.model_tflops_gpu end,
    mfu = function(r) return r.mfu end,
  }
  if not pick[metric] then return nil, "metric " .. tostring(metric) .. " is not a training metric" end
  -- The read of gp.train's result a script prints (gpuplan.explain).
  local shows = { step_time_s = "r.step_s", tokens_per_s_per_gpu = "r.tokens_per_s_gpu",
                  hfu_tflops_per_gpu = "r.hw_tflops_gpu", mfu_tflops_per_gpu = "r.model_tflops_gpu",
                  mfu = "r.mfu" }
  if not v(hw.gpu) then return nil, "hardware.gpu not given" end
  local okg, gwhy = case_.gpu(case, cat)
  if not okg then return nil, gwhy end
  if model.moe and not v(model.moe.ffn_hidden) then
    -- named as the case file writes it (SCHEMA.md): "model.moe without
    -- its expert width" named no field to give
    return nil, "model.moe.expert_ffn_hidden not given (one expert's intermediate width; "
      .. "model.ffn_hidden is the dense layers')"
  end
  local defaults = {}
  local o = {
    model = model, gpu = hw.gpu, gpus = v(hw.gpus) or 1, method = v(wl.method) or "pretrain",
    tp = v(par.tp), pp = v(par.pp), cp = v(par.cp), ep = v(par.ep), etp = v(par.etp),
    vpp = v(par.vpp),
    zero = v(par.zero), sp = v(par.sp), batch = v(par.micro_batch),
    global_batch = v(par.global_batch), seq = v(wl.seq_len), recompute = v(par.recompute),
    precision = v(wl.precision), optimizer = v(wl.optimizer), offload = v(par.offload),
    gpus_per_node = v(hw.gpus_per_node), cat = cat,
  }
  -- The media of a sample (SCHEMA.md): gp.train's own options.
  case_.media(o, wl)
  -- fsdp true at zero 3 or with no stage is full_shard; true beside
  -- zero 0-2 stays the case's ZeRO stage (the file's older boolean).
  if v(par.fsdp) == true then o.fsdp = o.zero == nil or o.zero == 3 or nil
  elseif v(par.fsdp) then o.fsdp = par.fsdp end
  -- the fields that size the step's memory, as the memory predictor
  -- hands them (predict/case.lua sizing)
  case_.sizing(o, par, wl)
  o.fsdp_version = v(par.fsdp_version)
  o.overlap_grad_reduce = v(par.overlap_grad_reduce)
  o.overlap_param_gather = v(par.overlap_param_gather)
  o.ckpt_outside_fsdp = v(par.ckpt_outside_fsdp)
  o.zero3_gather = v(par.zero3_gather)
  -- the offloaded optimizer's host step (SCHEMA.md parallel.host_threads,
  -- parallel.delayed_update): gp.train's options of those names
  o.host_threads = v(par.host_threads)
  o.delayed_update = v(par.delayed_update)
  o.zero_reduce = v(par.zero_reduce)
  o.reduce_bucket_size = v(par.reduce_bucket_size)
  o.prefetch_bucket_size = v(par.prefetch_bucket_size)
  o.max_live_parameters = v(par.max_live_parameters)
  o.max_reuse_distance = v(par.max_reuse_distance)
  o.zero_init = v(par.zero_init)
  o.grad_accum_dtype = v(par.grad_accum_dtype)
  o.grad_reduce = v(par.grad_reduce)
  o.gradient_accumulation_fusion = v(par.gradient_accumulation_fusion)
  o.fp8_scaling = v(wl.fp8_scaling)
  o.packed_len = v(wl.packed_len)
  o.pad_mask = v(wl.pad_mask)
  o.pad_share = v(wl.pad_share)
  o.attn_kernel = v(wl.attn_kernel)
  -- the cuDNN release the run's software carries (gp.train's cudnn)
  o.cudnn = v(wl.cudnn)
  -- The model-state recipe the source states (SCHEMA.md workload.recipe):
  -- gp.train's recipe, over the stack's default for the precision.
  o.recipe = v(wl.recipe)
  o.fp8_attention = v(wl.fp8_attention)
  o.mlp_down_bf16 = v(wl.mlp_down_bf16)
  o.power_limit = v(hw.power_limit)
  o.sm_clock = v(hw.sm_clock)
  -- The node the source's run had, where it is not the card's default
  -- system (SCHEMA.md hardware.system): gp.train's system, whose scale-up
  -- fabric prices the collectives inside a node (a 4-GPU HGX board's
  -- mesh gives a pair a third of its links, engine/comm.c).
  o.system = v(hw.system)
  o.attn_clamp = v(wl.attn_clamp)
  o.eager_softmax = v(wl.eager_softmax)
  -- The RMSNorm as one fused kernel under the eager modules (SCHEMA.md
  -- workload.eager_norm false: torchtitan's norm_type fused_rmsnorm).
  o.eager_norm = v(wl.eager_norm)
  o.attn_where = v(wl.attn_where)
  o.attn_head_copies = v(wl.attn_head_copies)
  o.addmm_bias = v(wl.addmm_bias)
  -- The Adam step's implementation where the source's code says
  -- (SCHEMA.md workload.optimizer_impl; gp.train's optimizer_impl).
  o.optimizer_impl = v(wl.optimizer_impl)
  o.flash = v(wl.flash)
  o.kernels = v(wl.kernels)
  -- The run's training switches as its launch script sets them (SCHEMA.md
  -- workload.dropout, workload.unfused_loss): gp.train's options of those
  -- names, before the stack profile, whose dropout and loss then stand
  -- only where the case says nothing.
  o.dropout = v(wl.dropout)
  o.unfused_loss = v(wl.unfused_loss)
  -- Megatron-Core's native fused loss or Transformer Engine's (SCHEMA.md
  -- workload.mcore_loss: false under cross_entropy_fusion_impl "te").
  o.mcore_loss = v(wl.mcore_loss)
  -- The token embedding as a one-hot matmul (SCHEMA.md
  -- workload.emb_matmul): gp.train's option of that name.
  o.emb_matmul = v(wl.emb_matmul)
  -- LoRA's adapters added into the weight each step (SCHEMA.md
  -- workload.lora_merged): gp.train's option of that name.
  o.lora_merged = v(wl.lora_merged)
  -- Liger-Kernel's fused linear cross-entropy (SCHEMA.md
  -- workload.fused_linear_ce): gp.train's option of that name.
  o.fused_linear_ce = v(wl.fused_linear_ce)
  -- The TP head's logits gathered to every rank and the plain loss over
  -- them (SCHEMA.md workload.replicated_logits): gp.train's option of that
  -- name prices the gather and the loss over all V.
  o.replicated_logits = v(wl.replicated_logits)
  -- The optimizer's states in CUDA managed memory, or (false) in
  -- PyTorch's allocator (SCHEMA.md workload.paged_optimizer): gp.train's
  -- option of that name (the states out of the peak; their paging
  -- priced where they do not fit).
  o.paged_optimizer = v(wl.paged_optimizer)
  -- The parameters' moving average (SCHEMA.md workload.ema): gp.train's
  -- option of that name, its copy and its update pass (gpu) or its host
  -- copy and per-step transfer (cpu).
  o.ema = v(wl.ema)
  -- K and V copied to every query head by the model's own code (SCHEMA.md
  -- workload.kv_repeat): gp.train's option of that name; stated, it
  -- stands over the stack profile's (torchtitan's and fms-fsdp's Llama).
  o.kv_repeat = v(wl.kv_repeat)
  -- Each TP column-parallel projection its own ColwiseParallel(
  -- input_layouts=Shard(1)) (SCHEMA.md workload.tp_input_per_linear):
  -- gp.train's option of that name prices its own reduce-scatters.
  o.tp_input_per_linear = v(wl.tp_input_per_linear)
  -- Where checkpoint_offload's copies run (SCHEMA.md
  -- parallel.checkpoint_offload_streams): gp.train's option of that name;
  -- stated, it stands over the stack profile's (torchtune's
  -- OffloadActivations use_streams=True).
  o.checkpoint_offload_streams = v(par.checkpoint_offload_streams)
  if v(par.schedule) == "dualpipe" then o.schedule = "dualpipe" end
  o.ep_overlap = v(par.ep_overlap)
  o.tp_overlap = v(par.tp_overlap)
  o.tp_overlap_fp8_rs = v(par.tp_overlap_fp8_rs)
  o.tp_overlap_aggregate = v(par.tp_overlap_aggregate)
  o.moe_dispatcher = v(par.moe_dispatcher)
  o.moe_flex_backend = v(par.moe_flex_backend)
  o.cuda_device_max_connections = v(par.cuda_device_max_connections)
  o.numa_bind = v(par.numa_bind)
  o.dp_bucket = v(par.dp_bucket)
  o.fp8_param_gather = v(par.fp8_param_gather)
  -- The multi-token prediction modules the case's model states
  -- (SCHEMA.md model.mtp_layers; NeMo's DeepSeek-V3 recipe "use_mtp:
  -- bool = True" -> "mtp_num_layers=1"): gp.train's mtp_layers, since
  -- the model table itself prices nothing with it (engine/lgp_model.c).
  -- Stated, it stands over a stack profile's (megatron-bridge's 1).
  o.mtp_layers = v(cm.mtp_layers)
  o.moe_flex_sms = v(par.moe_flex_sms)
  o.moe_router_ops = v(par.moe_router_ops)
  if v(par.moe_permute_fusion) == false then o.unfused_permute = true end
  if v(par.bias_activation_fusion) == false then o.unfused_act = true end
  if v(par.apply_rope_fusion) == false then o.unfused_rope = true end
  o.moe_router_dtype = v(par.moe_router_dtype)
  -- the router's balance as the recipe configures it (SCHEMA.md
  -- parallel.moe_balance)
  o.moe_balance = v(par.moe_balance)
  -- the gate the recipe runs (SCHEMA.md parallel.moe_gate: AutoModel's
  -- fake_balanced_gate)
  o.moe_gate = v(par.moe_gate)
  -- the micro-batches of one pipeline schedule call (SCHEMA.md
  -- parallel.pp_microbatches: AutoModel's local batch)
  o.pp_microbatches = v(par.pp_microbatches)
  o.moe_fp8_pad = v(par.moe_fp8_pad)
  -- a capacity-bound dispatch as the recipe sets it (SCHEMA.md
  -- parallel.capacity_factor; absent: the option's dropless default)
  o.capacity_factor = v(par.capacity_factor)
  o.fused_grouped_mlp = v(par.fused_grouped_mlp)
  o.legacy_permute = v(par.legacy_permute)
  o.te_mxfp8_grouped = v(par.te_mxfp8_grouped)
  if type(v(par.cuda_graph_scope)) == "table" then o.cuda_graph_scope = par.cuda_graph_scope end
  if o.vpp == 1 then o.vpp = nil end
  -- An adapter's frozen base in the format the run holds it (SCHEMA.md
  -- workload.weight_dtype): gp.train's weights.
  o.weights = v(wl.weight_dtype)
  local lora = v(wl.lora)
  if type(lora) == "table" then
    o.lora_rank = v(lora.rank)
    if type(lora.targets) == "table" then o.lora_targets = table.concat(lora.targets, ",") end
    o.lora_dropout = v(lora.dropout)
  end
  if v(hw.inter_node) and (v(hw.gpus) or 1) > (v(hw.gpus_per_node) or 8) then
    o.nic_fabric = hw.inter_node
    o.nics = v(hw.nics_per_node) or v(hw.gpus_per_node) or 8
  end
  if vocab_note then defaults[#defaults + 1] = vocab_note end
  -- torchtune's recipes stop on a float16 dtype (case_.torchtune_recipe):
  -- no torchtune run trained in fp16.
  if fw == "torchtune" and o.precision == "fp16" then return nil, case_.TORCHTUNE_FP16 end
  if fw then
    defaults[#defaults + 1] = "stack profile=" .. fw
    case_.profile(o, model, PROFILES[fw], defaults)
    -- A commit whose loss ran outside torch.compile (case_.EAGER_LOSS:
    -- torchtitan 9dec370's "TODO: compiling loss function causes CUDA
    -- errors"), where the layers compiled.
    -- A run dated after its framework's model-FLOP count began halving
    -- causal attention (case_.CAUSAL_FLOPS_SINCE): the TFLOP/s it logged
    -- count the half.
    local since = case_.causal_flops_since(fw, case)
    if since then
      case_.profile(o, model, { { "causal_flops", true, fw .. " num_floating_point_operations "
        .. "since " .. since .. ": causal attention at half" } }, defaults)
    end
    local rel = case_.eager_loss_commit(fw, case)
    if rel then
      case_.profile(o, model, { { "eager_loss", true, fw .. " " .. rel
        .. ": the loss left out of torch.compile", function(oo) return oo.kernels == nil or oo.kernels == "fused" end } },
        defaults)
    end
  end

  if o.precision == nil then
    o.precision = "bf16"
    defaults[#defaults + 1] = "precision=bf16 (not stated; fp16 runs at the same peak)"
  end
  if o.recompute == nil then
    o.recompute = "auto"
    defaults[#defaults + 1] = "recompute=auto (not stated)"
  end
  -- Memory as the framework would have it: the run did start.
  o.margin = 0
  local ok, r = pcall(train.train, o)
  if not ok then return nil, require("gpuplan.cli").clean(r) end
  for _, d in ipairs(r.defaults) do defaults[#defaults + 1] = d end
  local parts = {}
  for _, p in ipairs(r.parts) do
    if p.share >= 0.005 then parts[#parts + 1] = string.format("%s %.0f%%", p.name, 100 * p.share) end
  end
  -- A vision tower's share: the LLM tokens the media of one sample
  -- became, and the patches the tower encoded per micro-batch.
  local media = ""
  if model.vision and (r.vision_patches or 0) > 0 then
    local m = r.media or require("gpuplan.vlm").media(model, o, true)
    media = string.format("; %d image tokens/sample, %.0f patches/micro-batch", m.tokens,
      r.vision_patches)
  end
  return { value = pick[metric](r), defaults = defaults,
           job = o, call = "train", read = pick[metric], shows = shows[metric],
           regime = require("gpuplan.ranges").regime("train", o, r, cat),
           detail = string.format("step %.3g s; %s; mfu %.1f%%%s", r.step_s,
                                  table.concat(parts, ", "), 100 * r.mfu, media) }
end

-- The predictor, callable as predict(case, cat); its stack profiles by
-- framework (profiles) for the RL and memory predictors, whose actor and
-- critic, or whose sized run, train on the same stacks (predict/rl.lua,
-- predict/memory.lua); frameworks: the names workload.framework takes.
return setmetatable({ profiles = PROFILES, frameworks = case_.names(PROFILES) }, {
  __call = function(_, case, cat) return predict(case, cat) end })
