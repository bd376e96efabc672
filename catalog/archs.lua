-- Per-architecture defaults for what the roofline can achieve. A GPU with an
-- `achievable` table of its own overrides these (catalog/gpus/*.lua does so
-- only where a measurement on that exact part exists).
--
-- gemm: the fraction of the DENSE peak that the best large matmul reaches
-- (the "maximum achievable matmul FLOPS", MAMF, of a brute-force shape
-- search). Real layers use smaller shapes and reach less; the size-dependent
-- falloff belongs to the roofline model, not to these constants.
-- hbm: the fraction of the rated memory bandwidth that a streaming kernel
-- (BabelStream copy/triad, large arrays) sustains.
--
-- Every figure below is a published measurement, and an unmeasured
-- precision says so in `reason`; a card's own entry may carry one of ours
-- (the H200 SXM's hbm: measured on a lent H200, dated, with its method).
--
-- sms: streaming multiprocessors (compute units on AMD) of the flagship
-- part, for the GEMM wave model of a GPU entry that gives no `sms` of its
-- own (B300 and GB300 take Blackwell's; so does a user's new part). Ada
-- (58-142 SMs across its parts) and Gaudi (matrix engines, no SMs) give
-- none: no wave term.
--
-- nccl_ll_max_bw: the bus bandwidth NCCL's tuner lets the LL protocol reach on
-- one node for the generation (NVIDIA/nccl src/graph/tuning.cc, 2.30.7,
-- llMaxBws rows "Volta-N1" 39.0, "Ampere-N1" 87.7, "Hopper-N1" 141.0,
-- "Blackwell-N1" 2*141.0 GB/s; Ada, compute capability 8.9, takes the Ampere
-- row). NCCL ranks LL against LL128 and Simple by it, so it sets the size
-- where NCCL leaves LL; it is not a rate LL reaches (engine/comm_algo.c).
-- AMD and Gaudi run RCCL and HCCL, whose tuners are not NCCL's: none.
--
-- nccl_tree_ch_bw: the bus bandwidth NCCL's tuner lets one channel of the
-- tree carry across 2 nodes and across 3 or more (NVIDIA/nccl
-- src/graph/tuning.cc, 2.30.7, perChMaxTreeBws columns N2 and N4: Volta
-- 18.5 / 10.0, Ampere 23.6 / 17.8, Hopper 41.4 / 36.0, Blackwell 42.8 /
-- 24.0 GB/s; "busBw = std::min(busBw * .92, graphs[a]->nChannels *
-- perChMaxTreeBw)"). With few NICs it is what keeps NCCL on the ring
-- (engine/comm_algo.c, nccl_algbw), and it bounds the tree's own time: one
-- block drives each tree (tree_sm_time). Ada takes Ampere's row, Turing
-- Volta's; AMD and Gaudi none.
--
-- nccl_tree_ll128_ch_bw: the bus bandwidth NCCL's tuner lets one channel of
-- the tree carry with LL128 across 2 nodes and across 3 or more (NVIDIA/nccl
-- src/graph/tuning.cc, 2.30.7, perChMaxTreeLL128Bws columns N2 and N4:
-- Volta 20.0 / 20.0, Ampere 20.0 / 20.0, Hopper 36.7 / 29.0, Blackwell
-- 31.67 / 20.0 GB/s; "busBw = std::min(busBw * (nNodes == 1 ? 7.0 / 9.0 :
-- 120.0 / 128.0), graphs[a]->nChannels * perChMaxTreeLL128Bw)", after the
-- perChMaxTreeBw cap). It is the LL128 form of nccl_tree_ch_bw: the block
-- driving each tree moves no more with LL128 (tree_sm_time), and NCCL ranks
-- the LL128 tree by it (nccl_algbw). Ada takes Ampere's row, Turing
-- Volta's; AMD and Gaudi none.
--
-- nccl_ring_ll128_ch_bw: the bus bandwidth NCCL's tuner lets one channel of
-- the ring carry with LL128 (NVIDIA/nccl src/graph/tuning.cc, 2.30.7,
-- perChMaxRingLL128Bws, the same on 1, 2 and 4+ nodes: Volta 20.0, Ampere
-- 20.0, Hopper 36.7, Blackwell 40.0 GB/s; "busBw = std::min(busBw * (0.92
-- /*120.0/128.0*/), graphs[a]->nChannels * perChMaxRingLL128Bw)"). It sets
-- the size where NCCL leaves the LL128 ring for Simple across nodes
-- (engine/comm_algo.c, nccl_algbw); it is not a rate LL128 reaches. Ada
-- takes Ampere's row, Turing Volta's; AMD and Gaudi none.
--
-- nccl_p2p_nvl_ch_bw: what one p2p channel (one thread block of NCCL's
-- send/recv kernel) moves to a peer it writes to over NVLink. NCCL gives
-- a send of S bytes among n ranks of a node min(32 / n, S / 64 KiB)
-- channels, doubled while a channel's part exceeds 16 MiB (v2.29.2-1
-- src/enqueue.cc addP2pToPlan and scheduleP2pTasksToPlan; the engine's
-- p2p_channels), so a mid-size send runs on a few channels and their rate,
-- not the link's, sets its time. Hopper: 20.6 GB/s, NCCL's own per-lane
-- NVLink figure for compute capability 9.0 (src/graph/topo.h "#define
-- SM90_NVLINK_BW 20.6", the unit paths.cc sizes a peer's p2p channels in:
-- "2*std::max(1, (int)(path->bw / nvlBw))"). An HGX H100 node's
-- sendrecv_perf with NCCL 2.29.2 (xxrjun/nccl-tests-cluster @455de4f,
-- example-cluster01 single-node logs, cnode3-002) steps exactly where that
-- rule doubles the channels and moves 20.32-20.46 GB/s a channel once the
-- parts reach 16 MiB (8 GPUs: 64 MiB on 4 channels, 81.82 GB/s; 128 MiB on
-- 8, 162.54; 4 GPUs: 128 MiB on 8, 162.84), 0.99 of the lane. Absent
-- (Volta, Ampere, Ada, Blackwell; AMD, Gaudi): NCCL's network figure,
-- P2P_PER_CHANNEL_NET_BW 14 GB/s, which the 8 x A100 sendrecv row (128 MiB
-- on 8 channels: 110.81 GB/s, 13.9 a channel) measures for Ampere, whose
-- NVLink p2p reads rather than writes (the GPU's nccl_p2p_read); no
-- Blackwell send/recv log at channel-bound sizes was read.

-- Launch overheads: a kernel launched from a stream costs about 4 us of host
-- time (measured 4-6 us per launch + synchronise on an RTX 5070 Ti with
-- CUDA 13, susun-blog.com "pegainfer (3)"); inside a CUDA graph the per-kernel
-- cost drops to about 1 us (NVIDIA blog "Getting Started with CUDA Graphs":
-- a 2.9 us kernel took 3.8 us per kernel with back-to-back stream launches
-- and 3.4 us inside a graph). Both are host-side costs, hidden whenever the
-- GPU work per kernel is longer than the launch. The AMD and Gaudi entries
-- reuse these NVIDIA figures: no HIP or Habana launch measurement was found.

arch {
  id = "volta", name = "NVIDIA Volta",
  achievable = {
    gemm = { fp16 = 0.78 },
    hbm = 0.85,
    reason = "Tesla V100-SXM2, torch matmul in fp16: 97.36 TFLOPS at 8192 x 8192 "
          .. "(95.73 at 4096, 78.23 at 2048) of the 125 peak = 0.78, the best "
          .. "size (torch 2.7.0, cu128, a physical machine); an independent "
          .. "cuBLAS run on a Tesla V100 at a 2048-row prefill shape reaches "
          .. "'f16 ... 95 to 100' TFLOPs. hbm: streaming kernels on a V100 "
          .. "(900 GB/s HBM2, the SXM2's and the PCIe card's alike) sustain "
          .. "0.875-0.92: gpu-benches cuda-stream on a V100-PCIe-16GB at full "
          .. "occupancy, scale (1 load, 1 store stream) 787.8 GB/s = 0.875, triad "
          .. "829.1 = 0.921, its gpu-stream table scale 802 = 0.891, triad 814 = "
          .. "0.904; cudaMemcpy device to device 790 GB/s = 0.878 (V100 16GB "
          .. "PCIe); and eager PyTorch's own elementwise kernel, a + b on 8192 x "
          .. "8192 fp32 in a timed loop of 100, 818.5 GB/s = 0.909 (no eager "
          .. "loss on Volta, unlike Blackwell). On the same gpu-stream "
          .. "benchmark the A100-SXM4-40GB streams at the same share (scale "
          .. "1381 of 1555 = 0.888, triad 1360 = 0.875), which the ampere "
          .. "entry takes at 0.85 (its A100-80GB's BabelStream 0.846): Volta "
          .. "takes Ampere's 0.85 on that ground. Its own 0.88 moves every "
          .. "V100 case further (docs/validation.md, the DeepSpeed autotuning "
          .. "section)",
    source = "zzc0721/torch-performance-test-data issue #140 (Tesla V100-SXM2-16GB); "
          .. "lablup/mlxcel issue #1654 (Volta measured baseline); hbm: "
          .. "te42kyfo/gpu-benches README.md (cuda-stream, 'Example Results for "
          .. "a Tesla V100-PCIe-16GB') and gpu-stream/v100.txt, gpu-stream/"
          .. "a100_40.txt at a7dc559c; paranumal.com 'Rough-n-Ready Roofline: "
          .. "NVIDIA V100 edition' (2018-02-08: 'Using cudaMemcpy we measure "
          .. "achievable memory bandwidth of 790GB/s'); ml-explore/mlx PR #2330 "
          .. "('on a V100 ... in PyTorch the same op has throughput of 818.5 GB/s')",
  },
  sms = 80,  -- NVIDIA V100 whitepaper (V100 SXM2: 80 SMs)
  nccl_ll_max_bw = "39GB/s",
  nccl_tree_ch_bw = { nodes2 = "18.5GB/s", nodes3 = "10GB/s" },
  nccl_tree_ll128_ch_bw = { nodes2 = "20GB/s", nodes3 = "20GB/s" },
  nccl_ring_ll128_ch_bw = "20GB/s",
  launch_overhead = "4us",
  graph_launch_overhead = "1us",
}

arch {
  id = "turing", name = "NVIDIA Turing",
  achievable = {
    gemm = { fp16 = 0.80 },
    hbm = 0.85,
    reason = "no published large-GEMM or streaming measurement on a Turing part was "
          .. "found; 0.80 and 0.85 are the Hopper/Ampere measured values rounded "
          .. "down, an assumption, not a measurement",
    source = "assumption; see the ampere and hopper entries for the measurements",
  },
  sms = 72,  -- full TU102 (TITAN RTX, Quadro RTX 8000): 72 SMs, one RT core each
  -- compute capability 7.5: NCCL's tuner takes the Volta row (tuning.cc
  -- compCapIndex: >= 90 Hopper, >= 80 Ampere, else Volta)
  nccl_ll_max_bw = "39GB/s",
  nccl_tree_ch_bw = { nodes2 = "18.5GB/s", nodes3 = "10GB/s" },
  nccl_tree_ll128_ch_bw = { nodes2 = "20GB/s", nodes3 = "20GB/s" },
  nccl_ring_ll128_ch_bw = "20GB/s",
  launch_overhead = "4us",
  graph_launch_overhead = "1us",
}

-- RCCL's per-call base latency, the CDNA 3 and 4 entries' ccl_base_lat:
-- "baseLat ... { 12.0, 12.0, 17.0 }, { 12.0, 12.0, 17.0 },   // Tree,
-- Ring" (ROCm/rccl src/graph/tuning.cc, rocm-6.2.0 to ROCm/rocm-systems
-- projects/rccl), where NCCL 2.30.7's is 6.6/14/8.4 (ring) and 6.8/14/8.4
-- (tree): catalog/FORMAT.md.  A fresh table for each entry.
local function rccl_base_lat()
  return { ll = "12us", ll128 = "12us", simple = "17us" }
end

