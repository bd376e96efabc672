-- DeepSpeed's stages 2 and 3 with the optimizer offloaded and gradients
-- accumulated over micro-batches: the running sum of each rank's gradient
-- partition lives in pinned host memory, 16-bit, and every micro-batch
-- after the first copies it up to add the new gradient on the GPU, every
-- one but the last copies the sum back down (deepspeed/runtime/zero/
-- stage_1_and_2.py v0.12.6, async_accumulate_grad_in_cpu_via_gpu), on the
-- reduction's stream after each bucket's reduction (engine/train_stage.c
-- ds_offload_accum).  Run with ./gpuplan run tests/lua/ds_offload_accum.t.
local t = require "tap"
local gp = require "gpuplan"
local train = require "gpuplan.train"

local with = t.with
local function dp(r) return t.parts(r).dp_comm end

-- Llama 3 8B (8.030261248e9 parameters) at ZeRO-2 over 8 A100s, the
-- optimizer offloaded, 64 sequences a step of 1 a rank: g = 8
-- micro-batches.  The reduction not overlapped with the backward
-- (overlap_grad_reduce false), the step's DP part is every micro-batch's
-- reductions and copies in full, so against the same job without the
-- offload it grows by the copies alone: per micro-batch (g - 1) / g of
-- 2 B up and 2 B down for each of the rank's P / 8 partition parameters,
-- g micro-batches: P / 8 x 4 B x (g - 1) over the A100's PCIe link.
local P = 8.030261248e9
local bw = train.pcie_bw(gp.catalog():get("gpus", "a100-sxm-80gb"))
t.ok(bw > 20e9 and bw < 32e9, "the A100's host link: PCIe Gen4 x16")
local base = { model = "llama3-8b", gpu = "a100-sxm-80gb", gpus = 8, zero = 2,
               offload = "optimizer", stack = "deepspeed", seq = 2048, batch = 1,
               global_batch = 64, overlap_grad_reduce = false }
local off8 = gp.train(base)
local none8 = gp.train(with(base, { offload = "none" }))
-- Tolerance 1e-9 relative: the same sums of doubles, in another order.
t.near(dp(off8) - dp(none8), P / 8 * 4 * 7 / bw, 1e-9,
  "g = 8: P/8 x 4 B x 7 over PCIe (1.11 s)")
-- g = 4 (32 sequences a step): 3 of them.
local off4 = gp.train(with(base, { global_batch = 32 }))
local none4 = gp.train(with(base, { global_batch = 32, offload = "none" }))
t.near(dp(off4) - dp(none4), P / 8 * 4 * 3 / bw, 1e-9, "g = 4: P/8 x 4 B x 3")
-- One micro-batch a step accumulates nothing.
local off1 = gp.train(with(base, { global_batch = 8 }))
local none1 = gp.train(with(base, { global_batch = 8, offload = "none" }))
t.near(dp(off1), dp(none1), 1e-12, "g = 1: no copies")
-- Stage 1 reduces at the boundary only: no per-micro-batch copies.  Both
-- sides run DeepSpeed's ZeRO optimizer (recipe mixed-16): a bf16 model at
-- stage 1 without offload would run BF16_Optimizer ("model_dtype ==
-- torch.bfloat16 and grad_accum_dtype == torch.float32 and
-- self.zero_optimization_stage() == 1 and not self.zero_cpu_offload()",
-- engine.py), another path (engine/train.c ds_flat_passes).
local z1 = with(base, { zero = 1, recipe = "mixed-16" })
t.near(dp(gp.train(z1)), dp(gp.train(with(z1, { offload = "none" }))), 1e-12,
  "ZeRO-1: no copies")
-- Overlapped with the backward (overlap_comm), a layer's copies hide
-- under the next layer's backward (3.8 ms of copies against some 9 ms of
-- a 2048-token backward): the step grows by the first layer's and the
-- embedding's, which follow the last backward with nothing beside them
-- -- more than nothing, less than all of them.
local ov = with(base, { overlap_grad_reduce = true })
local grow = dp(gp.train(ov)) - dp(gp.train(with(ov, { offload = "none" })))
t.ok(grow > 0 and grow < 0.5 * P / 8 * 4 * 7 / bw,
  "overlapped: the ends' copies show, the layers' hide")

-- The running sum is kept in the parameter's dtype ("torch.zeros(
-- param.numel(), dtype=param.dtype, ...)"), the recipe's offload bytes:
-- a 16-bit model's 2 B above, an fp32 model's 4 (recipe fp32, tf32 GEMMs): 4 B up
-- and 4 B down, P / 8 x 8 B x 7 at g = 8.  1e-9: as above.
local f32 = with(base, { precision = "tf32", recipe = "fp32" })
t.near(dp(gp.train(f32)) - dp(gp.train(with(f32, { offload = "none" }))), P / 8 * 8 * 7 / bw,
  1e-9, "fp32 parameters: P/8 x 8 B x 7")

