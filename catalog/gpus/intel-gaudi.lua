-- Intel (Habana) Gaudi accelerators, OAM on 8-card HLS boards. Scale-up and
-- scale-out both use the integrated RoCE v2 Ethernet ports.

gpu {
  id = "gaudi2", name = "Intel Gaudi 2 96GB", vendor = "Intel",
  arch = "gaudi", form_factor = "OAM", year = 2022,
  memory = "96GiB", memory_type = "HBM2e",
  mem_bw = "2.45TB/s",
  peak = { bf16 = "432TFLOPS", fp8 = "865TFLOPS" },
  achievable = {
    gemm = { bf16 = 0.97, fp8 = 0.96 },
    hbm = 0.85,
    reason = "MAMF on Gaudi 2: bf16 418.7 of 432 = 0.969, fp8 826.5 of 865 = 0.955 "
          .. "(PT_HPU_LAZY_MODE=1): the MME engines sustain almost their rated "
          .. "clock; the memory fraction is not measured (gaudi arch value)",
    source = "stas00/ml-engineering compute/accelerator/README.md, Maximum "
          .. "Achievable Matmul FLOPS table (torch 2.6.0+hpu_1.21.2)",
  },
  scaleup = { fabric = "gaudi2-roce", domain = 8 },
  tdp = "600W",
  source = "stas00/ml-engineering (bf16 432, fp8 865; 96 GB HBM2e 2.46 TB/s; 600 W; "
        .. "intra-node 300 GB/s; 24 x 100 Gbps); pcguia.pt 2024-04 (96 GB HBM2e "
        .. "2.45 TB/s, BF16 432, FP8 835, 600 W)",
  notes = "FP8: 865 (ml-engineering, chosen) vs 835 (pcguia). Bandwidth 2.45 "
       .. "(pcguia, chosen) vs 2.46 TB/s (ml-engineering). FP16/FP32 rates not "
       .. "read.",
}

gpu {
  id = "gaudi3", name = "Intel Gaudi 3 128GB (HL-325L OAM)", vendor = "Intel",
  arch = "gaudi", form_factor = "OAM", year = 2024,
  memory = "128GiB", memory_type = "HBM2e",
  mem_bw = "3.7TB/s",
  peak = {
    fp32 = "229TFLOPS", tf32 = "459TFLOPS",
    bf16 = "1835TFLOPS", fp16 = "459TFLOPS", fp8 = "1835TFLOPS",
  },
  achievable = {
    gemm = { bf16 = 0.68, fp8 = 0.70, fp16 = 0.68, tf32 = 0.68 },
    hbm = 0.85,
    reason = "MAMF on Gaudi 3: bf16 1243.0 and fp8 1289.5 TFLOPS; shipping parts "
          .. "run the MME at 1600 MHz (1677 TFLOPS, not the 1835 spec), so the "
          .. "fraction of the stored spec is 1243/1835 = 0.68 and 1289.5/1835 = "
          .. "0.70; fp16/tf32 not measured (bf16 value); memory not measured",
    source = "stas00/ml-engineering compute/accelerator/README.md, Maximum "
          .. "Achievable Matmul FLOPS table (torch 2.6.0+hpu_1.21.4)",
  },
  scaleup = { fabric = "gaudi3-roce", domain = 8 },
  pcie = { gen = 5, lanes = 16 },
  tdp = "900W",
  source = "stas00/ml-engineering (fp32 229, tf32 459, fp16 459, bf16/fp8 1677 at "
        .. "1600 MHz vs 1835 whitepaper; 128 GB 3.7 TB/s; 900 W; 24 x 200 Gbps; "
        .. "intra-node 600 GB/s); theregister.com 2024-04-09 (128 GB HBM2e 3.7 TB/s, "
        .. "24x200GbE, PCIe 5.0 x16); yobitel.com (1835 BF16/FP8, 900 W)",
  notes = "Peak kept at the 1835 TFLOPS spec; ml-engineering reports shipping "
       .. "parts at 1600 MHz = 1677 (the achievable fraction carries the "
       .. "difference). FP16 runs on the vector units at 459. A China-specific "
       .. "Gaudi 3 (HL-328/HL-388) has much reduced 16-bit compute (todaymg.com).",
}
