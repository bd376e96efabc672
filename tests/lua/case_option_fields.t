-- Case fields that are options of the same name (gp.train's, gp.infer's,
-- gp.rl's) take their type from the option's declaration in
-- gpuplan.options (one place for the values both accept), and the train
-- predictor hands them on as the option.  Run with ./gpuplan run tests/lua/case_option_fields.t.
local t = require "tap"
local gp = require "gpuplan"
local options = require "gpuplan.options"
local cjson = require "cjson"

-- path in the case schema -> the option's name
local FIELDS = {
  { "parallel", "gradient_accumulation_fusion" },
  { "parallel", "grad_reduce" }, { "parallel", "zero_reduce" }, { "parallel", "zero3_gather" },
  { "parallel", "reduce_bucket_size" }, { "parallel", "prefetch_bucket_size" },
  { "parallel", "moe_dispatcher" }, { "parallel", "moe_flex_backend" }, { "parallel", "moe_fp8_pad" },
  { "parallel", "moe_balance" }, { "parallel", "moe_gate" }, { "parallel", "fused_grouped_mlp" },
  -- a count: the micro-batches of one pipeline schedule call (AutoModel's local batch)
  { "parallel", "pp_microbatches" },
  { "workload", "fp8_scaling" }, { "workload", "attn_kernel" },
  { "workload", "fp8_attention" }, { "workload", "packed_len" },
  { "workload", "mlp_down_bf16" },
  { "workload", "pad_share" },
  -- the layout's and the linears' flags
  { "parallel", "sp" }, { "parallel", "split_ends" }, { "parallel", "ep_overlap" },
  { "parallel", "tp_overlap" }, { "parallel", "tp_overlap_fp8_rs" },
  { "parallel", "tp_overlap_aggregate" },
  { "workload", "fp8_activations" },
  -- gp.infer's serving flags
  { "parallel", "dp_attention" }, { "workload", "two_batch_overlap" },
  { "workload", "single_batch_overlap" }, { "workload", "swap_ab" },
  -- a model's own eager attention code (the Baichuan rows; Qwen-VL's,
  -- which has no fused attention at all)
  { "workload", "attn_clamp" }, { "workload", "eager_softmax" }, { "workload", "flash" },
  -- a PyTorch model run without torch.compile (torchtitan's rows)
  { "workload", "kernels" },
  -- a launch script's training switches (the DeepSeek-V3 GB200 guide's
  -- --attention-dropout 0.0, --hidden-dropout 0.0, --cross-entropy-loss-fusion)
  { "workload", "dropout" }, { "workload", "unfused_loss" },
  -- a model's one-hot embedding lookup (Paxml's GPT configs:
  -- EMBEDDING_LOOKUP_STYLE = 'matmul')
  { "workload", "emb_matmul" },
  -- LoRA's adapters added into the weight (Praxis' LoRA layers, the Paxml
  -- LLaMA LoRA row without Transformer Engine)
  { "workload", "lora_merged" },
  -- the parameters' fp32 moving average (gp.train's ema: none, gpu, cpu)
  { "workload", "ema" },
  -- the RL flags (rl.ema, DeepSpeed-Chat's --enable_ema, is below: it
  -- follows the option's rl variant, a flag, not train's names)
  { "rl", "colocated" }, { "rl", "refit_drain" }, { "rl", "colocate_critic_reward" },
  { "rl", "rollout_eager" }, { "rl", "rollout_dp_attention" }, { "rl", "offload_states" },
  { "rl", "param_offload" }, { "rl", "ref_host" }, { "rl", "ref_model" },
  { "rl", "base_checkpoint" }, { "rl", "ref_reward_offload" },
  -- the boards' power limit (torchtitan's Grand Teton rows: 500 W)
  { "hardware", "power_limit" },
  -- the SM clock a run held (KempnerForge's 175B DCGM trace: 1,840 MHz)
  { "hardware", "sm_clock" },
  -- a checkpoint around FSDP units (the PyTorch FSDP 1T post's
  -- ptd_benchmark: wrap(checkpoint_wrapper(Block)) over per-module units)
  { "parallel", "ckpt_outside_fsdp" },
  -- the checkpoints' copies on a side stream (torchtune's OffloadActivations
  -- use_streams) and K and V copied to every query head by the model's
  -- code (torchtitan's repeat_kv, nanoVLM's repeat_interleave)
  { "parallel", "checkpoint_offload_streams" }, { "workload", "kv_repeat" },
  -- ZeRO-Offload's one-step delayed update (tests/lua/case_offload_host.t)
  { "parallel", "delayed_update" },
}

