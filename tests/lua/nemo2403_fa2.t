-- NeMo's long-sequence table (Llama 2 7B FP8 on DGX-H100, the
-- nemo:24.03.01.framework container) ran FlashAttention-2: the NeMo
-- Framework Launcher's config for that container sets "NVTE_FUSED_ATTN: 0
-- # Disable cudnn FA until we've tested it more" (launcher_scripts/conf/
-- config.yaml at b434fd3e), so Transformer Engine leaves cuDNN's fused
-- attention for flash-attn.  Its nine cases state attn_kernel fa2, and the
-- predictor prices their attention at FlashAttention-2's Hopper rate.
-- Run with ./gpuplan run tests/lua/nemo2403_fa2.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(4)

local doc = t.shipped_cases()
local rows, n16 = {}, nil
for _, c in ipairs(doc.cases or doc) do
  if c.id:find("^nemo2403%-longseq%-") then
    rows[#rows + 1] = c
    if c.id == "nemo2403-longseq-llama2-7b-fp8-h100-16k" then n16 = c end
  end
end

-- The table's nine rows (4K to 1024K), each stating the kernel and
-- quoting the launcher's line in its notes.
local stated = 0
for _, c in ipairs(rows) do
  if c.workload.attn_kernel == "fa2" and c.notes:find("NVTE_FUSED_ATTN: 0", 1, true) then
    stated = stated + 1
  end
end
t.is(#rows == 9 and stated, 9, "the nine rows state attn_kernel fa2 and quote the launcher")

-- The predictor hands the kernel on: no attn_kernel default is said.
local row = require("gpuplan.validate").predict(n16, gp.catalog())
local dfl = type(row.defaults) == "table" and table.concat(row.defaults, ";") or tostring(row.defaults)
t.ok(not dfl:find("attn_kernel=", 1, true) and dfl:find("stack profile=nemo", 1, true),
  "stated: the stack profile's cuDNN is not assumed")

-- The 16K row (TP 2, no CP) as priced: per layer and micro-batch the
-- causal forward is F = 2 s^2 d h = 2 x 16384^2 x 128 x 16 (the TP
-- rank's 16 heads) = 1.0995e12 FLOP.  At 16384 tokens, past the 8k
-- reference, the shape term is capped at 1 and FlashAttention-2 has no
-- length curve, so the kernel runs at its fraction of the sustained
-- peak: 0.39 x 0.82 x 989 = 316.3 TFLOP/s forward, 3.476 ms.  Transformer
-- Engine hands flash-attn bshd tensors and copies Megatron-Core's sbhd
-- q, k, v (one sbh3d buffer: read and written, 2 (q + kv) A bytes) and
-- the output (2 o A) in the forward: q = o = 16384 x 2048, kv = 2 q,
-- A = 2: 5.369e8 B at 0.84 x 3.35 TB/s = 0.1908 ms.  Forward 3.667 ms.
-- The backward: 2.5 F at 0.345 x 0.82 x 989 = 279.8 TFLOP/s, 9.824 ms,
-- plus the output gradient's and the q, k, v gradients' copies (the same
-- 5.369e8 B, 0.1908 ms): 10.015 ms.  Tolerance 0.5%: each pass adds a
-- launch (a few us) to a 3-10 ms kernel, and the fractions and the
-- bandwidth are rounded in the catalog (0.1%).
local r = gp.train { batch = 1, cp = 1, flash = true, global_batch = 256, gpu = "h100-sxm",
  gpus = 16, gpus_per_node = 8, grad_reduce = "bf16", master_copy = false, method = "pretrain",
  nic_fabric = "ib-ndr-400", nics = 8, pp = 1, precision = "fp8", recompute = "none",
  seq = 16384, sp = true, stack = "megatron", tp = 2, tp_overlap = true, unfused_loss = true,
  zero = 1, attn_kernel = "fa2",
  model = { ffn_gated = true, ffn_hidden = 11008, heads = 32, hidden = 4096, id = "Llama 2 7B",
    kv_heads = 32, layers = 32, norm = "rms", split_proj = "both", tied_embeddings = false,
    vocab = 32000 } }
local a = t.op(r, "attention")
local F = 2 * 16384 ^ 2 * 128 * 16
local copies = (2 * (16384 * 2048 * 3) * 2 + 2 * 16384 * 2048 * 2) / (0.84 * 3.35e12)
t.near(a.fwd, F / (0.39 * 0.82 * 989e12) + copies, 0.005,
  "16K forward: FlashAttention-2's rate plus the layout copies")
t.near(a.bwd, 2.5 * F / (0.345 * 0.82 * 989e12) + copies, 0.005,
  "16K backward: FlashAttention-2's rate plus the layout copies")
