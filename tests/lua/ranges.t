-- gpuplan.ranges: the 80% ranges from the validation record -- the shipped
-- data file is current, the leave-one-out coverage is what the README
-- states, and the pieces (ranks, pooling, orientation, regimes) do what
-- lua/gpuplan/ranges.lua says.
local t = require "tap"
local validate = require "gpuplan.validate"
local ranges = require "gpuplan.ranges"

-- The built-in catalog only, as `make ranges` uses.
local cat = require("gpuplan").catalog { dirs = { "catalog" } }
local rows = {}
for _, c in ipairs(validate.read("validation/cases.json")) do
  rows[#rows + 1] = validate.predict(c, cat)
end

-- 1. validation/ranges.lua is what the shipped cases give now.
local f = assert(io.open("validation/ranges.lua", "rb"))
local shipped = f:read("a")
f:close()
local fresh = ranges.generate(rows)
if not t.ok(fresh == shipped, "validation/ranges.lua is current") then
  t.diag("validation/ranges.lua is stale: the cases or their predictions changed.\n"
    .. "Regenerate it with `make ranges` and commit it.")
  local a, b = {}, {}
  for l in shipped:gmatch("[^\n]+") do a[#a + 1] = l end
  for l in fresh:gmatch("[^\n]+") do b[#b + 1] = l end
  for i = 1, math.max(#a, #b) do
    if a[i] ~= b[i] then
      t.diag("first difference, line " .. i .. ":\n  file: " .. tostring(a[i])
        .. "\n  now:  " .. tostring(b[i]))
      break
    end
  end
end
-- The same rows give the same bytes (sorted keys, fixed formats).
t.is(ranges.generate(rows), fresh, "generating twice gives the same file")

-- 2. Leave-one-out coverage: every kind with ten or more predicted cases
-- has at least 75% of its cases inside the range the others give (the
-- nominal 80%, less five points), and at most the coverage the conformal
-- ranks themselves promise plus the larger of five points and one binomial
-- standard error, sqrt(0.8 x 0.2 / n).  The ranks promise
-- (k_hi - k_lo) / (m + 1) for a case whose range rests on m others (3.
-- below): 80% at m = 9 and 19, but 9/11 = 81.8% at m = 10 and 14/16 =
-- 87.5% at m = 15, so a kind of many 10- to 18-case regimes is promised
-- more than 80% (train: 83.8% over its 252 cases) -- a kind may cover that
-- plus its sampling noise (30 cases: +- 7.3 points, one case is 3.3), but
-- not a range grown wide for nothing.  Coverage moves in steps of one case
-- (1 / n): the upper bound admits the count of cases it falls within,
-- ceil(n x bound) -- at 32 cases 0.871 x 32 = 27.9, so 28 (87.5%).  The
-- lower bound counts cases the same way, the count it falls within:
-- floor(n x 0.75) -- at ten cases (the first size this test holds a kind
-- to) 7.5, so 7 (70%), one case in ten being ten points.
local promised = {}
do
  local points = {}
  for _, r in ipairs(rows) do
    local p = ranges.point(r)
    if p then
      points[r.kind] = points[r.kind] or {}
      table.insert(points[r.kind], p)
    end
  end
  for kind, pts in pairs(points) do
    local sum, n = 0, 0
    for i, p in ipairs(pts) do
      local iv = ranges.interval(pts, p.f, i)
      if iv then
        local m = iv.cases
        local klo = math.max(1, math.floor((1 - ranges.LEVEL) / 2 * (m + 1)))
        local khi = math.min(m, math.ceil((1 + ranges.LEVEL) / 2 * (m + 1)))
        sum, n = sum + (khi - klo) / (m + 1), n + 1
      end
    end
    promised[kind] = n > 0 and sum / n or ranges.LEVEL
  end
end
ranges.attach(rows)
for _, s in ipairs(validate.summarise(rows)) do
  if s.predicted >= 10 and not s.kind:find(" ") then
    local hi = math.max(0.80, promised[s.kind] or 0.80) + math.max(0.05, math.sqrt(0.8 * 0.2 / s.ranged))
    hi = math.ceil(hi * s.ranged - 1e-9) / s.ranged
    local lo = math.floor(0.75 * s.ranged + 1e-9) / s.ranged
    t.ok(s.coverage and s.coverage >= lo - 1e-12 and s.coverage <= hi,
      string.format("%s: leave-one-out coverage %.1f%% of %d cases within %.1f-%.1f%%",
        s.kind, 100 * (s.coverage or 0), s.ranged, 100 * lo, 100 * hi))
  end
end

-- 3. Conformal ranks: of m = 21 sorted values the floor(0.1 * 22) = 2nd
-- and ceil(0.9 * 22) = 20th; of m = 8, the extremes (ranks clamp to 1..m).
local s21 = {}
for i = 1, 21 do s21[i] = i end
local lo, hi = ranges.ends(s21)
t.is(lo, 2, "m = 21: the 2nd value is the lower end")
t.is(hi, 20, "m = 21: the 20th value is the upper end")
lo, hi = ranges.ends { 1, 2, 3, 4, 5, 6, 7, 8 }
t.ok(lo == 1 and hi == 8, "m = 8: the extremes")

-- 4. Pooling: a regime with fewer than MIN_CASES (8) cases takes its
-- parent's range.  Ten points: eight of stack=a with y = 0 .. 0.7 and two
-- of stack=b with y = 5; a job of stack=b has only two cases of its own,
-- so its range is the kind's over all ten: ranks floor(0.1 * 11) = 1 and
-- ceil(0.9 * 11) = 10 of the sorted ys: exp(0) = 1 and exp(5).
local pts = {}
for i = 0, 7 do pts[#pts + 1] = { f = { stack = "a" }, y = i / 10 } end
pts[#pts + 1] = { f = { stack = "b" }, y = 5 }
pts[#pts + 1] = { f = { stack = "b" }, y = 5 }
local iv = ranges.interval(pts, { stack = "b" })
t.is(iv.key, "", "two cases of a regime: pooled into the kind")
t.is(iv.cases, 10, "the kind's ten cases")
t.near(iv.hi, math.exp(5), 1e-12, "upper end: the largest of ten, exp(5)")
-- stack=a has its own eight: the extremes exp(0) and exp(0.7).
iv = ranges.interval(pts, { stack = "a" })
t.is(iv.key, "stack=a", "eight cases: the regime's own range")
t.near(iv.hi, math.exp(0.7), 1e-12, "its largest, exp(0.7)")
-- Left out, stack=a has seven: pooled again.
iv = ranges.interval(pts, { stack = "a" }, 1)
t.is(iv.key, "", "leave-one-out leaves seven: pooled into the kind")

-- 5. Orientation: a factor range [0.9, 1.2] of a time-like value puts a
-- 100 s step between 90 and 120 s, and a 100 tokens/s rate (work / time)
-- between 100 / 1.2 = 83.3 and 100 / 0.9 = 111.1.
local b1, b2 = ranges.bounds("step_time_s", 100, { lo = 0.9, hi = 1.2 })
t.ok(math.abs(b1 - 90) < 1e-9 and math.abs(b2 - 120) < 1e-9, "time-like: [v lo, v hi]")
b1, b2 = ranges.bounds("tokens_per_s_per_gpu", 100, { lo = 0.9, hi = 1.2 })
t.ok(math.abs(b1 - 100 / 1.2) < 1e-9 and math.abs(b2 - 100 / 0.9) < 1e-9,
  "rate-like: [v / hi, v / lo]")

-- 6. Regimes from a job's options, as gp.train takes them.
local r = ranges.regime("train", { model = "llama3-70b", gpu = "h100-sxm", gpus = 64, pp = 4 },
  nil, cat)
local V = "vendor=NVIDIA"
t.is(table.concat(ranges.path(r), ";"), ";" .. V .. ";" .. V .. "/stack=megatron;"
  .. V .. "/stack=megatron/moe=dense;"
  .. V .. "/stack=megatron/moe=dense/style=pipeline;" .. V .. "/stack=megatron/moe=dense/style=pipeline/"
  .. "scale=nodes;" .. V .. "/stack=megatron/moe=dense/style=pipeline/scale=nodes/gen=hopper",
  "pretrain by default: the maker first, then megatron, dense, pp 4 pipeline, 64 / 8 = 8 nodes, hopper")
r = ranges.regime("train", { model = "llama3-8b", gpu = "a100-sxm-80gb", gpus = 8,
  method = "full", zero = 3 }, nil, cat)
t.ok(r.stack == "hf" and r.style == "sharded" and r.scale == "node",
  "full fine-tuning: hf; ZeRO-3: sharded; 8 GPUs: one node")
r = ranges.regime("train", { model = "llama3-8b", gpu = "h100-sxm", gpus = 256 }, nil, cat)
t.is(r.scale, "cluster", "256 GPUs = 32 nodes of 8: cluster")

-- The card's balance, for serving only: the ridge point dense bf16 peak /
-- memory bandwidth against CUT_RIDGE = 64 FLOP/B.  H20: 148e12 / 4.0e12 =
-- 37 -> cut; H200: 989e12 / 4.8e12 = 206 -> full (catalog figures, exact
-- comparisons, no tolerance needed).  A training job has no balance.
r = ranges.regime("infer", { model = "llama3-8b", gpu = "h20", gpus = 1 }, nil, cat)
t.is(r.balance, "cut", "infer on h20: ridge 37 FLOP/B < 64, cut")
t.is(table.concat(ranges.path(r), ";"):match("[^;]*$"),
  "vendor=NVIDIA/stack=graphs/moe=dense/style=single/scale=node/balance=cut/gen=hopper",
  "balance sits before gen in the path")
r = ranges.regime("infer", { model = "llama3-8b", gpu = "h200-sxm" }, nil, cat)
t.is(r.balance, "full", "infer on h200-sxm: ridge 206 FLOP/B, full")
r = ranges.regime("train", { model = "llama3-8b", gpu = "h20", gpus = 8 }, nil, cat)
t.is(r.balance, nil, "train on h20: no balance feature")

-- 7. The shipped model: a card of an architecture no training case has
-- (MI355X, cdna4: the file's AMD training runs are MLPerf's MI300X and
-- MI325X, cdna3) is "no published run like this" and gets the kind's
-- range, whatever regime the rest of its features would reach.
local data = ranges.model()
t.ok(data and data.kinds.train, "the shipped model has a train kind")
local g = ranges.lookup("train", { vendor = "AMD", stack = "megatron", moe = "dense",
  style = "pipeline", scale = "nodes", gen = "cdna4" }, data)
t.ok(g and g.novel and #g.novel == 1 and g.novel[1] == "gen cdna4",
  "AMD cdna4 training: no published run like this (AMD itself has cdna3 runs)")
t.is(g and g.key, "", "its range is the kind's")
g = ranges.lookup("train", { vendor = "NVIDIA", stack = "megatron", moe = "dense",
  style = "pipeline", scale = "nodes", gen = "hopper" }, data)
t.ok(g and not g.novel and g.key ~= "", "megatron on hopper: a regime's own range")

-- 8. Results carry F_lo / F_hi.  gp.train of Megatron pretraining on 64
-- H100 with PP 4 reaches the regime the lookup gives; a time (step_s,
-- days, cost) is value x lo .. value x hi, a rate (tokens_per_s) value /
-- hi .. value / lo, exactly (the same multiplications).
local gp = require "gpuplan"
local job = { model = "llama3-70b", gpu = "h100-sxm", gpus = 64, method = "pretrain", tp = 8,
              pp = 4, zero = 1, tokens = 1e12, price = "$2.00/h", cat = cat }
local tr = gp.train(job)
local want = ranges.lookup("train", ranges.regime("train", job, tr, cat))
t.is(tr.range.regime, want.key, "gp.train: the range of its regime (" .. want.key .. ")")
t.is(tr.range.cases, want.cases, "with its case count")
t.ok(tr.range.novel == nil, "Megatron on H100: published runs like it exist")
t.near(tr.step_s_lo, tr.step_s * want.lo, 1e-12, "step_s_lo = step_s x lo")
t.near(tr.days_hi, tr.days * want.hi, 1e-12, "days_hi = days x hi")
t.near(tr.cost_lo, tr.cost * want.lo, 1e-12, "cost_lo = cost x lo")
t.near(tr.tokens_per_s_lo, tr.tokens_per_s / want.hi, 1e-12, "tokens_per_s_lo = rate / hi")
t.near(tr.tokens_per_s_hi, tr.tokens_per_s / want.lo, 1e-12, "tokens_per_s_hi = rate / lo")
-- A card no training case ran on: the kind's range, said so.
local mi = gp.train { model = "llama3-8b", gpu = "mi355x", gpus = 8, cat = cat }
t.ok(mi.range and mi.range.novel == "gen cdna4" and mi.range.regime == "",
  "gp.train on MI355X: no published run like this, the kind's range")
t.like(ranges.note(mi),
  "^%*no published run like this %(no validated train case has gen cdna4%)",
  "and the note says so")
-- gp.infer and gp.rl: their times and rates too.
local inf = gp.infer { model = "llama3-8b", gpu = "h100-sxm", cat = cat }
t.ok(inf.ttft_s_lo and inf.ttft_s_lo < inf.ttft_s_hi and inf.tokens_per_s_hi,
  "gp.infer: ttft_s and tokens_per_s ranges")
local rr = gp.rl { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 8, zero = 3, recompute = "full",
                   stack = "megatron", cat = cat }
t.ok(rr.step_s_lo and rr.range.novel == nil and rr.range.regime:find("^vendor=NVIDIA/stack=megatron"),
  "gp.rl on the Megatron stack: the NeMo RL cases' range")

-- 9. The coin flip: 100 (90-120) and 110 (99-132) each hold the other's
-- value; 100 (90-120) and 125 (112.5-150) do not (125 > 120).
local a = { days = 100, days_lo = 90, days_hi = 120 }
t.ok(ranges.coin_flip(a, { days = 110, days_lo = 99, days_hi = 132 }, "days"),
  "110 inside 90-120 and 100 inside 99-132: a coin flip")
t.ok(not ranges.coin_flip(a, { days = 125, days_lo = 112.5, days_hi = 150 }, "days"),
  "125 outside 90-120: not a coin flip")
t.ok(not ranges.coin_flip(a, { days = 101 }, "days"), "no range: no coin flip")

-- 10. A range holds its own point.  Factors all on one side of 1 (log
-- factors sorted: -0.04 .. -0.01, measured 1-4% under every prediction)
-- give conformal ends both below 0; the span widens the top to 0, the
-- point, and leaves the bottom: exp(-0.04) = 0.961.  A two-sided list
-- keeps its ends exactly.
local below = { -0.04, -0.035, -0.03, -0.025, -0.02, -0.018, -0.015, -0.012, -0.01 }
local slo, shi = ranges.span(below)
t.ok(slo == -0.04 and shi == 0, "one-sided factors: the range reaches up to the point")
local above = { 0.045, 0.05, 0.06, 0.07, 0.08, 0.085, 0.087, 0.09, 0.095 }
slo, shi = ranges.span(above)
t.ok(slo == 0 and shi == 0.095, "and down to it from above")
local both = { -0.2, -0.1, -0.05, -0.02, 0.01, 0.03, 0.06, 0.1, 0.3 }
local elo, ehi = ranges.ends(both)
slo, shi = ranges.span(both)
t.ok(slo == elo and shi == ehi, "a range straddling the point is unchanged")
-- Every shipped regime: lo <= 1 <= hi, so v * lo <= v <= v * hi.
local data = dofile("validation/ranges.lua")
local bad = {}
for kind, k in pairs(data.kinds) do
  for key, iv in pairs(k.regimes) do
    if not (iv.lo <= 1 and iv.hi >= 1) then bad[#bad + 1] = kind .. ":" .. key end
  end
end
t.is(#bad, 0, "every shipped range holds the point: " .. table.concat(bad, ", "))
-- The hf multi-node FSDP job plan printed as "0.91 (0.87-0.90)": its
-- range now holds its step time.
local hf = gp.train { model = "llama3-8b", gpu = "h100-sxm", gpus = 16, stack = "hf",
                      fsdp = "full_shard", seq = 2048, global_batch = 64, batch = 4,
                      cat = cat }
t.ok(hf.step_s_lo <= hf.step_s and hf.step_s <= hf.step_s_hi,
  string.format("hf FSDP on 2 nodes: %.3f in %.3f-%.3f (%s)", hf.step_s, hf.step_s_lo,
    hf.step_s_hi, hf.range.regime))

-- docs/validation.md ("The 80% ranges") illustrates the widening to the
-- prediction with one regime's figures: "(the N DeepSpeed data-parallel
-- V100 training runs in one node all take a-b% longer than predicted,
-- factors ...: their range is 1.000-...)".  They move with the cases and the model, so they are
-- recomputed here from the shipped cases: the regime's case count, its
-- smallest and largest factor (measured / predicted step time; as
-- percentages longer, to whole points) and the range the shipped file
-- gives it.  A change that moves them fails until the sentence is edited.
do
  local key = "vendor=NVIDIA/stack=deepspeed/moe=dense/style=data/scale=node/gen=volta"
  local fs = {}
  for _, r in ipairs(rows) do
    local p = r.kind == "train" and ranges.point(r)
    if p then
      for _, k in ipairs(ranges.path(p.f)) do
        if k == key then fs[#fs + 1] = math.exp(p.y) end
      end
    end
  end
  table.sort(fs)
  local data = dofile("validation/ranges.lua")
  local iv = data.kinds.train.regimes[key]
  local fh = assert(io.open("docs/validation.md", "rb"))
  local doc = fh:read("a"):gsub("%s+", " ")
  fh:close()
  local want = #fs > 0 and iv and string.format("(the %d DeepSpeed data-parallel V100 training runs in one node all take "
    .. "%.0f-%.0f%% longer than predicted, factors %.3f-%.3f: their range is %.3f-%.3f)",
    #fs, 100 * (fs[1] - 1), 100 * (fs[#fs] - 1), fs[1], fs[#fs], iv.lo, iv.hi) or "?"
  if not t.ok(doc:find(want, 1, true) ~= nil,
              "docs/validation.md states the DeepSpeed V100 regime's figures as they are") then
    t.diag("now: " .. want)
  end
end
t.done_testing()
