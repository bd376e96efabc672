-- Predict a `memory` validation case (../shared/validation/SCHEMA.md):
-- peak allocated bytes per GPU, as torch.cuda.max_memory_allocated reports
-- it -- the tensor components of the breakdown (r.allocated), without the
-- CUDA context, library workspaces or allocator cache, which that counter
-- does not see.
--
-- Everything not stated by the case is a documented default of
-- gpuplan.memory and is listed in `defaults`.

local memory = require "gpuplan.memory"
local units = require "gpuplan.units"
local case_ = require "gpuplan.predict.case"
local v, model_of = case_.v, case_.model


return function(case, cat)
  local model, why = model_of(case.model or {})
  if not model then return nil, why end
  local hw, par, wl = case.hardware or {}, case.parallel or {}, case.workload or {}
  local defaults = {}
  local o = {
    model = model, gpus = v(hw.gpus) or 1, method = v(wl.method) or "full",
    tp = v(par.tp), pp = v(par.pp), cp = v(par.cp), ep = v(par.ep),
    vpp = v(par.vpp), zero = v(par.zero), sp = v(par.sp) or nil,
    batch = v(par.micro_batch) or v(wl.batch), seq = v(wl.seq_len),
    recompute = v(par.recompute), precision = v(wl.precision),
    optimizer = v(wl.optimizer), weights = v(wl.weight_dtype), kv = v(wl.kv_dtype),
    offload = v(par.offload), cat = cat,
  }
  if v(par.fsdp) then o.fsdp = true end
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
  if o.vpp then o.schedule = "interleaved" end
  local lora = v(wl.lora)
  if type(lora) == "table" then
    o.lora_rank = v(lora.rank)
    if type(lora.targets) == "table" then o.lora_targets = table.concat(lora.targets, ",") end
  end
  if o.method == "infer" then
    o.concurrency = v(wl.concurrency) or o.batch
    o.ctx = o.seq
    if v(wl.input_len) and v(wl.output_len) then o.ctx = wl.input_len + wl.output_len end
    o.batch, o.seq = nil, nil
  end
  local ok, g = pcall(cat.get, cat, "gpus", hw.gpu)
  if ok then o.gpu = g else
    o.capacity = 80e9
    defaults[#defaults + 1] = "capacity=80GB (gpu not in catalog)"
  end
  local r = memory.memory(o)
  for _, d in ipairs(r.defaults) do defaults[#defaults + 1] = d end
  local unit = case.measured.metric == "peak_memory_gib" and units.GiB or units.GB
  if case.measured.metric ~= "peak_memory_gib" and case.measured.metric ~= "peak_memory_gb" then
    return nil, "metric " .. tostring(case.measured.metric) .. " is not a memory peak"
  end
  local parts = {}
  for _, c in ipairs(r.components) do
    if c.tensor then parts[#parts + 1] = string.format("%s %.1f", c.name, c.bytes / unit) end
  end
  return { value = r.allocated / unit, defaults = defaults,
           detail = table.concat(parts, ", ") }
end
