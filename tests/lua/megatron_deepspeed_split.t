-- The Megatron-DeepSpeed profile (lua/gpuplan/predict/train.lua) runs
-- Megatron's fused modules: a Llama-named model, whose catalog family
-- declares split projections for the Hugging Face stack, is priced with
-- one qkv GEMM and one gate-up GEMM there.  Run with ./gpuplan run
-- tests/lua/megatron_deepspeed_split.t.
local t = require "tap"

t.plan(2)

local case = {
  id = "t", kind = "train",
  model = { name = "Llama 2 7B", layers = 32, hidden = 4096, heads = 32, kv_heads = 32,
            ffn_hidden = 11008, ffn_gated = true, vocab = 32000, tied_embeddings = false,
            params_b = 6.74 },
  hardware = { gpu = "a100-sxm-80gb", gpus = 8, gpus_per_node = 8 },
  parallel = { tp = 1, pp = 1, zero = 1, micro_batch = 1, global_batch = 64 },
  workload = { seq_len = 4096, precision = "bf16", method = "pretrain",
               framework = "megatron-deepspeed" },
  measured = { metric = "tokens_per_s_per_gpu", value = 3000 },
  source = { title = "Megatron-DeepSpeed Llama 2 run" },
}
local seen = t.handed(case)
t.ok(seen and seen.stack == "deepspeed" and seen.split_proj == false,
     "Megatron-DeepSpeed: fused qkv and gate-up whatever the model's family declares")
case.source.title = "DeepSpeed ZeRO-1 Llama 2 run with the Hugging Face Trainer"
case.workload.framework = "deepspeed"
seen = t.handed(case)
-- left unset, the option's default takes the model's declaration (options.lua
-- split_proj: "the model's split_proj on stacks hf and deepspeed").
t.ok(seen and seen.split_proj == nil and seen.model.split_proj == "both",
     "the same model under Hugging Face modules: q, k, v and gate, up split")
