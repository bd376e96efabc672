#!/usr/bin/env gpuplan
-- A grid sweep: cards x GPU counts x every layout of a pre-training run,
-- and the cost-vs-time Pareto front -- the layouts no other beats on both
-- time and money.  Everything off the front is dominated: some layout is
-- at least as fast and at least as cheap.
--
--   gpuplan run scripts/grid_sweep.lua [--model llama3-8b] [--tokens 1e12]
--       [--gpus 64..1024] [--gpu a100-sxm-80gb,h100-sxm,h200-sxm,b200]
--       [--svg front.svg] [--format markdown]
--
-- Prices: each card's cheapest catalog offer (gp.sweep's defaults say
-- which).  The plot (--svg) shows every fitting layout and the front.
local gp = require "gpuplan"
local sweep = require "gpuplan.sweep"

local opt = gp.options({
  model = { "model id", "llama3-8b" },
  tokens = { "tokens to train on", 1e12 },
  gpus = { "GPU counts: A..B doubling, or a list", "64..1024" },
  -- --gpu, as gpuplan plan names its cards (--gpu A,B,C); --gpus is the
  -- counts, as there (it was --cards, and --gpu h100-sxm said "did you
  -- mean '--gpus'?", the counts)
  gpu = { "the cards, comma-separated", "a100-sxm-80gb,h100-sxm,h200-sxm,b200" },
  svg = { "write the Pareto plot here (empty: none)", "" },
  format = { "output format: text, markdown, csv or json", "text" },
}, arg)
-- gp.options hands the arguments that are no option back in opt[0]: this
-- script takes none, so one is refused, as guide.lua refuses it (grid_sweep's
-- --gpus 64 128 ran 64 alone and dropped the 128 in silence).
if #opt[0] > 0 then
  error(require("gpuplan.cli").usage("grid_sweep: unexpected argument '" .. opt[0][1] .. "' (see --help)"), 0)
end

-- The plot's file is checked before the sweep, as the commands' --svg
-- is (gpuplan.files check_output): a directory that is not there failed
-- only at the write, after the table had been printed, and named no
-- option ("grid_sweep.lua:89: cannot write '/nope/x.svg': ...").
if opt.svg ~= "" then
  local why = require("gpuplan.files").output_problem(opt.svg, "svg")
  if why then
    error(require("gpuplan.cli").fail(string.format("grid_sweep: --svg: cannot write '%s': %s",
      opt.svg, why)), 0)
  end
end

local cards = {}
for c in opt.gpu:gmatch("[^,]+") do cards[#cards + 1] = c end
local job = { model = opt.model, method = "pretrain", tokens = opt.tokens, gpu = cards,
              gpus = opt.gpus, zero = { 0, 1 }, micro_batch = { 1, 2, 4 }, vpp_max = 2 }
local okp, par = pcall(sweep.pareto, job)
-- a refusal of this script's own option names its flag: '--tokens 0',
-- '--model nope' and '--gpu foo' read "scripts/grid_sweep.lua:29:
-- sweep: tokens must be ...", this file's line and gp.sweep's key
if not okp then
  local e = require("gpuplan.cli").clean(par)
  e = e:gsub("^sweep: tokens must", "--tokens must"):gsub("^sweep: gpus%[(%d+)%]", "value %1 of --gpus"):gsub("^sweep: gpus", "--gpus")
    :gsub("^unknown model", "--model: unknown model"):gsub("^unknown gpu", "--gpu: unknown gpu")
  -- text that is no list of counts ('--gpus abc', '8,') stays a usage
  -- error (exit 2), as plan --gpus's: the mark is the message's, so the
  -- rewritten one is marked again
  local msg = "grid_sweep: " .. e
  error(require("gpuplan.cli").reword(par, msg), 0)
end

local rows = {}
for _, q in ipairs(par.front) do
  rows[#rows + 1] = { gpu = q.gpu, gpus = q.gpus, layout = q.layout, days = q.days,
                      cost = q.cost, mfu = q.mfu }
end
gp.report(rows, { format = opt.format,
  title = string.format("%s, %.3g tokens: the cost-vs-time Pareto front of %d fitting layouts",
                        opt.model, opt.tokens, #par.points),
  columns = { { key = "gpu", label = "GPU" }, { key = "gpus", label = "GPUs" },
              { key = "layout" }, { key = "days", fmt = "%.2f" },
              { key = "cost", label = "cost (USD)", fmt = "%.0f" },
              { key = "mfu", label = "MFU", fmt = "%.3f" } } })

-- No point at all: say per card whether it had no layout (no split of
-- the counts divides and places) or none that fits, rather than an empty
-- table ("--gpus 20" on 8-GPU nodes).
if #par.points == 0 and (opt.format == "text" or opt.format == "markdown") then
  for _, c in ipairs(cards) do
    local st = par.stats and par.stats[c]
    if st and st.layouts == 0 then
      io.write(string.format("%s: no layout: no split of the GPU counts divides the model, the "
        .. "node and the batch and places its groups in the job's nodes%s\n", c,
        (st.unplaced or 0) > 0 and string.format(" (%d splits did not place)", st.unplaced) or ""))
    elseif st then
      io.write(string.format("%s: %d layouts, none fits memory\n", c, st.layouts))
    end
  end
end

if opt.svg ~= "" then
  local svg = require "gpuplan.svg"
  local p = svg.plot { title = opt.model .. ": every fitting layout, time against cost",
                       xlabel = string.format("days to train %.3g tokens", opt.tokens),
                       ylabel = "cost (USD)", xlog = true, ylog = true, legend = "right",
                       note = string.format("%d layouts on %d cards", #par.points, #cards) }
  for i, c in ipairs(cards) do
    local pts = {}
    for _, q in ipairs(par.points) do
      if q.gpu == c then pts[#pts + 1] = { q.days, q.cost } end
    end
    p:points(pts, { label = c, color = svg.palette[(i - 1) % #svg.palette + 1] })
  end
  local front = {}
  for _, q in ipairs(par.front) do front[#front + 1] = { q.days, q.cost, q.gpu .. " x" .. q.gpus } end
  p:line(front, { label = "Pareto front", color = "#222" })
  p:write(opt.svg)
end

if opt.format == "text" and #par.front > 0 then
  local fast, cheap = par.front[1], par.front[#par.front]
  print()
  print(string.format("Fastest: %d x %s (%s), %.2f days for %.0f USD; cheapest: %d x %s (%s), "
                      .. "%.2f days for %.0f USD.", fast.gpus, fast.gpu, fast.layout, fast.days,
                      fast.cost, cheap.gpus, cheap.gpu, cheap.layout, cheap.days, cheap.cost))
  local on = {}
  for _, q in ipairs(par.front) do on[q.gpu] = true end
  local off = {}
  for _, c in ipairs(cards) do if not on[c] then off[#off + 1] = c end end
  if #off > 0 then
    print(string.format("Never on the front: %s -- another card is sooner and cheaper at "
                        .. "every size.", table.concat(off, ", ")))
  end
end
return 0
