-- catalog_gen: generated catalog files for the fuzz targets of the catalog
-- loader (tests/lua/fuzz_catalog.t: one file at a time;
-- tests/lua/fuzz_catalog_path.t: search paths of many files).  Valid
-- entries with fields removed, retyped, pushed to extremes, code that
-- loops, nests or builds strings, text cut or garbled.  Draws from
-- math.random, seeded by fuzz.start.
local fz = require "fuzz"

local M = {}

-- Field lists of valid entries (order fixed: generation must not depend
-- on pairs()).  Values are Lua source text.
local templates = {
  { "gpu", { { "id", '"fz-gpu"' }, { "name", '"x"' }, { "vendor", '"T"' }, { "arch", '"testarch"' },
             { "memory", 'GiB(48)' }, { "mem_bw", '"1TB/s"' },
             { "peak", '{ bf16 = "100TFLOPS", fp8 = "200TFLOPS" }' },
             { "scaleup", '{ fabric = "testlink", domain = 4 }' }, { "sms", "100" },
             { "source", '"t"' } } },
  { "arch", { { "id", '"fz-arch"' }, { "name", '"x"' }, { "launch_overhead", '"4us"' },
              { "achievable", '{ gemm = { bf16 = 0.7 }, hbm = 0.8, reason = "t", source = "t" }' } } },
  { "fabric", { { "id", '"fz-link"' }, { "name", '"x"' }, { "scope", '"scaleup"' },
                { "bw", '"900GB/s bidir"' }, { "latency", '"1us"' }, { "achievable", "0.8" },
                { "achievable_reason", '"t"' }, { "in_switch_reduction", '"nvls"' },
                { "source", '"t"' } } },
  { "fabric", { { "id", '"fz-net"' }, { "name", '"x"' }, { "scope", '"scaleout"' },
                { "bw", '"400Gb/s per-dir"' }, { "latency", '"3us"' }, { "achievable", "0.9" },
                { "achievable_reason", '"t"' }, { "source", '"t"' } } },
  { "system", { { "id", '"fz-sys"' }, { "name", '"x"' }, { "gpu", '"testgpu-48g"' },
                { "gpus", "4" }, { "scaleup", '"testlink"' }, { "nics", "0" },
                { "host_memory", '"512GB"' }, { "host_mem_bw", '"200GB/s"' }, { "source", '"t"' } } },
  { "price", { { "id", '"fz-price"' }, { "gpu", '"testgpu-48g"' }, { "provider", '"x"' },
               { "provider_kind", '"guide"' }, { "region", '"x"' }, { "price", '"$1.25/h"' },
               { "range", '{ "$1/h", "$2/h" }' }, { "date", '"x"' }, { "source", '"t"' } } },
  { "currency", { { "id", '"EUR"' }, { "per_usd", "0.92" }, { "date", '"x"' }, { "source", '"t"' } } },
  { "model", { { "id", '"fz-model"' }, { "name", '"x"' }, { "layers", "4" }, { "hidden", "256" },
               { "heads", "8" }, { "kv_heads", "4" }, { "ffn_hidden", "512" }, { "ffn_gated", "true" },
               { "vocab", "1000" }, { "max_seq", "4096" }, { "params_b", "0.01" }, { "source", '"t"' } } },
  { "model", { { "id", '"fz-moe"' }, { "name", '"x"' }, { "layers", "4" }, { "hidden", "256" },
               { "heads", "8" }, { "ffn_hidden", "512" }, { "vocab", "1000" }, { "params_b", "0.05" },
               { "moe", '{ experts = 8, top_k = 2, ffn_hidden = 128, shared_experts = 1, dense_layers = 1 }' },
               { "source", '"t"' } } },
  { "model", { { "id", '"fz-mla"' }, { "name", '"x"' }, { "layers", "4" }, { "hidden", "256" },
               { "heads", "8" }, { "ffn_hidden", "512" }, { "vocab", "1000" }, { "params_b", "0.05" },
               { "mla", '{ q_lora_rank = 64, kv_lora_rank = 32, qk_nope_head_dim = 16, qk_rope_head_dim = 8, v_head_dim = 16 }' },
               { "sliding_window", '{ size = 128, layers = 2 }' },
               { "vision", '{ layers = 2, hidden = 64, heads = 4, ffn_hidden = 128, image_size = 224, patch_size = 14 }' },
               { "source", '"t"' } } },
  { "settings", { { "currency", '"USD"' }, { "safety_margin", "0.1" } } },
}

