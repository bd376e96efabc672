-- LoRA's adapters added into the weight each step (lora_merged): Praxis'
-- LoRA layers hand the layer W + A B^T as its weight (LoraTheta:
-- "new_var += var"), so autodiff computes the adapted weights' whole
-- gradient dW and contracts it with B and A.  Run with
-- ./gpuplan run tests/lua/lora_merged.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(9)

-- LLaMA-2 7B's layer (hidden 4096, gated MLP 11008, 32 heads of 128) on
-- one H100 SXM, one micro-batch of 2 x 4096 = 8192 tokens, rank 32 on
-- every linear, no adapter dropout.  No collective: one GPU.
local model = { id = "llama2-7b-t", layers = 32, hidden = 4096, heads = 32, kv_heads = 32,
                head_dim = 128, ffn_hidden = 11008, ffn_gated = true, vocab = 32000,
                tied_embeddings = false, norm = "rms" }
local job = { model = model, gpu = "h100-sxm", gpus = 1, method = "lora", lora_rank = 32,
              lora_targets = "q,k,v,o,gate,up,down", lora_dropout = 0, seq = 4096, batch = 2,
              global_batch = 2, kernels = "fused", stack = "megatron" }
local side = gp.train(job)
local merged = gp.train(t.with(job, { lora_merged = true }))

-- The base GEMMs' backward: beside the frozen weight only dX = dY W
-- (2 T in out FLOPs), merged dX and dW = dY^T X, a GEMM of the same
-- FLOPs and operands, so the op's backward doubles.  qkv: 8192 x 4096 x
-- 12288; the down projection: 8192 x 11008 x 4096.  Tolerance 2%: the
-- wgrad's depth is T (8192) where the dgrad's is the op's width, which
-- tiles a little differently; a missing wgrad reads 1.0.
t.near(t.op(merged, "qkv").bwd / t.op(side, "qkv").bwd, 2, 0.02,
       "qkv's backward doubles: the wgrad GEMM runs")
t.near(t.op(merged, "mlp_down").bwd / t.op(side, "mlp_down").bwd, 2, 0.02,
       "mlp_down's backward doubles")
-- The forward is the frozen one's: the same GEMM on the merged weight,
-- the same inputs, so 1e-12 relative (rounding only).
t.near(t.op(merged, "qkv").fwd, t.op(side, "qkv").fwd, 1e-12, "the base GEMM's forward unchanged")

-- The merge, per layer: w = 4096 x 12288 + 4096 x 4096 + 4096 x 22016 +
-- 11008 x 4096 = 202,375,168 weight elements.  Forward a GEMM of depth
-- 32 per weight (2 w r = 1.3e10 FLOPs, 13 us at the 989 TFLOP/s bf16
-- peak) reading W and writing the sum, 2 w x 2 B = 809.5 MB; backward
-- dA = dW B and dB = dW^T A, each reading dW: 809.5 MB again.  Memory-
-- bound: no faster than the 3.35 TB/s peak (0.2416 ms a pass), no
-- slower than half of it (0.4833 ms).
local function lora_sum(r, pass)
  local s = 0
  for _, o in ipairs(r.ops) do if o.name == "lora" then s = s + o[pass] end end
  return s
end
local bytes = 4 * 202375168
for _, pass in ipairs { "fwd", "bwd" } do
  local s = lora_sum(merged, pass)
  t.ok(s >= bytes / 3.35e12 and s <= bytes / 1.675e12,
       string.format("the merge's %s moves w A twice at 50-100%% of the bandwidth (%.4f ms)",
                     pass, s * 1e3))
end

-- The base still trains nothing: no optimizer step over its 6.7B weights
-- (full training prices one), and the step is the frozen base's plus
-- the wgrad GEMMs: above the side-path adapters', below full training's
-- GEMMs with its optimizer.
local fulljob = t.copy(job)
fulljob.method, fulljob.lora_rank, fulljob.lora_targets, fulljob.lora_dropout = "full", nil, nil, nil
local full = gp.train(fulljob)
t.ok(merged.step_s > side.step_s and merged.step_s < full.step_s,
     string.format("side %.4f s < merged %.4f s < full %.4f s", side.step_s, merged.step_s,
                   full.step_s))

t.raises(function() gp.train(t.with(fulljob, { lora_merged = true })) end,
         "train: lora_merged prices LoRA's adapters added into the weight: it needs method = lora "
           .. "(got method = full)",
         "said without LoRA it is refused, naming it", true)

-- Its adapters have no input of their own: a dropout on it is refused,
-- and left out it is none (not gp.train's 0.05 default).
t.raises(function() gp.train(t.with(job, { lora_merged = true, lora_dropout = 0.1 })) end,
         "lora_dropout: the adapters lora_merged adds into the weight have no input of their own",
         "a dropout is refused",
         true)

-- The case fields (SCHEMA.md workload.lora_merged, workload.lora.dropout)
-- reach gp.train.
local case = {
  id = "t", kind = "train",
  model = { name = "LLaMA-2 7B", layers = 32, hidden = 4096, heads = 32, kv_heads = 32,
            head_dim = 128, ffn_hidden = 11008, ffn_gated = true, vocab = 32000,
            tied_embeddings = false, params_b = 6.74 },
  hardware = { gpu = "h100-sxm", gpus = 8, gpus_per_node = 8 },
  parallel = { tp = 1, pp = 1, dp = 8, micro_batch = 2, global_batch = 16 },
  workload = { seq_len = 4096, precision = "bf16", method = "lora", lora_merged = true,
               lora = { rank = 32, targets = { "q", "v" }, dropout = 0 } },
  measured = { metric = "tokens_per_s_per_gpu", value = 10000 },
  source = { title = "t" },
}
local seen = t.handed(case)
t.ok(seen and seen.lora_merged == true and seen.lora_dropout == 0,
     "workload.lora_merged and workload.lora.dropout are gp.train's lora_merged and lora_dropout")
