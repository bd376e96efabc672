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
t.near(dec.mem_rate, copy_h100, 1e-9 * copy_h100,
       "H100, FP8 cache, Llama 3.1 8B (32 query / 8 KV heads): decode attention at the copy")
t.near(pre.mem_rate, copy_h100 * gemv, 1e-9 * copy_h100,
       "... the prompt's attention (the context kernel) keeps the GEMV rate")
t.near(row(r.decode, "qkv").mem_rate, copy_h100 * gemv, 1e-9 * copy_h100,
       "... and the linears keep theirs")

-- The same step with a 16-bit cache runs XQA's HMMA kernel (mha.cu):
-- the GEMV rate.
local b16 = run { kv = "bf16" }
t.near(row(b16.decode, "attention").mem_rate, copy_h100 * gemv, 1e-9 * copy_h100,
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
t.near(row(h200.decode, "attention").mem_rate, 4.272e12, 1e-9 * 4.272e12, "H200: the copy")

-- Where the kernel does not run, the rate is the one before.
local function rate_of(extra)
  local x = run(extra)
  return row(x.decode, "attention").mem_rate, row(x.prefill, "attention").mem_rate
end
local d, p = rate_of { gpu = "b200" }
t.near(d, p, 1e-9 * p, "B200 (Blackwell, another kernel): decode at the prompt's rate")
d, p = rate_of { runtime = "vllm" }
t.near(d, copy_h100 * gemv, 1e-9 * copy_h100, "vLLM on H100: the GEMV rate")
d, p = rate_of { model = "llama2-7b" }
t.near(d, copy_h100 * gemv, 1e-9 * copy_h100, "MHA (Llama 2 7B, a group of one): the GEMV rate")
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

t.done_testing()
