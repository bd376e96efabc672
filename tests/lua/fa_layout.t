-- Transformer Engine's FlashAttention backend copies Megatron-Core's sbhd
-- q, k, v and output to and from the bshd layout its kernels take
-- (fa_layout; engine/train_layer.c fa_layout_costs): attn_kernel fa2 or
-- fa3 on the megatron stack; cuDNN's kernel takes sbhd as it is.  Run with
-- ./gpuplan run tests/lua/fa_layout.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(5)

-- The attention operator's two passes of a job (r.ops row "attention").
local function attn(j)
  for _, o in ipairs(gp.train(j).ops) do
    if o.name == "attention" then return o.fwd, o.bwd end
  end
end
-- The same kernel on the hf stack with compiled kernels (torch modules
-- handing FlashAttention bshd tensors: no copies) is the reference.
local function extra(j)
  local mf, mb = attn(t.with(j, { stack = "megatron" }))
  local hf, hb = attn(t.with(j, { stack = "hf", kernels = "fused" }))
  return mf - hf, mb - hb
end

-- Llama 2 7B (MHA, 32 heads of 128: q = k = v = o = 4096 elements a
-- token), one sequence of T = 4096 tokens on one H100 SXM, TP 1, A = 2 B.
-- MHA's fused qkv output is sbh3d and head_dim is 128, T >= 512: one
-- prepare kernel over q, k, v (read and write, 2 x 3 x 4096 x 4096 x 2 B
-- = 201.3 MB) and the output's copy (2 x 4096 x 4096 x 2 B = 67.1 MB)
-- forward; the output gradient's copy and the interleaving backward, the
-- same bytes.  Each pass at H100's streaming rate 3.35 TB/s x 0.84 (the
-- catalog's hbm fraction) = 2.814 TB/s, plus the memory pipeline's fill
-- (3.9 us, roofline.c ROOF_MEM_FILL) and a graph launch (1 us): 71.5 +
-- 4.9 + 23.8 + 4.9 = 105.2 us each way.  Tolerance 1%: the rate is the
-- catalog's, the rest exact.
local rate = 3.35e12 * 0.84
local pass = 3.9e-6 + 1e-6
local job = { model = "llama2-7b", gpu = "h100-sxm", gpus = 1, method = "pretrain",
              seq = 4096, batch = 1, global_batch = 1, recompute = "none",
              attn_kernel = "fa2" }
local T = 4096
local mha = 2 * 3 * T * 4096 * 2 / rate + pass + 2 * T * 4096 * 2 / rate + pass
local f, b = extra(job)
t.near(f, mha, 0.01, "MHA fa2: q, k, v prepared in one kernel, the output copied")
t.near(b, mha, 0.01, "MHA fa2 backward: the output gradient copied, q, k, v interleaved")

-- Llama 3 8B (GQA, 32 query and 8 KV heads of 128: q = o = 4096, k = v =
-- 1024 a token): each of q, k, v its own transpose copy (2 x 4096, 2 x
-- 1024, 2 x 1024 elements a token moved) and the output's forward, 4
-- passes: 23.8 + 6.0 + 6.0 + 23.8 us and 4 fills, 79.2 us; backward only
-- the output gradient's copy (the q, k, v gradients pass back as views),
-- 28.8 us.
local gqa = t.with(job, { model = "llama3-8b" })
local gf, gb = extra(gqa)
t.near(gf, 2 * (2 * T * 4096 * 2 / rate + pass) + 2 * (2 * T * 1024 * 2 / rate + pass), 0.01,
       "GQA fa2: three copies and the output's")
t.near(gb, 2 * T * 4096 * 2 / rate + pass, 0.01, "GQA fa2 backward: the output gradient's copy")

-- cuDNN's fused attention takes sbhd: the megatron stack adds nothing.
local cf, cb = extra(t.with(job, { attn_kernel = "cudnn" }))
t.ok(cf == 0 and cb == 0, "cudnn: no layout copies")
