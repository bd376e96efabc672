-- The nanotron stack profile (lua/gpuplan/predict/train.lua): the
-- README benchmark diagram's 26 cells state workload.framework
-- "nanotron" and are priced with what nanotron's code (c2528430) runs:
-- flash-attn 2's flash_attn_varlen_func, GLUActivation's SiLU and product
-- as two kernels, and ZeRO-1's parameter all-gather after the optimizer
-- step, blocking (optim/zero.py _all_gather_params), under nothing.
-- Run with ./gpuplan run tests/lua/nanotron_profile.t.
local t = require "tap"
local gp = require "gpuplan"
local validate = require "gpuplan.validate"

t.plan(21)

local cat = gp.catalog()
local rows, n = {}, 0
for _, c in ipairs(validate.read("validation/cases.json")) do
  if c.id:find("^nanotron%-bench%-") then
    rows[c.id] = c
    n = n + 1
  end
end
-- The diagram's cells: 4 models x 7 node counts less the 80B's 1 and 2.
t.ok(n == 26, "the diagram's 26 cells ship (got " .. n .. ")")

local function has(p, s) return p.defaults:find(s, 1, true) ~= nil end
local all = true
for id, c in pairs(rows) do
  local p = validate.predict(c, cat)
  if not (c.workload.framework == "nanotron" and p.predicted and has(p, "stack profile=nanotron")
      and has(p, "attn_kernel=fa2 (") and has(p, "unfused_act=true (models/llama.py")) then
    all = false
    t.diag("not priced on the profile: " .. id)
  end
end
t.ok(all, "every cell states nanotron and gets FA2 and the two-kernel GLU")

-- The blocking gather is ZeRO-1's: a ZeRO-0 cell has none to price.
local z1 = validate.predict(rows["nanotron-bench-3.57b-64n-dp128-tp4-pp1-mbs2-z1"], cat)
local z0 = validate.predict(rows["nanotron-bench-8.86b-64n-dp128-tp4-pp1-mbs2-z0"], cat)
t.ok(has(z1, "overlap_param_gather=false (optim/zero.py") and not has(z0, "overlap_param_gather"),
  "overlap_param_gather off at ZeRO-1 only")

-- No DDP at ZeRO 1 (trainer.py make_ddp: not with accumulate_grad_in_fp32
-- and zero_stage > 0): the fp32 gradients are all-reduced whole after
-- the backward (sync_gradients_across_dp, reduce_scatter=False); at ZeRO
-- 0 DDP's comm hook reduces each bucket under the backward.
t.ok(has(z1, "overlap_grad_reduce=false (trainer.py") and has(z1, "zero_reduce=allreduce (")
  and has(z0, "overlap_grad_reduce=true (DDP comm hook") and not has(z0, "zero_reduce="),
  "ZeRO 1: one all-reduce after the backward; ZeRO 0: DDP's buckets under it")

-- A case that states a setting keeps it: the profile fills gaps only.
local stated = t.copy(rows["nanotron-bench-3.57b-1n-dp4-tp1-pp2-mbs2-z1"])
stated.workload.attn_kernel = "cudnn"
local ps = validate.predict(stated, cat)
t.ok(ps.predicted and not has(ps, "attn_kernel=fa2"), "a stated attn_kernel wins over the profile's")