-- Stage 3 keeps the running sum on the host as well (stage3.py v0.13.5
-- partition_grads: grad_partitions_flat_buffer on the offload device, the
-- model's 16 bits under ZeRO) and moves it in every micro-batch, the
-- first too: the first copies the partition down and back up ("grad_buffer
-- = grad_buffer.to(grad_partition.device, ...)"), each later one up, adds
-- and down.  Not overlapped, the step's DP part grows by g x P / 8 x
-- (2 B up + 2 B down) over PCIe: g = 8, P / 8 x 4 B x 8 (1.27 s).  1e-9: as
-- above.
local z3 = with(base, { zero = 3 })
t.near(dp(gp.train(z3)) - dp(gp.train(with(z3, { offload = "none" }))), P / 8 * 4 * 8 / bw,
  1e-9, "ZeRO-3, g = 8: P/8 x 4 B x 8")
-- One micro-batch a step still copies down and up once: P / 8 x 4 B.
local z31 = with(z3, { global_batch = 8 })
t.near(dp(gp.train(z31)) - dp(gp.train(with(z31, { offload = "none" }))), P / 8 * 4 / bw,
  1e-9, "ZeRO-3, g = 1: P/8 x 4 B once")
-- Overlapped (stage 3's reduce-and-partition stream beside the backward),
-- the layers' copies hide in part: more than nothing, less than all.
local z3o = with(z3, { overlap_grad_reduce = true })
local g3 = dp(gp.train(z3o)) - dp(gp.train(with(z3o, { offload = "none" })))
t.ok(g3 > 0 and g3 < P / 8 * 4 * 8 / bw, "ZeRO-3 overlapped: some of the copies show")

-- A ds_config's "data_types": {"grad_accum_dtype": "fp32"} (gp.train's
-- grad_accum_dtype) makes stage 3's accumulator fp32 ("dtype=self.
-- gradient_accumulation_dtype", stage3.py v0.13.5): 4 B up and 4 B down,
-- g = 8 not overlapped: P / 8 x 8 B x 8 (2.5 s).  1e-9: as above.
local z3f = with(z3, { grad_accum_dtype = "fp32" })
t.near(dp(gp.train(z3f)) - dp(gp.train(with(z3f, { offload = "none" }))), P / 8 * 8 * 8 / bw,
  1e-9, "ZeRO-3, grad_accum_dtype fp32: P/8 x 8 B x 8")
-- bf16 is the model's dtype, DeepSpeed's default under ZeRO (engine.py
-- get_data_types): the same step as leaving it out.  1e-12: the same sums.
t.near(dp(gp.train(with(z3, { grad_accum_dtype = "bf16" }))), dp(gp.train(z3)), 1e-12,
  "grad_accum_dtype bf16 = the model's")
-- Stage 2's host buffer keeps the parameter's dtype ("dtype=param.dtype",
-- stage_1_and_2.py): the option changes nothing there.
t.near(dp(gp.train(with(base, { grad_accum_dtype = "fp32" }))), dp(off8), 1e-12,
  "ZeRO-2: grad_accum_dtype changes nothing")
-- Its host memory: the fp32 gradient (4 B) and the accumulator (2 B, or
-- 4 B in fp32) per element of the rank's P / 8 partition.  1e-9: the
-- engine's sums of doubles.
t.near(gp.train(z3f).memory.host.grads, P / 8 * (4 + 4), 1e-9, "host grads: P/8 x (4 + 4) B")
t.near(gp.train(z3).memory.host.grads, P / 8 * (4 + 2), 1e-9, "host grads: P/8 x (4 + 2) B")
-- DeepSpeed's own config: another stack refuses it by name.
t.raises(function() gp.train(with(z3f, { stack = "hf" })) end, "grad_accum_dtype",
  "stack hf: grad_accum_dtype refused")

-- With overlap_comm the gathers and the reduce-scatters + copies run on
-- two streams (engine/train_stage.c ds_side_streams): the copies cross
-- PCIe while the gathers cross the GPU links.  64 A100s (8 nodes), where
-- a layer's gather over InfiniBand outlasts its copies (P_layer / 64 x
-- 4 B over PCIe, 0.5 ms): the layers' copies hide behind the gathers and
-- only those after the last backward show -- the first layer's (its
-- reduction follows the backward) and the embedding's and the output
-- layer's (V h = 128256 x 4096 each): (P_layer + 2 V h) / 64 x 4 B over
-- PCIe, 3.1 ms, where summed with the gathers every layer's would (19.9
-- ms).  P_layer = (P - 2 V h) / 32.  1e-9: the same sums.
local Vh = 128256 * 4096
local wide = with(z3o, { gpus = 64, global_batch = 64 })
t.near(dp(gp.train(wide)) - dp(gp.train(with(wide, { offload = "none" }))),
  ((P - 2 * Vh) / 32 + 2 * Vh) / 64 * 4 / bw, 1e-9,
  "64 GPUs, overlap_comm: the layers' copies hide behind their gathers")

-- The boundary's copy down moves the accumulator as it is (stage3.py
-- v0.13.5 partition_grads: "fp32_grad_tensor.copy_(grad_buffer)", the
-- CUDA copy of the grad_accum_dtype buffer into the CPU's fp32 gradient;
-- engine/train.c offload_step): a bf16 one at 2 B, which the CPU then
-- upcasts (writes 2, reads 2, writes 4 B of host DRAM), an fp32 one at
-- 4 B, landing as it is (writes 4).  At host_bw 200 GB/s and no thread
-- limit the host side is the node's DRAM (8 ranks on one node), so fp32
-- against bf16 moves the optimizer part by P / 8 x 2 B more over PCIe and
-- P / 8 x 8 ranks x 4 B less of DRAM: P/8 x (2 / bw - 32 / 200e9).  1e-9:
-- the same sums of doubles.
local hz = with(z3, { host_bw = 200e9 })
local function opt(r) return t.parts(r).optimizer end
t.near(opt(gp.train(with(hz, { grad_accum_dtype = "fp32" }))) - opt(gp.train(hz)),
  P / 8 * (2 / bw - 8 * 4 / 200e9), 1e-9,
  "ZeRO-3 step: fp32 accumulator down at 4 B, no CPU upcast")

t.done_testing()
