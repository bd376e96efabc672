#!/usr/bin/env gpuplan
-- Serving DeepSeek-V3 on H20, H800 and H200 clusters.
--
-- The seed guides' most common large deployment: a DeepSeek-V3/R1-class
-- MoE model on a cluster of H20, H800 or H200, where "running MoE with
-- large-scale expert parallelism" is said to be exactly where H800's cut
-- NVLink hurts.  For 4k-token prompts and 1.5k-token answers this script
-- asks, for each card:
--   1. how many GPUs deliver 100k output tokens/s with every user within
--      an ITL of 50 ms, in which layout (EP size, DP attention, two-batch
--      overlap, prefill/decode pools), and what a million tokens costs;
--   2. the same with MTP speculative decoding (DeepSeek's own module),
--      as SGLang runs it by default -- at most 48 requests an instance
--      while it speculates (serve.lua SPEC_RUNNING) -- and with that cap
--      lifted (--max-running-requests given; here max_batch = 4096);
--   3. how much of H800's gap to H100 (the same chip with 2.25x the NVLink)
--      the dispatch/combine all-to-all explains, EP size by EP size, in the
--      decode and the prefill pool.
-- Every number is gp.infer / gp.infer_plan (engine/serve.h): change the
-- parameters to ask about your own deployment.
--
-- The experts sit where the runtimes put them unless --eplb says an
-- expert-parallel load balancer placed them (DeepSeek's deployment, SGLang's
-- large-EP posts): without it the hottest GPU of a large EP group receives
-- several times the mean routed tokens (TensorRT-LLM tech blog 4).
--
--   gpuplan run scripts/moe_serving.lua [--target 100000] [--itl-max 50]
--       [--input 4096] [--output 1536] [--eplb] [--currency USD] [--format markdown]
local gp = require "gpuplan"
local cat = gp.catalog()

local opt = gp.options({
  target = { "output tokens/s the cluster must deliver", 100000 },
  itl_max = { "inter-token latency bound: ms, or a time with its unit (20ms, 0.05s)", "50" },
  input = { "prompt tokens per request", 4096 },
  output = { "generated tokens per request", 1536 },
  eplb = { "experts placed by EPLB (DeepSeek's deployment); default: the runtimes' none", false },
  -- --gpu, as gpuplan infer and plan name their cards (--gpu A,B,C); it
  -- was --gpus, which every command takes as a GPU count (--gpus 16 read
  -- "unknown gpu '16'")
  gpu = { "cards compared (comma-separated catalog ids)", "h20,h800-sxm,h200-sxm" },
  currency = { "currency of prices", "USD" },
  format = { "output format: text, markdown, csv or json", "text" },
}, arg)
local cli = require "gpuplan.cli"
if #opt[0] > 0 then
  error(cli.usage("moe_serving: unexpected argument '" .. opt[0][1] .. "' (see --help)"), 0)
end
-- --format: gp.options refuses a value gp.report cannot write
-- Each bound named with the value given: one message for all four
-- ("--target, --itl-max must be positive, --input >= 1, --output >= 2")
-- said neither which was wrong nor what it was.
-- --itl-max as gpuplan infer reads it: a number of milliseconds or a time
-- with its unit, in (0, 3600000] ms (an hour, gp.infer_plan's bound);
-- "20ms" was refused as "expects an integer", and 1e9 reached every row
-- as "no layout: infer_plan: itl_max must be ... (got 1000000.0)", in
-- seconds the user never typed, exit 0.
do
  local s = opt.itl_max
  local n = not s:match("^%s*[%+%-]?0[xX]") and tonumber(s)
  if not n then
    local ok, t = gp.units.try(s, "time")
    if not ok then
      error(cli.usage("moe_serving: option '--itl-max' expects a number of milliseconds or a "
        .. "time with its unit, got '" .. s .. "'"), 0)
    end
    n = t * 1e3
  end
  if not (n > 0 and n <= 3.6e6) then
    error(cli.fail("moe_serving: --itl-max must be a number of milliseconds in (0, 3600000] "
      .. "(got " .. s .. ")"), 0)
  end
  opt.itl_max = n
end
for _, b in ipairs { { "target", 0 }, { "input", 1, true }, { "output", 2, true } } do
  local k, lo, incl = b[1], b[2], b[3]
  local v = opt[k]
  if incl and v < lo or not incl and v <= lo then
    error(cli.usage(string.format("moe_serving: --%s must be %s %d (got %s)", k:gsub("_", "-"),
      incl and "at least" or "above", lo, tostring(v))), 0)
  end
end
-- ISO 4217 codes in either case, as gp.prices.buyer reads them
opt.currency = opt.currency:upper()
if opt.currency ~= "USD" and not cat.currencies[opt.currency] then
  error(cli.usage("moe_serving: --currency: no exchange rate for '" .. opt.currency .. "'"), 0)
end

local MODEL = "deepseek-v3"
local base = { model = MODEL, weights = "fp8", input = opt.input, output = opt.output,
               eplb = opt.eplb or nil }
local function with(t)
  local a = {}
  for k, v in pairs(base) do a[k] = v end
  for k, v in pairs(t) do a[k] = v end
  return a
end

local cards = {}
for id in opt.gpu:gmatch("[^,%s]+") do
  -- an unknown id named with the option (it read "moe_serving.lua:67:
  -- unknown gpu 'foo'", this file's line)
  local okg, err = pcall(cat.get, cat, "gpus", id)
  -- (a usage error, exit 2, once reworded too, as infer --gpu's is)
  if not okg then error(cli.reword(err, "moe_serving: --gpu: " .. cli.clean(err)), 0) end
  cards[#cards + 1] = id
end
-- no card: every table came out empty, exit 0
if #cards == 0 then
  error(cli.usage("moe_serving: --gpu names no card (comma-separated catalog ids, e.g. h20,h200-sxm)"), 0)
end

-- Text and markdown: one table per section; csv one table a spreadsheet
-- opens, json one array of sections (gpuplan.report's document).
local doc = require("gpuplan.report").document(opt.format)
local function section(title, rows, columns) doc:add(title, rows, columns) end

-- 1 and 2: the fewest GPUs for the target -------------------------------
local function plans(extra)
  local rows = {}
  for _, id in ipairs(cards) do
    local q = gp.prices.cheapest(cat, id, { currency = opt.currency })
    local row = { gpu = id }
    local ok, p = pcall(gp.infer_plan, with {
      gpu = id, target = opt.target, itl_max = string.format("%.17gms", opt.itl_max), mtp = extra.mtp,
      max_batch = extra.max_batch,
      price = q and { amount = q.amount, currency = opt.currency } })
    if ok then
      row.gpus, row.decode = p.gpus, p.decode_gpus .. " x " .. p.layout
      row.prefill = p.disagg and (p.prefill_gpus .. " x " .. p.prefill_layout) or "colocated"
      -- batch/GPU: gp.infer_plan's batch is a decode replica's (its
      -- instance of tp GPUs), as gp.infer's is; a GPU's is batch_per_gpu
      row.batch, row.tps, row.itl, row.ttft = p.result.batch_per_gpu, p.tokens_per_s, p.itl_s * 1e3,
        p.ttft_s
      row.price = q and q.amount
      row.cost = p.cost_per_mtok
      row.market = q and gp.prices.origin(q)
    else
      row.decode = "no layout: " .. cli.clean(p)
    end
    rows[#rows + 1] = row
  end
  return rows
end

local cols = {
  { key = "gpu", label = "GPU" }, { key = "gpus", label = "GPUs" },
  { key = "decode", label = "decode pool" }, { key = "prefill", label = "prefill pool" },
  { key = "batch", label = "batch/GPU" }, { key = "tps", label = "tok/s", fmt = "%.0f" },
  { key = "itl", label = "ITL ms", fmt = "%.1f" }, { key = "ttft", label = "TTFT s", fmt = "%.2f" },
  { key = "price", label = opt.currency .. "/GPU-h", fmt = "%.2f" },
  { key = "cost", label = opt.currency .. "/Mtok", fmt = "%.3f" },
  { key = "market", label = "price from", align = "left" },
}
local title = string.format("%s, %d in / %d out: GPUs for %.0f output tok/s at ITL <= %g ms, %s",
                            MODEL, opt.input, opt.output, opt.target, opt.itl_max,
                            opt.eplb and "experts placed by EPLB" or "no EPLB")
local plain = plans {}
section(title, plain, cols)
local mtp = plans { mtp = 1 }
section(title .. ", with MTP (1 draft, acceptance 0.85), SGLang's default 48 running requests",
        mtp, cols)
-- max_batch stands for a --max-running-requests of the deployment's own:
-- 4096 sequences an attention group, more than any layout's KV holds
local mtp_open = plans { mtp = 1, max_batch = 4096 }
section(title .. ", with MTP (1 draft, acceptance 0.85), running requests not capped",
        mtp_open, cols)

-- 3: H800 against H100, the same chip with a cut NVLink --------------------
-- Each pool alone (the other given its own GPUs), DP attention, at EP sizes
-- whose experts fit 80 GB: decode at the largest batch within the ITL
-- bound on each card, prefill at the 16K-token chunk.  Then H800 at
-- H100's batch: the chips are the same, so the step differs only in what
-- crosses NVLink -- TP collectives (none under DP attention) and the
-- all-to-all not hidden by the other micro-batch (with the SMs the
-- prefill kernels hold while they overlap).
local gap_rows = {}
local function pool(gpu, ep, phase, batch)
  local a = with { gpu = gpu, gpus = 2 * ep, ep = ep, dp_attention = true, disagg = true,
                   prefill_gpus = ep }
  if phase == "decode" then
    a.batch, a.itl_max = batch, not batch and string.format("%.17gms", opt.itl_max) or nil
  else
    a.batch = 1
  end
  local ok, r = pcall(gp.infer, a)
  if ok and r.fits then return r end
  return nil
end
local function comm_of(r, phase)
  local s = phase == "decode" and r.decode or r.prefill
  return (s.a2a_exposed + s.sm_loss + s.tp_comm) * 1e3, s.time * 1e3, s
end
for _, case in ipairs { { "decode", 16 }, { "decode", 32 }, { "decode", 72 }, { "decode", 144 },
                        { "prefill", 16 }, { "prefill", 32 } } do
  local phase, ep = case[1], case[2]
  local a, b = pool("h100-sxm", ep, phase), pool("h800-sxm", ep, phase)
  if a and b then
    local key = phase == "decode" and "decode_per_gpu" or "prefill_per_gpu"
    local same = phase == "decode" and pool("h800-sxm", ep, phase, a.batch) or b
    local row = { phase = phase, ep = ep, h100 = a[key], h800 = b[key],
                  gap = 1 - b[key] / a[key] }
    local _, _, sa = comm_of(a, phase)
    row.link = sa.remote_bytes / math.max(sa.dispatch_bytes, 1)
    if same then
      local ca, ta = comm_of(a, phase)
      local cb, tb = comm_of(same, phase)
      row.dstep = tb - ta
      row.comm = row.dstep > 1e-9 and (cb - ca) / row.dstep or nil
    end
    gap_rows[#gap_rows + 1] = row
  end
end
local function pct(v) return string.format("%.1f%%", v * 100) end
section(string.format("H800 vs H100 (the same chip, NVLink 200 vs 450 GB/s per direction), "
                      .. "DP attention, ITL <= %g ms", opt.itl_max), gap_rows, {
  { key = "phase" }, { key = "ep", label = "EP" },
  { key = "link", label = "dispatch over the NICs", fmt = pct },
  { key = "h100", label = "H100 tok/s/GPU", fmt = "%.0f" },
  { key = "h800", label = "H800 tok/s/GPU", fmt = "%.0f" },
  { key = "gap", label = "H800 gap", fmt = pct },
  { key = "dstep", label = "step +ms, same batch", fmt = "%.2f" },
  { key = "comm", label = "of it all-to-all", fmt = function(v) return string.format("%.0f%%", v * 100) end },
})

-- Conclusions, from the numbers above ---------------------------------------
local lines = {}
local function best(rows, key)
  local b
  for _, r in ipairs(rows) do
    if r[key] and (not b or r[key] < b[key]) then b = r end
  end
  return b
end
local fewest, cheapest = best(plain, "gpus"), best(plain, "cost")
if fewest then
  local parts = {}
  for _, r in ipairs(plain) do
    if r.gpus then parts[#parts + 1] = string.format("%s %d", r.gpu, r.gpus) end
  end
  lines[#lines + 1] = string.format("Fewest GPUs for %.0f tok/s: %s (%s).", opt.target,
                                    fewest.gpu, table.concat(parts, ", "))
end
if cheapest then
  lines[#lines + 1] = string.format("Cheapest per million output tokens: %s at %.3f %s.",
                                    cheapest.gpu, cheapest.cost, opt.currency)
end
local m_fewest = best(mtp, "gpus")
if fewest and m_fewest then
  local saved = {}
  for i, r in ipairs(plain) do
    if r.gpus and mtp[i].gpus then
      saved[#saved + 1] = string.format("%s %d -> %d%s", r.gpu, r.gpus, mtp[i].gpus,
        mtp_open[i].gpus and string.format(" (%d uncapped)", mtp_open[i].gpus) or "")
    end
  end
  lines[#lines + 1] = "MTP (1 draft), SGLang's 48 running requests: " .. table.concat(saved, ", ")
    .. "."
end
if #gap_rows > 0 then
  local hi
  for _, r in ipairs(gap_rows) do
    if not hi or r.gap > hi.gap then hi = r end
  end
  if hi.gap < 0.005 then
    lines[#lines + 1] = string.format("H800 matches H100 within 0.5%% at every EP size shown: "
      .. "the all-to-all is bound by the NICs (%.0f%%+ of a dispatch crosses them) or "
      .. "hidden by two-batch overlap, so the cut NVLink costs nothing here.",
      100 * (function() local m = 1 for _, r in ipairs(gap_rows) do m = math.min(m, r.link) end
        return m end)())
  else
    local zero = {}
    for _, r in ipairs(gap_rows) do
      if r.gap < 0.005 then zero[#zero + 1] = r.phase .. " EP" .. r.ep end
    end
    lines[#lines + 1] = string.format("H800's largest gap to H100 is %s at %s EP%d (%s of its "
      .. "dispatch bytes cross the NICs)%s; %s.", pct(hi.gap), hi.phase, hi.ep, pct(hi.link),
      hi.comm and string.format(", and the all-to-all explains %.0f%% of the slower step",
        hi.comm * 100) or "",
      #zero > 0 and ("none at " .. table.concat(zero, ", ") .. ", where the NICs bind or "
        .. "the overlap hides it") or "every layout shown pays some")
  end
end
local ok100, p100 = pcall(gp.infer_plan, with { gpu = "h100-sxm", target = opt.target,
                                               itl_max = string.format("%.17gms", opt.itl_max) })
for _, r in ipairs(plain) do
  if ok100 and r.gpu == "h800-sxm" and r.gpus then
    lines[#lines + 1] = string.format("For the target, H100 needs %d GPUs and H800 %d%s.",
      p100.gpus, r.gpus, p100.gpus == r.gpus and " (the same)" or "")
  end
end
if opt.format == "json" or opt.format == "csv" then
  doc:finish { conclusions = lines }
else
  io.write("\n")
  for _, l in ipairs(lines) do io.write(l, "\n") end
end
return 0
