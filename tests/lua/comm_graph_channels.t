-- The channels NCCL's search finds across nodes fit the GPU's NVLink
-- (engine/comm_algo.c net_graph_fit): each channel takes its speed off
-- every GPU's links (search.cc followPath), so an NVL72 rack of 72 NICs
-- does not get 72 tree channels.  The rack is the CoreWeave GB200 case's
-- topology (validation/cases.json coreweave-gb200-nvl72-20rack-*).
local t = require "tap"
local gp = require "gpuplan"

local GiB = 2 ^ 30
local function rack(nics, nodes, extra, over)
  local topo = {
    gpus_per_node = 72, nodes = nodes, nics = nics, nic_bw = 50e9, nic_achievable = 0.94,
    nic_latency = 2.7e-6, nic_c2c = true, nic_path_bw = 50.432e9, up_kind = "nvlink",
    up_bw = 900e9, up_achievable = 0.76, up_latency = 6e-7, up_nvls = true,
    tree_ch_bw2 = 42.8e9, tree_ch_bw3 = 24e9, tree_ll128_ch_bw2 = 31.67e9,
    tree_ll128_ch_bw3 = 20e9, ll_max_bw = 282e9, ring_ll128_ch_bw = 40e9,
    tree_tune_ch_bw2 = 82.8e9, tree_tune_ch_bw3 = 72e9, tree_tune_until = 22803,
    up_nccl = { nvls_channels = 24, nvls_efficiency = 0.74 },
  }
  for k, v in pairs(over or {}) do topo[k] = v end
  local job = { op = "all_reduce", gpus = 72 * nodes, nvls = "off", nccl = "2.26.2",
    algo = "tree", topology = topo }
  for k, v in pairs(extra or {}) do job[k] = v end
  -- auto: the tuner's pick (a nil in extra would not clear algo)
  if job.auto then job.algo, job.auto = nil, nil end
  return gp.comm(job)
end

-- 20 racks, 72 NICs a rack, 16 GiB on the tree.  NVLink: 0.76 x 900 =
-- 684 GB/s a GPU.  The search at 48 GB/s fits floor(684 / 48) = 14
-- channels (672), at 45 15 (675), at 42 16 (672), at 40 17 (680), at 30
-- 22 (660), at 24 28 (672); 22 is below .49 of 48: 17 channels at 40.
-- One block a channel carries at most 24 GB/s of bus bandwidth across 3
-- or more nodes (tree_ch_bw3): busbw <= 17 x 24 = 408 GB/s, algbw 204,
-- 16 GiB in 84.2 ms; the tree's latency (under 1 ms: 2 (71 NVLink hops +
-- 4 network hops)) adds about 1%.  Before, all 72 NICs were channels and
-- the NVLink rate bound it: algbw 342, busbw 684.  busbw is nccl-tests'
-- algbw x 2 (n - 1) / n with n = 1440, so the cap reads 408 x 1439 / 1440.
-- Tolerance 2%: the latency share (0.78 ms of 85.0 ms here, 0.9%).
local r = rack(72, 20, { bytes = 16 * GiB })
t.near(r.busbw, 408e9 * 1439 / 1440, 0.02, "20 x NVL72, 72 NICs: tree busbw at 17 channels x 24 GB/s")
t.ok(r.busbw < 408e9, "and not above the channels' cap")
-- The streaming term alone carries no latency: 16 GiB at algbw 408 / 2 =
-- 204 GB/s, 84.215 ms, exact to rounding (1e-9); at 72 channels it
-- would be 16 GiB / 342e9 = 50.2 ms.
t.near(r.bw_time, 16 * GiB / 204e9, 1e-9, "20 x NVL72, 72 NICs: 16 GiB streamed at 17 x 24 / 2 GB/s")

-- 8 NICs a rack: 8 x 48 = 384 GB/s fits the NVLink's 684, so the search
-- keeps one channel a NIC at 48: the cap is 8 x 24 = 192 GB/s of busbw,
-- the same as before this rule (the fit only binds where the NICs outrun
-- the NVLink).  Tolerance 2%: the latency share at 16 GiB.
local few = rack(8, 20, { bytes = 16 * GiB })
t.near(few.busbw, 192e9 * 1439 / 1440, 0.02, "20 x NVL72, 8 NICs: 8 channels x 24 GB/s")

-- The tuner keeps the tree at 2 GiB on 20 racks (its ring's 2 x 1439
-- steps cost it about 14 ms of latency).
local auto = rack(72, 20, { bytes = 2 * GiB, auto = true })
t.is(auto.algo, "tree", "20 x NVL72 2 GiB, nvls off: NCCL's tuner runs the tree")

-- The tuner ranks the tree by its release's row.  8 GiB on the 20 racks:
-- the tree's busbw as 2.26.2 ranks it is 0.92 x 684 = 629 GB/s (under 17
-- x 72 = 1224), algbw 315, 27.3 ms + 0.7 ms; the ring's 684 x 1440 / 2878
-- = 342 algbw, 25.1 ms + about 14 ms of latency (2878 steps): the tree.
-- 2.28.3 and later cap the tree at 17 x 24 = 408 GB/s, algbw 204: 42.1
-- ms, and the ring ranks first (its LL128 here).  The tree's own time is the same
-- under both (the 24 GB/s block rate): only the choice moves.
local old = rack(72, 20, { bytes = 8 * GiB, auto = true })
t.is(old.algo, "tree", "20 x NVL72 8 GiB, NCCL 2.26.2: the tree (its 72 GB/s row)")
local new = rack(72, 20, { bytes = 8 * GiB, auto = true, nccl = "2.28.3" })
t.is(new.algo, "ring", "20 x NVL72 8 GiB, NCCL 2.28.3: the ring (its 24 GB/s row)")
local tree_new = rack(72, 20, { bytes = 8 * GiB, nccl = "2.28.3" })
local tree_old = rack(72, 20, { bytes = 8 * GiB })
t.is(tree_new.time, tree_old.time, "the tree's time is the same under both releases (to the bit)")

-- Bad release rows refused, naming the field.
t.raises(function() rack(72, 20, { bytes = GiB }, { tree_tune_until = 5 }) end,
  "tree_tune_until must be 0 or a release code 20000..99999 (got 5)", "a bad release code refused", true)
t.raises(function() rack(72, 20, { bytes = GiB }, { tree_tune_ch_bw3 = -1 }) end,
  "tree_tune_ch_bw3 must be a finite number >= 0 (got -1)", "a negative row refused", true)
-- The catalog's row names its release as gp.comm reads it: one it cannot
-- read ("v2.28.3") is refused at the field, not dropped (no retune).
local schema = require "gpuplan.schema"
local function before(release)
  return { id = "blackwell-x", name = "x", launch_overhead = "4us",
           nccl_tree_ch_bw_before = { release = release, nodes2 = "82.8GB/s", nodes3 = "72GB/s" },
           achievable = { gemm = { bf16 = 0.78 }, hbm = 0.85, reason = "x", source = "y" } }
end
local v, e = schema.check(before("v2.28.3"), schema.arch)
t.ok(v == nil and e.path == "nccl_tree_ch_bw_before.release"
     and e.msg:find("'major.minor[.patch]'", 1, true), "an unreadable release refused at its field")
t.ok(schema.check(before("2.28.3"), schema.arch) ~= nil, "the shipped form 2.28.3 accepted")
t.done_testing()
