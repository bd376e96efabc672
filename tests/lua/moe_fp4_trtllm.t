-- TensorRT-LLM's CUTLASS NVFP4 fused MoE on Blackwell multiplies its
-- experts at no more than 0.66 of the card's bf16 GEMM rate (lua/gpuplan/
-- infer.lua M.moe_fp4_bf16_x, from AIConfigurator's B200 timings of that
-- op under TensorRT-LLM 1.2.0rc5); the engine caps the moe_up and
-- moe_down rows of a step computing in fp4 (engine/infer.c, the same
-- roof_op.bf16_x as the fp8 Triton cap).
-- Run with ./gpuplan run tests/lua/moe_fp4_trtllm.t.
local t = require "tap"
local gp = require "gpuplan"
local infer = require "gpuplan.infer"

t.plan(12)

-- The table's reach: TensorRT-LLM, Blackwell, an fp4 checkpoint.
t.is(infer.moe_fp4_bf16_x_of("trtllm", "blackwell", "fp4"), 0.66, "trtllm on blackwell, fp4: 0.66")
t.is(infer.moe_fp4_bf16_x_of("vllm", "blackwell", "fp4"), nil, "vLLM's experts keep their rate")
t.is(infer.moe_fp4_bf16_x_of("trtllm", "hopper", "fp4"), nil, "only Blackwell, the measurement's arch")
t.is(infer.moe_fp4_bf16_x_of("trtllm", "blackwell", "fp8"), nil, "an fp8 checkpoint is not capped by it")

-- One decode step of Qwen3-30B-A3B on one B200 under TensorRT-LLM: the
-- fused MoE op as AIConfigurator times it (forward from router logits:
-- the routing, the fp4 quantisation of the rows, expand, both grouped
-- GEMMs, SwiGLU, finalize; the gate GEMM out) is the step's moe_quant,
-- moe_up, moe_act, moe_down, moe_route (7 kernels a layer), moe_sum and
-- moe_expand rows, per layer.
local job = { model = "qwen3-30b-a3b", gpu = "b200", gpus = 1, tp = 1,
              weights = "fp4", runtime = "trtllm", input = 16, output = 16,
              max_batch = 8192 }
local MOE = { moe_quant = true, moe_up = true, moe_act = true, moe_down = true,
              moe_route = true, moe_sum = true, moe_expand = true }
local function moe_layer(r)
  local s = 0
  for _, o in ipairs(r.ops) do
    if MOE[o.name] then s = s + o.count * o.time end
  end
  return s / 48
end
local function row(r, name)
  for _, o in ipairs(r.ops) do if o.name == name then return o end end
end
-- Measured (moe_perf.parquet, nvfp4, moe_torch_flow_cutlass, balanced,
-- moe_tp 1, moe_ep 1): 0.3064 ms at 2,048 tokens, 0.9612 ms at 8,192.
-- The engine at 0.66 gives 315 and 956 us; 5%: one multiple for every
-- row count, the shape losses at 16 and 64 rows an expert the engine's
-- own.
local at2k = gp.infer(t.with(job, { batch = 2048 }))
local at8k = gp.infer(t.with(job, { batch = 8192 }))
t.near(moe_layer(at2k), 306.4e-6, 0.05, "2,048 tokens: AIConfigurator's 306.4 us within 5%")
t.near(moe_layer(at8k), 961.2e-6, 0.05, "8,192 tokens: AIConfigurator's 961.2 us within 5%")

-- The cap binds on the expert GEMMs only: with the table entry taken
-- out, moe_up at 8,192 tokens is faster (its fp4 rate, memory-bound on
-- its rows), the dense qkv priced from the same inputs (1e-15: equal but
-- for the last bit).
local saved = infer.moe_fp4_bf16_x.trtllm
infer.moe_fp4_bf16_x.trtllm = nil
local off = gp.infer(t.with(job, { batch = 8192 }))
infer.moe_fp4_bf16_x.trtllm = saved
t.ok(row(at8k, "moe_up").time > 2 * row(off, "moe_up").time,
     "moe_up: at 0.66 x bf16 more than twice its uncapped time (0.41 TFLOP at 8,192 tokens)")
t.near(row(at8k, "qkv").time, row(off, "qkv").time, 1e-15, "the dense qkv keeps its fp4 rate")

-- The defaults line says the cap.
local said = false
for _, l in ipairs(at2k.defaults) do
  if tostring(l):find("CUTLASS NVFP4 fused MoE", 1, true) then said = true end
end
t.ok(said, "the defaults line says the NVFP4 MoE cap")

-- The MoE serving model (here by dp_attention) prices the same experts:
-- at ep 1 (the experts sharded by TP alone, the CutlassFusedMoE
-- AIConfigurator timed at moe_ep 1) the cap binds there too and the
-- defaults line says it; it priced them at the fp4 rate, in silence.
-- The prompt's expert GEMMs (8,192 tokens a sequence, 64 of them: the
-- bound is the tensor rate) at 0.66 x 2.25 PFLOP/s x 0.78 = 1.16 PFLOP/s
-- against the fp4 rate's several times that: slower, no tolerance needed.
local sjob = { model = "qwen3-30b-a3b", gpu = "b200", gpus = 2, tp = 2, dp_attention = true,
               runtime = "trtllm", weights = "fp4", batch = 64, input = 8192 }
local s_on = gp.infer(sjob)
infer.moe_fp4_bf16_x.trtllm = nil
local s_off = gp.infer(sjob)
local s_off_ep = gp.infer(t.with(sjob, { ep = 2 }))
infer.moe_fp4_bf16_x.trtllm = saved
local s_on_ep = gp.infer(t.with(sjob, { ep = 2 }))
t.ok(s_on.prefill_experts_s > s_off.prefill_experts_s,
     "serving model at ep 1: the NVFP4 experts at the capped rate")
-- With EP the experts are sharded across GPUs (the engine applies the
-- multiple at ep 1 only, as for the fp8 cap): the same price to the
-- last bit (1e-12).
t.near(s_on_ep.prefill_experts_s, s_off_ep.prefill_experts_s, 1e-12,
       "serving model at ep 2: no cap")
said = false
for _, l in ipairs(s_on.defaults) do
  if tostring(l):find("NVFP4 expert GEMMs: 0.66 x this card's bf16 rate (TensorRT-LLM's CUTLASS NVFP4", 1, true) then said = true end
end
t.ok(said, "the serving model's defaults line says the NVFP4 MoE cap")