t.plan(4 * #FIELDS + 11)

-- The case schema built after the declarations of FIELDS were swapped for
-- an enum of one made-up value: a field typed from its declaration
-- follows, one typed beside it does not.
local function schema_with_swapped()
  local saved = {}
  for _, f in ipairs(FIELDS) do
    local d = options.get(f[2])
    saved[f[2]] = { type = d.type, kind = d.kind, values = d.values }
    d.type, d.kind, d.values = "string", "enum", { "made-up" }
  end
  package.loaded["gpuplan.validate"] = nil
  local ok, v = pcall(require, "gpuplan.validate")
  for _, f in ipairs(FIELDS) do
    local d = options.get(f[2])
    d.type, d.kind, d.values = saved[f[2]].type, saved[f[2]].kind, saved[f[2]].values
  end
  package.loaded["gpuplan.validate"] = nil
  assert(ok, v)
  return v.case_schema
end

local swapped = schema_with_swapped()
local validate = require "gpuplan.validate"
for _, f in ipairs(FIELDS) do
  local spec = validate.case_schema.fields[f[1]].fields[f[2]]
  local path = f[1] .. "." .. f[2]
  t.ok(spec ~= nil, path .. " is a case field")
  -- the option's values: a flag's true and false, an enum's declared
  -- names, a number's range ends; nothing else
  local d = options.get(f[2])
  local values = d.values or ((d.type == "number" or d.type == "int" or d.kind == "power") and d.range and { d.range[1], d.range[2] })
    or { true, false }
  local all = true
  for _, x in ipairs(values) do all = all and pcall(spec.check, x, path) end
  t.ok(all, path .. " takes the option's values")
  local ok, e = pcall(spec.check, "made-up", path)
  t.ok(not ok and tostring(e.msg or e):find("expected", 1, true),
    path .. ": another value is refused")
  local sw = swapped.fields[f[1]].fields[f[2]]
  t.ok(pcall(sw.check, "made-up", path) and not pcall(sw.check, true, path),
    path .. " follows the option's declaration")
end

-- rl.ema is the rl variant of the ema option (a flag: DeepSpeed-Chat's
-- --enable_ema), where workload.ema takes train's names.
do
  local spec = validate.case_schema.fields.rl.fields.ema
  t.ok(pcall(spec.check, true, "rl.ema") and pcall(spec.check, false, "rl.ema"),
    "rl.ema takes true and false (the option's rl variant)")
  t.ok(not pcall(spec.check, "gpu", "rl.ema"), "rl.ema refuses train's names")
end

-- The predictor hands the field on: Megatron-Bridge's H100 Llama 3 8B
-- row (Megatron-FSDP) stated with the fusion on takes it, and its
-- defaults no longer say the Megatron-FSDP default.
local doc = t.shipped_cases()
local case
for _, c in ipairs(doc.cases or doc) do
  if c.id == "mbridge2511-h100-llama3-8b" then case = c end
end
local train = require "gpuplan.train"
local orig, handed = train.train, nil
train.train = function(o) handed = o.gradient_accumulation_fusion; return orig(o) end
local predict = require "gpuplan.predict.train"
local plain = predict(case, gp.catalog())
case.parallel.gradient_accumulation_fusion = true
local stated = predict(case, gp.catalog())
train.train = orig
t.ok(table.concat(plain.defaults, ";"):find("gradient_accumulation_fusion=false", 1, true),
  "unstated: the Megatron-FSDP default, said")
t.ok(handed == true and not table.concat(stated.defaults, ";"):find(
  "gradient_accumulation_fusion", 1, true), "stated: handed on as the option, no default said")

-- kernels: torchtitan's end-2024 Llama 3.1 8B row without torch.compile
-- states eager; the stack profile's fused (torch.compile) is then not
-- said, and the step is slower than the same row compiled (the eager
-- modules launch one kernel per PyTorch op: more memory-bound passes).
local eager, compiled
for _, c in ipairs(doc.cases or doc) do
  if c.id == "torchtitan2412-h100-llama31-8b-8gpu-fsdp" then eager = c end
end
compiled = cjson.decode(cjson.encode(eager))
compiled.workload.kernels = nil
local kept
train.train = function(o) kept = o.kernels; return orig(o) end
local pe = predict(eager, gp.catalog())
train.train = orig
local pc = predict(compiled, gp.catalog())
t.ok(kept == "eager" and not table.concat(pe.defaults, ";"):find("kernels=", 1, true)
  and table.concat(pc.defaults, ";"):find("kernels=fused", 1, true),
  "kernels stated: handed on as the option, the profile's fused not said")
t.ok(pe.value < pc.value, "eager kernels: fewer tokens/s than the compiled row")

-- flash: Qwen-VL-Chat's remote modeling_qwen.py has only its matmul-softmax
-- _attn, which the rows state as flash false; handed on as the option, the
-- hf stack's flash default then not applied, and the step slower than the
-- same row on a fused kernel (the s^2 scores written, read and saved: at
-- 2048 tokens 32 heads x 2048^2 of them a layer).
local qvl
for _, c in ipairs(doc.cases or doc) do
  if c.id == "qwenvl-readme-chat-lora-a100-s2048" then qvl = c end
end
local fused = cjson.decode(cjson.encode(qvl))
fused.workload.flash = nil
local fl
train.train = function(o) fl = o.flash; return orig(o) end
local pu = predict(qvl, gp.catalog())
train.train = orig
local pf = predict(fused, gp.catalog())
t.ok(fl == false and not table.concat(pu.defaults, ";"):find("flash=", 1, true)
  and table.concat(pf.defaults, ";"):find("flash=true", 1, true),
  "flash stated false: handed on as the option, the stack's flash not said")
t.ok(pu.value > pf.value, "unfused attention: a longer step than the fused kernel's")

-- ckpt_outside_fsdp: the PyTorch FSDP post's GPT-3 175B row states it
-- (ptd_benchmark's checkpoint_wrapper around a block of per-module FSDP
-- units); handed on as the option.  Unstated, the pytorch-fsdp profile
-- sets nothing, so the row prices two gathers a unit, not three: a higher
-- TFLOP/s (the recompute forward's gather -- 2 B x 175.2B parameters,
-- 350 GB gathered into each rank a step -- no longer on the path).  Only
-- the order is checked: the size of the step's change is the engine's
-- (tests/lua/ckpt_outside_fsdp.t prices it by hand).
local r175
for _, c in ipairs(doc.cases or doc) do
  if c.id == "fsdp1t-a100-40g-gpt-175b-128gpu-b20-s512" then r175 = c end
end
local co
train.train = function(o) co = o.ckpt_outside_fsdp; return orig(o) end
local p3 = predict(r175, gp.catalog())
train.train = orig
local two = cjson.decode(cjson.encode(r175))
two.parallel.ckpt_outside_fsdp = nil
local p2 = predict(two, gp.catalog())
t.ok(co == true and r175.parallel.ckpt_outside_fsdp == true,
  "ckpt_outside_fsdp stated: handed on as the option")
t.ok(p3.value < p2.value, string.format(
  "ckpt_outside_fsdp: the third gather a unit lowers TFLOP/s/GPU (%.1f < %.1f)", p3.value, p2.value))
-- stated false under the accelerate-fsdp profile (whose transformers
-- checkpoint sits outside the unit): the case's false wins, the profile's
-- true is not said.
local dsc
for _, c in ipairs(doc.cases or doc) do
  if c.id == "dscompile-h100x32-llama3-70b-fsdp-mb1-s512" then dsc = c end
end
local off = cjson.decode(cjson.encode(dsc))
off.parallel.ckpt_outside_fsdp = false
train.train = function(o) co = o.ckpt_outside_fsdp; return orig(o) end
local pon, poff = predict(dsc, gp.catalog()), nil
co = nil
poff = predict(off, gp.catalog())
train.train = orig
t.ok(co == false and not table.concat(poff.defaults, ";"):find("ckpt_outside_fsdp", 1, true)
  and table.concat(pon.defaults, ";"):find("ckpt_outside_fsdp=true", 1, true),
  "ckpt_outside_fsdp stated false: the case's, the accelerate-fsdp profile's true not said")
