-- PCIe as the GPU-to-GPU fabric (x16 slots, bandwidth per GPU).
--
-- latency: NCCL 2.30.7 per-step hardware latency for PCI with LL
-- (hwLatencies[PCI][RING][LL] = 1.0 us; Simple 5.7 us).
--
-- crosses_cpu = true: in an 8-card host the cards sit under two CPU sockets,
-- so a ring crosses the socket interconnect, and GeForce cards (P2P disabled)
-- bounce every transfer through host memory. A host whose cards all share one
-- PCIe switch with P2P enabled does not: override with a user fabric.

fabric {
  id = "pcie3", name = "PCIe Gen3 x16",
  scope = "scaleup", kind = "pcie",
  bw = "32GB/s bidir",
  latency = "1us",
  achievable = 0.75,
  achievable_reason = "NCCL's topology model gives a Gen3 x16 path 12 GB/s "
                   .. "(PCI_BW) of the 16 GB/s line rate; 128b/130b encoding and "
                   .. "TLP headers take the rest",
  crosses_cpu = true,
  source = "NVIDIA T4 'PCIe Gen3 x16, 32 GB/s' ('Data Center PCIe Cards' table); "
        .. "NVIDIA/nccl src/graph/topo.h (PCI_BW 12.0)",
}

fabric {
  id = "pcie4", name = "PCIe Gen4 x16",
  scope = "scaleup", kind = "pcie",
  bw = "64GB/s bidir",
  latency = "1us",
  achievable = 0.80,
  achievable_reason = "SimAI's calibrated A100/A800 PCIe figure 25.6 of 32 GB/s "
                   .. "per direction; ml-engineering gives 31 GB/s after "
                   .. "encoding, the rest is protocol overhead",
  crosses_cpu = true,
  source = "NVIDIA datasheets ('PCIe Gen4 64 GB/s'); stas00/ml-engineering "
        .. "network/README.md (31 uni / 62 duplex); aliyun/SimAI calbusbw.h",
}

fabric {
  id = "pcie5", name = "PCIe Gen5 x16",
  scope = "scaleup", kind = "pcie",
  bw = "128GB/s bidir",
  latency = "1us",
  achievable = 0.80,
  achievable_reason = "SimAI's calibrated H100/H800 PCIe figure 51.2 of 64 GB/s "
                   .. "per direction",
  crosses_cpu = true,
  source = "NVIDIA datasheets ('PCIe Gen5 128 GB/s'); stas00/ml-engineering (63 uni / "
        .. "126 duplex); aliyun/SimAI calbusbw.h",
}

-- The same links with GPU peer-to-peer: the cards write into each other's
-- memory through a PCIe switch or one root complex (NCCL's P2P transport),
-- nothing is staged in host memory.  Data-center cards under one switch, or
-- GeForce cards with P2P enabled (tinygrad/open-gpu-kernel-modules); a ring
-- still runs at the x16 link's achievable rate.
fabric {
  id = "pcie4-p2p", name = "PCIe Gen4 x16, GPU peer-to-peer",
  scope = "scaleup", kind = "pcie",
  bw = "64GB/s bidir",
  latency = "1us",
  achievable = 0.80,
  achievable_reason = "as pcie4: SimAI's calibrated 25.6 of 32 GB/s per direction",
  source = "as pcie4; NVIDIA/nccl src/transport/p2p.cc (P2P over PCIe when the "
        .. "path allows it, NCCL_P2P_LEVEL)",
}

fabric {
  id = "pcie5-p2p", name = "PCIe Gen5 x16, GPU peer-to-peer",
  scope = "scaleup", kind = "pcie",
  bw = "128GB/s bidir",
  latency = "1us",
  achievable = 0.80,
  achievable_reason = "as pcie5: SimAI's calibrated 51.2 of 64 GB/s per direction",
  source = "as pcie5; NVIDIA/nccl src/transport/p2p.cc (P2P over PCIe when the "
        .. "path allows it, NCCL_P2P_LEVEL)",
}

fabric {
  id = "pcie6", name = "PCIe Gen6 x16",
  scope = "scaleup", kind = "pcie",
  bw = "121GB/s per-dir",
  latency = "1us",
  achievable = 0.80,
  achievable_reason = "no measurement; the Gen4/Gen5 fraction is assumed",
  crosses_cpu = true,
  source = "stas00/ml-engineering network/README.md (Gen6 x16: 121 uni / 242 duplex)",
  notes = "121 GB/s already excludes FLIT/FEC overhead per ml-engineering; "
       .. "the raw x16 rate is 128 GB/s per direction.",
}
