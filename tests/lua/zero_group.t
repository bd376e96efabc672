-- ZeRO shard groups smaller than data parallel (zero_group: InternEvo's
-- zero1, DeepSpeed MiCS's mics_shard_size, FSDP2 HSDP's shard size).
-- Run with ./gpuplan run tests/lua/zero_group.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(48)

local function comp(r, name)
  for _, c in ipairs(r.memory.components) do if c.name == name then return c.bytes end end
end
local function both(r, name)
  local p = t.step_part(r, name)
  return p.seconds + p.hidden
end

-- llama3-8b pretraining on H100 nodes of 8, tp = pp = 1, micro-batch 1,
-- no recompute; the global batch is 1 sequence per rank, so every job
-- below runs the same micro-batches on each GPU.
local base = { model = "llama3-8b", gpu = "h100-sxm", method = "pretrain", seq = 2048,
               batch = 1, recompute = "none" }
local function train(extra) return gp.train(t.with(base, extra)) end

do
  -- The default is one group over all data parallel: zero_group = dp
  -- prices exactly what no zero_group does.
  local d = train { gpus = 16, global_batch = 16, zero = 1 }
  local g16 = train { gpus = 16, global_batch = 16, zero = 1, zero_group = 16 }
  t.is(g16.step_s, d.step_s, "zero_group = dp: the default's step")
  t.is(g16.memory.total, d.memory.total, "zero_group = dp: the default's memory")

  -- Memory: ZeRO-1 shards the fp32 master and Adam states (12 B a
  -- parameter) over the group, so over 8 ranks instead of 16 they are
  -- exactly twice as large; the bf16 weights stay whole (ZeRO-1).
  local g8 = train { gpus = 16, global_batch = 16, zero = 1, zero_group = 8 }
  t.near(comp(g8, "optimizer") / comp(d, "optimizer"), 2, 1e-12,
    "zero_group 8 of 16: optimizer states over 8 ranks, twice over 16")
  t.is(comp(g8, "weights"), comp(d, "weights"), "zero_group at ZeRO-1: weights whole either way")

  -- The parameter all-gather runs in the group: 8 ranks of one node,
  -- the same collective (bf16 weights over 8 NVLink ranks) as the one-
  -- node job's whole-group gather, under the same compute (1 micro-batch
  -- a rank), so the same seconds (exact: the same collective priced).
  local one = train { gpus = 8, global_batch = 8, zero = 1 }
  t.near(both(g8, "zero_gather"), both(one, "zero_gather"), 1e-12,
    "zero_group 8: the parameter gather is the one node's gather")
  t.ok(both(g8, "zero_gather") < both(d, "zero_gather"),
    "zero_group 8: the gather stays off the NICs (less than over 16 ranks on 2 nodes)")

  -- The reduction: reduce-scatter in the group, then the all-reduce of
  -- each rank's 1/8 shard across the 2 groups: more than the flat
  -- reduce-scatter over 16 (it sends the inter-node bytes twice: an
  -- all-reduce's 2 (n-1)/n against a reduce-scatter's (n-1)/n).
  t.ok(both(g8, "dp_comm") > both(d, "dp_comm"),
    "zero_group 8: reduce-scatter in the node plus the shard's all-reduce across")
  -- zero_reduce allreduce: one all-reduce of whole gradients over all
  -- data parallel (InternEvo's reduce_tensor over ParallelMode.DATA),
  -- whatever the group: exactly the flat job's.
  local a8 = train { gpus = 16, global_batch = 16, zero = 1, zero_group = 8,
                     zero_reduce = "allreduce" }
  local a = train { gpus = 16, global_batch = 16, zero = 1, zero_reduce = "allreduce" }
  t.near(both(a8, "dp_comm"), both(a, "dp_comm"), 1e-12,
    "zero_group with zero_reduce allreduce: the all-reduce over all data parallel")
end

do
  -- fsdp hybrid_shard is zero_group of a node's ranks at ZeRO-3: the
  -- same job priced the same (step and memory, exactly).
  local h = train { gpus = 16, global_batch = 16, fsdp = "hybrid_shard" }
  local z = train { gpus = 16, global_batch = 16, fsdp = "full_shard", zero_group = 8 }
  t.is(z.step_s, h.step_s, "full_shard with zero_group 8: hybrid_shard's step")
  t.is(z.memory.total, h.memory.total, "full_shard with zero_group 8: hybrid_shard's memory")
end

do
  -- A job that fills its last node part way: 12 GPUs on H100 nodes of
  -- 8 are ranks 0-7 and 8-11 (the launcher's fill; its dp x cp group of
  -- 12 holds 8 and 4 ranks a node: the fewest 4, over 2 nodes).
  -- zero_group 2 shards in pairs of consecutive ranks (verl's
  -- fsdp_size 2 mesh (12 // 2, 2)); each replicate group is the ranks
  -- at stride 2, 12 / 2 = 6 of them: 0, 2, 4, 6 on node 0 and 8, 10 on
  -- node 1 -- the job's 2 nodes, floor(4 / 2) = 2 on the fewer.  It was
  -- refused as "a group of 6 GPUs, placed in equal shares of 2 a node,
  -- needs 3 nodes" (the nodes dropped).
  local r = train { gpus = 12, global_batch = 12, zero = 1, zero_group = 2 }
  t.ok(r.step_s > 0, "zero_group 2 on 12 GPUs (8 + 4): priced")
  t.is(r.groups.dp_cp.nodes, 2, "dp x cp of 12 over 8 + 4: 2 nodes")
  t.is(r.groups.dp_cp.per_node, 4, "... the fewest on one of them 4")
  -- Its replicate all-reduce crosses the NICs, where the one-node job's
  -- (8 GPUs, replicate groups of 4 in the node) stays on NVLink; the
  -- same micro-batch a rank: more seconds.
  local one = train { gpus = 8, global_batch = 8, zero = 1, zero_group = 2 }
  t.ok(both(r, "dp_comm") > both(one, "dp_comm"),
    "12 GPUs at zero_group 2: the replicate all-reduce across 2 nodes costs more than in one")
  -- verl's one-step-off FSDP2 training pool (recipe/one_step_off_policy
  -- dapo_7b_math_fsdp2_4_12.sh: 12 H20 training GPUs, sp_size 4,
  -- fsdp_size 2): the same groups, priced.
  local v = gp.train { model = "qwen2.5-7b", gpu = "h20", gpus = 12, seq = 8192, batch = 1,
                       global_batch = 12, ulysses = 4, fsdp = "full_shard", fsdp_version = 2,
                       zero_group = 2, recompute = "full" }
  t.ok(v.step_s > 0, "12 H20, ulysses 4, FSDP2 in groups of 2: priced")
  t.is(v.groups.dp_cp.ranks, 12, "... its dp x cp (dp 3 x ulysses 4) is the 12 ranks")
end

-- Refused, naming the argument.
t.raises(function() train { gpus = 16, zero = 1, zero_group = 3 } end,
  "zero_group 3 must divide the data-parallel group dp x cp = 16", "not a divisor", true)
t.raises(function() train { gpus = 16, zero = 0, zero_group = 8 } end,
  "zero_group 8 shards the ZeRO states: it needs zero 1, 2 or 3", "no ZeRO stage", true)
t.raises(function() train { gpus = 16, fsdp = "hybrid_shard", zero_group = 8 } end,
  "zero_group 8 and fsdp = hybrid_shard both set the shard group", "with hybrid_shard", true)
t.raises(function() train { gpus = 16, zero = 1, zero_group = 0 } end,
  "zero_group", "zero_group 0", true)

-- A job's step keeps the job's groups at the step's stage, as gp.train
-- prices that stage with them (the default stack, and the hf stack whose
-- ZeRO is FSDP's); zero 0 has nothing to shard: refused.
do
  for _, stack in ipairs { "megatron", "hf" } do
    local jb = t.with(base, { gpus = 16, global_batch = 16, zero = 1, zero_group = 8,
                              stack = stack })
    local j = gp.train_job(jb)
    local z3 = gp.train(t.with(jb, { zero = 3 }))
    t.is(j:step { zero = 3 }.step_s, z3.step_s, stack .. ": a job's step{zero = 3} keeps the groups")
  end
  local j = gp.train_job(t.with(base, { gpus = 16, global_batch = 16, zero = 1, zero_group = 8,
                                        stack = "hf" }))
  t.raises(function() j:step { zero = 0 } end, "zero_group 8 is the job's: a step cannot take zero 0",
    "train_job: step{zero = 0} refused", true)
end

-- A step at another tp or pp than the job's takes its own groups: N
-- ranks of its own dp x cp, N x tp GPUs (gpuplan.memory zero_group).  The
-- job kept the GPUs of its own layout's group (8 at tp 1), so a step at
-- tp 2 sharded over 8 / 2 = 4 ranks: 45.6 GB a GPU and 0.568 s where
-- gp.train at tp 2 (groups of 8 ranks on 16 GPUs) says 39.3 GB and
-- 0.527 s.  Exact: the same train_step on the same config.
do
  local jb = t.with(base, { gpus = 64, global_batch = 64, zero = 1, zero_group = 8 })
  local j = gp.train_job(jb)
  for _, L in ipairs { { tp = 2 }, { tp = 4, pp = 2 } } do
    local s, r = j:step(L), gp.train(t.with(jb, L))
    local what = string.format("tp %d pp %d", L.tp, L.pp or 1)
    t.is(s.step_s, r.step_s, "train_job, step at " .. what .. ": gp.train's step")
    t.is(s.mem_bytes, r.memory.total, "train_job, step at " .. what .. ": gp.train's memory")
  end
  -- 8 ranks of dp 32 at tp 2: the group spans 8 x 2 = 16 GPUs
  t.is(gp.train(t.with(jb, { tp = 2 })).hsdp, 16, "gp.train at tp 2: groups of 8 ranks, 16 GPUs")
  -- tp 8 x pp 8 leaves dp x cp = 1, which 8 does not divide: refused as
  -- gp.train refuses it (it was priced with the job's 8-GPU groups)
  t.raises(function() j:step { tp = 8, pp = 8 } end,
    "zero_group 8 must divide the data-parallel group dp x cp = 1",
    "train_job: a step whose dp x cp the group does not divide", true)
  -- gp.rl_job: the actor's step the same way (Llama 3.2 1B: the 64-GPU
  -- actor fits at tp 2)
  local rb = { model = "llama3.2-1b", gpu = "h100-sxm", gpus = 64, zero = 1, zero_group = 8 }
  t.is(gp.rl_job(rb):step { tp = 2 }.step_s, gp.rl(t.with(rb, { tp = 2 })).step_s,
    "rl_job, step at tp 2: gp.rl's step")
end

-- The group's GPUs are one engine rule (engine/layout.h
-- layout_zero_group_gpus) that gpuplan.memory and the search both ask:
-- n consecutive dp x cp ranks in the default order (tp innermost) span
-- n x tp GPUs; n = dp x cp is one group (0, no hybrid sharding); an n
-- that does not divide dp x cp has none (nil).  Exact integers.
do
  local core = require "gpuplan.core"
  t.is(core.zero_group_gpus(8, 32, 2), 16, "zero_group 8 of dp x cp 32 at tp 2: 8 x 2 = 16 GPUs")
  t.is(core.zero_group_gpus(32, 32, 2), 0, "zero_group = dp x cp: one group (0)")
  t.is(core.zero_group_gpus(5, 32, 2), nil, "zero_group 5 does not divide 32: none")
  t.raises(function() core.zero_group_gpus(0, 32, 2) end, "zero_group must be >= 1",
    "zero_group 0 refused by the binding", true)
end

-- MoE: the experts' ZeRO states shard over the expert replicas a group
-- holds.  A group of N x tp GPUs holds N x tp / (etp x ep) replicas of
-- each expert shard (Megatron-Core: the expert data-parallel group split
-- into as many instances as the dense one, intra size edp / (dp cp / N);
-- torchtitan's HSDP: ep carved from the shard dimension), and a group
-- that cuts an expert group is refused (engine/layout.h
-- layout_hsdp_experts_ok).
-- Mixtral 8x7B, 64 H100s, tp 1, ep 8 (edp 8), ZeRO-1, megatron stack:
-- its optimizer component is 8 B a parameter (Adam m and v in fp32).
-- Parameters by hand (hidden 4096, 32 layers, ffn 14336, 8 experts, 32
-- heads and 8 KV heads of 128, vocab 32000, untied):
--   E, experts: 8 x 3 x 4096 x 14336 x 32 = 45,097,156,608;
--   D, the rest: 32 x (q, o 2 x 4096^2 + k, v 2 x 4096 x 1024 + router
--   4096 x 8 + 2 norms 2 x 4096) + embedding and head 2 x 32000 x 4096
--   + final norm 4096 = 1,605,636,096 (E + D = 46.70 B, Mixtral's).
-- A GPU holds E / ep of the experts, sharded over the group's replicas,
-- and D sharded over the group's N ranks:
--   N 8:  8 (E/8 / (8/8) + D/8)  = 46,702,792,704 B (43.50 GiB: the
--         experts whole, a group of 8 GPUs holds one replica of each);
--   N 16: 8 (E/8 / (16/8) + D/16) = 23,351,396,352 B (2 replicas);
--   none: 8 (E/8 / 8 + D/64)     =  5,837,849,088 B (all 8).
-- Exact (1e-12 relative: integer byte counts in doubles).
do
  local E = 8 * 3 * 4096 * 14336 * 32
  local D = 32 * (2 * 4096 * 4096 + 2 * 4096 * 1024 + 4096 * 8 + 2 * 4096)
    + 2 * 32000 * 4096 + 4096
  local mx = { model = "mixtral-8x7b", gpu = "h100-sxm", gpus = 64, tp = 1, ep = 8, zero = 1,
               stack = "megatron", method = "pretrain", seq = 4096, batch = 1,
               global_batch = 64, recompute = "full" }
  local function opt(n) return comp(gp.train(t.with(mx, { zero_group = n })), "optimizer") end
  t.near(opt(8) / (8 * (E / 8 + D / 8)), 1, 1e-12,
    "MoE zero_group 8 of ep 8: experts over 1 replica, the rest over 8 ranks")
  t.near(opt(16) / (8 * (E / 8 / 2 + D / 16)), 1, 1e-12,
    "MoE zero_group 16 of ep 8: experts over 2 replicas, the rest over 16 ranks")
  t.near(opt(nil) / (8 * (E / 64 + D / 64)), 1, 1e-12,
    "MoE, no zero_group: experts over edp 8, the rest over 64")
  -- N 4 x tp 1 = 4 GPUs cut the 8-GPU expert group: refused (it was
  -- priced with the experts whole, 44.99 GiB), naming the option
  t.raises(function() gp.train(t.with(mx, { zero_group = 4 })) end,
    "zero_group 4 shards in groups of 4 GPUs (zero_group x tp 1), which cut the expert group "
      .. "etp 1 x ep 8", "MoE zero_group 4 of ep 8: refused", true)
  -- at tp 2 with the experts folded (etp 1, sp on), N 4 spans 8 GPUs: one
  -- whole expert group, so priced
  t.ok(gp.train(t.with(mx, { zero_group = 4, tp = 2, etp = 1, sp = true })).step_s > 0,
    "MoE zero_group 4 x tp 2 = 8 GPUs holds the etp 1 x ep 8 group: priced")
  -- a job's step at another ep: the engine's rule (the job's setup had ep 1)
  local j = gp.train_job(t.with(mx, { ep = 1, zero_group = 2 }))
  t.raises(function() j:step { ep = 8 } end,
    "a shard group of 2 GPUs (zero_group x tp, or a node under hybrid_shard) cuts the expert "
      .. "group etp 1 x ep 8", "train_job: a step whose group cuts the expert group", true)
  -- hybrid_shard's group is the node (8 GPUs): Qwen3-30B-A3B (128
  -- experts) at ep 16 across 2 nodes is refused (it was priced with the
  -- experts unsharded), at ep 8 priced
  local q = { model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 32, stack = "hf",
              fsdp = "hybrid_shard", seq = 4096, batch = 1, global_batch = 32, recompute = "full" }
  t.raises(function() gp.train(t.with(q, { ep = 16 })) end,
    "a shard group of 8 GPUs", "hybrid_shard: ep 16 across the 8-GPU node refused", true)
  t.ok(gp.train(t.with(q, { ep = 8 })).step_s > 0, "hybrid_shard: ep 8 in the node priced")
  -- An etp of its own cuts a group at ep 1 too: tp 1, etp 2, ep 1 makes
  -- an expert group of etp x ep = 2 GPUs; zero_group 1 spans 1 x tp 1 =
  -- 1 GPU, and 1 mod 2 = 1: refused in zero_group's words (gpuplan.memory
  -- asked ep > 1 and let it fall to the engine's words, exit 1 on the
  -- command line, where the flags' refusal is exit 2)
  t.raises(function() gp.train(t.with(mx, { ep = 1, etp = 2, zero_group = 1 })) end,
    "zero_group 1 shards in groups of 1 GPU (zero_group x tp 1), which cut the expert group "
      .. "etp 2 x ep 1", "MoE etp 2 x ep 1 against a 1-GPU group: refused by zero_group", true)
end

-- The rule itself is one engine function (layout.h layout_hsdp_experts_
-- ok) that layout_check, the search and gpuplan.memory ask: a group of
-- hsdp GPUs holds whole expert groups where etp x ep divides hsdp; a
-- dense model (0 experts) or no group (hsdp 0) always does.  Exact
-- booleans, by hand: 8 mod (1 x 8) = 0; 4 mod 8 = 4; 12 mod 8 = 4;
-- 16 mod (2 x 4) = 0.
do
  local core = require "gpuplan.core"
  t.is(core.hsdp_experts_ok(8, 8, 1, 8), true, "8 GPUs hold the etp 1 x ep 8 group")
  t.is(core.hsdp_experts_ok(8, 4, 1, 8), false, "4 GPUs cut the etp 1 x ep 8 group")
  t.is(core.hsdp_experts_ok(8, 12, 1, 8), false, "12 GPUs cut it too (12 mod 8 = 4)")
  t.is(core.hsdp_experts_ok(8, 16, 2, 4), true, "16 GPUs hold two etp 2 x ep 4 groups")
  t.is(core.hsdp_experts_ok(0, 4, 1, 8), true, "a dense model has no expert group to cut")
end
