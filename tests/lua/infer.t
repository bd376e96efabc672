-- gp.infer / gp.roofline from Lua: catalog devices, hand-checked figures,
-- the plain result table, the SVG writer and argument errors.
local t = require "tap"
local gp = require "gpuplan"
local infer = require "gpuplan.infer"
local roofline = require "gpuplan.roofline"
local svg = require "gpuplan.svg"

-- Ridge of H100 SXM bf16 at peak: 989e12 / 3.35e12 = 295.2 FLOP/B.
local r = gp.roofline { gpu = "h100-sxm" }
t.near(r.ridges.bf16.peak, 989e12 / 3.35e12, 1e-9, "H100 bf16 ridge 295 FLOP/B")
-- Achievable (hopper arch: 0.80 gemm at the sustained-load 0.82, 0.84
-- hbm): 295.2 x 0.80 x 0.82 / 0.84 = 230.6.
t.near(r.ridges.bf16.achievable, 989e12 * 0.80 * 0.82 / (3.35e12 * 0.84), 1e-9,
       "achievable ridge uses the arch fractions")
t.is(r.device.sms, 132, "H100 SXM has 132 SMs")
-- SM counts come from the catalog entries (H100 PCIe 114, H20 78 per its
-- notes); an entry without sms takes its arch's flagship count (hopper 132),
-- an arch without one number (ada) none.
t.is(roofline.device("h100-pcie").sms, 114, "H100 PCIe: 114 SMs from the catalog")
t.is(gp.catalog():get("gpus", "h100-pcie").sms, 114, "... the catalog entry carries sms")
local bare = {}
for k, v in pairs(gp.catalog():get("gpus", "h100-sxm")) do bare[k] = v end
bare.sms = nil
t.is(roofline.device(bare).sms, 132, "no sms: the hopper default 132")
bare.arch = "ada"
t.is(roofline.device(bare).sms, 0, "no sms on ada: no wave term")

-- Sustained load (achievable.sustained): a B200's rates are its own MAMF
-- fractions times the blackwell arch's sustained factors (catalog/archs.lua:
-- gemm 0.80, the 1965 -> ~1580 MHz clock; attention 0.85, FA4's measured
-- fall): bf16 0.78 x 0.80 = 0.624, fp8 0.76 x 0.80 = 0.608, cuDNN 9.13's
-- forward 0.55 x 0.85 = 0.4675 and backward 0.43 x 0.85 = 0.3655 (NVIDIA's
-- B200 timings less their per-call dispatch, the arch entry).  Memory-bound
-- rates keep their fraction (hbm 0.85).  Exact arithmetic: 1e-12.
local b200 = roofline.device("b200")
t.near(b200.gemm.bf16, 0.78 * 0.80, 1e-12, "B200 bf16 GEMM: MAMF 0.78 x sustained 0.80")
t.near(b200.gemm.fp8, 0.76 * 0.80, 1e-12, "B200 fp8 GEMM: MAMF 0.76 x sustained 0.80")
t.near(b200.attn_fwd, 0.55 * 0.85, 1e-12, "B200 cuDNN attention forward: 0.55 x 0.85")
t.near(b200.attn_bwd, 0.43 * 0.85, 1e-12, "B200 cuDNN attention backward: 0.43 x 0.85")
t.near(b200.hbm, 0.85, 1e-12, "B200 streaming fraction not scaled")
-- GB200 gives no sustained of its own: the arch's applies (0.73 x 0.80).
t.near(roofline.device("gb200").gemm.bf16, 0.73 * 0.80, 1e-12, "GB200: the arch's sustained factor")
-- Its attention is its own: the arch's B200 fractions at the GEMMs' clock
-- ratio, 0.55 x 2250 x (1822.0 / 1745.0) / 2500 = 0.517 -> 0.52 and 0.43
-- x 0.94 = 0.404 -> 0.40, under the arch's 0.85: 0.442 and 0.34.
local gb200 = roofline.device("gb200")
t.near(gb200.attn_fwd, 0.52 * 0.85, 1e-12, "GB200 cuDNN attention forward: 0.52 x 0.85")
t.near(gb200.attn_bwd, 0.40 * 0.85, 1e-12, "GB200 cuDNN attention backward: 0.40 x 0.85")
-- Hopper's 700 W parts hold 1500 of 1830 MHz (0.82), GEMMs and attention
-- alike (FA3's timings at a locked 1830 MHz): H100 SXM bf16 0.80 x 0.82 =
-- 0.656, cuDNN forward 0.53 x 0.82 = 0.4346.  The H20 gives its own 1 (its tensor work does
-- not reach its cap): its own measured 0.96 (torch.mm, 141.86 and 142.25 of 148).  Ampere gives none: the A100
-- 80GB's 0.754 as measured.  Exact arithmetic: 1e-12.
local h100 = roofline.device("h100-sxm")
t.near(h100.gemm.bf16, 0.80 * 0.82, 1e-12, "H100 bf16 GEMM: MAMF 0.80 x sustained 0.82")
t.near(h100.attn_fwd, 0.53 * 0.82, 1e-12, "H100 cuDNN attention forward: 0.53 x 0.82")
t.near(roofline.device("h20").gemm.bf16, 0.96, 1e-12, "H20: its own 0.96, its own sustained 1")
t.near(roofline.device("a100-sxm-80gb").gemm.bf16, 0.754, 1e-12, "no sustained: the fraction as measured")
-- The H200 NVL (600 W, its 835.5 TFLOP/s quoted at the clock it holds)
-- gives its own 0.92, from Transformer Engine's timed GEMMs on it:
-- bf16 0.80 x 0.92 = 0.736, fp8 0.71 x 0.92 = 0.6532.
local nvl = roofline.device("h200-nvl")
t.near(nvl.gemm.bf16, 0.80 * 0.92, 1e-12, "H200 NVL bf16 GEMM: 0.80 x its own 0.92")
t.near(nvl.gemm.fp8, 0.71 * 0.92, 1e-12, "H200 NVL fp8 GEMM: 0.71 x its own 0.92")
-- And what that factor came from: the guide's 5B layer (hidden 4096, MLP
-- 16384 non-gated, 32 heads, 31 x 512 = 15872 tokens) runs its twelve
-- BF16 GEMMs in 768.335 / 24 = 32.01 ms a layer on an H200 NVL.  The
-- layer's qkv, o_proj, mlp_up and mlp_down forward + backward from
-- gp.train: within 2% (the factor was rounded to two digits from
-- 0.916).
do
  local r = require("gpuplan.train").train {
    model = { name = "te-5b", layers = 24, hidden = 4096, heads = 32, kv_heads = 32,
              ffn_hidden = 16384, ffn_gated = false, vocab = 32000 },
    gpu = "h200-nvl", gpus = 1, method = "pretrain", seq = 512, batch = 31,
    global_batch = 31, precision = "bf16", recompute = "none", margin = 0 }
  local g = 0
  for _, o in ipairs(r.ops) do
    if o.name == "qkv" or o.name == "o_proj" or o.name == "mlp_up" or o.name == "mlp_down" then
      g = g + o.fwd + o.bwd
    end
  end
  t.near(g, 768.335e-3 / 24, 0.02, "H200 NVL: the guide's BF16 GEMMs of a 5B layer, 32.01 ms")
end

-- 13B bf16 decode, batch 1, H200: weights (40 x (4 h^2 + 3 h f + 2h) + V h)
-- x 2 B with h 5120, f 13824, V 32000 = (12.688e9 + 0.164e9) x 2 B =
-- 25,704,038,400 B read per token through GEMMs at 0.94 of the streaming
-- rate (the H200's measured 0.89 of 4.8 TB/s, catalog h200-sxm):
-- / (4.8e12 x 0.89 x 0.94) = 6.401 ms, + 364 kernels (9 per layer + 4)
-- x (1 us launch + 3.9 us memory fill) = 1.784 ms -> 8.185 ms, 122.18 tok/s;
-- the issue's "<= 160 tok/s before overheads".
local w13 = (40 * (4 * 5120 ^ 2 + 3 * 5120 * 13824 + 2 * 5120) + 32000 * 5120) * 2
local itl13 = w13 / (4.8e12 * 0.89 * 0.94) + 364 * 4.9e-6
local d = infer.infer { model = "llama2-13b", gpu = "h200-sxm", batch = 1, input = 1, output = 2 }
t.ok(d.fits, "13B fits on H200")
-- 0.1%: the hand sum is the weights only; each layer also moves its
-- activations and one token's K and V (about 0.4 MB), the step the logits
-- and sampling buffers: 16 MB in all, 0.06%.
t.near(d.decode.bytes, w13, 0.001, "13B decode reads 25.70 GB per token")
-- 0.5%: the activation bytes above and the non-GEMM ops streaming at 0.89
-- rather than 0.84 of the bandwidth are left out of the hand time (the
-- engine is 0.05% slower).
t.near(d.stream_tokens_per_s, 1 / itl13, 0.005, "13B H200 batch 1: 122.18 tok/s")
local mlp = t.op(d, "mlp_up")
t.is(mlp and mlp.bound, "memory", "batch-1 decode GEMMs are memory-bound")

-- 70B int4 decode: A100 80GB / H200 time ratio ~ bandwidth ratio
-- (4.8 x 0.89) / (2.039 x 0.85) = 2.46, less with the equal per-kernel
-- costs.  Both read 35.56 GB of int4 linears (4.156 bits) and the 2.10 GB
-- bf16 lm_head through GEMMs at 0.94 of the streaming rate, + 724 kernels
-- (9 x 80 + 4) x 4.9 us = 3.548 ms; each int4 weight costs 4 vector FLOP to
-- dequantise beside the MMAs, which the batch-1 overlap exposes (derived
-- in tests/c/t_infer.c at the H200's former 0.84): the memory-bound overlap
-- adds r^2 (sqrt(1 + r^2) - 1) of the streaming time, r = t_c / t_m; on the
-- H200 at 0.89 (4.01568 TB/s through GEMMs) mlp_up's t_m = 244.0 MB /
-- 4.01568 TB/s + 3.9 us = 64.67 us against the dequantisation's 28.05 us,
-- r = 0.4337, x 1.0169 (the lm_head's tensor-core r 0.295 at 0.84 grows by
-- 0.89 / 0.84 to 0.3126, x 1.0047); A100 x 1.0709 and x 1.0091 as there.
-- A100 35.56 / 1.62921 x 1.0709 + 2.101 / 1.62921 x 1.0091 + 3.548 =
-- 28.224 ms, H200 35.56 / 4.01568 x 1.0169 + 2.101 / 4.01568 x 1.0047 +
-- 3.548 = 13.079 ms, ratio 2.158.  0.5%: the smaller GEMMs' overlap differs
-- from mlp_up's (the engine is 0.2% below).
local a = infer.infer { model = "llama3-70b", gpu = "a100-sxm-80gb", weights = "int4", batch = 1, input = 1, output = 2 }
local h = infer.infer { model = "llama3-70b", gpu = "h200-sxm", weights = "int4", batch = 1, input = 1, output = 2 }
t.near(a.itl_s / h.itl_s, (35.56 / 1.62921 * 1.0709 + 2.101 / 1.62921 * 1.0091 + 3.548) /
       (35.56 / 4.01568 * 1.0169 + 2.101 / 4.01568 * 1.0047 + 3.548), 0.005,
       "70B int4: A100 2.16x slower than H200")
-- Small-M kernels follow the runtime, the same rule for every dtype
-- (engine/roofline.c, M.gemv_max): on H20 (bf16 148 TFLOPS, fp32 44) a
-- 70B int4 decode step at batch 1 runs TensorRT-LLM's CUDA-core GEMV (m < 5)
-- and vLLM's Marlin 16-row tiles.  GEMV compute of mlp_up, exactly: the
-- 2 FLOP per weight as packed bf16x2 FMAs at vec16_x = 2 times fp32 (88e12,
-- roofline.c ROOF_VEC16), the 4 dequant FLOP at fp32: (2 / 88e12 + 4 /
-- 44e12) x 57344 x 8192 = 53.38 us, below its 81.2 us stream; on tiles the
-- padded MMAs take >= 939524096 / (148e12 x 0.96 / 16) = 105.8 us:
-- compute-bound.
local function up(r) return t.op(r, "mlp_up") end
local h20t = infer.infer { model = "llama2-70b", gpu = "h20", weights = "int4", batch = 1, input = 512,
                           output = 256, runtime = "trtllm" }
local h20v = infer.infer { model = "llama2-70b", gpu = "h20", weights = "int4", batch = 1, input = 512,
                           output = 256, runtime = "vllm" }
t.near(up(h20t).t_compute, (2 / 88e12 + 4 / 44e12) * 57344 * 8192, 1e-12,
       "H20 int4 GEMV: 53.38 us of vector work")
t.is(up(h20t).bound, "memory", "... TensorRT-LLM's batch-1 int4 decode streams")
t.ok(up(h20v).bound == "compute" and up(h20v).t_compute > 105.8e-6, "... vLLM's Marlin tiles are compute-bound")
t.ok(h20v.itl_s / h20t.itl_s > 1.4, "H20 70B int4 batch 1: the GEMV runtime is > 1.4x faster")
-- Batch 2, by hand: 2 rows x 2 FLOP per weight on the bf16x2 FMAs, the
-- dequantisation once per weight (the kernel converts each weight tile once
-- for all CtaM rows, weightOnlyBatchedGemv/kernel.h):
-- (4 / 88e12 + 4 / 44e12) x 57344 x 8192 = 64.06 us -- what batch 1 cost
-- on the fp32 lanes.  1e-12: float rounding only.
local h20t2 = infer.infer { model = "llama2-70b", gpu = "h20", weights = "int4", batch = 2, input = 512,
                            output = 256, runtime = "trtllm" }
t.near(up(h20t2).t_compute, (4 / 88e12 + 4 / 44e12) * 57344 * 8192, 1e-12,
       "H20 int4 GEMV batch 2: 64.06 us of vector work")
-- llama.cpp's mul_mat_vec_q (dp4a on int8 activations) keeps the fp32
-- lanes: (4 + 4) / 44e12 x 57344 x 8192 = 85.41 us.
local h20k = infer.infer { model = "llama2-70b", gpu = "h20", weights = "int4", batch = 2, input = 512,
                           output = 256, runtime = "llama.cpp" }
t.near(up(h20k).t_compute, 8 / 44e12 * 57344 * 8192, 1e-12, "llama.cpp's batch-2 GEMV: the fp32 rate")
-- The invariant: under TensorRT-LLM a decode step of more sequences is never
-- faster, GEMV (batch 1-4) into tiles (5-8) included.  Qwen3-32B int4, one
-- H100 SXM or H20; before the packed rate H100's batch 3 and 4 (11.49,
-- 11.71 ms) were slower than batch 5 (10.75).  A800 still breaks it (see
-- the report of this change: its dequantisation on the fp32 lanes).
for _, g in ipairs { "h100-sxm", "h20" } do
  local prev, ok, at = 0, true, nil
  for bs = 1, 8 do
    local r = infer.infer { model = "qwen3-32b", gpu = g, weights = "int4", batch = bs, runtime = "trtllm" }
    if r.itl_s < prev then ok, at = false, bs end
    prev = r.itl_s
  end
  t.ok(ok, g .. ": trtllm int4 ITL non-decreasing in batch 1..8" .. (at and (" (drops at " .. at .. ")") or ""))
end
-- A packed rate outside [1, 4] x fp32 (A100's fp16, the widest NVIDIA
-- lists) and a GEMV kind beyond 2 are refused, not priced.
local dv = roofline.device("h100-sxm")
dv.vec16_x = 5
t.raises(function() require("gpuplan.core").roof_op(dv, { flop = 1, bytes = 1, m = 1, n = 1, k = 1 }) end,
         "device vec16_x must be 0 or in [1, 4] (got 5)", "roof_op: vec16_x 5", true)
t.raises(function() require("gpuplan.core").roof_op(roofline.device("h100-sxm"),
           { flop = 1, bytes = 1, m = 1, n = 1, k = 1, gemv = 3 }) end,
         "op.gemv must be an integer in 0..2 (got 3)", "roof_op: gemv 3", true)
-- Batch 8 is past TensorRT-LLM's GEMV limit: both on tiles, the same step
-- as the generic graphs runtime's (vLLM's Marlin streams at its own
-- fraction, M.wo_stream, below).
h20t = infer.infer { model = "llama2-70b", gpu = "h20", weights = "int4", batch = 8, input = 512,
                     output = 256, runtime = "trtllm" }
