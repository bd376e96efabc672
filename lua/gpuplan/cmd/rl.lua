-- gpuplan rl MODEL --algo grpo|ppo --gpu ID --gpus N [...]: one RL step --
-- the phases, where the GPUs wait, memory per phase, throughput and cost.
local rl = require "gpuplan.rl"
local memory = require "gpuplan.memory"
local report = require "gpuplan.report"
local units = require "gpuplan.units"
local cli = require "gpuplan.cli"
local ranges = require "gpuplan.ranges"
local options = require "gpuplan.options"

local C = {
  summary = "one GRPO/PPO step: rollout, forwards, update, weight sync; idle GPUs, memory, cost",
  usage = options.usage_of("rl", "usage: gpuplan rl MODEL --gpu ID --gpus N [--algo grpo|ppo] [options]", [[
  Prints each phase's seconds, share of the step, the seconds its pool
  waits after it (separate pools), and the memory per GPU of the state it
  runs in; the rollout's batch, tail and decode speed, and what the
  engine's host work and the sampling with log-probabilities add to it;
  samples/s, tokens/s, cost per step and per 1k prompts.]]),
  -- The options are declared once, in gpuplan.options.
  options = options.spec("rl"),
  hint = options.cli_hint("rl"),
}

local function pct(x) return string.format("%.1f%%", 100 * x) end

-- The table's rows: each phase that runs, then the step.
-- csv: the cells a spreadsheet computes with, as train's CSV has them
-- (gpuplan.cmd.train): the share a fraction of the step, the step's 80%
-- range as seconds_lo and seconds_hi (they were "32.2%" and "22.536-80.313").
local function phase_rows(r, noroll, csv)
  local rows = {}
  local function share(x) return csv and x or pct(x) end
  -- A rollout that does not fit has no time: say so in its row.
  for _, ph in ipairs(r.phases) do
    if noroll and ph.name == "rollout" then
      rows[#rows + 1] = { phase = ph.name, pool = ph.pool, gpus = ph.gpus, share = "",
                          idle = "does not fit", mem_gib = ph.mem_gib }
    elseif ph.seconds > 0 or ph.idle > 0 then
      rows[#rows + 1] = { phase = ph.name, pool = ph.pool, gpus = ph.gpus, seconds = ph.seconds,
                          share = ph.share and share(ph.share) or "",
                          idle = ph.idle > 0 and string.format("%.2f", ph.idle) or "",
                          mem_gib = ph.mem_gib }
    end
  end
  for _, row in ipairs(rows) do row.range, row.lo, row.hi = "", "", "" end
  rows[#rows + 1] = { phase = "step", pool = "", gpus = r.gpus, seconds = r.step_s,
                      share = r.step_s and share(1) or "", idle = noroll and "no rollout" or "",
                      mem_gib = r.peak_memory / units.GiB,
                      range = r.step_s_lo and string.format("%.3f-%.3f", r.step_s_lo, r.step_s_hi)
                        or "", lo = r.step_s_lo or "", hi = r.step_s_hi or "" }
  return rows
end

-- The table's title: the job, its placement and layouts, its batch.
local function title_of(r, o)
  local placement = r.colocated and "colocated" or string.format(
    "rollout %d + training %d GPUs, staleness %d%s", r.rollout_gpus, r.train_gpus, r.staleness,
    r.refit_drain and " (each refit draining the engines)" or "")
  -- an MoE actor's expert grid (ep, and etp where it folds apart from tp)
  -- and an expert-parallel engine, where they differ from the default
  local experts = (r.ep or 1) > 1 and string.format(", ep %d%s", r.ep,
    r.etp ~= r.tp and string.format(", etp %d", r.etp) or "") or ""
  local engine_ep = (r.rollout_ep or 1) > 1 and string.format(" ep %d%s", r.rollout_ep,
    r.rollout_dp_attention and ", DP attention" or "") or ""
  return string.format("%s %s on %d x %s, %s (train tp %d, pp %d, dp %d, %s%s, %s; "
    .. "rollout tp %d%s%s, %d engine%s): %d prompt%s x %d = %d samples%s, prompt %d + response %g "
    .. "(%s%s)",
    r.model, r.algo:upper(), r.gpus, r.gpu, placement, r.tp, r.pp, r.dp,
    (r.ulysses or 1) > 1 and ("ulysses " .. r.ulysses) or ("cp " .. r.cp), experts,
    memory.sharding_words(o.fsdp, o.grad_sync, r.zero, r.hsdp, o.zero_group),
    r.rollout_tp, r.rollout_pp > 1 and string.format(" pp %d", r.rollout_pp) or "", engine_ep,
    r.rollout.engines, r.rollout.engines == 1 and "" or "s", r.prompts, r.prompts == 1 and "" or "s",
    r.group, r.samples,
    r.generated > r.samples and string.format(" (%d generated: dynamic sampling keeps %g)",
      r.generated, r.filter_keep) or "", r.prompt_len,
    r.response_len, r.response_dist,
    r.response_dist == "fixed" and "" or r.response_min and string.format(" %g-%g", r.response_min,
      r.response_max) or (", max " .. r.response_max
      .. ((r.response_clip or 0) > 0 and string.format(", %.3g%% cut there", 100 * r.response_clip)
        or "")))
