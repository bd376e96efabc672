-- vLLM's MXFP4 routed experts on Hopper (lua/gpuplan/serve.lua
-- M.VLLM_MXFP4_W4A16, M.VLLM_MXFP4_ROUTE_KERNELS; engine serve_cfg
-- moe_route_kernels, moe_act_fused): its MXFP4 oracle takes
-- triton_kernels' matmul_ogs there, W4A16 (the experts multiply in bf16,
-- not as W4A8), with the routing metadata's twelve small kernels a layer
-- and the SwiGLU fused into the up GEMM.  SGLang's path is left as it
-- was (the comparison).  CDNA3 (MI300X) as Hopper: vLLM on ROCm takes
-- the Triton backend (W4A16), whose AMD opt flags cover each expert's
-- rows in blocks of at least 32 (serve.lua M.VLLM_MXFP4_M_TILE, engine
-- serve_cfg.moe_m_tile), widening the weights to bf16 in each block on
-- the vector units (serve.lua M.VLLM_MXFP4_UPCAST, serve_cfg.moe_upcast,
-- roof_op.dequant and dequant_rep), at the widths vLLM pads them to on
-- ROCm (M.VLLM_MXFP4_PAD, serve_cfg.moe_pad).
-- Run: ./gpuplan run tests/lua/vllm_mxfp4.t
local t = require "tap"
local gp = require "gpuplan"
t.plan(21)

-- gpt-oss-20b's shape (openai/gpt-oss-20b config.json): 24 layers, 32
-- experts top-4, MXFP4 experts.
local model = { layers = 24, hidden = 2880, heads = 64, kv_heads = 8, head_dim = 64,
                ffn_hidden = 2880, ffn_gated = true, vocab = 201088, max_seq = 131072,
                moe = { experts = 32, top_k = 4, shared_experts = 0, ffn_hidden = 2880,
                        dense_layers = 0 } }
local function run(runtime, gpu)
  return assert(gp.infer{ model = model, gpu = gpu or "h100-sxm", gpus = 1, tp = 1, ep = 1,
                          expert_weights = "mxfp4", runtime = runtime, input = 256,
                          output = 256, concurrency = 1 })
end
local function op(r, name)
  for _, o in ipairs(r.decode.ops) do
    if o.name == name then return o end
  end
end

local v, s = run("vllm"), run("sglang")

-- 1-2. The routing metadata: one row of 24 layers x 12 kernels = 288
-- (exact: a count); none under SGLang.
local rm = op(v, "moe_route_meta")
t.ok(rm and rm.count == 24 * 12, "vLLM, H100, mxfp4: moe_route_meta runs 24 x 12 = 288 kernels")
t.ok(op(s, "moe_route_meta") == nil, "SGLang: no moe_route_meta row")

-- 3. Each of them is priced as the top-k is (a row op at the memory floor
-- and a launch): per kernel the same time as moe_topk's within 1% (the
-- top-k reads 1 x (32 x 4 + 4 x 8) = 160 bytes, a metadata kernel 1 x 4
-- x 8 = 32: both far under the floor, which sets the time; reltol 0.01).
local tk = op(v, "moe_topk")
t.near(rm.total / rm.count, tk.total / tk.count, 0.01,
       string.format("a metadata kernel %.2f us, the top-k %.2f us",
                     rm.total / rm.count * 1e6, tk.total / tk.count * 1e6))

-- 4-5. The SwiGLU is the up GEMM's epilogue under vLLM's Triton path: no
-- experts_act row; SGLang keeps its own.
t.ok(op(v, "experts_act") == nil, "vLLM: no experts_act kernel (matmul_ogs' fused SwiGLU)")
t.ok(op(s, "experts_act") ~= nil, "SGLang: experts_act kept")

-- 6. W4A16: the experts' GEMM at the bf16 roof, whose ridge is the H100
-- SXM's bf16 peak over its bandwidth, 989.4e12 / 3.35e12 = 295 FLOP/B
-- (the fp8 roof's is 590); tolerance 0.5% (the catalog's rounding of
-- the two figures; W4A8 would be 100% off).
t.near(op(v, "experts_up").ridge_peak, 989.4 / 3.35, 0.005,
       "vLLM: experts_up on the bf16 roof (W4A16)")

