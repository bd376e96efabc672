-- gpuplan plan MODEL --gpu A,B --gpus 64..1024 [...]: the layout search.
local sweep = require "gpuplan.sweep"
local train = require "gpuplan.train"
local report = require "gpuplan.report"
local cli = require "gpuplan.cli"
local fit = require "gpuplan.cmd.fit"

local C = {
  summary = "which cards, how many, which layout: the best layouts of a training job",
  usage = [[
usage: gpuplan plan MODEL --gpu ID[,ID...] --gpus COUNTS [options]

  The job as for `gpuplan train` (--method, --seq, --precision, --stack,
  --global-batch, --tokens, --price, --currency, --system ...); the layout
  is searched: every TP x PP x CP x EP x DP split of each GPU count that
  divides the model and the nodes, ZeRO stage, micro-batch, recompute and
  interleaving; what does not fit is dropped before it is timed.

  --gpu A,B,...      the cards to compare
  --gpus COUNTS      64..1024 (64, 128, ... doubling), or 8,16,32
  --tp-max N --pp-max N --cp-max N --ep-max N --vpp-max N
                     bounds of the split (defaults 8, 8, 1, 1, 1)
  --zero LIST        ZeRO stages to try (default 1), e.g. 0,1,2,3
  --micro-batch LIST sizes to try (default 1,2,4)
  --recompute LIST   policies to try (default none,selective,full)
  --policy P         fastest|cheapest|fewest-gpus|best-per-dollar
                     (default fastest; cheapest with a deadline)
  --deadline D       train --tokens within D (30d, 12h, 2w)
  --budget B         spend at most B ($50k, 100kCNY)
  --top N            how many layouts to print (default 5)
  --shard K/N        this shard of a deterministic split (for gpuplan merge)
  --format F         text|markdown|csv|json (json: one result per line)

  Prints the best layouts with their step, MFU, days and cost, and why the
  runner-up lost (the part of its step that differs most).]],
  options = {},
}
for k, v in pairs(fit.options) do C.options[k] = v end
for _, k in ipairs { "tp", "pp", "cp", "ep", "vpp", "zero", "batch", "recompute", "kv", "ctx",
                     "block", "prompts", "group", "prompt_len", "response_len", "reward_model",
                     "ref_model", "colocated", "rollout_weights", "rollout_tp", "gpus", "gpu" } do
  C.options[k] = nil
end
for k, v in pairs {
  gpu = "string", gpus = "string", global_batch = "int", system = "string", nics = "int",
  nic_fabric = "string", gpus_per_node = "int", overlap_grad_reduce = "flag",
  overlap_param_gather = "flag", tp_overlap = "flag", overlap_p2p = "flag",
  ep_overlap = "flag", causal_flops = "flag", tokens = "string", price = "string",
  currency = "string", attn_kernel = "string", grad_reduce = "string",
  tp_max = "int", pp_max = "int", cp_max = "int", ep_max = "int", vpp_max = "int",
  zero = "string", micro_batch = "string", recompute = "string", policy = "string",
  deadline = "string", budget = "string", top = "int", shard = "string",
} do C.options[k] = v end

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

function C.run(opts, args)
  if #args ~= 1 then error(cli.usage("plan: expected one MODEL id"), 0) end
  if not opts.gpu then error(cli.usage("plan: --gpu ID[,ID...] is required"), 0) end
  local o = { model = args[1] }
  for k, v in pairs(opts) do
    if k ~= "format" and k ~= "policy" then o[k] = v end
  end
  local gpus = {}
  for g in opts.gpu:gmatch("[^,]+") do gpus[#gpus + 1] = g end
  o.gpu = gpus
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
  local ok, r = pcall(sweep.sweep, o)
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
  C.show(r, o, head, opts.format or "text", opts.top or 5)
  return 0
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
      { key = "currency", label = "" },
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
    local names = {}
    for g in pairs(r.stats) do names[#names + 1] = g end
    table.sort(names)
    local st = {}
    for _, g in ipairs(names) do
      local s = r.stats[g]
      st[#st + 1] = string.format("%s %d layouts, %d fit and %d within of %d timed (%d skipped by the bound)",
                                  g, s.layouts, s.fitting, s.within, s.layouts - s.bounded, s.bounded)
    end
    io.write(head.shards and string.format("searched (%d shards): ", head.shards) or "searched: ",
             table.concat(st, "; "), "\n")
    if #r.defaults > 0 then io.write("defaults: ", table.concat(r.defaults, ", "), "\n") end
  end
end

return C
