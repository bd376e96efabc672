-- The fused stacks' LoRA adapter (Megatron's, as NeMo 24.07 runs it on
-- the fused linear_qkv): lora_A, lora_B, the scaling ("x = x *
-- (self.alpha / self.dim)", NeMo r2.0.0rc1 adapters/parallel_adapters.py
-- ParallelLinearAdapter.forward) and the add ("mixed_qkv = mixed_qkv +
-- lora_mixed_qkv", adapters/mcore_mixins.py), and in the backward the
-- adapter's input gradient added into the norm's by Transformer Engine
-- ("dgrad = dgrad + grad_outputs[1]", TE 1.8 layernorm_linear.py).
-- Run with ./gpuplan run tests/lua/lora_fused.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(4)

local function job(x)
  local j = { model = "llama2-7b", gpu = "h100-sxm", gpus = 8, precision = "fp8", seq = 4096,
              batch = 1, global_batch = 32, stack = "megatron", fp8_scaling = "delayed",
              method = "lora", lora_rank = 32, lora_targets = "q,k,v", lora_dropout = 0,
              margin = 0 }
  for k, v in pairs(x) do j[k] = v end
  return j
end
local function lora(r)
  for _, o in ipairs(r.ops) do if o.name == "lora" then return o end end
end

-- Llama 2 7B, TP 1: the adapter reads the 4096-wide norm output (in) and
-- adds into the 12288-wide qkv output (out), rank 32.  Forward bytes a
-- token: in + 2 r + 6 out elements (A reads in and writes r, B reads r and
-- writes out, the scaling reads and writes out, the add reads two and
-- writes one); backward: 5 in + 4 out + 3 r (the scaling's gradient 2 out,
-- B's dgrad and wgrad read dY twice, A's dgrad writes in and its wgrad
-- reads in, the add into the norm's gradient 3 in).  Doubling the tokens
-- (seq 4096 -> 8192) adds each side's bytes once over the same rate, the
-- fixed fill cancelling, so the growths stand as (4096 + 64 + 73728) /
-- (20480 + 49152 + 96) = 77888 / 69728 = 1.11703.  Tolerance 1e-4: the
-- adapter's FLOPs (2 T r (in + out), under 3% of its memory time) enter
-- the roofline's overlap at second order (about 1e-5 here).
local a, b = lora(gp.train(job {})), lora(gp.train(job { seq = 8192 }))
local got = (b.fwd - a.fwd) / (b.bwd - a.bwd)
t.near(got, 77888 / 69728, 1e-4, "adapter traffic: forward in + 2r + 6out, backward 5in + 4out + 3r")

-- The scaling and the add are over the whole fused qkv width, whatever the
-- targets name (NeMo adapts linear_qkv with one adapter): q,v costs what
-- q,k,v does.
t.is(lora(gp.train(job { lora_targets = "q,v" })).fwd, a.fwd, "one adapter over the fused qkv")

-- Its launches (FUSED_LORA_OPS): the adapter is four kernels a fused op
-- (A, B, the scaling, the add).  Where the host sets the layer's pace
-- (bf16, 64 tokens a micro-batch), the forward's ops with the host's wait
-- (host_wait = host time - GPU time) sum to the host's time, nk launches
-- x 24.84 us (GP_EAGER_OP_TIME, engine/common.h, no per-host figure in
-- the job), so one adapted op more (gate,up: the fused linear_fc1, or o:
-- linear_proj) adds 4 x 24.84 = 99.36 us to that sum, whatever its GPU
-- time.  Float rounding only (1e-9 of the 4).
local function fwd_sum(r)
  local s, wait = 0, false
  for _, o in ipairs(r.ops) do
    s = s + o.fwd
    if o.name == "host_wait" and o.fwd > 0 then wait = true end
  end
  return s, wait
end
local function h16(targets)
  local j = job { precision = "bf16", seq = 64, lora_targets = targets }
  j.fp8_scaling = nil
  return gp.train(j)
end
local s0, w0 = fwd_sum(h16 "q,k,v")
local s1, w1 = fwd_sum(h16 "q,k,v,gate,up")
local s2, w2 = fwd_sum(h16 "q,k,v,o")
t.ok(w0 and w1 and w2, "the host sets the pace at 64 tokens")
t.ok(math.abs((s1 - s0) / 24.84e-6 - 4) < 4e-9 and math.abs((s2 - s0) / 24.84e-6 - 4) < 4e-9,
     "an adapted fused op launches 4 kernels: A, B, the scaling, the add")
