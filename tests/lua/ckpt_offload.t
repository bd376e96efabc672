-- checkpoint_offload: full recompute's checkpoints (each layer's input) in
-- host memory, PyTorch's checkpoint_wrapper(offload_to_cpu=True) under
-- save_on_cpu(pin_memory=True) and DeepSpeed's cpu_checkpointing
-- (engine/train.c ckpt_offload_time, engine/memory_train.c).  Both copies
-- run on the compute stream (save_on_cpu's pack hook "copy_(tensor)" waits
-- for the D2H; its unpack hook's H2D is ordered before the re-run that reads
-- it), so each of the L layers adds checkpoint / host link twice a
-- micro-batch, nothing hidden; the GPU keeps one layer's checkpoint, the
-- host every layer's.
-- Run with ./gpuplan run tests/lua/ckpt_offload.t.
local t = require "tap"
local gp = require "gpuplan"
local comm = require "gpuplan.comm"

t.plan(17)

local function train(o)
  local b = { model = "llama3-8b", gpu = "a100-sxm-80gb", gpus = 1, seq = 2048, batch = 1,
              global_batch = 1, stack = "hf", recompute = "full", precision = "bf16" }
  for k, v in pairs(o) do b[k] = v end
  return gp.train(b)
end

-- Llama 3 8B (32 layers, hidden 4096), seq 2048, micro-batch 1, bf16: full
-- recompute keeps each layer's input, s b h x 2 B = 2048 x 4096 x 2 =
-- 16,777,216 B (act_layer).  The A100's host link is its PCIe Gen4 x16:
-- 16 x 0.985 GB/s x 2 x 0.8 = 25.216 GB/s a direction (gpuplan.comm
-- pcie_bw, the rate the offloaded optimizer's copies take too).  A copy
-- takes t = 16,777,216 / 25.216e9 = 0.6653 ms; a micro-batch adds
-- 2 x 32 x t = 42.58 ms.
local r0 = train {}
local r1 = train { checkpoint_offload = true }
local bw = comm.host_link_bw(gp.catalog():get("gpus", "a100-sxm-80gb"))
t.near(bw, 16 * 0.985e9 * 2 * 0.8, 1e-12, "A100's host link: PCIe Gen4 x16, 25.216 GB/s")
t.is(r1.memory.act_layer, 2048 * 4096 * 2, "a layer's checkpoint: s h x 2 B = 16 MiB")
-- Tolerance 1e-9 relative: the same sums in double precision.
t.near(r1.step_s - r0.step_s, 2 * 32 * 2048 * 4096 * 2 / (16 * 0.985e9 * 2 * 0.8), 1e-9,
       "step grows by 2 x 32 x 16 MiB / 25.216 GB/s = 42.58 ms (no overlap)")
t.near(t.parts(r1).compute - t.parts(r0).compute, r1.step_s - r0.step_s, 1e-9,
       "the copies are shown as compute time (the passes stall for them)")
t.ok(t.said(r1, "checkpoint offload over the host link at 25%.2 GB/s"),
     "the defaults line states the link's rate")
-- Two micro-batches a step: each pays its own copies, twice the time.
local m0 = train { global_batch = 2 }
local m1 = train { global_batch = 2, checkpoint_offload = true }
t.near(m1.step_s - m0.step_s, 2 * (r1.step_s - r0.step_s), 1e-9,
       "two micro-batches: twice the copies")

-- Memory: 31 of the 32 checkpoints leave the GPU (the one being run or
-- re-run stays), every one of the 32 is on the host (1e-9: the same sum).
local a0 = t.part(r0.memory, "activations")
t.near(a0 - t.part(r1.memory, "activations"), 31 * 2048 * 4096 * 2, 1e-9,
       "31 layers' checkpoints leave the GPU")
t.near(r1.memory.host.activations, 32 * 2048 * 4096 * 2, 1e-9,
       "the host holds all 32 checkpoints (0.5 GiB)")
t.ok(r1.memory.total < r0.memory.total, "the GPU's total falls")

-- The host holds them against its DRAM: 8 GPUs of a DGX A100 (2 TB) at
-- seq 32768, 32 sequences a GPU keep 8 x 32 layers x 32 x 32768 x 4096 x
-- 2 B = 2 TiB (2.199e12 B) there, past the 2e12 B: the job does not fit.
local hx = train { gpus = 8, zero = 3, seq = 32768, batch = 32, global_batch = 256,
                   checkpoint_offload = true }
t.near(hx.memory.host_need, 8 * 32 * 32 * 32768 * 4096 * 2, 1e-9,
       "host_need: 8 GPUs x 32 checkpoints of 32 x 32768 x 4096 x 2 B")
t.ok(not hx.fits and hx.why:find("host memory: the offload holds 2048.0 GiB on a host of 8 "
       .. "GPUs, which has 1862.6 GiB", 1, true), "past the DGX A100's 2 TB: fits no, saying so")

-- gp.memory (what `gpuplan fit` runs) takes the same key: the same drop.
local f0 = gp.memory { model = "llama3-8b", gpu = "a100-sxm-80gb", seq = 2048, recompute = "full",
                       method = "full" }
local f1 = gp.memory { model = "llama3-8b", gpu = "a100-sxm-80gb", seq = 2048, recompute = "full",
                       method = "full", checkpoint_offload = true }
t.near(t.part(f0, "activations") - t.part(f1, "activations"), 31 * 2048 * 4096 * 2, 1e-9,
       "gp.memory: 31 layers' checkpoints leave the GPU")

-- Refusals, named by the key: meaningless without full recompute's
-- checkpoints, the block method's whole layers, Megatron-Core's own
-- offload, a value not a boolean.
t.raises(function() train { checkpoint_offload = true, recompute = "none" } end,
  "checkpoint_offload moves the checkpoints full recompute keeps (each layer's input): give "
    .. "recompute = full (got recompute = none)", "recompute none is refused", true)
t.raises(function() train { checkpoint_offload = true, recompute = "selective" } end,
  "give recompute = full (got recompute = selective)", "recompute selective is refused", true)
t.raises(function() train { checkpoint_offload = true, recompute_layers = 4 } end,
  "recompute_layers 4 keeps whole layers on the GPU", "recompute_layers is refused", true)
t.raises(function() train { checkpoint_offload = true, stack = "megatron" } end,
  "its CPU offload is activation_offload_layers", "the megatron stack is refused", true)
t.raises(function() train { checkpoint_offload = 1 } end,
  "checkpoint_offload must be true or false (got 1)", "a number is refused", true)
