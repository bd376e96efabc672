-- The stack profiles' "sm100 or newer" settings (lua/gpuplan/predict/
-- train.lua blackwell) follow the catalog GPU's architecture, not its id:
-- a user's Blackwell card under its own id gets Blackwell's, a user's
-- Hopper card whose id starts with "b9" gets Hopper's.  Megatron-Bridge's
-- perf_plugins.py: CUDA_DEVICE_MAX_CONNECTIONS 32 on sm100 or newer, 1 on
-- Hopper at TP > 1 without a2a overlap; torchtitan's SDPA: cuDNN first
-- on sm100 or newer, FlashAttention-2 first before.  Run with ./gpuplan
-- run tests/lua/profile_arch.t.
local t = require "tap"
local catalog = require "gpuplan.catalog"
local train = require "gpuplan.train"
local predict = require "gpuplan.predict.train"

t.plan(7)

local dirs = catalog.search_path()
local cat, errs = catalog.load { dirs[1], "tests/fixtures/catalog/userarch" }
t.is(#errs, 0, "the user's parts load over the shipped catalog")

local seen
local orig = train.train
train.train = function(o) seen = o; return orig(o) end
local function run(gpu, title, fw)
  seen = nil
  local case = {
    id = "t", kind = "train",
    model = { name = "Llama 3 8B", layers = 32, hidden = 4096, heads = 32, kv_heads = 8,
              ffn_hidden = 14336, ffn_gated = true, vocab = 128256, tied_embeddings = false,
              params_b = 8.03 },
    hardware = { gpu = gpu, gpus = 8, gpus_per_node = 8 },
    parallel = { tp = 2, pp = 1, micro_batch = 1, global_batch = 128 },
    workload = { seq_len = 8192, precision = "bf16", method = "pretrain", framework = fw },
    measured = { metric = "tokens_per_s_per_gpu", value = 1000 },
    source = { title = title },
  }
  local r, why = predict(case, cat)
  return r, why
end

local bridge = "Megatron-Bridge performance summary (25.11 NeMo container)"
local r, why = run("lab-card-x", bridge, "megatron-bridge")
t.ok(r and seen.cuda_device_max_connections == 32,
     "Megatron-Bridge on a user Blackwell card: 32 connections (got "
     .. tostring(seen and seen.cuda_device_max_connections or why) .. ")")
r, why = run("b9-hopper", bridge, "megatron-bridge")
t.ok(r and seen.cuda_device_max_connections == 1,
     "Megatron-Bridge on a Hopper card with a b-prefixed id: 1 at TP 2 (got "
     .. tostring(seen and seen.cuda_device_max_connections or why) .. ")")
r, why = run("b200", bridge, "megatron-bridge")
t.ok(r and seen.cuda_device_max_connections == 32, "the shipped B200 keeps 32")

local titan = "torchtitan Llama 3 8B benchmark"
r, why = run("lab-card-x", titan, "torchtitan")
t.ok(r and seen.attn_kernel == "cudnn", "torchtitan on a user Blackwell card: cuDNN SDPA first")
r, why = run("b9-hopper", titan, "torchtitan")
t.ok(r and seen.attn_kernel == "fa2", "torchtitan on a Hopper card with a b-prefixed id: FA2")
r, why = run("h100-sxm", titan, "torchtitan")
t.ok(r and seen.attn_kernel == "fa2", "the shipped H100 keeps FlashAttention-2")
train.train = orig
