-- NeMo's 24.07 performance tables (DGX-H100, FP8, the nemo:24.07 container)
-- ran FlashAttention-2 but for GPT-3 175B.  The NeMo Framework Launcher's
-- 24.07 release commit (0b1a110c) sets "NVTE_FUSED_ATTN: 0 # Disable cudnn
-- FA until we've tested it more" in the env_vars of every stage
-- (launcher_scripts/conf/config.yaml), and no training yaml or example
-- script of the thirteen other rows overrides it, so Transformer Engine
-- (1.8.0.dev0) leaves cuDNN's fused attention for flash-attn.  GPT-3
-- 175B's two rows have the layout of NVIDIA's performance branch (VP 6),
-- which turns cuDNN back on for 175B only ("+env_vars.NVTE_FUSED_ATTN=1",
-- 95c77b59; "NVTE_FUSED_ATTN: 1" in gpt3/175b_mlperf.yaml, 121c975d).
-- Run with ./gpuplan run tests/lua/nemo2407_fa2.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(5)

local doc = t.shipped_cases()
local fa2, cudnn, byid = 0, 0, {}
local n = 0
for _, c in ipairs(doc.cases or doc) do
  if c.id:find("^nemo2407%-") then
    n = n + 1
    byid[c.id] = c
    local k = c.workload.attn_kernel
    if c.id:find("gpt3%-175b") then
      if k == "cudnn" and c.notes:find("+env_vars.NVTE_FUSED_ATTN=1", 1, true)
         and c.notes:find("NVTE_FUSED_ATTN: 1", 1, true) then
        cudnn = cudnn + 1
      end
    elseif k == "fa2" and c.notes:find("NVTE_FUSED_ATTN: 0 # Disable cudnn FA until we've tested it more", 1, true)
           and c.notes:find("0b1a110c", 1, true) then
      fa2 = fa2 + 1
    end
  end
end

-- The tables' fifteen rows: thirteen state fa2 and quote the release's
-- line and commit, the two GPT-3 175B rows state cudnn and quote the
-- performance branch's override.
t.is(n == 15 and fa2, 13, "thirteen rows state attn_kernel fa2 and quote the launcher's release")
t.is(cudnn, 2, "the GPT-3 175B rows state cudnn and quote the 175B override")

-- The predictor hands the stated kernel on: neither kernel is a default.
local v = require "gpuplan.validate"
local ok = true
for _, id in ipairs { "nemo2407-pretrain-llama3-8b", "nemo2407-finetune-llama2-70b-lora",
                      "nemo2407-pretrain-gpt3-175b-512" } do
  local row = v.predict(byid[id], gp.catalog())
  local dfl = type(row.defaults) == "table" and table.concat(row.defaults, ";") or tostring(row.defaults)
  ok = ok and not dfl:find("attn_kernel=", 1, true) and dfl:find("stack profile=nemo", 1, true) ~= nil
end
t.ok(ok, "stated: no attn_kernel default is assumed")

-- Llama 3 8B (32 query and 8 KV heads of 128) at 8192 tokens, one
-- sequence on one H100 SXM, the megatron stack, FP8 (attention in 16
-- bits), fa2.  Per layer the causal forward is F = 2 s^2 d h = 2 x 8192^2
-- x 128 x 32 = 5.498e11 FLOP.  8192 tokens is the length the kernel's
-- fractions were read at (catalog/FORMAT.md: seq absent = 8192) and head
-- dim 128 the reference, so no shape term: 0.39 x 0.82 x 989 = 316.3
-- TFLOP/s forward, 1.738 ms.  Transformer Engine's sbhd -> bshd copies
-- for GQA (tests/lua/fa_layout.t): q and the output 2 x 8192 x 4096 x 2 B
-- each, k and v 2 x 8192 x 1024 x 2 B each, at 3.35 TB/s x 0.84, each
-- pass plus 4.9 us (memory fill and launch): 0.139 ms; forward 1.877 ms.
-- Backward 2.5 F at 0.345 x 0.82 x 989 = 279.8 TFLOP/s, 4.912 ms, plus
-- the output gradient's copy (52.6 us): 4.965 ms.  cuDNN's 0.53 / 0.45
-- would give 1.279 / 3.766 ms.  Tolerance 0.5%: a launch (about 1 us) per
-- kernel and the catalog's rounding; the model is within 0.06%.
local r = gp.train { model = "llama3-8b", gpu = "h100-sxm", gpus = 1, method = "pretrain",
  seq = 8192, batch = 1, global_batch = 1, recompute = "none", precision = "fp8",
  stack = "megatron", attn_kernel = "fa2" }
local a = t.op(r, "attention")
local T = 8192
local F = 2 * T ^ 2 * 128 * 32
local rate, pass = 3.35e12 * 0.84, 4.9e-6
local cf = 2 * (2 * T * 4096 * 2 / rate + pass) + 2 * (2 * T * 1024 * 2 / rate + pass)
local cb = 2 * T * 4096 * 2 / rate + pass
t.near(a.fwd, F / (0.39 * 0.82 * 989e12) + cf, 0.005,
  "8K forward: FlashAttention-2's Hopper rate plus the GQA layout copies")
t.near(a.bwd, 2.5 * F / (0.345 * 0.82 * 989e12) + cb, 0.005,
  "8K backward: FlashAttention-2's Hopper rate plus the output gradient's copy")