h20v = infer.infer { model = "llama2-70b", gpu = "h20", weights = "int4", batch = 8, input = 512,
                     output = 256, runtime = "graphs" }
t.near(h20t.itl_s, h20v.itl_s, 1e-12, "batch 8: tiles in both runtimes")
-- Natively multiplied formats never dequantise: bf16 / fp8 steps do not
-- depend on the runtime's GEMV limit.  TensorRT-LLM's step also holds its
-- activation-quantise kernels (the *_quant rows, tests/lua/act_quant.t):
-- without them the two steps are the same.
local b1 = infer.infer { model = "llama3.1-8b", gpu = "h20", weights = "fp8", batch = 1, runtime = "trtllm" }
local b2 = infer.infer { model = "llama3.1-8b", gpu = "h20", weights = "fp8", batch = 1, runtime = "vllm" }
local aq = 0
for _, op in ipairs(b1.ops) do if op.name:find("_quant$") then aq = aq + op.total end end
t.near(b1.itl_s - aq, b2.itl_s, 1e-12, "fp8 on H20: the same step whatever the GEMV limit")
-- The bound: never more than the peak-bandwidth ratio 4.8 / 2.039 = 2.35.
t.ok(a.itl_s / h.itl_s < 4.8 / 2.039, "... below the 2.35 peak-bandwidth ratio")

-- gpt-fast's weight-only kernels stream below the bf16 GEMV rate
-- (M.wo_stream): tinygemm int4 at 0.65 of the streaming copy, the
-- compiled int8 kernel at 0.78, where the default runtime reads every
-- GEMM at ROOF_GEMV_BW 0.94.  The same bytes at the same copy rate, so
-- the memory side less its 3.9 us fill scales by 0.94 / 0.65 and
-- 0.94 / 0.78 (exact but for float rounding: 1e-9 relative).
local function gf(w, rt)
  return infer.infer { model = "llama2-7b", gpu = "a100-sxm-80gb", weights = w, batch = 1,
                       input = 5, output = 200, runtime = rt }
end
local function mem(r) return t.op(r, "mlp_up").t_memory - 3.9e-6 end
t.near(mem(gf(5, "gpt-fast")) / mem(gf(5)), 0.94 / 0.65, 1e-9,
       "gpt-fast int4 (tinygemm): mlp_up streams at 0.65, not 0.94")
t.near(mem(gf("int8", "gpt-fast")) / mem(gf("int8")), 0.94 / 0.78, 1e-9,
       "gpt-fast int8 (compiled Triton): 0.78")
-- vLLM's int4 linears run Marlin, at 0.81 of the copy (M.wo_stream.vllm):
-- the memory side less its fill scales by 0.94 / 0.81 against the
-- default runtime (exact but for float rounding); its bf16 and int8
-- linears keep the device's rate.
t.near(mem(gf(4, "vllm")) / mem(gf(4)), 0.94 / 0.81, 1e-9,
       "vllm int4 (Marlin): mlp_up streams at 0.81, not 0.94")
t.near(t.op(gf("int8", "vllm"), "mlp_up").t_memory, t.op(gf("int8"), "mlp_up").t_memory, 1e-15,
       "vllm int8: no measured kernel, the device's rate")
-- Where 0.81 comes from: Marlin's bench.py line in vllm PR #2497,
-- "batch=0001: s=0.00014, TFLOP/s=004.626, GB/s=1158.601", over
-- Llama13B's four layer shapes (K x N: 5120 x 15360, 5120 x 5120,
-- 5120 x 27136, 13568 x 5120; 313,262,080 weights): 2 x 313,262,080 /
-- 4.626e12 = 135.44 us, each shape reading K N / 2 bytes of codes, 2 N of
-- per-column scales, 2 K of activations and 2 N of output (156,899,840
-- bytes, 1158.5 GB/s, the line's figure).  Priced on an A100 80GB with
-- the engine's int4 dequantisation (4 FLOP a weight, infer.c
-- INFER_DEQUANT_FLOP) at stream 0.81 the four kernels come to that time
-- within 0.3% (0.81 is the fraction rounded to two places: 0.8094 gives
-- it exactly); at the default 0.94 to 117.6 us.
local a100 = roofline.device("a100-sxm-80gb")
local function marlin13b(f)
  local tot = 0
  for _, kn in ipairs { { 5120, 15360 }, { 5120, 5120 }, { 5120, 27136 }, { 13568, 5120 } } do
    local k, n = kn[1], kn[2]
    tot = tot + require("gpuplan.core").roof_op(a100, { flop = 2 * k * n, m = 1, n = n, k = k,
      bytes = k * n / 2 + 2 * n + 2 * k + 2 * n, dequant = 4, stream = f }).time
  end
  return tot
end
t.near(marlin13b(0.81), 2 * 313262080 / 4.626e12, 3e-3,
       "Marlin's batch-1 line (vllm PR #2497): 135.4 us at 0.81 of the copy")
t.ok(marlin13b(0.94) < 0.9 * 2 * 313262080 / 4.626e12,
     "... the default 0.94 prices it 13% faster than measured")
t.near(gf("bf16", "gpt-fast").itl_s, gf("bf16").itl_s, 1e-15,
       "gpt-fast bf16: the default runtime's step (0.94 is its own measurement)")
-- Only the weight-only linears: attention and the 16-bit lm_head keep
-- the device's rate.
t.near(t.op(gf(5, "gpt-fast"), "logits").t_memory, t.op(gf(5), "logits").t_memory, 1e-15,
       "... the bf16 lm_head is not a weight-only kernel")
local sm2, sd2, sc2 = infer.setup { model = "llama3-8b", gpu = "h100-sxm", weights = "int4" }
sc2.wo_stream = 2
t.raises(function() require("gpuplan.core").infer(sm2, sd2, sc2) end,
         "wo_stream must be 0 or in [0.01, 1] (got 2)", "engine: a streaming fraction above 1", true)
t.raises(function() require("gpuplan.core").roof_op(roofline.device("h100-sxm"),
           { flop = 1, bytes = 1, m = 1, n = 1, k = 1, stream = 0.001 }) end,
         "op: stream must be 0 or in [0.01, 1] (got 0.001)", "roof_op: a stream below 1%", true)

-- SGLang's fp8 dense linears run DeepGEMM on Hopper (infer.lua M.m_tile):
-- a decode step of 1..64 tokens pays for a 64-row M tile where the
-- library's kernels pay for 16 (roofline.c ROOF_MIN_EDGE).  Qwen3-8B's
-- mlp_up at batch 1 (N 24576, K 4096) on the H20's 78 SMs, with
-- f(k) = (k / (k + 128)) / (8192 / 8320), the K loop's fill: DeepGEMM
-- (roofline.c deepgemm_eff) takes block_n 160, 154 blocks in 2 waves with
-- the fullest last wave (192: 128 blocks, 2 waves, 50 in the last; 144
-- and under 3 waves), whole K: 24576 / (2 x 78 x 64 x 160) x f(4096).
-- vLLM's library tile: 16 rows, 192 tiles of 128 split 2 ways, 384 in 5
-- waves of 78 at f(2048) (no split or 3 ways less): 24576 / (16 x 24576)
-- x 384 / 390 x f(2048).  Their ratio, 3.882, is what the padded compute
-- (t_compute, the same FLOP) differs by: 1e-12 relative for rounding.
-- On the H20 (fp8 ridge 63 FLOP/B as priced) that is 128 FLOP per weight
-- byte: compute-bound, where 32 stays memory-bound; on the H200 (ridge
-- 294) both stay memory-bound.
local function q8(gpu, w, rt, model)
  return infer.infer { model = model or "qwen3-8b", gpu = gpu, weights = w, batch = 1,
                       input = 1, output = 2048, runtime = rt }
end
local sg, vl = q8("h20", "fp8", "sglang"), q8("h20", "fp8", "vllm")
do
  local function f(k) return (k / (k + 128)) / (8192 / 8320) end
  local dg = 24576 / (2 * 78 * 64 * 160) * f(4096)
  local lib = 1 / 16 * 384 / 390 * f(2048)
  t.near(t.op(sg, "mlp_up").t_compute / t.op(vl, "mlp_up").t_compute, lib / dg, 1e-12,
         "SGLang fp8 on H20: mlp_up pays a 64-row tile at DeepGEMM's block_n, 3.88x vLLM's 16")
end
t.is(t.op(sg, "mlp_up").bound .. "/" .. t.op(vl, "mlp_up").bound, "compute/memory",
     "... compute-bound on the H20, where vLLM's 16-row tile is memory-bound")
t.is(t.op(q8("h200-sxm", "fp8", "sglang"), "mlp_up").bound, "memory",
     "... memory-bound on the H200 (128 FLOP/B under its 294 ridge)")
t.near(t.op(sg, "logits").time, t.op(vl, "logits").time, 1e-15,
       "... the 16-bit lm_head keeps the library's tiles")
t.near(t.op(q8("h20", "bf16", "sglang"), "mlp_up").time, t.op(q8("h20", "bf16", "vllm"), "mlp_up").time,
       1e-15, "... bf16 linears (cuBLAS) keep the library's tiles")
t.near(t.op(q8("h20", "fp8", "sglang", "qwen3-30b-a3b"), "moe_up").time,
       t.op(q8("h20", "fp8", "vllm", "qwen3-30b-a3b"), "moe_up").time, 1e-15,
       "... the fused MoE's expert GEMMs keep their own kernel's tiles")
t.is(infer.m_tile_of("sglang", "blackwell", "fp8"), nil, "M.m_tile: Hopper only (DeepGEMM's sm90 kernels)")
local sm3, sd3, sc3 = infer.setup { model = "llama3-8b", gpu = "h100-sxm", weights = "fp8" }
sc3.m_tile = 4
t.raises(function() require("gpuplan.core").infer(sm3, sd3, sc3) end,
         "m_tile must be 0 or in [8, 128] rows (got 4)", "engine: an M tile under 8 rows", true)

