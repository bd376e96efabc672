-- A new buyer's walk (session 76): items seen, not fixed, in Lua.  Each
-- check fails on the tree before its fix.  Run with
-- ./gpuplan run tests/lua/walkfix76.t.
local t = require "tap"
local gp = require "gpuplan"

-- 1. gp.comm{bytes = "1G"}: nccl-tests' size letters are powers of 1024
-- (NVIDIA/nccl-tests src/common.cu parsesize: "case 'G': case 'g': units
-- = 1024*1024*1024"), as the comm command's --min 1G reads them.  It was
-- "unknown unit 'G'".  The same collective as bytes = 2^30 exactly (one
-- reader, the same number: no tolerance).
do
  local s = gp.comm { op = "all_reduce", gpu = "h100-sxm", gpus = 8, bytes = "1G" }
  local n = gp.comm { op = "all_reduce", gpu = "h100-sxm", gpus = 8, bytes = 2 ^ 30 }
  t.is(s.bytes, 1073741824, "comm: bytes = '1G' is 1024^3 = 1073741824 B")
  t.is(s.time, n.time, "comm: '1G' priced as 2^30 B")
  -- lower case and K: 4k = 4 x 1024 = 4096 B, as nccl-tests -b 4k
  t.is(gp.comm { op = "all_reduce", gpu = "h100-sxm", gpus = 8, bytes = "4k" }.bytes, 4096,
    "comm: '4k' is 4 x 1024 = 4096 B")
  -- "1GB" stays the units' 10^9 B
  t.is(gp.comm { op = "all_reduce", gpu = "h100-sxm", gpus = 8, bytes = "1GB" }.bytes,
    1000000000, "comm: '1GB' stays 10^9 B")
  -- a unit neither reader knows names both forms
  t.raises_here(function() gp.comm { op = "all_reduce", gpu = "h100-sxm", gpus = 8, bytes = "1Q" } end,
    "comm: bytes: bad bytes '1Q': unknown unit 'Q' (use B, KB, MB, GB, TB, KiB, MiB, GiB, TiB), "
    .. "or nccl-tests' 1K, 1M, 1G (powers of 1024)", "comm: an unknown unit names both size forms")
end

-- 2. gp.sweep{policy = "cheapest"}: the CLI's --policy name, taken as the
-- line takes it (the same table as gp.policy.cheapest{}): the same best
-- layout and cost, exactly.  fewest-gpus in the CLI's spelling too.
do
  local job = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, tokens = 1e9 }
  local function with(p)
    local q = {}
    for k, v in pairs(job) do q[k] = v end
    q.policy = p
    return gp.sweep(q)
  end
  local s, tb = with("cheapest"), with(gp.policy.cheapest {})
  t.is(s.results[1].layout, tb.results[1].layout, "sweep: policy = 'cheapest' ranks as gp.policy.cheapest{}")
  t.is(s.results[1].cost, tb.results[1].cost, "sweep: ... the same cost")
  t.is(s.key, "cost", "sweep: policy = 'cheapest' ranks by cost")
  t.is(with("fewest-gpus").key, "gpus", "sweep: policy = 'fewest-gpus' (the CLI's spelling) ranks by gpus")
  t.is(with("best_per_dollar").key, "per_dollar", "sweep: policy = 'best_per_dollar' ranks per dollar")
  -- monthly needs its budget: refused with the call to write
  t.raises_here(function() with("monthly") end,
    "(got string 'monthly': gp.policy.monthly{budget = ...})", "sweep: policy = 'monthly' names its call")
end

-- 3. gp.infer with a list of cards: a card the model fills at TP1 gets
-- larger_tp, the size --target would try that serves the token cheaper.
-- Llama 3.1 70B FP8 on one h100-sxm: weights 72.66 GB of 76.44 GB after
-- the margin, room for one sequence (batch 1, 15.7 USD/Mtok); at TP2 each
-- GPU holds 36.3 GB of weights, so about 40 GB of KV (0.38 GB a sequence
-- a GPU): batch ~105, under 1 USD/Mtok.  h200-sxm (135 GB after the
-- margin) batches 83 at TP1, and its larger sizes cost more per token
-- (the all-reduces): no larger_tp.  The table's rows stay TP1 (the list
-- prices the deployment given, as `infer --gpu ID` alone does).
do
  local r = gp.infer { model = "llama3.1-70b", gpu = { "h100-sxm", "h200-sxm" }, weights = "fp8" }
  local by = {}
  for _, x in ipairs(r.per_card) do by[x.gpu] = x end
  local h = by["h100-sxm"]
  t.is(h.tp, 1, "infer cards: the h100-sxm row stays TP1")
  t.is(h.batch, 1, "infer cards: TP1 on h100-sxm holds one sequence")
  t.ok(h.larger_tp ~= nil, "infer cards: h100-sxm gets larger_tp")
  if h.larger_tp then
    t.is(h.larger_tp.tp, 2, "infer cards: larger_tp is TP2 (the cheapest per token)")
    -- cheaper by far: the TP1 cost over 10x TP2's (15.7 against ~0.95:
    -- a 105-sequence batch against one, at twice the GPUs)
    t.ok(h.larger_tp.cost_per_mtok * 10 < h.cost_per_mtok,
      string.format("infer cards: TP2 under a tenth of TP1's cost per token (%.3f vs %.3f)",
        h.larger_tp.cost_per_mtok, h.cost_per_mtok))
    t.is(h.larger_tp.fits_only_there, false, "infer cards: TP1 fits too")
    t.is(h.larger_tp.by, "cost per token", "infer cards: compared by cost per token")
    -- the figure is `infer --tp 2`'s own
    local two = gp.infer { model = "llama3.1-70b", gpu = "h100-sxm", weights = "fp8", tp = 2 }
    t.is(h.larger_tp.batch, two.batch, "infer cards: larger_tp's batch is gp.infer{tp = 2}'s")
  end
  t.is(by["h200-sxm"].larger_tp, nil, "infer cards: h200-sxm's TP1 is its cheapest: no larger_tp")
  -- bf16 (141 GB of weights) fits neither card at TP1: each row names
  -- the size that fits
  local b = gp.infer { model = "llama3.1-70b", gpu = { "h100-sxm", "h200-sxm" } }
  for _, x in ipairs(b.per_card) do
    t.ok(not x.fits and x.larger_tp and x.larger_tp.fits_only_there,
      "infer cards bf16: " .. x.gpu .. " fits only at a larger TP, said")
  end
  -- a tp given is the deployment: no probe
  local g = gp.infer { model = "llama3.1-70b", gpu = { "h100-sxm", "h200-sxm" }, weights = "fp8", tp = 2 }
  for _, x in ipairs(g.per_card) do
    t.is(x.larger_tp, nil, "infer cards tp = 2: no larger_tp on " .. x.gpu)
  end
end

t.done_testing()