-- RCCL's LL network step, the CDNA 3 and 4 entries' ccl_net_lat: the AMD
-- build fills its tuner's hardware latencies from its own table
-- ("comm->tunerConstants.hwLatencies[hw][a][p] = rcclTuningModel[comm->
-- topo->tuning].hwLat[hw][a][p]", ROCm/rocm-systems projects/rccl
-- src/graph/tuning.cc ncclTopoInitTunerConstants), and every table of an
-- MI300-class node (tuning_model_5, set by the 8-GPU xGMI mesh Rome
-- models' "tuning=5"; 6 and 8) gives the network row "Tree
-- (LL/LL128/Simple) { 10.5, 10.5, 25.0 }, Ring (LL/LL128/Simple) { 9.5,
-- 9.5, 320.0 }", where NCCL 2.30.7 has 5.0 and 2.7 for LL.  Since ROCm/rccl
-- a25ca9bb (August 2024, in ROCm 6.3 and later: RCCL 2.21 on, the
-- 2.22.3 and 2.26.6 runs of the rows); ROCm 6.1 and 6.2 had tree LL 12.5,
-- ring LL 9.5.  The Simple figures are not taken: the ring's 320 us
-- network step is a steer (four of them, 1280 us, against 261.6 us
-- measured for a whole 16 MiB all-reduce on 2 x 8 MI355X):
-- catalog/FORMAT.md.  A fresh table for each entry.
local function rccl_net_lat()
  return { tree_ll = "10.5us", ring_ll = "9.5us" }
end

-- FlashAttention-1's A100 bars at head dim 64 beside head dim 128, causal,
-- forward + backward (Dao 2023, FlashAttention-2, arXiv 2307.08691, Fig.
-- 4c and 4d, the "FlashAttention" series; Dao-AILab/flash-attention
-- assets/flash2_a100_fwd_bwd_benchmark.png): the ampere fa1 and triton
-- entries' narrow curve.
local A100_FA1_NARROW = {
  { seq = 512, tflops = 58, wide = 55 }, { seq = 1024, tflops = 70, wide = 62 },
  { seq = 2048, tflops = 77, wide = 69 }, { seq = 4096, tflops = 87, wide = 76 },
  { seq = 8192, tflops = 92, wide = 80 }, { seq = 16384, tflops = 97, wide = 83 },
}

arch {
  id = "ampere", name = "NVIDIA Ampere",
  achievable = {
    gemm = { bf16 = 0.754, fp16 = 0.754, tf32 = 0.754, int8 = 0.754 },
    hbm = 0.85,
    reason = "A large fp16 GEMM of an ordinary shape, 3456 x 4096 x 8192, runs at 235.1 "
          .. "of 312 TFLOPS = 0.754 (CUTLASS profiler documentation, "
          .. "s16816gemm_f16_256x128_32x3 on A100; cuBLAS agrees there). The best "
          .. "shape a brute-force search finds reaches 271.2 = 0.869 (MAMF; CUDA 12.1: "
          .. "267.9), but layers do not run at their best shape: end-to-end, "
          .. "FlashAttention-2's GPT-3 2.7B training at 8k reaches 225 TFLOPS (72% "
          .. "MFU, FA2 paper Table 1), which 0.87 would overshoot by 14% and 0.754 "
          .. "matches. tf32/int8 not measured and taken equal to bf16. BabelStream "
          .. "triad on A100-SXM4-80GB 1.725 of "
          .. "2.039 TB/s = 0.846, on A100-SXM4-40GB 1.378 of 1.555 = 0.886: "
          .. "0.85 (refresh, ECC and DRAM page overheads keep streaming below "
          .. "the pin rate)",
    source = "NVIDIA/cutlass media/docs/cpp/profiler.md (tensor core GEMM example); "
          .. "stas00/ml-engineering compute/accelerator/README.md, Maximum Achievable "
          .. "Matmul FLOPS table (torch 2.6.0+cu126); BabelStream 5.0 example output "
          .. "on Tursa (A100-SXM4-80GB) in a NERSC-10-derived benchmark README; "
          .. "ALCF Polaris beginners guide (A100-SXM4-40GB, BabelStream 5.0)",

    attention = {
      kernel = "fa2",
      -- dropout: FlashAttention-2 with dropout on the probabilities
      -- draws them in-kernel (Philox) in the forward and redraws them in
      -- the backward.  Measured (NVIDIA/TransformerEngine PR #3313, a
      -- GB200 with TE 2.17 and FlashAttention 2.7.4, forward + backward of
      -- one DotProductAttention, bf16, 4 sequences of 1024 tokens, 16 heads,
      -- head dim 128): "THD FA2, dropout 0.0: 0.695 ms" and "THD FA2,
      -- dropout 0.1: 0.728 ms": 1.047.  FlashAttention-2 is one kernel
      -- source, its Ampere mma.sync code, on every arch it runs on.
      -- long: the same figure the fractions come from (FA2 paper Fig. 4d,
      -- A100 80GB SXM4, causal, head dim 128, forward + backward) goes on
      -- past 8k: 173 / 182 / 189 TFLOP/s at 4k / 8k / 16k, the last point
      -- of the figure.  The entry states no seq, so its fractions stand at
      -- the 8k reference and the curve starts there (182); 16k runs at
      -- 189 / 182 of it, held past (the figure's own no-mask bars, 196 /
      -- 201 / 203, say the causal kernel is within 7% of its no-mask rate
      -- at 16k and no point says how the rest closes).  Only a causal
      -- prompt past 8k moves (A100 FlashAttention-2 rows past 8k: XTuner's
      -- sequence-parallel runs, docs/validation.md).
      fa2 = { fwd = 0.61, bwd = 0.53, dropout = 1.047,
              long = { { seq = 8192, tflops = 182 }, { seq = 16384, tflops = 189 } } },
      -- triton: HazyResearch's Triton FlashAttention, the kernel
      -- llm-foundry runs (attn_impl: triton; Dao-AILab/flash-attention
      -- flash_attn/flash_attn_triton.py).  Its docstring measures itself
      -- against FlashAttention-1's CUDA kernel: "Triton forward is
      -- generally faster than CUDA forward, while Triton backward is
      -- generally slower than CUDA backward. Overall Triton forward +
      -- backward is slightly slower than CUDA forward + backward".  The
      -- figure's "Triton" series is another kernel, OpenAI's
      -- triton.ops.flash_attention (benchmarks/benchmark_flash_attention.py
      -- at 60499abc, which drew the figure: "from triton.ops.flash_attention
      -- import attention as attention_triton"), so the rate is the
      -- FlashAttention (1) bar: causal, head dim 128, 76 TFLOP/s at 4k
      -- = 0.244 of 312, split as FlashAttention-2's (73 : 63): 0.27 /
      -- 0.235.  Read at 4k tokens (seq).  long: the same bars at 4k, 8k
      -- and 16k, 76 / 80 / 83 -- still rising 9% where FlashAttention-2's
      -- own is near its top (173 / 182 / 189); the figure stops at 16k.
      -- fa1: FlashAttention (1)'s CUDA kernel (flash-attn 1.x, the
      -- release before FlashAttention-2 of July 2023; InternLM's first
      -- release pins v1.0.5).  The same figure's "FlashAttention" bars,
      -- causal, head dim 128: 55, 62, 69, 76, 80, 83 TFLOP/s at 512 to
      -- 16k tokens (FlashAttention-2: 99, 133, 155, 173, 182, 189).
      -- Read at 4k as fa2 is, 76 = 0.244 of 312, split in
      -- FlashAttention-2's forward : backward proportion (73 : 63; the
      -- figure gives forward + backward only): 0.27 / 0.235; its 8k and
      -- 16k bars as the length curve.  Below 4k the shape terms
      -- (engine/roofline.c roof_attn_eff) take it down as they do fa2:
      -- the bars fall 76 -> 69 at 2k (0.91), FlashAttention-2's 173 ->
      -- 155 (0.90).
      -- narrow: both kernels run head dim 64 faster than 128, not
      -- slower as FlashAttention-2 does (156 against 173 at 4k).  The
      -- same figure, causal, FlashAttention bars at head dim 64 (Fig.
      -- 4c) beside head dim 128 (Fig. 4d), 512 to 16k tokens: 58 / 55,
      -- 70 / 62, 77 / 69, 87 / 76, 92 / 80, 97 / 83 TFLOP/s.  A head dim
      -- up to 64 runs the 64-wide tile's kernel (the Triton one launches
      -- it with num_warps 4, 128 with 8: llm-foundry v0.3.0
      -- llmfoundry/models/layers/flash_attn_triton.py, "set
      -- num_warps=4 if headdim=64 and num_warps=8 if headdim=128").
      fa1 = { fwd = 0.27, bwd = 0.235, seq = 4096,
              long = { { seq = 4096, tflops = 76 }, { seq = 8192, tflops = 80 },
                       { seq = 16384, tflops = 83 } },
              narrow = { dim = 64, points = A100_FA1_NARROW } },
      triton = { fwd = 0.27, bwd = 0.235, seq = 4096,
                 long = { { seq = 4096, tflops = 76 }, { seq = 8192, tflops = 80 },
                          { seq = 16384, tflops = 83 } },
                 narrow = { dim = 64, points = A100_FA1_NARROW } },
      -- flex: PyTorch's FlexAttention (torch.nn.attention.flex_attention,
      -- torch.compile's Triton templates).  Its authors timed it against
      -- FlashAttention-2 on this card (pytorch.org/blog/flexattention,
      -- 2024-08-07; pytorch/pytorch.github.io
      -- _posts/2024-08-07-flexattention.md): "We will compare performance
      -- of the triton kernel versus FlashAttentionv2 on A100" ...
      -- "FlexAttention achieves 90% of FlashAttention2's performance in
      -- the forward pass and 85% in the backward pass. FlexAttention is
      -- currently utilizing a deterministic algorithm that recomputes more
      -- intermediates than FAv2".  So 0.90 x fa2's 0.61 = 0.549 forward and
      -- 0.85 x 0.53 = 0.4505 backward, with fa2's length curve (the ratio
      -- is the post's one figure across its sweep).  No dropout (FlexAttention
      -- has no dropout argument): not priced.
      flex = { fwd = 0.549, bwd = 0.4505,
               long = { { seq = 8192, tflops = 182 }, { seq = 16384, tflops = 189 } } },
      efficient = { fwd = 0.31, bwd = 0.31 },
      reason = "A100-80GB, head_dim 128, causal, 4k tokens: FlashAttention-2 forward + "
            .. "backward 173 TFLOP/s = 0.55 of 312 (FA2 paper Fig. 4; the FA convention: "
            .. "causal counts the unmasked half, backward = 2.5 x forward); split into "
            .. "forward and backward by the paper's maxima, 73% and 63% (0.55 = 3.5 / "
            .. "(1/f + 2.5/b) with f/b = 73/63); its 8k and 16k bars, 182 and 189, as its "
            .. "length curve past the 8k reference. fa1 (FlashAttention-1's CUDA kernel, "
            .. "flash-attn 1.x): the same figure's FlashAttention bar, 76 TFLOP/s = 0.244 "
            .. "at 4k, split the same way, with its 80 and 83 at 8k and 16k. triton (HazyResearch's Triton "
            .. "FlashAttention, whose docstring puts it level with FlashAttention-1's "
            .. "CUDA kernel): the FlashAttention bar of the same figure, 76 TFLOP/s = "
            .. "0.244, split the same way, read at 4k, with its 80 and 83 at 8k and 16k "
            .. "as its length curve (the figure's Triton bar is OpenAI's triton.ops "
            .. "kernel, 74). fa1 and triton at head dim 64 (narrow): the FlashAttention "
            .. "bars of Fig. 4c beside 4d, 58 / 55 to 97 / 83 TFLOP/s from 512 to 16k "
            .. "tokens (87 / 76 at 4k). efficient: xformers' "
            .. "cutlass kernel, which PyTorch's SDPA runs as its memory-efficient "
            .. "backend, in the same figure without a causal mask (the whole square, "
            .. "as it computes under an explicit mask), head_dim 128: 95, 96, 97 "
            .. "TFLOP/s at 2k, 4k, 8k tokens, 96 = 0.31 of 312 at 4k; forward and "
            .. "backward are not given apart, so both 0.31 (FlashAttention-2 in the "
            .. "same panel: 187, 196, 201). flex (PyTorch's FlexAttention): 'FlexAttention "
            .. "achieves 90% of FlashAttention2's performance in the forward pass and 85% in "
            .. "the backward pass' on A100, times FlashAttention-2's 0.61 / 0.53: 0.549 / "
            .. "0.4505, with FlashAttention-2's length curve",
      source = "Dao 2023, FlashAttention-2 (arXiv 2307.08691) sec. 4.1 and Fig. 4 "
            .. "(assets/flash2_a100_fwd_bwd_benchmark.png in Dao-AILab/flash-attention); "
            .. "flex: pytorch.org/blog/flexattention (pytorch/pytorch.github.io "
            .. "_posts/2024-08-07-flexattention.md, Performance)",
    },
  },
  sms = 108,  -- NVIDIA A100 whitepaper (GA100 in A100: 108 SMs)
  nccl_ll_max_bw = "87.7GB/s",
  nccl_tree_ch_bw = { nodes2 = "23.6GB/s", nodes3 = "17.8GB/s" },
  nccl_tree_ll128_ch_bw = { nodes2 = "20GB/s", nodes3 = "20GB/s" },
  nccl_ring_ll128_ch_bw = "20GB/s",
  launch_overhead = "4us",
  graph_launch_overhead = "1us",
}

