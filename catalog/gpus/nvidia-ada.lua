-- NVIDIA Ada Lovelace (AD102/AD104) data-centre, workstation and GeForce cards.
--
-- Tensor peaks are DENSE; the datasheets' headline figures are 2:4-sparse.
-- GeForce cards (RTX 4090) run FP16/BF16 and FP8 tensor math with an FP32
-- accumulator at half the FP16-accumulate rate; mixed-precision training
-- accumulates in FP32, so the FP32-accumulate rates are stored.

gpu {
  id = "l40s", name = "NVIDIA L40S 48GB", vendor = "NVIDIA",
  arch = "ada", form_factor = "PCIe dual-slot", year = 2023,
  memory = "48GiB", memory_type = "GDDR6",
  usable_memory = "44.5GiB",
  mem_bw = "864GB/s",
  sms = 142,
  peak = {
    fp64 = "1.4TFLOPS", fp32 = "91.6TFLOPS", tf32 = "183TFLOPS",
    bf16 = "362TFLOPS", fp16 = "362TFLOPS", fp8 = "733TFLOPS",
    int8 = "733TOPS",
  },
  scaleup = { fabric = "pcie4", domain = 8 },
  pcie = { gen = 4, lanes = 16 },
  tdp = "350W",
  source = "stas00/ml-engineering (dense 91.6/183/362/733; 350 W); 'Data Center PCIe "
        .. "Cards' table (48 GB GDDR6 ECC, 864 GB/s, Gen4 x16, no NVLink, no MIG)",
  notes = "Datasheet headline 366/733/1466 are sparse. winston-zhang-orz/gpu-specs "
       .. "lists 300 W; NVIDIA says 350 W (chosen). No MIG. FP64 as reported "
       .. "by third parties."
       .. " SMs: 142 (NVIDIA Ada Lovelace architecture whitepaper (AD102 as L40/L40S): 142 SMs)."
       .. " usable_memory: ECC on the GDDR6 is on by default and holds 1/16 of it (nvidia-smi: L4 23034MiB, L40S 46068MiB; an A10 shows 23028MiB with ECC on, 24564MiB with it off), then x 0.989 (catalog/FORMAT.md): 48 x 15/16 x 0.989 = 44.5 GiB.",
}

gpu {
  id = "l40", name = "NVIDIA L40 48GB", vendor = "NVIDIA",
  arch = "ada", form_factor = "PCIe dual-slot", year = 2022,
  memory = "48GiB", memory_type = "GDDR6",
  usable_memory = "44.5GiB",
  mem_bw = "864GB/s",
  sms = 142,
  peak = {
    fp64 = "1.4TFLOPS", fp32 = "90.5TFLOPS", tf32 = "90.5TFLOPS",
    bf16 = "181TFLOPS", fp16 = "181TFLOPS", fp8 = "362TFLOPS",
    int8 = "362TOPS",
  },
  scaleup = { fabric = "pcie4", domain = 8 },
  pcie = { gen = 4, lanes = 16 },
  tdp = "300W",
  source = "lamonoai/gpumap (L40: TF32 91/181, BF16 181/362, FP8 362/724, 864 GB/s, "
        .. "300 W); hahnyuan/LLM-Viewer (FP16 181e12, INT8 362e12); simoncblyth/j "
        .. "data_center_rt.rst (2022/10, 300 W, FP32 90.5)",
  notes = "One doc (kpu-sim) claims one NVLink 4.0 link: contradicted by gpumap "
       .. "('no NVLink', chosen)."
       .. " SMs: 142 (NVIDIA Ada whitepaper: L40 142 SMs)."
       .. " usable_memory: ECC on the GDDR6 is on by default (assumed for this card as for the other data-centre GDDR6 parts) and holds 1/16 of it (nvidia-smi: L4 23034MiB, L40S 46068MiB; an A10 shows 23028MiB with ECC on, 24564MiB with it off), then x 0.989 (catalog/FORMAT.md): 48 x 15/16 x 0.989 = 44.5 GiB.",
}

