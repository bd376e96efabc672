-- AMD Infinity Fabric (xGMI) and Intel Gaudi's integrated RoCE, used as the
-- scale-up fabric on 8-accelerator boards. Bandwidth per accelerator.
--
-- xGMI on MI2xx/MI3xx boards is a full mesh: each OAM has 7 links, one to
-- each peer, so a single pair talks over ONE link (1/7 of the aggregate)
-- while collectives over all 8 use all 7 at once.
-- latency: NCCL's NVLink LL figure (0.6 us) stands in for RCCL's.  Checked
-- on xgmi4 against a measured rccl-tests all_reduce_perf log, 8 x MI300X of
-- one host (hisohara/ai-scripts training/01_rccl-smoketest/README.md, AAC8,
-- -g 1, graph 0): 13.4-15.7 us from 1 KiB to 128 KiB, 28.4 us at 1 MiB; the
-- model prices 15.0-17.4 and 34.4 us, and 317.3 GB/s busbw at 8 GiB against
-- 315.7 measured (335.6 with the lone link's 0.75; xgmi4's achievable
-- below).  Its rows are the coll-allreduce-mi300x-8g-*-aac8 cases.

fabric {
  id = "xgmi3", name = "Infinity Fabric xGMI (MI250X, 7 x 50 GB/s)",
  scope = "scaleup", kind = "nvlink",
  bw = "350GB/s per-dir",
  latency = "0.6us",
  achievable = 0.75,
  achievable_reason = "no RCCL measurement found; assumed near the measured "
                   .. "NVLink ring fractions (0.76-0.82)",
  source = "stas00/ml-engineering network/README.md (50 GB/s x 7 = 350 uni / 700 duplex)",
}

fabric {
  id = "xgmi4", name = "Infinity Fabric xGMI (MI300X/MI325X, 7 x 64 GB/s)",
  scope = "scaleup", kind = "nvlink",
  bw = "448GB/s per-dir",
  latency = "0.6us",
  -- A collective over the node drives all 7 links at once and finishes
  -- with its slowest: AMD's TransferBench all-to-all on 8 MI300X (the blog
  -- below, 64 MiB a pair, 8 CUs a transfer) moves 45.10-47.18 GB/s a link,
  -- and its "Actual" column, 7 x each GPU's slowest link, reads 315.66 to
  -- 319.30 GB/s, mean 317.59 = 0.709 of 448 ("The slowest link from GPU 0
  -- is between GPU 0 -> GPU 7 = 45.21 GB/s which translates to an Actual
  -- Aggregated BW of ~316.47 GB/s ... Since the slowest link is what
  -- defines the total bandwidth in this case, that causes the RCCL
  -- Bandwidth to be effectively capped at 310-330 GB/s").  The same blog's
  -- rccl-tests all_reduce_perf (RCCL 2.22.3, -g 1) plateaus at 318.98 GB/s
  -- busbw at 16 GiB.  The 48 GB/s a link the blog gives first is a link
  -- alone, before the slowest of seven binds.
  achievable = 0.709,
  achievable_reason = "AMD ROCm blog 'Understanding RCCL Bandwidth and xGMI "
                   .. "Performance on AMD Instinct MI300X' (2025-03-02, "
                   .. "ROCm/rocm-blogs blogs/software-tools-optimization/"
                   .. "mi300x-rccl-xgmi/README.md): TransferBench a2a on 8 "
                   .. "MI300X, 7 x each GPU's slowest link 315.66-319.30 GB/s, "
                   .. "mean 317.59 = 0.709 of 7 x 64 GB/s: 'the slowest link "
                   .. "is what defines the total bandwidth'",
  source = "stas00/ml-engineering network/README.md (64 GB/s x 7 = 448 uni / 896 duplex)",
}

fabric {
  id = "xgmi-mi355x", name = "Infinity Fabric xGMI (MI355X, 7 x 76.5 GB/s)",
  scope = "scaleup", kind = "nvlink",
  bw = "535.5GB/s per-dir",
  latency = "0.6us",
  achievable = 0.75,
  achievable_reason = "no RCCL measurement found; assumed near the measured "
                   .. "NVLink ring fractions (0.76-0.82)",
  source = "stas00/ml-engineering network/README.md (76.5 GB/s x 7 = 535.5 uni / 1071 "
        .. "duplex)",
}

fabric {
  id = "gaudi2-roce", name = "Gaudi 2 intra-node RoCE v2 (21 of 24 x 100GbE to peers)",
  scope = "scaleup", kind = "nvlink",
  bw = "300GB/s per-dir",
  latency = "2.7us",
  achievable = 0.85,
  achievable_reason = "no HCCL measurement found; Ethernet framing and RoCE "
                   .. "headers assumed to cost more than IB's measured 0.94",
  -- 21 of the 24 ports wire the box's eight cards all-to-all, 3 to each
  -- of the 7 peers: a pair talks over its own 3 ports (1/7 of bw).
  mesh_peers = 7,
  source = "stas00/ml-engineering (Gaudi 2: intra-node 300 GB/s unidirectional, "
        .. "24 x 100 Gbps); mesh: docs.habana.ai Intel Gaudi Network Configuration "
        .. "(the HLS-3 box of Gaudi 3: 'connect to seven other accelerators inside a "
        .. "single HLS-3 box in an All2All manner, essentially using 21/7=3 scale-up "
        .. "ports for each connection'; HLS-Gaudi2 wires its 21 scale-up ports alike)",
  notes = "latency: NCCL's network LL per-step figure used as a stand-in.",
}

fabric {
  id = "gaudi3-roce", name = "Gaudi 3 intra-node RoCE v2 (24 x 200GbE)",
  scope = "scaleup", kind = "nvlink",
  bw = "600GB/s per-dir",
  latency = "2.7us",
  achievable = 0.85,
  achievable_reason = "no HCCL measurement found; Ethernet framing and RoCE "
                   .. "headers assumed to cost more than IB's measured 0.94",
  -- "21 scale-up ports ... using 21/7=3 scale-up ports for each connection
  -- inside the box" (docs.habana.ai): a pair talks over 1/7 of bw.
  mesh_peers = 7,
  source = "stas00/ml-engineering (Gaudi 3: intra-node 600 GB/s unidirectional, "
        .. "24 x 200 Gbps); theregister.com 2024-04-09; mesh: docs.habana.ai Intel "
        .. "Gaudi Network Configuration ('Each Intel Gaudi 3 AI accelerator has 21 "
        .. "scale-up ports ... connect to seven other accelerators inside a single "
        .. "HLS-3 box in an All2All manner, essentially using 21/7=3 scale-up ports "
        .. "for each connection inside the box')",
  notes = "latency: NCCL's network LL per-step figure used as a stand-in.",
}
