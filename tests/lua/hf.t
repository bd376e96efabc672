-- gpuplan.hf: Hugging Face config.json -> catalog model entry.
-- Run with ./gpuplan run tests/lua/hf.t from the source tree.
local t = require "tap"
local hf = require "gpuplan.hf"
local core = require "gpuplan.core"
local catalog = require "gpuplan.catalog"

local F = "tests/fixtures/hf/"
local cat = assert(catalog.load { "catalog/models" })

-- Each fixture against the catalog entry of the same model: the shape
-- fields must agree exactly and the engine's count must match the
-- published total within 1% (tolerance as in tests/lua/models.t).
local pairs_ = {
  { "llama-2-7b.json", "llama2-7b" },
  { "llama-3.1-8b.json", "llama3.1-8b" },
  { "qwen2.5-7b.json", "qwen2.5-7b" },
  { "mixtral-8x7b.json", "mixtral-8x7b" },
  { "deepseek-v3.json", "deepseek-v3" },
  { "qwen2-vl-7b.json", "qwen2-vl-7b" },
  { "qwen3-30b-a3b.json", "qwen3-30b-a3b" },
  { "llava-1.5-7b.json", "llava-1.5-7b" },
  { "t5-3b.json", "t5-3b" },
  { "flan-t5-xxl.json", "flan-t5-xxl" },
  { "qwen2.5-vl-7b.json", "qwen2.5-vl-7b" },
  -- the fields of openai/gpt-oss-120b's config.json the catalog entry
  -- cites (its quantization_config and token ids left out)
  { "gpt-oss-120b.json", "gpt-oss-120b" },
}
local shape = { "layers", "hidden", "heads", "kv_heads", "ffn_gated",
                "tied_embeddings", "qkv_bias", "norm", "encoder_layers",
                "rel_buckets", "ffn_act", "qk_norm", "split_proj", "attn_sinks" }
for _, pr in ipairs(pairs_) do
  local file, id = pr[1], pr[2]
  local ok, e = pcall(hf.model_from_hf, F .. file)
  if not t.ok(ok, file .. " imports") then
    t.diag(tostring(e))
  else
    local c = cat.models[id]
    local diffs = {}
    for _, k in ipairs(shape) do
      local want = c[k]
      if k == "kv_heads" and want == nil then want = c.heads end
      if e[k] ~= want then
        diffs[#diffs + 1] = string.format("%s %s ~= %s", k, tostring(e[k]),
                                          tostring(want))
      end
    end
    -- head_dim matters only outside MLA (DeepSeek: 7168/128 = 56 unused).
    if not c.mla and e.head_dim ~= c.head_dim then
      diffs[#diffs + 1] = "head_dim"
    end
    t.is(table.concat(diffs, ", "), "", file .. " shape equals " .. id)
    local total = core.model_params(e).total
    t.near(total / 1e9, c.params_b, 0.01,
      string.format("%s: %.3fB vs published %gB", file, total / 1e9,
                    c.params_b))
  end
end

-- An import prices as its catalog entry: every field the step reads comes
-- across (split_proj from the model type: transformers' LlamaAttention and
-- LlamaMLP keep q_proj, k_proj, v_proj, gate_proj, up_proj apart, a GEMM
-- each on the hf stack).  Same inputs, same engine: equal to 1e-12
-- (float noise only); without split_proj the import priced 1.6% faster.
do
  local gp = require "gpuplan"
  local job = { gpu = "h100-sxm", gpus = 8 }
  local function step(m)
    job.model = m
    return gp.train(job).step_s
  end
  local imported = step(hf.model_from_hf(F .. "llama-3.1-8b.json"))
  t.near(imported / step("llama3.1-8b"), 1, 1e-12,
    "llama-3.1-8b.json: the train step equals the catalog's llama3.1-8b")
end

-- Specific mappings, each with where it comes from.
local e = hf.model_from_hf(F .. "mixtral-8x7b.json")
-- num_local_experts 8, num_experts_per_tok 2, expert width =
-- intermediate_size 14336 (Mixtral has no moe_intermediate_size).
t.is(string.format("%d/%d/%d", e.moe.experts, e.moe.top_k, e.moe.ffn_hidden),
  "8/2/14336", "mixtral: num_local_experts, top-k, expert width")
t.is(e.sliding_window, nil, "mixtral: sliding_window null -> none")
t.is(e.id, "mixtral-8x7b", "id from the file name")

e = hf.model_from_hf(F .. "qwen3-30b-a3b.json")
t.is(e.moe.experts, 128, "qwen3 moe: num_experts")
t.is(e.moe.ffn_hidden, 768, "qwen3 moe: moe_intermediate_size")
t.is(e.qk_norm, true, "qwen3 moe: q_norm and k_norm from the model type (no config field)")

-- Qwen2-MoE's decoder_sparse_step (transformers' Qwen2MoeDecoderLayer:
-- MoE where "(layer_idx + 1) % config.decoder_sparse_step == 0") is the
-- catalog's moe.layer_step: at 2, 24 of the 48 layers, the others dense
-- at intermediate_size.
do
  local q = require("cjson").decode(assert(io.open(F .. "qwen3-30b-a3b.json")):read("a"))
  q.decoder_sparse_step = 2
  local qe = hf.model_from_hf(q, { id = "q" })
  t.is(qe.moe.layer_step, 2, "decoder_sparse_step 2 -> moe.layer_step 2")
  t.is(require("gpuplan.schema").moe_layers(qe), 24, "24 of 48 layers MoE")
  q.decoder_sparse_step = 49
  t.raises(function() hf.model_from_hf(q, { id = "q" }) end,
    "config: decoder_sparse_step must be in 1..48 (num_hidden_layers), got 49",
    "a step past the layers refused", true)
