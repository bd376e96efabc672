-- Multimodal training cases (validation/SCHEMA.md, model.vision and the
-- workload's media): a tower given inline or as a catalog id is read and
-- priced, the image tokens per sample are the tower's arithmetic, and a
-- malformed vision field is refused naming the case and the field.
local t = require "tap"
local cjson = require "cjson"
local validate = require "gpuplan.validate"
local cat = require("gpuplan").catalog()
local scratch = t.scratch()

-- LLaVA-1.5 13B's decoder (Llama 2 13B shape) and, inline, its tower as the
-- catalog's llava-1.5-13b has it: CLIP ViT-L/14-336, 2-layer MLP projector
-- 1024 -> 5120 -> 5120 = 1024*5120 + 5120 + 5120*5120 + 5120 = 31,467,520.
local function llava(id, vision, wl)
  local w = { seq_len = 1024, precision = "bf16", method = "full", images = 1,
              train_vision = false }
  for k, x in pairs(wl or {}) do w[k] = x end
  return { id = id, kind = "train",
    model = { name = "LLaVA-1.5 13B", layers = 40, hidden = 5120, heads = 40, kv_heads = 40,
              ffn_hidden = 13824, ffn_gated = true, vocab = 32000, vision = vision },
    hardware = { gpu = "a100-sxm-80gb", gpus = 8, gpus_per_node = 8 },
    parallel = { tp = 1, pp = 1, zero = 3, micro_batch = 2, global_batch = 16,
                 recompute = "full" },
    workload = w,
    measured = { metric = "step_time_s", value = 1 } }
end
local CLIP = { layers = 24, hidden = 1024, heads = 16, ffn_hidden = 4096, ffn_gated = false,
               image_size = 336, patch_size = 14, projector_params = 31467520 }
-- A Qwen2-VL-style tower: 2x2 merge, no tokens_per_image given.
local MERGED = { layers = 32, hidden = 1280, heads = 16, ffn_hidden = 5120, image_size = 448,
                 patch_size = 14, merge = 2, temporal_patch = 2, projector_params = 44573184 }

local path = scratch.put("vlm.json", cjson.encode {
  llava("catalog", "llava-1.5-13b"),
  llava("inline", CLIP),
  llava("text-only", CLIP, { images = 0 }),
  llava("merged", MERGED, { images = 3 }),
  llava("no-patch", { layers = 24, hidden = 1024, heads = 16, ffn_hidden = 4096,
                      image_size = 336 }),
})
local ok, cases = pcall(validate.read, path)
t.ok(ok, "cases with a vision tower, by catalog id and inline, are read")
if not ok then t.diag(tostring(cases)) end
local rows = {}
for _, c in ipairs(ok and cases or {}) do rows[c.id] = validate.predict(c, cat) end

local function tokens(row)
  return tonumber(tostring(row.detail or ""):match("(%d+) image tokens/sample"))
end
local function patches(row)
  return tonumber(tostring(row.detail or ""):match("(%d+) patches/micro%-batch"))
end
if ok then
  -- CLIP ViT-L/14 at 336 px: (336 / 14)^2 = 576 patches, no merge, so 576
  -- LLM tokens per image; one image per sample, micro-batch 2: 1152
  -- patches through the tower per micro-batch.  Exact integers.
  t.is(tokens(rows.inline), 576, "inline CLIP tower: (336/14)^2 = 576 image tokens per sample")
  t.is(patches(rows.inline), 1152, "inline CLIP tower: 2 samples x 576 patches per micro-batch")
  -- The catalog's llava-1.5-13b tower is the same tower: the same step
  -- (both go through the same engine call; equal to the last bit).
  t.ok(rows.catalog.predicted ~= nil and rows.catalog.predicted == rows.inline.predicted,
    string.format("the catalog id prices as the same tower inline (%s vs %s)",
      tostring(rows.catalog.predicted), tostring(rows.inline.predicted)))
  -- Without images the tower does no work: the step is shorter (the 576
  -- image tokens are still in seq_len, so only the tower's time goes).
  t.ok(rows["text-only"].predicted < rows.inline.predicted,
    "no images: the tower's time leaves the step")
  -- 2x2 merge: (448 / 14 / 2)^2 = 256 tokens per image, 3 images = 768
  -- per sample; the tower sees 256 * 4 = 1024 patches an image: 2 samples
  -- x 3 images x 1024 = 6144 patches per micro-batch.
  t.is(tokens(rows.merged), 768, "2x2 merge: 3 x (448/28)^2 = 768 image tokens per sample")
  t.is(patches(rows.merged), 6144, "2x2 merge: 2 x 3 x 1024 patches per micro-batch")
  t.ok(rows["no-patch"].predicted == nil and
    tostring(rows["no-patch"].reason):find("vision.patch_size", 1, true) ~= nil,
    "an inline tower without patch_size is not predicted, naming the field: "
      .. tostring(rows["no-patch"].reason))
end

-- Malformed vision fields: refused on reading, naming the case and field.
local function refused(case, want, what)
  local p = scratch.put("bad.json", cjson.encode { case })
  local okb, e = pcall(validate.read, p)
  t.is(not okb and e, p .. ":1: case '" .. case.id .. "': " .. want, what)
end
refused(llava("neg", { layers = -1, hidden = 1024, heads = 16, ffn_hidden = 4096,
                       image_size = 336, patch_size = 14 }),
  "field 'model.vision.layers': must be >= 1, got -1", "a negative tower depth")
refused(llava("num", 5),
  "field 'model.vision': expected a catalog model id or a vision tower object, got 5",
  "a number for the tower")
refused(llava("textmodel", "llama3-8b"),
  "field 'model.vision': 'llama3-8b' is not a catalog model with a vision tower (gpuplan "
    .. "catalog list models)", "a catalog model without a tower")
refused(llava("typo", { layers = 24, hidden = 1024, heads = 16, ffn_hidden = 4096,
                        image_size = 336, patch = 14 }),
  "field 'model.vision.patch': unknown field (known: ffn_gated, ffn_hidden, heads, hidden, "
    .. "image_size, layers, merge, params, patch_size, projector_params, temporal_patch, "
    .. "tokens_per_image)", "a misspelt tower field")
refused(llava("imgs", CLIP, { images = -2 }),
  "field 'workload.images': must be >= 0, got -2", "negative images")
refused(llava("tv", CLIP, { train_vision = "yes" }),
  "field 'workload.train_vision': expected true or false, got \"yes\"", "train_vision not a boolean")
scratch.remove()

t.done_testing()
