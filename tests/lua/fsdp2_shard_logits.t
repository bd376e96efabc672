-- Two memory mechanisms of issue 25 (engine/memory_train.c):
--  * FSDP2's shard is the fp32 master (fsdp2_fp32_shard): fully_shard keeps
--    the sharded parameter in its built dtype and casts the reduce-scatter
--    output back to it, so at zero 3 no 16-bit weight sits beside the master
--    and a sharded gradient takes the master's bytes; fit's model-states
--    line says the same.
--  * replicated_logits: a TP head gathered to Replicate holds all V logits
--    of its tokens on every TP rank, not V/tp.
-- Run with ./gpuplan run tests/lua/fsdp2_shard_logits.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(13)

local function comp(r, name)
  for _, c in ipairs(r.components) do if c.name == name then return c.bytes end end
  return 0
end

-- llama3-8b (catalog: P = 8,030,261,248 parameters, vocab 128,256) on 16
-- H100s, hf stack, full_shard (zero 3 over dp 16), one gradient sync per
-- micro-batch so the gradients are sharded.  Sums of doubles: 1e-12
-- relative tolerance.
local P, V = 8030261248, 128256
local base = { model = "llama3-8b", gpu = "h100-sxm", gpus = 16, stack = "hf", seq = 2048,
               fsdp = "full_shard", grad_sync = "micro_batch", recompute = "full" }
local v1 = gp.memory(t.with(base, { fsdp_version = 1 }))
local v2 = gp.memory(t.with(base, { fsdp_version = 2 }))
local function near(got, want, what) t.near(got, want, math.abs(want) * 1e-12 + 1e-6, what) end

-- FSDP1 (mixed-16): the recipe's sharded 16-bit weights, P x 2 / 16 =
-- 1,003,782,656 B, and sharded bf16 gradients, the same.
near(comp(v1, "weights"), P * 2 / 16, "FSDP1: sharded weights P x 2 / 16")
near(comp(v1, "grads"), P * 2 / 16, "FSDP1: sharded grads P x 2 / 16")
-- FSDP2: no 16-bit shard (the fp32 shard is the master, P x 4 / 16 =
-- 2,007,565,312 B, unchanged), and the sharded gradient fp32: P x 4 / 16.
near(comp(v2, "weights"), 0, "FSDP2: no 16-bit weight beside the fp32 shard")
near(comp(v2, "master"), P * 4 / 16, "FSDP2: the master is the shard, P x 4 / 16")
near(comp(v2, "grads"), P * 4 / 16, "FSDP2: sharded grads in the shard's fp32, P x 4 / 16")

-- Whole gradients (grad_sync step) under an fp32 reduction: P x 4 whole
-- (fsdp2_memory.t), and still no 16-bit shard.
local w2 = gp.memory(t.with(base, { grad_sync = "step", fsdp_version = 2, grad_reduce = "fp32" }))
near(comp(w2, "weights"), 0, "FSDP2, whole grads: no 16-bit shard")
-- fit's model-states line, from the result's state_bytes: weights 0 and
-- grads 4 (the reduction's fp32); master 4 and AdamW's 8 as the recipe's,
-- 0 + 4 + 4 + 8 = 16 B/param.
local b = w2.state_bytes
t.is(string.format("%g %g %g %g %g", b.weights, b.grads, b.master, b.optimizer, b.total),
  "0 4 4 8 16", "state_bytes under FSDP2 fp32 reduce: weights 0, grads 4, master 4, optimizer 8")
local out = io.popen("./gpuplan fit llama3-8b --gpu h100-sxm --gpus 16 --stack hf --seq 2048 "
  .. "--fsdp full_shard --grad-sync step --fsdp-version 2 --grad-reduce fp32 2>&1"):read("a")
t.like(out, "weights 0 %+ grads 4 %+ master 4 %+ optimizer 8; recipe mixed%-16, FSDP2's fp32 "
  .. "shard is the master", "fit's model-states line says grads 4 and the shard")

-- A recipe without a master (pure bf16: the optimizer steps the bf16
-- shard): FSDP2 keeps the recipe's 2 B shard, P x 2 / 16.
local nb = gp.memory(t.with(base, { fsdp_version = 2, recipe = "bf16" }))
near(comp(nb, "weights"), P * 2 / 16, "FSDP2 without a master: the recipe's bf16 shard")

-- replicated_logits: llama3-8b, tp 4 on 8 GPUs, 2 sequences of 4096 (T =
-- 8192 tokens), logit_bytes 4 stated.  Vocab-parallel a rank keeps
-- T x V x 4 / 4 = 1,050,673,152 B of logits; replicated T x V x 4 =
-- 4,202,692,608 B; the difference T x V x 4 x 3/4 = 3,152,019,456 B (the
-- head's h terms are the same in both).
local lb = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, tp = 4, seq = 4096, batch = 2,
             logit_bytes = 4 }
local vp = gp.memory(lb)
local rp = gp.memory(t.with(lb, { replicated_logits = true }))
near(comp(rp, "logits") - comp(vp, "logits"), 8192 * V * 4 * 3 / 4,
  "replicated_logits: + T x V x 4 x (1 - 1/tp)")
-- tp 1: the gather changes nothing.
local lb1 = t.with(lb, { tp = 1, gpus = 8 })
near(comp(gp.memory(t.with(lb1, { replicated_logits = true })), "logits"),
  comp(gp.memory(lb1), "logits"), "replicated_logits at tp 1: unchanged")

-- Refused: a non-boolean, and beside Liger's chunked head.
local ok, e = pcall(gp.memory, t.with(lb, { replicated_logits = "yes" }))
t.ok(not ok and tostring(e):find("replicated_logits must be true or false", 1, true),
  "replicated_logits = 'yes' refused, named")
ok, e = pcall(gp.memory, { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, tp = 4, seq = 4096,
                           batch = 2, stack = "hf", replicated_logits = true,
                           fused_linear_ce = true })
t.ok(not ok and tostring(e):find("never makes them whole", 1, true),
  "replicated_logits with fused_linear_ce refused")