end

e = hf.model_from_hf(F .. "deepseek-v3.json")
t.is(string.format("%d/%d/%d", e.moe.experts, e.moe.shared_experts,
  e.moe.dense_layers), "256/1/3",
  "deepseek: n_routed_experts, n_shared_experts, first_k_dense_replace")
t.is(string.format("%d/%d/%d/%d/%d", e.mla.q_lora_rank, e.mla.kv_lora_rank,
  e.mla.qk_nope_head_dim, e.mla.qk_rope_head_dim, e.mla.v_head_dim),
  "1536/512/128/64/128", "deepseek: MLA fields")
t.is(e.dtype, "fp8", "deepseek: fp8 quantization_config wins over torch_dtype")
-- MLA KV: 61 * (512 + 64) * 2 B = 70,272 B per token in bf16.
t.is(core.model_kv_bytes(e, 1, 2), 70272, "deepseek import: MLA KV bytes")

-- DeepSeek-V3's YaRN states mscale = mscale_all_dim = 1: transformers'
-- attention factor get_mscale(40, 1) / get_mscale(40, 1) = 1, no scale.
t.is(e.rope_attention_factor, nil, "deepseek: yarn with mscale 1/1 scales nothing")

-- gpt-oss: YaRN factor 32 with no mscale: 0.1 ln 32 + 1 = 1.34657
-- (transformers' get_mscale); swiglu_limit 7 clamps the gated experts;
-- attention_bias and the experts' biases; layer_types' 18 sliding layers.
e = hf.model_from_hf(F .. "gpt-oss-120b.json")
t.near(e.rope_attention_factor, 0.1 * math.log(32) + 1, 1e-12,
  "gpt-oss: rope_attention_factor from rope_scaling yarn factor 32")
t.is(tostring(e.ffn_clamp) .. "/" .. tostring(e.linear_bias) .. "/" .. tostring(e.qkv_bias),
  "true/true/true", "gpt-oss: swiglu_limit clamps, biases on every linear")
t.is(string.format("%d/%d/%d/%d", e.moe.experts, e.moe.top_k, e.sliding_window.size,
  e.sliding_window.layers), "128/4/128/18", "gpt-oss: experts, top-k, sliding layers")

e = hf.model_from_hf(F .. "llama-2-7b.json")
t.is(e.name, "meta-llama/Llama-2-7b-hf", "name from _name_or_path")
t.is(e.dtype, "fp16", "torch_dtype float16 -> fp16")
t.is(e.head_dim, 128, "head_dim absent: 4096 / 32")

e = hf.model_from_hf(F .. "qwen2-vl-7b.json")
t.is(e.vision.layers, 32, "qwen2-vl: vision depth")
-- Merger: LayerNorm then MLP 4*1280 -> 5120 -> 3584 with biases:
-- 5120*5120 + 5120 + 5120*3584 + 3584 = 44,573,184.
t.is(e.vision.projector_params, 44573184, "qwen2-vl: merger params")
-- 448 px / 14 px patches / 2x2 merge = 16 a side -> 256 tokens.
t.is(e.vision.tokens_per_image, 256, "qwen2-vl: tokens per 448px image")
t.is(e.sliding_window, nil, "qwen2-vl: use_sliding_window false -> none")
e = hf.model_from_hf(F .. "qwen2-vl-7b.json", { image_size = 896 })
-- 896 / 28 = 32 a side -> 1024 tokens.
t.is(e.vision.tokens_per_image, 1024, "qwen2-vl: --image-size 896")

e = hf.model_from_hf(F .. "llava-1.5-7b.json")
t.is(e.family, "llava", "llava: family is the top-level model_type")
-- llava-hf's text_config omits LlamaConfig defaults: hidden 4096 etc.
t.is(e.hidden, 4096, "llava: text_config class default hidden_size")
t.is(e.vocab, 32064, "llava: text_config vocab_size 32064")
-- (336/14)^2 = 576 image tokens; projector 1024*4096 + 4096 +
-- 4096*4096 + 4096 = 20,979,712.
t.is(e.vision.tokens_per_image, 576, "llava: 576 tokens per image")
t.is(e.vision.projector_params, 20979712, "llava: 2-layer MLP projector")
local listed = table.concat(e._defaults, "\n")
t.like(listed, "text_config.hidden_size absent: class default 4096",
  "llava: applied defaults are listed", true)

-- Qwen2.5-VL shape: vision_config with out_hidden_size and a SwiGLU MLP;
-- text fields at the top level.  Must count as the catalog entry does.
do
  local cfg = require("cjson").decode(
    io.open(F .. "qwen2.5-7b.json"):read("a"))
  cfg.model_type = "qwen2_5_vl"
  cfg.vision_config = { depth = 32, hidden_size = 1280,
    intermediate_size = 3420, num_heads = 16, out_hidden_size = 3584,
    patch_size = 14, spatial_merge_size = 2, temporal_patch_size = 2 }
  local v = hf.model_from_hf(cfg, { id = "qwen2.5-vl-7b" })
  t.is(v.vision.ffn_gated, true, "qwen2.5-vl: gated vision MLP")
  t.is(core.model_params(v).total,
    core.model_params(cat.models["qwen2.5-vl-7b"]).total,
    "qwen2.5-vl import counts as the catalog entry")
end

-- A table works as well as a path; missing kv heads and head_dim default.
e = hf.model_from_hf({ model_type = "mistral", hidden_size = 4096,
  intermediate_size = 14336, num_attention_heads = 32,
  num_hidden_layers = 32, vocab_size = 32000, sliding_window = 4096,
  max_position_embeddings = 32768, tie_word_embeddings = false },
  { id = "mistral-7b-v0.1" })
t.is(e.kv_heads, 32, "table: num_key_value_heads absent -> MHA")
t.is(e.sliding_window and e.sliding_window.layers, 32,
  "mistral: sliding_window without use_sliding_window -> every layer")
-- Qwen2 semantics: layers >= max_window_layers slide.
e = hf.model_from_hf({ model_type = "qwen2", hidden_size = 896,
  intermediate_size = 4864, num_attention_heads = 14, num_key_value_heads = 2,
  num_hidden_layers = 24, vocab_size = 151936, sliding_window = 4096,
  use_sliding_window = true, max_window_layers = 21,
  max_position_embeddings = 32768 }, { id = "q" })
t.is(e.sliding_window and e.sliding_window.layers, 3,
  "qwen2: 24 layers - max_window_layers 21 = 3 sliding")
t.is(e.tied_embeddings, false, "qwen2 rule: untied when the config is silent")
-- Qwen2-MoE: a shared expert of 5632 = 4 experts of 1408.
e = hf.model_from_hf({ model_type = "qwen2_moe", hidden_size = 2048,
  intermediate_size = 5632, moe_intermediate_size = 1408,
  shared_expert_intermediate_size = 5632, num_experts = 60,
  num_experts_per_tok = 4, num_attention_heads = 16, num_hidden_layers = 24,
  vocab_size = 151936 }, { id = "qwen1.5-moe" })
t.is(e.moe.shared_experts, 4, "qwen2_moe: shared width 5632 = 4 x 1408")
-- GPT-2 (openai-community/gpt2 config.json): a learned wpe of n_positions
-- rows; the count is the published 124,439,808 = wte 50257 x 768 + wpe
-- 1024 x 768 + 12 x 7,087,872 (12 h^2 + 13 h) + the final LayerNorm 1,536.
e = hf.model_from_hf({ model_type = "gpt2", n_embd = 768, n_head = 12,
  n_layer = 12, n_positions = 1024, vocab_size = 50257 }, { id = "gpt2" })
t.is(e.positions, "learned", "gpt2: learned positions")
t.is(core.model_params(e).total, 124439808, "gpt2: wte + wpe + 12 layers + ln_f")
-- The plain MLP's activation (model.ffn_act): GPT-2's config.json states
-- "activation_function": "gelu_new", GPT2Config's default the same (taken,
-- and said, where the config is silent); OPT's states "relu"; another
-- activation is left unset and said; a non-string names its field.
t.is(e.ffn_act, "gelu_new", "gpt2: activation_function absent: GPT2Config's gelu_new")
t.ok(table.concat(e._defaults, "; "):find("activation_function absent: gelu_new", 1, true),
  "gpt2: the class default is said")
