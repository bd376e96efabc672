-- vLLM's MXFP4 routed experts on Hopper (lua/gpuplan/serve.lua
-- M.VLLM_MXFP4_W4A16, M.VLLM_MXFP4_ROUTE_KERNELS; engine serve_cfg
-- moe_route_kernels, moe_act_fused): its MXFP4 oracle takes
-- triton_kernels' matmul_ogs there, W4A16 (the experts multiply in bf16,
-- not as W4A8), with the routing metadata's twelve small kernels a layer
-- and the SwiGLU fused into the up GEMM.  SGLang's path is left as it
-- was (the comparison).
-- Run: ./gpuplan run tests/lua/vllm_mxfp4.t
local t = require "tap"
local gp = require "gpuplan"
t.plan(7)

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
