-- TensorRT-LLM's decode attention on Hopper with an FP8 cache (gp.infer's
-- engine field attn_stream, lua/gpuplan/infer.lua M.attn_stream_of): XQA's
-- TMA + QGMMA kernel (mha_sm90.cu, picked when supportConfigQGMMA holds:
-- SM 90, an E4M3 cache, beam 1, a GQA group of at most 32) reads the cache
-- at the streaming copy, where every other fused attention kernel reads
-- at the GEMV rate (roofline.c ROOF_GEMV_BW, 0.94 of the copy).  Only the
-- decode step's attention moves; prefill, a 16-bit cache, MHA, another
-- runtime, another architecture and xqa = false keep their price.
local t = require "tap"
local infer = require "gpuplan.infer"

local function run(extra)
  local a = { model = "llama3.1-8b", gpu = "h100-sxm", weights = "fp8", kv = "fp8",
              runtime = "trtllm", batch = 64, input = 128, output = 2048 }
  for k, v in pairs(extra or {}) do a[k] = v end
  return infer.infer(a)
end
local row = t.op    -- a phase's op row by name (tap.lua)

-- H100 SXM: 3.35 TB/s (catalog h100-sxm) at the hopper streaming fraction
-- 0.84 = 2.814e12 B/s, the copy; the GEMV rate is 0.94 of it, 2.64516e12.
-- Exact up to float rounding (1e-9 relative).
local copy_h100, gemv = 3.35e12 * 0.84, 0.94
local r = run()
local dec, pre = row(r.decode, "attention"), row(r.prefill, "attention")
t.near(dec.mem_rate, copy_h100, 1e-9,
       "H100, FP8 cache, Llama 3.1 8B (32 query / 8 KV heads): decode attention at the copy")
t.near(pre.mem_rate, copy_h100 * gemv, 1e-9,
       "... the prompt's attention (the context kernel) keeps the GEMV rate")
t.near(row(r.decode, "qkv").mem_rate, copy_h100 * gemv, 1e-9,
       "... and the linears keep theirs")

-- The same step with a 16-bit cache runs XQA's HMMA kernel (mha.cu):
-- the GEMV rate.
local b16 = run { kv = "bf16" }
t.near(row(b16.decode, "attention").mem_rate, copy_h100 * gemv, 1e-9,
       "a bf16 cache: the GEMV rate")

-- Only the attention moves: the decode step's GPU time differs by the
-- attention rows' difference alone (1e-12 s: float sums).  The prefill
-- phase is the same to the byte and the second.
local base = infer.attn_stream_hopper_fp8
infer.attn_stream_hopper_fp8 = nil
local ok, off = pcall(run)
infer.attn_stream_hopper_fp8 = base
t.ok(ok, "the job runs with the field unset")
t.near(off.decode.gpu_time - r.decode.gpu_time,
       row(off.decode, "attention").total - dec.total, 1e-12,
       "only the decode attention changes")
t.ok(dec.total < row(off.decode, "attention").total, "... and it is faster")
t.is(off.prefill.gpu_time, r.prefill.gpu_time, "prefill untouched")

-- H200 (hopper too): 4.8 TB/s at the h200 entry's 0.89 = 4.272e12.
local h200 = run { gpu = "h200-sxm" }
t.near(row(h200.decode, "attention").mem_rate, 4.272e12, 1e-9, "H200: the copy")

-- Where the kernel does not run, the rate is the one before.
local function rate_of(extra)
  local x = run(extra)
  return row(x.decode, "attention").mem_rate, row(x.prefill, "attention").mem_rate
end
local d, p = rate_of { gpu = "b200" }
t.near(d, p, 1e-9, "B200 (Blackwell, another kernel): decode at the prompt's rate")
d, p = rate_of { runtime = "vllm" }
t.near(d, copy_h100 * gemv, 1e-9, "vLLM on H100: the GEMV rate")
d, p = rate_of { model = "llama2-7b" }
t.near(d, copy_h100 * gemv, 1e-9, "MHA (Llama 2 7B, a group of one): the GEMV rate")
-- xqa = false prices the masked MHA kernel (mmha_decode, engine/infer.c),
-- the cache read once per query head at the plain copy rate of an
-- elementwise read: not this field's path.
t.is(infer.attn_stream_of({ runtime = "trtllm", xqa = false }, { arch = "hopper" },
                          { heads = 32, kv_heads = 8 }, 1, "fp8"), nil, "xqa = false: none")