-- A causal prompt past 8k tokens on Hopper's fused kernels (the hopper
-- arch's cudnn and fa3 below: their fractions stand at 8192, the default
-- reference, and were held there past it).  cuDNN-frontend's SDPA
-- training benchmark times cuDNN 9.19 on an H200 at Llama 3.1's shape
-- (64 query / 8 KV heads of 128, one sequence, bf16,
-- results/h200_919_only_cudnn/llama3.1_20260227_034703.csv), forward and
-- backward ms, causal ("top_left"): 8192 1.708 / 5.083, 16384 6.531 /
-- 19.002, 32768 25.566 / 75.688.  Forward + backward together in the FA
-- convention (3.5 x the causal forward's 2 s^2 h d FLOP over the summed
-- time; 8k: 3.5 x 2 x 8192^2 x 64 x 128 / 6.791 ms): 566.7, 602.9,
-- 608.1 TFLOP/s, 1.064x and 1.073x the 8k rate.  The rise is the causal
-- mask's, not the length's: the same calls without a mask ("no_mask",
-- twice the FLOP: 3.182 / 9.262, 12.524 / 35.947, 50.769 / 153.841 ms)
-- run 618.5, 635.1, 601.9, so causal over unmasked goes 0.916 -> 0.949
-- -> 1.010: the triangle's diagonal tiles and the uneven work of
-- its rows (engine/roofline.c causal_diag prices only the first, 64/65
-- of a tile row at 8k) weigh less as the rows grow, and by 32k the
-- causal kernel runs at the unmasked rate.  FlashAttention-3 schedules
-- the same triangle on the same SMs, and its causal forward sits below
-- its unmasked one at 4k-8k as cuDNN's does (the entry's reason below:
-- causal over unmasked forward 0.93 for FA3, 0.88 for cuDNN, FA3 paper
-- Figs. 5-6); no FA3 timing of a causal prompt past 16k was found, so
-- it takes cuDNN's curve.  Held at
-- the 32k point past it: there the masked rate has met the unmasked one,
-- which itself does not rise (635.1 -> 601.9 from 16k to 32k).
local HOPPER_CAUSAL_LONG = {
  { seq = 8192, tflops = 566.7 }, { seq = 16384, tflops = 602.9 },
  { seq = 32768, tflops = 608.1 },
}

-- The same kernels without a mask, beside their causal rates at the same
-- length (achievable.attention.<kernel>.unmasked): what a call on a full
-- rectangle of scores runs at -- Transformer Engine's context-parallel
-- ring hands every step after its first to the kernel with "no_mask"
-- (engine/train_price.c).  cuDNN: the same cuDNN 9.19 H200 file, its
-- fwd_tflops / bwd_tflops columns (causal counted at half), no_mask
-- against top_left: 2048 633 / 504 against 484 / 370, 4096 671 / 560
-- against 591 / 474, 8192 691 / 594 against 644 / 541, 16384 702 / 612
-- against 673 / 579, 32768 693 / 572 against 688 / 581 -- the gap
-- closing with the length as the causal kernel's does above.
-- FlashAttention-2 and -3: the FA3 paper's forward bars at head dim 128
-- (Figs. 5a and 5b, H100 SXM5), non-causal against causal: FA2 4k 368 /
-- 319, 8k 370 / 333, 16k 370 / 335; FA3 638 / 579, 646 / 602, 648 /
-- 616.  Its backward is timed without a mask only, so the backward takes
-- the forward's ratio (as the entry's causal backward takes the
-- forward's causal / non-causal ratio the other way).
local HOPPER_CUDNN_UNMASKED = {
  { seq = 2048, fwd = 633, bwd = 504, causal_fwd = 484, causal_bwd = 370 },
  { seq = 4096, fwd = 671, bwd = 560, causal_fwd = 591, causal_bwd = 474 },
  { seq = 8192, fwd = 691, bwd = 594, causal_fwd = 644, causal_bwd = 541 },
  { seq = 16384, fwd = 702, bwd = 612, causal_fwd = 673, causal_bwd = 579 },
  { seq = 32768, fwd = 693, bwd = 572, causal_fwd = 688, causal_bwd = 581 },
}
local HOPPER_FA2_UNMASKED = {
  { seq = 4096, fwd = 368, bwd = 368, causal_fwd = 319, causal_bwd = 319 },
  { seq = 8192, fwd = 370, bwd = 370, causal_fwd = 333, causal_bwd = 333 },
  { seq = 16384, fwd = 370, bwd = 370, causal_fwd = 335, causal_bwd = 335 },
}
local HOPPER_FA3_UNMASKED = {
  { seq = 4096, fwd = 638, bwd = 638, causal_fwd = 579, causal_bwd = 579 },
  { seq = 8192, fwd = 646, bwd = 646, causal_fwd = 602, causal_bwd = 602 },
  { seq = 16384, fwd = 648, bwd = 648, causal_fwd = 616, causal_bwd = 616 },
}

