-- gpuplan.predict.case: what every predictor reads from a validation case
-- (validation/SCHEMA.md) in the same way.

local ok_cjson, cjson = pcall(require, "cjson")
local null = ok_cjson and cjson.null or nil

local M = {}

-- JSON null (cjson.null) and absent both mean "not stated".
function M.v(x) if x == null then return nil end return x end
local v = M.v

-- A catalog-shaped model table from the case's own shape, or nil and the
-- reason (every missing field named; a case whose model name says
-- encoder-decoder is told it needs encoder_layers too).  The schema has no
-- norm or bias fields, so the family decides: gated (SwiGLU) models of the
-- cases are Llama/Qwen-like (RMSNorm), the GeLU ones GPT/BLOOM-like
-- (LayerNorm) -- a 2h-per-layer difference; an encoder-decoder
-- (encoder_layers, SCHEMA.md) is T5-like (RMS-style T5LayerNorm).
--
-- model.vision (SCHEMA.md): a catalog model id, whose tower and projector
-- are taken whole, or the tower in the catalog's fields; an inline tower
-- needs its shape and its image and patch sides (the image tokens are
-- (image_size / patch_size / merge)^2 unless tokens_per_image says).
local TOWER = { "layers", "hidden", "heads", "ffn_hidden", "image_size", "patch_size" }
local TOWER_OPT = { "ffn_gated", "merge", "temporal_patch", "tokens_per_image",
                    "projector_params", "params" }

