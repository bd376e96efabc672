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
-- Above the custom all-reduce's workspace (gp.infer ar_fusion_max) the
-- all-reduce is NCCL's and the norm's output is quantised on its own again.
-- Run with ./gpuplan run tests/lua/act_quant.t.
local t = require "tap"
local gp = require "gpuplan"
local predict = require "gpuplan.predict.infer"

t.plan(29)

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

-- The fusion holds up to TensorRT-LLM 1.0's workspace (AllreduceOp falls
-- back to NCCL "if (message_size_bytes > max_workspace_size)",
-- getMaxRequiredWorkspaceSize 8 * 1000 * 1000 above tp 2, 16 * 1000 *
-- 1000 at tp 2), then fallbackRunSubsequentOps quantises norm_out in a
-- kernel of its own.  A decode step's all-reduce is batch x hidden x 2 B.
-- Llama-3.1-70B (hidden 8192) NVFP4 at tp 4: 488 sequences are
-- 488 x 8192 x 2 = 7,995,392 B <= 8e6, fused; 489 are 8,011,776 B > 8e6,
-- and the pass reads and writes 489 x 8192 x 2.5625 = 10,264,608 B.
-- Exact: the bytes are the formula's (no rounding in between).
local l70 = { model = "llama3.1-70b", gpu = "b200", weights = "fp4", kv = "fp8" }
local function l70ops(x) return ops(t.with(l70, x)) end
t.is(l70ops({ tp = 4, batch = 488 }).qkv_quant, nil, "tp 4, 7,995,392 B all-reduce: fused, no pass")
local big = l70ops { tp = 4, batch = 489 }
t.is(big.qkv_quant and big.qkv_quant.bytes, 489 * 8192 * 2.5625,
     "tp 4, 8,011,776 B all-reduce: NCCL, the norm's output quantised before qkv")
t.is(big.mlp_up_quant and big.mlp_up_quant.bytes, 489 * 8192 * 2.5625,
     "tp 4 over the workspace: and before the up projection")
-- At tp 2 the workspace is 16e6: 976 x 16384 = 15,990,784 B fused,
-- 977 x 16384 = 16,007,168 B not (977 x 8192 x 2.5625 = 20,509,184 B).
t.is(l70ops({ tp = 2, batch = 976 }).qkv_quant, nil, "tp 2, 15,990,784 B: fused")
local b2 = l70ops { tp = 2, batch = 977 }
t.is(b2.qkv_quant and b2.qkv_quant.bytes, 977 * 8192 * 2.5625, "tp 2, 16,007,168 B: a pass")
-- ar_fusion_max given: 0 fuses every size; "1MB" (1e6 B) sends 64
-- sequences' 1,048,576 B to NCCL (64 x 8192 x 2.5625 = 1,343,488 B pass).
t.is(l70ops({ tp = 4, batch = 489, ar_fusion_max = 0 }).qkv_quant, nil, "ar_fusion_max 0: every size fused")
local small = l70ops { tp = 4, batch = 64, ar_fusion_max = "1MB" }
t.is(small.qkv_quant and small.qkv_quant.bytes, 64 * 8192 * 2.5625, "ar_fusion_max 1MB: 1 MiB goes to NCCL")
local ok, msg = pcall(l70ops, { tp = 4, batch = 64, ar_fusion_max = -1 })
t.ok(not ok and tostring(msg):find("ar_fusion_max", 1, true), "ar_fusion_max -1 refused, named: " .. tostring(msg))
-- Only TensorRT-LLM quantises the next linear's input apart (infer.lua
-- M.act_quant): under another runtime, or the MoE serving model (engine/
-- serve*.c, which prices no such pass), the size would change nothing.
t.raises(function() l70ops { tp = 4, batch = 64, ar_fusion_max = "1MB", runtime = "vllm" } end,
  "ar_fusion_max is the all-reduce size up to which TensorRT-LLM fuses the next linear's "
    .. "activation quantisation in its PyTorch flow; runtime vllm runs no such pass: it needs "
    .. "runtime = trtllm (got runtime = vllm)", "vllm: refused, named", true)
t.raises(function() gp.infer { model = "qwen3-30b-a3b", gpu = "b200", gpus = 8, ep = 8,
                               runtime = "trtllm", ar_fusion_max = "8MB" } end,
  "ar_fusion_max: the MoE serving model (chosen by ep = 8)", "the MoE serving model: refused", true)

-- A TensorRT engine run (a release before 0.17, before the PyTorch flow
-- this fusion belongs to) fuses no quantisation into its all-reduce: the
-- engine's FP8Linear quantises its own input after the norm, a kernel
-- of its own (no norm_quant_fusion before the later plugin knob, off by
-- default there), so the predictor gives it ar_fusion_max 1 B: every
-- all-reduce is larger, and the pass is priced at tp 2 as at tp 1.
local c010 = { id = "engine-tp2", kind = "infer",
  model = { layers = 80, hidden = 8192, heads = 64, kv_heads = 8, ffn_hidden = 28672,
            ffn_gated = true, vocab = 32000 },
  hardware = { gpu = "h100-sxm", gpus = 2 }, parallel = { tp = 2 },
  workload = { framework = "trtllm", weight_dtype = "fp8", input_len = 128, output_len = 128,
               num_requests = 1000 },
  measured = { metric = "output_tokens_per_s", value = 1 },
  source = { title = "TensorRT-LLM", version = "0.10.0" } }
local p010 = assert(predict(c010, gp.catalog()))
t.is(p010.job.ar_fusion_max, 1, "0.10.0 at tp 2: ar_fusion_max 1 B (engine flow: never fused)")
-- The pass before qkv reads the decode step's T x 8192 bf16 norm output
-- (2 B) and writes it in FP8 (1 B): T x 8192 x 3 bytes, T the decode
-- batch (qkv's input is the whole hidden on every rank; exact, no
-- tolerance: the engine's byte count is this product).
local r010 = gp.infer(p010.job)
local q010 = {}
for _, o in ipairs(r010.decode.ops) do q010[o.name] = o end
t.is(q010.qkv_quant and q010.qkv_quant.bytes, r010.decode.batch * 8192 * 3,
  "0.10.0 at tp 2: qkv's input quantised apart, T x 8192 x (2 + 1) B")
t.ok(q010.mlp_up_quant ~= nil, "0.10.0 at tp 2: gate_up's input quantised apart too")
-- The rule is said only where a linear is quantised: the same engine run
-- with 16-bit weights quantises nothing, so it sets no ar_fusion_max and
-- says none (on the code before the rule took the weights into account,
-- it set one at tp 2 whatever the weights).
local c16 = t.with(c010, { workload = t.with(c010.workload, { weight_dtype = "bf16" }) })
local p16 = assert(predict(c16, gp.catalog()))
local said = false
for _, d in ipairs(p16.defaults or {}) do if d:find("^ar_fusion_max") then said = true end end
t.ok(p16.job.ar_fusion_max == nil and not said,
  "0.10.0 at tp 2 with bf16 weights: no ar_fusion_max set or said")
