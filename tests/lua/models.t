-- Every shipped model: the engine's parameter count (core.model_params)
-- against the published total in its catalog entry, and the MoE activated
-- counts.  Run with ./gpuplan run tests/lua/models.t.
local t = require "tap"
local catalog = require "gpuplan.catalog"
local core = require "gpuplan.core"
local memory = require "gpuplan.memory"

-- Only the model files: the test must not depend on the rest of the
-- catalog (models reference nothing else).
local cat, errs = catalog.load { "catalog/models" }
t.is(#errs, 0, "catalog/models loads without errors")
for _, e in ipairs(errs) do t.diag(e) end

-- The models the catalog promises (issue 3, item 5).
local required = {
  "llama2-7b", "llama2-13b", "llama2-70b", "llama3-8b", "llama3-70b",
  "llama3.1-8b", "llama3.1-70b", "llama3.1-405b", "llama3.2-1b",
  "llama3.2-3b", "qwen2.5-7b", "qwen2.5-14b", "qwen2.5-32b", "qwen2.5-72b",
  "qwen3-8b", "qwen3-32b", "qwen3-30b-a3b", "qwen3-235b-a22b",
  "mixtral-8x7b", "deepseek-v3", "gpt3-175b", "megatron-gpt-1.7b",
  "megatron-gpt-3.6b", "megatron-gpt-7.5b", "megatron-gpt-18b",
  "megatron-gpt-22b", "megatron-gpt-39b", "megatron-gpt-76b",
  "megatron-gpt-145b", "megatron-gpt-175b", "megatron-gpt-310b",
  "megatron-gpt-530b", "megatron-gpt-1t", "bloom-176b", "qwen2-vl-7b",
  "qwen2-vl-72b", "qwen2.5-vl-7b", "qwen2.5-vl-72b", "llava-1.5-7b",
  "llava-1.5-13b", "t5-3b", "t0-3b", "flan-t5-xxl",
}
local missing = {}
for _, id in ipairs(required) do
  if not cat.models[id] then missing[#missing + 1] = id end
end
t.is(table.concat(missing, ", "), "", "every promised model is in the catalog")

-- Tolerance: 1%, or half a unit in the last digit the source printed when
-- that is wider (Narayanan et al. Table 1 prints "1.7": anything in
-- [1.65, 1.75) is that figure, +-2.9%).  The digits are those written in
-- the catalog file, which copy the source.
local function printed_halfunit(v)
  local s = string.format("%.12g", v)
  local dec = s:match("%.(%d+)$")
  return 0.5 * 10 ^ -(dec and #dec or 0) / v
end

-- The plumbing the published counts depend on: linear biases and a
-- learned position table must reach the engine.  On a 1-layer model of
-- hidden 8, MLP 32: biases q,k,v,o 4*8 + MLP 32 + 8 = 72 more
-- parameters; 16 positions x 8 = 128 more.
local probe = { layers = 1, hidden = 8, heads = 2, ffn_hidden = 32,
                vocab = 16, norm = "layer" }
local plain = core.model_params(probe).total
probe.linear_bias = true
t.is(core.model_params(probe).total - plain, 72, "the binding passes linear_bias")
probe.linear_bias, probe.pos_embeddings = nil, 16
t.is(core.model_params(probe).total - plain, 128, "the binding passes pos_embeddings")

-- ffn_act = "relu" reaches the engine: ReLU keeps its output, which is also
-- the down-projection's input, so a plain MLP saves one f-wide tensor less:
-- 1 layer x 4 tokens x f 32 x 2 B = 256 B fewer activations.
probe.pos_embeddings = nil
local function act(m)
  local r = core.memory(m, { capacity = 80e9, seq = 4,
    recipe = memory.recipe_record("recipe", "mixed-16"),
    optimizer = memory.recipe_record("optimizer", "adamw") })
  for _, c in ipairs(r.components) do if c.name == "activations" then return c.bytes end end
end
local gelu = act(probe)
probe.ffn_act = "relu"
t.is(gelu - act(probe), 256, "the binding passes ffn_act relu")
-- Squared ReLU (relu2) keeps one f-wide tensor for its backward, as GeLU
-- does (engine/memory_act.c mlp_saved): the same activations; its output,
-- the down-projection's input, is a tensor of its own, unlike ReLU's.
probe.ffn_act = "relu2"
t.is(act(probe), gelu, "the binding passes ffn_act relu2: kept as GeLU's")
probe.ffn_gated = true
t.raises(function() core.model_params(probe) end,
  "ffn_act 'relu2' applies to a plain MLP", "relu2 on a gated MLP refused")
probe.ffn_gated = nil
probe.ffn_act = "default"
t.raises(function() core.model_params(probe) end,
  "model.ffn_act must be 'relu', 'relu2', 'gelu', 'gelu_new' or 'silu' (got default)",
  "an unknown ffn_act refused, naming the value given", true)
-- a value of another type (a script's ffn_act = 2) is said as given
probe.ffn_act = 2
t.raises(function() core.model_params(probe) end,
  "model.ffn_act must be 'relu', 'relu2', 'gelu', 'gelu_new' or 'silu' (got 2)",
  "a number for ffn_act refused, naming it", true)
probe.ffn_act = nil

-- positions reaches the engine: an unknown kind is refused by name, and a
-- learned table with rope contradicts itself (engine/model.c).
probe.positions = "relative"
t.raises(function() core.model_params(probe) end,
  "model.positions must be 'rope', 'learned', 'alibi' or 'none' (got relative)",
  "an unknown positions refused, naming it", true)
probe.positions, probe.pos_embeddings = "rope", 16
t.raises(function() core.model_params(probe) end,
  "pos_embeddings = 16 is a learned position table: positions must be learned",
  "a position table under rope refused")
probe.positions = "learned"
t.is(core.model_params(probe).total - plain, 128, "positions learned with its table")
-- none (Megatron-Core's position_embedding_type "none") has no weights:
-- the plain total.
probe.positions, probe.pos_embeddings = "none", nil
t.is(core.model_params(probe).total, plain, "positions none: no position weights")
probe.positions, probe.pos_embeddings = nil, nil
-- Nemotron 3 Nano's attention layers apply none (MambaModelProvider's
-- position_embedding_type "none", kept by Nemotron3NanoProvider).
t.is(cat.models["nemotron-3-nano-30b-a3b"].positions, "none",
  "nemotron-3-nano-30b-a3b: no position embedding")
-- The shipped non-rotary models say so: GPT-3's table makes it learned,
-- BLOOM states ALiBi (its position bias has no table).
t.is(cat.models["gpt3-175b"].positions, "learned", "gpt3-175b: learned positions")
t.is(cat.models["bloom-176b"].positions, "alibi", "bloom-176b: ALiBi")

local ids = {}
for id in pairs(cat.models) do ids[#ids + 1] = id end
table.sort(ids)
for _, id in ipairs(ids) do
  local m = cat.models[id]
  local ok, p = pcall(core.model_params, m)
  if not ok then
    t.ok(false, id .. ": engine refuses the entry")
    t.diag(p)
  else
    local got = p.total / 1e9
    local tol = math.max(0.01, printed_halfunit(m.params_b))
    t.near(got, m.params_b, tol, string.format(
      "%s: engine %.3fB vs published %sB (tol %.2f%%)", id, got,
      string.format("%.12g", m.params_b), tol * 100))
  end
end

-- Activated parameters of the MoE models: 2% because the publishers give
-- two significant figures under different conventions (DeepSeek-V3's 37B
-- leaves out the 0.93B input embedding, the engine's 37.55B keeps it;
-- Qwen3-30B-A3B's 3.3B truncates 3.35B).  Exact hand counts are in
-- tests/c/t_model.c.
for _, id in ipairs(ids) do
  local m = cat.models[id]
  if m.active_params_b then
    local p = core.model_params(m)
    t.near(p.active / 1e9, m.active_params_b, 0.02,
      string.format("%s: active %.3fB vs published %sB", id, p.active / 1e9,
        string.format("%.12g", m.active_params_b)))
  end
end

-- Spot checks through the binding against the hand counts of
-- tests/c/t_model.c (exact: every count is an integer below 2^53).
t.is(core.model_params(cat.models["llama2-7b"]).total, 6738415616,
  "llama2-7b: 32*202,383,360 + 2*131,072,000 + 4,096")
t.is(core.model_params(cat.models["mixtral-8x7b"]).active, 12879925248,
  "mixtral active: 46,702,792,704 - 32*6*176,160,768")
-- Llama-2-70B KV in bf16: 2*80*8*128*2 B = 327,680 B/token; 4096 tokens
-- = 1,342,177,280 B = 1.25 GiB.
t.is(core.model_kv_bytes(cat.models["llama2-70b"], 4096, 2), 1.25 * 2 ^ 30,
  "llama2-70b KV for 4096 tokens in bf16 = 1.25 GiB")
-- T5-3B through the binding (encoder_layers, rel_buckets, ffn_act reach
-- the engine): 32,899,072 + 24 x 50,333,696 + 24 x 67,111,936 + 4,096
-- (tests/c/t_model.c).
t.is(core.model_params(cat.models["t5-3b"]).total, 2851598336,
  "t5-3b: embedding + 24 encoder + 24 decoder layers + bias tables + norms")
-- DeepSeek-V3 MLA: 61 * (512 + 64) * 2 B = 70,272 B/token.
t.is(core.model_kv_bytes(cat.models["deepseek-v3"], 1, 2), 70272,
  "deepseek-v3 MLA KV per token")

t.done_testing()