-- Values a field may be given instead (Lua source).
local values = { "0", "-1", "1", "2", "1.5", "1e300", "-1e300", "2^31", "2^24", "2^24+1", "2^63",
                 "0/0", "1/0", "-1/0", "true", "false", "{}", "{ 1, 2 }", "{ x = 1 }", '""', '"x"',
                 '"80GB"', '"80 GB"', '"-80GB"', '"1e300TB/s"', '"900GB/s"', '"900GB/s sideways"',
                 '"1e30TFLOPS"', '"$0/h"', '"$1e3/h"', '"12XYZ/h"', '"1000000s"', '"testlink"',
                 '"fz-net"', '"testgpu-48g"', '"no-such-id"', '"UPPER"', 'GiB(0/0)', 'GB(1e300)',
                 'GiB("x")', '("x"):rep(3)', '("ab"):upper()', 'nil', 'model', 'io',
                 '"' .. ("w"):rep(200) .. '"' }
-- Fields a template may be given in addition (unknown ones included).
local extra = { "usable_memory", "pcie", "mig", "tdp", "year", "achievable", "notes",
                "nic_fabric", "host_memory", "moe", "mla", "vision", "tied_embeddings",
                "pos_embeddings", "positions", "head_dim", "norm", "colour", "crosses_cpu", "range",
                "family" }
-- Code a file may also hold: loops, deep nesting, sandbox probes.
local snippets = { "while true do end", "local x = " .. ("{"):rep(300) .. ("}"):rep(300),
                   "local s = 'x' for _ = 1, 40 do s = s .. s end",
                   "local function f() return f() end f()", "os.exit(1)", "x = 1",
                   "local t = setmetatable({}, {})", "coroutine.yield()", "return 1",
                   "for i = 1, 1e9 do end", "local g = gpu", "error('user error')",
                   "error({})", "local s = ('x'):rep(10)", "string.format('%d', 1)" }

-- Numbers a plausible entry may carry in place of the template's: every
-- size from one to the engine's bounds, fractions and exponents.
local magnitudes = { "1", "2", "3", "5", "7", "8", "12", "16", "64", "100", "128", "1000",
                     "4096", "65536", "1000000", "16777216", "0.5", "0.05", "0.01", "0.001",
                     "1e-3", "1e6", "1e9", "1e12" }

function M.entry()
  local tpl = fz.pick(templates)
  local fields = {}
  for i, f in ipairs(tpl[2]) do fields[i] = { f[1], f[2] } end
  -- Two entries in three only move numbers around (often still valid, so
  -- that the commands run on them); the others are broken outright.
  local names = { id = true, gpu = true, arch = true, scaleup = true, nic_fabric = true }
  if math.random(3) > 1 then
    for _ = 1, math.random(3) do
      local f = fz.pick(fields)
      if not names[f[1]] then
        f[2] = f[2]:gsub("%d+%.?%d*", function() return fz.pick(magnitudes) end)
      end
    end
    local parts = {}
    for i, f in ipairs(fields) do parts[i] = f[1] .. " = " .. f[2] end
    return tpl[1] .. " { " .. table.concat(parts, ", ") .. " }"
  end
  for _ = 1, math.random(1, 3) do
    local op = math.random(4)
    if op == 1 and #fields > 0 then
      table.remove(fields, math.random(#fields))
    elseif op == 2 then
      fields[#fields + 1] = { fz.pick(extra), fz.pick(values) }
    elseif #fields > 0 then
      fields[math.random(#fields)][2] = fz.pick(values)
    end
  end
  local parts = {}
  for i, f in ipairs(fields) do parts[i] = f[1] .. " = " .. f[2] end
  return tpl[1] .. " { " .. table.concat(parts, ", ") .. " }"
end

function M.file_text()
  local lines = {}
  for _ = 1, math.random(1, 2) do lines[#lines + 1] = M.entry() end
  if math.random(8) == 1 then
    table.insert(lines, math.random(#lines + 1), fz.pick(snippets))
  end
  local s = table.concat(lines, "\n") .. "\n"
  if math.random(8) == 1 then
    for _ = 1, math.random(3) do s = fz.mutate_text(s) end
  end
  return s
end

M.templates, M.values, M.extra, M.snippets = templates, values, extra, snippets

return M
