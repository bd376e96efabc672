-- NVIDIA Blackwell (B100/B200/GB200), Blackwell Ultra (B300/GB300) and the
-- consumer Blackwell RTX 5090.
--
-- Tensor peaks are DENSE. Every tensor row of NVIDIA's HGX B200 / GB200 NVL72
-- / HGX B300 tables is "with sparsity": B200 "4.5 PFLOPS FP16/BF16" is
-- 2.25 PFLOPS dense. Shipping HGX/DGX B200 has 180 GB; the 192 GB figure is
-- the launch announcement.

gpu {
  id = "b100", name = "NVIDIA B100 192GB", vendor = "NVIDIA",
  arch = "blackwell", form_factor = "SXM (HGX B100)", year = 2024,
  memory = "192GiB", memory_type = "HBM3e",
  mem_bw = "8TB/s",
  sms = 148,
  peak = {
    fp64 = "30TFLOPS", fp32 = "60.6TFLOPS",
    bf16 = "1750TFLOPS", fp16 = "1750TFLOPS",
    fp8 = "3500TFLOPS", fp4 = "7000TFLOPS", int8 = "3500TOPS",
  },
  scaleup = { fabric = "nvlink5", domain = 8 },
  tdp = "700W",
  source = "hmc-tech.com b200-vs-b100 (aggregator: 700 W, 192 GB, dense/sparse FP4 "
        .. "7/14, FP8 3.5/7, BF16 1.75/3.5 PF); yobitel.com nvidia-b100 (192 GB, "
        .. "8 TB/s, NVLink 1.8 TB/s, 700 W); glennklockwood B200 page (B100 = 700 W "
        .. "variant)",
  notes = "LOW CONFIDENCE: no NVIDIA datasheet text read; jax-ml/scaling-book says "
       .. "B100 'wasn't mass-produced'. hmc-tech gives 7.7 TB/s; yobitel 8 TB/s "
       .. "(chosen). TF32 and PCIe generation not found."
       .. " SMs: 148 (NVIDIA Blackwell datasheets: 148 SMs (same die as B200)).",
}

