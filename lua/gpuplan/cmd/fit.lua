-- gpuplan fit MODEL --gpu ID [...]: the per-GPU memory breakdown and verdict.
local memory = require "gpuplan.memory"
local report = require "gpuplan.report"
local units = require "gpuplan.units"
local cli = require "gpuplan.cli"
local options = require "gpuplan.options"

local C = {
  summary = "does it fit? per-GPU memory breakdown for training, LoRA/QLoRA, RL and inference",
  usage = options.usage_of("fit", "usage: gpuplan fit MODEL --gpu ID [options]", [[
  Prints each component in GiB and GB, the total, the usable budget, the
  bytes per parameter of the model states before sharding, the host
  memory of offloaded states, warnings (ZeRO that shards nothing, a TP
  group wider than the node), and the verdict "fits: yes/no (short by X
  GiB; largest term Y)".  fp8 on a GPU without fp8 tensor cores is an
  error.]]),
  -- The options are declared once, in gpuplan.options.
  options = options.spec("fit"),
  hint = options.cli_hint("fit"),
}

-- Whether a training job's model states are on the host (ZeRO-Offload's
-- --offload): host bytes beyond the offloaded activations
-- (--checkpoint-offload's checkpoints, activation_offload_layers'), which
-- leave the states, the grads' note and the per-GPU figure as they are.
local function states_offloaded(r)
  if r.method == "infer" or not r.cpu_bytes then return false end
  -- activation offload and ema cpu's moving average are no states' copies
  return r.cpu_bytes - (r.host and r.host.activations or 0) - (r.host and r.host.ema or 0) > 0
end

