-- addmm_bias: the eager modules' biased linears as PyTorch's torch.addmm
-- ran them before its cuBLASLt bias epilogue (PyTorch PR #72148, 2022):
-- the bias copied into the output and read back by the GEMM (2A an output
-- element forward), its gradient summed by a reduction of its own (A an
-- output element backward); engine/train_layer.c gemm_costs.
-- Run with ./gpuplan run tests/lua/addmm_bias.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(9)

local op = t.op
-- H100 SXM streams at 3.35e12 B/s x 0.84 (the hopper arch's hbm); each
-- kernel that moves bytes pays the memory pipeline's fill, 3.9 us
-- (engine/roofline.c ROOF_MEM_FILL), and the 1 us graph-launch gap
-- (catalog/archs.lua hopper graph_launch_overhead), as tests/lua/gelu_new.t.
local bw, k1 = 3.35e12 * 0.84, 3.9e-6 + 1e-6

-- GPT-2 small's shape (h 768, plain MLP of f 3072), one 1024-token
-- micro-batch, bf16 (A = 2 B), the Hugging Face modules (stack hf: kernels
-- eager); its Conv1D linears all biased (linear_bias).
local function gpt2(x)
  return t.with({ id = "gpt2-probe", layers = 12, hidden = 768, heads = 12, kv_heads = 12,
           ffn_hidden = 3072, ffn_gated = false, vocab = 50257, tied_embeddings = true,
           norm = "layer", positions = "learned", linear_bias = true }, x or {})
end
local job = { gpu = "h100-sxm", gpus = 1, batch = 1, seq = 1024, global_batch = 1,
              stack = "hf" }
local function run(m, x) return gp.train(t.with(job, t.with({ model = m }, x or {}))) end

-- Output elements of one micro-batch: qkv 1024 x 3 x 768, o_proj and
-- mlp_down 1024 x 768, mlp_up 1024 x 3072.  Forward: the copy's write and
-- the GEMM's read of C, 2 A out B, one kernel (k1); backward: the bias
-- gradient's reduction reads dY, A out B, one kernel.  1e-9 s: float
-- rounding of two op times of ~1e-4 s (the differences are 5-8 us).
local A = 2
local base, with = run(gpt2()), run(gpt2(), { addmm_bias = true })
for _, c in ipairs { { "qkv", 1024 * 3 * 768 }, { "mlp_up", 1024 * 3072 },
                     { "mlp_down", 1024 * 768 } } do
  local name, out = c[1], c[2]
  t.ok(math.abs(op(with, name).fwd - op(base, name).fwd - (2 * A * out / bw + k1)) < 1e-9
       and math.abs(op(with, name).bwd - op(base, name).bwd - (A * out / bw + k1)) < 1e-9,
       string.format("%s: + 2A x %d B forward and A x %d B backward, a kernel each", name,
                     out, out))
end
t.ok(with.step_s > base.step_s, "the step is longer")

-- Without biases nothing changes; with qkv_bias alone (Qwen2's), only qkv.
local nob = gpt2 { linear_bias = false }
t.is(run(nob, { addmm_bias = true }).step_s, run(nob).step_s,
     "no bias on any linear: nothing to copy")
local qb = gpt2 { linear_bias = false, qkv_bias = true }
local q0, q1 = run(qb), run(qb, { addmm_bias = true })
t.ok(op(q1, "qkv").fwd > op(q0, "qkv").fwd and op(q1, "o_proj").fwd == op(q0, "o_proj").fwd,
     "qkv_bias: the qkv linear's bias copied, o_proj has none")

-- A case's workload states it (validation/SCHEMA.md workload.addmm_bias).
t.is(require("gpuplan.validate").WORKLOAD_READ.addmm_bias.train, true,
     "the train kind reads workload.addmm_bias")

-- Fused kernels have no torch.addmm to run: refused, naming the option.
t.raises(function() run(gpt2(), { stack = "megatron", addmm_bias = true }) end,
  "train: addmm_bias is the eager modules' torch.addmm", "addmm_bias with fused kernels", true)
t.raises(function() run(gpt2(), { addmm_bias = "yes" }) end,
  "addmm_bias must be true or false", "addmm_bias not a boolean")

t.done_testing()