-- Eager PyTorch (plain PyTorch / HF generate): the host dispatches
-- (40 x 49 + 10) kernel-launching ops x 24.84 us = 48.93 ms per token (49
-- ops per gpt-fast block, the per-op cost from the PyTorch blog's
-- host-bound eager Llama-2-7B, 25.5 tok/s), above the GPU's ~22 ms, so
-- ITL = host time.
local e = infer.infer { model = "llama2-13b", gpu = "a100-sxm-40gb", batch = 1, input = 128,
                        output = 256, runtime = "eager" }
t.near(e.itl_s, 1970 * 24.84e-6, 1e-9, "eager 13B: ITL = 1970 host ops x 24.84 us")
t.ok(e.decode.gpu_time < e.itl_s, "... the GPU waits on the host")
-- LitGPT's own block launches 36 ops (counted in lit_gpt/model.py, see
-- infer.lua M.host_ops): (40 x 36 + 10) x 24.84 us = 36.02 ms, still above
-- the GPU's ~22 ms.
local l = infer.infer { model = "llama2-13b", gpu = "a100-sxm-40gb", batch = 1, input = 128,
                        output = 256, runtime = "litgpt" }
t.near(l.itl_s, 1450 * 24.84e-6, 1e-9, "LitGPT 13B: ITL = 1450 host ops x 24.84 us")
t.ok(l.decode.gpu_time < l.itl_s, "... the GPU still waits on the host")

-- vLLM with enforce_eager (infer.lua M.eager_host_ops): the runtime's own
-- kernels, every op dispatched from Python at GP_EAGER_OP_TIME.  A dense
-- Llama layer of today's eager vLLM launches 10 ops (gpuplan.rl
-- eager_ops_per_layer: norm, qkv, rotary, cache write, attention, o_proj,
-- norm, gate_up, SiluAndMul, down) and 2 TP all-reduces at TP > 1.
-- Llama-2-7B bf16 on one H100 at batch 1: host (32 x 10 + 10) x 24.84 us
-- = 8.197 ms, above the GPU's ~6.5 ms (13.5 GB of weights at ~2.2 TB/s), so
-- the host sets the ITL; at TP 2 (32 x 12 + 10) x 24.84 us = 9.787 ms.
-- Exact to rounding (1e-9 s): the ITL is the host's sum when it binds.
local function ve(tp, extra)
  local a = { model = "llama2-7b", gpu = "h100-sxm", gpus = tp, tp = tp, batch = 1,
              input = 128, output = 256, runtime = "vllm", enforce_eager = true }
  for k, v in pairs(extra or {}) do a[k] = v end
  return infer.infer(a)
end
local v1, v2 = ve(1), ve(2)
t.near(v1.itl_s, 330 * 24.84e-6, 1e-9, "vLLM eager 7B TP1: ITL = 330 host ops x 24.84 us")
t.ok(v1.decode.gpu_time < v1.itl_s, "... the GPU waits on the host")
t.near(v2.itl_s, 394 * 24.84e-6, 1e-9, "vLLM eager 7B TP2: 2 all-reduces a layer more")
local vg = infer.infer { model = "llama2-7b", gpu = "h100-sxm", batch = 1, input = 128,
                         output = 256, runtime = "vllm" }
t.ok(vg.itl_s < v1.itl_s / 1.2, "vLLM with its CUDA graphs is GPU-bound, well under eager")
t.raises(function() ve(1, { runtime = "sglang" }) end, "enforce_eager.*runtime vllm and trtllm only",
         "enforce_eager on a runtime whose eager ops are not counted: refused")
t.raises(function() ve(1, { runtime = "trtllm" }) end, "counted for a DeepSeek%-V3%-shaped model",
         "enforce_eager, runtime trtllm, on a dense model (no count for it): refused")
t.raises(function() ve(1, { graph_sizes = { 1, 2 } }) end, "enforce_eager or graph_sizes",
         "enforce_eager with graph_sizes: refused")
t.raises(function() ve(1, { enforce_eager = "yes" }) end, "enforce_eager must be true or false",
         "enforce_eager not a boolean: refused")
-- The MoE serving model (chosen here by ep = 8) prices its own steps under
-- CUDA graphs but for runtime trtllm's eager PyTorch flow
-- (tests/lua/trtllm_eager.t): refused, naming the argument that chose it.
t.raises(function() ve(8, { model = "mixtral-8x7b", ep = 8 }) end,
         "infer: enforce_eager: the MoE serving model (chosen by ep = 8) prices its own steps",
         "enforce_eager with the MoE serving model: refused, naming what chose it", true)

-- The era rule of the validation predictor's vLLM profile: a run dated
-- before vllm PR #1926 (2023-12-17) is eager; before PR #1667
-- (2023-11-19) its Llama layer adds the 2 residuals in Python as well.
-- Same 7B bf16 H100 TP1 case: 2023-10-06 -> 12 ops a layer, ITL (32 x 12
-- + 10) x 24.84 us = 9.787 ms; 2023-11-30 -> 10 ops, 8.197 ms; 2024-01-10
-- -> CUDA graphs (the profile's V0 rules only).  Each V0 step also waits
-- for the engine's host work between steps (async_scheduling = false, V1's
-- figures): 0.43 ms + 1 x (5.5 - 0.43) ms / 256 = 0.4498 ms at batch 1.
local V0_HOST_MS = 0.43 + (5.5 - 0.43) / 256
do
  local pv = require "gpuplan.predict.infer"
  local function era(date, version)
    local c = { model = { layers = 32, hidden = 4096, heads = 32, kv_heads = 32,
                          ffn_hidden = 11008, ffn_gated = true, vocab = 32000 },
                hardware = { gpu = "h100-sxm", gpus = 1 }, parallel = {},
                workload = { weight_dtype = "bf16", batch = 1, input_len = 128, output_len = 256,
                             framework = "vllm" },
                measured = { metric = "itl_ms" },
                source = { title = "vLLM benchmark_latency.py", date = date, version = version } }
    local r = pv(c, gp.catalog())
    local eager = false
    for _, d in ipairs(r.defaults) do if d:match("^enforce_eager %(") then eager = true end end
    return r.value, eager
  end
  local oct, e_oct = era("2023-10-06")
  local nov, e_nov = era("2023-11-30")
  local jan, e_jan = era("2024-01-10")
  t.ok(e_oct and e_nov and not e_jan, "eager before 2023-12-17 only")
  t.near(oct, 394 * 24.84e-3 + V0_HOST_MS, 1e-6, "2023-10: 12 ops a layer (residual adds in Python)")
  t.near(nov, 330 * 24.84e-3 + V0_HOST_MS, 1e-6, "2023-11-30: fused add-RMSNorm, 10 ops a layer")
  t.ok(jan < nov / 1.2, "2024: CUDA graphs, GPU-bound")
  -- A release says the era where it places the run: 0.1.x before both
  -- merges (12 ops, as 2023-10), 0.3.0 after (graphs, as 2024-01), each
  -- whatever the date.  0.2.x straddles them, so its date decides: 0.2.1
  -- dated 2023-10-06 is the October run (it read as graphs before).
  -- Same hand figures as above; 1e-6 ms is float noise only.
  local v01, e01 = era("2024-01-10", "0.1.7")
  local v03, e03 = era("2023-10-06", "0.3.0")
  local v02, e02 = era("2023-10-06", "0.2.1")
  local v02j, e02j = era("2024-01-10", "0.2.7")
  t.ok(e01 and not e03 and e02 and not e02j, "version decides but for 0.2.x, where the date does")
  t.near(v01, 394 * 24.84e-3 + V0_HOST_MS, 1e-6, "0.1.7: 12 ops a layer")
  t.near(v02, 394 * 24.84e-3 + V0_HOST_MS, 1e-6, "0.2.1 dated 2023-10-06: 12 ops a layer")
  t.near(v03, jan, 1e-9, "0.3.0: the 2024 figure, CUDA graphs")
  t.near(v02j, jan, 1e-9, "0.2.7 dated 2024-01-10: the 2024 figure")
end

-- The validation predictor picks the runtime from the framework a case
-- names, as a whole word ("minimum" is not NIM).
local predict = require "gpuplan.predict.infer"
local function case_with(fw, title)
  return { model = { layers = 32, hidden = 4096, heads = 32, kv_heads = 8, ffn_hidden = 14336,
                     ffn_gated = true, vocab = 128256 },
           hardware = { gpu = "h100-sxm", gpus = 1 }, parallel = {},
           workload = { weight_dtype = "bf16", batch = 1, input_len = 128, output_len = 128,
                        framework = fw },
           measured = { metric = "itl_ms" }, source = { title = title or "a decode benchmark" } }
end
local function rt(fw, title)
  local res = predict(case_with(fw, title), gp.catalog())
  for _, d in ipairs(res.defaults) do local m = d:match("^runtime=(%S+)") if m then return m end end
