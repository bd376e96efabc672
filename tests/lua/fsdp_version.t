-- fsdp_version: PyTorch FSDP1 and FSDP2 price their own passes over a
-- layer's unsharded parameters and gradients each micro-batch
-- (engine/train_stage.c fsdp_copies).  FSDP1 divides the unsharded
-- gradient in place before its reduce-scatter, on the reduction's stream,
-- and autograd concatenates the split views' gradients into the flat
-- parameter's gradient, on the compute stream; FSDP2 copies each gather out into per-parameter tensors and the
-- gradients into the reduce-scatter input, on the compute stream.
-- Run with ./gpuplan run tests/lua/fsdp_version.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(9)

-- Llama 3 70B on 32 H100s, FSDP full_shard on the hf stack, full
-- recompute, 2 micro-batches of 1024 tokens, both overlaps off, bf16
-- gradients reduced in bf16 (2 B an element).
local P = gp.params("llama3-70b").per_layer_max
local job = { model = "llama3-70b", gpu = "h100-sxm", gpus = 32, zero = 3, fsdp = "full_shard",
              batch = 1, global_batch = 64, seq = 1024, recompute = "full", method = "full",
              stack = "hf", overlap_param_gather = false, overlap_grad_reduce = false,
              grad_reduce = "bf16", margin = 0 }
local dev = gp.roofline { gpu = "h100-sxm" }.device
-- One memory-bound pass on the roofline (engine/roofline.c roof_eval, as
-- tests/lua/ds_buckets.t): bytes / (mem_bw x hbm) + ROOF_MEM_FILL
-- (3.9 us) + the graph-launch gap.
local BW = dev.mem_bw * dev.hbm
local function K(bytes) return bytes / BW + 3.9e-6 + dev.graph_launch end

local def = gp.train(job)
local v1 = gp.train(t.with(job, { fsdp_version = 1 }))
local v2 = gp.train(t.with(job, { fsdp_version = 2 }))
t.is(def.step_s, v1.step_s, "stack hf's FSDP is FSDP1 unless told (Accelerate's default)")
t.like(table.concat(def.defaults, ", "), "fsdp_version=1 %(FSDP1", "and the defaults line says so")

-- Hand derivation, per layer and micro-batch (80 layers, 2 micro-batches,
-- overlaps off, so every pass is on the path).  FSDP1: one in-place
-- divide of the bf16 gradient, a read and a write: K(4P); autograd's
-- concatenation of the views' bf16 gradients into the flat one
-- (split_with_sizes' backward, a cat), K(4P).  FSDP2: a copy-out of each
-- of full_shard's two gathers, a read and a write of the 16-bit
-- weights, K(4P) each; the copy-in, a read of the bf16 gradient and a
-- write in bf16, K(4P); no divide (NCCL's AVG).  So
-- v2 - v1 = 80 x 2 x (3 - 2) K(4P).  Tolerance 1e-6 relative: the same
-- sums in another order.
t.near((v2.step_s - v1.step_s) / (80 * 2 * K(4 * P)), 1, 1e-6,
  "full_shard: FSDP2's two copy-outs and copy-in against FSDP1's divide and cat")

-- shard_grad_op (zero 2) gathers once a micro-batch: one copy-out and
-- the copy-in (FSDP2) against the divide and the cat (FSDP1), two
-- passes of K(4P) each side, so v2 = v1.  Against FSDP1 without its
-- passes (none: the same job on 1 rank is not sharded, so the ratio is
-- taken to the passes themselves): |v2 - v1| below 1e-6 of one layer's
-- K(4P) x 80 x 2.
local sgo = t.with(job, { fsdp = "shard_grad_op", zero = 2, recompute = "none", seq = 512 })
t.ok(math.abs(gp.train(t.with(sgo, { fsdp_version = 2 })).step_s -
        gp.train(t.with(sgo, { fsdp_version = 1 })).step_s) < 1e-6 * 80 * 2 * K(4 * P),
  "shard_grad_op: FSDP2's copy-out and copy-in against FSDP1's divide and cat, equal")

-- With overlap on, FSDP1's divide (on the reduction's stream, ahead of
-- its reduce-scatter) hides under the next layer's backward as the
-- reduce-scatter does, where FSDP2's copies and FSDP1's cat, on the
-- compute stream, stay on the path: v2 - v1 is FSDP2's two copy-outs
-- against FSDP1's cat, 80 x 2 x (3 - 1) K(4P), less the divide's hidden
-- time, at most 80 x 2 x K(4P) (the layers' gathers and reduce-scatters
-- are the same in both): at least 80 x 2 x K(4P).  Less, too, what FSDP1
-- alone leaves exposed at the ends: its root unit (the embedding and the
-- output layer) is gathered whole before the first layer, where FSDP2's
-- output layer gathers under a layer's forward -- at most that gather,
-- ag(H), a micro-batch.
local H = 2 * gp.params("llama3-70b").lm_head
local agH = gp.comm { op = "all_gather", bytes = H, gpus = 32, system = "dgx-h100" }.time
local on = t.with(job, { overlap_param_gather = true, overlap_grad_reduce = true })
local on1, on2 = gp.train(t.with(on, { fsdp_version = 1 })), gp.train(t.with(on, { fsdp_version = 2 }))
t.ok(on2.step_s - on1.step_s >= (80 * 2 * K(4 * P) - 2 * agH) * (1 - 1e-9),
  "FSDP2's copies on the compute stream: not hidden")

-- The ends get FSDP's passes too: FSDP2 copies the embedding's and the
-- output layer's gather out (split_with_sizes_copy) each micro-batch as
-- it does a layer's.  Isolated with LoRA, where nothing is reduced:
-- FSDP1 then adds no pass (its gather lands in the flat parameter), and
-- FSDP2 adds only its copy-outs, a read and a write of the 16-bit
-- weights -- per micro-batch (2), each layer's two gathers (80 x 2 x
-- K(4P)) and each end's one (K(4E) + K(4H), E = H = 128256 x 8192
-- weights, llama3-70b's untied embedding and output layer):
-- v2 - v1 = 2 (80 x 2 K(4P) + K(4E) + K(4H)); what remains after the
-- layers' share over the ends' is 1 (0 were the ends not priced).
-- Tolerance 1e-4: the step's sums taken in another order, the ends'
-- share being 1.5% of d.
local pr = gp.params("llama3-70b")
local lora = t.with(job, { method = "lora" })
local d = gp.train(t.with(lora, { fsdp_version = 2 })).step_s -
  gp.train(t.with(lora, { fsdp_version = 1 })).step_s
t.near((d - 2 * 80 * 2 * K(4 * P)) / (2 * (K(4 * pr.embedding) + K(4 * pr.lm_head))), 1, 1e-4,
  "FSDP2 copies the ends' gathers out too (LoRA: no gradient passes)")

-- Refused: another stack's sharding is not PyTorch FSDP, and 1 or 2 only.
t.raises(function() gp.train(t.with(job, { stack = "deepspeed", fsdp = false, fsdp_version = 2 })) end,
  "fsdp_version is PyTorch FSDP's", "stack deepspeed refused", true)
t.raises(function() gp.train(t.with(job, { fsdp_version = 3 })) end, "fsdp_version",
  "3 refused", true)
-- text that is a plain number is that number (gpuplan.options normal:
-- "2" is 2); other text is refused
t.raises(function() gp.train(t.with(job, { fsdp_version = "two" })) end, "fsdp_version",
  "a string refused", true)
