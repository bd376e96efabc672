-- MoE parallel folding (Megatron-Core): the expert layers' own
-- etp x ep x edp grid over the tp * cp * dp GPUs of a stage -- gp.train's
-- etp, its checks, the placed groups, the expert shards, and the layout
-- search that enumerates the folded layouts.
-- Run with ./gpuplan run tests/lua/moe_fold.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(32)

local function job(over)
  local o = { model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 16, seq = 4096,
              global_batch = 64, method = "pretrain", sp = true }
  for k, v in pairs(over) do o[k] = v end
  return o
end

local part = t.step_part

-- Qwen3-30B-A3B's routed experts: 48 MoE layers x 128 experts x 3
-- matrices of hidden 2048 x expert width 768.
local X = 48 * 128 * 3 * 2048 * 768

-- The published fold: attention TP2 CP2 DP4 with EP16 on 16 GPUs.  Before
-- folding, `ep must divide dp*cp` (4 x 2 = 8) refused it.
local f = gp.train(job { tp = 2, cp = 2, ep = 16, etp = 1 })
t.is(f.etp, 1, "etp 1 is the layout's")
-- The experts' grid: etp 1, ep 16, edp = 16 / (1 x 16) = 1.
t.is(f.groups.etp.ranks, 1, "the experts' TP group: 1 rank")
t.is(f.groups.ep.ranks, 16, "EP 16 spans the stage's 16 GPUs")
t.is(f.groups.edp.ranks, 1, "edp = tp cp dp / (etp ep) = 1")
-- EP sits innermost in the experts' grid (stride etp = 1): 8 of its ranks
-- share each 8-GPU node.
t.is(f.groups.ep.per_node, 8, "EP: 8 ranks per node")

-- Expert shards: the routed experts split over etp x ep.  etp 1 ep 8
-- holds X / 8 of them, etp 2 ep 8 (the default, etp = tp) X / 16: the
-- rest (attention, router, norms, embeddings) is the same TP 2 share in
-- both, so the difference is X / 8 - X / 16 = X / 16 = 1.81e9.  Exact
-- but for the rounding of two 2.6e9 sums (1e-6 relative of the
-- difference is 1.8e3 parameters, far above it).
local a = gp.train(job { tp = 2, cp = 2, ep = 8, etp = 1 })
local b = gp.train(job { tp = 2, cp = 2, ep = 8 })
t.is(b.etp, 2, "etp defaults to tp (Megatron-Core's default)")
t.near(a.memory.params - b.memory.params, X / 16, 1e-6,
       "expert params per GPU: X / (etp ep)")
-- etp 1 ep 16 holds X / 16, as etp 2 ep 8 does: the same memory.params
-- (1e-12 relative: the same sums in another order).
t.near(f.memory.params, b.memory.params, 1e-12, "etp 1 x ep 16 = etp 2 x ep 8")

-- The experts' tensor parallelism moves the dispatched tokens: with SP
-- each rank holds T / tp tokens and all-gathers the received ones over
-- the etp group (and reduce-scatters their outputs).  Without EP that is
-- all the expert communication there is: etp 2 prices some, etp 1 none.
local e2 = gp.train(job { tp = 2, cp = 1 })
local e1 = gp.train(job { tp = 2, cp = 1, etp = 1 })
t.ok(part(e2, "ep_comm").seconds > 0, "etp 2 with SP: the gather over etp is priced")
t.is(part(e1, "ep_comm").seconds, 0, "etp 1, ep 1: no expert communication")
-- An etp group wider than TP (tp 1, etp 2) spans data-parallel ranks,
-- which hold different tokens with or without SP: the experts take the
-- T etp / tp = 2T tokens' dispatches of both ranks (model.c), so the
-- received tokens are gathered over etp (and the outputs scattered back)
-- as with SP.  SP at tp 1 splits nothing (T / tp = T), so the price is
-- the same to the bit with sp on or off (1e-12: the same sums), and above
-- etp 1's, whose ep 4 all-to-all (ranks 0,2,4,6 against 0,1,2,3, both in
-- one 8-GPU node, the same T k h bytes) is the rest of it.
local g0 = gp.train(job { tp = 1, ep = 4, etp = 2, sp = false })
local g1 = gp.train(job { tp = 1, ep = 4, etp = 2, sp = true })
local g2 = gp.train(job { tp = 1, ep = 4, etp = 1, sp = false })
t.near(part(g0, "ep_comm").seconds, part(g1, "ep_comm").seconds, 1e-12,
       "etp 2 > tp 1: the gather over etp, SP or not")
