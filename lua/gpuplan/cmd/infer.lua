-- gpuplan infer: serving estimate for one model on one GPU type.
local infer = require "gpuplan.infer"
local report = require "gpuplan.report"
local ranges = require "gpuplan.ranges"
local options = require "gpuplan.options"

-- The operators of a decode step (--ops), after a blank line.
local function print_ops(r, opts, title)
  io.stdout:write("\n")
  report.print(r.ops, { format = opts.format, title = title,
      columns = { { key = "name", label = "op" }, { key = "count", label = "x", fmt = "%.0f" },
                  { key = "time", label = "us each", fmt = function(v) return string.format("%.2f", v * 1e6) end },
                  { key = "total", label = "ms/step", fmt = function(v) return string.format("%.3f", v * 1e3) end },
                  { key = "bound", label = "bound" },
                  { key = "intensity", label = "FLOP/B", fmt = "%.1f" } } })
end

-- The end of a quantity/value report: the ranges and the defaults
-- assumed as its last rows, the table printed, and with --ops the
-- operators of the decode step ops_title names.
local function finish(rows, r, opts, title, ops_title)
  if r.range then rows[#rows + 1] = { k = "ranges", v = ranges.note(r) } end
  if #r.defaults > 0 then rows[#rows + 1] = { k = "assumed", v = options.cli_defaults("infer", r.defaults) } end
  report.print(rows, { format = opts.format, title = title,
                       columns = { { key = "k", label = "quantity" }, { key = "v", label = "value" } } })
  if opts.ops then print_ops(r, opts, ops_title) end
  return 0
end
local cli = require "gpuplan.cli"

local C = {
  summary = "LLM serving on the roofline: TTFT, inter-token latency, tokens/s, $/Mtok",
  usage = options.usage_of("infer", "usage: gpuplan infer MODEL --gpu ID [options]", [[
  Times in ms, bandwidth GB/s = 10^9 B/s, memory GB = 10^9 bytes.  ITL is
  one decode step at the batch and the mean context (input + output/2).
  tokens/s counts output tokens of the whole system in steady state
  (prefill included).]]),
  -- The options are declared once, in gpuplan.options.
  options = options.spec("infer"),
  hint = options.cli_hint("infer"),
}

local clean = cli.clean

-- gp.infer's arguments: every option gp.infer takes, under its name; a
-- price of digits is a number; --itl-max and --ttft-max (milliseconds)
-- are set by the caller where they apply.
local function args_of(opts, model)
  local a = options.lua_args("infer", opts, { model = model }, { itl_max = true, ttft_max = true })
  if a.price and tonumber(a.price) then a.price = tonumber(a.price) end
  if a.offload == false then a.offload = nil end
  return a
end

-- The MoE serving options given (the MoE serving model answers).
local function moe_opts(a)
  return require("gpuplan.serve").wants(a)
end

local function gb(v) return string.format("%.2f GB", v / 1e9) end

-- What a decode step's figures read at --output 1 (gp.infer leaves them
-- out: the one token is the prefill's).
local NO_DECODE = "- (output 1: no decode step)"

-- The MoE serving answer: layout, memory by part, steps, pools.

-- A MoE batch per GPU: whole sequences, or a GPU's share of its TP
-- instance's (one stream on TP8: 0.125).
local function per_gpu_batch(b)
  return math.tointeger(b) and string.format("%d", b) or string.format("%.4g", b)
end
-- The prompt tokens found in the prefix cache (prefix_hit), whose
-- prefill the figures skip, as the title says them (one model's replicas
-- and the MoE serving model alike); "" without prefix_hit.
local function cached_words(r)
  if not r.cached_tokens then return "" end
  return string.format(" (%.4g of the prompt from the prefix cache)", r.cached_tokens)
end

-- A MoE deployment that does not fit: what would, each priced as this
-- one (gp.infer with the one option changed): 8-bit weights where they
-- are wider (DeepSeek-V3 bf16 on 16 H20s: 85.8 GB of weights a GPU), an
-- 8-bit KV where it is wider, and twice the GPUs (with --ep, the experts
-- over all of them: --gpus 16 --ep 16 as 32 GPUs of 2 instances holds
-- what 16 do).
local function moe_hints(a)
  local memory = require "gpuplan.memory"
  local tries = {}
  local function variant(words, change)
    tries[#tries + 1] = report.variant(words, a, change, function(a2)
      local r2 = infer.infer(a2)
      return r2.fits, r2.fits and string.format("batch %s per GPU, %.0f tokens/s per GPU",
        per_gpu_batch(r2.batch_per_gpu), r2.per_gpu)
    end)
  end
  local ok, w = pcall(memory.weight_format, infer.released_weights(a) or "bf16")
  if ok and memory.weight_bits(w) > 8 then
    variant("--weights fp8", function(x) x.weights = "fp8" end)
  end
  if (memory.kv_bytes[a.kv or "bf16"] or 2) > 1 and infer.kv_fp8_runs(a) then
    variant("--kv fp8", function(x) x.kv = "fp8" end)
  end
  local n = math.tointeger(a.gpus)
  if n then
    variant(a.ep and string.format("--gpus %d --ep %d", 2 * n, 2 * a.ep)
      or string.format("--gpus %d", 2 * n), function(x)
      x.gpus = 2 * n
      if x.ep then x.ep = 2 * x.ep end
    end)
  end
  return report.fit_hints(tries)
end

-- The KV one sequence puts on a GPU, and, where TP attention groups a
-- GPUs (engine/serve.c serve_shape: a = tp, 1 under DP attention), what a
-- GPU holds per sequence of its batch: each GPU of the group holds its
-- share of every sequence the group's a GPUs batch (MLA's latent cache
-- whole, not split by heads), a times one sequence's share -- the figure
-- that sizes the batch (serve.c serve_memory kv_per_seq).  It was shown
-- alone under this label: 1.295 GB for DeepSeek-V3 TP8, 8 x one
-- sequence's 0.162 GB.
local function kv_words(r, a)
  local group = r.dp_attention and 1 or math.max(1, math.tointeger(r.tp) or 1)
  if group == 1 then return string.format("%.3f GB", r.kv_per_seq / 1e9) end
  local model = a and infer.model_of(a)
  local mla = model and type(model.mla) == "table" and (model.mla.kv_lora_rank or 0) > 0
  return string.format("%.3f GB on each GPU of a TP%d attention group (%s); %.3f GB per "
    .. "sequence of a GPU's batch (each GPU holds the group's %d GPUs' sequences)",
    r.kv_per_seq / group / 1e9, group, mla and "MLA's latent cache, not split by heads"
    or "its share of the KV heads", r.kv_per_seq / 1e9, group)
end

