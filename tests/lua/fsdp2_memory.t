-- PyTorch FSDP2's whole gradients under grad_sync step held in the
-- reduction's dtype, and its reduce-scatter input (engine/memory_train.c
-- whole_grad_bytes and stage_states): gp.memory, fit's options and
-- gp.train's memory.  Run with ./gpuplan run tests/lua/fsdp2_memory.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(12)

local function comp(r, name)
  for _, c in ipairs(r.components) do if c.name == name then return c.bytes end end
  return 0
end

-- llama3-8b (catalog: 8,030,261,248 parameters; a layer 4096 x (4096 +
-- 1024 + 1024 + 4096) attention + 3 x 4096 x 14336 MLP = 218,103,808
-- weights, and its two RMSNorm weights of 4096 each: 218,112,000) on 16
-- H100s, hf stack, full_shard with one gradient sync a step: the
-- gradients whole on every GPU (tp 1).
local base = { model = "llama3-8b", gpu = "h100-sxm", gpus = 16, stack = "hf", seq = 2048,
               fsdp = "full_shard", grad_sync = "step", recompute = "full" }
local P, LAYER = 8030261248, 218103808 + 2 * 4096
local v1 = gp.memory(t.with(base, { fsdp_version = 1 }))
local v2b = gp.memory(t.with(base, { fsdp_version = 2 }))
local v2f = gp.memory(t.with(base, { fsdp_version = 2, grad_reduce = "fp32" }))

-- FSDP1 and FSDP2 with the reduction in the gradients' own bf16: the
-- recipe's 2 B a whole gradient, P x 2 = 16,060,522,496 B.  Exact up to
-- the double sums (1e-12 relative).
t.near(comp(v1, "grads"), P * 2, 1e-12, "FSDP1 whole grads: P x 2 B")
t.near(comp(v2b, "grads"), P * 2, 1e-12, "FSDP2, bf16 reduce: P x 2 B")
-- FSDP2 with reduce_dtype float32: to_accumulated_grad_if_needed upcasts
-- each unit's gradient and keeps it: P x 4 = 32,121,044,992 B.
t.near(comp(v2f, "grads"), P * 4, 1e-12, "FSDP2, fp32 reduce: P x 4 B")
-- Its reduce-scatter input (foreach_reduce: one unit copied into a
-- reduce_dtype tensor while its gradients live): one layer beside the
-- gathers FSDP1 prices, LAYER x 4 B = 872,448,000 B fp32, LAYER x 2 B
-- bf16 (the larger of the reduction's and the .grad's bytes).  Exact up
-- to the double sums: 1 B.
t.near(comp(v2f, "param_gather") - comp(v1, "param_gather"), LAYER * 4, 1 / (LAYER * 4),
  "FSDP2 fp32: + one layer's fp32 reduce-scatter input")
t.near(comp(v2b, "param_gather") - comp(v1, "param_gather"), LAYER * 2, 1 / (LAYER * 2),
  "FSDP2 bf16: + one layer's bf16 reduce-scatter input")
-- Per micro-batch sync (no whole gradients): the total is the same under
-- both versions.  FSDP2's fp32 shard is the master (fsdp2_shard_logits.t):
-- its sharded weights drop 2 B a parameter and its sharded gradients,
-- fp32 as the shard, gain 2 B, P x (-2 + 2) / 16 = 0.
local m1 = gp.memory(t.with(base, { grad_sync = "micro_batch", fsdp_version = 1 }))
local m2 = gp.memory(t.with(base, { grad_sync = "micro_batch", fsdp_version = 2,
                                     grad_reduce = "fp32" }))
t.near(m2.total, m1.total, 0, "grad_sync micro_batch: FSDP2 -2 B weights +2 B grads, same total")
-- The default (stack hf: FSDP1) is said where whole gradients read it.
local d = table.concat(gp.memory(base).defaults, "; ")
t.like(d, "fsdp_version=1", "the default version said under whole gradients")

-- gp.train's memory: the same config (train.lua sets both from the same
-- options); its grads component equals gp.memory's.
local tr = gp.train(t.with(base, { fsdp_version = 2, grad_reduce = "fp32", method = "pretrain",
                                    global_batch = 64 }))
local function tcomp(name)
  for _, c in ipairs(tr.memory.components) do if c.name == name then return c.bytes end end
end
t.near(tcomp("grads"), P * 4, 1e-12, "gp.train's memory: FSDP2 fp32 whole grads")

-- Refused: a version without PyTorch FSDP, a dtype outside the three.
local ok, e = pcall(gp.memory, t.with(base, { stack = "megatron", fsdp_version = 2 }))
t.ok(not ok and tostring(e):find("fsdp_version is PyTorch FSDP's", 1, true),
  "fsdp_version on stack megatron refused")
ok, e = pcall(gp.memory, { model = "llama3-8b", gpu = "h100-sxm", gpus = 16, stack = "hf",
                           seq = 2048, fsdp_version = 2 })
t.ok(not ok and tostring(e):find("has no FSDP", 1, true), "fsdp_version without FSDP refused")
ok, e = pcall(gp.memory, t.with(base, { grad_reduce = "fp64" }))
t.ok(not ok and tostring(e):find("grad_reduce", 1, true), "grad_reduce fp64 refused, named")
-- shard_grad_op under one sync a step is ZeRO 1 (gpuplan.memory
-- sharding): no whole gradients, so FSDP2's dtype moves nothing there.
local z1 = gp.memory(t.with(base, { fsdp = "shard_grad_op", fsdp_version = 1 }))
local z2 = gp.memory(t.with(base, { fsdp = "shard_grad_op", fsdp_version = 2, grad_reduce = "fp32" }))
t.near(z2.total, z1.total, 0, "shard_grad_op, grad_sync step: unchanged")
