-- A parallel layer whose attention and MLP both read one pre-norm's output
-- (the model field shared_norm, with parallel_attn): GPT-J's GPTJBlock
-- normalises once ("hidden_states = self.ln_1(hidden_states)") and feeds
-- the result to self.attn and self.mlp; TensorRT-LLM's GPTJDecoderLayer the
-- same ("hidden_states = self.input_layernorm(hidden_states)", then
-- "self.mlp(hidden_states)").  No norm runs before the MLP
-- (engine/model_ops.c model_layer_ops).
-- Run with ./gpuplan run tests/lua/shared_norm.t.
local t = require "tap"
local gp = require "gpuplan"
local core = require "gpuplan.core"

t.plan(10)

-- GPT-J 6B's shapes (28 layers, hidden 4096, 16 heads of 256, MLP 16384
-- ungated, vocab 50400) on one H100 under TensorRT-LLM, a decode step of
-- batch 64.
local function model(shared, par)
  return { id = "gptj-test", layers = 28, hidden = 4096, heads = 16, kv_heads = 16,
           head_dim = 256, ffn_hidden = 16384, ffn_gated = false, vocab = 50400,
           parallel_attn = par == nil and true or par, shared_norm = shared }
end
local function decode(shared, par)
  return gp.infer { model = model(shared, par), gpu = "h100-sxm", gpus = 1, batch = 64,
                    input = 128, output = 128, runtime = "trtllm" }.decode
end
local function op(d, name)
  for _, o in ipairs(d.ops) do
    if o.name == name then return o end
  end
end

local two, one = decode(nil), decode(true)
-- The two-norm layer prices mlp_norm over the same 64 x 4096 elements as
-- attn_norm (each read and written in 16 bits: 64 x 4096 x 2 x 2 =
-- 1,048,576 B, memory-bound both), so the same time.  Exact: one formula.
t.is(op(two, "mlp_norm").bytes, 64 * 4096 * 2 * 2, "mlp_norm: 1 MiB a layer read and written")
t.near(op(two, "mlp_norm").total, op(two, "attn_norm").total, 1e-15,
       "mlp_norm priced as attn_norm (same bytes, 28 calls)")
-- shared_norm: no mlp_norm op; attn_norm is kept.
t.ok(op(one, "mlp_norm") == nil, "shared_norm: no mlp_norm")
t.ok(op(one, "attn_norm") ~= nil, "shared_norm: attn_norm kept")
-- Nothing else moves: the step is shorter by exactly the op it drops.
-- Float rounding of a sum of 12 ops: 1e-12 s.
t.near(two.gpu_time - one.gpu_time, op(two, "mlp_norm").total, 1e-12,
       "the step shorter by mlp_norm's time alone")
-- shared_norm = false is the two-norm layer.
t.is(decode(false).gpu_time, two.gpu_time, "shared_norm = false: two norms")

-- Only a parallel layer can share its norm: refused without parallel_attn,
-- naming the field; a value that is not a boolean is refused by name.
local ok, err = pcall(decode, true, false)
t.ok(not ok and tostring(err):find("shared_norm needs parallel_attn", 1, true) ~= nil,
     "shared_norm without parallel_attn is refused: " .. tostring(err))
ok, err = pcall(decode, "yes")
t.ok(not ok and tostring(err):find("shared_norm", 1, true) ~= nil,
     "shared_norm = 'yes' is refused by name: " .. tostring(err))

-- The parameter count holds one norm a layer (engine/model.c
-- model_layer_norms): GPT-J's LayerNorm, gain and bias, 2 x 4096 = 8,192
-- elements a norm; two a layer and the final one 28 x 2 x 8,192 + 8,192 =
-- 466,944, one a layer 28 x 8,192 + 8,192 = 237,568.  Exact: integers.
local function norms(shared)
  return core.model_params(t.with(model(shared), { norm = "layer" })).norms
end
t.is(norms(nil), 28 * 2 * 8192 + 8192, "two norms a layer: 466,944 norm parameters")
t.is(norms(true), 28 * 8192 + 8192, "shared_norm: one a layer, 237,568")