e = hf.model_from_hf({ model_type = "gpt2", n_embd = 768, n_head = 12, n_layer = 12,
  n_positions = 1024, vocab_size = 50257, activation_function = "gelu_new" }, { id = "gpt2" })
t.is(e.ffn_act, "gelu_new", "gpt2: activation_function gelu_new -> ffn_act gelu_new")
e = hf.model_from_hf({ model_type = "opt", hidden_size = 2048, ffn_dim = 8192,
  num_attention_heads = 32, num_hidden_layers = 24, vocab_size = 50272,
  activation_function = "relu" }, { id = "opt-1.3b" })
t.is(e.ffn_act, "relu", "opt: activation_function relu -> ffn_act relu")
-- Nemotron-4 (transformers NemotronConfig): hidden_act "relu2", squared
-- ReLU on a plain MLP (NemotronMLP: up_proj, down_proj), LayerNorm, head
-- untied.  Nemotron-4 15B's dims (NeMo Nemotron4Config15B) count as
-- catalog nemotron4-15b: 15,628,775,424 (tests/c/t_model.c derives it).
e = hf.model_from_hf({ model_type = "nemotron", hidden_size = 6144,
  intermediate_size = 24576, num_attention_heads = 48, num_key_value_heads = 8,
  num_hidden_layers = 32, vocab_size = 256000, hidden_act = "relu2" },
  { id = "nemotron4-15b" })
