-- llama.cpp's pipelined ubatches over a layer split, as its May 2024
-- build (b2824) issues them (engine infer_run.c ubatch_ttft,
-- pipe_period; lua/gpuplan/infer.lua M.ubatch): one host thread
-- launches every GPU's split in turn, a stream holds about 1000 pending
-- launches before the next launch waits for a slot (launch_queue), a
-- layer of one ubatch queues 50 launches with quantized weights (their
-- dequant kernel) and 43 with 16-bit ones (ubatch_launches), and each
-- split adds 5 (its input copies and event).  A call of n ubatches over
-- p stages takes p + (n - 1) x stage-passes, x the steady spacing:
--   m = 1000 / launches a GPU; m < 1: x = p - m; else x solves
--   sum over i = 2..p of clamp(p - i x, 0, 1) = m - 1 (1 at m >= p - 1),
--   and x >= p / 5 (GGML_SCHED_MAX_COPIES 4: the host waits on the
--   event of the ubatch 4 back).
-- Every ratio below is a pp run's TTFT over the one-GPU run of the same
-- 4096-token prompt (8 ubatches, 8 passes); the pp run's pass adds its
-- activation hops (512 x hidden x 2 B a boundary, well under 1% of a
-- pass on NVLink, about 2% on the 4090's PCIe): 3% tolerance.
-- Run with ./gpuplan run tests/lua/llamacpp_pipe.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(4)

local L70 = { ffn_gated = true, ffn_hidden = 28672, head_dim = 128, heads = 64, hidden = 8192,
  id = "llama3-70b-test", kv_heads = 8, layers = 80, norm = "rms", split_proj = "both",
  tied_embeddings = false, vocab = 128256 }
local L8 = { ffn_gated = true, ffn_hidden = 14336, head_dim = 128, heads = 32, hidden = 4096,
  id = "llama3-8b-test", kv_heads = 8, layers = 32, norm = "rms", split_proj = "both",
  tied_embeddings = false, vocab = 128256 }

local function ratio(x, pp)
  local base = { input = 4096, output = 2, concurrency = 1, runtime = "llama.cpp" }
  local one = gp.infer(t.with(base, x))
  local many = gp.infer(t.with(base, t.with(x, { gpus = pp, pp = pp })))
  return many.ttft_s / one.ttft_s
end

-- 70B shape, 4.82-bit weights, pp 4: 20 layers x 50 + 5 = 1005 launches
-- a GPU, m = 0.995 < 1: x = 4 - 0.995 = 3.005; (4 + 7 x 3.005) / 4 =
-- 6.259 passes of 8: 0.782 (0.4375 when the ubatches pipelined freely).
t.near(ratio({ model = L70, weights = 4.82, gpu = "h100-sxm" }, 4), 6.259 / 8, 0.03,
       "quantized 70B over 4: the stream's queue holds less than a stage")
-- 70B shape, 16-bit, pp 4: 20 x 43 + 5 = 865, m = 1.156: 4 - 2x = 0.156,
-- x = 1.922; (4 + 7 x 1.922) / 4 = 4.364 passes: 0.5455.
t.near(ratio({ model = L70, weights = "fp16", gpu = "b200" }, 4), 4.364 / 8, 0.03,
       "16-bit 70B over 4: a stage and a sixth queued")
-- 70B shape, 16-bit, pp 8: 10 x 43 + 5 = 435, m = 2.299: 1 + (8 - 3x) =
-- 1.299, x = 2.567; (8 + 7 x 2.567) / 8 = 3.246 passes: 0.4058.
t.near(ratio({ model = L70, weights = "fp16", gpu = "b200" }, 8), 3.246 / 8, 0.03,
       "16-bit 70B over 8: two stages and a third queued")
-- 8B shape, 16-bit, pp 8: 4 x 43 + 5 = 177, m = 5.65: 4 + (8 - 6x) =
-- 4.65, x = 1.225, below the event ring's 8 / 5 = 1.6; (8 + 7 x 1.6) /
-- 8 = 2.4 passes: 0.3.
t.near(ratio({ model = L8, weights = "fp16", gpu = "rtx-4090" }, 8), 2.4 / 8, 0.03,
       "8B over 8: the four input copies bound the ubatches in flight")
