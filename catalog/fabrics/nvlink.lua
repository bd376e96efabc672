-- NVLink fabrics (scale-up, bandwidth per GPU).
--
-- Bandwidths are written the way NVIDIA prints them (bidirectional per GPU)
-- and stored per direction: "900GB/s bidir" = 450 GB/s each way.
--
-- latency: NCCL 2.30.7's per-step hardware latency for NVLink with the LL
-- protocol (hwLatencies[NVLINK][RING][LL] = 0.6 us, src/graph/tuning.cc); with
-- LL128 it is 1.9 us and with Simple (large messages) 3.4 us per step, plus a
-- fixed 6.6-14 us base per collective. The comm model owns those; the value
-- here is the small-message per-hop cost.
--
-- achievable: measured plateau ring all-reduce bus bandwidth (nccl-tests,
-- NCCL_ALGO=Ring) divided by the per-direction link bandwidth. Where no
-- measurement exists, NCCL's own link model is used (its per-lane constants in
-- src/graph/topo.h times the link count, over the line rate) and the reason
-- says so.

-- nccl.channels: the ring/tree channels NCCL's own search gives the links.
-- ncclTopoCompute (src/graph/search.cc, 2.18-2.30.7) runs as many channels
-- as the GPU's NVLink bandwidth (links x 20 GB/s on Ampere, x 20.6 on
-- Hopper, topo.h) holds at the fastest speed of its table (Ampere's from
-- 40 GB/s, Hopper's from 60), and stops there once they fill it;
-- ncclTopoDupChannels doubles them at half the speed (on Hopper only from
-- 50 GB/s, or with 4 channels or fewer); ncclTopoPostset (connect.cc)
-- doubles them again.  12 A100 links: 6 at 40 -> 24; 8 H800 links: 4 at 40
-- -> 16; 18 H100 links (370.8 GB/s): 6 at 60 -> 24, not two a link.
local CHANNELS_SRC = "NCCL's search (ncclTopoCompute, ncclTopoDupChannels in "
  .. "src/graph/search.cc, ncclTopoPostset in connect.cc, 2.18-2.30.7): the "
  .. "channels its speed table's fastest speed fills the links with (Ampere 40 "
  .. "GB/s on links x 20, Hopper 60 on links x 20.6), doubled at half the "
  .. "speed, doubled again: HGX A100 logs 'Channel 23/24' (nccl-tests#100), "
  .. "8 x H800 '16 coll channels' (nccl#892); 'the number of NCCL channels is "
  .. "directly related to' the NVLink count (NCCL maintainer, nccl#1429)"

fabric {
  id = "nvlink2", name = "NVLink 2 (6 links, V100 SXM2)",
  scope = "scaleup", kind = "nvlink",
  bw = "300GB/s bidir",
  latency = "0.6us",
  achievable = 0.80,
  achievable_reason = "NCCL's model: 6 links x 20 GB/s (SM70 per-lane constant) = "
                   .. "120 of 150 GB/s per direction; no measurement read",
  source = "stas00/ml-engineering network/README.md (NVLink 2: 6 links, 150 GB/s per "
        .. "direction, 300 duplex); NVIDIA/nccl tuning.cc and topo.h (2.30.7)",
  notes = "DGX-1 wires 8 V100s as a hybrid cube-mesh, not through a switch: "
       .. "rings reach the per-GPU figure, all-to-all does not.",
}

fabric {
  id = "nvlink3", name = "NVLink 3 (12 links, A100 SXM + NVSwitch gen 2)",
  scope = "scaleup", kind = "nvlink",
  bw = "600GB/s bidir",
  latency = "0.6us",
  achievable = 0.77,
  achievable_reason = "8x A100 ring all-reduce plateaus at 228-233 GB/s busbw of "
                   .. "300 GB/s per direction (NCCL's model: 12 x 20 = 240)",
  -- LL128 on 8 x A100 runs well under its 120/128 payload share: between
  -- 4 and 16 MiB, where NCCL's tuner runs the ring with LL128 (2.18.5 from
  -- 2 MiB, 2.30.7 from 4, both to 16 MiB), an 8 x A100-SXM4-40GB
  -- all_reduce_perf -g 8 curve adds 158.4 us for 12 MiB (131.0 -> 289.4
  -- us in place), 139.0 GB/s of busbw, 0.61 of the 229.1 it reaches at
  -- 1 GiB with Simple; out of place 135.5 of 230.84, 0.59 (nccl-tests
  -- output captured in PKU-DAIR/Hetu-Galvatron tests/profiler/
  -- test_hardware_profile.py, commit 6f77a6c).  The Azure ND A100 v4 curve
  -- (NCCL 2.18.5, -g 8, another host) gives 132 of 231.58, 0.57.  NCCL's
  -- model keeps 0.92 of Simple, so its tuner still picks LL128 there.
  -- Why LL128 runs slow on A100 no source read says.
  nccl = { channels = 24,  -- 12 links, logged
           ll128_efficiency = 0.60,
           source = CHANNELS_SRC .. "; ll128_efficiency: PKU-DAIR/Hetu-Galvatron "
                 .. "tests/profiler/test_hardware_profile.py at 6f77a6c (8 x A100-SXM4-40GB, "
                 .. "all_reduce_perf -g 8, 4 MiB 131.0 us, 16 MiB 289.4 us, 1 GiB "
                 .. "229.11 GB/s busbw in place): LL128's marginal busbw 139.0 GB/s "
                 .. "over 4-16 MiB, 0.61 of the Simple plateau (out of place 0.59)" },
  source = "stas00/ml-engineering network/README.md; jax-ml/scaling-book gpus.md (12 "
        .. "ports, 300 GB/s per direction); measured busbw as collected in "
        .. "../shared/research/collectives.md section 1.6",
  notes = "Second-generation NVSwitch has no in-switch reduction (NVLS needs "
       .. "Hopper's NVSwitch gen 3).",
}

