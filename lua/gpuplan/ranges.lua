-- gpuplan.ranges: how sure an answer is, from the validation record.
--
-- Each validated case gives the factor f = measured / predicted of a
-- time-like quantity: a step time, a TTFT or a collective's time as it
-- stands; a throughput (tokens/s, TFLOP/s, bus bandwidth) inverted, since
-- a rate is work / time (a rate predicted 10% high is a time predicted
-- 9% low); a peak memory as it stands (kind memory).  The 80% range of a
-- job's answer is the range of f over the cases like it, in one of these
-- orientations:
--   time-like (step_s, days, cost)   [v * lo, v * hi]
--   rate-like (tokens/s, TFLOP/s)    [v / hi, v / lo]
--
-- Which cases are "like it": the job's regime, the features that change
-- how well a model does, in this order --
--   vendor  the card's maker (catalog vendor: NVIDIA | AMD | Intel): each
--           runs its own kernel libraries and collectives (cuBLAS/cuDNN and
--           NCCL; hipBLASLt and RCCL; SynapseAI's MME/TPC kernels and HCCL),
--           so one maker's errors are another population and do not widen
--           another's ranges (one Gaudi 2 run at +99% made the H100
--           tensor-parallel training range 4.26-10.84 s of a 5.5 s step)
--   stack   who runs it (train, rl, memory: megatron | deepspeed | hf;
--           infer: how kernels reach the GPU, graphs | kernels | eager)
--   moe     dense | moe
--   style   the parallel style (train, rl, memory: pipeline | sharded
--           (ZeRO >= 2 or FSDP) | tensor | data; infer: expert | tensor |
--           single; collective: the operation)
--   scale   node (one node) | nodes (2-16 nodes) | cluster (more)
--   balance (infer) full | cut: the card's ridge point, dense bf16 peak over memory
--           bandwidth in flop per byte.  A bf16 decode GEMM of M token rows
--           does about M flop per byte of weights, and runtimes pad a small
--           batch to a 16- to 64-row tile (Marlin 16, DeepGEMM 64: gp.infer),
--           so on a card whose ridge point is under CUT_RIDGE = 64 (H20: 148
--           TFLOP/s over 4.0 TB/s = 37) small-batch decode can be bound by
--           compute where every other card streams weights: its errors are
--           another population and do not widen the full cards' ranges
--   gen     the card's architecture (catalog arch: ampere, hopper, ...)
-- The range comes from the deepest prefix of that path (kind, kind/stack,
-- kind/stack/moe, ...) that holds at least MIN_CASES cases, so a regime
-- with few cases is pooled into its parent and, at the top, into the whole
-- kind: an interval never rests on a handful of cases.
--
-- The interval's ends are order statistics of those cases' log f (split
-- conformal prediction, Vovk et al. 2005; Lei et al. 2018, "Distribution-
-- free predictive inference for regression", sec. 2.1): of m cases sorted,
-- the k_lo-th and k_hi-th with k_lo = floor(0.1 (m + 1)) and
-- k_hi = ceil(0.9 (m + 1)), clamped to 1 .. m.  A new case exchangeable
-- with the m falls between the k_lo-th and k_hi-th with probability
-- (k_hi - k_lo) / (m + 1) -- at least 0.8 once m >= 9; below that the ends
-- are the extremes, which cover (m - 1) / (m + 1): 7/9 = 78% at
-- MIN_CASES = 8, the fewest cases whose extremes cover three in four.
-- The ends follow the errors on each side: asymmetric where they are.
--
-- The ranges are computed once, by `gpuplan validate --ranges` (`make
-- ranges`) over the shipped cases, into validation/ranges.lua, which the
-- commands read; validate --coverage scores them leave-one-out.
--
-- A job whose stack, dense/MoE or card architecture no case of its kind
-- has ("no published run like this") gets the kind's range, marked so.

local M = {}

M.LEVEL = 0.8
M.MIN_CASES = 8
M.FEATURES = { "vendor", "stack", "moe", "style", "scale", "balance", "gen" }
M.CUT_RIDGE = 64
-- A job is "like no published run" when one of these is new to its kind.
M.NOVEL = { "vendor", "stack", "moe", "gen" }

-- Metric -> orientation: 1 time-like (f = measured / predicted),
-- -1 rate-like (f = predicted / measured).  Memory is a size: 1.
M.ORIENT = {
  step_time_s = 1, ttft_ms = 1, itl_ms = 1, time_us = 1,
  peak_memory_gb = 1, peak_memory_gib = 1, peak_reserved_gib = 1,
  hfu_tflops_per_gpu = -1, mfu_tflops_per_gpu = -1, mfu = -1,
  tokens_per_s_per_gpu = -1, output_tokens_per_s = -1, decode_tokens_per_s = -1,
  output_tokens_per_s_per_gpu = -1, input_tokens_per_s_per_gpu = -1, busbw_gbps = -1,
}

local function scale_of(gpus, per_node)
  if not gpus then return nil end
  local nodes = math.ceil(gpus / math.max(1, per_node))
  if nodes <= 1 then return "node" elseif nodes <= 16 then return "nodes" end
  return "cluster"
end

local function lookup(cat, section, x)
  if type(x) == "table" then return x end
  if type(x) ~= "string" then return nil end
  cat = cat or require("gpuplan.catalog").get()
  local ok, e = pcall(cat.get, cat, section, x)
  return ok and e or nil
end

local PAR_STYLE = { train = true, rl = true, memory = true }

-- The regime of a job or of a validation case's prediction: a table
-- feature -> value (M.FEATURES; a feature that does not apply to the
-- kind is absent).  job: the options given to gp.train / gp.rl /
-- gp.infer / gp.memory / gp.comm (a predictor's, or a command's); res
-- (optional): what that call returned, whose resolved values (the stack,
-- the layout a default chose) win over the job's.  cat: the catalog, for
-- the card's architecture and the model's experts.
function M.regime(kind, job, res, cat)
  res = res or {}
  local function get(k)
    if res[k] ~= nil then return res[k] end
    return job[k]
  end
  local f = {}
  -- The model and the card as tables where either side has one (a model
  -- made from a config has no catalog id), else by id.
  local function entry(section, k)
    local x = type(job[k]) == "table" and job[k] or type(res[k]) == "table" and res[k]
      or job[k] or res[k]
    return lookup(cat, section, x)
  end
  local model = entry("models", "model")
  local gpu = entry("gpus", "gpu")
  if kind ~= "collective" then
    if model then f.moe = model.moe and "moe" or "dense" end
  end
  local num = function(k) return tonumber(get(k)) or 1 end
  if PAR_STYLE[kind] then
    -- gp.train's default stack: megatron for pretraining, else hf.
    local method = get("method") or "pretrain"
    f.stack = get("stack") or (method == "pretrain" and "megatron" or "hf")
    if num("pp") > 1 then f.style = "pipeline"
    elseif num("zero") >= 2 or get("fsdp") == true then f.style = "sharded"
    elseif num("tp") > 1 then f.style = "tensor"
    else f.style = "data" end
  elseif kind == "infer" then
    local rt = get("runtime") or "graphs"
    f.stack = require("gpuplan.infer").runtimes[rt] or rt
    if num("ep") > 1 then f.style = "expert"
    elseif num("tp") * num("pp") > 1 then f.style = "tensor"
    else f.style = "single" end
  elseif kind == "collective" then
    f.style = get("op")
  end
  -- gpuplan.comm's default node: the card's scale-up domain, else 8.
  local per_node = tonumber(get("gpus_per_node")) or
    (gpu and gpu.scaleup and gpu.scaleup.domain) or 8
  f.scale = scale_of(tonumber(get("gpus")), per_node)
  f.gen = gpu and gpu.arch or nil
  -- A card without a vendor (a user's entry may omit it) has no maker
  -- feature: its path starts at the stack, which no shipped regime has,
  -- so it takes the whole kind's range.
  f.vendor = gpu and gpu.vendor or nil
  local peak = gpu and type(gpu.peak) == "table" and tonumber(gpu.peak.bf16)
  local bw = gpu and tonumber(gpu.mem_bw)
  if kind == "infer" and peak and bw and bw > 0 then
    f.balance = peak / bw < M.CUT_RIDGE and "cut" or "full"
  end
  return f
end

-- The path of a regime: "", "stack=megatron", "stack=megatron/moe=dense",
-- ... (the features it has, in M.FEATURES order).
function M.path(f)
  local out, key = { "" }, ""
  for _, name in ipairs(M.FEATURES) do
    if f[name] ~= nil then
      key = key .. (key == "" and "" or "/") .. name .. "=" .. tostring(f[name])
      out[#out + 1] = key
    end
  end
  return out
end

-- Does regime f lie on path key?  (key "" holds every regime.)  The
-- leave-one-out coverage asks this of every case for every case (some
-- 600,000 times for the train cases): each regime's path is built once,
-- as a set, not once a question -- building it was seven tenths of
-- `gpuplan validate`'s time.  A regime table is not changed once made.
local path_sets = setmetatable({}, { __mode = "k" })
local function under(f, key)
  if key == "" then return true end
  local set = path_sets[f]
  if not set then
    set = {}
    for _, p in ipairs(M.path(f)) do set[p] = true end
    path_sets[f] = set
  end
  return set[key] == true
end

-- The k_lo-th and k_hi-th of sorted list s (conformal ranks, see above).
function M.ends(s)
  local m = #s
  local klo = math.max(1, math.floor((1 - M.LEVEL) / 2 * (m + 1)))
  local khi = math.min(m, math.ceil((1 + M.LEVEL) / 2 * (m + 1)))
  return s[klo], s[khi]
end

-- The range of sorted log factors s: the conformal ends, widened to hold
-- the point itself (factor 1, log 0).  A regime whose cases all land on
-- one side of the prediction (docs/validation.md "The 80% ranges" names
-- one, its figures held by tests/lua/ranges.t) would otherwise print
-- "0.91 (0.87-0.90)", an answer outside its own range.  Widening to the point
-- only adds coverage (the ranks' >= 80% still holds) and leaves every
-- range that already straddles it as it was.
function M.span(s)
  local lo, hi = M.ends(s)
  return math.min(lo, 0), math.max(hi, 0)
end

-- An interval from points { {f = regime, y = log factor}, ... } for
-- regime f, leaving out point `skip` (an index, or nil): the deepest
-- prefix of f's path with MIN_CASES points.  Returns { lo, hi (factors),
-- cases, key } or nil when even the kind has too few.
function M.interval(points, f, skip)
  local path = M.path(f)
  for d = #path, 1, -1 do
    local ys = {}
    for i, p in ipairs(points) do
      if i ~= skip and under(p.f, path[d]) then ys[#ys + 1] = p.y end
    end
    if #ys >= M.MIN_CASES then
      table.sort(ys)
      local lo, hi = M.span(ys)
      return { lo = math.exp(lo), hi = math.exp(hi), cases = #ys, key = path[d] }
    end
  end
  return nil
end

-- One validated prediction as a point: y = log of the time-like factor.
function M.point(row)
  local o = M.ORIENT[row.metric]
  if not (o and row.predicted and row.predicted > 0 and row.regime) then return nil end
  return { f = row.regime, y = o * math.log(row.measured / row.predicted) }
end

-- The range of a validated prediction in its own metric's orientation.
function M.bounds(metric, value, iv)
  if M.ORIENT[metric] == 1 then return value * iv.lo, value * iv.hi end
  return value / iv.hi, value / iv.lo
end

-- Every predicted row (validate.predict's) gains predicted_lo and
-- predicted_hi.  A case of the record (in_record(row) true; default every
-- row) gets its range from the other cases of its kind in the record,
-- leave-one-out, so no case sets its own interval; any other case gets
-- the shipped error model's range (validation/ranges.lua), as a user's
-- job like it would -- how a set of runs not shipped scores the ranges.
function M.attach(rows, in_record, data)
  local by = {}
  for _, r in ipairs(rows) do
    local p = M.point(r)
    if p and (not in_record or in_record(r)) then
      by[r.kind] = by[r.kind] or { rows = {}, points = {} }
      local b = by[r.kind]
      b.rows[#b.rows + 1], b.points[#b.points + 1] = r, p
      r._loo = true
    end
  end
  for _, b in pairs(by) do
    for i, r in ipairs(b.rows) do
      local iv = M.interval(b.points, b.points[i].f, i)
      if iv then r.predicted_lo, r.predicted_hi = M.bounds(r.metric, r.predicted, iv) end
    end
  end
  for _, r in ipairs(rows) do
    if not r._loo and M.point(r) then
      local iv = M.lookup(r.kind, r.regime, data)
      if iv then r.predicted_lo, r.predicted_hi = M.bounds(r.metric, r.predicted, iv) end
    end
    r._loo = nil
  end
  return rows
end

-- The error model as a Lua data file (validation/ranges.lua): per kind
-- the range of every path prefix with MIN_CASES cases, and the stacks,
-- dense/MoE and architectures its cases cover.  Sorted, fixed formats:
-- the same cases give the same bytes.
-- from: the case files the rows were predicted from, as the header
-- names them (default validation/cases.json, what `make ranges` reads).
function M.generate(rows, from)
  local by, kinds = {}, {}
  for _, r in ipairs(rows) do
    local p = M.point(r)
    if p then
      if not by[r.kind] then by[r.kind] = {}; kinds[#kinds + 1] = r.kind end
      by[r.kind][#by[r.kind] + 1] = p
    end
  end
  table.sort(kinds)
  local L = {
    "-- The 80% ranges of gpuplan's answers: generated by `make ranges`",
    "-- (gpuplan validate --ranges) from " .. (from or "validation/cases.json") .. "; do not edit.",
    "-- lo, hi: measured / predicted of a time-like quantity (a rate: predicted",
    "-- / measured) over the cases of a regime (lua/gpuplan/ranges.lua).",
    "return {",
    string.format("  level = %.2f, min_cases = %d,", M.LEVEL, M.MIN_CASES),
    "  kinds = {",
  }
  for _, kind in ipairs(kinds) do
    local points = by[kind]
    local keys, seen = {}, {}
    local values = {}
    for _, p in ipairs(points) do
      for _, key in ipairs(M.path(p.f)) do
        if not seen[key] then seen[key] = true; keys[#keys + 1] = key end
      end
      for _, name in ipairs(M.NOVEL) do
        if p.f[name] ~= nil then
          values[name] = values[name] or {}
          values[name][tostring(p.f[name])] = true
        end
      end
    end
    table.sort(keys)
    L[#L + 1] = string.format("    %s = {", kind)
    L[#L + 1] = "      seen = {"
    for _, name in ipairs(M.NOVEL) do
      if values[name] then
        local vs = {}
        for v in pairs(values[name]) do vs[#vs + 1] = string.format("%q", v) end
        table.sort(vs)
        L[#L + 1] = string.format("        %s = { %s },", name, table.concat(vs, ", "))
      end
    end
    L[#L + 1] = "      },"
    L[#L + 1] = "      regimes = {"
    for _, key in ipairs(keys) do
      local n, ys = 0, {}
      for _, p in ipairs(points) do
        if under(p.f, key) then n = n + 1; ys[#ys + 1] = p.y end
      end
      if n >= M.MIN_CASES then
        table.sort(ys)
        local lo, hi = M.span(ys)
        L[#L + 1] = string.format("        [%q] = { cases = %d, lo = %.3f, hi = %.3f },",
          key, n, math.exp(lo), math.exp(hi))
      end
    end
    L[#L + 1] = "      },"
    L[#L + 1] = "    },"
  end
  L[#L + 1] = "  },"
  L[#L + 1] = "}"
  return table.concat(L, "\n") .. "\n"
end

-- The shipped error model (validation/ranges.lua), read once: data only
-- (text, an empty environment).  Without it (an installation that lacks
-- it, a file broken mid-edit) answers carry no range: the predictions
-- that regenerate it (`make ranges`) must not depend on it, and
-- tests/lua/ranges.t fails until the file is what the cases give.
local model
function M.model()
  if model == nil then
    local path = require("gpuplan.config").root .. "/validation/ranges.lua"
    local chunk = loadfile(path, "t", {})
    local ok, data = false, nil
    if chunk then ok, data = pcall(chunk) end
    model = ok and type(data) == "table" and type(data.kinds) == "table" and data or false
  end
  return model or nil
end

-- The range for a job: { lo, hi (factors of a time-like value), cases,
-- key, novel (the features no case of the kind has: "no published run
-- like this"), level }, or nil when the kind has no range.  f: its
-- regime (M.regime).
function M.lookup(kind, f, data)
  data = data or M.model()
  local k = data and data.kinds[kind]
  if not k then return nil end
  local novel = {}
  for _, name in ipairs(M.NOVEL) do
    local vs = k.seen[name]
    if f[name] ~= nil and vs then
      local found = false
      for _, v in ipairs(vs) do found = found or v == tostring(f[name]) end
      if not found then novel[#novel + 1] = name .. " " .. tostring(f[name]) end
    end
  end
  local path = M.path(f)
  -- A novel job: the kind's range, never a narrow one borrowed from a
  -- regime that happens to share its other features.
  local from = #novel > 0 and 1 or #path
  for d = from, 1, -1 do
    local r = k.regimes[path[d]]
    if r then
      return { lo = r.lo, hi = r.hi, cases = r.cases, key = path[d],
               novel = #novel > 0 and novel or nil, level = data.level }
    end
  end
  return nil
end

-- The fields of a result that carry a range, by kind, and their
-- orientation (1 time-like, -1 rate-like; see the header).  A field F
-- gains F_lo and F_hi: one naming rule for every result.
M.FIELDS = {
  train = { step_s = 1, train_s = 1, days = 1, cost = 1, tokens_per_s = -1,
            tokens_per_s_gpu = -1, mfu = -1, hfu = -1, model_tflops_gpu = -1,
            hw_tflops_gpu = -1 },
  rl = { step_s = 1, run_s = 1, hours = 1, cost = 1, cost_step = 1, cost_1k_prompts = 1,
         samples_per_s = -1, tokens_per_s = -1, tokens_per_s_gpu = -1,
         gen_tokens_per_s = -1 },
  -- gp.comm's: its time, and the rates work / time
  collective = { time = 1, algbw = -1, busbw = -1 },
  infer = { ttft_s = 1, itl_s = 1, tpot_s = 1, itl_batch1_s = 1, cost_per_mtok = 1,
            tokens_per_s = -1, per_gpu = -1, stream_tokens_per_s = -1,
            input_tokens_per_s = -1, decode_per_gpu = -1, prefill_per_gpu = -1,
            tokens_per_s_per_dollar_hour = -1 },
}

-- Give result res of gp.train / gp.rl / gp.infer (kind) its ranges: every
-- M.FIELDS number F gains F_lo and F_hi, and res.range says where they
-- came from: { kind, level = 0.8, cases = n, regime = "vendor=NVIDIA/stack=megatron/...",
-- novel = "gen cdna3" (only for a job like no published run) }.  job: the
-- call's options.  Returns res.  A few multiplications per result: never
-- called per layout of a sweep, only on the results it returns.
function M.apply(kind, job, res, cat)
  if type(res) ~= "table" or not M.FIELDS[kind] then return res end
  local iv = M.lookup(kind, M.regime(kind, job, res, cat))
  if not iv then return res end
  for field, o in pairs(M.FIELDS[kind]) do
    local v = res[field]
    if type(v) == "number" and v > 0 and v < math.huge then
      if o == 1 then res[field .. "_lo"], res[field .. "_hi"] = v * iv.lo, v * iv.hi
      else res[field .. "_lo"], res[field .. "_hi"] = v / iv.hi, v / iv.lo end
    end
  end
  res.range = { kind = kind, level = iv.level, cases = iv.cases, regime = iv.key,
                novel = iv.novel and table.concat(iv.novel, ", ") or nil }
  return res
end

-- "38.5 days (33.1-45.0)": res[field] and its range in one format (fmt,
-- a string.format pattern), unit (optional) after the value, for the
-- commands' text; scale (optional) multiplies all three (s -> ms).  A
-- range of a job like no published run ends in "*" (M.note says why).
function M.text(res, field, fmt, unit, scale)
  local v = res[field]
  if type(v) ~= "number" then return nil end
  scale = scale or 1
  local s = string.format(fmt, v * scale) .. (unit and (" " .. unit) or "")
  local lo, hi = res[field .. "_lo"], res[field .. "_hi"]
  if not lo then return s end
  return string.format("%s (" .. fmt .. "-" .. fmt .. ")%s", s, lo * scale, hi * scale,
    res.range and res.range.novel and "*" or "")
end

-- "4.5 hours (3.1-9.0)": the duration res[field] and its range in the
-- unit its magnitude picks (units.duration_unit, every command's rule);
-- per_day: the field's units in a day (1 for days, 24 for rl's hours);
-- nil without the field.
function M.duration_text(res, field, per_day)
  local v = res[field]
  if type(v) ~= "number" then return nil end
  per_day = per_day or 1
  local units = require "gpuplan.units"
  local k, u = units.duration_unit(v / per_day)
  local scale = k / per_day
  return M.text(res, field, units.amount_fmt(v * scale, 1), u, scale)
end

-- What the ranges of res are, said plainly (nil without): the commands
-- print it after "ranges: ".
function M.note(res)
  local r = res and res.range
  if not r then return nil end
  if r.novel then
    return string.format("*no published run like this (no validated %s case has %s): "
      .. "the %d%% range of all %d %s cases", r.kind, r.novel, 100 * r.level, r.cases, r.kind)
  end
  return string.format("where %d%% of published runs like this landed (%d cases: %s)",
    100 * r.level, r.cases, r.regime == "" and "all of the kind" or r.regime)
end

-- Is the ranking of a over b on field a coin flip?  True when each
-- one's value lies inside the other's 80% range: the model's own error,
-- as the published runs show it, is larger than the difference.
function M.coin_flip(a, b, field)
  local va, vb = a[field], b[field]
  local alo, ahi, blo, bhi = a[field .. "_lo"], a[field .. "_hi"], b[field .. "_lo"],
    b[field .. "_hi"]
  if not (va and vb and alo and blo) then return false end
  return va >= blo and va <= bhi and vb >= alo and vb <= ahi
end

return M
