-- The Triton fused MoE's two activation-quantise kernels (engine/infer.c
-- moe_quant): vLLM's and SGLang's fused_experts quantise the tokens before
-- the first fp8 grouped GEMM and the activation's output before the second
-- (moe_kernel_quantize_input), each a kernel of its own.
-- Run: ./gpuplan run tests/lua/moe_quant.t
local t = require "tap"
local gp = require "gpuplan"
local infer = require "gpuplan.infer"
t.plan(9)

local base = { gpu = "h200-sxm", gpus = 8, tp = 8, weights = "fp8", runtime = "vllm",
              input = 228, output = 213, concurrency = 4, model = "deepseek-v3" }
local function run(extra) return gp.infer(t.with(base, extra)) end
local function op(r, name) return t.op(r.decode, name) end

-- DeepSeek-V3 at TP 8, a decode step of B = 4 sequences: 58 MoE layers,
-- hidden 7168, top 8 of experts 2048 wide sliced to 2048 / 8 = 256 a rank.
-- Each pass reads bf16 (2 B), writes fp8 (1 B) and an fp32 scale a
-- 128-element group (4 / 128 B): 3.03125 B an element.  Exact products
-- of these integers (1e-12 relative for the float sums).
local r = run()
local B = r.decode.batch
local qin, qmid = op(r, "moe_quant"), op(r, "moe_quant_act")
t.ok(qin and qmid, "vLLM fp8 MoE: the two quantise rows")
t.is(qin.count, 58, "one input pass a MoE layer (58)")
t.near(qin.bytes, B * 7168 * 3.03125, 1e-12, "input pass: B x 7168 x (2 + 1 + 4/128) B")
t.near(qmid.bytes, B * 8 * 256 * 3.03125, 1e-12, "activation pass: B x 8 x 256 x (2 + 1 + 4/128) B")
-- Each costs at least the step's per-kernel floor: the decode step is
-- longer by the two rows' totals, nothing else moves.
local saved = infer.moe_quant.vllm
infer.moe_quant.vllm = nil
local off = run()
infer.moe_quant.vllm = saved
t.ok(op(off, "moe_quant") == nil, "taken out of the runtime table: no rows")
t.near(r.decode.gpu_time - off.decode.gpu_time, qin.total + qmid.total, 1e-9,
       "the step grows by the two rows' time")
-- Where it does not apply.
t.ok(op(run({ runtime = "sglang" }), "moe_quant_act") ~= nil, "SGLang's Triton fused_moe: the same rows")
t.ok(op(run({ runtime = "trtllm" }), "moe_quant_act") == nil,
     "TensorRT-LLM: its CUTLASS MoE quantises once (act_quant's moe_quant), no second pass")
t.ok(op(run({ model = "qwen3-30b-a3b", gpus = 1, tp = 1, weights = "bf16" }), "moe_quant") == nil,
     "bf16 experts: nothing quantised")
