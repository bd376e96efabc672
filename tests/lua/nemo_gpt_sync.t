-- The gradient-sync dtype and TP overlap of the NeMo-Framework-Launcher
-- 24.07 rows.  Every non-FSDP H100 script of the launcher's performance
-- examples (examples/training/gpt/h100/*.sh, examples/training/llama/
-- h100/*.sh) passes "+training.model.optim.grad_sync_dtype=bf16", over
-- the yamls (only 175b_fp8.yaml names it; 5b.yaml and 20b.yaml leave
-- apex's fp32 default): the GPT-3 cases state it (parallel.grad_reduce),
-- the Llama pretraining rows take it from the NeMo profile; the LoRA rows
-- (fused_adam under megatron_amp_O2) keep fp32 main grads.  20b.yaml has
-- "ub_tp_comm_overlap: True", 175b.yaml "False".  The shipped rows are
-- predicted and the options each is handed are read back.  Run with
-- ./gpuplan run tests/lua/nemo_gpt_sync.t.
local t = require "tap"
local gp = require "gpuplan"
local train = require "gpuplan.train"
local predict = require "gpuplan.predict.train"

t.plan(9)

local cat = gp.catalog()
local doc = t.shipped_cases()
local cases = doc.cases or doc

-- gp.train's options as the predictor hands them, caught.
local orig, opts, res = train.train, nil, nil
train.train = function(o)
  opts = {}
  for k, x in pairs(o) do opts[k] = x end
  res = orig(o)
  return res
end
local function handed(id)
  for _, c in ipairs(cases) do
    if c.id == id then
      opts = nil
      local p, why = predict(c, cat)
      assert(p, why)
      return opts.grad_reduce, opts.tp_overlap
    end
  end
  error("no case " .. id)
end

t.is(handed("nemo2407-pretrain-gpt3-5b-64"), "bf16", "GPT-3 5B (5b_fp8_8node.sh): bf16")
t.is(handed("nemo2407-pretrain-gpt3-20b-64"), "bf16", "GPT-3 20B (20b_fp8_*.sh): bf16")
t.is(handed("nemo2407-pretrain-gpt3-175b-128"), "bf16", "GPT-3 175B (175b_fp8.yaml): bf16")
t.is(handed("nemo2407-pretrain-gpt3-175b-512"), "bf16", "GPT-3 175B at 512 GPUs: bf16")
-- The Llama pretraining scripts override the yaml: bf16.
t.is(handed("nemo2407-pretrain-llama3-8b"), "bf16", "Llama 3 8B (llama3_8b_fp8.sh): bf16")
-- The measured run fits: with fp32 gradients its unsharded grad buffer
-- alone was 8.03e9 x 4 B = 29.9 GiB and the GPU needed 85.4 GiB of 79.1;
-- in bf16 the buffer is 15 GiB and the whole about 70 GiB.
t.ok(res and res.fits, "Llama 3 8B at CP 2, DP 4 fits with bf16 gradients")
t.is(handed("nemo2407-finetune-llama2-7b-lora"), "fp32", "Llama 2 7B LoRA (fused_adam, O2): fp32")
t.is(select(2, handed("nemo2407-pretrain-gpt3-20b-64")), true, "GPT-3 20B: ub_tp_comm_overlap True")
t.is(select(2, handed("nemo2407-pretrain-gpt3-175b-128")), false, "GPT-3 175B: ub_tp_comm_overlap False")
train.train = orig
