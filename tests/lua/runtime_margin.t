#!/usr/bin/env lua
-- Each serving runtime holds back what its own source says (gpuplan.infer
-- M.runtime_memory): TensorRT-LLM 10% of the memory FREE after the model
-- (KvCacheConfig free_gpu_memory_fraction 0.9), llama.cpp nothing,
-- vLLM and SGLang the catalog's 0.10 of the card (vLLM's
-- gpu_memory_utilization 0.9; SGLang's rule is not priced, see there).
local t = require "tap"
local gp = require "gpuplan"

-- Llama 3 8B, bf16, on one H100 SXM: capacity C = 84,932,978,278 B (the
-- catalog's usable_memory, gpuplan.memory.capacity).  F = what the CUDA
-- context, workspace and weights leave with no margin (runtime graphs or
-- kernels, margin 0); each runtime's KV budget is derived from F and C.
local base = { model = "llama3-8b", gpu = "h100-sxm" }
local C = require("gpuplan.memory").capacity(gp.catalog():get("gpus", "h100-sxm"))
t.is(C, 84932978278, "H100 SXM capacity: usable_memory 84,932,978,278 B")
local F = gp.infer(t.with(base, { runtime = "graphs", margin = 0 })).kv_budget
local Fk = gp.infer(t.with(base, { runtime = "kernels", margin = 0 })).kv_budget

-- TensorRT-LLM: the pool is 0.9 x F (memory_infer.c serve_reserve: the
-- margin is 0.1 of what is left after the weights, workspace and reserve),
-- not F - 0.1 x C.  Float products: reltol 1e-12.
local tr = gp.infer(t.with(base, { runtime = "trtllm" }))
t.near(tr.kv_budget, 0.9 * F, 1e-12, "trtllm: KV budget 0.9 x the free memory")
t.ok(table.concat(tr.defaults, "; "):find("kv_free_fraction=0.90 (TensorRT-LLM", 1, true),
     "trtllm: the defaults say the free-memory fraction")
-- F - 0.1 C would be 8,493,297,827.8 B less than F; 0.1 F is less than
-- that, so the rule is not the card's 10% (this fails on the old default).
t.ok(tr.kv_budget > F - 0.1 * C + 1e9, "trtllm: more than the card's 10% leaves")

-- llama.cpp: no margin, the budget is runtime kernels' with margin 0,
-- less its smaller workspace (its compute buffer is one 512-token
-- ubatch's graph, infer_run.c mem_cfg, against kernels' forward of the
-- job's tokens), which comes off with the reserve's 5% fragmentation
-- (memory.c mem_reserve_default frag 0.05): Fk + 1.05 x (ws_k - ws_l).
-- Float sums: reltol 1e-12.
local l = gp.infer(t.with(base, { runtime = "llama.cpp" }))
local kw = gp.infer(t.with(base, { runtime = "kernels", margin = 0 })).workspace
local Fl = Fk + 1.05 * (kw - l.workspace)
t.near(l.kv_budget, Fl, 1e-12, "llama.cpp: KV budget F, nothing held back")
t.ok(table.concat(l.defaults, "; "):find("margin=0.00 (llama.cpp", 1, true),
     "llama.cpp: the defaults say margin 0")

-- vLLM and SGLang: F - 0.1 x C = F - 8,493,297,827.8 B; reltol 1e-12.
for _, rt in ipairs { "vllm", "sglang" } do
  local r = gp.infer(t.with(base, { runtime = rt }))
  t.near(r.kv_budget, F - 0.1 * C, 1e-12, rt .. ": KV budget F - 0.1 x C")
end

-- A margin or kv_free_fraction the user gives wins over the runtime's rule.
t.near(gp.infer(t.with(base, { runtime = "llama.cpp", margin = 0.1 })).kv_budget,
       Fl - 0.1 * C, 1e-12, "llama.cpp: a given margin is taken")
t.near(gp.infer(t.with(base, { runtime = "trtllm", margin = 0.1 })).kv_budget,
       F - 0.1 * C, 1e-12, "trtllm: a given margin is taken")
t.near(gp.infer(t.with(base, { runtime = "trtllm", kv_free_fraction = 0.5 })).kv_budget,
       0.5 * F, 1e-12, "trtllm: a given kv_free_fraction is taken")

-- ExLlamaV2's margin is a rule of the same table (M.runtime_memory), not
-- a branch of its own: with the table's exllamav2 margin set to 0.2 the
-- KV budget is, to the bit, the one a given margin 0.2 makes (the same
-- call, the same arithmetic), and with it restored the default is 0's.
do
  local infer = require "gpuplan.infer"
  local rule = infer.runtime_memory.exllamav2
  local keep = rule.margin
  rule.margin = 0.2
  local ok, r = pcall(gp.infer, t.with(base, { runtime = "exllamav2" }))
  rule.margin = keep
  t.is(ok and r.kv_budget, gp.infer(t.with(base, { runtime = "exllamav2", margin = 0.2 })).kv_budget,
       "exllamav2: its margin is runtime_memory's")
  t.is(gp.infer(t.with(base, { runtime = "exllamav2" })).kv_budget,
       gp.infer(t.with(base, { runtime = "exllamav2", margin = 0 })).kv_budget,
       "exllamav2: the rule's margin 0 by default")
end

t.done_testing()
