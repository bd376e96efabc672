-- The torchtitan profile's attention kernel off NVIDIA: its "FLASH_ATTENTION
-- first" names FlashAttention-2 on CUDA, but PyTorch's ROCm build runs its
-- own kernel behind that backend (sdp_utils.cpp
-- check_flash_attention_hardware_support: CK when the user picks it, else
-- AOTriton), so on an AMD card the profile names none and the card's own
-- measured fused kernel prices the attention (catalog: CDNA3's CK).
-- Before, a torchtitan case on MI300X was refused ("no measurement of
-- attention kernel 'fa2' on mi300x").  Run with
-- ./gpuplan run tests/lua/torchtitan_rocm_attn.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(4)

-- (t.handed: the options the train predictor hands gp.train, caught)
local case = {
  id = "t", kind = "train",
  model = { name = "Llama 3 8B", layers = 32, hidden = 4096, heads = 32, kv_heads = 8,
            ffn_hidden = 14336, ffn_gated = true, vocab = 128256, tied_embeddings = false,
            params_b = 8.03 },
  hardware = { gpu = "mi300x", gpus = 8, gpus_per_node = 8 },
  parallel = { tp = 1, pp = 1, dp = 8, zero = 3, fsdp = "full_shard", fsdp_version = 2,
               micro_batch = 1, global_batch = 8, recompute = "op" },
  workload = { seq_len = 8192, precision = "bf16", method = "pretrain",
               framework = "torchtitan" },
  measured = { metric = "tokens_per_s_per_gpu", value = 5376.5 },
  source = { title = "torchao float8 README" },
}
local ok, seen, r = pcall(t.handed, case)
t.ok(ok and type(r) == "table" and type(r.value) == "number" and r.value > 0,
     "mi300x: priced, not refused")
t.ok(seen ~= nil and seen.attn_kernel == nil, "mi300x: the profile names no attention kernel")
-- Priced with the card's own: the same job with attn_kernel = "ck" stated
-- gives the same step (exact: one code path).
local job = {}
for k, v in pairs(seen or {}) do job[k] = v end
local own = gp.train(job)
job.attn_kernel = "ck"
local ck = gp.train(job)
t.ok(math.abs(own.step_s - ck.step_s) < 1e-12, "mi300x: the card's own kernel, CK")
-- On an H100 the profile keeps FlashAttention-2.
case.hardware.gpu = "h100-sxm"
seen = t.handed(case)
t.ok(seen ~= nil and seen.attn_kernel == "fa2", "h100-sxm: fa2, as before")