end
t.is(rt("litgpt"), "litgpt", "workload.framework litgpt -> litgpt")
t.is(rt("eager-pytorch"), "eager-pytorch", "eager-pytorch (HF transformers generate)")
t.is(rt("nim-http"), "nim-http", "nim-http (NIM over HTTP)")
t.is(rt("trtllm"), "trtllm", "trtllm")
t.is(rt(nil), "graphs", "no framework stated -> CUDA graphs")
t.is(rt(nil, "gpt-fast README, Benchmarks"), "graphs", "... a title naming gpt-fast alone changes nothing")
t.is(rt("gpt-fast"), "gpt-fast", "gpt-fast (and torchao's generate.py, gpt-fast's loop)")
-- The field names the tool that ran; the notes may name a kernel it borrowed
-- (SGLang's --attention-backend trtllm_mla) and change nothing.
local borrowed = case_with("sglang", "LMSYS blog, SGLang Team")
borrowed.notes = "decode server with --attention-backend trtllm_mla"
local function rt_of(c)
  for _, d in ipairs(predict(c, gp.catalog()).defaults) do
    local m = d:match("^runtime=(%S+)") if m then return m end
  end
end
t.is(rt_of(borrowed), "sglang", "sglang, whatever kernel the notes name")
borrowed.workload.framework = nil
t.is(rt_of(borrowed), "graphs", "no framework stated: the notes' TensorRT-LLM kernel does not make it trtllm")
-- The TensorRT-LLM profile (predict/infer.lua), for a max-load case that
-- states neither KV dtype nor batch limits: Llama 3.1 8B FP8 on H200,
-- 128 in / 2048 out.  An FP8 model is taken with an FP8 KV cache;
-- GUARANTEED_NO_EVICT reserves prompt + output; the KV pool is 0.90 of the
-- free memory; trtllm-bench's heuristic: KV per token 2 x 32 x 8 x 128 x
-- 1 B = 65536 B, engine 8030261248 B = 7.4787 GiB, (139.8 - 7.4787) x 0.95
-- = 125.705 GiB / (65536 x 2176 B = 0.1328125 GiB) = 946.5 requests ->
-- max_batch 128 x ceil(946.5 / 128) = 1024, max_num_tokens max(2048, 946.5 x
-- (1 + 128/2048) = 1005.6 rounded up to 256) = 2048.
local function trt_case(extra)
  local c = { model = { layers = 32, hidden = 4096, heads = 32, kv_heads = 8, ffn_hidden = 14336,
                        ffn_gated = true, vocab = 128256 },
              hardware = { gpu = "h200-sxm", gpus = 1 }, parallel = { tp = 1 },
              workload = { weight_dtype = "fp8", input_len = 128, output_len = 2048,
                           framework = "trtllm" },
              measured = { metric = "output_tokens_per_s" },
              source = { title = "TensorRT-LLM performance overview (trtllm-bench max-load)" } }
  for k, x in pairs(extra or {}) do c.workload[k] = x end
  return c
end
local function has(res, pat)
  for _, d in ipairs(res.defaults) do if d:find(pat, 1, true) then return true end end
  return false
end
local tr = predict(trt_case(), gp.catalog())
t.ok(has(tr, "kv=fp8 (an FP8 KV cache for FP8/NVFP4 models"), "TensorRT-LLM FP8: FP8 KV cache")
t.ok(has(tr, "kv_policy=max (GUARANTEED_NO_EVICT"), "... whole-request KV reservation")
t.ok(has(tr, "kv_free_fraction=0.90"), "... 0.90 of the free memory")
-- ... read from gpuplan.infer's one rule for runtime trtllm
-- (M.runtime_memory), not a second 0.90: with that rule at 0.5 the
-- profile says 0.50 (restored after).
do
  local rule = require("gpuplan.infer").runtime_memory.trtllm
  local keep = rule.kv_free_fraction
  rule.kv_free_fraction = 0.5
  local ok, r = pcall(predict, trt_case(), gp.catalog())
  rule.kv_free_fraction = keep
  t.ok(ok and has(r, "kv_free_fraction=0.50 (kv_cache_free_gpu_mem_fraction"),
       "... the profile's fraction is gpuplan.infer's trtllm rule")
end
t.ok(has(tr, "max_batch=1024, max_num_tokens=2048 (trtllm-bench tuning heuristic)"),
     "... trtllm-bench's own batch limits: 1024 and 2048")
t.ok(not has(tr, "margin="), "... and no capacity margin beside the free fraction")
-- Without chunked context trtllm-bench raises max_num_tokens to hold a
-- whole prompt beside a full batch, max(tuned, max_isl + max_batch_size)
-- (bench/benchmark/utils/general.py get_settings).  At 5000/500 on an
-- H200 (FP8) the tuned batch is 384, whose b x (1 + 5000 / 500) = 4224
-- tokens round up to 4608 (a multiple of 512 below 8192), under 5000 + 384
-- = 5384: the budget is 5000 + b, read against the batch the same line
-- states (exact integers).
local tr5 = predict(trt_case { input_len = 5000, output_len = 500 }, gp.catalog())
local b5, n5
for _, d in ipairs(tr5.defaults) do
  local b, n = d:match("^max_batch=(%d+), max_num_tokens=(%d+) %(trtllm%-bench")
  if b then b5, n5 = tonumber(b), tonumber(n) end
end
t.ok(b5 and n5 == 5000 + b5, "5000-token prompts: max_num_tokens = ISL + max_batch ("
     .. tostring(n5) .. " = 5000 + " .. tostring(b5) .. ")")
-- With chunked context stated (workload.chunked_prefill, trtllm-bench's
-- --enable_chunked_context) get_settings keeps its tuned budget: the same
-- 384 x 11 = 4224 rounded up to the next multiple of 512, 4608, below the
-- 5000-token prompt, which goes in chunks (exact integers).
local tc5 = predict(trt_case { input_len = 5000, output_len = 500, chunked_prefill = true },
                    gp.catalog())
local bc5, nc5
for _, d in ipairs(tc5.defaults) do
  local b, n = d:match("^max_batch=(%d+), max_num_tokens=(%d+) %(trtllm%-bench")
  if b then bc5, nc5 = tonumber(b), tonumber(n) end
end
t.ok(bc5 == b5 and nc5 == 4608, "... chunked: the tuned budget kept, 4608 (got "
     .. tostring(nc5) .. "), the batch the same " .. tostring(bc5))
t.ok(tc5.job.chunked_prefill == true, "... and chunked_prefill reaches gp.infer")
local trb = predict(trt_case { kv_dtype = "bf16" }, gp.catalog())
t.ok(not has(trb, "kv=fp8") and trb.value < tr.value, "a stated bf16 KV wins (and holds fewer sequences)")
local vc = trt_case()
vc.source.title, vc.workload.framework = "vLLM serving benchmark", "vllm"
t.ok(not has(predict(vc, gp.catalog()), "kv=fp8"), "the profile is TensorRT-LLM's alone")
-- NIM's FP8 profiles serve NVIDIA's ModelOpt checkpoints, whose
-- hf_quant_config.json carries an FP8 KV cache: the same case named as a
-- NIM run takes an FP8 cache (and only that: no trtllm-bench limits), a
-- stated bf16 cache still wins, and a bf16 NIM model keeps a bf16 one.
local nc = trt_case()
nc.source.title, nc.workload.framework = "NVIDIA NIM LLM benchmarking (AIPerf)", "nim-http"
local nr = predict(nc, gp.catalog())
t.ok(has(nr, "kv=fp8 (NIM's FP8 profiles"), "NIM FP8: FP8 KV cache")
t.ok(not has(nr, "trtllm-bench tuning heuristic"), "... without trtllm-bench's batch limits")
local nb = trt_case { kv_dtype = "bf16" }
nb.source.title, nb.workload.framework = nc.source.title, "nim-http"
t.ok(not has(predict(nb, gp.catalog()), "kv=fp8"), "... a stated bf16 KV wins")
local n16 = trt_case { weight_dtype = "bf16" }
n16.source.title, n16.workload.framework = nc.source.title, "nim-http"
t.ok(not has(predict(n16, gp.catalog()), "kv=fp8"), "... a bf16 NIM model keeps a bf16 KV")
-- vLLM's max_num_seqs where a case does not set it: the V0 engine (releases
-- before 0.8.0, by source.version or source.date) caps the running batch
-- at 256 on every GPU; the V1 defaults at 1024 on a GPU of >= 70 GiB that
-- is not an A100, else 256.  The same 128 in / 2048 out FP8 case on H200
-- holds far more than 256 sequences in its KV cache (bf16 KV: 2 x 32 x 8 x
-- 128 x 2 B x 2176 = 0.27 GB each in ~118 GB), so the cap is what binds
-- and the V0 run is the slower.  The V1 run is a release from 0.14.0,
-- whose engine schedules during the GPU's step: before it the host's work
-- between steps (async_scheduling = false, 20 ms a step at 1024
-- sequences) is priced too, which this comparison of the caps leaves out.
local function vllm_case(src, fw)
  local c = trt_case { framework = fw or "vllm" }
  c.source = src
  return c
end
local v0 = predict(vllm_case { title = "vLLM benchmark_throughput", date = "2024-10-10" }, gp.catalog())
t.ok(has(v0, "max_batch=256 (vLLM V0 engine"), "vLLM before 0.8.0 (by date): max_num_seqs 256")
t.ok(has(predict(vllm_case { title = "vLLM benchmark_throughput", version = "0.6.3" }, gp.catalog()),
         "max_batch=256 (vLLM V0"), "... and by version 0.6.3")
local v1 = predict(vllm_case { title = "vLLM benchmark_throughput", version = "0.14.0" }, gp.catalog())
t.ok(has(v1, "max_batch=1024 (vLLM V1 engine"), "vLLM V1 on a 141 GB H200: 1024")
t.ok(v0.value < v1.value, "... the V0 cap of 256 delivers fewer tokens/s than 1024")
-- vLLM V1 before 0.14.0 schedules between the GPU's steps unless
-- --async-scheduling is given (no case states it): a case stating such a
-- release is priced with async_scheduling = false; 0.14.0 on overlaps it;
-- a case stating chunked_prefill false ran V0 (V1 always chunks), left out.
local v010 = predict(vllm_case { title = "vLLM benchmark_throughput", version = "0.10.1" },
  gp.catalog())
t.ok(has(v010, "async_scheduling=false"), "vLLM 0.10.1: the engine's host work between steps")
t.ok(not has(v1, "async_scheduling=false"), "vLLM 0.14.0: async scheduling, none added")
local v0c = vllm_case { title = "vLLM benchmark_throughput", version = "0.9.0" }
v0c.workload.chunked_prefill = false
t.ok(not has(predict(v0c, gp.catalog()), "async_scheduling=false"),
  "vLLM 0.9.0 stating chunked_prefill false (V0): none added")
-- vLLM V0 (before 0.8.0) never overlaps that host work: a case stating a
-- V0 release is priced with async_scheduling = false too (V1's figures, a
-- floor), unless it states multi-step scheduling (workload.scheduler_steps
-- above 1, left unpriced).  One sequence (batch 1, 128 in, 2048 out on one
-- H200): each of its steps grows by 0.43 ms + 1 x (5.5 - 0.43) ms / 256 =
-- 0.4498 ms, so 1/tokens_per_s grows by that much a token: the steps that
-- emit the 2048 tokens carry it, the rest of either run is the same
-- (1e-6 ms: float rounding of two reciprocals of ~250 tokens/s).
local function v0_case(steps)
  local c = vllm_case { title = "vLLM benchmark_latency", version = "0.6.3" }
  c.workload.batch, c.workload.scheduler_steps = 1, steps
  return c
end
local v0s, v0m = predict(v0_case(), gp.catalog()), predict(v0_case(7), gp.catalog())
t.ok(has(v0s, "async_scheduling=false"), "vLLM 0.6.3 (V0): the engine's host work between steps")
t.ok(not has(v0m, "async_scheduling=false"), "... not with scheduler_steps 7 (multi-step)")
t.ok(has(v0m, "async_scheduling=true (workload.scheduler_steps 7: V0's multi-step"),
  "... which the defaults say, not as today's asynchronous scheduling")
-- Multi-step is V0's whatever release the case states: a 0.9.0 case run
-- with VLLM_USE_V1 0 (chunked_prefill false) and scheduler_steps 11 says so.
local v09 = vllm_case { title = "vLLM benchmark_throughput", version = "0.9.0" }
v09.workload.chunked_prefill, v09.workload.scheduler_steps = false, 11
t.ok(has(predict(v09, gp.catalog()), "async_scheduling=true (workload.scheduler_steps 11"),
  "vLLM 0.9.0 stating scheduler_steps 11: multi-step said")
local v0want = (0.43e-3 + (5.5e-3 - 0.43e-3) / 256) * 1e3
local v0got = (1 / v0s.value - 1 / v0m.value) * 1e3
t.ok(math.abs(v0got - v0want) < 1e-6,
  string.format("V0 at batch 1: %.4f ms a token more (got %.4f)", v0want, v0got))
