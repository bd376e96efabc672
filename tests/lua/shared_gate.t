-- The shared expert's sigmoid gate (model.moe.shared_expert_gate):
-- Qwen1.5-MoE and Qwen2-MoE scale their shared expert's output per token,
-- transformers' Qwen2MoeSparseMoeBlock "self.shared_expert_gate =
-- torch.nn.Linear(config.hidden_size, 1, bias=False)" and
-- "shared_expert_output = F.sigmoid(self.shared_expert_gate(hidden_states))
-- * shared_expert_output" (vLLM's qwen2_moe.py the same).  One rule
-- (engine/model_ops.c model_shared_gate_ops) gives its three kernels --
-- the [T x h] x [h x 1] GEMV, the sigmoid, the multiply -- to gp.infer's
-- own step, the MoE serving model and training; gpuplan.rl's eager launch
-- count takes its count (core.SHARED_GATE_OPS).  The importer sets the
-- field for model_type qwen2_moe with a shared expert.
-- Run with ./gpuplan run tests/lua/shared_gate.t.
local t = require "tap"
local gp = require "gpuplan"
local core = require "gpuplan.core"
local hf = require "gpuplan.hf"
local rl = require "gpuplan.rl"

t.plan(25)

-- Qwen2-57B-A14B's shape (its config.json: hidden 3584, 28 layers, 64
-- experts of 2560, top 8, shared_expert_intermediate_size 20480).
local function q57(gate)
  return { id = "q57-shape", layers = 28, hidden = 3584, heads = 28, kv_heads = 4,
           head_dim = 128, ffn_hidden = 18944, ffn_gated = true, vocab = 151936,
           tied_embeddings = false, qkv_bias = true,
           moe = { experts = 64, top_k = 8, shared_experts = 1, ffn_hidden = 2560,
                   shared_ffn_hidden = 20480, shared_expert_gate = gate } }
end
local function row(r, name)
  for _, o in ipairs(r.ops or {}) do if o.name == name then return o end end
end

-- The importer: model_type qwen2_moe with a shared expert gets the gate
-- (no config field states it; the modeling file builds it).
local cfg = { model_type = "qwen2_moe", hidden_size = 2048, intermediate_size = 5632,
              moe_intermediate_size = 1408, shared_expert_intermediate_size = 5632,
              num_experts = 60, num_experts_per_tok = 4, num_attention_heads = 16,
              num_hidden_layers = 24, vocab_size = 151936 }
local e = hf.model_from_hf(cfg, { id = "qwen1.5-moe" })
t.is(e.moe.shared_expert_gate, true, "import: qwen2_moe with a shared expert has the gate")
t.like(hf.to_lua(e), "shared_expert_gate = true", "import: the catalog text states it", true)
cfg.shared_expert_intermediate_size = 0
e = hf.model_from_hf(cfg, { id = "qwen2-moe-noshared" })
t.is(e.moe.shared_expert_gate, nil, "import: no shared expert, no gate")
e = hf.model_from_hf({ model_type = "qwen3_moe", hidden_size = 2048, intermediate_size = 6144,
                       moe_intermediate_size = 768, num_experts = 128, num_experts_per_tok = 8,
                       num_attention_heads = 32, num_key_value_heads = 4, head_dim = 128,
                       num_hidden_layers = 48, vocab_size = 151936 }, { id = "qwen3-moe" })
t.is(e.moe.shared_expert_gate, nil, "import: Qwen3-MoE has no shared expert, no gate")

-- The engine refuses a gate with no shared expert to scale.
local bad = q57(true)
bad.moe.shared_experts = 0
bad.moe.shared_ffn_hidden = nil
t.raises(function() core.model(bad) end,
         "moe.shared_expert_gate is set but moe.shared_experts is 0",
         "a gate without a shared expert is refused", true)

-- Its parameters: the h x 1 weight a MoE layer, counted with the router's
-- (28 x 3584 = 100352 more, in the total and in what a token multiplies
-- through).  Exact: integer sums.
local p0, p1 = gp.params(q57(false)), gp.params(q57(true))
t.is(p1.router - p0.router, 28 * 3584, "params: the gate's 28 x 3584 with the router's")
t.is(p1.matmul_active - p0.matmul_active, 28 * 3584, "params: a token multiplies through it")

