#!/usr/bin/env gpuplan
-- H800 against H100 for a 70B dense model: how much does the cut NVLink
-- (H800: 200 GB/s per direction, H100: 450) cost, and on which layouts?
--
-- The seed guides say: 5-10% when training uses DP and PP with a small TP,
-- 20-35% at TP = 8; and that TP = 4 x PP = 2 with ZeRO-1 often beats TP = 8
-- on H800.  This script prices each layout with gpuplan's training step
-- (gp.train) on 8, 64 and 512 GPUs of each card and says what the numbers
-- support.
--
--   gpuplan run scripts/h800_vs_h100.lua [--model llama3-70b] [--seq 4096]
--                                        [--format markdown]
local gp = require "gpuplan"

local opt = gp.options({
  model = { "model id", "llama3-70b" },
  seq = { "tokens per sequence", 4096 },
  recompute = { "recompute policy (none, selective, full)", "full" },
  global_batch = { "sequences per step", 1024 },
  format = { "output format: text, markdown, csv or json", "text" },
}, arg)
-- gp.options hands the arguments that are no option back in opt[0]: this
-- script takes none, so one is refused, as guide.lua refuses it (grid_sweep's
-- --gpus 64 128 ran 64 alone and dropped the 128 in silence).
if #opt[0] > 0 then
  error(require("gpuplan.cli").usage("h800_vs_h100: unexpected argument '" .. opt[0][1] .. "' (see --help)"), 0)
end

local GPUS = { "h100-sxm", "h800-sxm" }
local COUNTS = { 8, 64, 512 }
local LAYOUTS = {
  { name = "TP8", tp = 8, pp = 1 },
  { name = "TP4 PP2", tp = 4, pp = 2 },
  { name = "TP2 PP4", tp = 2, pp = 4 },
}

local function seconds(r, name)
  for _, p in ipairs(r.parts) do if p.name == name then return p.seconds end end
  return 0
end