-- 7. On Blackwell vLLM's oracle takes FlashInfer's TRT-LLM MXFP4 kernel
-- first: no Triton metadata there.
t.ok(op(run("vllm", "b200"), "moe_route_meta") == nil, "vLLM, B200: no moe_route_meta row")

-- 8-10. MI300X (CDNA3: FP8, no FP4 units).  vLLM on ROCm runs the Triton
-- MXFP4 experts (get_mxfp4_backend: "elif current_platform.is_rocm() and
-- has_triton_kernels(): ... TRITON"): W4A16 and the twelve metadata
-- kernels, as on Hopper.
local a = run("vllm", "mi300x")
local au = op(a, "experts_up")
-- 8. The bf16 roof: the MI300X's 1307.4e12 bf16 peak over its 5.3e12
-- B/s, 246.7 FLOP/B (W4A8, the fp8 roof the engine priced before, is
-- 2614.9 / 5.3 = 493.4); 0.5% for the catalog's rounding.
t.near(au.ridge_peak, 1307.4 / 5.3, 0.005, "vLLM, MI300X: experts_up on the bf16 roof (W4A16)")
-- 9. The routing metadata: 24 layers x 12 kernels (a count, exact).
local am = op(a, "moe_route_meta")
t.ok(am and am.count == 24 * 12, "vLLM, MI300X: moe_route_meta runs 24 x 12 = 288 kernels")
-- 10. The experts' blocks: 32 rows (matmul_ogs' AMD floor, block_m =
-- max(32, ...)) by 256 columns (its block_n at a full grid, the
-- roofline's 32-row block shape), whole K, in waves over the 304 CUs.
-- One token's 4 rows (top-4) on 4 experts, the up GEMM at vLLM's ROCm
-- padded widths (test 15): N = 2 x 2944 = 5888, K = 2944: ceil(5888 /
-- 256) = 23 blocks an expert, 4 x 23 = 92 blocks, one wave: useful /
-- computed = 4 x 5888 / (304 x 32 x 256) = 0.0094572, times the K loop's
-- fill against the catalog's 8192-deep reference, (2944 / (2944 + 128))
-- / (8192 / (8192 + 128)) = 0.97331: 0.0092048.  With the roofline's
-- 16-row edge (the Hopper rule) it is about 5.7x that; 1% for the
-- expected-row count's rounding (the 4 rows over 32 experts touch 3.81
-- on average, one block each either way).
t.near(au.shape_eff, 4 * 5888 / (304 * 32 * 256) * (2944 / 3072) / (8192 / 8320), 0.01,
       string.format("vLLM, MI300X: experts_up in 32 x 256 blocks, shape factor %.5f",
                     au.shape_eff))

