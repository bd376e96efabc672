-- checkpoint_offload_streams: checkpoint_offload's copies on a side CUDA
-- stream, torchtune's OffloadActivations (use_streams=True): each layer's
-- copy out runs beside a layer's forward and its copy back beside a
-- layer's backward, so a micro-batch adds only what the copies outlast,
-- L (max(0, t - lf) + max(0, t - lb)) (engine/train.c
-- ckpt_offload_stream_time), where the compute-stream copies add 2 L t.
-- Run with ./gpuplan run tests/lua/ckpt_offload_streams.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(8)

local function train(o)
  local b = { model = "llama3-8b", gpu = "a100-sxm-80gb", gpus = 1, seq = 2048, batch = 1,
              global_batch = 1, stack = "hf", recompute = "full", precision = "bf16" }
  for k, v in pairs(o) do b[k] = v end
  return gp.train(b)
end

-- Llama 3 8B, seq 2048, micro-batch 1: a checkpoint is 2048 x 4096 x 2 B
-- = 16 MiB, t = 16,777,216 / 25.216e9 = 0.665 ms over the A100's PCIe
-- Gen4 link (tests/lua/ckpt_offload.t).  A layer's forward is about 2 x
-- 218e6 parameters x 2048 tokens = 0.89 TFLOP, several ms at the A100's
-- 312 TFLOP/s: every copy hides, the step is the one without offload.
-- 1e-9 relative: the same sums.
local r0 = train {}
local r1 = train { checkpoint_offload = true }
local r2 = train { checkpoint_offload = true, checkpoint_offload_streams = true }
t.ok(r1.step_s > r0.step_s, "compute-stream copies lengthen the step (tests/lua/ckpt_offload.t)")
t.near(r2.step_s, r0.step_s, 1e-9, "side-stream copies under a layer's compute add nothing")
t.near(r2.memory.total, r1.memory.total, 1e-9, "the same memory: only where the copies run moves")

-- A narrow model (hidden 128, one head, 512 sequences of 512 tokens):
-- a checkpoint is 512 x 512 x 128 x 2 B = 67,108,864 B, t = 2.661 ms over
-- the 25.216 GB/s link (PCIe Gen4 x16: 16 x 0.985 GB/s x 2 x 0.8,
-- gpuplan.comm host_link_bw, tests/lua/ckpt_offload.t), longer than a
-- layer's forward (its ops' forward, about 2.4 ms: the 262,144 tokens'
-- norms and activations at 128 wide are memory-bound, well above the
-- 0.10 TFLOP of its 24 h^2 matmul FLOP a token) but shorter than its
-- backward (about 4.3 ms, the re-run forward and the gradients), so the
-- copy out shows its excess and the copy back hides -- less than the
-- compute-stream copies' 2 L t = 2 x 16 x 2.661 ms = 85.16 ms, which the
-- compute-stream run adds whole (1e-9: the same sums).
local narrow = { layers = 16, hidden = 128, heads = 1, ffn_hidden = 512, vocab = 512 }
local function n(o)
  local b = { model = narrow, seq = 512, batch = 512, global_batch = 512, kernels = "fused" }
  for k, v in pairs(o) do b[k] = v end
  return train(b)
end
local n0, n1 = n {}, n { checkpoint_offload = true }
local n2 = n { checkpoint_offload = true, checkpoint_offload_streams = true }
t.near(n1.step_s - n0.step_s, 2 * 16 * 512 * 512 * 128 * 2 / (16 * 0.985e9 * 2 * 0.8), 1e-9,
       "compute-stream copies: 2 L t = 85.16 ms")
t.ok(n2.step_s > n0.step_s and n2.step_s < n1.step_s,
     "copies longer than the compute: the excess added, less than 2 L t")
-- Exactly: L (max(0, t - lf) + max(0, t - lb)) with lf, lb a layer's
-- forward and backward as the step's ops give them (t.layer_fwd, the ops'
-- bwd summed); 1e-9: the same sums in another order.
local lf, lb = t.layer_fwd(n0), 0
for _, o in ipairs(n0.ops) do lb = lb + o.bwd end
local tc = 512 * 512 * 128 * 2 / (16 * 0.985e9 * 2 * 0.8)
t.near(n2.step_s - n0.step_s, 16 * (math.max(0, tc - lf) + math.max(0, tc - lb)), 1e-9,
       string.format("side-stream copies: 16 x (%.3f - %.3f ms) forward, the backward's "
                     .. "%.3f ms hides the copy back", tc * 1e3, lf * 1e3, lb * 1e3))
t.ok(lf < tc and tc < lb, "the case it tests: a copy longer than the forward, shorter than the backward")

t.raises(function() train { checkpoint_offload_streams = true } end,
  "checkpoint_offload_streams runs the copies of checkpoint_offload on a side stream: it needs "
  .. "checkpoint_offload = true", "without checkpoint_offload: refused, naming it", true)