-- "model states: 20.0 B/param before sharding (weights 2 + grads 6 +
-- master 4 + optimizer 8; recipe deepspeed-bf16)"; for LoRA/QLoRA the
-- states are the adapter's (the frozen base has weights only); Muon's
-- optimizer figure names its AdamW's on the embedding, output and norms.
local function states_line(r)
  local b = r.state_bytes
  local function n(x) return (string.format("%.3f", x):gsub("%.?0+$", "")) end
  local lora = r.method == "lora" or r.method == "qlora"
  local here = ""
  if not lora and r.params and r.params > 0 then
    local sum = 0
    for _, c in ipairs(r.components) do
      if c.name == "weights" or c.name == "grads" or c.name == "master" or
         c.name == "optimizer" then sum = sum + c.bytes end
    end
    here = string.format(", %.2f B/param on this GPU after sharding", sum / r.params)
  end
  -- Offloaded, the states are DeepSpeed's host copies instead (the host
  -- memory line), and the GPU figure after sharding would mislead.
  if states_offloaded(r) then
    here = "; offloaded: see the host memory line"
  end
  return string.format("%s: %.1f B/param before sharding (weights %s + grads %s + " ..
    "master %s + optimizer %s; recipe %s)%s",
    lora and "adapter states" or "model states",
    b.total, n(b.weights), n(b.grads), n(b.master), n(b.optimizer)
      -- Muon: AdamW's states on the embedding, output layer and norms;
      -- LoRA trains only its 2-D adapter matrices, all of them Muon's
      -- (the engine's adapter term prices them at b.optimizer alone)
      .. ((not lora and b.scalar and math.abs(b.scalar - b.optimizer) > 1e-9)
        and " (" .. n(b.scalar) .. " on the embedding, output layer and norms)" or ""),
    r.recipe
      .. (r.grad_phase == "idle" and ", grads as ZeRO holds them between steps"
        or r.grad_phase and r.job and r.job.zero == 0 and ", grads as DeepSpeed's fp16 step holds them"
        or r.grad_phase and ", grads as ZeRO's " .. r.grad_phase .. " holds them" or "")
      .. (r.fsdp2_shard and ", FSDP2's fp32 shard is the master" or ""), here)
end

local function row(name, bytes, note)
  return { component = name, gib = bytes / units.GiB, gb = bytes / units.GB,
           bytes = bytes, note = note or "" }
end

-- The command line checked and turned into gp.memory's options.
local function fit_options(opts, args)
  if #args ~= 1 then error(cli.usage("fit: expected one MODEL id"), 0) end
  options.gpu_of_system(opts)
  if not opts.gpu then error(cli.usage("fit: --gpu ID is required"), 0) end
  if opts.margin and (opts.margin < 0 or opts.margin >= 1) then
    error(cli.usage("fit: --margin must be in [0, 1)"), 0)
  end
  -- Every option of this command that gp.memory takes goes to it under
  -- the same name (memory.memory rejects any it does not know); --format
  -- is ours.
  local o = options.lua_args("fit", opts, { model = args[1] })
  if o.vpp and o.vpp > 1 then o.schedule = "interleaved" end
  -- An option of some methods only (its declaration's `methods`) would
  -- plan a different job in silence with another: say so.  An unknown
  -- method is gp.memory's to name.
  local method = opts.method or options.default("method")
  local nogroup = require("gpuplan.rl").group_problem(method, opts.group, "--method")
  if nogroup then error(cli.usage("fit: " .. nogroup), 0) end
  local bad, methods = options.misplaced(opts, method)
  if bad and memory.METHODS[method] then
    -- a flag given false was typed as its --no- form (--no-flash)
    local flag = (opts[bad] == false and "--no-" or "--") .. bad:gsub("_", "-")
    if method == "infer" and methods:find("pretrain", 1, true) then
      error(cli.usage("fit: " .. flag .. " applies to training, not --method infer"), 0)
    end
    error(cli.usage("fit: " .. flag .. " applies to --method " .. methods:gsub(" ", "|")), 0)
  end
  if opts.offload then
    if opts.method == "infer" then
      -- inference offloads whole layers; any other value read as "off"
      if opts.offload ~= "layers" then
        error(cli.usage("fit: --offload for --method infer is 'layers' (got '"
                        .. opts.offload .. "')"), 0)
      end
      o.offload = true
    else o.offload = opts.offload end
  end
  return o
end

-- The table's rows: each component with its note, the total, the
-- capacity and the budget.
local function component_rows(r, opts)
  local rows = {}
  -- deepspeed-bf16 grads are two buffers; say so where the number is.
  local notes = {
    pipe_buffers = "stage outputs kept per micro-batch in flight (DeepSpeed)",
    optimizer_paged = "paged to host when short (not in torch's allocated peak)",
    vision_activations = "saved by the vision tower and projector",
    grad_reduce = "bf16 copy of the fp32 grads for the DP all-reduce (DeepSpeed)",
  }
  if r.components then
    for _, c in ipairs(r.components) do
      if c.name == "grad_reduce" then
        notes.pipe_buffers = "buffers held through the all-reduce (DeepSpeed)"
      end
    end
  end
  if r.recipe == "deepspeed-bf16" then notes.grads = "bf16 .grad + fp32 accumulation" end
  -- DeepSpeed's ZeRO optimizer at stage 2/3 and stage 1's step (engine/memory_deepspeed.c
  -- mem_ds_zero_phases, where it applies): a 16-bit partition, fp32
  -- only in the step.
  -- ZeRO 0 (DeepSpeed's FP16 optimizers, mem_ds_fp16_step): the whole
  -- 16-bit .grad with their fp32 copies (and FP16_Optimizer's flat one).
  local z0 = r.job and r.job.zero == 0
  if r.grad_phase == "step" and z0 then
    notes.grads = r.grad_bytes > 6 and "the step's 16-bit .grad, fp32 copies and flat fp32 grad"
      or "the step's 16-bit .grad and fp32 .grad"
  elseif r.grad_phase == "step" then
    notes.grads = "the step's fp32 grad + 16-bit partition and its flat copy"
  elseif r.grad_phase == "idle" then
    -- between the step and the next backward (an RL step's rollout and
    -- forwards): stage 3's buffer is made at init and kept
    notes.grads = r.grad_bytes > 0 and "16-bit grad partition, kept between steps"
      or "none between steps (freed after the step)"
  elseif r.grad_phase == "backward" then
    -- stage 2 from a step's second micro-batch on: two partitions
    local two = r.state_bytes and r.state_bytes.grads > r.state_bytes.weights
    notes.grads = two and "two 16-bit grad partitions, accumulating (fp32 only in the step)"
      or "16-bit grad partition (fp32 only in the step)"
  end
  if states_offloaded(r) then
    notes.grads = "DeepSpeed gradient bucket (5e8 elements) + one tensor's .grad"
    notes.param_gather = "layers gathered within the reuse distance (DeepSpeed, 1e9/2)"
    notes.adapter = "adapter weights (their states on the host)"
  end
  -- ZeRO-3 on a model built outside deepspeed.zero.Init (engine/
  -- memory_deepspeed.c mem_ds_whole_init), where that moment is the peak
  if r.whole_init then
    notes.weights = "the whole 16-bit model at init, before ZeRO-3 partitions it"
  end
  for _, c in ipairs(r.components) do rows[#rows + 1] = row(c.name, c.bytes, notes[c.name]) end
  rows[#rows + 1] = row("total", r.total)
  rows[#rows + 1] = row("capacity", r.capacity)
  -- --kv-free-fraction F: the margin is (1 - F) of the memory the model
  -- leaves free (memory_infer.c mem_kv_margin), not a share of the card
  -- the user set: said as the rule it comes from
  local kf = opts and opts.kv_free_fraction
  rows[#rows + 1] = row("budget", r.budget, kf and
    string.format("capacity - %.0f%% margin (%.4g of the memory free after the model, "
      .. "--kv-free-fraction %.4g)", 100 * r.margin / r.capacity, 1 - kf, kf) or
    string.format("capacity - %.0f%% margin", 100 * r.margin / r.capacity))
  return rows
end

-- A training --seq past the model's stated context: the note train and
-- plan print (--method infer refuses one: gp.memory's rule for a
-- decoder), or nil.
local function context_note(r, opts)
  if r.method == "infer" then return nil end
  local m = require("gpuplan").catalog().models[r.model]
  return m and (m.encoder_layers or 0) == 0 and
    require("gpuplan.train").context_note(m, tonumber(opts.seq)) or nil
end

-- How a serving job's GPUs hold the model, as gpuplan infer's title
-- says it ("(tp 1, pp 1)"): fit --method infer --gpus 2 titled "on
-- h100-sxm x2, method infer" and sized a whole replica a GPU, and neither
-- the title nor the defaults said that tp 1 had been assumed.  "" for a
-- training job (its title says dp).
local function replicas(r, o)
  if r.method ~= "infer" then return "" end
  local tp, pp = o.tp or 1, o.pp or 1
  local n = r.gpus // (tp * pp)
  return string.format(" (tp %d, pp %d%s)", tp, pp,
    n > 1 and string.format(", %d replicas", n) or "")
end

-- The result as --format json prints it; context_note as train's JSON
-- carries it (absent where seq is within the model's context).
local function json_result(r, opts)
  return {
    context_note = context_note(r, opts),
    model = r.model, gpu = r.gpu, gpus = r.gpus, method = r.method,
    recipe = r.recipe or report.null, dp = r.dp or report.null,
    stack = r.stack or report.null, state_bytes = r.state_bytes or report.null,
    fits = r.fits, total = r.total, allocated = r.allocated,
    capacity = r.capacity, budget = r.budget, usable = r.usable,
    short_by = r.short_by, largest = r.largest, stage = r.stage,
    stage_layers = r.stage_layers,
    -- the KV's room (inference, as docs/lua.md has them): a training
    -- job's 0 read "no context fits"
    max_seqs = r.method == "infer" and r.max_seqs or nil,
    max_ctx = r.method == "infer" and r.max_ctx or nil, cpu_layers = r.cpu_layers,
    cpu_bytes = r.cpu_bytes, components = r.components, defaults = r.defaults,
    -- the offload against its host (training): what the fullest host
    -- holds, its DRAM (0: none known) and whose
    host_need = r.method ~= "infer" and r.host_need or nil,
    host_memory = r.method ~= "infer" and r.host_memory or nil,
    host_ranks = r.method ~= "infer" and r.host_ranks or nil,
    host_system = r.method ~= "infer" and r.host_system or nil,
    host = r.method ~= "infer" and r.host or nil, warnings = r.warnings,
    rl_state = r.rl_state,
  }
end

-- The lines under the table: capacity facts, the offload, the RL state,
-- warnings, the pipeline stage, the bytes per parameter.
local function detail_lines(r, opts)
  local details = {}
  if r.method == "infer" then
    -- The KV's room is not a context the model takes: Llama 3 8B on an
    -- H100 read "max context at this concurrency: 447980 tokens", which
    -- fit --method infer itself refuses past its 8192 (gp.memory's rule,
    -- a decoder's max_seq).
    local ctx = string.format("%d tokens", r.max_ctx)
    local cat = require("gpuplan").catalog()
    local m = cat.models and cat.models[r.model]
    if m and m.max_seq and (m.encoder_layers or 0) == 0 and r.max_ctx > m.max_seq then
      ctx = string.format("%d tokens, the model's context (the KV would hold %d)", m.max_seq,
        r.max_ctx)
    end
    details[#details + 1] = string.format("max concurrent sequences at this context: %d; " ..
      "max context at this concurrency: %s", r.max_seqs, ctx)
    if r.cpu_layers > 0 then
      details[#details + 1] = string.format("layers offloaded to the CPU: %d (%.1f GiB host)",
        r.cpu_layers, r.cpu_bytes / units.GiB)
    end
  elseif r.cpu_bytes > 0 then
    -- Offloaded training: host bytes per GPU by kind, and the job's sum
    -- (a node needs its GPUs' share).
    details[#details + 1] = memory.host_line(r, r.gpus)
  end
  if r.rl_state then
    details[#details + 1] = string.format("RL step: the %s state needs the most of the "
      .. "step's rollout, forward and update states (gpuplan rl prints each)", r.rl_state)
  end
  local wl = memory.warning_line(r.warnings, r.job)
  if wl then details[#details + 1] = wl end
  -- a training --seq past the model's stated context, as train and plan
  -- say it (--method infer refuses one: gp.memory's rule for a decoder)
  local cn = context_note(r, opts)
  if cn then details[#details + 1] = "note: " .. cn end
  if (opts.pp or 1) > 1 and r.method ~= "infer" then
    -- counted from 1, as "of N" reads (and --stage-layers' "value 4 of"
    -- names its entries): r.stage is 0-based, so the last of 4 was
    -- printed "3 of 4" beside "the output layer"
    details[#details + 1] = string.format("most loaded pipeline stage: %d of %d (%d layers%s)",
      r.stage + 1, opts.pp, r.stage_layers,
      r.stage == 0 and ", the embedding" or r.stage == opts.pp - 1 and ", the output layer" or "")
  end
  if r.state_bytes then details[#details + 1] = states_line(r) end
  return details
end

function C.run(opts, args)
  local o = fit_options(opts, args)
  local ok, r = pcall(memory.memory, o)
  -- gp.memory's refusals open with the command's name, as train's and
  -- infer's do ("fit: --tp 3 ..." where it read "gpuplan: --tp 3 ...").
  if not ok then
    local msg = cli.clean(r):gsub("^memory: ", "")
    if msg:sub(1, 5) ~= "fit: " then msg = "fit: " .. msg end
    error(msg, 0)
  end
  local rows = component_rows(r, opts)
  local format = opts.format or "text"
  if format == "json" then
    io.write(report.json(json_result(r, opts)), "\n")
    return 0
  end
  local details = detail_lines(r, opts)
  local verdict = memory.verdict(r)
  local columns = {
    { key = "component", label = "component" },
    { key = "gib", label = "GiB", fmt = "%.2f" },
    { key = "gb", label = "GB", fmt = "%.2f" },
    { key = "note", label = "note" },
  }
  if format == "csv" then
    -- One table a spreadsheet opens: each component row also carries the
    -- job, the verdict, the lines text prints under the table and the
    -- defaults assumed (the same on every row).
    local job = string.format("%s on %s x%d, method %s%s", r.model, r.gpu, r.gpus, r.method,
      replicas(r, o))
    for _, row in ipairs(rows) do
      row.job, row.fits, row.verdict = job, r.fits and "yes" or "no", verdict
      row.details = table.concat(details, "; ")
      row.defaults = options.cli_defaults("fit", r.defaults)
    end
    columns[#columns + 1] = { key = "fits", label = "fits" }
    columns[#columns + 1] = { key = "verdict", label = "verdict" }
    columns[#columns + 1] = { key = "details", label = "details" }
    columns[#columns + 1] = { key = "defaults", label = "defaults" }
    table.insert(columns, 1, { key = "job", label = "job" })
    report.print(rows, { format = "csv", columns = columns })
    return 0
  end
  -- a zero_group is named as train and rl name it (memory.sharding_words'
  -- "zero 1 in groups of 8 ranks"): "(dp 64)" alone read as one group;
  -- a sequence split as train's title names it, after dp ("dp 2, cp 4",
  -- "dp 2, ulysses 4"): the GPUs are dp x cp of them a stage
  local seqsplit = ((r.ulysses or 1) > 1 and (", ulysses " .. r.ulysses))
    or ((r.cp or 1) > 1 and (", cp " .. r.cp)) or ""
  local title = string.format("%s on %s x%d, method %s%s", r.model, r.gpu, r.gpus,
    r.method, r.method == "infer" and replicas(r, o) or r.dp and string.format(" (dp %d%s%s)", r.dp, seqsplit, o.zero_group and (", "
      .. memory.sharding_words(o.fsdp, o.grad_sync,
        select(2, memory.sharding(o.fsdp, o.grad_sync, o.zero)), nil, o.zero_group))
      or "") or "")
  report.print(rows, { format = format, title = title, columns = columns })
  for _, line in ipairs(details) do io.write(line, "\n") end
  if #r.defaults > 0 then
    io.write("defaults: ", options.cli_defaults("fit", r.defaults), "\n")
  end
  io.write(verdict, "\n")
  -- A training job that does not fit: what would, priced, as `train`
  -- says it (report.training_fit_hints).  `fit`, the command a buyer runs to ask
  -- "does it fit?", said "fits: no" and its largest term and left the
  -- next step to guess (llama3.1-70b qlora on 8 H100: activations 59.4
  -- GiB at recompute none, where --recompute full fits).  Each variant
  -- is run through the same gp.memory; one it refuses is left unsaid.
  local training = { pretrain = true, full = true, lora = true, qlora = true }
  if not r.fits and training[r.method] then
    local h = report.training_fit_hints(o, r.dp or 1, r.job and r.job.zero or o.zero or 0,
      function(o2)
        local r2 = memory.memory(o2)
        return r2.fits, string.format("%.1f GiB per GPU", r2.total / units.GiB)
      end)
    if h then io.write(h, "\n") end
  end
  return 0
end

return options.command(C)