-- 11-12. The in-loop upcast on CDNA3 (M.VLLM_MXFP4_UPCAST: 20 FLOP at the
-- fp32 vector peak a weight, Triton's gfx942 UpcastMXFPToLLVM sequence,
-- 5 lane ops an element at 4 FLOP a lane a clock).  gpt-oss-120b's 128
-- experts top-4 at 256 decode streams: 1024 rows, 8 an expert, one
-- 32-row block each (matmul_ogs' AMD block_m = max(32, ...)), every
-- expert touched (128 (1 - (127/128)^1024) = 127.96).  The up GEMM's
-- upcast at the padded widths (2944 x 5888): 20 x 5888 x 2944 x 127.96
-- / 163.4e12 = 271.5 us, above its MFMA time (the 32-row blocks' 128 x
-- 32 x 2 x 2944 x 5888 FLOP at the roofline's 32 x 256 block rate, about
-- 220 us): the op's compute time is the upcast's.  1% for the touched
-- count's rounding.
local big = {}
for k, x in pairs(model) do big[k] = x end
big.moe = { experts = 128, top_k = 4, shared_experts = 0, ffn_hidden = 2880, dense_layers = 0 }
big.layers = 36
local function run_big(gpu)
  return assert(gp.infer{ model = big, gpu = gpu, gpus = 1, tp = 1, ep = 1,
                          expert_weights = "mxfp4", runtime = "vllm", input = 256,
                          output = 256, concurrency = 256 })
end
local bu = op(run_big("mi300x"), "experts_up")
local touched = 128 * (1 - (127 / 128) ^ 1024)
t.near(bu.t_compute, 20 * 5888 * 2944 * touched / 163.4e12, 0.01,
       string.format("vLLM, MI300X: experts_up's upcast %.1f us sets its compute time",
                     bu.t_compute * 1e6))
-- 12. Hopper has no upcast priced (its matmul_ogs path is priced as
-- before: the MMA alone): the compute time is the FLOP over the rate,
-- 2 x 1024 x 2880 x 5760 / compute_rate, to 1e-9.
local hu = op(run_big("h100-sxm"), "experts_up")
t.near(hu.t_compute, 2 * 1024 * 2880 * 5760 / hu.compute_rate, 1e-9,
       "vLLM, H100: experts_up's compute time is its MMAs'")

-- 13-14. The roofline's repeat: a kernel that widens its weights again in
-- each of its M blocks (roof_op.dequant_rep) spends dequant x n x k x
-- count x rep vector FLOP.  A 64 x 5760 x 2880 GEMM on the MI300X with
-- dequant 20 and rep 4: 4 x 20 x 5760 x 2880 / 163.4e12 = 8.12 us, above
-- its MMA time (2.12 GFLOP at the roofline's rate for 64 rows, about
-- 500 TFLOP/s: 4.2 us): the op's compute time is the upcast's, to 1e-9.
-- With rep 1 the upcast is 2.03 us, under the MMAs: the compute time is
-- the FLOP over the rate, to 1e-9.
local core = require "gpuplan.core"
local dev = require("gpuplan.roofline").device("mi300x")
local function rop(rep)
  return core.roof_op(dev, { flop = 2 * 64 * 5760 * 2880,
    bytes = 5760 * 2880 * 0.53, m = 64, n = 5760, k = 2880, prec = "bf16",
    dequant = 20, dequant_rep = rep })
end
t.near(rop(4).t_compute, 4 * 20 * 5760 * 2880 / 163.4e12, 1e-9,
       "roof_op: dequant_rep 4 converts each weight four times")
local r1 = rop(1)
t.near(r1.t_compute, 2 * 64 * 5760 * 2880 / r1.compute_rate, 1e-9,
       "roof_op: dequant_rep 1 converts once, under the MMAs")

-- 15-16. The padded widths on ROCm (M.VLLM_MXFP4_PAD: get_padding_alignment
-- 128 on gfx942): gpt-oss-20b's 2880 -> 2944 in both.  One token's 4 rows
-- through the up GEMM: 2 x 4 x 2944 x (2 x 2944) = 138,674,176 FLOP on the
-- MI300X; the H100 keeps 2 x 4 x 2880 x 5760 = 132,710,400.  Exact
-- (integers in a double).
local pu = op(run("vllm", "mi300x"), "experts_up")
t.is(pu.flop, 2 * 4 * 2944 * 5888, "vLLM, MI300X: experts_up at the padded 2944 x 5888")
t.is(op(v, "experts_up").flop, 2 * 4 * 2880 * 5760, "vLLM, H100: experts_up at 2880 x 5760")

-- 17-18. dequant_rep counts conversions: 0 (unstated, once) or at least
-- one; a fraction of one is refused, naming the field (roofline.c
-- roof_checked_op_time), and 0 prices exactly as 1 (rep 0 is read as 1:
-- the same t_compute, to 1e-12).
t.raises(function() rop(0.5) end, "op: dequant_rep must be 0 or in [1, 1e+15] (got 0.5)",
         "roof_op: dequant_rep 0.5 refused", true)
t.near(rop(0).t_compute, r1.t_compute, 1e-12, "roof_op: dequant_rep 0 prices as 1")

-- 19-21. moe_pad is a whole number of elements (engine serve.c
-- serve_check): the MI300X's captured engine config (core.serve) run
-- again with a fraction of one, or a denormal that made the padded width
-- h / pad infinite, is refused by name; the config as captured (pad 128)
-- runs.
do
  local cfg, rerun = t.serve_capture(function() run("vllm", "mi300x") end)
  local function with_pad(p) return rerun { moe_pad = p } end
  t.raises(function() with_pad(0.5) end,
           "moe_pad must be 0 or a whole number of elements 1..4096 (got 0.5)",
           "serve: moe_pad 0.5 refused", true)
  t.raises(function() with_pad(5e-324) end, "moe_pad must be 0 or a whole number",
           "serve: a denormal moe_pad refused", true)
  t.is(cfg.moe_pad, 128, "the captured MI300X config pads to 128")
end
