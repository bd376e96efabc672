-- NVIDIA Hopper (GH100) and its export variants (H800, H20).
--
-- Tensor peaks are DENSE. NVIDIA's H100/H200 tables print the tensor rows
-- "with sparsity" (footnote: "Specifications 1/2 lower without sparsity"), so
-- H100 SXM "1,979 TFLOPS BF16" is 989 dense and "3,958 FP8" is 1,979 dense.
-- The ~495 TFLOPS figure sometimes quoted as H200 "dense FP16" is the dense
-- TF32 rate (494.5): 1979 halved twice.
--
-- Memory follows catalog/FORMAT.md "Memory capacity": `memory` is the
-- marketed size read as GiB (the vendors' "GB" is binary: nvidia-smi reports
-- 81920MiB for the 80GB A100 and A800, 81559MiB for the 80GB H100/H800,
-- 97871MiB for the 96GB H20, 143771MiB for the 141GB H200); `usable_memory`
-- is what CUDA lets PyTorch allocate, given where measured and otherwise
-- derived as memory x 0.989.

gpu {
  id = "h100-sxm", name = "NVIDIA H100 SXM5 80GB", vendor = "NVIDIA",
  arch = "hopper", form_factor = "SXM5", year = 2022,
  memory = "80GiB", memory_type = "HBM3",
  usable_memory = "79.1GiB",
  mem_bw = "3.35TB/s",
  sms = 132,
  peak = {
    fp64 = "34TFLOPS", fp64_tensor = "67TFLOPS", fp32 = "67TFLOPS",
    tf32 = "494.5TFLOPS", bf16 = "989TFLOPS", fp16 = "989TFLOPS",
    fp8 = "1979TFLOPS", int8 = "1979TOPS",
  },
  scaleup = { fabric = "nvlink4", domain = 8 },
  pcie = { gen = 5, lanes = 16 },
  tdp = "700W",
  mig = { max = 7, profiles = { "1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb",
                                "4g.40gb", "7g.80gb" } },
  source = "NVIDIA H100 table as reproduced at archive-lib.hpctech.co.jp/gpuproduct/"
        .. "nvidia-h100.html (with the sparsity footnote); stas00/ml-engineering "
        .. "compute/accelerator/README.md dense table (67/494.5/989/1979); "
        .. "jax-ml/scaling-book gpus.md",
  notes = "usable_memory: nvidia-smi shows 81559MiB (79.6 GiB); PyTorch reports "
       .. "'total capacity of 79.10-79.11 GiB' on H100 80GB (vLLM and fine-tuning "
       .. "OOM reports). Some tools use 3072 GB/s for the bandwidth (LLM-Viewer); "
       .. "NVIDIA says 3.35 TB/s."
       .. " SMs: 132 (NVIDIA H100 Tensor Core GPU Architecture whitepaper: SXM5 132 SMs).",
}

