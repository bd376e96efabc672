-- llama.cpp's GGUF types as gp.infer's weights: each tensor at the type
-- llama.cpp's quantize gives it (src/llama-quant.cpp), where bits alone
-- put the file's mean on the layers and 16 bits on the embedding and the
-- output (Llama 3 8B at "4.89 bits": 6.37 GB against the 4.92 GB file).
-- And llama.cpp's default KV cache type, f16.
-- Run: prove --exec './gpuplan run' tests/lua/gguf_types.t
local t = require "tap"
local gp = require "gpuplan"

local job = { model = "llama3-8b", gpu = "rtx-4090", runtime = "llama.cpp", weights = "Q4_K_M",
              batch = 1 }
local r = gp.infer(job)
-- Llama 3 8B at Q4_K_M, by hand.  A layer: q, o 4096 x 4096 = 16777216
-- each, k, v 4096 x 1024 = 4194304 each, gate, up, down 4096 x 14336 =
-- 58720256 each.  Q4_K (144 B a 256-weight block: 4.5 bits) but attn_v
-- and ffn_down, Q6_K (210 B: 6.5625) in the 16 of 32 layers
-- use_more_bits picks (i < 4, i >= 28, i = 6, 9, ... 27): 32 layers x
-- (155189248 x 4.5 + 62914560 x (4.5 + 6.5625) / 2) bits = 4185391104 B;
-- token_embd Q4_K, 128256 x 4096 x 4.5 / 8 = 295501824 B; output Q6_K,
-- 525336576 x 6.5625 / 8 = 430940160 B; 65 norms of 4096 at 16 bits,
-- 532480 B.  Sum 4912365568 B (exact: the same sums the engine adds).
t.near(r.weights_total, 4912365568, 1e-9, "Q4_K_M: 4912365568 B, tensor by tensor")
-- ... the file's size: tools/quantize/README.md "| Q4_K_M | 4.8944 | 4.58 |"
-- (GiB); 4.575 GiB, within the table's rounding and the file's metadata
t.ok(math.abs(r.weights_total / 2 ^ 30 - 4.58) < 0.01, "within 0.01 GiB of the 4.58 GiB file")
t.is(r.weights, "Q4_K_M", "the result names the type")
-- The same mean bits (4.7975) as a plain number: 16-bit embedding and head,
-- 2 x 525336576 x 2 B, in place of the two above.
local plain = gp.infer(t.with(job, { weights = 1046347776 / 218103808 }))
t.near(plain.weights_total, 4185391104 + 4 * 525336576 + 532480, 1e-9,
  "bits alone: the layers at the mean, the ends at 16 bits")
-- The decode reads the head once a token: at 6.5625 bits it is faster.
t.ok(r.itl_batch1_s < plain.itl_batch1_s, "the Q6_K head decodes faster than a 16-bit one")
-- Q8_0 keeps its output at Q8_0 (34 B a 32-weight block: 8.5 bits
-- everywhere): 8.5 x (32 x 218103808 + 2 x 525336576) / 8 + 532480
local q8 = gp.infer(t.with(job, { weights = "q8_0" }))
t.near(q8.weights_total, 8.5 * (32 * 218103808 + 2 * 525336576) / 8 + 532480, 1e-9,
  "Q8_0: every tensor at 8.5 bits, output too")
-- Llama 3 70B (80 layers, grouped KV: llama.cpp's LLM_TYPE_70B, whose
-- Q4_K attn_v becomes Q5_K): 42.51 GB, the README's 39.60 GiB file
-- (42.52 GB) within its rounding.
local big = gp.infer { model = "llama3-70b", gpu = "rtx-4090", gpus = 2, pp = 2,
                       runtime = "llama.cpp", weights = "Q4_K_M", batch = 1 }
t.ok(math.abs(big.weights_total / 2 ^ 30 - 39.60) < 0.02, "70B Q4_K_M: the 39.60 GiB file")
-- KV: llama.cpp's default cache type is f16 (common.h cache_type_k)
t.is(r.kv, "fp16", "llama.cpp: fp16 KV by default")
t.ok(t.said(r, "llama.cpp's default cache type", true), "... and the defaults say whose default")
-- An MoE model's expert tensors are not laid out: refused, naming bits.
t.raises(function() gp.infer(t.with(job, { model = "mixtral-8x7b" })) end,
  "laid out for dense models; give the file's bits per weight", "an MoE model: refused")
t.done_testing()