gpu {
  id = "l20", name = "NVIDIA L20 48GB", vendor = "NVIDIA",
  arch = "ada", form_factor = "PCIe dual-slot", year = 2023,
  memory = "48GiB", memory_type = "GDDR6",
  usable_memory = "44.5GiB",
  mem_bw = "864GB/s",
  sms = 92,
  peak = {
    fp32 = "59.35TFLOPS", bf16 = "119.5TFLOPS", fp16 = "119.5TFLOPS",
    int8 = "239TOPS",
  },
  scaleup = { fabric = "pcie4", domain = 8 },
  pcie = { gen = 4, lanes = 16 },
  tdp = "275W",
  source = "citsjtu2020/LLM-Prof hardware_spec.md (L20: 864 GB/s, FP16 119.5e12, INT8 "
        .. "239e12, 48 GB); technical.city and topcpu.net (Nov 2023, 275 W, PCIe 4.0 "
        .. "x16); 1cnz.cn (PCIe 4.0 x16, 48 GB GDDR6)",
  notes = "China-market part, no NVIDIA datasheet found. FP32 is an aggregator's "
       .. "clock-derived value. FP8 and TF32 not found (left out; the chip has "
       .. "FP8 tensor cores like the rest of AD102)."
       .. " SMs: 92 (92 SMs from press reports, not an NVIDIA document)."
       .. " usable_memory: ECC on the GDDR6 is on by default (assumed for this card as for the other data-centre GDDR6 parts) and holds 1/16 of it (nvidia-smi: L4 23034MiB, L40S 46068MiB; an A10 shows 23028MiB with ECC on, 24564MiB with it off), then x 0.989 (catalog/FORMAT.md): 48 x 15/16 x 0.989 = 44.5 GiB.",
}

gpu {
  id = "l4", name = "NVIDIA L4 24GB", vendor = "NVIDIA",
  arch = "ada", form_factor = "PCIe low-profile single-slot", year = 2023,
  memory = "24GiB", memory_type = "GDDR6",
  usable_memory = "22.25GiB",
  mem_bw = "300GB/s",
  sms = 58,
  peak = {
    fp64 = "0.5TFLOPS", fp32 = "30.3TFLOPS", tf32 = "60TFLOPS",
    bf16 = "121TFLOPS", fp16 = "121TFLOPS", fp8 = "242TFLOPS",
    int8 = "242TOPS",
  },
  scaleup = { fabric = "pcie4", domain = 8 },
  pcie = { gen = 4, lanes = 16 },
  tdp = "72W",
  source = "winston-zhang-orz/gpu-specs specs.md; 'Data Center PCIe Cards' table "
        .. "(cites nvidia.com/en-us/data-center/l4)",
  notes = "Datasheet 120/242/485 are sparse. No MIG."
       .. " SMs: 58 (NVIDIA Ada whitepaper / L4 datasheet: 58 SMs)."
       .. " usable_memory: ECC on the GDDR6 is on by default and holds 1/16 of it (nvidia-smi: L4 23034MiB, L40S 46068MiB; an A10 shows 23028MiB with ECC on, 24564MiB with it off), then x 0.989 (catalog/FORMAT.md): 24 x 15/16 x 0.989 = 22.25 GiB.",
}

