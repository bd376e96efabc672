-- Activation quantisation before an fp8/fp4 linear (engine/infer.c
-- act_quant): TensorRT-LLM's PyTorch flow quantises a linear's bf16 input
-- in a kernel of its own unless its producer wrote the format already.
-- At tp 1: before qkv and the dense MLP's up projection (the RMSNorm
-- writes bf16), before the routed experts (at every tp), before the dense
-- down projection in NVFP4 only (the FP8 SwiGLU writes FP8); never before
-- o_proj (the attention writes the format).  Other runtimes, 16-bit and
-- weight-only formats: no such kernel.
-- TensorRT-LLM's CUTLASS fused MoE also permutes the tokens' rows into the
-- experts' blocks before its first grouped GEMM (infer.c moe_expand).
-- Run with ./gpuplan run tests/lua/act_quant.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(15)

local function ops(x)
  local r = gp.infer(t.with({ batch = 64, input = 1024, output = 2, runtime = "trtllm" }, x))
  local byname = {}
  for _, o in ipairs(r.decode.ops) do byname[o.name] = o end
  return byname
end

-- Qwen3-30B-A3B NVFP4 on one B200, 64 sequences decoding: a pass reads
-- 64 x 2048 bf16 activations (2 B) and writes them at 4.5 bits (4-bit
-- codes + an e4m3 scale per 16: 0.5625 B): 64 x 2048 x 2.5625 =
-- 335,872 B, before qkv and before the routed experts.
local q = ops { model = "qwen3-30b-a3b", gpu = "b200", weights = "fp4", kv = "fp8" }
t.is(q.qkv_quant and q.qkv_quant.bytes, 64 * 2048 * 2.5625, "NVFP4 qkv: the norm's output quantised")
t.is(q.moe_quant and q.moe_quant.bytes, 64 * 2048 * 2.5625, "NVFP4 MoE: its input quantised")
t.is(q.o_proj_quant, nil, "o_proj: the attention writes NVFP4, no pass")

-- vLLM in the same job: no such kernel (its own model's accounting).
local v = ops { model = "qwen3-30b-a3b", gpu = "b200", weights = "fp4", kv = "fp8", runtime = "vllm" }
t.is(v.qkv_quant, nil, "vLLM: no act_quant kernel")

-- Llama-3.1-8B FP8 on one H100: the pass writes 1 B an element, 64 x
-- 4096 x 3 = 786,432 B before qkv and the up projection; the SwiGLU
-- writes FP8 for the down projection itself.
local l8 = ops { model = "llama3.1-8b", gpu = "h100-sxm", weights = "fp8" }
t.is(l8.mlp_up_quant and l8.mlp_up_quant.bytes, 64 * 4096 * 3, "FP8 up projection: the norm's output quantised")
t.is(l8.mlp_down_quant, nil, "FP8 down projection: the SwiGLU writes FP8")

-- NVFP4 on a B200: the down projection's input, 64 x 14336 x 2.5625 B.
local l4 = ops { model = "llama3.1-8b", gpu = "b200", weights = "fp4" }
t.is(l4.mlp_down_quant and l4.mlp_down_quant.bytes, 64 * 14336 * 2.5625,
     "NVFP4 down projection: the SwiGLU's bf16 output quantised")

-- With tp 2 and a hidden above 4096 (Llama-3.1-70B's 8192) the all-reduce
-- fuses the norm and the quantisation; at 4096 (Llama-3.1-8B) TensorRT-LLM
-- keeps that fusion off and the norm's output is quantised on its own.
local tp2 = ops { model = "llama3.1-70b", gpu = "b200", weights = "fp4", tp = 2 }
t.ok(tp2.qkv_quant == nil and tp2.mlp_up_quant == nil and tp2.mlp_down_quant ~= nil,
     "tp 2, hidden 8192: the fused all-reduce quantises the norm's output; the down projection's pass stays")
local s2 = ops { model = "llama3.1-8b", gpu = "b200", weights = "fp4", tp = 2 }
t.is(s2.qkv_quant and s2.qkv_quant.bytes, 64 * 4096 * 2.5625,
     "tp 2, hidden 4096: no fusion, the norm's output quantised")

-- bf16 and weight-only int4 multiply 16-bit activations: nothing to cast.
t.is(ops({ model = "llama3.1-8b", gpu = "h100-sxm", weights = "bf16" }).qkv_quant, nil, "bf16: no pass")
t.is(ops({ model = "llama3.1-8b", gpu = "h100-sxm", weights = "awq" }).qkv_quant, nil, "weight-only int4: no pass")

-- The MoE's permute: 64 tokens x (top-k 8 copies written + the source row
-- read once) x 2048 at NVFP4's 0.5625 B = 663,552 B; in bf16 2 B a value.
t.is(q.moe_expand and q.moe_expand.bytes, 64 * 9 * 2048 * 0.5625, "NVFP4 MoE: the k-fold row copy in NVFP4")
local qb = ops { model = "qwen3-30b-a3b", gpu = "b200", weights = "bf16" }
t.is(qb.moe_expand and qb.moe_expand.bytes, 64 * 9 * 2048 * 2, "bf16 MoE: the copy in bf16")
t.is(v.moe_expand, nil, "vLLM: Triton's fused_moe gathers inside the GEMM, no copy")
t.is(l4.moe_expand, nil, "a dense model: no MoE copy")
