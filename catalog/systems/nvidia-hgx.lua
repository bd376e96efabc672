-- 8-GPU NVLink nodes (DGX/HGX) and the GB200 NVL72 rack.
--
-- host_mem_bw is the theoretical DRAM bandwidth of the host, all sockets:
-- channels x transfer rate x 8 bytes. Servers with two DIMMs per channel
-- (DGX H100/B200 carry 32 DIMMs) may clock the memory lower; what offload
-- actually gets per GPU is usually bounded by the GPU's PCIe link first.
-- HGX boards ship inside vendors' servers: where the host is not fixed by a
-- product spec, the DGX sibling's host is used and the notes say so.

system {
  id = "dgx-2", name = "NVIDIA DGX-2", gpu = "v100-sxm2-32gb", gpus = 16,
  -- 12 NVSwitches join the 16 V100s (two baseboards of 8, 6 switches
  -- each, the boards joined switch to switch): every GPU reaches every
  -- other at its full six NVLink 2 links, not DGX-1's cube-mesh.
  scaleup = "nvlink2",
  nics = 8, nic_fabric = "ib-edr-100",
  host_memory = "1.5TB", host_mem_bw = "255.9GB/s",
  cpu = "2x Intel Xeon Platinum 8168 (24 cores)",
  cpu_vendor = "intel",
  source = "NVIDIA DGX-2 datasheet ('16X NVIDIA Tesla V100', 'GPU Memory 512GB total', "
        .. "'NVIDIA NVSwitch 12', 'CPUs Dual Intel Xeon Platinum 8168, 2.7 GHz, 24-cores', "
        .. "'System Memory 1.5TB', 'Networking 8X 100Gb/sec Infiniband/100GigE'); "
        .. "host_mem_bw derived: 2 sockets x 6 channels x DDR4-2666 x 8 B = 255.9 GB/s",
  notes = "DGX-2's V100s are SXM3 modules (32 GB, 350 W; DGX-2H 450 W) on NVSwitch "
       .. "baseboards; the catalog prices them as the SXM2 32 GB card (the same GV100, "
       .. "80 SMs, 900 GB/s HBM2, six NVLink 2 links).  DeepSpeed-Chat's V100 runs were "
       .. "on one DGX-2 node (16 GPUs).",
}

system {
  id = "dgx-a100", name = "NVIDIA DGX A100 640GB", gpu = "a100-sxm-80gb", gpus = 8,
  scaleup = "nvlink3",
  nics = 8, nic_fabric = "ib-hdr-200",
  host_memory = "2TB", host_mem_bw = "409.6GB/s",
  cpu = "2x AMD EPYC 7742 (64 cores)",
  cpu_vendor = "amd",
  source = "NVIDIA DGX A100 datasheet/user guide (8x A100 80GB, 6 NVSwitches, 2x EPYC "
        .. "7742, 2 TB, 8x ConnectX-6 200 Gb/s HDR); host_mem_bw derived: 2 sockets x "
        .. "8 channels x DDR4-3200 x 8 B = 409.6 GB/s",
  notes = "The original DGX A100 320GB has 40 GB GPUs and 1 TB of host memory.",
}

system {
  id = "hgx-a800", name = "HGX A800 8-GPU server", gpu = "a800-sxm-80gb", gpus = 8,
  scaleup = "nvlink3-a800",
  nics = 8, nic_fabric = "ib-hdr-200",
  host_memory = "2TB", host_mem_bw = "409.6GB/s",
  cpu = "2x AMD EPYC 7742 (64 cores), as DGX A100 (typical, not fixed)",
  cpu_vendor = "amd",
  source = "A800 board as catalog/gpus (techpowerup, LLM-Prof); host and NICs taken "
        .. "from DGX A100",
  notes = "Vendor servers vary (Intel Ice Lake hosts and 4x 200G NICs are also "
       .. "common); override in a user catalog for a specific cluster.",
}