-- cuDNN's fused attention by release (achievable.attention.cudnn.releases:
-- a run that states its cuDNN release, gp.train's cudnn, runs the table of
-- the newest release at or before it; roofline.lua attn_release).  The
-- fractions above are the FlashAttention-3 paper's cuDNN (July 2024, its
-- release not named), which is cuDNN 9.1's rate: cudnn-frontend's first
-- SDPA benchmark (benchmark/benchmark_results.csv at b740542, 2024-05-07,
-- "cudnn backend version : 90100", an H200 under "nvidia-smi -ac
-- 3201,1980", 16 heads of 128, causal) times the forward at 542.3 (4k)
-- and 572.9 (8k) TFLOP/s, 501 and 530 at the paper's fixed 1830 MHz,
-- where the paper's bars are 518 and 529.  That file's causal forward +
-- backward (its "fwd + bwd" column): 4096 467.9, 8192 490.3, 16384 520.3,
-- 32768 519.6 TFLOP/s.
-- 9.19: the same repository's SDPA training benchmark, cuDNN 9.19 on an
-- H200 (results/h200_919_only_cudnn/llama3.1_20260227_034703.csv, commit
-- 3929da2, cudnn_backend_version 91901, 64 query / 8 KV heads of 128,
-- top_left, the non-deterministic rows), forward + backward in the same
-- convention (3.5 x the causal forward's 2 s^2 h d over the summed
-- times): 2048 396.9, 4096 502.4, 8192 566.7, 16384 602.9, 32768 608.1.
-- Over 9.1's at the same length: 4096 1.074, 8192 1.156 (566.7 /
-- 490.3).  Past 8k the kernel's length curve above is already 9.19's
-- (HOPPER_CAUSAL_LONG: 1.064 at 16k, 1.073 at 32k, where 9.1's own file
-- rises 1.061 and 1.060), so the factor holds at 8k's there; below 4k no
-- 9.1 row exists and 4k's is held.
-- 9.9: cudnn-frontend's Llama-3.2-1B training loop (benchmark/
-- Llama-3.2-1B-Training at 7606332: "cuDNN | 9.9.0", nvcr.io/nvidia/
-- pytorch:25.04-py3, an H200 locked at 1500 MHz, SDPA forced to
-- CUDNN_ATTENTION, 32 query / 8 KV heads of 64, 16 layers, causal): rows
-- of the same tokens a step differ only in attention, and those
-- differences over this model's own time for them at the reference
-- fractions (gp.train on the same job at this commit): 12 x 1024 ->
-- 3 x 4096 0.02078 s measured (0.24294 - 0.22216) against 0.0213
-- modelled, 1.025; 2 x 8192 -> 1 x 16384 0.06636 s (0.42355 - 0.35720)
-- against 0.0710, 1.070.  A difference prices both its rows' attention
-- at one rate, so each factor holds over its pair of lengths: 1.025 up
-- to 4096, 1.070 from 8192 (between them, linear in log2 of the length;
-- at these points gp.train on the loop's four rows gives both differences
-- back, 1.000 and 1.000 of the measured).  (Two of that
-- table's rows, 3 x 4096 and 2 x 8192, are the cudnnfe-h200 cases, which
-- state no release: their own table would price them.)  No Hopper table
-- of another release was found (cudnn-frontend's later SDPA training
-- tables, 9.10 to 9.17, are Blackwell's).
local HOPPER_CUDNN_REFERENCE = "9.1"
local HOPPER_CUDNN_RELEASES = {
  { cudnn = "9.9", points = { { seq = 4096, x = 1.025 }, { seq = 8192, x = 1.070 } } },
  { cudnn = "9.19", points = { { seq = 4096, x = 1.074 }, { seq = 8192, x = 1.156 } } },
}

arch {
  id = "hopper", name = "NVIDIA Hopper",
  achievable = {
    gemm = { bf16 = 0.80, fp16 = 0.80, tf32 = 0.80, fp8 = 0.71, int8 = 0.71 },
    hbm = 0.84,
    reason = "H100 SXM best bf16 matmul 794.5 of 989 TFLOPS = 0.803 (GH200: "
          .. "828.6 = 0.838), fp8 1402.6 of 1979 = 0.709; tf32 and int8 not "
          .. "measured, taken from bf16 and fp8. BabelStream triad on H100 NVL "
          .. "3.30 of 3.938 TB/s = 0.84. The 700 W parts cannot hold the boost "
          .. "clock at full tensor load, hence the lower fraction than Ampere",
    source = "stas00/ml-engineering compute/accelerator/README.md, Maximum Achievable "
          .. "Matmul FLOPS table (torch 2.7.0+cu126); BabelStream 5.0 output on an "
          .. "H100 NVL (public GitHub benchmark log)",

    attention = {
      kernel = "cudnn",
      -- dropout: cuDNN's fused attention with dropout on the
      -- probabilities (Philox in the forward, regenerated in the
      -- backward), against the same call without.  Measured
      -- (NVIDIA/TransformerEngine issue #3312, TE 2.15.0, "Forward +
      -- backward through a single DotProductAttention, bf16, 4096 tokens,
      -- 16 heads, head_dim 128, 4 sequences, fused backend forced, median
      -- of 50 iterations"): "H200 (sm90) | 2.15.0 | sbhd | 0.594 ms |
      -- 0.614 ms": 1.034.  The packed layout (thd) runs another engine
      -- and pays more (1.26 there, at MLA's head dims); not priced.
      -- fa2: the ampere arch's FlashAttention-2 measurement (the same
      -- kernel code).
      cudnn = { fwd = 0.53, bwd = 0.45, dropout = 1.034, long = HOPPER_CAUSAL_LONG,
                unmasked = HOPPER_CUDNN_UNMASKED,
                release = HOPPER_CUDNN_REFERENCE, releases = HOPPER_CUDNN_RELEASES },
      -- fa3 rate: measured inside a training step on an H200, the
      -- sustained clock included (as fa2's below).  ml-engineering's
      -- 8k step decomposition (insights/when-to-upgrade-gpus,
      -- bench_decompose.py: Llama-3.1-8B, 32 query / 8 KV heads of 128,
      -- one causal 8192-token sequence, flash-attn-3 3.0.0, torch 2.13)
      -- splits the measured step by profiled kernel share ("attention =
      -- FlashAttention kernels"): "| attention (FA)  |            447 |"
      -- TFLOP/s counted as 6 s^2 d h L, the forward and a backward of
      -- twice it; in the FA convention (backward 2.5 x) that is 447 x
      -- 3.5 / 3 = 521.5 TFLOP/s forward and backward together, a lower
      -- bound (the split hands the step's gaps to each bucket by its
      -- share).  The paper's fractions below the sustained factor price
      -- it at 438.5 (0.60 / 0.52 of 0.82 x 989): 1.189x, taken in the
      -- paper's forward : backward proportion, as fa2's 1.19 was.  A
      -- later FA3 on an H100 (meta-pytorch/tritonbench PR 1267, 2026,
      -- B 4, H 48, d 128, causal 8192: forward 4817.44 us, backward
      -- 15308.16 us) runs 684.7 and 538.7 TFLOP/s in its bursts, 1.15x
      -- and 1.05x the paper's (0.60 and 0.52 of 989: 593.4 and 514.3).
      -- Serving cross-check: 0.713 x 0.82 x 989 = 578 TFLOP/s,
      -- DeepSeek's H800 decode trace's MLA kernel 573
      -- (engine/serve_row.c), where the paper's fraction gave 487.
      fa3 = { fwd = 0.713, bwd = 0.618, long = HOPPER_CAUSAL_LONG,
              unmasked = HOPPER_FA3_UNMASKED },
      -- fa2 rate: measured at the sustained clock itself.  cuDNN-frontend's
      -- Llama-3.2-1B training loop (transformers' modules, torch 2.7.0 SDPA
      -- forced to FLASH_ATTENTION, 32 query / 8 KV heads of 64, 16 layers,
      -- causal) on an H200 with "the clock frequency locked at 1500 MHz",
      -- the clock the sustained factor below stands for: rows with the
      -- same tokens a step differ only in attention, and 1 x 16384 takes
      -- 0.5002 s against 2 x 8192's 0.3971 -- 3.08e13 more FLOP (16
      -- layers, 3.5 x the causal forward 2 H d T s) at 298.7 TFLOP/s,
      -- 0.369 of the 810.7 the peak is at 1500 MHz (3 x 4096 against 12 x
      -- 1024: 273.4, the shorter keys loop and the diagonal included).
      -- The FA3 paper's FlashAttention-2 figures (timed with the clock
      -- "fixed to 1830MHz", which a 700 W part does not hold under full
      -- load) times 0.82 give 0.300 forward and backward together; the
      -- model's own attention time for those two differences was 1.23x
      -- (8k-16k) and 1.05x (1k-4k) the measured.  Scaled by 1.19 in the
      -- paper's forward : backward proportion (0.33 : 0.29): 0.39 / 0.345,
      -- with which the model meets
      -- all six FLASH_ATTENTION rows of that table (768 to 16384 tokens)
      -- within -0.2% .. +3.0% (before: +1.8% .. +8.5%), and torchtitan's
      -- Llama 3.1 8B on 32 and 64 H200s (SDPA's FlashAttention-2 at 8192,
      -- head dim 128, power-capped clocks) goes from -6.4% / -4.8% to
      -- -1.5% / +0.2%.  cuDNN's rate stays the FA3 paper's: it moves with
      -- the cuDNN release (the same table's cuDNN 9.9 rows, differenced
      -- alike, run 1.02x (1k-4k) to 1.22x (8k-16k) the model's; of
      -- NVIDIA's NeMo 24.07 H100 rows only GPT-3 175B's ran cuDNN, an
      -- older release: the others ran FlashAttention-2, the launcher's
      -- "NVTE_FUSED_ATTN: 0", docs/validation.md).  A run that states its
      -- cuDNN release now runs that release's table (HOPPER_CUDNN_RELEASES
      -- above; against the model with its length curve the 9.9 rows run
      -- 1.025x and 1.070x).
      fa2 = { fwd = 0.39, bwd = 0.345, dropout = 1.047, unmasked = HOPPER_FA2_UNMASKED },
      -- triton is an estimate (reason below) and llm-foundry's own H100
      -- rows say it is slow.  Their kernel (mosaicml/llm-foundry at
      -- 061f2c7, llmfoundry/models/layers/flash_attn_triton.py: HazyResearch's,
      -- on the triton_pre_mlir_sm90 fork) says of itself "Triton forward is
      -- generally faster than CUDA forward, while Triton backward is
      -- generally slower".  Its benchmark table (scripts/train/benchmarking
      -- README.md, H100 80GB BF16: 13 rows of 1B-13B at 4k-65k tokens,
      -- with and without activation checkpointing, attention up to 87% of
      -- the step) is met within 3% by fwd 0.385, bwd 0.168, a fit to those
      -- rows and not applied: with it the same table's 30B rows on 8 GPUs
      -- (states 60 GB a GPU; on 16 and 32 GPUs they fit) and its
      -- short-sequence rows without checkpointing land 8-32% fast.  The
      -- values here are the rule in the reason below, the ampere arch's
      -- Triton : FlashAttention-2 ratio (0.27 / 0.61, 0.235 / 0.53: its
      -- FlashAttention-1 bar) times FlashAttention-2 here (0.39, 0.345):
      -- 0.173 / 0.153 (they were 0.145 / 0.125, the same rule on
      -- FlashAttention-2's rate before its 1.19x rescale and the figure's
      -- OpenAI Triton bar).  Cross-check: the H100 figure
      -- (flash2_h100_fwd_bwd_benchmark.png, causal, head dim 128) has
      -- FlashAttention-1 at 135 of FlashAttention-2's 308 TFLOP/s at 8k,
      -- 0.438, against the 0.443 here.  long: its FlashAttention-1 bars,
      -- 135 at 8k and 137 at 16k (126 at 4k); FlashAttention-2's own
      -- curve is not applied (its rate was measured at 8k-16k).
      -- narrow: the same figure's FlashAttention-1 bars at head dim 64
      -- (causal) beside 128, 512 to 16k tokens: 104 / 98, 123 / 109,
      -- 136 / 108, 138 / 126, 149 / 135, 156 / 137 TFLOP/s (the ampere
      -- entry's triton says why the narrow tile runs faster).
      triton = { fwd = 0.173, bwd = 0.153,
                 long = { { seq = 8192, tflops = 135 }, { seq = 16384, tflops = 137 } },
                 narrow = { dim = 64, points = {
                   { seq = 512, tflops = 104, wide = 98 }, { seq = 1024, tflops = 123, wide = 109 },
                   { seq = 2048, tflops = 136, wide = 108 }, { seq = 4096, tflops = 138, wide = 126 },
                   { seq = 8192, tflops = 149, wide = 135 },
                   { seq = 16384, tflops = 156, wide = 137 } } } },
      -- flex: PyTorch's FlexAttention (torch.compile's Triton templates).
      -- Its author's H100 figures, the abstract of the GTC 2025 session
      -- "FlexAttention: The Flexibility of PyTorch With the Performance of
      -- FlashAttention" (Driss Guessous, Meta; the "PyTorch at GTC 2025"
      -- post, pytorch/pytorch.github.io _posts/2025-03-14-pytorch-at-gtc.md):
      -- "On H100 GPUs, FlexAttention's forward performance averages 85% of
      -- FlashAttention3 and is ~25% faster than FlashAttention2, while
      -- backward performance averages 76% of FlashAttention3 and is ~3%
      -- faster than FlashAttention2" (on A100 "90% of FlashAttention2's
      -- performance in forward passes and 85% in backward passes", the
      -- ampere entry's).  Priced as its ratio to FlashAttention-2 here,
      -- the rate this arch measured in a training loop at the sustained
      -- clock: 1.25 x 0.39 = 0.4875 forward, 1.03 x 0.345 = 0.355
      -- backward.  (Against fa3 the same abstract gives 0.85 x 0.713 =
      -- 0.606 and 0.76 x 0.618 = 0.470: fa3 here is its in-step rate,
      -- 1.19x the paper's, which the session's FA3 was not.)  Neither
      -- figure states a length or head dim: no length or head-dim curve.
      flex = { fwd = 0.4875, bwd = 0.355 },
      efficient = { fwd = 0.16, bwd = 0.16 },
      -- FP8 attention (an 8-bit KV cache): its tensor rate doubles, the
      -- softmax between its two matmuls does not.
      fp8 = 0.85,
      -- The head dim where a score's MMA (4 d FLOP) and its exponential
      -- take the same time (roofline.c roof_attn_eff): 989.4 TFLOP/s on
      -- 132 SMs at 1830 MHz is 4096 FLOP a clock per SM against 16
      -- exponentials (FlashAttention-4, arXiv 2603.05451: the SFUs
      -- "unchanged" from H100 to B200): 4096 / (4 x 16) = 64, so no head
      -- dim from 64 up is bound by them.  Cross-check: cuDNN 9.9 on an
      -- H200 at 1500 MHz (cudnn-frontend's Llama-3.2-1B training sweep,
      -- head dim 64, 12288 tokens a step) grows 0.021 s from 1024- to
      -- 4096-token sequences (FA2 0.032 s), this model 0.0213 (0.0333)
      -- at the head-dim-128 fractions.  (The FA3 paper's 2024 kernels ran
      -- head dim 64 at 0.70-0.76 of 128, causal forward; later releases
      -- do not show it.)
      exp_dim = 64,
      reason = "H100 SXM5, head_dim 128, bf16, 4k-8k tokens (FA3 paper Figs. 5-6): causal "
            .. "forward cuDNN 518-529, FA3 579-602 TFLOP/s of 989; backward "
            .. "(non-causal only in the paper) cuDNN 499-518, FA3 542-559, "
            .. "scaled by each kernel's causal/non-causal forward ratio (0.88, 0.93). "
            .. "FA3: measured in a training step on an H200 (ml-engineering's 8k "
            .. "step decomposition, flash-attn-3 3.0.0: attention 447 TFLOP/s "
            .. "counted 6 s^2 d h L, 521.5 in the FA convention, forward and "
            .. "backward), 1.189x the paper's 0.60 / 0.52 at the sustained clock, "
            .. "in the paper's forward : backward proportion. "
            .. "long (cudnn, fa3): cuDNN 9.19 on an H200 at Llama 3.1's heads, causal "
            .. "forward + backward 566.7 / 602.9 / 608.1 TFLOP/s at 8k / 16k / 32k "
            .. "(unmasked 618.5 / 635.1 / 601.9: the causal mask's cost fading), held "
            .. "past 32k. "
            .. "FA2: measured at the sustained clock (cuDNN-frontend's Llama-3.2-1B "
            .. "training loop on an H200 locked at 1500 MHz, SDPA's FLASH_ATTENTION: "
            .. "298.7 TFLOP/s forward and backward at 8k-16k tokens, 0.369 of the "
            .. "1500 MHz peak), 1.19x the paper's FA2 (319-333 forward, 310-318 "
            .. "backward at 1830 MHz) times 0.82, in the paper's forward : backward "
            .. "proportion. cuDNN is what Transformer Engine picks on sm90 (NeMo, Megatron-"
            .. "Bridge). triton: not measured on Hopper; the A100 ratio of the Triton "
            .. "kernel (its FlashAttention-1 bar) to FA2 (0.244 / 0.554) applied to FA2 "
            .. "here, an estimate (the H100 figure's FlashAttention-1 : FlashAttention-2 "
            .. "at 8k, 135 / 308 = 0.438, agrees), with FlashAttention-1's H100 bars at "
            .. "8k and 16k (135, 137) as its length curve, and its head dim 64 bars "
            .. "beside 128 (104 / 98 to 156 / 137 from 512 to 16k) at head dim 64. "
            .. "flex (PyTorch's FlexAttention): on H100 its 'forward performance ... is ~25% "
            .. "faster than FlashAttention2, while backward performance ... is ~3% faster "
            .. "than FlashAttention2' (GTC 2025 session abstract), times FA2 here: 0.4875 / "
            .. "0.355. "
            .. "efficient (PyTorch SDPA's memory-efficient backend, xformers' "
            .. "cutlass kernel, which computes the whole square under a mask): not "
            .. "measured on Hopper either; the A100 figure's ratio without a causal "
            .. "mask, head_dim 128, at 4k tokens, 96 / 196 TFLOP/s of FlashAttention-2 "
            .. "(both Ampere-style mma.sync kernels, run unchanged on sm90), applied "
            .. "to FlashAttention-2's own H100 rate in that setting, 326 TFLOP/s "
            .. "(flash2_h100_fwd_bwd_benchmark.png): 160 = 0.16 of 989, forward "
            .. "and backward alike"
            .. ". fp8: MLA decode, the serving path's FP8 attention: Ant Group's FP8 "
            .. "FlashMLA on H20, 'Compared to BF16 FlashMLA, this yields ~70% "
            .. "speedup' (1.70 of a doubled rate: 0.85). FlashAttention-3 on "
            .. "H100 agrees: 'FP16 reaching up to 740 TFLOPs/s (75% utilization), "
            .. "and with FP8 reaching close to 1.2 PFLOPs/s' of the 989.4 / "
            .. "1978.9 dense peaks, 0.606 / 0.748 = 0.81. End to end Ant measured "
            .. "'+16.9% at BS=56' from FP8 MLA on H20 (this model: +28%)",
      source = "Shah et al. 2024, FlashAttention-3 (arXiv 2407.08608) Figs. 5-6; "
            .. "fa3: stas00/ml-engineering insights/when-to-upgrade-gpus/README.md "
            .. "(Step decomposition @ 8k, commit 744d01e) and bench_decompose.py; "
            .. "meta-pytorch/tritonbench PR 1267 (FA3 on H100); "
            .. "long: NVIDIA/cudnn-frontend benchmark/sdpa_benchmark_training/results/"
            .. "h200_919_only_cudnn/llama3.1_20260227_034703.csv (commit 3929da2); "
            .. "fa2: NVIDIA/cudnn-frontend benchmark/Llama-3.2-1B-Training (commit "
            .. "7606332: README, artifacts/h200_training_timing.csv); "
            .. "Dao-AILab/flash-attention assets/flash2_a100_fwd_bwd_benchmark.png and "
            .. "flash2_h100_fwd_bwd_benchmark.png (efficient); "
            .. "TransformerEngine attention.py 'Select FusedAttention on sm90'"
            .. "; fp8: lm-sys/lm-sys.github.io blog/2025-09-26-sglang-ant-group.md "
            .. "(FP8 MLA, deepseek-ai/FlashMLA PR 82; Decode optimizations); "
            .. "Shah et al. 2024, FlashAttention-3 (arXiv 2407.08608) abstract"
            .. "; flex: pytorch/pytorch.github.io _posts/2025-03-14-pytorch-at-gtc.md "
            .. "(session 'FlexAttention: The Flexibility of PyTorch With the Performance of "
            .. "FlashAttention', Driss Guessous)",
    },

    -- One factor for every precision: an fp8 GEMM does not fall further
    -- under the 700 W cap than a bf16 one.  tile-ai/TileOPs PR #1980 timed
    -- cuBLAS GEMMs on an H200 at its 700 W cap (best n of 4096, 8192,
    -- 16384; "settles to a steady clock, then ~4 s timed runs to average
    -- over power-cap clock oscillation"; "medians across repeated runs,
    -- band <= 1.5%"): sustained bf16 0.7077 and fp8 0.6303 of the dense
    -- peaks, burst ("pre-cap") 0.7680 and 0.6977.  Sustained fp8 / bf16
    -- is 0.891 (burst 0.908); the gemm fractions above under this one
    -- factor give 0.71 / 0.80 = 0.888, already at or below it.  fp8 keeps
    -- 0.903 of its burst rate and bf16 0.922: 2% apart, about the band
    -- of the runs, so fp8 takes no factor of its own.
    sustained = {
      gemm = 0.82, attention = 0.82,
      -- the clock the two factors stand for (1500 / 1830 = 0.82): a job's
      -- sm_clock scales them from it (roofline.lua clock_at_mhz)
      clock_mhz = 1500,
      reason = "The 700 W parts (H100, H800, H200 SXM) hold a lower SM clock "
            .. "under back-to-back tensor work than the rates above were taken "
            .. "at: MAMF keeps the best iteration of each shape ('this script is "
            .. "just trying to find the best iter and not the mean/median'), and "
            .. "a cold first iteration is faster still ('not sustainable'). H200 "
            .. "SXM at its 700 W cap 'cannot reliably sustain a locked 1830 MHz "
            .. "graphics/SM clock under full load'; 1500 MHz is the clock those "
            .. "runners hold: 1500 / 1830 = 0.82 for the tensor-bound GEMMs. "
            .. "NVIDIA's own H100 training rows are power-bound: NeMo 24.07's "
            .. "table re-run with vboost ('steers more power towards tensor "
            .. "cores') moved GPT3-5B from 22521 to 23574 tokens/s (+4.7%) and "
            .. "GPT3-175B from 726 to 745 (+2.6%); Llama 3 405B's 16K-H100 "
            .. "run saw 'a diurnal 1-2% throughput variation' from 'higher "
            .. "mid-day temperatures impacting GPU dynamic voltage and "
            .. "frequency scaling'. Attention: the FlashAttention-3 paper "
            .. "timed its kernels (the fractions above) on a 700 W H100 SXM5 "
            .. "with 'the GPU clock speed [fixed] to 1830MHz', so the same "
            .. "1500 / 1830 = 0.82 applies. "
            .. "Memory-bound kernels keep their rate (the governor lowers the SM "
            .. "clock). Not the H20: its tensor rate is 148 of the H100's 989 "
            .. "TFLOP/s on 78 of 132 SMs under a 400 W board, so tensor work does "
            .. "not reach its cap (its own entry). Burst kernel timings (OpenXLA's "
            .. "matmul table) are met without the factor, as bursts should be",
      source = "stas00/ml-engineering PR #59 (MAMF: best iteration, warm-up); "
            .. "Shah et al. 2024 (arXiv 2407.08608) appendix C.1; "
            .. "tile-ai/TileOPs issue #1587 and PR #1588 (H200 at 700 W: 1500 "
            .. "MHz sustained, 1830 not held); NVIDIA/NeMo commits 4c73f77 and "
            .. "3a8081f, docs/source/performance/performance_summary.md ('24.07 "
            .. "vboost numbers'); NeMo nemo/lightning/run/plugins.py enable_vboost; "
            .. "Llama 3 Herd of Models (arXiv 2407.21783) sec. 3.3.4",
    },
  },
  -- A board power limit below the TDP (gp.train's power_limit; Meta's
  -- Grand Teton H100s ship at 500 W of the SXM5's 700): the governor
  -- lowers the SM clock until the board's draw fits (nvidia-smi -pl is
  -- a clock throttle), so tensor-bound work (GEMMs, fused attention)
  -- slows with the clock while memory-bound kernels and the links keep
  -- their rate (the memory clock is not throttled).  The board's draw at
  -- full tensor load is P = static + n_SM c f^exponent; at a limit L the
  -- sustained clock is the TDP's times ((L - static) / (TDP - static))
  -- ^ (1 / exponent) (roofline.lua clock_at).  From two GH100 boards'
  -- GEMM rates, both MAMF (best iteration of a shape sweep): the SXM5 at
  -- 700 W, 794.5 TFLOP/s on 132 SMs (6.019 a SM), and the PCIe card at
  -- 350 W, 499.5 on 114 (4.382 a SM): its tensor clock is 0.7280 of the
  -- SXM5's for (350 - 140) / 114 = 1.842 W a SM above static against
  -- (700 - 140) / 132 = 4.242 (0.4342), so exponent = ln 0.4342 /
  -- ln 0.7280 = 2.63.  static: an H100 SXM5's idle draw with its memory
  -- allocated, 140-145 W of its 700 W limit.  Check: 500 W gives
  -- (360 / 560) ^ (1 / 2.63) = 0.845 of the 700 W clock, inside the
  -- measured span (0.728 at the PCIe card's 0.434 share); the static
  -- draw at 100 or 160 W instead gives 0.838 / 0.849.
  power_curve = {
    static = "140W", exponent = 2.63,
    reason = "Tensor-bound rate per SM, H100 PCIe 350 W / H100 SXM5 700 W (MAMF "
          .. "499.5 / 114 SMs over 794.5 / 132) = 0.728 at a 0.434 share of the "
          .. "per-SM draw above a 140 W static board draw: exponent ln 0.434 / "
          .. "ln 0.728 = 2.63. Memory clock: unchanged under a binding cap (an "
          .. "RTX 3090 at its 315 W cap: SM clock lowered, 'memory clock never "
          .. "moves', 9501 MHz in every sample). A Blackwell Ultra board agrees in "
          .. "kind: GB300 capped at 500 W, 'measured cuBLAS GEMM ~617 tflops at "
          .. "500 W vs ~1600-2174 tflops at 1400 W'",
    source = "stas00/ml-engineering compute/accelerator/README.md (MAMF, H100 SXM "
          .. "794.5); mag-/gpu_benchmark README (MAMF, H100 PCIe 499.5); "
          .. "wilicc/gpu-burn issue #114 (H100 80GB HBM3 idle, nvidia-smi '145W / "
          .. "700W', '140W / 700W'); ashalliants/ninfer-3090 PR #72 (memory "
          .. "clock under the cap); facebookexperimental/triton PR #2023 (GB300 at "
          .. "500 W); pytorch/torchtitan benchmarks/llama3_h100_202412_torchtitan.md "
          .. "('default 500W power limit, although tuning it up to 700W TDP can "
          .. "potentially provide further speedups')",
  },
  sms = 132,  -- NVIDIA H100 whitepaper (GH100 in H100 SXM5: 132 SMs)
  -- wgmma's N side takes 8..256 in steps of 8 (PTX ISA wgmma.mma_async:
  -- ".m64n8k16, .m64n16k16, ... .m64n256k16"): a library GEMM of 17-256 tokens pads them to a multiple of
  -- 8, not of a 64-row tile (engine/roofline.c, the swapped tiles above
  -- k_fill)
  mma_n_step = 8,
  -- Non-tensor bf16/fp16 (packed f16x2, bf16x2 FMA) over fp32: 2 (NVIDIA,
  -- "NVIDIA Hopper Architecture In-Depth" table 3: H100 SXM5 "Peak FP16
  -- TFLOPS (non-Tensor)" 120 and "Peak BF16 TFLOPS (non-Tensor)" 120
  -- against "Peak FP32 TFLOPS (non-Tensor)" 60; H100 PCIe 96, 96, 48)
  vec16_x = 2,
  nccl_ll_max_bw = "141GB/s",
  nccl_tree_ch_bw = { nodes2 = "41.4GB/s", nodes3 = "36GB/s" },
  nccl_tree_ll128_ch_bw = { nodes2 = "36.7GB/s", nodes3 = "29GB/s" },
  nccl_ring_ll128_ch_bw = "36.7GB/s",
  nccl_p2p_nvl_ch_bw = "20.6GB/s",
  launch_overhead = "4us",
  graph_launch_overhead = "1us",
}

