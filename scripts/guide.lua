#!/usr/bin/env gpuplan
-- The default guide: what `gpuplan` with no arguments prints.
--
-- It answers the situations of the GPU buying guides people use today,
-- with the models instead of the rules of thumb:
--   1. the cards: dense peaks, bandwidth, NVLink per direction, price;
--   2. which card, how many, which layout, how long and what it costs, for
--      (A) a 7B multimodal fine-tune at 8k and 32k tokens, (B) a 70B full
--      fine-tune at 32k, (C) GRPO with actor and reference, (D) 405B
--      pre-training at 32k, (E) 70B inference on one card or several,
--      (F) DeepSeek-V3 serving at 100k tokens/s -- each recommendation with
--      its runner-up and why it lost;
--   3. does the job fit on one card (full / LoRA / QLoRA / inference)?
--   4. how fast do the cards of one node talk (the H800/A800 NVLink cut)?
-- Copy it and change the jobs to ask about your own.
--
--   gpuplan run scripts/guide.lua [--format markdown] [--currency CNY] [--market cn]
--
-- Prices: the cheapest dated offer of each card, in --currency, with the
-- market it is from (the price entry's region: cn, us, global); a price
-- quoted in another currency is converted at the catalog's central-bank
-- rate and the market column says "converted from" the quoted price.
-- --market keeps one market's offers (cn: what renting in China costs).
-- --format csv prints one table (a `section` column and the union of the
-- sections' columns); json one array of sections {title, columns (key,
-- label: the label states the unit), rows}, numbers as numbers: a card's
-- price (price_guide: the seed guide's rule of thumb), a job's days and
-- cost_amount with their 80% range (_lo, _hi) and cost_unit.
local gp = require "gpuplan"
local ranges = gp.ranges
local cat = gp.catalog()

-- The buyer's currency when --currency is not given: GPUPLAN_CURRENCY,
-- else the catalog settings' (gpuplan.prices.buyer, every command's rule).
local DEFAULT_CURRENCY = gp.prices.buyer(cat, {}, "guide").currency
local opt = gp.options({
  format = { "output format: text, markdown, csv or json", "text" },
  currency = { "currency of prices (USD, CNY, ...); default $GPUPLAN_CURRENCY, else the "
               .. "catalog settings'", DEFAULT_CURRENCY },
  market = { "keep the prices of one market (a price region: cn, us, global, ...); "
             .. "empty: every market", "" },
}, arg)
if #opt[0] > 0 then
  error(require("gpuplan.cli").usage("guide: unexpected argument '" .. opt[0][1] .. "' (see --help)"), 0)
end
if not require("gpuplan.report").formats[opt.format] then
  error(require("gpuplan.cli").usage("guide: --format must be text, markdown, csv or json (got '"
    .. tostring(opt.format) .. "')"), 0)
end
-- ISO 4217 codes in either case, as gp.prices.buyer reads them
opt.currency = opt.currency:upper()
if opt.currency ~= "USD" and not cat.currencies[opt.currency] then
  error(require("gpuplan.cli").usage("guide: --currency: no exchange rate for '" .. opt.currency
    .. "' in the catalog (see 'gpuplan catalog list currencies')"), 0)
end

local GPUS = { "a100-sxm-80gb", "a800-sxm-80gb", "h100-sxm", "h800-sxm", "h20",
               "h200-sxm", "b200", "rtx-4090" }
local NODES = { "dgx-a100", "hgx-a800", "dgx-h100", "hgx-h800", "hgx-h20", "dgx-h200",
                "dgx-b200", "pcie-8x-4090" }

