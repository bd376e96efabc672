-- host_threads: the offloaded optimizer step of a rank whose process may
-- run only a few CPU threads (a Ray worker's OMP_NUM_THREADS, from its
-- num_cpus; OpenRLHF's actor and critic ranks ask one).  DeepSpeed's host
-- side at stages 1-2 streams 42 B a parameter on those threads (gp.train's
-- DEEPSPEED_CPU_STEP_THREAD_S: the gradient's unscale 8 B, CPUAdam's 28 B,
-- the blocking bf16 copy's CPU cast 6 B, at NeMo RL's measured one-thread
-- AdamW rate of 28 B in 0.926 s / 0.596e9 parameters), the least the step
-- takes whatever the node's DRAM allows (engine/train.c offload_step).
-- Run with ./gpuplan run tests/lua/host_threads.t.
local t = require "tap"
local gp = require "gpuplan"
local train = require "gpuplan.train"

local with = t.with
local S = 42 / 28 * 0.926 / 0.596e9
t.near(train.DEEPSPEED_CPU_STEP_THREAD_S, S, 1e-12, "42 B at one thread's 28 B in 1.554 ns")

-- Llama 3 8B (8.030261248e9 parameters) at ZeRO-2 over 8 A100s, the
-- optimizer offloaded: each rank steps n = 8.030261248e9 / 8 of them.
local base = { model = "llama3-8b", gpu = "a100-sxm-80gb", gpus = 8, zero = 2,
               offload = "optimizer", stack = "deepspeed", seq = 2048, batch = 1,
               global_batch = 64 }
local n = 8.030261248e9 / 8
local function opt(r) return t.parts(r).optimizer end
local r0 = gp.train(base)
local r1 = gp.train(with(base, { host_threads = 1 }))
local r2 = gp.train(with(base, { host_threads = 2 }))
-- On one and on two threads the threads are the bound (n S = 2.34 s and
-- 1.17 s against the node's DRAM share): the step differs by n S / 2.
-- Tolerance 1e-9 relative: the same sums of doubles.
t.near(opt(r1) - opt(r2), n * S / 2, 1e-9, "one thread against two: n x S / 2 = 1.17 s")
t.ok(opt(r1) > opt(r0), "one thread a rank is slower than the node's cores")
-- Sixteen threads a rank: the node's DRAM is the bound again, as without.
t.is(opt(gp.train(with(base, { host_threads = 16 }))), opt(r0),
  "enough threads: the node's DRAM bounds the step as before")
-- Megatron-Core's HybridDeviceOptimizer is measured on one thread: more
-- divide it.
local mg = with(base, { stack = "megatron", zero = 1 })
t.ok(opt(gp.train(with(mg, { host_threads = 2 }))) < opt(gp.train(mg)),
  "megatron: two threads step faster than the measured one")

t.raises(function() gp.train(with(base, { host_threads = 0 })) end,
  "train: host_threads must be a whole number 1..16777216 (got 0)",
  "at least one thread", true)
t.raises(function() gp.train(with(base, { host_threads = 1, offload = "none" })) end,
  "train: host_threads are what the offloaded optimizer steps on", "needs an offload", true)

-- OpenRLHF's profile: its ranks are Ray actors of num_cpus 1.
local validate = require "gpuplan.validate"
local cat = require("gpuplan.catalog").get()
for _, c in ipairs(validate.read("validation/cases.json")) do
  if c.id == "openrlhf-2024-ppo-llama2-7b-a100-8" then
    local row = validate.predict(c, cat)
    t.ok((row.defaults or ""):find("host_threads=1", 1, true),
      "the OpenRLHF row steps its offloaded Adam on one thread a rank")
  end
end

t.done_testing()