t.is(e.ffn_act, "relu2", "nemotron: hidden_act relu2 -> ffn_act relu2")
t.is(e.ffn_gated, false, "nemotron: one up projection, no gate")
t.is(core.model_params(e).total, 15628775424, "nemotron4-15b dims: 15,628,775,424")
e = hf.model_from_hf({ model_type = "nemotron", hidden_size = 6144,
  intermediate_size = 24576, num_attention_heads = 48, num_key_value_heads = 8,
  num_hidden_layers = 32, vocab_size = 256000 }, { id = "nemotron4-15b" })
t.is(e.ffn_act, "relu2", "nemotron: hidden_act absent: NemotronConfig's relu2")
-- OPT-1.3B (facebook/opt-1.3b config.json: hidden_size 2048, ffn_dim
-- 8192, 32 heads, 24 layers, vocab 50272, max_position_embeddings 2048,
-- word_embed_proj_dim 2048, do_layer_norm_before true).  modeling_opt.py:
-- every linear biased (enable_bias, default True), learned positions of
-- 2048 + 2 rows (OPTLearnedPositionalEmbedding's offset), q/k/v apart, the
-- head tied.  Its count by hand: embed_tokens 50272 x 2048 = 102,957,056;
-- positions 2050 x 2048 = 4,198,400; a layer's q, k, v, out_proj 4 x (2048^2
-- + 2048) = 16,785,408, fc1 2048 x 8192 + 8192 = 16,785,408, fc2 8192 x
-- 2048 + 2048 = 16,779,264, two LayerNorms 4 x 2048 = 8,192: 50,358,272,
-- x 24 = 1,208,598,528; the final LayerNorm 4,096.  Total 1,315,758,080
-- (exact: whole numbers).
local opt13 = { model_type = "opt", hidden_size = 2048, ffn_dim = 8192,
  num_attention_heads = 32, num_hidden_layers = 24, vocab_size = 50272,
  max_position_embeddings = 2048, word_embed_proj_dim = 2048,
  do_layer_norm_before = true, activation_function = "relu" }
