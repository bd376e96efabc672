-- What the NeMo AutoModel profile (lua/gpuplan/predict/train.lua) sets for
-- a train case whose source names NeMo AutoModel: FSDP2 over PyTorch
-- modules compiled whole, SDPA with cuDNN first, bf16 reduction -- not
-- NeMo's Megatron-Core profile.  Run with ./gpuplan run
-- tests/lua/automodel_profile.t.
local t = require "tap"

t.plan(2)

local case = {
  id = "t", kind = "train",
  model = { name = "Llama 3.1 70B", layers = 80, hidden = 8192, heads = 64, kv_heads = 8,
            ffn_hidden = 28672, ffn_gated = true, vocab = 128256, tied_embeddings = false,
            params_b = 70.55 },
  hardware = { gpu = "h100-sxm", gpus = 64, gpus_per_node = 8, inter_node = "ib-ndr-400",
               nics_per_node = 8 },
  parallel = { tp = 1, pp = 1, cp = 2, zero = 3, fsdp = "full_shard", micro_batch = 1,
               global_batch = 128, recompute = "full" },
  workload = { seq_len = 8192, precision = "bf16", method = "pretrain",
               framework = "nemo-automodel" },
  measured = { metric = "tokens_per_s_per_gpu", value = 866.77 },
  source = { title = "NVIDIA NeMo AutoModel performance summary (PyTorch backend)" },
}
local seen = t.handed(case)
t.ok(seen and seen.stack == "hf" and seen.kernels == "fused" and seen.attn_kernel == "cudnn"
     and seen.grad_reduce == "bf16",
     "AutoModel: FSDP2 (hf stack), compiled, cuDNN SDPA, bf16 reduce")
case.source.title = "NVIDIA NeMo Framework performance benchmarks (NeMo 24.07 container)"
case.workload.framework = "nemo"
seen = t.handed(case)
t.ok(seen and seen.stack == "megatron", "NeMo's own tables: Megatron-Core")
