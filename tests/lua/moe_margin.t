#!/usr/bin/env lua
-- The MoE serving model (gpuplan.serve, engine/serve.c) holds back the
-- margin by the dense path's one rule (memory.h mem_kv_margin): the
-- given or runtime's margin of the card, or with kv_free_fraction
-- (TensorRT-LLM's free_gpu_memory_fraction) the rest of what is free.
-- Before, serve.c's kv_budget was capacity - weights - buffers -
-- workspace whatever the margin: every assertion on a nonzero margin
-- below fails on that code.
local t = require "tap"
local gp = require "gpuplan"

-- Qwen3-30B-A3B bf16, EP8 with TP8 attention on 8 H100 SXM, a fixed
-- decode batch of 64 per GPU (so the step's workspace is the same in
-- every call).  C = 84,932,978,278 B (usable_memory).  F = the KV budget
-- with margin 0: C - weights - DeepEP buffers - workspace.
local C = require("gpuplan.memory").capacity(gp.catalog():get("gpus", "h100-sxm"))
t.is(C, 84932978278, "H100 SXM capacity: usable_memory 84,932,978,278 B")
local base = { model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 8, ep = 8, batch = 64 }
local r0 = gp.infer(t.with(base, { margin = 0 }))
local F = r0.kv_budget
t.ok(F > 7e10 and F < C - r0.weights_gpu, "margin 0: F below C less the weights")

-- margin m: F - m C (0.1: F - 8,493,297,827.8 B; 0.3: F - 25,479,893,483.4 B).
-- Float sums of the same terms: reltol 1e-12.
for _, m in ipairs { 0.1, 0.3 } do
  local r = gp.infer(t.with(base, { margin = m }))
  t.near(r.kv_budget, F - m * C, 1e-12, string.format("margin %.1f: KV budget F - %.1f C", m, m))
end
-- The default (runtime graphs: the catalog's 0.10, vLLM's
-- gpu_memory_utilization 0.9) is the same as margin 0.1.
t.near(gp.infer(base).kv_budget, F - 0.1 * C, 1e-12, "default margin 0.10 priced")

-- TensorRT-LLM: no margin given, so kv_free_fraction 0.90 (M.runtime_memory):
-- the pool is 0.9 F; a given fraction 0.5 gives 0.5 F.  reltol 1e-12.
local tr = gp.infer(t.with(base, { runtime = "trtllm" }))
t.near(tr.kv_budget, 0.9 * F, 1e-12, "trtllm: KV budget 0.9 x the free memory")
t.near(gp.infer(t.with(base, { runtime = "trtllm", kv_free_fraction = 0.5 })).kv_budget,
       0.5 * F, 1e-12, "trtllm: a given kv_free_fraction 0.5: 0.5 F")
t.near(gp.infer(t.with(base, { runtime = "trtllm", margin = 0.3 })).kv_budget,
       F - 0.3 * C, 1e-12, "trtllm: a given margin wins over the runtime's rule")

-- The largest batch the KV holds (batch free): m C less room loses at most
-- m C / kv_admit + 1 sequences per GPU, as each costs its admitted KV
-- (paged, mean length: kv_per_seq x (2048 + 128) / 2304 = 427,819,008 B)
-- plus its activations and DeepEP buffer share (>= 0); and at least 90% of
-- m C / kv_admit, as those per-sequence extras are a few MB against the
-- KV's 428 MB (well under 10%).  0.1: <= 20.85, >= 17.9; 0.3: <= 60.6, >= 53.6.
local free = { model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 8, ep = 8 }
local B0 = gp.infer(t.with(free, { margin = 0 }))
local adm = B0.kv_per_seq * (2048 + 128) / 2304
t.is(adm, 427819008.0, "kv_admit 427,819,008 B")
for _, m in ipairs { 0.1, 0.3 } do
  local lost = B0.max_batch_kv_per_gpu - gp.infer(t.with(free, { margin = m })).max_batch_kv_per_gpu
  t.ok(lost <= m * C / adm + 1 and lost >= math.floor(0.9 * m * C / adm),
       string.format("margin %.1f: %d sequences per GPU fewer (%.2f C / kv_admit = %.2f)",
         m, lost, m, m * C / adm))
end

t.done_testing()