e = hf.model_from_hf(opt13, { id = "opt-1.3b" })
t.is(string.format("%s/%s/%s/%s/%s/%d/%s", e.ffn_act, tostring(e.qkv_bias),
  tostring(e.linear_bias), e.positions, tostring(e.tied_embeddings), e.pos_embeddings,
  e.split_proj), "relu/true/true/learned/true/2050/qkv",
  "opt: relu, every linear biased, 2050 learned positions, tied, q/k/v apart")
t.is(core.model_params(e).total, 1315758080, "opt-1.3b: the parameters by hand")
e = hf.model_from_hf(t.with(opt13, { enable_bias = false }), { id = "o" })
t.ok(e.qkv_bias == false and e.linear_bias == nil and table.concat(e._defaults, "; "):find(
  "enable_bias false: no linear has a bias", 1, true), "opt: enable_bias false, said")
local noact = t.with(opt13)
noact.activation_function = nil
e = hf.model_from_hf(noact, { id = "o" })
t.is(e.ffn_act, "relu", "opt: activation_function absent: OPTConfig's relu")
-- OPT-350m: word_embed_proj_dim 512 under hidden_size 1024 (project_in /
-- project_out): refused, naming the field; its post-norm layers alone are
-- priced as pre-norm ones and said.
t.raises(function() hf.model_from_hf(t.with(opt13, { hidden_size = 1024,
  num_attention_heads = 16, ffn_dim = 4096, word_embed_proj_dim = 512,
  do_layer_norm_before = false }), { id = "opt-350m" }) end,
  "word_embed_proj_dim 512 is not hidden_size 1024", "opt-350m: project_in / project_out refused")
e = hf.model_from_hf(t.with(opt13, { do_layer_norm_before = false }), { id = "o" })
t.ok(table.concat(e._defaults, "; "):find("do_layer_norm_before false", 1, true),
  "opt: post-norm said")
t.raises(function() hf.model_from_hf(t.with(opt13, { enable_bias = "yes" }), { id = "o" }) end,
  "enable_bias must be true or false", "opt: enable_bias not a boolean")
e = hf.model_from_hf({ model_type = "gpt2", n_embd = 768, n_head = 12, n_layer = 12,
  n_positions = 1024, vocab_size = 50257, activation_function = "quick_gelu" }, { id = "g" })
t.ok(e.ffn_act == nil and table.concat(e._defaults, "; "):find(
  "activation_function 'quick_gelu' is not one gpuplan prices apart", 1, true),
  "an activation gpuplan does not price apart: unset, and said")
t.raises(function() hf.model_from_hf({ model_type = "gpt2", n_embd = 768, n_head = 12,
  n_layer = 12, n_positions = 1024, vocab_size = 50257, activation_function = 3 },
  { id = "g" }) end, "activation_function must be a string", "a non-string activation")
e = hf.model_from_hf({ model_type = "bloom", hidden_size = 1024, n_head = 16,
  n_layer = 24, vocab_size = 250880 }, { id = "bloom-560m" })
t.is(e.positions, "alibi", "bloom: ALiBi, no table")
t.is(e.pos_embeddings, nil, "bloom: no position table")

-- Broken configs: each refused with the file and the field named, and
-- the field's line where the message opens with a field the file spells
-- (FILE:LINE, as a case file's refusal: hidden_size on line 3 of
-- bad-head-dim.json, num_key_value_heads on line 6 of bad-kv-heads.json,
-- model_type on line 2 of bad-encdec.json).
local broken = {
  { "bad-head-dim.json", "bad%-head%-dim%.json:3: hidden_size 4000 is not "
    .. "divisible by num_attention_heads 48 and head_dim is missing" },
  { "bad-kv-heads.json", "bad%-kv%-heads%.json:6: num_key_value_heads 6 does "
    .. "not divide num_attention_heads 32" },
  { "bad-negative.json", "intermediate_size must be an integer in "
    .. "1%.%.16777216 %(got %-18944%)" },
  { "bad-missing-layers.json", "missing field 'num_hidden_layers'" },
  { "bad-experts.json", "num_local_experts %(8%) and num_experts %(16%) "
    .. "disagree" },
  { "bad-top-k.json", "num_experts_per_tok 10 exceeds the expert count 8" },
  { "bad-mla.json", "missing field 'qk_nope_head_dim'" },
  -- file:line and the column, not the offset in the whole text
  { "bad-syntax.json", "bad%-syntax%.json:5: invalid JSON: Expected object key string but found T_OBJ_END at column 1" },
  { "bad-type.json", "hidden_size must be an integer in 1%.%.16777216 %(got '4096'%)" },
  { "bad-dtype.json", "torch_dtype 'float64' is not one of" },
  { "bad-encdec.json", "bad%-encdec%.json:2: model_type 'bart' is an "
    .. "encoder%-decoder %(is_encoder_decoder%): only the T5 family" },
}
for _, b in ipairs(broken) do
  t.raises(function() hf.model_from_hf(F .. b[1]) end, b[2], b[1])