system {
  id = "dgx-h100", name = "NVIDIA DGX H100", gpu = "h100-sxm", gpus = 8,
  scaleup = "nvlink4",
  nics = 8, nic_fabric = "ib-ndr-400",
  host_memory = "2TB", host_mem_bw = "614.4GB/s",
  cpu = "2x Intel Xeon Platinum 8480C (56 cores)",
  cpu_vendor = "intel",
  source = "NVIDIA DGX BasePOD reference architecture, core components (DGX H100/H200: "
        .. "4 NVSwitches, 2x Xeon Platinum 8480C, 2 TB DDR5, 8x single-port "
        .. "ConnectX-7 up to 400 Gb/s); host_mem_bw derived: 2 x 8 channels x "
        .. "DDR5-4800 x 8 B",
}

system {
  id = "hgx-h800", name = "HGX H800 8-GPU server", gpu = "h800-sxm", gpus = 8,
  scaleup = "nvlink4-h800",
  nics = 8, nic_fabric = "ib-ndr-400",
  host_memory = "2TB", host_mem_bw = "614.4GB/s",
  cpu = "2x Intel Xeon Platinum 8480C, as DGX H100 (typical, not fixed)",
  cpu_vendor = "intel",
  source = "DeepSeek-V3 technical report (arXiv:2412.19437) sections 3.1 and 3.2.2: H800 nodes of 8 "
        .. "GPUs on NVLink/NVSwitch, InfiniBand between nodes, ~160 GB/s NVLink vs "
        .. "50 GB/s IB per GPU (one 400G NIC per GPU); host as DGX H100",
}

system {
  id = "hgx-h20", name = "HGX H20 8-GPU server", gpu = "h20", gpus = 8,
  scaleup = "nvlink4",
  nics = 8, nic_fabric = "ib-ndr-400",
  host_memory = "2TB", host_mem_bw = "614.4GB/s",
  cpu = "2x Intel Xeon Platinum 8480C, as DGX H100 (typical, not fixed)",
  cpu_vendor = "intel",
  source = "1cnz.cn (H20: SXM 8-way HGX, NVLink 900 GB/s); NIC layout as the 2-node H20 "
        .. "nccl-tests setup in validation/cases.json (8x NDR per node); host as DGX H100",
}

system {
  id = "dgx-h200", name = "NVIDIA DGX H200", gpu = "h200-sxm", gpus = 8,
  scaleup = "nvlink4",
  nics = 8, nic_fabric = "ib-ndr-400",
  host_memory = "2TB", host_mem_bw = "614.4GB/s",
  cpu = "2x Intel Xeon Platinum 8480C (56 cores)",
  cpu_vendor = "intel",
  source = "NVIDIA DGX BasePOD reference architecture, core components (DGX H200: 1,128 "
        .. "GB GPU memory, same host as DGX H100)",
  notes = "An MLPerf H200 system lists 10x 400G InfiniBand ports (8 compute + 2 "
       .. "storage).",
}

-- A server on the 4-GPU HGX H200 board (Lenovo, Supermicro, Dell ... build
-- them; no DGX sibling): four SXM H200s joined as a mesh (nvlink4-hgx4),
-- one 400G NIC a GPU as the DGX's compute rails.  The host is the DGX
-- H200's (header), halved to its four GPUs' share of the memory.
system {
  id = "hgx-h200-4gpu", name = "HGX H200 4-GPU server", gpu = "h200-sxm", gpus = 4,
  scaleup = "nvlink4-hgx4",
  nics = 4, nic_fabric = "ib-ndr-400",
  host_memory = "1TB", host_mem_bw = "614.4GB/s",
  cpu = "2x Intel Xeon Platinum 8480C (56 cores)",
  cpu_vendor = "intel",
  source = "docs.nvidia.com/ai-enterprise vgpu/features/nvswitch.html (NVSwitch only "
        .. "on the 8-GPU HGX baseboards); NVIDIA/nccl#1617 (4-GPU H100 SXM node, NV6 "
        .. "between every pair)",
  notes = "The NIC count, fabric and host are the DGX H200's per GPU, not a "
       .. "product's spec: vendors' 4-GPU servers differ.",
}

