-- What Megatron-Core keeps under fp8 and a bf16 gradient reduction
-- (engine/memory_act.c, lua/gpuplan/train.lua): Transformer Engine's fp8
-- linears keep their quantised input (1 B) for the weight gradient, and the
-- gradient buffer takes the reduction's dtype.  On the Megatron-Bridge 25.11
-- H100 Llama 3 70B layout (64 GPUs, TP4 PP8 VP5, SP, distributed optimizer,
-- seq 8192, micro-batch 1, grad_reduce_in_fp32 False), which NVIDIA ran.
-- Run with ./gpuplan run tests/lua/fp8_te.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(12)

local job = { model = "llama3-70b", gpu = "h100-sxm", gpus = 64, tp = 4, pp = 8, vpp = 5,
              sp = true, zero = 1, precision = "fp8", seq = 8192, batch = 1,
              global_batch = 128, method = "pretrain", grad_reduce = "bf16",
              recompute = "none" }
local r = gp.train(job)
local function comp(res, name) return t.part(res.memory, name) end

-- One layer's saved bytes, bf16 less fp8 (TE): the QKV input (8192), the fc1
-- input (8192) and the fc2 input (28672) go from 2 B to 1 B; the projection
-- adds a 1 B copy of the attention output (8192) that the fused attention
-- keeps in 2 B anyway: (8192 + 8192 + 28672 - 8192) / 4 (sequence parallel
-- over TP 4) = 9216 B a token, x 8192 tokens.  Exact (1e-9: the same sums).
local b16 = gp.train(t.with(job, { precision = "bf16" }))
t.near(b16.memory.act_layer - r.memory.act_layer, 9216 * 8192, 1e-9,
       "TE fp8: the linears' inputs 1 B, the attention output 2 + 1 B")

-- The gradient buffer: grad_dtype = torch.float if grad_reduce_in_fp32 else
-- param.dtype (Megatron-Core distributed_data_parallel.py).  bf16 less fp32:
-- 2 B per parameter of the stage, unsharded by the distributed optimizer.
local f32 = gp.train(t.with(job, { grad_reduce = "fp32" }))
t.near(comp(f32, "grads") - comp(r, "grads"), 2 * r.memory.params, 1e-9,
       "megatron: bf16 reduction, bf16 main grads (2 B/param less)")
-- Another stack keeps its gradients as its recipe says whatever it reduces
-- in (FSDP's reduce_dtype is a communication dtype).
local hf = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, zero = 3, seq = 4096,
             global_batch = 64, method = "pretrain", stack = "hf" }
t.near(comp(gp.train(t.with(hf, { grad_reduce = "bf16" })), "grads"),
       comp(gp.train(t.with(hf, { grad_reduce = "fp32" })), "grads"), 1e-12,
       "hf: the gradient memory does not follow grad_reduce")

-- NVIDIA ran these layouts, so each must be held by the card (79.1 GiB
-- usable; the 10% planning margin is a user's choice, not the card's).
t.ok(r.memory.total < r.memory.capacity,
     string.format("70B TP4 PP8 VP5 in the card (%.1f GiB)", r.memory.total / 2^30))
local r405 = gp.train { model = "llama3.1-405b", gpu = "h100-sxm", gpus = 1024, tp = 8,
                        pp = 8, cp = 2, vpp = 8, sp = true, zero = 1, precision = "fp8",
                        seq = 8192, batch = 1, global_batch = 512, method = "pretrain",
                        grad_reduce = "bf16", recompute = "none" }
t.ok(r405.memory.total < r405.memory.capacity,
     string.format("405B TP8 PP8 CP2 VP8 in the card (%.1f GiB)", r405.memory.total / 2^30))
-- The LoRA path keeps a frozen base: no weight gradient, no fp8 input kept.
local lora = t.with(job, { method = "lora", grad_reduce = nil })
t.near(gp.train(lora).memory.act_layer,
       gp.train(t.with(lora, { precision = "bf16" })).memory.act_layer, 1e-12,
       "frozen base: TE keeps no input for a weight gradient")