end
t.raises(function() hf.model_from_hf(F .. "no-such.json") end,
  "no%-such%.json: cannot open", "missing file")
t.raises(function() hf.model_from_hf({ 1, 2 }, { id = "x" }) end,
  "config: top level is not a JSON object", "array instead of object")
t.raises(function()
  hf.model_from_hf({ model_type = "llama", hidden_size = 4096,
    intermediate_size = 11008, num_attention_heads = 32,
    num_hidden_layers = 32, vocab_size = 32000 }, { id = "Bad Id" })
end, "id 'Bad Id' must be lower%-case", "invalid id")
t.raises(function()
  hf.model_from_hf({ model_type = "mystery", hidden_size = 64,
    num_attention_heads = 4, num_hidden_layers = 2, vocab_size = 10,
    intermediate_size = 128 }, { id = "m" })
end, "unknown model_type 'mystery' and no hidden_act", "unknown model_type")
-- no model_type at all: said so (it read "unknown model_type 'nil'")
t.raises(function()
  hf.model_from_hf({ hidden_size = 64, num_attention_heads = 4, num_hidden_layers = 2,
    vocab_size = 10, intermediate_size = 128 }, { id = "m" })
end, ": no model_type and no hidden_act", "no model_type")
t.raises(function() hf.model_from_hf(42) end,
  "expected a config.json path or a table", "wrong argument type")

-- T5: num_layers is the encoder, num_decoder_layers (absent in t5-3b's
-- config: = num_layers, T5Config) the decoder; feed_forward_proj absent =
-- relu, "gated-gelu" = gated gelu; d_kv is the head width (128 x 32 heads
-- = 4096, not d_model 1024).
e = hf.model_from_hf(F .. "t5-3b.json")
t.is(string.format("%d/%d/%d/%s/%s", e.encoder_layers, e.layers, e.head_dim,
  tostring(e.ffn_gated), e.ffn_act), "24/24/128/false/relu",
  "t5-3b: encoder/decoder layers, d_kv, relu MLP")
local notes = table.concat(e._defaults, "; ")
t.ok(notes:find("num_decoder_layers absent", 1, true) and
  notes:find("feed_forward_proj absent: relu", 1, true),
  "t5-3b: the T5Config defaults applied are listed")
e = hf.model_from_hf({ model_type = "mt5", d_model = 512, d_kv = 64, d_ff = 1024,
  num_layers = 8, num_decoder_layers = 6, num_heads = 6, vocab_size = 250112,
  feed_forward_proj = "gated-gelu" }, { id = "mt5-small" })
t.is(string.format("%d/%d/%s/%s", e.encoder_layers, e.layers,
  tostring(e.tied_embeddings), tostring(e.ffn_gated)), "8/6/false/true",
  "mt5: decoder depth of its own, untied (MT5Config), gated")
t.raises(function()
  hf.model_from_hf({ model_type = "t5", d_model = 512, d_kv = 64, d_ff = 1024,
    num_layers = 8, num_heads = 8, vocab_size = 32128,
    feed_forward_proj = "gated-swish" }, { id = "x" })
end, "feed_forward_proj 'gated%-swish' is not relu, gelu, silu", "unknown T5 activation")

-- to_lua: deterministic text that loads back as the same model.
e = hf.model_from_hf(F .. "deepseek-v3.json")
local text = hf.to_lua(e)
t.is(text, hf.to_lua(hf.model_from_hf(F .. "deepseek-v3.json")),
  "to_lua is deterministic")
local got
local env = { model = function(m) got = m end }
local chunk = load(text, "=import", "t", env)
t.ok(chunk and pcall(chunk), "to_lua output is a loadable catalog chunk")
t.is(got and got.mla and got.mla.kv_lora_rank, 512, "round trip keeps MLA")
t.is(got and core.model_params(got).total, core.model_params(e).total,
  "round trip keeps the parameter count")

