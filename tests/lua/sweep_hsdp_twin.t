-- The layout search lists a hybrid-sharded (HSDP) layout only where its
-- sharding differs from full sharding's (engine/sweep.c hybrid_whole).
-- `plan llama3-70b --gpu h200-sxm --gpus 32 --fsdp hybrid_shard,full_shard`
-- listed "TP4 PP4 DP2 ZeRO-3" and "TP4 PP4 DP2 ZeRO-3 HSDP" at the same
-- 122.16 s, and the runner-up line said "0.0% more time per token".  A
-- stage's tp x dp = 4 x 2 = 8 ranks sit in one 8-GPU node, so HSDP's shard
-- group (the DP ranks one node holds) is the whole DP2 group: one layout.
-- Run with ./gpuplan run tests/lua/sweep_hsdp_twin.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(7)

local job = { model = "llama3-70b", gpu = "h200-sxm", gpus = 32,
              fsdp = "hybrid_shard,full_shard", top = 1000 }
local r = gp.sweep(job)

local function key(x, hybrid)
  return table.concat({ x.tp, x.pp, x.cp, x.dp, x.ep, x.zero, tostring(x.sp), x.micro_batch,
    tostring(x.recompute), tostring(x.schedule), x.vpp, tostring(x.tp_overlap),
    tostring(x.overlap_grad_reduce), tostring(hybrid) }, " ")
end
local rows, twins, distinct = {}, 0, 0
for _, x in ipairs(r.results) do rows[key(x, x.hybrid)] = x end
for _, x in ipairs(r.results) do
  local f = x.hybrid and rows[key(x, false)]
  if f then
    if f.step_s == x.step_s and f.mem_bytes == x.mem_bytes then twins = twins + 1
    else distinct = distinct + 1 end
  end
end
-- every HSDP row listed beside its full-shard twin differs from it
t.is(twins, 0, "no HSDP row prices the same as its full-shard twin")
-- and the rule drops only twins: an HSDP layout whose shard group is a
-- part of its DP group stays (TP4 PP2: a stage's 4 x 4 = 16 ranks span two
-- nodes, so a node holds 2 of the 4 DP ranks)
t.ok(distinct > 0, "HSDP layouts that shard otherwise are kept")
local hs
for _, x in ipairs(r.results) do
  if x.hybrid and x.tp == 4 and x.pp == 2 and x.dp == 4 then hs = x break end
end
t.ok(hs ~= nil, "TP4 PP2 DP4 HSDP kept")

-- The dropped layout is full sharding's, by gp.train: the same step and
-- memory under either name (exact: train_zero_coll_of takes the whole
-- group's collective where the shard group is the whole group).
local best = r.results[1]
t.is(best.tp .. " " .. best.pp .. " " .. best.dp .. " " .. tostring(best.hybrid),
     "4 4 2 false", "the best is TP4 PP4 DP2, full shard")
local function tr(fsdp)
  return gp.train { model = "llama3-70b", gpu = "h200-sxm", gpus = 32, stack = "megatron",
    method = "pretrain", seq = 8192, global_batch = 512, tp = 4, pp = 4, sp = true, batch = 1,
    recompute = "none", fsdp = fsdp, overlap_grad_reduce = best.overlap_grad_reduce,
    tp_overlap = best.tp_overlap }
end
local a, b = tr("hybrid_shard"), tr("full_shard")
t.is(a.hsdp, 8, "gp.train: hybrid_shard's groups of a node's 8 GPUs")
t.is(a.step_s, b.step_s, "gp.train: hybrid_shard's step is full_shard's")
t.is(a.memory.total, b.memory.total, "gp.train: and its memory")