end

-- The lines under the table (text and markdown): the rollout, the
-- throughput, the training passes, the pools, memory, cost, the run,
-- warnings, ranges and the defaults assumed; iff: "if it fit" when not.
local function write_lines(r, noroll, iff)
  local ro = r.rollout
  if not noroll then io.write(string.format("rollout%s: %d engine%s x %d samples (%s), prefill %.2f s%s, decode %.2f s "
    .. "over %.0f steps (mean batch %.1f); tail %.2f s after 90%% of the samples finished, "
    .. "longest response %.0f tokens; decode step %.1f ms at the start, %.1f ms %s; "
    .. "of the decode, the engine's host work %.2f s%s, sampling with log-probabilities "
    .. "%.2f s%s\n",
    iff, ro.engines, ro.engines == 1 and "" or "s", ro.samples,
    -- the static engines (hybrid, hf, vLLM fed micro-batches) all have a
    -- generation_batch; vLLM's continuous batching has none
    r.generation_batch and string.format("static batches of %d, each run to its "
      .. "longest", ro.batch)
    -- (queued: the scheduler's simulation runs the samples in at most
    -- 512 groups of n / 512 each (engine/rollout.c sched_sim), so its
    -- peak batch is a multiple of that share, not a whole count: "%d"
    -- raised on 64 prompts x a group of 500)
    or ro.queued and (ro.preempted > 0 and string.format("at most %.0f at once, %.0f preempted "
      .. "and re-prefilled in %.2f s", ro.batch, ro.preempted, ro.recompute)
      or string.format("%.0f at a time, refilled", ro.batch)) or "all at once",
    ro.prefill, (ro.prefill_stall or 1) > 1 and string.format(" (DP attention: the prompts "
      .. "admitted while it decodes take %.2fx their own, every rank waiting for each rank's)",
      ro.prefill_stall) or "", ro.decode, ro.steps, ro.mean_batch, ro.tail, ro.longest, ro.itl_first * 1e3,
    -- fixed lengths: no tail, every response runs the last step
    ro.itl_last * 1e3, r.response_dist == "fixed" and "at the end" or "in the tail", ro.host, (r.async_scheduling and " (overlapped)" or "")
      .. ((r.engine_xhost_step or 0) > 0 and string.format(", %.2f ms a step of it the "
        .. "executor's across hosts", r.engine_xhost_step * 1e3) or ""), ro.sampler,
    -- the hybrid engine's own decode terms (gp.rl's hybrid_qkv_merge:
    -- GPU time a decode step, here over the engine's steps)
    ((r.hybrid_qkv_merge or 0) > 0 and string.format(", q, k and v re-fused a layer (DeepSpeed's "
      .. "_merge_qkv under ZeRO-3) %.2f s", r.hybrid_qkv_merge * ro.steps) or "")
    .. (ro.post > 0 and string.format("; then the framework's handling of its tokens %.2f s",
      ro.post) or "")))
  io.write(string.format("throughput%s: %s, %s, %.0f per GPU, %.0f generated tokens/s\n", iff,
    ranges.text(r, "samples_per_s", "%.2f", "samples/s"),
    ranges.text(r, "tokens_per_s", "%.0f", "tokens/s"), r.tokens_per_s_gpu,
    r.gen_tokens_per_s)) end
  io.write(string.format("training%s: %d optimizer step%s of %.2f s (MFU %s), forward passes "
    .. "%.2f s each (MFU %s)%s\n", iff, r.opt_steps, r.opt_steps == 1 and "" or "s",
    r.update.step_s, pct(r.update.mfu), r.forward.step_s, pct(r.forward.mfu),
    (r.loss_host > 0 and string.format("; the loss one sequence at a time %.2f s",
      r.loss_host) or "") .. ((r.pipe_update or 1) > 1 and string.format("; micro-batches "
      .. "at random lengths stretch the pipeline x%.2f (update), x%.2f (forwards)",
      r.pipe_update, r.pipe_forward) or "")))
  if (r.ipc_transfers or 0) > 0 then
    local ws = 0
    for _, p in ipairs(r.phases) do
      if p.name == "weight_sync" then ws = p.seconds end
    end
    io.write(string.format("weight sync%s: %.2f s, the model streamed through a CUDA-IPC buffer "
      .. "in %d hand-offs\n", iff, ws, r.ipc_transfers))
  end
  if not r.colocated and not noroll then
    local pr, pt = r.pools.rollout, r.pools.train
    -- "rollout 1 GPUs busy" on a 1 + 1 split: a pool's count as the run
    -- line and the title say theirs
    io.write(string.format("pools: rollout %d GPU%s busy %.2f s, idle %.2f s (%s); training "
      .. "%d GPU%s busy %.2f s, idle %.2f s (%s)\n", pr.gpus, pr.gpus == 1 and "" or "s",
      pr.busy, pr.idle, pct(pr.idle / r.step_s), pt.gpus, pt.gpus == 1 and "" or "s", pt.busy,
      pt.idle, pct(pt.idle / r.step_s)))
  end
  io.write(string.format("memory: peak %.1f GiB of %.1f GiB per GPU; %s\n",
    r.peak_memory / units.GiB, r.capacity / units.GiB,
    r.fits and "fits: yes" or ("fits: no (" .. tostring(r.why) .. ")")))
  if r.cost_step then
    io.write(string.format("cost%s: %s per step, %s per 1k prompts at %s %s/GPU-h\n", iff,
      ranges.text(r, "cost_step", units.amount_fmt(r.cost_step, 3), r.currency),
      ranges.text(r, "cost_1k_prompts", units.amount_fmt(r.cost_1k_prompts, 2), r.currency),
      units.fmt_amount(r.price, 2), r.currency))
  end
  if r.hours then
    io.write(string.format("run%s: %.0f step%s in %s on %d GPU%s%s\n", iff, r.steps,
      r.steps == 1 and "" or "s",
      ranges.duration_text(r, "hours", 24), r.gpus,
      r.gpus == 1 and "" or "s",
      r.cost and ("; cost " .. ranges.text(r, "cost", units.amount_fmt(r.cost, 0), r.currency))
        or ""))
  end
  if #r.update.warnings > 0 then
    io.write("warnings: ", table.concat(r.update.warnings, ", "), "\n")
  end
  local note = r.step_s_lo and ranges.note(r)
  if note then io.write("ranges: ", note, "\n") end
  if #r.defaults > 0 then io.write("defaults: ", options.cli_defaults("rl", r.defaults), "\n") end
