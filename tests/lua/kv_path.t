-- gp.infer: the path a runtime takes over a quantised KV cache
-- (gpuplan.infer M.kv_path, engine/infer.c kv_dequant): NVFP4 KV is
-- storage plus its block scales on Blackwell, a whole-pool dequantisation
-- every step under SGLang off Blackwell, refused elsewhere; int8 KV and
-- fp8 KV without fp8 tensor cores are converted in the attention kernel
-- and multiplied in 16 bits.
local t = require "tap"
local infer = require "gpuplan.infer"

local function row(ops, name)
  for _, o in ipairs(ops) do if o.name == name then return o end end
end
local function run(a)
  a.model = a.model or "llama3-8b"
  a.batch = a.batch or 1
  return infer.infer(a)
end

-- Refusals name --kv and the reason: no runtime but SGLang attends over an
-- FP4 cache on Hopper.
for _, rt in ipairs { "graphs", "vllm", "trtllm", "llama.cpp" } do
  local ok, e = pcall(run, { gpu = "h100-sxm", kv = "fp4", runtime = rt ~= "graphs" and rt or nil })
  t.ok(not ok and tostring(e):find("%-%-kv fp4 on h100%-sxm") and tostring(e):find("SM100"),
       "fp4 KV on Hopper under " .. rt .. " is refused naming --kv: " .. tostring(e))
end
do
  local ok, e = pcall(run, { gpu = "a100-sxm-80gb", kv = "fp4" })
  t.ok(not ok and tostring(e):find("%-%-kv fp4 on a100"), "and on Ampere: " .. tostring(e))
  ok, e = pcall(run, { model = "deepseek-v3", gpu = "h100-sxm", kv = "fp4", runtime = "sglang" })
  t.ok(not ok and tostring(e):find("MLATokenToKVPoolFP4"),
       "an MLA cache under SGLang's FP4 pool is not modelled: " .. tostring(e))
end

-- NVFP4 KV holds 0.5 B an element and an 8-bit scale per 16: 0.5625 B.
-- Llama 3 8B, one sequence of 2048 + 256 tokens on B200: 2304 tokens x
-- 32 layers x 2 (K, V) x 8 KV heads x 128 x 0.5625 = 84,934,656 B, exact.
local b4 = run { gpu = "b200", kv = "fp4" }
t.near(b4.kv_per_seq, 2304 * 32 * 2 * 8 * 128 * 0.5625, 1e-12,
       "fp4 KV per sequence carries its block scales (0.5625 B an element)")
-- On Blackwell the attention reads it as stored, no dequantisation pass:
-- the decode attention row's bytes are activations + kv elements x B, so
-- (bf16 - fp8) / (fp8 - fp4) = (2 - 1) / (1 - 0.5625) at the same batch
-- and context (exact but for float rounding).
t.ok(row(b4.ops, "kv_dequant") == nil, "Blackwell: no kv_dequant row")
do
  local a16 = row(run { gpu = "b200", kv = "bf16" }.ops, "attention").bytes
  local a8 = row(run { gpu = "b200", kv = "fp8" }.ops, "attention").bytes
  local a4 = row(b4.ops, "attention").bytes
  t.near((a16 - a8) / (a8 - a4), 1 / 0.4375, 1e-9,
         "Blackwell fp4 attention reads 0.5625 B an element")
end

