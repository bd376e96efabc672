-- gpuplan.vlm: images and video as LLM tokens, and the layouts that long
-- multimodal sequences need.
--
--   local vlm = require "gpuplan.vlm"
--   local t = vlm.tokens{ model = "qwen2-vl-72b", video_frames = 128, frame_size = 448 }
--   print(t.units, t.tokens_per_unit, t.video_tokens, t.patches)
--   local rows = vlm.plan{ model = "qwen2-vl-72b", gpu = "h200-sxm", gpus = 64, seq = 32768,
--                          video_frames = 128, method = "full", train_vision = true }
--   for _, r in ipairs(rows) do print(r.layout, r.step_s, r.fits) end
--
-- The vision tower sees each image -- or each slice of temporal_patch
-- video frames, which Qwen2-VL's 3-D patch embedding encodes together
-- (Wang et al. 2024, arXiv:2409.12191 sec. 2.1: "two consecutive frames"
-- per patch; a still image is repeated to make the pair) -- as (S / p)^2
-- patches with attention among them, and the projector turns merge^2
-- neighbouring patches into one LLM token.  So a video of F frames at S x
-- S pixels is ceil(F / temporal_patch) units of (S / (p merge))^2 tokens,
-- the same arithmetic as that many images of size S; the engine prices
-- them as such (gp_train_cfg.images with the unit's size).

local M = {}

local function fail(fmt, ...) error(string.format(fmt, ...), 3) end
-- A usage refusal (gpuplan.args usage): options that do not go together,
-- whatever the model and the card; the command line exits 2 on it.
local function usage(fmt, ...) error(require("gpuplan.args").usage(string.format(fmt, ...)), 3) end
local shown = require("gpuplan.args").shown

-- Towers that read every image at its own resolution (Qwen2-VL and
-- Qwen2.5-VL: dynamic resolution with a 2x2 merge, 3-D patches) against
-- towers that resize every image to one size (CLIP ViT-L/14-336 in
-- LLaVA-1.5).
local function native(v)
  return (v.merge or 1) > 1 or (v.temporal_patch or 1) > 1
end

local function count(name, v)
  if v == nil then return nil end
  if type(v) ~= "number" or v ~= math.floor(v) or v < 0 or v >= 2 ^ 31 then
    fail("%s must be a whole number >= 0 (got %s)", name, shown(v))
  end
  return math.tointeger(v)
end

local function side(name, v)
  if v == nil then return nil end
  if type(v) ~= "number" or v ~= math.floor(v) or v < 1 or v > 65536 then
    fail("%s must be a whole number of pixels in 1..65536 (got %s)", name, shown(v))
  end
  return math.tointeger(v)
end

-- The model with its tower at one resolution and the media of a sequence
-- as units of that resolution.  o: images (per sequence), video_frames
-- (frames per sequence after sampling), image_size and frame_size (pixels
-- of a square image / frame; default the catalog's image_size).  Returns
-- { model, units, tokens_per_unit, patches_per_unit, image_tokens,
-- video_tokens, tokens, patches, size, defaults }.  gpuplan's own callers
-- (memory, the predictors) pass a planner's whole options as o, and
-- planner = true; a script's o (gp.vlm.media) has only these keys, which
-- are checked as vlm.tokens checks its own -- a misspelt {imagse = 1} was
-- dropped and the media of no image returned, in silence.
local media
local internal = require("gpuplan.args").unplaced

-- A refusal of gp.vlm.tokens / gp.vlm.media opens with the function's
-- name, as every gp.* refusal does ("images must be a whole number >= 0"
-- named no function); a planner's keeps the planner's (memory's caller).
local function named(fn, e)
  local m = internal(e)
  if not m:find("^vlm%.") then m = fn .. ": " .. m end
  return m
end

function M.media(model, o, planner)
  if planner then return media(model, o, true) end
  local ok, r = pcall(media, model, o, false)
  if not ok then error(named("vlm.media", r), 2) end
  return r
end

media = function(model, o, planner)
  if type(o) == "table" and not planner then
    require("gpuplan.args").check_keys(o, { "images", "video_frames", "image_size", "frame_size" },
      "vlm.media", 2)
  end
  if type(model) ~= "table" then
    fail("vlm.media: model must be a model table (got %s)", shown(model))
  end
  if o ~= nil and type(o) ~= "table" then
    fail("vlm.media: o must be a table of options (got %s)", shown(o))
  end
  o = o or {}
  local v = model.vision
  if not v then
    -- a model table without an id read "nil has no vision tower"
    fail("%s has no vision tower (images, video_frames, image_size, frame_size)",
      type(model.id) == "string" and model.id or type(model.name) == "string" and model.name
      or "the model table")
  end
  local images = count("images", o.images) or 0
  local frames = count("video_frames", o.video_frames) or 0
  local isz, fsz = side("image_size", o.image_size), side("frame_size", o.frame_size)
  -- A frame size sizes video frames only: without frames it would be
  -- taken as the images' size, or dropped.
  if fsz and frames == 0 then
    usage("frame_size %d sizes video frames, and none is given: give video_frames "
      .. "(image_size sizes images)", fsz)
  end
  local defaults = {}
  local base = v.image_size
  local size = isz or fsz or base
  if images > 0 and frames > 0 and (isz or base) ~= (fsz or isz or base) then
    usage("images at %d px and video frames at %d px: the step prices one resolution per "
      .. "sequence (give frame_size = image_size)", isz or base, fsz)
  end
  if frames > 0 then size = fsz or isz or base end
  if not size then fail("%s: give image_size (its tower has no default)", tostring(model.id)) end
  local patch, merge = v.patch_size, v.merge or 1
  local tpt = v.temporal_patch or 1
  local m2 = {}
  for k, x in pairs(model) do m2[k] = x end
  local v2 = {}
  for k, x in pairs(v) do v2[k] = x end
  m2.vision = v2
  if size ~= base then
    if not native(v) then
      fail("%s's tower resizes every image to %d px (image_size / frame_size %d)",
        tostring(model.id or model.name), base, size)
    end
    -- Qwen2-VL's smart_resize rounds each side to a multiple of
    -- patch x merge (28 px).
    local unit = patch * merge
    local s = math.max(unit, math.floor(size / unit + 0.5) * unit)
    if s ~= size then
      defaults[#defaults + 1] = string.format("%d px rounded to %d (multiples of %d)", size, s,
        unit)
    end
    v2.image_size = s
    v2.tokens_per_image = nil
  end
  -- An image's tokens and the patches its tower encodes (a resampler
  -- such as Qwen-VL's leaves fewer tokens than patches: 1024 patches at
  -- 448 px, 256 tokens): the engine's rules, model_vision_tokens and
  -- model_vision_patches.
  local tok, ppu = require("gpuplan.core").model_vision(m2)
  tok, ppu = math.tointeger(tok) or tok, math.tointeger(ppu) or ppu
  local units = images + (frames > 0 and (frames + tpt - 1) // tpt or 0)
  if frames > 0 and frames % tpt ~= 0 then
    defaults[#defaults + 1] = string.format("%d frames padded to %d (%d per temporal patch)",
      frames, (frames + tpt - 1) // tpt * tpt, tpt)
  end
  local vunits = units - images
  return {
    model = m2, units = units, size = v2.image_size, tokens_per_unit = tok,
    patches_per_unit = ppu, image_tokens = images * tok,
    video_tokens = vunits * tok, tokens = units * tok, patches = units * ppu,
    frames_per_unit = tpt, defaults = defaults,
  }
end

local tokens

-- The catalog of o (o.cat, else the search path's), checked as the
-- planners check theirs: cat = true or {} raised "attempt to index a
-- boolean value" from vlm.lua (gp.vlm.plan) or behind "vlm.tokens: ".
local function catalog_of(o, who)
  if o.cat == nil then return require("gpuplan").catalog() end
  local _, msg = require("gpuplan.options").check("cat", o.cat, "train")
  if msg then fail("%s: %s", who, msg) end
  return o.cat
end

-- vlm.tokens{model = id or table, images, video_frames, image_size,
-- frame_size, cat}: M.media of a catalog model.
function M.tokens(o)
  local ok, r = pcall(tokens, o)
  if not ok then error(named("vlm.tokens", r), 2) end
  return r
end

tokens = function(o)
  if type(o) ~= "table" then fail("vlm.tokens{...}: expected a table of options") end
  require("gpuplan.args").check_keys(o, { "model", "images", "video_frames", "image_size",
    "frame_size", "cat" }, "vlm.tokens", 3)
  local model = o.model
  if type(model) == "string" then
    model = catalog_of(o, "vlm.tokens"):get("models", model)
  end
  if type(model) ~= "table" then fail("vlm.tokens: model is required") end
  local r = M.media(model, o, true)
  r.model = nil
  return r
end

-- Layouts a long multimodal training sequence can run on (the guide's
-- multimodal scenario, until the layout search of `gpuplan plan` takes
-- it): every tp in {1, 2, 4, 8} (with SP above 1) x cp in {1, 2, 4, 8} x
-- pp that divides the layers, with the recompute policies asked
-- (default selective, full) and ZeRO 1, through gp.train; the rows that
-- fit first, fastest first.  o: gp.train's options (model, gpu, gpus,
-- seq, images / video_frames ..., method, global_batch, tokens, price),
-- plus tps, cps, pps, recomputes (lists) to narrow the search and top
-- (default 10).  Each row: {layout, tp, pp, cp, dp, sp, recompute, zero,
-- fits, step_s, mfu, tokens_per_s, days, cost, mem_gib, vision_s}.
function M.plan(o)
  if type(o) ~= "table" then fail("vlm.plan{...}: expected a table of options") end
  local train = require "gpuplan.train"
  local cat = catalog_of(o, "vlm.plan")
  local model = type(o.model) == "string" and cat:get("models", o.model) or o.model
  if type(model) ~= "table" then
    fail("vlm.plan: model must be a model id or table (got %s)", shown(o.model))
  end
  -- a text model was planned as one with vision_s 0 in every row, in
  -- silence (gp.vlm.tokens refuses it)
  if type(model.vision) ~= "table" then
    fail("vlm.plan: %s has no vision tower (gp.sweep searches a text model's layouts)",
      tostring(model.id or "the model"))
  end
  local gpus = o.gpus or 8
  -- the count rule and its words are gpuplan.options bad_count's
  local bad = require("gpuplan.options").bad_count("gpus", gpus)
  if bad then fail("vlm.plan: %s", bad) end
  local rows = {}
  local search = { tps = true, cps = true, pps = true, recomputes = true, top = true }
  -- Every other key is gp.train's: a misspelt one would fail each layout's
  -- gp.train quietly and leave no rows.
  local options = require "gpuplan.options"
  local bad = options.unknown(o, "train", function(k) return search[k] end)
  if bad ~= nil then
    fail("%s", options.unknown_message("train", bad, "vlm.plan",
      { "tps", "cps", "pps", "recomputes", "top" }))
  end
  -- the key named: "vlm.plan: 5 must be a list" named only the value.
  -- Each entry checked too: a split of 0 raised "vlm.lua:236: attempt to
  -- perform 'n%%0'", a table or a string raised Lua's arithmetic errors,
  -- and {a = 1} (no list) searched nothing and answered no rows.
  local function list(k, def, each, what)
    local v = o[k]
    if v == nil then return def end
    if type(v) ~= "table" then fail("vlm.plan: %s must be a list (got %s)", k, shown(v)) end
    local n = #v
    for key in pairs(v) do
      if math.type(key) ~= "integer" or key < 1 or key > n then
        fail("vlm.plan: %s must be a list (got a table with key %s)", k,
          type(key) == "string" and ("'" .. key .. "'") or shown(key))
      end
    end
    for i, x in ipairs(v) do
      if not each(x) then fail("vlm.plan: %s[%d] must be %s (got %s)", k, i, what, shown(x)) end
    end
    return v
  end
  local function split(x)
    return type(x) == "number" and x == math.floor(x) and x >= 1 and x <= 2 ^ 24
  end
  local tps = list("tps", { 1, 2, 4, 8 }, split, "a whole number 1..16777216")
  local cps = list("cps", { 1, 2, 4, 8 }, split, "a whole number 1..16777216")
  local pps = list("pps", { 1, 2, 4, 8 }, split, "a whole number 1..16777216")
  local rcs = list("recomputes", { "selective", "full" },
    function(x) return type(x) == "string" end, "a recompute policy's name")
  -- top as gp.sweep's: NaN ran the trimming loop below from the rows
  -- down to math.mininteger (the script never returned), a string raised
  -- Lua's arithmetic error, and 0 or -1 answered no rows or every row
  local top = o.top == nil and 10 or math.tointeger(o.top)
  if not top or top < 1 or top > 100000 then
    fail("vlm.plan: top must be an integer 1..100000 (got %s)", shown(o.top))
  end
  local refused
  for _, tp in ipairs(tps) do
    for _, cp in ipairs(cps) do
      for _, pp in ipairs(pps) do
        local n = tp * cp * pp
        if gpus % n == 0 and model.heads % tp == 0 and model.layers % pp == 0 then
          for _, rc in ipairs(rcs) do
            local a = {}
            for k, x in pairs(o) do if not search[k] then a[k] = x end end
            a.tp, a.cp, a.pp, a.sp, a.recompute = tp, cp, pp, tp > 1, rc
            a.zero = a.zero or 1
            a.cat = cat
            local dp = gpus // n
            if a.global_batch == nil then a.global_batch = dp * math.max(1, 64 // dp) end
            local ok, r = pcall(train.train, a)
            if not ok then refused = refused or r end
            if ok then
              rows[#rows + 1] = {
                layout = string.format("tp%d cp%d pp%d%s", tp, cp, pp, tp > 1 and " sp" or ""),
                tp = tp, cp = cp, pp = pp, dp = dp, sp = tp > 1, recompute = rc, zero = a.zero,
                fits = r.fits, step_s = r.step_s, mfu = r.mfu, tokens_per_s = r.tokens_per_s,
                days = r.days, cost = r.cost, mem_gib = r.memory.total / 2 ^ 30,
                vision_s = r.vision_s, global_batch = a.global_batch,
              }
            end
          end
        end
      end
    end
  end
  -- gp.train refused every layout: the job itself is wrong (tokens = 0
  -- from no samples, an unknown price ...), which an empty list hid as
  -- "no layout fits".  Its first reason, as gp.sweep fails on a layout
  -- the training step refused.
  if #rows == 0 and refused ~= nil then
    fail("vlm.plan: %s", tostring(refused):gsub("^[^\n]-:%d+: ", ""))
  end
  table.sort(rows, function(x, y)
    if x.fits ~= y.fits then return x.fits end
    if x.tokens_per_s ~= y.tokens_per_s then return x.tokens_per_s > y.tokens_per_s end
    return x.layout < y.layout
  end)
  for i = #rows, top + 1, -1 do rows[i] = nil end
  return rows
end

return M
