-- Eager PyTorch's own memory-bound kernels stream at the catalog's
-- achievable.eager.hbm share of the streaming rate (engine/train_prep.c
-- prepare; catalog/archs.lua blackwell: 0.87, cuDNN-frontend's norm
-- benchmark, PyTorch's RMSNorm on GB200 against H200 at the same shapes).
-- Run with ./gpuplan run tests/lua/eager_hbm.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(6)

local op = t.op
local cat = gp.catalog()
local llama1b = { name = "Llama 3.2 1B", layers = 16, hidden = 2048, heads = 32, kv_heads = 8,
                  head_dim = 64, ffn_hidden = 8192, ffn_gated = true, vocab = 128256,
                  tied_embeddings = true, params_b = 1.24 }
local job = { model = llama1b, gpu = "b200", gpus = 1, method = "full", seq = 4096, batch = 3,
              global_batch = 3, optimizer = "sgd", stack = "hf", kernels = "eager",
              attn_kernel = "cudnn", cat = cat }

local arch = cat.archs.blackwell.achievable
t.is(arch.eager.hbm, 0.87, "blackwell: eager PyTorch kernels at 0.87 of the streaming rate")

local with = gp.train(job)
local saved = arch.eager
arch.eager = nil
local without = gp.train(job)
arch.eager = { hbm = 0.5, reason = saved.reason, source = saved.source }
local half = gp.train(job)
arch.eager = saved

-- The residual adds are memory-bound kernels only: t(f) = K / f + c, K
-- their bytes at the streaming rate, c the fixed fill and launch of each
-- (the same at every f).  Then, whatever K and c,
-- (t(0.5) - t(0.87)) / (t(0.87) - t(1)) = (2 - 1/0.87) / (1/0.87 - 1)
-- = 0.85057 / 0.14943 = 5.692; 1e-6: rounding only.
local r1 = op(without, "residual").fwd
local r87 = op(with, "residual").fwd
local r50 = op(half, "residual").fwd
t.near((r50 - r87) / (r87 - r1), (2 - 1 / 0.87) / (1 / 0.87 - 1), 1e-6,
       "residual add: its bytes at 1/0.87 the time, its fixed part unscaled")
t.ok(r87 > r1, "the eager step's memory-bound kernels take longer on Blackwell")

-- The same job on the fused kernels (Megatron-style fused modules, not
-- PyTorch's own) keeps the streaming rate: nothing moves.
local fused = t.with(job, { kernels = "fused" })
local f_with = gp.train(fused)
arch.eager = nil
local f_without = gp.train(fused)
arch.eager = saved
t.is(f_with.step_s, f_without.step_s, "fused kernels: the streaming rate unchanged")

-- Hopper states no eager share: its eager step is priced as before (the
-- H200 rows of the same cuDNN-frontend table sit within 1% on it).
local h = gp.train(t.with(job, { gpu = "h200-sxm" }))
t.ok(cat.archs.hopper.achievable.eager == nil and h.step_s > 0,
     "hopper: no eager share, the streaming rate as measured")

-- A share outside (0, 1] is refused by the catalog check.
local schema = require "gpuplan.schema"
local bad = { id = "blackwell-bad", name = "x", launch_overhead = "4us",
              achievable = { gemm = { bf16 = 0.78 }, hbm = 0.85, reason = "x", source = "y",
                             eager = { hbm = 1.5, reason = "x", source = "y" } } }
local v, e = schema.check(bad, schema.arch)
t.ok(v == nil and e and e.path:find("eager.hbm", 1, true), "eager.hbm 1.5: refused at achievable.eager.hbm")
