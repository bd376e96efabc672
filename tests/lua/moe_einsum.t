-- moe_dispatcher einsum: DeepSpeed's MOELayer (deepspeed/moe/sharded_moe.py)
-- dispatches "sec,sm->ecm" and combines "sec,ecm->sm" as dense GEMMs over
-- an S x E x C one-hot mask (engine/train_layer.c moe_einsum_costs).
local t = require "tap"
local gp = require "gpuplan"

t.plan(9)

-- The DeepSpeed-MoE NLG 1.3B+MoE-128 layer on A100 SXM 40GB: S = micro-
-- batch 4 x 2048 = 8192 tokens, E = 128 experts, top-1, capacity factor
-- 1: C = ceil(8192 / 128 x 1) = 64, E C = 8192, M = hidden 2048.
local function job(over)
  local j = {
    gpu = "a100-sxm-40gb", gpus = 128, gpus_per_node = 8, nics = 8, nic_fabric = "ib-hdr-200", stack = "deepspeed",
    kernels = "fused", ep = 128, tp = 1, pp = 1, zero = 0, batch = 4, seq = 2048,
    precision = "fp16", recompute = "full", method = "pretrain", global_batch = 512,
    moe_dispatcher = "einsum",
    model = { name = "gpt-1.3b-moe128", layers = 24, hidden = 2048, heads = 16,
      kv_heads = 16, ffn_hidden = 8192, vocab = 50304, positions = "learned",
      linear_bias = true, tied_embeddings = true, norm = "layer",
      moe = { experts = 128, top_k = 1, ffn_hidden = 8192, layer_step = 2 } },
  }
  for k, v in pairs(over or {}) do j[k] = v end
  return j
end
local function op(r, name)
  for _, o in ipairs(r.ops) do if o.name == name then return o end end
end

local r = gp.train(job())
local o = op(r, "moe_einsum")
t.ok(o ~= nil and op(r, "moe_permute") == nil,
  "einsum: the einsum op in place of the permute")
-- Each GEMM: 2 S (E C) M = 2 x 8192 x 8192 x 2048 = 2.749e11 FLOP; the
-- mask passes X = S E C = 6.711e7 elements, forward 14 + 2 A = 18 B an
-- element (A = 2, fp16), backward 8 + A = 10 B.  At the A100's 312 TFLOP/s
-- fp16 and 1.555 TB/s the floor is: forward 2 GEMMs + 18 X bytes =
-- 1.762 ms + 0.777 ms = 2.539 ms; backward 3 GEMMs + 10 X = 2.643 ms +
-- 0.432 ms = 3.075 ms.  Tolerance: the roofline prices these large GEMMs
-- and streams above 0.6 of peak (roofline.c's efficiencies), so the time is
-- within [floor, floor / 0.6].
local fl, X = 2 * 8192 * 8192 * 2048, 8192 * 8192
local ff = 2 * fl / 312e12 + 18 * X / 1.555e12
local fb = 3 * fl / 312e12 + 10 * X / 1.555e12
t.ok(o.fwd >= ff and o.fwd <= ff / 0.6,
  string.format("forward %.3f ms in [%.3f, %.3f]", o.fwd * 1e3, ff * 1e3, ff / 0.6 * 1e3))
t.ok(o.bwd >= fb and o.bwd <= fb / 0.6,
  string.format("backward %.3f ms in [%.3f, %.3f]", o.bwd * 1e3, fb * 1e3, fb / 0.6 * 1e3))
-- Capacity factor 2: C = 128, every GEMM and mask twice as large; the same
-- shapes' efficiency moves little, so the time near doubles (1.8-2.2).
local o2 = op(gp.train(job { capacity_factor = 2 }), "moe_einsum")
t.ok(o2.fwd / o.fwd > 1.8 and o2.fwd / o.fwd < 2.2,
  string.format("capacity factor 2: forward x%.3f", o2.fwd / o.fwd))
-- The einsums cost more than the experts' own GEMMs at 128 experts: the
-- experts' up and down are 2 x 2 x 8192 x 2048 x 8192 = 5.50e11 FLOP, the
-- two einsums the same 5.50e11 plus the mask passes.
local ex = op(r, "moe_up").fwd + op(r, "moe_down").fwd
t.ok(o.fwd > ex, string.format("einsums %.3f ms above the experts' %.3f ms", o.fwd * 1e3,
  ex * 1e3))
local a = gp.train(job { moe_dispatcher = "alltoall" })
t.ok(op(a, "moe_einsum") == nil and r.tokens_per_s_gpu < a.tokens_per_s_gpu,
  "alltoall: no einsum op, faster")

-- Refused where the layer is not DeepSpeed's MOELayer.
local ok, err = pcall(gp.train, job { stack = "megatron" })
t.like(tostring(err), "moe_dispatcher einsum is DeepSpeed's MOELayer.*stack megatron",
  "einsum on megatron refused")
ok, err = pcall(gp.train, job { kernels = "eager" })
t.like(tostring(err), "moe_dispatcher einsum.*kernels eager runs the model's own MoE block",
  "einsum with eager kernels refused")
ok, err = pcall(gp.train, job { moe_dispatcher = "einsum", model = "llama3-8b" })
t.like(tostring(err), "moe_dispatcher einsum is how MoE tokens reach their experts",
  "einsum on a dense model refused")
