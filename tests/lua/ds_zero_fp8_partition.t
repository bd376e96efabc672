-- DeepSpeed ZeRO's gradient partition in an fp8 job holds the parameters'
-- own dtype (engine/memory_deepspeed.c ds_partition_bytes).  The fp8
-- recipe's 3 B of weights are the bf16 parameter and Transformer Engine's
-- cached fp8 cast of it (catalog/recipes.lua "fp8": "bf16 params plus the
-- fp8 cast of each weight cached between micro-batches (2 + 1)"); the
-- .grad, ZeRO's partition and the step's flat copy of it are bf16, 2 B
-- (stage_1_and_2.py step(): "self.flatten(self.averaged_gradients[i])
-- .to(self.single_partition_of_fp32_groups[i].dtype)").  The engine sized
-- them by the weights' 3 B: the step read 3 + 3 + 4 = 10 B an element.
-- Run with ./gpuplan run tests/lua/ds_zero_fp8_partition.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(5)

-- Llama 2 7B, N = 6,738,415,616, on 2 H100s, fp8, 128 tokens: the
-- partition g = N / 2.  Tolerance 1e-9 relative: exact but for rounding.
local N = 6738415616
local base = { model = "llama2-7b", gpu = "h100-sxm", gpus = 2, stack = "deepspeed",
  method = "full", precision = "fp8", seq = 128, batch = 1, recompute = "none" }
local function mem(extra) return gp.memory(t.with(base, extra)) end

-- ZeRO-2's step: the bf16 partition, its flat copy, the fp32 gradient:
-- (2 + 2 + 4) g = 4 N (was (3 + 3 + 4) g = 5 N).
local z2 = mem { zero = 2 }
t.is(z2.grad_phase, "step", "zero 2 fp8: the step is the peak")
t.near(t.part(z2, "grads"), 8 * N / 2, 1e-9, "zero 2 fp8 step: (2 + 2 + 4) B a partition element")
t.near(z2.grad_bytes, 8, 1e-12, "grad_bytes 8")

-- ZeRO-3's step: the bf16 partition g (2 B) and one sub-group of 1e9
-- elements (stage3.py sub_group_size) flattened and cast: 2 g + 1e9 x
-- (2 + 4) = 6.738e9 + 6e9 = 12.738e9 B (was 3 g + 1e9 x 7 = 17.1e9).
local z3 = mem { zero = 3 }
t.near(t.part(z3, "grads"), 2 * N / 2 + 1e9 * 6, 1e-9, "zero 3 fp8 step: bf16 partition + a sub-group's copy and fp32")

-- fp16 (mixed-16, 2 B weights) is unchanged: ZeRO-2's step 8 g.
local f16 = mem { zero = 2, precision = "fp16" }
t.near(t.part(f16, "grads"), 8 * N / 2, 1e-9, "zero 2 fp16: 8 g, unchanged")