-- The 3.57B cell on 64 nodes (TP 4, DP 128, ZeRO-1) with the profile's
-- settings, the gather overlapped (Megatron's --overlap-param-gather)
-- and not (nanotron).  Nothing else changes, so the step grows by the
-- gather's exposed seconds and nothing of it is hidden any more:
-- step(off) - step(on) = zero_gather(off) - exposed zero_gather(on).
-- Tolerance 1e-9 s: the same sums in floating point.
local function job(overlap, ogr, zr)
  return gp.train{ stack = "megatron", gpu = "h100-sxm", gpus = 512, gpus_per_node = 8,
    nic_fabric = "efa-100", nics = 32, tp = 4, pp = 1, zero = 1, sp = true, batch = 2,
    global_batch = 256, seq = 4096, precision = "bf16", grad_reduce = "fp32",
    recompute = "none", flash = true, attn_kernel = "fa2", unfused_act = true,
    overlap_param_gather = overlap, overlap_grad_reduce = ogr, zero_reduce = zr,
    model = { layers = 28, hidden = 3072, heads = 32, kv_heads = 32, head_dim = 96,
      ffn_hidden = 8192, ffn_gated = true, vocab = 131072, tied_embeddings = true,
      norm = "rms", split_proj = "none" } }
end
local function part(r, name)
  for _, p in ipairs(r.parts) do if p.name == name then return p end end
end
local on, off = job(true), job(false)
local gon, goff = part(on, "zero_gather"), part(off, "zero_gather")
t.ok(goff.hidden == 0 and gon.hidden > 0, "nanotron's gather hides nothing; Megatron's hides some")
local grow = off.step_s - on.step_s
t.ok(math.abs(grow - (goff.seconds - gon.seconds)) < 1e-9 and grow > 0,
  string.format("the step grows by the gather's newly exposed seconds (%.4f s)", grow))

-- The gradient reduction as nanotron runs it at ZeRO 1 (no DDP: one
-- all-reduce of the whole fp32 buffer after the backward) against
-- Megatron's (reduce-scatter of the shard, under the backward).  An
-- all-reduce is a reduce-scatter and an all-gather of the same buffer
-- over the same ranks, so unhidden it costs twice the reduce-scatter:
-- 2 x (n-1)/n x 3.57 GB / bus (3.57B / TP 4 = 0.89B fp32 gradients a
-- rank).  Tolerance 1%: the two collectives' fixed latencies, a few us
-- against some 44 ms each.
local rs, ar = job(false, false, "reduce_scatter"), job(false, false, "allreduce")
local drs, dar = part(rs, "dp_comm"), part(ar, "dp_comm")
t.ok(drs.hidden == 0 and dar.hidden == 0 and math.abs(dar.seconds / (2 * drs.seconds) - 1) < 0.01,
  string.format("the unhidden all-reduce is twice the reduce-scatter (%.4f s, %.4f s)",
    dar.seconds, drs.seconds))
-- Nothing else moves: against the overlapped reduce-scatter the step
-- grows by the all-reduce less what was exposed of the reduce-scatter.
-- Tolerance 1e-9 s: the same sums in floating point.
local meg = job(false, true, "reduce_scatter")
local dmeg = part(meg, "dp_comm")
local g2 = ar.step_s - meg.step_s
t.ok(math.abs(g2 - (dar.seconds - dmeg.seconds)) < 1e-9 and g2 > 0,
  string.format("the step grows by the all-reduce's exposed seconds (%.4f s)", g2))

-- The pipeline split by nanotron's compute costs (models/base.py
-- build_model, get_block_compute_costs): a layer weighs 4h^2 + 3 d_ff h,
-- the lm_head vocab x h (131072 in every cell), the embedding, final
-- norm and loss 0; rank k's threshold is total x k / pp and each block
-- goes on the current rank, which moves on once the running sum passes
-- the threshold (the crossing layer stays): stage k ends at layer
-- floor(total k / pp) + 1 in layers' units (at exactly an integer share
-- the next layer too).  The profile states the whole list
-- (stage_layers), every model and PP of the diagram:
--  1.34B (16 layers, h 2048, d_ff 8192): a layer 67,108,864, the head
--    268,435,456 = 4 layers, total 20; PP 2: half is exactly 10, not past
--    it, so the 11th stays: 11, 5.
--  3.57B (28, 3072, 8192): a layer 113,246,208, the head 402,653,184 =
--    3.56 layers, total 31.56; PP 2: half 15.78: 16, 12.
--  8.86B (32, 4096, 14336): a layer 243,269,632, the head 536,870,912 =
--    2.21 layers, total 34.21; PP 2: 17.10: 18, 14.  PP 4: 8.55, 17.10,
--    25.66: stages end at 9, 18, 26, 32: 9, 9, 8, 6.
--  80B (80, 8192, 28672): a layer 973,078,528, the head 1,073,741,824 =
--    1.10 layers, total 81.10.  PP 4: 20.28, 40.55, 60.83: 21, 20, 20,
--    19.  PP 16 (share 5.069): ends 6, 11, 16, ..., 71 (5.069 k + 1 for
--    k = 1..14), 77 (76.03 + 1), 80: 6, 5 x 13, 6, 3.  PP 32 (share
--    2.534): ends 3, 6, 8, 11, 13, 16, 18, 21, 23, 26, 28, 31, 33, 36,
--    39, 41, 44, 46, 49, 51, 54, 56, 59, 61, 64, 66, 69, 71, 74, 77, 79,
--    80.
local function split_of(id, c)
  local p = validate.predict(c or rows[id], cat)
  return p.defaults:match("stage_layers=([%d,]+)"), p
