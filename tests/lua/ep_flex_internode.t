-- The flex dispatcher across nodes (engine/train_layer.c flex_internode):
-- DeepEP and HybridEP send a token once to each node holding any of its
-- top_k experts, at the backend's published internode kernel rate (a
-- share of the NIC's nominal rate a GPU), plus the call's own cost
-- (HybridEP's "Torch API" time less its "Kernel Only" time); HybridEP's
-- rate follows moe_flex_sms through its README's 4, 8 and 16 SM rows.  And
-- cuda_device_max_connections 1, which caps what ep_overlap hides at
-- (1 - 184.2 / 191.1) / (1 - 184.2 / 198.5) = 0.501 of the all-to-all
-- (Megatron-LM PR #6311's TFLOP/s without the overlap, with it at 1
-- connection and at 32: the step time each saves; engine/train_stage.c
-- EP_OVERLAP_ONE_QUEUE).
-- Run with ./gpuplan run tests/lua/ep_flex_internode.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(23)

local function part(r, n)
  for _, p in ipairs(r.parts) do if p.name == n then return p.seconds end end
  return 0
end

-- Distinct nodes a token's top_k experts land on, e experts spread evenly
-- over n nodes: n (1 - C(e - e/n, k) / C(e, k)).
local function nodes_hit(e, k, n)
  local miss = 1
  for i = 0, k - 1 do miss = miss * (e - e / n - i) / (e - i) end
  return n * (1 - miss)
end

-- Qwen3-30B-A3B (48 layers, hidden 2048, 128 experts, top 8), one
-- 4096-token micro-batch a step, no EP overlap: the step's ep_comm is 48
-- layers x 4 calls (dispatch and combine, forward and backward), each
-- the call's cost plus the rank's 4096 tokens x the nodes each reaches x
-- 2048 x 2 B at the rate.  A DGX H100 has 8 ConnectX-7 NICs of 50 GB/s
-- nominal: 50 GB/s a GPU.  1e-9: the engine's own sums of the same terms.
-- capacity_factor 1: every rank runs the mean rows (the padded buffer), which the counts here take; the dropless default's chance skew is tests/lua/moe_balance.t's
local job = { model = "qwen3-30b-a3b", capacity_factor = 1, gpu = "h100-sxm", seq = 4096, batch = 1,
              stack = "megatron", zero = 1, moe_dispatcher = "flex", ep_overlap = false }
local function ep(x) return part(gp.train(t.with(job, x)), "ep_comm") end
local function expect(n, share, call)
  return 48 * 4 * (call + 4096 * nodes_hit(128, 8, n) * 2048 * 2 / (share * 50e9))
end
-- EP 16 on 2 nodes: 1.994 nodes a token.  DeepEP (the default backend):
-- docs/legacy.md's 43 GB/s at EP 16, 0.86 of 50; the call 0.419 ms
-- (HybridEP's mean gap at 16 ranks, (0.503 + 0.334) / 2 ms).
t.near(ep { gpus = 16, ep = 16, global_batch = 16 }, expect(2, 0.86, 0.419e-3), 1e-9,
       "EP 16, DeepEP: 2 nodes at 0.86 of the NIC, plus 0.419 ms a call")
-- HybridEP's kernel at 16 ranks: (76.80 + 68.00) / 2 / 50 = 1.448.
t.near(ep { gpus = 16, ep = 16, global_batch = 16, moe_flex_backend = "hybridep" },
       expect(2, 1.448, 0.419e-3), 1e-9, "EP 16, HybridEP: 1.448 of the NIC")
-- EP 32 on 4 nodes: 3.629 nodes a token; HybridEP (54.50 + 56.40) / 2 /
-- 50 = 1.109, the call 0.546 ms.
t.near(ep { gpus = 32, ep = 32, global_batch = 32, moe_flex_backend = "hybridep" },
       expect(4, 1.109, 0.546e-3), 1e-9, "EP 32, HybridEP: 4 nodes")
-- HybridEP's rate at the SMs given (moe_flex_sms), docs/README_Hybrid-EP.md
-- "Kernel Only", mean of BF16 dispatch and combine over 50 GB/s; the call
-- cost does not move.  16 ranks: 4 SMs (44.40 + 52.00) / 2 / 50 = 0.964;
-- 16 SMs (71.71 + 62.95) / 2 / 50 = 1.347; between 8 and 16 linear in the
-- SMs, 12 SMs 1.448 + (1.347 - 1.448) x 4 / 8 = 1.3975; above 16 held; below
-- 4 in proportion, 2 SMs 0.964 x 2 / 4 = 0.482.  32 ranks at 16 SMs:
-- (57.69 + 57.46) / 2 / 50 = 1.1515 (the table keeps 1.152).  1e-9 as above.
local h16 = { gpus = 16, ep = 16, global_batch = 16, moe_flex_backend = "hybridep" }
t.near(ep(t.with(h16, { moe_flex_sms = 4 })), expect(2, 0.964, 0.419e-3), 1e-9,
       "EP 16, HybridEP 4 SMs: 0.964 of the NIC")
t.near(ep(t.with(h16, { moe_flex_sms = 12 })), expect(2, 1.3975, 0.419e-3), 1e-9,
       "EP 16, HybridEP 12 SMs: between the 8 and 16 SM rows")
t.near(ep(t.with(h16, { moe_flex_sms = 32 })), expect(2, 1.347, 0.419e-3), 1e-9,
       "EP 16, HybridEP 32 SMs: the 16 SM row held")
t.near(ep(t.with(h16, { moe_flex_sms = 2 })), expect(2, 0.482, 0.419e-3), 1e-9,
       "EP 16, HybridEP 2 SMs: the 4 SM row in proportion")
t.near(ep { gpus = 32, ep = 32, global_batch = 32, moe_flex_backend = "hybridep", moe_flex_sms = 16 },
       expect(4, 1.152, 0.546e-3), 1e-9, "EP 32, HybridEP 16 SMs: 1.152")
-- DeepEP publishes one SM count (24): its rate does not follow them.
t.near(ep { gpus = 16, ep = 16, global_batch = 16, moe_flex_sms = 32 },
       expect(2, 0.86, 0.419e-3), 1e-9, "EP 16, DeepEP 32 SMs: still 0.86")
-- EP 64 on 8 nodes, DeepEP: (51 + 50) / 2 / 50 = 1.01, the call 0.885 ms.
t.near(ep { gpus = 64, ep = 64, global_batch = 64 }, expect(8, 1.01, 0.885e-3), 1e-9,
       "EP 64, DeepEP: 8 nodes")
-- The node count is what it saves: at EP 16 the alltoall dispatcher
-- sends all 8 copies, half of them off the node; flex sends 2.
t.ok(ep { gpus = 16, ep = 16, global_batch = 16 } <
     ep { gpus = 16, ep = 16, global_batch = 16, moe_dispatcher = "alltoall" },
     "EP 16: flex below the alltoall dispatcher")
-- Both rates were measured on 400 Gb/s NICs: 800 Gb/s ones (B300's
-- ConnectX-8) are not taken to run the kernels faster.
local function ep_nic(f)
  return ep { gpu = "b300", gpus = 16, ep = 16, global_batch = 16, moe_flex_backend = "hybridep",
              nic_fabric = f, nics = 8 }
end
t.near(ep_nic("ib-xdr-800"), ep_nic("ib-ndr-400"), 1e-12, "800G NICs: the 400G figure")
-- Inside one node each backend runs at its own torch-API share of the
-- link (engine/train_layer.c, tests/lua/ep_flex_nvl.t): on H100 DeepEP
-- at 0.750 of the link (its 20 SMs' 0.441 x 900 GB/s is faster than
-- that) with a per-token share 0.447, HybridEP 0.599 and 0.326, so
-- Qwen3-30B-A3B's 2048-wide copies take (0.599 / 0.750) x (0.553 +
-- 0.447 x 3.5) / (0.674 + 0.326 x 3.5) = 0.932 times as long on DeepEP
-- (1e-9: the same terms).
t.near(ep { gpus = 8, ep = 8, global_batch = 8 } /
       ep { gpus = 8, ep = 8, global_batch = 8, moe_flex_backend = "hybridep" },
       (0.599 / 0.750) * (0.553 + 0.447 * 3.5) / (0.674 + 0.326 * 3.5), 1e-9,
       "EP 8 in one node: DeepEP's share against HybridEP's")
-- The backend is the flex dispatcher's: given beside another, an error.
t.raises(function() gp.train(t.with(job, { gpus = 16, ep = 16, global_batch = 16,
                                           moe_dispatcher = "alltoall",
                                           moe_flex_backend = "hybridep" })) end,
         "moe_flex_backend hybridep is the flex dispatcher's backend",
         "hybridep with the alltoall dispatcher: refused")

-- cuda_device_max_connections 1: an overlapped chunk hides at most q =
-- (1 - 184.2 / 191.1) / (1 - 184.2 / 198.5) = 0.501 of its all-to-all.  As in ep_overlap.t: 8 H100s, EP 8, the
-- alltoall dispatcher, 4 micro-batches (3 of 4 chunks overlapped each
-- way), the compute under the all-to-all slowed by s = 32 / (132 - 32),
-- each layer's compute longer than its all-to-all; the exposed share of
-- the unhidden all-to-all is 3/4 (1 - q + q s) + 1/4 with one queue,
-- 3/4 s + 1/4 without.  1e-9: the same sums.  EP 8 inside one node
-- hides under the overlap only when a full-iteration graph replays the
-- step (engine/train_prep.c train_ep_hides; ep_overlap.t), so the job
-- runs one (cuda_graph_scope full_iteration).
local s, q = 32 / (132 - 32), (1 - 184.2 / 191.1) / (1 - 184.2 / 198.5)
-- capacity_factor 1: every rank runs the mean rows (the padded buffer), which the counts here take; the dropless default's chance skew is tests/lua/moe_balance.t's
local j8 = { model = "qwen3-30b-a3b", capacity_factor = 1, gpu = "h100-sxm", gpus = 8, ep = 8, seq = 4096, batch = 1,
             stack = "megatron", zero = 1, global_batch = 32, cuda_graph_scope = "full_iteration" }
local function ratio(x)
  local on = gp.train(t.with(j8, t.with(x, { ep_overlap = true })))
  local off = gp.train(t.with(j8, t.with(x, { ep_overlap = false })))
  return part(on, "ep_comm") / part(off, "ep_comm")
end
t.near(ratio { cuda_device_max_connections = 1 }, 3 / 4 * (1 - q + q * s) + 1 / 4, 1e-9,
       "one connection: 0.501 of the all-to-all hides")
t.near(ratio { cuda_device_max_connections = 32 }, 3 / 4 * s + 1 / 4, 1e-9,
       "32 connections: all of it")
t.near(ratio {}, 3 / 4 * s + 1 / 4, 1e-9, "the default (CUDA's 8): all of it")
-- DualPipe is DeepSeek's schedule, not Megatron's queue order: every
-- chunk paired at the measured average 0.189, one connection or not.
local dp = { gpus = 16, pp = 2, schedule = "dualpipe", global_batch = 128 }
t.near(ratio(t.with(dp, { cuda_device_max_connections = 1 })), ratio(dp), 1e-12,
       "dualpipe: not capped")
-- CUDA takes 1 to 32 connections.
t.raises(function() gp.train(t.with(j8, { cuda_device_max_connections = 0 })) end,
         "cuda_device_max_connections", "0 connections: refused")

-- The flex dispatcher's kernels hold their SMs beside the overlapped
-- compute, which runs on the rest: s = n / (132 - n) on an H100 (as
-- NCCL's 32 channels for the alltoall dispatcher).  The same 8-GPU job,
-- flex: DeepEP's default 20, HybridEP's in one node 24 (config.cuh),
-- Megatron-Bridge's 32 given.  Under the full-iteration graph (no host
-- wait left in a layer) DeepEP's all-to-all in one node outlasts
-- Qwen3-30B-A3B's narrow experts, so these run Mixtral-8x7B (experts 14336
-- wide: the compute longer than the all-to-all, as the formula needs).
local function sl(n) return 3 / 4 * (n / (132 - n)) + 1 / 4 end
local function fratio(x) return ratio(t.with(x, { model = "mixtral-8x7b", moe_dispatcher = "flex" })) end
t.near(fratio {}, sl(20), 1e-9, "flex DeepEP: 20 SMs")
t.near(fratio { moe_flex_backend = "hybridep" }, sl(24), 1e-9,
       "flex HybridEP in one node: 24 SMs")
t.near(fratio { moe_flex_sms = 32 }, sl(32), 1e-9, "moe_flex_sms 32")
t.raises(function() gp.train(t.with(j8, { moe_flex_sms = 32 })) end,
         "moe_flex_sms is the flex dispatcher's SMs", "moe_flex_sms with the alltoall dispatcher: refused")
