-- FSDP's sharding strategies and gradient sync (gpuplan.memory's
-- sharding; --fsdp, --grad-sync).  Run with ./gpuplan run tests/lua/fsdp.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(55)

local part = t.step_part

-- gp.train on a block's base job with some options added or changed.
local function trainer(base)
  return function(extra) return gp.train(t.with(base, extra)) end
end

-- FSDP's sharding strategies (gpuplan.memory's sharding).  llama3-8b
-- pretraining on 16 H100s, tp = pp = 1: dp 16.
do
  local base = { model = "llama3-8b", gpu = "h100-sxm", gpus = 16, method = "pretrain",
                 seq = 2048 }
  local with = trainer(base)
  local function gathered(r)
    local p = part(r, "zero_gather")
    return p.seconds + p.hidden
  end
  -- shard_grad_op gathers the layers once per micro-batch's forward and
  -- keeps them to its backward: with the micro-batches doubled (global
  -- batch 64 -> 128 at dp 16, micro-batch 1: 4 -> 8) the gather time
  -- doubles exactly (every micro-batch's gathers are the same
  -- collectives); DeepSpeed's ZeRO-2 (no --fsdp, stack megatron) gathers
  -- once per step after the optimizer, the same for 4 or 8.
  local s4 = with { fsdp = "shard_grad_op", global_batch = 64 }
  local s8 = with { fsdp = "shard_grad_op", global_batch = 128 }
  t.is(s4.zero, 2, "shard_grad_op is zero 2")
  t.near(gathered(s8) / gathered(s4), 2, 1e-9, "shard_grad_op: a gather per micro-batch")
  local d4 = with { zero = 2, global_batch = 64 }
  local d8 = with { zero = 2, global_batch = 128 }
  t.near(gathered(d8), gathered(d4), 1e-12, "DeepSpeed ZeRO-2: one gather per step")
  t.ok(gathered(s4) > gathered(d4), "shard_grad_op's gathers exceed one per step")
  -- full_shard gathers again for the backward: more than shard_grad_op
  -- at the same micro-batches (the forward's gathers alone are equal).
  local f4 = with { fsdp = "full_shard", global_batch = 64 }
  t.is(f4.zero, 3, "full_shard is zero 3")
  t.ok(f4.step_s > s4.step_s, "full_shard re-gathers for the backward")
  t.is(with { fsdp = true, global_batch = 64 }.step_s, f4.step_s, "fsdp = true is full_shard")
  -- shard_grad_op with one gradient sync per step keeps whole parameters
  -- and whole gradients over the micro-batches: zero 1's sends and
  -- states, so the same step and memory to the bit.
  local st = with { fsdp = "shard_grad_op", grad_sync = "step", global_batch = 64 }
  local z1 = with { zero = 1, global_batch = 64 }
  t.is(st.step_s, z1.step_s, "shard_grad_op + grad_sync step: zero 1's step")
  t.is(st.memory.total, z1.memory.total, "shard_grad_op + grad_sync step: zero 1's memory")
  t.ok(st.step_s < s4.step_s, "one sync per step: fewer collectives than per micro-batch")
  t.raises(function() with { fsdp = "hybrid" } end,
    "fsdp must be full_shard, shard_grad_op or hybrid_shard (got string 'hybrid')", "unknown strategy", true)
  t.raises(function() with { fsdp = "full_shard", zero = 2 } end,
    "fsdp full_shard is zero 3, not 2", "strategy against its stage", true)
  t.raises(function() with { grad_sync = "step" } end,
    "grad_sync step needs fsdp", "grad_sync without fsdp", true)
  t.raises(function() with { fsdp = "shard_grad_op", grad_sync = "once" } end,
    "grad_sync must be micro_batch or step (got string 'once')", "unknown grad_sync", true)
  -- full_shard with one sync per step: still zero 3 (layers gathered
  -- per micro-batch), but whole gradients.  megatron-18 keeps fp32
  -- grads: 8,030,261,248 params x 4 B = 32.12 GB whole, /16 = 2.008 GB
  -- sharded, so exactly 16x.  Its reduce-scatter runs once per step: the
  -- DP part (shown + hidden) also holds full_shard's backward gathers,
  -- so 4 more micro-batches add to it only their backward gathers, each
  -- the same collectives as the forward's (the zero_gather part's
  -- growth); per micro-batch they add their reduce-scatters too.
  -- Tolerance 1%: a hidden second shows as OVERLAP_SLOWDOWN of itself,
  -- and the first layer's forward gather is exposed in full while its
  -- backward gather overlaps, so the two parts' sums differ by that share.
  local function grads(r)
    for _, c in ipairs(r.memory.components) do if c.name == "grads" then return c.bytes end end
  end
  local function dp(r)
    local p = part(r, "dp_comm")
    return p.seconds + p.hidden
  end
  local w4 = with { fsdp = "full_shard", grad_sync = "step", global_batch = 64 }
  local w8 = with { fsdp = "full_shard", grad_sync = "step", global_batch = 128 }
  local f8 = with { fsdp = "full_shard", global_batch = 128 }
  t.is(w4.zero, 3, "full_shard + grad_sync step stays zero 3")
  t.near(grads(w4) / grads(f4), 16, 1e-12, "full_shard + step: whole gradients, dp 16 x")
  t.near(grads(w4), 8030261248 * 4, 1e-9, "whole fp32 gradients of llama3-8b")
  -- The forward also gathers the embedding and the output layer (FSDP's
  -- root, kept to the backward: train_stage.c ends_block), 2 x 525.34M
  -- 16-bit weights of llama3-8b on the same 16 ranks, which the backward
  -- does not gather again: the 4 micro-batches' backward gathers are the
  -- zero_gather growth less those.
  local P = gp.params("llama3-8b")
  local function ag(b) return gp.comm { op = "all_gather", bytes = b, gpus = 16, system = "dgx-h100" }.time end
  local more = gathered(w8) - gathered(w4) - 4 * (ag(2 * P.embedding) + ag(2 * P.lm_head))
  t.near((dp(w8) - dp(w4)) / more, 1, 0.01, "full_shard + step: one reduce-scatter per step")
  t.ok((dp(f8) - dp(f4)) / more > 1.5, "full_shard: a reduce-scatter per micro-batch")
  t.near(gathered(w8), gathered(f8), 1e-12, "full_shard + step: the same gathers")