-- Where the runtime runs the prompts in the decodes' forward pass the
-- case takes chunked_prefill (infer_run.c mixed_time): vLLM V1 ("In vLLM
-- V1, chunked prefill is always enabled by default") and TensorRT-LLM's
-- in-flight batching; not V0 at a short context, nor SGLang, which mixes
-- only under --enable-mixed-chunk.
t.ok(has(v1, "chunked_prefill (vLLM V1"), "vLLM V1: prompts in the decode steps")
t.ok(has(tr, "chunked_prefill (in-flight batching"), "TensorRT-LLM: in-flight batching")
t.ok(not has(v0, "chunked_prefill"), "vLLM V0 at an unstated context: prefill steps of their own")
t.ok(not has(predict(vllm_case({ title = "SGLang bench_offline_throughput" }, "sglang"), gp.catalog()),
             "chunked_prefill"), "SGLang: prefill batches of their own")
-- The same rule where a user names the runtime (gp.infer's M.mixes, one
-- table for the CLI, Lua and the profiles above): runtime trtllm or vllm
-- without chunked_prefill prices exactly the run chunked_prefill = true
-- prices (equal to rounding, 1e-12), says so on the defaults line, and
-- chunked_prefill = false takes it back; sglang and graphs keep prefill
-- steps of their own, as chunked_prefill = false does.  A 2048-token
-- prompt beside 64 decodes is where the two pricings differ (the mixed
-- step reads the weights once for both), so the last check can fail.
local function run(rt, ch)
  return infer.infer { model = "llama3-8b", gpu = "h100-sxm", runtime = rt, input = 2048,
                       output = 256, batch = 64, chunked_prefill = ch }
end
for _, rt in ipairs { "trtllm", "vllm" } do
  local d = run(rt)
  t.near(d.tokens_per_s, run(rt, true).tokens_per_s, 1e-12, rt .. ": chunked by default")
  t.ok(has({ defaults = d.defaults }, "chunked_prefill ("), rt .. ": ... and says so")
  t.ok(not has({ defaults = run(rt, false).defaults }, "chunked_prefill ("),
       rt .. ": chunked_prefill = false takes it back")
end
t.near(run("sglang").tokens_per_s, run("sglang", false).tokens_per_s, 1e-12,
       "sglang: prefill steps of their own")
t.ok(math.abs(run("sglang").tokens_per_s / run("sglang", true).tokens_per_s - 1) > 1e-6,
     "... which the mixed step would not match")
local a100 = vllm_case { title = "vLLM benchmark_throughput" }
a100.hardware.gpu = "a100-sxm-80gb"
t.ok(has(predict(a100, gp.catalog()), "max_batch=256 (vLLM V1 engine"),
     "V1 on an 80 GB A100: 256 ('a100' not in device_name)")
t.raises(function() infer.infer { model = "llama3-8b", gpu = "h100-sxm", runtime = "onnx" } end,
         "unknown runtime 'onnx'", "unknown runtime name refused")
-- vLLM V0 turned chunked prefill on for a model whose context exceeds 32K
-- (PR #6666, 2024-07-23) with a 512-token budget (SchedulerConfig), on
-- ROCm too until PR #11146 (2024-12-12).  The same case with max_seq
-- 131072 takes it in October 2024 on H200 and MI300X, not before the PR,
-- not on MI300X after #11146, not under V1, not with a 32K context or
-- none stated.
local function cp_case(src, gpu, ms)
  local c = vllm_case(src)
  c.model.max_seq = ms
  if gpu then c.hardware.gpu = gpu end
  return c
end
local CP = "chunked_prefill, max_num_tokens=512 (vLLM V0"
local oct = { title = "vLLM benchmark_throughput", date = "2024-10-10" }
t.ok(has(predict(cp_case(oct, nil, 131072), gp.catalog()), CP), "V0, 128K context: chunked prefill")
t.ok(has(predict(cp_case(oct, "mi300x", 131072), gp.catalog()), CP), "... on MI300X before #11146")
t.ok(has(predict(cp_case({ title = "vLLM", version = "0.6.3" }, "mi300x", 131072), gp.catalog()), CP),
     "... and by version 0.6.3")
t.ok(not has(predict(cp_case({ title = "vLLM", date = "2025-01-10" }, "mi300x", 131072), gp.catalog()), CP),
     "not on MI300X after #11146 (2024-12-12)")
t.ok(has(predict(cp_case({ title = "vLLM", date = "2025-01-10" }, nil, 131072), gp.catalog()), CP),
     "... still on an NVIDIA card then")
t.ok(not has(predict(cp_case({ title = "vLLM", date = "2024-06-01" }, nil, 131072), gp.catalog()), CP),
     "not before #6666")
t.ok(not has(predict(cp_case({ title = "vLLM", version = "0.10.1" }, nil, 131072), gp.catalog()), CP),
     "not under V1")
t.ok(not has(predict(cp_case(oct, nil, 32768), gp.catalog()), CP), "not at a 32K context")
t.ok(not has(predict(cp_case(oct, nil, nil), gp.catalog()), CP), "not without a stated context")
-- The rule's edges, each a case that flips when its bound moves: the
-- context test is "max_model_len > 32768", so 32769 takes it; the first
-- release after PR #6666 is 0.5.4 (0.5.3 does not); on ROCm the last
-- release before PR #11146 is 0.6.4 (0.6.5 does not).
t.ok(has(predict(cp_case(oct, nil, 32769), gp.catalog()), CP), "a 32769-token context takes it")
t.ok(has(predict(cp_case({ title = "vLLM", version = "0.5.4" }, nil, 131072), gp.catalog()), CP),
     "from 0.5.4, the first release after #6666")
t.ok(not has(predict(cp_case({ title = "vLLM", version = "0.5.3" }, nil, 131072), gp.catalog()), CP),
     "not in 0.5.3")
t.ok(has(predict(cp_case({ title = "vLLM", version = "0.6.4" }, "mi300x", 131072), gp.catalog()), CP),
     "on MI300X in 0.6.4")
t.ok(not has(predict(cp_case({ title = "vLLM", version = "0.6.5" }, "mi300x", 131072), gp.catalog()), CP),
     "not on MI300X from 0.6.5, the first release after #11146")
t.ok(has(predict(cp_case({ title = "vLLM", version = "0.6.5" }, nil, 131072), gp.catalog()), CP),
     "... still on an NVIDIA card in 0.6.5")
-- arg_utils.py's exclusions: "not use_sliding_window ... and not
-- self.enable_lora", and a multimodal model (a vision tower), as the
-- rule's comment in predict/infer.lua states them.
local swc = cp_case(oct, nil, 131072)
swc.model.sliding_window = { size = 4096 }
t.ok(not has(predict(swc, gp.catalog()), CP), "not for a sliding-window model")
local lrc = cp_case(oct, nil, 131072)
lrc.workload.lora = { rank = 8, targets = { "q", "v" } }
t.ok(not has(predict(lrc, gp.catalog()), CP), "not with LoRA")
local vic = cp_case(oct, nil, 131072)
vic.model.vision = { layers = 24, hidden = 1024, heads = 16, ffn_hidden = 4096,
                     image_size = 336, patch_size = 14 }
t.ok(not has(predict(vic, gp.catalog()), CP), "not for a multimodal model")
-- The budget is SchedulerConfig's 512 tokens a step, not the engine's
-- default: the predicted tokens/s is gp.infer's at the same case's
-- arguments (V0's max_num_seqs 256, the FP8 H200 case, here 1024 in /
-- 2048 out, V0's host work between steps: async_scheduling = false) with
-- max_num_tokens 512 and chunked_prefill, the same run, so
-- equal to rounding (1e-9).  The budget binds: the room beside 256
-- decodes is 512 - 256 = 256 tokens, so a 1024-token prompt takes
-- ceil(1024 / 256) = 4 steps; at a 1024 budget the room is 768 and it
-- takes 2, a different share of mixed steps and so a different rate.
local function cpc()
  local c = cp_case(oct, nil, 131072)
  c.workload.input_len = 1024
  return c
end
local cpr = predict(cpc(), gp.catalog())
local function cpi(tok)
  return infer.infer { model = cpc().model, gpu = "h200-sxm", weights = "fp8", runtime = "vllm",
                       input = 1024, output = 2048, max_batch = 256, max_num_tokens = tok,
                       chunked_prefill = true, async_scheduling = false }.tokens_per_s
end
t.near(cpr.value, cpi(512), 1e-9, "the V0 budget is 512 tokens a step")
t.ok(math.abs(cpi(1024) / cpr.value - 1) > 1e-6, "... which a 1024 budget would not match")
-- An MLA model (DeepSeek-V2 Lite's attention, from its config.json:
-- q_lora_rank 0, kv_lora_rank 512, qk_nope 128, qk_rope 64, v 128):
-- vllm PR #12642 (2025-02-01, in 0.7.1) forces chunked prefill off when
-- MLA is enabled, and V0 kept it off ("Chunked prefill not supported for
-- Multimodal or MLA in V0").  Before 0.7.1 vLLM had no MLA path, and the
-- long-context rule applied.
local function mla_case(src)
  local c = cp_case(src, nil, 163840)
  c.model.mla = { q_lora_rank = 0, kv_lora_rank = 512, qk_nope_head_dim = 128,
                  qk_rope_head_dim = 64, v_head_dim = 128 }
  return c
end
t.ok(has(predict(mla_case { title = "vLLM", version = "0.7.0" }, gp.catalog()), CP),
     "MLA model in 0.7.0 (no MLA path yet): chunked prefill")
t.ok(not has(predict(mla_case { title = "vLLM", version = "0.7.1" }, gp.catalog()), CP),
     "MLA model from 0.7.1: not (PR #12642)")
t.ok(has(predict(mla_case { title = "vLLM", date = "2025-01-31" }, gp.catalog()), CP),
     "... by date: on 2025-01-31")
t.ok(not has(predict(mla_case { title = "vLLM", date = "2025-02-01" }, gp.catalog()), CP),
     "... not from 2025-02-01")
-- The mixed steps (infer_run.c mixed_steps, mixed_step).  Llama 3.1 8B
-- bf16 on one H100, 448 requests of 128 in / 385 out, a 512-token budget:
-- the room beside 448 decodes is 64 tokens, and the prompts need 448 x
-- 128 / 384 = 149.3 a step, more than the room, so the run is
-- budget-bound.  In its steady state a step admits X prompts and X
-- requests finish, X x 384 sequences decode in it (Little's law) and X
-- (128 + 384) = 512 fills it: X = 1, D = 384 decodes and one whole
-- 128-token prompt a step, off the graph, the other 64 requests waiting
-- for their prompts.  tokens/s = D x 385 / (384 x t) = 385 / t, where t is
-- one step of both: what every token pays in an eager step of 512 tokens
-- at the mean context 128 + 385 / 2 = 320.5 (its rows but attention,
-- logits and sample), the attention of the 384 decodes at 320.5, the
-- prompt's own attention (the prefill of one 128-token prompt) and the
-- logits and sampling of the 384 + 1 sequences that emit a token -- each a
-- row of a kernels runtime's step (batch 512, 384, 385; the prefill).
-- Same rows, so to rounding (1e-9).
local function krows(b)
  local r = infer.infer { model = "llama3.1-8b", gpu = "h100-sxm", batch = b, input = 128,
                          output = 385, runtime = "kernels" }
  local s = {}
  for _, o in ipairs(r.ops) do s[o.name] = (s[o.name] or 0) + o.total end
  local p = {}
  for _, o in ipairs(r.prefill_ops) do p[o.name] = (p[o.name] or 0) + o.total end
  return r, s, p
end
local k512, s512 = krows(512)
local _, s384, p384 = krows(384)
local _, s385 = krows(385)
local tmix = k512.itl_s - s512.attention - s512.logits - s512.sample + s384.attention +
  p384.attention + s385.logits + s385.sample
local ck = infer.infer { model = "llama3.1-8b", gpu = "h100-sxm", batch = 448, input = 128,
                         output = 385, max_num_tokens = 512, chunked_prefill = true }
t.near(ck.tokens_per_s, 385 / tmix, 1e-9, "chunked prefill, budget-bound: 385 / t(one mixed step)")
-- The old pricing of such a step, the eager step of 512 decodes, charged
-- the prompt's tokens a decode's attention and lm_head: it is slower.
t.ok(385 / k512.itl_s < ck.tokens_per_s, "... faster than 512 decodes' step")
t.ok(ck.eager_steps == 1, "... every step carries a prompt")
-- Below the room the prompts ride in B / n x ceil(input / room) of the
-- steps, n = output - 1 + ceil(input / room) the steps a sequence's slot
-- turns over in (its prompt's chunks, then its decodes): 64 requests of
-- 128 in / 2048 out, room 512 - 64 = 448, one chunk, n = 2047 + 1 =
-- 2048, 64 / 2048 x 1 = 0.03125 of the steps carry a 128-token prompt.
local cl = infer.infer { model = "llama3.1-8b", gpu = "h100-sxm", batch = 64, input = 128,
                         output = 2048, max_num_tokens = 512, chunked_prefill = true }
t.near(cl.eager_steps, 64 / 2048, 1e-12, "a prompt in 64 / 2048 of the steps")
-- What those steps add over the graph (eager_s: infer_run.c mixed_steps,
-- r->eager): the share of steps with a prompt x (the step of decodes and
-- prompt tokens launched from the stream - the same step replayed as a
-- graph), each a step of dec + k rows at the run's mean context.  The
-- budget-bound run: every step, 384 + 128 = 512 rows at 128 + 128 / 2 =
-- 192; the light one: 64 / 2048 of the steps, each 64 x 128 / 2048 /
-- (64 / 2048) = 128 prompt tokens beside the 64 - 64 / 2048 / (64 /
-- 2048) = 63 slots not in their prompt: 191 rows at 128 + 2048 / 2 =
-- 1152.  Each side is a kernels and a graphs step of gp.infer at that
-- batch and lengths, the same rows, so to rounding (1e-9).
local function rt_gap(b, out)
  local function itl(rt)
    return infer.infer { model = "llama3.1-8b", gpu = "h100-sxm", batch = b, input = 128,
                         output = out, runtime = rt }.itl_s
  end
  return itl("kernels") - itl(nil)
end
t.near(ck.eager_s, rt_gap(512, 128), 1e-9, "budget-bound: every step off the graph")
t.near(cl.eager_s, 64 / 2048 * rt_gap(191, 2048), 1e-9, "light: 64 / 2048 of the steps off it")
-- A budget equal to the batch is one vLLM takes (SchedulerConfig refuses
-- only "max_num_batched_tokens ... must be greater than or equal to
-- max_num_seqs", vllm/config/scheduler.py): 512 decodes fill a step, so a
-- prompt enters only where fewer decode -- the budget-bound state of ck
-- above, whose throughput does not depend on the batch (D = 512 x 384 /
-- (128 + 384) = 384 decodes a step beside 128 prompt tokens): 385 / tmix
-- again, to rounding (1e-9).  It was refused.
local eq = infer.infer { model = "llama3.1-8b", gpu = "h100-sxm", batch = 512, input = 128,
                         output = 385, max_num_tokens = 512, chunked_prefill = true }
t.near(eq.tokens_per_s, 385 / tmix, 1e-9, "batch = max_num_tokens: budget-bound, priced")
-- One above the budget vLLM refuses ("must be greater than or equal to
-- max_num_seqs"): so is it here.
t.raises(function() infer.infer { model = "llama3.1-8b", gpu = "h100-sxm", batch = 513,
  input = 128, output = 128, max_num_tokens = 512, chunked_prefill = true } end,
  "chunked prefill needs max_num_tokens (512) at least the decode batch (513)",
  "a budget below the batch is refused", true)
-- The MoE serving model chunks its colocated prompts by prefill_tokens
-- itself (engine/serve_plan.c chunk_steps): chunked_prefill would change
-- nothing there, so it is refused, naming what to give instead.
t.raises(function() infer.infer { model = "deepseek-v3", gpu = "h20", gpus = 16, ep = 16,
  weights = "fp8", chunked_prefill = true } end,
  "infer: chunked_prefill is priced for one model on its replicas; the MoE serving model "
    .. "always chunks its prompts itself, prefill_tokens a step (default: the runtime's step budget, else 16384): give "
    .. "prefill_tokens instead",
  "the MoE serving model refuses chunked_prefill", true)
-- Nor does it read max_num_tokens (engine/serve*.c never does; its
-- prompt chunks are prefill_tokens a step): refused too, by gp.infer and
-- by gp.infer_plan, which searches the same model for a MoE model.
local MNT = "infer: max_num_tokens is the step budget of one model on its replicas; the MoE "
  .. "serving model does not read it: its prompts go prefill_tokens a step (default: the "
  .. "runtime's step budget, else 16384): give prefill_tokens instead"
t.raises(function() infer.infer { model = "deepseek-v3", gpu = "h20", gpus = 16, ep = 16,
  weights = "fp8", max_num_tokens = 4096 } end, MNT,
  "the MoE serving model refuses max_num_tokens", true)
t.raises(function() require("gpuplan").infer_plan { model = "deepseek-v3", gpu = "h800-sxm",
  target = 1e5, itl_max = "50ms", weights = "fp8", max_num_tokens = 4096 } end,
  (MNT:gsub("^infer: ", "infer_plan: ")),
  "gp.infer_plan on a MoE model refuses it the same (naming infer_plan)", true)
-- Without it the same deployment prices (the refusal is the key's).
t.ok(infer.infer { model = "deepseek-v3", gpu = "h20", gpus = 16, ep = 16,
  weights = "fp8" }.tokens_per_s > 0, "the same deployment without max_num_tokens prices")

-- Serving: result table fields and cost per token at $2/h per GPU:
-- cost = 2 x gpus / 3600 / tokens_per_s x 1e6.
local s = infer.infer { model = "llama3-70b", gpu = "h100-sxm", gpus = 2, tp = 2,
                        weights = "fp8", concurrency = 32, price = 2 }
t.ok(s.fits and s.batch == 32, "concurrency 32 -> batch 32")
t.near(s.cost_per_mtok, 2 * 2 / 3600 / s.tokens_per_s * 1e6, 1e-12, "cost per million tokens")
t.is(s.compute, "fp8", "fp8 weights run on fp8 tensor cores on Hopper")
t.ok(s.decode.comm_time > 0, "TP 2 pays all-reduces")
-- fp8 on A100 falls back to bf16 compute (W8A16)
t.is(infer.infer { model = "llama3-8b", gpu = "a100-sxm-80gb", weights = "fp8", batch = 1 }.compute,
     "bf16", "fp8 weights on A100 compute in bf16")

-- Offload: 7B bf16 on a 6 GB card fits only with host layers.
local o = infer.infer { model = "llama2-7b", gpu = "rtx-4090", memory = 6e9, batch = 1, input = 512, output = 128 }
t.ok(not o.fits and o.why:match("needs"), "7B bf16 on 6 GB does not fit without offload")
o = infer.infer { model = "llama2-7b", gpu = "rtx-4090", memory = "6GB", offload = true, batch = 1, input = 512, output = 128 }
t.ok(o.fits and o.offload_layers > 0, "... and fits with offload")

-- Where the host-resident layers are copied from.  Llama 2 13B bf16 on a
-- 24 GB RTX 4090 (PCIe 4.0 x16: 16 x 0.985 x 2 x 0.8 = 25.216 GB/s
-- pinned).  Eager PyTorch (HF accelerate) copies from pageable memory:
-- the driver stages each chunk through host DRAM (a read and a write at
-- host_bw, 40 GB/s here) between DMAs, 1/rate = 1/25.216 + 2/40 per
-- GB/s; against the same step copying at the pinned 25.216 GB/s the step
-- is longer by B x 2/40e9, B the offloaded bytes (the GPU's part is the
-- same arithmetic: to 1 ns).
local function o13(x)
  local a = { model = "llama2-13b", gpu = "rtx-4090", offload = true, runtime = "eager-pytorch",
              host_memory = 64e9, batch = 1, input = 512, output = 128 }
  for k, val in pairs(x) do a[k] = val end
  return infer.infer(a)
end
local pg, pin = o13 { host_bw = 40e9 }, o13 { pcie_bw = 25.216e9 }
t.ok(pg.fits and pg.offload_layers > 0 and pg.offload_layers == pin.offload_layers,
     "13B on a 4090: the same layers offloaded either way")
t.near(pg.itl_s - pin.itl_s, pg.offload_bytes * 2 / 40e9, 1e-9,
       "pageable copies: the staging copy's two host-DRAM passes added per byte")
t.like(table.concat(pg.defaults, "; "), "pcie_bw=11%.2GB/s %(pageable copies: PCIe 25%.2, "
       .. "staged at host_bw 40%)", "and the rate said: 1/(1/25.216 + 2/40) = 11.15 GB/s, shown 11.2")

-- A stated count (offload_layers, llama.cpp's layers less -ngl) puts
-- exactly that many layers on the host, and with pp 2 each stage keeps
-- that many: one more per stage adds two layers' copies to the step, 2 x
-- (its bytes) / 25.216 GB/s (vLLM copies from pinned memory; the HBM
-- read of a copied layer stays in the GPU time).
local function opp(n)
  return infer.infer { model = "llama2-13b", gpu = "rtx-4090", gpus = 2, pp = 2, offload = true,
    runtime = "vllm", offload_layers = n, host_memory = 64e9, batch = 1, input = 512, output = 128 }
end
local p3, p4 = opp(3), opp(4)
t.ok(p3.fits and p3.offload_layers == 3 and p4.offload_layers == 4, "offload_layers: the stated count")
t.near(p4.itl_s - p3.itl_s, 2 * (p4.offload_bytes - p3.offload_bytes) / 25.216e9, 1e-9,
       "pp 2: every stage's host layers cross the link in one step")
t.raises(function() opp(21) end, "infer: offload_layers 21 exceeds the 20 layers of a GPU's stage",
         "a count above the stage's layers refused", true)
t.raises(function() infer.infer { model = "llama2-13b", gpu = "rtx-4090", offload_layers = 2 } end,
         "infer: offload_layers places layers in host memory; give offload = true too",
         "offload_layers without offload refused", true)

-- Sweep: tokens/s grows with the batch until the KV limit, ITL too.
local rows = infer.sweep { model = "llama3-8b", gpu = "h100-sxm", weights = "fp8", input = 1024, output = 256 }
t.ok(#rows >= 5 and rows[2].tokens_per_s > rows[1].tokens_per_s and rows[#rows].itl_s > rows[1].itl_s,
     "throughput and ITL grow with the batch")

-- --weights follows gpuplan.memory.weight_format, as fit: plain NF4 is
-- 4 + 32/64 = 4.5 bits, nf4-dq 4.127.  llama2-7b: 6,476,005,376 linear
-- weights x 4.5/8 = 3,642,753,024 B + 16-bit embedding and lm_head
-- 524,288,000 B + 16-bit norms (quantisers convert the linears only;
-- memory.c, the one inference-memory model) 266,240 x 2 = 532,480 B =
-- 4,167,573,504 B.  Sums of exact binary fractions: 1e-12 relative.
local nf4 = infer.infer { model = "llama2-7b", gpu = "h100-sxm", weights = "nf4", batch = 1 }
t.near(nf4.weights_total, 4167573504, 1e-12, "infer nf4 = 4.5 bits per weight, as fit")
-- Bits per weight (GGUF-style) are a weight-only format: 16-bit compute.
local gguf = infer.infer { model = "llama2-7b", gpu = "h100-sxm", weights = 4.85, batch = 1 }
t.is(gguf.compute, "bf16", "4.85 bits per weight compute in bf16")
t.raises(function() infer.infer { model = "llama3-8b", gpu = "h100-sxm", weights = "fp32" } end,
         "fp32 matmuls are not modelled", "fp32 weights: a clear error", true)

-- Errors
t.raises(function() infer.infer { model = "llama3-8b", gpu = "h100-sxm", weights = "int3" } end,
         "unknown weight format 'int3'", "unknown weight format", true)
t.raises(function() infer.infer { model = "llama3-8b", gpu = "h100-sxm", tp = 3, gpus = 3 } end,
         "tp 3 does not divide the 32 attention heads", "tp must divide heads", true)
t.raises(function() infer.infer { model = "llama3-8b", gpu = "h100-sxm", batch = 2, concurrency = 4 } end,
         "batch = N or concurrency = N", "batch and concurrency together", true)
t.raises(function() infer.infer { model = "llama3-8b", gpu = "nope" } end, "unknown gpu", "unknown gpu", true)
-- The binding names the field it could not read.
local core = require "gpuplan.core"
local dev = roofline.device("h100-sxm")
t.raises(function() core.roof_op(dev, { flop = 1, bytes = 1, prec = "bf17" }) end,
         "op.prec: unknown precision 'bf17'", "binding: unknown op precision", true)
t.raises(function() core.roof_op(dev, { flop = 1, bytes = 1, prec = {} }) end,
         "op.prec must be a string (got table)", "binding: op precision of the wrong type", true)
t.raises(function() core.roof_ridge({ mem_bw = 1e12, hbm = 1 }, "bf16") end,
         "device.peak is required", "binding: device without peaks", true)
t.raises(function() core.roof_ridge({ peak = { fp8 = "x" }, mem_bw = 1e12, hbm = 1 }, "bf16") end,
         "device.peak.fp8 must be a number (got string)", "binding: a peak of the wrong type", true)
local sm, sd, sc = infer.setup { model = "llama3-8b", gpu = "h100-sxm" }
sc.runtime = "fast"
t.raises(function() core.infer(sm, sd, sc) end,
         "infer.runtime must be one of graphs, kernels, eager", "binding: unknown runtime", true)
sc.runtime, sc.compute = nil, "bf17"
t.raises(function() core.infer(sm, sd, sc) end,
         "infer.compute: unknown precision 'bf17'", "binding: unknown compute precision", true)

-- SVG writer: whole-or-nothing, labels, escaping
local dir = os.tmpname(); os.remove(dir)
local p = svg.plot { title = "a<b", xlog = true, ylog = true, xlabel = "x", ylabel = "y" }
p:line({ { 1, 1 }, { 100, 100 } }, { label = "slope" })
p:points({ { 10, 10, "p1" }, { 10.01, 10.01, "p2" } }, { label = "pts" })
local text = p:render()
t.ok(text:match("^<svg") and text:match("a&lt;b"), "SVG document with an escaped title")
t.ok(text:find("p1, p2", 1, true), "coincident points share one label")
t.raises(function() p:write(dir .. "/no/such/dir.svg") end, "cannot write", "unwritable path raises", true)
-- A log2 axis: a tick at each power of two, labelled only where xfmt says;
-- legend = "right" puts the legend right of the plot frame.
p = svg.plot { xlog = 2, xfmt = function(v) return v == 4 and "four" or nil end,
               legend = "right", width = 600 }
p:line({ { 1, 1 }, { 16, 2 } }, { label = "l" })
text = p:render()
local _, ticks = text:gsub('<line x1="[%d.]+" y1="%d+" x2="[%d.]+" y2="%d+" stroke="#333"/>', "")
t.is(ticks, 5, "log2 axis from 1 to 16: an x tick at 1, 2, 4, 8 and 16")
t.ok(text:find(">four<", 1, true) and not text:find(">8<", 1, true),
     "xfmt labels the ticks it names and leaves the others bare")
local frame_w = tonumber(text:match('<rect x="80" y="50" width="(%d+)" height="%d+" fill="none"'))
local legend_x = tonumber(text:match('<text x="(%d+)" y="%d+">l</text>'))
t.ok(frame_w and legend_x and legend_x > 80 + frame_w, "right legend sits outside the plot frame")

-- A misspelled argument is an error naming it, not a silent default.
t.raises(function() gp.infer { model = "llama3-8b", gpu = "h100-sxm", tp_size = 2 } end,
  "infer: unknown option 'tp_size'", "infer: misspelled argument named", true)
t.raises(function() require("gpuplan.infer").sweep { model = "llama3-8b", gpu = "h100-sxm", inputs = 9 } end,
  "infer: unknown option 'inputs'", "sweep: misspelled argument named", true)
t.raises(function() require("gpuplan.infer").sweep("llama3-8b") end,
  "infer: expected a table of arguments", "sweep: non-table argument", true)
t.raises(function() gp.roofline { gpu = "h100-sxm", gpu_id = 1 } end,
  "roofline: unknown option 'gpu_id'", "roofline: misspelled argument named", true)
t.raises(function() gp.roofline { gpu = "h100-sxm", op = "gemm" } end,
  "roofline: op must be a table", "roofline: op type named", true)

-- Switches are booleans: offload = "no" read as true, flash = "no" as true.
t.raises(function() gp.infer { model = "llama3-8b", gpu = "h100-sxm", offload = "no" } end,
  "infer: offload must be a boolean (got string)", "offload type checked", true)
t.raises(function() gp.infer { model = "llama3-8b", gpu = "h100-sxm", flash = "no" } end,
  "infer: flash must be true or false (got string 'no')", "flash type checked", true)
-- A zero host bandwidth or host memory turned offloading off in silence
-- (the engine offloads only over a positive bandwidth).
t.raises(function() gp.infer { model = "llama3-8b", gpu = "h100-sxm", offload = true, host_bw = 1e11 } end,
  "infer: host_bw is the CPU's memory bandwidth, which llama.cpp", "host_bw without a CPU to use it", true)
t.raises(function() gp.infer { model = "llama3-8b", gpu = "h100-sxm", offload = true, pcie_bw = 0 } end,
  "pcie_bw", "pcie_bw 0 refused", true)
t.raises(function() gp.infer { model = "llama3-8b", gpu = "h100-sxm", offload = true, host_bw = 0,
                               runtime = "llama.cpp" } end,
  "infer: host_bw must be a positive number (got 0)", "host_bw 0 refused", true)
t.raises(function() gp.infer { model = "llama3-8b", gpu = "h100-sxm", offload = true, host_memory = 0 } end,
  "infer: host_memory must be a positive number (got 0)", "host_memory 0 refused", true)
t.raises(function() gp.infer { model = "llama3-8b", gpu = "h100-sxm", price = {} } end,
  "infer: price.amount must be a non-negative number", "price table checked", true)
t.raises(function() gp.infer { model = "llama3-8b", gpu = "h100-sxm", tp = 0 / 0 } end,
  "infer: tp must be a whole number 1..16777216 (got NaN)", "NaN tp named, one spelling", true)

-- One inference-memory model: gp.memory and gp.infer count the same
-- sequences for the same job (they once said 656 and 696).  Llama 3.1 8B,
-- fp8 weights, bf16 KV, 2048 in / 256 out on one H200 (139.8 GiB usable):
-- budget 0.9 x 150109106995.2 = 135098196295.7 B, less the CUDA context
-- 0.5 GiB and library workspaces 64 MiB = 134494216519.7; weights
-- 6979321856 linears x 1 B + 266240 norms x 2 + embedding and lm_head
-- 2 x 128256 x 4096 x 2 = 9081200640 (whole: no fragmentation); workspace
-- of the 8192-token budget 8192 x 2 x 61440 = 1006632960, x 1.05.  Room
-- 124356051271.7 B / (KV 2304 x 131072 + 1.05 x 128256 x 4 logits) =
-- 411.06 -> 411 sequences.  With the mean (paged) occupancy of 2048 + 128
-- tokens: / (2176 x 131072 + 538675.2) = 435.2 -> 435.  Whole numbers.
local job = { model = "llama3.1-8b", gpu = "h200-sxm", weights = "fp8" }
local function with(extra)
  local a = {}
  for k, v in pairs(job) do a[k] = v end
  for k, v in pairs(extra) do a[k] = v end
  return a
end
local im = gp.infer(with { input = 2048, output = 256, kv_policy = "max" })
local mm = gp.memory(with { method = "infer", ctx = 2304, concurrency = 64 })
t.is(im.max_batch_kv, 411, "gp.infer: 411 sequences of 2304 tokens")
t.is(mm.max_seqs, 411, "gp.memory: the same 411")
t.near(im.kv_budget, mm.kv_room, 1e-12, "... in the same KV room")
im = gp.infer(with { input = 2048, output = 256 })
mm = gp.memory(with { method = "infer", ctx = 2048 + 128, concurrency = 64 })
t.is(im.max_batch_kv, 435, "gp.infer paged mean: 435 sequences")
t.is(mm.max_seqs, 435, "gp.memory at the mean length: the same 435")
-- The margin is one option of both, with one meaning.
im = gp.infer(with { input = 2048, output = 256, kv_policy = "max", margin = 0.2 })
mm = gp.memory(with { method = "infer", ctx = 2304, concurrency = 64, margin = 0.2 })
t.ok(im.max_batch_kv == mm.max_seqs and im.max_batch_kv < 411,
     "a 20% margin: fewer sequences, the same in both")
-- TensorRT-LLM's rule, the KV pool as 0.9 of what is free after loading:
-- (150109106995.2 - 603979776 - 9081200640 - 1056964608) x 0.9 =
-- 125430265774.1 B / 302528563.2 = 414.6 -> 414, in both.
im = gp.infer(with { input = 2048, output = 256, kv_policy = "max", kv_free_fraction = 0.9 })
mm = gp.memory(with { method = "infer", ctx = 2304, concurrency = 64, kv_free_fraction = 0.9 })
t.is(im.max_batch_kv, 414, "kv_free_fraction 0.9: 414 sequences")
t.is(mm.max_seqs, 414, "... the same in gp.memory")
t.raises(function() gp.infer(with { margin = 1 }) end,
  "infer: margin must be a number in [0, 1) (got 1)", "margin 1 refused by its range", true)
t.raises(function() gp.infer(with { kv_free_fraction = 1.5 }) end,
  "infer: kv_free_fraction must be a number in (0, 1] (got 1.5)", "kv_free_fraction checked", true)
-- The declared range's open end (no KV room at all): the same words.
t.raises(function() gp.infer(with { kv_free_fraction = 0 }) end,
  "infer: kv_free_fraction must be a number in (0, 1] (got 0)", "kv_free_fraction 0 refused by its range", true)

-- gp.roofline with a model: its prefill and decode operators on the
-- roofline.  Llama 3 8B qkv GEMM in bf16 (K = hidden 4096, N = q 4096 +
-- k, v 2 x 1024 = 6144): prefill of M = 2048 tokens moves 2 B x (K N + M K
-- + M N) = 92,274,688 B for 2 M N K = 1.0308e11 FLOP, 1117.1 FLOP/B, above
-- the 281 ridge: compute-bound; decode at batch 1 (M = 1) moves the
-- weights for 2 N K FLOP: K N / (K N + K + N) = 0.9992 FLOP/B, memory-bound.
do
  local m = gp.roofline { gpu = "h100-sxm", model = "llama3-8b" }
  local function op(ph, name)
    for _, o in ipairs(m.ops) do if o.phase == ph and o.name == name then return o end end
  end
  t.ok(m.infer.fits and #m.ops == #m.infer.prefill.ops + #m.infer.decode.ops,
       "model: every prefill and decode operator")
  -- exact byte/FLOP counts: only rounding in the division
  t.near(op("prefill", "qkv").intensity, 2 * 2048 * 6144 * 4096
         / (2 * (4096 * 6144 + 2048 * 4096 + 2048 * 6144)), 1e-9, "prefill qkv 1117.1 FLOP/B")
  t.is(op("prefill", "qkv").bound, "compute", "prefill qkv: compute-bound")
  t.near(op("decode", "qkv").intensity, 4096 * 6144 / (4096 * 6144 + 4096 + 6144), 1e-9,
         "decode qkv at batch 1: 0.9992 FLOP/B")
  t.is(op("decode", "qkv").bound, "memory", "decode qkv: memory-bound")
  local q = op("prefill", "qkv")
  t.near(q.tflops, q.flop / (q.time_s - m.infer.prefill.ops[2].t_launch) / 1e12, 1e-12,
         "attained TFLOP/s = FLOP / (time less the launch)")
  local big = gp.roofline { gpu = "h100-sxm", model = "llama3-70b" }
  t.ok(not big.infer.fits and #big.ops == 0, "70B on one H100: no operators, and why: "
       .. tostring(big.infer.why))
  t.raises(function() gp.roofline { gpu = "h100-sxm", infer = { batch = 2 } } end,
    "roofline: infer must be a table of gp.infer arguments, with model", "infer needs model", true)
end

-- The inference config as the binding reads it (core.infer, after
-- gp.infer's own checks): its fields through their descriptions, in two
-- steps (gpus and the reserve default from tp * pp); a bad value named
-- by its path, an unknown key refused with the nearest.
do
  local core = require "gpuplan.core"
  local function infer_with(x, drop)
    local m, d, c = infer.setup { model = "llama3-8b", gpu = "h100-sxm", tp = 2 }
    for k, v in pairs(x) do c[k] = v end
    if drop then c[drop] = nil end
    return function() return core.infer(m, d, c) end
  end
  t.ok(pcall(infer_with {}), "a config from infer.setup reads back")
  t.raises(infer_with { tp = 0 }, "infer.tp must be an integer in 1..", "binding: tp", true)
  t.raises(infer_with { gpus = 0 }, "infer.gpus must be an integer in 1..", "binding: gpus", true)
  t.raises(infer_with { margin = "a" }, "infer.margin must be a number (got string)",
           "binding: margin", true)
  t.raises(infer_with { tpp = 1 }, "infer: unknown field 'tpp' (did you mean 'tp'?)",
           "binding: tpp", true)
  -- gpus left out: tp * pp = 4 GPUs, one replica (a default of 1 GPU
  -- would be refused as not a multiple of tp * pp).
  local ok, r = pcall(infer_with({ tp = 4 }, "gpus"))
  t.ok(ok, "binding: gpus defaults when absent")
  if ok then t.is(r.replicas, 1, "binding: gpus = tp * pp, one replica") end
end

-- The lm_head stays 16-bit in quantised checkpoints (ModelOpt's default
-- configs: "*lm_head*": {"enable": False}; embed_bits 16), so its GEMM
-- multiplies at the 16-bit rate whatever the layers compute in.  Llama
-- 3.1 8B on one H100 at batch 512: the logits GEMM is 2 x 512 x 128256 x
-- 4096 = 537.9 GFLOP over 128256 x 4096 x 2 B of weights.  Its compute
-- time is that over the bf16 rate, 989e12 x 0.80 x 0.82 (the hopper
-- fractions above) x the op's own shape term: 859.6 us, where the fp8
-- rate (1979e12) gave 484.0.  The same op of a bf16 run (same flop, bytes
-- and shape) takes the same time.  Exact arithmetic: 1e-12.
do
  local function logits(w)
    local r = infer.infer { model = "llama3.1-8b", gpu = "h100-sxm", weights = w,
                            batch = 512, input = 128, output = 128 }
    return t.op(r, "logits")
  end
  local q, b = logits("fp8"), logits("bf16")
  t.near(q.flop, 2 * 512 * 128256 * 4096, 1e-12, "logits GEMM: 2 x 512 x 128256 x 4096 FLOP")
  t.near(q.t_compute, q.flop / (989e12 * 0.80 * 0.82 * q.shape_eff), 1e-12,
         "fp8 weights: the 16-bit lm_head's logits GEMM computes at the bf16 rate")
  t.near(q.time, b.time, 1e-12, "... the same op as a bf16 run's")
end

-- runtime = "vllm" prices and says vLLM's own step budget, its API
-- server's (infer.vllm_limits: 2048 below 70 GiB or on an A100, else
-- 8192), not TensorRT-LLM's 8192; the budget the engine priced shows in the
-- chunked steps: on an A100 a 2048-token prompt beside 64 decodes takes
-- ceil(2048 / (2048 - 64)) = 2 chunks, a slot turns over in 255 decode
-- steps + 2 = 257, so 64 / 257 x 2 = 128 / 257 of the steps carry one
-- (1e-12: the engine's arithmetic).
do
  local function said(r, pat)
    for _, d in ipairs(r.defaults) do if d:find(pat, 1, true) then return true end end
    return false
  end
  local a = gp.infer { model = "llama3-8b", gpu = "a100-sxm-80gb", runtime = "vllm", batch = 64 }
  t.near(a.eager_steps, 128 / 257, 1e-12, "vllm on an A100: vLLM's 2048 a step, 2 chunks a prompt")
  t.ok(said(a, "max_num_tokens=2048 (vLLM's API server's on a100-sxm-80gb;"),
    "vllm on an A100: vLLM's budget said")
  local h = gp.infer { model = "llama3-8b", gpu = "h100-sxm", runtime = "vllm", batch = 64 }
  t.ok(said(h, "max_num_tokens=8192 (vLLM's API server's on h100-sxm;") and
    not said(h, "TensorRT-LLM's; the chunked"), "vllm on an H100: vLLM's 8192, not TensorRT-LLM's")
  local tr = gp.infer { model = "llama3-8b", gpu = "h100-sxm", runtime = "trtllm", batch = 64 }
  t.ok(said(tr, "max_num_tokens=8192 (TensorRT-LLM's;"), "trtllm: TensorRT-LLM's 8192")
end

-- --output 1: the one token is the prefill's, no decode step runs, so the
-- decode step's figures are absent (were 31.9 ms and 31.4 tok/s of a step
-- that never runs); the prefill's stay, and output 2 has them again.
do
  local one = infer.infer { model = "llama3-8b", gpu = "h100-sxm", output = 1 }
  t.ok(one.fits and one.ttft_s > 0 and one.tokens_per_s > 0, "output 1: TTFT and tokens/s")
  t.is(tostring(one.itl_s) .. tostring(one.itl_batch1_s) .. tostring(one.stream_tokens_per_s),
    "nilnilnil", "output 1: no ITL, no per-user decode rate")
  local two = infer.infer { model = "llama3-8b", gpu = "h100-sxm", output = 2 }
  t.ok(two.itl_s > 0 and two.stream_tokens_per_s > 0, "output 2: the decode step's figures")
  -- The target search likewise: with no decode step an ITL limit binds
  -- nothing (1 ms was refused, "no batch meets ITL 1 ms (one sequence
  -- alone takes 7.21 ms)", by the step that never runs).  The search then
  -- takes the largest batch the KV holds, as with no limit at all (an
  -- hour, the largest the search takes): the same GPUs, batch and tokens/s.
  local a = { model = "llama3-8b", gpu = "h100-sxm", output = 1 }
  local tight, free = infer.gpus_for(a, 1000, 1e-3), infer.gpus_for(a, 1000, 3600)
  t.ok(tight.gpus == free.gpus and tight.batch == free.batch
    and tight.tokens_per_s == free.tokens_per_s and tight.batch == one.max_batch_kv,
    "output 1: an ITL limit of 1 ms binds nothing, the KV's largest batch")
  -- with a decode step the limit binds: 1 ms is below one sequence's step
  t.raises(function() infer.gpus_for(t.with(a, { output = 2 }), 1000, 1e-3) end,
    "no batch meets ITL 1 ms", "output 2: the 1 ms limit refused")
end

-- The target search's cost per 1e6 tokens is the engine's deployment
-- rule (engine/common.h gp_cost_per_mtok, core.cost_per_mtok): price/h
-- x gpus / 3600 / (tokens/s) x 1e6.  By hand: 2 x 9 / 3600 / 1000 x 1e6
-- = 5 exactly in binary (18 / 3600 = 0.005, x 1e6 / 1000); and the
-- search's pick is priced by it: 1.5/h with its gpus and tokens/s.
-- Tolerance 1e-12 relative: the same operations in the same order.
do
  local core = require "gpuplan.core"
  t.ok(math.abs(core.cost_per_mtok(2, 9, 1000) - 5) < 5e-12, "2/h x 9 GPUs at 1000 tok/s: 5 per Mtok")
  local g = infer.gpus_for({ model = "llama3-8b", gpu = "h100-sxm", price = 1.5 }, 1000, 0.05)
  local want = 1.5 * g.gpus / 3600 / g.tokens_per_s * 1e6
  t.ok(math.abs(g.cost_per_mtok - want) <= 1e-12 * want, "gpus_for: price x gpus / 3600 / tok/s x 1e6")
end

-- TP over attention (engine/layout.h layout_heads_tp_ok, core.heads_tp_ok,
-- the rule gpuplan.serve words for an ep that sets tp): tp divides the
-- query heads and divides or is a multiple of the KV heads.  By hand:
-- 32 heads / 8 KV at tp 4 (8 % 4 = 0) and tp 16 (16 % 8 = 0) split; 48 / 12
-- at tp 8 does not (12 % 8 = 4, 8 % 12 = 8); 32 at tp 3 does not (32 % 3).
do
  local core = require "gpuplan.core"
  t.is(core.heads_tp_ok(32, 8, 4), true, "32 heads, 8 KV, tp 4: splits")
  t.is(core.heads_tp_ok(32, 8, 16), true, "32 heads, 8 KV, tp 16: KV heads replicated")
  t.is(core.heads_tp_ok(48, 12, 8), false, "48 heads, 12 KV, tp 8: the KV heads do not split")
  t.is(core.heads_tp_ok(32, 8, 3), false, "32 heads at tp 3: no")
end

-- llama.cpp's tp is its row split (engine/infer.c row_split_time): no
-- all-reduce; each matmul copies its q8_1 input (36 B a 32-value block) to
-- the other GPU and that GPU's half of the output rows back in f32, two
-- copies on the critical path.  Llama 2 70B, Q4_0 (4.5 bits), batch 1, two
-- RTX 4090s on pcie4 (no P2P: each copy staged through host memory, 6.685
-- us of the host's issue and 11.65 us of the copy, 18.335 us: the CPU and
-- GPU latency matrices of p2pBandwidthLatencyTest on two 4090s; p2p_bw =
-- 32 GB/s x 0.80 = 25.6 GB/s).  A layer's seven matmuls:
-- inputs 6 x 8192 x 1.125 + 28672 x 1.125 = 87552 B; outputs (half the
-- rows x 4 B) q 8192 x 2 + k, v 2 x 1024 x 2 + o 8192 x 2 + gate, up
-- 2 x 28672 x 2 + down 8192 x 2 = 167936 B; 14 copies.  lm_head: 9216 B in,
-- 32000 x 2 B out, 2 copies.  comm = 80 x (14 x 18.335e-6 + 255488 /
-- 25.6e9) + 2 x 18.335e-6 + 73216 / 25.6e9 = 21.373 ms.  1e-12: float
-- rounding only.
local rs = infer.infer { model = "llama2-70b", gpu = "rtx-4090", tp = 2, weights = 4.5, kv = "fp16",
                         batch = 1, input = 8, output = 256, runtime = "llama.cpp" }
t.near(rs.decode.comm_time, 80 * (14 * 18.335e-6 + 255488 / 25.6e9) + 2 * 18.335e-6 + 73216 / 25.6e9,
       1e-12, "llama.cpp tp 2 on two 4090s: 14 staged copies a layer's matmuls, 21.37 ms a token")
-- At tp 4 the source (ggml_cuda_op_mul_mat, llama.cpp 9476b01) copies to
-- and from each of the 3 other GPUs, one copy each way per 128 token
-- columns (MUL_MAT_SRC1_COL_STRIDE); staged copies block the host thread,
-- so they run one after another: a latency each.  Decode (T = 1, one
-- chunk): a layer's seven matmuls send 3 x 87552 = 262656 B of input and
-- take back 3/4 of the rows, 3 x (8192 + 2 x 1024 + 8192 + 2 x 28672 +
-- 8192) = 3 x 83968 = 251904 B: 514560 B, 7 x 2 x 3 = 42 copies.  lm_head:
-- 3 x 9216 = 27648 B in, 3 x 32000 = 96000 B out, 6 copies.  comm = 80 x
-- (42 x 18.335e-6 + 514560 / 25.6e9) + 6 x 18.335e-6 + 123648 / 25.6e9 =
-- 63.33 ms.  Prefill of 300 tokens: 3 chunks, 9 copies each way a matmul;
-- 80 x (126 x 18.335e-6 + 300 x 514560 / 25.6e9) + 18 x 18.335e-6 + 300 x
-- 123648 / 25.6e9 = 669.0 ms.  1e-12: float rounding only.
local r4 = infer.infer { model = "llama2-70b", gpu = "rtx-4090", tp = 4, weights = 4.5, kv = "fp16",
                         batch = 1, input = 300, output = 256, runtime = "llama.cpp" }
t.near(r4.decode.comm_time, 80 * (42 * 18.335e-6 + 514560 / 25.6e9) + 6 * 18.335e-6 + 123648 / 25.6e9,
       1e-12, "llama.cpp tp 4 on four 4090s: a staged copy per other GPU each way, 42 a layer")
t.near(r4.prefill.comm_time, 80 * (126 * 18.335e-6 + 300 * 514560 / 25.6e9) + 18 * 18.335e-6
       + 300 * 123648 / 25.6e9, 1e-12, "llama.cpp tp 4 prefill of 300 tokens: 3 chunks of 128 columns, 9 copies each way")
-- Peer copies go on each device's own streams (chunk % 8 of them) and
-- overlap: one latency each way per 8 chunks.  H100 SXM, tp 4, prefill of
-- 1100 tokens: 9 chunks, 2 latencies each way; 80 x (7 x 2 x 2 x 0.6e-6 +
-- 1100 x 514560 / 369e9) + 4 x 0.6e-6 + 1100 x 123648 / 369e9 = 124.4 ms.
-- 1e-12: float rounding only.
local p4 = infer.infer { model = "llama2-70b", gpu = "h100-sxm", tp = 4, weights = 4.5, kv = "fp16",
                         batch = 1, input = 1100, output = 256, runtime = "llama.cpp" }
t.near(p4.prefill.comm_time, 80 * (28 * 0.6e-6 + 1100 * 514560 / 369e9) + 4 * 0.6e-6 + 1100 * 123648 / 369e9,
       1e-12, "llama.cpp tp 4 over NVLink: peer copies overlap, a latency per 8 chunks each way")
-- An MoE layer's experts are split as the dense MLP is (llama.cpp before
-- PR 4766: ffn_*_exp created backend_split; ggml_cuda_mul_mat_id runs a
-- split matmul per top-k slot per expert with tokens).  Mixtral 8x7B
-- (h 4096, 32 q / 8 kv heads of 128, 8 experts of 14336, top 2, vocab
-- 32000), Q4_0, two 4090s (staged, 18.335 us, 25.6 GB/s), decode (T = 1,
-- one expert a slot): attention 4 matmuls, in 4 x 4096 x 1.125 = 18432 B,
-- out half the rows x 4 B: 2 x (4096 + 1024 + 1024 + 4096) = 20480 B, 8
-- copies; experts 2 slots x (gate, up 4096 -> 14336, down 14336 -> 4096):
-- in 2 x (2 x 4096 + 14336) x 1.125 = 50688 B, out 2 x 2 x (2 x 14336 +
-- 4096) = 131072 B, 12 copies; a layer 220672 B, 20 copies.  lm_head 4608
-- B in + 64000 B out, 2 copies.  decode comm = 32 x (20 x 18.335e-6 +
-- 220672 / 25.6e9) + 2 x 18.335e-6 + 68608 / 25.6e9 = 12.05 ms (4.782 ms
-- with the experts' copies left out).  Prefill of 300 tokens: each slot's
-- 300 picks touch 8 (1 - (7/8)^300) = 8 experts (to double precision), 37.5
-- tokens each, one chunk: 2 x 8 x 3 x 2 = 96 expert copies; attention 3
-- chunks, 4 x 2 x 3 = 24; 32 x (120 x 18.335e-6 + 300 x 220672 / 25.6e9)
-- + 6 x 18.335e-6 + 300 x 68608 / 25.6e9 = 154.1 ms.  1e-12: float
-- rounding.
local mx = infer.infer { model = "mixtral-8x7b", gpu = "rtx-4090", tp = 2, weights = 4.5, kv = "fp16",
                         batch = 1, input = 300, output = 256, runtime = "llama.cpp" }
t.near(mx.decode.comm_time, 32 * (20 * 18.335e-6 + 220672 / 25.6e9) + 2 * 18.335e-6 + 68608 / 25.6e9,
       1e-12, "llama.cpp row split on Mixtral: each slot's expert matmuls are split and copy")
t.near(mx.prefill.comm_time, 32 * (120 * 18.335e-6 + 300 * 220672 / 25.6e9) + 6 * 18.335e-6
       + 300 * 68608 / 25.6e9, 1e-12, "llama.cpp row split, Mixtral prefill: a split matmul per busy expert per slot")
-- The same layout under plain kernels keeps Megatron's two all-reduces a
-- layer: 2 x 80 NCCL all-reduces of the 8192 x 2 B activations, each what
-- gp.comm prices on two 4090s.  1e-12: float rounding only.
local mk = infer.infer { model = "llama2-70b", gpu = "rtx-4090", tp = 2, weights = 4.5, kv = "fp16",
                         batch = 1, input = 8, output = 256, runtime = "kernels" }
local ar = gp.comm { op = "all_reduce", bytes = 16384, gpus = 2, gpu = "rtx-4090" }
t.near(mk.decode.comm_time, 160 * ar.time, 1e-12, "runtime kernels: 160 all-reduces, not llama.cpp's copies")
-- Over NVLink the copies are peer copies at the link's latency (nvlink4
-- 0.6 us) and one-way rate (450 GB/s x 0.82 = 369 GB/s): H100 SXM, the
-- same model and bytes, 80 x (14 x 0.6e-6 + 255488 / 369e9) + 2 x 0.6e-6 +
-- 73216 / 369e9 = 0.729 ms.  1e-12: float rounding only.
local rn = infer.infer { model = "llama2-70b", gpu = "h100-sxm", tp = 2, weights = 4.5, kv = "fp16",
                         batch = 1, input = 8, output = 256, runtime = "llama.cpp" }
t.near(rn.decode.comm_time, 80 * (14 * 0.6e-6 + 255488 / 369e9) + 2 * 0.6e-6 + 73216 / 369e9,
       1e-12, "llama.cpp tp 2 over NVLink: peer copies at the link's latency")
-- The row split divides only the weight matrices: the KV cache sits on the
-- main GPU (llama_kv_cache_init) and Q K^T, the softmax and P V run there on
-- every head (engine/infer.c step_layers).  Llama 2 70B decoding at a mean
-- context of 8 + 256 / 2 = 136 tokens: the attention op reads the whole
-- cache of a layer, 136 x 2 (K, V) x 8 KV heads x 128 x 2 B = 557056 B, plus
-- q and its output, 2 x 64 heads x 128 x 2 B = 32768 B: 589824 B, and does
-- 4 x 136 x 64 x 128 = 4456448 FLOP -- twice runtime kernels' per-GPU share
-- (294912 B, 2228224 FLOP).  The qkv matmul stays halved: the same bytes as
-- under kernels.  Memory: one sequence of 264 tokens holds 264 x 2 x 80
-- layers x 8 x 128 x 2 B = 86507520 B on the main GPU (kernels: half,
-- 43253760).  Exact: integer byte and FLOP counts.
do
  local function op(r, name)
    for _, o in ipairs(r.decode.ops) do if o.name == name then return o end end
  end
  local a, k = op(rs, "attention"), op(mk, "attention")
  t.is(a.bytes, 589824.0, "llama.cpp row split: the attention reads the whole cache on the main GPU")
  t.is(a.flop, 4456448.0, "llama.cpp row split: every head's attention FLOP on the main GPU")
  t.is(k.bytes, 294912.0, "runtime kernels: the attention's half of the heads per GPU")
  t.is(op(rs, "qkv").bytes, op(mk, "qkv").bytes, "llama.cpp row split: the qkv weights stay split")
  t.is(rs.kv_per_seq, 86507520.0, "llama.cpp row split: the main GPU holds the whole KV cache")
  t.is(mk.kv_per_seq, 43253760.0, "runtime kernels: each GPU holds its KV heads' half")
end
-- llama.cpp's --split-mode is one of none, layer (pp) and row (tp): tp 2
-- with pp 2 is a layout it has no mode for, refused as a usage error;
-- either alone still runs.
t.raises(function()
  gp.infer { model = "llama3-8b", gpu = "h100-sxm", tp = 2, pp = 2, runtime = "llama.cpp" }
end, "infer: tp 2 with pp 2 and runtime = llama.cpp: its --split-mode is row", "llama.cpp tp 2 pp 2 refused", true)
t.ok(pcall(gp.infer, { model = "llama3-8b", gpu = "h100-sxm", pp = 2, runtime = "llama.cpp" }),
  "llama.cpp pp 2 (its layer split) still priced")
t.ok(pcall(gp.infer, { model = "llama3-8b", gpu = "h100-sxm", tp = 2, pp = 2, runtime = "vllm" }),
  "vllm tp 2 pp 2 still priced")
t.done_testing()