arch {
  id = "ada", name = "NVIDIA Ada Lovelace",
  achievable = {
    gemm = { bf16 = 0.90, fp16 = 0.90, tf32 = 0.90, fp8 = 0.90, int8 = 0.90 },
    hbm = 0.85,
    reason = "cuBLAS HGEMM on an L20 reaches 105-115 of 119.5 TFLOPS (0.88-0.96; "
          .. "0.90 taken); the smaller, lower-power Ada dies are not "
          .. "clock-throttled at full tensor load the way 700 W Hopper is. "
          .. "Other precisions not measured (taken equal). GDDR streaming "
          .. "fraction not measured: the HBM value 0.85 is assumed",
    source = "DefTruth/CUDA-Learn-Notes hgemm/README.md (L20 cuBLAS vs its own "
          .. "kernels)",
  },
  nccl_ll_max_bw = "87.7GB/s",
  nccl_tree_ch_bw = { nodes2 = "23.6GB/s", nodes3 = "17.8GB/s" },
  nccl_tree_ll128_ch_bw = { nodes2 = "20GB/s", nodes3 = "20GB/s" },
  nccl_ring_ll128_ch_bw = "20GB/s",
  launch_overhead = "4us",
  graph_launch_overhead = "1us",
}

arch {
  id = "blackwell", name = "NVIDIA Blackwell",
  achievable = {
    gemm = { bf16 = 0.78, fp16 = 0.78, tf32 = 0.78, fp8 = 0.76, fp6 = 0.76,
             fp4 = 0.76, int8 = 0.76 },
    hbm = 0.85,
    reason = "B200 SXM best bf16 matmul 1745.0 of 2250 TFLOPS = 0.776, fp8 "
          .. "3432.5 of 4500 = 0.763 (B300: 0.786 / 0.745; GB200 0.729 / "
          .. "0.723 carried per GPU). fp6/fp4/int8/tf32 not measured, taken "
          .. "from fp8/bf16. hbm 0.85 (the Ampere/Hopper BabelStream value) "
          .. "meets every published Blackwell streaming kernel on large arrays, "
          .. "once each kernel's fixed 3.9 us is counted: GB200 Tensor.copy_ of "
          .. "508 MiB 6.735 TB/s (0.84 of 8) priced 1.015 x, B200 CUB "
          .. "DeviceTransform add of 2^28 fp16 6.72 TB/s (0.876 of 7.67) 1.047 x, "
          .. "GB300 Triton triad of 2 x 1 GiB 7.140 TB/s (0.89 of 8) 1.059 x "
          .. "(tests/lua/blackwell_stream.t)",
    source = "stas00/ml-engineering compute/accelerator/README.md, Maximum Achievable "
          .. "Matmul FLOPS table (torch 2.7.1+cu128); hbm: pytorch/pytorch issue 191284 "
          .. "(GB200), NVIDIA/cccl PR 7391 (B200), meta-pytorch/KernelAgent oink/"
          .. "README.md (GB300)",

    -- The fp8 fraction above is the per-tensor-scaled GEMM's
    -- (torch._scaled_mm with one scale per operand).  An MXFP8 GEMM --
    -- what Transformer Engine's MXFP8BlockScaling runs on Blackwell, and
    -- its FP8 block recipe there ("On Blackwell (SM100+), FP8 Block is
    -- emulated via MXFP8") -- reads an E8M0 scale per 32 elements of K of
    -- each operand and applies them in the MMA, and runs slower at the
    -- same shapes: Transformer Engine's GEMM profiling guide times the 12
    -- GEMMs (fprop, dgrad, wgrad) of a layer (hidden 4096, FFN 16384,
    -- 15872 tokens) pre-quantized, kernels only, on a B300: 6.812 ms a
    -- layer in FP8 current scaling against 7.161 ms in MXFP8 (fprop
    -- 2.158 / 2.365, dgrad 2.329 / 2.397, wgrad 2.325 / 2.400):
    -- 6.812 / 7.161 = 0.951.
    block_scaled = {
      fp8 = 0.951,
      reason = "B300, Transformer Engine benchmark_gemm.py --pre-quantize, per-layer GEMM "
            .. "time (12 GEMMs of hidden 4096, FFN 16384, 15872 tokens): FP8 current "
            .. "scaling 6.812 ms, MXFP8 7.161 ms; 6.812 / 7.161 = 0.951",
      source = "NVIDIA/TransformerEngine docs/examples/gemm_profiling/gemm_profiling.rst "
            .. "(PR #2863), 'Autocast vs Pre-quantized', Per-Layer GEMM Time",
    },

    -- Per-tensor FP8 on Blackwell runs its backward GEMMs in the NN / NT
    -- layouts: Transformer Engine writes no fp8 transposes where
    -- "non_tn_fp8_gemm_supported()" ("return torch.cuda.get_device_
    -- capability() >= (10, 0)", pytorch/utils.py, v2.0 to v2.2; later
    -- nvte_is_non_tn_fp8_gemm_supported) -- csrc/extensions/quantizer.cpp
    -- "bool create_transpose = columnwise_usage && !non_tn_fp8_gemm_
    -- supported();", linear.py "elif not non_tn_fp8_gemm_supported(): #
    -- FP8 GEMM on Hopper only supports TN layout so the gathered input
    -- must have a valid transpose." -- so dgrad reads the weight and wgrad
    -- both operands MN-major.  The same GEMM profiling guide times those
    -- layouts slower: pre-quantized on a B300, FP8 current scaling's
    -- dgrad and wgrad sums run 2.329 and 2.325 ms against fprop's 2.158
    -- (x 1.0783 on average) where BF16's run 4.434 and 4.418 against
    -- 4.250 (x 1.0414): 1.0414 / 1.0783 = 0.966 of the rate the BF16
    -- pattern gives them.  Not the shapes: MXFP8, whose row- and column-
    -- scaled copies keep every GEMM TN, runs its backward x 1.0142 of its
    -- fprop (2.397, 2.400 against 2.365), and on an H200 (TN from
    -- transposes) FP8 current scaling runs x 1.0048 where BF16 runs x
    -- 1.0006.  Measured on B300 (sm103); B200 and GB200 (sm100) run the
    -- same tcgen05 cuBLASLt kernels, taken the same.  The RTX 5090
    -- (sm120) would inherit it, which is TE v2.0-v2.3's rule; from v2.4
    -- (PR #1659, "rtx5090 arch fix support") nvte_is_non_tn_fp8_gemm_
    -- supported is "(deviceComputeCapability >= 100 &&
    -- deviceComputeCapability < 120) || deviceComputeCapability >= 130",
    -- so a later TE runs sm120 TN with transposes: the rtx-5090 entry
    -- opts out (its own non_tn = { fp8 = false }, catalog/gpus/
    -- nvidia-blackwell.lua), priced as Hopper.
    non_tn = {
      fp8 = 0.966,
      reason = "B300, Transformer Engine benchmark_gemm.py --pre-quantize, per-layer "
            .. "GEMM sums (hidden 4096, FFN 16384, 15872 tokens): FP8 current scaling "
            .. "fprop / dgrad / wgrad 2.158 / 2.329 / 2.325 ms (backward x 1.0783), "
            .. "BF16 4.250 / 4.434 / 4.418 (x 1.0414); 1.0414 / 1.0783 = 0.966. "
            .. "MXFP8 (TN, both copies) x 1.0142; H200 FP8 (TN) x 1.0048 vs BF16 "
            .. "x 1.0006",
      source = "NVIDIA/TransformerEngine docs/examples/gemm_profiling/gemm_profiling.rst "
            .. "(PR #2863), pre-quantized Per-Layer GEMM Time (B300 and H200); "
            .. "transformer_engine/pytorch/utils.py non_tn_fp8_gemm_supported and "
            .. "csrc/extensions/quantizer.cpp create_transpose (v2.2, bee4649)",
    },

    -- Eager PyTorch's own memory-bound kernels (what the hf stack's
    -- eager step launches: ATen's elementwise and reduction kernels, its
    -- RMSNorm, the loss, the foreach optimizer) keep too few bytes in
    -- flight for Blackwell's larger bandwidth x latency product (CCCL
    -- raised its own transform kernels' target to 64 KiB in flight per
    -- SM for B200, NVIDIA/cccl PR #4790), so they reach a smaller share
    -- of the peak than on Hopper; tuned kernels do not lose it (cuDNN's
    -- norms 0.955 of Hopper's share on the same shapes, Transformer
    -- Engine's MXFP8 rowwise cast streams its 3 B an element at 0.85 x
    -- 7.67 TB/s on B200: engine/train_int.h MXFP8_BOTH_EXTRA).
    eager = {
      hbm = 0.87,
      reason = "cuDNN-frontend's norm benchmark, one container (PyTorch 25.12), the "
            .. "same bf16 RMSNorm shapes on GB200 and H200: PyTorch's own kernel's "
            .. "achieved bandwidth as a share of the nominal (8 and 4.8 TB/s), "
            .. "GB200's over H200's, forward and backward of the 7 shapes of 2^25 "
            .. "elements and more (e.g. Llama 3 8B, 16384 x 4096: forward 5341 vs "
            .. "3364 GB/s, backward 2267 vs 1807): median 0.873 (14 pairs); "
            .. "torch.compile's Triton kernels 0.813, cuDNN's 0.955; GB300 "
            .. "0.895 / 0.830 / 0.949. Smaller shapes lose more (all 13 shapes: "
            .. "0.80), which the fixed part of each kernel (roofline.c "
            .. "ROOF_MEM_FILL) prices apart",
      source = "NVIDIA/cudnn-frontend benchmark/norms (results/gb200/"
            .. "all_models_20260226_180237.csv, results/h200/all_models_20260227_"
            .. "035147.csv, results/gb300/all_models_20260226_190305.csv; Dockerfile "
            .. "nvcr.io/nvidia/pytorch:25.12-py3); NVIDIA/cccl PR #4790 'Increase "
            .. "bytes in flight for B200 to 64KiB'",
    },

    attention = {
      kernel = "cudnn",
      fa4 = { fwd = 0.63, bwd = 0.54 },
      -- dropout: cuDNN's fused attention with dropout on the
      -- probabilities against the same call without (NVIDIA/
      -- TransformerEngine issue #3312, TE 2.14.1, forward + backward of one
      -- DotProductAttention, bf16, 4096 tokens in 4 sequences, 16 heads,
      -- head dim 128): "B300 (sm103) | 2.14.1 | sbhd | 0.480 ms | 0.525
      -- ms": 1.094.  The packed layout (thd) falls to a composite engine
      -- there (0.585 -> 3.060 ms, 5.24x); not priced.
      cudnn = { fwd = 0.55, bwd = 0.43, dropout = 1.094 },
      -- FP8 attention (an 8-bit KV cache): its tensor rate doubles, the
      -- softmax between its two matmuls does not.
      fp8 = 0.90,
      -- The head dim below which the softmax's per-score work, not the
      -- tensor cores, bounds the kernel (roofline.c roof_attn_eff).  B200's
      -- SM does 8192 MMA FLOP a clock against 16 exponentials
      -- (FlashAttention-4, arXiv 2603.05451: "the main performance
      -- bottleneck lies not in how fast the tensor cores can do MMA, but
      -- rather (a) in the SFU units for softmax exponential during the FWD
      -- computation"): by the exponentials alone they balance at 8192 /
      -- (4 x 16) = 128, lowered by the kernels computing part of them as
      -- a polynomial on the FMA units.  Measured (flash-attention PR
      -- #2605, a GB300 locked at 1965 MHz, bf16 forward TFLOP/s at head
      -- dim 64 / 128): FA4 non-causal 1179 / 1646 at 8192 tokens (0.716),
      -- 1112 / 1559 at 4096 (0.713), 1218 / 1745 at 16384 (0.698); cuDNN
      -- non-causal 980 / 1428 at 1024 (0.686).  The rate at 64 is 64 / d*
      -- of the rate at 128: d* = 64 / 0.716 = 89.  Blackwell Ultra (B300,
      -- GB300) doubles the SFUs' exponential rate ("NVIDIA Blackwell Ultra
      -- alleviates this bottleneck by doubling SFU throughput over the
      -- standard NVIDIA Blackwell architecture", NVIDIA technical blog,
      -- "Making Softmax More Efficient with NVIDIA Blackwell Ultra") and
      -- still runs head dim 64 at 0.70 of 128: the rest of the per-score
      -- work (the rescaling and P's conversion on FP32 ALUs that did not
      -- grow either, FA4 sec. 1) binds there.  But the doubled SFUs do
      -- count: the same pull request's B200 table (the same FA4 release)
      -- runs head dim 64 at 0.658 of 128 (857 / 1302 TFLOP/s, non-causal
      -- 8192), d* = 97, so 89 is Blackwell Ultra's figure (B300, GB300,
      -- which inherit or state it) and the b200 and gb200 entries state
      -- their own 97.  Cross-check on B200: cuDNN 9.9 at 1665 MHz
      -- (cudnn-frontend's Llama-3.2-1B training sweep, head dim 64) adds
      -- 0.054 s from 8192- to 16384-token sequences at 16384 tokens a
      -- step: 3.08e13 FLOP at 570 TFLOP/s, 0.65 of the head-dim-128 cuDNN
      -- 9.13 rate above at that clock (1032 x 1665 / 1965 = 874), d* <= 98
      -- (an older release than the fractions').
      exp_dim = 89,
      reason = "B200-class (SM100), head_dim 128, causal, 8k tokens: FlashAttention-4 "
            .. "forward 1418, backward (2-CTA) 1209 TFLOP/s of 2250 (flash-attention PR "
            .. "#2280). cuDNN, which Transformer Engine picks, measured by NVIDIA on "
            .. "B200 with cuDNN 9.13 (PyTorch container 25.09, the base Megatron-Bridge "
            .. "builds on at its 25.11 performance table: docker/Dockerfile.ci 'FROM "
            .. "nvcr.io/nvidia/pytorch:25.09-py3'), bf16, Llama 3.1's 128 query / 8 KV "
            .. "heads at 8192 causal: forward 1.877 ms (1171 TFLOP/s), backward 5.833 ms "
            .. "(942.5, the 5 matmuls of the backward = 2.5 x the forward's FLOPs). "
            .. "Each call there also holds the GPU for its host dispatch through "
            .. "torch SDPA: at 512 tokens a call takes 0.102 ms forward and 0.160 "
            .. "backward where its FLOPs at the 8k rate take 0.007 and 0.023, so "
            .. "about 0.095 and 0.137 ms a call are not the kernel's (a training "
            .. "step queues its kernels ahead of the GPU and hides them); "
            .. "without them the 8k kernel runs 1.78 and 5.70 ms: 0.55 and 0.43 of "
            .. "2250. A later release is faster: cuDNN 9.17 (container 25.11) on "
            .. "GB200 runs the same shape at 1584 and 1211 TFLOP/s of its 2500 "
            .. "(0.63, 0.48); the catalog keeps the release the published runs "
            .. "trained with"
            .. ". fp8: MLA decode on TensorRT-LLM's Blackwell kernel (FlashInfer's "
            .. "trtllm-gen attention, SGLang's trtllm_mla backend) on GB200, "
            .. "BF16 against FP8 KV cache: 'For the case under test, attention "
            .. "is 1.8x faster' (1.8 of a doubled rate: 0.90). End to end the "
            .. "gain is smaller: TensorRT-LLM's FP8 KV cache on 8 B200s "
            .. "(DeepSeek-R1 1K/2K) 'yielded a 6% E2E throughput increase when "
            .. "assuming the concurrency was identical' (this model at that "
            .. "deployment's batch 384: +9.6%)",
      source = "Dao-AILab/flash-attention PR #2280; NVIDIA/cudnn-frontend "
            .. "benchmark/sdpa_benchmark_training artifacts "
            .. "sdpa_bf16_benchmark_results_NVIDIA_B200.csv and sample_b200_bf16_run.txt "
            .. "(cuDNN 91300, torch 2.9.0a0 nv25.09), ..._NVIDIA_GB200.csv (cuDNN 9.17, "
            .. "README: nvcr.io/nvidia/pytorch:25.11-py3); NVIDIA-NeMo/Megatron-Bridge "
            .. "docker/Dockerfile.ci at commit 00b7660"
            .. "; fp8: lm-sys/lm-sys.github.io blog/2025-09-25-gb200-part-2.md (Zoom "
            .. "into Low-precision Kernels); NVIDIA/TensorRT-LLM docs/source/blogs/"
            .. "tech_blog/blog3_Optimizing_DeepSeek_R1_Throughput_on_NVIDIA_"
            .. "Blackwell_GPUs.md (FP8 KV Cache)",
    },

    sustained = {
      gemm = 0.80, attention = 0.85,
      reason = "B200 with its tensor cores busy back to back reaches its 1000 W "
            .. "limit and the SM clock settles from 1965 to ~1580 MHz (0.80); a "
            .. "BF16 FlashAttention-4 forward (batch 4, 8192 tokens, 16 heads, d 128) "
            .. "run 100 times back to back falls from 1450 TFLOP/s (iterations "
            .. "10-19) to 1237 (70-79): 0.85, throttling from about 5 ms of "
            .. "sustained compute on. The GEMM and attention rates above are "
            .. "taken in shorter bursts (MAMF: 150 iterations of ~0.1 ms per shape "
            .. "with host gaps between shapes; the flash-attention PR benchmarks a "
            .. "few iterations); a training step runs its GEMMs and attention back "
            .. "to back for seconds. GEMMs are tensor-bound and follow the clock "
            .. "(0.80); attention, also bound by its exponential units, fell by the "
            .. "measured 0.85. Memory-bound kernels keep their rate: the power "
            .. "governor lowers the SM clock, not the memory clock (measured on an "
            .. "RTX 3090 at its cap). Measured on B200; on GB200 (1200 W) a "
            .. "sustained cuBLASLt FP8 GEMM (10,000 warm-up iterations, 16384^3) "
            .. "runs 2906.9 TFLOP/s against its MAMF burst 3615.6: 0.804, the same "
            .. "factor. GB300's GEMM fractions are its sustained measurement over "
            .. "this factor (its entry); B300 and the RTX 5090 carry it as an "
            .. "assumption. Cross-checks at layer shapes: Transformer Engine's GEMM "
            .. "profiling guide times a 4096-hidden, 16384-MLP layer's 12 BF16 GEMMs "
            .. "at 15872 tokens (100 timed iterations each) on a B300 at 13.102 ms, "
            .. "priced 13.741 with this factor (the B300 runs 1.05 x the priced rate). "
            .. "OpenXLA's matmul table (bursts: one warm-up, the median of 5 "
            .. "traced runs) at 4x4096^3: B200 1670, H100 789 TFLOP/s, a ratio of "
            .. "2.118 against the priced 2.204. Over its 65 shapes of 2x2048^3 to "
            .. "4x4096^3 the priced rates fall 7.6% under B200's bursts (this "
            .. "factor) and 24.9% under H100's (the hopper one): B200's smaller "
            .. "shapes run lower in bursts too, tile and wave quantization, not "
            .. "the clock (docs/validation.md, the train residuals by feature)",
      source = "flashinfer-ai/flashinfer PR #2899 'bench: fix GPU power throttling "
            .. "in benchmark utilities' (B200 clocks and FA4 per-iteration "
            .. "TFLOP/s); stas00/ml-engineering compute/accelerator/README.md (MAMF "
            .. "'a mean of 100 iterations after 50 warmup iterations for each "
            .. "shape'); Azure/AI-benchmarking-guide Azure_Results/ND_GB200_v6_"
            .. "results.md (GEMM CuBLASLt FP8, 10,000 warmup iterations); "
            .. "ashalliants/ninfer-3090 PR #72 (sw_power_cap active, "
            .. "memory clock unchanged); openxla/xla xla/service/gpu/model/"
            .. "matmul_interpolator_data.h (sm_100_B200 and sm_90 entries, "
            .. "ea2c45f2ca) and xla/tools/matmul_perf_table_gen.cc; NVIDIA/"
            .. "TransformerEngine docs/examples/gemm_profiling/gemm_profiling.rst "
            .. "(PR #2863, B300 SXM6 AC, pre-quantized Per-Layer GEMM Time)",
    },
  },
  -- A board power limit below the TDP (gp.train's power_limit; PyTorch's
  -- benchmark hosts cap B200s at 750 W of their 1000): the governor lowers
  -- the SM clock until the board's draw fits, as on Hopper (the hopper
  -- arch's power_curve above).  static: a B200's idle draw, 137 W (air
  -- cooled, measured), the H100's 140 W within 3 W.  exponent: Hopper's
  -- 2.63 (the H100 PCIe / SXM5 MAMF pair), taken for Blackwell: GB100 is
  -- made on TSMC 4NP, the refinement of GH100's 4N, so the voltage-clock
  -- curve that sets the exponent is the same process's.  No B200 pair of
  -- sustained GEMM rates at two limits was found to fit its own.  At 750 W:
  -- (613 / 863) ^ (1 / 2.63) = 0.878 of the 1000 W sustained clock.  The
  -- one Blackwell measurement found, a GB300 capped at 500 W of its 1400
  -- (cuBLAS GEMM ~617 TFLOP/s against ~1600-2174 at 1400 W: 0.28-0.39),
  -- falls further than this curve gives so deep a cut ((363 / 1263) ^
  -- (1 / 2.63) = 0.62): deep under its TDP the voltage sits at its floor
  -- and the draw falls only with the clock (exponent toward 1), so the
  -- curve prices a cut no shallower than the silicon takes.  That GEMM
  -- ran with the SM clock locked at its maximum (PR #2023: denoise.sh
  -- "locks the SM clock to its max"; "power-throttles the locked 2070 MHz
  -- clock"), where the rate falls in proportion to the dynamic draw
  -- (617 / 2174 = 0.284 against 363 / 1263 = 0.287): it measures the
  -- locked regime, not this governor curve (docs/validation.md, the
  -- torchtitan mxfp8 doc rows).
  power_curve = {
    static = "137W", exponent = 2.63,
    reason = "B200 idle draw 137 W (air cooled); the clock exponent of GH100's "
          .. "measured curve (H100 PCIe 350 W / SXM5 700 W MAMF per SM, 2.63; the "
          .. "hopper arch's power_curve), GB100 being on TSMC 4NP, the refinement "
          .. "of GH100's 4N. A GB300 at 500 W of 1400 (GEMM ~617 against "
          .. "~1600-2174 TFLOP/s) falls further than the curve gives that deep a "
          .. "cut (0.62): the curve is the shallow side of a Blackwell cap",
    source = "ROCm/legacy-rocm-build issue #5219 ('air cooled B200 idle power draw "
          .. "137W'); the hopper arch's power_curve sources (stas00/ml-engineering "
          .. "MAMF H100 SXM; mag-/gpu_benchmark MAMF H100 PCIe); "
          .. "facebookexperimental/triton PR #2023 (GB300 at 500 W; 'B200 -> 750' "
          .. "the PyTorch benchmark hosts' cap)",
  },
  sms = 148,  -- NVIDIA Blackwell datasheets (B200: 148 SMs)
  nccl_ll_max_bw = "282GB/s",
  nccl_tree_ch_bw = { nodes2 = "42.8GB/s", nodes3 = "24GB/s" },
  -- NCCL 2.28.3 retuned Blackwell's tree ceilings: through 2.27.7 its row
  -- was "/* Blackwell (N1/N2/N4) */ {2*38.7, 2*41.4, 2*36.0}"
  -- (src/graph/tuning.cc perChMaxTreeBws, v2.26.2-1 .. v2.27.7-1), from
  -- v2.28.3-1 "{70.0, 42.8, 24.0}".  The older releases rank the tree by
  -- their row; the block's own rate is the later, measured one.
  nccl_tree_ch_bw_before = { release = "2.28.3", nodes2 = "82.8GB/s", nodes3 = "72GB/s" },
  nccl_tree_ll128_ch_bw = { nodes2 = "31.67GB/s", nodes3 = "20GB/s" },
  nccl_ring_ll128_ch_bw = "40GB/s",
  launch_overhead = "4us",
  graph_launch_overhead = "1us",
}

arch {
  id = "cdna2", name = "AMD CDNA 2",
  achievable = {
    gemm = { bf16 = 0.77, fp16 = 0.77, int8 = 0.77 },
    hbm = 0.85,
    reason = "MI250X one GCD: best bf16 matmul 147.0 of 191.5 TFLOPS = 0.767 "
          .. "(ROCm 6.2); the catalog's MI250X peak covers both GCDs, so a "
          .. "single-device matmul reaches 0.77 of half of it. int8 and the "
          .. "memory fraction not measured (0.85 assumed as on NVIDIA HBM)",
    source = "stas00/ml-engineering compute/accelerator/README.md, Maximum Achievable "
          .. "Matmul FLOPS table (earlier revision, ROCm-6.2)",
  },
  sms = 220,  -- AMD CDNA 2 whitepaper (MI250X: 220 CUs)
  -- RCCL relays no send through a NIC's own GPU by default (PXN off:
  -- "NCCL_PARAM(PxnDisable, \"PXN_DISABLE\", 1)", src/graph/paths.cc;
  -- ROCm/rccl#1209), so a ring leaves a node from its last GPU's own NIC:
  -- catalog/FORMAT.md.
  ccl_pxn = false,
  launch_overhead = "4us",
  graph_launch_overhead = "1us",
}

arch {
  id = "cdna3", name = "AMD CDNA 3",
  achievable = {
    gemm = { bf16 = 0.60, fp16 = 0.60, tf32 = 0.60, fp8 = 0.60, int8 = 0.60 },
    hbm = 0.85,
    reason = "MI325X best bf16 matmul 784.9 of 1307.4 TFLOPS = 0.600 "
          .. "(TunableOp on), MI300X 781.9 = 0.598 (ROCm 6.2); a later MI300X run "
          .. "(torch 2.5.1, ROCm 6.3) found 668.4 = 0.511. The part cannot hold "
          .. "its peak clock at 750 W under full matrix load (AMD ROCm blog). "
          .. "fp8/int8/tf32 not measured, taken equal; memory not measured. "
          .. "The MI300X and MI325X entries carry AMD's own measured values "
          .. "(bf16 and fp8 both); this arch value is the fallback",
    source = "stas00/ml-engineering compute/accelerator/README.md, Maximum Achievable "
          .. "Matmul FLOPS table; rocm.blogs.amd.com 'Understanding Peak and "
          .. "Max-Achievable FLOPS'",

    -- Transformer Engine on ROCm runs its fused attention on Composable
    -- Kernel / aiter (NVTE_FUSED_ATTN_CK=1), with aiter's hand-written v3
    -- forward and backward where the shape allows (NVTE_CK_USES_FWD_V3,
    -- _BWD_V3: bf16, head dim 128, causal or no mask).  AMD measured those
    -- kernels on an MI300X (ROCm/aiter op_tests/cpp/mha/README.md, "the
    -- asm kernel performance of the attention forwards and attention
    -- backwards ... tested under the conditions of BF16 and BSHD in batch
    -- mode", added by aiter PR #1270, 2025-10-28), head dim 128, causal,
    -- at Llama 2/3 70B's 64 query / 8 KV heads, batch 1, TFLOPS per
    -- column FWD / BWD-a16 / BWD-a32: "| 1 | 64 | 8 | 8192 | 8192 | 128 |
    -- 1 | 518.29 | 1300.105 | 481.895 | 1064.56 | 433.285 | 765.21 |"
    -- (MI300X, MI355X alternating).  The causal rows count the unmasked
    -- half: their three-decimal values (255.105, 317.685, 433.285) are the
    -- benchmark's two-decimal full-square rate halved (its backward counts
    -- "3 * 2 * seqlen_q * seqlen_k * hdim_q + 2 * 2 * seqlen_q * seqlen_k
    -- * hdim_v" whatever the mask, benchmark_mha_bwd.cpp), the FA
    -- convention, with the backward's 5 matmuls 2.5 x the forward's 2.
    -- Of the 1307.4 TFLOPS dense bf16 peak: forward 0.396, backward with
    -- an fp32 dQ accumulator (a32) 0.331.  a32 is what Transformer Engine
    -- runs unless told otherwise (ROCm/TransformerEngine fused_attn_ck.cpp:
    -- 'getenv<int>("NVTE_CK_IS_V3_ATOMIC_FP32", 1)') and what AMD's
    -- training docs set on these parts ("Set this on MI325X/MI300X only /
    -- export NVTE_CK_IS_V3_ATOMIC_FP32=1", ROCm Megatron-LM training
    -- docs); the a16 column (0.369) is the faster one it replaces.
    -- long: the same rows, forward and backward (a32) together in the FA
    -- convention (3.5 / (1/fwd + 2.5/bwd)): 454.6 at 8192, 464.3 at 10240
    -- (510.895 / 447.995), 442.3 at 16384 (541.55 / 412.04), the last
    -- the table's longest.  Below 8k the table falls faster than the
    -- shape terms take Hopper's kernels (4096: 474.385 / 378.155, 0.88 of
    -- 8k together; 1024: 228.54 / 242.43, 0.52): one sequence of 64
    -- heads fills few of the 304 CUs' waves there.
    -- The rates are a short benchmark's (10 warm-up, 10 timed calls, at
    -- whatever clock the 750 W part holds for them); no sustained
    -- attention measurement on CDNA 3 was found, so none is applied.
    attention = {
      kernel = "ck",
      ck = { fwd = 0.396, bwd = 0.331,
             long = { { seq = 8192, tflops = 454.6 }, { seq = 10240, tflops = 464.3 },
                      { seq = 16384, tflops = 442.3 } } },
      reason = "MI300X, aiter v3 (asm) fused attention, bf16, head dim 128, causal, "
            .. "64 query / 8 KV heads, batch 1, 8192 tokens: forward 518.29, backward "
            .. "(fp32 dQ atomics, Transformer Engine's default and AMD's setting on "
            .. "MI300X/MI325X) 433.285 TFLOPS of 1307.4 = 0.396 / 0.331, the causal "
            .. "rows counting the unmasked half (the FA convention); long: forward + "
            .. "backward together 454.6 / 464.3 / 442.3 TFLOPS at 8192 / 10240 / "
            .. "16384 tokens. A short benchmark's rate: no sustained factor applied "
            .. "(none measured on CDNA 3)",
      source = "ROCm/aiter op_tests/cpp/mha/README.md (PR #1270, 'add the asm kernel "
            .. "performance of fwd and bwd'; MI300X columns of the performance table) "
            .. "and op_tests/cpp/mha/benchmark_mha_bwd.cpp (flop count); "
            .. "ROCm/TransformerEngine transformer_engine/common/fused_attn_rocm/"
            .. "fused_attn_ck.cpp (NVTE_CK_IS_V3_ATOMIC_FP32 default 1)",
    },
  },
  sms = 304,  -- AMD CDNA 3 whitepaper (MI300X: 304 CUs)
  -- RCCL's per-call base latency (rccl_base_lat above).
  ccl_base_lat = rccl_base_lat(),
  -- RCCL's LL network step (rccl_net_lat above).
  ccl_net_lat = rccl_net_lat(),
  -- RCCL runs no LL128 here unless a Rome model of the node sets
  -- ll128Enabled, which none of its 8-GPU xGMI mesh models does (RCCL
  -- 2.22.3 for ROCm 6.4.2: "Added support for the LL128 protocol on
  -- gfx942", still behind topo->ll128Enabled; 2.28.3: "Enable LL128
  -- protocol for gfx942 with 4-NIC configurations"): catalog/FORMAT.md.
  nccl_ll128 = false,
  -- RCCL relays no send through a NIC's own GPU by default (PXN off:
  -- "NCCL_PARAM(PxnDisable, \"PXN_DISABLE\", 1)", src/graph/paths.cc;
  -- ROCm/rccl#1209), so a ring leaves a node from its last GPU's own NIC:
  -- catalog/FORMAT.md.
  ccl_pxn = false,
  launch_overhead = "4us",
  graph_launch_overhead = "1us",
}

arch {
  id = "cdna4", name = "AMD CDNA 4",
  -- Measured on MI355X (the arch's one catalog part).  bf16: the MAMF
  -- shape search's best, 1565.0 of 2500.  fp8 and fp4: AMD's ROCm blog
  -- "From Naive to Near-Peak: Building High-Performance GEMM Kernels with
  -- Gluon" (2026-05-22) times three tuned kernels on one MI355 (gfx950):
  -- "a16w16 FP16 4096x4096x8192 1489 TFLOPS, 98.75% MFMA efficiency;
  -- a8w8 BF8 4096x4096x16384 3257 TFLOPS, 99.72%; a4w4 MXFP4
  -- 4096x4096x32768 5255 TFLOPS, 92.41%".  Of the stored dense peaks
  -- (2500 / 5000 / 10100): 0.596, 0.651, 0.520.  The MFMA efficiencies
  -- (busy cycles) near 1 at 0.60-0.65 of peak say the chip runs its
  -- matrix cores well under the 2400 MHz peak clock (1489 / 0.9875 of
  -- 2500 at 2400 MHz: ~1450 MHz), and MXFP4 lower still (5255 / 0.9241
  -- of 10100: ~1350 MHz): the power budget, not the kernel, sets these.
  -- The FP16 kernel's one shape lands at 0.951 of the bf16 MAMF search's
  -- best (1489 against 1565), so its BF8 and MXFP4 shapes are near the
  -- best those precisions reach.  fp16 keeps bf16's MAMF (the same MFMA
  -- rate; the Gluon FP16 shape is one point, the MAMF the best of a
  -- search).  fp6 and int8 are not measured on MI355X: fp6 runs at the
  -- fp4 peak (10.1 PF) through the same scaled MFMA, so it is given the
  -- measured fp4 fraction; int8 keeps the old 0.63 (assumed, bf16's).
  -- Before: bf16's 0.63 for every precision (fp4 6363 TFLOP/s where the
  -- measured kernel reaches 5255; fp8 3150 where it reaches 3257).
  achievable = {
    gemm = { bf16 = 0.63, fp16 = 0.63, fp8 = 0.65, fp6 = 0.52, fp4 = 0.52,
             int8 = 0.63 },
    hbm = 0.85,
    reason = "MI355X: bf16 best matmul 1565.0 TFLOPS (MAMF) against the 2500 stored "
          .. "peak = 0.626 (ml-engineering itself divides by 2300: 0.68); fp8 "
          .. "and fp4: AMD's Gluon GEMM tutorial on MI355, BF8 3257 TFLOPS at "
          .. "4096x4096x16384 (0.651 of 5000) and MXFP4 5255 at 4096x4096x32768 "
          .. "(0.520 of 10100), its FP16 kernel 1489 at 4096x4096x8192 (0.951 of "
          .. "the bf16 MAMF); fp16 as bf16 (same MFMA rate); fp6 assumed fp4's "
          .. "(same 10.1 PF peak, not measured); int8 assumed bf16's 0.63 (not "
          .. "measured); memory not measured (0.85 assumed)",
    source = "stas00/ml-engineering compute/accelerator/README.md, Maximum Achievable "
          .. "Matmul FLOPS table (torch 2.8.0+rocm7.0.2); rocm.blogs.amd.com "
          .. "software-tools-optimization/gluon-gemm-tutorial (2026-05-22, "
          .. "'From Naive to Near-Peak: Building High-Performance GEMM Kernels "
          .. "with Gluon', summary table; companion repo gfx950-gluon-tutorials)",
  },
  sms = 256,  -- AMD CDNA 4 whitepaper (MI355X: 256 CUs)
  -- RCCL's per-call base latency (rccl_base_lat above).
  ccl_base_lat = rccl_base_lat(),
  -- RCCL's LL network step (rccl_net_lat above).
  ccl_net_lat = rccl_net_lat(),
  -- RCCL 2.26.6 "Enabled LL128 protocol on gfx950", behind the same
  -- topo->ll128Enabled that only a Rome model or RCCL_LL128_FORCE_ENABLE
  -- sets (tuning.cc; rccl_wrap.cc's multi-node protocol ranges pick LL128
  -- only "if (comm->topo->ll128Enabled)"): catalog/FORMAT.md.
  nccl_ll128 = false,
  -- RCCL relays no send through a NIC's own GPU by default (PXN off:
  -- "NCCL_PARAM(PxnDisable, \"PXN_DISABLE\", 1)", src/graph/paths.cc;
  -- ROCm/rccl#1209), so a ring leaves a node from its last GPU's own NIC:
  -- catalog/FORMAT.md.
  ccl_pxn = false,
  launch_overhead = "4us",
  graph_launch_overhead = "1us",
}

arch {
  id = "gaudi", name = "Intel Gaudi",
  achievable = {
    gemm = { bf16 = 0.74, fp16 = 0.74, tf32 = 0.74, fp8 = 0.77 },
    hbm = 0.85,
    reason = "Gaudi 3 best matmul relative to its shipping 1677 TFLOPS: bf16 "
          .. "0.741, fp8 0.769 (Gaudi 2: 0.969 / 0.955; both GPUs carry their "
          .. "own measured values). Memory not measured: 0.85 assumed. Launch "
          .. "overheads: graph/lazy mode batches ops; the NVIDIA figures are "
          .. "used as placeholders (not measured on Gaudi)",
    source = "stas00/ml-engineering compute/accelerator/README.md, Maximum Achievable "
          .. "Matmul FLOPS table",
  },
  launch_overhead = "4us",
  graph_launch_overhead = "1us",
}
