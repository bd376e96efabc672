-- One rule for a weight-only kernel's streaming fraction at decode, on
-- both paths gp.infer prices a MoE model by: gp.infer's own step
-- (engine/infer.c, infer_cfg.wo_stream) and the MoE serving model that an
-- expert-parallel layout goes to (engine/serve_step.c, serve_row.c
-- sx_wo_stream).  Both read lua/gpuplan/infer.lua M.wo_stream_of: vLLM's
-- int4 Marlin at 0.81 of the streaming copy (Marlin's batch-1 bench line
-- in vllm PR #2497), gpt-fast's tinygemm int4 at 0.65.  Before, the
-- serving model streamed an int4 (AWQ/GPTQ) MoE's experts and linears at
-- the device's GEMM rate while gp.infer read them at 0.81.  MXFP4 and
-- NVFP4 experts run kernels of their own and keep the device's rate.
-- Run with ./gpuplan run tests/lua/moe_wo_stream.t.
local t = require "tap"
local gp = require "gpuplan"
local core = require "gpuplan.core"
local infer = require "gpuplan.infer"
local serve = require "gpuplan.serve"

t.plan(22)

-- The hand derivation: a memory-bound GEMM row's t_memory is bytes /
-- (mem_bw x hbm x f) + ROOF_MEM_FILL (engine/roofline.c mem_rate and
-- mem_side; FILL 3.9 us, the constant there).  The H100 SXM's copy rate
-- from the catalog: mem_bw 3.35e12 B/s x hbm 0.84 = 2.814e12 B/s (read
-- back from the device gpuplan.serve prices with, so a catalog change
-- moves both sides).
local FILL = 3.9e-6
local job = { model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 2, tp = 2, ep = 2,
              weights = "int4", runtime = "vllm", input = 128, output = 128, batch = 1 }
local _, d = serve.setup(job)
local copy = d.mem_bw * d.hbm
t.near(copy, 3.35e12 * 0.84, 1e-12, "h100-sxm: the streaming copy 3.35 TB/s x 0.84")

local function row(r, name)
  for _, o in ipairs(r.ops or {}) do if o.name == name then return o end end
end
-- The fraction a row streamed at: bytes / ((t_memory - fill) x copy).
local function frac(o) return o.bytes / ((o.t_memory - FILL) * copy) end

-- Qwen3-30B-A3B in int4 (GPTQ/AWQ, group 128) under vLLM on two H100s,
-- EP 2: the MoE serving model's decode step at batch 1.  Its routed
-- experts' grouped GEMMs and its dense qkv read their weights at 0.81
-- of the copy: experts_up's 12.43 MB at 2.814e12 x 0.81 = 2.279e12 B/s
-- is 5.45 us + 3.9 us = 9.35 us.  Tolerance 1e-9: the same formula, but
-- for rounding.
local r = gp.infer(job)
t.is(r.ep, 2, "the EP 2 layout is priced by the MoE serving model")
local up = row(r, "experts_up")
t.ok(up and up.t_memory > up.t_compute, "experts_up at batch 1 is memory-bound")
t.near(up.t_memory, up.bytes / (copy * 0.81) + FILL, 1e-9,
       "serve: int4 experts_up streams at Marlin's 0.81 (bytes / (bw x hbm x 0.81) + fill)")
t.near(frac(row(r, "experts_down")), 0.81, 1e-9, "serve: experts_down at 0.81")
t.near(frac(row(r, "qkv")), 0.81, 1e-9, "serve: the dense qkv at 0.81")
-- Not the weightless rows: the attention reads the cache at its kernel's rate.
t.ok(math.abs(frac(row(r, "attention")) - 0.81) > 0.01, "serve: the attention keeps its rate")

-- The same model through gp.infer's own step (TP 2, no EP: not the
-- serving model): its experts (moe_up) at the same 0.81.
local dj = t.with(job, { ep = 1 })
local dr = gp.infer(dj)
t.ok(dr.ep == nil or dr.ep == 1, "TP 2 alone: gp.infer's step")
t.near(frac(t.op(dr.decode, "moe_up")), 0.81, 1e-9, "gp.infer: int4 moe_up at 0.81 too")

