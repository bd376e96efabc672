-- gpuplan plan MODEL --gpu A,B --gpus 64..1024 [...]: the layout search.
local sweep = require "gpuplan.sweep"
local train = require "gpuplan.train"
local report = require "gpuplan.report"
local cli = require "gpuplan.cli"
local options = require "gpuplan.options"

local C = {
  summary = "which cards, how many, which layout: the best layouts of a training job",
  usage = options.usage("plan", [[
usage: gpuplan plan MODEL --gpu ID[,ID...] --gpus COUNTS [options]

  The job as for `gpuplan train`; the layout is searched: every TP x PP x
  CP x EP x DP split of each GPU count that divides the model and the
  nodes, ZeRO stage, micro-batch, recompute and interleaving; what does
  not fit is dropped before it is timed.]], [[
  Prints the best layouts with their step, MFU, days and cost, and why the
  runner-up lost (the part of its step that differs most).]]),
  -- The options are declared once, in gpuplan.options.
  options = options.spec("plan"),
  hint = options.cli_hint("plan"),
}

local function ints(s, what)
  local out = {}
  for x in tostring(s):gmatch("[^,]+") do
    local n = math.tointeger(tonumber(x))
    if not n then error(cli.usage("plan: --" .. what .. " expects a list of integers, got '" .. s .. "'"), 0) end
    out[#out + 1] = n
  end
  return out
end

local POLICIES = { fastest = "fastest", cheapest = "cheapest", ["fewest-gpus"] = "fewest_gpus",
                   ["best-per-dollar"] = "best_per_dollar" }

local why = sweep.why

-- "searched: b200 675 layouts, 137 fit and 112 within of 252 timed (423
-- skipped by the bound); ...": what the search did per card.
local function searched(r, head)
  local names = {}
  for g in pairs(r.stats) do names[#names + 1] = g end
  table.sort(names)
  local st = {}
  for _, g in ipairs(names) do
    local x = r.stats[g]
    st[#st + 1] = string.format("%s %d layouts, %d fit and %d within of %d timed (%d skipped by the bound)",
      g, x.layouts, x.fitting, x.within, x.layouts - x.bounded, x.bounded)
  end
  return (head.shards and string.format("searched (%d shards): ", head.shards) or "searched: ")
    .. table.concat(st, "; ")
end

function C.run(opts, args)
  if #args ~= 1 then error(cli.usage("plan: expected one MODEL id"), 0) end
  if not opts.gpu then error(cli.usage("plan: --gpu ID[,ID...] is required"), 0) end
  local o = { model = args[1] }
  -- The job and the search under their Lua names; --policy and
  -- --progress become gp.sweep's below.
  for k, v in pairs(opts) do
    if options.takes("plan", k, "lua") and k ~= "policy" and k ~= "progress" then o[k] = v end
  end
  -- Each id once (gp.sweep drops repeats and bounds the list); an empty
  -- id (--gpu '', --gpu ',', --gpu a,,b) searches nothing: refused.
  local gpus = {}
  for g in (opts.gpu .. ","):gmatch("([^,]*),") do
    if not g:match("%S") then
      error(cli.usage("plan: --gpu expects GPU ids separated by commas, got '" .. opts.gpu .. "'"), 0)
    end
    gpus[#gpus + 1] = g
  end
  o.gpu = gpus
  if opts.top ~= nil and opts.top < 1 then
    error(cli.usage("plan: --top must be at least 1, got " .. opts.top), 0)
  end
  o.gpus = opts.gpus or "8"
  if opts.zero then o.zero = ints(opts.zero, "zero") end
  if opts.micro_batch then o.micro_batch = ints(opts.micro_batch, "micro-batch") end
  if opts.recompute then
    local list = {}
    for x in opts.recompute:gmatch("[^,]+") do list[#list + 1] = x end
    o.recompute = list
  end
  if opts.tokens then
    local n = tonumber(opts.tokens)
    if not n then error(cli.usage("plan: --tokens expects a number like 2e12, got '" .. opts.tokens .. "'"), 0) end
    o.tokens = n
  end
  local pname = opts.policy or ((opts.deadline and not opts.budget) and "cheapest" or "fastest")
  if not POLICIES[pname] then
    error(cli.usage("plan: --policy must be fastest, cheapest, fewest-gpus or best-per-dollar"), 0)
  end
  o.policy = sweep.policy[POLICIES[pname]] { deadline = opts.deadline, budget = opts.budget }
  o.deadline, o.budget = nil, nil
  o.top = math.max(opts.top or 5, 2)
  o.progress = opts.progress ~= false
  local ok, r = pcall(sweep.sweep, o)
  o.progress = nil
  if not ok then error(cli.clean(r), 0) end
  local head = { model = args[1], policy = pname, deadline = opts.deadline,
                 budget = opts.budget }
  if (opts.format or "text") == "json" then
    -- JSON lines, what gpuplan merge reads: one line for the run (the
    -- job, the policy, the counts), then one per result.
    local job = {}
    for k, v in pairs(o) do if type(v) ~= "function" then job[k] = v end end
    io.write(report.json { kind = "plan", model = head.model, policy = pname,
                           deadline = opts.deadline, budget = opts.budget, job = job,
                           shard = opts.shard, stats = r.stats, defaults = r.defaults,
                           top = opts.top or 5 }, "\n")
    for _, c in ipairs(r.results) do
      c.kind = "result"
      io.write(report.json(c), "\n")
    end
    return 0
  end
  local format = opts.format or "text"
  if format == "html" or opts.svg then
    local pics = C.pictures(r, o, head, opts.top or 5)
    if opts.svg then
      local files = require "gpuplan.files"
      for _, k in ipairs { "pareto", "memory", "step" } do
        files.check_output(opts.svg .. "-" .. k .. ".svg")
      end
      for _, k in ipairs { "pareto", "memory", "step" } do
        local okw, err = pcall(pics[k].write, pics[k], opts.svg .. "-" .. k .. ".svg")
        if not okw then error(cli.clean(err), 0) end
      end
    end
    if format == "html" then
      io.write(C.html(r, o, head, opts.top or 5, pics))
      return 0
    end
  end
  C.show(r, o, head, format, opts.top or 5)
  return 0
end

-- The plots of a plan: the Pareto front of every fitting layout, and the
-- memory and the step of the best `top` layouts.
function C.pictures(r, job, head, top)
  local svg = require "gpuplan.svg"
  local units = require "gpuplan.units"
  local pj = {}
  for k, v in pairs(job) do pj[k] = v end
  local okp, par = pcall(sweep.pareto, pj)
  local per_b = not job.tokens
  local pareto = svg.plot { title = head.model .. ": every fitting layout, time against cost",
    xlabel = per_b and "days per 1B tokens" or string.format("days to train %.3g tokens", job.tokens),
    ylabel = "cost (" .. (r.results[1] and r.results[1].currency or "USD") .. ")",
    xlog = true, ylog = true, legend = "right",
    note = okp and string.format("%d layouts; the line joins those no other beats on both",
                                 #par.points) or "no priced layout to plot" }
  if okp then
    local by = {}
    local order = {}
    for _, q in ipairs(par.points) do
      if not by[q.gpu] then by[q.gpu] = {}; order[#order + 1] = q.gpu end
      local t = by[q.gpu]
      t[#t + 1] = { q.days, q.cost }
    end
    for i, g in ipairs(order) do
      pareto:points(by[g], { label = g, color = svg.palette[(i - 1) % #svg.palette + 1] })
    end
    local front = {}
    for _, q in ipairs(par.front) do
      front[#front + 1] = { q.days, q.cost, string.format("%s x%d", q.gpu, q.gpus) }
    end
    pareto:line(front, { label = "Pareto front", color = "#222", width = 1.5 })
    pareto:points(front, { color = "#222", shape = "square" })
    if head.deadline and not per_b and #par.points > 0 then
      local dl = sweep.duration(head.deadline, "deadline") / 86400
      local lo, hi = math.huge, 0
      for _, q in ipairs(par.points) do lo, hi = math.min(lo, q.cost), math.max(hi, q.cost) end
      pareto:line({ { dl, lo }, { dl, hi } }, { label = "deadline " .. head.deadline,
                                               color = "#888", dash = "6,4", width = 1 })
    end
  end
  local cats, mem, step, mnames, snames, budget = {}, {}, {}, {}, {}, nil
  for i = 1, math.min(top, #r.results) do
    local c = r.results[i]
    cats[i] = string.format("#%d %s x%d %s", i, c.gpu, c.gpus, c.layout)
    local ok, tr = pcall(require("gpuplan.train").train, sweep.train_options(job, c))
    if ok then
      budget = budget or (tr.memory.budget and tr.memory.budget / units.GiB)
      for _, comp in ipairs(tr.memory.components or {}) do
        if not mem[comp.name] then mem[comp.name] = {}; mnames[#mnames + 1] = comp.name end
        mem[comp.name][i] = comp.bytes / units.GiB
      end
      for _, p in ipairs(tr.parts) do
        if not step[p.name] then step[p.name] = {}; snames[#snames + 1] = p.name end
        step[p.name][i] = p.seconds
      end
    end
  end
  local function stacks(t, names)
    local out = {}
    for _, n in ipairs(names) do
      local any = false
      for i = 1, #cats do if (t[n][i] or 0) > 0 then any = true end end
      if any then out[#out + 1] = { label = n, values = t[n] } end
    end
    return out
  end
  local memory = svg.bars { title = "Memory per GPU (the most loaded), best layouts",
                            xlabel = "GiB", categories = cats, stacks = stacks(mem, mnames),
                            limit = budget, limit_label = budget and
                              string.format("budget %.1f GiB", budget) or nil }
  local steps = svg.bars { title = "Where one training step goes, best layouts",
                           xlabel = "seconds", categories = cats, stacks = stacks(step, snames) }
  return { pareto = pareto, memory = memory, step = steps }
end

local function esc(s)
  return (tostring(s):gsub("&", "&amp;"):gsub("<", "&lt;"):gsub(">", "&gt;"))
end

-- One self-contained page: the plan's tables and its three plots inline
-- (no script, no network).
function C.html(r, job, head, top, pics)
  local out = {}
  local function w(s) out[#out + 1] = s end
  local title = string.format("%s: best layouts by %s%s%s", head.model, head.policy,
    head.deadline and (", deadline " .. head.deadline) or "",
    head.budget and (", budget " .. head.budget) or "")
  w("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
  w("<title>" .. esc(title) .. "</title>")
  w("<style>body{font-family:DejaVu Sans,Arial,sans-serif;margin:2em;max-width:1000px}"
    .. "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;"
    .. "padding:3px 8px;text-align:right}td.l,th.l{text-align:left}"
    .. "figure{margin:1.5em 0}svg{max-width:100%;height:auto}</style></head><body>")
  w("<h1>" .. esc(title) .. "</h1>")
  local shown = {}
  for i = 1, math.min(top, #r.results) do shown[i] = r.results[i] end
  if #shown == 0 then
    w("<p>No layout fits" .. ((head.deadline or head.budget) and " within the deadline and budget" or "")
      .. ".</p>")
  else
    w("<table><tr><th>#</th><th class=\"l\">gpu</th><th>GPUs</th><th class=\"l\">layout</th>"
      .. "<th>step (s)</th><th>MFU</th><th>days</th><th>cost</th><th>GiB/GPU</th></tr>")
    for i, c in ipairs(shown) do
      w(string.format("<tr><td>%d</td><td class=\"l\">%s</td><td>%d</td><td class=\"l\">%s</td>"
        .. "<td>%.2f</td><td>%.3f</td><td>%s</td><td>%s</td><td>%.1f</td></tr>", i, esc(c.gpu),
        c.gpus, esc(c.layout), c.step_s, c.mfu, c.days and string.format("%.1f", c.days) or "-",
        c.cost and string.format("%.0f %s", c.cost, esc(c.currency or "")) or "-", c.mem_gib))
    end
    w("</table>")
    for i, c in ipairs(shown) do
      for _, f in ipairs(c.flags or {}) do
        w(string.format("<p>flag: #%d %s x %d: %s</p>", i, esc(c.gpu), c.gpus, esc(f)))
      end
    end
    if #r.results >= 2 then
      local wy = sweep.why(r.results[1], r.results[2], job)
      if wy then w("<p>" .. esc(wy) .. "</p>") end
    end
  end
  for _, k in ipairs { "pareto", "memory", "step" } do
    w("<figure>" .. pics[k]:render() .. "</figure>")
  end
  w("<p>" .. esc(searched(r, head)) .. "</p>")
  if #r.defaults > 0 then w("<p>defaults: " .. esc(table.concat(r.defaults, ", ")) .. "</p>") end
  w("</body></html>")
  return table.concat(out, "\n") .. "\n"
end

-- Print a plan: the best layouts, why the runner-up lost, what was
-- searched and the defaults.  r = {results, stats, defaults}; job: the
-- sweep's options; head = {model, policy, deadline, budget}.
function C.show(r, job, head, format, top)
  local shown = {}
  for i = 1, math.min(top, #r.results) do shown[i] = r.results[i] end
  local title = string.format("%s: best layouts by %s%s%s", head.model, head.policy,
    head.deadline and (", deadline " .. head.deadline) or "",
    head.budget and (", budget " .. head.budget) or "")
  if #shown == 0 then
    io.write(title, "\n", "no layout fits",
             (head.deadline or head.budget) and " within the deadline and budget" or "", "\n")
  else
    report.print(shown, { format = format, title = title, columns = {
      { key = "gpu", label = "gpu" }, { key = "gpus", label = "GPUs" },
      { key = "layout", label = "layout" },
      { key = "step_s", label = "step (s)", fmt = "%.2f" },
      { key = "mfu", label = "MFU", fmt = "%.3f" },
      { key = "days", label = "days", fmt = "%.1f" },
      { key = "cost", label = "cost", fmt = "%.0f" },
      -- no currency beside a cost that is not there (a card without an
      -- offer in the buyer's market)
      { key = "currency", label = "", fmt = function(v, row) return row.cost and v or "" end },
      { key = "mem_gib", label = "GiB/GPU", fmt = "%.1f" },
    } })
  end
  if format == "text" or format == "markdown" then
    for i, c in ipairs(shown) do
      for _, f in ipairs(c.flags or {}) do
        io.write(string.format("flag: #%d %s x %d %s: %s\n", i, c.gpu, c.gpus, c.layout, f))
      end
    end
    if #r.results >= 2 then
      local w = why(r.results[1], r.results[2], job)
      if w then io.write(w, "\n") end
    end
    io.write(searched(r, head), "\n")
    if #r.defaults > 0 then io.write("defaults: ", table.concat(r.defaults, ", "), "\n") end
  end
end

return C