fabric {
  id = "nvlink3-a800", name = "NVLink 3, export-limited (8 links, A800 SXM)",
  scope = "scaleup", kind = "nvlink",
  bw = "400GB/s bidir",
  latency = "0.6us",
  -- Measured on 8 x A800-SXM4-80GB (NCCL 2.21.5, PyTorch 2.5.1, one process a
  -- GPU, dist.all_reduce of fp32 then torch.cuda.synchronize, 100 iterations):
  -- 1024 MB 12.369 ms, 256 MB 3.261 ms, 64 MB 0.921 ms; 4 GPUs 1024 MB 10.850
  -- ms.  Its "bandwidth" column is 2 x size / time; nccl-tests' busbw is
  -- 2 (n-1)/n x size / time: 1 GiB over 8 GPUs 2 x 7/8 x 1073741824 / 12.369
  -- ms = 151.9 GB/s, over 4 GPUs 2 x 3/4 x 1073741824 / 10.850 ms = 148.4
  -- GB/s: 0.76 and 0.74 of the 200 GB/s a direction, where NCCL's own model
  -- (8 x 20) says 0.80 -- as the A100's 12 links measure 0.77 of 300, not
  -- NCCL's 240 / 300 = 0.80 (nvlink3 above): the same GA100 and NVSwitch
  -- board with a third of the links cut.  The 8-GPU plateau taken.
  achievable = 0.76,
  achievable_reason = "8x A800 all-reduce plateaus at 151.9 GB/s busbw of 200 GB/s per "
                   .. "direction (1 GiB in 12.369 ms; 4 GPUs 148.4); NCCL's model "
                   .. "(8 x 20 = 160) is 0.80, as the A100's measured 0.77 sits under "
                   .. "its 0.80",
  nccl = { channels = 16,  -- 8 links, as the H800's logged 16
           source = CHANNELS_SRC },
  source = "techpowerup news (A800: chip-to-chip 600 -> 400 GB/s); citsjtu2020/LLM-Prof "
        .. "hardware_spec.md (400 GB/s); aliyun/SimAI calbusbw (A800: 8 NVLinks); "
        .. "achievable: Hazuyuki/chiplet-network-sim@201f7fe gpu_profiling/docs/"
        .. "GPU_NCCL_AllReduce_Performance_Test_Report.md (8 GPU table: '| 1024 MB  | "
        .. "12.369        | 173.62      | 86.8%'; its bandwidth 'data_size * 2 / "
        .. "time', gpu_profiling/src/nccl_profiling.py at 9d64d1b)",
  notes = "Same NVSwitch board as A100; only the link count is cut.",
}

fabric {
  id = "nvlink4", name = "NVLink 4 (18 links, H100/H200/H20 SXM + NVSwitch gen 3)",
  scope = "scaleup", kind = "nvlink",
  bw = "900GB/s bidir",
  latency = "0.6us",
  achievable = 0.82,
  achievable_reason = "8x H100 ring all-reduce plateaus at 365-371 GB/s busbw of "
                   .. "450 GB/s per direction (NCCL's model: 18 x 20.6 = 370.8; "
                   .. "ASTRA-sim's validated HGX-H100 input notes 370.67)",
  -- 18 links x 20.6 GB/s = 370.8: 6 search channels at 60 GB/s carry 360
  -- of it (50, 40 and 30 GB/s do no better, and the search stops at 24,
  -- below 0.49 x 60), doubled to 12 at 30 and again to 24: not two a link
  -- (36, capped at 32), which only Ampere's table gives.
  nccl = { channels = 24,
           source = CHANNELS_SRC },
  in_switch_reduction = "nvls",
  nvls_tree_bw = { nodes2 = "57.7GB/s", nodes3 = "45.5GB/s",
                   source = "NVIDIA/nccl src/graph/tuning.cc perChMaxNVLSTreeBws, Hopper "
                         .. "row (NCCL 2.28.3-2.30.7): bus bandwidth per NVLS_TREE head" },
  source = "stas00/ml-engineering network/README.md; jax-ml/scaling-book gpus.md; "
        .. "NVIDIA/nccl topo.h (SM90 20.6 GB/s per lane); astra-sim "
        .. "inputs/network/hgx_h100_8gpu.yml",
  notes = "With NVLS (NVSwitch multicast/reduction) all-reduce busbw reaches "
       .. "~480 GB/s, above the line rate, because nccl-tests keeps the ring "
       .. "busbw formula (nccl-tests #212).",
}