end

function C.run(opts, args)
  if #args ~= 1 then error(cli.usage("rl: expected one MODEL id"), 0) end
  options.gpu_of_system(opts)
  if not opts.gpu then error(cli.usage("rl: --gpu ID is required"), 0) end
  -- A card list, as plan and infer take: one RL step runs on one card, so
  -- the answer is a run a card (or a Lua loop over gp.rl), said here in
  -- the command line's words (gp.rl's refusal names its Lua keys).
  if opts.gpu:find(",", 1, true) then
    local first = opts.gpu:match("^([^,]*)")
    error(cli.usage(string.format("rl: --gpu takes one card, not a list (got '%s'): run rl once "
      .. "per card (--gpu %s ..., then the next) and compare their step, hours and cost, or "
      .. "loop over the cards in Lua with gp.rl{gpu = ID, ...} (docs/rl.md, \"Comparing cards\")",
      require("gpuplan.units").oneline(opts.gpu), first ~= "" and first or "ID")), 0)
  end
  local o = options.lua_args("rl", opts, { model = args[1] })
  local bad = rl.group_problem(opts.algo or "grpo", opts.group, "--algo")
  if bad then error(cli.usage("rl: " .. bad), 0) end
  if o.rollout_gpus and o.rollout_gpus ~= "auto" then
    local n = require("gpuplan.args").decimal_int(o.rollout_gpus)
    if not n then
      error(cli.usage("rl: --rollout-gpus expects a number of GPUs or 'auto', got '"
        .. o.rollout_gpus .. "'"), 0)
    end
    o.rollout_gpus = n
  end
  if o.rollout_gpus ~= nil and o.colocated == nil then o.colocated = false end
  local ok, r = pcall(rl.rl, o)
  if not ok then error(cli.clean(r), 0) end
  local format = opts.format or "text"
  if format == "json" then
    io.write(report.json(r), "\n")
    return 0
  end
  -- A step that does not fit: the verdict first.  A rollout that cannot
  -- run leaves the step without a time, so no step time, throughput or
  -- cost is shown; otherwise each is labelled as what it would be if it fit.
  local text = format == "text" or format == "markdown"
  local noroll = not r.rollout_fits
  local iff = report.if_fit(r.fits)
  if text and not r.fits then
    io.write(report.does_not_fit(r.why, not noroll and "if" or nil))
  end
  local csv = format == "csv"
  local rows = phase_rows(r, noroll, csv)
  local title = title_of(r, o)
  local columns = {
    { key = "phase", label = "phase" },
    { key = "pool", label = "pool" },
    { key = "gpus", label = "GPUs", align = "right" },
    { key = "seconds", label = "seconds", fmt = "%.3f" },
    { key = "share", label = "share", align = "right", fmt = csv and "%.4f" or nil },
    { key = "idle", label = "idle (s)", align = "right" },
    { key = "mem_gib", label = "memory GiB", fmt = "%.1f" },
  }
  if r.range then report.range_columns(columns, csv, "%.3f") end
  if format == "csv" then
    -- a step without its rollout has no time or cost (as text shows none)
    report.csv_totals(rows, columns, r, noroll and { "fits", "rollout_fits" } or { "fits", "step_s",
      "tokens_per_s", "cost_step", "cost_1k_prompts", "hours", "cost", "price", "currency" })
    -- idle is the JSON's seconds (docs/output.md: a CSV column is named
    -- as its JSON key, and holds its values): the words text puts there
    -- for a rollout that cannot run ("does not fit", "no rollout") leave
    -- it empty, as seconds is, and fits and rollout_fits say why.
    if noroll then
      for _, row in ipairs(rows) do
        if type(row.idle) == "string" and not tonumber(row.idle) then row.idle = "" end
      end
    end
  end
  report.print(rows, { format = format, title = title, columns = columns })
  if text then write_lines(r, noroll, iff) end
  -- --rollout-gpus auto searches the splits of separate pools only: the
  -- one colocated pool (this command without --rollout-gpus) is priced
  -- beside it and said where it is faster, as gp.rl's compare weighs the
  -- two (Qwen2.5-7B ZeRO-3 on 8 H20s: the best split 144.6 s a step).
  if text and o.rollout_gpus == "auto" and r.fits and r.step_s then
    local o2 = {}
    for k, v in pairs(o) do o2[k] = v end
    o2.colocated, o2.rollout_gpus, o2.staleness = true, nil, nil
    local ok2, r2 = pcall(rl.rl, o2)
    if ok2 and r2.fits and r2.step_s and r2.step_s < r.step_s then
      io.write(string.format("colocated instead: %.3f s a step, %.2fx faster than this split's "
        .. "%.3f s (--rollout-gpus auto searches separate pools only; without --rollout-gpus "
        .. "the rollout and training share all %d GPUs)\n", r2.step_s, r.step_s / r2.step_s,
        r.step_s, r2.gpus or r.gpus))
    end
  end
  -- A step that does not fit: the ZeRO stages above the one priced (the
  -- stack's framework's default, or the one given), each priced, the
  -- smallest that fits named.
  if text and not r.fits then
    local tries = {}
    for z = (r.zero or o.zero or 0) + 1, 3 do
      tries[#tries + 1] = report.variant("--zero " .. z, o, function(o2) o2.zero = z end,
        function(o2)
          local r2 = rl.rl(o2)
          return r2.fits, string.format("peak %.1f GiB per GPU", r2.peak_memory / units.GiB)
        end)
    end
    local h = report.fit_hints(tries, 1)
    if h then io.write(h, "\n") end
  end
  return 0
end

return options.command(C)
