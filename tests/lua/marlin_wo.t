-- vLLM runs every weight-only linear on an A100 as a Marlin GEMM (an FP8
-- checkpoint's linears and experts as FP8 Marlin, W8A16), which computes
-- at no more than 0.605 of the card's bf16 library rate at the same shape
-- once compute-bound (lua/gpuplan/infer.lua M.wo_bf16_x: Marlin's
-- bench.py on an A100 posted to vllm PR #2497, speedup 0.60 and 0.61 at
-- 2048 and 4000 tokens).  The engine caps the op's compute rate at that
-- multiple of the 16-bit rate at its shape (roofline.h roof_op.bf16_x);
-- gp.infer sets it for the weight-only linears (infer_cfg.wo_bf16_x) and
-- gpuplan.serve's step for its weight-only linears and experts.
-- Run with ./gpuplan run tests/lua/marlin_wo.t.
local t = require "tap"
local gp = require "gpuplan"
local core = require "gpuplan.core"
local infer = require "gpuplan.infer"
local X = 0.605

t.plan(25)

-- A weight-only bf16 GEMM by hand on an A100-like device: bf16 312
-- TFLOP/s at 0.8, fp32 19.5; 4096^3 with the converter's 4 FLOP a weight.
-- The tensor side (2 x 4096^3 / (312e12 x 0.8 x shape)) is about 500x the
-- conversion's (4 x 4096^2 / 19.5e12 = 3.4 us against 0.55 ms), so the
-- compute time is the tensor side's and the cap scales it by 1 / 0.605
-- exactly (same tiles; 1e-9 for rounding).
local dev = { peak = { bf16 = 312e12, fp32 = 19.5e12 }, gemm = { bf16 = 0.8 },
              mem_bw = 2.039e12, hbm = 0.85, launch = 4e-6, graph_launch = 1e-6,
              sms = 108 }
local g = { flop = 2 * 4096 ^ 3, bytes = 4096 ^ 2, m = 4096, n = 4096, k = 4096,
            prec = "bf16", dequant = 4 }
local plain = core.roof_op(dev, g)
local capped = core.roof_op(dev, t.with(g, { bf16_x = X }))
t.is(capped.shape_eff, plain.shape_eff, "the cap leaves the tiles alone")
t.near(capped.t_compute / plain.t_compute, 1 / X, 1e-9,
       "bf16_x 0.605 on a bf16 GEMM: its compute time / 0.605")
t.raises(function() core.roof_op(dev, t.with(g, { bf16_x = -0.5 })) end, "bf16_x",
         "a negative bf16_x is refused by name", true)
-- The engine's check of the infer config's multiple (roof_op's bounds,
-- roofline.h ROOF_BF16_X_MIN / MAX: 0 or 0.01..4).
local sm, sd, sc = infer.setup { model = "llama3-8b", gpu = "a100-sxm-80gb", weights = "fp8",
                                 runtime = "vllm" }
sc.wo_bf16_x = 5
t.raises(function() core.infer(sm, sd, sc) end, "wo_bf16_x must be 0 or in [0.01, 4] (got 5)",
         "engine: a multiple past 4 is refused by name", true)
-- Below 0.01 (under the smallest GEMM fraction a device may give; a
-- denormal one made the op's time NaN) it is refused, not priced.
sc.wo_bf16_x = 0.005
t.raises(function() core.infer(sm, sd, sc) end,
         "wo_bf16_x must be 0 or in [0.01, 4] (got 0.005)",
         "engine: a multiple between 0 and 0.01 is refused by name", true)

-- Which cards and runtimes: vLLM on GA100 (bf16 tensor peak 16x the
-- fp32 one: 312 / 19.5), not on GA102 (A10: 125 / 31.2 = 4), not under
-- SGLang (its fp8 MoE on Ampere is not Marlin), not for 16-bit weights.
local cat = gp.catalog { dirs = { "catalog" } }
local a100, a10 = cat:get("gpus", "a100-sxm-80gb"), cat:get("gpus", "a10")
t.is(infer.wo_bf16_x_of("vllm", a100, 8), X, "vLLM, A100, fp8 weights: 0.605")
t.is(infer.wo_bf16_x_of("vllm", a10, 4), nil, "vLLM, A10 (GA102): no cap")
t.is(infer.wo_bf16_x_of("sglang", a100, 8), nil, "SGLang, A100: no cap")
t.is(infer.wo_bf16_x_of("vllm", a100, 16), nil, "16-bit weights: no cap")

-- gp.infer: one 2048-token prompt of Qwen3-30B-A3B-FP8 under vLLM on one
-- A100, with the cap and with it off (the table's entry cleared).  The
-- prompt's linears are compute-bound at 2048 tokens (the dense qkv: 2 x
-- 2048 FLOP a weight against 250 TFLOP/s over 2 TB/s, 125 FLOP/B), so
-- their compute times grow by 1 / 0.605, the experts' (moe_up) and the
-- dense qkv's alike; the attention (no weights) does not move.
local job = { model = "qwen3-30b-a3b", gpu = "a100-sxm-80gb", gpus = 1, tp = 1,
              weights = "fp8", runtime = "vllm", input = 2048, output = 16,
              batch = 1 }
local function off(j)
  local saved = infer.wo_bf16_x.vllm
  infer.wo_bf16_x.vllm = nil
  local r = gp.infer(j)
  infer.wo_bf16_x.vllm = saved
  return r
end
local on, without = gp.infer(job), off(job)
t.near(t.op(on.prefill, "moe_up").t_compute / t.op(without.prefill, "moe_up").t_compute,
       1 / X, 1e-9,
       "moe_up (fused_marlin_moe): compute time / 0.605")
t.near(t.op(on.prefill, "qkv").t_compute / t.op(without.prefill, "qkv").t_compute,
       1 / X, 1e-9, "qkv (FP8 Marlin): compute time / 0.605")
-- 1e-15 here and below: an op the cap does not touch is priced from the
-- same inputs by the same code, equal but for the last bit.
t.near(t.op(on.prefill, "attention").t_compute,
       t.op(without.prefill, "attention").t_compute, 1e-15, "the attention keeps its rate")
-- bf16 weights on the same card: no weight-only kernel, no cap.
local b16 = t.with(job, { weights = "bf16" })
t.near(t.op(gp.infer(b16).prefill, "moe_up").t_compute,
       t.op(off(b16).prefill, "moe_up").t_compute, 1e-15, "bf16 experts keep the library rate")

-- gpuplan.serve's step (an expert-parallel layout goes to it): Qwen3-235B
-- FP8 on four A100s, TP 4 with EP 4, one 2048-token prompt.  The routed
-- experts (experts_up) and the dense qkv take the cap as in gp.infer;
-- at 2048 tokens a GPU both are compute-bound, so 1 / 0.605.
local sj = { model = "qwen3-235b-a22b", gpu = "a100-sxm-80gb", gpus = 4, tp = 4, ep = 4,
             weights = "fp8", runtime = "vllm", input = 2048, output = 16, batch = 1 }
local function row(r, name)
  for _, o in ipairs(r.prefill_ops or {}) do if o.name == name then return o end end
end
local son, soff = gp.infer(sj), off(sj)
t.near(row(son, "experts_up").t_compute / row(soff, "experts_up").t_compute, 1 / X, 1e-9,
       "serve: the routed experts at the Marlin cap")
t.near(row(son, "qkv").t_compute / row(soff, "qkv").t_compute, 1 / X, 1e-9,
       "serve: the dense qkv at the Marlin cap")

-- The cap is said wherever it is applied: an int4 (GPTQ/AWQ-style)
-- checkpoint under vLLM on the A100 is weight-only too (bf16 compute), so
-- its defaults name Marlin's 0.605; on the A10 (GA102, no cap) and under
-- the default runtime nothing is said.
local function said(j)
  return table.concat(gp.infer(j).defaults, "; "):find("0.605 of the bf16 library GEMM", 1, true)
end
local i4 = { model = "llama3.1-8b", gpu = "a100-sxm-80gb", weights = "int4", runtime = "vllm",
             input = 128, output = 16, batch = 1 }
t.ok(said(i4), "int4 under vLLM on the A100: the Marlin cap is said")
t.ok(not said(t.with(i4, { gpu = "a10" })), "A10: no cap, nothing said")
t.ok(not said(t.with(i4, { runtime = "graphs" })), "default runtime: no cap, nothing said")
-- Marlin's streaming fraction at decode (infer.lua M.wo_stream.vllm,
-- 0.81) is said too, on every card (it is not tied to GA100's balance),
-- and not under the default runtime, which streams at the device's rate.
local function said_stream(j)
  return table.concat(gp.infer(j).defaults, "; "):find("0.81 of the streaming copy", 1, true)
end
t.ok(said_stream(i4), "int4 under vLLM: Marlin's 0.81 streaming fraction is said")
t.ok(said_stream(t.with(i4, { gpu = "a10" })), "... on the A10 too")
t.ok(not said_stream(t.with(i4, { runtime = "graphs" })), "default runtime: nothing said")
t.ok(not said_stream(t.with(i4, { weights = "bf16" })), "bf16 under vLLM: nothing said")
-- fp4 weights on an H100 are not weight-only in the engine (infer.c: wo
-- needs a 16-bit compute), so the fraction is not applied there: said in
-- error before, now not said.
t.ok(not said_stream(t.with(i4, { gpu = "h100-sxm", weights = "mxfp4" })),
     "mxfp4 on an H100 under vLLM: not weight-only, nothing said")
-- Marlin runs on NVIDIA cards from Ampere only (vLLM's supported-hardware
-- table: "Marlin (GPTQ/AWQ/FP8)" not on "AMD GPU"): int4 under vLLM on an
-- MI300X takes the device's streaming rate, as the default runtime's
-- (exact: the same op, the same bytes and rate), and nothing is said.
t.ok(not said_stream(t.with(i4, { gpu = "mi300x" })), "MI300X under vLLM: no Marlin, nothing said")
local function up_mem(j) return t.op(gp.infer(j), "mlp_up").t_memory end
local mi = t.with(i4, { gpu = "mi300x" })
t.is(up_mem(mi), up_mem(t.with(mi, { runtime = "graphs" })),
     "MI300X int4 under vLLM: mlp_up streams at the device's rate")