gpu {
  id = "b200", name = "NVIDIA B200 (HGX/DGX) 180GB", vendor = "NVIDIA",
  arch = "blackwell", form_factor = "SXM (HGX B200)", year = 2024,
  memory = "180GiB", memory_type = "HBM3e",
  mem_bw = "7.67TB/s",
  sms = 148,
  peak = {
    fp64 = "37TFLOPS", fp64_tensor = "37TFLOPS", fp32 = "75TFLOPS",
    tf32 = "1100TFLOPS", bf16 = "2250TFLOPS", fp16 = "2250TFLOPS",
    fp8 = "4500TFLOPS", fp6 = "4500TFLOPS", fp4 = "9000TFLOPS",
    int8 = "4500TOPS",
  },
  achievable = {
    gemm = { bf16 = 0.78, fp16 = 0.78, tf32 = 0.78, fp8 = 0.76, fp6 = 0.76,
             fp4 = 0.63, int8 = 0.76 },
    hbm = 0.85,
    -- Memory-bound NVFP4 GEMMs (decode's grouped expert GEMMs) stream
    -- their 4-bit operands and block scales well below the common
    -- weight-streaming rate (ROOF_GEMV_BW 0.94), in every kernel family
    -- published on B200.
    stream = {
      fp4 = 0.70,
      reason = "FlashInfer's CuTe DSL masked NVFP4 grouped GEMM (the kernel "
            .. "SGLang's --moe-runner-backend flashinfer_cutedsl runs) on "
            .. "B200, 9 or 18 groups of 56-455 tokens at N x K 4096 x 7168 "
            .. "and 7168 x 2048: the 9 shapes whose memory side binds reach "
            .. "0.63-0.80 of the streaming copy (7.67 TB/s x 0.85) once the "
            .. "model's fill and overlap are counted, median 0.697 (e.g. 113 "
            .. "tokens a group, 4096 x 7168: 72 us, '4480 GB/s'); its "
            .. "compute-bound shapes land within 3-8% of the fp4 GEMM "
            .. "fraction. Slower kernels confirm the ceiling: CUTLASS "
            .. "example 75's block-scaled grouped GEMM at 16 tokens 'not "
            .. "getting much higher than 3 TB/sec', 'closer to 4' tuned, "
            .. "where 'the same gemm w/ mxfp8' runs 'much closer to ... 6 "
            .. "TB/sec'; one-token NVFP4 GEMVs 2.2-3.2 TB/s (vLLM's CUTLASS, "
            .. "Helion's Triton). Other precisions keep ROOF_GEMV_BW",
      source = "flashinfer-ai/flashinfer PR 2503 (bench_cute_dsl_blockscaled_"
            .. "gemm table); NVIDIA/cutlass issue 2266 (Memory-bound nvfp4 "
            .. "grouped gemm); pytorch/helion PR 3046 (NVFP4 decode GEMV vs "
            .. "vLLM CUTLASS, B200)",
    },
    -- The blackwell arch's attention (these are B200 timings), with
    -- FlashAttention-2: flash-attn 2.x is an Ampere kernel (sm80 mma.sync,
    -- not the tcgen05 MMAs of cuDNN and FlashAttention-4) and Transformer
    -- Engine before 2.5 runs it on Blackwell where cuDNN declines head dims
    -- above 128 (the gb200 entry quotes both rules).  Timed on this part
    -- beside cuDNN (cudnn-frontend's sdpa_bf16_benchmark_results_NVIDIA_
    -- B200.csv, backend flash-attn, Llama 3.1's 128 / 8 heads at 8192
    -- causal): forward 5.499 ms, backward 17.288 ms; less the arch's host
    -- dispatch (0.095, 0.137 ms) 407.0 and 320.5 TFLOP/s, 0.181 and 0.142
    -- of 2250.  dropout: the hopper arch's FlashAttention-2 factor (the
    -- same kernel code).  exp_dim: the arch's 89 is where the tcgen05
    -- kernels' MMAs (8192 FLOP a clock an SM) meet the SM's 16
    -- exponentials a clock (engine/roofline.c exp_bound); FlashAttention-2
    -- issues its MMAs at 0.181 of that rate and takes each exponential on
    -- the same units, so its balance lies at 0.181 x 8192 / (4 x 16) = 23:
    -- no head dim it runs (32 up) is bound by them.  The arch does not
    -- carry it: the RTX 5090 (sm120) inherits the arch and no one has
    -- timed FlashAttention-2 there.
    attention = {
      kernel = "cudnn",
      fa4 = { fwd = 0.63, bwd = 0.54 },
      cudnn = { fwd = 0.55, bwd = 0.43, dropout = 1.094 },
      fa2 = { fwd = 0.181, bwd = 0.142, dropout = 1.047, exp_dim = 23 },
      fp8 = 0.90,
      -- exp_dim: this part's own, not the arch's 89.  The arch's figure is
      -- FlashAttention-4's head-dim-64 rate on a GB300 (0.716 of head dim
      -- 128's), a Blackwell Ultra part whose SFUs give twice the
      -- exponentials a clock ("NVIDIA Blackwell Ultra alleviates this
      -- bottleneck by doubling SFU throughput over the standard NVIDIA
      -- Blackwell architecture", NVIDIA technical blog "Making Softmax
      -- More Efficient with NVIDIA Blackwell Ultra").  The same pull
      -- request times the same FA4 release (nvidia-cutlass-dsl 4.5.2) on
      -- a B200 (Dao-AILab/flash-attention PR #2605, forward, bf16,
      -- non-causal, "64 False 4 8192 2.57/857" against "128 False 4 8192
      -- 1.69/1302" TFLOP/s): 0.658 of head dim 128's at 8192 tokens (0.673
      -- at 4096, 0.664 at 16384), so d* = 64 / 0.658 = 97 (roofline.c
      -- exp_bound).  Cross-check: cuDNN 9.9 on a B200 (the arch entry's
      -- Llama-3.2-1B sweep) bounds it at 98.
      exp_dim = 97,
      reason = "kernel, fa4, cudnn, fp8: the blackwell arch's (B200 "
            .. "timings). exp_dim: FA4 on B200 in Dao-AILab/flash-attention PR "
            .. "#2605 (nvidia-cutlass-dsl 4.5.2), forward non-causal 8192 tokens, "
            .. "head dim 64 at 857 against 128 at 1302 TFLOP/s: 0.658, 64 / 0.658 "
            .. "= 97 (the arch's 89 is the same PR's GB300, whose SFUs give twice "
            .. "the exponentials). fa2: flash-attn's FlashAttention-2 on B200 at Llama "
            .. "3.1's heads, 8192 causal: 5.499 / 17.288 ms (399.9 / 318.0 "
            .. "TFLOP/s), less the arch's host dispatch: 407.0 / 320.5 = 0.181 / "
            .. "0.142 of 2250; its exp_dim: MMAs at 0.181 of 8192 FLOP a clock "
            .. "against 16 exponentials, 0.181 x 8192 / 64 = 23",
      source = "NVIDIA/cudnn-frontend benchmark/sdpa_benchmark_training/"
            .. "artifacts sdpa_bf16_benchmark_results_NVIDIA_B200.csv (commit "
            .. "0b1577c); the blackwell arch entry (catalog/archs.lua)",
    },
    reason = "MAMF on B200 SXM: bf16 1745.0 of 2250 = 0.776, fp8 3432.5 of "
          .. "4500 = 0.763; fp4: the fastest FP4 x FP4 GEMM published on B200, "
          .. "DeepGEMM's at 8192^3, 5702 of 9000 = 0.634 (cuBLAS 5239 = 0.582); "
          .. "tf32 and fp6/int8 not measured, taken from the bf16 and fp8 rows; "
          .. "hbm: the blackwell arch's 0.85, measured on B200 by the streaming "
          .. "kernels it prices: CUB's DeviceTransform add of 2^28 fp16 (1.61 GB "
          .. "moved) 239.6 us, 6.72 TB/s, 0.876 of 7.67, priced 1.047 x (0.85 plus "
          .. "the kernel's fixed 3.9 us); PyTorch's clone of a '128MB' uint8 "
          .. "tensor 45.13 us, priced 0.999 x as 128 MiB (0.957 x as 128e6 B) "
          .. "(tests/lua/blackwell_stream.t)",
    source = "stas00/ml-engineering compute/accelerator/README.md, Maximum "
          .. "Achievable Matmul FLOPS table (torch 2.7.1+cu128); fp4: "
          .. "deepseek-ai/DeepGEMM PR 348 (B200, CUDA 12.9, dense GEMM table); "
          .. "hbm: NVIDIA/cccl PR 7391 (DeviceTransform benchmarks, NVIDIA B200); "
          .. "pytorch/pytorch PR 174553 (clone, 128MB tensor, B200)",
  },
  scaleup = { fabric = "nvlink5", domain = 8 },
  pcie = { gen = 5, lanes = 16 },
  tdp = "1000W",
  mig = { max = 7 },
  source = "NVIDIA HGX B200 / GB200 NVL72 spec table as transcribed at zdszero.github.io/"
        .. "Computer/Artificial_Intelligence/Hardware.html (sparse FP4 18, FP8/FP6 9, "
        .. "BF16 4.5, TF32 2.2 PF; FP32 75, FP64 37; PCIe Gen5 128 GB/s); "
        .. "stas00/ml-engineering (dense 2250/4500/9000; 180 GB and 8 TB/s from the "
        .. "DGX B200 datasheet; 1000 W); jax-ml/scaling-book gpus.md (148 SMs); "
        .. "pytorch/ao PR #4002 (7680-bit bus at 3996 MHz: 7.67 TB/s)",
  notes = "Launch figures were 192 GB / 8 TB/s; shipping HGX/DGX B200 is 180 GB "
       .. "(ml-engineering suggests 192 GiB physical with 1/16 held back, "
       .. "unconfirmed by NVIDIA). Memory bandwidth 7.67 TB/s: the driver "
       .. "reports a 7680-bit bus ('Memory Bus Width: 7680 bits', 15/16 of "
       .. "8192, as 180 GB is 15/16 of 192) at 3996 MHz, 7680 / 8 x 3996e6 x "
       .. "2 = 7.672 TB/s (pytorch/ao PR #4002, 'B200 memory bandwidth is "
       .. "actually 7680gbps, not 8192'); NVIDIA's HGX B200 table agrees, "
       .. "7.7 TB/s per GPU (62 TB/s per 8); the DGX B200 datasheet's 8 TB/s "
       .. "is the launch part's 8192-bit bus. "
       .. "ml-engineering lists FP32 80 vs NVIDIA's 75 (75 chosen). "
       .. "glennklockwood claims PCIe Gen6; NVIDIA's table says Gen5 (chosen)."
       .. " SMs: 148 (NVIDIA Blackwell datasheets: B200 148 SMs).",
}

gpu {
  id = "gb200", name = "NVIDIA GB200 (per Blackwell GPU, NVL72)", vendor = "NVIDIA",
  arch = "blackwell", form_factor = "Superchip (1 Grace : 2 GPUs), NVL72 rack",
  year = 2024,
  memory = "186GiB", memory_type = "HBM3e",
  mem_bw = "8TB/s",
  sms = 148,
  peak = {
    fp64 = "40TFLOPS", fp64_tensor = "40TFLOPS", fp32 = "80TFLOPS",
    tf32 = "1250TFLOPS", bf16 = "2500TFLOPS", fp16 = "2500TFLOPS",
    fp8 = "5000TFLOPS", fp6 = "5000TFLOPS", fp4 = "10000TFLOPS",
    int8 = "5000TOPS",
  },
  achievable = {
    gemm = { bf16 = 0.73, fp16 = 0.73, tf32 = 0.73, fp8 = 0.72, fp6 = 0.72,
             fp4 = 0.60, int8 = 0.72 },
    hbm = 0.85,
    reason = "MAMF on GB200: bf16 1822.0 of 2500 = 0.729, fp8 3615.6 of 5000 = "
          .. "0.723 (nightly torch 2.10 + cu130); the 1200 W part holds a "
          .. "lower fraction of its higher peak than B200; fp4 not measured on "
          .. "GB200: B200's 0.634 (DeepGEMM's FP4 GEMM at 8192^3) x the same "
          .. "fp8 ratio, 0.723 / 0.763 = 0.60; others taken from the "
          .. "bf16/fp8 rows; hbm: the blackwell arch's 0.85, measured on GB200 "
          .. "between PyTorch's Tensor.copy_ of 508 MiB, 0.158183 ms (6.735 TB/s, "
          .. "0.84 of 8; priced 1.015 x with the kernel's fixed 3.9 us) and a "
          .. "Triton copy/triad sweep's best, 6.98 TB/s (0.87). Held "
          .. "sustained: a cuBLASLt FP8 GEMM after 10,000 warm-up iterations "
          .. "runs 2906.9 TFLOP/s at 16384^3 (Azure ND GB200 v6), 0.581 of 5000 "
          .. "= 0.723 x 0.804, the arch's sustained factor 0.80 (the model: "
          .. "0.72 x 0.80 x 5000 = 2880)",
    source = "stas00/ml-engineering compute/accelerator/README.md, Maximum "
          .. "Achievable Matmul FLOPS table; fp4: deepseek-ai/DeepGEMM PR 348; "
          .. "Azure/AI-benchmarking-guide Azure_Results/ND_GB200_v6_results.md; "
          .. "hbm: pytorch/pytorch issue 191284 (eager copy_ table); "
          .. "meta-pytorch/KernelAgent oink/benchmarks/media sm100_* plots at "
          .. "1fb93fb ('fresh benchmark data from GB200'), their 'HBM peak "
          .. "(measured)' line at 6977 GB/s on the plots' own axis",
    stream = {
      fp4 = 0.70,
      reason = "not measured on GB200: its GPUs are the B200 die and run the "
            .. "same NVFP4 kernels, so B200's measured streaming fraction of "
            .. "memory-bound NVFP4 GEMMs (0.70, the b200 entry) applies",
      source = "the b200 entry: flashinfer-ai/flashinfer PR 2503, "
            .. "NVIDIA/cutlass issue 2266, pytorch/helion PR 3046",
    },
    -- The blackwell arch's attention fractions are B200 timings as shares
    -- of B200's 2250; this part runs the same kernels on the same 148 SMs
    -- at the clock its GEMMs show.
    attention = {
      kernel = "cudnn",
      fa4 = { fwd = 0.59, bwd = 0.51 },
      -- dropout: the arch's (the same cuDNN kernels on the same SMs)
      cudnn = { fwd = 0.52, bwd = 0.40, dropout = 1.094 },
      -- FlashAttention-2 (flash-attn 2.x) is an Ampere kernel: its
      -- matmuls are sm80 mma.sync warp instructions, not the tcgen05 MMAs
      -- cuDNN and FlashAttention-4 issue, so on Blackwell it runs near
      -- its Hopper rate.  The benchmark the arch's cuDNN fractions come
      -- from times it beside cuDNN (cudnn-frontend's
      -- sdpa_bf16_benchmark_results_NVIDIA_B200.csv, flash_attention
      -- backend = flash-attn, Llama 3.1's 128 / 8 heads at 8192 causal):
      -- forward 5.499 ms (399.9 TFLOP/s), backward 17.288 (318.0); less
      -- the same host dispatch the arch takes off cuDNN's calls (0.095 and
      -- 0.137 ms) the kernel runs 407.0 and 320.5, 0.181 and 0.142 of
      -- B200's 2250, and at this part's 1.044 x B200 (above): x 2250 x
      -- 1.044 / 2500 = 0.170 and 0.134.  Cross-checks on GB200 itself:
      -- SDPA's flash backend (the same FlashAttention-2 code) at the same
      -- shape, 414 / 338 TFLOP/s (sdpa_bf16_benchmark_results_NVIDIA_
      -- GB200.csv): 0.166 / 0.135; Azure's flash-attention benchmark
      -- (forward + backward, causal, head dim 128, batch 2, 8192 tokens)
      -- 373.9 TFLOP/s where these fractions give 3.5 / (1 / 425 + 2.5 /
      -- 335) = 357 (H200 on the same harness: 329.3).  dropout: the
      -- hopper arch's FlashAttention-2 factor (the same kernel code).
      -- exp_dim: B200's (the same die and kernel: its MMAs at 0.181 of
      -- the SM's 8192 FLOP a clock meet its 16 exponentials at head dim
      -- 23, not the tcgen05 kernels' 89).
      -- Transformer Engine runs it on Blackwell where cuDNN declines the
      -- shape: before TE 2.5 (PR #1797, "Add support for head_dim > 128")
      -- common/fused_attn/fused_attn.cpp refuses the bf16 kernel
      -- "!(sm_arch_ >= 100 && (head_dim_qk > 128 || head_dim_v > 128))",
      -- while FlashAttention-2 takes head dims to 256 on sm100
      -- (pytorch/dot_product_attention/utils.py, commit bee4649).
      fa2 = { fwd = 0.170, bwd = 0.134, dropout = 1.047, exp_dim = 23 },
      fp8 = 0.90,
      -- B200's (the b200 entry: FA4's head-dim-64 rate on a B200 in
      -- flash-attention PR #2605, 0.658 of 128's, 64 / 0.658 = 97): the
      -- same die, the same 16 exponentials against 8192 MMA FLOP a clock
      -- an SM; the arch's 89 is Blackwell Ultra's (GB300, twice the SFU
      -- rate, the same PR).
      exp_dim = 97,
      reason = "GB200's 2500 TFLOP/s is B200's 148 SMs x 8192 FLOP a clock at "
            .. "2.06 GHz where B200's 2250 is at 1.86, but on the same "
            .. "benchmark its best matmul reaches 1822.0 against B200's "
            .. "1745.0 TFLOP/s: 1.044 x B200, not the 1.11 of its quoted "
            .. "peak. Attention runs on the same SMs at the same clock, so the "
            .. "arch's B200 fractions (cuDNN 9.13: 0.55, 0.43; FA4: 0.63, 0.54 "
            .. "of 2250) carry the same 1.044: x 2250 x 1.044 / 2500 = 0.94 -> "
            .. "cuDNN 0.52 and 0.40, FA4 0.59 and 0.51 of 2500. (cuDNN 9.17, a "
            .. "later release, runs 0.63 and 0.48 of 2500 on GB200: the blackwell "
            .. "arch entry). fp8: the arch's, measured on this part (SGLang's "
            .. "GB200 decode: FP8 MLA attention 1.8x the BF16 kernel). fa2: "
            .. "flash-attn's FlashAttention-2 (sm80 mma.sync, what Transformer "
            .. "Engine before 2.5 runs on Blackwell above head dim 128) on B200 "
            .. "at Llama 3.1's heads, 8192 causal: 5.499 / 17.288 ms (399.9 / "
            .. "318.0 TFLOP/s), less the arch's host dispatch 0.181 / 0.142 of "
            .. "2250, x 0.94 -> 0.170 / 0.134 of 2500 (SDPA's flash backend on "
            .. "GB200: 0.166 / 0.135; Azure's GB200 fwd + bwd 373.9 TFLOP/s against "
            .. "357 priced); its exp_dim 23: B200's (0.181 x 8192 / 64). exp_dim "
            .. "97: B200's (FA4 head dim 64 at 0.658 of 128's, flash-attention PR "
            .. "#2605); the arch's 89 is GB300's, twice the SFU rate",
      source = "stas00/ml-engineering compute/accelerator/README.md, Maximum "
            .. "Achievable Matmul FLOPS table (B200, GB200); the blackwell arch's "
            .. "attention entry (catalog/archs.lua); fa2: NVIDIA/cudnn-frontend "
            .. "benchmark/sdpa_benchmark_training/artifacts sdpa_bf16_benchmark_"
            .. "results_NVIDIA_B200.csv (commit 0b1577c) and _GB200.csv (commit "
            .. "b372d39); Azure/AI-benchmarking-guide Azure_Results/ND_GB200_v6_"
            .. "results.md and ND_H200_v5_results.md (Flash Attention 2.0); "
            .. "NVIDIA/TransformerEngine common/fused_attn/fused_attn.cpp (bee4649)",
    },
  },
  scaleup = { fabric = "nvlink5", domain = 72 },
  pcie = { gen = 5, lanes = 16 },
  -- The GPU's copies to and from the Grace CPU's memory cross NVLink-C2C
  -- ("900 GB/s of bidirectional bandwidth between the Grace CPU and
  -- Blackwell GPUs", one Grace to two GPUs).  Measured on the same
  -- link of a GH200 (one GPU to its Grace): a 1 GiB cuMemcpyHtoD, what a
  -- framework's tensor copy issues, at 92.6 GiB/s from pageable and 97.4
  -- GiB/s from pinned memory (vortex-data/vortex PR #7815); nvbandwidth's
  -- copy-engine stream reaches 346 GB/s host to device (NVIDIA/nvbandwidth
  -- issue #23), so two GPUs at the copy's rate fit on one link.  One
  -- GPU's copy rate, 92.6 GiB/s = 99.4 GB/s.
  host_link = {
    bw = "99.4GB/s",
    reason = "one GPU's measured 1 GiB cuMemcpy over NVLink-C2C (GH200, pageable "
          .. "92.6 GiB/s, pinned 97.4 GiB/s); two GPUs share the Grace's 900 GB/s "
          .. "link, whose copy-engine rate, 346 GB/s, holds both",
    source = "vortex-data/vortex PR #7815 (GH200 cuda/load_to_device/memcpy_htod "
          .. "benchmark); NVIDIA/nvbandwidth issue #23 (GH200 host_to_device_memcpy_ce "
          .. "346 GB/s); NVIDIA GB200 superchip: NVLink-C2C 900 GB/s bidirectional "
          .. "between one Grace CPU and two Blackwell GPUs",
  },
  tdp = "1200W",
  mig = { max = 7 },
  source = "NVIDIA GB200 NVL72 table via zdszero.github.io Hardware.html (186 GB, 8 TB/s, "
        .. "up to 1200 W, NVLink 1.8 TB/s, sparse FP4 20 / FP8 10 / BF16 5 / TF32 2.5 "
        .. "PF); stas00/ml-engineering (dense 2500/5000/10000); jax-ml/scaling-book "
        .. "(NVL72, 18 NVSwitches)",
  notes = "glennklockwood lists FP64 45 / FP32 90, older launch numbers; NVIDIA's "
       .. "table says 40/80 (chosen). 4 GPUs per compute tray."
       .. " SMs: 148 (NVIDIA Blackwell datasheets: 148 SMs per GPU).",
}

gpu {
  id = "b300", name = "NVIDIA B300 (HGX/DGX) 288GB", vendor = "NVIDIA",
  arch = "blackwell", form_factor = "SXM (HGX B300)", year = 2025,
  memory = "288GiB", memory_type = "HBM3e",
  mem_bw = "8TB/s",
  peak = {
    fp32 = "75TFLOPS", tf32 = "1125TFLOPS",
    bf16 = "2250TFLOPS", fp16 = "2250TFLOPS",
    fp8 = "4500TFLOPS", fp6 = "4500TFLOPS", fp4 = "12600TFLOPS",
  },
  -- fp4: no FP4 GEMM rate measured on a B300 is published in the stored
  -- sources (ml-engineering's MAMF table has B300 bf16 and fp8 rows only;
  -- ThunderKittens PR #201 adds the SM103 K96 NVFP4 kernel with no rate
  -- in its description).  What is measured is how Blackwell Ultra's FP4
  -- GEMM stands to its FP8 GEMM against Blackwell's, on one harness:
  -- Azure's cuBLASLt benchmark (superbench cublaslt_gemm, random data,
  -- 10,000 warm-up iterations, 16384^3) runs FP4 7627.6 and FP8 2906.9
  -- TFLOP/s on GB200 (Blackwell, 1200 W), FP4 8640.3 and FP8 3308.5 on
  -- GB300 (Blackwell Ultra, 1400 W): the Ultra die's FP4 gain, 8640.3 /
  -- 7627.6 = 1.133, is its FP8 gain, 3308.5 / 2906.9 = 1.138 (0.995 of
  -- it), not the 1.5 x of its FP4 peak -- the power budget sets both
  -- precisions' clock and the wider K96 FP4 MMA does not show.  So the
  -- B300's FP4 rate is Blackwell's measured FP4 / FP8 proportion (B200:
  -- DeepGEMM's FP4 GEMM 5702 at 8192^3 against the FP8 MAMF 3432.5,
  -- 1.661) x 0.995 on the B300's own measured FP8 MAMF, 3353.3: 5544
  -- TFLOP/s, 0.440 of the stored 12600.  (The Azure FP4 rate over the
  -- FP8-derived sustained factor 0.80 is not used: on GB200's Azure FP4
  -- row that step gives 7627.6 / 0.80 = 9535, 0.95 of 10000, where
  -- B200's measured FP4 kernels reach 0.634 (DeepGEMM) and 0.582
  -- (cuBLAS); the gb300 entry below says so too.)  The fraction before
  -- was fp8's 0.75 copied to fp4 (9450 TFLOP/s, 1.66 x B200's measured
  -- 5702).
  achievable = {
    gemm = { bf16 = 0.79, fp16 = 0.79, tf32 = 0.79, fp8 = 0.75, fp6 = 0.75,
             fp4 = 0.44 },
    hbm = 0.85,
    reason = "MAMF on B300 SXM: bf16 1769.0 of 2250 = 0.786, fp8 3353.3 of 4500 "
          .. "= 0.745 (torch 2.9.1+cu130); fp16/tf32 assumed the bf16 row's and "
          .. "fp6 the fp8 row's (not measured: the same tensor-core rate a clock, "
          .. "no published B300 figure); fp4 not measured on B300: its measured "
          .. "fp8 MAMF 3353.3 x Blackwell's measured FP4/FP8 proportion (B200: "
          .. "DeepGEMM FP4 5702 at 8192^3 / FP8 MAMF 3432.5 = 1.661) x the Ultra "
          .. "die's measured FP4 gain over its FP8 gain on one harness (Azure "
          .. "cuBLASLt, 16384^3, 10,000 warm-up iterations: GB300/GB200 FP4 "
          .. "8640.3 / 7627.6 = 1.133 against FP8 3308.5 / 2906.9 = 1.138, 0.995) "
          .. "= 5544 TFLOP/s = 0.44 of 12600 (before: fp8's 0.75 copied, "
          .. "unmeasured); hbm as the blackwell arch (not measured)",
    source = "stas00/ml-engineering compute/accelerator/README.md, Maximum "
          .. "Achievable Matmul FLOPS table (B300, B200); fp4: deepseek-ai/DeepGEMM "
          .. "PR 348 (B200, CUDA 12.9, dense GEMM table, 8192x8192x8192 5702); "
          .. "Azure/AI-benchmarking-guide Azure_Results/ND_GB200_v6_results.md "
          .. "('GEMM CuBLASLt (FP4)' 16384^3 7627.6, FP8 2906.9) and egmsft/AI-"
          .. "benchmarking-guide Azure_Results/ND_GB300_v6_results.md (FP4 "
          .. "8640.3, FP8 3308.5)",
  },
  scaleup = { fabric = "nvlink5", domain = 8 },
  tdp = "1000W",
  source = "stas00/ml-engineering (dense table; 288 GB, 8 TB/s; 1000 W max TGP from the "
        .. "DGX B300 power-capping doc); glennklockwood.com B300 page; verda.com "
        .. "gb300-nvl72-architecture; fibermall.com HGX B300 table",
  notes = "Sources disagree and no NVIDIA datasheet was read: FP4 dense 12600 "
       .. "(ml-engineering, chosen) vs 13125 (glennklockwood) vs 14000 (verda); "
       .. "FP32 75-80; INT8 4500 (ml-engineering) vs ~150 TOPS (verda/fibermall "
       .. "report INT8 and FP64 cut on Blackwell Ultra) and FP64 ~1.25 TFLOPS: "
       .. "INT8 and FP64 are left out rather than guessed. ml-engineering (at "
       .. "744d01e) now lists fp4 12600 and a separate nvfp4 15000 for B300; "
       .. "the fp4 GEMM fraction is stated against the stored 12600, so the "
       .. "priced rate (5544 TFLOP/s, see achievable) does not depend on which "
       .. "peak is right. verda says 270 GB "
       .. "usable and 7.7 TB/s. PCIe Gen6 per glennklockwood is unconfirmed "
       .. "(not stored).",
}

gpu {
  id = "gb300", name = "NVIDIA GB300 (per Blackwell Ultra GPU, NVL72)", vendor = "NVIDIA",
  arch = "blackwell", form_factor = "Superchip, NVL72 rack", year = 2025,
  memory = "288GiB", memory_type = "HBM3e",
  mem_bw = "8TB/s",
  peak = {
    fp32 = "80TFLOPS", tf32 = "1250TFLOPS",
    bf16 = "2500TFLOPS", fp16 = "2500TFLOPS",
    fp8 = "5000TFLOPS", fp6 = "5000TFLOPS", fp4 = "15000TFLOPS",
  },
  -- GB300's GEMM rate is measured sustained, the way a training step runs
  -- it: Azure's ND GB300 v6 benchmark (superbench cublaslt_gemm, FP8
  -- e4m3, random data, 10,000 warm-up iterations then 1000 timed: at
  -- 16384^3, ~3 ms a GEMM, half a minute at full tensor load before the
  -- timed ones) runs 3308.5 TFLOP/s (8192^3 3286.3, 32768^3 3271.3),
  -- 0.662 of 5000.  The catalog's fractions are burst rates that the
  -- arch's sustained factor (0.80, catalog/archs.lua) lowers to what a
  -- step holds, so GB300's are the measured sustained rate over 0.80:
  -- 0.662 / 0.80 = 0.827.  The same harness on GB200 checks that factor
  -- there: 2906.9 TFLOP/s at 16384^3 against GB200's MAMF burst 3615.6,
  -- 0.804.  The GB300 / GB200 sustained ratio, 3308.5 / 2906.9 = 1.138, is
  -- the larger power budget's clock (1400 W against 1200 W) on tensor
  -- cores of the same dense rate (both 5000); the two runs' CUDA releases
  -- differ (13.0 against 12.8), which this ratio does not separate.
  -- bf16 was not run on GB300: GB200's MAMF bf16 (0.729) times
  -- that measured ratio, 0.830 -- both precisions draw the tensor cores'
  -- power and settle at the power-bound clock alike (B200 MAMF 0.776 /
  -- 0.763, GB200 0.729 / 0.723).  fp4: the same run's NVFP4 GEMM, 8640.3
  -- TFLOP/s at 16384^3 (8555.1 at 32768^3), against the same harness's
  -- GB200 FP4 row, 7627.6: 1.133 x GB200, on GB200's catalog FP4 rate
  -- (0.60 x 10000, B200's measured DeepGEMM kernel at GB200's fp8 ratio)
  -- = 6798 TFLOP/s, 0.453 of 15000.  (Before: 8640.3 / 15000 over the
  -- sustained factor 0.80 = 0.720; that step fails on GB200, where the
  -- same harness's FP4 row over 0.80 gives 0.95 of 10000 against B200's
  -- measured FP4 kernels at 0.58-0.63 -- on this harness FP4 runs 2.62 x
  -- FP8 on both dies, above the 2 x of GB200's peaks, so the FP8-derived
  -- 0.80 does not carry to FP4.  The FP4 gain of the Ultra die over
  -- GB200 equals its FP8 gain, 1.133 against 1.138: the power budget,
  -- not the 1.5 x FP4 MMA, sets it.)  Memory fractions stay the arch's.
  achievable = {
    gemm = { bf16 = 0.830, fp16 = 0.830, tf32 = 0.830, fp8 = 0.827, fp6 = 0.827,
             fp4 = 0.453, int8 = 0.827 },
    hbm = 0.85,
    reason = "fp8: Azure ND GB300 v6, cuBLASLt FP8 GEMM after 10,000 warm-up "
          .. "iterations (sustained): 3308.5 TFLOP/s at 16384^3 = 0.662 of 5000, "
          .. "over the arch's sustained factor 0.80 = 0.827 (the same harness on "
          .. "GB200: 2906.9 against its MAMF 3615.6, 0.804, the factor); bf16 not "
          .. "run on GB300: GB200's MAMF 0.729 x the measured GB300/GB200 "
          .. "sustained ratio 3308.5 / 2906.9 = 1.138 -> 0.830; fp4: the same "
          .. "run's NVFP4 8640.3 against the same harness's GB200 FP4 7627.6 = "
          .. "1.133 x GB200's catalog FP4 rate (0.60 x 10000) = 6798 = 0.453 of "
          .. "15000 (the sustained factor 0.80 is FP8's: GB200's FP4 row over it "
          .. "gives 0.95, against B200's measured 0.634); fp6/int8/tf32 "
          .. "from the fp8/bf16 rows; hbm: the blackwell arch's 0.85; a Triton "
          .. "triad over two 1 GiB bf16 tensors on GB300 streams 7.140 TB/s (0.89 "
          .. "of 8), priced 1.059 x with the kernel's fixed 3.9 us",
    source = "egmsft/AI-benchmarking-guide (a fork of Azure/AI-benchmarking-guide) "
          .. "Azure_Results/ND_GB300_v6_results.md (CUDA 13.0, driver 580.82.07); "
          .. "Azure/AI-benchmarking-guide Azure_Results/ND_GB200_v6_results.md (CUDA "
          .. "12.8, driver 570.133.20); Benchmarks/NVIDIA/"
          .. "GEMMCublasLt.py (w = 10000, i = 1000); stas00/ml-engineering MAMF "
          .. "table (GB200); hbm: meta-pytorch/KernelAgent oink/README.md "
          .. "('measured BF16 STREAM-like roof: **7.140 TB/s**', GB300)",
    -- cuDNN against GB200's, one release on both: cudnn-frontend's SDPA
    -- training benchmark (cuDNN 9.22, Llama 3.1's 64 query / 8 KV heads,
    -- head dim 128, bf16, causal 8192, batch 2) runs forward 1856 and
    -- backward 1435 TFLOP/s on GB300, 1574 and 1332 on GB200: 1.179 and
    -- 1.077 (at 16384: 1.12, 1.135).  Blackwell Ultra doubles the SFUs'
    -- exponential rate (the arch entry), the forward's bound; the
    -- backward's, the score tiles' shared-memory traffic, did not grow.
    -- GB200's fractions (0.52, 0.40 of the same 2500 peak) times them:
    -- 0.613 and 0.431.  fa4, fp8, exp_dim and dropout stay the arch's (the
    -- dropout factor was measured on a B300, this die).
    attention = {
      kernel = "cudnn",
      fa4 = { fwd = 0.63, bwd = 0.54 },
      cudnn = { fwd = 0.613, bwd = 0.431, dropout = 1.094 },
      fp8 = 0.90,
      exp_dim = 89,
      reason = "cuDNN: GB200's 0.52 / 0.40 x the same-release GB300/GB200 ratio "
            .. "(1856 / 1574 forward, 1435 / 1332 backward TFLOP/s, cuDNN 9.22, "
            .. "bf16, causal 8192, 64 / 8 heads, head dim 128); fa4, fp8, exp_dim, "
            .. "dropout: the blackwell arch's",
      source = "NVIDIA/cudnn-frontend benchmark/sdpa_benchmark_training/results/"
            .. "llama3.1/gb300/llama3.1_20260424_100757.csv and gb200/"
            .. "llama3.1_20260424_100750.csv; catalog/archs.lua blackwell",
    },
  },
  scaleup = { fabric = "nvlink5", domain = 72 },
  -- A GB300 superchip is one Grace and two Blackwell Ultra GPUs on the
  -- same NVLink-C2C as GB200's ("Each Blackwell GPU superchip
  -- configuration consists of 1 Grace CPU and 2 Blackwell GPUs", verda's
  -- GB300 NVL72 post; NVIDIA's NVL72 RA: 4 GPUs and 2 Grace CPUs a
  -- tray), so the GPU's copies to host memory run at the rate measured
  -- on that link (the gb200 entry: one GPU's 1 GiB cuMemcpy, 99.4 GB/s).
  host_link = {
    bw = "99.4GB/s",
    reason = "GB200's NVLink-C2C copy rate (one GPU's measured 1 GiB cuMemcpy on GH200's "
          .. "link, 92.6 GiB/s pageable): GB300 keeps Grace and NVLink-C2C",
    source = "verda.com GB300 NVL72 architecture post (1 Grace + 2 GPUs a superchip); "
          .. "NVIDIA NVL72 AI factory enterprise RA (GB300 tray: 4 GPUs, 2 Grace); the "
          .. "gb200 entry's measurements",
  },
  tdp = "1400W",
  source = "stas00/ml-engineering (dense table; 1400 W per-GPU max power); verda.com "
        .. "GB300 NVL72 post; glennklockwood B300 page (GB300 NVL72: 72 ConnectX-8 NICs)",
  notes = "INT8 conflicting (5000 ml-engineering vs ~165 verda) and FP64 unknown: "
       .. "both left out. verda reports 279 GB usable. PCIe generation not found.",
}

gpu {
  id = "rtx-5090", name = "NVIDIA GeForce RTX 5090 32GB", vendor = "NVIDIA",
  arch = "blackwell", form_factor = "consumer PCIe dual-slot", year = 2025,
  memory = "32GiB", memory_type = "GDDR7",
  mem_bw = "1.792TB/s",
  sms = 170,
  peak = {
    fp64 = "1.64TFLOPS", fp32 = "104.8TFLOPS", tf32 = "105TFLOPS",
    bf16 = "210TFLOPS", fp16 = "210TFLOPS", fp8 = "419TFLOPS",
    fp4 = "1676TFLOPS", int8 = "838TOPS",
  },
  -- FP16 with FP16 accumulation at twice the stored FP32-accumulate 210
  -- (419 dense, as the notes below take it from the GeForce ratio the
  -- RTX 4090 shows); read only by a runtime that multiplies in FP16
  -- accumulation (lua/gpuplan/infer.lua M.acc16_gemm).
  acc16_x = 2,
  -- Its own GEMM fractions, not the arch's.  The blackwell arch's 0.78
  -- (bf16) and 0.76 (fp8) are B200's tcgen05 kernels against B200's
  -- rated peaks; the RTX 5090 (sm120) has no tcgen05 and runs mma.sync
  -- kernels (cuBLAS's cutlass_80-style ones for bf16, CUTLASS 3.x sm120
  -- for fp8), measured against its own rated figures:
  --   bf16 / fp16 (FP32 accumulate, the rate torch's matmuls take):
  --   torch.mm's best of 1024^3 to 10240^3 (8192^3 or 10240^3) at
  --   236.03 (PyTorch 2.8.0), 242.18 (2.7.1+cu128) and, on a 5090 D v2,
  --   232.22 TFLOPS bf16, fp16 224.41 / 237.63 / 228.57 (zzc0721/torch-
  --   performance-test-data database.md; test.py: 30 timed iterations
  --   after 6 warm-up, synced), its issues #96 and #124 240.05 and 236.99
  --   (one submission, #200, 178.86: a card held lower); SemiAnalysis'
  --   matmul.py at 16384 x 8192 x 1280: 224.3 (main-horse.github.io/
  --   posts/5090-mm-perf): 1.07 to 1.16 of the rated 209.5.  A GeForce card boosts above the clock its rating is taken
  --   at (2407 MHz); capped at 1.0 of the rating, as the RTX 4090's
  --   (MAMF 178.5 of 165.2, catalog/gpus/nvidia-ada.lua) is.  tf32: the
  --   same benchmark's TF32 rows, 122.19 and 122.13 TFLOPS at 10240^3
  --   (issues #96, #124) of 105: capped at 1.0 too.
  --   fp8: a CUTLASS 3.x sm120 row-wise scaled FP8 GEMM (the SM100
  --   template, cluster 1x1x1, tile 128x128x128) at 4096^3: 388.91
  --   TFLOPS, "rated specs is 419 TFLOPS" (pytorch/pytorch PR #155991,
  --   gau-nernst, 2025-06-15): 388.91 / 419 = 0.928, 0.93.  vLLM's w8a8
  --   path on sm120 is the same kernel (csrc/quantization/cutlass_w8a8/
  --   c3x/scaled_mm_sm120_fp8_dispatch.cuh sm120_fp8_config_default:
  --   "TileShape = Shape<_128, _128, _128>", "ClusterShape = Shape<_1,
  --   _1, _1>", KernelScheduleAuto).
  --   fp6 / fp4 / int8: not measured on this card, the arch's 0.76 kept.
  -- hbm: the arch's 0.85 (GDDR7 streaming not measured), stated here
  -- because the GPU's own gemm replaces the arch's base fractions
  -- together (roofline.base_achievable).  The sustained record stays the
  -- arch's (0.80, an assumption here, as the arch's reason says).
  -- The per-tensor FP8 GEMMs' layouts also differ from the arch's.
  -- Transformer Engine from v2.4 (PR
  -- #1659, "rtx5090 arch fix support") runs sm120 TN only:
  -- transformer_engine/common/transformer_engine.cpp
  -- nvte_is_non_tn_fp8_gemm_supported returns "(deviceComputeCapability
  -- >= 100 && deviceComputeCapability < 120) || deviceComputeCapability
  -- >= 130" ("Note: this is temporary restriction and should be lifted
  -- in the future."), so on the RTX 5090 (compute capability 12.0) the
  -- casts write the fp8 transposes and dgrad and wgrad run TN at the TN
  -- rate, as on Hopper -- not the arch's non-TN share (0.966, measured
  -- on a B300, sm103).  TE v2.0 to v2.3 took every part from 10.0 up
  -- ("return torch.cuda.get_device_capability() >= (10, 0)"); the
  -- current rule is taken.
  achievable = {
    gemm = { bf16 = 1.0, fp16 = 1.0, tf32 = 1.0, fp8 = 0.93, fp6 = 0.76, fp4 = 0.76,
             int8 = 0.76 },
    hbm = 0.85,
    non_tn = {
      fp8 = false,
      reason = "sm120: Transformer Engine (v2.4 on) takes non-TN fp8 GEMMs on compute "
            .. "capability 10.0 to 11.x and 13.0 up only, so it writes the fp8 "
            .. "transposes and runs every fp8 GEMM TN here",
      source = "NVIDIA/TransformerEngine transformer_engine/common/transformer_engine.cpp "
            .. "nvte_is_non_tn_fp8_gemm_supported: \"(deviceComputeCapability >= 100 && "
            .. "deviceComputeCapability < 120) || deviceComputeCapability >= 130\" "
            .. "(PR #1659, v2.4)",
    },
    reason = "sm120 mma.sync GEMMs measured against this card's own ratings: torch.mm "
          .. "bf16 236.03 / 242.18 / 232.22 / 240.05 / 236.99 TFLOPS at 8192^3-10240^3 (fp16 "
          .. "224.41 / 237.63 / 228.57; tf32 122.19 / 122.13 of 105), matmul.py 224.3 at 16384x8192x1280, "
          .. "1.07-1.16 of the rated 209.5 (GeForce boost above the rating's 2407 MHz): "
          .. "capped at 1.0, as the RTX 4090's; fp8 CUTLASS 3.x sm120 row-wise scaled "
          .. "GEMM 388.91 of the rated 419 at 4096^3 = 0.93. fp6/fp4/int8 and hbm: the "
          .. "blackwell arch's (not measured here); fp8 runs TN only (non_tn)",
    source = "zzc0721/torch-performance-test-data database.md and issues #96, #124 "
          .. "(test.py: torch.mm, 6 warm-up + 30 timed iterations); main-horse.github.io/"
          .. "posts/5090-mm-perf (SemiAnalysis matmul.py); pytorch/pytorch PR #155991 "
          .. "'Enable FP8 row-wise scaled-mm for sm12x' (2025-06-15 update, 'rated specs "
          .. "is 419 TFLOPS'); catalog/archs.lua blackwell (hbm, fp6/fp4/int8, sustained)",
  },
  scaleup = { fabric = "pcie5", domain = 8 },
  pcie = { gen = 5, lanes = 16 },
  tdp = "575W",
  source = "lamonoai/gpumap nvidia/GPU.md (dense: TF32 105, BF16 210, FP8 419, INT8 838); "
        .. "VladislavDuma/gpu_specs README.md (2x those); alternox1.github.io "
        .. "2025-01-08 (NVIDIA spec table: 3,352 AI TOPS, 32 GB GDDR7, 512-bit); "
        .. "GitHub product JSON (launch 2025-01-30, 575 W)",
  notes = "The two tables differ by exactly 2x on TF32/BF16/FP8; gpumap is taken "
       .. "as dense with FP32 accumulate because it keeps the RTX 4090 ratio "
       .. "INT8 = 4 x BF16(FP32-acc) (838 = 4 x 209.5). GeForce runs FP16 with "
       .. "FP16 accumulate at 2x (419). FP4 1676 = NVIDIA's 3352 sparse AI TOPS "
       .. "halved. No NVLink; P2P over PCIe."
       .. " SMs: 170 (NVIDIA RTX Blackwell whitepaper: RTX 5090 170 SMs).",
}