-- The 4-GPU HGX board (HGX H100 4-GPU, HGX H200 4-GPU) has no NVSwitch:
-- each SXM GPU's 18 NVLink 4 links are wired straight to its three peers,
-- six to each.  NVIDIA lists NVSwitch only on its 8-GPU baseboards ("Platform
-- Support for NVIDIA NVSwitch: NVIDIA HGX H200 8-GPU baseboard, NVIDIA HGX
-- H100 8-GPU baseboard ...", docs.nvidia.com/ai-enterprise vGPU features,
-- nvswitch.html), and a 4 x H100 SXM node's `nvidia-smi topo -m` reads "NV6"
-- between every pair of GPU0-GPU3 (NVIDIA/nccl#1617, 2025-02-26).  A group
-- of all four drives every link, as the switch's (NCCL's six Hopper search
-- channels at 60 GB/s fit two to each peer's 6 x 20.6 = 123.6 GB/s: the
-- six directed rings of four GPUs use each directed link twice); a pair
-- talks over its own six links only, a third of the rate
-- (engine/comm.c's up_mesh_peers).
fabric {
  id = "nvlink4-hgx4", name = "NVLink 4 mesh (HGX H100/H200 4-GPU board: 6 links to each of 3 peers, no NVSwitch)",
  scope = "scaleup", kind = "nvlink",
  bw = "900GB/s bidir",
  latency = "0.6us",
  achievable = 0.82,
  achievable_reason = "the NVLink 4 links' ring fraction measured through NVSwitch "
                   .. "(nvlink4: 365-371 of 450 GB/s); NCCL's model of a peer's "
                   .. "six links, 6 x 20.6 = 123.6 of 150 GB/s, is the same 0.82",
  mesh_peers = 3,
  nccl = { channels = 24,
           source = CHANNELS_SRC },
  source = "docs.nvidia.com/ai-enterprise (release 8.0) vgpu/features/nvswitch.html "
        .. "(NVSwitch platforms: the 8-GPU HGX baseboards only); NVIDIA/nccl#1617 "
        .. "(4 x H100: 'NV6' between every GPU pair); NVIDIA/nccl topo.h (SM90 20.6 "
        .. "GB/s per lane)",
  notes = "No NVLS: without a switch there is no multicast object to reduce in.",
}

fabric {
  id = "nvlink4-h800", name = "NVLink 4, export-limited (8 links, H800 SXM)",
  scope = "scaleup", kind = "nvlink",
  bw = "400GB/s bidir",
  latency = "0.6us",
  achievable = 0.80,
  achievable_reason = "ring all-reduce on H800 measured at about 160 GB/s busbw of "
                   .. "200 GB/s per direction (DeepSeek; NCCL's model 8 x 20.6 = "
                   .. "164.8)",
  nccl = { channels = 16,  -- 8 links, logged
           source = CHANNELS_SRC },
  in_switch_reduction = "nvls",
  nvls_tree_bw = { nodes2 = "57.7GB/s", nodes3 = "45.5GB/s",
                   source = "NVIDIA/nccl src/graph/tuning.cc perChMaxNVLSTreeBws, Hopper "
                         .. "row (NCCL 2.28.3-2.30.7): bus bandwidth per NVLS_TREE head" },
  source = "citsjtu2020/LLM-Prof (interconnect 400); H800-vs-H100 articles (tumgag.com, "
        .. "philisun.com: 400 GB/s bidirectional); aliyun/SimAI calbusbw (H800: 8 "
        .. "NVLinks, NVLS busbw 215)",
  notes = "Same NVSwitch gen 3 board as H100, so NVLS is available.",
}

fabric {
  id = "nvlink5", name = "NVLink 5 (18 links, B200/B300/GB200/GB300 + NVSwitch gen 4)",
  scope = "scaleup", kind = "nvlink",
  bw = "1800GB/s bidir",
  latency = "0.6us",
  achievable = 0.76,
  achievable_reason = "GB200/B300 ring all-reduce plateaus at 680-695 GB/s busbw of "
                   .. "900 GB/s per direction (NCCL's model: 18 x 40.1 = 721.8)",
  in_switch_reduction = "nvls",
  nvls_tree_bw = { nodes2 = "96GB/s", nodes3 = "80GB/s",
                   source = "NVIDIA/nccl src/graph/tuning.cc perChMaxNVLSTreeBws, Blackwell "
                         .. "row (NCCL 2.28.3-2.30.7): bus bandwidth per NVLS_TREE head" },
  -- NVLS's multimem operations reach less of the link on Blackwell than on
  -- Hopper (0.85, the default): NCCL's own figure for the generation
  -- and it runs 24 NVLS thread blocks on one node where Hopper runs 16
  -- (24 blocks in one node, 32 across nodes: engine/comm_algo.c nvls_nch
  -- gives the count each NCCL release uses)
  nccl = { nvls_efficiency = 0.74, nvls_channels = 24, nvls_channels_nodes = 32,
           source = "NVIDIA/nccl src/graph/tuning.cc nvlsEfficiency[] (NCCL "
                 .. "2.30.7): Hopper 0.85, Blackwell 0.74; src/transport/nvls.cc: "
                 .. "'nChannels = (comm->nNodes > 1) ? NVLS_NCHANNELS_SM100 : "
                 .. "NVLS_NCHANNELS_SM100_NVL', 32 and 24" },
  source = "stas00/ml-engineering network/README.md; jax-ml/scaling-book gpus.md "
        .. "(NVL72: 18 NVSwitches); NVIDIA/nccl topo.h (SM100 40.1 GB/s per lane)",
  notes = "NVLS all-reduce busbw measured around 845 GB/s. The same fabric "
       .. "spans 8 GPUs (HGX) or 72 (NVL72); the GPU's scaleup.domain says which.",
}

fabric {
  id = "nvlink-bridge", name = "NVLink bridge, 600 GB/s (H100 PCIe / H100 NVL / A100 PCIe pairs)",
  scope = "scaleup", kind = "nvlink",
  bw = "600GB/s bidir",
  latency = "0.6us",
  -- A bridged pair's ring is the pair's own 12 links: its measured busbw
  -- over their line rate is the fraction the bridge carries.
  achievable = 0.69,
  achievable_reason = "an A100 PCIe pair on its NV12 bridge runs all_reduce_perf "
                   .. "-t 2 at 'Bus_BW: 208 GBps' (nccl-tests#178): 208 of "
                   .. "the 12 links' 300 GB/s per direction = 0.69",
  -- 12 links: an A100 pair gets 6 search channels at 40 GB/s, doubled
  -- twice, 24.  A Hopper pair's 12 x 20.6 = 247.2 holds 4 at 60, doubled
  -- twice, 16 from 2.18 on; nccl#1161's H100 PCIe pair logged 24, which
  -- the search gives 12 Hopper links only up to 2.16.2 (docs/validation.md).
  nccl = { channels = 24,
           source = CHANNELS_SRC },
  source = "hpctech.co.jp copy of NVIDIA's H100 table (H100 PCIe NVLink 600 GB/s); "
        .. "nvidia.com H100 page transcription (H100 NVL bridge pairs)",
  notes = "Joins 2 cards point to point; traffic to any other card goes over PCIe.",
}

fabric {
  id = "nvlink-bridge-h200", name = "NVLink bridge, 900 GB/s (H200 NVL, 2- or 4-way)",
  scope = "scaleup", kind = "nvlink",
  bw = "900GB/s bidir",
  latency = "0.6us",
  achievable = 0.80,
  achievable_reason = "no bridge measurement read; taken as the NVLink ring "
                   .. "fractions measured through NVSwitch (0.76-0.82)",
  source = "GitHub transcription of nvidia.com/en-us/data-center/h200 (H200 NVL: NVLink "
        .. "bridge 2- or 4-way, 900 GB/s)",
}

fabric {
  id = "nvlink-bridge-ga102", name = "NVLink bridge, 112.5 GB/s (RTX A6000 / A40 pairs)",
  scope = "scaleup", kind = "nvlink",
  bw = "112.5GB/s bidir",
  latency = "0.6us",
  achievable = 0.85,
  achievable_reason = "NCCL's model: 4 links x 12.0 GB/s (SM86 per-lane constant) = "
                   .. "48 of 56.25 GB/s per direction; no measurement read",
  source = "servethehome.com RTX A6000 article (NVIDIA spec: NVLink 112.5 GB/s "
        .. "bidirectional, 2-way); NVIDIA/nccl topo.h (SM86 12.0)",
}
