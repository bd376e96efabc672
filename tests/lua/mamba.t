-- A hybrid Mamba-2 stack (model.hybrid_pattern, model.mamba; engine/model.c)
-- through the Lua binding: a small model's counts derived by hand, the
-- catalog's Nemotron 3 Nano, and the refusals.
-- Run with ./gpuplan run tests/lua/mamba.t.
local t = require "tap"
local gp = require "gpuplan"
local core = require "gpuplan.core"

t.plan(29)

-- 4 layers "M*M-": hidden 64, MLP 128 (plain), vocab 100, RMSNorm; Mamba
-- heads 4 x head_dim 16 (d_inner 64), state 8, groups 2, conv 4 and chunk
-- 128 by default.
local function small()
  return { layers = 4, hidden = 64, heads = 4, ffn_hidden = 128, vocab = 100,
           hybrid_pattern = "M*M-",
           mamba = { heads = 4, head_dim = 16, state = 8, groups = 2 } }
end
-- One mixer: in_proj 64 x (2 x 64 + 2 x 2 x 8 + 4) = 64 x 164 = 10,496;
-- conv1d over 64 + 2 x 2 x 8 = 96 channels, 96 x 4 + 96 = 480; A, D,
-- dt_bias 3 x 4 = 12; gated norm 64; out_proj 64 x 64 = 4,096: 15,148, two
-- M layers 30,296.  The rest: embedding and LM head 2 x 100 x 64 = 12,800;
-- one attention layer 4 x 64 x 64 = 16,384; one MLP layer 2 x 64 x 128 =
-- 16,384; norms (4 + 1) x 64 = 320.  Total 76,184.
local p = core.model_params(small())
t.is(p.mamba, 30296, "two Mamba layers' mixers")
t.is(p.attention, 16384, "the one attention layer (*)")
t.is(p.dense_mlp, 16384, "the one MLP layer (-)")
t.is(p.norms, 320, "one pre-norm a layer and the final norm")
t.is(p.total, 76184, "the small stack's total")
-- The SSD scan at seq 256 (chunk 128, N 8, P 16): 2 groups x 2 x 128 x 8
-- = 4,096 + 4 heads x (2 x 128 x 16 + 4 x 8 x 16 + 2 x 8 x 16 / 128) =
-- 4 x 4,610 = 18,440; 22,536 a token.  The state of a sequence in bf16:
-- 2 layers x 2 B x (4 x 16 x 8 + 3 x 96) = 3,200 bytes.  Saved for the
-- backward a token a layer: 2 B x (2 x 64 + 164 + 3 x 64) + 4 B x 2
-- groups = 968 + 8 = 976 bytes.
local scan, state, act = core.model_mamba(small(), 256, 2)
t.is(scan, 22536, "SSD scan FLOP per token per layer")
t.is(state, 3200, "Mamba state bytes per sequence")
t.is(act, 976, "Mamba activation bytes per token per layer")

-- The catalog's Nemotron 3 Nano: NVIDIA's "31.6B total" (engine
-- 31,577,937,344, derived in tests/c/t_model.c).
local nano = gp.catalog():get("models", "nemotron-3-nano-30b-a3b")
t.is(core.model_params(nano).total, 31577937344, "nemotron nano total")

-- Refusals, naming the model's field.
local m = small()
m.hybrid_pattern = "M*Q-"
t.raises(function() core.model_params(m) end,
  "model.hybrid_pattern: unknown layer 'Q' at letter 3", "an unknown letter refused", true)
m.hybrid_pattern = "M*M"
t.raises(function() core.model_params(m) end,
  "model.hybrid_pattern has 3 letters but layers is 4", "a pattern of the wrong length refused", true)
m = small()
m.mamba = nil
t.raises(function() core.model_params(m) end,
  "model.hybrid_pattern has Mamba layers (M) but the model has no mamba table",
  "M without a mamba table refused", true)
m = small()
m.mamba.groups = 3
t.raises(function() core.model_params(m) end,
  "model.mamba.groups (3) must divide mamba.heads (4)", "groups not dividing heads refused", true)
