-- workload.recipe: the model-state bytes a case's source states (gp.train's
-- recipe), over the stack's default for the precision.  The PEFT method
-- comparison's full fine-tune of Llama 3.2 3B on one L40S loads the model
-- in bf16 and steps torch.optim.AdamW over the bf16 parameters with no
-- autocast (method_comparison/MetaMathQA utils.py get_base_model:
-- kwargs["dtype"] = torch.bfloat16; "use_amp": false), so its moments are
-- zeros_like(p), bf16, and there is no fp32 master.
-- Run with ./gpuplan run tests/lua/case_recipe.t.
local t = require "tap"
local gp = require "gpuplan"
local cjson = require "cjson"

t.plan(11)

local validate = require "gpuplan.validate"
local spec = validate.case_schema.fields.workload.fields.recipe
t.ok(spec ~= nil, "workload.recipe is a case field")
-- every name the field takes is a recipe of the catalog (gp.train's
-- recipe option takes a catalog recipe's id)
local cat = gp.catalog()
local all, bad = true, nil
for _, name in ipairs({ "mixed-16", "mixed-16-rem", "megatron-18", "fp32", "bf16", "fp8",
  "fp8-16-rem", "deepseek-fp8", "deepspeed-bf16" }) do
  local ok = pcall(spec.check, name, "workload.recipe")
  local okc = pcall(cat.get, cat, "recipes", name)
  if not (ok and okc) then all, bad = false, name end
end
t.ok(all, "the field takes the catalog's recipes" .. (bad and (" (not " .. bad .. ")") or ""))
local ok, e = pcall(spec.check, "made-up", "workload.recipe")
t.ok(not ok and tostring(e.msg or e):find("expected", 1, true), "another name is refused")

local doc = t.shipped_cases()
local case
for _, c in ipairs(doc.cases or doc) do
  if c.id == "peft-metamathqa-l40s-llama32-3b-full" then case = c end
end
t.ok(case and case.workload.recipe == "bf16", "the PEFT full fine-tune row states recipe bf16")

local train = require "gpuplan.train"
local predict = require "gpuplan.predict.train"
local orig, res, handed = train.train, nil, nil
train.train = function(o) handed = o.recipe; res = orig(o); return res end
local stated = predict(case, cat)
local rs, hs = res, handed
local plain_case = cjson.decode(cjson.encode(case))
plain_case.workload.recipe = nil
local plain = predict(plain_case, cat)
local rp = res
train.train = orig

t.ok(hs == "bf16" and rp.recipe == "mixed-16", "stated: handed on as gp.train's recipe; unstated: the hf stack's mixed-16")
-- Fit: mixed-16 keeps 2 + 2 + 12 = 16 B a parameter, 16 x 3.2127e9 =
-- 51.4 GB of model states, above the L40S's 48 GB before any activation;
-- bf16 keeps 2 + 2 + 4 = 8 B, 25.7 GB (the run's own peak,
-- "accelerator_memory_max": 38868615168, 38.9 GB, fits the card).
t.ok(rs.fits == true and rp.fits == false, "bf16 states fit the 48 GB card, mixed-16's do not")
-- The forward and backward are the same work in both: only the
-- optimizer step's state traffic differs.
t.ok(math.abs(rs.stage_time_s - rp.stage_time_s) < 1e-9, "the compute stage is the same")
-- Fewer state bytes a parameter to read and write: a shorter step, so
-- more tokens/s (measured 2315.6; the engine's mixed-16 step is 0.58 s
-- where the measured is 0.36).
t.ok(stated.value > plain.value, string.format("bf16 states: more tokens/s (%.0f > %.0f)",
  stated.value, plain.value))

-- A memory case's recipe reaches gp.memory too (it was read as the
-- stack's default before).  DeepSpeedExamples' bf16 master-weight row
-- (training/bf16_master_weight, configs/bf16_full.json: bf16 with
-- bf16_master_weights_and_grads and bf16_optimizer_states at ZeRO 3)
-- keeps no master beside its bf16 partition (stage3.py at 39a682d79:
-- "elif self.fp16_partitioned_groups_flat[i].dtype ==
-- self.master_weights_and_grads_dtype ...: ... we don't need another copy
-- of the weights") and bf16 moments: recipe bf16.
local mcase
for _, c in ipairs(doc.cases or doc) do
  if c.id == "dsbf16master-h100x4-6.9b-zero3-s512-bf16master-mem" then mcase = c end
end
t.ok(mcase and mcase.workload.recipe == "bf16", "the DeepSpeed bf16-master memory row states recipe bf16")
local memory = require "gpuplan.memory"
local pmem = require "gpuplan.predict.memory"
local morig, mres = memory.memory, nil
memory.memory = function(o) mres = morig(o); return mres end
local mstated = pmem(mcase, cat)
local ms = mres
local mplain_case = cjson.decode(cjson.encode(mcase))
mplain_case.workload.recipe = nil
local mplain = pmem(mplain_case, cat)
local mp = mres
memory.memory = morig
t.ok(ms.recipe == "bf16" and ms.state_bytes.master == 0 and ms.state_bytes.optimizer == 4 and
  mp.recipe == "deepspeed-bf16" and mp.state_bytes.master == 4 and mp.state_bytes.optimizer == 8,
  "stated: gp.memory sizes bf16 (no master, 2 x 2 B moments); unstated: deepspeed-bf16 (4 + 2 x 4 B)")
-- The peak falls by the master and half the moments of this GPU's
-- partition: (4 + 4) B x params / dp, with the engine's 6,855,868,416
-- parameters over 4 GPUs: 8 x 1,713,967,104 = 13.71e9 B = 12.77 GiB.
-- Tolerance 1%: every other term (weights, the step's gradient
-- buffers, the gathered layer) is the same in both.
local want = 8 * (ms.params / 4) / 2^30
local got = mplain.value - mstated.value
t.ok(math.abs(got - want) / want < 0.01, string.format(
  "the peak falls by the master and half the moments (%.2f GiB, want %.2f)", got, want))