local function moe_report(r, opts, a)
  local title = string.format("%s on %d x %s: %s%s, %s weights%s, %s KV, in %d / out %d",
    r.model, r.gpus, r.gpu, r.disagg and "decode " or "", r.layout, report.weights_words(r.weights),
    r.expert_weights and (" (" .. r.expert_weights .. " experts)") or "", r.kv,
    r.input, r.output)
  title = title .. cached_words(r)
  if not r.fits then
    -- the title, then what was assumed (a refusal without it hid the
    -- defaults it was priced at) and what would fit, priced
    io.stdout:write(report.does_not_fit(r.why), title, "\n")
    if #r.defaults > 0 then
      io.stdout:write("assumed: ", options.cli_defaults("infer", r.defaults), "\n")
    end
    local h = a and moe_hints(a)
    if h then io.stdout:write(h, "\n") end
    return 0
  end
  local m, cur = r.memory, r.currency or "USD"
  local rows = {
    { k = "weights per GPU", v = string.format("%s (experts %.1f x %s, shared %s, "
        .. "attention %s, dense %s, embeddings %s%s)", gb(m.weights), m.expert_slots,
        gb(m.experts / math.max(m.expert_slots, 1e-9)), gb(m.shared), gb(m.attention),
        gb(m.dense), gb(m.embed), m.mtp > 0 and (", MTP " .. gb(m.mtp)) or "") },
    { k = "KV per sequence per GPU", v = kv_words(r, a) },
    { k = "all-to-all buffers", v = gb(m.a2a_buffer) },
    -- what the KV holds a GPU, and the engine's max_batch where it binds
    -- (it said "KV holds 8" of --max-batch 8, the KV holding 18)
    { k = "batch per GPU", v = string.format("%s (KV holds %d%s; x %d instances)",
        per_gpu_batch(r.batch_per_gpu), r.kv_seqs // r.tp, r.kv_seqs > r.max_batch_kv and
        string.format("; the engine batches at most %d an instance", r.max_batch_kv) or "",
        r.instances) },
    { k = "decode step", v = string.format("%.2f ms (compute %.2f, TP %.2f, all-to-all %.2f "
        .. "of which exposed %.2f%s)", r.step_ms, r.compute_ms, r.tp_comm_ms, r.a2a_ms,
        r.a2a_exposed_ms, (r.draft_ms > 0 and string.format(", MTP drafts %.2f", r.draft_ms)
        or "") .. ((r.spec_host_ms or 0) > 0 and string.format(", host %.2f", r.spec_host_ms)
        or "")) },
    { k = "dispatch / combine", v = string.format("%.1f / %.1f us per MoE layer (%.2f MB out, "
        .. "%.0f%% leaves the node)", r.dispatch_ms * 1e3, r.combine_ms * 1e3,
        r.dispatch_bytes / 1e6, r.dispatch_bytes > 0 and 100 * r.remote_bytes / r.dispatch_bytes or 0) },
    { k = "tokens per step", v = string.format("%.2f%s", r.accept, r.mtp > 0 and
        string.format(" (%d MTP draft%s)", r.mtp, r.mtp > 1 and "s" or "") or "") },
    -- One prompt's (serve.lua's ttft_steps): full prefill steps, not one
    -- prompt alone as the dense path's "TTFT (one prompt)" -- each step
    -- prefill_tokens tokens an attention group, others' prompts filling
    -- it -- and no queueing, so it reads the same at any load.
    -- A colocated burst (--requests): the requests' mean, each behind the
    -- prompts ahead of it, then one prompt's steps as before.
    -- Under a steady load (ttft_loaded: colocated, more than one sequence
    -- an instance, no burst) the TTFT of a request joining it, gp.infer's
    -- rule (engine/infer_run.c infer_loaded_ttft), its parts said, then one
    -- prompt's full prefill steps as their own row (below).
    r.ttft_loaded and { k = "TTFT (under load)",
      v = ranges.text(r, "ttft_s", "%.2f", "ms", 1e3) .. string.format("; the step in flight "
        .. "%.2f ms, then %d step%s of %.2f ms", r.ttft_wait_s * 1e3, r.ttft_steps,
        r.ttft_steps == 1 and "" or "s", r.ttft_step_s * 1e3) } or
    { k = r.ttft_one_s and "TTFT (the burst's mean)" or "TTFT (full prefill steps)",
      v = ranges.text(r, "ttft_s", "%.2f", "ms", 1e3) .. (r.ttft_one_s and
        -- (the MoE serving model's one-prompt TTFT is its full prefill
        -- steps, others' prompts filling them: "alone" contradicted the
        -- steps' "(the prompt's 1000 and others')" said after it)
        string.format("; without the burst %.2f ms", r.ttft_one_s * 1e3) or "") ..
        string.format("; %d step%s of %d prompt tokens a%s attention group%s" ..
          (r.ttft_one_s and "" or ", no queueing"),
          r.ttft_steps, r.ttft_steps == 1 and "" or "s", r.prefill_tokens,
          r.ttft_group == 1 and " one-GPU" or string.format(" TP%d", r.ttft_group),
          r.ttft_steps * r.prefill_tokens > (r.input or 0) and string.format(" (the prompt's %d "
            .. "and others')", r.input) or "") .. (r.disagg and
        string.format("; KV transfer %.2f ms", r.kv_transfer_s * 1e3) or "") },
    { k = "ITL", v = r.itl_s == nil and NO_DECODE or
        ranges.text(r, "itl_s", "%.2f", "ms", 1e3) .. (r.disagg and "" or
        string.format("; decode %.2f + prefill stalls%s", r.tpot_s * 1e3,
          (r.eager_steps or 0) >= 0.005 and string.format(" (%.0f%% of steps off the CUDA graph, "
          .. "+%.2f ms a step)", 100 * r.eager_steps, r.eager_s * 1e3) or "")) },
    { k = "tokens/s per user", v = ranges.text(r, "stream_tokens_per_s", "%.1f") or NO_DECODE },
    { k = "tokens/s system", v = ranges.text(r, "tokens_per_s", "%.0f") },
    { k = "tokens/s per GPU", v = ranges.text(r, "per_gpu", "%.0f") },
  }
  -- under a steady load, one prompt's full prefill steps as their own row
  -- after the loaded TTFT (as the dense table's "TTFT (one prompt)")
  if r.ttft_loaded then
    for i, row in ipairs(rows) do
      if row.k == "TTFT (under load)" then
        table.insert(rows, i + 1, { k = "TTFT (full prefill steps)", v = string.format(
          "%.2f ms; %d step%s of %d prompt tokens a%s attention group%s, no queueing",
          r.ttft_one_s * 1e3, r.ttft_one_steps, r.ttft_one_steps == 1 and "" or "s",
          r.prefill_tokens, r.ttft_group == 1 and " one-GPU" or string.format(" TP%d", r.ttft_group),
          r.ttft_one_steps * r.prefill_tokens > (r.input or 0) and string.format(" (the prompt's "
            .. "%d and others')", r.input) or "") })
        break
      end
    end
  end
  -- the same server without drafts (serve.lua M.infer): MTP is a choice,
  -- a loss where the verify's extra tokens cost their compute or the
  -- runtime's speculative path runs fewer requests at once
  if r.no_mtp then
    local n = r.no_mtp
    rows[#rows + 1] = { k = "without MTP", v = n.fits and string.format(
      "%.0f tok/s system, %.0f per GPU (batch %s per GPU%s): MTP %s %.2fx", n.tokens_per_s,
      n.per_gpu, per_gpu_batch(n.batch_per_gpu), n.itl_s and
      string.format(", ITL %.2f ms", n.itl_s * 1e3) or "",
      r.tokens_per_s >= n.tokens_per_s and "gains" or "loses, giving",
      r.tokens_per_s / n.tokens_per_s) or "does not fit" }
  end
  if r.disagg then
    rows[#rows + 1] = { k = "pools", v = string.format("prefill %d GPUs (%s, %.0f prompt "
      .. "tok/s each) : decode %d GPUs (%.0f tok/s each); balanced ratio %.2f", r.prefill_gpus,
      r.prefill_layout, r.prefill_per_gpu, r.decode_gpus, r.decode_per_gpu, r.pool_ratio) }
    local c = r.coloc
    rows[#rows + 1] = { k = "colocated instead", v = c.fits and string.format(
      "%.0f tok/s per GPU%s (batch %d)", c.per_gpu,
      c.itl_s and string.format(" at ITL %.2f ms", c.itl_s * 1e3) or "", c.batch_per_gpu)
      or "does not fit" }
  end
  if r.cost_per_mtok then
    rows[#rows + 1] = { k = "cost per 1M output tokens",
                        v = ranges.text(r, "cost_per_mtok",
                          require("gpuplan.units").amount_fmt(r.cost_per_mtok, 3), cur) }
  end
  return finish(rows, r, opts, title,
    string.format("decode step, batch %s per GPU, the most loaded GPU", per_gpu_batch(r.batch_per_gpu)))
end