-- The group test (supportConfigQGMMA: head_grp_size <= 32), per rank.
local g = { arch = "hopper", vendor = "NVIDIA" }
local a = { runtime = "trtllm" }
t.is(infer.attn_stream_of(a, g, { heads = 64, kv_heads = 2 }, 1, "fp8"), 1.0, "a group of 32: QGMMA")
t.is(infer.attn_stream_of(a, g, { heads = 128, kv_heads = 2 }, 1, "fp8"), nil, "a group of 64: none")
t.is(infer.attn_stream_of(a, g, { heads = 128, kv_heads = 4 }, 4, "fp8"), 1.0,
     "128 query / 4 KV heads on 4 ranks: 32 / 1 a rank, QGMMA")
t.is(infer.attn_stream_of(a, g, { heads = 128, kv_heads = 8 }, 16, "fp8"), 1.0,
     "KV heads replicated past TP 8: 8 query heads to one KV head a rank")
t.is(infer.attn_stream_of(a, g, { heads = 32, kv_heads = 8, mla = { kv_lora_rank = 512 } }, 1,
                          "fp8"), nil, "a latent (MLA) cache: none")
t.is(infer.attn_stream_of(a, { arch = "cdna3", vendor = "AMD" }, { heads = 32, kv_heads = 8 }, 1,
                          "fp8"), nil, "another vendor: none")

-- xqa_hopper = false: the HMMA kernel every release before 0.10 ran on
-- Hopper (no tensor map, two warp groups): the GEMV rate again, 0.94 of
-- the H100's copy (the same derivation as above, 1e-9 relative).
t.is(infer.attn_stream_of({ runtime = "trtllm", xqa_hopper = false }, g,
                          { heads = 32, kv_heads = 8 }, 1, "fp8"), nil, "xqa_hopper = false: none")
local hmma = run { xqa_hopper = false }
t.near(row(hmma.decode, "attention").mem_rate, copy_h100 * gemv, 1e-9,
       "xqa_hopper = false on H100: decode attention at the GEMV rate")
-- A kernel of TensorRT-LLM's alone: refused under another runtime.
local ok2, err2 = pcall(run, { runtime = "vllm", xqa_hopper = false })
t.ok(not ok2 and tostring(err2):find("xqa_hopper = false picks TensorRT-LLM's XQA kernel on "
       .. "Hopper", 1, true) and tostring(err2):find("--runtime trtllm only", 1, true),
     "xqa_hopper under vLLM: refused, naming the option and the runtime")

-- The predictor's release rule (predict/infer.lua, TensorRT-LLM profile):
-- XQA's Hopper kernel came with 0.10.0 ("Integrated the new NVIDIA Hopper
-- XQA kernels", its release notes); a case of an earlier release, or of
-- no release dated before 2024-06-05 (0.10.0's tag), is priced with the
-- HMMA kernel, said on the defaults line.  Llama 2 70B's shape (64 query
-- heads over 8 KV heads, head size 128, the group XQA ran from 0.6 on)
-- on one H200 with FP8 weights (trtllm-bench forces an FP8 cache).
do
  local gp = require "gpuplan"
  local predict = require "gpuplan.predict.infer"
  local function case(src, gpu)
    return { model = { layers = 80, hidden = 8192, heads = 64, kv_heads = 8,
                       ffn_hidden = 28672, ffn_gated = true, vocab = 32000 },
             hardware = { gpu = gpu or "h200-sxm", gpus = 1 }, parallel = { tp = 1 },
             workload = { weight_dtype = "fp8", batch = 64, input_len = 128, output_len = 2048,
                          num_requests = 64, framework = "trtllm" },
             measured = { metric = "output_tokens_per_s" }, source = src }
  end
  local function said(src, gpu)
    local r, why = predict(case(src, gpu), gp.catalog())
    assert(r, why)
    for _, d in ipairs(r.defaults) do
      if d:find("xqa_hopper=false", 1, true) then return d end
    end
  end
  local d9 = said { title = "perf overview", version = "0.9.0" }
  t.ok(d9 and d9:find("xqa_hopper=false (TensorRT-LLM 0.9.0: XQA's TMA + GMMA Hopper kernel "
         .. "came with 0.10.0", 1, true), "0.9.0 on an H200: the HMMA kernel, said")
  t.is(said { title = "perf overview", version = "0.10.0" }, nil, "0.10.0: the Hopper kernel")
  t.is(said { title = "perf overview", version = "0.11.0" }, nil, "0.11.0: the same")
  t.ok(said { title = "MLPerf", date = "2024-03-27" }, "no release, dated before 0.10.0: HMMA")
  t.is(said { title = "MLPerf", date = "2024-08-28" }, nil, "dated after it: the Hopper kernel")
  t.is(said { title = "no release, no date" }, nil, "neither: the newest, the Hopper kernel")
  -- said only where the price changes: a B200 (Blackwell) runs another
  -- kernel, which neither rate is about
  t.is(said({ title = "perf overview", version = "0.9.0" }, "b200"), nil,
       "0.9.0 on a B200: nothing to say")
end

t.done_testing()
