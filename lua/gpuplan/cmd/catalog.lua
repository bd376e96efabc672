-- gpuplan catalog list|show|check, --explain ID
local catalog = require "gpuplan.catalog"
local report = require "gpuplan.report"
local units = require "gpuplan.units"
local cli = require "gpuplan.cli"

local C = {
  summary = "list, show and check catalog entries (GPUs, fabrics, systems, prices, models, recipes)",
  usage = [[
usage: gpuplan catalog list [TABLE] [--format F]
       gpuplan catalog show ID [--explain]
       gpuplan catalog check DIR...
       gpuplan catalog --explain ID

  list     one row per entry of TABLE: gpus (default), archs, fabrics, systems,
           prices, currencies, models, recipes, optimizers
  show     every field of one entry, in engine units, and where it was defined
  check    load DIR(s) on top of the built-in catalog and report every error
           (file:line, field); exit 1 when there is any
  --explain  which file defined an id and which earlier definitions it overrode]],
  options = { format = "format", explain = "flag" },
}

local tables = { "gpus", "archs", "fabrics", "systems", "prices", "currencies", "models",
                 "recipes", "optimizers" }

local function tflops(v) return v and string.format("%.1f", v / 1e12) or nil end

local list_columns = {
  gpus = {
    { key = "id", label = "id" }, { key = "name", label = "name" },
    -- a machine format's memory is bytes, a number (the text's "80GiB"
    -- was the JSON's and the CSV's too, under memory_s)
    { key = "memory_s", label = "memory", machine = { { key = "memory", label = "memory" } } },
    -- a CSV header carries the unit its cell is in where that is not the
    -- JSON's SI unit (docs/output.md: comm's algbw_gbps): "mem_bw" headed
    -- 0.600, TB/s, where the JSON's mem_bw is 6e11 bytes/s
    -- HBM or GDDR (A10, L4, L40S, the RTX cards): "memory TB/s", where
    -- it read "HBM TB/s" over GDDR rows
    { key = "mem_bw", label = "memory TB/s", csv = "mem_bw_tbs",
      fmt = function(v) return string.format("%.3f", v / 1e12) end },
    { key = "bf16", label = "bf16 TFLOPS", csv = "bf16_tflops", fmt = tflops },
    { key = "fp8", label = "fp8 TFLOPS", csv = "fp8_tflops", fmt = tflops },
    { key = "fabric", label = "scale-up" },
    { key = "source", label = "source" },
  },
  archs = { { key = "id" }, { key = "name" }, { key = "hbm", label = "hbm frac", fmt = "%.2f" },
            { key = "gemm_bf16", label = "gemm bf16 frac", fmt = "%.2f" },
            { key = "launch_overhead", label = "launch us", csv = "launch_overhead_us",
              fmt = function(v) return string.format("%.1f", v * 1e6) end } },
  fabrics = {
    { key = "id" }, { key = "name" }, { key = "scope" },
    { key = "bw", label = "GB/s per dir", csv = "bw_gbps",
      fmt = function(v) return string.format("%.1f", v / 1e9) end },
    { key = "latency", label = "latency us", csv = "latency_us",
      fmt = function(v) return string.format("%.2f", v * 1e6) end },
    { key = "achievable", label = "achievable", fmt = "%.2f" },
    { key = "in_switch_reduction", label = "in-switch" },
  },
  systems = { { key = "id" }, { key = "name" }, { key = "gpu" }, { key = "gpus" },
              { key = "scaleup", label = "scale-up" }, { key = "nics" }, { key = "nic_fabric", label = "NIC fabric" } },
  prices = { { key = "id" }, { key = "gpu" }, { key = "provider" }, { key = "provider_kind", label = "kind" },
             { key = "region" },
             -- A machine format's price is a number and its currency
             -- apart, as infer's cost_per_mtok and currency
             -- (docs/output.md): the cell read "$2.10/h" or "6.68CNY/h".
             { key = "price_s", label = "price/GPU-h",
               machine = { { key = "price", label = "price" }, { key = "currency", label = "currency" } } },
             { key = "date" } },
  currencies = { { key = "id" }, { key = "per_usd", label = "per USD" }, { key = "date" }, { key = "source" } },
  models = { { key = "id" }, { key = "name" }, { key = "layers" }, { key = "hidden" }, { key = "heads" },
             { key = "kv_heads", label = "kv heads" }, { key = "params_b", label = "params B" },
             -- A machine format's MoE shape is numbers, as a price's is
             -- (the cell read "256×top8"): routed experts, experts a
             -- token is routed to, shared experts; empty for a dense model.
             { key = "moe_s", label = "MoE",
               machine = { { key = "experts", label = "experts" }, { key = "top_k", label = "top_k" },
                           { key = "shared_experts", label = "shared_experts" } } } },
  recipes = { { key = "id" }, { key = "weights" }, { key = "grads" }, { key = "master" },
              { key = "state" }, { key = "reduce" }, { key = "activations" }, { key = "name" } },
  optimizers = { { key = "id" }, { key = "states" }, { key = "state" }, { key = "name" } },
}

