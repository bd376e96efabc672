-- followups27: gp.train, gp.sweep, gp.rl and gp.memory/gp.infer on what a
-- new user tries first.  One block a fix.
local t = require "tap"
local gp = require "gpuplan"

-- 1. A GPU count that the node does not divide is priced with its last
-- node partial, as a launcher places ranks (rank r on node floor(r / G):
-- torchrun, Slurm --ntasks-per-node; engine/layout.h layout_fill_of) and
-- as gp.comm prices and names it; the defaults say so.  16 GPUs in nodes
-- of 3: ceil(16 / 3) = 6 nodes, 5 full, 16 - 5 x 3 = 1 on the last.
do
  local job = { model = "llama3-8b", gpu = "h100-sxm", gpus = 16, gpus_per_node = 3 }
  local r = gp.train(job)
  t.ok(r.step_s > 0 and r.step_s < math.huge, "train 16 GPUs, 3 a node: priced")
  t.ok(t.said(r, "^nodes=6 %(16 GPUs fill 5 nodes of 3 and 1 GPU on the last"),
       "train: the 6 nodes and the 1 GPU on the last said")
  -- 15 = 5 x 3 fills whole nodes: nothing to say
  t.ok(not t.said(gp.train(t.with(job, { gpus = 15 })), "^nodes="), "15 in nodes of 3: whole nodes, no note")
  -- the system's own node: 20 on a DGX H100's 8 is 8 + 8 + 4
  t.ok(t.said(gp.train { model = "llama3-8b", gpu = "h100-sxm", gpus = 20 },
              "^nodes=3 %(20 GPUs fill 2 nodes of 8 and 4 GPUs on the last"), "20 on dgx-h100: 8 + 8 + 4")
  -- within one node: no last node to name
  t.ok(not t.said(gp.train(t.with(job, { gpus = 2 })), "^nodes="), "2 GPUs in a node of 3: no note")
  -- gp.sweep: each count the node does not divide, by card
  local s = gp.sweep { model = "llama3-8b", gpu = "h100-sxm", gpus = { 12, 16 }, gpus_per_node = 4 }
  t.ok(not t.said(s, "12 GPUs fill"), "sweep: 12 = 3 x 4 whole")
  t.ok(not t.said(s, "16 GPUs fill"), "sweep: 16 = 4 x 4 whole too")
  local s2 = gp.sweep { model = "llama3-8b", gpu = "h100-sxm", gpus = { 15, 16 }, gpus_per_node = 3 }
  t.ok(t.said(s2, "^h100%-sxm: nodes=6 %(16 GPUs fill 5 nodes of 3 and 1 GPU"), "sweep: 16 in 3s said")
  t.ok(not t.said(s2, "15 GPUs fill"), "sweep: 15 in 3s whole")
  -- gp.rl: the actor's job
  local rl = gp.rl(job)
  t.ok(t.said(rl, "^nodes=6 %(16 GPUs fill 5 nodes of 3"), "rl: said as train says it")
  -- gp.comm's gpus_per_node is a placement, ranks on every node: 16 is
  -- not 6 x 3, refused naming both (unchanged; its fill of --gpus alone
  -- names the partial node: "on 3 x dgx-h100 (8 GPUs each, 4 on the last)")
  t.raises(function() gp.comm { system = "dgx-h100", gpus = 16, gpus_per_node = 3, bytes = 2 ^ 20 } end,
           "16 gpus are not 6 nodes x 3 gpus_per_node", "gp.comm: 16 ranks are not 6 x 3", true)
end

-- 2. A hybrid stack's SSM state at vLLM's mamba_ssm_cache_dtype.
-- Nemotron 3 Nano: 23 Mamba layers of 64 heads x 64 x state 128 =
-- 524,288 elements, conv window 3 x (4096 + 2 x 8 x 128) = 18,432 at 2 B;
-- 6 attention layers of 2 KV heads x 128, K and V at 2 B: 6,144 B a token.
-- At input 2048 + output 256 = 2304 tokens (a multiple of the 16-token
-- block): KV 6,144 x 2304 = 14,155,776 B; state fp32 23 x (4 x 524,288 +
-- 2 x 18,432) = 49,082,368 B; bf16 23 x (2 x 524,288 + 2 x 18,432) =
-- 24,965,120 B.  Exact: whole bytes.
do
  local a = { model = "nemotron-3-nano-30b-a3b", gpu = "h100-sxm", batch = 64, input = 2048, output = 256 }
  local r32 = gp.infer(a)
  t.is(r32.kv_per_seq, 14155776 + 49082368, "infer: KV + the fp32 SSM state a sequence")
  t.ok(t.said(r32, "^mamba_ssm_cache_dtype=fp32"), "the default said")
  local r16 = gp.infer(t.with(a, { mamba_ssm_cache_dtype = "bf16" }))
  t.is(r16.kv_per_seq, 14155776 + 24965120, "mamba_ssm_cache_dtype bf16: the SSM state halved")
  t.ok(not t.said(r16, "^mamba_ssm_cache_dtype"), "given: not a default")
  t.ok(r16.max_batch_kv > r32.max_batch_kv, "more sequences fit at a 16-bit state")
  -- decoding reads and writes the state every step: less to move is faster
  t.ok(r16.itl_s < r32.itl_s, "a 16-bit state decodes faster")
  t.is(gp.infer(t.with(a, { mamba_ssm_cache_dtype = "fp16" })).kv_per_seq, r16.kv_per_seq, "fp16 as bf16")
  -- gp.memory's serving replica holds the same
  local m = gp.memory { model = "nemotron-3-nano-30b-a3b", gpu = "h100-sxm", method = "infer", batch = 64,
                        seq = 2304, mamba_ssm_cache_dtype = "bf16" }
  t.is(t.part(m, "kv_cache"), 64 * (14155776 + 24965120), "gp.memory: 64 sequences at bf16 state")
  t.raises(function() gp.infer(t.with(a, { mamba_ssm_cache_dtype = "fp8" })) end,
           "mamba_ssm_cache_dtype must be fp32, bf16 or fp16", "fp8 refused, naming the values", true)
  t.raises(function() gp.infer(t.with(a, { mamba_ssm_cache_dtype = 2 })) end,
           "mamba_ssm_cache_dtype", "a number refused, naming the key", true)
  t.raises(function() gp.infer { model = "llama3-8b", gpu = "h100-sxm", mamba_ssm_cache_dtype = "bf16" } end,
           "which has no Mamba layers", "a model without Mamba layers: refused, not ignored", true)
end

-- 3. A value that is neither an id nor a table: named with the function
-- and the value, as gp.infer says gpu = 5.
do
  local a = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8 }
  t.raises(function() gp.train(t.with(a, { system = 7 })) end, "train: system must be an id or a table (got 7)",
           "gp.train system = 7", true)
  t.raises(function() gp.memory(t.with(a, { system = true })) end,
           "memory: system must be an id or a table (got true)", "gp.memory system = true", true)
  t.raises(function() gp.sweep(t.with(a, { system = 7 })) end, "sweep: system must be an id or a table (got 7)",
           "gp.sweep system = 7", true)
  t.raises(function() gp.train(t.with(a, { gpu = 5 })) end, "train: gpu must be an id or a table (got 5)",
           "gp.train gpu = 5: the value named", true)
  t.raises(function() gp.memory(t.with(a, { model = true })) end,
           "memory: model must be an id or a table (got true)", "gp.memory model = true", true)
  -- a system table is still taken
  local ok = pcall(gp.train, t.with(a, { system = "dgx-h100" }))
  t.ok(ok, "system as an id still works")
end

t.done_testing()
