-- gpuplan.hf: read a Hugging Face config.json into a catalog model entry.
--
--   local entry = gp.model_from_hf("path/to/config.json", { id = "my-model" })
--   local entry = gp.model_from_hf(decoded_table, { id = "x", file = "name" })
--   io.write(require("gpuplan.hf").to_lua(entry))
--
-- The entry has the fields of a `model {}` in catalog/FORMAT.md.  Facts a
-- config does not state (gated MLP, q/k/v biases, norm kind) come from a
-- per-model_type rule table, `M.rules`, that callers may extend.  Every
-- default applied is listed in entry.notes; every refusal names the file
-- and the JSON field.
--
-- Where things are in a config (transformers conventions):
--   * multimodal configs nest the language model under text_config (LLaVA,
--     newer Qwen2-VL files; InternVL: llm_config) and the tower under
--     vision_config; older Qwen2-VL files keep the text fields at the top;
--   * transformers writes a nested sub-config as a diff against that
--     sub-config class's defaults (llava-hf's text_config omits hidden_size
--     because LlamaConfig's default is 4096), so nested configs fall back to
--     `M.defaults[model_type]`; a top-level config must state its fields;
--   * expert counts are num_local_experts (Mixtral), num_experts (Qwen MoE)
--     or n_routed_experts (DeepSeek); the width of one expert is
--     moe_intermediate_size, or intermediate_size for Mixtral;
--   * num_key_value_heads absent or null means MHA; head_dim absent means
--     hidden_size / num_attention_heads;
--   * rope_scaling of rope_type "yarn" scales rope's cos and sin by its
--     attention factor (rope_attention_factor); gpt-oss's swiglu_limit
--     clamps the gated activation (ffn_clamp);
--   * T5-family encoder-decoders (t5, mt5) say d_model, d_kv, d_ff,
--     num_heads, num_layers (the encoder) and num_decoder_layers (absent:
--     num_layers), feed_forward_proj ("relu", "gated-gelu", ...) and
--     relative_attention_num_buckets (T5Config defaults where absent).
local cjson = require "cjson"

local M = {}

