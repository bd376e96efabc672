-- The fp32 softmax a compiled (kernels fused) stack keeps for the
-- backward when the attention runs unfused (engine/train_price.c
-- train_attn_time, softmax32): Praxis' DotProductAttention under XLA
-- ("logits = logits.astype(jnp.float32)", "jax.nn.softmax(...)
-- .astype(key.dtype)"), whose jvp differentiates through the fp32
-- output y -- the Lua key eager_softmax with kernels fused.
-- Run with ./gpuplan run tests/lua/softmax32_fused.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(7)

-- LLaMA-2-7B (32 heads of 128) on one A100, one 512-token sequence, the
-- megatron stack's fused kernels, attention unfused (flash false), no
-- dropout.  op_attn (engine/model_ops.c, unfused): FLOP 2 T kv heads
-- (dqk + dv) = 2 x 512 x 512 x 32 x 256 forward, twice that backward
-- (train_attn_time: 2.0 unflashed); its transfers ACT = T heads (dqk +
-- dv) + 4 heads q kv = 4,194,304 + 33,554,432 elements of A = 2 B,
-- twice that backward; s2 = 32 x 512 x 512 = 8,388,608 scores.
-- softmax32 adds, per score: forward the fp32 y written beside the
-- 16-bit probabilities, 4 B, and two more reads of the A-byte scores
-- (XLA runs jax.nn.softmax's max, its sum of exp and the division as
-- three kernels where op_attn's fused softmax reads the scores once:
-- a row reduction fuses into its consumer only as a one-operand
-- epilogue, xla/service/gpu/gpu_fusible.cc), 2A = 4 B: 8 B; backward y
-- read in place of the 16-bit P, 4 - A = 2 B, and the transposed jvp's
-- sum(y * ct) reading y (4) and the incoming gradient (A) once more
-- before the pass that writes dS, 4 + A = 6 B: 8 B.  So forward
-- 2 ACT + 8 s2 and backward 4 ACT + 8 s2 bytes, against 2 ACT and
-- 4 ACT without it.  Each is one roofline op (the
-- same train_t_op the engine calls), here gp.roofline on the same
-- numbers with the job's own graphs setting found from the base case:
-- equal up to the order of the sums (relative 1e-9).
local base = { model = "llama2-7b", gpu = "a100-sxm-80gb", gpus = 1, method = "full",
  seq = 512, batch = 1, global_batch = 1, flash = false, dropout = false,
  stack = "megatron", kernels = "fused", precision = "bf16", recompute = "none" }
local s2 = 32 * 512 * 512
local FLOP, ACT = 2 * 512 * 512 * 32 * 256, 512 * 32 * 256 + 4 * 32 * 512 * 512
local function roof(flop, bytes, graphs)
  return gp.roofline { gpu = "a100-sxm-80gb", op = { flop = flop, bytes = bytes, m = 512,
    n = 512, k = 128, count = 32, prec = "bf16", graphs = graphs } }.op.time
end
local function attn(extra)
  local r = gp.train(t.with(base, extra))
  local op = t.op(r, "attention")
  return op.fwd, op.bwd, r
end
local function close(a, b) return math.abs(a / b - 1) < 1e-9 end

local f0, b0, r0 = attn {}
local graphs
for _, g in ipairs { true, false } do
  if close(f0, roof(FLOP, 2 * ACT, g)) and close(b0, roof(2 * FLOP, 4 * ACT, g)) then
    graphs = g
  end
end
t.ok(graphs ~= nil, "fused unfused attention: op_attn's 4 and 8 transfers of A a score")
local f1, b1, r1 = attn { eager_softmax = true }
t.ok(close(f1, roof(FLOP, 2 * ACT + 8 * s2, graphs)),
  string.format("eager_softmax, fused: the fp32 y written and the scores read by three "
    .. "kernels, 8 B a score forward (%.6g s)", f1))
t.ok(close(b1, roof(2 * FLOP, 4 * ACT + 8 * s2, graphs)),
  string.format("eager_softmax, fused: y read in place of P and y, dP read once more, "
    .. "8 B a score backward (%.6g s)", b1))
-- Kept: the fp32 y beside the 16-bit probabilities the PV einsum keeps,
-- 4 B a score more (engine/memory_act.c core: 4 + A against A; exact,
-- whole bytes).
t.is(r1.memory.act_layer - r0.memory.act_layer, 4 * s2,
  "eager_softmax, fused: 4 + A a score kept, not A")
-- fp32 scores already (tf32: fp32 activations, A = 4): nothing to
-- upcast, no bytes more.
local f2, b2 = attn { precision = "tf32" }
local f3, b3 = attn { precision = "tf32", eager_softmax = true }
t.ok(f2 == f3 and b2 == b3, "tf32 training: the softmax32 bytes are not added")
-- Flash attention keeps no scores: the option moves nothing.
local f4, b4 = attn { flash = true }
local f5, b5 = attn { flash = true, eager_softmax = true }
t.ok(f4 == f5 and b4 == b5, "flash: no scores, eager_softmax moves no attention time")
-- The eager kernels price their own kernel-by-kernel softmax
-- (tests/lua/eager_attn.t); softmax32 is not added on top of it.
local f6, b6 = attn { kernels = "eager", stack = "hf" }
local f7, b7 = attn { kernels = "eager", stack = "hf", eager_softmax = true }
t.ok(f6 == f7 and b6 == b7, "eager kernels: eager_softmax true is their default, priced once")