m = small()
m.hybrid_pattern = "***-"
t.raises(function() core.model_params(m) end,
  "model.hybrid_pattern has no Mamba layer (M) but the model has a mamba table",
  "a mamba table without M refused", true)
m = small()
m.hybrid_pattern = nil
t.raises(function() core.model_params(m) end,
  "model.hybrid_pattern is missing, but the model has a mamba table", "a mamba table without a pattern refused", true)
-- a moe table beside a pattern without E: the schema's words
-- (schema.hybrid_problem), so a script, the catalog and a case file say
-- the same
m = small()
m.moe = { experts = 4, top_k = 1, ffn_hidden = 32 }
t.raises(function() core.model_params(m) end,
  "model.hybrid_pattern has no MoE layer (E) but the model has a moe table",
  "a moe table without E refused", true)
-- gp.train prices a hybrid stack on Megatron-Core's kernels, and the
-- memory it reports is fit's: the weights 2 B x 5,473,371,584 at EP 8
-- (tests/c/t_hybrid.c: every kind's share).
local job = { model = nano, gpu = "h100-sxm", gpus = 8, stack = "megatron", ep = 8 }
local r = gp.train(job)
t.ok(r.step_s > 0 and r.tokens_per_s_gpu > 0, "gp.train prices a hybrid stack")
t.is(r.memory.components[1].name, "weights", "the first component is the weights")
t.is(r.memory.components[1].bytes, 10946743168, "its weights, every kind's")
local f = gp.memory(job)
t.is(f.total, r.memory.total, "gp.memory (fit) agrees with the step's memory")
-- Its operator rows are every layer kind's, each at its share of the 52
-- layers (23 Mamba, 6 attention, 23 MoE; engine/train.c result_ops),
-- where they used to be the MoE layer's alone.
local share, names = {}, {}
for _, o in ipairs(r.ops) do
  share[o.kind] = o.share
  names[o.kind .. " " .. o.name] = true
end
t.ok(names["M in_proj"] and names["* qkv"] and names["E moe_up"] and share["-"] == nil,
  "ops: the M, * and E layers' rows, no - (no MLP layer)")
-- the same division of the same two integers in C and Lua: exact
t.is(share.M, 23 / 52, "ops: M's share, 23 of 52 layers")
t.is(share["*"], 6 / 52, "ops: *'s share, 6 of 52 layers")
t.is(share.E, 23 / 52, "ops: E's share, 23 of 52 layers")
-- What it does not price is refused by its key.
t.raises(function() gp.train { model = nano, gpu = "h100-sxm", gpus = 8, stack = "megatron", cp = 2 } end,
  "cp 2: a hybrid stack (model.hybrid_pattern) is priced without context parallelism",
  "cp 2 refused", true)
-- Serving: gp.infer prices its KV (the 6 attention layers) and its Mamba
-- state.  A sequence of 2048 + 256 = 2304 tokens: KV 6 layers x K and V x
-- 2 KV heads x 128 x 2 B = 6,144 B a token, 14,155,776 B; the state 23 M
-- layers x (64 x 64 x 128 fp32 SSM state = 2,097,152 B + 3 x 6144 bf16
-- conv window = 36,864 B) = 49,082,368 B; 63,238,144 B in all (exact).
local s = gp.infer { model = nano, gpu = "h100-sxm", gpus = 1 }
t.is(s.kv_per_seq, 63238144, "gp.infer: a sequence keeps its KV and its Mamba state")
t.ok(s.batch > 0 and s.tokens_per_s > 0 and s.ttft_s > 0, "gp.infer prices a hybrid stack")
t.raises(function() gp.infer { model = nano, gpu = "h100-sxm", gpus = 2, pp = 2 } end,
  "pp 2: a hybrid stack (model.hybrid_pattern) is served at pp 1", "pp 2 refused", true)
-- rl's rollouts do not price it.
t.raises(function() gp.rl { model = nano, gpu = "h100-sxm", gpus = 8 } end,
  "model.hybrid_pattern: a hybrid stack's Mamba layers are not priced by rl",
  "rl refuses a hybrid stack", true)
