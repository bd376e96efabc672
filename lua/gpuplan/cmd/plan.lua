-- gpuplan plan MODEL --gpu A,B --gpus 64..1024 [...]: the layout search.
local sweep = require "gpuplan.sweep"
local train = require "gpuplan.train"
local report = require "gpuplan.report"
local cli = require "gpuplan.cli"
local options = require "gpuplan.options"

local C = {
  summary = "which cards, how many, which layout: the best layouts of a training job",
  usage = options.usage_of("plan", [[
usage: gpuplan plan MODEL --gpu ID[,ID...] --gpus COUNTS [options]

  The job as for `gpuplan train`, but pretraining unless --method says
  otherwise (train's default is full): so --stack megatron, the model's
  context up to 8192 and about 4M tokens a step unless given (the
  defaults line says what applied).  The layout is searched: every TP x
  PP x CP x EP x DP split of each GPU count that divides the model and
  the nodes, ZeRO stage, micro-batch, recompute and interleaving; what
  does not fit is dropped before it is timed.]], [[
  Prints the best layouts with their step, MFU, run time and cost, and
  why the runner-up lost (the part of its step that differs most).]]),
  -- The options are declared once, in gpuplan.options.
  options = options.spec("plan"),
  hint = options.cli_hint("plan"),
}

local function ints(s, what)
  local out = {}
  -- every comma-separated entry, an empty one too: '1,,2', '1,' and ',1'
  -- were read as 1,2 and 1, where --gpus '8,' and --gpu 'a,,b' are
  -- refused as lists that cannot be read
  for x in (tostring(s) .. ","):gmatch("([^,]*),") do
    local n = require("gpuplan.args").decimal_int(x)
    if not n then error(cli.usage("plan: --" .. what .. " expects a list of integers, got '" .. s .. "'"), 0) end
    out[#out + 1] = n
  end
  return out
end

-- The entries of a comma-separated list of words, an empty one refused
-- as ints refuses it ('none,,full' and 'tp,' were read as none,full and tp).
local function words(s, what)
  local out = {}
  for x in (tostring(s) .. ","):gmatch("([^,]*),") do
    if x == "" then
      error(cli.usage("plan: --" .. what .. " expects a comma-separated list, got '" .. s .. "'"), 0)
    end
    out[#out + 1] = x
  end
  return out
end

local POLICIES = { fastest = "fastest", cheapest = "cheapest", ["fewest-gpus"] = "fewest_gpus",
                   ["best-per-dollar"] = "best_per_dollar" }

C.POLICIES = POLICIES

local why = sweep.why
local ranges = require "gpuplan.ranges"
local units = require "gpuplan.units"

-- "deadline: ...": when the deadline lies inside the best result's 80%
-- range of days, more than one run in ten like it would miss it (the
-- range's top is the 90th percentile).
function C.deadline_risk(c, deadline)
  if not (deadline and c.days_hi) then return nil end
  local dl = sweep.duration(deadline, "deadline") / 86400
  if c.days_hi <= dl then return nil end
  return string.format("deadline: #1's 80%% range reaches %s days, past the %s deadline: "
    .. "more than one run in ten like it would miss it",
    string.format(units.past_fmt(c.days_hi, dl, 1), c.days_hi), deadline)
end

-- "coin flip: ...": when the best two results' 80% ranges of what the
-- policy ranks by (days, else the throughput; cost) each hold the other's
-- value, and their errors are not one error: they run on different cards
-- or their ranges come from different regimes.  (Two layouts of one card
-- and regime share the model's error, which moves both alike: their
-- order is the model's difference, not a coin flip.)  nil otherwise, and
-- for fewest-gpus, whose ranking is no prediction.  a and b are the
-- table's first two rows (results[1] and [2], the rows the table shows
-- first); with --top 1 the table shows a alone and b is the runner-up
-- the line above names, so b is called that (shown2 false), not a "#2"
-- no row carries.
function C.coin_flip(a, b, policy, shown2)
  local field
  if policy == "cheapest" or policy == "best-per-dollar" then field = "cost"
  elseif policy == "fastest" then field = a.days and "days" or nil end
  if policy ~= "fewest-gpus" and not (field and a[field]) then
    -- Without days or prices: the throughput, which is what a faster
    -- step buys (a.tokens_per_s is per job, whatever its GPU count).
    field = "tokens_per_s"
  end
  if policy == "fewest-gpus" or not ranges.coin_flip(a, b, field) then return nil end
  if a.gpu == b.gpu and a.range and b.range and a.range.regime == b.range.regime then
    return nil
  end
  local fmt = field == "cost" and units.amount_fmt(math.min(a.cost, b.cost), 0) or "%.0f"
  local unit = field == "tokens_per_s" and "tokens/s" or field == "cost" and a.currency or field
  -- days: both in the unit the shorter one's magnitude picks (the one
  -- rule, units.duration_unit), so the two read side by side
  local function said(x)
    if field ~= "days" then return ranges.text(x, field, fmt, unit) end
    local k, u = units.duration_unit(math.min(a.days, b.days))
    return ranges.text(x, field, units.amount_fmt(math.min(a.days, b.days) * k, 1), u, k)
  end
  return string.format("coin flip: #1 and %s lie inside each other's 80%% range of %s (%s "
    .. "against %s): the published runs do not tell them apart",
    shown2 == false and "the runner-up" or "#2", field == "tokens_per_s" and
    "throughput" or field == "days" and "time" or field, said(a), said(b))
end

-- The limits the user set, as the messages name them: "the deadline and
-- budget", "the deadline", "the budget", or nil without either.
local function limits(head)
  return head.deadline and head.budget and "the deadline and budget"
    or head.deadline and "the deadline" or head.budget and "the budget" or nil
end

-- "searched: b200 675 layouts: 252 timed (423 skipped by the bound), 137
-- fit, 112 within the deadline; ...": what the search did per card.
local function searched(r, head)
  local names = {}
  for g in pairs(r.stats) do names[#names + 1] = g end
  table.sort(names)
  local st = {}
  for _, g in ipairs(names) do
    local x = r.stats[g]
    -- "within" is within the deadline and the budget: without either it
    -- was every fitting layout, "5 fit and 5 within of 27 timed", within
    -- nothing the user set.  Said only with one, and of which.
    local limit = limits(head)
    -- With a deadline or budget and nothing kept, every layout the bound
    -- skipped missed the limit (no top list to rank against), its memory
    -- never priced: "0 timed (273 skipped by the bound), 0 fit" read as
    -- "nothing fits", where the same search without --budget fit 2.
    local why = limit and x.bounded > 0 and x.fitting == 0
      and string.format(": at their least time they miss %s, fitting or not", limit) or ""
    st[#st + 1] = string.format("%s %d layouts: %d timed (%d skipped by the bound%s), %d fit%s",
      g, x.layouts, x.layouts - x.bounded, x.bounded, why, x.fitting,
      limit and string.format(", %d within %s", x.within, limit) or "")
      -- splits whose groups need more nodes than the job's (sweep.c
      -- places): said, so that a count short of a whole node is not
      -- "no layout fits" alone
      .. ((x.unplaced or 0) > 0 and string.format(", %d split%s not placed (a group in equal "
        .. "shares a node needs more nodes than the job's)", x.unplaced, x.unplaced == 1 and "" or "s")
        or "")
      -- splits whose dp x cp the zero_group does not divide (sweep.c
      -- ok_cp): skipped as gp.train refuses them, said
      .. ((x.ungrouped or 0) > 0 and string.format(", %d split%s skipped (the zero_group does not "
        .. "divide its dp x cp)", x.ungrouped, x.ungrouped == 1 and "" or "s")
        or "")
      -- MoE splits whose shard groups cut an expert group (sweep.c
      -- cuts_experts): skipped as gp.train refuses them, said
      .. ((x.expert_cut or 0) > 0 and string.format(", %d split%s skipped (a shard group cuts "
        .. "its expert group etp x ep)", x.expert_cut, x.expert_cut == 1 and "" or "s")
        or "")
      -- layouts whose offload overflows a host's DRAM (the engine's
      -- mem_host_fit), refused as memory is and said apart
      .. ((x.past_host or 0) > 0 and string.format(", %d past the host memory", x.past_host)
        or "")
  end
  return (head.shards and string.format("searched (%d shards): ", head.shards) or "searched: ")
    .. table.concat(st, "; ")
end

-- "scaling efficiency against: h100-sxm 32 GPUs (the smallest count that
-- fits: 1134 tokens/s per GPU)": the base of each card shown
-- (gpuplan.sweep.scaling_base), from the results themselves (their
-- scaling_base and efficiency), so that merged shards say the same; nil
-- when none has one.  given: the base was --scaling-base.
local function scaling_line(shown, given)
  local seen, parts = {}, {}
  for _, c in ipairs(shown) do
    if c.scaling_base and c.scaling and c.scaling > 0 and not seen[c.gpu] then
      seen[c.gpu] = true
      parts[#parts + 1] = string.format("%s %d GPU%s (%s: %.0f tokens/s per GPU)", c.gpu,
        c.scaling_base, c.scaling_base == 1 and "" or "s", given and "--scaling-base" or
        "the smallest count that fits", c.tokens_per_s / c.gpus / c.scaling)
    end
  end
  if #parts == 0 then return nil end
  return "scaling efficiency against: " .. table.concat(parts, "; ")
end

function C.run(opts, args)
  if #args ~= 1 then error(cli.usage("plan: expected one MODEL id"), 0) end
  options.gpu_of_system(opts)
  if not opts.gpu then error(cli.usage("plan: --gpu ID[,ID...] is required"), 0) end
  local o = { model = args[1] }
  -- The job and the search under their Lua names; --policy and
  -- --progress become gp.sweep's below.
  options.lua_args("plan", opts, o, { policy = true, progress = true })
  -- Each id once (gp.sweep drops repeats and bounds the list); an empty
  -- id (--gpu '', --gpu ',', --gpu a,,b) searches nothing: refused.
  local gpus = {}
  for g in (opts.gpu .. ","):gmatch("([^,]*),") do
    if not g:match("%S") then
      error(cli.usage("plan: --gpu expects GPU ids separated by commas, got '" .. opts.gpu .. "'"), 0)
    end
    gpus[#gpus + 1] = g
  end
  -- A card named twice is refused by gp.sweep.cards, as a repeated
  -- --gpus count is ("--gpu lists 'h100-sxm' twice"): one rule for lists.
  -- each card once, as gp.sweep searches them (the JSON's job says so)
  local okc, cards = pcall(sweep.cards, gpus)
  if not okc then error(cli.clean(cards), 0) end
  o.gpu = cards
  -- --svg BASE names three files (BASE-pareto.svg ...): a BASE given as
  -- a file name, plan.svg, wrote plan.svg-pareto.svg; its .svg is dropped
  if opts.svg then
    local given = opts.svg
    opts.svg = opts.svg:gsub("%.[sS][vV][gG]$", "")
    -- An empty BASE ("", ".svg") or a directory ("out/") has no name of
    -- its own: the files came out hidden-looking, "-pareto.svg" in the
    -- working directory or "out/-pareto.svg", with nothing said.
    if opts.svg == "" or opts.svg:match("/$") then
      error(cli.usage(string.format("plan: --svg '%s': BASE is the start of the files' names "
        .. "(BASE-pareto.svg ...); give one, e.g. --svg %splan", given,
        opts.svg:match("^(.*/)$") or "")), 0)
    end
    -- So is a directory named without its slash (--svg out, out a
    -- directory): the files went beside it as out-pareto.svg, ... (--svg
    -- /tmp wrote /tmp-pareto.svg at the root), not into it.
    if require("lfs").attributes(opts.svg, "mode") == "directory" then
      error(cli.usage(string.format("plan: --svg '%s' is a directory: BASE is the start of "
        .. "the files' names (BASE-pareto.svg ...); to write them in it, e.g. --svg %s/plan",
        given, opts.svg)), 0)
    end
  end
  o.gpus = opts.gpus or "8"
  if opts.zero then o.zero = ints(opts.zero, "zero") end
  if opts.etp then o.etp = words(opts.etp, "etp") end
  if opts.micro_batch then o.micro_batch = ints(opts.micro_batch, "micro-batch") end
  if opts.recompute then o.recompute = words(opts.recompute, "recompute") end
  -- --tokens: parsed by cli.parse (a number option), bounded by gp.train
  o.tokens = opts.tokens
  -- A deadline or a budget is of the whole run: its size is --tokens,
  -- or the dataset's (--samples x --sample-tokens x --epochs, as train
  -- reads them: gpuplan.train tokens_total, which each layout's job runs).
  local sized = opts.tokens or opts.samples
  if (opts.deadline or opts.budget) and not sized then
    -- The buyer's other question, "what does my budget buy?" (50k USD of
    -- 8B pre-training on B200 or H200), had no next step here: a run's
    -- cost is its tokens times the layout's cost a token, so one priced
    -- run of 1B tokens answers it by a division.
    error(cli.usage(string.format("plan: --%s needs --tokens (the run's size, e.g. 2e12) or "
      .. "--samples N%s", opts.deadline and "deadline" or "budget", opts.budget and
        "; to see how many tokens the budget buys, price 1B tokens (--tokens 1B --per-card, "
          .. "without --budget) and divide the budget by each card's cost" or "")), 0)
  end
  -- Without --policy: a run of --tokens has a cost, and ranked by speed
  -- the search picked the largest count searched every time (64 GPUs for
  -- a 50M-token LoRA, its cost no part of the answer): with --tokens (or
  -- a --deadline) and no --budget, the cheapest run; with a budget, the
  -- fastest within it; without --tokens, no run to cost: the fastest
  -- step.  Said on the defaults line.
  local pname, pwhy = opts.policy, nil
  if not pname then
    if opts.budget then
      pname, pwhy = "fastest", "--budget: the fastest run within it"
    elseif opts.deadline then
      pname, pwhy = "cheapest", "--deadline: the cheapest run that meets it; --policy fastest "
        .. "for the shortest"
    elseif sized then
      pname, pwhy = "cheapest", (opts.tokens and "--tokens" or "--samples")
        .. ": the run's cost at each card's price; --policy "
        .. "fastest for the shortest run, --deadline to bound it"
    else
      pname, pwhy = "fastest", "no --tokens: no run to cost, the fastest step"
    end
  end
  if not POLICIES[pname] then
    error(cli.usage("plan: --policy must be fastest, cheapest, fewest-gpus or best-per-dollar"), 0)
  end
  -- the deadline named as the option (the policy checks it as its own)
  if opts.deadline then sweep.duration(opts.deadline, "deadline") end
  -- and the budget's form (its currency is the search's to convert)
  if opts.budget then sweep.money(opts.budget, "budget", "USD", false) end
  o.policy = sweep.policy[POLICIES[pname]] { deadline = opts.deadline, budget = opts.budget }
  o.deadline, o.budget = nil, nil
  o.top = math.max(opts.top or 5, 2)
  o.progress = opts.progress ~= false
  if opts.per_card and opts.shard then
    error(cli.usage("plan: --per-card does not go with --shard (each card's best needs the "
                    .. "whole search)"), 0)
  end
  -- A shard is gpuplan merge's input (JSON lines): in text, markdown, csv
  -- or html it printed "best layouts by fastest" of a part of the search,
  -- titled as the whole, so its best could be anything but the search's.
  -- (A shard that is no K/N in range is refused by the sweep, naming it;
  -- 1/1 is the whole search.)
  local sk, sn = tostring(opts.shard):match("^(%d+)/(%d+)$")
  if sk and tonumber(sn) > 1 and tonumber(sk) >= 1 and tonumber(sk) <= tonumber(sn)
     and (opts.format or "text") ~= "json" then
    error(cli.usage(string.format("plan: --shard %s writes a part of the search for gpuplan merge: "
      .. "give --format json (its best layouts are not the search's; merge ranks the whole)",
      opts.shard)), 0)
  end
  local ok, r = pcall(sweep.sweep, o)
  o.progress = nil
  if not ok then
    -- A count the user never gave is said to be the default: on a user
    -- system of 4 GPUs without NICs, "plan: 8 GPUs span 2 nodes of 4,
    -- but system ... has no NICs: give --nics N ..." asked for NICs where
    -- --gpus 1,2,4 was the question.
    local msg = cli.clean(r)
    if not opts.gpus then
      msg = msg:gsub("^(%a+: 8 GPUs) (span %d+ nodes of %d+, [^:]*): give ",
        "%1 (the default --gpus) %2: give --gpus within a node, or ", 1)
    end
    error(msg, 0)
  end
  local head = { model = args[1], policy = pname, deadline = opts.deadline,
                 budget = opts.budget }
  if pwhy then r.defaults[#r.defaults + 1] = string.format("policy=%s (%s)", pname, pwhy) end
  -- Without --gpus the search tries 8 GPUs only, which no line said: a
  -- deadline that 16 GPUs meet read "no layout fits within the deadline".
  if not opts.gpus then
    head.one_count = "8 GPUs (the default --gpus; --gpus 8..64 tries more counts)"
    r.defaults[#r.defaults + 1] = "gpus=8 (--gpus 8..64 tries more counts)"
  end
  if opts.per_card then return C.cards(r, o, head, opts) end
  head.hint = C.fit_hints(r, o, opts)
  -- The pictures before the JSON lines: --svg with --format json (a
  -- shard's, or a script's) returned before them, so the files the help
  -- promises were never written and nothing said so.
  local pics
  if opts.format == "html" or opts.svg then
    pics = C.pictures(r, o, head, opts.top or 5)
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
  end
  if (opts.format or "text") == "json" then
    -- JSON lines, what gpuplan merge reads: one line for the run (the
    -- job, the policy, the counts), then one per result.
    local job = {}
    for k, v in pairs(o) do if type(v) ~= "function" then job[k] = v end end
    -- The count --tokens means, not the text typed: "2B" and "2e9" are one
    -- job, and the fingerprint gpuplan merge compares shards by must say
    -- so (the sweep has refused any text that is no count).
    job.tokens = job.tokens and options.total(job.tokens)
    -- so is --samples ("50k" is 50000), read by the same reader
    job.samples = job.samples and options.total(job.samples)
    -- The counts searched, as numbers: --gpus 20 was echoed "gpus":"20",
    -- the text typed (a list "16,20" or "8..64" as its counts, [16,20];
    -- gpuplan merge reads either through sweep.counts).
    local okc, counts = pcall(sweep.counts, job.gpus)
    if okc and type(counts) == "table" and #counts > 0 then
      job.gpus = #counts == 1 and counts[1] or counts
    end
    io.write(report.json { kind = "plan", model = head.model, policy = pname,
                           deadline = opts.deadline, budget = opts.budget, job = job,
                           shard = opts.shard, stats = r.stats, defaults = r.defaults,
                           top = opts.top or 5,
                           fingerprint = sweep.fingerprint(job, require("gpuplan").catalog()) },
             "\n")
    C.write_results(r.results, opts.top or 5)
    return 0
  end
  local format = opts.format or "text"
  if format == "html" then
    io.write(C.html(r, o, head, opts.top or 5, pics))
    return 0
  end
  C.show(r, o, head, format, opts.top or 5)
  return 0
end

-- The result lines of a plan's (or a merge's) JSON: the best `top`, each
-- of kind "result" -- no more than --top, as docs/plan.md says.  The
-- search keeps max(top, 2) (o.top above) for the runner-up line ("why
-- the runner-up lost"), and with --top 1 that second best is written
-- once more as kind "runner_up": merge ranks it with the results, so the
-- merged runner-up line is the whole search's.  --top 1 wrote it as a
-- second "result", two result lines where --top said one.
function C.write_results(results, top)
  for i, c in ipairs(results) do
    if i > top then
      if i == 2 then
        c.kind = "runner_up"
        io.write(report.json(c), "\n")
      end
      break
    end
    c.kind = "result"
    io.write(report.json(c), "\n")
  end
end

local function esc(s)
  return (tostring(s):gsub("&", "&amp;"):gsub("<", "&lt;"):gsub(">", "&gt;"))
end

-- The start of a self-contained page (no script, no network) up to its
-- heading: the plan's page and the per-card page.
local function html_head(title)
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    .. "<title>" .. esc(title) .. "</title>\n"
    .. "<style>body{font-family:DejaVu Sans,Arial,sans-serif;margin:2em;max-width:1000px}"
    .. "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;"
    .. "padding:3px 8px;text-align:right}td.l,th.l{text-align:left}"
    .. "figure{margin:1.5em 0}svg{max-width:100%;height:auto}</style></head><body>\n"
    .. "<h1>" .. esc(title) .. "</h1>"
end

-- MFU as train prints it ("MFU 39.2%"): a percentage in a table, the
-- fraction in a CSV (its number, as train's CSV keeps it); plan's table
-- showed 0.392 beside train's 39.2% of the same run.
local function mfu_pct(v) return string.format("%.1f%%", 100 * v) end

-- The columns of the per-card view (text, markdown, csv).
local function yes_no(v) if v == nil then return "" end return v and "yes" or "no" end
local CARD_COLUMNS = {
  { key = "gpu", label = "card" }, { key = "gpus", label = "GPUs" },
  { key = "layout", label = "layout" },
  { key = "step_s", label = "step (s)", fmt = "%.2f" },
  { key = "mfu", label = "MFU", fmt = "%.3f" },
  { key = "days", label = "days", fmt = function(v) return units.fmt_amount(v, 1) end },
  { key = "cost", label = "cost", fmt = function(v, row)
      return units.fmt_amount(v, 0) .. " " .. (row.currency or "") end },
  { key = "mem_gib", label = "GiB/GPU", fmt = "%.1f" },
  { key = "meets_deadline", label = "deadline", fmt = yes_no, only = "deadline" },
  { key = "meets_budget", label = "budget", fmt = yes_no, only = "budget" },
  { key = "loses", label = "against the winner" },
}
-- The columns for this run: the deadline's and budget's only when given.
-- A CSV's cost is a number and its currency a column of its own, as the
-- plan's CSV has them: "0.42 USD" in one cell was text to a spreadsheet.
local function card_columns(head, format)
  local cols = {}
  for _, c in ipairs(CARD_COLUMNS) do
    if not c.only or head[c.only] then
      if c.key == "cost" and format == "csv" then
        cols[#cols + 1] = { key = "cost", label = "cost",
                            fmt = function(v) return units.fmt_amount(v, 0) end }
        cols[#cols + 1] = { key = "currency", label = "currency",
                            fmt = function(v, row) return row.cost and v or "" end }
      elseif c.key == "mfu" and format ~= "csv" then
        cols[#cols + 1] = { key = "mfu", label = c.label, fmt = mfu_pct }
      elseif c.key == "days" and format ~= "csv" then
        -- the run's time in the unit its magnitude picks (units.
        -- duration_unit); a CSV keeps the number of days its header says
        cols[#cols + 1] = { key = "days", label = "time", fmt = function(v)
          return units.fmt_duration(v) end }
      else
        cols[#cols + 1] = { key = c.key, label = c.label, fmt = c.fmt }
      end
    end
  end
  return cols
end

-- The time-vs-cost chart of the per-card view: each card's best as a
-- point, days (or days per 1B tokens without --tokens) against cost (or
-- cost per 1B tokens); a card without a price or without a fit is named
-- in the note instead.
function C.cards_chart(rows, job, head)
  local svg = require "gpuplan.svg"
  -- job.tokens is the text typed ("2B"), read by options.total (the
  -- sweep has refused any that is no count)
  local per_b = not job.tokens
  local pts, left, cur = {}, {}, nil
  for _, row in ipairs(rows) do
    local days = row.fits and (per_b and 1e9 / row.tokens_per_s / 86400 or row.days)
    local cost = row.fits and row.price and (row.gpus * row.price * (per_b and
      1e9 / row.tokens_per_s / 3600 or row.train_s / 3600))
    if days and cost then
      pts[#pts + 1] = { days, cost, row.gpu .. " x" .. row.gpus, row = row }
      cur = cur or row.currency
    else
      left[#left + 1] = row.gpu .. (row.fits and " (no price)" or " (no fit)")
    end
  end
  -- a free card (price 0) costs 0: a linear cost axis (C.pictures)
  local free = false
  for _, q in ipairs(pts) do if q[2] == 0 then free = true end end
  local p = svg.plot { title = head.model .. ": the best layout of each card, time against cost",
    xlabel = per_b and "days per 1B tokens" or string.format("days to train %.3g tokens", options.total(job.tokens)),
    ylabel = "cost" .. (per_b and " per 1B tokens" or "") .. " (" .. (cur or "USD") .. ")",
    xlog = true, ylog = not free, legend = "right",
    note = (#left > 0 and ("not drawn: " .. table.concat(left, ", ")) or
      "each card's best layout; lower left is better")
      .. (free and "; price 0: a free card's layouts cost 0" or "") }
  for i, q in ipairs(pts) do
    p:points({ q }, { label = q.row.gpu .. (q.row.winner and " (winner)" or ""),
                      color = svg.palette[(i - 1) % #svg.palette + 1],
                      shape = q.row.winner and "square" or "circle" })
  end
  if head.deadline and not per_b and #pts > 0 then
    local dl = sweep.duration(head.deadline, "deadline") / 86400
    local ys = {}
    for _, q in ipairs(pts) do ys[#ys + 1] = q[2] end
    p:line({ { dl, math.min(table.unpack(ys)) / 2 }, { dl, math.max(table.unpack(ys)) * 2 } },
           { label = "deadline " .. head.deadline, color = "#999", dash = "6,3", width = 1 })
  end
  return p
end

-- gpuplan plan --per-card: the best layout of each card side by side
-- (gp.sweep's per_card), as text, markdown, csv, JSON lines (the run, then
-- a line per card) or an HTML page with the time-vs-cost chart.
function C.cards(r, job, head, opts)
  local rows, format = r.per_card, opts.format or "text"
  local title = string.format("%s: the best layout of each card, by %s%s%s", head.model,
    head.policy, head.deadline and (", deadline " .. head.deadline) or "",
    head.budget and (", budget " .. head.budget) or "")
  -- the chart before the JSON lines, which returned without writing it
  -- (as the whole plan's pictures, above)
  local chart = (format == "html" or opts.svg) and C.cards_chart(rows, job, head)
  if opts.svg then
    local path = opts.svg .. "-cards.svg"
    require("gpuplan.files").check_output(path)
    local okw, err = pcall(chart.write, chart, path)
    if not okw then error(cli.clean(err), 0) end
  end
  if format == "json" then
    io.write(report.json { kind = "plan", per_card = true, model = head.model,
                           policy = head.policy, deadline = head.deadline,
                           budget = head.budget, stats = r.stats, defaults = r.defaults }, "\n")
    for _, row in ipairs(rows) do
      row.kind = "card"
      io.write(report.json(row), "\n")
    end
    return 0
  end
  local w = rows[1] and rows[1].winner and rows[1] or nil
  local verdict = w and string.format("winner: %s x %d (%s)", w.gpu, w.gpus, w.layout)
    or (limits(head) and "no card meets " .. limits(head)
        or "no card meets the job: " .. C.none_reason(r, head))
  if format == "html" then
    local out = {}
    local function o(x) out[#out + 1] = x end
    o(html_head(title))
    o("<p>" .. esc(verdict) .. "</p><table><tr>")
    local cols = card_columns(head)
    for _, c in ipairs(cols) do
      o("<th" .. ((c.key == "gpu" or c.key == "layout" or c.key == "loses") and
        " class=\"l\"" or "") .. ">" .. esc(c.label) .. "</th>")
    end
    o("</tr>")
    for _, row in ipairs(rows) do
      o("<tr>")
      for _, c in ipairs(cols) do
        local v = row[c.key]
        local t = v == nil and "-" or type(c.fmt) == "function" and c.fmt(v, row)
          or c.fmt and string.format(c.fmt, v) or tostring(v)
        o("<td" .. ((c.key == "gpu" or c.key == "layout" or c.key == "loses") and
          " class=\"l\"" or "") .. ">" .. esc(t) .. "</td>")
      end
      o("</tr>")
    end
    o("</table>")
    o("<figure>" .. chart:render() .. "</figure>")
    o("<p>" .. esc(searched(r, head)) .. "</p>")
    if #r.defaults > 0 then o("<p>defaults: " .. esc(options.cli_defaults("plan", r.defaults)) .. "</p>") end
    o("</body></html>")
    io.write(table.concat(out, "\n"), "\n")
    return 0
  end
  report.print(rows, { format = format, title = title, columns = card_columns(head, format) })
  if format == "text" or format == "markdown" then
    io.write(verdict, "\n")
    -- How sure the winner is, as the plan without --per-card says it: the
    -- table's "deadline yes" stood beside a 28.2-day winner whose 80%
    -- range reaches 31.3 days, past a 30d deadline, where the same
    -- search ranked whole said that more than one run in ten would miss
    -- it.  Its ranges' source, the coin flip against the next card that
    -- meets the limits (other cards: never one error), and the deadline.
    if w then
      local second
      for i = 2, #rows do
        if rows[i].meets then second = rows[i]; break end
      end
      local flip = second and C.coin_flip(w, second, head.policy, false)
      if flip then
        io.write((flip:gsub("^coin flip: #1 and the runner%-up", "coin flip: the winner and "
          .. second.gpu)), "\n")
      end
      local late = C.deadline_risk(w, head.deadline)
      if late then io.write((late:gsub("^deadline: #1's", "deadline: the winner's")), "\n") end
      -- the winner's figures with their ranges (the table's cells are
      -- the points alone, as the side-by-side table has always read)
      local note = ranges.note(w)
      if note then
        local figs = { "step " .. ranges.text(w, "step_s", "%.2f", "s") }
        if w.days then
          figs[#figs + 1] = ranges.duration_text(w, "days")
        end
        if w.cost then
          figs[#figs + 1] = ranges.text(w, "cost", units.amount_fmt(w.cost, 0), w.currency)
        end
        io.write("ranges (the winner): ", table.concat(figs, ", "), "; ", note, "\n")
      end
    end
    io.write(searched(r, head), "\n")
    if #r.defaults > 0 then io.write("defaults: ", options.cli_defaults("plan", r.defaults), "\n") end
  end
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
  -- A free card (price 0) costs 0, which a log axis has no place for: its
  -- layouts were counted in the note and drawn nowhere.  Then the cost
  -- axis is linear, and the note says why.
  local free = false
  for _, q in ipairs(okp and par.points or {}) do if q.cost == 0 then free = true end end
  -- No layout to draw (none fits, or none meets the deadline and
  -- budget): the three files were written as empty axes, the Pareto
  -- chart's note "0 layouts; the line joins ..." and the bar charts' none,
  -- with nothing saying why.  Each says the text's reason.
  local none = #r.results == 0 and C.none_reason(r, head) or nil
  if none then none = none:sub(1, 1):upper() .. none:sub(2) end
  local pareto = svg.plot { title = head.model .. ": every fitting layout, time against cost",
    xlabel = per_b and "days per 1B tokens" or string.format("days to train %.3g tokens", options.total(job.tokens)),
    ylabel = "cost (" .. (r.results[1] and r.results[1].currency or "USD") .. ")",
    xlog = true, ylog = not free, legend = "right",
    note = (okp and #par.points == 0 and none) or okp and string.format("%d layouts; the line joins those no other beats on both%s",
                                 #par.points, free and "; price 0: a free card's layouts cost 0"
                                 or "") or none or "no priced layout to plot" }
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
    -- The best layouts' 80% ranges as bars: days and cost are both the
    -- step's time times a constant, so both take the step's factors.
    local bars = {}
    for i = 1, math.min(top, #r.results) do
      local c = r.results[i]
      if c.step_s_lo then
        local flo, fhi = c.step_s_lo / c.step_s, c.step_s_hi / c.step_s
        for _, q in ipairs(par.points) do
          if q.gpu == c.gpu and q.gpus == c.gpus and q.layout == c.layout then
            bars[#bars + 1] = { q.days, q.cost, q.days * flo, q.days * fhi, q.cost * flo,
                                q.cost * fhi }
            break
          end
        end
      end
    end
    if #bars > 0 then
      pareto:ranges(bars, { label = string.format("80%% range, best %d", #bars),
                            color = "#555", width = 1 })
    end
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
                            note = none,
                            limit = budget, limit_label = budget and
                              string.format("budget %.1f GiB", budget) or nil }
  local steps = svg.bars { title = "Where one training step goes, best layouts",
                           xlabel = "seconds", categories = cats, stacks = stacks(step, snames),
                           note = none }
  return { pareto = pareto, memory = memory, step = steps }
end

-- One self-contained page: the plan's tables and its three plots inline
-- (no script, no network).
function C.html(r, job, head, top, pics)
  local out = {}
  local function w(s) out[#out + 1] = s end
  local title = string.format("%s: best layouts by %s%s%s", head.model, head.policy,
    head.deadline and (", deadline " .. head.deadline) or "",
    head.budget and (", budget " .. head.budget) or "")
  w(html_head(title))
  local shown = {}
  for i = 1, math.min(top, #r.results) do shown[i] = r.results[i] end
  if #shown == 0 then
    local why = C.none_reason(r, head)
    w("<p>" .. esc(why:sub(1, 1):upper() .. why:sub(2)) .. ".</p>")
  else
    w("<table><tr><th>#</th><th class=\"l\">gpu</th><th>GPUs</th><th class=\"l\">layout</th>"
      .. "<th>step (s)</th><th>MFU</th><th>time</th><th>cost</th><th>GiB/GPU</th></tr>")
    -- Each answer with its 80% range (gpuplan.ranges).
    for i, c in ipairs(shown) do
      w(string.format("<tr><td>%d</td><td class=\"l\">%s</td><td>%d</td><td class=\"l\">%s</td>"
        .. "<td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%.1f</td></tr>", i, esc(c.gpu),
        c.gpus, esc(c.layout), ranges.text(c, "step_s", "%.2f"), esc(mfu_pct(c.mfu)),
        ranges.duration_text(c, "days") or "-",
        c.cost and esc(ranges.text(c, "cost", units.amount_fmt(c.cost, 0), c.currency or ""))
          or "-", c.mem_gib))
    end
    w("</table>")
    local note = ranges.note(shown[1])
    if note then w("<p>ranges (best layout): " .. esc(note) .. "</p>") end
    for i, c in ipairs(shown) do
      for _, f in ipairs(c.flags or {}) do
        w(string.format("<p>flag: #%d %s x %d: %s</p>", i, esc(c.gpu), c.gpus, esc(f)))
      end
    end
    if #r.results >= 2 then
      local wy = sweep.why(r.results[1], r.results[2], job)
      if wy then w("<p>" .. esc(wy) .. "</p>") end
      local flip = C.coin_flip(r.results[1], r.results[2], head.policy, #shown >= 2)
      if flip then w("<p>" .. esc(flip) .. "</p>") end
    end
  end
  for _, k in ipairs { "pareto", "memory", "step" } do
    w("<figure>" .. pics[k]:render() .. "</figure>")
  end
  local sl = scaling_line(r.results, job.scaling_base ~= nil)
  if sl then w("<p>" .. esc(sl) .. "</p>") end
  w("<p>" .. esc(searched(r, head)) .. "</p>")
  if #r.defaults > 0 then w("<p>defaults: " .. esc(options.cli_defaults("plan", r.defaults)) .. "</p>") end
  w("</body></html>")
  return table.concat(out, "\n") .. "\n"
end

-- Why nothing is shown.  With no layout at all (no split of the counts
-- divides the model, the nodes and the global batch, or places in the
-- job's nodes), "no layout fits" would blame memory: it says which.
function C.none_reason(r, head)
  local layouts, unplaced, ungrouped, cut = 0, 0, 0, 0
  for _, x in pairs(r.stats) do
    layouts = layouts + x.layouts
    unplaced = unplaced + (x.unplaced or 0)
    ungrouped = ungrouped + (x.ungrouped or 0)
    cut = cut + (x.expert_cut or 0)
  end
  if layouts == 0 then
    return "no layout: no split of these GPU counts divides the model's heads and layers, "
      .. "the node and the global batch" .. (unplaced > 0 and (" and places each of its groups "
      .. "in equal shares a node within the job's nodes (" .. unplaced .. " split"
      .. (unplaced == 1 and "" or "s") .. " did not)") or "")
      .. (ungrouped > 0 and (" and has a dp x cp that the zero_group divides (" .. ungrouped .. " split" .. (ungrouped == 1 and "" or "s") .. " did not)")
      or "")
      .. (cut > 0 and (" and has shard groups that hold whole expert groups etp x ep (" .. cut
      .. " split" .. (cut == 1 and "" or "s") .. " did not)") or "")
  end
  -- Layouts the GPU would hold whose offload a host cannot: the least
  -- of them said, with the host's DRAM (sweep.c past_host).
  local host
  for _, x in pairs(r.stats) do
    if (x.past_host or 0) > 0 and (not host or x.host_least < host.host_least) then host = x end
  end
  local why = host and string.format(" (%d layout%s past the host memory: the least holds "
    .. "%.1f GiB of offload on one host, which has %.1f GiB)", host.past_host,
    host.past_host == 1 and "" or "s", host.host_least / 2 ^ 30, host.host_memory / 2 ^ 30) or ""
  -- Nothing fits a GPU: how far the nearest layout is (sweep.c
  -- past_gpu), the words train uses for one layout ("needs X GiB per
  -- GPU, short by Y GiB"); the card named where several were searched.
  local fitting, near, cards = 0, nil, 0
  for g, x in pairs(r.stats) do
    cards = cards + 1
    fitting = fitting + (x.fitting or 0)
    if (x.past_gpu or 0) > 0 and (not near or x.gpu_least - x.gpu_budget
                                  < near.gpu_least - near.gpu_budget) then
      near = x
      near.id = g
    end
  end
  if why == "" and fitting == 0 and near then
    why = string.format(" (the nearest layout%s needs %.1f GiB per GPU, short by %.1f GiB)",
      cards > 1 and (", on " .. tostring(near.id) .. ",") or "", near.gpu_least / 2 ^ 30,
      (near.gpu_least - near.gpu_budget) / 2 ^ 30)
  end
  -- plan without --gpus searched one count: the miss names it
  return "no layout" .. (head.one_count and (" of " .. head.one_count) or "") .. " fits" .. why
    -- the limits given, as the searched line names them (a budget alone
    -- read "within the deadline and budget")
    .. (limits(head) and (" within " .. limits(head)
    .. " (--per-card shows each card's best layout and what it misses by)") or "")
end

-- Nothing fits a GPU (memory the miss, not a deadline or budget): what
-- would, each variant searched as this one was -- ZeRO-3 where the stages
-- searched lack it (plan's default is 1), the optimizer on the host where
-- nothing is offloaded, more GPUs (the counts searched doubled, then
-- quadrupled) -- and named with its best layout where it fits (a 70B full
-- fine-tune on 8 H100s: ZeRO-1 holds 158 GiB a GPU).  nil where something
-- fits, a limit is the miss, or the search is a shard (merge ranks it).
function C.fit_hints(r, o, opts)
  if #r.results > 0 or opts.shard or limits({ deadline = opts.deadline, budget = opts.budget }) then
    return nil
  end
  local fitting, layouts = 0, 0
  for _, x in pairs(r.stats) do
    fitting, layouts = fitting + (x.fitting or 0), layouts + (x.layouts or 0)
  end
  if fitting > 0 then return nil end
  -- No layout at all (no split of the counts divides the heads, layers,
  -- node and global batch): the miss is the split, said on the line
  -- before, not memory.  The memory levers were "priced" over no layout
  -- and said not to fit ("none of --zero 3, --offload optimizer, --gpus
  -- 8192, --gpus 16384 fits either (priced)" for 4096 GPUs and a global
  -- batch of 8, where more GPUs only split it worse).
  if layouts == 0 then return nil end
  local function variant(words, change)
    return require("gpuplan.report").variant(words, o, function(o2)
      o2.progress = false
      change(o2)
    end, function(o2)
      local r2 = sweep.sweep(o2)
      -- a variant with no layout to price is no answer either way
      -- (report.fit_hints leaves a raised one out)
      local n = 0
      for _, x in pairs(r2.stats or {}) do n = n + (x.layouts or 0) end
      if n == 0 then error("no layout", 0) end
      local b = r2.results[1]
      return b ~= nil, b and string.format("its best %s x %d %s, %.1f GiB/GPU", b.gpu, b.gpus,
        b.layout, b.mem_gib)
    end)
  end
  local tries = {}
  local zs = o.zero or { 1 }
  local has3, has_sharded = false, false
  for _, z in ipairs(zs) do
    if z == 3 then has3 = true end
    if z >= 1 then has_sharded = true end
  end
  if not has3 and not o.fsdp then
    tries[#tries + 1] = variant("--zero 3", function(x) x.zero = { 3 } end)
  end
  if not o.offload and not o.fsdp and has_sharded then
    tries[#tries + 1] = variant("--offload optimizer", function(x) x.offload = "optimizer" end)
  end
  -- the largest count searched ("8", "8,16", "64..1024"): its double and
  -- its quadruple, one count each
  local most = 0
  for n in tostring(o.gpus):gmatch("%d+") do most = math.max(most, tonumber(n)) end
  for _, k in ipairs { 2, 4 } do
    if most > 0 then
      tries[#tries + 1] = variant("--gpus " .. most * k, function(x) x.gpus = tostring(most * k) end)
    end
  end
  return require("gpuplan.report").fit_hints(tries)
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
  if #shown == 0 and format == "csv" then
    -- A CSV stays a table a spreadsheet opens: its header without rows,
    -- the reason on stderr (it printed the title and the reason as text).
    io.stderr:write("gpuplan: note: plan: ", C.none_reason(r, head), "\n")
    if head.hint then io.stderr:write("gpuplan: note: plan: ", head.hint, "\n") end
  elseif #shown == 0 then
    -- Nothing within a deadline or budget said nothing of how far the
    -- nearest layout is: --per-card shows each card's best and by how
    -- much it misses.
    io.write(title, "\n", C.none_reason(r, head), "\n")
    if head.hint then io.write(head.hint, "\n") end
  end
  if #shown > 0 or format == "csv" then
    -- The 80% ranges (gpuplan.ranges): beside the value in a table, as
    -- columns of their own in a CSV.
    local csv = format == "csv"
    local function ranged(key, label, fmt)
      if csv then
        -- a function gives the format of each value (units.amount_fmt)
        local cf = type(fmt) == "function"
          and function(v) return string.format(fmt(v), v) end or fmt
        return { key = key, label = label, fmt = cf }, { key = key .. "_lo", fmt = cf },
          { key = key .. "_hi", fmt = cf }
      end
      for _, c in ipairs(shown) do
        -- a run's time in the unit its magnitude picks (units.duration_unit),
        -- so the cell carries it and the column is "time"
        c[key .. "_text"] = key == "days" and ranges.duration_text(c, key)
          or ranges.text(c, key, type(fmt) == "function" and fmt(c[key]) or fmt)
      end
      if key == "days" then label = "time" end
      return { key = key .. "_text", label = label, align = "right" }
    end
    local cols = { { key = "gpu", label = "gpu" }, { key = "gpus", label = "GPUs" },
      { key = "layout", label = "layout" } }
    for _, t in ipairs { { ranged("step_s", "step (s)", "%.2f") },
                         { { key = "mfu", label = "MFU", fmt = csv and "%.3f" or mfu_pct } },
                         { ranged("days", "days", function(v) return units.amount_fmt(v, 1) end) },
                         { ranged("cost", "cost", function(v) return units.amount_fmt(v, 0) end) } } do
      for _, col in ipairs(t) do cols[#cols + 1] = col end
    end
    -- no currency beside a cost that is not there (a card without an
    -- offer in the buyer's market)
    -- headed as the CSV heads it: a blank header over "USD" read as a
    -- column left out (text and markdown)
    cols[#cols + 1] = { key = "currency", label = "currency",
                        fmt = function(v, row) return row.cost and v or "" end }
    cols[#cols + 1] = { key = "mem_gib", label = "GiB/GPU", fmt = "%.1f" }
    report.print(shown, { format = format, title = title, columns = cols })
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
      local flip = C.coin_flip(r.results[1], r.results[2], head.policy, #shown >= 2)
      if flip then io.write(flip, "\n") end
    end
    local late = shown[1] and C.deadline_risk(shown[1], head.deadline)
    if late then io.write(late, "\n") end
    local note = shown[1] and ranges.note(shown[1])
    if note then io.write("ranges (best layout): ", note, "\n") end
    local sl = scaling_line(shown, job.scaling_base ~= nil)
    if sl then io.write(sl, "\n") end
    io.write(searched(r, head), "\n")
    -- a --seq past the model's stated context, as gpuplan train says it
    local m = job.model
    if type(m) == "string" then
      local cat = require("gpuplan").catalog()
      m = cat.models and cat.models[m]
    end
    local cn = require("gpuplan.train").context_note(m, tonumber(job.seq))
    if cn then io.write("note: ", cn, "\n") end
    if #r.defaults > 0 then io.write("defaults: ", options.cli_defaults("plan", r.defaults), "\n") end
  end
end

return options.command(C)