end

-- FSDP2's whole gradients (full_shard, grad_sync step, fsdp_version 2:
-- train.c whole_grad_passes and post_of).  llama3-8b pretraining on 16
-- H100s (two DGX nodes), tp 1, dp 16, gradients reduced in fp32.
do
  local base = { model = "llama3-8b", gpu = "h100-sxm", gpus = 16, method = "pretrain",
                 stack = "hf", fsdp = "full_shard", grad_sync = "step", fsdp_version = 2,
                 grad_reduce = "fp32" }
  local with = trainer(base)
  local function both(r, name)
    local p = part(r, name)
    return p.seconds + p.hidden
  end
  local P = gp.params("llama3-8b")
  local function ag(b) return gp.comm { op = "all_gather", bytes = b, gpus = 16, system = "dgx-h100" }.time end
  -- a memory-bound pass of b bytes on the H100 (the roofline's op: b over
  -- its streaming rate, plus the fill and launch that cancel in a difference)
  local function pass(b) return gp.roofline { gpu = "h100-sxm", op = { flop = 0, bytes = b } }.op.time end
  -- The accumulation passes.  Overlap off (nothing hidden), 4 -> 8
  -- micro-batches (global batch 64 -> 128, seq 2048): each micro-batch adds
  -- its forward gathers to zero_gather and its backward gathers to
  -- dp_comm -- the same collectives and copy-outs layer for layer -- but the
  -- forward also gathers and copies out the ends (FSDP's root: embedding
  -- and output layer, 525.34M 16-bit weights each, not gathered again for
  -- the backward).  The 4 more micro-batches each add one accumulation
  -- pass over the w = 8,030,261,248 whole weights: read the bf16 gradient
  -- (A 2 B) and the fp32 sum (rb 4 B), write the sum (4 B).  So
  --   d(dp_comm) - d(zero_gather) = 4 x w x (2 + 2 x 4) B / rate
  --                                 - 4 x (ends' gathers + their copy-outs),
  -- a copy-out reading and writing 2 B a weight.  Tolerance 1e-4: the
  -- roofline's op carries an eager launch where the step's passes carry
  -- a graph launch, a fraction of a microsecond apart on each of the 8
  -- ends' copy-outs that do not cancel (about 4 us of the 0.086 s).
  local o = { overlap_grad_reduce = false, overlap_param_gather = false, seq = 2048 }
  local w4 = with(t.with(o, { global_batch = 64 }))
  local w8 = with(t.with(o, { global_batch = 128 }))
  local w = 8030261248
  local want = (pass(4 * w * 10) - pass(0)) -
    4 * (ag(2 * P.embedding) + ag(2 * P.lm_head) + pass(4 * P.embedding) + pass(4 * P.lm_head))
  local got = (both(w8, "dp_comm") - both(w4, "dp_comm")) -
    (both(w8, "zero_gather") - both(w4, "zero_gather"))
  t.near(got / want, 1, 1e-4, "FSDP2 whole gradients: an fp32 accumulation pass a micro-batch")
  -- The window.  Overlap on: the backward hides its gathers (H seconds a
  -- micro-batch, each micro-batch's the same: the dp_comm hidden growth
  -- from 4 to 8 micro-batches over 4) and the step's one reduce-scatter
  -- (R, the rest of the hidden) runs on the same process group after
  -- them, so H + R cannot exceed a micro-batch's backward, itself a part
  -- of its compute.  At seq 512 the backward is short (compute about
  -- 0.093 s a micro-batch, the backward 2/3 of it, the gathers 0.038 s):
  -- the reduce-scatter (0.082 s) hides only in what the gathers left.  At
  -- seq 2048 and 8192 the window holds it all: the same R.
  local function hidden(seq)
    local a = part(with { global_batch = 64, seq = seq }, "dp_comm")
    local b = part(with { global_batch = 128, seq = seq }, "dp_comm")
    local H = (b.hidden - a.hidden) / 4
    return H, a.hidden - 4 * H
  end
  local H, R = hidden(512)
  local c512 = part(with { global_batch = 64, seq = 512 }, "compute").seconds / 4
  t.ok(H + R <= c512, string.format("whole gradients: gathers %.4f + reduce-scatter %.4f s "
    .. "hidden within a micro-batch's compute %.4f s", H, R, c512))
  local _, R2 = hidden(2048)
  local _, R8 = hidden(8192)
  t.near(R2, R8, 1e-12, "whole gradients: a long backward hides the whole reduce-scatter")
end

-- Hybrid sharding (HYBRID_SHARD): full_shard within a node, replicated
-- across nodes.  llama3-8b pretraining, seq 2048, global batch 64, on
-- DGX H100 nodes of 8 GPUs.
do
  local base = { model = "llama3-8b", gpu = "h100-sxm", method = "pretrain", seq = 2048,
                 global_batch = 64 }
  local with = trainer(base)
  local function comp(r, name)
    for _, c in ipairs(r.memory.components) do if c.name == name then return c.bytes end end
  end
  local function both(r, name)
    local p = part(r, name)
    return p.seconds + p.hidden
  end
  -- On 16 GPUs (2 nodes, tp 1, dp 16) the states shard over the 8 ranks
  -- of a node instead of all 16: 8,030,261,248 bf16 weights x 2 B / 8
  -- against / 16, exactly twice (the fp32 master and Adam states alike).
  local h = with { gpus = 16, fsdp = "hybrid_shard" }
  local f = with { gpus = 16, fsdp = "full_shard" }
  t.is(h.zero, 3, "hybrid_shard is zero 3")
  t.is(h.hsdp, 8, "hybrid_shard: shard groups in the 8-GPU node")
  t.is(f.hsdp, 0, "full_shard: no hybrid sharding")
  t.near(comp(h, "weights"), 8030261248 * 2 / 8, 1e-12, "hybrid_shard: weights over a node's 8")
  t.near(comp(h, "optimizer") / comp(f, "optimizer"), 2, 1e-12,
    "hybrid_shard: optimizer states over 8 ranks, not 16")
  -- Its gathers stay on the node's NVLink (8 ranks) while full_shard's
  -- cross the NICs (16 ranks over 2 nodes): less time gathering.
  t.ok(both(h, "zero_gather") < both(f, "zero_gather"), "hybrid_shard: gathers in the node")
  -- On one node the shard group is the whole group: full_shard exactly.
  local h8 = with { gpus = 8, fsdp = "hybrid_shard" }
  local f8 = with { gpus = 8, fsdp = "full_shard" }
  t.is(h8.step_s, f8.step_s, "hybrid_shard in one node: full_shard's step")
  t.is(h8.memory.total, f8.memory.total, "hybrid_shard in one node: full_shard's memory")
  -- tp 8 leaves one data-parallel rank per node: nothing to shard or
  -- gather, the replicas' gradients still all-reduced across the 2 nodes
  -- (states whole: twice full_shard's over dp 2).
  local ht = with { gpus = 16, tp = 8, sp = true, fsdp = "hybrid_shard" }
  local ft = with { gpus = 16, tp = 8, sp = true, fsdp = "full_shard" }
  t.is(both(ht, "zero_gather"), 0, "hybrid_shard, one rank per node: no gathers")
  t.ok(both(ht, "dp_comm") > 0, "hybrid_shard, one rank per node: gradients all-reduced")
  t.near(comp(ht, "weights") / comp(ft, "weights"), 2, 1e-12,
    "hybrid_shard, one rank per node: weights unsharded")
  -- Without a card there is no node to shard in.
  t.raises(function()
    gp.memory { model = "llama3-8b", capacity = "80GB", gpus = 16, fsdp = "hybrid_shard" }
  end, "fsdp hybrid_shard shards within a node: give gpu", "hybrid_shard needs a card", true)
  -- A sweep takes it alone, each layout priced as gp.train prices it.
  local o = t.with(base, { gpus = { 16 }, tp_max = 1, pp_max = 1, micro_batch = { 1 },
                          recompute = { "none" }, fsdp = "hybrid_shard" })
  local got = gp.sweep(o).results[1]
  local hs = with { gpus = 16, fsdp = "hybrid_shard", batch = 1, recompute = "none" }
  local fs = with { gpus = 16, fsdp = "full_shard", batch = 1, recompute = "none" }
  t.is(got.step_s, hs.step_s, "sweep: hybrid_shard's step")
  t.is(got.hybrid, true, "sweep: hybrid_shard's layouts are hybrid")
  -- Beside full_shard both are searched, each as gp.train prices it: the
  -- same stage (3), the shard groups the node's or the whole group's.
  o.fsdp = { "full_shard", "hybrid_shard" }
  local by = {}
  for _, c in ipairs(gp.sweep(o).results) do by[c.hybrid] = c end
  t.is(by[true] and by[true].step_s, hs.step_s, "sweep: full_shard,hybrid_shard: HSDP's step")
  t.is(by[false] and by[false].step_s, fs.step_s, "sweep: full_shard,hybrid_shard: FSDP's step")
  -- the label names the strategy (sweep.sharding), not the stage: "ZeRO-3
  -- HSDP" before
  t.ok(by[true] and by[true].layout:find(" hybrid_shard ", 1, true)
    and not by[true].layout:find("HSDP", 1, true), "sweep: the label says hybrid_shard")
  t.ok(by[false] and by[false].layout:find(" full_shard ", 1, true),
    "sweep: the label says full_shard")
  -- In one node the two are one layout: listed once.
  o.gpus = { 8 }
  local n8 = 0
  for _, c in ipairs(gp.sweep(o).results) do n8 = n8 + (c.hybrid and 1 or 0) end
  t.is(n8, 0, "sweep: in one node hybrid sharding is full_shard, not listed again")
  -- All three strategies together, on 16 GPUs (two nodes): each its own
  -- layouts -- full_shard ZeRO-3, shard_grad_op ZeRO-2, hybrid_shard
  -- ZeRO-3 HSDP -- and not the hybrid ZeRO-2 the two levels' product
  -- would add (it was refused, "not searched together", before the
  -- engine searched the strategies' pairs: sweep.h fsdp_pairs).  Each
  -- row is gp.train's step of its strategy, exactly (the same sums).
  o.gpus = { 16 }
  o.fsdp = { "full_shard", "shard_grad_op", "hybrid_shard" }
  local sg = with { gpus = 16, fsdp = "shard_grad_op", batch = 1, recompute = "none" }
  local three, keys = {}, {}
  local NAME = { ["3"] = "full_shard", ["2"] = "shard_grad_op", ["3 HSDP"] = "hybrid_shard" }
  local named = true
  for _, c in ipairs(gp.sweep(o).results) do
    local k = c.zero .. (c.hybrid and " HSDP" or "")
    if not three[k] then keys[#keys + 1] = k end
    three[k] = c.step_s
    named = named and c.fsdp == NAME[k]
  end
  -- each row says its strategy by gp.train's name (the label says the stage)
  t.ok(named, "sweep: each row's fsdp names its strategy")
  table.sort(keys)
  t.is(table.concat(keys, ","), "2,3,3 HSDP",
    "sweep: full_shard,shard_grad_op,hybrid_shard: the three strategies' layouts alone")
  t.is(string.format("%s %s %s", three["3"], three["2"], three["3 HSDP"]),
    string.format("%s %s %s", fs.step_s, sg.step_s, hs.step_s),
    "sweep: each at gp.train's step of its strategy")
  -- The search's space counts the pairs searched, three (full_shard's
  -- ZeRO-3, shard_grad_op's ZeRO-2, hybrid_shard's hybrid ZeRO-3), not
  -- the levels' 2 x 2 = 4: 3/2 of full_shard,hybrid_shard's two pairs,
  -- every other level the same.  Exact: the same products of counts.
  local s3 = gp.sweep(o).stats["h100-sxm"].space
  o.fsdp = { "full_shard", "hybrid_shard" }
  local s2 = gp.sweep(o).stats["h100-sxm"].space
  t.is(s3 / s2, 1.5, string.format("sweep: the space counts three pairs (%g, %g)", s3, s2))
  -- shard_grad_op beside hybrid_shard alone: no full_shard row, and the
  -- hybrid layout kept though its groups would make it full_shard's twin
  o.fsdp = { "shard_grad_op", "hybrid_shard" }
  local two = {}
  for _, c in ipairs(gp.sweep(o).results) do
    two[#two + 1] = c.zero .. (c.hybrid and " HSDP" or "")
  end
  table.sort(two)
  t.is(table.concat(two, ","), "2,3 HSDP", "sweep: shard_grad_op,hybrid_shard: those two alone")
end

-- gp.sweep searches a list of strategies as their ZeRO stages, each priced
-- as gp.train prices it (the same job: llama3-8b pretraining at seq 2048,
-- global batch 64 on 16 H100s, TP1 PP1, micro-batch 1, no recompute).
do
  local job = { model = "llama3-8b", gpu = "h100-sxm", method = "pretrain", seq = 2048,
                global_batch = 64 }
  local o = { gpus = { 16 }, tp_max = 1, pp_max = 1, micro_batch = { 1 },
              recompute = { "none" }, fsdp = { "full_shard", "shard_grad_op" } }
  for k, v in pairs(job) do o[k] = v end
  local got = {}
  for _, c in ipairs(gp.sweep(o).results) do got[c.zero] = c.step_s end
  local function train(fsdp)
    local t1 = { gpus = 16, fsdp = fsdp, batch = 1, recompute = "none" }
    for k, v in pairs(job) do t1[k] = v end
    return gp.train(t1).step_s
  end
  t.is(got[3], train("full_shard"), "sweep: ZeRO-3 is full_shard's step")
  t.is(got[2], train("shard_grad_op"), "sweep: ZeRO-2 is shard_grad_op's step")
  o.fsdp = "full_shard,bogus"
  t.raises(function() gp.sweep(o) end,
    "sweep: fsdp[2]: fsdp must be full_shard, shard_grad_op or hybrid_shard (got string "
    .. "'bogus')",
    "sweep: each strategy checked", true)
  -- grad_sync step over a list: full_shard's layouts ZeRO-3 with whole
  -- gradients (one reduce-scatter a step), shard_grad_op's ZeRO-1, each
  -- as gp.train prices its strategy under step -- step and memory (the
  -- whole gradients' 2 B a parameter at ZeRO-3 are the job's bytes: the
  -- memory total differs by them if the layout lost grads_whole).  The
  -- list was refused before ("grad_sync step takes one fsdp strategy").
  o.fsdp, o.grad_sync = { "shard_grad_op", "full_shard" }, "step"
  local st = {}
  for _, c in ipairs(gp.sweep(o).results) do st[c.zero] = c end
  local function train_step(fsdp)
    local t1 = { gpus = 16, fsdp = fsdp, grad_sync = "step", batch = 1, recompute = "none" }
    for k, v in pairs(job) do t1[k] = v end
    return gp.train(t1)
  end
  local fst, sgt = train_step("full_shard"), train_step("shard_grad_op")
  t.is(st[3] and st[3].step_s .. " " .. st[3].mem_bytes, fst.step_s .. " " .. fst.memory.total,
    "sweep: grad_sync step: ZeRO-3 is full_shard's step and memory (whole gradients)")
  t.is(st[1] and st[1].step_s .. " " .. st[1].mem_bytes, sgt.step_s .. " " .. sgt.memory.total,
    "sweep: grad_sync step: ZeRO-1 is shard_grad_op's step and memory")
  -- A bad grad_sync is the job's, said once and not as a strategy's
  -- (it read "fsdp[1]: grad_sync must be ...", on the command line
  -- "value 1 of --fsdp: --grad-sync must be ...").
  o.grad_sync = "bogus"
  local ok, err = pcall(gp.sweep, o)
  t.ok(not ok and err:find("sweep: grad_sync must be micro_batch or step (got string "
    .. "'bogus')", 1, true) and not err:find("fsdp[", 1, true),
    "sweep: a bad grad_sync named as the job's: " .. tostring(err))
end

-- The hf stack's ZeRO 2/3 are FSDP's (shard_grad_op / full_shard) in a
-- plan as in gp.train: the rule was resolved once from the job's own
-- stage, so a sweep from zero 1 priced its ZeRO-2/3 layouts as
-- DeepSpeed's ZeRO (Llama 3 8B on 8 A100s, TP1 DP8 ZeRO-2 mb2: 4.2435 s
-- in the plan, 4.2973 s in gp.train; 106 of 264 rows differed).  Every
-- row against gp.train with the row's layout: the same sums, so 1e-9
-- relative.
local hsw = gp.sweep { model = "llama3-8b", gpu = "a100-sxm-80gb", gpus = "8", stack = "hf",
  method = "full", seq = 2048, global_batch = 64, top = 300, zero = { 1, 2, 3 } }
local hbad, hz = {}, {}
for _, c in ipairs(hsw.results) do
  hz[c.zero] = (hz[c.zero] or 0) + 1
  local r = gp.train { model = "llama3-8b", gpu = "a100-sxm-80gb", gpus = 8, stack = "hf",
    method = "full", seq = 2048, global_batch = 64, zero = c.zero, batch = c.micro_batch,
    recompute = c.recompute, tp = c.tp, pp = c.pp, sp = c.sp, vpp = c.vpp,
    overlap_grad_reduce = c.overlap_grad_reduce, tp_overlap = c.tp_overlap }
  if math.abs(r.step_s - c.step_s) > 1e-9 * r.step_s then
    hbad[#hbad + 1] = string.format("%s: sweep %.4f, train %.4f", c.layout, c.step_s, r.step_s)
  end
end
t.ok((hz[2] or 0) > 10 and (hz[3] or 0) > 10,
  "the hf plan ranks ZeRO-2 and ZeRO-3 layouts (" .. tostring(hz[2]) .. ", " .. tostring(hz[3]) .. ")")
t.is(table.concat(hbad, "; "), "", "every hf plan row's step is gp.train's (FSDP at ZeRO 2/3)")