-- gp.model_from_hf is the same function (lazy module lookup).
t.is(require("gpuplan").model_from_hf, hf.model_from_hf,
  "gp.model_from_hf resolves to gpuplan.hf")


-- Values a reader once took for "absent" (issue 13): each is an error
-- naming the field, the value and the range.
local base = { model_type = "llama", hidden_size = 4096, intermediate_size = 11008,
  num_attention_heads = 32, num_key_value_heads = 8, num_hidden_layers = 32,
  vocab_size = 32000 }
local function with(k, v)
  local c = {}
  for a, b in pairs(base) do c[a] = b end
  c[k] = v
  return c
end
for _, b in ipairs {
  { "hidden_size", 1e300, "hidden_size must be an integer in 1..16777216 (got 1e+300)" },
  { "hidden_size", math.huge, "hidden_size must be an integer in 1..16777216 (got Infinity)" },
  { "hidden_size", 2 ^ 63, "hidden_size must be an integer in 1..16777216 (got 9.2233720368548e+18)" },
  { "num_key_value_heads", 1e300, "num_key_value_heads must be an integer in 1..16777216 (got 1e+300)" },
  { "num_key_value_heads", 0 / 0, "num_key_value_heads must be an integer in 1..16777216 (got NaN)" },
  { "num_hidden_layers", 2 ^ 24 + 1, "num_hidden_layers must be an integer in 1..16777216 (got 16777217)" },
  { "vocab_size", {}, "vocab_size must be an integer in 1..16777216 (got an object)" },
  { "intermediate_size", nil, "missing field 'intermediate_size'" },
  -- gpt-oss's clamp bound: not a number, or not above 0, is no bound
  -- (the import once dropped the clamp without a word).
  { "swiglu_limit", "7", "swiglu_limit must be a positive number (got '7')" },
  { "swiglu_limit", -7, "swiglu_limit must be a positive number (got -7)" },
} do
  t.raises(function() hf.model_from_hf(with(b[1], b[2]), { id = "x" }) end,
    "config: " .. b[3], b[1] .. " = " .. tostring(b[2]), true)
end
-- Imports the catalog would then refuse (found by tests/lua/fuzz_hf.t).
local e0 = hf.model_from_hf(with("model_type", "llama"), { id = "x" })
t.is(e0.family, "llama", "family from model_type")
local nofam = with("model_type", "")
nofam.hidden_act = "silu"
t.is(hf.model_from_hf(nofam, { id = "x" }).family, nil, "an empty model_type gives no family, not ''")
t.raises(function() hf.model_from_hf(with("num_hidden_layers", 2 ^ 24), { id = "x" }) end,
  "config: the config makes", "2^24 layers: past the engine's 1e6 billion parameters", true)
t.raises(function() hf.model_from_hf(with("torch_dtype", "bf\n16"), { id = "x" }) end,
  "config: torch_dtype 'bf\\n16' is not one of", "a newline in a value stays escaped, one line", true)
local clip = { model_type = "llava", vocab_size = 32064,
  text_config = { model_type = "llama" },
  vision_config = { model_type = "clip_vision_model", hidden_size = 1024, intermediate_size = 4096,
                    num_hidden_layers = 24, num_attention_heads = 16, image_size = 8, patch_size = 14 } }
t.raises(function() hf.model_from_hf(clip, { id = "x" }) end,
  "config: vision_config: an image of 8 pixels is smaller than one patch (14)", "an image under one patch", true)

local moe = with("num_experts", 8)
moe.num_experts_per_tok, moe.moe_intermediate_size, moe.mlp_only_layers = 2, 1024, { 0 / 0 }
t.raises(function() hf.model_from_hf(moe, { id = "x" }) end,
  "config: mlp_only_layers must list layer indices 0..31 (got NaN)", "mlp_only_layers [NaN]", true)

t.raises(function() hf.model_from_hf(base, { id = "x", image_size = 1e300 }) end,
  "model_from_hf: opts.image_size must be an integer in 1..16777216", "opts.image_size checked", true)

-- A misspelled option is an error naming it (idd would drop the id).
t.raises(function() hf.model_from_hf({ model_type = "llama" }, { idd = "x" }) end,
  "model_from_hf: unknown option 'idd'", "model_from_hf: misspelled option named", true)

t.done_testing()
