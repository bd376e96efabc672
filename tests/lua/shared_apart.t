-- vLLM's MoE shared expert run apart (engine/infer.c shared_apart): vLLM's
-- DeepseekV2MoE builds the shared expert as a DeepseekV2MLP of its own, two
-- dense linears and SiluAndMul, run before the routed experts on the same
-- stream (v0.11.0), or on a second stream in steps of at most 256 tokens
-- (vLLM PR #26440, #28406: shared_expert_stream, on by default).
-- Run: ./gpuplan run tests/lua/shared_apart.t
local t = require "tap"
local gp = require "gpuplan"
t.plan(12)

local base = { gpu = "h200-sxm", gpus = 8, tp = 8, weights = "fp8", runtime = "vllm",
              input = 228, output = 213, concurrency = 4, model = "deepseek-v3" }
local function run(extra) return gp.infer(t.with(base, extra)) end
local function op(r, name) return t.op(r.decode, name) end

-- DeepSeek-V3 at TP 8, a decode step of B = 4 sequences: 58 MoE layers,
-- hidden 7168, one shared expert 2048 wide, 2048 / 8 = 256 a rank; its
-- gate and up projections 2 x 256 = 512 wide.  Exact products of
-- integers (1e-12 relative for the float sums).
local on, off = run(), run({ shared_expert_stream = false })
local B = off.decode.batch
t.ok(op(on, "shared_up") == nil, "a 4-token step on vLLM's second stream: folded into the fused MoE")
local up, down, act = op(off, "shared_up"), op(off, "shared_down"), op(off, "shared_act")
t.ok(up and down and act, "shared_expert_stream = false: shared_up, shared_act, shared_down rows")
t.is(up.count, 58, "one a MoE layer (58)")
t.near(up.flop, 2 * B * 512 * 7168, 1e-12, "shared_up: 2 x B x 512 x 7168 FLOP")
t.near(down.flop, 2 * B * 7168 * 256, 1e-12, "shared_down: 2 x B x 7168 x 256 FLOP")
-- Taken out of the fused MoE's rows, not counted twice.
t.near(op(on, "moe_up").flop - op(off, "moe_up").flop, 2 * B * 512 * 7168, 1e-12,
       "moe_up less the shared expert's gate and up")
t.near(op(on, "moe_down").flop - op(off, "moe_down").flop, 2 * B * 7168 * 256, 1e-12,
       "moe_down less the shared expert's down")
-- Its two fp8 input quantisations: B x 7168 and B x 256 elements at
-- 2 + 1 + 4/128 = 3.03125 B each (moe_quant's pass).
t.near(op(off, "shared_quant_act").bytes, B * 256 * 3.03125, 1e-12,
       "shared_quant_act: B x 256 x 3.03125 B")
-- A decode step of more than 256 tokens runs it apart on the one stream.
t.ok(op(run({ concurrency = 512 }), "shared_up") ~= nil,
     "512 sequences a step: past the second stream's 256 tokens, apart")
t.ok(not pcall(run, { runtime = "sglang", shared_expert_stream = false }),
     "shared_expert_stream under SGLang: refused")
-- The default is said where the model has a shared expert, and not where
-- the run states it.
t.ok(t.said(on, "shared_expert_stream (vLLM's from v0.11.1", true),
     "the second stream said as assumed")
t.ok(not t.said(off, "shared_expert_stream (", true), "stated off: not said")
