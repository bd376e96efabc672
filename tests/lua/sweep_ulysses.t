-- The layout search enumerates DeepSpeed-Ulysses groups (ulysses_max,
-- engine/sweep.c ok_ulysses) beside CP: a layout's sequence split is a
-- CP ring or a Ulysses group, never both, bounded by the one heads rule
-- gp.train refuses by (layout.h layout_ulysses_heads_ok: verl's
-- apply_monkey_patch asserts) and by the sequence's tokens.
-- Run with ./gpuplan run tests/lua/sweep_ulysses.t.
local t = require "tap"
local gp = require "gpuplan"
local sweep = require "gpuplan.sweep"

t.plan(13)

local job = { model = "llama3-8b", gpu = "h100-sxm", gpus = 16, stack = "hf",
              fsdp = "full_shard", seq = 65536 }
-- Ulysses beside TP: stack deepspeed (Megatron-DeepSpeed's groups hold
-- tp x sp; verl's FSDP mesh, stack hf, is dp x sp alone:
-- tests/lua/ulysses_stack.t), ZeRO-3 for the tp 1 layouts to fit
local djob = { model = "llama3-8b", gpu = "h100-sxm", gpus = 16, stack = "deepspeed",
               seq = 65536, zero = { 3 } }

-- A set of "tp/ulysses" the results hold.
local function seen(r, f)
  local s = {}
  for _, c in ipairs(r.results) do s[f(c)] = true end
  return s
end
local function pair(c) return c.tp .. "/" .. c.ulysses end

-- llama3-8b at 64k tokens on 16 H100s: every result's split is one of the
-- two, its degrees multiply to the GPUs, and Ulysses' heads rule holds
-- (32 heads and 8 kv a model, heads / tp and max(8 / tp, 1) a TP rank).
local o = t.with(job, { ulysses_max = 16, cp_max = 16, top = 1000 })
local r = gp.sweep(o)
local one, product, heads, label = true, true, true, true
for _, c in ipairs(r.results) do
  one = one and (c.cp == 1 or c.ulysses == 1)
  product = product and c.tp * c.pp * c.cp * c.ulysses * c.dp == c.gpus
  local th, tkv = 32 // c.tp, math.max(8 // c.tp, 1)
  heads = heads and th % c.ulysses == 0 and (tkv % c.ulysses == 0 or c.ulysses % tkv == 0)
  label = label and (c.ulysses == 1) == not c.layout:find(" U%d")
    and (c.ulysses == 1 or c.layout:find(" U" .. c.ulysses .. " ", 1, true) ~= nil)
end
t.ok(one, "no layout has both a CP ring and a Ulysses group")
t.ok(product, "tp x pp x cp x ulysses x dp = gpus in every result")
t.ok(heads, "every Ulysses group divides a TP rank's heads, its kv heads divide it or it them")
t.ok(label, "the label shows the group where CP would be: 'U8'")
local s = seen(r, pair)
local notp = true
for p in pairs(s) do notp = notp and (p:match("^1/") or p:match("/1$")) ~= nil end
local ds = seen(gp.sweep(t.with(djob, { ulysses_max = 16, top = 1000 })), pair)
t.ok(s["1/16"] and s["1/8"] and notp and ds["1/16"] and ds["2/8"] and ds["8/2"],
  "groups up to the GPUs: tp 1 x U16 (hf: no TP beside them); deepspeed also tp 2 x U8, "
  .. "tp 8 x U2 (4 heads, 1 kv a rank)")

-- The fastest Ulysses layout here, and what gp.train prices for the same
-- job and layout, exactly (the same config through the same engine call;
-- tolerance 0).  (The CP 8 ring runs ahead of it: Transformer Engine's
-- ring hands 7 of its 8 steps to the kernel without a mask,
-- engine/train_price.c.)
local best
for _, c in ipairs(r.results) do
  if c.ulysses > 1 then best = best or c end
end
-- (FSDP's strategy by its name: the label said "ZeRO-3" before)
t.is(best.layout, "TP1 U8 DP2 full_shard mb1 none", "64k tokens, FSDP: TP1 U8 DP2 is the fastest Ulysses layout")
t.is(gp.train(sweep.train_options(o, best)).step_s, best.step_s,
  "its step is gp.train's with ulysses 8")
-- A search with the groups searches more: its best is no slower than the
-- best without them (cp_max 16 alone).
local nou = gp.sweep(t.with(job, { cp_max = 16, top = 1 }))
t.ok(r.results[1].step_s <= nou.results[1].step_s and nou.results[1].ulysses == 1,
  string.format("with Ulysses at least as fast: %.2f s against %.2f s (%s)", r.results[1].step_s,
    nou.results[1].step_s, nou.results[1].layout))

-- The heads rule bounds the search: qwen2.5-7b, 28 heads and 4 kv, on 16
-- GPUs (stack deepspeed, for TP beside Ulysses).  tp 1: u divides 28 and 16 and 4 divides u or u 4 -> 1, 2, 4 (8
-- and 16 do not divide 28; 7 and 14 do not divide 16); tp 2 (14 heads, 2
-- kv a rank, 8 ranks): 1, 2; tp 4 (7 heads, 1 kv, 4 ranks): 1.
local q = gp.sweep(t.with(djob, { model = "qwen2.5-7b", ulysses_max = 16, top = 1000 }))
local allowed = { ["1/1"] = 1, ["1/2"] = 1, ["1/4"] = 1, ["2/1"] = 1, ["2/2"] = 1,
                  ["4/1"] = 1, ["8/1"] = 1 }
local within = true
local qs = seen(q, pair)
for p in pairs(qs) do within = within and allowed[p] ~= nil end
t.ok(within and qs["1/4"] and qs["2/2"], "qwen2.5-7b: Ulysses groups 2 and 4 at tp 1, 2 at tp 2, none past")
-- ... and the sequence: each rank holds seq / u tokens, so seq 4 keeps u
-- <= 4 where the heads allow 8 and 16.
local sq = seen(gp.sweep(t.with(job, { seq = 4, ulysses_max = 16, top = 1000 })),
  function(c) return c.ulysses end)
t.ok(sq[4] and not sq[8] and not sq[16], "seq 4: groups up to 4")

-- A CP ring's rotation given (cp_rotate: gp.train refuses it beside
-- ulysses) searches no Ulysses group.
local cr = gp.sweep(t.with(job, { cp_rotate = "allgather", cp_max = 8, ulysses_max = 8,
  top = 1000 }))
t.ok(next(cr.results) and not seen(cr, function(c) return c.ulysses > 1 end)[true],
  "cp_rotate: CP layouts only")

-- Searched, not given; its bound refused as the others' are.
t.raises(function() gp.sweep(t.with(job, { ulysses = 4 })) end,
  "sweep: ulysses is searched, not given; bound it with ulysses_max (e.g. ulysses_max = 4)",
  "ulysses given to the search refused", true)
t.raises(function() gp.sweep(t.with(job, { ulysses_max = 0 })) end,
  "sweep: ulysses_max must be a whole number 1..16777216 (got 0)",
  "ulysses_max 0 refused", true)
