-- numa_bind: each rank's CPU and memory bound to its GPU's NUMA node.  On
-- a system whose catalog entry has host_op_scale_bound (the GB200 and
-- GB300 NVL72 racks: 2.0, against host_op_scale 2.75 unbound) the host's
-- ops take that factor; on a host without it (an x86 DGX) nothing changes.
-- Run with ./gpuplan run tests/lua/numa_bind.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(8)

-- Qwen3-30B-A3B, EP 8, one 512-token sequence a micro-batch: the layer's
-- forward is the host's time, (12 + 32) launches of GP_EAGER_OP_TIME
-- (24.84 us) and 32 expert GEMMs of TE_EXPERT_GEMM (0.267 ms / 8), as
-- tests/lua/train_moe_dispatch.t derives, times the system's factor.
local op, te = 24.84e-6, 0.267e-3 / 8
local x86 = (12 + 32) * op + 32 * te
local function layer(gpu, bind)
  local r = gp.train { model = "qwen3-30b-a3b", gpu = gpu, gpus = 8, ep = 8, seq = 512,
                       batch = 1, global_batch = 8, stack = "megatron", zero = 1,
                       kernels = "fused", numa_bind = bind }
  return (t.layer_fwd(r)), r
end
-- Tolerance 1e-9 s: the sums are exact products of the constants above.
t.near((layer("gb200")), 2.75 * x86, 1e-9, "GB200 unbound (the default): host_op_scale 2.75")
t.near((layer("gb200", false)), 2.75 * x86, 1e-9, "GB200 numa_bind false: 2.75")
t.near((layer("gb200", true)), 2.0 * x86, 1e-9, "GB200 numa_bind true: host_op_scale_bound 2.0")
t.near((layer("gb300", true)), 2.0 * x86, 1e-9, "GB300 numa_bind true: the same Grace, 2.0")
-- DGX H100 has no host_op_scale_bound: bound or not, the x86 figures.
t.near((layer("h100-sxm", true)), x86, 1e-9, "H100 numa_bind true: unchanged (x86 host)")
-- gp.rl prices its host work (the actor's launches, the engine's
-- per-step work) with the same factor: bound, its step is shorter on a
-- GB200 rack (2.0 against 2.75 on every host term), the same on B200s (an x86 DGX).
local function rl(gpu, bind)
  return gp.rl { model = "qwen3-30b-a3b", gpu = gpu, gpus = 16, ep = 8, prompts = 8,
                 group = 4, prompt_len = 128, response_len = 256, numa_bind = bind }.step_s
end
t.ok(rl("gb200", true) < rl("gb200", false), "gp.rl on GB200: bound, a shorter step")
t.near(rl("b200", true), rl("b200", false), 1e-12, "gp.rl on B200 (x86 host): unchanged")
t.raises(function() layer("gb200", "yes") end, "train: numa_bind must be true or false (got string 'yes')",
  "a non-boolean numa_bind is refused, naming the key", true)
