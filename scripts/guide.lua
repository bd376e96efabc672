#!/usr/bin/env gpuplan
-- The default guide: what `gpuplan` with no arguments prints.
--
-- It answers the questions of the GPU buying guides people use today, with
-- the models instead of the rules of thumb:
--   1. the cards: dense peaks, bandwidth, NVLink per direction, price;
--   2. does the job fit on one card (full / LoRA / QLoRA / inference)?
--   3. how fast do the cards of one node talk (the H800/A800 NVLink cut)?
--   4. what serving costs: decode speed, throughput, $ per million tokens.
-- Copy it and change the lists at the top to ask about your own jobs.
--
--   gpuplan run scripts/guide.lua [--format markdown] [--currency CNY] [--market cn]
--
-- Prices: the cheapest dated offer of each card, in --currency, with the
-- market it is from (the price entry's region: cn, us, global); a price
-- quoted in another currency is converted at the catalog's central-bank
-- rate and the market column says "converted from" the quoted price.
-- --market keeps one market's offers (cn: what renting in China costs).
-- --format csv prints one table (a `section` column and the union of the
-- sections' columns); json one array of sections.
local gp = require "gpuplan"
local cat = gp.catalog()

local opt = gp.options({
  format = { "output format: text, markdown, csv or json", "text" },
  currency = { "currency of prices (USD, CNY, ...)", cat.settings.currency },
  market = { "keep the prices of one market (a price region: cn, us, global, ...); "
             .. "empty: every market", "" },
}, arg)
if #opt[0] > 0 then
  error(require("gpuplan.cli").usage("guide: unexpected argument '" .. opt[0][1] .. "' (see --help)"), 0)
end
if not require("gpuplan.report").formats[opt.format] then
  error(require("gpuplan.cli").usage("guide: --format must be text, markdown, csv or json"), 0)
end
if opt.currency ~= "USD" and not cat.currencies[opt.currency] then
  error(require("gpuplan.cli").usage("guide: --currency: no exchange rate for '" .. opt.currency
    .. "' in the catalog (see 'gpuplan catalog list currencies')"), 0)
end

local GPUS = { "a100-sxm-80gb", "a800-sxm-80gb", "h100-sxm", "h800-sxm", "h20",
               "h200-sxm", "b200", "rtx-4090" }
local NODES = { "dgx-a100", "hgx-a800", "dgx-h100", "hgx-h800", "hgx-h20", "dgx-h200",
                "dgx-b200", "pcie-8x-4090" }

local market = opt.market ~= "" and opt.market or nil
if market then
  local known = {}
  for _, id in ipairs(cat:ids("prices")) do known[cat.prices[id].region] = true end
  if not known[market] then
    local names = {}
    for k in pairs(known) do names[#names + 1] = k end
    table.sort(names)
    error(require("gpuplan.cli").usage("guide: --market: no price in the catalog is from '"
      .. market .. "' (markets: " .. table.concat(names, ", ") .. ")"), 0)
  end
end

-- JSON: one object of sections, printed at the end, so the output parses.
local json_out = {}

-- CSV: one table a spreadsheet opens, printed at the end: a `section`
-- column, then the union of the sections' columns (one column per label;
-- a section leaves the others empty), cells formatted as the tables.
local csv_rows, csv_cols, csv_col_of = {}, { { key = "section", label = "section" } }, {}

local function section(title, rows, columns)
  if opt.format == "csv" then
    for _, c in ipairs(columns) do
      local label = c.label or c.key
      if not csv_col_of[label] then
        csv_col_of[label] = "c" .. #csv_cols
        csv_cols[#csv_cols + 1] = { key = csv_col_of[label], label = label }
      end
    end
    for _, r in ipairs(rows) do
      local out = { section = title }
      for _, c in ipairs(columns) do
        local v = r[c.key]
        if v ~= nil and type(c.fmt) == "function" then v = c.fmt(v, r)
        elseif v ~= nil and type(c.fmt) == "string" and type(v) == "number" then
          v = string.format(c.fmt, v)
        end
        out[csv_col_of[c.label or c.key]] = v
      end
      csv_rows[#csv_rows + 1] = out
    end
    return
  end
  if opt.format == "json" then
    local keep = {}
    for i, r in ipairs(rows) do
      keep[i] = {}
      for _, c in ipairs(columns) do keep[i][c.key] = r[c.key] end
    end
    json_out[#json_out + 1] = { title = title, rows = keep }
    return
  end
  if opt.format == "text" or opt.format == "markdown" then
    io.write(opt.format == "markdown" and "## " or "== ", title,
      opt.format == "markdown" and "\n\n" or " ==\n")
  end
  gp.report(rows, { format = opt.format, columns = columns })
  io.write("\n")
end

-- The cheapest dated price of a GPU-hour in --currency (gp.prices.cheapest:
-- a guide's rule-of-thumb range only when nothing else is there, flagged).
local converted_from, guide_used = {}, false
local function cheapest(gpu)
  local q = gp.prices.cheapest(cat, gpu, { currency = opt.currency, market = market })
  if q and q.converted then converted_from[q.entry.price.currency] = true end
  if q and q.guide then guide_used = true end
  return q
end

-- 1. The cards ------------------------------------------------------------
local rows = {}
for _, id in ipairs(GPUS) do
  local g = cat:get("gpus", id)
  local link = g.scaleup and cat.fabrics[g.scaleup.fabric]
  local q = cheapest(id)
  rows[#rows + 1] = {
    gpu = id, memory = tostring(g._raw.memory), hbm = g.mem_bw / 1e12,
    bf16 = g.peak.bf16 and g.peak.bf16 / 1e12, fp8 = g.peak.fp8 and g.peak.fp8 / 1e12,
    link = link and link.bw / 1e9 or nil,
    ridge = g.peak.bf16 and g.peak.bf16 / g.mem_bw,
    price = q and string.format("%.2f%s", q.amount, q.guide and "*" or ""),
    market = gp.prices.origin(q),
  }
end
section("The cards (dense tensor peaks; scale-up link per direction; cheapest sourced price"
        .. (market and (" in market " .. market) or "") .. ")", rows, {
  { key = "gpu", label = "GPU" }, { key = "memory" },
  { key = "hbm", label = "HBM TB/s", fmt = "%.2f" },
  { key = "bf16", label = "bf16 TFLOPS", fmt = "%.0f" },
  { key = "fp8", label = "fp8 TFLOPS", fmt = "%.0f" },
  { key = "link", label = "link GB/s/dir", fmt = "%.0f" },
  { key = "ridge", label = "bf16 ridge FLOP/B", fmt = "%.0f" },
  { key = "price", label = opt.currency .. "/GPU-h", align = "right" },
  { key = "market", label = "market (price region)", align = "left" },
})
if opt.format == "text" then
  if guide_used then
    io.write("* no dated offer in the catalog: the seed guide's rule of thumb (catalog show ID)\n")
  end
  local from = {}
  for c in pairs(converted_from) do from[#from + 1] = c end
  table.sort(from)
  for _, c in ipairs(from) do
    io.write(string.format("converted prices: %s to %s at %s (catalog list currencies)\n",
      c, opt.currency, gp.prices.rate(cat, c, opt.currency)))
  end
  io.write("\n")
end

-- 2. Does it fit on one card? ---------------------------------------------
local JOBS = {
  { label = "7B full FT, AdamW mixed precision, seq 2048", model = "llama2-7b", method = "full", seq = 2048 },
  { label = "7B LoRA r8, bf16 base, seq 2048", model = "llama2-7b", method = "lora", seq = 2048 },
  { label = "13B QLoRA, seq 2048", model = "llama2-13b", method = "qlora", seq = 2048 },
  { label = "70B QLoRA, seq 2048, full recompute", model = "llama2-70b", method = "qlora", seq = 2048,
    recompute = "full" },
  { label = "70B inference, int4, 4096-token context", model = "llama2-70b", method = "infer",
    weights = "int4", seq = 4096 },
}
rows = {}
for _, job in ipairs(JOBS) do
  local row = { job = job.label }
  for _, id in ipairs { "rtx-4090", "a100-sxm-80gb", "h20", "h200-sxm", "b200" } do
    local ok, r = pcall(gp.memory, { model = job.model, gpu = id, method = job.method, seq = job.seq,
      recompute = job.recompute, weights = job.weights })
    if not ok then
      row[id] = "error"
    elseif r.fits then
      row[id] = string.format("yes %.0fG", r.total / gp.GiB)
    else
      row[id] = string.format("no +%.0fG", r.short_by / gp.GiB)
    end
  end
  rows[#rows + 1] = row
end
section("Does it fit on one card? (GiB per GPU incl. reserve; no: short by, after a 10% margin)", rows, {
  { key = "job" }, { key = "rtx-4090", align = "right" }, { key = "a100-sxm-80gb", align = "right" },
  { key = "h20", align = "right" }, { key = "h200-sxm", align = "right" }, { key = "b200", align = "right" },
})

-- 3. How fast the cards of one node talk ----------------------------------
-- TP all-reduce of one layer's activations: s * b * h * 2 bytes for a 70B
-- (h = 8192) at seq 4096, micro-batch 1 = 64 MiB, twice per layer forward.
-- Gradient all-reduce of a 70B model in bf16: 2 bytes * 69e9 = 138 GB.
local tp_bytes = 4096 * 8192 * 2
rows = {}
for _, sys in ipairs(NODES) do
  local s = cat:get("systems", sys)
  local big = gp.comm { op = "all_reduce", bytes = 2 ^ 30, gpus = s.gpus, system = sys }
  local tp = gp.comm { op = "all_reduce", bytes = tp_bytes, gpus = s.gpus, system = sys }
  local grads = gp.comm { op = "all_reduce", bytes = 2 * 68.98e9, gpus = s.gpus, system = sys }
  rows[#rows + 1] = { system = sys, gpus = s.gpus, fabric = s.scaleup, busbw = big.busbw / 1e9,
    algo = big.algo, tp = tp.time * 1e6, grads = grads.time }
end
section("One node talking: all-reduce across its GPUs (nccl-tests busbw)", rows, {
  { key = "system" }, { key = "gpus" }, { key = "fabric", label = "scale-up" },
  { key = "busbw", label = "busbw 1GiB GB/s", fmt = "%.0f" }, { key = "algo", label = "algorithm" },
  { key = "tp", label = "TP all-reduce 64MiB us", fmt = "%.0f" },
  { key = "grads", label = "70B bf16 grads s", fmt = "%.2f" },
})

-- 4. Serving --------------------------------------------------------------
-- Rule of thumb: decode tok/s = HBM bandwidth / bytes of weights.  The model
-- adds the KV reads, achievable bandwidth, kernel launches and the logits.
rows = {}
for _, id in ipairs(GPUS) do
  local g = cat:get("gpus", id)
  local row = { gpu = id }
  local ok, r = pcall(gp.infer, { model = "llama2-70b", gpu = id, weights = "int4", batch = 1,
    input = 512, output = 256 })
  if ok and r.fits then
    row.rule = g.mem_bw / r.weights_total
    row.decode = r.stream_tokens_per_s
  end
  local q = cheapest(id)
  ok, r = pcall(gp.infer, { model = "llama3.1-8b", gpu = id, weights = g.peak.fp8 and "fp8" or "bf16",
    concurrency = 64, input = 1024, output = 256,
    price = q and { amount = q.amount, currency = q.currency } })
  if ok and r.fits then
    row.tps = r.per_gpu
    row.cost = r.cost_per_mtok
    row.market = q and gp.prices.origin(q)
  end
  rows[#rows + 1] = row
end
section("Serving: 70B int4 single stream; 8B at 64 concurrent requests (1024 in / 256 out)", rows, {
  { key = "gpu", label = "GPU" },
  { key = "rule", label = "70B rule of thumb tok/s", fmt = "%.0f" },
  { key = "decode", label = "70B modelled tok/s", fmt = "%.0f" },
  { key = "tps", label = "8B tok/s per GPU", fmt = "%.0f" },
  { key = "cost", label = opt.currency .. " per 1M out tokens", fmt = "%.3f" },
  { key = "market", label = "price from", align = "left" },
})

if opt.format == "json" then io.write(gp.json(json_out), "\n") end
if opt.format == "csv" then gp.report(csv_rows, { format = "csv", columns = csv_cols }) end
if opt.format == "text" then
  io.write("Each number comes from a model you can inspect: gpuplan fit, comm, infer, catalog show.\n")
end
return 0
