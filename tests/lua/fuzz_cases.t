-- Fuzz target: validation case files (gpuplan.validate).  Published cases
-- of each kind (tests/fixtures/validation/fuzz_base.json, taken from the
-- shared cases without their sources) get fields removed, retyped or
-- pushed to extremes, or their JSON text garbled.  Properties: a file
-- either fails to read with one line naming it (and the case and field)
-- without a position inside gpuplan, or every case it holds is predicted
-- as a finite number or declined with a reason that is itself clean --
-- never a predictor's internal error ("predict/memory.lua:151: attempt to
-- index a number value").
local t = require "tap"
local fz = require "fuzz"
local validate = require "gpuplan.validate"
local catalog = require "gpuplan.catalog"
local cjson = require "cjson"

local fh = assert(io.open("tests/fixtures/validation/fuzz_base.json", "rb"))
local bases = cjson.decode(fh:read("a"))
fh:close()
local extra = { "layers", "hidden", "heads", "kv_heads", "head_dim", "ffn_hidden", "vocab",
                "moe", "mla", "gpus", "gpus_per_node", "intra_node", "inter_node", "tp", "pp",
                "cp", "ep", "vpp", "zero", "fsdp", "sp", "micro_batch", "recompute", "offload",
                "seq_len", "precision", "method", "lora", "weight_dtype", "kv_dtype", "batch",
                "input_len", "output_len", "concurrency", "metric", "value", "collective",
                "bytes", "notes", "source", "tp_size" }

-- Plausible changes, which keep a case inside the schema so that it
-- reaches the predictors: counts moved to any size up to 2^24, enums to
-- another value, fields dropped, catalog ids swapped.
local magnitudes = { 1, 2, 3, 4, 7, 8, 16, 64, 128, 1000, 4096, 65536, 2 ^ 20, 2 ^ 24 }
local choices = {
  recompute = { "none", "selective", "full" }, offload = { "optimizer", "params+optimizer" },
  precision = { "fp32", "tf32", "bf16", "fp16", "fp8", "fp4" },
  method = { "pretrain", "full", "lora", "qlora", "infer" },
  weight_dtype = { "fp32", "bf16", "fp16", "fp8", "int8", "int4", "nf4", "fp4" },
  kv_dtype = { "bf16", "fp8", "int8", "fp4" }, optimizer = { "adamw", "adam8bit", "sgd" },
  gpu = { "h100-sxm", "a100-sxm-40gb", "rtx-4090", "gb200", "h20", "mi300x", "no-such-gpu" },
  inter_node = { "ib-ndr-400", "roce-400", "no-such-fabric" },
  intra_node = { "nvlink4", "pcie4", "nvlink-bridge" },
  collective = { "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast",
                 "send_recv" },
}
local function plausible(c)
  for _ = 1, math.random(3) do
    local node = c
    local subs = {}
    for _, k in ipairs(fz.keys(node)) do if type(node[k]) == "table" then subs[#subs + 1] = k end end
    if #subs > 0 and math.random(4) > 1 then node = node[fz.pick(subs)] end
    local ks = fz.keys(node)
    if #ks > 0 then
      local k = fz.pick(ks)
      local v = node[k]
      if choices[k] then node[k] = fz.pick(choices[k])
      elseif type(v) == "number" and k ~= "value" then node[k] = fz.pick(magnitudes)
      elseif k ~= "id" and k ~= "kind" and k ~= "measured" and k ~= "metric" and k ~= "value" then
        node[k] = nil
      end
    end
  end
  return c
end

local cat = catalog.get()
local scratch = t.scratch()
local n = fz.start("cases", 300)
local predicted, declined = 0, 0
for i = 1, n do
  local cases = {}
  for k = 1, math.random(1, 3) do
    local c = fz.copy(fz.pick(bases))
    if math.random(3) > 1 then plausible(c) else fz.mutate_table(c, cjson.null, extra) end
    if type(c) == "table" then c.id = "c" .. k end
    cases[k] = c
  end
  if math.random(10) == 1 then table.insert(cases, 1, cjson.null) end
  local text = fz.json(cases, cjson.null)
  if math.random(6) == 1 then
    for _ = 1, math.random(3) do text = fz.mutate_text(text) end
  end
  local path = scratch.put("cases" .. i .. ".json", text)
  local okr, got = pcall(validate.read, path)
  if not okr then
    local why = fz.unclean(got)
    if why then fz.finding(why .. ": " .. tostring(got), text)
    elseif not got:find(path, 1, true) then fz.finding("error does not name the file: " .. got, text) end
  else
    for _, c in ipairs(got) do
      local okp, row = pcall(validate.predict, c, cat)
      if not okp then
        fz.finding("predict raised: " .. tostring(row), text)
      elseif row.predicted ~= nil then
        predicted = predicted + 1
        if not (row.error == row.error and math.abs(row.error) < math.huge) then
          fz.finding("error not finite: " .. tostring(row.error), text)
        end
      else
        declined = declined + 1
        local why = fz.bad_reason(row.reason)
        if why then
          fz.finding("reason is an internal error (" .. why .. "): " .. tostring(row.reason), text)
        end
      end
    end
  end
  os.remove(path)
end
t.diag(string.format("%d cases predicted, %d declined with a reason", predicted, declined))
scratch.remove()
fz.finish()
t.done_testing()
