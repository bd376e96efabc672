-- Scale-out fabrics between nodes. Bandwidth is per NIC port, per direction
-- (a "400Gb/s" port carries 50 GB/s each way).
--
-- latency: NCCL 2.30.7's per-step network latency with LL
-- (hwLatencies[NET][RING][LL] = 2.7 us; Simple 14 us). It is the same for
-- every transport in NCCL's model (IB and socket transports report no
-- latency of their own); the physical switch hop is a small part of it.
-- EFA is the exception: AWS's plugin prices its own step (efa-100).
--
-- achievable: nccl-tests bus bandwidth per NIC divided by the line rate.

fabric {
  id = "ib-edr-100", name = "InfiniBand EDR 100 Gb/s",
  scope = "scaleout", kind = "network",
  bw = "100Gb/s per-dir",
  latency = "2.7us",
  achievable = 0.94,
  achievable_reason = "not measured; the NDR fraction (0.94) is assumed",
  source = "stas00/ml-engineering network/README.md (IB generation table)",
  notes = "Switch-IB 2 (EDR) had SHARP v1 for small messages only; no in-switch "
       .. "reduction is modelled.",
}

fabric {
  id = "ib-hdr-200", name = "InfiniBand HDR 200 Gb/s (ConnectX-6)",
  scope = "scaleout", kind = "network",
  bw = "200Gb/s per-dir",
  latency = "2.7us",
  achievable = 0.96,
  achievable_reason = "NCCL's maintainers measure 192 GB/s ring all-reduce busbw on "
                   .. "DGX A100's 8 x 200 Gb/s IB NICs, 24 of 25 GB/s per NIC (nccl#1576 "
                   .. "quoting nccl#812); SimAI calibrates ConnectX-6 lower, at 23.5 (0.94): "
                   .. "headers and flow control",
  in_switch_reduction = "sharp",
  source = "stas00/ml-engineering network/README.md; NVIDIA/nccl issues #812, #1576 "
        .. "(AddyLaddy: DGX-A100 2 nodes, 192 GB/s); aliyun/SimAI calbusbw.h (CX6 23.5 "
        .. "GB/s)",
  notes = "Quantum (HDR) switches support SHARP v2 (large-message reduction), "
       .. "used by NCCL through the CollNet plugin.",
}

fabric {
  id = "ib-ndr-400", name = "InfiniBand NDR 400 Gb/s (ConnectX-7)",
  scope = "scaleout", kind = "network",
  bw = "400Gb/s per-dir",
  latency = "2.7us",
  achievable = 0.94,
  achievable_reason = "nccl-tests reach 46-49 GB/s per NDR NIC of 50 (maintainers "
                   .. "in nccl-tests #290 and #267); SimAI calibrates CX7 at 48.5",
  in_switch_reduction = "sharp",
  source = "stas00/ml-engineering network/README.md; NVIDIA/nccl-tests issues #290, "
        .. "#267; aliyun/SimAI calbusbw.h",
  notes = "Quantum-2 switches: SHARP v3.",
}

fabric {
  id = "ib-xdr-800", name = "InfiniBand XDR 800 Gb/s (ConnectX-8)",
  scope = "scaleout", kind = "network",
  bw = "800Gb/s per-dir",
  latency = "2.7us",
  achievable = 0.94,
  achievable_reason = "the NDR fraction, which NCCL reaches on ConnectX-8: 16 nodes of 8 B300 "
                   .. "and 8 CX8 (on Ethernet, each CX8 split into 2 x 400G) run the ring "
                   .. "all-reduce at 760 GB/s busbw on 2-16 nodes (NVIDIA/nccl#2035, NCCL "
                   .. "2.29.7), 95 GB/s a CX8, 0.95 of 800 Gb/s; "
                   .. "no all-to-all figure on it found",
  in_switch_reduction = "sharp",
  source = "stas00/ml-engineering network/README.md (IB generations; DGX B300: 8x 800G "
        .. "ConnectX-8)",
}

fabric {
  id = "roce-100", name = "RoCE v2 100 GbE",
  scope = "scaleout", kind = "network",
  bw = "100Gb/s per-dir",
  latency = "2.7us",
  achievable = 0.90,
  achievable_reason = "no measurement read; Ethernet framing and congestion "
                   .. "control (PFC/ECN) assumed to cost a little more than IB",
  source = "arithmetic (100 Gb/s / 8 = 12.5 GB/s); stas00/ml-engineering adapters table",
}