-- gp.infer's own step (TP 2, no EP), vLLM, one sequence decoding (T = 1
-- token a step).  Rows a MoE layer (count 28), 16-bit elements (2 B):
--   shared_gate      2 T h = 7168 FLOP; h weights + T h in + T out =
--                    3584 + 3584 + 1 = 7169 elements, 14338 B
--   shared_gate_sig  4 T = 4 FLOP; T in + T out = 2 elements, 4 B
--   shared_gate_mul  T h = 3584 FLOP; T h + T in + T h out = 7169
--                    elements, 14338 B
-- Exact but for rounding (1e-12): the op list's own sums.
local job = { gpu = "a100-sxm-80gb", gpus = 2, tp = 2, runtime = "vllm", input = 128,
              output = 128, batch = 1 }
local on = gp.infer(t.with(job, { model = q57(true) }))
local off = gp.infer(t.with(job, { model = q57(false) }))
local g, s, mu = row(on, "shared_gate"), row(on, "shared_gate_sig"), row(on, "shared_gate_mul")
t.ok(g and s and mu, "infer: the gate's three rows")
t.ok(row(off, "shared_gate") == nil, "infer: no gate, no row")
t.is(g.count, 28, "infer: a gate a MoE layer (28)")
t.near(g.flop, 2 * 3584, 1e-12, "infer: shared_gate 2 T h FLOP")
t.near(g.bytes, 2 * (3584 + 3584 + 1), 1e-12, "infer: shared_gate h weights + T (h + 1) in and out")
t.near(s.bytes, 2 * 2, 1e-12, "infer: shared_gate_sig T in, T out")
t.near(mu.flop, 3584, 1e-12, "infer: shared_gate_mul T h FLOP")
t.near(mu.bytes, 2 * (2 * 3584 + 1), 1e-12, "infer: shared_gate_mul 2 T h + T")
-- Each is a launch and the memory floor at batch 1 (about 4.9 us on an
-- A100); under CUDA graphs the token's time grows by the three rows'
-- totals, nothing else (1e-9: the step's own sum of the same terms).
t.ok(g.time > 4e-6 and g.time < 6e-6, "infer: the GEMV ~4.9 us (launch + memory floor)")
t.near(on.itl_batch1_s - off.itl_batch1_s, g.total + s.total + mu.total, 1e-9,
       "infer: the token's time grows by the three rows (28 x 3 kernels)")

-- The MoE serving model (EP 2): the same three rows over the tokens its
-- shared expert runs (Tg, read back from shared_up: 2 Tg h x 2 x 20480 / 2
-- FLOP, gate and up at TP 2), shared_gate 2 (h + Tg (h + 1)) B and
-- shared_gate_mul 2 (2 Tg h + Tg) B.  1e-12: the same sums.
local sv = gp.infer(t.with(job, { model = q57(true), ep = 2 }))
t.is(sv.ep, 2, "serve: the EP 2 layout goes to the MoE serving model")
local sg, sm = row(sv, "shared_gate"), row(sv, "shared_gate_mul")
local Tg = row(sv, "shared_up").flop / (2 * 3584 * 2 * 20480 / 2)
t.ok(sg and sm and row(sv, "shared_gate_sig") and Tg >= 1, "serve: the gate's three rows")
t.near(sg.bytes, 2 * (3584 + Tg * 3585), 1e-12, "serve: shared_gate over shared_up's tokens")
t.near(sm.bytes, 2 * (2 * Tg * 3584 + Tg), 1e-12, "serve: shared_gate_mul over them")

-- Training (Megatron-Core, TP 2, EP 4): the three kernels forward and
-- backward, and the step slower by them.
local function tj(gate)
  return { model = q57(gate), gpu = "a800-sxm-80gb", gpus = 8, tp = 2, ep = 4, seq = 4096,
           batch = 1, global_batch = 8, stack = "megatron" }
end
local tr = gp.train(tj(true))
local tg = row(tr, "shared_gate")
t.ok(tg and tg.fwd > 0 and tg.bwd > 0, "train: shared_gate forward and backward")
t.ok(row(tr, "shared_gate_mul") and row(tr, "shared_gate_sig"), "train: sigmoid and multiply")
t.ok(tr.step_s > gp.train(tj(false)).step_s, "train: the gate makes the step slower")

-- vLLM eager (enforce_eager, or a context past max_seq_len_to_capture):
-- the host's launches a MoE layer 3 more (gpuplan.rl eager_ops_per_layer:
-- attention 6, no qk_norm; router 1 + 1, topk_softmax path 4, fused MoE 7,
-- shared expert 4, gate 3; TP 2: 2 all-reduces).
t.is(rl.eager_ops_per_layer(q57(true), 2) - rl.eager_ops_per_layer(q57(false), 2), 3,
     "eager: 3 more launches a MoE layer")