gpu {
  id = "rtx-4090", name = "NVIDIA GeForce RTX 4090 24GB", vendor = "NVIDIA",
  arch = "ada", form_factor = "consumer PCIe 3-slot", year = 2022,
  memory = "24GiB", memory_type = "GDDR6X",
  mem_bw = "1.008TB/s",
  sms = 128,
  peak = {
    fp64 = "1.29TFLOPS", fp32 = "82.6TFLOPS", tf32 = "82.6TFLOPS",
    bf16 = "165.2TFLOPS", fp16 = "165.2TFLOPS", fp8 = "330.3TFLOPS",
    int8 = "660.6TOPS",
  },
  -- FP16 with FP16 accumulation: the NVIDIA Ada whitepaper (v2.1,
  -- appendix table, GeForce RTX 4090) "Peak FP16 Tensor TFLOPS with FP16
  -- Accumulate 330.3/660.6" against "with FP32 Accumulate 165.2/330.4":
  -- 330.3 / 165.2 = 2.  Read only where a runtime multiplies in FP16
  -- accumulation (llama.cpp's cuBLAS path, lua/gpuplan/infer.lua
  -- M.acc16_gemm).
  acc16_x = 2,
  achievable = {
    gemm = { bf16 = 1.0, fp16 = 1.0, tf32 = 0.90, fp8 = 0.90, int8 = 0.90 },
    -- hbm: a 1 GiB device-to-device copy kernel (read + write counted,
    -- timed with CUDA events) sustains 904.3-921.9 GB/s on an RTX 4090 over
    -- five vector widths, median 920.2 of the rated 1008 = 0.913; the same
    -- program on an A100-SXM4-40GB reads 1316-1380 of 1555 (0.85-0.89)
    -- at vector widths 1 to 8 (1117, 0.72, at 16), where BabelStream's
    -- triad gives 0.886 (catalog/archs.lua ampere), so the copy measures
    -- what BabelStream does.  0.91, not the ada arch's
    -- unmeasured 0.85: GDDR6X streams at a larger share of its pin rate
    -- than the assumed HBM figure.
    hbm = 0.91,
    reason = "MAMF measured 178.5 TFLOPS bf16 against the 165.2 FP32-accumulate "
          .. "spec (1.08): GeForce cards boost above the rated 2520 MHz clock; "
          .. "capped at 1.0 of the spec. tf32/fp8/int8 not measured: the ada "
          .. "arch value (0.90) is used; memory: a 1 GiB copy kernel at "
          .. "904.3-921.9 GB/s (median 920.2) of 1008 = 0.91",
    source = "mag-/gpu_benchmark README (MAMF finder, RTX 4090 178.5 TFLOPS, shape "
          .. "15360x6784x8192); xytpai/nvbench README global_memory_bandwidth "
          .. "(standard/global_memory_bandwidth.cu: RTX4090 float1 920.207, "
          .. "float2 904.335, float4 921.850, float8 914.626, float16 921.066 GBPS)",
    -- attention: FlashAttention-2 (the flash-attn package) on an RTX 4090,
    -- CUDA 12.2, fp16 with fp32 accumulation (apache/tvm tl_doc/flash_perf.md
    -- at bd6f9570: "SEQ_LEN is fixed to 2k, All matmul use fp16->fp32 mma,
    -- value in TFlops"), causal, head dim 128: forward "True, 128 | 151.19",
    -- backward "True, 128 | 99.23" TFLOP/s (without the mask 169.28 and
    -- 124.57).  Both above what the 165.2 spec allows a GEMM at the rated
    -- clock times the kernels' usual share: a GeForce card boosts past it, as
    -- the MAMF above (178.5 = 1.08 of the spec) shows, and the gemm entry
    -- holds the card at its spec (1.0).  The fractions keep the measured
    -- kernel-to-GEMM ratio on the same card: 151.19 / 178.5 = 0.847 and
    -- 99.23 / 178.5 = 0.556 of the spec-clock peak.  Read at 2k tokens
    -- (seq), the one length the table gives.  The card's own record, not
    -- the ada arch's: the RTX 6000 Ada and the L40S hold the same AD102 at
    -- 300-350 W, where the tensor rate is power-bound, and no FlashAttention
    -- rate on them is measured.
    attention = {
      kernel = "fa2",
      fa2 = { fwd = 0.847, bwd = 0.556, seq = 2048 },
      reason = "FlashAttention-2 on an RTX 4090, causal, head dim 128, 2k tokens: "
            .. "forward 151.19 and backward 99.23 TFLOP/s, over the same card's MAMF "
            .. "178.5 (the gemm entry's 1.0 of the 165.2 spec): 0.847 / 0.556",
      source = "apache/tvm tl_doc/flash_perf.md (commit bd6f95705749, 'The "
            .. "flash-attention performance on RTX-4090 GPU, with cuda toolkit 12.2', "
            .. "Flash-Forward / Flash-backward tables, Flash_attn column); MAMF as above",
    },
  },
  scaleup = { fabric = "pcie4", domain = 8 },
  pcie = { gen = 4, lanes = 16 },
  tdp = "450W",
  source = "lamonoai/gpumap nvidia/GPU.md (FP32 83; TF32 83/165; FP16 FP16-acc 330/661, "
        .. "FP32-acc 165/330; BF16 165/330; FP8 661/1321; INT8 661/1321; 1008 GB/s; "
        .. "450 W; no NVLink; PCIe 4.0 x16); NVIDIA Ada whitepaper FP8 FP32-accumulate "
        .. "rate (half the FP16-accumulate 660.6)",
  notes = "FP16 with FP16 accumulate is 330.3 dense and FP8 with FP16 accumulate "
       .. "660.6: training accumulates in FP32, so the halved rates are stored. "
       .. "winston-zhang-orz/gpu-specs lists 'FP16 Tensor 1171.2': wrong. "
       .. "Launched Oct 2022. No NVLink; GeForce drivers disable PCIe P2P."
       .. " SMs: 128 (NVIDIA Ada whitepaper: RTX 4090 128 SMs).",
}

gpu {
  id = "rtx-6000-ada", name = "NVIDIA RTX 6000 Ada 48GB", vendor = "NVIDIA",
  arch = "ada", form_factor = "workstation PCIe dual-slot", year = 2022,
  memory = "48GiB", memory_type = "GDDR6",
  mem_bw = "960GB/s",
  sms = 142,
  peak = {
    fp64 = "1.423TFLOPS", fp32 = "91.1TFLOPS", tf32 = "182TFLOPS",
    bf16 = "364TFLOPS", fp16 = "364TFLOPS", fp8 = "728TFLOPS",
    int8 = "728TOPS",
  },
  scaleup = { fabric = "pcie4", domain = 8 },
  pcie = { gen = 4, lanes = 16 },
  tdp = "300W",
  source = "lamonoai/gpumap nvidia/GPU.md (RTX 6000 Ada column)",
  notes = "Single secondary source. Year from the Dec 2022 announcement "
       .. "(not in the source table)."
       .. " SMs: 142 (NVIDIA Ada whitepaper: RTX 6000 Ada 142 SMs).",
}
