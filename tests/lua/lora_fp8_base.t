-- LoRA on a frozen base held as Transformer Engine fp8 parameters (NeMo's
-- fp8_params, TE's fp8_model_init), as the MLPerf Training Llama 2 70B LoRA
-- runs hold it (validation/cases.json, mlperf-t*-llama2-70b-lora-*):
-- gp.train's weights = "fp8" under the megatron stack's fp8 recipe.  TE's
-- fp8 GEMM reads the 1-byte weight as it is (no dequantised copy) and a
-- frozen TE linear keeps no input ("if weight.requires_grad: ...
-- saved_inputmat = inputmat", TE v1.6 module/linear.py; layernorm_linear.py
-- "ln_out if weight.requires_grad else None"), where a bitsandbytes-style
-- quantised base keeps its input and is dequantised before each matmul.
-- Run with ./gpuplan run tests/lua/lora_fp8_base.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(9)

-- AMD's MLPerf v5.0 MI300X layout (config_MI300X_1x8x1.sh: TP 1, MBS 1,
-- seq 8192, LoRA rank 16 on linear_qkv and linear_proj, adapter dropout
-- 0.1), without its 21 recomputed layers so that act_layer is one whole
-- layer's saved set.
local job = { model = "llama2-70b", gpu = "mi300x", gpus = 8, tp = 1, seq = 8192, batch = 1,
              global_batch = 8, method = "lora", precision = "fp8", stack = "megatron",
              lora_rank = 16, lora_targets = "q,k,v,o", lora_dropout = 0.1,
              recompute = "none", flash = true }
local b16 = gp.train(job)
local f8 = gp.train(t.with(job, { weights = "fp8" }))

-- One layer's saved bytes a token, by hand (A = 2 B; h 8192, kv 1024 each,
-- ffn 28672, 64 heads):
--   two norm inputs            2 x 8192 x 2          = 32768
--   q, k, v for the attention  (8192 + 1024 + 1024) x 2 = 20480
--   the attention output O     8192 x 2              = 16384
--   its log-sum-exp (fp32)     64 x 4                = 256
--   fused SwiGLU: gate and up  2 x 28672 x 2         = 114688
--   adapters: the qkv and o inputs' dropout outputs and masks
--                              2 x 8192 x (2 + 1)    = 49152
--   and their rank-16 outputs  (3 + 1) x 16 x 2      = 128
-- = 233856; no frozen base linear keeps its input.  x 8192 tokens.  Exact
-- (1e-9: the same sums in another order).
t.near(f8.memory.act_layer, 233856 * 8192, 1e-9,
       "TE fp8 base: a layer keeps what a bf16 frozen base keeps, by hand")
t.near(f8.memory.act_layer, b16.memory.act_layer, 1e-12,
       "TE fp8 base: no linear input kept for a weight gradient")

-- The same fp8 weights outside the fp8 recipe stay a quantised base whose
-- matmuls keep their inputs (bitsandbytes-style, memory_stage_act.c): the
-- QKV input 8192 x 2, the MLP input 8192 x 2 and the down projection's
-- 28672 x 2 (the projection's input is the O flash keeps anyway) = 90112 B
-- a token more.  Exact.
local q16 = gp.train(t.with(job, { weights = "fp8", precision = "bf16" }))
t.near(q16.memory.act_layer - f8.memory.act_layer, 90112 * 8192, 1e-9,
       "fp8 weights under a bf16 recipe: the quantised base keeps its inputs")

-- The weights: the layers' linears at 1 B, the rest (embedding, output
-- layer, norms) at 2 B.  Linears a layer 8192 x (8192 + 1024 + 1024 + 8192)
-- + 3 x 8192 x 28672 = 855638016, x 80 = 68451041280; the rest 2 x 32000 x
-- 8192 + (2 x 80 + 1) x 8192 = 525606912.  68451041280 + 2 x 525606912 =
-- 69502255104 B.  Exact.
t.near(t.part(f8.memory, "weights"), 69502255104, 1e-12,
       "TE fp8 base: linears 1 B, embedding, head and norms 2 B")

-- No dequantisation: TE's fp8 GEMM reads the fp8 parameter where it reads
-- the fp8 copy of a bf16 one, so the step is the bf16 base's (exact), and no
-- dequantised matrix sits in a workspace.
t.near(f8.step_s, b16.step_s, 1e-12, "TE fp8 base: no dequantisation pass priced")
t.is(t.part(f8.memory, "workspace") or 0, 0, "TE fp8 base: no dequantisation workspace")

-- AMD ran it on 8 MI300X (192 GB) with 21 of the 80 layers recomputed
-- ("ACG=full && export ACM=block && export ACL=21"): it must fit the card
-- (margin 0: the 10% planning margin is a user's choice, not the card's).
-- With a 16-bit base it cannot: 68976648192 weights alone take 128.5 GiB
-- of the card's 189.9 usable, and the 59 layers kept whole 59 x 233856 x
-- 8192 B = 105.3 GiB more.
local amd = t.with(job, { recompute = "full", recompute_layers = 21, margin = 0 })
local a8 = gp.train(t.with(amd, { weights = "fp8" }))
t.ok(a8.fits, string.format("AMD's MI300X LoRA layout fits with the fp8 base (%.1f GiB of %.1f)",
                            a8.memory.total / 2^30, a8.memory.capacity / 2^30))
t.ok(not gp.train(amd).fits, "and not with a bf16 base")

-- The train predictor hands a case's workload.weight_dtype to gp.train as
-- its weights (validate: SCHEMA.md, a train case's lora/qlora frozen
-- base): AMD's MI300X row states "fp8" (its yaml's fp8_params).
local amd_case
for _, c in ipairs(t.shipped_cases()) do
  if c.id == "mlperf-t50-llama2-70b-lora-amd-mi300x-n1" then amd_case = c end
end
local seen = amd_case and t.handed(amd_case)
t.ok(seen and seen.weights == "fp8" and seen.method == "lora",
     "a train case's weight_dtype reaches gp.train as its weights")
