-- mlp_down_bf16: under an fp8 recipe the dense MLP's down projection (fc2,
-- row-parallel) stays in bf16, as HabanaAI Megatron-LM's Llama recipe runs
-- it (examples/llama/pretrain_llama.sh: FP8_COVERAGE "mlp_row_parallel=
-- False ..." passed as --fp8-coverage; gpt_layer_specs.py builds fc2 as
-- the bf16 RowParallelLinear then; engine/train_layer.c gemm_costs).
-- Run with ./gpuplan run tests/lua/mlp_down_bf16.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(8)

local op = t.op
-- The Gaudi 2 Llama 3.1 8B recipe's shape and layout (HabanaAI
-- Megatron-LM examples/llama/README.md: HL_DP=4 HL_TP=2 HL_PP=1,
-- selective recompute, seq 8192, global batch 128, micro-batch 1).
local m = { name = "llama31-8b-shape", layers = 32, hidden = 4096, heads = 32, kv_heads = 8,
            head_dim = 128, ffn_hidden = 14336, ffn_gated = true, vocab = 128256,
            tied_embeddings = false }
local job = { model = m, gpu = "gaudi2", gpus = 8, tp = 2, batch = 1, seq = 8192,
              global_batch = 128, stack = "megatron", zero = 1, precision = "fp8",
              recompute = "selective", method = "pretrain" }
local f8 = gp.train(job)
local cov = gp.train(t.with(job, { mlp_down_bf16 = true }))
local b16 = gp.train(t.with(job, { precision = "bf16" }))

-- fc2 is the bf16 run's GEMM: the same FLOPs at the 16-bit rate (Gaudi 2:
-- 432 TFLOPS bf16 against 865 fp8), its weight read in 2 B and no fp8
-- casts, so forward and backward equal the bf16 run's op.  The same
-- computation either way: float rounding only, 1e-12.
local d, d16 = op(cov, "mlp_down"), op(b16, "mlp_down")
t.near(d.fwd / d16.fwd, 1, 1e-12, "fc2's forward is the bf16 run's")
t.near(d.bwd / d16.bwd, 1, 1e-12, "fc2's dgrad and wgrad are the bf16 run's")
-- and slower than the fp8 GEMM it replaces (twice the FLOP time at half
-- the peak; the casts it drops are a memory pass, far less)
t.ok(d.fwd > op(f8, "mlp_down").fwd, "fc2 in bf16 is slower than in fp8")
-- The other linears keep the fp8 recipe: qkv, o_proj and fc1 as the fp8
-- run's, exactly.
local same = true
for _, n in ipairs { "qkv", "o_proj", "mlp_up" } do
  same = same and op(cov, n).fwd == op(f8, n).fwd and op(cov, n).bwd == op(f8, n).bwd
end
t.ok(same, "qkv, o_proj and fc1 stay fp8")
-- The step grows by fc2's difference in every layer of every micro-batch:
-- (fwd + bwd in bf16 - fwd + bwd in fp8) x 32 layers x 32 micro-batches
-- (128 / dp 4 / micro-batch 1).  Selective recompute redoes the attention
-- core only, no linear; no TP overlap hides a GEMM.  Float rounding: 1e-9.
local dd = (d.fwd + d.bwd) - (op(f8, "mlp_down").fwd + op(f8, "mlp_down").bwd)
t.near((cov.step_s - f8.step_s) / (dd * 32 * 32), 1, 1e-9,
       "the step grows by fc2's bf16 time, layers x micro-batches")

-- Without an fp8 recipe every linear is already 16-bit: refused by name.
local ok, e = pcall(gp.train, t.with(job, { precision = "bf16", mlp_down_bf16 = true }))
t.like(not ok and tostring(type(e) == "table" and e.msg or e) or "",
       "mlp_down_bf16.*precision = fp8", "bf16: refused, no fp8 recipe")

-- A stack with no dense MLP layer has no fc2 to keep out of fp8: every
-- feed-forward of Mixtral 8x7B (no dense_layers) and of Nemotron 3 Nano's
-- pattern (M, E and * only, no -) is MoE experts, where the flag would
-- price the same step in silence.  Refused by name, exit 1 (the model
-- lacks what the option acts on, as cuda_graph_scope mamba without M).
for _, id in ipairs { "mixtral-8x7b", "nemotron-3-nano-30b-a3b" } do
  local ok2, e2 = pcall(gp.train, { model = id, gpu = "h100-sxm", gpus = 8, precision = "fp8",
                                    stack = "megatron", mlp_down_bf16 = true })
  t.like(not ok2 and tostring(type(e2) == "table" and e2.msg or e2) or "",
         "mlp_down_bf16 .*" .. id:gsub("%-", "%%-") .. " has no dense MLP layer",
         id .. ": refused, no dense MLP")
end
