-- ds_fp16_step: DeepSpeed's ZeRO 1/2/3 step runs passes of its own over the
-- rank's gradient partition besides the Adam kernel: the norm's
-- g.double().norm(2) (18 B a local element), the flatten and fp32 cast (10),
-- the unscale's mul_ (8) and the master's read for the 16-bit copy (4): 40 B
-- in bf16; fp16 adds the overflow check, x.float().sum() at ZeRO 1/2 (10;
-- stage2.py's FP16_DeepSpeedZeroOptimizer.step) and isinf/isnan .any() over
-- the flat gradient buffer at ZeRO 3 (8; v0.14.2 stage3.py has_overflow);
-- engine/train.c ds_step_passes.
-- Run with ./gpuplan run tests/lua/ds_fp16_step.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(6)

-- GPT-2 XL's shape, 16 H100s data parallel, the deepspeed stack.
local job = {
  model = { id = "gpt2-xl-probe", layers = 48, hidden = 1600, heads = 25, kv_heads = 25,
            head_dim = 64, ffn_hidden = 6400, ffn_gated = false, vocab = 50257,
            tied_embeddings = true, norm = "layer", positions = "learned" },
  gpu = "h100-sxm", gpus = 16, gpus_per_node = 8, batch = 1, seq = 1024, global_batch = 16,
  stack = "deepspeed",
}
local function opt(x) return t.step_part(gp.train(t.with(job, x)), "optimizer").seconds end

-- ZeRO 0 (no partition: DeepSpeed's FP16_Optimizer, another class) keeps
-- the mixed-16 fused Adam alone, 32 B a local element (2 x (4 B master +
-- 8 B moments) + 3 x 2 B gradient + 2 B weights, engine/train_prep.c
-- opt_bytes_of), over the whole model: a sixteenth of it is that step
-- over one rank's partition, the base the ZeRO stages add their passes
-- to.  1%: each part also pays the memory pipeline's fill once a pass (a
-- few us, ROOF_MEM_FILL) against a ~1 ms pass.
local base = opt { zero = 0, precision = "fp16" } / 16
local o1, o2, o3 = opt { zero = 1, precision = "fp16" }, opt { zero = 2, precision = "fp16" },
  opt { zero = 3, precision = "fp16" }
t.ok(base > 0, "the fused step is priced at ZeRO 0")
t.near(o1 / base, (32 + 50) / 32, 0.01, "ZeRO 1 fp16: the step's passes, 50 B over the fused 32")
t.is(o2, o1, "ZeRO 2 fp16: the same class and passes as ZeRO 1")
t.near(o3 / base, (32 + 48) / 32, 0.01,
       "ZeRO 3 fp16: 40 B of passes and the flat buffer's isinf/isnan check, 8")

-- bf16 runs no loss scaler (v0.14.2 stage_1_and_2.py: "if self.dtype ==
-- torch.float16: self.check_overflow()"; stage3.py the same): ZeRO 2 and 3
-- add the 40 B of norm, flatten and cast, unscale and copy.  A bf16 model
-- at ZeRO 1 runs BF16_Optimizer (train_hp_acc), whose step is its own: no
-- passes there, so ZeRO 3's part less ZeRO 1's is the 40 B passes alone,
-- and fp16 ZeRO 3's less the base the 48 B ones: 40 / 48 (2%: the fill
-- counted once in a difference, a sixteenth of it in the base).
local b1, b2, b3 = opt { zero = 1, precision = "bf16" }, opt { zero = 2, precision = "bf16" },
  opt { zero = 3, precision = "bf16" }
t.is(b2, b3, "bf16 ZeRO 2 and 3: the same 40 B over the same partition")
t.near((b3 - b1) / (o3 - base), 40 / 48, 0.02, "bf16 ZeRO 3: 40 B of passes, BF16_Optimizer's ZeRO 1 none")