-- What could make a deployment that does not fit fit: only the levers this
-- command line has not pulled (suggesting --weights int4 to an int4 run
-- says nothing).  Weights count as pulled at 5 bits or fewer per weight
-- (the 4-bit formats with their scales, 4.13-4.5); the KV cache at 1 byte
-- or less per element (fp8, int8, fp4).  why is the engine's reason
-- (engine/infer_run.c run_weights): a stated --offload-layers is worth
-- raising only when the GPU is short with fewer than all of its stage's
-- layers on the host ("even with N of its M layers"), not when the host
-- is ("needs ... of host memory"), where more host layers need more; more
-- host memory helps only there (with the GPU short even with its layers on
-- the host, the host's room is not what is missing).
local function hint(opts, why, node_tp, a)
  -- A stated --batch over the engine's cap (engine/infer_run.c run_batch:
  -- "batch N is over max_batch M") is refused by the cap, not by memory:
  -- no weight format, KV dtype, TP or offload raises it ("batch 300 is
  -- over max_batch 100; try --weights int4, --kv fp8, ..." named four
  -- levers that change nothing).  The levers are the batch and the cap.
  local cap = tostring(why):match("^batch %d+ is over max_batch (%d+)")
  if cap then
    return string.format("try a --batch of at most %s or a larger --max-batch", cap)
  end
  local memory = require "gpuplan.memory"
  local t = {}
  local ok, w = pcall(memory.weight_format, infer.released_weights(a or opts) or "bf16")
  -- the checkpoint's own expert format first (gpt-oss's MXFP4 experts)
  local ex = infer.released_experts(a or opts)
  if ex then t[#t + 1] = "--expert-weights " .. ex .. " (the checkpoint's experts)" end
  if not ok or memory.weight_bits(w) > 5 then t[#t + 1] = "--weights int4" end
  -- only where the card and runtime attend one (gpuplan.infer kv_fp8_runs:
  -- a V100 was told to try --kv fp8, which vLLM cannot run there)
  if (memory.kv_bytes[opts.kv or "bf16"] or 2) > 1 and infer.kv_fp8_runs(a or opts) then
    t[#t + 1] = "--kv fp8"
  end
  -- node_tp: the replica already a node's TP (--target's search), past
  -- which a replica grows by pipeline stages
  -- A stated --gpus past one replica's tp x pp already holds the GPUs:
  -- infer makes them replicas (gpus / (tp x pp)), each with the whole
  -- model, so "more GPUs" reads as "I gave 16" (deepseek-v3 --gpus 16 on
  -- h200-sxm was told "more GPUs with --tp").  Say so and name the
  -- replica's axes, as --help's --gpus does ("infer: replicas = gpus /
  -- (tp*pp)").
  local per = (opts.tp or 1) * (opts.pp or 1)
  local g = tonumber(opts.gpus)
  if not node_tp and g and g > per and not opts.target then
    t[#t + 1] = string.format("more GPUs a replica with --tp or --pp (--gpus %d at tp %d, pp %d "
      .. "is %d replica%s, each holding the whole model)", g, opts.tp or 1, opts.pp or 1,
      g // per, g // per == 1 and "" or "s")
  else
    t[#t + 1] = node_tp and "more GPUs with --pp" or "more GPUs with --tp"
  end
  -- A stated count of host layers can be raised (the GPU short of room).
  local n, of = tostring(why):match("even with (%d+) of its (%d+) layers in host memory")
  if opts.offload and opts.offload_layers and n and tonumber(n) < tonumber(of) then
    t[#t + 1] = "a larger --offload-layers"
  end
  if not opts.offload then
    t[#t + 1] = "--offload"
  elseif tostring(why):find(" of host memory, has ", 1, true) then
    -- the room the refusal quotes is a default unless given (32 GB, or
    -- the --system's host_memory): said, as the defaults line would
    local has = tostring(why):match(" of host memory, has ([%d.]+ GB)")
    t[#t + 1] = "more host memory with --host-memory" .. ((opts.host_memory == nil and has)
      and (" (the " .. has .. " is assumed)") or "")
  end
  local last = table.remove(t)
  return "try " .. (#t > 0 and table.concat(t, ", ") .. " or " or "") .. last
end

-- gpuplan infer MODEL --gpu A,B,C --target TPS: the buyer's question
-- ("serve 100 req/s: which card, how many?") was refused, "--target takes
-- one card, not a list", with the next step a loop the user had to write.
-- Each card's plan is gp.infer_plan's (gpuplan.serve plan, the search
-- --target runs on one card), side by side, the cheapest per token first;
-- a card without an offer in the buyer's market after those with one; a
-- card the search refuses last, with its reason.
local function target_cards(opts, a, ids)
  local serve = require "gpuplan.serve"
  local amount_fmt = require("gpuplan.units").amount_fmt
  local rows = {}
  -- A card the catalog does not hold is the user's typo, refused as the
  -- list without --target refuses it ("--gpu: unknown gpu 't4' (did you
  -- mean l4 ...)", a usage error), not a row of the table that exits 0.
  for _, g in ipairs(ids) do
    local okg, eg = pcall(function() return require("gpuplan").catalog():get("gpus", g) end)
    if not okg then error(eg, 0) end
  end
  for i, g in ipairs(ids) do
    local pa = {}
    for k, v in pairs(a) do pa[k] = v end
    pa.gpu, pa.target = g, opts.target
    pa.itl_max = string.format("%.17gms", opts.itl_max or 50)
    local ok, p = pcall(serve.plan, pa)
    if ok then
      rows[#rows + 1] = { gpu = g, order = i, gpus = p.gpus, fits = true,
        deployment = p.disagg and string.format("decode %d x %s + prefill %d x %s", p.decode_gpus,
          p.layout, p.prefill_gpus, p.prefill_layout) or p.layout,
        tokens_per_s = p.tokens_per_s, itl_s = p.itl_s, ttft_s = p.ttft_s,
        cost_per_mtok = p.cost_per_mtok, currency = p.cost_per_mtok and p.currency or nil }
    else
      local why = clean(p)
      why = type(why) == "string" and why:gsub("^infer_plan: ", "") or tostring(why)
      rows[#rows + 1] = { gpu = g, order = i, fits = false, why = why }
    end
  end
  local function rank(x) return not x.fits and 3 or x.cost_per_mtok and 1 or 2 end
  table.sort(rows, function(x, y)
    if rank(x) ~= rank(y) then return rank(x) < rank(y) end
    if rank(x) == 1 and x.cost_per_mtok ~= y.cost_per_mtok then return x.cost_per_mtok < y.cost_per_mtok end
    if rank(x) == 2 and x.gpus ~= y.gpus then return x.gpus < y.gpus end
    return x.order < y.order
  end)
  local w = rows[1] and rows[1].fits and rows[1] or nil
  for _, x in ipairs(rows) do
    x.order = nil
    if x == w then
      x.loses = "(the winner)"
    elseif x.fits and x.cost_per_mtok and w.cost_per_mtok then
      x.loses = string.format("%.1f%% more cost per token, %d GPUs", 100 * (x.cost_per_mtok
        / w.cost_per_mtok - 1), x.gpus)
    elseif x.fits then
      x.loses = "no price in the buyer's market (--market, --currency or --price)"
    else
      x.loses = x.why
    end
  end
  if opts.format == "json" then
    io.stdout:write(report.json({ target = opts.target, itl_max = (opts.itl_max or 50) / 1e3,
      per_card = rows }), "\n")
    return 0
  end
  local csv = opts.format == "csv"
  local function ms(f) return not csv and function(v) return string.format(f, v * 1e3) end or nil end
  local cols = { { key = "gpu", label = "card" }, { key = "gpus", label = "GPUs" },
    { key = "deployment", label = "deployment" },
    { key = "tokens_per_s", label = "tok/s", fmt = "%.0f" },
    { key = "itl_s", label = "ITL ms", fmt = ms("%.1f") },
    { key = "ttft_s", label = "TTFT ms", fmt = ms("%.0f") } }
  if csv then
    cols[#cols + 1] = { key = "cost_per_mtok" }
    cols[#cols + 1] = { key = "currency" }
    cols[#cols + 1] = { key = "fits" }
  else
    for _, x in ipairs(rows) do
      x.cost = x.cost_per_mtok and (amount_fmt(x.cost_per_mtok, 3):format(x.cost_per_mtok)
        .. " " .. x.currency)
    end
    cols[#cols + 1] = { key = "cost", label = "cost/Mtok" }
  end
  cols[#cols + 1] = { key = "loses", label = "against the winner" }
  report.print(rows, { format = opts.format, columns = cols, title = string.format(
    "%s: GPUs for %.0f output tok/s on each card, ITL <= %.4g ms; %s", a.model, opts.target,
    opts.itl_max or 50, w and string.format("winner %s x %d (%s)", w.gpu, w.gpus,
      w.cost_per_mtok and "cost per token" or "fewest GPUs: no card priced") or "no card meets it") })
  return 0
end

-- gpuplan infer MODEL --gpu A,B,C: the same deployment on each card, side
-- by side (gp.infer with a list of cards), ranked as gp.infer ranks them.
function C.cards(opts, a)
  -- Said with what to do instead: "--target takes one card, not a list"
  -- left a buyer comparing H100, H200 and H20 for a throughput target
  -- with no next step.  --target's search runs a card at a time (one
  -- command a card, or gp.infer_plan in a loop); the others price one
  -- deployment a card, as the list's own table does.
  -- --target takes a list now: each card's plan side by side
  -- (target_cards).
  for _, o in ipairs { "sweep_batch", "ops", "svg" } do
    if opts[o] ~= nil then
      local flag = "--" .. o:gsub("_", "-")
      error(cli.usage("infer: " .. flag .. " takes one card, not a list: run it once per card, "
        .. "or leave " .. flag .. " out to compare the cards' deployments side by side"), 0)
    end
  end
  local ids = {}
  for g in (opts.gpu .. ","):gmatch("([^,]*),") do
    if not g:match("%S") then
      error(cli.usage("infer: --gpu expects GPU ids separated by commas, got '" .. opts.gpu
                      .. "'"), 0)
    end
    ids[#ids + 1] = g
  end
  -- A card named twice is refused by gp.sweep.cards, as a repeated
  -- --gpus count is ("--gpu lists 'h100-sxm' twice"): one rule for lists,
  -- --target's list too (it kept a copy of its own, a usage error where
  -- the list's is an error).
  if opts.target ~= nil then
    local okc, e = pcall(require("gpuplan.sweep").cards, ids, "infer")
    if not okc then error(clean(e), 0) end
    return target_cards(opts, a, ids)
  end
  a.gpu = ids
  local ok, r = pcall(infer.infer, a)
  if not ok then error(clean(r), 0) end
  if opts.format == "json" then
    io.stdout:write(report.json(r), "\n")
    return 0
  end
  local rows = r.per_card
  for _, x in ipairs(rows) do
    x.layout_name = x.layout or string.format("TP%d%s", x.tp or 1,
      (x.pp or 1) > 1 and (" PP" .. x.pp) or "")
    x.cost = x.cost_per_mtok and string.format(require("gpuplan.units").amount_fmt(x.cost_per_mtok, 3) .. " %s",
                     x.cost_per_mtok, x.currency or "")
    if not x.fits then x.batch = nil end
  end
  local w = rows[1] and rows[1].winner and rows[1] or nil
  -- A CSV's header is its keys: "ttft_s,itl_s" sat over the text's
  -- milliseconds (198.1 for 0.198 s) and "cost" over "0.373 USD", a
  -- string.  There the seconds as the JSON gives them, and the cost and
  -- its currency apart (cost_cell's rule for one replica).
  local csv = opts.format == "csv"
  local function ms(f) return not csv and function(v) return string.format(f, v * 1e3) end or nil end
  local cols = {
      { key = "gpu", label = "card" }, { key = "gpus", label = "GPUs" },
      { key = "layout_name", label = "layout" }, { key = "batch", label = "batch" },
      { key = "ttft_s", label = "TTFT ms", fmt = ms("%.1f") },
      { key = "itl_s", label = "ITL ms", fmt = ms("%.2f") },
      -- the mean gap a user sees, whose inverse tok/s/user is
      { key = "itl_load_s", label = "mean ITL ms", fmt = ms("%.2f") },
      { key = "stream_tokens_per_s", label = "tok/s/user", fmt = "%.1f" },
      { key = "per_gpu", label = "tok/s/GPU", fmt = "%.0f" } }
  if csv then
    for _, x in ipairs(rows) do
      if not x.cost_per_mtok then x.currency = nil end
    end
    cols[#cols + 1] = { key = "cost_per_mtok" }
    cols[#cols + 1] = { key = "currency" }
  else
    cols[#cols + 1] = { key = "cost", label = "cost/Mtok" }
  end
  cols[#cols + 1] = { key = "fits", label = "fits" }
  cols[#cols + 1] = { key = "loses", label = "against the winner" }
  report.print(rows, { format = opts.format, title = string.format(
    "%s on each card: in %d / out %d%s", r.model, rows[1].input or 0, rows[1].output or 0,
    w and string.format("; winner %s (%s)", w.gpu, w.cost_per_mtok and "cost per token"
                        or "tokens/s per user") or "; no card fits"),
    columns = cols })
  if (opts.format or "text") == "text" or opts.format == "markdown" then
    for _, x in ipairs(rows) do
      if not x.fits then io.stdout:write(x.gpu, " does not fit: ", tostring(x.why), "\n") end
    end
    -- a size --target would try that fits where TP1 does not, or serves
    -- the token cheaper (gp.infer's larger_tp): said with its flag
    local amount_fmt = require("gpuplan.units").amount_fmt
    for _, x in ipairs(rows) do
      local l = x.larger_tp
      if l then
        local cost = l.cost_per_mtok and (amount_fmt(l.cost_per_mtok, 3):format(l.cost_per_mtok)
          .. " " .. l.currency .. "/Mtok")
        local per = string.format("%.0f tok/s/GPU", l.per_gpu)
        if l.fits_only_there then
          io.stdout:write(string.format("%s fits at --tp %d (of the sizes --target tries, the %s): batch %d, %s%s\n", x.gpu, l.tp,
            l.by == "cost per token" and "cheapest per token" or "most tokens/s per GPU", l.batch, per,
            cost and (", " .. cost) or ""))
        else
          io.stdout:write(string.format("%s serves more at --tp %d: batch %d, %s%s (TP1: batch %d, %s)\n",
            x.gpu, l.tp, l.batch, per, cost and (", " .. cost) or "", x.batch or 0,
            x.cost and (x.cost .. "/Mtok") or string.format("%.0f tok/s/GPU", x.per_gpu)))
        end
      end
    end
  end
  return 0
end

-- C.run's parts.  Check the arguments and the options' combinations;
-- returns the infer arguments and whether MoE serving options are given.
local function checked(opts, args)
  local model = args[1]
  if not model then error(cli.usage("infer: MODEL is required"), 0) end
  options.gpu_of_system(opts)
  if not opts.gpu then error(cli.usage("infer: --gpu ID is required"), 0) end
  if opts.runtime and not require("gpuplan.infer").runtimes[opts.runtime] then
    -- "a, b or c", as an option's values are listed
    local names = require("gpuplan.infer").runtime_names():gsub(", ([^,]+)$", " or %1")
    error(cli.usage("infer: --runtime must be " .. names .. " (got '"
                    .. opts.runtime .. "')"), 0)
  end
  if #args > 1 then error(cli.usage("infer: one MODEL at a time"), 0) end
  -- An option the chosen mode does not read is a usage error, not a
  -- silent no-op: the user asked for something they would not get.
  local function needs(opt, what, cond)
    if opts[opt] ~= nil and not cond then
      error(cli.usage("infer: --" .. opt:gsub("_", "-") .. " needs " .. what), 0)
    end
  end
  local function excludes(mode, opt)
    if opts[mode] and opts[opt] ~= nil then
      error(cli.usage("infer: --" .. opt:gsub("_", "-") .. " does not go with --"
                      .. mode:gsub("_", "-")), 0)
    end
  end
  if opts.margin and (opts.margin < 0 or opts.margin >= 1) then
    error(cli.usage("infer: --margin must be in [0, 1)"), 0)
  end
  -- --itl-max and --ttft-max: a bare number is milliseconds (their MS), a
  -- time with its unit ("20ms", "0.02s") is read by the parser gp.infer's
  -- itl_max and ttft_max are (gpuplan.options quantity, the duration
  -- kind): "20ms" was refused here ("expects a number") where
  -- gp.infer{itl_max = "20ms"} took it.  The text typed is kept for the
  -- bound's refusal, which named the milliseconds it read ('2h' as
  -- "got 7200000").
  local typed = {}
  for _, k in ipairs { "itl_max", "ttft_max" } do
    local flag = "--" .. k:gsub("_", "-")
    if type(opts[k]) == "string" then
      local text = opts[k]
      typed[k] = text
      local n = not text:match("^%s*[%+%-]?0[xX]") and tonumber(text)
      if n and n == n and n > -math.huge and n < math.huge then
        opts[k] = n
      elseif n or text:match("^%s*[%+%-]?0[xX]") then
        -- the command line's number reader's words (a decimal number)
        error(cli.usage("infer: option '" .. flag .. "' expects a number of milliseconds or "
          .. "a time with its unit, got '" .. text .. "'"), 0)
      else
        local v, msg = options.quantity(k, text, flag)
        if msg then
          -- text that reads as no time is the parser's usage error; a
          -- negative time reads (exit 1, as every quantity's)
          error(require("gpuplan.args").is_usage(msg) and cli.usage("infer: " .. clean(msg))
            or cli.fail("infer: " .. clean(msg)), 0)
        end
        opts[k] = math.tointeger(v * 1e3) or v * 1e3
      end
    end
  end
  -- --itl-max is milliseconds, passed on as "<MS>ms": the Lua side's check
  -- quoted that string for a 0 typed here ("itl_max must be a positive
  -- time (got string '0ms')").  Its bound, an hour, said in the flag's
  -- unit, naming the text typed.
  for _, k in ipairs { "itl_max", "ttft_max" } do
    if opts[k] and not (opts[k] > 0 and opts[k] <= 3.6e6) then
      error(cli.fail(string.format("infer: --%s must be a number of milliseconds in "
        .. "(0, 3600000] (got %s)", k:gsub("_", "-"),
        typed[k] or require("gpuplan.args").shown(opts[k]))), 0)
    end
  end
  local a = args_of(opts, model)
  local moe = moe_opts(a)
  needs("svg", "--sweep-batch", opts.sweep_batch)
  -- The plot is tokens/s against ITL, which --output 1 has none of (the
  -- one token is the prefill's: gp.infer leaves itl_s out); it wrote an
  -- SVG of empty axes.
  if opts.svg and opts.output == 1 then
    error(cli.usage("infer: --svg plots tokens/s against ITL, and --output 1 runs no "
      .. "decode step: there is no ITL to plot"), 0)
  end
  -- "the MoE serving options" named none: deepseek-v3 --gpus 16
  -- --itl-max 50 is a MoE model on many GPUs, and the user had no way to
  -- tell which flag makes it the MoE serving model (--ep 16 does)
  local moe_words = "--target or the MoE serving options (--ep N, --dp-attention, --disagg ...: "
    .. "'serving a MoE model across many GPUs' in 'gpuplan infer --help')"
  needs("itl_max", moe_words, opts.target or moe)
  needs("ttft_max", moe_words, opts.target or moe)
  if opts.sweep_batch and moe then
    error(cli.usage("infer: --sweep-batch does not go with the MoE serving options"), 0)
  end
  needs("host_bw", "--offload", opts.offload)
  needs("host_memory", "--offload", opts.offload)
  -- by the same rule here, where gp.infer's own refusals (the same
  -- words) exited 1 beside --host-memory's 2
  needs("offload_layers", "--offload (it places layers in host memory)", opts.offload)
  for _, o in ipairs { "prefill_gpus", "prefill_tp", "prefill_ep", "prefill_dp_attention" } do
    needs(o, "--disagg", opts.disagg)
  end
  -- the sweep sets the batch itself and prints no operator table; the
  -- target search picks GPUs and batch itself
  -- a finite run prices one deployment's batch: the sweep and the search
  -- set the batch and GPUs themselves
  for _, o in ipairs { "ops", "target", "batch", "concurrency", "requests" } do
    excludes("sweep_batch", o)
  end
  for _, o in ipairs { "ops", "batch", "concurrency", "gpus", "prefill_gpus", "requests" } do
    excludes("target", o)
  end
  if opts.itl_max then a.itl_max = string.format("%.17gms", opts.itl_max) end
  if opts.ttft_max then a.ttft_max = string.format("%.17gms", opts.ttft_max) end
  return a, moe
end

-- A deployment that does not fit, in the format asked (--sweep-batch,
-- --target): text says so; a CSV or JSON is one record {fits, why}, as
-- the replica's own CSV and JSON carry them (both printed the text line,
-- which neither a spreadsheet nor a JSON reader takes).
local function unfit(opts, why)
  local f = opts.format or "text"
  if f == "json" then
    io.stdout:write(report.json({ fits = false, why = why }), "\n")
  elseif f == "csv" then
    report.print({ { fits = "no", why = why } },
                 { format = "csv", columns = { { key = "fits" }, { key = "why" } } })
  else
    io.stdout:write(report.does_not_fit(why))
  end
end

-- --sweep-batch: throughput against latency over doubling batches, and
-- its plot.
local function sweep_batch(opts, a)
  -- An output file that cannot be written fails before the table prints.
  if opts.svg then
    local okf, why = pcall(require("gpuplan.files").check_output, opts.svg, "svg")
    if not okf then error(why, 0) end
  end
  local ok, rows, top = pcall(infer.sweep, a)
  if not ok then error(clean(rows), 0) end
  if not top.fits then
    -- no curve to plot: said, where --svg FILE was asked for and is not
    -- written (before, it was left out in silence)
    unfit(opts, tostring(top.why) .. (opts.svg and
      ("; no curve, so nothing written to " .. opts.svg) or ""))
    return 0
  end
  report.print(rows, {
    format = opts.format,
    title = string.format("%s on %d x %s (tp %d, %s weights): throughput vs latency",
                          top.model, top.gpus, top.gpu, top.tp, report.weights_words(top.weights)),
    columns = { { key = "batch", label = "batch" },
                { key = "itl_ms", label = "ITL ms", fmt = "%.2f" },
                -- the mean gap a user sees, prompts between its tokens:
                -- tok/s/user is its inverse (the ITL column alone read
                -- 31.37 ms beside 13.8 tok/s a user at batch 205)
                { key = "itl_load_ms", label = "mean ITL ms", fmt = "%.2f" },
                { key = "stream_tokens_per_s", label = "tok/s/user", fmt = "%.1f" },
                { key = "tokens_per_s", label = "tok/s system", fmt = "%.0f" },
                { key = "per_gpu", label = "tok/s/GPU", fmt = "%.0f" } } })
  if opts.svg then
    local svg = require "gpuplan.svg"
    local p = svg.plot { title = string.format("%s on %s x%d: throughput vs latency", top.model,
                                               top.gpu, top.gpus),
                         xlabel = "inter-token latency (ms)", ylabel = "output tokens/s (system)",
                         xlog = true, ylog = true,
                         note = string.format("batch doubles up to the KV limit (%d); in %d, out %d, %s weights, %s KV",
                                              top.max_batch_kv, top.input, top.output,
                                              report.weights_words(top.weights), top.kv) }
    local pts = {}
    for i, r in ipairs(rows) do pts[i] = { r.itl_ms, r.tokens_per_s, "b=" .. r.batch } end
    p:line(pts, { label = "continuous batching", color = "#1f77b4" })
    p:points(pts, { color = "#1f77b4" })
    local okw, err = pcall(p.write, p, opts.svg)
    if not okw then error(clean(err), 0) end
  end
  return 0
end

-- Whether --target is for a MoE model (the layout search).  A MoE model
-- with --tp (or --pp) and no MoE serving option is a plain TP replica,
-- the deployment `infer --gpus N --tp T` prices with gpuplan.infer's
-- model: its target counts those replicas with the same model
-- (dense_target), so that the two answer alike (gp.infer_plan's rule
-- too: serve.lua M.plan).
local function target_is_moe(opts, model, moe)
  local ismoe = moe
  if opts.target and not moe and (opts.tp or opts.pp) then return false end
  if opts.target and not moe then
    local okm, m = pcall(function()
      return type(model) == "table" and model or require("gpuplan").catalog():get("models", model)
    end)
    ismoe = okm and m.moe ~= nil
  end
  return ismoe
end

-- --target for a MoE model: the layout search (EP / TP, colocated or
-- not).
-- The cost column of a --target table: "0.176 USD" in text and
-- markdown; in csv and json the number and its currency apart (the JSON
-- read "cost":"6.962 CNY", a string a reader had to split).
local function cost_cell(opts, row, cols, amount, currency)
  if opts.format == "csv" or opts.format == "json" then
    row.cost_per_mtok, row.currency = amount, amount and (currency or "USD") or nil
    cols[#cols + 1] = { key = "cost_per_mtok", label = "cost_per_mtok" }
    cols[#cols + 1] = { key = "currency", label = "currency" }
  else
    row.cost = amount and (string.format(require("gpuplan.units").amount_fmt(amount, 3), amount)
      .. " " .. (currency or "USD")) or "-"
    cols[#cols + 1] = { key = "cost", label = "cost/Mtok" }
  end
end

-- A --target table in csv or json: its keys are gp.infer_plan's.
local function machine(opts) return opts.format == "csv" or opts.format == "json" end
local function plan_columns(keys)
  local cols = {}
  for i, k in ipairs(keys) do cols[i] = { key = k, label = k } end
  return cols
end

-- A limit the user stated, as typed: at `places` decimals when that
-- says it exactly (ITL 50.0, TTFT 250), else with the digits it has
-- (--ttft-max 17.5 showed 18, --itl-max 12.25 showed 12.2, a limit the
-- plan never had): "%.6g" of the milliseconds (17.5, 12.25; "0.0175s"
-- parses to 17.499999999999998 ms, shown 17.5).
local function limit_fmt(places)
  local f = "%." .. places .. "f"
  return function(v)
    local s = string.format(f, v)
    if tonumber(s) == v then return s end
    return string.format("%.6g", v)
  end
end

-- --ttft-max given: its limit beside the ITL's, a column after TTFT ms
-- in text (none without it: the tables read as before).
local function ttft_limit(opts, row, cols)
  if not opts.ttft_max then return end
  row.ttft_max_ms = opts.ttft_max
  cols[#cols + 1] = { key = "ttft_max_ms", label = "TTFT limit ms", fmt = limit_fmt(0) }
end
-- ... and in csv and json, gp.infer_plan's ttft_max (s) after itl_max.
local function with_ttft(opts, keys)
  if opts.ttft_max then table.insert(keys, 3, "ttft_max") end
  return keys
end

-- The 80% ranges of a --target plan (p: gp.infer_plan's fields, with
-- their _lo/_hi), which gp.infer_plan returns and the table did not show:
-- a buyer read "ITL 39.8 ms" against a 40 ms limit with no word that
-- the published runs like it land up to 51 ms.  Text: one "ranges:" line
-- after the table, and a line for each limit the range passes (as plan
-- says of a deadline inside the range of days); csv and json: the
-- fields F_lo and F_hi, gp.infer_plan's names.
-- The weight format a --target plan priced, said first on its assumed
-- line where nothing else says it: the table has no header, and a plan
-- for qwen3-235b-a22b said kv=bf16 and never what its weights were (one
-- deployment's header says "bf16 weights").  A checkpoint released
-- quantized is on the line already (infer.lua's "weights=fp8
-- (deepseek-v3's checkpoint as released ...)"); else the 16-bit default.
local function target_weights(a, defaults)
  if a.weights ~= nil or infer.released_weights(a) ~= nil then return defaults end
  for _, d in ipairs(defaults) do
    if type(d) == "string" and d:match("^weights=") then return defaults end
  end
  local out = { "weights=bf16 (--weights for a quantized format)" }
  for _, d in ipairs(defaults) do out[#out + 1] = d end
  return out
end

local TARGET_RANGED = { "tokens_per_s", "itl_s", "ttft_s", "cost_per_mtok" }

local function target_range_fields(p, row, cols)
  for _, f in ipairs(TARGET_RANGED) do
    for _, e in ipairs { "_lo", "_hi" } do
      row[f .. e] = p[f .. e] or report.null
      cols[#cols + 1] = { key = f .. e, label = f .. e }
    end
  end
end

local function target_ranges(opts, p)
  if not p.range then return end
  local parts = { ranges.text(p, "tokens_per_s", "%.0f", "tok/s") }
  if p.itl_s then parts[#parts + 1] = "ITL " .. ranges.text(p, "itl_s", "%.1f", "ms", 1e3) end
  if p.ttft_s then parts[#parts + 1] = "TTFT " .. ranges.text(p, "ttft_s", "%.0f", "ms", 1e3) end
  if p.cost_per_mtok then
    parts[#parts + 1] = "cost " .. ranges.text(p, "cost_per_mtok",
      require("gpuplan.units").amount_fmt(p.cost_per_mtok, 3), p.currency) .. " / 1M tokens"
  end
  io.stdout:write("ranges: ", table.concat(parts, ", "), "; ", ranges.note(p), "\n")
  -- A limit inside the range: the range's top is the 90th percentile of
  -- where runs like it landed, so more than one in ten passes it.
  local function risk(field, limit_ms, what)
    local hi = p[field .. "_hi"]
    if not (limit_ms and hi) or hi * 1e3 <= limit_ms then return end
    io.stdout:write(string.format("%s: the 80%% range reaches %.1f ms, past the %s ms limit: more "
      .. "than one deployment in ten like it would miss it (a lower --%s-max plans with room)\n",
      what, hi * 1e3, limit_fmt(1)(limit_ms), what:lower()))
  end
  risk("itl_s", opts.itl_max or 50, "ITL")
  risk("ttft_s", opts.ttft_max, "TTFT")
end

local function moe_target(opts, a)
  local pa = {}
  for k, v in pairs(a) do pa[k] = v end
  pa.target = opts.target
  pa.itl_max = string.format("%.17gms", opts.itl_max or 50)
  local ok, p = pcall(require("gpuplan.serve").plan, pa)
  -- gp.infer_plan's refusals are this command's ("gpuplan: infer_plan:
  -- no layout meets ITL ..." named the Lua function)
  if not ok then
    p = clean(p)
    if type(p) == "string" then p = p:gsub("^infer_plan: ", "infer: ") end
    error(p, 0)
  end
  local r = p.result
  local row = { target = opts.target, itl_max_ms = opts.itl_max or 50, gpus = p.gpus,
                decode = p.disagg and string.format("%d x %s", p.decode_gpus, p.layout)
                  or p.layout,
                prefill = p.disagg and string.format("%d x %s", p.prefill_gpus,
                  p.prefill_layout) or "colocated",
                -- the column is a GPU's share: gp.infer_plan's batch is
                -- a replica's (TP replicas, r.replicas, or the serving
                -- model's decode instance), whose tp GPUs share its
                -- sequences (the serving model's batch a GPU is the
                -- instance's / tp)
                batch = r and r.tp and p.batch / r.tp or p.batch,
                tokens_per_s = p.tokens_per_s,
                -- none at --output 1 (no decode step): an empty cell
                itl_ms = p.itl_s and p.itl_s * 1e3,
                ttft_ms = p.ttft_s * 1e3 }
  local cols = { { key = "target", label = "target tok/s", fmt = "%.0f" },
                 { key = "itl_max_ms", label = "ITL limit ms", fmt = limit_fmt(1) },
                 { key = "gpus", label = "GPUs" },
                 { key = "decode", label = "decode" },
                 { key = "prefill", label = "prefill" },
                 { key = "batch", label = "batch/GPU" },
                 { key = "tokens_per_s", label = "tok/s", fmt = "%.0f" },
                 { key = "itl_ms", label = "ITL ms", fmt = "%.1f" },
                 { key = "ttft_ms", label = "TTFT ms", fmt = "%.0f" } }
  ttft_limit(opts, row, cols)
  cost_cell(opts, row, cols, p.cost_per_mtok, p.currency)
  if machine(opts) then
    -- JSON keys and CSV headers: gp.infer_plan's names (results.lua), in
    -- its units; the text's ms columns and "8 x EP8" cells are labels
    row = { target = p.target, itl_max = p.itl_max, ttft_max = p.ttft_max, gpus = p.gpus, disagg = p.disagg,
            decode_gpus = p.decode_gpus, prefill_gpus = p.prefill_gpus, layout = p.layout,
            prefill_layout = p.prefill_layout or report.null, batch = p.batch,
            tokens_per_s = p.tokens_per_s, itl_s = p.itl_s or report.null, ttft_s = p.ttft_s,
            cost_per_mtok = row.cost_per_mtok, currency = row.currency }
    cols = plan_columns(with_ttft(opts, { "target", "itl_max", "gpus", "disagg", "decode_gpus", "prefill_gpus",
      "layout", "prefill_layout", "batch", "tokens_per_s", "itl_s", "ttft_s", "cost_per_mtok",
      "currency" }))
    target_range_fields(p, row, cols)
  end
  report.print({ row }, { format = opts.format, title = "GPUs for a target throughput",
                          columns = cols })
  if (opts.format or "text") == "text" then target_ranges(opts, p) end
  -- with --mtp, the same search without drafts (serve.lua M.plan)
  local n = p.no_mtp
  if n and (opts.format or "text") == "text" then
    io.stdout:write("without MTP: ", n.fits and string.format("%d GPUs (decode %s%s), %.0f tok/s%s; "
      .. "MTP %s", n.gpus, n.layout, n.prefill_layout and ("; prefill " .. n.prefill_layout) or "",
      n.tokens_per_s, n.itl_s and string.format(" at ITL %.1f ms", n.itl_s * 1e3) or "",
      n.gpus < p.gpus and "needs more GPUs" or n.gpus > p.gpus and "needs fewer GPUs"
        or "needs as many GPUs") or ("does not fit: " .. tostring(n.why)), "\n")
  end
  if r and (opts.format or "text") == "text" then
    local d = target_weights(a, r.defaults)
    if #d > 0 then io.stdout:write("assumed: ", options.cli_defaults("infer", d), "\n") end
  end
  return 0
end

-- --target for a dense model: replicas for the throughput.
local function dense_target(opts, a)
  -- a static batch: refused by the search's own rule (infer.lua
  -- static_refused) before the probe below asks for a batch
  local oks, why = pcall(infer.static_refused, a, "the target search", 1)
  if not oks then error(clean(why), 0) end
  -- --itl-max is this search's limit (gpus_for's argument below), not a
  -- MoE serving option: left in the arguments it read as one
  -- (serve.wants), which turned off the runtime's own chunked prefill
  -- (infer.lua M.mixes) -- vLLM priced without it when --itl-max 50 was
  -- said and with it when the same 50 was the default.
  -- --ttft-max alike (gpus_for's last argument).
  local da = {}
  for k, v in pairs(a) do da[k] = v end
  da.itl_max, da.ttft_max = nil, nil
  a = da
  -- One replica that does not fit is an answer (as below), not an error:
  -- the given --tp/--pp, or without them the largest TP the search tries
  -- (infer.target_tps: a node's), past which only --pp adds GPUs to a
  -- replica.
  local searched = a.tp == nil and a.pp == nil
  local probe = a
  if searched then
    local okt, tps = pcall(infer.target_tps, a)
    if not okt then error(clean(tps), 0) end
    probe = infer.at_search_tp(a, tps[#tps])
  end
  local okf, one = pcall(infer.infer, probe)
  if not okf then error(clean(one), 0) end
  if not one.fits then
    local why = tostring(one.why)
    if searched then why = string.format("TP%d (a node, the largest TP tried): %s", probe.tp, why) end
    unfit(opts, why .. "; " .. hint(opts, one.why, searched, a))
    return 0
  end
  -- The one search gp.infer_plan runs too (infer.replicas_for).
  local ok, g = pcall(infer.replicas_for, a, opts.target, (opts.itl_max or 50) / 1e3,
                      opts.ttft_max and opts.ttft_max / 1e3)
  if not ok then error(clean(g), 0) end
  -- The replica the GPUs are counted in: the table said "158 GPUs" and
  -- "batch/replica 1" for Llama 3 70B on H100 without saying each
  -- replica was one GPU (tp 1, the default), whose KV holds one sequence.
  local replica = infer.replica_layout(g.tp, g.pp)
  -- The 80% ranges of the deployment chosen, as gp.infer_plan gives them
  -- (serve.lua replicas: the same regime's, of the same figures).
  local rg = ranges.apply("infer", { model = a.model, gpu = a.gpu, tp = g.tp, pp = g.pp,
    gpus = g.gpus, runtime = a.runtime },
    { tokens_per_s = g.tokens_per_s, itl_s = g.itl_s, ttft_s = g.ttft_s,
      cost_per_mtok = g.cost_per_mtok, currency = g.currency })
  -- ITL ms: the mean a user sees at that batch (itl_load_s), what the
  -- limit bounds, as the MoE table's column; TTFT ms as the MoE table's
  -- too (an SLO states both; the dense table had none)
  local row = { target = opts.target, itl_max_ms = opts.itl_max or 50, gpus = g.gpus,
                replica = replica, batch = g.batch, tokens_per_s = g.tokens_per_s,
                itl_ms = g.itl_s and g.itl_s * 1e3, ttft_ms = g.ttft_s and g.ttft_s * 1e3 }
  local cols = { { key = "target", label = "target tok/s", fmt = "%.0f" },
                 { key = "itl_max_ms", label = "ITL limit ms", fmt = limit_fmt(1) },
                 { key = "gpus", label = "GPUs" },
                 { key = "replica", label = "replica" },
                 { key = "batch", label = "batch/replica" },
                 { key = "tokens_per_s", label = "tok/s", fmt = "%.0f" },
                 { key = "itl_ms", label = "ITL ms", fmt = "%.1f" },
                 { key = "ttft_ms", label = "TTFT ms", fmt = "%.0f" } }
  ttft_limit(opts, row, cols)
  cost_cell(opts, row, cols, g.cost_per_mtok, g.currency)
  if machine(opts) then
    -- gp.infer_plan's names and units, the MoE table's columns (layout:
    -- the replica): a dense plan is one colocated pool, as gp.infer_plan
    -- says it (serve.lua: disagg false, decode_gpus its GPUs, prefill_gpus
    -- 0), where the row left those keys out and a script reading both
    -- kinds of model found them only for a MoE one
    row = { target = opts.target, itl_max = (opts.itl_max or 50) / 1e3,
            ttft_max = opts.ttft_max and opts.ttft_max / 1e3, gpus = g.gpus,
            disagg = false, decode_gpus = g.gpus, prefill_gpus = 0, layout = replica,
            prefill_layout = report.null, batch = g.batch, tokens_per_s = g.tokens_per_s,
            itl_s = g.itl_s or report.null, ttft_s = g.ttft_s or report.null,
            cost_per_mtok = row.cost_per_mtok, currency = row.currency }
    cols = plan_columns(with_ttft(opts, { "target", "itl_max", "gpus", "disagg", "decode_gpus", "prefill_gpus",
      "layout", "prefill_layout", "batch", "tokens_per_s", "itl_s", "ttft_s", "cost_per_mtok",
      "currency" }))
    target_range_fields(rg, row, cols)
  end
  report.print({ row }, { format = opts.format, title = "GPUs for a target throughput",
                          columns = cols })
  if (opts.format or "text") == "text" then target_ranges(opts, rg) end
  if (opts.format or "text") == "text" then
    local d = target_weights(a, g.defaults)
    if #d > 0 then io.stdout:write("assumed: ", options.cli_defaults("infer", d), "\n") end
  end
  return 0
end

-- One replica's answer as CSV (its operators with --ops) or JSON.
local function machine_report(r, opts)
  if opts.format == "csv" and opts.ops then
    -- One table: the decode step's operators (SI units: s, FLOP, bytes).
    report.print(r.ops or {}, { format = "csv", columns = {
      { key = "name", label = "op" }, { key = "count" }, { key = "time", label = "time_s" },
      { key = "total", label = "total_s" }, { key = "bound" }, { key = "intensity" },
      { key = "flop" }, { key = "bytes" }, { key = "shape_eff" } } })
    return 0
  end
  local row = {}
  for k, v in pairs(r) do
    if type(v) ~= "table" then row[k] = v end
  end
  -- a decode step's figures at --output 1: null (JSON) or empty (CSV),
  -- their columns kept
  if r.fits and r.itl_s == nil then
    for _, k in ipairs { "itl_s", r.moe and "tpot_s" or "itl_batch1_s", "stream_tokens_per_s" } do
      row[k] = report.null
    end
  end
  if opts.format == "json" then
    -- one object, as train and rl print: fits at its top level
    row.ops, row.defaults = r.ops, r.defaults
    io.stdout:write(report.json(row), "\n")
    return 0
  end
  row.defaults = options.cli_defaults("infer", r.defaults)
  report.print({ row }, { format = opts.format })
  return 0
end

-- One replica's answer as a quantity / value table.
local function replica_report(r, opts, a)
  local title = string.format("%s on %d x %s (tp %d, pp %d), %s weights, %s KV, in %d / out %d",
                              r.model, r.gpus, r.gpu, r.tp, r.pp, report.weights_words(r.weights), r.kv,
                              r.input, r.output)
  title = title .. cached_words(r)
  -- Not fitting is an answer, not an error (as in `gpuplan fit`): say
  -- what it needs and what would help, exit 0.
  if not r.fits then
    io.stdout:write(report.does_not_fit(tostring(r.why) .. "; " .. hint(opts, r.why, nil, a)), title, "\n")
    return 0
  end
  local cur = r.currency or "USD"
  local rows = {
    { k = "weights per GPU", v = string.format("%.2f GB", r.weights_gpu / 1e9) },
    { k = "KV per sequence per GPU", v = string.format("%.3f GB", r.kv_per_seq / 1e9) },
    -- what the budget holds, and the engine's cap where it is lower:
    -- "19.03 GB (1 sequence)" under ExLlamaV2's max_batch_size 1 read as
    -- a budget of one 0.302 GB sequence
    { k = "KV budget per GPU", v = string.format("%.2f GB (%d sequence%s%s)", r.kv_budget / 1e9,
      r.kv_seqs, r.kv_seqs == 1 and "" or "s", r.kv_seqs > r.max_batch_kv
        and string.format("; the engine batches at most %d", r.max_batch_kv) or "") },
    -- a concurrency split unevenly (gpuplan.infer split_replicas): both groups
    { k = "batch per replica", v = r.batch_split and string.format("%d on %d, %d on %d "
      .. "(x %d replicas)", r.batch_split.hi, r.batch_split.hi_replicas, r.batch_split.lo,
      r.batch_split.lo_replicas, r.replicas) or string.format("%d (x %d replica%s)", r.batch,
      r.replicas, r.replicas == 1 and "" or "s") },
    -- a static batch's first tokens all come when its context pass ends
    { k = a and a.batching == "static" and "TTFT (the batch's prompts)" or
        r.ttft_loaded and "TTFT (under load)" or
        r.ttft_one_s and "TTFT (the burst's mean)" or "TTFT (one prompt)",
      v = ranges.text(r, "ttft_s", "%.2f", "ms", 1e3) .. (r.ttft_p50_s and
        string.format("; median %.2f, P99 %.2f ms", r.ttft_p50_s * 1e3, r.ttft_p99_s * 1e3)
        or "") .. (r.ttft_one_s and not r.ttft_loaded and
        string.format("; one prompt alone %.2f ms", r.ttft_one_s * 1e3) or "") },
    { k = "ITL at batch", v = ranges.text(r, "itl_s", "%.2f", "ms", 1e3) or NO_DECODE },
    -- the mean a user sees, other requests' prompts between its tokens:
    -- what --target's ITL limit bounds (infer_itl_loaded)
    { k = "ITL with prompts", v = ranges.text(r, "itl_load_s", "%.2f", "ms", 1e3) or NO_DECODE },
    { k = "ITL at batch 1", v = ranges.text(r, "itl_batch1_s", "%.2f", "ms", 1e3) or NO_DECODE },
    { k = "tokens/s per user", v = ranges.text(r, "stream_tokens_per_s", "%.1f") or NO_DECODE },
    { k = "tokens/s system", v = ranges.text(r, "tokens_per_s", "%.0f") },
    { k = "tokens/s per GPU", v = ranges.text(r, "per_gpu", "%.0f") },
    -- r.ridge is the achievable roofline's (the GEMM and HBM fractions):
    -- said so, as the guide's and `catalog` "bf16 ridge" is the peak's
    -- (H100: 231 here against 295 there)
    { k = "compute precision", v = r.compute .. string.format(" (achievable ridge %.0f FLOP/B)", r.ridge) },
  }
  -- under a steady load, one prompt on an idle replica as its own row
  -- after the loaded TTFT (engine/infer_run.c loaded_ttft)
  if r.ttft_loaded then
    for i, row in ipairs(rows) do
      if row.k == "TTFT (under load)" then
        table.insert(rows, i + 1, { k = "TTFT (one prompt)",
                                    v = string.format("%.2f ms", r.ttft_one_s * 1e3) })
        break
      end
    end
  end
  if r.offload_layers > 0 then
    table.insert(rows, 2, { k = "layers in host memory", v = string.format("%d (%.2f GB per GPU)",
                            r.offload_layers, r.offload_bytes / 1e9) })
  elseif opts.offload then
    -- --offload given, nothing offloaded: said, not a table that reads as
    -- if the option were ignored
    table.insert(rows, 2, { k = "layers in host memory", v = "0 (the weights fit on the GPU)" })
  end
  if r.cost_per_mtok then
    rows[#rows + 1] = { k = "cost per 1M output tokens",
                        v = ranges.text(r, "cost_per_mtok",
                          require("gpuplan.units").amount_fmt(r.cost_per_mtok, 3), cur) }
    -- a free card (price 0): tokens/s per unit of price has no value
    rows[#rows + 1] = { k = "tokens/s per " .. cur .. "/h",
                        v = ranges.text(r, "tokens_per_s_per_dollar_hour", "%.1f")
                            or "- (price 0: the GPUs are free)" }
  end
  return finish(rows, r, opts, title, string.format("decode step, batch %d, one GPU", r.batch))
end

function C.run(opts, args)
  local a, moe = checked(opts, args)
  if opts.gpu:find(",", 1, true) then return C.cards(opts, a) end
  if opts.sweep_batch then return sweep_batch(opts, a) end
  -- A MoE model's target: the layout search (EP / TP, colocated or not).
  if opts.target and target_is_moe(opts, args[1], moe) then
    return moe_target(opts, a)
  end
  if opts.target then return dense_target(opts, a) end
  local ok, r = pcall(infer.infer, a)
  if not ok then error(clean(r), 0) end
  if r.moe and (opts.format or "text") ~= "csv" and opts.format ~= "json" then
    return moe_report(r, opts, a)
  end
  if opts.format == "json" or opts.format == "csv" then
    return machine_report(r, opts)
  end
  return replica_report(r, opts, a)
end

return options.command(C)