-- A frozen weight's input cast writes no transpose (no wgrad to feed): TE
-- 1.8's _Linear casts with fp8_cast_transpose_fused only when
-- weight.requires_grad, else cast_to_fp8 (engine/train_layer.c).  The fp8
-- input cast of o_proj and mlp_down then writes 1 B an element, not 1 + 1;
-- the forward GEMMs are the same, so full less LoRA forward is that byte
-- over the memory-bound rate, per layer: tokens x in-width x 1 B.  Llama 2
-- 7B, TP 1: o_proj's input 4096 wide, mlp_down's 11008, so the savings
-- stand as 4096 / 11008 (exact, 1e-9: a memory-bound time is fill plus
-- bytes over one rate, the fill cancels).  The norm-fused mlp_up cast
-- (delayed scaling: the norm writes the fp8 copy, no transpose priced)
-- saves nothing.  qkv, which the adapter reads the norm's output of, costs
-- more: NeMo 24.07 has linear_qkv return its norm's output for the LoRA
-- adapter (mcore_mixins.py "return_layernorm_output = True"), and TE 1.8
-- then writes the norm in 16 bits and casts it apart ("this comes at the
-- cost of an extra fp8 cast", layernorm_linear.py): read 2 B and write 1 B
-- an element where the fused norm priced 1 B, 2 B more, twice o_proj's
-- 1-B saving at the same 4096-wide input (exact, 1e-9, as above).  Under
-- current scaling their separate cast saves the same byte, so qkv's saving
-- equals o_proj's (both 4096 wide).
do
  local function job7(x)
    local j = { model = "llama2-7b", gpu = "h100-sxm", gpus = 8, precision = "fp8",
                seq = 4096, batch = 1, global_batch = 32, stack = "megatron",
                fp8_scaling = "delayed" }
    for k, v in pairs(x) do j[k] = v end
    return j
  end
  local function ops(res)
    local o = {}
    for _, x in ipairs(res.ops) do o[x.name] = x end
    return o
  end
  local lo = { method = "lora", lora_rank = 32, lora_targets = "q,k,v" }
  local fa, la = ops(gp.train(job7 { method = "full" })), ops(gp.train(job7(lo)))
  local dO, dD = fa.o_proj.fwd - la.o_proj.fwd, fa.mlp_down.fwd - la.mlp_down.fwd
  t.ok(dO > 0 and math.abs(dO / dD - 4096 / 11008) < 1e-9,
       string.format("frozen fp8 Linear: no input transpose (%.3g / %.3g s)", dO, dD))
  t.ok(fa.mlp_up.fwd == la.mlp_up.fwd, "delayed scaling: the norm-fused mlp_up cast unchanged")
  t.ok(math.abs((la.qkv.fwd - fa.qkv.fwd) / dO - 2) < 1e-9,
       "delayed scaling: the adapted qkv's norm output cast apart, 2 B an element")
  lo.fp8_scaling = "current"
  local fc = ops(gp.train(job7 { method = "full", fp8_scaling = "current" }))
  local lc = ops(gp.train(job7(lo)))
  local dq, dp = fc.qkv.fwd - lc.qkv.fwd, fc.o_proj.fwd - lc.o_proj.fwd
  t.ok(dq > 0 and math.abs(dq / dp - 1) < 1e-9,
       "current scaling: the qkv cast saves its transpose too")
end

-- The separate cast of an adapted qkv's norm output is one kernel more a
-- layer's forward (train_layer.c: lnret adds a launch beside its bytes).
-- Llama 2 7B, 128 tokens a micro-batch: the host paces every layer (its
-- launches, GP_EAGER_OP_TIME = 24.84 us each, take longer than the GPU's
-- work), so its step is the launches' time.  An adapter on q, k, v (the
-- norm-fused linear_qkv) and one on o (a plain Linear) launch the same
-- four kernels (FUSED_LORA_OPS); under delayed scaling only the first
-- casts its norm output apart: 32 layers x 24.84 us more.  Under current
-- scaling both norms' casts run apart already: no difference.  Exact but
-- for rounding: 1e-9 relative.
do
  local function step(targets, scaling)
    return gp.train { model = "llama2-7b", gpu = "h100-sxm", gpus = 8, precision = "fp8",
      seq = 128, batch = 1, global_batch = 8, stack = "megatron", fp8_scaling = scaling,
      method = "lora", lora_rank = 32, lora_targets = targets }.step_s
  end
  t.near(step("q,k,v", "delayed") - step("o", "delayed"), 32 * 24.84e-6, 1e-9,
         "delayed scaling, host-paced: the adapted qkv's norm cast is one launch a layer")
  t.is(step("q,k,v", "current") - step("o", "current"), 0.0,
       "current scaling: the cast runs apart either way, no launch more")
end
