-- FSDP1's upcast of the unsharded gradient to the reduction's dtype: with
-- MixedPrecision(param_dtype=bf16, reduce_dtype=fp32) (Composer's DEFAULT,
-- the llm-foundry profile's grad_reduce fp32), _post_backward_hook runs
-- "flat_param.grad.data = flat_param.grad.to(handle._reduce_dtype)" on the
-- post-backward stream before _reduce_grad (torch/distributed/fsdp/
-- _runtime_utils.py, torch 2.0-2.6): a read of the bf16 gradient and a
-- write of its fp32 copy, each layer and micro-batch, beside the divide
-- and the reduce-scatter (engine/train_stage.c fsdp_copies).
-- Run with ./gpuplan run tests/lua/fsdp1_upcast.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(4)

-- Llama 3 70B on 32 H100s, FSDP full_shard on the hf stack, full
-- recompute, 2 micro-batches of 1024 tokens, both overlaps off (every
-- pass on the path), gradients reduced in fp32 (4 B an element).
local P = gp.params("llama3-70b").per_layer_max
local job = { model = "llama3-70b", gpu = "h100-sxm", gpus = 32, zero = 3, fsdp = "full_shard",
              batch = 1, global_batch = 64, seq = 1024, recompute = "full", method = "full",
              stack = "hf", overlap_param_gather = false, overlap_grad_reduce = false,
              grad_reduce = "fp32", margin = 0 }
local dev = gp.roofline { gpu = "h100-sxm" }.device
-- One memory-bound pass on the roofline (engine/roofline.c roof_eval, as
-- tests/lua/fsdp_version.t): bytes / (mem_bw x hbm) + ROOF_MEM_FILL
-- (3.9 us) + the graph-launch gap.
local BW = dev.mem_bw * dev.hbm
local function K(bytes) return bytes / BW + 3.9e-6 + dev.graph_launch end

local v1 = gp.train(t.with(job, { fsdp_version = 1 }))
local v2 = gp.train(t.with(job, { fsdp_version = 2 }))
-- Hand derivation, per layer and micro-batch (80 layers, 2 micro-
-- batches).  FSDP1 on the reduction's stream, one pass of summed bytes:
-- the divide of the fp32 gradient (read and write, 8P) and the upcast
-- (read 2P, write 4P): K(14P); on the compute stream autograd's cat of
-- the bf16 views' gradients, K(4P).  FSDP2: two copy-outs of the 16-bit
-- gathers, K(4P) each, and the copy-in (read 2P, write 4P), K(6P); no
-- divide.  The ends (E = H = 128256 x 8192 weights, llama3-70b's
-- untied embedding and output layer) take the same passes once a
-- micro-batch each, gathered once: FSDP1 K(14E) + K(4E), FSDP2 K(4E) +
-- K(6E).  The collectives are the same.  So
-- v1 - v2 = 2 x (80 x (K(14P) + K(4P) - 2 K(4P) - K(6P))
--                + K(14E) - K(6E) + K(14H) - K(6H));
-- without the upcast K(8P) and K(8E) would stand in place of K(14P) and
-- K(14E), and the difference would be negative.  Tolerance 1e-6
-- relative: the same sums in another order.
local pr = gp.params("llama3-70b")
local E, H = pr.embedding, pr.lm_head
local want = 2 * (80 * (K(14 * P) + K(4 * P) - 2 * K(4 * P) - K(6 * P)) +
                  K(14 * E) - K(6 * E) + K(14 * H) - K(6 * H))
t.near((v1.step_s - v2.step_s) / want, 1, 1e-6,
  "FSDP1 under an fp32 reduction: the divide and the upcast on the reduction's stream")

-- With the reduction in the compute dtype (grad_reduce bf16) there is no
-- upcast ("flat_param.grad.dtype != handle._reduce_dtype" is false):
-- v1 - v2 = 80 x 2 x (K(4P) [divide] + K(4P) [cat] - 3 K(4P)) =
-- -80 x 2 x K(4P), as tests/lua/fsdp_version.t states (the ends' passes
-- cancel: K(4E) + K(4E) on either side).
local b1 = gp.train(t.with(job, { fsdp_version = 1, grad_reduce = "bf16" }))
local b2 = gp.train(t.with(job, { fsdp_version = 2, grad_reduce = "bf16" }))
t.near((b2.step_s - b1.step_s) / (80 * 2 * K(4 * P)), 1, 1e-6,
  "no upcast where the gradient is already in the reduction's dtype")

-- The gradient FSDP1 upcasts is in the parameters' compute dtype (bf16
-- here), whatever the saved activations' bytes (act_bytes): 4 B saved
-- activations under a bf16 reduction price no upcast (the difference is
-- the one above), and under an fp32 one the same upcast as with 2 B
-- (the first difference).  The activations' own passes are the same in
-- FSDP1 and FSDP2, so they cancel.  Tolerance 1e-6 relative: as above.
local a1 = gp.train(t.with(job, { fsdp_version = 1, grad_reduce = "bf16", act_bytes = 4 }))
local a2 = gp.train(t.with(job, { fsdp_version = 2, grad_reduce = "bf16", act_bytes = 4 }))
t.near((a2.step_s - a1.step_s) / (80 * 2 * K(4 * P)), 1, 1e-6,
  "act_bytes 4 under a bf16 reduction: no upcast")
local f1 = gp.train(t.with(job, { fsdp_version = 1, act_bytes = 4 }))
local f2 = gp.train(t.with(job, { fsdp_version = 2, act_bytes = 4 }))
t.near((f1.step_s - f2.step_s) / want, 1, 1e-6,
  "act_bytes 4 under an fp32 reduction: the bf16 gradient's upcast")
