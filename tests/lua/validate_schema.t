-- Every field validation/SCHEMA.md documents is accepted by the case
-- reader (gpuplan.validate's schema: an unknown field is refused) and read
-- by a predictor (issue 19.16: model.encoder_layers was documented, read
-- by predict/case.lua and refused as unknown; moe.dense_ffn_hidden was in
-- the engine and in no case).  The fields are taken from the document:
-- the keys of its JSON example (comments stripped), every `a.b` path of
-- its prose and the keys of its inline `"name": {...}` objects.
local t = require "tap"
local cjson = require "cjson"
local validate = require "gpuplan.validate"

local doc = assert(io.open("validation/SCHEMA.md")):read("a")
local fields, order = {}, {}
local function add(path, where)
  if not fields[path] then fields[path] = where; order[#order + 1] = path end
end

-- The keys of a decoded object, as dotted paths under prefix.
local function walk(obj, prefix, where)
  for k, x in pairs(obj) do
    local p = prefix == "" and k or prefix .. "." .. k
    add(p, where)
    if type(x) == "table" and next(x) ~= nil and #x == 0 then walk(x, p, where) end
  end
end

-- The record specs of the case schema, by field name, wherever they are
-- (an inline object names its key, not its parent).
local schema = validate.case_schema
local function find_spec(path)
  local spec = schema
  for k in path:gmatch("[^.]+") do
    if not (spec.fields and spec.fields[k]) then return nil end
    spec = spec.fields[k]
  end
  return spec
end
local function parents_of(name, spec, prefix, out)
  for k, s in pairs(spec.fields or {}) do
    local p = prefix == "" and k or prefix .. "." .. k
    if k == name then out[#out + 1] = p end
    parents_of(name, s, p, out)
  end
  return out
end

-- 1. The JSON example.
local block = doc:match("```json\n(.-)\n```")
t.ok(block ~= nil, "SCHEMA.md has its JSON example")
local json = block:gsub("//[^\n]*", "")
local ok, example = pcall(cjson.decode, json)
t.ok(ok, "the example is JSON once its comments are stripped")
if ok then walk(example, "", "the JSON example") end

-- 2. Dotted paths in the prose, `parallel.dp_attention`, that start at a
-- field of the case (not `gpuplan.serve`, a module).
for p in doc:gmatch("`([%a_]+%.[%a_%.]+)`") do
  if schema.fields[p:match("^[%a_]+")] then add(p, "the prose") end
end

-- 3. Inline objects, `"rl": {"prompts": 64, ...}`: rooted where the
-- schema has a field of that name (exactly one place).
for key, body in doc:gmatch('`"([%a_]+)": (%b{})') do
  local roots = parents_of(key, schema, "", {})
  t.is(#roots, 1, string.format("the inline '%s' object has one place in the case", key))
  local okj, obj = pcall(cjson.decode, (body:gsub("%s+", " ")))
  t.ok(okj, "'" .. key .. "' is JSON")
  if okj and roots[1] then
    add(roots[1], "the inline " .. key)
    walk(obj, roots[1], "the inline " .. key)
  end
end
t.ok(#order >= 60, "fields found in SCHEMA.md: " .. #order)

-- The code that reads cases, without the schema's own declaration.
local readers = {}
for _, f in ipairs { "validate", "predict/case", "predict/train", "predict/memory",
                     "predict/infer", "predict/collective", "predict/rl" } do
  local src = assert(io.open("lua/gpuplan/" .. f .. ".lua")):read("a")
  if f == "validate" then
    src = src:gsub("\nlocal case_schema = T%.record (%b{})", "")
  end
  readers[#readers + 1] = src
end
local code = table.concat(readers, "\n")
local function used(name)
  return code:find("%." .. name .. "%f[^%w_]") or code:find('"' .. name .. '"', 1, true)
end

-- Provenance for the people who check a case; nothing is computed from it
-- (the title and notes name the software that ran and quote the source for
-- a reader: a predictor reads workload.framework and the stated fields).
local provenance = { ["source.where"] = true, ["source.title"] = true, notes = true }

table.sort(order)
for _, p in ipairs(order) do
  t.ok(find_spec(p) ~= nil, string.format("%s (%s): accepted by the case reader", p, fields[p]))
  local name = p:match("([%a_]+)$")
  if not provenance[p] then t.ok(used(name), string.format("%s: read by a predictor", p)) end
end

-- And the two of the issue, end to end: a T5 case and a MoE case with
-- dense_ffn_hidden are predicted, not refused.
local scratch = t.scratch()
local path = scratch.put("cases.json", cjson.encode {
  { id = "t5", kind = "memory",
    model = { name = "T5 encoder-decoder", layers = 12, encoder_layers = 12, hidden = 768,
              heads = 12, ffn_hidden = 2048, vocab = 32128, ffn_act = "relu",
              rel_buckets = 32 },
    hardware = { gpu = "h100-sxm", gpus = 1 },
    workload = { method = "full", seq_len = 512, batch = 1 },
    measured = { metric = "peak_memory_gib", value = 5, unit = "GiB" } },
  { id = "moe", kind = "memory",
    model = { name = "m", layers = 4, hidden = 1024, heads = 16, ffn_hidden = 4096,
              vocab = 32000, moe = { experts = 8, top_k = 2, expert_ffn_hidden = 512,
                                     dense_layers = 1, dense_ffn_hidden = 2048 } },
    hardware = { gpu = "h100-sxm", gpus = 1 },
    workload = { method = "full", seq_len = 512, batch = 1 },
    measured = { metric = "peak_memory_gib", value = 5, unit = "GiB" } },
})
local okr, cases = pcall(validate.read, path)
t.ok(okr, "a T5 case and a MoE case with dense_ffn_hidden are read")
if not okr then t.diag(tostring(cases)) end
local cat = require("gpuplan").catalog()
for _, c in ipairs(okr and cases or {}) do
  local row = validate.predict(c, cat)
  t.ok(row.predicted ~= nil, c.id .. ": predicted")
  if not row.predicted then t.diag(tostring(row.reason)) end
end

-- parallel.dp is read: one that contradicts the GPUs is refused.  16 GPUs
-- over tp 2 x pp 2 leave dp 4, not 8.
path = scratch.put("dp.json", cjson.encode {
  { id = "dp", kind = "train",
    model = { name = "m", layers = 4, hidden = 1024, heads = 16, ffn_hidden = 4096, vocab = 32000 },
    hardware = { gpu = "h100-sxm", gpus = 16 },
    parallel = { tp = 2, pp = 2, dp = 8 },
    workload = { seq_len = 2048 },
    measured = { metric = "mfu", value = 0.4 } },
})
local okd, ed = pcall(validate.read, path)
t.is(not okd and ed, path .. ":1: case 'dp': field 'parallel.dp': 8, but 16 GPUs over tp 2 x pp 2 x "
  .. "cp 1 make 4", "a dp that contradicts the GPUs: refused, naming both")
-- A Ulysses group splits the GPUs as CP does, each factor named with its
-- value: 16 GPUs over tp 1 x pp 1 x cp 1 x ulysses 3 make 16 / 3 =
-- 5.33333 (%g), not dp 4.  It said "cp x ulysses 3", one factor.
path = scratch.put("dpu.json", cjson.encode {
  { id = "dpu", kind = "train",
    model = { name = "m", layers = 4, hidden = 1024, heads = 24, ffn_hidden = 4096, vocab = 32000 },
    hardware = { gpu = "h100-sxm", gpus = 16 },
    parallel = { dp = 4, ulysses = 3 },
    workload = { seq_len = 2048 },
    measured = { metric = "mfu", value = 0.4 } },
})
okd, ed = pcall(validate.read, path)
t.is(not okd and ed, path .. ":1: case 'dpu': field 'parallel.dp': 4, but 16 GPUs over tp 1 x pp 1 x "
  .. "cp 1 x ulysses 3 make 5.33333", "a dp that contradicts the Ulysses groups: each factor named")
scratch.remove()

t.done_testing()