t.ok(part(g0, "ep_comm").seconds > part(g2, "ep_comm").seconds,
     "etp 2 > tp 1: more expert communication than etp 1")

-- Refusals, each naming the input.
local function err(o)
  local ok, e = pcall(gp.train, o)
  return not ok and tostring(e) or ""
end
t.like(err(job { tp = 2, etp = 1, sp = false }), "etp 1 differs from tp 2.*sp",
       "folding at tp > 1 needs sequence parallelism")
t.like(err(job { model = "llama3-8b", tp = 2, etp = 1 }), "etp 1 given for a dense model",
       "a dense model has no experts to fold")
-- 16 GPUs, tp 2: a stage of 16; etp 2 x ep 16 = 32 does not divide it.
t.like(err(job { tp = 2, ep = 16 }), "etp 2 x ep 16 must divide tp%*cp%*dp = 16.*etp defaults to tp",
       "etp x ep must divide the stage's GPUs")
t.like(err(job { tp = 2, etp = 0 }), "etp", "etp 0 is refused by name")
-- The pipeline-group rule is the experts': with cp inside pp in the rank
-- order (tp-cp-pp-dp), attention's ranks inside pp number tp*cp = 4, the
-- experts' etp = 2, so an MoE model is refused, naming both grids ...
t.like(err(job { tp = 2, cp = 2, pp = 2, ep = 2, order = "tp-cp-pp-dp" }),
       "expert layers' pipeline groups %(etp 2 x ep 2 x edp%) apart from attention's %(tp 2 x cp 2 x dp 2%)",
       "an MoE model: the rank order that splits the pipeline groups is refused, naming both grids")
-- ... while a dense model, which has no expert grid, keeps that order.
t.ok(err(job { model = "llama3-8b", tp = 2, cp = 2, pp = 2, order = "tp-cp-pp-dp" }) == "",
     "a dense model under tp-cp-pp-dp is not refused for an expert grid it does not have")

-- The layout search: etp = {"tp", 1} enumerates the folded layouts (ep up
-- to the whole stage), the default only etp = tp (ep within dp x cp).
local sw = { model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 16, seq = 4096,
             global_batch = 64, tp_max = 2, pp_max = 1, ep_max = 16, top = 100,
             micro_batch = { 1 }, recompute = { "full" } }
local function folded(res)
  for _, c in ipairs(res.results) do
    -- ep 16 with tp 2 on 16 GPUs: dp 8, so ep > dp x cp
    if c.etp == 1 and c.tp == 2 and c.ep == 16 then return c end
  end
end
local s0 = gp.sweep(sw)
t.is(folded(s0), nil, "by default the search keeps etp = tp")
sw.etp = { "tp", 1 }
local s1 = gp.sweep(sw)
local c = folded(s1)
t.ok(c ~= nil, "etp {tp, 1}: TP2 with EP16 folded is searched")
t.like(c and c.layout or "", "ETP1", "its label says ETP1")
sw.etp = { 2 }
local ok, e = pcall(gp.sweep, sw)
t.like(not ok and tostring(e) or "", "etp%[1%] must be \"tp\" or 1", "etp values are tp or 1")

-- Megatron-Core's allgather token dispatcher: each rank gathers the EP
-- group's tokens once each (4096 tokens x 16 ranks x 2048 hidden x 2 B =
-- 268435456 B gathered) and reduce-scatters the outputs back, in each pass:
-- 4 micro-batches (64 / dp 16) x 48 MoE layers x 2 passes x (all-gather +
-- reduce-scatter) as gp.comm prices them on the same 16 ranks of two
-- DGX H100 nodes (1e-12: the same collectives).
local aj = { model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 16, ep = 16,
             method = "pretrain", seq = 4096, global_batch = 64 }
