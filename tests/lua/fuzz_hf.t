-- Fuzz target: `model import` (gpuplan.hf), the reader of Hugging Face
-- config.json files.  The real configs of tests/fixtures/hf, decoded,
-- get fields removed, retyped or pushed to extremes (2^63, 1e300,
-- Infinity, NaN, null, nested objects), or their text garbled.
-- Properties: an import either gives an entry that the catalog accepts
-- -- its text (hf.to_lua) loads through the catalog's schema and the
-- commands' checks without an error -- or fails with one line naming the
-- file, without a position inside gpuplan.
local t = require "tap"
local fz = require "fuzz"
local hf = require "gpuplan.hf"
local catalog = require "gpuplan.catalog"
local cjson = require "cjson"

local F = "tests/fixtures/hf/"
local bases = {}
for _, name in ipairs { "deepseek-v3", "llama-2-7b", "llama-3.1-8b", "llava-1.5-7b",
                        "mixtral-8x7b", "qwen2-vl-7b", "qwen2.5-7b", "qwen3-30b-a3b" } do
  local fh = assert(io.open(F .. name .. ".json", "rb"))
  bases[#bases + 1] = cjson.decode(fh:read("a"))
  fh:close()
end
-- Fields the reader looks for, so that mutations also add them.
local extra = { "num_key_value_heads", "head_dim", "kv_lora_rank", "q_lora_rank",
                "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "num_local_experts",
                "num_experts", "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size",
                "n_shared_experts", "shared_expert_intermediate_size", "first_k_dense_replace",
                "decoder_sparse_step", "interleave_moe_layer_step",
                "moe_layer_freq", "mlp_only_layers", "sliding_window", "use_sliding_window",
                "max_window_layers", "layer_types", "tie_word_embeddings", "attention_bias",
                "mlp_bias", "torch_dtype", "dtype", "quantization_config", "text_config",
                "vision_config", "image_seq_length", "model_type", "hidden_act",
                "max_position_embeddings", "intermediate_size", "vocab_size", "image_size",
                "patch_size", "depth", "embed_dim", "num_heads", "out_hidden_size" }

local scratch = t.scratch()
local n = fz.start("hf", 400)
local imported = 0
for i = 1, n do
  local cfg = fz.mutate_table(fz.copy(fz.pick(bases)), cjson.null, extra)
  local ok, e, file, input
  if math.random(4) == 1 then
    -- Through a file, its text garbled too.
    local text = fz.json(cfg, cjson.null)
    for _ = 1, math.random(0, 3) do text = fz.mutate_text(text) end
    file = scratch.put("c" .. i .. ".json", text)
    input = text
    ok, e = pcall(hf.model_from_hf, file, { id = "fz-" .. i })
  else
    file = "config"
    input = fz.json(cfg, cjson.null)
    ok, e = pcall(hf.model_from_hf, cfg, { id = "fz-" .. i })
  end
  if ok then
    imported = imported + 1
    -- The printed entry is a catalog file: it must load without an error.
    scratch.put("m.lua", hf.to_lua(e))
    local okl, _, errs = pcall(catalog.load, { scratch.dir })
    if not okl then
      fz.finding("the imported entry's catalog load raised: " .. tostring(errs), input)
    elseif #errs > 0 then
      fz.finding("the imported entry fails the catalog: " .. errs[1], input)
    end
    os.remove(scratch.dir .. "/m.lua")
  else
    e = fz.uncalled(e)
    local why = fz.unclean(e)
    if why then
      fz.finding(why .. ": " .. tostring(e), input)
    -- the file, or its file:line (invalid JSON is placed by its line)
    elseif not (e:sub(1, #file) == file and (e:sub(#file + 1):match("^: ")
                or e:sub(#file + 1):match("^:%d+: "))) and not e:find("^model_from_hf: ") then
      fz.finding("error does not name the file: " .. e, input)
    end
  end
  if file ~= "config" then os.remove(file) end
end
t.diag(string.format("%d of %d configs imported and loaded as catalog entries", imported, n))
scratch.remove()
fz.finish()
t.done_testing()
