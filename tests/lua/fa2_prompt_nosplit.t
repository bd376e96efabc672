-- vLLM V1's prompt attention on FlashAttention-2 runs its K loop whole
-- (engine/infer.c fa2_prompt_nosplit, roof_op.no_split): mha_varlen_fwd
-- sets a split count only for an all-decode call ("// Only apply split-k
-- for decoding"), so a call that carries prompt tokens launches one CTA a
-- query block and head and its last wave idles where there are few of
-- them.  The same path as fa2_mixed (vLLM V1, ampere / ada, 16-bit cache);
-- Hopper's FA3 and fa2_mixed = false keep the library's split-K reading.
-- Run with ./gpuplan run tests/lua/fa2_prompt_nosplit.t.
local t = require "tap"
local gp = require "gpuplan"

local function attn(r)
  for _, o in ipairs(r.prefill.ops) do
    if o.name == "attention" then return o end
  end
  error("no attention row")
end

-- Qwen3-235B-A22B at TP 8 on A100s: 64 query heads / 8 = 8 a GPU, 4 KV
-- heads replicated to 1 a GPU.  A 2048-token prompt's attention is priced
-- as one GEMM-like op (model_ops.c op_attn, GQA packed): m = 2048 x 8 =
-- 16384 rows, n = 128, k = the causal mean 2048 - 2047 / 2 = 1024.5 keys,
-- count = 1 sequence x 1 KV head.  Tiles: 16384 / 128 = 128 (n one tile).
-- Without a split they run in ceil(128 / 108) = 2 waves on the A100's 108
-- SMs: 128 / 216 busy, times the K loop's fill against the reference
-- depth (roofline.c k_fill: k / (k + 128) over 8192 / (8192 + 128)):
--   0.59259 x (1024.5 / 1152.5) / (8192 / 8320) = 0.535008.
-- 1e-9 relative: the same arithmetic in C.
local q = { model = "qwen3-235b-a22b", gpu = "a100-sxm-80gb", gpus = 8, tp = 8,
            input = 2048, output = 128, runtime = "vllm", batch = 16 }
local on, off = gp.infer(q), gp.infer(t.with(q, { fa2_mixed = false }))
local want = 128 / 216 * (1024.5 / 1152.5) / (8192 / 8320)
t.near(attn(on).shape_eff, want, 1e-9,
       string.format("FA2 prompt, 8 heads a GPU: 128 tiles in 2 waves of 108, no split (%.6f)", want))
-- fa2_mixed = false (not FA2's varlen call): the library split-K may cut
-- the 1024.5 keys into up to 4 slices of >= 256 (ROOF_MIN_SLICE), which
-- fills the waves better: a higher efficiency, the time lower.
t.ok(attn(off).shape_eff > attn(on).shape_eff + 0.05,
     "fa2_mixed = false keeps the split-K reading (higher efficiency)")
t.ok(on.tokens_per_s < off.tokens_per_s, "... and the FA2 run is the slower")
-- Same FLOP either way: only the efficiency moves.
t.is(attn(on).flop, attn(off).flop, "the attention's FLOP do not move")

-- Many heads a GPU fill the waves without a split, so nothing moves:
-- Qwen3-32B on one A100 (64 query heads, 8 KV heads): 128 tiles x 8 =
-- 1024 in ceil(1024 / 108) = 10 waves, 0.948 busy, where any split adds
-- waves and shortens the K loop (s = 2: 2048 in 19 waves at fill(512)).
local d = { model = "qwen3-32b", gpu = "a100-sxm-80gb", gpus = 1, input = 2048, output = 128,
            runtime = "vllm", batch = 16 }
t.is(attn(gp.infer(d)).shape_eff, attn(gp.infer(t.with(d, { fa2_mixed = false }))).shape_eff,
     "Qwen3-32B at TP 1: 64 heads fill the waves, unchanged")

-- Hopper runs FlashAttention-3 (tile-scheduled): off by default, unchanged.
local h = t.with(q, { gpu = "h100-sxm" })
t.is(attn(gp.infer(h)).shape_eff, attn(gp.infer(t.with(h, { fa2_mixed = false }))).shape_eff,
     "H100 (FA3): the split-K reading stays")

-- The decode-only step (one query a sequence: FA2 splits there) is untouched.
t.is(on.decode.gpu_time, off.decode.gpu_time, "decode-only step unchanged")

t.done_testing()