fabric {
  id = "roce-200", name = "RoCE v2 200 GbE",
  scope = "scaleout", kind = "network",
  bw = "200Gb/s per-dir",
  latency = "2.7us",
  achievable = 0.90,
  achievable_reason = "no measurement read; Ethernet framing and congestion "
                   .. "control (PFC/ECN) assumed to cost a little more than IB",
  source = "arithmetic (200 Gb/s / 8 = 25 GB/s)",
}

fabric {
  id = "roce-400", name = "RoCE v2 400 GbE (ConnectX-7 / BlueField-3)",
  scope = "scaleout", kind = "network",
  bw = "400Gb/s per-dir",
  latency = "2.7us",
  achievable = 0.90,
  achievable_reason = "Ethernet framing and congestion control (PFC/ECN) cost a "
                   .. "little more than IB's 0.94; the published H100 RoCE logs, all "
                   .. "filed because they ran slow, reach 40-41.5 GB/s per NIC "
                   .. "(0.80-0.83: nccl#1221 4-node ring, nccl#1411), a floor "
                   .. "rather than the typical fabric (nccl-tests#232's 41 GB/s is "
                   .. "one H100 feeding 4 NICs: its own PCIe link binds)",
  source = "arithmetic (400 Gb/s / 8 = 50 GB/s); stas00/ml-engineering adapters table",
}

fabric {
  id = "gcp-tcpx-200", name = "Google Cloud GPUDirect-TCPX, 200 Gb/s per data NIC (A3 High)",
  scope = "scaleout", kind = "network",
  bw = "200Gb/s per-dir",
  -- NCCL's network step, as for every transport (the header): the TCPX
  -- plugin is a socket transport and reports no latency of its own.
  latency = "2.7us",
  -- dstack's A3 High guide ran nccl-tests all_gather ("redop none") over
  -- 16 H100s of two a3-highgpu-8g VMs with the TCPX plugin: out-of-place
  -- busbw "49.99" at 128 MiB, "49.27" at 1 GiB, "50.17" at 8 GiB -- a
  -- plateau of 50.17 GB/s over the VM's four data NICs, 12.54 GB/s a NIC,
  -- 0.50 of 25 GB/s.  The same model with four roce-200 NICs (0.90)
  -- gives 89.9 GB/s there.
  achievable = 0.50,
  achievable_reason = "dstack's two-VM A3 High nccl-tests all_gather over GPUDirect-TCPX: "
                   .. "a 50.17 GB/s busbw plateau (128 MiB to 8 GiB) over four 200 Gb/s "
                   .. "data NICs, 12.54 of 25 GB/s a NIC: TCP through the host's NICs with "
                   .. "GPUDirect (no RDMA), its receive path steered by the RxDM service",
  source = "github.com/dstackai/dstack examples/clusters/a3high/README.md (stored at "
        .. "6f6b421b2f): \"GCP's A3 High instances are 8xH100 VMs that have 1000Gbps "
        .. "maximum network bandwidth\", \"GPUDirect-TCPX - the GCP technology for GPU "
        .. "RDMA over TCP\", \"Setting up four extra data NICs on every node\"; its "
        .. "nccl-tests table (\"8589934592 134217728 float none -1 160505 53.52 50.17\"). "
        .. "200 Gb/s a data NIC: four data NICs of the 1000 Gb/s, the primary NIC the rest "
        .. "(Google Cloud's a3-highgpu-8g description, not in the stored text)",
  notes = "A3 High (a3-highgpu-8g) and A3 Edge: 8 H100 SXM on NVLink 4, four data NICs "
       .. "for the GPUs' traffic (NCCL_GPUDIRECTTCPX_SOCKET_IFNAME=eth1,eth2,eth3,eth4). "
       .. "A3 Mega's TCPXO (eight NICs) is another transport, not this entry.",
}

