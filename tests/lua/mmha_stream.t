-- TensorRT-LLM's decode attention of a multi-head model (one query head a
-- KV head on a rank) on Hopper with an FP8 cache (lua/gpuplan/infer.lua
-- M.mmha_stream_of, gp.infer's engine field attn_stream): XQA refuses
-- vanilla MHA, so the masked MHA kernel runs it, and its rate is the
-- SMs', not the HBM's, past the H100 SXM's GEMV rate.  On an H200 it
-- reads the cache at the H100 SXM's rate (the same 132 SMs, the same FP32
-- peak); on the H100 itself, on a GQA model (XQA), with a 16-bit cache,
-- under another runtime or on another architecture nothing moves.
local t = require "tap"
local infer = require "gpuplan.infer"
local roofline = require "gpuplan.roofline"

local function run(extra)
  local a = { model = "llama2-7b", gpu = "h200-sxm", weights = "fp8", kv = "fp8",
              runtime = "trtllm", batch = 64, input = 128, output = 2048 }
  for k, v in pairs(extra or {}) do a[k] = v end
  return infer.infer(a)
end
local row = t.op    -- a phase's op row by name (tap.lua)

-- The H100 SXM's GEMV rate: 3.35 TB/s (catalog h100-sxm) x its hopper
-- streaming fraction 0.84 x ROOF_GEMV_BW 0.94 = 2.64516e12 B/s.  The
-- H200 SXM's copy: 4.8 TB/s x its own 0.89 = 4.272e12 B/s, its GEMV rate
-- 0.94 of that, 4.01568e12.  Both cards' FP32 peak is 67 TFLOP/s, so the
-- cap is the H100's rate itself.  Exact up to float rounding (1e-9
-- relative).
local h100_gemv, h200_copy = 3.35e12 * 0.84 * 0.94, 4.8e12 * 0.89
local r = run()
local dec = row(r.decode, "attention")
t.near(dec.mem_rate, h100_gemv, 1e-9,
       "H200, FP8 cache, Llama 2 7B (MHA): decode attention at the H100 SXM's GEMV rate")
local h200 = roofline.device("h200-sxm")
t.near(infer.mmha_stream_of({ runtime = "trtllm" }, { id = "h200-sxm", arch = "hopper",
                            vendor = "NVIDIA" }, { heads = 32, kv_heads = 32 }, 1, "fp8", h200),
       h100_gemv / h200_copy, 1e-9, "... returned as 0.619 of the H200's copy")
-- The 0.94 above is the engine's own GEMV fraction (roofline.h
-- ROOF_GEMV_BW), which gpuplan.core hands the rule: one constant.
t.is(require("gpuplan.core").ROOF_GEMV_BW, 0.94, "gpuplan.core exports ROOF_GEMV_BW, 0.94")
t.near(row(r.prefill, "attention").mem_rate, h200_copy * 0.94, 1e-9,
       "... the prompt's attention (the context kernel) keeps the H200's GEMV rate")
t.near(row(r.decode, "qkv").mem_rate, h200_copy * 0.94, 1e-9,
       "... and so do the linears")

-- Only the decode attention moves: with the rule off (the reference card
-- set to the H200 itself, so the cap is the card's own GEMV rate and
-- nothing is returned) the decode step differs by the attention rows'
-- difference alone (1e-12 s: float sums); the prefill is the same.
local ref = infer.mmha_fp8_ref
infer.mmha_fp8_ref = "h200-sxm"
local ok, off = pcall(run)
infer.mmha_fp8_ref = ref
t.ok(ok, "the job runs with the H200 as its own reference")
local doff = row(off.decode, "attention")
t.near(doff.mem_rate, h200_copy * 0.94, 1e-9, "... at the H200's GEMV rate then")
t.near(off.decode.gpu_time - r.decode.gpu_time, doff.total - dec.total, 1e-12,
       "only the decode attention changes")
-- the attention's bytes at the two rates: 1.518 times slower capped
-- (4.01568 / 2.64516) where the memory bounds it
t.ok(dec.total > doff.total * 1.4, "... and it is slower capped, by the rates' ratio")
t.is(off.prefill.gpu_time, r.prefill.gpu_time, "prefill untouched")

-- Where the rule does not hold, the rate is the one before.
local function dec_rate(extra) return row(run(extra).decode, "attention").mem_rate end
t.near(dec_rate { gpu = "h100-sxm" }, h100_gemv, 1e-9,
       "H100 SXM: its own GEMV rate (the cap is not below it)")
t.near(dec_rate { kv = "bf16" }, h200_copy * 0.94, 1e-9,
       "a bf16 cache: the H200's GEMV rate")
t.near(dec_rate { runtime = "vllm" }, h200_copy * 0.94, 1e-9,
       "vLLM: the H200's GEMV rate")
-- Llama 3.1 8B: 32 query / 8 KV heads, XQA's QGMMA kernel at the copy
-- (attn_stream_of), not this rule
t.near(dec_rate { model = "llama3.1-8b" }, h200_copy, 1e-9,
       "a GQA model on XQA: the copy, untouched")
-- MHA runs the masked kernel whatever xqa says: the same price off
t.near(dec_rate { xqa = false }, h100_gemv, 1e-9, "xqa = false: the same cap")
local g = { id = "h200-sxm", arch = "hopper", vendor = "NVIDIA" }
t.is(infer.mmha_stream_of({ runtime = "trtllm" }, g, { heads = 32, kv_heads = 8 }, 1, "fp8", h200),
     nil, "a group of 4: none")
t.is(infer.mmha_stream_of({ runtime = "trtllm" }, g, { heads = 32, kv_heads = 32 }, 1, "bf16", h200),
     nil, "a 16-bit cache: none")
t.is(infer.mmha_stream_of({ runtime = "trtllm" }, { id = "b200", arch = "blackwell",
                          vendor = "NVIDIA" }, { heads = 32, kv_heads = 32 }, 1, "fp8",
                          roofline.device("b200")),
     nil, "Blackwell: none")

-- A gpu table of the job's own is priced by its own figures: the H200's
-- entry with 6.0 TB/s of HBM (the same SMs) still reads the cache at the
-- H100 SXM's GEMV rate, 2.64516e12 B/s; the rule took the catalog's
-- 4.8 TB/s entry of the same id for the card's copy and let it read at
-- 2.64516e12 x 6.0 / 4.8 = 3.30645e12.  Tolerance 1e-9 relative: float
-- rounding.
do
  local own = t.copy(require("gpuplan").catalog():get("gpus", "h200-sxm"))
  own.mem_bw = 6.0e12
  t.near(dec_rate { gpu = own }, h100_gemv, 1e-9,
         "an H200 table of 6.0 TB/s: still the H100 SXM's GEMV rate")
end

t.done_testing()
