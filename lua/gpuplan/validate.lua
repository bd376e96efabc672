-- gpuplan.validate: predict published measurements and score the models.
--
-- Case files follow validation/SCHEMA.md (a JSON array of cases).
-- For each case of kind K the predictor lua/gpuplan/predict/K.lua is asked
-- for a value in the case's metric; a kind without a predictor, or a case a
-- predictor declines, is listed with the reason.  Errors are
-- (predicted - measured) / measured; per kind the report gives the count,
-- the median and the 90th percentile of |error| (nearest-rank).

-- A decoder of our own: strict numbers (no NaN, Infinity or hex, which
-- JSON does not have), without changing the shared module's settings.
local cjson = require("cjson").new()
cjson.decode_invalid_numbers(false)

local M = {}

M.kinds = { train = "training", memory = "memory", infer = "inference",
            collective = "collective", rl = "RL fine-tuning" }

-- JSON null -> nil, recursively.
local function strip_nulls(v)
  if v == cjson.null then return nil end
  if type(v) == "table" then
    for k, x in pairs(v) do v[k] = strip_nulls(x) end
  end
  return v
end

-- The shape of a case (SCHEMA.md), checked before any prediction: a field
-- of the wrong type or out of range is an error naming the case and the
-- field, never a prediction that fails inside a predictor.  Fields the
-- schema does not know are refused too (a misspelt "tp_size" would be
-- ignored in silence).  Counts are at most the engine's 2^24 (tokens of
-- a sequence too: the longest context of any model, 10M, is below it).
local schema = require "gpuplan.schema"
local T, R = schema.T, schema.required
local function count(min) return T.integer { min = min or 1, max = schema.COUNT_MAX } end
-- Free text: any string, empty included.
local function text()
  return { name = "text", check = function(v, path)
    if type(v) ~= "string" then
      error({ path = path, msg = "expected a string, got a " .. type(v) }, 0)
    end
    return v
  end }
end

-- workload.weight_dtype: a format name, or what gp.infer's --weights also
-- takes where the source states more than the name -- a group size and
-- scale dtype ("int4-g32-bf16": gpt-fast's and AutoAWQ's group sizes other
-- than 128) or GGUF-style bits per weight (4.5 for llama.cpp's Q4_0) --
-- read by gpuplan.memory.weight_format, the one parser of the option.
local WEIGHT_NAMES = { "fp32", "bf16", "fp16", "fp8", "int8", "int4", "nf4", "nf4-dq", "fp4" }
-- An enum of weight formats whose refusal adds gpuplan.memory's hint
-- for another's name of a format it prices (weight_name_hint: "nvfp4"
-- is fp4), in place of the nearest name: workload.weight_dtype "nvfp4"
-- read "did you mean 'nf4'?", the wrong format, where --weights nvfp4
-- says fp4.
local function weight_enum(values)
  local enum = T.enum(values)
  return { name = enum.name, check = function(v, path)
    local ok, r = pcall(enum.check, v, path)
    if ok then return r end
    local hint = require("gpuplan.memory").weight_name_hint(v)
    if type(r) == "table" and hint ~= "" then
      r.msg = r.msg:gsub(" %(did you mean '[^']*'%?%)$", "") .. hint
    end
    error(r, 0)
  end }
end
local function weight_format()
  local names = weight_enum(WEIGHT_NAMES)
  return { name = "weight format", check = function(v, path)
    -- llama.cpp's GGUF types (Q4_K_M ...) as the source names the file:
    -- gpuplan.infer prices each tensor's type from them (gguf_mix)
    if type(v) == "string" and require("gpuplan.infer").GGUF_TYPES[v:lower()] then return v end
    if type(v) == "string" and not v:find("%-g%d") then return names.check(v, path) end
    if type(v) ~= "string" and math.type(v) == nil then return names.check(v, path) end
    local ok, err = pcall(require("gpuplan.memory").weight_format, v)
    if not ok then
      error({ path = path, enum = true, msg = "expected one of " .. table.concat(WEIGHT_NAMES, ", ")
        .. ", a group variant (int4-g32-bf16) or bits per weight (4.5): "
        .. tostring(err):gsub("^[^\n]-:%d+: ", "") }, 0)
    end
    return v
  end }
end

-- A vision tower (model.vision): a catalog model id whose tower and
-- projector the case's decoder takes, or the tower itself in the
-- catalog's fields (catalog/models/multimodal.lua, engine gp_vision).
local vision_tower = T.record {
  layers = count(), hidden = count(), heads = count(), ffn_hidden = count(),
  ffn_gated = T.boolean(), image_size = count(), patch_size = count(),
  merge = count(), temporal_patch = count(), tokens_per_image = count(),
  projector_params = T.number { min = 0, max = schema.AMOUNT_MAX },
  params = T.number { positive = true, max = schema.AMOUNT_MAX },
}
local function vision_spec()
  return { name = "vision", fields = vision_tower.fields, check = function(v, path)
    if type(v) == "string" then return v end
    if type(v) ~= "table" then
      error({ path = path, msg = "expected a catalog model id or a vision tower object, got "
        .. (type(v) == "number" and string.format("%.14g", v) or "a " .. type(v)) }, 0)
    end
    return vision_tower.check(v, path)
  end }
end

-- The media of a sample (workload.images, video_frames, image_size,
-- frame_size, train_vision, train_llm): gp.train's own options, one declaration
-- (options.lua, section "vision"), typed from it.
local function media_fields(into)
  for _, d in ipairs(require("gpuplan.options").list) do
    if d.group == "vision" then
      into[d.name] = d.type == "flag" and T.boolean() or count(0)
    end
  end
  return into
end