end
local want = {
  ["nanotron-bench-1.34b-1n-dp4-tp1-pp2-mbs4-z1"] = "11,5",
  ["nanotron-bench-3.57b-1n-dp4-tp1-pp2-mbs2-z1"] = "16,12",
  ["nanotron-bench-8.86b-4n-dp16-tp1-pp2-mbs1-z1"] = "18,14",
  ["nanotron-bench-8.86b-1n-dp2-tp1-pp4-mbs1-z1"] = "9,9,8,6",
  ["nanotron-bench-80b-4n-dp1-tp8-pp4-mbs1-z0"] = "21,20,20,19",
  ["nanotron-bench-80b-8n-dp1-tp4-pp16-mbs1-z0"] = "6,5,5,5,5,5,5,5,5,5,5,5,5,5,6,3",
  ["nanotron-bench-80b-16n-dp1-tp4-pp32-mbs1-z0"] =
    "3,3,2,3,2,3,2,3,2,3,2,3,2,3,3,2,3,2,3,2,3,2,3,2,3,2,3,2,3,3,2,1",
}
local good = true
for id, w in pairs(want) do
  local got = split_of(id)
  if got ~= w then
    good = false
    t.diag(string.format("%s: stage_layers=%s (want %s)", id, tostring(got), w))
  end
end
t.ok(good, "every model and PP of the diagram at nanotron's split, stated stage by stage")
-- The PP 1 cells have no pipeline: nothing said.
t.ok(split_of("nanotron-bench-3.57b-64n-dp128-tp4-pp1-mbs2-z1") == nil
  and not has(validate.predict(rows["nanotron-bench-3.57b-64n-dp128-tp4-pp1-mbs2-z1"], cat),
    "first_stage_layers"), "PP 1: no split stated")

-- The list prices what the ends priced where they could say it: the
-- 1.34B PP 2 cell stating first_stage_layers 11 and last_stage_layers 5
-- itself (the profile then states nothing) gives the same step, to the
-- bit (the engine's uniform-middle and list paths agree; the 80B PP 4's
-- 21, 20, 20, 19 likewise).
local function ends(id, f, l)
  local c = t.copy(rows[id])
  c.parallel.first_stage_layers, c.parallel.last_stage_layers = f, l
  return c
end
local idem = true
for _, e in ipairs { { "nanotron-bench-1.34b-1n-dp4-tp1-pp2-mbs4-z1", 11, 5 },
                     { "nanotron-bench-80b-4n-dp1-tp8-pp4-mbs1-z0", 21, 19 } } do
  local pl = validate.predict(rows[e[1]], cat)
  local got, pe = split_of(nil, ends(e[1], e[2], e[3]))
  if not (got == nil and pe.predicted == pl.predicted) then
    idem = false
    t.diag(string.format("%s: list %s, ends %s (profile said %s)", e[1], tostring(pl.predicted),
      tostring(pe.predicted), tostring(got)))
  end
end
t.ok(idem, "the ends' split and the profile's list price the same to the bit")

-- A case's own split wins whole.  Its ends (here Megatron's even 8, 8
-- on the 1.34B's PP 2): the profile adds no list (stage_layers and the
-- ends are refused together), and the step is uniform's -- the same as
-- the case stating the list 8, 8.  Its list: taken as stated, no other.
local id1 = "nanotron-bench-1.34b-1n-dp4-tp1-pp2-mbs4-z1"
local se, pe = split_of(nil, ends(id1, 8, 8))
local cl = t.copy(rows[id1])
cl.parallel.stage_layers = { 8, 8 }
local sl, pl = split_of(nil, cl)
local p11 = validate.predict(rows[id1], cat)
t.ok(se == nil and pe.predicted and sl == nil and pl.predicted == pe.predicted
  and pl.predicted ~= p11.predicted,
  string.format("a stated split wins: ends 8/8 %.1f, list 8,8 %.1f, the profile's 11,5 %.1f",
    pe.predicted or 0, pl.predicted or 0, p11.predicted))
