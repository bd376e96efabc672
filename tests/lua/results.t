-- The result names (gpuplan.results): one vocabulary for gp.train, the
-- rows of gp.sweep, the candidate a policy or `where` function reads,
-- gp.rl and gp.infer, every field a function returns declared for it (the
-- Lua reference, docs/lua.md, is generated from the declarations).
local t = require "tap"
local gp = require "gpuplan"
local results = require "gpuplan.results"

-- Counts left floats (declared below, with why).
local FLOAT_COUNTS = { params = true, trainable = true, tokens_per_step = true, tokens = true }

-- Every key of r is declared for the result `kind`.
local function declared(kind, r, label)
  local missing = {}
  for k in pairs(r) do
    local f = results.BY_NAME[k]
    if not (f and f.results[kind]) then missing[#missing + 1] = tostring(k) end
  end
  table.sort(missing)
  t.is(table.concat(missing, " "), "", label .. ": every field is declared for " .. kind
    .. " in gpuplan.results")
  -- A count reads as one: an integer while whole (tostring 16, not 16.0),
  -- as gpus and tp always were (the engine's doubles pushed by
  -- lgp_pushcount); train's memory table is gp.memory's.  Left floats:
  -- params, trainable and tokens_per_step, whose products (6 N D, a
  -- step's FLOP) pass Lua's integer range, where integer arithmetic
  -- wraps around without a word; tokens, as given.
  local floats = {}
  local function whole_floats(x, prefix)
    for k, v in pairs(x) do
      local f = results.BY_NAME[k]
      if f and f.unit == "count" and math.type(v) == "float" and v == math.floor(v)
         and not FLOAT_COUNTS[k] then
        floats[#floats + 1] = prefix .. k
      end
    end
  end
  whole_floats(r, "")
  if kind == "train" and type(r.memory) == "table" then whole_floats(r.memory, "memory.") end
  table.sort(floats)
  t.is(table.concat(floats, " "), "", label .. ": every whole count is a Lua integer")
end

local job = { model = "llama2-7b", gpu = "h100-sxm", gpus = 16, method = "pretrain",
              seq = 4096, tokens = 1e10, price = "$2/h" }
local function with(extra)
  local o = {}
  for k, v in pairs(job) do o[k] = v end
  for k, v in pairs(extra or {}) do o[k] = v end
  return o
end

-- gp.memory: training with offload, inference, and recompute chosen.
declared("memory", gp.memory { model = "llama2-7b", gpu = "h100-sxm", method = "qlora",
                               zero = 1, offload = "optimizer" }, "memory qlora")
declared("memory", gp.memory { model = "llama2-7b", gpu = "h100-sxm", method = "infer" },
  "memory infer")
declared("memory", gp.memory { model = "llama2-7b", gpu = "h100-sxm", recompute = "auto" },
  "memory auto")
-- DeepSpeed ZeRO-3: the gradients' phase (grad_phase, grad_bytes)
declared("memory", gp.memory { model = "llama2-7b", gpu = "h100-sxm", gpus = 8, zero = 3,
                               stack = "deepspeed" }, "memory deepspeed zero 3")

-- Tolerances: 1e-12 relative where one side is the other after one
-- division (rounding only); 1e-9 where the two come from separate runs of
-- the same arithmetic (gp.sweep's row and gp.train of its layout).

-- gp.train: with a run, the scaling, recompute chosen.
local tr = gp.train(with { tp = 2, zero = 1, scaling = true, recompute = "auto" })
declared("train", tr, "train")
-- days is train_s in days (86400 s a day); train_s is tokens over tokens/s.
t.near(tr.days, tr.train_s / 86400, 1e-12, "train: days = train_s / 86400")
t.near(tr.train_s, 1e10 / tr.tokens_per_s, 1e-12, "train: train_s = tokens / tokens_per_s")

declared("train", gp.train { model = "llama3-70b", gpu = "h100-sxm", tokens = 1e9 },
  "train that does not fit")

-- gp.sweep: the result, its rows, and what a where and a policy function read.
-- (copied when read: a candidate that ranks becomes a row)
local function copy(c)
  local o = {}
  for k, v in pairs(c) do o[k] = v end
  return o
end
local seen, scored = nil, nil
local s = gp.sweep(with { gpus = 16, top = 3, where = function(c)
  seen = seen or copy(c)
  return true
end })
declared("sweep", s, "sweep")
t.ok(#s.results > 0, "the search ranks layouts")
for i, row in ipairs(s.results) do declared("plan", row, "plan row " .. i) end
local sp = gp.sweep(with { gpus = 16, top = 3, policy = function(c)
  scored = scored or copy(c)
  return c.days
end })
for i, row in ipairs(sp.results) do declared("plan", row, "policy's plan row " .. i) end
for name, c in pairs { where = seen, policy = scored } do
  declared("candidate", c, name .. "'s candidate")
  -- The names of gp.train's result, not the engine's.
  for _, k in ipairs { "step_s", "train_s", "days", "mem_gib", "mem_bytes", "cost",
                       "tokens_per_s", "mfu" } do
    t.ok(type(c[k]) == "number", name .. "'s candidate has " .. k)
  end
  for _, k in ipairs { "step", "train_time", "mem_total" } do
    t.ok(c[k] == nil, name .. "'s candidate has no " .. k .. " (one name each)")
  end
  t.near(c.days, c.train_s / 86400, 1e-12, name .. ": days = train_s / 86400")
  t.near(c.mem_gib, c.mem_bytes / 2 ^ 30, 1e-12, name .. ": mem_gib = mem_bytes / 2^30")
end
-- A row is the candidate of the same layout priced by gp.train: the same
-- step and run time (the same train_step, so exact to rounding).
local best = s.results[1]
local again = gp.train(with { tp = best.tp, pp = best.pp, cp = best.cp, zero = best.zero,
                              sp = best.sp, batch = best.micro_batch,
                              recompute = best.recompute, vpp = best.vpp })
t.near(best.step_s, again.step_s, 1e-9, "plan row step_s = gp.train's step_s")
t.near(best.days, again.days, 1e-9, "plan row days = gp.train's days")
t.near(best.mem_bytes, again.memory.total, 1e-9, "plan row mem_bytes = gp.train's memory.total")

-- gp.train_job: job:step's fields are gp.train's names; every declared one reads.
local tj = gp.train_job { model = "llama2-7b", gpu = "h100-sxm", gpus = 16,
                          method = "pretrain", seq = 4096, tokens = 1e10 }
local r = tj:step { tp = 2, zero = 1 }
for _, f in ipairs(results.FIELDS) do
  if f.results.job_step then
    t.ok(pcall(function() return r[f.name] end), "job:step result reads " .. f.name)
  end
end
-- job:step's counts as gp.train's: an integer.
t.is(math.type(r.microbatches), "integer", "job:step microbatches is an integer")
-- A count that is not whole stays the number it is: an interleaved
-- schedule's first stage holds p (1 + (p - 1) / (p v)) micro-batches,
-- 4 (1 + 3/8) = 5.5 at pp 4, vpp 2 (Korthikanti et al. 2022 sec. 4.2.3).
t.is(tostring(gp.train { model = "llama2-7b", gpu = "h100-sxm", gpus = 16, seq = 4096,
                         pp = 4, vpp = 2 }.memory.inflight), "5.5",
  "inflight 5.5 at pp 4, vpp 2: a float")
t.near(r.step_s, gp.train { model = "llama2-7b", gpu = "h100-sxm", gpus = 16,
                            method = "pretrain", seq = 4096, tp = 2, zero = 1 }.step_s,
  1e-12, "job:step step_s = gp.train's")

-- gp.rl, gp.infer (dense and MoE), gp.infer_plan, gp.comm.
declared("rl", gp.rl { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, steps = 10,
                       price = "$2/h" }, "rl")
declared("infer", gp.infer { model = "llama2-7b", gpu = "h100-sxm", price = "$2/h" },
  "infer dense")
declared("infer", gp.infer { model = "deepseek-v3", gpu = "h20", gpus = 16, ep = 16,
                             dp_attention = true, weights = "fp8", input = 4096,
                             output = 1536, mtp = 1, itl_max = "50ms", price = "$2/h" },
  "infer MoE")
declared("infer", gp.infer { model = "llama3.1-405b", gpu = "rtx-4090" }, "infer that does not fit")
-- Disaggregated pools return the pools' balance, the KV transfer, the
-- prefill pool's layout and the same GPUs colocated (pool_ratio,
-- kv_transfer_s, prefill_layout and coloc were returned and documented in
-- docs/serving.md, but not declared, so docs/lua.md left them out).
declared("infer", gp.infer { model = "deepseek-v3", gpu = "h20", gpus = 24, ep = 16,
                             dp_attention = true, weights = "fp8", kv = "fp8", input = 4096,
                             output = 1536, batch = 32, mtp = 1, nics = 4, disagg = true,
                             prefill_gpus = 8, prefill_tp = 8, prefill_ep = 1,
                             prefill_dp_attention = false, prefill_tokens = 8192,
                             price = "$2/h" },
  "infer MoE disaggregated")
declared("rl", gp.rl { model = "llama3-70b", gpu = "h100-sxm", gpus = 8, steps = 10 },
  "rl that does not fit")
-- Separate pools echo the staleness (returned, not declared before).
declared("rl", gp.rl { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 16, colocated = false,
                       rollout_gpus = 8, steps = 10 }, "rl on separate pools")
declared("infer_plan", gp.infer_plan { model = "deepseek-v3", gpu = "h200-sxm", target = 1e5 },
  "infer_plan")
declared("comm", gp.comm { op = "all_reduce", bytes = 2 ^ 30, gpus = 16, system = "dgx-h100" },
  "comm")
-- gp.roofline: its fields were listed by its signature alone, none in the
-- result fields (device, ridges, op and ops' roofline rows, infer).
declared("roofline", gp.roofline { gpu = "h100-sxm", op = { flop = 1e12, bytes = 1e9 },
                                   model = "llama2-7b" }, "roofline")

-- comm's ppn on an uneven fill is what its declaration says: 12 GPUs of
-- 8-GPU nodes are 8 + 4, ppn the fewest, 4 (engine/comm.c, the launcher's
-- placement); 20 are 8 + 8 + 4, ppn 4 again (the reference said "ranks
-- per node" alone).
do
  local a = gp.comm { op = "all_reduce", bytes = 2 ^ 30, gpus = 12, system = "dgx-h100" }
  local b = gp.comm { op = "all_reduce", bytes = 2 ^ 30, gpus = 20, system = "dgx-h100" }
  t.is(string.format("%d %d %d %d", a.nodes, a.ppn, b.nodes, b.ppn), "2 4 3 4",
    "comm: an uneven fill's ppn is its fewest ranks on a node")
  t.ok(results.BY_NAME.ppn.help:find("the fewest on one of its nodes", 1, true),
    "... as results.lua declares it")
end

-- Each declared result kind is one of M.RESULTS; each field says what it is.
local kinds = {}
for _, k in ipairs(results.RESULTS) do kinds[k[1]] = true end
for _, f in ipairs(results.FIELDS) do
  for k in pairs(f.results) do t.ok(kinds[k], f.name .. ": result '" .. k .. "' is declared") end
  t.ok(f.help ~= "" and next(f.results) ~= nil, f.name .. ": has help and a result")
end

-- A declared range is what `gpuplan merge` checks a plan row's number by,
-- from the one declaration: scaling > 0 with no bound above 2 (a row of
-- Qwen3-30B-A3B on 32 H100s is above 5 against the 8 it first fits on).
do
  local R = require("gpuplan.cmd.merge").RESULT
  local d = results.BY_NAME.scaling.range
  t.is(string.format("%s %.17g %.17g %s", R.scaling[1], R.scaling[2], R.scaling[3],
                     tostring(R.scaling.gt)),
       string.format("number %.17g %.17g %s", d[1], d[2], tostring(d.gt)),
       "merge checks scaling by its declared range")
  t.ok(R.scaling[3] > 5 and R.scaling.gt and R.scaling[2] == 0, "scaling: > 0, above 5 taken")
end

t.done_testing()
