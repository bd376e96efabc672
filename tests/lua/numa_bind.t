-- numa_bind: each rank's CPU and memory bound to its GPU's NUMA node.  On
-- a system whose catalog entry has host_op_scale_bound (the GB200 and
-- GB300 NVL72 racks: 2.0, against host_op_scale 2.75 unbound) the host's
-- ops take that factor; on a host without it (an x86 DGX) nothing changes.
-- Run with ./gpuplan run tests/lua/numa_bind.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(14)

-- Qwen3-30B-A3B, EP 8, one 512-token sequence a micro-batch: the layer's
-- forward is the host's time, (14 + 32) launches of GP_EAGER_OP_TIME
-- (24.84 us; the 14 include Qwen3's q_layernorm and k_layernorm) and 32
-- expert GEMMs of TE_EXPERT_GEMM (0.267 ms / 8), as
-- tests/lua/train_moe_dispatch.t derives, times the system's factor.
local op, te = 24.84e-6, 0.267e-3 / 8
local x86 = (14 + 32) * op + 32 * te
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

-- The bound factor's derivation (catalog/systems/nvidia-hgx.lua, gb200-
-- nvl72): Megatron-LM's DeepSeek-V3 GB200 run, priced with the catalog's
-- factor swapped.  12.9% of its step scales with the factor (2.75 -> 2.5
-- takes it from 873.07 to 883.45 model TFLOP/s a GPU, 1 - 873.07 /
-- 883.45 = 1.17%, over 0.25 / 2.75 = 9.09% of the factor), and from 2.19
-- down no host work is left on its path: 2.0 lies under that floor, the
-- same step as a factor of 1 (the catalog's 12.4% and 2.01 were this run
-- before DeepEP's local permute and fp8 padding copy were priced; 13.5%,
-- the floor the same 2.19, before DeepEP at 32 ranks ran at its 24-rank
-- rows).  Tolerances: 1e-9 where the floor is the same sum; 0.01 on the
-- share (a step is not linear in the factor where host work starts to
-- hide).
do
  local sys = require("gpuplan.catalog").get().systems["gb200-nvl72"]
  local keep = sys.host_op_scale_bound
  local function tf(f)
    sys.host_op_scale_bound = f
    local r = gp.train { model = "deepseek-v3", gpu = "gb200", gpus = 256, tp = 1, pp = 8,
      vpp = 4, ep = 32, batch = 1, global_batch = 2048, seq = 4096, precision = "fp8",
      fp8_scaling = "block", stack = "megatron", moe_dispatcher = "flex",
      moe_flex_backend = "deepep", recompute_modules = "moe_act",
      cuda_graph_scope = { "attn", "moe_router", "moe_preprocess" }, numa_bind = true }
    return r.model_tflops_gpu
  end
  local t275, t25, t221, t20, t1 = tf(2.75), tf(2.5), tf(2.21), tf(keep), tf(1.0)
  sys.host_op_scale_bound = keep
  t.near((1 - t275 / t25) / (0.25 / 2.75), 0.129, 0.01 / 0.129,
    "DSv3 GB200: 12.9% of the step scales with the host factor")
  t.near(t20, t1, 1e-9, "DSv3 GB200: at the bound factor no host work is left on the path")
  t.ok(t221 < t20, "DSv3 GB200: just above 2.19 some host work is still on the path")
end

-- An unstated numa_bind on a Grace rack is an assumption the defaults
-- line says (2.75 against 2.0 moves a host-bound step by a quarter); a
-- stated one, or an x86 host where binding changes nothing, says nothing.
do
  local j = { model = "qwen3-30b-a3b", gpu = "gb200", gpus = 8, ep = 8, seq = 512, batch = 1,
              global_batch = 8, stack = "megatron", zero = 1 }
  local said = function(r) return table.concat(r.defaults, ", ") end
  t.ok(said(gp.train(j)):find("numa_bind=false (ranks not bound to their NUMA node: host ops "
    .. "x2.75, x2 bound)", 1, true), "GB200, numa_bind unstated: said, with both factors")
  j.numa_bind = false
  t.ok(not said(gp.train(j)):find("numa_bind", 1, true), "GB200, numa_bind stated: not a default")
  j.numa_bind, j.gpu = nil, "h100-sxm"
  t.ok(not said(gp.train(j)):find("numa_bind", 1, true), "DGX H100: nothing to say")
end