local function row_of(kind, e, cat)
  local r = {}
  for k, v in pairs(e) do r[k] = v end
  if kind == "gpus" then
    r.memory_s = tostring(e._raw.memory)
    r.bf16 = e.peak.bf16
    r.fp8 = e.peak.fp8
    r.fabric = e.scaleup and e.scaleup.fabric or "pcie"
  elseif kind == "archs" then
    r.hbm = e.achievable.hbm
    r.gemm_bf16 = e.achievable.gemm and e.achievable.gemm.bf16
  elseif kind == "prices" then
    r.price_s = units.fmt(e.price, "price")
    r.price, r.currency = e.price.amount, e.price.currency
  elseif kind == "models" then
    r.kv_heads = e.kv_heads or e.heads
    r.moe_s = e.moe and string.format("%d×top%d", e.moe.experts, e.moe.top_k) or nil
    if e.moe then
      r.experts, r.top_k = e.moe.experts, e.moe.top_k
      r.shared_experts = e.moe.shared_experts or 0
    end
  end
  return r
end

local function list(cat, kind, format)
  local rows = {}
  -- Long sources fit a terminal in text form; markdown/csv/json keep them.
  for _, c in ipairs(list_columns[kind]) do
    if c.key == "source" then
      c.fmt = format == "text" and function(v)
        return utf8.len(v) and utf8.len(v) > 60 and (v:sub(1, utf8.offset(v, 58) - 1) .. "...") or v
      end or nil
    end
  end
  for _, id in ipairs(cat:ids(kind)) do rows[#rows + 1] = row_of(kind, cat[kind][id], cat) end
  -- a column shown as text with its unit is, in a machine format, the
  -- numbers its `machine` columns name (report.print takes no `machine`)
  local cols, machine = {}, format == "csv" or format == "json"
  for _, c in ipairs(list_columns[kind]) do
    if machine and c.machine then
      for _, m in ipairs(c.machine) do cols[#cols + 1] = m end
    else
      local d = {}
      for k, v in pairs(c) do if k ~= "machine" then d[k] = v end end
      cols[#cols + 1] = d
    end
  end
  report.print(rows, { columns = cols, format = format })
end

local function find(cat, id)
  local hits = {}
  for _, kind in ipairs(tables) do
    if cat[kind][id] then hits[#hits + 1] = { kind = kind, entry = cat[kind][id] } end
  end
  return hits
end

-- Flatten an entry into path = value rows for `show`.
-- machine (json): a number stays one ("value":3.35e+12, not the text
-- "3.35e+12"); the text and csv forms print its %.6g text.
local function flatten(prefix, v, out, machine)
  if type(v) == "table" then
    local keys = {}
    for k in pairs(v) do
      if not (type(k) == "string" and k:sub(1, 1) == "_") then keys[#keys + 1] = k end
    end
    table.sort(keys, function(a, b)
      if type(a) == type(b) then return a < b end
      return type(a) == "number"
    end)
    if v.amount and v.currency then
      out[#out + 1] = { field = prefix, value = units.fmt(v, "price") }
      return
    end
    for _, k in ipairs(keys) do
      local p = type(k) == "number" and (prefix .. "[" .. k .. "]") or (prefix == "" and k or prefix .. "." .. k)
      flatten(p, v[k], out, machine)
    end
  else
    local s = v
    if machine and type(v) == "number" and v == v and v ~= math.huge and v ~= -math.huge then
      out[#out + 1] = { field = prefix, value = v }
      return
    end
    if math.type(v) == "float" then s = string.format("%.6g", v) end
    out[#out + 1] = { field = prefix, value = tostring(s) }
  end
end

-- An id no table holds: named with the subcommand that read it ("gpuplan:
-- unknown id 'h2O'" named neither), and the nearest id where one is near.
-- The nearest ids are ranked as --gpu and MODEL rank theirs (catalog.lua
-- suggest: an id the name begins, as h100-sxm for h100, first), where
-- the nearest by edits alone named b100 for h100 and a10 for a100, and
-- nothing for llama3.
local function unknown(cat, id, how)
  local ids = {}
  for _, kind in ipairs(tables) do
    for _, i in ipairs(cat:ids(kind)) do ids[i] = true end
  end
  local near = catalog.suggest(ids, id)
  for i, n in ipairs(near) do near[i] = "'" .. n .. "'" end
  error(cli.fail(string.format("catalog %s: unknown id '%s' (%s)", how, id,
    #near > 0 and ("did you mean " .. table.concat(near, ", ") .. "?")
      or "see 'gpuplan catalog list'")), 0)
end

local function explain(cat, id)
  local hits = find(cat, id)
  if #hits == 0 then unknown(cat, id, "--explain") end
  for _, h in ipairs(hits) do
    local e = h.entry
    io.stdout:write(string.format("%s '%s' defined at %s:%d\n", e._kind, id, e._file, e._line))
    for _, o in ipairs(e._overrides or {}) do
      io.stdout:write(string.format("  overrides %s\n", o))
    end
  end
end

local function show(cat, id, format)
  local hits = find(cat, id)
  if #hits == 0 then unknown(cat, id, "show") end
  -- csv is one table: with an id in several tables (a gpu and a model
  -- of the same name), one table with a `kind` column.
  local all = format == "csv" and #hits > 1 and {} or nil
  for _, h in ipairs(hits) do
    local rows = {}
    flatten("", h.entry, rows, format == "json")
    -- A card without a measured usable_memory gets the derived one
    -- (catalog/FORMAT.md "Memory capacity"): shown, and said so.
    if h.kind == "gpus" and h.entry.usable_memory == nil then
      local memory = require "gpuplan.memory"
      local ok, c = pcall(memory.capacity, h.entry)
      if ok then
        local at = #rows + 1
        for i, r in ipairs(rows) do
          if r.field > "usable_memory" then at = i break end
        end
        table.insert(rows, at, { field = "usable_memory", value = string.format(
          "%.0f (derived: memory x %.3f)", c, memory.USABLE_FRACTION) })
      end
    end
    if format == "text" then
      io.stdout:write(string.format("%s '%s' (%s:%d)\n", h.entry._kind, id, h.entry._file, h.entry._line))
    end
    if all then
      for _, r in ipairs(rows) do r.kind = h.entry._kind; all[#all + 1] = r end
    else
      report.print(rows, { columns = { { key = "field" }, { key = "value", align = "left" } }, format = format })
    end
  end
  if all then
    report.print(all, { columns = { { key = "kind" }, { key = "field" }, { key = "value" } }, format = "csv" })
  end
end

local function check(dirs)
  local paths = catalog.search_path()
  local base = { paths[1] }
  for _, d in ipairs(dirs) do base[#base + 1] = d end
  local cat, errs = catalog.load(base)
  -- What was skipped (broken links, loops, unreadable directories) first:
  -- a user's file that vanished unnoticed would look like an ok.
  for _, w in ipairs(cat.warnings) do io.stderr:write("gpuplan: warning: ", w, "\n") end
  for i, e in ipairs(errs) do
    io.stderr:write((errs.unplaced or {})[i] and "gpuplan: " or "", e, "\n")
  end
  if #errs > 0 then
    io.stderr:write(string.format("gpuplan: %d error%s in %s\n", #errs, #errs == 1 and "" or "s",
      require("gpuplan.units").oneline(table.concat(dirs, ", "))))
    return 1
  end
  local n = 0
  for _, kind in ipairs(tables) do
    for _, e in pairs(cat[kind]) do
      for _, d in ipairs(dirs) do
        -- an entry's file as the loader names it: relative to the
        -- working directory when under it (catalog.display), so an
        -- absolute DIR there counted "ok: 0 entries"
        local shown = catalog.display(d)
        if e._file:sub(1, #shown + 1) == shown .. "/" then n = n + 1 break end
      end
    end
  end
  io.stdout:write(string.format("ok: %d %s in %s\n", n, n == 1 and "entry" or "entries",
    require("gpuplan.units").oneline(table.concat(dirs, ", "))))
  return 0
end

function C.run(opts, args)
  local format = opts.format or "text"
  local sub = args[1]
  local function at_most(n)
    if args[n + 1] then
      error(cli.usage(string.format("catalog %s: unexpected argument '%s'", sub or "list", args[n + 1])), 0)
    end
  end
  if opts.explain and (sub == "list" or sub == "check") then
    error(cli.usage("catalog: --explain goes with an ID (catalog --explain ID, catalog show ID --explain)"), 0)
  end
  -- check and --explain print sentences, not rows: a --format json there
  -- printed text, as if the format had been honoured.
  if opts.format and opts.format ~= "text" and (sub == "check" or opts.explain) then
    error(cli.usage(string.format("catalog: %s prints a sentence a line; it takes no --format "
      .. "(list and show do)", opts.explain and "--explain" or "check")), 0)
  end
  if opts.explain and sub ~= "show" then
    at_most(1)
    local id = sub
    if not id then error(cli.usage("catalog: --explain needs an ID"), 0) end
    explain(catalog.get(), id)
    return 0
  end
  if sub == nil or sub == "list" then
    at_most(2)
    local kind = args[2] or "gpus"
    local ok = false
    for _, t in ipairs(tables) do ok = ok or t == kind end
    if not ok then
      error(cli.usage(string.format("catalog list: unknown table '%s' (%s)", kind, table.concat(tables, ", "))), 0)
    end
    list(catalog.get(), kind, format)
    return 0
  elseif sub == "show" then
    if not args[2] then error(cli.usage("catalog show: missing ID"), 0) end
    at_most(2)
    if opts.explain then explain(catalog.get(), args[2]) else show(catalog.get(), args[2], format) end
    return 0
  elseif sub == "check" then
    if not args[2] then error(cli.usage("catalog check: missing DIR"), 0) end
    local dirs = {}
    for i = 2, #args do dirs[#dirs + 1] = args[i] end
    return check(dirs)
  end
  error(cli.usage(string.format("catalog: unknown subcommand '%s'", sub)), 0)
end

return C
