-- ep_overlap: Megatron-Core's combined 1F1B runs a micro-batch's expert
-- all-to-alls under another's compute in its steady state only
-- (engine/train_stage.c ep_steady): without pipelining the first forward
-- and the last backward run alone; with the interleaved schedule a
-- stage's warmup forwards and cooldown backwards, (pp - k - 1) x 2 +
-- (vpp - 1) x pp + 1 of its m x vpp chunks.
-- The compute under an overlapped all-to-all of the alltoall dispatcher
-- runs on the SMs NCCL's 32 p2p channels leave (engine/train_stage.c
-- ep_slowdown).
-- Run with ./gpuplan run tests/lua/ep_overlap.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(32)

local function part(r, n)
  for _, p in ipairs(r.parts) do if p.name == n then return p.seconds end end
  return 0
end
-- Mixtral-8x7B on 8 H100s in nodes of 4, EP 8 across two of them (the
-- overlap hides only an expert group that spans nodes, or any under a
-- full-iteration graph: engine/train_prep.c train_ep_hides, tested at the
-- end), 4096-token micro-batches: each layer's all-to-alls, over the NICs,
-- are still shorter than its compute (14336-wide experts), so an
-- overlapped chunk shows s of them (the compute they slow) and a lone one
-- all of them.  The alltoall dispatcher's NCCL all-to-all holds one SM for
-- each of the 32 p2p channels, so the compute beside it runs on 132 - 32
-- of an H100's SMs: s = 32 / (132 - 32) = 0.32.  m micro-batches a step,
-- one alone each way: the exposed share is (m - 1)/m x s + 1/m of what
-- runs without the overlap (1e-9: the same sums).
local s = 32 / (132 - 32)
local job = { model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 8, ep = 8, seq = 4096,
              batch = 1, stack = "megatron", zero = 1, method = "pretrain" }
local hjob = t.with(job, { model = "mixtral-8x7b", gpus_per_node = 4 })
local function ratio(x)
  local on = gp.train(t.with(hjob, t.with(x, { ep_overlap = true })))
  local off = gp.train(t.with(hjob, t.with(x, { ep_overlap = false })))
  return part(on, "ep_comm") / part(off, "ep_comm")
end
t.near(ratio { global_batch = 32 }, 3 / 4 * s + 1 / 4, 1e-9,
       "pp 1, 4 micro-batches: the first forward and last backward alone")
t.near(ratio { global_batch = 128 }, 15 / 16 * s + 1 / 16, 1e-9,
       "pp 1, 16 micro-batches: 1 of 16 alone")
-- PP 2, VPP 4 on 16 GPUs (EP 8, DP 8), 16 micro-batches: either stage's
-- chunks are 16 x 4 = 64; stage 0 runs 2 + 3 x 2 + 1 = 9 of them alone,
-- stage 1 (k = 1) 0 + 6 + 1 = 7.  The step is the slowest stage's, here
-- the last (it holds the head): 57/64 x 0.189 + 7/64.
local r = ratio { gpus = 16, pp = 2, vpp = 4, global_batch = 128 }
t.near(r, 57 / 64 * s + 7 / 64, 1e-9, "pp 2 vpp 4: the last stage runs 7 of its 64 chunks alone")
-- A B200 has 148 SMs: s = 32 / (148 - 32) = 0.276 (4 micro-batches).
t.near(ratio { gpu = "b200", global_batch = 32 }, 3 / 4 * (32 / (148 - 32)) + 1 / 4, 1e-9,
       "b200: the compute under the all-to-all on 148 - 32 SMs")
-- An L4 has 58 SMs: 32 channels would leave it 26, the compute under the
-- all-to-all would take more than twice as long; the slowdown stops at 1,
-- where hiding gains nothing: the overlap changes nothing (the ratio 1).
-- (Its nodes of 4 need NICs: an L4 has no catalog system.)
t.near(ratio { gpu = "l4", global_batch = 32, nics = 4, nic_fabric = "roce-100" }, 1, 1e-9,
       "l4 (58 SMs): the overlap gains nothing")
-- The flex dispatcher (DeepEP, HybridEP) holds the SMs its backend is
-- given: DeepEP's default 20 (Megatron-Core's "historical default 20"),
-- s = 20 / (132 - 20) (ep_flex_internode.t tests the others).
local avg = 0.189
t.near(ratio { moe_dispatcher = "flex", global_batch = 32 }, 3 / 4 * (20 / 112) + 1 / 4, 1e-9,
       "flex: DeepEP's 20 SMs")
