-- SGLang's prompt (extend) pass off its CUDA graphs (lua/gpuplan/infer.lua
-- M.extend_host_ops, engine/infer.c infer_cfg.extend_host_ops): the ops a
-- decoder layer's forward launches from Python, counted from sglang's
-- llama.py, qwen3_moe.py, deepseek_v2.py and gpt_oss.py, a floor under a
-- prefill of runtime sglang at
-- GP_EAGER_OP_TIME (24.84 us) each, with EAGER_OUTER_OPS (10) outside the
-- layers; the models not counted are left unpriced (nil), and other
-- runtimes' prefills keep no floor; the MoE serving model's prefill step
-- (engine/serve_step.c extend_floor) takes the same floor.
-- Run with ./gpuplan run tests/lua/sglang_extend.t.
local t = require "tap"
local gp = require "gpuplan"
local I = require "gpuplan.infer"
local cat = require("gpuplan.catalog").get()

t.plan(16)

local function model(id)
  for _, m in pairs(cat.models) do if m.id == id then return m end end
  error("no catalog model " .. id)
end
local q3, l70 = model("qwen3-235b-a22b"), model("llama3.1-70b")
local ops = I.extend_host_ops.sglang

-- Counts (infer.lua's comment): llama 11 + 2 all-reduces at TP > 1,
-- qwen3_moe 17 + 2; none at tp 1.
t.is(ops(q3, 8), 19, "qwen3_moe at tp 8: 17 ops + 2 all-reduces")
t.is(ops(q3, 1), 17, "qwen3_moe at tp 1: no all-reduce")
t.is(ops(l70, 8), 13, "llama at tp 8: 11 ops + 2 all-reduces")
-- DeepSeek-V3 (61 layers, 3 dense): dense 27 + 2, MoE 31 + 2 at tp 8,
-- (3 x 29 + 58 x 33) / 61 = 2001 / 61; at tp 1 (3 x 27 + 58 x 31) / 61 =
-- 1879 / 61; the tolerance float rounding.
local dsv3 = model("deepseek-v3")
t.near(ops(dsv3, 8), 2001 / 61, 1e-12, "deepseek_v2 at tp 8: 27/31 ops + 2 all-reduces a dense/MoE layer")
t.near(ops(dsv3, 1), 1879 / 61, 1e-12, "deepseek_v2 at tp 1: no all-reduce")
-- gpt_oss (infer.lua's comment): input norm, qkv_proj, rotary with the
-- KV store fused, the sink attention, o_proj, post-attention norm, the
-- router, the experts: 8, + 2 all-reduces at TP > 1.
local oss = model("gpt-oss-120b")
t.is(ops(oss, 8), 10, "gpt_oss at tp 8: 8 ops + 2 all-reduces")
t.is(ops(oss, 1), 8, "gpt_oss at tp 1: no all-reduce")
-- gpt-oss-120b on 8 B200 at TP 8 (the MoE serving model's prefill step,
-- 2048 tokens, ~0.04 s of GPU and all-reduce time), host_op_time 1e-3 s
-- so that the host binds: (36 x 10 + 10) x 1e-3 = 0.370 s; the tolerance
-- float rounding.
local g = gp.infer{ model = "gpt-oss-120b", gpu = "b200", gpus = 8, tp = 8,
  batch = 1, input = 297, output = 192, runtime = "sglang", weights = "bf16",
  expert_weights = "mxfp4", host_op_time = 1e-3 }
t.near(g.prefill.time, 370 * 1e-3, 1e-9,
  "gpt_oss prefill step at the host floor (36 x 10 + 10) x 1e-3 s")
-- A hybrid (Mamba layers) stays uncounted.
t.is(ops(model("nemotron-3-nano-30b-a3b"), 8), nil, "a Mamba hybrid not counted")

-- Qwen3-235B on 8 B200 at TP 8, one 610-token prompt (the cookbook's
-- concurrency-1 mean): host floor (94 x 19 + 10) x 24.84e-6 =
-- 1796 x 24.84e-6 = 0.04461264 s, above the GPU's ~0.027 s (runtime
-- vllm's prefill, at the graph launch), so it sets the prefill; the
-- tolerance is the float rounding alone.
local function run(rt, input)
  return gp.infer{ model = "qwen3-235b-a22b", gpu = "b200", gpus = 8, tp = 8,
    batch = 1, input = input, output = 421, runtime = rt, weights = "bf16" }
end
local s, v = run("sglang", 610), run("vllm", 610)
t.near(s.prefill.host_time, 1796 * 24.84e-6, 1e-9, "sglang prefill host floor = (94 x 19 + 10) ops x 24.84 us")
t.near(s.prefill.time, s.prefill.host_time, 1e-9, "the floor sets the 610-token prefill")
t.ok(v.prefill.host_time == 0 and v.prefill.time < s.prefill.host_time,
  "runtime vllm: no floor, its prefill below the sglang floor")
-- 8000 tokens: the GPU's work (~17x the 610-token prompt's FLOPs) is
-- above the 44.6 ms floor, which no longer sets the time.
local l = run("sglang", 8000)
t.ok(l.prefill.time > l.prefill.host_time, "a long prompt's GPU time is above the floor")
-- The decode step stays on the graph: the same ITL with the host op
-- time set to zero (a floor of 0 s), the tolerance float rounding.
local z = gp.infer{ model = "qwen3-235b-a22b", gpu = "b200", gpus = 8, tp = 8,
  batch = 1, input = 610, output = 421, runtime = "sglang", weights = "bf16", host_op_time = 0 }
t.near(s.itl_s, z.itl_s, 1e-12, "the decode step is not touched by the extend floor")

-- The MoE serving model (dp_attention: engine/serve_step.c extend_floor)
-- prices the same floor under its prefill step.  DeepSeek-V3 on 8 H200,
-- DP attention, a 128-token prefill chunk; host_op_time 1e-4 s so that
-- the host binds: (61 x 2001 / 61 + 10) x 1e-4 = 2011 x 1e-4 = 0.2011 s,
-- above the chunk's GPU time (runtime vllm, no floor: ~0.06 s); the
-- tolerance float rounding.
local function dp(rt)
  return gp.infer{ model = "deepseek-v3", gpu = "h200-sxm", gpus = 8, tp = 8,
    dp_attention = true, batch = 1, input = 100, output = 100, runtime = rt,
    weights = "fp8", prefill_tokens = 128, host_op_time = 1e-4 }
end
local ds, dv = dp("sglang"), dp("vllm")
t.near(ds.prefill.time, 2011 * 1e-4, 1e-9, "serve model: sglang prefill step at the host floor (61 x 2001/61 + 10) x 1e-4 s")
t.ok(dv.prefill.time < ds.prefill.time and dv.prefill.host == 0,
  "serve model: runtime vllm's prefill keeps no floor, below it")