local function tower(cv, cat, missing)
  if type(cv) == "string" then
    return (cat or require("gpuplan").catalog()):get("models", cv).vision
  end
  local t = {}
  for _, k in ipairs(TOWER) do
    t[k] = v(cv[k])
    if type(t[k]) ~= "number" then missing[#missing + 1] = "vision." .. k end
  end
  for _, k in ipairs(TOWER_OPT) do t[k] = v(cv[k]) end
  return t
end

-- The projections a case's model keeps apart when the case does not say
-- (model.split_proj, SCHEMA.md): the catalog family its name names --
-- the family's id at the start of a word of the name ("Meta-Llama-3-70B",
-- "Qwen2.5-32B", "LLaMA-7B"), the longest such when more match -- whose
-- models declare split_proj (catalog FORMAT.md), or nil.
function M.family_split(cm, cat)
  local name = tostring(v(cm.name) or ""):lower()
  if name == "" then return nil end
  cat = cat or require("gpuplan").catalog()
  local best, sp
  for _, id in ipairs(cat:ids("models")) do
    local c = cat:get("models", id)
    local f = type(c.family) == "string" and c.split_proj and c.family:lower()
    if f and (not best or #f > #best) then
      local at = 1
      while true do
        local i = name:find(f, at, true)
        if not i then break end
        if i == 1 or name:sub(i - 1, i - 1):match("[^%w]") then
          best, sp = f, c.split_proj
          break
        end
        at = i + 1
      end
    end
  end
  return sp
end

function M.model(cm, cat)
  cm = cm or {}
  local missing = {}
  for _, k in ipairs { "layers", "hidden", "heads", "vocab", "ffn_hidden" } do
    if type(v(cm[k])) ~= "number" then missing[#missing + 1] = k end
  end
  local vision = v(cm.vision) ~= nil and tower(cm.vision, cat, missing) or nil
  local encdec = type(v(cm.encoder_layers)) == "number" and cm.encoder_layers > 0
  local says = tostring(v(cm.name) or ""):lower():find("encoder%-decoder") ~= nil
  if says and not encdec then missing[#missing + 1] = "encoder_layers" end
  if #missing > 0 then
    local stated = {}
    for _, k in ipairs { "layers", "hidden", "heads", "kv_heads", "head_dim", "ffn_hidden",
                         "vocab", "encoder_layers", "params_b" } do
      if v(cm[k]) ~= nil then stated[#stated + 1] = k end
    end
    return nil, string.format("model %s not given: architecture unknown (the case states %s%s)",
      table.concat(missing, ", "),
      #stated > 0 and (table.concat(stated, ", ") .. " only") or "no model field",
      says and "; an encoder-decoder needs both stacks' layer counts" or "")
  end
  local m = {
    id = v(cm.name), layers = cm.layers, hidden = cm.hidden, heads = cm.heads,
    kv_heads = v(cm.kv_heads), head_dim = v(cm.head_dim), ffn_hidden = cm.ffn_hidden,
    ffn_gated = cm.ffn_gated == true, vocab = cm.vocab,
    tied_embeddings = cm.tied_embeddings == true,
    norm = (cm.ffn_gated or encdec) and "rms" or "layer",
    positions = v(cm.positions),
    max_seq = v(cm.max_seq),
    ffn_clamp = v(cm.ffn_clamp) == true or nil,
    qk_norm = v(cm.qk_norm) == true or nil,
    parallel_attn = v(cm.parallel_attn) == true or nil,
    shared_norm = v(cm.shared_norm) == true or nil,
    rope_attention_factor = v(cm.rope_attention_factor),
    linear_bias = v(cm.linear_bias) == true or nil,
    hybrid_pattern = v(cm.hybrid_pattern),
    mamba = v(cm.mamba),
    split_proj = v(cm.split_proj) or M.family_split(cm, cat),
    -- the MLP's activation, a decoder's too: GPT-2's gelu_new runs as
    -- tensor ops in the eager modules (engine/train_layer.c gelu_new_fwd)
    ffn_act = v(cm.ffn_act),
  }
  if encdec then
    m.encoder_layers, m.rel_buckets = cm.encoder_layers, v(cm.rel_buckets)
  end
  -- MoE: the case format names the expert width expert_ffn_hidden (the
  -- catalog's moe.ffn_hidden, accepted too); the dense layers keep
  -- ffn_hidden unless dense_ffn_hidden says otherwise.
  if type(v(cm.moe)) == "table" then
    local e = {}
    for _, k in ipairs { "experts", "top_k", "shared_experts", "dense_layers",
                         "layer_step", "dense_ffn_hidden", "shared_ffn_hidden", "groups",
                         "group_top_k", "shared_expert_gate" } do
      e[k] = v(cm.moe[k])
    end
    e.ffn_hidden = v(cm.moe.ffn_hidden) or v(cm.moe.expert_ffn_hidden)
    m.moe = e
  end
  if type(v(cm.mla)) == "table" then m.mla = cm.mla end
  if type(v(cm.mtp_layers)) == "number" then m.mtp_layers = cm.mtp_layers end
  -- sliding_window {size, layers}: the catalog's field as it is (layers
  -- absent: every layer, as the engine reads it)
  if type(v(cm.sliding_window)) == "table" then
    m.sliding_window = { size = cm.sliding_window.size, layers = v(cm.sliding_window.layers) }
  end
  m.vision = vision
  return m
end

-- A multimodal sample's media (SCHEMA.md, workload): gp.train's and
-- gp.fit's own option names (options.lua, section "vision"), copied into
-- the predictor's options o.
function M.media(o, wl)
  for _, k in ipairs { "images", "video_frames", "image_size", "frame_size", "train_vision",
                       "train_llm" } do
    o[k] = v(wl[k])
  end
  return o
end

-- The training layout's fields that size a step's memory, handed as the
-- case states them by both training predictors: the train predictor to
-- gp.train, the memory predictor to gpuplan.memory (gpuplan.validate
-- PARALLEL_READ.memory, the parallel fields a memory case may state);
-- DeepSeek-V3's savings among them (SCHEMA.md: the recompute modules'
-- list, the fp8 cache).  Copied into the predictor's options o.
local SIZING_PARALLEL = { "ulysses", "grad_sync", "zero_group", "recompute_layers",
  "activation_offload_layers", "checkpoint_offload", "first_stage_layers", "last_stage_layers",
  "split_ends" }
local SIZING_WORKLOAD = { "fp8_activations", "moe_probs" }
function M.sizing(o, par, wl)
  for _, k in ipairs(SIZING_PARALLEL) do o[k] = v(par[k]) end
  for _, k in ipairs(SIZING_WORKLOAD) do o[k] = v(wl[k]) end
  if type(v(par.recompute_modules)) == "table" then o.recompute_modules = par.recompute_modules end
  if type(v(par.stage_layers)) == "table" then o.stage_layers = par.stage_layers end
  return o
end

-- The MTP module of a case's model that does not state mtp_layers: the
-- catalog model of the same architecture -- every shape field the engine
-- reads equal (layers, hidden, heads, ffn_hidden, vocab, the MoE and the MLA
-- fields) -- has it from its config.json (num_nextn_predict_layers), which a
-- checkpoint of that architecture ships: DeepSeek-R1 and V3-0324 are V3's
-- architecture with its one MTP layer (their config.json files say 1).
-- Returns the layer count and the catalog id, or nil.
local SHAPE = { "layers", "hidden", "heads", "ffn_hidden", "vocab" }
-- (the routing's groups are not matched: a case that leaves them
-- unstated is still the checkpoint's shape)
local MOE = { "experts", "top_k", "shared_experts", "ffn_hidden", "dense_layers", "layer_step" }
local MLA = { "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
              "v_head_dim" }
local function same(a, b, keys)
  if (a == nil) ~= (b == nil) then return false end
  if a == nil then return true end
  for _, k in ipairs(keys) do
    -- absent is 0, but a layer step's is 1 (every layer)
    local d = k == "layer_step" and 1 or 0
    if (a[k] or d) ~= (b[k] or d) then return false end
  end
  return true
end

function M.architecture_mtp(m, cat)
  cat = cat or require("gpuplan").catalog()
  -- Several catalog models may share one architecture (deepseek-r1 and
  -- deepseek-v3: one config.json shape); the one the model names itself
  -- after is the one named -- its name the id, or the id and more past a
  -- word's end ("DeepSeek-R1-0528", "DeepSeek-V3 671B": the cases' inline
  -- names) --, else the first id in the catalog's order.
  local own = type(m.name or m.id) == "string" and string.lower(m.name or m.id) or nil
  local function named_after(id)
    return own ~= nil and own:sub(1, #id) == id and not own:sub(#id + 1, #id + 1):match("%w")
  end
  local first, first_id
  for _, id in ipairs(cat:ids("models")) do
    local c = cat:get("models", id)
    if (c.mtp_layers or 0) > 0 and same(m, c, SHAPE) and same(m.moe, c.moe, MOE) and
       same(m.mla, c.mla, MLA) then
      if named_after(id) then return c.mtp_layers, id end
      if not first then first, first_id = c.mtp_layers, id end
    end
  end
  return first, first_id
end

-- The framework a case states (workload.framework, SCHEMA.md): the
-- software that ran, by the name of one of its predictor's profiles
-- (the predictor's `frameworks`; validate.read refuses another name), or
-- nil where the case states none.  Read from that field alone, never
-- from the title or notes: they quote the source, and a word there (a
-- kernel the run borrowed, a stack it was compared with) must not switch
-- the profile a prediction is priced on.
function M.framework(case)
  return v((case.workload or {}).framework)
end

-- The sorted names of a profile table's entries, with the names of
-- `more` (a list, or nil): a predictor's `frameworks`.
function M.names(profiles, more)
  local out, seen = {}, {}
  for k in pairs(profiles) do out[#out + 1], seen[k] = k, true end
  for _, k in ipairs(more or {}) do
    if not seen[k] then out[#out + 1], seen[k] = k, true end
  end
  table.sort(out)
  return out
end

-- Whether the case's GPU sits on a host whose catalog entry prices NUMA
-- binding (host_op_scale_bound: the Grace racks), where a stack's or a
-- release's numa_bind says something; o.cat, else the shipped catalog.
function M.numa_host(o)
  local cat = o.cat or require("gpuplan.catalog").get()
  local g = cat.gpus[o.gpu]
  local sys = g and require("gpuplan.train").default_node(g, cat)
  return sys ~= nil and sys.host_op_scale_bound ~= nil
end

-- A framework profile's settings into the options o: each {key, value,
-- note, when} whose key the case leaves open (o[key] == nil) and whose
-- when(o, model), if any, holds; a value that is a function is asked
-- value(o, model) (nil: nothing set).  Each setting taken is said in
-- defaults as "key=value (note)", a list value comma-joined.  Returns
-- the settings taken, by key: { at = their line's index in defaults,
-- note = the note }, for a caller that adds to a line it wrote.
-- torchtitan commits whose loss runs eager, as a case states the commit
-- its source names (source.commit; torchtitan has no releases for
-- source.version to name).  torchtitan compiles each TransformerBlock
-- alone (parallelize_llama.py apply_compile), and from e8977b0
-- (2024-12-18, PR #755) to bbb1b616 (2025-04-02, PR #1033) its train.py
-- left the loss out too: "# TODO: compiling loss function causes CUDA
-- errors, turning off for now / # if job_config.training.compile: / #
-- loss_fn = torch.compile(loss_fn)" over loss_fn =
-- "torch.nn.functional.cross_entropy(pred.flatten(0, 1).float(),
-- labels.flatten(0, 1))" -- at 9dec370, the end-2024 benchmarks' commit.
-- PR #1033's build_cross_entropy_loss compiles it again under
-- --training.compile ("Compiling the loss function with torch.compile"),
-- so a later commit keeps the compiled loss.  The training predictor
-- prices its bytes (gp.train eager_loss), the memory predictor its fp32
-- buffers (logit_bytes).
M.EAGER_LOSS = {
  torchtitan = { "9dec370" },
}
-- The days of that window, for a case whose source names no commit but
-- dates its run: the loss left torch.compile in e8977b0 (2024-12-18) and
-- came back in bbb1b616 (2025-04-02), so torchtitan's main branch of any
-- day between ran it eager -- at 54ef422 (2025-03-12) still
-- torchtitan/components/loss.py: "# TODO: compiling loss function causes
-- CUDA errors, turning off for now / # compiled_cross_entropy_loss =
-- torch.compile(cross_entropy_loss)".  The source's date stands for the
-- newest commit by then, as a collective's date stands for the newest
-- NCCL release (torchao's float8 README names only "torchtitan version:
-- `0.0.2`", a version string torchtitan kept from December 2024 to June
-- 2025, on its H100 table of 2025-03-12).
M.EAGER_LOSS_DAYS = {
  torchtitan = { from = "2024-12-18", to = "2025-04-02", commits = "e8977b0..bbb1b616" },
}
-- The commit of M.EAGER_LOSS[fw] the case names, or, naming none, the
-- window of M.EAGER_LOSS_DAYS[fw] its source.date falls in; else nil.
function M.eager_loss_commit(fw, case)
  local stated = case.source and M.v(case.source.commit)
  if not stated then
    local days = M.EAGER_LOSS_DAYS[fw]
    local date = case.source and M.v(case.source.date)
    if days and type(date) == "string" and date >= days.from and date < days.to then
      return days.commits .. " (source.date " .. date .. ")"
    end
    return nil
  end
  for _, commit in ipairs(M.EAGER_LOSS[fw] or {}) do
    -- a commit named by any prefix of 7 or more of its digits
    if stated:sub(1, #commit) == commit or commit:sub(1, #stated) == stated then return commit end
  end
  return nil
end

-- The day from which a framework's logged model FLOPs count causal
-- attention at half, for a stack profile whose cases straddle it, read
-- off the case's source.date.  Megatron-LM's num_floating_point_operations
-- (megatron/training/training.py) counted the whole s x s square until
-- commit 8873b55d6a (2025-03-06), which divides the core-attention term
-- by 2 ("Only half of the attention matrix is non-zero and needs to be
-- multiplied with V"): the megatron-core profile's core_r0.8.0 rows
-- (2024, no date) read the square, a run published after it the half.
-- (The megatron-moe-recipes, megatron-moe-modelzoo and megatron-bridge
-- profiles, all of 2025 or later, set causal_flops outright.)
M.CAUSAL_FLOPS_SINCE = {
  ["megatron-core"] = "2025-03-06",
}
-- The day of M.CAUSAL_FLOPS_SINCE[fw] when the case's source.date is on
-- or after it, else nil (no date: the square, the older count).
function M.causal_flops_since(fw, case)
  local since = M.CAUSAL_FLOPS_SINCE[fw]
  local date = case.source and M.v(case.source.date)
  if since and type(date) == "string" and date >= since then return since end
  return nil
end

-- torchtune's recipes build the model in the config's dtype ("with
-- training.set_default_dtype(self._dtype), self._device: model = ...")
-- and keep no master copy: the bf16 recipe, or fp32 where the case
-- states fp32 (tf32 matmuls on it).  float16 they refuse: "full fp16
-- training is not supported with this recipe. Please use bf16 or fp32
-- instead." (recipes/full_finetune_single_device.py and the other
-- recipes' __init__).  The train and memory predictors' torchtune
-- profiles take the recipe; M.TORCHTUNE_FP16 is their refusal.
function M.torchtune_recipe(o)
  if o.precision == "fp32" or o.precision == "tf32" then return "fp32" end
  return "bf16"
end
M.TORCHTUNE_FP16 = "workload.precision fp16: torchtune's recipes refuse it (\"full fp16 "
  .. "training is not supported with this recipe. Please use bf16 or fp32 instead.\")"

function M.profile(o, model, sets, defaults)
  local taken = {}
  for _, set in ipairs(sets) do
    local k, val, note, when = set[1], set[2], set[3], set[4]
    if o[k] == nil and (not when or when(o, model)) then
      if type(val) == "function" then val = val(o, model) end
      if val ~= nil then
        o[k] = val
        defaults[#defaults + 1] = string.format("%s=%s (%s)", k,
          type(val) == "table" and table.concat(val, ",") or tostring(val), note)
        taken[k] = { at = #defaults, note = note }
      end
    end
  end
  return taken
end

-- The case's catalog card (hardware.gpu, given), or nil and the reason:
-- the case's file, the case and the key, as a schema error is said
-- (cat:get's own message names the line of the script that called into
-- gpuplan -- gp.validate.predict's caller -- which says nothing of the
-- case).  One wording for every predictor.
--
-- hardware.inter_node and intra_node, where given, are checked here too,
-- for every kind: an id no catalog fabric has was read only where the
-- case spans nodes (train and rl, as the engine's nic_fabric, named so
-- and without the case's line) or is a collective, and passed unread
-- elsewhere (a memory case, one node), so a misspelt fabric priced
-- silently.  The same wording as the card's.
function M.gpu(case, cat)
  local h = case.hardware or {}
  local where = (case._file and (case._file .. ": ") or "") .. "case '" .. tostring(case.id) .. "'"
  local ok, g = pcall(cat.get, cat, "gpus", h.gpu)
  if not ok then
    local msg = require("gpuplan.cli").clean(g):gsub("^[^%s:]+:%d+: ", "")
    return nil, string.format("%s: field 'hardware.gpu': %s", where, msg)
  end
  for _, key in ipairs { "inter_node", "intra_node" } do
    local fab = M.v(h[key])
    if fab ~= nil then
      local okf, f = pcall(cat.get, cat, "fabrics", fab)
      if not okf then
        local msg = require("gpuplan.cli").clean(f):gsub("^[^%s:]+:%d+: ", "")
        return nil, string.format("%s: field 'hardware.%s': %s", where, key, msg)
      end
    end
  end
  -- hardware.system (SCHEMA.md) is read by the train predictor alone
  -- (gp.train's system).  Checked here as the card is, so the reason
  -- names FILE:LINE and the field: an id no catalog system has was
  -- refused by gp.train naming neither; a system holding another card
  -- likewise ("train: system ... holds h200-sxm, not h100-sxm"); and an
  -- infer, rl, memory or collective case stating one was priced on the
  -- card's default node, in silence.
  local sysid, sys = M.v(h.system), nil
  if sysid ~= nil then
    local oks, s = pcall(cat.get, cat, "systems", sysid)
    if not oks then
      local msg = require("gpuplan.cli").clean(s):gsub("^[^%s:]+:%d+: ", "")
      return nil, string.format("%s: field 'hardware.system': %s", where, msg)
    end
    if case.kind ~= "train" then
      return nil, string.format("%s: field 'hardware.system': read by train cases alone "
        .. "(gp.train's system); %s cases are priced on the card's default node", where,
        tostring(case.kind))
    end
    if s.gpu ~= h.gpu then
      return nil, string.format("%s: field 'hardware.system': '%s' holds %s, not hardware.gpu %s",
        where, tostring(sysid), tostring(s.gpu), tostring(h.gpu))
    end
    sys = s
  end
  -- hardware.intra_node is read by the collective predictor alone (comm's
  -- --fabric); the others price the node on the card's own scale-up
  -- fabric (a train case's hardware.system's where it names one), so a
  -- case that states another was priced on that, in silence.  Refused
  -- where it differs (the shipped rows state the card's own: rtx-4090's
  -- pcie4).
  local intra = M.v(h.intra_node)
  local own = sys and sys.scaleup or (g.scaleup and g.scaleup.fabric)
  local whose = sys and ("system " .. tostring(sysid)) or tostring(h.gpu)
  if intra ~= nil and case.kind ~= "collective" and intra ~= own then
    return nil, string.format("%s: field 'hardware.intra_node': '%s' is not %s's own scale-up "
      .. "fabric (%s): %s cases are priced on %s (intra_node is read by collective "
      .. "cases, as gpuplan comm --fabric)", where, tostring(intra), whose,
      tostring(own or "none"), tostring(case.kind), sys and "the system's" or "the card's")
  end
  return g
end

return M
