-- Megatron-Core's main-grad buffer: the weight gradients accumulate into
-- it in its own dtype (grad_reduce; engine/train_prep.c train_wgrad_acc)
-- and the whole buffer is zeroed at each step's start (engine/train.c
-- phase_post).  Run with ./gpuplan run tests/lua/main_grad.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(18)

local base = { model = "llama3-8b", gpu = "h100-sxm", gpus = 1, seq = 8192, method = "pretrain",
  global_batch = 2, batch = 1, stack = "megatron", recompute = "none", precision = "bf16",
  zero = 0 }
local function with(extra) return gp.train(t.with(base, extra)) end

-- The qkv GEMM's wgrad (Llama-3 8B: T = 8192 tokens, out n = 32 x 128 +
-- 2 x 8 x 128 = 6144, in k = 4096) reads the main grad and writes it
-- back in the GEMM: bytes n k x 2 x 4 with fp32 main grads
-- (grad_reduce_in_fp32), n k x 2 x 2 with bf16 ones, beside its operands
-- T (n + k) x 2 B.  Only that GEMM of qkv's backward changes, so the
-- backward's difference is the roofline's time of the wgrad op (flop
-- 2 T n k, shape n x k, depth T) at the two byte counts: gp.roofline on
-- the same device, its launch term cancelling.  1e-9 relative: the same
-- arithmetic on both sides.
local op = t.op
local f32, b16 = with { grad_reduce = "fp32" }, with { grad_reduce = "bf16" }
local T, n, k = 8192, 6144, 4096
local function wgrad(bytes)
  return gp.roofline { gpu = "h100-sxm", op = { flop = 2 * T * n * k, bytes = bytes, m = n, n = k,
    k = T, prec = "bf16" } }.op.time
end
local want = wgrad(n * k * 8 + T * (n + k) * 2) - wgrad(n * k * 4 + T * (n + k) * 2)
t.ok(want > 0, "the wgrad GEMM is slower reading and writing an fp32 main grad")
t.near((op(f32, "qkv").bwd - op(b16, "qkv").bwd) / want, 1, 1e-9,
  "qkv's wgrad accumulates into the main grad in its dtype: 8 B an element fp32, 4 bf16")
