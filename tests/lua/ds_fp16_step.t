-- ds_fp16_step: DeepSpeed's fp16 ZeRO 1/2 step (stage2.py's
-- FP16_DeepSpeedZeroOptimizer.step) runs passes of its own over the rank's
-- gradient partition besides the Adam kernel: the overflow check's
-- x.float().sum() (10 B a local element), the norm's g.double().norm(2)
-- (18), the flatten and fp32 cast (10), the unscale's mul_ (8) and the
-- master's read for the 16-bit copy (4): 50 B; engine/train.c
-- ds_fp16_step_passes.
-- Run with ./gpuplan run tests/lua/ds_fp16_step.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(5)

-- GPT-2 XL's shape, 16 H100s data parallel, the deepspeed stack.
local job = {
  model = { id = "gpt2-xl-probe", layers = 48, hidden = 1600, heads = 25, kv_heads = 25,
            head_dim = 64, ffn_hidden = 6400, ffn_gated = false, vocab = 50257,
            tied_embeddings = true, norm = "layer", positions = "learned" },
  gpu = "h100-sxm", gpus = 16, gpus_per_node = 8, batch = 1, seq = 1024, global_batch = 16,
  stack = "deepspeed",
}
local function opt(x) return t.step_part(gp.train(t.with(job, x)), "optimizer").seconds end

-- ZeRO 3 steps the same partition (the parameters over the 16 ranks, as at
-- ZeRO 1 and 2) with the mixed-16 fused Adam alone, 32 B a local element
-- (2 x (4 B master + 8 B moments) + 3 x 2 B gradient + 2 B weights,
-- engine/train_prep.c opt_bytes_of); ZeRO 1 and 2 add the 50 B passes, so
-- their optimizer part over ZeRO 3's is (32 + 50) / 32.  1%: each part also
-- pays the memory pipeline's fill once a pass (a few us, ROOF_MEM_FILL)
-- against a ~1 ms pass.
local o1, o2, o3 = opt { zero = 1, precision = "fp16" }, opt { zero = 2, precision = "fp16" },
  opt { zero = 3, precision = "fp16" }
t.ok(o3 > 0, "the fused step is priced at ZeRO 3")
t.near(o1 / o3, (32 + 50) / 32, 0.01, "ZeRO 1 fp16: the step's passes, 50 B over the fused 32")
t.is(o2, o1, "ZeRO 2 fp16: the same class and passes as ZeRO 1")

-- bf16 runs no loss scaler (v0.14.2 stage_1_and_2.py: "if self.dtype ==
-- torch.float16: self.check_overflow()"; a bf16 model at ZeRO 1 runs
-- BF16_Optimizer): nothing added, ZeRO 1's optimizer part is ZeRO 3's.
t.is(opt { zero = 1, precision = "bf16" }, opt { zero = 3, precision = "bf16" },
     "bf16 ZeRO 1: no fp16 step passes")

-- ZeRO 0 (no partition: DeepSpeed's FP16_Optimizer, another class) keeps
-- the fused step alone over the whole model: 16 times ZeRO 3's partition
-- (1%: the fill, as above).
t.near(opt { zero = 0, precision = "fp16" } / o3, 16, 0.01,
       "ZeRO 0 fp16: the fused step over all 16 partitions, no passes")