-- A release written plain (gpuplan.version's major.minor[.patch], the form
-- every release rule reads): `what` names it in the message ("a cuDNN
-- release"), `example` shows one.
local function release(name, what, example)
  return { name = name, check = function(x, path)
    if not require("gpuplan.version").plain(x) then
      error({ path = path, msg = 'expected ' .. what .. ' as "' .. example
        .. '" (major.minor[.patch]), got ' .. schema.show(x) }, 0)
    end
    return x
  end }
end

-- A case field that is an option of the same name (gp.train's, gp.infer's
-- or gp.rl's): its type from the option's declaration in gpuplan.options
-- (a flag or boolean: true or false; an enum: its declared values), so
-- the case reader and the option accept the same values, declared once.
local function declared(name, cmd)
  local d = require("gpuplan.options").get(name)
  -- a command's own kind of value (rl's ema, a flag, where train's is a
  -- name): that command's variant
  local variant = cmd and d.variants and d.variants[cmd]
  if variant and variant.type == "flag" then return T.boolean() end
  if d.type == "flag" or d.type == "boolean" then return T.boolean() end
  if d.kind == "enum" and d.values then return T.enum(d.values) end
  if d.type == "int" and d.range then return T.integer { min = d.range[1], max = d.range[2] } end
  -- a count with no range of its own: its kind's, as the command line
  -- checks it (gpuplan.options KIND_RANGE: 1..COUNT_MAX)
  if d.type == "int" and d.kind == "count" then
    local kr = require("gpuplan.options").KIND_RANGE.count
    return T.integer { min = kr[1], max = kr[2] }
  end
  -- a range open at its 0 (gt = true: kv_free_fraction's (0, 1], 0 the
  -- engine's "off") is the schema's positive: the reader took 0, read as
  -- [0, 1], and the case went on to gp.infer's refusal as a reason naming
  -- no line, where 1.5 was refused here naming FILE:LINE and the field
  if d.type == "number" and d.range and d.range.gt then
    if d.range[1] ~= 0 then
      error("gpuplan.validate: option '" .. name .. "' opens its range at a bound other than 0", 2)
    end
    return T.number { positive = true, max = d.range[2] }
  end
  if d.type == "number" and d.range then return T.number { min = d.range[1], max = d.range[2] } end
  -- a power (power_limit): a case states its W as a number
  if d.kind == "power" and d.range then return T.number { min = d.range[1], max = d.range[2] } end
  -- a share of a whole: its kind's range, [0, 1]
  local kr = require("gpuplan.options").KIND_RANGE
  if d.type == "number" and d.kind == "fraction" then
    return T.number { min = kr.fraction[1], max = kr.fraction[2] }
  end
  error("gpuplan.validate: option '" .. name .. "' declares no case type", 2)
end

M.metrics = {
  train = { "hfu_tflops_per_gpu", "mfu_tflops_per_gpu", "mfu", "tokens_per_s_per_gpu",
            "step_time_s" },
  -- peak_memory_*: torch.cuda.max_memory_allocated; peak_reserved_gib:
  -- the caching allocator's reserved_bytes.all.peak (torchtitan's
  -- "memory: ... GiB" log line, its Memory(GiB) columns)
  memory = { "peak_memory_gb", "peak_memory_gib", "peak_reserved_gib" },
  infer = { "output_tokens_per_s", "decode_tokens_per_s", "ttft_ms", "itl_ms",
            "output_tokens_per_s_per_gpu", "input_tokens_per_s_per_gpu" },
  collective = { "busbw_gbps", "time_us" },
  rl = { "step_time_s", "tokens_per_s_per_gpu", "mfu" },
}

-- The unit each metric is measured in, as the shipped cases write it: a
-- case's measured.unit (optional) that names another one is a mix-up the
-- prediction would not see -- "peak_memory_gb" with "GiB" is 7% off, an
-- "mfu" in percent 100x -- and is refused, naming both.
M.metric_units = {
  hfu_tflops_per_gpu = "TFLOP/s/GPU", mfu_tflops_per_gpu = "TFLOP/s/GPU", mfu = "fraction",
  tokens_per_s_per_gpu = "tokens/s/GPU", step_time_s = "s",
  peak_memory_gb = "GB", peak_memory_gib = "GiB", peak_reserved_gib = "GiB",
  output_tokens_per_s = "tokens/s", decode_tokens_per_s = "tokens/s", ttft_ms = "ms",
  itl_ms = "ms", output_tokens_per_s_per_gpu = "tokens/s/GPU",
  input_tokens_per_s_per_gpu = "tokens/s/GPU", busbw_gbps = "GB/s", time_us = "us",
}

-- The measured value: 1e-6 .. 1e15 of its unit.  No metric of SCHEMA.md
-- is measured in millionths of its unit (the smallest, mfu, is a
-- fraction like 0.3; times are in s, ms or us), and within these bounds
-- (predicted - measured) / measured is finite; 1e-320 made it inf.
M.VALUE_MIN, M.VALUE_MAX = 1e-6, 1e15

-- A model's architecture (the case's model; PPO's critic_model and
-- reward_model in rl take the same record).
local model_spec = T.record {
  name = text(), layers = count(), hidden = count(), heads = count(),
  kv_heads = count(), head_dim = count(), ffn_hidden = count(0),
  ffn_gated = T.boolean(), vocab = count(), tied_embeddings = T.boolean(),
  -- Encoder-decoder (T5): the encoder's layers, the relative-position
  -- buckets and the MLP's activation, as the catalog has them.
  encoder_layers = count(0), rel_buckets = count(0),
  ffn_act = schema.model.fields.ffn_act,
  -- The catalog's fields, as gpuplan.schema declares them once: the gated
  -- activation clamps its two halves first, YaRN's attention factor on
  -- rope's cos and sin, every linear has a bias, each head's q and k are
  -- RMS-normalised (Qwen3's QK-norm).
  ffn_clamp = schema.model.fields.ffn_clamp,
  qk_norm = schema.model.fields.qk_norm,
  parallel_attn = schema.model.fields.parallel_attn,
  shared_norm = schema.model.fields.shared_norm,
  attn_sinks = schema.model.fields.attn_sinks,
  rope_attention_factor = schema.model.fields.rope_attention_factor,
  linear_bias = schema.model.fields.linear_bias,
  -- a hybrid stack's layer letters and its Mamba-2 mixer (the catalog's)
  hybrid_pattern = schema.model.fields.hybrid_pattern,
  mamba = schema.model.fields.mamba,
  -- which projections the model's own modules keep apart (absent: none;
  -- the catalog's field, SCHEMA.md)
  split_proj = schema.model.fields.split_proj,
  -- The positions the model was trained for (its config's
  -- max_position_embeddings), the catalog's field: a serving engine's
  -- default context (vLLM V0's chunked-prefill switch, SCHEMA.md).
  max_seq = schema.model.fields.max_seq,
  -- How positions are encoded (absent: rope), the catalog's field.
  positions = T.enum(schema.POSITIONS),
  moe = T.record {
    experts = count(), top_k = count(), shared_experts = count(0),
    -- the first dense_layers dense; every layer_step-th layer MoE after
    -- them (the engine's and the catalog's moe.layer_step; Llama 4
    -- Maverick: 2): judged beside the layers below, as the catalog does
    dense_layers = schema.moe_layer_count(), ffn_hidden = count(), expert_ffn_hidden = count(),
    layer_step = schema.moe_layer_count(),
    -- the width of the dense layers when not ffn_hidden, a shared
    -- expert's when not a routed one's (the engine's names)
    dense_ffn_hidden = count(), shared_ffn_hidden = count(),
    -- group-limited routing, the catalog's moe.groups / group_top_k (the
    -- model's config.json n_group / topk_group): judged below
    groups = count(), group_top_k = count(),
    -- the shared experts' sigmoid gate (Qwen1.5-MoE, Qwen2-MoE), the
    -- catalog's moe.shared_expert_gate
    shared_expert_gate = T.boolean(),
  },
  mla = T.record {
    q_lora_rank = count(0), kv_lora_rank = count(), qk_nope_head_dim = count(),
    qk_rope_head_dim = count(), v_head_dim = count(),
  },
  params_b = T.number { positive = true, max = 1e6 },
  mtp_layers = count(0),
  -- Local attention over the last `size` tokens in `layers` of the layers
  -- (absent: every layer), the catalog's field (FORMAT.md)
  sliding_window = T.record { size = R(count()), layers = count(0) },
  vision = vision_spec(),
}

local case_schema = T.record {
  id = R(text()), kind = R(T.enum { "train", "memory", "infer", "collective", "rl" }),
  model = model_spec,
  hardware = T.record {
    gpu = text(), gpus = count(), gpus_per_node = count(), intra_node = text(),
    inter_node = text(), nics_per_node = count(0),
    -- the host's DRAM (an infer case with workload.offload, a collective
    -- staged through host memory): its theoretical bandwidth, B/s, and its
    -- capacity, bytes
    host_mem_bw = T.number { positive = true, max = 1e15 },
    host_memory = T.number { positive = true, max = 1e15 },
    -- the hosts' CPU maker, where the source names the machine (a DGX A100
    -- is AMD): NCCL prices its network proxy by it (engine/comm_algo.c)
    cpu_vendor = T.enum { "intel", "amd", "arm" },
    -- a collective case: the GPUs one nccl-tests thread drove (-g N)
    gpus_per_thread = count(),
    -- a collective case across nodes: false where the source places each
    -- rank's GPU off its NIC's PCIe switch, so NCCL runs the network
    -- without GPUDirect RDMA (the topology's nic_gdr_off); absent: with it
    gdr = T.boolean(),
    -- the GPUs' board power limit, W, where the source states it
    -- (gp.train's power_limit)
    power_limit = declared("power_limit"),
    -- the SM clock, MHz, the GPUs held through the run where a trace
    -- states it (gp.train's sm_clock)
    sm_clock = declared("sm_clock"),
    -- a train case: the node as a catalog system where the source's node
    -- is not the card's default one (gp.train's system; the HGX 4-GPU
    -- board's mesh, hgx-h200-4gpu)
    system = text(),
  },
  parallel = T.record {
    tp = count(), pp = count(), dp = count(), cp = count(), ep = count(), etp = count(),
    vpp = count(),
    -- DeepSpeed-Ulysses' sequence-parallel size (gp.train's and gp.rl's
    -- ulysses: verl's ulysses_sequence_parallel_size)
    ulysses = declared("ulysses"),
    sp = declared("sp"), zero = T.integer { min = 0, max = 3 },
    -- FSDP's sharding strategy (true: full_shard) and when it reduces
    -- gradients (gpuplan.memory's sharding).
    fsdp = T.enum { false, true, "full_shard", "shard_grad_op", "hybrid_shard" },
    grad_sync = T.enum { "micro_batch", "step" },
    -- which PyTorch FSDP, 1 or 2 (gp.train's fsdp_version)
    fsdp_version = declared("fsdp_version"),
    -- the DP gradient reduction under the backward (gp.train's
    -- overlap_grad_reduce; DeepSpeed's overlap_comm)
    overlap_grad_reduce = declared("overlap_grad_reduce"),
    -- the distributed optimizer's parameter all-gather under the forward
    -- (gp.train's overlap_param_gather; Megatron's overlap_param_gather)
    overlap_param_gather = declared("overlap_param_gather"),
    -- how ZeRO-3 gathers (gp.train's zero3_gather)
    zero3_gather = declared("zero3_gather"),
    -- the collective ZeRO 1/2 reduce gradients with (gp.train's zero_reduce)
    zero_reduce = declared("zero_reduce"),
    -- the ranks of data parallel each ZeRO shard group holds (gp.train's
    -- zero_group: InternEvo's zero1, MiCS's mics_shard_size)
    zero_group = declared("zero_group"),
    -- DeepSpeed's reduce_bucket_size and stage3_prefetch_bucket_size, in
    -- elements (gp.train's of the same names)
    reduce_bucket_size = declared("reduce_bucket_size"),
    -- the once-a-step DP collectives' bucket, in elements (gp.train's
    -- dp_bucket: apex DistributedFusedAdam's bucket_cap_mb)
    dp_bucket = declared("dp_bucket"),
    -- the distributed optimizer's parameter all-gather of the fp8 linears
    -- in one byte (gp.train's fp8_param_gather: NeMo's fp8_params)
    fp8_param_gather = declared("fp8_param_gather"),
    prefetch_bucket_size = declared("prefetch_bucket_size"),
    -- DeepSpeed's stage3_max_live_parameters and stage3_max_reuse_distance
    -- (gp.train's max_live_parameters, max_reuse_distance)
    max_live_parameters = declared("max_live_parameters"),
    max_reuse_distance = declared("max_reuse_distance"),
    -- false where the source builds the model outside deepspeed.zero.Init
    -- and hands it whole to deepspeed.initialize (gp.train's and
    -- gp.memory's zero_init)
    zero_init = declared("zero_init"),
    -- DeepSpeed's data_types.grad_accum_dtype (gp.train's option of that
    -- name) where the source's ds_config states it
    grad_accum_dtype = declared("grad_accum_dtype"),
    -- the DP gradient reduction's dtype, on the megatron stack also its
    -- main-grad buffer's (gp.train's grad_reduce)
    grad_reduce = declared("grad_reduce"),
    -- Megatron-Core's gradient_accumulation_fusion where the source sets it
    -- against the stack's default (gp.train's option of that name)
    gradient_accumulation_fusion = declared("gradient_accumulation_fusion"),
    micro_batch = count(), global_batch = count(),
    recompute = T.enum { "none", "selective", "full", "op" },
    -- Megatron's block recompute: the first N layers of each stage (or
    -- chunk) recompute, the rest keep their activations (gp.train's)
    recompute_layers = count(),
    activation_offload_layers = declared("activation_offload_layers"),
    -- full recompute's checkpoints in host memory (gp.train's
    -- checkpoint_offload: checkpoint_wrapper's offload_to_cpu, DeepSpeed's
    -- cpu_checkpointing)
    checkpoint_offload = declared("checkpoint_offload"),
    -- those copies on a side CUDA stream beside the compute (gp.train's
    -- checkpoint_offload_streams: torchtune's OffloadActivations
    -- use_streams); a time-only option, read by the train kind alone
    checkpoint_offload_streams = declared("checkpoint_offload_streams"),
    -- the activation checkpoint wraps FSDP units from outside, so its
    -- recompute forward gathers them once more (gp.train's
    -- ckpt_outside_fsdp)
    ckpt_outside_fsdp = declared("ckpt_outside_fsdp"),
    first_stage_layers = count(), last_stage_layers = count(),
    -- every stage's layers, first to last (gp.train's stage_layers:
    -- nanotron's cost-balanced split, a pipeline_model_parallel_layout's
    -- ranks); the engine checks pp entries and the model's layers.  An
    -- empty list ([] or {}) was read, and the case went unpredicted with
    -- gp.train's "stage_layers is empty", naming no line: refused here
    stage_layers = (function()
      local list = T.array(count())
      return { name = "array", check = function(v, path)
        local out = list.check(v, path)
        if #out == 0 then
          error({ path = path, msg = "expected each pipeline stage's layers, first to last "
            .. "(a list such as [9, 9, 8, 6]), got an empty list" }, 0)
        end
        return out
      end }
    end)(),
    -- the embedding and the loss each take a layer's place in the
    -- pipeline split (gp.train's split_ends)
    split_ends = declared("split_ends"),
    -- Megatron-Core's recompute_modules (gp.train's, engine/memory_act.c).
    recompute_modules = T.array(T.enum { "layernorm", "mla_up_proj", "moe_act", "core_attn", "moe", "mlpwi",
      "mlp_act" }),
    -- the pipeline schedule (gp.train's schedule; interleaved is vpp's)
    schedule = T.enum { "1f1b", "interleaved", "dualpipe" },
    -- the expert all-to-all under compute (gp.train's ep_overlap;
    -- Megatron-Core's moe_a2a_overlap)
    ep_overlap = declared("ep_overlap"),
    -- TP collectives under the GEMMs (gp.train's tp_overlap; Megatron-Core's
    -- tp_comm_overlap), where the source sets it against its stack profile
    tp_overlap = declared("tp_overlap"),
    -- the TP overlap's forward reduce-scatters in fp8 (gp.train's
    -- tp_overlap_fp8_rs; fp8_buf on proj_fprop and fc2_fprop of NeMo's
    -- ub_tp_comm_overlap_cfg)
    tp_overlap_fp8_rs = declared("tp_overlap_fp8_rs"),
    -- the TP overlap's ring exchange two chunks a GEMM (gp.train's
    -- tp_overlap_aggregate; aggregate: 1 in NeMo's ub_tp_comm_overlap_cfg)
    tp_overlap_aggregate = declared("tp_overlap_aggregate"),
    -- how MoE tokens reach their experts (gp.train's moe_dispatcher;
    -- Megatron-Core's moe_token_dispatcher_type)
    moe_dispatcher = declared("moe_dispatcher"),
    -- the flex dispatcher's backend (gp.train's moe_flex_backend;
    -- Megatron-Core's moe_flex_dispatcher_backend)
    moe_flex_backend = declared("moe_flex_backend"),
    -- CUDA_DEVICE_MAX_CONNECTIONS as the run sets it (gp.train's
    -- cuda_device_max_connections)
    cuda_device_max_connections = declared("cuda_device_max_connections"),
    -- each rank bound to its GPU's NUMA node, where the launcher's source
    -- shows it (gp.train's and gp.rl's numa_bind)
    numa_bind = declared("numa_bind"),
    -- the flex dispatcher's SMs (gp.train's moe_flex_sms; Megatron-Core's
    -- moe_flex_dispatcher_num_sms)
    moe_flex_sms = declared("moe_flex_sms"),
    -- the kernels the MoE router's forward launches as the source counts
    -- them (gp.train's moe_router_ops)
    moe_router_ops = declared("moe_router_ops"),
    -- Transformer Engine's fused permute before its PR #1927 (gp.train's
    -- legacy_permute)
    legacy_permute = declared("legacy_permute"),
    -- Transformer Engine's MXFP8 grouped linear as the run's release
    -- builds it (gp.train's te_mxfp8_grouped)
    te_mxfp8_grouped = declared("te_mxfp8_grouped"),
    -- Megatron-Core's moe_permute_fusion: false is gp.train's unfused_permute
    moe_permute_fusion = T.boolean(),
    -- Megatron-Core's bias_activation_fusion: false is gp.train's unfused_act
    bias_activation_fusion = T.boolean(),
    -- Megatron-Core's apply_rope_fusion: false is gp.train's unfused_rope
    apply_rope_fusion = T.boolean(),
    -- Megatron-Core's moe_router_dtype (gp.train's moe_router_dtype)
    moe_router_dtype = declared("moe_router_dtype"),
    -- how evenly the router spreads tokens over the expert-parallel ranks
    -- as the recipe's router config leaves it (gp.train's and gp.rl's
    -- moe_balance; Megatron-Core's moe_router_load_balancing_type)
    moe_balance = declared("moe_balance"),
    -- the gate that picks a token's experts: a learned router or NeMo
    -- AutoModel's FakeBalancedGate (gp.train's moe_gate; AutoModel's
    -- BackendConfig fake_balanced_gate)
    moe_gate = declared("moe_gate"),
    -- the micro-batches of one pipeline schedule call (gp.train's
    -- pp_microbatches; NeMo AutoModel's local_batch_size /
    -- pp_microbatch_size)
    pp_microbatches = declared("pp_microbatches"),
    -- the experts' buffers padded to a capacity, tokens beyond it dropped
    -- (gp.train's capacity_factor; Megatron-Core's moe_expert_capacity_factor
    -- with moe_pad_expert_input_to_capacity); absent: dropless
    capacity_factor = declared("capacity_factor"),
    -- Transformer Engine's CUDA graph scopes (gp.train's cuda_graph_scope)
    cuda_graph_scope = T.array(T.enum { "attn", "moe_router", "moe_preprocess", "mamba",
      "full_iteration" }),
    -- how fp8 experts get aligned row counts (gp.train's moe_fp8_pad)
    moe_fp8_pad = declared("moe_fp8_pad"),
    -- the experts as Transformer Engine's fused grouped MLP (gp.train's
    -- fused_grouped_mlp; Megatron-Core's use_transformer_engine_op_fuser)
    fused_grouped_mlp = declared("fused_grouped_mlp"),
    offload = T.enum { "optimizer", "params+optimizer" },
    -- the offloaded optimizer's host step as the source runs it: the CPU
    -- threads each rank's process steps it on and ZeRO-Offload's one-step
    -- delayed update (gp.train's host_threads and delayed_update)
    host_threads = declared("host_threads"), delayed_update = declared("delayed_update"),
    dp_attention = declared("dp_attention"), redundant_experts = count(0),
    -- experts placed by an expert-parallel load balancer (gp.infer's eplb)
    eplb = declared("eplb"),
  },
  workload = T.record(media_fields {
    seq_len = count(), precision = T.enum { "fp32", "tf32", "bf16", "fp16", "fp8", "fp4" },
    -- the linears' inputs cached in fp8 (gp.train's fp8_activations)
    fp8_activations = declared("fp8_activations"),
    -- where an fp8 cast's scale comes from (gp.train's fp8_scaling)
    fp8_scaling = declared("fp8_scaling"),
    -- packed samples' length, attention within each (gp.train's packed_len)
    packed_len = declared("packed_len"),
    -- micro-batches padded to their longest sample, the mask handed to
    -- transformers' FlashAttention-2 path (gp.train's pad_mask)
    pad_mask = declared("pad_mask"),
    -- the padding's share of the tokens (gp.train's pad_share)
    pad_share = declared("pad_share"),
    -- where MoE router weights multiply (gp.train's moe_probs)
    moe_probs = T.enum { "combine", "activation" },
    -- the fused attention kernel the source names (gp.train's attn_kernel)
    attn_kernel = declared("attn_kernel"),
    -- the cuDNN release the run's container or image carries (gp.train's
    -- cudnn)
    cudnn = release("cuDNN release", "a cuDNN release", "9.11"),
    -- the model-state bytes the run keeps where its stack's default does
    -- not say them (gp.train's recipe): "bf16" for a model loaded in
    -- bf16 and trained by torch.optim.AdamW with no autocast and no fp32
    -- master (AdamW's states are zeros_like(p), the parameter's dtype)
    recipe = T.enum { "mixed-16", "mixed-16-rem", "megatron-18", "fp32", "bf16", "fp8",
      "fp8-16-rem", "deepseek-fp8", "deepspeed-bf16" },
    -- the fused attention in FP8 (gp.train's fp8_attention; Transformer
    -- Engine's fp8_dpa)
    fp8_attention = declared("fp8_attention"),
    -- the dense MLP's down projection in bf16 under the fp8 recipe
    -- (gp.train's mlp_down_bf16; HabanaAI Megatron-LM's --fp8-coverage
    -- mlp_row_parallel=False)
    mlp_down_bf16 = declared("mlp_down_bf16"),
    -- the model's own eager attention code (gp.train's attn_clamp, eager_softmax,
    -- attn_where)
    attn_clamp = declared("attn_clamp"), eager_softmax = declared("eager_softmax"),
    attn_where = declared("attn_where"),
    -- the RMSNorm as one fused kernel under the eager modules (gp.train's
    -- and gp.memory's eager_norm false: torchtitan's fused_rmsnorm)
    eager_norm = declared("eager_norm"),
    -- q, k, v copied to the heads' layout, by torch.matmul or by the
    -- model's .contiguous() (gp.train's attn_head_copies)
    attn_head_copies = declared("attn_head_copies"),
    -- PyTorch's addmm before its cuBLASLt bias epilogue (gp.train's addmm_bias)
    addmm_bias = declared("addmm_bias"),
    -- the Adam step's implementation (gp.train's optimizer_impl)
    optimizer_impl = declared("optimizer_impl"),
    -- fp32 weights under torch.autocast (gp.memory's autocast)
    autocast = declared("autocast"),
    -- false where the model's own code has no fused attention to run
    -- (gp.train's flash; Qwen-VL's remote QWenAttention always calls its
    -- matmul-softmax _attn)
    flash = declared("flash"),
    -- the run's kernels where its source says (gp.train's kernels: eager
    -- for a PyTorch model run without torch.compile)
    kernels = declared("kernels"),
    -- the training switches a launch script or config sets (SCHEMA.md):
    -- dropout on or off (gp.train's dropout: Megatron's --attention-dropout
    -- and --hidden-dropout both 0.0 is false) and the loss as Megatron-Core's
    -- unfused vocab-parallel cross-entropy (gp.train's unfused_loss:
    -- --cross-entropy-loss-fusion is false); the kinds that read them are
    -- M.WORKLOAD_READ's
    dropout = declared("dropout"), unfused_loss = declared("unfused_loss"),
    -- and the fused loss as Megatron-Core's native one or not (gp.train's
    -- mcore_loss: false under --cross-entropy-fusion-impl te)
    mcore_loss = declared("mcore_loss"),
    -- the token embedding looked up as a one-hot matmul (gp.train's
    -- emb_matmul: Praxis' lookup_style 'matmul')
    emb_matmul = declared("emb_matmul"),
    -- LoRA's adapters added into the weight, W + A B^T (gp.train's
    -- lora_merged: Praxis' LoRA layers)
    lora_merged = declared("lora_merged"),
    -- the output layer and loss as Liger-Kernel's fused linear
    -- cross-entropy (gp.train's and gp.memory's fused_linear_ce)
    fused_linear_ce = declared("fused_linear_ce"),
    -- the TP output head's logits gathered to every rank (gp.train's and
    -- gp.memory's replicated_logits)
    replicated_logits = declared("replicated_logits"),
    -- the optimizer states paged in CUDA managed memory, outside PyTorch's
    -- allocator (gp.memory's and gp.train's paged_optimizer: bitsandbytes'
    -- Paged* optimizers; false for an 8-bit optimizer that allocates
    -- through PyTorch, torchao's AdamW8bit or bitsandbytes' AdamW8bit)
    paged_optimizer = declared("paged_optimizer"),
    -- an fp32 moving average of the parameters the run keeps, on the GPU
    -- or in host memory (gp.train's and gp.memory's ema: none, gpu, cpu)
    ema = declared("ema"),
    -- the memory read before the first optimizer step, the optimizer's
    -- states not yet allocated (gp.memory's before_step)
    before_step = declared("before_step"),
    -- K and V copied to every query head before the attention kernel
    -- (gp.train's and gp.memory's kv_repeat: torchtitan's repeat_kv,
    -- nanoVLM's repeat_interleave), a choice of the model's own code
    kv_repeat = declared("kv_repeat"),
    -- each TP column-parallel projection gathering its own input and
    -- reduce-scattering its own input gradient (gp.train's tp_input_per_linear)
    tp_input_per_linear = declared("tp_input_per_linear"),
    method = T.enum { "pretrain", "full", "lora", "qlora", "infer", "grpo", "ppo" },
    -- the adapters' rank, the matrices they adapt and, where the source's
    -- code states it, their input dropout (gp.train's lora_dropout)
    lora = T.record { rank = count(), targets = T.array(T.string()),
                      dropout = declared("lora_dropout") },
    optimizer = T.enum { "adamw", "adam8bit", "sgd", "muon" },
    weight_dtype = weight_format(),
    kv_dtype = T.enum { "fp32", "bf16", "fp16", "fp8", "int8", "fp4", "int4" },
    batch = count(), input_len = count(), output_len = count(), concurrency = count(),
    -- a run of this many requests issued at once (gp.infer's requests)
    num_requests = count(),
    -- how that run's output lengths spread around output_len (gp.infer's
    -- output_dist: the dataset its client drew them from)
    output_dist = declared("output_dist"),
    -- the requests' max_tokens, the longest of those outputs (gp.infer's
    -- output_max)
    output_max = declared("output_max"),
    -- the batch sizes the run captured CUDA graphs at (gp.infer's graph_sizes)
    graph_sizes = T.array(count()),
    -- whether llama.cpp replayed one-token steps as CUDA graphs (gp.infer's
    -- cuda_graphs; absent: a case dated before 2024-05-08 did not)
    cuda_graphs = declared("cuda_graphs"),
    -- what the run's sampling parameters switch on in the sampler (gp.infer's
    -- sampling, its stages M.SAMPLING: random, top_p, penalties), where the
    -- source states them
    sampling = T.array(T.enum(require("gpuplan.infer").SAMPLING)),
    -- the TensorRT-LLM command that served the run (SCHEMA.md): trtllm-serve
    -- captures TorchLlmArgs' default CUDA graphs, trtllm-bench its own
    -- padded list (the infer predictor's trtllm profile)
    server = T.enum { "trtllm-serve", "trtllm-bench", "async-llm-engine" },
    -- the software stack that ran (SCHEMA.md): a profile of the kind's
    -- predictor by name, checked against its list once the kind is known
    framework = T.string(),
    -- the share of the prompt tokens the engine found in its prefix cache
    -- (gp.infer's prefix_hit): their prefill skipped
    prefix_hit = declared("prefix_hit"),
    -- the chat template's tokens the server adds to each prompt, which
    -- the client's input count leaves out (SCHEMA.md): the infer
    -- predictor prefills input_len + these
    template_tokens = count(),
    -- the serving engine's limits where the run's config sets them
    -- (SCHEMA.md; gp.infer's max_batch, max_num_tokens and
    -- kv_free_fraction, the names rl's rollout engine states them by):
    -- sequences a step at most, tokens a step at most, the KV pool's share
    -- of the memory free once the model is loaded
    max_batch = count(), max_num_tokens = count(),
    kv_free_fraction = declared("kv_free_fraction"),
    -- the share of the card the engine holds back from its budget where
    -- the run states it (gp.infer's margin: 1 - vLLM's
    -- gpu_memory_utilization, which NIM sets for itself; its metrics'
    -- vllm:cache_config_info reports it)
    margin = declared("margin"),
    -- the KV pool in tokens the engine reported (gp.infer's kv_tokens:
    -- vLLM's vllm:cache_config_info kv_cache_size_tokens)
    kv_tokens = count(),
    -- the prompts cut into chunks that ride in the decode steps, where the
    -- run's command turns it on (gp.infer's chunked_prefill: vLLM's
    -- --enable-chunked-prefill, TensorRT-LLM's --enable_chunked_prefill)
    chunked_prefill = declared("chunked_prefill"),
    -- vLLM V0's --num-scheduler-steps where the run's config sets it
    -- (SCHEMA.md): decode steps a schedule runs (multi-step scheduling)
    scheduler_steps = count(),
    -- one static batch run to completion, where the source's benchmark
    -- ran it so (gp.infer's batching: TensorRT-LLM's gptSessionBenchmark)
    batching = declared("batching"),
    -- MoE serving (SCHEMA.md): one pool measured alone, MTP, the overlap.
    phase = T.enum { "decode", "prefill" }, itl_max_ms = T.number { positive = true, max = 1e6 },
    mtp = count(0), acceptance = declared("acceptance"),
    two_batch_overlap = declared("two_batch_overlap"),
    single_batch_overlap = declared("single_batch_overlap"),
    swap_ab = declared("swap_ab"), prefill_tokens = count(),
    -- inference: layers that do not fit the card in host memory (gp.infer's offload)
    offload = T.boolean(), offload_layers = count(), pin_memory = declared("pin_memory"),
    unfused_dequant = declared("unfused_dequant"),
    -- the quantisation method of a weight-only checkpoint as the source names
    -- it (AWQ, GPTQ): which runtime kernel runs it where the runtime has one
    -- per method (the infer predictor's vllm profile: awq_gemm before 0.5.3)
    quant_method = T.enum { "awq", "gptq" },
    expert_weight_dtype = weight_enum { "bf16", "fp16", "fp8", "int8", "int4", "fp4", "mxfp4" },
    imbalance = T.number { min = 1, max = 1e3 },
  }),
  measured = R(T.record {
    metric = R(text()), unit = text(),
    value = R(T.number { min = M.VALUE_MIN, max = M.VALUE_MAX }),
    -- the statistic over the run's requests or token gaps the source
    -- reports (SCHEMA.md): absent, the mean
    statistic = T.enum { "mean", "median" },
  }),
  -- One GRPO/PPO step (kind rl, SCHEMA.md).
  rl = T.record {
    prompts = count(), group = count(), prompt_len = count(), response_len = count(),
    train_global_batch = count(), colocated = declared("colocated"), rollout_gpus = count(),
    rollout_tp = count(), rollout_pp = count(), rollout_ep = count(), staleness = count(0),
    refit_drain = declared("refit_drain"),
    rollout_memory = declared("rollout_memory"),
    -- PPO's reward model (true: of the actor's shape) and critic: model
    -- records of their own, read by model_spec (one place for its fields)
    reward_model = { name = "boolean or model", check = function(x, path)
      if type(x) == "boolean" then return x end
      return model_spec.check(x, path)
    end },
    critic_model = { name = "model", check = function(x, path)
      return model_spec.check(x, path)
    end }, ref_gpus = count(), reward_gpus = count(),
    critic_gpus = count(), colocate_critic_reward = declared("colocate_critic_reward"),
    rollout_engine = T.enum { "vllm", "hybrid", "hf" }, generation_batch = count(),
    response_max = count(), response_min = count(), rollout_eager = declared("rollout_eager"),
    rollout_dp_attention = declared("rollout_dp_attention"),
    offload_states = declared("offload_states"), param_offload = declared("param_offload"),
    ref_host = declared("ref_host"), ref_reward_offload = declared("ref_reward_offload"),
    ref_model = declared("ref_model"), async_engine = T.boolean(), vllm_v0 = declared("vllm_v0"),
    -- the rollout's vLLM release (SCHEMA.md rl.vllm_version), written
    -- plain as source.version is and gp.rl's vllm_version takes
    vllm_version = release("release", "a release", "0.4.2"),
    logprob_batch = count(), sequence_packing = T.boolean(), fuse_loss = T.boolean(),
    max_batch = count(), max_num_tokens = count(),
    -- verl's use_dynamic_bsz ppo_max_token_len_per_gpu (gp.rl's
    -- token_batch)
    token_batch = declared("token_batch"),
    response_clip = declared("response_clip"), base_checkpoint = declared("base_checkpoint"),
    -- DAPO's dynamic sampling (SCHEMA.md rl.filter_keep; gp.rl's
    -- filter_keep): 0 passes here and gp.rl refuses it by name (the kept
    -- share is in (0, 1])
    filter_keep = declared("filter_keep"),
    ema = declared("ema", "rl"),
    -- verl's trainer.test_freq and the validation set's prompts (SCHEMA.md
    -- rl.val_every)
    val_every = declared("val_every"), val_prompts = declared("val_prompts"),
    val_batch = declared("val_batch"), critic_batch = declared("critic_batch"),
    -- verl's batches without use_remove_padding (SCHEMA.md rl.pad_to)
    pad_to = declared("pad_to"), critic_pad_to = declared("critic_pad_to"),
    critic_token_batch = declared("critic_token_batch"),
  },
  -- version: the release the run used (SCHEMA.md), major.minor[.patch];
  -- commit: the commit of a project without releases the source names
  -- (7 to 40 hex digits); date: the day the source published the run,
  -- YYYY-MM-DD
  source = T.record { title = text(), where = text(), id = text(), commit = {
    name = "commit", check = function(x, path)
      if type(x) ~= "string" or not x:match("^%x+$") or #x < 7 or #x > 40 then
        error({ path = path, msg = 'expected a git commit as "9dec370" (7 to 40 hex digits), got '
          .. schema.show(x) }, 0)
      end
      return x:lower()
    end }, version = release("release", "a release", "0.3.0"), date = T.day() },
  notes = text(),
  collective = T.enum { "all_reduce", "all_gather", "reduce_scatter", "all_to_all",
                        "broadcast", "reduce", "send_recv" },
  -- Message bytes, up to gpuplan comm's sweep limit of 2^50 (1 PiB).
  bytes = T.integer { min = 0, max = 2 ^ 50 },
  -- NCCL_NVLS_ENABLE as the run set it (gp.comm's nvls): a collective's
  nvls = declared("nvls"),
  -- NCCL_ALGO where the run forced it, in gp.comm's names (SCHEMA.md):
  -- a collective's, read by its predictor in place of the tuner's pick
  algo = T.enum(require("gpuplan.comm").algos),
}

-- The case reader's schema (tests/lua/validate_schema.t checks that it
-- accepts every field validation/SCHEMA.md documents).
M.case_schema = case_schema

-- The parallel fields each kind's predictor reads (lua/gpuplan/predict/
-- KIND.lua: the par.NAME it passes on), besides dp, which the reader
-- checks against the GPUs for every kind.  The schema is one record for
-- all kinds, so a field of another kind's predictor -- tp_overlap in an
-- rl case -- passed its check and was ignored in silence: the row was
-- priced without what the case says.  tests/lua/validate_kind_fields.t
-- runs every shipped case with its parallel table watched and checks
-- that each predictor reads no field outside its set.
local function set(names) return require("gpuplan.args").set(names) end
M.PARALLEL_READ = {
  train = set [[tp pp cp ulysses ep etp vpp sp zero zero_group fsdp fsdp_version overlap_grad_reduce overlap_param_gather grad_sync zero3_gather zero_reduce
    reduce_bucket_size prefetch_bucket_size max_live_parameters max_reuse_distance zero_init dp_bucket fp8_param_gather
    grad_accum_dtype grad_reduce gradient_accumulation_fusion micro_batch global_batch recompute
    recompute_layers recompute_modules activation_offload_layers checkpoint_offload checkpoint_offload_streams
    ckpt_outside_fsdp first_stage_layers last_stage_layers stage_layers split_ends schedule ep_overlap tp_overlap tp_overlap_fp8_rs tp_overlap_aggregate
    moe_dispatcher moe_flex_backend cuda_device_max_connections numa_bind moe_flex_sms moe_router_ops moe_permute_fusion bias_activation_fusion apply_rope_fusion moe_router_dtype cuda_graph_scope moe_fp8_pad
    legacy_permute te_mxfp8_grouped fused_grouped_mlp moe_balance moe_gate pp_microbatches capacity_factor offload
    host_threads delayed_update]],
  rl = set [[tp pp cp ulysses ep etp sp zero zero_group fsdp fsdp_version micro_batch global_batch recompute first_stage_layers
    last_stage_layers stage_layers moe_permute_fusion bias_activation_fusion apply_rope_fusion moe_router_dtype numa_bind offload
    grad_accum_dtype moe_dispatcher moe_flex_backend moe_flex_sms moe_balance]],
  infer = set [[tp pp ep micro_batch dp_attention redundant_experts eplb]],
  collective = {},
}
-- The memory kind reads the training layout's fields that size the
-- breakdown (lua/gpuplan/predict/memory.lua hands each to gpuplan.memory,
-- as gp.train's memory does): a subset of train's, taken from that set so
-- a memory case and its training sibling state a field under one name and
-- one case type (the schema above).  The rest of train's -- overlaps,
-- bucket sizes, dispatchers -- set the step's time, not its bytes.
do
  local mem = {}
  for name in ([[tp pp cp ulysses ep etp vpp sp zero zero_group fsdp fsdp_version grad_sync grad_reduce micro_batch global_batch recompute
      recompute_layers recompute_modules activation_offload_layers checkpoint_offload
      first_stage_layers last_stage_layers stage_layers split_ends schedule offload zero_init]]):gmatch("%S+") do
    assert(M.PARALLEL_READ.train[name], "memory reads train's parallel." .. name)
    mem[name] = true
  end
  M.PARALLEL_READ.memory = mem
end
-- The workload's training switches and the kinds whose predictors hand
-- them to their calls: the train predictor both (gp.train's dropout and
-- unfused_loss), the memory predictor dropout (gp.memory's: the masks it
-- keeps; gp.memory prices no loss kernels).  workload.flash likewise (a
-- model whose own code has no fused attention): the train and memory
-- predictors hand it to gp.train and gp.memory, the infer predictor to
-- gp.infer (a runtime run with FlashAttention off: llama.cpp's
-- flash_attn), a serving memory case (method infer) does not.  The rl
-- predictor and the infer predictor's other switches read none of
-- them, so a case of theirs that stated one would be priced without it:
-- refused, as an unread parallel field is.  workload.prefix_hit the other
-- way: the infer predictor alone hands it on (gp.infer's prefix_hit, for
-- one model's replicas and the MoE serving model alike), and
-- workload.template_tokens (added to the input it hands gp.infer).
-- The serving engine's limits (max_batch, max_num_tokens,
-- kv_free_fraction), its chunked prefill and the command that served it
-- (server) likewise: the infer predictor hands them to gp.infer;
-- a training or memory case has no serving engine to cap, and an rl case
-- states its rollout engine's in rl.max_batch and rl.max_num_tokens.
M.WORKLOAD_READ = { dropout = set "train memory", unfused_loss = set "train",
                    mcore_loss = set "train",
                    emb_matmul = set "train",
                    lora_merged = set "train",
                    attn_where = set "train", attn_head_copies = set "train",
                    addmm_bias = set "train", optimizer_impl = set "train memory",
                    autocast = set "memory",
                    fused_linear_ce = set "train memory",
                    replicated_logits = set "train memory",
                    paged_optimizer = set "train memory",
                    ema = set "train memory",
                    before_step = set "memory",
                    kv_repeat = set "train memory",
                    tp_input_per_linear = set "train",
                    flash = set "train memory infer", prefix_hit = set "infer",
                    template_tokens = set "infer",
                    output_dist = set "infer", output_max = set "infer",
                    sampling = set "infer",
                    max_batch = set "infer", max_num_tokens = set "infer",
                    kv_free_fraction = set "infer", chunked_prefill = set "infer",
                    margin = set "infer", kv_tokens = set "infer",
                    scheduler_steps = set "infer", cuda_graphs = set "infer",
                    batching = set "infer",
                    server = set "infer", framework = set "train memory infer rl" }
-- a memory case of a serving job is sized on its runtime's profile too
-- (predict/memory.lua's litgpt infer entries)
M.WORKLOAD_READ.framework["memory (method infer)"] = true

-- What is wrong with the framework case c states (workload.framework), or
-- nil: it must name one of its kind's predictor profiles (the predictor's
-- frameworks list), so a misspelt or another kind's name is refused, not
-- priced on gp's defaults.
local function framework_problem(c)
  local wl = c.workload
  local fw = type(wl) == "table" and require("gpuplan.predict.case").v(wl.framework) or nil
  if fw == nil then return nil end
  local names = require("gpuplan.predict." .. c.kind).frameworks
  for _, n in ipairs(names) do if n == fw then return nil end end
  -- "an infer framework", "an rl framework" (said "a infer framework")
  return string.format("'%s' is not %s %s framework (%s)", require("gpuplan.units").oneline(fw),
    (c.kind == "infer" or c.kind == "rl") and "an" or "a", c.kind, table.concat(names, ", "))
end

-- The first of those switches (sorted) case c states that its kind does
-- not read: its name and that kind as a message names it, or nil.
local function unread_switch(c)
  local wl = c.workload
  if type(wl) ~= "table" then return nil end
  local names = {}
  for k in pairs(M.WORKLOAD_READ) do names[#names + 1] = k end
  table.sort(names)
  -- a memory case of a serving job (method infer) trains nothing: no
  -- dropout to keep
  local kind = c.kind == "memory" and wl.method == "infer" and "memory (method infer)" or c.kind
  for _, k in ipairs(names) do
    if wl[k] ~= nil and not M.WORKLOAD_READ[k][kind] then return k, kind end
  end
end

-- The refusal of a case's field that its kind (kind: the kind as said)
-- does not read, naming the kinds that do (reads(k) true), one message
-- for the parallel and workload fields.
local function unread_error(where, field, kind, reads)
  local users = {}
  for _, k in ipairs { "train", "memory", "rl", "infer" } do
    if reads(k) then users[#users + 1] = k end
  end
  error(string.format("%s: field '%s': %s cases do not use it (only %s cases do), so it "
    .. "would be ignored; remove it or model it for %s", where, field, kind,
    #users > 1 and table.concat(users, ", ", 1, #users - 1) .. " and " .. users[#users]
      or users[1] or "no", kind), 0)
end

-- A field a kind does not read may still state the value its predictor
-- takes without it -- no context parallelism, no sequence parallelism, no
-- FSDP, no ZeRO -- as the inference and RL cases write their layouts in
-- full; any other value of it is a claim the prediction would not price.
M.PARALLEL_NEUTRAL = { tp = 1, pp = 1, cp = 1, ulysses = 1, ep = 1, vpp = 1, sp = false, fsdp = false,
                       zero = 0 }

-- The first parallel field of case c (sorted) that its kind does not read
-- with a value that says something: its name, or nil.
local function unread_field(c)
  local read = M.PARALLEL_READ[c.kind]
  local par = c.parallel
  if not read or type(par) ~= "table" then return nil end
  local names = {}
  for k in pairs(par) do names[#names + 1] = k end
  table.sort(names)
  for _, k in ipairs(names) do
    if k ~= "dp" and not read[k] and par[k] ~= M.PARALLEL_NEUTRAL[k] then return k end
  end
end

local function short(id)
  if #id > 60 then return id:sub(1, 60) .. "..." end
  return id
end

-- The line each case of a case file starts on, and the line of each of
-- its fields ("parallel.tp"), from the text cjson decoded (it keeps no
-- positions): lines[i][""] is case i's, lines[i]["parallel.tp"] its
-- field's.  Scanned only when a case is refused, so the error can name
-- FILE:LINE as a JSON syntax error does (docs/output.md: "one line
-- naming the file:line").
local function case_lines(text)
  local lines, stack, line, i, n = {}, {}, 1, 1, #text
  local key, case = nil, 0
  while i <= n do
    local j = text:find('[%[%]{}",\n]', i)
    if not j then break end
    local ch = text:sub(j, j)
    if ch == "\n" then
      line = line + 1
    elseif ch == '"' then
      local k = j + 1
      while true do
        local q = text:find('["\\]', k)
        if not q then q = n + 1 break end
        if text:sub(q, q) == "\\" then k = q + 2 else k = q break end
      end
      local str = text:sub(j + 1, k - 1)
      -- A key: the string is followed by ':' in an object.
      local top = stack[#stack]
      if top and top.obj and text:match("^%s*:", k + 1) then key = str end
      if key == str and top and top.obj and #stack >= 2 and lines[case] then
        local path = {}
        for d = 3, #stack do path[#path + 1] = stack[d].key end
        path[#path + 1] = str
        local name = table.concat(path, ".")
        if lines[case][name] == nil then lines[case][name] = line end
      end
      j = k
    elseif ch == "," and #stack == 1 or ch == "[" and #stack == 0 then
      -- A case starts at the next token, whatever its type.
      local s = text:find("%S", j + 1) or n
      case = case + 1
      lines[case] = { [""] = line + select(2, text:sub(j + 1, s - 1):gsub("\n", "")) }
      if ch == "[" then stack[1] = { obj = false } end
    elseif ch == "{" or ch == "[" then
      local top = stack[#stack]
      stack[#stack + 1] = { obj = ch == "{", key = top and top.obj and key or nil }
      key = nil
    elseif ch == "}" or ch == "]" then
      stack[#stack] = nil
      key = nil
    end
    i = j + 1
  end
  return lines
end

-- err, a refusal of case i of path's text ("PATH: case 'ID': field
-- 'F': ..."), with the line of the field it names, else of the case,
-- after the file's name.
local function at_line(err, path, text, i, lines)
  local head = path .. ": case "
  if type(err) ~= "string" or err:sub(1, #head) ~= head then return err end
  local ok = true
  if not lines then ok, lines = pcall(case_lines, text) end
  local l = ok and lines[i]
  if not l then return err end
  -- "unknown kind 'trian'" names no field but is the kind's (it was put
  -- at the case's first line, the kind some lines below)
  local field = err:match(": field '([^']+)'") or (err:find(": unknown kind ", 1, true) and "kind")
  -- A list's element ("parallel.recompute_modules[2]", "a.b[1].c") is
  -- found at its list's key: the scan keeps objects' keys alone, and
  -- the case's first line named no field.  Else the nearest enclosing
  -- field the scan holds.
  local line = field and l[field]
  if field and not line then
    local f = field:gsub("%[%d+%].*$", "")
    while f ~= "" and not l[f] do f = f:match("^(.*)%.[^.]*$") or "" end
    line = l[f]
  end
  line = line or l[""]
  return string.format("%s:%d: case %s", path, line, err:sub(#head + 1))
end

local read_cases

-- The text of each case file read (path -> { text, lines }), kept for a
-- case's reason when it is not predicted: gpuplan.predict.case names the
-- case's file and field ("FILE: case 'ID': field 'hardware.gpu': unknown
-- gpu ..."), and its line is found as a refusal's is, the file scanned
-- once, only when a reason names it (reading the shipped file is no
-- slower).
local read_texts = {}

-- reason, the reason a case read from a file is not predicted, with the
-- line of the field it names (else of the case) after the file's name.
local function reason_at_line(reason, case)
  local path, i = case._file, case._at
  local t = type(path) == "string" and read_texts[path]
  if not t or type(i) ~= "number" then return reason end
  if not t.lines then
    local ok, lines = pcall(case_lines, t.text)
    t.lines = ok and lines or {}
  end
  return at_line(reason, path, t.text, i, t.lines)
end

-- A predictor's refusal of a case read from a file ("train: ep 2 given
-- for a dense model", "does not fit: ...", raised or returned as its
-- reason), placed as the reader's own refusals are: "FILE:LINE: case
-- 'ID': [field 'F': ]MSG", the message's words kept.  The field is the
-- one the refusal is about where the message says so: a case field
-- named by its path ("model.moe.experts is required",
-- "workload.offload: ..."), or an option named with the case's value of
-- the one field of the file that carries that name ("ep 2" where the
-- case gives parallel.ep 2; "flash = false"), through the map of fields
-- to lines the reader's checks use (case_lines).  Else the case's line.
-- A case not read from a file (a script's table) keeps the bare words.
local function refusal_at_line(msg, case)
  local path, i = case._file, case._at
  local t = type(path) == "string" and read_texts[path]
  if not t or type(i) ~= "number" or type(case.id) ~= "string" then return nil end
  if msg:sub(1, #path + 1) == path .. ":" then return nil end
  if not t.lines then
    local ok, lines = pcall(case_lines, t.text)
    t.lines = ok and lines or {}
  end
  local l = t.lines[i]
  if not l then return nil end
  -- the words after the planner's and the verdict's heads ("rl: training
  -- step: ", "does not fit: "): where an option or a field leads
  local body = msg
  while true do
    local rest = body:match("^[%a][%w ]*: (.*)$")
    if not rest or rest == body then break end
    body = rest
  end
  local field
  local dotted = body:match("^(%a[%w_]*%.[%w_%.]*%w)[%s:]")
  if dotted then
    field = dotted
  else
    local name, val = body:match("^(%a[%w_]*) =? ?([^%s,:;]+)")
    if name then
      local function value(f)
        local x = case
        for part in f:gmatch("[^.]+") do
          if type(x) ~= "table" then return nil end
          x = x[part]
        end
        return x
      end
      local found
      for f in pairs(l) do
        if f == name or f:sub(-#name - 1) == "." .. name then
          local x = value(f)
          if type(x) == "number" then x = math.tointeger(x) or string.format("%g", x) end
          if x ~= nil and type(x) ~= "table" and tostring(x) == val then
            if found then found = false break end
            found = f
          end
        end
      end
      field = found or nil
    end
  end
  local err = string.format("%s: case '%s': %s%s", path, short(case.id),
    field and ("field '" .. field .. "': ") or "", msg)
  err = at_line(err, path, t.text, i, l and t.lines)
  -- the shipped record, read when no file is given, by the name its
  -- help gives it, not this install's absolute path (which would put
  -- the machine's directories in every report of the shipped cases)
  local shipped = require("gpuplan.config").root .. "/validation/cases.json"
  if path == shipped and err:sub(1, #path + 1) == path .. ":" then
    err = "validation/cases.json" .. err:sub(#path + 1)
  end
  return err
end

local function read(path, seen)
  local at = {}
  local ok, r = pcall(read_cases, path, seen, at)
  if ok then return r end
  -- a name the case's field does not take (an enum's value, the kind, the
  -- metric) is a usage error, exit 2, as an unknown name on the command
  -- line is; its mark is the message's, so the one with the line is
  -- marked again
  local usage = require("gpuplan.args").is_usage(r)
  if at.case then r = at_line(r, path, at.text, at.case) end
  if usage and type(r) == "string" then
    r = require("gpuplan.args").usage(require("gpuplan.units").oneline(r))
  end
  error(r, 0)
end

-- at: the text read and the case being checked, for read's error.
function read_cases(path, seen, at)
  seen = seen or {}
  local text_, rerr = require("gpuplan.files").read(path, "case")
  if not text_ then
    if rerr:find(": cannot open", 1, true) then
      error(string.format("cannot open case file '%s': %s", path,
        rerr:match(": cannot open %((.*)%)$") or rerr), 0)
    elseif rerr:find(": is a directory", 1, true) then
      error(string.format("cannot read case file '%s': is a directory", path), 0)
    end
    error(rerr, 0)
  end
  -- Under pcall: a message handler of a caller does not run on the
  -- decoder's errors.
  local ok, data = pcall(cjson.decode, text_)
  if not ok then
    error(require("gpuplan.files").json_error(path, text_, data), 0)
  end
  local dup = require("gpuplan.files").json_duplicate(path, text_)
  if dup then error(dup, 0) end
  at.text = text_
  -- cjson decodes [] and {} alike: ask the text.
  if type(data) ~= "table" or not text_:match("^%s*%[") then
    -- where the value starts, and what it is: a case written alone as
    -- an object ({"id": ...}) is the usual one
    local lead = text_:match("^%s*")
    error(string.format("%s:%d: expected a JSON array of cases ([{...}, ...]), got %s", path,
      select(2, lead:gsub("\n", "")) + 1,
      type(data) == "table" and "an object (one case? put it in [ ])"
        or data == cjson.null and "null" or ("a " .. type(data))), 0)
  end
  -- Every element is a case object, null included: stripping nulls first
  -- left a hole, and [null, {...}] read as no cases at all.
  for i = 1, #data do
    local c = data[i]
    at.case = i
    if type(c) ~= "table" or (c[1] ~= nil and c.id == nil) then
      error(string.format("%s: case %d: expected a case object, got %s", path, i,
        c == cjson.null and "null" or type(c) == "table" and "an array" or
        ("a " .. type(c))), 0)
    end
  end
  strip_nulls(data)
  for i, c in ipairs(data) do
    at.case = i
    local where = string.format("%s: case %d", path, i)
    if c.id == nil then error(where .. ": missing 'id'", 0) end
    if type(c.id) ~= "string" then
      error(string.format("%s: field 'id': expected a string, got %s", where,
        type(c.id) == "number" and string.format("%g", c.id) or type(c.id)), 0)
    end
    -- The id names the case's row in every table and --explain's
    -- argument: "" printed a row with no name, and a newline broke the
    -- text table's row in two.  (A long id is printed whole:
    -- tests/cli/hardening.t.)
    local bad_id = c.id == "" and "must not be empty (it names the case's row and --explain's case)"
      or c.id:find("%c") and string.format("control character %s at byte %d (text only)",
        schema.show(c.id:sub(c.id:find("%c"))), c.id:find("%c"))
    if bad_id then error(string.format("%s: field 'id': %s", where, bad_id), 0) end
    where = string.format("%s: case '%s'", path, short(c.id))
    local first = seen[c.id]
    if first and first[1] == path and first[2] == i then
      error(string.format("%s: the file is given twice", path), 0)
    elseif first then
      error(string.format("%s (case %d) repeats the id of %scase %d", where, i,
        first[1] == path and "" or first[1] .. " ", first[2]), 0)
    end
    seen[c.id] = { path, i }
    if c.kind == nil then
      error(where .. ": missing 'kind' (train, memory, infer, collective, rl)", 0)
    end
    if not M.kinds[c.kind] then
      error(require("gpuplan.args").usage(string.format("%s: unknown kind %s (train, memory, infer, collective, rl)", where,
        type(c.kind) == "string" and ("'" .. c.kind .. "'") or schema.show(c.kind))), 0)
    end
    -- Each part named as a field, so the message carries its line: a
    -- value written as a string ("7000") was "'measured' needs a metric
    -- and a numeric value" at the case's first line.
    local m = c.measured
    if type(m) ~= "table" then
      error(string.format("%s: %s", where, m == nil and "missing 'measured' ({\"metric\": ..., "
        .. "\"value\": ...})" or ("field 'measured': expected an object {metric, value, unit}, got "
        .. schema.show(m))), 0)
    end
    if type(m.metric) ~= "string" then
      error(string.format("%s: field 'measured.metric': %s", where, m.metric == nil
        and "missing (the metric's name, e.g. tokens_per_s_per_gpu)"
        or ("expected the metric's name, got " .. schema.show(m.metric))), 0)
    end
    if type(m.value) ~= "number" then
      error(string.format("%s: field 'measured.value': %s", where, m.value == nil
        and "missing (the measured number)"
        or ("expected a number, got " .. schema.show(m.value))), 0)
    end
    if not (m.value > 0 and m.value < math.huge) then
      error(where .. ": field 'measured.value': must be a positive finite number", 0)
    end
    -- _file is this reader's own mark (below): a case read, edited and
    -- written back (cjson.encode) reads again, marked with its new file.
    c._file, c._at = nil, nil
    local _, e = schema.check(c, case_schema)
    if e then
      local msg = string.format("%s: %s%s", where, e.path ~= "" and ("field '" .. e.path .. "': ") or "",
        e.msg)
      error(e.enum and require("gpuplan.args").usage(msg) or msg, 0)
    end
    -- Which layers are MoE (model.moe.dense_layers, layer_step) is a
    -- count of the case's layers: past them no layer would be, which the
    -- model would only refuse at prediction time, without the line.  The
    -- bounds in the catalog's and the engine binding's words
    -- (schema.moe_counts_problem).
    local field, step_bad
    if type(c.model) == "table" then field, step_bad = schema.moe_counts_problem(c.model) end
    if step_bad then
      error(string.format("%s: field 'model.moe.%s': %s", where, field, step_bad), 0)
    end
    local gfield, groups_bad
    if type(c.model) == "table" then gfield, groups_bad = schema.moe_groups_problem(c.model) end
    if groups_bad then
      error(string.format("%s: field 'model.moe.%s': %s", where, gfield, groups_bad), 0)
    end
    local hybrid_bad = type(c.model) == "table" and schema.hybrid_problem(c.model)
    if hybrid_bad then
      error(string.format("%s: field 'model.hybrid_pattern': %s", where, hybrid_bad), 0)
    end
    local mamba_bad = type(c.model) == "table" and schema.mamba_problem(c.model)
    if mamba_bad then
      error(string.format("%s: field 'model.mamba.groups': %s", where, mamba_bad), 0)
    end
    local known = false
    for _, x in ipairs(M.metrics[c.kind]) do known = known or x == m.metric end
    if not known then
      error(require("gpuplan.args").usage(string.format(
        "%s: field 'measured.metric': '%s' is not a %s metric (%s)", where,
        short(m.metric), c.kind, table.concat(M.metrics[c.kind], ", "))), 0)
    end
    local unit = M.metric_units[m.metric]
    if m.unit ~= nil and unit and m.unit ~= unit then
      error(string.format("%s: field 'measured.unit': '%s', but %s's unit is '%s'", where,
        short(tostring(m.unit)), m.metric, unit), 0)
    end
    -- A median is of a latency's samples (vLLM's benchmark: its TTFTs a
    -- request, its ITLs a token gap); any other metric (a rate, a step
    -- time, a bus bandwidth) is read as the one figure its source gives.
    if m.statistic ~= nil and m.metric ~= "itl_ms" and m.metric ~= "ttft_ms" then
      error(string.format("%s: field 'measured.statistic': '%s' is read for itl_ms and ttft_ms "
        .. "only (%s is read as the one figure its source gives for the run)", where,
        short(tostring(m.statistic)), m.metric), 0)
    end
    -- MFU is a share of the peak: past 1 it is another unit (percent,
    -- or TFLOP/s: mfu_tflops_per_gpu).
    if m.metric == "mfu" and m.value > 1 then
      error(string.format("%s: field 'measured.value': mfu is a fraction of the peak, at most 1 "
        .. "(got %g; a percentage is value / 100, TFLOP/s mfu_tflops_per_gpu)", where, m.value), 0)
    end
    local unread = unread_field(c)
    if unread then
      unread_error(where, "parallel." .. unread, c.kind,
        function(k) return M.PARALLEL_READ[k][unread] end)
    end
    local switch, skind = unread_switch(c)
    if switch then
      unread_error(where, "workload." .. switch, skind,
        function(k) return M.WORKLOAD_READ[switch][k] end)
    end
    local fw_bad = framework_problem(c)
    if fw_bad then error(require("gpuplan.args").usage(where .. ": field 'workload.framework': " .. fw_bad), 0) end
    if c.kind == "collective" and (c.collective == nil or c.bytes == nil) then
      error(string.format("%s: a collective case needs 'collective' and 'bytes'", where), 0)
    end
    -- NCCL's NVLS setting prices a collective case alone: another kind's
    -- predictor would ignore it in silence.
    if c.kind ~= "collective" and c.nvls ~= nil then
      error(string.format("%s: field 'nvls' (NCCL_NVLS_ENABLE) is a collective case's; a %s "
        .. "case does not read it", where, c.kind), 0)
    end
    if c.kind ~= "collective" and c.algo ~= nil then
      error(string.format("%s: field 'algo' (NCCL_ALGO) is a collective case's; a %s "
        .. "case does not read it", where, c.kind), 0)
    end
    -- hardware.gdr (GPUDirect RDMA to the NICs) reaches gp.comm's topology
    -- from the collective predictor alone: another kind's would price the
    -- run with GPUDirect in silence.
    if c.kind ~= "collective" and type(c.hardware) == "table" and c.hardware.gdr ~= nil then
      error(string.format("%s: field 'hardware.gdr' (GPUDirect RDMA) is a collective case's; "
        .. "a %s case does not read it", where, c.kind), 0)
    end
    -- workload.template_tokens adds to the client's count, input_len
    -- (SCHEMA.md): without it the infer predictor assumes a 128-token
    -- prompt and the template's tokens were dropped in silence.
    local wl0 = type(c.workload) == "table" and c.workload or {}
    if wl0.template_tokens ~= nil and wl0.input_len == nil then
      error(string.format("%s: field 'workload.template_tokens': adds to the client's "
        .. "workload.input_len, which the case does not give", where), 0)
    end
    -- parallel.dp is what the layout leaves of the training GPUs (the
    -- cluster, or those beside a separate rollout pool): one that
    -- contradicts them is an error naming both, not a field ignored.
    local v = require("gpuplan.predict.case").v
    local par, hw, rl = v(c.parallel), v(c.hardware), v(c.rl)
    if par and v(par.dp) and hw and v(hw.gpus) then
      local pool, beside = hw.gpus, ""
      if rl and v(rl.colocated) == false and v(rl.rollout_gpus) then
        pool, beside = hw.gpus - rl.rollout_gpus, string.format(" beside %d rollout GPUs",
          rl.rollout_gpus)
      end
      -- PPO's other models on groups of their own (rl.ref_gpus ...) are
      -- counted in hardware.gpus, not in the actor's layout.
      local own = 0
      for _, k in ipairs { "ref_gpus", "reward_gpus", "critic_gpus" } do
        own = own + (rl and v(rl[k]) or 0)
      end
      if own > 0 then
        pool = pool - own
        beside = beside .. string.format(" beside %d GPUs of the reference, reward and critic "
          .. "groups", own)
      end
      local tp, pp, cp = v(par.tp) or 1, v(par.pp) or 1, v(par.cp) or 1
      -- Ulysses' groups split the GPUs as CP's do (gpuplan.memory ulysses);
      -- each factor named with its own value ("cp x ulysses 3" read as
      -- one factor of 3)
      local u = v(par.ulysses)
      local seq = cp * (u or 1)
      if tp * pp * seq * par.dp ~= pool then
        error(string.format("%s: field 'parallel.dp': %d, but %d GPUs%s over tp %d x pp %d x "
          .. "cp %d%s make %g", where, par.dp, pool, beside, tp, pp, cp,
          u and string.format(" x ulysses %d", u) or "", pool / (tp * pp * seq)), 0)
      end
    end
    -- model.vision as a catalog id: a model of the catalog with a tower.
    local vis = c.model and c.model.vision
    if type(vis) == "string" then
      local okc, cm = pcall(function() return require("gpuplan").catalog():get("models", vis) end)
      if not okc or type(cm.vision) ~= "table" then
        error(string.format("%s: field 'model.vision': '%s' is not a catalog model with a "
          .. "vision tower (gpuplan catalog list models)", where, short(vis)), 0)
      end
    end
    -- An inline model the engine refuses (engine/model.c model_check:
    -- ffn_hidden 0 on a model with dense layers, kv_heads that do not
    -- divide heads, ...) is refused here with FILE:line and the case: it
    -- was read, then declined at prediction in the engine's words with the
    -- caller's position (tests/lua/fuzz_fields.t).  The engine's own rule
    -- through core.check, as the catalog's load check runs it on an entry,
    -- not a copy of it; a model the predictor cannot build (a field
    -- missing) is left to its reason at prediction.
    local mdl = v(c.model)
    if type(mdl) == "table" then
      local case_ = require "gpuplan.predict.case"
      local okm, m = pcall(case_.model, mdl, require("gpuplan").catalog())
      if okm and type(m) == "table" then
        local okc, e = pcall(require("gpuplan.core").check, "model", m)
        local msg = not okc and (type(e) == "table" and tostring(e.msg or e) or tostring(e))
          :match("^[^\n]*"):gsub("^[^%s:]+:%d+: ", ""):gsub("^model%.", "")
        -- a field missing ("moe.experts is required") is the predictor's
        -- to name in the case's own words (model.moe.expert_ffn_hidden,
        -- not the engine's moe.ffn_hidden), as a reason at prediction
        if msg and not msg:match(" is required$") then
          local field = msg:match("^([%w_%.]+)[%s:]")
          error(string.format("%s: field 'model%s': %s", where,
            field and ("." .. field) or "", msg), 0)
        end
      end
    end
    c._file, c._at = path, i
  end
  at.case = nil
  read_texts[path] = { text = text_ }
  return data
end

-- Read one case file; raises "FILE: problem" (one line, whatever the
-- file's strings hold).  seen (optional, shared between the files of one
-- run): id -> { file, index }, so an id given twice is an error naming
-- both places.
function M.read(path, seen)
  if type(path) ~= "string" then
    error("validate.read: path must be a case file's name (got "
          .. require("gpuplan.args").shown(path) .. ")", 2)
  end
  local ok, r = pcall(read, path, seen)
  if ok then return r end
  error(type(r) == "string" and require("gpuplan.units").oneline(r) or r, 0)
end

local predictors = {}

local function predictor(kind)
  if predictors[kind] == nil then
    local name = "gpuplan.predict." .. kind
    local ok, mod = pcall(require, name)
    if ok then
      predictors[kind] = mod
    elseif tostring(mod):find("module '" .. name .. "' not found", 1, true) then
      predictors[kind] = false
    else
      error(mod, 0)
    end
  end
  return predictors[kind]
end

local row_figures

-- Predict one case.  Returns a result row.
-- The arguments of predict and explain checked, named at the caller's
-- line (level: the caller's, from here): a catalog of another type was
-- priced until it failed inside a predictor ("prediction failed:
-- predict/collective.lua:27: attempt to index a number value").  cat may
-- be nil (the case's row then says the catalog did not load).
local function check_case(case, cat, who, level)
  local shown = require("gpuplan.args").shown
  if type(case) ~= "table" or type(case.measured) ~= "table" or M.kinds[case.kind] == nil then
    error(string.format("validate.%s: case must be a case as gp.validate.read returns (got %s)",
      who, shown(case)), level + 1)
  end
  if cat ~= nil then
    local _, msg = require("gpuplan.options").check("cat", cat)
    if msg then error(string.format("validate.%s: %s", who, msg), level + 1) end
  end
end

function M.predict(case, cat)
  check_case(case, cat, "predict", 2)
  local row = { id = case.id, kind = case.kind, metric = case.measured.metric,
                measured = case.measured.value, unit = case.measured.unit,
                bytes = case.kind == "collective" and tonumber(case.bytes) or nil }
  local p = predictor(case.kind)
  if not p then
    row.reason = "no " .. M.kinds[case.kind] .. " model yet"
    return row
  end
  if not cat then
    row.reason = "catalog did not load"
    return row
  end
  local ok, res, why = pcall(p, case, cat)
  -- A planner's refusal names the line of the script that called into
  -- gpuplan (args.where): here the line that called gp.validate.predict,
  -- which says nothing of the case, and which `gpuplan validate` (no
  -- script) does not print.  The reason is the case's, the same in both,
  -- whether the predictor raised it or returned it as its reason (a train
  -- case's "ep 3 does not divide the 256 experts" kept the caller's
  -- line: tests/lua/fuzz_cases.t).
  local here = require("gpuplan.args").where(1)
  local function unplaced(msg)
    if here == "" then return msg end
    local at = msg:find(here, 1, true)
    while at do
      msg = msg:sub(1, at - 1) .. msg:sub(at + #here)
      at = msg:find(here, at, true)
    end
    return msg
  end
  -- A refusal of a case read from a file names the file and line of the
  -- case, or of the field it is about (refusal_at_line), as the reader's
  -- own refusals do; it read "prediction failed: ep 2 given for a dense
  -- model" with neither.  The case stays not predicted (exit 0: the
  -- rule in validation/SCHEMA.md).  A Lua error inside a predictor (a
  -- bug, not a refusal) keeps "prediction failed:" and loses the
  -- predictor's own file:line, never the user's to read.
  local function placed(msg, failed)
    msg = unplaced(msg)
    local bug = msg:match("^[^\n]-%.lua:%d+: (.*)$")
    if bug then msg = bug end
    if bug or msg:match("^attempt to ") or msg:match("^bad argument ") then
      msg = "prediction failed: " .. msg
    end
    return refusal_at_line(msg, case) or (failed and not msg:match("^prediction failed: ")
      and "prediction failed: " .. msg or msg)
  end
  if not ok then
    row.reason = placed(tostring(type(res) == "table" and res.msg or res), true)
  elseif type(res) ~= "table" or type(res.value) ~= "number" then
    row.reason = why and placed(tostring(why)) or "not predicted"
  elseif res.value ~= res.value or res.value == math.huge or res.value < 0 then
    row.reason = "prediction is not a finite non-negative number"
  elseif (res.value - row.measured) / row.measured == math.huge then
    row.reason = "prediction is too far from the measured value to compare"
  else
    row.predicted = res.value
    row.error = (res.value - row.measured) / row.measured
    -- The defaults a prediction rested on.  No metric of a case is a
    -- cost (M.metrics: rates, times, memory, bandwidth), so the buyer's
    -- market and the card's price the planners assume for their cost
    -- lines moved none of them; 578 infer and rl rows listed them
    -- ("market=us,global,overseas (a USD buyer); price=1.80 USD/GPU-h
    -- ...") among the assumptions that did.
    local used, said_price = {}, require("gpuplan.prices").said_price
    for _, d in ipairs(res.defaults or {}) do
      if not said_price(d) then used[#used + 1] = d end
    end
    if #used > 0 then row.defaults = table.concat(used, "; ") end
    row.detail = res.detail
    row.regime = res.regime
    -- The job as the predictor priced it (gpuplan.explain): the planner
    -- call, its options, and the read of its result.
    row.job, row.call, row.read, row.shows, row.reads = res.job, res.call, res.read, res.shows,
      res.reads
  end
  -- A reason is one line of the report, whatever the case's strings hold.
  if row.reason then
    row.reason = require("gpuplan.units").oneline(reason_at_line(row.reason, case))
  end
  return row
end

-- One case as the Lua script of the job it was priced as (gpuplan.explain):
-- predicts it, and returns the script and the row.  row (optional) is the
-- case's row already predicted, with its 80% range attached.
-- A row's figures, as gp.validate.predict gives them, checked: an edited
-- row's string raised "bad argument #1 to 'abs'" (summarise, explain) and
-- NaN "validate.percentile: sorted[1] must be a number", naming neither
-- the function nor the row; inf made a kind's p90 inf.
row_figures = function(r, who, what, level)
  for _, k in ipairs { "error", "measured", "predicted", "predicted_lo", "predicted_hi" } do
    local v = r[k]
    if v ~= nil and (type(v) ~= "number" or v ~= v or v == math.huge or v == -math.huge) then
      error(string.format("validate.%s: %s %s must be a finite number or nil (got %s); rows "
        .. "are gp.validate.predict's", who, what, k, require("gpuplan.args").shown(v)), level + 1)
    end
  end
end

function M.explain(case, cat, row)
  check_case(case, cat, "explain", 2)
  -- another case's row gave this case's script with its figures
  if row ~= nil and (type(row) ~= "table" or row.id ~= case.id) then
    error(string.format("validate.explain: row must be the case's own row, as "
      .. "gp.validate.predict(case, cat) returns (got %s)", type(row) == "table"
      and ("the row of case '" .. tostring(row.id) .. "'")
      or require("gpuplan.args").shown(row)), 2)
  end
  if row ~= nil then row_figures(row, "explain", "row's", 2) end
  row = row or M.predict(case, cat)
  return require("gpuplan.explain").script(case, row, cat), row
end

-- Nearest-rank percentile of a sorted list (q in (0, 1]).
function M.percentile(sorted, q)
  local shown = require("gpuplan.args").shown
  if type(sorted) ~= "table" then
    error("validate.percentile: sorted must be a sorted list of numbers (got " .. shown(sorted)
          .. ")", 2)
  end
  if type(q) ~= "number" or not (q > 0 and q <= 1) then
    error("validate.percentile: q must be a number in (0, 1] (got " .. shown(q) .. ")", 2)
  end
  local n = #sorted
  if n == 0 then return nil end
  -- The nearest rank is read off the list as given: an unsorted list
  -- ({3, 1, 2}) answered its middle element (1) as the median, and a
  -- list of strings answered one of them, in silence.  One pass checks
  -- what the reference asks for.
  for i = 1, n do
    local v = sorted[i]
    if type(v) ~= "number" or v ~= v then
      error(string.format("validate.percentile: sorted[%d] must be a number (got %s)", i, shown(v)), 2)
    end
    if i > 1 and v < sorted[i - 1] then
      error(string.format("validate.percentile: sorted must be in ascending order (sorted[%d] = %s "
        .. "after %s; table.sort it first)", i, shown(v), shown(sorted[i - 1])), 2)
    end
  end
  local k = math.ceil(q * n)
  if k < 1 then k = 1 end
  return sorted[k]
end

-- Summary rows that cover part of a kind, after the kind's own row: the
-- collectives of 1 MiB and more, where bandwidth rather than latency sets
-- the time (what a training step's gradient and weight traffic moves),
-- apart from all sizes, which the small-message latency cases dominate.
M.subsets = {
  collective = { { kind = "collective >= 1 MiB",
                   keep = function(r) return (r.bytes or 0) >= 2 ^ 20 end } },
}

-- Per-kind summary rows: kind, cases, predicted, median, p90 (fractions);
-- each kind's subsets (M.subsets) follow its row.  Where rows carry their
-- 80% range (predicted_lo, predicted_hi: gpuplan.ranges), also ranged
-- (cases with one), coverage (the share of those whose measured value lies
-- inside) and width (the mean of (hi - lo) / predicted).
function M.summarise(rows)
  local shown = require("gpuplan.args").shown
  if type(rows) ~= "table" then
    error("validate.summarise: rows must be gp.validate.predict's rows (got " .. shown(rows)
          .. ")", 2)
  end
  for i, r in ipairs(rows) do
    if type(r) ~= "table" then
      error(string.format("validate.summarise: row %d must be a table (got %s)", i, shown(r)), 2)
    end
    -- a row is summed under its kind ("table index is nil" without one)
    if type(r.kind) ~= "string" then
      error(string.format("validate.summarise: row %d has no kind (got %s); rows are "
        .. "gp.validate.predict's", i, shown(r.kind)), 2)
    end
    row_figures(r, "summarise", string.format("row %d's", i), 3)
  end
  local by = {}
  local function add(name, r)
    local s = by[name] or { kind = name, cases = 0, predicted = 0, errs = {},
                            ranged = 0, inside = 0, widths = 0 }
    by[name] = s
    s.cases = s.cases + 1
    if r.error then
      s.predicted = s.predicted + 1
      s.errs[#s.errs + 1] = math.abs(r.error)
    end
    if r.error and r.predicted_lo then
      s.ranged = s.ranged + 1
      if r.measured >= r.predicted_lo and r.measured <= r.predicted_hi then
        s.inside = s.inside + 1
      end
      s.widths = s.widths + (r.predicted_hi - r.predicted_lo) / r.predicted
    end
  end
  for _, r in ipairs(rows) do
    add(r.kind, r)
    for _, sub in ipairs(M.subsets[r.kind] or {}) do
      if sub.keep(r) then add(sub.kind, r) end
    end
  end
  local out = {}
  local function emit(name)
    local s = by[name]
    if s then
      table.sort(s.errs)
      s.median = M.percentile(s.errs, 0.5)
      s.p90 = M.percentile(s.errs, 0.9)
      s.errs = nil
      if s.ranged > 0 then
        s.coverage, s.width = s.inside / s.ranged, s.widths / s.ranged
      end
      s.widths = nil
      out[#out + 1] = s
    end
  end
  for _, k in ipairs { "train", "memory", "infer", "collective", "rl" } do
    emit(k)
    if by[k] then
      for _, sub in ipairs(M.subsets[k] or {}) do emit(sub.kind) end
    end
  end
  return out
end

return M
