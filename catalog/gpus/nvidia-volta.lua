-- NVIDIA Volta (GV100). No BF16, no TF32, no INT8 tensor cores, no sparsity.

gpu {
  id = "v100-sxm2-32gb", name = "NVIDIA V100 SXM2 32GB", vendor = "NVIDIA",
  arch = "volta", form_factor = "SXM2", year = 2018,
  memory = "32GiB", memory_type = "HBM2",
  mem_bw = "900GB/s",
  sms = 80,
  peak = {
    fp64 = "7.8TFLOPS", fp32 = "15.7TFLOPS", fp16 = "125TFLOPS",
  },
  scaleup = { fabric = "nvlink2", domain = 8 },
  pcie = { gen = 3, lanes = 16 },
  tdp = "300W",
  source = "winston-zhang-orz/gpu-specs (V100 SXM2: FP64 7.8, FP32 15.7, tensor 125, "
        .. "900 GB/s, 300 W); cli99/llm-analysis v100-sxm-32gb.json; stas00/ml-engineering "
        .. "network/README.md (NVLink 2: 6 links, 150 GB/s per direction)",
  notes = "The 8-GPU DGX-1 domain is a hybrid cube-mesh, not all-to-all: a ring "
       .. "reaches the per-GPU NVLink figure, all-to-all traffic does not. "
       .. "LLM-Viewer uses 112 TFLOPS (the PCIe V100). gpu-specs' 'TF32 125' is "
       .. "wrong: Volta has no TF32. Year: the 32 GB SKU (2018); release year "
       .. "not in the source table."
       .. " SMs: 80 (NVIDIA Tesla V100 whitepaper: 80 SMs).",
}
