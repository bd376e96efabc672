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

t.plan(14)

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
-- the lm_head vocab x h, each stage takes layers until the running sum
-- passes its share (the crossing layer stays).
--  1.34B (16 layers, h 2048, d_ff 8192): a layer 67,108,864, the head
--    268,435,456 (4 layers); half the 1,342,177,280 total is exactly 10
--    layers, not past it, so the 11th stays too: 11 and 5.
--  3.57B (28, 3072, 8192): a layer 113,246,208, the head 402,653,184;
--    half is 15.78 layers: 16 and 12.
--  80B on PP 4 (80, 8192, 28672): a layer 973,078,528, the head
--    1,073,741,824; shares at 20.28, 40.55, 60.83 layers: 21, 20, 20, 19.
--  8.86B on PP 4 (32, 4096, 14336): shares at 8.55, 17.1, 25.65 layers:
--    9, 9, 8, 6 -- middle stages unequal, not Megatron-Core's even
--    middle, so uniform stays (no end counts set).
local function split_of(id)
  local p = validate.predict(rows[id], cat)
  return p.defaults:match("first_stage_layers=(%d+)"), p.defaults:match("last_stage_layers=(%d+)")
end
local f1, l1 = split_of("nanotron-bench-1.34b-1n-dp4-tp1-pp2-mbs4-z1")
local f3, l3 = split_of("nanotron-bench-3.57b-1n-dp4-tp1-pp2-mbs2-z1")
t.ok(f1 == "11" and l1 == "5" and f3 == "16" and l3 == "12",
  string.format("PP 2: 1.34B %s/%s, 3.57B %s/%s (want 11/5, 16/12)", f1, l1, f3, l3))
local f8, l8 = split_of("nanotron-bench-80b-4n-dp1-tp8-pp4-mbs1-z0")
t.ok(f8 == "21" and l8 == "19", string.format("80B PP 4: %s/%s (want 21/19)", f8, l8))
local f9, l9 = split_of("nanotron-bench-8.86b-1n-dp2-tp1-pp4-mbs1-z1")
t.ok(f9 == nil and l9 == nil, "8.86B PP 4 (9, 9, 8, 6): no even middle, uniform stays")

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
