-- The RTX 5090's own GEMM fractions (catalog/gpus/nvidia-blackwell.lua):
-- sm120 runs mma.sync kernels, measured against its own ratings -- torch.mm
-- bf16 232-242 TFLOPS at 8192^3-10240^3 of the rated 209.5, capped at 1.0
-- as the RTX 4090's MAMF is; a CUTLASS 3.x sm120 row-wise scaled FP8 GEMM
-- 388.91 of the rated 419 (0.93) -- in place of the blackwell arch's B200
-- figures (0.78 bf16, 0.76 fp8).  hbm and the sustained factor (0.80)
-- stay the arch's.  Rates are exact products of the catalog's figures:
-- tap's near takes a relative tolerance of 1e-9 (rounding only).
-- Run with ./gpuplan run tests/lua/rtx5090_gemm.t.
local t = require "tap"
local gp = require "gpuplan"
local rf = require "gpuplan.roofline"

t.plan(9)

local cat = gp.catalog()
local d = rf.device("rtx-5090", cat)
-- Fractions as the roofline reads them: the GPU's own x the arch's
-- sustained 0.80 (bf16 1.0 x 0.80, fp8 0.93 x 0.80 = 0.744).
t.near(d.gemm.bf16, 1.0 * 0.80, 1e-9, "bf16: 1.0 of the rating x the arch's sustained 0.80")
t.near(d.gemm.fp8, 0.93 * 0.80, 1e-9, "fp8: 0.93 of the rating x 0.80")
t.near(d.hbm, 0.85, 1e-9, "hbm: the arch's 0.85, stated by the gpu")
t.is(d.fp8_non_tn, nil, "fp8 still TN only (the gpu's non_tn opt-out)")

-- Llama 3.1 8B (the nvbench cases' model), pure decode at 128 requests.
local M = { ffn_gated = true, ffn_hidden = 14336, head_dim = 128, heads = 32, hidden = 4096,
  id = "llama31-8b-test", kv_heads = 8, layers = 32, norm = "rms", split_proj = "both",
  tied_embeddings = false, vocab = 128256 }
local job = { gpu = "rtx-5090", gpus = 1, model = M, runtime = "vllm", input = 200,
              output = 200, concurrency = 128, max_batch = 256, weights = "bf16", cat = cat }
local function up(r)
  for _, o in ipairs(r.decode.ops) do if o.name == "mlp_up" then return o end end
end
local own = up(gp.infer(job))
-- mlp_up (gate and up, 4096 -> 2 x 14336) at batch 128: 2 x 128 x 4096 x
-- 28672 = 30.06e9 FLOP at 210e12 x 1.0 x 0.80 x its shape efficiency.
t.near(own.compute_rate, 210e12 * 0.80 * own.shape_eff, 1e-9,
       "decode mlp_up at 210 TFLOPS x 1.0 x 0.80 x shape eff")
t.near(own.t_compute, 2 * 128 * 4096 * 28672 / (210e12 * 0.80 * own.shape_eff), 1e-9,
       "decode mlp_up: 2 x 128 x 4096 x 28672 FLOP at that rate")

-- The same op with the arch's fractions (the entry's gemm and hbm
-- removed): the bf16 compute time grows by 1.0 / 0.78, the shape the same.
local g = cat.gpus["rtx-5090"]
local saved = g.achievable
g.achievable = { non_tn = saved.non_tn, reason = saved.reason, source = saved.source }
local arch = up(gp.infer(job))
local archfp8 = up(gp.infer(t.with(job, { weights = "fp8" })))
g.achievable = saved
t.near(arch.t_compute / own.t_compute, 1.0 / 0.78, 1e-9,
       "arch's bf16 0.78 against the gpu's 1.0: 1 / 0.78 of the compute time")

-- fp8 weights (vLLM's w8a8 CUTLASS GEMM): 419e12 x 0.93 x 0.80 x shape
-- eff, and 0.93 / 0.76 of the arch's fp8 rate.
local own8 = up(gp.infer(t.with(job, { weights = "fp8" })))
t.near(own8.compute_rate, 419e12 * 0.93 * 0.80 * own8.shape_eff, 1e-9,
       "decode fp8 mlp_up at 419 TFLOPS x 0.93 x 0.80 x shape eff")
t.near(own8.compute_rate / archfp8.compute_rate, 0.93 / 0.76, 1e-9,
       "fp8: 0.93 / 0.76 of the arch's rate")