-- a region in either case, as gp.prices.buyer reads it (--market CN is cn),
-- taken in the catalog's own spelling, which gp.prices.cheapest compares
-- (a user catalog's "EU" is --market eu too)
local market = opt.market ~= "" and opt.market or nil
if market then
  local known, names = {}, {}
  for _, id in ipairs(cat:ids("prices")) do
    local r = cat.prices[id].region
    if not known[r] then known[r] = true; names[#names + 1] = r end
  end
  table.sort(names)
  local spelt
  for _, r in ipairs(names) do
    if not spelt and r:lower() == market:lower() then spelt = r end
  end
  if not spelt then
    error(require("gpuplan.cli").usage("guide: --market: no price in the catalog is from '"
      .. market .. "' (markets: " .. table.concat(names, ", ") .. ")"), 0)
  end
  market = spelt
end

-- Text and markdown: a "== title ==" heading over each table; csv one
-- table a spreadsheet opens (a `section` column and the union of the
-- sections' columns); json one array of sections, printed at the end so
-- the output parses (gpuplan.report's document).
local doc = require("gpuplan.report").document(opt.format, { heading = true })
local function section(title, rows, columns) doc:add(title, rows, columns) end

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
    -- a number (json: a script's arithmetic); the guide mark "*" is the
    -- text's, json carries it as price_guide
    price = q and q.amount, price_guide = q and q.guide or nil,
    market = gp.prices.origin(q),
  }
end
section("The cards (dense tensor peaks; scale-up link per direction; cheapest sourced price"
        .. (market and (" in market " .. market) or "") .. ")", rows, {
  { key = "gpu", label = "GPU" }, { key = "memory" },
  -- memory bandwidth, HBM or GDDR (the RTX 4090's GDDR6X is a row here):
  -- it was headed "HBM TB/s"
  { key = "hbm", label = "memory TB/s", fmt = "%.2f" },
  { key = "bf16", label = "bf16 TFLOPS", fmt = "%.0f" },
  { key = "fp8", label = "fp8 TFLOPS", fmt = "%.0f" },
  { key = "link", label = "link GB/s/dir", fmt = "%.0f" },
  { key = "ridge", label = "bf16 ridge FLOP/B", fmt = "%.0f" },
  { key = "price", label = opt.currency .. "/GPU-h", align = "right",
    fmt = function(v, r) return string.format("%.2f%s", v, r.price_guide and "*" or "") end },
  { key = "market", label = "market (price region)", align = "left" },
  opt.format == "json" and { key = "price_guide", label = "price is the seed guide's rule of thumb" }
    or nil,
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

-- 2. Which card for which job ----------------------------------------------
-- Each job is priced on every card that can run it, at that card's price
-- above: training jobs by the layout search (gp.sweep: every TP x PP x CP
-- x DP split, ZeRO, micro-batch and recompute that fits), the cheapest
-- layout within the deadline on each card; the recommendation is the
-- cheapest card, the runner-up the next card and what it loses on.
-- The buyer's market (gpuplan.prices.buyer, the rule of every command): a
-- buyer in China (--currency CNY or --market cn) rents at China-market
-- prices; anyone else where the offers are open to them (us, global,
-- overseas); GPUPLAN_MARKET or the catalog settings' market set it once.
-- A card priced only in another market (the export variants H800, A800,
-- H20 outside China) is left out of the recommendations and named below
-- them.
local buyer = gp.prices.buyer(cat, { currency = opt.currency, market = market }, "guide").markets
local unpriced = {}
local function price_opt(id)
  local q = gp.prices.cheapest(cat, id, { currency = opt.currency, markets = buyer })
  if not q then unpriced[id] = true; return nil end
  if q.converted then converted_from[q.entry.price.currency] = true end
  return q.amount, q
end
-- A value with its 80% range (gpuplan.ranges: lo, hi, or nil) in the
-- value's unit: "38.5 days (33.1-45.0)", "1.21M USD (1.10M-1.62M)"; a
-- range of a job like no published run (novel) ends in "*".
local novel_seen = false
local function mark(novel)
  novel_seen = novel_seen or novel ~= nil
  return novel and "*" or ""
end
-- gpuplan.ranges' text of a result's field (its "*" included), noted.
local function ranged(res, field, fmt)
  mark(res.range and res.range.novel)
  return ranges.text(res, field, fmt, opt.currency)
end
local function money(x, lo, hi, novel)
  if not x then return "-" end
  -- below 10, two significant digits (gp.units.amount_fmt): a small
  -- job's cost read "0 USD"
  local d, f = 1, gp.units.amount_fmt(x, 0)
  if x >= 1e6 then d, f = 1e6, "%.2fM" elseif x >= 1e3 then d, f = 1e3, "%.1fk" end
  local s = string.format(f .. " %s", x / d, opt.currency)
  if not lo then return s end
  return string.format("%s (" .. f .. "-" .. f .. ")%s", s, lo / d, hi / d, mark(novel))
end
local function days(x, lo, hi, novel)
  if not x then return "-" end
  -- the unit by the magnitude, as every command picks it
  -- (gp.units.duration_unit: days, hours, minutes)
  local m, unit = gp.units.duration_unit(x)
  local f = gp.units.amount_fmt(x * m, 1)
  local s = string.format(f .. " %s", x * m, unit)
  if not lo then return s end
  return string.format("%s (" .. f .. "-" .. f .. ")%s", s, lo * m, hi * m, mark(novel))
end
local function why_lost(best, second)
  if not second then return "no other card runs it" end
  local parts = {}
  if best.cost and second.cost then
    parts[#parts + 1] = string.format("%.0f%% more cost", 100 * (second.cost / best.cost - 1))
  end
  if best.time and second.time then
    local r = second.time / best.time
    parts[#parts + 1] = r >= 1 and string.format("%.0f%% longer", 100 * (r - 1))
      or string.format("%.0f%% sooner", 100 * (1 - r))
  end
  if second.note then parts[#parts + 1] = second.note end
  return string.format("%s: %s", second.label, table.concat(parts, ", "))
end
local quick, assumed = {}, {}

-- A training job on each card: its cheapest layout within the deadline,
-- the cards side by side (gp.sweep's per_card) at the buyer's prices
-- (the same rule as price_opt's: gpuplan.prices.buyer); a card without
-- an offer in the buyer's market is left out and named below.
local function train_job(o, cards, counts)
  local priced = {}
  for _, id in ipairs(cards) do
    if price_opt(id) then priced[#priced + 1] = id end
  end
  local per = {}
  if #priced == 0 then return per end
  local a = { gpu = priced, gpus = counts, currency = opt.currency, market = market,
              policy = gp.policy.cheapest { deadline = o.deadline }, top = 1, per_card = true }
  for k, v in pairs(o) do if k ~= "deadline" and k ~= "work" then a[k] = v end end
  local ok, r = pcall(gp.sweep, a)
  for _, c in ipairs(ok and r.per_card or {}) do
    if c.meets then
      per[#per + 1] = { label = string.format("%d x %s", c.gpus, c.gpu), layout = c.layout,
                        time = c.days, cost = c.cost, days_lo = c.days_lo, days_hi = c.days_hi,
                        cost_lo = c.cost_lo, cost_hi = c.cost_hi,
                        time_text = days(c.days, c.days_lo, c.days_hi, c.range and c.range.novel),
                        cost_text = money(c.cost, c.cost_lo, c.cost_hi, c.range and c.range.novel) }
    end
  end
  table.sort(per, function(x, y) return (x.cost or math.huge) < (y.cost or math.huge) end)
  return per
end

local function add(scenario, work, per, key, extra)
  local best, second = per[1], per[2]
  quick[#quick + 1] = {
    scenario = scenario, work = work,
    best = best and best.label or "nothing fits within the deadline",
    layout = best and best.layout or "-",
    time = best and (best.time_text or days(best.time)) or "-",
    cost = best and (best.cost_text or money(best.cost)) or "-",
    runner = best and why_lost(best, second) or "-",
    -- json: the figures behind the time and cost cells, as numbers with
    -- their 80% range (the cells are text: "4.1 h (3.8-4.6)"); days for a
    -- job that runs to an end, cost in the currency or per 1M output tokens
    days = best and not best.per_mtok and best.time or nil,
    days_lo = best and best.days_lo, days_hi = best and best.days_hi,
    cost_amount = best and best.cost, cost_lo = best and best.cost_lo,
    cost_hi = best and best.cost_hi,
    cost_unit = best and best.cost and (best.per_mtok and (opt.currency .. "/1M output tokens")
                                        or opt.currency) or nil,
  }
  if extra then assumed[#assumed + 1] = scenario .. ": " .. extra end
end

local TRAIN_CARDS = { "a100-sxm-80gb", "a800-sxm-80gb", "h100-sxm", "h800-sxm", "h20",
                      "h200-sxm", "b200" }
-- (A) 7B multimodal: Qwen2-VL-7B, four 448px images per sequence.
local a_sft = train_job({ model = "qwen2-vl-7b", method = "full", seq = 8192, images = 4,
                          tokens = 2e9, deadline = "3d", zero = { 1, 3 }, cp_max = 1, pp_max = 1 },
                        TRAIN_CARDS, "8..64")
add("A 7B multimodal SFT, 8k", "2B tokens in 3 days", a_sft, "cost",
    "Qwen2-VL-7B full fine-tune, 4 images of 256 tokens per 8k sequence, vision tower frozen, AdamW")
local a_lora = train_job({ model = "qwen2-vl-7b", method = "lora", seq = 32768, images = 8,
                           tokens = 1e9, deadline = "3d", zero = { 1 }, cp_max = 4, pp_max = 1 },
                         TRAIN_CARDS, "8..32")
add("A 7B multimodal LoRA, 32k", "1B tokens in 3 days", a_lora, "cost",
    "Qwen2-VL-7B LoRA rank 8 at 32k tokens with 8 images, context parallel up to 4")
-- (B) 70B full fine-tune at 32k.
-- A 32k full fine-tune split over TP, PP and CP runs on Megatron (NeMo /
-- Megatron-Bridge), as the assumption line says: the stack is stated, not
-- left to the fine-tuning default (transformers' eager modules).
local b_ft = train_job({ model = "llama3.1-70b", method = "full", stack = "megatron",
                         seq = 32768, tokens = 2e9,
                         deadline = "7d", zero = { 1 }, cp_max = 8, pp_max = 8,
                         micro_batch = { 1 }, global_batch = 64 },
                       TRAIN_CARDS, "32..256")
add("B 70B full fine-tune, 32k", "2B tokens in 7 days", b_ft, "cost",
    "Llama-3.1-70B, 64 sequences of 32k a step, Megatron distributed optimizer, TP/PP/CP searched")
-- (D) 405B pre-training at 32k.
local d_pt = train_job({ model = "llama3.1-405b", method = "pretrain", seq = 32768, tokens = 1e12,
                         deadline = "90d", zero = { 1 }, cp_max = 8, pp_max = 16, vpp_max = 1,
                         micro_batch = { 1 }, recompute = { "selective", "full" } },
                       { "a800-sxm-80gb", "h100-sxm", "h800-sxm", "h200-sxm", "b200" },
                       "2048..8192")
add("D 405B pre-training, 32k", "1T tokens in 90 days", d_pt, "cost",
    "Llama-3.1-405B at 32k context (a long-context stage), about 4M tokens a step, bf16")

-- (C) GRPO: a 7B policy with its reference, 256 prompts x 8 responses, 200
-- steps; colocated on 16 GPUs or split into rollout and training pools.
do
  local per = {}
  for _, id in ipairs { "a100-sxm-80gb", "h100-sxm", "h800-sxm", "h20", "h200-sxm", "b200" } do
    local p = price_opt(id)
    local best
    for _, colo in ipairs(p and { true, false } or {}) do
      local ok, r = pcall(gp.rl, { model = "qwen2.5-7b", gpu = id, gpus = 16, prompts = 256,
        group = 8, prompt_len = 512, response_len = 1536, response_max = 4096, steps = 200,
        zero = 3, recompute = "full", colocated = colo, rollout_gpus = not colo and "auto" or nil,
        price = p, currency = opt.currency })
      if ok and r.fits and (not best or (r.cost or math.huge) < (best.cost or math.huge)) then
        best = { label = string.format("16 x %s", id),
                 layout = colo and "colocated" or string.format("rollout %d + train %d",
                   r.pools.rollout.gpus, r.pools.train.gpus),
                 time = r.hours / 24, cost = r.cost,
                 days_lo = r.hours_lo and r.hours_lo / 24, days_hi = r.hours_hi and r.hours_hi / 24,
                 cost_lo = r.cost_lo, cost_hi = r.cost_hi,
                 time_text = days(r.hours / 24, r.hours_lo and r.hours_lo / 24,
                                  r.hours_hi and r.hours_hi / 24, r.range and r.range.novel),
                 cost_text = money(r.cost, r.cost_lo, r.cost_hi, r.range and r.range.novel) }
      end
    end
    if best then per[#per + 1] = best end
  end
  table.sort(per, function(x, y) return (x.cost or math.huge) < (y.cost or math.huge) end)
  add("C GRPO 7B, actor + reference", "200 steps of 256 x 8 samples", per, "cost",
      "Qwen2.5-7B GRPO, responses a clipped exponential of mean 1536 and limit 4096, vLLM rollout")
end

-- (E) 70B inference: one card against several, one user and 32 users.
do
  local per = {}
  local configs = {
    { "h200-sxm", 1, "fp8" }, { "b200", 1, "fp8" }, { "h100-sxm", 2, "fp8" },
    { "h20", 1, "fp8" }, { "a100-sxm-80gb", 2, "int4" }, { "h800-sxm", 2, "fp8" },
    { "rtx-4090", 4, "int4" },
  }
  for _, cfg in ipairs(configs) do
    local id, n, w = cfg[1], cfg[2], cfg[3]
    local p = price_opt(id)
    local ok1, one = pcall(gp.infer, { model = "llama3.1-70b", gpu = id, gpus = n, tp = n,
      weights = w, batch = 1, input = 2048, output = 512 })
    local ok2, many = pcall(gp.infer, { model = "llama3.1-70b", gpu = id, gpus = n, tp = n,
      weights = w, concurrency = 32, input = 2048, output = 512,
      price = p and { amount = p, currency = opt.currency }, currency = opt.currency })
    if p and ok1 and ok2 and one.fits and many.fits and many.cost_per_mtok then
      per[#per + 1] = { label = string.format("%d x %s %s", n, id, w),
                        layout = n > 1 and ("TP" .. n) or "one card",
                        time_text = string.format("%.0f tok/s a user alone, %.0f at 32",
                          one.stream_tokens_per_s, many.stream_tokens_per_s),
                        cost = many.cost_per_mtok, cost_lo = many.cost_per_mtok_lo,
                        cost_hi = many.cost_per_mtok_hi, per_mtok = true,
                        cost_text = string.format("%s / 1M tokens",
                          ranged(many, "cost_per_mtok", "%.2f")),
                        note = string.format("%.0f tok/s a user at 32", many.stream_tokens_per_s) }
    end
  end
  table.sort(per, function(x, y) return x.cost < y.cost end)
  add("E 70B inference", "32 users, 2048 in / 512 out", per, "cost",
      "Llama-3.1-70B; cost per million output tokens at 32 concurrent users")
end

-- (F) High-concurrency MoE serving: DeepSeek-V3 at 100k output tokens/s.
do
  local per = {}
  for _, id in ipairs { "h20", "h800-sxm", "h200-sxm", "b200" } do
    local p = price_opt(id)
    local ok, r = pcall(gp.infer_plan, { model = "deepseek-v3", gpu = id, weights = "fp8",
      input = 4096, output = 1536, target = 1e5, itl_max = "50ms",
      price = p and { amount = p, currency = opt.currency } })
    if p and ok and r.cost_per_mtok then
      per[#per + 1] = { label = string.format("%d x %s", r.gpus, id),
                        layout = r.disagg and string.format("decode %d x %s + prefill %d x %s",
                          r.decode_gpus, (r.layout:match("^[^,]+")), r.prefill_gpus,
                          (r.prefill_layout:match("^[^,]+"))) or r.layout,
                        time_text = string.format("%.0f tok/s, ITL %.0f ms", r.tokens_per_s,
                          r.itl_s * 1e3),
                        cost = r.cost_per_mtok, cost_lo = r.cost_per_mtok_lo,
                        cost_hi = r.cost_per_mtok_hi, per_mtok = true,
                        cost_text = string.format("%s / 1M tokens",
                          ranged(r, "cost_per_mtok", "%.3f")),
                        note = string.format("%d GPUs", r.gpus) }
    end
  end
  table.sort(per, function(x, y) return x.cost < y.cost end)
  add("F DeepSeek-V3 serving", "100k tok/s, ITL <= 50 ms", per, "cost",
      "4096 in / 1536 out, fp8, expert parallel with DP attention searched, pools split or not")
end

section("Which card for which job (the cheapest that meets the deadline; every cell computed)",
        quick, {
  { key = "scenario" }, { key = "work", label = "the work" },
  { key = "best", label = "recommended" }, { key = "layout" },
  { key = "time", label = "time" }, { key = "cost" },
  { key = "runner", label = "runner-up: what it loses" },
  table.unpack(opt.format == "json" and {
    { key = "days", label = "days" }, { key = "days_lo", label = "days, 80% range low" },
    { key = "days_hi", label = "days, 80% range high" },
    { key = "cost_amount", label = "cost, in cost_unit" },
    { key = "cost_lo", label = "cost, 80% range low" }, { key = "cost_hi", label = "cost, 80% range high" },
    { key = "cost_unit", label = "cost_unit" } } or {}),
})
if opt.format == "text" or opt.format == "markdown" then
  for _, a in ipairs(assumed) do io.write("  ", a, "\n") end
  io.write("  (lo-hi): the 80% range, where published runs like it landed against the "
    .. "prediction (docs/validation.md)", novel_seen and "; *: no published run like it, "
    .. "the range of all of its kind" or "", "\n")
  local names = {}
  for id in pairs(unpriced) do names[#names + 1] = id end
  table.sort(names)
  local mk = {}
  for m in pairs(buyer) do mk[#mk + 1] = m end
  table.sort(mk)
  io.write(string.format("  prices: the cheapest offer of each card in the %s market%s, in %s%s\n",
    table.concat(mk, "/"), #mk > 1 and "s" or "", opt.currency,
    #names > 0 and ("; no offer there for " .. table.concat(names, ", ") ..
      (buyer.cn and "" or " (China-market cards: --currency CNY)")) or ""))
  io.write("\n")
end

-- 3. Does it fit on one card? ---------------------------------------------
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

-- 4. How fast the cards of one node talk ----------------------------------
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

doc:finish()
if opt.format == "text" then
  io.write("Each number comes from a model you can inspect: gpuplan plan, train, rl, infer, fit, comm.\n")
end
return 0