fabric {
  id = "efa-100", name = "AWS Elastic Fabric Adapter, 100 Gb/s per adapter",
  scope = "scaleout", kind = "network",
  bw = "100Gb/s per-dir",
  -- The network step of a P5's EFA as AWS's own tuner plugin prices it,
  -- 20 us (aws-ofi-nccl include/nccl_ofi_tuner.h: "Latency in usecs",
  -- TUNER_NET_LATENCY 20; src/tuner/nccl_ofi_model.c: internode steps x
  -- net_lat; its bandwidths written "For Hopper GPUs on P5"): SRD through
  -- libfabric and the plugin's proxy, not InfiniBand's verbs (2.7 us).
  latency = "20us",
  achievable = 0.85,
  achievable_reason = "no measurement read; SRD over Ethernet assumed below "
                   .. "RoCE",
  -- NCCL sees a P5's 32 adapters as 8 devices, one per GPU at 4 x 100 Gb/s:
  -- the plugin's RDMA protocol (P5's default) joins the NICs nearest each
  -- GPU and reports "Scale speed by the total number of rails".
  nccl = {
    rails = true,
    -- The tree reaches half the ring's network rate on a P5 across 3 or
    -- more nodes, where the model is consulted ("Skip runs smaller than 2
    -- nodes", the engine's tree_share): AWS's own
    -- cost model for "P5 & P5e" in the same plugin prices the all-reduce
    -- ring's bandwidth at "internode_bw * num_rails * num_channels" and
    -- the tree's at "(internode_bw * num_rails * num_channels) / 2", over
    -- the same message size (src/tuner/nccl_ofi_model.cpp,
    -- nccl_ofi_tuner_compute_cost).  AWS's measured regions below agree:
    -- that model, with the half rate, picks the regions' pair at 32 and
    -- 256 MiB on 4-32 nodes (Tree/LL128 or Ring/LL128); at the full rate
    -- it would pick the tree up to ~1.7 GB on 4 nodes, where the regions
    -- run the ring from 36 MiB.  The model's other constants are not
    -- taken: its 20 us network step is `latency` here already, and its
    -- NVLS_TREE rate (min(20, 25) GiB/s x channels, 0.4 of the ring)
    -- is what AWS overrides with measured picks (the model's own 16-node
    -- 3-5 GiB NVLS_TREE quirk; the regions' NVLS_TREE above 2 GiB).
    tree_share = 0.5,
    -- A message's completion reaches the proxy 3 us after it has crossed:
    -- "With EFA, we expect a ~2µsec cost in the device and ~1µsec cost to
    -- write that completion up to the host stack" (aws-ofi-nccl v1.16.3
    -- include/nccl_ofi_param.h, TUNER_NET_COMP_OVERHEAD 3, which AWS's
    -- model adds to the network step of Simple, whose proxy waits for the
    -- completion).  The RDMA protocol completes a receive on the data and
    -- on its control message ("total_num_compls = recv_completion_optional
    -- ? 1 : 2", nccl_ofi_rdma.cpp; early completion is off while eager
    -- sends are on, EAGER_MAX_SIZE 8192) and a send once the control
    -- message is in, so both crossings of a slot's round trip pay it (the
    -- engine's ring_window).
    completion = "3us",
    -- The plugin takes one receive a call, so PXN cannot group the
    -- messages of a node's 8 GPUs into one receive: "#define
    -- NCCL_OFI_MAX_RECVS 1" and "props->max_group_receives =
    -- NCCL_OFI_MAX_RECVS" (aws-ofi-nccl v1.16.3 include/nccl_ofi.h,
    -- src/nccl_ofi_net.cpp; the same through v1.19.0, 8 from v1.20.0,
    -- April 2026), which NCCL reads as the device's maxRecvs.
    max_recvs = 1,
    -- AWS's region tuner, which the plugin loads on a p5.48xlarge ("Region"
    -- is TUNER_TYPE's default, nccl_ofi_param.h): the all-reduce regions
    -- for 8 ranks a node, in its order, first match wins, a point on an
    -- edge inside (src/tuner/nccl_ofi_regions.cpp
    -- region_init_internal_p5_p5e, nRanks == 8 * nNodes).  x bytes, y
    -- ranks.  Its extend_region corners are written out: a vertical edge
    -- at 402653184 B runs up to TUNER_MAX_RANKS (1048576), and the line
    -- through (8053063680, 160) and (9663676416, 192) meets TUNER_MAX_SIZE
    -- (100 GiB) at 6400/3 ranks.  NVLS_TREE is the engine's nvls across
    -- nodes.
    region_ppn = 8,
    regions = {
      { algo = "tree", proto = "ll128", vertices = {
        { 0, 16 }, { 31457280, 16 }, { 37748736, 32 }, { 117440512, 64 },
        { 301989888, 128 }, { 301989888, 256 }, { 335544320, 512 },
        { 536870912, 1024 }, { 402653184, 2048 }, { 402653184, 4096 },
        { 402653184, 1048576 }, { 0, 1048576 } } },
      { algo = "nvls", proto = "simple", vertices = {
        { 31457281, 16 }, { 107374182400, 16 }, { 31457281, 16 } } },
      { algo = "ring", proto = "ll128", vertices = {
        { 31457280, 17 }, { 1073741824, 17 }, { 2147483648, 64 },
        { 2147483648, 128 }, { 1342177280, 160 }, { 2147483648, 256 },
        { 1074790400, 256 }, { 444596224, 160 }, { 301989888, 128 },
        { 117440512, 64 }, { 37748736, 32 } } },
      { algo = "nvls", proto = "simple", vertices = {
        { 2147483648, 128 }, { 6442450944, 128 }, { 8053063680, 160 },
        { 9663676416, 192 }, { 107374182400, 6400 / 3 },
        { 402653184, 1048576 }, { 402653184, 4096 }, { 402653184, 2048 },
        { 536870912, 1024 }, { 335544320, 512 }, { 301989888, 256 },
        { 310378496, 160 }, { 444596224, 160 }, { 1074790400, 256 },
        { 2684354560, 256 }, { 2147483648, 224 }, { 1342177280, 160 } } },
      { algo = "ring", proto = "simple", vertices = {
        { 1073741824, 17 }, { 107374182400, 17 }, { 107374182400, 6400 / 3 },
        { 9663676416, 192 }, { 8053063680, 160 }, { 2684354560, 64 },
        { 1610612736, 32 } } },
    },
    source = "aws/aws-ofi-nccl v1.16.3 (b9e4cc42) src/platform-aws.cpp "
          .. "('p5/p5e' .default_protocol = \"RDMA\"); src/nccl_ofi_topo.cpp "
          .. "('The libfabric NIC grouping algorithm uses the locality of NICs "
          .. "and GPUs in the hardware topology to group NICs'); "
          .. "src/nccl_ofi_rdma.cpp get_properties ('Scale speed by the total "
          .. "number of rails', port_speed x max_group_size); "
          .. "src/tuner/nccl_ofi_model.cpp (P5 tree bandwidth '/ 2'); "
          .. "src/tuner/nccl_ofi_regions.cpp (P5 all-reduce regions); "
          .. "include/nccl_ofi_param.h (TUNER_NET_COMP_OVERHEAD: completion); "
          .. "include/nccl_ofi.h ('#define NCCL_OFI_MAX_RECVS 1': max_recvs)",
  },
  source = "stas00/ml-engineering inter-node table (AWS P5: 32 x 100G EFA); "
        .. "aws/aws-ofi-nccl include/nccl_ofi_tuner.h (TUNER_NET_LATENCY 20)",
  notes = "P5's EFAv2. The plugin also reports 75 us to NCCL for p4d, p4de "
       .. "and p5 (platform-aws.cpp platform_data_map), which NCCL adds to "
       .. "each network step of its own estimate (twice with Simple). AWS's "
       .. "tuner plugin ranks P5 jobs of 3 nodes or more; on 2 it leaves the "
       .. "choice to NCCL's own tuner ('Skip when two nodes or lesser', "
       .. "nccl_ofi_regions.cpp, 1.14-1.16; nccl_ofi_tuner.c 1.9.2), and NCCL "
       .. "2.20 loads a tuner only through NCCL_TUNER_PLUGIN (misc/tuner.cc), "
       .. "which aws-ofi-nccl 1.8 ships apart as libnccl-ofi-tuner; the engine's "
       .. "estimate ranks with this entry's 20 us, not 75. Two published 2 x P5 all_reduce_perf "
       .. "runs take 65-88 us from 8 B to 1 KiB: 20 us a step gives 60 us, "
       .. "75 would give 170. EFAv1 (p4d, p4de: 4 adapters) is not this "
       .. "entry: 2 x p4de run 161-164 us at 8 B "
       .. "(aws-samples/awsome-distributed-training nccl-tests README).",
}

fabric {
  id = "opa-100", name = "Intel Omni-Path 100 Gb/s",
  scope = "scaleout", kind = "network",
  bw = "100Gb/s per-dir",
  latency = "2.7us",
  achievable = 0.85,
  achievable_reason = "no measurement read; assumed below InfiniBand (PSM2 "
                   .. "host-driven transport)",
  source = "arithmetic (100 Gb/s / 8 = 12.5 GB/s)",
}