-- The forward does not touch the gradients.
t.is(op(f32, "qkv").fwd, op(b16, "qkv").fwd, "the forward is the same")
-- Megatron-FSDP runs without gradient-accumulation fusion (Megatron-
-- Bridge's performance configs: "if cfg.ddp.use_megatron_fsdp: ...
-- gradient_accumulation_fusion = False"): autograd's .grad and its hook's
-- add, priced as the fp32 accumulation whatever the main grad's dtype --
-- the same qkv backward as fp32 main grads without FSDP.  Exact: the
-- same op at the same bytes.
local fs = gp.train(t.with(base, { gpus = 8, global_batch = 16, zero = 3, fsdp = "full_shard",
  grad_reduce = "bf16" }))
local f8 = gp.train(t.with(base, { gpus = 8, global_batch = 16, zero = 1, grad_reduce = "fp32" }))
t.is(op(fs, "qkv").bwd, op(f8, "qkv").bwd, "megatron-fsdp: no fused accumulation, 8 B")
-- ... which is the gradient_accumulation_fusion option's default there, on
-- the "defaults assumed" line; stated on, Megatron-FSDP's wgrad accumulates
-- in the bf16 main grad, n k x 2 x 2 B -- the same qkv backward as bf16
-- main grads without FSDP (b16 above: same op, same bytes; exact).
t.ok(table.concat(fs.defaults, ";"):find("gradient_accumulation_fusion=false (Megatron-FSDP",
  1, true), "the fsdp default is said")
local fsf = gp.train(t.with(base, { gpus = 8, global_batch = 16, zero = 3, fsdp = "full_shard",
  grad_reduce = "bf16", gradient_accumulation_fusion = true }))
t.is(op(fsf, "qkv").bwd, op(b16, "qkv").bwd, "megatron-fsdp with the fusion: 4 B, bf16")
t.ok(not table.concat(fsf.defaults, ";"):find("gradient_accumulation_fusion", 1, true),
  "a stated fusion is no default")
-- Off without FSDP (Megatron-LM's --no-gradient-accumulation-fusion): the
-- hook's add, 8 B an element, as fp32 main grads (f32 above; exact).
local nof = with { grad_reduce = "bf16", gradient_accumulation_fusion = false }
t.is(op(nof, "qkv").bwd, op(f32, "qkv").bwd, "no fusion: 8 B whatever the main grad")
-- Only Megatron-Core's TE modules have the fused path: elsewhere refused,
-- naming the option and what it needs.
local ok, e = pcall(gp.train, t.with(base, { stack = "hf", gradient_accumulation_fusion = true }))
t.ok(not ok and tostring(e):find("gradient_accumulation_fusion is Megatron%-Core's .* needs "
  .. "stack = megatron with kernels = fused %(got stack = hf, kernels = eager%)"),
  "refused off the megatron stack: " .. tostring(e))

-- The embedding's dense gradient is added into the main grad (read the
-- table's bf16 gradient, read and write the main grad): doubling the
-- vocabulary on the first of two stages (31 of 32 layers there, so it is
-- the slowest) grows its micro-batch by V h (2 + 2 + 2 x 2) B / (3.35
-- TB/s x 0.84) with bf16 main grads -- the zero fill 2, the table's
-- gradient read 2, the main grad read and written 2 + 2 (tests/lua/
-- train.t has the fp32 case, 2 + 2 + 8).  V = 128256, h = 4096.  1e-9
-- relative: the kernels' fixed parts cancel.
do
  local m = gp.catalog():get("models", "llama3-8b")
  local function run(V)
    local c = t.with(m, { vocab = V })
    return gp.train({ model = c, gpu = "h100-sxm", gpus = 2, pp = 2, tp = 1, seq = 4096,
                      global_batch = 8, method = "pretrain", stack = "megatron",
                      first_stage_layers = 31, recompute = "none", grad_reduce = "bf16" })
  end
  local a, b = run(128256), run(2 * 128256)
  t.near(b.stage_time_s - a.stage_time_s, 128256 * 4096 * (2 + 2 + 4) / (3.35e12 * 0.84), 1e-9,
    "bf16 main grads: the embedding's gradient added in 2 + 2 B")
end

-- zero_grad_buffer zeroes the whole local buffer each step, while the
-- distributed optimizer steps its shard.  One DGX H100, DP 8, fp32 main
-- grads (4 B): the optimizer's pass moves 42 B a shard parameter (Adam
-- reads and writes the fp32 master and both moments, 2 x (4 + 8); reads
-- the gradient for the norm and for Adam and zeroes it, 3 x 4; the copy
-- after Adam reads the master again and writes the bf16 weight, 4 + 2:
-- master_copy, the megatron stack's default).  At ZeRO 0 the shard is all
-- P local parameters: P x 42 B.  At ZeRO 1, P / 8 x 42 and the other 7 P
-- / 8 of the buffer zeroed, 4 B each: (42 + 28) / 8 x P.  Each is one
-- memory-bound pass, bytes at the streaming rate plus the kernel's fill
-- and launch (3.9 + 1 us), so with those taken off the ratio is 70 / (8 x
-- 42), whatever P.  1e-9: the same arithmetic.
do
  local o = t.with(base, { gpus = 8, global_batch = 16, grad_reduce = "fp32" })
  local z0 = gp.train(t.with(o, { zero = 0 }))
  local z1 = gp.train(t.with(o, { zero = 1 }))
  local fixed = 3.9e-6 + 1e-6
  local r = (t.step_part(z1, "optimizer").seconds - fixed) /
    (t.step_part(z0, "optimizer").seconds - fixed)
  t.near(r, 70 / (8 * 42), 1e-9, "zero 1: the shard's step and the rest of the buffer zeroed")
  -- bf16 main grads (grad_reduce bf16): 2 B a gradient.  The optimizer
  -- steps an fp32 copy (_copy_model_grads_to_main_grads: ".float()",
  -- read 2, write 4), which the norm and Adam read (4 + 4), and the
  -- shard's zeros are 2, and the copy after Adam 4 + 2: 2 x (4 + 8) +
  -- (2 + 4 + 4 + 4 + 2) + 4 + 2 = 46 B a shard parameter, and the zeroed
  -- rest 2 B: (46 + 14) / (8 x 46).
  local b = t.with(o, { grad_reduce = "bf16" })
  local b0 = gp.train(t.with(b, { zero = 0 }))
  local b1 = gp.train(t.with(b, { zero = 1 }))
  t.near((t.step_part(b1, "optimizer").seconds - fixed) /
    (t.step_part(b0, "optimizer").seconds - fixed), 60 / (8 * 46), 1e-9,
    "bf16 main grads: the fp32 copy the optimizer steps, the buffer zeroed in 2 B")
  -- And the pass itself: at ZeRO 0 the bf16 run moves 46 B a parameter
  -- where the fp32 one moves 42 (above).  1e-9: the same arithmetic.
  local z0f = gp.train(t.with(o, { zero = 0 }))
  t.near((t.step_part(b0, "optimizer").seconds - fixed) /
    (t.step_part(z0f, "optimizer").seconds - fixed), 46 / 42, 1e-9,
    "bf16 main grads: 46 B a parameter against fp32's 42")
end

-- One rule for the buffer (engine/train_int.h train_ddp_buffer): at ZeRO
-- 0/1 the optimizer's pass zeroes the rest of it, at ZeRO 2/3 there is
-- none, and a job's layouts share one phase across ZeRO stages.  The
-- pass kept for one stage is not another's: ZeRO 1 priced after ZeRO 3
-- in one job is ZeRO 1 priced alone, and ZeRO 3 after ZeRO 1 is ZeRO 3
-- alone (they differed by the zeroing, 0.01 s, in either order before).
-- Exact: the same arithmetic.
do
  local function job()
    return gp.train_job(t.with(base, { gpus = 8, global_batch = 16, zero = nil }))
  end
  local function at(j, z) return j:step { tp = 1, pp = 1, batch = 1, zero = z }.step_s end
  local a = job()
  local a3, a1 = at(a, 3), at(a, 1)
  local b = job()
  local b1, b3 = at(b, 1), at(b, 3)
  t.ok(a1 == b1 and a3 == b3, string.format("a ZeRO stage's step does not depend on the one "
    .. "priced before it (zero 1: %.9g, %.9g; zero 3: %.9g, %.9g)", a1, b1, a3, b3))
end

-- The fusion's default follows FSDP (Megatron-FSDP: off), so a job's
-- step that turns FSDP on or off takes the default of that fsdp, as
-- gp.train given it does: with bf16 main grads the two differ by the
-- wgrad accumulation's 8 B against 4 an element (above), so a step that
-- kept the job's own would not match.  Exact: the same train_step on the
-- same config.
do
  local o = t.with(base, { gpus = 8, global_batch = 16, grad_reduce = "bf16" })
  local plain = gp.train_job(o)
  local sharded = gp.train_job(t.with(o, { zero = 3, fsdp = "full_shard" }))
  t.is(plain:step { zero = 3, fsdp = true }.step_s,
    gp.train(t.with(o, { zero = 3, fsdp = "full_shard" })).step_s,
    "job:step turning fsdp on: Megatron-FSDP's default, off, as gp.train's")
  t.is(sharded:step { zero = 1, fsdp = false }.step_s, gp.train(t.with(o, { zero = 1 })).step_s,
    "job:step turning fsdp off: the fusion's default, on, as gp.train's")
  -- A stated fusion is the job's for every step.
  local stated = gp.train_job(t.with(o, { gradient_accumulation_fusion = true }))
  t.is(stated:step { zero = 3, fsdp = true }.step_s, gp.train(t.with(o, { zero = 3,
    fsdp = "full_shard", gradient_accumulation_fusion = true })).step_s,
    "a stated fusion stays on when a step turns fsdp on")
  -- gp.rl_job's actor steps the same way (Qwen2.5-7B GRPO on 16 GPUs).
  local rb = { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 16, zero = 1, stack = "megatron",
    grad_reduce = "bf16", recompute = "full", prompts = 64, group = 8, prompt_len = 512,
    response_len = 2048 }
  t.is(gp.rl_job(rb):step { zero = 3, fsdp = true }.step_s,
    gp.rl(t.with(rb, { zero = 3, fsdp = "full_shard" })).step_s,
    "rl_job:step turning fsdp on: the actor's fusion off, as gp.rl's")
end