local rows, by = {}, {}
for _, n in ipairs(COUNTS) do
  for _, lay in ipairs(LAYOUTS) do
    for _, g in ipairs(GPUS) do
      local dp = n // (lay.tp * lay.pp)
      local ok, r = pcall(gp.train, { model = opt.model, gpu = g, gpus = n, tp = lay.tp,
                           pp = lay.pp, zero = 1, sp = true, seq = opt.seq,
                           recompute = opt.recompute, method = "pretrain",
                           global_batch = opt.global_batch, tokens = 1e9, currency = "USD" })
      -- a refusal of this script's own option names its flag: '--seq 0'
      -- and '--model nope' read "scripts/h800_vs_h100.lua:41: train: seq
      -- must be ...", this file's line and gp.train's key
      if not ok then
        local e = require("gpuplan.cli").clean(r)
        for _, k in ipairs { "seq", "recompute", "global_batch" } do
          e = e:gsub("^train: " .. k .. " must", "--" .. k:gsub("_", "-") .. " must")
        end
        -- a usage refusal stays one (exit 2) once reworded, as grid_sweep's
        local msg = "h800_vs_h100: " .. e:gsub("^unknown model", "--model: unknown model")
        error(require("gpuplan.cli").reword(r, msg), 0)
      end
      local note = {}
      if not r.fits then
        note[#note + 1] = string.format("does not fit: needs %.0f GiB of %.0f", r.memory.total / 2 ^ 30,
          r.memory.capacity / 2 ^ 30)
      end
      for _, w in ipairs(r.warnings) do
        if w == "zero_dp1" then note[#note + 1] = "ZeRO-1 at DP 1 shards nothing" end
      end
      local row = { gpus = n, layout = lay.name, dp = dp, gpu = g, step_s = r.step_s,
                    tp_s = seconds(r, "tp_comm"), tp_share = seconds(r, "tp_comm") / r.step_s,
                    mfu = r.mfu, usd_per_btok = r.cost, fits = r.fits,
                    note = table.concat(note, "; ") }
      rows[#rows + 1] = row
      by[n .. lay.name .. g] = row
    end
  end
end

gp.report(rows, { format = opt.format, title = string.format(
  "%s pretraining, seq %d, global batch %d, %s recompute, ZeRO-1 + SP, bf16",
  opt.model, opt.seq, opt.global_batch, opt.recompute), columns = {
  { key = "gpus", label = "GPUs" }, { key = "layout", label = "layout" },
  { key = "dp", label = "DP" }, { key = "gpu", label = "gpu" },
  { key = "step_s", label = "step (s)", fmt = "%.2f" },
  { key = "tp_s", label = "TP exposed (s)", fmt = "%.2f" },
  { key = "tp_share", label = "TP share", fmt = "%.3f" },
  { key = "mfu", label = "MFU", fmt = "%.3f" },
  { key = "usd_per_btok", label = "USD per 1B tokens*", fmt = "%.0f" },
  { key = "note", label = "note" },
} })

if opt.format ~= "text" and opt.format ~= "markdown" then return end
io.write("* at each card's cheapest catalog price (gp.train's defaults say which offer)\n")

-- The H800 penalty per layout: step time on H800 / on H100 - 1, where
-- the layout fits on both.
io.write("\nH800 step time over H100's, same layout (fitting layouts only):\n")
local small, tp8 = {}, {}
for _, n in ipairs(COUNTS) do
  local parts = {}
  for _, lay in ipairs(LAYOUTS) do
    local a, b = by[n .. lay.name .. "h100-sxm"], by[n .. lay.name .. "h800-sxm"]
    if a.fits and b.fits then
      local pen = b.step_s / a.step_s - 1
      parts[#parts + 1] = string.format("%s +%.1f%%", lay.name, 100 * pen)
      if lay.tp == 8 then tp8[#tp8 + 1] = pen else small[#small + 1] = { pen = pen, tp = lay.tp } end
    else
      parts[#parts + 1] = lay.name .. " does not fit"
    end
  end
  io.write(string.format("  %4d GPUs: %s\n", n, table.concat(parts, ", ")))
end

local function range(list, f)
  local lo, hi = math.huge, -math.huge
  for _, x in ipairs(list) do
    local v = f(x)
    lo, hi = math.min(lo, v), math.max(hi, v)
  end
  return lo, hi
end
-- "14%" when both ends round to the same whole percent, else "26-28%".
local function span(lo, hi)
  local a, b = string.format("%.0f", 100 * lo), string.format("%.0f", 100 * hi)
  return a == b and a .. "%" or a .. "-" .. b .. "%"
end
io.write("\nConclusion:\n")
if #tp8 > 0 then
  local lo, hi = range(tp8, function(x) return x end)
  local inside = lo >= 0.20 and hi <= 0.35
  io.write(string.format("  TP8: H800 is %s slower than H100 -- %s the guides' 20-35%%.\n",
    span(lo, hi), inside and "inside" or (hi < 0.20 and "below" or (lo > 0.35 and "above" or "overlapping"))))
end
for _, tp in ipairs { 4, 2 } do
  local sel = {}
  for _, x in ipairs(small) do if x.tp == tp then sel[#sel + 1] = x end end
  if #sel > 0 then
    local lo, hi = range(sel, function(x) return x.pen end)
    local verdict = hi <= 0.10 and "inside the guides' 5-10% (DP and PP with a small TP)"
      or (lo > 0.10 and "above the guides' 5-10%: TP " .. tp .. " still crosses NVLink every layer")
      or "overlapping the guides' 5-10%"
    io.write(string.format("  TP%d: H800 %s slower -- %s.\n", tp, span(lo, hi), verdict))
  end
end
-- Does TP4 x PP2 beat TP8 on H800?
for _, n in ipairs(COUNTS) do
  local a, b = by[n .. "TP8h800-sxm"], by[n .. "TP4 PP2h800-sxm"]
  if a.fits and b.fits then
    io.write(string.format("  %d H800: TP4 x PP2 takes %.2f s a step against TP8's %.2f s (%s).\n",
      n, b.step_s, a.step_s, b.step_s < a.step_s and "TP4 x PP2 wins, as the guides say"
        or "TP8 wins"))
  end
end
local nofit = {}
for _, lay in ipairs(LAYOUTS) do
  if not by[8 .. lay.name .. "h800-sxm"].fits then nofit[#nofit + 1] = lay.name end
end
if #nofit > 0 then
  io.write(string.format("  On 8 GPUs no layout fits (%s): %s's model states alone need "
    .. "more than one node; ZeRO-1 at DP 1 shards nothing.\n", table.concat(nofit, ", "), opt.model))
end
