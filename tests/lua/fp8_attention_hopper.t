-- fp8_attention on Hopper: cuDNN's fused FP8 attention (Transformer
-- Engine's fp8_dpa with its FP8 backward, NVTE_FP8_DPA_BWD=1) priced at
-- its measured time over the 16-bit kernel's, from cudnn-frontend's H200
-- results (cuDNN 9.19, 64 query / 8 KV heads of 128, causal; engine/
-- train_price.c train_attn_fp8_sm90):
--   tokens   2048   4096   8192   16384  32768
--   fwd      0.690  0.692  0.668  0.667  0.660
--   bwd      0.942  1.006  1.258  1.548  1.569
-- interpolated in log2 of the call's queries.
-- Run with ./gpuplan run tests/lua/fp8_attention_hopper.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(12)

local op = t.op
-- A Llama-2-70B-shaped model (80 layers, 8192 wide, 64 query and 8 KV
-- heads of 128: the measured kernels' shape), one 8-GPU H100 node, TP 8,
-- one sequence a micro-batch, FP8 GEMMs on Megatron's fused stack.
local model = { name = "llama2-70b-shape", layers = 80, hidden = 8192, heads = 64,
                kv_heads = 8, ffn_hidden = 28672, ffn_gated = true, vocab = 32000,
                tied_embeddings = false }
local job = { gpu = "h100-sxm", gpus = 8, tp = 8, sp = true, batch = 1, global_batch = 8,
              seq = 8192, stack = "megatron", precision = "fp8", method = "pretrain",
              model = model }
local function att(x)
  return op(gp.train(t.with(job, x)), "attention")
end

-- Each ratio is the FP8 op's time over the 16-bit op's.  Both run
-- compute-bound (8 query heads a rank, a causal square of 6144 to 65536
-- tokens: 0.18 to 60 ms), and the catalog's per-kernel launch, not
-- scaled, sits beside them (0.15% of the ratio at 8192): 0.5% tolerance.
local a16, a8 = att {}, att { fp8_attention = true }
-- 8192 queries a call: the table's 8192 row exactly.
t.near(a8.fwd / a16.fwd, 0.668, 5e-3, "8192 tokens: forward at 1.141 / 1.708 ms = 0.668")
t.near(a8.bwd / a16.bwd, 1.258, 5e-3, "8192 tokens: backward at 6.392 / 5.083 ms = 1.258")

-- Context parallelism 2: a rank's call holds 4096 queries, the 4096 row.
local c16, c8 = att { cp = 2, tp = 4 }, att { cp = 2, tp = 4, fp8_attention = true }
t.near(c8.fwd / c16.fwd, 0.692, 5e-3, "cp 2 (4096 a rank): forward 0.322 / 0.465 = 0.692")
t.near(c8.bwd / c16.bwd, 1.006, 5e-3, "cp 2 (4096 a rank): backward 1.459 / 1.450 = 1.006")

-- 6144 tokens, between the rows: f = log2(6144 / 4096) = 0.58496;
-- forward 0.692 + f (0.668 - 0.692) = 0.67796, backward
-- 1.006 + f (1.258 - 1.006) = 1.15341.
local m16, m8 = att { seq = 6144 }, att { seq = 6144, fp8_attention = true }
t.near(m8.fwd / m16.fwd, 0.67796, 5e-3, "6144 tokens: forward interpolated in log2, 0.678")
t.near(m8.bwd / m16.bwd, 1.15341, 5e-3, "6144 tokens: backward interpolated in log2, 1.153")

-- Past the last row, the last row's: 65536 queries a call at 32768's.
local l16, l8 = att { seq = 65536 }, att { seq = 65536, fp8_attention = true }
t.near(l8.fwd / l16.fwd, 0.660, 5e-3, "65536 tokens: forward at the 32768 row's 0.660")
t.near(l8.bwd / l16.bwd, 1.569, 5e-3, "65536 tokens: backward at the 32768 row's 1.569")

-- Off the measured kernels, refused by name.
local function err(x)
  local ok, e = pcall(gp.train, t.with(t.with(job, { fp8_attention = true }), x))
  return not ok and tostring(type(e) == "table" and e.msg or e) or ""
end
t.like(err { model = t.with(model, { head_dim = 64, heads = 128 }) },
       "fp8_attention on h100%-sxm %(hopper%).*head dim 128 only.*64",
       "Hopper, head dim 64: refused (cuDNN's Hopper FP8 backward takes 128 only)")
t.like(err { model = t.with(model, { sliding_window = { size = 4096, layers = 40 } }) },
       "fp8_attention on h100%-sxm %(hopper%).*sliding window on Blackwell only",
       "Hopper, sliding window: refused")
-- Ada (L40S: FP8 tensor cores, no FP8 fused attention measured): refused.
t.like(err { gpu = "l40s" },
       "fp8_attention is priced from cuDNN's FP8 attention kernels on Hopper and Blackwell; l40s is ada",
       "Ada: refused, naming the arch")
-- fp8_activations with adapters: still refused, naming the key.
local ok, e = pcall(gp.train, t.with(job, { method = "lora", lora_rank = 16,
                                           fp8_activations = true }))
t.like(not ok and tostring(type(e) == "table" and e.msg or e) or "",
       "fp8_activations applies to full training, not to adapters %(lora%)",
       "lora with fp8_activations: refused by name")