-- bf16 weights: no weight-only kernel, the device's GEMM rate (the
-- H100's measured stream fraction or ROOF_GEMV_BW 0.94), on both paths.
local b16 = gp.infer(t.with(job, { weights = "bf16" }))
t.ok(math.abs(frac(row(b16, "experts_up")) - 0.81) > 0.05, "serve, bf16: not 0.81")

-- gpt-fast's int4 fraction (0.65) would reach the serving model the same
-- way: the rule's table is the one place (M.wo_stream), read by both.
local saved = infer.wo_stream.vllm
infer.wo_stream.vllm = { int4 = 0.5 }
local half = gp.infer(job)
infer.wo_stream.vllm = saved
t.near(frac(row(half, "experts_up")), 0.5, 1e-9,
       "serve: the fraction follows infer.lua M.wo_stream (0.5 set there)")

-- The rule itself: integer formats only.
t.is(infer.wo_stream_of("vllm", 4 + 20 / 128, "awq-g64", "hopper"), 0.81, "vLLM, AWQ g64: 0.81")
t.is(infer.wo_stream_of("gpt-fast", 8, "int8", "ampere"), 0.78, "gpt-fast, int8: 0.78")
t.is(infer.wo_stream_of("vllm", 4.25, "mxfp4", "hopper"), nil, "MXFP4: its own kernels, no fraction")
t.is(infer.wo_stream_of("vllm", 4.5, "fp4", "hopper"), nil, "NVFP4: its own kernels, no fraction")

-- Routed experts in a format of their own: int4 experts beside bf16
-- linears stream at 0.81, the linears at the device's rate, and the
-- defaults say it of the experts.
local xj = t.with(job, { weights = "bf16", expert_weights = "int4" })
local xr = gp.infer(xj)
t.near(frac(row(xr, "experts_up")), 0.81, 1e-9, "expert_weights int4: the experts at 0.81")
t.ok(math.abs(frac(row(xr, "qkv")) - 0.81) > 0.05, "... the bf16 qkv at the device's rate")
t.ok(t.said(xr, "int4 routed experts run weight-only under vllm", true),
     "the defaults say the experts' fraction")
-- MXFP4 experts under vLLM on an H100 (W4A16: triton_kernels' matmul_ogs,
-- serve.lua M.VLLM_MXFP4_W4A16) beside int4 linears: the linears at
-- Marlin's 0.81, the experts at the device's rate (not Marlin's kernel);
-- and gpt-oss-120b as released (MXFP4 experts, bf16 the rest) likewise.
local mx = gp.infer(t.with(job, { expert_weights = "mxfp4" }))
t.near(frac(row(mx, "qkv")), 0.81, 1e-9, "int4 linears beside MXFP4 experts: qkv at 0.81")
t.ok(math.abs(frac(row(mx, "experts_up")) - 0.81) > 0.05, "MXFP4 experts: not at 0.81")
local g = gp.infer { model = "gpt-oss-120b", gpu = "h100-sxm", gpus = 2, tp = 2, ep = 2,
                     runtime = "vllm", input = 128, output = 128, batch = 1 }
t.ok(math.abs(frac(row(g, "experts_up")) - 0.81) > 0.05,
     "gpt-oss-120b's MXFP4 experts: not at 0.81")

-- The engine refuses a fraction past the copy by name, as it does
-- gp.infer's wo_stream (infer.c: 0 or 0.01..1).
local sm, sd, sc = serve.setup(xj)
sc.expert_wo_stream = 2
t.raises(function() core.serve(sm, sd, sc) end, "expert_wo_stream",
         "engine: expert_wo_stream 2 refused by name", true)