-- What config.json does not say, per model_type.
--   gated:  SwiGLU/GeGLU MLP (gate, up, down)    norm: "rms" | "layer"
--   qkv_bias: q/k/v biases (Qwen2 family)          linear_bias: every linear
--   qk_norm: an RMSNorm over each head's q and k (Qwen3: modeling_qwen3.py
--     Qwen3Attention's q_norm and k_norm, which no config field states)
--   ffn_mult: intermediate width when the config has none (GPT-2, BLOOM: 4h)
--   tied: tie_word_embeddings when the config omits it (the class default)
--   positions: "learned" (GPT2Model's wpe, an n_positions x n_embd table
--     added at the input) or "alibi" (BloomModel's build_alibi_tensor);
--     absent: rope (LlamaRotaryEmbedding and its kin)
--   act: the plain MLP's activation when the config states none (GPT2Config's
--     activation_function default, "gelu_new")
--   pos_offset: rows the learned position table holds beyond
--     max_position_embeddings (OPTLearnedPositionalEmbedding: "self.offset
--     = 2", "super().__init__(num_embeddings + self.offset, embedding_dim)")
--   bias_field: the config's switch of every linear's bias (OPTConfig's
--     enable_bias, default True: q/k/v/out_proj and fc1/fc2 "bias=
--     config.enable_bias"); false clears qkv_bias and linear_bias
--   embed_proj: the config may state word_embed_proj_dim, the embeddings'
--     own width, with project_in / project_out linears where it differs
--     from hidden_size (OPTDecoder) -- not a model gpuplan expresses: refused
--   split: the model's split_proj (catalog FORMAT.md): which projections
--     the modeling file keeps as nn.Linear each, as the catalog's entries of
--     that family declare it (models/llama.lua, qwen.lua, moe.lua,
--     multimodal.lua: q_proj, k_proj, v_proj, gate_proj and up_proj;
--     gpt.lua: GPT-2's c_attn and BLOOM's query_key_value fused); absent
--     where the catalog declares none for the family
--   shared_gate: the shared experts' output is scaled by a per-token sigmoid
--     gate no config field states (the catalog's moe.shared_expert_gate),
--     set where the config has a shared expert
M.rules = {
  llama = { gated = true, norm = "rms", tied = false, split = "both" },
  mistral = { gated = true, norm = "rms", tied = false, split = "both" },
  mixtral = { gated = true, norm = "rms", tied = false, split = "both" },
  qwen2 = { gated = true, norm = "rms", qkv_bias = true, tied = false, split = "both" },
  -- Qwen1.5-MoE / Qwen2-MoE: a sigmoid gate on the shared expert, which no
  -- config field states (transformers' Qwen2MoeSparseMoeBlock:
  -- "self.shared_expert_gate = torch.nn.Linear(config.hidden_size, 1,
  -- bias=False)"): shared_gate, set where the config has a shared expert
  qwen2_moe = { gated = true, norm = "rms", qkv_bias = true, tied = false, split = "both",
                shared_gate = true },
  qwen2_vl = { gated = true, norm = "rms", qkv_bias = true, tied = false, split = "both" },
  qwen2_vl_text = { gated = true, norm = "rms", qkv_bias = true, tied = false,
                    split = "both" },
  qwen2_5_vl = { gated = true, norm = "rms", qkv_bias = true, tied = false, split = "both" },
  qwen2_5_vl_text = { gated = true, norm = "rms", qkv_bias = true,
                      tied = false, split = "both" },
  qwen3 = { gated = true, norm = "rms", tied = false, qk_norm = true, split = "both" },
  qwen3_moe = { gated = true, norm = "rms", tied = false, qk_norm = true, split = "both" },
  deepseek_v2 = { gated = true, norm = "rms", tied = false },
  deepseek_v3 = { gated = true, norm = "rms", tied = false },
  -- gpt-oss (transformers modeling_gpt_oss.py): GptOssAttention's q, k, v
  -- and o projections take attention_bias (true in OpenAI's configs), the
  -- router and every expert have biases, the experts are gated (a clamped
  -- SwiGLU: swiglu_limit, read below).
  -- Each head has a learned sink logit in its softmax (GptOssAttention's
  -- sinks; no config field states it, the model code does): attn_sinks.
  gpt_oss = { gated = true, norm = "rms", qkv_bias = true, linear_bias = true, tied = false,
              attn_sinks = true },
  gemma = { gated = true, norm = "rms", tied = true },
  gemma2 = { gated = true, norm = "rms", tied = true },
  phi3 = { gated = true, norm = "rms", tied = false },
  gpt2 = { gated = false, norm = "layer", linear_bias = true, qkv_bias = true,
           ffn_mult = 4, tied = true, positions = "learned", split = "none",
           act = "gelu_new" },
  -- OPT (transformers modeling_opt.py): q_proj, k_proj, v_proj apart,
  -- fc1 / fc2 (no gate), every linear biased, learned positions, the
  -- LM head tied to embed_tokens; OPTConfig's activation_function "relu".
  opt = { gated = false, norm = "layer", linear_bias = true, qkv_bias = true,
          tied = true, positions = "learned", pos_offset = 2, split = "qkv",
          act = "relu", bias_field = "enable_bias", embed_proj = true },
  bloom = { gated = false, norm = "layer", linear_bias = true,
            qkv_bias = true, ffn_mult = 4, tied = true, positions = "alibi",
            split = "none" },
  gpt_neox = { gated = false, norm = "layer", linear_bias = true,
               qkv_bias = true, tied = false },
  -- Nemotron-4 (transformers modeling_nemotron.py): q_proj, k_proj, v_proj
  -- apart, NemotronMLP's up_proj and down_proj (no gate), LayerNorm1P
  -- (a LayerNorm with weight and bias), NemotronConfig's hidden_act
  -- "relu2" (squared ReLU) and tie_word_embeddings False.
  nemotron = { gated = false, norm = "layer", tied = false, split = "qkv",
               act = "relu2" },
  -- T5 (T5Config: tie_word_embeddings True) and mT5 / mT0 (MT5Config:
  -- False); the MLP's gating comes from feed_forward_proj.
  t5 = { encdec = true, norm = "rms", tied = true },
  mt5 = { encdec = true, norm = "rms", tied = false },
}

-- T5Config defaults (transformers configuration_t5.py) for the fields a
-- T5 config may leave out.
M.t5_defaults = { feed_forward_proj = "relu", relative_attention_num_buckets = 32 }

-- Class defaults of sub-configs (transformers configuration_*.py), used
-- only for fields a nested config leaves out.
M.defaults = {
  llama = { hidden_size = 4096, intermediate_size = 11008,
            num_hidden_layers = 32, num_attention_heads = 32,
            vocab_size = 32000, max_position_embeddings = 2048,
            hidden_act = "silu", tie_word_embeddings = false },
  mistral = { hidden_size = 4096, intermediate_size = 14336,
              num_hidden_layers = 32, num_attention_heads = 32,
              num_key_value_heads = 8, vocab_size = 32000,
              max_position_embeddings = 131072, hidden_act = "silu",
              tie_word_embeddings = false },
  clip_vision_model = { hidden_size = 768, intermediate_size = 3072,
                        num_hidden_layers = 12, num_attention_heads = 12,
                        image_size = 224, patch_size = 32 },
}

-- Default square image side for towers that read any resolution.
M.default_image_size = 448

local NULL = cjson.null

-- "FILE: message", one line whatever the config's strings hold.
-- The text of each config read (path -> text), for the line of a field a
-- refusal names (set by read_json below).
local texts = {}

-- The line of field path ("hidden_size", "text_config.hidden_size") in a
-- config's text, or nil: each key of the path is found after the one
-- before it, as a JSON key ("name" then ':').  A path the text does not
-- spell (a default, a missing field) gives nil, and the message no line.
local function line_of(text, path)
  if type(text) ~= "string" or type(path) ~= "string" then return nil end
  local at = 1
  for key in path:gmatch("[^.]+") do
    if not key:match("^[%w_]+$") then return nil end
    local s = text:find('"' .. key .. '"%s*:', at)
    if not s then return nil end
    at = s + 1
  end
  return select(2, text:sub(1, at - 1):gsub("\n", "")) + 1
end

-- "FILE: message"; "FILE:LINE: message" where the message opens with a
-- field of the config read (hidden_size must be ..., text_config.vocab_size
-- must be ...), as a case file's refusal names its line: config.json
-- errors named the field alone.
local function fail(file, fmt, ...)
  local msg = string.format(fmt, ...)
  local field = msg:match("^([%w_%.]+) ")
  local line = field and line_of(texts[file], field)
  error(require("gpuplan.units").oneline(line and string.format("%s:%d: %s", file, line, msg)
    or string.format("%s: %s", file, msg)), 0)
end

-- s (a string of config.json or an option) as the entry may carry it: a
-- catalog string is text (gpuplan.schema), so a control character is an
-- error here, not a raw ESC or newline echoed in a note.
local function text(file, what, s)
  local at = type(s) == "string" and s:find("%c")
  if at then
    fail(file, "%s '%s' has a control character at byte %d (text only)", what, s, at)
  end
  return s
end

-- The decoded config.json at path; a file past files.limits.config is
-- refused by its size before it is read.  (Python's json writes Infinity
-- and NaN, so the decoder takes them; the field readers refuse them.)
local function read_json(path)
  local text, err = require("gpuplan.files").read(path, "config")
  if not text then
    if err:find(": is a directory$") then err = path .. ": cannot read (is a directory)" end
    error(err, 0)
  end
  -- Under pcall: a message handler of a caller does not run on the
  -- decoder's errors.
  local ok, v = pcall(cjson.decode, text)
  if not ok then
    error(require("gpuplan.units").oneline(require("gpuplan.files").json_error(path, text,
      (tostring(v):match("^[^\n]*"):gsub("^.-: ", "")))), 0)
  end
  local dup = require("gpuplan.files").json_duplicate(path, text)
  if dup then error(dup, 0) end
  texts[path] = text
  return v
end

-- The largest count a field may hold: the engine's GP_COUNT_MAX, 2^24
-- (widths, heads, layers, experts, vocabularies; contexts too, the
-- longest published being 10M tokens).
M.COUNT_MAX = 1 << 24

-- A JSON value as a message shows it: strings quoted, numbers as JSON
-- would spell them (1e+300, inf for Python's Infinity), tables by kind.
local function shown(v)
  if type(v) == "string" then
    if #v > 40 then v = v:sub(1, 40) .. "..." end
    return "'" .. v .. "'"
  end
  if type(v) == "number" then
    if v ~= v then return "NaN" end
    if v == math.huge then return "Infinity" end
    if v == -math.huge then return "-Infinity" end
    if math.type(v) == "float" and v == math.floor(v) and math.abs(v) < 2 ^ 53 then
      return string.format("%d", v)
    end
    return tostring(v)
  end
  if type(v) == "table" then return v[1] ~= nil and "an array" or "an object" end
  return tostring(v)
end

-- A reader over one JSON object.  get(keys) tries each key name in turn
-- in `cfg`, then in `fallback` (the top level, for text fields), then in
-- `defaults`; returns value, the field path it came from.
local function reader(file, cfg, prefix, fallback, defaults, notes)
  local r = {}
  local function present(t, k)
    local v = t and t[k]
    if v == nil or v == NULL then return nil end
    return v
  end
  function r.get(keys)
    if type(keys) == "string" then keys = { keys } end
    for _, k in ipairs(keys) do
      local v = present(cfg, k)
      if v ~= nil then return v, prefix .. k end
    end
    for _, k in ipairs(keys) do
      local v = present(fallback, k)
      if v ~= nil then return v, k end
    end
    if defaults then
      for _, k in ipairs(keys) do
        if defaults[k] ~= nil then
          notes[#notes + 1] = string.format("%s%s absent: class default %s",
            prefix, k, tostring(defaults[k]))
          return defaults[k], prefix .. k
        end
      end
    end
    return nil, prefix .. keys[1]
  end
  -- Integer in lo (default 1) .. M.COUNT_MAX; nil and the field path
  -- when absent unless required.  A value out of range -- 1e300, 2^63,
  -- Python's Infinity -- is an error naming the field, the value and the
  -- range, never "absent".
  function r.int(keys, required, lo)
    lo = lo or 1
    local v, path = r.get(keys)
    if v == nil then
      if required then
        local names = type(keys) == "table" and keys or { keys }
        local also = #names > 1 and
          (" (also looked for " .. table.concat(names, ", ", 2) .. ")") or ""
        fail(file, "missing field '%s'%s", path, also)
      end
      return nil, path
    end
    local i = type(v) == "number" and v >= lo and v <= M.COUNT_MAX and math.tointeger(v)
    if not i then
      fail(file, "%s must be an integer in %d..%d (got %s)", path, lo, M.COUNT_MAX, shown(v))
    end
    return i, path
  end
  function r.bool(keys)
    local v, path = r.get(keys)
    if v == nil then return nil end
    if type(v) ~= "boolean" then
      fail(file, "%s must be true or false (got %s)", path, shown(v))
    end
    return v, path
  end
  return r
end

local dtypes = {
  bfloat16 = "bf16", float16 = "fp16", half = "fp16", float32 = "fp32",
  float = "fp32", float8_e4m3fn = "fp8", float8_e5m2 = "fp8",
}

local function id_from(file, cfg)
  local base
  if file then
    base = file:match("([^/]+)%.json$")
    if base == "config" then base = file:match("([^/]+)/[^/]+$") end
  end
  if not base or base == "config" then
    local n = cfg._name_or_path
    base = type(n) == "string" and n:match("([^/]+)/*$") or nil
  end
  if not base then return nil end
  return (base:lower():gsub("[^a-z0-9%.%-_/]", "-"))
end

-- The vision tower of a multimodal config, or nil.
local function vision_of(file, cfg, text_hidden, notes, opts)
  local vc = cfg.vision_config
  if vc == nil or vc == NULL then return nil end
  if type(vc) ~= "table" then fail(file, "vision_config must be an object") end
  local vtype = type(vc.model_type) == "string" and vc.model_type or nil
  local rd = reader(file, vc, "vision_config.", nil,
                    vtype and M.defaults[vtype], notes)
  local v = {}
  local img = opts.image_size
  if rd.get("embed_dim") ~= nil then
    -- Qwen2-VL ViT: depth x (attention + MLP of mlp_ratio * embed_dim),
    -- 2x2 patch merger, LayerNorm + MLP (4*embed -> 4*embed -> LLM width).
    v.layers = rd.int("depth", true)
    v.hidden = rd.int("embed_dim", true)
    v.heads = rd.int("num_heads", true)
    v.ffn_hidden = v.hidden * (rd.int("mlp_ratio") or 4)
    v.ffn_gated = false
    v.patch_size = rd.int("patch_size") or 14
    v.merge = rd.int("spatial_merge_size") or 2
    local out = rd.int("hidden_size") or text_hidden
    local m2 = v.hidden * v.merge * v.merge
    v.projector_params = m2 * m2 + m2 + m2 * out + out
  elseif rd.get("out_hidden_size") ~= nil then
    -- Qwen2.5-VL ViT: SwiGLU MLP of intermediate_size, same merger.
    v.layers = rd.int("depth", true)
    v.hidden = rd.int("hidden_size", true)
    v.heads = rd.int("num_heads", true)
    v.ffn_hidden = rd.int("intermediate_size", true)
    v.ffn_gated = true
    v.patch_size = rd.int("patch_size") or 14
    v.merge = rd.int("spatial_merge_size") or 2
    local out = rd.int("out_hidden_size", true)
    local m2 = v.hidden * v.merge * v.merge
    v.projector_params = m2 * m2 + m2 + m2 * out + out
  elseif rd.get("num_hidden_layers") ~= nil or vtype then
    -- CLIP / SigLIP ViT (LLaVA).  The LLaVA projector is two linears with
    -- biases, vision hidden -> text hidden -> text hidden.
    v.layers = rd.int("num_hidden_layers", true)
    v.hidden = rd.int("hidden_size", true)
    v.heads = rd.int("num_attention_heads", true)
    v.ffn_hidden = rd.int("intermediate_size", true)
    v.ffn_gated = false
    v.patch_size = rd.int("patch_size", true)
    img = img or rd.int("image_size", true)
    v.merge = 1
    local bias = cfg.multimodal_projector_bias ~= false and 1 or 0
    v.projector_params = v.hidden * text_hidden + bias * text_hidden +
      text_hidden * text_hidden + bias * text_hidden
    local side = img // v.patch_size
    if side < 1 then
      fail(file, "vision_config: an image of %d pixels is smaller than one patch (%d)", img,
        v.patch_size)
    end
    v.tokens_per_image = side * side
    if cfg.vision_feature_select_strategy == "full" then
      v.tokens_per_image = v.tokens_per_image + 1   -- keeps CLS
    end
    local n = cfg.image_seq_length
    if n ~= nil and n ~= NULL then
      local k = type(n) == "number" and n >= 1 and n <= M.COUNT_MAX and math.tointeger(n)
      if not k then
        fail(file, "image_seq_length must be an integer in 1..%d (got %s)", M.COUNT_MAX,
             shown(n))
      end
      v.tokens_per_image = k
    end
  else
    fail(file, "vision_config has neither depth/embed_dim (Qwen2-VL), "
      .. "out_hidden_size (Qwen2.5-VL) nor num_hidden_layers (CLIP)")
  end
  if v.hidden % v.heads ~= 0 then
    fail(file, "vision_config: hidden size %d is not divisible by %d heads",
         v.hidden, v.heads)
  end
  if not img then
    img = M.default_image_size
    notes[#notes + 1] = string.format("any-resolution tower: image_size %d "
      .. "assumed (tokens = (H/%d)(W/%d))", img, v.patch_size * v.merge,
      v.patch_size * v.merge)
  end
  v.image_size = img
  if not v.tokens_per_image then
    local side = img // (v.patch_size * v.merge)
    if side < 1 then
      fail(file, "vision_config: an image of %d pixels is smaller than one token (patch %d x "
        .. "merge %d)", img, v.patch_size, v.merge)
    end
    v.tokens_per_image = side * side
  end
  local tp = rd.int("temporal_patch_size")
  if tp and tp > 1 then v.temporal_patch = tp end
  return v
end

-- The architecture rule of the config's model_type, or one guessed from
-- hidden_act (said in notes).
local function rule_of(file, cfg, rd, mtype, notes)
  local rule = M.rules[mtype] or M.rules[cfg.model_type]
  if not rule then
    local act = text(file, "hidden_act", rd.get({ "hidden_act", "activation_function" }))
    if type(act) ~= "string" then
      -- a config without model_type said "unknown model_type 'nil'"
      fail(file, "%s and no hidden_act: cannot tell a "
        .. "gated MLP from a plain one (add a rule to gpuplan.hf.rules)",
        mtype == nil and "no model_type" or ("unknown model_type '" .. tostring(mtype) .. "'"))
    end
    local gated = act == "silu" or act == "swiglu" or act:match("glu$") ~= nil
    rule = { gated = gated,
             norm = rd.get("rms_norm_eps") ~= nil and "rms" or "layer" }
    notes[#notes + 1] = string.format("model_type '%s' has no rule: %s MLP "
      .. "from hidden_act '%s', %s norm", tostring(mtype),
      gated and "gated" or "plain", act, rule.norm)
  end
  return rule
end

-- The entry's id, display name and family.
local function identify(e, file, cfg, opts, mtype)
  e.id = opts.id or id_from(file ~= "config" and file or nil, cfg)
  if not e.id then fail(file, "no id: pass opts.id (--id ID)") end
  if not e.id:match("^[a-z0-9][a-z0-9%.%-_/]*$") then
    fail(file, "id '%s' must be lower-case letters, digits, '.', '-', '_' "
      .. "or '/'", e.id)
  end
  -- The catalog's bounds (gpuplan.schema ID_MAX, STRING_MAX): an entry
  -- written with a longer id or name was printed, and refused only when
  -- the catalog read it back.
  local schema = require("gpuplan.schema")
  if #e.id > schema.ID_MAX then
    fail(file, "%s '%s...' is %d bytes: a catalog id is at most %d",
      opts.id and "the id (--id)" or "the id", e.id:sub(1, 40), #e.id, schema.ID_MAX)
  end
  -- an empty name given (--name '') was replaced by the id in silence;
  -- an empty _name_or_path in the config still falls back to it
  if opts.name == "" then fail(file, "the name (--name) must not be empty") end
  local nm = text(file, opts.name and "--name" or "_name_or_path", opts.name or cfg._name_or_path)
  if type(nm) == "string" and #nm > schema.STRING_MAX then
    fail(file, "%s '%s...' is %d bytes: a catalog name is at most %d",
      opts.name and "the name (--name)" or "_name_or_path", nm:sub(1, 40), #nm, schema.STRING_MAX)
  end
  e.name = type(nm) == "string" and nm ~= "" and nm or e.id
  e.family = type(cfg.model_type) == "string" and cfg.model_type or mtype
  if e.family == "" then e.family = nil end
end

-- Layers, hidden size, heads, KV heads, MLA latent and head size.
local function attention_of(e, file, cfg, rd, rule, mtype, prefix, notes)
  if cfg.is_encoder_decoder == true and not rule.encdec then
    fail(file, "model_type '%s' is an encoder-decoder (is_encoder_decoder): "
      .. "only the T5 family (t5, mt5) is supported", tostring(mtype))
  end
  e.layers = rd.int({ "num_hidden_layers", "n_layer", "num_layers" }, true)
  if rule.encdec then
    -- T5: num_layers is the encoder; the decoder has num_decoder_layers,
    -- "defaults to num_layers if not set" (T5Config).
    e.encoder_layers = e.layers
    local dl = rd.int("num_decoder_layers")
    if dl == nil then
      notes[#notes + 1] = "num_decoder_layers absent: = num_layers (T5Config)"
    end
    e.layers = dl or e.encoder_layers
  end
  e.hidden = rd.int({ "hidden_size", "n_embd", "d_model" }, true)
  local heads_path
  e.heads, heads_path = rd.int({ "num_attention_heads", "n_head", "num_heads" }, true)
  local kv, kv_path = rd.int({ "num_key_value_heads", "n_head_kv" })
  if kv == nil then
    kv = e.heads
    notes[#notes + 1] = "num_key_value_heads absent: MHA (kv_heads = heads)"
  elseif e.heads % kv ~= 0 then
    fail(file, "%s %d does not divide %s %d", kv_path, kv, heads_path,
         e.heads)
  end
  e.kv_heads = kv

  -- MLA (DeepSeek-V2/V3) replaces per-head K/V by a latent.
  local kv_lora = rd.int("kv_lora_rank")
  if kv_lora then
    e.mla = {
      q_lora_rank = rd.int("q_lora_rank", false, 0) or 0,
      kv_lora_rank = kv_lora,
      qk_nope_head_dim = rd.int("qk_nope_head_dim", true),
      qk_rope_head_dim = rd.int("qk_rope_head_dim", true),
      v_head_dim = rd.int("v_head_dim", true),
    }
    if e.mla.q_lora_rank == 0 then
      notes[#notes + 1] = "q_lora_rank absent: queries projected directly"
    end
  end

  local hd = rd.int({ "head_dim", "d_kv" })
  if hd == nil then
    if e.hidden % e.heads ~= 0 then
      if e.mla then
        hd = e.mla.v_head_dim
      else
        fail(file, "%shidden_size %d is not divisible by %s %d and head_dim "
          .. "is missing", prefix, e.hidden, heads_path, e.heads)
      end
    else
      hd = e.hidden // e.heads
    end
  end
  e.head_dim = hd
end

-- The routed expert count (three names for one number) and its path.
local function experts_of(file, rd)
  local experts, experts_path
  for _, k in ipairs({ "num_local_experts", "num_experts",
                       "n_routed_experts" }) do
    local v, p = rd.int(k, false, 0)
    if v and v > 0 then
      if experts and experts ~= v then
        fail(file, "%s (%d) and %s (%d) disagree", experts_path, experts, p, v)
      end
      experts, experts_path = v, p
    end
  end
  return experts, experts_path
end

-- T5's feed_forward_proj (gating, activation) and its relative-attention
-- buckets.
local function t5_ffn(e, file, rd, notes)
  -- T5Config: act_info = feed_forward_proj.split("-"), gated when it
  -- starts with "gated", the activation its last part ("gated-gelu"
  -- is gelu_new).
  local proj, proj_path = rd.get("feed_forward_proj")
  if proj == nil then
    proj = M.t5_defaults.feed_forward_proj
    notes[#notes + 1] = "feed_forward_proj absent: relu (T5Config default)"
  elseif type(proj) ~= "string" then
    fail(file, "%s must be a string like 'relu' or 'gated-gelu'", proj_path)
  end
  local gated, act = proj:match("^(gated%-)(%a+)$")
  act = act or proj
  local acts = { relu = "relu", gelu = "gelu", gelu_new = "gelu", silu = "silu" }
  if not acts[act] or (not gated and proj:find("-", 1, true)) then
    fail(file, "feed_forward_proj '%s' is not relu, gelu, silu or gated-<one of them>", proj)
  end
  e.ffn_gated = gated ~= nil
  e.ffn_act = acts[act]
  local nb = rd.int("relative_attention_num_buckets")
  if nb == nil then
    nb = M.t5_defaults.relative_attention_num_buckets
    notes[#notes + 1] = "relative_attention_num_buckets absent: 32 (T5Config default)"
  end
  e.rel_buckets = nb
end

-- A plain (ungated) decoder MLP's activation, as model.ffn_act where
-- gpuplan prices it apart: hidden_act or activation_function "relu"
-- (OPT: ReLU keeps its output for the backward), "gelu", or "gelu_new"
-- (GPT-2: transformers' tanh GeLU written as tensor ops, which the eager
-- modules run kernel by kernel), or "relu2" (Nemotron: squared ReLU,
-- transformers' ReLUSquaredActivation).  Another activation is left unset and
-- said in the notes; absent, the rule's class default (rule.act).
local PLAIN_ACTS = { relu = "relu", relu2 = "relu2", gelu = "gelu", gelu_new = "gelu_new" }
local function plain_act(e, file, rd, rule, notes)
  local act, path = rd.get({ "hidden_act", "activation_function" })
  if act == nil and rule.act then
    act = rule.act
    notes[#notes + 1] = string.format("activation_function absent: %s (class default)",
                                      act)
  end
  if act == nil then return end
  if type(act) ~= "string" then
    fail(file, "%s must be a string like 'relu' or 'gelu_new'", path)
  end
  if PLAIN_ACTS[act] then
    e.ffn_act = PLAIN_ACTS[act]
  elseif path then
    notes[#notes + 1] = string.format("%s %s is not one gpuplan prices apart "
      .. "(relu, relu2, gelu, gelu_new): ffn_act left unset", path, shown(text(file, path, act)))
  end
end

-- The dense MLP's width and gating; returns the width (nil when only
-- experts have one).
local function ffn_of(e, file, rd, rule, experts, notes)
  local ffn, ffn_path = rd.int({ "intermediate_size", "n_inner",
                                 "ffn_hidden_size", "ffn_dim", "d_ff" })
  if ffn == nil and rule.ffn_mult then
    ffn = rule.ffn_mult * e.hidden
    notes[#notes + 1] = string.format("no intermediate size: %d x hidden",
                                      rule.ffn_mult)
  end
  if ffn == nil and not experts then
    fail(file, "missing field '%s'", ffn_path)
  end
  e.ffn_hidden = ffn or 0
  e.ffn_gated = rule.gated and true or false
  if rule.encdec then t5_ffn(e, file, rd, notes) end
  if not rule.encdec and not e.ffn_gated then plain_act(e, file, rd, rule, notes) end
  return ffn
end

-- The MoE block: top-k, expert width, shared experts, dense layers.
local function moe_of(e, file, rd, experts, experts_path, ffn, notes)
  local top_k, tk_path = rd.int({ "num_experts_per_tok", "moe_topk",
                                  "num_selected_experts" }, true)
  if top_k > experts then
    fail(file, "%s %d exceeds the expert count %d (%s)", tk_path, top_k,
         experts, experts_path)
  end
  -- Group-limited routing: DeepSeek's n_group / topk_group
  -- (transformers' DeepseekV3Config: "n_group: Number of groups for
  -- routed experts", "topk_group: Number of selected groups for each
  -- token (for each token, ensuring the selected experts is only within
  -- `topk_group` groups)"), moe.groups / group_top_k.  One group limits
  -- nothing (Kimi K2, DeepSeek-V2-Lite: 1 and 1), and DeepSeek-V2's
  -- topk_method "greedy" takes the top-k over every expert whatever the
  -- groups say (modeling_deepseek.py MoEGate: "if self.topk_method ==
  -- \"greedy\": topk_weight, topk_idx = torch.topk(scores, ...)").
  local groups, g_path = rd.int("n_group")
  local group_top_k, gk_path = rd.int("topk_group")
  local method = rd.get("topk_method")
  if groups and groups > 1 and method ~= "greedy" then
    if not group_top_k then fail(file, "n_group %d without topk_group", groups) end
    if experts % groups ~= 0 then
      fail(file, "%s %d must divide the expert count %d (%s)", g_path, groups, experts,
           experts_path)
    end
    if group_top_k > groups then
      fail(file, "%s must be in 1..%d (%s), got %d", gk_path, groups, g_path, group_top_k)
    end
    if top_k > group_top_k * (experts // groups) then
      fail(file, "%s %d exceeds %s %d x %d experts a group = %d: a token's experts come "
           .. "from its picked groups", tk_path, top_k, gk_path, group_top_k, experts // groups,
           group_top_k * (experts // groups))
    end
  else
    groups, group_top_k = nil, nil
  end
  local width = rd.int("moe_intermediate_size")
  if not width then
    if not ffn then fail(file, "missing field 'moe_intermediate_size'") end
    width = ffn
    notes[#notes + 1] = "expert width = intermediate_size (Mixtral style)"
  end
  local shared = rd.int("n_shared_experts", false, 0) or 0
  local sw = rd.int("shared_expert_intermediate_size", false, 0)
  if sw and sw > 0 then
    -- Qwen2-MoE: one wide shared expert = sw/width experts of the routed
    -- width (same parameters and FLOPs: 3 h sw = (sw/width) 3 h width).
    if sw % width ~= 0 then
      fail(file, "shared_expert_intermediate_size %d is not a multiple of "
        .. "the expert width %d", sw, width)
    end
    shared = shared + sw // width
    notes[#notes + 1] = string.format("shared expert of width %d counted "
      .. "as %d experts of width %d", sw, sw // width, width)
  end
  local dense = rd.int("first_k_dense_replace", false, 0) or 0
  -- DeepSeek's moe_layer_freq puts MoE at layer_idx % freq == 0, a phase
  -- the catalog's layer_step does not state; Qwen2-MoE's
  -- decoder_sparse_step and Llama 4's interleave_moe_layer_step at
  -- (layer_idx + 1) % step == 0 (transformers' modeling files), which it
  -- does (moe.layer_step).
  local freq = rd.int("moe_layer_freq")
  if freq and freq ~= 1 then
    fail(file, "MoE every %d layers from layer 0 (moe_layer_freq) is not "
      .. "supported: only every N-th from layer N - 1 "
      .. "(decoder_sparse_step, interleave_moe_layer_step)", freq)
  end
  local step, step_path = rd.int({ "interleave_moe_layer_step", "decoder_sparse_step" })
  if step and (step < 1 or step > e.layers) then
    fail(file, "%s must be in 1..%d (num_hidden_layers), got %d", step_path, e.layers, step)
  end
  local only = rd.get("mlp_only_layers")
  if type(only) == "table" and #only > 0 then
    local set = {}
    for _, l in ipairs(only) do
      local k = type(l) == "number" and l >= 0 and l < e.layers and math.tointeger(l)
      if not k then
        fail(file, "mlp_only_layers must list layer indices 0..%d (got %s)", e.layers - 1,
             shown(l))
      end
      set[k] = true
    end
    for i = 0, #only - 1 do
      if not set[i] then
        fail(file, "mlp_only_layers is not a prefix 0..%d: interleaved "
          .. "dense layers are not supported", #only - 1)
      end
    end
    dense = math.max(dense, #only)
  end
  local moe = { experts = experts, top_k = top_k, shared_experts = shared,
                ffn_hidden = width, dense_layers = dense,
                layer_step = step and step > 1 and step or nil,
                groups = groups, group_top_k = group_top_k }
  local nmoe = require("gpuplan.schema").moe_layers { layers = e.layers, moe = moe }
  if nmoe == 0 then
    fail(file, "%d dense layers%s leave no MoE layer of %d", dense,
         moe.layer_step and (" and MoE every " .. step .. " layers") or "", e.layers)
  end
  if nmoe < e.layers and not ffn then
    fail(file, "missing field 'intermediate_size' (width of the %d dense "
      .. "layers)", e.layers - nmoe)
  end
  e.moe = moe
end

-- MTP layers, vocabulary, tied embeddings, biases, norm, context.
local function basics_of(e, file, rd, rule, notes)
  -- DeepSeek-V3's multi-token-prediction module (drafts for MTP
  -- speculative decoding).
  local nextn = rd.int("num_nextn_predict_layers", false, 0)
  if nextn and nextn > 0 then e.mtp_layers = nextn end

  e.vocab = rd.int({ "vocab_size", "padded_vocab_size" }, true)
  local tied = rd.bool("tie_word_embeddings")
  if tied == nil then
    tied = rule.tied
    if tied == nil then
      tied = true   -- PretrainedConfig's default
    end
    notes[#notes + 1] = string.format("tie_word_embeddings absent: %s "
      .. "(class default)", tostring(tied))
  end
  e.tied_embeddings = tied
  local ab = rd.bool({ "attention_bias", "qkv_bias" })
  e.qkv_bias = ab
  if e.qkv_bias == nil then e.qkv_bias = rule.qkv_bias and true or false end
  local mb = rd.bool("mlp_bias")
  if rule.linear_bias or (ab and mb) then e.linear_bias = true end
  if rule.bias_field and rd.bool(rule.bias_field) == false then
    e.qkv_bias, e.linear_bias = false, nil
    notes[#notes + 1] = string.format("%s false: no linear has a bias", rule.bias_field)
  end
  if rule.embed_proj then
    -- OPTDecoder: "if config.word_embed_proj_dim != config.hidden_size:
    -- self.project_out = nn.Linear(config.hidden_size,
    -- config.word_embed_proj_dim, bias=False)" and project_in the other
    -- way, the embeddings (and the tied head) word_embed_proj_dim wide.
    local pd, pd_path = rd.int("word_embed_proj_dim")
    if pd and pd ~= e.hidden then
      fail(file, "%s %d is not hidden_size %d: embeddings of their own width with "
        .. "project_in / project_out linears around the decoder (OPT-350m's) are not a "
        .. "model gpuplan expresses", pd_path, pd, e.hidden)
    end
    -- OPTDecoderLayer: "if self.do_layer_norm_before:" each norm before
    -- its block, else after it; the same norms and work either way.
    if rd.bool("do_layer_norm_before") == false then
      notes[#notes + 1] = "do_layer_norm_before false: the layer norms after each block, "
        .. "priced as before it (the same kernels)"
    end
  end
  e.norm = rule.norm or "rms"
  if rule.qk_norm then e.qk_norm = true end
  if rule.attn_sinks then e.attn_sinks = true end
  e.split_proj = rule.split
  e.max_seq = rd.int({ "max_position_embeddings", "n_positions",
                       "seq_length" })
  e.positions = rule.positions
  if rule.positions == "learned" and e.max_seq then
    e.pos_embeddings = e.max_seq + (rule.pos_offset or 0)
  end
end

-- The weights' dtype as saved.
local function dtype_of(e, file, cfg, rd, notes)
  -- Weight dtype as saved.
  local dt, dt_path = rd.get({ "dtype", "torch_dtype" })
  if dt ~= nil then
    local d = type(dt) == "string" and dtypes[dt:gsub("^torch%.", "")]
    if not d then
      fail(file, "%s '%s' is not one of bfloat16, float16, float32, "
        .. "float8_e4m3fn", dt_path, tostring(dt))
    end
    e.dtype = d
  end
  local q = cfg.quantization_config
  if type(q) == "table" and q.quant_method == "fp8" then
    e.dtype = "fp8"
    notes[#notes + 1] = "quantization_config fp8: weights stored in fp8"
  elseif type(q) == "table" and q.quant_method == "mxfp4" then
    -- gpt-oss: the MoE experts alone (modules_to_not_convert keeps
    -- attention, the router, the embeddings and lm_head in torch_dtype)
    e.expert_dtype = "mxfp4"
    notes[#notes + 1] = "quantization_config mxfp4: routed experts stored in MXFP4"
  end
end

-- Sliding-window attention: the window and how many layers use it.
local function sliding_of(e, file, rd)
  -- Sliding-window attention.
  local win = rd.int("sliding_window", false, 0)
  local use = rd.bool("use_sliding_window")
  local types = rd.get("layer_types")
  if type(types) == "table" and #types > 0 then
    local n = 0
    for _, ty in ipairs(types) do
      if ty == "sliding_attention" then n = n + 1 end
    end
    if n > 0 then
      if not win or win == 0 then
        fail(file, "layer_types has sliding layers but sliding_window is "
          .. "missing")
      end
      e.sliding_window = { size = win, layers = n }
    end
  elseif win and win > 0 and use ~= false then
    -- Qwen2: layers from max_window_layers on slide; Mistral: all layers.
    local n = e.layers
    if use == true then
      n = e.layers - (rd.int("max_window_layers", false, 0) or 0)
    end
    if n > 0 and not (e.max_seq and win >= e.max_seq) then
      e.sliding_window = { size = win, layers = n }
    end
  end
end

-- YaRN's attention factor on rope's cos and sin, as transformers computes
-- it (modeling_rope_utils.py _compute_yarn_parameters): rope_scaling's
-- attention_factor, else get_mscale(factor, mscale) /
-- get_mscale(factor, mscale_all_dim) when both are given (DeepSeek-V3's
-- 1.0 and 1.0: no scale), else get_mscale(factor) = 0.1 ln(factor) + 1
-- (gpt-oss: factor 32, 1.3466); get_mscale is 1 at a factor up to 1.
-- Recorded where it is not 1.
local function yarn_of(e, file, rd)
  local rs, rs_path = rd.get("rope_scaling")
  if type(rs) ~= "table" or (rs.rope_type or rs.type) ~= "yarn" then return end
  local function num(k)
    local x = rs[k]
    if x == nil or x == NULL then return nil end
    if type(x) ~= "number" or x ~= x or x == math.huge or x == -math.huge then
      fail(file, "%s.%s must be a number (got %s)", rs_path, k, tostring(x))
    end
    return x
  end
  local f = num("factor")
  if not f or not (f > 0) then
    fail(file, "%s.factor must be a positive number (got %s)", rs_path, tostring(rs.factor))
  end
  local function mscale(s, m) return s <= 1 and 1.0 or 0.1 * m * math.log(s) + 1.0 end
  local a, m, ma = num("attention_factor"), num("mscale"), num("mscale_all_dim")
  if a == nil then
    if m and ma and m ~= 0 and ma ~= 0 then
      a = mscale(f, m) / mscale(f, ma)
    else
      a = mscale(f, 1.0)
    end
  end
  if not (a > 0 and a <= 1e6) then
    fail(file, "%s: the attention factor must be in (0, 1e6] (got %s)", rs_path, tostring(a))
  end
  if a ~= 1 then e.rope_attention_factor = a end
end

-- Record the engine's parameter count (the published total is not in a
-- config).
local function count_params(e, file)
  -- The published total is not in a config: record the engine's count
  -- and say so.
  local okc, core = pcall(require, "gpuplan.core")
  if okc then
    local ok, p = pcall(core.model_params, e)
    if not ok then fail(file, "%s", tostring(p)) end
    e.params_b = p.total / 1e9
    if e.moe then e.active_params_b = p.active / 1e9 end
    -- The engine's bound on an amount (GP_AMOUNT_MAX, 1e15 parameters);
    -- the largest published models are under 1e13.
    if e.params_b > 1e6 then
      fail(file, "the config makes %.4g billion parameters, past the engine's 1e6 billion",
        e.params_b)
    end
  end
end

-- Build a catalog model entry from a decoded config (see the header).
local function convert(cfg, file, opts)
  if type(cfg) ~= "table" or cfg[1] ~= nil then
    -- at the line its value starts on, as a case file's top level is
    local t = type(texts[file]) == "string" and texts[file]
    if t then
      error(string.format("%s:%d: top level is not a JSON object (a config.json is one {...})",
        file, select(2, t:match("^%s*"):gsub("\n", "")) + 1), 0)
    end
    fail(file, "top level is not a JSON object")
  end
  local notes = {}
  local nested = cfg.text_config or cfg.llm_config
  if nested == NULL then nested = nil end
  if nested ~= nil and type(nested) ~= "table" then
    fail(file, "text_config must be an object")
  end
  local prefix = nested and (cfg.text_config and "text_config." or
                             "llm_config.") or ""
  local mtype = (nested and type(nested.model_type) == "string" and
                 nested.model_type) or cfg.model_type
  if mtype ~= nil and type(mtype) ~= "string" then
    fail(file, "model_type must be a string")
  end
  text(file, "model_type", mtype)
  text(file, "model_type", cfg.model_type)
  local rd = reader(file, nested or cfg, prefix, nested and cfg or nil,
                    nested and mtype and M.defaults[mtype] or nil, notes)
  -- A config with state-space (Mamba) layers: Nemotron-H's
  -- hybrid_override_pattern and mamba_num_heads (NemotronHConfig), Jamba's
  -- attn_layer_period and mamba_d_state (JambaConfig), Zamba's
  -- layers_block_type, Mamba's and Mamba-2's state_size (MambaConfig,
  -- Mamba2Config).  The fields below read every layer as attention and an
  -- MLP, so such a config was imported as a transformer without a word.
  for _, k in ipairs { "hybrid_override_pattern", "mamba_num_heads", "ssm_state_size",
                       "attn_layer_period", "mamba_d_state", "layers_block_type",
                       "state_size" } do
    if (nested or cfg)[k] ~= nil and (nested or cfg)[k] ~= NULL then
      fail(file, "%s%s: a model with Mamba (state-space) layers is not imported (its layers "
        .. "would be read as attention); a Megatron-Core hybrid is written as a catalog model's "
        .. "hybrid_pattern and mamba (docs/models.md)", prefix, k)
    end
  end
  local rule = rule_of(file, cfg, rd, mtype, notes)
  local e = {}
  identify(e, file, cfg, opts, mtype)
  attention_of(e, file, cfg, rd, rule, mtype, prefix, notes)
  local experts, experts_path = experts_of(file, rd)
  local ffn = ffn_of(e, file, rd, rule, experts, notes)
  if experts then
    moe_of(e, file, rd, experts, experts_path, ffn, notes)
    if rule.shared_gate and e.moe.shared_experts > 0 then
      e.moe.shared_expert_gate = true
      notes[#notes + 1] = "shared expert's sigmoid gate (shared_expert_gate)"
    end
  end
  basics_of(e, file, rd, rule, notes)
  dtype_of(e, file, cfg, rd, notes)
  sliding_of(e, file, rd)
  if e.positions == nil and not e.encoder_layers then yarn_of(e, file, rd) end
  -- gpt-oss clamps its SwiGLU's two halves (swiglu_limit, GptOssExperts:
  -- "gate.clamp(min=None, max=self.limit)", "up.clamp(min=-self.limit,
  -- max=self.limit)"): a positive finite bound; any other value is an
  -- error naming it, not a model without the clamp.
  local lim, lim_path = rd.get("swiglu_limit")
  if lim ~= nil then
    if type(lim) ~= "number" or not (lim > 0) or lim == math.huge then
      fail(file, "%s must be a positive number (got %s)", lim_path, shown(lim))
    end
    if e.ffn_gated then e.ffn_clamp = true end
  end
  e.vision = vision_of(file, cfg, e.hidden, notes, opts)
  count_params(e, file)
  e.source = string.format("imported from %s", file)
  e._defaults = notes   -- the defaults applied, one string each
  e.notes = table.concat({ "params_b is gpuplan's count at import (replace "
    .. "it with the published total)", table.unpack(notes) }, "; ")
  return e
end

-- model_from_hf(path_or_table [, opts]) -> catalog model entry.
-- opts: id, name, file (name used in messages for a table), image_size.
function M.model_from_hf(src, opts)
  opts = opts or {}
  if type(opts) ~= "table" then
    error("model_from_hf: opts must be a table", 2)
  end
  require("gpuplan.args").check_keys(opts, { "id", "name", "file", "image_size" }, "model_from_hf",
    2)
  for _, k in ipairs { "id", "name", "file" } do
    if opts[k] ~= nil and type(opts[k]) ~= "string" then
      error("model_from_hf: opts." .. k .. " must be a string (got " .. type(opts[k]) .. ")", 2)
    end
  end
  local is = opts.image_size
  -- a whole float (448.0) is the integer it is, as every count gpuplan
  -- takes (gpus = 8.0); it was refused, and a table quoted by address
  if is ~= nil and not (type(is) == "number" and is == math.floor(is) and is >= 1
                        and is <= M.COUNT_MAX) then
    error(string.format("model_from_hf: opts.image_size must be an integer in 1..%d (got %s)",
      M.COUNT_MAX, require("gpuplan.args").shown(is)), 2)
  end
  if is ~= nil and math.type(is) ~= "integer" then
    local c = {}
    for k, v in pairs(opts) do c[k] = v end
    c.image_size, opts = math.tointeger(is), c
  end
  local cfg, file
  if type(src) == "string" then
    file = src
    cfg = read_json(src)
  elseif type(src) == "table" then
    file = opts.file or "config"
    cfg = src
  else
    error("model_from_hf: expected a config.json path or a table, got "
      .. type(src), 2)
  end
  return convert(cfg, file, opts)
end

-- Catalog text of an entry, keys in a fixed order.
local order = {
  top = { "id", "name", "family", "layers", "encoder_layers", "hidden", "heads",
          "kv_heads", "head_dim", "ffn_hidden", "ffn_gated", "ffn_act", "vocab",
          "tied_embeddings", "qkv_bias", "linear_bias", "qk_norm", "attn_sinks", "norm", "rel_buckets",
          "ffn_clamp", "positions", "pos_embeddings", "rope_attention_factor", "split_proj", "max_seq", "dtype", "expert_dtype", "moe", "mla", "mtp_layers",
          "sliding_window", "vision", "params_b", "active_params_b",
          "source", "notes" },
  moe = { "experts", "top_k", "shared_experts", "ffn_hidden",
          "dense_layers", "layer_step", "dense_ffn_hidden", "groups", "group_top_k",
          "shared_expert_gate" },
  mla = { "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim",
          "qk_rope_head_dim", "v_head_dim" },
  sliding_window = { "size", "layers" },
  vision = { "layers", "hidden", "heads", "ffn_hidden", "ffn_gated",
             "image_size", "patch_size", "merge", "temporal_patch",
             "tokens_per_image", "projector_params", "params" },
}

local function lit(v)
  if type(v) == "string" then return string.format("%q", v) end
  if type(v) == "number" then
    local i = math.tointeger(v)
    if i then return tostring(i) end
    return string.format("%.6g", v)
  end
  return tostring(v)
end

function M.to_lua(e)
  local out = { "model {" }
  for _, k in ipairs(order.top) do
    local v = e[k]
    if v ~= nil then
      if type(v) == "table" then
        local parts = {}
        for _, sk in ipairs(order[k]) do
          if v[sk] ~= nil then
            parts[#parts + 1] = sk .. " = " .. lit(v[sk])
          end
        end
        out[#out + 1] = string.format("  %s = { %s },", k,
                                      table.concat(parts, ", "))
      elseif k == "params_b" or k == "active_params_b" then
        out[#out + 1] = string.format("  %s = %s,", k,
                                      (string.format("%.4f", v):gsub("%.?0+$", "")))
      else
        out[#out + 1] = string.format("  %s = %s,", k, lit(v))
      end
    end
  end
  out[#out + 1] = "}"
  return table.concat(out, "\n") .. "\n"
end

-- A misuse found anywhere inside names the caller's line (gpuplan.args).
return require("gpuplan.args").api_module(M)
