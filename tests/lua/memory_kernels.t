-- gp.memory takes the job's kernels (lua/gpuplan/options.lua, one
-- declaration for fit, train, plan and rl): what autograd keeps follows
-- the modules that run.  Llama 3.1 8B on the hf stack, FSDP over 8 GPUs,
-- 2 sequences of 8192 a micro-batch.  Run with ./gpuplan run
-- tests/lua/memory_kernels.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(5)

local base = { model = "llama3.1-8b", gpu = "h100-sxm", gpus = 8, zero = 3,
               fsdp = "full_shard", stack = "hf", seq = 8192, batch = 2 }
local function part(r, n)
  for _, c in ipairs(r.components) do if c.name == n then return c.bytes end end
  return 0
end
local eager = gp.memory(t.with(base, { kernels = "eager" }))
local fused = gp.memory(t.with(base, { kernels = "fused" }))
-- The loss's logit bytes: 6 a logit eager (the hf stack's default), 4
-- fused; 2 x 8192 = 16384 tokens x vocab 128256 x 2 B apart; and the final
-- RMSNorm, eager, keeps its fp32 upcast and normalised copy (4 + 2 B an
-- element) where the fused norm keeps its 2-byte input: 16384 x 4096 x
-- 4 B more.  Exact (1e-9: the same sums).
t.near(part(eager, "logits") - part(fused, "logits"),
       16384 * 128256 * 2 + 16384 * 4096 * 4, 1e-9,
       "fused kernels: 2 B a logit and the final norm's upcast less for the loss")
-- Without kernels the hf stack's default is eager: the same breakdown.
t.near(gp.memory(base).total, eager.total, 1e-12, "the hf stack's default is eager")
-- The fused modules keep no silu(gate) nor fp32 softmax: less saved.
t.ok(part(fused, "activations") < part(eager, "activations"), "fused: fewer activations kept")
-- The stack's default changes the breakdown (above), so the defaults line
-- says it, as gp.train's does; given, nothing is said.
local function says(r) return table.concat(r.defaults, ", "):find("kernels=", 1, true) ~= nil end
t.ok(says(gp.memory(base)), "kernels left out: kernels=eager on the defaults line")
t.ok(not says(eager), "kernels given: not a default")
