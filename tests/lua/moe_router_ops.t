-- moe_router_ops: the kernels the MoE router's forward launches, as the
-- run's source counts them.  Those beyond the 11 the dispatchers count
-- (MOE_ROUTER_OPS: topk_softmax_with_capacity's 10 and the input's cast)
-- are bare tensor ops, GP_EAGER_BARE_OP_TIME / GP_EAGER_OP_TIME = 8.1 /
-- 24.84 of a host op each (engine/train_layer.c router_extra_ops).
-- Run with ./gpuplan run tests/lua/moe_router_ops.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(12)

-- Qwen3-30B-A3B, EP 8, one 512-token sequence a micro-batch: the layer's
-- forward is the host's time (tests/lua/numa_bind.t): (14 + 32) launches
-- of GP_EAGER_OP_TIME and 32 expert GEMMs of TE_EXPERT_GEMM (0.267 ms /
-- 8), times GB200's unbound host_op_scale 2.75.  The router's extra
-- launches add (N - 11) x 8.1 / 24.84 host ops to the 46.
local op, te, bare = 24.84e-6, 0.267e-3 / 8, 8.1 / 24.84
local function host(n) return 2.75 * ((14 + 32 + (n - 11) * bare) * op + 32 * te) end
local function layer(o)
  local a = { model = "qwen3-30b-a3b", gpu = "gb200", gpus = 8, ep = 8, seq = 512, batch = 1,
              global_batch = 8, stack = "megatron", zero = 1, kernels = "fused" }
  for k, v in pairs(o or {}) do a[k] = v end
  return (t.layer_fwd(gp.train(a)))
end
-- Tolerance 1e-9 s: the sums are exact products of the constants above.
t.near(layer(), host(11), 1e-9, "no moe_router_ops: the 11 counted")
t.near(layer { moe_router_ops = 11 }, host(11), 1e-9, "11 stated: unchanged")
-- Megatron-LM's DeepSeek-V3 GB200 guide (sec. 2.1.4): 72 unfused, 31 fused.
t.near(layer { moe_router_ops = 72 }, host(72), 1e-9,
  "72 (DeepSeek-V3's unfused router): 61 bare ops more, 2.75 x 61 x 8.1 us = 1.36 ms")
t.near(layer { moe_router_ops = 31 }, host(31), 1e-9, "31 (with router fusion): 20 bare ops more")
-- A graphed router replays its launches (GRAPH_REPLAY_OPS): the count
-- changes nothing there.
t.near(layer { moe_router_ops = 72, cuda_graph_scope = { "moe_router" } },
  layer { cuda_graph_scope = { "moe_router" } }, 1e-12, "graphed router: the count is replayed")
-- Refusals, naming the argument.
t.raises(function() layer { model = "llama3-8b", moe_router_ops = 72 } end,
  "train: moe_router_ops is the MoE router's kernels; llama3-8b has no experts",
  "a dense model is refused", true)
t.raises(function() layer { ep = 1, moe_router_ops = 72 } end,
  "train: moe_router_ops is priced on the expert-parallel MoE layer's host launches; give ep > 1 (got 1)",
  "ep 1 is refused", true)
t.raises(function() layer { moe_router_ops = 0 } end, "moe_router_ops",
  "0 is out of range", true)
-- A kernel count is whole, and at least the 11 the dispatchers count:
-- below it router_extra_ops would take bare ops off full host ops.
t.raises(function() layer { moe_router_ops = 5 } end, "moe_router_ops must be a whole number 11..1000",
  "fewer than the 11 counted is refused", true)
t.raises(function() layer { moe_router_ops = 31.5 } end, "moe_router_ops must be a whole number",
  "a fractional count is refused", true)
t.raises(function() layer { moe_router_ops = "many" } end, "moe_router_ops",
  "a string is refused", true)
t.raises(function() layer { kernels = "eager", stack = "hf", moe_router_ops = 72 } end,
  "train: moe_router_ops is Megatron-Core's router; with kernels = eager",
  "an eager stack is refused", true)
