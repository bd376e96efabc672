-- SGLang's per-token-group activation quantisation before each fp8 dense
-- linear (engine/infer.c block_quant): its block-fp8 linear calls
-- sglang_per_token_group_quant_fp8 on the bf16 input before every GEMM,
-- a kernel of its own: four passes a layer (qkv, o_proj, gate_up, down).
-- Run: ./gpuplan run tests/lua/block_quant.t
local t = require "tap"
local gp = require "gpuplan"
local infer = require "gpuplan.infer"
t.plan(11)

local base = { gpu = "h100-sxm", gpus = 1, tp = 1, weights = "fp8", runtime = "sglang",
               input = 2000, output = 100, concurrency = 1, model = "qwen3-8b" }
local function run(extra) return gp.infer(t.with(base, extra)) end
local function op(r, name) return t.op(r.prefill, name) end

-- Qwen3-8B (36 layers, hidden 4096, 32 query heads of 128, ffn 12288),
-- the 2000-token prompt's prefill at TP 1.  Each pass reads the linear's
-- T x k bf16 input (2 B), writes fp8 (1 B) and an fp32 scale a
-- 128-element group (4 / 128 B): 3.03125 B an element.  k: qkv and
-- gate_up take the hidden 4096, o_proj the heads' 32 x 128 = 4096, down
-- the 12288-wide activation.  Exact products of these integers (1e-12
-- relative for the float sums).
local r = run()
local T = r.prefill.tokens
local q, o, u, d = op(r, "qkv_quant"), op(r, "o_proj_quant"), op(r, "mlp_up_quant"),
  op(r, "mlp_down_quant")
t.ok(q and o and u and d, "SGLang fp8: the four quantise rows")
t.is(q.count, 36, "one pass a layer per linear (36)")
t.near(q.bytes, T * 4096 * 3.03125, 1e-12, "qkv: T x 4096 x (2 + 1 + 4/128) B")
t.near(o.bytes, T * 4096 * 3.03125, 1e-12, "o_proj: T x 32 x 128 x 3.03125 B")
t.near(d.bytes, T * 12288 * 3.03125, 1e-12, "down: T x 12288 x 3.03125 B")
-- The step grows by the four rows' time and nothing else moves.
local saved = infer.block_quant.sglang
infer.block_quant.sglang = nil
local off = run()
infer.block_quant.sglang = saved
t.ok(op(off, "qkv_quant") == nil, "taken out of the runtime table: no rows")
t.near(r.prefill.gpu_time - off.prefill.gpu_time, q.total + o.total + u.total + d.total, 1e-9,
       "the prefill grows by the four rows' time")
-- At TP 2 the row-parallel linears' inputs are the rank's slice: o_proj
-- 16 heads x 128 = 2048, down 12288 / 2 = 6144; qkv keeps the hidden.
local r2 = run({ gpus = 2, tp = 2 })
local T2 = r2.prefill.tokens
t.near(op(r2, "o_proj_quant").bytes, T2 * 2048 * 3.03125, 1e-12, "TP 2 o_proj: T x 2048 x 3.03125 B")
t.near(op(r2, "qkv_quant").bytes, T2 * 4096 * 3.03125, 1e-12, "TP 2 qkv: the whole hidden")
-- Where it does not apply.
t.ok(op(run({ weights = "bf16" }), "qkv_quant") == nil, "bf16 weights: nothing quantised")
t.ok(op(run({ runtime = "vllm" }), "o_proj_quant") == nil,
     "vLLM: its QuantFP8 op is left to torch.compile's fusion, no row")