system {
  id = "dgx-b200", name = "NVIDIA DGX B200", gpu = "b200", gpus = 8,
  scaleup = "nvlink5",
  nics = 8, nic_fabric = "ib-ndr-400",
  host_memory = "2TB", host_mem_bw = "716.8GB/s",
  cpu = "2x Intel Xeon Platinum 8570 (56 cores)",
  cpu_vendor = "intel",
  -- A Blackwell GPU's launches cost its x86 host more than a Hopper's.
  -- NVIDIA/TransformerEngine issue #2053 ("High CPU overhead on Grace
  -- systems", 2025-08) times one torch.nn.Linear forward (bf16, hidden
  -- 2048, 8192 tokens) on the host: "GB200 | torch | 37.08", "GH200 |
  -- torch | 33.17", "H100 DGX | torch | 13.48" us.  GB200 and GH200 run
  -- the same script on the same CPU (Grace, 72 Neoverse V2 cores), so
  -- 37.08 / 33.17 = 1.118 is the GPU generation's share: the same call
  -- driving a Blackwell GPU (cuBLASLt's sm100 path, the launch) takes
  -- the host 11.8% longer than driving a Hopper.  The per-op figure
  -- every host scales from, GP_EAGER_OP_TIME (engine/common.h), is timed
  -- on an A100's x86 host, so an x86 host driving B200s pays 1.118 of
  -- it.  The Grace racks' 2.75 (gb200-nvl72) already holds the same
  -- factor: Grace's own, GPU generation for generation (GH200 over DGX
  -- H100, both Hopper), is 33.17 / 13.48 = 2.461, and 2.461 x 1.118 =
  -- 2.75.  One script's plain PyTorch call, not Megatron's layer: the
  -- ratio, not the level, is what is taken.  The figures the model
  -- scales with it include TE_EXPERT_GEMM (engine/train_layer.c), timed
  -- on an SM100 GPU whose host PR #3134 does not name; every system
  -- takes it as an x86 host's, as before.
  host_op_scale = 1.118,
  source = "NVIDIA DGX B200 user guide, 'Introduction to NVIDIA DGX B200 Systems' (8x B200, "
        .. "1,440 GB GPU memory, 2x Xeon 8570, 2 NVSwitch chips, 8x ConnectX-7 400 Gb/s, "
        .. "2 TB in 32 DIMMs upgradable to 4 TB); host_mem_bw derived: 2 x 8 channels "
        .. "x DDR5-5600 x 8 B; host_op_scale: NVIDIA/TransformerEngine issue #2053 "
        .. "(torch.nn.Linear forward's host time, GB200 37.08 us over GH200 33.17 us: "
        .. "a Blackwell GPU's launches over a Hopper's on one CPU)",
}

