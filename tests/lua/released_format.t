-- A model's released weight formats (model.dtype, model.expert_dtype),
-- which infer serves by default since 574fb4ff: a Lua model table's are
-- checked by the catalog's own enums (gpuplan.schema model), as a catalog
-- file's are.  The engine's field reader ignores both fields, so a table's
-- dtype = "FP8" (or 8) was served in bf16 in silence, and expert_dtype =
-- "MXFP4" refused as "expert_weights: unknown weight format", an argument
-- the script never gave.
-- Run with ./gpuplan run tests/lua/released_format.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(8)

local cat = gp.catalog()
local function copy(id, k, v)
  local m = {}
  for f, x in pairs(cat:get("models", id)) do m[f] = x end
  m.id, m[k] = nil, v
  return m
end
local function infer_err(a)
  local ok, e = pcall(gp.infer, a)
  return not ok and tostring(e) or ""
end

-- A table's fp8 dtype is served as released, as the catalog's deepseek-v3
-- is: the same format as weights = "fp8".
local dense = { gpu = "h100-sxm" }
local r = gp.infer(t.with(dense, { model = copy("llama3-8b", "dtype", "fp8") }))
t.is(r.weights, "fp8", "model table dtype fp8: served in fp8")
r = gp.infer(t.with(dense, { model = copy("llama3-8b", "dtype", "bf16") }))
t.is(r.weights, "bf16", "model table dtype bf16: bf16")

-- Off the enum: refused, naming the field and what it takes.
t.like(infer_err(t.with(dense, { model = copy("llama3-8b", "dtype", "FP8") })),
  'infer: model%.dtype: expected one of fp32, bf16, fp16, fp8, got "FP8"',
  "dtype FP8: refused by the catalog's spelling, not served in bf16")
t.like(infer_err(t.with(dense, { model = copy("llama3-8b", "dtype", 8) })),
  "infer: model%.dtype: expected one of fp32, bf16, fp16, fp8, got 8", "dtype 8: refused")
-- The error names the script's line, not the library's.
t.like(infer_err(t.with(dense, { model = copy("llama3-8b", "dtype", "int4") })),
  "^[^:]*released_format%.t:%d+: infer: model%.dtype", "at the script's line")

-- expert_dtype: gpt-oss-120b's mxfp4 experts (the MoE serving model) as
-- released; a wrong one names expert_dtype, not expert_weights.
local moe = { gpu = "h100-sxm", gpus = 8, ep = 8, dp_attention = true }
r = gp.infer(t.with(moe, { model = copy("gpt-oss-120b", "expert_dtype", "mxfp4") }))
t.is(r.expert_weights, "mxfp4", "model table expert_dtype mxfp4: the experts in mxfp4")
t.like(infer_err(t.with(moe, { model = copy("gpt-oss-120b", "expert_dtype", "MXFP4") })),
  'infer: model%.expert_dtype: expected one of fp8, mxfp4, fp4, got "MXFP4"',
  "expert_dtype MXFP4: refused naming expert_dtype")
t.like(infer_err(t.with(moe, { model = copy("gpt-oss-120b", "expert_dtype", 4) })),
  "infer: model%.expert_dtype: expected one of fp8, mxfp4, fp4, got 4",
  "expert_dtype 4: refused, not ignored")