-- Meta's Grand Teton H100: the SXM5 board with six HBM2e stacks (96 GB,
-- 2.4 TB/s), whose 700 W TDP its owners run at a 500 W default power
-- limit.  Its tensor peaks are not published; its owners state they lie
-- between the SXM5's and the NVL's and use the SXM5's, as here.  The
-- 500 W limit lowers the sustained tensor clock below the 700 W part's
-- (the hopper arch's power_curve: 0.845 of it); memory-bound work keeps
-- its rate.
gpu {
  id = "h100-sxm-96gb", name = "NVIDIA H100 SXM5 96GB HBM2e (500 W)", vendor = "NVIDIA",
  arch = "hopper", form_factor = "SXM5", year = 2023,
  memory = "96GiB", memory_type = "HBM2e",
  mem_bw = "2.4TB/s",
  sms = 132,
  peak = {
    fp64 = "34TFLOPS", fp64_tensor = "67TFLOPS", fp32 = "67TFLOPS",
    tf32 = "494.5TFLOPS", bf16 = "989TFLOPS", fp16 = "989TFLOPS",
    fp8 = "1979TFLOPS", int8 = "1979TOPS",
  },
  scaleup = { fabric = "nvlink4", domain = 8 },
  pcie = { gen = 5, lanes = 16 },
  tdp = "700W",
  power_limit = "500W",
  source = "pytorch/torchtitan benchmarks/llama3_h100_202412_torchtitan.md: \"Grand Teton "
        .. "platform ... Each host has 8 NVIDIA H100 GPUs fully connected with NVLink. Each "
        .. "H100 GPU is equipped with 96GB HBM2e with 2.4 TB/sec peak memory bandwidth ... "
        .. "We used the default 500W power limit, although tuning it up to 700W TDP can "
        .. "potentially provide further speedups\"; footnote: \"HBM2e-based SXM H100 with "
        .. "lower TDP, the actual peak TFLOPs number is between SXM and NVL, and we don't "
        .. "know its exact value ... we use the peak number of SXM directly\"",
  notes = "Peaks: the SXM5's (the source's own choice; the true ones lie between the NVL's "
       .. "835.5 and the SXM5's 989 bf16). SMs: 132 (the SXM5 configuration). Sold to "
       .. "hyperscalers (Meta's Grand Teton), not in NVIDIA's public H100 table.",
}

gpu {
  id = "h100-pcie", name = "NVIDIA H100 PCIe 80GB", vendor = "NVIDIA",
  arch = "hopper", form_factor = "PCIe dual-slot", year = 2022,
  memory = "80GiB", memory_type = "HBM2e",
  mem_bw = "2.0TB/s",
  sms = 114,
  peak = {
    fp64 = "26TFLOPS", fp64_tensor = "51TFLOPS", fp32 = "51TFLOPS",
    tf32 = "378TFLOPS", bf16 = "756TFLOPS", fp16 = "756TFLOPS",
    fp8 = "1513TFLOPS", int8 = "1513TOPS",
  },
  achievable = {
    gemm = { bf16 = 0.66, fp16 = 0.66, tf32 = 0.66, fp8 = 0.58, int8 = 0.58 },
    hbm = 0.84,
    reason = "MAMF 499.5 of 756 dense bf16 TFLOPS = 0.66: the 350 W card is "
          .. "power-limited well below the SXM part; fp8 scaled by the H100 SXM "
          .. "fp8/bf16 MAMF ratio (0.709/0.803), not measured; hbm as the hopper arch",
    source = "mag-/gpu_benchmark README (MAMF finder, H100 PCIe 499.5 TFLOPS, "
          .. "shape 6912x16384x2048)",
  },
  scaleup = { fabric = "nvlink-bridge", domain = 2 },
  pcie = { gen = 5, lanes = 16 },
  tdp = "350W",
  mig = { max = 7 },
  source = "NVIDIA H100 PCIe Product Brief PB-11133-001_v02 (350 W, MIG 7, >2000 GB/s) "
        .. "via manuals.plus; hpctech.co.jp copy of NVIDIA's table (NVLink 600 GB/s, "
        .. "PCIe Gen5 128 GB/s, 300-350 W); stas00/ml-engineering dense table",
  notes = "Memory listed as HBM2e by NVIDIA's table copy; some blogs say HBM3. "
       .. "The NVLink bridge pairs 2 cards; without it use pcie5."
       .. " SMs: 114 (NVIDIA H100 whitepaper: PCIe 114 SMs).",
}

gpu {
  id = "h100-nvl", name = "NVIDIA H100 NVL 94GB", vendor = "NVIDIA",
  arch = "hopper", form_factor = "PCIe dual-slot (bridged pairs)", year = 2023,
  memory = "94GiB", memory_type = "HBM3",
  mem_bw = "3.9TB/s",
  sms = 132,
  peak = {
    fp64 = "30TFLOPS", fp64_tensor = "60TFLOPS", fp32 = "60TFLOPS",
    tf32 = "417.5TFLOPS", bf16 = "835.5TFLOPS", fp16 = "835.5TFLOPS",
    fp8 = "1670.5TFLOPS", int8 = "1670.5TOPS",
  },
  scaleup = { fabric = "nvlink-bridge", domain = 2 },
  pcie = { gen = 5, lanes = 16 },
  tdp = "400W",
  mig = { max = 7 },
  source = "GitHub transcriptions of nvidia.com/en-us/data-center/h100 (sparse "
        .. "835/1671/3341); 'Data Center PCIe Cards' table (94 GB HBM3, 3,938 GB/s, "
        .. "400 W, bridge pairs); stas00/ml-engineering power table (350-400 W)",
  notes = "Dense tensor values are NVIDIA's sparse figures halved. TDP is "
       .. "configurable 350-400 W; 400 W stored. Bandwidth 3.9 TB/s (3,938 GB/s "
       .. "in the PCIe-cards table). BabelStream triad on an H100 NVL measured "
       .. "3.30 TB/s (0.84 of 3.938)."
       .. " SMs: 132 (H100 NVL uses the SXM5 GH100 configuration, 132 SMs (H100 whitepaper)).",
}

gpu {
  id = "h800-sxm", name = "NVIDIA H800 SXM5 80GB", vendor = "NVIDIA",
  arch = "hopper", form_factor = "SXM5", year = 2023,
  memory = "80GiB", memory_type = "HBM3",
  usable_memory = "79.1GiB",
  mem_bw = "3.35TB/s",
  sms = 132,
  peak = {
    fp64 = "1TFLOPS", fp32 = "67TFLOPS", tf32 = "494.5TFLOPS",
    bf16 = "989TFLOPS", fp16 = "989TFLOPS",
    fp8 = "1979TFLOPS", int8 = "1979TOPS",
  },
  scaleup = { fabric = "nvlink4-h800", domain = 8 },
  pcie = { gen = 5, lanes = 16 },
  tdp = "700W",
  source = "citsjtu2020/LLM-Prof hardware_spec.md (H800: 3350 GB/s, FP16 989e12, INT8 "
        .. "1979e12, 80 GB, interconnect 400); tumgag.com and philisun.com H800-vs-H100 "
        .. "articles (NVLink 400 GB/s bidirectional, FP64 1 TFLOPS); aiwiki.ai "
        .. "nvidia_h800 (launched 2023-03-21)",
  notes = "No NVIDIA H800 datasheet was found. FP32, TF32, PCIe Gen5 and 700 W "
       .. "are taken equal to H100 SXM (the export cut touched NVLink and FP64 "
       .. "only). nvidia-smi shows 81559MiB as on H100, hence the same usable "
       .. "memory. focusunsink/timeflies uses 1979 for H800 bf16: that is the "
       .. "sparse figure."
       .. " SMs: 132 (same GH100 SXM5 configuration as H100 SXM (H100 whitepaper: 132 SMs)).",
}

gpu {
  id = "h800-pcie", name = "NVIDIA H800 PCIe 80GB", vendor = "NVIDIA",
  arch = "hopper", form_factor = "PCIe dual-slot",
  memory = "80GiB", memory_type = "HBM2e",
  mem_bw = "2.0TB/s",
  sms = 114,
  peak = {
    bf16 = "756TFLOPS", fp16 = "756TFLOPS",
    fp8 = "1513TFLOPS", int8 = "1513TOPS",
  },
  scaleup = { fabric = "pcie5", domain = 8 },
  pcie = { gen = 5, lanes = 16 },
  tdp = "350W",
  source = "GitHub benchmark README ('H800 PCIe peak F8: 3026 TFLOPS' sparse, 114 SMs); "
        .. "GitHub GPU config (H800 PCIe = H100 PCIe export variant); techpowerup "
        .. "news (H800 chip-to-chip 300 GB/s vs 600 GB/s on H100 PCIe)",
  notes = "LOW CONFIDENCE. One config says 2039 GB/s; 2.0 TB/s (as H100 PCIe) "
       .. "chosen. TDP taken from H100 PCIe. The seed claim 'H800 PCIe has no "
       .. "NVLink' is not confirmed: techpowerup/Reuters report a reduced "
       .. "300 GB/s bridge; no datasheet was found, so the scale-up fabric is "
       .. "plain PCIe here (the conservative choice)."
       .. " SMs: 114 (same configuration as H100 PCIe (H100 whitepaper: 114 SMs)).",
}

gpu {
  id = "h20", name = "NVIDIA H20 96GB", vendor = "NVIDIA",
  arch = "hopper", form_factor = "SXM (HGX H20 8-way)", year = 2024,
  memory = "96GiB", memory_type = "HBM3",
  mem_bw = "4.0TB/s",
  sms = 78,
  peak = {
    fp64 = "1TFLOPS", fp32 = "44TFLOPS", tf32 = "74TFLOPS",
    bf16 = "148TFLOPS", fp16 = "148TFLOPS",
    fp8 = "296TFLOPS", int8 = "296TOPS",
  },
  achievable = {
    -- fp8 measured on the H20 itself: DeepGEMM's own H20 table (deepseek-ai/
    -- DeepGEMM PR 192, carried into SGLang's DeepGEMM as sgl-project/DeepGEMM
    -- PR 11; masked grouped GEMM, 16 experts, "Aligned M", block-fp8 1D2D).
    -- Its compute-bound points, each timed against the SM time of the blocks
    -- DeepGEMM itself runs (engine/roofline.c deepgemm_eff: its block_n for
    -- the fewest waves on 78 SMs, no split-K; swapAB 32 x 256 blocks) and the
    -- K loop's fill (k / (k + 128) against 8192's, as the model applies):
    -- plain 32 rows 4096 x 7168 257 us (block_n 192, 5 waves: 0.905),
    -- 7168 x 2048 127 us (192, 8 waves: 0.874), 96 rows 497 us (128-row
    -- blocks, 192, 5 waves: 0.936), 240 us (8 waves: 0.925); swapAB 96
    -- rows 340 us (768 blocks, 10 waves: 0.912), 191 us (1344, 18: 0.872),
    -- 160 rows 572 us (1280, 17: 0.922), 303 us (2240, 29: 0.885).  The
    -- median, 0.908, is 0.91; the time is counted as compute alone, so
    -- the fraction is, if anything, low.  (The plain 160-row points run
    -- 128-row blocks whose second warpgroup skips its rows past the
    -- count, not a uniform block; swapAB 32 rows is bound by the weight
    -- stream.)  The H100's 0.71 (the hopper arch's) does not carry over:
    -- the H20's tensor rate is cut to 296 TFLOP/s on 78 SMs, a quarter of
    -- the H100's a SM, while the rest of each SM (TMA, the promotion of
    -- fp8 partial sums on the CUDA cores, the epilogue) keeps its speed,
    -- so the kernel's non-MMA work, which holds an H100 near 0.7, weighs
    -- about a quarter as much -- the same reason its attention runs at a
    -- larger share of its peak (below).  int8: the same tensor path, the
    -- fp8 row.
    -- bf16/fp16/tf32 measured on the H20 itself: zzc0721/torch-performance-
    -- test-data, whose test.py times torch.mm on square n x n operands (n =
    -- 1024, 2048, 4096, 8192, 10240; 6 warm-up calls, then 30 calls between
    -- two synchronizes, wall clock; 2 n^3 FLOP a call) and keeps each
    -- dtype's best size, the quantity MAMF's shape search reads.  Two H20
    -- 96GB submissions: database.md "NVIDIA H20 96GB | 31.95 | 141.73 |
    -- 141.86" (fp32, fp16, bf16; PyTorch 2.8.0, CUDA 12.8) and issue #77
    -- (torch 2.7.0+cu128) "BF16: ... 8192x8192: 138.60 TFLOPS, 10240x10240:
    -- 142.25 TFLOPS", "FP16: ... 10240x10240: 142.09", "TF32: ...
    -- 10240x10240: 71.80".  bf16 141.86 and 142.25 of 148 = 0.958, 0.961;
    -- fp16 141.73, 142.09 = 0.958, 0.960; tf32 71.80 of 74 = 0.970.  The
    -- same script on an H100 SXM reads as MAMF does, so its H20 figure
    -- stands beside the arch's 0.80: database.md "NVIDIA H100 80GB HBM3 |
    -- ... | 789.24" and "... | 783.66" (bf16, 0.798 and 0.792 of 989)
    -- against stas00's MAMF 794.5 (0.803); "NVIDIA H200 | ... | 790.29".
    -- The reason the H20 sits higher is the fp8 row's: its tensor rate a
    -- SM is a quarter of the H100's while the rest of each SM is not.
    gemm = { bf16 = 0.96, fp16 = 0.96, tf32 = 0.97, fp8 = 0.91, int8 = 0.91 },
    hbm = 0.84,
    -- The hopper arch's sustained-load factor is the 700 W parts' power
    -- cap; the H20's tensor work does not reach its own (reason below).
    sustained = {
      gemm = 1, attention = 1,
      reason = "Not power-capped under tensor load: 148 dense bf16 TFLOP/s "
            .. "on 78 SMs is 1.9 a SM against the H100 SXM's 7.5 (989 on "
            .. "132), about 15% of the H100's tensor work, under a 400 W board "
            .. "(the H100's 700 W is what its tensor cores reach)",
      source = "this entry's peaks and SM count; the hopper arch's sustained "
            .. "entry (catalog/archs.lua)",
    },
    -- Attention measured on the H20 itself: its kernels reach a larger
    -- share of its cut tensor peak than the H100's do of its own.
    attention = {
      kernel = "cudnn",
      -- dropout: the hopper arch's measurements (H200's cuDNN,
      -- FlashAttention-2's one kernel source), the same kernels on sm90
      cudnn = { fwd = 0.862, bwd = 0.731, dropout = 1.034 },
      fa3 = { fwd = 0.862, bwd = 0.747 },
      fa2 = { fwd = 0.527, bwd = 0.463, dropout = 1.047 },
      -- triton: the hopper arch's ratio of it to FA2 (0.173 / 0.39, 0.153 /
      -- 0.345) times FA2 here, and the arch's length curve
      -- (FlashAttention-1's H100 bars, 135 and 137 at 8k and 16k).
      triton = { fwd = 0.234, bwd = 0.205,
                 long = { { seq = 8192, tflops = 135 }, { seq = 16384, tflops = 137 } } },
      -- FP8 attention's share of its doubled rate, as the hopper arch's:
      -- measured on the H20 (Ant Group's FP8 FlashMLA, ~1.70x BF16).
      fp8 = 0.85,
      reason = "H20, head_dim 128, bf16, causal, batch 2 x 2048 tokens: forward cuDNN "
            .. "107.8, FA3 107.8, FA2 65.9 TFLOP/s of 148 (0.728, 0.728, 0.445); "
            .. "non-causal cuDNN 129.1 (0.872). The catalog's fractions stand for "
            .. "the arch's reference, a causal 8192-token prompt, and the pricing "
            .. "applies each shape's own term against it (roofline.c roof_attn_eff): "
            .. "on the H20's 78 SMs a 2048-token causal prompt of 2 x 16 heads runs "
            .. "at 0.845 of the reference (its shorter keys loop, its waves and its "
            .. "diagonal), so the reference fraction is 0.728 / 0.845 = 0.862 (FA2 "
            .. "0.445 / 0.845 = 0.527); the non-causal run agrees (0.872 / 0.950 = "
            .. "0.917). The tensor peak is cut to 148 on 78 "
            .. "SMs (1.9 a SM against the H100's 7.5) while each SM keeps its "
            .. "exponential units and its share of 4 TB/s, so the softmax and the "
            .. "loads that hold the H100 near half its peak weigh a quarter as much. "
            .. "Backward not measured on the H20: each kernel's forward times the "
            .. "hopper arch's backward/forward ratio (cuDNN 0.45/0.53, FA3 0.52/0.60, "
            .. "FA2 0.29/0.33); triton, the arch's ratio of it to FA2. fp8: the "
            .. "hopper arch's 0.85, itself Ant Group's FP8 FlashMLA on the H20",
      source = "Dao-AILab/flash-attention issue #1310 ('flash attention 3 benchmark for "
            .. "H20 hopper', 2024-11-01, benchmarks/benchmark_attn output); the hopper "
            .. "arch's attention entry (catalog/archs.lua)",
    },
    reason = "fp8/int8 GEMM: DeepGEMM's masked grouped GEMM on the H20, the median "
          .. "of eight compute-bound points of its PR 192 table against the SM time "
          .. "of the blocks it runs (0.872-0.936), 0.91 -- the tensor rate is cut to "
          .. "a quarter of the H100's a SM, the kernel's other work is not; bf16 "
          .. "0.96, fp16 0.96, tf32 0.97: torch.mm's best square shape (n 10240) on "
          .. "two H20 96GB submissions of torch-performance-test-data (bf16 141.86 "
          .. "and 142.25 of 148; the same script reads an H100 SXM at 789.24 and "
          .. "783.66 of 989, MAMF's 0.80); HBM fraction as the hopper arch (not "
          .. "measured on H20)",
    source = "deepseek-ai/DeepGEMM PR 192 and sgl-project/DeepGEMM PR 11 ('support "
          .. "swapAB for m_grouped_fp8_gemm_nt_masked', Improvements (H20), Aligned M); "
          .. "sgl-project/DeepGEMM csrc/jit_kernels/heuristics (2991c77^: "
          .. "get_best_config, sm90.hpp); stas00/ml-engineering "
          .. "compute/accelerator/README.md (H100 SXM), as the hopper arch; "
          .. "github.com/zzc0721/torch-performance-test-data test.py and database.md "
          .. "(078586871da3: the H20 96GB and H100 80GB HBM3 rows) and issue #77 "
          .. "('新增性能数据：NVIDIA H20', 2025-10-17)",
  },
  scaleup = { fabric = "nvlink4", domain = 8 },
  tdp = "400W",
  mig = { max = 7 },
  source = "zangshuxian.com/new/674733024499207168 (FP16 dense 148, INT8 296, TF32 74, "
        .. "FP32 44, FP64 1, 4.0 TB/s, 78 SMs); 1cnz.cn/d/2353773.html (96 GB HBM3, "
        .. "4.0 TB/s, FP8 296, FP16 148, NVLink 900 GB/s, 8-way HGX); "
        .. "willitrunai.com h20-96gb (400 W, MIG 7)",
  notes = "No public NVIDIA datasheet; press figures describe 148 as dense FP16 "
       .. "('FP16稠密算力'). 74 TFLOPS is the TF32 figure, not BF16. LLM-Prof "
       .. "uses 4022 GB/s. A 141 GB HBM3e H20 variant is also reported (not "
       .. "catalogued). PCIe generation not found."
       .. " SMs: 78 (78 SMs from press reports, not an NVIDIA document).",
}