-- One end stated (first_stage_layers 11 on the 8.86B's PP 4): no list
-- from the profile either, the stated end with Megatron's even rest
-- ((32 - 11) / 3 = 7 a stage) -- the same step as the list 11, 7, 7, 7.
local c10 = ends("nanotron-bench-8.86b-1n-dp2-tp1-pp4-mbs1-z1", 11, nil)
local s10, p10 = split_of(nil, c10)
local c11 = t.copy(rows["nanotron-bench-8.86b-1n-dp2-tp1-pp4-mbs1-z1"])
c11.parallel.stage_layers = { 11, 7, 7, 7 }
local p117 = validate.predict(c11, cat)
t.ok(s10 == nil and p10.predicted ~= nil and p10.predicted == p117.predicted,
  string.format("one end stated: 11 then 7 each, no list added (%s, the list 11,7,7,7 %s)",
    tostring(p10.predicted or p10.reason), tostring(p117.predicted or p117.reason)))

-- A split that leaves a stage no layer: the 1.34B on PP 4 -- shares 5,
-- 10, 15 layers, stages end at 6, 11, 16, the head (4 layers) alone on
-- the last: 6, 5, 5, 0.  stage_layers takes one layer or more a stage,
-- so the profile states no split (uniform's 4 a stage stays).
local c4 = t.copy(rows[id1])
c4.parallel.pp, c4.parallel.dp = 4, 2
local s4, p4 = split_of(nil, c4)
t.ok(s4 == nil and p4.predicted ~= nil,
  string.format("1.34B PP 4 (6, 5, 5, 0): no list, uniform priced (%s)",
    tostring(p4.predicted or p4.reason)))

-- The loss op by op (_ShardedCrossEntropy): every cell gets unfused_loss.
-- On the 1.34B cell on 16 nodes (PP 1, TP 2, micro-batch 4) the step
-- grows by the loss's extra bytes alone: (36 - 8) + (12 - 4) = 36 B a
-- logit over 4 x 4096 tokens x 131072 / 2 vocabulary rows = 1.074e9
-- logits, 38.7 GB, at the card's streaming rate some 13 ms (the engine's
-- t_mem; bounds 8-20 ms: the achieved share of 3.35 TB/s, 0.6-0.95).
local c16 = rows["nanotron-bench-1.34b-16n-dp64-tp2-pp1-mbs4-z0"]
local p16 = validate.predict(c16, cat)
t.ok(has(p16, "unfused_loss=true (parallel/tensor_parallel/functional.py"),
  "the profile sets unfused_loss")
local fused = t.copy(c16)
fused.workload.unfused_loss = false
local pf = validate.predict(fused, cat)
local dstep = 1048576 / 128 / p16.predicted - 1048576 / 128 / pf.predicted
t.ok(dstep > 0.008 and dstep < 0.020,
  string.format("the op-by-op loss adds %.4f s a step (want 8-20 ms)", dstep))

-- ZeRO 0's gradient reduction, one ncclAllReduce a gradient tensor
-- (get_fp32_accum_hook's dist.all_reduce_coalesced over the bucket's
-- tensors): the profile states dp_bucket as the rank's mean tensor.
-- 8.86B on 64 nodes (TP 4, untied): a layer's matrices 2 x 4096 x 32 x
-- 128 (q, o) + 2 x 4096 x 32 x 128 (k, v) + 3 x 4096 x 14336 = 243269632,
-- x 32 layers = 7784628224, the embedding and lm_head 2 x 131072 x 4096 =
-- 1073741824; over TP 4: 2214592512; the norms whole, (2 x 32 + 1) x 4096
-- = 266240: 2214858752 elements over 6 x 32 + 2 + 1 = 195 tensors =
-- 11358250.01, rounded up 11358251 (195 x 11358250 = 2214858750, 2 short).
-- 1.34B on 16 nodes (TP 2, tied): 2 x 2048 x 32 x 64 x 2 + 3 x 2048 x 8192
-- = 67108864 x 16 = 1073741824, + 131072 x 2048 = 268435456; over TP 2
-- 671088640, + 33 x 2048 = 671156224 over 6 x 16 + 1 + 1 = 98 tensors =
-- 6848532.9, up: 6848533.  Exact integers: no tolerance.
local p64 = validate.predict(rows["nanotron-bench-8.86b-64n-dp128-tp4-pp1-mbs2-z0"], cat)
t.ok(has(p64, "dp_bucket=11358251 (optim/gradient_accumulator.py")
  and has(p16, "dp_bucket=6848533 ("), "ZeRO 0 with DDP: dp_bucket the rank's mean gradient tensor")
-- No DDP at ZeRO 1 (one all-reduce of the contiguous buffer) nor at DP 1.
local p80 = validate.predict(rows["nanotron-bench-80b-4n-dp1-tp8-pp4-mbs1-z0"], cat)
t.ok(not has(z1, "dp_bucket=") and p80.predicted and not has(p80, "dp_bucket="),
  "no per-tensor reduction at ZeRO 1 or at DP 1")
-- Each tensor pays its own collective: the step is longer than with the
-- stage's reduction in one message (a case that states dp_bucket 0 keeps
-- it, the profile filling gaps only).
local one = t.copy(rows["nanotron-bench-8.86b-64n-dp128-tp4-pp1-mbs2-z0"])
one.parallel.dp_bucket = 0
local po = validate.predict(one, cat)
t.ok(po.predicted and not has(po, "dp_bucket=1") and po.predicted > p64.predicted,
  string.format("one message prices faster (%.1f) than a collective a tensor (%.1f)",
    po.predicted or 0, p64.predicted or 0))
-- ZeRO-1 cells are untouched: their predicted rate is the same
-- with a stated dp_bucket 0 (nothing to bucket without DDP).
local z1c = t.copy(rows["nanotron-bench-3.57b-64n-dp128-tp4-pp1-mbs2-z1"])
z1c.parallel.dp_bucket = 0
local pz = validate.predict(z1c, cat)
t.ok(pz.predicted ~= nil and pz.predicted == z1.predicted,
  "a ZeRO-1 cell prices the same with or without a stated dp_bucket 0")