-- SGLang on H100, batch 1: every forward dequantises the whole pool.  The
-- pool is the KV budget (kv_budget B per GPU at 0.5625 B an element); the
-- pass reads it and writes 2 B an element: kv_budget x (1 + 2 / 0.5625),
-- in 2 x 32 kernels (K and V a layer).  Each is a memory-bound stream:
-- bytes / (3.35e12 x 0.84, the Hopper hbm fraction) + 1 us launch + 3.9
-- us memory fill (the roofline's fixed cost of a memory-bound kernel, as
-- tests/lua/infer.t's 13B hand sum has it).  0.1%: the fixed cost is
-- rounded here.
local s4 = run { gpu = "h100-sxm", kv = "fp4", runtime = "sglang" }
local dq = row(s4.ops, "kv_dequant")
t.ok(dq and dq.count == 64, "kv_dequant: 64 kernels a step")
local pass = s4.kv_budget * (1 + 2 / 0.5625)
t.near(dq.bytes * dq.count, pass, 1e-9, "kv_dequant moves kv_budget x (1 + 2/0.5625) bytes")
t.near(dq.total, pass / (3.35e12 * 0.84) + 64 * 4.9e-6, 1e-3,
       "kv_dequant time: the whole pool at the HBM roof, " .. string.format("%.1f ms", dq.total * 1e3))
-- 58.7 GB of pool: 267 GB a step, about 95 ms, against a 7 ms bf16 step:
-- what SGLang's docs call "extremely slow".
t.ok(s4.itl_s > 10 * run { gpu = "h100-sxm", runtime = "sglang" }.itl_s,
     "SGLang fp4 KV on H100: ITL over 10x the bf16 cache's at batch 1")
-- The attention then reads the bf16 copy: the same bytes as a bf16 cache
-- at the same batch and context (exact), and multiplies in bf16 (prefill
-- attention at the bf16 rate, as a bf16 cache's).
do
  local s16 = run { gpu = "h100-sxm", kv = "bf16", runtime = "sglang" }
  t.near(row(s4.ops, "attention").bytes, row(s16.ops, "attention").bytes, 1e-12,
         "unfused: attention reads the 16-bit copy")
  t.near(row(s4.prefill_ops, "attention").t_compute, row(s16.prefill_ops, "attention").t_compute,
         1e-12, "unfused: prefill attention at the bf16 rate")
end

-- int8 KV on H100 (TensorRT-LLM's INT8 cache, converted in the kernel):
-- the prefill attention multiplies at the bf16 rate, not the fp8 one an
-- fp8 cache gets; the same FLOP, so t_compute equals the bf16 cache's
-- (exact) and exceeds the fp8 cache's.
do
  local p16 = row(run { gpu = "h100-sxm", kv = "bf16" }.prefill_ops, "attention").t_compute
  local p8 = row(run { gpu = "h100-sxm", kv = "fp8" }.prefill_ops, "attention").t_compute
  local pi8 = row(run { gpu = "h100-sxm", kv = "int8" }.prefill_ops, "attention").t_compute
  t.near(pi8, p16, 1e-12, "int8 KV: prefill attention in bf16")
  t.ok(p8 < p16, "fp8 KV on Hopper: prefill attention on the fp8 tensor cores")
end

-- fp8 KV on A100 (vLLM's paged attention converts it in the kernel): read
-- at 1 B an element, multiplied in bf16 -- the same row as an int8 cache's
-- (exact), and (bf16 - fp8) attention bytes = kv elements x 1 B, half the
-- bf16 cache's kv bytes: a16 - a8 = a8 - act, checked as the fp4 ratio
-- above would be with 1 B.
do
  local a8 = row(run { gpu = "a100-sxm-80gb", kv = "fp8" }.ops, "attention")
  local ai8 = row(run { gpu = "a100-sxm-80gb", kv = "int8" }.ops, "attention")
  t.near(a8.total, ai8.total, 1e-12, "A100: fp8 and int8 KV price alike")
  t.ok(row(run { gpu = "a100-sxm-80gb", kv = "fp8" }.ops, "kv_dequant") == nil,
       "A100 fp8 KV: converted in the kernel, no pass of its own")
end

-- llama.cpp's cache types (common/arg.cpp kv_cache_types: f32, f16, bf16,
-- q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1) hold no fp8 and no fp4: --kv fp8
-- under it is refused naming the flag and the types it has (exit 1 on the
-- CLI, as SGLang's int8 refusal), on any card; fp4 too on Blackwell (off
-- Blackwell the SM100 refusal above answers first); int8 (its q8_0) is
-- priced.
for _, g in ipairs { "rtx-4090", "h100-sxm", "b200" } do
  local ok, e = pcall(run, { gpu = g, kv = "fp8", runtime = "llama.cpp" })
  t.ok(not ok and tostring(e):find("%-%-kv fp8: llama%.cpp has no FP8 KV cache")
       and tostring(e):find("q8_0, q4_0"), "llama.cpp fp8 KV on " .. g .. " refused: " .. tostring(e))
end
do
  local ok, e = pcall(run, { gpu = "b200", kv = "fp4", runtime = "llama.cpp" })
  t.ok(not ok and tostring(e):find("%-%-kv fp4: llama%.cpp has no FP4 KV cache"),
       "llama.cpp fp4 KV on B200 refused: " .. tostring(e))
  t.ok(pcall(run, { gpu = "rtx-4090", kv = "int8", runtime = "llama.cpp" }),
       "llama.cpp int8 KV (q8_0) priced")
  t.ok(pcall(run, { gpu = "h100-sxm", kv = "fp8", runtime = "vllm" }), "vLLM fp8 KV still priced")
end

t.done_testing()