gpu {
  id = "h200-sxm", name = "NVIDIA H200 SXM5 141GB", vendor = "NVIDIA",
  arch = "hopper", form_factor = "SXM5", year = 2024,
  memory = "141GiB", memory_type = "HBM3e",
  usable_memory = "139.8GiB",
  mem_bw = "4.8TB/s",
  sms = 132,
  peak = {
    fp64 = "34TFLOPS", fp64_tensor = "67TFLOPS", fp32 = "67TFLOPS",
    tf32 = "494.5TFLOPS", bf16 = "989TFLOPS", fp16 = "989TFLOPS",
    fp8 = "1979TFLOPS", int8 = "1979TOPS",
  },
  achievable = {
    gemm = { bf16 = 0.80, fp16 = 0.80, tf32 = 0.80, fp8 = 0.73, int8 = 0.73 },
    -- hbm measured on an H200 SXM lent to this project (2026-12-04):
    -- torch 2.11 (CUDA 13.0), B.copy_(A) of two 2 GiB bf16 tensors, the
    -- kernel's time from the CUDA profiler (CUPTI), median of three after
    -- a warm-up: 4 GiB read + written in 1.00 ms = 4.28 TB/s, 0.892 of
    -- the rated 4.8 TB/s.  Rerun the same day over 0.25-4 GiB a tensor
    -- (kernel time, median of 20): 4.23-4.30 TB/s; timed with CUDA
    -- events around each copy (median of 50, launch included) 3.90 at
    -- 0.25 GiB rising to 4.25 at 4 GiB.
    -- GEMM rates measured the same day on the same card (torch 2.11,
    -- cuBLAS 13, A @ B with CUDA events, median of 20 after 3 warm-ups;
    -- driver 580.159.04, 700 W, 1980 MHz max SM clock), TFLOP/s:
    -- bf16 square M=N=K 1024 97, 2048 446, 3072 648, 4096 734, 6144 787,
    -- 8192 766, 12288 716, 16384 698 (best 787 = 0.795 of 989: the
    -- gemm.bf16 0.80 below, borrowed from the H100, holds; the largest
    -- squares fall back as the card holds its 700 W); Llama-shaped
    -- M x N x K 4096x6144x4096 615, 4096x28672x8192 687,
    -- 4096x8192x28672 699, 8192x57344x8192 703, 16384x4096x14336 601,
    -- 1024x8192x8192 597, 128x8192x8192 339, 64x8192x8192 174; fp8
    -- (torch._scaled_mm, e4m3, per-tensor scales, bf16 out) square 2048
    -- 517, 4096 1152, 8192 1456 (0.736 of 1979: the gemm.fp8 0.73 below,
    -- stas00's H200 MAMF, holds), 16384 1304.  The same session timed cuBLAS's one-token bf16
    -- linears (F.linear, x [1, K], weights rotated through >= 600 MB so
    -- L2 holds none): Qwen3-8B's shapes N x K 6144x4096 3.44 TB/s,
    -- 4096x4096 2.77 (split-K + reduce), 24576x4096 4.13, 4096x12288
    -- 3.56, 151936x4096 4.16; 5120x25600 3.70 -- 0.65-0.97 of the copy,
    -- the smaller the matrix the lower (what ROOF_GEMV_BW and the
    -- pipeline fill in engine/roofline.c price).
    hbm = 0.89,
    reason = "fp8 MAMF measured on H200 SXM: 1453.4 of 1979 = 0.73; bf16 "
          .. "'H200 is the same' as H100 SXM (794.5 of 989 = 0.80); tf32/int8 "
          .. "not measured, taken from the bf16/fp8 rows; hbm measured on an H200 "
          .. "SXM on 2026-12-04: a 2 GiB device-to-device copy at 4.28 TB/s "
          .. "(read + write) of 4.8 = 0.89 (torch 2.11, CUDA 13.0, CUPTI kernel time)",
    source = "stas00/ml-engineering compute/accelerator/README.md, Maximum "
          .. "Achievable Matmul FLOPS table (torch 2.7.1+cu128); hbm: this "
          .. "project's own measurement (method in the comment above)",
  },
  scaleup = { fabric = "nvlink4", domain = 8 },
  pcie = { gen = 5, lanes = 16 },
  tdp = "700W",
  mig = { max = 7, profiles = { "1g.18gb", "7g.141gb" } },
  source = "GitHub transcription of nvidia.com/en-us/data-center/h200 (sparsity "
        .. "footnote, 'preliminary specifications'); stas00/ml-engineering (dense "
        .. "989/1979, 700 W); mlcommons inference_results_v4.1 H200-SXM-141GBx8 system "
        .. "json (18x NVLink4 900 GB/s, PCIe Gen5 x16, 700 W)",
  notes = "Announced Nov 2023, shipping Q2 2024. gdtairukj.com repeats '494 "
       .. "dense FP16 / 989 FP8': wrong, those are TF32 and BF16."
       .. " SMs: 132 (H200 shares the GH100 SXM5 configuration, 132 SMs (H100 whitepaper))."
       .. " usable_memory: PyTorch OOM messages on 8x H200 report 'total capacity of 139.80 GiB' (139.72-139.81 across drivers); nvidia-smi shows 143771MiB.",
}

gpu {
  id = "h200-nvl", name = "NVIDIA H200 NVL 141GB", vendor = "NVIDIA",
  arch = "hopper", form_factor = "PCIe dual-slot", year = 2024,
  memory = "141GiB", memory_type = "HBM3e",
  mem_bw = "4.8TB/s",
  sms = 132,
  peak = {
    fp64 = "30TFLOPS", fp64_tensor = "60TFLOPS", fp32 = "60TFLOPS",
    tf32 = "417.5TFLOPS", bf16 = "835.5TFLOPS", fp16 = "835.5TFLOPS",
    fp8 = "1670.5TFLOPS", int8 = "1670.5TOPS",
  },
  achievable = {
    gemm = { bf16 = 0.80, fp16 = 0.80, tf32 = 0.80, fp8 = 0.71, int8 = 0.71 },
    hbm = 0.84,
    -- The hopper arch's sustained factor is the 700 W SXM parts' clock
    -- under load (1500 of the 1830 MHz their peak is quoted at); this
    -- part's own, measured.
    sustained = {
      gemm = 0.92, attention = 0.92,
      reason = "NVIDIA's GEMM profiling guide times a 5B layer's twelve GEMMs "
            .. "(4096 hidden, 16384 MLP, 15872 tokens; 10 warm-up and 100 "
            .. "timed iterations each, back to back for about a quarter "
            .. "second a shape, past the power limit's settling) on an H200 "
            .. "NVL: 32.01 ms a layer in BF16 (768.335 ms for 24 layers) and "
            .. "18.98 ms in FP8 delayed scaling (455.473), where the arch's "
            .. "fractions at its 0.82 price them at 35.76 and 21.22 ms: "
            .. "0.82 x 35.76 / 32.01 = 0.916, 0.82 x 21.22 / 18.98 = 0.917. "
            .. "The NVL's 835.5 TFLOP/s is quoted at the clock its 600 W "
            .. "holds (132 SMs x 4096 FLOP a clock x 1.546 GHz), not at the "
            .. "SXM parts' 1830 MHz, so less of its quoted peak is lost under "
            .. "load. Attention not measured on it: the GEMMs' factor carried",
      source = "NVIDIA/TransformerEngine docs/examples/gemm_profiling/"
            .. "gemm_profiling.rst ('Worked Example: 5B Model on H200', "
            .. "GEMM Benchmark on NVIDIA H200 NVL, PR #2863)",
    },
    reason = "GEMM and HBM fractions as the hopper arch (MAMF on H100 SXM)",
    source = "stas00/ml-engineering compute/accelerator/README.md (H100 SXM), "
          .. "as the hopper arch",
  },
  scaleup = { fabric = "nvlink-bridge-h200", domain = 4 },
  pcie = { gen = 5, lanes = 16 },
  tdp = "600W",
  mig = { max = 7 },
  source = "GitHub transcription of nvidia.com/en-us/data-center/h200 (sparse "
        .. "835/1671/3341, NVLink bridge 2- or 4-way 900 GB/s, MIG 7 @16.5GB); "
        .. "stas00/ml-engineering power table (600 W)",
  notes = "Dense values are NVIDIA's sparse figures halved. The bridge joins "
       .. "2 or 4 cards; domain 4 is the larger option."
       .. " SMs: 132 (H200 shares the GH100 SXM5 configuration, 132 SMs (H100 whitepaper)).",
}