-- DualPipe pairs its own chunks (no lone ones charged here) on DeepEP's
-- kernels: the average too.
local d = gp.train(t.with(job, { gpus = 16, pp = 2, schedule = "dualpipe", global_batch = 128,
                                 ep_overlap = true }))
local dn = gp.train(t.with(job, { gpus = 16, pp = 2, schedule = "dualpipe", global_batch = 128,
                                  ep_overlap = false }))
t.near(part(d, "ep_comm") / part(dn, "ep_comm"), avg, 1e-9, "dualpipe: every chunk paired")
-- Without ep_overlap nothing is hidden, on any GPU: the same all-to-alls.
local off = gp.train(t.with(job, { global_batch = 32, ep_overlap = false }))
local off_a2a = gp.train(t.with(job, { global_batch = 32, ep_overlap = false,
                                        moe_dispatcher = "alltoall" }))
t.near(part(off, "ep_comm"), part(off_a2a, "ep_comm"), 1e-12,
       "overlap off: the default dispatcher is alltoall, priced the same")

-- Megatron-Core refuses overlap_moe_expert_parallel_comm where
-- TransformerConfig.__post_init__ asserts against it (engine/train_prep.c
-- check_ep_overlap, gpuplan.train step_choices): gp.train refuses the same
-- jobs, naming its own keys; DualPipe (DeepSeek's schedule) is exempt.
local base = t.with(job, { gpus = 16, global_batch = 128, ep_overlap = true })
t.raises(function() gp.train(t.with(base, { recompute = "full" })) end,
  "train: recompute full with ep_overlap: Megatron-Core refuses it", "full recompute refused",
  true)
t.raises(function() gp.train(t.with(base, { recompute = "full", recompute_layers = 2 })) end,
  "train: recompute full with ep_overlap", "full recompute of some layers refused too", true)
t.raises(function() gp.train(t.with(base, { pp = 2 })) end,
  "train: ep_overlap at pp 2 needs the interleaved schedule, vpp >= 2", "pp 2 without vpp",
  true)
t.raises(function() gp.train(t.with(base, { ep = 1 })) end,
  "train: ep_overlap needs expert parallelism, ep >= 2 (got ep 1)", "ep 1", true)
t.raises(function() gp.train(t.with(base, { moe_dispatcher = "allgather" })) end,
  "train: moe_dispatcher allgather with ep_overlap", "the allgather dispatcher", true)
t.raises(function() gp.train(t.with(base, { precision = "fp32" })) end,
  "train: precision fp32 with ep_overlap", "an fp32 model", true)
t.raises(function()
  gp.train { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, ep_overlap = true }
end, "train: ep_overlap overlaps the expert all-to-all; llama3-8b has no experts",
  "a dense model", true)
-- What Megatron-Core runs stays priced: flex, fp8 (a bf16 model), pp 2
-- with vpp 4 (above), selective recompute; DualPipe at pp 2 alone.
t.ok(gp.train(t.with(base, { moe_dispatcher = "flex", precision = "fp8",
                             recompute = "selective" })).step_s > 0,
     "flex, fp8, selective recompute: priced")
t.ok(d.step_s > 0, "dualpipe at pp 2 without vpp: priced")
-- recompute auto stops before full: Qwen3-30B-A3B at 4 micro-batches of
-- 4 sequences on 16 H100s (EP 8, DP 16) needs more than selective saves,
-- so without ep_overlap auto takes full; with it, the most it may.
local big = t.with(job, { gpus = 16, batch = 4, global_batch = 256, recompute = "auto" })
local a_off = gp.train(t.with(big, { ep_overlap = false }))
local a_on = gp.train(t.with(big, { ep_overlap = true }))
t.is(a_off.recompute, "full", "auto without ep_overlap: full (the least that fits)")
t.is(a_on.recompute, "selective", "auto with ep_overlap: selective, not full")
-- gp.rl's own auto loop stops there too: its training step on 16 H100s
-- fits under no policy (the defaults line says so): it ends at selective.
local rl = gp.rl { model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 16, ep = 8,
                   ep_overlap = true, recompute = "auto" }
t.is(rl.recompute, "selective", "gp.rl auto with ep_overlap: selective, not full")
local said = false
for _, d in ipairs(rl.defaults) do said = said or d:find("ep_overlap allows", 1, true) ~= nil end
t.ok(said, "... and the defaults line says why it stopped there")

-- gp.sweep skips the layouts Megatron-Core refuses rather than failing on
-- them: none listed has ep 1, pp > 1 without vpp, or full recompute, and
-- the same search without ep_overlap does list such layouts.
local sw = { model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 16, seq = 4096,
             method = "pretrain", ep_max = 8, vpp_max = 2, top = 1000, scaling = false }
local function refused(res)
  local n = 0
  for _, c in ipairs(res.results) do
    if c.ep < 2 or (c.pp > 1 and c.vpp < 2) or c.recompute == "full" then n = n + 1 end
  end
  return n, #res.results
end
local n_off = refused(gp.sweep(sw))
local n_on, all_on = refused(gp.sweep(t.with(sw, { ep_overlap = true })))
t.ok(n_off > 0, "without ep_overlap the search lists such layouts")
t.is(n_on, 0, "with ep_overlap none of them")
t.ok(all_on > 0, "... and it still finds layouts")
t.raises(function() gp.sweep(t.with(sw, { ep_overlap = true, ep_max = 1 })) end,
  "sweep: ep_overlap needs expert parallelism (ep >= 2): give ep_max 2 or more (got 1)",
  "ep_max 1: nothing to search, refused", true)

-- On a Grace host (GB200 NVL72: host_op_scale 2.75) Megatron-Core's
-- combined 1F1B hides nothing unless a full-iteration graph replays the
-- step (engine/train_prep.c train_ep_hides: "the overall benefit is
-- negative on the GB200", priced as none).  The same job as above on 8
-- GB200s, 4 micro-batches: with the per-layer graphs the overlap leaves
-- the all-to-alls and the step exactly as without it (ratio 1, the same
-- sums: 1e-12); with the full-iteration graph it hides them as on a
-- B200-class card of 148 SMs, 3/4 x 32 / (148 - 32) + 1/4 (1e-9).
local gb = t.with(job, { gpu = "gb200", global_batch = 32 })
local function gb_pair(scope)
  local x = t.with(gb, { cuda_graph_scope = scope })
  return gp.train(t.with(x, { ep_overlap = true })), gp.train(t.with(x, { ep_overlap = false }))
end
local gon, goff = gb_pair("attn,moe_router,moe_preprocess")
t.near(part(gon, "ep_comm") / part(goff, "ep_comm"), 1, 1e-12,
       "gb200, per-layer graphs: the overlap hides none of the all-to-alls")
t.near(gon.step_s / goff.step_s, 1, 1e-12, "gb200, per-layer graphs: the same step as without it")
gon, goff = gb_pair("full_iteration")
t.near(part(gon, "ep_comm") / part(goff, "ep_comm"), 3 / 4 * (32 / (148 - 32)) + 1 / 4, 1e-9,
       "gb200, full-iteration graph: the overlap hides them as on an x86 host")

-- On an x86 host with the expert group inside one node the overlap hides
-- nothing either (train_ep_hides: on the scale-up links the all-to-all
-- leaves little to hide and the schedule's CPU overhead eats it --
-- Megatron-Bridge PR #1760 turned it off on DGX B200s, EP 8 in a node,
-- "due to CPU overhead", its BF16 step 17.2 s with it and 16 s without).
-- Qwen3-30B-A3B on one node of 8 H100s, EP 8: the all-to-alls and the
-- step exactly as without the overlap (the same sums: 1e-12), where the
-- same job over two nodes of 4 hides them (ratio below 1).
local in_node = t.with(job, { global_batch = 32 })
local ion = gp.train(t.with(in_node, { ep_overlap = true }))
local ioff = gp.train(t.with(in_node, { ep_overlap = false }))
t.near(part(ion, "ep_comm") / part(ioff, "ep_comm"), 1, 1e-12,
       "h100, EP 8 in one node: the overlap hides none of the all-to-alls")
t.near(ion.step_s / ioff.step_s, 1, 1e-12, "h100, EP 8 in one node: the same step as without it")
local xon = gp.train(t.with(in_node, { gpus_per_node = 4, ep_overlap = true }))
local xoff = gp.train(t.with(in_node, { gpus_per_node = 4, ep_overlap = false }))
t.ok(part(xon, "ep_comm") < part(xoff, "ep_comm"), "... over two nodes of 4 it hides them")
-- A full-iteration graph keeps the overlap inside a node too, as on
-- Grace: 4 micro-batches, 3/4 x s + 1/4 (1e-9), s the H100's 0.32.
local fx = t.with(in_node, { cuda_graph_scope = "full_iteration" })
local fon = gp.train(t.with(fx, { ep_overlap = true }))
local foff = gp.train(t.with(fx, { ep_overlap = false }))
t.near(part(fon, "ep_comm") / part(foff, "ep_comm"), 3 / 4 * s + 1 / 4, 1e-9,
       "h100, EP 8 in one node, full-iteration graph: hidden as across nodes")

t.done_testing()
