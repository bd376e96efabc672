#!/usr/bin/env gpuplan
-- The default guide: what `gpuplan` with no arguments prints.
--
-- Until the scenario guide lands, it shows the GPUs of the catalog the
-- seed buying guides compare, with the numbers that decide between them.
local gp = require "gpuplan"
local cat = gp.catalog()

local seed = { "a100-sxm-80gb", "a800-sxm-80gb", "h100-sxm", "h800-sxm", "h20", "h200-sxm", "b200" }
local rows = {}
for _, id in ipairs(seed) do
  local g = cat.gpus[id]
  if g then
    local link = g.scaleup and cat.fabrics[g.scaleup.fabric]
    rows[#rows + 1] = {
      gpu = id, memory = tostring(g._raw.memory), hbm = g.mem_bw / 1e12,
      bf16 = g.peak.bf16 and g.peak.bf16 / 1e12,
      fp8 = g.peak.fp8 and g.peak.fp8 / 1e12,
      link = link and link.bw / 1e9,
      ridge = g.peak.bf16 and g.peak.bf16 / g.mem_bw,
    }
  end
end
local format = arg[1] == "--format" and arg[2] or "text"
gp.report(rows, { format = format, title = "GPUs of the seed guides (dense peaks; NVLink per direction)",
  columns = {
    { key = "gpu", label = "GPU" },
    { key = "memory", label = "memory" },
    { key = "hbm", label = "HBM TB/s", fmt = "%.2f" },
    { key = "bf16", label = "bf16 TFLOPS", fmt = "%.0f" },
    { key = "fp8", label = "fp8 TFLOPS", fmt = "%.0f" },
    { key = "link", label = "NVLink GB/s/dir", fmt = "%.0f" },
    { key = "ridge", label = "bf16 ridge FLOP/B", fmt = "%.0f" },
  } })
