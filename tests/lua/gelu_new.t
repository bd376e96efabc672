-- ffn_act = "gelu_new": Hugging Face's tanh GeLU written as tensor ops
-- (transformers activations.py, GPT-2's activation_function), which the
-- eager modules run as eight kernels forward and eleven backward where a
-- fused GeLU is one each (engine/train_layer.c gelu_new_fwd, gelu_new_bwd).
-- Run with ./gpuplan run tests/lua/gelu_new.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(8)

local op = t.op
-- H100 SXM streams at 3.35e12 B/s x 0.84 (the hopper arch's hbm); a
-- kernel that moves bytes pays the memory pipeline's fill, 3.9 us
-- (engine/roofline.c ROOF_MEM_FILL), and the 1 us graph-launch gap
-- (catalog/archs.lua hopper graph_launch_overhead).
local bw, k1 = 3.35e12 * 0.84, 3.9e-6 + 1e-6

-- GPT-2 small's shape (h 768, plain MLP of f 3072), one 1024-token
-- micro-batch, bf16 (A = 2 B), the Hugging Face modules (stack hf:
-- kernels eager).
local function gpt2(act)
  return { id = "gpt2-probe", layers = 12, hidden = 768, heads = 12, kv_heads = 12,
           ffn_hidden = 3072, ffn_gated = false, vocab = 50257, tied_embeddings = true,
           norm = "layer", positions = "learned", ffn_act = act }
end
local job = { gpu = "h100-sxm", gpus = 1, batch = 1, seq = 1024, global_batch = 1,
              stack = "hf" }
local function run(act, x) return gp.train(t.with(job, t.with({ model = gpt2(act) }, x or {}))) end

-- el = 1024 x 3072 ffn elements.  Forward: pow, * 0.044715, x +, *
-- sqrt(2/pi), tanh, 1.0 +, 0.5 * x, the product -- 2 + 2 + 3 + 2 + 2 +
-- 2 + 2 + 3 = 18 transfers of A per element, 36 el B = 113.2 MB /
-- 2.814e12 B/s = 40.2 us, + 8 x 4.9 us.  Backward: the product's two
-- (3 + 3), 0.5 * (2), tanh_backward (3), * sqrt(2/pi) (2), * 0.044715
-- (2), pow's three (2 + 2 + 3), x's three gradients summed in two adds
-- (3 + 3) -- 28 transfers, 56 el B, + 11 x 4.9 us.  1e-6: float rounding.
do
  local el, A = 1024 * 3072, 2
  local n = run("gelu_new")
  t.near(op(n, "mlp_act").fwd, 18 * A * el / bw + 8 * k1, 1e-6,
         "gelu_new forward: 8 kernels, 18 transfers an ffn element")
  t.near(op(n, "mlp_act").bwd, 28 * A * el / bw + 11 * k1, 1e-6,
         "gelu_new backward: 11 kernels, 28 transfers an ffn element")
  local g = run("gelu")
  t.ok(op(n, "mlp_act").fwd > 5 * op(g, "mlp_act").fwd,
       "more than five times the fused GeLU's forward (18 transfers against its 3)")
  -- A case file's decoder states its activation (validation/SCHEMA.md
  -- model.ffn_act): the case's model carries it to the engine.
  local cm = require("gpuplan.predict.case").model(
    { name = "gpt2-probe", layers = 12, hidden = 768, heads = 12, kv_heads = 12,
      ffn_hidden = 3072, ffn_gated = false, vocab = 50257, tied_embeddings = true,
      positions = "learned", ffn_act = "gelu_new" }, gp.catalog())
  t.is(cm.ffn_act, "gelu_new", "a decoder case's ffn_act reaches its model")
end

-- Fused modules (Megatron, torch.compile) run one GeLU kernel whatever
-- the expression: gelu_new prices as gelu there.
do
  local f = { stack = "megatron" }
  t.near(op(run("gelu_new", f), "mlp_act").fwd, op(run("gelu", f), "mlp_act").fwd, 1e-12,
         "kernels fused: gelu_new is one kernel, as gelu")
end

-- What the backward keeps (engine/memory_act.c mlp_saved, PyTorch's
-- derivatives.yaml): of the eight ops, pow keeps its input (the GeLU's
-- input, which a fused GeLU keeps too), the products by and adds of a
-- Python number keep nothing, tanh keeps its output, the last product both
-- operands (0.5 x and 1 + tanh): 3 ffn elements a token more than gelu.
-- By hand: 3 x 3072 x 2 B (bf16) x 1024 tokens x 12 layers = 226,492,416 B,
-- exact (the same layers otherwise); none with fused modules (megatron).
do
  local function act(a, stack)
    local r = gp.memory { model = gpt2(a), gpu = "h100-sxm", seq = 1024, batch = 1, stack = stack }
    for _, c in ipairs(r.components) do if c.name == "activations" then return c.bytes end end
  end
  t.is(act("gelu_new", "hf") - act("gelu", "hf"), 3 * 3072 * 2 * 1024 * 12,
       "eager gelu_new keeps tanh, 0.5 x and 1 + tanh for the backward")
  t.is(act("gelu_new", "megatron") - act("gelu", "megatron"), 0,
       "kernels fused: gelu_new keeps what gelu keeps")
end

-- An unknown activation is refused, naming the accepted ones.
t.raises(function() run("gelu_fast") end,
  "model.ffn_act must be 'relu', 'relu2', 'gelu', 'gelu_new' or 'silu'", "an unknown ffn_act refused",
  true)