system {
  id = "dgx-b300", name = "NVIDIA DGX B300", gpu = "b300", gpus = 8,
  scaleup = "nvlink5",
  -- Eight ConnectX-8 SuperNICs on the GPU board, one a GPU, cabled to
  -- eight 800G OSFP ports at the front (the DGX B300 user guide's
  -- figures); the DGX SuperPOD B300 reference architectures build the
  -- compute fabric of XDR (800 Gbps) InfiniBand or 800 Gbps Spectrum-X.
  nics = 8, nic_fabric = "ib-xdr-800",
  -- Host memory as DGX B200's (2 TB; no DGX B300 figure read);
  -- host_mem_bw derived: 2 sockets x 8 channels x DDR5-6400 x 8 B (the
  -- 6776P's "8 RAM-Kanäle, DDR5-6400"; two DIMMs a channel run at 5200).
  host_memory = "2TB", host_mem_bw = "819.2GB/s",
  cpu = "2x Intel Xeon 6776P (64 cores)",
  cpu_vendor = "intel",
  -- B300 is a Blackwell GPU on an x86 host: the dgx-b200 entry's 1.118
  -- (TransformerEngine issue #2053, GB200 over GH200 on one Grace CPU).
  host_op_scale = 1.118,
  source = "heise.de/-10395118 (Intel Xeon 6 6776P, 'Diesen Prozessor setzt Nvidia im DGX "
        .. "B300 ein': two 6776P with eight B300; 2S, 64 cores, 350 W, 8 channels DDR5-6400); "
        .. "aiwiki.ai nvidia_dgx_b300 (eight B300 SXM GPUs with Intel Xeon 6776P, 10U); "
        .. "vengineer.hatenablog.com 2025-12-06 reading the NVIDIA DGX B300 User Guide "
        .. "(8x ConnectX-8 on the GPU tray, 8x 800G ports at the front); "
        .. "docs.nvidia.com dgx-superpod reference-architecture scalable-infrastructure-b300 "
        .. "('NVIDIA XDR (800 Gbps) InfiniBand', 'NVIDIA Spectrum-X (800 Gbps) Ethernet'); "
        .. "host_op_scale: as dgx-b200 (NVIDIA/TransformerEngine issue #2053)",
  notes = "Host memory size and the NICs' link rate in a given cluster are not fixed "
       .. "by these sources: a cluster on NDR (400G) switches runs the ConnectX-8 at "
       .. "400G -- give --nic-fabric ib-ndr-400.",
}

system {
  id = "gb200-nvl72", name = "NVIDIA GB200 NVL72 rack (one NVLink domain)", gpu = "gb200",
  gpus = 72,
  scaleup = "nvlink5",
  nics = 72, nic_fabric = "ib-ndr-400",
  host_memory = "17TB", host_mem_bw = "18.4TB/s",
  cpu = "36x NVIDIA Grace (72 Arm Neoverse V2 cores each), 1 per 2 GPUs",
  cpu_vendor = "arm",
  -- One torch.nn.Linear forward (bf16, hidden 2048, 8192 tokens) costs
  -- the host 37.08 us on GB200's Grace against 13.48 us on a DGX H100's
  -- Xeon Platinum 8480C (NVIDIA/TransformerEngine issue #2053, "High CPU
  -- overhead on Grace systems", 2025-08: the same script on both):
  -- 37.08 / 13.48 = 2.75.  A ratio of plain PyTorch, not of Transformer
  -- Engine: TE's CPU-overhead work since (PRs #2377 and #2400 in v2.10,
  -- #2439 in v2.12, #2559 in v2.14; TE #2126, 2026-01: "TELinear is nearly
  -- the same with vanilla torch linear") cuts TE's own time above torch's
  -- on any host, so no TE release changes this ratio.
  host_op_scale = 2.75,
  -- The issue names no launcher and no binding (one process of its own
  -- script), so 2.75 is the unbound figure.  Bound (numa_bind): Megatron-
  -- LM's DeepSeek-V3 account (docs/discussions/deepseek-v3-gb200-
  -- optimization, at the commit before cdee7a5, Nov 2025, sec. 2.4):
  -- bindpcie's numactl binding of "the CPU and memory of the process to
  -- the local NUMA node corresponding to its GPU ... reduces per-GPU
  -- kernel launch latency and the latency variation among GPUs, and
  -- improves E2E performance by 70.6 TFLOPS" -- sec. 3's table, 691.49 ->
  -- 762.12 TFLOP/s a GPU (DeepSeek-V3 MXFP8 on 256 GB200, TP1 PP8 VPP4
  -- EP32, MBS 1, GBS 2048, DeepEP, CUDA graphs on attention, router and
  -- preprocess): the bound step 1 - 691.49 / 762.12 = 9.27% shorter.
  -- Through gpuplan's own host share of that run (gp.train deepseek-v3
  -- on 256 gb200, tp 1, pp 8, vpp 4, ep 32, batch 1, global_batch 2048,
  -- seq 4096, precision fp8, fp8_scaling block, stack megatron,
  -- moe_dispatcher flex, moe_flex_backend deepep, recompute_modules
  -- moe_act, cuda_graph_scope attn, moe_router, moe_preprocess;
  -- tests/lua/numa_bind.t): when this was set, 1098.90 model TFLOP/s a
  -- GPU at 2.75, 1111.44 at 2.5, so 1 - 1098.90 / 1111.44 = 1.13% of the
  -- step per 9.09% of the factor, 12.4% of its step scales with it, and
  -- 1136.79 from 2.01 down, no host work left on its path.  The measured
  -- 9.27% would take 2.75 x (1 - 0.0927 / 0.124) = 0.69, below that
  -- floor: the model reaches the whole of its gain at 2.01, and the bound
  -- factor is that, 2.0 (the model prices this run's level 49-59% high,
  -- 1136.79 / 762.12 and 1098.90 / 691.49, not its host share).  The
  -- measurement alone bounds it too: were the whole step the host's,
  -- 2.75 x 691.49 / 762.12 = 2.50; any smaller share needs a smaller
  -- factor.  Re-run since DeepEP's local permute and the grouped MLP's
  -- fp8 padding copy are priced (engine/train_layer.c moe_deepep_permute_
  -- costs, moe_fp8_pad's DeepEP default) and DeepEP at 32 ranks runs at
  -- its 24-rank rows (deepep_nvl_frac), the same call gives 873.07 at
  -- 2.75, 883.45 at 2.5 (1 - 873.07 / 883.45 = 1.17% per 9.09%: 12.9% of
  -- the step scales with the factor) and 896.36 from 2.19 down; the
  -- measured 9.27% would take 2.75 x (1 - 0.0927 / 0.129) = 0.78, still
  -- below that floor, so 2.0 is still the whole gain and is not
  -- re-derived (the level: 873.07 / 691.49 = +26.3%, 896.36 / 762.12 =
  -- +17.6%; tests/lua/numa_bind.t re-runs the share and the floor).  Both
  -- rows are now validation cases (mlm-dsv3-gb200-guide-mxfp8-deepep-
  -- tuned-691 and -bindpcie-762), which therefore do not test this
  -- factor.
  host_op_scale_bound = 2.0,
  -- 18 compute trays of two GB200 superchips (2 Grace, 4 Blackwell) each,
  -- one operating system a tray: NeMo RL's GB200 recipes give Ray 4 GPUs a
  -- node (cluster.gpus_per_node: 4, examples/configs/recipes/llm/
  -- performance/grpo-*-*n4g*.yaml, r0.5.0/r0.6.0).
  host_gpus = 4,
  source = "NVIDIA GB200 NVL72 spec table via zdszero.github.io Hardware.html (up to 17 TB "
        .. "LPDDR5X, up to 18.4 TB/s); jax-ml/scaling-book gpus.md (72 GPUs, 18 "
        .. "NVSwitches); one ConnectX-7 400G per GPU as in the GB200 validation cases",
  notes = "The whole rack is one 72-GPU NVLink domain, treated as one node. Grace "
       .. "memory is reached over NVLink-C2C (900 GB/s per superchip), not PCIe, "
       .. "so offload is much cheaper than on x86 hosts.",
}

system {
  id = "gb300-nvl72", name = "NVIDIA GB300 NVL72 rack (one NVLink domain)", gpu = "gb300",
  gpus = 72,
  scaleup = "nvlink5",
  -- "each compute tray includes 2 Mezzanine Network Boards with 2
  -- ConnectX-8 silicon chips in each, for a total of 4 ConnectX-8 Host
  -- Channel Adapters" for its "4 Blackwell Ultra GPUs and 2 Grace CPUs":
  -- one 800 Gb/s XDR ConnectX-8 a GPU.
  nics = 72, nic_fabric = "ib-xdr-800",
  -- The same 36 Grace CPUs as GB200 NVL72 (2 a tray of 4 GPUs), each with
  -- up to 480 GB of LPDDR5X at up to 512 GB/s: the GB200 rack's figures.
  host_memory = "17TB", host_mem_bw = "18.4TB/s",
  cpu = "36x NVIDIA Grace (72 Arm Neoverse V2 cores each), 1 per 2 GPUs",
  cpu_vendor = "arm",
  -- The host is GB200 NVL72's Grace, so its per-launch cost over an x86
  -- server core is the one measured there: a torch.nn.Linear forward
  -- 37.08 us on GB200's Grace against 13.48 us on DGX H100's Xeon
  -- 8480C (NVIDIA/TransformerEngine issue #2053) = 2.75.
  host_op_scale = 2.75,
  -- Bound to the GPU's NUMA node: gb200-nvl72's 2.0 (the same Grace).
  host_op_scale_bound = 2.0,
  -- 18 compute trays of 4 GPUs, one operating system a tray.
  host_gpus = 4,
  source = "NVIDIA Enterprise Reference Architecture, NVL72 AI factory, 'System Hardware & "
        .. "Components' (docs.nvidia.com/enterprise-reference-architectures/nvl72-ai-factory: "
        .. "GB300 NVL72, 9 NVSwitch trays, compute tray of 4 Blackwell Ultra GPUs and 2 Grace "
        .. "CPUs, 4 ConnectX-8 HCAs a tray); Grace's LPDDR5X and host_op_scale as the "
        .. "gb200-nvl72 entry (same CPU)",
  notes = "The whole rack is one 72-GPU NVLink domain, treated as one node. Grace "
       .. "memory is reached over NVLink-C2C, not PCIe.",
}