local ag = gp.train(t.with(aj, { moe_dispatcher = "allgather" }))
local gb = 4096 * 16 * 2048 * 2
local one = gp.comm { op = "all_gather", bytes = gb, gpus = 16, system = "dgx-h100" }.time +
  gp.comm { op = "reduce_scatter", bytes = gb, gpus = 16, system = "dgx-h100" }.time
t.near(part(ag, "ep_comm").seconds, 4 * 48 * 2 * one, 1e-12,
       "allgather dispatcher: a gather and a reduce-scatter of the group's tokens")
local okd, ed = pcall(gp.train, t.with(aj, { moe_dispatcher = "deepep" }))
t.like(not okd and tostring(ed) or "", "moe_dispatcher must be alltoall, allgather, flex or einsum",
       "moe_dispatcher: alltoall, allgather, flex or einsum")

-- The flex dispatcher (HybridEP's fused permute + all-to-all): the host
-- launches 18 ops of the MoE layer's dispatch where the alltoall one
-- launches 32 (engine/train_layer.c MOE_FLEX_OPS, MOE_DISPATCH_OPS), each
-- GP_EAGER_OP_TIME = 24.84 us on an x86 host, x 1.118 driving B200s (the
-- DGX B200's host_op_scale: 27.77 us).  Qwen3-30B-A3B on 8 B200,
-- EP8, one 4096-token micro-batch: the forward is host-bound either way
-- (its host wait is 1.66 ms with alltoall, more than the 0.39 ms saved),
-- so the forward shrinks by exactly (32 - 18) x 27.77 us = 388.8 us
-- (1e-9: the same sums): the alltoall's wait plus its own permute
-- kernels and its counts' all-gather (moe_permute, moe_counts: GPU work
-- the host's launches cover; flex has neither) against flex's wait.  The grouped MLP's fp8 padding copies
-- (moe_fp8_pad copy, alltoall's default) are held off: their launches are
-- the experts', not the dispatcher's.  HybridEP: DeepEP adds Megatron-
-- Core's local permute (moe_deepep_permute_costs).
local op = t.op
-- capacity_factor 1: every rank runs the mean rows (the padded buffer), which the counts
-- here take; the dropless default's chance skew is tests/lua/moe_balance.t's
local bj = { model = "qwen3-30b-a3b", capacity_factor = 1, gpu = "b200", gpus = 8, ep = 8, method = "pretrain",
             seq = 4096, global_batch = 512, precision = "fp8", fp8_scaling = "block",
             moe_fp8_pad = "none" }
local a2a = gp.train(bj)
local flex = gp.train(t.with(bj, { moe_dispatcher = "flex", moe_flex_backend = "hybridep" }))
t.near(op(a2a, "host_wait").fwd + op(a2a, "moe_permute").fwd + op(a2a, "moe_counts").fwd -
       op(flex, "host_wait").fwd,
       14 * 24.84e-6 * 1.118, 1e-9,
       "flex: 14 fewer host launches per MoE layer forward")
-- The all-to-alls: 64 micro-batches (512 / 8) x 48 layers x 2 passes x
-- (dispatch + combine) of what gp.comm prices on the node's 8 GPUs.  The
-- alltoall dispatcher sends each of a GPU's 4096 tokens once per expert,
-- 8 copies of 2048 bf16 elements; the flex one once per rank holding any
-- of its experts (engine/train_layer.c flex_ranks; HybridEP's receive
-- buffer holds each source token once): 16 of the 128 experts a rank, so
-- a rank misses all 8 picks with probability prod_{i<8} (112 - i) /
-- (128 - i) = 0.33258 and a token reaches 8 x (1 - 0.33258) = 5.3394
-- ranks (1e-12: the same collectives).  The alltoall dispatcher also
-- sends the router's probabilities, one bf16 value a copy (4096 x 8 x 2
-- B a rank), in an all-to-all of their own each pass (engine/
-- train_layer.c a2a_meta).
local function a2a_s(copies)
  return 64 * 48 * 4 * gp.comm { op = "all_to_all", bytes = 4096 * copies * 2048 * 2,
                                 gpus = 8, system = "dgx-b200" }.time
end
local probs_s = 64 * 48 * 2 * gp.comm { op = "all_to_all", bytes = 4096 * 8 * 2, gpus = 8,
                                        system = "dgx-b200" }.time
local miss = 1
for i = 0, 7 do miss = miss * (112 - i) / (128 - i) end
t.near(part(a2a, "ep_comm").seconds, a2a_s(8) + probs_s, 1e-12,
       "alltoall: a copy per expert, and the probabilities")
-- Inside the node the flex call is no faster than its backend's torch
-- API: DeepEP (the default) at Megatron-Core's 20 SMs runs 0.367 + (0.515
-- - 0.367) x 4 / 8 = 0.441 of B200's 900 GB/s link for 7168-wide tokens,
-- a share 0.447 of a copy's time the token's whatever its width
-- (engine/train_layer.c deepep_nvl_frac, deepep_nvl_token), so a
-- 2048-wide copy takes 0.553 + 0.447 x 7168 / 2048 = 2.118 times its
-- bytes at that rate -- above NCCL's all-to-all of the same copies here,
-- so it prices the call.
local copies = 8 * (1 - miss)
local dep = 64 * 48 * 4 * 4096 * copies * 2048 * 2 / (0.441 * 900e9) *
  (0.553 + 0.447 * 7168 / 2048)
t.near(part(gp.train(t.with(bj, { moe_dispatcher = "flex" })), "ep_comm").seconds,
       math.max(a2a_s(copies), dep), 1e-12,
       "flex: a copy per rank reached, 5.34 of the 8, at DeepEP's call")
-- Mixtral-8x7B at EP 8 holds one expert a rank: a token's 2 experts sit
-- on 2 ranks, 8 x (1 - 7/8 x 6/7) = 2 copies either way, B = 4096 tokens
-- x 2 x 4096 hidden x 2 bytes.  Inside an H100 node the flex dispatcher
-- is DeepEP's call (the default backend) at the slower of its 20 SMs'
-- rate (engine/train_layer.c DEEPEP_NVL_8, its NVLink 5 torch-API rows:
-- 0.441 x 900 = 396.9 GB/s) and 0.750 of the 450 GB/s link (deepep_nvl_
-- rate: DeepEP's H20 test), 337.5 GB/s, its 4096-wide tokens at 0.553 +
-- 0.447 x 7168 / 4096 = 1.335 times their bytes (deepep_nvl_token),
-- slower than the NCCL all-to-all of the same bytes the alltoall
-- dispatcher runs: 8 micro-batches x 32 layers x 4 of B / 337.5e9 x
-- 1.335 (1e-12: the same arithmetic).
-- (capacity_factor 1 as bj above: the mean rows)
local mj = { model = "mixtral-8x7b", capacity_factor = 1, gpu = "h100-sxm", gpus = 8, ep = 8, method = "pretrain",
             seq = 4096, global_batch = 64 }
local B = 4096 * 2 * 4096 * 2
local fl = part(gp.train(t.with(mj, { moe_dispatcher = "flex" })), "ep_comm").seconds
t.near(fl, 8 * 32 * 4 * B / (0.750 * 450e9) * (0.553 + 0.447 * 7168 / 4096), 1e-12,
       "flex in a node: DeepEP's call at 0.750 of the H100 link")
t.ok(fl > part(gp.train(mj), "ep_comm").seconds,
     "flex in an H100 node: slower than NCCL's all-to-all of the same copies")

-- gp.rl's actor folds the same way and its result names the grid: ep and
-- etp as given, etp = tp where not (Megatron-Core's default, as gp.train
-- reports it), ep 1 for a dense actor.
local rj = { model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 32, stack = "megatron",
             recompute = "full", zero = 1 }
local rf = gp.rl(t.with(rj, { tp = 2, cp = 2, ep = 16, etp = 1, sp = true }))
t.ok(rf.ep == 16 and rf.etp == 1 and rf.dp == 8, "gp.rl: the folded actor's ep 16, etp 1, dp 8")
local ru = gp.rl(t.with(rj, { tp = 2, ep = 8 }))
t.ok(ru.ep == 8 and ru.etp == 2, "gp.rl: etp unset is tp")
local rd = gp.rl { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 8, zero = 3 }
t.ok(rd.ep == 1 and rd.etp == 1, "gp.rl: a dense actor, ep 1 and etp = tp 1")
