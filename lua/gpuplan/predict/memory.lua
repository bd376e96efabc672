-- Predict a `memory` validation case (validation/SCHEMA.md):
-- peak allocated bytes per GPU, as torch.cuda.max_memory_allocated reports
-- it -- the tensor components of the breakdown (r.allocated), without the
-- CUDA context, library workspaces or allocator cache, which that counter
-- does not see -- or, for metric peak_reserved_gib, the allocator's peak
-- reserved bytes: those tensors plus its cache (below).
--
-- Everything not stated by the case is a documented default of
-- gpuplan.memory and is listed in `defaults`.

local memory = require "gpuplan.memory"
local units = require "gpuplan.units"
local case_ = require "gpuplan.predict.case"
local v, model_of = case_.v, case_.model

-- Stack profiles: what a framework does when the case does not say, each
-- setting read from that framework's own source or published default
-- configs at the era of its measurements.  The framework is the one the
-- case states (workload.framework), as for every predictor.  A value
-- the case states always wins; every profile value used is listed in the
-- prediction's defaults.  `all` applies to every training method, `full`
-- to full fine-tuning and pre-training, `lora` to LoRA and QLoRA, `infer`
-- to inference.
local PROFILES = {
  -- LitGPT (lit-gpt, 2023; the resource tables' commit 8641822):
  litgpt = {
    all = {
      -- lit_gpt/model.py CausalSelfAttention: one fused `attn` linear
      -- whose output is viewed and split into q, k, v (memory.h).
      { "fused_qkv_view", true, "lit_gpt/model.py fused attn linear, q/k/v views" },
      -- tutorials/resource-tables.md: "All experiments were run using
      -- --precision bf16-true": params (adapters included) and their
      -- AdamW states in bf16, no fp32 master.
      { "recipe", "bf16", "resource tables: --precision bf16-true" },
      -- finetune/*.py: model(..., lm_head_chunk_size=128) and
      -- lit_gpt/utils.py chunked_cross_entropy on the bf16 logit chunks
      -- without an upcast: the chunks (2 B, held by the loop's `logits`
      -- through backward) and cross_entropy's bf16 log-softmax (2 B).
      { "logit_bytes", 4, "chunked bf16 cross-entropy, no fp32 upcast" },
      -- lit_gpt/rmsnorm.py RMSNorm.forward (read at 3c51a20, the 2023
      -- lit_gpt tree): "norm_x = torch.mean(x * x, dim=self.dim,
      -- keepdim=True)", "x_normed = x * torch.rsqrt(norm_x + self.eps)",
      -- "return self.weight * x_normed" -- no fp32 upcast: the norm keeps
      -- its 16-bit input, not Hugging Face's fp32 copy (engine/memory_act.c
      -- mem_norm_bytes).
      { "eager_norm", false, "lit_gpt/rmsnorm.py: no fp32 upcast" },
    },
    lora = {
      -- finetune/lora.py hyperparameters: lora_r = 8, lora_dropout =
      -- 0.05, lora_query = lora_value = True (key, projection, mlp,
      -- head False).
      { "lora_rank", 8, "finetune/lora.py lora_r" },
      { "lora_targets", "q,v", "finetune/lora.py lora_query/lora_value" },
      { "lora_dropout", 0.05, "finetune/lora.py lora_dropout" },
      -- --quantize bnb.* goes through Lightning's BitsandbytesPrecision,
      -- which swaps every torch.nn.Linear built under init_module for a
      -- bitsandbytes one; LitGPT's lm_head is a LoRALinear wrapping a
      -- torch.nn.Linear, so the head is quantised too.
      { "quant_head", true, "BitsandbytesPrecision replaces every nn.Linear" },
      -- lit_gpt/lora.py LoRAQKVLinear.zero_pad scatters the q and v
      -- adapter outputs into the fused q+k+v width with index_copy,
      -- whose backward keeps its source (engine/memory.c).
      { "lora_zero_pad", true, "LoRAQKVLinear.zero_pad: index_copy keeps its source" },
    },
    -- generate/base.py main() defaults: prompt "What food do llamas
    -- eat?" (9 Llama tokens with BOS; a few either way move a 13B cache
    -- by under 0.01 GB) and max_new_tokens = 50, then "set the
    -- max_seq_length to limit the memory usage to what we need":
    -- model.max_seq_length = prompt + max_new_tokens before
    -- set_kv_cache(batch_size=1).  The cache holds those tokens; the
    -- case's seq_len, the model's context, only caps them.
    infer = {
      { "input_len", 9, "generate/base.py default prompt" },
      { "output_len", 50, "generate/base.py max_new_tokens; cache sized to prompt + new" },
    },
  },
  -- torchtune, recipes/configs/llama3_1 at the README table's commit
  -- (0031bfb, Sep 2024); the README states batch 2, packed 2048 and
  -- torch.compile on for every row.
  torchtune = {
    all = {
      -- The configs turn activation checkpointing on
      -- (enable_activation_checkpointing: True, every
      -- TransformerSelfAttentionLayer), but the README table reports,
      -- per card, the run with the best tokens/s -- its maintainers
      -- "capture lowest memory utilization AND peak tokens/sec"
      -- (pytorch/torchtune issue #925) -- and checkpointing costs 21.5%
      -- of tokens/s (PR #2003's table).  So it is on only where the
      -- run does not fit the card without it: gpuplan.memory's
      -- recompute = "auto", with no margin (below).
      { "recompute", "auto", "README rows: fastest run that fits the card" },
      -- dtype: bf16 -- the model and the optimizer states in bf16, no
      -- fp32 master copy; fp32 where the case states it
      -- (case_.torchtune_recipe, the train profile's rule).
      { "recipe", case_.torchtune_recipe, "dtype: the case's, bf16 or fp32 (no fp32 master)" },
      -- loss CEWithChunkedOutputLoss (torchtune/modules/loss): the
      -- output projection in num_output_chunks = 8 bf16 chunks, each
      -- upcast to fp32 inside compute_cross_entropy, which the recipes
      -- compile on its own (training/_compile.py compile_loss at
      -- 1814feb17: "we only compile the upcast + cross-entropy
      -- calculation, not the chunking", "loss.compute_cross_entropy =
      -- torch.compile(loss.compute_cross_entropy, ...)").  Compiled, the
      -- upcast and the log-softmax are fused into the reductions and
      -- never stored ("torch.compile is able to optimize away this
      -- memory allocation so that a negligible amount of memory is
      -- required for this op other than to hold the logits in the first
      -- place", allenai/open-instruct#584 on a compiled log_softmax +
      -- gather); the backward keeps the chunk's bf16 input (the
      -- partitioner saves the smallest tensor it can recompute from) and
      -- writes the chunk's bf16 gradient before that input is released:
      -- 2 B per logit for the kept chunks plus 2 B for one chunk in
      -- eight at the loss's backward.  (It read 2 + 4/8, one fp32 chunk
      -- materialised, before the LoRA rows' peaks were worked through.)
      { "logit_bytes", 2 + 2 / 8, "CEWithChunkedOutputLoss compiled, 8 chunks: the bf16 chunks and one chunk's gradient" },
      -- compile: True runs each layer through inductor, whose partitioner
      -- (torch/_functorch/partitioners.py min_cut_rematerialization_
      -- partition) recomputes cheap pointwise ops in the backward rather
      -- than save their outputs: the norm's fp32 upcast is fused into its
      -- kernel, not kept (engine/memory_act.c mem_norm_bytes).
      { "eager_norm", false, "torch.compile fuses the RMSNorm's upcast" },
      -- The recipes' _loss_step (recipes/lora_finetune_single_device.py
      -- and full_finetune_single_device.py at 1814feb17) runs "loss =
      -- self._loss_fn(logits, labels)", then "# free logits otherwise it
      -- peaks backward memory" / "del logits" before loss.backward(): a
      -- frozen head's logits are gone before the layers' backward
      -- (engine/memory_train.c).
      { "logits_freed", true, "recipes' _loss_step: del logits before backward" },
    },
    full = {
      -- 8B_full_single_device.yaml: optimizer
      -- bitsandbytes.optim.PagedAdamW8bit, optimizer_in_bwd: True.
      { "optimizer", "adam8bit", "PagedAdamW8bit" },
      -- Paging is PagedAdamW8bit's own: bitsandbytes allocates its states
      -- with cudaMallocManaged (bitsandbytes/functional.py get_paged), which
      -- PyTorch's allocator and torchtune's peak-memory log never see.  A
      -- case that states another optimizer (the README's "Optimization
      -- flags" rows run torch.optim.AdamW, "optimizer._component_=
      -- torch.optim.AdamW") holds its states in PyTorch's allocator.
      { "paged_optimizer", true, "PagedAdamW8bit states in CUDA managed memory",
        function(o) return o.optimizer == "adam8bit" end },
      { "grads_in_bwd", true, "optimizer_in_bwd: True" },
    },
    lora = {
      -- 8B_lora(_single_device).yaml model section at that commit:
      -- lora_attn_modules ['q_proj', 'v_proj'], apply_lora_to_mlp
      -- False, lora_rank 8, lora_dropout 0.0; optimizer torch AdamW.
      { "lora_rank", 8, "lora_rank: 8" },
      { "lora_targets", "q,v", "lora_attn_modules [q_proj, v_proj]" },
      { "lora_dropout", 0, "lora_dropout: 0.0" },
      { "optimizer", "adamw", "torch.optim.AdamW" },
    },
  },
  -- PEFT's README table ran the examples on ought/raft
  -- twitter_complaints: examples/causal_language_modeling/
  -- peft_lora_clm_accelerate_ds_zero3_offload.py (bigscience/bloomz-7b1,
  -- plain PyTorch without the DeepSpeed config for the "PEFT-LoRA
  -- PyTorch" column).
  peft = {
    all = {
      { "seq", 64, "example script max_length = 64" },
      { "batch", 8, "example script batch_size = 8" },
      -- transformers of that era (before SDPA support, v4.36) computes
      -- BLOOM attention unfused: baddbmm, softmax, dropout.
      { "flash", false, "transformers eager attention (pre-SDPA)" },
      -- BloomForCausalLM.forward in fp32: lm_logits kept in the output
      -- (4 B), the shifted .contiguous() copy (4 B) and the log-softmax
      -- that CrossEntropyLoss saves (4 B).
      { "logit_bytes", 12, "fp32 logits, shifted copy, log-softmax" },
    },
    lora = {
      -- LoraConfig(r=8, lora_alpha=32, lora_dropout=0.1); no
      -- target_modules, so PEFT's default map for the model type
      -- (peft/utils/other.py TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_
      -- MAPPING: "t5": ["q", "v"], "bloom": ["query_key_value"], the
      -- fused q, k, v linear).  The seq2seq example
      -- (peft_lora_seq2seq_accelerate_ds_zero3_offload.py, T0_3B) trains
      -- a T5, the only encoder-decoder family modelled here.
      { "lora_rank", 8, "LoraConfig r=8" },
      { "lora_dropout", 0.1, "LoraConfig lora_dropout=0.1" },
      { "lora_targets", "q,v", "PEFT default target for t5: q, v",
        function(_, m) return (m.encoder_layers or 0) > 0 end },
      { "lora_targets", "q,k,v", "PEFT default target query_key_value" },
      { "optimizer", "adamw", "torch.optim.AdamW" },
    },
  },
}

-- A stack the train predictor profiles (torchtitan: FSDP2 on PyTorch
-- modules; deepspeed: DeepSpeed's ZeRO engine over the Hugging Face
-- modules, stack deepspeed with kernels eager): its entries that gpu
-- memory takes, from the train predictor's table
-- (lua/gpuplan/predict/train.lua), so a memory case and its training
-- sibling are sized on one stack (a source that names PEFT or LitGPT and
-- DeepSpeed ran that tool's example on it: its case states peft or
-- litgpt).  Filled on first use (the train predictor is loaded then).
local TRAIN_STACKS = { torchtitan = true, deepspeed = true, ["pytorch-fsdp"] = true }

-- A torchtitan commit whose loss runs eager (case_.eager_loss_commit):
-- after the forward only log_softmax's fp32 output is held (4 B a logit);
-- the step runs "loss = loss_fn(pred, labels) ... del pred ...
-- loss.backward()", whose first nodes make nll_loss's dense fp32 gradient
-- (4 B) and then log_softmax_backward_data's fp32 gradient (4 B) while
-- that output is still saved: 12 B a logit at the start of the backward,
-- with every layer's activations held.  A commit whose loss compiles
-- keeps the stack's own figure.
local function train_profile(fw)
  local options = require "gpuplan.options"
  local all = {}
  for _, e in ipairs(require("gpuplan.predict.train").profiles[fw]) do
    if options.takes("fit", e[1], "lua") then all[#all + 1] = e end
  end
  return { all = all }
end

local function predict(case, cat)
  local model, why = model_of(case.model or {}, cat)
  if not model then return nil, why end
  local hw, par, wl = case.hardware or {}, case.parallel or {}, case.workload or {}
  local defaults = {}
  local o = case_.media({
    model = model, gpus = v(hw.gpus) or 1, method = v(wl.method) or "full",
    tp = v(par.tp), pp = v(par.pp), cp = v(par.cp), ep = v(par.ep), etp = v(par.etp),
    vpp = v(par.vpp), zero = v(par.zero), sp = v(par.sp) or nil,
    batch = v(par.micro_batch) or v(wl.batch), seq = v(wl.seq_len),
    recompute = v(par.recompute), precision = v(wl.precision),
    optimizer = v(wl.optimizer), weights = v(wl.weight_dtype), kv = v(wl.kv_dtype),
    offload = v(par.offload), cat = cat,
    input_len = v(wl.input_len), output_len = v(wl.output_len),
  }, wl)
  local metric = case.measured and case.measured.metric
  if metric ~= "peak_memory_gib" and metric ~= "peak_memory_gb" and metric ~= "peak_reserved_gib" then
    return nil, "metric " .. tostring(metric) .. " is not a memory peak"
  end
  if v(par.fsdp) then o.fsdp = par.fsdp end
  -- PyTorch FSDP's version and the reduction's dtype (SCHEMA.md
  -- parallel.fsdp_version, parallel.grad_reduce), as the training sibling
  -- states them: FSDP2's whole gradients are held in that dtype
  -- (engine/memory_train.c whole_grad_bytes).
  o.fsdp_version = v(par.fsdp_version)
  o.grad_reduce = v(par.grad_reduce)
  -- The training layout's fields that size the breakdown, as the train
  -- predictor hands them to gp.train (gpuplan.validate
  -- PARALLEL_READ.memory): predict/case.lua sizing.
  case_.sizing(o, par, wl)
  -- How the model's operators ran (SCHEMA.md workload.kernels), as the
  -- training sibling reads it: the stack profile fills it when unstated.
  if o.method ~= "infer" then o.kernels = v(wl.kernels) end
  -- A model whose own code has no fused attention (SCHEMA.md
  -- workload.flash), as the training sibling reads it.
  if o.method ~= "infer" then o.flash = v(wl.flash) end
  -- Dropout as the run's script sets it (SCHEMA.md workload.dropout), as
  -- the training sibling hands it to gp.train: gp.memory's dropout, the
  -- masks (and with unfused attention the dropped probabilities) it keeps.
  -- (gpuplan.validate refuses it on a serving memory case, method infer).
  if o.method ~= "infer" then o.dropout = v(wl.dropout) end
  -- How the Adam step runs where the case's code says (SCHEMA.md
  -- workload.optimizer_impl): foreach adds the step's copy of the second
  -- moment (gp.memory reads it stated only).
  if o.method ~= "infer" then o.optimizer_impl = v(wl.optimizer_impl) end
  -- fp32 weights trained under torch.autocast where the case's code says
  -- (SCHEMA.md workload.autocast): the fp32 stream and norms, a cast per
  -- linear (gp.memory reads it stated only).
  if o.method ~= "infer" then o.autocast = v(wl.autocast) end
  -- The model-state recipe the source states (SCHEMA.md workload.recipe),
  -- as the training sibling hands it to gp.train: gp.memory's recipe
  -- over the stack's default for the precision (a memory case that
  -- stated one was sized on that default).
  if o.method ~= "infer" then o.recipe = v(wl.recipe) end
  -- Liger-Kernel's fused linear cross-entropy (SCHEMA.md
  -- workload.fused_linear_ce): one chunk of logits, not all of them.
  if o.method ~= "infer" then o.fused_linear_ce = v(wl.fused_linear_ce) end
  -- workload.replicated_logits: the TP head's logits on every rank.
  if o.method ~= "infer" then o.replicated_logits = v(wl.replicated_logits) end
  -- workload.paged_optimizer: the states in CUDA managed memory (or, false,
  -- in PyTorch's allocator), over the stack profile's guess.
  if o.method ~= "infer" then o.paged_optimizer = v(wl.paged_optimizer) end
  -- workload.ema: the parameters' fp32 moving average, on the GPU (gpu) or
  -- in host memory (cpu).
  if o.method ~= "infer" then o.ema = v(wl.ema) end
  -- workload.before_step: read before the first optimizer step (gp.memory's
  -- before_step: the optimizer's states not yet allocated).
  if o.method ~= "infer" then o.before_step = v(wl.before_step) end
  -- workload.kv_repeat: K and V copied query-wide by the model's code
  -- (gp.memory's kv_repeat), over the stack profile's (torchtitan's).
  if o.method ~= "infer" then o.kv_repeat = v(wl.kv_repeat) end
  -- workload.eager_norm false: the fused RMSNorm keeps its input and the
  -- rows' rstd, not the eager module's fp32 copy.
  if o.method ~= "infer" then o.eager_norm = v(wl.eager_norm) end
  -- ZeRO-3 on a model built outside deepspeed.zero.Init (SCHEMA.md
  -- parallel.zero_init): the engine holds it whole once, at init.
  o.zero_init = v(par.zero_init)
  if v(par.schedule) == "dualpipe" then o.schedule = "dualpipe" end
  -- An encoder-decoder trains on an input (encoder) and a target
  -- (decoder) sequence: input_len and output_len when the case gives
  -- them, seq_len standing in for either (and a stack profile's seq for
  -- what is still open).
  if model.encoder_layers and o.method ~= "infer" then
    o.enc_seq = o.input_len
    if o.output_len then o.seq = o.output_len end
    o.input_len, o.output_len = nil, nil
  end
  -- Which stack owns the optimizer (gpuplan.memory's RECIPE table).  Rule:
  -- a pre-training case that states a ZeRO stage >= 1 without FSDP speaks
  -- DeepSpeed's vocabulary -- Megatron-LM has no ZeRO stages (it shards
  -- with its "distributed optimizer", use_distributed_optimizer) and
  -- PyTorch FSDP cases carry fsdp = true -- so it ran on DeepSpeed or
  -- Megatron-DeepSpeed.  There a bf16 model with fp32 gradient
  -- accumulation gets BF16_Optimizer at ZeRO 0/1 and the ZeRO optimizer at
  -- 2/3 (DeepSpeed engine.py, _do_optimizer_sanity_check): the
  -- deepspeed-bf16 recipe, 20 B/param before sharding; fp16 gets the
  -- classic 16.  Other pre-training cases keep Megatron's 18, fine-tuning
  -- cases the HF-style 16.  Nothing here looks at ids or source titles.
  if o.method == "pretrain" and (o.zero or 0) >= 1 and not o.fsdp then
    o.stack = "deepspeed"
    defaults[#defaults + 1] = "stack=deepspeed (pretrain with a ZeRO stage, no FSDP)"
  end
  if (o.vpp or 1) > 1 then o.schedule = "interleaved" end
  -- The step's micro-batches on each data-parallel rank: global_batch
  -- over dp x micro_batch.  A pipeline holds min(pp, that) micro-batches'
  -- activations in flight under 1F1B (gpuplan.memory's microbatches), so a
  -- step of fewer micro-batches than stages peaks lower.
  local gb, mb = v(par.global_batch), v(par.micro_batch)
  if gb and mb and o.method ~= "infer" then
    local dp = v(par.dp) or math.max(1, o.gpus // ((o.tp or 1) * (o.pp or 1) * (o.cp or 1)))
    o.microbatches = math.max(1, gb // (dp * mb))
  end
  local lora = v(wl.lora)
  if type(lora) == "table" then
    o.lora_rank = v(lora.rank)
    if type(lora.targets) == "table" then o.lora_targets = table.concat(lora.targets, ",") end
    o.lora_dropout = v(lora.dropout)
  end
  -- The framework's stack profile fills what the case leaves open: its
  -- own (litgpt, torchtune, peft) or the train predictor's (torchtitan,
  -- deepspeed, pytorch-fsdp), so a memory case is sized on the stack its
  -- training sibling is priced on.
  local fw = case_.framework(case)
  if fw == "torchtune" and o.method ~= "infer" and o.precision == "fp16" then
    return nil, case_.TORCHTUNE_FP16
  end
  if fw then
    if TRAIN_STACKS[fw] and not PROFILES[fw] then PROFILES[fw] = train_profile(fw) end
    local prof = PROFILES[fw]
    local parts = o.method == "infer" and { "infer" }
      or { "all", (o.method == "lora" or o.method == "qlora") and "lora"
                  or ((o.method == "full" or o.method == "pretrain") and "full" or nil) }
    defaults[#defaults + 1] = "stack profile=" .. fw
    for _, part in ipairs(parts) do case_.profile(o, model, prof[part] or {}, defaults) end
    local rel = o.method ~= "infer" and case_.eager_loss_commit(fw, case)
    if rel then
      case_.profile(o, model, { { "logit_bytes", 12, fw .. " " .. rel
        .. ": eager fp32 cross-entropy, log-softmax output + two fp32 gradients" } }, defaults)
    end
  end
  if o.method == "infer" then
    o.concurrency = v(wl.concurrency) or o.batch
    -- The cache holds prompt + output when both are known; seq_len, the
    -- model's context, caps it (and stands in when they are not).
    o.ctx = o.seq
    if o.input_len and o.output_len then
      local ctx = o.input_len + o.output_len
      if o.seq and o.seq < ctx then ctx = o.seq end
      o.ctx = ctx
      defaults[#defaults + 1] = string.format("ctx=%d (prompt %d + output %d%s)", ctx,
        o.input_len, o.output_len, ctx == o.seq and ", capped by seq_len" or "")
    end
    o.batch, o.seq = nil, nil
  end
  o.input_len, o.output_len = nil, nil
  -- The card sizes what a fit decides (recompute "auto", the offloads):
  -- a case without a catalog card is refused, as the train and infer
  -- predictors refuse it, not priced at an assumed 80 GB.
  if not v(hw.gpu) then return nil, "hardware.gpu not given" end
  local g, why = case_.gpu(case, cat)
  if not g then return nil, why end
  o.gpu = g
  -- A measured run ran: whatever a choice hangs on "fits" (recompute =
  -- "auto") asks whether it starts, not whether it is safe.
  o.margin = 0
  -- A case's fields of other methods (a serving case's precision or
  -- zero, read above for every case) size nothing under its method, and
  -- gp.memory refuses an option its method does not take (options.lua
  -- `methods`): left out here, as gp.memory left them unread before.
  local options = require "gpuplan.options"
  while true do
    local bad = options.misplaced(o, o.method)
    if not bad then break end
    o[bad] = nil
  end
  local r = memory.memory(o)
  for _, d in ipairs(r.defaults) do defaults[#defaults + 1] = d end
  local unit = metric == "peak_memory_gb" and units.GB or units.GiB
  local parts = {}
  -- peak_reserved_gib: what the caching allocator holds from the driver at
  -- the peak (torch.cuda.memory_stats reserved_bytes.all.peak) -- the
  -- tensors plus the breakdown's fragmentation, the segments' unused
  -- splits that the allocator keeps cached (engine/memory.c frag); the
  -- CUDA context and NCCL's buffers are outside the allocator.
  local value = r.allocated
  for _, c in ipairs(r.components) do
    if c.tensor then parts[#parts + 1] = string.format("%s %.1f", c.name, c.bytes / unit)
    elseif c.name == "fragmentation" and metric == "peak_reserved_gib" then
      value = value + c.bytes
      parts[#parts + 1] = string.format("allocator cache %.1f", c.bytes / unit)
    end
  end
  -- The same read as a script writes it (gpuplan.explain).
  local shows = "r.allocated"
  if metric == "peak_reserved_gib" then
    shows = "(r.allocated + (function() for _, c in ipairs(r.components) do "
      .. "if c.name == \"fragmentation\" then return c.bytes end end return 0 end)())"
  end
  shows = shows .. (metric == "peak_memory_gb" and " / 1e9" or " / 2^30")
  return { value = value / unit, defaults = defaults,
           job = o, call = "memory", shows = shows,
           regime = require("gpuplan.ranges").regime("memory", o, r, cat),
           detail = table.concat(parts, ", ") }
end

-- The predictor, callable as predict(case, cat); frameworks: the names
-- workload.framework takes in a memory case.
local stacks = {}
for k in pairs(TRAIN_STACKS) do stacks[#stacks + 1] = k end
return setmetatable({ frameworks = case_.names(PROFILES, stacks) }, {
  __call = function(_, case, cat) return predict(case, cat) end })
