-- ep_overlap: Megatron-Core's combined 1F1B runs a micro-batch's expert
-- all-to-alls under another's compute in its steady state only
-- (engine/train_stage.c ep_steady): without pipelining the first forward
-- and the last backward run alone; with the interleaved schedule a
-- stage's warmup forwards and cooldown backwards, (pp - k - 1) x 2 +
-- (vpp - 1) x pp + 1 of its m x vpp chunks.
-- Run with ./gpuplan run tests/lua/ep_overlap.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(4)

local function part(r, n)
  for _, p in ipairs(r.parts) do if p.name == n then return p.seconds end end
  return 0
end
-- Qwen3-30B-A3B on 8 H100s, EP 8, 4096-token micro-batches: each layer's
-- all-to-alls are shorter than its compute, so an overlapped chunk shows
-- OVERLAP_SLOWDOWN = 0.189 of them (the compute they slow) and a lone one
-- all of them.  m micro-batches a step, one alone each way: the exposed
-- share is (m - 1)/m x 0.189 + 1/m of what runs without the overlap
-- (1e-9: the same sums).
local s = 0.189
local job = { model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 8, ep = 8, seq = 4096,
              batch = 1, stack = "megatron", zero = 1, method = "pretrain" }
local function ratio(x)
  local on = gp.train(t.with(job, t.with(x, { ep_overlap = true })))
  local off = gp.train(t.with(job, t.with(x, { ep_overlap = false })))
  return part(on, "ep_comm") / part(off, "ep_comm")
end
t.near(ratio { global_batch = 32 }, 3 / 4 * s + 1 / 4, 1e-9,
       "pp 1, 4 micro-batches: the first forward and last backward alone")
t.near(ratio { global_batch = 128 }, 15 / 16 * s + 1 / 16, 1e-9,
       "pp 1, 16 micro-batches: 1 of 16 alone")
-- PP 2, VPP 4 on 16 GPUs (EP 8, DP 8), 16 micro-batches: either stage's
-- chunks are 16 x 4 = 64; stage 0 runs 2 + 3 x 2 + 1 = 9 of them alone,
-- stage 1 (k = 1) 0 + 6 + 1 = 7.  The step is the slowest stage's, here
-- the last (it holds the head): 57/64 x 0.189 + 7/64.
local r = ratio { gpus = 16, pp = 2, vpp = 4, global_batch = 128 }
t.near(r, 57 / 64 * s + 7 / 64, 1e-9, "pp 2 vpp 4: the last stage runs 7 of its 64 chunks alone")
-- DualPipe pairs its own chunks: no lone ones charged here.
local d = gp.train(t.with(job, { gpus = 16, pp = 2, schedule = "dualpipe", global_batch = 128,
                                 ep_overlap = true }))
local dn = gp.train(t.with(job, { gpus = 16, pp = 2, schedule = "dualpipe", global_batch = 128,
                                  ep_overlap = false }))
t.near(part(d, "ep_comm") / part(dn, "ep_comm"), s, 1e-9, "dualpipe: every chunk paired")

t.done_testing()
